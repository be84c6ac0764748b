/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/podgc/gc.h: the pod garbage collector's decisions, pure (no I/O): which pods each pass
 * force-deletes and in what order, the orphan quarantine, and the bodies it sends.
 *
 * Design note.
 *   Upstream's PodGCController (pkg/controller/podgc, v1.37) runs one pass every 20 s over its
 *   pod and node listers: terminated pods over --terminated-pod-gc-threshold (evicted first, then
 *   oldest, then by name), terminating pods on not-ready nodes with the out-of-service taint,
 *   pods on nodes that stayed missing through a 40 s quarantine and a live GET, and terminating
 *   pods never scheduled. Each chosen pod is marked Failed (when not Succeeded/Failed) with a
 *   strategic-merge status patch, then deleted with a grace period of 0.
 *   This file holds those rules over plain structs so that they are tested without a cluster
 *   (tests/test-podgc.c, cases from upstream's gc_controller_test.go); run.c feeds them from the
 *   arena and the API client.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kcmd/controller.h"
#include "kube/model.h"

#define PGC_CONTROLLER      "pod-garbage-collector-controller"
#define PGC_PERIOD_US       20000000ull /* upstream gcCheckPeriod */
#define PGC_QUARANTINE_US   40000000ull /* upstream quarantineTime */
#define PGC_DEFAULT_THRESH  12500       /* --terminated-pod-gc-threshold */
#define PGC_OUT_OF_SERVICE  "node.kubernetes.io/out-of-service"
#define PGC_ORPHAN_REASON   "DeletionByPodGC"
#define PGC_ORPHAN_MESSAGE  "PodGC: node no longer exists"
#define PGC_COND_DISRUPTION "DisruptionTarget"

/* The metric label `reason` (upstream metrics.PodGCReason*). */
enum pgc_reason {
	PGC_REASON_TERMINATED = 0,
	PGC_REASON_OUT_OF_SERVICE,
	PGC_REASON_ORPHANED,
	PGC_REASON_UNSCHEDULED,
	PGC_N_REASONS,
};
const char *pgc_reason_label(enum pgc_reason r);

/* The controller's metrics (kcmd/controller.h `metrics`, updated with kcmd/metrics.h): upstream's
 * pod_gc_collector_force_delete_pods_total and _pod_errors_total {namespace, reason}. A namespace
 * is not a fixed set: PGC_METRIC_SERIES (namespace, reason) series per family, the rest counted
 * in kcmd_metric_series_dropped_total (the force deletion itself goes on). */
enum {
	PGC_M_FORCE_DELETE = 0,
	PGC_M_FORCE_DELETE_ERRORS,
	PGC_M_N,
};
#define PGC_METRIC_SERIES 4096u
extern const struct kcmd_metric pgc_metric_decl[PGC_M_N];

/* What a pass knows of one pod (from the arena). Strings are owned by the caller. */
struct pgc_pod {
	const char *ns, *name, *uid;
	const char *node_name; /* "" when unscheduled */
	enum kube_pod_phase phase;
	bool evicted; /* status.phase Failed and status.reason "Evicted" (eviction.PodIsEvicted) */
	kube_time_t creation_ts;
	kube_time_t deletion_ts; /* 0: not terminating */
	int64_t generation;
};

/* isPodTerminated: any phase but Pending, Running and Unknown (also an empty or unknown one). */
bool pgc_pod_terminated(const struct pgc_pod *p);
/* markFailedAndDeletePod patches the status first unless the pod is Succeeded or Failed. */
bool pgc_needs_failed_patch(const struct pgc_pod *p);
/* byEvictionAndCreationTimestamp: evicted first, then older creationTimestamp, then name. */
int pgc_pod_cmp(const struct pgc_pod *a, const struct pgc_pod *b);

/* gcTerminated: the pods to delete, in order: the first (terminated - threshold) of the terminated
 * pods sorted by pgc_pod_cmp. threshold <= 0 disables it. Writes indexes into pods[] to *ret
 * (malloc'd, may be NULL when *ret_n is 0). Returns 0 or -ENOMEM. */
int pgc_select_terminated(const struct pgc_pod *pods, size_t n, int64_t threshold, size_t **ret,
                          size_t *ret_n);
/* Sorts idx[] (indexes into pods[]) by pgc_pod_cmp. */
void pgc_sort(const struct pgc_pod *pods, size_t *idx, size_t n);

/* What gcTerminating needs of a node: IsNodeReady and the out-of-service taint. */
struct pgc_node_facts {
	bool ready;          /* condition Ready with status "True" */
	bool out_of_service; /* a taint with key node.kubernetes.io/out-of-service (any effect) */
};
/* From a Node's JSON. Returns 0, -EBADMSG (not a JSON object), -ENOMEM. */
int pgc_node_facts_from_json(const char *json, size_t len, struct pgc_node_facts *ret);
static inline bool pgc_node_out_of_service(const struct pgc_node_facts *f)
{
	return !f->ready && f->out_of_service;
}

/* The DisruptionTarget condition the pod has now (from a GET), for UpdatePodCondition. */
struct pgc_cond_state {
	bool present;
	char status[16];
	kube_time_t last_transition_time;
};
/* From a Pod's JSON, or from a PodList's item whose metadata.uid is uid (the pod GC's role may
 * list pods, not get them). Returns 0, -ENOENT (no such item), -EBADMSG. */
int pgc_cond_state_from_json(const char *json, size_t len, const char *uid,
                             struct pgc_cond_state *ret);

/* The strategic-merge patch of pods/<name>/status upstream's PatchPodStatus sends: the uid as a
 * precondition, phase Failed, status.observedGeneration = generation (PodObservedGenerationTracking
 * is GA and locked on in v1.37), and with_condition: DisruptionTarget=True, reason DeletionByPodGC,
 * message "PodGC: node no longer exists", observedGeneration = generation, lastTransitionTime now
 * unless cur has the condition with status True already (its time is kept). *ret is malloc'd.
 * Returns 0 or -ENOMEM. */
int pgc_failed_patch_body(const char *uid, int64_t generation, bool with_condition,
                          const struct pgc_cond_state *cur, kube_time_t now, char **ret);

/* ---- the orphan quarantine (upstream's nodeQueue, a delaying queue of node names) -------------
 * A name added waits PGC_QUARANTINE_US; adding a name already waiting keeps the earlier time (the
 * delaying queue's rule). pgc_quarantine_take_ready hands out every name whose time has come and
 * forgets it (Get + Done). Grows without bound but by the number of distinct missing node names
 * pods refer to; each is dropped once checked. */
struct pgc_quarantine;
int pgc_quarantine_new(struct pgc_quarantine **ret);
void pgc_quarantine_free(struct pgc_quarantine *q);
int pgc_quarantine_add(struct pgc_quarantine *q, const char *node, uint64_t now_us);
size_t pgc_quarantine_len(const struct pgc_quarantine *q);
/* Calls fn for each ready name (oldest first) after removing it. Returns the count. */
size_t pgc_quarantine_take_ready(struct pgc_quarantine *q, uint64_t now_us,
                                 void (*fn)(const char *node, void *ud), void *ud);

/* ---- the collectors' selections (run.c does the writes) -------------------------------------- */

/* Live reads of nodes, upstream's kubeClient.CoreV1().Nodes().Get (run.c: the API client). */
struct pgc_nodes_api {
	/* GET the node: 0 and *ret, -ENOENT (not found), other -errno (error) */
	int (*get)(void *ud, const char *node, struct pgc_node_facts *ret);
	void *ud;
};
struct pgc_set;

/* gcTerminating: terminating pods whose node is in the cache (cached: node names of the node
 * informer) and, read with api (once per distinct node), not ready with the out-of-service
 * taint; sorted by pgc_pod_cmp. *ret malloc'd. Returns 0 or -ENOMEM. */
int pgc_select_terminating(const struct pgc_pod *pods, size_t n, const struct pgc_set *cached,
                           const struct pgc_nodes_api *api, size_t **ret, size_t *ret_n);
/* gcOrphaned: quarantines every node name a pod refers to that the cache lacks, then checks each
 * name whose quarantine ended (dropped from q) with api unless it is cached now; the pods on the
 * names found gone (-ENOENT), in pods[] order. A failed GET forgets the name (a later pass adds
 * it again). *ret malloc'd. Returns 0 or -ENOMEM. */
int pgc_select_orphaned(struct pgc_quarantine *q, const struct pgc_pod *pods, size_t n,
                        const struct pgc_set *cached, uint64_t now_us,
                        const struct pgc_nodes_api *api, size_t **ret, size_t *ret_n);
/* gcUnscheduledTerminating: terminating pods with no node name, in pods[] order. */
int pgc_select_unscheduled(const struct pgc_pod *pods, size_t n, size_t **ret, size_t *ret_n);

/* A set of strings (node names present in the cache; nodes found deleted). */
struct pgc_set;
int pgc_set_new(struct pgc_set **ret);
void pgc_set_free(struct pgc_set *s);
int pgc_set_add(struct pgc_set *s, const char *name); /* 0 added, 1 present, -ENOMEM */
bool pgc_set_has(const struct pgc_set *s, const char *name);
