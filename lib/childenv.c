/* SPDX-License-Identifier: Apache-2.0 */
/* lib/childenv.c: the child-process contract's fds (see childenv.h). */
#include "lib/childenv.h"

#include <stdlib.h>
#include <string.h>

int kcmd_env_fd(const char *name)
{
	const char *v = getenv(name);
	char *end;
	long fd;

	if (!v || !*v)
		return -1;
	fd = strtol(v, &end, 10);
	return *end || fd < 0 || fd > 65535 ? -1 : (int)fd;
}

int kcmd_env_queue_fd(const char *want)
{
	const char *v = getenv("KCMD_QUEUE_FDS");
	size_t wl = strlen(want);

	while (v && *v) {
		const char *colon = strchr(v, ':');
		if (!colon)
			return -1;
		if ((size_t)(colon - v) == wl && strncmp(v, want, wl) == 0) {
			char *end;
			long fd = strtol(colon + 1, &end, 10);
			return (*end && *end != ',') || fd < 0 || fd > 65535 ? -1 : (int)fd;
		}
		v = strchr(colon, ',');
		if (v)
			v++;
	}
	return -1;
}
