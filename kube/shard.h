/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * kube/shard.h: the arithmetic of sharding (library `kube`; docs/sharding.md).
 *
 * With --shard-ranges=R (R > 0) the namespaces of the cluster fall into R ranges and each range
 * is owned, through a Lease of its own, by one live kcmd instance at a time. Everything here is
 * pure: no I/O, no clock, the same answer in every process and every instance.
 *
 *   range of a namespace      FNV-1a 32 of its name, mod R. The cluster-scoped "namespace" ""
 *                             is not hashed: it is range 0, the range that does cluster-scoped
 *                             work (and, in this slice, every controller not sharded).
 *   owner of a range          rendezvous (highest random weight) hashing: among the live
 *                             members, the one with the highest weight: FNV-1a 64 of
 *                             "<member>\n<range index in decimal>", then MurmurHash3's
 *                             fmix64 finalizer (FNV alone barely moves its high bits for
 *                             names that differ at the end: without it 3 members named
 *                             kcmd-a/b/c split 64 ranges 54/10/0). A member joining or leaving
 *                             moves only the ranges it wins or held (about R / members).
 */
#include <stddef.h>
#include <stdint.h>

#define KUBE_SHARD_MAX_RANGES 256u /* bounded by the fence page (kube/fence.h) */

uint64_t kube_fnv1a64(const void *data, size_t len);
uint32_t kube_fnv1a32(const void *data, size_t len);

/* The range of namespace ns ("" or NULL: cluster-scoped -> 0); nranges 0 -> 0. */
unsigned kube_shard_range_of_ns(const char *ns, unsigned nranges);
/* The rendezvous weight of member for range i. */
uint64_t kube_shard_weight(const char *member, unsigned range);
/* Index in members[0..n) of the owner of range i, or -1 when n is 0. Ties (equal weights)
 * go to the lexically smallest name, so every instance agrees whatever the list's order. */
int kube_shard_owner(const char *const *members, size_t n, unsigned range);

/* The namespace a request URL (or path) writes into: /api/v1/namespaces/<ns>/... and
 * /apis/<group>/<version>/namespaces/<ns>/... -> <ns>; a Namespace object itself
 * (/api/v1/namespaces/<name>[/status|/finalize]) -> its name; anything else (cluster-scoped,
 * the namespaces collection) -> "". Scheme, host, and a query string are ignored. Writes at
 * most len bytes to buf (NUL included); returns 0, or -ENAMETOOLONG (buf then holds "").
 * A leading path prefix of the server URL (https://host/prefix/api/...) is skipped. */
int kube_shard_ns_of_url(const char *url, char *buf, size_t len);
/* The namespace of a queue key "ns/name" (copy into buf) or "" for a key without '/'. A tag
 * before the namespace, "<tag>:ns/name" (the resource claim controller's "pod:" and "claim:"),
 * is skipped: a namespace is a DNS label, so it has no ':' and the last ':' before the first
 * '/' ends the tag. */
int kube_shard_ns_of_key(const char *key, char *buf, size_t len);

/* How a controller's queue keys name the namespace its writes go to (docs/sharding.md):
 *   KUBE_SHARD_KEYS_NONE       not sharded by namespace: every key is range 0's;
 *   KUBE_SHARD_KEYS_NS_NAME    "ns/name" (or "<tag>:ns/name", kube_shard_ns_of_key); a key
 *                              without '/' is cluster-scoped: range 0;
 *   KUBE_SHARD_KEYS_NAMESPACE  the key is a namespace's name (one key per namespace). */
enum kube_shard_keys {
	KUBE_SHARD_KEYS_NONE = 0,
	KUBE_SHARD_KEYS_NS_NAME,
	KUBE_SHARD_KEYS_NAMESPACE,
};

/* The range of a queue key of a controller whose keys are `keys` (0 without ranges, for
 * KUBE_SHARD_KEYS_NONE, and for a namespace name too long to be one). */
unsigned kube_shard_key_range(enum kube_shard_keys keys, const char *key, unsigned nranges);
