/* SPDX-License-Identifier: Apache-2.0 */
/* workers/deployment/rsjson.h - a cached ReplicaSet as the JSON the Deployment sync reads
 * (rsjson.c). */
#pragma once
#include <cjson/cJSON.h>

#include "kube/model.h"

/* *ret: the caller's (cJSON_Delete). Returns 0, -ENOMEM, -EBADMSG (a template that is not
 * JSON), -EINVAL (a timestamp that cannot be formatted). spec.replicas is the record's (the
 * API default 1 when absent); status.terminatingReplicas only when the object had it. */
int dp_rs_to_json(const struct kube_replicaset *rs, cJSON **ret);
