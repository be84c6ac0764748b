/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/replicaset/tests/test-handlers.c: the informer event handlers against a fake cache
 * and queue, after upstream replica_set_test.go (TestPodControllerLookup, TestUpdatePods,
 * TestControllerUpdateRequeue, TestDeletePodWithGracePeriod / TestUpdatePodOnce-style
 * expectation cases, TestDeleteControllerAndExpectationsOnDeletion, TestPodDeletedOnce /
 * TestPodReadyToAvailable hook), rewritten for the C seams.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "workers/replicaset/handlers.h"

#define SEC INT64_C(1000000000)

struct fake_rs {
	const char *ns, *name, *uid;
	int32_t min_ready;
	const struct kube_label_selector *sel;
};

static struct kube_kv SEL_WEB_KV[] = {{"app", "web"}};
static struct kube_kv SEL_TIER_KV[] = {{"tier", "fe"}};
static struct kube_kv SEL_DB_KV[] = {{"app", "db"}};
static const struct kube_label_selector SEL_WEB = {.n_match_labels = 1, .match_labels = SEL_WEB_KV};
static const struct kube_label_selector SEL_TIER = {.n_match_labels = 1,
                                                    .match_labels = SEL_TIER_KV};
static const struct kube_label_selector SEL_DB = {.n_match_labels = 1, .match_labels = SEL_DB_KV};
static const struct kube_label_selector SEL_EMPTY = {0};
static const char *BAD_VALUES[] = {"x"};
static struct kube_label_requirement BAD_REQ = {.key = "app",
                                                .op = KUBE_OP_INVALID,
                                                .op_text = "Bogus",
                                                .n_values = 1,
                                                .values = BAD_VALUES};
static const struct kube_label_selector SEL_BAD = {.n_match_expressions = 1,
                                                   .match_expressions = &BAD_REQ};

static struct fake_rs RSES[8];
static size_t N_RSES;
static char ADDS[64][128];
static size_t N_ADDS;
static char AFTER[16][128];
static int64_t AFTER_NS[16];
static size_t N_AFTER;
static int FD;
static struct rs_exp *W, *INF;

static int f_get(void *ud, const char *ns, const char *name, struct rs_cached *ret)
{
	(void)ud;
	for (size_t i = 0; i < N_RSES; i++)
		if (!strcmp(RSES[i].ns, ns) && !strcmp(RSES[i].name, name)) {
			ret->uid = RSES[i].uid;
			ret->min_ready_seconds = RSES[i].min_ready;
			return 0;
		}
	return -ENOENT;
}

static int f_list(void *ud, const char *ns,
                  int (*fn)(void *, const char *, const struct kube_label_selector *), void *fn_ud)
{
	(void)ud;
	for (size_t i = 0; i < N_RSES; i++)
		if (!strcmp(RSES[i].ns, ns) && fn(fn_ud, RSES[i].name, RSES[i].sel) < 0)
			break;
	return 0;
}

static void f_add(void *ud, const char *key)
{
	(void)ud;
	snprintf(ADDS[N_ADDS++], sizeof ADDS[0], "%s", key);
}

static void f_add_after(void *ud, const char *key, int64_t d)
{
	(void)ud;
	AFTER_NS[N_AFTER] = d;
	snprintf(AFTER[N_AFTER++], sizeof AFTER[0], "%s", key);
}

static struct rs_handler_ops OPS;

static int setup(void **state)
{
	(void)state;
	N_RSES = N_ADDS = N_AFTER = 0;
	FD = rs_exp_memfd_create(NULL);
	assert_true(FD >= 0);
	assert_int_equal(rs_exp_attach(FD, RS_EXP_WORKER, 0, &W), 0);
	assert_int_equal(rs_exp_attach(FD, RS_EXP_INFORMER, 0, &INF), 0);
	OPS = (struct rs_handler_ops){NULL, f_get, f_list, f_add, f_add_after, INF, "ReplicaSet"};
	RSES[N_RSES++] = (struct fake_rs){"ns", "web", "web-uid", 0, &SEL_WEB};
	RSES[N_RSES++] = (struct fake_rs){"ns", "web2", "web2-uid", 30, &SEL_WEB};
	RSES[N_RSES++] = (struct fake_rs){"ns", "db", "db-uid", 0, &SEL_DB};
	RSES[N_RSES++] =
	        (struct fake_rs){"ns", "all", "all-uid", 0, &SEL_EMPTY};    /* empty: skipped */
	RSES[N_RSES++] = (struct fake_rs){"ns", "nil", "nil-uid", 0, NULL}; /* nil: skipped */
	RSES[N_RSES++] = (struct fake_rs){"other", "web", "oweb-uid", 0, &SEL_WEB};
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rs_exp_detach(W);
	rs_exp_detach(INF);
	close(FD);
	return 0;
}

static struct kube_kv WEB_LABELS[] = {{"app", "web"}};
static struct kube_kv WEB_TIER_LABELS[] = {{"app", "web"}, {"tier", "fe"}};
static struct kube_owner_ref REF_WEB = {"apps/v1", "ReplicaSet", "web", "web-uid", 1, 1};
static struct kube_owner_ref REF_WEB2 = {"apps/v1", "ReplicaSet", "web2", "web2-uid", 1, 1};

static struct kube_pod mkpod(const char *name, const char *rv, struct kube_owner_ref *ref)
{
	struct kube_pod p;
	memset(&p, 0, sizeof p);
	p.meta.name = name;
	p.meta.namespace = "ns";
	p.meta.uid = name;
	p.meta.resource_version = rv;
	p.meta.labels = WEB_LABELS;
	p.meta.n_labels = 1;
	if (ref) {
		p.meta.owner_refs = ref;
		p.meta.n_owner_refs = 1;
	}
	return p;
}

static void assert_adds(const char *const *want, size_t n)
{
	assert_int_equal(N_ADDS, n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(ADDS[i], want[i]);
	N_ADDS = 0;
}

static void test_rs_events(void **state)
{
	(void)state;
	struct kube_object_meta rs = {.name = "web", .namespace = "ns", .uid = "web-uid"};
	rs_handle_rs_add(&OPS, &rs);
	assert_adds((const char *[]){"ns/web"}, 1);
	/* every update enqueues, resyncs included */
	rs_handle_rs_update(&OPS, &rs, &rs);
	assert_adds((const char *[]){"ns/web"}, 1);
	/* delete: expectations go, the key is synced once more */
	assert_int_equal(rs_exp_expect_creations(W, "ns/web", 2, 0), 0);
	rs_handle_rs_delete(&OPS, &rs);
	assert_adds((const char *[]){"ns/web"}, 1);
	struct rs_exp_state st;
	assert_true(rs_exp_satisfied(W, "ns/web", 0, &st));
	assert_int_equal(st.verdict, RS_EXP_ABSENT);
	/* uid change inside an update = delete of the old one, then add */
	assert_int_equal(rs_exp_expect_creations(W, "ns/web", 2, 0), 0);
	struct kube_object_meta recreated = rs;
	recreated.uid = "web-uid-2";
	rs_handle_rs_update(&OPS, &rs, &recreated);
	assert_adds((const char *[]){"ns/web", "ns/web"}, 2);
	assert_true(rs_exp_satisfied(W, "ns/web", 0, &st));
}

static void test_pod_add(void **state)
{
	(void)state;
	/* controlled: CreationObserved + enqueue that RS only */
	assert_int_equal(rs_exp_expect_creations(W, "ns/web", 1, 0), 0);
	struct kube_pod p = mkpod("p", "1", &REF_WEB);
	rs_handle_pod_add(&OPS, &p);
	assert_adds((const char *[]){"ns/web"}, 1);
	assert_true(rs_exp_satisfied(W, "ns/web", 0, NULL));
	/* a controllerRef that does not resolve: nothing at all (no orphan lookup either) */
	struct kube_owner_ref stale = REF_WEB;
	stale.uid = "old-uid";
	struct kube_pod q = mkpod("q", "1", &stale);
	rs_handle_pod_add(&OPS, &q);
	struct kube_owner_ref wrong_kind = REF_WEB;
	wrong_kind.kind = "ReplicationController";
	q.meta.owner_refs = &wrong_kind;
	rs_handle_pod_add(&OPS, &q);
	struct kube_owner_ref missing = REF_WEB;
	missing.name = "gone";
	q.meta.owner_refs = &missing;
	rs_handle_pod_add(&OPS, &q);
	assert_int_equal(N_ADDS, 0);
	/* a non-controller ref is no controllerRef: orphan */
	struct kube_owner_ref plain = REF_WEB;
	plain.controller = 0;
	q.meta.owner_refs = &plain;
	rs_handle_pod_add(&OPS, &q);
	assert_adds((const char *[]){"ns/web", "ns/web2"}, 2);
	/* orphan: every matching RS of the namespace, not empty/nil selectors, not other ns */
	struct kube_pod o = mkpod("o", "1", NULL);
	rs_handle_pod_add(&OPS, &o);
	assert_adds((const char *[]){"ns/web", "ns/web2"}, 2);
	/* no labels: nothing */
	o.meta.n_labels = 0;
	rs_handle_pod_add(&OPS, &o);
	assert_int_equal(N_ADDS, 0);
	/* an invalid selector anywhere in the namespace: the lookup fails, nothing */
	o.meta.n_labels = 1;
	RSES[N_RSES++] = (struct fake_rs){"ns", "bad", "bad-uid", 0, &SEL_BAD};
	rs_handle_pod_add(&OPS, &o);
	assert_int_equal(N_ADDS, 0);
}

static void test_pod_add_deleting(void **state)
{
	(void)state;
	const char *keys[] = {"ns/p"};
	assert_int_equal(rs_exp_expect_deletions(W, "ns/web", keys, 1, 0), 0);
	assert_int_equal(rs_exp_expect_creations(W, "ns/web2", 1, 0), 0);
	struct kube_pod p = mkpod("p", "1", &REF_WEB);
	p.meta.deletion_timestamp = 5 * SEC;
	rs_handle_pod_add(&OPS, &p);
	assert_adds((const char *[]){"ns/web"}, 1);
	assert_true(rs_exp_satisfied(W, "ns/web", 0, NULL)); /* counted as the deletion */
	/* not as a creation */
	struct kube_pod q = mkpod("q", "1", &REF_WEB2);
	q.meta.deletion_timestamp = 5 * SEC;
	rs_handle_pod_add(&OPS, &q);
	assert_false(rs_exp_satisfied(W, "ns/web2", 0, NULL));
}

static void test_pod_update(void **state)
{
	(void)state;
	struct kube_pod old = mkpod("p", "1", &REF_WEB2);
	struct kube_pod cur = old;
	/* same resourceVersion: a resync, ignored */
	rs_handle_pod_update(&OPS, &old, &cur);
	assert_int_equal(N_ADDS, 0);
	/* any change of an owned pod wakes its RS */
	cur.meta.resource_version = "2";
	rs_handle_pod_update(&OPS, &old, &cur);
	assert_adds((const char *[]){"ns/web2"}, 1);
	assert_int_equal(N_AFTER, 0);
	/* becoming Ready with minReadySeconds 30: also AddAfter(30 s) */
	cur.ready = true;
	rs_handle_pod_update(&OPS, &old, &cur);
	assert_adds((const char *[]){"ns/web2"}, 1);
	assert_int_equal(N_AFTER, 1);
	assert_string_equal(AFTER[0], "ns/web2");
	assert_int_equal(AFTER_NS[0], 30 * SEC);
	/* already ready, or minReadySeconds 0: no AddAfter */
	old.ready = true;
	rs_handle_pod_update(&OPS, &old, &cur);
	struct kube_pod o0 = mkpod("p", "1", &REF_WEB), c0 = o0;
	c0.meta.resource_version = "2";
	c0.ready = true;
	rs_handle_pod_update(&OPS, &o0, &c0);
	assert_int_equal(N_AFTER, 1);
	assert_adds((const char *[]){"ns/web2", "ns/web"}, 2);
}

static void test_pod_update_controller_ref(void **state)
{
	(void)state;
	/* controller changed from web to web2: both RSes hear of it */
	struct kube_pod old = mkpod("p", "1", &REF_WEB);
	struct kube_pod cur = mkpod("p", "2", &REF_WEB2);
	rs_handle_pod_update(&OPS, &old, &cur);
	assert_adds((const char *[]){"ns/web", "ns/web2"}, 2);
	/* only blockOwnerDeletion changed: still a change, old RS enqueued, then the current */
	struct kube_owner_ref nb = REF_WEB;
	nb.block_owner_deletion = -1;
	struct kube_pod c2 = mkpod("p", "2", &nb);
	rs_handle_pod_update(&OPS, &old, &c2);
	assert_adds((const char *[]){"ns/web", "ns/web"}, 2);
	/* released (controllerRef removed): old RS, then the orphan lookup */
	struct kube_pod rel = mkpod("p", "2", NULL);
	rs_handle_pod_update(&OPS, &old, &rel);
	assert_adds((const char *[]){"ns/web", "ns/web", "ns/web2"}, 3);
	/* orphan with neither label nor ref change: nothing */
	struct kube_pod o1 = mkpod("o", "1", NULL), o2 = mkpod("o", "2", NULL);
	rs_handle_pod_update(&OPS, &o1, &o2);
	assert_int_equal(N_ADDS, 0);
	/* orphan whose labels changed: the RSes matching the new labels */
	o2.meta.labels = WEB_TIER_LABELS;
	o2.meta.n_labels = 2;
	RSES[N_RSES++] = (struct fake_rs){"ns", "tier", "tier-uid", 0, &SEL_TIER};
	rs_handle_pod_update(&OPS, &o1, &o2);
	assert_adds((const char *[]){"ns/web", "ns/web2", "ns/tier"}, 3);
	assert_true(rs_owner_ref_equal(NULL, NULL));
	assert_false(rs_owner_ref_equal(&REF_WEB, NULL));
	assert_true(rs_owner_ref_equal(&REF_WEB, &(struct kube_owner_ref){"apps/v1", "ReplicaSet",
	                                                                  "web", "web-uid", 1, 1}));
}

static void test_pod_update_deleting(void **state)
{
	(void)state;
	const char *keys[] = {"ns/p"};
	assert_int_equal(rs_exp_expect_deletions(W, "ns/web", keys, 1, 0), 0);
	assert_int_equal(rs_exp_expect_deletions(W, "ns/web2", keys, 1, 0), 0);
	/* graceful deletion seen as an update: observed at once */
	struct kube_pod old = mkpod("p", "1", &REF_WEB);
	struct kube_pod cur = mkpod("p", "2", &REF_WEB);
	cur.meta.deletion_timestamp = 9 * SEC;
	rs_handle_pod_update(&OPS, &old, &cur);
	assert_adds((const char *[]){"ns/web"}, 1);
	assert_true(rs_exp_satisfied(W, "ns/web", 0, NULL));
	/* then the final delete: counted once, still enqueued */
	rs_handle_pod_delete(&OPS, &cur);
	assert_adds((const char *[]){"ns/web"}, 1);
	/* labels changed too: the old state's RS hears of it as well */
	struct kube_pod o2 = mkpod("p", "1", &REF_WEB2);
	o2.meta.labels = WEB_TIER_LABELS;
	o2.meta.n_labels = 2;
	struct kube_pod c2 = mkpod("p", "2", &REF_WEB);
	c2.meta.deletion_timestamp = 9 * SEC;
	rs_handle_pod_update(&OPS, &o2, &c2);
	assert_adds((const char *[]){"ns/web", "ns/web2"}, 2);
	assert_true(rs_exp_satisfied(W, "ns/web2", 0, NULL));
}

static void test_pod_delete(void **state)
{
	(void)state;
	const char *keys[] = {"ns/p", "ns/q"};
	assert_int_equal(rs_exp_expect_deletions(W, "ns/web", keys, 2, 0), 0);
	struct kube_pod o = mkpod("o", "1", NULL);
	rs_handle_pod_delete(&OPS, &o); /* orphan: nobody waits for it */
	assert_int_equal(N_ADDS, 0);
	struct kube_pod p = mkpod("p", "1", &REF_WEB);
	rs_handle_pod_delete(&OPS, &p);
	assert_adds((const char *[]){"ns/web"}, 1);
	struct rs_exp_state st;
	assert_false(rs_exp_satisfied(W, "ns/web", 0, &st));
	assert_int_equal(st.dels_left, 1);
	struct kube_owner_ref stale = REF_WEB;
	stale.uid = "old";
	struct kube_pod q = mkpod("q", "1", &stale);
	rs_handle_pod_delete(&OPS, &q); /* its RS is not this RS any more */
	assert_int_equal(N_ADDS, 0);
	assert_false(rs_exp_satisfied(W, "ns/web", 0, NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test_setup_teardown(test_rs_events, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_pod_add, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_pod_add_deleting, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_pod_update, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_pod_update_controller_ref, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_pod_update_deleting, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_pod_delete, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
