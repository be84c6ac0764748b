/* SPDX-License-Identifier: Apache-2.0 */
/* lib/fence-env.c: a child's leadership fence from its environment (see fence-env.h). */
#include "lib/fence-env.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kube/client.h"
#include "kube/fence.h"
#include "lib/log.h"
#include "shm/arena.h"

static struct kube_fence *f;
static struct kube_fence *leadership; /* the same memfd, read for its epoch only */

int kcmd_leadership_from_env(void)
{
	const char *v = getenv("KCMD_LEADERSHIP_FD");
	char *end;
	long fd;
	int r;

	if (leadership)
		return 1;
	if (!v || !*v)
		return 0;
	fd = strtol(v, &end, 10);
	if (*end || fd < 0 || fd > 65535) {
		log_error("bad KCMD_LEADERSHIP_FD=%s", v);
		return -EINVAL;
	}
	if ((r = kube_fence_open((int)fd, false, &leadership)) < 0) {
		log_error("KCMD_LEADERSHIP_FD: cannot map the leadership epoch: %s", strerror(-r));
		return r;
	}
	return 1;
}

uint32_t kcmd_leadership_epoch(uint64_t *ret_lease_rv)
{
	return kube_fence_epoch(leadership, ret_lease_rv);
}

static uint32_t current_epoch(void)
{
	return kube_fence_epoch(leadership, NULL);
}

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
	/* the acquisition barrier: caches count as synced only once relisted for this term */
	if ((r = kcmd_leadership_from_env()) < 0)
		return r;
	if (r > 0)
		shm_reader_set_epoch_source(current_epoch);
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
