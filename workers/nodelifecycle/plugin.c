/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/nodelifecycle/plugin.c: kcm's node-lifecycle-controller (no alias), on by default,
 * client "node-controller" (docs/nodelifecycle.md). Since the taint manager was split out
 * (SeparateTaintEvictionController, GA) it only manages Node conditions and taints; the pods of
 * a NoExecute-tainted node are evicted by the taint-eviction-controller (workers/tainteviction).
 *
 * Shape.
 *   Nodes and Leases are cached whole (their JSON), Pods typed (nodeName). The dispatcher queues
 *   a node name on every node add, update and delete (upstream's nodeUpdateQueue: the NoSchedule
 *   condition taints and the beta labels; a delete also forgets the node's pending MarkPodsNotReady
 *   retry) and a pod key when a pod is bound or moved to a node (podUpdateQueue).
 *   One worker process holds upstream's in-memory state: the health record of every node seen,
 *   the known-node set, the zone states and one rate-limited timed queue per zone of nodes to
 *   give a NoExecute taint. Two timers of the worker's event loop run upstream's periodic loops:
 *   monitorNodeHealth every --node-monitor-period and doNoExecuteTaintingPass every 100 ms while
 *   a zone queue holds a node (upstream's runs even when they are all empty; it then does
 *   nothing). A worker that dies loses that state as a restarted kcm does: the next worker starts
 *   from the cache as upstream's controller starts, registers every node again (RegisteredNode,
 *   markNodeAsReachable) and decides again from the nodes' heartbeats.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "ipc/loop.h"
#include "kcmd/kcmd.h"
#include "kube/client.h"
#include "shm/record-model.h"
#include "shm/records.h"
#include "workers/nodelifecycle/nlc.h"
#include "workers/worker.h"

enum { NLC_Q_NODE, NLC_Q_POD };
enum {
	NLC_M_ZONE_HEALTH,
	NLC_M_ZONE_SIZE,
	NLC_M_UNHEALTHY,
	NLC_M_EVICTIONS,
	NLC_M_NODE_DURATION,
	NLC_M_ALL_DURATION,
	NLC_M_N
};

static const struct kcmd_metric_label zone_label[] = {{"zone", NULL}};
static const double node_buckets[] = {0.001, 0.004, 0.016, 0.064, 0.256, 1.024, 4.096, 16.384};
static const double all_buckets[] = {0.01, 0.04, 0.16, 0.64, 2.56, 10.24, 40.96, 163.84};
static const struct kcmd_metric nlc_metrics[NLC_M_N] = {
        [NLC_M_ZONE_HEALTH] = {.name = "node_collector_zone_health",
                               .help = "Gauge measuring percentage of healthy nodes per zone.",
                               .type = KCMD_METRIC_GAUGE,
                               .stability = KCMD_METRIC_ALPHA,
                               .labels = zone_label,
                               .n_labels = 1},
        [NLC_M_ZONE_SIZE] = {.name = "node_collector_zone_size",
                             .help = "Gauge measuring number of registered Nodes per zones.",
                             .type = KCMD_METRIC_GAUGE,
                             .stability = KCMD_METRIC_ALPHA,
                             .labels = zone_label,
                             .n_labels = 1},
        [NLC_M_UNHEALTHY] = {.name = "node_collector_unhealthy_nodes_in_zone",
                             .help = "Gauge measuring number of not Ready Nodes per zones.",
                             .type = KCMD_METRIC_GAUGE,
                             .stability = KCMD_METRIC_ALPHA,
                             .labels = zone_label,
                             .n_labels = 1},
        [NLC_M_EVICTIONS] = {.name = "node_collector_evictions_total",
                             .help = "Number of Node evictions that happened since current "
                                     "instance of NodeController started.",
                             .type = KCMD_METRIC_COUNTER,
                             .stability = KCMD_METRIC_STABLE,
                             .labels = zone_label,
                             .n_labels = 1},
        [NLC_M_NODE_DURATION] = {.name = "node_collector_update_node_health_duration_seconds",
                                 .help = "Duration in seconds for NodeController to update the "
                                         "health of a single node.",
                                 .type = KCMD_METRIC_HISTOGRAM,
                                 .stability = KCMD_METRIC_ALPHA,
                                 .buckets = node_buckets,
                                 .n_buckets = 8},
        [NLC_M_ALL_DURATION] = {.name = "node_collector_update_all_nodes_health_duration_seconds",
                                .help = "Duration in seconds for NodeController to update the "
                                        "health of all nodes.",
                                .type = KCMD_METRIC_HISTOGRAM,
                                .stability = KCMD_METRIC_ALPHA,
                                .buckets = all_buckets,
                                .n_buckets = 8},
};

/* ---- handlers (kcmd-dispatcher) ----------------------------------------------------------- */

static void node_event(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	if (ev->meta)
		kcmd_queue_add(ctx, NLC_Q_NODE, kcmd_meta_name(ev->meta));
	else if (ev->old)
		kcmd_queue_add(ctx, NLC_Q_NODE, kcmd_obj_name(ev->old));
}

static void add_pod_key(struct inf_handler_ctx *ctx, const char *ns, const char *name)
{
	char key[KCMD_KEY_MAX + 1];
	if (kcmd_key_make(key, sizeof(key), ns, name) > 0)
		kcmd_queue_add(ctx, NLC_Q_POD, key);
}

/* podUpdated(nil, pod) */
static void pod_add(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	const struct kube_pod *p = ev->obj;
	if (p && p->node_name && *p->node_name)
		add_pod_key(ctx, p->meta.namespace, p->meta.name);
}

/* podUpdated(old, new): queued when nodeName is set and differs from the old one */
static void pod_update(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	const struct kube_pod *p = ev->obj;
	struct shm_obj copy = {0};
	struct shm_pod_view old;
	bool changed = true;

	if (!p || !p->node_name || !*p->node_name)
		return;
	if (ev->old && shm_obj_clone(ev->old, &copy) == 0) {
		if (shm_pod_view_init(&copy, &old) == 0)
			changed = strcmp(old.pod.node_name ? old.pod.node_name : "",
			                 p->node_name) != 0;
		shm_pod_view_free(&old);
	}
	if (changed)
		add_pod_key(ctx, p->meta.namespace, p->meta.name);
}

static int add_node(const struct shm_obj *o, void *ud)
{
	kcmd_queue_add(ud, NLC_Q_NODE, kcmd_obj_name(o));
	return 0;
}

static void nlc_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)restarted;
	if (queue == NLC_Q_NODE)
		kcmd_cache_list(ctx->arena, "", "nodes", NULL, add_node, ctx);
}

static const char *const nlc_queue_names[] = {NLC_NODE_QUEUE, NLC_POD_QUEUE, NULL};
static const struct inf_handler_entry nlc_entries[] = {
        {.group = "",
         .resource = "nodes",
         .on_add = node_event,
         .on_update = node_event,
         .on_delete = node_event},
        {.group = "", .resource = "pods", .on_add = pod_add, .on_update = pod_update},
};
static const struct inf_handler_table nlc_handlers = {
        .controller = NLC_CONTROLLER,
        .queues = nlc_queue_names,
        .entries = nlc_entries,
        .n_entries = sizeof(nlc_entries) / sizeof(nlc_entries[0]),
        .resync = nlc_resync,
};

/* ---- the worker's state ------------------------------------------------------------------- */

struct nlc_rec { /* per node name: nodeHealthMap, knownNodeSet, nodesToRetry */
	char *name;
	char *uid;  /* the known node's uid (RemovingNode's reference) */
	bool known; /* in knownNodeSet */
	bool retry; /* in nodesToRetry */
	struct nlc_health health;
};

struct nlc_zone {
	char *key;
	bool has_state; /* in zoneStates */
	enum nlc_zone_state state;
	struct nlc_rlq tainter; /* zoneNoExecuteTainter[key]: never removed, as upstream */
};

struct nlc {
	struct wk_ctx *ctx;
	struct kcmd_metrics *met;
	struct ipc_source *monitor_timer, *taint_timer;
	bool synced;
	int64_t period, startup_grace, monitor_grace; /* ns */
	float eviction_qps, secondary_qps, unhealthy_threshold;
	int32_t large_cluster;
	struct nlc_rec *recs;
	size_t n_recs, cap_recs;
	struct nlc_zone *zones;
	size_t n_zones, cap_zones;
	uint64_t taint_due_us; /* the next tainting pass run from inside a health pass (mono) */
};

static kube_time_t now_ns(void)
{
	return kube_time_now();
}

static uint64_t mono_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void sleep_ns(int64_t ns)
{
	nanosleep(&(struct timespec){.tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000}, NULL);
}

static struct nlc_rec *rec_get(struct nlc *s, const char *name, bool create)
{
	for (size_t i = 0; i < s->n_recs; i++)
		if (!strcmp(s->recs[i].name, name))
			return &s->recs[i];
	if (!create)
		return NULL;
	if (s->n_recs == s->cap_recs) {
		size_t c = s->cap_recs ? s->cap_recs * 2 : 16;
		struct nlc_rec *p = realloc(s->recs, c * sizeof(*p));
		if (!p)
			return NULL;
		s->recs = p;
		s->cap_recs = c;
	}
	struct nlc_rec *r = &s->recs[s->n_recs];
	*r = (struct nlc_rec){.name = strdup(name)};
	if (!r->name)
		return NULL;
	s->n_recs++;
	return r;
}

static struct nlc_zone *zone_get(struct nlc *s, const char *key)
{
	for (size_t i = 0; i < s->n_zones; i++)
		if (!strcmp(s->zones[i].key, key))
			return &s->zones[i];
	return NULL;
}

/* ---- API helpers -------------------------------------------------------------------------- */

static const char *errtext(const struct kube_response *rs, int r)
{
	return rs->error.message[0] ? rs->error.message : strerror(-r);
}

static int get_node(struct nlc *s, const char *name, const char *rv, cJSON **ret)
{
	struct kube_response rs = {0};
	int r = kube_client_request(s->ctx->kc,
	                            &(struct kube_request){.verb = KUBE_GET,
	                                                   .version = "v1",
	                                                   .resource = "nodes",
	                                                   .name = name,
	                                                   .resource_version = rv},
	                            NULL, NULL, &rs);
	*ret = NULL;
	if (r == 0 && !(*ret = rs.body ? cJSON_ParseWithLength(rs.body, rs.body_len) : NULL))
		r = -EBADMSG;
	if (r < 0 && r != -ENOENT)
		kcmd_log_v(2, "get node %s: %s", name, errtext(&rs, r));
	kube_response_clear(&rs);
	return r;
}

static int patch_node(struct nlc *s, const char *name, const char *body)
{
	struct kube_response rs = {0};
	int r = kube_client_request(s->ctx->kc,
	                            &(struct kube_request){.verb = KUBE_PATCH,
	                                                   .version = "v1",
	                                                   .resource = "nodes",
	                                                   .name = name,
	                                                   .patch_type = KUBE_PATCH_STRATEGIC,
	                                                   .body = body,
	                                                   .body_len = strlen(body)},
	                            NULL, NULL, &rs);
	if (r < 0)
		kcmd_log_v(2, "patch node %s: %s", name, errtext(&rs, r));
	kube_response_clear(&rs);
	return r;
}

/* AddOrUpdateTaintOnNode (del == NULL) or RemoveTaintOffNode (add == NULL): read the node (the
 * apiserver's cache first, then the latest), change the list, PATCH it with its
 * resourceVersion; a Conflict is retried (UpdateTaintBackoff: 5 steps, 100 ms, jitter 1.0). */
static int taint_update(struct nlc *s, const char *name, const struct nlc_taint *add, size_t n_add,
                        const struct nlc_taint *del, size_t n_del, kube_time_t now)
{
	int r = 0;

	if (!n_add && !n_del)
		return 0;
	for (int step = 0; step < 5; step++) {
		cJSON *node;
		char *patch = NULL;
		if (step)
			sleep_ns(100000000ll + (int64_t)(rand() % 100000000));
		if ((r = get_node(s, name, step == 0 ? "0" : NULL, &node)) < 0)
			return r;
		r = nlc_taints_patch(node, add, n_add, del, n_del, now, &patch);
		cJSON_Delete(node);
		if (r <= 0)
			return r;
		r = patch_node(s, name, patch);
		free(patch);
		if (r != -ESTALE)
			return r;
	}
	return r;
}

/* SwapNodeControllerTaint: add (timeAdded now), then remove the others (only those the given
 * node holds: RemoveTaintOffNode's check). Returns true on success. */
static bool swap_taints(struct nlc *s, const cJSON *node, const char *name,
                        const struct nlc_taint *add, size_t n_add, const struct nlc_taint *del,
                        size_t n_del)
{
	struct nlc_taint held[NLC_MAX_NOSCHED];
	size_t nh = 0;
	int r = taint_update(s, name, add, n_add, NULL, 0, now_ns());

	if (r < 0) {
		kcmd_log_error("unable to taint %zu taint(s) on unresponsive Node \"%s\": %s",
		               n_add, name, strerror(-r));
		return false;
	}
	kcmd_log_v(4, "Added taint to node node=\"%s\"", name);
	for (size_t i = 0; i < n_del && nh < NLC_MAX_NOSCHED; i++)
		if (nlc_taint_exists(node, del[i].key, del[i].effect))
			held[nh++] = del[i];
	if ((r = taint_update(s, name, NULL, 0, held, nh, 0)) < 0) {
		kcmd_log_error(
		        "unable to remove %zu unneeded taint(s) from unresponsive Node \"%s\": %s",
		        nh, name, strerror(-r));
		return false;
	}
	kcmd_log_v(4, "Made sure that node has no taint node=\"%s\"", name);
	return true;
}

static const struct nlc_taint unreachable_taint = {NLC_TAINT_UNREACHABLE, "NoExecute"};
static const struct nlc_taint not_ready_taint = {NLC_TAINT_NOT_READY, "NoExecute"};

static const char *node_name(const cJSON *node)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(node, "metadata"), "name");
	return cJSON_IsString(n) ? n->valuestring : "";
}

static const char *node_uid(const cJSON *node)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(node, "metadata"), "uid");
	return cJSON_IsString(n) ? n->valuestring : "";
}

static char *zone_of(const cJSON *node)
{
	char *z = NULL;
	nlc_zone_key(cJSON_GetObjectItemCaseSensitive(
	                     cJSON_GetObjectItemCaseSensitive(node, "metadata"), "labels"),
	             &z);
	return z;
}

/* markNodeAsReachable: both NoExecute taints off the node (when it holds them), then out of
 * its zone's queue. Returns 1 removed from the queue, 0 not queued, -errno. */
static int mark_reachable(struct nlc *s, const cJSON *node)
{
	const char *name = node_name(node);
	int r;

	if (nlc_taint_exists(node, unreachable_taint.key, unreachable_taint.effect) &&
	    (r = taint_update(s, name, NULL, 0, &unreachable_taint, 1, 0)) < 0) {
		kcmd_log_error("Failed to remove unreachable taint from node node=\"%s\": %s", name,
		               strerror(-r));
		return r;
	}
	if (nlc_taint_exists(node, not_ready_taint.key, not_ready_taint.effect) &&
	    (r = taint_update(s, name, NULL, 0, &not_ready_taint, 1, 0)) < 0) {
		kcmd_log_error("Failed to remove not-ready taint from node node=\"%s\": %s", name,
		               strerror(-r));
		return r;
	}
	char *zk = zone_of(node);
	struct nlc_zone *z = zk ? zone_get(s, zk) : NULL;
	free(zk);
	return z && nlc_rlq_remove(&z->tainter, name) ? 1 : 0;
}

/* addPodEvictorForNewZone */
static void add_zone(struct nlc *s, const cJSON *node)
{
	char *zk = zone_of(node);
	struct nlc_zone *z;

	if (!zk)
		return;
	if ((z = zone_get(s, zk))) {
		/* a zone that left zoneStates and came back: upstream makes it a new queue */
		if (!z->has_state) {
			z->has_state = true;
			z->state = NLC_ZONE_INITIAL;
			nlc_rlq_free(&z->tainter);
			nlc_rlq_init(&z->tainter, s->eviction_qps, now_ns());
			kcmd_log_info("Initializing eviction metric for zone zone=\"%s\"", zk);
			kcmd_metric_add(s->met, NLC_M_EVICTIONS, (const char *[]){zk}, 0);
		}
		free(zk);
		return;
	}
	if (s->n_zones == s->cap_zones) {
		size_t c = s->cap_zones ? s->cap_zones * 2 : 4;
		struct nlc_zone *p = realloc(s->zones, c * sizeof(*p));
		if (!p) {
			free(zk);
			return;
		}
		s->zones = p;
		s->cap_zones = c;
	}
	z = &s->zones[s->n_zones++];
	*z = (struct nlc_zone){.key = zk, .has_state = true, .state = NLC_ZONE_INITIAL};
	nlc_rlq_init(&z->tainter, s->eviction_qps, now_ns());
	kcmd_log_info("Initializing eviction metric for zone zone=\"%s\"", zk);
	kcmd_metric_add(s->met, NLC_M_EVICTIONS, (const char *[]){zk}, 0);
}

static void node_ev(struct nlc *s, const char *name, const char *uid, const char *type,
                    const char *reason, const char *fmt, const char *arg)
{
	struct kcmd_object_ref ref = {
	        .api_version = "v1", .kind = "Node", .ns = "", .name = name, .uid = uid};
	int r = kcmd_event_record(s->ctx->kc, NLC_EVENT_COMPONENT, &ref, type, reason, fmt, name,
	                          arg);
	if (r < 0)
		kcmd_log_v(2, "event %s about node %s not recorded: %s", reason, name,
		           strerror(-r));
}

/* ---- MarkPodsNotReady --------------------------------------------------------------------- */

/* One pod's JSON (MarkPodsNotReady): when bound to the node and its Ready condition is to be set
 * False, sets it and returns 1 with *ret_body, the PUT to pods/<name>/status; 0 when nothing is
 * to write; -ENOMEM. */
static int pod_prepare(cJSON *pod, const char *node, char **ret_body)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(pod, "metadata");
	const cJSON *ns = cJSON_GetObjectItemCaseSensitive(meta, "namespace");
	const cJSON *nm = cJSON_GetObjectItemCaseSensitive(meta, "name");
	const cJSON *nn = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(pod, "spec"), "nodeName");
	int r;

	*ret_body = NULL;
	if (!cJSON_IsString(nn) || strcmp(nn->valuestring, node) || !cJSON_IsString(ns) ||
	    !cJSON_IsString(nm))
		return 0;
	if ((r = nlc_pod_mark_not_ready(pod, now_ns())) <= 0)
		return r;
	kcmd_log_v(2, "Updating ready status of pod to false pod=\"%s/%s\"", ns->valuestring,
	           nm->valuestring);
	if (!cJSON_HasObjectItem(pod, "apiVersion"))
		cJSON_AddStringToObject(pod, "apiVersion", "v1");
	if (!cJSON_HasObjectItem(pod, "kind"))
		cJSON_AddStringToObject(pod, "kind", "Pod");
	if (!(*ret_body = cJSON_PrintUnformatted(pod)))
		return -ENOMEM;
	return 1;
}

static const char *pod_str(const cJSON *pod, const char *field)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(pod, "metadata"), field);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The pod's status write ended with r: gone is no error and no Event; otherwise the pod's
 * NodeNotReady Event (after the write, as upstream). Returns 0 or r. */
static int pod_written(struct nlc *s, const cJSON *pod, int r, const struct kube_response *rs)
{
	const char *ns = pod_str(pod, "namespace"), *nm = pod_str(pod, "name");

	if (r == -ENOENT)
		return 0;
	if (r < 0)
		kcmd_log_info("Failed to update status for pod pod=\"%s/%s\" err=\"%s\"", ns, nm,
		              errtext(rs, r));
	struct kcmd_object_ref ref = {.api_version = "v1",
	                              .kind = "Pod",
	                              .ns = ns,
	                              .name = nm,
	                              .uid = pod_str(pod, "uid")};
	int er = kcmd_event_record(s->ctx->kc, NLC_EVENT_COMPONENT, &ref, KCMD_EVENT_WARNING,
	                           "NodeNotReady", "Node is not ready");
	if (er < 0)
		kcmd_log_v(2, "event NodeNotReady about pod %s/%s not recorded: %s", ns, nm,
		           strerror(-er));
	return r;
}

/* One pod marked alone (the pod queue's sync): 0 (done, nothing to do, or gone) or -errno */
static int mark_pod(struct nlc *s, cJSON *pod, const char *node)
{
	struct kube_response rs = {0};
	char *body = NULL;
	int r = pod_prepare(pod, node, &body);

	if (r <= 0)
		return r;
	r = kube_client_request(s->ctx->kc,
	                        &(struct kube_request){.verb = KUBE_UPDATE,
	                                               .version = "v1",
	                                               .resource = "pods",
	                                               .ns = pod_str(pod, "namespace"),
	                                               .name = pod_str(pod, "name"),
	                                               .subresource = "status",
	                                               .body = body,
	                                               .body_len = strlen(body),
	                                               .body_kind = "Pod"},
	                        NULL, NULL, &rs);
	free(body);
	r = pod_written(s, pod, r, &rs);
	kube_response_clear(&rs);
	return r;
}

static void taint_if_due(struct nlc *s);

/* A pod of a node whose Ready condition MarkPodsNotReady sets False (namespace/name). */
struct pod_ref {
	char *ns, *name;
};
struct pod_refs {
	struct pod_ref *v;
	size_t n, cap;
	const char *node;
};

static void pod_refs_free(struct pod_refs *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].ns);
		free(l->v[i].name);
	}
	free(l->v);
	*l = (struct pod_refs){0};
}

/* From the cache: a pod bound to the node whose first Ready condition is there and not False
 * (UpdatePodCondition with status False changes nothing else: a pod without the condition, or
 * with it False already, is not written). */
static int collect_pod_ref(const struct shm_obj *o, void *ud)
{
	struct pod_refs *l = ud;
	struct shm_obj cp;
	struct shm_pod_view v;
	int r;

	if ((r = shm_obj_dup(o, &cp)) < 0)
		return r;
	r = shm_pod_view_init(&cp, &v);
	bool want =
	        r == 0 && v.pod.node_name && !strcmp(v.pod.node_name, l->node) &&
	        (v.pod.ready_status == KUBE_COND_TRUE || v.pod.ready_status == KUBE_COND_UNKNOWN);
	if (want && l->n == l->cap) {
		size_t c = l->cap ? l->cap * 2 : 16;
		struct pod_ref *nv = realloc(l->v, c * sizeof(*nv));
		if (!nv) {
			shm_pod_view_free(&v);
			return -ENOMEM;
		}
		l->v = nv;
		l->cap = c;
	}
	if (want) {
		struct pod_ref *pr = &l->v[l->n];
		pr->ns = strdup(v.pod.meta.namespace ? v.pod.meta.namespace : "");
		pr->name = strdup(v.pod.meta.name ? v.pod.meta.name : "");
		if (!pr->ns || !pr->name) {
			free(pr->ns);
			free(pr->name);
			shm_pod_view_free(&v);
			return -ENOMEM;
		}
		l->n++;
	}
	shm_pod_view_free(&v);
	return 0; /* an unreadable record: skipped, as a pod the lister does not return */
}

/* The pods of the node MarkPodsNotReady writes, from the arena's node index (upstream reads
 * its pod informer's spec.nodeName index): no request. Returns 0 or -errno. */
static int node_pods_to_mark(struct nlc *s, const char *node, struct pod_refs *ret)
{
	int r;

	*ret = (struct pod_refs){.node = node};
	kcmd_log_v(2, "Update ready status of pods on node node=\"%s\"", node);
	r = kcmd_cache_list_pods_on_node(s->ctx->arena, node, collect_pod_ref, ret);
	if (r < 0) {
		kcmd_log_error("unable to read the pods of node %s from the cache: %s", node,
		               strerror(-r));
		pod_refs_free(ret);
		return r;
	}
	return 0;
}

/* ---- monitorNodeHealth -------------------------------------------------------------------- */

struct node_list {
	cJSON **nodes;
	size_t n, cap;
};

static int collect_node(const struct shm_obj *o, void *ud)
{
	struct node_list *l = ud;
	size_t len = 0;
	const char *json = kcmd_obj_json(o, &len);
	cJSON *n = json ? cJSON_ParseWithLength(json, len) : NULL;

	if (!n)
		return 0; /* unreadable: skipped this pass */
	if (l->n == l->cap) {
		size_t c = l->cap ? l->cap * 2 : 16;
		cJSON **p = realloc(l->nodes, c * sizeof(*p));
		if (!p) {
			cJSON_Delete(n);
			return -ENOMEM;
		}
		l->nodes = p;
		l->cap = c;
	}
	l->nodes[l->n++] = n;
	return 0;
}

static void node_list_free(struct node_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		cJSON_Delete(l->nodes[i]);
	free(l->nodes);
}

static void lease_of(struct nlc *s, const char *name, struct nlc_health_in *in)
{
	struct shm_obj *o = NULL;
	size_t len = 0;
	const char *json;

	in->lease_found = false;
	in->lease_renew = 0;
	if (kcmd_cache_get(s->ctx->arena, "coordination.k8s.io", "leases", NLC_LEASE_NAMESPACE,
	                   name, &o) < 0)
		return;
	in->lease_found = true;
	json = kcmd_obj_json(o, &len);
	cJSON *l = json ? cJSON_ParseWithLength(json, len) : NULL;
	const cJSON *rt = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(l, "spec"), "renewTime");
	if (cJSON_IsString(rt) &&
	    kube_time_parse(rt->valuestring, strlen(rt->valuestring), &in->lease_renew) < 0)
		in->lease_renew = 0;
	cJSON_Delete(l);
	kcmd_obj_free(o);
}

/* PUT the node (modified by nlc_node_health) to nodes/<name>/status */
static int update_status(struct nlc *s, cJSON *node)
{
	struct kube_response rs = {0};
	char *body;
	int r;

	if (!cJSON_HasObjectItem(node, "apiVersion"))
		cJSON_AddStringToObject(node, "apiVersion", "v1");
	if (!cJSON_HasObjectItem(node, "kind"))
		cJSON_AddStringToObject(node, "kind", "Node");
	if (!(body = cJSON_PrintUnformatted(node)))
		return -ENOMEM;
	r = kube_client_request(s->ctx->kc,
	                        &(struct kube_request){.verb = KUBE_UPDATE,
	                                               .version = "v1",
	                                               .resource = "nodes",
	                                               .name = node_name(node),
	                                               .subresource = "status",
	                                               .body = body,
	                                               .body_len = strlen(body),
	                                               .body_kind = "Node"},
	                        NULL, NULL, &rs);
	free(body);
	if (r < 0)
		kcmd_log_error("Error updating node node=\"%s\": %s", node_name(node),
		               errtext(&rs, r));
	kube_response_clear(&rs);
	return r;
}

/* tryUpdateNodeHealth once: 0 with *out, or the status update's error */
static int try_update_health(struct nlc *s, cJSON *node, struct nlc_health_out *out)
{
	struct nlc_rec *rec = rec_get(s, node_name(node), true);
	struct nlc_health_in in = {.now = now_ns(),
	                           .startup_grace = s->startup_grace,
	                           .monitor_grace = s->monitor_grace};
	int r;

	if (!rec)
		return -ENOMEM;
	lease_of(s, node_name(node), &in);
	if ((r = nlc_node_health(&rec->health, node, &in, out)) < 0)
		return r;
	if (!rec->health.present)
		kcmd_log_info("Missing timestamp for Node. Assuming now as a timestamp node=\"%s\"",
		              node_name(node));
	rec->health = out->health; /* the deferred set, whatever the update does */
	if (!out->update_status)
		return 0;
	if ((r = update_status(s, node)) < 0)
		return r;
	rec->health = out->after_update;
	return 0;
}

/* processTaintBaseEviction (the decision: nlc_taint_base_eviction) */
static void taint_base_eviction(struct nlc *s, const cJSON *node, enum nlc_cond observed)
{
	const char *name = node_name(node);
	struct nlc_tb_decision d;
	struct nlc_zone *z;
	char *zk;
	int r;

	nlc_taint_base_eviction(node, observed, &d);
	switch (d.action) {
	case NLC_TB_SWAP:
		if (!swap_taints(s, node, name, &d.add, 1, &d.del, 1))
			kcmd_log_error(
			        "Failed to instantly swap %s to %s. Will try again in the next "
			        "cycle",
			        observed == NLC_FALSE ? "UnreachableTaint" : "NotReadyTaint",
			        observed == NLC_FALSE ? "NotReadyTaint" : "UnreachableTaint");
		break;
	case NLC_TB_QUEUE: /* markNodeForTainting */
		if (!(zk = zone_of(node)))
			break;
		if ((z = zone_get(s, zk))) {
			if (d.requeue)
				nlc_rlq_remove(&z->tainter, name);
			if (nlc_rlq_add(&z->tainter, name, node_uid(node), now_ns()) > 0)
				kcmd_log_v(
				        2, "Node is %s. Adding it to the Taint queue node=\"%s\"",
				        observed == NLC_FALSE ? "NotReady" : "unresponsive", name);
		}
		free(zk);
		break;
	case NLC_TB_REACHABLE:
		if ((r = mark_reachable(s, node)) < 0)
			kcmd_log_error("Failed to remove taints from node. Will retry in next "
			               "iteration node=\"%s\"",
			               name);
		else if (r > 0)
			kcmd_log_v(2, "Node is healthy again, removed all taints node=\"%s\"",
			           name);
		break;
	case NLC_TB_NONE:
		break;
	}
}

struct zone_acc {
	char *key;
	enum nlc_cond *ready;
	size_t n, cap;
};

static int zone_acc_add(struct zone_acc **acc, size_t *n, const char *key, enum nlc_cond c)
{
	struct zone_acc *z = NULL;
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*acc)[i].key, key))
			z = &(*acc)[i];
	if (!z) {
		struct zone_acc *p = realloc(*acc, (*n + 1) * sizeof(*p));
		if (!p)
			return -ENOMEM;
		*acc = p;
		z = &p[(*n)++];
		*z = (struct zone_acc){.key = strdup(key)};
		if (!z->key)
			return -ENOMEM;
	}
	if (z->n == z->cap) {
		size_t nc = z->cap ? z->cap * 2 : 8;
		enum nlc_cond *p = realloc(z->ready, nc * sizeof(*p));
		if (!p)
			return -ENOMEM;
		z->ready = p;
		z->cap = nc;
	}
	z->ready[z->n++] = c;
	return 0;
}

/* handleDisruption: the decision is nlc_handle_disruption's; here its effects */
static void handle_disruption(struct nlc *s, struct zone_acc *acc, size_t n_acc,
                              const struct node_list *nodes)
{
	struct nlc_disruption_params prm = {.eviction_qps = s->eviction_qps,
	                                    .secondary_qps = s->secondary_qps,
	                                    .unhealthy_threshold = s->unhealthy_threshold,
	                                    .large_cluster_threshold = s->large_cluster};
	struct nlc_zone_in *in = calloc(n_acc ? n_acc : 1, sizeof(*in));
	struct nlc_zone_st *zs = calloc(s->n_zones ? s->n_zones : 1, sizeof(*zs));
	kube_time_t now = now_ns();

	if (!in || !zs)
		goto out;
	for (size_t i = 0; i < n_acc; i++)
		in[i] = (struct nlc_zone_in){
		        .key = acc[i].key, .ready = acc[i].ready, .n = acc[i].n};
	for (size_t i = 0; i < s->n_zones; i++)
		zs[i] = (struct nlc_zone_st){.key = s->zones[i].key,
		                             .has_state = s->zones[i].has_state,
		                             .state = s->zones[i].state};
	enum nlc_disruption d = nlc_handle_disruption(&prm, in, n_acc, zs, s->n_zones);
	for (size_t i = 0; i < n_acc; i++) {
		const char *lv[] = {in[i].key};
		kcmd_metric_set(s->met, NLC_M_ZONE_SIZE, lv, (double)in[i].n);
		kcmd_metric_set(s->met, NLC_M_ZONE_HEALTH, lv,
		                (double)(100 * ((int)in[i].n - in[i].unhealthy)) / (double)in[i].n);
		kcmd_metric_set(s->met, NLC_M_UNHEALTHY, lv, (double)in[i].unhealthy);
	}
	if (d == NLC_DISRUPT_ENTER) {
		kcmd_log_info("Controller detected that all Nodes are not-Ready. Entering master "
		              "disruption mode");
		for (size_t i = 0; i < nodes->n; i++)
			if (mark_reachable(s, nodes->nodes[i]) < 0)
				kcmd_log_error("Failed to remove taints from Node node=\"%s\"",
				               node_name(nodes->nodes[i]));
	} else if (d == NLC_DISRUPT_EXIT) {
		kcmd_log_info("Controller detected that some Nodes are Ready. Exiting master "
		              "disruption mode");
		for (size_t i = 0; i < nodes->n; i++) {
			struct nlc_rec *r = rec_get(s, node_name(nodes->nodes[i]), true);
			if (r) {
				r->health.present = true;
				r->health.probe = r->health.ready_transition = now;
			}
		}
	}
	for (size_t i = 0; i < s->n_zones; i++) {
		struct nlc_zone *z = &s->zones[i];
		const char *lv[] = {z->key};
		if (zs[i].initialized)
			kcmd_log_error("Setting initial state for unseen zone zone=\"%s\"", z->key);
		if (zs[i].dropped) {
			kcmd_metric_set(s->met, NLC_M_ZONE_SIZE, lv, 0);
			kcmd_metric_set(s->met, NLC_M_ZONE_HEALTH, lv, 100);
			kcmd_metric_set(s->met, NLC_M_UNHEALTHY, lv, 0);
		}
		if (d == NLC_DISRUPT_ZONES && zs[i].has_state && zs[i].state != z->state)
			kcmd_log_info(
			        "Controller detected that zone is now in new state zone=\"%s\" "
			        "newState=\"%s\"",
			        z->key, nlc_zone_state_name(zs[i].state));
		if (zs[i].swap)
			nlc_rlq_swap_limiter(&z->tainter, zs[i].qps, now);
		z->has_state = zs[i].has_state;
		z->state = zs[i].state;
	}
out:
	free(in);
	free(zs);
}

/* One health pass over the nodes: the per-node work of updateNodeFunc, split where
 * MarkPodsNotReady writes (nlc_pool_run) */
struct pass_node {
	cJSON *node; /* after the health update */
	char name[254];
	uint64_t t0;
	bool ok;              /* the health was updated (else: skipped, retry flag kept) */
	bool mark;            /* MarkPodsNotReady was due */
	int err;              /* MarkPodsNotReady's first error */
	struct pod_refs pods; /* the node's pods to mark, from the cache */
	cJSON **got;          /* per pod: as its GET returned it, when it is to be written */
	char **bodies;        /* per pod: its PUT (NULL: nothing to write) */
	size_t cursor;        /* the next pod to look at */
	size_t cur;           /* the pod of the write in flight */
};
struct pass {
	struct nlc *s;
	struct node_list *nodes;
	struct zone_acc **acc;
	size_t *n_acc;
	struct pass_node *st;
};

#define NLC_GET_BATCH 64 /* GETs of one node's pods in flight together */

/* The whole pods of a node's writes, read when the node starts marking: UpdateStatus sends the
 * whole pod, which the cache's record does not keep (upstream sends its informer's copy). The
 * node's GETs go out together (NLC_GET_BATCH at a time), one round trip for a node of up to 64
 * pods, so its writes then go one per round as before. A pod gone (404), or that its GET shows
 * is no longer to be written, gets no write and no Event; a failed GET counts as a failed
 * write (the node is retried). Returns 0 or -ENOMEM. */
static int node_pods_get(struct nlc *s, struct pass_node *pn)
{
	size_t n = pn->pods.n;

	pn->got = calloc(n, sizeof(*pn->got));
	pn->bodies = calloc(n, sizeof(*pn->bodies));
	if (!pn->got || !pn->bodies)
		return -ENOMEM;
	for (size_t at = 0; at < n; at += NLC_GET_BATCH) {
		struct kube_request rq[NLC_GET_BATCH] = {0};
		struct kube_response rs[NLC_GET_BATCH];
		size_t k = n - at < NLC_GET_BATCH ? n - at : NLC_GET_BATCH;
		int r;

		memset(rs, 0, sizeof(rs));
		for (size_t j = 0; j < k; j++)
			rq[j] = (struct kube_request){.verb = KUBE_GET,
			                              .version = "v1",
			                              .resource = "pods",
			                              .ns = pn->pods.v[at + j].ns,
			                              .name = pn->pods.v[at + j].name};
		r = kube_client_request_many(s->ctx->kc, rq, k, rs, NULL);
		for (size_t j = 0; j < k; j++) {
			int x = r < 0 ? r : rs[j].error.err;
			cJSON *pod = x == 0 && rs[j].body
			                     ? cJSON_ParseWithLength(rs[j].body, rs[j].body_len)
			                     : NULL;
			if (x == 0 && !pod)
				x = -EBADMSG;
			if (x == 0 && (x = pod_prepare(pod, pn->name, &pn->bodies[at + j])) > 0)
				pn->got[at + j] = pod;
			else
				cJSON_Delete(pod);
			if (x < 0 && x != -ENOENT) {
				kcmd_log_info("Failed to update status for pod pod=\"%s/%s\" "
				              "err=\"%s\"",
				              pn->pods.v[at + j].ns, pn->pods.v[at + j].name,
				              errtext(&rs[j], x));
				if (!pn->err)
					pn->err = x;
			}
			kube_response_clear(&rs[j]);
		}
		if (r == -ENOMEM)
			return r;
		taint_if_due(s);
	}
	return 0;
}

/* updateNodeFunc up to MarkPodsNotReady's writes: the health (tryUpdateNodeHealth with its
 * retries), the zone's tally, processTaintBaseEviction, the NodeNotReady Event, the pods to
 * mark. > 0 when it has pods to write. */
static int pass_start(void *ud, size_t i)
{
	struct pass *p = ud;
	struct nlc *s = p->s;
	struct pass_node *pn = &p->st[i];
	struct nlc_health_out out;
	cJSON *node;

	pn->t0 = mono_us();
	taint_if_due(s);
	if (!(node = cJSON_Duplicate(p->nodes->nodes[i], true)))
		return 0;
	snprintf(pn->name, sizeof(pn->name), "%s", node_name(node));
	for (int attempt = 0; attempt <= NLC_HEALTH_RETRY; attempt++) {
		if (attempt)
			sleep_ns(NLC_RETRY_SLEEP_NS);
		if (try_update_health(s, node, &out) == 0) {
			pn->ok = true;
			break;
		}
		cJSON_Delete(node);
		if (get_node(s, pn->name, NULL, &node) < 0) {
			kcmd_log_error("Failed while getting a Node to retry updating node "
			               "health. Probably Node was deleted node=\"%s\"",
			               pn->name);
			node = NULL;
			break;
		}
	}
	pn->node = node;
	if (!pn->ok) {
		kcmd_log_error("Update health of Node from Controller error, Skipping - no "
		               "pods will be evicted node=\"%s\"",
		               pn->name);
		return 0;
	}
	if (!nlc_node_excluded(node)) {
		char *zk = zone_of(node);
		if (zk)
			zone_acc_add(p->acc, p->n_acc, zk, out.current);
		free(zk);
	}
	struct nlc_rec *rec = rec_get(s, pn->name, true);
	if (out.current == NLC_ABSENT || !rec)
		return 0;
	/* v1.37 decides on currentReadyCondition, which points into the node's status that
	 * tryUpdateNodeHealth has just set to Unknown: a node that times out is queued in the
	 * same pass (older releases passed the observed condition: one --node-monitor-period
	 * later) */
	bool retry = rec->retry;
	taint_base_eviction(s, node, out.current);
	if (out.current != NLC_TRUE && out.observed == NLC_TRUE) {
		kcmd_log_v(2,
		           "Recording status change event message for node "
		           "status=\"NodeNotReady\" node=\"%s\"",
		           pn->name);
		node_ev(s, pn->name, node_uid(node), KCMD_EVENT_NORMAL, "NodeNotReady",
		        "Node %s status is now: %s", "NodeNotReady");
		pn->mark = true;
	} else if (retry && out.observed != NLC_TRUE) {
		pn->mark = true;
	}
	if (!pn->mark)
		return 0;
	if ((pn->err = node_pods_to_mark(s, pn->name, &pn->pods)) < 0)
		return 0;
	int r = pn->pods.n ? node_pods_get(s, pn) : 0;
	if (r < 0) {
		pn->err = r;
		return 0;
	}
	return pn->pods.n > 0;
}

/* the node's next pod whose Ready condition is to be set False (as its GET showed it) */
static bool pass_next(void *ud, size_t i, size_t *ret_write)
{
	struct pass *p = ud;
	struct pass_node *pn = &p->st[i];

	while (pn->cursor < pn->pods.n) {
		size_t k = pn->cursor++;
		if (pn->bodies[k]) {
			pn->cur = k;
			*ret_write = k;
			return true;
		}
	}
	return false;
}

/* one round: a pod status write of each active node, together */
static void pass_send(void *ud, const size_t *nodes, const size_t *writes, size_t n)
{
	struct pass *p = ud;
	struct kube_request rq[NLC_UPDATE_WORKERS] = {0};
	struct kube_response rs[NLC_UPDATE_WORKERS];
	int r;

	(void)writes;
	if (n > NLC_UPDATE_WORKERS)
		n = NLC_UPDATE_WORKERS; /* nlc_pool_run's bound */
	memset(rs, 0, sizeof(rs));
	for (size_t j = 0; j < n; j++) {
		struct pass_node *pn = &p->st[nodes[j]];
		const cJSON *pod = pn->got[pn->cur];
		rq[j] = (struct kube_request){.verb = KUBE_UPDATE,
		                              .version = "v1",
		                              .resource = "pods",
		                              .ns = pod_str(pod, "namespace"),
		                              .name = pod_str(pod, "name"),
		                              .subresource = "status",
		                              .body = pn->bodies[pn->cur],
		                              .body_len = strlen(pn->bodies[pn->cur]),
		                              .body_kind = "Pod"};
	}
	r = kube_client_request_many(p->s->ctx->kc, rq, n, rs, NULL);
	for (size_t j = 0; j < n; j++) {
		struct pass_node *pn = &p->st[nodes[j]];
		int x = r < 0 ? r : rs[j].error.err;
		if ((x = pod_written(p->s, pn->got[pn->cur], x, &rs[j])) < 0 && !pn->err)
			pn->err = x;
		kube_response_clear(&rs[j]);
		free(pn->bodies[pn->cur]);
		pn->bodies[pn->cur] = NULL;
		cJSON_Delete(pn->got[pn->cur]);
		pn->got[pn->cur] = NULL;
	}
	taint_if_due(p->s);
}

/* the rest of updateNodeFunc: the retry mark when MarkPodsNotReady failed */
static void pass_finish(void *ud, size_t i)
{
	struct pass *p = ud;
	struct nlc *s = p->s;
	struct pass_node *pn = &p->st[i];
	struct nlc_rec *rec = pn->ok ? rec_get(s, pn->name, false) : NULL;

	if (rec && pn->mark && pn->err < 0) {
		kcmd_log_error("unable to mark all pods NotReady on node %s; queuing for retry",
		               pn->name);
		rec->retry = true;
	} else if (rec) {
		rec->retry = false;
	}
	kcmd_metric_observe(s->met, NLC_M_NODE_DURATION, NULL, (double)(mono_us() - pn->t0) / 1e6);
	cJSON_Delete(pn->node);
	for (size_t k = 0; pn->got && k < pn->pods.n; k++) {
		cJSON_Delete(pn->got[k]);
		free(pn->bodies[k]);
	}
	free(pn->got);
	free(pn->bodies);
	pod_refs_free(&pn->pods);
	*pn = (struct pass_node){0};
}

static void arm_taint_timer(struct nlc *s);

static void monitor(struct nlc *s)
{
	struct node_list nodes = {0};
	struct zone_acc *acc = NULL;
	size_t n_acc = 0;
	uint64_t start = mono_us();
	int r;

	if ((r = kcmd_cache_list(s->ctx->arena, "", "nodes", NULL, collect_node, &nodes)) < 0) {
		kcmd_log_error("Error monitoring node health: %s", strerror(-r));
		node_list_free(&nodes);
		return;
	}
	/* classifyNodes */
	for (size_t i = 0; i < nodes.n; i++) {
		cJSON *n = nodes.nodes[i];
		struct nlc_rec *rec = rec_get(s, node_name(n), true);
		if (!rec)
			continue;
		if (rec->known) {
			char *zk = zone_of(n);
			struct nlc_zone *z = zk ? zone_get(s, zk) : NULL;
			if (!z || !z->has_state)
				add_zone(s, n); /* a new zone's representative */
			free(zk);
		}
	}
	for (size_t i = 0; i < nodes.n; i++) {
		cJSON *n = nodes.nodes[i];
		struct nlc_rec *rec = rec_get(s, node_name(n), true);
		if (!rec || rec->known)
			continue;
		kcmd_log_v(1, "Controller observed a new Node node=\"%s\"", node_name(n));
		node_ev(s, node_name(n), node_uid(n), KCMD_EVENT_NORMAL, "RegisteredNode",
		        "Node %s event: Registered Node %s in Controller", node_name(n));
		free(rec->uid);
		rec->uid = strdup(node_uid(n));
		rec->known = true;
		add_zone(s, n);
		mark_reachable(s, n);
	}
	for (size_t i = 0; i < s->n_recs; i++) {
		struct nlc_rec *rec = &s->recs[i];
		bool seen = false;
		if (!rec->known)
			continue;
		for (size_t j = 0; j < nodes.n && !seen; j++)
			seen = !strcmp(node_name(nodes.nodes[j]), rec->name);
		if (seen)
			continue;
		kcmd_log_v(1, "Controller observed a Node deletion node=\"%s\"", rec->name);
		node_ev(s, rec->name, rec->uid, KCMD_EVENT_NORMAL, "RemovingNode",
		        "Node %s event: Removing Node %s from Controller", rec->name);
		rec->known = false;
	}
	/* updateNodeFunc for each node, NLC_UPDATE_WORKERS at a time (nlc_pool_run) */
	struct pass p = {.s = s, .nodes = &nodes, .acc = &acc, .n_acc = &n_acc};
	if (!(p.st = calloc(nodes.n ? nodes.n : 1, sizeof(*p.st))) ||
	    nlc_pool_run(nodes.n, NLC_UPDATE_WORKERS,
	                 &(struct nlc_pool_ops){.start = pass_start,
	                                        .next = pass_next,
	                                        .send = pass_send,
	                                        .finish = pass_finish},
	                 &p) < 0)
		kcmd_log_error("Error monitoring node health: %s", strerror(ENOMEM));
	free(p.st);
	handle_disruption(s, acc, n_acc, &nodes);
	for (size_t i = 0; i < n_acc; i++) {
		free(acc[i].key);
		free(acc[i].ready);
	}
	free(acc);
	node_list_free(&nodes);
	kcmd_metric_observe(s->met, NLC_M_ALL_DURATION, NULL, (double)(mono_us() - start) / 1e6);
	arm_taint_timer(s);
}

/* ---- doNoExecuteTaintingPass --------------------------------------------------------------- */

struct try_ctx {
	struct nlc *s;
	const char *zone;
};

static bool taint_one(void *ud, const struct nlc_tv *tv, int64_t *wait)
{
	struct try_ctx *t = ud;
	struct nlc *s = t->s;
	struct shm_obj *o = NULL;
	size_t len = 0;
	const char *json;
	cJSON *node;
	int r;

	r = kcmd_cache_get(s->ctx->arena, "", "nodes", NULL, tv->value, &o);
	if (r == -ENOENT) {
		kcmd_log_info("Node no longer present in nodeLister node=\"%s\"", tv->value);
		return true;
	}
	json = r == 0 ? kcmd_obj_json(o, &len) : NULL;
	node = json ? cJSON_ParseWithLength(json, len) : NULL;
	kcmd_obj_free(o);
	if (!node) {
		kcmd_log_info("Failed to get Node from the nodeLister node=\"%s\"", tv->value);
		*wait = NLC_LISTER_RETRY_NS;
		return false;
	}
	enum nlc_cond c = nlc_node_ready(node);
	bool ok;
	if (c == NLC_ABSENT) {
		kcmd_log_info("Failed to get NodeCondition from the node status node=\"%s\"",
		              tv->value);
		*wait = NLC_LISTER_RETRY_NS;
		ok = false;
	} else if (c == NLC_FALSE || c == NLC_UNKNOWN) {
		const struct nlc_taint *add =
		        c == NLC_FALSE ? &not_ready_taint : &unreachable_taint;
		const struct nlc_taint *del =
		        c == NLC_FALSE ? &unreachable_taint : &not_ready_taint;
		ok = swap_taints(s, node, tv->value, add, 1, del, 1);
		if (ok) {
			char *zk = zone_of(node);
			if (zk)
				kcmd_metric_inc(s->met, NLC_M_EVICTIONS, (const char *[]){zk});
			free(zk);
		}
		*wait = 0;
	} else {
		kcmd_log_v(4,
		           "Node was in a taint queue, but it's ready now. Ignoring taint request "
		           "node=\"%s\"",
		           tv->value);
		ok = true;
	}
	cJSON_Delete(node);
	return ok;
}

static void tainting_pass(struct nlc *s)
{
	for (size_t i = 0; i < s->n_zones; i++) {
		struct try_ctx t = {.s = s, .zone = s->zones[i].key};
		nlc_rlq_try(&s->zones[i].tainter, now_ns(), taint_one, &t);
	}
}

/* Upstream runs doNoExecuteTaintingPass every 100 ms in a goroutine of its own, beside
 * monitorNodeHealth. Here one event loop runs both, and a health pass holds it for as long as its
 * writes take (MarkPodsNotReady writes every pod of each node that went not ready, one after the
 * other: 5,000 pods for a zone of 100 nodes x 50), so the health pass runs a due tainting pass
 * itself between nodes and between pod writes; otherwise the zone's taints would wait for the
 * pods of every other node of the pass (seen in kcmd bench --workload=nodefailure). */
static void taint_if_due(struct nlc *s)
{
	bool pending = false;
	if (mono_us() < s->taint_due_us)
		return;
	for (size_t i = 0; i < s->n_zones && !pending; i++)
		pending = s->zones[i].tainter.n > 0;
	if (!pending)
		return;
	tainting_pass(s);
	s->taint_due_us = mono_us() + NLC_EVICTION_PERIOD_NS / 1000;
}

static void arm_taint_timer(struct nlc *s)
{
	bool pending = false;
	for (size_t i = 0; i < s->n_zones && !pending; i++)
		pending = s->zones[i].tainter.n > 0;
	if (s->taint_timer)
		ipc_source_set_time(s->taint_timer,
		                    pending ? mono_us() + NLC_EVICTION_PERIOD_NS / 1000 : 0);
}

static int on_taint_timer(struct ipc_source *src, uint64_t now, void *ud)
{
	struct nlc *s = ud;
	(void)src;
	(void)now;
	tainting_pass(s);
	s->taint_due_us = mono_us() + NLC_EVICTION_PERIOD_NS / 1000;
	arm_taint_timer(s);
	return 0;
}

static bool caches_synced(struct nlc *s)
{
	if (s->synced)
		return true;
	if (kcmd_cache_synced(s->ctx->arena, "", "nodes") != 1 ||
	    kcmd_cache_synced(s->ctx->arena, "", "pods") != 1 ||
	    kcmd_cache_synced(s->ctx->arena, "coordination.k8s.io", "leases") != 1)
		return false;
	/* kcmd-worker logs "Caches are synced" for the same three (workers/cachewait.h); this
	 * check stays for the monitor's timer, armed by init before the worker's wait ends */
	s->synced = true;
	return true;
}

/* wait.UntilWithContext(monitorNodeHealth, period): the next pass a period after this one
 * started (Until waits the period after the function returns; kept so) */
static int on_monitor_timer(struct ipc_source *src, uint64_t now, void *ud)
{
	struct nlc *s = ud;
	(void)now;
	if (!caches_synced(s)) {
		ipc_source_set_time(src, mono_us() + 100000);
		return 0;
	}
	monitor(s);
	ipc_source_set_time(src, mono_us() + (uint64_t)(s->period / 1000));
	return 0;
}

/* ---- sync (kcmd-worker) ------------------------------------------------------------------- */

static int nlc_init(struct wk_ctx *ctx, void **ret_state)
{
	struct nlc *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return -ENOMEM;
	s->ctx = ctx;
	s->met = kcmd_metrics_get();
	s->period = (int64_t)kcmd_flag_duration_us(ctx->flags, "node-monitor-period") * 1000;
	s->startup_grace =
	        (int64_t)kcmd_flag_duration_us(ctx->flags, "node-startup-grace-period") * 1000;
	s->monitor_grace =
	        (int64_t)kcmd_flag_duration_us(ctx->flags, "node-monitor-grace-period") * 1000;
	s->eviction_qps = (float)kcmd_flag_double(ctx->flags, "node-eviction-rate");
	s->secondary_qps = (float)kcmd_flag_double(ctx->flags, "secondary-node-eviction-rate");
	s->unhealthy_threshold = (float)kcmd_flag_double(ctx->flags, "unhealthy-zone-threshold");
	s->large_cluster = (int32_t)kcmd_flag_int(ctx->flags, "large-cluster-size-threshold");
	if (s->period <= 0)
		s->period = 5000000000ll;
	if (ctx->loop &&
	    ((r = ipc_loop_add_timer(ctx->loop, &s->monitor_timer, mono_us() + 1, on_monitor_timer,
	                             s)) < 0 ||
	     (r = ipc_loop_add_timer(ctx->loop, &s->taint_timer, 0, on_taint_timer, s)) < 0)) {
		free(s);
		return r;
	}
	kcmd_log_info("Controller will reconcile labels");
	*ret_state = s;
	return 0;
}

static void nlc_fini(void *state)
{
	struct nlc *s = state;
	if (!s)
		return;
	ipc_source_free(s->monitor_timer);
	ipc_source_free(s->taint_timer);
	for (size_t i = 0; i < s->n_recs; i++) {
		free(s->recs[i].name);
		free(s->recs[i].uid);
	}
	for (size_t i = 0; i < s->n_zones; i++) {
		free(s->zones[i].key);
		nlc_rlq_free(&s->zones[i].tainter);
	}
	free(s->recs);
	free(s->zones);
	free(s);
}

/* doNoScheduleTaintingPass + reconcileNodeLabels (errors are logged, not retried: upstream
 * does not put the node back either; its next update brings it again) */
static void sync_node(struct nlc *s, const char *name)
{
	struct shm_obj *o = NULL;
	size_t len = 0;
	const char *json;
	cJSON *node;
	int r = kcmd_cache_get(s->ctx->arena, "", "nodes", NULL, name, &o);

	if (r == -ENOENT) { /* deleted: nodesToRetry.Delete */
		struct nlc_rec *rec = rec_get(s, name, false);
		if (rec)
			rec->retry = false;
		return;
	}
	json = r == 0 ? kcmd_obj_json(o, &len) : NULL;
	node = json ? cJSON_ParseWithLength(json, len) : NULL;
	kcmd_obj_free(o);
	if (!node) {
		kcmd_log_error("Failed to taint NoSchedule on node, requeue it node=\"%s\"", name);
		return;
	}
	struct nlc_taint add[NLC_MAX_NOSCHED], del[NLC_MAX_NOSCHED];
	size_t na = 0, nd = 0;
	nlc_nosched_diff(node, add, &na, del, &nd);
	if ((na || nd) && !swap_taints(s, node, name, add, na, del, nd))
		kcmd_log_error("Failed to taint NoSchedule on node, requeue it node=\"%s\"", name);
	char *patch = NULL;
	if ((r = nlc_labels_patch(node, &patch)) > 0) {
		if ((r = patch_node(s, name, patch)) < 0)
			kcmd_log_error(
			        "Failed to reconcile labels for node, requeue it node=\"%s\": %s",
			        name, strerror(-r));
		else
			kcmd_log_v(4, "Updated labels to node node=\"%s\"", name);
	}
	free(patch);
	cJSON_Delete(node);
}

/* processPod */
static void sync_pod(struct nlc *s, const char *key, struct wk_result *res)
{
	char ns[254], name[254];
	struct shm_obj *o = NULL;
	struct shm_pod_view v;
	char *node = NULL;
	int r;

	if (kcmd_key_split(key, ns, sizeof(ns), name, sizeof(name)) < 0)
		return;
	if ((r = kcmd_cache_get(s->ctx->arena, "", "pods", ns, name, &o)) == -ENOENT)
		return;
	if (r < 0) {
		kcmd_log_info("Failed to read pod pod=\"%s\" err=\"%s\"", key, strerror(-r));
		res->err = r;
		return;
	}
	r = shm_pod_view_init(o, &v);
	free(o);
	if (r == 0 && v.pod.node_name && *v.pod.node_name && !(node = strdup(v.pod.node_name)))
		r = -ENOMEM;
	shm_pod_view_free(&v);
	if (r < 0 || !node) {
		res->err = r;
		return;
	}
	struct nlc_rec *rec = rec_get(s, node, false);
	if (!rec || !rec->health.present)
		goto out; /* not gathered yet, or removed */
	if ((r = kcmd_cache_get(s->ctx->arena, "", "nodes", NULL, node, &o)) < 0) {
		kcmd_log_info("Failed to read node node=\"%s\" err=\"%s\"", node, strerror(-r));
		res->err = r;
		goto out;
	}
	kcmd_obj_free(o);
	if (rec->health.saved_ready == NLC_ABSENT || rec->health.saved_ready == NLC_TRUE)
		goto out;
	struct kube_response rs = {0};
	r = kube_client_request(s->ctx->kc,
	                        &(struct kube_request){.verb = KUBE_GET,
	                                               .version = "v1",
	                                               .resource = "pods",
	                                               .ns = ns,
	                                               .name = name},
	                        NULL, NULL, &rs);
	cJSON *pod = r == 0 && rs.body ? cJSON_ParseWithLength(rs.body, rs.body_len) : NULL;
	kube_response_clear(&rs);
	if (r == -ENOENT)
		goto out;
	if (r == 0 && !pod)
		r = -EBADMSG;
	if (r == 0)
		r = mark_pod(s, pod, node);
	cJSON_Delete(pod);
	if (r < 0) {
		kcmd_log_info(
		        "Unable to mark pod NotReady on node pod=\"%s\" node=\"%s\" err=\"%s\"",
		        key, node, strerror(-r));
		res->err = r;
	}
out:
	free(node);
}

static void nlc_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct nlc *s = state;

	*res = (struct wk_result){0};
	if (!caches_synced(s)) {
		res->requeue_after = true;
		res->after_usec = 100000;
		return;
	}
	if (q == NLC_Q_NODE)
		sync_node(s, key);
	else
		sync_pod(s, key, res);
}

static const struct wk_controller nlc_worker_desc = {
        .name = NLC_CONTROLLER,
        .queues = nlc_queue_names,
        .init = nlc_init,
        .sync = nlc_sync,
        .fini = nlc_fini,
};

/* ---- the descriptor ----------------------------------------------------------------------- */

static const struct kcmd_watch nlc_watches[] = {
        {"", "v1", "nodes", "Node", KCMD_CACHE_OBJECT, false},
        {"", "v1", "pods", "Pod", KCMD_CACHE_POD, true},
        {"coordination.k8s.io", "v1", "leases", "Lease", KCMD_CACHE_OBJECT, true},
};
static const struct kcmd_queue nlc_queues[] = {
        {.name = NLC_NODE_QUEUE},
        {.name = NLC_POD_QUEUE},
};

static const struct kcmd_flag nlc_flags[] = {
        {.name = "node-monitor-period",
         .type = KCMD_FLAG_DURATION,
         .def = "5s",
         .help = "The period for syncing NodeStatus in NodeController."},
        {.name = "node-startup-grace-period",
         .type = KCMD_FLAG_DURATION,
         .def = "1m0s",
         .help = "Amount of time which we allow starting Node to be unresponsive before "
                 "marking it unhealthy."},
        {.name = "node-monitor-grace-period",
         .type = KCMD_FLAG_DURATION,
         .def = "50s",
         .help = "Amount of time which we allow running Node to be unresponsive before "
                 "marking it unhealthy. Must be N times more than kubelet's "
                 "nodeStatusUpdateFrequency, where N means number of retries allowed for "
                 "kubelet to post node status."},
        {.name = "node-eviction-rate",
         .type = KCMD_FLAG_DOUBLE,
         .def = "0.1",
         .help = "Number of nodes per second on which pods are deleted in case of node "
                 "failure when a zone is healthy (see --unhealthy-zone-threshold for "
                 "definition of healthy/unhealthy). Zone refers to entire cluster in "
                 "non-multizone clusters."},
        {.name = "secondary-node-eviction-rate",
         .type = KCMD_FLAG_DOUBLE,
         .def = "0.01",
         .help = "Number of nodes per second on which pods are deleted in case of node "
                 "failure when a zone is unhealthy (see --unhealthy-zone-threshold for "
                 "definition of healthy/unhealthy). Zone refers to entire cluster in "
                 "non-multizone clusters. This value is implicitly overridden to 0 if the "
                 "cluster size is smaller than --large-cluster-size-threshold."},
        {.name = "large-cluster-size-threshold",
         .type = KCMD_FLAG_INT,
         .def = "50",
         .min = INT32_MIN,
         .max = INT32_MAX,
         .help = "Number of nodes from which node-lifecycle-controller treats the cluster as "
                 "large for the eviction logic purposes. --secondary-node-eviction-rate is "
                 "implicitly overridden to 0 for clusters this size or smaller."},
        {.name = "unhealthy-zone-threshold",
         .type = KCMD_FLAG_DOUBLE,
         .def = "0.55",
         .help = "Fraction of Nodes in a zone which needs to be not Ready (minimum 3) for zone "
                 "to be treated as unhealthy. "},
};

static int nlc_worker_count(const struct kcmd_flag_values *v)
{
	(void)v;
	return 1; /* one process holds the health records, zone states and taint queues */
}

const struct kcmd_controller kcmd_nodelifecycle_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = NLC_CONTROLLER,
        .enabled_by_default = true,
        .service_account = "node-controller",
        .watches = nlc_watches,
        .n_watches = sizeof(nlc_watches) / sizeof(nlc_watches[0]),
        .queues = nlc_queues,
        .n_queues = sizeof(nlc_queues) / sizeof(nlc_queues[0]),
        .flags = nlc_flags,
        .n_flags = sizeof(nlc_flags) / sizeof(nlc_flags[0]),
        .worker_count = nlc_worker_count,
        .handlers = &nlc_handlers,
        .worker = &nlc_worker_desc,
        .metrics = nlc_metrics,
        .n_metrics = NLC_M_N,
};
