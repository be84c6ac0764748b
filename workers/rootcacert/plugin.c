/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/rootcacert/plugin.c: kcm's root-ca-certificate-publisher-controller (alias
 * root-ca-cert-publisher), on by default, client "root-ca-cert-publisher": the ConfigMap
 * kube-root-ca.crt in every namespace (rootca.h).
 *
 * Shape: namespaces and ConfigMaps are cached whole (a namespace's phase, a ConfigMap's data and
 * annotations decide). One worker process (kcm runs this controller with one worker and has no
 * flag for it). --root-ca-file is checked by the manager before anything starts (kcm refuses to
 * start on a file that does not parse) and read by the worker when it starts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "kcmd/kcmd.h"
#include "kube/config.h"
#include "shm/record-model.h"
#include "workers/rootcacert/rootca.h"
#include "workers/worker.h"

/* ---- handlers (kcmd-dispatcher) ----------------------------------------------------------- */
/* status.phase of a cached namespace into buf; "" when unknown */
static void namespace_phase(struct shm_arena *a, const char *name, char *buf, size_t len)
{
	struct shm_obj *o = NULL;
	struct shm_object_view v;

	buf[0] = 0;
	if (kcmd_cache_get(a, "", "namespaces", NULL, name, &o) < 0)
		return;
	if (shm_object_view_init(o, &v) == 0) {
		cJSON *j = cJSON_ParseWithLength(v.o.raw, v.o.raw_len);
		const cJSON *ph = cJSON_GetObjectItemCaseSensitive(
		        cJSON_GetObjectItemCaseSensitive(j, "status"), "phase");
		if (cJSON_IsString(ph))
			snprintf(buf, len, "%s", ph->valuestring);
		cJSON_Delete(j);
	}
	shm_object_view_free(&v);
	free(o);
}

static void on_namespace_add(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	if (ev->meta)
		kcmd_queue_add(ctx, 0, kcmd_meta_name(ev->meta));
}

static void on_namespace_update(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	char phase[64];

	if (!ev->meta)
		return;
	/* the arena already holds this version (the feed is published after the write) */
	namespace_phase(ctx->arena, kcmd_meta_name(ev->meta), phase, sizeof(phase));
	if (rc_namespace_update_wanted(phase))
		kcmd_queue_add(ctx, 0, kcmd_meta_name(ev->meta));
}

static void on_configmap(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	const char *name = ev->meta ? kcmd_meta_name(ev->meta) : kcmd_obj_name(ev->old);
	const char *ns = ev->meta ? kcmd_meta_namespace(ev->meta) : kcmd_obj_namespace(ev->old);

	if (name && ns && *ns && strcmp(name, RC_CONFIGMAP) == 0)
		kcmd_queue_add(ctx, 0, ns);
}

static int add_namespace(const struct shm_obj *o, void *ud)
{
	kcmd_queue_add(ud, 0, kcmd_obj_name(o));
	return 0;
}

/* the informer's initial list delivers an add per namespace: the same from the arena */
static void rc_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	kcmd_cache_list(ctx->arena, "", "namespaces", NULL, add_namespace, ctx);
}

static const char *const rc_queue_names[] = {RC_QUEUE, NULL};
static const struct inf_handler_entry rc_entries[] = {
        {.group = "",
         .resource = "namespaces",
         .on_add = on_namespace_add,
         .on_update = on_namespace_update},
        {.group = "",
         .resource = "configmaps",
         .on_update = on_configmap,
         .on_delete = on_configmap},
};
static const struct inf_handler_table rc_handlers = {
        .controller = RC_CONTROLLER,
        .queues = rc_queue_names,
        .entries = rc_entries,
        .n_entries = sizeof(rc_entries) / sizeof(rc_entries[0]),
        .resync = rc_resync,
};

static int rc_precheck(const struct kcmd_flag_values *v, const struct kube_config *kcfg, char *err,
                       size_t errlen)
{
	char *ca = NULL;
	int r = rc_load_root_ca(kcmd_flag_string(v, "root-ca-file"), kcfg, &ca, err, errlen);

	free(ca);
	return r < 0 ? -EEXIST : 0; /* kcm does not start */
}

/* ---- sync (kcmd-worker) ------------------------------------------------------------------- */
struct rc_state {
	struct wk_ctx *ctx;
	char *ca;
	struct kcmd_metrics *metrics; /* NULL: not passed (no metrics) */
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int rc_init(struct wk_ctx *ctx, void **ret_state)
{
	struct rc_state *s = calloc(1, sizeof(*s));
	char err[512];
	int r;

	if (!s)
		return -ENOMEM;
	s->ctx = ctx;
	s->metrics = kcmd_metrics_get(); /* NULL without KCMD_METRICS_FD: not recorded */
	r = rc_load_root_ca(kcmd_flag_string(ctx->flags, "root-ca-file"), ctx->config, &s->ca, err,
	                    sizeof(err));
	if (r < 0) {
		kcmd_log_error("%s", err);
		free(s);
		return r;
	}
	*ret_state = s;
	return 0;
}

static void rc_fini(void *state)
{
	struct rc_state *s = state;

	if (s) {
		free(s->ca);
	}
	free(s);
}

static const char *reason(int r)
{
	return kcmd_kube_reason(r) ? kcmd_kube_reason(r) : strerror(-r);
}

static void rc_sync_ns(struct rc_state *s, const char *key, struct wk_result *res, int *http)
{
	struct wk_ctx *ctx = s->ctx;
	struct shm_obj *o = NULL;
	struct shm_object_view v;
	char *body = NULL;
	int r;

	*res = (struct wk_result){0};
	r = kcmd_cache_get(ctx->arena, "", "configmaps", key, RC_CONFIGMAP, &o);
	if (r == -ENOENT) {
		if ((r = rc_create_body(s->ca, &body)) == 0)
			r = kcmd_kube_request(ctx->kc,
			                      &(struct kcmd_request){.method = "POST",
			                                             .version = "v1",
			                                             .resource = "configmaps",
			                                             .ns = key,
			                                             .body = body,
			                                             .body_kind = "ConfigMap"},
			                      http, NULL);
		if (r == 0)
			kcmd_log_v(2, "created configmap %s/%s", key, RC_CONFIGMAP);
		if ((res->err = rc_create_result(r)) < 0)
			kcmd_log_warning("syncing \"%s\" failed: creating %s: %s", key,
			                 RC_CONFIGMAP, reason(r));
		free(body);
		return;
	}
	if (r < 0) {
		res->err = r;
		return;
	}
	r = shm_object_view_init(o, &v);
	free(o);
	if (r == 0)
		r = rc_update_body(v.o.raw, v.o.raw_len, s->ca, &body);
	shm_object_view_free(&v);
	if (r == 0 && body) {
		r = kcmd_kube_request(ctx->kc,
		                      &(struct kcmd_request){.method = "PUT",
		                                             .version = "v1",
		                                             .resource = "configmaps",
		                                             .ns = key,
		                                             .name = RC_CONFIGMAP,
		                                             .body = body,
		                                             .body_kind = "ConfigMap"},
		                      http, NULL);
		if (r == 0)
			kcmd_log_v(2, "updated configmap %s/%s", key, RC_CONFIGMAP);
	}
	if (r < 0)
		kcmd_log_warning("syncing \"%s\" failed: %s", key, reason(r));
	free(body);
	res->err = r;
}

static void rc_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct rc_state *s = state;
	uint64_t t0 = now_ns();
	int http = 0;

	(void)q;
	rc_sync_ns(s, key, res, &http);
	/* recordMetrics: the code of the error the sync returns */
	rc_metrics_observe(s->metrics, rc_metrics_code(res->err, res->err ? http : 0),
	                   now_ns() - t0);
}

static const struct wk_controller rc_worker = {
        .name = RC_CONTROLLER,
        .queues = rc_queue_names,
        .init = rc_init,
        .sync = rc_sync,
        .fini = rc_fini,
};

/* ---- the descriptor ----------------------------------------------------------------------- */
static const char *const rc_aliases[] = {"root-ca-cert-publisher", NULL};
static const struct kcmd_watch rc_watches[] = {
        {"", "v1", "namespaces", "Namespace", KCMD_CACHE_OBJECT, false},
        {"", "v1", "configmaps", "ConfigMap", KCMD_CACHE_OBJECT, true},
};
static const struct kcmd_queue rc_queues[] = {{.name = RC_QUEUE}};
static const struct kcmd_flag rc_flags[] = {
        {.name = "root-ca-file",
         .type = KCMD_FLAG_STRING,
         .def = "",
         .help = "If set, this root certificate authority will be included in service account's "
                 "token secret. This must be a valid PEM-encoded CA bundle."},
};

const struct kcmd_controller kcmd_rootcacert_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = RC_CONTROLLER,
        .aliases = rc_aliases,
        .enabled_by_default = true,
        .service_account = "root-ca-cert-publisher",
        .cluster_scoped_keys = true, /* its keys are namespace names */
        .watches = rc_watches,
        .n_watches = sizeof(rc_watches) / sizeof(rc_watches[0]),
        .queues = rc_queues,
        .n_queues = 1,
        .flags = rc_flags,
        .n_flags = sizeof(rc_flags) / sizeof(rc_flags[0]),
        .mgr_precheck = rc_precheck,
        .handlers = &rc_handlers,
        .worker = &rc_worker,
        .metrics = rc_metric_decl,
        .n_metrics = RC_M_N,
};
