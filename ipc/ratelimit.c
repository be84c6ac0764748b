/* SPDX-License-Identifier: Apache-2.0 */
/* ipc/ratelimit.c: see ratelimit.h. */
#include "ipc/ratelimit.h"

void ipc_bucket_init(struct ipc_bucket *b, double qps, uint32_t burst, uint64_t now_usec)
{
	b->qps = qps;
	b->burst = burst;
	b->tokens = burst;
	b->last_usec = now_usec;
}

uint64_t ipc_bucket_reserve(struct ipc_bucket *b, uint64_t now_usec)
{
	if (b->qps <= 0)
		return 0;
	if (now_usec > b->last_usec) {
		b->tokens += (double)(now_usec - b->last_usec) * b->qps / 1e6;
		if (b->tokens > b->burst)
			b->tokens = b->burst;
		b->last_usec = now_usec;
	}
	b->tokens -= 1.0;
	if (b->tokens >= 0)
		return 0;
	return (uint64_t)(-b->tokens * 1e6 / b->qps + 0.5);
}

uint64_t ipc_backoff_exp(uint32_t failures, uint64_t base_usec, uint64_t max_usec)
{
	if (base_usec == 0)
		return 0;
	if (failures >= 63 || base_usec > (max_usec >> failures))
		return max_usec;
	uint64_t d = base_usec << failures;
	return d > max_usec ? max_usec : d;
}
