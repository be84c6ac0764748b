/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The PodCertificateRequest cleaner's decision (workers/pcrcleaner/pcr.h), with the cases of
 * upstream's pcrcleaner_test.go TestPCRCleaner (v1.37.2: now 00:30:00, threshold 15 min; a
 * request created at 00:15:01 is left alone, one created at 00:14:59 is deleted, whatever its
 * status) and the boundary itself (created exactly 15 minutes before: deleted, as Go's
 * Now().Before(created+threshold) is false then).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kube/model.h"
#include "workers/pcrcleaner/pcr.h"

static int64_t at(const char *rfc3339)
{
	kube_time_t t;
	assert_int_equal(kube_time_parse(rfc3339, strlen(rfc3339), &t), 0);
	return (int64_t)t;
}

static int due(const char *created, const char *status)
{
	char json[512];
	snprintf(json, sizeof(json),
	         "{\"metadata\":{\"namespace\":\"foo\",\"name\":\"bar\","
	         "\"creationTimestamp\":\"%s\"},\"spec\":{\"signerName\":\"foo.com/abc\"},"
	         "\"status\":%s}",
	         created, status);
	return pcr_due(json, strlen(json), at("2025-01-01T00:30:00Z"), PCR_THRESHOLD_NS);
}

static void test_threshold(void **state)
{
	(void)state;
	/* pending, within the threshold: left alone; outside: deleted */
	assert_int_equal(due("2025-01-01T00:15:01Z", "{}"), 0);
	assert_int_equal(due("2025-01-01T00:14:59Z", "{}"), 1);
	/* issued and failed requests alike */
	assert_int_equal(due("2025-01-01T00:14:59Z", "{\"certificateChain\":\"x\"}"), 1);
	assert_int_equal(due("2025-01-01T00:14:59Z", "{\"conditions\":[{\"type\":\"Failed\"}]}"),
	                 1);
	assert_int_equal(due("2025-01-01T00:15:01Z", "{\"conditions\":[{\"type\":\"Denied\"}]}"),
	                 0);
	/* exactly at the threshold: deleted */
	assert_int_equal(due("2025-01-01T00:15:00Z", "{}"), 1);
}

static void test_bad(void **state)
{
	(void)state;
	assert_int_equal(pcr_due("{}", 2, 0, PCR_THRESHOLD_NS), -EBADMSG);
	assert_int_equal(due("not a time", "{}"), -EBADMSG);
	assert_int_equal(pcr_due("nope", 4, 0, PCR_THRESHOLD_NS), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_threshold),
	        cmocka_unit_test(test_bad),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
