/* SPDX-License-Identifier: Apache-2.0 */
/* Tests of the `kcmd bench` renderings: table, bench lines, JSON, markdown, gnuplot, doc splice. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/report.h"

static void phase(struct bench_run *r, const char *name, double secs, long created, long deleted,
                  double cpu, double mem, double p50, double p99)
{
	struct bench_phase *p = &r->phases[r->n_phases++];
	*p = (struct bench_phase){.converged = true,
	                          .converge_s = secs,
	                          .pods_created = created,
	                          .pods_deleted = deleted,
	                          .cpu_s = cpu,
	                          .peak_mem_mb = mem,
	                          .react_p50_ms = p50,
	                          .react_p99_ms = p99,
	                          .react_n = created ? 10 : 0,
	                          .lists = 0,
	                          .queue_depth_max = NAN,
	                          .resume_s = NAN,
	                          .apiserver_cpu_s = cpu * 2,
	                          .etcd_cpu_s = cpu / 2,
	                          .apiserver_sent_mb = 12.5};
	snprintf(p->name, sizeof(p->name), "%s", name);
	prom_counts_add(&p->api, "POST 201", (double)created);
	prom_counts_add(&p->api, "DELETE 200", (double)deleted);
}

static void make(struct bench_report *r)
{
	*r = (struct bench_report){.target_pods = 2000,
	                           .rs_count = 158,
	                           .namespaces = 10,
	                           .create_rate = 20,
	                           .raw_pods = 2000,
	                           .raw_concurrency = 32,
	                           .raw_create_per_s = 812.5,
	                           .raw_delete_per_s = 900};
	strcpy(r->workload, "load");
	strcpy(r->date, "2026-12-02 23:30 UTC");
	strcpy(r->machine, "2 vCPU");
	strcpy(r->versions, "kcmd 0.1.0");
	strcpy(r->command, "kcmd bench --workload=load");
	struct bench_run *k = &r->runs[r->n_runs++], *u = &r->runs[r->n_runs++];
	*k = (struct bench_run){.qps = 20, .burst = 30};
	*u = *k;
	strcpy(k->controller, "kcmd");
	strcpy(u->controller, "upstream");
	strcpy(k->limits, "limited");
	strcpy(u->limits, "limited");
	strcpy(k->mem_kind, "PSS");
	strcpy(u->mem_kind, "RSS");
	strcpy(k->series, "/o/load-kcmd-limited.dat");
	strcpy(u->series, "/o/load-upstream-limited.dat");
	phase(k, "create", 100, 2000, 0, 5, 40, 10, 50);
	phase(k, "rescale", 30, 500, 480, 2, 41, 12, 60);
	phase(k, "delete", 50, 0, 2020, 3, 42, NAN, NAN);
	phase(u, "create", 110, 2000, 0, 20, 160, 20, 100);
	phase(u, "rescale", 33, 500, 480, 8, 165, 24, 120);
	phase(u, "delete", 40, 0, 2020, 6, 170, NAN, NAN);
	u->phases[2].converged = false;
	strcpy(r->plot_script, "/o/load.gp");
	strcpy(r->plot_pods, "/o/load-pods");
	strcpy(r->plot_memory, "/o/load-memory");
}

static char *render(void (*fn)(FILE *, const struct bench_report *), const struct bench_report *r)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	assert_non_null(f);
	fn(f, r);
	fclose(f);
	return buf;
}

static void test_table(void **state)
{
	(void)state;
	struct bench_report r;
	make(&r);
	char *t = render(bench_report_table, &r);
	assert_non_null(strstr(
	        t, "== load, limited (--kube-api-qps=20 --kube-api-burst=30): kcmd vs upstream"));
	/* create: 100 s vs 110 s, ratio 0.91; CPU 5 vs 20 = 0.25; memory with its kind */
	assert_non_null(strstr(t, "time to converge (s)"));
	assert_non_null(strstr(t, "0.91"));
	assert_non_null(strstr(t, "0.25"));
	assert_non_null(strstr(t, "40.0 PSS"));
	assert_non_null(strstr(t, "160 RSS"));
	assert_non_null(strstr(t, "20.0")); /* 2000 pods / 100 s */
	assert_non_null(strstr(t, "NO"));   /* upstream's delete did not converge */
	assert_non_null(strstr(t, "raw apiserver write limit: 812 pods/s created"));
	assert_null(strstr(t, "unlimited")); /* no such pass */
	free(t);
	bench_report_free(&r);
}

static void test_lines(void **state)
{
	(void)state;
	struct bench_report r;
	make(&r);
	char *t = render(bench_report_lines, &r);
	assert_non_null(strstr(t, "bench: rs.load_create_s 100 s\n"));
	assert_non_null(strstr(t, "bench: rs.upstream.load_create_s 110 s\n"));
	assert_non_null(strstr(t, "bench: rs.load_cpu_s 5 s\n"));
	assert_non_null(strstr(t, "bench: rs.load_reaction_p99_ms 50 ms\n"));
	assert_non_null(strstr(t, "bench: rs.upstream.load_reaction_p50_ms 20 ms\n"));
	assert_non_null(strstr(t, "bench: gc.load_collect_s 50 s\n"));
	assert_non_null(strstr(t, "bench: gc.load_collect_pods 2020 pods\n"));
	/* upstream's delete did not converge: no collect time, CPU still reported */
	assert_null(strstr(t, "gc.upstream.load_collect_s"));
	assert_non_null(strstr(t, "bench: gc.upstream.load_cpu_s 6 s\n"));
	assert_non_null(strstr(t, "bench: apiserver.raw_create_pods_per_s 812.5 pods/s\n"));
	/* every line has the three fields */
	for (char *l = t; *l; l = strchr(l, '\n') + 1) {
		char name[128], unit[32];
		double v;
		assert_int_equal(sscanf(l, "bench: %127s %lf %31s", name, &v, unit), 3);
	}
	free(t);
	/* an unlimited pass gets its suffix */
	strcpy(r.runs[0].limits, "unlimited");
	t = render(bench_report_lines, &r);
	assert_non_null(strstr(t, "bench: rs.load_create_s_unlimited 100 s\n"));
	free(t);
	bench_report_free(&r);
}

static void test_json(void **state)
{
	(void)state;
	struct bench_report r;
	make(&r);
	char *s = bench_report_json(&r);
	assert_non_null(s);
	cJSON *j = cJSON_Parse(s);
	assert_non_null(j);
	assert_string_equal(cJSON_GetObjectItem(j, "workload")->valuestring, "load");
	cJSON *runs = cJSON_GetObjectItem(j, "runs");
	assert_int_equal(cJSON_GetArraySize(runs), 2);
	cJSON *u = cJSON_GetArrayItem(runs, 1);
	assert_string_equal(cJSON_GetObjectItem(u, "controller")->valuestring, "upstream");
	cJSON *ph = cJSON_GetArrayItem(cJSON_GetObjectItem(u, "phases"), 0);
	assert_string_equal(cJSON_GetObjectItem(ph, "name")->valuestring, "create");
	assert_true(cJSON_GetObjectItem(ph, "converge_s")->valuedouble == 110);
	assert_true(cJSON_GetObjectItem(ph, "pods_created_per_s")->valuedouble > 18.18 &&
	            cJSON_GetObjectItem(ph, "pods_created_per_s")->valuedouble < 18.19);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(ph, "queue_depth_max"))); /* NAN -> null */
	/* the control plane's cost of the phase */
	double cpu = cJSON_GetObjectItem(ph, "cpu_s")->valuedouble;
	assert_true(cJSON_GetObjectItem(ph, "apiserver_cpu_s")->valuedouble == cpu * 2);
	assert_true(cJSON_GetObjectItem(ph, "etcd_cpu_s")->valuedouble == cpu / 2);
	assert_true(cJSON_GetObjectItem(ph, "apiserver_sent_mb")->valuedouble == 12.5);
	assert_true(cJSON_GetObjectItem(cJSON_GetObjectItem(ph, "api_requests_by_verb_code"),
	                                "POST 201")
	                    ->valuedouble == 2000);
	cJSON *d = cJSON_GetArrayItem(cJSON_GetObjectItem(u, "phases"), 2);
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(d, "converged")));
	assert_true(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(j, "raw_apiserver"), "create_pods_per_s")
	                ->valuedouble == 812.5);
	cJSON_Delete(j);
	free(s);
	bench_report_free(&r);
}

static void test_markdown_and_gnuplot(void **state)
{
	(void)state;
	struct bench_report r;
	make(&r);
	char *m = render(bench_report_markdown, &r);
	assert_non_null(strstr(m, "## kcmd bench"));
	assert_non_null(strstr(m, "Command: `kcmd bench --workload=load`"));
	assert_non_null(strstr(m, "| phase | figure | kcmd | upstream | kcmd/upstream |"));
	assert_non_null(strstr(m, "| create | time to converge (s) | 100 | 110 | 0.91 |"));
	assert_non_null(strstr(m, "(not converged)"));
	assert_non_null(strstr(m, "**812 pods/s**"));
	assert_non_null(strstr(m, "- create, upstream: `POST 201` 2000, `DELETE 200` 0"));
	assert_non_null(strstr(m, "`--target-pods=2000` in 158 ReplicaSets"));
	free(m);
	char *g = render(bench_report_gnuplot, &r);
	assert_non_null(strstr(g, "set output '/o/load-pods.png'"));
	assert_non_null(strstr(g, "set output '/o/load-pods.svg'"));
	assert_non_null(strstr(g, "set output '/o/load-memory.png'"));
	assert_non_null(strstr(g, "'/o/load-kcmd-limited.dat' using 1:2"));
	assert_non_null(strstr(g, "'/o/load-upstream-limited.dat' using 1:4"));
	assert_non_null(strstr(g, "upstream limited (RSS)"));
	free(g);
	bench_report_free(&r);
}

static void test_splice(void **state)
{
	(void)state;
	char *out = NULL;

	/* no markers: appended */
	assert_int_equal(bench_doc_splice("# Benchmarks\n\ntext", "## kcmd bench\nnew\n", &out), 0);
	assert_string_equal(out, "# Benchmarks\n\ntext\n\n" BENCH_DOC_BEGIN
	                         "\n## kcmd bench\nnew\n" BENCH_DOC_END "\n");
	/* markers: replaced, the rest kept */
	char *again = NULL;
	char doc[512];
	snprintf(doc, sizeof(doc), "%s\n## after\n", out);
	assert_int_equal(bench_doc_splice(doc, "## kcmd bench\nnewer", &again), 0);
	assert_string_equal(again, "# Benchmarks\n\ntext\n\n" BENCH_DOC_BEGIN
	                           "\n## kcmd bench\nnewer\n" BENCH_DOC_END "\n\n## after\n");
	free(out);
	free(again);
	assert_int_equal(bench_doc_splice("x " BENCH_DOC_BEGIN " no end", "s", &out), -EBADMSG);
}

static void test_object_lines_and_markdown(void **state)
{
	(void)state;
	struct bench_report r;
	make(&r);
	strcpy(r.workload, "deployments");
	strcpy(r.desc, "Workload: 50 Deployments x 10.");
	strcpy(r.runs[0].phases[1].name, "rollout");
	strcpy(r.runs[1].phases[1].name, "rollout");
	r.runs[0].cpu_s = 10;
	r.runs[1].peak_mem_mb = 170;
	char *t = render(bench_report_lines, &r);
	assert_non_null(strstr(t, "bench: deployment.deployments_create_s 100 s\n"));
	assert_non_null(strstr(t, "bench: deployment.upstream.deployments_rollout_s 33 s\n"));
	assert_non_null(strstr(t, "bench: deployment.deployments_rollout_cpu_s 2 s\n"));
	assert_non_null(strstr(t, "bench: deployment.deployments_delete_peak_mem_mb 42 MB\n"));
	assert_non_null(strstr(t, "bench: deployment.deployments_create_api_requests 2000 "));
	assert_non_null(strstr(t, "bench: deployment.deployments_cpu_s 10 s\n"));
	assert_non_null(strstr(t, "bench: deployment.upstream.deployments_peak_mem_mb 170 MB\n"));
	/* upstream's delete did not converge: no time, its CPU still */
	assert_null(strstr(t, "deployment.upstream.deployments_delete_s"));
	assert_non_null(strstr(t, "bench: deployment.upstream.deployments_delete_cpu_s 6 s\n"));
	/* not the ReplicaSet workloads' areas */
	assert_null(strstr(t, "bench: rs."));
	assert_null(strstr(t, "bench: gc."));
	free(t);
	t = render(bench_report_markdown, &r);
	assert_non_null(strstr(t, "`deployments` workload"));
	assert_non_null(strstr(t, "Workload: 50 Deployments x 10.\n"));
	assert_null(strstr(t, "ReplicaSet writes"));
	free(t);
	bench_report_free(&r);
}

static void test_splice_tag(void **state)
{
	(void)state;
	char *one = NULL, *two = NULL, *three = NULL;
	/* two workloads' sections side by side with the untagged one; each replaced alone */
	const char *doc = "# B\n" BENCH_DOC_BEGIN "\nload\n" BENCH_DOC_END "\n";
	assert_int_equal(bench_doc_splice_tag(doc, "jobs 1", "jobs", &one), 0);
	assert_int_equal(bench_doc_splice_tag(one, "ds 1", "daemonsets", &two), 0);
	assert_int_equal(bench_doc_splice_tag(two, "jobs 2", "jobs", &three), 0);
	assert_string_equal(
	        three, "# B\n" BENCH_DOC_BEGIN "\nload\n" BENCH_DOC_END "\n\n"
	               "<!-- kcmd-bench:begin jobs (written by kcmd bench --update-doc) -->\n"
	               "jobs 2\n<!-- kcmd-bench:end jobs -->\n\n"
	               "<!-- kcmd-bench:begin daemonsets (written by kcmd bench --update-doc) -->\n"
	               "ds 1\n<!-- kcmd-bench:end daemonsets -->\n");
	free(one);
	free(two);
	/* the untagged splice leaves the tagged sections alone */
	assert_int_equal(bench_doc_splice(three, "load 2", &one), 0);
	assert_non_null(strstr(one, BENCH_DOC_BEGIN "\nload 2\n" BENCH_DOC_END));
	assert_non_null(strstr(one, "jobs 2\n"));
	free(one);
	free(three);
	assert_int_equal(bench_doc_splice_tag("<!-- kcmd-bench:begin jobs (written by kcmd bench "
	                                      "--update-doc) --> x",
	                                      "s", "jobs", &one),
	                 -EBADMSG);
}

/* nodefailure: the workload's own figures per run in the table, lines, JSON and markdown */
static void test_extra_figures(void **state)
{
	(void)state;
	struct bench_report r;
	make(&r);
	strcpy(r.workload, "nodefailure");
	bench_run_extra(&r.runs[0], "taint_p50_s", "taint: median", "s", 41.5);
	bench_run_extra(&r.runs[0], "healthy_pods_evicted", "healthy pods evicted", "pods", 0);
	bench_run_extra(&r.runs[1], "taint_p50_s", "taint: median", "s", 40);
	bench_run_extra(&r.runs[1], "healthy_pods_evicted", "healthy pods evicted", "pods", NAN);
	/* the table is bounded: the 33rd figure is dropped, not written past the end */
	for (int i = 0; i < BENCH_MAX_EXTRA + 1; i++)
		bench_run_extra(&r.runs[1], "x", "x", "s", i);
	assert_int_equal(r.runs[1].n_extra, BENCH_MAX_EXTRA);
	char *t = render(bench_report_lines, &r);
	assert_non_null(strstr(t, "bench: nodelifecycle.nodefailure_taint_p50_s 41.5 s\n"));
	assert_non_null(strstr(t, "bench: nodelifecycle.upstream.nodefailure_taint_p50_s 40 s\n"));
	assert_non_null(
	        strstr(t, "bench: nodelifecycle.nodefailure_healthy_pods_evicted 0 pods\n"));
	/* not measured: no line */
	assert_null(strstr(t, "upstream.nodefailure_healthy_pods_evicted"));
	free(t);
	t = render(bench_report_table, &r);
	assert_non_null(strstr(t, "taint: median (s)"));
	assert_non_null(strstr(t, "41.5"));
	assert_non_null(strstr(t, "1.04")); /* 41.5 / 40 */
	free(t);
	t = render(bench_report_markdown, &r);
	assert_non_null(strstr(t, "| nodefailure | taint: median (s) | 41.5 | 40.0 | 1.04 |"));
	free(t);
	char *j = bench_report_json(&r);
	cJSON *root = cJSON_Parse(j);
	assert_non_null(root);
	const cJSON *run0 = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "runs"), 0);
	const cJSON *fig = cJSON_GetObjectItem(cJSON_GetObjectItem(run0, "figures"), "taint_p50_s");
	assert_true(cJSON_IsNumber(fig) && fig->valuedouble == 41.5);
	cJSON_Delete(root);
	free(j);
	bench_report_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_table),      cmocka_unit_test(test_lines),
	        cmocka_unit_test(test_json),       cmocka_unit_test(test_markdown_and_gnuplot),
	        cmocka_unit_test(test_splice),     cmocka_unit_test(test_object_lines_and_markdown),
	        cmocka_unit_test(test_splice_tag), cmocka_unit_test(test_extra_figures)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
