/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * ipc/journal.h: durable keys: a crash-safe set of work-queue keys in a memfd that outlives the
 * process that writes it (the queue's owner; ipc_queue_owner_attach_journal in ipc/queue.h).
 *
 * Why: a queue owner's FIFO and delay heap are private. When the owner (a controller's
 * dispatcher) dies, its successor re-adds the keys of every object the cache still holds (the
 * resync), but a key that came from a delete event names an object the cache no longer holds:
 * without a record of it, that key would be lost with the process (docs/reliability.md, "A
 * Secret delete lost with a dispatcher"). The owner writes such keys here while they wait, and
 * its successor queues them again.
 *
 * Design: the memfd is a 4 KiB header page, then fixed slots of IPC_JOURNAL_SLOT bytes (a key is
 * at most IPC_QUEUE_KEY_MAX bytes). The writer keeps the free list and the count private and
 * rebuilds them by a scan at open. It grows the memfd (doubling) when every slot is taken: there
 * is no limit but memory; it shrinks it back to its first size when the last key is dropped.
 * Rejected: an append-only log (needs compaction, and a crash-safe one needs two regions); the
 * queue memfd itself (sealed against growing: its clients map a fixed size).
 *
 * INVARIANTS
 *  J1 (one writer) Only the queue's live owner opens the journal for writing; the queue's owner
 *     rule (one live owner per queue, ipc/queue-abi.h) makes that one process at a time. The
 *     next owner opens it only after the previous one died or detached.
 *  J2 (publication) A slot is LIVE only after its key, length and checksum are stored: put
 *     writes them (relaxed), then stores state = LIVE with release. A writer killed inside put
 *     leaves the slot FREE: the key was not yet durable (put had not returned), so nothing it
 *     promised is lost. drop is one store of state = FREE. A slot's body is rewritten only
 *     while it is FREE.
 *  J3 (no trust) The opener checks every LIVE slot (length 1..IPC_QUEUE_KEY_MAX, no NUL inside,
 *     checksum) and frees a slot that fails (counted: ipc_journal_stats.corrupt); it never
 *     reads past the memfd's size, which it takes from fstat and rounds down to whole slots.
 *  J4 (growth) The memfd only grows while a key is LIVE beyond the first size, so the opener's
 *     fstat covers every slot ever published (ftruncate happens before any store to new slots).
 */
#include <stddef.h>
#include <stdint.h>

#define IPC_JOURNAL_SLOT  528u /* 16-byte slot header + a 512-byte key field */
#define IPC_JOURNAL_HDR   4096u
#define IPC_JOURNAL_FIRST (IPC_JOURNAL_HDR + 120u * IPC_JOURNAL_SLOT) /* ~66 KiB */

struct ipc_journal;

/* A new journal memfd (close-on-exec, growable, sealed against further seals only), named after
 * the queue. Returns the fd or -errno. */
int ipc_journal_memfd_create(const char *name);

/* Opens memfd (dup'ed) as its one writer (J1). -EPROTO not a journal, -errno. */
int ipc_journal_open(int memfd, struct ipc_journal **ret);
/* Unmaps; the keys stay for the next writer. NULL-safe. */
void ipc_journal_close(struct ipc_journal *j);

/* Calls fn for every LIVE key (as found at open, or put since), with its slot. Stops at fn's
 * first non-zero return, which it returns. */
int ipc_journal_foreach(struct ipc_journal *j, int (*fn)(const char *key, uint32_t slot, void *ud),
                        void *ud);
/* Makes key durable: returns its slot (>= 0) once the key is LIVE, -EINVAL (empty or longer than
 * IPC_QUEUE_KEY_MAX), -ENOMEM / -errno (growth failed: the key is not durable). */
int64_t ipc_journal_put(struct ipc_journal *j, const char *key);
/* Frees the slot (its key's work is finished). Out-of-range or free slots are ignored. */
void ipc_journal_drop(struct ipc_journal *j, uint32_t slot);

struct ipc_journal_stats {
	uint64_t live;    /* LIVE slots now */
	uint64_t slots;   /* slots the memfd holds now */
	uint64_t corrupt; /* slots freed at open because they failed J3 */
};
void ipc_journal_stats(const struct ipc_journal *j, struct ipc_journal_stats *ret);

/* Tests only: put stores LIVE before the body (J2 off), the negative control of the kill test. */
extern unsigned ipc_journal__test_early_live;
