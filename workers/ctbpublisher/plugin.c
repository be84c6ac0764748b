/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/ctbpublisher/plugin.c: kcm's kube-apiserver-serving-clustertrustbundle-publisher-
 * controller (no alias), on by default with the ClusterTrustBundle gate (GA in v1.37), client
 * "kube-apiserver-serving-clustertrustbundle-publisher" (ctb.h has the behaviour;
 * docs/ctbpublisher.md).
 *
 * Shape: ClusterTrustBundles (certificates.k8s.io/v1) cached whole; every event of a bundle of
 * the signer queues the one key, as does the dispatcher's resync (the start); one worker. The
 * root CA is loaded as the root CA publisher loads it (rootca.h); an empty one leaves the
 * controller off (mgr_precheck -ECANCELED), as kcm. Upstream's informer selects the signer
 * with a field selector; kcmd's cache holds every bundle and the sync filters by signer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kcmd/kcmd.h"
#include "workers/ctbpublisher/ctb.h"
#include "workers/rootcacert/rootca.h"
#include "workers/worker.h"

_Static_assert((int)CTB_M_DURATION == (int)RC_M_DURATION && (int)CTB_M_SYNCS == (int)RC_M_SYNCS,
               "rc_metrics_observe writes the ClusterTrustBundle publisher's families");

#define CTB_GROUP    "certificates.k8s.io"
#define CTB_RESOURCE "clustertrustbundles"

/* ---- handlers (kcmd-dispatcher) ----------------------------------------------------------- */
static void on_bundle(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	size_t len = 0;
	const char *json = ev->meta ? kcmd_event_json(ev, &len)
	                            : (ev->old ? kcmd_obj_json(ev->old, &len) : NULL);
	struct ctb_facts f;

	/* the field selector upstream's informer has */
	if (json && ctb_facts(json, len, "", &f) == 0 && !strcmp(f.signer, CTB_SIGNER))
		kcmd_queue_add(ctx, 0, CTB_KEY);
}

static void ctb_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	kcmd_queue_add(ctx, 0, CTB_KEY);
}

static const char *const ctb_queue_names[] = {CTB_QUEUE, NULL};
static const struct inf_handler_entry ctb_entries[] = {
        {.group = CTB_GROUP,
         .resource = CTB_RESOURCE,
         .on_add = on_bundle,
         .on_update = on_bundle,
         .on_delete = on_bundle},
};
static const struct inf_handler_table ctb_handlers = {
        .controller = CTB_CONTROLLER,
        .queues = ctb_queue_names,
        .entries = ctb_entries,
        .n_entries = 1,
        .resync = ctb_resync,
};

/* ---- start-up ----------------------------------------------------------------------------- */
static int ctb_precheck(const struct kcmd_flag_values *v, const struct kube_config *kcfg, char *err,
                        size_t errlen)
{
	char *ca = NULL;
	int r = rc_load_root_ca(kcmd_flag_string(v, "root-ca-file"), kcfg, &ca, err, errlen);

	if (r < 0)
		return -EEXIST; /* kcm does not start */
	if (!*ca)
		r = -ECANCELED, snprintf(err, errlen,
		                         "%s is disabled: no root CA (--root-ca-file, or the "
		                         "kubeconfig's certificate-authority-data)",
		                         CTB_CONTROLLER);
	free(ca);
	return r;
}

/* ---- sync (kcmd-worker) ------------------------------------------------------------------- */
struct ctb_state {
	struct wk_ctx *ctx;
	char *ca;
	char name[128];
	struct kcmd_metrics *metrics;
	uint64_t started_ns;
	bool told_unserved;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int ctb_init(struct wk_ctx *ctx, void **ret_state)
{
	struct ctb_state *s = calloc(1, sizeof(*s));
	char err[512];
	int r;

	if (!s)
		return -ENOMEM;
	s->ctx = ctx;
	s->metrics = kcmd_metrics_get();
	s->started_ns = now_ns();
	r = rc_load_root_ca(kcmd_flag_string(ctx->flags, "root-ca-file"), ctx->config, &s->ca, err,
	                    sizeof(err));
	if (r < 0) {
		kcmd_log_error("%s", err);
		free(s);
		return r;
	}
	ctb_bundle_name(CTB_SIGNER, s->ca, strlen(s->ca), s->name);
	*ret_state = s;
	return 0;
}

static void ctb_fini(void *state)
{
	struct ctb_state *s = state;

	if (s)
		free(s->ca);
	free(s);
}

static const char *reason(int r)
{
	return kcmd_kube_reason(r) ? kcmd_kube_reason(r) : strerror(-r);
}

static int request(struct ctb_state *s, const char *method, const char *name, const char *body,
                   int *http)
{
	return kcmd_kube_request(s->ctx->kc,
	                         &(struct kcmd_request){.method = method,
	                                                .group = CTB_GROUP,
	                                                .version = "v1",
	                                                .resource = CTB_RESOURCE,
	                                                .name = name,
	                                                .body = body,
	                                                .body_kind = "ClusterTrustBundle"},
	                         http, NULL);
}

struct others {
	struct ctb_state *s;
	int err, http;
};

static int delete_other(const struct shm_obj *o, void *ud)
{
	struct others *d = ud;
	size_t len = 0;
	const char *json = kcmd_obj_json(o, &len);
	struct ctb_facts f;
	int http = 0, r;

	if (!json || ctb_facts(json, len, "", &f) < 0 || strcmp(f.signer, CTB_SIGNER) ||
	    !strcmp(f.name, d->s->name))
		return 0;
	r = request(d->s, "DELETE", f.name, NULL, &http);
	if (r < 0 && r != -ENOENT) {
		kcmd_log_error("failed to remove a cluster trust bundle bundleName=\"%s\": %s",
		               f.name, reason(r));
		d->err = r, d->http = http;
	}
	return 0;
}

static int sync_bundle(struct ctb_state *s, int *http)
{
	struct shm_obj *o = NULL;
	char *body = NULL;
	int r = kcmd_cache_get(s->ctx->arena, CTB_GROUP, CTB_RESOURCE, NULL, s->name, &o);

	if (r == -ENOENT) {
		if ((r = ctb_create_body(s->name, CTB_SIGNER, s->ca, &body)) == 0)
			r = request(s, "POST", NULL, body, http);
	} else if (r == 0) {
		size_t len = 0;
		const char *json = kcmd_obj_json(o, &len);
		struct ctb_facts f;
		r = json ? ctb_facts(json, len, s->ca, &f) : -EBADMSG;
		if (r == 0 && !f.same_bundle && (r = ctb_update_body(json, len, s->ca, &body)) == 0)
			r = request(s, "PUT", s->name, body, http);
	}
	kcmd_obj_free(o);
	free(body);
	if (r < 0)
		return r;
	struct others d = {.s = s};
	kcmd_cache_list(s->ctx->arena, CTB_GROUP, CTB_RESOURCE, NULL, delete_other, &d);
	*http = d.http;
	return d.err;
}

static void ctb_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct ctb_state *s = state;
	uint64_t t0 = now_ns();
	int http = 0, r;

	(void)q;
	*res = (struct wk_result){0};
	r = kcmd_cache_synced(s->ctx->arena, CTB_GROUP, CTB_RESOURCE);
	if (r < 0 && now_ns() - s->started_ns < 30000000000ull) {
		/* not in the cache yet: informerd may still be starting its watch */
		*res = (struct wk_result){.requeue_after = true, .after_usec = 1000000};
		return;
	}
	if (r < 0) {
		/* kcm: discovery found no served version; the controller does not run (kcmd
		 * looks again every minute, in case the API is turned on later) */
		if (!s->told_unserved)
			kcmd_log_info("no known scheme version was found for clustertrustbundles, "
			              "cannot start %s",
			              CTB_CONTROLLER);
		s->told_unserved = true;
		*res = (struct wk_result){.requeue_after = true, .after_usec = 60000000};
		return;
	}
	if (r != 1) {
		*res = (struct wk_result){.requeue_after = true, .after_usec = 1000000};
		return;
	}
	r = sync_bundle(s, &http);
	if (r < 0)
		kcmd_log_warning("syncing \"%s\" failed: %s", key, reason(r));
	else
		kcmd_log_v(4, "Finished syncing ClusterTrustBundle signerName=\"%s\"", CTB_SIGNER);
	res->err = r;
	rc_metrics_observe(s->metrics, rc_metrics_code(r, http), now_ns() - t0);
}

static const struct wk_controller ctb_worker = {
        .name = CTB_CONTROLLER,
        .queues = ctb_queue_names,
        .init = ctb_init,
        .sync = ctb_sync,
        .fini = ctb_fini,
};

/* ---- the descriptor ----------------------------------------------------------------------- */
/* kcm's requiredFeatureGates; GA in v1.37 and not among the gates kcm's --help offers */
static const char *const ctb_gates[] = {"ClusterTrustBundle", NULL};
static const struct kcmd_watch ctb_watches[] = {
        {CTB_GROUP, "v1", CTB_RESOURCE, "ClusterTrustBundle", KCMD_CACHE_OBJECT, false},
};
static const struct kcmd_queue ctb_queues[] = {{.name = CTB_QUEUE}};
static const struct kcmd_flag ctb_flags[] = {
        {.name = "root-ca-file",
         .type = KCMD_FLAG_STRING,
         .def = "",
         .help = "If set, this root certificate authority will be included in service account's "
                 "token secret. This must be a valid PEM-encoded CA bundle."},
};

const struct kcmd_controller kcmd_ctbpublisher_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = CTB_CONTROLLER,
        .enabled_by_default = true,
        .feature_gates = ctb_gates,
        .service_account = "kube-apiserver-serving-clustertrustbundle-publisher",
        .cluster_scoped_keys = true,
        .watches = ctb_watches,
        .n_watches = sizeof(ctb_watches) / sizeof(ctb_watches[0]),
        .queues = ctb_queues,
        .n_queues = 1,
        .flags = ctb_flags,
        .n_flags = sizeof(ctb_flags) / sizeof(ctb_flags[0]),
        .mgr_precheck = ctb_precheck,
        .handlers = &ctb_handlers,
        .worker = &ctb_worker,
        .metrics = ctb_metric_decl,
        .n_metrics = CTB_M_N,
};
