/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench/shards.h: the renderings of `kcmd bench --shards=1,2,4` (issue 23; docs/bench.md):
 * a table per pass (phase times, throughput, the apiserver's CPU, the failover) and one per
 * instance (ranges, keys, CPU-seconds, peak PSS, and each one's share of the one-instance
 * pass's CPU and memory times N: the goal is at most 1.2). Pure, like report.h.
 *
 * The passes are the report's runs with shards > 0 (kcmd, N instances) and, as a reference
 * row, a run of controller "upstream" (kube-controller-manager alone, which cannot shard).
 */
#pragma once

#include <stdio.h>

#include "bench/report.h"

/* The one-instance kcmd pass the shares are taken against (the first run with shards == 1),
 * or NULL. */
const struct bench_run *bench_shards_base(const struct bench_report *r);
/* An instance's share of the base pass's figure, times the pass's instance count: 1.0 is a
 * perfect split, the goal is <= 1.2. NAN when base or the figure is missing. */
double bench_shards_share(double inst_v, double base_v, int n);
/* Pods created per second in the create phase (NAN when absent). */
double bench_shards_create_rate(const struct bench_run *run);
/* The apiserver's CPU-seconds per second of the phase (cores in use), NAN when not measured. */
double bench_shards_apiserver_cores(const struct bench_run *run, const char *phase);

void bench_shards_table(FILE *f, const struct bench_report *r);
/* `bench: shards.<figure> ...` lines: shards.n<N>_<phase>_s, shards.n<N>_create_pods_per_s,
 * shards.n<N>_cpu_s, shards.n<N>_failover_s, shards.n<N>_i<k>_{cpu_s,pss_mb,keys,ranges,
 * cpu_share,pss_share}, shards.upstream_<...>. */
void bench_shards_lines(FILE *f, const struct bench_report *r);
/* The docs/benchmarks.md section (between the "shards" markers). */
void bench_shards_markdown(FILE *f, const struct bench_report *r);
/* JSON text (malloc'd) or NULL on allocation failure. */
char *bench_shards_json(const struct bench_report *r);
