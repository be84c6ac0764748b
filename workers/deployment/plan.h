/* SPDX-License-Identifier: Apache-2.0 */
/* workers/deployment/plan.h - the deployment controller's arithmetic, as pure functions.
 *
 * What upstream's pkg/controller/deployment (v1.37.2) decides from numbers alone: the rolling
 * update's fenceposts (maxSurge / maxUnavailable from an int or a percentage), how far the new
 * ReplicaSet may grow, how far the old ones may shrink (unhealthy replicas first, then
 * available ones, oldest first), proportional scaling of every active ReplicaSet when the
 * Deployment is resized mid-rollout, and the ScalingReplicaSet event text. The controller's sync
 * reads the cache into these structs, calls a plan function, and writes what changed; nothing
 * here allocates, blocks or talks to the apiserver, so every rule is unit-tested against
 * upstream's own test tables (workers/deployment/tests/test-plan.c).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* intstr.IntOrString as the Deployment's rollingUpdate fields hold it. */
struct dp_intstr {
	bool set;     /* false: the field is nil */
	bool is_str;  /* true: str holds e.g. "25%" */
	int32_t ival; /* the int form */
	char str[16]; /* the string form, NUL-terminated (longer strings are invalid anyway) */
};

struct dp_deployment {
	int32_t replicas; /* spec.replicas (defaulted: never nil once stored) */
	bool rolling;     /* spec.strategy.type == RollingUpdate (else Recreate) */
	struct dp_intstr max_surge, max_unavailable;
	int32_t status_replicas; /* status.replicas */
};

/* One ReplicaSet of a Deployment, as the plans need it. */
struct dp_rs {
	const char *name;
	int64_t created;      /* metadata.creationTimestamp, seconds */
	int32_t replicas;     /* spec.replicas */
	int32_t available;    /* status.availableReplicas */
	int32_t max_replicas; /* the deployment.kubernetes.io/max-replicas annotation, or -1 */
	int32_t desired;      /* the deployment.kubernetes.io/desired-replicas annotation, or -1 */
	bool is_new;          /* the Deployment's new ReplicaSet (its template matches) */
	/* for status, revisions and history cleanup */
	int64_t revision;  /* the deployment.kubernetes.io/revision annotation (0: absent) */
	bool revision_bad; /* the annotation is there but not an int64 */
	bool deleting;     /* metadata.deletionTimestamp set */
	int64_t generation, observed_generation;
	int32_t status_replicas, ready;
	int32_t terminating;  /* status.terminatingReplicas */
	bool has_terminating; /* ... is set (nil counts as unknown, not 0) */
	int32_t target;       /* out: the size a plan gives it */
};

/* intstr.GetScaledValueFromIntOrPercent: an int as is, "N%" of total rounded up or down.
 * Returns 0 or -EINVAL (not set, a string without '%', not a number). */
int dp_scaled_value(const struct dp_intstr *v, int32_t total, bool round_up, int32_t *ret);

/* ResolveFenceposts: (surge, unavailable); both zero becomes unavailable 1. nil counts as 0. */
int dp_resolve_fenceposts(const struct dp_intstr *surge, const struct dp_intstr *unavail,
                          int32_t desired, int32_t *ret_surge, int32_t *ret_unavail);

/* MaxSurge / MaxUnavailable of a rolling Deployment (0 for Recreate); MaxUnavailable is at
 * most the replicas, and 0 when replicas is 0. Invalid values count as 0 (validation refuses
 * them before they are stored). */
int32_t dp_max_surge(const struct dp_deployment *d);
int32_t dp_max_unavailable(const struct dp_deployment *d);

/* NewRSNewReplicas: the new ReplicaSet's next size (rolling: grow within maxSurge; Recreate:
 * the Deployment's replicas). all: every ReplicaSet of the Deployment (new one included). */
int dp_new_rs_new_replicas(const struct dp_deployment *d, const struct dp_rs *all, size_t n,
                           const struct dp_rs *new_rs, int32_t *ret);

/* reconcileOldReplicaSets' arithmetic: sets old[i].target for every old ReplicaSet (first the
 * unhealthy replicas of each, oldest first, within what may be scaled down; then available ones
 * down to minAvailable). old is reordered oldest first. Returns how many replicas it takes
 * away in total (0: nothing to do). */
int32_t dp_plan_scale_down_old(const struct dp_deployment *d, struct dp_rs *old, size_t n,
                               const struct dp_rs *new_rs);

/* scale(): the sizes when the Deployment's replicas changed (sync's isScalingEvent). rs[] is
 * every ReplicaSet of the Deployment, at most one with is_new. Sets every target: the one active
 * (or latest) ReplicaSet takes the whole size; a saturated new ReplicaSet zeroes the old ones;
 * otherwise a rolling Deployment's active ReplicaSets share the change in proportion to their
 * size, the leftover going to the first in upstream's order (largest first; ties newer first when
 * adding, older first when removing). rs is reordered. Returns true if upstream would update
 * every active ReplicaSet (the proportional step rewrites their annotations even when the size
 * stays), false if only the ReplicaSets whose target differs need an update. */
bool dp_plan_scale(const struct dp_deployment *d, struct dp_rs *rs, size_t n);

/* GetReplicaSetProportion (exposed for its own tests). */
int32_t dp_rs_proportion(const struct dp_rs *rs, const struct dp_deployment *d, int32_t to_add,
                         int32_t added);

/* The ScalingReplicaSet event's message: "Scaled up replica set NAME from A to B" (or down). */
int dp_scaling_message(char *buf, size_t size, const char *rs_name, int32_t from, int32_t to);

/* Sorts by creationTimestamp, then name (ReplicaSetsByCreationTimestamp). */
void dp_sort_by_creation(struct dp_rs *rs, size_t n);

/* ---- revisions, history, status, progress ------------------------------------------------ */

/* MaxRevision / LastRevision (the highest and second highest revision; unparsable ones are
 * skipped). */
int64_t dp_max_revision(const struct dp_rs *rs, size_t n);
int64_t dp_last_revision(const struct dp_rs *rs, size_t n);

/* cleanupDeployment: which old ReplicaSets to delete so that at most history_limit remain
 * (oldest revisions first; only those scaled to 0 with no replicas, fully observed, not being
 * deleted). Sets del[i] for old[i] (old is reordered by revision); returns how many. */
size_t dp_plan_cleanup(struct dp_rs *old, size_t n, int32_t history_limit, bool *del);

struct dp_status {
	int32_t replicas, updated, ready, available, unavailable;
	int32_t terminating;
	bool has_terminating; /* false when some ReplicaSet's count is unknown */
	bool min_available;   /* the Available condition: True MinimumReplicasAvailable */
};

/* calculateStatus's counts over every ReplicaSet of the Deployment (new_rs: the one with
 * is_new, or none); terminating only when the DeploymentReplicaSetTerminatingReplicas gate is
 * on (then unknown if any ReplicaSet does not report it). */
void dp_calc_status(const struct dp_deployment *d, const struct dp_rs *rs, size_t n,
                    bool terminating_gate, struct dp_status *ret);

/* The Deployment's Progressing condition as the sync found it. */
struct dp_cond {
	bool present;
	bool status_true;
	const char *reason;  /* "" when none */
	int64_t last_update; /* lastUpdateTime, seconds */
};

enum dp_progress {
	DP_PROGRESS_KEEP = 0, /* no change to the Progressing condition */
	DP_PROGRESS_COMPLETE, /* True NewReplicaSetAvailable */
	DP_PROGRESS_UPDATED, /* True ReplicaSetUpdated (keeps the transition time if it was True) */
	DP_PROGRESS_TIMED_OUT, /* False ProgressDeadlineExceeded */
	DP_PROGRESS_REMOVE,    /* no progress deadline: the condition goes */
};

struct dp_progress_in {
	int32_t spec_replicas;
	bool has_deadline;
	int32_t deadline_seconds;
	int64_t generation; /* metadata.generation (status.observedGeneration will be this) */
	struct dp_cond cur; /* from the Deployment's status */
	int32_t old_replicas, old_updated, old_ready, old_available; /* the Deployment's status */
	int64_t now;                                                 /* seconds */
};

/* syncRolloutStatus's choice for the Progressing condition, given the new counts. */
enum dp_progress dp_progress_decide(const struct dp_progress_in *in, const struct dp_status *st);

/* requeueStuckDeployment: seconds until the deadline can have passed (the caller requeues one
 * second after that, as upstream does), 0 to requeue now (rate limited), -1 for no requeue. */
int64_t dp_requeue_stuck_after(const struct dp_progress_in *in, const struct dp_status *st);

/* The condition's message: "ReplicaSet \"NAME\" has successfully progressed." etc. (the
 * Deployment's name when there is no new ReplicaSet). */
int dp_progress_message(char *buf, size_t size, enum dp_progress p, const char *deployment,
                        const char *new_rs);

/* The annotations the controller never copies between a Deployment and its ReplicaSets
 * (last-applied-configuration, revision, revision-history, desired- and max-replicas,
 * deprecated rollbackTo). */
bool dp_annotation_skipped(const char *key);

#define DP_REV_HISTORY_MAX_CHARS 2000 /* upstream's maxRevHistoryLengthInChars */
#define DP_REV_HISTORY_BUF       (DP_REV_HISTORY_MAX_CHARS + 24)

/* SetNewReplicaSetAnnotations' revision part: the new ReplicaSet's revision annotation becomes
 * new_rev when that is higher than old_rev (NULL: absent; "" counts as 0), and the revision it
 * replaces is appended to revision-history (history: NULL or the annotation), dropping the oldest
 * entries to stay within limit_chars (an entry that still does not fit is not appended). Writes
 * the results (rev_out: the revision annotation, hist_out: the history, "" for none) and sets
 * *changed. Returns 0, or -EINVAL when old_rev or new_rev is not an int64 (nothing changes, as
 * upstream returns without updating). */
int dp_revision_update(const char *old_rev, const char *history, const char *new_rev,
                       int limit_chars, char rev_out[24], char hist_out[DP_REV_HISTORY_BUF],
                       bool *changed);
