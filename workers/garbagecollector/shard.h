/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/garbagecollector/shard.h: which garbage-collector items this kcmd instance handles
 * when the namespaces are split into ranges (--shard-ranges, docs/sharding.md "The garbage
 * collector"). Pure: the ranges owned are asked through a callback (the fence in processes, a
 * table in tests).
 *
 * Design note.
 *   Every instance builds the whole graph from its own cache, so every instance sees every
 *   transition; what is split is the work each item causes, by where its writes go:
 *     - an observed item (attemptToDelete): the range of its namespace (cluster-scoped: 0), the
 *       range every write about it is fenced by;
 *     - a virtual item (an owner only referenced): every instance that owns the range of the
 *       virtual identity's namespace or of one of its dependents. Its work is a live GET and,
 *       when the owner is absent, a graph change of this instance only (the virtual delete
 *       event), which queues that instance's dependents; a cluster-scoped owner's dependents
 *       live in many ranges, so each instance holding some must verify it for its own graph. If
 *       the object turns out to exist and need a write, the write's range decides (the fence
 *       refuses it elsewhere with -ENOLCK, and the key is then forgotten: the owner of that
 *       range has the observed node);
 *     - an orphaning owner (attemptToOrphan): every instance owning the owner's range or the
 *       range of one of its dependents. Each removes the owner reference from the dependents
 *       of its own ranges; only the owner's range removes the orphan finalizer, once its graph
 *       shows no dependent in another range still referencing the owner (gc_worker.shard);
 *     - a Warning event: the range of the namespace the Event is written into (the involved
 *       object's, "default" for a cluster-scoped one, as client-go's recorder).
 *   Sharding off (nranges 0, or no struct): every item is taken, nothing else changes.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "workers/garbagecollector/identity.h"

struct gc_graph_view;

struct gc_shard {
	unsigned nranges; /* 0: sharding off, every item is this instance's */
	/* whether this instance owns range r now */
	bool (*owned)(void *ud, unsigned range);
	void *ud;
};

/*
 * The acquisition barrier (docs/sharding.md "The garbage collector"). With the cache filtered
 * by range, a range this instance acquires has its objects in the arena only once informerd's
 * relist for the acquisition's epoch is done (kube/fence.h F9: the bit, then the epoch, then
 * the range's word, then range_gen). The GC reads its graph from the whole arena, so after the
 * range generation moves it acts on no key, of any range, until every type in the arena is
 * synced at the current epoch (a dependent still missing would make an orphaning owner's
 * finalizer go, or an owner look childless); keys wait (GC_SHARD_BARRIER_WAIT_USEC, requeued,
 * never dropped). Gating every range, not only the new one, costs the relist's duration once
 * per acquisition and needs no per-range bookkeeping (which ranges a key's decision involves
 * depends on its dependents' ranges). Sharding off: never consulted.
 * A type that never syncs at the epoch (an aggregated API that is down, a CRD whose list
 * fails) would hold every key forever: as upstream's Run does at its start (initialSyncTimeout,
 * kcm's 30 s syncPeriod), the barrier opens anyway GC_SHARD_BARRIER_TIMEOUT_USEC after it first
 * closed for a generation, and says so once (`*timed_out`); the types still pending are then
 * read as their informers left them, which upstream accepts too (its attemptToDelete checks an
 * owner with a live GET before deleting a dependent). A relist that takes longer than that (a
 * very large range) is the risk this trades for liveness; docs/sharding.md says so.
 * Thread-safe: the lanes share one barrier; `gen` is only ever set to a generation whose
 * caches were seen synced or whose wait timed out, so a lane that lost a race re-checks at most
 * once. `closed_since` is stored before `closed_gen` (release), so a lane that reads
 * `closed_gen` == gen (acquire) reads a start time of this generation's wait (at worst a
 * moment later than the first lane's: the timeout runs a little longer, never shorter).
 */
#define GC_SHARD_BARRIER_WAIT_USEC 100000ull /* client-go's syncedPollPeriod, as cachewait */
#define GC_SHARD_BARRIER_TIMEOUT_USEC                                                              \
	30000000ull /* upstream's initial sync timeout (kcm: 30 s)                                 \
	             */

struct gc_shard_barrier {
	_Atomic uint64_t gen;        /* the generation last opened (synced or timed out; 0: none) */
	_Atomic uint64_t closed_gen; /* the generation whose wait started at closed_since */
	_Atomic uint64_t closed_since; /* its first closed check (monotonic µs) */
};

/* Whether keys may be acted on at range generation gen, at time now_usec: true when gen is the
 * one last opened (no call to synced), when synced(ud) says every type is synced now, or when
 * the barrier has been closed for gen for GC_SHARD_BARRIER_TIMEOUT_USEC (then *timed_out is
 * set true, for this one call; it may be NULL); gen is remembered in the last two cases. False
 * while none holds. */
bool gc_shard_barrier_open(struct gc_shard_barrier *b, uint64_t gen, uint64_t now_usec,
                           bool (*synced)(void *ud), void *ud, bool *timed_out);

/* Whether the range of namespace ns ("" or NULL: cluster-scoped, range 0) is owned. True when s
 * is NULL or sharding is off. */
bool gc_shard_ns_owned(const struct gc_shard *s, const char *ns);

/* Whether the namespace of id or of any of its dependents in g is in an owned range (virtual
 * items and orphaning owners). True when sharding is off. */
bool gc_shard_takes_with_dependents(const struct gc_shard *s, const struct gc_graph_view *g,
                                    const struct gc_ref *id);

/* The decision for a queue key as the workers see it (queue 0 gc-attempt-to-delete: a uid, a
 * virtual key or an absent-owner key; queue 1 gc-attempt-to-orphan: the owner's uid): true to
 * process it here, false to drop it (not an error, not retried: another instance has it). A key
 * whose uid is not in g is taken (the worker forgets it without an API call). */
bool gc_shard_takes_key(const struct gc_shard *s, const struct gc_graph_view *g, size_t queue,
                        const char *key);

/* Whether a Warning event about `involved` is written by this instance (the namespace of the
 * Event: the involved object's, or "default"). */
bool gc_shard_takes_event(const struct gc_shard *s, const struct gc_ref *involved);
