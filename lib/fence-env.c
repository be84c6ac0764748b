/* SPDX-License-Identifier: Apache-2.0 */
/* lib/fence-env.c: a child's leadership fence from its environment (see fence-env.h). */
#include "lib/fence-env.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kube/client.h"
#include "ipc/loop.h"
#include "kube/fence.h"
#include "kube/shard.h"
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

const struct kube_fence *kcmd_leadership_fence(void)
{
	return leadership;
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

/* ---- sharding ---- */

unsigned kcmd_shard_ranges(void)
{
	return kube_fence_ranges(leadership);
}

unsigned kcmd_shard_key_range(enum kube_shard_keys keys, const char *key)
{
	return kube_shard_key_range(keys, key, kcmd_shard_ranges());
}

bool kcmd_shard_range_owned(unsigned r)
{
	if (kcmd_shard_ranges() == 0)
		return true;
	return kube_fence_range_allows(leadership, r, ipc_now_usec());
}

bool kcmd_shard_key_owned(enum kube_shard_keys keys, const char *key)
{
	return kcmd_shard_range_owned(kcmd_shard_key_range(keys, key));
}

uint64_t kcmd_shard_gen(void)
{
	return kube_fence_range_gen(leadership);
}

void kcmd_shard_setup_process(enum kube_shard_keys keys)
{
	if (kcmd_shard_ranges() > 0)
		kube_client_set_process_unsharded(keys == KUBE_SHARD_KEYS_NONE);
}
