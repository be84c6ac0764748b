/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/resourcepoolstatus/plugin.c: kcm's resourcepoolstatusrequest-controller (no alias),
 * on by default but only with the DRAResourcePoolStatus feature gate (alpha, off in v1.37),
 * client "resourcepoolstatusrequest-controller" (upstream pkg/controller/resourcepoolstatusrequest
 * and cmd/kube-controller-manager/app/resource.go). docs/resourcepoolstatusrequest.md.
 *
 * Shape: ResourcePoolStatusRequests (resource.k8s.io/v1alpha3, cluster-scoped) and the
 * ResourceSlices, ResourceClaims and DeviceTaintRules (v1) they are computed from are cached
 * whole. One queue "resourcepoolstatusrequest", one worker process (kcm runs one worker, no
 * flag).
 *
 * Handlers: a request added or updated is queued by name while it has no status (enqueueRequest);
 * slices, claims and rules queue nothing (upstream only lists them). The table's resync queues
 * every request without status and the key RPS_CLEANUP_KEY: the TTL pass upstream starts with
 * its workers and repeats every 10 minutes (cleanupExpiredRequests); here the pass requeues its
 * own key 10 minutes later, so a restarted dispatcher starts it again at once, as a restarted
 * kcm does.
 *
 * Sync (syncRequest): a request not in the cache, or with a status, is done; else its status is
 * computed from the cache (rps.h) and written with an Update of the status subresource (PUT of
 * the cached object, its resourceVersion making a stale copy a Conflict). A returned pool that
 * is incomplete (PoolIncomplete) makes the sync an error instead, retried with the rate limit;
 * as upstream, a key failing 5 times in a row is dropped (maxRetries; the count lives in the
 * worker process and restarts with it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kcmd/kcmd.h"
#include "lib/features.h"
#include "workers/resourcepoolstatus/rps.h"
#include "workers/worker.h"

#define RPS_CONTROLLER  "resourcepoolstatusrequest-controller"
#define RPS_QUEUE       "resourcepoolstatusrequest"
#define RPS_GROUP       "resource.k8s.io"
#define RPS_VERSION     "v1alpha3"
#define RPS_RESOURCE    "resourcepoolstatusrequests"
#define RPS_V1          "v1"
#define RPS_MAX_RETRIES 5
/* not an object name (names are DNS subdomains): the cleanup pass's key */
#define RPS_CLEANUP_KEY "@cleanup"

enum { RPS_M_PROCESSED, RPS_M_ERRORS, RPS_M_DURATION, RPS_M_N };

static const struct kcmd_metric_label rps_driver_label[] = {{"driver_name", NULL}};
/* prometheus.ExponentialBuckets(0.001, 2, 15) */
static const double rps_buckets[] = {0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128,
                                     0.256, 0.512, 1.024, 2.048, 4.096, 8.192, 16.384};
static const struct kcmd_metric rps_metrics[RPS_M_N] = {
        [RPS_M_PROCESSED] =
                {.name = "resourcepoolstatusrequest_controller_requests_processed_total",
                 .help = "Total number of ResourcePoolStatusRequests processed",
                 .type = KCMD_METRIC_COUNTER,
                 .stability = KCMD_METRIC_ALPHA,
                 .labels = rps_driver_label,
                 .n_labels = 1},
        [RPS_M_ERRORS] = {.name = "resourcepoolstatusrequest_controller_request_processing_errors_"
                                  "total",
                          .help = "Total number of errors encountered while processing "
                                  "ResourcePoolStatusRequests",
                          .type = KCMD_METRIC_COUNTER,
                          .stability = KCMD_METRIC_ALPHA,
                          .labels = rps_driver_label,
                          .n_labels = 1},
        [RPS_M_DURATION] = {.name = "resourcepoolstatusrequest_controller_request_processing_"
                                    "duration_seconds",
                            .help = "Time taken to process a ResourcePoolStatusRequest",
                            .type = KCMD_METRIC_HISTOGRAM,
                            .stability = KCMD_METRIC_ALPHA,
                            .labels = rps_driver_label,
                            .n_labels = 1,
                            .buckets = rps_buckets,
                            .n_buckets = sizeof(rps_buckets) / sizeof(rps_buckets[0])},
};

/* ---- handlers (kcmd-dispatcher) ----------------------------------------------------------- */
static void queue_if_pending(struct inf_handler_ctx *ctx, const char *js, size_t len)
{
	cJSON *r = js ? cJSON_ParseWithLength(js, len) : NULL;
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(r, "metadata"), "name"));
	char key[KCMD_KEY_MAX + 1];

	/* enqueueRequest: a request with a status is done */
	if (name && *name && !rps_has_status(r) && kcmd_key_make(key, sizeof(key), NULL, name) > 0)
		kcmd_queue_add(ctx, 0, key);
	cJSON_Delete(r);
}

static void on_request(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	size_t len = 0;
	const char *js = kcmd_event_json(ev, &len);

	queue_if_pending(ctx, js, len);
}

static int resync_one(const struct shm_obj *o, void *userdata)
{
	size_t len = 0;
	const char *js = kcmd_obj_json(o, &len);

	queue_if_pending(userdata, js, len);
	return 0;
}

static void rps_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	kcmd_cache_list(ctx->arena, RPS_GROUP, RPS_RESOURCE, NULL, resync_one, ctx);
	kcmd_queue_add(ctx, 0, RPS_CLEANUP_KEY);
}

static const char *const rps_queue_names[] = {RPS_QUEUE, NULL};
static const struct inf_handler_entry rps_entries[] = {
        {RPS_GROUP, RPS_RESOURCE, on_request, on_request, NULL},
};
static const struct inf_handler_table rps_handlers = {
        .controller = RPS_CONTROLLER,
        .queues = rps_queue_names,
        .entries = rps_entries,
        .n_entries = sizeof(rps_entries) / sizeof(rps_entries[0]),
        .resync = rps_resync,
};

/* ---- sync (kcmd-worker) ------------------------------------------------------------------- */
struct retry {
	char *key;
	int n;
};

struct rps_worker {
	struct wk_ctx *ctx;
	struct kcmd_metrics *met;
	bool rules_enabled;    /* DRADeviceTaintRules */
	struct retry *retries; /* NumRequeues of the keys failing now */
	size_t n_retries, cap_retries;
	/* Test seam (docs/testing.md): KCMD_TEST_RPSR_DROP=<prefix> makes this worker drop every
	 * request whose name starts with <prefix> without writing it, as a worker that lost the
	 * key would (the fault TestResourcePoolStatusRequest_WorkerKilled's oracle targets). Read
	 * once at start; unset or empty: no effect. */
	const char *drop;
};

static struct retry *retry_find(struct rps_worker *w, const char *key)
{
	for (size_t i = 0; i < w->n_retries; i++)
		if (!strcmp(w->retries[i].key, key))
			return &w->retries[i];
	return NULL;
}

static void retry_forget(struct rps_worker *w, const char *key)
{
	struct retry *r = retry_find(w, key);
	if (!r)
		return;
	free(r->key);
	*r = w->retries[--w->n_retries];
}

/* NumRequeues(key), then one more */
static int retry_count(struct rps_worker *w, const char *key)
{
	struct retry *r = retry_find(w, key);
	if (r)
		return r->n++;
	if (w->n_retries == w->cap_retries) {
		size_t c = w->cap_retries ? w->cap_retries * 2 : 8;
		struct retry *n = realloc(w->retries, c * sizeof(*n));
		if (!n)
			return 0;
		w->retries = n;
		w->cap_retries = c;
	}
	char *k = strdup(key);
	if (!k)
		return 0;
	w->retries[w->n_retries++] = (struct retry){k, 1};
	return 0;
}

static int rps_init(struct wk_ctx *ctx, void **ret_state)
{
	struct rps_worker *w = calloc(1, sizeof(*w));
	const char *v = getenv("KCMD_TEST_RPSR_DROP");

	if (!w)
		return -ENOMEM;
	w->ctx = ctx;
	w->met = kcmd_metrics_get();
	w->rules_enabled = kcmd_feature_enabled(KCMD_FEAT_DRA_DEVICE_TAINT_RULES);
	if (v && *v) {
		w->drop = v;
		kcmd_log_warning("KCMD_TEST_RPSR_DROP=%s: requests named so are dropped unwritten "
		                 "(a test seam)",
		                 v);
	}
	kcmd_log_info("ResourcePoolStatusRequest controller initialized");
	kcmd_log_info("Starting ResourcePoolStatusRequest controller");
	*ret_state = w;
	return 0;
}

static void rps_fini(void *state)
{
	struct rps_worker *w = state;

	kcmd_log_info("Shutting down ResourcePoolStatusRequest controller");
	for (size_t i = 0; w && i < w->n_retries; i++)
		free(w->retries[i].key);
	if (w)
		free(w->retries);
	free(w);
}

static const char *reason(int r)
{
	return kcmd_kube_reason(r) ? kcmd_kube_reason(r) : strerror(-r);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* a resource's cached objects, parsed */
struct objs {
	cJSON **v;
	size_t n, cap;
};

static int collect(const struct shm_obj *o, void *userdata)
{
	struct objs *s = userdata;
	size_t len = 0;
	const char *js = kcmd_obj_json(o, &len);
	cJSON *j = js ? cJSON_ParseWithLength(js, len) : NULL;

	if (!j)
		return 0;
	if (s->n == s->cap) {
		size_t c = s->cap ? s->cap * 2 : 64;
		cJSON **n = realloc(s->v, c * sizeof(*n));
		if (!n) {
			cJSON_Delete(j);
			return -ENOMEM;
		}
		s->v = n;
		s->cap = c;
	}
	s->v[s->n++] = j;
	return 0;
}

static void objs_free(struct objs *s)
{
	for (size_t i = 0; i < s->n; i++)
		cJSON_Delete(s->v[i]);
	free(s->v);
	*s = (struct objs){0};
}

static int list(struct rps_worker *w, const char *version, const char *resource, struct objs *s)
{
	(void)version;
	int r = kcmd_cache_list(w->ctx->arena, RPS_GROUP, resource, NULL, collect, s);
	return r < 0 ? r : 0;
}

/* UpdateStatus of the cached request with status st (req owns st afterwards, also on failure) */
static int update_status(struct rps_worker *w, cJSON *req, cJSON *st, const char *name)
{
	char *body;
	int r;

	/* req takes st, whatever happens */
	cJSON_DeleteItemFromObjectCaseSensitive(req, "status");
	if (!cJSON_AddItemToObject(req, "status", st)) {
		cJSON_Delete(st);
		return -ENOMEM;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(req, "apiVersion");
	cJSON_DeleteItemFromObjectCaseSensitive(req, "kind");
	if (!cJSON_AddStringToObject(req, "apiVersion", RPS_GROUP "/" RPS_VERSION) ||
	    !cJSON_AddStringToObject(req, "kind", "ResourcePoolStatusRequest"))
		return -ENOMEM;
	if (!(body = cJSON_PrintUnformatted(req)))
		return -ENOMEM;
	r = kcmd_kube_request(w->ctx->kc,
	                      &(struct kcmd_request){.method = "PUT",
	                                             .group = RPS_GROUP,
	                                             .version = RPS_VERSION,
	                                             .resource = RPS_RESOURCE,
	                                             .name = name,
	                                             .subresource = "status",
	                                             .body = body,
	                                             .body_kind = "ResourcePoolStatusRequest"},
	                      NULL, NULL);
	free(body);
	return r;
}

/* syncRequest: 0 done, -EAGAIN incomplete pools, another -errno a failed write */
static int sync_request(struct rps_worker *w, const char *key)
{
	struct shm_obj *o = NULL;
	struct objs slices = {0}, claims = {0}, rules = {0};
	cJSON *req = NULL, *st = NULL;
	const char *driver, *js;
	char now[KUBE_TIME_BUF], drv[256];
	bool incomplete = false;
	double t0 = now_s();
	size_t len = 0;
	int r;

	r = kcmd_cache_get(w->ctx->arena, RPS_GROUP, RPS_RESOURCE, NULL, key, &o);
	if (r == -ENOENT)
		return 0; /* deleted: nothing to do */
	if (r < 0)
		return r;
	js = kcmd_obj_json(o, &len);
	req = js ? cJSON_ParseWithLength(js, len) : NULL;
	kcmd_obj_free(o);
	if (!req) {
		kcmd_log_warning("ResourcePoolStatusRequest %s: the cached object does not parse, "
		                 "skipped",
		                 key);
		return 0;
	}
	driver = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(req, "spec"), "driver"));
	snprintf(drv, sizeof(drv), "%s", driver ? driver : "");
	if (rps_has_status(req)) {
		kcmd_log_v(4, "Request already processed, skipping request=\"%s\"", key);
		goto out;
	}
	kcmd_log_v(2, "Processing ResourcePoolStatusRequest request=\"%s\" driver=\"%s\"", key,
	           drv);
	kube_time_format(kube_time_now(), now);
	if ((r = list(w, RPS_V1, "resourceslices", &slices)) < 0) {
		char m[128];
		snprintf(m, sizeof(m), "Failed to list ResourceSlices: %s", strerror(-r));
		st = rps_error_status(m, now);
	} else if ((r = list(w, RPS_V1, "resourceclaims", &claims)) < 0) {
		char m[128];
		snprintf(m, sizeof(m), "Failed to list ResourceClaims: %s", strerror(-r));
		st = rps_error_status(m, now);
	} else if (w->rules_enabled && (r = list(w, RPS_V1, "devicetaintrules", &rules)) < 0) {
		char m[128];
		snprintf(m, sizeof(m), "Failed to list DeviceTaintRules: %s", strerror(-r));
		st = rps_error_status(m, now);
	} else {
		struct rps_input in = {.request = req,
		                       .slices = (const cJSON *const *)slices.v,
		                       .n_slices = slices.n,
		                       .claims = (const cJSON *const *)claims.v,
		                       .n_claims = claims.n,
		                       .rules = (const cJSON *const *)rules.v,
		                       .n_rules = rules.n,
		                       .rules_enabled = w->rules_enabled,
		                       .now = now};
		if ((r = rps_calculate(&in, &st, &incomplete)) < 0)
			goto out;
	}
	r = 0;
	if (!st) {
		r = -ENOMEM;
		goto out;
	}
	if (incomplete) {
		r = -EAGAIN;
		goto out;
	}
	if (w->drop && !strncmp(key, w->drop, strlen(w->drop))) {
		kcmd_log_warning("KCMD_TEST_RPSR_DROP: request %s dropped", key);
		goto out;
	}
	int pools = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(st, "pools"));
	r = update_status(w, req, st, key);
	st = NULL; /* req owns it */
	kcmd_metric_inc(w->met, RPS_M_PROCESSED, (const char *[]){drv});
	if (r < 0)
		kcmd_metric_inc(w->met, RPS_M_ERRORS, (const char *[]){drv});
	if (drv[0]) /* upstream observes the duration only with a driver name */
		kcmd_metric_observe(w->met, RPS_M_DURATION, (const char *[]){drv}, now_s() - t0);
	if (r == 0)
		kcmd_log_v(2,
		           "Successfully processed ResourcePoolStatusRequest request=\"%s\" "
		           "poolCount=%d",
		           key, pools);
out:
	cJSON_Delete(st);
	cJSON_Delete(req);
	objs_free(&slices);
	objs_free(&claims);
	objs_free(&rules);
	return r;
}

/* cleanupExpiredRequests */
static void cleanup(struct rps_worker *w)
{
	struct objs reqs = {0};
	kube_time_t now = kube_time_now();
	int deleted = 0;

	if (list(w, RPS_VERSION, RPS_RESOURCE, &reqs) < 0) {
		kcmd_log_error("Failed to list ResourcePoolStatusRequests for cleanup");
		objs_free(&reqs);
		return;
	}
	for (size_t i = 0; i < reqs.n; i++) {
		const cJSON *md = cJSON_GetObjectItemCaseSensitive(reqs.v[i], "metadata");
		const char *name =
		        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "name"));
		const char *uid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "uid"));
		if (!name || !rps_should_delete(reqs.v[i], now))
			continue;
		int r = kcmd_kube_request(w->ctx->kc,
		                          &(struct kcmd_request){.method = "DELETE",
		                                                 .group = RPS_GROUP,
		                                                 .version = RPS_VERSION,
		                                                 .resource = RPS_RESOURCE,
		                                                 .name = name,
		                                                 .precondition_uid = uid},
		                          NULL, NULL);
		if (r < 0) {
			if (r != -ENOENT)
				kcmd_log_error("Failed to delete expired ResourcePoolStatusRequest "
				               "request=\"%s\" err=\"%s\"",
				               name, reason(r));
			continue;
		}
		deleted++;
		kcmd_log_v(2, "Deleted expired ResourcePoolStatusRequest request=\"%s\"", name);
	}
	if (deleted > 0)
		kcmd_log_info("Cleanup completed deletedCount=%d", deleted);
	objs_free(&reqs);
}

static void rps_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct rps_worker *w = state;
	int r;

	(void)q;
	*res = (struct wk_result){0};
	if (!strcmp(key, RPS_CLEANUP_KEY)) {
		cleanup(w);
		res->requeue_after = true;
		res->after_usec = (uint64_t)(RPS_CLEANUP_PERIOD_NS / 1000);
		return;
	}
	r = sync_request(w, key);
	if (r == 0) {
		retry_forget(w, key);
		return;
	}
	const char *why = r == -EAGAIN ? "incomplete pools detected, requeueing" : reason(r);
	if (retry_count(w, key) < RPS_MAX_RETRIES) {
		kcmd_log_error("Error syncing request, requeuing err=\"%s\" request=\"%s\"", why,
		               key);
		res->err = r;
		return;
	}
	kcmd_log_error("Dropping request out of the queue after max retries err=\"%s\" "
	               "request=\"%s\" retries=%d",
	               why, key, RPS_MAX_RETRIES);
	retry_forget(w, key);
}

static const struct wk_controller rps_worker_desc = {
        .name = RPS_CONTROLLER,
        .queues = rps_queue_names,
        .init = rps_init,
        .sync = rps_sync,
        .fini = rps_fini,
};

/* ---- the descriptor ----------------------------------------------------------------------- */
/* kcm's requiredFeatureGates: with DRAResourcePoolStatus off (v1.37's default) the controller
 * does not start, even when named in --controllers; `*` covers it once the gate is on */
static const char *const rps_gates[] = {"DRAResourcePoolStatus", NULL};
static const struct kcmd_watch rps_watches[] = {
        {RPS_GROUP, RPS_VERSION, RPS_RESOURCE, "ResourcePoolStatusRequest", KCMD_CACHE_OBJECT,
         false},
        {RPS_GROUP, RPS_V1, "resourceslices", "ResourceSlice", KCMD_CACHE_OBJECT, false},
        {RPS_GROUP, RPS_V1, "resourceclaims", "ResourceClaim", KCMD_CACHE_OBJECT, true},
        {RPS_GROUP, RPS_V1, "devicetaintrules", "DeviceTaintRule", KCMD_CACHE_OBJECT, false},
};
static const struct kcmd_queue rps_queues[] = {{.name = RPS_QUEUE}};

const struct kcmd_controller kcmd_resourcepoolstatus_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = RPS_CONTROLLER,
        .enabled_by_default = true,
        .feature_gates = rps_gates,
        .service_account = RPS_CONTROLLER,
        .watches = rps_watches,
        .n_watches = sizeof(rps_watches) / sizeof(rps_watches[0]),
        .queues = rps_queues,
        .n_queues = 1,
        .handlers = &rps_handlers,
        .worker = &rps_worker_desc,
        .metrics = rps_metrics,
        .n_metrics = RPS_M_N,
};
