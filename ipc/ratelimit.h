/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * ipc/ratelimit.h: client-go's default controller rate limiter, as pure functions of a clock so
 * tests can drive time. Internal to ipc/ (the queue owner uses it; tests include it directly).
 *
 * When(key) = max(exponential: base * 2^failures (then failures++), capped at max, overflow
 * guarded; bucket: golang.org/x/time/rate Reserve() semantics, tokens start at burst, refill at
 * qps, may go negative, delay = deficit / qps). Both limiters are charged on every call, as
 * client-go's MaxOfRateLimiter calls When on each.
 */
#include <stdint.h>

struct ipc_bucket {
	double qps; /* <= 0: bucket disabled */
	double burst;
	double tokens;
	uint64_t last_usec;
};

void ipc_bucket_init(struct ipc_bucket *b, double qps, uint32_t burst, uint64_t now_usec);
/* Takes one token; returns the delay in usec before it may be used. */
uint64_t ipc_bucket_reserve(struct ipc_bucket *b, uint64_t now_usec);
/* base * 2^failures, capped at max_usec (no overflow for any failures). */
uint64_t ipc_backoff_exp(uint32_t failures, uint64_t base_usec, uint64_t max_usec);
