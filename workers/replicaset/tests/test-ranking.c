/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/replicaset/tests/test-ranking.c: the scale-down order, after upstream's
 * controller_utils_test.go TestSortingActivePodsWithRanks (every rule, with and without the
 * log2 buckets, deletion cost on/off, sidecar restarts) and replica_set_test.go
 * TestGetPodsToDelete (victims, related pods on the same node), rewritten in C.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "workers/replicaset/ranking.h"

#define SEC  INT64_C(1000000000)
#define HOUR (3600 * SEC)
#define NOW  (INT64_C(1700000000) * SEC)

static struct kube_pod mk(const char *uid, const char *node, enum kube_pod_phase ph, bool ready)
{
	struct kube_pod p;
	memset(&p, 0, sizeof p);
	p.meta.name = uid;
	p.meta.namespace = "ns";
	p.meta.uid = uid;
	p.meta.creation_timestamp = NOW - 24 * HOUR;
	p.node_name = node;
	p.phase = ph;
	p.ready = ready;
	if (ready)
		p.ready_transition_time = NOW - 20 * HOUR;
	return p;
}

static const struct rs_rank_opts OPTS = {.now = NOW, .pod_deletion_cost = true};

/* a strictly before b, and not the other way round */
static void lesser(const struct kube_pod *a, int ra, const struct kube_pod *b, int rb,
                   const struct rs_rank_opts *o)
{
	assert_true(rs_pod_delete_before(a, ra, b, rb, o));
	assert_false(rs_pod_delete_before(b, rb, a, ra, o));
}

static void test_log2_bucket(void **state)
{
	(void)state;
	assert_int_equal(rs_log2_bucket(-5), -1);
	assert_int_equal(rs_log2_bucket(0), -1);
	assert_int_equal(rs_log2_bucket(1), 0);
	assert_int_equal(rs_log2_bucket(2), 1);
	assert_int_equal(rs_log2_bucket(3), 1);
	assert_int_equal(rs_log2_bucket(4), 2);
	assert_int_equal(rs_log2_bucket(INT64_C(1) << 40), 40);
	assert_int_equal(rs_log2_bucket((INT64_C(1) << 40) - 1000), 39);
	assert_int_equal(rs_log2_bucket(5 * HOUR), 44);  /* 1.8e13 ns */
	assert_int_equal(rs_log2_bucket(8 * HOUR), 44);  /* 2.88e13 ns */
	assert_int_equal(rs_log2_bucket(10 * HOUR), 45); /* 3.6e13 ns */
}

static void test_rules_in_order(void **state)
{
	(void)state;
	struct kube_pod unscheduled = mk("u", "", KUBE_POD_PENDING, false);
	struct kube_pod unscheduled_null = mk("u2", NULL, KUBE_POD_RUNNING, true);
	struct kube_pod pending = mk("p", "node", KUBE_POD_PENDING, false);
	struct kube_pod unknown = mk("k", "node", KUBE_POD_UNKNOWN, false);
	struct kube_pod running_not_ready = mk("r", "node", KUBE_POD_RUNNING, false);
	struct kube_pod ready = mk("rr", "node", KUBE_POD_RUNNING, true);
	struct kube_pod empty_phase = mk("e", "node", KUBE_POD_PHASE_UNSET, false);
	/* 1: unassigned < assigned, even against an earlier phase */
	lesser(&unscheduled, 0, &pending, 0, &OPTS);
	lesser(&unscheduled_null, 0, &pending, 5, &OPTS);
	/* 2: Pending < Unknown < Running; an unset phase ranks as Pending */
	lesser(&pending, 0, &unknown, 0, &OPTS);
	lesser(&unknown, 0, &running_not_ready, 0, &OPTS);
	lesser(&empty_phase, 0, &unknown, 0, &OPTS);
	assert_false(rs_pod_delete_before(&empty_phase, 0, &pending, 0, &OPTS) &&
	             rs_pod_delete_before(&pending, 0, &empty_phase, 0, &OPTS));
	/* 3: not ready < ready */
	lesser(&running_not_ready, 0, &ready, 0, &OPTS);
	/* both unscheduled: falls through to the next rules */
	struct kube_pod unscheduled_running = mk("ur", "", KUBE_POD_RUNNING, false);
	lesser(&unscheduled, 0, &unscheduled_running, 0, &OPTS);
	/* identical pods: neither before */
	struct kube_pod same = ready;
	assert_false(rs_pod_delete_before(&ready, 0, &same, 0, &OPTS));
}

static void test_deletion_cost(void **state)
{
	(void)state;
	struct kube_pod low = mk("a", "node", KUBE_POD_RUNNING, true);
	struct kube_pod high = mk("b", "node", KUBE_POD_RUNNING, true);
	low.deletion_cost = -10;
	low.has_deletion_cost = true;
	high.deletion_cost = 1000;
	high.has_deletion_cost = true;
	high.max_restarts = 5; /* would win rule 7 if the cost were ignored */
	lesser(&low, 0, &high, 0, &OPTS);
	/* cost beats rank (rule 4 before rule 5) */
	lesser(&low, 0, &high, 9, &OPTS);
	/* gate off: restarts decide (integration TestPodDeletionCost, gate disabled) */
	struct rs_rank_opts off = OPTS;
	off.pod_deletion_cost = false;
	lesser(&high, 0, &low, 0, &off);
	/* cost is still below readiness */
	struct kube_pod not_ready = mk("c", "node", KUBE_POD_RUNNING, false);
	not_ready.deletion_cost = 5000;
	lesser(&not_ready, 0, &low, 0, &OPTS);
	/* absent (0) vs positive */
	struct kube_pod none = mk("d", "node", KUBE_POD_RUNNING, true);
	lesser(&none, 0, &high, 0, &OPTS);
}

static void test_rank(void **state)
{
	(void)state;
	struct kube_pod a = mk("a", "n1", KUBE_POD_RUNNING, true);
	struct kube_pod b = mk("b", "n2", KUBE_POD_RUNNING, true);
	b.ready_transition_time = NOW - SEC; /* would win rule 6 */
	lesser(&a, 3, &b, 1, &OPTS);
	lesser(&b, 1, &a, 1, &OPTS);
}

static void test_ready_time(void **state)
{
	(void)state;
	struct kube_pod r5 = mk("zz5", "node", KUBE_POD_RUNNING, true);
	struct kube_pod r8 = mk("aa8", "node", KUBE_POD_RUNNING, true);
	struct kube_pod r10 = mk("bb10", "node", KUBE_POD_RUNNING, true);
	struct kube_pod rzero = mk("zzz", "node", KUBE_POD_RUNNING, true);
	r5.ready_transition_time = NOW - 5 * HOUR;
	r8.ready_transition_time = NOW - 8 * HOUR;
	r10.ready_transition_time = NOW - 10 * HOUR;
	rzero.ready_transition_time = 0;
	/* different buckets: more recently ready first */
	lesser(&r5, 0, &r10, 0, &OPTS);
	/* same bucket (44): the smaller UID first, whatever the exact times */
	lesser(&r8, 0, &r5, 0, &OPTS);
	/* a zero time first */
	lesser(&rzero, 0, &r5, 0, &OPTS);
	/* no `now`: plain afterOrZero, later time first */
	struct rs_rank_opts nonow = OPTS;
	nonow.now = 0;
	lesser(&r5, 0, &r8, 0, &nonow);
	/* ready time beats restarts and creation */
	r10.max_restarts = 0;
	r5.max_restarts = 0;
	r10.meta.creation_timestamp = NOW - SEC;
	lesser(&r5, 0, &r10, 0, &OPTS);
	/* rule 6 needs both ready: a not-ready pod's transition time is not consulted (rule 3
	 * decides before), and equal times fall through */
	struct kube_pod eq1 = r5, eq2 = r5;
	eq1.meta.uid = "x1";
	eq2.meta.uid = "x2";
	eq1.max_restarts = 2;
	lesser(&eq1, 0, &eq2, 0, &OPTS);
}

static void test_restarts(void **state)
{
	(void)state;
	struct kube_pod hi = mk("a", "node", KUBE_POD_RUNNING, true);
	struct kube_pod lo = mk("b", "node", KUBE_POD_RUNNING, true);
	hi.max_restarts = 5;
	lo.meta.creation_timestamp = NOW - SEC; /* would win rule 8 */
	lesser(&hi, 0, &lo, 0, &OPTS);
	/* equal regular restarts: sidecar restarts decide */
	struct kube_pod sc = mk("c", "node", KUBE_POD_RUNNING, true);
	struct kube_pod nosc = mk("d", "node", KUBE_POD_RUNNING, true);
	sc.max_sidecar_restarts = 3;
	nosc.meta.creation_timestamp = NOW - SEC;
	lesser(&sc, 0, &nosc, 0, &OPTS);
	/* regular restarts dominate sidecar restarts */
	struct kube_pod reg = mk("e", "node", KUBE_POD_RUNNING, true);
	reg.max_restarts = 1;
	sc.max_sidecar_restarts = 100;
	lesser(&reg, 0, &sc, 0, &OPTS);
}

static void test_creation_time(void **state)
{
	(void)state;
	struct kube_pod newer = mk("z", "node", KUBE_POD_PENDING, false);
	struct kube_pod older = mk("a", "node", KUBE_POD_PENDING, false);
	struct kube_pod zero = mk("zz", "node", KUBE_POD_PENDING, false);
	newer.meta.creation_timestamp = NOW - 5 * HOUR;
	older.meta.creation_timestamp = NOW - 10 * HOUR;
	zero.meta.creation_timestamp = 0;
	lesser(&newer, 0, &older, 0, &OPTS);
	lesser(&zero, 0, &newer, 0, &OPTS);
	/* same bucket: UID order even though "z" is newer */
	older.meta.creation_timestamp = NOW - 8 * HOUR;
	lesser(&older, 0, &newer, 0, &OPTS);
	/* future timestamps (now - t <= 0) share bucket -1 */
	struct kube_pod f1 = mk("f1", "node", KUBE_POD_PENDING, false);
	struct kube_pod f2 = mk("f2", "node", KUBE_POD_PENDING, false);
	f1.meta.creation_timestamp = NOW + HOUR;
	f2.meta.creation_timestamp = NOW;
	lesser(&f1, 0, &f2, 0, &OPTS);
	lesser(&f2, 0, &newer, 0, &OPTS);
}

static void test_pods_to_delete(void **state)
{
	(void)state;
	struct kube_pod run = mk("run", "n1", KUBE_POD_RUNNING, true);
	struct kube_pod pend = mk("pend", "n1", KUBE_POD_PENDING, false);
	struct kube_pod unsch = mk("unsch", "", KUBE_POD_PENDING, false);
	struct kube_pod nr = mk("nr", "n1", KUBE_POD_RUNNING, false);
	const struct kube_pod *pods[] = {&run, &pend, &unsch, &nr};
	/* diff == len: no sort, everything goes in the given order */
	assert_int_equal(rs_pods_to_delete(pods, 4, NULL, 0, 4, &OPTS), 4);
	assert_ptr_equal(pods[0], &run);
	assert_ptr_equal(pods[3], &nr);
	assert_int_equal(rs_pods_to_delete(pods, 4, NULL, 0, 9, &OPTS), 4);
	/* diff < len: the earliest in startup go first */
	assert_int_equal(rs_pods_to_delete(pods, 4, NULL, 0, 2, &OPTS), 2);
	assert_ptr_equal(pods[0], &unsch);
	assert_ptr_equal(pods[1], &pend);
	assert_ptr_equal(pods[2], &nr);
	assert_ptr_equal(pods[3], &run);
	assert_int_equal(rs_pods_to_delete(pods, 0, NULL, 0, 0, &OPTS), 0);
}

static void test_related_on_same_node(void **state)
{
	(void)state;
	/* three identical ready pods on three nodes; related pods (the sibling RSes of the same
	 * Deployment) crowd node n2, so its pod goes first; an inactive related pod on n3 does not
	 * count */
	struct kube_pod a = mk("a", "n1", KUBE_POD_RUNNING, true);
	struct kube_pod b = mk("b", "n2", KUBE_POD_RUNNING, true);
	struct kube_pod c = mk("c", "n3", KUBE_POD_RUNNING, true);
	struct kube_pod r1 = mk("r1", "n2", KUBE_POD_RUNNING, true);
	struct kube_pod r2 = mk("r2", "n2", KUBE_POD_PENDING, false);
	struct kube_pod r3 = mk("r3", "n3", KUBE_POD_FAILED, false);
	struct kube_pod r4 = mk("r4", "n3", KUBE_POD_RUNNING, true);
	r4.meta.deletion_timestamp = NOW;
	const struct kube_pod *related[] = {&a, &b, &c, &r1, &r2, &r3, &r4};
	const struct kube_pod *pods[] = {&a, &b, &c};
	int ranks[3];
	assert_int_equal(rs_rank_by_related(pods, 3, related, 7, ranks), 0);
	assert_int_equal(ranks[0], 1);
	assert_int_equal(ranks[1], 3);
	assert_int_equal(ranks[2], 1);
	assert_int_equal(rs_pods_to_delete(pods, 3, related, 7, 1, &OPTS), 1);
	assert_ptr_equal(pods[0], &b);
	/* no related pods (standalone RS): ranks all 0, UID/creation decide */
	const struct kube_pod *pods2[] = {&c, &b, &a};
	assert_int_equal(rs_pods_to_delete(pods2, 3, NULL, 0, 1, &OPTS), 1);
	assert_ptr_equal(pods2[0], &c); /* exact ties: nobody is before anybody, order kept */
	b.meta.creation_timestamp += SEC;
	c.meta.creation_timestamp += 2 * SEC;
	assert_int_equal(rs_pods_to_delete(pods2, 3, NULL, 0, 1, &OPTS), 1);
	assert_ptr_equal(pods2[0], &a); /* different times, same bucket: smallest UID */
	/* the unscheduled bucket ("" node) counts too */
	struct kube_pod u1 = mk("u1", "", KUBE_POD_PENDING, false);
	struct kube_pod u2 = mk("u2", NULL, KUBE_POD_PENDING, false);
	const struct kube_pod *rel2[] = {&u1, &u2};
	const struct kube_pod *p3[] = {&u1};
	assert_int_equal(rs_rank_by_related(p3, 1, rel2, 2, ranks), 0);
	assert_int_equal(ranks[0], 2);
}

static void test_active_terminating(void **state)
{
	(void)state;
	struct kube_pod p = mk("p", "n", KUBE_POD_RUNNING, true);
	assert_true(rs_pod_is_active(&p));
	assert_false(rs_pod_is_terminating(&p));
	p.meta.deletion_timestamp = NOW;
	assert_false(rs_pod_is_active(&p));
	assert_true(rs_pod_is_terminating(&p));
	p.phase = KUBE_POD_FAILED;
	assert_false(rs_pod_is_terminating(&p));
	p.meta.deletion_timestamp = 0;
	assert_false(rs_pod_is_active(&p));
	p.phase = KUBE_POD_SUCCEEDED;
	assert_false(rs_pod_is_active(&p));
	p.phase = KUBE_POD_UNKNOWN;
	assert_true(rs_pod_is_active(&p));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_log2_bucket),
	        cmocka_unit_test(test_rules_in_order),
	        cmocka_unit_test(test_deletion_cost),
	        cmocka_unit_test(test_rank),
	        cmocka_unit_test(test_ready_time),
	        cmocka_unit_test(test_restarts),
	        cmocka_unit_test(test_creation_time),
	        cmocka_unit_test(test_pods_to_delete),
	        cmocka_unit_test(test_related_on_same_node),
	        cmocka_unit_test(test_active_terminating),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
