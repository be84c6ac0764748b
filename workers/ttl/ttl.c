/* SPDX-License-Identifier: Apache-2.0 */
/* workers/ttl/ttl.c: the ttl-controller's step table and its shared page (ttl.h). */
#include "workers/ttl/ttl.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const struct {
	int size_min, size_max, ttl;
} steps[] = {
        {0, 100, 0}, {90, 500, 15}, {450, 1000, 30}, {900, 2000, 60}, {1800, INT_MAX, 300},
};
#define N_STEPS ((int)(sizeof(steps) / sizeof(steps[0])))

void ttl_node_added(struct ttl_state *s)
{
	s->count++;
	if (s->count > steps[s->step].size_max && s->step + 1 < N_STEPS) {
		s->step++;
		s->desired = steps[s->step].ttl;
	}
}

void ttl_node_deleted(struct ttl_state *s)
{
	s->count--;
	if (s->count < steps[s->step].size_min && s->step > 0) {
		s->step--;
		s->desired = steps[s->step].ttl;
	}
}

static size_t name_hash(const char *s)
{
	size_t h = 1469598103934665603ull; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* the slot of name, or the empty slot where it would go */
static size_t names_find(const struct ttl_names *t, const char *name)
{
	size_t i = name_hash(name) & (t->cap - 1);
	while (t->slot[i] && strcmp(t->slot[i], name))
		i = (i + 1) & (t->cap - 1);
	return i;
}

static int names_grow(struct ttl_names *t)
{
	size_t cap = t->cap ? t->cap * 2 : 64;
	struct ttl_names n = {calloc(cap, sizeof(char *)), cap, t->n};

	if (!n.slot)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slot[i])
			n.slot[names_find(&n, t->slot[i])] = t->slot[i];
	free(t->slot);
	*t = n;
	return 0;
}

int ttl_names_add(struct ttl_names *t, struct ttl_state *s, const char *name)
{
	size_t i;
	char *dup;

	if ((t->n + 1) * 2 > t->cap && names_grow(t) < 0)
		return -ENOMEM;
	i = names_find(t, name);
	if (t->slot[i])
		return 0;
	if (!(dup = strdup(name)))
		return -ENOMEM;
	t->slot[i] = dup;
	t->n++;
	ttl_node_added(s);
	return 1;
}

int ttl_names_del(struct ttl_names *t, struct ttl_state *s, const char *name)
{
	size_t i, j;

	if (!t->cap)
		return 0;
	i = names_find(t, name);
	if (!t->slot[i])
		return 0;
	free(t->slot[i]);
	t->slot[i] = NULL;
	t->n--;
	/* backward-shift deletion: re-place the run after the hole */
	for (j = (i + 1) & (t->cap - 1); t->slot[j]; j = (j + 1) & (t->cap - 1)) {
		char *e = t->slot[j];
		t->slot[j] = NULL;
		t->slot[names_find(t, e)] = e;
	}
	ttl_node_deleted(s);
	return 1;
}

void ttl_names_free(struct ttl_names *t)
{
	for (size_t i = 0; i < t->cap; i++)
		free(t->slot[i]);
	free(t->slot);
	*t = (struct ttl_names){0};
}

struct ttl_state ttl_state_for(int n)
{
	struct ttl_state s = {0};
	for (int i = 0; i < n; i++)
		ttl_node_added(&s);
	return s;
}

bool ttl_parse(const char *v, int64_t *ret)
{
	const char *p = v;
	int64_t x = 0;
	bool neg = false;

	if (!v || !*v)
		return false;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if (!*p)
		return false;
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		if (x > (INT64_MAX - (*p - '0')) / 10)
			return false; /* out of range: Atoi fails */
		x = x * 10 + (*p - '0');
	}
	*ret = neg ? -x : x;
	return true;
}

int ttl_patch_body(char *buf, size_t len, int ttl)
{
	int n = snprintf(buf, len, "{\"metadata\":{\"annotations\":{\"%s\":\"%d\"}}}",
	                 TTL_ANNOTATION, ttl);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : n;
}

int ttl_region_memfd_create(void)
{
	int fd = memfd_create("kcmd-ttl", MFD_CLOEXEC), r;
	struct ttl_region *m;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, sizeof(*m)) < 0 ||
	    (m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		r = -errno;
		close(fd);
		return r;
	}
	m->magic = TTL_REGION_MAGIC;
	munmap(m, sizeof(*m));
	return fd;
}

int ttl_region_attach(int fd, bool writer, struct ttl_region **ret)
{
	off_t size = lseek(fd, 0, SEEK_END);
	struct ttl_region *m;

	if (size < 0)
		return -errno;
	if ((size_t)size < sizeof(*m))
		return -EPROTO;
	m = mmap(NULL, sizeof(*m), writer ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	if (m->magic != TTL_REGION_MAGIC) {
		munmap(m, sizeof(*m));
		return -EPROTO;
	}
	*ret = m;
	return 0;
}

void ttl_region_detach(struct ttl_region *r)
{
	if (r)
		munmap(r, sizeof(*r));
}

void ttl_region_store(struct ttl_region *r, const struct ttl_state *s)
{
	atomic_store_explicit(&r->count, s->count, memory_order_relaxed);
	atomic_store_explicit(&r->step, s->step, memory_order_relaxed);
	/* release: pairs with the acquire load of `desired` in ttl_region_load */
	atomic_store_explicit(&r->desired, s->desired, memory_order_release);
}

struct ttl_state ttl_region_load(const struct ttl_region *r)
{
	struct ttl_state s;
	/* acquire: pairs with the release store in ttl_region_store */
	s.desired = atomic_load_explicit(&((struct ttl_region *)r)->desired, memory_order_acquire);
	s.count = atomic_load_explicit(&((struct ttl_region *)r)->count, memory_order_relaxed);
	s.step = atomic_load_explicit(&((struct ttl_region *)r)->step, memory_order_relaxed);
	return s;
}
