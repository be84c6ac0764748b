/* SPDX-License-Identifier: Apache-2.0 */
/* Tests of Go-style flag parsing and controller flag values (lib/goflag.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "lib/goflag.h"

static void test_durations(void **state)
{
	(void)state;
	uint64_t us;

	assert_int_equal(kcmd_parse_duration("0", &us), 0);
	assert_int_equal(us, 0);
	assert_int_equal(kcmd_parse_duration("1h2m3.5s", &us), 0);
	assert_int_equal(us, 3723500000ull);
	assert_int_equal(kcmd_parse_duration("250us", &us), 0);
	assert_int_equal(us, 250);
	assert_int_equal(kcmd_parse_duration("1.5ms", &us), 0);
	assert_int_equal(us, 1500);
	assert_int_equal(kcmd_parse_duration("-1s", &us), -EINVAL);
	assert_int_equal(kcmd_parse_duration("", &us), -EINVAL);
	assert_int_equal(kcmd_parse_duration("+", &us), -EINVAL);
	assert_int_equal(kcmd_parse_duration("5", &us), -EINVAL);
	assert_int_equal(kcmd_parse_duration("5x", &us), -EINVAL);
	assert_int_equal(kcmd_parse_duration("s", &us), -EINVAL);
	assert_int_equal(kcmd_parse_duration("1e400h", &us), -EINVAL);
}

static void test_bools(void **state)
{
	(void)state;
	bool b = false;

	assert_int_equal(kcmd_parse_bool("True", &b), 0);
	assert_true(b);
	assert_int_equal(kcmd_parse_bool("0", &b), 0);
	assert_false(b);
	assert_int_equal(kcmd_parse_bool("yes", &b), -EINVAL);
	assert_int_equal(kcmd_parse_bool("", &b), -EINVAL);
	assert_int_equal(kcmd_parse_bool(NULL, &b), -EINVAL);
}

static const struct kcmd_flag flags[] = {
        {.name = "concurrent-foo-syncs",
         .type = KCMD_FLAG_INT,
         .def = "5",
         .min = 1,
         .max = 1000000},
        {.name = "enable-foo", .type = KCMD_FLAG_BOOL, .def = "true", .enables_controller = true},
        {.name = "foo-grace", .type = KCMD_FLAG_DURATION, .def = "1m"},
        {.name = "foo-qps", .type = KCMD_FLAG_DOUBLE, .def = "2.5"},
        {.name = "foo-name", .type = KCMD_FLAG_STRING, .def = NULL},
};

static void test_values(void **state)
{
	(void)state;
	struct kcmd_flag_values *v;
	char err[128] = "";

	assert_int_equal(kcmd_flag_values_new(flags, 5, &v), 0);
	assert_int_equal(kcmd_flag_int(v, "concurrent-foo-syncs"), 5);
	assert_true(kcmd_flag_bool(v, "enable-foo"));
	assert_int_equal(kcmd_flag_duration_us(v, "foo-grace"), 60000000);
	assert_true(kcmd_flag_double(v, "foo-qps") == 2.5);
	assert_string_equal(kcmd_flag_string(v, "foo-name"), "");
	assert_false(kcmd_flag_values_is_set(v, "concurrent-foo-syncs"));
	/* not declared */
	assert_int_equal(kcmd_flag_values_set(v, "bar", "1", err, sizeof(err)), -ENOENT);
	assert_int_equal(kcmd_flag_int(v, "bar"), 0);
	/* type and range checked, value kept on error */
	assert_int_equal(kcmd_flag_values_set(v, "concurrent-foo-syncs", "0", err, sizeof(err)),
	                 -EINVAL);
	assert_non_null(strstr(err, "--concurrent-foo-syncs"));
	assert_int_equal(kcmd_flag_values_set(v, "concurrent-foo-syncs", "x", err, sizeof(err)),
	                 -EINVAL);
	assert_int_equal(kcmd_flag_int(v, "concurrent-foo-syncs"), 5);
	assert_int_equal(kcmd_flag_values_set(v, "concurrent-foo-syncs", "64", err, sizeof(err)),
	                 0);
	assert_int_equal(kcmd_flag_int(v, "concurrent-foo-syncs"), 64);
	assert_true(kcmd_flag_values_is_set(v, "concurrent-foo-syncs"));
	assert_int_equal(kcmd_flag_values_set(v, "enable-foo", "F", err, sizeof(err)), 0);
	assert_false(kcmd_flag_bool(v, "enable-foo"));
	assert_int_equal(kcmd_flag_values_set(v, "foo-grace", "1h", err, sizeof(err)), 0);
	assert_int_equal(kcmd_flag_duration_us(v, "foo-grace"), 3600000000ull);
	assert_int_equal(kcmd_flag_values_set(v, "foo-grace", "-1s", err, sizeof(err)), -EINVAL);
	assert_string_equal(kcmd_flag_values_text(v, 0), "64");
	assert_null(kcmd_flag_values_text(v, 5));
	assert_int_equal(kcmd_flag_values_count(v), 5);
	assert_ptr_equal(kcmd_flag_values_find(v, "foo-qps"), &flags[3]);
	kcmd_flag_values_free(v);
}

/* A flag whose range starts below 0 takes negative values (kcm's int32
 * --terminated-pod-gc-threshold: <= 0 disables); any other INT flag refuses them. */
static void test_negative_ints(void **state)
{
	(void)state;
	static const struct kcmd_flag f[] = {{.name = "thr",
	                                      .type = KCMD_FLAG_INT,
	                                      .def = "12500",
	                                      .min = INT32_MIN,
	                                      .max = INT32_MAX},
	                                     {.name = "n", .type = KCMD_FLAG_INT, .def = "0"}};
	struct kcmd_flag_values *v = NULL;
	char err[128] = "";

	assert_int_equal(kcmd_flag_values_new(f, 2, &v), 0);
	assert_int_equal(kcmd_flag_values_set(v, "thr", "-1", err, sizeof(err)), 0);
	assert_int_equal(kcmd_flag_int(v, "thr"), -1);
	assert_int_equal(kcmd_flag_values_set(v, "thr", "-2147483648", err, sizeof(err)), 0);
	assert_int_equal(kcmd_flag_values_set(v, "thr", "-2147483649", err, sizeof(err)), -EINVAL);
	assert_int_equal(kcmd_flag_values_set(v, "thr", "0", err, sizeof(err)), 0);
	assert_int_equal(kcmd_flag_int(v, "thr"), 0);
	assert_int_equal(kcmd_flag_values_set(v, "n", "-1", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "non-negative"));
	kcmd_flag_values_free(v);
}

static void test_bad_default(void **state)
{
	(void)state;
	static const struct kcmd_flag bad[] = {
	        {.name = "x", .type = KCMD_FLAG_DURATION, .def = "5"}};
	struct kcmd_flag_values *v = NULL;

	assert_int_equal(kcmd_flag_values_new(bad, 1, &v), -EINVAL);
	assert_null(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_durations),   cmocka_unit_test(test_bools),
	        cmocka_unit_test(test_values),      cmocka_unit_test(test_negative_ints),
	        cmocka_unit_test(test_bad_default),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
