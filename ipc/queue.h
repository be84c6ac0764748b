/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * ipc/queue.h: a work queue with client-go workqueue semantics shared between processes.
 *
 * One memfd per named queue (the manager creates it with ipc_queue_memfd_create() and hands it
 * to the children). One process is the OWNER (the broker, normally informerd): it attaches with
 * ipc_queue_owner_new() and runs it in its ipc_loop; it can also Add directly. Any other process
 * attaches as a client: a PRODUCER (Add, AddAfter, AddRateLimited, Forget through its own ring),
 * a WORKER (Get / Done), or both. The layout and its invariants are in queue-abi.h; the design
 * and its measurements in docs/ipc.md.
 *
 * Semantics (client-go util/workqueue): Add dedups (a key waits in the queue at most once);
 * Get hands a key to one worker at a time; a key re-added while processing is queued again at
 * Done; AddAfter keeps the earliest ready time; AddRateLimited waits max(per-item exponential
 * base*2^failures capped at max, token bucket qps/burst) and counts a requeue; Forget resets
 * the count; ShutDown stops Adds, lets Get drain what is queued, then Get returns -ESHUTDOWN.
 * Crash rules: see queue-abi.h (W4) and ipc_queue_owner_config.park_after. A parked key (its
 * worker died park_after times in a row on it) is handed to no worker until an Add of it (an
 * object change: the key is un-parked and queued), its backoff ends (park_backoff_usec, doubled
 * per park in a row up to park_backoff_max_usec), ipc_queue_owner_unpark or
 * ipc_queue_owner_unpark_all (a new leadership term). A successful Done ends the run of parks.
 *
 * Delivery is at-least-once across crashes: a key whose worker died, or that was in flight when
 * the owner died, is processed again.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipc/loop.h"
#include "ipc/queue-abi.h"

struct ipc_queue;       /* a client (producer and/or worker) */
struct ipc_queue_owner; /* the broker */

/* Creates and initialises a queue memfd (sealed against shrinking). name: 1..63 bytes.
 * Returns the fd (>= 0, O_CLOEXEC) or -errno. */
int ipc_queue_memfd_create(const char *name);
/* The same with max_workers worker slots (1..IPC_QUEUE_WORKERS_LIMIT; the plain call gives
 * IPC_QUEUE_MAX_WORKERS = 32). The memfd is sparse: ~142 KiB of address space per slot, memory
 * only for slots in use. -EINVAL for a size out of range. */
int ipc_queue_memfd_create_sized(const char *name, uint32_t max_workers);

/* ---- owner -------------------------------------------------------------------------------- */
struct ipc_queue_owner_config {
	uint64_t base_delay_usec;   /* per-item exponential base; 0 = 5000 (5 ms) */
	uint64_t max_delay_usec;    /* cap; 0 = 1000 s */
	double qps;                 /* overall token bucket; 0 = 10 (negative: bucket off) */
	uint32_t burst;             /* 0 = 100 */
	uint32_t park_after;        /* consecutive worker deaths on one key before parking; 0 = 5 */
	uint32_t spin_usec;         /* max spin before sleeping; 0 = 20, UINT32_MAX = never spin */
	uint64_t park_backoff_usec; /* first automatic un-park after; 0 = 60 s */
	uint64_t park_backoff_max_usec; /* cap of the doubling; 0 = 30 min */
	/* Called once when the owner has attached (restarted=true when a previous owner existed):
	 * re-add every key the caller knows (the informer's resync). May call ipc_queue_owner_add.
	 */
	void (*resync)(struct ipc_queue_owner *o, bool restarted, void *userdata);
	/* Called when a key is parked after park_after consecutive crashes; retry_usec: when it
	 * is un-parked by itself (from now). */
	void (*parked)(struct ipc_queue_owner *o, const char *key, uint32_t crashes,
	               uint64_t retry_usec, void *userdata);
	/* Called when a worker died (not detached): true if its death was expected (the manager
	 * fenced or stopped it), so the keys it held count as no crash. NULL: every death is one.
	 */
	bool (*death_expected)(struct ipc_queue_owner *o, void *userdata);
	void *userdata;
	/* Optional: called before the owner adds a key (ipc_queue_owner_add, _add_after,
	 * _add_rate_limited); false drops it and the call returns 0 (sharding: a key of a range
	 * this instance does not own, docs/sharding.md). Keys workers hand back are not asked. */
	bool (*accept)(const char *key, void *userdata);
};

/* Attaches as the owner of the queue in memfd (the fd is dup'ed). Fails with -EBUSY if another
 * live process owns it, -EPROTO on a bad magic/version. cfg may be NULL for defaults. */
int ipc_queue_owner_new(struct ipc_queue_owner **ret, struct ipc_loop *loop, int memfd,
                        const struct ipc_queue_owner_config *cfg);
/* Detaches (the memfd and what clients hold stay; a later owner adopts them). NULL-safe. */
struct ipc_queue_owner *ipc_queue_owner_free(struct ipc_queue_owner *o);
static inline void ipc_queue_owner_freep(struct ipc_queue_owner **o)
{
	ipc_queue_owner_free(*o);
}
#define _cleanup_ipc_queue_owner_ __attribute__((cleanup(ipc_queue_owner_freep)))

/* Direct calls into the owner's state (informerd's handlers run in the owner process). Keys
 * are handed to workers at the end of the current loop iteration (a post source coalesces a
 * burst of Adds into one dispatch), or at once by ipc_queue_owner_pump().
 * Return 0 or -EINVAL (key empty or longer than IPC_QUEUE_KEY_MAX), -ENOMEM, -ESHUTDOWN. */
int ipc_queue_owner_add(struct ipc_queue_owner *o, const char *key);
int ipc_queue_owner_add_after(struct ipc_queue_owner *o, const char *key, uint64_t delay_usec);
int ipc_queue_owner_add_rate_limited(struct ipc_queue_owner *o, const char *key);
int ipc_queue_owner_forget(struct ipc_queue_owner *o, const char *key);
/* >= 0 requeue count, or -EINVAL. */
int ipc_queue_owner_num_requeues(struct ipc_queue_owner *o, const char *key);
/* Keys waiting in the FIFO (client-go Len()). */
size_t ipc_queue_owner_len(const struct ipc_queue_owner *o);
/* Keys leased to workers right now. */
size_t ipc_queue_owner_processing(const struct ipc_queue_owner *o);
/* Reads every client channel and dispatches now (the loop does this by itself; code in the
 * owner process that wants keys out before returning to the loop may call it). Never spins and
 * never sleeps. Returns 0 or -errno. */
int ipc_queue_owner_pump(struct ipc_queue_owner *o);
/* ShutDown: ignore new Adds, drop the delay heap, keep dispatching the FIFO, then close.
 * ipc_queue_owner_drained() turns true when nothing is queued or processing (ShutDownWithDrain). */
int ipc_queue_owner_shutdown(struct ipc_queue_owner *o);
bool ipc_queue_owner_drained(const struct ipc_queue_owner *o);
/* Un-parks a parked key and Adds it. -ENOENT if it was not parked. */
int ipc_queue_owner_unpark(struct ipc_queue_owner *o, const char *key);
/* A clean slate (a new leadership term): every parked key is un-parked and Added, every crash
 * count and run of parks reset. Returns how many keys were un-parked. */
size_t ipc_queue_owner_unpark_all(struct ipc_queue_owner *o);

/* Durable keys (ipc/journal.h). The owner's FIFO and delay heap die with it; its successor's
 * resync re-adds the keys of objects the cache holds, but not a key that came from a delete.
 * attach_journal opens memfd (ipc_journal_memfd_create; it outlives the owner) and queues every
 * key a previous owner left in it; returns how many, or -errno (-EPROTO not a journal).
 * set_durable(true): every Add from now on (add, add_after, add_rate_limited) also writes its key
 * to the journal before it returns, until set_durable(false); the key leaves the journal once
 * its work is finished (not queued, not waiting, not processing, not parked), or stays there
 * over a shutdown. durable_keys: how many keys the journal holds. */
int ipc_queue_owner_attach_journal(struct ipc_queue_owner *o, int memfd);
void ipc_queue_owner_set_durable(struct ipc_queue_owner *o, bool on);
size_t ipc_queue_owner_durable_keys(const struct ipc_queue_owner *o);

/* ---- client ------------------------------------------------------------------------------- */
enum ipc_queue_role {
	IPC_QUEUE_PRODUCER = 1u << 0,
	IPC_QUEUE_WORKER = 1u << 1,
};

/* Attaches to the queue in memfd (dup'ed) and claims one slot per role. prefetch (worker):
 * how many leases the owner may queue for this worker ahead of Get, 1..IPC_QUEUE_LEASE_RING
 * (0 = 1; 1 is client-go's exact behaviour: a key is "processing" only once Get returned it).
 * Returns 0, -EPROTO (bad layout), -ENOSPC (no free slot). */
int ipc_queue_attach(struct ipc_queue **ret, int memfd, unsigned roles, unsigned prefetch);
/* Detaches: the slots go back to the owner, which resets them on its next pass (a key still
 * held, or prefetched, is re-queued; nothing counts as a crash). A process that exits without
 * calling this is handled through its pidfd instead. NULL-safe. */
struct ipc_queue *ipc_queue_free(struct ipc_queue *q);
static inline void ipc_queue_freep(struct ipc_queue **q)
{
	ipc_queue_free(*q);
}
#define _cleanup_ipc_queue_ __attribute__((cleanup(ipc_queue_freep)))

/* Producer calls. Block while the add ring is full (the owner is slow or restarting) up to
 * timeout_usec, then -ETIMEDOUT. -EINVAL bad key, -EPERM not a producer. */
int ipc_queue_add(struct ipc_queue *q, const char *key);
int ipc_queue_add_after(struct ipc_queue *q, const char *key, uint64_t delay_usec);
int ipc_queue_add_rate_limited(struct ipc_queue *q, const char *key);
int ipc_queue_forget(struct ipc_queue *q, const char *key);
void ipc_queue_set_add_timeout(struct ipc_queue *q, uint64_t timeout_usec); /* default 10 s */

/* Worker: waits up to timeout_usec (0 = poll, UINT64_MAX = forever) for a key; copies it into
 * key (keysz >= IPC_QUEUE_KEY_MAX + 1 always suffices). Returns the key length, -EAGAIN (poll,
 * nothing), -ETIMEDOUT, -ESHUTDOWN (queue shut down and drained), -EBUSY (a key is still held:
 * call ipc_queue_done first), -ENOBUFS (keysz too small; the lease stays), -EPERM. */
int ipc_queue_get(struct ipc_queue *q, char *key, size_t keysz, uint64_t timeout_usec);
/* NumRequeues of the key held (its failure count when it was leased). -ENOENT if none held. */
int ipc_queue_num_requeues(const struct ipc_queue *q);
enum ipc_queue_done_flags {
	IPC_QUEUE_DONE_FORGET = IPC_Q_REPLY_FORGET,             /* Forget(key) */
	IPC_QUEUE_DONE_RATE_LIMITED = IPC_Q_REPLY_RATE_LIMITED, /* AddRateLimited(key) */
	IPC_QUEUE_DONE_AFTER = IPC_Q_REPLY_AFTER,               /* AddAfter(key, after_usec) */
};
/* Done(key held) combined with what a client-go worker calls just before Done. Never blocks.
 * Returns 0 or -ENOENT (nothing held). */
int ipc_queue_done(struct ipc_queue *q, unsigned flags, uint64_t after_usec);

/* Loop integration for a worker: arms a futex wait in loop; cb runs when a lease may be
 * available (then call ipc_queue_get(…, 0)); re-arm by calling ipc_queue_watch again. */
int ipc_queue_watch(struct ipc_queue *q, struct ipc_loop *loop,
                    void (*cb)(struct ipc_queue *q, void *ud), void *userdata);

/* ---- metrics (any process with the memfd) --------------------------------------------------- */
struct ipc_queue_metrics {
	char name[IPC_QUEUE_NAME_MAX + 1];
	uint64_t depth, adds_total, retries_total, parked, parked_total, worker_deaths_total,
	        owner_restarts_total, protocol_errors_total;
	double unfinished_work_seconds, longest_running_processor_seconds;
	/* histograms: le = 1e-8 * 10^i seconds, cumulative, plus count and sum (seconds) */
	uint64_t queue_duration_le[IPC_QUEUE_HIST_BUCKETS], queue_duration_count;
	double queue_duration_sum;
	uint64_t work_duration_le[IPC_QUEUE_HIST_BUCKETS], work_duration_count;
	double work_duration_sum;
};
int ipc_queue_metrics_read(int memfd, struct ipc_queue_metrics *out);

/* The parked keys the owner lists (at most IPC_QUEUE_PARKED_SHOWN; metrics.parked is the
 * exact count). Fills up to n entries and returns how many, or -errno. */
struct ipc_queue_parked_key {
	char key[IPC_QUEUE_KEY_MAX + 1];
	uint32_t crashes, parks;
	uint64_t unpark_at_usec; /* CLOCK_MONOTONIC */
};
int ipc_queue_parked_read(int memfd, struct ipc_queue_parked_key *out, size_t n);
