/* SPDX-License-Identifier: Apache-2.0 */
/* Tests of the `kcmd bench --shards` renderings (bench/shards.h): shares, lines, table, markdown,
 * JSON, on a report made by hand. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/shards.h"

static void phase(struct bench_run *r, const char *name, double secs, long created, double api,
                  bool converged)
{
	struct bench_phase *p = &r->phases[r->n_phases++];
	*p = (struct bench_phase){.converged = converged,
	                          .converge_s = secs,
	                          .pods_created = created,
	                          .cpu_s = 1,
	                          .peak_mem_mb = 1,
	                          .apiserver_cpu_s = api,
	                          .etcd_cpu_s = api / 4};
	snprintf(p->name, sizeof(p->name), "%s", name);
}

static void pass(struct bench_run *r, int n, const char *ctl, double cpu, double mem)
{
	*r = (struct bench_run){
	        .shards = n, .cpu_s = cpu, .peak_mem_mb = mem, .failover_s = NAN, .load_avg = 2.5};
	snprintf(r->controller, sizeof(r->controller), "%s", ctl);
	snprintf(r->mem_kind, sizeof(r->mem_kind), "%s", n ? "PSS" : "RSS");
	phase(r, "create", 100.0 / (n ? n : 1), 2000, 50.0 / (n ? n : 1) * 1.5, true);
	phase(r, "rescale", 20, 300, 10, true);
	phase(r, "delete", 90, 0, 40, n != 4); /* the 4-instance delete did not converge */
}

static void inst(struct bench_run *r, const char *id, int ranges, double keys, double cpu,
                 double pss)
{
	struct bench_inst *in = &r->inst[r->n_inst++];
	*in = (struct bench_inst){.ranges = ranges,
	                          .keys = keys,
	                          .cpu_s = cpu,
	                          .peak_mem_mb = pss,
	                          .range0 = r->n_inst == 1};
	snprintf(in->identity, sizeof(in->identity), "%s", id);
}

static void make(struct bench_report *r)
{
	*r = (struct bench_report){.target_pods = 2000,
	                           .rs_count = 222,
	                           .namespaces = 100,
	                           .create_rate = 20,
	                           .shard_ranges = 64,
	                           .lease_duration_s = 15};
	snprintf(r->workload, sizeof(r->workload), "load");
	snprintf(r->command, sizeof(r->command), "kcmd bench --shards=1,2,4");
	pass(&r->runs[0], 1, "kcmd", 40, 100);
	inst(&r->runs[0], "host_11111111-aaaa", 64, 5000, 40, 100);
	pass(&r->runs[1], 2, "kcmd", 48, 190);
	inst(&r->runs[1], "host_22222222-bbbb", 30, 2600, 28, 96);
	inst(&r->runs[1], "host_33333333-cccc", 34, 2500, 20, 94);
	r->runs[1].failover_s = 15.8;
	r->runs[1].failover_ranges = 30;
	pass(&r->runs[2], 4, "kcmd", 60, 380);
	inst(&r->runs[2], "host_44444444", 16, 1300, 15, 95);
	inst(&r->runs[2], "host_55555555", 16, 1200, 15, 95);
	inst(&r->runs[2], "host_66666666", 16, 1250, 15, 95);
	inst(&r->runs[2], "noseparator", 16, 1250, 15, 95);
	pass(&r->runs[3], 0, "upstream", 30, 80);
	r->n_runs = 4;
}

static char *render(void (*fn)(FILE *, const struct bench_report *), const struct bench_report *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	fn(f, r);
	fclose(f);
	return buf;
}

static void test_shares(void **state)
{
	(void)state;
	struct bench_report r;
	make(&r);
	assert_ptr_equal(bench_shards_base(&r), &r.runs[0]);
	assert_true(fabs(bench_shards_share(28, 40, 2) - 1.4) < 1e-9);
	assert_true(fabs(bench_shards_share(10, 40, 4) - 1.0) < 1e-9);
	assert_true(isnan(bench_shards_share(NAN, 40, 2)));
	assert_true(isnan(bench_shards_share(10, 0, 2)));
	assert_true(isnan(bench_shards_share(10, NAN, 2)));
	assert_true(isnan(bench_shards_share(10, 40, 0)));
	assert_true(fabs(bench_shards_create_rate(&r.runs[1]) - 40.0) < 1e-9); /* 2000 / 50 s */
	assert_true(fabs(bench_shards_apiserver_cores(&r.runs[0], "create") - 0.75) < 1e-9);
	assert_true(isnan(bench_shards_apiserver_cores(&r.runs[0], "ramp")));
	/* no one-instance pass: no base, every share NAN */
	r.runs[0].shards = 3;
	assert_null(bench_shards_base(&r));
}

static void test_lines(void **state)
{
	(void)state;
	struct bench_report r;
	make(&r);
	char *s = render(bench_shards_lines, &r);
	assert_non_null(strstr(s, "bench: shards.n1_create_s 100 s\n"));
	assert_non_null(strstr(s, "bench: shards.n2_create_s 50 s\n"));
	assert_non_null(strstr(s, "bench: shards.n2_create_pods_per_s 40 pods/s\n"));
	assert_non_null(strstr(s, "bench: shards.n1_create_apiserver_cores 0.75 cores\n"));
	assert_non_null(strstr(s, "bench: shards.n2_failover_s 15.8 s\n"));
	assert_null(strstr(s, "shards.n1_failover_s"));                       /* NAN: not printed */
	assert_non_null(strstr(s, "bench: shards.n2_i0_cpu_share 1.4 x\n"));  /* 28/40*2 */
	assert_non_null(strstr(s, "bench: shards.n2_i1_pss_share 1.88 x\n")); /* 94/100*2 */
	assert_non_null(strstr(s, "bench: shards.n2_i1_ranges 34 ranges\n"));
	assert_non_null(strstr(s, "bench: shards.n2_keys 5100 keys\n"));
	assert_non_null(strstr(s, "bench: shards.upstream_create_s 100 s\n"));
	/* a phase that did not converge has no time line */
	assert_non_null(strstr(s, "bench: shards.n2_delete_s 90 s\n"));
	assert_null(strstr(s, "shards.n4_delete_s"));
	free(s);
}

static void test_table_and_markdown(void **state)
{
	(void)state;
	struct bench_report r;
	make(&r);
	char *t = render(bench_shards_table, &r);
	assert_non_null(strstr(t, "64 ranges, lease 15 s (failover goal <= 16 s)"));
	assert_non_null(strstr(t, "kcmd x2"));
	assert_non_null(strstr(t, "upstream kcm"));
	assert_non_null(strstr(t, "NOT converged"));
	assert_non_null(strstr(t, "0 22222222")); /* instance 0's short identity */
	assert_non_null(strstr(t, "0 11111111"));
	assert_non_null(strstr(t, "3 nosepara"));   /* no '_': its first 8 characters */
	assert_non_null(strstr(t, "30 (incl. 0)")); /* ranges, and range 0 */
	free(t);
	char *m = render(bench_shards_markdown, &r);
	assert_true(strncmp(m, "## kcmd bench — shards\n", 23) == 0);
	assert_non_null(strstr(m, "| kcmd ×2 | 50.0 | 20.0 | 90.0 | 160.0 | 40.0 | 0.75 | 48.0 | "
	                          "190.0 PSS | 5100 | 15.8 | 2.5 |\n"));
	assert_non_null(strstr(m, "| kcmd ×2 | 1 33333333 | 34 | 2500 | 20.0 | 1.00 | 94.0 | "
	                          "1.88 |\n"));
	assert_non_null(strstr(m, "| upstream kcm | 100.0 | 20.0 | 90.0 | 210.0 | 20.0 | 0.75 | "
	                          "30.0 | 80.0 RSS | - | - | 2.5 |\n"));
	assert_non_null(strstr(m, "goal ≤ 16 s"));
	free(m);
}

static void test_json(void **state)
{
	(void)state;
	struct bench_report r;
	make(&r);
	char *s = bench_shards_json(&r);
	assert_non_null(s);
	cJSON *j = cJSON_Parse(s);
	assert_non_null(j);
	assert_int_equal(cJSON_GetObjectItem(j, "shard_ranges")->valueint, 64);
	cJSON *passes = cJSON_GetObjectItem(j, "passes");
	assert_int_equal(cJSON_GetArraySize(passes), 4);
	cJSON *p2 = cJSON_GetArrayItem(passes, 1);
	assert_int_equal(cJSON_GetObjectItem(p2, "instances")->valueint, 2);
	assert_true(cJSON_GetObjectItem(p2, "failover_s")->valuedouble == 15.8);
	cJSON *i1 = cJSON_GetArrayItem(cJSON_GetObjectItem(p2, "instance"), 1);
	assert_string_equal(cJSON_GetObjectItem(i1, "identity")->valuestring, "host_33333333-cccc");
	assert_true(fabs(cJSON_GetObjectItem(i1, "cpu_share")->valuedouble - 1.0) < 1e-9);
	/* NAN is null, not a number */
	cJSON *p1 = cJSON_GetArrayItem(passes, 0);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(p1, "failover_s")));
	cJSON *up = cJSON_GetArrayItem(passes, 3);
	assert_string_equal(cJSON_GetObjectItem(up, "controller")->valuestring, "upstream");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(up, "instance")), 0);
	cJSON_Delete(j);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_shares),
	        cmocka_unit_test(test_lines),
	        cmocka_unit_test(test_table_and_markdown),
	        cmocka_unit_test(test_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
