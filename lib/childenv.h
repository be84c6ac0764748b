/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * lib/childenv.h: reading the child-process contract (docs/architecture.md, "The child process
 * contract"): the fds the manager hands a child, named in its environment. Written once for
 * every child program (library `kclog`).
 */

/* The fd in environment variable `name` (e.g. KCMD_ARENA_FD), or -1 if unset or not a number
 * in 0..65535. */
int kcmd_env_fd(const char *name);
/* The fd of queue `name` in KCMD_QUEUE_FDS=name:fd[,name:fd...], or -1. */
int kcmd_env_queue_fd(const char *name);
