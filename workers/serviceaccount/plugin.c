/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/serviceaccount/plugin.c: kcm's serviceaccount-controller (alias serviceaccount), on
 * by default, client "service-account-controller": the `default` ServiceAccount in every Active
 * namespace (sa.h).
 *
 * Shape: namespaces are cached whole (their status.phase decides), ServiceAccounts
 * metadata-only (only their names are read). The handlers queue a namespace's name on its add
 * and every update (upstream's namespaceAdded/namespaceUpdated) and on the deletion of any
 * ServiceAccount in it (serviceAccountDeleted); one worker process (kcm runs this controller
 * with one worker, and has no flag for it) syncs a key: the namespace's phase from the arena,
 * then each account to ensure from the arena, and a create for each one missing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcmd/kcmd.h"
#include "shm/record-model.h"
#include "workers/serviceaccount/sa.h"
#include "workers/worker.h"

/* ---- handlers (kcmd-dispatcher) ----------------------------------------------------------- */
static void on_namespace(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	if (ev->meta)
		kcmd_queue_add(ctx, 0, kcmd_meta_name(ev->meta));
}

static void on_sa_delete(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	const char *ns = ev->old ? kcmd_obj_namespace(ev->old) : NULL;

	if (ns && *ns)
		kcmd_queue_add(ctx, 0, ns);
}

static int add_namespace(const struct shm_obj *o, void *ud)
{
	kcmd_queue_add(ud, 0, kcmd_obj_name(o));
	return 0;
}

/* the informer's initial list delivers an add per namespace: the same from the arena */
static void sa_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	kcmd_cache_list(ctx->arena, "", "namespaces", NULL, add_namespace, ctx);
}

static const char *const sa_queue_names[] = {SA_QUEUE, NULL};
static const struct inf_handler_entry sa_entries[] = {
        {.group = "", .resource = "namespaces", .on_add = on_namespace, .on_update = on_namespace},
        {.group = "", .resource = "serviceaccounts", .on_delete = on_sa_delete},
};
static const struct inf_handler_table sa_handlers = {
        .controller = SA_CONTROLLER,
        .queues = sa_queue_names,
        .entries = sa_entries,
        .n_entries = sizeof(sa_entries) / sizeof(sa_entries[0]),
        .resync = sa_resync,
};

/* ---- sync (kcmd-worker) ------------------------------------------------------------------- */
/* The namespace's status.phase from the arena: 0, -ENOENT (not cached), or another -errno. */
static int namespace_phase(struct shm_arena *a, const char *name, char *phase, size_t len)
{
	struct shm_obj *o = NULL;
	struct shm_object_view v;
	int r;

	if ((r = kcmd_cache_get(a, "", "namespaces", NULL, name, &o)) < 0)
		return r;
	r = shm_object_view_init(o, &v); /* takes the record */
	free(o);
	if (r == 0)
		r = sa_namespace_phase(v.o.raw, v.o.raw_len, phase, len);
	shm_object_view_free(&v);
	return r;
}

static int sa_init(struct wk_ctx *ctx, void **ret_state)
{
	*ret_state = ctx;
	return 0;
}

static void sa_fini(void *state)
{
	(void)state;
}

static void sa_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct wk_ctx *ctx = state;
	char phase[64], body[1024];
	int r, failed = 0;

	(void)q;
	*res = (struct wk_result){0};
	r = namespace_phase(ctx->arena, key, phase, sizeof(phase));
	if (r == -ENOENT)
		return; /* deleted: nothing to do */
	if (r < 0) {
		res->err = r;
		return;
	}
	for (size_t i = 0; sa_to_ensure[i]; i++) {
		struct shm_obj *sa = NULL;
		r = kcmd_cache_get(ctx->arena, "", "serviceaccounts", key, sa_to_ensure[i], &sa);
		if (r < 0 && r != -ENOENT) {
			res->err = r;
			return;
		}
		kcmd_obj_free(sa);
		if (sa_decide(phase, r == 0) != SA_CREATE)
			continue;
		if ((r = sa_body(body, sizeof(body), key, sa_to_ensure[i])) < 0) {
			failed = r;
			continue;
		}
		r = kcmd_kube_request(ctx->kc,
		                      &(struct kcmd_request){.method = "POST",
		                                             .version = "v1",
		                                             .resource = "serviceaccounts",
		                                             .ns = key,
		                                             .body = body,
		                                             .body_kind = "ServiceAccount"},
		                      NULL, NULL);
		if (r == 0)
			kcmd_log_v(2, "created serviceaccount %s/%s", key, sa_to_ensure[i]);
		if ((r = sa_create_result(r)) < 0) {
			kcmd_log_warning("%s failed with : creating serviceaccount %s/%s: %s", key,
			                 key, sa_to_ensure[i],
			                 kcmd_kube_reason(r) ? kcmd_kube_reason(r) : strerror(-r));
			failed = r;
		}
	}
	res->err = failed;
}

static const struct wk_controller sa_worker = {
        .name = SA_CONTROLLER,
        .queues = sa_queue_names,
        .init = sa_init,
        .sync = sa_sync,
        .fini = sa_fini,
};

/* ---- the descriptor ----------------------------------------------------------------------- */
static const char *const sa_aliases[] = {"serviceaccount", NULL};
static const struct kcmd_watch sa_watches[] = {
        {"", "v1", "namespaces", "Namespace", KCMD_CACHE_OBJECT, false},
        {"", "v1", "serviceaccounts", "ServiceAccount", KCMD_CACHE_METADATA, true},
};
static const struct kcmd_queue sa_queues[] = {{.name = SA_QUEUE}};

const struct kcmd_controller kcmd_serviceaccount_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = SA_CONTROLLER,
        .aliases = sa_aliases,
        .enabled_by_default = true,
        .service_account = "service-account-controller",
        .cluster_scoped_keys = true, /* its keys are namespace names */
        .watches = sa_watches,
        .n_watches = sizeof(sa_watches) / sizeof(sa_watches[0]),
        .queues = sa_queues,
        .n_queues = 1,
        .handlers = &sa_handlers,
        .worker = &sa_worker,
};
