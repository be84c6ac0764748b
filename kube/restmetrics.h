/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * kube/restmetrics.h - client-go's rest_client_requests_total and
 * rest_client_request_duration_seconds, counted by every kcmd process into one shared table.
 *
 * Design note.
 *   kcmd is several processes (manager, informerd, workers), each with its own kube_client; an
 *   operator wants one number per (code, method, host) as kube-controller-manager exports it.
 *   The manager creates a memfd holding a fixed table of rows and hands it to its children
 *   (KCMD_REST_METRICS_FD); kube_client_new() attaches to it once per process. Every request
 *   attempt (retries count again, as in client-go) increments its row with relaxed atomics;
 *   nothing blocks, nothing is locked.
 *
 *   A row is claimed lock-free: state 0 -> 1 by CAS, key written, state 2 (release). Two
 *   processes claiming the same key at once may make two rows with one key; readers sum rows with
 *   equal keys, so that race costs a row, never a count. A full table counts into `dropped`.
 *
 *   Labels as client-go: code is the HTTP status, or "<error>" when no response arrived (code 0
 *   here); method the HTTP method; host the server's host:port. Durations (label verb = the
 *   method, host) are observed for every attempt except WATCH (its length is the watch's life),
 *   in client-go's buckets.
 *
 * INVARIANTS
 *   Who writes: every attached process (the manager, informerd, every worker), any number at
 *   once, lock-free. Who reads: the manager's /metrics (kube_rest_metrics_read, a read-only
 *   mapping per call). The layout (struct rm_table in restmetrics.c) lives only in that file.
 *   R1 A row's state goes FREE -> CLAIMED -> READY and never back. Only the process whose CAS
 *      FREE -> CLAIMED succeeded writes the row's key (method, code, host), then stores READY
 *      with release; anyone reads the key only after loading READY with acquire (pairs with
 *      that store), so a key is never read half written, and it never changes afterwards.
 *   R2 Counters are _Atomic uint64_t changed only by relaxed fetch_add: they only grow, no
 *      increment is lost between processes, and each load is untorn.
 *   R3 Σ buckets <= dur_count in every row a reader returns (so le="60" <= le="+Inf" on
 *      /metrics): an observation adds dur_sum_usec and dur_count first, then its bucket with a
 *      release fetch_add; the reader loads every bucket with acquire (pairs with that add)
 *      before it loads dur_count and dur_sum_usec, so each bucket increment it sees comes
 *      with its dur_count increment. The converse is not promised (an observation above the
 *      last bound has no bucket; one in flight may be in dur_count only), nor any relation
 *      between count (requests) and dur_count, nor between two rows.
 *   Reader retry rule: none needed; a read is a snapshot of monotonic counters, each row
 *      consistent as R3 says. Rows with equal keys (two claimants raced, R1) are summed by
 *      the caller.
 *   Death: a writer killed mid-observation loses at most that observation's later parts (R3
 *      still holds); one killed between CLAIMED and READY leaves its row CLAIMED forever:
 *      skipped by readers and writers, one row of KUBE_RM_ROWS lost, no count lost (the next
 *      observation of that key claims another row). A reader holds no state in the table.
 *   Version rule: magic, version (RM_VERSION), row count and the file size are checked on
 *      every attach and read (-EINVAL on a mismatch); any layout change bumps RM_VERSION. The
 *      creator writes magic last (release fence) before handing the fd to any child.
 */
#include <stdbool.h>
#include <stdint.h>

#define KUBE_RM_ROWS     256
#define KUBE_RM_HOST_MAX 120
#define KUBE_RM_NBUCKETS 12
/* client-go's rest_client_request_duration_seconds buckets (seconds) */
#define KUBE_RM_BUCKETS_S                                                                          \
	{                                                                                          \
		0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60                               \
	}

/* Creates the shared table (memfd "kcmd-rest-metrics", MFD_CLOEXEC). Returns the fd or -errno. */
int kube_rest_metrics_create(void);

/* Makes this process count into the table behind fd (mapped read-write; fd may be closed
 * afterwards). Idempotent: a second call with any fd is a no-op returning 0. -EINVAL when fd is
 * not such a table. */
int kube_rest_metrics_attach(int fd);

/* kube_client_new() calls this: attaches from KCMD_REST_METRICS_FD when set (once). */
void kube_rest_metrics_attach_env(void);

/* One finished attempt. code 0 = no response. usec < 0 = no duration to observe. Cheap no-op
 * when the process is not attached. */
void kube_rest_metrics_observe(const char *method, int code, const char *host, int64_t usec);

/* One Event dropped because a recorder's queue was full (lib/evrec.h): the manager renders the
 * sum as kcmd_events_dropped_total. Cheap no-op when the process is not attached. */
void kube_rest_metrics_event_dropped(void);
/* The Events dropped so far, from the table behind fd. 0 or -errno. */
int kube_rest_metrics_events_dropped(int fd, uint64_t *ret);

struct kube_rest_metrics_row {
	const char *method;
	int code;
	const char *host;
	uint64_t count;
	uint64_t buckets[KUBE_RM_NBUCKETS]; /* per bucket, not cumulative */
	uint64_t dur_count, dur_sum_usec;   /* observations with a duration */
};
/* Calls fn for every used row of the table behind fd (mapped read-only for the call); rows
 * with equal keys are reported separately. Returns the number of rows, or -errno; *dropped gets
 * the attempts not counted because the table was full (may be NULL). */
int kube_rest_metrics_read(int fd, void (*fn)(const struct kube_rest_metrics_row *row, void *ud),
                           void *ud, uint64_t *dropped);
