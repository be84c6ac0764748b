/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/pvbinder/plugin.c: kcm's persistentvolume-binder-controller (alias
 * persistentvolume-binder), on by default, client "persistent-volume-binder", Events from
 * component "persistentvolume-controller" (upstream pkg/controller/volume/persistentvolume).
 * docs/pvbinder.md.
 *
 * Shape: PVs, PVCs and StorageClasses are cached whole. Handlers as upstream's: a PV added or
 * updated queues its name in "volumes", a PVC its key in "claims"; a PV deleted queues the
 * claim its claimRef names (so the claim turns Lost without waiting for the resync), a PVC
 * deleted queues its spec.volumeName (so the volume is released). One worker process takes
 * both queues (upstream runs one goroutine per queue) and runs binder.c's syncVolume /
 * syncClaim over the cache, writing with PUTs (Update / UpdateStatus) as upstream. Errors are
 * logged and not retried with backoff (upstream's workers log them too): the periodic resync
 * retries them. The resync (--pvclaimbinder-sync-period, kcm's 15s) is each synced key
 * re-added after the period, which for keys that exist is what upstream's resync (list both
 * informers, add every key) does; a key whose object is gone is not re-added.
 * syncVolume's "enqueue the claim" runs the claim's sync inline (the same single worker:
 * the order of the two syncs is the one upstream's queue would give, sooner).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kcmd/kcmd.h"
#include "shm/arena.h"
#include "workers/pvbinder/binder.h"
#include "workers/pvbinder/collector.h"
#include "workers/worker.h"

#define PVB_CONTROLLER "persistentvolume-binder-controller"
#define PVB_Q_CLAIMS   "claims"
#define PVB_Q_VOLUMES  "volumes"
#define PVB_COMPONENT  "persistentvolume-controller"
#define PVB_SC_GROUP   "storage.k8s.io"

enum { Q_CLAIMS, Q_VOLUMES };

static const char *const pvb_queue_names[] = {PVB_Q_CLAIMS, PVB_Q_VOLUMES, NULL};

/* ---- handlers (kcmd-dispatcher) ----------------------------------------------------------- */
static cJSON *parse(const char *js, size_t len)
{
	return js ? cJSON_ParseWithLength(js, len) : NULL;
}

static const char *jstr(const cJSON *o, const char *a, const char *b)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);

	x = x && b ? cJSON_GetObjectItemCaseSensitive(x, b) : x;
	return cJSON_IsString(x) ? x->valuestring : NULL;
}

static void add(struct inf_handler_ctx *ctx, size_t q, const char *ns, const char *name)
{
	char key[KCMD_KEY_MAX + 1];

	if (name && *name && kcmd_key_make(key, sizeof(key), ns, name) >= 0)
		kcmd_queue_add(ctx, q, key);
}

static void on_volume(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	if (ev->meta)
		add(ctx, Q_VOLUMES, NULL, kcmd_meta_name(ev->meta));
}

/* deleteVolume: the claim the volume was bound to is synced at once */
static void on_volume_delete(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	size_t len = 0;
	const char *js = ev->old ? kcmd_obj_json(ev->old, &len) : NULL;
	cJSON *pv = parse(js, len);
	const cJSON *ref = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(pv, "spec"), "claimRef");

	if (cJSON_IsObject(ref))
		add(ctx, Q_CLAIMS, jstr(ref, "namespace", NULL), jstr(ref, "name", NULL));
	cJSON_Delete(pv);
}

static void on_claim(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	if (ev->meta)
		add(ctx, Q_CLAIMS, kcmd_meta_namespace(ev->meta), kcmd_meta_name(ev->meta));
}

/* deleteClaim: the volume it was bound to is synced at once */
static void on_claim_delete(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	size_t len = 0;
	const char *js = ev->old ? kcmd_obj_json(ev->old, &len) : NULL;
	cJSON *pvc = parse(js, len);

	add(ctx, Q_VOLUMES, NULL, jstr(pvc, "spec", "volumeName"));
	cJSON_Delete(pvc);
}

static int resync_claim(const struct shm_obj *o, void *userdata)
{
	add(userdata, Q_CLAIMS, kcmd_obj_namespace(o), kcmd_obj_name(o));
	return 0;
}

static int resync_volume(const struct shm_obj *o, void *userdata)
{
	add(userdata, Q_VOLUMES, NULL, kcmd_obj_name(o));
	return 0;
}

/* the informers' initial lists: every claim and every volume */
static void pvb_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)restarted;
	if (queue == Q_CLAIMS)
		kcmd_cache_list(ctx->arena, "", "persistentvolumeclaims", NULL, resync_claim, ctx);
	else
		kcmd_cache_list(ctx->arena, "", "persistentvolumes", NULL, resync_volume, ctx);
}

static const struct inf_handler_entry pvb_entries[] = {
        {"", "persistentvolumes", on_volume, on_volume, on_volume_delete},
        {"", "persistentvolumeclaims", on_claim, on_claim, on_claim_delete},
};

static const struct inf_handler_table pvb_handlers = {
        .controller = PVB_CONTROLLER,
        .queues = pvb_queue_names,
        .entries = pvb_entries,
        .n_entries = 2,
        .resync = pvb_resync,
};

/* ---- the operations binder.c runs on (kcmd-worker) ---------------------------------------- */
struct pvb_state {
	struct wk_ctx *ctx;
	uint64_t period_us;
	struct pvb_ops ops;
};

static int cache_get(struct pvb_state *s, const char *group, const char *res, const char *ns,
                     const char *name, cJSON **ret)
{
	struct shm_obj *o = NULL;
	size_t len = 0;
	const char *js;
	int r = kcmd_cache_get(s->ctx->arena, group, res, ns, name, &o);

	*ret = NULL;
	if (r < 0)
		return r;
	js = kcmd_obj_json(o, &len);
	*ret = js ? cJSON_ParseWithLength(js, len) : NULL;
	kcmd_obj_free(o);
	return *ret ? 0 : -EBADMSG;
}

static int list_one(const struct shm_obj *o, void *userdata)
{
	size_t len = 0;
	const char *js = kcmd_obj_json(o, &len);
	cJSON *x = js ? cJSON_ParseWithLength(js, len) : NULL;

	if (!x)
		return 0; /* a record that does not parse is skipped, as a lister never shows one */
	if (!cJSON_AddItemToArray(userdata, x)) {
		cJSON_Delete(x);
		return -ENOMEM;
	}
	return 0;
}

static int cache_list(struct pvb_state *s, const char *group, const char *res, cJSON **ret)
{
	cJSON *a = cJSON_CreateArray();
	int r;

	*ret = NULL;
	if (!a)
		return -ENOMEM;
	r = kcmd_cache_list(s->ctx->arena, group, res, NULL, list_one, a);
	if (r < 0 && r != -ENOENT) {
		cJSON_Delete(a);
		return r;
	}
	*ret = a;
	return 0;
}

static int op_get_volume(void *ud, const char *name, cJSON **ret)
{
	return cache_get(ud, "", "persistentvolumes", NULL, name, ret);
}

static int op_list_volumes(void *ud, cJSON **ret)
{
	return cache_list(ud, "", "persistentvolumes", ret);
}

static int op_get_claim(void *ud, const char *ns, const char *name, cJSON **ret)
{
	return cache_get(ud, "", "persistentvolumeclaims", ns, name, ret);
}

static int op_get_class(void *ud, const char *name, cJSON **ret)
{
	return cache_get(ud, PVB_SC_GROUP, "storageclasses", NULL, name, ret);
}

static int op_list_classes(void *ud, cJSON **ret)
{
	return cache_list(ud, PVB_SC_GROUP, "storageclasses", ret);
}

static int op_get_claim_live(void *ud, const char *ns, const char *name, cJSON **ret)
{
	struct pvb_state *s = ud;
	struct kube_request rq = {.verb = KUBE_GET,
	                          .version = "v1",
	                          .resource = "persistentvolumeclaims",
	                          .ns = ns,
	                          .name = name};
	struct kube_response resp = {0};
	int r = kube_client_request(s->ctx->kc, &rq, NULL, NULL, &resp);

	*ret = NULL;
	if (r == 0)
		r = resp.error.err;
	if (r == 0 && !(*ret = resp.body ? cJSON_Parse(resp.body) : NULL))
		r = -EBADMSG;
	kube_response_clear(&resp);
	return r;
}

/* the pods of a namespace, a live LIST (upstream reads its pod informer's claim index; the
 * binder does not watch pods in kcmd and asks only for WaitForFirstConsumer claims) */
static int op_list_pods(void *ud, const char *ns, cJSON **ret)
{
	struct pvb_state *s = ud;
	struct kube_request rq = {.verb = KUBE_LIST, .version = "v1", .resource = "pods", .ns = ns};
	struct kube_response resp = {0};
	cJSON *list = NULL, *items;
	int r = kube_client_request(s->ctx->kc, &rq, NULL, NULL, &resp);

	*ret = NULL;
	if (r == 0)
		r = resp.error.err;
	if (r == 0 && !(list = resp.body ? cJSON_Parse(resp.body) : NULL))
		r = -EBADMSG;
	kube_response_clear(&resp);
	if (r < 0)
		return r;
	items = cJSON_DetachItemFromObjectCaseSensitive(list, "items");
	cJSON_Delete(list);
	*ret = items ? items : cJSON_CreateArray();
	return *ret ? 0 : -ENOMEM;
}

static int op_write(void *ud, enum pvb_write w, const cJSON *obj, cJSON **ret, char *err,
                    size_t errlen)
{
	struct pvb_state *s = ud;
	bool claim = w == PVB_UPDATE_CLAIM || w == PVB_UPDATE_CLAIM_STATUS;
	bool status = w == PVB_UPDATE_VOLUME_STATUS || w == PVB_UPDATE_CLAIM_STATUS;
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	char *body = cJSON_PrintUnformatted(obj);
	struct kube_request rq = {
	        .verb = KUBE_UPDATE,
	        .version = "v1",
	        .resource = claim ? "persistentvolumeclaims" : "persistentvolumes",
	        .ns = claim ? jstr(md, "namespace", NULL) : NULL,
	        .name = jstr(md, "name", NULL),
	        .subresource = status ? "status" : NULL,
	        .body = body,
	        .body_kind = claim ? "PersistentVolumeClaim" : "PersistentVolume"};
	struct kube_response resp = {0};
	int r;

	*ret = NULL;
	if (!body) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rq.body_len = strlen(body);
	r = kube_client_request(s->ctx->kc, &rq, NULL, NULL, &resp);
	if (r == 0)
		r = resp.error.err;
	if (r == 0 && !(*ret = resp.body ? cJSON_Parse(resp.body) : NULL))
		r = -EBADMSG;
	if (r < 0)
		snprintf(err, errlen, "updating %s %s%s: %s", claim ? "claim" : "volume",
		         rq.name ? rq.name : "", status ? " status" : "",
		         resp.error.message[0] ? resp.error.message : strerror(-r));
	kube_response_clear(&resp);
	free(body);
	return r;
}

static void op_event(void *ud, const cJSON *obj, bool is_claim, const char *type,
                     const char *reason, const char *msg)
{
	struct pvb_state *s = ud;
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	struct kcmd_object_ref ref = {
	        .api_version = "v1",
	        .kind = is_claim ? "PersistentVolumeClaim" : "PersistentVolume",
	        .ns = is_claim ? jstr(md, "namespace", NULL) : NULL,
	        .name = jstr(md, "name", NULL),
	        .uid = jstr(md, "uid", NULL),
	};
	int r = kcmd_event_record(s->ctx->kc, PVB_COMPONENT, &ref, type, reason, "%s", msg);

	if (r < 0)
		kcmd_log_v(2, "event %s on %s %s not recorded: %s", reason, ref.kind,
		           ref.name ? ref.name : "", strerror(-r));
}

static void sync_claim_key(struct pvb_state *s, const char *ns, const char *name);

/* claimQueue.Add from syncVolume: the claim's sync, now, in this worker */
static void op_enqueue_claim(void *ud, const char *key)
{
	char ns[256], name[256];

	if (kcmd_key_split(key, ns, sizeof(ns), name, sizeof(name)) == 0)
		sync_claim_key(ud, ns, name);
}

static void op_now(void *ud, char *buf, size_t n)
{
	time_t t = time(NULL);
	struct tm tm;

	(void)ud;
	if (!gmtime_r(&t, &tm) || !strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm))
		buf[0] = 0;
}

static void op_note(void *ud, const char *msg)
{
	(void)ud;
	kcmd_log_warning("%s", msg);
}

/* the controller's declared metrics (its region, lib/ctlmetrics.h) */
enum { M_RETRO_TOTAL, M_RETRO_ERRORS, M_N };
static const struct kcmd_metric pvb_metric_decl[M_N] = {
        [M_RETRO_TOTAL] = {.name = "retroactive_storageclass_total",
                           .help = "Total number of retroactive StorageClass assignments to "
                                   "persistent volume claim",
                           .type = KCMD_METRIC_COUNTER,
                           .stability = KCMD_METRIC_ALPHA},
        [M_RETRO_ERRORS] = {.name = "retroactive_storageclass_errors_total",
                            .help = "Total number of failed retroactive StorageClass "
                                    "assignments to persistent volume claim",
                            .type = KCMD_METRIC_COUNTER,
                            .stability = KCMD_METRIC_ALPHA},
};

/* RecordRetroactiveStorageClassMetric: every attempt counts in the total, a failed one in
 * the errors too */
static void op_retroactive_class(void *ud, bool success)
{
	struct kcmd_metrics *m = kcmd_metrics_get();

	(void)ud;
	kcmd_metric_inc(m, M_RETRO_TOTAL, NULL);
	if (!success)
		kcmd_metric_inc(m, M_RETRO_ERRORS, NULL);
}

static int pvb_init(struct wk_ctx *ctx, void **ret_state)
{
	struct pvb_state *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->ctx = ctx;
	s->period_us = kcmd_flag_duration_us(ctx->flags, "pvclaimbinder-sync-period");
	s->ops = (struct pvb_ops){
	        .ud = s,
	        .get_volume = op_get_volume,
	        .list_volumes = op_list_volumes,
	        .get_claim = op_get_claim,
	        .get_class = op_get_class,
	        .list_classes = op_list_classes,
	        .get_claim_live = op_get_claim_live,
	        .list_pods = op_list_pods,
	        .write = op_write,
	        .event = op_event,
	        .enqueue_claim = op_enqueue_claim,
	        .now = op_now,
	        .note = op_note,
	        .retroactive_class = op_retroactive_class,
	        .enable_dynamic_provisioning =
	                kcmd_flag_bool(ctx->flags, "enable-dynamic-provisioning"),
	};
	*ret_state = s;
	return 0;
}

static void pvb_fini(void *state)
{
	free(state);
}

static void sync_claim_key(struct pvb_state *s, const char *ns, const char *name)
{
	cJSON *claim = NULL;
	char err[1024];
	int r = op_get_claim(s, ns, name, &claim);

	if (r < 0) {
		if (r != -ENOENT)
			kcmd_log_error("error getting claim %s/%s from the cache: %s", ns, name,
			               strerror(-r));
		return;
	}
	r = pvb_sync_claim(&s->ops, claim, err, sizeof(err));
	if (r == -ESTALE)
		kcmd_log_v(3, "could not sync claim %s/%s: %s", ns, name, err);
	else if (r < 0)
		kcmd_log_error("could not sync claim %s/%s: %s", ns, name, err);
	cJSON_Delete(claim);
}

static void pvb_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct pvb_state *s = state;
	char ns[256], name[256], err[1024];
	cJSON *volume = NULL;
	int r;

	*res = (struct wk_result){0};
	if (kcmd_key_split(key, ns, sizeof(ns), name, sizeof(name)) < 0) {
		kcmd_log_error("error getting name of %s to get %s from informer",
		               q == Q_CLAIMS ? "claimKey" : "volumeName", key);
		return;
	}
	if (q == Q_CLAIMS) {
		struct shm_obj *o = NULL;

		if (kcmd_cache_get(s->ctx->arena, "", "persistentvolumeclaims", ns, name, &o) < 0)
			return; /* deleted: the delete handler queued its volume */
		kcmd_obj_free(o);
		sync_claim_key(s, ns, name);
	} else {
		r = op_get_volume(s, name, &volume);
		if (r < 0) {
			if (r != -ENOENT)
				kcmd_log_error("error getting volume %s from the cache: %s", name,
				               strerror(-r));
			return; /* deleted: the delete handler queued its claim */
		}
		r = pvb_sync_volume(&s->ops, volume, err, sizeof(err));
		if (r == -ESTALE)
			kcmd_log_v(3, "could not sync volume %s: %s", name, err);
		else if (r < 0)
			kcmd_log_error("could not sync volume %s: %s", name, err);
		cJSON_Delete(volume);
	}
	/* the periodic resync of an object that still exists */
	if (s->period_us) {
		res->requeue_after = true;
		res->after_usec = s->period_us;
	}
}

static const struct wk_controller pvb_worker = {
        .name = PVB_CONTROLLER,
        .queues = pvb_queue_names,
        .init = pvb_init,
        .sync = pvb_sync,
        .fini = pvb_fini,
};

/* ---- the pv_collector_* gauges (kcmd-manager, at each scrape) ------------------------------ */
/* The manager's state: the arena's read-only fd (the manager's, not closed here). */
struct pvb_mgr {
	int arena_fd;
};

static int pvb_mgr_setup(struct kcmd_mgr_env *env, const struct kcmd_flag_values *v,
                         void **ret_state)
{
	struct pvb_mgr *m = calloc(1, sizeof(*m));

	(void)v;
	if (!m)
		return -ENOMEM;
	m->arena_fd = kcmd_mgr_arena_fd(env);
	*ret_state = m;
	return 0;
}

static void pvb_mgr_fini(void *state)
{
	free(state);
}

struct collect_walk {
	struct pvb_collector *c;
	bool claims;
	int err;
};

static int collect_one(const struct shm_obj *o, void *ud)
{
	struct collect_walk *w = ud;
	size_t len = 0;
	const char *js = kcmd_obj_json(o, &len);
	cJSON *obj = parse(js, len);
	int r;

	if (!obj)
		return 0; /* a record this build cannot read: not counted */
	r = w->claims ? pvb_collector_add_claim(w->c, obj) : pvb_collector_add_volume(w->c, obj);
	cJSON_Delete(obj);
	if (r == -ENOMEM) {
		w->err = r;
		return r;
	}
	return 0;
}

/* upstream's custom collector lists the controller's volume and claim caches at each scrape:
 * here the shared cache's PersistentVolumes and PersistentVolumeClaims; nothing before
 * informerd registered them (upstream: empty listers, no series) */
static void pvb_mgr_metrics(void *state, struct kcmd_text *out)
{
	struct pvb_mgr *m = state;
	struct shm_arena *a = NULL;
	struct collect_walk w = {0};
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int t;

	if (!m || m->arena_fd < 0 || shm_reader_open(m->arena_fd, &a) < 0)
		return;
	if (!(w.c = pvb_collector_new())) {
		shm_arena_close(a);
		return;
	}
	if ((t = shm_reader_find_type(a, "", "v1", "persistentvolumes")) >= 0)
		shm_reader_list(a, (uint16_t)t, collect_one, &w);
	w.claims = true;
	if (!w.err && (t = shm_reader_find_type(a, "", "v1", "persistentvolumeclaims")) >= 0)
		shm_reader_list(a, (uint16_t)t, collect_one, &w);
	shm_arena_close(a);
	if (!w.err && (f = open_memstream(&text, &len))) {
		int r = pvb_collector_render(w.c, f);
		if (fclose(f) == 0 && r == 0 && text)
			kcmd_text_printf(out, "%s", text);
	}
	if (w.err)
		kcmd_log_warning("pv_collector metrics left out of this scrape: %s",
		                 strerror(-w.err));
	free(text);
	pvb_collector_free(w.c);
}

/* ---- the descriptor ----------------------------------------------------------------------- */
static const char *const pvb_aliases[] = {"persistentvolume-binder", NULL};
static const struct kcmd_watch pvb_watches[] = {
        {"", "v1", "persistentvolumes", "PersistentVolume", KCMD_CACHE_OBJECT, false},
        {"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", KCMD_CACHE_OBJECT, true},
        {PVB_SC_GROUP, "v1", "storageclasses", "StorageClass", KCMD_CACHE_OBJECT, false},
};
static const struct kcmd_queue pvb_queues[] = {{.name = PVB_Q_CLAIMS}, {.name = PVB_Q_VOLUMES}};
static const struct kcmd_flag pvb_flags[] = {
        {.name = "pvclaimbinder-sync-period",
         .type = KCMD_FLAG_DURATION,
         .def = "15s",
         .help = "The period for syncing persistent volumes and persistent volume claims"},
        {.name = "enable-dynamic-provisioning",
         .type = KCMD_FLAG_BOOL,
         .def = "true",
         .help = "Enable dynamic provisioning for environments that support it."},
};

const struct kcmd_controller kcmd_pvbinder_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = PVB_CONTROLLER,
        .aliases = pvb_aliases,
        .enabled_by_default = true,
        .service_account = "persistent-volume-binder",
        .watches = pvb_watches,
        .n_watches = 3,
        .queues = pvb_queues,
        .n_queues = 2,
        .flags = pvb_flags,
        .n_flags = 2,
        .mgr_setup = pvb_mgr_setup,
        .mgr_metrics = pvb_mgr_metrics,
        .mgr_fini = pvb_mgr_fini,
        .handlers = &pvb_handlers,
        .worker = &pvb_worker,
        .metrics = pvb_metric_decl,
        .n_metrics = M_N,
};
