/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/volumeprotection/ephemeral.h: the pure part of kcm's ephemeral-volume-controller
 * (upstream pkg/controller/volume/ephemeral): which claim a pod's generic ephemeral volume
 * needs, whether an existing claim of that name is the pod's, and the claim to create.
 * docs/volumeprotection.md.
 */
#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "workers/volumeprotection/protection.h"

/* ephemeral.VolumeClaimName: "<pod>-<volume>" into buf. Returns its length, or -ENAMETOOLONG. */
int ev_claim_name(const char *pod, const char *volume, char *buf, size_t n);

/* ephemeral.VolumeIsForPod: 0 when the claim is in the pod's namespace and controlled by the
 * pod (controller ownerReference with its uid); else -EEXIST with upstream's message in msg
 * ("PVC ns/name was not created for pod ns/pod (pod is not owner)"). */
int ev_volume_is_for_pod(const cJSON *pod, const struct vp_object *pvc, char *msg, size_t n);

/* The claim of volume vol (an element of the pod's spec.volumes with `ephemeral`) as a JSON body
 * to POST: name "<pod>-<volume>", the template's labels and annotations, its spec, and the pod
 * as controller owner (blockOwnerDeletion). Returns 0, -EINVAL (no volumeClaimTemplate, no pod
 * name or uid), -ENAMETOOLONG, -ENOMEM. */
int ev_claim_body(const cJSON *pod, const cJSON *vol, char **ret);
