/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/resourcequota/usage.h: the resource quota controller's pure decisions: resource lists
 * (apiserver/pkg/quota/v1/resources.go), the evaluators (pods, services, persistentvolumeclaims,
 * object counts: pkg/quota/v1/evaluator/core and apiserver's quota/v1/generic), scopes, and the
 * sync's new status (syncResourceQuota). No I/O: objects come from a struct rq_source.
 */
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "kube/model.h"
#include "workers/resourcequota/quantity.h"

/* ---- resource lists (corev1.ResourceList) ---------------------------------------------------- */
struct rq_item {
	char *name;
	struct rq_qty q;
	char *text; /* the value's text as read (kept verbatim, as Go keeps a parsed string), or
	               NULL */
};

struct rq_list {
	struct rq_item *v;
	size_t n, cap;
};

void rq_list_free(struct rq_list *l);
const struct rq_item *rq_list_get(const struct rq_list *l, const char *name);
/* list[name] = q (replaces; drops any kept text). 0 or -ENOMEM. */
int rq_list_set(struct rq_list *l, const char *name, const struct rq_qty *q);
/* quota.Add into a: a[k] += b[k] for shared keys, b's other keys copied. 0, -ENOMEM, -ERANGE. */
int rq_list_add(struct rq_list *a, const struct rq_list *b);
/* A ResourceList from a JSON object (NULL or JSON null: empty). 0, -EINVAL (not an object or a
 * value that is not a quantity), -ERANGE, -ENOMEM. */
int rq_list_from_json(const cJSON *obj, struct rq_list *ret);
/* quota.Equals: same keys, equal values. */
bool rq_list_equal(const struct rq_list *a, const struct rq_list *b);
/* The list as a JSON object, keys sorted (Go's map order), values as kept text or String(). */
cJSON *rq_list_to_json(const struct rq_list *l);

/* ---- evaluators --------------------------------------------------------------------------------
 */
enum rq_eval_kind {
	RQ_EVAL_PODS,
	RQ_EVAL_SERVICES,
	RQ_EVAL_PVCS,
	RQ_EVAL_COUNT, /* generic object count, with an optional legacy alias */
};

struct rq_evaluator {
	enum rq_eval_kind kind;
	const char *group, *version, *resource;
	const char *alias;      /* legacy name of the count ("configmaps"), or NULL */
	const char *count_name; /* "count/<resource>[.<group>]" */
};

/* The registry (NewEvaluators + the generic counts kcmd's cache watches), in a fixed order. */
extern const struct rq_evaluator rq_evaluators[];
extern const size_t rq_n_evaluators;

/* The count evaluator for "count/<resource>[.<group>]" when no evaluator of the table tracks
 * that name and the resource is not one upstream's quota ignores (events, virtual review
 * resources): upstream's monitors give every quotable resource one. Fills *ret (its strings
 * point into name and buf, which must outlive it) and returns true, else false. */
bool rq_dynamic_count(const char *name, char *buf, size_t len, struct rq_evaluator *ret);
/* The table's evaluator of (group, resource), or NULL. */
const struct rq_evaluator *rq_evaluator_for(const char *group, const char *resource);

/* Whether evaluator ev tracks the resource named name (its MatchingResources). */
bool rq_evaluator_matches(const struct rq_evaluator *ev, const char *name);

/* One object's usage (Usage): pod, service or PVC JSON; a count evaluator's object may be NULL.
 * now: for a pod past its deletion grace period. 0, -EINVAL (malformed), -ENOMEM, -ERANGE. */
int rq_usage(const struct rq_evaluator *ev, const cJSON *obj, kube_time_t now, struct rq_list *ret);

/* Whether the object matches one scope selector requirement ({"scopeName","operator",
 * "values"}), as the evaluator's MatchesScopeFunc: 1, 0, or -EINVAL (a selector that does not
 * convert). */
int rq_matches_scope(const struct rq_evaluator *ev, const cJSON *req, const cJSON *obj);

/* Pod helpers, exported for tests. */
bool rq_pod_counts(const cJSON *pod, kube_time_t now);      /* QuotaV1Pod */
bool rq_pod_best_effort(const cJSON *pod);                  /* GetPodQOS == BestEffort */
int rq_pod_requests(const cJSON *pod, struct rq_list *ret); /* PodRequests (kcm's options) */
int rq_pod_limits(const cJSON *pod, struct rq_list *ret);   /* PodLimits */

/* ---- the sync -----------------------------------------------------------------------------------
 */
/* Where the objects of a namespace come from. list calls fn once per object of ev's resource in
 * ns (obj may be NULL for a count evaluator) and returns the number visited or -errno; a negative
 * return of fn stops the walk and is returned. */
typedef int (*rq_visit_fn)(const cJSON *obj, void *ud);
/* A count evaluator without a legacy alias (count/<resource>.<group>, rq_dynamic_count's too)
 * whose list returns -ENOENT has no resource behind it (not served): as upstream without a
 * monitor for it, its names get no new usage and no error. */
struct rq_source {
	int (*list)(void *ud, const struct rq_evaluator *ev, const char *ns, rq_visit_fn fn,
	            void *fn_ud);
	void *ud;
};

struct rq_sync_out {
	cJSON *status; /* the new status {"hard":..., "used":...} (the caller frees) */
	bool dirty;    /* an UpdateStatus is due */
	int calc_err;  /* the first evaluator error (its resources keep their old usage), or 0 */
};

/* syncResourceQuota's decision for the quota JSON. 0 (out filled), -EINVAL (malformed quota),
 * -ENOMEM. */
int rq_sync_status(const cJSON *quota, const struct rq_source *src, kube_time_t now,
                   struct rq_sync_out *out);

/* addQuota's test for the priority queue: spec.hard differs from status.hard, or a resource of
 * status.hard that an evaluator tracks has no status.used entry. */
bool rq_quota_needs_priority(const cJSON *quota);

/* The quota's spec.hard names every resource an evaluator of resource (group, resource) tracks
 * in status.hard (replenishQuota's test); quota is the JSON. */
bool rq_quota_tracks(const cJSON *quota, const char *group, const char *resource);
