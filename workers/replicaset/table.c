/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/replicaset/table.c: informerd's events → the ReplicaSet handlers (handlers.h).
 *
 * The new state of an object is the decoded event; the previous one (updates) or the last known
 * one (tombstones) is the arena's record, viewed as a model struct (shm/record-model.h).
 */
#include "workers/replicaset/table.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shm/records.h"
#include "lib/log.h"
#include "shm/record-model.h"
#include "workers/replicaset/expectations.h"
#include "workers/replicaset/flavour.h"
#include "workers/replicaset/handlers.h"

struct rst {
	struct inf_handler_ctx *ctx;
	const struct rs_flavour *fl;
	struct rs_handler_ops ops;
	struct rs_exp *exp;
	int rs_type;
	struct shm_obj last; /* backs the rs_cached returned by get_rs */
};

static int rs_type(struct rst *t)
{
	if (t->rs_type < 0)
		t->rs_type = shm_reader_find_type(t->ctx->arena, t->fl->group, t->fl->version,
		                                  t->fl->resource);
	return t->rs_type;
}

static int op_get_rs(void *ud, const char *ns, const char *name, struct rs_cached *ret)
{
	struct rst *t = ud;
	struct shm_rec_view v;
	struct shm_rec_rs fr;
	int r;

	if (rs_type(t) < 0)
		return -ENOENT;
	r = shm_reader_get(t->ctx->arena, (uint16_t)t->rs_type, ns, name, &t->last);
	if (r < 0)
		return r;
	ret->uid = t->last.uid;
	ret->min_ready_seconds = 0;
	if (shm_rec_parse(t->last.payload, t->last.payload_len, &v) == 0 &&
	    shm_rec_rs_get(&v, &fr) == 0)
		ret->min_ready_seconds = fr.min_ready_seconds;
	return 0;
}

struct list_ctx {
	int (*fn)(void *fn_ud, const char *name, const struct kube_label_selector *sel);
	void *fn_ud;
	int err;
};

static int list_visit(const struct shm_obj *o, void *ud)
{
	struct list_ctx *lc = ud;
	struct shm_rec_selector sel;
	int r = shm_rec_selector_get(o, &sel); /* compiled when stored: nothing parsed here */

	if (r == -ENOMEM)
		lc->err = r;
	if (r < 0) {
		shm_rec_selector_free(&sel);
		return r == -ENOMEM ? r : 0;
	}
	r = lc->fn(lc->fn_ud, o->name, shm_rec_selector_ls(&sel));
	shm_rec_selector_free(&sel);
	return r;
}

static int op_list_rs(void *ud, const char *ns,
                      int (*fn)(void *fn_ud, const char *name,
                                const struct kube_label_selector *sel),
                      void *fn_ud)
{
	struct rst *t = ud;
	struct list_ctx lc = {fn, fn_ud, 0};

	if (rs_type(t) < 0)
		return 0;
	int r = shm_reader_list_ns(t->ctx->arena, (uint16_t)t->rs_type, ns, list_visit, &lc);
	return r < 0 ? r : lc.err;
}

static void op_add(void *ud, const char *key)
{
	struct rst *t = ud;
	int r = ipc_queue_owner_add(t->ctx->queues[0], key);

	if (r < 0)
		log_error("%s queue: adding %s failed: %s", t->fl->queue, key, strerror(-r));
}

static void op_add_after(void *ud, const char *key, int64_t delay_ns)
{
	struct rst *t = ud;
	int r = ipc_queue_owner_add_after(t->ctx->queues[0], key,
	                                  delay_ns > 0 ? (uint64_t)delay_ns / 1000 : 0);

	if (r < 0)
		log_error("%s queue: adding %s failed: %s", t->fl->queue, key, strerror(-r));
}

static struct rst *T(struct inf_handler_ctx *ctx)
{
	struct rst *t = ctx->state;

	t->ctx = ctx;
	return t;
}

/* The arena record's metadata as the handlers need it for a ReplicaSet (name, ns, uid, rv). */
static void meta_of_shm(const struct shm_obj *o, struct kube_object_meta *m)
{
	memset(m, 0, sizeof(*m));
	m->name = o->name;
	m->namespace = o->ns;
	m->uid = o->uid;
	m->resource_version = o->rv;
}

static int old_pod(const struct shm_obj *o, struct shm_pod_view *ret)
{
	struct shm_obj copy;
	int r = shm_obj_dup(o, &copy);

	if (r < 0)
		return r;
	r = shm_pod_view_init(&copy, ret);
	if (r < 0)
		shm_pod_view_free(ret);
	return r;
}

static void on_rs_add(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	rs_handle_rs_add(&T(ctx)->ops, ev->meta);
}

static void on_rs_update(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	struct kube_object_meta old;

	if (!ev->old) {
		rs_handle_rs_add(&T(ctx)->ops, ev->meta);
		return;
	}
	meta_of_shm(ev->old, &old);
	rs_handle_rs_update(&T(ctx)->ops, &old, ev->meta);
}

static void on_rs_delete(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	struct kube_object_meta old;

	if (ev->meta) {
		rs_handle_rs_delete(&T(ctx)->ops, ev->meta);
	} else if (ev->old) {
		meta_of_shm(ev->old, &old);
		rs_handle_rs_delete(&T(ctx)->ops, &old);
	}
}

static void on_pod_add(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	rs_handle_pod_add(&T(ctx)->ops, ev->obj);
}

static void on_pod_update(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	struct shm_pod_view old;

	if (!ev->old || old_pod(ev->old, &old) < 0) {
		rs_handle_pod_add(&T(ctx)->ops, ev->obj);
		return;
	}
	rs_handle_pod_update(&T(ctx)->ops, &old.pod, ev->obj);
	shm_pod_view_free(&old);
}

static void on_pod_delete(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	struct shm_pod_view old;

	if (ev->obj) {
		rs_handle_pod_delete(&T(ctx)->ops, ev->obj);
	} else if (ev->old && old_pod(ev->old, &old) == 0) {
		rs_handle_pod_delete(&T(ctx)->ops, &old.pod); /* tombstone: last known state */
		shm_pod_view_free(&old);
	}
}

static int rst_init_flavour(struct inf_handler_ctx *ctx, const struct rs_flavour *fl)
{
	struct rst *t = calloc(1, sizeof(*t));
	const char *fdv = getenv("KCMD_EXPECTATIONS_FD");
	int r;

	if (!t)
		return -ENOMEM;
	if (!fdv || !*fdv) {
		free(t);
		return -EBADF; /* the controller needs the shared expectations */
	}
	r = rs_exp_attach((int)strtol(fdv, NULL, 10), RS_EXP_INFORMER, rs_exp_now(), &t->exp);
	if (r < 0) {
		free(t);
		return r;
	}
	t->ctx = ctx;
	t->fl = fl;
	t->rs_type = -1;
	t->last = SHM_OBJ_INIT;
	t->ops = (struct rs_handler_ops){.ud = t,
	                                 .get_rs = op_get_rs,
	                                 .list_rs = op_list_rs,
	                                 .add = op_add,
	                                 .add_after = op_add_after,
	                                 .exp = t->exp,
	                                 .kind = fl->kind};
	ctx->state = t;
	return 0;
}

static int rst_init(struct inf_handler_ctx *ctx)
{
	return rst_init_flavour(ctx, &rs_flavour_replicaset);
}

static int rct_init(struct inf_handler_ctx *ctx)
{
	return rst_init_flavour(ctx, &rs_flavour_replicationcontroller);
}

static void rst_fini(struct inf_handler_ctx *ctx)
{
	struct rst *t = ctx->state;

	if (t) {
		shm_obj_release(&t->last);
		rs_exp_detach(t->exp);
		free(t);
	}
	ctx->state = NULL;
}

static int resync_visit(const struct shm_obj *o, void *ud)
{
	struct rst *t = ud;
	char key[512];

	snprintf(key, sizeof(key), "%s/%s", o->ns ? o->ns : "", o->name);
	op_add(t, key);
	return 0;
}

/* A (re)started queue owner: every cached ReplicaSet gets a sync, so no key is lost. */
static void rst_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	struct rst *t = T(ctx);

	(void)queue;
	(void)restarted;
	if (rs_type(t) >= 0)
		shm_reader_list(ctx->arena, (uint16_t)t->rs_type, resync_visit, t);
}

static const char *const rst_queues[] = {"replicaset", NULL};
static const struct inf_handler_entry rst_entries[] = {
        {"apps", "replicasets", on_rs_add, on_rs_update, on_rs_delete},
        {"", "pods", on_pod_add, on_pod_update, on_pod_delete},
};

const struct inf_handler_table rs_handler_table = {
        .controller = "replicaset-controller",
        .queues = rst_queues,
        .entries = rst_entries,
        .n_entries = sizeof(rst_entries) / sizeof(rst_entries[0]),
        .init = rst_init,
        .fini = rst_fini,
        .resync = rst_resync,
};

/* The replication controller's table: the same handlers over ReplicationControllers (upstream's
 * conversionEventHandler hands them the RC converted to a ReplicaSet; here the record already is
 * one, flavour.h). */
static const char *const rct_queues[] = {"replicationmanager", NULL};
static const struct inf_handler_entry rct_entries[] = {
        {"", "replicationcontrollers", on_rs_add, on_rs_update, on_rs_delete},
        {"", "pods", on_pod_add, on_pod_update, on_pod_delete},
};

const struct inf_handler_table rc_handler_table = {
        .controller = "replicationcontroller-controller",
        .queues = rct_queues,
        .entries = rct_entries,
        .n_entries = sizeof(rct_entries) / sizeof(rct_entries[0]),
        .init = rct_init,
        .fini = rst_fini,
        .resync = rst_resync,
};
