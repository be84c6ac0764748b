/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/resourceclaim/claim.h: the pure part of kcm's resourceclaim-controller (upstream
 * pkg/controller/resourceclaim, resource.k8s.io/v1): which ResourceClaim a pod's
 * spec.resourceClaims entry names, whether a claim belongs to a pod or is reserved for it, the
 * claim to create from a ResourceClaimTemplate, the pod status to apply, which
 * status.reservedFor entries stay, and the bodies of the claim writes. docs/resourceclaim.md.
 *
 * Everything works on cJSON trees as the apiserver sends them (v1 field names); nothing here
 * does I/O, so the unit tests (tests/test-claim.c) drive every decision directly.
 */
#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/* the annotation a generated claim carries: the pod.spec.resourceClaims[].name it is for */
#define RC_POD_CLAIM_ANNOTATION "resource.kubernetes.io/pod-claim-name"
/* resourceapi.Finalizer: set by the scheduler when it allocates a claim */
#define RC_FINALIZER "resource.kubernetes.io/delete-protection"
/* the field manager of the pod status apply */
#define RC_FIELD_MANAGER "ResourceClaimController"

/* resourceclaim.Name: the claim a pod claim (an element of pod.spec.resourceClaims) stands for.
 * Returns 0 with *ret_name (a string inside pod, or NULL: no claim is needed, the status says
 * so) and *ret_check_owner (the claim was generated: it must be controlled by the pod);
 * -ENOENT: a template claim not yet recorded in pod.status.resourceClaimStatuses (upstream's
 * ErrClaimNotFound; msg gets its text); -EINVAL: neither resourceClaimName nor
 * resourceClaimTemplateName is set (ErrAPIUnsupported). */
int rc_claim_name(const cJSON *pod, const cJSON *pod_claim, const char **ret_name,
                  bool *ret_check_owner, char *msg, size_t n);

/* resourceclaim.IsForPod: 0 when the claim is in the pod's namespace and controlled by the pod
 * (its controller owner reference has the pod's uid); else -EEXIST with upstream's text in msg
 * ("ResourceClaim ns/name was not created for Pod ns/pod (Pod is not owner)", or "... is not
 * in the same namespace as Pod ..."). */
int rc_is_for_pod(const cJSON *pod, const cJSON *claim, char *msg, size_t n);

/* resourceclaim.IsReservedForPod: status.reservedFor has an entry with the pod's uid. */
bool rc_is_reserved_for_pod(const char *pod_uid, const cJSON *claim);
/* resourceclaim.CanBeReserved: true (v1.37 puts no limit on sharing a claim) */
bool rc_can_be_reserved(const cJSON *claim);
/* status.allocation is set */
bool rc_allocated(const cJSON *claim);

/* isPodDone: no container runs and none ever will: phase Succeeded or Failed, or the pod is
 * being deleted and was never scheduled. */
bool rc_pod_done(const char *phase, bool deleting, const char *node_name);
/* podNeedsClaims: false (the claims of the pod can be released) when the pod is gone
 * (deleted), terminal, or being deleted before it was scheduled. */
bool rc_pod_needs_claims(const char *phase, bool deleting, const char *node_name, bool deleted);

/* The generateName of a claim for pod claim `claim` of pod `pod`: "<pod>-<claim>-", or, when
 * that is longer than 57 characters, both names cut proportionally to their lengths and joined
 * with "-" (upstream's rule, so the pod claim's name survives a long pod name). Returns its
 * length, or -ENAMETOOLONG (buf too small). */
int rc_generate_name(const char *pod, const char *claim, char *buf, size_t n);

/* needsAdminAccess: a request of the template's claim spec (spec.spec.devices.requests[])
 * asks for exactly.adminAccess (subrequests of firstAvailable have none). */
bool rc_needs_admin_access(const cJSON *tmpl);
/* the same for a claim's spec (the admin_access metric label) */
bool rc_spec_admin_access(const cJSON *spec);
/* the annotation of the claims the scheduler makes for extended resources */
#define RC_EXTENDED_ANNOTATION "resource.kubernetes.io/extended-resource-claim"
/* The labels of the claims gauge (dynamic_resource_allocation_resource_claims) for claim c:
 * l[0] allocated ("true"/"false"), l[1] admin_access, l[2] source: "extended_resource" (the
 * extended-resource annotation is "true"), "resource_claim_template" (a non-empty
 * pod-claim-name annotation), else "". Static strings. */
void rc_claim_metric_labels(const cJSON *c, const char *l[3]);

/* The ResourceClaim to POST for pod claim `pod_claim_name` of pod from template tmpl:
 * generateName (rc_generate_name), the pod as controller owner (no blockOwnerDeletion, as
 * upstream v1.37), the
 * template's labels, its annotations plus RC_POD_CLAIM_ANNOTATION, its spec.spec. Returns 0,
 * -EINVAL (pod without name or uid, template without spec), -ENOMEM. *ret is malloc'd JSON. */
int rc_claim_body(const cJSON *pod, const char *pod_claim_name, const cJSON *tmpl, char **ret);

/* findPodResourceClaim's test for one claim: controlled by a v1 Pod with uid pod_uid and
 * annotated RC_POD_CLAIM_ANNOTATION = pod_claim_name. */
bool rc_claim_generated_for(const cJSON *claim, const char *pod_uid, const char *pod_claim_name);

/* owningPod: the name and uid of the v1 Pod that controls the claim; false if none. */
bool rc_owning_pod(const cJSON *claim, const char **ret_name, const char **ret_uid);

/* The pod status apply (PATCH pods/<name>/status, application/apply-patch+yaml, field manager
 * RC_FIELD_MANAGER, force): status.resourceClaimStatuses = the pod's recorded entries that
 * name a claim, with {names[i], claims[i]} replacing or added, sorted by name. Returns 0,
 * -ENOMEM. */
int rc_status_apply_body(const cJSON *pod, const char *const *names, const char *const *claims,
                         size_t n, char **ret);

/* What syncClaim knows about the pod of a status.reservedFor entry. */
enum rc_pod_state {
	RC_POD_CACHED,  /* in the cache: uid, phase, deleting, node_name tell the rest */
	RC_POD_DELETED, /* known deleted (not in the cache and the apiserver says NotFound) */
};
/* Looks up the pod `name` of namespace ns for an entry: 0 with *ret filled, or -errno (the
 * sync fails and is retried). uid/phase/node_name must stay valid until the next call. */
struct rc_pod_info {
	enum rc_pod_state state;
	const char *uid, *phase, *node_name;
	bool deleting;
};
typedef int (*rc_pod_lookup_fn)(const char *ns, const char *name, struct rc_pod_info *ret,
                                void *userdata);

/* syncClaim's filter of status.reservedFor: an entry for a pod (apiGroup "" and resource
 * "pods") stays unless its pod is gone, was replaced (another uid) or is done (rc_pod_done);
 * an entry for another kind of consumer stays. Returns the number of entries kept (0..n) with
 * *ret_valid a new array of them (the caller's), or -errno: the lookup's error, -ENOMEM. */
int rc_valid_reservations(const cJSON *claim, rc_pod_lookup_fn fn, void *userdata,
                          cJSON **ret_valid);

/* The claim (as PUT to .../status) with status.reservedFor = valid (taken over), and, when
 * valid is empty and the claim has RC_FINALIZER, without status.allocation (deallocated).
 * Returns 0, -EINVAL, -ENOMEM. */
int rc_status_update_body(const cJSON *claim, cJSON *valid, char **ret);
/* The claim without status.allocation (a deleted, unreserved claim that kept one). */
int rc_deallocate_body(const cJSON *claim, char **ret);
/* The claim (as PUT) without RC_FINALIZER. -ENOENT when it has none. */
int rc_remove_finalizer_body(const cJSON *claim, char **ret);
bool rc_has_finalizer(const cJSON *claim);
