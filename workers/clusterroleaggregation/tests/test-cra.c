/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The clusterrole aggregation (workers/clusterroleaggregation/cra.h) on the cases of upstream's
 * clusterroleaggregation_controller_test.go (v1.37, TestSyncClusterRole): remove dead rules,
 * strip rules, select properly and put in order, multiple selectors, remove duplicates, no diff
 * skip; plus the role itself never contributing, matchExpressions, a bad selector.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workers/clusterroleaggregation/cra.h"

#define HAMMER                                                                                     \
	"{\"verbs\":[\"hammer\"],\"resources\":[\"nails\"]},"                                      \
	"{\"verbs\":[\"hammer\"],\"resources\":[\"wedges\"]}"
#define CHISEL "{\"verbs\":[\"chisel\"],\"resources\":[\"mortises\"]}"
#define SAW    "{\"verbs\":[\"saw\"],\"resources\":[\"boards\"]}"

static cJSON *role(const char *name, const char *label, const char *rules)
{
	char buf[1024];
	snprintf(buf, sizeof(buf),
	         "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"foo\":\"%s\"}},"
	         "\"rules\":[%s]}",
	         name, label, rules);
	cJSON *j = cJSON_Parse(buf);
	assert_non_null(j);
	return j;
}

/* combined with selectors foo in sel[] (matchLabels each) and the given rules */
static cJSON *combined(const char *selectors, const char *rules)
{
	char buf[1024];
	snprintf(buf, sizeof(buf),
	         "{\"metadata\":{\"name\":\"combined\"},"
	         "\"aggregationRule\":{\"clusterRoleSelectors\":[%s]},\"rules\":%s}",
	         selectors, rules);
	cJSON *j = cJSON_Parse(buf);
	assert_non_null(j);
	return j;
}

#define SEL_BAR    "{\"matchLabels\":{\"foo\":\"bar\"}}"
#define SEL_NOTBAR "{\"matchLabels\":{\"foo\":\"not-bar\"}}"

/* Runs the sync; want NULL: no write, else the apply body exactly. */
static void check(cJSON *target, cJSON **roles, size_t n, const char *want)
{
	char *body = NULL, err[128];
	assert_int_equal(cra_sync(target, (const cJSON *const *)roles, n, &body, err, sizeof(err)),
	                 0);
	if (!want)
		assert_null(body);
	else {
		assert_non_null(body);
		assert_string_equal(body, want);
	}
	free(body);
	for (size_t i = 0; i < n; i++)
		cJSON_Delete(roles[i]);
}

#define APPLY(rules)                                                                               \
	"{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRole\",\"metadata\":{" \
	"\"name\":\"combined\"}" rules "}"

static void test_remove_dead_rules(void **state)
{
	(void)state;
	cJSON *r[] = {role("hammer", "bar", HAMMER), combined(SEL_BAR, "[" SAW "]")};
	check(r[1], r, 2, APPLY(",\"rules\":[" HAMMER "]"));
}

static void test_strip_rules(void **state)
{
	(void)state;
	cJSON *r[] = {role("hammer", "not-bar", HAMMER), combined(SEL_BAR, "[" HAMMER "]")};
	check(r[1], r, 2, APPLY(""));
}

static void test_order(void **state)
{
	(void)state;
	cJSON *r[] = {role("hammer", "bar", HAMMER), role("chisel", "bar", CHISEL),
	              role("saw", "not-bar", SAW), combined(SEL_BAR, "null")};
	check(r[3], r, 4, APPLY(",\"rules\":[" CHISEL "," HAMMER "]"));
}

static void test_multiple_selectors(void **state)
{
	(void)state;
	cJSON *r[] = {role("hammer", "bar", HAMMER), role("chisel", "bar", CHISEL),
	              role("saw", "not-bar", SAW), combined(SEL_BAR "," SEL_NOTBAR, "[]")};
	check(r[3], r, 4, APPLY(",\"rules\":[" CHISEL "," HAMMER "," SAW "]"));
}

static void test_duplicates(void **state)
{
	(void)state;
	cJSON *r[] = {role("hammer", "bar", HAMMER), role("chisel", "bar", CHISEL),
	              role("saw", "bar", SAW), role("other-saw", "not-bar", SAW),
	              combined(SEL_BAR "," SEL_NOTBAR, "[]")};
	check(r[4], r, 5, APPLY(",\"rules\":[" CHISEL "," HAMMER "," SAW "]"));
}

static void test_no_diff(void **state)
{
	(void)state;
	cJSON *r[] = {role("hammer", "bar", HAMMER), combined(SEL_BAR, "[" HAMMER "]")};
	check(r[1], r, 2, NULL);
	/* an absent list equals an empty one (apiGroups: [] against none) */
	cJSON *s[] = {role("hammer", "bar", "{\"verbs\":[\"get\"],\"apiGroups\":[]}"),
	              combined(SEL_BAR, "[{\"verbs\":[\"get\"]}]")};
	check(s[1], s, 2, NULL);
	/* nothing selected and no rules: nothing to write */
	cJSON *t[] = {combined(SEL_NOTBAR, "null")};
	check(t[0], t, 1, NULL);
}

static void test_self_and_expressions(void **state)
{
	(void)state;
	/* the aggregated role matches its own selector: its rules do not feed themselves */
	cJSON *self = cJSON_Parse("{\"metadata\":{\"name\":\"combined\",\"labels\":{\"foo\":"
	                          "\"bar\"}},\"aggregationRule\":{\"clusterRoleSelectors\":["
	                          "{\"matchExpressions\":[{\"key\":\"foo\",\"operator\":\"In\","
	                          "\"values\":[\"bar\",\"baz\"]}]}]},\"rules\":[" SAW "]}");
	cJSON *r[] = {role("hammer", "baz", HAMMER), self};
	check(r[1], r, 2, APPLY(",\"rules\":[" HAMMER "]"));
	cJSON *plain = cJSON_Parse("{\"aggregationRule\":null}");
	assert_false(cra_aggregated(plain));
	cJSON_Delete(plain);
}

static void test_bad_selector(void **state)
{
	char *body = NULL, err[128] = "";
	(void)state;
	cJSON *t =
	        combined("{\"matchExpressions\":[{\"key\":\"foo\",\"operator\":\"Near\"}]}", "[]");
	assert_int_equal(cra_sync(t, (const cJSON *const *)&t, 1, &body, err, sizeof(err)),
	                 -EINVAL);
	assert_null(body);
	assert_true(err[0] != 0);
	cJSON_Delete(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_remove_dead_rules),
	        cmocka_unit_test(test_strip_rules),
	        cmocka_unit_test(test_order),
	        cmocka_unit_test(test_multiple_selectors),
	        cmocka_unit_test(test_duplicates),
	        cmocka_unit_test(test_no_diff),
	        cmocka_unit_test(test_self_and_expressions),
	        cmocka_unit_test(test_bad_selector),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
