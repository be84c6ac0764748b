/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/replicaset/expectations-abi.h: the shared-memory layout of the ReplicaSet
 * controller's expectations (client-go's ControllerExpectations wrapped by
 * UIDTrackingControllerExpectations), one memfd shared by every RS worker and informerd.
 *
 * Design note. Upstream keeps one in-process map guarded by a mutex: the sync goroutine writes
 * the expected counts, the informer goroutine decrements them. In kcmd those two sides are
 * different processes that can each be killed at any instant, so a lock is out (a holder killed
 * mid-section wedges or tears the record). Instead every record is split by WRITER:
 *   - the worker side (expected counts, the deletion key set, timestamp, phase, seq) is written
 *     only by the worker that holds the RS key's lease from the work queue, which hands one key
 *     to one worker at a time (ipc/queue.h), so it has exactly one writer at any time;
 *   - the informer side (observed creations, per-key deletion marks, the deletion mark of the
 *     whole record) is written only by informerd, a single process.
 * Each side tags what it writes with the record's `seq` (generation). A replace
 * (ExpectCreations / ExpectDeletions) bumps seq, which atomically voids every observation made
 * for an older generation without the worker ever writing an informer word. Counting is then
 *   adds_left = expected_adds - (observed.gen == seq ? observed.count : 0)
 *   dels_left = #{ i < n_del : inf_tag[i] != seq && fail_tag[i] != seq }
 * and the record is fulfilled when both are <= 0, as upstream's Fulfilled().
 * Deletion keys are stored as a seeded 64-bit hash of "ns/name" (not the string) so a record is
 * 8 KiB at burstReplicas = 500; a collision needs two pod names with equal seeded hashes in one
 * RS's batch (probability ~ 500^2 / 2^64) and costs one early observation, never a crash.
 *
 * Rejected: a robust mutex per record (EOWNERDEAD gives no repair of the counters, and informerd
 * would block behind a descheduled worker); having informerd decrement a worker-written counter
 * (two writers per word, lost updates on replace); a message from informerd to the worker (the
 * worker is not waiting for it, and it would have to survive both sides' crashes anyway).
 *
 * INVARIANTS
 *  E1 Single writer per word. Header: magic..timeout_ns by the creator (before sharing),
 *     informer_* by informerd, max_probe by fetch-max of any claimer (E7). Index entry i
 *     (struct rs_exp_ix, the probe table) and slot i belong together. ix.state by CAS only
 *     (claim EMPTY/TOMBSTONE -> CLAIMED by a worker; CLAIMED -> LIVE and LIVE -> TOMBSTONE by
 *     the lease holder; CLAIMED(pid) -> TOMBSTONE by anyone who saw pid dead: single RMWs
 *     that cannot tear). ix.key_hash, seq, key*, worker words, del[].hash, del[].fail_tag and
 *     the consistency record (cons_*) by the lease holder of the slot's key (informerd never
 *     reads cons_*). observed, deleted_seq and del[].inf_tag by informerd.
 *  E2 Worker write protocol (replace, free): seq := odd (relaxed store), release fence, write
 *     the words (relaxed atomics), seq := next even (release store). Readers (informerd) load
 *     seq (acquire), read, acquire fence, re-load seq; a changed or odd seq means "the record
 *     was being replaced": the observation is dropped, which is the outcome upstream gets when
 *     the informer's decrement is ordered before the replace. Never retried in a loop that waits
 *     for the worker (informerd never waits on a worker).
 *  E3 Informer writes are single stores tagged with the seq they were validated against
 *     (release, pairing with the worker's acquire loads in the satisfied check). A stale tag
 *     (older seq) is ignored by the counting rule above, so informerd's late store after a
 *     replace cannot leak into the new generation (the ABA needs 2^31 replaces of one record
 *     while a tag survives; a record is replaced at most once per sync).
 *  E4 Lookups compare the full key under the seq validation of E2; a slot's key changes only
 *     while its seq is odd (claim or free), so no torn key is ever matched.
 *  Death of a writer mid-operation:
 *   - worker during a replace or free: seq stays odd. The next lease holder (after the queue's
 *     crash re-queue) sees an odd seq: the record is treated as ABSENT (an expectation is always
 *     written before any API call, so nothing was in flight for it) and is rewritten normally.
 *   - worker between ExpectCreations/Deletions and settle (API calls possibly in flight):
 *     `phase` is still IN_FLIGHT with another pid. The record keeps counting observations but
 *     it expires after orphan_grace_ns (default 60 s, the apiserver's request timeout: no
 *     request of the dead worker can complete later) instead of 5 minutes, and the satisfied
 *     check tells the caller when to look again.
 *   - worker holding a CLAIMED slot: the slot leaks until some process notices the pid is dead
 *     (rs_exp_reclaim_pid from the manager, or lazily by a worker probing past it).
 *   - informerd: a single store is either done or not; an event it consumed but did not apply
 *     is lost. A restarted informerd bumps informer_epoch; a record written under an older
 *     epoch may miss observations, so it also expires orphan_grace_ns after the later of its
 *     own timestamp and informer_attached_at.
 *   In every case a record stops blocking its RS within max(orphan grace, 5 min) of the crash;
 *   with no crash the behaviour is upstream's exactly (5-minute ExpectationsTimeout).
 *  E5 Time is CLOCK_BOOTTIME nanoseconds: one clock for every process, never jumps backwards,
 *     so no record can look "from the future" and never expire.
 *  E6 Metric words of the header (stale_skips, age_ratio_*) are counters: any worker adds with
 *     a relaxed fetch_add, nobody else writes them; a reader may see one family a few counts
 *     ahead of another, never a torn or lost count.
 *  E7 Free and reuse. A ReplicaSet's slot is freed (LIVE -> TOMBSTONE, under an odd seq) by
 *     the lease holder when its sync finds the RS gone (upstream's DeleteExpectations); a
 *     TOMBSTONE is reused by the next claim that probes it, for any key. Reuse is safe for a
 *     process still holding the slot's old identity because (a) seq never goes back: a claim
 *     continues from the slot's current seq (write_begin), so the tags informerd stamped for
 *     the previous occupant (observed, deleted_seq, inf_tag) are older than every seq of the
 *     new occupant and count for nothing (E3 across occupants); (b) every informerd store is
 *     validated against the seq it found the key under (still()), and a reader that loses
 *     the race with a free + re-claim sees the seq moved (E2) or the key differ (E4).
 *     Probing: index entries are 16 bytes, so a lookup touches only the index (capacity x 16
 *     bytes), never the 8.8 KiB slots of other keys. A lookup stops at an EMPTY entry or after
 *     max_probe + 1 entries, where max_probe is the largest displacement (distance from the
 *     key's home entry) any claim ever made; a claimer raises it (seq_cst fetch-max) before it
 *     publishes LIVE, so every published key lies within the bound. TOMBSTONEs never turn
 *     back into EMPTY (that would cut a probe chain under a concurrent reader); max_probe
 *     bounds the cost of the long tombstone runs that churn leaves instead.
 *     Capacity: fixed at creation (RS_EXP_DEFAULT_CAPACITY = 2^18 slots unless the creator
 *     asks otherwise); the memfd is sized for all of it but is sparse, so an unused slot costs
 *     no memory (about 5 KiB per RS with a record, 16 bytes per capacity for the index). When
 *     every entry is LIVE or CLAIMED a claim fails with -ENOSPC and counts table_full_total:
 *     the sync records nothing and calls no API (it fails and is retried with backoff, logged
 *     as an error naming the capacity), so a full table delays new ReplicaSets, never
 *     over-creates.
 * Version rule: magic + version checked at attach; any layout change bumps
 * RS_EXP_ABI_VERSION (the manager recreates the memfd; expectations are soft state).
 *
 * After the slots, at the next page boundary (rs_exp_evq_offset), the memfd holds the
 * controller's shared event queue: a region of its own with its own magic and INVARIANTS
 * (evq.h). rs_exp maps only the header and slots; the region is not part of this ABI.
 */
#include <assert.h>
#include <stdatomic.h>
#include <stdint.h>

#define RS_EXP_MAGIC            UINT64_C(0x6b636d6472736578) /* "kcmdrsex" */
#define RS_EXP_ABI_VERSION      3u
#define RS_EXP_KEY_MAX          507u       /* "namespace/name": 253 + 1 + 253 */
#define RS_EXP_KEY_WORDS        64u        /* 512 bytes of key storage, NUL padded */
#define RS_EXP_MAX_DELETES      500u       /* burstReplicas: ExpectDeletions never gets more keys */
#define RS_EXP_HEADER_SIZE      4096u      /* the index starts on the second page, then the slots */
#define RS_EXP_DEFAULT_CAPACITY (1u << 18) /* 262,144 ReplicaSets (E7) */
#define RS_EXP_MAX_CAPACITY     (1u << 22)
#define RS_EXP_CONS_RESOURCES   2u /* pods, replicasets.apps */
#define RS_EXP_CONS_UID_WORDS   8u /* 63 bytes + NUL */
#define RS_EXP_CONS_RV_WORDS    4u /* 31 digits + NUL (a uint64 RV has at most 20) */

/* slot state word: low 2 bits kind, bits 32..63 the claiming pid (CLAIMED only) */
enum rs_exp_slot_kind {
	RS_EXP_SLOT_EMPTY = 0,
	RS_EXP_SLOT_CLAIMED = 1,
	RS_EXP_SLOT_LIVE = 2,
	RS_EXP_SLOT_TOMBSTONE = 3,
};

enum rs_exp_phase {
	RS_EXP_PHASE_SETTLED = 0,   /* every API call of this generation has returned */
	RS_EXP_PHASE_IN_FLIGHT = 1, /* between Expect* and settle */
};

struct rs_exp_header {
	uint64_t magic;
	uint32_t version;
	uint32_t capacity;  /* slots, power of two */
	uint32_t slot_size; /* sizeof(struct rs_exp_slot) */
	uint32_t pad0;
	uint64_t seed;           /* hash seed (keys and pod keys) */
	int64_t timeout_ns;      /* ExpectationsTimeout, 5 min */
	int64_t orphan_grace_ns; /* expiry of records orphaned by a crash */
	/* controller metrics (E6): relaxed fetch_add by any worker, read by the manager; these
	 * words were reserved (zero) in earlier builds of ABI v2, so the layout is unchanged */
	_Atomic uint64_t stale_skips[2];      /* stale_sync_skips_total{pods, replicasets.apps} */
	_Atomic uint64_t age_ratio_bucket[6]; /* sorting_deletion_age_ratio, per bucket (le
	                                       * 0.25·2^k, not cumulative) */
	_Atomic uint64_t age_ratio_count;
	/* informerd */
	_Alignas(64) _Atomic uint64_t informer_epoch; /* bumped on every informerd attach */
	_Atomic int64_t informer_attached_at;         /* boottime ns of that attach */
	_Atomic uint32_t informer_pid;
	uint32_t pad1;
	_Atomic uint64_t age_ratio_sum; /* observations are whole numbers (upstream divides ms) */
	_Atomic uint64_t age_ratio_inf; /* observations above the last bucket */
	_Atomic uint32_t max_probe;     /* E7: largest displacement of any claim (fetch-max) */
	uint32_t pad2;
	_Atomic uint64_t table_full_total; /* E7/E6: claims refused with -ENOSPC */
	uint64_t reserved1[1];
};
static_assert(sizeof(struct rs_exp_header) == 192, "rs_exp_header layout");

struct rs_exp_del {
	_Atomic uint64_t hash;     /* lease holder: seeded hash of "ns/name" */
	_Atomic uint32_t inf_tag;  /* informerd: seq at which the deletion was observed */
	_Atomic uint32_t fail_tag; /* lease holder: seq at which the DELETE failed */
};
static_assert(sizeof(struct rs_exp_del) == 16, "rs_exp_del layout");

/* The probe table (E7): entry i describes slot i. */
struct rs_exp_ix {
	_Atomic uint64_t state;    /* E1: CAS */
	_Atomic uint64_t key_hash; /* lease holder, while CLAIMED */
};
static_assert(sizeof(struct rs_exp_ix) == 16, "rs_exp_ix layout");

struct rs_exp_slot {
	_Alignas(64) uint64_t reserved_ix; /* ABI v2's state (now ix.state) */
	_Atomic uint32_t seq;              /* lease holder; odd while writing (E2) */
	_Atomic uint32_t key_len;          /* lease holder */
	uint64_t reserved_kh;              /* ABI v2's key_hash (now ix.key_hash) */
	/* worker side (lease holder) */
	_Atomic int64_t expected_adds;
	_Atomic uint32_t n_del;
	_Atomic uint32_t phase;          /* enum rs_exp_phase */
	_Atomic int64_t timestamp;       /* boottime ns of the last Expect* */
	_Atomic uint64_t informer_epoch; /* header.informer_epoch seen at the last Expect* */
	_Atomic uint32_t writer_pid;     /* pid of the last Expect* writer */
	/* informer side (informerd) */
	_Alignas(64) _Atomic uint64_t observed; /* (seq << 32) | creations observed at seq */
	_Atomic uint32_t deleted_seq;           /* DeleteExpectations from the RS delete handler */
	uint32_t pad;
	uint64_t reserved[6];
	/* consistency record (v1.36 staleness gate, upstream util/consistency): lease holder only;
	 * live when cons_seq != 0 and cons_seq != deleted_seq (informerd's DeleteExpectations
	 * clears it with the expectations); carried to the new seq by every replace */
	_Alignas(64) _Atomic uint32_t cons_seq;
	uint32_t pad2;
	_Atomic uint64_t cons_uid[RS_EXP_CONS_UID_WORDS]; /* owner uid, NUL padded */
	_Atomic uint64_t
	        cons_rv[RS_EXP_CONS_RESOURCES][RS_EXP_CONS_RV_WORDS]; /* "" = none written */
	uint64_t reserved2[1];
	_Atomic uint64_t key[RS_EXP_KEY_WORDS]; /* lease holder, while seq is odd (E4) */
	struct rs_exp_del del[RS_EXP_MAX_DELETES];
};
static_assert(sizeof(struct rs_exp_slot) == 128 + 192 + 512 + 16 * RS_EXP_MAX_DELETES,
              "rs_exp_slot layout");

/* Offsets in the memfd: header, index (page-rounded), slots. */
static inline uint64_t rs_exp_slots_offset(uint32_t capacity)
{
	return RS_EXP_HEADER_SIZE +
	       ((uint64_t)capacity * sizeof(struct rs_exp_ix) + 4095) / 4096 * 4096;
}
