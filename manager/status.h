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
 */
#include <stdbool.h>
#include <stdint.h>

#define MGR_STATUS_MAX_CHILDREN 64

struct mgr_status_child {
	char name[64];
	char group[32];
	int32_t pid;   /* 0 unless running */
	int32_t state; /* enum mgr_child_state: 0 stopped, 1 running, 2 backoff */
	uint64_t restarts;
	int64_t started_unix_usec; /* wall clock of the last start, 0 if never */
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
	uint32_t n_children;
	struct mgr_status_child children[MGR_STATUS_MAX_CHILDREN];
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
