/* SPDX-License-Identifier: Apache-2.0 */
/* workers/daemonset/ds.h - the DaemonSet controller's pure decisions (docs/daemonset.md):
 * which nodes should run a DaemonSet's pod (upstream NodeShouldRunDaemonPod: the template's
 * nodeName, nodeSelector and required node affinity, taints the pod does not tolerate once the
 * daemon tolerations are added), what to create and delete on one node (podsShouldBeOnNode),
 * the status counts (updateDaemonSetStatus) and the pod body (CreatePodTemplate +
 * ReplaceDaemonSetPodNodeNameNodeAffinity + GetPodFromTemplate). No I/O, no allocation beyond
 * what a function documents. */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/model.h"

#define DS_HASH_LABEL "controller-revision-hash"
#define DS_GEN_LABEL  "pod-template-generation"
#define DS_GEN_ANNOT  "deprecated.daemonset.template.generation"

/* One pod of the DaemonSet as the decisions see it. */
struct ds_pod {
	const char *name;
	const char *node; /* the target node (GetTargetNodeName); NULL: unknown */
	bool scheduled;   /* spec.nodeName set */
	enum kube_pod_phase phase;
	bool ready;
	kube_time_t ready_since; /* the Ready condition's lastTransitionTime */
	kube_time_t created;
	bool deleting;    /* deletionTimestamp set */
	const char *hash; /* controller-revision-hash label, NULL if none */
	const char *gen;  /* pod-template-generation label, NULL if none */
};

/* upstream NodeShouldRunDaemonPod(node, ds) over ds.spec.template.spec (tspec) and a Node's
 * JSON: *run (a pod should be started there), *cont (a pod already there may stay). */
void ds_node_should_run(const cJSON *tspec, const cJSON *node, bool *run, bool *cont);

/* A Node update's old and new JSON have byte-identical spec and metadata.labels (both absent
 * counts as equal): NodeShouldRunDaemonPod cannot answer differently, and the handler skips the
 * update without parsing either (the apiserver encodes equal content alike; unequal bytes, or
 * JSON that does not scan, answer false and the caller compares parsed trees). */
bool ds_node_update_same(const char *a, size_t a_len, const char *b, size_t b_len);

/* Whether the pod spec's tolerations, with the daemon tolerations added, tolerate taint
 * (v1 Toleration.ToleratesTaint over each). */
bool ds_tolerates(const cJSON *tspec, const cJSON *taint);

/* nodeaffinity.GetRequiredNodeAffinity(pod).Match(node): spec.nodeSelector and
 * spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution (terms that fail
 * to parse are dropped, as upstream ignores the parse error). */
bool ds_node_affinity_matches(const cJSON *spec, const cJSON *node);

/* util.AddOrUpdateDaemonPodTolerations on a pod spec (cJSON, modified in place). 0 / -ENOMEM. */
int ds_add_daemon_tolerations(cJSON *spec);

/* util.ReplaceDaemonSetPodNodeNameNodeAffinity on a pod spec. 0 / -ENOMEM. */
int ds_replace_node_affinity(cJSON *spec, const char *node);

/* util.GetTargetNodeName over a pod's JSON spec: spec.nodeName, else the single value of the
 * first matchFields metadata.name In requirement. NULL when none (upstream's error). Points
 * into spec. */
const char *ds_target_node(const cJSON *spec);

/* The pod body the controller POSTs for node: the template (tmpl: ds.spec.template) with the
 * daemon tolerations, the pod-template-generation label (gen != NULL) and the hash label
 * (hash non-empty), the node affinity, generateName "<ds>-", the controller reference.
 * malloc'd JSON in *ret. 0, -EINVAL (no labels: upstream refuses a pod without labels),
 * -ENOMEM. */
int ds_pod_body(const cJSON *tmpl, const char *ds_name, const char *ds_uid, const char *gen,
                const char *hash, const char *node, char **ret);

/* ds_pod_body for many nodes of one sync: the body printed once around a marker in place of the
 * node's name, then spliced per node (the template's tree was duplicated and printed per pod).
 * ds_pod_body_split: 0, -EINVAL / -ENOMEM as ds_pod_body, -EEXIST when the template itself
 * holds the marker (the caller then builds each body with ds_pod_body). ds_pod_body_splice:
 * the body for node, byte for byte ds_pod_body's; 0, -EINVAL (a name JSON would escape: use
 * ds_pod_body), -ENOMEM. Free with ds_pod_body_split_free. */
struct ds_pod_body_split {
	char *head, *tail;
	size_t head_len, tail_len;
};
int ds_pod_body_split(const cJSON *tmpl, const char *ds_name, const char *ds_uid, const char *gen,
                      const char *hash, struct ds_pod_body_split *ret);
int ds_pod_body_splice(const struct ds_pod_body_split *b, const char *node, char **ret);
void ds_pod_body_split_free(struct ds_pod_body_split *b);

/* podByCreationTimestampAndPhase: scheduled first, then older, then by name. */
int ds_pod_cmp(const struct ds_pod *a, const struct ds_pod *b);

/* podutil.IsPodAvailable. */
bool ds_pod_available(const struct ds_pod *p, int32_t min_ready, kube_time_t now);

/* util.IsPodUpdated: the hash label equals hash (non-empty), or the generation label equals
 * gen (non-NULL). */
bool ds_pod_updated(const struct ds_pod *p, const char *hash, const char *gen);

/* podsShouldBeOnNode for one node: pods[0..n) are the node's pods (any order; this sorts
 * them). Writes *create (the node needs a pod); in del[] the indexes (into the sorted pods) of
 * pods to delete; in failed[] the failed pods (the caller applies the failed-pods backoff and
 * deletes those not in backoff, with a FailedDaemonPod Event); in succeeded[] the succeeded
 * pods (deleted, SucceededDaemonPod Event; they are also in del[]). surge: util.AllowsSurge.
 * del, failed and succeeded hold n entries each. */
struct ds_node_plan {
	bool create;
	size_t n_del, n_failed, n_succeeded;
};
void ds_pods_on_node(bool run, bool cont, struct ds_pod **pods, size_t n, bool surge,
                     const char *hash, int32_t min_ready, kube_time_t now, size_t *del,
                     size_t *failed, size_t *succeeded, struct ds_node_plan *ret);

struct ds_status {
	int32_t desired, current, misscheduled, ready, updated, available, unavailable;
};
/* One node's share of updateDaemonSetStatus: pods sorted with ds_pod_cmp (and already
 * without the deleted terminal ones). */
void ds_status_add(struct ds_status *st, bool run, struct ds_pod *const *pods, size_t n,
                   const char *hash, const char *gen, int32_t min_ready, kube_time_t now);

/* intstr.GetScaledValueFromIntOrPercent(v, total, round up); v NULL: 0. -EINVAL: a string that
 * is not a percentage. */
int ds_scaled(const cJSON *v, int total, int *ret);

/* One node as the rolling update sees it (nodeToDaemonPods after updatedDesiredNodeCounts):
 * its pods (without the deleted terminal ones) and whether the DaemonSet should run there. */
struct ds_ru_node {
	const char *name;
	struct ds_pod *const *pods;
	size_t n;
	bool run;
};

/* upstream rollingUpdate's decision (update.go): with max_surge == 0, the old pods to delete
 * (the unavailable ones, then available ones while fewer than max_unavailable pods are
 * unavailable); with surge, the old pods to delete and the nodes to create a new pod on.
 * del holds one entry per pod, create one per node (borrowed names). desired: the nodes that
 * should run a pod. */
void ds_rolling_update(const struct ds_ru_node *nodes, size_t n_nodes, int max_surge,
                       int max_unavailable, int desired, const char *hash, const char *gen,
                       int32_t min_ready, kube_time_t now, const char **del, size_t *n_del,
                       const char **create, size_t *n_create);
