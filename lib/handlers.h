/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * lib/handlers.h: the dispatcher of handler tables (library `kcdispatch`): binds the tables'
 * entries to the arena's types and runs them for each change. The tables themselves are the
 * public interface kcmd/handlers.h (a controller implements it; installed for out-of-tree
 * controllers); this header is internal to kcmd (kcmd-dispatcher, informerd's test table).
 *
 * Design note: see kcmd/handlers.h for what a handler sees and may do. The dispatcher calls
 * every matching entry of every registered table for an event, on the caller's one thread.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipc/queue.h"
#include "kcmd/handlers.h"
#include "kube/model.h"
#include "shm/arena.h"

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
/* True when some handler of a registered table is bound to arena type `type` (an event of any
 * other type would run nothing: callers may skip decoding it). */
bool inf_dispatch_handles(const struct inf_dispatch *d, uint16_t type);
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
