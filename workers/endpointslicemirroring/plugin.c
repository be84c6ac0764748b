/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/endpointslicemirroring/plugin.c: kcm's endpointslice-mirroring-controller (alias
 * endpointslicemirroring), on by default, client "endpointslicemirroring-controller": mirrors the
 * custom Endpoints of Services without a selector into EndpointSlices (mirror.h;
 * docs/endpointslicemirroring.md).
 *
 * Shape: Services, Endpoints and EndpointSlices cached whole (the same watches as the
 * EndpointSlice and Endpoints controllers). The handlers queue an Endpoints key (namespace/name)
 * when an Endpoints that should be mirrored changes, when a Service without a selector is added
 * or deleted or its selector comes or goes, and when a slice this controller manages changes
 * (after --mirroring-endpointslice-updates-batch-period); at start every Endpoints, every Service
 * without a selector and every mirrored slice's Endpoints. One worker process: upstream's slice
 * tracker (workers/endpointslice/tracker.h) is its memory, so every sync of a key sees the same
 * tracker; the dispatcher has no tracker and queues on every change of a mirrored slice (a sync
 * that finds nothing to change writes nothing).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "kcmd/kcmd.h"
#include "kube/client.h"
#include "workers/endpointslice/tracker.h"
#include "workers/endpointslicemirroring/mirror.h"
#include "workers/worker.h"

#define DISCOVERY "discovery.k8s.io"
#define BATCH_ENV "KCMD_ESM_BATCH_FD"

/* upstream's metrics (pkg/controller/endpointslicemirroring/metrics), as declared there */
enum {
	ESM_M_ADDED,
	ESM_M_UPDATED,
	ESM_M_REMOVED,
	ESM_M_SKIPPED,
	ESM_M_DURATION,
	ESM_M_DESIRED,
	ESM_M_SLICES,
	ESM_M_DESIRED_SLICES,
	ESM_M_CHANGES,
	ESM_M_N
};
#define ESM_M_PREFIX "endpoint_slice_mirroring_controller_"
/* ExponentialBuckets(2, 2, 15) and ExponentialBuckets(0.001, 2, 15) */
static const double per_sync_buckets[] = {2,   4,    8,    16,   32,   64,    128,  256,
                                          512, 1024, 2048, 4096, 8192, 16384, 32768};
static const double duration_buckets[] = {0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128,
                                          0.256, 0.512, 1.024, 2.048, 4.096, 8.192, 16.384};
static const char *const operations[] = {"create", "update", "delete", NULL};
static const struct kcmd_metric_label changes_labels[] = {{"operation", operations}};
#define PER_SYNC(id, what, text)                                                                   \
	[id] = {.name = ESM_M_PREFIX what,                                                         \
	        .help = text,                                                                      \
	        .type = KCMD_METRIC_HISTOGRAM,                                                     \
	        .stability = KCMD_METRIC_ALPHA,                                                    \
	        .buckets = per_sync_buckets,                                                       \
	        .n_buckets = sizeof(per_sync_buckets) / sizeof(per_sync_buckets[0])}
#define GAUGE(id, what, text)                                                                      \
	[id] = {.name = ESM_M_PREFIX what,                                                         \
	        .help = text,                                                                      \
	        .type = KCMD_METRIC_GAUGE,                                                         \
	        .stability = KCMD_METRIC_ALPHA}
static const struct kcmd_metric esm_metrics[ESM_M_N] = {
        PER_SYNC(ESM_M_ADDED, "endpoints_added_per_sync",
                 "Number of endpoints added on each Endpoints sync"),
        PER_SYNC(ESM_M_UPDATED, "endpoints_updated_per_sync",
                 "Number of endpoints updated on each Endpoints sync"),
        PER_SYNC(ESM_M_REMOVED, "endpoints_removed_per_sync",
                 "Number of endpoints removed on each Endpoints sync"),
        PER_SYNC(ESM_M_SKIPPED, "addresses_skipped_per_sync",
                 "Number of addresses skipped on each Endpoints sync due to being invalid or "
                 "exceeding MaxEndpointsPerSubset"),
        [ESM_M_DURATION] = {.name = ESM_M_PREFIX "endpoints_sync_duration",
                            .help = "Duration of syncEndpoints() in seconds",
                            .type = KCMD_METRIC_HISTOGRAM,
                            .stability = KCMD_METRIC_ALPHA,
                            .buckets = duration_buckets,
                            .n_buckets = sizeof(duration_buckets) / sizeof(duration_buckets[0])},
        GAUGE(ESM_M_DESIRED, "endpoints_desired", "Number of endpoints desired"),
        GAUGE(ESM_M_SLICES, "num_endpoint_slices", "Number of EndpointSlices"),
        GAUGE(ESM_M_DESIRED_SLICES, "desired_endpoint_slices",
              "Number of EndpointSlices that would exist with perfect endpoint allocation"),
        [ESM_M_CHANGES] = {.name = ESM_M_PREFIX "changes",
                           .help = "Number of EndpointSlice changes",
                           .type = KCMD_METRIC_COUNTER,
                           .stability = KCMD_METRIC_ALPHA,
                           .labels = changes_labels,
                           .n_labels = 1},
};

static cJSON *parse_obj(const struct shm_obj *o)
{
	size_t len = 0;
	const char *s = o ? kcmd_obj_json(o, &len) : NULL;
	return s ? cJSON_ParseWithLength(s, len) : NULL;
}

/* ---- handlers (kcmd-dispatcher) ----------------------------------------------------------- */
struct disp {
	uint64_t batch_us;
};

static int esm_table_init(struct inf_handler_ctx *ctx)
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

static void esm_table_fini(struct inf_handler_ctx *ctx)
{
	free(ctx->state);
	ctx->state = NULL;
}

static void queue_key(struct inf_handler_ctx *ctx, const char *ns, const char *name, uint64_t delay)
{
	char key[512];
	if (!ns || !name || !*name)
		return;
	snprintf(key, sizeof(key), "%s/%s", ns, name);
	if (delay)
		kcmd_queue_add_after(ctx, 0, key, delay);
	else
		kcmd_queue_add(ctx, 0, key);
}

/* -1: no JSON, else whether the Service has a selector */
static int selector_of(const char *json, size_t len)
{
	cJSON *j = json ? cJSON_ParseWithLength(json, len) : NULL;
	int r = j ? esm_service_has_selector(j) : -1;
	cJSON_Delete(j);
	return r;
}

/* onServiceAdd / onServiceUpdate / onServiceDelete */
static void on_service(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	size_t len = 0, olen = 0;
	const char *now = ev->kind == INF_EVENT_DELETE ? NULL : kcmd_event_json(ev, &len);
	const char *old = ev->old ? kcmd_obj_json(ev->old, &olen) : NULL;
	const char *ns = ev->meta ? kcmd_meta_namespace(ev->meta) : kcmd_obj_namespace(ev->old);
	const char *name = ev->meta ? kcmd_meta_name(ev->meta) : kcmd_obj_name(ev->old);
	int sn, so;

	switch (ev->kind) {
	case INF_EVENT_ADD:
		if (selector_of(now, len) == 0)
			queue_key(ctx, ns, name, 0);
		break;
	case INF_EVENT_UPDATE:
		sn = selector_of(now, len);
		so = selector_of(old, olen);
		if (sn >= 0 && so >= 0 && sn != so)
			queue_key(ctx, ns, name, 0);
		break;
	case INF_EVENT_DELETE:
		if (selector_of(old, olen) == 0)
			queue_key(ctx, ns, name, 0);
		break;
	}
}

static bool mirror_meta(const struct kube_object_meta *m)
{
	return esm_should_mirror(kcmd_meta_label(m, ESM_LABEL_SKIP),
	                         kcmd_meta_annotation(m, ESM_ANN_LEADER) != NULL);
}

static bool mirror_obj(const struct shm_obj *o)
{
	return esm_should_mirror(kcmd_obj_label(o, ESM_LABEL_SKIP),
	                         kcmd_obj_annotation(o, ESM_ANN_LEADER) != NULL);
}

/* onEndpointsAdd / onEndpointsUpdate (either version mirrored) / onEndpointsDelete */
static void on_endpoints(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	bool now = ev->meta && ev->kind != INF_EVENT_DELETE && mirror_meta(ev->meta);
	bool old = ev->old && mirror_obj(ev->old);
	const char *ns = ev->meta ? kcmd_meta_namespace(ev->meta) : kcmd_obj_namespace(ev->old);
	const char *name = ev->meta ? kcmd_meta_name(ev->meta) : kcmd_obj_name(ev->old);

	if (ev->kind == INF_EVENT_DELETE && ev->meta && !ev->old)
		now = mirror_meta(ev->meta);
	if (ev->kind == INF_EVENT_ADD ? now : (now || old))
		queue_key(ctx, ns, name, 0);
}

static bool managed(const char *v)
{
	return v && !strcmp(v, ESM_MANAGED_BY);
}

/* onEndpointSliceAdd / Update / Delete. Without upstream's tracker here every change of a mirrored
 * slice queues its Endpoints (the worker's tracker tells a stale cache from another writer); a
 * change of the service-name label queues both keys. */
static void on_slice(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	struct disp *d = ctx->state;
	uint64_t delay = d ? d->batch_us : 0;
	const char *ns = ev->meta ? kcmd_meta_namespace(ev->meta) : kcmd_obj_namespace(ev->old);
	const char *svc = ev->meta ? kcmd_meta_label(ev->meta, ESM_LABEL_SVC) : NULL;
	const char *mgd = ev->meta ? kcmd_meta_label(ev->meta, ESM_LABEL_MGD) : NULL;
	const char *osvc = ev->old ? kcmd_obj_label(ev->old, ESM_LABEL_SVC) : NULL;
	const char *omgd = ev->old ? kcmd_obj_label(ev->old, ESM_LABEL_MGD) : NULL;

	if (ev->kind == INF_EVENT_DELETE) {
		if (ev->old ? managed(omgd) : managed(mgd))
			queue_key(ctx, ns, ev->old ? osvc : svc, delay);
		return;
	}
	if (ev->kind == INF_EVENT_UPDATE && ev->old &&
	    (svc ? !osvc || strcmp(svc, osvc) : osvc != NULL)) {
		queue_key(ctx, ns, svc, delay);
		queue_key(ctx, ns, osvc, delay);
		return;
	}
	if (managed(mgd) || (ev->kind == INF_EVENT_UPDATE && ev->old && managed(omgd)))
		queue_key(ctx, ns, svc, delay);
}

static int add_endpoints(const struct shm_obj *o, void *ud)
{
	if (mirror_obj(o))
		queue_key(ud, kcmd_obj_namespace(o), kcmd_obj_name(o), 0);
	return 0;
}

static int add_service(const struct shm_obj *o, void *ud)
{
	cJSON *j = parse_obj(o);
	if (j && !esm_service_has_selector(j))
		queue_key(ud, kcmd_obj_namespace(o), kcmd_obj_name(o), 0);
	cJSON_Delete(j);
	return 0;
}

static int add_slice(const struct shm_obj *o, void *ud)
{
	if (managed(kcmd_obj_label(o, ESM_LABEL_MGD)))
		queue_key(ud, kcmd_obj_namespace(o), kcmd_obj_label(o, ESM_LABEL_SVC), 0);
	return 0;
}

static void esm_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	kcmd_cache_list(ctx->arena, "", "endpoints", NULL, add_endpoints, ctx);
	kcmd_cache_list(ctx->arena, "", "services", NULL, add_service, ctx);
	kcmd_cache_list(ctx->arena, DISCOVERY, "endpointslices", NULL, add_slice, ctx);
}

static const char *const esm_queue_names[] = {ESM_QUEUE, NULL};
static const struct inf_handler_entry esm_entries[] = {
        {.group = "",
         .resource = "endpoints",
         .on_add = on_endpoints,
         .on_update = on_endpoints,
         .on_delete = on_endpoints},
        {.group = "",
         .resource = "services",
         .on_add = on_service,
         .on_update = on_service,
         .on_delete = on_service},
        {.group = DISCOVERY,
         .resource = "endpointslices",
         .on_add = on_slice,
         .on_update = on_slice,
         .on_delete = on_slice},
};
static const struct inf_handler_table esm_handlers = {
        .controller = ESM_CONTROLLER,
        .queues = esm_queue_names,
        .entries = esm_entries,
        .n_entries = sizeof(esm_entries) / sizeof(esm_entries[0]),
        .init = esm_table_init,
        .fini = esm_table_fini,
        .resync = esm_resync,
};

/* ---- sync (kcmd-worker) ------------------------------------------------------------------- */
/* upstream's metrics.Cache: per Endpoints key its endpoints, slices and desired slices, and
 * their sums (the three gauges). Process memory of the one worker; an entry goes when its
 * Endpoints' slices are cleaned up (DeleteEndpoints). Chained hash, grows without a limit with
 * the number of mirrored Endpoints. */
struct mcache_entry {
	struct mcache_entry *next;
	int endpoints, slices, desired_slices;
	char key[];
};
#define MCACHE_BUCKETS 1024

struct wk {
	struct wk_ctx *ctx;
	struct eps_tracker *tr;
	int max_per_subset;
	struct kcmd_metrics *met;
	struct mcache_entry *mcache[MCACHE_BUCKETS];
	long long sum_endpoints, sum_slices, sum_desired_slices;
};

static struct mcache_entry **mcache_slot(struct wk *w, const char *key)
{
	unsigned h = 5381;
	for (const char *p = key; *p; p++)
		h = h * 33 + (unsigned char)*p;
	struct mcache_entry **e = &w->mcache[h % MCACHE_BUCKETS];
	while (*e && strcmp((*e)->key, key))
		e = &(*e)->next;
	return e;
}

static void mcache_publish(struct wk *w)
{
	kcmd_metric_set(w->met, ESM_M_SLICES, NULL, (double)w->sum_slices);
	kcmd_metric_set(w->met, ESM_M_DESIRED_SLICES, NULL, (double)w->sum_desired_slices);
	kcmd_metric_set(w->met, ESM_M_DESIRED, NULL, (double)w->sum_endpoints);
}

/* UpdateEndpointPortCache */
static void mcache_update(struct wk *w, const char *key, const struct esm_plan *p)
{
	struct mcache_entry **slot = mcache_slot(w, key), *e = *slot;
	if (!e) {
		size_t l = strlen(key) + 1;
		if (!(e = calloc(1, sizeof(*e) + l)))
			return; /* the gauges stay as they were */
		memcpy(e->key, key, l);
		*slot = e;
	}
	w->sum_endpoints += p->cache_endpoints - e->endpoints;
	w->sum_slices += p->cache_slices - e->slices;
	w->sum_desired_slices += p->cache_desired_slices - e->desired_slices;
	e->endpoints = p->cache_endpoints;
	e->slices = p->cache_slices;
	e->desired_slices = p->cache_desired_slices;
	mcache_publish(w);
}

/* DeleteEndpoints */
static void mcache_delete(struct wk *w, const char *key)
{
	struct mcache_entry **slot = mcache_slot(w, key), *e = *slot;
	if (!e)
		return;
	w->sum_endpoints -= e->endpoints;
	w->sum_slices -= e->slices;
	w->sum_desired_slices -= e->desired_slices;
	*slot = e->next;
	free(e);
	mcache_publish(w);
}

static int esm_init(struct wk_ctx *ctx, void **ret_state)
{
	struct wk *w = calloc(1, sizeof(*w));
	if (!w || eps_tracker_new(&w->tr) < 0) {
		free(w);
		return -ENOMEM;
	}
	w->ctx = ctx;
	w->met = kcmd_metrics_get();
	w->max_per_subset = (int)kcmd_flag_int(ctx->flags, "mirroring-max-endpoints-per-subset");
	if (w->max_per_subset < 1)
		w->max_per_subset = 1000;
	*ret_state = w;
	return 0;
}

static void esm_fini(void *state)
{
	struct wk *w = state;
	if (w) {
		eps_tracker_free(w->tr);
		for (size_t i = 0; i < MCACHE_BUCKETS; i++)
			while (w->mcache[i]) {
				struct mcache_entry *e = w->mcache[i];
				w->mcache[i] = e->next;
				free(e);
			}
	}
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

struct cached {
	cJSON **v;
	size_t n, cap;
	const char *name;
};

/* endpointSlicesMirroredForService: the slices labelled with the name and managed by us */
static int collect_slice(const struct shm_obj *o, void *ud)
{
	struct cached *c = ud;
	const char *sn = kcmd_obj_label(o, ESM_LABEL_SVC);
	cJSON *j;

	if (!sn || strcmp(sn, c->name) || !managed(kcmd_obj_label(o, ESM_LABEL_MGD)))
		return 0;
	if (!(j = parse_obj(o)))
		return 0;
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

static int slice_request(struct wk *w, const char *method, const char *ns, const char *name,
                         const char *body, char **out)
{
	return kcmd_kube_request(w->ctx->kc,
	                         &(struct kcmd_request){.method = method,
	                                                .group = DISCOVERY,
	                                                .version = "v1",
	                                                .resource = "endpointslices",
	                                                .ns = ns,
	                                                .name = name,
	                                                .body = body,
	                                                .body_kind = "EndpointSlice"},
	                         NULL, out);
}

static const char *why(int r)
{
	return kcmd_kube_reason(r) ? kcmd_kube_reason(r) : strerror(-r);
}

/* deleteEndpoints: every mirrored slice of the key goes; all are tried, the first error kept */
static int delete_mirrored(struct wk *w, const char *key, const char *ns, struct cached *sl,
                           char *err, size_t errlen)
{
	int first = 0, n_err = 0;
	eps_tracker_delete_service(w->tr, key);
	mcache_delete(w, key);
	for (size_t i = 0; i < sl->n; i++) {
		int r = slice_request(w, "DELETE", ns, jstr(jget(sl->v[i], "metadata"), "name"),
		                      NULL, NULL);
		if (r < 0 && r != -ENOENT) {
			if (!n_err++) {
				first = r;
				snprintf(err, errlen, "%s", why(r));
			}
		}
	}
	if (n_err) {
		char tmp[256];
		snprintf(tmp, sizeof(tmp), "%.200s", err);
		snprintf(err, errlen,
		         "error(s) deleting %d/%zu EndpointSlices for %s Endpoints, including: %s",
		         n_err, sl->n, key, tmp);
	}
	return first;
}

struct gone_ctx {
	struct wk *w;
	const char *ns;
};

/* a slice this worker wrote that the cache lacks: deleted at the apiserver, or not seen yet? */
static bool slice_gone(void *ud, const char *name, const char *uid)
{
	struct gone_ctx *g = ud;
	char *out = NULL;
	bool gone = false;
	int r = slice_request(g->w, "GET", g->ns, name, NULL, &out);
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

static void record(struct wk *w, const cJSON *eps, const char *reason, const char *fmt, int a,
                   int b)
{
	const cJSON *md = jget(eps, "metadata");
	struct kcmd_object_ref ref = {.api_version = "v1",
	                              .kind = "Endpoints",
	                              .ns = jstr(md, "namespace"),
	                              .name = jstr(md, "name"),
	                              .uid = jstr(md, "uid")};
	if (b >= 0)
		kcmd_event_record(w->ctx->kc, ESM_COMPONENT, &ref, KCMD_EVENT_WARNING, reason, fmt,
		                  a, b);
	else
		kcmd_event_record(w->ctx->kc, ESM_COMPONENT, &ref, KCMD_EVENT_WARNING, reason, fmt,
		                  a);
}

/* finalize: creates, updates, deletes; 1 when the namespace is terminating (drop the key) */
static int execute(struct wk *w, const char *key, const char *ns, const struct esm_plan *p,
                   char *err, size_t errlen)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct esm_action *a = &p->v[i];
		const cJSON *md = jget(a->obj, "metadata");
		char *body = NULL, *out = NULL;
		int r = 0;

		if (a->op == ESM_KEEP) {
			/* always track the slice (upstream: Update when not Has) */
			eps_tracker_update(w->tr, key, jstr(md, "name"), jstr(md, "uid"),
			                   (int64_t)cJSON_GetNumberValue(jget(md, "generation")));
			continue;
		}
		if (a->op != ESM_DELETE && !(body = cJSON_PrintUnformatted(a->obj)))
			return -ENOMEM;
		r = slice_request(w,
		                  a->op == ESM_CREATE   ? "POST"
		                  : a->op == ESM_UPDATE ? "PUT"
		                                        : "DELETE",
		                  ns, a->op == ESM_CREATE ? NULL : jstr(md, "name"), body, &out);
		free(body);
		if (r == 0)
			kcmd_metric_inc(w->met, ESM_M_CHANGES,
			                (const char *[]){a->op == ESM_CREATE   ? "create"
			                                 : a->op == ESM_UPDATE ? "update"
			                                                       : "delete"});
		if (r == 0 && a->op != ESM_DELETE) {
			cJSON *got = out ? cJSON_Parse(out) : NULL;
			const cJSON *gm = jget(got, "metadata");
			if (got)
				eps_tracker_update(
				        w->tr, key, jstr(gm, "name"), jstr(gm, "uid"),
				        (int64_t)cJSON_GetNumberValue(jget(gm, "generation")));
			kcmd_log_v(4, "%s: %s EndpointSlice %s", key,
			           a->op == ESM_CREATE ? "created" : "updated", jstr(gm, "name"));
			cJSON_Delete(got);
		} else if (a->op == ESM_DELETE && r == 0) {
			eps_tracker_expect_deletion(w->tr, key, jstr(md, "name"), jstr(md, "uid"));
		} else if (a->op == ESM_CREATE && out && strstr(out, "NamespaceTerminating")) {
			free(out);
			return 1;
		}
		free(out);
		if (r < 0) {
			if (a->op == ESM_CREATE)
				snprintf(err, errlen,
				         "failed to create EndpointSlice for Endpoints %s: %s", key,
				         why(r));
			else
				snprintf(err, errlen,
				         "failed to %s %s EndpointSlice for Endpoints %s: %s",
				         a->op == ESM_UPDATE ? "update" : "delete",
				         jstr(md, "name"), key, why(r));
			return r;
		}
	}
	return 0;
}

static void esm_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct wk *w = state;
	char ns[254], err[768] = "";
	const char *slash = strchr(key, '/'), *name;
	struct shm_obj *eo = NULL, *so = NULL;
	cJSON *eps = NULL, *svc = NULL;
	struct cached sl = {0};
	struct esm_plan plan = {0};
	const char **uids = NULL;
	int64_t *gens = NULL;
	int r;

	struct timespec t0, t1;

	(void)q;
	*res = (struct wk_result){0};
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!slash || (size_t)(slash - key) >= sizeof(ns))
		goto out; /* SplitMetaNamespaceKey fails: dropped */
	memcpy(ns, key, (size_t)(slash - key));
	ns[slash - key] = '\0';
	name = slash + 1;
	sl.name = name;
	if ((r = kcmd_cache_list(w->ctx->arena, DISCOVERY, "endpointslices", ns, collect_slice,
	                         &sl)) < 0 &&
	    r != -ENOENT)
		goto fail;

	r = kcmd_cache_get(w->ctx->arena, "", "endpoints", ns, name, &eo);
	if (r == -ENOENT || (r == 0 && !mirror_obj(eo))) {
		kcmd_log_v(4, "%s: Endpoints %s, cleaning up any mirrored EndpointSlices", key,
		           r ? "not found" : "should not be mirrored");
		goto cleanup;
	}
	if (r < 0 || !(eps = parse_obj(eo))) {
		r = r < 0 ? r : -EBADMSG;
		goto fail;
	}
	r = kcmd_cache_get(w->ctx->arena, "", "services", ns, name, &so);
	if (r == -ENOENT) {
		kcmd_log_v(4, "%s: Service not found, cleaning up any mirrored EndpointSlices",
		           key);
		goto cleanup;
	}
	if (r < 0 || !(svc = parse_obj(so))) {
		r = r < 0 ? r : -EBADMSG;
		goto fail;
	}
	if (esm_service_has_selector(svc)) {
		kcmd_log_v(4,
		           "%s: Service now has selector, cleaning up any mirrored EndpointSlices",
		           key);
		goto cleanup;
	}

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
		snprintf(err, sizeof(err), "EndpointSlice informer cache is out of date");
		r = -EAGAIN;
		goto fail;
	}
	if ((r = esm_reconcile(eps, (const cJSON *const *)sl.v, sl.n, w->max_per_subset, &plan)) <
	    0)
		goto fail;
	kcmd_metric_observe(w->met, ESM_M_SKIPPED, NULL, plan.skipped);
	if (plan.invalid > 0)
		record(w, eps, "InvalidIPAddress",
		       "Skipped %d invalid IP addresses when mirroring to EndpointSlices",
		       plan.invalid, -1);
	if (plan.skipped > plan.invalid) {
		kcmd_log_info("Addresses in Endpoints were skipped due to exceeding "
		              "MaxEndpointsPerSubset skippedAddresses=%d endpoints=%s",
		              plan.skipped, key);
		record(w, eps, "TooManyAddressesToMirror",
		       "A max of %d addresses can be mirrored to EndpointSlices per Endpoints "
		       "subset. "
		       "%d addresses were skipped",
		       w->max_per_subset, plan.skipped);
	}
	kcmd_metric_observe(w->met, ESM_M_ADDED, NULL, plan.added);
	kcmd_metric_observe(w->met, ESM_M_UPDATED, NULL, plan.updated);
	kcmd_metric_observe(w->met, ESM_M_REMOVED, NULL, plan.removed);
	mcache_update(w, key, &plan);
	r = execute(w, key, ns, &plan, err, sizeof(err));
	if (r > 0)
		r = 0;
	if (r < 0)
		goto fail;
	goto out;
cleanup:
	r = delete_mirrored(w, key, ns, &sl, err, sizeof(err));
	if (r < 0)
		goto fail;
	goto out;
fail:
	if (!err[0])
		snprintf(err, sizeof(err), "%s", why(r));
	kcmd_log_info("Error mirroring EndpointSlices for Endpoints, retrying key=%s err=%s", key,
	              err);
	res->err = r;
out:
	/* EndpointsSyncDuration: whole milliseconds, in seconds */
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long long ms =
	        (long long)(t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	kcmd_metric_observe(w->met, ESM_M_DURATION, NULL, (double)ms / 1000);
	esm_plan_free(&plan);
	for (size_t i = 0; i < sl.n; i++)
		cJSON_Delete(sl.v[i]);
	free(sl.v);
	free(uids);
	free(gens);
	cJSON_Delete(eps);
	cJSON_Delete(svc);
	if (eo)
		kcmd_obj_free(eo);
	if (so)
		kcmd_obj_free(so);
}

static const struct wk_controller esm_worker = {
        .name = ESM_CONTROLLER,
        .queues = esm_queue_names,
        .init = esm_init,
        .sync = esm_sync,
        .fini = esm_fini,
};

/* ---- the manager: the batch period for the dispatcher ------------------------------------- */
static int esm_mgr_setup(struct kcmd_mgr_env *env, const struct kcmd_flag_values *v,
                         void **ret_state)
{
	char buf[32];
	int fd = memfd_create("kcmd-esm-batch", MFD_CLOEXEC), n;

	*ret_state = NULL;
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%llu\n",
	             (unsigned long long)kcmd_flag_duration_us(
	                     v, "mirroring-endpointslice-updates-batch-period"));
	if (write(fd, buf, (size_t)n) != n) {
		close(fd);
		return -EIO;
	}
	return kcmd_mgr_export_fd(env, BATCH_ENV, fd, KCMD_TO_DISPATCHER);
}

/* ---- the descriptor ----------------------------------------------------------------------- */
static const char *const esm_aliases[] = {"endpointslicemirroring", NULL};
static const struct kcmd_watch esm_watches[] = {
        {"", "v1", "endpoints", "Endpoints", KCMD_CACHE_OBJECT, true},
        {"", "v1", "services", "Service", KCMD_CACHE_OBJECT, true},
        {DISCOVERY, "v1", "endpointslices", "EndpointSlice", KCMD_CACHE_OBJECT, true},
};
static const struct kcmd_queue esm_queues[] = {{.name = ESM_QUEUE}};
static const struct kcmd_flag esm_flags[] = {
        {.name = "mirroring-concurrent-service-endpoint-syncs",
         .type = KCMD_FLAG_INT,
         .def = "5",
         .min = 1,
         .max = 50,
         .help = "The number of service endpoint syncing operations that will be done "
                 "concurrently by the endpointslice-mirroring-controller. Larger number = "
                 "faster endpoint slice updating, but more CPU (and network) load. Defaults "
                 "to 5. Accepted; kcmd runs one worker process "
                 "(docs/endpointslicemirroring.md)."},
        {.name = "mirroring-max-endpoints-per-subset",
         .type = KCMD_FLAG_INT,
         .def = "1000",
         .min = 1,
         .max = 1000,
         .help = "The maximum number of endpoints that will be added to an EndpointSlice by "
                 "the endpointslice-mirroring-controller. More endpoints per slice will result "
                 "in less endpoint slices, but larger resources. Defaults to 100."},
        {.name = "mirroring-endpointslice-updates-batch-period",
         .type = KCMD_FLAG_DURATION,
         .def = "0s",
         .help = "The length of EndpointSlice updates batching period for "
                 "endpointslice-mirroring-controller. Processing of EndpointSlice changes will "
                 "be delayed by this duration to join them with potential upcoming updates and "
                 "reduce the overall number of EndpointSlice updates. Larger number = higher "
                 "endpoint programming latency, but lower number of endpoints revision "
                 "generated"},
};

const struct kcmd_controller kcmd_endpointslicemirroring_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = ESM_CONTROLLER,
        .aliases = esm_aliases,
        .enabled_by_default = true,
        .service_account = "endpointslicemirroring-controller",
        .watches = esm_watches,
        .n_watches = sizeof(esm_watches) / sizeof(esm_watches[0]),
        .queues = esm_queues,
        .n_queues = 1,
        .flags = esm_flags,
        .n_flags = sizeof(esm_flags) / sizeof(esm_flags[0]),
        .mgr_setup = esm_mgr_setup,
        .metrics = esm_metrics,
        .n_metrics = ESM_M_N,
        .handlers = &esm_handlers,
        .worker = &esm_worker,
};
