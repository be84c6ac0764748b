/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/tainteviction/store.h: the pending evictions kept in a memfd the manager holds, so a
 * worker that dies does not lose their times (docs/taint-eviction.md, "Crashes and restarts").
 *
 * INVARIANTS
 *   Layout: a header page (magic, version, slot size, slot count, high-water mark), then
 *   n_slots fixed-size slots from offset TE_STORE_HDR. The memfd is sparse: a slot costs memory
 *   once written; slots are allocated from the lowest free index, so used memory stays dense.
 *   Writers: one, the controller's single worker process (worker_count 1); the manager only
 *   creates the memfd and keeps it open. Readers: the next worker process, after the previous one
 *   is gone (the manager restarts a worker after reaping it), when it attaches.
 *   Ordering: a slot is written as state WRITING (relaxed), the fields, then state LIVE with a
 *   release store; the high-water mark is raised (release) before the slot is first written. A
 *   reader attaching loads hwm and each state with acquire, pairing with those stores.
 *   A writer killed mid-operation leaves at most one slot WRITING (or FREE above an old hwm):
 *   recovery treats it as free, so that one pending eviction is scheduled again when its key
 *   comes due (late, never early). A killed reader holds nothing.
 *   Version rule: another magic or version, or a slot size other than this build's, is refused
 *   (-EPROTO): the worker then runs without the store (its table in process memory only).
 *   Full: te_store_put returns -ENOSPC and the entry lives in process memory only.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "workers/tainteviction/taint.h"

#define TE_STORE_HDR      4096u
#define TE_STORE_KEY_MAX  512u /* KCMD_KEY_MAX + 1 */
#define TE_STORE_NODE_MAX 256u
#define TE_STORE_SLOTS    (64u * 1024u) /* 64 Ki pending evictions (~50 MiB, sparse) */

struct te_store;

/* A new initialised memfd (close-on-exec) of n_slots slots (0: TE_STORE_SLOTS). fd or -errno. */
int te_store_memfd_create(uint32_t n_slots);
/* Maps fd (dup'ed) and rebuilds the free list; each LIVE slot is handed to fn (key, node, its
 * times; sched.slot set), which may return < 0 to stop (returned). 0 or -EPROTO / -errno. */
typedef int (*te_store_visit_fn)(const char *key, const char *node, const struct te_sched *s,
                                 void *ud);
int te_store_attach(int fd, te_store_visit_fn fn, void *ud, struct te_store **ret);
void te_store_detach(struct te_store *st); /* NULL-safe */
/* Writes key's entry: into s->slot when it has one (rewritten in place), else into a free slot
 * whose number is stored in s->slot. 0, -ENOSPC (full: s->slot stays 0), -EINVAL (a key or node
 * too long). */
int te_store_put(struct te_store *st, const char *key, const char *node, struct te_sched *s);
/* Frees slot (0: none). */
void te_store_del(struct te_store *st, uint32_t slot);
/* Slots in use. */
uint32_t te_store_used(const struct te_store *st);
