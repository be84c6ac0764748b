/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of the plug-in loader (controllers/registry.h, --controller-plugins): a good plug-in
 * joins the registry after the in-tree controllers; a missing symbol, another ABI, a clashing
 * name or flag, an unresolved symbol, a missing file and a plug-in listed twice are each
 * refused with a message naming the file, and leave the registry as it was.
 * The fixtures (plugins/good.c built with different macros, controllers/module.mk) sit in
 * plugins/ beside this program.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "controllers/registry.h"
#include "kcmd/worker.h"

static char dir[PATH_MAX];

static const char *fixture(const char *name)
{
	static char p[4][PATH_MAX + 64];
	static int k;
	k = (k + 1) % 4;
	snprintf(p[k], sizeof(p[k]), "%s/plugins/%s.so", dir, name);
	return p[k];
}

static int reset(void **state)
{
	(void)state;
	kcmd_registry_unload_plugins();
	return 0;
}

static void test_good(void **state)
{
	(void)state;
	char err[512] = "";
	size_t builtin = kcmd_registry_count();

	assert_null(kcmd_registry_plugins_arg());
	assert_int_equal(kcmd_registry_load_plugins(fixture("good"), err, sizeof(err)), 0);
	assert_int_equal(kcmd_registry_count(), builtin + 1);
	const struct kcmd_controller *c = kcmd_registry_find("test-plugin-controller");
	assert_non_null(c);
	assert_ptr_equal(kcmd_registry_at(builtin), c);
	assert_int_equal(kcmd_registry_index(c), (long)builtin);
	assert_true(kcmd_registry_is_plugin(c));
	assert_false(kcmd_registry_is_plugin(kcmd_registry_at(0)));
	assert_false(c->enabled_by_default); /* off under '*' unless the plug-in says so */
	assert_non_null(c->worker);
	assert_string_equal(c->worker->queues[0], "test-plugin");
	struct wk_result res = {.err = -1};
	c->worker->sync(NULL, 0, "k", &res); /* its code runs */
	assert_int_equal(res.err, 0);
	assert_int_equal(kcmd_registry_validate(err, sizeof(err)), 0);
	/* children are given the absolute path */
	assert_string_equal(kcmd_registry_plugins_arg(), fixture("good"));
	assert_int_equal(kcmd_registry_load_plugins(fixture("good2"), err, sizeof(err)), 0);
	char both[2 * PATH_MAX + 200];
	snprintf(both, sizeof(both), "%s,%s", fixture("good"), fixture("good2"));
	assert_string_equal(kcmd_registry_plugins_arg(), both);
}

static void refused(const char *list, int want, const char *needle)
{
	char err[1024] = "";
	size_t n = kcmd_registry_count();

	assert_int_equal(kcmd_registry_load_plugins(list, err, sizeof(err)), want);
	if (!strstr(err, needle))
		fail_msg("message \"%s\" lacks \"%s\"", err, needle);
	assert_int_equal(kcmd_registry_count(), n);
	assert_int_equal(kcmd_registry_validate(err, sizeof(err)), 0);
}

static void test_missing_symbol(void **state)
{
	(void)state;
	refused(fixture("nosym"), -ENOEXEC, "no kcmd_controller_plugin()");
	refused(fixture("nosym"), -ENOEXEC, "nosym.so");
}

static void test_abi_mismatch(void **state)
{
	(void)state;
	char want[64];
	snprintf(want, sizeof(want), "built for controller ABI %u, this kcmd has ABI %u",
	         KCMD_CONTROLLER_ABI + 1, KCMD_CONTROLLER_ABI);
	refused(fixture("badabi"), -EPROTO, want);
	assert_null(kcmd_registry_find("test-plugin3-controller"));
}

static void test_duplicates(void **state)
{
	(void)state;
	char err[512];
	assert_int_equal(kcmd_registry_load_plugins(fixture("good"), err, sizeof(err)), 0);
	/* another file, the same controller name */
	refused(fixture("dupname"), -EINVAL, "share a name");
	/* a flag an in-tree controller declares */
	refused(fixture("dupflag"), -EINVAL,
	        "both declare --concurrent-replicaset-syncs, with different types or defaults");
	/* the same flag with the same type and default: one value, shared (kcm's --root-ca-file) */
	assert_int_equal(kcmd_registry_load_plugins(fixture("sameflag"), err, sizeof(err)), 0);
	assert_non_null(kcmd_registry_find("test-plugin7-controller"));
	/* the same file twice */
	refused(fixture("good"), -EEXIST, "listed twice");
}

static void test_load_errors(void **state)
{
	(void)state;
	refused(fixture("undef"), -ENOEXEC, "cannot load");
	refused(fixture("undef"), -ENOEXEC, "kcmd_fixture_missing");
	refused("/nonexistent/plugin.so", -ENOENT, "/nonexistent/plugin.so");
	refused("/etc/hostname", -ENOEXEC, "cannot load");
	refused(",", -EINVAL, "empty");
}

static void test_args(void **state)
{
	(void)state;
	char err[512] = "", flag[PATH_MAX + 64];
	snprintf(flag, sizeof(flag), "--controller-plugins=%s", fixture("good"));
	char *argv[] = {"kcmd-worker",
	                "--controller=x",
	                flag,
	                "-controller-plugins",
	                (char *)fixture("good2"),
	                "--v=2",
	                NULL};
	int argc = 6;

	assert_int_equal(kcmd_registry_load_args(argc, argv, err, sizeof(err)), 0);
	assert_non_null(kcmd_registry_find("test-plugin-controller"));
	assert_non_null(kcmd_registry_find("test-plugin2-controller"));
	argc = kcmd_registry_drop_args(argc, argv);
	assert_int_equal(argc, 3);
	assert_string_equal(argv[1], "--controller=x");
	assert_string_equal(argv[2], "--v=2");
	assert_null(argv[3]);

	/* a bad plug-in in the arguments is the caller's error, with the message */
	kcmd_registry_unload_plugins();
	snprintf(flag, sizeof(flag), "--controller-plugins=%s", fixture("badabi"));
	char *bad[] = {"kcmd", flag, NULL};
	assert_int_equal(kcmd_registry_load_args(2, bad, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "badabi.so"));
	char *none[] = {"kcmd", "--controllers=*", NULL};
	assert_int_equal(kcmd_registry_load_args(2, none, err, sizeof(err)), 0);
	assert_null(kcmd_registry_plugins_arg());
}

int main(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return 1;
	exe[n] = 0;
	snprintf(dir, sizeof(dir), "%s", dirname(exe));
	if (access(fixture("good"), R_OK) < 0) {
		fprintf(stderr, "test-plugins: fixtures missing in %s/plugins\n", dir);
		return 1;
	}
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test_teardown(test_good, reset),
	        cmocka_unit_test_teardown(test_missing_symbol, reset),
	        cmocka_unit_test_teardown(test_abi_mismatch, reset),
	        cmocka_unit_test_teardown(test_duplicates, reset),
	        cmocka_unit_test_teardown(test_load_errors, reset),
	        cmocka_unit_test_teardown(test_args, reset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
