/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/job/job.h: the Job controller's pure parts (no I/O), upstream pkg/controller/job's
 * indexed_job_utils.go (completed-index intervals), backoff_utils.go (the pod-creation backoff)
 * and the pod predicates of job_controller.go. See docs/job.md.
 *
 * Design note.
 *   Intervals are kept as upstream's orderedIntervals: sorted, disjoint, not adjacent. Their
 *   text form is upstream's exactly ("1,3-5,7"; two adjacent indexes print as "1,2"), and the
 *   parser is upstream's parseIndexesFromString (a corrupt interval is skipped, an interval
 *   starting at or past `completions` ends the parse, a last index past it is clamped).
 *   The backoff record is computed from the pods themselves (see job_backoff_record), not kept
 *   in process memory as upstream's podBackoffStore: a Job's key is synced by any of the worker
 *   processes, and the pods (finished ones keep their records until deleted) carry the facts.
 *   Functions return 0 or -errno (-ENOMEM, -EINVAL) and never log.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kcmd/controller.h"
#include "kcmd/metrics.h"
#include "kube/model.h"
#include "workers/replicaset/expectations.h"

#define JOB_CONTROLLER         "job-controller"
#define JOB_TRACKING_FINALIZER "batch.kubernetes.io/job-tracking"
#define JOB_INDEX_KEY          "batch.kubernetes.io/job-completion-index"
#define JOB_INDEX_ENV          "JOB_COMPLETION_INDEX"
#define JOB_INDEX_FAILURE_KEY  "batch.kubernetes.io/job-index-failure-count"
#define JOB_INDEX_IGNORED_KEY  "batch.kubernetes.io/job-index-ignored-failure-count"
#define JOB_MAX_UNCOUNTED      500                    /* upstream MaxUncountedPods */
#define JOB_MAX_CREATE_DELETE  500                    /* upstream MaxPodCreateDeletePerSync */
#define JOB_BACKOFF_DEFAULT_US (10ull * 1000000)      /* DefaultJobPodFailureBackOff */
#define JOB_BACKOFF_MAX_US     (10ull * 60 * 1000000) /* MaxJobPodFailureBackOff */

struct job_interval {
	int64_t first, last;
};

struct job_intervals {
	struct job_interval *v;
	size_t n, cap;
};

void job_iv_free(struct job_intervals *iv);
/* parseIndexesFromString(s, completions) into *ret (emptied first). 0 or -ENOMEM. */
int job_iv_parse(const char *s, int64_t completions, struct job_intervals *ret);
/* *ret = a merged with the sorted indexes idx[0..n) (duplicates allowed): withOrderedIndexes. */
int job_iv_with(const struct job_intervals *a, const int64_t *idx, size_t n,
                struct job_intervals *ret);
/* *ret = a merged with b (merge). */
int job_iv_merge(const struct job_intervals *a, const struct job_intervals *b,
                 struct job_intervals *ret);
int64_t job_iv_total(const struct job_intervals *iv);
bool job_iv_has(const struct job_intervals *iv, int64_t ix);
/* The text form, malloc'd ("" for none). 0 or -ENOMEM. */
int job_iv_string(const struct job_intervals *iv, char **ret);
/* firstPendingIndexes: up to count indexes < completions not in non_pending, ascending, into
 * out (room for count). Returns how many. */
size_t job_first_pending(const struct job_intervals *non_pending, size_t count, int64_t completions,
                         int64_t *out);

/* getCompletionIndex over a label or annotation value: the index, or -1 (absent, not a
 * decimal, negative, out of range). */
int64_t job_parse_index(const char *v);

/* ---- backoff --------------------------------------------------------------------------------- */
/* A finished pod as the backoff sees it. */
struct job_finished {
	bool failed;        /* else succeeded */
	kube_time_t finish; /* getFinishedTime */
};
struct job_backoff {
	int32_t failures_after_last_success;
	kube_time_t last_failure; /* 0 when none */
};
/* The backoff record over every finished pod of the Job (counted or not): failures that
 * finished after the newest success, and the newest of them. */
void job_backoff_record(const struct job_finished *p, size_t n, struct job_backoff *ret);
/* getRemainingTimeForFailuresCount: microseconds until the next pod may be created (0: now). */
uint64_t job_backoff_remaining_us(const struct job_backoff *b, kube_time_t now, uint64_t base_us,
                                  uint64_t max_us);

/* ---- pods ------------------------------------------------------------------------------------ */
/* What the sync knows of one of the Job's pods (typed cache record). */
struct job_pod {
	char *name, *uid;
	enum kube_pod_phase phase;
	bool ready, scheduled, tracking; /* tracking: has JOB_TRACKING_FINALIZER */
	kube_time_t creation, deletion, ready_transition;
	int64_t deletion_grace_s; /* metadata.deletionGracePeriodSeconds (0: none) */
	int32_t restarts;         /* the record's largest container restartCount */
	int64_t index;            /* completion index label, -1 */
	/* podFailurePolicy, evaluated for Failed pods with the finalizer when the Job has one */
	bool pfp_done, pfp_count; /* pfp_count: counts as failed (false: Ignore) */
	int pfp_action;           /* enum job_pfp_action */
	char *pfp_msg;            /* FailJob's message */
	/* backoffLimitPerIndex: the index failure count annotations (read with the pod's JSON
	 * for failed pods with the finalizer), and whether the pod's finalizer removal waits for
	 * its index's replacement (getPodsWithDelayedDeletionPerIndex) */
	int32_t fail_count, ign_count;
	bool delayed;
	bool adopt; /* an orphan matching the selector, claimed once the adoption PATCH succeeds */
	char *ctl_uid; /* orphan cleanup only: the uid of the pod's controller reference */
};

bool job_pod_active(const struct job_pod *p);      /* FilterActivePods */
bool job_pod_terminating(const struct job_pod *p); /* CountTerminatingPods */
/* isPodFailed; only_replace_failed: onlyReplaceFailedPods(job) */
bool job_pod_failed(const struct job_pod *p, bool only_replace_failed);
/* getFinishedTime from what the record holds: the Ready=False transition, else the deletion
 * timestamp less the grace period, else the creation timestamp. */
kube_time_t job_pod_finish_time(const struct job_pod *p);
/* controller.ActivePods' Less: the pod to delete first sorts first. */
int job_pod_cmp_active(const struct job_pod *a, const struct job_pod *b);

/* The generateName of a pod: "<job>-" or "<job>-<index>-", truncated as upstream's
 * names.SimpleNameGenerator would need (max 58 bytes of prefix). */
void job_pod_generate_name(const char *job, int64_t index, char *buf, size_t n);

/* ---- backoffLimitPerIndex (indexed_job_utils.go, backoff_utils.go) ----------------------------
 * A pod's failure counts come from its annotations JOB_INDEX_FAILURE_KEY and
 * JOB_INDEX_IGNORED_KEY; the caller fills fail_count / ign_count (job_parse_int32) and, for a
 * Job with a podFailurePolicy, pfp_action / pfp_count. */
/* parseInt32: the value, or 0 (absent, not a decimal, negative, past INT32_MAX). */
int32_t job_parse_int32(const char *v);
/* isIndexFailed: the failed pod fails its index (a FailIndex rule, or a counted failure whose
 * index failure count already reached backoffLimitPerIndex). */
bool job_index_failed(const struct job_pod *p, bool only_replace_failed, bool has_pfp,
                      int64_t backoff_limit_per_index);
/* calculateFailedIndexes: *ret = prev (status.failedIndexes, parsed) with the indexes of the
 * pods with the finalizer and a valid index that fail their index. 0 or -ENOMEM. */
int job_failed_indexes(const struct job_intervals *prev, const struct job_pod *pods, size_t n,
                       int64_t completions, bool only_replace_failed, bool has_pfp,
                       int64_t backoff_limit_per_index, struct job_intervals *ret);
/* getPodsWithDelayedDeletionPerIndex: sets `delayed` on the one failed pod (with the finalizer,
 * a valid index) of each index not succeeded, not failed and without an active pod, whose
 * finalizer stays until the replacement is created: the one with the largest absolute failure
 * count, the latest finish time on a tie (later pods in the array win ties). */
void job_delayed_deletion(struct job_pod *pods, size_t n, int64_t completions,
                          bool only_replace_failed, const struct job_intervals *succeeded,
                          const struct job_intervals *failed);
/* getNewIndexFailureCounts: the annotations of the pod replacing `replaced` (NULL: 0, 0). */
void job_new_index_failure_counts(const struct job_pod *replaced, bool has_pfp,
                                  int32_t *ret_failures, int32_t *ret_ignored);
/* getRemainingTimePerIndex: microseconds until the index of last_failed (NULL: none) may get
 * its replacement: the backoff for its absolute failure count + 1 since its finish time. */
uint64_t job_remaining_per_index(const struct job_pod *last_failed, kube_time_t now,
                                 uint64_t base_us, uint64_t max_us);

/* ---- selectors ------------------------------------------------------------------------------ */
struct cJSON;
/* metav1.LabelSelectorAsSelector(sel).Matches(labels) over spec.selector as JSON: NULL (or not
 * an object) matches nothing, an empty selector everything; matchLabels and matchExpressions
 * (In, NotIn, Exists, DoesNotExist; an unknown operator matches nothing). */
bool job_selector_matches(const struct cJSON *sel, const struct kube_kv *labels, uint32_t n);

/* ---- podFailurePolicy (pod_failure_policy.go) ------------------------------------------------ */
enum job_pfp_action {
	JOB_PFP_NONE = 0, /* no rule matched */
	JOB_PFP_FAIL_JOB,
	JOB_PFP_IGNORE,
	JOB_PFP_COUNT,
	JOB_PFP_FAIL_INDEX,
};
/* matchPodFailurePolicy: the first rule of policy (spec.podFailurePolicy) matching the failed
 * pod (a Pod's JSON: status.containerStatuses, initContainerStatuses, conditions). *count_failed
 * is false for Ignore; *ret_msg (malloc'd, NULL unless FailJob) is upstream's message. Returns
 * the action; -ENOMEM. */
int job_pfp_match(const struct cJSON *policy, const struct cJSON *pod, bool *count_failed,
                  char **ret_msg);

/* ---- successPolicy (success_policy.go) --------------------------------------------------------
 */
/* matchSuccessPolicy over spec.successPolicy (NULL: none) and the succeeded indexes: true with
 * upstream's message ("Matched rules at index N") in msg when a rule is met. */
bool job_success_policy_match(const struct cJSON *policy, int64_t completions,
                              const struct job_intervals *succeeded, char *msg, size_t len);

/* ---- metrics ------------------------------------------------------------------------------------
 * upstream's job_controller_* counters (pkg/controller/job/metrics), declared as data for the
 * descriptor (kcmd/controller.h `metrics`; the manager creates, passes and renders the region)
 * and updated by every worker process and the dispatcher (kcmd/metrics.h). Every label but
 * jobs_by_external_controller_total's controller_name has a fixed value set. */
enum {
	JOB_M_SYNCS = 0,      /* job_syncs_total {completion_mode, result, action} */
	JOB_M_FINISHED,       /* jobs_finished_total {completion_mode, result, reason} */
	JOB_M_PODS_FINISHED,  /* job_pods_finished_total {completion_mode, result} */
	JOB_M_PFP,            /* pod_failures_handled_by_failure_policy_total {action} */
	JOB_M_CREATIONS,      /* job_pods_creation_total {reason, status} */
	JOB_M_DURATION,       /* job_sync_duration_seconds {completion_mode, result, action} */
	JOB_M_EXTERNAL,       /* jobs_by_external_controller_total {controller_name} */
	JOB_M_TERMINATED_FIN, /* terminated_pods_tracking_finalizer_total {event} */
	JOB_M_FINISHED_IX,    /* job_finished_indexes_total {status, backoffLimit} */
	JOB_M_STALE_SKIPS,    /* stale_sync_skips_total {group, resource} */
	JOB_M_N,
};
extern const struct kcmd_metric job_metric_decl[JOB_M_N];

enum job_m_action { /* job_syncs_total's action */
	            JOB_M_RECONCILING = 0,
	            JOB_M_TRACKING,
	            JOB_M_PODS_CREATED,
	            JOB_M_PODS_DELETED,
	            JOB_M_N_ACTIONS,
};
enum job_m_reason {                    /* jobs_finished_total's reason */
	            JOB_M_SUCCESS = 0, /* CompletionsReached */
	            JOB_M_BACKOFF_LIMIT,
	            JOB_M_DEADLINE,
	            JOB_M_POD_FAILURE_POLICY,
	            JOB_M_FAILED_INDEXES,
	            JOB_M_MAX_FAILED_INDEXES,
	            JOB_M_SUCCESS_POLICY,
	            JOB_M_N_REASONS,
};
enum job_m_create { /* job_pods_creation_total's reason */
	            JOB_M_CREATE_NEW = 0,
	            JOB_M_RECREATE_TERMINATING_OR_FAILED,
	            JOB_M_RECREATE_FAILED,
	            JOB_M_N_CREATE,
};

/* Each a no-op on a NULL m (no region passed). */
/* stale_sync_skips_total: a sync skipped because the cache of resource r (JOB_CONS_PODS or
 * JOB_CONS_JOBS) is older than the controller's own last write */
void job_metrics_stale_skip(struct kcmd_metrics *m, unsigned r);
void job_metrics_sync(struct kcmd_metrics *m, bool indexed, bool error, enum job_m_action a);
/* job_sync_duration_seconds, the same labels as job_syncs_total */
void job_metrics_duration(struct kcmd_metrics *m, bool indexed, bool error, enum job_m_action a,
                          double seconds);
/* jobs_by_external_controller_total: a Job added with spec.managedBy name */
void job_metrics_external(struct kcmd_metrics *m, const char *name);
/* terminated_pods_tracking_finalizer_total: a pod event where "finished (Succeeded or Failed)
 * with the tracking finalizer" went from was to is (nothing when equal) */
void job_metrics_terminated_fin(struct kcmd_metrics *m, bool was, bool is);
/* job_finished_indexes_total: counts only positive numbers */
void job_metrics_finished_indexes(struct kcmd_metrics *m, bool failed, bool per_index, int64_t n);
void job_metrics_finished(struct kcmd_metrics *m, bool indexed, enum job_m_reason r);
/* the reason of a Complete or Failed condition; JOB_M_N_REASONS for one upstream does not list
 * (a success is one of CompletionsReached, SuccessPolicy) */
enum job_m_reason job_metrics_reason(const char *reason);
/* counts only positive numbers (a series appears with its first pod) */
void job_metrics_pods_finished(struct kcmd_metrics *m, bool indexed, int64_t succeeded,
                               int64_t failed);
/* action: 0 FailJob, 1 Ignore, 2 Count, 3 FailIndex */
void job_metrics_pfp(struct kcmd_metrics *m, int action);
void job_metrics_creations(struct kcmd_metrics *m, enum job_m_create reason, int64_t succeeded,
                           int64_t failed);

/* ---- consistency store (StaleControllerConsistencyJob, upstream util/consistency) -------------
 * The ReplicaSet controller's store (workers/replicaset/expectations.h: rs_exp_wrote_at,
 * rs_exp_ensure_ready), kept in the Job controller's expectations region under the Job's key;
 * its two resource slots hold pods and jobs.batch. */
#define JOB_CONS_PODS RS_CONS_PODS        /* "pods" */
#define JOB_CONS_JOBS RS_CONS_REPLICASETS /* "jobs.batch" (the region's second resource) */
/* GroupResource.String() of r: "pods", "jobs.batch". */
const char *job_cons_resource_name(unsigned r);
/* consistencyStore.EnsureReady for key: read_rv[JOB_CONS_PODS / JOB_CONS_JOBS] are the pod and
 * Job stores' last synced resourceVersions, read before the objects (NULL or "": unknown).
 * Returns 0 when the sync may go on (the record, if any, cleared); 1 when a write of this
 * controller is newer than what the cache has seen: stale_sync_skips_total counted on m, upstream's
 * ConsistencyError text in msg (may be NULL); -EINVAL / -EPERM from the store. */
int job_consistency_ready(struct rs_exp *exp, const char *key,
                          const char *const read_rv[RS_EXP_CONS_RESOURCES], struct kcmd_metrics *m,
                          char *msg, size_t msglen);

/* ---- orphan pods ------------------------------------------------------------------------------
 * The sync releases the tracking finalizer of pods whose controller reference names the Job's
 * name with a uid the cache does not hold (the Job is missing from the cache, or the cache holds
 * another uid). A stale cache (a new leader, an informer relisting after an apiserver restart)
 * may lack a Job that exists: before removing finalizers the sync reads the Job with a live GET.
 * job_orphan_confirmed: get_err is that GET's result (0, -ENOENT, another -errno), live_uid the
 * uid it returned; ctl_uid the uid of a candidate pod's controller reference. True when the
 * finalizer may go (the Job is gone, or the live Job is another one); false when the live Job
 * is the pod's controller (the cache is stale: requeue) or the GET failed (retry). */
bool job_orphan_confirmed(int get_err, const char *live_uid, const char *ctl_uid);
