/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manager/top.c: `kcmctl top`, a live terminal view of one kcmd, like top(1).
 *
 *   kcmctl [--pid PID] top [--once] [-o json] [--interval SECONDS]
 *
 * Design note.
 *   Everything comes from what `kcmctl status` already reads, read-only, without talking to
 *   kcmd: the manager's status page (leader, term, the process table), every work queue's
 *   metrics page, the shared rest_client_* table (kube/restmetrics.h), the arena's per-type
 *   counts; plus /proc/<pid>/stat (CPU) and /proc/<pid>/smaps_rollup (PSS) of every process.
 *   Rates (adds/s, syncs/s, errors/s, requests/s, CPU %) are differences between two samples
 *   taken --interval apart (default 2 s; --once takes its two samples 1 s apart unless
 *   --interval is given, so a script gets rates too). A "sync" is one key processed to the end (the
 * queue's work-duration observation count, as client-go's workqueue_work_duration_seconds_count),
 * an "error" one AddRateLimited (a sync that failed and is retried: workqueue_retries_total). The
 * live view redraws the whole screen each interval (ANSI home + clear) and ends on q or Ctrl-C; the
 * terminal is left in the mode it was found in. Rejected: curses (a dependency for one screen that
 * is redrawn whole anyway) and reading /metrics over HTTPS (needs credentials and a running loop;
 * shared memory needs neither). Fixed-size tables: at most TOP_MAX_QUEUES queues and TOP_MAX_VERBS
 * verb/code rows are shown; further ones are counted in "not shown" (kcmd has fewer today).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "ipc/queue.h"
#include "kube/restmetrics.h"
#include "manager/kcmctl.h"
#include "manager/status.h"
#include "shm/arena.h"

#define TOP_MAX_QUEUES 64
#define TOP_MAX_VERBS  128

struct top_proc {
	char name[64], group[32];
	int pid, state;
	uint64_t restarts;
	bool crash_looping;
	double cpu_s;    /* utime + stime, seconds; < 0 unknown */
	int64_t pss;     /* bytes; < 0 unknown */
	int64_t started; /* unix usec */
};

struct top_verb {
	char method[16];
	int code;
	uint64_t count;
};

struct top_sample {
	double at; /* CLOCK_MONOTONIC seconds */
	struct mgr_status st;
	bool have_status;
	struct top_proc procs[MGR_STATUS_MAX_CHILDREN + 1];
	unsigned n_procs;
	struct ipc_queue_metrics queues[TOP_MAX_QUEUES];
	unsigned n_queues, queues_not_shown;
	struct top_verb verbs[TOP_MAX_VERBS];
	unsigned n_verbs, verbs_not_shown;
	uint64_t rest_dropped;
	bool have_rest;
};

static double mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int64_t unix_usec_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* utime + stime of pid in seconds, or -1. */
static double proc_cpu(int pid)
{
	char path[64], buf[1024];
	FILE *f;
	unsigned long long ut, stt;
	const char *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (!(f = fopen(path, "re")))
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* the name may hold spaces and ')': fields start after the last ')' */
	if (!(p = strrchr(buf, ')')))
		return -1;
	/* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &stt) != 2)
		return -1;
	return (double)(ut + stt) / (double)sysconf(_SC_CLK_TCK);
}

/* Proportional set size of pid in bytes (smaps_rollup), or -1. */
static int64_t proc_pss(int pid)
{
	char path[64], line[256];
	FILE *f;
	int64_t kb = -1;

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", pid);
	if (!(f = fopen(path, "re")))
		return -1;
	while (fgets(line, sizeof(line), f)) {
		long long v;
		if (sscanf(line, "Pss: %lld kB", &v) == 1) {
			kb = v;
			break;
		}
	}
	fclose(f);
	return kb < 0 ? -1 : kb * 1024;
}

static int status_cb(const char *path, const char *name, void *ud)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;

	(void)name;
	if (fd < 0)
		return -errno;
	r = mgr_status_read(fd, ud);
	close(fd);
	return r;
}

static int queue_cb(const char *path, const char *name, void *ud)
{
	struct top_sample *s = ud;
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;

	(void)name;
	if (fd < 0)
		return 0;
	if (s->n_queues == TOP_MAX_QUEUES) {
		s->queues_not_shown++;
		close(fd);
		return 0;
	}
	r = ipc_queue_metrics_read(fd, &s->queues[s->n_queues]);
	close(fd);
	if (r == 0)
		s->n_queues++;
	return 0;
}

static void rest_row(const struct kube_rest_metrics_row *row, void *ud)
{
	struct top_sample *s = ud;

	/* summed over hosts: one row per method and code */
	for (unsigned i = 0; i < s->n_verbs; i++)
		if (s->verbs[i].code == row->code && strcmp(s->verbs[i].method, row->method) == 0) {
			s->verbs[i].count += row->count;
			return;
		}
	if (s->n_verbs == TOP_MAX_VERBS) {
		s->verbs_not_shown++;
		return;
	}
	struct top_verb *v = &s->verbs[s->n_verbs++];
	snprintf(v->method, sizeof(v->method), "%s", row->method);
	v->code = row->code;
	v->count = row->count;
}

static int rest_cb(const char *path, const char *name, void *ud)
{
	struct top_sample *s = ud;
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;

	(void)name;
	if (fd < 0)
		return 0;
	r = kube_rest_metrics_read(fd, rest_row, s, &s->rest_dropped);
	close(fd);
	if (r == 0)
		s->have_rest = true;
	return 0;
}

static int verb_cmp(const void *a, const void *b)
{
	const struct top_verb *x = a, *y = b;
	int c = strcmp(x->method, y->method);
	return c ? c : (x->code > y->code) - (x->code < y->code);
}

static void sample(pid_t pid, struct top_sample *s)
{
	memset(s, 0, sizeof(*s));
	s->at = mono_now();
	s->have_status = kcmctl_each_memfd(pid, "kcmd-status", status_cb, &s->st) > 0;
	/* the manager first, then its children in the status page's order */
	struct top_proc *m = &s->procs[s->n_procs++];
	snprintf(m->name, sizeof(m->name), "kcmd (manager)");
	snprintf(m->group, sizeof(m->group), "-");
	m->pid = (int)pid;
	m->state = 1;
	m->started = s->have_status ? s->st.manager_started_unix_usec : 0;
	for (uint32_t i = 0; s->have_status && i < s->st.n_children; i++) {
		const struct mgr_status_child *c = &s->st.children[i];
		struct top_proc *p = &s->procs[s->n_procs++];
		snprintf(p->name, sizeof(p->name), "%s", c->name);
		snprintf(p->group, sizeof(p->group), "%s", c->group);
		p->pid = c->state == 1 ? c->pid : 0;
		p->state = c->state;
		p->restarts = c->restarts;
		p->crash_looping = c->crash_looping;
		p->started = c->state == 1 ? c->started_unix_usec : 0;
	}
	for (unsigned i = 0; i < s->n_procs; i++) {
		struct top_proc *p = &s->procs[i];
		p->cpu_s = p->pid > 0 ? proc_cpu(p->pid) : -1;
		p->pss = p->pid > 0 ? proc_pss(p->pid) : -1;
	}
	kcmctl_each_memfd(pid, "kcmd-queue-", queue_cb, s);
	kcmctl_each_memfd(pid, "kcmd-rest-metrics", rest_cb, s);
	qsort(s->verbs, s->n_verbs, sizeof(s->verbs[0]), verb_cmp);
}

/* per-second rate of a counter between two samples; a counter that went down (a queue owner
 * restarted with fresh counters) counts from 0 */
static double rate(uint64_t now, uint64_t before, double dt)
{
	if (dt <= 0)
		return 0;
	return (double)(now >= before ? now - before : now) / dt;
}

static const struct ipc_queue_metrics *find_queue(const struct top_sample *s, const char *name)
{
	for (unsigned i = 0; i < s->n_queues; i++)
		if (strcmp(s->queues[i].name, name) == 0)
			return &s->queues[i];
	return NULL;
}

static const struct top_proc *find_proc(const struct top_sample *s, const struct top_proc *p)
{
	for (unsigned i = 0; i < s->n_procs; i++)
		if (s->procs[i].pid == p->pid && strcmp(s->procs[i].name, p->name) == 0)
			return &s->procs[i];
	return NULL;
}

static uint64_t verb_before(const struct top_sample *s, const struct top_verb *v)
{
	for (unsigned i = 0; i < s->n_verbs; i++)
		if (s->verbs[i].code == v->code && strcmp(s->verbs[i].method, v->method) == 0)
			return s->verbs[i].count;
	return 0;
}

static double cpu_pct(const struct top_sample *a, const struct top_sample *b,
                      const struct top_proc *p)
{
	const struct top_proc *q = find_proc(a, p);
	double dt = b->at - a->at;

	if (!q || q->cpu_s < 0 || p->cpu_s < 0 || dt <= 0)
		return -1;
	return 100.0 * (p->cpu_s - q->cpu_s) / dt;
}

static const char *state_name(int st)
{
	static const char *const states[] = {"stopped", "running", "backoff"};
	return st >= 0 && st <= 2 ? states[st] : "?";
}

static const char *role(const struct mgr_status *st)
{
	return st->stopping ? "stopping" : st->leading ? "leading" : "standby";
}

/* ---- text -------------------------------------------------------------------------------- */

static void fmt_bytes(char *buf, size_t n, int64_t b)
{
	if (b < 0)
		snprintf(buf, n, "-");
	else if (b < 10 * 1024 * 1024)
		snprintf(buf, n, "%.0fK", (double)b / 1024);
	else
		snprintf(buf, n, "%.1fM", (double)b / (1024 * 1024));
}

static void print_text(pid_t pid, const struct top_sample *a, const struct top_sample *b)
{
	double dt = b->at - a->at;
	int64_t now = unix_usec_now();
	char age[32], pss[32], cpu[32];
	const struct mgr_status *st = &b->st;

	if (!b->have_status) {
		printf("kcmd pid %d: no status page (an older kcmd?)\n", (int)pid);
		return;
	}
	kcmctl_fmt_age(age, sizeof(age), now - st->manager_started_unix_usec);
	printf("kcmd pid %d, up %s, %s, %s — every %.1fs\n", (int)st->manager_pid, age, role(st),
	       st->ready ? "ready" : "not ready (caches syncing)", dt);
	if (st->leader_elect)
		printf("leader: %s  term %lld  (Lease %s)\n",
		       st->holder[0] ? kcmctl_safe(st->holder) : "<none observed>",
		       (long long)st->lease_transitions, kcmctl_safe(st->lease));
	else
		printf("leader: election off (--leader-elect=false)\n");

	printf("\n%-42s %-9s %8s %7s %9s %8s %8s\n", "PROCESS", "STATE", "PID", "CPU%", "PSS",
	       "RESTARTS", "UPTIME");
	int64_t pss_total = 0;
	for (unsigned i = 0; i < b->n_procs; i++) {
		const struct top_proc *p = &b->procs[i];
		double c = cpu_pct(a, b, p);
		char pidbuf[16];
		fmt_bytes(pss, sizeof(pss), p->pss);
		if (p->pss > 0)
			pss_total += p->pss;
		snprintf(cpu, sizeof(cpu), c < 0 ? "-" : "%.1f", c);
		snprintf(pidbuf, sizeof(pidbuf), p->pid > 0 ? "%d" : "-", p->pid);
		kcmctl_fmt_age(age, sizeof(age), p->started ? now - p->started : 0);
		printf("%-42s %-9s %8s %7s %9s %8llu %8s%s\n", p->name, state_name(p->state),
		       pidbuf, cpu, pss, (unsigned long long)p->restarts, age,
		       p->crash_looping ? " CRASH-LOOPING" : "");
	}
	fmt_bytes(pss, sizeof(pss), pss_total);
	printf("%-42s %-9s %8s %7s %9s\n", "total", "", "", "", pss);

	printf("\n%-24s %7s %9s %8s %8s %8s %7s %7s %9s\n", "QUEUE", "DEPTH", "ADDS", "ADDS/s",
	       "SYNCS/s", "ERRS/s", "RETRIES", "PARKED", "LONGEST");
	for (unsigned i = 0; i < b->n_queues; i++) {
		const struct ipc_queue_metrics *q = &b->queues[i], *o = find_queue(a, q->name);
		printf("%-24s %7llu %9llu %8.1f %8.1f %8.1f %7llu %7llu %8.2fs\n", q->name,
		       (unsigned long long)q->depth, (unsigned long long)q->adds_total,
		       o ? rate(q->adds_total, o->adds_total, dt) : 0.0,
		       o ? rate(q->work_duration_count, o->work_duration_count, dt) : 0.0,
		       o ? rate(q->retries_total, o->retries_total, dt) : 0.0,
		       (unsigned long long)q->retries_total, (unsigned long long)q->parked,
		       q->longest_running_processor_seconds);
	}
	if (!b->n_queues)
		printf("(no queues: no controller enabled)\n");
	if (b->queues_not_shown)
		printf("(%u more queues not shown)\n", b->queues_not_shown);

	printf("\nAPI REQUESTS (all processes)\n%-8s %-8s %12s %9s\n", "VERB", "CODE", "TOTAL",
	       "PER-SEC");
	for (unsigned i = 0; i < b->n_verbs; i++) {
		const struct top_verb *v = &b->verbs[i];
		char code[16];
		snprintf(code, sizeof(code), v->code ? "%d" : "<error>", v->code);
		printf("%-8s %-8s %12llu %9.1f\n", v->method, code, (unsigned long long)v->count,
		       rate(v->count, verb_before(a, v), dt));
	}
	if (b->rest_dropped)
		printf("(%llu requests in no row: the table is full)\n",
		       (unsigned long long)b->rest_dropped);

	printf("\nCACHE\n");
	struct shm_arena *ar = NULL;
	struct shm_stats sst;
	if (kcmctl_each_memfd(pid, "kcmd-arena", kcmctl_open_arena_cb, &ar) > 0 && ar &&
	    shm_reader_stats(ar, &sst) == 0) {
		fmt_bytes(pss, sizeof(pss), (int64_t)sst.live_bytes);
		printf("%llu objects, %s live\n", (unsigned long long)sst.objects, pss);
		unsigned col = 0;
		for (uint64_t t = 0; t < sst.n_types; t++) {
			struct shm_type_info ti;
			char tname[200];
			if (shm_reader_type_info(ar, (uint16_t)t, &ti) < 0 || ti.count == 0)
				continue;
			snprintf(tname, sizeof(tname), "%s%s%s%s", ti.resource,
			         ti.group[0] ? "." : "", ti.group, ti.synced ? "" : "*");
			printf("  %-36s %8llu%s", kcmctl_safe(tname), (unsigned long long)ti.count,
			       ++col % 2 ? "" : "\n");
		}
		if (col % 2)
			printf("\n");
		printf("(resources with 0 objects not shown; * = not synced yet)\n");
	} else {
		printf("(no arena: no controller enabled)\n");
	}
	if (ar)
		shm_arena_close(ar);
}

/* ---- JSON -------------------------------------------------------------------------------- */

static cJSON *json_doc(pid_t pid, const struct top_sample *a, const struct top_sample *b)
{
	double dt = b->at - a->at;
	int64_t now = unix_usec_now();
	cJSON *doc = cJSON_CreateObject(), *arr;
	const struct mgr_status *st = &b->st;

	cJSON_AddNumberToObject(doc, "intervalSeconds", dt);
	cJSON *m = cJSON_AddObjectToObject(doc, "manager");
	cJSON_AddNumberToObject(m, "pid", b->have_status ? st->manager_pid : (int)pid);
	if (b->have_status) {
		cJSON_AddNumberToObject(m, "uptimeSeconds",
		                        (double)(now - st->manager_started_unix_usec) / 1e6);
		cJSON_AddStringToObject(m, "role", role(st));
		cJSON_AddBoolToObject(m, "leading", st->leading);
		cJSON_AddBoolToObject(m, "ready", st->ready);
		cJSON_AddStringToObject(m, "identity", kcmctl_safe(st->identity));
		cJSON_AddBoolToObject(m, "leaderElection", st->leader_elect);
		cJSON_AddStringToObject(m, "lease", kcmctl_safe(st->lease));
		cJSON_AddStringToObject(m, "leader", kcmctl_safe(st->holder));
		cJSON_AddNumberToObject(m, "term", (double)st->lease_transitions);
	}

	arr = cJSON_AddArrayToObject(doc, "processes");
	for (unsigned i = 0; i < b->n_procs; i++) {
		const struct top_proc *p = &b->procs[i];
		cJSON *o = cJSON_CreateObject();
		double c = cpu_pct(a, b, p);
		cJSON_AddStringToObject(o, "name", p->name);
		cJSON_AddStringToObject(o, "group", p->group);
		cJSON_AddStringToObject(o, "state", state_name(p->state));
		cJSON_AddNumberToObject(o, "pid", p->pid);
		cJSON_AddNumberToObject(o, "restarts", (double)p->restarts);
		cJSON_AddBoolToObject(o, "crashLooping", p->crash_looping);
		if (c >= 0)
			cJSON_AddNumberToObject(o, "cpuPercent", c);
		if (p->cpu_s >= 0)
			cJSON_AddNumberToObject(o, "cpuSeconds", p->cpu_s);
		if (p->pss >= 0)
			cJSON_AddNumberToObject(o, "pssBytes", (double)p->pss);
		cJSON_AddItemToArray(arr, o);
	}

	arr = cJSON_AddArrayToObject(doc, "queues");
	for (unsigned i = 0; i < b->n_queues; i++) {
		const struct ipc_queue_metrics *q = &b->queues[i], *o = find_queue(a, q->name);
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "name", q->name);
		cJSON_AddNumberToObject(j, "depth", (double)q->depth);
		cJSON_AddNumberToObject(j, "adds", (double)q->adds_total);
		cJSON_AddNumberToObject(j, "addsPerSecond",
		                        o ? rate(q->adds_total, o->adds_total, dt) : 0);
		cJSON_AddNumberToObject(j, "syncs", (double)q->work_duration_count);
		cJSON_AddNumberToObject(j, "syncsPerSecond",
		                        o ? rate(q->work_duration_count, o->work_duration_count, dt)
		                          : 0);
		cJSON_AddNumberToObject(j, "retries", (double)q->retries_total);
		cJSON_AddNumberToObject(j, "errorsPerSecond",
		                        o ? rate(q->retries_total, o->retries_total, dt) : 0);
		cJSON_AddNumberToObject(j, "parked", (double)q->parked);
		cJSON_AddNumberToObject(j, "workerDeaths", (double)q->worker_deaths_total);
		cJSON_AddNumberToObject(j, "longestRunningSeconds",
		                        q->longest_running_processor_seconds);
		cJSON_AddNumberToObject(j, "unfinishedWorkSeconds", q->unfinished_work_seconds);
		cJSON_AddItemToArray(arr, j);
	}

	arr = cJSON_AddArrayToObject(doc, "apiRequests");
	for (unsigned i = 0; i < b->n_verbs; i++) {
		const struct top_verb *v = &b->verbs[i];
		cJSON *j = cJSON_CreateObject();
		char code[16];
		snprintf(code, sizeof(code), v->code ? "%d" : "<error>", v->code);
		cJSON_AddStringToObject(j, "verb", v->method);
		cJSON_AddStringToObject(j, "code", code);
		cJSON_AddNumberToObject(j, "total", (double)v->count);
		cJSON_AddNumberToObject(j, "perSecond", rate(v->count, verb_before(a, v), dt));
		cJSON_AddItemToArray(arr, j);
	}
	cJSON_AddNumberToObject(doc, "apiRequestsDropped", (double)b->rest_dropped);

	struct shm_arena *ar = NULL;
	struct shm_stats sst;
	if (kcmctl_each_memfd(pid, "kcmd-arena", kcmctl_open_arena_cb, &ar) > 0 && ar &&
	    shm_reader_stats(ar, &sst) == 0) {
		cJSON *c = cJSON_AddObjectToObject(doc, "cache");
		cJSON_AddNumberToObject(c, "objects", (double)sst.objects);
		cJSON_AddNumberToObject(c, "liveBytes", (double)sst.live_bytes);
		arr = cJSON_AddArrayToObject(c, "resources");
		for (uint64_t t = 0; t < sst.n_types; t++) {
			struct shm_type_info ti;
			if (shm_reader_type_info(ar, (uint16_t)t, &ti) < 0)
				continue;
			cJSON *j = cJSON_CreateObject();
			cJSON_AddStringToObject(j, "resource", kcmctl_safe(ti.resource));
			cJSON_AddStringToObject(j, "group", kcmctl_safe(ti.group));
			cJSON_AddNumberToObject(j, "count", (double)ti.count);
			cJSON_AddBoolToObject(j, "synced", ti.synced);
			cJSON_AddItemToArray(arr, j);
		}
	}
	if (ar)
		shm_arena_close(ar);
	return doc;
}

/* ---- the loop ---------------------------------------------------------------------------- */

static volatile sig_atomic_t top_stop; /* set by the signal handler only */

static void on_signal(int sig)
{
	(void)sig;
	top_stop = 1;
}

static int top_usage(void)
{
	fprintf(stderr, "usage: kcmctl [--pid PID] top [--once] [-o json] [--interval SECONDS]\n");
	return 2;
}

int kcmctl_top(pid_t pid, int argc, char **argv)
{
	static struct top_sample s[2];
	bool once = false, json = false, interval_set = false;
	double interval = 2;

	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--once") == 0)
			once = true;
		else if ((strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) &&
		         i + 1 < argc) {
			const char *o = argv[++i];
			if (strcmp(o, "json") == 0)
				json = true;
			else if (strcmp(o, "text") != 0)
				return top_usage();
		} else if (strcmp(argv[i], "-o=json") == 0 || strcmp(argv[i], "-ojson") == 0 ||
		           strcmp(argv[i], "--output=json") == 0) {
			json = true;
		} else if ((strcmp(argv[i], "--interval") == 0 || strcmp(argv[i], "-d") == 0) &&
		           i + 1 < argc) {
			char *end;
			interval = strtod(argv[++i], &end);
			interval_set = true;
			if (*end || interval < 0.1 || interval > 3600)
				return top_usage();
		} else {
			return top_usage();
		}
	}

	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	bool live = !once && isatty(STDOUT_FILENO);
	struct termios saved;
	bool raw = live && isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0;
	if (raw) {
		struct termios t = saved;
		t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		t.c_cc[VMIN] = 0;
		t.c_cc[VTIME] = 0;
		tcsetattr(STDIN_FILENO, TCSANOW, &t);
	}

	unsigned cur = 0;
	sample(pid, &s[cur]);
	if (!s[cur].have_status && kill(pid, 0) < 0) {
		fprintf(stderr, "kcmctl: kcmd (pid %d) is gone\n", (int)pid);
		return 1;
	}
	double wait = once && !interval_set ? 1 : interval;
	int rc = 0;
	while (!top_stop) {
		/* wait for the interval or a key (q quits) */
		double until = mono_now() + wait;
		while (!top_stop) {
			double left = until - mono_now();
			if (left <= 0)
				break;
			struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};
			int n = poll(&pfd, raw ? 1 : 0, (int)(left * 1000) + 1);
			char ch;
			if (n > 0 && read(STDIN_FILENO, &ch, 1) == 1 && (ch == 'q' || ch == 'Q'))
				top_stop = 1;
		}
		if (top_stop && !once)
			break;
		sample(pid, &s[cur ^ 1]);
		const struct top_sample *a = &s[cur], *b = &s[cur ^ 1];
		cur ^= 1;
		if (!b->have_status && kill(pid, 0) < 0) {
			fprintf(stderr, "kcmctl: kcmd (pid %d) is gone\n", (int)pid);
			rc = 1;
			break;
		}
		if (live)
			fputs("\033[H\033[2J", stdout);
		if (json) {
			cJSON *doc = json_doc(pid, a, b);
			char *txt = once ? cJSON_Print(doc) : cJSON_PrintUnformatted(doc);
			if (txt)
				puts(txt);
			cJSON_free(txt);
			cJSON_Delete(doc);
		} else {
			print_text(pid, a, b);
			if (live)
				printf("\n(q or Ctrl-C quits)\n");
		}
		fflush(stdout);
		if (once)
			break;
		wait = interval;
	}
	if (raw)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	return rc;
}
