/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/hpa/hpa.h: the horizontal pod autoscaler's pure decisions (upstream
 * pkg/controller/podautoscaler: replica_calculator.go, metrics/utilization.go and the
 * normalisation half of horizontal.go), kept free of I/O so the unit tests can run upstream's
 * arithmetic cases (tests/test-hpa.c).
 *
 * Design note.
 *   The replica calculator works on two arrays: the pods the target's selector picks (with
 *   their phase, readiness, start time and request for the resource) and the metric samples
 *   the metrics API returned (by pod name). Upstream keeps the samples in a map and mutates
 *   it (drops unready pods, fills in missing ones); here a working copy of the samples is
 *   extended in place, so extraneous samples (a pod the selector no longer picks) count
 *   exactly where upstream counts them. The recommendation history and the scale events that
 *   the stabilisation windows and the behaviour policies read are the caller's (struct
 *   hpa_history, one per HPA key, in the worker's memory as upstream keeps them in the
 *   controller's maps); every function takes "now" so the tests need no clock.
 *   Rejected: folding the history into the HPA's status (upstream keeps it in memory; a
 *   restart forgets it there too).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/model.h" /* kube_time_t: ns since the epoch */

#define HPA_CONTROLLER "horizontal-pod-autoscaler-controller"
#define HPA_QUEUE      "horizontalpodautoscaler"
#define HPA_COMPONENT  "horizontal-pod-autoscaler"

struct hpa_tolerances {
	double down, up;
};
/* Tolerances.isWithin */
bool hpa_tol_within(struct hpa_tolerances t, double ratio);

enum hpa_phase { HPA_POD_OTHER = 0, HPA_POD_PENDING, HPA_POD_RUNNING, HPA_POD_FAILED };

/* One pod the target's selector picks. */
struct hpa_pod {
	const char *name;
	bool deleting; /* deletionTimestamp set */
	enum hpa_phase phase;
	bool has_ready;          /* a Ready condition exists */
	bool ready;              /* ... with status True */
	bool ready_false;        /* ... with status False */
	kube_time_t ready_ltt;   /* its lastTransitionTime */
	kube_time_t start;       /* status.startTime, 0 if absent */
	int64_t request;         /* milli-units of the resource (calculateRequests) */
	const char *request_err; /* non-NULL: calculateRequests' error for this pod */
};

/* One sample of the metrics API. */
struct hpa_sample {
	const char *name;
	int64_t value; /* milli-units */
	kube_time_t ts;
	int64_t window_ns;
};

struct hpa_calc_cfg {
	struct hpa_tolerances tol;
	int64_t cpu_init_ns;        /* --horizontal-pod-autoscaler-cpu-initialization-period */
	int64_t readiness_delay_ns; /* --horizontal-pod-autoscaler-initial-readiness-delay */
	kube_time_t now;
};

/* GetResourceReplicas after the metrics fetch: samples for a utilization target. Returns 0, or
 * -EINVAL with upstream's message in err; -ENOMEM. cpu: the resource is "cpu" (groupPods'
 * readiness rule applies to cpu only). */
int hpa_resource_replicas(const struct hpa_calc_cfg *cfg, const struct hpa_pod *pods, size_t n_pods,
                          const struct hpa_sample *samples, size_t n_samples, int32_t current,
                          int32_t target_util, bool cpu, int32_t *ret_replicas, int32_t *ret_util,
                          int64_t *ret_raw, char *err, size_t errlen);

/* calcPlainMetricReplicas: average-value targets (resource AverageValue, pods metrics). cpu as
 * above (false for pods metrics). Returns 0 or -EINVAL (message in err), -ENOMEM. */
int hpa_plain_replicas(const struct hpa_calc_cfg *cfg, const struct hpa_pod *pods, size_t n_pods,
                       const struct hpa_sample *samples, size_t n_samples, int32_t current,
                       int64_t target, bool cpu, int32_t *ret_replicas, int64_t *ret_usage,
                       char *err, size_t errlen);

/* getUsageRatioReplicaCount with the ready pods count already counted (ready: pods Running and
 * Ready). */
int32_t hpa_usage_ratio_replicas(int32_t current, double ratio, struct hpa_tolerances tol,
                                 int64_t ready);
/* GetObjectPerPodMetricReplicas / GetExternalPerPodMetricReplicas after the fetch */
int32_t hpa_per_pod_replicas(int32_t status_replicas, int64_t usage, int64_t target,
                             struct hpa_tolerances tol, int64_t *ret_avg);

/* ---- normalisation ----------------------------------------------------------------------- */
struct hpa_rec {
	int32_t replicas;
	kube_time_t ts;
};
struct hpa_scale_event {
	int32_t change;
	kube_time_t ts;
	bool outdated;
};
struct hpa_history {
	struct hpa_rec *recs;
	size_t n_recs;
	struct hpa_scale_event *up, *down;
	size_t n_up, n_down;
};
void hpa_history_free(struct hpa_history *h);
/* recordInitialRecommendation */
int hpa_history_init(struct hpa_history *h, int32_t current, kube_time_t now);

enum hpa_select { HPA_SELECT_MAX = 0, HPA_SELECT_MIN, HPA_SELECT_DISABLED };
enum hpa_policy_type { HPA_POLICY_PODS = 0, HPA_POLICY_PERCENT };
#define HPA_MAX_POLICIES 16
struct hpa_rules {
	int32_t window_s; /* stabilizationWindowSeconds (scale down: the flag's when absent) */
	enum hpa_select select;
	size_t n_policies;
	struct {
		enum hpa_policy_type type;
		int32_t value, period_s;
	} policies[HPA_MAX_POLICIES];
};

/* A condition the normalisation sets (status "True"/"False"). */
struct hpa_cond {
	const char *type, *status, *reason, *message;
};

/* normalizeDesiredReplicas (no behavior): able / limited receive AbleToScale and
 * ScalingLimited. Returns the desired count, or -ENOMEM. */
int32_t hpa_normalize(struct hpa_history *h, kube_time_t now, int64_t window_ns, int32_t current,
                      int32_t desired, int32_t min, int32_t max, struct hpa_cond *able,
                      struct hpa_cond *limited);
/* normalizeDesiredReplicasWithBehaviors */
int32_t hpa_normalize_behavior(struct hpa_history *h, kube_time_t now, const struct hpa_rules *up,
                               const struct hpa_rules *down, int32_t current, int32_t desired,
                               int32_t min, int32_t max, struct hpa_cond *able,
                               struct hpa_cond *limited);
/* convertDesiredReplicasWithRules */
int32_t hpa_convert_with_rules(int32_t current, int32_t desired, int32_t min, int32_t max,
                               const char **reason, const char **message);
/* storeScaleEvent (has_behavior false: nothing is stored, as upstream) */
int hpa_store_scale_event(struct hpa_history *h, kube_time_t now, bool has_behavior,
                          const struct hpa_rules *up, const struct hpa_rules *down, int32_t prev,
                          int32_t next);
/* calculateScaleUpLimitWithScalingRules / calculateScaleDownLimitWithBehaviors */
int32_t hpa_scale_up_limit(const struct hpa_history *h, kube_time_t now, int32_t current,
                           const struct hpa_rules *r);
int32_t hpa_scale_down_limit(const struct hpa_history *h, kube_time_t now, int32_t current,
                             const struct hpa_rules *r);
