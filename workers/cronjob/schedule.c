/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/cronjob/schedule.c: robfig/cron v3's standard parser and Next, over Go's time
 * arithmetic in a tz-database zone (see schedule.h).
 */
#include "workers/cronjob/schedule.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/goflag.h"

#define ZONEINFO_DIR "/usr/share/zoneinfo/"
#define STAR_BIT     (UINT64_C(1) << 63)

/* ---- zones ------------------------------------------------------------------------------------
 * glibc keeps one current zone (TZ). A FILE zone is selected for the duration of one public
 * call (zone_enter) and the process's own TZ put back after it (zone_leave). */
static bool orig_saved;
static char *orig_tz; /* NULL: TZ was unset */

static void zone_enter(const struct cj_zone *z)
{
	char buf[CJ_ZONE_NAME_MAX + 64];

	if (z->kind != CJ_ZONE_FILE)
		return;
	if (!orig_saved) {
		const char *tz = getenv("TZ");
		orig_tz = tz ? strdup(tz) : NULL;
		orig_saved = true;
	}
	snprintf(buf, sizeof(buf), ":" ZONEINFO_DIR "%s", z->name);
	setenv("TZ", buf, 1);
	tzset();
}

static void zone_leave(const struct cj_zone *z)
{
	if (z->kind != CJ_ZONE_FILE)
		return;
	if (orig_tz)
		setenv("TZ", orig_tz, 1);
	else
		unsetenv("TZ");
	tzset();
}

int cj_zone_load(const char *name, struct cj_zone *ret, char *err, size_t errlen)
{
	char path[CJ_ZONE_NAME_MAX + sizeof(ZONEINFO_DIR)], magic[4];
	int fd;
	ssize_t n;

	memset(ret, 0, sizeof(*ret));
	if (!name || !name[0] || !strcmp(name, "UTC")) {
		ret->kind = CJ_ZONE_UTC;
		return 0;
	}
	if (!strcmp(name, "Local")) {
		ret->kind = CJ_ZONE_LOCAL;
		return 0;
	}
	if (strstr(name, "..") || name[0] == '/' || name[0] == '\\') {
		snprintf(err, errlen, "time: invalid location name");
		return -EINVAL;
	}
	if (strlen(name) >= CJ_ZONE_NAME_MAX)
		goto unknown;
	snprintf(path, sizeof(path), ZONEINFO_DIR "%s", name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		goto unknown;
	n = read(fd, magic, sizeof(magic));
	close(fd);
	if (n != (ssize_t)sizeof(magic) || memcmp(magic, "TZif", 4) != 0)
		goto unknown;
	ret->kind = CJ_ZONE_FILE;
	snprintf(ret->name, sizeof(ret->name), "%s", name);
	return 0;
unknown:
	snprintf(err, errlen, "unknown time zone %s", name);
	return -ENOENT;
}

/* The offset at t with the zone already selected. */
static int32_t off_at(const struct cj_zone *z, int64_t t)
{
	struct tm tm;
	time_t tt = (time_t)t;

	if (z->kind == CJ_ZONE_UTC)
		return 0;
	if (!localtime_r(&tt, &tm))
		return 0;
	return (int32_t)tm.tm_gmtoff;
}

int32_t cj_zone_offset(const struct cj_zone *z, int64_t t)
{
	int32_t off;

	zone_enter(z);
	off = off_at(z, t);
	zone_leave(z);
	return off;
}

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;
	return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
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

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t yy = (int64_t)yoe + era * 400;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yy + (*m <= 2);
}

static void civil_at(const struct cj_zone *z, int64_t t, struct cj_civil *c)
{
	int64_t s, days, rem;

	c->offset = off_at(z, t);
	s = t + c->offset;
	days = floor_div(s, 86400);
	rem = s - days * 86400;
	civil_from_days(days, &c->year, &c->month, &c->day);
	c->hour = (int)(rem / 3600);
	c->min = (int)(rem / 60 % 60);
	c->sec = (int)(rem % 60);
	c->wday = (int)(days + 4 - floor_div(days + 4, 7) * 7); /* 1970-01-01 was a Thursday */
}

void cj_civil(const struct cj_zone *z, int64_t t, struct cj_civil *ret)
{
	zone_enter(z);
	civil_at(z, t, ret);
	zone_leave(z);
}

/* Go's time.Date with the zone selected: normalise, take the wall time as if it were UTC,
 * then subtract the offset in effect at (that - the offset in effect at it). */
static int64_t date_at(const struct cj_zone *z, int64_t year, int64_t month, int64_t day,
                       int64_t hour, int64_t min, int64_t sec)
{
	int64_t m0 = month - 1, unix;

	year += floor_div(m0, 12);
	m0 -= floor_div(m0, 12) * 12;
	min += floor_div(sec, 60);
	sec -= floor_div(sec, 60) * 60;
	hour += floor_div(min, 60);
	min -= floor_div(min, 60) * 60;
	day += floor_div(hour, 24);
	hour -= floor_div(hour, 24) * 24;
	unix = (days_from_civil(year, (unsigned)m0 + 1, 1) + day - 1) * 86400 + hour * 3600 +
	       min * 60 + sec;
	return unix - off_at(z, unix - off_at(z, unix));
}

int64_t cj_date(const struct cj_zone *z, int64_t year, int month, int day, int hour, int min,
                int sec)
{
	int64_t t;

	zone_enter(z);
	t = date_at(z, year, month, day, hour, min, sec);
	zone_leave(z);
	return t;
}

/* ---- parsing ----------------------------------------------------------------------------------
 */
struct bounds {
	unsigned min, max;
	const char *const *names; /* names[i] is value min_name + i */
	unsigned names_first, n_names;
};

static const char *const month_names[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                          "jul", "aug", "sep", "oct", "nov", "dec"};
static const char *const dow_names[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};
static const struct bounds b_seconds = {0, 59, NULL, 0, 0}, b_minutes = {0, 59, NULL, 0, 0},
                           b_hours = {0, 23, NULL, 0, 0}, b_dom = {1, 31, NULL, 0, 0},
                           b_months = {1, 12, month_names, 1, 12}, b_dow = {0, 6, dow_names, 0, 7};

/* strconv.Atoi then a sign check: an optional sign, decimal digits, nothing else. */
static int parse_uint(const char *s, size_t n, unsigned *ret, char *err, size_t errlen)
{
	size_t i = 0;
	bool neg = false;
	long long v = 0;

	if (i < n && (s[i] == '+' || s[i] == '-'))
		neg = s[i++] == '-';
	if (i == n)
		goto bad;
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			goto bad;
		if (v > (LLONG_MAX - 9) / 10) {
			snprintf(err, errlen,
			         "failed to parse int from %.*s: strconv.Atoi: parsing \"%.*s\": "
			         "value out of range",
			         (int)n, s, (int)n, s);
			return -EINVAL;
		}
		v = v * 10 + (s[i] - '0');
	}
	if (neg && v > 0) {
		snprintf(err, errlen, "negative number (-%lld) not allowed: %.*s", v, (int)n, s);
		return -EINVAL;
	}
	*ret = v > UINT_MAX ? UINT_MAX : (unsigned)v;
	return 0;
bad:
	snprintf(err, errlen,
	         "failed to parse int from %.*s: strconv.Atoi: parsing \"%.*s\": "
	         "invalid syntax",
	         (int)n, s, (int)n, s);
	return -EINVAL;
}

static int parse_int_or_name(const char *s, size_t n, const struct bounds *r, unsigned *ret,
                             char *err, size_t errlen)
{
	for (unsigned i = 0; r->names && i < r->n_names; i++)
		if (strlen(r->names[i]) == n && !strncasecmp(s, r->names[i], n)) {
			*ret = r->names_first + i;
			return 0;
		}
	return parse_uint(s, n, ret, err, errlen);
}

static uint64_t get_bits(unsigned min, unsigned max, unsigned step)
{
	uint64_t bits = 0;

	for (unsigned i = min; i <= max; i += step)
		bits |= UINT64_C(1) << i;
	return bits;
}

/* One comma-free piece: number, name, '*', '?', a-b, with an optional /step. */
static int get_range(const char *e, size_t n, const struct bounds *r, uint64_t *ret, char *err,
                     size_t errlen)
{
	const char *slash = memchr(e, '/', n), *dash;
	size_t low_n = slash ? (size_t)(slash - e) : n;
	unsigned start, end, step = 1;
	uint64_t extra = 0;
	bool single;
	int rc;

	dash = memchr(e, '-', low_n);
	single = !dash;
	if ((low_n >= 1 && (e[0] == '*' || e[0] == '?')) &&
	    (dash ? (size_t)(dash - e) : low_n) == 1) {
		start = r->min;
		end = r->max;
		extra = STAR_BIT;
	} else {
		size_t first = dash ? (size_t)(dash - e) : low_n;
		if ((rc = parse_int_or_name(e, first, r, &start, err, errlen)) < 0)
			return rc;
		if (!dash) {
			end = start;
		} else {
			const char *hi = dash + 1;
			size_t hi_n = low_n - first - 1;
			if (memchr(hi, '-', hi_n)) {
				snprintf(err, errlen, "too many hyphens: %.*s", (int)n, e);
				return -EINVAL;
			}
			if ((rc = parse_int_or_name(hi, hi_n, r, &end, err, errlen)) < 0)
				return rc;
		}
	}
	if (slash && memchr(slash + 1, '/', n - low_n - 1)) {
		snprintf(err, errlen, "too many slashes: %.*s", (int)n, e);
		return -EINVAL;
	}
	if (slash) {
		if ((rc = parse_uint(slash + 1, n - low_n - 1, &step, err, errlen)) < 0)
			return rc;
		if (single)
			end = r->max;
		if (step > 1)
			extra = 0;
	}
	if (start < r->min) {
		snprintf(err, errlen, "beginning of range (%u) below minimum (%u): %.*s", start,
		         r->min, (int)n, e);
		return -EINVAL;
	}
	if (end > r->max) {
		snprintf(err, errlen, "end of range (%u) above maximum (%u): %.*s", end, r->max,
		         (int)n, e);
		return -EINVAL;
	}
	if (start > end) {
		snprintf(err, errlen, "beginning of range (%u) beyond end of range (%u): %.*s",
		         start, end, (int)n, e);
		return -EINVAL;
	}
	if (step == 0) {
		snprintf(err, errlen, "step of range should be a positive number: %.*s", (int)n, e);
		return -EINVAL;
	}
	*ret = get_bits(start, end, step) | extra;
	return 0;
}

static int get_field(const char *f, size_t n, const struct bounds *r, uint64_t *ret, char *err,
                     size_t errlen)
{
	uint64_t bits = 0, b;
	size_t i = 0;
	int rc;

	while (i < n) {
		size_t j = i;
		while (j < n && f[j] != ',')
			j++;
		if (j > i) { /* strings.FieldsFunc drops empty pieces */
			if ((rc = get_range(f + i, j - i, r, &b, err, errlen)) < 0)
				return rc;
			bits |= b;
		}
		i = j + 1;
	}
	*ret = bits;
	return 0;
}

static uint64_t all_bits(const struct bounds *r)
{
	return get_bits(r->min, r->max, 1) | STAR_BIT;
}

static int parse_descriptor(const char *d, struct cj_sched *s, char *err, size_t errlen)
{
	static const char every[] = "@every ";

	s->second = UINT64_C(1) << b_seconds.min;
	s->minute = UINT64_C(1) << b_minutes.min;
	s->hour = UINT64_C(1) << b_hours.min;
	s->dom = all_bits(&b_dom);
	s->month = all_bits(&b_months);
	s->dow = all_bits(&b_dow);
	if (!strcmp(d, "@yearly") || !strcmp(d, "@annually")) {
		s->dom = UINT64_C(1) << b_dom.min;
		s->month = UINT64_C(1) << b_months.min;
	} else if (!strcmp(d, "@monthly")) {
		s->dom = UINT64_C(1) << b_dom.min;
	} else if (!strcmp(d, "@weekly")) {
		s->dow = UINT64_C(1) << b_dow.min;
	} else if (!strcmp(d, "@daily") || !strcmp(d, "@midnight")) {
		/* the defaults above */
	} else if (!strcmp(d, "@hourly")) {
		s->hour = all_bits(&b_hours);
	} else if (!strncmp(d, every, sizeof(every) - 1)) {
		uint64_t us;
		if (kcmd_parse_duration(d + sizeof(every) - 1, &us) < 0) {
			snprintf(err, errlen,
			         "failed to parse duration %s: time: invalid duration \"%s\"", d,
			         d + sizeof(every) - 1);
			return -EINVAL;
		}
		/* cron.Every: at least a second, whole seconds */
		s->every = true;
		s->delay = us < 1000000 ? 1 : (int64_t)(us / 1000000);
	} else {
		snprintf(err, errlen, "unrecognized descriptor: %s", d);
		return -EINVAL;
	}
	return 0;
}

int cj_sched_parse(const char *spec, struct cj_sched *ret, char *err, size_t errlen)
{
	const char *f[8];
	size_t fl[8], nf = 0;
	const char *p;
	int rc;

	memset(ret, 0, sizeof(*ret));
	ret->zone.kind = CJ_ZONE_LOCAL;
	if (!spec || !spec[0]) {
		snprintf(err, errlen, "empty spec string");
		return -EINVAL;
	}
	if (!strncmp(spec, "TZ=", 3) || !strncmp(spec, "CRON_TZ=", 8)) {
		const char *sp = strchr(spec, ' '), *eq = strchr(spec, '=');
		char name[CJ_ZONE_NAME_MAX], zerr[128];
		size_t n;
		if (!sp) { /* robfig slices out of range here (a panic); the apiserver refuses it */
			snprintf(err, errlen, "provided bad location %s: no schedule", eq + 1);
			return -EINVAL;
		}
		n = (size_t)(sp - eq - 1);
		if (n >= sizeof(name)) {
			snprintf(err, errlen, "provided bad location: name too long");
			return -EINVAL;
		}
		memcpy(name, eq + 1, n);
		name[n] = '\0';
		if (cj_zone_load(name, &ret->zone, zerr, sizeof(zerr)) < 0) {
			snprintf(err, errlen, "provided bad location %s: %s", name, zerr);
			return -EINVAL;
		}
		spec = sp;
		while (*spec && isspace((unsigned char)*spec))
			spec++;
		/* strings.TrimSpace: trailing space too (it matters to a descriptor) */
		size_t len = strlen(spec);
		while (len && isspace((unsigned char)spec[len - 1]))
			len--;
		if (spec[0] == '@') {
			char d[128];
			if (len >= sizeof(d)) {
				snprintf(err, errlen, "unrecognized descriptor: %.*s", (int)len,
				         spec);
				return -EINVAL;
			}
			memcpy(d, spec, len);
			d[len] = '\0';
			return parse_descriptor(d, ret, err, errlen);
		}
	} else if (spec[0] == '@') {
		return parse_descriptor(spec, ret, err, errlen);
	}
	for (p = spec; *p;) {
		while (*p && isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		const char *s = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		if (nf < 8) {
			f[nf] = s;
			fl[nf] = (size_t)(p - s);
		}
		nf++;
	}
	if (nf != 5) {
		size_t o = (size_t)snprintf(err, errlen, "expected exactly 5 fields, found %zu: [",
		                            nf);
		for (size_t i = 0; i < nf && i < 8 && o < errlen; i++)
			o += (size_t)snprintf(err + o, errlen - o, "%s%.*s", i ? " " : "",
			                      (int)fl[i], f[i]);
		if (o < errlen)
			snprintf(err + o, errlen - o, "]");
		return -EINVAL;
	}
	ret->second = UINT64_C(1) << 0;
	if ((rc = get_field(f[0], fl[0], &b_minutes, &ret->minute, err, errlen)) < 0 ||
	    (rc = get_field(f[1], fl[1], &b_hours, &ret->hour, err, errlen)) < 0 ||
	    (rc = get_field(f[2], fl[2], &b_dom, &ret->dom, err, errlen)) < 0 ||
	    (rc = get_field(f[3], fl[3], &b_months, &ret->month, err, errlen)) < 0 ||
	    (rc = get_field(f[4], fl[4], &b_dow, &ret->dow, err, errlen)) < 0)
		return rc;
	return 0;
}

/* ---- Next ---------------------------------------------------------------------------------- */
static bool bit(uint64_t set, int v)
{
	return v >= 0 && v < 63 && (set >> v) & 1;
}

static bool day_matches(const struct cj_sched *s, const struct cj_civil *c)
{
	bool dom = bit(s->dom, c->day), dow = bit(s->dow, c->wday);

	if ((s->dom & STAR_BIT) || (s->dow & STAR_BIT))
		return dom && dow;
	return dom || dow;
}

static int64_t next_at(const struct cj_sched *s, const struct cj_zone *z, int64_t t)
{
	struct cj_civil c;
	bool added = false;
	int64_t year_limit;

	t += 1;
	civil_at(z, t, &c);
	year_limit = c.year + 5;
wrap:
	civil_at(z, t, &c);
	if (c.year > year_limit)
		return CJ_TIME_ZERO;
	while (!bit(s->month, c.month)) {
		if (!added) {
			added = true;
			t = date_at(z, c.year, c.month, 1, 0, 0, 0);
			civil_at(z, t, &c);
		}
		t = date_at(z, c.year, c.month + 1, c.day, c.hour, c.min, c.sec);
		civil_at(z, t, &c);
		if (c.month == 1)
			goto wrap;
	}
	while (!day_matches(s, &c)) {
		if (!added) {
			added = true;
			t = date_at(z, c.year, c.month, c.day, 0, 0, 0);
			civil_at(z, t, &c);
		}
		t = date_at(z, c.year, c.month, c.day + 1, c.hour, c.min, c.sec);
		civil_at(z, t, &c);
		/* a day that does not start at midnight (DST at 00:00): back to the nearest one */
		if (c.hour != 0) {
			if (c.hour > 12)
				t += (int64_t)(24 - c.hour) * 3600;
			else
				t -= (int64_t)c.hour * 3600;
			civil_at(z, t, &c);
		}
		if (c.day == 1)
			goto wrap;
	}
	while (!bit(s->hour, c.hour)) {
		if (!added) {
			added = true;
			t = date_at(z, c.year, c.month, c.day, c.hour, 0, 0);
		}
		t += 3600;
		civil_at(z, t, &c);
		if (c.hour == 0)
			goto wrap;
	}
	while (!bit(s->minute, c.min)) {
		if (!added) {
			added = true;
			t = floor_div(t, 60) * 60; /* Truncate(time.Minute): absolute, not wall */
		}
		t += 60;
		civil_at(z, t, &c);
		if (c.min == 0)
			goto wrap;
	}
	while (!bit(s->second, c.sec)) {
		if (!added)
			added = true; /* Truncate(time.Second): already whole */
		t += 1;
		civil_at(z, t, &c);
		if (c.sec == 0)
			goto wrap;
	}
	return t;
}

int64_t cj_sched_next(const struct cj_sched *s, int64_t t)
{
	int64_t r;

	if (s->every)
		return t + s->delay;
	zone_enter(&s->zone);
	r = next_at(s, &s->zone, t);
	zone_leave(&s->zone);
	return r;
}

/* ---- formatting ------------------------------------------------------------------------------ */
void cj_format_rfc3339(const struct cj_zone *z, int64_t t, char buf[40])
{
	struct cj_civil c;

	cj_civil(z, t, &c);
	int n = snprintf(buf, 40, "%04lld-%02d-%02dT%02d:%02d:%02d", (long long)c.year, c.month,
	                 c.day, c.hour, c.min, c.sec);
	if (c.offset == 0)
		snprintf(buf + n, 40 - (size_t)n, "Z");
	else
		snprintf(buf + n, 40 - (size_t)n, "%c%02d:%02d", c.offset < 0 ? '-' : '+',
		         abs(c.offset) / 3600, abs(c.offset) / 60 % 60);
}

void cj_format_rfc1123z(int64_t t, char buf[40])
{
	static const char *const wd[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
	static const char *const mn[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
	                                 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
	struct cj_zone utc = {.kind = CJ_ZONE_UTC};
	struct cj_civil c;

	cj_civil(&utc, t, &c);
	snprintf(buf, 40, "%s, %02d %s %04lld %02d:%02d:%02d +0000", wd[c.wday], c.day,
	         mn[c.month - 1], (long long)c.year, c.hour, c.min, c.sec);
}
