/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * manager/status.h: the manager's state as `kcmctl status` shows it (library `mgrstatus`).
 *
 * Design note.
 *   The leader-election state and the process table live in the manager's memory only. The
 *   manager copies them, on every change and once a second, into a memfd "kcmd-status" it keeps
 *   open; kcmctl opens that memfd through /proc/<pid>/fd (kcmd's user or root only, as the arena
 *   and the queues) and maps it read-only. A sequence counter (odd while the manager writes)
 *   lets the reader retry a torn copy; the reader never blocks or signals the manager.
 *   Rejected: a lock in the page (a kcmctl stopped inside it would stall the manager's loop)
 *   and a socket request (kcmctl must work when the manager's loop is busy or wedged).
 *
 * INVARIANTS (the page layout is struct page in status.c: magic, version, size, seq, then a
 * struct mgr_status stored as 64-bit words)
 *   Who writes: the manager's loop only (mgr_status_publish on every change and once a
 *   second). Who reads: any number of kcmctl processes (mgr_status_read), each through its
 *   own read-only mapping for the duration of one call.
 *   S1 seq is even when the page holds a whole publication and odd while one is being
 *      written; only the writer changes it, and only upwards.
 *   S2 Writer: seq = s + 1 (relaxed), release fence, every payload word stored with a relaxed
 *      atomic store, seq = s + 2 (release). Every payload word is an _Atomic uint64_t, so no
 *      word is ever torn and there is no data race in C11's sense.
 *   S3 Reader: s1 = seq (acquire; pairs with the writer's final release store, so the
 *      publication s1 is visible), odd -> retry; copy every word (relaxed loads); acquire
 *      fence (pairs with the writer's release fence after its odd store: a word from a later
 *      publication makes that odd store visible); s2 = seq (relaxed). s1 == s2: the copy is
 *      exactly publication s1. Otherwise retry.
 *   Reader retry rule: at most 1000 attempts, sleeping 100 us while seq is odd, then -EAGAIN
 *      (the manager publishes about once a second, so retries are rare). A reader trusts
 *      the layout, not the contents: it terminates the strings and clamps n_children.
 *   Death: a writer killed mid-publication leaves seq odd; readers then end with -EAGAIN
 *      after about 0.1 s, never with a mixed copy. In kcmd the page dies with the manager
 *      (kcmctl finds it through /proc/<manager pid>/fd) and a restarted manager creates a new
 *      one; a writer that does reuse a page left odd first rounds seq up to even. A reader
 *      killed at any point leaves nothing behind (it never writes the page).
 *   Version rule: the reader checks magic, version (STATUS_VERSION) and the page's size
 *      against its own and refuses (-EINVAL) any difference; any change to struct page or
 *      struct mgr_status (MGR_STATUS_MAX_CHILDREN included) bumps STATUS_VERSION.
 */
#include <stdbool.h>
#include <stdint.h>

#define MGR_STATUS_MAX_CHILDREN 64
#define MGR_STATUS_MAX_MEMBERS  16
#define MGR_STATUS_MAX_RANGES   256 /* KUBE_FENCE_MAX_RANGES */

struct mgr_status_child {
	char name[64];
	char group[32];
	int32_t pid;   /* 0 unless running */
	int32_t state; /* enum mgr_child_state: 0 stopped, 1 running, 2 backoff */
	uint64_t restarts;
	int64_t started_unix_usec;      /* wall clock of the last start, 0 if never */
	int32_t last_code, last_status; /* waitid's CLD_* and status of the last exit, 0 if none */
	uint8_t crash_looping;
};

struct mgr_status {
	char identity[256]; /* this manager's leader-election identity */
	char lease[320];    /* "namespace/name" */
	char holder[256];   /* the holder this manager last observed ("" none or unknown) */
	uint8_t leader_elect, leading, stopping, ready;
	int32_t manager_pid;
	int64_t manager_started_unix_usec;
	int64_t updated_unix_usec;
	int64_t lease_transitions; /* the Lease's leaseTransitions last observed (the term); -1 none
	                            */
	uint32_t n_children;
	struct mgr_status_child children[MGR_STATUS_MAX_CHILDREN];
	/* --shard-ranges (docs/sharding.md); shard_ranges 0: sharding off, the rest zero */
	uint32_t shard_ranges;
	uint32_t n_members; /* live members as last listed (at most MGR_STATUS_MAX_MEMBERS) */
	char members[MGR_STATUS_MAX_MEMBERS][128];
	/* per range: its Lease's holder as an index into members; -1 none, -2 an identity that
	 * is not a live member (an expired holder) */
	int16_t range_holder[MGR_STATUS_MAX_RANGES];
	uint8_t range_owned[MGR_STATUS_MAX_RANGES]; /* this manager owns it now */
};

struct mgr_status_page;

/* Creates the memfd (MFD_CLOEXEC) and maps it. Returns 0 or -errno. */
int mgr_status_create(struct mgr_status_page **ret, int *ret_fd);
/* Copies st into the page (seqlock writer). NULL-safe. */
void mgr_status_publish(struct mgr_status_page *p, const struct mgr_status *st);
/* NULL-safe. */
struct mgr_status_page *mgr_status_free(struct mgr_status_page *p);
/* Reads a consistent copy from the memfd behind fd (mapped read-only for the call). Returns 0,
 * -EINVAL (not a status memfd), -EAGAIN (the writer kept writing), or -errno. */
int mgr_status_read(int fd, struct mgr_status *ret);
