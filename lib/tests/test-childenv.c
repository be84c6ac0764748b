/* SPDX-License-Identifier: Apache-2.0 */
/* Tests of the child-process contract's fd variables (lib/childenv.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>

#include "lib/childenv.h"

static void test_env_fd(void **state)
{
	(void)state;
	setenv("KCMD_X_FD", "12", 1);
	assert_int_equal(kcmd_env_fd("KCMD_X_FD"), 12);
	setenv("KCMD_X_FD", "12x", 1);
	assert_int_equal(kcmd_env_fd("KCMD_X_FD"), -1);
	setenv("KCMD_X_FD", "-3", 1);
	assert_int_equal(kcmd_env_fd("KCMD_X_FD"), -1);
	setenv("KCMD_X_FD", "70000", 1);
	assert_int_equal(kcmd_env_fd("KCMD_X_FD"), -1);
	setenv("KCMD_X_FD", "", 1);
	assert_int_equal(kcmd_env_fd("KCMD_X_FD"), -1);
	unsetenv("KCMD_X_FD");
	assert_int_equal(kcmd_env_fd("KCMD_X_FD"), -1);
}

static void test_queue_fd(void **state)
{
	(void)state;
	setenv("KCMD_QUEUE_FDS", "replicaset:5,gc-attempt-to-delete:7,gc:9", 1);
	assert_int_equal(kcmd_env_queue_fd("replicaset"), 5);
	assert_int_equal(kcmd_env_queue_fd("gc-attempt-to-delete"), 7);
	assert_int_equal(kcmd_env_queue_fd("gc"), 9); /* a prefix of another name is not it */
	assert_int_equal(kcmd_env_queue_fd("replica"), -1);
	setenv("KCMD_QUEUE_FDS", "a:x,b:4", 1);
	assert_int_equal(kcmd_env_queue_fd("a"), -1);
	assert_int_equal(kcmd_env_queue_fd("b"), 4);
	setenv("KCMD_QUEUE_FDS", "broken", 1);
	assert_int_equal(kcmd_env_queue_fd("broken"), -1);
	unsetenv("KCMD_QUEUE_FDS");
	assert_int_equal(kcmd_env_queue_fd("a"), -1);
}

static void test_child_args(void **state)
{
	(void)state;
	struct kcmd_child_args c = {.qps = 20, .burst = 30};
	assert_true(kcmd_child_arg(&c, "--controller=replicaset-controller"));
	assert_true(kcmd_child_arg(&c, "--kubeconfig=/k"));
	assert_true(kcmd_child_arg(&c, "--master=https://h"));
	assert_true(kcmd_child_arg(&c, "--kube-api-qps=2.5"));
	assert_true(kcmd_child_arg(&c, "--v=4"));
	assert_false(kcmd_child_arg(&c, "--kube-api-content-type=application/json"));
	assert_false(kcmd_child_arg(&c, "--controllers=*"));
	assert_string_equal(c.controller, "replicaset-controller");
	assert_string_equal(c.kubeconfig, "/k");
	assert_string_equal(c.master, "https://h");
	assert_true(c.qps == 2.5);
	assert_int_equal(c.burst, 30); /* never seen: the caller's default stays */
	assert_int_equal(c.v, 4);
	assert_true(kcmd_child_arg(&c, "--kube-api-burst=7"));
	assert_int_equal(c.burst, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_env_fd),
	        cmocka_unit_test(test_queue_fd),
	        cmocka_unit_test(test_child_args),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
