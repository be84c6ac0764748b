/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/selinuxwarning/sw.h: the pure part of kcm's selinux-warning-controller (upstream
 * pkg/controller/volume/selinuxwarning with its cache, translator and internal/parse packages,
 * v1.37.2): which SELinux mount label and change policy each volume of a pod gets, the cache of
 * volumes in use and the conflicts between the pods sharing one, and the Events' texts. No I/O:
 * workers/selinuxwarning/plugin.c reads the objects and calls these. docs/selinux-warning.md.
 *
 * Design note.
 *   A volume is identified as upstream's volume plugin manager does: the unique name
 *   "<plugin>/<volume name>" of the one plugin among kcm's ProbePersistentVolumePlugins
 *   (host-path, nfs, fc, iscsi, csi) that supports it; a volume no plugin supports is skipped.
 *   Whether the plugin mounts with `-o context` is upstream's SupportsSELinuxContextMount:
 *   fc and iscsi yes, host-path and nfs no, CSI when its CSIDriver says spec.seLinuxMount true.
 *   The cache keeps, per unique volume, the pods using it with their label and policy, and per
 *   volume the conflicts found; adding a pod's volume reports the conflicts it creates, both
 *   directions (each pod gets an Event), and replaces the volume's earlier conflicts that name
 *   the pod. The tables are arrays searched linearly (n pods on one volume is small; the volume
 *   table is indexed by a hash that grows).
 */
#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#define SW_CONTROLLER "selinux-warning-controller"
#define SW_COMPONENT  "selinux_warning" /* the Event source */
#define SW_QUEUE      "selinux_warning"

#define SW_POLICY_RECURSIVE    "Recursive"
#define SW_POLICY_MOUNT_OPTION "MountOption"

/* ---- labels (translator, internal/parse) ------------------------------------------------- */
/* SELinuxOptionsToFileLabel: "user:role:type:level" of an seLinuxOptions object, "" for NULL
 * or all four empty. Returns a malloc'd string or NULL (out of memory). */
char *sw_options_label(const cJSON *opts);
/* ParseSELinuxLabel: p[i] points into label (len[i] bytes; "" for a missing part). */
void sw_label_split(const char *label, const char *p[4], size_t len[4]);
/* ConflictsParsed over ParseSELinuxLabel of both ("" parses to four empty parts; the level is
 * everything after the third ':'): user, role and type conflict when both are set and differ,
 * the level whenever it differs. */
bool sw_labels_conflict(const char *a, const char *b);

/* ---- the cache (cache/volumecache.go) ------------------------------------------------------ */
struct sw_conflict {
	const char *property; /* "SELinuxChangePolicy" or "SELinuxLabel" (static) */
	const char *reason;   /* "SELinuxChangePolicyConflict" or "SELinuxLabelConflict" */
	char *ns, *name, *value;
	char *other_ns, *other_name, *other_value;
};

/* Conflict.EventMessage(): malloc'd, NULL on out of memory. */
char *sw_conflict_message(const struct sw_conflict *c);
void sw_conflicts_free(struct sw_conflict *v, size_t n);

struct sw_cache;
int sw_cache_new(struct sw_cache **ret);
void sw_cache_free(struct sw_cache *c);
/* AddVolume: records that pod ns/name uses volume with label and policy (csi_driver "" for a
 * volume that is not CSI; remembered from the first pod that adds the volume). The new
 * conflicts it causes go to *ret (malloc'd, free with sw_conflicts_free; *ret_n may be 0).
 * Re-adding a pod with the same label and policy reports nothing. 0 or -ENOMEM (the cache is
 * then unchanged for this pod and volume). */
int sw_cache_add_volume(struct sw_cache *c, const char *volume, const char *ns, const char *name,
                        const char *label, const char *policy, const char *csi_driver,
                        struct sw_conflict **ret, size_t *ret_n);
/* DeletePod: forgets the pod, its volumes (a volume no pod uses any more) and the conflicts that
 * name it. */
void sw_cache_delete_pod(struct sw_cache *c, const char *ns, const char *name);
/* GetPodsForCSIDriver: fn(ns, name) for each pod using a volume of that driver (a pod once per
 * volume, as upstream). Stops at and returns fn's first non-zero. */
int sw_cache_pods_for_driver(const struct sw_cache *c, const char *driver,
                             int (*fn)(const char *ns, const char *name, void *ud), void *ud);
/* GetConflicts: every conflict recorded, each distinct one once, in no promised order;
 * pointers into the cache, valid until the next change. fn's non-zero stops. */
int sw_cache_conflicts(const struct sw_cache *c, int (*fn)(const struct sw_conflict *, void *ud),
                       void *ud);
size_t sw_cache_n_volumes(const struct sw_cache *c);
size_t sw_cache_n_pods(const struct sw_cache *c); /* pods in the reverse index */
/* For tests: the label and policy the cache holds for pod ns/name on volume (0, -ENOENT), and
 * whether the volume table and the pod->volumes index agree. */
int sw_cache_pod_info(const struct sw_cache *c, const char *volume, const char *ns,
                      const char *name, const char **ret_label, const char **ret_policy);
bool sw_cache_consistent(const struct sw_cache *c);

/* ---- a pod's volumes (syncPod) ------------------------------------------------------------ */
/* What the sync reads besides the pod: a claim (NULL: not in the cache), a PV, and whether a
 * CSIDriver has spec.seLinuxMount true (0 also for no CSIDriver object). Objects are borrowed
 * and must live until sw_pod_volumes returns. */
struct sw_lookup {
	const cJSON *(*pvc)(void *ud, const char *ns, const char *name);
	const cJSON *(*pv)(void *ud, const char *name);
	bool (*driver_selinux_mount)(void *ud, const char *driver);
	void *ud;
};

enum sw_vol_state {
	SW_VOL_OK = 1, /* add (unique, label, policy, csi_driver) to the cache */
	SW_VOL_SKIP,   /* no volume plugin of kcm's supports it: ignored, not an error */
	SW_VOL_ERROR,  /* err says why; the pod is retried (rate limited) */
	SW_VOL_MULTI,  /* mounted with several labels in the pod: the MultipleSELinuxLabels Event
	                  and an error */
};

struct sw_volume {
	enum sw_vol_state state;
	char *name;   /* the pod's volume name */
	char *err;    /* ERROR, MULTI */
	char *unique; /* OK: "<plugin>/<volume name>" */
	char *label;  /* OK: the mount label ("" none) */
	char *policy; /* OK: the effective change policy */
	char *csi_driver;
};

/* Works out every volume of the pod as upstream's syncPod: first the volume spec of each
 * spec.volumes entry (a claim must be Bound to a PV whose claimRef names its uid; a generic
 * ephemeral volume's claim "<pod>-<volume>" must be controlled by the pod), an ERROR entry for
 * each that fails; then each name the containers (init, regular, ephemeral) mount, in first
 * mount order, whose spec was built. 0 with *ret (free with sw_volumes_free), -ENOMEM,
 * -EINVAL (pod lacks metadata.namespace/name). */
int sw_pod_volumes(const cJSON *pod, const struct sw_lookup *lk, struct sw_volume **ret,
                   size_t *ret_n);
void sw_volumes_free(struct sw_volume *v, size_t n);

/* The claim names a pod's volumes use (persistentVolumeClaim.claimName, or "<pod>-<volume>" of
 * a generic ephemeral volume): upstream's PodPVCIndex. fn's non-zero stops and is returned. */
int sw_pod_claims(const cJSON *pod, int (*fn)(const char *claim, void *ud), void *ud);
