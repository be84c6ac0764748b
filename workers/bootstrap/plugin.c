/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/bootstrap/plugin.c: kcm's token-cleaner-controller (alias tokencleaner) and
 * bootstrap-signer-controller (alias bootstrapsigner), both off by default, clients
 * "token-cleaner" and "bootstrap-signer" (bootstrap.h has the behaviour).
 *
 * Shape: Secrets and ConfigMaps cached whole (the tokens' data and cluster-info's data decide).
 * One worker process each (kcm runs one worker each and has no flag for them). The signer's one
 * key is kube-public/cluster-info, queued by any change of it or of a token Secret; it waits
 * until both resources are listed before it signs (upstream's WaitForCacheSync), so a token not
 * yet seen never loses its signature.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kcmd/kcmd.h"
#include "workers/bootstrap/bootstrap.h"
#include "workers/worker.h"

static int64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- handlers (kcmd-dispatcher) ----------------------------------------------------------- */
/* An event's Secret JSON: the new object's, or a tombstone's last version. */
static const char *event_json(const struct inf_event *ev, size_t *len)
{
	const char *j = kcmd_event_json(ev, len);
	if (!j && ev->old)
		j = kcmd_obj_json(ev->old, len);
	return j;
}

static void cleaner_on_secret(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	size_t len = 0;
	const char *j = event_json(ev, &len);
	char key[512];

	if (!ev->meta || !j || !bt_is_token_secret(j, len))
		return;
	snprintf(key, sizeof(key), "%s/%s", kcmd_meta_namespace(ev->meta),
	         kcmd_meta_name(ev->meta));
	kcmd_queue_add(ctx, 0, key);
}

static int cleaner_add_cached(const struct shm_obj *o, void *ud)
{
	size_t len = 0;
	const char *j = kcmd_obj_json(o, &len);
	char key[512];

	if (j && bt_is_token_secret(j, len)) {
		snprintf(key, sizeof(key), "%s/%s", kcmd_obj_namespace(o), kcmd_obj_name(o));
		kcmd_queue_add(ud, 0, key);
	}
	return 0;
}

/* the informer's initial list delivers an add per Secret: the same from the arena */
static void cleaner_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	kcmd_cache_list(ctx->arena, "", "secrets", BT_NAMESPACE, cleaner_add_cached, ctx);
}

static const char *const cleaner_queue_names[] = {BT_CLEANER_QUEUE, NULL};
static const struct inf_handler_entry cleaner_entries[] = {
        {.group = "",
         .resource = "secrets",
         .on_add = cleaner_on_secret,
         .on_update = cleaner_on_secret},
};
static const struct inf_handler_table cleaner_handlers = {
        .controller = BT_CLEANER_CONTROLLER,
        .queues = cleaner_queue_names,
        .entries = cleaner_entries,
        .n_entries = 1,
        .resync = cleaner_resync,
};

static void poke_signer(struct inf_handler_ctx *ctx)
{
	kcmd_queue_add(ctx, 0, BT_CM_NAMESPACE "/" BT_CM_NAME);
}

static void signer_on_configmap(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	const char *ns = ev->meta ? kcmd_meta_namespace(ev->meta) : NULL,
	           *name = ev->meta ? kcmd_meta_name(ev->meta) : NULL;
	if (ns && name && !strcmp(ns, BT_CM_NAMESPACE) && !strcmp(name, BT_CM_NAME))
		poke_signer(ctx);
}

static void signer_on_secret(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	size_t len = 0;
	const char *j = event_json(ev, &len);

	if (j && bt_is_token_secret(j, len))
		poke_signer(ctx);
}

static void signer_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	poke_signer(ctx);
}

static const char *const signer_queue_names[] = {BT_SIGNER_QUEUE, NULL};
static const struct inf_handler_entry signer_entries[] = {
        {.group = "",
         .resource = "configmaps",
         .on_add = signer_on_configmap,
         .on_update = signer_on_configmap},
        {.group = "",
         .resource = "secrets",
         .on_add = signer_on_secret,
         .on_update = signer_on_secret,
         .on_delete = signer_on_secret},
};
static const struct inf_handler_table signer_handlers = {
        .controller = BT_SIGNER_CONTROLLER,
        .queues = signer_queue_names,
        .entries = signer_entries,
        .n_entries = sizeof(signer_entries) / sizeof(signer_entries[0]),
        .resync = signer_resync,
};

/* ---- syncs (kcmd-worker) ------------------------------------------------------------------ */
static int bt_init(struct wk_ctx *ctx, void **ret_state)
{
	*ret_state = ctx;
	return 0;
}

static const char *reason(int r)
{
	return kcmd_kube_reason(r) ? kcmd_kube_reason(r) : strerror(-r);
}

/* syncFunc + evalSecret */
static void cleaner_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct wk_ctx *ctx = state;
	struct shm_obj *o = NULL;
	char ns[256], *slash;
	const char *json;
	size_t len = 0;
	int64_t ttl = 0;
	int r;

	(void)q;
	*res = (struct wk_result){0};
	snprintf(ns, sizeof(ns), "%s", key);
	if (!(slash = strchr(ns, '/')))
		return; /* not a key of this controller */
	*slash = 0;
	if ((r = kcmd_cache_get(ctx->arena, "", "secrets", ns, slash + 1, &o)) == -ENOENT) {
		kcmd_log_v(3, "Secret has been deleted secret=\"%s\"", key);
		return;
	}
	if (r < 0) {
		res->err = r;
		return;
	}
	json = kcmd_obj_json(o, &len);
	if (!json || !bt_is_token_secret(json, len)) {
		kcmd_obj_free(o);
		return;
	}
	r = bt_expiration(json, len, wall_ns(), &ttl);
	if (r == 1) {
		kcmd_log_v(3, "Deleting expired secret secret=\"%s\"", key);
		r = kcmd_kube_request(ctx->kc,
		                      &(struct kcmd_request){.method = "DELETE",
		                                             .version = "v1",
		                                             .resource = "secrets",
		                                             .ns = ns,
		                                             .name = slash + 1,
		                                             .precondition_uid = kcmd_obj_uid(o)},
		                      NULL, NULL);
		/* NotFound: already deleted; Conflict: the UID precondition failed */
		if (r < 0 && r != -ENOENT && r != -ESTALE)
			kcmd_log_v(3, "Error deleting secret err=\"%s\"", reason(r));
	} else if (r == 0 && ttl > 0) {
		res->requeue_after = true;
		res->after_usec = (uint64_t)((ttl + 999) / 1000);
	}
	kcmd_obj_free(o);
}

struct collect {
	struct bt_token *t;
	size_t n, cap;
	int64_t now;
	int err;
};

static int collect_token(const struct shm_obj *o, void *ud)
{
	struct collect *c = ud;
	size_t len = 0;
	const char *json = kcmd_obj_json(o, &len);
	struct bt_token t = {0};
	int r;

	if (!json)
		return 0;
	if ((r = bt_signing_token(json, len, c->now, &t.id, &t.secret, &t.secret_len)) < 0) {
		c->err = r;
		return r;
	}
	if (r == 0)
		return 0;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 8;
		struct bt_token *g = realloc(c->t, cap * sizeof(*g));
		if (!g) {
			free(t.id);
			explicit_bzero(t.secret, t.secret_len);
			free(t.secret);
			c->err = -ENOMEM;
			return -ENOMEM;
		}
		c->t = g, c->cap = cap;
	}
	c->t[c->n++] = t;
	return 0;
}

/* signConfigMap */
static void signer_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct wk_ctx *ctx = state;
	struct collect c = {.now = wall_ns()};
	struct shm_obj *o = NULL;
	char *body = NULL;
	const char *json;
	size_t len = 0;
	int r;

	(void)q;
	(void)key;
	*res = (struct wk_result){0};
	if (kcmd_cache_synced(ctx->arena, "", "secrets") != 1 ||
	    kcmd_cache_synced(ctx->arena, "", "configmaps") != 1) {
		res->requeue_after = true; /* WaitForCacheSync */
		res->after_usec = 1000000;
		return;
	}
	if ((r = kcmd_cache_get(ctx->arena, "", "configmaps", BT_CM_NAMESPACE, BT_CM_NAME, &o)) <
	    0) {
		if (r != -ENOENT)
			res->err = r;
		return;
	}
	json = kcmd_obj_json(o, &len);
	if ((r = kcmd_cache_list(ctx->arena, "", "secrets", BT_NAMESPACE, collect_token, &c)) >=
	            0 &&
	    json)
		r = bt_sign_plan(json, len, c.t, c.n, &body);
	if (r >= 0 && body) {
		r = kcmd_kube_request(ctx->kc,
		                      &(struct kcmd_request){.method = "PUT",
		                                             .version = "v1",
		                                             .resource = "configmaps",
		                                             .ns = BT_CM_NAMESPACE,
		                                             .name = BT_CM_NAME,
		                                             .body = body,
		                                             .body_kind = "ConfigMap"},
		                      NULL, NULL);
		if (r == 0)
			kcmd_log_v(2, "signed configmap %s/%s with %zu token(s)", BT_CM_NAMESPACE,
			           BT_CM_NAME, c.n);
		else if (r != -ESTALE && r != -ENOENT)
			kcmd_log_v(3, "Error updating ConfigMap err=\"%s\"", reason(r));
	} else if (r < 0) {
		kcmd_log_error("signing %s/%s: %s", BT_CM_NAMESPACE, BT_CM_NAME, strerror(-r));
	}
	/* upstream does not retry: the next change of the ConfigMap or of a token signs again */
	for (size_t i = 0; i < c.n; i++) {
		free(c.t[i].id);
		explicit_bzero(c.t[i].secret, c.t[i].secret_len);
		free(c.t[i].secret);
	}
	free(c.t);
	free(body);
	kcmd_obj_free(o);
}

static const struct wk_controller cleaner_worker = {
        .name = BT_CLEANER_CONTROLLER,
        .queues = cleaner_queue_names,
        .init = bt_init,
        .sync = cleaner_sync,
};

static const struct wk_controller signer_worker = {
        .name = BT_SIGNER_CONTROLLER,
        .queues = signer_queue_names,
        .init = bt_init,
        .sync = signer_sync,
};

/* ---- the descriptors ---------------------------------------------------------------------- */
static const char *const cleaner_aliases[] = {"tokencleaner", NULL};
static const char *const signer_aliases[] = {"bootstrapsigner", NULL};
static const struct kcmd_watch secret_watch[] = {
        {"", "v1", "secrets", "Secret", KCMD_CACHE_OBJECT, true},
};
static const struct kcmd_watch signer_watches[] = {
        {"", "v1", "configmaps", "ConfigMap", KCMD_CACHE_OBJECT, true},
        {"", "v1", "secrets", "Secret", KCMD_CACHE_OBJECT, true},
};
static const struct kcmd_queue cleaner_queues[] = {{.name = BT_CLEANER_QUEUE}};
static const struct kcmd_queue signer_queues[] = {{.name = BT_SIGNER_QUEUE}};

const struct kcmd_controller kcmd_token_cleaner_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = BT_CLEANER_CONTROLLER,
        .aliases = cleaner_aliases,
        .enabled_by_default = false,
        .service_account = "token-cleaner",
        .watches = secret_watch,
        .n_watches = 1,
        .queues = cleaner_queues,
        .n_queues = 1,
        .handlers = &cleaner_handlers,
        .worker = &cleaner_worker,
};

const struct kcmd_controller kcmd_bootstrap_signer_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = BT_SIGNER_CONTROLLER,
        .aliases = signer_aliases,
        .enabled_by_default = false,
        .service_account = "bootstrap-signer",
        .watches = signer_watches,
        .n_watches = sizeof(signer_watches) / sizeof(signer_watches[0]),
        .queues = signer_queues,
        .n_queues = 1,
        .handlers = &signer_handlers,
        .worker = &signer_worker,
};
