/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/attachdetach/ad.h: the pure decisions of the attach/detach controller's CSI slice
 * (docs/attachdetach.md), over parsed objects, without the cache or the apiserver, so that
 * they are unit-tested on their own.
 *
 * The controller reconciles one node per key. For that node the worker gathers the desired
 * volumes (CSI volumes of the non-terminated pods scheduled there) and the actual ones (the
 * VolumeAttachments naming the node, the node's status.volumesAttached and volumesInUse), and
 * ad_plan() says what to do: which VolumeAttachments to create, which to delete, which
 * Multi-Attach errors to report, and the node's new volumesAttached list.
 */
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AD_CONTROLLER     "persistentvolume-attach-detach-controller"
#define AD_COMPONENT      "attachdetach-controller"
#define AD_ANN_MANAGED    "volumes.kubernetes.io/controller-managed-attach-detach"
#define AD_TAINT_OOS      "node.kubernetes.io/out-of-service"
#define AD_CSI_PLUGIN     "kubernetes.io/csi"
#define AD_MAX_UNMOUNT_US (6ULL * 60 * 1000000) /* maxWaitForUnmountDuration */
#define AD_VA_NAME_LEN    (4 + 64 + 1)          /* "csi-" + hex sha256 + NUL */

/* csi-<hex sha256(handle + driver + node)>, upstream's attachment name. buf must hold
 * AD_VA_NAME_LEN bytes. Returns 0, -EINVAL (a NULL argument), -EIO (hash failure). */
int ad_va_name(const char *handle, const char *driver, const char *node, char *buf);

/* "kubernetes.io/csi/<driver>^<handle>" into buf. Returns its length, -ENAMETOOLONG. */
int ad_unique_name(const char *driver, const char *handle, char *buf, size_t n);

/* A PV's CSI source: 0 with driver and handle pointing into pv, -ENOENT (not CSI), -EINVAL
 * (CSI source without driver or volumeHandle). */
int ad_pv_csi(const cJSON *pv, const char **ret_driver, const char **ret_handle);

/* Whether a CSI driver needs attaching: no CSIDriver object (NULL) or spec.attachRequired
 * unset or true = yes; attachRequired false = no. */
bool ad_attach_required(const cJSON *csidriver);

/* IsMultiAttachAllowed: a volume whose access modes include ReadOnlyMany or ReadWriteMany
 * may be attached to several nodes; one with none listed is allowed too (upstream's default). */
bool ad_multi_attach_allowed(const cJSON *pv);

/* IsPodTerminated: phase Failed or Succeeded, or a deletionTimestamp and no running
 * container. */
bool ad_pod_terminated(const cJSON *pod);

/* The PV a pod's PVC-backed volume gets, checked as upstream's getPVSpecFromCache: 0 with
 * *ret_pv_name pointing into pvc, -EAGAIN (claim not Bound or no volumeName: retried later),
 * -EINVAL (pv's claimRef does not name the claim's uid), with a message in err. pv may be
 * NULL when only the claim is checked. */
int ad_claim_volume(const cJSON *pvc, const cJSON *pv, const char **ret_pv_name, char *err,
                    size_t errlen);

/* The claim a pod volume uses: a persistentVolumeClaim's claimName, or for a generic ephemeral
 * volume "<pod>-<volume>" (ephemeral.VolumeClaimName). 0 with the name in buf, -ENOENT (neither:
 * an inline volume, CSI ephemeral included, is not attachable here), -ENAMETOOLONG. *ret_ephemeral
 * says which. */
int ad_pod_volume_claim(const cJSON *pod, const cJSON *vol, char *buf, size_t n,
                        bool *ret_ephemeral);
/* ephemeral.VolumeIsForPod: the claim's controller owner reference is the pod (by uid). */
bool ad_claim_owned_by_pod(const cJSON *pvc, const cJSON *pod);

/* Node facts */
bool ad_node_managed(const cJSON *node); /* the annotation is "true" */
bool ad_node_ready(const cJSON *node);   /* condition Ready is True */
bool ad_node_out_of_service(const cJSON *node);
/* 1 when the unique name is in status.volumesInUse (or volumesAttached), else 0 */
bool ad_node_lists(const cJSON *node, const char *field, const char *unique);

/* A VolumeAttachment body, as the CSI attacher creates it (no finalizers: the external
 * attacher adds its own). malloc'd JSON in *ret. 0 or -ENOMEM. */
int ad_va_body(const char *name, const char *driver, const char *node, const char *pv, char **ret);

/* The strategic merge patch of a node's status replacing volumesAttached with the given
 * unique names (devicePath ""), sorted; n == 0 gives null (the field removed). 0, -ENOMEM. */
int ad_status_patch(const char *const *unique, size_t n, char **ret);

/* ---- the plan for one node ---------------------------------------------------------------- */
struct ad_desired {
	const char *unique, *pv, *driver, *handle;
	bool multi_attach_allowed;
	bool attached_elsewhere; /* a VolumeAttachment of the same PV names another node */
};

struct ad_actual {
	const char *va, *unique, *pv;
	bool attached;            /* status.attached */
	bool deleting;            /* deletionTimestamp set */
	const char *attach_error; /* status.attachError.message, or NULL */
};

struct ad_node_state {
	const char *name; /* the node's name (its timers) */
	bool exists, ready, out_of_service;
	bool disable_force_detach;
	const cJSON *node; /* status.volumesInUse / volumesAttached; NULL when deleted */
};

enum ad_action_kind {
	AD_CREATE = 1,   /* create the VolumeAttachment of desired[i] */
	AD_MULTI_ATTACH, /* report the Multi-Attach error of desired[i] */
	AD_WAIT_ATTACH,  /* desired[i] has a VolumeAttachment not attached yet */
	AD_DETACH,       /* delete the VolumeAttachment of actual[i] (after the status patch) */
	AD_WAIT_UNMOUNT, /* actual[i] is not desired but still mounted */
	AD_REPORT_NEW,   /* desired[i] attached and newly reported in volumesAttached */
};

struct ad_action {
	enum ad_action_kind kind;
	size_t i;
};

/* Detach timer, kept by the caller across syncs (upstream's detachRequestedTime). */
struct ad_timer {
	char node[254]; /* the node it belongs to (one list serves every node) */
	char va[AD_VA_NAME_LEN];
	uint64_t since_us;
};

struct ad_plan {
	struct ad_action *actions;
	size_t n_actions;
	const char *
	        *report; /* the node's new volumesAttached (unique names, pointers into input) */
	size_t n_report;
	bool status_changed; /* report differs from node.status.volumesAttached as a set */
	uint64_t recheck_us; /* > 0: look again after this long (an unmount timer runs) */
};

/* Plans one node. timers/n_timers: the caller's detach timers (updated: entries added for
 * volumes waiting to detach, removed for desired ones); now_us: monotonic now. Returns 0 or
 * -ENOMEM; free with ad_plan_free. */
int ad_plan(const struct ad_node_state *ns, const struct ad_desired *d, size_t nd,
            const struct ad_actual *a, size_t na, struct ad_timer **timers, size_t *n_timers,
            uint64_t now_us, struct ad_plan *ret);
void ad_plan_free(struct ad_plan *p);
