/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/garbagecollector/handlers.c: informer events -> graph changes (see handlers.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shm/records.h"
#include "workers/garbagecollector/handlers.h"

#include "kcmd/client.h"
#include "kube/client.h"
#include "kube/encode.h"
#include "lib/fence-env.h"
#include "lib/log.h"
#include "workers/garbagecollector/kube-api.h"
#include "workers/garbagecollector/shard.h"
#include "workers/garbagecollector/worker.h"

void (*gc_handlers_warning_hook)(const struct gc_ref *involved, const char *reason,
                                 const char *message);
const struct gc_shard *gc_handlers_shard_override;

const char *gc_api_version_of(const char *group, const char *version, char *buf, size_t len)
{
	if (group && group[0])
		snprintf(buf, len, "%s/%s", group, gc_s(version));
	else
		snprintf(buf, len, "%s", gc_s(version));
	return buf;
}

/* The arena copy of an object as the builder reads it; owners are copied into *ret_owners
 * (malloc'd, free it). */
static int obj_from_shm(const struct shm_obj *o, struct gc_obj *ret,
                        struct kube_owner_ref **ret_owners)
{
	struct kube_owner_ref *owners = calloc(o->n_owners + 1, sizeof *owners);
	if (!owners)
		return -ENOMEM;
	for (size_t i = 0; i < o->n_owners; i++)
		owners[i] = (struct kube_owner_ref){
		        .api_version = o->owners[i].api_version,
		        .kind = o->owners[i].kind,
		        .name = o->owners[i].name,
		        .uid = o->owners[i].uid,
		        .controller = o->owners[i].controller,
		        .block_owner_deletion = o->owners[i].block_owner_deletion,
		};
	*ret = (struct gc_obj){.uid = o->uid,
	                       .name = o->name,
	                       .ns = o->ns,
	                       .owners = owners,
	                       .n_owners = o->n_owners};
	struct shm_rec_view v;
	if (shm_rec_parse(o->payload, o->payload_len, &v) == 0) {
		ret->being_deleted = v.hdr.deletion_ts != 0;
		ret->fin_orphan = (v.hdr.flags & SHM_REC_FIN_ORPHAN) != 0;
		ret->fin_foreground = (v.hdr.flags & SHM_REC_FIN_FOREGROUND) != 0;
	}
	*ret_owners = owners;
	return 0;
}

int gc_handle_event(struct gc_builder *b, const struct inf_event *ev)
{
	char av[256];
	struct gc_event ge = {
	        .api_version = gc_api_version_of(ev->res ? ev->res->group : NULL,
	                                         ev->res ? ev->res->version : NULL, av, sizeof av),
	        .kind = ev->res ? ev->res->kind : NULL,
	};
	struct kube_owner_ref *old_owners = NULL, *obj_owners = NULL;
	struct gc_obj old;
	int r = 0;
	switch (ev->kind) {
	case INF_EVENT_ADD:
		ge.type = GC_EVENT_ADD;
		break;
	case INF_EVENT_UPDATE:
		ge.type = GC_EVENT_UPDATE;
		break;
	case INF_EVENT_DELETE:
		/* the type left discovery, the object was not deleted: upstream's Sync stops that
		 * monitor without delete events and the graph keeps its nodes, so the dependents of
		 * these objects are only ever judged by a live lookup of their owners */
		if (ev->dropped)
			return 0;
		ge.type = GC_EVENT_DELETE;
		break;
	default:
		return -EINVAL;
	}
	if (ev->meta) {
		ge.obj = gc_obj_from_meta(ev->meta);
	} else if (ev->old) {
		/* a tombstone: the last known state (DeletedFinalStateUnknown unwrapped) */
		r = obj_from_shm(ev->old, &ge.obj, &obj_owners);
		if (r < 0)
			return r;
	} else {
		return -EINVAL; /* upstream: "cannot access obj", dropped */
	}
	if (ev->kind == INF_EVENT_UPDATE && ev->old) {
		r = obj_from_shm(ev->old, &old, &old_owners);
		if (r < 0)
			goto out;
		ge.old = &old;
	}
	r = gc_builder_process(b, &ge);
out:
	free(old_owners);
	free(obj_owners);
	return r;
}

int gc_handle_virtual_delete_key(struct gc_builder *b, const char *key)
{
	char scratch[IPC_QUEUE_KEY_MAX + 1];
	struct gc_ref id;
	bool virt;
	if (gc_queue_key_decode(key, &id, &virt, scratch, sizeof scratch) < 0 || !virt)
		return -EINVAL;
	struct gc_event ev = {.type = GC_EVENT_DELETE,
	                      .virtual_ = true,
	                      .api_version = id.api_version,
	                      .kind = id.kind,
	                      .obj = {.uid = id.uid, .name = id.name, .ns = id.ns}};
	return gc_builder_process(b, &ev);
}

/* ---- the table ----------------------------------------------------------------------------- */
enum { Q_DELETE = 0, Q_ORPHAN = 1 };

struct state {
	struct gc_graph *graph;
	struct gc_absent_cache *absent;
	struct gc_builder b;
	struct inf_handler_ctx *ctx;
	unsigned long dropped_keys, errors, warnings, seeded;
	bool seed_done;
	/* --shard-ranges (shard.h): the ranges this instance owns, asked at each key; the graph
	 * as a view for the decisions that look at dependents */
	struct gc_shard shard;
	struct gc_graph_view view;
	unsigned long other_ranges; /* keys and Warnings left to the owners of other ranges */
};

static bool fence_range_owned(void *ud, unsigned range)
{
	(void)ud;
	return kcmd_shard_range_owned(range);
}

static const struct gc_shard *shard_of(const struct state *s)
{
	return gc_handlers_shard_override ? gc_handlers_shard_override : &s->shard;
}

/* Whether the item uid (its node in this instance's graph) is this instance's to queue on q. */
static bool takes(struct state *s, size_t q, const struct gc_node *n)
{
	const struct gc_shard *sh = shard_of(s);
	if (!n || sh->nranges == 0)
		return true;
	bool t = q == Q_ORPHAN || n->virtual_ ? gc_shard_takes_with_dependents(sh, &s->view, &n->id)
	                                      : gc_shard_ns_owned(sh, n->id.ns);
	if (!t)
		s->other_ranges++;
	return t;
}

static void add_key(struct state *s, size_t q, const char *uid, bool rate_limited)
{
	char key[IPC_QUEUE_KEY_MAX + 1];
	struct gc_node *n = gc_graph_get(s->graph, uid);
	struct gc_ref id = {.uid = uid};
	if (!takes(s, q, n))
		return;
	if (gc_queue_key_encode(n ? &n->id : &id, n && n->virtual_, IPC_QUEUE_KEY_MAX, key,
	                        sizeof key) < 0 ||
	    q >= s->ctx->n_queues) {
		s->dropped_keys++;
		return;
	}
	int r = rate_limited ? ipc_queue_owner_add_rate_limited(s->ctx->queues[q], key)
	                     : ipc_queue_owner_add(s->ctx->queues[q], key);
	if (r < 0)
		s->dropped_keys++;
}

static void sink_delete(void *ud, const char *uid, bool rate_limited)
{
	add_key(ud, Q_DELETE, uid, rate_limited);
}

/* a dependent of a removed node: the owner's identity rides in the key (see graph.h) */
static void sink_delete_absent_owner(void *ud, const char *uid, const struct gc_ref *owner)
{
	struct state *s = ud;
	struct gc_node *n = gc_graph_get(s->graph, uid);
	char key[IPC_QUEUE_KEY_MAX + 1];
	if (!takes(s, Q_DELETE, n))
		return;
	if ((n && n->virtual_) ||
	    gc_queue_key_encode_absent(uid, owner, IPC_QUEUE_KEY_MAX, key, sizeof key) < 0) {
		add_key(s, Q_DELETE, uid, false);
		return;
	}
	if (Q_DELETE >= s->ctx->n_queues || ipc_queue_owner_add(s->ctx->queues[Q_DELETE], key) < 0)
		s->dropped_keys++;
}

static void sink_orphan(void *ud, const char *uid)
{
	add_key(ud, Q_ORPHAN, uid, false);
}

/* A Warning Event as client-go's recorder writes it (component garbage-collector-controller; a
 * cluster-scoped object's event in "default"), through the process's recorder (lib/evrec.h: the
 * correlator, then the dispatcher's sink thread), never waiting here. */
static void post_warning(struct inf_handler_ctx *ctx, const struct gc_ref *involved,
                         const char *reason, const char *message)
{
	struct kcmd_object_ref ref = {.api_version = involved->api_version,
	                              .kind = involved->kind,
	                              .ns = involved->ns,
	                              .name = involved->name,
	                              .uid = involved->uid};
	if (ctx->kc)
		(void)kcmd_event_record(ctx->kc, "garbage-collector-controller", &ref,
		                        KCMD_EVENT_WARNING, reason, "%s", message);
}

static void sink_warning(void *ud, const struct gc_ref *involved, const char *reason,
                         const char *message)
{
	struct state *s = ud;
	if (!gc_shard_takes_event(shard_of(s), involved)) {
		s->other_ranges++; /* the instance owning the Event's namespace writes it */
		return;
	}
	s->warnings++;
	if (gc_handlers_warning_hook)
		gc_handlers_warning_hook(involved, reason, message);
	else if (s->ctx)
		post_warning(s->ctx, involved, reason, message);
}

static int table_init(struct inf_handler_ctx *ctx)
{
	struct state *s = calloc(1, sizeof *s);
	if (!s)
		return -ENOMEM;
	if (gc_graph_new(&s->graph) < 0 ||
	    gc_absent_cache_new(GC_ABSENT_CACHE_SIZE, &s->absent) < 0) {
		gc_graph_free(s->graph);
		free(s);
		return -ENOMEM;
	}
	s->ctx = ctx;
	s->shard = (struct gc_shard){.nranges = kcmd_shard_ranges(), .owned = fence_range_owned};
	gc_graph_view_init(&s->view, s->graph);
	s->b = (struct gc_builder){
	        .graph = s->graph,
	        .absent = s->absent,
	        .sink = {.ud = s,
	                 .attempt_to_delete = sink_delete,
	                 .attempt_to_delete_absent_owner = sink_delete_absent_owner,
	                 .attempt_to_orphan = sink_orphan,
	                 .warning = sink_warning},
	};
	ctx->state = s;
	return 0;
}

static void table_fini(struct inf_handler_ctx *ctx)
{
	struct state *s = ctx->state;
	if (!s)
		return;
	gc_graph_free(s->graph);
	gc_absent_cache_free(s->absent);
	free(s);
	ctx->state = NULL;
}

static void on_event(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	struct state *s = ctx->state;
	s->ctx = ctx;
	if (gc_handle_event(&s->b, ev) < 0)
		s->errors++;
}

/* ---- start-up: the graph from the arena -----------------------------------------------------
 * Upstream builds its graph from each monitor's initial LIST: one add event per object. A
 * restarted informerd resumes its watches from the arena instead, so objects that do not
 * change would never reach the builder (their owners' deletions would then be ignored as
 * unknown uids, and keys lost with the old queue owner would not come back). So when the
 * attempt-to-delete queue's owner attaches, every object in the arena is fed to the builder as
 * an add event, as an initial LIST would: missing owners become virtual nodes and are queued,
 * objects being deleted with the orphan / foregroundDeletion finalizer start their transitions.
 * Objects without owner references go first, so that an observed owner usually exists before
 * its dependents arrive (fewer virtual nodes to verify); the end state does not depend on it. */
struct seed {
	struct state *s;
	char av[256];
	const char *kind;
	bool with_owners;
};

static int seed_visit(const struct shm_obj *o, void *ud)
{
	struct seed *c = ud;
	struct kube_owner_ref *owners = NULL;
	struct gc_event ge = {.type = GC_EVENT_ADD, .api_version = c->av, .kind = c->kind};

	if ((o->n_owners > 0) != c->with_owners)
		return 0;
	if (obj_from_shm(o, &ge.obj, &owners) < 0) {
		c->s->errors++;
		return 0;
	}
	if (gc_builder_process(&c->s->b, &ge) < 0)
		c->s->errors++;
	else
		c->s->seeded++;
	free(owners);
	return 0;
}

/* --shard-ranges: an owner's deletion transition is processed when the owner is seeded, before
 * its dependents (owners go first), so its range decision (a cluster-scoped owner's orphaning is
 * taken by any instance owning a dependent's range) saw no dependent, and a foreground owner
 * queued none. Once every object is in the graph, each object being deleted with `orphan` is
 * queued for orphaning again, and each one being deleted with `foregroundDeletion` queues its
 * dependents again, each through the range filter (duplicates collapse in the queues). */
static int seed_transitions_visit(const struct shm_obj *o, void *ud)
{
	struct seed *c = ud;
	struct shm_rec_view v;
	struct gc_node *n = gc_graph_get(c->s->graph, o->uid);
	if (!n || shm_rec_parse(o->payload, o->payload_len, &v) < 0 || !v.hdr.deletion_ts)
		return 0;
	if (v.hdr.flags & SHM_REC_FIN_ORPHAN)
		add_key(c->s, Q_ORPHAN, o->uid, false);
	else if (v.hdr.flags & SHM_REC_FIN_FOREGROUND)
		for (size_t i = 0; i < n->n_deps; i++)
			add_key(c->s, Q_DELETE, n->deps[i]->id.uid, false);
	return 0;
}

unsigned long gc_handlers_seed(struct inf_handler_ctx *ctx)
{
	struct state *s = ctx ? ctx->state : NULL;
	struct shm_stats st;
	if (!s || !ctx->arena || s->seed_done || shm_reader_stats(ctx->arena, &st) < 0)
		return 0;
	s->seed_done = true;
	/* the negative control of e2e TestGC_InformerdKilledDuringCreation, never set otherwise */
	const char *no_seed = getenv("KCMD_TEST_GC_NO_SEED");
	if (no_seed && !strcmp(no_seed, "1")) {
		log_warning(
		        "KCMD_TEST_GC_NO_SEED=1: the graph is not seeded from the arena (a test "
		        "seam: objects that do not change after a restart stay unknown)");
		return 0;
	}
	/* with ranges, a third pass: the transitions again, once every dependent is in the graph */
	int passes = shard_of(s)->nranges ? 3 : 2;
	for (int pass = 0; pass < passes; pass++)
		for (uint64_t t = 0; t < st.n_types; t++) {
			struct shm_type_info ti;
			if (shm_reader_type_info(ctx->arena, (uint16_t)t, &ti) < 0 || !ti.count ||
			    gc_resource_ignored(ti.group, ti.resource))
				continue;
			struct seed c = {.s = s, .kind = ti.kind, .with_owners = pass == 1};
			gc_api_version_of(ti.group, ti.version, c.av, sizeof c.av);
			(void)shm_reader_list(ctx->arena, (uint16_t)t,
			                      pass < 2 ? seed_visit : seed_transitions_visit, &c);
		}
	return s->seeded;
}

static void table_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)restarted;
	if (queue == Q_DELETE)
		(void)gc_handlers_seed(ctx);
}

struct gc_builder *gc_handlers_builder(struct inf_handler_ctx *ctx)
{
	struct state *s = ctx ? ctx->state : NULL;
	return s ? &s->b : NULL;
}

static const char *const gc_queue_names[] = {"gc-attempt-to-delete", "gc-attempt-to-orphan", NULL};
/* GC workers -> the graph builder: virtual delete events (attemptToDelete found an owner gone) */
static const char *const gc_consumed[] = {"gc-graph-changes", NULL};

static int table_on_key(struct inf_handler_ctx *ctx, size_t consumed, const char *key)
{
	struct gc_builder *b = gc_handlers_builder(ctx);
	(void)consumed;
	return b ? gc_handle_virtual_delete_key(b, key) : -ENOENT;
}

static const struct inf_handler_entry gc_entries[] = {
        {.group = NULL,
         .resource = "*",
         .on_add = on_event,
         .on_update = on_event,
         .on_delete = on_event},
};

const struct inf_handler_table gc_handler_table = {
        .controller = "garbagecollector",
        .queues = gc_queue_names,
        .entries = gc_entries,
        .n_entries = 1,
        .init = table_init,
        .fini = table_fini,
        .resync = table_resync,
        .consumes = gc_consumed,
        .on_key = table_on_key,
};
