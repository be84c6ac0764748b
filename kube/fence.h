/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * kube/fence.h: the leadership fence every writing process checks before each write, in shared
 * memory (library `kube`).
 *
 * Design note.
 *   Only the leader's processes may write to the apiserver. The manager ends leadership at the
 *   elector's fence deadline (manager/leader.h) and SIGKILLs the workers then, but that depends
 *   on the manager's loop running: a stalled manager (SIGSTOP, a slow exec plugin, a page-fault
 *   storm) would leave its workers writing after a standby took over. So the manager also
 *   publishes the deadline here, and every kube_client given this fence refuses a write
 *   (create, update, patch, delete, or any custom method but GET) whose send time is at or past
 *   it, with -ENOLCK, before any byte goes out. The check needs no I/O and no manager.
 *
 * INVARIANTS
 *   Writer: the manager only (one process, one thread); it maps the memfd read-write. Readers:
 *   workers and dispatchers, read-only mappings (kube_fence_open with writable = false).
 *   F1 `deadline_us` is CLOCK_MONOTONIC microseconds (system-wide, the same clock in every
 *      process: ipc_now_usec()). 0 = writes refused; UINT64_MAX = no deadline (leader election
 *      off). The writer only ever stores a deadline it is sure of: the elector's, which is
 *      computed from the send time of the last successful renewal, so it errs early.
 *   F2 One 64-bit atomic word: a reader sees either the old or the new deadline, never a torn
 *      value. Release store / acquire load pair the manager's decision with the reader's check
 *      (no other data rides on it, so relaxed would do; acquire documents the pairing).
 *   F3 Writer death: the word keeps its last value. The deadline then passes by itself, so a
 *      dead or stalled manager fences its workers at the latest at the last deadline it
 *      published. A restarted manager is a new process with a new memfd (workers die with the
 *      old manager through PR_SET_PDEATHSIG).
 *   F4 Reader death: readers write nothing; nothing to repair.
 *   F5 The leadership epoch (the acquisition barrier, docs/architecture.md "Leadership"): the
 *      manager stores, on each acquisition and before it starts any worker, `lease_rv` (the
 *      resourceVersion of the Lease write that won, an etcd revision parsed as an integer; 0
 *      when there is none, e.g. leader election off) with relaxed order, then `epoch` with
 *      release. A reader loads `epoch` with acquire, then `lease_rv`: it sees the R of that
 *      epoch or a later one, never an older one (a later R is a stronger lower bound, which is
 *      still correct). epoch 0 = no acquisition yet; epochs only grow within one manager and
 *      start at a random base, so an arena persisted by another manager never matches. These
 *      words were reserved zeros in the first layout, so the version did not change: a reader
 *      of the old layout ignores them, and a manager of the old layout leaves them 0 (no
 *      barrier, the old meaning of "synced").
 *   F6 Ranges (layout version 2, sharding: docs/sharding.md): `nranges` (0 = sharding off) is
 *      stored once, before the magic and before the memfd is sealed, and never changes; the
 *      per-range words live after the header, one per range, KUBE_FENCE_MAX_RANGES of them
 *      (all 0 when nranges is 0). `range_deadline_us[i]` has F1's meaning for range i: 0 =
 *      this instance does not own range i, else the deadline of the range Lease's elector
 *      (from the send time of its last renewal, so it errs early). With nranges > 0 a write
 *      into namespace ns is allowed only while both the instance word (the member Lease's
 *      deadline) and the word of range(ns) allow it; cluster-scoped writes use range 0.
 *   F7 Each range word is its own 64-bit atomic (F2's pairing, per word). The manager stores
 *      0 into a range's word before it releases that range's Lease, so no write of this
 *      instance into the range is sent after the release began; a stalled or dead manager
 *      fences each range at its last published deadline (F3).
 *   F8 `range_gen` only grows; the manager bumps it (release) after storing the deadline of a
 *      newly acquired range. A reader that sees it move replays its state for the ranges it
 *      now owns (the dispatchers' resync of a handed-over range).
 *   F9 The cache set (informerd's filter, docs/sharding.md "Caches"): one bit per range in
 *      `cache_ranges` (256 bits after the range words), meaningful only when `cache_filter`
 *      is 1 (stored with nranges, before the magic and the seal; a former reserved word, so a
 *      manager of the earlier layout leaves it 0 and nothing is filtered: no version change).
 *      Bit i set = informerd stores the namespaced objects of range i; cluster-scoped objects
 *      are always stored, and bit 0 set turns the filter off (the owner of range 0 runs every
 *      unsharded controller, which needs every object).
 *      Order on an acquisition: the manager sets bit i, THEN publishes that acquisition's
 *      epoch (F5, release), THEN stores range i's deadline (F6), THEN bumps range_gen (F8).
 *      informerd loads the epoch with acquire before it relists for it and reads the set per
 *      object after that load, so the relist of the epoch includes range i: a type "synced at
 *      the current epoch" (the worker gate) holds the new range's objects. The bit never
 *      widens the cache without a new epoch, so a warm arena synced at the current epoch
 *      lacks no object the set asks for.
 *      On a loss the manager clears bit i when range i's word goes to 0 (F7: lost, handed
 *      over, the member Lease lost, shutdown); informerd compares the set on its tick (50 ms
 *      to 1 s) and at start-up and removes the lost range's objects then (tombstones). A bit
 *      cleared late only costs memory: writes are fenced by the range words alone.
 *      Each word is its own atomic: the one writer sets and clears bits with release
 *      read-modify-writes, readers load with acquire. Writer death: F3 (the set keeps its
 *      last value; a restarted manager makes a new memfd with an empty set and a new epoch).
 *   Version rule: `magic` carries the layout version; a reader that sees another refuses to
 *   open (-EPROTONOSUPPORT) and its client then refuses nothing: the manager also kills workers
 *   on its own deadline, as before this fence existed.
 */
#include <stdbool.h>
#include <stdint.h>

#define KUBE_FENCE_MAGIC      0x32434e46u /* "FNC2" read little-endian: version 2 (ranges) */
#define KUBE_FENCE_MAX_RANGES 256u        /* the per-range words fit the one page (F6) */
#define KUBE_FENCE_NONE       UINT64_MAX  /* no deadline: leader election is off */

struct kube_fence;

/* Manager: a new fence memfd (close-on-exec, sealed against resizing), writes refused (0).
 * Returns the fd, or -errno. No ranges (sharding off). */
int kube_fence_memfd_create(void);
/* The same with nranges (<= KUBE_FENCE_MAX_RANGES, else -ERANGE) per-range deadlines, all 0
 * (no range owned). nranges 0 is kube_fence_memfd_create. */
int kube_fence_memfd_create_ranges(unsigned nranges);
/* The same, with F9's cache set kept only when cache_filter (with ranges): false leaves
 * `cache_filter` 0, as a manager of the earlier layout does, so informerd caches everything
 * (for tests of that compatibility; the manager always keeps the set). */
int kube_fence_memfd_create_ranges_filter(unsigned nranges, bool cache_filter);
/* Maps fd; writable only for the manager. The first writable open seals the memfd with
 * F_SEAL_FUTURE_WRITE | F_SEAL_SEAL: its mapping stays the only writable one (any other
 * writable open, mmap or write(2) of the memfd then fails with -EPERM), while read-only opens
 * keep working. -EBADMSG (not a fence), -EPROTONOSUPPORT, -EPERM, -errno. */
int kube_fence_open(int fd, bool writable, struct kube_fence **ret);
void kube_fence_close(struct kube_fence *f);
/* Manager: publish the deadline (CLOCK_MONOTONIC µs; 0 refuses, KUBE_FENCE_NONE allows all). */
void kube_fence_set(struct kube_fence *f, uint64_t deadline_us);
uint64_t kube_fence_deadline(const struct kube_fence *f);
/* Manager: a new leadership epoch (non-zero) and the Lease's resourceVersion R (0: unknown).
 * Store it before starting the workers of that term (F5). */
void kube_fence_set_epoch(struct kube_fence *f, uint32_t epoch, uint64_t lease_rv);
/* The current epoch (0: none, or f NULL); *ret_lease_rv (if not NULL) its R, or a later one. */
uint32_t kube_fence_epoch(const struct kube_fence *f, uint64_t *ret_lease_rv);
/* Whether a write sent at now_us (CLOCK_MONOTONIC µs) is allowed (the whole-instance word). */
bool kube_fence_allows(const struct kube_fence *f, uint64_t now_us);

/* ---- ranges (sharding, docs/sharding.md; F6-F8) ---- */
/* How many ranges the fence has (0: sharding off, or f NULL). */
unsigned kube_fence_ranges(const struct kube_fence *f);
/* Manager: the deadline of range i (0: not owned; CLOCK_MONOTONIC µs, as F1). */
void kube_fence_set_range(struct kube_fence *f, unsigned range, uint64_t deadline_us);
/* KUBE_FENCE_NONE without ranges; 0 for an index past them. */
uint64_t kube_fence_range_deadline(const struct kube_fence *f, unsigned range);
bool kube_fence_range_allows(const struct kube_fence *f, unsigned range, uint64_t now_us);
/* A write into namespace ns ("" cluster-scoped: range 0) sent at now_us: the instance's word
 * and, with ranges, the deadline of the namespace's range (kube/shard.h) must both allow it. */
bool kube_fence_allows_ns(const struct kube_fence *f, const char *ns, uint64_t now_us);
/* Manager: bumped after a range was acquired (its deadline stored first); readers that hold
 * per-range state (the dispatchers) replay the arena when it moves (F8). */
void kube_fence_bump_range_gen(struct kube_fence *f);
uint64_t kube_fence_range_gen(const struct kube_fence *f);

/* ---- the cache set (informerd's filter, F9) ---- */
/* Manager: range's objects are (not) to be stored by informerd. Set it before publishing the
 * epoch of the range's acquisition; clear it when the range's word goes to 0. */
void kube_fence_set_cache_range(struct kube_fence *f, unsigned range, bool cached);
/* Whether informerd filters at all: ranges, a manager that keeps the set, and range 0 not in
 * it. false for f NULL. */
bool kube_fence_cache_filtering(const struct kube_fence *f);
/* Whether objects of range / of namespace ns ("" or NULL: cluster-scoped, always) are stored
 * (range 0's namespaced objects only when range 0 is ours, i.e. not filtering). true whenever not
 * filtering. No allocation: one FNV-1a hash of ns and a load. */
bool kube_fence_caches_range(const struct kube_fence *f, unsigned range);
bool kube_fence_caches_ns(const struct kube_fence *f, const char *ns);
/* A snapshot of the set into ret (every bit set when not filtering); returns whether filtering.
 * informerd compares snapshots to drop a lost range's objects at once. */
bool kube_fence_cache_set(const struct kube_fence *f, uint64_t ret[KUBE_FENCE_MAX_RANGES / 64]);
