/* SPDX-License-Identifier: Apache-2.0 */
/* kube/encode.h - request bodies for what controllers write.
 *
 * Every function returns 0 and a malloc'd NUL-terminated JSON string in *ret (free()), or a
 * negative errno: -EINVAL for arguments a request could not succeed with (missing uid, no labels
 * on a pod, an invalid controllerRef), -EBADMSG/-EPROTO for a template that is not a JSON object,
 * -ENOMEM. Patch bodies reproduce upstream's bytes (key order included) so that wire captures
 * and apiserver behaviour match kube-controller-manager's.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "kube/model.h"

/* Pod for a ReplicaSet replica (GetPodFromTemplate): generateName "<owner_name>-" (the bare
 * name if the dashed prefix would exceed 253 characters), labels, annotations and finalizers
 * copied from the template's metadata, the controller ownerReference, spec copied verbatim.
 * -EINVAL when the pod would have no labels ("unable to create pods, no labels") or the
 * controllerRef lacks apiVersion/kind/name/uid or controller/blockOwnerDeletion true. */
int kube_encode_pod_from_template(const char *template_json, size_t len, const char *owner_name,
                                  const struct kube_owner_ref *controller_ref, char **ret);
/* The same pod from the template's parts (struct kube_template_parts: JSON text spans found
 * when the ReplicaSet was decoded or stored), without parsing the template: the spans are
 * copied in verbatim. Same result as kube_encode_pod_from_template on the template the parts
 * come from (up to the JSON formatting of the copied parts), same errors (-EPROTO: parts not
 * found, the template was not an object). */
int kube_encode_pod_from_template_parts(const struct kube_template_parts *parts,
                                        const char *owner_name, const struct kube_owner_ref *ref,
                                        char **ret);

/* Strategic-merge patch adopting an object:
 * {"metadata":{"ownerReferences":[{apiVersion,kind,name,uid,"controller":true,
 *  "blockOwnerDeletion":true}],"uid":"<dependent uid>"}} */
int kube_encode_adopt_patch(const struct kube_owner_ref *owner, const char *dependent_uid,
                            char **ret);

/* Strategic-merge patch deleting owner refs by uid (RS release, GC orphaning/dangling refs):
 * {"metadata":{"uid":"<dependent uid>","ownerReferences":[{"$patch":"delete","uid":"<u>"},...]}} */
int kube_encode_release_patch(const char *dependent_uid, const char *const *owner_uids, size_t n,
                              char **ret);

/* Strategic-merge patch setting blockOwnerDeletion=false on the given refs (GC cycle breaker):
 * {"metadata":{"uid":"<uid>","ownerReferences":[<each ref in full, blockOwnerDeletion:false>]}} */
int kube_encode_unblock_patch(const char *dependent_uid, const struct kube_owner_ref *refs,
                              size_t n, char **ret);

/* JSON merge patches carrying resourceVersion as an optimistic lock (GC):
 * {"metadata":{"resourceVersion":"<rv>","finalizers":[...]}}  (null when n == 0)
 * {"metadata":{"resourceVersion":"<rv>","ownerReferences":[...]}} (null when n == 0) */
int kube_encode_finalizers_merge_patch(const char *rv, const char *const *finalizers, size_t n,
                                       char **ret);
int kube_encode_owner_refs_merge_patch(const char *rv, const struct kube_owner_ref *refs, size_t n,
                                       char **ret);

/* ReplicaSet status. Two forms:
 *  - kube_encode_status_put(): the object as last read (raw JSON) with its "status" replaced by
 *    status_json; the body of PUT .../status, exactly what upstream sends (resourceVersion comes
 *    from the object).
 *  - kube_encode_rs_status_merge_patch(): {"metadata":{"resourceVersion":rv},"status":{...}}
 *    for PATCH .../status with application/merge-patch+json when only the compact record is at
 *    hand: same optimistic-lock semantics (409 on a stale rv), conditions replaced as a whole,
 *    terminatingReplicas written as null when absent. */
struct kube_rs_status {
	int32_t replicas, fully_labeled_replicas, ready_replicas, available_replicas;
	int32_t terminating_replicas;
	bool has_terminating_replicas;
	int64_t observed_generation;
	size_t n_conditions;
	const struct kube_condition *conditions;
};
int kube_encode_rs_status_json(const struct kube_rs_status *st, char **ret); /* the status object */
int kube_encode_status_put(const char *object_json, size_t len, const char *status_json,
                           char **ret);
int kube_encode_rs_status_merge_patch(const char *rv, const struct kube_rs_status *st, char **ret);

/* coordination.k8s.io/v1 Lease, full object (PUT when rv != NULL, POST body when rv == NULL).
 * The spec is rebuilt whole as client-go's LeaseLock does: holderIdentity, leaseDurationSeconds,
 * acquireTime, renewTime (MicroTime, null when 0), leaseTransitions always; strategy and
 * preferredHolder only when non-NULL and non-empty. */
struct kube_lease_spec {
	const char *holder_identity;
	int32_t lease_duration_seconds;
	kube_time_t acquire_time, renew_time;
	int32_t lease_transitions;
	const char *strategy, *preferred_holder;
};
int kube_encode_lease(const char *ns, const char *name, const char *rv,
                      const struct kube_lease_spec *spec, char **ret);

/* core/v1 Event as client-go's recorder writes it: name "<involved name>.<hex ns time>",
 * first/lastTimestamp = now, count 1, source.component and reportingComponent = component. */
struct kube_event {
	const char *ns; /* namespace of the involved object ("default" when NULL/empty) */
	const char *kind, *api_version, *name, *uid, *resource_version; /* involvedObject */
	const char *type;                                               /* "Normal" / "Warning" */
	const char *reason;
	const char *message;
	const char *component; /* e.g. "replicaset-controller" */
	const char *host;      /* source.host / reportingInstance, may be NULL */
	kube_time_t now;
	/* optional, for a correlated (counted / aggregated) event; zero values keep the defaults */
	const char *event_name; /* metadata.name instead of the generated one */
	int32_t count;          /* > 1: count */
	kube_time_t first;      /* != 0: firstTimestamp (lastTimestamp stays now) */
	bool no_reporting;      /* reportingComponent/Instance "" (client-go's aggregate event) */
};
int kube_encode_event(const struct kube_event *ev, char **ret);
