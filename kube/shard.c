/* SPDX-License-Identifier: Apache-2.0 */
/* kube/shard.c: namespace ranges and their owners (see shard.h). */
#include "kube/shard.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

uint64_t kube_fnv1a64(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

uint32_t kube_fnv1a32(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint32_t h = 0x811c9dc5u;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x01000193u;
	}
	return h;
}

unsigned kube_shard_range_of_ns(const char *ns, unsigned nranges)
{
	if (!ns || !ns[0] || nranges == 0)
		return 0;
	return kube_fnv1a32(ns, strlen(ns)) % nranges;
}

/* The 64-bit finalizer of MurmurHash3 (fmix64): FNV-1a's last bytes reach only its low bits,
 * so without it names that differ only at their end would order the same for every range. */
static uint64_t mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

uint64_t kube_shard_weight(const char *member, unsigned range)
{
	char buf[320];
	int n = snprintf(buf, sizeof(buf), "%s\n%u", member ? member : "", range);

	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(buf)) /* a longer name: hash it whole, then the index */
		return mix64(kube_fnv1a64(member, strlen(member)) ^ (uint64_t)range);
	return mix64(kube_fnv1a64(buf, (size_t)n));
}

int kube_shard_owner(const char *const *members, size_t n, unsigned range)
{
	int best = -1;
	uint64_t bw = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t w = kube_shard_weight(members[i], range);
		if (best < 0 || w > bw || (w == bw && strcmp(members[i], members[best]) < 0)) {
			best = (int)i;
			bw = w;
		}
	}
	return best;
}

static int put(char *buf, size_t len, const char *s, size_t n)
{
	if (n >= len) {
		if (len)
			buf[0] = 0;
		return -ENAMETOOLONG;
	}
	memcpy(buf, s, n);
	buf[n] = 0;
	return 0;
}

/* The next path segment at *p (no leading '/'), its length in *n; advances past it. */
static const char *segment(const char **p, size_t *n)
{
	const char *s = *p;

	while (*s == '/')
		s++;
	if (!*s || *s == '?' || *s == '#')
		return NULL;
	const char *e = s;
	while (*e && *e != '/' && *e != '?' && *e != '#')
		e++;
	*n = (size_t)(e - s);
	*p = e;
	return s;
}

static bool seg_is(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

int kube_shard_ns_of_url(const char *url, char *buf, size_t len)
{
	const char *p, *s;
	size_t n;

	if (!buf || !len)
		return -EINVAL;
	buf[0] = 0;
	if (!url)
		return 0;
	p = strstr(url, "://");
	if (p) { /* skip the authority */
		p += 3;
		while (*p && *p != '/')
			p++;
	} else {
		p = url;
	}
	/* find the "api" or "apis" segment (a server URL may carry a path prefix) */
	for (;;) {
		s = segment(&p, &n);
		if (!s)
			return 0;
		if (seg_is(s, n, "api")) {
			if (!segment(&p, &n)) /* version */
				return 0;
			break;
		}
		if (seg_is(s, n, "apis")) {
			if (!segment(&p, &n) || !segment(&p, &n)) /* group, version */
				return 0;
			break;
		}
	}
	s = segment(&p, &n);
	if (!s || !seg_is(s, n, "namespaces"))
		return 0; /* cluster-scoped */
	s = segment(&p, &n);
	if (!s)
		return 0; /* the namespaces collection (creating a Namespace) */
	return put(buf, len, s, n);
}

int kube_shard_ns_of_key(const char *key, char *buf, size_t len)
{
	const char *sl = key ? strchr(key, '/') : NULL;
	const char *ns = key;

	if (!buf || !len)
		return -EINVAL;
	buf[0] = 0;
	if (!sl)
		return 0;
	for (const char *p = key; p < sl; p++) /* "<tag>:ns/name": the tag ends at the last ':' */
		if (*p == ':')
			ns = p + 1;
	return put(buf, len, ns, (size_t)(sl - ns));
}

unsigned kube_shard_key_range(enum kube_shard_keys keys, const char *key, unsigned nranges)
{
	char ns[256];

	if (nranges == 0 || !key)
		return 0;
	switch (keys) {
	case KUBE_SHARD_KEYS_NS_NAME:
		if (kube_shard_ns_of_key(key, ns, sizeof(ns)) < 0)
			return 0;
		return kube_shard_range_of_ns(ns, nranges);
	case KUBE_SHARD_KEYS_NAMESPACE:
		if (strlen(key) >= sizeof(ns))
			return 0;
		return kube_shard_range_of_ns(key, nranges);
	case KUBE_SHARD_KEYS_NONE:
	default:
		return 0;
	}
}
