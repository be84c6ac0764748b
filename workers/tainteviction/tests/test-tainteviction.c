/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The taint eviction controller's decisions (workers/tainteviction/taint.h) with upstream's
 * taint_eviction_test.go (v1.37) as scenarios of processPodOnNode over a schedule:
 * TestFilterNoExecuteTaints, TestCreatePod, TestDeletePod (cancel), TestUpdatePod,
 * TestCreateNode, TestUpdateNode, TestUpdateNodeWithMultipleTaints,
 * TestUpdateNodeWithMultiplePods, TestGetMinTolerationTime, TestEventualConsistency (the
 * decisions it relies on); plus ToleratesTaint's operator rules, the schedule table (growth,
 * tombstones, per node), the DisruptionTarget patch (UpdatePodCondition's rules) and the
 * latency value upstream observes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/mman.h>
#include <unistd.h>

#include "workers/tainteviction/store.h"
#include "workers/tainteviction/taint.h"

#define SEC 1000000ll

/* a node with NoExecute taints testTaint<i>=test<i> for each index (0 ends the list) */
static void node_taints(struct te_taints *t, const int *idx)
{
	char json[2048];
	size_t n = (size_t)snprintf(json, sizeof(json), "{\"spec\":{\"taints\":[");
	for (const int *i = idx; *i; i++)
		n += (size_t)snprintf(
		        json + n, sizeof(json) - n,
		        "%s{\"key\":\"testTaint%d\",\"value\":\"test%d\","
		        "\"effect\":\"NoExecute\",\"timeAdded\":\"2026-01-01T00:00:00Z\"}",
		        i == idx ? "" : ",", *i, *i);
	snprintf(json + n, sizeof(json) - n, "]}}");
	assert_int_equal(te_node_noexec_taints(json, strlen(json), t), 0);
}

/* addToleration(pod, index, duration): duration < 0 = no tolerationSeconds */
static void pod_tol(struct te_tolerations *t, int idx, long long dur)
{
	char json[512];
	if (idx == 0)
		snprintf(json, sizeof(json), "{\"spec\":{\"nodeName\":\"node1\"}}");
	else if (dur < 0)
		snprintf(
		        json, sizeof(json),
		        "{\"spec\":{\"tolerations\":[{\"key\":\"testTaint%d\",\"value\":\"test%d\","
		        "\"effect\":\"NoExecute\"}]}}",
		        idx, idx);
	else
		snprintf(
		        json, sizeof(json),
		        "{\"spec\":{\"tolerations\":[{\"key\":\"testTaint%d\",\"value\":\"test%d\","
		        "\"effect\":\"NoExecute\",\"tolerationSeconds\":%lld}]}}",
		        idx, idx, dur);
	assert_int_equal(te_pod_tolerations(json, strlen(json), t), 0);
}

/* the outcome of one processPodOnNode against a schedule, applied as the worker applies it */
static enum te_action step(struct te_schedule *s, const char *key, int64_t now,
                           const struct te_taints *taints, const struct te_tolerations *tols,
                           bool *cancel_event)
{
	struct te_decision d;
	te_process_pod(te_schedule_get(s, key), now, taints, tols, &d);
	if (cancel_event)
		*cancel_event = d.cancel_event;
	if (d.action == TE_WAIT)
		assert_int_equal(te_schedule_put(s, key, "node1", &d.sched), 0);
	else if (d.action != TE_NOTHING)
		te_schedule_del(s, key);
	return d.action;
}

static void test_filter_noexecute(void **state)
{
	(void)state;
	const char *j = "{\"spec\":{\"taints\":[{\"key\":\"one\",\"value\":\"one\",\"effect\":"
	                "\"NoExecute\"},{\"key\":\"two\",\"value\":\"two\",\"effect\":"
	                "\"NoSchedule\"}]}}";
	struct te_taints t;
	assert_int_equal(te_node_noexec_taints(j, strlen(j), &t), 0);
	assert_int_equal(t.n, 1);
	assert_string_equal(t.v[0].key, "one");
	assert_null(t.v[0].time_added);
	te_taints_free(&t);
	/* no spec, no taints, bad input */
	assert_int_equal(te_node_noexec_taints("{}", 2, &t), 0);
	assert_int_equal(t.n, 0);
	assert_int_equal(te_node_noexec_taints("{", 1, &t), -EBADMSG);
	te_taints_free(&t);
	assert_int_equal(te_node_noexec_taints("[1]", 3, &t), -EPROTO);
	te_taints_free(&t);
	const char *odd = "{\"spec\":{\"taints\":[7,{\"effect\":\"NoExecute\"}]}}";
	assert_int_equal(te_node_noexec_taints(odd, strlen(odd), &t), 0);
	assert_int_equal(t.n, 1);
	assert_string_equal(t.v[0].key, "");
	te_taints_free(&t);
}

/* TestCreatePod: the pod's first processing against the node's taints */
static void test_create_pod(void **state)
{
	(void)state;
	static const int none[] = {0}, one[] = {1, 0};
	struct {
		const int *taints;
		int tol_idx;
		long long dur;
		enum te_action want;
	} c[] = {
	        {none, 0, 0, TE_CANCEL},    /* scheduled on untainted Node: nothing pending */
	        {one, 0, 0, TE_EVICT_NOW},  /* schedule on tainted Node */
	        {one, 1, 100, TE_WAIT},     /* finite toleration */
	        {one, 1, -1, TE_CANCEL},    /* infinite toleration */
	        {one, 2, -1, TE_EVICT_NOW}, /* infinite invalid toleration */
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct te_schedule *s;
		struct te_taints t;
		struct te_tolerations tol;
		bool ev = true;
		assert_int_equal(te_schedule_new(&s), 0);
		node_taints(&t, c[i].taints);
		pod_tol(&tol, c[i].tol_idx, c[i].dur);
		assert_int_equal(step(s, "default/pod1", 1000 * SEC, &t, &tol, &ev), c[i].want);
		assert_false(ev); /* nothing was pending */
		if (c[i].want == TE_WAIT) {
			const struct te_sched *x = te_schedule_get(s, "default/pod1");
			assert_non_null(x);
			assert_int_equal(x->created_at, 1000 * SEC);
			assert_int_equal(x->fire_at, 1100 * SEC);
		}
		te_taints_free(&t);
		te_tolerations_free(&tol);
		te_schedule_free(s);
	}
}

/* TestDeletePod / "Taint removed": a pending eviction is cancelled with its Event */
static void test_cancel(void **state)
{
	(void)state;
	static const int none[] = {0}, one[] = {1, 0};
	struct te_schedule *s;
	struct te_taints t, empty;
	struct te_tolerations tol;
	bool ev;

	assert_int_equal(te_schedule_new(&s), 0);
	node_taints(&t, one);
	node_taints(&empty, none);
	pod_tol(&tol, 1, 1);
	assert_int_equal(step(s, "default/pod1", 0 + SEC, &t, &tol, &ev), TE_WAIT);
	/* the taint goes: cancelled, with "Cancelling deletion" */
	assert_int_equal(step(s, "default/pod1", SEC + SEC / 2, &empty, &tol, &ev), TE_CANCEL);
	assert_true(ev);
	assert_null(te_schedule_get(s, "default/pod1"));
	/* after the toleration would have ended: nothing happens (no taint) */
	assert_int_equal(step(s, "default/pod1", 3 * SEC, &empty, &tol, &ev), TE_CANCEL);
	assert_false(ev);
	te_taints_free(&t);
	te_taints_free(&empty);
	te_tolerations_free(&tol);
	te_schedule_free(s);
}

/* TestUpdatePod */
static void test_update_pod(void **state)
{
	(void)state;
	static const int one[] = {1, 0};
	struct te_schedule *s;
	struct te_taints t;
	struct te_tolerations none, forever, t100, t1;
	bool ev;

	assert_int_equal(te_schedule_new(&s), 0);
	node_taints(&t, one);
	pod_tol(&none, 0, 0);
	pod_tol(&forever, 1, -1);
	pod_tol(&t100, 1, 100);
	pod_tol(&t1, 1, 1);
	/* scheduling onto tainted Node: evicted; with toleration: not */
	assert_int_equal(step(s, "ns/a", 10 * SEC, &t, &none, &ev), TE_EVICT_NOW);
	assert_int_equal(step(s, "ns/b", 10 * SEC, &t, &forever, &ev), TE_CANCEL);
	/* removing toleration: the pending eviction is cancelled (Event) and the pod evicted */
	assert_int_equal(step(s, "ns/c", 10 * SEC, &t, &t100, &ev), TE_WAIT);
	assert_int_equal(step(s, "ns/c", 11 * SEC, &t, &none, &ev), TE_EVICT_NOW);
	assert_true(ev);
	/* lengthening toleration shouldn't work: the first time holds */
	assert_int_equal(step(s, "ns/d", 10 * SEC, &t, &t1, &ev), TE_WAIT);
	assert_int_equal(step(s, "ns/d", 10 * SEC + 500000, &t, &t100, &ev), TE_WAIT);
	assert_int_equal(te_schedule_get(s, "ns/d")->fire_at, 11 * SEC);
	assert_int_equal(step(s, "ns/d", 11 * SEC, &t, &t100, &ev), TE_EVICT_NOW);
	assert_false(ev);
	/* shortening neither: upstream keeps the pending one */
	assert_int_equal(step(s, "ns/e", 10 * SEC, &t, &t100, &ev), TE_WAIT);
	assert_int_equal(step(s, "ns/e", 12 * SEC, &t, &t1, &ev), TE_WAIT);
	assert_int_equal(te_schedule_get(s, "ns/e")->fire_at, 110 * SEC);
	/* never early: one microsecond before the time, it waits */
	assert_int_equal(step(s, "ns/e", 110 * SEC - 1, &t, &t100, &ev), TE_WAIT);
	assert_int_equal(step(s, "ns/e", 110 * SEC, &t, &t100, &ev), TE_EVICT_NOW);
	te_taints_free(&t);
	te_tolerations_free(&none);
	te_tolerations_free(&forever);
	te_tolerations_free(&t100);
	te_tolerations_free(&t1);
	te_schedule_free(s);
}

/* TestCreateNode / TestUpdateNode */
static void test_update_node(void **state)
{
	(void)state;
	static const int one[] = {1, 0}, two[] = {1, 2, 0};
	struct te_schedule *s;
	struct te_taints t1, t12;
	struct te_tolerations none, tol100, multi;
	bool ev;

	assert_int_equal(te_schedule_new(&s), 0);
	node_taints(&t1, one);
	node_taints(&t12, two);
	pod_tol(&none, 0, 0);
	pod_tol(&tol100, 1, 100);
	/* Added taint: deleted; Added tolerated taint: not; Only one added taint tolerated: deleted
	 */
	assert_int_equal(step(s, "d/p1", SEC, &t1, &none, &ev), TE_EVICT_NOW);
	assert_int_equal(step(s, "d/p2", SEC, &t1, &tol100, &ev), TE_WAIT);
	assert_int_equal(step(s, "d/p3", SEC, &t12, &tol100, &ev), TE_EVICT_NOW);
	/* Pod with multiple tolerations are evicted when first one runs out */
	const char *j = "{\"spec\":{\"tolerations\":["
	                "{\"key\":\"testTaint1\",\"value\":\"test1\",\"effect\":\"NoExecute\","
	                "\"tolerationSeconds\":1},"
	                "{\"key\":\"testTaint2\",\"value\":\"test2\",\"effect\":\"NoExecute\","
	                "\"tolerationSeconds\":100}]}}";
	assert_int_equal(te_pod_tolerations(j, strlen(j), &multi), 0);
	assert_int_equal(step(s, "d/p4", SEC, &t12, &multi, &ev), TE_WAIT);
	assert_int_equal(te_schedule_get(s, "d/p4")->fire_at, 2 * SEC);
	assert_int_equal(step(s, "d/p4", 2 * SEC, &t12, &multi, &ev), TE_EVICT_NOW);
	te_taints_free(&t1);
	te_taints_free(&t12);
	te_tolerations_free(&none);
	te_tolerations_free(&tol100);
	te_tolerations_free(&multi);
	te_schedule_free(s);
}

/* TestUpdateNodeWithMultipleTaints */
static void test_multiple_taints(void **state)
{
	(void)state;
	static const int none[] = {0}, one[] = {1, 0}, two[] = {1, 2, 0};
	struct te_schedule *s;
	struct te_taints t0, t1, t12;
	struct te_tolerations tol;
	bool ev;
	const char *j = "{\"spec\":{\"tolerations\":["
	                "{\"key\":\"testTaint1\",\"operator\":\"Exists\",\"effect\":\"NoExecute\"},"
	                "{\"key\":\"testTaint2\",\"operator\":\"Exists\",\"effect\":\"NoExecute\","
	                "\"tolerationSeconds\":60}]}}";

	assert_int_equal(te_schedule_new(&s), 0);
	node_taints(&t0, none);
	node_taints(&t1, one);
	node_taints(&t12, two);
	assert_int_equal(te_pod_tolerations(j, strlen(j), &tol), 0);
	step(s, "d/pod1", SEC, &t0, &tol, &ev);
	assert_null(te_schedule_get(s, "d/pod1")); /* no taint */
	step(s, "d/pod1", 2 * SEC, &t1, &tol, &ev);
	assert_null(te_schedule_get(s, "d/pod1")); /* permanently tolerated */
	assert_int_equal(step(s, "d/pod1", 3 * SEC, &t12, &tol, &ev), TE_WAIT);
	assert_non_null(te_schedule_get(s, "d/pod1")); /* temporarily tolerated */
	assert_int_equal(te_schedule_get(s, "d/pod1")->fire_at, 63 * SEC);
	assert_int_equal(step(s, "d/pod1", 4 * SEC, &t1, &tol, &ev), TE_CANCEL);
	assert_true(ev);
	assert_null(te_schedule_get(s, "d/pod1"));
	te_taints_free(&t0);
	te_taints_free(&t1);
	te_taints_free(&t12);
	te_tolerations_free(&tol);
	te_schedule_free(s);
}

/* TestUpdateNodeWithMultiplePods: pod1 at once, pod2 after 1 s, pod3 never; with a second
 * taint all three at once */
static void test_multiple_pods(void **state)
{
	(void)state;
	static const int one[] = {1, 0}, two[] = {1, 2, 0};
	struct te_taints t1, t12;
	struct te_tolerations p1, p2, p3;

	node_taints(&t1, one);
	node_taints(&t12, two);
	pod_tol(&p1, 0, 0);
	pod_tol(&p2, 1, 1);
	pod_tol(&p3, 1, -1);
	for (int round = 0; round < 2; round++) {
		const struct te_taints *t = round ? &t12 : &t1;
		struct te_schedule *s;
		assert_int_equal(te_schedule_new(&s), 0);
		assert_int_equal(step(s, "d/pod1", 5 * SEC, t, &p1, NULL), TE_EVICT_NOW);
		assert_int_equal(step(s, "d/pod2", 5 * SEC, t, &p2, NULL),
		                 round ? TE_EVICT_NOW : TE_WAIT);
		assert_int_equal(step(s, "d/pod3", 5 * SEC, t, &p3, NULL),
		                 round ? TE_EVICT_NOW : TE_CANCEL);
		if (!round) {
			assert_int_equal(te_schedule_next_on_node(s, "node1"), 6 * SEC);
			assert_int_equal(step(s, "d/pod2", 6 * SEC, t, &p2, NULL), TE_EVICT_NOW);
			assert_int_equal(te_schedule_next_on_node(s, "node1"), 0);
		}
		te_schedule_free(s);
	}
	te_taints_free(&t1);
	te_taints_free(&t12);
	te_tolerations_free(&p1);
	te_tolerations_free(&p2);
	te_tolerations_free(&p3);
}

/* TestGetMinTolerationTime */
static void test_min_toleration(void **state)
{
	(void)state;
	struct te_toleration nil = {0}, one = {.has_seconds = true, .seconds = 1},
	                     two = {.has_seconds = true, .seconds = 2},
	                     zero = {.has_seconds = true, .seconds = 0},
	                     neg = {.has_seconds = true, .seconds = -5};
	const struct te_toleration *a[] = {&nil}, *b[] = {&one, &two}, *c[] = {&one, &nil},
	                           *d[] = {&nil, &one}, *e[] = {&two, &zero}, *f[] = {&neg};
	assert_int_equal(te_min_toleration_seconds(NULL, 0), 0);
	assert_int_equal(te_min_toleration_seconds(a, 1), -1);
	assert_int_equal(te_min_toleration_seconds(b, 2), 1);
	assert_int_equal(te_min_toleration_seconds(c, 2), 1);
	assert_int_equal(te_min_toleration_seconds(d, 2), 1);
	assert_int_equal(te_min_toleration_seconds(e, 2), 0);
	assert_int_equal(te_min_toleration_seconds(f, 1), 0);
}

/* TestEventualConsistency: a pod that reaches a tainted node later (its own update) gets the
 * same decision as the ones found by the node's update */
static void test_eventual_consistency(void **state)
{
	(void)state;
	static const int one[] = {1, 0};
	struct te_schedule *s;
	struct te_taints t;
	struct te_tolerations none, tol;

	assert_int_equal(te_schedule_new(&s), 0);
	node_taints(&t, one);
	pod_tol(&none, 0, 0);
	pod_tol(&tol, 1, 100);
	assert_int_equal(step(s, "d/pod1", SEC, &t, &none, NULL), TE_EVICT_NOW);
	assert_int_equal(step(s, "d/pod2", 2 * SEC, &t, &none, NULL), TE_EVICT_NOW);
	assert_int_equal(step(s, "d/pod3", 2 * SEC, &t, &tol, NULL), TE_WAIT);
	assert_int_equal(step(s, "d/pod3", 102 * SEC, &t, &tol, NULL), TE_EVICT_NOW);
	te_taints_free(&t);
	te_tolerations_free(&none);
	te_tolerations_free(&tol);
	te_schedule_free(s);
}

/* a zero or negative tolerationSeconds evicts at once; a pending eviction created at the same
 * instant is replaced (upstream's "equal start" branch) */
static void test_edges(void **state)
{
	(void)state;
	static const int one[] = {1, 0};
	struct te_taints t;
	struct te_tolerations z, tol;
	struct te_decision d;
	struct te_sched cur = {.created_at = 5 * SEC, .fire_at = 50 * SEC};

	node_taints(&t, one);
	pod_tol(&z, 1, 0);
	pod_tol(&tol, 1, 10);
	te_process_pod(NULL, SEC, &t, &z, &d);
	assert_int_equal(d.action, TE_EVICT_NOW);
	te_process_pod(&cur, 5 * SEC, &t, &tol, &d);
	assert_int_equal(d.action, TE_WAIT);
	assert_true(d.cancel_event);
	assert_int_equal(d.sched.created_at, 5 * SEC);
	assert_int_equal(d.sched.fire_at, 15 * SEC);
	/* an enormous tolerationSeconds does not overflow */
	struct te_tolerations big;
	pod_tol(&big, 1, 9000000000000000000ll);
	te_process_pod(NULL, SEC, &t, &big, &d);
	assert_int_equal(d.action, TE_WAIT);
	assert_true(d.sched.fire_at > SEC);
	te_taints_free(&t);
	te_tolerations_free(&z);
	te_tolerations_free(&tol);
	te_tolerations_free(&big);
}

/* ToleratesTaint */
static void test_tolerates(void **state)
{
	(void)state;
	struct te_taint taint = {.key = "k", .value = "v", .effect = "NoExecute"};
	struct te_toleration c[] = {
	        {.key = "k", .op = "Equal", .value = "v", .effect = "NoExecute"},
	        {.key = "k", .op = "", .value = "v", .effect = ""},
	        {.key = "", .op = "Exists", .value = "", .effect = ""},
	        {.key = "k", .op = "Exists", .value = "", .effect = "NoExecute"},
	        {.key = "k", .op = "Equal", .value = "w", .effect = "NoExecute"},
	        {.key = "k", .op = "Exists", .value = "", .effect = "NoSchedule"},
	        {.key = "j", .op = "Exists", .value = "", .effect = ""},
	        {.key = "k", .op = "Gt", .value = "1", .effect = ""}, /* gate off */
	        {.key = "k", .op = "Bogus", .value = "v", .effect = ""},
	};
	bool want[] = {true, true, true, true, false, false, false, false, false};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		assert_int_equal(te_tolerates(&c[i], &taint), want[i]);
}

static void test_taints_equal(void **state)
{
	(void)state;
	static const int one[] = {1, 0}, two[] = {1, 2, 0};
	struct te_taints a, b, c;
	node_taints(&a, one);
	node_taints(&b, one);
	node_taints(&c, two);
	assert_true(te_taints_equal(&a, &b));
	assert_false(te_taints_equal(&a, &c));
	free(b.v[0].time_added);
	b.v[0].time_added = NULL;
	assert_false(te_taints_equal(&a, &b));
	te_taints_free(&a);
	te_taints_free(&b);
	te_taints_free(&c);
}

static void test_schedule(void **state)
{
	(void)state;
	struct te_schedule *s;
	char key[64], **keys;
	struct te_sched v = {.created_at = 1, .fire_at = 2};

	assert_int_equal(te_schedule_new(&s), 0);
	for (int i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "ns/pod-%d", i);
		v.fire_at = 1000 + i;
		assert_int_equal(te_schedule_put(s, key, i % 2 ? "odd" : "even", &v), 0);
	}
	assert_int_equal(te_schedule_len(s), 5000);
	for (int i = 0; i < 5000; i += 2) {
		snprintf(key, sizeof(key), "ns/pod-%d", i);
		assert_true(te_schedule_del(s, key));
		assert_false(te_schedule_del(s, key));
	}
	assert_int_equal(te_schedule_len(s), 2500);
	assert_int_equal(te_schedule_keys_on_node(s, "even", &keys), 0);
	te_keys_free(keys);
	assert_int_equal(te_schedule_keys_on_node(s, "odd", &keys), 2500);
	te_keys_free(keys);
	assert_int_equal(te_schedule_next_on_node(s, "odd"), 1001);
	assert_int_equal(te_schedule_next_on_node(s, "even"), 0);
	/* reuse after tombstones, replace keeps one entry */
	for (int r = 0; r < 3; r++)
		for (int i = 0; i < 5000; i += 2) {
			snprintf(key, sizeof(key), "ns/pod-%d", i);
			assert_int_equal(te_schedule_put(s, key, "even", &v), 0);
			assert_true(te_schedule_del(s, key));
		}
	assert_int_equal(te_schedule_len(s), 2500);
	assert_non_null(te_schedule_get(s, "ns/pod-1"));
	assert_null(te_schedule_get(s, "ns/pod-0"));
	te_schedule_free(s);
}

static void test_condition_patch(void **state)
{
	(void)state;
	char *body = NULL;
	const char *fresh = "{\"metadata\":{\"uid\":\"u1\",\"generation\":3},\"status\":{}}";
	assert_int_equal(te_condition_patch(fresh, strlen(fresh), 1767225600000000000ll, &body), 1);
	assert_non_null(strstr(body, "\"uid\":\"u1\""));
	assert_non_null(strstr(body, "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\""));
	assert_non_null(strstr(body, "\"observedGeneration\":3"));
	assert_non_null(strstr(body, "\"reason\":\"DeletionByTaintManager\""));
	assert_non_null(
	        strstr(body, "\"message\":\"Taint manager: deleting due to NoExecute taint\""));
	assert_non_null(strstr(body, "\"type\":\"DisruptionTarget\""));
	free(body);
	/* already so: no patch */
	const char *same =
	        "{\"metadata\":{\"uid\":\"u1\"},\"status\":{\"conditions\":[{\"type\":"
	        "\"DisruptionTarget\",\"status\":\"True\",\"reason\":"
	        "\"DeletionByTaintManager\",\"message\":\"Taint manager: deleting due to "
	        "NoExecute taint\",\"lastTransitionTime\":\"2025-01-01T00:00:00Z\"}]}}";
	assert_int_equal(te_condition_patch(same, strlen(same), 5, &body), 0);
	assert_null(body);
	/* another reason, same status: rewritten, keeping its transition time */
	const char *other = "{\"metadata\":{\"uid\":\"u1\"},\"status\":{\"conditions\":[{\"type\":"
	                    "\"DisruptionTarget\",\"status\":\"True\",\"reason\":"
	                    "\"EvictionByEvictionAPI\",\"lastTransitionTime\":"
	                    "\"2025-01-01T00:00:00Z\"}]}}";
	assert_int_equal(te_condition_patch(other, strlen(other), 5, &body), 1);
	assert_non_null(strstr(body, "\"lastTransitionTime\":\"2025-01-01T00:00:00Z\""));
	assert_null(strstr(body, "observedGeneration"));
	free(body);
	/* status False: a new transition time */
	const char *f = "{\"metadata\":{\"uid\":\"u1\"},\"status\":{\"conditions\":[{\"type\":"
	                "\"DisruptionTarget\",\"status\":\"False\",\"lastTransitionTime\":"
	                "\"2025-01-01T00:00:00Z\"}]}}";
	assert_int_equal(te_condition_patch(f, strlen(f), 1767225600000000000ll, &body), 1);
	assert_non_null(strstr(body, "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\""));
	free(body);
	assert_int_equal(te_condition_patch("nope", 4, 5, &body), -EBADMSG);
	assert_int_equal(te_condition_patch("3", 1, 5, &body), -EPROTO);
}

static void test_latency(void **state)
{
	(void)state;
	/* 10 ms late: 1e7 ns * 1e9 */
	assert_true(te_latency_observed(10000) == 1e16);
	/* past ~9.2 s the int64 product wraps, as in Go */
	double v = te_latency_observed(10 * SEC);
	assert_true(v != 1e19);
	assert_true(v == (double)(int64_t)((uint64_t)10000000000ull * 1000000000ull));
}

struct seen {
	int n;
	char key[8][64];
	struct te_sched v[8];
};

static int collect(const char *key, const char *node, const struct te_sched *v, void *ud)
{
	struct seen *s = ud;
	assert_string_equal(node, "node1");
	assert_true(s->n < 8);
	snprintf(s->key[s->n], sizeof(s->key[0]), "%s", key);
	s->v[s->n++] = *v;
	return 0;
}

/* the store: what a worker wrote is what the next one reads back; a slot half written when the
 * writer died is dropped; full, bad layout */
static void test_store(void **state)
{
	(void)state;
	int fd = te_store_memfd_create(3);
	struct te_store *st;
	struct seen seen = {0};
	struct te_sched a = {.created_at = 1, .fire_at = 10}, b = {.created_at = 2, .fire_at = 20},
	                c = {.created_at = 3, .fire_at = 30}, d = {.created_at = 4, .fire_at = 40};

	assert_true(fd >= 0);
	assert_int_equal(te_store_attach(fd, collect, &seen, &st), 0);
	assert_int_equal(seen.n, 0);
	assert_int_equal(te_store_put(st, "ns/a", "node1", &a), 0);
	assert_int_equal(te_store_put(st, "ns/b", "node1", &b), 0);
	assert_int_equal(te_store_put(st, "ns/c", "node1", &c), 0);
	assert_int_equal(a.slot, 1);
	assert_int_equal(c.slot, 3);
	assert_int_equal(te_store_put(st, "ns/d", "node1", &d), -ENOSPC);
	assert_int_equal(d.slot, 0);
	te_store_del(st, b.slot);
	te_store_del(st, b.slot); /* twice: no double free */
	assert_int_equal(te_store_used(st), 2);
	a.fire_at = 11; /* rewritten in place */
	assert_int_equal(te_store_put(st, "ns/a", "node1", &a), 0);
	assert_int_equal(a.slot, 1);
	te_store_detach(st); /* the worker dies */

	assert_int_equal(te_store_attach(fd, collect, &seen, &st), 0);
	assert_int_equal(seen.n, 2);
	assert_string_equal(seen.key[0], "ns/a");
	assert_int_equal(seen.v[0].created_at, 1);
	assert_int_equal(seen.v[0].fire_at, 11);
	assert_int_equal(seen.v[0].slot, 1);
	assert_string_equal(seen.key[1], "ns/c");
	assert_int_equal(seen.v[1].fire_at, 30);
	/* the freed slot is reused first */
	assert_int_equal(te_store_put(st, "ns/d", "node1", &d), 0);
	assert_int_equal(d.slot, 2);
	te_store_detach(st);

	/* a writer killed between WRITING and LIVE: the slot's state word left at WRITING */
	uint32_t hdr[4];
	assert_int_equal(pread(fd, hdr, sizeof(hdr), 0), sizeof(hdr));
	uint32_t writing = 1;
	assert_int_equal(pwrite(fd, &writing, 4, TE_STORE_HDR + (off_t)hdr[2] * 2), 4); /* slot 3 */
	memset(&seen, 0, sizeof(seen));
	assert_int_equal(te_store_attach(fd, collect, &seen, &st), 0);
	assert_int_equal(seen.n, 2); /* a and d; c dropped */
	assert_string_equal(seen.key[1], "ns/d");
	assert_int_equal(te_store_used(st), 2);
	struct te_sched e = {.created_at = 5, .fire_at = 50};
	assert_int_equal(te_store_put(st, "ns/e", "node1", &e), 0);
	assert_int_equal(e.slot, 3);
	/* too long */
	char longkey[TE_STORE_KEY_MAX + 8];
	memset(longkey, 'k', sizeof(longkey) - 1);
	longkey[sizeof(longkey) - 1] = 0;
	struct te_sched f = {0};
	assert_int_equal(te_store_put(st, longkey, "node1", &f), -EINVAL);
	te_store_detach(st);

	/* another layout is refused */
	uint32_t bad = 0xdeadbeef;
	assert_int_equal(pwrite(fd, &bad, 4, 0), 4);
	assert_int_equal(te_store_attach(fd, collect, &seen, &st), -EPROTO);
	assert_null(st);
	close(fd);
}

/* ---- many evictions at once (te_ev_*) ------------------------------------------------------ */

static void test_ev_advance(void **state)
{
	(void)state;
	struct te_ev e = {0};
	te_ev_advance(&e, 1); /* the condition changes: PATCH */
	assert_int_equal(e.step, TE_EV_PATCH);
	te_ev_advance(&e, 0);
	assert_int_equal(e.step, TE_EV_DELETE);
	te_ev_advance(&e, 0);
	assert_int_equal(e.step, TE_EV_DONE);
	te_ev_advance(&e, -EIO); /* a finished eviction stays so */
	assert_int_equal(e.step, TE_EV_DONE);

	e = (struct te_ev){0};
	te_ev_advance(&e, 0); /* already so: no PATCH */
	assert_int_equal(e.step, TE_EV_DELETE);
	te_ev_advance(&e, -ENOENT); /* the attempt failed: GET again after the pause */
	assert_int_equal(e.step, TE_EV_GET);
	assert_true(e.retry);
	assert_int_equal(e.attempts, 1);
	size_t idx[4];
	assert_int_equal(te_ev_pick(&e, 1, TE_EV_GET, 4, idx), 0); /* waits for the pause */
	assert_int_equal(te_ev_retry_due(&e, 1), 1);
	assert_int_equal(te_ev_pick(&e, 1, TE_EV_GET, 4, idx), 1);
	for (int i = 1; i < TE_DELETE_RETRIES; i++)
		te_ev_advance(&e, -EIO), te_ev_retry_due(&e, 1);
	assert_int_equal(e.step, TE_EV_FAILED);
	assert_int_equal(e.attempts, TE_DELETE_RETRIES);
	assert_int_equal(e.err, -EIO);

	e = (struct te_ev){.step = TE_EV_PATCH};
	te_ev_advance(&e, -ENOLCK); /* not the leader: no retry */
	assert_int_equal(e.step, TE_EV_FAILED);
	assert_int_equal(e.attempts, 1);
}

/* a fake apiserver for te_ev_run: per pod, what each of its requests answers */
#define EV_N 300
struct ev_fake {
	char log[EV_N][64]; /* the pod's requests in order: G P D, lower case when it failed */
	size_t len[EV_N];
	int deleted[EV_N]; /* successful DELETEs */
	int done[EV_N];    /* done() calls */
	int gets_failed[EV_N];
	int sends, pauses, max_k, sends_after_stop;
	bool stopped;
	int nolck_pod; /* -1: none */
};

static int ev_answer(struct ev_fake *f, size_t i, enum te_ev_step st)
{
	if (st == TE_EV_GET) {
		if (i % 11 == 0) /* never readable: fails every attempt */
			return -EIO;
		if (i % 13 == 0 && f->gets_failed[i]++ < 2) /* fails twice, then works */
			return -ECONNRESET;
		return i % 3 == 0; /* every third pod's condition changes */
	}
	if (st == TE_EV_DELETE) {
		if ((int)i == f->nolck_pod)
			return -ENOLCK;
		if (i % 7 == 0 && f->deleted[i] == 0 && strchr(f->log[i], 'd') == NULL)
			return -EIO; /* the first DELETE fails */
	}
	return 0;
}

static int ev_send(void *ud, enum te_ev_step st, const size_t *idx, size_t k, int *results)
{
	struct ev_fake *f = ud;
	bool seen[EV_N] = {false};
	f->sends++;
	if (f->stopped)
		f->sends_after_stop++;
	if ((int)k > f->max_k)
		f->max_k = (int)k;
	assert_true(k >= 1 && k <= TE_EVICT_INFLIGHT);
	for (size_t j = 0; j < k; j++) {
		size_t i = idx[j];
		assert_true(i < EV_N);
		assert_false(seen[i]); /* a pod once in a group */
		seen[i] = true;
		assert_int_equal(f->done[i], 0); /* never after its end */
		int r = ev_answer(f, i, st);
		char c = "GPD"[st];
		f->log[i][f->len[i]++] = r < 0 ? (char)(c - 'A' + 'a') : c;
		assert_true(f->len[i] < sizeof(f->log[i]));
		if (st == TE_EV_DELETE && r == 0)
			f->deleted[i]++;
		if (r == -ENOLCK)
			f->stopped = true;
		results[j] = r;
	}
	return 0;
}

static void ev_done(void *ud, size_t i)
{
	struct ev_fake *f = ud;
	f->done[i]++;
}

static void ev_pause(void *ud)
{
	struct ev_fake *f = ud;
	f->pauses++;
}

/* each attempt is GET, PATCH only when the GET said so, DELETE, cut at its first failure */
static void assert_attempts_in_order(const char *log, bool patch)
{
	const char *p = log;
	while (*p) {
		assert_true(*p == 'G' || *p == 'g');
		if (*p++ == 'g')
			continue; /* the attempt ended */
		if (patch) {
			assert_true(*p == 'P' || *p == 'p');
			if (*p++ == 'p')
				continue;
		}
		assert_true(*p == 'D' || *p == 'd');
		if (*p++ == 'D')
			assert_int_equal(*p, '\0'); /* nothing after the DELETE that worked */
	}
}

static void test_ev_run(void **state)
{
	(void)state;
	static struct ev_fake f;
	static struct te_ev ev[EV_N];
	memset(&f, 0, sizeof(f));
	memset(ev, 0, sizeof(ev));
	f.nolck_pod = -1;
	const struct te_ev_ops ops = {.send = ev_send, .done = ev_done, .pause = ev_pause};

	assert_int_equal(te_ev_run(ev, EV_N, &ops, &f), 0);
	assert_int_equal(f.max_k, TE_EVICT_INFLIGHT); /* many in flight, never more */
	for (size_t i = 0; i < EV_N; i++) {
		f.log[i][f.len[i]] = '\0';
		assert_int_equal(f.done[i], 1);
		assert_attempts_in_order(f.log[i], i % 3 == 0);
		if (i % 11 == 0) { /* every attempt failed: never deleted */
			assert_int_equal(ev[i].step, TE_EV_FAILED);
			assert_int_equal(f.deleted[i], 0);
			assert_int_equal(f.len[i], TE_DELETE_RETRIES);
		} else { /* deleted exactly once */
			assert_int_equal(ev[i].step, TE_EV_DONE);
			assert_int_equal(f.deleted[i], 1);
		}
	}
	assert_string_equal(f.log[7], "GdGD");    /* the first DELETE failed, then a new GET */
	assert_string_equal(f.log[21], "GPdGPD"); /* so too with the condition */
	assert_string_equal(f.log[26], "ggGD");
	assert_string_equal(f.log[1], "GD");
	/* one pause before each round of retries: attempts 2..5 of the never readable pods */
	assert_int_equal(f.pauses, TE_DELETE_RETRIES - 1);

	/* not the leader any more: the round ends and nothing more is sent */
	memset(&f, 0, sizeof(f));
	memset(ev, 0, sizeof(ev));
	f.nolck_pod = 5;
	assert_int_equal(te_ev_run(ev, EV_N, &ops, &f), -ENOLCK);
	assert_int_equal(ev[5].step, TE_EV_FAILED);
	assert_int_equal(f.sends_after_stop, 0);
	assert_int_equal(f.pauses, 0);
	for (size_t i = 0; i < EV_N; i++)
		assert_true(f.deleted[i] <= 1);

	/* nothing to evict */
	memset(&f, 0, sizeof(f));
	assert_int_equal(te_ev_run(ev, 0, &ops, &f), 0);
	assert_int_equal(f.sends, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_filter_noexecute),
	        cmocka_unit_test(test_create_pod),
	        cmocka_unit_test(test_cancel),
	        cmocka_unit_test(test_update_pod),
	        cmocka_unit_test(test_update_node),
	        cmocka_unit_test(test_multiple_taints),
	        cmocka_unit_test(test_multiple_pods),
	        cmocka_unit_test(test_min_toleration),
	        cmocka_unit_test(test_eventual_consistency),
	        cmocka_unit_test(test_edges),
	        cmocka_unit_test(test_tolerates),
	        cmocka_unit_test(test_taints_equal),
	        cmocka_unit_test(test_schedule),
	        cmocka_unit_test(test_condition_patch),
	        cmocka_unit_test(test_latency),
	        cmocka_unit_test(test_store),
	        cmocka_unit_test(test_ev_advance),
	        cmocka_unit_test(test_ev_run),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
