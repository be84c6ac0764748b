/* SPDX-License-Identifier: Apache-2.0 */
/* bench/stats.h: sample sets and percentiles for `kcmd bench`. */
#pragma once

#include <stddef.h>

struct bench_samples {
	double *v;
	size_t n, cap;
};

int bench_samples_add(struct bench_samples *s, double x); /* 0 or -ENOMEM */
void bench_samples_free(struct bench_samples *s);
/* Nearest-rank percentile (p in [0,100]) of the samples; NAN when there are none. Does not
 * reorder s. */
double bench_percentile(const struct bench_samples *s, double p);
double bench_mean(const struct bench_samples *s);
double bench_max(const struct bench_samples *s);
/* a / b, or NAN when either is not a positive finite number (a ratio that means nothing). */
double bench_ratio(double a, double b);
