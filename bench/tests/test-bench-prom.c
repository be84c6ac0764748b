/* SPDX-License-Identifier: Apache-2.0 */
/* Tests of the Prometheus text reader `kcmd bench` uses on the apiserver's and kcmd's /metrics. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <string.h>

#include "bench/prom.h"

static const char text[] =
        "# HELP apiserver_request_total [STABLE] Counter of apiserver requests broken out for each "
        "verb, ...\n"
        "# TYPE apiserver_request_total counter\n"
        "apiserver_request_total{code=\"200\",component=\"apiserver\",dry_run=\"\",group=\"\","
        "resource=\"pods\",scope=\"cluster\",subresource=\"\",verb=\"LIST\",version=\"v1\"} 3\n"
        "apiserver_request_total{code=\"200\",component=\"apiserver\",dry_run=\"\",group=\"apps\","
        "resource=\"replicasets\",scope=\"cluster\",subresource=\"\",verb=\"LIST\",version=\"v1\"} "
        "2\n"
        "apiserver_request_total{code=\"201\",component=\"apiserver\",dry_run=\"\",group=\"\","
        "resource=\"pods\",scope=\"resource\",subresource=\"\",verb=\"POST\",version=\"v1\"} 1500\n"
        "apiserver_request_total{code=\"201\",component=\"apiserver\",dry_run=\"\",group=\"\","
        "resource=\"pods\",scope=\"resource\",subresource=\"binding\",verb=\"POST\",version=\"v1\"}"
        " 1499\n"
        "apiserver_request_total{code=\"409\",component=\"apiserver\",dry_run=\"\",group=\"apps\","
        "resource=\"replicasets\",scope=\"resource\",subresource=\"status\",verb=\"PUT\",version="
        "\"v1\"} 7\n"
        "apiserver_request_total_other{verb=\"LIST\"} 1000\n"
        "\n"
        "weird line without value\n"
        "workqueue_depth{name=\"replicaset\"} 12\n"
        "workqueue_depth{name=\"gc-attempt-to-delete\"} 3 1700000000000\n"
        "label_escapes{a=\"x\\\"y\\\\z\\n\",b=\"\"} +Inf\n"
        "no_labels 4.5e3\n";

static int count_cb(const struct prom_sample *s, void *ud)
{
	(void)s;
	(*(int *)ud)++;
	return 0;
}

static void test_parse(void **state)
{
	(void)state;
	unsigned bad = 99;
	int n = 0;

	assert_int_equal(prom_parse(text, strlen(text), count_cb, &n, &bad), 10);
	assert_int_equal(n, 10);
	assert_int_equal(bad, 1);

	struct prom_sample s;
	const char *l = "label_escapes{a=\"x\\\"y\\\\z\\n\",b=\"\"} +Inf";
	assert_int_equal(prom_parse_line(l, strlen(l), &s), 0);
	assert_string_equal(s.name, "label_escapes");
	assert_string_equal(prom_label(&s, "a"), "x\"y\\z\n");
	assert_string_equal(prom_label(&s, "b"), "");
	assert_null(prom_label(&s, "c"));
	assert_true(isinf(s.value));
	l = "no_labels 4.5e3";
	assert_int_equal(prom_parse_line(l, strlen(l), &s), 0);
	assert_true(s.value == 4500);
	assert_int_equal(s.n_labels, 0);
	l = "  # comment";
	assert_int_equal(prom_parse_line(l, strlen(l), &s), 1);
	assert_int_equal(prom_parse_line("", 0, &s), 1);
	static const char *const bad_lines[] = {
	        "x{a=\"1\"}",     "x{a=1} 2",    "x{a=\"1\" 2", "x{=\"1\"} 2", "x 1 2 3",
	        "x{a=\"\\q\"} 1", "{a=\"1\"} 2", "x 12abc",     "x{a=\"1\"}2",
	};
	for (size_t i = 0; i < sizeof(bad_lines) / sizeof(bad_lines[0]); i++)
		if (prom_parse_line(bad_lines[i], strlen(bad_lines[i]), &s) != -EBADMSG)
			fail_msg("accepted: %s", bad_lines[i]);
	l = "x{a=\"1\",} 2\r";
	assert_int_equal(prom_parse_line(l, strlen(l), &s),
	                 0); /* trailing comma and CR are legal */
	assert_true(s.value == 2);
}

static void test_collect_and_delta(void **state)
{
	(void)state;
	struct prom_counts c = {0}, before = {0}, d = {0};
	static const char *const g[] = {"verb", "code"};

	assert_int_equal(
	        prom_collect(text, strlen(text), "apiserver_request_total", NULL, 0, g, 2, &c), 5);
	assert_true(prom_counts_get(&c, "LIST 200") == 5);
	assert_true(prom_counts_get(&c, "POST 201") == 2999);
	assert_true(prom_counts_get(&c, "PUT 409") == 7);
	assert_true(prom_counts_get(&c, "GET 200") == 0);
	assert_true(prom_counts_total(&c) == 3011);

	static const char *const f[] = {"verb", "LIST", "resource", "pods"};
	struct prom_counts lp = {0};
	assert_int_equal(
	        prom_collect(text, strlen(text), "apiserver_request_total", f, 2, NULL, 0, &lp), 1);
	assert_true(prom_counts_get(&lp, "") == 3);
	prom_counts_free(&lp);

	static const char *const gn[] = {"name"};
	struct prom_counts q = {0};
	assert_int_equal(prom_collect(text, strlen(text), "workqueue_depth", NULL, 0, gn, 1, &q),
	                 2);
	assert_true(prom_counts_get(&q, "replicaset") == 12);
	assert_true(prom_counts_total(&q) == 15);
	prom_counts_free(&q);

	prom_counts_add(&before, "LIST 200", 2);
	prom_counts_add(&before, "POST 201", 2999);
	prom_counts_add(&before, "DELETE 200", 4); /* gone from after: not in the delta */
	assert_int_equal(prom_counts_delta(&c, &before, &d), 0);
	prom_counts_sort(&d);
	assert_int_equal(d.n, 2); /* POST unchanged: dropped */
	assert_string_equal(d.items[0].key, "LIST 200");
	assert_true(d.items[0].v == 3);
	assert_string_equal(d.items[1].key, "PUT 409");
	assert_true(d.items[1].v == 7);
	prom_counts_free(&c);
	prom_counts_free(&before);
	prom_counts_free(&d);
}

static int stop_cb(const struct prom_sample *s, void *ud)
{
	(void)s;
	return ++*(int *)ud == 2 ? -ECANCELED : 0;
}

static void test_callback_stops(void **state)
{
	(void)state;
	int n = 0;
	assert_int_equal(prom_parse(text, strlen(text), stop_cb, &n, NULL), -ECANCELED);
	assert_int_equal(n, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_parse),
	                                   cmocka_unit_test(test_collect_and_delta),
	                                   cmocka_unit_test(test_callback_stops)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
