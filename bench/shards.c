/* SPDX-License-Identifier: Apache-2.0 */
/* bench/shards.c: the renderings of `kcmd bench --shards` (see shards.h). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/shards.h"

static const char *const phase_names[] = {"create", "rescale", "delete"};
#define N_PHASES (sizeof(phase_names) / sizeof(phase_names[0]))

static bool is_pass(const struct bench_run *run)
{
	return run->shards > 0 || !strcmp(run->controller, "upstream");
}

const struct bench_run *bench_shards_base(const struct bench_report *r)
{
	for (unsigned i = 0; i < r->n_runs; i++)
		if (r->runs[i].shards == 1)
			return &r->runs[i];
	return NULL;
}

double bench_shards_share(double inst_v, double base_v, int n)
{
	if (isnan(inst_v) || isnan(base_v) || base_v <= 0 || n < 1)
		return NAN;
	return inst_v / base_v * n;
}

double bench_shards_create_rate(const struct bench_run *run)
{
	const struct bench_phase *p = bench_run_phase(run, "create");
	return p && p->converge_s > 0 && p->pods_created ? (double)p->pods_created / p->converge_s
	                                                 : NAN;
}

double bench_shards_apiserver_cores(const struct bench_run *run, const char *phase)
{
	const struct bench_phase *p = bench_run_phase(run, phase);
	return p && p->converge_s > 0 && !isnan(p->apiserver_cpu_s)
	               ? p->apiserver_cpu_s / p->converge_s
	               : NAN;
}

static double total_s(const struct bench_run *run)
{
	double t = 0;
	for (unsigned i = 0; i < run->n_phases; i++)
		t += run->phases[i].converge_s;
	return run->n_phases ? t : NAN;
}

static double keys_of(const struct bench_run *run)
{
	double k = 0;
	for (unsigned i = 0; i < run->n_inst; i++)
		k += run->inst[i].keys;
	return run->n_inst ? k : NAN;
}

static void num(char *buf, size_t n, double v, int prec)
{
	if (isnan(v))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.*f", prec, v);
}

static void pass_label(char *buf, size_t n, const struct bench_run *run, bool md)
{
	if (run->shards > 0)
		snprintf(buf, n, "kcmd %s%d", md ? "×" : "x", run->shards);
	else
		snprintf(buf, n, "upstream kcm");
}

/* The identity's distinctive part: the first 8 characters after its last '_' (kcmd's
 * identities are "<host>_<uuid>"). */
static void short_id(char *buf, size_t n, const char *id)
{
	const char *u = strrchr(id, '_');
	snprintf(buf, n, "%.8s", u && u[1] ? u + 1 : id);
}

/* One row of the pass table into cells (shared by the terminal and the markdown). */
enum { C_CREATE, C_RESCALE, C_DELETE, C_TOTAL, C_RATE, C_API, C_CPU, C_MEM, C_KEYS, C_FAIL, C_N };
static const char *const col_names[C_N] = {
        "create s",  "rescale s", "delete s", "total s", "create pods/s",
        "api cores", "CPU s",     "peak MB",  "keys",    "failover s",
};
static const char *const md_names[C_N] = {
        "create s",   "rescale s",       "delete s",
        "total s",    "pods/s (create)", "apiserver cores (create)",
        "CPU s",      "peak memory MB",  "keys",
        "failover s",
};

static void pass_cells(const struct bench_run *run, char cells[C_N][32])
{
	for (size_t i = 0; i < N_PHASES; i++) {
		const struct bench_phase *p = bench_run_phase(run, phase_names[i]);
		num(cells[C_CREATE + i], sizeof(cells[0]), p ? p->converge_s : NAN, 1);
		if (p && !p->converged)
			strncat(cells[C_CREATE + i], " (NOT converged)",
			        sizeof(cells[0]) - strlen(cells[C_CREATE + i]) - 1);
	}
	num(cells[C_TOTAL], sizeof(cells[0]), total_s(run), 1);
	num(cells[C_RATE], sizeof(cells[0]), bench_shards_create_rate(run), 1);
	num(cells[C_API], sizeof(cells[0]), bench_shards_apiserver_cores(run, "create"), 2);
	num(cells[C_CPU], sizeof(cells[0]), run->cpu_s, 1);
	num(cells[C_MEM], sizeof(cells[0]), run->peak_mem_mb, 1);
	if (!isnan(run->peak_mem_mb))
		snprintf(cells[C_MEM] + strlen(cells[C_MEM]),
		         sizeof(cells[0]) - strlen(cells[C_MEM]), " %s", run->mem_kind);
	num(cells[C_KEYS], sizeof(cells[0]), keys_of(run), 0);
	num(cells[C_FAIL], sizeof(cells[0]), run->failover_s, 1);
}

enum { I_PASS, I_ID, I_RANGES, I_KEYS, I_CPU, I_CPUSH, I_PSS, I_PSSSH, I_N };
static const char *const icol_names[I_N] = {
        "pass",  "instance",     "ranges",      "keys",
        "CPU s", "CPU share ×N", "peak PSS MB", "PSS share ×N",
};

static void inst_cells(const struct bench_run *run, const struct bench_run *base, unsigned k,
                       bool md, char cells[I_N][48])
{
	const struct bench_inst *in = &run->inst[k];
	char id[16];
	pass_label(cells[I_PASS], sizeof(cells[0]), run, md);
	short_id(id, sizeof(id), in->identity);
	snprintf(cells[I_ID], sizeof(cells[0]), "%u %s", k, id);
	snprintf(cells[I_RANGES], sizeof(cells[0]), "%d%s", in->ranges,
	         in->range0 ? " (incl. 0)" : "");
	num(cells[I_KEYS], sizeof(cells[0]), in->keys, 0);
	num(cells[I_CPU], sizeof(cells[0]), in->cpu_s, 1);
	num(cells[I_CPUSH], sizeof(cells[0]),
	    bench_shards_share(in->cpu_s, base ? base->cpu_s : NAN, run->shards), 2);
	num(cells[I_PSS], sizeof(cells[0]), in->peak_mem_mb, 1);
	num(cells[I_PSSSH], sizeof(cells[0]),
	    bench_shards_share(in->peak_mem_mb, base ? base->peak_mem_mb : NAN, run->shards), 2);
}

void bench_shards_table(FILE *f, const struct bench_report *r)
{
	const struct bench_run *base = bench_shards_base(r);

	fprintf(f, "\n== %s, --shards: %d ranges, lease %g s (failover goal <= %g s) ==\n",
	        r->workload, r->shard_ranges, r->lease_duration_s, r->lease_duration_s + 1);
	fprintf(f, "%-13s", "pass");
	for (int c = 0; c < C_N; c++)
		fprintf(f, " %13.13s", col_names[c]);
	fprintf(f, " %6s\n", "load");
	for (unsigned i = 0; i < r->n_runs; i++) {
		const struct bench_run *run = &r->runs[i];
		char cells[C_N][32], lab[24], ld[16];
		if (!is_pass(run))
			continue;
		pass_cells(run, cells);
		pass_label(lab, sizeof(lab), run, false);
		num(ld, sizeof(ld), run->load_avg, 1);
		fprintf(f, "%-13s", lab);
		for (int c = 0; c < C_N; c++)
			fprintf(f, " %13s", cells[c]);
		fprintf(f, " %6s\n", ld);
		if (run->error[0])
			fprintf(f, "  %s: %s\n", lab, run->error);
	}
	fprintf(f, "\n%-8s %-12s %-12s %8s %9s %13s %12s %13s\n", "pass", "instance", "ranges",
	        "keys", "CPU s", "CPU share xN", "peak PSS MB", "PSS share xN");
	for (unsigned i = 0; i < r->n_runs; i++)
		for (unsigned k = 0; k < r->runs[i].n_inst; k++) {
			char c[I_N][48];
			inst_cells(&r->runs[i], base, k, false, c);
			fprintf(f, "%-8s %-12s %-12s %8s %9s %13s %12s %13s\n", c[I_PASS], c[I_ID],
			        c[I_RANGES], c[I_KEYS], c[I_CPU], c[I_CPUSH], c[I_PSS], c[I_PSSSH]);
		}
}

static void line(FILE *f, const char *prefix, const char *fig, double v, const char *unit)
{
	if (!isnan(v))
		fprintf(f, "bench: shards.%s_%s %.6g %s\n", prefix, fig, v, unit);
}

void bench_shards_lines(FILE *f, const struct bench_report *r)
{
	const struct bench_run *base = bench_shards_base(r);

	for (unsigned i = 0; i < r->n_runs; i++) {
		const struct bench_run *run = &r->runs[i];
		char pre[32], fig[48];
		if (!is_pass(run))
			continue;
		if (run->shards > 0)
			snprintf(pre, sizeof(pre), "n%d", run->shards);
		else
			snprintf(pre, sizeof(pre), "upstream");
		for (size_t p = 0; p < N_PHASES; p++) {
			const struct bench_phase *ph = bench_run_phase(run, phase_names[p]);
			if (!ph || !ph->converged)
				continue;
			snprintf(fig, sizeof(fig), "%s_s", phase_names[p]);
			line(f, pre, fig, ph->converge_s, "s");
			snprintf(fig, sizeof(fig), "%s_apiserver_cores", phase_names[p]);
			line(f, pre, fig, bench_shards_apiserver_cores(run, phase_names[p]),
			     "cores");
		}
		line(f, pre, "create_pods_per_s", bench_shards_create_rate(run), "pods/s");
		line(f, pre, "cpu_s", run->cpu_s, "s");
		line(f, pre, "peak_mem_mb", run->peak_mem_mb, "MB");
		line(f, pre, "keys", keys_of(run), "keys");
		line(f, pre, "failover_s", run->failover_s, "s");
		for (unsigned k = 0; k < run->n_inst; k++) {
			const struct bench_inst *in = &run->inst[k];
			char ip[48];
			snprintf(ip, sizeof(ip), "%s_i%u", pre, k);
			line(f, ip, "cpu_s", in->cpu_s, "s");
			line(f, ip, "pss_mb", in->peak_mem_mb, "MB");
			line(f, ip, "keys", in->keys, "keys");
			line(f, ip, "ranges", in->ranges, "ranges");
			line(f, ip, "cpu_share",
			     bench_shards_share(in->cpu_s, base ? base->cpu_s : NAN, run->shards),
			     "x");
			line(f, ip, "pss_share",
			     bench_shards_share(in->peak_mem_mb, base ? base->peak_mem_mb : NAN,
			                        run->shards),
			     "x");
		}
	}
}

void bench_shards_markdown(FILE *f, const struct bench_report *r)
{
	const struct bench_run *base = bench_shards_base(r);

	fprintf(f, "## kcmd bench — shards\n\n");
	fprintf(f, "Command: `%s`  \nDate: %s  \nMachine: %s  \nVersions: %s\n\n", r->command,
	        r->date, r->machine, r->versions);
	fprintf(f,
	        "Workload: `load`, `--target-pods=%ld` in %d ReplicaSets over %d namespaces, "
	        "ReplicaSet writes at %g/s, the same in every pass; pods made Ready by `kcmd "
	        "--simulate-kubelet`. Each kcmd pass runs N instances with `--shard-ranges=%d` "
	        "and a %g s lease; controllers: replicaset, garbage collector. Memory: kcmd = "
	        "PSS summed over each instance's manager and processes; upstream = RSS. "
	        "`share ×N` = the instance's figure ÷ the one-instance pass's × N (goal ≤ "
	        "1.2). Failover: after the phases, the instance holding range 0 killed -9 "
	        "(every process) until each range it held is held by a survivor (goal ≤ %g "
	        "s).\n\n",
	        r->target_pods, r->rs_count, r->namespaces, r->create_rate, r->shard_ranges,
	        r->lease_duration_s, r->lease_duration_s + 1);
	fprintf(f, "| pass |");
	for (int c = 0; c < C_N; c++)
		fprintf(f, " %s |", md_names[c]);
	fprintf(f, " load |\n|---|");
	for (int c = 0; c <= C_N; c++)
		fprintf(f, "---:|");
	fputc('\n', f);
	for (unsigned i = 0; i < r->n_runs; i++) {
		const struct bench_run *run = &r->runs[i];
		char cells[C_N][32], lab[24], ld[16];
		if (!is_pass(run))
			continue;
		pass_cells(run, cells);
		pass_label(lab, sizeof(lab), run, true);
		num(ld, sizeof(ld), run->load_avg, 1);
		fprintf(f, "| %s |", lab);
		for (int c = 0; c < C_N; c++)
			fprintf(f, " %s |", cells[c]);
		fprintf(f, " %s |\n", ld);
	}
	for (unsigned i = 0; i < r->n_runs; i++)
		if (is_pass(&r->runs[i]) && r->runs[i].error[0])
			fprintf(f, "\n%s: %s\n", r->runs[i].controller, r->runs[i].error);
	fprintf(f, "\n|");
	for (int c = 0; c < I_N; c++)
		fprintf(f, " %s |", icol_names[c]);
	fprintf(f, "\n|---|---|");
	for (int c = 2; c < I_N; c++)
		fprintf(f, "---:|");
	fputc('\n', f);
	for (unsigned i = 0; i < r->n_runs; i++)
		for (unsigned k = 0; k < r->runs[i].n_inst; k++) {
			char c[I_N][48];
			inst_cells(&r->runs[i], base, k, true, c);
			fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", c[I_PASS],
			        c[I_ID], c[I_RANGES], c[I_KEYS], c[I_CPU], c[I_CPUSH], c[I_PSS],
			        c[I_PSSSH]);
		}
}

static void add_num(cJSON *o, const char *k, double v)
{
	if (isnan(v))
		cJSON_AddNullToObject(o, k);
	else
		cJSON_AddNumberToObject(o, k, v);
}

char *bench_shards_json(const struct bench_report *r)
{
	const struct bench_run *base = bench_shards_base(r);
	cJSON *root = cJSON_CreateObject(), *passes;
	char *out = NULL;

	if (!root)
		return NULL;
	cJSON_AddStringToObject(root, "workload", r->workload);
	cJSON_AddStringToObject(root, "date", r->date);
	cJSON_AddStringToObject(root, "machine", r->machine);
	cJSON_AddStringToObject(root, "versions", r->versions);
	cJSON_AddStringToObject(root, "command", r->command);
	cJSON_AddNumberToObject(root, "target_pods", (double)r->target_pods);
	cJSON_AddNumberToObject(root, "replicasets", r->rs_count);
	cJSON_AddNumberToObject(root, "namespaces", r->namespaces);
	cJSON_AddNumberToObject(root, "shard_ranges", r->shard_ranges);
	cJSON_AddNumberToObject(root, "lease_duration_s", r->lease_duration_s);
	passes = cJSON_AddArrayToObject(root, "passes");
	for (unsigned i = 0; passes && i < r->n_runs; i++) {
		const struct bench_run *run = &r->runs[i];
		cJSON *p = cJSON_CreateObject(), *ph, *insts;
		if (!is_pass(run) || !p) {
			cJSON_Delete(p);
			continue;
		}
		cJSON_AddItemToArray(passes, p);
		cJSON_AddStringToObject(p, "controller", run->controller);
		cJSON_AddNumberToObject(p, "instances", run->shards > 0 ? run->shards : 1);
		cJSON_AddStringToObject(p, "mem_kind", run->mem_kind);
		add_num(p, "cpu_s", run->cpu_s);
		add_num(p, "peak_mem_mb", run->peak_mem_mb);
		add_num(p, "keys", keys_of(run));
		add_num(p, "create_pods_per_s", bench_shards_create_rate(run));
		add_num(p, "failover_s", run->failover_s);
		cJSON_AddNumberToObject(p, "failover_ranges", run->failover_ranges);
		add_num(p, "load_avg", run->load_avg);
		if (run->error[0])
			cJSON_AddStringToObject(p, "error", run->error);
		ph = cJSON_AddArrayToObject(p, "phases");
		for (unsigned k = 0; ph && k < run->n_phases; k++) {
			const struct bench_phase *x = &run->phases[k];
			cJSON *o = cJSON_CreateObject();
			if (!o)
				break;
			cJSON_AddItemToArray(ph, o);
			cJSON_AddStringToObject(o, "name", x->name);
			cJSON_AddBoolToObject(o, "converged", x->converged);
			add_num(o, "s", x->converge_s);
			cJSON_AddNumberToObject(o, "pods_created", (double)x->pods_created);
			cJSON_AddNumberToObject(o, "pods_deleted", (double)x->pods_deleted);
			add_num(o, "cpu_s", x->cpu_s);
			add_num(o, "peak_mem_mb", x->peak_mem_mb);
			add_num(o, "api_requests", prom_counts_total(&x->api));
			add_num(o, "apiserver_cpu_s", x->apiserver_cpu_s);
			add_num(o, "etcd_cpu_s", x->etcd_cpu_s);
		}
		insts = cJSON_AddArrayToObject(p, "instance");
		for (unsigned k = 0; insts && k < run->n_inst; k++) {
			const struct bench_inst *in = &run->inst[k];
			cJSON *o = cJSON_CreateObject();
			if (!o)
				break;
			cJSON_AddItemToArray(insts, o);
			cJSON_AddStringToObject(o, "identity", in->identity);
			cJSON_AddNumberToObject(o, "ranges", in->ranges);
			cJSON_AddBoolToObject(o, "range0", in->range0);
			add_num(o, "keys", in->keys);
			add_num(o, "cpu_s", in->cpu_s);
			add_num(o, "peak_pss_mb", in->peak_mem_mb);
			add_num(o, "cpu_share",
			        bench_shards_share(in->cpu_s, base ? base->cpu_s : NAN,
			                           run->shards));
			add_num(o, "pss_share",
			        bench_shards_share(in->peak_mem_mb, base ? base->peak_mem_mb : NAN,
			                           run->shards));
		}
	}
	out = cJSON_Print(root);
	cJSON_Delete(root);
	return out;
}
