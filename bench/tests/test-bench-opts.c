/* SPDX-License-Identifier: Apache-2.0 */
/* Tests of `kcmd bench` option parsing and the load plan. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "bench/opts.h"

static int parse(struct bench_opts *o, char *err, size_t n, char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	bench_opts_defaults(o);
	return bench_opts_parse(o, argc, argv, err, n);
}
#define PARSE(o, err, ...) parse(o, err, sizeof(err), (char *[]){"bench", __VA_ARGS__, NULL})

static void test_defaults_test_cluster(void **state)
{
	(void)state;
	struct bench_opts o;
	char err[256] = "";

	assert_int_equal(parse(&o, err, sizeof(err), (char *[]){"bench", NULL}), 0);
	assert_int_equal(o.workload, BENCH_LOAD);
	assert_null(o.kubeconfig);
	assert_true(o.compare_upstream); /* on for the test cluster */
	assert_true(o.simulate_kubelet);
	assert_true(o.qps == 20.0);
	assert_int_equal(o.burst, 30);
	assert_false(o.unlimited);
	assert_int_equal(o.n_mix, 3);
	assert_int_equal(o.mix[0], 250);
	assert_int_equal(o.mix[1], 30);
	assert_int_equal(o.mix[2], 5);
	assert_int_equal(o.target_pods, 2000);
}

static void test_ramp_default_target(void **state)
{
	(void)state;
	struct bench_opts o;
	char err[256] = "";

	assert_int_equal(PARSE(&o, err, "--workload=ramp"), 0);
	assert_int_equal(o.target_pods, 100000);
	assert_int_equal(
	        PARSE(&o, err, "--workload", "ramp", "--kubeconfig=/k", "--target-pods", "5000"),
	        0);
	assert_int_equal(o.target_pods, 5000);
	assert_string_equal(o.kubeconfig, "/k");
	assert_false(o.compare_upstream); /* off for a cluster given by kubeconfig */
	assert_false(o.simulate_kubelet);
	assert_int_equal(PARSE(&o, err, "--workload=ramp", "--kubeconfig=/k"), 0);
	assert_int_equal(o.target_pods, 10000);
}

static void test_values_and_bools(void **state)
{
	(void)state;
	struct bench_opts o;
	char err[256] = "";

	assert_int_equal(PARSE(&o, err, "--workload=failover", "--kube-api-qps=50.5",
	                       "--kube-api-burst", "100", "--unlimited", "--plot=true",
	                       "--compare-upstream=false", "--replicas-mix=100,10",
	                       "--namespaces=3", "--create-rate=2.5", "--raw-pods=0", "--seed=7",
	                       "--output=x/y.json", "--kcmd-args=--standby-warm-cache --v=2"),
	                 0);
	assert_int_equal(o.workload, BENCH_FAILOVER);
	assert_true(o.qps == 50.5);
	assert_int_equal(o.burst, 100);
	assert_true(o.unlimited);
	assert_true(o.plot);
	assert_false(o.compare_upstream);
	assert_int_equal(o.n_mix, 2);
	assert_int_equal(o.mix[1], 10);
	assert_int_equal(o.namespaces, 3);
	assert_true(o.create_rate == 2.5);
	assert_int_equal(o.raw_pods, 0);
	assert_int_equal(o.seed, 7);
	assert_string_equal(o.output, "x/y.json");
	assert_string_equal(o.kcmd_args, "--standby-warm-cache --v=2");
	assert_int_equal(PARSE(&o, err, "--simulate-kubelet", "--kubeconfig=/k"), 0);
	assert_true(o.simulate_kubelet);
}

static void test_errors(void **state)
{
	(void)state;
	struct bench_opts o;
	char err[256];

	static const char *const bad[][2] = {
	        {"--workload=soak", "--workload"},
	        {"--kube-api-qps=0", "--kube-api-qps"},
	        {"--kube-api-qps=abc", "--kube-api-qps"},
	        {"--kube-api-burst=0", "--kube-api-burst"},
	        {"--replicas-mix=250,,5", "--replicas-mix"},
	        {"--replicas-mix=250,x", "--replicas-mix"},
	        {"--replicas-mix=", "--replicas-mix"},
	        {"--replicas-mix=1,2,3,4,5,6,7,8,9", "--replicas-mix"},
	        {"--namespaces=0", "--namespaces"},
	        {"--plot=maybe", "--plot"},
	        {"--frobnicate=1", "unknown flag --frobnicate"},
	        {"positional", "unexpected argument"},
	        {"--create-rate=-1", "--create-rate"},
	        {"--target-pods=10", "too small"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		assert_int_equal(PARSE(&o, err, (char *)bad[i][0]), -EINVAL);
		if (!strstr(err, bad[i][1]))
			fail_msg("%s: message \"%s\" does not name %s", bad[i][0], err, bad[i][1]);
	}
	assert_int_equal(PARSE(&o, err, "--kube-api-qps"), -EINVAL); /* value missing */
	assert_non_null(strstr(err, "needs a value"));
	assert_int_equal(PARSE(&o, err, "--kubeconfig=/k", "--compare-upstream"), -EINVAL);
	assert_non_null(strstr(err, "test cluster"));
}

static void test_object_workloads(void **state)
{
	(void)state;
	struct bench_opts o;
	char err[256] = "";

	/* the issue's sizes by default, limits lifted unless given */
	assert_int_equal(PARSE(&o, err, "--workload=deployments"), 0);
	assert_int_equal(o.workload, BENCH_DEPLOYMENTS);
	assert_true(bench_workload_objects(o.workload));
	assert_int_equal(bench_object_count(&o), 1000);
	assert_int_equal(o.target_pods, 10000);
	assert_true(o.qps == 5000.0);
	assert_int_equal(o.burst, 10000);
	assert_int_equal(o.nodes, 0); /* the simulator's default node count */
	assert_true(o.create_rate == 100.0);
	assert_int_equal(PARSE(&o, err, "--workload=deployments", "--deployments=50",
	                       "--replicas=4", "--kube-api-qps=20"),
	                 0);
	assert_int_equal(o.target_pods, 200);
	assert_true(o.qps == 20.0);
	assert_int_equal(o.burst, 10000);
	/* jobs: completions in Jobs of job-completions, the last one takes the rest */
	assert_int_equal(PARSE(&o, err, "--workload=jobs"), 0);
	assert_int_equal(bench_object_count(&o), 1000);
	assert_int_equal(o.target_pods, 10000);
	assert_int_equal(PARSE(&o, err, "--workload=jobs", "--completions=505", "--job-completions",
	                       "10", "--parallelism=5"),
	                 0);
	assert_int_equal(bench_object_count(&o), 51);
	assert_int_equal(o.parallelism, 5);
	assert_int_equal(PARSE(&o, err, "--workload=jobs", "--completions=3"), 0);
	assert_int_equal(o.job_completions, 3);
	assert_int_equal(bench_object_count(&o), 1);
	/* daemonsets: 1000 nodes by default */
	assert_int_equal(PARSE(&o, err, "--workload=daemonsets"), 0);
	assert_int_equal(o.nodes, 1000);
	assert_int_equal(bench_object_count(&o), 1);
	assert_int_equal(o.target_pods, 1000);
	assert_int_equal(PARSE(&o, err, "--workload=daemonsets", "--nodes=50", "--daemonsets=2"),
	                 0);
	assert_int_equal(o.target_pods, 100);
	assert_int_equal(bench_object_count(&o), 2);
	assert_string_equal(bench_workload_name(BENCH_DAEMONSETS), "daemonsets");
	/* errors */
	assert_int_equal(PARSE(&o, err, "--workload=daemonsets", "--nodes=0"), -EINVAL);
	assert_non_null(strstr(err, "--nodes"));
	assert_int_equal(PARSE(&o, err, "--workload=jobs", "--completions=x"), -EINVAL);
	assert_int_equal(PARSE(&o, err, "--workload=statefulsets"), -EINVAL);
	assert_non_null(strstr(err, "daemonsets"));
}

static void test_cluster_workloads(void **state)
{
	(void)state;
	struct bench_opts o;
	char err[256] = "";
	int counts[4] = {0};

	/* namespaces: the issue's 100 x 200 by default, limits lifted; 1/5 of the objects are
	 * pods */
	assert_int_equal(PARSE(&o, err, "--workload=namespaces"), 0);
	assert_int_equal(o.workload, BENCH_NAMESPACES);
	assert_true(bench_workload_issue17(o.workload));
	assert_false(bench_workload_objects(o.workload));
	assert_int_equal(o.namespaces, 100);
	assert_int_equal(o.ns_objects, 200);
	assert_int_equal(bench_object_count(&o), 100);
	assert_int_equal(o.target_pods, 4000);
	assert_true(o.qps == 5000.0);
	assert_int_equal(o.burst, 10000);
	for (int k = 0; k < o.ns_objects; k++) {
		const char *kind = bench_ns_kind(&o, k);
		int i = !strcmp(kind, "configmaps") ? 0
		        : !strcmp(kind, "secrets")  ? 1
		        : !strcmp(kind, "services") ? 2
		        : !strcmp(kind, "pods")     ? 3
		                                    : -1;
		assert_true(i >= 0);
		counts[i]++;
	}
	assert_int_equal(counts[0], 60);
	assert_int_equal(counts[1], 60);
	assert_int_equal(counts[2], 40);
	assert_int_equal(counts[3], 40);
	assert_int_equal(PARSE(&o, err, "--workload=namespaces", "--namespaces=10",
	                       "--objects-per-namespace=50"),
	                 0);
	assert_int_equal(o.namespaces, 10);
	assert_int_equal(o.target_pods, 100);
	assert_string_equal(bench_workload_name(BENCH_NAMESPACES), "namespaces");
	/* endpointslices: 1,000 Services x 100 pods, 10 % churned, 10 namespaces */
	assert_int_equal(PARSE(&o, err, "--workload=endpointslices"), 0);
	assert_int_equal(o.workload, BENCH_ENDPOINTSLICES);
	assert_int_equal(bench_object_count(&o), 1000);
	assert_int_equal(o.target_pods, 100000);
	assert_int_equal(o.namespaces, 10);
	assert_int_equal(bench_churn_per_service(&o), 10);
	assert_int_equal(PARSE(&o, err, "--workload=endpointslices", "--services=20",
	                       "--pods-per-service=5", "--churn-percent=10"),
	                 0);
	assert_int_equal(o.target_pods, 100);
	assert_int_equal(bench_churn_per_service(&o), 1); /* at least one */
	assert_string_equal(bench_workload_name(BENCH_ENDPOINTSLICES), "endpointslices");
	/* errors */
	assert_int_equal(PARSE(&o, err, "--workload=endpointslices", "--churn-percent=101"),
	                 -EINVAL);
	assert_non_null(strstr(err, "--churn-percent"));
	assert_int_equal(PARSE(&o, err, "--workload=namespaces", "--objects-per-namespace=0"),
	                 -EINVAL);
	assert_int_equal(PARSE(&o, err, "--workload=services"), -EINVAL);
	assert_non_null(strstr(err, "endpointslices"));
}

static void test_cluster_workload(void **state)
{
	(void)state;
	struct bench_opts o;
	char err[256] = "";

	/* the modest default: 50 Deployments x 10 (a Service each) and 200 completions in Jobs
	 * of 10, over 50 simulated nodes, 10 churn Nodes, 10 namespaces; limits lifted */
	assert_int_equal(PARSE(&o, err, "--workload=cluster"), 0);
	assert_int_equal(o.workload, BENCH_CLUSTER);
	assert_true(bench_workload_objects(o.workload));
	assert_string_equal(bench_workload_name(BENCH_CLUSTER), "cluster");
	assert_int_equal(o.deployments, 50);
	assert_int_equal(o.completions, 200);
	assert_int_equal(bench_job_count(&o), 20);
	assert_int_equal(bench_object_count(&o), 70);
	assert_int_equal(o.target_pods, 700);
	assert_int_equal(o.nodes, 50);
	assert_int_equal(o.node_churn, 10);
	assert_int_equal(o.namespaces, 10);
	assert_true(o.qps == 5000.0);
	/* sizes are flags; the other workloads keep their own defaults */
	assert_int_equal(PARSE(&o, err, "--workload=cluster", "--deployments=4", "--replicas=3",
	                       "--completions=25", "--job-completions=10", "--nodes=7",
	                       "--node-churn=0", "--namespaces=2"),
	                 0);
	assert_int_equal(bench_job_count(&o), 3);
	assert_int_equal(bench_object_count(&o), 7);
	assert_int_equal(o.target_pods, 37);
	assert_int_equal(o.nodes, 7);
	assert_int_equal(o.node_churn, 0);
	assert_int_equal(PARSE(&o, err, "--workload=deployments"), 0);
	assert_int_equal(o.deployments, 1000);
	assert_int_equal(PARSE(&o, err, "--workload=cluster", "--node-churn=-1"), -EINVAL);
	assert_non_null(strstr(err, "--node-churn"));
}

static void test_nodefailure_workload(void **state)
{
	(void)state;
	struct bench_opts o;
	char err[256] = "";

	/* the issue's size: 1,000 nodes x 50 pods in 10 zones, one failing; kcm's node lifecycle
	 * flags faster than kcm's defaults; limits lifted; no simulator */
	assert_int_equal(PARSE(&o, err, "--workload=nodefailure"), 0);
	assert_int_equal(o.workload, BENCH_NODEFAILURE);
	assert_string_equal(bench_workload_name(BENCH_NODEFAILURE), "nodefailure");
	assert_int_equal(o.nodes, 1000);
	assert_int_equal(o.pods_per_node, 50);
	assert_int_equal(o.zones, 10);
	assert_int_equal(o.failed_zones, 1);
	assert_int_equal(o.target_pods, 50000);
	assert_true(o.node_eviction_rate == 10 && o.secondary_rate == 1);
	assert_true(o.monitor_grace_s == 30 && o.lease_renew_s == 10);
	assert_int_equal(o.toleration_s, 10);
	assert_true(o.qps == 5000.0);
	assert_false(o.simulate_kubelet);
	assert_true(o.compare_upstream);
	assert_int_equal(PARSE(&o, err, "--workload=nodefailure", "--nodes=100",
	                       "--pods-per-node=5", "--zones=4", "--failed-zones=2",
	                       "--node-eviction-rate=0.5", "--secondary-node-eviction-rate=0",
	                       "--node-monitor-grace-period=40s", "--toleration-seconds=0"),
	                 0);
	assert_int_equal(o.target_pods, 500);
	assert_int_equal(o.failed_zones, 2);
	assert_true(o.node_eviction_rate == 0.5 && o.secondary_rate == 0);
	assert_true(o.monitor_grace_s == 40);
	assert_int_equal(o.toleration_s, 0);
	/* errors */
	assert_int_equal(PARSE(&o, err, "--workload=nodefailure", "--zones=2", "--failed-zones=3"),
	                 -EINVAL);
	assert_non_null(strstr(err, "--failed-zones"));
	assert_int_equal(PARSE(&o, err, "--workload=nodefailure", "--nodes=5", "--zones=6"),
	                 -EINVAL);
	assert_int_equal(PARSE(&o, err, "--workload=nodefailure", "--node-monitor-grace-period=15"),
	                 -EINVAL);
	assert_non_null(strstr(err, "--lease-renew-interval"));
	assert_int_equal(PARSE(&o, err, "--workload=nodefailure", "--node-eviction-rate=-1"),
	                 -EINVAL);
	assert_int_equal(PARSE(&o, err, "--workload=nodefailure", "--zones=0"), -EINVAL);
	assert_int_equal(PARSE(&o, err, "--workload=nodefailure", "--toleration-seconds=x"),
	                 -EINVAL);
}

/* --shards (issue 23): the list, its bounds, the load-only rule and the defaults it changes. */
static void test_shards(void **state)
{
	(void)state;
	struct bench_opts o;
	char err[256] = "";
	int v[4];

	assert_int_equal(PARSE(&o, err, "--workload=load"), 0);
	assert_int_equal(o.n_shards, 0);
	assert_int_equal(o.namespaces, 10);
	assert_int_equal(o.raw_pods, 2000);
	assert_int_equal(PARSE(&o, err, "--shards=1,2,4"), 0);
	assert_int_equal(o.n_shards, 3);
	assert_int_equal(o.shards[0], 1);
	assert_int_equal(o.shards[1], 2);
	assert_int_equal(o.shards[2], 4);
	assert_int_equal(o.shard_ranges, 32);
	assert_true(o.lease_duration_s == 15.0);
	assert_int_equal(o.namespaces, 100); /* ranges spread only over many namespaces */
	assert_int_equal(o.n_mix, 3);
	assert_int_equal(o.mix[0], 30);
	assert_int_equal(o.raw_pods, 0);
	assert_true(o.compare_upstream); /* upstream kcm as the reference row */
	/* given values win over the shard defaults */
	assert_int_equal(PARSE(&o, err, "--shards", "2", "--namespaces=7", "--replicas-mix=5",
	                       "--raw-pods=100", "--shard-ranges=16", "--lease-duration=6s"),
	                 0);
	assert_int_equal(o.n_shards, 1);
	assert_int_equal(o.shards[0], 2);
	assert_int_equal(o.namespaces, 7);
	assert_int_equal(o.n_mix, 1);
	assert_int_equal(o.mix[0], 5);
	assert_int_equal(o.raw_pods, 100);
	assert_int_equal(o.shard_ranges, 16);
	assert_true(o.lease_duration_s == 6.0);
	/* the range Leases have a request budget of their own, sized by the ranges
	 * (manager/shard.c mgr_shard_lease_budget): no ranges/QPS combination is refused */
	assert_int_equal(PARSE(&o, err, "--shards=2,1", "--shard-ranges=64"), 0);
	assert_int_equal(PARSE(&o, err, "--shards=1", "--shard-ranges=64", "--lease-duration=6"),
	                 0);
	assert_int_equal(PARSE(&o, err, "--shards=4", "--lease-duration=20"), 0);
	assert_true(o.lease_duration_s == 20.0);
	/* errors */
	assert_int_equal(PARSE(&o, err, "--shards=1,2,4", "--workload=jobs"), -EINVAL);
	assert_non_null(strstr(err, "load workload only"));
	assert_int_equal(PARSE(&o, err, "--shards=0"), -EINVAL);
	assert_non_null(strstr(err, "--shards"));
	assert_int_equal(PARSE(&o, err, "--shards=9"), -EINVAL); /* > BENCH_MAX_INST */
	assert_int_equal(PARSE(&o, err, "--shards=1,2,3,4,5,6,7"), -EINVAL);
	assert_int_equal(PARSE(&o, err, "--shards=1,,2"), -EINVAL);
	assert_int_equal(PARSE(&o, err, "--shards=1,2,"), -EINVAL);
	assert_int_equal(PARSE(&o, err, "--shard-ranges=0"), -EINVAL);
	assert_int_equal(PARSE(&o, err, "--shard-ranges=257"), -EINVAL);
	assert_int_equal(PARSE(&o, err, "--lease-duration=2"), -EINVAL);
	assert_int_equal(PARSE(&o, err, "--lease-duration=abc"), -EINVAL);
	/* the list parser itself */
	assert_int_equal(bench_parse_int_list("3", 1, 8, v, 4), 1);
	assert_int_equal(v[0], 3);
	assert_int_equal(bench_parse_int_list("1,2,3,4", 1, 8, v, 4), 4);
	assert_int_equal(bench_parse_int_list("1,2,3,4,5", 1, 8, v, 4), -EINVAL);
	assert_int_equal(bench_parse_int_list("", 1, 8, v, 4), -EINVAL);
	assert_int_equal(bench_parse_int_list(NULL, 1, 8, v, 4), -EINVAL);
	assert_int_equal(bench_parse_int_list("2 ,3", 1, 8, v, 4), -EINVAL);
	assert_int_equal(bench_parse_int_list("-1", -2, 8, v, 4), 1);
	assert_int_equal(v[0], -1);
	assert_int_equal(bench_parse_int_list("x", 1, 8, v, 4), -EINVAL);
}

static void test_load_plan(void **state)
{
	(void)state;
	struct bench_opts o;
	char err[256] = "";
	int sizes[4096];

	assert_int_equal(PARSE(&o, err, "--target-pods=2000"), 0);
	int n = bench_load_plan(&o, sizes, 4096);
	/* each size about a third of 2000 pods: 3 x 250, 22 x 30, 133 x 5 */
	assert_int_equal(n, 3 + 22 + 133);
	int count[3] = {0};
	long total = 0;
	for (int i = 0; i < n; i++) {
		total += sizes[i];
		count[sizes[i] == 250 ? 0 : sizes[i] == 30 ? 1 : 2]++;
	}
	assert_int_equal(count[0], 3);
	assert_int_equal(count[1], 22);
	assert_int_equal(count[2], 133);
	assert_in_range(total, 1900, 2100);
	/* interleaved: the big ones are not all at one end */
	int first_big = -1, last_big = -1;
	for (int i = 0; i < n; i++)
		if (sizes[i] == 250) {
			if (first_big < 0)
				first_big = i;
			last_big = i;
		}
	assert_true(first_big < n / 2 && last_big > n / 2);
	assert_int_equal(bench_load_plan(&o, sizes, 10), -E2BIG);

	assert_int_equal(PARSE(&o, err, "--rs-count=5", "--replicas-mix=7,3"), 0);
	assert_int_equal(bench_load_plan(&o, sizes, 4096), 5);
	assert_int_equal(sizes[0], 7);
	assert_int_equal(sizes[1], 3);
	assert_int_equal(sizes[4], 7);

	assert_int_equal(PARSE(&o, err, "--workload=ramp", "--target-pods=1050"), 0);
	assert_int_equal(bench_load_plan(&o, sizes, 4096), 11);
	assert_int_equal(sizes[10], 100);
	/* a tiny target still gets one RS of each size */
	assert_int_equal(PARSE(&o, err, "--target-pods=100", "--replicas-mix=250,30,5"), 0);
	n = bench_load_plan(&o, sizes, 4096);
	assert_true(n >= 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_defaults_test_cluster),
	        cmocka_unit_test(test_ramp_default_target),
	        cmocka_unit_test(test_values_and_bools),
	        cmocka_unit_test(test_errors),
	        cmocka_unit_test(test_load_plan),
	        cmocka_unit_test(test_shards),
	        cmocka_unit_test(test_object_workloads),
	        cmocka_unit_test(test_cluster_workloads),
	        cmocka_unit_test(test_cluster_workload),
	        cmocka_unit_test(test_nodefailure_workload),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
