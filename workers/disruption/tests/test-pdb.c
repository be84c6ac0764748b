/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/disruption/tests/test-pdb.c: the disruption controller's decisions (pdb.c) against
 * upstream's pkg/controller/disruption/disruption_test.go, one test per upstream case, named
 * after it. A small in-memory world stands for the listers and the scale client; run() does
 * what upstream's dc.sync does with its fake updater (the computed PDB replaces the stored one).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kube/selector.h"
#include "workers/disruption/pdb.h"

#define NOW ((kube_time_t)1700000000LL * 1000000000LL)
#define MIN ((kube_time_t)60LL * 1000000000LL)

struct ctl {
	const char *kind, *name, *uid;
	int32_t replicas;
	const char *ctl_api, *ctl_kind, *ctl_name, *ctl_uid; /* an RS's controller */
};
struct tpod {
	char name[64];
	const char *labels; /* "k=v,k=v" */
	bool ready, deleting;
	struct kube_owner_ref ctl;
	bool has_ctl;
};
struct world {
	struct ctl ctls[8];
	size_t n_ctls;
	struct tpod pods[32];
	size_t n_pods;
	int scale_result; /* get_scale: 1 found (scale_uid, scale_replicas), 0, or -errno */
	const char *scale_uid;
	int32_t scale_replicas;
	cJSON *pdb;
	char events[16][64];
	size_t n_events;
};

static const struct ctl *find(struct world *w, const char *kind, const char *name)
{
	for (size_t i = 0; i < w->n_ctls; i++)
		if (!strcmp(w->ctls[i].kind, kind) && !strcmp(w->ctls[i].name, name))
			return &w->ctls[i];
	return NULL;
}

static int get_simple(struct world *w, const char *kind, const char *name, char *uid, int32_t *rep)
{
	const struct ctl *c = find(w, kind, name);
	if (!c)
		return 0;
	snprintf(uid, 128, "%s", c->uid);
	*rep = c->replicas;
	return 1;
}
static int g_rc(void *ud, const char *ns, const char *name, char *uid, int32_t *r)
{
	(void)ns;
	return get_simple(ud, "RC", name, uid, r);
}
static int g_d(void *ud, const char *ns, const char *name, char *uid, int32_t *r)
{
	(void)ns;
	return get_simple(ud, "D", name, uid, r);
}
static int g_ss(void *ud, const char *ns, const char *name, char *uid, int32_t *r)
{
	(void)ns;
	return get_simple(ud, "SS", name, uid, r);
}
static int g_rs(void *ud, const char *ns, const char *name, struct pdb_rs_info *ret)
{
	const struct ctl *c = find(ud, "RS", name);
	(void)ns;
	if (!c)
		return 0;
	snprintf(ret->uid, sizeof(ret->uid), "%s", c->uid);
	ret->replicas = c->replicas;
	if (c->ctl_kind) {
		ret->has_controller = true;
		snprintf(ret->ctl_api_version, 128, "%s", c->ctl_api);
		snprintf(ret->ctl_kind, 128, "%s", c->ctl_kind);
		snprintf(ret->ctl_name, 254, "%s", c->ctl_name);
		snprintf(ret->ctl_uid, 128, "%s", c->ctl_uid);
	}
	return 1;
}
static int g_scale(void *ud, const struct kube_owner_ref *ref, const char *ns,
                   struct pdb_scale *ret, char **err)
{
	struct world *w = ud;
	(void)ns;
	if (w->scale_result < 0) {
		if (asprintf(err, "no matches for kind \"%s\" in version \"%s\"", ref->kind,
		             ref->api_version) < 0)
			*err = NULL;
		return w->scale_result;
	}
	if (w->scale_result == 0 || strcmp(w->scale_uid, ref->uid) != 0)
		return 0;
	snprintf(ret->uid, sizeof(ret->uid), "%s", w->scale_uid);
	ret->scale = w->scale_replicas;
	return 1;
}

static struct pdb_lookup lookup_of(struct world *w)
{
	return (struct pdb_lookup){w, g_rc, g_d, g_ss, g_rs, g_scale};
}

/* newMinAvailablePodDisruptionBudget / newMaxUnavailablePodDisruptionBudget */
static void new_pdb(struct world *w, const char *field, const char *value_json)
{
	char buf[512];
	snprintf(buf, sizeof(buf),
	         "{\"metadata\":{\"name\":\"foobar\",\"namespace\":\"default\",\"uid\":\"pdb-uid\","
	         "\"resourceVersion\":\"18\"},\"spec\":{\"%s\":%s,\"selector\":{\"matchLabels\":"
	         "{\"foo\":\"bar\"}}}}",
	         field, value_json);
	cJSON_Delete(w->pdb);
	w->pdb = cJSON_Parse(buf);
	assert_non_null(w->pdb);
}

static struct tpod *new_pod(struct world *w, const char *name)
{
	struct tpod *p = &w->pods[w->n_pods++];
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->labels = "foo=bar";
	p->ready = true;
	return p;
}

static void own(struct tpod *p, const char *api, const char *kind, const char *name,
                const char *uid)
{
	p->has_ctl = true;
	p->ctl = (struct kube_owner_ref){api, kind, name, uid, 1, -1};
}

static bool matches(const struct kube_selector *s, const char *labels)
{
	struct kube_kv kv[8];
	char buf[256], *save = NULL;
	uint32_t n = 0;

	snprintf(buf, sizeof(buf), "%s", labels);
	for (char *t = strtok_r(buf, ",", &save); t && n < 8; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '=');
		*eq = 0;
		kv[n].key = t;
		kv[n++].value = eq + 1;
	}
	return kube_selector_matches(s, kv, n);
}

/* dc.sync with the fake updater; returns the error trySync reported (malloc'd) or NULL */
static char *run(struct world *w, kube_time_t now)
{
	struct kube_selector *sel = NULL;
	char *serr = NULL, *ret = NULL;
	struct pdb_pod pods[32];
	size_t n = 0;
	struct pdb_result r;
	struct pdb_lookup lk = lookup_of(w);
	cJSON *next;
	int e;

	int rc = pdb_selector(w->pdb, &sel, &serr);
	assert_true(rc == 0 || rc == -EINVAL);
	for (size_t i = 0; rc == 0 && i < w->n_pods; i++) {
		if (!matches(sel, w->pods[i].labels))
			continue;
		pods[n] = (struct pdb_pod){.name = w->pods[i].name,
		                           .ready = w->pods[i].ready,
		                           .deleting = w->pods[i].deleting,
		                           .has_controller = w->pods[i].has_ctl,
		                           .controller = w->pods[i].ctl};
		n++;
	}
	assert_int_equal(pdb_try_sync(w->pdb, serr, pods, n, &lk, now, &r), 0);
	for (size_t i = 0; i < r.n_events && w->n_events < 16; i++)
		snprintf(w->events[w->n_events++], 64, "%s", r.events[i].reason);
	if (r.err) {
		ret = strdup(r.err);
		next = pdb_fail_safe(w->pdb, r.err, now);
		assert_non_null(next);
	} else {
		next = pdb_status_update(w->pdb, &r, now, &e);
		assert_int_equal(e, 0);
	}
	if (next) {
		cJSON_Delete(w->pdb);
		w->pdb = next;
	}
	pdb_result_free(&r);
	kube_selector_free(sel);
	free(serr);
	return ret;
}

static int64_t st(struct world *w, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(w->pdb, "status"), k);
	return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : 0;
}

/* ps.VerifyPdbStatus (the disrupted map checked by its size and names) */
static void verify(struct world *w, int allowed, int cur, int des, int exp, const char *disrupted)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(w->pdb, "status");
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(s, "disruptedPods"), *c;
	assert_int_equal(st(w, "disruptionsAllowed"), allowed);
	assert_int_equal(st(w, "currentHealthy"), cur);
	assert_int_equal(st(w, "desiredHealthy"), des);
	assert_int_equal(st(w, "expectedPods"), exp);
	if (!disrupted)
		assert_true(!d || cJSON_GetArraySize(d) == 0);
	else
		assert_int_equal(cJSON_GetArraySize(d), 1),
		        assert_non_null(cJSON_GetObjectItemCaseSensitive(d, disrupted));
	const char *want = allowed > 0 ? "True" : "False";
	bool found = false;
	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(s, "conditions"))
	{
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "type");
		if (cJSON_IsString(t) && !strcmp(t->valuestring, PDB_CONDITION_TYPE)) {
			found = true;
			assert_string_equal(
			        cJSON_GetObjectItemCaseSensitive(c, "status")->valuestring, want);
		}
	}
	assert_true(found);
}

static bool emitted(struct world *w, const char *reason)
{
	for (size_t i = 0; i < w->n_events; i++)
		if (!strcmp(w->events[i], reason))
			return true;
	return false;
}

static void world_free(struct world *w)
{
	cJSON_Delete(w->pdb);
}

/* ---- upstream's cases ---------------------------------------------------------------------- */
static void TestNoSelector(void **state)
{
	struct world w = {0};
	(void)state;
	new_pdb(&w, "minAvailable", "3");
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(w.pdb, "spec"), "selector",
	                          cJSON_CreateObject());
	free(run(&w, NOW));
	verify(&w, 0, 0, 3, 0, NULL);
	struct tpod *p = new_pod(&w, "yo-yo-yo");
	p->labels = "other=label";
	free(run(&w, NOW));
	verify(&w, 0, 1, 3, 1, NULL);
	world_free(&w);
}

static void TestUnavailable(void **state)
{
	struct world w = {0};
	char name[32];
	(void)state;
	new_pdb(&w, "minAvailable", "3");
	free(run(&w, NOW));
	for (int i = 0; i < 4; i++) {
		verify(&w, 0, i, 3, i, NULL);
		snprintf(name, sizeof(name), "yo-yo-yo %d", i);
		new_pod(&w, name);
		free(run(&w, NOW));
	}
	verify(&w, 1, 4, 3, 4, NULL);
	w.pods[0].ready = false;
	free(run(&w, NOW));
	verify(&w, 0, 3, 3, 4, NULL);
	world_free(&w);
}

static void TestIntegerMaxUnavailable(void **state)
{
	struct world w = {0};
	(void)state;
	new_pdb(&w, "maxUnavailable", "1");
	free(run(&w, NOW));
	assert_int_equal(st(&w, "disruptionsAllowed"), 0);
	new_pod(&w, "naked");
	free(run(&w, NOW));
	assert_int_equal(st(&w, "disruptionsAllowed"), 0);
	assert_true(emitted(&w, "UnmanagedPods"));
	world_free(&w);
}

static void TestIntegerMaxUnavailableWithScaling(void **state)
{
	struct world w = {.ctls = {{"RS", "foobar", "rs-uid", 7}}, .n_ctls = 1};
	(void)state;
	new_pdb(&w, "maxUnavailable", "2");
	own(new_pod(&w, "pod"), "apps/v1", "ReplicaSet", "foobar", "rs-uid");
	free(run(&w, NOW));
	verify(&w, 0, 1, 5, 7, NULL);
	w.ctls[0].replicas = 5;
	free(run(&w, NOW));
	verify(&w, 0, 1, 3, 5, NULL);
	world_free(&w);
}

static void TestPercentageMaxUnavailableWithScaling(void **state)
{
	struct world w = {.ctls = {{"RS", "foobar", "rs-uid", 7}}, .n_ctls = 1};
	(void)state;
	new_pdb(&w, "maxUnavailable", "\"30%\"");
	own(new_pod(&w, "pod"), "apps/v1", "ReplicaSet", "foobar", "rs-uid");
	free(run(&w, NOW));
	verify(&w, 0, 1, 4, 7, NULL);
	w.ctls[0].replicas = 3;
	free(run(&w, NOW));
	verify(&w, 0, 1, 2, 3, NULL);
	world_free(&w);
}

static void TestNakedPod(void **state)
{
	struct world w = {0};
	(void)state;
	new_pdb(&w, "minAvailable", "\"28%\"");
	free(run(&w, NOW));
	assert_int_equal(st(&w, "disruptionsAllowed"), 0);
	new_pod(&w, "naked");
	free(run(&w, NOW));
	assert_int_equal(st(&w, "disruptionsAllowed"), 0);
	assert_true(emitted(&w, "UnmanagedPods"));
	world_free(&w);
}

static void TestUnsupportedControllerPod(void **state)
{
	struct world w = {.scale_result = -ENOENT};
	(void)state;
	new_pdb(&w, "minAvailable", "\"28%\"");
	free(run(&w, NOW));
	own(new_pod(&w, "naked"), "apps.test.io/v1", "TestWorkload", "fake-controller",
	    "b7329742-8daa-493a-8881-6ca07139172b");
	char *err = run(&w, NOW);
	assert_non_null(err);
	free(err);
	assert_int_equal(st(&w, "disruptionsAllowed"), 0);
	assert_true(emitted(&w, "CalculateExpectedPodCountFailed"));
	world_free(&w);
}

static void TestStatusForUnmanagedPod(void **state)
{
	struct world w = {0};
	(void)state;
	new_pdb(&w, "minAvailable", "\"28%\"");
	free(run(&w, NOW));
	new_pod(&w, "unmanaged");
	char *err = run(&w, NOW);
	assert_null(err); /* VerifyNoStatusError: no SyncFailed */
	assert_true(emitted(&w, "UnmanagedPods"));
	world_free(&w);
}

static void TestReplicaSet(void **state)
{
	struct world w = {.ctls = {{"RS", "foobar", "rs-uid", 10}}, .n_ctls = 1};
	(void)state;
	new_pdb(&w, "minAvailable", "\"20%\"");
	own(new_pod(&w, "pod"), "apps/v1", "ReplicaSet", "foobar", "rs-uid");
	free(run(&w, NOW));
	verify(&w, 0, 1, 2, 10, NULL);
	world_free(&w);
}

static void TestScaleResource(void **state)
{
	struct world w = {.scale_result = 1, .scale_uid = "cr-uid", .scale_replicas = 10};
	char name[16];
	(void)state;
	new_pdb(&w, "maxUnavailable", "5");
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "pod-%d", i);
		own(new_pod(&w, name), "custom.k8s.io/v1", "customresource", "", "cr-uid");
	}
	free(run(&w, NOW));
	/* replicas-pods (6) >= maxUnavailable (5): none allowed */
	verify(&w, 0, 4, 5, 10, NULL);
	world_free(&w);
}

static void TestMultipleControllers(void **state)
{
	struct world w = {.ctls = {{"RC", "rc 1", "rc1-uid", 1}}, .n_ctls = 1};
	(void)state;
	new_pdb(&w, "minAvailable", "\"1%\"");
	new_pod(&w, "pod 0");
	new_pod(&w, "pod 1");
	free(run(&w, NOW));
	assert_int_equal(st(&w, "disruptionsAllowed"), 0);
	for (int i = 0; i < 2; i++)
		own(&w.pods[i], "v1", "ReplicationController", "rc 1", "rc1-uid");
	free(run(&w, NOW));
	assert_int_equal(st(&w, "disruptionsAllowed"), 1);
	world_free(&w);
}

static void TestReplicationController(void **state)
{
	struct world w = {.ctls = {{"RC", "foobar", "rc-uid", 3}}, .n_ctls = 1};
	char name[32];
	(void)state;
	new_pdb(&w, "minAvailable", "\"34%\"");
	free(run(&w, NOW));
	verify(&w, 0, 0, 0, 0, NULL);
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "foobar %d", i);
		struct tpod *p = new_pod(&w, name);
		p->labels = "foo=bar,baz=quux";
		own(p, "v1", "ReplicationController", "foobar", "rc-uid");
		free(run(&w, NOW));
		if (i < 2)
			verify(&w, 0, i + 1, 2, 3, NULL);
		else
			verify(&w, 1, 3, 2, 3, NULL);
	}
	new_pod(&w, "rogue");
	free(run(&w, NOW)); /* an unmanaged pod: counted healthy, not in the scale */
	assert_int_equal(st(&w, "disruptionsAllowed"), 2);
	world_free(&w);
}

static void TestStatefulSetController(void **state)
{
	struct world w = {.ctls = {{"SS", "foobar", "ss-uid", 3}}, .n_ctls = 1};
	char name[32];
	(void)state;
	new_pdb(&w, "minAvailable", "\"34%\"");
	free(run(&w, NOW));
	verify(&w, 0, 0, 0, 0, NULL);
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "foobar %d", i);
		struct tpod *p = new_pod(&w, name);
		p->labels = "foo=bar,baz=quux";
		own(p, "apps/v1", "StatefulSet", "foobar", "ss-uid");
		free(run(&w, NOW));
		if (i < 2)
			verify(&w, 0, i + 1, 2, 3, NULL);
		else
			verify(&w, 1, 3, 2, 3, NULL);
	}
	world_free(&w);
}

static void TestTwoControllers(void **state)
{
	struct world w = {.ctls = {{"RC", "foobar", "rc-uid", 11},
	                           {"D", "foobar", "d-uid", 11},
	                           {"RS", "foobar", "rs-uid", 11, "apps/v1", "Deployment", "foobar",
	                            "d-uid"}},
	                  .n_ctls = 3};
	const int size = 11, min1 = 4, min2 = 7;
	char name[32];
	(void)state;
	new_pdb(&w, "minAvailable", "\"28%\"");
	free(run(&w, NOW));
	verify(&w, 0, 0, 0, 0, NULL);
	int unavailable = size - min1 - 1;
	for (int i = 1; i <= size; i++) {
		snprintf(name, sizeof(name), "quux %d", i);
		struct tpod *p = new_pod(&w, name);
		p->labels = "foo=bar,baz=quux";
		own(p, "v1", "ReplicationController", "foobar", "rc-uid");
		p->ready = i > unavailable;
		free(run(&w, NOW));
		if (i <= unavailable)
			verify(&w, 0, 0, min1, size, NULL);
		else if (i - unavailable <= min1)
			verify(&w, 0, i - unavailable, min1, size, NULL);
		else
			verify(&w, 1, i - unavailable, min1, size, NULL);
	}
	int unavailable2 = 2 * size - (min2 + 2) - unavailable;
	for (int i = 1; i <= size; i++) {
		snprintf(name, sizeof(name), "quuux %d", i);
		struct tpod *p = new_pod(&w, name);
		p->labels = "foo=bar,baz=quuux";
		own(p, "apps/v1", "ReplicaSet", "foobar", "rs-uid");
		p->ready = i > unavailable2;
		free(run(&w, NOW));
		if (i <= unavailable2)
			verify(&w, 0, min1 + 1, min2, 2 * size, NULL);
		else if (i - unavailable2 <= min2 - (min1 + 1))
			verify(&w, 0, (min1 + 1) + (i - unavailable2), min2, 2 * size, NULL);
		else
			verify(&w, i - unavailable2 - (min2 - (min1 + 1)),
			       (min1 + 1) + (i - unavailable2), min2, 2 * size, NULL);
	}
	verify(&w, 2, 2 + min2, min2, 2 * size, NULL);
	w.pods[size - 1].ready = false;
	free(run(&w, NOW));
	verify(&w, 1, 1 + min2, min2, 2 * size, NULL);
	w.pods[size - 2].ready = false;
	free(run(&w, NOW));
	verify(&w, 0, min2, min2, 2 * size, NULL);
	w.pods[size - 1].ready = true;
	free(run(&w, NOW));
	verify(&w, 1, 1 + min2, min2, 2 * size, NULL);
	world_free(&w);
}

static void TestUpdateDisruptedPods(void **state)
{
	struct world w = {0};
	char t0[KUBE_TIME_BUF], t3[KUBE_TIME_BUF], t1[KUBE_TIME_BUF], buf[512];
	(void)state;
	new_pdb(&w, "minAvailable", "1");
	kube_time_format(NOW, t0);
	kube_time_format(NOW - 3 * MIN, t3);
	kube_time_format(NOW - MIN, t1);
	snprintf(buf, sizeof(buf),
	         "{\"disruptedPods\":{\"p1\":\"%s\",\"p2\":\"%s\",\"p3\":\"%s\",\"notthere\":"
	         "\"%s\"}}",
	         t0, t3, t1, t0);
	cJSON_AddItemToObject(w.pdb, "status", cJSON_Parse(buf));
	new_pod(&w, "p1")->deleting = true;
	new_pod(&w, "p2");
	new_pod(&w, "p3");
	free(run(&w, NOW));
	verify(&w, 0, 1, 1, 3, "p3");
	assert_true(emitted(&w, "NotDeleted")); /* p2 expired */
	world_free(&w);
}

/* TestBasicFinderFunctions and TestDeploymentFinderFunction: one row each */
static void finder_row(const char *api, const char *kind, const char *name, const char *uid,
                       bool finds, int32_t scale)
{
	struct world w = {.ctls = {{"RS", "foobar", "rs-uid", 10},
	                           {"RC", "foobar", "rc-uid", 12},
	                           {"SS", "foobar", "ss-uid", 14}},
	                  .n_ctls = 3};
	struct pdb_lookup lk = lookup_of(&w);
	struct kube_owner_ref ref = {api, kind, name, uid, -1, -1};
	struct pdb_scale sc;
	char *err = NULL;
	int r = pdb_find_controller(&lk, &ref, "default", &sc, &err);
	assert_int_equal(r, finds ? 1 : 0);
	if (finds) {
		assert_int_equal(sc.scale, scale);
		assert_string_equal(sc.uid, uid);
	}
	free(err);
}

static void TestBasicFinderFunctions(void **state)
{
	(void)state;
	/* "replicaset controller with apps group" */
	finder_row("apps/v1", "ReplicaSet", "foobar", "rs-uid", true, 10);
	/* "replicaset controller with invalid group" */
	finder_row("invalid/v1", "ReplicaSet", "foobar", "rs-uid", false, 0);
	/* "replicationcontroller with empty group" */
	finder_row("/v1", "ReplicationController", "foobar", "rc-uid", true, 12);
	/* "replicationcontroller with invalid group" */
	finder_row("apps/v1", "ReplicationController", "foobar", "rc-uid", false, 0);
	/* "statefulset controller with extensions group" */
	finder_row("apps/v1", "StatefulSet", "foobar", "ss-uid", true, 14);
	/* "statefulset controller with invalid kind" (the RS finder does not find ss-uid) */
	finder_row("apps/v1", "ReplicaSet", "foobar", "ss-uid", false, 0);
}

static void deployment_row(const char *rs_api, const char *rs_kind, const char *d_api,
                           const char *d_kind, bool finds)
{
	struct world w = {.ctls = {{"D", "foobar", "d-uid", 10},
	                           {"RS", "foobar", "rs-uid", 5, d_api, d_kind, "foobar", "d-uid"}},
	                  .n_ctls = 2};
	struct pdb_lookup lk = lookup_of(&w);
	struct kube_owner_ref ref = {rs_api, rs_kind, "foobar", "rs-uid", -1, -1};
	struct pdb_scale sc;
	char *err = NULL;
	/* dc.getPodDeployment alone: the chain without RC/RS/SS/scale answers */
	lk.get_rc = NULL;
	lk.get_statefulset = NULL;
	lk.get_scale = NULL;
	int r = pdb_find_controller(&lk, &ref, "default", &sc, &err);
	if (finds) {
		assert_int_equal(r, 1);
		assert_int_equal(sc.scale, 10);
		assert_string_equal(sc.uid, "d-uid");
	} else {
		assert_false(r == 1 && !strcmp(sc.uid, "d-uid"));
	}
	free(err);
}

static void TestDeploymentFinderFunction(void **state)
{
	(void)state;
	deployment_row("apps/v1", "ReplicaSet", "extensions/v1", "Deployment", true); /* happy */
	deployment_row("invalid/v1", "ReplicaSet", "apps/v1", "Deployment", false);
	deployment_row("apps/v1", "InvalidKind", "apps/v1", "Deployment", false);
	deployment_row("extensions/v1", "ReplicaSet", "deployment/v1", "Deployment", false);
	deployment_row("apps/v1", "ReplicaSet", "extensions/v1", "InvalidKind", false);
}

static void invalid_selector_row(const char *sel)
{
	struct world w = {0};
	new_pdb(&w, "minAvailable", "3");
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(w.pdb, "spec"), "selector", cJSON_Parse(sel));
	char *err = run(&w, NOW);
	assert_non_null(err);
	free(err);
	verify(&w, 0, 0, 0, 0, NULL);
	assert_true(emitted(&w, "NoPods"));
	const cJSON *c = cJSON_GetArrayItem(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(w.pdb, "status"), "conditions"), 0);
	assert_string_equal(cJSON_GetObjectItem(c, "reason")->valuestring, PDB_REASON_SYNC_FAILED);
	world_free(&w);
}

static void TestInvalidSelectors(void **state)
{
	(void)state;
	invalid_selector_row("{\"matchLabels\":{\"k8s.io/too/many/slashes\":\"value\"}}");
	invalid_selector_row("{\"matchExpressions\":[{\"key\":\"foo\",\"operator\":\"illegal\","
	                     "\"values\":[\"bar\"]}]}");
}

static void stale_row(bool deleting, uint8_t dt, kube_time_t passed, bool want_false)
{
	struct kube_pod p = {0};
	int64_t wait;
	p.meta.deletion_timestamp = deleting ? NOW : 0;
	p.disruption_target = dt;
	p.disruption_target_time = NOW;
	bool stale = pdb_stale_disruption(&p, NOW + passed, &wait);
	assert_int_equal(stale && wait == 0, want_false);
}

static void TestStalePodDisruption(void **state)
{
	(void)state;
	stale_row(false, KUBE_DT_TRUE, 2 * MIN + 1000000000LL, true);     /* stale pod disruption */
	stale_row(false, KUBE_DT_TRUE, 2 * MIN - 1000000000LL, false);    /* in progress */
	stale_row(true, KUBE_DT_TRUE, 2 * MIN + 1000000000LL, false);     /* actuated */
	stale_row(true, KUBE_DT_NONE, 2 * MIN + 1000000000LL, false);     /* no pod disruption */
	stale_row(true, KUBE_DT_NOT_TRUE, 2 * MIN + 1000000000LL, false); /* cleared */
	/* the clearing write: the condition replaced (status False, reason/message/probe time
	 * removed, transition now, observedGeneration the pod's), guarded by resourceVersion */
	char *patch = pdb_stale_patch("42", 3, NOW);
	cJSON *pj = cJSON_Parse(patch);
	assert_non_null(pj);
	assert_string_equal(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(pj, "metadata"), "resourceVersion")
	                ->valuestring,
	        "42");
	const cJSON *c = cJSON_GetArrayItem(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(pj, "status"), "conditions"), 0);
	assert_string_equal(cJSON_GetObjectItem(c, "type")->valuestring, "DisruptionTarget");
	assert_string_equal(cJSON_GetObjectItem(c, "status")->valuestring, "False");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(c, "reason")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(c, "message")));
	assert_int_equal(cJSON_GetObjectItem(c, "observedGeneration")->valueint, 3);
	char ts[KUBE_TIME_BUF];
	kube_time_format(NOW, ts);
	assert_string_equal(cJSON_GetObjectItem(c, "lastTransitionTime")->valuestring, ts);
	cJSON_Delete(pj);
	free(patch);
}

/* the pod decoder keeps what the stale-condition check reads (kube/decode.c) */
static void test_decode_disruption_target(void **state)
{
	static const char *const pods[] = {
	        "{\"metadata\":{\"name\":\"a\"},\"status\":{\"conditions\":[{\"type\":"
	        "\"DisruptionTarget\",\"status\":\"True\",\"reason\":\"PreemptionByScheduler\","
	        "\"lastTransitionTime\":\"2026-01-02T03:04:05Z\"}]}}",
	        "{\"metadata\":{\"name\":\"a\"},\"status\":{\"conditions\":[{\"type\":"
	        "\"DisruptionTarget\",\"status\":\"True\",\"reason\":\"TerminationByKubelet\"}]}}",
	        "{\"metadata\":{\"name\":\"a\"},\"status\":{\"conditions\":[{\"type\":"
	        "\"DisruptionTarget\",\"status\":\"False\"}]}}",
	        "{\"metadata\":{\"name\":\"a\"},\"status\":{}}",
	};
	static const uint8_t want[] = {KUBE_DT_TRUE, KUBE_DT_TRUE_KUBELET, KUBE_DT_NOT_TRUE,
	                               KUBE_DT_NONE};
	kube_time_t t;
	(void)state;
	assert_int_equal(kube_time_parse("2026-01-02T03:04:05Z", 20, &t), 0);
	for (size_t i = 0; i < 4; i++) {
		struct kube_pod *p = NULL;
		assert_int_equal(kube_decode_pod(pods[i], strlen(pods[i]), 0, &p), 0);
		assert_int_equal(p->disruption_target, want[i]);
		assert_int_equal(p->disruption_target_time, i == 0 ? t : 0);
		kube_object_free(p);
	}
}

/* pdb.c's own: the scaled values, the selector's %v, the unchanged-status rule */
static void test_scaled_values(void **state)
{
	char *err = NULL;
	int v;
	cJSON *x = cJSON_CreateString("34%");
	(void)state;
	assert_int_equal(pdb_scaled_value(x, 3, true, &v, &err), 0);
	assert_int_equal(v, 2); /* 34% of 3 rounds up to 2 */
	cJSON_SetValuestring(x, "10");
	assert_int_equal(pdb_scaled_value(x, 3, true, &v, &err), -EINVAL);
	assert_string_equal(err, "invalid value for IntOrString: invalid type: string is not a "
	                         "percentage");
	free(err);
	cJSON_SetValuestring(x, "a%");
	assert_int_equal(pdb_scaled_value(x, 3, true, &v, &err), -EINVAL);
	assert_string_equal(err, "invalid value for IntOrString: invalid value \"a%\": "
	                         "strconv.Atoi: parsing \"a\": invalid syntax");
	free(err);
	cJSON_Delete(x);
	cJSON *sel = cJSON_Parse("{\"matchLabels\":{\"z\":\"1\",\"a\":\"2\"},\"matchExpressions\":"
	                         "[{\"key\":\"k\",\"operator\":\"In\",\"values\":[\"x\",\"y\"]}]}");
	char *s = pdb_selector_string(sel);
	assert_string_equal(s,
	                    "&LabelSelector{MatchLabels:map[string]string{a: 2,z: 1,},"
	                    "MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement"
	                    "{Key:k,Operator:In,Values:[x y],},},}");
	free(s);
	cJSON_Delete(sel);
}

static void test_no_write_when_up_to_date(void **state)
{
	struct world w = {0};
	(void)state;
	new_pdb(&w, "minAvailable", "1");
	new_pod(&w, "a");
	new_pod(&w, "b");
	free(run(&w, NOW));
	verify(&w, 1, 2, 1, 2, NULL);
	struct pdb_result r;
	struct pdb_lookup lk = lookup_of(&w);
	struct pdb_pod pods[2] = {{.name = "a", .ready = true}, {.name = "b", .ready = true}};
	int e;
	assert_int_equal(pdb_try_sync(w.pdb, NULL, pods, 2, &lk, NOW, &r), 0);
	assert_null(pdb_status_update(w.pdb, &r, NOW, &e)); /* nothing changed: no write */
	assert_int_equal(e, 0);
	pdb_result_free(&r);
	world_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(TestNoSelector),
	        cmocka_unit_test(TestUnavailable),
	        cmocka_unit_test(TestIntegerMaxUnavailable),
	        cmocka_unit_test(TestIntegerMaxUnavailableWithScaling),
	        cmocka_unit_test(TestPercentageMaxUnavailableWithScaling),
	        cmocka_unit_test(TestNakedPod),
	        cmocka_unit_test(TestUnsupportedControllerPod),
	        cmocka_unit_test(TestStatusForUnmanagedPod),
	        cmocka_unit_test(TestReplicaSet),
	        cmocka_unit_test(TestScaleResource),
	        cmocka_unit_test(TestMultipleControllers),
	        cmocka_unit_test(TestReplicationController),
	        cmocka_unit_test(TestStatefulSetController),
	        cmocka_unit_test(TestTwoControllers),
	        cmocka_unit_test(TestUpdateDisruptedPods),
	        cmocka_unit_test(TestBasicFinderFunctions),
	        cmocka_unit_test(TestDeploymentFinderFunction),
	        cmocka_unit_test(TestInvalidSelectors),
	        cmocka_unit_test(TestStalePodDisruption),
	        cmocka_unit_test(test_decode_disruption_target),
	        cmocka_unit_test(test_scaled_values),
	        cmocka_unit_test(test_no_write_when_up_to_date),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
