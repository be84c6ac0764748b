/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/pvbinder/binder.h: the sync logic of kcm's persistentvolume-binder-controller
 * (upstream pkg/controller/volume/persistentvolume, v1.37, and component-helpers'
 * storage/volume pv_helpers): syncClaim, syncUnboundClaim, syncBoundClaim, syncVolume, bind,
 * unbind, reclaim, the volume matching and the default StorageClass. docs/pvbinder.md.
 *
 * Design note.
 *   The sync functions take parsed objects (cJSON, as the apiserver sends them) and do every
 *   read and write through a table of operations (struct pvb_ops): the plug-in (plugin.c) backs
 *   it with the shared cache and the apiserver, the unit test with an in-memory store that
 *   plays upstream's fake reactor (resourceVersion checks, one event list). So the decisions
 *   are tested exactly as upstream's binder_test.go tests them: initial objects, one sync,
 *   expected objects and Events. No I/O and no logging here; a note the owner should log goes
 *   through ops->note.
 *   What upstream does in a goroutine (provisioning, deletion) is done inline: kcmd has no
 *   in-tree volume plugins, so provisioning is only "annotate the claim for the external
 *   provisioner", and deletion only "wait for the external deleter" or "no deleter: Failed".
 *   Rejected: a decision value the caller acts on (bind() is four dependent writes, each using
 *   the object the previous one returned; a value would re-encode upstream's control flow).
 */
#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#define PVB_ANN_BIND_COMPLETED     "pv.kubernetes.io/bind-completed"
#define PVB_ANN_BOUND_BY_CTRL      "pv.kubernetes.io/bound-by-controller"
#define PVB_ANN_PROVISIONED_BY     "pv.kubernetes.io/provisioned-by"
#define PVB_ANN_STORAGE_PROV       "volume.kubernetes.io/storage-provisioner"
#define PVB_ANN_BETA_STORAGE_PROV  "volume.beta.kubernetes.io/storage-provisioner"
#define PVB_ANN_SELECTED_NODE      "volume.kubernetes.io/selected-node"
#define PVB_ANN_MIGRATED_TO        "pv.kubernetes.io/migrated-to"
#define PVB_ANN_BETA_CLASS         "volume.beta.kubernetes.io/storage-class"
#define PVB_ANN_DEFAULT_CLASS      "storageclass.kubernetes.io/is-default-class"
#define PVB_ANN_BETA_DEFAULT_CLASS "storageclass.beta.kubernetes.io/is-default-class"
#define PVB_ANN_PRE_RESIZE         "volume.alpha.kubernetes.io/pre-resize-capacity"
#define PVB_FIN_IN_TREE            "kubernetes.io/pv-controller"
#define PVB_FIN_EXTERNAL           "external-provisioner.volume.kubernetes.io/finalizer"

/* The writes, each a PUT of the whole object (Update / UpdateStatus). */
enum pvb_write {
	PVB_UPDATE_VOLUME = 1,
	PVB_UPDATE_VOLUME_STATUS,
	PVB_UPDATE_CLAIM,
	PVB_UPDATE_CLAIM_STATUS,
};

struct pvb_ops {
	void *ud;
	/* The informer caches. Each returns 0 with *ret (the caller's, cJSON_Delete), -ENOENT, or
	 * another -errno. list_*: a JSON array. */
	int (*get_volume)(void *ud, const char *name, cJSON **ret);
	int (*list_volumes)(void *ud, cJSON **ret);
	int (*get_claim)(void *ud, const char *ns, const char *name, cJSON **ret);
	int (*get_class)(void *ud, const char *name, cJSON **ret);
	int (*list_classes)(void *ud, cJSON **ret);
	/* The pods of a namespace (a JSON array), for the claims' unscheduled users. May be
	 * NULL (then WaitForFirstConsumer is always the reason). */
	int (*list_pods)(void *ud, const char *ns, cJSON **ret);
	/* A live GET of a claim from the apiserver: 0, -ENOENT, -errno. */
	int (*get_claim_live)(void *ud, const char *ns, const char *name, cJSON **ret);
	/* A write; *ret gets the object the apiserver returned. -errno with the apiserver's
	 * message in err (-EBUSY: a conflict). */
	int (*write)(void *ud, enum pvb_write w, const cJSON *obj, cJSON **ret, char *err,
	             size_t errlen);
	/* An Event on a claim (is_claim) or a volume; best effort. */
	void (*event)(void *ud, const cJSON *obj, bool is_claim, const char *type,
	              const char *reason, const char *msg);
	/* claimQueue.Add("ns/name") */
	void (*enqueue_claim)(void *ud, const char *key);
	/* metav1.Now() as RFC 3339 ("2026-01-02T03:04:05Z") into buf */
	void (*now)(void *ud, char *buf, size_t n);
	/* Something kcmd does not build was asked for (the recycler pod, the hostPath deleter):
	 * the owner logs it. May be NULL. */
	void (*note)(void *ud, const char *msg);
	/* A retroactive default-class assignment was tried: success (the claim was updated) or
	 * not (upstream's RecordRetroactiveStorageClassMetric). May be NULL. */
	void (*retroactive_class)(void *ud, bool success);
	bool enable_dynamic_provisioning; /* --enable-dynamic-provisioning */
};

/* syncClaim: one claim (as the cache holds it). Returns 0, or -errno with a message in err
 * (upstream logs it; the next sync retries). */
int pvb_sync_claim(const struct pvb_ops *ops, const cJSON *claim, char *err, size_t errlen);
/* syncVolume: one volume. Same contract. */
int pvb_sync_volume(const struct pvb_ops *ops, const cJSON *volume, char *err, size_t errlen);

/* ---- helpers, exported for the handlers and the tests ----------------------------------- */
/* GetPersistentVolumeClaimClass / GetPersistentVolumeClass: the beta annotation, else
 * spec.storageClassName, else "". Owned by the object. */
const char *pvb_claim_class(const cJSON *claim);
const char *pvb_volume_class(const cJSON *volume);
/* IsVolumeBoundToClaim */
bool pvb_volume_bound_to_claim(const cJSON *volume, const cJSON *claim);
/* CheckVolumeModeMismatches (absent = Filesystem) */
bool pvb_volume_mode_mismatch(const cJSON *claim, const cJSON *volume);
/* FindMatchingVolume over `volumes` (an array) as the binder calls it (no node, nothing
 * excluded): the pre-bound volume, else the smallest Available match. *ret points into
 * volumes or is NULL. -EINVAL with a message for a claim selector that does not convert. */
int pvb_find_matching_volume(const cJSON *claim, const cJSON *volumes, bool delay_binding,
                             const cJSON **ret, char *err, size_t errlen);
/* index.findByClaim: the volumes grouped by their access modes, the groups whose modes hold
 * every mode the claim asks for tried from the fewest modes up. */
int pvb_find_best_match(const cJSON *claim, const cJSON *volumes, bool delay_binding,
                        const cJSON **ret, char *err, size_t errlen);
/* util.GetDefaultClass over an array of StorageClasses: the newest default (ties: the
 * smallest name), or NULL. */
const cJSON *pvb_default_class(const cJSON *classes);
/* findNonScheduledPodsByPVC over the pods of the claim's namespace: the names of the pods that
 * use the claim (a persistentVolumeClaim volume, or the generic ephemeral volume whose claim is
 * "<pod>-<volume>"), are not terminated and have no node, joined by "," into buf. Returns
 * how many. */
int pvb_unscheduled_pods(const cJSON *claim, const cJSON *pods, char *buf, size_t n);
/* modifyDeletionFinalizers on a volume (changed in place): for a dynamically provisioned one
 * (pv.kubernetes.io/provisioned-by present) of an in-tree plugin migrated to CSI, the in-tree
 * finalizer kubernetes.io/pv-controller removed; of another kubernetes.io/ provisioner, that
 * finalizer added under Delete and removed under Retain or Recycle, and the external
 * provisioner's finalizer removed; nothing for any other volume. An emptied list is removed.
 * Returns 1 when changed, 0, -ENOMEM. */
int pvb_deletion_finalizers(cJSON *volume);
/* Quantity comparison of two quantity strings (absent or unparsable = 0): <0, 0, >0. */
int pvb_qty_cmp(const char *a, const char *b);
