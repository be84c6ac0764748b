/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/volumeprotection/protection.h: the pure decisions of kcm's
 * persistentvolumeclaim-protection-controller and persistentvolume-protection-controller
 * (upstream pkg/controller/volume/pvcprotection, pvprotection and protectionutil), and the
 * bodies of their writes. No I/O: the plug-ins (plugin-pvc.c, plugin-pv.c) read the cache and
 * the apiserver and call these. docs/volumeprotection.md.
 *
 * Design note.
 *   The objects are read from their JSON (PVCs and PVs are cached whole; the pods come from a
 *   live LIST, because the typed pod record of the cache keeps no volumes). What a decision
 *   needs of a PVC or PV is parsed once into a small struct (vp_object); a pod is judged from
 *   its parsed JSON (cJSON) by vp_pod_uses_pvc, with upstream's two predicates: the one that
 *   keeps the finalizer (podUsesPVCForDeletion: a scheduled pod naming the claim, or a pod not
 *   shut down whose generic ephemeral volume is this PVC) and the one behind the Unused
 *   condition of the PersistentVolumeClaimUnusedSinceTime gate (podUsesPVCForUnusedSince: any
 *   pod not terminated, scheduled or not).
 *   Writes are Updates (PUT) of the whole object as the cache holds it, as upstream's: the
 *   resourceVersion it carries makes a stale copy fail with a Conflict (retried). A patch would
 *   be lighter, but kcm's bootstrap roles (system:controller:pvc-protection-controller, ...)
 *   grant update and not patch.
 */
#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "kube/model.h"

#define VP_PVC_FINALIZER "kubernetes.io/pvc-protection"
#define VP_PV_FINALIZER  "kubernetes.io/pv-protection"

/* the Unused condition (KEP-5541) */
#define VP_COND_UNUSED    "Unused"
#define VP_REASON_UNUSED  "NoPodsUsingPVC"
#define VP_REASON_USED    "PodUsingPVC"
#define VP_MESSAGE_UNUSED "No pods are currently referencing this PVC"
#define VP_MESSAGE_USED   "A pod is currently referencing this PVC"

/* What the decisions read of a PVC or a PV. Strings point into the parsed JSON (vp_object_free). */
struct vp_object {
	cJSON *json; /* owned */
	const char *ns, *name, *uid, *resource_version;
	const char *controller_uid; /* the ownerReference with controller=true, or NULL */
	bool deleting;              /* metadata.deletionTimestamp set */
	bool has_finalizer;         /* the protection finalizer is listed */
	bool bound;                 /* status.phase == "Bound" */
	int unused; /* the Unused condition: -1 absent, 0 False, 1 True (other: -1) */
};

/* Parses a PVC or PV (finalizer: which protection finalizer counts). Returns 0, -EINVAL (not a
 * JSON object, or no metadata.name), -ENOMEM. ret is zeroed on failure. */
int vp_object_parse(const char *json, size_t len, const char *finalizer, struct vp_object *ret);
void vp_object_free(struct vp_object *o);

/* protectionutil.NeedToAddFinalizer / IsDeletionCandidate */
static inline bool vp_need_to_add_finalizer(const struct vp_object *o)
{
	return !o->deleting && !o->has_finalizer;
}
static inline bool vp_is_deletion_candidate(const struct vp_object *o)
{
	return o->deleting && o->has_finalizer;
}

/* The PVC event filter (pvcAddedUpdated): it needs a sync when it lacks the finalizer, is a
 * deletion candidate, or (gate on) is not being deleted and has no Unused condition yet. */
bool vp_pvc_wants_sync(const struct vp_object *pvc, bool unused_gate);
/* Whether a pod event should look at this PVC of the pod's namespace (the pod's volumes are
 * not in the cache, so every PVC a pod could affect is looked at): a deletion candidate, or
 * (gate on) a Bound PVC not being deleted. */
bool vp_pvc_pod_event_relevant(const struct vp_object *pvc, bool unused_gate);
/* Whether the Unused condition is managed for this PVC: gate on, not being deleted, Bound. */
bool vp_pvc_unused_managed(const struct vp_object *pvc, bool unused_gate);

/* Whether a pod update can change which claims the pod uses as far as its cached record tells
 * (uid: a pod replaced under the same name, nodeName, phase, deletionTimestamp,
 * deletionGracePeriodSeconds); a status-only update (readiness, restarts) cannot. */
bool vp_pod_usage_changed(const struct kube_pod *old, const struct kube_pod *cur);

enum vp_predicate {
	VP_FOR_DELETION,     /* podUsesPVCForDeletion: keeps the finalizer */
	VP_FOR_UNUSED_SINCE, /* podUsesPVCForUnusedSince: the Unused condition */
};

/* volumeutil.IsPodTerminated: phase Succeeded/Failed, or being deleted with no container
 * (init, regular, ephemeral) running (each status waiting or terminated). */
bool vp_pod_terminated(const cJSON *pod);
/* podIsShutDown: deletionTimestamp set and deletionGracePeriodSeconds == 0. */
bool vp_pod_shut_down(const cJSON *pod);
/* Whether pod (a Pod's JSON, of the PVC's namespace) uses the PVC under predicate p: by
 * spec.volumes[].persistentVolumeClaim.claimName, or by a generic ephemeral volume whose claim
 * "<pod>-<volume>" is this PVC and the PVC is controlled by the pod (ephemeral.VolumeIsForPod). */
bool vp_pod_uses_pvc(const cJSON *pod, const struct vp_object *pvc, enum vp_predicate p);
/* The first pod of a PodList's items that uses the PVC, or NULL. */
const cJSON *vp_pods_using(const cJSON *pod_list, const struct vp_object *pvc, enum vp_predicate p);

/* Update (PUT) bodies, malloc'd and NUL-terminated: o's whole object (its resourceVersion
 * included, so a stale copy gets a Conflict) with metadata.finalizers changed: `finalizer`
 * appended (add) or every copy of it removed (!add). Returns 0, -ENOMEM. */
int vp_finalizer_update(const struct vp_object *o, const char *finalizer, bool add, char **ret);
/* The UpdateStatus body setting the Unused condition to `unused` (True: NoPodsUsingPVC, False:
 * PodUsingPVC), lastTransitionTime now; an existing Unused condition is replaced in place, the
 * others are kept. *ret = NULL (and 0) when the condition already has that status (no write:
 * the transition time is kept). Returns 0, -ENOMEM. */
int vp_unused_update(const struct vp_object *pvc, bool unused, kube_time_t now, char **ret);

/* ---- VolumeAttributesClass protection (upstream pkg/controller/volume/vacprotection) -------- */
#define VP_VAC_FINALIZER "kubernetes.io/vac-protection"

/* The VolumeAttributesClass names an object references (getPVCReferencedVACNames /
 * getPVReferencedVACNames): a PVC's spec.volumeAttributesClassName,
 * status.currentVolumeAttributesClassName and status.modifyVolumeStatus.
 * targetVolumeAttributesClassName; a PV's spec.volumeAttributesClassName. Empty names are
 * skipped and duplicates dropped. Fills names[] (pointing into json) and returns how many
 * (0..3). */
size_t vp_vac_names(const cJSON *json, bool is_pvc, const char *names[static 3]);
/* Whether name is among names[0..n). */
bool vp_vac_listed(const char *const *names, size_t n, const char *name);
