/* SPDX-License-Identifier: Apache-2.0 */
/* kube/time.c - RFC 3339 times as the apiserver writes them.
 *
 * metav1.Time is RFC 3339 with whole seconds; MicroTime has exactly six fractional digits; both
 * are written in UTC with "Z". We parse any RFC 3339 form (fraction of any length, truncated to
 * nanoseconds; "Z" or a numeric offset) and keep nanoseconds since the epoch in an int64, which
 * covers 1970..2262: enough for every timestamp a live cluster writes, and cheap to compare.
 * Calendar conversion is the days-from-civil arithmetic (no timegm(), no locale, no TZ).
 */
#include "kube/model.h"

#include <errno.h>
#include <time.h>

static int digits(const char *s, int n)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int *y, unsigned *m, unsigned *d)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t yy = (int64_t)yoe + era * 400;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int)(yy + (*m <= 2));
}

static bool leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

int kube_time_parse(const char *s, size_t n, kube_time_t *ret)
{
	static const unsigned char mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	if (!s || n < 20)
		return -EINVAL;
	if (s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':')
		return -EINVAL;
	int y = digits(s, 4), mo = digits(s + 5, 2), d = digits(s + 8, 2);
	int h = digits(s + 11, 2), mi = digits(s + 14, 2), se = digits(s + 17, 2);
	if (y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || se < 0 ||
	    se > 59)
		return -EINVAL;
	if (d > mdays[mo - 1] + (mo == 2 && leap(y)))
		return -EINVAL;
	size_t i = 19;
	int64_t frac = 0;
	if (i < n && s[i] == '.') {
		i++;
		size_t start = i;
		int nd = 0;
		while (i < n && s[i] >= '0' && s[i] <= '9') {
			if (nd < 9) {
				frac = frac * 10 + (s[i] - '0');
				nd++;
			}
			i++;
		}
		if (i == start)
			return -EINVAL;
		for (; nd < 9; nd++)
			frac *= 10;
	}
	int64_t off = 0;
	if (i < n && s[i] == 'Z') {
		i++;
	} else if (i < n && (s[i] == '+' || s[i] == '-')) {
		if (n - i < 6 || s[i + 3] != ':')
			return -EINVAL;
		int oh = digits(s + i + 1, 2), om = digits(s + i + 4, 2);
		if (oh < 0 || oh > 23 || om < 0 || om > 59)
			return -EINVAL;
		off = (int64_t)(oh * 3600 + om * 60) * (s[i] == '-' ? -1 : 1);
		i += 6;
	} else
		return -EINVAL;
	if (i != n)
		return -EINVAL;
	int64_t secs = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 +
	               se - off;
	if (secs < 0 || secs > INT64_MAX / 1000000000 - 1)
		return -ERANGE;
	kube_time_t t = secs * 1000000000 + frac;
	if (t == 0)
		t = 1; /* 1970-01-01T00:00:00Z itself: keep it distinguishable from "unset" */
	*ret = t;
	return 0;
}

static int fmt(kube_time_t t, char *buf, bool micro)
{
	int64_t secs = t / 1000000000, ns = t % 1000000000;
	if (ns < 0) {
		ns += 1000000000;
		secs--;
	}
	int64_t days = secs / 86400, rem = secs % 86400;
	if (rem < 0) {
		rem += 86400;
		days--;
	}
	int y;
	unsigned m, d;
	civil_from_days(days, &y, &m, &d);
	char *p = buf;
	int v[6] = {y, (int)m, (int)d, (int)(rem / 3600), (int)(rem / 60 % 60), (int)(rem % 60)};
	static const char seps[] = "--T::";
	for (int k = 0; k < 6; k++) {
		int w = k == 0 ? 4 : 2, x = v[k];
		if (k == 0 && (x < 0 || x > 9999))
			x = 0;
		for (int q = w - 1; q >= 0; q--) {
			p[q] = (char)('0' + x % 10);
			x /= 10;
		}
		p += w;
		if (k < 5)
			*p++ = seps[k];
	}
	if (micro) {
		int64_t us = ns / 1000;
		*p++ = '.';
		for (int q = 5; q >= 0; q--) {
			p[q] = (char)('0' + us % 10);
			us /= 10;
		}
		p += 6;
	}
	*p++ = 'Z';
	*p = 0;
	return (int)(p - buf);
}

int kube_time_format(kube_time_t t, char buf[static KUBE_TIME_BUF])
{
	return fmt(t, buf, false);
}

int kube_microtime_format(kube_time_t t, char buf[static KUBE_TIME_BUF])
{
	return fmt(t, buf, true);
}

kube_time_t kube_time_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (kube_time_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
