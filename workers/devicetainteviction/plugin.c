/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/devicetainteviction/plugin.c: kcm's device-taint-eviction-controller (no alias), on
 * by default (gates DynamicResourceAllocation and DRADeviceTaints, both GA in v1.37), client
 * "device-taint-eviction-controller", resource.k8s.io/v1. docs/devicetainteviction.md.
 *
 * Shape.
 *   Upstream keeps an in-memory index (pools, allocated claims, evicting rules) that its
 *   handlers update, and a work item per pod and per DeviceTaintRule. kcmd keeps no index: the
 *   cache holds ResourceClaims, ResourceSlices and DeviceTaintRules whole (JSON) and pods typed,
 *   and a pod's sync computes its eviction from them (dte.h). One queue
 *   "device-taint-eviction-controller" (upstream's workqueue name) with keys "pod:<ns>/<name>"
 *   and "rule:<name>". The dispatcher queues:
 *     - a pod on its add, on a change of nodeName, on its delete;
 *     - the pods a claim is reserved for (old and new) on every claim event, and the rules
 *       selecting a device of an allocated claim (their status);
 *     - the pods of the allocated claims that use a device of a slice's pool on every slice
 *       event (upstream compares the pool's tainted devices first);
 *     - a rule (its status) and the pods of the allocated claims whose devices it selects
 *       (old and new selector) on every rule event.
 *   One worker process holds upstream's deletePodAt (the pending evictions, for the
 *   "Cancelling deletion" Event), evictedPods (500 uids) and the per-rule eviction counts; a
 *   pending eviction's timer is a requeue-after of the pod's key, and every sync decides again
 *   from the cache, so an early or stale wake-up does nothing and a due one evicts. A worker
 *   that dies loses that memory: the keys it requeued are still in the queue (evictions keep
 *   their time), a cancel after the restart records no Event, and the rule counts restart at
 *   0 ("since starting the controller").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "kcmd/kcmd.h"
#include "kube/client.h"
#include "shm/record-model.h"
#include "workers/devicetainteviction/dte.h"
#include "workers/worker.h"

#define DTE_CONTROLLER  "device-taint-eviction-controller"
#define DTE_QUEUE       "device-taint-eviction-controller"
#define DTE_GROUP       "resource.k8s.io"
#define DTE_VERSION     "v1"
#define DTE_RULE_PERIOD (10 * 1000000000LL) /* ruleStatusPeriod */
#define DTE_EVICTED_MAX 500                 /* maxUIDCacheEntries */

enum { DTE_M_DELETIONS, DTE_M_LATENCY, DTE_M_N };

static const double dte_buckets[] = {0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 30, 60, 120, 180, 240};
static const struct kcmd_metric dte_metrics[DTE_M_N] = {
        [DTE_M_DELETIONS] = {.name = "device_taint_eviction_controller_pod_deletions_total",
                             .help = "Total number of Pods deleted by "
                                     "DeviceTaintEvictionController since its start.",
                             .type = KCMD_METRIC_COUNTER,
                             .stability = KCMD_METRIC_ALPHA},
        [DTE_M_LATENCY] = {.name = "device_taint_eviction_controller_pod_deletion_duration_seconds",
                           .help = "Latency, in seconds, between the time when a device taint "
                                   "effect has been activated and a Pod's deletion via "
                                   "DeviceTaintEvictionController.",
                           .type = KCMD_METRIC_HISTOGRAM,
                           .stability = KCMD_METRIC_ALPHA,
                           .buckets = dte_buckets,
                           .n_buckets = sizeof(dte_buckets) / sizeof(dte_buckets[0])},
};

static void queue_key(struct inf_handler_ctx *ctx, const char *prefix, const char *ns,
                      const char *name)
{
	char key[KCMD_KEY_MAX + 1], full[KCMD_KEY_MAX + 8];

	if (!name || !*name || kcmd_key_make(key, sizeof(key), ns, name) <= 0)
		return;
	snprintf(full, sizeof(full), "%s%s", prefix, key);
	kcmd_queue_add(ctx, 0, full);
}

/* ---- handlers (kcmd-dispatcher) ----------------------------------------------------------- */

static const char *jstr(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const cJSON *jget(const cJSON *o, const char *a, const char *b)
{
	o = cJSON_GetObjectItemCaseSensitive(o, a);
	return b ? cJSON_GetObjectItemCaseSensitive(o, b) : o;
}

/* the pods claim (JSON) is reserved for */
static void queue_reserved(struct inf_handler_ctx *ctx, const char *js, size_t len)
{
	cJSON *c, *r;

	if (!js || !(c = cJSON_ParseWithLength(js, len)))
		return;
	const char *ns = jstr(jget(c, "metadata", NULL), "namespace");
	cJSON_ArrayForEach(r, jget(c, "status", "reservedFor"))
	{
		const char *g = jstr(r, "apiGroup");
		if ((!g || !*g) && jstr(r, "resource") && !strcmp(jstr(r, "resource"), "pods"))
			queue_key(ctx, "pod:", ns, jstr(r, "name"));
	}
	cJSON_Delete(c);
}

/* the rules selecting a device of an allocated claim: their status counts its pods */
struct claim_rules {
	struct inf_handler_ctx *ctx;
	const cJSON *claim;
};

static int rule_for_claim(const struct shm_obj *o, void *ud)
{
	struct claim_rules *cr = ud;
	size_t len = 0;
	const char *js = kcmd_obj_json(o, &len);
	const cJSON *res;
	cJSON *r;
	bool hit = false;

	if (!js || !(r = cJSON_ParseWithLength(js, len)))
		return 0;
	cJSON_ArrayForEach(res, jget(jget(cr->claim, "status", "allocation"), "devices", "results"))
	{
		if (dte_rule_matches(r, jstr(res, "driver"), jstr(res, "pool"),
		                     jstr(res, "device")))
			hit = true;
	}
	cJSON_Delete(r);
	if (hit)
		queue_key(cr->ctx, "rule:", NULL, kcmd_obj_name(o));
	return 0;
}

static void on_claim(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	size_t len = 0, olen = 0;
	const char *js = kcmd_event_json(ev, &len);
	const char *ojs = ev->old ? kcmd_obj_json(ev->old, &olen) : NULL;
	cJSON *c;

	queue_reserved(ctx, ojs, olen);
	if (ev->kind == INF_EVENT_DELETE)
		return;
	queue_reserved(ctx, js, len);
	/* upstream re-queues a rule after a pod change it causes (handlePod) */
	if (js && strstr(js, "\"allocation\"") && (c = cJSON_ParseWithLength(js, len))) {
		struct claim_rules cr = {ctx, c};
		kcmd_cache_list(ctx->arena, DTE_GROUP, "devicetaintrules", NULL, rule_for_claim,
		                &cr);
		cJSON_Delete(c);
	}
}

/* which allocated claims' pods to queue: those with a device in (driver, pool), or selected by
 * a rule */
struct match {
	struct inf_handler_ctx *ctx;
	const char *driver, *pool;
	const cJSON *rule;
};

static int match_claim(const struct shm_obj *o, void *ud)
{
	struct match *m = ud;
	size_t len = 0;
	const char *js = kcmd_obj_json(o, &len);
	const cJSON *res;
	cJSON *c;
	bool hit = false;

	if (!js || !strstr(js, "\"allocation\"") || !(c = cJSON_ParseWithLength(js, len)))
		return 0;
	cJSON_ArrayForEach(res, jget(jget(c, "status", "allocation"), "devices", "results"))
	{
		const char *d = jstr(res, "driver"), *p = jstr(res, "pool"),
		           *n = jstr(res, "device");
		if (m->rule ? dte_rule_matches(m->rule, d, p, n)
		            : (d && p && !strcmp(d, m->driver) && !strcmp(p, m->pool)))
			hit = true;
	}
	cJSON_Delete(c);
	if (hit)
		queue_reserved(m->ctx, js, len);
	return 0;
}

static void slice_pool(struct inf_handler_ctx *ctx, const char *js, size_t len)
{
	cJSON *s;

	if (!js || !(s = cJSON_ParseWithLength(js, len)))
		return;
	const cJSON *spec = jget(s, "spec", NULL);
	struct match m = {.ctx = ctx,
	                  .driver = jstr(spec, "driver"),
	                  .pool = jstr(jget(spec, "pool", NULL), "name")};
	if (m.driver && m.pool)
		kcmd_cache_list(ctx->arena, DTE_GROUP, "resourceclaims", NULL, match_claim, &m);
	cJSON_Delete(s);
}

static void on_slice(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	size_t len = 0, olen = 0;
	const char *js = ev->kind != INF_EVENT_DELETE ? kcmd_event_json(ev, &len) : NULL;
	const char *ojs = ev->old ? kcmd_obj_json(ev->old, &olen) : NULL;

	slice_pool(ctx, js ? js : ojs, js ? len : olen);
}

static void rule_pods(struct inf_handler_ctx *ctx, const char *js, size_t len)
{
	cJSON *r;

	if (!js || !(r = cJSON_ParseWithLength(js, len)))
		return;
	struct match m = {.ctx = ctx, .rule = r};
	kcmd_cache_list(ctx->arena, DTE_GROUP, "resourceclaims", NULL, match_claim, &m);
	cJSON_Delete(r);
}

static void on_rule(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	size_t len = 0, olen = 0;
	const char *js = ev->kind != INF_EVENT_DELETE ? kcmd_event_json(ev, &len) : NULL;
	const char *ojs = ev->old ? kcmd_obj_json(ev->old, &olen) : NULL;

	if (js && ev->meta)
		queue_key(ctx, "rule:", NULL, kcmd_meta_name(ev->meta));
	rule_pods(ctx, ojs, olen);
	rule_pods(ctx, js, len);
}

static void on_pod(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	const struct kube_pod *p = ev->obj;
	struct shm_obj copy = {0};
	struct shm_pod_view old;
	bool changed = true;

	if (!p)
		return;
	if (ev->kind != INF_EVENT_ADD && ev->old && shm_obj_dup(ev->old, &copy) == 0) {
		if (shm_pod_view_init(&copy, &old) == 0)
			changed = strcmp(old.pod.node_name ? old.pod.node_name : "",
			                 p->node_name ? p->node_name : "") != 0;
		shm_pod_view_free(&old);
	}
	if (changed)
		queue_key(ctx, "pod:", p->meta.namespace, p->meta.name);
}

static void on_pod_delete(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	if (ev->meta)
		queue_key(ctx, "pod:", kcmd_meta_namespace(ev->meta), kcmd_meta_name(ev->meta));
	else if (ev->old)
		queue_key(ctx, "pod:", kcmd_obj_namespace(ev->old), kcmd_obj_name(ev->old));
}

static int resync_claim(const struct shm_obj *o, void *ud)
{
	size_t len = 0;
	const char *js = kcmd_obj_json(o, &len);

	if (js && strstr(js, "\"allocation\""))
		queue_reserved(ud, js, len);
	return 0;
}

static int resync_rule(const struct shm_obj *o, void *ud)
{
	queue_key(ud, "rule:", NULL, kcmd_obj_name(o));
	return 0;
}

/* (re)start from the arena: the pods of every allocated claim, every rule */
static void dte_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	kcmd_cache_list(ctx->arena, DTE_GROUP, "resourceclaims", NULL, resync_claim, ctx);
	kcmd_cache_list(ctx->arena, DTE_GROUP, "devicetaintrules", NULL, resync_rule, ctx);
}

static const char *const dte_queue_names[] = {DTE_QUEUE, NULL};
static const struct inf_handler_entry dte_entries[] = {
        {"", "pods", on_pod, on_pod, on_pod_delete},
        {DTE_GROUP, "resourceclaims", on_claim, on_claim, on_claim},
        {DTE_GROUP, "resourceslices", on_slice, on_slice, on_slice},
        {DTE_GROUP, "devicetaintrules", on_rule, on_rule, on_rule},
};
static const struct inf_handler_table dte_handlers = {
        .controller = DTE_CONTROLLER,
        .queues = dte_queue_names,
        .entries = dte_entries,
        .n_entries = sizeof(dte_entries) / sizeof(dte_entries[0]),
        .resync = dte_resync,
};

/* ---- sync (kcmd-worker) ------------------------------------------------------------------- */
struct pending {
	char *key, *uid;
	kube_time_t when;
};

struct rule_stat {
	char *uid;
	int64_t evicted;
};

struct dte_worker {
	struct wk_ctx *ctx;
	struct kcmd_metrics *met;
	struct pending *pending; /* deletePodAt */
	size_t n_pending;
	char *evicted[DTE_EVICTED_MAX]; /* evictedPods: the last uids, oldest overwritten */
	size_t evicted_next;
	struct rule_stat *stats; /* taintRuleStats */
	size_t n_stats;
	bool synced;
};

static struct pending *pending_find(struct dte_worker *w, const char *key)
{
	for (size_t i = 0; i < w->n_pending; i++)
		if (!strcmp(w->pending[i].key, key))
			return &w->pending[i];
	return NULL;
}

static bool pending_drop(struct dte_worker *w, const char *key)
{
	struct pending *p = pending_find(w, key);

	if (!p)
		return false;
	free(p->key);
	free(p->uid);
	*p = w->pending[--w->n_pending];
	return true;
}

static int pending_put(struct dte_worker *w, const char *key, const char *uid, kube_time_t when)
{
	struct pending *p = pending_find(w, key), *n;
	char *u = strdup(uid ? uid : "");

	if (!u)
		return -ENOMEM;
	if (p) {
		free(p->uid);
		p->uid = u;
		p->when = when;
		return 0;
	}
	if (!(n = realloc(w->pending, (w->n_pending + 1) * sizeof(*n)))) {
		free(u);
		return -ENOMEM;
	}
	w->pending = n;
	n[w->n_pending] = (struct pending){.key = strdup(key), .uid = u, .when = when};
	if (!n[w->n_pending].key) {
		free(u);
		return -ENOMEM;
	}
	w->n_pending++;
	return 0;
}

static bool evicted_has(struct dte_worker *w, const char *uid)
{
	for (size_t i = 0; i < DTE_EVICTED_MAX; i++)
		if (w->evicted[i] && !strcmp(w->evicted[i], uid))
			return true;
	return false;
}

static void evicted_add(struct dte_worker *w, const char *uid)
{
	free(w->evicted[w->evicted_next]);
	w->evicted[w->evicted_next] = strdup(uid);
	w->evicted_next = (w->evicted_next + 1) % DTE_EVICTED_MAX;
}

static int64_t *rule_count(struct dte_worker *w, const char *uid, bool add)
{
	struct rule_stat *n;

	for (size_t i = 0; i < w->n_stats; i++)
		if (!strcmp(w->stats[i].uid, uid))
			return &w->stats[i].evicted;
	if (!add || !(n = realloc(w->stats, (w->n_stats + 1) * sizeof(*n))))
		return NULL;
	w->stats = n;
	if (!(n[w->n_stats].uid = strdup(uid)))
		return NULL;
	n[w->n_stats].evicted = 0;
	return &n[w->n_stats++].evicted;
}

static int dte_init(struct wk_ctx *ctx, void **ret_state)
{
	struct dte_worker *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->ctx = ctx;
	w->met = kcmd_metrics_get();
	*ret_state = w;
	return 0;
}

static void dte_fini(void *state)
{
	struct dte_worker *w = state;

	if (!w)
		return;
	while (w->n_pending)
		pending_drop(w, w->pending[0].key);
	free(w->pending);
	for (size_t i = 0; i < DTE_EVICTED_MAX; i++)
		free(w->evicted[i]);
	for (size_t i = 0; i < w->n_stats; i++)
		free(w->stats[i].uid);
	free(w->stats);
	free(w);
}

/* the cached slices and rules, parsed (dte_world) */
struct world {
	struct dte_world w;
	cJSON **slices, **rules;
	size_t n_slices, n_rules;
	int err;
};

static int collect(const struct shm_obj *o, void *ud, bool rule)
{
	struct world *x = ud;
	size_t len = 0, *n = rule ? &x->n_rules : &x->n_slices;
	cJSON ***v = rule ? &x->rules : &x->slices, **nv;
	const char *js = kcmd_obj_json(o, &len);
	cJSON *c;

	if (!js)
		return 0;
	if (!(c = cJSON_ParseWithLength(js, len)))
		return 0;
	if (!(nv = realloc(*v, (*n + 1) * sizeof(*nv)))) {
		cJSON_Delete(c);
		x->err = -ENOMEM;
		return -ENOMEM;
	}
	*v = nv;
	nv[(*n)++] = c;
	return 0;
}

static int collect_slice(const struct shm_obj *o, void *ud)
{
	return collect(o, ud, false);
}

static int collect_rule(const struct shm_obj *o, void *ud)
{
	return collect(o, ud, true);
}

static void world_free(struct world *x)
{
	for (size_t i = 0; i < x->n_slices; i++)
		cJSON_Delete(x->slices[i]);
	for (size_t i = 0; i < x->n_rules; i++)
		cJSON_Delete(x->rules[i]);
	free(x->slices);
	free(x->rules);
}

static int world_load(struct dte_worker *w, struct world *x)
{
	*x = (struct world){0};
	kcmd_cache_list(w->ctx->arena, DTE_GROUP, "resourceslices", NULL, collect_slice, x);
	kcmd_cache_list(w->ctx->arena, DTE_GROUP, "devicetaintrules", NULL, collect_rule, x);
	x->w = (struct dte_world){.slices = (const cJSON *const *)x->slices,
	                          .n_slices = x->n_slices,
	                          .rules = (const cJSON *const *)x->rules,
	                          .n_rules = x->n_rules};
	if (x->err < 0) {
		world_free(x);
		return x->err;
	}
	return 0;
}

/* podEvictionTime: over the pod's allocated claims reserved for it */
struct podclaims {
	const struct dte_world *w;
	const char *uid;
	struct dte_eviction ev;
	bool any;
	int err;
};

static int pod_claim(const struct shm_obj *o, void *ud)
{
	struct podclaims *pc = ud;
	size_t len = 0;
	const char *js = kcmd_obj_json(o, &len);
	struct dte_eviction e;
	cJSON *c;
	int r;

	if (!js || !strstr(js, pc->uid) || !(c = cJSON_ParseWithLength(js, len)))
		return 0;
	if (dte_claim_reserved_for_pod(c, pc->uid) && (r = dte_claim_eviction(pc->w, c, &e)) != 0) {
		if (r > 0) {
			r = dte_eviction_merge(&pc->ev, &e);
			pc->any = true;
			dte_eviction_free(&e);
		}
		if (r < 0)
			pc->err = r;
	}
	cJSON_Delete(c);
	return pc->err;
}

static int pod_eviction(struct dte_worker *w, const struct dte_world *world, const char *ns,
                        const char *uid, struct dte_eviction *ret)
{
	struct podclaims pc = {.w = world, .uid = uid};

	*ret = (struct dte_eviction){0};
	kcmd_cache_list(w->ctx->arena, DTE_GROUP, "resourceclaims", ns, pod_claim, &pc);
	if (pc.err < 0) {
		dte_eviction_free(&pc.ev);
		return pc.err;
	}
	*ret = pc.ev;
	return pc.any ? 1 : 0;
}

static void pod_event(struct dte_worker *w, const char *ns, const char *name, const char *uid,
                      const char *msg)
{
	struct kcmd_object_ref ref = {
	        .api_version = "v1", .kind = "Pod", .ns = ns, .name = name, .uid = uid};
	int r = kcmd_event_record(w->ctx->kc, DTE_CONTROLLER, &ref, KCMD_EVENT_NORMAL,
	                          DTE_EVENT_REASON, "%s", msg);
	if (r < 0)
		kcmd_log_v(2, "event about pod %s/%s not recorded: %s", ns, name, strerror(-r));
}

static const char *errtext(const struct kube_response *rs, int r)
{
	return rs->error.message[0] ? rs->error.message : strerror(-r);
}

/* addConditionAndDeletePod: GET, uid and deletion checks, the Event, the DisruptionTarget
 * condition when it changes, DELETE with the uid as precondition. 0 done (deleted, or nothing
 * to do), 1 deleted by this call, -errno. */
static int condition_and_delete(struct dte_worker *w, const char *ns, const char *name,
                                const char *uid)
{
	struct kube_response rs = {0};
	char *body = NULL;
	cJSON *pod = NULL;
	int r;

	r = kube_client_request(w->ctx->kc,
	                        &(struct kube_request){.verb = KUBE_GET,
	                                               .version = "v1",
	                                               .resource = "pods",
	                                               .ns = ns,
	                                               .name = name},
	                        NULL, NULL, &rs);
	if (r < 0) {
		kcmd_log_v(2, "get pod %s/%s: %s", ns, name, errtext(&rs, r));
		kube_response_clear(&rs);
		return r == -ENOENT ? 0 : r;
	}
	if (!rs.body || !(pod = cJSON_ParseWithLength(rs.body, rs.body_len))) {
		kube_response_clear(&rs);
		return -EBADMSG;
	}
	const cJSON *md = jget(pod, "metadata", NULL);
	if (!jstr(md, "uid") || strcmp(jstr(md, "uid"), uid) ||
	    cJSON_IsString(cJSON_GetObjectItemCaseSensitive(md, "deletionTimestamp"))) {
		cJSON_Delete(pod);
		kube_response_clear(&rs);
		return 0; /* replaced (NotFound upstream) or already being deleted */
	}
	cJSON_Delete(pod);
	pod_event(w, ns, name, uid, "Marking for deletion");
	r = dte_condition_patch(rs.body, rs.body_len, kube_time_now(), &body);
	kube_response_clear(&rs);
	if (r > 0) {
		r = kube_client_request(w->ctx->kc,
		                        &(struct kube_request){.verb = KUBE_PATCH,
		                                               .version = "v1",
		                                               .resource = "pods",
		                                               .ns = ns,
		                                               .name = name,
		                                               .subresource = "status",
		                                               .patch_type = KUBE_PATCH_STRATEGIC,
		                                               .body = body,
		                                               .body_len = strlen(body)},
		                        NULL, NULL, &rs);
		if (r < 0)
			kcmd_log_v(2, "patch status of pod %s/%s: %s", ns, name, errtext(&rs, r));
		kube_response_clear(&rs);
	}
	free(body);
	if (r < 0)
		return r == -ENOENT ? 0 : r;
	r = kube_client_request(w->ctx->kc,
	                        &(struct kube_request){.verb = KUBE_DELETE,
	                                               .version = "v1",
	                                               .resource = "pods",
	                                               .ns = ns,
	                                               .name = name,
	                                               .precondition_uid = uid},
	                        NULL, NULL, &rs);
	if (r < 0)
		kcmd_log_v(2, "delete pod %s/%s: %s", ns, name, errtext(&rs, r));
	kube_response_clear(&rs);
	if (r == -ENOENT)
		return 0;
	return r < 0 ? r : 1;
}

static void requeue_at(kube_time_t at, struct wk_result *res)
{
	kube_time_t now = kube_time_now();

	res->requeue_after = true;
	res->after_usec = at > now ? (uint64_t)(at - now) / 1000 + 1 : 1;
}

/* cancelWorkWithEvent */
static void cancel(struct dte_worker *w, const char *key, const char *ns, const char *name,
                   const char *uid)
{
	if (pending_drop(w, key)) {
		kcmd_log_v(3, "Canceled pod eviction pod=\"%s/%s\"", ns, name);
		pod_event(w, ns, name, uid, "Cancelling deletion");
	}
}

/* handlePod + maybeDeletePod for one pod */
static void sync_pod(struct dte_worker *w, const char *key, const char *ns, const char *name,
                     struct wk_result *res)
{
	struct shm_obj *o = NULL, copy;
	struct shm_pod_view v;
	char uid[128] = "";
	bool deleting = false, scheduled = false;
	struct dte_eviction ev = {0};
	struct world x;
	int r;

	if (kcmd_cache_get(w->ctx->arena, "", "pods", ns, name, &o) < 0) {
		pending_drop(w, key); /* handlePodChange(old, nil): cancelEvict, no Event */
		return;
	}
	if (shm_obj_dup(o, &copy) == 0) {
		if (shm_pod_view_init(&copy, &v) == 0) {
			snprintf(uid, sizeof(uid), "%s", v.pod.meta.uid ? v.pod.meta.uid : "");
			deleting = v.pod.meta.deletion_timestamp != 0;
			scheduled = v.pod.node_name && v.pod.node_name[0];
		}
		shm_pod_view_free(&v);
	}
	kcmd_obj_free(o);
	if (!uid[0])
		return;
	if (!scheduled) {
		cancel(w, key, ns, name, uid);
		return;
	}
	if ((r = world_load(w, &x)) < 0) {
		res->err = r;
		return;
	}
	r = pod_eviction(w, &x.w, ns, uid, &ev);
	world_free(&x);
	if (r < 0) {
		res->err = r;
		return;
	}
	if (r == 0) {
		cancel(w, key, ns, name, uid);
		return;
	}
	if (deleting || evicted_has(w, uid)) {
		/* maybeDeletePod: a pod being deleted is left alone; an evicted one is done */
		pending_drop(w, key);
		goto out;
	}
	kube_time_t now = kube_time_now();
	struct pending *p = pending_find(w, key);
	if (!p || p->when != ev.when || strcmp(p->uid, uid))
		kcmd_log_v(3, "Adding %s pod eviction pod=\"%s/%s\"",
		           ev.when > now ? "delayed" : "immediate", ns, name);
	if ((r = pending_put(w, key, uid, ev.when)) < 0) {
		res->err = r;
		goto out;
	}
	if (ev.when > now) {
		requeue_at(ev.when, res);
		goto out;
	}
	r = condition_and_delete(w, ns, name, uid);
	if (r < 0) {
		res->err = r;
		goto out;
	}
	pending_drop(w, key);
	evicted_add(w, uid);
	if (r > 0) {
		double latency = (double)(kube_time_now() - ev.when) / 1e9;
		kcmd_log_v(2, "Evicted pod by deleting it pod=\"%s/%s\" latency=%.3fs", ns, name,
		           latency);
		kcmd_metric_inc(w->met, DTE_M_DELETIONS, NULL);
		kcmd_metric_observe(w->met, DTE_M_LATENCY, NULL, latency);
		for (size_t i = 0; i < ev.n_reasons; i++) {
			int64_t *c = ev.reasons[i].rule && ev.reasons[i].uid
			                     ? rule_count(w, ev.reasons[i].uid, true)
			                     : NULL;
			if (c)
				(*c)++;
		}
	}
out:
	dte_eviction_free(&ev);
}

/* countPendingPods / countTaintedDevices for one rule */
struct rulecount {
	struct dte_worker *w;
	const struct dte_world *world;
	const char *uid;
	const cJSON *rule;
	char **pods, **nss; /* distinct ns/name and ns */
	size_t n_pods, n_nss;
	int64_t allocated_devices;
	int err;
};

static bool add_distinct(char ***v, size_t *n, const char *s)
{
	char **nv;

	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*v)[i], s))
			return true;
	if (!(nv = realloc(*v, (*n + 1) * sizeof(*nv))) || !(nv[*n] = strdup(s))) {
		if (nv)
			*v = nv;
		return false;
	}
	*v = nv;
	(*n)++;
	return true;
}

/* a pod counts when it is cached with that uid, scheduled and not being deleted */
static bool pod_counts(struct dte_worker *w, const char *ns, const char *name, const char *uid)
{
	struct shm_obj *o = NULL, copy;
	struct shm_pod_view v;
	bool yes = false;

	if (kcmd_cache_get(w->ctx->arena, "", "pods", ns, name, &o) < 0)
		return false;
	if (shm_obj_dup(o, &copy) == 0) {
		if (shm_pod_view_init(&copy, &v) == 0)
			yes = v.pod.meta.uid && uid && !strcmp(v.pod.meta.uid, uid) &&
			      !v.pod.meta.deletion_timestamp && v.pod.node_name &&
			      v.pod.node_name[0];
		shm_pod_view_free(&v);
	}
	kcmd_obj_free(o);
	return yes;
}

static int count_claim(const struct shm_obj *o, void *ud)
{
	struct rulecount *rc = ud;
	size_t len = 0;
	const char *js = kcmd_obj_json(o, &len);
	struct dte_eviction e;
	const cJSON *it;
	cJSON *c;
	bool hit = false;

	if (!js || !strstr(js, "\"allocation\"") || !(c = cJSON_ParseWithLength(js, len)))
		return 0;
	cJSON_ArrayForEach(it, jget(jget(c, "status", "allocation"), "devices", "results"))
	{
		if (dte_rule_matches(rc->rule, jstr(it, "driver"), jstr(it, "pool"),
		                     jstr(it, "device")))
			rc->allocated_devices++;
	}
	if (dte_claim_eviction(rc->world, c, &e) > 0) {
		for (size_t i = 0; i < e.n_reasons; i++)
			if (e.reasons[i].rule && e.reasons[i].uid &&
			    !strcmp(e.reasons[i].uid, rc->uid))
				hit = true;
		dte_eviction_free(&e);
	}
	const char *ns = kcmd_obj_namespace(o);
	const cJSON *reserved = jget(c, "status", "reservedFor");
	if (!hit)
		reserved = NULL;
	cJSON_ArrayForEach(it, reserved)
	{
		const char *g = jstr(it, "apiGroup"), *res = jstr(it, "resource"),
		           *n = jstr(it, "name"), *u = jstr(it, "uid");
		char key[KCMD_KEY_MAX + 1];
		if ((g && *g) || !res || strcmp(res, "pods") || !n ||
		    kcmd_key_make(key, sizeof(key), ns, n) <= 0 || !pod_counts(rc->w, ns, n, u))
			continue;
		if (!add_distinct(&rc->pods, &rc->n_pods, key) ||
		    !add_distinct(&rc->nss, &rc->n_nss, ns))
			rc->err = -ENOMEM;
	}
	cJSON_Delete(c);
	return rc->err;
}

/* devices of the pools' newest generations that the rule selects */
static int64_t slice_devices(const struct dte_world *w, const cJSON *rule)
{
	int64_t n = 0;

	for (size_t i = 0; i < w->n_slices; i++) {
		const cJSON *spec = jget(w->slices[i], "spec", NULL), *d;
		const char *drv = jstr(spec, "driver"),
		           *pool = jstr(jget(spec, "pool", NULL), "name");
		const cJSON *g = jget(jget(spec, "pool", NULL), "generation", NULL);
		bool newest = true;
		for (size_t k = 0; k < w->n_slices; k++) {
			const cJSON *s2 = jget(w->slices[k], "spec", NULL);
			const cJSON *g2 = jget(jget(s2, "pool", NULL), "generation", NULL);
			const char *d2 = jstr(s2, "driver"),
			           *p2 = jstr(jget(s2, "pool", NULL), "name");
			if (d2 && drv && p2 && pool && !strcmp(d2, drv) && !strcmp(p2, pool) &&
			    cJSON_IsNumber(g2) && cJSON_IsNumber(g) &&
			    g2->valuedouble > g->valuedouble)
				newest = false;
		}
		if (!newest)
			continue;
		cJSON_ArrayForEach(d, jget(spec, "devices", NULL))
		{
			if (dte_rule_matches(rule, drv, pool, jstr(d, "name")))
				n++;
		}
	}
	return n;
}

static const cJSON *find_condition(const cJSON *rule)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, jget(jget(rule, "status", NULL), "conditions", NULL))
	{
		if (jstr(c, "type") && !strcmp(jstr(c, "type"), "EvictionInProgress"))
			return c;
	}
	return NULL;
}

static bool same_str(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

static int apply_condition(struct dte_worker *w, const char *name, const char *uid,
                           const char *status, const char *reason, const char *message, int64_t gen,
                           kube_time_t now)
{
	struct kube_response rs = {0};
	char ts[KUBE_TIME_BUF];
	cJSON *b = cJSON_CreateObject(), *md, *st, *conds, *c;
	char *body = NULL;
	int r = -ENOMEM;

	kube_time_format(now, ts);
	if (!b || !cJSON_AddStringToObject(b, "apiVersion", DTE_GROUP "/" DTE_VERSION) ||
	    !cJSON_AddStringToObject(b, "kind", "DeviceTaintRule") ||
	    !(md = cJSON_AddObjectToObject(b, "metadata")) ||
	    !cJSON_AddStringToObject(md, "name", name) ||
	    !cJSON_AddStringToObject(md, "uid", uid) ||
	    !(st = cJSON_AddObjectToObject(b, "status")) ||
	    !(conds = cJSON_AddArrayToObject(st, "conditions")) || !(c = cJSON_CreateObject()))
		goto out;
	cJSON_AddItemToArray(conds, c);
	if (!cJSON_AddStringToObject(c, "type", "EvictionInProgress") ||
	    !cJSON_AddStringToObject(c, "status", status) ||
	    !cJSON_AddStringToObject(c, "reason", reason) ||
	    !cJSON_AddStringToObject(c, "message", message) ||
	    !cJSON_AddNumberToObject(c, "observedGeneration", (double)gen) ||
	    !cJSON_AddStringToObject(c, "lastTransitionTime", ts) ||
	    !(body = cJSON_PrintUnformatted(b)))
		goto out;
	r = kube_client_request(w->ctx->kc,
	                        &(struct kube_request){.verb = KUBE_PATCH,
	                                               .group = DTE_GROUP,
	                                               .version = DTE_VERSION,
	                                               .resource = "devicetaintrules",
	                                               .name = name,
	                                               .subresource = "status",
	                                               .patch_type = KUBE_PATCH_APPLY,
	                                               .field_manager = DTE_CONTROLLER,
	                                               .body = body,
	                                               .body_len = strlen(body)},
	                        NULL, NULL, &rs);
	if (r < 0)
		kcmd_log_v(2, "add condition to DeviceTaintRule %s status: %s", name,
		           errtext(&rs, r));
	kube_response_clear(&rs);
out:
	free(body);
	cJSON_Delete(b);
	return r;
}

/* maybeUpdateRuleStatus */
static void sync_rule(struct dte_worker *w, const char *name, struct wk_result *res)
{
	struct shm_obj *o = NULL;
	struct rulecount rc = {.w = w};
	struct world x;
	cJSON *rule = NULL;
	size_t len = 0;
	const char *js, *status = "False", *reason = "";
	char msg[1024];
	kube_time_t now = kube_time_now(), ltt = 0;
	int r;

	if (kcmd_cache_get(w->ctx->arena, DTE_GROUP, "devicetaintrules", NULL, name, &o) < 0)
		return; /* deleted */
	js = kcmd_obj_json(o, &len);
	rule = js ? cJSON_ParseWithLength(js, len) : NULL;
	kcmd_obj_free(o);
	if (!rule)
		return;
	const cJSON *md = jget(rule, "metadata", NULL), *cond = find_condition(rule);
	const char *uid = jstr(md, "uid"), *effect = jstr(jget(rule, "spec", "taint"), "effect");
	int64_t gen = cJSON_IsNumber(jget(md, "generation", NULL))
	                      ? (int64_t)jget(md, "generation", NULL)->valuedouble
	                      : 0;
	if (!uid)
		goto out;
	if (cond) {
		const char *l = jstr(cond, "lastTransitionTime");
		const cJSON *og = jget(cond, "observedGeneration", NULL);
		if (l && kube_time_parse(l, strlen(l), &ltt) < 0)
			ltt = 0;
		if (cJSON_IsNumber(og) && (int64_t)og->valuedouble == gen &&
		    now - ltt < DTE_RULE_PERIOD) {
			requeue_at(ltt + DTE_RULE_PERIOD, res);
			goto out;
		}
	}
	int64_t sdev = 0;
	if (effect && (!strcmp(effect, "NoExecute") || !strcmp(effect, "None"))) {
		if ((r = world_load(w, &x)) < 0) {
			res->err = r;
			goto out;
		}
		if (!strcmp(effect, "None"))
			x.w.simulate_rule = name;
		rc.world = &x.w;
		rc.uid = uid;
		rc.rule = rule;
		kcmd_cache_list(w->ctx->arena, DTE_GROUP, "resourceclaims", NULL, count_claim, &rc);
		if (!strcmp(effect, "None"))
			sdev = slice_devices(&x.w, rule);
		world_free(&x);
		if (rc.err < 0) {
			res->err = rc.err;
			goto out;
		}
	}
	int64_t *ev = rule_count(w, uid, false);
	dte_rule_condition(effect, (int64_t)rc.n_pods, (int64_t)rc.n_nss, ev ? *ev : 0, sdev,
	                   rc.allocated_devices, &status, &reason, msg, sizeof(msg));
	const cJSON *og = cond ? jget(cond, "observedGeneration", NULL) : NULL;
	bool same = cond && same_str(jstr(cond, "status"), status) &&
	            same_str(jstr(cond, "reason"), reason) &&
	            same_str(jstr(cond, "message"), msg) && cJSON_IsNumber(og) &&
	            (int64_t)og->valuedouble == gen;
	if (!same) {
		kcmd_log_v(
		        4,
		        "Calculated new condition deviceTaintRule=\"%s\" reason=%s message=\"%s\"",
		        name, reason, msg);
		if ((r = apply_condition(w, name, uid, status, reason, msg, gen, now)) < 0 &&
		    r != -ENOENT) {
			res->err = r;
			goto out;
		}
	}
	/* upstream adds the rule again ruleStatusPeriod after each pod change and eviction it
	 * causes; kcmd looks again while pods are pending */
	if (rc.n_pods > 0)
		requeue_at(now + DTE_RULE_PERIOD, res);
out:
	for (size_t i = 0; i < rc.n_pods; i++)
		free(rc.pods[i]);
	for (size_t i = 0; i < rc.n_nss; i++)
		free(rc.nss[i]);
	free(rc.pods);
	free(rc.nss);
	cJSON_Delete(rule);
}

static void dte_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct dte_worker *w = state;
	char ns[KCMD_KEY_MAX + 1], name[KCMD_KEY_MAX + 1];
	static const char *const kinds[][2] = {{"", "pods"},
	                                       {DTE_GROUP, "resourceclaims"},
	                                       {DTE_GROUP, "resourceslices"},
	                                       {DTE_GROUP, "devicetaintrules"}};

	(void)q;
	*res = (struct wk_result){0};
	/* cache.WaitFor: nothing is decided before every informer has listed once */
	if (!w->synced) {
		for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
			if (kcmd_cache_synced(w->ctx->arena, kinds[i][0], kinds[i][1]) != 1) {
				res->requeue_after = true;
				res->after_usec = 100000;
				return;
			}
		w->synced = true;
		kcmd_log_v(1, "Underlying informers have synced");
	}
	if (!strncmp(key, "rule:", 5)) {
		sync_rule(w, key + 5, res);
		return;
	}
	if (strncmp(key, "pod:", 4) ||
	    kcmd_key_split(key + 4, ns, sizeof(ns), name, sizeof(name)) < 0 || !ns[0]) {
		kcmd_log_error("%s failed with: invalid key", key);
		return;
	}
	sync_pod(w, key, ns, name, res);
}

static const struct wk_controller dte_worker_desc = {
        .name = DTE_CONTROLLER,
        .queues = dte_queue_names,
        .init = dte_init,
        .sync = dte_sync,
        .fini = dte_fini,
};

/* ---- the descriptor ----------------------------------------------------------------------- */
static int dte_workers(const struct kcmd_flag_values *v)
{
	/* one process holds the pending evictions (see the design note) */
	(void)v;
	return 1;
}

static const char *const dte_gates[] = {"DynamicResourceAllocation", "DRADeviceTaints", NULL};
static const struct kcmd_watch dte_watches[] = {
        {"", "v1", "pods", "Pod", KCMD_CACHE_POD, true},
        {DTE_GROUP, DTE_VERSION, "resourceclaims", "ResourceClaim", KCMD_CACHE_OBJECT, true},
        {DTE_GROUP, DTE_VERSION, "resourceslices", "ResourceSlice", KCMD_CACHE_OBJECT, false},
        {DTE_GROUP, DTE_VERSION, "devicetaintrules", "DeviceTaintRule", KCMD_CACHE_OBJECT, false},
};
static const struct kcmd_queue dte_queues[] = {{.name = DTE_QUEUE}};
static const struct kcmd_flag dte_flags[] = {
        {.name = "concurrent-device-taint-eviction-syncs",
         .type = KCMD_FLAG_INT,
         .def = "8",
         .min = 1,
         .max = 2147483647,
         .help = "The number of operations (evicting pods, updating DeviceTaintRule status) "
                 "allowed to run concurrently. Greater number = more responsive, but more CPU "
                 "(and network) load (kcmd: one worker process)"},
};

const struct kcmd_controller kcmd_devicetainteviction_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = DTE_CONTROLLER,
        .enabled_by_default = true,
        .feature_gates = dte_gates,
        .service_account = "device-taint-eviction-controller",
        .watches = dte_watches,
        .n_watches = sizeof(dte_watches) / sizeof(dte_watches[0]),
        .queues = dte_queues,
        .n_queues = 1,
        .flags = dte_flags,
        .n_flags = sizeof(dte_flags) / sizeof(dte_flags[0]),
        .worker_count = dte_workers,
        .handlers = &dte_handlers,
        .worker = &dte_worker_desc,
        .metrics = dte_metrics,
        .n_metrics = DTE_M_N,
};
