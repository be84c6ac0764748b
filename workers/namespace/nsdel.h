/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/namespace/nsdel.h: the namespace-controller's deleter, its pure parts (no I/O):
 * discovery of the namespaced resources, the pods' grace estimate, the five NamespaceDeletion
 * conditions, the status and finalize bodies.
 *
 * Design note.
 *   Upstream (pkg/controller/namespace/namespace_controller.go and
 *   deletion/namespaced_resources_deleter.go, v1.37) syncs a namespace that has a
 *   deletionTimestamp: it reads it from the API, sets status.phase Terminating, discovers every
 *   namespaced resource that supports delete (ServerPreferredNamespacedResources: one version
 *   per group/resource, the group's preferred one winning), deletes the pods first (all of them
 *   gone before anything else is touched), then every other resource with one deletecollection
 *   (or a list and one delete per object where deletecollection is not served), each with
 *   propagationPolicy Background, lists what remains, records the five conditions, and when
 *   nothing remains removes the finalizer `kubernetes` through the finalize subresource. While
 *   pods are within their grace period it waits estimate/2+1 s; objects held by finalizers count
 *   15 s.
 *   plugin.c does the requests; this file holds the rules and the exact texts over plain values
 *   and cJSON objects so that they are tested without a cluster (tests/test-namespace.c, facts
 *   from upstream's namespaced_resources_deleter_test.go and status_condition_utils_test.go).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#define NS_CONTROLLER         "namespace-controller"
#define NS_QUEUE              "namespace"
#define NS_FINALIZER          "kubernetes"
#define NS_GRACE_US           5000000ull /* namespaceDeletionGracePeriod */
#define NS_FINALIZER_ESTIMATE 15         /* finalizerEstimateSeconds */
#define NS_DISCOVERY_FAILED_GV                                                                     \
	32 /* group-versions named in one condition (T: more are                                   \
	    * counted, not named) */

/* One namespaced resource to delete. */
struct ns_gvr {
	char *group, *version, *resource;
	bool deletecollection, list;
};

struct ns_discovery {
	struct ns_gvr *v;
	size_t n, cap;
	/* group-versions that could not be read: "gv: error", sorted when formatted */
	char **failed;
	size_t n_failed;
};
void ns_discovery_clear(struct ns_discovery *d);

/* Adds the namespaced, deletable resources of one aggregated discovery document
 * (apidiscovery.k8s.io/v2 APIGroupDiscoveryList, from /api or /apis) to d: per group and
 * resource the first version listed, replaced by the group's preferred (first) version; Stale
 * versions become failed group-versions ("stale GroupVersion discovery: g/v"). 0, -EBADMSG,
 * -ENOMEM. */
int ns_discovery_add_v2(struct ns_discovery *d, const char *json, size_t len);
/* A root that could not be read at all (/api or /apis): the whole discovery failed. */
int ns_discovery_fail(struct ns_discovery *d, const char *gv, const char *err);
/* The error message client-go gives ErrGroupDiscoveryFailed, malloc'd (NULL when nothing
 * failed, or -ENOMEM). */
int ns_discovery_error(const struct ns_discovery *d, char **ret);

/* The pods' estimate: the largest terminationGracePeriodSeconds of the pods (a PodList's JSON)
 * that are neither Succeeded nor Failed; 0 once deleted_at_s + estimate <= now_s. -EBADMSG. */
int ns_pods_estimate(const char *podlist, size_t len, int64_t deleted_at_s, int64_t now_s,
                     int64_t *ret);

/* What one resource left behind (from a PartialObjectMetadataList's JSON): the number of items
 * and, per finalizer, how many of them carry it (added into *fin). An empty list's `items` may be
 * null or absent. -EBADMSG (not a JSON object, items neither a list nor null), -ENOMEM. */
struct ns_count {
	char *name;
	int64_t n;
};
struct ns_counts {
	struct ns_count *v;
	size_t n, cap;
};
int ns_counts_add(struct ns_counts *c, const char *name, int64_t n);
void ns_counts_clear(struct ns_counts *c);
int ns_list_remaining(const char *list, size_t len, int64_t *ret_items, struct ns_counts *fin);

/* ---- conditions (status_condition_utils.go) ------------------------------------------------ */
enum ns_cond_type {
	NS_COND_DISCOVERY = 0, /* NamespaceDeletionDiscoveryFailure */
	NS_COND_GV_PARSING,    /* NamespaceDeletionGroupVersionParsingFailure */
	NS_COND_CONTENT,       /* NamespaceDeletionContentFailure */
	NS_COND_REMAINING,     /* NamespaceContentRemaining */
	NS_COND_FINALIZERS,    /* NamespaceFinalizersRemaining */
	NS_N_COND,
};
const char *ns_cond_type_name(enum ns_cond_type t);

struct ns_conditions {
	bool set[NS_N_COND]; /* a failure condition (True) of that type */
	char *reason[NS_N_COND], *message[NS_N_COND];
	char **content_errs; /* ProcessDeleteContentErr */
	size_t n_content_errs;
};
void ns_conditions_clear(struct ns_conditions *u);
/* ProcessDiscoverResourcesErr (groups_failed: the error is an ErrGroupDiscoveryFailed of n
 * groups, so the message is "Discovery failed for some groups, n failing: err") */
int ns_conditions_discovery(struct ns_conditions *u, const char *err, size_t groups_failed);
int ns_conditions_content_err(struct ns_conditions *u, const char *err);
/* ProcessContentTotals: gvr counts named "resource.group" */
int ns_conditions_totals(struct ns_conditions *u, const struct ns_counts *gvrs,
                         const struct ns_counts *finalizers);
/* Update: merges into ns (the Namespace's JSON object) status.conditions; now is RFC 3339.
 * Returns 1 when something changed, 0 when not, -ENOMEM. */
int ns_conditions_apply(struct ns_conditions *u, cJSON *ns, const char *now);

/* ---- the namespace ----------------------------------------------------------------------- */
/* Sets status.phase Terminating; 1 when it changed, 0 when it was already (or the namespace has
 * no deletionTimestamp), -ENOMEM. */
int ns_mark_terminating(cJSON *ns);
/* spec.finalizers without `kubernetes`, sorted and unique (finalizeNamespace). -ENOMEM. */
int ns_finalize(cJSON *ns);
/* spec.finalizers is empty (finalized). */
bool ns_finalized(const cJSON *ns);
/* metadata.deletionTimestamp in Unix seconds, or 0 when not set. */
int64_t ns_deletion_time(const cJSON *ns);
/* The requeue after a ResourcesRemainingError: estimate/2 + 1 seconds, in µs. */
uint64_t ns_requeue_us(int64_t estimate);
/* RFC 3339 of t (UTC, seconds). */
void ns_rfc3339(int64_t t, char *buf, size_t len);
