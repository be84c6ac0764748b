/* SPDX-License-Identifier: Apache-2.0 */
/* kube/tests/test-quantity.c - ParseQuantity's value in nano units (kube/quantity.h). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "kube/quantity.h"

#define NANO ((__int128)1000000000)

static void expect_nano(const char *s, __int128 want)
{
	__int128 v = -12345;

	if (kube_quantity_nano(s, &v) != 0 || v != want)
		fail_msg("%s: got %lld (nano, low 64 bits), want %lld", s, (long long)v,
		         (long long)want);
}

static void test_values(void **state)
{
	(void)state;
	expect_nano("0", 0);
	expect_nano("1", NANO);
	expect_nano("-1", -NANO);
	expect_nano("+2", 2 * NANO);
	expect_nano("1.5", 1500000000);
	expect_nano("100m", 100000000);
	expect_nano("1Ki", 1024 * NANO);
	expect_nano("1Gi", (__int128)1073741824 * NANO);
	expect_nano("1.5Gi", (__int128)1610612736 * NANO);
	expect_nano("1G", (__int128)1000000000 * NANO);
	expect_nano("2k", 2000 * NANO);
	expect_nano("1e3", 1000 * NANO);
	expect_nano("1E-3", 1000000);
	expect_nano("5n", 5);
	expect_nano("3u", 3000);
	/* below one nano unit: rounded up, as ParseQuantity */
	expect_nano("0.1n", 1);
	expect_nano("1e-12", 1);
	/* Ei is the largest suffix and still fits */
	expect_nano("8Ei", ((__int128)8 << 60) * NANO);
}

static void test_invalid(void **state)
{
	static const char *const bad[] = {"",    "Gi", "1.2.3", "1 Gi", "1gi", "1Gib",
	                                  "--1", "1e", "1e99",  "1x",   ".",   "1e+"};
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		__int128 v = 7;

		if (kube_quantity_nano(bad[i], &v) != -EINVAL || v != 7)
			fail_msg("\"%s\" accepted or *ret written", bad[i]);
	}
	/* the mantissa beyond 2^100 in nano units does not fit */
	__int128 v = 0;
	assert_int_equal(kube_quantity_nano("999999999999999999999999999999Ei", &v), -EINVAL);
}

static void test_or_zero(void **state)
{
	(void)state;
	assert_true(kube_quantity_nano_or_zero(NULL) == 0);
	assert_true(kube_quantity_nano_or_zero("garbage") == 0);
	assert_true(kube_quantity_nano_or_zero("2Mi") == (__int128)2097152 * NANO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_values),
	        cmocka_unit_test(test_invalid),
	        cmocka_unit_test(test_or_zero),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
