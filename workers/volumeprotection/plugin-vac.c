/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/volumeprotection/plugin-vac.c: kcm's volumeattributesclass-protection-controller (no
 * alias), on by default, client "volumeattributesclass-protection-controller" (upstream
 * pkg/controller/volume/vacprotection). docs/volumeprotection.md.
 *
 * VolumeAttributesClasses (storage.k8s.io/v1), PVCs and PVs are cached whole. A class added or
 * updated that lacks the finalizer kubernetes.io/vac-protection or is a deletion candidate is
 * queued in "vacprotection"; a PVC or PV updated queues the classes it stopped referencing, one
 * deleted the classes it referenced (upstream registers no add handler for them). One worker
 * process (kcm runs one, no flag) removes the finalizer from a deletion candidate no PV and no
 * PVC of the cache references, and adds it to a class not being deleted. Like upstream's, the
 * check reads only the cache (upstream's comment names the race this leaves: a PVC created
 * while its class is being deleted may not be seen yet). Writes are Updates (PUT) of the cached
 * object with its finalizer list changed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kcmd/kcmd.h"
#include "workers/volumeprotection/protection.h"
#include "workers/worker.h"

#define VACP_CONTROLLER "volumeattributesclass-protection-controller"
#define VACP_QUEUE      "vacprotection"
#define VAC_GROUP       "storage.k8s.io"
#define VAC_RESOURCE    "volumeattributesclasses"

/* ---- handlers ------------------------------------------------------------------------------ */
static void on_vac(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	size_t len = 0;
	const char *js = kcmd_event_json(ev, &len);
	struct vp_object vac;

	if (!js || vp_object_parse(js, len, VP_VAC_FINALIZER, &vac) < 0)
		return;
	kcmd_log_v(4, "Got event on VAC VAC=\"%s\"", vac.name);
	if (vp_need_to_add_finalizer(&vac) || vp_is_deletion_candidate(&vac))
		kcmd_queue_add(ctx, 0, vac.name);
	vp_object_free(&vac);
}

/* the class names of a JSON text (NULL: none); *ret_json owns them */
static size_t names_of(const char *js, size_t len, bool is_pvc, const char *names[static 3],
                       cJSON **ret_json)
{
	*ret_json = js ? cJSON_ParseWithLength(js, len) : NULL;
	return *ret_json ? vp_vac_names(*ret_json, is_pvc, names) : 0;
}

/* an update: the classes the old object referenced and the new one does not */
static void on_update(struct inf_handler_ctx *ctx, const struct inf_event *ev, bool is_pvc)
{
	const char *oldn[3], *newn[3];
	cJSON *oj, *nj;
	size_t olen = 0, nlen = 0;
	const char *ojs = ev->old ? kcmd_obj_json(ev->old, &olen) : NULL;
	const char *njs = kcmd_event_json(ev, &nlen);
	size_t no = names_of(ojs, olen, is_pvc, oldn, &oj);
	size_t nn = names_of(njs, nlen, is_pvc, newn, &nj);

	if (ev->meta)
		kcmd_log_v(4, "Got event on %s %s=\"%s%s%s\"", is_pvc ? "PVC" : "PV",
		           is_pvc ? "PVC" : "PV", kcmd_meta_namespace(ev->meta),
		           *kcmd_meta_namespace(ev->meta) ? "/" : "", kcmd_meta_name(ev->meta));
	for (size_t i = 0; i < no; i++)
		if (!vp_vac_listed(newn, nn, oldn[i]))
			kcmd_queue_add(ctx, 0, oldn[i]);
	cJSON_Delete(oj);
	cJSON_Delete(nj);
}

static void on_delete(struct inf_handler_ctx *ctx, const struct inf_event *ev, bool is_pvc)
{
	const char *names[3];
	cJSON *j;
	size_t len = 0;
	const char *js = ev->old ? kcmd_obj_json(ev->old, &len) : NULL;
	size_t n = names_of(js, len, is_pvc, names, &j);

	for (size_t i = 0; i < n; i++)
		kcmd_queue_add(ctx, 0, names[i]);
	cJSON_Delete(j);
}

static void on_pvc_update(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	on_update(ctx, ev, true);
}
static void on_pvc_delete(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	on_delete(ctx, ev, true);
}
static void on_pv_update(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	on_update(ctx, ev, false);
}
static void on_pv_delete(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	on_delete(ctx, ev, false);
}

static int resync_one(const struct shm_obj *o, void *userdata)
{
	size_t len = 0;
	const char *js = kcmd_obj_json(o, &len);
	struct vp_object vac;

	if (js && vp_object_parse(js, len, VP_VAC_FINALIZER, &vac) == 0) {
		if (vp_need_to_add_finalizer(&vac) || vp_is_deletion_candidate(&vac))
			kcmd_queue_add(userdata, 0, vac.name);
		vp_object_free(&vac);
	}
	return 0;
}

static void vacp_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	kcmd_cache_list(ctx->arena, VAC_GROUP, VAC_RESOURCE, NULL, resync_one, ctx);
}

static const char *const vacp_queue_names[] = {VACP_QUEUE, NULL};
static const struct inf_handler_entry vacp_entries[] = {
        {VAC_GROUP, VAC_RESOURCE, on_vac, on_vac, NULL},
        {"", "persistentvolumeclaims", NULL, on_pvc_update, on_pvc_delete},
        {"", "persistentvolumes", NULL, on_pv_update, on_pv_delete},
};
static const struct inf_handler_table vacp_handlers = {
        .controller = VACP_CONTROLLER,
        .queues = vacp_queue_names,
        .entries = vacp_entries,
        .n_entries = sizeof(vacp_entries) / sizeof(vacp_entries[0]),
        .resync = vacp_resync,
};

/* ---- sync ---------------------------------------------------------------------------------- */
static int vacp_init(struct wk_ctx *ctx, void **ret_state)
{
	*ret_state = ctx;
	return 0;
}

static const char *reason(int r)
{
	return kcmd_kube_reason(r) ? kcmd_kube_reason(r) : strerror(-r);
}

struct ref_walk {
	const char *vac;
	bool is_pvc;
};

/* -EEXIST stops the walk: the object references the class */
static int references(const struct shm_obj *o, void *userdata)
{
	const struct ref_walk *w = userdata;
	const char *names[3];
	size_t len = 0;
	const char *js = kcmd_obj_json(o, &len);
	cJSON *j = js ? cJSON_ParseWithLength(js, len) : NULL;
	size_t n = j ? vp_vac_names(j, w->is_pvc, names) : 0;
	bool hit = vp_vac_listed(names, n, w->vac);

	cJSON_Delete(j);
	return hit ? -EEXIST : 0;
}

/* isBeingUsed: 1 used, 0 not, -errno (the cache could not be read: kept, retried) */
static int vac_used(struct wk_ctx *ctx, const char *vac)
{
	struct ref_walk w = {vac, false};
	int r = kcmd_cache_list(ctx->arena, "", "persistentvolumes", NULL, references, &w);

	if (r == -EEXIST)
		return 1;
	if (r < 0 && r != -ENOENT)
		return r;
	w.is_pvc = true;
	r = kcmd_cache_list(ctx->arena, "", "persistentvolumeclaims", NULL, references, &w);
	if (r == -EEXIST)
		return 1;
	return r < 0 && r != -ENOENT ? r : 0;
}

static int set_finalizer(struct wk_ctx *ctx, const struct vp_object *vac, bool add)
{
	char *body = NULL;
	int r = vp_finalizer_update(vac, VP_VAC_FINALIZER, add, &body);

	if (r == 0)
		r = kcmd_kube_request(ctx->kc,
		                      &(struct kcmd_request){.method = "PUT",
		                                             .group = VAC_GROUP,
		                                             .version = "v1",
		                                             .resource = VAC_RESOURCE,
		                                             .name = vac->name,
		                                             .body = body,
		                                             .body_kind = "VolumeAttributesClass"},
		                      NULL, NULL);
	free(body);
	if (r < 0)
		kcmd_log_v(3, "Error %s protection finalizer %s VAC VAC=\"%s\" err=\"%s\"",
		           add ? "adding" : "removing", add ? "to" : "from", vac->name, reason(r));
	else
		kcmd_log_v(3, "%s protection finalizer %s VAC VAC=\"%s\"",
		           add ? "Added" : "Removed", add ? "to" : "from", vac->name);
	return r;
}

static int process_vac(struct wk_ctx *ctx, const char *name)
{
	struct shm_obj *o = NULL;
	struct vp_object vac;
	size_t len = 0;
	const char *js;
	int r;

	r = kcmd_cache_get(ctx->arena, VAC_GROUP, VAC_RESOURCE, NULL, name, &o);
	if (r == -ENOENT) {
		kcmd_log_v(4, "VAC not found, ignoring VAC=\"%s\"", name);
		return 0;
	}
	if (r < 0)
		return r;
	js = kcmd_obj_json(o, &len);
	r = js ? vp_object_parse(js, len, VP_VAC_FINALIZER, &vac) : -EBADMSG;
	kcmd_obj_free(o);
	if (r == -EINVAL) {
		kcmd_log_warning("VAC %s: the cached object does not parse, skipped", name);
		return 0;
	}
	if (r < 0)
		return r;
	r = 0;
	if (vp_is_deletion_candidate(&vac)) {
		int used = vac_used(ctx, name);
		if (used < 0) {
			kcmd_log_error(
			        "Error getting PVs and PVCs assigned to VAC VAC=\"%s\" err=\"%s\"",
			        name, reason(used));
		} else if (!used) {
			r = set_finalizer(ctx, &vac, false);
			goto out;
		}
		kcmd_log_v(4, "Keeping VAC because it is being used PVC=\"%s\"", name);
	}
	if (vp_need_to_add_finalizer(&vac))
		r = set_finalizer(ctx, &vac, true);
out:
	vp_object_free(&vac);
	return r == -ENOENT ? 0 : r;
}

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void vacp_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	uint64_t t0 = now_us();
	int r;

	(void)q;
	*res = (struct wk_result){0};
	/* WaitForNamedCacheSync: kcmd-worker takes no key before (workers/cachewait.h) */
	kcmd_log_v(4, "Processing VAC VAC=\"%s\"", key);
	r = process_vac(state, key);
	kcmd_log_v(4, "Finished processing VAC VAC=\"%s\" cost=\"%.3fms\"", key,
	           (double)(now_us() - t0) / 1000.0);
	if (r < 0) {
		kcmd_log_error("VAC %s failed with : %s", key, reason(r));
		res->err = r;
	}
}

static const struct wk_controller vacp_worker = {
        .name = VACP_CONTROLLER,
        .queues = vacp_queue_names,
        .init = vacp_init,
        .sync = vacp_sync,
};

/* ---- the descriptor ----------------------------------------------------------------------- */
static const struct kcmd_watch vacp_watches[] = {
        {VAC_GROUP, "v1", VAC_RESOURCE, "VolumeAttributesClass", KCMD_CACHE_OBJECT, false},
        {"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", KCMD_CACHE_OBJECT, true},
        {"", "v1", "persistentvolumes", "PersistentVolume", KCMD_CACHE_OBJECT, false},
};
static const struct kcmd_queue vacp_queues[] = {{.name = VACP_QUEUE}};

const struct kcmd_controller kcmd_vac_protection_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = VACP_CONTROLLER,
        .enabled_by_default = true,
        .service_account = "volumeattributesclass-protection-controller",
        .cluster_scoped_keys = true,
        .watches = vacp_watches,
        .n_watches = sizeof(vacp_watches) / sizeof(vacp_watches[0]),
        .queues = vacp_queues,
        .n_queues = 1,
        .handlers = &vacp_handlers,
        .worker = &vacp_worker,
};
