/* SPDX-License-Identifier: Apache-2.0 */
/* workers/deployment/match.h - a Deployment's label selector (metav1.LabelSelector as JSON)
 * against an object's labels, for claiming ReplicaSets (upstream ClaimReplicaSets' match). */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>

/* LabelSelectorAsSelector(sel).Matches(labels): every matchLabels pair and every
 * matchExpressions requirement (In, NotIn, Exists, DoesNotExist) holds. labels: the object's
 * metadata.labels (NULL: none). A NULL selector, an empty one (upstream: everything; the sync
 * refuses such a Deployment before claiming) and an unknown operator match nothing. */
bool dp_selector_matches(const cJSON *sel, const cJSON *labels);
