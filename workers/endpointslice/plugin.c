/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/endpointslice/plugin.c: kcm's endpointslice-controller (alias endpointslice), on by
 * default, client "endpointslice-controller": the EndpointSlices of every Service with a
 * selector (reconcile.h; docs/endpointslice.md).
 *
 * Shape: Services and EndpointSlices cached whole, pods typed (labels), nodes metadata-only (the
 * zone label). The handlers queue a Service when it changes, when a pod its selector matches
 * (before or after the change) changes (after --endpointslice-updates-batch-period), and when a
 * slice it manages changes (after max(1 s, the batch period), upstream's
 * endpointSliceChangeMinSyncDelay). One worker process: the slice tracker and the trigger-time
 * tracker (tracker.h) live in its memory, as upstream's live in its one process; the sync reads
 * the Service, its slices, the nodes and the pods its selector matches from the arena (the
 * typed pod record's EndpointSlice part, podlist.h), then writes the reconciler's plan.
 * Rejected: caching pods whole (one record kind per resource: the ReplicaSet, Job and pod GC
 * readers need the typed record); an uncached pod LIST per sync (what it did until record
 * version 6: one request per sync where upstream makes none).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kcmd/kcmd.h"
#include "kube/client.h"
#include "workers/endpointslice/podlist.h"
#include "workers/endpointslice/reconcile.h"
#include "workers/endpointslice/tracker.h"
#include "workers/worker.h"

#define DISCOVERY    "discovery.k8s.io"
#define BATCH_ENV    "KCMD_EPS_BATCH_FD"
#define MIN_DELAY_US 1000000ull /* endpointSliceChangeMinSyncDelay */
#define ZONE_LABEL   "topology.kubernetes.io/zone"

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

static int eps_table_init(struct inf_handler_ctx *ctx)
{
	struct disp *d = calloc(1, sizeof(*d));
	const char *v = getenv(BATCH_ENV);
	char buf[32] = "";

	if (!d)
		return -ENOMEM;
	if (v && *v) {
		int fd = (int)strtol(v, NULL, 10);
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
		if (n > 0)
			d->batch_us = strtoull(buf, NULL, 10);
	}
	ctx->state = d;
	return 0;
}

static void eps_table_fini(struct inf_handler_ctx *ctx)
{
	free(ctx->state);
	ctx->state = NULL;
}

static void add(struct inf_handler_ctx *ctx, const char *key, uint64_t delay)
{
	if (delay)
		kcmd_queue_add_after(ctx, 0, key, delay);
	else
		kcmd_queue_add(ctx, 0, key);
}

static void on_service(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	char key[512];
	const char *ns = ev->meta ? kcmd_meta_namespace(ev->meta) : kcmd_obj_namespace(ev->old);
	const char *name = ev->meta ? kcmd_meta_name(ev->meta) : kcmd_obj_name(ev->old);
	snprintf(key, sizeof(key), "%s/%s", ns, name);
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
	bool hit = false;

	if (!svc)
		return 0;
	hit = (m->now && eps_selector_matches(svc, label_now, m->now)) ||
	      (m->old && eps_selector_matches(svc, label_old, m->old));
	if (hit) {
		char key[512];
		struct disp *d = m->ctx->state;
		snprintf(key, sizeof(key), "%s/%s", kcmd_obj_namespace(o), kcmd_obj_name(o));
		add(m->ctx, key, d ? d->batch_us : 0);
	}
	cJSON_Delete(svc);
	return 0;
}

/* addPod / updatePod / deletePod: every Service whose selector matches the pod's labels now or
 * before (a superset of upstream's GetServicesToUpdateOnPodChange: a sync that finds nothing
 * to change writes nothing) */
static void on_pod(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	struct pod_match m = {.ctx = ctx, .now = ev->meta, .old = ev->old};
	const char *ns = ev->meta ? kcmd_meta_namespace(ev->meta) : kcmd_obj_namespace(ev->old);

	if (ev->meta && ev->old &&
	    !strcmp(kcmd_meta_resource_version(ev->meta), kcmd_obj_resource_version(ev->old)))
		return; /* a resync */
	if (ns)
		kcmd_cache_list(ctx->arena, "", "services", ns, match_service, &m);
}

static bool managed(const char *v)
{
	return v && !strcmp(v, EPS_MANAGED_BY);
}

static void queue_for_slice(struct inf_handler_ctx *ctx, const char *ns, const char *svc)
{
	struct disp *d = ctx->state;
	uint64_t delay = d && d->batch_us > MIN_DELAY_US ? d->batch_us : MIN_DELAY_US;
	char key[512];

	if (!svc || !*svc)
		return;
	snprintf(key, sizeof(key), "%s/%s", ns, svc);
	add(ctx, key, delay);
}

/* onEndpointSliceAdd/Update/Delete. Without upstream's tracker in this process every change of
 * a managed slice queues its Service (the worker's tracker tells a stale cache from a change of
 * someone else's); a change of the service-name label queues both Services. */
static void on_slice(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	const char *ns = ev->meta ? kcmd_meta_namespace(ev->meta) : kcmd_obj_namespace(ev->old);
	const char *svc = ev->meta ? kcmd_meta_label(ev->meta, EPS_LABEL_SVC) : NULL;
	const char *mgd = ev->meta ? kcmd_meta_label(ev->meta, EPS_LABEL_MGD) : NULL;
	const char *osvc = ev->old ? kcmd_obj_label(ev->old, EPS_LABEL_SVC) : NULL;
	const char *omgd = ev->old ? kcmd_obj_label(ev->old, EPS_LABEL_MGD) : NULL;

	if (ev->kind == INF_EVENT_DELETE) {
		if (managed(omgd))
			queue_for_slice(ctx, ns, osvc);
		return;
	}
	if (ev->old && (svc ? !osvc || strcmp(svc, osvc) : osvc != NULL)) {
		queue_for_slice(ctx, ns, svc);
		queue_for_slice(ctx, ns, osvc);
		return;
	}
	if (managed(mgd) || (ev->old && managed(omgd)))
		queue_for_slice(ctx, ns, svc);
}

static int add_service(const struct shm_obj *o, void *ud)
{
	char key[512];
	snprintf(key, sizeof(key), "%s/%s", kcmd_obj_namespace(o), kcmd_obj_name(o));
	kcmd_queue_add(ud, 0, key);
	return 0;
}

static void eps_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	kcmd_cache_list(ctx->arena, "", "services", NULL, add_service, ctx);
}

static const char *const eps_queue_names[] = {EPS_QUEUE, NULL};
static const struct inf_handler_entry eps_entries[] = {
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
        {.group = DISCOVERY,
         .resource = "endpointslices",
         .on_add = on_slice,
         .on_update = on_slice,
         .on_delete = on_slice},
};
static const struct inf_handler_table eps_handlers = {
        .controller = EPS_CONTROLLER,
        .queues = eps_queue_names,
        .entries = eps_entries,
        .n_entries = sizeof(eps_entries) / sizeof(eps_entries[0]),
        .init = eps_table_init,
        .fini = eps_table_fini,
        .resync = eps_resync,
};

/* ---- sync (kcmd-worker) ------------------------------------------------------------------- */
struct wk {
	struct wk_ctx *ctx;
	struct eps_tracker *tr;
	int max_per_slice;
};

static int eps_init(struct wk_ctx *ctx, void **ret_state)
{
	struct wk *w = calloc(1, sizeof(*w));
	if (!w || eps_tracker_new(&w->tr) < 0) {
		free(w);
		return -ENOMEM;
	}
	w->ctx = ctx;
	w->max_per_slice = (int)kcmd_flag_int(ctx->flags, "max-endpoints-per-slice");
	if (w->max_per_slice < 1)
		w->max_per_slice = 100;
	*ret_state = w;
	return 0;
}

static void eps_fini(void *state)
{
	struct wk *w = state;
	if (w)
		eps_tracker_free(w->tr);
	free(w);
}

struct cached {
	cJSON **v;
	size_t n, cap;
	const char *svc;
};

static int collect_slice(const struct shm_obj *o, void *ud)
{
	struct cached *c = ud;
	const char *sn = kcmd_obj_label(o, EPS_LABEL_SVC), *mg = kcmd_obj_label(o, EPS_LABEL_MGD);
	cJSON *j;

	if (!sn || strcmp(sn, c->svc) || !managed(mg))
		return 0;
	if (!(j = obj_json(o)))
		return 0;
	const cJSON *dt = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItem(j, "metadata"),
	                                                   "deletionTimestamp");
	if (dt && !cJSON_IsNull(dt)) { /* dropEndpointSlicesPendingDeletion */
		cJSON_Delete(j);
		return 0;
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 8;
		cJSON **v = realloc(c->v, cap * sizeof(*v));
		if (!v) {
			cJSON_Delete(j);
			return -ENOMEM;
		}
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n++] = j;
	return 0;
}

struct zones {
	struct wk *w;
	char **held;
	size_t n;
};

static int node_zone(void *ud, const char *name, const char **ret)
{
	struct zones *z = ud;
	struct shm_obj *o = NULL;
	const char *zone;
	char **h;

	*ret = NULL;
	if (!name || !*name || kcmd_cache_get(z->w->ctx->arena, "", "nodes", NULL, name, &o) < 0)
		return -ENOENT;
	zone = kcmd_obj_label(o, ZONE_LABEL);
	if (zone && (h = realloc(z->held, (z->n + 1) * sizeof(*h)))) {
		z->held = h;
		if ((h[z->n] = strdup(zone)))
			*ret = h[z->n++];
	}
	kcmd_obj_free(o);
	return 0;
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

static void event_failed(struct wk *w, const cJSON *svc, const char *msg)
{
	const cJSON *md = jget(svc, "metadata");
	struct kcmd_object_ref ref = {.api_version = "v1",
	                              .kind = "Service",
	                              .ns = jstr(md, "namespace"),
	                              .name = jstr(md, "name"),
	                              .uid = jstr(md, "uid")};
	kcmd_event_record(w->ctx->kc, EPS_CONTROLLER, &ref, KCMD_EVENT_WARNING,
	                  "FailedToUpdateEndpointSlices",
	                  "Error updating Endpoint Slices for Service %s/%s: %s", ref.ns, ref.name,
	                  msg);
}

/* runs the plan; 0, or -errno with err set */
static int execute(struct wk *w, const char *key, const char *ns, struct eps_plan *p, char *err,
                   size_t errlen)
{
	for (size_t i = 0; i < p->n; i++) {
		struct eps_action *a = &p->v[i];
		const cJSON *md = jget(a->obj, "metadata");
		char *body = a->op == EPS_DELETE ? NULL : cJSON_PrintUnformatted(a->obj),
		     *out = NULL;
		int r;

		if (a->op != EPS_DELETE && !body)
			return -ENOMEM;
		r = kcmd_kube_request(w->ctx->kc,
		                      &(struct kcmd_request){
		                              .method = a->op == EPS_CREATE   ? "POST"
		                                        : a->op == EPS_UPDATE ? "PUT"
		                                                              : "DELETE",
		                              .group = DISCOVERY,
		                              .version = "v1",
		                              .resource = "endpointslices",
		                              .ns = ns,
		                              .name = a->op == EPS_CREATE ? NULL : jstr(md, "name"),
		                              .body = body,
		                              .body_kind = "EndpointSlice"},
		                      NULL, &out);
		free(body);
		if (r == 0 && a->op != EPS_DELETE) {
			cJSON *got = out ? cJSON_Parse(out) : NULL;
			const cJSON *gm = jget(got, "metadata");
			if (got)
				eps_tracker_update(
				        w->tr, key, jstr(gm, "name"), jstr(gm, "uid"),
				        (int64_t)cJSON_GetNumberValue(jget(gm, "generation")));
			cJSON_Delete(got);
			kcmd_log_v(4, "%s: %s EndpointSlice %s", key,
			           a->op == EPS_CREATE ? "created" : "updated",
			           a->op == EPS_CREATE ? jstr(md, "generateName")
			                               : jstr(md, "name"));
		} else if (a->op == EPS_DELETE && (r == 0 || r == -ENOENT)) {
			if (r == 0)
				eps_tracker_expect_deletion(w->tr, key, jstr(md, "name"),
				                            jstr(md, "uid"));
			r = 0;
		} else if (a->op == EPS_CREATE && out && strstr(out, "NamespaceTerminating")) {
			free(out);
			return 1; /* the namespace is terminating: drop the item */
		}
		if (r < 0) {
			snprintf(err, errlen, "failed to %s EndpointSlice %s for Service %s: %s",
			         a->op == EPS_CREATE   ? "create"
			         : a->op == EPS_UPDATE ? "update"
			                               : "delete",
			         a->op == EPS_CREATE ? "" : jstr(md, "name"), key,
			         kcmd_kube_reason(r) ? kcmd_kube_reason(r) : strerror(-r));
			free(out);
			return r;
		}
		free(out);
	}
	return 0;
}

struct gone_ctx {
	struct wk *w;
	const char *ns;
};

/* A slice this worker wrote that the cache lacks: deleted at the apiserver (or replaced by one
 * of another uid), or only not seen yet? */
static bool slice_gone(void *ud, const char *name, const char *uid)
{
	struct gone_ctx *g = ud;
	char *out = NULL;
	bool gone = false;
	int r = kcmd_kube_request(g->w->ctx->kc,
	                          &(struct kcmd_request){.method = "GET",
	                                                 .group = DISCOVERY,
	                                                 .version = "v1",
	                                                 .resource = "endpointslices",
	                                                 .ns = g->ns,
	                                                 .name = name},
	                          NULL, &out);
	if (r == -ENOENT) {
		gone = true;
	} else if (r == 0 && out) {
		cJSON *j = cJSON_Parse(out);
		gone = j && strcmp(jstr(jget(j, "metadata"), "uid"), uid) != 0;
		cJSON_Delete(j);
	}
	free(out);
	return gone;
}

static void eps_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct wk *w = state;
	char ns[254], err[512] = "";
	const char *slash = strchr(key, '/'), *name;
	struct shm_obj *o = NULL;
	cJSON *svc = NULL, *podlist = NULL;
	struct cached sl = {0};
	struct zones zs = {.w = w};
	struct eps_plan plan = {0};
	const cJSON **pods = NULL, *it, *spec, *sel;
	const char **uids = NULL, **names = NULL;
	int64_t *gens = NULL;
	long long *times = NULL;
	size_t np = 0;
	int r = 0;

	(void)q;
	*res = (struct wk_result){0};
	if (!slash || (size_t)(slash - key) >= sizeof(ns))
		return;
	memcpy(ns, key, (size_t)(slash - key));
	ns[slash - key] = '\0';
	name = slash + 1;
	r = kcmd_cache_get(w->ctx->arena, "", "services", ns, name, &o);
	if (r == -ENOENT) {
		eps_tracker_delete_service(w->tr, key);
		return;
	}
	if (r < 0 || !(svc = obj_json(o))) {
		res->err = r < 0 ? r : -EBADMSG;
		goto out;
	}
	r = 0;
	spec = jget(svc, "spec");
	sel = jget(spec, "selector");
	if (!strcmp(jstr(spec, "type"), "ExternalName") || !cJSON_IsObject(sel))
		goto out; /* no slices from this controller */
	if ((r = eps_cached_selected_pods(w->ctx->arena, ns, svc, &podlist)) < 0) {
		snprintf(err, sizeof(err), "listing pods: %s", strerror(-r));
		goto fail;
	}
	size_t n_items = (size_t)cJSON_GetArraySize(podlist);
	pods = calloc(n_items + 1, sizeof(*pods));
	names = calloc(n_items + 1, sizeof(*names));
	times = calloc(n_items + 1, sizeof(*times));
	if (!pods || !names || !times) {
		r = -ENOMEM;
		goto fail;
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
	sl.svc = name;
	if ((r = kcmd_cache_list(w->ctx->arena, DISCOVERY, "endpointslices", ns, collect_slice,
	                         &sl)) < 0 &&
	    r != -ENOENT)
		goto fail;
	r = 0;
	uids = calloc(sl.n + 1, sizeof(*uids));
	gens = calloc(sl.n + 1, sizeof(*gens));
	if (!uids || !gens) {
		r = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < sl.n; i++) {
		const cJSON *md = jget(sl.v[i], "metadata");
		uids[i] = jstr(md, "uid");
		gens[i] = (int64_t)cJSON_GetNumberValue(jget(md, "generation"));
	}
	struct gone_ctx gc = {.w = w, .ns = ns};
	if (eps_tracker_stale(w->tr, key, uids, gens, sl.n, slice_gone, &gc)) {
		kcmd_log_v(2, "%s: EndpointSlice informer cache is out of date", key);
		res->err = -EAGAIN;
		goto out;
	}
	long long tt = eps_tracker_trigger_time(w->tr, key, names, times, np,
	                                        eps_service_trigger_time(svc));
	char tbuf[64];
	if (tt)
		eps_format_time(tt, tbuf, sizeof(tbuf));
	if ((r = eps_reconcile(svc, pods, np, (const cJSON *const *)sl.v, sl.n, tt ? tbuf : NULL,
	                       w->max_per_slice, node_zone, &zs, &plan)) < 0)
		goto fail;
	r = execute(w, key, ns, &plan, err, sizeof(err));
	if (r > 0) {
		r = 0;
		goto out;
	}
	if (r < 0)
		goto fail;
	if (plan.skipped_pods) {
		snprintf(err, sizeof(err), "%s", plan.err);
		r = -ENOENT;
		goto fail;
	}
	goto out;
fail:
	if (!err[0])
		snprintf(err, sizeof(err), "%s", strerror(-r));
	kcmd_log_info("Error syncing endpoint slices for service, retrying key=%s err=%s", key,
	              err);
	if (svc)
		event_failed(w, svc, err);
	res->err = r;
out:
	eps_plan_free(&plan);
	for (size_t i = 0; i < zs.n; i++)
		free(zs.held[i]);
	free(zs.held);
	for (size_t i = 0; i < sl.n; i++)
		cJSON_Delete(sl.v[i]);
	free(sl.v);
	free(uids);
	free(gens);
	free(pods);
	free(names);
	free(times);
	cJSON_Delete(podlist);
	cJSON_Delete(svc);
	if (o)
		kcmd_obj_free(o);
}

static const struct wk_controller eps_worker = {
        .name = EPS_CONTROLLER,
        .queues = eps_queue_names,
        .init = eps_init,
        .sync = eps_sync,
        .fini = eps_fini,
};

/* ---- the manager: the batch period for the dispatcher ------------------------------------- */
static int eps_mgr_setup(struct kcmd_mgr_env *env, const struct kcmd_flag_values *v,
                         void **ret_state)
{
	char buf[32];
	int fd = memfd_create("kcmd-eps-batch", MFD_CLOEXEC), n;

	*ret_state = NULL;
	if (fd < 0)
		return -errno;
	n = snprintf(
	        buf, sizeof(buf), "%llu\n",
	        (unsigned long long)kcmd_flag_duration_us(v, "endpointslice-updates-batch-period"));
	if (write(fd, buf, (size_t)n) != n) {
		close(fd);
		return -EIO;
	}
	return kcmd_mgr_export_fd(env, BATCH_ENV, fd, KCMD_TO_DISPATCHER);
}

/* ---- the descriptor ----------------------------------------------------------------------- */
static const char *const eps_aliases[] = {"endpointslice", NULL};
static const struct kcmd_watch eps_watches[] = {
        {"", "v1", "services", "Service", KCMD_CACHE_OBJECT, true},
        {"", "v1", "pods", "Pod", KCMD_CACHE_POD, true},
        {"", "v1", "nodes", "Node", KCMD_CACHE_METADATA, false},
        {DISCOVERY, "v1", "endpointslices", "EndpointSlice", KCMD_CACHE_OBJECT, true},
};
static const struct kcmd_queue eps_queues[] = {{.name = EPS_QUEUE}};
static const struct kcmd_flag eps_flags[] = {
        {.name = "concurrent-service-endpoint-syncs",
         .type = KCMD_FLAG_INT,
         .def = "5",
         .min = 1,
         .max = 1000,
         .help = "The number of service endpoint syncing operations that will be done "
                 "concurrently. Larger number = faster endpoint slice updating, but more CPU "
                 "(and network) load. Accepted; kcmd runs one worker process (its slice "
                 "tracker is process memory, docs/endpointslice.md)."},
        {.name = "max-endpoints-per-slice",
         .type = KCMD_FLAG_INT,
         .def = "100",
         .min = 1,
         .max = 1000,
         .help = "The maximum number of endpoints that will be added to an EndpointSlice. More "
                 "endpoints per slice will result in less endpoint slices, but larger "
                 "resources."},
        {.name = "endpointslice-updates-batch-period",
         .type = KCMD_FLAG_DURATION,
         .def = "0s",
         .help = "The length of endpoint slice updates batching period. Processing of pod "
                 "changes will be delayed by this duration to join them with potential upcoming "
                 "updates and reduce the overall number of endpoints updates."},
};

const struct kcmd_controller kcmd_endpointslice_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = EPS_CONTROLLER,
        .aliases = eps_aliases,
        .enabled_by_default = true,
        .service_account = "endpointslice-controller",
        .watches = eps_watches,
        .n_watches = sizeof(eps_watches) / sizeof(eps_watches[0]),
        .queues = eps_queues,
        .n_queues = 1,
        .flags = eps_flags,
        .n_flags = sizeof(eps_flags) / sizeof(eps_flags[0]),
        .mgr_setup = eps_mgr_setup,
        .handlers = &eps_handlers,
        .worker = &eps_worker,
};
