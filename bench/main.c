/* SPDX-License-Identifier: Apache-2.0 */
/* bench/main.c: kcmd-bench, run as `kcmd bench ...` (manager/main.c execs it). */
#include "bench/driver.h"

int main(int argc, char **argv)
{
	return kcmd_bench_main(argc, argv);
}
