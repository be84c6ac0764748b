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
	return kcmd_env_named_fd("KCMD_QUEUE_FDS", want);
}

int kcmd_env_named_fd(const char *var, const char *want)
{
	const char *v = getenv(var);
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

bool kcmd_child_arg(struct kcmd_child_args *c, const char *a)
{
	if (strncmp(a, "--controller=", 13) == 0)
		c->controller = a + 13;
	else if (strncmp(a, "--kubeconfig=", 13) == 0)
		c->kubeconfig = a + 13;
	else if (strncmp(a, "--master=", 9) == 0)
		c->master = a + 9;
	else if (strncmp(a, "--kube-api-qps=", 15) == 0)
		c->qps = strtod(a + 15, NULL);
	else if (strncmp(a, "--kube-api-burst=", 17) == 0)
		c->burst = (int)strtol(a + 17, NULL, 10);
	else if (strncmp(a, "--v=", 4) == 0)
		c->v = (int)strtol(a + 4, NULL, 10);
	else
		return false;
	return true;
}
