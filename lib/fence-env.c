/* SPDX-License-Identifier: Apache-2.0 */
/* lib/fence-env.c: a child's leadership fence from its environment (see fence-env.h). */
#include "lib/fence-env.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kube/client.h"
#include "kube/fence.h"
#include "lib/log.h"

static struct kube_fence *f;

const struct kube_fence *kcmd_fence(void)
{
	return f;
}

int kcmd_fence_from_env(void)
{
	const char *v = getenv("KCMD_FENCE_FD");
	char *end;
	long fd;
	int r;

	if (f)
		return 1;
	if (!v || !*v)
		return 0;
	fd = strtol(v, &end, 10);
	if (*end || fd < 0 || fd > 65535) {
		log_error("bad KCMD_FENCE_FD=%s", v);
		return -EINVAL;
	}
	if ((r = kube_fence_open((int)fd, false, &f)) < 0) {
		log_error("KCMD_FENCE_FD: cannot map the leadership fence: %s", strerror(-r));
		return r;
	}
	kube_client_set_process_fence(f);
	return 1;
}
