/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/devicetainteviction/dte.h: the pure decisions of kcm's
 * device-taint-eviction-controller (upstream pkg/controller/devicetainteviction), over the JSON
 * of resource.k8s.io/v1 objects: which NoExecute device taints (ResourceSlice device taints of a
 * pool's newest generation, DeviceTaintRules) hit a claim's allocated devices, when the claim's
 * tolerations let its pods be evicted, a pod's eviction as the earliest over its claims, and the
 * DisruptionTarget patch. No I/O, no clock: times are passed in (kube_time_t, ns since epoch).
 */
#ifndef KCMD_WORKERS_DEVICETAINTEVICTION_DTE_H
#define KCMD_WORKERS_DEVICETAINTEVICTION_DTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "kube/model.h"

#define DTE_COND_TYPE    "DisruptionTarget"
#define DTE_COND_REASON  "DeletionByDeviceTaintManager"
#define DTE_COND_MESSAGE "Device Taint manager: deleting due to NoExecute taint"
#define DTE_EVENT_REASON "DeviceTaintManagerEviction"

/* What the taints are read from: the cached ResourceSlices and DeviceTaintRules (borrowed). */
struct dte_world {
	const cJSON *const *slices;
	size_t n_slices;
	const cJSON *const *rules;
	size_t n_rules;
	/* the rule of this name counts as NoExecute whatever its effect (the status of a rule
	 * with effect None reports what it would evict); NULL: none */
	const char *simulate_rule;
};

/* One taint that is a reason for an eviction (upstream's trackedTaint): a DeviceTaintRule (by
 * name and uid) or taint #index of a device in a ResourceSlice. Ordered as upstream: rules
 * first by name, then slice taints by driver, pool, device, index. */
struct dte_reason {
	bool rule;
	char *name; /* rule name; slice taints: the slice's name */
	char *uid;  /* rule uid */
	char *driver, *pool, *device;
	int index;
};

struct dte_eviction {
	kube_time_t when;
	struct dte_reason *reasons;
	size_t n_reasons;
};

void dte_eviction_free(struct dte_eviction *e);

/* ToleratesTaint (k8s.io/dynamic-resource-allocation/resourceclaim) for JSON objects. */
bool dte_tolerates(const cJSON *toleration, const cJSON *taint);

/* ruleMatchesDevice: a rule without a deviceSelector matches nothing. */
bool dte_rule_matches(const cJSON *rule, const char *driver, const char *pool, const char *device);

/* claimEvictionTime: 1 and *ret filled when an allocated device of claim carries a NoExecute
 * taint it does not tolerate forever (when = the earliest timeAdded + the smallest matching
 * tolerationSeconds, over all such taints), 0 when none (or the claim is not allocated),
 * -ENOMEM. */
int dte_claim_eviction(const struct dte_world *w, const cJSON *claim, struct dte_eviction *ret);

/* podEvictionTime's merge: *acc becomes the earliest of both with the union of reasons.
 * Returns 0 or -ENOMEM. */
int dte_eviction_merge(struct dte_eviction *acc, const struct dte_eviction *e);

/* Whether claim is allocated and status.reservedFor holds the pod (resource "pods", group "",
 * the uid). */
bool dte_claim_reserved_for_pod(const cJSON *claim, const char *pod_uid);
bool dte_claim_allocated(const cJSON *claim);

/* The strategic-merge patch of the pod's status that sets DisruptionTarget=True with upstream's
 * reason and message (UpdatePodCondition: the transition time is kept when the status does not
 * change). 1 and *ret_body (free()) when there is something to write, 0 when the condition is
 * already so, -EBADMSG/-ENOMEM. */
int dte_condition_patch(const char *pod_json, size_t len, kube_time_t now, char **ret_body);

/* The DeviceTaintRule EvictionInProgress condition (maybeUpdateRuleStatus) from the counts.
 * effect: the rule's spec.taint.effect. Writes reason and message (message_sz ≥ 512).
 * status is "True" or "False". */
void dte_rule_condition(const char *effect, int64_t pending_pods, int64_t pending_namespaces,
                        int64_t evicted_pods, int64_t slice_devices, int64_t allocated_devices,
                        const char **ret_status, const char **ret_reason, char *message,
                        size_t message_sz);

#endif
