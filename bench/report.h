/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench/report.h: the results of one `kcmd bench` invocation and their renderings
 * (terminal table, JSON, `bench:` lines, markdown for docs/benchmarks.md, gnuplot script).
 * Everything here is pure (FILE* or strings in, nothing else) so it is unit-tested.
 */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "bench/opts.h"
#include "bench/prom.h"

#define BENCH_MAX_PHASES 8
#define BENCH_MAX_RUNS   (BENCH_MAX_SHARD_PASSES + 1) /* --shards passes + upstream */

struct bench_phase {
	char name[24];
	bool converged;
	double start_s;    /* since the run started */
	double converge_s; /* duration of the phase (until converged or timed out) */
	long pods_created, pods_deleted;
	double cpu_s;       /* controller-manager CPU-seconds spent in the phase */
	double peak_mem_mb; /* PSS (kcmd, summed over its processes) or RSS (upstream) */
	double react_p50_ms, react_p99_ms; /* NAN: no sample */
	long react_n;
	struct prom_counts api; /* apiserver_request_total delta, "VERB CODE" */
	double lists;           /* LIST requests in the phase (apiserver) */
	double queue_depth_max; /* NAN: unknown (upstream serves no metrics here) */
	double resume_s; /* failover/restart: kill -> first pod created after it; NAN otherwise */
	/* the control plane's cost in the phase (NAN: not measured): CPU-seconds of kube-apiserver
	 * and etcd, MB the apiserver wrote (its answers and watch events to every client, and to
	 * etcd) */
	double apiserver_cpu_s, etcd_cpu_s, apiserver_sent_mb;
};

/* A workload's own figure of a run (nodefailure: time to taint, rate, ...), rendered in the
 * table, the lines (<area>[.upstream].<workload>_<key>), JSON ("figures") and markdown. */
#define BENCH_MAX_EXTRA 32
struct bench_extra {
	char key[40];   /* line and JSON name, e.g. "taint_p50_s" */
	char label[48]; /* table label */
	char unit[12];
	double v; /* NAN: not measured */
};

/* One kcmd instance of a --shards pass (issue 23), measured on its own over the pass's phases. */
struct bench_inst {
	char identity[128]; /* its leader-election identity (the range Leases' holder) */
	double cpu_s;       /* CPU-seconds of the manager and all its processes */
	double peak_mem_mb; /* peak PSS summed over them */
	double keys;        /* workqueue_adds_total over all its queues during the phases */
	int ranges;         /* range Leases it held at the end of the phases */
	bool range0;        /* one of them is range 0 (the unsharded controllers, the GC) */
};

struct bench_run {
	char controller[16]; /* "kcmd" or "upstream" */
	char limits[16];     /* "limited" or "unlimited" */
	double qps;
	int burst;
	char mem_kind[8]; /* "PSS" or "RSS" */
	struct bench_phase phases[BENCH_MAX_PHASES];
	unsigned n_phases;
	double cpu_s, peak_mem_mb; /* whole run */
	char series[512];          /* time series file (t pods ready mem_mb cpu_s) */
	char error[256];           /* "" when the run completed */
	struct bench_extra extra[BENCH_MAX_EXTRA];
	unsigned n_extra;
	/* --shards: the pass's instance count (0: not a shard pass), each instance, and the
	 * failover after the phases (N >= 2): the instance holding range 0 killed -9 (every
	 * process), failover_s = until every range it held is held by a survivor (NAN: not
	 * measured or never) */
	int shards;
	struct bench_inst inst[BENCH_MAX_INST];
	unsigned n_inst;
	double failover_s;
	int failover_ranges;
	double load_avg; /* 1-minute load average when the pass's phases ended (NAN: unknown) */
};

/* Appends a figure to run->extra (dropped when the table is full). */
void bench_run_extra(struct bench_run *run, const char *key, const char *label, const char *unit,
                     double v);

struct bench_report {
	char workload[16];
	char date[40];
	char machine[160];
	char versions[256];
	char command[1024];
	char desc[2048]; /* the markdown's workload sentence ("": the ReplicaSet workloads') */
	long target_pods;
	int rs_count, namespaces;
	double create_rate;
	long raw_pods;
	int raw_concurrency;
	double raw_create_per_s, raw_delete_per_s; /* NAN: not measured */
	struct bench_run runs[BENCH_MAX_RUNS];
	unsigned n_runs;
	char plot_script[512], plot_pods[512], plot_memory[512]; /* plot paths without extension */
	int shard_ranges;        /* --shards: kcmd's --shard-ranges */
	double lease_duration_s; /* and its lease duration */
};

void bench_report_free(struct bench_report *r); /* frees the api counts */
const struct bench_run *bench_report_find(const struct bench_report *r, const char *controller,
                                          const char *limits);
const struct bench_phase *bench_run_phase(const struct bench_run *run, const char *name);

/* The comparison table (kcmd | upstream | kcmd/upstream) for each pass. */
void bench_report_table(FILE *f, const struct bench_report *r);
/* `bench: <name> <value> <unit>` lines (rs.*, rs.upstream.*, gc.*, gc.upstream.*, ...). */
void bench_report_lines(FILE *f, const struct bench_report *r);
/* JSON text (malloc'd) or NULL on allocation failure. */
char *bench_report_json(const struct bench_report *r);
/* The docs/benchmarks.md section, from its "## kcmd bench" heading on. */
void bench_report_markdown(FILE *f, const struct bench_report *r);
/* gnuplot script writing <plot_pods>.png/.svg and <plot_memory>.png/.svg from the runs' series. */
void bench_report_gnuplot(FILE *f, const struct bench_report *r);

#define BENCH_DOC_BEGIN "<!-- kcmd-bench:begin (written by kcmd bench --update-doc) -->"
#define BENCH_DOC_END   "<!-- kcmd-bench:end -->"
/* Replaces the text between the markers of doc (markers kept) with section, or appends markers
 * and section when doc has none. *out is malloc'd. 0, -ENOMEM, or -EBADMSG (a begin marker
 * without its end). */
int bench_doc_splice(const char *doc, const char *section, char **out);
/* The same between the markers of one workload, "<!-- kcmd-bench:begin TAG (written ...) -->"
 * and "<!-- kcmd-bench:end TAG -->" (tag NULL: the markers above), so several workloads'
 * sections live in one file. */
int bench_doc_splice_tag(const char *doc, const char *section, const char *tag, char **out);
