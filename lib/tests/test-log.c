/* SPDX-License-Identifier: Apache-2.0 */
/* The klog text format on stderr, verbosity gating, and journal detection by JOURNAL_STREAM. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <regex.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

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

/*
 * --logging-format=json against component-base's schema (k8s.io/component-base/logs/json,
 * NewJSONLogger in json.go): zap's encoder with TimeKey "ts" (epochMillisTimeEncoder: Unix time
 * in milliseconds as a float), CallerKey "caller" (ShortCallerEncoder: "dir/file:line"),
 * MessageKey "msg", no level key, and zapr's LogInfoLevel("v") on info lines (error lines go
 * through zapr's Error, which adds no "v"); then the key/value pairs. These names are the
 * fixed part an operator's log pipeline reads.
 */
static const char *const cb_keys[] = {"ts", "caller", "msg", "v"};

static void emit_json(void)
{
	const char *fields[] = {"OBJECT=ns/web", "Reason=Quoted \"x\"", NULL};
	log_info("synced %d objects", 42);
	log_error("boom \"quoted\" \\ back");
	log_v(3, "hidden at v=2");
	log_v(2, "shown at v=2");
	kclog_log(KCLOG_WARNING, __FILE__, 7, fields, "with fields");
}

static void test_json_format(void **state)
{
	(void)state;
	unsetenv("JOURNAL_STREAM");
	setenv("KCMD_LOGGING_FORMAT", "json", 1);
	kclog_init("worker-x-0", "x-controller", 2);
	unsetenv("KCMD_LOGGING_FORMAT");
	char *out = strdup(capture(emit_json));
	int n = 0;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	for (char *save = NULL, *line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save), n++) {
		cJSON *j = cJSON_Parse(line);
		assert_non_null(j);
		/* the first keys in component-base's order */
		cJSON *k = j->child;
		for (size_t i = 0; i < 3; i++, k = k->next)
			assert_string_equal(k->string, cb_keys[i]);
		cJSON *ts = cJSON_GetObjectItem(j, "ts");
		assert_true(cJSON_IsNumber(ts));
		double nowms = (double)now.tv_sec * 1e3 + (double)now.tv_nsec / 1e6;
		assert_true(ts->valuedouble > nowms - 60e3 && ts->valuedouble <= nowms + 1);
		assert_true(cJSON_IsString(cJSON_GetObjectItem(j, "caller")));
		assert_non_null(
		        strstr(cJSON_GetObjectItem(j, "caller")->valuestring, "tests/test-log.c:"));
		assert_string_equal(cJSON_GetObjectItem(j, "controller")->valuestring,
		                    "x-controller");
		const char *msg = cJSON_GetObjectItem(j, "msg")->valuestring;
		cJSON *v = cJSON_GetObjectItem(j, cb_keys[3]);
		if (n == 0) {
			assert_string_equal(msg, "synced 42 objects");
			assert_true(cJSON_IsNumber(v) && v->valueint == 0);
		} else if (n == 1) {
			assert_string_equal(msg, "boom \"quoted\" \\ back");
			assert_null(v); /* an error line: zapr's Error adds no "v" */
		} else if (n == 2) {
			assert_string_equal(msg, "shown at v=2");
			assert_true(cJSON_IsNumber(v) && v->valueint == 2);
		} else {
			assert_string_equal(msg, "with fields");
			assert_string_equal(cJSON_GetObjectItem(j, "object")->valuestring,
			                    "ns/web");
			assert_string_equal(cJSON_GetObjectItem(j, "reason")->valuestring,
			                    "Quoted \"x\"");
		}
		cJSON_Delete(j);
	}
	assert_int_equal(n, 4);
	free(out);
	assert_int_equal(kclog_set_format("xml"), -EINVAL);
	assert_int_equal(kclog_set_format("text"), 0);
	kclog_init("kcmd", NULL, 0);
}

/* --vmodule: klog's pattern=N over the base name without ".c", or the path with a '/'. */
static void test_vmodule(void **state)
{
	(void)state;
	kclog_init("kcmd", NULL, 1);
	assert_int_equal(kclog_set_vmodule("test-log=3,other=9"), 0);
	assert_true(kclog_v_enabled(1, "lib/tests/test-log.c"));
	assert_true(kclog_v_enabled(3, "lib/tests/test-log.c"));
	assert_false(kclog_v_enabled(4, "lib/tests/test-log.c"));
	assert_false(kclog_v_enabled(2, "lib/log.c"));
	assert_true(kclog_v_enabled(9, "x/other.c"));
	assert_int_equal(kclog_set_vmodule("lib/tests/*=5,test-*=1"), 0);
	assert_true(kclog_v_enabled(5, "lib/tests/test-log.c")); /* the first match decides */
	assert_false(kclog_v_enabled(2, "manager/test-x.c"));
	/* malformed specs change nothing */
	assert_int_equal(kclog_set_vmodule("x"), -EINVAL);
	assert_int_equal(kclog_set_vmodule("=3"), -EINVAL);
	assert_int_equal(kclog_set_vmodule("a=b"), -EINVAL);
	assert_int_equal(kclog_set_vmodule("a=1,,b=2"), -EINVAL);
	assert_true(kclog_v_enabled(5, "lib/tests/test-log.c"));
	/* through the environment, as the manager hands it to children */
	setenv("KCMD_VMODULE", "log=4", 1);
	kclog_init("worker", NULL, 0);
	unsetenv("KCMD_VMODULE");
	assert_true(kclog_v_enabled(4, "lib/log.c"));
	assert_false(kclog_v_enabled(1, "lib/tests/test-log.c"));
	assert_int_equal(kclog_set_vmodule(NULL), 0);
	assert_false(kclog_v_enabled(4, "lib/log.c"));
}

static void emit_object(void)
{
	const char *own[] = {"OBJECT=other/one", NULL};
	kclog_set_object("ns/web-1");
	log_info("syncing");
	kclog_log(KCLOG_INFO, __FILE__, 3, own, "names its own");
	kclog_set_object(NULL);
	log_info("between syncs");
	kclog_set_object("a\x1f"
	                 "apps/v1\x1f"
	                 "ReplicaSet");
	log_info("an encoded key");
	kclog_set_object(NULL);
}

/* The object a worker syncs rides on every line logged during the sync, in every sink. */
static void test_object_field(void **state)
{
	(void)state;
	unsetenv("JOURNAL_STREAM");
	unsetenv("KCMD_LOGGING_FORMAT");
	kclog_init("worker", "replicaset-controller", 0);
	assert_int_equal(kclog_set_format("text"), 0);
	char *out = capture(emit_object);
	assert_non_null(strstr(out, "] syncing OBJECT=\"ns/web-1\"\n"));
	assert_non_null(strstr(out, "] names its own OBJECT=\"other/one\"\n"));
	assert_null(strstr(out, "names its own OBJECT=\"other/one\" OBJECT="));
	assert_non_null(strstr(out, "] between syncs\n"));
	assert_non_null(strstr(out, "] an encoded key\n"));
	assert_int_equal(kclog_set_format("json"), 0);
	out = capture(emit_object);
	char *nl = strchr(out, '\n');
	assert_non_null(nl);
	*nl = 0;
	cJSON *j = cJSON_Parse(out);
	assert_non_null(j);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "object")), "ns/web-1");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "controller")),
	                    "replicaset-controller");
	cJSON_Delete(j);
	char *last = strrchr(nl + 1, '{');
	assert_non_null(last);
	assert_null(strstr(last, "\"object\""));
	assert_int_equal(kclog_set_format("text"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_text_format),
	        cmocka_unit_test(test_journal_stream_must_match_stderr),
	        cmocka_unit_test(test_sanitize),
	        cmocka_unit_test(test_sink_sanitizes),
	        cmocka_unit_test(test_json_format),
	        cmocka_unit_test(test_vmodule),
	        cmocka_unit_test(test_object_field),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
