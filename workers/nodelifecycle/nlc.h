/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/nodelifecycle/nlc.h: the node lifecycle controller's pure decisions
 * (docs/nodelifecycle.md), kept apart from the process (plugin.c) so they are unit-tested:
 *   - a zone's key from a Node's labels (nodetopology.GetZoneKey) and a zone's state from its
 *     nodes' Ready conditions (ComputeZoneState), the reduced eviction rate (ReducedQPSFunc);
 *   - the rate-limited timed queue of nodes to taint (scheduler.RateLimitedTimedQueue) with its
 *     token bucket (burst 1, flowcontrol.NewTokenBucketRateLimiter) and SwapLimiter;
 *   - the health decision of one node (tryUpdateNodeHealth): what the controller remembers of
 *     a node between passes, whether its heartbeat (Ready's lastHeartbeatTime or the node's
 *     Lease renewTime) is older than the grace period, and then the Unknown conditions it
 *     writes into the node's JSON;
 *   - taints: the NoSchedule taints a node's conditions call for (doNoScheduleTaintingPass),
 *     adding/updating and removing taints (taintutils.AddOrUpdateTaint / RemoveTaint), and the
 *     patch body kcm sends (PatchNodeTaints: the whole list and the resourceVersion);
 *   - the Ready condition set to False on a pod (MarkPodsNotReady, UpdatePodCondition);
 *   - the beta OS/arch labels (reconcileNodeLabels).
 * Times are kube_time_t (ns since the epoch). Functions returning int give 0 / >0 or -errno
 * (-ENOMEM, -EINVAL for unreadable input).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "kube/model.h"

#define NLC_CONTROLLER      "node-lifecycle-controller"
#define NLC_NODE_QUEUE      "node_lifecycle_controller"
#define NLC_POD_QUEUE       "node_lifecycle_controller_pods"
#define NLC_EVENT_COMPONENT "node-controller" /* the recorder's source.component */

#define NLC_TAINT_UNREACHABLE        "node.kubernetes.io/unreachable"
#define NLC_TAINT_NOT_READY          "node.kubernetes.io/not-ready"
#define NLC_TAINT_UNSCHEDULABLE      "node.kubernetes.io/unschedulable"
#define NLC_LABEL_EXCLUDE_DISRUPTION "node.kubernetes.io/exclude-disruption"
#define NLC_LEASE_NAMESPACE          "kube-node-lease"

#define NLC_EVICTION_PERIOD_NS (100ll * 1000 * 1000) /* scheduler.NodeEvictionPeriod */
#define NLC_HEALTH_RETRY       5                     /* scheduler.NodeHealthUpdateRetry */
#define NLC_RETRY_SLEEP_NS     (20ll * 1000 * 1000)  /* retrySleepTime */
#define NLC_LISTER_RETRY_NS    (50ll * 1000 * 1000)  /* Try's "retry in 50 ms" */

/* a condition's status */
enum nlc_cond { NLC_ABSENT = 0, NLC_TRUE, NLC_FALSE, NLC_UNKNOWN, NLC_OTHER };
enum nlc_cond nlc_cond_parse(const char *s);

enum nlc_zone_state {
	NLC_ZONE_INITIAL = 0,
	NLC_ZONE_NORMAL,
	NLC_ZONE_FULL_DISRUPTION,
	NLC_ZONE_PARTIAL_DISRUPTION,
};
const char *nlc_zone_state_name(enum nlc_zone_state s);

/* ---- zones ----------------------------------------------------------------------------------- */
/* The zone key of a node from its metadata.labels object (may be NULL): "" without region and
 * zone labels, else region "::" zone (the beta failure-domain labels win over the topology
 * ones, as upstream; upstream separates with ":\0:", a C string cannot, and neither label value
 * may contain ':' so "::" is as unique). *ret is malloc'ed. */
int nlc_zone_key(const cJSON *labels, char **ret);

/* ComputeZoneState over the Ready statuses of a zone's nodes (NLC_ABSENT for a node whose Ready
 * condition is nil): Full when none is True (and there is one), Partial when more than 2 are
 * not True and their share is >= threshold (float32 arithmetic, as upstream), else Normal.
 * *ret_unhealthy = the number not True. */
enum nlc_zone_state nlc_compute_zone_state(const enum nlc_cond *ready, size_t n, float threshold,
                                           int *ret_unhealthy);

/* ReducedQPSFunc: the secondary rate when the zone has more nodes than the threshold, else 0 */
float nlc_reduced_qps(int nodes, int32_t large_cluster_threshold, float secondary_qps);

/* handleDisruption's decision. `in` are the zones this pass saw (zoneToNodeConditions: each
 * zone's nodes' Ready statuses), `zones` the controller's zones (zoneStates, in a fixed order;
 * has_state = in zoneStates). It updates `zones` (state, has_state) and says, per zone, whether
 * to SwapLimiter and to which rate, and per seen zone its new state and unhealthy count (the
 * gauges). The return says what else the caller does:
 *   NLC_DISRUPT_ENTER: every zone is fully disrupted now and was not: take the NoExecute taints
 *     off every node (markNodeAsReachable), every limiter at 0;
 *   NLC_DISRUPT_EXIT: some zone is not any more: reset every node's probe and transition times;
 *   NLC_DISRUPT_NONE / NLC_DISRUPT_ZONES: nothing more (ZONES: some zone changed state). */
struct nlc_zone_in {
	const char *key;
	const enum nlc_cond *ready;
	size_t n;
	/* out */
	enum nlc_zone_state state;
	int unhealthy;
};
struct nlc_zone_st {
	const char *key;
	bool has_state;
	enum nlc_zone_state state;
	/* out */
	bool swap; /* SwapLimiter(qps) */
	float qps;
	bool dropped;     /* left zoneStates (no node reported): gauges to 0 / 100 / 0 */
	bool initialized; /* "Setting initial state for unseen zone" */
};
struct nlc_disruption_params {
	float eviction_qps, secondary_qps, unhealthy_threshold;
	int32_t large_cluster_threshold;
};
enum nlc_disruption {
	NLC_DISRUPT_NONE = 0,
	NLC_DISRUPT_ENTER,
	NLC_DISRUPT_EXIT,
	NLC_DISRUPT_ZONES,
};
enum nlc_disruption nlc_handle_disruption(const struct nlc_disruption_params *p,
                                          struct nlc_zone_in *in, size_t n_in,
                                          struct nlc_zone_st *zones, size_t n_zones);

/* ---- the token bucket and the rate-limited timed queue -------------------------------------- */
/* flowcontrol's token bucket with burst 1 (golang.org/x/time/rate: starts full, refills qps
 * tokens a second up to the burst); qps <= 0 is the "never" limiter (rejects everything). */
struct nlc_bucket {
	float qps;
	double tokens;
	kube_time_t last;
};
void nlc_bucket_init(struct nlc_bucket *b, float qps, kube_time_t now);
bool nlc_bucket_try(struct nlc_bucket *b, kube_time_t now); /* TryAccept */

struct nlc_tv { /* scheduler.TimedValue */
	char *value;
	char *uid;
	kube_time_t added_at, process_at;
	uint64_t seq; /* insertion order among equal process_at */
};

/* A unique queue ordered by process_at (oldest insertion first among equal times), plus the
 * set of values added and not yet Removed: a value taken out by a successful Try stays in the
 * set, so it is not added again until Remove (upstream's RemoveFromQueue). No fixed limit. */
struct nlc_rlq {
	struct nlc_tv *q;
	size_t n, cap;
	char **set;
	size_t nset, setcap;
	uint64_t seq;
	struct nlc_bucket lim;
};
void nlc_rlq_init(struct nlc_rlq *q, float qps, kube_time_t now);
void nlc_rlq_free(struct nlc_rlq *q);
/* Add(value, uid): 1 added, 0 already in the set, -ENOMEM */
int nlc_rlq_add(struct nlc_rlq *q, const char *value, const char *uid, kube_time_t now);
/* Remove(value): true when it was in the set (it may be added again) */
bool nlc_rlq_remove(struct nlc_rlq *q, const char *value);
bool nlc_rlq_has(const struct nlc_rlq *q, const char *value); /* in the set */
/* Try: while the head is due and the limiter accepts, fn decides: true = done (out of the
 * queue, kept in the set), false = retry at now + *wait + 1 ns. */
typedef bool (*nlc_try_fn)(void *ud, const struct nlc_tv *tv, int64_t *ret_wait_ns);
void nlc_rlq_try(struct nlc_rlq *q, kube_time_t now, nlc_try_fn fn, void *ud);
/* SwapLimiter(qps): a new bucket when the rate differs; when the old one had no token left the
 * new one starts empty too. qps = INFINITY is an always-accepting limiter (the tests'). */
void nlc_rlq_swap_limiter(struct nlc_rlq *q, float qps, kube_time_t now);

/* ---- node health ----------------------------------------------------------------------------- */
/* nodeHealthData, reduced to what the decisions read: the probe and Ready-transition times, the
 * Ready condition of the status it last saw (its two times), and the last Lease's renewTime. */
struct nlc_health {
	bool present;
	kube_time_t probe, ready_transition;
	enum nlc_cond saved_ready; /* NLC_ABSENT: the saved status had no Ready condition */
	kube_time_t saved_hb, saved_tr;
	bool has_lease;          /* a Lease was saved */
	kube_time_t lease_renew; /* its spec.renewTime (0: nil) */
};

struct nlc_health_in {
	kube_time_t now;
	kube_time_t startup_grace, monitor_grace; /* ns */
	bool lease_found;
	kube_time_t lease_renew; /* 0: the Lease has no renewTime */
};

struct nlc_health_out {
	struct nlc_health health; /* to keep whether or not a status update is made / succeeds */
	struct nlc_health after_update; /* to keep instead once the status update succeeded */
	enum nlc_cond observed; /* observedReadyCondition.Status (a fake Unknown if absent) */
	enum nlc_cond current;  /* currentReadyCondition.Status after the decision (ABSENT: nil) */
	bool update_status;     /* PUT node (modified in place) to nodes/<name>/status */
	bool timed_out;         /* the heartbeat was older than the grace period */
};

/* tryUpdateNodeHealth on `node` (a Node's JSON, modified in place when it timed out): saved is
 * the previous health (present = false: none). Returns 0, -EINVAL (no metadata), -ENOMEM. */
int nlc_node_health(const struct nlc_health *saved, cJSON *node, const struct nlc_health_in *in,
                    struct nlc_health_out *out);

/* isNodeExcludedFromDisruptionChecks: the label node.kubernetes.io/exclude-disruption is set */
bool nlc_node_excluded(const cJSON *node);

/* The Ready condition's status of a node's JSON (NLC_ABSENT if none) */
enum nlc_cond nlc_node_ready(const cJSON *node);

/* ---- taints ---------------------------------------------------------------------------------- */
struct nlc_taint {
	const char *key;
	const char *effect;
};
/* Does the node's spec.taints hold a taint with this key and effect (MatchTaint)? */
bool nlc_taint_exists(const cJSON *node, const char *key, const char *effect);

/* doNoScheduleTaintingPass's diff: the NoSchedule taints the conditions and spec.unschedulable
 * call for, against the node's NoSchedule taints whose key is one of the condition taints or
 * unschedulable. Fills add[]/del[] (each up to NLC_MAX_NOSCHED entries: keys point into static
 * strings or the node) and returns 0. */
#define NLC_MAX_NOSCHED 16
int nlc_nosched_diff(const cJSON *node, struct nlc_taint *add, size_t *n_add, struct nlc_taint *del,
                     size_t *n_del);

/* AddOrUpdateTaint then RemoveTaint on a copy of the node's taints: taints to add get
 * timeAdded = now (SwapNodeControllerTaint). Returns 1 and *ret_patch, the strategic merge
 * patch kcm sends ({"metadata":{"resourceVersion":RV},"spec":{"taints":[...]}}, malloc'ed)
 * when the list changes, 0 when nothing changes, -ENOMEM / -EINVAL. */
int nlc_taints_patch(const cJSON *node, const struct nlc_taint *add, size_t n_add,
                     const struct nlc_taint *del, size_t n_del, kube_time_t now, char **ret_patch);

/* processTaintBaseEviction's decision on a Ready status (the caller passes the one after this
 * pass's change, currentReadyCondition, as v1.37's monitorNodeHealth does):
 *   NLC_TB_SWAP: the node holds the opposite NoExecute taint: add `add`, remove `del` now;
 *   NLC_TB_QUEUE: queue the node in its zone (markNodeForTainting); `requeue`: take it out of
 *     the queue's set first (it does not hold `add`, so a former pass's done entry must not
 *     keep it from being queued again);
 *   NLC_TB_REACHABLE: Ready: both NoExecute taints off, out of the queue (markNodeAsReachable);
 *   NLC_TB_NONE: another status. */
enum nlc_tb_action { NLC_TB_NONE = 0, NLC_TB_SWAP, NLC_TB_QUEUE, NLC_TB_REACHABLE };
struct nlc_tb_decision {
	enum nlc_tb_action action;
	struct nlc_taint add, del;
	bool requeue;
};
void nlc_taint_base_eviction(const cJSON *node, enum nlc_cond observed,
                             struct nlc_tb_decision *ret);

/* ---- pods ------------------------------------------------------------------------------------ */
/* MarkPodsNotReady for one pod's JSON: when its Ready condition exists and is not False, sets it
 * False with lastTransitionTime now (UpdatePodCondition) and returns 1; 0 otherwise. */
int nlc_pod_mark_not_ready(cJSON *pod, kube_time_t now);

/* ---- labels ---------------------------------------------------------------------------------- */
/* reconcileNodeLabels: the patch {"metadata":{"labels":{...}}} that sets the beta OS/arch labels
 * from the stable ones, or 0 and NULL when nothing is to change. */
int nlc_labels_patch(const cJSON *node, char **ret_patch);

/* ---- the health pass's workers --------------------------------------------------------------
 * monitorNodeHealth runs its per-node work NLC_UPDATE_WORKERS nodes at a time
 * (workqueue.ParallelizeUntil, nodeUpdateWorkerSize); what takes the time there is
 * MarkPodsNotReady, one pod status write after the other on each worker. kcmd's worker has one
 * thread and many requests in flight on its client: nlc_pool_run keeps up to `workers` nodes
 * active and sends one write of each active node together in a round (ops->send), so a node's
 * writes go out one after the other in its order, at most `workers` are in flight, and a node
 * that has none left makes room for the next node at once.
 *   start(ud, i): node i's work up to its writes (nodes are started in index order); > 0 when
 *     it has writes to make, else it is finished at once;
 *   next(ud, i, &w): its next write (true) or none left (false: it is finished);
 *   send(ud, nodes, writes, n): one round, n <= workers writes of n different nodes;
 *   finish(ud, i): called once per node, after its last write's round.
 * Returns 0 or -ENOMEM (before anything started). */
#define NLC_UPDATE_WORKERS 8
struct nlc_pool_ops {
	int (*start)(void *ud, size_t node);
	bool (*next)(void *ud, size_t node, size_t *ret_write);
	void (*send)(void *ud, const size_t *nodes, const size_t *writes, size_t n);
	void (*finish)(void *ud, size_t node);
};
int nlc_pool_run(size_t n_nodes, size_t workers, const struct nlc_pool_ops *ops, void *ud);
