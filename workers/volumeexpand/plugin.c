/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/volumeexpand/plugin.c: kcm's persistentvolume-expander-controller (alias
 * persistentvolume-expander), on by default, client "expand-controller" (upstream
 * pkg/controller/volume/expand). docs/volumeexpand.md.
 *
 * Shape: PVCs are cached whole (the same watch as the PVC protection controller). Handlers as
 * upstream's: a Bound PVC added or deleted is queued in "volume_expand"; an update is queued
 * when the claim is Bound and its requested or its status storage grew. The sync (syncHandler)
 * reads the claim from the cache and its PV from the apiserver (a GET, as upstream's), decides
 * (expand.h) and acts: the resizer annotation through a strategic merge patch of the claim's
 * status carrying the claim's resourceVersion (SetClaimResizer), ExternalExpanding Events from
 * component "volume_expand". An error is retried with the queue's rate limit; the
 * "waiting for an external controller" case is not requeued. Two worker processes (upstream
 * runs ten goroutines; the work is one GET and at most one patch per claim).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcmd/kcmd.h"
#include "workers/volumeexpand/expand.h"
#include "workers/worker.h"

#define VE_CONTROLLER "persistentvolume-expander-controller"
#define VE_QUEUE      "volume_expand"
#define VE_COMPONENT  "volume_expand"

/* ---- handlers (kcmd-dispatcher) ----------------------------------------------------------- */
static void add_key(struct inf_handler_ctx *ctx, const cJSON *pvc)
{
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(pvc, "metadata");
	const cJSON *ns = cJSON_GetObjectItemCaseSensitive(md, "namespace");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(md, "name");
	char key[KCMD_KEY_MAX + 1];

	if (cJSON_IsString(ns) && cJSON_IsString(name) &&
	    kcmd_key_make(key, sizeof(key), ns->valuestring, name->valuestring) >= 0)
		kcmd_queue_add(ctx, 0, key);
}

static cJSON *parse(const char *js, size_t len)
{
	return js ? cJSON_ParseWithLength(js, len) : NULL;
}

/* enqueuePVC */
static void enqueue(struct inf_handler_ctx *ctx, const char *js, size_t len)
{
	cJSON *pvc = parse(js, len);

	if (pvc && ve_pvc_bound(pvc))
		add_key(ctx, pvc);
	cJSON_Delete(pvc);
}

static void on_add(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	size_t len = 0;
	const char *js = kcmd_event_json(ev, &len);

	enqueue(ctx, js, len);
}

static void on_update(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	size_t nlen = 0, olen = 0;
	const char *njs = kcmd_event_json(ev, &nlen);
	const char *ojs = ev->old ? kcmd_obj_json(ev->old, &olen) : NULL;
	cJSON *n = parse(njs, nlen), *o = parse(ojs, olen);

	/* no old copy (a re-list): as a change, the sync decides */
	if (n && (!o || ve_update_wants(o, n)) && ve_pvc_bound(n))
		add_key(ctx, n);
	cJSON_Delete(n);
	cJSON_Delete(o);
}

static void on_delete(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	size_t len = 0;
	const char *js = kcmd_event_json(ev, &len);

	if (!js && ev->old)
		js = kcmd_obj_json(ev->old, &len);
	enqueue(ctx, js, len);
}

static int resync_one(const struct shm_obj *o, void *userdata)
{
	size_t len = 0;
	const char *js = kcmd_obj_json(o, &len);

	enqueue(userdata, js, len);
	return 0;
}

/* the informer's initial list: every Bound claim, as upstream's AddFunc sees them */
static void ve_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	kcmd_cache_list(ctx->arena, "", "persistentvolumeclaims", NULL, resync_one, ctx);
}

static const char *const ve_queue_names[] = {VE_QUEUE, NULL};

static const struct inf_handler_entry ve_entries[] = {
        {"", "persistentvolumeclaims", on_add, on_update, on_delete},
};

static const struct inf_handler_table ve_handlers = {
        .controller = VE_CONTROLLER,
        .queues = ve_queue_names,
        .entries = ve_entries,
        .n_entries = 1,
        .resync = ve_resync,
};

/* ---- sync (kcmd-worker) ------------------------------------------------------------------- */
static int ve_init(struct wk_ctx *ctx, void **ret_state)
{
	*ret_state = ctx;
	return 0;
}

static void pvc_event(struct wk_ctx *ctx, const cJSON *pvc, const char *type, const char *msg)
{
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(pvc, "metadata");
	struct kcmd_object_ref ref = {
	        .api_version = "v1",
	        .kind = "PersistentVolumeClaim",
	        .ns = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "namespace")),
	        .name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "name")),
	        .uid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "uid")),
	};
	int r = kcmd_event_record(ctx->kc, VE_COMPONENT, &ref, type, VE_REASON_EXTERNAL, "%s", msg);

	if (r < 0)
		kcmd_log_v(2, "event %s on PVC %s/%s not recorded: %s", VE_REASON_EXTERNAL,
		           ref.ns ? ref.ns : "", ref.name ? ref.name : "", strerror(-r));
}

/* getPersistentVolume: a live GET. -errno, with upstream's error text in msg. */
static int get_pv(struct wk_ctx *ctx, const char *name, cJSON **ret, char *msg, size_t n)
{
	struct kube_request rq = {
	        .verb = KUBE_GET, .version = "v1", .resource = "persistentvolumes", .name = name};
	struct kube_response resp = {0};
	int r;

	*ret = NULL;
	if (!*name) {
		snprintf(msg, n, "failed to get PV \"\": resource name may not be empty");
		return -EINVAL;
	}
	r = kube_client_request(ctx->kc, &rq, NULL, NULL, &resp);
	if (r == 0)
		r = resp.error.err;
	if (r == 0 && !(*ret = resp.body ? cJSON_Parse(resp.body) : NULL))
		r = -EBADMSG;
	if (r < 0)
		snprintf(msg, n, "failed to get PV \"%s\": %s", name,
		         resp.error.message[0] ? resp.error.message : strerror(-r));
	kube_response_clear(&resp);
	return r;
}

/* SetClaimResizer: -errno, with the patch's error text in msg */
static int set_resizer(struct wk_ctx *ctx, const cJSON *pvc, const char *ns, const char *name,
                       const char *driver, char *msg, size_t n)
{
	char *body = NULL;
	struct kube_response resp = {0};
	int r = ve_resizer_patch(pvc, driver, &body);

	if (r == 0) {
		struct kube_request rq = {.verb = KUBE_PATCH,
		                          .version = "v1",
		                          .resource = "persistentvolumeclaims",
		                          .ns = ns,
		                          .name = name,
		                          .subresource = "status",
		                          .body = body,
		                          .patch_type = KUBE_PATCH_STRATEGIC};
		r = kube_client_request(ctx->kc, &rq, NULL, NULL, &resp);
		if (r == 0)
			r = resp.error.err;
	}
	if (r < 0)
		snprintf(msg, n, "patchPVCStatus failed to patch PVC \"%s\": %s", name,
		         resp.error.message[0] ? resp.error.message : strerror(-r));
	kube_response_clear(&resp);
	free(body);
	return r;
}

static int sync_handler(struct wk_ctx *ctx, const char *ns, const char *name)
{
	struct shm_obj *o = NULL;
	cJSON *pvc = NULL, *pv = NULL;
	struct ve_decision d;
	char msg[1700], err[900], key[520];
	const char *vol;
	size_t len = 0;
	const char *js;
	int r;

	snprintf(key, sizeof(key), "%s/%s", ns, name);
	r = kcmd_cache_get(ctx->arena, "", "persistentvolumeclaims", ns, name, &o);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	js = kcmd_obj_json(o, &len);
	pvc = js ? cJSON_ParseWithLength(js, len) : NULL;
	kcmd_obj_free(o);
	if (!pvc) {
		kcmd_log_warning("PVC %s: the cached object does not parse, skipped", key);
		return 0;
	}
	vol = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(pvc, "spec"), "volumeName"));
	r = get_pv(ctx, vol ? vol : "", &pv, err, sizeof(err));
	if (r < 0) {
		kcmd_log_v(5,
		           "Error getting Persistent Volume for PVC from informer pvcKey=\"%s\" "
		           "err=\"%s\"",
		           key, err);
		goto out;
	}
	ve_decide(pvc, pv, &d);
	switch (d.verdict) {
	case VE_SKIP:
		break;
	case VE_NOT_BOUND:
		kcmd_log_v(4, "err=\"persistent Volume is not bound to PVC being updated : %s\"",
		           key);
		r = -EINVAL;
		break;
	case VE_MIGRATED:
		snprintf(msg, sizeof(msg), VE_FMT_MIGRATED, d.plugin);
		pvc_event(ctx, pvc, KCMD_EVENT_NORMAL, msg);
		r = set_resizer(ctx, pvc, ns, name, d.driver, err, sizeof(err));
		if (r < 0) {
			snprintf(msg, sizeof(msg), VE_FMT_SET_RESIZER_ERROR, key, err);
			pvc_event(ctx, pvc, KCMD_EVENT_WARNING, msg);
			kcmd_log_error("%s failed with : %s", key, msg);
		}
		break;
	case VE_EXTERNAL:
		pvc_event(ctx, pvc, KCMD_EVENT_NORMAL, VE_MSG_EXTERNAL);
		kcmd_log_info("Waiting for an external controller to expand the PVC pvcKey=\"%s\" "
		              "pvcUID=\"%s\"",
		              key,
		              cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
		                      cJSON_GetObjectItemCaseSensitive(pvc, "metadata"), "uid")));
		break;
	case VE_FLEX:
		/* upstream: the noop plugin's expandAndRecover path (docs/volumeexpand.md) */
		kcmd_log_warning("PVC %s: FlexVolume (driver %s) expansion is not built in kcmd; "
		                 "left alone",
		                 key, d.driver ? d.driver : "");
		break;
	}
out:
	cJSON_Delete(pv);
	cJSON_Delete(pvc);
	return r;
}

static void ve_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct wk_ctx *ctx = state;
	char ns[256], name[256];
	int r;

	(void)q;
	*res = (struct wk_result){0};
	/* WaitForNamedCacheSync: kcmd-worker takes no key before (workers/cachewait.h) */
	if (kcmd_key_split(key, ns, sizeof(ns), name, sizeof(name)) < 0 || !ns[0]) {
		kcmd_log_error("error parsing PVC key \"%s\"", key);
		return;
	}
	r = sync_handler(ctx, ns, name);
	if (r < 0) {
		kcmd_log_error("%s failed with : %s", key, strerror(-r));
		res->err = r;
	}
}

static const struct wk_controller ve_worker = {
        .name = VE_CONTROLLER,
        .queues = ve_queue_names,
        .init = ve_init,
        .sync = ve_sync,
};

/* ---- the descriptor ----------------------------------------------------------------------- */
static int ve_workers(const struct kcmd_flag_values *v)
{
	(void)v;
	return 2;
}

static const char *const ve_aliases[] = {"persistentvolume-expander", NULL};
static const struct kcmd_watch ve_watches[] = {
        {"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", KCMD_CACHE_OBJECT, true},
};
static const struct kcmd_queue ve_queues[] = {{.name = VE_QUEUE}};

const struct kcmd_controller kcmd_volume_expand_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = VE_CONTROLLER,
        .aliases = ve_aliases,
        .enabled_by_default = true,
        .service_account = "expand-controller",
        .watches = ve_watches,
        .n_watches = 1,
        .queues = ve_queues,
        .n_queues = 1,
        .worker_count = ve_workers,
        .handlers = &ve_handlers,
        .worker = &ve_worker,
};
