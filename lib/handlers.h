/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * lib/handlers.h: the event-handler side of client-go's shared informer, as tables that
 * controllers link into informerd.
 *
 * Design note.
 *   Each controller brings one `struct inf_handler_table` (its code lives with the controller,
 *   workers/<controller>/handlers.c): the queues it adds keys to, and per resource an on_add /
 *   on_update(old, new) / on_delete(obj or tombstone) triple, as ResourceEventHandlerFuncs.
 *   informerd calls them on its one thread, after the arena holds the new state (so a worker
 *   woken by a key reads at least that version), in the order the events arrived.
 *
 *   What a handler sees (struct inf_event):
 *   - `obj`/`meta`: the decoded object of the event (struct kube_pod, kube_replicaset or
 *     kube_partial per the resource's record kind), valid during the call only;
 *   - `old`: the arena's previous state of the object (UPDATE), or its last known state
 *     (DELETE), as a shm_obj copy, valid during the call only;
 *   - a delete noticed only through a relist (the object is gone from the new list) is a
 *     tombstone: kind DELETE, tombstone = true, obj = meta = NULL, old = the last known state
 *     (client-go's DeletedFinalStateUnknown).
 *   Handlers must not block and cannot fail (client-go handlers return nothing either): they
 *   add keys (ipc_queue_owner_add never blocks in the owner process) and record expectation
 *   observations in shared memory.
 *
 *   Rejected: function pointers registered at run time by name (a static table is checked by
 *   the compiler and needs no registry of strings); handlers in the worker processes (the key
 *   would need the event shipped across; upstream runs handlers in the informer too).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipc/queue.h"
#include "kube/model.h"
#include "shm/arena.h"

/* A watched resource. */
struct inf_resource {
	const char *group; /* "" core */
	const char *version;
	const char *resource; /* plural */
	const char *kind;
	enum shm_record_kind record_kind; /* POD, REPLICASET, or META (metadata-only) */
	bool namespaced;
};

enum inf_event_kind {
	INF_EVENT_ADD = 1,
	INF_EVENT_UPDATE,
	INF_EVENT_DELETE,
};

struct inf_event {
	enum inf_event_kind kind;
	uint16_t type; /* arena type id */
	const struct inf_resource *res;
	const void *obj; /* kube_pod / kube_replicaset / kube_partial, or NULL */
	const struct kube_object_meta *meta; /* obj's metadata, or NULL (tombstone) */
	const struct shm_obj *old;           /* see the design note; NULL for ADD */
	bool tombstone;
	bool from_relist; /* delivered by a replace (list or WatchList initial events) */
	/* DELETE only: informerd stopped watching the type (it left discovery); the object was not
	 * deleted at the apiserver, it only left the cache (the GC ignores it: upstream's removed
	 * monitor stops without delete events and its graph keeps the nodes). */
	bool dropped;
};

struct ipc_loop;
struct kube_client;

struct inf_handler_ctx {
	struct shm_arena *arena; /* read with shm_reader_* (already updated) */
	/* informerd's loop and API client (loop mode: kube_call_start only, never blocking), for a
	 * table that posts Events; NULL in tests that give none. host: this machine's name. */
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
	/* Optional: the owner of queue `queue` attached (restarted = a previous owner existed):
	 * re-add every key this controller owns (from the arena). */
	void (*resync)(struct inf_handler_ctx *ctx, size_t queue, bool restarted);
	/* Optional: queues the table's own workers produce on and informerd consumes for it (as
	 * their one worker), NULL-terminated; on_key gets each key (index into consumes). A
	 * negative return is logged at debug level; the key is done either way. */
	const char *const *consumes;
	int (*on_key)(struct inf_handler_ctx *ctx, size_t consumed, const char *key);
};

struct inf_dispatch;

int inf_dispatch_new(struct inf_dispatch **ret);
/* Calls every table's fini. NULL-safe. */
struct inf_dispatch *inf_dispatch_free(struct inf_dispatch *d);

/* informerd's loop, client and host name, handed to every table registered after this call. */
void inf_dispatch_set_host(struct inf_dispatch *d, struct ipc_loop *loop, struct kube_client *kc,
                           const char *host);
/* Registers t with its queues (n must equal the number of names in t->queues, every owner
 * non-NULL) and the arena the handlers read. Returns the table index, -EINVAL, -ENOMEM, or
 * init's error. */
int inf_dispatch_register(struct inf_dispatch *d, const struct inf_handler_table *t,
                          struct ipc_queue_owner *const *queues, size_t n, struct shm_arena *arena);
/* Tells the dispatcher a resource now exists under arena type id `type` (the store does). */
int inf_dispatch_add_type(struct inf_dispatch *d, uint16_t type, const struct inf_resource *res);
/* The type was retired (its resource is gone): no handler is bound to it any more. */
void inf_dispatch_remove_type(struct inf_dispatch *d, uint16_t type);
/* Runs every matching handler for ev. */
void inf_dispatch_event(struct inf_dispatch *d, const struct inf_event *ev);
/* Runs the resync hook of table `index` for its queue `queue` (queue owner resync callback). */
void inf_dispatch_resync(struct inf_dispatch *d, size_t index, size_t queue, bool restarted);
/* The context of table `index` (as passed to its handlers), or NULL. */
struct inf_handler_ctx *inf_dispatch_ctx(struct inf_dispatch *d, size_t index);
/* Handler calls made so far (metrics). */
uint64_t inf_dispatch_calls(const struct inf_dispatch *d);

/* A handler table for tests and e2e: one queue "informer-test"; every event of every resource
 * adds "<resource>/<ns>/<name>" (tombstones too); resync re-adds every object of the arena. */
extern const struct inf_handler_table inf_test_handler_table;
