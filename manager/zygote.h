/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * manager/zygote.h: the manager's side of the zygote (`kcmd-worker --zygote`), the process its
 * dispatchers and workers are forked from so that the pages the loader and the libraries write
 * before main are shared between them (lib/zygote-abi.h: why, the protocol, what was rejected).
 * Used by the supervisor only, and only with KCMD_ZYGOTE=1 in the manager's environment (off by
 * default: docs/manager.md says why; without it every
 * child exec'd, as before).
 */

#include <sys/types.h>

struct mgr_zygote;

/* Starts `<libexec>/kcmd-worker --zygote` and makes the calling process a child subreaper
 * while it waits for a spawn (so a forked child becomes its child). Returns 0 and *ret, or
 * -errno (-ENOENT: no kcmd-worker there; the caller execs every child). */
int mgr_zygote_start(const char *libexec, struct mgr_zygote **ret);

/* Asks the zygote for a child running argv (argv[0] a kcmd-worker or kcmd-dispatcher of the
 * zygote's directory) with environment envp and fds[i] at the same number. On success the child
 * is the caller's child and *ret_pid its pid (0 returned). -ENOTSUP: not one the zygote serves
 * (another program, an argv longer than its room) or the zygote is gone (it is then killed
 * and reaped once; every later call says -ENOTSUP): the caller execs the child itself. Other
 * -errno: the zygote could not fork (a failed start). Blocks for the zygote's two forks, at
 * most 5 s (then the zygote counts as gone). */
int mgr_zygote_spawn(struct mgr_zygote *z, char *const argv[], char *const envp[], const int *fds,
                     unsigned nfds, pid_t *ret_pid);

/* The zygote's pid, or 0 when it is gone. */
pid_t mgr_zygote_pid(const struct mgr_zygote *z);

/* Kills the zygote (if still there), reaps it, frees z. NULL is a no-op. */
void mgr_zygote_free(struct mgr_zygote *z);
