/* SPDX-License-Identifier: Apache-2.0 */
/* workers/daemonset/tests/test-ds.c - the DaemonSet controller's pure decisions (ds.h), as
 * scenarios ported from upstream pkg/controller/daemon (v1.37): daemon_controller_test.go
 * (TestSimpleDaemonSetLaunchesPods, TestNoNodesDoesNothing, TestOneNodeDaemonLaunchesPod,
 * TestNotReadyNodeDaemonDoesLaunchPod, TestSelectorDaemonLaunchesPods,
 * TestSelectorDaemonDeletesUnselectedPods, TestNodeAffinityDaemonLaunchesPods,
 * TestTaintedNodeDaemonDoesNotLaunchIntolerantPod, TestTaintedNodeDaemonLaunchesToleratePod,
 * TestNotReadyNodeDaemonLaunchesPod, TestUnreachableTaintedNodeDaemonLaunchesPod,
 * TestTaintPressureNodeDaemonLaunchesPod, TestNodeDaemonLaunchesToleratePod,
 * TestDealsWithExistingPods, TestDaemonKillFailedPods, TestNumberReadyStatus,
 * TestNodeShouldRunDaemonPod's taint cases, TestDaemonSetRespectsTermination-like succeeded
 * pods, TestSurgeDealsWithExistingPods / TestSurgePreservesReadyOldPods) and util
 * (TestGetTargetNodeName, TestReplaceDaemonSetPodNodeNameNodeAffinity,
 * TestAddOrUpdateDaemonPodTolerations via the pod body). A "sync" here runs the per-node
 * decision over every node and counts creates and deletes, as upstream's expectSyncDaemonSets
 * counts the fake pod control's calls. Also the worker's Node views (nodes.h): a view answers
 * NodeShouldRunDaemonPod as the Node's full JSON does (labels, taints, nodeSelector, required
 * node affinity with a metadata.name field requirement); an unchanged resourceVersion is not
 * parsed again, a changed one is; the caller's memo per view; a Node not seen by a refresh is
 * dropped; a Node without a name or with JSON that does not parse is left out; the views come
 * sorted by name whatever order the cache walk had. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workers/daemonset/ds.h"
#include "workers/daemonset/nodes.h"

static int fails;

#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c);                    \
			fails++;                                                                   \
		}                                                                                  \
	} while (0)

#define MAXN 32
struct world {
	cJSON *tspec;
	cJSON *nodes[MAXN];
	size_t n_nodes;
	struct ds_pod pods[64];
	char names[64][32];
	size_t n_pods;
	bool surge;
	const char *hash;
};

static cJSON *J(const char *s)
{
	cJSON *j = cJSON_Parse(s);
	if (!j) {
		fprintf(stderr, "bad JSON in test: %s\n", s);
		exit(1);
	}
	return j;
}

static void add_nodes(struct world *w, int start, int n, const char *labels, const char *spec)
{
	for (int i = start; i < start + n; i++) {
		char buf[1024];
		snprintf(buf, sizeof(buf),
		         "{\"metadata\":{\"name\":\"node-%d\",\"labels\":%s},\"spec\":%s}", i,
		         labels ? labels : "{}", spec ? spec : "{}");
		w->nodes[w->n_nodes++] = J(buf);
	}
}

static void add_pods(struct world *w, const char *node, int n, enum kube_pod_phase phase)
{
	for (int i = 0; i < n; i++) {
		struct ds_pod *p = &w->pods[w->n_pods];
		snprintf(w->names[w->n_pods], sizeof(w->names[0]), "%s-p%zu", node, w->n_pods);
		*p = (struct ds_pod){.name = w->names[w->n_pods],
		                     .node = node,
		                     .scheduled = true,
		                     .phase = phase,
		                     .created = (kube_time_t)(w->n_pods + 1) * 1000000000,
		                     .hash = w->hash};
		w->n_pods++;
	}
}

static void world_free(struct world *w)
{
	cJSON_Delete(w->tspec);
	for (size_t i = 0; i < w->n_nodes; i++)
		cJSON_Delete(w->nodes[i]);
	memset(w, 0, sizeof(*w));
}

struct result {
	int creates, deletes, failed;
	struct ds_status st;
};

static struct result sync_world(struct world *w)
{
	struct result r = {0};
	for (size_t i = 0; i < w->n_nodes; i++) {
		const char *nn =
		        cJSON_GetObjectItem(cJSON_GetObjectItem(w->nodes[i], "metadata"), "name")
		                ->valuestring;
		struct ds_pod *on[64];
		size_t n = 0, del[64], failed[64], succ[64];
		for (size_t k = 0; k < w->n_pods; k++)
			if (!strcmp(w->pods[k].node, nn))
				on[n++] = &w->pods[k];
		bool run, cont;
		struct ds_node_plan np;
		ds_node_should_run(w->tspec, w->nodes[i], &run, &cont);
		ds_pods_on_node(run, cont, on, n, w->surge, w->hash, 0, 0, del, failed, succ, &np);
		r.creates += np.create;
		r.deletes += (int)np.n_del;
		r.failed += (int)np.n_failed;
		ds_status_add(&r.st, run, on, n, w->hash, NULL, 0, 100000000000LL);
	}
	r.st.unavailable = r.st.desired - r.st.available;
	return r;
}

#define TSPEC_PLAIN "{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}"

static void simple_launches(void)
{
	struct world w = {.tspec = J(TSPEC_PLAIN)};
	add_nodes(&w, 0, 5, NULL, NULL);
	struct result r = sync_world(&w);
	CHECK(r.creates == 5 && r.deletes == 0); /* TestSimpleDaemonSetLaunchesPods */
	CHECK(r.st.desired == 5 && r.st.current == 0 && r.st.unavailable == 5);
	world_free(&w);

	w = (struct world){.tspec = J(TSPEC_PLAIN)};
	r = sync_world(&w);
	CHECK(r.creates == 0 && r.deletes == 0 && r.st.desired == 0); /* TestNoNodesDoesNothing */
	world_free(&w);

	w = (struct world){.tspec = J(TSPEC_PLAIN)};
	add_nodes(&w, 0, 1, NULL, NULL);
	r = sync_world(&w);
	CHECK(r.creates == 1); /* TestOneNodeDaemonLaunchesPod */
	world_free(&w);

	/* TestNotReadyNodeDaemonDoesLaunchPod: a NotReady condition alone changes nothing */
	w = (struct world){.tspec = J(TSPEC_PLAIN)};
	w.nodes[w.n_nodes++] =
	        J("{\"metadata\":{\"name\":\"not-ready\"},\"status\":{\"conditions\":"
	          "[{\"type\":\"Ready\",\"status\":\"False\"}]}}");
	r = sync_world(&w);
	CHECK(r.creates == 1);
	world_free(&w);
}

static void selectors(void)
{
	/* TestSelectorDaemonLaunchesPods: 4 plain nodes, 3 labelled, nodeSelector */
	struct world w = {.tspec = J("{\"nodeSelector\":{\"color\":\"blue\"}}")};
	add_nodes(&w, 0, 4, NULL, NULL);
	add_nodes(&w, 4, 3, "{\"color\":\"blue\"}", NULL);
	struct result r = sync_world(&w);
	CHECK(r.creates == 3 && r.deletes == 0);
	CHECK(r.st.desired == 3);
	world_free(&w);

	/* TestSelectorDaemonDeletesUnselectedPods: the pods on unselected nodes go (the pods with
	 * other labels are not the set's: ClaimPods leaves them out) */
	w = (struct world){.tspec = J("{\"nodeSelector\":{\"color\":\"blue\"}}")};
	add_nodes(&w, 0, 5, NULL, NULL);
	add_nodes(&w, 5, 5, "{\"color\":\"blue\"}", NULL);
	add_pods(&w, "node-1", 3, KUBE_POD_RUNNING);
	add_pods(&w, "node-4", 1, KUBE_POD_RUNNING);
	r = sync_world(&w);
	CHECK(r.creates == 5 && r.deletes == 4);
	CHECK(r.st.misscheduled == 2 && r.st.desired == 5);
	world_free(&w);

	/* TestSelectorDaemonDealsWithExistingPods */
	w = (struct world){.tspec = J("{\"nodeSelector\":{\"color\":\"blue\"}}")};
	add_nodes(&w, 0, 5, NULL, NULL);
	add_nodes(&w, 5, 5, "{\"color\":\"blue\"}", NULL);
	add_pods(&w, "node-0", 1, KUBE_POD_RUNNING);
	add_pods(&w, "node-1", 3, KUBE_POD_RUNNING);
	add_pods(&w, "node-4", 2, KUBE_POD_RUNNING);
	add_pods(&w, "node-6", 13, KUBE_POD_RUNNING);
	add_pods(&w, "node-7", 4, KUBE_POD_RUNNING);
	add_pods(&w, "node-9", 1, KUBE_POD_RUNNING);
	r = sync_world(&w);
	CHECK(r.creates == 2);          /* node-5, node-8 */
	CHECK(r.deletes == 6 + 12 + 3); /* unselected 6; surplus on node-6 and node-7 */
	world_free(&w);

	/* TestNodeAffinityDaemonLaunchesPods */
	w = (struct world){.tspec = J("{\"affinity\":{\"nodeAffinity\":{"
	                              "\"requiredDuringSchedulingIgnoredDuringExecution\":"
	                              "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":"
	                              "\"color\",\"operator\":\"In\","
	                              "\"values\":[\"blue\"]}]}]}}}}")};
	add_nodes(&w, 0, 4, NULL, NULL);
	add_nodes(&w, 4, 3, "{\"color\":\"blue\"}", NULL);
	r = sync_world(&w);
	CHECK(r.creates == 3);
	world_free(&w);

	/* matchFields metadata.name, NotIn, Gt, DoesNotExist, an empty term, a bad term */
	cJSON *node =
	        J("{\"metadata\":{\"name\":\"n1\",\"labels\":{\"cpu\":\"8\",\"zone\":\"a\"}}}");
	struct {
		const char *spec;
		bool want;
	} cases[] = {
	        {"{}", true},
	        {"{\"nodeSelector\":{\"zone\":\"a\"}}", true},
	        {"{\"nodeSelector\":{\"zone\":\"b\"}}", false},
	        {"{\"affinity\":{\"nodeAffinity\":{"
	         "\"requiredDuringSchedulingIgnoredDuringExecution\":{"
	         "\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":"
	         "\"In\",\"values\":[\"n1\"]}]}]}}}}",
	         true},
	        {"{\"affinity\":{\"nodeAffinity\":{"
	         "\"requiredDuringSchedulingIgnoredDuringExecution\":{"
	         "\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":"
	         "\"NotIn\",\"values\":[\"n1\"]}]}]}}}}",
	         false},
	        {"{\"affinity\":{\"nodeAffinity\":{"
	         "\"requiredDuringSchedulingIgnoredDuringExecution\":{"
	         "\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"cpu\",\"operator\":"
	         "\"Gt\","
	         "\"values\":[\"4\"]}]}]}}}}",
	         true},
	        {"{\"affinity\":{\"nodeAffinity\":{"
	         "\"requiredDuringSchedulingIgnoredDuringExecution\":{"
	         "\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"cpu\",\"operator\":"
	         "\"Lt\","
	         "\"values\":[\"4\"]}]}]}}}}",
	         false},
	        {"{\"affinity\":{\"nodeAffinity\":{"
	         "\"requiredDuringSchedulingIgnoredDuringExecution\":{"
	         "\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"gpu\",\"operator\":"
	         "\"DoesNotExist\"}]}]}}}}",
	         true},
	        /* an empty term matches nothing; the second term matches */
	        {"{\"affinity\":{\"nodeAffinity\":{"
	         "\"requiredDuringSchedulingIgnoredDuringExecution\":{"
	         "\"nodeSelectorTerms\":[{},{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":"
	         "\"NotIn\",\"values\":[\"b\"]}]}]}}}}",
	         true},
	        {"{\"affinity\":{\"nodeAffinity\":{"
	         "\"requiredDuringSchedulingIgnoredDuringExecution\":{"
	         "\"nodeSelectorTerms\":[{}]}}}}",
	         false},
	        /* Gt with a non-integer does not parse: the term is dropped */
	        {"{\"affinity\":{\"nodeAffinity\":{"
	         "\"requiredDuringSchedulingIgnoredDuringExecution\":{"
	         "\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"cpu\",\"operator\":"
	         "\"Gt\","
	         "\"values\":[\"x\"]}]}]}}}}",
	         false},
	        /* preferred only: no requirement */
	        {"{\"affinity\":{\"nodeAffinity\":{"
	         "\"preferredDuringSchedulingIgnoredDuringExecution\":"
	         "[]}}}",
	         true},
	        /* spec.nodeName of another node */
	        {"{\"nodeName\":\"n2\"}", false},
	        {"{\"nodeName\":\"n1\"}", true},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *spec = J(cases[i].spec);
		bool run, cont;
		ds_node_should_run(spec, node, &run, &cont);
		if (run != cases[i].want || cont != cases[i].want) {
			fprintf(stderr, "affinity case %zu: got %d/%d\n", i, run, cont);
			fails++;
		}
		cJSON_Delete(spec);
	}
	cJSON_Delete(node);
}

static void taints(void)
{
	struct {
		const char *taints, *tspec;
		bool run, cont;
	} cases[] = {
	        /* TestTaintedNodeDaemonDoesNotLaunchIntolerantPod */
	        {"[{\"key\":\"key1\",\"value\":\"value1\",\"effect\":\"NoSchedule\"}]", TSPEC_PLAIN,
	         false, true},
	        /* TestTaintedNodeDaemonLaunchesToleratePod */
	        {"[{\"key\":\"key1\",\"value\":\"value1\",\"effect\":\"NoSchedule\"}]",
	         "{\"tolerations\":[{\"key\":\"key1\",\"operator\":\"Equal\",\"value\":\"value1\","
	         "\"effect\":\"NoSchedule\"}]}",
	         true, true},
	        /* a wrong value does not tolerate */
	        {"[{\"key\":\"key1\",\"value\":\"value1\",\"effect\":\"NoSchedule\"}]",
	         "{\"tolerations\":[{\"key\":\"key1\",\"value\":\"value2\"}]}", false, true},
	        /* NoExecute untolerated: neither run nor continue (TestNodeShouldRunDaemonPod) */
	        {"[{\"key\":\"key1\",\"value\":\"value1\",\"effect\":\"NoExecute\"}]", TSPEC_PLAIN,
	         false, false},
	        /* PreferNoSchedule does not count */
	        {"[{\"key\":\"key1\",\"value\":\"value1\",\"effect\":\"PreferNoSchedule\"}]",
	         TSPEC_PLAIN, true, true},
	        /* TestNodeDaemonLaunchesToleratePod: Exists with no key tolerates everything */
	        {"[{\"key\":\"key1\",\"value\":\"value1\",\"effect\":\"NoExecute\"}]",
	         "{\"tolerations\":[{\"operator\":\"Exists\"}]}", true, true},
	        /* TestNotReadyNodeDaemonLaunchesPod, TestUnreachableTaintedNodeDaemonLaunchesPod */
	        {"[{\"key\":\"node.kubernetes.io/not-ready\",\"effect\":\"NoExecute\"}]",
	         TSPEC_PLAIN, true, true},
	        {"[{\"key\":\"node.kubernetes.io/unreachable\",\"effect\":\"NoExecute\"}]",
	         TSPEC_PLAIN, true, true},
	        /* TestTaintPressureNodeDaemonLaunchesPod */
	        {"[{\"key\":\"node.kubernetes.io/disk-pressure\",\"effect\":\"NoSchedule\"},"
	         "{\"key\":\"node.kubernetes.io/memory-pressure\",\"effect\":\"NoSchedule\"},"
	         "{\"key\":\"node.kubernetes.io/pid-pressure\",\"effect\":\"NoSchedule\"},"
	         "{\"key\":\"node.kubernetes.io/unschedulable\",\"effect\":\"NoSchedule\"}]",
	         TSPEC_PLAIN, true, true},
	        /* the not-ready toleration is NoExecute only */
	        {"[{\"key\":\"node.kubernetes.io/not-ready\",\"effect\":\"NoSchedule\"}]",
	         TSPEC_PLAIN, false, true},
	        /* network-unavailable: tolerated only with hostNetwork */
	        {"[{\"key\":\"node.kubernetes.io/network-unavailable\",\"effect\":\"NoSchedule\"}]",
	         TSPEC_PLAIN, false, true},
	        {"[{\"key\":\"node.kubernetes.io/network-unavailable\",\"effect\":\"NoSchedule\"}]",
	         "{\"hostNetwork\":true}", true, true},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[1024];
		snprintf(buf, sizeof(buf),
		         "{\"metadata\":{\"name\":\"n\"},\"spec\":{\"taints\":%s}}",
		         cases[i].taints);
		cJSON *node = J(buf), *spec = J(cases[i].tspec);
		bool run, cont;
		ds_node_should_run(spec, node, &run, &cont);
		if (run != cases[i].run || cont != cases[i].cont) {
			fprintf(stderr, "taint case %zu: got %d/%d\n", i, run, cont);
			fails++;
		}
		cJSON_Delete(node);
		cJSON_Delete(spec);
	}
	/* an intolerant DaemonSet: nothing created on a tainted node, an existing pod stays
	 * (NoSchedule) */
	struct world w = {.tspec = J(TSPEC_PLAIN)};
	add_nodes(&w, 0, 1, NULL,
	          "{\"taints\":[{\"key\":\"k\",\"value\":\"v\",\"effect\":\"NoSchedule\"}]}");
	struct result r = sync_world(&w);
	CHECK(r.creates == 0 && r.st.desired == 0);
	add_pods(&w, "node-0", 1, KUBE_POD_RUNNING);
	r = sync_world(&w);
	CHECK(r.creates == 0 && r.deletes == 0 && r.st.misscheduled == 1);
	world_free(&w);
	/* NoExecute: the existing pod is deleted */
	w = (struct world){.tspec = J(TSPEC_PLAIN)};
	add_nodes(&w, 0, 1, NULL, "{\"taints\":[{\"key\":\"k\",\"effect\":\"NoExecute\"}]}");
	add_pods(&w, "node-0", 1, KUBE_POD_RUNNING);
	r = sync_world(&w);
	CHECK(r.creates == 0 && r.deletes == 1);
	world_free(&w);
}

static void existing_pods(void)
{
	/* TestDealsWithExistingPods */
	struct world w = {.tspec = J(TSPEC_PLAIN)};
	add_nodes(&w, 0, 5, NULL, NULL);
	add_pods(&w, "node-1", 1, KUBE_POD_RUNNING);
	add_pods(&w, "node-2", 2, KUBE_POD_RUNNING);
	add_pods(&w, "node-3", 5, KUBE_POD_RUNNING);
	struct result r = sync_world(&w);
	CHECK(r.creates == 2 && r.deletes == 5);
	world_free(&w);

	/* the oldest pod is kept; scheduled before unscheduled */
	w = (struct world){.tspec = J(TSPEC_PLAIN)};
	add_nodes(&w, 0, 1, NULL, NULL);
	add_pods(&w, "node-0", 3, KUBE_POD_RUNNING);
	w.pods[0].scheduled = false; /* oldest but not bound */
	struct ds_pod *on[3] = {&w.pods[0], &w.pods[1], &w.pods[2]};
	size_t del[3], failed[3], succ[3];
	struct ds_node_plan np;
	ds_pods_on_node(true, true, on, 3, false, NULL, 0, 0, del, failed, succ, &np);
	CHECK(np.n_del == 2 && on[0] == &w.pods[1]);
	CHECK(on[del[0]] == &w.pods[2] && on[del[1]] == &w.pods[0]);
	world_free(&w);

	/* TestDaemonKillFailedPods: failed pods are reported (deleted unless backed off), a node
	 * with only a failed pod gets none created until it is gone */
	struct {
		int failed, normal, creates, deletes, nfailed;
	} kc[] = {{1, 0, 0, 0, 1}, {1, 1, 0, 0, 1}, {2, 1, 0, 0, 2}, {0, 2, 0, 1, 0}};
	for (size_t i = 0; i < sizeof(kc) / sizeof(kc[0]); i++) {
		w = (struct world){.tspec = J(TSPEC_PLAIN)};
		add_nodes(&w, 0, 1, NULL, NULL);
		add_pods(&w, "node-0", kc[i].failed, KUBE_POD_FAILED);
		add_pods(&w, "node-0", kc[i].normal, KUBE_POD_RUNNING);
		r = sync_world(&w);
		if (r.creates != kc[i].creates || r.deletes != kc[i].deletes ||
		    r.failed != kc[i].nfailed) {
			fprintf(stderr, "kill-failed case %zu: %d %d %d\n", i, r.creates, r.deletes,
			        r.failed);
			fails++;
		}
		world_free(&w);
	}
	/* a succeeded pod is deleted; a pod being deleted is left alone */
	w = (struct world){.tspec = J(TSPEC_PLAIN)};
	add_nodes(&w, 0, 1, NULL, NULL);
	add_pods(&w, "node-0", 1, KUBE_POD_SUCCEEDED);
	add_pods(&w, "node-0", 1, KUBE_POD_RUNNING);
	w.pods[1].deleting = true;
	r = sync_world(&w);
	CHECK(r.creates == 0 && r.deletes == 1);
	world_free(&w);
}

static void status(void)
{
	/* TestNumberReadyStatus */
	struct world w = {.tspec = J(TSPEC_PLAIN), .hash = "h1"};
	add_nodes(&w, 0, 3, NULL, NULL);
	add_pods(&w, "node-0", 1, KUBE_POD_RUNNING);
	add_pods(&w, "node-1", 1, KUBE_POD_RUNNING);
	add_pods(&w, "node-2", 1, KUBE_POD_RUNNING);
	struct result r = sync_world(&w);
	CHECK(r.st.desired == 3 && r.st.current == 3 && r.st.ready == 0 && r.st.available == 0 &&
	      r.st.updated == 3 && r.st.unavailable == 3 && r.st.misscheduled == 0);
	for (size_t i = 0; i < w.n_pods; i++)
		w.pods[i].ready = true;
	w.pods[0].hash = "old";
	r = sync_world(&w);
	CHECK(r.st.ready == 3 && r.st.available == 3 && r.st.updated == 2 && r.st.unavailable == 0);
	world_free(&w);

	/* availability with minReadySeconds */
	struct ds_pod p = {.name = "p", .ready = true, .ready_since = 10 * 1000000000LL};
	CHECK(ds_pod_available(&p, 0, 0));
	CHECK(!ds_pod_available(&p, 5, 15 * 1000000000LL));
	CHECK(ds_pod_available(&p, 5, 15 * 1000000000LL + 1));
	p.ready_since = 0;
	CHECK(!ds_pod_available(&p, 5, 100 * 1000000000LL));
	/* updated by the generation label */
	struct ds_pod g = {.name = "g", .gen = "3"};
	CHECK(ds_pod_updated(&g, "h", "3") && !ds_pod_updated(&g, "h", "4") &&
	      !ds_pod_updated(&g, "h", NULL));
}

static void surge(void)
{
	/* TestSurgePreservesReadyOldPods-like: old ready + new not ready: both stay; new
	 * available: the old goes; old not ready: the old goes */
	struct ds_pod oldp = {.name = "old",
	                      .scheduled = true,
	                      .phase = KUBE_POD_RUNNING,
	                      .ready = true,
	                      .created = 1,
	                      .hash = "h0"};
	struct ds_pod newp = {.name = "new",
	                      .scheduled = true,
	                      .phase = KUBE_POD_RUNNING,
	                      .created = 2,
	                      .hash = "h1"};
	struct ds_pod extra = {.name = "extra",
	                       .scheduled = true,
	                       .phase = KUBE_POD_RUNNING,
	                       .created = 3,
	                       .hash = "h1"};
	struct ds_pod *on[3];
	size_t del[3], failed[3], succ[3];
	struct ds_node_plan np;

	on[0] = &newp;
	on[1] = &oldp;
	ds_pods_on_node(true, true, on, 2, true, "h1", 0, 0, del, failed, succ, &np);
	CHECK(np.n_del == 0 && !np.create);
	newp.ready = true;
	on[0] = &newp;
	on[1] = &oldp;
	ds_pods_on_node(true, true, on, 2, true, "h1", 0, 0, del, failed, succ, &np);
	CHECK(np.n_del == 1 && on[del[0]] == &oldp);
	newp.ready = false;
	oldp.ready = false;
	on[0] = &oldp;
	on[1] = &newp;
	on[2] = &extra;
	ds_pods_on_node(true, true, on, 3, true, "h1", 0, 0, del, failed, succ, &np);
	CHECK(np.n_del == 2); /* the second new one, and the old one (not ready) */
	/* surge with no running pod creates */
	on[0] = &oldp;
	oldp.deleting = true;
	ds_pods_on_node(true, true, on, 1, true, "h1", 0, 0, del, failed, succ, &np);
	CHECK(np.create && np.n_del == 0);
	ds_pods_on_node(true, true, on, 1, false, "h1", 0, 0, del, failed, succ, &np);
	CHECK(!np.create && np.n_del == 0); /* without surge: wait for the deletion */
}

static void pod_body(void)
{
	cJSON *tmpl =
	        J("{\"metadata\":{\"labels\":{\"app\":\"x\"},\"annotations\":{\"a\":\"b\"}},"
	          "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}],"
	          "\"tolerations\":[{\"key\":\"node.kubernetes.io/not-ready\",\"operator\":"
	          "\"Exists\",\"effect\":\"NoExecute\",\"tolerationSeconds\":30},"
	          "{\"key\":\"mine\",\"operator\":\"Exists\"}],"
	          "\"affinity\":{\"nodeAffinity\":{"
	          "\"requiredDuringSchedulingIgnoredDuringExecution\":"
	          "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"a\",\"operator\":"
	          "\"Exists\"}]}]},\"preferredDuringSchedulingIgnoredDuringExecution\":[]}}}}");
	char *body = NULL;
	CHECK(ds_pod_body(tmpl, "ds", "uid-1", "2", "hash1", "node-7", &body) == 0);
	cJSON *pod = J(body);
	cJSON *md = cJSON_GetObjectItem(pod, "metadata"), *spec = cJSON_GetObjectItem(pod, "spec");
	cJSON *labels = cJSON_GetObjectItem(md, "labels");
	CHECK(!strcmp(cJSON_GetObjectItem(md, "generateName")->valuestring, "ds-"));
	CHECK(!strcmp(cJSON_GetObjectItem(labels, "app")->valuestring, "x"));
	CHECK(!strcmp(cJSON_GetObjectItem(labels, DS_GEN_LABEL)->valuestring, "2"));
	CHECK(!strcmp(cJSON_GetObjectItem(labels, DS_HASH_LABEL)->valuestring, "hash1"));
	CHECK(!strcmp(cJSON_GetObjectItem(cJSON_GetObjectItem(md, "annotations"), "a")->valuestring,
	              "b"));
	cJSON *ref = cJSON_GetArrayItem(cJSON_GetObjectItem(md, "ownerReferences"), 0);
	CHECK(ref && cJSON_IsTrue(cJSON_GetObjectItem(ref, "controller")) &&
	      !strcmp(cJSON_GetObjectItem(ref, "kind")->valuestring, "DaemonSet") &&
	      !strcmp(cJSON_GetObjectItem(ref, "uid")->valuestring, "uid-1"));
	/* tolerations: the not-ready one replaced in place (tolerationSeconds dropped), "mine"
	 * kept, then unreachable, disk, memory, pid, unschedulable appended (no hostNetwork) */
	cJSON *tols = cJSON_GetObjectItem(spec, "tolerations");
	CHECK(cJSON_GetArraySize(tols) == 7);
	cJSON *t0 = cJSON_GetArrayItem(tols, 0);
	CHECK(!strcmp(cJSON_GetObjectItem(t0, "key")->valuestring,
	              "node.kubernetes.io/not-ready") &&
	      !cJSON_GetObjectItem(t0, "tolerationSeconds"));
	CHECK(!strcmp(cJSON_GetObjectItem(cJSON_GetArrayItem(tols, 1), "key")->valuestring,
	              "mine"));
	CHECK(!strcmp(cJSON_GetObjectItem(cJSON_GetArrayItem(tols, 6), "key")->valuestring,
	              "node.kubernetes.io/unschedulable"));
	/* the required affinity is replaced by metadata.name In [node]; preferred kept */
	CHECK(!strcmp(ds_target_node(spec), "node-7"));
	cJSON *na = cJSON_GetObjectItem(cJSON_GetObjectItem(spec, "affinity"), "nodeAffinity");
	CHECK(cJSON_GetObjectItem(na, "preferredDuringSchedulingIgnoredDuringExecution") != NULL);
	cJSON *terms = cJSON_GetObjectItem(
	        cJSON_GetObjectItem(na, "requiredDuringSchedulingIgnoredDuringExecution"),
	        "nodeSelectorTerms");
	CHECK(cJSON_GetArraySize(terms) == 1 &&
	      !cJSON_GetObjectItem(cJSON_GetArrayItem(terms, 0), "matchExpressions"));
	cJSON_Delete(pod);
	free(body);

	/* adding the tolerations twice changes nothing (equal tolerations are kept as they are) */
	cJSON *s2 = J("{\"hostNetwork\":true}");
	CHECK(ds_add_daemon_tolerations(s2) == 0);
	char *a = cJSON_PrintUnformatted(s2);
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(s2, "tolerations")) == 7);
	CHECK(ds_add_daemon_tolerations(s2) == 0);
	char *b = cJSON_PrintUnformatted(s2);
	CHECK(!strcmp(a, b));
	free(a);
	free(b);
	cJSON_Delete(s2);

	/* no labels: refused as upstream ("unable to create pods, no labels") */
	cJSON *bare = J("{\"spec\":{}}");
	CHECK(ds_pod_body(bare, "ds", "u", NULL, "", "n", &body) == -EINVAL && !body);
	CHECK(ds_pod_body(bare, "ds", "u", NULL, "h", "n", &body) == 0);
	free(body);
	cJSON_Delete(bare);
	cJSON_Delete(tmpl);

	/* TestGetTargetNodeName */
	cJSON *sp = J("{\"nodeName\":\"n\"}");
	CHECK(!strcmp(ds_target_node(sp), "n"));
	cJSON_Delete(sp);
	sp = J("{}");
	CHECK(ds_target_node(sp) == NULL);
	cJSON_Delete(sp);
	sp = J("{\"affinity\":{\"nodeAffinity\":{"
	       "\"requiredDuringSchedulingIgnoredDuringExecution\":"
	       "{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":"
	       "\"In\",\"values\":[\"a\",\"b\"]}]}]}}}}");
	CHECK(ds_target_node(sp) == NULL); /* not unique */
	cJSON_Delete(sp);
	sp = J("{\"affinity\":{\"nodeAffinity\":{"
	       "\"requiredDuringSchedulingIgnoredDuringExecution\":"
	       "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"x\",\"operator\":"
	       "\"Exists\"}]},"
	       "{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"c\"]"
	       "}]}]}}}}");
	CHECK(ds_target_node(sp) && !strcmp(ds_target_node(sp), "c"));
	cJSON_Delete(sp);
}

static void scaled(void)
{
	int v;
	cJSON *x = J("\"10%\"");
	CHECK(ds_scaled(x, 15, &v) == 0 && v == 2); /* rounded up */
	cJSON_Delete(x);
	x = J("3");
	CHECK(ds_scaled(x, 15, &v) == 0 && v == 3);
	cJSON_Delete(x);
	x = J("\"x\"");
	CHECK(ds_scaled(x, 15, &v) == -EINVAL);
	cJSON_Delete(x);
	CHECK(ds_scaled(NULL, 15, &v) == 0 && v == 0);
}

/* update_test.go: TestDaemonSetUpdatesPods (maxUnavailable), TestDaemonSetUpdatesPodsWithMaxSurge,
 * TestDaemonSetUpdatesWhenNewPodIsNotReady / TestDaemonSetUpdatesAllOldPodsNotReady */
static void rolling(void)
{
	struct ds_pod pods[5];
	struct ds_pod *slot[5];
	struct ds_ru_node nodes[5];
	char names[5][16];
	const char *del[5], *create[5];
	size_t n_del, n_create;

	for (int i = 0; i < 5; i++) {
		snprintf(names[i], sizeof(names[i]), "n%d", i);
		pods[i] = (struct ds_pod){.name = names[i],
		                          .node = names[i],
		                          .scheduled = true,
		                          .phase = KUBE_POD_RUNNING,
		                          .ready = true,
		                          .hash = "old"};
		slot[i] = &pods[i];
		nodes[i] = (struct ds_ru_node){
		        .name = names[i], .pods = &slot[i], .n = 1, .run = true};
	}
	/* all old and available, maxUnavailable 1: one deleted, nothing created */
	ds_rolling_update(nodes, 5, 0, 1, 5, "new", NULL, 0, 0, del, &n_del, create, &n_create);
	CHECK(n_del == 1 && n_create == 0);
	/* maxUnavailable 2 */
	ds_rolling_update(nodes, 5, 0, 2, 5, "new", NULL, 0, 0, del, &n_del, create, &n_create);
	CHECK(n_del == 2);
	/* a node without a pod counts as unavailable: with maxUnavailable 1 nothing goes */
	nodes[0].n = 0;
	ds_rolling_update(nodes, 5, 0, 1, 5, "new", NULL, 0, 0, del, &n_del, create, &n_create);
	CHECK(n_del == 0);
	nodes[0].n = 1;
	/* an unavailable old pod is replaced at once, beyond maxUnavailable */
	pods[3].ready = false;
	pods[4].ready = false;
	ds_rolling_update(nodes, 5, 0, 1, 5, "new", NULL, 0, 0, del, &n_del, create, &n_create);
	CHECK(n_del == 2);
	pods[3].ready = pods[4].ready = true;
	/* a new pod not ready yet uses up the budget */
	pods[0].hash = "new";
	pods[0].ready = false;
	ds_rolling_update(nodes, 5, 0, 1, 5, "new", NULL, 0, 0, del, &n_del, create, &n_create);
	CHECK(n_del == 0);
	pods[0].ready = true;
	ds_rolling_update(nodes, 5, 0, 1, 5, "new", NULL, 0, 0, del, &n_del, create, &n_create);
	CHECK(n_del == 1 && strcmp(del[0], "n0") != 0);
	/* the template generation label counts as updated too */
	for (int i = 0; i < 5; i++) {
		pods[i].hash = "old";
		pods[i].gen = "2";
	}
	ds_rolling_update(nodes, 5, 0, 1, 5, "new", "2", 0, 0, del, &n_del, create, &n_create);
	CHECK(n_del == 0 && n_create == 0);
	for (int i = 0; i < 5; i++)
		pods[i].gen = NULL;

	/* surge 2: two new pods created next to available old ones, none deleted */
	ds_rolling_update(nodes, 5, 2, 0, 5, "new", NULL, 0, 0, del, &n_del, create, &n_create);
	CHECK(n_create == 2 && n_del == 0);
	/* a node with an available new pod beside its old one: the old one goes */
	struct ds_pod newp = {.name = "n1-new",
	                      .node = "n1",
	                      .scheduled = true,
	                      .phase = KUBE_POD_RUNNING,
	                      .ready = true,
	                      .hash = "new"};
	struct ds_pod *two[2] = {&pods[1], &newp};
	nodes[1].pods = two;
	nodes[1].n = 2;
	ds_rolling_update(nodes, 5, 2, 0, 5, "new", NULL, 0, 0, del, &n_del, create, &n_create);
	CHECK(n_del == 1 && !strcmp(del[0], "n1") && n_create == 2);
	/* the new pod not available yet: it counts against the surge */
	newp.ready = false;
	ds_rolling_update(nodes, 5, 2, 0, 5, "new", NULL, 0, 0, del, &n_del, create, &n_create);
	CHECK(n_del == 0 && n_create == 1);
	/* an unavailable old pod: a new pod at once, whatever the surge */
	pods[4].ready = false;
	ds_rolling_update(nodes, 5, 1, 0, 5, "new", NULL, 0, 0, del, &n_del, create, &n_create);
	CHECK(n_create == 1 && !strcmp(create[0], "n4"));
	/* an unavailable old pod on a node that should no longer run it: deleted */
	nodes[4].run = false;
	ds_rolling_update(nodes, 5, 1, 0, 4, "new", NULL, 0, 0, del, &n_del, create, &n_create);
	CHECK(n_del == 1 && !strcmp(del[0], "n4"));
}

/* the split body spliced per node is ds_pod_body's, byte for byte */
static void pod_body_split(void)
{
	static const char *const tmpls[] = {
	        "{\"metadata\":{\"labels\":{\"app\":\"x\"}},\"spec\":{\"containers\":[{\"name\":"
	        "\"c\",\"image\":\"i\"}]}}",
	        "{\"metadata\":{\"labels\":{\"app\":\"x\"},\"annotations\":{\"a\":\"b\"},"
	        "\"finalizers\":[\"f\"]},\"spec\":{\"hostNetwork\":true,\"affinity\":{"
	        "\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{"
	        "\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\","
	        "\"operator\":\"In\",\"values\":[\"old\"]}]}]}}}}}",
	};
	static const char *const nodes[] = {"node-7", "n", "a.b.example.com", "x\u00e9y"};
	struct ds_pod_body_split sp;

	for (size_t t = 0; t < sizeof(tmpls) / sizeof(tmpls[0]); t++) {
		cJSON *tmpl = J(tmpls[t]);
		CHECK(ds_pod_body_split(tmpl, "ds", "uid-1", t ? "3" : NULL, "h1", &sp) == 0);
		for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
			char *want = NULL, *got = NULL;
			CHECK(ds_pod_body(tmpl, "ds", "uid-1", t ? "3" : NULL, "h1", nodes[i],
			                  &want) == 0);
			CHECK(ds_pod_body_splice(&sp, nodes[i], &got) == 0);
			CHECK(want && got && !strcmp(want, got));
			free(want);
			free(got);
		}
		/* a name JSON escapes: refused, the caller builds that body whole */
		char *got = (char *)"x";
		CHECK(ds_pod_body_splice(&sp, "a\"b", &got) == -EINVAL && !got);
		ds_pod_body_split_free(&sp);
		cJSON_Delete(tmpl);
	}
	/* the template holds the marker itself: no split */
	cJSON *m = J("{\"metadata\":{\"labels\":{\"app\":\"kcmd-daemonset-node-name-marker\"}}}");
	CHECK(ds_pod_body_split(m, "ds", "u", NULL, "h", &sp) == -EEXIST && !sp.head);
	cJSON_Delete(m);
	/* no labels: as ds_pod_body */
	cJSON *bare = J("{\"spec\":{}}");
	CHECK(ds_pod_body_split(bare, "ds", "u", NULL, "", &sp) == -EINVAL);
	cJSON_Delete(bare);
}

/* ---- the worker's Node views (nodes.h) ---------------------------------------------------- */
/* a Node as the apiserver sends it: a large status beside what the predicates read */
static char *node_json(const char *name, const char *labels, const char *taints)
{
	char *buf = malloc(4096);
	snprintf(buf, 4096,
	         "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\","
	         "\"uid\":\"u-%s\",\"resourceVersion\":\"1\",\"labels\":%s,"
	         "\"annotations\":{\"a\":\"b\"}},\"spec\":{\"podCIDR\":\"10.0.0.0/24\","
	         "\"taints\":%s},\"status\":{\"capacity\":{\"cpu\":\"4\",\"pods\":\"110\"},"
	         "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}],"
	         "\"nodeInfo\":{\"kubeletVersion\":\"v1.37.2\"},\"images\":[{\"names\":[\"x\"]}]}}",
	         name, name, labels, taints);
	return buf;
}

static int see(struct ds_nodes *n, const char *name, const char *rv, const char *js)
{
	return ds_nodes_see(n, name, rv, js, js ? strlen(js) : 0);
}

static const cJSON *view(struct ds_nodes *n, const char *name)
{
	size_t cnt;
	const cJSON *const *v = ds_nodes_views(n, &cnt);
	ptrdiff_t i = ds_nodes_find(n, name);
	return i >= 0 && (size_t)i < cnt ? v[i] : NULL;
}

/* every template spec below gives the same answer over the view and over the full Node */
static void node_views_answer_as_nodes(void)
{
	static const char *const tspecs[] = {
	        "{}",
	        "{\"nodeSelector\":{\"zone\":\"a\"}}",
	        "{\"nodeSelector\":{\"zone\":\"b\"}}",
	        "{\"nodeName\":\"n1\"}",
	        "{\"nodeName\":\"n2\"}",
	        "{\"affinity\":{\"nodeAffinity\":{"
	        "\"requiredDuringSchedulingIgnoredDuringExecution\":"
	        "{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":"
	        "\"In\",\"values\":[\"n1\"]}]}]}}}}",
	        "{\"affinity\":{\"nodeAffinity\":{"
	        "\"requiredDuringSchedulingIgnoredDuringExecution\":"
	        "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":"
	        "\"NotIn\",\"values\":[\"a\"]}]}]}}}}",
	        "{\"tolerations\":[{\"key\":\"dedicated\",\"operator\":\"Exists\"}]}",
	};
	static const char *const taints[] = {
	        "[]",
	        "[{\"key\":\"dedicated\",\"value\":\"x\",\"effect\":\"NoSchedule\"}]",
	        "[{\"key\":\"dedicated\",\"value\":\"x\",\"effect\":\"NoExecute\"}]",
	        "[{\"key\":\"node.kubernetes.io/not-ready\",\"effect\":\"NoExecute\"}]",
	};
	struct ds_nodes *n;
	int checked = 0;

	CHECK(ds_nodes_new(&n) == 0);
	for (size_t t = 0; t < sizeof(taints) / sizeof(taints[0]); t++) {
		char *js = node_json("n1", "{\"zone\":\"a\"}", taints[t]);
		char rv[16];
		snprintf(rv, sizeof(rv), "%zu", t + 1);
		ds_nodes_begin(n);
		CHECK(see(n, "n1", rv, js) == 0);
		CHECK(ds_nodes_end(n) == 0);
		cJSON *full = J(js);
		const cJSON *v = view(n, "n1");
		CHECK(v != NULL);
		CHECK(cJSON_GetObjectItemCaseSensitive(v, "status") == NULL);
		for (size_t s = 0; v && s < sizeof(tspecs) / sizeof(tspecs[0]); s++) {
			cJSON *ts = J(tspecs[s]);
			bool r1, c1, r2, c2;
			ds_node_should_run(ts, full, &r1, &c1);
			ds_node_should_run(ts, v, &r2, &c2);
			CHECK(r1 == r2 && c1 == c2);
			checked += r1 + c1; /* some cases must say yes, some no */
			cJSON_Delete(ts);
		}
		cJSON_Delete(full);
		free(js);
	}
	CHECK(checked > 0 && checked < 2 * 8 * 4);
	ds_nodes_free(n);
}

static void node_views_refresh(void)
{
	struct ds_nodes *n;
	char *a = node_json("a", "{}", "[]"), *b = node_json("b", "{}", "[]");
	char *b2 = node_json("b", "{\"zone\":\"z\"}", "[]");
	size_t cnt;

	CHECK(ds_nodes_new(&n) == 0);
	ds_nodes_begin(n);
	CHECK(see(n, "b", "10", b) == 0);
	CHECK(see(n, "a", "11", a) == 0);
	CHECK(ds_nodes_end(n) == 0);
	CHECK(ds_nodes_parses(n) == 2);
	const cJSON *const *v = ds_nodes_views(n, &cnt);
	CHECK(cnt == 2);
	CHECK(!strcmp(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(v[0], "metadata"), "name")->valuestring,
	        "a"));
	CHECK(ds_nodes_find(n, "b") == 1 && ds_nodes_find(n, "c") == -1);

	/* the same versions again: no parse, the same views */
	const cJSON *va = view(n, "a");
	ds_nodes_begin(n);
	CHECK(see(n, "a", "11", a) == 0);
	CHECK(see(n, "b", "10", b) == 0);
	CHECK(ds_nodes_end(n) == 0);
	CHECK(ds_nodes_parses(n) == 2);
	CHECK(view(n, "a") == va);

	/* b changed: parsed again, its new labels in the view */
	ds_nodes_begin(n);
	CHECK(see(n, "a", "11", a) == 0);
	CHECK(see(n, "b", "12", b2) == 0);
	CHECK(ds_nodes_end(n) == 0);
	CHECK(ds_nodes_parses(n) == 3);
	const cJSON *l =
	        cJSON_GetObjectItem(cJSON_GetObjectItem(view(n, "b"), "metadata"), "labels");
	CHECK(cJSON_IsString(cJSON_GetObjectItem(l, "zone")));

	/* the caller's memo: kept while the view is, under its key only; a changed view clears it
	 */
	bool ma = false, mb = false;
	ptrdiff_t ib = ds_nodes_find(n, "b");
	CHECK(!ds_nodes_memo_get(n, (size_t)ib, 7, &ma, &mb));
	ds_nodes_memo_set(n, (size_t)ib, 7, true, false);
	ds_nodes_begin(n);
	CHECK(see(n, "a", "11", a) == 0);
	CHECK(see(n, "b", "12", b2) == 0);
	CHECK(ds_nodes_end(n) == 0);
	CHECK(ds_nodes_memo_get(n, (size_t)ds_nodes_find(n, "b"), 7, &ma, &mb) && ma && !mb);
	CHECK(!ds_nodes_memo_get(n, (size_t)ds_nodes_find(n, "b"), 8, &ma, &mb));
	CHECK(!ds_nodes_memo_get(n, (size_t)ds_nodes_find(n, "a"), 7, &ma, &mb));
	CHECK(!ds_nodes_memo_get(n, 99, 7, &ma, &mb));
	ds_nodes_begin(n);
	CHECK(see(n, "a", "11", a) == 0);
	CHECK(see(n, "b", "13", b2) == 0);
	CHECK(ds_nodes_end(n) == 0);
	CHECK(!ds_nodes_memo_get(n, (size_t)ds_nodes_find(n, "b"), 7, &ma, &mb));

	/* a gone from the cache: dropped */
	ds_nodes_begin(n);
	CHECK(see(n, "b", "12", b2) == 0);
	CHECK(ds_nodes_end(n) == 0);
	ds_nodes_views(n, &cnt);
	CHECK(cnt == 1 && ds_nodes_find(n, "a") == -1 && ds_nodes_find(n, "b") == 0);

	/* no name, JSON that does not parse: left out */
	ds_nodes_begin(n);
	CHECK(see(n, "b", "12", b2) == 0);
	CHECK(see(n, "x", "13", "{\"metadata\":{}}") == 0);
	CHECK(see(n, "y", "14", "{not json") == 0);
	CHECK(ds_nodes_end(n) == 0);
	ds_nodes_views(n, &cnt);
	CHECK(cnt == 1);

	/* many Nodes in reverse order come out sorted */
	ds_nodes_begin(n);
	for (int i = 99; i >= 0; i--) {
		char nm[16], *js;
		snprintf(nm, sizeof(nm), "n%03d", i);
		js = node_json(nm, "{}", "[]");
		CHECK(see(n, nm, "20", js) == 0);
		free(js);
	}
	CHECK(ds_nodes_end(n) == 0);
	v = ds_nodes_views(n, &cnt);
	CHECK(cnt == 100);
	for (size_t i = 1; i < cnt; i++)
		CHECK(strcmp(cJSON_GetObjectItem(cJSON_GetObjectItem(v[i - 1], "metadata"), "name")
		                     ->valuestring,
		             cJSON_GetObjectItem(cJSON_GetObjectItem(v[i], "metadata"), "name")
		                     ->valuestring) < 0);
	ds_nodes_free(n);
	free(a);
	free(b);
	free(b2);
}

/* the node handler's pre-check: heartbeats are the same, a label or taint change is not */
static void node_update_same(void)
{
	char *a = node_json("n1", "{\"zone\":\"a\"}", "[]");
	char *hb = strdup(a);
	char *relabel = node_json("n1", "{\"zone\":\"b\"}", "[]");
	char *tainted =
	        node_json("n1", "{\"zone\":\"a\"}", "[{\"key\":\"k\",\"effect\":\"NoSchedule\"}]");
	/* a heartbeat: another resourceVersion and condition, spec and labels as they were */
	char *p = strstr(hb, "\"resourceVersion\":\"1\"");
	p[strlen("\"resourceVersion\":\"")] = '2';
	p = strstr(hb, "\"True\"");
	memcpy(p, "\"Unkn\"", 6);

	CHECK(ds_node_update_same(a, strlen(a), hb, strlen(hb)));
	CHECK(!ds_node_update_same(a, strlen(a), relabel, strlen(relabel)));
	CHECK(!ds_node_update_same(a, strlen(a), tainted, strlen(tainted)));
	static const char bare1[] = "{\"metadata\":{\"name\":\"n\",\"resourceVersion\":\"1\"}}";
	static const char bare2[] = "{\"metadata\":{\"name\":\"n\",\"resourceVersion\":\"2\"},"
	                            "\"status\":{}}";
	static const char lab[] = "{\"metadata\":{\"name\":\"n\",\"labels\":{}}}";
	CHECK(ds_node_update_same(bare1, strlen(bare1), bare2, strlen(bare2)));
	CHECK(!ds_node_update_same(bare1, strlen(bare1), lab, strlen(lab)));
	CHECK(!ds_node_update_same(a, strlen(a), "{\"spec\":", 8));
	CHECK(!ds_node_update_same(NULL, 0, a, strlen(a)));
	free(a);
	free(hb);
	free(relabel);
	free(tainted);
}

int main(void)
{
	simple_launches();
	selectors();
	taints();
	existing_pods();
	status();
	surge();
	pod_body();
	pod_body_split();
	node_views_answer_as_nodes();
	node_views_refresh();
	node_update_same();
	ds_nodes_free(NULL);
	scaled();
	rolling();
	if (fails)
		fprintf(stderr, "%d check(s) failed\n", fails);
	return fails ? 1 : 0;
}
