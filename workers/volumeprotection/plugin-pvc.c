/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/volumeprotection/plugin-pvc.c: kcm's persistentvolumeclaim-protection-controller
 * (alias pvc-protection), on by default, client "pvc-protection-controller" (upstream
 * pkg/controller/volume/pvcprotection). docs/volumeprotection.md.
 *
 * Shape: PVCs are cached whole (finalizers, deletionTimestamp, status.phase and conditions
 * decide); pods are the cache's typed records, which keep no volumes, so which pods use a PVC
 * is read from a live LIST of the PVC's namespace (upstream's askAPIServer; its informer
 * index by claim, askInformer, has no counterpart: a used PVC costs kcmd the LIST that upstream
 * saves). One queue "pvcprotection", one worker process (kcm runs this controller with one
 * worker and has no flag for it).
 *
 * Handlers: a PVC added or updated is queued when it lacks the finalizer, is a deletion
 * candidate, or (PersistentVolumeClaimUnusedSinceTime) has no Unused condition yet. A pod
 * added, deleted, or updated in what decides usage as far as its record shows (uid, nodeName,
 * phase, deletionTimestamp, deletionGracePeriodSeconds) queues the PVCs of its namespace that a
 * pod can affect (deletion candidates; Bound PVCs not being deleted when the gate is on):
 * upstream queues exactly the claims the pod names, which the record does not hold.
 *
 * Sync (processPVC): a deletion candidate not used by any pod (podUsesPVCForDeletion) loses the
 * finalizer; a PVC not being deleted without it gets it; with the gate, a Bound PVC not being
 * deleted gets the Unused condition (True NoPodsUsingPVC / False PodUsingPVC) when its value
 * changes (podUsesPVCForUnusedSince). Writes are Updates (PUT, and PUT of /status) of the object
 * the decision was made on, as upstream's: a Conflict is retried with the queue's rate limit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kcmd/kcmd.h"
#include "lib/features.h"
#include "shm/record-model.h"
#include "workers/volumeprotection/protection.h"
#include "workers/worker.h"

#define PVCP_CONTROLLER "persistentvolumeclaim-protection-controller"
#define PVCP_QUEUE      "pvcprotection"

static bool unused_gate(void)
{
	return kcmd_feature_enabled(KCMD_FEAT_PVC_UNUSED_SINCE_TIME);
}

/* ---- handlers (kcmd-dispatcher) ----------------------------------------------------------- */
static void add_key(struct inf_handler_ctx *ctx, const char *ns, const char *name)
{
	char key[KCMD_KEY_MAX + 1];

	if (kcmd_key_make(key, sizeof(key), ns, name) >= 0)
		kcmd_queue_add(ctx, 0, key);
}

static void on_pvc(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	size_t len = 0;
	const char *js = kcmd_event_json(ev, &len);
	struct vp_object pvc;

	if (!js || vp_object_parse(js, len, VP_PVC_FINALIZER, &pvc) < 0)
		return;
	kcmd_log_v(4, "Got event on PVC pvc=\"%s/%s\"", pvc.ns ? pvc.ns : "", pvc.name);
	if (vp_pvc_wants_sync(&pvc, unused_gate()))
		add_key(ctx, pvc.ns, pvc.name);
	vp_object_free(&pvc);
}

struct ns_walk {
	struct inf_handler_ctx *ctx;
	bool gate;
};

static int queue_relevant(const struct shm_obj *o, void *userdata)
{
	struct ns_walk *w = userdata;
	size_t len = 0;
	const char *js = kcmd_obj_json(o, &len);
	struct vp_object pvc;

	if (js && vp_object_parse(js, len, VP_PVC_FINALIZER, &pvc) == 0) {
		if (vp_pvc_pod_event_relevant(&pvc, w->gate))
			add_key(w->ctx, pvc.ns, pvc.name);
		vp_object_free(&pvc);
	}
	return 0;
}

/* enqueuePVCs for a pod of namespace ns whose volumes the cache does not hold */
static void queue_namespace(struct inf_handler_ctx *ctx, const char *ns, const char *pod,
                            const char *uid)
{
	struct ns_walk w = {ctx, unused_gate()};

	if (!ns || !*ns)
		return;
	kcmd_log_v(4, "Enqueuing PVCs for Pod pod=\"%s/%s\" podUID=\"%s\"", ns, pod ? pod : "",
	           uid ? uid : "");
	kcmd_cache_list(ctx->arena, "", "persistentvolumeclaims", ns, queue_relevant, &w);
}

static void on_pod_add(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	if (ev->meta)
		queue_namespace(ctx, kcmd_meta_namespace(ev->meta), kcmd_meta_name(ev->meta),
		                kcmd_meta_uid(ev->meta));
}

static void on_pod_update(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	const struct kube_pod *p = ev->obj;
	struct shm_obj copy;
	struct shm_pod_view old;
	bool changed = true;

	if (!p)
		return;
	if (ev->old && shm_obj_dup(ev->old, &copy) == 0) {
		if (shm_pod_view_init(&copy, &old) == 0)
			changed = vp_pod_usage_changed(&old.pod, p);
		shm_pod_view_free(&old);
	}
	if (changed)
		queue_namespace(ctx, p->meta.namespace, p->meta.name, p->meta.uid);
}

static void on_pod_delete(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	if (ev->meta)
		queue_namespace(ctx, kcmd_meta_namespace(ev->meta), kcmd_meta_name(ev->meta),
		                kcmd_meta_uid(ev->meta));
	else if (ev->old)
		queue_namespace(ctx, kcmd_obj_namespace(ev->old), kcmd_obj_name(ev->old),
		                kcmd_obj_uid(ev->old));
}

static int resync_one(const struct shm_obj *o, void *userdata)
{
	struct inf_handler_ctx *ctx = userdata;
	size_t len = 0;
	const char *js = kcmd_obj_json(o, &len);
	struct vp_object pvc;

	if (js && vp_object_parse(js, len, VP_PVC_FINALIZER, &pvc) == 0) {
		if (vp_pvc_wants_sync(&pvc, unused_gate()) ||
		    vp_pvc_pod_event_relevant(&pvc, unused_gate()))
			add_key(ctx, pvc.ns, pvc.name);
		vp_object_free(&pvc);
	}
	return 0;
}

static void pvcp_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	kcmd_cache_list(ctx->arena, "", "persistentvolumeclaims", NULL, resync_one, ctx);
}

static const char *const pvcp_queue_names[] = {PVCP_QUEUE, NULL};

static const struct inf_handler_entry pvcp_entries[] = {
        {"", "persistentvolumeclaims", on_pvc, on_pvc, NULL},
        {"", "pods", on_pod_add, on_pod_update, on_pod_delete},
};

static const struct inf_handler_table pvcp_handlers = {
        .controller = PVCP_CONTROLLER,
        .queues = pvcp_queue_names,
        .entries = pvcp_entries,
        .n_entries = sizeof(pvcp_entries) / sizeof(pvcp_entries[0]),
        .resync = pvcp_resync,
};

/* ---- sync (kcmd-worker) ------------------------------------------------------------------- */
struct pvcp_state {
	struct wk_ctx *ctx;
};

static int pvcp_init(struct wk_ctx *ctx, void **ret_state)
{
	struct pvcp_state *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->ctx = ctx;
	*ret_state = s;
	return 0;
}

static void pvcp_fini(void *state)
{
	free(state);
}

static const char *reason(int r)
{
	return kcmd_kube_reason(r) ? kcmd_kube_reason(r) : strerror(-r);
}

/* An Update of the PVC (sub: NULL or "status"); on success *pvc becomes the object the
 * apiserver returned (the next write's resourceVersion). */
static int update_pvc(struct pvcp_state *s, struct vp_object *pvc, const char *sub,
                      const char *body)
{
	char *resp = NULL;
	struct vp_object fresh;
	int r = kcmd_kube_request(s->ctx->kc,
	                          &(struct kcmd_request){.method = "PUT",
	                                                 .version = "v1",
	                                                 .resource = "persistentvolumeclaims",
	                                                 .ns = pvc->ns,
	                                                 .name = pvc->name,
	                                                 .subresource = sub,
	                                                 .body = body,
	                                                 .body_kind = "PersistentVolumeClaim"},
	                          NULL, &resp);

	if (r == 0 && resp && vp_object_parse(resp, strlen(resp), VP_PVC_FINALIZER, &fresh) == 0) {
		vp_object_free(pvc);
		*pvc = fresh;
	}
	free(resp);
	return r;
}

static int set_finalizer(struct pvcp_state *s, struct vp_object *pvc, bool add)
{
	char *body = NULL;
	int r = vp_finalizer_update(pvc, VP_PVC_FINALIZER, add, &body);
	char ns[256], name[256];

	snprintf(ns, sizeof(ns), "%s", pvc->ns ? pvc->ns : "");
	snprintf(name, sizeof(name), "%s", pvc->name);
	if (r == 0)
		r = update_pvc(s, pvc, NULL, body);
	free(body);
	if (r < 0)
		kcmd_log_error("Error %s protection finalizer %s PVC PVC=\"%s/%s\" err=\"%s\"",
		               add ? "adding" : "removing", add ? "to" : "from", ns, name,
		               reason(r));
	else
		kcmd_log_v(3, "%s protection finalizer %s PVC PVC=\"%s/%s\"",
		           add ? "Added" : "Removed", add ? "to" : "from", ns, name);
	return r;
}

/* The live pod list of the PVC's namespace (askAPIServer). */
static int list_pods(struct pvcp_state *s, const char *ns, cJSON **ret)
{
	struct kube_request rq = {.verb = KUBE_LIST, .version = "v1", .resource = "pods", .ns = ns};
	struct kube_response resp = {0};
	int r;

	*ret = NULL;
	kcmd_log_v(4, "Live listing Pods in namespace namespace=\"%s\"", ns);
	r = kube_client_request(s->ctx->kc, &rq, NULL, NULL, &resp);
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

/* isBeingUsed under predicate p: 1 used, 0 unused, -errno (the live list failed) */
static int being_used(struct pvcp_state *s, const struct vp_object *pvc, enum vp_predicate p,
                      cJSON **pods)
{
	const cJSON *pod;
	int r;

	kcmd_log_v(4, "Looking for Pods using PVC PVC=\"%s/%s\"", pvc->ns, pvc->name);
	if (!*pods && (r = list_pods(s, pvc->ns, pods)) < 0) {
		kcmd_log_error("live list of pods failed: %s", reason(r));
		return r;
	}
	pod = vp_pods_using(*pods, pvc, p);
	if (pod) {
		const cJSON *md = cJSON_GetObjectItemCaseSensitive(pod, "metadata");
		const cJSON *pn = cJSON_GetObjectItemCaseSensitive(md, "name");
		kcmd_log_v(2, "Pod uses PVC pod=\"%s/%s\" PVC=\"%s/%s\"", pvc->ns,
		           cJSON_IsString(pn) ? pn->valuestring : "", pvc->ns, pvc->name);
		return 1;
	}
	kcmd_log_v(2, "PVC is unused PVC=\"%s/%s\"", pvc->ns, pvc->name);
	return 0;
}

static int process_pvc(struct pvcp_state *s, const char *ns, const char *name)
{
	struct shm_obj *o = NULL;
	struct vp_object pvc;
	cJSON *pods = NULL;
	size_t len = 0;
	const char *js;
	bool gate = unused_gate();
	int r, used;

	r = kcmd_cache_get(s->ctx->arena, "", "persistentvolumeclaims", ns, name, &o);
	if (r == -ENOENT) {
		kcmd_log_v(4, "PVC not found, ignoring PVC=\"%s/%s\"", ns, name);
		return 0;
	}
	if (r < 0)
		return r;
	js = kcmd_obj_json(o, &len);
	r = js ? vp_object_parse(js, len, VP_PVC_FINALIZER, &pvc) : -EBADMSG;
	kcmd_obj_free(o);
	if (r == -EINVAL) { /* not an object, or no name: nothing can be written to it */
		kcmd_log_warning("PVC %s/%s: the cached object does not parse, skipped", ns, name);
		return 0;
	}
	if (r < 0)
		return r;
	if (!pvc.ns)
		pvc.ns = ns;

	if (vp_is_deletion_candidate(&pvc)) {
		/* being deleted: the finalizer goes once no pod uses it */
		used = being_used(s, &pvc, VP_FOR_DELETION, &pods);
		if (used == 0) {
			r = set_finalizer(s, &pvc, false);
			goto out;
		}
		if (used < 0) {
			r = used;
			goto out;
		}
		kcmd_log_v(2, "Keeping PVC because it is being used PVC=\"%s/%s\"", ns, name);
	}
	if (vp_need_to_add_finalizer(&pvc) && (r = set_finalizer(s, &pvc, true)) < 0)
		goto out;
	if (vp_pvc_unused_managed(&pvc, gate)) {
		char *body = NULL;

		used = being_used(s, &pvc, VP_FOR_UNUSED_SINCE, &pods);
		if (used < 0) {
			r = used;
			goto out;
		}
		r = vp_unused_update(&pvc, used == 0, kube_time_now(), &body);
		if (r == 0 && body) {
			r = update_pvc(s, &pvc, "status", body);
			if (r < 0)
				kcmd_log_error(
				        "Error updating Unused condition of PVC PVC=\"%s/%s\" "
				        "err=\"%s\"",
				        ns, name, reason(r));
			else
				kcmd_log_v(
				        3,
				        "Updated Unused condition of PVC PVC=\"%s/%s\" unused=%s",
				        ns, name, used ? "false" : "true");
		}
		free(body);
	}
	r = r < 0 ? r : 0;
out:
	cJSON_Delete(pods);
	vp_object_free(&pvc);
	/* the PVC is gone: nothing to protect any more */
	return r == -ENOENT ? 0 : r;
}

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void pvcp_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct pvcp_state *s = state;
	char ns[256], name[256];
	uint64_t t0 = now_us();
	int r;

	(void)q;
	*res = (struct wk_result){0};
	/* WaitForNamedCacheSync: kcmd-worker takes no key before (workers/cachewait.h) */
	if (kcmd_key_split(key, ns, sizeof(ns), name, sizeof(name)) < 0 || !ns[0]) {
		kcmd_log_error("error parsing PVC key \"%s\"", key);
		return;
	}
	kcmd_log_v(4, "Processing PVC PVC=\"%s/%s\"", ns, name);
	r = process_pvc(s, ns, name);
	kcmd_log_v(4, "Finished processing PVC PVC=\"%s/%s\" duration=\"%.3fms\"", ns, name,
	           (double)(now_us() - t0) / 1000.0);
	if (r < 0) {
		kcmd_log_error("PVC %s/%s failed with: %s", name, ns, reason(r));
		res->err = r;
	}
}

static const struct wk_controller pvcp_worker = {
        .name = PVCP_CONTROLLER,
        .queues = pvcp_queue_names,
        .init = pvcp_init,
        .sync = pvcp_sync,
        .fini = pvcp_fini,
};

/* ---- the descriptor ----------------------------------------------------------------------- */
static const char *const pvcp_aliases[] = {"pvc-protection", NULL};
static const struct kcmd_watch pvcp_watches[] = {
        {"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", KCMD_CACHE_OBJECT, true},
        {"", "v1", "pods", "Pod", KCMD_CACHE_POD, true},
};
static const struct kcmd_queue pvcp_queues[] = {{.name = PVCP_QUEUE}};

const struct kcmd_controller kcmd_pvc_protection_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = PVCP_CONTROLLER,
        .aliases = pvcp_aliases,
        .enabled_by_default = true,
        .service_account = "pvc-protection-controller",
        .watches = pvcp_watches,
        .n_watches = sizeof(pvcp_watches) / sizeof(pvcp_watches[0]),
        .queues = pvcp_queues,
        .n_queues = 1,
        .handlers = &pvcp_handlers,
        .worker = &pvcp_worker,
};
