/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/podgroupprotection/plugin.c: kcm's podgroup-protection-controller (no alias), on by
 * default but only with the GenericWorkload feature gate (beta, off in v1.37), client
 * "podgroup-protection-controller" (upstream pkg/controller/scheduling/podgroupprotection and
 * cmd/kube-controller-manager/app/scheduling.go). docs/podgroupprotection.md.
 *
 * Shape: PodGroups (scheduling.k8s.io/v1beta1) are cached whole; pods are the cache's typed
 * records, which keep no spec.schedulingGroup, so which pods reference a PodGroup is read from
 * a live LIST of its namespace (upstream's informer index by podGroupName has no counterpart
 * here: each sync of a PodGroup being deleted costs kcmd a LIST that upstream saves). One queue
 * "podgroupprotection", one worker process (kcm runs this controller with one worker, no flag).
 *
 * Handlers: a PodGroup added or updated is queued when it is a deletion candidate (being deleted
 * with the finalizer). A pod event that upstream would act on (a terminated pod added or
 * updated, a pod deleted, a pod replaced under its name: pgp_pod_event) queues every deletion
 * candidate of the pod's namespace, since the record does not say which PodGroup the pod names.
 *
 * Sync (processPodGroup): a PodGroup not in the cache or not a deletion candidate is done; else
 * the finalizer is removed (Update of the cached object) when no active pod of the namespace
 * names it (pgp_decide), and kept otherwise.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kcmd/kcmd.h"
#include "workers/podgroupprotection/pgp.h"
#include "workers/worker.h"

#define PGP_CONTROLLER "podgroup-protection-controller"
#define PGP_QUEUE      "podgroupprotection"
#define PGP_GROUP      "scheduling.k8s.io"
#define PGP_VERSION    "v1beta1"
#define PGP_RESOURCE   "podgroups"

/* ---- handlers (kcmd-dispatcher) ----------------------------------------------------------- */
static void add_key(struct inf_handler_ctx *ctx, const char *ns, const char *name)
{
	char key[KCMD_KEY_MAX + 1];

	if (kcmd_key_make(key, sizeof(key), ns, name) >= 0)
		kcmd_queue_add(ctx, 0, key);
}

/* handlePodGroupUpdate */
static void on_podgroup(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	size_t len = 0;
	const char *js = kcmd_event_json(ev, &len);
	struct pgp_group g;

	if (!js || pgp_group_parse(js, len, &g) < 0)
		return;
	if (pgp_is_deletion_candidate(&g)) {
		kcmd_log_v(4, "Got event on PodGroup podGroup=\"%s/%s\"", g.ns ? g.ns : "", g.name);
		add_key(ctx, g.ns, g.name);
	}
	pgp_group_free(&g);
}

struct ns_walk {
	struct inf_handler_ctx *ctx;
	const char *pod; /* "ns/name" of the pod whose event it is, for the log */
};

static int queue_candidate(const struct shm_obj *o, void *userdata)
{
	struct ns_walk *w = userdata;
	size_t len = 0;
	const char *js = kcmd_obj_json(o, &len);
	struct pgp_group g;

	if (js && pgp_group_parse(js, len, &g) == 0) {
		if (pgp_is_deletion_candidate(&g)) {
			kcmd_log_v(4,
			           "Enqueuing PodGroup for pod event pod=\"%s\" podGroup=\"%s/%s\"",
			           w->pod, g.ns ? g.ns : "", g.name);
			add_key(w->ctx, g.ns, g.name);
		}
		pgp_group_free(&g);
	}
	return 0;
}

/* enqueuePodGroupForPod, for a pod whose podGroupName the record does not hold */
static void queue_namespace(struct inf_handler_ctx *ctx, const char *ns, const char *pod)
{
	char who[KCMD_KEY_MAX + 1];
	struct ns_walk w = {ctx, who};

	if (!ns || !*ns)
		return;
	snprintf(who, sizeof(who), "%s/%s", ns, pod ? pod : "");
	kcmd_cache_list(ctx->arena, PGP_GROUP, PGP_RESOURCE, ns, queue_candidate, &w);
}

static void on_pod_add(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	const struct kube_pod *p = ev->obj;

	if (!p)
		return;
	if (pgp_pod_event(NULL, &(struct pgp_pod_state){p->meta.uid, p->phase}))
		queue_namespace(ctx, p->meta.namespace, p->meta.name);
}

static void on_pod_update(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	const struct kube_pod *p = ev->obj;
	struct pgp_pod_state cur, old;

	if (!p)
		return;
	cur = (struct pgp_pod_state){p->meta.uid, p->phase};
	/* the old pod's phase plays no part (handlePodChange looks at the new one's) */
	old = (struct pgp_pod_state){ev->old ? kcmd_obj_uid(ev->old) : p->meta.uid,
	                             KUBE_POD_PHASE_UNSET};
	/* the old and the new pod share namespace and name: one walk serves both */
	if (pgp_pod_event(&old, &cur))
		queue_namespace(ctx, p->meta.namespace, p->meta.name);
}

static void on_pod_delete(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	const struct pgp_pod_state old = {NULL, KUBE_POD_PHASE_UNSET};

	if (!pgp_pod_event(&old, NULL))
		return;
	if (ev->meta)
		queue_namespace(ctx, kcmd_meta_namespace(ev->meta), kcmd_meta_name(ev->meta));
	else if (ev->old) /* a tombstone: its last known state */
		queue_namespace(ctx, kcmd_obj_namespace(ev->old), kcmd_obj_name(ev->old));
}

static int resync_one(const struct shm_obj *o, void *userdata)
{
	struct inf_handler_ctx *ctx = userdata;
	size_t len = 0;
	const char *js = kcmd_obj_json(o, &len);
	struct pgp_group g;

	if (js && pgp_group_parse(js, len, &g) == 0) {
		if (pgp_is_deletion_candidate(&g))
			add_key(ctx, g.ns, g.name);
		pgp_group_free(&g);
	}
	return 0;
}

static void pgp_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	kcmd_cache_list(ctx->arena, PGP_GROUP, PGP_RESOURCE, NULL, resync_one, ctx);
}

static const char *const pgp_queue_names[] = {PGP_QUEUE, NULL};

static const struct inf_handler_entry pgp_entries[] = {
        {PGP_GROUP, PGP_RESOURCE, on_podgroup, on_podgroup, NULL},
        {"", "pods", on_pod_add, on_pod_update, on_pod_delete},
};

static const struct inf_handler_table pgp_handlers = {
        .controller = PGP_CONTROLLER,
        .queues = pgp_queue_names,
        .entries = pgp_entries,
        .n_entries = sizeof(pgp_entries) / sizeof(pgp_entries[0]),
        .resync = pgp_resync,
};

/* ---- sync (kcmd-worker) ------------------------------------------------------------------- */

/* Test seam (docs/testing.md): KCMD_TEST_PGP_KEEP_NS=<ns> makes this worker never remove the
 * finalizer of a PodGroup of namespace <ns>, as a worker that lost the PodGroup's key would (the
 * fault TestPodGroupProtection_WorkerKilled's oracle targets). Read once at start; unset or
 * empty: no effect. */
static const char *keep_ns;

static int pgp_init(struct wk_ctx *ctx, void **ret_state)
{
	const char *v = getenv("KCMD_TEST_PGP_KEEP_NS");

	if (v && *v) {
		keep_ns = v;
		kcmd_log_warning("KCMD_TEST_PGP_KEEP_NS=%s: PodGroups there keep their finalizer "
		                 "(a test seam: their release is dropped)",
		                 v);
	}
	kcmd_log_info("Starting PodGroup protection controller");
	*ret_state = ctx;
	return 0;
}

static void pgp_fini(void *state)
{
	(void)state;
	kcmd_log_info("Shutting down PodGroup protection controller");
}

static const char *reason(int r)
{
	return kcmd_kube_reason(r) ? kcmd_kube_reason(r) : strerror(-r);
}

/* The live pod list of the PodGroup's namespace (the informer index's stand-in). */
static int list_pods(struct wk_ctx *ctx, const char *ns, cJSON **ret)
{
	struct kube_request rq = {.verb = KUBE_LIST, .version = "v1", .resource = "pods", .ns = ns};
	struct kube_response resp = {0};
	int r;

	*ret = NULL;
	r = kube_client_request(ctx->kc, &rq, NULL, NULL, &resp);
	if (r == 0)
		r = resp.error.err;
	if (r == 0) {
		*ret = resp.body ? cJSON_Parse(resp.body) : NULL;
		if (!*ret)
			r = -EBADMSG;
	}
	kube_response_clear(&resp);
	return r;
}

static int remove_finalizer(struct wk_ctx *ctx, const struct pgp_group *g)
{
	char *body = NULL;
	int r = pgp_finalizer_remove(g, &body);

	if (r == 0)
		r = kcmd_kube_request(ctx->kc,
		                      &(struct kcmd_request){.method = "PUT",
		                                             .group = PGP_GROUP,
		                                             .version = PGP_VERSION,
		                                             .resource = PGP_RESOURCE,
		                                             .ns = g->ns,
		                                             .name = g->name,
		                                             .body = body,
		                                             .body_kind = "PodGroup"},
		                      NULL, NULL);
	free(body);
	if (r < 0)
		kcmd_log_error("Error removing protection finalizer from PodGroup "
		               "podGroup=\"%s/%s\" err=\"%s\"",
		               g->ns, g->name, reason(r));
	else
		kcmd_log_v(3, "Removed protection finalizer from PodGroup podGroup=\"%s/%s\"",
		           g->ns, g->name);
	return r;
}

static int process_podgroup(struct wk_ctx *ctx, const char *ns, const char *name)
{
	struct shm_obj *o = NULL;
	struct pgp_group g;
	cJSON *pods = NULL;
	const cJSON *pod;
	size_t len = 0;
	const char *js;
	int r;

	r = kcmd_cache_get(ctx->arena, PGP_GROUP, PGP_RESOURCE, ns, name, &o);
	if (r == -ENOENT) {
		kcmd_log_v(4, "PodGroup not found, ignoring podGroup=\"%s/%s\"", ns, name);
		return 0;
	}
	if (r < 0)
		return r;
	js = kcmd_obj_json(o, &len);
	r = js ? pgp_group_parse(js, len, &g) : -EBADMSG;
	kcmd_obj_free(o);
	if (r == -EINVAL) { /* not an object, or no name: nothing can be written to it */
		kcmd_log_warning("PodGroup %s/%s: the cached object does not parse, skipped", ns,
		                 name);
		return 0;
	}
	if (r < 0)
		return r;
	if (!g.ns)
		g.ns = ns;
	if (!pgp_is_deletion_candidate(&g))
		goto out;
	if ((r = list_pods(ctx, ns, &pods)) < 0) {
		kcmd_log_error("live list of active pods failed for PodGroup %s/%s: %s", ns, name,
		               reason(r));
		goto out;
	}
	switch (pgp_decide(&g, pods)) {
	case PGP_KEEP:
		pod = pgp_first_active_pod(pods, ns, name);
		kcmd_log_v(4, "Pod is using PodGroup pod=\"%s/%s\" podGroup=\"%s/%s\"", ns,
		           cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
		                   cJSON_GetObjectItemCaseSensitive(pod, "metadata"), "name")),
		           ns, name);
		kcmd_log_v(4,
		           "Keeping PodGroup finalizer because it is still being used by pods "
		           "podGroup=\"%s/%s\"",
		           ns, name);
		break;
	case PGP_REMOVE:
		kcmd_log_v(4, "No active pods found using PodGroup podGroup=\"%s/%s\"", ns, name);
		if (keep_ns && strcmp(keep_ns, ns) == 0) {
			kcmd_log_warning("KCMD_TEST_PGP_KEEP_NS: release of PodGroup %s/%s dropped",
			                 ns, name);
			break;
		}
		r = remove_finalizer(ctx, &g);
		break;
	case PGP_NOTHING:
		break;
	}
out:
	cJSON_Delete(pods);
	pgp_group_free(&g);
	return r;
}

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* WaitForNamedCacheSync(podGroupSynced, podSynced): until both are synced a key is looked at
 * again 100 ms later. */
static bool caches_synced(struct shm_arena *a)
{
	static bool synced;

	if (synced)
		return true;
	if (kcmd_cache_synced(a, PGP_GROUP, PGP_RESOURCE) != 1 ||
	    kcmd_cache_synced(a, "", "pods") != 1)
		return false;
	synced = true;
	kcmd_log_info("Caches are synced for %s", PGP_CONTROLLER);
	return true;
}

static void pgp_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct wk_ctx *ctx = state;
	char ns[256], name[256];
	uint64_t t0 = now_us();
	int r;

	(void)q;
	*res = (struct wk_result){0};
	if (!caches_synced(ctx->arena)) {
		res->requeue_after = true;
		res->after_usec = 100000;
		return;
	}
	if (kcmd_key_split(key, ns, sizeof(ns), name, sizeof(name)) < 0 || !ns[0]) {
		kcmd_log_error("PodGroup %s failed with: error parsing PodGroup key \"%s\"", key,
		               key);
		return;
	}
	kcmd_log_v(4, "Processing PodGroup podGroup=\"%s\"", key);
	r = process_podgroup(ctx, ns, name);
	kcmd_log_v(5, "Finished processing PodGroup podGroup=\"%s\" duration=\"%.3fms\"", key,
	           (double)(now_us() - t0) / 1000.0);
	if (r < 0) {
		kcmd_log_error("PodGroup %s failed with: %s", key, reason(r));
		res->err = r;
	}
}

static const struct wk_controller pgp_worker = {
        .name = PGP_CONTROLLER,
        .queues = pgp_queue_names,
        .init = pgp_init,
        .sync = pgp_sync,
        .fini = pgp_fini,
};

/* ---- the descriptor ----------------------------------------------------------------------- */
/* kcm's requiredFeatureGates: with GenericWorkload off (v1.37's default) the controller does not
 * start, even when named in --controllers; `*` covers it once the gate is on */
static const char *const pgp_gates[] = {"GenericWorkload", NULL};
static const struct kcmd_watch pgp_watches[] = {
        {PGP_GROUP, PGP_VERSION, PGP_RESOURCE, "PodGroup", KCMD_CACHE_OBJECT, true},
        {"", "v1", "pods", "Pod", KCMD_CACHE_POD, true},
};
static const struct kcmd_queue pgp_queues[] = {{.name = PGP_QUEUE}};

const struct kcmd_controller kcmd_podgroupprotection_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = PGP_CONTROLLER,
        .enabled_by_default = true,
        .feature_gates = pgp_gates,
        .service_account = PGP_CONTROLLER,
        .watches = pgp_watches,
        .n_watches = sizeof(pgp_watches) / sizeof(pgp_watches[0]),
        .queues = pgp_queues,
        .n_queues = 1,
        .handlers = &pgp_handlers,
        .worker = &pgp_worker,
};
