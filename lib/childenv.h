/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * lib/childenv.h: reading the child-process contract (docs/architecture.md, "The child process
 * contract"): the fds the manager hands a child, named in its environment. Written once for
 * every child program (library `kclog`).
 */

#include <stdbool.h>

/* The arguments the manager passes every child process (manager/main.c add_child). */
struct kcmd_child_args {
	const char *controller; /* --controller= */
	const char *kubeconfig; /* --kubeconfig= */
	const char *master;     /* --master= */
	double qps;             /* --kube-api-qps= */
	int burst;              /* --kube-api-burst= */
	int v;                  /* --v= */
};

/* Takes `a` into c if it is one of those arguments (values as given; the caller keeps its
 * defaults for the ones never seen). True if it was one. Written once for kcmd-worker,
 * kcmd-dispatcher and every controller's own worker_main. */
bool kcmd_child_arg(struct kcmd_child_args *c, const char *a);

/* The fd in environment variable `name` (e.g. KCMD_ARENA_FD), or -1 if unset or not a number
 * in 0..65535. */
int kcmd_env_fd(const char *name);
/* The fd of queue `name` in KCMD_QUEUE_FDS=name:fd[,name:fd...], or -1. */
int kcmd_env_queue_fd(const char *name);
/* The fd of `name` in environment variable var=name:fd[,name:fd...] (KCMD_QUEUE_FDS,
 * KCMD_JOURNAL_FDS), or -1. */
int kcmd_env_named_fd(const char *var, const char *name);
