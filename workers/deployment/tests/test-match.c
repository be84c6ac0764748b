/* SPDX-License-Identifier: Apache-2.0 */
/* workers/deployment/tests/test-match.c - dp_selector_matches (match.c) on the cases of
 * apimachinery's labels.Selector semantics the claim relies on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "workers/deployment/match.h"

static bool m(const char *sel, const char *labels)
{
	cJSON *s = sel ? cJSON_Parse(sel) : NULL, *l = labels ? cJSON_Parse(labels) : NULL;
	bool r = dp_selector_matches(s, l);
	cJSON_Delete(s);
	cJSON_Delete(l);
	return r;
}

static void test_match_labels(void **state)
{
	(void)state;
	assert_true(m("{\"matchLabels\":{\"app\":\"a\"}}", "{\"app\":\"a\",\"x\":\"y\"}"));
	assert_false(m("{\"matchLabels\":{\"app\":\"a\"}}", "{\"app\":\"b\"}"));
	assert_false(m("{\"matchLabels\":{\"app\":\"a\"}}", "{}"));
	assert_false(m("{\"matchLabels\":{\"app\":\"a\"}}", NULL));
	assert_false(m("{\"matchLabels\":{\"app\":\"a\",\"t\":\"1\"}}", "{\"app\":\"a\"}"));
}

static void test_expressions(void **state)
{
	(void)state;
	const char *in = "{\"matchExpressions\":[{\"key\":\"e\",\"operator\":\"In\","
	                 "\"values\":[\"p\",\"q\"]}]}";
	const char *notin = "{\"matchExpressions\":[{\"key\":\"e\",\"operator\":\"NotIn\","
	                    "\"values\":[\"p\"]}]}";
	const char *ex = "{\"matchExpressions\":[{\"key\":\"e\",\"operator\":\"Exists\"}]}";
	const char *dne = "{\"matchExpressions\":[{\"key\":\"e\",\"operator\":\"DoesNotExist\"}]}";

	assert_true(m(in, "{\"e\":\"q\"}"));
	assert_false(m(in, "{\"e\":\"r\"}"));
	assert_false(m(in, "{}"));
	assert_true(m(notin, "{}")); /* NotIn holds for an absent key */
	assert_false(m(notin, "{\"e\":\"p\"}"));
	assert_true(m(ex, "{\"e\":\"\"}"));
	assert_false(m(ex, "{}"));
	assert_true(m(dne, "{}"));
	assert_false(m(dne, "{\"e\":\"x\"}"));
	/* both parts must hold */
	assert_false(m("{\"matchLabels\":{\"app\":\"a\"},\"matchExpressions\":[{\"key\":\"e\","
	               "\"operator\":\"Exists\"}]}",
	               "{\"app\":\"a\"}"));
	assert_false(m("{\"matchExpressions\":[{\"key\":\"e\",\"operator\":\"Gt\","
	               "\"values\":[\"1\"]}]}",
	               "{\"e\":\"2\"}"));
}

static void test_nothing(void **state)
{
	(void)state;
	assert_false(m(NULL, "{\"app\":\"a\"}"));
	assert_false(m("{}", "{\"app\":\"a\"}"));
	assert_false(m("{\"matchLabels\":{}}", "{\"app\":\"a\"}"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_match_labels),
	        cmocka_unit_test(test_expressions),
	        cmocka_unit_test(test_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
