/* SPDX-License-Identifier: Apache-2.0 */
/* kube/tests/test-selector.c - label selector parsing, validation, nil/empty conversion, match. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kube/selector.h"

#include <cjson/cJSON.h>

static const struct kube_kv L1[] = {{"app", "web"}, {"tier", "frontend"}, {"n", "5"}};

static void expect_format(const char *in, const char *want)
{
	struct kube_selector *s = NULL;
	char err[256] = "", *out = NULL;
	int r = kube_selector_parse(in, &s, err, sizeof(err));
	if (r < 0)
		fail_msg("parse '%s': %d %s", in, r, err);
	assert_int_equal(kube_selector_format(s, &out), 0);
	if (strcmp(out, want))
		fail_msg("parse '%s' -> '%s', want '%s'", in, out, want);
	free(out);
	kube_selector_free(s);
}

static void expect_invalid(const char *in)
{
	struct kube_selector *s = (void *)0x1;
	char err[256] = "";
	int r = kube_selector_parse(in, &s, err, sizeof(err));
	if (r != -EINVAL)
		fail_msg("parse '%s' returned %d, want -EINVAL", in, r);
	assert_ptr_equal(s, (void *)0x1);
	assert_true(err[0] != 0);
}

static bool match(const char *sel, const struct kube_kv *l, uint32_t n)
{
	struct kube_selector *s;
	assert_int_equal(kube_selector_parse(sel, &s, NULL, 0), 0);
	bool m = kube_selector_matches(s, l, n);
	kube_selector_free(s);
	return m;
}

static void test_parse_valid(void **state)
{
	(void)state;
	expect_format("", "");
	expect_format("x=a", "x=a");
	expect_format("x==a", "x==a");
	expect_format("x!=a", "x!=a");
	expect_format("  x = a ,  y", "x=a,y");
	expect_format("z,y=b,x", "x,y=b,z");
	expect_format("!x", "!x");
	expect_format("x in (b,a,a)", "x in (a,b)");
	expect_format("x notin (a)", "x notin (a)");
	expect_format("x in ()", "x in ()");
	expect_format("x in (a,)", "x in (,a)");
	expect_format("x in (,a)", "x in (,a)");
	expect_format("x in (a,,b)", "x in (,a,b)");
	expect_format("x=", "x=");
	expect_format("x>1,y<2", "x>1,y<2");
	expect_invalid("y<-2"); /* upstream validates Gt/Lt values as label values too */
	expect_format("in in (in,notin)", "in in (in,notin)");
	expect_format("example.com/a-b_c.d=v.1-x_y", "example.com/a-b_c.d=v.1-x_y");
	expect_format("x=a\n,\ty", "x=a,y");
}

static void test_parse_invalid(void **state)
{
	(void)state;
	expect_invalid(",");
	expect_invalid("x,");
	expect_invalid("x=a,,y");
	expect_invalid("x=a b");
	expect_invalid("x in a");
	expect_invalid("x in (a");
	expect_invalid("x in (a b)");
	expect_invalid("x>a");
	expect_invalid("x>");
	expect_invalid("!x=a");
	expect_invalid("x===a");
	expect_invalid("=a");
	expect_invalid("-x=a");
	expect_invalid("x-=a");
	expect_invalid("x=-a");
	expect_invalid("Example.com/x=a");
	expect_invalid("/x=a");
	expect_invalid("a/b/c=d");
	expect_invalid("x=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	expect_invalid("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=x");
	expect_invalid("x in (a),");
	expect_invalid("x notin");
	expect_invalid("(");
	expect_invalid("x=(a)");
}

static void test_match(void **state)
{
	(void)state;
	assert_true(match("", L1, 3));
	assert_true(match("app=web", L1, 3));
	assert_false(match("app=db", L1, 3));
	assert_true(match("app,tier", L1, 3));
	assert_false(match("app,!tier", L1, 3));
	assert_true(match("app in (db,web)", L1, 3));
	assert_true(match("missing notin (a)", L1, 3));
	assert_true(match("missing!=a", L1, 3));
	assert_false(match("app notin (web)", L1, 3));
	assert_true(match("n>4,n<6", L1, 3));
	assert_false(match("n>5", L1, 3));
	assert_false(match("app>1", L1, 3));
	assert_false(match("missing>1", L1, 3));
	assert_true(match("x in ()", (struct kube_kv[]){{"x", ""}}, 1));
}

static void test_label_selector_nil_empty(void **state)
{
	(void)state;
	struct kube_selector *s;
	/* nil -> nothing */
	assert_int_equal(kube_selector_from_label_selector(NULL, &s, NULL, 0), 0);
	assert_true(kube_selector_is_nothing(s));
	assert_false(kube_selector_matches(s, L1, 3));
	assert_false(kube_selector_matches(s, NULL, 0));
	kube_selector_free(s);
	/* empty -> everything */
	struct kube_label_selector empty = {0};
	assert_int_equal(kube_selector_from_label_selector(&empty, &s, NULL, 0), 0);
	assert_true(kube_selector_is_everything(s));
	assert_true(kube_selector_matches(s, NULL, 0));
	kube_selector_free(s);
}

static void test_label_selector(void **state)
{
	(void)state;
	struct kube_selector *s;
	char err[256], *out;
	const char *vals[] = {"web", "api"};
	struct kube_kv ml[] = {{"tier", "frontend"}};
	struct kube_label_requirement me[] = {
	        {.key = "app", .op = KUBE_OP_IN, .op_text = "In", .n_values = 2, .values = vals},
	        {.key = "gone", .op = KUBE_OP_DOES_NOT_EXIST, .op_text = "DoesNotExist"},
	};
	struct kube_label_selector ls = {.n_match_labels = 1,
	                                 .match_labels = ml,
	                                 .n_match_expressions = 2,
	                                 .match_expressions = me};
	assert_int_equal(kube_selector_from_label_selector(&ls, &s, err, sizeof(err)), 0);
	assert_true(kube_selector_matches(s, L1, 3));
	assert_int_equal(kube_selector_format(s, &out), 0);
	assert_string_equal(out, "app in (api,web),!gone,tier=frontend");
	free(out);
	kube_selector_free(s);

	/* invalid operator text */
	me[1].op = KUBE_OP_INVALID;
	me[1].op_text = "exists";
	assert_int_equal(kube_selector_from_label_selector(&ls, &s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "\"exists\" is not a valid label selector operator"));
	/* In with no values */
	me[1] = (struct kube_label_requirement){.key = "x", .op = KUBE_OP_IN, .op_text = "In"};
	assert_int_equal(kube_selector_from_label_selector(&ls, &s, err, sizeof(err)), -EINVAL);
	/* Exists with values */
	me[1] = (struct kube_label_requirement){
	        .key = "x", .op = KUBE_OP_EXISTS, .n_values = 1, .values = vals};
	assert_int_equal(kube_selector_from_label_selector(&ls, &s, err, sizeof(err)), -EINVAL);
	/* invalid matchLabels value */
	me[1] = (struct kube_label_requirement){.key = "x", .op = KUBE_OP_EXISTS};
	ml[0].value = "bad value";
	assert_int_equal(kube_selector_from_label_selector(&ls, &s, err, sizeof(err)), -EINVAL);
	ml[0].value = "";
	assert_int_equal(kube_selector_from_label_selector(&ls, &s, err, sizeof(err)), 0);
	kube_selector_free(s);
}

static void test_validate(void **state)
{
	(void)state;
	assert_int_equal(kube_validate_label_key("a"), 0);
	assert_int_equal(kube_validate_label_key("a.b-c_d"), 0);
	assert_int_equal(kube_validate_label_key("k8s.io/a"), 0);
	assert_int_equal(kube_validate_label_key(""), -EINVAL);
	assert_int_equal(kube_validate_label_key("a_"), -EINVAL);
	assert_int_equal(kube_validate_label_key("K8s.io/a"), -EINVAL);
	assert_int_equal(kube_validate_label_key("k8s..io/a"), -EINVAL);
	assert_int_equal(kube_validate_label_key("-k8s.io/a"), -EINVAL);
	assert_int_equal(kube_validate_label_key("k8s.io/"), -EINVAL);
	assert_int_equal(kube_validate_label_value(""), 0);
	assert_int_equal(kube_validate_label_value("A.b"), 0);
	assert_int_equal(kube_validate_label_value(".a"), -EINVAL);
	assert_int_equal(kube_validate_label_value("a/b"), -EINVAL);
}

/* a LabelSelector in the apiserver's JSON, and an object's metadata.labels in JSON */
static bool json_match(const char *sel, const char *labels)
{
	cJSON *js = sel ? cJSON_Parse(sel) : NULL, *lb = labels ? cJSON_Parse(labels) : NULL;
	struct kube_selector *s = NULL;
	char err[256] = "";
	bool m;

	assert_int_equal(kube_selector_from_json(js, &s, err, sizeof(err)), 0);
	m = kube_selector_matches_json(s, lb);
	kube_selector_free(s);
	cJSON_Delete(js);
	cJSON_Delete(lb);
	return m;
}

static void test_label_selector_json(void **state)
{
	(void)state;
	/* nil (absent, null, not an object) matches nothing; {} matches everything */
	assert_false(json_match(NULL, "{}"));
	assert_false(json_match("null", "{\"a\":\"b\"}"));
	assert_false(json_match("[]", "{\"a\":\"b\"}"));
	assert_true(json_match("{}", NULL));
	assert_true(json_match("{}", "{\"a\":\"b\"}"));
	assert_true(json_match("{\"matchLabels\":{\"a\":\"b\"}}", "{\"a\":\"b\",\"c\":\"d\"}"));
	assert_false(json_match("{\"matchLabels\":{\"a\":\"b\"}}", "{\"a\":\"x\"}"));
	assert_false(json_match("{\"matchLabels\":{\"a\":\"b\"}}", NULL));
	assert_true(json_match("{\"matchExpressions\":[{\"key\":\"t\",\"operator\":\"In\","
	                       "\"values\":[\"x\",\"y\"]}]}",
	                       "{\"t\":\"y\"}"));
	assert_false(json_match("{\"matchExpressions\":[{\"key\":\"t\",\"operator\":\"NotIn\","
	                        "\"values\":[\"x\",\"y\"]}]}",
	                        "{\"t\":\"y\"}"));
	assert_true(json_match("{\"matchExpressions\":[{\"key\":\"t\",\"operator\":\"Exists\"}]}",
	                       "{\"t\":\"\"}"));
	assert_true(json_match("{\"matchExpressions\":[{\"key\":\"t\",\"operator\":"
	                       "\"DoesNotExist\"}]}",
	                       "{\"u\":\"v\"}"));
	/* a non-string label value is no label */
	assert_false(json_match("{\"matchExpressions\":[{\"key\":\"t\",\"operator\":\"Exists\"}]}",
	                        "{\"t\":1}"));

	/* invalid: an operator metav1 does not know, In without values, a bad key */
	static const char *const bad[] = {
	        "{\"matchExpressions\":[{\"key\":\"t\",\"operator\":\"Gt\",\"values\":[\"1\"]}]}",
	        "{\"matchExpressions\":[{\"key\":\"t\",\"operator\":\"In\"}]}",
	        "{\"matchExpressions\":[{\"key\":\"t\",\"operator\":\"Exists\",\"values\":[\"x\"]}]"
	        "}",
	        "{\"matchLabels\":{\"-bad\":\"x\"}}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cJSON *js = cJSON_Parse(bad[i]);
		struct kube_selector *s = NULL;
		char err[256] = "";

		assert_non_null(js);
		assert_int_equal(kube_selector_from_json(js, &s, err, sizeof(err)), -EINVAL);
		assert_true(err[0] != 0);
		assert_null(s);
		cJSON_Delete(js);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_parse_valid),
	        cmocka_unit_test(test_parse_invalid),
	        cmocka_unit_test(test_match),
	        cmocka_unit_test(test_label_selector_nil_empty),
	        cmocka_unit_test(test_label_selector),
	        cmocka_unit_test(test_label_selector_json),
	        cmocka_unit_test(test_validate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
