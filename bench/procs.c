/* SPDX-License-Identifier: Apache-2.0 */
/* bench/procs.c: process-tree CPU and memory from /proc (see procs.h). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/procs.h"

int bench_pstat_parse(const char *text, double ticks_per_s, struct bench_pstat *st)
{
	const char *open = strchr(text, '('), *close = strrchr(text, ')');
	unsigned long utime, stime;
	long cutime, cstime;
	int pid, ppid;
	char state;

	if (!open || !close || close < open || sscanf(text, "%d", &pid) != 1)
		return -EBADMSG;
	/* after ")": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime
	 * stime cutime cstime */
	if (sscanf(close + 1, " %c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu %ld %ld", &state,
	           &ppid, &utime, &stime, &cutime, &cstime) != 6)
		return -EBADMSG;
	st->pid = pid;
	st->ppid = ppid;
	st->state = state;
	size_t n = (size_t)(close - open - 1);
	if (n >= sizeof(st->comm))
		n = sizeof(st->comm) - 1;
	memcpy(st->comm, open + 1, n);
	st->comm[n] = 0;
	st->cpu_s = (double)(utime + stime) / ticks_per_s;
	st->child_cpu_s = (double)(cutime + cstime) / ticks_per_s;
	return 0;
}

static int read_small(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	size_t k = fread(buf, 1, n - 1, f);
	fclose(f);
	buf[k] = 0;
	return (int)k;
}

int bench_pstat_read(pid_t pid, struct bench_pstat *st)
{
	char path[64], buf[1024];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int r = read_small(path, buf, sizeof(buf));
	if (r < 0)
		return r == -ENOENT ? -ESRCH : r;
	return bench_pstat_parse(buf, (double)sysconf(_SC_CLK_TCK), st);
}

int bench_smaps_parse(const char *text, long *pss_kb, long *rss_kb)
{
	bool got_pss = false, got_rss = false;

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		long v;
		if (sscanf(p, "Pss: %ld kB", &v) == 1) {
			*pss_kb = v;
			got_pss = true;
		} else if (sscanf(p, "Rss: %ld kB", &v) == 1) {
			*rss_kb = v;
			got_rss = true;
		}
	}
	return got_pss && got_rss ? 0 : -EBADMSG;
}

/* All pids with their parents, one pass over /proc. */
struct plist {
	struct bench_pstat *v;
	size_t n, cap;
};

static int scan(struct plist *l)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		struct bench_pstat st;
		if (bench_pstat_read(atoi(de->d_name), &st) < 0)
			continue;
		if (l->n == l->cap) {
			size_t cap = l->cap ? l->cap * 2 : 512;
			struct bench_pstat *v = realloc(l->v, cap * sizeof(*v));
			if (!v) {
				closedir(d);
				return -ENOMEM;
			}
			l->v = v;
			l->cap = cap;
		}
		l->v[l->n++] = st;
	}
	closedir(d);
	return 0;
}

static bool in_tree(const struct plist *l, pid_t root, pid_t pid)
{
	for (int depth = 0; depth < 16 && pid > 1; depth++) {
		if (pid == root)
			return true;
		pid_t pp = 0;
		for (size_t i = 0; i < l->n; i++)
			if (l->v[i].pid == pid) {
				pp = l->v[i].ppid;
				break;
			}
		pid = pp;
	}
	return pid == root;
}

/* Calls fn for each live (not zombie) process of root's tree, root included; 0 when root was
 * seen, -ESRCH when not (fn may have run for none), or scan's -errno. */
static int tree_each(pid_t root, void (*fn)(const struct bench_pstat *st, void *ud), void *ud)
{
	struct plist l = {0};
	bool root_seen = false;
	int r = scan(&l);

	for (size_t i = 0; r == 0 && i < l.n; i++) {
		const struct bench_pstat *st = &l.v[i];
		if (st->state == 'Z' || !in_tree(&l, root, st->pid))
			continue;
		root_seen |= st->pid == root;
		fn(st, ud);
	}
	free(l.v);
	return r < 0 ? r : root_seen ? 0 : -ESRCH;
}

static void sample_one(const struct bench_pstat *st, void *ud)
{
	struct bench_tree *t = ud;
	char path[64], buf[2048];
	long pss = 0, rss = 0;

	t->cpu_s += st->cpu_s + st->child_cpu_s;
	t->nprocs++;
	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)st->pid);
	if (read_small(path, buf, sizeof(buf)) > 0 && bench_smaps_parse(buf, &pss, &rss) == 0) {
		t->pss_mb += (double)pss / 1024.0;
		t->rss_mb += (double)rss / 1024.0;
	}
}

int bench_tree_sample(pid_t root, struct bench_tree *t)
{
	*t = (struct bench_tree){0};
	return tree_each(root, sample_one, t);
}

int bench_pio_parse(const char *text, unsigned long long *rchar, unsigned long long *wchar)
{
	bool got_r = false, got_w = false;

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		unsigned long long v;
		if (sscanf(p, "rchar: %llu", &v) == 1) {
			*rchar = v;
			got_r = true;
		} else if (sscanf(p, "wchar: %llu", &v) == 1) {
			*wchar = v;
			got_w = true;
		}
	}
	return got_r && got_w ? 0 : -EBADMSG;
}

int bench_proc_cost(pid_t pid, double *cpu_s, double *wchar_mb)
{
	struct bench_pstat st;
	char path[64], buf[1024];
	unsigned long long rc = 0, wc = 0;

	if (pid <= 0 || bench_pstat_read(pid, &st) < 0 || st.state == 'Z')
		return -ESRCH;
	*cpu_s = st.cpu_s + st.child_cpu_s;
	snprintf(path, sizeof(path), "/proc/%d/io", (int)pid);
	*wchar_mb = read_small(path, buf, sizeof(buf)) > 0 && bench_pio_parse(buf, &rc, &wc) == 0
	                    ? (double)wc / 1e6
	                    : NAN;
	return 0;
}

struct pid_list {
	pid_t root, *pids;
	int n, max;
};

static void add_pid(const struct bench_pstat *st, void *ud)
{
	struct pid_list *p = ud;
	if (st->pid != p->root && p->n < p->max - 1)
		p->pids[p->n++] = st->pid;
}

int bench_tree_pids(pid_t root, pid_t *pids, int max)
{
	struct pid_list p = {.root = root, .pids = pids, .max = max};
	int r = tree_each(root, add_pid, &p);

	if (r < 0)
		return r;
	if (max > 0)
		pids[p.n++] = root;
	return p.n;
}

pid_t bench_find_child(pid_t parent, const char *comm)
{
	struct plist l = {0};
	pid_t found = 0;

	if (scan(&l) == 0)
		for (size_t i = 0; i < l.n; i++)
			if (l.v[i].ppid == parent && l.v[i].state != 'Z' &&
			    !strcmp(l.v[i].comm, comm)) {
				found = l.v[i].pid;
				break;
			}
	free(l.v);
	return found;
}
