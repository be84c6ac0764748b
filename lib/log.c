/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/log.c: klog-format or component-base JSON stderr, or structured journald logging (see
 * log.h).
 */
#include "lib/log.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>

struct vmod {
	char pattern[128];
	int v;
	bool path; /* the pattern holds a '/': matched against the whole file path */
};

static struct {
	char process[32];
	char controller[64];
	int v;
	bool journal;
	bool json;
	unsigned n_vmod;
	struct vmod vmod[KCLOG_VMODULE_MAX];
} st = {.process = "kcmd"};

/* the key a worker is syncing (kclog_set_object); per thread */
static _Thread_local char cur_object[520];

void kclog_set_object(const char *key)
{
	/* a key with control characters is a controller's own encoding (the GC's graph keys
	 * separate their fields with 0x1f), not an object name an operator could select by */
	for (const char *p = key; p && *p; p++)
		if ((unsigned char)*p < 0x20) {
			key = NULL;
			break;
		}
	snprintf(cur_object, sizeof(cur_object), "%s", key ? key : "");
}

static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat s;

	if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &s) < 0)
		return false;
	return (unsigned long long)s.st_dev == dev && (unsigned long long)s.st_ino == ino;
}

void kclog_init(const char *process, const char *controller, int verbosity)
{
	snprintf(st.process, sizeof(st.process), "%s", process ? process : "kcmd");
	snprintf(st.controller, sizeof(st.controller), "%s", controller ? controller : "");
	st.v = verbosity;
	st.journal = stderr_is_journal();
	/* set by the manager for its children (--logging-format, --vmodule); a bad value was
	 * refused by the manager's flag parsing already, so it is ignored here */
	(void)kclog_set_format(getenv("KCMD_LOGGING_FORMAT"));
	(void)kclog_set_vmodule(getenv("KCMD_VMODULE"));
}

int kclog_set_format(const char *format)
{
	if (!format || !*format || strcmp(format, "text") == 0)
		st.json = false;
	else if (strcmp(format, "json") == 0)
		st.json = true;
	else
		return -EINVAL;
	return 0;
}

int kclog_set_vmodule(const char *spec)
{
	struct vmod v[KCLOG_VMODULE_MAX];
	unsigned n = 0;
	const char *p = spec;

	while (p && *p) {
		const char *end = strchr(p, ','), *eq;
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char item[160], *e;
		long lv;
		if (len == 0 || len >= sizeof(item) || n == KCLOG_VMODULE_MAX)
			return -EINVAL;
		memcpy(item, p, len);
		item[len] = 0;
		eq = strrchr(item, '=');
		if (!eq || eq == item || (size_t)(eq - item) >= sizeof(v[0].pattern) || !eq[1])
			return -EINVAL;
		errno = 0;
		lv = strtol(eq + 1, &e, 10);
		if (*e || errno || lv < 0 || lv > 1000000)
			return -EINVAL;
		snprintf(v[n].pattern, sizeof(v[n].pattern), "%.*s", (int)(eq - item), item);
		v[n].v = (int)lv;
		v[n].path = strchr(v[n].pattern, '/') != NULL;
		n++;
		p = end ? end + 1 : NULL;
	}
	memcpy(st.vmod, v, n * sizeof(v[0]));
	st.n_vmod = n;
	return 0;
}

bool kclog_v_enabled(int v, const char *file)
{
	char base[128];
	const char *b;
	size_t len;

	if (v <= st.v)
		return true;
	if (!st.n_vmod || !file)
		return false;
	/* klog matches the file's base name without its extension, or the path for a pattern
	 * with a '/' */
	b = strrchr(file, '/');
	b = b ? b + 1 : file;
	len = strlen(b);
	if (len > 2 && strcmp(b + len - 2, ".c") == 0)
		len -= 2;
	snprintf(base, sizeof(base), "%.*s", (int)len, b);
	for (unsigned i = 0; i < st.n_vmod; i++)
		if (fnmatch(st.vmod[i].pattern, st.vmod[i].path ? file : base, 0) == 0)
			return v <= st.vmod[i].v; /* the first matching pattern decides, as klog */
	return false;
}

void kclog_set_verbosity(int v)
{
	st.v = v;
}

int kclog_verbosity(void)
{
	return st.v;
}

bool kclog_to_journal(void)
{
	return st.journal;
}

/* Length of the valid UTF-8 sequence at s (at most len bytes) and its code point, or 0. */
static size_t utf8_seq(const unsigned char *s, size_t len, unsigned *cp)
{
	size_t k;
	unsigned c = s[0], min;

	if (c >= 0xc2 && c <= 0xdf)
		k = 2, c &= 0x1f, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		k = 3, c &= 0x0f, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		k = 4, c &= 0x07, min = 0x10000;
	else
		return 0;
	if (k > len)
		return 0;
	for (size_t i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return k;
}

size_t kclog_sanitize(char *dst, size_t n, const char *src, size_t len)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t o = 0;

	if (n == 0)
		return 0;
	for (size_t i = 0; i < len;) {
		char esc[8];
		const char *piece = esc;
		size_t pl, adv = 1;
		unsigned c = s[i], cp;

		if (c == '\n' || c == '\r' || c == '\t') {
			esc[0] = '\\';
			esc[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
			pl = 2;
		} else if (c < 0x20 || c == 0x7f) {
			pl = (size_t)snprintf(esc, sizeof(esc), "\\x%02x", c);
		} else if (c < 0x80) {
			piece = (const char *)s + i;
			pl = 1;
		} else if ((adv = utf8_seq(s + i, len - i, &cp)) == 0) {
			adv = 1;
			pl = (size_t)snprintf(esc, sizeof(esc), "\\x%02x", c);
		} else if (cp <= 0x9f || (cp >= 0x202a && cp <= 0x202e) ||
		           (cp >= 0x2066 && cp <= 0x2069)) {
			pl = (size_t)snprintf(esc, sizeof(esc), "\\u%04x", cp);
		} else {
			piece = (const char *)s + i;
			pl = adv;
		}
		if (o + pl >= n)
			break;
		memcpy(dst + o, piece, pl);
		o += pl;
		i += adv;
	}
	dst[o] = 0;
	return o;
}

const char *kclog_safe(char *buf, size_t n, const char *s)
{
	kclog_sanitize(buf, n, s ? s : "", s ? strlen(s) : 0);
	return buf;
}

static char level_letter(enum kclog_level l)
{
	switch (l) {
	case KCLOG_ERROR:
		return 'E';
	case KCLOG_WARNING:
		return 'W';
	default:
		return 'I';
	}
}

/* JSON string body of s (already sanitized: no control characters). */
static size_t json_esc(char *dst, size_t n, const char *s)
{
	size_t o = 0;

	for (; *s && o + 2 < n; s++) {
		if (*s == '"' || *s == '\\')
			dst[o++] = '\\';
		dst[o++] = *s;
	}
	dst[o] = 0;
	return o;
}

/* component-base's JSON line: {"ts":<ms>,"caller":"dir/file.c:N","msg":"...","v":N,...} */
static void emit_json(enum kclog_level level, int v, const char *file, int line,
                      const char *const *fields, const char *msg)
{
	char out[8192], esc[4200];
	size_t o = 0;
	struct timespec ts;
	const char *c = file, *p;

	clock_gettime(CLOCK_REALTIME, &ts);
	/* zap's ShortCallerEncoder: the last directory and the file */
	if ((p = strrchr(file, '/'))) {
		c = p;
		while (c > file && c[-1] != '/')
			c--;
	}
	json_esc(esc, sizeof(esc), msg);
	o += (size_t)snprintf(out + o, sizeof(out) - o,
	                      "{\"ts\":%.3f,\"caller\":\"%s:%d\",\"msg\":\"%s\"",
	                      (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6, c, line, esc);
	if (level != KCLOG_ERROR && o < sizeof(out))
		o += (size_t)snprintf(out + o, sizeof(out) - o, ",\"v\":%d", v);
	if (st.controller[0] && o < sizeof(out))
		o += (size_t)snprintf(out + o, sizeof(out) - o, ",\"controller\":\"%s\"",
		                      st.controller);
	for (size_t i = 0; fields && fields[i] && o < sizeof(out); i++) {
		const char *eq = strchr(fields[i], '=');
		char key[64], val[1024];
		size_t kl;
		if (!eq || (kl = (size_t)(eq - fields[i])) == 0 || kl >= sizeof(key))
			continue;
		for (size_t k = 0; k < kl; k++)
			key[k] = (char)tolower((unsigned char)fields[i][k]);
		key[kl] = 0;
		kclog_sanitize(val, sizeof(val), eq + 1, strlen(eq + 1));
		json_esc(esc, sizeof(esc), val);
		o += (size_t)snprintf(out + o, sizeof(out) - o, ",\"%s\":\"%s\"", key, esc);
	}
	if (o >= sizeof(out) - 2)
		o = sizeof(out) - 3; /* cut: the line stays one line, though no longer JSON */
	out[o++] = '}';
	out[o++] = '\n';
	fwrite(out, 1, o, stderr);
}

static void vlog(enum kclog_level level, int v, const char *file, int line,
                 const char *const *fields, const char *fmt, va_list ap)
{
	char raw[2048], msg[2048];
	int saved = errno;
	const char *withobj[KCLOG_FIELDS_MAX + 2];
	char objfield[sizeof(cur_object) + 8];

	if (cur_object[0]) { /* the synced object, unless the caller names one */
		size_t i = 0;
		bool named = false;
		for (; fields && fields[i] && i < KCLOG_FIELDS_MAX; i++) {
			withobj[i] = fields[i];
			named |= !strncmp(fields[i], "OBJECT=", 7);
		}
		if (!named) {
			snprintf(objfield, sizeof(objfield), "OBJECT=%s", cur_object);
			withobj[i++] = objfield;
		}
		withobj[i] = NULL;
		fields = withobj;
	}

	int rl = vsnprintf(raw, sizeof(raw), fmt, ap);
	/* the sink: whatever the message quotes (object names, Event messages, apiserver error
	 * bodies) cannot start a line or send a terminal escape */
	kclog_sanitize(msg, sizeof(msg), raw,
	               rl < 0                     ? 0
	               : (size_t)rl < sizeof(raw) ? (size_t)rl
	                                          : sizeof(raw) - 1);

	if (st.journal) {
		struct iovec iov[24];
		char b[8][2300];
		int n = 0, k = 0;
		snprintf(b[k], sizeof(b[k]), "MESSAGE=%s", msg);
		iov[n++] = (struct iovec){b[k], strlen(b[k])};
		k++;
		snprintf(b[k], sizeof(b[k]), "PRIORITY=%d", (int)level);
		iov[n++] = (struct iovec){b[k], strlen(b[k])};
		k++;
		snprintf(b[k], sizeof(b[k]), "KCMD_PROCESS=%s", st.process);
		iov[n++] = (struct iovec){b[k], strlen(b[k])};
		k++;
		snprintf(b[k], sizeof(b[k]), "CODE_FILE=%s", file);
		iov[n++] = (struct iovec){b[k], strlen(b[k])};
		k++;
		snprintf(b[k], sizeof(b[k]), "CODE_LINE=%d", line);
		iov[n++] = (struct iovec){b[k], strlen(b[k])};
		k++;
		snprintf(b[k], sizeof(b[k]), "SYSLOG_IDENTIFIER=%s", st.process);
		iov[n++] = (struct iovec){b[k], strlen(b[k])};
		k++;
		if (st.controller[0]) {
			snprintf(b[k], sizeof(b[k]), "KCMD_CONTROLLER=%s", st.controller);
			iov[n++] = (struct iovec){b[k], strlen(b[k])};
			k++;
			snprintf(b[k], sizeof(b[k]), "CONTROLLER=%s", st.controller);
			iov[n++] = (struct iovec){b[k], strlen(b[k])};
			k++;
		}
		char fb[4096];
		size_t fo = 0;
		for (size_t i = 0; fields && fields[i] && n < 24; i++) {
			const char *eq = strchr(fields[i], '=');
			size_t kl = eq ? (size_t)(eq - fields[i]) + 1 : 0;
			if (kl == 0 || fo + kl + 1 >= sizeof(fb))
				break; /* no room: the rest of the fields are dropped */
			memcpy(fb + fo, fields[i], kl);
			size_t vl = kclog_sanitize(fb + fo + kl, sizeof(fb) - fo - kl, eq + 1,
			                           strlen(eq + 1));
			iov[n++] = (struct iovec){fb + fo, kl + vl};
			fo += kl + vl + 1;
		}
		if (sd_journal_sendv(iov, n) >= 0) {
			errno = saved;
			return;
		}
		/* journald gone: fall through to stderr */
	}

	if (st.json) {
		emit_json(level, v, file, line, fields, msg);
		errno = saved;
		return;
	}

	struct timespec ts;
	struct tm tm;
	const char *base = strrchr(file, '/');
	char extra[1024] = "";
	size_t el = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	for (size_t i = 0; fields && fields[i]; i++) {
		const char *eq = strchr(fields[i], '=');
		char val[512];
		if (!eq)
			continue;
		kclog_sanitize(val, sizeof(val), eq + 1, strlen(eq + 1));
		int w = snprintf(extra + el, sizeof(extra) - el, " %.*s=\"%s\"",
		                 (int)(eq - fields[i]), fields[i], val);
		if (w < 0 || (size_t)w >= sizeof(extra) - el)
			break;
		el += (size_t)w;
	}
	fprintf(stderr, "%c%02d%02d %02d:%02d:%02d.%06ld %7d %s:%d] %s%s\n", level_letter(level),
	        tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000,
	        (int)getpid(), base ? base + 1 : file, line, msg, extra);
	errno = saved;
}

void kclog_log(enum kclog_level level, const char *file, int line, const char *const *fields,
               const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(level, 0, file, line, fields, fmt, ap);
	va_end(ap);
}

void kclog_log_v(int v, const char *file, int line, const char *const *fields, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(v > 0 ? KCLOG_DEBUG : KCLOG_INFO, v, file, line, fields, fmt, ap);
	va_end(ap);
}
