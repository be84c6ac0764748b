/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench/opts.h: the command line of `kcmd bench` (see docs/bench.md).
 *
 * Parsing is pure (no I/O) so it is unit-tested: --flag=value and --flag value both work, booleans
 * take an optional =true|false, unknown flags and bad values are errors with a message.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum bench_workload {
	BENCH_LOAD = 0,
	BENCH_RAMP,
	BENCH_FAILOVER,
	BENCH_RESTART,
	BENCH_DEPLOYMENTS,    /* issue 16: Deployments, their rollout, delete */
	BENCH_JOBS,           /* a wave of Job completions, delete */
	BENCH_DAEMONSETS,     /* DaemonSets over simulated nodes, their rolling update, delete */
	BENCH_NAMESPACES,     /* issue 17: namespaces full of objects, all deleted at once */
	BENCH_ENDPOINTSLICES, /* issue 17: Services x pods, EndpointSlices through pod churn */
	BENCH_CLUSTER,        /* issue 19: every controller (--controllers=*), a cl2-"load" mix */
	BENCH_NODEFAILURE, /* issue 18: one zone of nodes stops heartbeating: taints, evictions */
};

/* The workloads of objects other than ReplicaSets (deployments, jobs, daemonsets, and cluster:
 * Deployments with a Service each and Jobs, in namespaces of their own). */
static inline bool bench_workload_objects(enum bench_workload w)
{
	return w == BENCH_DEPLOYMENTS || w == BENCH_JOBS || w == BENCH_DAEMONSETS ||
	       w == BENCH_CLUSTER;
}

/* The issue-17 workloads (namespaces, endpointslices): limits lifted by default as above. */
static inline bool bench_workload_issue17(enum bench_workload w)
{
	return w == BENCH_NAMESPACES || w == BENCH_ENDPOINTSLICES;
}

#define BENCH_MAX_MIX 8
/* --shards (issue 23): at most this many passes (the upstream reference pass makes one more:
 * BENCH_MAX_RUNS), each of at most BENCH_MAX_INST kcmd instances (bench/report.h) */
#define BENCH_MAX_SHARD_PASSES 6
#define BENCH_MAX_INST         8

struct bench_opts {
	enum bench_workload workload;
	const char *kubeconfig; /* NULL: bring up the local test cluster */
	bool compare_upstream;  /* also run upstream kube-controller-manager (test cluster only) */
	bool simulate_kubelet;  /* start `kcmd --simulate-kubelet` (default: only on the test
	                           cluster) */
	double qps;             /* --kube-api-qps of both controller managers */
	int burst;
	bool unlimited;       /* one more pass with client limits lifted on both */
	double unlimited_qps; /* the "lifted" limits (kwokctl's --disable-qps-limits values) */
	int unlimited_burst;
	int namespaces;
	int rs_count;           /* 0: derived from target_pods and the mix */
	int mix[BENCH_MAX_MIX]; /* replica sizes (load); ramp uses rs_size */
	int n_mix;
	int rs_size;        /* ramp: replicas per ReplicaSet */
	double create_rate; /* ReplicaSet writes per second (create, rescale, delete) */
	long target_pods;   /* 0: the workload's default */
	long raw_pods;      /* pods for the raw apiserver write-limit probe; 0 skips it */
	int raw_concurrency;
	double phase_timeout_s;
	unsigned seed;
	const char *output;      /* JSON path; NULL: build/bench/<workload>.json */
	const char *update_doc;  /* splice the markdown section into this file */
	const char *cluster_cmd; /* tests/cluster/cluster; NULL: found next to the binary */
	const char *sim_args;    /* extra arguments for the simulator (space separated) */
	const char *kcmd_args;   /* extra arguments for the kcmd under test (space separated) */
	bool plot;
	bool help;
	/* deployments, jobs, daemonsets */
	int deployments;     /* Deployments (default 1000) */
	int replicas;        /* replicas per Deployment (10) */
	long completions;    /* Job completions in all (10000) */
	int job_completions; /* spec.completions per Job (10) */
	int parallelism;     /* spec.parallelism per Job (10) */
	int nodes;           /* simulated nodes (daemonsets: 1000) */
	int daemonsets;      /* DaemonSets (1) */
	/* namespaces, endpointslices */
	int ns_objects;       /* objects per namespace (namespaces: 200) */
	int services;         /* Services (endpointslices: 1000) */
	int pods_per_service; /* pods per Service (100) */
	int churn_percent;    /* endpointslices churn: pods replaced per Service (10 %) */
	int node_churn;       /* cluster: Nodes added, then deleted, in the churn phase (10) */
	/* nodefailure: --nodes (1000) in --zones (10), --pods-per-node (50), --failed-zones (1)
	 * stop heartbeating; kcm's node lifecycle flags given to both controller managers */
	int pods_per_node, zones, failed_zones;
	double node_eviction_rate; /* --node-eviction-rate (bench default 10, kcm's 0.1) */
	double secondary_rate;     /* --secondary-node-eviction-rate (1, kcm's 0.01) */
	double monitor_grace_s;    /* --node-monitor-grace-period (30 s, kcm's 50 s) */
	long toleration_s;         /* tolerationSeconds of the pods' unreachable toleration */
	double lease_renew_s;      /* the driver's Lease renewal interval (10 s, the kubelet's) */
	/* --shards=1,2,4 (load only): one pass per entry with that many kcmd instances sharing
	 * the controllers (--shard-ranges of kcmd = shard_ranges), each measured on its own; a
	 * failover figure for every entry >= 2 */
	int shards[BENCH_MAX_SHARD_PASSES];
	int n_shards;
	int shard_ranges;        /* kcmd --shard-ranges (64) */
	double lease_duration_s; /* kcmd --leader-elect-lease-duration (15 s, kcm's); renew
	                            deadline and retry period keep kcm's 10:15 and 2:15 */
	bool compare_set, simulate_set, qps_set, burst_set; /* given explicitly */
	bool namespaces_set, mix_set, raw_set;
};

void bench_opts_defaults(struct bench_opts *o);
/* argv[0] is the subcommand name ("bench"). Returns 0 or -EINVAL with a message in err. Applies
 * the workload- and cluster-dependent defaults after parsing. */
int bench_opts_parse(struct bench_opts *o, int argc, char **argv, char *err, size_t errlen);
void bench_opts_usage(FILE *f);
const char *bench_workload_name(enum bench_workload w);
/* The ReplicaSet sizes of the `load` workload: each size of the mix holds about the same share of
 * the target pods (at least one RS per size). Fills sizes[] (up to max) in creation order (the
 * sizes interleaved) and returns the count, or -E2BIG. */
int bench_load_plan(const struct bench_opts *o, int *sizes, int max);
/* The objects of deployments/jobs/daemonsets: their count (Deployments, Jobs, DaemonSets).
 * namespaces: the namespaces; endpointslices: the Services; cluster: its Deployments, then its
 * Jobs (each Deployment also has a Service). */
int bench_object_count(const struct bench_opts *o);
/* Parses a comma-separated list of integers in [lo, hi] ("1,2,4") into out[0..max). Returns the
 * count, or -EINVAL (empty, malformed, out of range, more than max entries). */
int bench_parse_int_list(const char *s, int lo, int hi, int *out, int max);
/* endpointslices: pods replaced per Service in the churn phase (at least 1). */
int bench_churn_per_service(const struct bench_opts *o);
/* namespaces: the resource of object k (0 .. ns_objects-1) of a namespace: "configmaps",
 * "secrets", "services" or "pods". */
const char *bench_ns_kind(const struct bench_opts *o, int k);
/* cluster: the number of Jobs (completions in Jobs of job_completions; the last takes the rest).
 */
int bench_job_count(const struct bench_opts *o);
