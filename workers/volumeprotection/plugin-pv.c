/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/volumeprotection/plugin-pv.c: kcm's persistentvolume-protection-controller (alias
 * pv-protection), on by default, client "pv-protection-controller" (upstream
 * pkg/controller/volume/pvprotection). docs/volumeprotection.md.
 *
 * PVs are cached whole. A PV added or updated that lacks the finalizer kubernetes.io/pv-protection
 * or is a deletion candidate (being deleted with it) is queued in "pvprotection"; one worker
 * process (kcm runs one, no flag) removes the finalizer from a deletion candidate whose
 * status.phase is not Bound, and adds it to a PV not being deleted. Writes are Updates (PUT)
 * of the cached object with its finalizer list changed, as upstream's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kcmd/kcmd.h"
#include "workers/volumeprotection/protection.h"
#include "workers/worker.h"

#define PVP_CONTROLLER "persistentvolume-protection-controller"
#define PVP_QUEUE      "pvprotection"

/* ---- handlers ------------------------------------------------------------------------------ */
static bool wants(const char *js, size_t len, char *name, size_t n)
{
	struct vp_object pv;
	bool w;

	if (!js || vp_object_parse(js, len, VP_PV_FINALIZER, &pv) < 0)
		return false;
	w = vp_need_to_add_finalizer(&pv) || vp_is_deletion_candidate(&pv);
	snprintf(name, n, "%s", pv.name);
	vp_object_free(&pv);
	return w;
}

static void on_pv(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	size_t len = 0;
	const char *js = kcmd_event_json(ev, &len);
	char name[256];

	if (!js)
		return;
	if (wants(js, len, name, sizeof(name))) {
		kcmd_log_v(4, "Got event on PV PV=\"%s\"", name);
		kcmd_queue_add(ctx, 0, name);
	}
}

static int resync_one(const struct shm_obj *o, void *userdata)
{
	size_t len = 0;
	const char *js = kcmd_obj_json(o, &len);
	char name[256];

	if (js && wants(js, len, name, sizeof(name)))
		kcmd_queue_add(userdata, 0, name);
	return 0;
}

static void pvp_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	kcmd_cache_list(ctx->arena, "", "persistentvolumes", NULL, resync_one, ctx);
}

static const char *const pvp_queue_names[] = {PVP_QUEUE, NULL};
static const struct inf_handler_entry pvp_entries[] = {
        {"", "persistentvolumes", on_pv, on_pv, NULL},
};
static const struct inf_handler_table pvp_handlers = {
        .controller = PVP_CONTROLLER,
        .queues = pvp_queue_names,
        .entries = pvp_entries,
        .n_entries = 1,
        .resync = pvp_resync,
};

/* ---- sync ---------------------------------------------------------------------------------- */
static int pvp_init(struct wk_ctx *ctx, void **ret_state)
{
	*ret_state = ctx;
	return 0;
}

static const char *reason(int r)
{
	return kcmd_kube_reason(r) ? kcmd_kube_reason(r) : strerror(-r);
}

static int set_finalizer(struct wk_ctx *ctx, const struct vp_object *pv, bool add)
{
	char *body = NULL;
	int r = vp_finalizer_update(pv, VP_PV_FINALIZER, add, &body);

	if (r == 0)
		r = kcmd_kube_request(ctx->kc,
		                      &(struct kcmd_request){.method = "PUT",
		                                             .version = "v1",
		                                             .resource = "persistentvolumes",
		                                             .name = pv->name,
		                                             .body = body,
		                                             .body_kind = "PersistentVolume"},
		                      NULL, NULL);
	free(body);
	/* upstream logs both at V(3) */
	if (r < 0)
		kcmd_log_v(3, "Error %s protection finalizer %s PV PV=\"%s\" err=\"%s\"",
		           add ? "adding" : "removing", add ? "to" : "from", pv->name, reason(r));
	else
		kcmd_log_v(3, "%s protection finalizer %s PV PV=\"%s\"", add ? "Added" : "Removed",
		           add ? "to" : "from", pv->name);
	return r;
}

static int process_pv(struct wk_ctx *ctx, const char *name)
{
	struct shm_obj *o = NULL;
	struct vp_object pv;
	size_t len = 0;
	const char *js;
	int r;

	r = kcmd_cache_get(ctx->arena, "", "persistentvolumes", NULL, name, &o);
	if (r == -ENOENT) {
		kcmd_log_v(4, "PV not found, ignoring PV=\"%s\"", name);
		return 0;
	}
	if (r < 0)
		return r;
	js = kcmd_obj_json(o, &len);
	r = js ? vp_object_parse(js, len, VP_PV_FINALIZER, &pv) : -EBADMSG;
	kcmd_obj_free(o);
	if (r == -EINVAL) {
		kcmd_log_warning("PV %s: the cached object does not parse, skipped", name);
		return 0;
	}
	if (r < 0)
		return r;
	r = 0;
	if (vp_is_deletion_candidate(&pv)) {
		/* isBeingUsed: the PV controller marks a PV bound to a claim Bound */
		if (!pv.bound) {
			r = set_finalizer(ctx, &pv, false);
			goto out;
		}
		kcmd_log_v(4, "Keeping PV because it is being used PV=\"%s\"", name);
	}
	if (vp_need_to_add_finalizer(&pv))
		r = set_finalizer(ctx, &pv, true);
out:
	vp_object_free(&pv);
	return r == -ENOENT ? 0 : r;
}

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void pvp_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	uint64_t t0 = now_us();
	int r;

	(void)q;
	*res = (struct wk_result){0};
	/* WaitForNamedCacheSync: kcmd-worker takes no key before (workers/cachewait.h) */
	kcmd_log_v(4, "Processing PV PV=\"%s\"", key);
	r = process_pv(state, key);
	kcmd_log_v(4, "Finished processing PV PV=\"%s\" cost=\"%.3fms\"", key,
	           (double)(now_us() - t0) / 1000.0);
	if (r < 0) {
		kcmd_log_error("PV %s failed with : %s", key, reason(r));
		res->err = r;
	}
}

static const struct wk_controller pvp_worker = {
        .name = PVP_CONTROLLER,
        .queues = pvp_queue_names,
        .init = pvp_init,
        .sync = pvp_sync,
};

/* ---- the descriptor ----------------------------------------------------------------------- */
static const char *const pvp_aliases[] = {"pv-protection", NULL};
static const struct kcmd_watch pvp_watches[] = {
        {"", "v1", "persistentvolumes", "PersistentVolume", KCMD_CACHE_OBJECT, false},
};
static const struct kcmd_queue pvp_queues[] = {{.name = PVP_QUEUE}};

const struct kcmd_controller kcmd_pv_protection_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = PVP_CONTROLLER,
        .aliases = pvp_aliases,
        .enabled_by_default = true,
        .service_account = "pv-protection-controller",
        .cluster_scoped_keys = true,
        .watches = pvp_watches,
        .n_watches = 1,
        .queues = pvp_queues,
        .n_queues = 1,
        .handlers = &pvp_handlers,
        .worker = &pvp_worker,
};
