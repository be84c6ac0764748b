/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/job/tests/test-job.c: the Job controller's pure parts (job.h) against the cases of
 * upstream's indexed_job_utils_test.go and backoff_utils_test.go (v1.37), read for their facts.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "workers/job/job.h"
#include "lib/ctlmetrics.h"

#define SEC INT64_C(1000000000)

static char *roundtrip(const char *in, int64_t completions)
{
	struct job_intervals iv = {0};
	char *s = NULL;

	assert_int_equal(job_iv_parse(in, completions, &iv), 0);
	assert_int_equal(job_iv_string(&iv, &s), 0);
	job_iv_free(&iv);
	return s;
}

static void check_parse(const char *in, int64_t completions, const char *want, int64_t total)
{
	struct job_intervals iv = {0};
	char *s = NULL;

	assert_int_equal(job_iv_parse(in, completions, &iv), 0);
	assert_int_equal(job_iv_string(&iv, &s), 0);
	assert_string_equal(s, want);
	assert_int_equal(job_iv_total(&iv), total);
	free(s);
	job_iv_free(&iv);
}

static void test_parse(void **state)
{
	(void)state;
	check_parse("", 10, "", 0);
	check_parse("1", 10, "1", 1);
	check_parse("1,3-5,7", 10, "1,3-5,7", 5);
	check_parse("1-3,4,5-7,9", 10, "1-7,9", 8); /* adjacent intervals merge */
	check_parse("0-4,6,9-11", 8, "0-4,6", 6);   /* starts at/past completions end the parse */
	check_parse("0-4,6-11", 8, "0-4,6,7", 7);   /* a last index past it is clamped */
	check_parse("a,0-2,x-3,4", 10, "0-2,4", 4); /* corrupt intervals are skipped */
	check_parse("3,7", 5, "3", 1);
	check_parse("0,1", 10, "0,1", 2); /* two adjacent indexes print with a comma */
}

static void test_string_and_has(void **state)
{
	struct job_intervals a = {0}, m = {0};
	int64_t idx[] = {0, 2, 3, 8, 8, 9};
	char *s = NULL;

	(void)state;
	assert_int_equal(job_iv_parse("1,5-6", 100, &a), 0);
	assert_int_equal(job_iv_with(&a, idx, 6, &m), 0);
	assert_int_equal(job_iv_string(&m, &s), 0);
	assert_string_equal(s, "0-3,5,6,8,9");
	assert_true(job_iv_has(&m, 0));
	assert_true(job_iv_has(&m, 3));
	assert_false(job_iv_has(&m, 4));
	assert_true(job_iv_has(&m, 6));
	assert_false(job_iv_has(&m, 7));
	assert_true(job_iv_has(&m, 9));
	assert_false(job_iv_has(&m, 10));
	free(s);
	s = roundtrip("0-3,5,6,8,9", 100);
	assert_string_equal(s, "0-3,5,6,8,9");
	free(s);
	job_iv_free(&a);
	job_iv_free(&m);
}

static void check_pending(const char *non_pending, size_t count, int64_t completions,
                          const int64_t *want, size_t n_want)
{
	struct job_intervals iv = {0};
	int64_t out[64];

	assert_int_equal(job_iv_parse(non_pending, completions, &iv), 0);
	assert_int_equal(job_first_pending(&iv, count, completions, out), n_want);
	for (size_t i = 0; i < n_want; i++)
		assert_int_equal(out[i], want[i]);
	job_iv_free(&iv);
}

static void test_first_pending(void **state)
{
	(void)state;
	check_pending("", 0, 5, NULL, 0);
	check_pending("", 2, 5, (int64_t[]){0, 1}, 2);
	check_pending("1", 3, 5, (int64_t[]){0, 2, 3}, 3);
	check_pending("0,2,3", 3, 6, (int64_t[]){1, 4, 5}, 3);
	check_pending("1,3-5", 5, 10, (int64_t[]){0, 2, 6, 7, 8}, 5);
	check_pending("0-4", 5, 5, NULL, 0); /* nothing left */
	check_pending("2,4", 10, 5, (int64_t[]){0, 1, 3}, 3);
}

static void test_index(void **state)
{
	(void)state;
	assert_int_equal(job_parse_index("0"), 0);
	assert_int_equal(job_parse_index("12"), 12);
	assert_int_equal(job_parse_index("+3"), 3); /* strconv.Atoi accepts a sign */
	assert_int_equal(job_parse_index("-1"), -1);
	assert_int_equal(job_parse_index(""), -1);
	assert_int_equal(job_parse_index("1a"), -1);
	assert_int_equal(job_parse_index(NULL), -1);
}

static void test_backoff(void **state)
{
	struct job_backoff b;
	kube_time_t now = 1000 * SEC;
	const uint64_t base = 10 * 1000000ull, max = 600 * 1000000ull;

	(void)state;
	/* no failure: no wait */
	job_backoff_record(NULL, 0, &b);
	assert_int_equal(b.failures_after_last_success, 0);
	assert_int_equal(job_backoff_remaining_us(&b, now, base, max), 0);
	/* one failure 5s ago: 10s - 5s */
	struct job_finished one[] = {{true, now - 5 * SEC}};
	job_backoff_record(one, 1, &b);
	assert_int_equal(b.failures_after_last_success, 1);
	assert_int_equal(job_backoff_remaining_us(&b, now, base, max), 5 * 1000000ull);
	/* two failures, the newest 5s ago: 20s - 5s */
	struct job_finished two[] = {{true, now - 30 * SEC}, {true, now - 5 * SEC}};
	job_backoff_record(two, 2, &b);
	assert_int_equal(b.failures_after_last_success, 2);
	assert_int_equal(b.last_failure, now - 5 * SEC);
	assert_int_equal(job_backoff_remaining_us(&b, now, base, max), 15 * 1000000ull);
	/* a success after them resets the count; failures after it count */
	struct job_finished mix[] = {{true, now - 30 * SEC},
	                             {false, now - 20 * SEC},
	                             {true, now - 10 * SEC},
	                             {true, now - 2 * SEC}};
	job_backoff_record(mix, 4, &b);
	assert_int_equal(b.failures_after_last_success, 2);
	assert_int_equal(b.last_failure, now - 2 * SEC);
	assert_int_equal(job_backoff_remaining_us(&b, now, base, max), 18 * 1000000ull);
	/* a failure at the success's own time does not count (not After) */
	struct job_finished tie[] = {{false, now - 3 * SEC}, {true, now - 3 * SEC}};
	job_backoff_record(tie, 2, &b);
	assert_int_equal(b.failures_after_last_success, 0);
	/* many failures: capped at the maximum */
	b = (struct job_backoff){.failures_after_last_success = 20, .last_failure = now};
	assert_int_equal(job_backoff_remaining_us(&b, now, base, max), max);
	/* elapsed past the backoff: none */
	b = (struct job_backoff){.failures_after_last_success = 1, .last_failure = now - 11 * SEC};
	assert_int_equal(job_backoff_remaining_us(&b, now, base, max), 0);
}

/* backoffLimitPerIndex: indexed_job_utils_test.go's TestIsIndexFailed, TestCalculateFailedIndexes,
 * TestGetPodsWithDelayedDeletionPerIndex, TestGetNewIndexFailureCountValue,
 * TestGetIndexFailureCount and backoff_utils_test.go's TestGetRemainingBackoffTimePerIndex. */
static struct job_pod fpod(const char *uid, int32_t fails, enum kube_pod_phase ph, int64_t ix,
                           bool tracking)
{
	return (struct job_pod){.uid = (char *)uid,
	                        .name = (char *)uid,
	                        .fail_count = fails,
	                        .phase = ph,
	                        .index = ix,
	                        .tracking = tracking,
	                        .pfp_count = true};
}

static char *failed_ix(const char *prev, struct job_pod *pods, size_t n, int64_t completions,
                       int64_t blpi)
{
	struct job_intervals pv = {0}, fi = {0};
	char *s = NULL;

	assert_int_equal(job_iv_parse(prev, completions, &pv), 0);
	assert_int_equal(job_failed_indexes(&pv, pods, n, completions, false, false, blpi, &fi), 0);
	assert_int_equal(job_iv_string(&fi, &s), 0);
	job_iv_free(&pv);
	job_iv_free(&fi);
	return s;
}

static void check_failed_ix(const char *prev, struct job_pod *pods, size_t n, int64_t completions,
                            int64_t blpi, const char *want)
{
	char *s = failed_ix(prev, pods, n, completions, blpi);
	assert_string_equal(s, want);
	free(s);
}

/* the uids of the delayed pods, in order, comma-separated */
static void check_delayed(struct job_pod *pods, size_t n, int64_t completions, int64_t blpi,
                          const char *want)
{
	struct job_intervals fi = {0}, si = {0};
	int64_t six[8];
	size_t ns = 0;
	char got[128] = "";

	assert_int_equal(job_failed_indexes(&(struct job_intervals){0}, pods, n, completions, false,
	                                    false, blpi, &fi),
	                 0);
	for (size_t i = 0; i < n; i++)
		if (pods[i].phase == KUBE_POD_SUCCEEDED && pods[i].tracking && pods[i].index >= 0 &&
		    pods[i].index < completions)
			six[ns++] = pods[i].index;
	assert_int_equal(job_iv_with(&(struct job_intervals){0}, six, ns, &si), 0);
	job_delayed_deletion(pods, n, completions, false, &si, &fi);
	for (size_t i = 0; i < n; i++)
		if (pods[i].delayed) {
			if (*got)
				strcat(got, ",");
			strcat(got, pods[i].uid);
		}
	assert_string_equal(got, want);
	job_iv_free(&fi);
	job_iv_free(&si);
}

static void test_backoff_limit_per_index(void **state)
{
	(void)state;
	/* parseInt32 */
	assert_int_equal(job_parse_int32(NULL), 0);
	assert_int_equal(job_parse_int32("3"), 3);
	assert_int_equal(job_parse_int32("-1"), 0);
	assert_int_equal(job_parse_int32("abc"), 0);
	assert_int_equal(job_parse_int32("2147483648"), 0);
	assert_int_equal(job_parse_int32("2147483647"), INT32_MAX);

	/* isIndexFailed */
	struct job_pod p = fpod("a", 0, KUBE_POD_FAILED, 0, true);
	assert_true(job_index_failed(&p, false, false, 0));
	p = fpod("a", 1, KUBE_POD_FAILED, 1, true);
	assert_true(job_index_failed(&p, false, false, 1));
	p = fpod("a", 0, KUBE_POD_FAILED, 0, true);
	assert_false(job_index_failed(&p, false, false, 1));
	p.pfp_action = JOB_PFP_FAIL_INDEX; /* matching FailIndex */
	assert_true(job_index_failed(&p, true, true, 1));
	p = fpod("a", 5, KUBE_POD_FAILED, 0, true);
	p.pfp_action = JOB_PFP_IGNORE;
	p.pfp_count = false; /* an ignored failure never fails the index */
	assert_false(job_index_failed(&p, true, true, 0));
	p = fpod("a", 5, KUBE_POD_RUNNING, 0, true);
	assert_false(job_index_failed(&p, false, false, 0));

	/* calculateFailedIndexes */
	struct job_pod one[] = {fpod("a", 0, KUBE_POD_FAILED, 0, true),
	                        fpod("b", 1, KUBE_POD_FAILED, 1, true)};
	check_failed_ix(NULL, one, 2, 2, 1, "1"); /* one new index failed */
	struct job_pod nofin[] = {fpod("a", 0, KUBE_POD_FAILED, 0, false)};
	check_failed_ix(NULL, nofin, 1, 2, 0, ""); /* pod without finalizer is ignored */
	struct job_pod outside[] = {fpod("a", 0, KUBE_POD_FAILED, 3, false)};
	check_failed_ix(NULL, outside, 1, 2, 0, ""); /* pod outside completions is ignored */
	struct job_pod ext[] = {fpod("a", 0, KUBE_POD_FAILED, 1, true)};
	check_failed_ix("0", ext, 1, 2, 0, "0,1"); /* extend the failed indexes */
	check_failed_ix("", ext, 1, 2, 0, "1");    /* prev failed indexes empty */
	check_failed_ix("9", ext, 1, 2, 0, "1");   /* prev failed indexes outside completions */

	/* getPodsWithDelayedDeletionPerIndex */
	struct job_pod d1[] = {fpod("a", 0, KUBE_POD_FAILED, 0, true),
	                       fpod("b", 1, KUBE_POD_FAILED, 1, true),
	                       fpod("c", 0, KUBE_POD_FAILED, 2, true)};
	check_delayed(d1, 3, 3, 1, "a,c"); /* b's index failed */
	struct job_pod d2[] = {fpod("a", 0, KUBE_POD_FAILED, 0, false)};
	check_delayed(d2, 1, 2, 0, ""); /* without finalizer: its deletion already started */
	struct job_pod d3[] = {fpod("a", 0, KUBE_POD_FAILED, 4, true)};
	check_delayed(d3, 1, 2, 0, ""); /* index outside completions */
	struct job_pod d4[] = {fpod("a1", 0, KUBE_POD_FAILED, 0, true),
	                       fpod("a2", 1, KUBE_POD_RUNNING, 0, true)};
	check_delayed(d4, 2, 2, 1, ""); /* active index: already replaced */
	struct job_pod d5[] = {fpod("a1", 0, KUBE_POD_FAILED, 0, true),
	                       fpod("a2", 1, KUBE_POD_SUCCEEDED, 0, true)};
	check_delayed(d5, 2, 2, 1, ""); /* succeeded index */
	struct job_pod d6[] = {fpod("a1", 0, KUBE_POD_FAILED, 0, true),
	                       fpod("a3", 2, KUBE_POD_FAILED, 0, true),
	                       fpod("a2", 1, KUBE_POD_FAILED, 0, true)};
	check_delayed(d6, 3, 2, 4, "a3"); /* the highest failure count is kept */
	kube_time_t now = 1000 * SEC;
	struct job_pod d7[] = {fpod("a1", 1, KUBE_POD_FAILED, 0, true),
	                       fpod("a3", 1, KUBE_POD_FAILED, 0, true),
	                       fpod("a2", 1, KUBE_POD_FAILED, 0, true)};
	d7[0].deletion = now - SEC;
	d7[1].deletion = now;
	d7[2].deletion = now - 2 * SEC;
	check_delayed(d7, 3, 2, 4, "a3"); /* the last failed pod is kept */

	/* getNewIndexFailureCounts */
	int32_t fc, ic;
	job_new_index_failure_counts(NULL, false, &fc, &ic); /* first pod created */
	assert_int_equal(fc, 0);
	assert_int_equal(ic, 0);
	p = fpod("a", 0, KUBE_POD_FAILED, 0, true);
	job_new_index_failure_counts(&p, false, &fc, &ic);
	assert_int_equal(fc, 1);
	assert_int_equal(ic, 0);
	p = fpod("a", 3, KUBE_POD_FAILED, 0, true);
	job_new_index_failure_counts(&p, false, &fc, &ic);
	assert_int_equal(fc, 4);
	p.pfp_action = JOB_PFP_IGNORE; /* matching the Ignore rule */
	p.pfp_count = false;
	job_new_index_failure_counts(&p, true, &fc, &ic);
	assert_int_equal(fc, 3);
	assert_int_equal(ic, 1);

	/* getRemainingTimePerIndex (5 s base, 700 s max) */
	const uint64_t base = 5 * 1000000ull, max = 700 * 1000000ull;
	assert_int_equal(job_remaining_per_index(NULL, now, base, max), 0);
	p = fpod("a", 2, KUBE_POD_FAILED, 0, true);
	p.deletion = now;
	assert_int_equal(job_remaining_per_index(&p, now, base, max), 20 * 1000000ull);
	p.fail_count = 1;
	p.ign_count = 1; /* one counted, one ignored */
	assert_int_equal(job_remaining_per_index(&p, now, base, max), 20 * 1000000ull);
	p.deletion = now - 15 * SEC;
	assert_int_equal(job_remaining_per_index(&p, now, base, max), 5 * 1000000ull);
}

/* LabelSelectorAsSelector + Matches, the claim's selector test */
static void test_selector(void **state)
{
	struct kube_kv l[] = {{"app", "x"}, {"tier", "web"}};
	cJSON *sel;

	(void)state;
	assert_false(job_selector_matches(NULL, l, 2)); /* nil: nothing */
	sel = cJSON_Parse("{}");
	assert_true(job_selector_matches(sel, l, 2)); /* empty: everything */
	cJSON_Delete(sel);
	sel = cJSON_Parse("{\"matchLabels\":{\"app\":\"x\"}}");
	assert_true(job_selector_matches(sel, l, 2));
	assert_false(job_selector_matches(sel, l + 1, 1));
	assert_false(job_selector_matches(sel, NULL, 0));
	cJSON_Delete(sel);
	sel = cJSON_Parse("{\"matchLabels\":{\"app\":\"x\"},\"matchExpressions\":["
	                  "{\"key\":\"tier\",\"operator\":\"In\",\"values\":[\"db\",\"web\"]},"
	                  "{\"key\":\"gone\",\"operator\":\"DoesNotExist\"},"
	                  "{\"key\":\"gone\",\"operator\":\"NotIn\",\"values\":[\"a\"]}]}");
	assert_true(job_selector_matches(sel, l, 2));
	l[1].value = "cache";
	assert_false(job_selector_matches(sel, l, 2));
	cJSON_Delete(sel);
	sel = cJSON_Parse("{\"matchExpressions\":[{\"key\":\"tier\",\"operator\":\"Exists\"}]}");
	assert_true(job_selector_matches(sel, l, 2));
	assert_false(job_selector_matches(sel, l, 1));
	cJSON_Delete(sel);
}

static void test_pod_predicates(void **state)
{
	struct job_pod p = {.phase = KUBE_POD_RUNNING};

	(void)state;
	assert_true(job_pod_active(&p));
	assert_false(job_pod_failed(&p, false));
	p.deletion = 5 * SEC;
	assert_false(job_pod_active(&p));
	assert_true(job_pod_terminating(&p));
	assert_true(job_pod_failed(&p, false)); /* deleted and not succeeded */
	assert_false(job_pod_failed(&p, true)); /* only Failed counts then */
	p.phase = KUBE_POD_SUCCEEDED;
	assert_false(job_pod_failed(&p, false));
	assert_false(job_pod_terminating(&p));
	p.phase = KUBE_POD_FAILED;
	assert_true(job_pod_failed(&p, true));
	/* finish time: Ready=False transition, else deletion, else creation */
	p = (struct job_pod){.creation = 1 * SEC, .deletion = 3 * SEC, .ready_transition = 2 * SEC};
	assert_int_equal(job_pod_finish_time(&p), 2 * SEC);
	p.ready_transition = 0;
	assert_int_equal(job_pod_finish_time(&p), 3 * SEC);
	p.deletion_grace_s = 2; /* the deletion time less the grace period */
	assert_int_equal(job_pod_finish_time(&p), 1 * SEC);
	p.deletion_grace_s = 0;
	p.deletion = 0;
	assert_int_equal(job_pod_finish_time(&p), 1 * SEC);
}

static void test_active_order(void **state)
{
	struct job_pod unsched = {.phase = KUBE_POD_PENDING};
	struct job_pod pending = {.phase = KUBE_POD_PENDING, .scheduled = true};
	struct job_pod running = {.phase = KUBE_POD_RUNNING, .scheduled = true};
	struct job_pod ready_new = {.phase = KUBE_POD_RUNNING,
	                            .scheduled = true,
	                            .ready = true,
	                            .ready_transition = 20 * SEC};
	struct job_pod ready_old = {.phase = KUBE_POD_RUNNING,
	                            .scheduled = true,
	                            .ready = true,
	                            .ready_transition = 10 * SEC};

	(void)state;
	assert_true(job_pod_cmp_active(&unsched, &pending) < 0);
	assert_true(job_pod_cmp_active(&pending, &running) < 0);
	assert_true(job_pod_cmp_active(&running, &ready_new) < 0);
	assert_true(job_pod_cmp_active(&ready_new, &ready_old) < 0);
	assert_true(job_pod_cmp_active(&ready_old, &unsched) > 0);
}

static void test_generate_name(void **state)
{
	char buf[300];
	char longname[64];

	(void)state;
	job_pod_generate_name("pi", -1, buf, sizeof(buf));
	assert_string_equal(buf, "pi-");
	job_pod_generate_name("pi", 3, buf, sizeof(buf));
	assert_string_equal(buf, "pi-3-");
	memset(longname, 'a', 60);
	longname[60] = 0;
	job_pod_generate_name(longname, 12, buf, sizeof(buf));
	assert_int_equal(strlen(buf), 58); /* names.MaxGeneratedNameLength */
	assert_string_equal(buf + 54, "-12-");
}

static int pfp(const char *policy, const char *pod, bool *count, char **msg)
{
	cJSON *p = cJSON_Parse(policy), *o = cJSON_Parse(pod);
	int r;

	assert_non_null(p);
	assert_non_null(o);
	r = job_pfp_match(p, o, count, msg);
	cJSON_Delete(p);
	cJSON_Delete(o);
	return r;
}

#define POD(statuses, conds)                                                                       \
	"{\"metadata\":{\"namespace\":\"default\",\"name\":\"mypod\"},\"status\":{\"phase\":"      \
	"\"Failed\"," statuses "\"conditions\":" conds "}}"
#define MAIN_EXIT(code)                                                                            \
	"\"containerStatuses\":[{\"name\":\"main-container\",\"state\":{\"terminated\":{"          \
	"\"exitCode\":" #code "}}}],"

static void test_pod_failure_policy(void **state)
{
	bool count;
	char *msg = NULL;

	(void)state;
	/* FailJob on exit codes In: upstream's message */
	assert_int_equal(
	        pfp("{\"rules\":[{\"action\":\"FailJob\",\"onExitCodes\":{\"containerName\":"
	            "\"main-container\",\"operator\":\"In\",\"values\":[1,2,3]}}]}",
	            POD(MAIN_EXIT(2), "[]"), &count, &msg),
	        JOB_PFP_FAIL_JOB);
	assert_true(count);
	assert_string_equal(msg, "Container main-container for pod default/mypod failed with exit "
	                         "code 2 matching FailJob rule at index 0");
	free(msg);
	/* Ignore: not counted */
	assert_int_equal(pfp("{\"rules\":[{\"action\":\"Ignore\",\"onExitCodes\":{\"operator\":"
	                     "\"In\",\"values\":[1,2,3]}}]}",
	                     POD(MAIN_EXIT(1), "[]"), &count, &msg),
	                 JOB_PFP_IGNORE);
	assert_false(count);
	assert_null(msg);
	/* no match: counted, no action */
	assert_int_equal(pfp("{\"rules\":[{\"action\":\"FailJob\",\"onExitCodes\":{\"operator\":"
	                     "\"In\",\"values\":[1,2,3]}}]}",
	                     POD(MAIN_EXIT(42), "[]"), &count, &msg),
	                 JOB_PFP_NONE);
	assert_true(count);
	/* NotIn matches other codes, never 0 */
	assert_int_equal(pfp("{\"rules\":[{\"action\":\"Count\",\"onExitCodes\":{\"operator\":"
	                     "\"NotIn\",\"values\":[1,2,3]}}]}",
	                     POD(MAIN_EXIT(42), "[]"), &count, &msg),
	                 JOB_PFP_COUNT);
	assert_true(count);
	assert_int_equal(pfp("{\"rules\":[{\"action\":\"FailJob\",\"onExitCodes\":{\"operator\":"
	                     "\"NotIn\",\"values\":[1,2,3]}}]}",
	                     POD(MAIN_EXIT(0), "[]"), &count, &msg),
	                 JOB_PFP_NONE);
	/* another container name: no match */
	assert_int_equal(
	        pfp("{\"rules\":[{\"action\":\"FailJob\",\"onExitCodes\":{\"containerName\":"
	            "\"other\",\"operator\":\"In\",\"values\":[2]}}]}",
	            POD(MAIN_EXIT(2), "[]"), &count, &msg),
	        JOB_PFP_NONE);
	/* init containers are matched too */
	assert_int_equal(pfp("{\"rules\":[{\"action\":\"FailJob\",\"onExitCodes\":{\"operator\":"
	                     "\"In\",\"values\":[5]}}]}",
	                     POD("\"initContainerStatuses\":[{\"name\":\"init\",\"state\":{"
	                         "\"terminated\":{\"exitCode\":5}}}],",
	                         "[]"),
	                     &count, &msg),
	                 JOB_PFP_FAIL_JOB);
	assert_string_equal(msg, "Container init for pod default/mypod failed with exit code 5 "
	                         "matching FailJob rule at index 0");
	free(msg);
	/* the first matching rule wins; the message names its index */
	assert_int_equal(
	        pfp("{\"rules\":[{\"action\":\"Ignore\",\"onPodConditions\":[{\"type\":"
	            "\"DisruptionTarget\",\"status\":\"True\"}]},{\"action\":\"FailJob\","
	            "\"onPodConditions\":[{\"type\":\"ConfigIssue\",\"status\":\"True\"}]}]}",
	            POD(MAIN_EXIT(1), "[{\"type\":\"ConfigIssue\",\"status\":\"True\"}]"), &count,
	            &msg),
	        JOB_PFP_FAIL_JOB);
	assert_string_equal(msg,
	                    "Pod default/mypod has condition ConfigIssue matching FailJob rule "
	                    "at index 1");
	free(msg);
	/* a condition with another status does not match */
	assert_int_equal(
	        pfp("{\"rules\":[{\"action\":\"Ignore\",\"onPodConditions\":[{\"type\":"
	            "\"DisruptionTarget\",\"status\":\"True\"}]}]}",
	            POD(MAIN_EXIT(1), "[{\"type\":\"DisruptionTarget\",\"status\":\"False\"}]"),
	            &count, &msg),
	        JOB_PFP_NONE);
	assert_true(count);
	/* DisruptionTarget True: Ignore */
	assert_int_equal(
	        pfp("{\"rules\":[{\"action\":\"Ignore\",\"onPodConditions\":[{\"type\":"
	            "\"DisruptionTarget\",\"status\":\"True\"}]}]}",
	            POD(MAIN_EXIT(1), "[{\"type\":\"DisruptionTarget\",\"status\":\"True\"}]"),
	            &count, &msg),
	        JOB_PFP_IGNORE);
	assert_false(count);
}

static bool sp(const char *policy, int64_t completions, const char *succeeded, char *msg)
{
	struct job_intervals si = {0};
	cJSON *p = cJSON_Parse(policy);
	bool r;

	assert_non_null(p);
	assert_int_equal(job_iv_parse(succeeded, completions, &si), 0);
	msg[0] = 0;
	r = job_success_policy_match(p, completions, &si, msg, 64);
	cJSON_Delete(p);
	job_iv_free(&si);
	return r;
}

static void test_success_policy(void **state)
{
	char msg[64];

	(void)state;
	assert_true(sp("{\"rules\":[{\"succeededIndexes\":\"0-2\"}]}", 10, "0-2", msg));
	assert_string_equal(msg, "Matched rules at index 0");
	assert_false(sp("{\"rules\":[{\"succeededIndexes\":\"0-2\"}]}", 10, "0,2", msg));
	assert_true(sp("{\"rules\":[{\"succeededIndexes\":\"0-4\",\"succeededCount\":3}]}", 10,
	               "1,3,4", msg));
	assert_false(sp("{\"rules\":[{\"succeededIndexes\":\"0-4\",\"succeededCount\":3}]}", 10,
	                "1,3,7-9", msg));
	assert_true(sp("{\"rules\":[{\"succeededCount\":3}]}", 10, "5-7", msg));
	assert_false(sp("{\"rules\":[{\"succeededCount\":4}]}", 10, "5-7", msg));
	assert_true(sp("{\"rules\":[{\"succeededIndexes\":\"9\"},{\"succeededCount\":1}]}", 10, "3",
	               msg));
	assert_string_equal(msg, "Matched rules at index 1");
	assert_false(sp("{\"rules\":[{\"succeededCount\":1}]}", 10, "", msg)); /* none succeeded */
	/* a rule whose indexes do not parse is skipped */
	assert_false(sp("{\"rules\":[{\"succeededIndexes\":\"a\"}]}", 10, "0-9", msg));
	/* indexes past completions are clamped away */
	assert_true(sp("{\"rules\":[{\"succeededIndexes\":\"3-20\"}]}", 5, "3,4", msg));
}

static char *render(struct kcmd_metrics *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	ctlm_render(m, f);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void test_metrics(void **state)
{
	static const struct kcmd_controller c = {.abi = KCMD_CONTROLLER_ABI,
	                                         .name = JOB_CONTROLLER,
	                                         .metrics = job_metric_decl,
	                                         .n_metrics = JOB_M_N};
	struct kcmd_metrics *w = NULL, *r = NULL;
	char *text = NULL;
	int fd = ctlm_create(&c);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(ctlm_attach(&c, fd, true, &w), 0);
	assert_int_equal(ctlm_attach(&c, fd, false, &r), 0);
	text = render(r);
	assert_string_equal(text, ""); /* no series: no family */
	free(text);
	job_metrics_sync(w, false, false, JOB_M_PODS_CREATED);
	job_metrics_sync(w, false, false, JOB_M_PODS_CREATED);
	job_metrics_sync(w, true, true, JOB_M_TRACKING);
	job_metrics_finished(w, false, JOB_M_SUCCESS);
	job_metrics_finished(w, true, job_metrics_reason("BackoffLimitExceeded"));
	job_metrics_finished(w, true, job_metrics_reason("Unknown")); /* dropped */
	job_metrics_pods_finished(w, false, 3, 1);
	job_metrics_pods_finished(w, true, 0, 0); /* nothing: no series */
	job_metrics_pfp(w, 1);
	job_metrics_creations(w, JOB_M_CREATE_NEW, 2, 0);
	job_metrics_finished(w, true, job_metrics_reason("SuccessPolicy"));
	job_metrics_duration(w, false, false, JOB_M_TRACKING, 0.01);
	job_metrics_external(w, "example.com/ctl");
	job_metrics_terminated_fin(w, false, true);
	job_metrics_terminated_fin(w, true, true); /* no change: nothing */
	job_metrics_finished_indexes(w, true, true, 2);
	job_metrics_sync(r, false, false, JOB_M_TRACKING);    /* a reader never writes */
	job_metrics_sync(NULL, false, false, JOB_M_TRACKING); /* no region: a no-op */
	text = render(r);
	assert_non_null(strstr(text, "# HELP job_controller_job_syncs_total [STABLE] The number of "
	                             "job syncs\n# TYPE job_controller_job_syncs_total counter\n"));
	assert_non_null(strstr(text, "job_controller_job_syncs_total{action=\"pods_created\","
	                             "completion_mode=\"NonIndexed\",result=\"success\"} 2\n"));
	assert_non_null(strstr(text, "job_controller_job_syncs_total{action=\"tracking\","
	                             "completion_mode=\"Indexed\",result=\"error\"} 1\n"));
	assert_null(
	        strstr(text, "job_syncs_total{action=\"tracking\",completion_mode=\"NonIndexed\""));
	assert_non_null(strstr(text,
	                       "# HELP job_controller_jobs_finished_total [STABLE] The number "
	                       "of finished jobs\n"));
	assert_non_null(strstr(
	        text, "job_controller_jobs_finished_total{completion_mode="
	              "\"NonIndexed\",reason=\"CompletionsReached\",result=\"succeeded\"} 1\n"));
	assert_non_null(strstr(text,
	                       "job_controller_jobs_finished_total{completion_mode=\"Indexed\","
	                       "reason=\"BackoffLimitExceeded\",result=\"failed\"} 1\n"));
	assert_non_null(strstr(text, "# HELP job_controller_job_pods_finished_total [STABLE] The "
	                             "number of finished Pods that are fully tracked\n"));
	assert_non_null(strstr(text, "job_controller_job_pods_finished_total{completion_mode="
	                             "\"NonIndexed\",result=\"succeeded\"} 3\n"));
	assert_non_null(strstr(text, "job_controller_job_pods_finished_total{completion_mode="
	                             "\"NonIndexed\",result=\"failed\"} 1\n"));
	assert_null(strstr(text, "completion_mode=\"Indexed\",result=\"succeeded\""));
	assert_non_null(strstr(text, "job_controller_pod_failures_handled_by_failure_policy_total{"
	                             "action=\"Ignore\"} 1\n"));
	assert_non_null(strstr(text, "job_controller_job_pods_creation_total{reason=\"new\","
	                             "status=\"succeeded\"} 2\n"));
	assert_non_null(strstr(text,
	                       "job_controller_jobs_finished_total{completion_mode="
	                       "\"Indexed\",reason=\"SuccessPolicy\",result=\"succeeded\"} 1\n"));
	assert_non_null(
	        strstr(text, "# TYPE job_controller_job_sync_duration_seconds histogram\n"));
	assert_non_null(strstr(text, "job_controller_job_sync_duration_seconds_bucket{action="
	                             "\"tracking\",completion_mode=\"NonIndexed\",result="
	                             "\"success\",le=\"0.016\"} 1\n"));
	assert_non_null(strstr(text, "job_controller_jobs_by_external_controller_total{"
	                             "controller_name=\"example.com/ctl\"} 1\n"));
	assert_non_null(strstr(text, "job_controller_terminated_pods_tracking_finalizer_total{"
	                             "event=\"add\"} 1\n"));
	assert_null(strstr(text, "event=\"delete\""));
	assert_non_null(strstr(text, "job_controller_job_finished_indexes_total{backoffLimit="
	                             "\"perIndex\",status=\"failed\"} 2\n"));
	/* a multi-line upstream help is one line here (newlines escaped, tabs kept, as
	 * client_golang), byte for byte what the hand-written region rendered before */
	assert_non_null(strstr(
	        text, "# HELP job_controller_pod_failures_handled_by_failure_policy_total [BETA] "
	              "The number of failed Pods handled by failure policy with\\n\t\t\trespect to "
	              "the failure policy action applied based on the matched\\n\t\t\trule. "
	              "Possible values of the action label correspond to the\\n\t\t\tpossible "
	              "values for the failure policy rule action, which are:\\n\t\t\t\"FailJob\", "
	              "\"Ignore\" and \"Count\".\n# TYPE "));
	assert_non_null(strstr(
	        text, "# HELP job_controller_job_pods_creation_total [ALPHA] The number of Pods "
	              "created by the Job controller labelled with a reason for the Pod "
	              "creation.\\nThis metric also distinguishes between Pods created using "
	              "different PodReplacementPolicy settings.\\nPossible values of the "
	              "\"reason\" label are:\\n\"new\", \"recreate_terminating_or_failed\", "
	              "\"recreate_failed\".\\nPossible values of the \"status\" label "
	              "are:\\n\"succeeded\", \"failed\".\n# TYPE "));
	free(text);
	ctlm_detach(w);
	ctlm_detach(r);
	close(fd);
}

/* StaleControllerConsistencyJob: the store of the Job's own writes, on a real expectations
 * region (as the worker attaches it), and stale_sync_skips_total */
static void test_consistency(void **state)
{
	static const struct kcmd_controller c = {.abi = KCMD_CONTROLLER_ABI,
	                                         .name = JOB_CONTROLLER,
	                                         .metrics = job_metric_decl,
	                                         .n_metrics = JOB_M_N};
	struct kcmd_metrics *w = NULL, *r = NULL;
	struct rs_exp *e = NULL;
	char msg[256], *text;
	int fd = rs_exp_memfd_create(NULL), mfd = ctlm_create(&c);

	(void)state;
	assert_true(fd >= 0);
	assert_true(mfd >= 0);
	assert_int_equal(rs_exp_attach(fd, RS_EXP_WORKER, rs_exp_now(), &e), 0);
	assert_int_equal(ctlm_attach(&c, mfd, true, &w), 0);
	assert_int_equal(ctlm_attach(&c, mfd, false, &r), 0);
	const char *read[RS_EXP_CONS_RESOURCES] = {"50", "50"};
	/* nothing written: ready */
	assert_int_equal(job_consistency_ready(e, "ns/j", read, w, msg, sizeof(msg)), 0);
	/* a created pod (rv 101) and a status update (rv 102) of Job uid-1 */
	assert_int_equal(rs_exp_wrote_at(e, "ns/j", "uid-1", JOB_CONS_PODS, "101"), 0);
	assert_int_equal(rs_exp_wrote_at(e, "ns/j", "uid-1", JOB_CONS_JOBS, "102"), 0);
	/* an older pod write does not lower the recorded version */
	assert_int_equal(rs_exp_wrote_at(e, "ns/j", "uid-1", JOB_CONS_PODS, "99"), 0);
	assert_int_equal(job_consistency_ready(e, "ns/j", read, w, msg, sizeof(msg)), 1);
	assert_string_equal(
	        msg,
	        "read version: 50 is not as new as written version: 101 for group resource pods");
	/* another key is not affected */
	assert_int_equal(job_consistency_ready(e, "ns/other", read, w, NULL, 0), 0);
	read[JOB_CONS_PODS] = "101";
	assert_int_equal(job_consistency_ready(e, "ns/j", read, w, msg, sizeof(msg)), 1);
	assert_string_equal(msg, "read version: 50 is not as new as written version: 102 for group "
	                         "resource jobs.batch");
	/* both caught up: ready, and the record is cleared */
	read[JOB_CONS_JOBS] = "102";
	assert_int_equal(job_consistency_ready(e, "ns/j", read, w, msg, sizeof(msg)), 0);
	read[JOB_CONS_PODS] = read[JOB_CONS_JOBS] = "1";
	assert_int_equal(job_consistency_ready(e, "ns/j", read, w, msg, sizeof(msg)), 0);
	/* an unknown store version never blocks; a record of another uid replaces the old one */
	assert_int_equal(rs_exp_wrote_at(e, "ns/j", "uid-1", JOB_CONS_JOBS, "500"), 0);
	assert_int_equal(rs_exp_wrote_at(e, "ns/j", "uid-2", JOB_CONS_PODS, "400"), 0);
	read[JOB_CONS_PODS] = NULL;
	read[JOB_CONS_JOBS] = "";
	assert_int_equal(job_consistency_ready(e, "ns/j", read, w, msg, sizeof(msg)), 0);
	/* the finished Job's Clear: a NULL read_rv clears whatever is written */
	assert_int_equal(rs_exp_wrote_at(e, "ns/j", "uid-2", JOB_CONS_PODS, "900"), 0);
	assert_int_equal(rs_exp_ensure_ready(e, "ns/j", NULL, NULL), 0);
	read[JOB_CONS_PODS] = read[JOB_CONS_JOBS] = "1";
	assert_int_equal(job_consistency_ready(e, "ns/j", read, w, msg, sizeof(msg)), 0);
	/* the Job gone from the cache: DeleteExpectations clears the record too */
	assert_int_equal(rs_exp_wrote_at(e, "ns/j", "uid-2", JOB_CONS_PODS, "900"), 0);
	assert_int_equal(rs_exp_delete(e, "ns/j"), 0);
	assert_int_equal(job_consistency_ready(e, "ns/j", read, w, msg, sizeof(msg)), 0);
	/* the record survives the expectations of a later sync (same slot) */
	assert_int_equal(rs_exp_wrote_at(e, "ns/j", "uid-2", JOB_CONS_PODS, "900"), 0);
	assert_int_equal(rs_exp_expect_creations(e, "ns/j", 2, rs_exp_now()), 0);
	assert_int_equal(job_consistency_ready(e, "ns/j", read, w, NULL, 0), 1);
	/* counted per resource: two pod skips and one job skip above, plus this one */
	text = render(r);
	assert_non_null(strstr(text, "# HELP job_controller_stale_sync_skips_total [ALPHA] Total "
	                             "number of Job syncs skipped due to a stale watch cache.\n"
	                             "# TYPE job_controller_stale_sync_skips_total counter\n"));
	assert_non_null(strstr(text, "job_controller_stale_sync_skips_total{group=\"\","
	                             "resource=\"pods\"} 2\n"));
	assert_non_null(strstr(text, "job_controller_stale_sync_skips_total{group=\"batch\","
	                             "resource=\"jobs\"} 1\n"));
	assert_null(strstr(text, "group=\"batch\",resource=\"pods\""));
	assert_null(strstr(text, "group=\"\",resource=\"jobs\""));
	free(text);
	rs_exp_detach(e);
	ctlm_detach(w);
	ctlm_detach(r);
	close(fd);
	close(mfd);
}

/* Orphan finalizer removal is confirmed by a live GET of the Job */
static void test_orphan_confirmed(void **state)
{
	(void)state;
	/* the Job is gone: the finalizer may go */
	assert_true(job_orphan_confirmed(-ENOENT, NULL, "uid-1"));
	/* the live Job is another one (recreated under the same name): the pod is an orphan */
	assert_true(job_orphan_confirmed(0, "uid-2", "uid-1"));
	/* the live Job is the pod's controller: the cache is stale, keep the finalizer */
	assert_false(job_orphan_confirmed(0, "uid-1", "uid-1"));
	/* the GET failed, or answered without a uid: nothing is confirmed */
	assert_false(job_orphan_confirmed(-EIO, NULL, "uid-1"));
	assert_false(job_orphan_confirmed(-EACCES, NULL, "uid-1"));
	assert_false(job_orphan_confirmed(0, NULL, "uid-1"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_parse),
	        cmocka_unit_test(test_string_and_has),
	        cmocka_unit_test(test_first_pending),
	        cmocka_unit_test(test_index),
	        cmocka_unit_test(test_backoff),
	        cmocka_unit_test(test_backoff_limit_per_index),
	        cmocka_unit_test(test_selector),
	        cmocka_unit_test(test_pod_predicates),
	        cmocka_unit_test(test_active_order),
	        cmocka_unit_test(test_generate_name),
	        cmocka_unit_test(test_pod_failure_policy),
	        cmocka_unit_test(test_success_policy),
	        cmocka_unit_test(test_metrics),
	        cmocka_unit_test(test_consistency),
	        cmocka_unit_test(test_orphan_confirmed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
