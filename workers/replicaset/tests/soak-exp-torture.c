/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/replicaset/tests/soak-exp-torture.c: the long version of test-exp-torture.c
 * (KCMD_SOAK_SECONDS, default 120), no negative controls.
 */
#include "workers/replicaset/tests/exp-torture.h"

int main(void)
{
	const char *s = getenv("KCMD_SOAK_SECONDS");
	long secs = s ? strtol(s, NULL, 10) : 120;
	if (secs <= 0)
		secs = 120;
	struct torture_result r;
	uint64_t seed = (uint64_t)rs_exp_now();
	printf("seed %llu\n", (unsigned long long)seed);
	if (torture_run((int64_t)secs * 1000, RS_EXP_FAULT_SLOW_WRITE, seed, &r) < 0)
		return 1;
	torture_print("soak", &r);
	return r.violations ? 1 : 0;
}
