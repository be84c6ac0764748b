/* SPDX-License-Identifier: Apache-2.0 */
/* workers/cronjob/fuzz/fuzz-schedule.c - cron schedules (workers/cronjob/schedule.h), the
 * parser of a CronJob's spec.schedule. The input is the spec. Invariants: a refused spec has a
 * message; an accepted one's next activation after a few fixed instants is later than the
 * instant (or the zero time: none within five years), falls on a second, minute, hour, month
 * and day the schedule names (in its zone), and the activation after it is later still. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "workers/cronjob/schedule.h"

static bool has(uint64_t set, int v)
{
	return v >= 0 && v < 63 && ((set >> v) & 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int64_t from[] = {0, 1331449200 /* DST change in New York */, 1463652000,
	                               4102444800 /* 2100 */};
	char *spec = malloc(size + 1), err[256] = "";
	struct cj_sched s;

	if (!spec)
		return 0;
	memcpy(spec, data, size);
	spec[size] = 0;
	if (cj_sched_parse(spec, &s, err, sizeof(err)) != 0) {
		if (!err[0])
			abort();
		free(spec);
		return 0;
	}
	for (size_t i = 0; i < sizeof(from) / sizeof(from[0]); i++) {
		int64_t n = cj_sched_next(&s, from[i]);
		struct cj_civil c;
		if (n == CJ_TIME_ZERO)
			continue;
		if (n <= from[i])
			abort();
		if (s.every)
			continue;
		cj_civil(&s.zone, n, &c);
		bool dom = has(s.dom, c.day), dow = has(s.dow, c.wday);
		bool day = ((s.dom >> 63) || (s.dow >> 63)) ? dom && dow : dom || dow;
		if (!has(s.second, c.sec) || !has(s.minute, c.min) || !has(s.hour, c.hour) ||
		    !has(s.month, c.month) || !day)
			abort();
		int64_t m = cj_sched_next(&s, n);
		if (m != CJ_TIME_ZERO && m <= n)
			abort();
	}
	free(spec);
	return 0;
}
