/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/endpointslice/reconcile.h: the endpointslice-controller's reconciler, pure (no I/O).
 *
 * Design note.
 *   Upstream's Reconciler (staging k8s.io/endpointslice, v1.37) turns a Service, the pods its
 *   selector matches and the EndpointSlices it already has into creates, updates and deletes:
 *   per address type of the Service (spec.ipFamilies, else the family of the clusterIP, else
 *   both), endpoints are grouped by their resolved port list (named target ports resolved
 *   against each pod's container ports), each group is reconciled against the slices with the
 *   same ports (endpoints kept in place and updated when a field beyond their identity changed,
 *   emptied slices deleted, changed slices filled first, fullest first, then the unchanged slice
 *   closest to full, then new slices of at most max_per_slice), a placeholder slice with no
 *   ports and no endpoints stands in when nothing else would exist, and creates are turned into
 *   updates of slices that would otherwise be deleted. Endpoint identity is upstream's hash
 *   input: sorted addresses, hostname, the target pod's namespace and name.
 *   Here over cJSON objects as the apiserver serves them (the Service and slices from the
 *   cache, the pods from a LIST), tested without a cluster (tests/test-reconcile.c, the cases
 *   of upstream's reconciler_test.go).
 *   Hints, per address type, after packing and before creates become updates (upstream's
 *   trafficdist package and RemoveHintsFromSlices): a Service whose spec.trafficDistribution
 *   is PreferClose, PreferSameZone or PreferSameNode (the PreferSameTrafficDistribution gate
 *   is GA and locked on at 1.37) and whose topology annotation does not ask for Auto gets, on
 *   every ready endpoint of the slices it writes, hints.forZones = [its zone] (and, for
 *   PreferSameNode, hints.forNodes = [its node]); any other Service gets its hints removed.
 *   A slice that would stay unchanged but whose hints are missing, wrong or stale is updated.
 *   Not done: topology-aware routing (the topology-mode / topology-aware-hints annotation's
 *   allocation by zone); such a Service is treated as upstream treats it without a topology
 *   cache (hints removed; docs/endpointslice.md).
 */
#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#define EPS_CONTROLLER  "endpointslice-controller"
#define EPS_MANAGED_BY  "endpointslice-controller.k8s.io"
#define EPS_QUEUE       "endpoint_slice" /* upstream's workqueue name */
#define EPS_LABEL_SVC   "kubernetes.io/service-name"
#define EPS_LABEL_MGD   "endpointslice.kubernetes.io/managed-by"
#define EPS_LABEL_HL    "service.kubernetes.io/headless"
#define EPS_ANN_TRIGGER "endpoints.kubernetes.io/last-change-trigger-time"

enum eps_op { EPS_CREATE = 1, EPS_UPDATE, EPS_DELETE };

struct eps_action {
	enum eps_op op;
	/* CREATE: the body (generateName); UPDATE: the whole slice to PUT; DELETE: a copy of the
	 * slice to delete (its name, uid and generation are read) */
	cJSON *obj;
};

struct eps_plan {
	struct eps_action *v; /* in upstream's order: per address type creates, updates, deletes;
	                       * then slices of address types the Service no longer has */
	size_t n, cap;
	int skipped_pods; /* pods left out because their node is not in the cache */
	char err[256];    /* the first such pod's message (upstream's error text) */
};

/* The zone label of node `name`: 0 with *ret_zone (NULL when unlabelled), or -ENOENT when the
 * node is not in the cache. */
typedef int (*eps_node_fn)(void *ud, const char *name, const char **ret_zone);

/* svc: the Service; pods[0..n_pods): the pods its selector matches (any order); slices: the
 * slices labelled with its name and managed by this controller, not being deleted; trigger:
 * the last-change-trigger-time annotation value, or NULL to remove it; max_per_slice >= 1.
 * Returns 0 with *ret filled (free with eps_plan_free; also on failure), -ENOMEM. */
int eps_reconcile(const cJSON *svc, const cJSON *const *pods, size_t n_pods,
                  const cJSON *const *slices, size_t n_slices, const char *trigger,
                  int max_per_slice, eps_node_fn node, void *node_ud, struct eps_plan *ret);
void eps_plan_free(struct eps_plan *p);

/* How a Service's hints are reconciled (upstream's canUseTrafficDistribution and heuristics). */
enum eps_hints {
	EPS_HINTS_REMOVE = 0, /* no hints at all (defaultHeuristic / RemoveHintsFromSlices) */
	EPS_HINTS_ZONE,       /* PreferClose, PreferSameZone: forZones on ready endpoints */
	EPS_HINTS_ZONE_NODE,  /* PreferSameNode: forZones and forNodes on ready endpoints */
};
enum eps_hints eps_hints_mode(const cJSON *svc);
/* The slice's hints differ from what mode wants (upstream's needsUpdate): an unchanged slice
 * for which this is true is updated. */
bool eps_hints_stale(const cJSON *slice, enum eps_hints mode);
/* Sets the hints mode wants on slice, in place (upstream's update). -ENOMEM or 0. */
int eps_hints_apply(cJSON *slice, enum eps_hints mode);

/* Upstream's helpers, exposed for the handlers and tests. */
bool eps_pod_ready(const cJSON *pod);
/* The Service's spec.selector matches labels (get(ud, key) gives a label's value or NULL);
 * a Service without a selector matches nothing. */
bool eps_selector_matches(const cJSON *svc, const char *(*get)(const void *ud, const char *key),
                          const void *ud);
/* FindPort: the container port the Service port sp targets on pod: 0 with *ret, or -ENOENT
 * (a named target port no container port of that name and protocol has). */
int eps_find_port(const cJSON *pod, const cJSON *sp, int *ret);
/* The pod's trigger time (Ready condition's lastTransitionTime), seconds since the epoch, or
 * 0; the Service's creationTimestamp likewise. */
long long eps_pod_trigger_time(const cJSON *pod);
long long eps_service_trigger_time(const cJSON *svc);
/* RFC 3339 (UTC, second precision as the apiserver writes it) of t into buf. */
void eps_format_time(long long t, char *buf, size_t len);
