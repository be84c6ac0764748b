/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * manager/supervisor.h: the manager's static table of child processes.
 *
 * Design note.
 *   Children are started with fork+exec (after fork only async-signal-safe calls: prctl, dup2,
 *   fcntl, execve). Each child gets PR_SET_PDEATHSIG=SIGKILL so it never outlives the manager,
 *   and inherits exactly the fds its spec lists (everything else is O_CLOEXEC). The parent holds a
 *   pidfd per child, watched by the event loop; when it becomes readable the child is reaped with
 *   waitid(P_PIDFD), the on_exit callback runs (this is where the manager repairs what the dead
 *   process held: queue items in flight, reader slots), and the child is restarted after a
 *   backoff: 500 ms doubling to 30 s, back to 500 ms once a run lasted 60 s. Five or more
 *   restarts within 60 s mark the child crash-looping (visible in logs, /healthz, metrics). A
 *   start that fails (fork or pidfd_open: EAGAIN, ENOMEM, EMFILE; or execve: ENOENT, EACCES,
 *   ENOEXEC...) is retried the same way, and the child reports start_failures meanwhile
 *   (/healthz red). An exec failure is seen at once through an exec-status pipe (both ends
 *   O_CLOEXEC: EOF means execve worked, four bytes are the errno of the step that failed), so it
 *   is a failed start, not an exit with status 127 counted as a crash.
 *
 *   A group tag lets the manager stop a whole class of children at once and synchronously (the
 *   leader-election fence SIGKILLs every worker before the renew deadline).
 *
 *   Dispatchers and workers are forked from a zygote when the manager has one
 *   (mgr_sup_use_zygote; lib/zygote-abi.h): the zygote's intermediate process exits, the child is
 *   re-parented to the manager (a subreaper during the request) and from there on is supervised
 *   exactly as an exec'd child (pidfd, waitid, backoff). A zygote gone means exec again.
 *
 *   Rejected: posix_spawn (no way to set PDEATHSIG or clear CLOEXEC on chosen fds in the child),
 *   SIGCHLD handling (pidfds are race-free against pid reuse and fit the loop).
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct ipc_loop;
struct mgr_supervisor;
struct mgr_child;

#define MGR_CHILD_MAX_FDS 32

struct mgr_child_spec {
	const char *name;                /* "informerd", "worker-replicaset-0", ... */
	const char *group;               /* "informerd", "workers", ... */
	char *const *argv;               /* argv[0] is the program path; copied */
	char *const *envp;               /* NULL = the manager's environment; copied */
	int keep_fds[MGR_CHILD_MAX_FDS]; /* fds the child inherits at the same numbers */
	unsigned n_keep_fds;
	bool restart; /* restart when it exits (false for one-shot children) */
	/* Started on demand only (mgr_child_start): mgr_sup_start_group leaves it STOPPED. Once
	 * started it is supervised like any child (a crash restarts it, the group's signals reach
	 * it) until it is stopped on purpose. */
	bool on_demand;
};

enum mgr_child_state {
	MGR_CHILD_STOPPED = 0, /* never started, or stopped on purpose */
	MGR_CHILD_RUNNING,
	MGR_CHILD_BACKOFF, /* exited; waiting to restart */
};

struct mgr_child_info {
	const char *name;
	const char *group;
	enum mgr_child_state state;
	pid_t pid;             /* 0 unless running */
	pid_t last_pid;        /* the pid of the last run (for repairs after it died) */
	uint64_t started_usec; /* monotonic, last start */
	uint64_t restarts;     /* total restarts */
	int last_code;         /* from waitid: CLD_EXITED / CLD_KILLED / CLD_DUMPED, 0 = none */
	int last_status;       /* exit status or signal number */
	bool crash_looping;
	uint64_t next_start_usec; /* when in BACKOFF */
	unsigned start_failures; /* consecutive failed starts (fork, execve, pidfd_open); retried */
	int start_error;         /* -errno of the last failed start */
};

/* Called after a child was reaped, before any restart is scheduled. */
typedef void (*mgr_child_exit_fn)(struct mgr_child *c, const struct mgr_child_info *info,
                                  void *userdata);

int mgr_sup_new(struct ipc_loop *loop, mgr_child_exit_fn on_exit, void *userdata,
                struct mgr_supervisor **ret);
/* Kills (SIGKILL) and reaps every running child, then frees everything. NULL-safe. */
struct mgr_supervisor *mgr_sup_free(struct mgr_supervisor *s);

/* From now on dispatchers and workers of `libexec` are forked from a zygote (manager/zygote.h),
 * started here; other programs, and every child once the zygote is gone, are exec'd. Returns
 * 0, -EALREADY, or mgr_zygote_start's -errno (nothing changed: every child exec'd). */
int mgr_sup_use_zygote(struct mgr_supervisor *s, const char *libexec);
/* The zygote's pid, or 0 (none, or gone). */
pid_t mgr_sup_zygote_pid(const struct mgr_supervisor *s);

/* Adds a child to the table (not started). Returns 0, -EINVAL, -ENOMEM. */
int mgr_sup_add(struct mgr_supervisor *s, const struct mgr_child_spec *spec,
                struct mgr_child **ret);
/* Starts a child now (from STOPPED or BACKOFF). Returns 0 once the program was exec'd, or
 * -errno from pipe2/fork/execve/pidfd_open (the child, if forked, is reaped before returning). */
int mgr_child_start(struct mgr_child *c);
/* Sends sig to a running child and, once it exited, keeps it STOPPED (no restart). */
int mgr_child_stop(struct mgr_child *c, int sig);
/* Sends sig to every running child of group right now (kill(2) returns before they die) and
 * stops their restarts when stop is true. Returns the number signalled. */
int mgr_sup_signal_group(struct mgr_supervisor *s, const char *group, int sig, bool stop);
/* Starts every child of group that is not running (children marked on_demand that are STOPPED
 * are left so). A child whose start fails (fork, execve,
 * pidfd_open) waits in BACKOFF and is retried by its timer with the exit backoff (500 ms doubling
 * to 30 s) until it starts or is stopped; the others start regardless. Returns how many started,
 * or the first start's -errno if any failed (those are being retried). */
int mgr_sup_start_group(struct mgr_supervisor *s, const char *group);
/* Test seam: the next this-many starts fail with -EAGAIN before fork (as a fork at the process
 * limit would). 0 in production. */
extern unsigned mgr_sup_fault_fail_starts;
/* Number of children of group (NULL = all) still running. */
unsigned mgr_sup_running(const struct mgr_supervisor *s, const char *group);

void mgr_child_get_info(const struct mgr_child *c, struct mgr_child_info *ret);
enum mgr_child_state mgr_child_state(const struct mgr_child *c);
/* Iteration over the table in insertion order; NULL past the end. */
struct mgr_child *mgr_sup_child(const struct mgr_supervisor *s, unsigned i);
