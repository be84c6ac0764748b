/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/garbagecollector/absent-cache.c: LRU of absent owner identities (see absent-cache.h).
 *
 * A chained hash table over the five identity strings joined by NUL bytes, plus a doubly
 * linked recency list. The table has a fixed power-of-two bucket count >= 2 * max, so chains
 * stay short without rehashing.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "workers/garbagecollector/absent-cache.h"

struct entry {
	struct entry *next_hash;
	struct entry *prev, *next; /* recency: head = most recent */
	uint64_t hash;
	size_t key_len;
	char key[]; /* the five strings, each NUL-terminated */
};

struct gc_absent_cache {
	size_t max, len, n_buckets;
	struct entry **buckets;
	struct entry *head, *tail;
};

static size_t key_build(const struct gc_ref *r, char *out)
{
	const char *f[5] = {gc_s(r->api_version), gc_s(r->kind), gc_s(r->name), gc_s(r->uid),
	                    gc_s(r->ns)};
	size_t n = 0;
	for (int i = 0; i < 5; i++) {
		size_t l = strlen(f[i]) + 1;
		if (out)
			memcpy(out + n, f[i], l);
		n += l;
	}
	return n;
}

static uint64_t fnv1a(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= 1099511628211ull;
	}
	return h;
}

int gc_absent_cache_new(size_t max, struct gc_absent_cache **ret)
{
	if (max == 0 || !ret)
		return -EINVAL;
	struct gc_absent_cache *c = calloc(1, sizeof *c);
	if (!c)
		return -ENOMEM;
	c->max = max;
	c->n_buckets = 16;
	while (c->n_buckets < 2 * max)
		c->n_buckets <<= 1;
	c->buckets = calloc(c->n_buckets, sizeof *c->buckets);
	if (!c->buckets) {
		free(c);
		return -ENOMEM;
	}
	*ret = c;
	return 0;
}

void gc_absent_cache_free(struct gc_absent_cache *c)
{
	if (!c)
		return;
	for (struct entry *e = c->head, *n; e; e = n) {
		n = e->next;
		free(e);
	}
	free(c->buckets);
	free(c);
}

static void unlink_lru(struct gc_absent_cache *c, struct entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		c->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		c->tail = e->prev;
	e->prev = e->next = NULL;
}

static void push_front(struct gc_absent_cache *c, struct entry *e)
{
	e->prev = NULL;
	e->next = c->head;
	if (c->head)
		c->head->prev = e;
	c->head = e;
	if (!c->tail)
		c->tail = e;
}

static struct entry *find(struct gc_absent_cache *c, const char *key, size_t len, uint64_t h)
{
	for (struct entry *e = c->buckets[h & (c->n_buckets - 1)]; e; e = e->next_hash)
		if (e->hash == h && e->key_len == len && memcmp(e->key, key, len) == 0)
			return e;
	return NULL;
}

static void unlink_hash(struct gc_absent_cache *c, struct entry *e)
{
	struct entry **pp = &c->buckets[e->hash & (c->n_buckets - 1)];
	while (*pp != e)
		pp = &(*pp)->next_hash;
	*pp = e->next_hash;
}

int gc_absent_cache_add(struct gc_absent_cache *c, const struct gc_ref *r)
{
	size_t len = key_build(r, NULL);
	struct entry *e = malloc(sizeof *e + len);
	if (!e)
		return -ENOMEM;
	key_build(r, e->key);
	e->key_len = len;
	e->hash = fnv1a(e->key, len);
	struct entry *old = find(c, e->key, len, e->hash);
	if (old) {
		free(e);
		unlink_lru(c, old);
		push_front(c, old);
		return 0;
	}
	e->next_hash = c->buckets[e->hash & (c->n_buckets - 1)];
	c->buckets[e->hash & (c->n_buckets - 1)] = e;
	push_front(c, e);
	if (++c->len > c->max) {
		struct entry *victim = c->tail;
		unlink_lru(c, victim);
		unlink_hash(c, victim);
		free(victim);
		c->len--;
	}
	return 0;
}

bool gc_absent_cache_has(struct gc_absent_cache *c, const struct gc_ref *r)
{
	char stack[1024];
	size_t len = key_build(r, NULL);
	char *key = len <= sizeof stack ? stack : malloc(len);
	if (!key)
		return false; /* a miss only costs a GET */
	key_build(r, key);
	struct entry *e = find(c, key, len, fnv1a(key, len));
	if (key != stack)
		free(key);
	if (!e)
		return false;
	unlink_lru(c, e);
	push_front(c, e);
	return true;
}

size_t gc_absent_cache_len(const struct gc_absent_cache *c)
{
	return c->len;
}
