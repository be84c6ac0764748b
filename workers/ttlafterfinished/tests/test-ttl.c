/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/ttlafterfinished/tests/test-ttl.c: the TTL-after-finished decisions against upstream's
 * ttlafterfinished_controller_test.go TestTimeLeft cases (Complete and Failed, no TTL, 0 s, 10 s,
 * finished 10 s ago with 15 s), plus processTTL's verdicts, the JSON reading (first finished
 * condition wins, a False one does not count, a missing lastTransitionTime) and the histogram.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/ctlmetrics.h"
#include "workers/ttlafterfinished/ttl.h"

#define SEC 1000000000LL

/* upstream's newJob(completionTime, failedTime, ttl) */
static struct ttl_job job(kube_time_t completed, kube_time_t failed, const int64_t *ttl)
{
	struct ttl_job j = {.ns = "default", .name = "foobar"};
	if (completed || failed) {
		j.finished = true;
		j.finish_at = completed ? completed : failed;
	}
	if (ttl) {
		j.has_ttl = true;
		j.ttl_seconds = *ttl;
	}
	return j;
}

static void test_time_left(void **state)
{
	(void)state;
	const kube_time_t now = 1764000000LL * SEC + 123456789;
	const int64_t t0 = 0, t10 = 10, t15 = 15, t100 = 100;
	struct {
		const char *name;
		kube_time_t completed, failed;
		const int64_t *ttl;
		bool err;
		const char *err_str;
		int64_t left;
		kube_time_t expire;
	} cases[] = {
	        {"Error case: Job unfinished", 0, 0, &t100, true, "should not be cleaned up", 0, 0},
	        {"Error case: Job completed now, no TTL", now, 0, NULL, true,
	         "should not be cleaned up", 0, 0},
	        {"Job completed now, 0s TTL", now, 0, &t0, false, NULL, 0, now},
	        {"Job completed now, 10s TTL", now, 0, &t10, false, NULL, 10 * SEC, now + 10 * SEC},
	        {"Job completed 10s ago, 15s TTL", now - 10 * SEC, 0, &t15, false, NULL, 5 * SEC,
	         now + 5 * SEC},
	        {"Error case: Job failed now, no TTL", 0, now, NULL, true,
	         "should not be cleaned up", 0, 0},
	        {"Job failed now, 0s TTL", 0, now, &t0, false, NULL, 0, now},
	        {"Job failed now, 10s TTL", 0, now, &t10, false, NULL, 10 * SEC, now + 10 * SEC},
	        {"Job failed 10s ago, 15s TTL", 0, now - 10 * SEC, &t15, false, NULL, 5 * SEC,
	         now + 5 * SEC},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ttl_job j = job(cases[i].completed, cases[i].failed, cases[i].ttl);
		int64_t left = -1;
		kube_time_t expire = -1;
		bool future = true;
		enum ttl_err e = ttl_time_left(&j, now, &left, &expire, &future);
		print_message("%s\n", cases[i].name);
		assert_int_equal(e != TTL_OK, cases[i].err);
		if (cases[i].err) {
			char *msg = ttl_err_text(e, &j);
			assert_non_null(strstr(msg, cases[i].err_str));
			assert_non_null(strstr(msg, "default/foobar"));
			free(msg);
			continue;
		}
		assert_int_equal(left, cases[i].left);
		assert_int_equal(expire, cases[i].expire);
		assert_false(future);
	}
}

static void test_process(void **state)
{
	(void)state;
	const kube_time_t now = 1764000000LL * SEC;
	const int64_t t15 = 15, t5 = 5;
	int64_t after = 0;
	kube_time_t at = 0;
	enum ttl_err e;

	/* not expired: requeue after the remaining time */
	struct ttl_job j = job(now - 10 * SEC, 0, &t15);
	assert_int_equal(ttl_process(&j, now, &after, &at, &e), TTL_REQUEUE);
	assert_int_equal(after, 5 * SEC);
	/* expired: delete, expired at finish + ttl */
	j = job(now - 10 * SEC, 0, &t5);
	assert_int_equal(ttl_process(&j, now, &after, &at, &e), TTL_EXPIRED);
	assert_int_equal(at, now - 5 * SEC);
	/* exactly at expiry counts as expired (timeLeft <= 0) */
	j = job(now - 5 * SEC, 0, &t5);
	assert_int_equal(ttl_process(&j, now, &after, &at, &e), TTL_EXPIRED);
	/* being deleted, no TTL, unfinished: nothing */
	j = job(now - 10 * SEC, 0, &t5);
	j.deleting = true;
	assert_int_equal(ttl_process(&j, now, &after, &at, &e), TTL_SKIP);
	j = job(now - 10 * SEC, 0, NULL);
	assert_int_equal(ttl_process(&j, now, &after, &at, &e), TTL_SKIP);
	j = job(0, 0, &t5);
	assert_int_equal(ttl_process(&j, now, &after, &at, &e), TTL_SKIP);
	/* finished without a transition time: an error (retried), as jobFinishTime's */
	j = job(now, 0, &t5);
	j.finish_at = 0;
	assert_int_equal(ttl_process(&j, now, &after, &at, &e), TTL_ERROR);
	assert_int_equal(e, TTL_ERR_NO_FINISH_TIME);
	char *msg = ttl_err_text(e, &j);
	assert_string_equal(msg, "unable to find the time when the Job default/foobar finished");
	free(msg);
	/* finished in the future (clock skew): requeued for the whole TTL and more */
	j = job(now + 3 * SEC, 0, &t5);
	assert_int_equal(ttl_process(&j, now, &after, &at, &e), TTL_REQUEUE);
	assert_int_equal(after, 8 * SEC);
}

static void test_parse(void **state)
{
	(void)state;
	static const char js[] =
	        "{\"metadata\":{\"name\":\"j\",\"namespace\":\"ns\",\"uid\":\"u-1\"},"
	        "\"spec\":{\"ttlSecondsAfterFinished\":30},\"status\":{\"conditions\":["
	        "{\"type\":\"SuccessCriteriaMet\",\"status\":\"True\",\"lastTransitionTime\":"
	        "\"2026-01-01T00:00:00Z\"},"
	        "{\"type\":\"Failed\",\"status\":\"False\",\"lastTransitionTime\":"
	        "\"2026-01-01T00:00:01Z\"},"
	        "{\"type\":\"Complete\",\"status\":\"True\",\"lastTransitionTime\":"
	        "\"2026-01-01T00:00:02Z\"},"
	        "{\"type\":\"Failed\",\"status\":\"True\",\"lastTransitionTime\":"
	        "\"2026-01-01T00:00:03Z\"}]}}";
	struct ttl_job j;
	kube_time_t want;

	assert_int_equal(ttl_job_parse(js, strlen(js), &j), 0);
	assert_string_equal(j.ns, "ns");
	assert_string_equal(j.name, "j");
	assert_string_equal(j.uid, "u-1");
	assert_false(j.deleting);
	assert_true(j.has_ttl);
	assert_int_equal(j.ttl_seconds, 30);
	assert_true(j.finished);
	assert_int_equal(kube_time_parse("2026-01-01T00:00:02Z", 20, &want), 0);
	assert_int_equal(j.finish_at, want); /* the first True Complete/Failed condition */
	assert_true(ttl_needs_cleanup(&j));

	static const char running[] = "{\"metadata\":{\"name\":\"j\",\"deletionTimestamp\":"
	                              "\"2026-01-01T00:00:00Z\"},\"spec\":{},\"status\":{}}";
	assert_int_equal(ttl_job_parse(running, strlen(running), &j), 0);
	assert_true(j.deleting);
	assert_false(j.has_ttl);
	assert_false(j.finished);
	assert_false(ttl_needs_cleanup(&j));

	static const char no_ltt[] = "{\"spec\":{\"ttlSecondsAfterFinished\":0},\"status\":{"
	                             "\"conditions\":[{\"type\":\"Failed\",\"status\":\"True\"}]}}";
	assert_int_equal(ttl_job_parse(no_ltt, strlen(no_ltt), &j), 0);
	assert_true(ttl_needs_cleanup(&j));
	assert_int_equal(j.finish_at, 0);

	assert_int_equal(ttl_job_parse("[1]", 3, &j), -EBADMSG);
	assert_int_equal(ttl_job_parse("{", 1, &j), -EBADMSG);
}

static void test_metrics(void **state)
{
	(void)state;
	static const struct kcmd_controller c = {.abi = KCMD_CONTROLLER_ABI,
	                                         .name = TTL_CONTROLLER,
	                                         .metrics = ttl_metric_decl,
	                                         .n_metrics = TTL_M_N};
	int fd = ctlm_create(&c);
	struct kcmd_metrics *w, *r;
	char *text = NULL;
	size_t len = 0;

	assert_true(fd >= 0);
	assert_int_equal(ctlm_attach(&c, fd, true, &w), 0);
	assert_int_equal(ctlm_attach(&c, fd, false, &r), 0);
	assert_int_equal(kcmd_metric_observe(w, TTL_M_DELETION, NULL, 0.05), 0); /* le 0.1 */
	/* le 0.1 (upper bound inclusive) */
	assert_int_equal(kcmd_metric_observe(w, TTL_M_DELETION, NULL, 0.1), 0);
	assert_int_equal(kcmd_metric_observe(w, TTL_M_DELETION, NULL, 3.0), 0);    /* le 3.2 */
	assert_int_equal(kcmd_metric_observe(w, TTL_M_DELETION, NULL, 1000.0), 0); /* +Inf */
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	ctlm_render(r, f);
	assert_int_equal(fclose(f), 0);
	assert_non_null(strstr(text, "# HELP ttl_after_finished_controller_job_deletion_duration_"
	                             "seconds [ALPHA] The time it took to delete the job since it "
	                             "became eligible for deletion\n"
	                             "# TYPE ttl_after_finished_controller_job_deletion_duration_"
	                             "seconds histogram\n"));
	assert_non_null(strstr(text, "ttl_after_finished_controller_job_deletion_duration_seconds_"
	                             "bucket{le=\"0.1\"} 2\n"));
	assert_non_null(strstr(text, "ttl_after_finished_controller_job_deletion_duration_seconds_"
	                             "bucket{le=\"1.6\"} 2\n"));
	assert_non_null(strstr(text, "ttl_after_finished_controller_job_deletion_duration_seconds_"
	                             "bucket{le=\"3.2\"} 3\n"));
	assert_non_null(strstr(text, "ttl_after_finished_controller_job_deletion_duration_seconds_"
	                             "bucket{le=\"819.2\"} 3\n"));
	assert_non_null(strstr(text, "ttl_after_finished_controller_job_deletion_duration_seconds_"
	                             "bucket{le=\"+Inf\"} 4\n"));
	assert_non_null(strstr(
	        text, "ttl_after_finished_controller_job_deletion_duration_seconds_count 4\n"));
	assert_non_null(strstr(
	        text, "ttl_after_finished_controller_job_deletion_duration_seconds_sum 1003.15\n"));
	free(text);
	ctlm_detach(w);
	ctlm_detach(r);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_time_left),
	        cmocka_unit_test(test_process),
	        cmocka_unit_test(test_parse),
	        cmocka_unit_test(test_metrics),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
