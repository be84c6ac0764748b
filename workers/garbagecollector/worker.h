/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/garbagecollector/worker.h: the attemptToDelete and attemptToOrphan workers
 * (upstream garbagecollector.go, operations.go, patch.go) as decisions driven over two seams.
 *
 * Design note.
 *   A GC worker process takes a uid from the gc-attempt-to-delete (or -orphan) queue and runs
 *   gc_attempt_to_delete_worker() (or gc_attempt_to_orphan_worker()); the returned action is
 *   what it tells the queue when it calls Done: Forget or AddRateLimited.
 *
 *   Seam 1, struct gc_graph_view: read-only access to the graph (the node of a uid, the
 *   dependents of a uid). Tests and the reference builder back it with struct gc_graph
 *   (gc_graph_view_init); production backs it with the arena (records and owner index) plus
 *   the GC-private overlay (virtual nodes, deletingDependents), see docs/garbagecollector.md.
 *
 *   Seam 2, struct gc_api: the API server (REST mapping, uncached metadata GET, PATCH, DELETE
 *   with preconditions, the informer-store lookup used by the merge-patch fallback) and the
 *   two things a worker produces besides API calls: a virtual delete event for the graph
 *   builder, and plain Adds to attemptToDelete. Calls are synchronous; the process decides how
 *   to run them (kube_client_request, or its loop).
 *
 *   Everything in between is pure and follows upstream line by line: the live GET first, the
 *   classification of owners into solid / dangling / waitingForDependentsDeletion with the
 *   absentOwnerCache consulted before REST mapping, the patch that removes dangling and
 *   waiting references (SMP, JSON-merge fallback on 415), the cycle breaker, the propagation
 *   policy, the DELETE with uid + resourceVersion preconditions and the one retry without the
 *   resourceVersion after a 409 when only the resourceVersion moved, a 404 from DELETE turned
 *   into a virtual delete event (v1.36+), finalizer removal with client-go's DefaultBackoff
 *   retry-on-conflict, and orphaning.
 *
 *   Divergence kept on purpose: upstream orphans the dependents with one goroutine each; here
 *   they are patched one after another (same calls, same errors, same aggregation).
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "kube/client.h"
#include "kube/model.h"
#include "workers/garbagecollector/absent-cache.h"
#include "workers/garbagecollector/graph.h"
#include "workers/garbagecollector/identity.h"

/* ---- seam 1: the graph -------------------------------------------------------------------- */
struct gc_node_view {
	struct gc_ref id;
	const struct kube_owner_ref *owners; /* as last observed (graph, not live) */
	size_t n_owners;
	bool virtual_, being_deleted, deleting_dependents;
	size_t n_dependents;
};

typedef int (*gc_dep_fn)(const struct gc_node_view *dep, void *ud);

struct gc_graph_view {
	void *ud;
	/* 0 and *ret, or -ENOENT. Strings stay valid until the graph changes. */
	int (*node)(void *ud, const char *uid, struct gc_node_view *ret);
	/* Calls fn for each dependent of uid (fn NULL: only count); a negative fn return stops
	 * and is returned. Returns the number of dependents. */
	int (*dependents)(void *ud, const char *uid, gc_dep_fn fn, void *fn_ud);
};
/* A view over the in-memory graph (valid while g lives). */
void gc_graph_view_init(struct gc_graph_view *v, struct gc_graph *g);

/* ---- seam 2: the API server ----------------------------------------------------------------- */
/* Where a call goes: the resource is the executor's REST mapping of apiVersion/kind; ns is
 * already resolved ("" for cluster-scoped types). */
struct gc_target {
	const char *api_version, *kind, *ns, *name;
};

/* gc_api.get: the resource is not served (not produced by gc_kube_api today: every 404 is
 * NotFound there, as client-go's IsNotFound; docs/garbagecollector.md). The worker handles it
 * as upstream's restMappingError (the kind cannot be resolved: nothing is judged absent, the
 * key is retried with backoff). */
#define GC_ERR_NOT_SERVED (-ENXIO)

struct gc_api {
	void *ud;
	/* REST-map apiVersion/kind: 0 and *ret_namespaced, or -ENOENT (no mapping: a
	 * restMappingError, retried forever). */
	int (*rest_map)(void *ud, const char *api_version, const char *kind, bool *ret_namespaced);
	/* Uncached metadata GET: 0 and *ret (freed by the caller with kube_object_free), or the
	 * negative errno of kube/errors.h (-ENOENT for 404 with a NotFound Status: the object is
	 * absent), or GC_ERR_NOT_SERVED (404 without a Status: the apiserver has no route for the
	 * resource, e.g. a CRD version no longer served, and says nothing about the object). */
	int (*get)(void *ud, const struct gc_target *t, struct kube_partial **ret);
	/* The informer store's copy (patch.go getMetadata): 0 and *ret, or -ENOENT when the type
	 * has no monitor or the store lacks the key (the driver then GETs). May be NULL. */
	int (*get_cached)(void *ud, const struct gc_target *t, struct kube_partial **ret);
	/* Frees what get_cached returned (a view of the cache, not a decoded object); NULL:
	 * kube_object_free. */
	void (*put_cached)(void *ud, struct kube_partial *p);
	/* PATCH with body: 0 or -errno (-EMEDIUMTYPE for 415, -ESTALE for 409, -ENOENT 404). */
	int (*patch)(void *ud, const struct gc_target *t, enum kube_patch_type type,
	             const char *body);
	/* DELETE with DeleteOptions{preconditions{uid, resourceVersion (NULL: none)},
	 * propagationPolicy}: 0 or -errno. */
	int (*delete_)(void *ud, const struct gc_target *t, const char *uid, const char *rv,
	               const char *policy);
	/* enqueueVirtualDeleteEvent(identity) on the graph builder's input. */
	void (*virtual_delete)(void *ud, const struct gc_ref *id);
	/* attemptToDelete.Add(uid) (plain Add, from processDeletingDependentsItem). */
	void (*attempt_to_delete)(void *ud, const char *uid);
	/* Sleep between finalizer-removal attempts (may be NULL: no sleep, for tests). */
	void (*sleep_ms)(void *ud, double ms);
};

/* ---- outcomes --------------------------------------------------------------------------- */
enum gc_outcome {
	GC_OK = 0,
	GC_VIRTUAL_DELETE_ENQUEUED, /* enqueuedVirtualDeleteEventErr */
	GC_CLUSTER_CHILD_NS_OWNER,  /* namespacedOwnerOfClusterScopedObjectErr */
	GC_REST_MAPPING,            /* restMappingError */
	GC_FAILED,                  /* any other error (err, msg) */
};

/* What attemptToDeleteItem did (for tests, logs and metrics). */
enum gc_action {
	GC_ACT_NONE = 0,
	GC_ACT_WAIT_DELETION,    /* being deleted, not foreground: wait for the delete event */
	GC_ACT_NO_OWNERS,        /* live object has no ownerReferences */
	GC_ACT_SOLID,            /* a solid owner, nothing dangling or waiting */
	GC_ACT_REMOVE_REFS,      /* patched away dangling + waiting references */
	GC_ACT_DELETE,           /* deleted with `policy` */
	GC_ACT_REMOVE_FINALIZER, /* foreground owner with no blocking dependents */
	GC_ACT_ENQUEUE_BLOCKING, /* foreground owner: blocking dependents queued */
	GC_ACT_ORPHANED,         /* attemptToOrphan: dependents released, orphan finalizer gone */
	/* --shard-ranges (shard.h): the dependents of this instance's ranges released; the
	 * owner's range is another instance's, which removes the finalizer */
	GC_ACT_ORPHANED_OWN_RANGES,
	/* --shard-ranges: this instance owns the owner's range and released its dependents, but
	 * the graph still shows dependents in other ranges referencing the owner (their ranges'
	 * owners release them): the finalizer stays, the owner is looked at again later */
	GC_ACT_ORPHAN_WAIT,
};

struct gc_result {
	enum gc_outcome outcome;
	int err;       /* the errno behind GC_FAILED / GC_REST_MAPPING */
	char msg[768]; /* the error text upstream would log */
	enum gc_action action;
	const char *policy; /* GC_ACT_DELETE: GC_POLICY_* */
	bool unblocked;     /* the cycle breaker patched blockOwnerDeletion=false first */
	size_t n_solid, n_dangling, n_waiting;
};

enum gc_queue_action {
	GC_REQUEUE = 0, /* AddRateLimited */
	GC_FORGET,      /* Forget */
	GC_WAIT,        /* Forget, then AddAfter(GC_ORPHAN_WAIT_USEC) (GC_ACT_ORPHAN_WAIT) */
};
/* How long an owner waits for other ranges to release its dependents before it is looked at
 * again (a fixed period, not the rate limiter's growing backoff: the wait ends by itself). */
#define GC_ORPHAN_WAIT_USEC 1000000ull

struct gc_shard; /* shard.h */

struct gc_worker {
	const struct gc_graph_view *graph;
	const struct gc_api *api;
	struct gc_absent_cache *absent; /* this process's cache; may be NULL */
	double (*rand01)(void *ud);     /* jitter source for the finalizer backoff; NULL: none */
	void *rand_ud;
	/* --shard-ranges: the ranges this instance owns; NULL (or nranges 0): all. Only
	 * attemptToOrphan reads it (the split above); which keys reach the worker at all is
	 * decided before it (gc_shard_takes_key). */
	const struct gc_shard *shard;
};

/* ---- queue keys ------------------------------------------------------------------------------
 * An observed node is queued by its uid. A virtual node (not in the arena, so a worker process
 * cannot look it up) carries its guessed identity in the key:
 *   "v" US apiVersion US kind US namespace US name US uid        (US = 0x1f)
 * When that would exceed max_len the plain uid is used (the worker can then only resolve it
 * through a view that knows virtual nodes). */
#define GC_KEY_SEP '\x1f'
/* Writes the key into buf (size >= max_len + 1). Returns its length or -ENOBUFS. */
int gc_queue_key_encode(const struct gc_ref *id, bool virtual_, size_t max_len, char *buf,
                        size_t size);
/* Parses a key: *ret_virtual tells the form; for a virtual key *ret points into `scratch`
 * (a copy of key with separators replaced by NULs, size >= strlen(key) + 1); for a uid key
 * ret->uid = key and the other fields are NULL. 0 or -EINVAL / -ENOBUFS. */
int gc_queue_key_decode(const char *key, struct gc_ref *ret, bool *ret_virtual, char *scratch,
                        size_t size);

/* A dependent queued because its owner's node was removed carries the owner's identity (the
 * builder's absentOwnerCache entry, see gc_sink.attempt_to_delete_absent_owner):
 *   "a" US apiVersion US kind US namespace US name US ownerUID US dependentUID
 * Falls back to the plain dependent uid when longer than max_len. Returns the length or
 * -ENOBUFS. */
int gc_queue_key_encode_absent(const char *dep_uid, const struct gc_ref *owner, size_t max_len,
                               char *buf, size_t size);
/* Parses an "a" key: *owner points into scratch (size >= strlen(key) + 1), *dep_uid too.
 * 0, -EINVAL (not such a key or malformed) or -ENOBUFS. */
int gc_queue_key_decode_absent(const char *key, struct gc_ref *owner, const char **dep_uid,
                               char *scratch, size_t size);

/* attemptToDeleteWorker for the queued key (uid, a virtual key, or an "a" key: its owner
 * identity is added to w->absent first, then the dependent uid is processed): skips a virtual node
 * that left the graph or got observed, runs attemptToDeleteItem, maps the outcome to Forget /
 * AddRateLimited (a virtual node that is still virtual after a clean pass is requeued: issue
 * #56121). A uid not in the graph at all is forgotten (kcmd: queue items are uids, see graph.h).
 * res may be NULL. */
enum gc_queue_action gc_attempt_to_delete_worker(struct gc_worker *w, const char *key,
                                                 struct gc_result *res);

/* attemptToDeleteItem for `item` (the graph's node). Fills *res; returns res->outcome. */
enum gc_outcome gc_attempt_to_delete_item(struct gc_worker *w, const struct gc_node_view *item,
                                          struct gc_result *res);

/* attemptToOrphanWorker: strip the owner's uid from every dependent the graph knows, then
 * remove the "orphan" finalizer. GC_FORGET on success. A uid not in the graph is forgotten.
 * With w->shard: only the dependents in owned ranges are patched; the finalizer is removed only
 * when the owner's range is owned and no dependent of another range is left in the graph
 * (else GC_WAIT, action GC_ACT_ORPHAN_WAIT); when the owner's range is not owned the result
 * is GC_FORGET with action GC_ACT_ORPHANED_OWN_RANGES. */
enum gc_queue_action gc_attempt_to_orphan_worker(struct gc_worker *w, const char *uid,
                                                 struct gc_result *res);

/* ---- pure decisions exposed for tests ------------------------------------------------------ */
enum gc_decision {
	GC_DECIDE_NOTHING = 0,               /* solid owners only */
	GC_DECIDE_REMOVE_REFS,               /* solid + dangling/waiting: patch the refs away */
	GC_DECIDE_DELETE_FOREGROUND_CASCADE, /* waiting owners and own dependents: Foreground */
	GC_DECIDE_DELETE,                    /* no solid owner: delete with gc_delete_policy() */
};
enum gc_decision gc_decide(size_t n_solid, size_t n_dangling, size_t n_waiting,
                           size_t n_item_dependents);
/* The policy of the final DELETE: Orphan when the live object has the orphan finalizer,
 * Foreground when it has foregroundDeletion, else Background. */
const char *gc_delete_policy(const struct kube_object_meta *live);
/* client-go retry.DefaultBackoff sleep before attempt `attempt` (1-based, >= 2) with jitter
 * factor r in [0,1): 10 ms * 5^(attempt-2) * (1 + 0.1 r). */
double gc_finalizer_backoff_ms(int attempt, double r);
#define GC_FINALIZER_RETRY_STEPS 4
