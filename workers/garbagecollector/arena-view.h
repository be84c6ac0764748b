/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/garbagecollector/arena-view.h: struct gc_graph_view over the shared arena, for GC
 * worker processes.
 *
 * Design note.
 *   A worker needs, per queued uid, the node (identity, owners as observed, beingDeleted,
 *   deletingDependents) and the node's dependents with their owners and flags. Every observed
 *   object is in the arena: shm_reader_get_uid gives the record (identity = the record's type
 *   GVK + ns/name/uid, owners), the record header (shm/records.h) gives the deletion
 *   timestamp and the two GC finalizers, and shm_reader_list_dependents gives every object that
 *   references a uid. Virtual nodes are not in the arena: their identity arrives in the queue
 *   key (gc_queue_key_encode), so node() answers -ENOENT for them and the worker uses the key.
 *
 *   Differences from upstream's private graph, by construction:
 *     - deletingDependents is derived (deleting && foregroundDeletion present) instead of a
 *       flag that never clears; it differs only after the finalizer was removed while the
 *       object still exists, where upstream's flag stays set and its finalizer removal is a
 *       no-op;
 *     - dependents of a uid are all objects naming it, also those observed before the uid's
 *       own node existed, which is what upstream's dependents set converges to.
 *
 * Pointers returned by node() stay valid until the next node() call on the same view; those
 * passed to the dependents callback only during the callback. Not thread-safe (one per process).
 */
#include "shm/arena.h"
#include "workers/garbagecollector/worker.h"

struct gc_arena_view {
	struct gc_graph_view view; /* pass &v->view to struct gc_worker */
	struct shm_arena *arena;
	struct shm_obj node_obj; /* backs the last node() answer */
	struct kube_owner_ref *node_owners;
	char node_av[192], node_kind[64];
	size_t node_owners_cap;
};

/* patch.go getMetadata's store lookup over the arena: the object of the type whose
 * group/version/kind is t's apiVersion/kind (the monitor of exactly that version), by ns/name.
 * 0 and *ret, the record viewed in place (no JSON round trip; free it with
 * gc_arena_put_cached, never kube_object_free), -ENOENT (no such type or object, or a record
 * that does not read: GET instead), -ENOMEM. cache_ud is the struct shm_arena. */
int gc_arena_get_cached(void *cache_ud, const struct gc_target *t, struct kube_partial **ret);
void gc_arena_put_cached(void *cache_ud, struct kube_partial *p);

/* Binds v to arena (a reader mapping). */
void gc_arena_view_init(struct gc_arena_view *v, struct shm_arena *arena);
void gc_arena_view_release(struct gc_arena_view *v);
