/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/endpoints/endpoints.h: the endpoints-controller's sync, pure (no I/O).
 *
 * Design note.
 *   Upstream's endpoints controller (pkg/controller/endpoint, v1.37) keeps one v1 Endpoints
 *   object per Service with a selector, named as the Service: every pod the selector matches
 *   that is not terminal, has an IP, and is not terminating (unless publishNotReadyAddresses)
 *   gives one address (the pod IP of the Service's first family, nodeName, targetRef, and the
 *   hostname when hostname and subdomain match) per Service port its target port resolves to,
 *   ready unless the pod is not Ready (publishNotReadyAddresses: always ready); then the
 *   subsets are repacked (RepackSubsets: addresses offering the same ports, with the same
 *   readiness, share one subset; not ready wins over ready for one address and port). The
 *   object is written only when its subsets (ignoring targetRef resourceVersions) or its labels
 *   (the Service's, plus service.kubernetes.io/headless when the clusterIP is None or empty)
 *   differ, or the over-capacity annotation is wrong; more than 1000 addresses are truncated
 *   (ready ones first, spread over the subsets in proportion) with
 *   endpoints.kubernetes.io/over-capacity: truncated; the last-change-trigger-time annotation
 *   is set as the EndpointSlice controller sets it.
 *   Here over cJSON (the Service and Endpoints from the cache, the pods from a LIST), tested
 *   without a cluster (tests/test-endpoints.c, the cases of upstream's
 *   endpoints_controller_test.go and pkg/api/v1/endpoints' RepackSubsets tests).
 *   Deviation: subsets and their ports are sorted by their contents, not by upstream's hash of
 *   them (upstream's order has no meaning; comparisons here ignore order, so Endpoints written
 *   by upstream are not rewritten for their order alone).
 */
#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#define EP_CONTROLLER   "endpoints-controller"
#define EP_QUEUE        "endpoint" /* upstream's workqueue name */
#define EP_MAX_CAPACITY 1000
#define EP_ANN_OVER     "endpoints.kubernetes.io/over-capacity"
#define EP_ANN_TRIGGER  "endpoints.kubernetes.io/last-change-trigger-time"
#define EP_LABEL_HL     "service.kubernetes.io/headless"

/* The repacked subsets (a JSON array) for svc and its pods. NULL on -ENOMEM. */
cJSON *ep_subsets(const cJSON *svc, const cJSON *const *pods, size_t n_pods);

/* svc with a selector; current: the cached Endpoints or NULL; trigger: the trigger-time value or
 * NULL. 0 with *ret = NULL when nothing is to be written; 0 with *ret = the object to create
 * (*create) or to PUT; -ENOMEM. */
int ep_sync(const cJSON *svc, const cJSON *const *pods, size_t n_pods, const cJSON *current,
            const char *trigger, cJSON **ret, bool *create);

/* truncateEndpoints on an Endpoints object: true when it was over capacity (and now is not). */
bool ep_truncate(cJSON *endpoints);
