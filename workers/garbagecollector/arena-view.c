/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/garbagecollector/arena-view.c: the graph view over the arena (see arena-view.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shm/record-model.h"
#include "shm/records.h"
#include "workers/garbagecollector/arena-view.h"

/* Fills the node fields of a record; owners into *owners (grown as needed). */
static int record_to_view(struct shm_arena *a, const struct shm_obj *o,
                          struct kube_owner_ref **owners, size_t *cap, char *av, size_t av_len,
                          char *kind, size_t kind_len, struct gc_node_view *ret)
{
	struct shm_type_info ti;
	int r = shm_reader_type_info(a, o->type, &ti);
	if (r < 0)
		return r;
	/* shm/arena.h T2: the record was written under another registration of the type slot
	 * (its resource was retired since): it is not an object of the slot's resource now */
	if (ti.gen != o->type_gen)
		return -ENOENT;
	if (ti.group[0])
		snprintf(av, av_len, "%s/%s", ti.group, ti.version);
	else
		snprintf(av, av_len, "%s", ti.version);
	snprintf(kind, kind_len, "%s", ti.kind);
	if (o->n_owners > *cap) {
		struct kube_owner_ref *p = realloc(*owners, o->n_owners * sizeof *p);
		if (!p)
			return -ENOMEM;
		*owners = p;
		*cap = o->n_owners;
	}
	for (size_t i = 0; i < o->n_owners; i++)
		(*owners)[i] = (struct kube_owner_ref){
		        .api_version = o->owners[i].api_version,
		        .kind = o->owners[i].kind,
		        .name = o->owners[i].name,
		        .uid = o->owners[i].uid,
		        .controller = o->owners[i].controller,
		        .block_owner_deletion = o->owners[i].block_owner_deletion,
		};
	*ret = (struct gc_node_view){
	        .id = {.api_version = av,
	               .kind = kind,
	               .name = o->name,
	               .uid = o->uid,
	               .ns = o->ns ? o->ns : ""},
	        .owners = *owners,
	        .n_owners = o->n_owners,
	};
	struct shm_rec_view rv;
	if (shm_rec_parse(o->payload, o->payload_len, &rv) == 0) {
		ret->being_deleted = rv.hdr.deletion_ts != 0;
		ret->deleting_dependents =
		        ret->being_deleted && (rv.hdr.flags & SHM_REC_FIN_FOREGROUND);
	}
	return 0;
}

static int count_fn(const struct shm_obj *o, void *ud)
{
	(void)o;
	(*(size_t *)ud)++;
	return 0;
}

static int av_node(void *ud, const char *uid, struct gc_node_view *ret)
{
	struct gc_arena_view *v = ud;
	int r = shm_reader_get_uid(v->arena, uid, &v->node_obj);
	if (r < 0)
		return r;
	r = record_to_view(v->arena, &v->node_obj, &v->node_owners, &v->node_owners_cap, v->node_av,
	                   sizeof v->node_av, v->node_kind, sizeof v->node_kind, ret);
	if (r < 0)
		return r;
	size_t n = 0;
	r = shm_reader_list_dependents(v->arena, uid, count_fn, &n);
	if (r < 0)
		return r;
	ret->n_dependents = n;
	return 0;
}

struct dep_ctx {
	struct gc_arena_view *v;
	gc_dep_fn fn;
	void *fn_ud;
	struct kube_owner_ref *owners;
	size_t cap;
};

static int dep_visit(const struct shm_obj *o, void *ud)
{
	struct dep_ctx *c = ud;
	if (!c->fn)
		return 0;
	char av[192], kind[64];
	struct gc_node_view nv;
	int r = record_to_view(c->v->arena, o, &c->owners, &c->cap, av, sizeof av, kind,
	                       sizeof kind, &nv);
	if (r == -ENOENT)
		return 0; /* a record of a retired type (T2): skipped */
	if (r < 0)
		return r;
	return c->fn(&nv, c->fn_ud);
}

static int av_dependents(void *ud, const char *uid, gc_dep_fn fn, void *fn_ud)
{
	struct dep_ctx c = {.v = ud, .fn = fn, .fn_ud = fn_ud};
	int r = shm_reader_list_dependents(c.v->arena, uid, dep_visit, &c);
	free(c.owners);
	return r;
}

int gc_arena_get_cached(void *cache_ud, const struct gc_target *t, struct kube_partial **ret)
{
	struct shm_arena *a = cache_ud;
	struct shm_stats st;
	int r = shm_reader_stats(a, &st);
	if (r < 0)
		return r;
	int type = -ENOENT;
	uint32_t gen = 0;
	for (uint64_t i = 0; i < st.n_types && type < 0; i++) {
		struct shm_type_info ti;
		char av[192];
		if (shm_reader_type_info(a, (uint16_t)i, &ti) < 0)
			continue;
		if (ti.group[0])
			snprintf(av, sizeof av, "%s/%s", ti.group, ti.version);
		else
			snprintf(av, sizeof av, "%s", ti.version);
		if (gc_str_eq(av, t->api_version) && gc_str_eq(ti.kind, t->kind)) {
			type = (int)i;
			gen = ti.gen;
		}
	}
	if (type < 0)
		return -ENOENT;
	struct shm_obj o = SHM_OBJ_INIT;
	r = shm_reader_get(a, (uint16_t)type, gc_s(t->ns), t->name, &o);
	if (r == 0 && o.type_gen != gen)
		r = -ENOENT; /* the slot was re-registered for another resource (T2) */
	if (r < 0) {
		shm_obj_release(&o);
		return r;
	}
	/* the record viewed in place as a kube_partial (shm/record-model.h): no JSON, no
	 * decoder; the owner references keep their tri-states */
	struct shm_meta_view *mv = malloc(sizeof(*mv));
	if (!mv) {
		shm_obj_release(&o);
		return -ENOMEM;
	}
	r = shm_meta_view_init(&o, mv); /* takes o */
	if (r < 0) {
		shm_meta_view_free(mv);
		free(mv);
		return r == -ENOMEM ? r : -ENOENT; /* an unreadable record: GET instead */
	}
	*ret = &mv->p;
	return 0;
}

void gc_arena_put_cached(void *cache_ud, struct kube_partial *p)
{
	(void)cache_ud;
	if (!p)
		return;
	/* p is the first member of the shm_meta_view gc_arena_get_cached allocated */
	struct shm_meta_view *mv = (struct shm_meta_view *)(void *)p;
	shm_meta_view_free(mv);
	free(mv);
}

void gc_arena_view_init(struct gc_arena_view *v, struct shm_arena *arena)
{
	*v = (struct gc_arena_view){.arena = arena, .node_obj = SHM_OBJ_INIT};
	v->view = (struct gc_graph_view){.ud = v, .node = av_node, .dependents = av_dependents};
}

void gc_arena_view_release(struct gc_arena_view *v)
{
	shm_obj_release(&v->node_obj);
	free(v->node_owners);
	v->node_owners = NULL;
	v->node_owners_cap = 0;
}
