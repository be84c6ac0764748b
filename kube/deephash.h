/* SPDX-License-Identifier: Apache-2.0 */
/* kube/deephash.h - kcm's pod-template hash, byte-identical to upstream's.
 *
 * Upstream (pkg/controller.ComputeHash) hashes a PodTemplateSpec with FNV-1a (32 bit) over the
 * text that go-spew's "%#v" formatter prints for the decoded Go struct (k8s.io/utils/dump.ForHash:
 * types before values, struct fields in declaration order with their Go names, nil pointers as
 * "(*T)<nil>", nil and empty slices and maps told apart, map keys sorted, unexported fields of
 * resource.Quantity included), then the collision count as 8 little-endian bytes, and writes the
 * decimal of the sum through rand.SafeEncodeString. The same printer gives ControllerRevision
 * hashes later (another root type in the generated tables).
 *
 * This module prints that text from the object's JSON as the apiserver sends it, walking tables
 * generated from the Go types (kube/deephash-schema.c); it keeps no state and uses no shared
 * memory. What it cannot reproduce it refuses with -EOPNOTSUPP rather than hash differently:
 * a template whose metadata carries a set creationTimestamp or managedFields (the printed Go
 * value would depend on kcm's time zone or on raw bytes the JSON does not keep).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* The longest pod-template-hash: SafeEncodeString of a uint32's decimal (10 bytes) + NUL. */
#define KUBE_POD_TEMPLATE_HASH_MAX 11

/* Writes ComputeHash(template, collision_count) into ret (NUL-terminated); collision_count may
 * be NULL (the Deployment's status.collisionCount is unset). json is a PodTemplateSpec object
 * (a Deployment's spec.template). Returns 0, or
 *   -EBADMSG     not JSON
 *   -EPROTO      JSON that Go would not decode into a PodTemplateSpec (a string where an object
 *                belongs, a fraction in an integer, a quantity that does not parse)
 *   -EOPNOTSUPP  a value whose Go form cannot be rebuilt from JSON (see above)
 *   -E2BIG       nesting deeper than the JSON scanner allows
 *   -ENOMEM
 */
int kube_pod_template_hash(const char *json, size_t len, const int32_t *collision_count,
                           char ret[KUBE_POD_TEMPLATE_HASH_MAX]);

/* The FNV-1a 32-bit sum of the printed text alone (no collision count). Same errors. */
int kube_deephash_fnv32a(const char *json, size_t len, uint32_t *ret);

/* The printed text itself, malloc()ed and NUL-terminated in *ret (for tests and debugging;
 * the hash functions never build it). Same errors. */
int kube_deephash_dump(const char *json, size_t len, char **ret, size_t *ret_len);

/* The hash string of an FNV-1a sum plus collision count, as ComputeHash finishes it (exposed for
 * the tests of the encoding). */
void kube_pod_template_hash_finish(uint32_t fnv_state, const int32_t *collision_count,
                                   char ret[KUBE_POD_TEMPLATE_HASH_MAX]);

/* Upstream's deploymentutil.EqualIgnoreHash: whether two PodTemplateSpecs (JSON) are
 * semantically equal (apiequality.Semantic.DeepEqual: nil and empty lists and maps alike,
 * quantities by value) once the pod-template-hash label is removed from both. Returns 1 equal,
 * 0 different, or an error as above. */
int kube_pod_template_equal_ignore_hash(const char *a, size_t alen, const char *b, size_t blen);
