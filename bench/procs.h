/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench/procs.h: CPU and memory of a process tree from /proc, for `kcmd bench`.
 *
 * CPU-seconds of a tree = utime + stime + cutime + cstime of every live process in it (the c*
 * fields carry the time of children already reaped, e.g. a worker killed and restarted, so the sum
 * never goes backwards while the root lives). Memory = PSS summed over the tree (smaps_rollup),
 * which counts shared memory (the arena) once; RSS is summed too, for the upstream comparison.
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

struct bench_pstat {
	pid_t pid, ppid;
	char comm[32];
	char state;
	double cpu_s;       /* utime + stime */
	double child_cpu_s; /* cutime + cstime */
};

/* Parses the text of /proc/<pid>/stat (comm may hold spaces and parentheses). 0 or -EBADMSG. */
int bench_pstat_parse(const char *text, double ticks_per_s, struct bench_pstat *st);
int bench_pstat_read(pid_t pid, struct bench_pstat *st);
/* Parses smaps_rollup text: Pss and Rss in kB. 0 or -EBADMSG. */
int bench_smaps_parse(const char *text, long *pss_kb, long *rss_kb);

struct bench_tree {
	double cpu_s;
	double pss_mb, rss_mb;
	int nprocs;
};
/* Samples the tree under root (root included). -ESRCH when root is gone. */
int bench_tree_sample(pid_t root, struct bench_tree *t);
/* Parses /proc/<pid>/io text: rchar and wchar (bytes through read()/write()-like calls; a Go
 * program's sockets are counted, recv()/send() are not). 0 or -EBADMSG. */
int bench_pio_parse(const char *text, unsigned long long *rchar, unsigned long long *wchar);
/* CPU-seconds (utime + stime + cutime + cstime) and bytes written (wchar) of one process: the
 * control plane's apiserver and etcd. -ESRCH when it is gone. */
int bench_proc_cost(pid_t pid, double *cpu_s, double *wchar_mb);
/* The live processes of the tree under root (root included, last), at most max into pids.
 * Returns the count (the tree may hold more), or a negative errno (-ESRCH: root is gone). The
 * shard failover kills them all with SIGKILL, the children first. */
int bench_tree_pids(pid_t root, pid_t *pids, int max);
/* Finds a child of parent whose comm is `comm`; 0 when none. */
pid_t bench_find_child(pid_t parent, const char *comm);
