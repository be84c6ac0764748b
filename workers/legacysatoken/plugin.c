/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/legacysatoken/plugin.c: kcm's legacy-serviceaccount-token-cleaner-controller (alias
 * legacy-service-account-token-cleaner), on by default, client
 * "legacy-service-account-token-cleaner" (lsa.h has the behaviour).
 *
 * Shape: upstream's loop runs at start and every 24 h; here one key ("evaluate") queued by the
 * dispatcher's resync (so at start, and again after a dispatcher or informerd restart, as a
 * restarted kcm would) and requeued after 24 h by its sync. Secrets and ServiceAccounts are read
 * from the cache (cached whole); the tracking ConfigMap is read live (as upstream); the pods of
 * a namespace are listed live, once per run and only for a namespace that has a token to decide
 * on (kcmd's typed pod record does not keep the Secret references; upstream reads its pod cache).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "kcmd/kcmd.h"
#include "kube/client.h"
#include "workers/legacysatoken/lsa.h"
#include "workers/worker.h"

/* ---- handlers (kcmd-dispatcher): the one key at start ------------------------------------ */
static void lsa_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	kcmd_queue_add(ctx, 0, LSA_KEY);
}

static const char *const lsa_queue_names[] = {LSA_QUEUE, NULL};
static const struct inf_handler_entry lsa_entries[] = {
        {.group = "", .resource = "secrets"}, /* read by the sync; no event queues anything */
};
static const struct inf_handler_table lsa_handlers = {
        .controller = LSA_CONTROLLER,
        .queues = lsa_queue_names,
        .entries = lsa_entries,
        .n_entries = 1,
        .resync = lsa_resync,
};

/* ---- the sync (kcmd-worker) --------------------------------------------------------------- */
static int64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* the Secret names the pods of one namespace reference (getMountedSecretNames) */
struct ns_names {
	struct ns_names *next;
	char *ns;
	char **names;
	size_t n;
	int err;
};

static void add_name(const char *name, void *ud)
{
	struct ns_names *m = ud;
	char **g = realloc(m->names, (m->n + 1) * sizeof(*g));
	if (!g || !(g[m->n] = strdup(name))) {
		if (g)
			m->names = g;
		m->err = -ENOMEM;
		return;
	}
	m->names = g;
	m->n++;
}

static struct ns_names *mounted(struct wk_ctx *ctx, struct ns_names **all, const char *ns)
{
	struct ns_names *m;
	struct kube_response resp = {0};
	cJSON *list, *pod;

	for (m = *all; m; m = m->next)
		if (!strcmp(m->ns, ns))
			return m;
	if (!(m = calloc(1, sizeof(*m))) || !(m->ns = strdup(ns))) {
		free(m);
		return NULL;
	}
	m->next = *all, *all = m;
	struct kube_request req = {
	        .verb = KUBE_LIST, .version = "v1", .resource = "pods", .ns = ns};
	if ((m->err = kube_client_request(ctx->kc, &req, NULL, NULL, &resp)) == 0) {
		list = cJSON_ParseWithLength(resp.body, resp.body_len);
		cJSON_ArrayForEach(pod, cJSON_GetObjectItemCaseSensitive(list, "items"))
		{
			char *j = cJSON_PrintUnformatted(pod);
			if (j)
				lsa_pod_secret_names(j, strlen(j), add_name, m);
			free(j);
		}
		if (!list)
			m->err = -EBADMSG;
		cJSON_Delete(list);
	}
	kube_response_clear(&resp);
	return m;
}

static bool has_name(const struct ns_names *m, const char *name)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->names[i], name))
			return true;
	return false;
}

struct run {
	struct wk_ctx *ctx;
	int64_t now, period;
	struct ns_names *pods;
	unsigned labelled, deleted;
};

static int evaluate(const struct shm_obj *o, void *ud)
{
	struct run *rn = ud;
	struct wk_ctx *ctx = rn->ctx;
	size_t len = 0, sa_len = 0;
	const char *json = kcmd_obj_json(o, &len), *ns = kcmd_obj_namespace(o),
	           *name = kcmd_obj_name(o);
	char sa_name[256], sa_uid[128], date[11];
	struct shm_obj *sa = NULL;
	int r;

	if (!json || !lsa_candidate(json, len, rn->now, rn->period, sa_name, sizeof(sa_name),
	                            sa_uid, sizeof(sa_uid)))
		return 0;
	if ((r = kcmd_cache_get(ctx->arena, "", "serviceaccounts", ns, sa_name, &sa)) < 0) {
		if (r != -ENOENT)
			kcmd_log_error("Getting service account secret=\"%s/%s\": %s", ns, name,
			               strerror(-r));
		return 0;
	}
	const char *sa_json = kcmd_obj_json(sa, &sa_len);
	bool ref = sa_json && lsa_sa_references(sa_json, sa_len, sa_uid, name);
	kcmd_obj_free(sa);
	if (!ref)
		return 0; /* can't determine if this is an auto-generated token */
	struct ns_names *m = mounted(ctx, &rn->pods, ns);
	if (!m || m->err) {
		kcmd_log_error("Resolving mounted secrets secret=\"%s/%s\": %s", ns, name,
		               strerror(m ? -m->err : ENOMEM));
		return 0;
	}
	if (has_name(m, name))
		return 0; /* still used by pods */
	switch (lsa_final(json, len, rn->now, rn->period, date)) {
	case LSA_LABEL: {
		char *body = NULL;
		kcmd_log_info("Mark the auto-generated service account token as invalid "
		              "invalidSince=\"%s\" secret=\"%s/%s\"",
		              date, ns, name);
		if (asprintf(&body,
		             "{\"kind\":\"Secret\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"%"
		             "s\","
		             "\"namespace\":\"%s\",\"uid\":\"%s\",\"labels\":{\"" LSA_INVALID_SINCE
		             "\":\"%s\"}}}",
		             name, ns, kcmd_obj_uid(o), date) < 0)
			return 0;
		r = kcmd_kube_request(ctx->kc,
		                      &(struct kcmd_request){.method = "PATCH",
		                                             .version = "v1",
		                                             .resource = "secrets",
		                                             .ns = ns,
		                                             .name = name,
		                                             .body = body},
		                      NULL, NULL);
		free(body);
		if (r < 0)
			kcmd_log_error("Failed to label legacy service account token secret with "
			               "invalid since date: %s",
			               kcmd_kube_reason(r) ? kcmd_kube_reason(r) : strerror(-r));
		else
			rn->labelled++;
		return 0;
	}
	case LSA_DELETE: {
		kcmd_log_info("Delete auto-generated service account token secret=\"%s/%s\"", ns,
		              name);
		struct kube_response resp = {0};
		struct kube_request req = {.verb = KUBE_DELETE,
		                           .version = "v1",
		                           .resource = "secrets",
		                           .ns = ns,
		                           .name = name,
		                           .precondition_rv = kcmd_obj_resource_version(o)};
		r = kube_client_request(ctx->kc, &req, NULL, NULL, &resp);
		kube_response_clear(&resp);
		if (r < 0 && r != -ENOENT && r != -ESTALE)
			kcmd_log_error("Deleting legacy service account token secret=\"%s/%s\" "
			               "serviceaccount=\"%s\": %s",
			               ns, name, sa_name, strerror(-r));
		else if (r == 0)
			rn->deleted++;
		return 0;
	}
	case LSA_KEEP:
		return 0;
	}
	return 0;
}

static void lsa_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct wk_ctx *ctx = state;
	struct run rn = {.ctx = ctx, .now = wall_ns()};
	char *cm = NULL;
	int r;

	(void)q;
	(void)key;
	*res = (struct wk_result){.requeue_after = true, .after_usec = LSA_INTERVAL_US};
	rn.period = (int64_t)kcmd_flag_duration_us(ctx->flags,
	                                           "legacy-service-account-token-clean-up-period") *
	            1000;
	if (kcmd_cache_synced(ctx->arena, "", "secrets") != 1 ||
	    kcmd_cache_synced(ctx->arena, "", "serviceaccounts") != 1) {
		res->after_usec = 1000000; /* WaitForCacheSync */
		return;
	}
	r = kcmd_kube_request(ctx->kc,
	                      &(struct kcmd_request){.method = "GET",
	                                             .version = "v1",
	                                             .resource = "configmaps",
	                                             .ns = "kube-system",
	                                             .name = LSA_TRACKING_CM},
	                      NULL, &cm);
	if (r < 0) {
		kcmd_log_error("Getting lastest possible tracked_since time: configmaps \"%s\": %s",
		               LSA_TRACKING_CM,
		               kcmd_kube_reason(r) ? kcmd_kube_reason(r) : strerror(-r));
		free(cm);
		return;
	}
	r = lsa_tracking_ready(cm, strlen(cm), rn.now, rn.period);
	free(cm);
	if (r < 0) {
		kcmd_log_error(
		        "Getting lastest possible tracked_since time: configMap does not have "
		        "a well-formed since date");
		return;
	}
	if (r == 0)
		return; /* we haven't been tracking long enough */
	kcmd_cache_list(ctx->arena, "", "secrets", NULL, evaluate, &rn);
	kcmd_log_v(2, "legacy service account tokens evaluated: %u labelled, %u deleted",
	           rn.labelled, rn.deleted);
	while (rn.pods) {
		struct ns_names *m = rn.pods;
		rn.pods = m->next;
		for (size_t i = 0; i < m->n; i++)
			free(m->names[i]);
		free(m->names);
		free(m->ns);
		free(m);
	}
}

static int lsa_init(struct wk_ctx *ctx, void **ret_state)
{
	*ret_state = ctx;
	return 0;
}

static const struct wk_controller lsa_worker = {
        .name = LSA_CONTROLLER,
        .queues = lsa_queue_names,
        .init = lsa_init,
        .sync = lsa_sync,
};

/* kcm: NewLegacySATokenCleaner refuses a period that is not > 0, and kcm does not start */
static int lsa_precheck(const struct kcmd_flag_values *v, const struct kube_config *kcfg, char *err,
                        size_t errlen)
{
	(void)kcfg;
	if (kcmd_flag_duration_us(v, "legacy-service-account-token-clean-up-period") > 0)
		return 0;
	snprintf(err, errlen,
	         "error creating legacy-serviceaccount-token-cleaner-controller: invalid "
	         "CleanUpPeriod: 0s");
	return -EINVAL;
}

/* ---- the descriptor ----------------------------------------------------------------------- */
static const char *const lsa_aliases[] = {"legacy-service-account-token-cleaner", NULL};
static const struct kcmd_watch lsa_watches[] = {
        {"", "v1", "secrets", "Secret", KCMD_CACHE_OBJECT, true},
        {"", "v1", "serviceaccounts", "ServiceAccount", KCMD_CACHE_OBJECT, true},
};
static const struct kcmd_queue lsa_queues[] = {{.name = LSA_QUEUE}};
static const struct kcmd_flag lsa_flags[] = {
        {.name = "legacy-service-account-token-clean-up-period",
         .type = KCMD_FLAG_DURATION,
         .def = "8760h0m0s",
         .help = "The period of time since the last usage of an legacy service account token "
                 "before it can be deleted."},
};

const struct kcmd_controller kcmd_legacy_sa_token_cleaner_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = LSA_CONTROLLER,
        .aliases = lsa_aliases,
        .enabled_by_default = true,
        .service_account = "legacy-service-account-token-cleaner",
        .cluster_scoped_keys = true, /* its one key is no namespace/name */
        .watches = lsa_watches,
        .n_watches = sizeof(lsa_watches) / sizeof(lsa_watches[0]),
        .queues = lsa_queues,
        .n_queues = 1,
        .flags = lsa_flags,
        .n_flags = sizeof(lsa_flags) / sizeof(lsa_flags[0]),
        .mgr_precheck = lsa_precheck,
        .handlers = &lsa_handlers,
        .worker = &lsa_worker,
};
