/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/replicaset/tests/test-exp-torture.c: the short multi-process kill -9 torture of the
 * shared expectations (see exp-torture.h for the cast and the oracles), then the two negative
 * controls, each of which must be caught. Plain program: 0 pass, 1 fail.
 */
#include "workers/replicaset/tests/exp-torture.h"

int main(void)
{
	struct torture_result r;
	uint64_t seed = (uint64_t)rs_exp_now();
	printf("seed %llu\n", (unsigned long long)seed);
	if (torture_run(5000, RS_EXP_FAULT_SLOW_WRITE, seed, &r) < 0)
		return 1;
	torture_print("torture", &r);
	if (r.violations || r.rounds < 200 || r.worker_kills < 20 || r.informer_kills < 1 ||
	    r.orphan_expiries < 1 || r.torn < 1 || r.cons_checks < 100 || r.rs_deletes < 200 ||
	    r.fresh_checks < 100) {
		fprintf(stderr, "FAIL: violations or too little coverage\n");
		return 1;
	}
	if (torture_run(2000, RS_EXP_FAULT_IGNORE_GEN, seed + 1, &r) < 0)
		return 1;
	torture_print("negative control ignore-gen", &r);
	if (r.violations == 0) {
		fprintf(stderr, "FAIL: the oracle missed RS_EXP_FAULT_IGNORE_GEN\n");
		return 1;
	}
	if (torture_run(2000, RS_EXP_FAULT_SLOW_WRITE | RS_EXP_FAULT_CONS_NO_GUARD, seed + 3, &r) <
	    0)
		return 1;
	torture_print("negative control cons-no-guard", &r);
	if (r.violations == 0) {
		fprintf(stderr, "FAIL: the oracle missed RS_EXP_FAULT_CONS_NO_GUARD\n");
		return 1;
	}
	if (torture_run(2000, RS_EXP_FAULT_RESET_SEQ, seed + 4, &r) < 0)
		return 1;
	torture_print("negative control reset-seq", &r);
	if (r.violations == 0) {
		fprintf(stderr, "FAIL: the oracle missed RS_EXP_FAULT_RESET_SEQ\n");
		return 1;
	}
	if (torture_run(2000, RS_EXP_FAULT_NO_ORPHAN_RULE, seed + 2, &r) < 0)
		return 1;
	torture_print("negative control no-orphan-rule", &r);
	if (r.violations == 0) {
		fprintf(stderr, "FAIL: the oracle missed RS_EXP_FAULT_NO_ORPHAN_RULE\n");
		return 1;
	}
	return 0;
}
