/* SPDX-License-Identifier: Apache-2.0 */
/* Tests of `kcmd bench` percentiles and ratios. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>

#include "bench/stats.h"

static void test_percentiles(void **state)
{
	(void)state;
	struct bench_samples s = {0};

	assert_true(isnan(bench_percentile(&s, 50)));
	assert_true(isnan(bench_mean(&s)));
	/* 100 values 100..1 in reverse order: nearest rank */
	for (int i = 100; i >= 1; i--)
		assert_int_equal(bench_samples_add(&s, i), 0);
	assert_true(bench_percentile(&s, 50) == 50);
	assert_true(bench_percentile(&s, 99) == 99);
	assert_true(bench_percentile(&s, 100) == 100);
	assert_true(bench_percentile(&s, 0) == 1);
	assert_true(bench_percentile(&s, 1) == 1);
	assert_true(bench_percentile(&s, 99.5) == 100);
	assert_true(isnan(bench_percentile(&s, 101)));
	assert_true(isnan(bench_percentile(&s, -1)));
	assert_true(s.v[0] == 100); /* not reordered */
	assert_true(bench_mean(&s) == 50.5);
	assert_true(bench_max(&s) == 100);
	bench_samples_free(&s);

	assert_int_equal(bench_samples_add(&s, 7.5), 0);
	assert_true(bench_percentile(&s, 50) == 7.5);
	assert_true(bench_percentile(&s, 99) == 7.5);
	bench_samples_free(&s);
	/* p99 of 10 samples is the largest; p50 the 5th */
	for (int i = 1; i <= 10; i++)
		bench_samples_add(&s, i * 10);
	assert_true(bench_percentile(&s, 99) == 100);
	assert_true(bench_percentile(&s, 50) == 50);
	assert_true(bench_percentile(&s, 90) == 90);
	bench_samples_free(&s);
}

static void test_ratio(void **state)
{
	(void)state;
	assert_true(bench_ratio(1, 4) == 0.25);
	assert_true(bench_ratio(0, 4) == 0);
	assert_true(isnan(bench_ratio(1, 0)));
	assert_true(isnan(bench_ratio(NAN, 1)));
	assert_true(isnan(bench_ratio(1, NAN)));
	assert_true(isnan(bench_ratio(-1, 1)));
	assert_true(isnan(bench_ratio(1, INFINITY)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_percentiles),
	                                   cmocka_unit_test(test_ratio)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
