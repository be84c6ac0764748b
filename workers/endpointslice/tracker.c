/* SPDX-License-Identifier: Apache-2.0 */
/* workers/endpointslice/tracker.c: the slice and trigger-time trackers (tracker.h). */
#include "workers/endpointslice/tracker.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define DELETION_EXPECTED (-1)

struct gen {
	char *uid, *name;
	int64_t gen;
};

struct ptime {
	char *name;
	long long t;
};

struct svc {
	char *key;
	struct gen *gens;
	size_t n_gens;
	bool has_gens;
	bool has_times;
	struct ptime *times;
	size_t n_times;
	long long svc_time;
};

struct eps_tracker {
	struct svc *v;
	size_t n, cap;
};

int eps_tracker_new(struct eps_tracker **ret)
{
	return (*ret = calloc(1, sizeof(**ret))) ? 0 : -ENOMEM;
}

static void free_times(struct svc *s)
{
	for (size_t i = 0; i < s->n_times; i++)
		free(s->times[i].name);
	free(s->times);
	s->times = NULL;
	s->n_times = 0;
}

static void free_svc(struct svc *s)
{
	for (size_t i = 0; i < s->n_gens; i++) {
		free(s->gens[i].uid);
		free(s->gens[i].name);
	}
	free(s->gens);
	free_times(s);
	free(s->key);
}

void eps_tracker_free(struct eps_tracker *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		free_svc(&t->v[i]);
	free(t->v);
	free(t);
}

static struct svc *find(struct eps_tracker *t, const char *key, bool create)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->v[i].key, key))
			return &t->v[i];
	if (!create)
		return NULL;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		struct svc *v = realloc(t->v, cap * sizeof(*v));
		if (!v)
			return NULL;
		t->v = v;
		t->cap = cap;
	}
	struct svc *s = &t->v[t->n];
	*s = (struct svc){.key = strdup(key)};
	if (!s->key)
		return NULL;
	t->n++;
	return s;
}

static int set_gen(struct eps_tracker *t, const char *key, const char *name, const char *uid,
                   int64_t gen)
{
	struct svc *s = find(t, key, true);
	if (!s)
		return -ENOMEM;
	s->has_gens = true;
	for (size_t i = 0; i < s->n_gens; i++)
		if (!strcmp(s->gens[i].uid, uid)) {
			s->gens[i].gen = gen;
			return 0;
		}
	struct gen *g = realloc(s->gens, (s->n_gens + 1) * sizeof(*g));
	if (!g)
		return -ENOMEM;
	s->gens = g;
	if (!(g[s->n_gens].uid = strdup(uid)))
		return -ENOMEM;
	if (!(g[s->n_gens].name = strdup(name))) {
		free(g[s->n_gens].uid);
		return -ENOMEM;
	}
	g[s->n_gens++].gen = gen;
	return 0;
}

int eps_tracker_update(struct eps_tracker *t, const char *key, const char *name, const char *uid,
                       int64_t gen)
{
	return set_gen(t, key, name, uid, gen);
}

int eps_tracker_expect_deletion(struct eps_tracker *t, const char *key, const char *name,
                                const char *uid)
{
	return set_gen(t, key, name, uid, DELETION_EXPECTED);
}

bool eps_tracker_stale(struct eps_tracker *t, const char *key, const char *const *uids,
                       const int64_t *gens, size_t n, eps_gone_fn gone, void *gone_ud)
{
	struct svc *s = find(t, key, false);
	bool stale = false;

	if (!s || !s->has_gens)
		return false;
	for (size_t i = 0; i < n && !stale; i++)
		for (size_t j = 0; j < s->n_gens; j++)
			if (!strcmp(s->gens[j].uid, uids[i]) &&
			    (s->gens[j].gen == DELETION_EXPECTED || s->gens[j].gen > gens[i]))
				stale = true;
	for (size_t j = 0; j < s->n_gens;) {
		bool present = false;
		for (size_t i = 0; i < n && !present; i++)
			present = !strcmp(s->gens[j].uid, uids[i]);
		bool drop = !present && (s->gens[j].gen == DELETION_EXPECTED ||
		                         (gone && gone(gone_ud, s->gens[j].name, s->gens[j].uid)));
		if (!present && !drop)
			stale = true;
		if (drop) {
			/* the deletion was observed (upstream's HandleDeletion) */
			free(s->gens[j].uid);
			free(s->gens[j].name);
			s->gens[j] = s->gens[--s->n_gens];
			continue;
		}
		j++;
	}
	return stale;
}

void eps_tracker_delete_service(struct eps_tracker *t, const char *key)
{
	struct svc *s = find(t, key, false);
	if (!s)
		return;
	free_svc(s);
	*s = t->v[--t->n];
}

static long long min_set(long long a, long long b)
{
	if (!a)
		return b;
	return b && b < a ? b : a;
}

long long eps_tracker_trigger_time(struct eps_tracker *t, const char *key, const char *const *names,
                                   const long long *times, size_t n, long long svc_time)
{
	struct svc *s = find(t, key, true);
	long long min = 0;
	bool known;
	struct ptime *nt;
	size_t nn = 0;

	if (!s)
		return svc_time;
	known = s->has_times;
	nt = calloc(n + 1, sizeof(*nt));
	for (size_t i = 0; i < n; i++) {
		long long last = 0;
		if (!times[i])
			continue;
		for (size_t j = 0; j < s->n_times; j++)
			if (!strcmp(s->times[j].name, names[i]))
				last = s->times[j].t;
		if (times[i] > last)
			min = min_set(min, times[i]);
		if (nt && (nt[nn].name = strdup(names[i])))
			nt[nn++].t = times[i];
	}
	if (svc_time > s->svc_time)
		min = min_set(min, svc_time);
	free_times(s);
	s->times = nt;
	s->n_times = nn;
	s->svc_time = svc_time;
	s->has_times = true;
	return known ? min : svc_time;
}
