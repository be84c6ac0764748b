/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * manager/kcmctl.h: what kcmctl's commands (manager/kcmctl.c, manager/top.c) share.
 */
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* An untrusted string (from the cache: names, labels, owner references, resource names; from
 * the status page: the Lease holder) made safe for a terminal by kclog_sanitize. Eight rotating
 * buffers: up to eight calls in one printf. */
const char *kcmctl_safe(const char *s);

/* Calls fn(path, memfd name) for every memfd kcmd (pid) holds whose name starts with prefix.
 * Returns how many matched, or the first negative return of fn, or -errno. */
int kcmctl_each_memfd(pid_t pid, const char *prefix,
                      int (*fn)(const char *path, const char *name, void *ud), void *ud);

/* kcmctl_each_memfd callback: opens the arena read-only into *(struct shm_arena **)ud. */
int kcmctl_open_arena_cb(const char *path, const char *name, void *ud);

/* "-", "42s", "3m12s", "2h5m", "1d3h" for a duration in microseconds (<= 0: "-"). */
void kcmctl_fmt_age(char *buf, size_t n, int64_t usec);

/* `kcmctl top [--once] [-o json] [--interval SECONDS]` (manager/top.c). Returns the exit code. */
int kcmctl_top(pid_t pid, int argc, char **argv);
