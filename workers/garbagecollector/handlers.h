/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/garbagecollector/handlers.h: the GC's informer handlers, linked into informerd.
 *
 * Design note.
 *   Upstream's monitors add every add/update/delete of every deletable resource to
 *   graphChanges, and one goroutine applies them (processGraphChanges). In kcmd the handlers
 *   run on informerd's single thread, after the arena holds the new state, so they apply the
 *   event at once: gc_handle_event() converts a struct inf_event into a struct gc_event (the
 *   resource's GVK as upstream's monitor GVK, the old state from the arena copy, tombstones
 *   unwrapped) and runs gc_builder_process(). The builder's sink adds keys to the
 *   gc-attempt-to-delete and gc-attempt-to-orphan queues (gc_queue_key_encode: a virtual node's
 *   key carries its identity).
 *
 *   Not here yet (docs/garbagecollector.md "What remains"): the virtual delete events coming
 *   back from worker processes, the OwnerRefInvalidNamespace events' writer (a hook is
 *   provided), ignored resources and the discovery-driven resource set.
 */
#include "lib/handlers.h"
#include "workers/garbagecollector/graph.h"

/* The table to register with inf_dispatch_register (queues: gc-attempt-to-delete,
 * gc-attempt-to-orphan; every resource). */
extern const struct inf_handler_table gc_handler_table;

/* Called for every Warning event the builder asks for (informerd sets it before registering;
 * NULL: counted and dropped). */
/* Tests: replaces posting the Warning Event (informerd posts it through the table ctx's client). */
extern void (*gc_handlers_warning_hook)(const struct gc_ref *involved, const char *reason,
                                        const char *message);

/* Tests: the ranges owned, in place of the fence's (--shard-ranges; NULL: the fence's). */
struct gc_shard;
extern const struct gc_shard *gc_handlers_shard_override;

/* Converts ev and applies it to b. Returns gc_builder_process's result, or -ENOMEM / -EINVAL
 * when the event could not be converted. */
int gc_handle_event(struct gc_builder *b, const struct inf_event *ev);

/* A virtual delete event sent back by a worker: the key is gc_queue_key_encode(identity,
 * virtual = true) as carried on the "gc-graph-changes" queue (workers produce, informerd
 * consumes). Applies it to b. 0, -EINVAL (not an identity key) or the builder's error. */
int gc_handle_virtual_delete_key(struct gc_builder *b, const char *key);
/* The informer table's builder (for informerd's consumer of gc-graph-changes), from its ctx. */
/* Feeds every object of the arena to the table's builder as an add event (once per table; the
 * table's resync does it when the gc-attempt-to-delete owner attaches). Returns how many. */
unsigned long gc_handlers_seed(struct inf_handler_ctx *ctx);
struct gc_builder *gc_handlers_builder(struct inf_handler_ctx *ctx);

/* "group/version", or "version" for the core group, into buf. */
const char *gc_api_version_of(const char *group, const char *version, char *buf, size_t len);
