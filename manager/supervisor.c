/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manager/supervisor.c: fork+exec, pidfds, reaping and restart backoff (see supervisor.h).
 */
#include "manager/supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipc/loop.h"
#include "manager/zygote.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

#define BACKOFF_MIN_USEC 500000ull
#define BACKOFF_MAX_USEC 30000000ull
#define STABLE_RUN_USEC  60000000ull
#define LOOP_WINDOW_USEC 60000000ull
#define LOOP_RESTARTS    5

extern char **environ;

struct mgr_child {
	struct mgr_supervisor *sup;
	char *name, *group;
	char **argv, **envp;
	int keep_fds[MGR_CHILD_MAX_FDS];
	unsigned n_keep_fds;
	bool restart, on_demand;

	enum mgr_child_state state;
	bool want_stop;
	/* started again (mgr_sup_start_group) after a stop whose exit is not reaped yet: restart
	 * it at once when that exit arrives (leadership lost and regained within one loop turn) */
	bool start_after_exit;
	pid_t pid;
	int pidfd;
	struct ipc_source *pid_src, *timer;
	uint64_t started, next_start, backoff;
	uint64_t restarts;
	uint64_t exits[LOOP_RESTARTS]; /* ring of recent exit times */
	unsigned n_exits;
	int last_code, last_status;
	pid_t last_pid;
	unsigned start_failures; /* consecutive failed starts (fork, exec, pidfd); 0 once one worked
	                          */
	int start_error;         /* -errno of the last failed start */
};

unsigned mgr_sup_fault_fail_starts;

struct mgr_supervisor {
	struct ipc_loop *loop;
	mgr_child_exit_fn on_exit;
	void *userdata;
	struct mgr_child **children;
	unsigned n, cap;
	struct mgr_zygote *zygote; /* dispatchers and workers forked from it (manager/zygote.h) */
};

static char **strv_copy(char *const *v)
{
	size_t n = 0;
	char **c;

	if (!v)
		return NULL;
	while (v[n])
		n++;
	c = calloc(n + 1, sizeof(*c));
	if (!c)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!(c[i] = strdup(v[i]))) {
			while (i--)
				free(c[i]);
			free(c);
			return NULL;
		}
	return c;
}

static void strv_free(char **v)
{
	if (!v)
		return;
	for (size_t i = 0; v[i]; i++)
		free(v[i]);
	free(v);
}

static void child_free(struct mgr_child *c)
{
	if (!c)
		return;
	ipc_source_free(c->pid_src);
	ipc_source_free(c->timer);
	if (c->pidfd >= 0)
		close(c->pidfd);
	free(c->name);
	free(c->group);
	strv_free(c->argv);
	strv_free(c->envp);
	free(c);
}

int mgr_sup_new(struct ipc_loop *loop, mgr_child_exit_fn on_exit, void *userdata,
                struct mgr_supervisor **ret)
{
	struct mgr_supervisor *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->loop = loop;
	s->on_exit = on_exit;
	s->userdata = userdata;
	*ret = s;
	return 0;
}

struct mgr_supervisor *mgr_sup_free(struct mgr_supervisor *s)
{
	if (!s)
		return NULL;
	for (unsigned i = 0; i < s->n; i++) {
		struct mgr_child *c = s->children[i];
		if (c->state == MGR_CHILD_RUNNING && c->pidfd >= 0) {
			siginfo_t si;
			kill(c->pid, SIGKILL);
			while (waitid(P_PIDFD, (id_t)c->pidfd, &si, WEXITED) < 0 && errno == EINTR)
				;
		}
		child_free(c);
	}
	mgr_zygote_free(s->zygote);
	free(s->children);
	free(s);
	return NULL;
}

int mgr_sup_use_zygote(struct mgr_supervisor *s, const char *libexec)
{
	if (s->zygote)
		return -EALREADY;
	return mgr_zygote_start(libexec, &s->zygote);
}

pid_t mgr_sup_zygote_pid(const struct mgr_supervisor *s)
{
	return mgr_zygote_pid(s->zygote);
}

/* A start that failed (fork, execve, pidfd): the child waits in BACKOFF and its timer tries again,
 * with the same doubling backoff as after an exit; mgr_child_info.start_failures says so meanwhile
 * (the manager's health checks are red). */
static int start_failed(struct mgr_child *c, int err)
{
	c->start_failures++;
	c->start_error = err;
	c->state = MGR_CHILD_BACKOFF;
	c->next_start = ipc_now_usec() + c->backoff;
	c->backoff = c->backoff * 2 > BACKOFF_MAX_USEC ? BACKOFF_MAX_USEC : c->backoff * 2;
	return ipc_source_set_time(c->timer, c->next_start);
}

static int timer_cb(struct ipc_source *src, uint64_t now, void *userdata)
{
	struct mgr_child *c = userdata;

	(void)src;
	(void)now;
	if (c->state == MGR_CHILD_BACKOFF && !c->want_stop) {
		int r = mgr_child_start(c);
		if (r < 0) /* fork, exec or pidfd failed (EAGAIN, ENOEXEC, EACCES...): later */
			return start_failed(c, r);
	}
	return 0;
}

int mgr_sup_add(struct mgr_supervisor *s, const struct mgr_child_spec *spec, struct mgr_child **ret)
{
	struct mgr_child *c;
	int r;

	if (!spec->name || !spec->group || !spec->argv || !spec->argv[0] ||
	    spec->n_keep_fds > MGR_CHILD_MAX_FDS)
		return -EINVAL;
	if (s->n == s->cap) {
		unsigned cap = s->cap ? s->cap * 2 : 8;
		struct mgr_child **n = realloc(s->children, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		s->children = n;
		s->cap = cap;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->sup = s;
	c->pidfd = -1;
	c->restart = spec->restart;
	c->on_demand = spec->on_demand;
	c->n_keep_fds = spec->n_keep_fds;
	memcpy(c->keep_fds, spec->keep_fds, sizeof(c->keep_fds));
	c->backoff = BACKOFF_MIN_USEC;
	c->name = strdup(spec->name);
	c->group = strdup(spec->group);
	c->argv = strv_copy(spec->argv);
	c->envp = spec->envp ? strv_copy(spec->envp) : NULL;
	if (!c->name || !c->group || !c->argv || (spec->envp && !c->envp)) {
		child_free(c);
		return -ENOMEM;
	}
	r = ipc_loop_add_timer(s->loop, &c->timer, 0, timer_cb, c);
	if (r < 0) {
		child_free(c);
		return r;
	}
	s->children[s->n++] = c;
	if (ret)
		*ret = c;
	return 0;
}

static void note_exit(struct mgr_child *c, uint64_t now)
{
	c->exits[c->n_exits % LOOP_RESTARTS] = now;
	c->n_exits++;
}

static bool crash_looping(const struct mgr_child *c, uint64_t now)
{
	if (c->n_exits < LOOP_RESTARTS)
		return false;
	/* The oldest of the last LOOP_RESTARTS exits is within the window. */
	return now - c->exits[c->n_exits % LOOP_RESTARTS] < LOOP_WINDOW_USEC;
}

static int pidfd_cb(struct ipc_source *src, int fd, uint32_t revents, void *userdata)
{
	struct mgr_child *c = userdata;
	struct mgr_supervisor *s = c->sup;
	struct mgr_child_info info;
	siginfo_t si;
	uint64_t now = ipc_now_usec();

	(void)src;
	(void)revents;
	memset(&si, 0, sizeof(si));
	for (;;) {
		if (waitid(P_PIDFD, (id_t)fd, &si, WEXITED | WNOHANG) == 0)
			break;
		if (errno != EINTR) { /* cannot happen for our own child; count it as gone */
			memset(&si, 0, sizeof(si));
			si.si_pid = c->pid;
			break;
		}
	}
	ipc_source_free(c->pid_src);
	c->pid_src = NULL;
	if (si.si_pid == 0) /* not exited after all: watch again */
		return ipc_loop_add_pidfd(s->loop, &c->pid_src, c->pidfd, pidfd_cb, c);
	close(c->pidfd);
	c->pidfd = -1;
	c->last_pid = c->pid;
	c->pid = 0;
	c->last_code = si.si_code;
	c->last_status = si.si_status;
	note_exit(c, now);

	if (c->start_after_exit) {
		c->start_after_exit = false;
		c->want_stop = false;
		c->state = MGR_CHILD_BACKOFF;
		c->next_start = now;
		if (ipc_source_set_time(c->timer, now) < 0)
			return -EIO;
	} else if (c->want_stop || !c->restart) {
		c->state = MGR_CHILD_STOPPED;
	} else {
		if (now - c->started >= STABLE_RUN_USEC)
			c->backoff = BACKOFF_MIN_USEC;
		c->state = MGR_CHILD_BACKOFF;
		c->next_start = now + c->backoff;
		c->backoff = c->backoff * 2 > BACKOFF_MAX_USEC ? BACKOFF_MAX_USEC : c->backoff * 2;
		if (ipc_source_set_time(c->timer, c->next_start) < 0)
			return -EIO;
	}
	if (s->on_exit) {
		mgr_child_get_info(c, &info);
		s->on_exit(c, &info, s->userdata);
	}
	return 0;
}

/* Reads what the child wrote on the exec-status pipe: nothing (EOF, the pipe closed by a
 * successful execve, CLOEXEC) or the errno of the step that failed. Returns 0 or -errno. */
static int read_exec_status(int fd)
{
	int err = 0;
	ssize_t n;

	do
		n = read(fd, &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	if (n == 0)
		return 0;              /* exec'd */
	if (n != (ssize_t)sizeof(err)) /* a torn or failed read: count it as a failed start */
		return n < 0 ? -errno : -EIO;
	return err > 0 ? -err : -EIO;
}

/* Child side after fork: tell the parent why it could not become the program, then die. Only
 * async-signal-safe calls. */
static void child_fail(int fd, int err)
{
	ssize_t n;

	do
		n = write(fd, &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	_exit(127);
}

int mgr_child_start(struct mgr_child *c)
{
	struct mgr_supervisor *s = c->sup;
	pid_t parent = getpid(), pid;
	int pidfd, r, st[2];
	char *const *envp = c->envp ? c->envp : environ;

	if (c->state == MGR_CHILD_RUNNING)
		return -EALREADY;
	c->want_stop = false; /* started: meant to run (an earlier stop no longer holds) */
	if (mgr_sup_fault_fail_starts) { /* test seam: this start fails as a fork would */
		mgr_sup_fault_fail_starts--;
		return -EAGAIN;
	}
	/* A dispatcher or worker is forked from the zygote, which shares the pages its libraries
	 * wrote before main with every child (lib/zygote-abi.h); anything else, or with the zygote
	 * gone, is exec'd. */
	r = mgr_zygote_spawn(s->zygote, c->argv, envp, c->keep_fds, c->n_keep_fds, &pid);
	if (r == 0)
		goto started;
	if (r != -ENOTSUP)
		return r;
	/* The exec-status pipe: both ends close-on-exec, so a successful execve closes the write
	 * end and the parent reads EOF; a failed one writes its errno first. An exec failure is
	 * thus a failed start (retried with backoff, health red), not an exit with status 127. */
	if (pipe2(st, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(st[0]);
		close(st[1]);
		return r;
	}
	if (pid == 0) {
		sigset_t none;
		/* Child: only async-signal-safe calls until execve. */
		close(st[0]);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
			child_fail(st[1], errno);
		if (getppid() != parent)
			child_fail(st[1], ESRCH);
		for (unsigned i = 0; i < c->n_keep_fds; i++)
			if (fcntl(c->keep_fds[i], F_SETFD, 0) < 0)
				child_fail(st[1], errno);
		/* The manager's loop blocks the signals it reads through signalfd. */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		execve(c->argv[0], c->argv, envp);
		child_fail(st[1], errno);
	}
	close(st[1]);
	/* Blocks only for the few async-signal-safe calls before execve (posix_spawn waits the
	 * same way). */
	r = read_exec_status(st[0]);
	close(st[0]);
	if (r < 0) {
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		return r;
	}
started:
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		r = -errno;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return r;
	}
	r = ipc_loop_add_pidfd(s->loop, &c->pid_src, pidfd, pidfd_cb, c);
	if (r < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(pidfd);
		return r;
	}
	if (c->started)
		c->restarts++;
	c->pid = pid;
	c->pidfd = pidfd;
	c->want_stop = false;
	c->state = MGR_CHILD_RUNNING;
	c->started = ipc_now_usec();
	c->start_failures = 0;
	c->start_error = 0;
	ipc_source_set_time(c->timer, 0);
	return 0;
}

enum mgr_child_state mgr_child_state(const struct mgr_child *c)
{
	return c->state;
}

int mgr_child_stop(struct mgr_child *c, int sig)
{
	c->want_stop = true;
	c->start_failures = 0; /* stopped on purpose: no start is owed any more */
	c->start_after_exit = false;
	if (c->state == MGR_CHILD_BACKOFF) {
		c->state = MGR_CHILD_STOPPED;
		ipc_source_set_time(c->timer, 0);
		return 0;
	}
	if (c->state != MGR_CHILD_RUNNING)
		return 0;
	if (kill(c->pid, sig) < 0)
		return -errno;
	return 0;
}

int mgr_sup_signal_group(struct mgr_supervisor *s, const char *group, int sig, bool stop)
{
	int n = 0;

	for (unsigned i = 0; i < s->n; i++) {
		struct mgr_child *c = s->children[i];
		if (strcmp(c->group, group) != 0)
			continue;
		if (stop) {
			if (mgr_child_stop(c, sig) == 0 && c->state == MGR_CHILD_RUNNING)
				n++;
		} else if (c->state == MGR_CHILD_RUNNING && kill(c->pid, sig) == 0) {
			n++;
		}
	}
	return n;
}

int mgr_sup_start_group(struct mgr_supervisor *s, const char *group)
{
	int n = 0, err = 0;

	for (unsigned i = 0; i < s->n; i++) {
		struct mgr_child *c = s->children[i];
		if (strcmp(c->group, group) != 0)
			continue;
		if (c->state == MGR_CHILD_RUNNING) {
			/* stopped (SIGKILLed) but its exit not reaped yet: without this, the exit
			 * would leave it STOPPED while the group is meant to run */
			if (c->want_stop && !c->start_after_exit) {
				c->start_after_exit = true;
				n++;
			}
			continue;
		}
		if (c->on_demand && c->state == MGR_CHILD_STOPPED)
			continue;
		c->want_stop = false;
		int r = mgr_child_start(c);
		if (r < 0) { /* the others still start; this one is retried after a backoff */
			if (!err)
				err = r;
			(void)start_failed(c, r);
			continue;
		}
		n++;
	}
	return err ? err : n;
}

unsigned mgr_sup_running(const struct mgr_supervisor *s, const char *group)
{
	unsigned n = 0;

	for (unsigned i = 0; i < s->n; i++)
		if (s->children[i]->state == MGR_CHILD_RUNNING &&
		    (!group || strcmp(s->children[i]->group, group) == 0))
			n++;
	return n;
}

void mgr_child_get_info(const struct mgr_child *c, struct mgr_child_info *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->name = c->name;
	ret->group = c->group;
	ret->state = c->state;
	ret->pid = c->pid;
	ret->last_pid = c->last_pid;
	ret->started_usec = c->started;
	ret->restarts = c->restarts;
	ret->last_code = c->last_code;
	ret->last_status = c->last_status;
	ret->crash_looping = crash_looping(c, ipc_now_usec());
	ret->next_start_usec = c->state == MGR_CHILD_BACKOFF ? c->next_start : 0;
	ret->start_failures = c->start_failures;
	ret->start_error = c->start_error;
}

struct mgr_child *mgr_sup_child(const struct mgr_supervisor *s, unsigned i)
{
	return i < s->n ? s->children[i] : NULL;
}
