/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * kcmd/handlers.h: a controller's event handlers, the event-handler side of client-go's shared
 * informer (part of the public controller API, versioned by KCMD_CONTROLLER_ABI).
 *
 * Design note.
 *   Each controller brings one `struct inf_handler_table` (referenced from its descriptor,
 *   kcmd/controller.h): the queues it adds keys to, and per resource an on_add /
 *   on_update(old, new) / on_delete(obj or tombstone) triple, as ResourceEventHandlerFuncs.
 *   They run in the controller's own `kcmd-dispatcher` process, which consumes the change feed
 *   informerd publishes after the arena holds the new state (so a worker woken by a key reads at
 *   least that version), in the order the events arrived.
 *
 *   What a handler sees (struct inf_event):
 *   - `obj`/`meta`: the decoded object of the event, valid during the call only; `meta` is read
 *     with the kcmd_meta_* accessors (kcmd/cache.h), `obj` is the internal model of a typed
 *     cache kind (in-tree controllers only); for a watch cached whole (KCMD_CACHE_OBJECT) the
 *     object's JSON is kcmd_event_json(ev) and its annotations kcmd_meta_annotation;
 *   - `old`: the previous state of the object (UPDATE), or its last known state (DELETE), a
 *     cached object read with the kcmd_obj_* accessors, valid during the call only;
 *   - a delete noticed only through a relist (the object is gone from the new list) is a
 *     tombstone: kind DELETE, tombstone = true, obj = meta = NULL, old = the last known state
 *     (client-go's DeletedFinalStateUnknown).
 *   Handlers must not block and cannot fail (client-go handlers return nothing either): they
 *   add keys (kcmd_queue_add never blocks in the dispatcher, the queues' owner) and may record
 *   observations in shared memory of their own (kcmd_mgr_export_fd).
 *
 *   Rejected: function pointers registered at run time by name (a static table is checked by
 *   the compiler and needs no registry of strings); handlers in the worker processes (the key
 *   would need the event shipped across; upstream runs handlers in the informer too).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct shm_arena;        /* the shared cache (read with kcmd/cache.h) */
struct shm_obj;          /* an object copied out of the cache (kcmd/cache.h) */
struct kube_object_meta; /* an event's object metadata (kcmd/cache.h accessors) */
struct ipc_loop;         /* the dispatcher's event loop */
struct kube_client;      /* the dispatcher's API client (loop mode) */
struct ipc_queue_owner;  /* one of the controller's queues (kcmd_queue_add) */

/* A watched resource. */
struct inf_resource {
	const char *group; /* "" core */
	const char *version;
	const char *resource; /* plural */
	const char *kind;
	/* how its records read: enum kcmd_cache_kind (kcmd/controller.h), whose values are the
	 * arena's record kinds (POD, REPLICASET, METADATA or OBJECT) */
	uint32_t record_kind;
	bool namespaced;
};

enum inf_event_kind {
	INF_EVENT_ADD = 1,
	INF_EVENT_UPDATE,
	INF_EVENT_DELETE,
};

/* The whole new object of an event of a watch cached whole (KCMD_CACHE_OBJECT): its JSON as the
 * apiserver sent it (NUL-terminated; *ret_len, if not NULL, gets its length), valid during the
 * handler call. NULL for other cache kinds and for a DELETE (ev->old is the last known state).
 * Its annotations: kcmd_meta_annotation(ev->meta, key). */
struct inf_event;
const char *kcmd_event_json(const struct inf_event *ev, size_t *ret_len);

struct inf_event {
	enum inf_event_kind kind;
	uint16_t type; /* arena type id */
	const struct inf_resource *res;
	const void *obj; /* the typed model object, or NULL (see the design note) */
	const struct kube_object_meta *meta; /* obj's metadata, or NULL (tombstone) */
	const struct shm_obj *old;           /* see the design note; NULL for ADD */
	bool tombstone;
	bool from_relist; /* delivered by a replace (list or WatchList initial events) */
	/* DELETE only: informerd stopped watching the type (it left discovery); the object was not
	 * deleted at the apiserver, it only left the cache (the GC ignores it: upstream's removed
	 * monitor stops without delete events and its graph keeps the nodes). */
	bool dropped;
};

struct inf_handler_ctx {
	struct shm_arena *arena; /* read with kcmd_cache_* (already updated) */
	/* the dispatcher's loop and API client (loop mode: never blocking), for a table that posts
	 * Events; NULL in tests that give none. host: this machine's name. */
	struct ipc_loop *loop;
	struct kube_client *kc;
	const char *host;
	struct ipc_queue_owner *const *queues; /* in the order of the table's queue names */
	size_t n_queues;
	void *state; /* the table's own state (init may set it) */
};

typedef void (*inf_handler_fn)(struct inf_handler_ctx *ctx, const struct inf_event *ev);

struct inf_handler_entry {
	const char *group;    /* "" core; NULL = any group */
	const char *resource; /* plural; "*" = every watched resource (the GC) */
	inf_handler_fn on_add, on_update, on_delete; /* each may be NULL */
};

struct inf_handler_table {
	const char *controller;
	const char *const *queues; /* NULL-terminated names of the queues it adds to */
	const struct inf_handler_entry *entries;
	size_t n_entries;
	/* Optional: called once at registration; a negative return refuses the table. */
	int (*init)(struct inf_handler_ctx *ctx);
	void (*fini)(struct inf_handler_ctx *ctx);
	/* Optional: the owner of queue `queue` attached (restarted = a previous owner existed), or
	 * the dispatcher starts again from the arena: re-add every key this controller owns (from
	 * the arena, kcmd_cache_list). */
	void (*resync)(struct inf_handler_ctx *ctx, size_t queue, bool restarted);
	/* Optional: queues the table's own workers produce on and the dispatcher consumes for it
	 * (as their one worker), NULL-terminated; on_key gets each key (index into consumes). A
	 * negative return is logged at debug level; the key is done either way. */
	const char *const *consumes;
	int (*on_key)(struct inf_handler_ctx *ctx, size_t consumed, const char *key);
};

/* ---- adding keys (the dispatcher owns the controller's queues) ------------------------------
 * q indexes the table's `queues`. client-go's Add, AddAfter and AddRateLimited: a key already
 * queued is not queued twice. Never blocks. Returns 0, -EINVAL (no such queue, empty key or
 * one longer than KCMD_KEY_MAX bytes), -ENOMEM (the queue's key table is full, docs/ipc.md),
 * -ESHUTDOWN (the queue is shutting down). */
#define KCMD_KEY_MAX 507 /* "<namespace>/<name>", 253 + 1 + 253 */
int kcmd_queue_add(struct inf_handler_ctx *ctx, size_t q, const char *key);
int kcmd_queue_add_after(struct inf_handler_ctx *ctx, size_t q, const char *key,
                         uint64_t delay_usec);
int kcmd_queue_add_rate_limited(struct inf_handler_ctx *ctx, size_t q, const char *key);

/* client-go's MetaNamespaceKeyFunc: "ns/name", or "name" when ns is NULL or "". Returns the
 * length, or -ENAMETOOLONG when it does not fit buf (buf then holds ""). */
int kcmd_key_make(char *buf, size_t len, const char *ns, const char *name);
/* SplitMetaNamespaceKey: ns gets "" for a cluster-scoped key. 0, -EINVAL (more than one '/'),
 * -ENAMETOOLONG (a part does not fit). */
int kcmd_key_split(const char *key, char *ns, size_t nslen, char *name, size_t namelen);
