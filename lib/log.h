/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * lib/log.h: process logging for every kcmd program (library `kclog`).
 *
 * Design note.
 *   Libraries never log (conventions); programs do, once, through this. Two sinks:
 *   - journald, with structured fields (PRIORITY, KCMD_PROCESS, KCMD_CONTROLLER, CODE_FILE/LINE,
 *     plus any "KEY=value" fields the caller adds), chosen when JOURNAL_STREAM says stderr is
 *     connected to the journal (systemd's documented test: device and inode match);
 *   - otherwise klog's text format on stderr, so operators' grep habits carry over:
 *     `I1202 17:20:01.123456   12345 file.c:42] message key="value"`,
 *     or with --logging-format=json component-base's JSON lines (k8s.io/component-base/logs/
 *     json: zap's encoder with keys ts (Unix epoch in milliseconds, a float), caller
 *     (file:line), msg, v (the verbosity of an info line; error lines carry none), then the
 *     structured keys: controller, and each "KEY=value" field as "key" in lower case).
 *   Under journald the controller is also CONTROLLER= (and the fields as given, e.g. OBJECT=),
 *   so `journalctl -u kcmd CONTROLLER=<controller>` selects one controller's lines.
 *   Verbosity follows klog: log_v(N, ...) prints when N <= --v, or N <= the level --vmodule
 *   gives the calling file (klog's syntax: pattern=N,...; a pattern is a glob over the file's
 *   base name without ".c", or over its path when it holds a '/'). The manager passes
 *   --logging-format and --vmodule to every child as KCMD_LOGGING_FORMAT and KCMD_VMODULE,
 *   which kclog_init reads. Secrets never go through here: callers log names, never tokens or
 *   keys.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

enum kclog_level { KCLOG_ERROR = 3, KCLOG_WARNING = 4, KCLOG_INFO = 6, KCLOG_DEBUG = 7 };

/* process: "kcmd", "informerd", "worker"; controller may be NULL. Reads JOURNAL_STREAM. */
void kclog_init(const char *process, const char *controller, int verbosity);
void kclog_set_verbosity(int v);
int kclog_verbosity(void);
/* "text" or "json" (--logging-format). Returns 0, or -EINVAL for anything else. */
int kclog_set_format(const char *format);
/* --vmodule: "pattern=N,..." (at most KCLOG_VMODULE_MAX entries). Returns 0, or -EINVAL for a
 * malformed spec (nothing is changed then). NULL or "" clears it. */
#define KCLOG_VMODULE_MAX 16
int kclog_set_vmodule(const char *spec);
/* Whether a log_v(v) in file prints: v <= --v, or the --vmodule level of file. */
bool kclog_v_enabled(int v, const char *file);
bool kclog_to_journal(void);

/* kclog_set_object: the object (its queue key, "namespace/name" or "name") the calling thread
 * works on from now until it is set to NULL: every line logged meanwhile carries OBJECT=<key>
 * (journald), "object":"<key>" (JSON) or OBJECT="<key>" (text, as every field), unless the
 * line's own fields name an OBJECT. A key holding control characters (a controller's own
 * encoding, e.g. the GC's) sets none. The worker sets it around each sync, so a controller's lines
 * are selected with `journalctl -u kcmd OBJECT=ns/name` without the controller doing anything. */
void kclog_set_object(const char *key);
#define KCLOG_FIELDS_MAX 16 /* fields a line may carry (more are dropped) */

/* fields: NULL or a NULL-terminated list of "KEY=value" strings for the journal (appended as
 * key="value" in text mode). */
void kclog_log(enum kclog_level level, const char *file, int line, const char *const *fields,
               const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* kclog_log of a log_v(v) line: v is the JSON format's "v". */
void kclog_log_v(int v, const char *file, int line, const char *const *fields, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));

/*
 * kclog_sanitize: copies src[0..len) into dst (size n; always NUL-terminated when n > 0) with
 * everything a terminal or a line-oriented log reader would interpret made visible: C0 controls
 * and DEL become \n, \r, \t or \xNN (so an object name or an apiserver error body cannot add a
 * log line or an ANSI escape sequence), C1 controls (U+0080..U+009F, 8-bit CSI among them) and
 * the bidirectional overrides and isolates (U+202A..U+202E, U+2066..U+2069) become \uNNNN,
 * bytes that are not valid UTF-8 become \xNN. Other UTF-8 passes unchanged. Truncates at an
 * escape or character boundary when dst is too small. Returns the length written (without the
 * NUL). Every sink of this library runs the message and field values through it; kcmctl runs
 * the strings it prints from the cache or the manager's status through it.
 */
size_t kclog_sanitize(char *dst, size_t n, const char *src, size_t len);
/* kclog_safe: kclog_sanitize of the C string s into buf; returns buf (for printf arguments). */
const char *kclog_safe(char *buf, size_t n, const char *s);

#define log_error(...)   kclog_log(KCLOG_ERROR, __FILE__, __LINE__, NULL, __VA_ARGS__)
#define log_warning(...) kclog_log(KCLOG_WARNING, __FILE__, __LINE__, NULL, __VA_ARGS__)
#define log_info(...)    kclog_log(KCLOG_INFO, __FILE__, __LINE__, NULL, __VA_ARGS__)
#define log_v(n, ...)                                                                              \
	do {                                                                                       \
		if (kclog_v_enabled((n), __FILE__))                                                \
			kclog_log_v((n), __FILE__, __LINE__, NULL, __VA_ARGS__);                   \
	} while (0)
