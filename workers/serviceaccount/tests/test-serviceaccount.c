/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The serviceaccount-controller's pure decisions (workers/serviceaccount/sa.h), with the facts
 * of upstream's serviceaccounts_controller_test.go (v1.37, TestServiceAccountCreation): a
 * missing `default` account is created in an Active namespace, never in a Terminating or an
 * absent one, and an existing one is left alone.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "workers/serviceaccount/sa.h"

static void test_decide(void **state)
{
	(void)state;
	/* new active namespace / active namespace missing default: create */
	assert_int_equal(sa_decide("Active", false), SA_CREATE);
	/* active namespace with default: nothing */
	assert_int_equal(sa_decide("Active", true), SA_NOTHING);
	/* terminating namespace (any phase but Active), deleted namespace: nothing */
	assert_int_equal(sa_decide("Terminating", false), SA_NOTHING);
	assert_int_equal(sa_decide("", false), SA_NOTHING);
	assert_int_equal(sa_decide(NULL, false), SA_NOTHING);
}

static void test_to_ensure(void **state)
{
	(void)state;
	assert_string_equal(sa_to_ensure[0], "default");
	assert_null(sa_to_ensure[1]);
}

static void test_body(void **state)
{
	char buf[256];
	(void)state;
	assert_true(sa_body(buf, sizeof(buf), "ns1", "default") > 0);
	assert_string_equal(buf, "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{"
	                         "\"name\":\"default\",\"namespace\":\"ns1\"}}");
	assert_int_equal(sa_body(buf, 20, "ns1", "default"), -ENAMETOOLONG);
}

static void test_create_result(void **state)
{
	(void)state;
	assert_int_equal(sa_create_result(0), 0);
	assert_int_equal(sa_create_result(-EEXIST), 0);    /* AlreadyExists */
	assert_int_equal(sa_create_result(-ESHUTDOWN), 0); /* NamespaceTerminating cause */
	assert_int_equal(sa_create_result(-EACCES), -EACCES);
	assert_int_equal(sa_create_result(-EREMOTEIO), -EREMOTEIO);
}

static void test_phase(void **state)
{
	char p[16];
	const char *active = "{\"metadata\":{\"name\":\"a\"},\"status\":{\"phase\":\"Active\"}}";
	const char *none = "{\"metadata\":{\"name\":\"a\"}}";
	(void)state;
	assert_int_equal(sa_namespace_phase(active, strlen(active), p, sizeof(p)), 0);
	assert_string_equal(p, "Active");
	assert_int_equal(sa_namespace_phase(none, strlen(none), p, sizeof(p)), 0);
	assert_string_equal(p, "");
	assert_int_equal(sa_namespace_phase("{", 1, p, sizeof(p)), -EBADMSG);
	assert_int_equal(sa_namespace_phase(active, strlen(active), p, 4), -ENAMETOOLONG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_decide), cmocka_unit_test(test_to_ensure),
	        cmocka_unit_test(test_body),   cmocka_unit_test(test_create_result),
	        cmocka_unit_test(test_phase),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
