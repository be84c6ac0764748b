/* SPDX-License-Identifier: Apache-2.0 */
/* bench/report.c: tables, JSON, bench lines, markdown and gnuplot (see report.h). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/report.h"
#include "bench/stats.h"

void bench_report_free(struct bench_report *r)
{
	for (unsigned i = 0; i < r->n_runs; i++)
		for (unsigned p = 0; p < r->runs[i].n_phases; p++)
			prom_counts_free(&r->runs[i].phases[p].api);
}

const struct bench_run *bench_report_find(const struct bench_report *r, const char *controller,
                                          const char *limits)
{
	for (unsigned i = 0; i < r->n_runs; i++)
		if (!strcmp(r->runs[i].controller, controller) &&
		    !strcmp(r->runs[i].limits, limits))
			return &r->runs[i];
	return NULL;
}

const struct bench_phase *bench_run_phase(const struct bench_run *run, const char *name)
{
	if (!run)
		return NULL;
	for (unsigned i = 0; i < run->n_phases; i++)
		if (!strcmp(run->phases[i].name, name))
			return &run->phases[i];
	return NULL;
}

/* ---- figures of a phase, shared by every rendering ------------------------------------------ */

enum fig {
	F_CONVERGE,
	F_CREATED_PS,
	F_DELETED_PS,
	F_CPU,
	F_MEM,
	F_P50,
	F_P99,
	F_API,
	F_LISTS,
	F_QUEUE,
	F_RESUME,
	F_APISERVER_CPU,
	F_ETCD_CPU,
	F_APISERVER_MB,
	F_N
};
static const struct {
	const char *label, *key, *unit;
} figs[F_N] = {
        [F_CONVERGE] = {"time to converge", "converge_s", "s"},
        [F_CREATED_PS] = {"pods created/s", "pods_created_per_s", "pods/s"},
        [F_DELETED_PS] = {"pods deleted/s", "pods_deleted_per_s", "pods/s"},
        [F_CPU] = {"CPU-seconds", "cpu_s", "s"},
        [F_MEM] = {"peak memory", "peak_mem_mb", "MB"},
        [F_P50] = {"reaction p50", "reaction_p50_ms", "ms"},
        [F_P99] = {"reaction p99", "reaction_p99_ms", "ms"},
        [F_API] = {"API requests", "api_requests", "requests"},
        [F_LISTS] = {"LIST requests", "list_requests", "requests"},
        [F_QUEUE] = {"queue depth max", "queue_depth_max", "items"},
        [F_RESUME] = {"resume after kill", "resume_s", "s"},
        [F_APISERVER_CPU] = {"apiserver CPU-seconds", "apiserver_cpu_s", "s"},
        [F_ETCD_CPU] = {"etcd CPU-seconds", "etcd_cpu_s", "s"},
        [F_APISERVER_MB] = {"apiserver bytes written", "apiserver_sent_mb", "MB"},
};

static double fig_value(const struct bench_phase *p, enum fig f)
{
	if (!p)
		return NAN;
	switch (f) {
	case F_CONVERGE:
		return p->converge_s;
	case F_CREATED_PS:
		return p->pods_created && p->converge_s > 0
		               ? (double)p->pods_created / p->converge_s
		               : NAN;
	case F_DELETED_PS:
		return p->pods_deleted && p->converge_s > 0
		               ? (double)p->pods_deleted / p->converge_s
		               : NAN;
	case F_CPU:
		return p->cpu_s;
	case F_MEM:
		return p->peak_mem_mb;
	case F_P50:
		return p->react_p50_ms;
	case F_P99:
		return p->react_p99_ms;
	case F_API:
		return prom_counts_total(&p->api);
	case F_LISTS:
		return p->lists;
	case F_QUEUE:
		return p->queue_depth_max;
	case F_RESUME:
		return p->resume_s;
	case F_APISERVER_CPU:
		return p->apiserver_cpu_s;
	case F_ETCD_CPU:
		return p->etcd_cpu_s;
	case F_APISERVER_MB:
		return p->apiserver_sent_mb;
	default:
		return NAN;
	}
}

static void fmt_num(char *buf, size_t n, double v)
{
	if (isnan(v))
		snprintf(buf, n, "-");
	else if (fabs(v) >= 100)
		snprintf(buf, n, "%.0f", v);
	else if (fabs(v) >= 10)
		snprintf(buf, n, "%.1f", v);
	else
		snprintf(buf, n, "%.2f", v);
}

static const char *const pass_names[] = {"limited", "unlimited"};

void bench_run_extra(struct bench_run *run, const char *key, const char *label, const char *unit,
                     double v)
{
	if (!run || run->n_extra >= BENCH_MAX_EXTRA)
		return;
	struct bench_extra *e = &run->extra[run->n_extra++];
	snprintf(e->key, sizeof(e->key), "%s", key);
	snprintf(e->label, sizeof(e->label), "%s", label);
	snprintf(e->unit, sizeof(e->unit), "%s", unit);
	e->v = v;
}

static double extra_of(const struct bench_run *run, const char *key)
{
	for (unsigned i = 0; run && i < run->n_extra; i++)
		if (!strcmp(run->extra[i].key, key))
			return run->extra[i].v;
	return NAN;
}

void bench_report_table(FILE *f, const struct bench_report *r)
{
	for (size_t l = 0; l < 2; l++) {
		const struct bench_run *k = bench_report_find(r, "kcmd", pass_names[l]);
		const struct bench_run *u = bench_report_find(r, "upstream", pass_names[l]);
		const struct bench_run *any = k ? k : u;
		if (!any)
			continue;
		fprintf(f, "\n== %s, %s (--kube-api-qps=%g --kube-api-burst=%d): kcmd%s ==\n",
		        r->workload, pass_names[l], any->qps, any->burst,
		        u ? " vs upstream kube-controller-manager" : "");
		fprintf(f, "%-10s %-28s %12s %12s %14s\n", "phase", "figure", "kcmd", "upstream",
		        "kcmd/upstream");
		for (unsigned pi = 0; pi < any->n_phases; pi++) {
			const char *pn = any->phases[pi].name;
			const struct bench_phase *kp = bench_run_phase(k, pn),
			                         *up = bench_run_phase(u, pn);
			bool first = true;
			for (int fi = 0; fi < F_N; fi++) {
				double kv = fig_value(kp, (enum fig)fi),
				       uv = fig_value(up, (enum fig)fi);
				if (isnan(kv) && isnan(uv))
					continue;
				char a[32], b[32], c[32], lab[48];
				fmt_num(a, sizeof(a), kv);
				fmt_num(b, sizeof(b), uv);
				fmt_num(c, sizeof(c), bench_ratio(kv, uv));
				if (fi == F_MEM) {
					size_t al = strlen(a), bl = strlen(b);
					if (k && !isnan(kv))
						snprintf(a + al, sizeof(a) - al, " %s",
						         k->mem_kind);
					if (u && !isnan(uv))
						snprintf(b + bl, sizeof(b) - bl, " %s",
						         u->mem_kind);
				}
				snprintf(lab, sizeof(lab), "%s (%s)", figs[fi].label,
				         figs[fi].unit);
				fprintf(f, "%-10s %-28.28s %12s %12s %14s\n", first ? pn : "", lab,
				        a, b, c);
				first = false;
			}
			bool nc = (kp && !kp->converged) || (up && !up->converged);
			if (nc)
				fprintf(f, "%-10s %-28s %12s %12s\n", "", "converged",
				        kp ? (kp->converged ? "yes" : "NO") : "-",
				        up ? (up->converged ? "yes" : "NO") : "-");
		}
		for (unsigned i = 0; i < any->n_extra; i++) {
			const struct bench_extra *e = &any->extra[i];
			double kv = extra_of(k, e->key), uv = extra_of(u, e->key);
			char a[32], b[32], c[32], lab[64];
			fmt_num(a, sizeof(a), kv);
			fmt_num(b, sizeof(b), uv);
			fmt_num(c, sizeof(c), bench_ratio(kv, uv));
			snprintf(lab, sizeof(lab), "%s (%s)", e->label, e->unit);
			fprintf(f, "%-10s %-28.28s %12s %12s %14s\n", i ? "" : r->workload, lab, a,
			        b, c);
		}
		for (const struct bench_run *run = k; run; run = run == k ? u : NULL)
			if (run->error[0])
				fprintf(f, "%s: %s\n", run->controller, run->error);
	}
	if (!isnan(r->raw_create_per_s))
		fprintf(f,
		        "\nraw apiserver write limit: %.0f pods/s created, %.0f pods/s deleted "
		        "(%ld pods, %d concurrent)\n",
		        r->raw_create_per_s, r->raw_delete_per_s, r->raw_pods, r->raw_concurrency);
}

/* ---- bench lines ------------------------------------------------------------------------------
 */

static void line(FILE *f, const char *area, const struct bench_run *run, const char *wl,
                 const char *fig, double v, const char *unit)
{
	if (isnan(v))
		return;
	fprintf(f, "bench: %s.%s%s%s_%s%s %.6g %s\n", area,
	        strcmp(run->controller, "kcmd") ? run->controller : "",
	        strcmp(run->controller, "kcmd") ? "." : "", wl, fig,
	        strcmp(run->limits, "limited") ? "_unlimited" : "", v, unit);
}

/* deployments, jobs, daemonsets: the area of their lines */
static const char *object_area(const char *workload)
{
	return !strcmp(workload, "deployments")      ? "deployment"
	       : !strcmp(workload, "jobs")           ? "job"
	       : !strcmp(workload, "daemonsets")     ? "daemonset"
	       : !strcmp(workload, "namespaces")     ? "namespace"
	       : !strcmp(workload, "endpointslices") ? "endpointslice"
	       : !strcmp(workload, "cluster")        ? "cluster"
	       : !strcmp(workload, "nodefailure")    ? "nodelifecycle"
	                                             : NULL;
}

void bench_report_lines(FILE *f, const struct bench_report *r)
{
	const char *area = object_area(r->workload);
	for (unsigned i = 0; area && i < r->n_runs; i++) {
		/* <area>[.upstream].<workload>_<phase>_{s,cpu_s,peak_mem_mb,api_requests}, and the
		 * whole run's CPU and peak memory */
		const struct bench_run *run = &r->runs[i];
		char fig[64];
		for (unsigned p = 0; p < run->n_phases; p++) {
			const struct bench_phase *ph = &run->phases[p];
			if (ph->converged) {
				snprintf(fig, sizeof(fig), "%s_s", ph->name);
				line(f, area, run, r->workload, fig, ph->converge_s, "s");
			}
			snprintf(fig, sizeof(fig), "%s_cpu_s", ph->name);
			line(f, area, run, r->workload, fig, ph->cpu_s, "s");
			snprintf(fig, sizeof(fig), "%s_peak_mem_mb", ph->name);
			line(f, area, run, r->workload, fig, ph->peak_mem_mb, "MB");
			snprintf(fig, sizeof(fig), "%s_api_requests", ph->name);
			line(f, area, run, r->workload, fig, fig_value(ph, F_API), "requests");
		}
		line(f, area, run, r->workload, "cpu_s", run->cpu_s, "s");
		line(f, area, run, r->workload, "peak_mem_mb", run->peak_mem_mb, "MB");
		for (unsigned e = 0; e < run->n_extra; e++)
			line(f, area, run, r->workload, run->extra[e].key, run->extra[e].v,
			     run->extra[e].unit);
	}
	for (unsigned i = 0; !area && i < r->n_runs; i++) {
		const struct bench_run *run = &r->runs[i];
		const struct bench_phase *c =
		        bench_run_phase(run, !strcmp(r->workload, "ramp") ? "ramp" : "create");
		const struct bench_phase *lat = bench_run_phase(run, "latency");
		const struct bench_phase *d = bench_run_phase(run, "delete");
		if (c && c->converged) {
			line(f, "rs", run, r->workload, "create_s", c->converge_s, "s");
			line(f, "rs", run, r->workload, "create_pods", (double)c->pods_created,
			     "pods");
			line(f, "rs", run, r->workload, "pods_per_s", fig_value(c, F_CREATED_PS),
			     "pods/s");
		}
		if (c) {
			line(f, "rs", run, r->workload, "cpu_s", c->cpu_s, "s");
			line(f, "rs", run, r->workload, "peak_mem_mb", c->peak_mem_mb, "MB");
		}
		/* latency at the peak pod count (ramp) or over the creation (load) */
		const struct bench_phase *lp = lat && lat->react_n ? lat : c;
		if (lp) {
			line(f, "rs", run, r->workload, "reaction_p50_ms", lp->react_p50_ms, "ms");
			line(f, "rs", run, r->workload, "reaction_p99_ms", lp->react_p99_ms, "ms");
		}
		if (d && d->converged) {
			line(f, "gc", run, r->workload, "collect_s", d->converge_s, "s");
			line(f, "gc", run, r->workload, "collect_pods", (double)d->pods_deleted,
			     "pods");
			line(f, "gc", run, r->workload, "pods_per_s", fig_value(d, F_DELETED_PS),
			     "pods/s");
		}
		if (d)
			line(f, "gc", run, r->workload, "cpu_s", d->cpu_s, "s");
		for (unsigned p = 0; p < run->n_phases; p++)
			if (!isnan(run->phases[p].resume_s)) {
				line(f, "manager", run, r->workload, "resume_s",
				     run->phases[p].resume_s, "s");
				line(f, "manager", run, r->workload, "lists", run->phases[p].lists,
				     "requests");
			}
	}
	if (!isnan(r->raw_create_per_s)) {
		fprintf(f, "bench: apiserver.raw_create_pods_per_s %.6g pods/s\n",
		        r->raw_create_per_s);
		fprintf(f, "bench: apiserver.raw_delete_pods_per_s %.6g pods/s\n",
		        r->raw_delete_per_s);
	}
}

/* ---- JSON ------------------------------------------------------------------------------------ */

static void add_num(cJSON *o, const char *k, double v)
{
	if (isnan(v) || isinf(v))
		cJSON_AddNullToObject(o, k);
	else
		cJSON_AddNumberToObject(o, k, v);
}

char *bench_report_json(const struct bench_report *r)
{
	cJSON *root = cJSON_CreateObject(), *runs;

	if (!root)
		return NULL;
	cJSON_AddStringToObject(root, "workload", r->workload);
	cJSON_AddStringToObject(root, "date", r->date);
	cJSON_AddStringToObject(root, "machine", r->machine);
	cJSON_AddStringToObject(root, "versions", r->versions);
	cJSON_AddStringToObject(root, "command", r->command);
	add_num(root, "target_pods", (double)r->target_pods);
	add_num(root, "rs_count", r->rs_count);
	add_num(root, "namespaces", r->namespaces);
	add_num(root, "create_rate", r->create_rate);
	cJSON *raw = cJSON_AddObjectToObject(root, "raw_apiserver");
	if (raw) {
		add_num(raw, "pods", (double)r->raw_pods);
		add_num(raw, "concurrency", r->raw_concurrency);
		add_num(raw, "create_pods_per_s", r->raw_create_per_s);
		add_num(raw, "delete_pods_per_s", r->raw_delete_per_s);
	}
	runs = cJSON_AddArrayToObject(root, "runs");
	for (unsigned i = 0; runs && i < r->n_runs; i++) {
		const struct bench_run *run = &r->runs[i];
		cJSON *o = cJSON_CreateObject(), *phases;
		if (!o)
			break;
		cJSON_AddItemToArray(runs, o);
		cJSON_AddStringToObject(o, "controller", run->controller);
		cJSON_AddStringToObject(o, "limits", run->limits);
		add_num(o, "kube_api_qps", run->qps);
		add_num(o, "kube_api_burst", run->burst);
		cJSON_AddStringToObject(o, "memory_kind", run->mem_kind);
		add_num(o, "cpu_s", run->cpu_s);
		add_num(o, "peak_mem_mb", run->peak_mem_mb);
		cJSON_AddStringToObject(o, "series", run->series);
		if (run->error[0])
			cJSON_AddStringToObject(o, "error", run->error);
		if (run->n_extra) {
			cJSON *fo = cJSON_AddObjectToObject(o, "figures");
			for (unsigned e = 0; fo && e < run->n_extra; e++)
				add_num(fo, run->extra[e].key, run->extra[e].v);
		}
		phases = cJSON_AddArrayToObject(o, "phases");
		for (unsigned p = 0; phases && p < run->n_phases; p++) {
			const struct bench_phase *ph = &run->phases[p];
			cJSON *po = cJSON_CreateObject();
			if (!po)
				break;
			cJSON_AddItemToArray(phases, po);
			cJSON_AddStringToObject(po, "name", ph->name);
			cJSON_AddBoolToObject(po, "converged", ph->converged);
			add_num(po, "start_s", ph->start_s);
			add_num(po, "pods_created", (double)ph->pods_created);
			add_num(po, "pods_deleted", (double)ph->pods_deleted);
			add_num(po, "reaction_samples", (double)ph->react_n);
			for (int fi = 0; fi < F_N; fi++)
				add_num(po, figs[fi].key, fig_value(ph, (enum fig)fi));
			cJSON *api = cJSON_AddObjectToObject(po, "api_requests_by_verb_code");
			for (size_t k = 0; api && k < ph->api.n; k++)
				add_num(api, ph->api.items[k].key, ph->api.items[k].v);
		}
	}
	char *s = cJSON_Print(root);
	cJSON_Delete(root);
	return s;
}

/* ---- markdown ----------------------------------------------------------------------------------
 */

void bench_report_markdown(FILE *f, const struct bench_report *r)
{
	fprintf(f, "## kcmd bench — `%s` workload, kcmd vs upstream kube-controller-manager\n\n",
	        r->workload);
	fprintf(f, "Command: `%s`  \nDate: %s  \nMachine: %s  \nVersions: %s\n\n", r->command,
	        r->date, r->machine, r->versions);
	if (r->desc[0])
		fprintf(f, "%s\n", r->desc);
	else
		fprintf(f,
		        "Workload: `--target-pods=%ld` in %d ReplicaSets over %d namespaces, "
		        "ReplicaSet writes at %g/s; pods made Ready by `kcmd --simulate-kubelet` "
		        "in "
		        "both runs. Memory: kcmd = PSS summed over the manager and all its "
		        "processes; upstream = RSS.\n",
		        r->target_pods, r->rs_count, r->namespaces, r->create_rate);
	for (size_t l = 0; l < 2; l++) {
		const struct bench_run *k = bench_report_find(r, "kcmd", pass_names[l]);
		const struct bench_run *u = bench_report_find(r, "upstream", pass_names[l]);
		const struct bench_run *any = k ? k : u;
		if (!any)
			continue;
		fprintf(f, "\n### %s (`--kube-api-qps=%g --kube-api-burst=%d` on both)\n\n",
		        pass_names[l], any->qps, any->burst);
		fprintf(f, "| phase | figure | kcmd | upstream | kcmd/upstream "
		           "|\n|---|---|---|---|---|\n");
		for (unsigned pi = 0; pi < any->n_phases; pi++) {
			const char *pn = any->phases[pi].name;
			const struct bench_phase *kp = bench_run_phase(k, pn),
			                         *up = bench_run_phase(u, pn);
			for (int fi = 0; fi < F_N; fi++) {
				double kv = fig_value(kp, (enum fig)fi),
				       uv = fig_value(up, (enum fig)fi);
				if (isnan(kv) && isnan(uv))
					continue;
				char a[32], b[32], c[32];
				fmt_num(a, sizeof(a), kv);
				fmt_num(b, sizeof(b), uv);
				fmt_num(c, sizeof(c), bench_ratio(kv, uv));
				fprintf(f, "| %s | %s (%s) | %s%s | %s%s | %s |\n", pn,
				        figs[fi].label, figs[fi].unit, a,
				        kp && !kp->converged && fi == F_CONVERGE
				                ? " (not converged)"
				                : "",
				        b,
				        up && !up->converged && fi == F_CONVERGE
				                ? " (not converged)"
				                : "",
				        c);
			}
		}
		for (unsigned i = 0; i < any->n_extra; i++) {
			const struct bench_extra *e = &any->extra[i];
			double kv = extra_of(k, e->key), uv = extra_of(u, e->key);
			char a[32], b[32], c[32];
			fmt_num(a, sizeof(a), kv);
			fmt_num(b, sizeof(b), uv);
			fmt_num(c, sizeof(c), bench_ratio(kv, uv));
			fprintf(f, "| %s | %s (%s) | %s | %s | %s |\n", r->workload, e->label,
			        e->unit, a, b, c);
		}
		fprintf(f, "\nAPI requests by verb and code (apiserver, all clients):\n\n");
		for (unsigned pi = 0; pi < any->n_phases; pi++) {
			const char *pn = any->phases[pi].name;
			for (const struct bench_run *run = k; run; run = run == k ? u : NULL) {
				const struct bench_phase *ph = bench_run_phase(run, pn);
				if (!ph || !ph->api.n)
					continue;
				fprintf(f, "- %s, %s:", pn, run->controller);
				for (size_t i = 0; i < ph->api.n; i++)
					fprintf(f, "%s `%s` %.0f", i ? "," : "",
					        ph->api.items[i].key, ph->api.items[i].v);
				fputc('\n', f);
			}
		}
		for (const struct bench_run *run = k; run; run = run == k ? u : NULL)
			if (run->error[0])
				fprintf(f, "\n%s: %s\n", run->controller, run->error);
	}
	if (!isnan(r->raw_create_per_s))
		fprintf(f,
		        "\nRaw apiserver write limit on this machine: **%.0f pods/s** created "
		        "directly by the driver "
		        "(%ld pods, %d concurrent requests, no controller), %.0f pods/s deleted.\n",
		        r->raw_create_per_s, r->raw_pods, r->raw_concurrency, r->raw_delete_per_s);
	if (r->plot_pods[0])
		fprintf(f,
		        "\nPlots: `%s.png` / `.svg` (pods over time), `%s.png` / `.svg` (memory "
		        "over time); script "
		        "`%s`.\n",
		        r->plot_pods, r->plot_memory, r->plot_script);
}

/* ---- gnuplot -----------------------------------------------------------------------------------
 */

void bench_report_gnuplot(FILE *f, const struct bench_report *r)
{
	static const char *const what[2][3] = {{"pods", "pods (existing)", "2"},
	                                       {"memory", "memory (MB)", "4"}};

	fprintf(f, "# gnuplot script written by kcmd bench (%s workload, %s)\n", r->workload,
	        r->date);
	for (int w = 0; w < 2; w++) {
		const char *base = w ? r->plot_memory : r->plot_pods;
		for (int t = 0; t < 2; t++) {
			if (t)
				fprintf(f,
				        "set terminal svg size 1000,560 dynamic background rgb "
				        "'white'\nset output '%s.svg'\n",
				        base);
			else
				fprintf(f,
				        "set terminal pngcairo size 1000,560\nset output "
				        "'%s.png'\n",
				        base);
			fprintf(f,
			        "set title 'kcmd bench %s: %s over time'\nset xlabel 'seconds "
			        "since the run started'\n"
			        "set ylabel '%s'\nset key outside right top\nset grid\n",
			        r->workload, what[w][0], what[w][1]);
			fprintf(f, "plot ");
			for (unsigned i = 0; i < r->n_runs; i++)
				fprintf(f, "%s'%s' using 1:%s with lines lw 2 title '%s %s%s'",
				        i ? ", \\\n     " : "", r->runs[i].series, what[w][2],
				        r->runs[i].controller, r->runs[i].limits,
				        w ? (strcmp(r->runs[i].mem_kind, "PSS") ? " (RSS)"
				                                                : " (PSS)")
				          : "");
			if (!r->n_runs)
				fprintf(f, "0 notitle");
			fprintf(f, "\nunset output\n");
		}
	}
}

/* ---- doc splice -------------------------------------------------------------------------------
 */

int bench_doc_splice(const char *doc, const char *section, char **out)
{
	return bench_doc_splice_tag(doc, section, NULL, out);
}

int bench_doc_splice_tag(const char *doc, const char *section, const char *tag, char **out)
{
	char begin[160], end[96];
	if (tag) {
		snprintf(begin, sizeof(begin),
		         "<!-- kcmd-bench:begin %s (written by kcmd bench --update-doc) -->", tag);
		snprintf(end, sizeof(end), "<!-- kcmd-bench:end %s -->", tag);
	} else {
		snprintf(begin, sizeof(begin), "%s", BENCH_DOC_BEGIN);
		snprintf(end, sizeof(end), "%s", BENCH_DOC_END);
	}
	const char *b = strstr(doc, begin), *e;
	size_t dl = strlen(doc), sl = strlen(section);
	char *s;

	if (!b) {
		bool nl = dl && doc[dl - 1] != '\n';
		if (asprintf(&s, "%s%s\n%s\n%s%s%s\n", doc, nl ? "\n" : "", begin, section,
		             sl && section[sl - 1] != '\n' ? "\n" : "", end) < 0)
			return -ENOMEM;
		*out = s;
		return 0;
	}
	e = strstr(b, end);
	if (!e)
		return -EBADMSG;
	size_t head = (size_t)(b - doc) + strlen(begin);
	if (asprintf(&s, "%.*s\n%s%s%s", (int)head, doc, section,
	             sl && section[sl - 1] != '\n' ? "\n" : "", e) < 0)
		return -ENOMEM;
	*out = s;
	return 0;
}
