/* SPDX-License-Identifier: Apache-2.0 */
/* bench/opts.c: `kcmd bench` command line (see opts.h). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bench/opts.h"

static const char *const workloads[] = {"load",           "ramp",    "failover",   "restart",
                                        "deployments",    "jobs",    "daemonsets", "namespaces",
                                        "endpointslices", "cluster", "nodefailure"};

const char *bench_workload_name(enum bench_workload w)
{
	return (unsigned)w < sizeof(workloads) / sizeof(workloads[0]) ? workloads[w] : "?";
}

void bench_opts_defaults(struct bench_opts *o)
{
	*o = (struct bench_opts){
	        .workload = BENCH_LOAD,
	        .qps = 20, /* kube-controller-manager's defaults */
	        .burst = 30,
	        .unlimited_qps = 5000,
	        .unlimited_burst = 10000,
	        .namespaces = 10,
	        .mix = {250, 30, 5},
	        .n_mix = 3,
	        .rs_size = 100,
	        .create_rate = 20,
	        .raw_pods = 2000,
	        .raw_concurrency = 32,
	        .phase_timeout_s = 900,
	        .seed = 1,
	        .deployments = 0, /* deployments: 1000; cluster: 50 */
	        .replicas = 10,
	        .completions = 0, /* jobs: 10000; cluster: 200 */
	        .job_completions = 10,
	        .parallelism = 10,
	        .nodes = 0, /* daemonsets: 1000; others: the simulator's default */
	        .daemonsets = 1,
	        .ns_objects = 200,
	        .services = 1000,
	        .pods_per_service = 100,
	        .churn_percent = 10,
	        .node_churn = 10,
	        .pods_per_node = 50,
	        .zones = 10,
	        .failed_zones = 1,
	        .node_eviction_rate = 10,
	        .secondary_rate = 1,
	        .monitor_grace_s = 30,
	        .toleration_s = 10,
	        .lease_renew_s = 10,
	        .shard_ranges = 32,
	        .lease_duration_s = 15,
	};
}

static int fail(char *err, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int parse_bool(const char *v, bool *out)
{
	if (!v || !strcmp(v, "true") || !strcmp(v, "1")) {
		*out = true;
		return 0;
	}
	if (!strcmp(v, "false") || !strcmp(v, "0")) {
		*out = false;
		return 0;
	}
	return -EINVAL;
}

static int parse_long(const char *v, long min, long max, long *out)
{
	char *end;

	if (!v || !*v)
		return -EINVAL;
	errno = 0;
	long x = strtol(v, &end, 10);
	if (errno || *end || x < min || x > max)
		return -EINVAL;
	*out = x;
	return 0;
}

static int parse_double(const char *v, double min, double max, double *out)
{
	char *end;

	if (!v || !*v)
		return -EINVAL;
	errno = 0;
	double x = strtod(v, &end);
	if (errno || *end || !isfinite(x) || x < min || x > max)
		return -EINVAL;
	*out = x;
	return 0;
}

static int parse_mix(const char *v, struct bench_opts *o)
{
	int n = 0;
	const char *p = v;

	if (!v || !*v)
		return -EINVAL;
	while (*p) {
		char *end;
		errno = 0;
		long x = strtol(p, &end, 10);
		if (errno || end == p || x < 1 || x > 100000 || n >= BENCH_MAX_MIX)
			return -EINVAL;
		o->mix[n++] = (int)x;
		if (*end == ',' && end[1])
			p = end + 1;
		else if (*end == 0)
			p = end;
		else
			return -EINVAL;
	}
	o->n_mix = n;
	return 0;
}

int bench_parse_int_list(const char *s, int lo, int hi, int *out, int max)
{
	int n = 0;

	if (!s || !*s)
		return -EINVAL;
	for (const char *p = s;;) {
		char *end;
		errno = 0;
		long x = strtol(p, &end, 10);
		if (errno || end == p || x < lo || x > hi || n >= max)
			return -EINVAL;
		out[n++] = (int)x;
		if (*end == 0)
			return n;
		if (*end != ',' || !end[1])
			return -EINVAL;
		p = end + 1;
	}
}

enum kind { K_BOOL, K_LONG, K_INT, K_DOUBLE, K_STR, K_SPECIAL };

int bench_opts_parse(struct bench_opts *o, int argc, char **argv, char *err, size_t errlen)
{
	bool target_set = false, rate_set = false;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strncmp(a, "--", 2) != 0)
			return fail(err, errlen, "unexpected argument %s (flags start with --)", a);
		a += 2;
		char name[64];
		const char *val = NULL, *eq = strchr(a, '=');
		size_t nl = eq ? (size_t)(eq - a) : strlen(a);
		if (nl >= sizeof(name))
			return fail(err, errlen, "unknown flag --%s", a);
		memcpy(name, a, nl);
		name[nl] = 0;
		if (eq)
			val = eq + 1;

		bool *bp = NULL;
		if (!strcmp(name, "help") || !strcmp(name, "h"))
			bp = &o->help;
		else if (!strcmp(name, "compare-upstream"))
			bp = &o->compare_upstream, o->compare_set = true;
		else if (!strcmp(name, "simulate-kubelet"))
			bp = &o->simulate_kubelet, o->simulate_set = true;
		else if (!strcmp(name, "unlimited"))
			bp = &o->unlimited;
		else if (!strcmp(name, "plot"))
			bp = &o->plot;
		if (bp) {
			if (parse_bool(val, bp) < 0)
				return fail(err, errlen, "--%s takes true or false, not %s", name,
				            val);
			continue;
		}
		/* Everything else takes a value: --x=v or --x v. */
		if (!val) {
			if (i + 1 >= argc)
				return fail(err, errlen, "--%s needs a value", name);
			val = argv[++i];
		}
		long l;
		double d;
		if (!strcmp(name, "workload")) {
			size_t k;
			for (k = 0; k < sizeof(workloads) / sizeof(workloads[0]); k++)
				if (!strcmp(val, workloads[k]))
					break;
			if (k == sizeof(workloads) / sizeof(workloads[0]))
				return fail(err, errlen,
				            "--workload must be load, ramp, failover, restart, "
				            "deployments, jobs, daemonsets, namespaces, "
				            "endpointslices, cluster or nodefailure, not %s",
				            val);
			o->workload = (enum bench_workload)k;
		} else if (!strcmp(name, "kubeconfig")) {
			if (!*val)
				return fail(err, errlen, "--kubeconfig needs a path");
			o->kubeconfig = val;
		} else if (!strcmp(name, "kube-api-qps")) {
			if (parse_double(val, 0.001, 1e6, &d) < 0)
				return fail(err, errlen,
				            "--kube-api-qps: %s is not a positive number", val);
			o->qps = d;
			o->qps_set = true;
		} else if (!strcmp(name, "kube-api-burst")) {
			if (parse_long(val, 1, 1000000, &l) < 0)
				return fail(err, errlen,
				            "--kube-api-burst: %s is not an integer >= 1", val);
			o->burst = (int)l;
			o->burst_set = true;
		} else if (!strcmp(name, "deployments") || !strcmp(name, "replicas") ||
		           !strcmp(name, "job-completions") || !strcmp(name, "parallelism") ||
		           !strcmp(name, "nodes") || !strcmp(name, "daemonsets")) {
			long max = !strcmp(name, "nodes") ? 100000 : 1000000;
			if (parse_long(val, 1, max, &l) < 0)
				return fail(err, errlen, "--%s: %s is not between 1 and %ld", name,
				            val, max);
			int *ip = !strcmp(name, "deployments")       ? &o->deployments
			          : !strcmp(name, "replicas")        ? &o->replicas
			          : !strcmp(name, "job-completions") ? &o->job_completions
			          : !strcmp(name, "parallelism")     ? &o->parallelism
			          : !strcmp(name, "nodes")           ? &o->nodes
			                                             : &o->daemonsets;
			*ip = (int)l;
		} else if (!strcmp(name, "objects-per-namespace") || !strcmp(name, "services") ||
		           !strcmp(name, "pods-per-service") || !strcmp(name, "churn-percent")) {
			long max = !strcmp(name, "churn-percent") ? 100 : 1000000;
			if (parse_long(val, 1, max, &l) < 0)
				return fail(err, errlen, "--%s: %s is not between 1 and %ld", name,
				            val, max);
			int *ip = !strcmp(name, "objects-per-namespace") ? &o->ns_objects
			          : !strcmp(name, "services")            ? &o->services
			          : !strcmp(name, "pods-per-service")    ? &o->pods_per_service
			                                                 : &o->churn_percent;
			*ip = (int)l;
		} else if (!strcmp(name, "pods-per-node") || !strcmp(name, "zones") ||
		           !strcmp(name, "failed-zones")) {
			long min = !strcmp(name, "pods-per-node") ? 0 : 1;
			if (parse_long(val, min, 10000, &l) < 0)
				return fail(err, errlen, "--%s: %s is not between %ld and 10000",
				            name, val, min);
			int *ip = !strcmp(name, "pods-per-node") ? &o->pods_per_node
			          : !strcmp(name, "zones")       ? &o->zones
			                                         : &o->failed_zones;
			*ip = (int)l;
		} else if (!strcmp(name, "node-eviction-rate") ||
		           !strcmp(name, "secondary-node-eviction-rate")) {
			if (parse_double(val, 0, 1e6, &d) < 0)
				return fail(err, errlen, "--%s: %s is not a number >= 0", name,
				            val);
			*(!strcmp(name, "node-eviction-rate") ? &o->node_eviction_rate
			                                      : &o->secondary_rate) = d;
		} else if (!strcmp(name, "node-monitor-grace-period") ||
		           !strcmp(name, "lease-renew-interval")) {
			char secs[32];
			size_t vl = strlen(val);
			/* seconds, with or without kcm's duration suffix "s" */
			snprintf(secs, sizeof(secs), "%.*s",
			         (int)(vl && val[vl - 1] == 's' ? vl - 1 : vl), val);
			if (vl >= sizeof(secs) || parse_double(secs, 1, 3600, &d) < 0)
				return fail(err, errlen,
				            "--%s: %s is not a number of seconds (1-3600)", name,
				            val);
			*(!strcmp(name, "lease-renew-interval") ? &o->lease_renew_s
			                                        : &o->monitor_grace_s) = d;
		} else if (!strcmp(name, "toleration-seconds")) {
			if (parse_long(val, 0, 86400, &l) < 0)
				return fail(err, errlen,
				            "--toleration-seconds: %s is not between 0 and 86400",
				            val);
			o->toleration_s = l;
		} else if (!strcmp(name, "node-churn")) {
			if (parse_long(val, 0, 10000, &l) < 0)
				return fail(err, errlen,
				            "--node-churn: %s is not between 0 and 10000", val);
			o->node_churn = (int)l;
		} else if (!strcmp(name, "completions")) {
			if (parse_long(val, 1, 10000000, &l) < 0)
				return fail(err, errlen,
				            "--completions: %s is not between 1 and 10000000", val);
			o->completions = l;
		} else if (!strcmp(name, "unlimited-qps")) {
			if (parse_double(val, 0.001, 1e7, &d) < 0)
				return fail(err, errlen,
				            "--unlimited-qps: %s is not a positive number", val);
			o->unlimited_qps = d;
		} else if (!strcmp(name, "unlimited-burst")) {
			if (parse_long(val, 1, 10000000, &l) < 0)
				return fail(err, errlen,
				            "--unlimited-burst: %s is not an integer >= 1", val);
			o->unlimited_burst = (int)l;
		} else if (!strcmp(name, "namespaces")) {
			if (parse_long(val, 1, 10000, &l) < 0)
				return fail(err, errlen,
				            "--namespaces: %s is not between 1 and 10000", val);
			o->namespaces = (int)l;
			o->namespaces_set = true;
		} else if (!strcmp(name, "rs-count")) {
			if (parse_long(val, 1, 1000000, &l) < 0)
				return fail(err, errlen,
				            "--rs-count: %s is not between 1 and 1000000", val);
			o->rs_count = (int)l;
		} else if (!strcmp(name, "replicas-mix")) {
			if (parse_mix(val, o) < 0)
				return fail(err, errlen,
				            "--replicas-mix: %s is not a list of up to %d sizes "
				            "(1-100000), e.g. 250,30,5",
				            val, BENCH_MAX_MIX);
			o->mix_set = true;
		} else if (!strcmp(name, "shards")) {
			int n = bench_parse_int_list(val, 1, BENCH_MAX_INST, o->shards,
			                             BENCH_MAX_SHARD_PASSES);
			if (n < 0)
				return fail(
				        err, errlen,
				        "--shards: %s is not a list of up to %d instance counts "
				        "(1-%d), e.g. 1,2,4",
				        val, BENCH_MAX_SHARD_PASSES, BENCH_MAX_INST);
			o->n_shards = n;
		} else if (!strcmp(name, "shard-ranges")) {
			if (parse_long(val, 1, 256, &l) < 0)
				return fail(err, errlen,
				            "--shard-ranges: %s is not between 1 and 256", val);
			o->shard_ranges = (int)l;
		} else if (!strcmp(name, "lease-duration")) {
			char secs[32];
			size_t vl = strlen(val);
			snprintf(secs, sizeof(secs), "%.*s",
			         (int)(vl && val[vl - 1] == 's' ? vl - 1 : vl), val);
			if (vl >= sizeof(secs) || parse_double(secs, 3, 600, &d) < 0)
				return fail(
				        err, errlen,
				        "--lease-duration: %s is not a number of seconds (3-600)",
				        val);
			o->lease_duration_s = d;
		} else if (!strcmp(name, "rs-size")) {
			if (parse_long(val, 1, 100000, &l) < 0)
				return fail(err, errlen,
				            "--rs-size: %s is not between 1 and 100000", val);
			o->rs_size = (int)l;
		} else if (!strcmp(name, "create-rate")) {
			if (parse_double(val, 0.01, 1e6, &d) < 0)
				return fail(err, errlen,
				            "--create-rate: %s is not a positive number", val);
			o->create_rate = d;
			rate_set = true;
		} else if (!strcmp(name, "target-pods")) {
			if (parse_long(val, 1, 10000000, &l) < 0)
				return fail(err, errlen,
				            "--target-pods: %s is not between 1 and 10000000", val);
			o->target_pods = l;
			target_set = true;
		} else if (!strcmp(name, "raw-pods")) {
			if (parse_long(val, 0, 10000000, &l) < 0)
				return fail(err, errlen,
				            "--raw-pods: %s is not between 0 and 10000000", val);
			o->raw_pods = l;
			o->raw_set = true;
		} else if (!strcmp(name, "raw-concurrency")) {
			if (parse_long(val, 1, 1024, &l) < 0)
				return fail(err, errlen,
				            "--raw-concurrency: %s is not between 1 and 1024", val);
			o->raw_concurrency = (int)l;
		} else if (!strcmp(name, "phase-timeout")) {
			if (parse_double(val, 1, 86400, &d) < 0)
				return fail(
				        err, errlen,
				        "--phase-timeout: %s is not a number of seconds (1-86400)",
				        val);
			o->phase_timeout_s = d;
		} else if (!strcmp(name, "seed")) {
			if (parse_long(val, 0, 0x7fffffff, &l) < 0)
				return fail(err, errlen, "--seed: %s is not a non-negative integer",
				            val);
			o->seed = (unsigned)l;
		} else if (!strcmp(name, "output")) {
			o->output = val;
		} else if (!strcmp(name, "update-doc")) {
			o->update_doc = val;
		} else if (!strcmp(name, "cluster-cmd")) {
			o->cluster_cmd = val;
		} else if (!strcmp(name, "simulator-args")) {
			o->sim_args = val;
		} else if (!strcmp(name, "kcmd-args")) {
			o->kcmd_args = val;
		} else {
			return fail(err, errlen, "unknown flag --%s (see kcmd bench --help)", name);
		}
	}
	if (o->help)
		return 0;
	if (o->n_shards && o->workload != BENCH_LOAD)
		return fail(err, errlen, "--shards runs the load workload only, not --workload=%s",
		            bench_workload_name(o->workload));
	bool test_cluster = o->kubeconfig == NULL;
	if (!o->compare_set)
		o->compare_upstream = test_cluster;
	if (!o->simulate_set)
		o->simulate_kubelet = test_cluster && o->workload != BENCH_NODEFAILURE;
	if (o->compare_upstream && !test_cluster)
		return fail(err, errlen,
		            "--compare-upstream needs the local test cluster (no --kubeconfig): "
		            "upstream "
		            "kube-controller-manager is started by its harness");
	if (o->workload == BENCH_NODEFAILURE) {
		/* the node lifecycle and taint eviction controllers' writes (pods marked not
		 * ready, DisruptionTarget, deletes) are not held back by kcm's 20 QPS here:
		 * limits lifted as for the other controller workloads */
		if (!o->qps_set)
			o->qps = o->unlimited_qps;
		if (!o->burst_set)
			o->burst = o->unlimited_burst;
		if (!o->nodes)
			o->nodes = 1000;
		if (o->failed_zones > o->zones)
			return fail(err, errlen, "--failed-zones=%d is more than --zones=%d",
			            o->failed_zones, o->zones);
		if (o->zones > o->nodes)
			return fail(err, errlen, "--zones=%d is more than --nodes=%d", o->zones,
			            o->nodes);
		if (o->monitor_grace_s < 2 * o->lease_renew_s)
			return fail(err, errlen,
			            "--node-monitor-grace-period=%g must be at least twice "
			            "--lease-renew-interval=%g (a late renewal would fail a "
			            "healthy node)",
			            o->monitor_grace_s, o->lease_renew_s);
		o->target_pods = (long)o->nodes * o->pods_per_node;
		return 0;
	}
	if (bench_workload_objects(o->workload) || bench_workload_issue17(o->workload)) {
		/* kcm's 20 QPS would make these runs the client limiter's (10,000 pod creates
		 * take 500 s at 20/s): lifted by default, as kwokctl's --disable-qps-limits */
		if (!o->qps_set)
			o->qps = o->unlimited_qps;
		if (!o->burst_set)
			o->burst = o->unlimited_burst;
		/* the objects' writes at 100/s (1,000 pods/s asked of the Deployment and Job
		 * runs, above the apiserver's raw limit here): the controllers, not the
		 * driver's pace, decide the time */
		if (!rate_set)
			o->create_rate = 100;
		if (o->workload == BENCH_NAMESPACES) {
			if (!o->namespaces_set)
				o->namespaces = 100;
			/* the pods of the mix (see bench_ns_kind): the last fifth */
			o->target_pods = (long)o->namespaces * (o->ns_objects / 5);
			return 0;
		}
		if (o->workload == BENCH_ENDPOINTSLICES) {
			o->target_pods = (long)o->services * o->pods_per_service;
			return 0;
		}
		if (o->workload == BENCH_DAEMONSETS && !o->nodes)
			o->nodes = 1000;
		bool cl = o->workload == BENCH_CLUSTER;
		if (!o->deployments)
			o->deployments = cl ? 50 : 1000;
		if (!o->completions)
			o->completions = cl ? 200 : 10000;
		if (cl && !o->nodes)
			o->nodes = 50;
		if (o->workload == BENCH_JOBS && o->job_completions > o->completions)
			o->job_completions = (int)o->completions;
		o->target_pods = o->workload == BENCH_DEPLOYMENTS
		                         ? (long)o->deployments * o->replicas
		                 : o->workload == BENCH_JOBS ? o->completions
		                 : cl ? (long)o->deployments * o->replicas + o->completions
		                      : (long)o->nodes * o->daemonsets;
		return 0;
	}
	if (o->n_shards) {
		/* ranges spread only over many namespaces; no RS holds more than 30 pods, so an
		 * instance's share is its ranges', not where 3 big RSs fell; the raw write probe
		 * is not part of these figures */
		if (!o->namespaces_set)
			o->namespaces = 100;
		if (!o->mix_set) {
			o->mix[0] = 30, o->mix[1] = 10, o->mix[2] = 5;
			o->n_mix = 3;
		}
		if (!o->raw_set)
			o->raw_pods = 0;
	}
	if (!target_set)
		o->target_pods = o->workload == BENCH_RAMP ? (test_cluster ? 100000 : 10000) : 2000;
	if (o->workload != BENCH_RAMP) {
		long minpods = 0;
		for (int k = 0; k < o->n_mix; k++)
			minpods += o->mix[k];
		if (!o->rs_count && o->target_pods < minpods / 4)
			return fail(err, errlen,
			            "--target-pods %ld is too small for --replicas-mix (one RS of "
			            "each size needs %ld)",
			            o->target_pods, minpods);
	}
	return 0;
}

int bench_load_plan(const struct bench_opts *o, int *sizes, int max)
{
	int count[BENCH_MAX_MIX], total = 0;

	if (o->workload == BENCH_RAMP) {
		long n = o->rs_count ? o->rs_count : (o->target_pods + o->rs_size - 1) / o->rs_size;
		if (n > max)
			return -E2BIG;
		for (long i = 0; i < n; i++)
			sizes[i] = o->rs_size;
		return (int)n;
	}
	if (o->n_mix < 1)
		return -EINVAL;
	if (o->rs_count) {
		/* A fixed number of RSs: the sizes in turn. */
		if (o->rs_count > max)
			return -E2BIG;
		for (int i = 0; i < o->rs_count; i++)
			sizes[i] = o->mix[i % o->n_mix];
		return o->rs_count;
	}
	for (int k = 0; k < o->n_mix; k++) {
		double share = (double)o->target_pods / o->n_mix / o->mix[k];
		count[k] = share < 1 ? 1 : (int)lround(share);
		total += count[k];
	}
	if (total > max)
		return -E2BIG;
	/* Interleave: at each step take the size furthest behind its share of the sequence. */
	int used[BENCH_MAX_MIX] = {0};
	for (int i = 0; i < total; i++) {
		int best = -1;
		double best_lag = -1e18;
		for (int k = 0; k < o->n_mix; k++) {
			if (used[k] >= count[k])
				continue;
			double lag = (double)(i + 1) * count[k] / total - used[k];
			if (lag > best_lag) {
				best_lag = lag;
				best = k;
			}
		}
		sizes[i] = o->mix[best];
		used[best]++;
	}
	return total;
}

int bench_job_count(const struct bench_opts *o)
{
	return o->job_completions > 0
	               ? (int)((o->completions + o->job_completions - 1) / o->job_completions)
	               : 0;
}

int bench_object_count(const struct bench_opts *o)
{
	switch (o->workload) {
	case BENCH_DEPLOYMENTS:
		return o->deployments;
	case BENCH_JOBS:
		return bench_job_count(o);
	case BENCH_CLUSTER:
		return o->deployments + bench_job_count(o);
	case BENCH_DAEMONSETS:
		return o->daemonsets;
	case BENCH_NAMESPACES:
		return o->namespaces;
	case BENCH_ENDPOINTSLICES:
		return o->services;
	default:
		return 0;
	}
}

int bench_churn_per_service(const struct bench_opts *o)
{
	int n = (int)((long)o->pods_per_service * o->churn_percent / 100);
	return n < 1 ? 1 : n;
}

const char *bench_ns_kind(const struct bench_opts *o, int k)
{
	/* 3/10 ConfigMaps, 3/10 Secrets, 1/5 headless Services, 1/5 pods (the last ones) */
	int per = o->ns_objects;
	if (k >= per - per / 5)
		return "pods";
	if (k < per * 3 / 10)
		return "configmaps";
	if (k < per * 6 / 10)
		return "secrets";
	return "services";
}

void bench_opts_usage(FILE *f)
{
	fputs("Usage: kcmd bench --workload=load|ramp|failover|restart|deployments|jobs|daemonsets|"
	      "namespaces|endpointslices|cluster|nodefailure [flags]\n"
	      "\n"
	      "Drives a ReplicaSet workload against a cluster, measures kcmd (and, on the local "
	      "test cluster,\n"
	      "upstream kube-controller-manager on the same workload) and prints a comparison. See "
	      "docs/bench.md.\n"
	      "\n"
	      "Cluster:\n"
	      "  --kubeconfig=PATH        run against this cluster (default: bring up "
	      "tests/cluster with its own\n"
	      "                           KCMD_CLUSTER_DIR and tear it down at the end)\n"
	      "  --cluster-cmd=PATH       the test cluster command (default: tests/cluster/cluster "
	      "of the source tree)\n"
	      "  --compare-upstream[=B]   also measure upstream kube-controller-manager (default: "
	      "on for the test cluster)\n"
	      "  --simulate-kubelet[=B]   start `kcmd --simulate-kubelet` (default: on for the "
	      "test cluster only)\n"
	      "  --simulator-args='A B'   extra arguments for the simulator\n"
	      "  --kcmd-args='A B'        extra arguments for the kcmd under test (e.g. "
	      "--standby-warm-cache)\n"
	      "Limits:\n"
	      "  --kube-api-qps=Q         client QPS of both controller managers (default 20, as "
	      "kcm)\n"
	      "  --kube-api-burst=B       client burst (default 30)\n"
	      "  --unlimited              one more pass with limits lifted on both "
	      "(--unlimited-qps=5000,\n"
	      "                           --unlimited-burst=10000, kwokctl's --disable-qps-limits "
	      "values)\n"
	      "Sizes:\n"
	      "  --target-pods=N          pods at the peak (load: 2000; ramp: 100000 on the test "
	      "cluster, 10000 else)\n"
	      "  --replicas-mix=250,30,5  load: RS sizes; each size holds about the same share of "
	      "the pods\n"
	      "  --rs-count=N             a fixed number of RSs instead (sizes in turn)\n"
	      "  --rs-size=100            ramp: replicas per RS\n"
	      "  --namespaces=10          RSs are spread over this many namespaces\n"
	      "  --create-rate=20         RS writes per second (create, rescale, delete)\n"
	      "  --raw-pods=2000          pods for the raw apiserver write-limit probe (0 skips "
	      "it)\n"
	      "  --raw-concurrency=32     concurrent creates in that probe\n"
	      "  --phase-timeout=900      seconds before a phase is declared not converged\n"
	      "  --seed=1                 random rescale sizes\n"
	      "Sharding (issue 23; load only):\n"
	      "  --shards=1,2,4           one pass per entry, with that many kcmd instances "
	      "(--shard-ranges) on\n"
	      "                           the same workload, each measured (CPU, PSS, keys, "
	      "ranges); for entries\n"
	      "                           >= 2 one instance is then killed -9 (failover time). "
	      "Defaults change to\n"
	      "                           --namespaces=100 --replicas-mix=30,10,5 "
	      "--raw-pods=0\n"
	      "  --shard-ranges=32        kcmd's --shard-ranges in those passes (their Lease "
	      "renewals must fit\n"
	      "                           in --kube-api-qps: checked)\n"
	      "  --lease-duration=15      kcmd's --leader-elect-lease-duration in those passes "
	      "(renew deadline\n"
	      "                           and retry period at kcm's ratios, 10/15 and 2/15)\n"
	      "Workload controllers (limits lifted by default: --kube-api-qps=5000 "
	      "--kube-api-burst=10000):\n"
	      "  --deployments=1000       deployments: Deployments, each of --replicas=10 (objects "
	      "written at\n"
	      "                           --create-rate=100/s in these three workloads)\n"
	      "  --completions=10000      jobs: completions in all, in Jobs of "
	      "--job-completions=10\n"
	      "                           completions and --parallelism=10\n"
	      "  --nodes=1000             daemonsets: simulated nodes, --daemonsets=1 DaemonSets "
	      "over them\n"
	      "Cluster controllers (limits lifted by default as above; writes as fast as the "
	      "driver can):\n"
	      "  --namespaces=100         namespaces: namespaces, each with "
	      "--objects-per-namespace=200 objects\n"
	      "                           (3/10 ConfigMaps, 3/10 Secrets, 1/5 headless Services, "
	      "1/5 pods), all\n"
	      "                           deleted at once (controller: namespace)\n"
	      "  --services=1000          endpointslices: headless Services, each selecting "
	      "--pods-per-service=100\n"
	      "                           pods; churn replaces --churn-percent=10 of each "
	      "Service's pods\n"
	      "                           (controllers: endpointslice, endpoints, garbage "
	      "collector)\n"
	      "Cluster (every controller, --controllers=* and kubeadm's flags on both; limits "
	      "lifted):\n"
	      "  --deployments=50 --replicas=10 --completions=200 --job-completions=10 "
	      "--nodes=50\n"
	      "                           Deployments (a Service each), Jobs and simulated nodes "
	      "over\n"
	      "                           --namespaces=10 namespaces made and deleted by each "
	      "pass\n"
	      "  --node-churn=10          Nodes added, then deleted, in the churn phase\n"
	      "Node failure (nodefailure; node-lifecycle and taint-eviction controllers; limits "
	      "lifted):\n"
	      "  --nodes=1000 --zones=10 --pods-per-node=50\n"
	      "                           Nodes (Leases renewed by the driver every\n"
	      "                           --lease-renew-interval=10 s) with bound Running+Ready "
	      "pods\n"
	      "  --failed-zones=1         zones whose Leases stop being renewed\n"
	      "  --node-eviction-rate=10 --secondary-node-eviction-rate=1 "
	      "--node-monitor-grace-period=30\n"
	      "                           kcm's flags, given to both (kcm's defaults: 0.1, 0.01, "
	      "50s)\n"
	      "  --toleration-seconds=10  the pods' tolerationSeconds for the unreachable and "
	      "not-ready taints\n"
	      "Output:\n"
	      "  --output=PATH            JSON (default build/bench/<workload>.json; time series "
	      "next to it)\n"
	      "  --plot                   render the gnuplot script to PNG and SVG (needs "
	      "gnuplot)\n"
	      "  --update-doc=FILE        replace the marked `kcmd bench` section of FILE "
	      "(docs/benchmarks.md)\n",
	      f);
}
