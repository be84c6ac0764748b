/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/log.c: klog-format stderr or structured journald logging (see log.h).
 */
#include "lib/log.h"

#include <errno.h>
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

static struct {
	char process[32];
	char controller[64];
	int v;
	bool journal;
} st = {.process = "kcmd"};

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

void kclog_log(enum kclog_level level, const char *file, int line, const char *const *fields,
               const char *fmt, ...)
{
	char raw[2048], msg[2048];
	va_list ap;
	int saved = errno;

	va_start(ap, fmt);
	int rl = vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
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
