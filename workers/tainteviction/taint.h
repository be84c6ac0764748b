/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/tainteviction/taint.h: the taint eviction controller's pure decisions (kcm v1.37's
 * pkg/controller/tainteviction), without I/O, so the unit tests drive them directly.
 *
 * - a Node's NoExecute taints and a Pod's tolerations, read from their JSON;
 * - ToleratesTaint / GetMatchingTolerations / getMinTolerationTime;
 * - processPodOnNode: given the pod's pending eviction (upstream's TimedWorker, here a
 *   te_sched), the time now, the node's NoExecute taints and the pod's tolerations, what to
 *   do: nothing, cancel the pending eviction (with the "Cancelling deletion" Event when one was
 *   pending), evict now, or wait until a time;
 * - the schedule: the pending evictions by pod key (a hash table, grows, no fixed limit);
 * - the DisruptionTarget condition patch (UpdatePodCondition + PatchPodStatus).
 *
 * Times are microseconds on the worker's realtime clock.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/model.h"

#define TE_CONTROLLER "taint-eviction-controller"
#define TE_NODE_QUEUE "noexec_taint_node" /* upstream's workqueue names */
#define TE_POD_QUEUE  "noexec_taint_pod"

#define TE_EVENT_REASON   "TaintManagerEviction"
#define TE_COND_TYPE      "DisruptionTarget"
#define TE_COND_REASON    "DeletionByTaintManager"
#define TE_COND_MESSAGE   "Taint manager: deleting due to NoExecute taint"
#define TE_DELETE_RETRIES 5 /* upstream's `retries`, 10 ms apart */

struct te_taint {
	char *key, *value, *effect;
	char *time_added; /* as written, NULL when absent (compared, never used for timing) */
};

struct te_toleration {
	char *key, *op, *value, *effect;
	bool has_seconds;
	int64_t seconds;
};

struct te_taints {
	struct te_taint *v;
	size_t n;
};

struct te_tolerations {
	struct te_toleration *v;
	size_t n;
};

/* The NoExecute taints of a Node given as JSON (spec.taints, document order). 0, -EBADMSG
 * (not JSON), -EPROTO (not a Node object), -ENOMEM. Free with te_taints_free (also on
 * failure). */
int te_node_noexec_taints(const char *json, size_t len, struct te_taints *ret);
/* The same from a parsed object (cJSON *), for a pod LIST's items. */
int te_node_noexec_taints_cjson(const void *node, struct te_taints *ret);
void te_taints_free(struct te_taints *t);
/* The two lists are equal element by element (upstream's Semantic.DeepEqual). */
bool te_taints_equal(const struct te_taints *a, const struct te_taints *b);

/* A Pod's spec.tolerations from its JSON / a parsed pod (cJSON *). 0, -EBADMSG, -EPROTO,
 * -ENOMEM; free with te_tolerations_free. */
int te_pod_tolerations(const char *json, size_t len, struct te_tolerations *ret);
int te_pod_tolerations_cjson(const void *pod, struct te_tolerations *ret);
void te_tolerations_free(struct te_tolerations *t);

/* v1.Toleration.ToleratesTaint with the TaintTolerationComparisonOperators gate off (its
 * default; kcmd does not model the gate): operators Lt and Gt match nothing. */
bool te_tolerates(const struct te_toleration *tol, const struct te_taint *taint);
/* GetMatchingTolerations: true when every taint is tolerated; used[i] (n_taints entries, may
 * be NULL when n_taints is 0) gets the first toleration matching taint i. */
bool te_matching_tolerations(const struct te_taints *taints, const struct te_tolerations *tols,
                             const struct te_toleration **used);
/* getMinTolerationTime over the used tolerations: -1 forever (none has tolerationSeconds), 0
 * (no toleration at all, or one with tolerationSeconds <= 0), else the least seconds. */
int64_t te_min_toleration_seconds(const struct te_toleration *const *used, size_t n);

/* A pending eviction (upstream's TimedWorker with a timer). */
struct te_sched {
	int64_t created_at, fire_at; /* usec */
	uint32_t slot;               /* its slot in the store (store.h) + 1; 0: none */
};

enum te_action {
	TE_NOTHING,   /* leave the schedule as it is */
	TE_CANCEL,    /* drop the pending eviction (if any) */
	TE_EVICT_NOW, /* drop it and evict now */
	TE_WAIT,      /* pending eviction `sched`; evict at sched.fire_at */
};

struct te_decision {
	enum te_action action;
	bool cancel_event; /* post "Cancelling deletion of Pod" (a pending eviction was dropped) */
	struct te_sched sched;
};

/* processPodOnNode. cur: the pod's pending eviction, or NULL. taints: the node's NoExecute
 * taints (none: cancel). A kept eviction whose time has come is TE_EVICT_NOW. */
void te_process_pod(const struct te_sched *cur, int64_t now, const struct te_taints *taints,
                    const struct te_tolerations *tols, struct te_decision *ret);

/* ---- the schedule: pending evictions by pod key ("ns/name"), with the pod's node ----------- */
struct te_schedule;
int te_schedule_new(struct te_schedule **ret);
void te_schedule_free(struct te_schedule *s);
/* The entry of key, or NULL. */
const struct te_sched *te_schedule_get(const struct te_schedule *s, const char *key);
/* Adds or replaces. 0, -ENOMEM. */
int te_schedule_put(struct te_schedule *s, const char *key, const char *node,
                    const struct te_sched *v);
/* Removes; true when an entry was there. */
bool te_schedule_del(struct te_schedule *s, const char *key);
size_t te_schedule_len(const struct te_schedule *s);
/* The keys of the entries on node, copied into *ret_keys (NULL-terminated, free with
 * te_keys_free) so the caller may then change the schedule. Returns how many, or -ENOMEM. */
int te_schedule_keys_on_node(const struct te_schedule *s, const char *node, char ***ret_keys);
void te_keys_free(char **keys);
/* The earliest fire_at among the entries on node, or 0 when none. */
int64_t te_schedule_next_on_node(const struct te_schedule *s, const char *node);

/* ---- the condition ---------------------------------------------------------------------------
 * UpdatePodCondition(DisruptionTarget, True, DeletionByTaintManager, the message) on the pod
 * given as JSON, then PatchPodStatus's body (metadata.uid precondition; the conditions merged
 * by type, an existing DisruptionTarget with status True keeps its lastTransitionTime;
 * observedGeneration = metadata.generation as PodObservedGenerationTracking (GA) does).
 * Returns 1 with *ret_body (free()) when the status changes, 0 when it is already so (no
 * patch), -EBADMSG/-EPROTO (not a pod), -ENOMEM. */
int te_condition_patch(const char *pod_json, size_t len, kube_time_t now, char **ret_body);

/* ---- many evictions at once -------------------------------------------------------------------
 * Upstream runs each due eviction in a goroutine of its own (deletePodHandler: up to
 * TE_DELETE_RETRIES attempts of addConditionAndDeletePod, 10 ms apart). The worker keeps many
 * in flight on its client instead: each eviction is this little machine, and the worker sends
 * the requests of every eviction at the same step together (at most TE_EVICT_INFLIGHT at a time),
 * GET, then PATCH, then DELETE, so each pod's own requests stay in that order and a pod is on
 * one step only: it cannot be sent twice in a round. */
#define TE_EVICT_INFLIGHT 128
enum te_ev_step {
	TE_EV_GET = 0, /* GET the pod (also the first step of a retry) */
	TE_EV_PATCH,   /* the DisruptionTarget condition (only when the GET said it changes) */
	TE_EV_DELETE,
	TE_EV_DONE,   /* deleted */
	TE_EV_FAILED, /* the last attempt failed, or -ENOLCK */
};
struct te_ev {
	enum te_ev_step step;
	int attempts; /* failed attempts so far */
	int err;      /* the last failure */
	bool retry;   /* back at TE_EV_GET after a failure: waits the 10 ms before its next round */
};
/* The step's request finished with r: for TE_EV_GET r > 0 when the status is to be patched, 0
 * when not (te_condition_patch's result), < 0 a failure; for the others 0 or < 0. A failure
 * ends the attempt: back to TE_EV_GET with retry set, or TE_EV_FAILED after TE_DELETE_RETRIES
 * attempts or at once for -ENOLCK (no longer the leader). */
void te_ev_advance(struct te_ev *e, int r);
/* Up to max indices of evictions at `step` (and not waiting for a retry), in index order. */
size_t te_ev_pick(const struct te_ev *e, size_t n, enum te_ev_step step, size_t max, size_t *ret);
/* Clears every retry flag (the 10 ms have passed); returns how many were set. */
size_t te_ev_retry_due(struct te_ev *e, size_t n);

/* Runs n evictions (ev zeroed: each at TE_EV_GET) to their end: rounds of every eviction at
 * GET, then at PATCH, then at DELETE, each step's requests handed to send in groups of at most
 * TE_EVICT_INFLIGHT (send fills results[j] for idx[j] as te_ev_advance wants it; a negative
 * return stops everything with that error), done(ud, i) once an eviction is TE_EV_DONE or
 * TE_EV_FAILED, then pause(ud) (10 ms) before the failed attempts' next round. Returns 0,
 * -ENOLCK (an eviction ended so: the rest are left as they are) or send's error. */
struct te_ev_ops {
	int (*send)(void *ud, enum te_ev_step step, const size_t *idx, size_t k, int *results);
	void (*done)(void *ud, size_t i);
	void (*pause)(void *ud);
};
int te_ev_run(struct te_ev *ev, size_t n, const struct te_ev_ops *ops, void *ud);

/* upstream's observed latency value: float64(time.Since(fireAt) * time.Second), a Duration in
 * nanoseconds multiplied by 1e9 in int64 arithmetic (it wraps), as the histogram sees it */
double te_latency_observed(int64_t since_fire_usec);
