/* SPDX-License-Identifier: Apache-2.0 */
/* workers/statefulset/ident.h - the statefulset controller's pure pieces (docs/statefulset.md):
 * a pod's parent and ordinal from its name, ControllerRevision data, hash and name byte-identical
 * to upstream (pkg/controller/statefulset getPatch, pkg/controller/history), maxUnavailable. */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest ControllerRevision hash: SafeEncodeString of a uint32's decimal + NUL. */
#define STS_HASH_MAX 11

/* upstream getParentNameAndOrdinal: name matches "(.*)-([0-9]+)$"; the ordinal is the digits
 * as a 32-bit integer (-1 when they overflow, the parent still set), -1 and parent "" when the
 * name does not match. parent (plen bytes) may be NULL; a parent longer than plen is cut. */
int sts_parse_ordinal(const char *name, char *parent, size_t plen);

/* Go's encoding/json.Marshal of the value v as json.Unmarshal into interface{} would have
 * produced it: object keys sorted bytewise, strings escaped as Go escapes them (HTML-safe,
 * \u2028/\u2029, invalid UTF-8 as \ufffd), numbers as float64 ('f' format, shortest digits;
 * 'e' outside [1e-6, 1e21)). Returns a malloc()ed NUL-terminated string in *ret, 0 or -ENOMEM. */
int sts_go_json(const cJSON *v, char **ret, size_t *ret_len);

/* upstream getPatch over the StatefulSet's JSON (spec.template as the apiserver sends it):
 * {"spec":{"template":<template with "$patch":"replace">}} in Go's encoding. -EINVAL when the
 * set has no spec.template object. */
int sts_revision_patch(const cJSON *set, char **ret, size_t *ret_len);

/* history.HashControllerRevision(raw data, probe): FNV-1 (32 bit) over the raw bytes, then the
 * probe's decimal when probe != NULL, through rand.SafeEncodeString. */
void sts_revision_hash(const char *raw, size_t len, const int32_t *probe, char ret[STS_HASH_MAX]);

/* history.ControllerRevisionName: prefix cut to 223 bytes, "-", hash. ret holds 254 bytes. */
void sts_revision_name(const char *prefix, const char *hash, char ret[254]);

/* intstr.GetScaledValueFromIntOrPercent(maxUnavailable or 1, replicas, round down), at least
 * 1 (getStatefulSetMaxUnavailable). v: the JSON value (NULL: absent). -EINVAL: a string that is
 * not a percentage. */
int sts_max_unavailable(const cJSON *v, int replicas, int *ret);
