/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/endpoints/plugin.c: kcm's endpoints-controller (alias endpoint), on by default,
 * client "endpoint-controller": the v1 Endpoints of every Service with a selector
 * (endpoints.h; docs/endpoints.md).
 *
 * Shape: Services and Endpoints cached whole, pods typed (labels). The handlers queue a Service
 * when it changes, when its Endpoints are deleted, and when a pod its selector matches (before
 * or after the change) changes (after --endpoint-updates-batch-period); at start every Service
 * and every Endpoints object (but leader-election records), so Endpoints without a Service are
 * deleted (upstream's checkLeftoverEndpoints). One worker process: the trigger-time tracker
 * (workers/endpointslice/tracker.h) is its memory; the sync reads the Service and its
 * Endpoints from the arena and the pods the selector matches from the arena too (the typed pod
 * record's EndpointSlice part, workers/endpointslice/podlist.h), then creates or updates the
 * Endpoints.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kcmd/kcmd.h"
#include "kube/client.h"
#include "workers/endpoints/endpoints.h"
#include "workers/endpointslice/podlist.h"
#include "workers/endpointslice/reconcile.h"
#include "workers/endpointslice/tracker.h"
#include "workers/worker.h"

#define BATCH_ENV  "KCMD_EP_BATCH_FD"
#define LEADER_ANN "control-plane.alpha.kubernetes.io/leader"

static cJSON *obj_json(const struct shm_obj *o)
{
	size_t len = 0;
	const char *s = kcmd_obj_json(o, &len);
	return s ? cJSON_ParseWithLength(s, len) : NULL;
}

/* ---- handlers (kcmd-dispatcher) ----------------------------------------------------------- */
struct disp {
	uint64_t batch_us;
};

static int ep_table_init(struct inf_handler_ctx *ctx)
{
	struct disp *d = calloc(1, sizeof(*d));
	const char *v = getenv(BATCH_ENV);
	char buf[32] = "";

	if (!d)
		return -ENOMEM;
	if (v && *v) {
		ssize_t n = pread((int)strtol(v, NULL, 10), buf, sizeof(buf) - 1, 0);
		if (n > 0)
			d->batch_us = strtoull(buf, NULL, 10);
	}
	ctx->state = d;
	return 0;
}

static void ep_table_fini(struct inf_handler_ctx *ctx)
{
	free(ctx->state);
	ctx->state = NULL;
}

static void key_of(const struct inf_event *ev, char *key, size_t len)
{
	const char *ns = ev->meta ? kcmd_meta_namespace(ev->meta) : kcmd_obj_namespace(ev->old);
	const char *name = ev->meta ? kcmd_meta_name(ev->meta) : kcmd_obj_name(ev->old);
	snprintf(key, len, "%s/%s", ns, name);
}

static void on_service(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	char key[512];
	key_of(ev, key, sizeof(key));
	kcmd_queue_add(ctx, 0, key);
}

/* onEndpointsDelete: the Service's Endpoints are written again */
static void on_endpoints_delete(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	char key[512];
	key_of(ev, key, sizeof(key));
	kcmd_queue_add(ctx, 0, key);
}

struct pod_match {
	struct inf_handler_ctx *ctx;
	const struct kube_object_meta *now;
	const struct shm_obj *old;
};

static const char *label_now(const void *ud, const char *k)
{
	return kcmd_meta_label(ud, k);
}

static const char *label_old(const void *ud, const char *k)
{
	return kcmd_obj_label(ud, k);
}

static int match_service(const struct shm_obj *o, void *ud)
{
	struct pod_match *m = ud;
	cJSON *svc = obj_json(o);

	if (!svc)
		return 0;
	if ((m->now && eps_selector_matches(svc, label_now, m->now)) ||
	    (m->old && eps_selector_matches(svc, label_old, m->old))) {
		char key[512];
		struct disp *d = m->ctx->state;
		snprintf(key, sizeof(key), "%s/%s", kcmd_obj_namespace(o), kcmd_obj_name(o));
		if (d && d->batch_us)
			kcmd_queue_add_after(m->ctx, 0, key, d->batch_us);
		else
			kcmd_queue_add(m->ctx, 0, key);
	}
	cJSON_Delete(svc);
	return 0;
}

static void on_pod(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	struct pod_match m = {.ctx = ctx, .now = ev->meta, .old = ev->old};
	const char *ns = ev->meta ? kcmd_meta_namespace(ev->meta) : kcmd_obj_namespace(ev->old);

	if (ev->meta && ev->old &&
	    !strcmp(kcmd_meta_resource_version(ev->meta), kcmd_obj_resource_version(ev->old)))
		return;
	if (ns)
		kcmd_cache_list(ctx->arena, "", "services", ns, match_service, &m);
}

static int add_obj(const struct shm_obj *o, void *ud)
{
	char key[512];
	if (kcmd_obj_annotation(o, LEADER_ANN))
		return 0;
	snprintf(key, sizeof(key), "%s/%s", kcmd_obj_namespace(o), kcmd_obj_name(o));
	kcmd_queue_add(ud, 0, key);
	return 0;
}

static void ep_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	kcmd_cache_list(ctx->arena, "", "services", NULL, add_obj, ctx);
	kcmd_cache_list(ctx->arena, "", "endpoints", NULL, add_obj, ctx);
}

static const char *const ep_queue_names[] = {EP_QUEUE, NULL};
static const struct inf_handler_entry ep_entries[] = {
        {.group = "",
         .resource = "services",
         .on_add = on_service,
         .on_update = on_service,
         .on_delete = on_service},
        {.group = "",
         .resource = "pods",
         .on_add = on_pod,
         .on_update = on_pod,
         .on_delete = on_pod},
        {.group = "", .resource = "endpoints", .on_delete = on_endpoints_delete},
};
static const struct inf_handler_table ep_handlers = {
        .controller = EP_CONTROLLER,
        .queues = ep_queue_names,
        .entries = ep_entries,
        .n_entries = sizeof(ep_entries) / sizeof(ep_entries[0]),
        .init = ep_table_init,
        .fini = ep_table_fini,
        .resync = ep_resync,
};

/* ---- sync (kcmd-worker) ------------------------------------------------------------------- */
struct wk {
	struct wk_ctx *ctx;
	struct eps_tracker *tr;
};

static int ep_init(struct wk_ctx *ctx, void **ret_state)
{
	struct wk *w = calloc(1, sizeof(*w));
	if (!w || eps_tracker_new(&w->tr) < 0) {
		free(w);
		return -ENOMEM;
	}
	w->ctx = ctx;
	*ret_state = w;
	return 0;
}

static void ep_fini(void *state)
{
	struct wk *w = state;
	if (w)
		eps_tracker_free(w->tr);
	free(w);
}

static const cJSON *jget(const cJSON *o, const char *k)
{
	return o ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

static const char *jstr(const cJSON *o, const char *k)
{
	const cJSON *v = jget(o, k);
	return cJSON_IsString(v) ? v->valuestring : "";
}

static void ep_sync_key(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct wk *w = state;
	char ns[254];
	const char *slash = strchr(key, '/'), *name;
	struct shm_obj *so = NULL, *eo = NULL;
	cJSON *svc = NULL, *cur = NULL, *podlist = NULL, *out = NULL;
	const cJSON **pods = NULL, *it, *spec, *sel;
	const char **names = NULL;
	long long *times = NULL;
	size_t np = 0;
	bool create = false;
	char *body = NULL, *resp = NULL;
	int r;

	(void)q;
	*res = (struct wk_result){0};
	if (!slash || (size_t)(slash - key) >= sizeof(ns))
		return;
	memcpy(ns, key, (size_t)(slash - key));
	ns[slash - key] = '\0';
	name = slash + 1;
	r = kcmd_cache_get(w->ctx->arena, "", "services", ns, name, &so);
	if (r == -ENOENT) {
		/* the Service is gone: so are its Endpoints */
		r = kcmd_kube_request(w->ctx->kc,
		                      &(struct kcmd_request){.method = "DELETE",
		                                             .version = "v1",
		                                             .resource = "endpoints",
		                                             .ns = ns,
		                                             .name = name},
		                      NULL, NULL);
		if (r < 0 && r != -ENOENT) {
			kcmd_log_v(2, "Error syncing endpoints, retrying service=%s err=%s", key,
			           strerror(-r));
			res->err = r;
		}
		eps_tracker_delete_service(w->tr, key);
		return;
	}
	if (r < 0 || !(svc = obj_json(so))) {
		res->err = r < 0 ? r : -EBADMSG;
		goto out;
	}
	spec = jget(svc, "spec");
	sel = jget(spec, "selector");
	if (!strcmp(jstr(spec, "type"), "ExternalName") || !cJSON_IsObject(sel))
		goto out;
	if ((r = eps_cached_selected_pods(w->ctx->arena, ns, svc, &podlist)) < 0) {
		res->err = r;
		goto out;
	}
	size_t n_items = (size_t)cJSON_GetArraySize(podlist);
	pods = calloc(n_items + 1, sizeof(*pods));
	names = calloc(n_items + 1, sizeof(*names));
	times = calloc(n_items + 1, sizeof(*times));
	if (!pods || !names || !times) {
		res->err = -ENOMEM;
		goto out;
	}
	cJSON_ArrayForEach(it, podlist)
	{
		if (np >= n_items)
			break;
		pods[np] = it;
		names[np] = jstr(jget(it, "metadata"), "name");
		times[np] = eps_pod_trigger_time(it);
		np++;
	}
	long long tt = eps_tracker_trigger_time(w->tr, key, names, times, np,
	                                        eps_service_trigger_time(svc));
	char tbuf[64];
	if (tt)
		eps_format_time(tt, tbuf, sizeof(tbuf));
	if (kcmd_cache_get(w->ctx->arena, "", "endpoints", ns, name, &eo) == 0)
		cur = obj_json(eo);
	if ((r = ep_sync(svc, pods, np, cur, tt ? tbuf : NULL, &out, &create)) < 0) {
		res->err = r;
		goto out;
	}
	if (!out)
		goto out;
	if (!(body = cJSON_PrintUnformatted(out))) {
		res->err = -ENOMEM;
		goto out;
	}
	r = kcmd_kube_request(w->ctx->kc,
	                      &(struct kcmd_request){.method = create ? "POST" : "PUT",
	                                             .version = "v1",
	                                             .resource = "endpoints",
	                                             .ns = ns,
	                                             .name = create ? NULL : name,
	                                             .body = body,
	                                             .body_kind = "Endpoints"},
	                      NULL, &resp);
	if (r < 0) {
		if (create && r == -EACCES && resp && strstr(resp, "NamespaceTerminating"))
			goto out; /* creates will keep failing: drop the item */
		const char *why = kcmd_kube_reason(r) ? kcmd_kube_reason(r) : strerror(-r);
		struct kcmd_object_ref ref = {
		        .api_version = "v1", .kind = "Endpoints", .ns = ns, .name = name};
		if (create)
			kcmd_event_record(w->ctx->kc, EP_CONTROLLER, &ref, KCMD_EVENT_WARNING,
			                  "FailedToCreateEndpoint",
			                  "Failed to create endpoint for service %s/%s: %s", ns,
			                  name, why);
		else
			kcmd_event_record(w->ctx->kc, EP_CONTROLLER, &ref, KCMD_EVENT_WARNING,
			                  "FailedToUpdateEndpoint",
			                  "Failed to update endpoint %s/%s: %s", ns, name, why);
		kcmd_log_v(2, "Error syncing endpoints, retrying service=%s err=%s", key, why);
		res->err = r;
		goto out;
	}
	kcmd_log_v(4, "%s endpoints %s", create ? "Created" : "Updated", key);
out:
	free(body);
	free(resp);
	cJSON_Delete(out);
	cJSON_Delete(cur);
	cJSON_Delete(podlist);
	cJSON_Delete(svc);
	free(pods);
	free(names);
	free(times);
	if (so)
		kcmd_obj_free(so);
	if (eo)
		kcmd_obj_free(eo);
}

static const struct wk_controller ep_worker = {
        .name = EP_CONTROLLER,
        .queues = ep_queue_names,
        .init = ep_init,
        .sync = ep_sync_key,
        .fini = ep_fini,
};

/* ---- the manager: the batch period for the dispatcher ------------------------------------- */
static int ep_mgr_setup(struct kcmd_mgr_env *env, const struct kcmd_flag_values *v,
                        void **ret_state)
{
	char buf[32];
	int fd = memfd_create("kcmd-ep-batch", MFD_CLOEXEC), n;

	*ret_state = NULL;
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%llu\n",
	             (unsigned long long)kcmd_flag_duration_us(v, "endpoint-updates-batch-period"));
	if (write(fd, buf, (size_t)n) != n) {
		close(fd);
		return -EIO;
	}
	return kcmd_mgr_export_fd(env, BATCH_ENV, fd, KCMD_TO_DISPATCHER);
}

/* ---- the descriptor ----------------------------------------------------------------------- */
static const char *const ep_aliases[] = {"endpoint", NULL};
static const struct kcmd_watch ep_watches[] = {
        {"", "v1", "services", "Service", KCMD_CACHE_OBJECT, true},
        {"", "v1", "pods", "Pod", KCMD_CACHE_POD, true},
        {"", "v1", "endpoints", "Endpoints", KCMD_CACHE_OBJECT, true},
};
static const struct kcmd_queue ep_queues[] = {{.name = EP_QUEUE}};
static const struct kcmd_flag ep_flags[] = {
        {.name = "concurrent-endpoint-syncs",
         .type = KCMD_FLAG_INT,
         .def = "5",
         .min = 1,
         .max = 1000,
         .help = "The number of endpoint syncing operations that will be done concurrently. "
                 "Larger number = faster endpoint updating, but more CPU (and network) load. "
                 "Accepted; kcmd runs one worker process (docs/endpoints.md)."},
        {.name = "endpoint-updates-batch-period",
         .type = KCMD_FLAG_DURATION,
         .def = "0s",
         .help = "The length of endpoint updates batching period. Processing of pod changes "
                 "will be delayed by this duration to join them with potential upcoming "
                 "updates and reduce the overall number of endpoints updates."},
};

const struct kcmd_controller kcmd_endpoints_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = EP_CONTROLLER,
        .aliases = ep_aliases,
        .enabled_by_default = true,
        .service_account = "endpoint-controller",
        .watches = ep_watches,
        .n_watches = sizeof(ep_watches) / sizeof(ep_watches[0]),
        .queues = ep_queues,
        .n_queues = 1,
        .flags = ep_flags,
        .n_flags = sizeof(ep_flags) / sizeof(ep_flags[0]),
        .mgr_setup = ep_mgr_setup,
        .handlers = &ep_handlers,
        .worker = &ep_worker,
};
