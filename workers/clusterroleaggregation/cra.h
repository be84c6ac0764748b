/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/clusterroleaggregation/cra.h: the clusterrole-aggregation-controller's sync, pure (no
 * I/O).
 *
 * Design note.
 *   Upstream's ClusterRoleAggregationController (pkg/controller/clusterroleaggregation, v1.37)
 *   fills the rules of every ClusterRole that has an aggregationRule: for each of its
 *   clusterRoleSelectors in order, the ClusterRoles the selector matches, sorted by name and
 *   without the role itself, contribute each of their rules not yet present (semantic
 *   equality: an absent list equals an empty one). When the result differs from the role's
 *   rules, it is written with a server-side apply (field manager
 *   clusterrole-aggregation-controller, force) of a ClusterRole holding only the name and the
 *   rules. Any change to any ClusterRole queues every aggregated role.
 *   Here over cJSON objects of the roles as cached (their JSON), tested without a cluster
 *   (tests/test-cra.c, the cases of upstream's TestSyncClusterRole).
 */
#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#define CRA_CONTROLLER    "clusterrole-aggregation-controller"
#define CRA_QUEUE         "ClusterRoleAggregator" /* upstream's workqueue name */
#define CRA_FIELD_MANAGER "clusterrole-aggregation-controller"

/* The role has an aggregationRule (possibly with no selectors). */
bool cra_aggregated(const cJSON *role);

/* target: the aggregated role; roles[0..n): every cached ClusterRole (target may be among
 * them). 0 with *ret = NULL when its rules are already the aggregate, 0 with *ret = the apply
 * body (malloc'd) otherwise; -EINVAL (a selector that does not convert: err says why),
 * -ENOMEM. */
int cra_sync(const cJSON *target, const cJSON *const *roles, size_t n, char **ret, char *err,
             size_t errlen);
