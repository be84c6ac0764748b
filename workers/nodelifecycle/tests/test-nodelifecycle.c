/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node lifecycle controller's decisions (workers/nodelifecycle/nlc.h) with upstream's tests
 * as scenarios:
 *   scheduler/rate_limited_queue_test.go: TestAddNode, TestDelNode, TestTry, TestTryOrdering,
 *   TestTryRemovingWhileTry, TestSwapLimiter, TestAddAfterTry; plus the token bucket's rate;
 *   node_lifecycle_controller_test.go: the zone states of TestMonitorNodeHealthEvictPods /
 *   ComputeZoneState, ReducedQPSFunc, handleDisruption (the zone cases of
 *   TestMonitorNodeHealthEvictPodsWithDisruption), the tryUpdateNodeHealth decisions of
 *   TestMonitorNodeHealthUpdateStatus, TestMonitorNodeHealthUpdateNodeAndPodStatusWithLease and
 *   TestTryUpdateNodeHealth, the taints of TestTaintsNodeByCondition and
 *   TestSwapUnreachableNotReadyTaints, MarkPodsNotReady's condition
 *   (TestMonitorNodeHealthMarkPodsNotReady), TestReconcileNodeLabels and
 *   Test_isNodeExcludedFromDisruptionChecks; nodetopology's GetZoneKey.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workers/nodelifecycle/nlc.h"

#define MS  1000000ll
#define SEC 1000000000ll

static kube_time_t T(const char *s)
{
	kube_time_t t = 0;
	assert_int_equal(kube_time_parse(s, strlen(s), &t), 0);
	return t;
}

static cJSON *J(const char *s)
{
	cJSON *j = cJSON_Parse(s);
	assert_non_null(j);
	return j;
}

static const cJSON *cond(const cJSON *node, const char *type)
{
	const cJSON *c;
	cJSON_ArrayForEach(c,
	                   cJSON_GetObjectItem(cJSON_GetObjectItem(node, "status"), "conditions"))
	{
		if (!strcmp(cJSON_GetObjectItem(c, "type")->valuestring, type))
			return c;
	}
	return NULL;
}

static const char *cstr(const cJSON *c, const char *k)
{
	const cJSON *v = cJSON_GetObjectItem(c, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* ---- rate_limited_queue_test.go ------------------------------------------------------------ */

static void queue_is(const struct nlc_rlq *q, const char *const *want, size_t n)
{
	assert_int_equal(q->n, n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(q->q[i].value, want[i]);
}

static void add3(struct nlc_rlq *q)
{
	nlc_rlq_init(q, INFINITY, 0);
	assert_int_equal(nlc_rlq_add(q, "first", "11111", 1), 1);
	assert_int_equal(nlc_rlq_add(q, "second", "22222", 2), 1);
	assert_int_equal(nlc_rlq_add(q, "third", "33333", 3), 1);
}

static void test_add_node(void **st)
{
	struct nlc_rlq q;
	(void)st;
	add3(&q);
	queue_is(&q, (const char *[]){"first", "second", "third"}, 3);
	assert_int_equal(q.nset, 3);
	assert_int_equal(nlc_rlq_add(&q, "first", "11111", 4), 0); /* unique */
	nlc_rlq_free(&q);
}

static void test_del_node(void **st)
{
	const char *rm[] = {"first", "second", "third"};
	const char *want[3][2] = {{"second", "third"}, {"first", "third"}, {"first", "second"}};
	(void)st;
	for (int i = 0; i < 3; i++) {
		struct nlc_rlq q;
		add3(&q);
		assert_true(nlc_rlq_remove(&q, rm[i]));
		queue_is(&q, want[i], 2);
		assert_int_equal(q.nset, 2);
		assert_false(nlc_rlq_has(&q, rm[i]));
		assert_false(nlc_rlq_remove(&q, rm[i]));
		nlc_rlq_free(&q);
	}
}

struct rec {
	char seen[8][16];
	int n, count;
	bool fail_second_once;
	struct nlc_rlq *q;
	bool remove_second;
};

static bool record(void *ud, const struct nlc_tv *tv, int64_t *wait)
{
	struct rec *r = ud;
	r->count++;
	assert_true(tv->process_at != 0 && tv->added_at != 0);
	if (r->fail_second_once && !strcmp(tv->value, "second")) {
		r->fail_second_once = false;
		if (r->remove_second) /* TestTryRemovingWhileTry: removed while processed */
			nlc_rlq_remove(r->q, "second");
		*wait = 2 * MS;
		return false;
	}
	snprintf(r->seen[r->n++], 16, "%s", tv->value);
	return true;
}

static void test_try(void **st)
{
	struct nlc_rlq q;
	struct rec r = {0};
	(void)st;
	add3(&q);
	nlc_rlq_remove(&q, "second");
	nlc_rlq_try(&q, 10, record, &r);
	assert_int_equal(r.n, 2);
	assert_string_equal(r.seen[0], "first");
	assert_string_equal(r.seen[1], "third");
	/* TestAddAfterTry: processed values stay in the set, a new Add does nothing */
	assert_int_equal(q.n, 0);
	assert_int_equal(nlc_rlq_add(&q, "first", "11111", 11), 0);
	r.n = 0;
	nlc_rlq_try(&q, 12, record, &r);
	assert_int_equal(r.n, 0);
	/* until it is removed */
	assert_true(nlc_rlq_remove(&q, "first"));
	assert_int_equal(nlc_rlq_add(&q, "first", "11111", 13), 1);
	nlc_rlq_free(&q);
}

static void test_try_ordering(void **st)
{
	struct nlc_rlq q;
	struct rec r = {.fail_second_once = true};
	(void)st;
	add3(&q);
	nlc_rlq_try(&q, 4 * MS, record, &r);
	/* second was retried 2 ms + 1 ns later: after third, not yet due */
	assert_int_equal(r.count, 3);
	assert_int_equal(r.n, 2);
	assert_string_equal(r.seen[0], "first");
	assert_string_equal(r.seen[1], "third");
	assert_int_equal(q.n, 1);
	assert_int_equal(q.q[0].process_at, 6 * MS + 1);
	assert_int_equal(q.q[0].added_at, 2);
	nlc_rlq_try(&q, 7 * MS, record, &r);
	assert_int_equal(r.n, 3);
	assert_string_equal(r.seen[2], "second");
	nlc_rlq_free(&q);
}

static void test_try_removing_while_try(void **st)
{
	struct nlc_rlq q;
	struct rec r = {.fail_second_once = true, .remove_second = true, .q = &q};
	(void)st;
	add3(&q);
	r.q = &q;
	nlc_rlq_try(&q, 10, record, &r);
	assert_int_equal(r.count, 3);
	assert_int_equal(r.n, 2);
	assert_string_equal(r.seen[0], "first");
	assert_string_equal(r.seen[1], "third");
	assert_int_equal(q.n, 0);
	nlc_rlq_free(&q);
}

static void test_swap_limiter(void **st)
{
	struct nlc_rlq q;
	(void)st;
	nlc_rlq_init(&q, INFINITY, 0);
	nlc_rlq_swap_limiter(&q, 0, 0);
	assert_true(q.lim.qps == 0);
	assert_false(nlc_bucket_try(&q.lim, 100 * SEC)); /* never */
	nlc_rlq_swap_limiter(&q, 5.5f, 0);
	assert_true(q.lim.qps == 5.5f);
	/* the "never" limiter had no token: the new one starts drained */
	assert_false(nlc_bucket_try(&q.lim, 0));
	assert_true(nlc_bucket_try(&q.lim, SEC));
	/* drained old bucket: the new one starts drained too */
	nlc_rlq_swap_limiter(&q, 1.0f, SEC);
	assert_false(nlc_bucket_try(&q.lim, SEC));
	/* an old bucket with a token left: the new one starts full */
	nlc_rlq_swap_limiter(&q, 2.0f, 10 * SEC);
	assert_true(nlc_bucket_try(&q.lim, 10 * SEC));
	/* the same rate: the bucket is kept (still drained) */
	nlc_rlq_swap_limiter(&q, 2.0f, 10 * SEC);
	assert_false(nlc_bucket_try(&q.lim, 10 * SEC));
	nlc_rlq_free(&q);
}

static void test_bucket_rate(void **st)
{
	struct nlc_bucket b;
	(void)st;
	nlc_bucket_init(&b, 0.1f, 0); /* --node-eviction-rate's default: one node every 10 s */
	assert_true(nlc_bucket_try(&b, 0));
	assert_false(nlc_bucket_try(&b, 1 * SEC));
	assert_false(nlc_bucket_try(&b, 9 * SEC));
	assert_true(nlc_bucket_try(&b, 10 * SEC + 1000));
	assert_false(nlc_bucket_try(&b, 10 * SEC + 2000));
	/* burst 1: a long idle time does not bank tokens */
	assert_true(nlc_bucket_try(&b, 1000 * SEC));
	assert_false(nlc_bucket_try(&b, 1000 * SEC));
}

/* the queue with a rate: one value per token */
static void test_try_rate_limited(void **st)
{
	struct nlc_rlq q;
	struct rec r = {0};
	(void)st;
	nlc_rlq_init(&q, 0.1f, 0);
	nlc_rlq_add(&q, "a", "1", 1);
	nlc_rlq_add(&q, "b", "2", 1);
	nlc_rlq_try(&q, 1, record, &r);
	assert_int_equal(r.n, 1);
	nlc_rlq_try(&q, 5 * SEC, record, &r);
	assert_int_equal(r.n, 1);
	nlc_rlq_try(&q, 10 * SEC + 2, record, &r);
	assert_int_equal(r.n, 2);
	assert_string_equal(r.seen[1], "b");
	nlc_rlq_free(&q);
}

/* ---- zones ----------------------------------------------------------------------------------- */

static void test_compute_zone_state(void **st)
{
	int u;
	(void)st;
	enum nlc_cond all_ok[] = {NLC_TRUE, NLC_TRUE};
	assert_int_equal(nlc_compute_zone_state(all_ok, 2, 0.55f, &u), NLC_ZONE_NORMAL);
	assert_int_equal(u, 0);
	enum nlc_cond none[] = {NLC_UNKNOWN, NLC_FALSE};
	assert_int_equal(nlc_compute_zone_state(none, 2, 0.55f, &u), NLC_ZONE_FULL_DISRUPTION);
	assert_int_equal(u, 2);
	/* a nil Ready condition counts as not ready */
	enum nlc_cond nil[] = {NLC_ABSENT};
	assert_int_equal(nlc_compute_zone_state(nil, 1, 0.55f, &u), NLC_ZONE_FULL_DISRUPTION);
	/* more than 2 not ready and at least the threshold: partial */
	enum nlc_cond p[] = {NLC_UNKNOWN, NLC_UNKNOWN, NLC_FALSE, NLC_TRUE, NLC_TRUE};
	assert_int_equal(nlc_compute_zone_state(p, 5, 0.55f, &u), NLC_ZONE_PARTIAL_DISRUPTION);
	assert_int_equal(u, 3);
	/* 3 of 6 = 0.5 < 0.55: normal */
	enum nlc_cond n6[] = {NLC_UNKNOWN, NLC_UNKNOWN, NLC_UNKNOWN, NLC_TRUE, NLC_TRUE, NLC_TRUE};
	assert_int_equal(nlc_compute_zone_state(n6, 6, 0.55f, &u), NLC_ZONE_NORMAL);
	assert_int_equal(nlc_compute_zone_state(n6, 6, 0.5f, &u), NLC_ZONE_PARTIAL_DISRUPTION);
	/* 2 not ready of 3 (0.67) but not more than 2: normal */
	enum nlc_cond two[] = {NLC_UNKNOWN, NLC_FALSE, NLC_TRUE};
	assert_int_equal(nlc_compute_zone_state(two, 3, 0.55f, &u), NLC_ZONE_NORMAL);
	assert_int_equal(nlc_compute_zone_state(NULL, 0, 0.55f, &u), NLC_ZONE_NORMAL);
}

static void test_reduced_qps(void **st)
{
	(void)st;
	assert_true(nlc_reduced_qps(50, 50, 0.01f) == 0);
	assert_true(nlc_reduced_qps(51, 50, 0.01f) == 0.01f);
	assert_true(nlc_reduced_qps(3, 2, 0.5f) == 0.5f);
}

static void zone_is(const char *labels, const char *want)
{
	cJSON *l = labels ? J(labels) : NULL;
	char *z = NULL;
	assert_int_equal(nlc_zone_key(l, &z), 0);
	assert_string_equal(z, want);
	free(z);
	cJSON_Delete(l);
}

static void test_zone_key(void **st)
{
	(void)st;
	zone_is(NULL, "");
	zone_is("{}", "");
	zone_is("{\"topology.kubernetes.io/region\":\"r\",\"topology.kubernetes.io/zone\":\"z\"}",
	        "r::z");
	zone_is("{\"topology.kubernetes.io/zone\":\"z\",\"failure-domain.beta.kubernetes.io/zone\":"
	        "\"bz\",\"failure-domain.beta.kubernetes.io/region\":\"br\"}",
	        "br::bz");
	zone_is("{\"topology.kubernetes.io/zone\":\"z\"}", "::z");
	/* the beta label wins even when empty */
	zone_is("{\"failure-domain.beta.kubernetes.io/zone\":\"\",\"topology.kubernetes.io/zone\":"
	        "\"z\"}",
	        "");
}

static void test_excluded(void **st)
{
	(void)st;
	cJSON *a =
	        J("{\"metadata\":{\"labels\":{\"node.kubernetes.io/exclude-disruption\":\"\"}}}");
	cJSON *b = J("{\"metadata\":{\"labels\":{\"other\":\"x\"}}}");
	assert_true(nlc_node_excluded(a));
	assert_false(nlc_node_excluded(b));
	cJSON_Delete(a);
	cJSON_Delete(b);
}

/* ---- handleDisruption (TestMonitorNodeHealthEvictPodsWithDisruption's cases) ---------------- */

static const struct nlc_disruption_params dprm = {.eviction_qps = 0.1f,
                                                  .secondary_qps = 0.01f,
                                                  .unhealthy_threshold = 0.55f,
                                                  .large_cluster_threshold = 50};

static const enum nlc_cond UP[] = {NLC_TRUE}, DOWN2[] = {NLC_UNKNOWN, NLC_FALSE},
                           DOWN1[] = {NLC_UNKNOWN};

/* "Network Disruption: One zone is down - eviction should take place." */
static void test_disruption_one_zone_down(void **st)
{
	(void)st;
	struct nlc_zone_in in[] = {{.key = "z1", .ready = DOWN2, .n = 2},
	                           {.key = "z2", .ready = UP, .n = 1}};
	struct nlc_zone_st z[] = {{.key = "z1", .has_state = true, .state = NLC_ZONE_NORMAL},
	                          {.key = "z2", .has_state = true, .state = NLC_ZONE_NORMAL}};
	assert_int_equal(nlc_handle_disruption(&dprm, in, 2, z, 2), NLC_DISRUPT_ZONES);
	assert_int_equal(z[0].state, NLC_ZONE_FULL_DISRUPTION);
	assert_true(z[0].swap && z[0].qps == 0.1f); /* HealthyQPSFunc */
	assert_false(z[1].swap);
	assert_int_equal(in[0].unhealthy, 2);
	assert_int_equal(in[1].unhealthy, 0);
}

/* "Network Disruption: Both zones down" / "Only zone is down - eviction shouldn't take place" */
static void test_disruption_all_down(void **st)
{
	(void)st;
	struct nlc_zone_in in[] = {{.key = "z1", .ready = DOWN1, .n = 1},
	                           {.key = "z2", .ready = DOWN2, .n = 2}};
	struct nlc_zone_st z[] = {{.key = "z1", .has_state = true, .state = NLC_ZONE_NORMAL},
	                          {.key = "z2", .has_state = true, .state = NLC_ZONE_NORMAL}};
	assert_int_equal(nlc_handle_disruption(&dprm, in, 2, z, 2), NLC_DISRUPT_ENTER);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(z[i].state, NLC_ZONE_FULL_DISRUPTION);
		assert_true(z[i].swap && z[i].qps == 0);
	}
	/* still all down: nothing more */
	assert_int_equal(nlc_handle_disruption(&dprm, in, 2, z, 2), NLC_DISRUPT_NONE);
	assert_false(z[0].swap || z[1].swap);
	/* the only zone down */
	struct nlc_zone_in one[] = {{.key = "z1", .ready = DOWN2, .n = 2}};
	struct nlc_zone_st z1[] = {{.key = "z1", .has_state = true, .state = NLC_ZONE_NORMAL}};
	assert_int_equal(nlc_handle_disruption(&dprm, one, 1, z1, 1), NLC_DISRUPT_ENTER);
	assert_true(z1[0].swap && z1[0].qps == 0);
	/* one zone comes back: every zone's rate set for its state */
	struct nlc_zone_in back[] = {{.key = "z1", .ready = UP, .n = 1},
	                             {.key = "z2", .ready = DOWN2, .n = 2}};
	assert_int_equal(nlc_handle_disruption(&dprm, back, 2, z, 2), NLC_DISRUPT_EXIT);
	assert_int_equal(z[0].state, NLC_ZONE_NORMAL);
	assert_int_equal(z[1].state, NLC_ZONE_FULL_DISRUPTION);
	assert_true(z[0].swap && z[0].qps == 0.1f);
	assert_true(z[1].swap && z[1].qps == 0.1f);
}

/* partial disruption: no taints in a small zone, the secondary rate in a large one */
static void test_disruption_partial(void **st)
{
	(void)st;
	enum nlc_cond small[] = {NLC_UNKNOWN, NLC_UNKNOWN, NLC_FALSE, NLC_TRUE};
	struct nlc_zone_in in[] = {{.key = "z1", .ready = small, .n = 4},
	                           {.key = "z2", .ready = UP, .n = 1}};
	struct nlc_zone_st z[] = {{.key = "z1", .has_state = true, .state = NLC_ZONE_NORMAL},
	                          {.key = "z2", .has_state = true, .state = NLC_ZONE_NORMAL}};
	assert_int_equal(nlc_handle_disruption(&dprm, in, 2, z, 2), NLC_DISRUPT_ZONES);
	assert_int_equal(z[0].state, NLC_ZONE_PARTIAL_DISRUPTION);
	assert_true(z[0].swap && z[0].qps == 0);
	enum nlc_cond large[60];
	for (int i = 0; i < 60; i++)
		large[i] = i < 40 ? NLC_UNKNOWN : NLC_TRUE;
	struct nlc_zone_in lin[] = {{.key = "z1", .ready = large, .n = 60},
	                            {.key = "z2", .ready = UP, .n = 1}};
	z[0].state = NLC_ZONE_NORMAL;
	assert_int_equal(nlc_handle_disruption(&dprm, lin, 2, z, 2), NLC_DISRUPT_ZONES);
	assert_int_equal(z[0].state, NLC_ZONE_PARTIAL_DISRUPTION);
	assert_true(z[0].swap && z[0].qps == 0.01f);
	assert_int_equal(lin[0].unhealthy, 40);
}

/* a new zone (Initial) goes Normal at the eviction rate; a zone no node reports leaves the
 * states when the walk reaches it (it stops at the first zone not fully disrupted: upstream's
 * map order decides which, kcmd's is the zones' order) */
static void test_disruption_zone_lifecycle(void **st)
{
	(void)st;
	struct nlc_zone_in in[] = {{.key = "z1", .ready = UP, .n = 1}};
	struct nlc_zone_st z[] = {{.key = "z2", .has_state = true, .state = NLC_ZONE_NORMAL},
	                          {.key = "z1", .has_state = true, .state = NLC_ZONE_INITIAL},
	                          {.key = "z3", .has_state = false},
	                          {.key = "z4", .has_state = true, .state = NLC_ZONE_NORMAL}};
	assert_int_equal(nlc_handle_disruption(&dprm, in, 1, z, 4), NLC_DISRUPT_ZONES);
	assert_true(z[0].dropped);
	assert_false(z[0].has_state);
	assert_int_equal(z[1].state, NLC_ZONE_NORMAL);
	assert_true(z[1].swap && z[1].qps == 0.1f);
	assert_false(z[2].dropped);
	assert_false(z[3].dropped); /* after the walk stopped at z1 */
	assert_true(z[3].has_state);
	assert_false(z[3].swap);
	/* a zone seen without a state gets Initial (logged), then its new state */
	struct nlc_zone_in in3[] = {{.key = "z1", .ready = UP, .n = 1},
	                            {.key = "z3", .ready = UP, .n = 1}};
	assert_int_equal(nlc_handle_disruption(&dprm, in3, 2, z, 4), NLC_DISRUPT_ZONES);
	assert_true(z[2].initialized);
	assert_int_equal(z[2].state, NLC_ZONE_NORMAL);
	assert_true(z[2].swap && z[2].qps == 0.1f);
	assert_false(z[1].swap);
}

/* ---- tryUpdateNodeHealth --------------------------------------------------------------------- */

#define CREATED  "2015-01-01T12:00:00Z"
#define FAKE_NOW "2015-01-01T12:10:00Z"

static struct nlc_health_in base_in(const char *now)
{
	return (struct nlc_health_in){
	        .now = T(now), .startup_grace = 60 * SEC, .monitor_grace = 40 * SEC};
}

/* TestMonitorNodeHealthUpdateStatus: a node that never posted, past the startup grace */
static void test_health_never_posted(void **st)
{
	(void)st;
	cJSON *n = J("{\"metadata\":{\"name\":\"node0\",\"creationTimestamp\":\"" CREATED "\"}}");
	struct nlc_health_in in = base_in(FAKE_NOW);
	struct nlc_health_out out;
	assert_int_equal(nlc_node_health(NULL, n, &in, &out), 0);
	assert_int_equal(out.observed, NLC_UNKNOWN);
	assert_true(out.timed_out);
	assert_true(out.update_status);
	assert_int_equal(out.current, NLC_UNKNOWN);
	const char *types[] = {"Ready", "MemoryPressure", "DiskPressure", "PIDPressure"};
	for (int i = 0; i < 4; i++) {
		const cJSON *c = cond(n, types[i]);
		assert_non_null(c);
		assert_string_equal(cstr(c, "status"), "Unknown");
		assert_string_equal(cstr(c, "reason"), "NodeStatusNeverUpdated");
		assert_string_equal(cstr(c, "message"), "Kubelet never posted node status.");
		assert_string_equal(cstr(c, "lastHeartbeatTime"), CREATED);
		assert_string_equal(cstr(c, "lastTransitionTime"), FAKE_NOW);
	}
	assert_null(cond(n, "NetworkUnavailable"));
	/* within the startup grace: nothing */
	cJSON_Delete(n);
	n = J("{\"metadata\":{\"name\":\"node0\",\"creationTimestamp\":\"" CREATED "\"}}");
	in = base_in("2015-01-01T12:00:59Z");
	assert_int_equal(nlc_node_health(NULL, n, &in, &out), 0);
	assert_false(out.timed_out);
	assert_false(out.update_status);
	assert_int_equal(out.current, NLC_ABSENT);
	assert_int_equal(out.health.probe, T(CREATED));
	cJSON_Delete(n);
}

#define READY_NODE(status, hb, tr)                                                                 \
	"{\"metadata\":{\"name\":\"node0\",\"creationTimestamp\":\"" CREATED "\"},"                \
	"\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"" status "\","               \
	"\"lastHeartbeatTime\":\"" hb "\",\"lastTransitionTime\":\"" tr "\"},"                     \
	"{\"type\":\"MemoryPressure\",\"status\":\"False\",\"lastHeartbeatTime\":\"" hb "\","      \
	"\"lastTransitionTime\":\"" tr "\"},"                                                      \
	"{\"type\":\"NetworkUnavailable\",\"status\":\"False\",\"lastHeartbeatTime\":\"" hb "\","  \
	"\"lastTransitionTime\":\"" tr "\"}]}}"

/* a node seen Ready, then silent past the grace period: its conditions go Unknown */
static void test_health_stopped_posting(void **st)
{
	(void)st;
	cJSON *n = J(READY_NODE("True", CREATED, CREATED));
	struct nlc_health_in in = base_in(CREATED);
	struct nlc_health_out out;
	/* first sight: probe = now */
	assert_int_equal(nlc_node_health(NULL, n, &in, &out), 0);
	assert_false(out.timed_out);
	assert_int_equal(out.health.probe, T(CREATED));
	assert_int_equal(out.observed, NLC_TRUE);
	struct nlc_health saved = out.health;
	cJSON_Delete(n);
	/* 41 s later, same heartbeat */
	n = J(READY_NODE("True", CREATED, CREATED));
	in = base_in("2015-01-01T12:00:41Z");
	assert_int_equal(nlc_node_health(&saved, n, &in, &out), 0);
	assert_true(out.timed_out);
	assert_true(out.update_status);
	assert_int_equal(out.observed, NLC_TRUE);
	assert_int_equal(out.current, NLC_UNKNOWN);
	const cJSON *c = cond(n, "Ready");
	assert_string_equal(cstr(c, "status"), "Unknown");
	assert_string_equal(cstr(c, "reason"), "NodeStatusUnknown");
	assert_string_equal(cstr(c, "message"), "Kubelet stopped posting node status.");
	assert_string_equal(cstr(c, "lastHeartbeatTime"), CREATED);
	assert_string_equal(cstr(c, "lastTransitionTime"), "2015-01-01T12:00:41Z");
	c = cond(n, "MemoryPressure");
	assert_string_equal(cstr(c, "status"), "Unknown");
	/* absent ones are added as never updated, NetworkUnavailable is left alone */
	c = cond(n, "DiskPressure");
	assert_string_equal(cstr(c, "reason"), "NodeStatusNeverUpdated");
	assert_string_equal(cstr(cond(n, "NetworkUnavailable"), "status"), "False");
	assert_int_equal(out.after_update.ready_transition, T("2015-01-01T12:00:41Z"));
	assert_int_equal(out.after_update.probe, T(CREATED));
	cJSON_Delete(n);
	/* exactly at the grace period: not yet (After is strict) */
	n = J(READY_NODE("True", CREATED, CREATED));
	in = base_in("2015-01-01T12:00:40Z");
	assert_int_equal(nlc_node_health(&saved, n, &in, &out), 0);
	assert_false(out.timed_out);
	cJSON_Delete(n);
}

/* already Unknown: nothing to post */
static void test_health_already_unknown(void **st)
{
	(void)st;
	cJSON *n = J(READY_NODE("Unknown", CREATED, CREATED));
	struct nlc_health saved = {.present = true,
	                           .probe = T(CREATED),
	                           .ready_transition = T(CREATED),
	                           .saved_ready = NLC_UNKNOWN,
	                           .saved_hb = T(CREATED),
	                           .saved_tr = T(CREATED)};
	struct nlc_health_in in = base_in(FAKE_NOW);
	struct nlc_health_out out;
	assert_int_equal(nlc_node_health(&saved, n, &in, &out), 0);
	assert_true(out.timed_out);
	assert_false(out.update_status);
	assert_int_equal(out.observed, NLC_UNKNOWN);
	assert_int_equal(out.current, NLC_UNKNOWN);
	cJSON_Delete(n);
}

/* TestMonitorNodeHealthUpdateNodeAndPodStatusWithLease: a renewed Lease is a heartbeat */
static void test_health_lease(void **st)
{
	(void)st;
	struct nlc_health saved = {.present = true,
	                           .probe = T(CREATED),
	                           .ready_transition = T(CREATED),
	                           .saved_ready = NLC_TRUE,
	                           .saved_hb = T(CREATED),
	                           .saved_tr = T(CREATED),
	                           .has_lease = true,
	                           .lease_renew = T(CREATED)};
	struct nlc_health_out out;
	cJSON *n = J(READY_NODE("True", CREATED, CREATED));
	struct nlc_health_in in = base_in(FAKE_NOW);
	in.lease_found = true;
	in.lease_renew = T("2015-01-01T12:09:59Z");
	assert_int_equal(nlc_node_health(&saved, n, &in, &out), 0);
	assert_false(out.timed_out);
	assert_int_equal(out.health.probe, T(FAKE_NOW));
	assert_int_equal(out.health.lease_renew, T("2015-01-01T12:09:59Z"));
	cJSON_Delete(n);
	/* the same Lease (not renewed): timed out */
	n = J(READY_NODE("True", CREATED, CREATED));
	in.lease_renew = T(CREATED);
	assert_int_equal(nlc_node_health(&saved, n, &in, &out), 0);
	assert_true(out.timed_out);
	assert_true(out.update_status);
	cJSON_Delete(n);
	/* a Lease seen for the first time counts as renewed */
	saved.has_lease = false;
	n = J(READY_NODE("True", CREATED, CREATED));
	assert_int_equal(nlc_node_health(&saved, n, &in, &out), 0);
	assert_false(out.timed_out);
	cJSON_Delete(n);
}

/* TestTryUpdateNodeHealth: a new heartbeat moves the probe; the transition time moves only
 * when the Ready condition's transition time changed */
static void test_health_heartbeat(void **st)
{
	(void)st;
	struct nlc_health saved = {.present = true,
	                           .probe = T(CREATED),
	                           .ready_transition = T(CREATED),
	                           .saved_ready = NLC_TRUE,
	                           .saved_hb = T(CREATED),
	                           .saved_tr = T(CREATED)};
	struct nlc_health_out out;
	struct nlc_health_in in = base_in(FAKE_NOW);
	cJSON *n = J(READY_NODE("True", "2015-01-01T12:09:50Z", CREATED));
	assert_int_equal(nlc_node_health(&saved, n, &in, &out), 0);
	assert_false(out.timed_out);
	assert_int_equal(out.health.probe, T(FAKE_NOW));
	assert_int_equal(out.health.ready_transition, T(CREATED));
	assert_int_equal(out.health.saved_hb, T("2015-01-01T12:09:50Z"));
	cJSON_Delete(n);
	n = J(READY_NODE("False", "2015-01-01T12:09:50Z", "2015-01-01T12:09:50Z"));
	assert_int_equal(nlc_node_health(&saved, n, &in, &out), 0);
	assert_int_equal(out.health.ready_transition, T(FAKE_NOW));
	assert_int_equal(out.observed, NLC_FALSE);
	assert_int_equal(out.current, NLC_FALSE);
	cJSON_Delete(n);
	/* no metadata: refused */
	n = J("{}");
	assert_int_equal(nlc_node_health(&saved, n, &in, &out), -EINVAL);
	cJSON_Delete(n);
}

/* ---- taints ---------------------------------------------------------------------------------- */

static bool has(const struct nlc_taint *l, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(l[i].key, key) && !strcmp(l[i].effect, "NoSchedule"))
			return true;
	return false;
}

/* TestTaintsNodeByCondition */
static void test_taints_by_condition(void **st)
{
	struct nlc_taint add[NLC_MAX_NOSCHED], del[NLC_MAX_NOSCHED];
	size_t na, nd;
	(void)st;
	cJSON *n = J("{\"spec\":{\"unschedulable\":true,\"taints\":[{\"key\":"
	             "\"node.kubernetes.io/disk-pressure\",\"effect\":\"NoSchedule\"},{\"key\":"
	             "\"node.kubernetes.io/unreachable\",\"effect\":\"NoExecute\"},{\"key\":\"x\","
	             "\"effect\":\"NoSchedule\"}]},\"status\":{\"conditions\":["
	             "{\"type\":\"Ready\",\"status\":\"Unknown\"},"
	             "{\"type\":\"MemoryPressure\",\"status\":\"True\"},"
	             "{\"type\":\"DiskPressure\",\"status\":\"False\"},"
	             "{\"type\":\"NetworkUnavailable\",\"status\":\"True\"},"
	             "{\"type\":\"PIDPressure\",\"status\":\"True\"}]}}");
	nlc_nosched_diff(n, add, &na, del, &nd);
	assert_int_equal(na, 5);
	assert_true(has(add, na, "node.kubernetes.io/unreachable"));
	assert_true(has(add, na, "node.kubernetes.io/memory-pressure"));
	assert_true(has(add, na, "node.kubernetes.io/network-unavailable"));
	assert_true(has(add, na, "node.kubernetes.io/pid-pressure"));
	assert_true(has(add, na, "node.kubernetes.io/unschedulable"));
	assert_int_equal(nd, 1); /* disk-pressure; "x" and the NoExecute one are not ours */
	assert_string_equal(del[0].key, "node.kubernetes.io/disk-pressure");
	cJSON_Delete(n);
	/* Ready False: not-ready; everything in place: nothing */
	n = J("{\"spec\":{\"taints\":[{\"key\":\"node.kubernetes.io/not-ready\",\"effect\":"
	      "\"NoSchedule\"}]},\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":"
	      "\"False\"}]}}");
	nlc_nosched_diff(n, add, &na, del, &nd);
	assert_int_equal(na, 0);
	assert_int_equal(nd, 0);
	cJSON_Delete(n);
	/* Ready True: the not-ready NoSchedule taint goes */
	n = J("{\"spec\":{\"taints\":[{\"key\":\"node.kubernetes.io/not-ready\",\"effect\":"
	      "\"NoSchedule\"}]},\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":"
	      "\"True\"}]}}");
	nlc_nosched_diff(n, add, &na, del, &nd);
	assert_int_equal(na, 0);
	assert_int_equal(nd, 1);
	cJSON_Delete(n);
}

/* TestSwapUnreachableNotReadyTaints: not-ready added with timeAdded, unreachable removed, in two
 * patches carrying the resourceVersion and the whole list */
static void test_swap_taints(void **st)
{
	struct nlc_taint nr = {NLC_TAINT_NOT_READY, "NoExecute"};
	struct nlc_taint ur = {NLC_TAINT_UNREACHABLE, "NoExecute"};
	char *p = NULL;
	(void)st;
	cJSON *n = J("{\"metadata\":{\"name\":\"node0\",\"resourceVersion\":\"42\"},\"spec\":{"
	             "\"taints\":[{\"key\":\"node.kubernetes.io/unreachable\",\"effect\":"
	             "\"NoExecute\",\"timeAdded\":\"2015-01-01T12:00:00Z\"},{\"key\":\"k\","
	             "\"value\":\"v\",\"effect\":\"NoSchedule\"}]}}");
	assert_int_equal(nlc_taints_patch(n, &nr, 1, NULL, 0, T(FAKE_NOW) + 5, &p), 1);
	assert_string_equal(
	        p, "{\"metadata\":{\"resourceVersion\":\"42\"},\"spec\":{\"taints\":[{\"key\":"
	           "\"node.kubernetes.io/unreachable\",\"effect\":\"NoExecute\",\"timeAdded\":"
	           "\"2015-01-01T12:00:00Z\"},{\"key\":\"k\",\"value\":\"v\",\"effect\":"
	           "\"NoSchedule\"},{\"key\":\"node.kubernetes.io/not-ready\",\"effect\":"
	           "\"NoExecute\",\"timeAdded\":\"" FAKE_NOW "\"}]}}");
	free(p);
	assert_int_equal(nlc_taints_patch(n, NULL, 0, &ur, 1, 0, &p), 1);
	assert_string_equal(p, "{\"metadata\":{\"resourceVersion\":\"42\"},\"spec\":{\"taints\":"
	                       "[{\"key\":\"k\",\"value\":\"v\",\"effect\":\"NoSchedule\"}]}}");
	free(p);
	/* an existing match is updated (a new timeAdded) */
	assert_int_equal(nlc_taints_patch(n, &ur, 1, NULL, 0, T(FAKE_NOW) + 5, &p), 1);
	assert_non_null(strstr(p, "\"timeAdded\":\"" FAKE_NOW "\""));
	assert_null(strstr(p, "12:00:00Z"));
	free(p);
	/* nothing to remove: no patch */
	assert_int_equal(nlc_taints_patch(n, NULL, 0, &nr, 1, 0, &p), 0);
	assert_null(p);
	cJSON_Delete(n);
	/* the last one removed: taints null */
	n = J("{\"metadata\":{\"resourceVersion\":\"7\"},\"spec\":{\"taints\":[{\"key\":"
	      "\"node.kubernetes.io/unreachable\",\"effect\":\"NoExecute\"}]}}");
	assert_int_equal(nlc_taints_patch(n, NULL, 0, &ur, 1, 0, &p), 1);
	assert_string_equal(p, "{\"metadata\":{\"resourceVersion\":\"7\"},\"spec\":{\"taints\":"
	                       "null}}");
	free(p);
	assert_true(nlc_taint_exists(n, NLC_TAINT_UNREACHABLE, "NoExecute"));
	assert_false(nlc_taint_exists(n, NLC_TAINT_UNREACHABLE, "NoSchedule"));
	cJSON_Delete(n);
}

/* TestApplyNoExecuteTaints / TestSwapUnreachableNotReadyTaints: what processTaintBaseEviction
 * does with a node on the Ready status it observed */
static void test_taint_base_eviction(void **st)
{
	struct nlc_tb_decision d;
	(void)st;
	cJSON *bare = J("{\"spec\":{}}");
	cJSON *unreach = J("{\"spec\":{\"taints\":[{\"key\":\"node.kubernetes.io/unreachable\","
	                   "\"effect\":\"NoExecute\"}]}}");
	cJSON *notready = J("{\"spec\":{\"taints\":[{\"key\":\"node.kubernetes.io/not-ready\","
	                    "\"effect\":\"NoExecute\"}]}}");
	/* not ready, untainted: queued (and out of the set first) */
	nlc_taint_base_eviction(bare, NLC_FALSE, &d);
	assert_int_equal(d.action, NLC_TB_QUEUE);
	assert_true(d.requeue);
	assert_string_equal(d.add.key, NLC_TAINT_NOT_READY);
	/* Unknown while holding not-ready: swapped at once */
	nlc_taint_base_eviction(notready, NLC_UNKNOWN, &d);
	assert_int_equal(d.action, NLC_TB_SWAP);
	assert_string_equal(d.add.key, NLC_TAINT_UNREACHABLE);
	assert_string_equal(d.del.key, NLC_TAINT_NOT_READY);
	assert_string_equal(d.add.effect, "NoExecute");
	/* False while holding unreachable: swapped the other way */
	nlc_taint_base_eviction(unreach, NLC_FALSE, &d);
	assert_int_equal(d.action, NLC_TB_SWAP);
	assert_string_equal(d.add.key, NLC_TAINT_NOT_READY);
	/* Unknown and already unreachable: queued, kept in the set (no second taint) */
	nlc_taint_base_eviction(unreach, NLC_UNKNOWN, &d);
	assert_int_equal(d.action, NLC_TB_QUEUE);
	assert_false(d.requeue);
	/* Ready: both taints off */
	nlc_taint_base_eviction(unreach, NLC_TRUE, &d);
	assert_int_equal(d.action, NLC_TB_REACHABLE);
	nlc_taint_base_eviction(bare, NLC_OTHER, &d);
	assert_int_equal(d.action, NLC_TB_NONE);
	cJSON_Delete(bare);
	cJSON_Delete(unreach);
	cJSON_Delete(notready);
}

/* ---- pods and labels ------------------------------------------------------------------------- */

static void test_mark_pod_not_ready(void **st)
{
	(void)st;
	cJSON *p = J("{\"status\":{\"conditions\":[{\"type\":\"Initialized\",\"status\":\"True\"},"
	             "{\"type\":\"Ready\",\"status\":\"True\",\"lastTransitionTime\":"
	             "\"" CREATED "\"}]}}");
	assert_int_equal(nlc_pod_mark_not_ready(p, T(FAKE_NOW)), 1);
	const cJSON *c = cJSON_GetArrayItem(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(p, "status"), "conditions"), 1);
	assert_string_equal(cstr(c, "status"), "False");
	assert_string_equal(cstr(c, "lastTransitionTime"), FAKE_NOW);
	/* already False: unchanged */
	assert_int_equal(nlc_pod_mark_not_ready(p, T(FAKE_NOW) + SEC), 0);
	assert_string_equal(cstr(c, "lastTransitionTime"), FAKE_NOW);
	cJSON_Delete(p);
	/* no Ready condition: untouched */
	p = J("{\"status\":{\"phase\":\"Pending\"}}");
	assert_int_equal(nlc_pod_mark_not_ready(p, T(FAKE_NOW)), 0);
	cJSON_Delete(p);
}

static void labels_are(const char *node, const char *want)
{
	cJSON *n = J(node);
	char *p = NULL;
	assert_int_equal(nlc_labels_patch(n, &p), want ? 1 : 0);
	if (want)
		assert_string_equal(p, want);
	else
		assert_null(p);
	free(p);
	cJSON_Delete(n);
}

/* TestReconcileNodeLabels */
static void test_reconcile_labels(void **st)
{
	(void)st;
	labels_are("{\"metadata\":{}}", NULL);
	labels_are("{\"metadata\":{\"labels\":{\"a\":\"b\"}}}", NULL);
	labels_are("{\"metadata\":{\"labels\":{\"kubernetes.io/os\":\"linux\"}}}",
	           "{\"metadata\":{\"labels\":{\"beta.kubernetes.io/os\":\"linux\"}}}");
	labels_are("{\"metadata\":{\"labels\":{\"kubernetes.io/os\":\"linux\","
	           "\"beta.kubernetes.io/os\":\"windows\",\"kubernetes.io/arch\":\"amd64\","
	           "\"beta.kubernetes.io/arch\":\"amd64\"}}}",
	           "{\"metadata\":{\"labels\":{\"beta.kubernetes.io/os\":\"linux\"}}}");
	labels_are("{\"metadata\":{\"labels\":{\"beta.kubernetes.io/os\":\"linux\"}}}", NULL);
	labels_are("{\"metadata\":{\"labels\":{\"kubernetes.io/arch\":\"arm64\"}}}",
	           "{\"metadata\":{\"labels\":{\"beta.kubernetes.io/arch\":\"arm64\"}}}");
}

/* ---- the health pass's workers (nlc_pool_run) ---------------------------------------------- */
#define POOL_MAX 1000
struct pool_fake {
	size_t n, workers;
	size_t writes[POOL_MAX]; /* each node's writes */
	bool lies[POOL_MAX];     /* start says > 0 but it has none */
	size_t sent[POOL_MAX];   /* writes of the node sent so far */
	size_t cursor[POOL_MAX];
	int started[POOL_MAX], finished[POOL_MAX];
	size_t next_start;
	size_t rounds, full_rounds, total;
	size_t max_active, active;
};

static int pool_start(void *ud, size_t i)
{
	struct pool_fake *f = ud;
	assert_int_equal(i, f->next_start++); /* in the nodes' order */
	f->started[i]++;
	if (f->writes[i] || f->lies[i]) {
		if (++f->active > f->max_active)
			f->max_active = f->active;
		return 1;
	}
	return 0;
}

static bool pool_next(void *ud, size_t i, size_t *ret)
{
	struct pool_fake *f = ud;
	assert_int_equal(f->started[i], 1);
	assert_int_equal(f->finished[i], 0);
	if (f->cursor[i] == f->writes[i])
		return false;
	*ret = f->cursor[i]++;
	return true;
}

static void pool_send(void *ud, const size_t *nodes, const size_t *writes, size_t n)
{
	struct pool_fake *f = ud;
	assert_true(n >= 1 && n <= f->workers); /* at most `workers` in flight */
	for (size_t j = 0; j < n; j++) {
		for (size_t k = 0; k < j; k++)
			assert_true(nodes[k] != nodes[j]);      /* one write per node in a round */
		assert_int_equal(writes[j], f->sent[nodes[j]]); /* a node's writes in order */
		f->sent[nodes[j]]++;
	}
	f->rounds++;
	f->total += n;
	if (n == f->workers)
		f->full_rounds++;
}

static void pool_finish(void *ud, size_t i)
{
	struct pool_fake *f = ud;
	assert_int_equal(f->started[i], 1);
	assert_int_equal(f->finished[i], 0);
	assert_int_equal(f->sent[i], f->writes[i]); /* after its last write */
	f->finished[i]++;
	if (f->writes[i] || f->lies[i])
		f->active--;
}

static void pool_check(struct pool_fake *f)
{
	const struct nlc_pool_ops ops = {
	        .start = pool_start, .next = pool_next, .send = pool_send, .finish = pool_finish};
	size_t want = 0;
	assert_int_equal(nlc_pool_run(f->n, f->workers, &ops, f), 0);
	for (size_t i = 0; i < f->n; i++) {
		assert_int_equal(f->started[i], 1);
		assert_int_equal(f->finished[i], 1);
		assert_int_equal(f->sent[i], f->writes[i]);
		want += f->writes[i];
	}
	assert_int_equal(f->total, want);
	assert_true(f->max_active <= f->workers);
}

static void test_pool(void **state)
{
	(void)state;
	static struct pool_fake f;

	/* the bench's pass: 1,000 nodes in 10 zones, the lost zone's nodes (every 10th) with 50
	 * pods each. Slots refill as nodes end, so the rounds stay full: 12 times 8 nodes in 50
	 * rounds of 8, then the last 4 nodes in 50 rounds of 4, as upstream's 8 workers (batches
	 * of 8 consecutive nodes would have had ~1 write in flight). */
	memset(&f, 0, sizeof(f));
	f.n = 1000;
	f.workers = NLC_UPDATE_WORKERS;
	for (size_t i = 0; i < f.n; i += 10)
		f.writes[i] = 50;
	pool_check(&f);
	assert_int_equal(f.total, 5000);
	assert_int_equal(f.rounds, 12 * 50 + 50);
	assert_int_equal(f.full_rounds, 12 * 50);
	assert_int_equal(f.max_active, NLC_UPDATE_WORKERS);

	/* uneven nodes, some with nothing left to write though start said so */
	memset(&f, 0, sizeof(f));
	f.n = 97;
	f.workers = 8;
	for (size_t i = 0; i < f.n; i++) {
		f.writes[i] = (i * 7) % 13;
		f.lies[i] = i % 5 == 0;
	}
	pool_check(&f);
	assert_true(f.rounds >= (f.total + 7) / 8);
	assert_true(f.rounds <= (f.total + 7) / 8 + 12); /* only the tail is not full */

	/* one worker: one write at a time, the nodes one after the other */
	memset(&f, 0, sizeof(f));
	f.n = 5;
	f.workers = 1;
	for (size_t i = 0; i < f.n; i++)
		f.writes[i] = i;
	pool_check(&f);
	assert_int_equal(f.rounds, 10);

	/* nothing to write, and no node */
	memset(&f, 0, sizeof(f));
	f.n = 20;
	f.workers = 8;
	pool_check(&f);
	assert_int_equal(f.rounds, 0);
	memset(&f, 0, sizeof(f));
	f.workers = 8;
	pool_check(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_add_node),
	        cmocka_unit_test(test_del_node),
	        cmocka_unit_test(test_try),
	        cmocka_unit_test(test_try_ordering),
	        cmocka_unit_test(test_try_removing_while_try),
	        cmocka_unit_test(test_swap_limiter),
	        cmocka_unit_test(test_bucket_rate),
	        cmocka_unit_test(test_try_rate_limited),
	        cmocka_unit_test(test_compute_zone_state),
	        cmocka_unit_test(test_reduced_qps),
	        cmocka_unit_test(test_zone_key),
	        cmocka_unit_test(test_excluded),
	        cmocka_unit_test(test_disruption_one_zone_down),
	        cmocka_unit_test(test_disruption_all_down),
	        cmocka_unit_test(test_disruption_partial),
	        cmocka_unit_test(test_disruption_zone_lifecycle),
	        cmocka_unit_test(test_health_never_posted),
	        cmocka_unit_test(test_health_stopped_posting),
	        cmocka_unit_test(test_health_already_unknown),
	        cmocka_unit_test(test_health_lease),
	        cmocka_unit_test(test_health_heartbeat),
	        cmocka_unit_test(test_taints_by_condition),
	        cmocka_unit_test(test_swap_taints),
	        cmocka_unit_test(test_taint_base_eviction),
	        cmocka_unit_test(test_mark_pod_not_ready),
	        cmocka_unit_test(test_reconcile_labels),
	        cmocka_unit_test(test_pool),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
