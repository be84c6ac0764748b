/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/replicaset/ranking.c: the scale-down victim order (see ranking.h for the rules and
 * their upstream sources).
 *
 * The log2 bucket reproduces Go's math.Log2 (frexp, exact powers of two, then
 * log(frac)/ln2 + exp) on top of libm's log(): Go and glibc may differ in the last ulp of log,
 * which can only move a duration that lies within a few nanoseconds of a power of two into the
 * neighbouring bucket; with API timestamps at one-second resolution that is not observable.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "workers/replicaset/ranking.h"

bool rs_pod_is_active(const struct kube_pod *p)
{
	return p->phase != KUBE_POD_SUCCEEDED && p->phase != KUBE_POD_FAILED &&
	       p->meta.deletion_timestamp == 0;
}

bool rs_pod_is_terminating(const struct kube_pod *p)
{
	return p->phase != KUBE_POD_SUCCEEDED && p->phase != KUBE_POD_FAILED &&
	       p->meta.deletion_timestamp != 0;
}

static bool unscheduled(const struct kube_pod *p)
{
	return !p->node_name || !p->node_name[0];
}

static int phase_ordinal(enum kube_pod_phase ph)
{
	switch (ph) {
	case KUBE_POD_UNKNOWN:
		return 1;
	case KUBE_POD_RUNNING:
		return 2;
	default:
		return 0; /* Pending, and what the map lacks */
	}
}

int64_t rs_log2_bucket(int64_t d)
{
	if (d <= 0)
		return -1;
	int exp;
	double frac = frexp((double)d, &exp);
	if (frac == 0.5)
		return exp - 1;
	return (int64_t)(log(frac) * (1 / M_LN2) + (double)exp);
}

/* afterOrZero: t1 after t2, a zero time counting as after everything. */
static bool after_or_zero(kube_time_t t1, kube_time_t t2)
{
	if (t1 == 0 || t2 == 0)
		return t1 == 0;
	return t1 > t2;
}

static int uid_cmp(const struct kube_pod *a, const struct kube_pod *b)
{
	return strcmp(a->meta.uid ? a->meta.uid : "", b->meta.uid ? b->meta.uid : "");
}

/* Rules 6 and 8 once the two times are known to differ; ba/bb are the log2 buckets of
 * now - ta and now - tb (precomputed once per pod by ranked_init). */
static bool time_before(kube_time_t ta, kube_time_t tb, int64_t ba, int64_t bb,
                        const struct kube_pod *a, const struct kube_pod *b, kube_time_t now)
{
	if (now == 0 || ta == 0 || tb == 0)
		return after_or_zero(ta, tb);
	if (ba == bb)
		return uid_cmp(a, b) < 0;
	return ba < bb;
}

/* A pod with its rank and its two log2 buckets (ready time, creation time): the buckets cost a
 * log() each, so the sort computes them once per pod instead of once per comparison. */
struct ranked {
	const struct kube_pod *pod;
	int rank;
	int64_t ready_bucket, create_bucket;
};

static void ranked_init(struct ranked *r, const struct kube_pod *p, int rank, kube_time_t now)
{
	r->pod = p;
	r->rank = rank;
	r->ready_bucket = rs_log2_bucket(now - p->ready_transition_time);
	r->create_bucket = rs_log2_bucket(now - p->meta.creation_timestamp);
}

static bool before(const struct ranked *x, const struct ranked *y, const struct rs_rank_opts *o)
{
	const struct kube_pod *a = x->pod, *b = y->pod;
	/* 1 */
	bool ua = unscheduled(a), ub = unscheduled(b);
	if (ua != ub)
		return ua; /* names differ whenever exactly one is empty */
	/* 2 */
	int pa = phase_ordinal(a->phase), pb = phase_ordinal(b->phase);
	if (pa != pb)
		return pa < pb;
	/* 3 */
	if (a->ready != b->ready)
		return !a->ready;
	/* 4: an absent or invalid annotation parsed as 0 by the decoder */
	if (o->pod_deletion_cost && a->deletion_cost != b->deletion_cost)
		return a->deletion_cost < b->deletion_cost;
	/* 5 */
	if (x->rank != y->rank)
		return x->rank > y->rank;
	/* 6: podReadyTime is the Ready condition's lastTransitionTime (both are Ready here) */
	if (a->ready && b->ready && a->ready_transition_time != b->ready_transition_time)
		return time_before(a->ready_transition_time, b->ready_transition_time,
		                   x->ready_bucket, y->ready_bucket, a, b, o->now);
	/* 7 */
	if (a->max_restarts != b->max_restarts)
		return a->max_restarts > b->max_restarts;
	if (a->max_sidecar_restarts != b->max_sidecar_restarts)
		return a->max_sidecar_restarts > b->max_sidecar_restarts;
	/* 8 */
	if (a->meta.creation_timestamp != b->meta.creation_timestamp)
		return time_before(a->meta.creation_timestamp, b->meta.creation_timestamp,
		                   x->create_bucket, y->create_bucket, a, b, o->now);
	return false;
}

bool rs_pod_delete_before(const struct kube_pod *a, int ra, const struct kube_pod *b, int rb,
                          const struct rs_rank_opts *o)
{
	struct ranked x, y;
	ranked_init(&x, a, ra, o->now);
	ranked_init(&y, b, rb, o->now);
	return before(&x, &y, o);
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static size_t count_equal(const char **sorted, size_t n, const char *key)
{
	size_t lo = 0, hi = n;
	while (lo < hi) { /* lower bound */
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(sorted[mid], key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t c = 0;
	while (lo + c < n && strcmp(sorted[lo + c], key) == 0)
		c++;
	return c;
}

int rs_rank_by_related(const struct kube_pod *const *pods, size_t n,
                       const struct kube_pod *const *related, size_t n_related, int *ranks)
{
	const char **nodes = malloc((n_related ? n_related : 1) * sizeof *nodes);
	if (!nodes)
		return -ENOMEM;
	size_t m = 0;
	for (size_t i = 0; i < n_related; i++)
		if (rs_pod_is_active(related[i]))
			nodes[m++] = related[i]->node_name ? related[i]->node_name : "";
	qsort(nodes, m, sizeof *nodes, cmp_str);
	for (size_t i = 0; i < n; i++)
		ranks[i] = (int)count_equal(nodes, m, pods[i]->node_name ? pods[i]->node_name : "");
	free(nodes);
	return 0;
}

static void merge_sort(struct ranked *v, struct ranked *tmp, size_t n, const struct rs_rank_opts *o)
{
	if (n < 2)
		return;
	size_t h = n / 2;
	merge_sort(v, tmp, h, o);
	merge_sort(v + h, tmp, n - h, o);
	size_t i = 0, j = h, k = 0;
	while (i < h && j < n) {
		/* take from the right only when it is strictly before: stable */
		if (before(&v[j], &v[i], o))
			tmp[k++] = v[j++];
		else
			tmp[k++] = v[i++];
	}
	while (i < h)
		tmp[k++] = v[i++];
	while (j < n)
		tmp[k++] = v[j++];
	memcpy(v, tmp, n * sizeof *v);
}

int rs_pods_to_delete(const struct kube_pod **pods, size_t n, const struct kube_pod *const *related,
                      size_t n_related, size_t diff, const struct rs_rank_opts *o)
{
	if ((n && !pods) || !o)
		return -EINVAL;
	if (diff >= n)
		return (int)n;
	int *ranks = malloc(n * sizeof *ranks);
	struct ranked *v = malloc(2 * n * sizeof *v);
	if (!ranks || !v) {
		free(ranks);
		free(v);
		return -ENOMEM;
	}
	int r = rs_rank_by_related(pods, n, related, n_related, ranks);
	if (r >= 0) {
		for (size_t i = 0; i < n; i++)
			ranked_init(&v[i], pods[i], ranks[i], o->now);
		merge_sort(v, v + n, n, o);
		for (size_t i = 0; i < n; i++)
			pods[i] = v[i].pod;
		r = (int)diff;
	}
	free(ranks);
	free(v);
	return r;
}
