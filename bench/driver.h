/* SPDX-License-Identifier: Apache-2.0 */
/* bench/driver.h: `kcmd bench` (the program kcmd-bench; see docs/bench.md). */
#pragma once

int kcmd_bench_main(int argc, char **argv);
