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
	char msg[2048];
	va_list ap;
	int saved = errno;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

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
		for (size_t i = 0; fields && fields[i] && n < 24; i++)
			iov[n++] = (struct iovec){(void *)fields[i], strlen(fields[i])};
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
		if (!eq)
			continue;
		int w = snprintf(extra + el, sizeof(extra) - el, " %.*s=\"%s\"",
		                 (int)(eq - fields[i]), fields[i], eq + 1);
		if (w < 0 || (size_t)w >= sizeof(extra) - el)
			break;
		el += (size_t)w;
	}
	fprintf(stderr, "%c%02d%02d %02d:%02d:%02d.%06ld %7d %s:%d] %s%s\n", level_letter(level),
	        tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000,
	        (int)getpid(), base ? base + 1 : file, line, msg, extra);
	errno = saved;
}
