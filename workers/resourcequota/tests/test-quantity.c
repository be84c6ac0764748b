/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/resourcequota/tests/test-quantity.c: quantity.c against Go's resource.Quantity: the
 * String() of parsed values (apimachinery's quantity_test.go TestQuantityParse and
 * TestQuantityString cases that fit the nano range), Add's format rule, RoundUp(0), and the
 * errors for text that is not a quantity.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "workers/resourcequota/quantity.h"

static void check(const char *in, const char *want)
{
	struct rq_qty q;
	char buf[RQ_QTY_STR_MAX];
	int r = rq_qty_parse(in, &q);
	if (r < 0)
		fail_msg("parse %s: %d", in, r);
	rq_qty_format(&q, buf, sizeof(buf));
	if (strcmp(buf, want))
		fail_msg("%s -> %s, want %s", in, buf, want);
}

static void test_canonical(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
	        {"0", "0"},
	        {"0n", "0"},
	        {"0u", "0"},
	        {"0m", "0"},
	        {"0Ki", "0"},
	        {"0k", "0"},
	        {"0Mi", "0"},
	        {"0M", "0"},
	        {"1", "1"},
	        {"100m", "100m"},
	        {"0.1", "100m"},
	        {".1", "100m"},
	        {"1Gi", "1Gi"},
	        {"1024Mi", "1Gi"},
	        {"1536Mi", "1536Mi"},
	        {"1.5Gi", "1536Mi"},
	        {"1000m", "1"},
	        {"1000", "1k"},
	        {"1000000", "1M"},
	        {"1M", "1M"},
	        {"1.5", "1500m"},
	        {"2.5k", "2500"},
	        {"10k", "10k"},
	        {"1e3", "1e3"},
	        {"1E", "1E"},
	        {"1Ei", "1Ei"},
	        {"100Ki", "100Ki"},
	        {"1023", "1023"},
	        {"1Ki", "1Ki"},
	        {"512", "512"},
	        {"0.5Ki", "512"},
	        {"1n", "1n"},
	        {"1.1n", "2n"},
	        {"0.0000000001", "1n"},
	        {"-1", "-1"},
	        {"-100m", "-100m"},
	        {"-1Gi", "-1Gi"},
	        {"+1", "1"},
	        {"12e6", "12e6"},
	        {"1.5e3", "1500"},
	        {"1e-3", "1e-3"},
	        {"1234567890", "1234567890"},
	        {"129e6", "129e6"},
	        {"1.25Ki", "1280"},
	        {"10.5Mi", "10752Ki"},
	        {"1000Ki", "1000Ki"},
	        {"9Ei", "9223372036854775807"},
	        {"0.001Ki", "1024m"},
	        {"200Mi", "200Mi"},
	        {"5G", "5G"},
	        {"500M", "500M"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check(cases[i][0], cases[i][1]);
}

/* Go also accepts "Ki" and "-" (no digits read as 0) */
static void test_errors(void **state)
{
	(void)state;
	static const char *const bad[] = {"",   "1K",    "1i",   "abc", "1 ",   " 1",
	                                  "1e", "1.5.1", "1Gib", "--1", "1e1.5"};
	struct rq_qty q;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (rq_qty_parse(bad[i], &q) != -EINVAL)
			fail_msg("%s accepted", bad[i]);
	assert_int_equal(rq_qty_parse("1e500", &q), -ERANGE);
	assert_int_equal(rq_qty_parse("100000000000000000000000000000000000000000", &q), -ERANGE);
}

static const char *sum(const char *a, const char *b, char *buf)
{
	struct rq_qty x = {0}, y;
	if (a)
		assert_int_equal(rq_qty_parse(a, &x), 0);
	assert_int_equal(rq_qty_parse(b, &y), 0);
	assert_int_equal(rq_qty_add(&x, &y), 0);
	rq_qty_format(&x, buf, RQ_QTY_STR_MAX);
	return buf;
}

static void test_add_format(void **state)
{
	char buf[RQ_QTY_STR_MAX];
	(void)state;
	/* a zero (DecimalSI) takes the addend's format */
	assert_string_equal(sum(NULL, "1Gi", buf), "1Gi");
	assert_string_equal(sum("1Gi", "1Gi", buf), "2Gi");
	/* a non-zero receiver keeps its own */
	assert_string_equal(sum("1", "1Gi", buf), "1073741825");
	assert_string_equal(sum("1Gi", "1000", buf), "1073742824");
	assert_string_equal(sum("1Gi", "1024", buf), "1048577Ki");
	assert_string_equal(sum("100m", "900m", buf), "1");
	assert_string_equal(sum("500Mi", "524Mi", buf), "1Gi");
	assert_string_equal(sum("0", "250m", buf), "250m");
	assert_string_equal(sum("1e3", "1e3", buf), "2e3");
}

static void test_round_up(void **state)
{
	struct rq_qty q;
	char buf[RQ_QTY_STR_MAX];
	(void)state;
	assert_int_equal(rq_qty_parse("1500m", &q), 0);
	assert_false(rq_qty_round_up_integer(&q));
	rq_qty_format(&q, buf, sizeof(buf));
	assert_string_equal(buf, "2");
	assert_int_equal(rq_qty_parse("2Gi", &q), 0);
	assert_true(rq_qty_round_up_integer(&q));
	assert_int_equal(rq_qty_parse("1.5Ki", &q), 0); /* 1536: already an integer */
	assert_true(rq_qty_round_up_integer(&q));
}

static void test_cmp(void **state)
{
	struct rq_qty a, b;
	(void)state;
	assert_int_equal(rq_qty_parse("1Gi", &a), 0);
	assert_int_equal(rq_qty_parse("1073741824", &b), 0);
	assert_int_equal(rq_qty_cmp(&a, &b), 0);
	assert_int_equal(rq_qty_parse("1G", &b), 0);
	assert_int_equal(rq_qty_cmp(&a, &b), 1);
	assert_int_equal(rq_qty_cmp(&b, &a), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_canonical),  cmocka_unit_test(test_errors),
	        cmocka_unit_test(test_add_format), cmocka_unit_test(test_round_up),
	        cmocka_unit_test(test_cmp),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
