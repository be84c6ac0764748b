/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * informerd/store.h: client-go's Indexer + DeltaFIFO for kcmd: decoded objects go into the
 * shared arena (informerd is its single writer), then to the handlers.
 *
 * Design note.
 *   - Order: the arena is written first, then the handlers run (handlers.h), so a worker woken
 *     by a key reads at least the version that caused it.
 *   - Record kinds: pods and replicasets become typed records (shm/records.h); every
 *     other resource a metadata-only record (name, uid, rv, labels, owners, deletion state).
 *   - Replace (a completed LIST or WatchList's initial events): items are applied as they
 *     arrive (ADD if new, UPDATE otherwise), and their keys are remembered; when the replace
 *     commits, every object of the type that the replace did not contain is deleted from the
 *     arena and reaches the handlers as a tombstone carrying its last known state. client-go
 *     instead buffers the whole list first; applying as pages arrive keeps peak memory at one
 *     page, and every state applied is a real state of the object that is not older than what
 *     the arena had (a relist never asks for an older version than the last one seen).
 *   - Watch events: ADDED/MODIFIED upsert (a repeat of the version the arena already holds,
 *     as replayed after a warm restart, is not dispatched again); DELETED removes and is
 *     dispatched only if the object was known (as DeltaFIFO does with knownObjects).
 *   - The filter (sharding, docs/sharding.md "Caches"): with keep_ns set, an object whose
 *     namespace it refuses is never stored: a listed item is skipped (and not remembered, so
 *     a stale copy goes at the commit as a tombstone), an ADDED/MODIFIED event removes a stale
 *     copy (tombstone) and is otherwise dropped, a DELETED one of an object not stored is a
 *     no-op. The synced version then means "every object the filter keeps, as of rv". The
 *     filter must be the same for the replace that set it and every event after it, or only
 *     narrower (inf_store_prune); a wider one needs a relist (the acquisition barrier).
 *   - The resource table: synced flag + last applied version per type, written after the
 *     objects they cover (shm_writer_set_sync), so a restart resumes from a version whose
 *     effects are all in the arena (some later ones too; re-applying them is idempotent).
 *
 * Errors: functions return >= 0 or a negative errno; the caller (informer.c) logs.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/handlers.h"
#include "kube/model.h"
#include "shm/arena.h"

struct inf_store;

struct inf_store_stats {
	uint64_t upserts, deletes, tombstones, dispatched, skipped_same_rv, errors;
	uint64_t filtered, pruned;       /* not stored by the filter; removed when it narrowed */
	uint64_t published, feed_errors; /* change-feed entries written, publishes refused */
};

/* d may be NULL (no handlers). Neither is owned. */
int inf_store_new(struct shm_arena *a, struct inf_dispatch *d, struct inf_store **ret);
struct inf_store *inf_store_free(struct inf_store *s);
/* Publishes every applied change to feed (shm/feed.h) after the arena write; published(ud) is
 * called after each publish (informerd wakes the consumers once per loop iteration). */
struct shm_feed;
void inf_store_set_feed(struct inf_store *s, struct shm_feed *feed, void (*published)(void *ud),
                        void *ud);

/* Registers res in the arena's resource table (and with the dispatcher). res must outlive the
 * store. Returns the type id, or -EEXIST/-ENOSPC/-ENAMETOOLONG/-EINVAL from the arena. */
int inf_store_add_resource(struct inf_store *s, const struct inf_resource *res);
/* The arena's last synced version of type into buf when the type is synced: returns its length
 * (0 when not synced: a cold start). */
int inf_store_synced_rv(struct inf_store *s, uint16_t type, char *buf, size_t n);
/* The leadership epoch the arena says the type was last relisted for (0 none, or unknown). */
uint32_t inf_store_sync_epoch(struct inf_store *s, uint16_t type);
/* The decoder kind for the type's objects (what kube_decode_* to use). */
enum kube_kind inf_store_kube_kind(const struct inf_store *s, uint16_t type);

/* The filter: keep_ns(ns, ud) says whether objects of namespace ns (never "" : cluster-scoped
 * objects are always kept) are stored. NULL keeps everything (the default). It runs once per
 * object: it must be cheap and allocate nothing. */
void inf_store_set_filter(struct inf_store *s, bool (*keep_ns)(const char *ns, void *ud), void *ud);
/* The filter narrowed (a range was lost): every object of type it now refuses leaves the arena,
 * as a tombstone (not marked dropped: the object is no longer known here). Returns how many, or
 * -EINVAL/-ENOMEM/the arena's error (the rest stay; a later prune or relist removes them). */
int inf_store_prune(struct inf_store *s, uint16_t type);

/* A watch event's object (ADDED, MODIFIED, DELETED); obj is borrowed. Returns 0, 1 when the
 * filter refused it (nothing stored; a stale copy removed), -EINVAL, or the arena's error
 * (-ENOMEM arena full: the object is not in the arena). */
int inf_store_apply(struct inf_store *s, uint16_t type, enum kube_watch_type ev, const void *obj);

/* Replace: begin (drops a replace in progress for the type), add items, then commit at rv
 * (tombstones + synced flag) or abort (keys forgotten; applied items stay). */
int inf_store_replace_begin(struct inf_store *s, uint16_t type);
/* replace_add returns 0, 1 when the filter refused the item (not stored, not remembered), or
 * -errno. */
int inf_store_replace_add(struct inf_store *s, uint16_t type, const void *obj);
int inf_store_replace_commit(struct inf_store *s, uint16_t type, const char *rv);
void inf_store_replace_abort(struct inf_store *s, uint16_t type);
bool inf_store_replacing(const struct inf_store *s, uint16_t type);

/* The type is no longer watched (discovery dropped it): every object of it is deleted and
 * reaches the handlers as a tombstone marked dropped (inf_event.dropped, SHM_FEED_DROPPED: not
 * a deletion at the apiserver); the resource table keeps it synced with no version (nothing to
 * wait for; a later watch of it starts cold). */
int inf_store_drop(struct inf_store *s, uint16_t type);
/* After a drop: the type leaves the resource table (shm_writer_retire_type, arena.h T2), so
 * its slot can hold another resource later; the store and the dispatcher forget it (res is no
 * longer referenced). 0, -EINVAL unknown type, -EBUSY objects remain (not dropped). */
int inf_store_retire(struct inf_store *s, uint16_t type);

/* Records rv as the type's last applied version (keeps the synced flag). */
int inf_store_set_rv(struct inf_store *s, uint16_t type, const char *rv);
/* The type was relisted for leadership epoch `epoch` (the acquisition barrier) and is synced
 * at rv: what kcmd_cache_synced() of a worker of that term waits for. -EINVAL. */
int inf_store_set_sync_epoch(struct inf_store *s, uint16_t type, const char *rv, uint32_t epoch);
bool inf_store_synced(const struct inf_store *s, uint16_t type);

void inf_store_get_stats(const struct inf_store *s, struct inf_store_stats *ret);
