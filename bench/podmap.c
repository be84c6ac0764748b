/* SPDX-License-Identifier: Apache-2.0 */
/* bench/podmap.c: open addressing, linear probing, tombstones (see podmap.h). */
#include <stdlib.h>
#include <string.h>

#include "bench/podmap.h"

static char tomb;
#define TOMB (&tomb)

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static int grow(struct bench_podmap *m)
{
	size_t cap = 1024; /* at most 1/4 full after a rehash (tombstones dropped) */
	while (cap < (m->live + 1) * 4)
		cap *= 2;
	struct bench_pod *s = calloc(cap, sizeof(*s)), *old = m->slots;
	size_t oldcap = m->cap;

	if (!s)
		return -1;
	m->slots = s;
	m->cap = cap;
	m->used = m->live = 0;
	for (size_t i = 0; i < oldcap; i++) {
		if (!old[i].key || old[i].key == TOMB)
			continue;
		size_t j = hash(old[i].key) & (cap - 1);
		while (s[j].key)
			j = (j + 1) & (cap - 1);
		s[j] = old[i];
		m->used++;
		m->live++;
	}
	free(old);
	return 0;
}

struct bench_pod *bench_podmap_get(struct bench_podmap *m, const char *key)
{
	if (!m->cap)
		return NULL;
	for (size_t j = hash(key) & (m->cap - 1);; j = (j + 1) & (m->cap - 1)) {
		struct bench_pod *p = &m->slots[j];
		if (!p->key)
			return NULL;
		if (p->key != TOMB && !strcmp(p->key, key))
			return p;
	}
}

struct bench_pod *bench_podmap_put(struct bench_podmap *m, const char *key, bool *added)
{
	struct bench_pod *p = bench_podmap_get(m, key);

	*added = false;
	if (p)
		return p;
	if ((m->used + 1) * 10 >= m->cap * 7 && grow(m) < 0)
		return NULL;
	char *k = strdup(key);
	if (!k)
		return NULL;
	size_t j = hash(key) & (m->cap - 1);
	while (m->slots[j].key && m->slots[j].key != TOMB)
		j = (j + 1) & (m->cap - 1);
	p = &m->slots[j];
	if (!p->key)
		m->used++;
	*p = (struct bench_pod){.key = k};
	m->live++;
	*added = true;
	return p;
}

void bench_podmap_del(struct bench_podmap *m, struct bench_pod *p)
{
	free(p->key);
	p->key = TOMB;
	m->live--;
}

void bench_podmap_clear(struct bench_podmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].key && m->slots[i].key != TOMB)
			free(m->slots[i].key);
	free(m->slots);
	*m = (struct bench_podmap){0};
}
