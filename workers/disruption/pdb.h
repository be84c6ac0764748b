/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/disruption/pdb.h: the disruption controller's decisions (upstream
 * pkg/controller/disruption), pure: no cache, no client. The sync (controller.c) gathers the
 * PodDisruptionBudget (its JSON as cJSON), the pods its selector matches and a lookup of the
 * pods' controllers, and this module computes the new status, the Events and the recheck time.
 * Unit-tested against upstream's disruption_test.go cases (tests/test-pdb.c).
 *
 * Design note.
 *   The PDB stays a cJSON tree: upstream writes the whole object back with UpdateStatus, so the
 *   status is replaced in a copy of what was read (spec, metadata and resourceVersion as the
 *   cache holds them: a newer PDB at the apiserver answers Conflict, as upstream's does).
 *   Controller lookups go through a callback table (struct pdb_lookup) so the finder chain
 *   (RC, Deployment, ReplicaSet, StatefulSet, scale subresource) is the same code in the worker
 *   and in the tests.
 */
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/model.h"

#define PDB_DELETION_TIMEOUT_NS (120LL * 1000000000LL) /* DeletionTimeout */
#define PDB_STALE_DISRUPTION_NS (120LL * 1000000000LL) /* stalePodDisruptionTimeout */
#define PDB_CONDITION_TYPE      "DisruptionAllowed"
#define PDB_REASON_SUFFICIENT   "SufficientPods"
#define PDB_REASON_INSUFFICIENT "InsufficientPods"
#define PDB_REASON_SYNC_FAILED  "SyncFailed"
#define PDB_EVENT_COMPONENT     "controllermanager" /* upstream's recorder component */

/* A pod as the decisions need it. */
struct pdb_pod {
	const char *name;
	bool ready;    /* condition Ready is True */
	bool deleting; /* deletionTimestamp set */
	bool has_controller;
	struct kube_owner_ref controller; /* valid when has_controller */
};

/* A controller found by a finder: its uid and scale. */
struct pdb_scale {
	char uid[128];
	int32_t scale;
};

/* Lookups a finder chain needs. Each get returns 1 found (fills the out-parameters), 0 not
 * found, or -errno; strings written into caller buffers of 128 bytes. */
struct pdb_rs_info {
	char uid[128];
	int32_t replicas;
	bool has_controller;
	char ctl_api_version[128], ctl_kind[128], ctl_name[254], ctl_uid[128];
};
struct pdb_lookup {
	void *ud;
	/* ReplicationController, Deployment, StatefulSet: uid and spec.replicas */
	int (*get_rc)(void *ud, const char *ns, const char *name, char *uid, int32_t *replicas);
	int (*get_deployment)(void *ud, const char *ns, const char *name, char *uid,
	                      int32_t *replicas);
	int (*get_statefulset)(void *ud, const char *ns, const char *name, char *uid,
	                       int32_t *replicas);
	int (*get_rs)(void *ud, const char *ns, const char *name, struct pdb_rs_info *ret);
	/* The scale subresource finder (getScaleController): 1 found, 0 not found (no such object,
	 * or another uid), -errno with *err (malloc'd) the message upstream would give. */
	int (*get_scale)(void *ud, const struct kube_owner_ref *ref, const char *ns,
	                 struct pdb_scale *ret, char **err);
};

/* verifyGroupKind: ref's kind is kind and its group one of groups (NULL-terminated). -EINVAL
 * for an apiVersion that does not parse (more than one '/'). */
int pdb_verify_group_kind(const struct kube_owner_ref *ref, const char *kind,
                          const char *const *groups);

/* The finder chain for one controller reference: 1 found (*ret), 0 none, -errno (*err). */
int pdb_find_controller(const struct pdb_lookup *lk, const struct kube_owner_ref *ref,
                        const char *ns, struct pdb_scale *ret, char **err);

/* intstr.GetScaledValueFromIntOrPercent(v, total, roundUp): 0 and *ret, or -EINVAL with *err
 * (malloc'd) as upstream's message. */
int pdb_scaled_value(const cJSON *v, int total, bool round_up, int *ret, char **err);

/* The label selector of spec.selector: nil (absent or null) -> nothing, {} -> everything. */
struct kube_selector;
int pdb_selector(const cJSON *pdb, struct kube_selector **ret, char **err);
/* The selector as Go's %v of *metav1.LabelSelector prints it (UnmanagedPods' message). */
char *pdb_selector_string(const cJSON *sel);

/* The result of one trySync. */
struct pdb_event {
	const char *type, *reason; /* static strings */
	char *message;
	bool on_pod; /* the involved object is pod `pod` (NotDeleted); else the PDB */
	char *pod;
};
struct pdb_result {
	int32_t current_healthy, desired_healthy, expected_pods;
	cJSON *disrupted; /* name -> RFC 3339 time (object) */
	bool has_recheck;
	kube_time_t recheck_at;
	struct pdb_event events[8];
	size_t n_events;
	char *err; /* trySync failed: its message (failSafe's condition message) */
};
void pdb_result_free(struct pdb_result *r);

/* trySync's computation: the counts, the disrupted-pod map, the Events, the recheck time; on
 * failure r->err (and r->events) only. 0, or -ENOMEM. selector_err: the selector did not
 * convert (getPodsForPdb's error). */
int pdb_try_sync(const cJSON *pdb, const char *selector_err, const struct pdb_pod *pods,
                 size_t n_pods, const struct pdb_lookup *lk, kube_time_t now, struct pdb_result *r);

/* updatePdbStatus: the new status for a successful computation; NULL when the current status
 * is already up to date (no write), else a new PDB object (the caller's, cJSON_Delete) to
 * write with UpdateStatus. *ret_err -ENOMEM on allocation failure. */
cJSON *pdb_status_update(const cJSON *pdb, const struct pdb_result *r, kube_time_t now,
                         int *ret_err);
/* failSafe: disruptionsAllowed 0 and a DisruptionAllowed=False SyncFailed condition with
 * message msg; a new PDB object (cJSON_Delete), NULL on allocation failure. */
cJSON *pdb_fail_safe(const cJSON *pdb, const char *msg, kube_time_t now);

/* apimeta.SetStatusCondition on a conditions array. */
int pdb_set_condition(cJSON *conds, const char *type, const char *status, const char *reason,
                      const char *message, int64_t observed_generation, kube_time_t now);

/* nonTerminatingPodHasStaleDisruptionCondition: true when the pod (not deleting, not in a
 * terminal phase) has DisruptionTarget=True not set by the kubelet; *wait_ns the time left
 * before it is stale (0: now). */
bool pdb_stale_disruption(const struct kube_pod *p, kube_time_t now, int64_t *wait_ns);

/* The write that sets a stale DisruptionTarget condition to False as apipod.UpdatePodCondition
 * does for upstream's UpdateStatus (the condition replaced: status False, reason and message
 * gone, lastTransitionTime now since the status changes from True, observedGeneration the pod's
 * generation as with PodObservedGenerationTracking on), as a strategic merge patch of
 * pods/status (conditions merge by type; null removes a field) carrying the cached pod's
 * resourceVersion, so a pod changed since answers Conflict as upstream's update would. The
 * bootstrap role of disruption-controller allows patch and update of pods/status but no get of
 * pods, and the cache keeps no whole pods, so no read-modify-write. malloc'd, NULL on
 * allocation failure. */
char *pdb_stale_patch(const char *resource_version, int64_t generation, kube_time_t now);
