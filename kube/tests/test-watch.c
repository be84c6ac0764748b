/* SPDX-License-Identifier: Apache-2.0 */
/* kube/tests/test-watch.c - watch stream splitter: every split point of a real-shaped stream
 * yields the same events; garbage, oversize and truncation are reported. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kube/model.h"
#include "kube/tests/helpers.h"
#include "kube/watch.h"

struct sink {
	int n;
	char rv[16][32];
};

static int on_event(const char *json, size_t len, void *ud)
{
	struct sink *s = ud;
	enum kube_watch_type t;
	void *o;
	int r = kube_decode_watch_event(KUBE_KIND_POD, json, len, 0, &t, &o);
	if (r < 0)
		return r;
	if (s->n < 16) {
		const char *rv = t == KUBE_WATCH_ERROR
		                         ? "err"
		                         : ((struct kube_pod *)o)->meta.resource_version;
		snprintf(s->rv[s->n], sizeof(s->rv[0]), "%s", rv ? rv : "");
	}
	s->n++;
	kube_object_free(o);
	return 0;
}

static void test_every_split(void **state)
{
	(void)state;
	size_t len;
	char *b = fixture("watch-events.jsonl", &len);
	for (size_t cut1 = 0; cut1 <= len; cut1 += 1) {
		size_t cut2 = cut1 + (len - cut1) / 2;
		struct kube_watch_splitter sp;
		struct sink s = {0};
		kube_watch_splitter_init(&sp, 0);
		int a = kube_watch_splitter_feed(&sp, b, cut1, on_event, &s);
		int c = kube_watch_splitter_feed(&sp, b + cut1, cut2 - cut1, on_event, &s);
		int d = kube_watch_splitter_feed(&sp, b + cut2, len - cut2, on_event, &s);
		assert_true(a >= 0 && c >= 0 && d >= 0);
		assert_int_equal(a + c + d, 5);
		assert_int_equal(s.n, 5);
		assert_string_equal(s.rv[1], "201");
		assert_string_equal(s.rv[2], "250");
		assert_string_equal(s.rv[4], "err");
		assert_int_equal(kube_watch_splitter_finish(&sp), 0);
		kube_watch_splitter_free(&sp);
	}
	/* byte by byte */
	struct kube_watch_splitter sp;
	struct sink s = {0};
	kube_watch_splitter_init(&sp, 0);
	for (size_t i = 0; i < len; i++)
		assert_true(kube_watch_splitter_feed(&sp, b + i, 1, on_event, &s) >= 0);
	assert_int_equal(s.n, 5);
	kube_watch_splitter_free(&sp);
	free(b);
}

static int count(const char *json, size_t len, void *ud)
{
	(void)json;
	(void)len;
	(*(int *)ud)++;
	return 0;
}

static void test_framing(void **state)
{
	(void)state;
	struct kube_watch_splitter sp;
	int n = 0;
	/* braces and escaped quotes inside strings, no newlines, CRLF */
	const char *in = "{\"a\":\"}{\\\"]\"}{\"b\":[{}]}\r\n  {\"c\":\"\\\\\"}";
	kube_watch_splitter_init(&sp, 0);
	assert_int_equal(kube_watch_splitter_feed(&sp, in, strlen(in), count, &n), 3);
	assert_int_equal(kube_watch_splitter_finish(&sp), 0);
	kube_watch_splitter_free(&sp);

	kube_watch_splitter_init(&sp, 0);
	assert_int_equal(kube_watch_splitter_feed(&sp, "x{}", 3, count, &n), -EBADMSG);
	assert_int_equal(kube_watch_splitter_feed(&sp, "{}", 2, count, &n), -EBADMSG); /* sticky */
	kube_watch_splitter_free(&sp);

	kube_watch_splitter_init(&sp, 0);
	assert_int_equal(kube_watch_splitter_feed(&sp, "{]}", 3, count, &n), -EBADMSG);
	kube_watch_splitter_free(&sp);

	kube_watch_splitter_init(&sp, 16);
	assert_int_equal(
	        kube_watch_splitter_feed(&sp, "{\"a\":\"0123456789abcdef\"}", 24, count, &n),
	        -E2BIG);
	kube_watch_splitter_free(&sp);
	kube_watch_splitter_init(&sp, 16);
	assert_int_equal(kube_watch_splitter_feed(&sp, "{\"a\":\"01234", 11, count, &n), 0);
	assert_int_equal(kube_watch_splitter_feed(&sp, "56789abcdef\"}", 13, count, &n), -E2BIG);
	kube_watch_splitter_free(&sp);

	kube_watch_splitter_init(&sp, 0);
	assert_int_equal(kube_watch_splitter_feed(&sp, "{\"a\":", 5, count, &n), 0);
	assert_int_equal(kube_watch_splitter_finish(&sp), -EPIPE);
	kube_watch_splitter_free(&sp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_every_split),
	        cmocka_unit_test(test_framing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
