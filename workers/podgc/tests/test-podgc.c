/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pod garbage collector's pure decisions (workers/podgc/gc.h) against the cases of upstream's
 * pkg/controller/podgc/gc_controller_test.go (v1.37: TestGCTerminated, TestGCOrphaned,
 * TestGCUnscheduledTerminating, TestGCTerminating, TestGCInspectingPatchedPodBeforeDeletion),
 * read for their facts; and the declared counters as lib/ctlmetrics renders them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workers/podgc/gc.h"
#include "lib/ctlmetrics.h"

#define H        3600ll * 1000000000ll
#define SEC      1000000ull
#define DELETING 1 /* a deletionTimestamp */

static struct pgc_pod pod(const char *name, const char *node, enum kube_pod_phase phase)
{
	return (struct pgc_pod){.ns = "default",
	                        .name = name,
	                        .uid = name,
	                        .node_name = node ? node : "",
	                        .phase = phase,
	                        .generation = 1};
}

/* The names of pods[idx[0..n)], comma-separated, in that order. */
static const char *names(const struct pgc_pod *pods, const size_t *idx, size_t n)
{
	static char buf[512];
	size_t l = 0;

	buf[0] = 0;
	for (size_t i = 0; i < n; i++)
		l += (size_t)snprintf(buf + l, sizeof(buf) - l, "%s%s", i ? "," : "",
		                      pods[idx[i]].name);
	return buf;
}

/* ---- TestGCTerminated ------------------------------------------------------------------------ */

struct term_case {
	const char *name;
	struct {
		const char *name;
		enum kube_pod_phase phase;
	} pods[4];
	int64_t threshold;
	const char *deleted; /* in deletion order */
	const char *evicted; /* the pod with status.reason Evicted */
};

static void test_terminated(void **state)
{
	static const struct term_case cases[] = {
	        {"delete a (Failed) and b (Succeeded)",
	         {{"a", KUBE_POD_FAILED}, {"b", KUBE_POD_SUCCEEDED}, {"c", KUBE_POD_FAILED}},
	         1,
	         "a,b",
	         NULL},
	        {"threshold 0 disables",
	         {{"a", KUBE_POD_FAILED}, {"b", KUBE_POD_SUCCEEDED}},
	         0,
	         "",
	         NULL},
	        {"threshold -1 disables",
	         {{"a", KUBE_POD_FAILED}, {"b", KUBE_POD_SUCCEEDED}},
	         -1,
	         "",
	         NULL},
	        {"threshold 1, delete b",
	         {{"a", KUBE_POD_RUNNING}, {"b", KUBE_POD_SUCCEEDED}, {"c", KUBE_POD_FAILED}},
	         1,
	         "b",
	         NULL},
	        {"threshold 1, delete a",
	         {{"a", KUBE_POD_FAILED}, {"b", KUBE_POD_SUCCEEDED}},
	         1,
	         "a",
	         NULL},
	        {"threshold 5, none",
	         {{"a", KUBE_POD_FAILED}, {"b", KUBE_POD_SUCCEEDED}},
	         5,
	         "",
	         NULL},
	        {"evicted first",
	         {{"a", KUBE_POD_FAILED}, {"b", KUBE_POD_SUCCEEDED}, {"c", KUBE_POD_FAILED}},
	         1,
	         "c,a",
	         "c"},
	        {"evicted first, running kept",
	         {{"a", KUBE_POD_RUNNING}, {"b", KUBE_POD_SUCCEEDED}, {"c", KUBE_POD_FAILED}},
	         1,
	         "c",
	         "c"},
	        /* isPodTerminated: any phase but Pending/Running/Unknown, an empty one too */
	        {"unset and unknown phases",
	         {{"a", KUBE_POD_PHASE_UNSET},
	          {"b", KUBE_POD_UNKNOWN},
	          {"c", KUBE_POD_PENDING},
	          {"d", KUBE_POD_PHASE_OTHER}},
	         1,
	         "a",
	         NULL},
	};

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct pgc_pod pods[4];
		size_t n = 0, *idx = NULL, k = 0;
		for (; n < 4 && cases[c].pods[n].name; n++) {
			pods[n] = pod(cases[c].pods[n].name, "node", cases[c].pods[n].phase);
			pods[n].evicted = cases[c].evicted &&
			                  !strcmp(cases[c].evicted, cases[c].pods[n].name);
			/* upstream's test creates them an hour apart, in order */
			pods[n].creation_ts = (kube_time_t)(n + 1) * H;
		}
		assert_int_equal(pgc_select_terminated(pods, n, cases[c].threshold, &idx, &k), 0);
		if (strcmp(names(pods, idx, k), cases[c].deleted) != 0)
			fail_msg("%s: deleted %s, want %s", cases[c].name, names(pods, idx, k),
			         cases[c].deleted);
		free(idx);
	}
}

/* byEvictionAndCreationTimestamp: evicted, then creation time (seconds), then name. */
static void test_order(void **state)
{
	struct pgc_pod p[4] = {pod("z", "", KUBE_POD_FAILED), pod("b", "", KUBE_POD_FAILED),
	                       pod("a", "", KUBE_POD_SUCCEEDED), pod("y", "", KUBE_POD_FAILED)};
	size_t idx[4] = {0, 1, 2, 3};

	(void)state;
	p[0].creation_ts = 10 * H;
	p[1].creation_ts = 5 * H + 900000000; /* same second as a */
	p[2].creation_ts = 5 * H;
	p[3].creation_ts = 20 * H;
	p[3].evicted = true;
	pgc_sort(p, idx, 4);
	assert_string_equal(names(p, idx, 4), "y,a,b,z");
	assert_true(pgc_needs_failed_patch(&p[0]) == false);
	assert_true(pgc_needs_failed_patch(&p[2]) == false);
	struct pgc_pod r = pod("r", "", KUBE_POD_RUNNING), u = pod("u", "", KUBE_POD_PHASE_UNSET);
	assert_true(pgc_needs_failed_patch(&r));
	assert_true(pgc_needs_failed_patch(&u));
}

/* ---- a fake API: the nodes "in the client" ----------------------------------------------------
 */

struct fake_node {
	const char *name;
	bool ready, oos;
};

struct fake_api {
	struct fake_node nodes[8];
	size_t n;
	int fail; /* != 0: every GET fails with it */
	unsigned gets;
};

static int fake_get(void *ud, const char *node, struct pgc_node_facts *ret)
{
	struct fake_api *f = ud;

	f->gets++;
	if (f->fail)
		return f->fail;
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->nodes[i].name, node)) {
			ret->ready = f->nodes[i].ready;
			ret->out_of_service = f->nodes[i].oos;
			return 0;
		}
	return -ENOENT;
}

static struct pgc_set *set_of(const char *const *names_)
{
	struct pgc_set *s = NULL;

	assert_int_equal(pgc_set_new(&s), 0);
	for (size_t i = 0; names_ && names_[i]; i++)
		assert_true(pgc_set_add(s, names_[i]) >= 0);
	return s;
}

/* ---- TestGCOrphaned ---------------------------------------------------------------------------
 */

struct orphan_case {
	const char *name;
	const char *client[3], *informer[3];
	uint64_t delay_us;
	const char *client_added, *client_deleted, *informer_added, *informer_deleted;
	struct {
		const char *name, *node;
		enum kube_pod_phase phase;
	} pods[4];
	const char *deleted, *patched;
};

static void test_orphaned(void **state)
{
	const uint64_t q = PGC_QUARANTINE_US;
	const struct orphan_case cases[] = {
	        {"nodes present in lister",
	         {0},
	         {"existing1", "existing2"},
	         2 * q,
	         .pods = {{"a", "existing1", KUBE_POD_RUNNING},
	                  {"b", "existing2", KUBE_POD_FAILED},
	                  {"c", "existing2", KUBE_POD_SUCCEEDED}},
	         .deleted = "",
	         .patched = ""},
	        {"nodes present in client",
	         {"existing1", "existing2"},
	         {0},
	         2 * q,
	         .pods = {{"a", "existing1", KUBE_POD_RUNNING},
	                  {"b", "existing2", KUBE_POD_FAILED},
	                  {"c", "existing2", KUBE_POD_SUCCEEDED}},
	         .deleted = "",
	         .patched = ""},
	        {"no nodes",
	         {0},
	         {0},
	         2 * q,
	         .pods = {{"a", "deleted", KUBE_POD_FAILED}, {"b", "deleted", KUBE_POD_SUCCEEDED}},
	         .deleted = "a,b",
	         .patched = ""},
	        {"no nodes, one running pod",
	         {0},
	         {0},
	         2 * q,
	         .pods = {{"a", "deleted", KUBE_POD_FAILED},
	                  {"b", "deleted", KUBE_POD_SUCCEEDED},
	                  {"c", "deleted", KUBE_POD_RUNNING}},
	         .deleted = "a,b,c",
	         .patched = "c"},
	        {"quarantine not finished",
	         {0},
	         {0},
	         q / 2,
	         .pods = {{"a", "deleted", KUBE_POD_FAILED}},
	         .deleted = "",
	         .patched = ""},
	        {"wrong nodes",
	         {0},
	         {"existing"},
	         2 * q,
	         .pods = {{"a", "deleted", KUBE_POD_RUNNING}},
	         .deleted = "a",
	         .patched = "a"},
	        {"some nodes missing",
	         {0},
	         {"existing"},
	         2 * q,
	         .pods = {{"a", "deleted", KUBE_POD_FAILED},
	                  {"b", "existing", KUBE_POD_FAILED},
	                  {"c", "deleted", KUBE_POD_SUCCEEDED},
	                  {"d", "deleted", KUBE_POD_RUNNING}},
	         .deleted = "a,c,d",
	         .patched = "d"},
	        {"node added to client after quarantine",
	         {0},
	         {0},
	         2 * q,
	         .client_added = "node",
	         .pods = {{"a", "node", KUBE_POD_RUNNING}},
	         .deleted = "",
	         .patched = ""},
	        {"node added to informer after quarantine",
	         {0},
	         {0},
	         2 * q,
	         .informer_added = "node",
	         .pods = {{"a", "node", KUBE_POD_FAILED}},
	         .deleted = "",
	         .patched = ""},
	        {"node deleted from client after quarantine",
	         {"node"},
	         {0},
	         2 * q,
	         .client_deleted = "node",
	         .pods = {{"a", "node", KUBE_POD_FAILED}},
	         .deleted = "a",
	         .patched = ""},
	        {"node deleted from informer after quarantine",
	         {0},
	         {"node"},
	         2 * q,
	         .informer_deleted = "node",
	         .pods = {{"a", "node", KUBE_POD_SUCCEEDED}},
	         .deleted = "",
	         .patched = ""},
	};

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const struct orphan_case *t = &cases[c];
		struct fake_api api = {0};
		struct pgc_nodes_api a = {.get = fake_get, .ud = &api};
		struct pgc_quarantine *quar = NULL;
		struct pgc_pod pods[4];
		size_t n = 0, *idx = NULL, k = 0;
		const uint64_t t0 = 1000 * SEC;
		char patched[128] = "";

		for (size_t i = 0; i < 3 && t->client[i]; i++)
			api.nodes[api.n++] = (struct fake_node){t->client[i], true, false};
		for (; n < 4 && t->pods[n].name; n++)
			pods[n] = pod(t->pods[n].name, t->pods[n].node, t->pods[n].phase);
		struct pgc_set *inf = set_of(t->informer);
		assert_int_equal(pgc_quarantine_new(&quar), 0);

		/* first pass: nothing is deleted */
		assert_int_equal(pgc_select_orphaned(quar, pods, n, inf, t0, &a, &idx, &k), 0);
		if (k)
			fail_msg("%s: first pass deleted %s", t->name, names(pods, idx, k));
		free(idx);

		/* the planned changes, then the second pass after the delay */
		if (t->client_added)
			api.nodes[api.n++] = (struct fake_node){t->client_added, true, false};
		if (t->client_deleted)
			api.n = 0;
		if (t->informer_added)
			assert_int_equal(pgc_set_add(inf, t->informer_added), 0);
		if (t->informer_deleted) {
			pgc_set_free(inf);
			inf = set_of(NULL);
		}
		assert_int_equal(
		        pgc_select_orphaned(quar, pods, n, inf, t0 + t->delay_us, &a, &idx, &k), 0);
		if (strcmp(names(pods, idx, k), t->deleted) != 0)
			fail_msg("%s: deleted %s, want %s", t->name, names(pods, idx, k),
			         t->deleted);
		for (size_t i = 0, l = 0; i < k; i++)
			if (pgc_needs_failed_patch(&pods[idx[i]]))
				l += (size_t)snprintf(patched + l, sizeof(patched) - l, "%s%s",
				                      l ? "," : "", pods[idx[i]].name);
		if (strcmp(patched, t->patched) != 0)
			fail_msg("%s: patched %s, want %s", t->name, patched, t->patched);
		free(idx);
		pgc_set_free(inf);
		pgc_quarantine_free(quar);
	}
}

/* The delaying queue's rules behind the quarantine: an earlier time wins, a checked name is
 * forgotten (and quarantined again from scratch), a failed GET deletes nothing. */
static void test_quarantine(void **state)
{
	struct pgc_quarantine *q = NULL;
	struct fake_api api = {.fail = -EIO};
	struct pgc_nodes_api a = {.get = fake_get, .ud = &api};
	struct pgc_set *none = set_of(NULL);
	struct pgc_pod p[2] = {pod("a", "gone", KUBE_POD_RUNNING),
	                       pod("b", "gone", KUBE_POD_RUNNING)};
	size_t *idx = NULL, k = 0;

	(void)state;
	assert_int_equal(pgc_quarantine_new(&q), 0);
	assert_int_equal(pgc_select_orphaned(q, p, 2, none, 0, &a, &idx, &k), 0);
	free(idx);
	assert_int_equal(pgc_quarantine_len(q), 1); /* two pods, one name */
	/* a later add keeps the earlier time: ready at 40 s */
	assert_int_equal(pgc_select_orphaned(q, p, 2, none, 20 * SEC, &a, &idx, &k), 0);
	free(idx);
	assert_int_equal(k, 0);
	assert_int_equal(api.gets, 0);
	/* 40 s: checked; the GET fails: nothing deleted, the name forgotten */
	assert_int_equal(pgc_select_orphaned(q, p, 2, none, 40 * SEC, &a, &idx, &k), 0);
	free(idx);
	assert_int_equal(k, 0);
	assert_int_equal(api.gets, 1);
	/* checked and done: the name left the queue; the next pass quarantines it again */
	assert_int_equal(pgc_quarantine_len(q), 0);
	api.fail = 0;
	assert_int_equal(pgc_select_orphaned(q, p, 2, none, 60 * SEC, &a, &idx, &k), 0);
	free(idx);
	assert_int_equal(k, 0);
	assert_int_equal(pgc_quarantine_len(q), 1);
	assert_int_equal(pgc_select_orphaned(q, p, 2, none, 99 * SEC, &a, &idx, &k), 0);
	free(idx);
	assert_int_equal(k, 0);
	assert_int_equal(api.gets, 1);
	assert_int_equal(pgc_select_orphaned(q, p, 2, none, 100 * SEC, &a, &idx, &k), 0);
	assert_string_equal(names(p, idx, k), "a,b");
	assert_int_equal(api.gets, 2); /* one GET per node name */
	free(idx);
	pgc_set_free(none);
	pgc_quarantine_free(q);
}

/* ---- TestGCUnscheduledTerminating -------------------------------------------------------------
 */

static void test_unscheduled(void **state)
{
	struct pgc_pod p[6] = {
	        pod("a", "", KUBE_POD_FAILED),        pod("b", "", KUBE_POD_SUCCEEDED),
	        pod("c", "", KUBE_POD_RUNNING),       pod("d", "", KUBE_POD_FAILED),
	        pod("e", "node", KUBE_POD_SUCCEEDED), pod("f", "node", KUBE_POD_RUNNING)};
	size_t *idx = NULL, k = 0;

	(void)state;
	p[0].deletion_ts = p[1].deletion_ts = p[2].deletion_ts = DELETING;
	p[5].deletion_ts = DELETING; /* scheduled: not this collector's */
	assert_int_equal(pgc_select_unscheduled(p, 6, &idx, &k), 0);
	assert_string_equal(names(p, idx, k), "a,b,c");
	assert_false(pgc_needs_failed_patch(&p[0]));
	assert_false(pgc_needs_failed_patch(&p[1]));
	assert_true(pgc_needs_failed_patch(&p[2])); /* patched: c */
	free(idx);
}

/* ---- TestGCTerminating ------------------------------------------------------------------------
 */

static void test_terminating(void **state)
{
	struct fake_api api = {.nodes = {{"worker-0", false, true},
	                                 {"worker-1", false, false},
	                                 {"worker-2", true, false},
	                                 {"worker-3", false, true},
	                                 {"worker-4", false, true},
	                                 {"worker-5", false, true}},
	                       .n = 6};
	struct pgc_nodes_api a = {.get = fake_get, .ud = &api};
	static const char *const cached[] = {"worker-0", "worker-1", "worker-2", "worker-3",
	                                     "worker-4", "worker-5", NULL};
	struct pgc_set *inf = set_of(cached);
	struct pgc_pod p[30];
	char nm[30][16];
	static const enum kube_pod_phase ph[5] = {KUBE_POD_PHASE_UNSET, KUBE_POD_PHASE_UNSET,
	                                          KUBE_POD_PENDING, KUBE_POD_RUNNING,
	                                          KUBE_POD_UNKNOWN};
	size_t *idx = NULL, k = 0;

	(void)state;
	/* pods a<i>..e<i> on worker-<i-1>, b<i> terminating (a5 sits on worker-3, as upstream's) */
	for (int w = 0; w < 6; w++)
		for (int j = 0; j < 5; j++) {
			int i = w * 5 + j;
			snprintf(nm[i], sizeof(nm[i]), "%c%d", 'a' + j, w + 1);
			p[i] = pod(nm[i], cached[w], ph[j]);
			if (j == 1)
				p[i].deletion_ts = DELETING;
		}
	p[20].node_name = "worker-3";
	assert_int_equal(pgc_select_terminating(p, 30, inf, &a, &idx, &k), 0);
	assert_string_equal(names(p, idx, k), "b1,b4,b5,b6");
	for (size_t i = 0; i < k; i++)
		assert_true(pgc_needs_failed_patch(&p[idx[i]])); /* all patched */
	assert_int_equal(api.gets, 6); /* one GET per node with a terminating pod */
	free(idx);

	/* "pods deleted from node tainted out-of-service" */
	struct pgc_pod q[3] = {pod("a", "worker-0", KUBE_POD_RUNNING),
	                       pod("b", "worker-0", KUBE_POD_FAILED),
	                       pod("c", "worker-0", KUBE_POD_SUCCEEDED)};
	q[0].deletion_ts = q[1].deletion_ts = q[2].deletion_ts = DELETING;
	assert_int_equal(pgc_select_terminating(q, 3, inf, &a, &idx, &k), 0);
	assert_string_equal(names(q, idx, k), "a,b,c");
	free(idx);

	/* a node the cache lacks: skipped without a GET (nodeLister.Get fails) */
	struct pgc_pod r = pod("r", "worker-9", KUBE_POD_RUNNING);
	r.deletion_ts = DELETING;
	api.gets = 0;
	assert_int_equal(pgc_select_terminating(&r, 1, inf, &a, &idx, &k), 0);
	assert_int_equal(k, 0);
	assert_int_equal(api.gets, 0);
	free(idx);
	pgc_set_free(inf);
}

/* IsNodeReady and TaintKeyExists from a Node's JSON. */
static void test_node_facts(void **state)
{
	struct pgc_node_facts f;
	const char *n1 = "{\"spec\":{\"taints\":[{\"key\":\"x\",\"effect\":\"NoSchedule\"},"
	                 "{\"key\":\"node.kubernetes.io/out-of-service\",\"value\":\"any\","
	                 "\"effect\":\"PreferNoSchedule\"}]},"
	                 "\"status\":{\"conditions\":[{\"type\":\"MemoryPressure\",\"status\":"
	                 "\"True\"},{\"type\":\"Ready\",\"status\":\"False\"}]}}";
	const char *n2 = "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}";
	const char *n3 =
	        "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"Unknown\"}]}}";

	(void)state;
	assert_int_equal(pgc_node_facts_from_json(n1, strlen(n1), &f), 0);
	assert_false(f.ready);
	assert_true(f.out_of_service);
	assert_true(pgc_node_out_of_service(&f));
	assert_int_equal(pgc_node_facts_from_json(n2, strlen(n2), &f), 0);
	assert_true(f.ready);
	assert_false(f.out_of_service);
	assert_int_equal(pgc_node_facts_from_json(n3, strlen(n3), &f), 0);
	assert_false(f.ready); /* Unknown is not ready */
	assert_int_equal(pgc_node_facts_from_json("{}", 2, &f), 0);
	assert_false(f.ready); /* no Ready condition: not ready */
	assert_int_equal(pgc_node_facts_from_json("[", 1, &f), -EBADMSG);
}

/* ---- TestGCInspectingPatchedPodBeforeDeletion: the status patch --------------------------------
 */

static void test_patch_body(void **state)
{
	struct pgc_cond_state cur = {0};
	char *body = NULL;
	kube_time_t now = 1700000000ll * 1000000000ll;

	(void)state;
	/* with the condition, generation 3 */
	assert_int_equal(pgc_failed_patch_body("u-1", 3, true, &cur, now, &body), 0);
	cJSON *j = cJSON_Parse(body);
	assert_non_null(j);
	assert_string_equal(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(j, "metadata"), "uid")->valuestring, "u-1");
	cJSON *st = cJSON_GetObjectItem(j, "status");
	assert_string_equal(cJSON_GetObjectItem(st, "phase")->valuestring, "Failed");
	assert_int_equal(cJSON_GetObjectItem(st, "observedGeneration")->valueint, 3);
	cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(st, "conditions"), 0);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(st, "conditions")), 1);
	assert_string_equal(cJSON_GetObjectItem(c, "type")->valuestring, "DisruptionTarget");
	assert_string_equal(cJSON_GetObjectItem(c, "status")->valuestring, "True");
	assert_string_equal(cJSON_GetObjectItem(c, "reason")->valuestring, "DeletionByPodGC");
	assert_string_equal(cJSON_GetObjectItem(c, "message")->valuestring,
	                    "PodGC: node no longer exists");
	assert_int_equal(cJSON_GetObjectItem(c, "observedGeneration")->valueint, 3);
	assert_string_equal(cJSON_GetObjectItem(c, "lastTransitionTime")->valuestring,
	                    "2023-11-14T22:13:20Z");
	cJSON_Delete(j);
	free(body);

	/* an existing DisruptionTarget=True keeps its lastTransitionTime; False does not */
	const char *pj = "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"},"
	                 "{\"type\":\"DisruptionTarget\",\"status\":\"True\","
	                 "\"lastTransitionTime\":\"2020-01-02T03:04:05Z\"}]}}";
	assert_int_equal(pgc_cond_state_from_json(pj, strlen(pj), NULL, &cur), 0);
	assert_true(cur.present);
	/* the same pod as an item of a PodList (a LIST by name), found by its uid */
	char lj[512];
	snprintf(lj, sizeof(lj), "{\"items\":[{\"metadata\":{\"uid\":\"u-1\"},%s]}", pj + 1);
	struct pgc_cond_state cl;
	assert_int_equal(pgc_cond_state_from_json(lj, strlen(lj), "u-1", &cl), 0);
	assert_true(cl.present);
	assert_int_equal(cl.last_transition_time, cur.last_transition_time);
	assert_int_equal(pgc_cond_state_from_json(lj, strlen(lj), "u-2", &cl), -ENOENT);
	assert_int_equal(pgc_cond_state_from_json("{\"items\":[]}", 12, "u-1", &cl), -ENOENT);
	assert_int_equal(pgc_failed_patch_body("u-1", 3, true, &cur, now, &body), 0);
	assert_non_null(strstr(body, "\"lastTransitionTime\":\"2020-01-02T03:04:05Z\""));
	free(body);
	snprintf(cur.status, sizeof(cur.status), "False");
	assert_int_equal(pgc_failed_patch_body("u-1", 3, true, &cur, now, &body), 0);
	assert_non_null(strstr(body, "\"lastTransitionTime\":\"2023-11-14T22:13:20Z\""));
	free(body);

	/* without the condition, generation 0 (omitempty): phase and the uid only */
	assert_int_equal(pgc_failed_patch_body("u-2", 0, false, NULL, now, &body), 0);
	assert_string_equal(body,
	                    "{\"metadata\":{\"uid\":\"u-2\"},\"status\":{\"phase\":\"Failed\"}}");
	free(body);
}

/* ---- metrics ----------------------------------------------------------------------------------
 */

static char *render(struct kcmd_metrics *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	ctlm_render(m, f);
	ctlm_render_dropped(&m, 1, f);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void test_metrics(void **state)
{
	static const struct kcmd_controller c = {.abi = KCMD_CONTROLLER_ABI,
	                                         .name = PGC_CONTROLLER,
	                                         .metrics = pgc_metric_decl,
	                                         .n_metrics = PGC_M_N};
	struct kcmd_metrics *w = NULL, *r = NULL;
	int fd = ctlm_create(&c);
	char *text = NULL;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(ctlm_attach(&c, fd, true, &w), 0);
	assert_int_equal(ctlm_attach(&c, fd, false, &r), 0);
	text = render(r);
	assert_string_equal(text, ""); /* no series: no family */
	free(text);
	const char *o1[] = {"ns1", pgc_reason_label(PGC_REASON_ORPHANED)};
	const char *t2[] = {"ns2", pgc_reason_label(PGC_REASON_TERMINATED)};
	assert_int_equal(kcmd_metric_inc(r, PGC_M_FORCE_DELETE, o1), -EBADF);
	assert_int_equal(kcmd_metric_inc(w, PGC_M_FORCE_DELETE, o1), 0);
	assert_int_equal(kcmd_metric_inc(w, PGC_M_FORCE_DELETE, o1), 0);
	assert_int_equal(kcmd_metric_inc(w, PGC_M_FORCE_DELETE_ERRORS, o1), 0);
	assert_int_equal(kcmd_metric_inc(w, PGC_M_FORCE_DELETE, t2), 0);
	/* the reason label takes upstream's four values only */
	assert_int_equal(kcmd_metric_inc(w, PGC_M_FORCE_DELETE, (const char *[]){"ns", "x"}),
	                 -EINVAL);
	text = render(r);
	/* upstream's families, byte for byte (pkg/controller/podgc/metrics) */
	assert_string_equal(
	        text,
	        "# HELP pod_gc_collector_force_delete_pods_total [ALPHA] Number of pods that are "
	        "being forcefully deleted since the Pod GC Controller started.\n"
	        "# TYPE pod_gc_collector_force_delete_pods_total counter\n"
	        "pod_gc_collector_force_delete_pods_total{namespace=\"ns1\",reason=\"orphaned\"} "
	        "2\n"
	        "pod_gc_collector_force_delete_pods_total{namespace=\"ns2\",reason=\"terminated\"} "
	        "1\n"
	        "# HELP pod_gc_collector_force_delete_pod_errors_total [ALPHA] Number of errors "
	        "encountered when forcefully deleting the pods since the Pod GC Controller "
	        "started.\n"
	        "# TYPE pod_gc_collector_force_delete_pod_errors_total counter\n"
	        "pod_gc_collector_force_delete_pod_errors_total{namespace=\"ns1\",reason="
	        "\"orphaned\"} 1\n");
	free(text);
	/* a full table counts what it cannot hold */
	int full = 0;
	for (unsigned i = 0; i < PGC_METRIC_SERIES + 10; i++) {
		char ns[32];
		snprintf(ns, sizeof(ns), "n%u", i);
		full += kcmd_metric_inc(w, PGC_M_FORCE_DELETE,
		                        (const char *[]){ns, "unscheduled"}) == -ENOSPC;
	}
	assert_int_equal(full, 12); /* 2 series were there already */
	text = render(r);
	char want[160];
	snprintf(want, sizeof(want),
	         "kcmd_metric_series_dropped_total{metric=\"pod_gc_collector_force_delete_pods_"
	         "total\"} %d\n",
	         full);
	assert_non_null(strstr(text, want));
	free(text);
	ctlm_detach(w);
	ctlm_detach(r);
	close(fd);
}

static void test_set(void **state)
{
	struct pgc_set *s = NULL;
	char nm[32];

	(void)state;
	assert_int_equal(pgc_set_new(&s), 0);
	for (int i = 0; i < 1000; i++) {
		snprintf(nm, sizeof(nm), "node-%d", i);
		assert_int_equal(pgc_set_add(s, nm), 0);
	}
	assert_int_equal(pgc_set_add(s, "node-7"), 1);
	assert_true(pgc_set_has(s, "node-999"));
	assert_false(pgc_set_has(s, "node-1000"));
	assert_false(pgc_set_has(s, ""));
	pgc_set_free(s);
	assert_string_equal(pgc_reason_label(PGC_REASON_OUT_OF_SERVICE), "out-of-service");
	assert_string_equal(pgc_reason_label(PGC_REASON_UNSCHEDULED), "unscheduled");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_terminated),  cmocka_unit_test(test_order),
	        cmocka_unit_test(test_orphaned),    cmocka_unit_test(test_quarantine),
	        cmocka_unit_test(test_unscheduled), cmocka_unit_test(test_terminating),
	        cmocka_unit_test(test_node_facts),  cmocka_unit_test(test_patch_body),
	        cmocka_unit_test(test_metrics),     cmocka_unit_test(test_set),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
