/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/resourcepoolstatus/rps.h: the pure part of kcm's resourcepoolstatusrequest-controller
 * (upstream pkg/controller/resourcepoolstatusrequest, v1.37: controller.go's
 * calculatePoolStatus, errorStatus, shouldDeleteRequest and views.go). No I/O: plugin.c reads the
 * cache, calls these and writes the result. docs/resourcepoolstatusrequest.md.
 *
 * Design note.
 *   Upstream computes a request's status on demand from its listers and keeps nothing between
 *   requests; so does kcmd: the inputs are the cached objects' JSON (ResourceSlices,
 *   ResourceClaims, DeviceTaintRules of resource.k8s.io/v1, the request of v1alpha3) and the
 *   output is the status object, JSON as client-go would serialize upstream's struct (omitempty
 *   honoured, quantities in canonical form). Quantities (shared counters, device capacity,
 *   consumed capacity) are exact nano-unit integers with their format, through the quota
 *   controller's resource.Quantity module (workers/resourcequota/quantity.h), so sums,
 *   differences, comparisons and the printed text match Go's.
 *   The pools are kept in the order their first slice is met and sorted at the end (driver,
 *   pool name), as upstream does; a view's first structural error is the first one met walking
 *   the devices in slice order (upstream walks its lister's order, which is itself unordered).
 *   Rejected: a per-pool index kept up to date by the handlers (upstream has none; a request
 *   is rare and one pass over the cache is cheap).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "kube/model.h"

/* validationError prefixes (views.go) */
#define RPS_PREFIX_POOL_INCOMPLETE "PoolIncomplete:"
#define RPS_MAX_STATUS_LIST_ITEMS  32  /* +k8s:maxItems=32 of the status lists */
#define RPS_MAX_MESSAGE_BYTES      256 /* +k8s:maxBytes=256 of validationError */
#define RPS_LIMIT_DEFAULT          100 /* ResourcePoolStatusRequestLimitDefault */

/* TTLs of the cleanup pass (controller.go) */
#define RPS_CLEANUP_PERIOD_NS (10LL * 60 * 1000000000)   /* cleanupPollingInterval */
#define RPS_COMPLETED_TTL_NS  (3600LL * 1000000000)      /* completedRequestTTL */
#define RPS_PENDING_TTL_NS    (24LL * 3600 * 1000000000) /* pendingRequestTTL */

struct rps_input {
	const cJSON *request; /* the ResourcePoolStatusRequest */
	const cJSON *const *slices;
	size_t n_slices;
	const cJSON *const *claims;
	size_t n_claims;
	/* DeviceTaintRules; consulted only when rules_enabled (the DRADeviceTaintRules gate) */
	const cJSON *const *rules;
	size_t n_rules;
	bool rules_enabled;
	const char *now; /* lastTransitionTime of the condition (RFC 3339) */
};

/* calculatePoolStatus: *ret_status gets the status object (the caller owns it) and
 * *ret_incomplete whether a returned pool is incomplete (PoolIncomplete: the request is retried,
 * not written). Returns 0 or -ENOMEM (nothing written then). Bad input never fails: a field of
 * the wrong type reads as absent. */
int rps_calculate(const struct rps_input *in, cJSON **ret_status, bool *ret_incomplete);

/* errorStatus(message): poolCount 0 and a Failed condition. NULL on allocation failure. */
cJSON *rps_error_status(const char *message, const char *now);

/* Whether the request has a status (upstream's request.Status != nil): it is then done. */
bool rps_has_status(const cJSON *request);

/* shouldDeleteRequest at time now. */
bool rps_should_delete(const cJSON *request, kube_time_t now);

/* strconv.Quote for the ASCII a name or attribute holds (bytes >= 0x80 are copied). Writes at
 * most n bytes, NUL included; returns dst. */
char *rps_quote(const char *s, char *dst, size_t n);
