/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/cronjob/schedule.h: cron schedules as kube-controller-manager reads them
 * (robfig/cron v3's standard parser, cron.ParseStandard) and their next activation
 * (SpecSchedule.Next / ConstantDelaySchedule.Next), in a time zone of the system's tz database.
 *
 * Design note.
 *   Times are Unix seconds (int64). A zone is "Local" (the process's own zone: TZ, else
 *   /etc/localtime, as Go's time.Local), UTC, or a name of /usr/share/zoneinfo (Go's
 *   time.LoadLocation, which kcm falls back to an embedded copy of; kcmd uses the system's
 *   database only). Wall-clock arithmetic follows Go's time.Date (a wall time in a DST gap or
 *   overlap resolves to the offset Go picks) so that Next gives robfig's answer in every zone,
 *   DST transitions included. The offset at an instant comes from glibc (localtime_r with TZ
 *   switched to the zone's file for the duration of one call and restored after it): the
 *   worker and the dispatcher that call this are single-threaded, and nothing else may read
 *   the local time during a call.
 *   Rejected: a TZif parser of our own (glibc already reads the files, footer rules included).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Go's zero time.Time (January 1, year 1, UTC) as Unix seconds: what Next returns when no
 * activation exists within five years. */
#define CJ_TIME_ZERO INT64_C(-62135596800)

#define CJ_ZONE_NAME_MAX 256

struct cj_zone {
	enum { CJ_ZONE_LOCAL, CJ_ZONE_UTC, CJ_ZONE_FILE } kind;
	char name[CJ_ZONE_NAME_MAX]; /* as given (FILE) */
};

/* Go's time.LoadLocation(name): "" and "UTC" are UTC, "Local" the process's zone, anything else
 * a file of the tz database. Returns 0, or -ENOENT with err = Go's message ("unknown time zone
 * X"), -EINVAL ("time: invalid location name") for a name with ".." or a leading '/' or '\\'. */
int cj_zone_load(const char *name, struct cj_zone *ret, char *err, size_t errlen);

/* The zone's offset east of UTC, in seconds, at instant t. */
int32_t cj_zone_offset(const struct cj_zone *z, int64_t t);

/* Wall-clock fields of an instant in a zone (Go's Year(), Month(), ...). */
struct cj_civil {
	int64_t year;
	int month, day, hour, min, sec, wday; /* month 1..12, wday 0 = Sunday */
	int32_t offset;                       /* seconds east of UTC */
};
void cj_civil(const struct cj_zone *z, int64_t t, struct cj_civil *ret);

/* Go's time.Date(year, month, day, hour, min, sec, 0, zone): out-of-range fields normalise (day
 * 32 is the next month's first, month 13 next year's January), and a wall time that a DST
 * change skips or repeats resolves as Go does. */
int64_t cj_date(const struct cj_zone *z, int64_t year, int month, int day, int hour, int min,
                int sec);

struct cj_sched {
	bool every;                                     /* @every <duration>: constant delay */
	int64_t delay;                                  /* every: whole seconds, >= 1 */
	uint64_t second, minute, hour, dom, month, dow; /* bit sets; bit 63: the field was '*' */
	struct cj_zone zone;
};

/* cron.ParseStandard(spec): an optional "TZ=<zone> " or "CRON_TZ=<zone> " prefix, then either
 * a descriptor (@yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly, @every
 * <Go duration>) or five fields (minute, hour, day of month, month, day of week) of numbers,
 * names (jan..dec, sun..sat, any case), '*' or '?', ranges a-b, steps /n and lists a,b.
 * Returns 0, or -EINVAL with robfig's message in err. */
int cj_sched_parse(const char *spec, struct cj_sched *ret, char *err, size_t errlen);

/* schedule.Next(t): the first activation strictly after t (whole seconds; a fraction is
 * dropped as robfig drops nanoseconds), or CJ_TIME_ZERO when none exists within five years
 * (an impossible date such as February 30). */
int64_t cj_sched_next(const struct cj_sched *s, int64_t t);

/* RFC 3339 of t in zone z, as Go's Format(time.RFC3339): "Z" for a zero offset, else +hh:mm. */
void cj_format_rfc3339(const struct cj_zone *z, int64_t t, char buf[40]);
/* Go's t.UTC().Format(time.RFC1123Z): "Mon, 02 Jan 2006 15:04:05 +0000". */
void cj_format_rfc1123z(int64_t t, char buf[40]);
