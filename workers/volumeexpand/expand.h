/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/volumeexpand/expand.h: the pure decisions of kcm's persistentvolume-expander-controller
 * (upstream pkg/controller/volume/expand, v1.37) and the body of its one write. No I/O: the
 * plug-in (plugin.c) reads the cache and the apiserver and calls these. docs/volumeexpand.md.
 *
 * Design note.
 *   In v1.37 kcm hands this controller the expandable plugins among hostpath, nfs, fc, iscsi
 *   and csi: none of them implements ExpandVolumeDevice, so its plugin manager is empty. What
 *   is left of syncHandler is then: a PV not bound to the claim is an error (retried); no
 *   growth (and no pre-resize annotation on the PV) is nothing to do; a PV of an in-tree plugin
 *   with CSI migration (aws-ebs, gce-pd, azure-file, azure-disk, cinder, vsphere-volume,
 *   portworx-volume: csi-translation-lib's table) gets the resizer annotation with the CSI
 *   driver's name and a Normal ExternalExpanding Event; a FlexVolume PV would take the noop
 *   plugin's in-controller path (VE_FLEX, not built, docs); anything else (a native CSI volume,
 *   NFS, hostPath, ...) gets a Normal ExternalExpanding Event "waiting for an external
 *   controller to expand this PVC" and is not requeued.
 *   Sizes are resource.Quantity values compared exactly as counts of nano units (expand.c; the
 *   quota controller's quantity module is another worker's, which the layers rule keeps out).
 */
#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#define VE_ANN_RESIZER     "volume.kubernetes.io/storage-resizer"
#define VE_ANN_PRE_RESIZE  "volume.alpha.kubernetes.io/pre-resize-capacity"
#define VE_REASON_EXTERNAL "ExternalExpanding"
#define VE_MSG_EXTERNAL    "waiting for an external controller to expand this PVC"
#define VE_FMT_MIGRATED                                                                            \
	"CSI migration enabled for %s; waiting for external resizer to expand the pvc"
#define VE_FMT_SET_RESIZER_ERROR "error setting resizer annotation to pvc %s, with error %s"

enum ve_verdict {
	VE_SKIP,      /* nothing to expand: done */
	VE_NOT_BOUND, /* the PV is not bound to this claim: an error, retried with backoff */
	VE_MIGRATED,  /* in-tree plugin under CSI migration: Event + resizer annotation */
	VE_EXTERNAL,  /* no plugin can expand it: Normal Event, done */
	VE_FLEX,      /* FlexVolume: upstream's noop-plugin path (not built in kcmd) */
};

struct ve_decision {
	enum ve_verdict verdict;
	const char *plugin; /* VE_MIGRATED: "kubernetes.io/aws-ebs" ... */
	const char *driver; /* VE_MIGRATED: "ebs.csi.aws.com" ...; VE_FLEX: the flex driver */
};

/* status.phase == "Bound" (enqueuePVC's filter). */
bool ve_pvc_bound(const cJSON *pvc);
/* The update handler's rule: requests.storage grew or status.capacity.storage grew. */
bool ve_update_wants(const cJSON *old_pvc, const cJSON *new_pvc);
/* The in-tree plugin a PV's source belongs to and its CSI driver (csi-translation-lib);
 * false for a PV of no migrated plugin. */
bool ve_migrated_plugin(const cJSON *pv, const char **ret_plugin, const char **ret_driver);
/* syncHandler's decision for a claim and the PV it names. */
void ve_decide(const cJSON *pvc, const cJSON *pv, struct ve_decision *ret);
/* The strategic merge patch of the claim's status SetClaimResizer sends: the annotation (left
 * out when it already has that value) and the claim's resourceVersion. malloc'd in *ret_body.
 * Returns 0, -ENOMEM. */
int ve_resizer_patch(const cJSON *pvc, const char *resizer, char **ret_body);
