/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/deployment/handlers.c: the deployment controller's event handlers (upstream
 * deployment_controller.go's add/update/deleteDeployment, add/update/deleteReplicaSet and
 * deletePod), run in its kcmd-dispatcher; they add "ns/name" of a Deployment to the queue
 * "deployment".
 *
 * A ReplicaSet with a controllerRef to a Deployment enqueues that Deployment (its old
 * controller too when the reference changed); an orphan enqueues every Deployment of its
 * namespace (upstream: those whose selector matches; the sync decides adoption, so the extra
 * syncs cost time only). A deleted pod whose ReplicaSet belongs to a Deployment enqueues it
 * (upstream: only a Recreate Deployment with no pods left; the sync does nothing more then).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kcmd/cache.h"
#include "kcmd/handlers.h"
#include "lib/log.h"
#include "workers/deployment/controller.h"

static void add_key(struct inf_handler_ctx *ctx, const char *ns, const char *name)
{
	char key[KCMD_KEY_MAX + 1];
	int r;

	if (kcmd_key_make(key, sizeof(key), ns, name) < 0)
		return;
	if ((r = kcmd_queue_add(ctx, 0, key)) < 0)
		log_error("%s queue: adding %s failed: %s", DP_QUEUE, key, strerror(-r));
}

static void on_deployment(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	const char *ns, *name;

	if (ev->meta) {
		ns = kcmd_meta_namespace(ev->meta);
		name = kcmd_meta_name(ev->meta);
	} else if (ev->old) {
		ns = kcmd_obj_namespace(ev->old);
		name = kcmd_obj_name(ev->old);
	} else {
		return;
	}
	add_key(ctx, ns, name);
}

struct ns_walk {
	struct inf_handler_ctx *ctx;
};

static int enqueue_visit(const struct shm_obj *o, void *ud)
{
	struct ns_walk *w = ud;

	add_key(w->ctx, kcmd_obj_namespace(o), kcmd_obj_name(o));
	return 0;
}

/* the Deployment a controllerRef names, or every Deployment of ns for an orphan */
static void enqueue_for_owner(struct inf_handler_ctx *ctx, const char *ns,
                              const struct kcmd_owner_ref *ref, bool have_ref)
{
	if (have_ref) {
		if (ref->kind && strcmp(ref->kind, "Deployment") == 0 && ref->api_version &&
		    strncmp(ref->api_version, "apps/", 5) == 0)
			add_key(ctx, ns, ref->name);
		return;
	}
	struct ns_walk w = {ctx};
	kcmd_cache_list(ctx->arena, "apps", "deployments", ns, enqueue_visit, &w);
}

static bool meta_controller(const struct kube_object_meta *m, struct kcmd_owner_ref *ret)
{
	for (size_t i = 0; m && i < kcmd_meta_n_owners(m); i++)
		if (kcmd_meta_owner(m, i, ret) == 0 && ret->controller == 1)
			return true;
	return false;
}

static bool obj_controller(const struct shm_obj *o, struct kcmd_owner_ref *ret)
{
	for (size_t i = 0; o && i < kcmd_obj_n_owners(o); i++)
		if (kcmd_obj_owner(o, i, ret) == 0 && ret->controller == 1)
			return true;
	return false;
}

static void on_rs(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	struct kcmd_owner_ref ref, old_ref;
	bool have, have_old = false;
	const char *ns;

	if (ev->kind == INF_EVENT_DELETE || !ev->meta) {
		if (!ev->old)
			return;
		/* a deleted orphan concerns no Deployment */
		if (obj_controller(ev->old, &ref))
			enqueue_for_owner(ctx, kcmd_obj_namespace(ev->old), &ref, true);
		return;
	}
	ns = kcmd_meta_namespace(ev->meta);
	have = meta_controller(ev->meta, &ref);
	if (ev->kind == INF_EVENT_UPDATE && ev->old) {
		have_old = obj_controller(ev->old, &old_ref);
		if (have_old &&
		    (!have || strcmp(old_ref.uid ? old_ref.uid : "", ref.uid ? ref.uid : "") != 0))
			enqueue_for_owner(ctx, ns, &old_ref, true);
	}
	enqueue_for_owner(ctx, ns, &ref, have);
}

static void on_pod_delete(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	struct kcmd_owner_ref ref, dref;
	struct shm_obj *rs = NULL;

	if (!ev->old || !obj_controller(ev->old, &ref) || !ref.kind ||
	    strcmp(ref.kind, "ReplicaSet") != 0)
		return;
	const char *ns = kcmd_obj_namespace(ev->old);
	if (kcmd_cache_get(ctx->arena, "apps", "replicasets", ns, ref.name, &rs) < 0)
		return;
	if (obj_controller(rs, &dref))
		enqueue_for_owner(ctx, ns, &dref, true);
	kcmd_obj_free(rs);
}

static int resync_visit(const struct shm_obj *o, void *ud)
{
	return enqueue_visit(o, ud);
}

static void dph_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	struct ns_walk w = {ctx};

	(void)queue;
	(void)restarted;
	kcmd_cache_list(ctx->arena, "apps", "deployments", NULL, resync_visit, &w);
}

static const char *const dph_queues[] = {DP_QUEUE, NULL};
static const struct inf_handler_entry dph_entries[] = {
        {"apps", "deployments", on_deployment, on_deployment, on_deployment},
        {"apps", "replicasets", on_rs, on_rs, on_rs},
        {"", "pods", NULL, NULL, on_pod_delete},
};

const struct inf_handler_table dp_handler_table = {
        .controller = DP_CONTROLLER,
        .queues = dph_queues,
        .entries = dph_entries,
        .n_entries = sizeof(dph_entries) / sizeof(dph_entries[0]),
        .resync = dph_resync,
};
