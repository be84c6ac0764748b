/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/svgc/svgc.h: the pure decisions of kcm's storageversion-garbage-collector-controller
 * (upstream pkg/controller/storageversiongc, v1.37) and the bodies of its writes. No I/O:
 * plugin.c reads the cache and the apiserver and calls these. docs/storageversiongc.md.
 *
 * Design note.
 *   A StorageVersion (internal.apiserver.k8s.io/v1alpha1, cluster-scoped) lists, in
 *   status.storageVersions, one entry per kube-apiserver (apiServerID) with the version it
 *   encodes the resource in. Each kube-apiserver holds an identity Lease in kube-system, named by
 *   its ID and labelled apiserver.kubernetes.io/identity=kube-apiserver. The controller removes
 *   the entries of apiservers whose identity Lease is gone: on a Lease's deletion (every
 *   StorageVersion, listed live), and on a StorageVersion added or updated with an entry whose
 *   Lease is not in the cache (checked live again in the sync). A StorageVersion left with no
 *   entry is deleted; otherwise its status is written (Update of /status, the object's
 *   resourceVersion making a stale copy fail with a Conflict, retried by the queue) with
 *   status.commonEncodingVersion and the AllEncodingVersionsEqual condition recomputed as the
 *   apiserver's storageversion.SetCommonEncodingVersion does.
 *   Objects are handled as cJSON trees: every field the controller does not own passes through
 *   the write unchanged (decodableVersions, servedVersions, other conditions).
 */
#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#define SVGC_IDENTITY_LABEL "apiserver.kubernetes.io/identity"
#define SVGC_KUBE_APISERVER "kube-apiserver"
#define SVGC_LEASE_NS       "kube-system"
#define SVGC_CONDITION      "AllEncodingVersionsEqual"

/* Whether a Lease's JSON is a kube-apiserver identity Lease: namespace kube-system (when
 * check_ns) and the label apiserver.kubernetes.io/identity=kube-apiserver. */
bool svgc_is_identity_lease(const cJSON *lease, bool check_ns);

/* The i-th entry's apiServerID of a StorageVersion's JSON, or NULL past the end (an entry
 * without a string apiServerID reads as ""). */
const char *svgc_entry_id(const cJSON *sv, size_t i);

/* Removes from status.storageVersions every entry for which drop(id, ud) is true. Returns how
 * many were removed (0: nothing changed); *ret_left gets how many are left. */
size_t svgc_drop_entries(cJSON *sv, bool (*drop)(const char *id, void *ud), void *ud,
                         size_t *ret_left);

/* SetCommonEncodingVersion: status.commonEncodingVersion = the encodingVersion every entry has,
 * or removed when they differ or there is none; the AllEncodingVersionsEqual condition set
 * True/CommonEncodingVersionSet or False/CommonEncodingVersionUnset with observedGeneration =
 * metadata.generation. Its lastTransitionTime is `now` (RFC 3339) when the condition is new,
 * its status changed, or the common version changed from one set value to another; otherwise
 * the old one is kept. Returns 0, -ENOMEM. */
int svgc_set_common_encoding(cJSON *sv, const char *now);
