/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/handlers.c: handler dispatch (see handlers.h) and the test handler table.
 *
 * Each arena type gets, when it is added, the list of (table, entry) pairs that match it, so an
 * event costs one array walk, not a string match per handler.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/handlers.h"

struct reg {
	const struct inf_handler_table *t;
	struct inf_handler_ctx ctx;
	struct ipc_queue_owner **queues;
};

struct binding {
	struct reg *reg; /* index into regs would survive realloc; regs are pointers */
	const struct inf_handler_entry *e;
};

struct type_bind {
	struct binding *b;
	size_t n;
	bool used;
	const struct inf_resource *res;
};

struct inf_dispatch {
	struct reg **regs;
	size_t n_regs;
	struct type_bind types[UINT16_MAX + 1];
	uint64_t calls;
	struct ipc_loop *loop;
	struct kube_client *kc;
	const char *host;
};

void inf_dispatch_set_host(struct inf_dispatch *d, struct ipc_loop *loop, struct kube_client *kc,
                           const char *host)
{
	d->loop = loop;
	d->kc = kc;
	d->host = host;
}

int inf_dispatch_new(struct inf_dispatch **ret)
{
	struct inf_dispatch *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	*ret = d;
	return 0;
}

struct inf_dispatch *inf_dispatch_free(struct inf_dispatch *d)
{
	if (!d)
		return NULL;
	for (size_t i = 0; i < d->n_regs; i++) {
		struct reg *r = d->regs[i];

		if (r->t->fini)
			r->t->fini(&r->ctx);
		free(r->queues);
		free(r);
	}
	for (size_t i = 0; i <= UINT16_MAX; i++)
		free(d->types[i].b);
	free(d->regs);
	free(d);
	return NULL;
}

static bool entry_matches(const struct inf_handler_entry *e, const struct inf_resource *res)
{
	if (e->group && strcmp(e->group, res->group ? res->group : "") != 0)
		return false;
	return strcmp(e->resource, "*") == 0 || strcmp(e->resource, res->resource) == 0;
}

static int bind_one(struct type_bind *tb, struct reg *r, const struct inf_handler_entry *e)
{
	struct binding *nb = realloc(tb->b, (tb->n + 1) * sizeof(*nb));

	if (!nb)
		return -ENOMEM;
	tb->b = nb;
	tb->b[tb->n++] = (struct binding){.reg = r, .e = e};
	return 0;
}

int inf_dispatch_register(struct inf_dispatch *d, const struct inf_handler_table *t,
                          struct ipc_queue_owner *const *queues, size_t n, struct shm_arena *arena)
{
	struct reg *r, **nr;
	size_t want = 0;
	int ret;

	if (!d || !t || !t->controller || (t->n_entries && !t->entries))
		return -EINVAL;
	while (t->queues && t->queues[want])
		want++;
	if (n != want)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!queues[i])
			return -EINVAL;
	for (size_t i = 0; i < t->n_entries; i++)
		if (!t->entries[i].resource)
			return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->queues = calloc(n ? n : 1, sizeof(*r->queues));
	nr = realloc(d->regs, (d->n_regs + 1) * sizeof(*nr));
	if (!r->queues || !nr) {
		free(r->queues);
		free(r);
		if (nr)
			d->regs = nr;
		return -ENOMEM;
	}
	d->regs = nr;
	for (size_t i = 0; i < n; i++)
		r->queues[i] = queues[i];
	r->t = t;
	r->ctx.arena = arena;
	r->ctx.loop = d->loop;
	r->ctx.kc = d->kc;
	r->ctx.host = d->host;
	r->ctx.queues = r->queues;
	r->ctx.n_queues = n;
	if (t->init) {
		ret = t->init(&r->ctx);
		if (ret < 0) {
			free(r->queues);
			free(r);
			return ret;
		}
	}
	d->regs[d->n_regs] = r;
	/* Bind to the types added already. */
	for (size_t ty = 0; ty <= UINT16_MAX; ty++) {
		if (!d->types[ty].used)
			continue;
		for (size_t i = 0; i < t->n_entries; i++)
			if (entry_matches(&t->entries[i], d->types[ty].res)) {
				ret = bind_one(&d->types[ty], r, &t->entries[i]);
				if (ret < 0)
					return ret; /* the table stays registered, partly bound */
			}
	}
	return (int)d->n_regs++;
}

int inf_dispatch_add_type(struct inf_dispatch *d, uint16_t type, const struct inf_resource *res)
{
	struct type_bind *tb;
	int ret;

	if (!d || !res || !res->resource)
		return -EINVAL;
	tb = &d->types[type];
	tb->n = 0;
	tb->used = true;
	tb->res = res;
	for (size_t k = 0; k < d->n_regs; k++)
		for (size_t i = 0; i < d->regs[k]->t->n_entries; i++)
			if (entry_matches(&d->regs[k]->t->entries[i], res)) {
				ret = bind_one(tb, d->regs[k], &d->regs[k]->t->entries[i]);
				if (ret < 0)
					return ret;
			}
	return 0;
}

void inf_dispatch_remove_type(struct inf_dispatch *d, uint16_t type)
{
	if (!d)
		return;
	d->types[type].n = 0;
	d->types[type].used = false;
	d->types[type].res = NULL;
}

bool inf_dispatch_handles(const struct inf_dispatch *d, uint16_t type)
{
	return d && d->types[type].used && d->types[type].n > 0;
}

void inf_dispatch_event(struct inf_dispatch *d, const struct inf_event *ev)
{
	struct type_bind *tb = &d->types[ev->type];

	for (size_t i = 0; i < tb->n; i++) {
		const struct inf_handler_entry *e = tb->b[i].e;
		inf_handler_fn fn = ev->kind == INF_EVENT_ADD      ? e->on_add
		                    : ev->kind == INF_EVENT_UPDATE ? e->on_update
		                                                   : e->on_delete;

		if (fn) {
			fn(&tb->b[i].reg->ctx, ev);
			d->calls++;
		}
	}
}

void inf_dispatch_resync(struct inf_dispatch *d, size_t index, size_t queue, bool restarted)
{
	struct reg *r;

	if (!d || index >= d->n_regs)
		return;
	r = d->regs[index];
	if (r->t->resync && queue < r->ctx.n_queues)
		r->t->resync(&r->ctx, queue, restarted);
}

struct inf_handler_ctx *inf_dispatch_ctx(struct inf_dispatch *d, size_t index)
{
	return d && index < d->n_regs ? &d->regs[index]->ctx : NULL;
}

uint64_t inf_dispatch_calls(const struct inf_dispatch *d)
{
	return d->calls;
}

/* ---- the test table ------------------------------------------------------------------------ */

static void test_key(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	char key[IPC_QUEUE_KEY_MAX + 1];
	const char *ns, *name;

	if (ev->meta) {
		ns = ev->meta->namespace ? ev->meta->namespace : "";
		name = ev->meta->name ? ev->meta->name : "";
	} else if (ev->old) {
		ns = ev->old->ns ? ev->old->ns : "";
		name = ev->old->name;
	} else {
		return;
	}
	if (snprintf(key, sizeof(key), "%s/%s/%s", ev->res->resource, ns, name) >= (int)sizeof(key))
		return;
	(void)ipc_queue_owner_add(ctx->queues[0], key);
}

static int test_resync_visit(const struct shm_obj *o, void *userdata)
{
	struct inf_handler_ctx *ctx = userdata;
	char key[IPC_QUEUE_KEY_MAX + 1];
	struct shm_type_info ti;

	if (shm_reader_type_info(ctx->arena, o->type, &ti) < 0)
		return 0;
	if (snprintf(key, sizeof(key), "%s/%s/%s", ti.resource, o->ns ? o->ns : "", o->name) <
	    (int)sizeof(key))
		(void)ipc_queue_owner_add(ctx->queues[0], key);
	return 0;
}

static void test_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	struct shm_stats st;

	(void)queue;
	(void)restarted;
	if (shm_reader_stats(ctx->arena, &st) < 0)
		return;
	for (uint64_t t = 0; t < st.n_types; t++)
		(void)shm_reader_list(ctx->arena, (uint16_t)t, test_resync_visit, ctx);
}

static const char *const test_queues[] = {"informer-test", NULL};
static const struct inf_handler_entry test_entries[] = {
        {.group = NULL,
         .resource = "*",
         .on_add = test_key,
         .on_update = test_key,
         .on_delete = test_key},
};

const struct inf_handler_table inf_test_handler_table = {
        .controller = "informer-test",
        .queues = test_queues,
        .entries = test_entries,
        .n_entries = 1,
        .resync = test_resync,
};
