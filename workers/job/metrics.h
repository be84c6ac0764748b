/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/job/metrics.h: the Job controller's counters, upstream's job_controller_* families
 * (pkg/controller/job/metrics): job_syncs_total, jobs_finished_total, job_pods_finished_total,
 * pod_failures_handled_by_failure_policy_total, job_pods_creation_total. Kept in a memfd the
 * manager creates (mgr_setup) and renders (mgr_metrics); written by the worker processes.
 *
 * INVARIANTS (struct job_metrics_region in metrics.c)
 *   - Writers: every Job worker process at once; reader: the manager's /metrics rendering.
 *   - Every series has a fixed slot (its labels are indexes into fixed value lists), so nothing
 *     is published or allocated: a counter is a 64-bit atomic, added relaxed by a writer and
 *     loaded relaxed by the reader (each value is monotonic on its own; no two need agree).
 *   - A writer that dies mid-add either added or did not (one atomic instruction); nothing to
 *     repair. The table never fills: the label values are the closed sets upstream documents.
 *   - Version rule: the magic carries the layout version; a region with another magic is refused.
 *   Not kept: job_sync_duration_seconds (a histogram), terminated_pods_tracking_finalizer_total
 *   (counted by upstream's pod handlers), job_finished_indexes_total,
 *   jobs_by_external_controller_total.
 */
#include <stdbool.h>
#include <stdint.h>

enum job_m_action { /* job_syncs_total's action */
	            JOB_M_RECONCILING = 0,
	            JOB_M_TRACKING,
	            JOB_M_PODS_CREATED,
	            JOB_M_PODS_DELETED,
	            JOB_M_N_ACTIONS,
};
enum job_m_reason { /* jobs_finished_total's reason ("" for a success) */
	            JOB_M_SUCCESS = 0,
	            JOB_M_BACKOFF_LIMIT,
	            JOB_M_DEADLINE,
	            JOB_M_POD_FAILURE_POLICY,
	            JOB_M_FAILED_INDEXES,
	            JOB_M_MAX_FAILED_INDEXES,
	            JOB_M_N_REASONS,
};
enum job_m_create { /* job_pods_creation_total's reason */
	            JOB_M_CREATE_NEW = 0,
	            JOB_M_RECREATE_TERMINATING_OR_FAILED,
	            JOB_M_RECREATE_FAILED,
	            JOB_M_N_CREATE,
};

struct job_metrics;

/* The manager's region: a sealed-size memfd. Returns the fd or -errno. */
int job_metrics_memfd_create(void);
/* Maps fd (writer: a worker; else read-only). 0 or -errno (-EPROTO: another layout). */
int job_metrics_attach(int fd, bool writer, struct job_metrics **ret);
void job_metrics_detach(struct job_metrics *m);

/* Each a no-op on a NULL m. */
void job_metrics_sync(struct job_metrics *m, bool indexed, bool error, enum job_m_action a);
void job_metrics_finished(struct job_metrics *m, bool indexed, enum job_m_reason r);
/* the reason of a Failed condition; JOB_M_N_REASONS for one upstream does not list */
enum job_m_reason job_metrics_reason(const char *reason);
void job_metrics_pods_finished(struct job_metrics *m, bool indexed, int64_t succeeded,
                               int64_t failed);
/* action: 0 FailJob, 1 Ignore, 2 Count */
void job_metrics_pfp(struct job_metrics *m, int action);
void job_metrics_creations(struct job_metrics *m, enum job_m_create reason, int64_t succeeded,
                           int64_t failed);
/* The families in the Prometheus text format, series with a value only (HELP/TYPE only for a
 * family with a series, as client_golang's registry). *ret is malloc'd. 0 or -ENOMEM. */
int job_metrics_text(struct job_metrics *m, char **ret);
