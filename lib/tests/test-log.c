/* SPDX-License-Identifier: Apache-2.0 */
/* The klog text format on stderr, verbosity gating, and journal detection by JOURNAL_STREAM. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/log.h"

static char *capture(void (*fn)(void))
{
	char path[] = "/tmp/kcmd-log-XXXXXX";
	int fd = mkstemp(path), saved = dup(STDERR_FILENO);
	static char buf[8192];

	fflush(stderr);
	dup2(fd, STDERR_FILENO);
	fn();
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = 0;
	close(fd);
	unlink(path);
	return buf;
}

static void emit(void)
{
	const char *fields[] = {"REPLICASET=ns/web", NULL};
	log_info("synced %d objects", 42);
	log_error("boom");
	log_v(2, "hidden at v=1");
	log_v(1, "shown at v=1");
	kclog_log(KCLOG_WARNING, __FILE__, 7, fields, "with fields");
}

static void test_text_format(void **state)
{
	(void)state;
	regex_t re;
	unsetenv("JOURNAL_STREAM");
	kclog_init("informerd", NULL, 1);
	assert_false(kclog_to_journal());
	char *out = capture(emit);
	assert_int_equal(regcomp(&re,
	                         "^I[0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6} +[0-9]+ "
	                         "test-log\\.c:[0-9]+\\] synced 42 objects$",
	                         REG_EXTENDED | REG_NEWLINE),
	                 0);
	assert_int_equal(regexec(&re, out, 0, NULL, 0), 0);
	regfree(&re);
	assert_non_null(strstr(out, "] boom\n"));
	assert_non_null(strstr(out, "\nE"));
	assert_null(strstr(out, "hidden at v=1"));
	assert_non_null(strstr(out, "shown at v=1"));
	assert_non_null(strstr(out, "test-log.c:7] with fields REPLICASET=\"ns/web\"\n"));
}

static void test_journal_stream_must_match_stderr(void **state)
{
	(void)state;
	struct stat s;
	char v[64];

	setenv("JOURNAL_STREAM", "1:2", 1); /* not our stderr */
	kclog_init("kcmd", "replicaset-controller", 0);
	assert_false(kclog_to_journal());
	assert_int_equal(fstat(STDERR_FILENO, &s), 0);
	snprintf(v, sizeof(v), "%llu:%llu", (unsigned long long)s.st_dev,
	         (unsigned long long)s.st_ino);
	setenv("JOURNAL_STREAM", v, 1);
	kclog_init("kcmd", NULL, 0);
	assert_true(kclog_to_journal());
	unsetenv("JOURNAL_STREAM");
	kclog_init("kcmd", NULL, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_text_format),
	        cmocka_unit_test(test_journal_stream_must_match_stderr),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
