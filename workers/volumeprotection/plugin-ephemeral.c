/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/volumeprotection/plugin-ephemeral.c: kcm's ephemeral-volume-controller (alias
 * ephemeral-volume), on by default, client "ephemeral-volume-controller" (upstream
 * pkg/controller/volume/ephemeral). docs/volumeprotection.md.
 *
 * For each generic ephemeral volume of a pod it creates the claim "<pod>-<volume>" from the
 * volume's volumeClaimTemplate, owned by the pod (controller, blockOwnerDeletion). Queue
 * "ephemeral_volume", --concurrent-ephemeralvolume-syncs worker processes (default 5).
 *
 * Handlers: a pod added that is not being deleted and has a generic ephemeral volume is queued,
 * as upstream's enqueuePod (the cache's typed pod record says whether it has one,
 * kube_pod.has_ephemeral_volume, but holds no volumes: the sync reads them with a live GET);
 * updates and deletes of pods are ignored, as upstream's (the spec is immutable; the claim goes
 * with the pod through the garbage collector). A claim deleted queues the pods it could belong
 * to: every cached pod of its namespace with an ephemeral volume whose name is a prefix of the
 * claim's name ending before a '-' (upstream looks them up in its index by claim, which holds
 * only pods with ephemeral volumes).
 *
 * Sync: the cached pod gone, being deleted or without an ephemeral volume: done (no request).
 * Else the pod is read live; for each
 * ephemeral volume, a cached claim of that name that the pod controls is done, one it does not
 * is an error (Event Warning FailedBinding "ephemeral volume <v>: PVC ... was not created for
 * pod ... (pod is not owner)", retried with backoff), and a missing one is created
 * (ephemeral_volume_controller_create_total, _create_failures_total on an error, which is an
 * Event and a retry too). Events come from component "ephemeral_volume", as upstream's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcmd/kcmd.h"
#include "shm/record-model.h"
#include "workers/volumeprotection/ephemeral.h"
#include "workers/worker.h"

#define EV_CONTROLLER "ephemeral-volume-controller"
#define EV_QUEUE      "ephemeral_volume"
#define EV_COMPONENT  "ephemeral_volume"

enum { EV_M_CREATE, EV_M_CREATE_FAILURES, EV_M_N };

static const struct kcmd_metric ev_metric_decl[EV_M_N] = {
        [EV_M_CREATE] = {.name = "ephemeral_volume_controller_create_total",
                         .help = "Number of PersistenVolumeClaims creation requests",
                         .type = KCMD_METRIC_COUNTER,
                         .stability = KCMD_METRIC_ALPHA},
        [EV_M_CREATE_FAILURES] = {.name = "ephemeral_volume_controller_create_failures_total",
                                  .help = "Number of PersistenVolumeClaims creation requests",
                                  .type = KCMD_METRIC_COUNTER,
                                  .stability = KCMD_METRIC_ALPHA},
};

/* ---- handlers ------------------------------------------------------------------------------ */
static void on_pod_add(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	const struct kube_pod *p = ev->obj;
	char key[KCMD_KEY_MAX + 1];

	if (!ev->meta || kcmd_meta_deleting(ev->meta) || (p && !p->has_ephemeral_volume))
		return;
	if (kcmd_key_make(key, sizeof(key), kcmd_meta_namespace(ev->meta),
	                  kcmd_meta_name(ev->meta)) >= 0)
		kcmd_queue_add(ctx, 0, key);
}

static void on_pvc_delete(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	const struct shm_obj *o = ev->old;
	const char *ns, *name;
	char pod[254], key[KCMD_KEY_MAX + 1];

	if (!o)
		return;
	ns = kcmd_obj_namespace(o);
	name = kcmd_obj_name(o);
	for (const char *d = strchr(name, '-'); d; d = strchr(d + 1, '-')) {
		struct shm_obj *p = NULL;
		size_t l = (size_t)(d - name);
		if (l == 0 || l >= sizeof(pod))
			continue;
		memcpy(pod, name, l);
		pod[l] = 0;
		if (kcmd_cache_get(ctx->arena, "", "pods", ns, pod, &p) == 0 &&
		    shm_pod_flag(p, SHM_REC_POD_EPHEMERAL) != 0 &&
		    kcmd_key_make(key, sizeof(key), ns, pod) >= 0)
			kcmd_queue_add(ctx, 0, key);
		kcmd_obj_free(p);
	}
}

static int resync_one(const struct shm_obj *o, void *userdata)
{
	char key[KCMD_KEY_MAX + 1];

	if (shm_pod_flag(o, SHM_REC_POD_EPHEMERAL) != 0 &&
	    kcmd_key_make(key, sizeof(key), kcmd_obj_namespace(o), kcmd_obj_name(o)) >= 0)
		kcmd_queue_add(userdata, 0, key);
	return 0;
}

static void ev_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	/* the informer's initial list: an add per pod with an ephemeral volume (the sync skips
	 * pods being deleted) */
	kcmd_cache_list(ctx->arena, "", "pods", NULL, resync_one, ctx);
}

static const char *const ev_queue_names[] = {EV_QUEUE, NULL};
static const struct inf_handler_entry ev_entries[] = {
        {"", "pods", on_pod_add, NULL, NULL},
        {"", "persistentvolumeclaims", NULL, NULL, on_pvc_delete},
};
static const struct inf_handler_table ev_handlers = {
        .controller = EV_CONTROLLER,
        .queues = ev_queue_names,
        .entries = ev_entries,
        .n_entries = sizeof(ev_entries) / sizeof(ev_entries[0]),
        .resync = ev_resync,
};

/* ---- sync ---------------------------------------------------------------------------------- */
struct ev_state {
	struct wk_ctx *ctx;
	struct kcmd_metrics *met;
};

static int ev_init(struct wk_ctx *ctx, void **ret_state)
{
	struct ev_state *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->ctx = ctx;
	s->met = kcmd_metrics_get();
	*ret_state = s;
	return 0;
}

static void ev_fini(void *state)
{
	free(state);
}

static const char *reason(int r)
{
	return kcmd_kube_reason(r) ? kcmd_kube_reason(r) : strerror(-r);
}

/* the Status message of a failed request, else the errno's reason */
static void err_text(int r, const char *body, char *out, size_t n)
{
	cJSON *st = body ? cJSON_Parse(body) : NULL;
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(st, "message");

	snprintf(out, n, "%s", cJSON_IsString(m) ? m->valuestring : reason(r));
	cJSON_Delete(st);
}

/* handleVolume: 0, or -errno with the error's text in msg */
static int handle_volume(struct ev_state *s, const cJSON *pod, const char *ns, const cJSON *vol,
                         char *msg, size_t n)
{
	const cJSON *vn = cJSON_GetObjectItemCaseSensitive(vol, "name");
	const cJSON *pn = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(pod, "metadata"), "name");
	char claim[512], *body = NULL, *resp = NULL;
	struct shm_obj *o = NULL;
	int r;

	kcmd_log_v(5, "Ephemeral: checking volume volumeName=\"%s\"",
	           cJSON_IsString(vn) ? vn->valuestring : "");
	if (!cJSON_GetObjectItemCaseSensitive(vol, "ephemeral") || !cJSON_IsString(vn) ||
	    !cJSON_IsString(pn))
		return 0;
	if (ev_claim_name(pn->valuestring, vn->valuestring, claim, sizeof(claim)) < 0) {
		snprintf(msg, n, "claim name %s-%s too long", pn->valuestring, vn->valuestring);
		return -ENAMETOOLONG;
	}
	r = kcmd_cache_get(s->ctx->arena, "", "persistentvolumeclaims", ns, claim, &o);
	if (r == 0) {
		struct vp_object pvc;
		size_t len = 0;
		const char *js = kcmd_obj_json(o, &len);
		r = js ? vp_object_parse(js, len, VP_PVC_FINALIZER, &pvc) : -EBADMSG;
		kcmd_obj_free(o);
		if (r < 0) {
			snprintf(msg, n, "reading PVC %s/%s: %s", ns, claim, strerror(-r));
			return r;
		}
		if (!pvc.ns)
			pvc.ns = ns;
		r = ev_volume_is_for_pod(pod, &pvc, msg, n);
		if (r == 0)
			kcmd_log_v(5,
			           "Ephemeral: PVC already created volumeName=\"%s\" PVC=\"%s/%s\"",
			           vn->valuestring, ns, claim);
		vp_object_free(&pvc);
		return r;
	}
	if (r != -ENOENT) {
		snprintf(msg, n, "%s", reason(r));
		return r;
	}
	if ((r = ev_claim_body(pod, vol, &body)) < 0) {
		snprintf(msg, n, "create PVC %s: %s", claim, strerror(-r));
		return r;
	}
	kcmd_metric_inc(s->met, EV_M_CREATE, NULL);
	r = kcmd_kube_request(s->ctx->kc,
	                      &(struct kcmd_request){.method = "POST",
	                                             .version = "v1",
	                                             .resource = "persistentvolumeclaims",
	                                             .ns = ns,
	                                             .body = body,
	                                             .body_kind = "PersistentVolumeClaim"},
	                      NULL, &resp);
	if (r < 0) {
		char e[512];
		kcmd_metric_inc(s->met, EV_M_CREATE_FAILURES, NULL);
		err_text(r, resp, e, sizeof(e));
		snprintf(msg, n, "create PVC %.300s: %.600s", claim, e);
	}
	free(resp);
	free(body);
	return r;
}

static int sync_pod(struct ev_state *s, const char *key, const char *ns, const char *name)
{
	struct shm_obj *o = NULL, copy;
	struct shm_pod_view v;
	bool deleting = false, ephemeral = true;
	char *body = NULL;
	cJSON *pod = NULL, *vol;
	int r;

	r = kcmd_cache_get(s->ctx->arena, "", "pods", ns, name, &o);
	if (r == -ENOENT) {
		kcmd_log_v(5, "Ephemeral: nothing to do for pod, it is gone podKey=\"%s\"", key);
		return 0;
	}
	if (r < 0)
		return r;
	r = shm_obj_dup(o, &copy);
	kcmd_obj_free(o);
	if (r == 0) {
		if (shm_pod_view_init(&copy, &v) == 0) {
			deleting = v.pod.meta.deletion_timestamp != 0;
			ephemeral = v.pod.has_ephemeral_volume;
		}
		shm_pod_view_free(&v);
	}
	if (deleting) {
		kcmd_log_v(5,
		           "Ephemeral: nothing to do for pod, it is marked for deletion "
		           "podKey=\"%s\"",
		           key);
		return 0;
	}
	if (!ephemeral) /* upstream's loop over the volumes finds none */
		return 0;
	/* the cached record says it has one but holds no volumes: read the pod */
	r = kcmd_kube_request(s->ctx->kc,
	                      &(struct kcmd_request){.method = "GET",
	                                             .version = "v1",
	                                             .resource = "pods",
	                                             .ns = ns,
	                                             .name = name},
	                      NULL, &body);
	if (r == -ENOENT) {
		free(body);
		kcmd_log_v(5, "Ephemeral: nothing to do for pod, it is gone podKey=\"%s\"", key);
		return 0;
	}
	if (r < 0) {
		free(body);
		return r;
	}
	pod = body ? cJSON_Parse(body) : NULL;
	free(body);
	if (!pod)
		return -EBADMSG;
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(pod, "metadata");
	const cJSON *dt = cJSON_GetObjectItemCaseSensitive(md, "deletionTimestamp");
	const cJSON *uid = cJSON_GetObjectItemCaseSensitive(md, "uid");
	if (dt && !cJSON_IsNull(dt)) {
		kcmd_log_v(5,
		           "Ephemeral: nothing to do for pod, it is marked for deletion "
		           "podKey=\"%s\"",
		           key);
		cJSON_Delete(pod);
		return 0;
	}
	r = 0;
	cJSON_ArrayForEach(vol, cJSON_GetObjectItemCaseSensitive(
	                                cJSON_GetObjectItemCaseSensitive(pod, "spec"), "volumes"))
	{
		char msg[1024] = "";
		const cJSON *vn = cJSON_GetObjectItemCaseSensitive(vol, "name");
		const char *vname = cJSON_IsString(vn) ? vn->valuestring : "";

		r = handle_volume(s, pod, ns, vol, msg, sizeof(msg));
		if (r < 0) {
			struct kcmd_object_ref ref = {.api_version = "v1",
			                              .kind = "Pod",
			                              .ns = ns,
			                              .name = name,
			                              .uid = cJSON_IsString(uid) ? uid->valuestring
			                                                         : NULL};
			kcmd_event_record(s->ctx->kc, EV_COMPONENT, &ref, KCMD_EVENT_WARNING,
			                  "FailedBinding", "ephemeral volume %s: %s", vname, msg);
			kcmd_log_error("%s failed with: pod %s, ephemeral volume %s: %s", key, key,
			               vname, msg);
			break;
		}
	}
	cJSON_Delete(pod);
	return r;
}

static void ev_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	char ns[256], name[256];
	int r;

	(void)q;
	*res = (struct wk_result){0};
	/* WaitForNamedCacheSync: kcmd-worker takes no key before (workers/cachewait.h) */
	if (kcmd_key_split(key, ns, sizeof(ns), name, sizeof(name)) < 0 || !ns[0]) {
		kcmd_log_error("%s failed with: invalid key", key);
		return;
	}
	r = sync_pod(state, key, ns, name);
	if (r < 0)
		res->err = r;
}

static const struct wk_controller ev_worker = {
        .name = EV_CONTROLLER,
        .queues = ev_queue_names,
        .init = ev_init,
        .sync = ev_sync,
        .fini = ev_fini,
};

/* ---- the descriptor ----------------------------------------------------------------------- */
static int ev_workers(const struct kcmd_flag_values *v)
{
	/* upstream runs --concurrent-ephemeralvolume-syncs goroutines; kcmd as many processes */
	return (int)kcmd_flag_int(v, "concurrent-ephemeralvolume-syncs");
}

static const char *const ev_aliases[] = {"ephemeral-volume", NULL};
static const struct kcmd_watch ev_watches[] = {
        {"", "v1", "pods", "Pod", KCMD_CACHE_POD, true},
        {"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", KCMD_CACHE_OBJECT, true},
};
static const struct kcmd_queue ev_queues[] = {{.name = EV_QUEUE}};
static const struct kcmd_flag ev_flags[] = {
        {.name = "concurrent-ephemeralvolume-syncs",
         .type = KCMD_FLAG_INT,
         .def = "5",
         .min = 1,
         .max = 16384, /* one process per sync; a queue holds up to 16,384 workers (ipc/queue.h) */
         .help = "The number of ephemeral volume syncing operations that will be done "
                 "concurrently. Larger number = faster ephemeral volume updating, but more CPU "
                 "(and network) load (kcmd: that many worker processes)."},
};

const struct kcmd_controller kcmd_ephemeral_volume_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = EV_CONTROLLER,
        .aliases = ev_aliases,
        .enabled_by_default = true,
        .service_account = "ephemeral-volume-controller",
        .watches = ev_watches,
        .n_watches = sizeof(ev_watches) / sizeof(ev_watches[0]),
        .queues = ev_queues,
        .n_queues = 1,
        .flags = ev_flags,
        .n_flags = sizeof(ev_flags) / sizeof(ev_flags[0]),
        .worker_count = ev_workers,
        .handlers = &ev_handlers,
        .worker = &ev_worker,
        .metrics = ev_metric_decl,
        .n_metrics = EV_M_N,
};
