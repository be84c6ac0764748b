/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/garbagecollector/identity.h: who an object is, for the garbage collector.
 *
 * Design note.
 *   Upstream's GC names every graph node by an "objectReference": the four coordinates of an
 *   ownerReference (apiVersion, kind, name, uid) plus a namespace (graph.go). Two identities
 *   are the same only when all five strings are equal. An ownerReference "matches" an identity
 *   when its four coordinates are equal (ownerReferenceMatchesCoordinates); the namespace is
 *   never part of a reference, so namespace rules are separate checks (graph_builder.go
 *   addDependentToOwners / partitionDependents, garbagecollector.go isDangling):
 *     - a namespaced dependent may have owners in its own namespace or cluster-scoped owners;
 *     - a cluster-scoped dependent may only have cluster-scoped owners (a namespaced owner
 *       kind is unresolvable and never retried).
 *
 *   This file holds the pure pieces: equality, matching, the ordering used to pick an
 *   alternate identity, the text form used in logs and in the OwnerRefInvalidNamespace event.
 *   Strings may be NULL anywhere a Go string would be empty; NULL and "" compare equal.
 */
#include <stdbool.h>
#include <stddef.h>

#include "kube/model.h"

#define GC_FINALIZER_ORPHAN     "orphan"
#define GC_FINALIZER_FOREGROUND "foregroundDeletion"
#define GC_POLICY_ORPHAN        "Orphan"
#define GC_POLICY_BACKGROUND    "Background"
#define GC_POLICY_FOREGROUND    "Foreground"
#define GC_EVENT_COMPONENT      "garbage-collector-controller"
#define GC_REASON_INVALID_NS    "OwnerRefInvalidNamespace"

/* objectReference: coordinates + namespace ("" = cluster-scoped). */
struct gc_ref {
	const char *api_version;
	const char *kind;
	const char *name;
	const char *uid;
	const char *ns;
};

/* NULL-safe string equality ("" == NULL). */
bool gc_str_eq(const char *a, const char *b);
/* NULL as "". */
static inline const char *gc_s(const char *s)
{
	return s ? s : "";
}

/* All five fields equal (Go's == on objectReference). */
bool gc_ref_equal(const struct gc_ref *a, const struct gc_ref *b);
/* The four coordinates of `ref` equal those of `id` (ownerReferenceMatchesCoordinates). */
bool gc_ref_matches(const struct kube_owner_ref *ref, const struct gc_ref *id);
/* Coordinates of two identities equal (namespace ignored). */
bool gc_ref_same_coords(const struct gc_ref *a, const struct gc_ref *b);
/* The identity of the owner `ref` seen from a dependent in namespace ns (coordinates + ns). */
struct gc_ref gc_ref_from_owner(const struct kube_owner_ref *ref, const char *ns);

/* referenceLessThan: kind, then apiVersion, namespace, name, uid (bytewise). <0, 0, >0. */
int gc_ref_cmp(const struct gc_ref *a, const struct gc_ref *b);

/* Deep copy into *dst (one allocation); free with gc_ref_clear. 0 or -ENOMEM. */
int gc_ref_copy(struct gc_ref *dst, const struct gc_ref *src);
void gc_ref_clear(struct gc_ref *r);

/* "[<apiVersion>/<kind>, namespace: <ns>, name: <name>, uid: <uid>]" (objectReference.String).
 * Truncates to len; returns buf. */
const char *gc_ref_format(const struct gc_ref *r, char *buf, size_t len);

/* The message of the OwnerRefInvalidNamespace warning event recorded on a dependent
 * (reportInvalidNamespaceOwnerRef): the coordinates come from the dependent's own ownerRef
 * with uid owner_uid, the namespace from the dependent:
 *   ownerRef [v1/Pod, namespace: ns1, name: x, uid: u] does not exist in namespace "ns1"
 * Returns 0, or -ENOENT when the dependent has no ref with that uid (no event then),
 * -ENOBUFS when buf is too small. The Go %q quoting is reproduced for printable ASCII;
 * other bytes are escaped as Go does for invalid or non-printable runes (\xNN, \n, ...). */
int gc_invalid_ns_message(const struct gc_ref *dependent, const struct kube_owner_ref *owners,
                          size_t n_owners, const char *owner_uid, char *buf, size_t len);

/* Finalizer helpers over a decoded object. */
bool gc_has_finalizer(const struct kube_object_meta *m, const char *f);

/* Validity of a reference from a dependent to an owner whose scope is known (spec §1.4):
 * GC_REF_OK, or GC_REF_CLUSTER_CHILD_NAMESPACED_OWNER (cluster-scoped dependent, namespaced
 * owner kind: unresolvable, never retried). A namespaced owner in another namespace cannot be
 * expressed by a reference (owners are always looked up in the dependent's namespace), which
 * is why it shows up as an absent owner instead. */
enum gc_ref_validity {
	GC_REF_OK = 0,
	GC_REF_CLUSTER_CHILD_NAMESPACED_OWNER,
};
enum gc_ref_validity gc_ref_validity(const char *dependent_ns, bool owner_namespaced);
/* The namespace an owner is looked up in (resourceDefaultNamespace): the dependent's for a
 * namespaced owner kind, "" for a cluster-scoped one. */
const char *gc_owner_lookup_ns(bool owner_namespaced, const char *dependent_ns);
