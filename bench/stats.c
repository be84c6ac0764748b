/* SPDX-License-Identifier: Apache-2.0 */
/* bench/stats.c: sample sets and percentiles (see stats.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/stats.h"

int bench_samples_add(struct bench_samples *s, double x)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		double *v = realloc(s->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = x;
	return 0;
}

void bench_samples_free(struct bench_samples *s)
{
	free(s->v);
	*s = (struct bench_samples){0};
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double bench_percentile(const struct bench_samples *s, double p)
{
	if (!s->n || !(p >= 0 && p <= 100))
		return NAN;
	double *v = malloc(s->n * sizeof(*v));
	if (!v)
		return NAN;
	memcpy(v, s->v, s->n * sizeof(*v));
	qsort(v, s->n, sizeof(*v), cmp);
	/* nearest rank: the smallest value with at least p% of the samples at or below it */
	size_t rank = (size_t)ceil(p / 100.0 * (double)s->n);
	if (rank < 1)
		rank = 1;
	double r = v[rank - 1];
	free(v);
	return r;
}

double bench_mean(const struct bench_samples *s)
{
	double sum = 0;

	if (!s->n)
		return NAN;
	for (size_t i = 0; i < s->n; i++)
		sum += s->v[i];
	return sum / (double)s->n;
}

double bench_max(const struct bench_samples *s)
{
	double m = NAN;

	for (size_t i = 0; i < s->n; i++)
		if (isnan(m) || s->v[i] > m)
			m = s->v[i];
	return m;
}

double bench_ratio(double a, double b)
{
	if (!isfinite(a) || !isfinite(b) || a < 0 || b <= 0)
		return NAN;
	return a / b;
}
