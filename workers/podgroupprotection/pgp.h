/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/podgroupprotection/pgp.h: the pure decisions of kcm's podgroup-protection-controller
 * (upstream pkg/controller/scheduling/podgroupprotection, v1.37) and the body of its one write.
 * No I/O: plugin.c reads the cache and the apiserver and calls these. docs/podgroupprotection.md.
 *
 * Design note.
 *   The finalizer scheduling.k8s.io/podgroup-protection is stamped on every new PodGroup by the
 *   apiserver's PodGroupProtection admission plugin (GenericWorkload on); the controller only
 *   removes it, from a PodGroup being deleted (a deletion candidate: deletionTimestamp set and
 *   the finalizer listed) once no active pod references it. An active pod is one whose
 *   spec.schedulingGroup.podGroupName names the PodGroup (same namespace) and whose phase is
 *   neither Succeeded nor Failed: upstream's activePodSchedulingGroup index, which counts a pod
 *   being deleted, scheduled or not, as active until it is gone or terminal.
 *   PodGroups are cached whole and parsed here (pgp_group). The cache's typed pod record keeps
 *   no spec.schedulingGroup, so the pods are judged from a live LIST of the PodGroup's
 *   namespace (a PodList's JSON), as the PVC protection controller does; and a pod event cannot
 *   tell which PodGroup the pod names: pgp_pod_event says whether upstream's handler would look
 *   at the new pod's or the old pod's group, and the dispatcher then queues every deletion
 *   candidate of the pod's namespace (a superset of upstream's one key; the sync is level
 *   triggered and does nothing for a PodGroup still in use).
 *   The write is an Update (PUT) of the whole cached object with every copy of the finalizer
 *   removed, as upstream's: the resourceVersion it carries makes a stale copy fail with a
 *   Conflict, retried with the queue's rate limit. kcm's bootstrap role
 *   (system:controller:podgroup-protection-controller) grants update, not patch.
 */
#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "kube/model.h"

#define PGP_FINALIZER "scheduling.k8s.io/podgroup-protection"

/* What the decisions read of a PodGroup. Strings point into the parsed JSON (pgp_group_free). */
struct pgp_group {
	cJSON *json; /* owned */
	const char *ns, *name, *uid;
	bool deleting;      /* metadata.deletionTimestamp set */
	bool has_finalizer; /* PGP_FINALIZER is listed */
};

/* Parses a PodGroup. Returns 0, -EINVAL (not a JSON object, or no metadata.name), -ENOMEM. ret is
 * zeroed on failure. */
int pgp_group_parse(const char *json, size_t len, struct pgp_group *ret);
void pgp_group_free(struct pgp_group *g);

/* protectionutil.IsDeletionCandidate: being deleted with the finalizer; the only PodGroups the
 * controller acts on (and the only ones its PodGroup handler queues). */
static inline bool pgp_is_deletion_candidate(const struct pgp_group *g)
{
	return g->deleting && g->has_finalizer;
}

/* isPodTerminated: phase Succeeded or Failed. */
static inline bool pgp_phase_terminated(enum kube_pod_phase p)
{
	return p == KUBE_POD_SUCCEEDED || p == KUBE_POD_FAILED;
}

/* The same on a Pod's JSON (status.phase). */
bool pgp_pod_terminated(const cJSON *pod);
/* spec.schedulingGroup.podGroupName of a Pod's JSON, or NULL (no group, or no name). */
const char *pgp_pod_group_name(const cJSON *pod);
/* The activePodSchedulingGroup index: whether pod (a Pod's JSON) is an active pod of PodGroup
 * ns/name (not terminated, its podGroupName is name, its namespace ns when it carries one). */
bool pgp_pod_active_for(const cJSON *pod, const char *ns, const char *name);
/* hasActivePods: the first of a PodList's items that is an active pod of ns/name, or NULL. */
const cJSON *pgp_first_active_pod(const cJSON *pod_list, const char *ns, const char *name);

/* processPodGroup's decision on a PodGroup and the pods of its namespace (a PodList's JSON). */
enum pgp_action {
	PGP_NOTHING = 0, /* not a deletion candidate */
	PGP_KEEP,        /* a deletion candidate an active pod still references */
	PGP_REMOVE,      /* a deletion candidate no active pod references: remove the finalizer */
};
enum pgp_action pgp_decide(const struct pgp_group *g, const cJSON *pod_list);

/* handlePodChange: for a pod event (old NULL: an add; cur NULL: a delete), which pods' groups
 * upstream queues: PGP_LOOK_NEW when the new pod is terminated, PGP_LOOK_OLD when the pod was
 * deleted or replaced under its name (another uid). 0: none. */
struct pgp_pod_state {
	const char *uid;
	enum kube_pod_phase phase;
};
enum {
	PGP_LOOK_NEW = 1u << 0,
	PGP_LOOK_OLD = 1u << 1,
};
unsigned pgp_pod_event(const struct pgp_pod_state *old, const struct pgp_pod_state *cur);

/* The Update (PUT) body: g's whole object (its resourceVersion included) with every copy of
 * PGP_FINALIZER removed from metadata.finalizers; malloc'd, NUL-terminated. Returns 0,
 * -ENOMEM. */
int pgp_finalizer_remove(const struct pgp_group *g, char **ret);
