/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * ipc/queue-abi.h: the shared-memory layout of one work queue (one memfd per named queue).
 *
 * Design note: a broker. One process, the OWNER, holds every piece of client-go state (dirty
 * set, processing map, FIFO, delay heap, failure counts) in private memory. The memfd only
 * carries SPSC channels between the owner and each client, plus the owner's published metrics.
 * Clients are PRODUCERS (push Add records) and WORKERS (receive leases, return replies). See
 * docs/ipc.md for why this beats a lock-free MPMC or a robust-mutex design under kill -9.
 *
 * INVARIANTS
 *   W1 Single writer per word. Counters: add ring `tail` (producer), `head` (owner); lease ring
 *      `lease_tail` (owner), `lease_head` (worker); reply ring `reply_tail` (worker),
 *      `reply_head` (owner); header state and metrics (owner). Ring records are written only by
 *      the ring's producer side, and only at index tail, before tail is published.
 *      Exceptions, all single atomic RMWs or stores that cannot tear:
 *        - slot `pid`: claimed by a client with CAS 0 -> pid, released by the owner (store 0)
 *          only after that pid's pidfd reported exit and the slot was reset;
 *        - `attach_seq`: every client fetch_adds it after claiming a slot (and after writing
 *          `pid_ino`, the pidfs inode of its own pidfd: unique per process since Linux 6.9; the
 *          owner compares it with the inode of the pidfd it opens from `pid`, so a reused pid
 *          is not mistaken for the client);
 *        - sleep flags `owner_waiting` / `waiting` / `space_waiting`: the sleeper stores 1
 *          before sleeping and 0 after waking; a waker claims it with xchg(…, 0) and then
 *          FUTEX_WAKEs it. The sleeper sleeps ON THE FLAG (FUTEX_WAIT(flag, 1)), never on a data
 *          counter (the lost-wakeup trap measured in ipc-calibration.md).
 *   W2 Publication: the writer fills a record, then store-release of the counter; the reader
 *      load-acquires the counter, then reads records below it. Counters are free-running u32;
 *      ring index = counter & (size - 1).
 *   W2' Leases are also published per record: the owner stores rec.op = index + 1 last
 *      (release); a worker polls the record at its lease_head for that value (acquire), so a
 *      spinning worker watches one cache line. lease_tail (owner) stays the bookkeeping truth; a
 *      restarted owner also adopts records past lease_tail whose seq is set (the previous owner
 *      died between the two stores). Reset clears every record's seq.
 *   W3 Wake protocol: the publisher does (publish; seq_cst fence; if load(flag) == 1 and
 *      xchg(flag, 0) == 1 then FUTEX_WAKE(flag)); the sleeper does (store(flag, 1); seq_cst
 *      fence; re-check the counters; FUTEX_WAIT(flag, 1)). Either the publisher sees the flag or
 *      the sleeper sees the data (store-buffer litmus with both fences): no lost wake-up, and no
 *      wake syscall while the sleeper is awake.
 *   W4 Leases stay in the lease ring until their reply is applied: the owner writes lease i only
 *      when i - reply_head < LEASE_RING. So [reply_head, lease_tail) is exactly the set of keys
 *      this worker holds, readable by a restarted owner; [lease_head, lease_tail) were leased
 *      but never returned by Get (prefetched), [reply_head, lease_head) were being processed.
 *      Replies are in lease order (a worker holds one key at a time), reply i answers lease i,
 *      and carries the lease's generation (checked; a mismatch is counted and dropped).
 *   Detach: a client that frees its handle stores detached = 1 (release) and never touches the
 *      slot again; the owner handles the slot like a death, except that nothing counts as a
 *      crash, then resets it (detached = 0 before pid = 0; the next claimer also clears it).
 *      Slot reset by the owner (after a death or detach) is the other W1 exception: the slot's
 *      client is gone, so the owner briefly writes its client-side words.
 *   Readers of metrics (kcmctl, /metrics, any process with the memfd, even read-only): copy
 *      single 64-bit words, no retry; a snapshot may mix words of two owner updates (counters
 *      are monotonic, so a scrape is at worst one update behind).
 *   Death of a writer mid-operation:
 *      - producer: at most one record written but unpublished; invisible, harmless.
 *      - worker: the owner's pidfd fires; the owner applies published replies, then re-queues
 *        [reply_head, lease_head) as crashes (rate limited; parked after park_after consecutive
 *        crashes) and [lease_head, lease_tail) as plain Adds, resets the counters, frees the slot.
 *        A death the owner's death_expected hook calls expected (the manager fenced or stopped
 *        the worker) counts as no crash: its keys are plain Adds.
 *   Parked keys: the owner's private state; `parked[]` is a listing for readers only (seqlock
 *      per slot, owner the one writer). A restarted owner starts with none parked and clears it.
 *      - owner: clients keep what they hold and keep publishing (rings do not need the owner to
 *        make progress, except a full add ring which blocks its producer until an owner drains
 *        it). A restarted owner bumps owner_epoch, adopts [reply_head, lease_tail) of every live
 *        worker as processing, applies pending replies, drains add rings and calls the resync
 *        hook so the informer re-adds every key (the FIFO, delay heap and failure counts were
 *        private and are gone: at-least-once, which level-triggered reconcilers require anyway).
 *   Version rule: magic + version checked at attach; any layout change bumps IPC_QUEUE_ABI_VERSION
 *   (no in-place upgrade: the manager recreates the memfd).
 */
#include <assert.h>
#include <stdatomic.h>
#include <stdint.h>

#define IPC_QUEUE_MAGIC       UINT64_C(0x6b636d6471756575) /* "kcmdqueu" */
#define IPC_QUEUE_ABI_VERSION 3u
/* Kubernetes keys are "namespace/name": 253 + 1 + 253 bytes, without the NUL. */
#define IPC_QUEUE_KEY_MAX       507u
#define IPC_QUEUE_NAME_MAX      63u
#define IPC_QUEUE_MAX_PRODUCERS 16u
/* Worker slots: chosen at creation (ipc_queue_memfd_create_sized), at most
 * IPC_QUEUE_WORKERS_LIMIT; the memfd is sparse, so an unused slot costs no memory. The
 * manager sizes the ReplicaSet queue by --concurrent-replicaset-syncs (one worker process per
 * sync, as many as kcm's goroutines). */
#define IPC_QUEUE_MAX_WORKERS   32u    /* the default */
#define IPC_QUEUE_WORKERS_LIMIT 16384u /* header.size is 32-bit: 2.3 GiB of sparse memfd */
#define IPC_QUEUE_ADD_RING      512u   /* records per producer, power of two */
#define IPC_QUEUE_LEASE_RING    256u   /* max leases a worker may hold (prefetch), power of two */
#define IPC_QUEUE_HIST_BUCKETS  10u    /* upper bounds 1e-8 s * 10^i, i = 0..9 (client-go's) */
/* Parked keys the owner lists in shared memory for kcmctl. When more are parked, the others are
 * counted (metrics.parked) and logged by the owner's parked hook but not listed; a key parked
 * later takes a slot another key freed. */
#define IPC_QUEUE_PARKED_SHOWN 16u

enum ipc_q_op {
	IPC_Q_OP_ADD = 1,
	IPC_Q_OP_ADD_AFTER = 2, /* rec.u64 = delay in microseconds */
	IPC_Q_OP_ADD_RATE_LIMITED = 3,
	IPC_Q_OP_FORGET = 4,
};

/* Add records (producer -> owner) and leases (owner -> worker). */
struct ipc_q_rec {
	uint64_t u64; /* lease: generation; ADD_AFTER: delay usec */
	uint32_t op;  /* add: enum ipc_q_op; lease: seq = lease index + 1, stored last (W2') */
	uint32_t arg; /* lease: NumRequeues(key) when leased */
	uint16_t keylen;
	uint16_t pad[3];
	char key[IPC_QUEUE_KEY_MAX + 5]; /* NUL-terminated, 512 bytes */
};
static_assert(sizeof(struct ipc_q_rec) == 536, "ipc_q_rec layout");

enum ipc_q_reply_flags {
	IPC_Q_REPLY_FORGET = 1u << 0,
	IPC_Q_REPLY_RATE_LIMITED = 1u << 1,
	IPC_Q_REPLY_AFTER = 1u << 2,
};

/* Replies (worker -> owner): Done for lease i, with optional Forget / AddRateLimited / AddAfter. */
struct ipc_q_reply {
	uint64_t gen;
	uint32_t flags;
	uint32_t pad;
	uint64_t after_usec;
	uint64_t work_ns; /* Get -> Done, measured by the worker */
};
static_assert(sizeof(struct ipc_q_reply) == 32, "ipc_q_reply layout");

struct ipc_q_hist {
	_Atomic uint64_t bucket[IPC_QUEUE_HIST_BUCKETS]; /* cumulative counts are derived on read */
	_Atomic uint64_t count;
	_Atomic uint64_t sum_ns;
};

/* Owner-written; readers (kcmctl, /metrics) copy single words without synchronisation. */
struct ipc_q_metrics {
	_Atomic uint64_t depth;
	_Atomic uint64_t adds_total;
	_Atomic uint64_t retries_total;
	_Atomic uint64_t unfinished_work_ns;
	_Atomic uint64_t longest_running_ns;
	_Atomic uint64_t parked;                /* kcmd: keys parked now */
	_Atomic uint64_t parked_total;          /* kcmd */
	_Atomic uint64_t worker_deaths_total;   /* kcmd */
	_Atomic uint64_t owner_restarts_total;  /* kcmd */
	_Atomic uint64_t protocol_errors_total; /* kcmd: mismatched replies (should stay 0) */
	struct ipc_q_hist queue_duration;
	struct ipc_q_hist work_duration;
};

/* One listed parked key (owner-written seqlock: seq odd while the owner rewrites the slot;
 * readers copy, then re-check seq and drop a torn copy). keylen 0: the slot is free. */
struct ipc_q_parked {
	_Atomic uint32_t seq;
	uint32_t crashes;   /* consecutive crashes that parked it */
	uint64_t unpark_at; /* CLOCK_MONOTONIC µs of the automatic un-park */
	uint32_t parks;     /* times parked in a row (the backoff doubles each time) */
	uint16_t keylen;
	uint16_t pad;
	char key[IPC_QUEUE_KEY_MAX + 1];
};

struct ipc_q_producer {
	_Alignas(64) _Atomic uint32_t pid; /* client CAS 0->pid / owner store 0 */
	_Atomic uint32_t space_waiting;    /* sleep flag of a producer waiting for ring space */
	_Atomic uint64_t pid_ino;          /* client, after the claim: pidfs inode (incarnation) */
	_Atomic uint32_t detached; /* client: 1 = released by ipc_queue_free (owner resets) */
	_Alignas(64) _Atomic uint32_t tail; /* producer */
	_Alignas(64) _Atomic uint32_t head; /* owner */
	_Alignas(64) struct ipc_q_rec ring[IPC_QUEUE_ADD_RING];
};

struct ipc_q_worker {
	_Alignas(64) _Atomic uint32_t pid; /* client CAS 0->pid / owner store 0 */
	_Atomic uint32_t prefetch;         /* worker, at attach: leases it wants outstanding */
	_Atomic uint32_t cpu;              /* worker: CPU it last ran on (spin heuristics) */
	_Atomic uint64_t pid_ino;          /* client, after the claim: pidfs inode (incarnation) */
	_Atomic uint32_t detached; /* client: 1 = released by ipc_queue_free (owner resets) */
	_Alignas(64) _Atomic uint32_t waiting;    /* sleep flag of the worker (W1 exception) */
	_Alignas(64) _Atomic uint32_t lease_tail; /* owner */
	_Atomic uint32_t reply_head;              /* owner */
	_Alignas(64) _Atomic uint32_t lease_head; /* worker */
	_Atomic uint32_t reply_tail;              /* worker */
	_Alignas(64) struct ipc_q_rec lease[IPC_QUEUE_LEASE_RING];
	struct ipc_q_reply reply[IPC_QUEUE_LEASE_RING];
};

struct ipc_q_header {
	uint64_t magic;
	uint32_t version;
	uint32_t size;
	char name[IPC_QUEUE_NAME_MAX + 1];
	uint32_t max_producers, max_workers, add_ring, lease_ring, key_max;
	uint32_t reserved0[11];
	_Alignas(64) _Atomic uint32_t owner_pid; /* owner */
	_Atomic uint32_t owner_epoch;            /* owner: +1 per owner attach */
	_Atomic uint32_t owner_cpu;              /* owner: CPU it last ran on */
	_Atomic uint32_t shutting_down;          /* owner: Adds are ignored */
	_Atomic uint32_t closed;                 /* owner: shut down and FIFO empty: Get fails */
	uint32_t pad1;
	_Atomic uint64_t owner_pid_ino; /* owner: pidfs inode of the owner (incarnation) */
	uint32_t reserved1[8];
	_Alignas(64) _Atomic uint32_t owner_waiting; /* the owner's doorbell / sleep flag */
	_Atomic uint32_t attach_seq; /* clients: fetch_add after claiming a slot (owner rescans) */
	_Alignas(64) struct ipc_q_metrics metrics;
	uint64_t reserved2[16];
	_Alignas(64) struct ipc_q_parked parked[IPC_QUEUE_PARKED_SHOWN]; /* owner (seqlock) */
	_Alignas(64) struct ipc_q_producer producers[IPC_QUEUE_MAX_PRODUCERS];
	struct ipc_q_worker workers[]; /* max_workers of them; header.size covers them */
};
static_assert(sizeof(_Atomic uint32_t) == 4, "futex words are 32-bit");
static_assert(__builtin_offsetof(struct ipc_q_header, owner_pid) == 192, "header layout");
static_assert(__builtin_offsetof(struct ipc_q_header, owner_waiting) == 256, "header layout");

/* Bytes of a queue memfd with n worker slots (header.size). */
static_assert((uint64_t)sizeof(struct ipc_q_header) + 16384u * sizeof(struct ipc_q_worker) <=
                      UINT32_MAX,
              "header.size holds the largest queue");
static inline uint64_t ipc_q_size(uint32_t n_workers)
{
	return (uint64_t)sizeof(struct ipc_q_header) +
	       (uint64_t)n_workers * sizeof(struct ipc_q_worker);
}
