/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/ttl/plugin.c: kcm's ttl-controller (alias ttl), on by default, client
 * "ttl-controller": the annotation node.alpha.kubernetes.io/ttl on every Node (ttl.h).
 *
 * Shape: Nodes cached whole (their annotations are read). The dispatcher's handlers count
 * nodes (add, delete) into the shared page KCMD_TTL_FD and queue a node on its add and every
 * update; one worker process (kcm runs five goroutines; a sync is one arena read and at most one
 * patch) reads the desired TTL from the page and patches the node when its annotation differs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "kcmd/kcmd.h"
#include "shm/record-model.h"
#include "workers/ttl/ttl.h"
#include "workers/worker.h"

static int region_fd(void)
{
	const char *v = getenv("KCMD_TTL_FD");
	char *end;
	long l;

	if (!v || !*v)
		return -1;
	l = strtol(v, &end, 10);
	return *end || l < 0 || l > 65535 ? -1 : (int)l;
}

/* ---- handlers (kcmd-dispatcher) ----------------------------------------------------------- */
struct ttl_disp {
	struct ttl_region *r;
	struct ttl_state s;
	struct ttl_names names; /* the nodes counted in s */
};

static void count_node(struct ttl_disp *d, const char *name, bool add)
{
	int r = add ? ttl_names_add(&d->names, &d->s, name) : ttl_names_del(&d->names, &d->s, name);
	if (r < 0)
		kcmd_log_error("node %s not counted: %s", name, strerror(-r));
	if (r > 0)
		ttl_region_store(d->r, &d->s);
}

static int ttl_table_init(struct inf_handler_ctx *ctx)
{
	struct ttl_disp *d = calloc(1, sizeof(*d));
	int fd = region_fd(), r;

	if (!d)
		return -ENOMEM;
	if (fd < 0 || (r = ttl_region_attach(fd, true, &d->r)) < 0) {
		kcmd_log_error("KCMD_TTL_FD: %s", fd < 0 ? "not passed" : strerror(-r));
		free(d);
		return fd < 0 ? -EBADF : r;
	}
	ctx->state = d;
	return 0;
}

static void ttl_table_fini(struct inf_handler_ctx *ctx)
{
	struct ttl_disp *d = ctx->state;
	if (d) {
		ttl_region_detach(d->r);
		ttl_names_free(&d->names);
	}
	free(d);
	ctx->state = NULL;
}

static void on_add(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	struct ttl_disp *d = ctx->state;
	if (!ev->meta)
		return;
	count_node(d, kcmd_meta_name(ev->meta), true);
	kcmd_queue_add(ctx, 0, kcmd_meta_name(ev->meta));
}

static void on_update(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	if (ev->meta)
		kcmd_queue_add(ctx, 0, kcmd_meta_name(ev->meta));
}

static void on_delete(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	struct ttl_disp *d = ctx->state;
	const char *name = ev->meta  ? kcmd_meta_name(ev->meta)
	                   : ev->old ? kcmd_obj_name(ev->old)
	                             : NULL;
	if (name) /* a tombstone carries the last known state */
		count_node(d, name, false);
}

static int count_and_add(const struct shm_obj *o, void *ud)
{
	struct inf_handler_ctx *ctx = ud;
	struct ttl_disp *d = ctx->state;
	int r = ttl_names_add(&d->names, &d->s, kcmd_obj_name(o));
	if (r < 0)
		kcmd_log_error("node %s not counted: %s", kcmd_obj_name(o), strerror(-r));
	kcmd_queue_add(ctx, 0, kcmd_obj_name(o));
	return 0;
}

/* (re)start from the arena: the informer's initial list, one add per node from a zero count */
static void ttl_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	struct ttl_disp *d = ctx->state;
	(void)queue;
	(void)restarted;
	d->s = (struct ttl_state){0};
	ttl_names_free(&d->names);
	kcmd_cache_list(ctx->arena, "", "nodes", NULL, count_and_add, ctx);
	ttl_region_store(d->r, &d->s);
}

static const char *const ttl_queue_names[] = {TTL_QUEUE, NULL};
static const struct inf_handler_entry ttl_entries[] = {
        {.group = "",
         .resource = "nodes",
         .on_add = on_add,
         .on_update = on_update,
         .on_delete = on_delete},
};
static const struct inf_handler_table ttl_handlers = {
        .controller = TTL_CONTROLLER,
        .queues = ttl_queue_names,
        .entries = ttl_entries,
        .n_entries = 1,
        .init = ttl_table_init,
        .fini = ttl_table_fini,
        .resync = ttl_resync,
};

/* ---- sync (kcmd-worker) ------------------------------------------------------------------- */
struct ttl_worker {
	struct wk_ctx *ctx;
	struct ttl_region *r;
};

static int ttl_init(struct wk_ctx *ctx, void **ret_state)
{
	struct ttl_worker *w = calloc(1, sizeof(*w));
	int fd = region_fd(), r;

	if (!w)
		return -ENOMEM;
	if (fd < 0 || (r = ttl_region_attach(fd, false, &w->r)) < 0) {
		kcmd_log_error("KCMD_TTL_FD: %s", fd < 0 ? "not passed" : strerror(-r));
		free(w);
		return fd < 0 ? -EBADF : r;
	}
	w->ctx = ctx;
	*ret_state = w;
	return 0;
}

static void ttl_fini(void *state)
{
	struct ttl_worker *w = state;
	if (w)
		ttl_region_detach(w->r);
	free(w);
}

/* the annotation of a cached node: 0 with *ret, -ENOENT (no node), -ENODATA (absent or not an
 * integer) */
static int current_ttl(struct shm_arena *a, const char *name, int64_t *ret)
{
	struct shm_obj *o = NULL;
	struct shm_object_view v;
	int r;

	if ((r = kcmd_cache_get(a, "", "nodes", NULL, name, &o)) < 0)
		return r;
	r = shm_object_view_init(o, &v);
	free(o);
	if (r == 0) {
		r = -ENODATA;
		for (uint32_t i = 0; i < v.o.meta.n_annotations; i++)
			if (!strcmp(v.o.meta.annotations[i].key, TTL_ANNOTATION) &&
			    ttl_parse(v.o.meta.annotations[i].value, ret))
				r = 0;
	}
	shm_object_view_free(&v);
	return r;
}

static void ttl_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct ttl_worker *w = state;
	int desired = ttl_region_load(w->r).desired;
	int64_t cur = 0;
	char body[128];
	int r;

	(void)q;
	*res = (struct wk_result){0};
	r = current_ttl(w->ctx->arena, key, &cur);
	if (r == -ENOENT)
		return;
	if (r == 0 && cur == desired)
		return;
	if (r < 0 && r != -ENODATA) {
		res->err = r;
		return;
	}
	ttl_patch_body(body, sizeof(body), desired);
	struct kube_response resp = {0};
	r = kube_client_request(w->ctx->kc,
	                        &(struct kube_request){.verb = KUBE_PATCH,
	                                               .version = "v1",
	                                               .resource = "nodes",
	                                               .name = key,
	                                               .patch_type = KUBE_PATCH_STRATEGIC,
	                                               .body = body,
	                                               .body_len = strlen(body)},
	                        NULL, NULL, &resp);
	if (r < 0) {
		kcmd_log_v(2, "Failed to change ttl annotation for node %s: %s", key,
		           resp.error.message[0] ? resp.error.message : strerror(-r));
		res->err = r;
	} else
		kcmd_log_v(2, "Changed ttl annotation for node %s: %ds", key, desired);
	kube_response_clear(&resp);
}

static const struct wk_controller ttl_worker_desc = {
        .name = TTL_CONTROLLER,
        .queues = ttl_queue_names,
        .init = ttl_init,
        .sync = ttl_sync,
        .fini = ttl_fini,
};

/* ---- the descriptor ----------------------------------------------------------------------- */
static int ttl_mgr_setup(struct kcmd_mgr_env *env, const struct kcmd_flag_values *v,
                         void **ret_state)
{
	int fd = ttl_region_memfd_create();

	(void)v;
	*ret_state = NULL;
	if (fd < 0)
		return fd;
	return kcmd_mgr_export_fd(env, "KCMD_TTL_FD", fd, KCMD_TO_DISPATCHER | KCMD_TO_WORKERS);
}

static const char *const ttl_aliases[] = {"ttl", NULL};
static const struct kcmd_watch ttl_watches[] = {
        {"", "v1", "nodes", "Node", KCMD_CACHE_OBJECT, false},
};
static const struct kcmd_queue ttl_queues[] = {{.name = TTL_QUEUE}};

const struct kcmd_controller kcmd_ttl_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = TTL_CONTROLLER,
        .aliases = ttl_aliases,
        .enabled_by_default = true,
        .service_account = "ttl-controller",
        .cluster_scoped_keys = true,
        .watches = ttl_watches,
        .n_watches = 1,
        .queues = ttl_queues,
        .n_queues = 1,
        .mgr_setup = ttl_mgr_setup,
        .handlers = &ttl_handlers,
        .worker = &ttl_worker_desc,
};
