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

/* Untrusted strings: a name with a newline, an ANSI escape, a C1 CSI, a bidi override and
 * invalid UTF-8 comes out as one visible line; plain UTF-8 passes. */
static void test_sanitize(void **state)
{
	(void)state;
	char out[256];
	const char hostile[] = "web\nI1202 00:00:00.000000 1 fake.c:1] forged\x1b[31mred\r\t"
	                       "\xc2\x9b"
	                       "2J\xe2\x80\xae\xff\x7f caf\xc3\xa9";
	size_t n = kclog_sanitize(out, sizeof(out), hostile, sizeof(hostile) - 1);

	assert_string_equal(out, "web\\nI1202 00:00:00.000000 1 fake.c:1] forged\\x1b[31mred\\r\\t"
	                         "\\u009b2J\\u202e\\xff\\x7f caf\xc3\xa9");
	assert_int_equal(n, strlen(out));
	for (const char *p = out; *p; p++)
		assert_true((unsigned char)*p >= 0x20 && *p != 0x7f);
	/* truncation never splits an escape: "\x1b" does not fit in 3 bytes + NUL */
	assert_int_equal(kclog_sanitize(out, 4, "ab\x1b", 3), 2);
	assert_string_equal(out, "ab");
	/* a truncated UTF-8 sequence at the end of the input is escaped, not passed */
	kclog_sanitize(out, sizeof(out), "x\xc3", 2);
	assert_string_equal(out, "x\\xc3");
	char buf[16];
	assert_string_equal(kclog_safe(buf, sizeof(buf), NULL), "");
}

static void emit_hostile(void)
{
	const char *fields[] = {"POD=ns/evil\nE0101 forged", NULL};
	log_warning("cannot create pod %s: %s", "evil\x1b]0;title\x07",
	            "apiserver said:\n{\"message\":\"bad\"}");
	kclog_log(KCLOG_INFO, __FILE__, 9, fields, "with a hostile field");
}

/* The sink applies it: one output line per log call, no raw escape. */
static void test_sink_sanitizes(void **state)
{
	(void)state;
	unsetenv("JOURNAL_STREAM");
	kclog_init("worker", NULL, 0);
	char *out = capture(emit_hostile);
	size_t lines = 0;
	for (char *p = out; *p; p++) {
		lines += *p == '\n';
		assert_true(*p != 0x1b && *p != 0x07);
	}
	assert_int_equal(lines, 2);
	assert_non_null(strstr(out, "evil\\x1b]0;title\\x07: apiserver said:\\n{"));
	assert_non_null(strstr(out, "POD=\"ns/evil\\nE0101 forged\"\n"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_text_format),
	        cmocka_unit_test(test_journal_stream_must_match_stderr),
	        cmocka_unit_test(test_sanitize),
	        cmocka_unit_test(test_sink_sanitizes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
