/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kube/tests/test-evcorr.c: the EventCorrelator against upstream's rules
 * (client-go tools/record events_cache_test.go cases, rewritten): counting of identical
 * events, aggregation after 10 distinct messages in 10 minutes, the interval reset, the spam
 * filter's burst and refill, LRU eviction, the PATCH body, UpdateState.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/evcorr.h"

#define SEC INT64_C(1000000000)
#define T0  (INT64_C(1767225600) * SEC) /* 2026-01-01T00:00:00Z */

static struct kube_evc_event ev(const char *name, const char *reason, const char *msg)
{
	return (struct kube_evc_event){.component = "replicaset-controller",
	                               .host = "h",
	                               .kind = "ReplicaSet",
	                               .ns = "default",
	                               .name = name,
	                               .uid = "u-1",
	                               .api_version = "apps/v1",
	                               .type = "Warning",
	                               .reason = reason,
	                               .message = msg};
}

static void test_identical_events_counted(void **state)
{
	(void)state;
	struct kube_evc *c;
	struct kube_evc_result r1, r2, r3;
	struct kube_evc_event e = ev("rs", "FailedCreate", "Error creating: quota");
	assert_int_equal(kube_evc_new(&c), 0);
	assert_int_equal(kube_evc_correlate(c, &e, T0, &r1), 0);
	assert_int_equal(r1.action, KUBE_EVC_CREATE);
	assert_int_equal(r1.count, 1);
	assert_string_equal(r1.message, "Error creating: quota");
	assert_false(r1.aggregated);
	char want[64];
	snprintf(want, sizeof want, "rs.%llx", (unsigned long long)T0);
	assert_string_equal(r1.event_name, want);
	assert_int_equal(kube_evc_correlate(c, &e, T0 + 5 * SEC, &r2), 0);
	assert_int_equal(r2.action, KUBE_EVC_PATCH);
	assert_int_equal(r2.count, 2);
	assert_string_equal(r2.event_name, want); /* the same Event object */
	assert_true(r2.first == T0);
	assert_true(r2.last == T0 + 5 * SEC);
	char *body = NULL;
	assert_int_equal(kube_evc_patch_body(&r2, &body), 0);
	assert_string_equal(body, "{\"count\":2,\"lastTimestamp\":\"2026-01-01T00:00:05Z\","
	                          "\"message\":\"Error creating: quota\"}");
	free(body);
	/* another reason or another object is another Event */
	struct kube_evc_event other = ev("rs2", "FailedCreate", "Error creating: quota");
	assert_int_equal(kube_evc_correlate(c, &other, T0 + 6 * SEC, &r3), 0);
	assert_int_equal(r3.action, KUBE_EVC_CREATE);
	kube_evc_result_free(&r1);
	kube_evc_result_free(&r2);
	kube_evc_result_free(&r3);
	kube_evc_free(c);
}

static void test_aggregation_after_ten_messages(void **state)
{
	(void)state;
	struct kube_evc *c;
	struct kube_evc_result r;
	char msg[64];
	char *agg_name = NULL;
	assert_int_equal(kube_evc_new(&c), 0);
	for (int i = 0; i < 9; i++) {
		snprintf(msg, sizeof msg, "Error creating: pods \"rs-%d\" is forbidden", i);
		struct kube_evc_event e = ev("rs", "FailedCreate", msg);
		assert_int_equal(kube_evc_correlate(c, &e, T0 + i * SEC, &r), 0);
		assert_int_equal(r.action, KUBE_EVC_CREATE);
		assert_false(r.aggregated);
		assert_string_equal(r.message, msg);
		kube_evc_result_free(&r);
	}
	/* the tenth distinct message: a combined event is created */
	struct kube_evc_event e10 =
	        ev("rs", "FailedCreate", "Error creating: pods \"rs-9\" is forbidden");
	assert_int_equal(kube_evc_correlate(c, &e10, T0 + 9 * SEC, &r), 0);
	assert_int_equal(r.action, KUBE_EVC_CREATE);
	assert_true(r.aggregated);
	assert_string_equal(
	        r.message,
	        "(combined from similar events): Error creating: pods \"rs-9\" is forbidden");
	assert_int_equal(r.count, 1);
	agg_name = strdup(r.event_name);
	kube_evc_result_free(&r);
	/* the next distinct one counts on the combined event */
	struct kube_evc_event e11 =
	        ev("rs", "FailedCreate", "Error creating: pods \"rs-10\" is forbidden");
	assert_int_equal(kube_evc_correlate(c, &e11, T0 + 10 * SEC, &r), 0);
	assert_int_equal(r.action, KUBE_EVC_PATCH);
	assert_true(r.aggregated);
	assert_int_equal(r.count, 2);
	assert_string_equal(r.event_name, agg_name);
	assert_true(r.first == T0 + 9 * SEC);
	assert_string_equal(
	        r.message,
	        "(combined from similar events): Error creating: pods \"rs-10\" is forbidden");
	kube_evc_result_free(&r);
	/* other reasons are not combined */
	struct kube_evc_event n = ev("rs", "SuccessfulCreate", "Created pod: rs-x");
	assert_int_equal(kube_evc_correlate(c, &n, T0 + 11 * SEC, &r), 0);
	assert_false(r.aggregated);
	assert_int_equal(r.action, KUBE_EVC_CREATE);
	kube_evc_result_free(&r);
	/* after more than 600 s without a similar event the group starts over */
	struct kube_evc_event e12 = ev("rs", "FailedCreate", "Error creating: late");
	assert_int_equal(kube_evc_correlate(c, &e12, T0 + 10 * SEC + 601 * SEC, &r), 0);
	assert_false(r.aggregated);
	assert_int_equal(r.action, KUBE_EVC_CREATE);
	kube_evc_result_free(&r);
	free(agg_name);
	kube_evc_free(c);
}

static void test_spam_filter(void **state)
{
	(void)state;
	struct kube_evc *c;
	struct kube_evc_result r;
	char msg[32];
	assert_int_equal(kube_evc_new(&c), 0);
	int written = 0;
	for (int i = 0; i < 30; i++) {
		snprintf(msg, sizeof msg, "Created pod: rs-%d", i);
		struct kube_evc_event e = ev("rs", "SuccessfulCreate", msg);
		e.type = "Normal";
		assert_int_equal(kube_evc_correlate(c, &e, T0, &r), 0);
		if (r.action != KUBE_EVC_SKIP)
			written++;
		kube_evc_result_free(&r);
	}
	assert_int_equal(written, KUBE_EVC_SPAM_BURST);
	/* one token per 300 s */
	struct kube_evc_event e = ev("rs", "SuccessfulCreate", "Created pod: later");
	assert_int_equal(kube_evc_correlate(c, &e, T0 + 299 * SEC, &r), 0);
	assert_int_equal(r.action, KUBE_EVC_SKIP);
	kube_evc_result_free(&r);
	assert_int_equal(kube_evc_correlate(c, &e, T0 + 301 * SEC, &r), 0);
	assert_int_not_equal(r.action, KUBE_EVC_SKIP);
	kube_evc_result_free(&r);
	/* another object has its own bucket */
	struct kube_evc_event o = ev("other", "SuccessfulCreate", "Created pod: o");
	assert_int_equal(kube_evc_correlate(c, &o, T0 + 301 * SEC, &r), 0);
	assert_int_equal(r.action, KUBE_EVC_CREATE);
	kube_evc_result_free(&r);
	kube_evc_free(c);
}

static void test_lru_eviction_and_update_state(void **state)
{
	(void)state;
	struct kube_evc *c;
	struct kube_evc_result r;
	char name[32];
	assert_int_equal(kube_evc_new(&c), 0);
	struct kube_evc_event first = ev("rs-first", "FailedCreate", "boom");
	assert_int_equal(kube_evc_correlate(c, &first, T0, &r), 0);
	assert_int_equal(r.action, KUBE_EVC_CREATE);
	/* the server's state (same values) is recorded under the written event's key */
	assert_int_equal(kube_evc_update_state(c, &first, &r), 0);
	kube_evc_result_free(&r);
	assert_int_equal(kube_evc_correlate(c, &first, T0 + SEC, &r), 0);
	assert_int_equal(r.action, KUBE_EVC_PATCH);
	assert_int_equal(r.count, 2);
	kube_evc_result_free(&r);
	for (int i = 0; i < KUBE_EVC_CACHE_SIZE; i++) {
		snprintf(name, sizeof name, "rs-%d", i);
		struct kube_evc_event e = ev(name, "FailedCreate", "boom");
		assert_int_equal(kube_evc_correlate(c, &e, T0 + 2 * SEC, &r), 0);
		kube_evc_result_free(&r);
	}
	/* rs-first's entries were the least recently used: a fresh Event */
	assert_int_equal(kube_evc_correlate(c, &first, T0 + 3 * SEC, &r), 0);
	assert_int_equal(r.action, KUBE_EVC_CREATE);
	assert_int_equal(r.count, 1);
	kube_evc_result_free(&r);
	kube_evc_free(c);
}

/* the sink correlates later than the recorder made the event: a single Event keeps makeEvent's
 * time (name, first/last timestamps), a repeat keeps the first one's name and first timestamp,
 * and the combined Event is made at correlation time */
static void test_record_time_kept(void **state)
{
	(void)state;
	struct kube_evc *c;
	struct kube_evc_result r;
	struct kube_evc_event e = ev("rs", "FailedCreate", "Error creating: quota");
	char want[64];
	assert_int_equal(kube_evc_new(&c), 0);
	e.t = T0;
	assert_int_equal(kube_evc_correlate(c, &e, T0 + 5 * SEC, &r), 0);
	snprintf(want, sizeof want, "rs.%llx", (unsigned long long)T0);
	assert_string_equal(r.event_name, want);
	assert_true(r.first == T0 && r.last == T0);
	kube_evc_result_free(&r);
	e.t = T0 + 1 * SEC;
	assert_int_equal(kube_evc_correlate(c, &e, T0 + 6 * SEC, &r), 0);
	assert_int_equal(r.action, KUBE_EVC_PATCH);
	assert_string_equal(r.event_name, want);
	assert_true(r.first == T0 && r.last == T0 + 1 * SEC);
	kube_evc_result_free(&r);
	for (int i = 0; i < 9; i++) {
		char m[32];
		snprintf(m, sizeof m, "Error creating: %d", i);
		e.message = m;
		e.t = T0 + 2 * SEC;
		assert_int_equal(kube_evc_correlate(c, &e, T0 + 7 * SEC, &r), 0);
		if (i == 8) {
			assert_true(r.aggregated);
			snprintf(want, sizeof want, "rs.%llx", (unsigned long long)(T0 + 7 * SEC));
			assert_string_equal(r.event_name, want);
			assert_true(r.first == T0 + 7 * SEC && r.last == T0 + 7 * SEC);
		} else {
			assert_false(r.aggregated);
		}
		kube_evc_result_free(&r);
	}
	kube_evc_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_identical_events_counted),
	        cmocka_unit_test(test_aggregation_after_ten_messages),
	        cmocka_unit_test(test_spam_filter),
	        cmocka_unit_test(test_lru_eviction_and_update_state),
	        cmocka_unit_test(test_record_time_kept),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
