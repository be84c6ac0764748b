/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/garbagecollector/graph.h: the dependency graph's state and the graph-change handler
 * (upstream graph.go and graph_builder.go processGraphChanges).
 *
 * Design note.
 *   Upstream keeps a private map uid -> node; each node has its identity, the ownerReferences
 *   last observed, the set of dependents, and three flags (beingDeleted, deletingDependents,
 *   virtual). One goroutine mutates it (processGraphChanges), workers read it.
 *
 *   kcmd splits that state by where it can come from:
 *     - owners of an observed object and the dependents of any uid are the arena's records
 *       and owner-uid index (shm_reader_get_uid, shm_reader_list_dependents); beingDeleted and
 *       the finalizers are in every record's header (shm/records.h);
 *     - what the arena cannot know is GC-private: virtual nodes (owners referenced but never
 *       observed, with the identity guessed from the reference), the sticky deletingDependents
 *       flag, and the "observed" mark.
 *   This module is the graph-builder's logic over a struct gc_graph that holds a node per uid
 *   exactly as upstream does. It is the reference implementation of the semantics and what the
 *   unit tests drive; informerd runs it single-threaded (handlers are called on its one
 *   thread, like processGraphChanges). Workers never touch it directly: they read a
 *   struct gc_graph_view (worker.h), which this module implements for tests and which the
 *   arena + overlay implements in production (see docs/garbagecollector.md "seams").
 *
 *   Nodes are mutated in place instead of cloned: upstream clones because its queues hold node
 *   pointers; kcmd's queues hold uids (the ipc queue carries strings), so a worker always reads
 *   the current node of a uid. Where upstream would process a stale virtual copy, kcmd processes
 *   the current identity: the same decisions, one stale GET fewer.
 *
 * Not thread-safe; one mutator. Errors: -ENOMEM (the graph is left consistent: a node that
 * could not be built is not inserted; a dependents set that could not grow is reported).
 */
#include <stdbool.h>
#include <stddef.h>

#include "kube/model.h"
#include "workers/garbagecollector/absent-cache.h"
#include "workers/garbagecollector/identity.h"

struct gc_node {
	struct gc_ref id;              /* owned (gc_ref_copy) */
	struct kube_owner_ref *owners; /* owned deep copies, as last observed */
	size_t n_owners;
	bool virtual_;            /* referenced, never observed by an informer */
	bool being_deleted;       /* deletionTimestamp seen (one-way) */
	bool deleting_dependents; /* being deleted with foregroundDeletion (one-way) */
	struct gc_node **deps;    /* dependents (a set) */
	size_t n_deps, cap_deps;
};

struct gc_graph;

int gc_graph_new(struct gc_graph **ret);
void gc_graph_free(struct gc_graph *g);
struct gc_node *gc_graph_get(const struct gc_graph *g, const char *uid);
size_t gc_graph_len(const struct gc_graph *g);
/* Checks upstream's invariant: every dependent D of N lists N's uid in its owners, and every
 * owner uid of N present in the graph has N among its dependents. Returns the number of
 * violations (0 healthy). */
size_t gc_graph_check(const struct gc_graph *g);
/* Blocking dependents of n: dependents whose ownerRef to n's uid has blockOwnerDeletion=true
 * (graph.go blockingDependents; a dependent with two such refs is listed twice, as upstream). */
size_t gc_node_blocking_dependents(const struct gc_node *n, struct gc_node **out, size_t cap);

/* ---- events (graph_builder.go event) ------------------------------------------------------ */
enum gc_event_type {
	GC_EVENT_ADD = 0,
	GC_EVENT_UPDATE,
	GC_EVENT_DELETE,
};

/* The parts of an object the graph builder reads (meta.Accessor). */
struct gc_obj {
	const char *uid, *name, *ns;
	const struct kube_owner_ref *owners;
	size_t n_owners;
	bool being_deleted; /* deletionTimestamp != nil */
	bool fin_orphan, fin_foreground;
};
/* From decoded metadata. */
struct gc_obj gc_obj_from_meta(const struct kube_object_meta *m);

struct gc_event {
	enum gc_event_type type;
	bool virtual_; /* made by a worker (404 / uid mismatch), not by an informer */
	/* the monitor's GVK as an identity would carry it: "v1", "apps/v1"; the kind */
	const char *api_version, *kind;
	struct gc_obj obj;
	const struct gc_obj *old; /* UPDATE: the previous object; NULL otherwise */
};

/* What processing an event asks for (the builder's queues and its event recorder). */
struct gc_sink {
	void *ud;
	/* attemptToDelete.Add(uid) (rate_limited: AddRateLimited) */
	void (*attempt_to_delete)(void *ud, const char *uid, bool rate_limited);
	/* attemptToOrphan.Add(uid) */
	void (*attempt_to_orphan)(void *ud, const char *uid);
	/* Optional: attemptToDelete.Add(uid) for a dependent of a node just removed, with the
	 * removed owner's identity (which the builder put in its absentOwnerCache). kcmd's workers
	 * are other processes with caches of their own: the identity travels with the key so that
	 * the worker treats that owner as absent before any REST mapping, as upstream's shared
	 * cache does (an owner whose CRD was deleted cannot be mapped any more). NULL: the
	 * builder calls attempt_to_delete. */
	void (*attempt_to_delete_absent_owner)(void *ud, const char *uid,
	                                       const struct gc_ref *owner);
	/* A Warning event on `involved` (kind/apiVersion/ns/name/uid of the dependent). */
	void (*warning)(void *ud, const struct gc_ref *involved, const char *reason,
	                const char *message);
};

struct gc_builder {
	struct gc_graph *graph;
	struct gc_absent_cache *absent; /* may be NULL (then nothing is cached) */
	struct gc_sink sink;
	/* counters for tests and metrics */
	unsigned long events, virtual_nodes_created, ignored_deletes;
};

/* processGraphChanges for one event. Returns 0 or -ENOMEM (the event is then only partly
 * applied; the caller should treat it like a relist: re-deliver the object). -EINVAL when the
 * object has no uid (upstream: "cannot access obj", dropped). */
int gc_builder_process(struct gc_builder *b, const struct gc_event *ev);

/* ---- pure pieces exposed for tests -------------------------------------------------------- */
/* partitionDependents: split deps by whether they refer to `owner` with matching coordinates
 * (and a compatible namespace). A dependent may land in both lists. The arrays are malloc'd
 * (free them); counts in *n_match / *n_mismatch. 0 or -ENOMEM. */
int gc_partition_dependents(struct gc_node *const *deps, size_t n, const struct gc_ref *owner,
                            struct gc_node ***match, size_t *n_match, struct gc_node ***mismatch,
                            size_t *n_mismatch);
/* getAlternateOwnerIdentity: the alternate identity the disagreeing dependents use for the
 * absent identity's uid (the first after `absent` in gc_ref_cmp order, else the first).
 * Returns true and *ret (strings point into the dependents' refs / nodes) or false. */
bool gc_alternate_owner_identity(struct gc_node *const *deps, size_t n, const struct gc_ref *absent,
                                 struct gc_ref *ret);
/* referencesDiffs by uid. Each output array is malloc'd (indexes into old/new); 0 / -ENOMEM. */
struct gc_ref_diff {
	size_t *added; /* indexes into new */
	size_t n_added;
	size_t *removed; /* indexes into old */
	size_t n_removed;
	size_t (*changed)[2]; /* {old index, new index} */
	size_t n_changed;
};
int gc_references_diff(const struct kube_owner_ref *old, size_t n_old,
                       const struct kube_owner_ref *new_, size_t n_new, struct gc_ref_diff *ret);
void gc_ref_diff_free(struct gc_ref_diff *d);
/* deletionStartsWithFinalizer: new is being deleted with finalizer f, and old is absent, was
 * not being deleted, or lacked f. */
bool gc_deletion_starts_with(const struct gc_obj *old, const struct gc_obj *new_, const char *f);
