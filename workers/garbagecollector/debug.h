/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/garbagecollector/debug.h: what kcmd serves about its garbage collector: the
 * dependency graph in Graphviz DOT (upstream dump.go) and the workqueue metric names.
 *
 * Design note.
 *   Upstream serves GET /debug/controllers/garbage-collector-controller/graph[?uid=...] from its
 *   private graph (uidToNode). kcmd's graph is the arena: every observed object with its owner
 *   references (the owner/dependents indexes). The manager maps the arena read-only and renders
 *   it here, so no GC process is involved. The graph is rebuilt per request:
 *     - an observed node per arena object (first occurrence of a uid), group/version/kind from
 *       its resource, beingDeleted = deletionTimestamp set, deletingDependents = deleting with
 *       the foregroundDeletion finalizer (as the arena view answers the workers);
 *     - a virtual node per referenced owner uid that is not in the arena, with the reference's
 *       apiVersion/kind/name and the namespace of the first dependent (by uid) naming it:
 *       upstream's builder makes exactly such a node for every owner it has not observed. (A
 *       virtual node that upstream already verified absent and removed is gone there but is
 *       still drawn here while a dependent names it.)
 *   Output follows dump.go byte for byte: vertices with owners or dependents only, sorted by
 *   uid; edges dependent -> owner sorted by (from, to); Go %q quoting; ?uid= selects the
 *   component reachable over owners and dependents; an owner outside the selection is a
 *   "missing" vertex, one per reference (as upstream). Not copied: upstream's map overwrite
 *   in toDOTNodesAndEdges that can redirect edges to a missing vertex (random order there).
 */
#include <stdbool.h>
#include <stddef.h>

#include "shm/arena.h"

struct gc_dot_vertex {
	const char *uid, *group, *version, *kind, *ns, *name;
	bool missing, being_deleted, deleting_dependents, virtual_;
};
struct gc_dot_edge {
	const char *from, *to;
};

/* marshalDOT over vertices and edges as given (already sorted). 0 and a malloc'd *ret (NUL-
 * terminated, *len bytes), or -ENOMEM. */
int gc_dot_marshal(const struct gc_dot_vertex *v, size_t nv, const struct gc_dot_edge *e, size_t ne,
                   char **ret, size_t *len);

/* The graph of the arena (all of it, or the component of uids when n_uids > 0) as DOT.
 * 0 and *ret (malloc'd), -ENOMEM, or a negative shm error. */
int gc_dot_render_arena(struct shm_arena *a, const char *const *uids, size_t n_uids, char **ret,
                        size_t *len);

/* Upstream's workqueue name for a kcmd GC queue ("gc-attempt-to-delete" ->
 * "garbage_collector_attempt_to_delete", ...); other names are returned unchanged. */
const char *gc_queue_metric_name(const char *queue);
