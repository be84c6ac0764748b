/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of the supervisor with real child processes (/bin/sh, sleep): restart with backoff,
 * exit status reporting, stop without restart, group signalling, fd inheritance, and children
 * dying with a SIGKILLed manager.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipc/loop.h"
#include "manager/supervisor.h"

struct exits {
	int n;
	struct mgr_child_info last;
};

static void on_exit_cb(struct mgr_child *c, const struct mgr_child_info *info, void *userdata)
{
	struct exits *e = userdata;

	(void)c;
	e->n++;
	e->last = *info;
}

static void run_for(struct ipc_loop *loop, uint64_t usec)
{
	uint64_t end = ipc_now_usec() + usec;

	for (uint64_t now = ipc_now_usec(); now < end; now = ipc_now_usec())
		assert_true(ipc_loop_run_once(loop, end - now) >= 0);
}

static void run_until_exits(struct ipc_loop *loop, struct exits *e, int n, uint64_t max_usec)
{
	uint64_t end = ipc_now_usec() + max_usec;

	while (e->n < n && ipc_now_usec() < end)
		assert_true(ipc_loop_run_once(loop, 50000) >= 0);
	assert_true(e->n >= n);
}

static bool pid_gone(pid_t pid)
{
	char path[64], buf[512];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return true;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'Z';
}

static void test_restart_with_backoff(void **state)
{
	(void)state;
	struct ipc_loop *loop;
	struct mgr_supervisor *sup;
	struct mgr_child *c;
	struct exits e = {0};
	char *argv[] = {"/bin/sh", "-c", "exit 3", NULL};
	struct mgr_child_spec spec = {
	        .name = "crasher", .group = "workers", .argv = argv, .restart = true};

	assert_int_equal(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO), 0);
	assert_int_equal(mgr_sup_new(loop, on_exit_cb, &e, &sup), 0);
	assert_int_equal(mgr_sup_add(sup, &spec, &c), 0);
	uint64_t t0 = ipc_now_usec();
	assert_int_equal(mgr_child_start(c), 0);
	/* starts at 0, 0.5 s, 1.5 s, 3.5 s: three exits by ~1.6 s, the fourth not before 3.5 s */
	run_until_exits(loop, &e, 3, 3000000);
	uint64_t t3 = ipc_now_usec() - t0;
	assert_true(t3 >= 1500000);
	assert_int_equal(e.last.last_code, CLD_EXITED);
	assert_int_equal(e.last.last_status, 3);
	assert_int_equal(e.last.state, MGR_CHILD_BACKOFF);
	assert_true(e.last.next_start_usec > 0);
	run_for(loop,
	        3400000 - (ipc_now_usec() - t0) > 3400000 ? 0 : 3400000 - (ipc_now_usec() - t0));
	assert_int_equal(e.n, 3);
	struct mgr_child_info info;
	mgr_child_get_info(c, &info);
	assert_int_equal(info.restarts, 2);
	assert_false(info.crash_looping);
	/* Two more exits (at 3.5 s and 7.5 s) make five within 60 s: crash looping. */
	run_until_exits(loop, &e, 5, 6000000);
	mgr_child_get_info(c, &info);
	assert_true(info.crash_looping);
	mgr_sup_free(sup);
	ipc_loop_free(loop);
}

/* A start that fails (fork at the process limit, pidfd_open out of fds) is retried with backoff,
 * reported meanwhile, and does not keep the rest of the group from starting. */
static void test_failed_start_is_retried(void **state)
{
	(void)state;
	struct ipc_loop *loop;
	struct mgr_supervisor *sup;
	struct mgr_child *a, *b;
	struct exits e = {0};
	char *argv[] = {"/bin/sleep", "100", NULL};
	struct mgr_child_spec sa = {
	        .name = "w0", .group = "workers", .argv = argv, .restart = true};
	struct mgr_child_spec sb = {
	        .name = "w1", .group = "workers", .argv = argv, .restart = true};
	struct mgr_child_info ia, ib;

	assert_int_equal(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO), 0);
	assert_int_equal(mgr_sup_new(loop, on_exit_cb, &e, &sup), 0);
	assert_int_equal(mgr_sup_add(sup, &sa, &a), 0);
	assert_int_equal(mgr_sup_add(sup, &sb, &b), 0);
	mgr_sup_fault_fail_starts = 1; /* w0's start fails, w1's works */
	assert_int_equal(mgr_sup_start_group(sup, "workers"), -EAGAIN);
	mgr_child_get_info(a, &ia);
	mgr_child_get_info(b, &ib);
	assert_int_equal(ib.state, MGR_CHILD_RUNNING);
	assert_int_equal(ia.state, MGR_CHILD_BACKOFF);
	assert_int_equal(ia.start_failures, 1);
	assert_int_equal(ia.start_error, -EAGAIN);
	/* the retry fails too (backoff doubles), the next one works */
	mgr_sup_fault_fail_starts = 1;
	uint64_t t0 = ipc_now_usec();
	uint64_t end = t0 + 5000000;
	do {
		assert_true(ipc_loop_run_once(loop, 50000) >= 0);
		mgr_child_get_info(a, &ia);
	} while (ia.state != MGR_CHILD_RUNNING && ipc_now_usec() < end);
	assert_int_equal(ia.state, MGR_CHILD_RUNNING);
	assert_int_equal(ia.start_failures, 0);
	assert_int_equal(mgr_sup_fault_fail_starts, 0);
	assert_true(ipc_now_usec() - t0 >= 1000000); /* 0.5 s, then 1 s */
	assert_int_equal(mgr_sup_running(sup, "workers"), 2);
	/* a stopped group owes no start: a failed one is not retried once stopped */
	mgr_sup_signal_group(sup, "workers", SIGKILL, true);
	run_until_exits(loop, &e, 2, 2000000);
	mgr_sup_fault_fail_starts = 2;
	assert_int_equal(mgr_sup_start_group(sup, "workers"), -EAGAIN);
	mgr_sup_signal_group(sup, "workers", SIGKILL, true);
	mgr_child_get_info(a, &ia);
	assert_int_equal(ia.state, MGR_CHILD_STOPPED);
	assert_int_equal(ia.start_failures, 0);
	run_for(loop, 1200000);
	assert_int_equal(mgr_sup_running(sup, "workers"), 0);
	mgr_sup_free(sup);
	ipc_loop_free(loop);
}

/* An execve that fails (a file that is no program, a missing path, an fd the child cannot
 * inherit) is reported by the start itself through the exec-status pipe: a failed start, retried
 * with backoff and visible in start_failures, never an "exit 127" counted as a crash. Once the
 * program is fixed the retry runs it and the failures are cleared. */
static void test_exec_failure_is_a_failed_start(void **state)
{
	(void)state;
	struct ipc_loop *loop;
	struct mgr_supervisor *sup;
	struct mgr_child *c, *missing, *badfd;
	struct exits e = {0};
	char path[] = "/tmp/kcmd-test-execXXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char junk[] = "\x01\x02 not a program\n", fixed[] = "#!/bin/sh\nexec sleep 100\n";
	assert_int_equal(write(fd, junk, strlen(junk)), (ssize_t)strlen(junk));
	close(fd);
	assert_int_equal(chmod(path, 0755), 0);
	char *argv[] = {path, NULL};
	char *argv_missing[] = {"/nonexistent/kcmd-worker", NULL};
	char *argv_sleep[] = {"/bin/sleep", "100", NULL};
	struct mgr_child_spec spec = {
	        .name = "w0", .group = "workers", .argv = argv, .restart = true};
	struct mgr_child_spec smiss = {
	        .name = "w1", .group = "other", .argv = argv_missing, .restart = true};
	struct mgr_child_spec sbad = {.name = "w2",
	                              .group = "other2",
	                              .argv = argv_sleep,
	                              .keep_fds = {987},
	                              .n_keep_fds = 1,
	                              .restart = true};
	struct mgr_child_info info;

	assert_int_equal(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO), 0);
	assert_int_equal(mgr_sup_new(loop, on_exit_cb, &e, &sup), 0);
	assert_int_equal(mgr_sup_add(sup, &spec, &c), 0);
	assert_int_equal(mgr_sup_add(sup, &smiss, &missing), 0);
	assert_int_equal(mgr_sup_add(sup, &sbad, &badfd), 0);
	assert_int_equal(mgr_child_start(missing), -ENOENT);
	assert_int_equal(mgr_child_start(badfd), -EBADF);
	assert_int_equal(mgr_child_state(missing), MGR_CHILD_STOPPED);
	assert_int_equal(mgr_sup_start_group(sup, "workers"), -ENOEXEC);
	mgr_child_get_info(c, &info);
	assert_int_equal(info.state, MGR_CHILD_BACKOFF);
	assert_int_equal(info.start_failures, 1);
	assert_int_equal(info.start_error, -ENOEXEC);
	assert_int_equal(info.pid, 0);
	/* retried with backoff, not in a busy loop: 0.5 s then 1 s, so 2 failures in 1.2 s */
	run_for(loop, 1200000);
	mgr_child_get_info(c, &info);
	assert_int_equal(info.state, MGR_CHILD_BACKOFF);
	assert_int_equal(info.start_failures, 2);
	assert_int_equal(info.restarts, 0);
	assert_false(info.crash_looping);
	assert_int_equal(e.n, 0); /* no exit was ever reported: the failures are starts */
	/* fixed: the next retry (at ~1.5 s) runs it and clears the failures */
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, fixed, strlen(fixed)), (ssize_t)strlen(fixed));
	close(fd);
	uint64_t end = ipc_now_usec() + 3000000;
	do {
		assert_true(ipc_loop_run_once(loop, 50000) >= 0);
		mgr_child_get_info(c, &info);
	} while (info.state != MGR_CHILD_RUNNING && ipc_now_usec() < end);
	assert_int_equal(info.state, MGR_CHILD_RUNNING);
	assert_int_equal(info.start_failures, 0);
	assert_int_equal(info.start_error, 0);
	assert_true(info.pid > 0);
	assert_int_equal(e.n, 0);
	mgr_sup_free(sup);
	ipc_loop_free(loop);
	unlink(path);
}

/* Found by the chaos suite (issue 21): the leader's workers were SIGKILLed ("stopped leading")
 * and the group started again ("became leader") before the manager reaped them; their exits
 * then left them STOPPED for good while the manager led, and no ReplicaSet was synced. A start
 * of a stopped-but-unreaped child must run it again once its exit arrives. */
static void test_start_before_stopped_child_is_reaped(void **state)
{
	(void)state;
	struct ipc_loop *loop;
	struct mgr_supervisor *sup;
	struct mgr_child *c;
	struct exits e = {0};
	char *argv[] = {"/bin/sleep", "100", NULL};
	struct mgr_child_spec spec = {
	        .name = "worker", .group = "workers", .argv = argv, .restart = true};
	struct mgr_child_info info;

	assert_int_equal(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO), 0);
	assert_int_equal(mgr_sup_new(loop, on_exit_cb, &e, &sup), 0);
	assert_int_equal(mgr_sup_add(sup, &spec, &c), 0);
	assert_int_equal(mgr_sup_start_group(sup, "workers"), 1);
	mgr_child_get_info(c, &info);
	pid_t first = info.pid;
	/* lost and regained in one loop turn: nothing reaped in between */
	assert_int_equal(mgr_sup_signal_group(sup, "workers", SIGKILL, true), 1);
	assert_int_equal(mgr_sup_start_group(sup, "workers"), 1);
	run_until_exits(loop, &e, 1, 2000000);
	run_for(loop, 300000);
	mgr_child_get_info(c, &info);
	assert_int_equal(info.state, MGR_CHILD_RUNNING);
	assert_true(info.pid > 0 && info.pid != first);
	/* a stop after such a start wins: the child stays down */
	assert_int_equal(mgr_sup_signal_group(sup, "workers", SIGKILL, true), 1);
	assert_int_equal(mgr_sup_start_group(sup, "workers"), 1);
	assert_int_equal(mgr_sup_signal_group(sup, "workers", SIGKILL, true), 1);
	run_until_exits(loop, &e, 2, 2000000);
	run_for(loop, 300000);
	mgr_child_get_info(c, &info);
	assert_int_equal(info.state, MGR_CHILD_STOPPED);
	mgr_sup_free(sup);
	ipc_loop_free(loop);
}

static void test_killed_child_restarts_and_stop(void **state)
{
	(void)state;
	struct ipc_loop *loop;
	struct mgr_supervisor *sup;
	struct mgr_child *c;
	struct exits e = {0};
	char *argv[] = {"/bin/sleep", "100", NULL};
	struct mgr_child_spec spec = {
	        .name = "sleeper", .group = "workers", .argv = argv, .restart = true};
	struct mgr_child_info info;

	assert_int_equal(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO), 0);
	assert_int_equal(mgr_sup_new(loop, on_exit_cb, &e, &sup), 0);
	assert_int_equal(mgr_sup_add(sup, &spec, &c), 0);
	assert_int_equal(mgr_child_start(c), 0);
	assert_int_equal(mgr_child_start(c), -EALREADY);
	mgr_child_get_info(c, &info);
	pid_t first = info.pid;
	assert_true(first > 0);
	assert_int_equal(mgr_sup_running(sup, "workers"), 1);

	assert_int_equal(kill(first, SIGKILL), 0);
	run_until_exits(loop, &e, 1, 2000000);
	assert_int_equal(e.last.last_code, CLD_KILLED);
	assert_int_equal(e.last.last_status, SIGKILL);
	run_for(loop, 700000);
	mgr_child_get_info(c, &info);
	assert_int_equal(info.state, MGR_CHILD_RUNNING);
	assert_true(info.pid > 0 && info.pid != first);
	assert_int_equal(info.restarts, 1);

	/* Fencing: SIGKILL the whole group and keep it down. */
	assert_int_equal(mgr_sup_signal_group(sup, "workers", SIGKILL, true), 1);
	run_until_exits(loop, &e, 2, 2000000);
	run_for(loop, 1200000);
	mgr_child_get_info(c, &info);
	assert_int_equal(info.state, MGR_CHILD_STOPPED);
	assert_int_equal(mgr_sup_running(sup, NULL), 0);
	assert_int_equal(e.n, 2);
	/* And bring it back. */
	assert_int_equal(mgr_sup_start_group(sup, "workers"), 1);
	assert_int_equal(mgr_sup_running(sup, "workers"), 1);
	mgr_child_get_info(c, &info);
	pid_t last = info.pid;
	mgr_sup_free(sup); /* kills and reaps */
	assert_true(pid_gone(last));
	ipc_loop_free(loop);
}

/* An on-demand child: the group's start leaves it down; started by hand it is supervised like
 * any other (a crash restarts it, the group's fence reaches it); stopped on purpose it stays
 * down, and the group's next start leaves it so again. */
static void test_on_demand_child(void **state)
{
	(void)state;
	struct ipc_loop *loop;
	struct mgr_supervisor *sup;
	struct mgr_child *base, *extra;
	struct exits e = {0};
	char *argv[] = {"/bin/sleep", "100", NULL};
	struct mgr_child_spec s0 = {
	        .name = "w-0", .group = "workers", .argv = argv, .restart = true};
	struct mgr_child_spec s1 = {.name = "w-1",
	                            .group = "workers",
	                            .argv = argv,
	                            .restart = true,
	                            .on_demand = true};
	struct mgr_child_info info;

	assert_int_equal(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO), 0);
	assert_int_equal(mgr_sup_new(loop, on_exit_cb, &e, &sup), 0);
	assert_int_equal(mgr_sup_add(sup, &s0, &base), 0);
	assert_int_equal(mgr_sup_add(sup, &s1, &extra), 0);
	assert_int_equal(mgr_sup_start_group(sup, "workers"), 1);
	assert_int_equal(mgr_child_state(extra), MGR_CHILD_STOPPED);
	assert_int_equal(mgr_child_state(base), MGR_CHILD_RUNNING);

	assert_int_equal(mgr_child_start(extra), 0);
	assert_int_equal(mgr_sup_running(sup, "workers"), 2);
	mgr_child_get_info(extra, &info);
	pid_t first = info.pid;
	assert_int_equal(kill(first, SIGKILL), 0); /* a crash: restarted */
	run_until_exits(loop, &e, 1, 2000000);
	run_for(loop, 700000);
	mgr_child_get_info(extra, &info);
	assert_int_equal(info.state, MGR_CHILD_RUNNING);
	assert_true(info.pid != first);

	assert_int_equal(mgr_child_stop(extra, SIGTERM), 0); /* idle: stopped on purpose */
	run_until_exits(loop, &e, 2, 2000000);
	run_for(loop, 700000);
	assert_int_equal(mgr_child_state(extra), MGR_CHILD_STOPPED);
	assert_int_equal(mgr_sup_running(sup, "workers"), 1);

	/* the fence takes both down; the next term starts the base worker only */
	assert_int_equal(mgr_child_start(extra), 0);
	assert_int_equal(mgr_sup_signal_group(sup, "workers", SIGKILL, true), 2);
	run_until_exits(loop, &e, 4, 2000000);
	run_for(loop, 300000);
	assert_int_equal(mgr_sup_running(sup, NULL), 0);
	assert_int_equal(mgr_sup_start_group(sup, "workers"), 1);
	assert_int_equal(mgr_child_state(extra), MGR_CHILD_STOPPED);
	assert_int_equal(mgr_sup_running(sup, "workers"), 1);
	mgr_sup_free(sup);
	ipc_loop_free(loop);
}

static void test_one_shot_child_and_bad_spec(void **state)
{
	(void)state;
	struct ipc_loop *loop;
	struct mgr_supervisor *sup;
	struct mgr_child *c, *m;
	struct exits e = {0};
	char *argv_missing[] = {"/nonexistent/program", NULL};
	char *argv[] = {"/bin/sh", "-c", "exit 5", NULL};
	struct mgr_child_spec missing = {
	        .name = "missing", .group = "x", .argv = argv_missing, .restart = false};
	struct mgr_child_spec spec = {.name = "once", .group = "x", .argv = argv, .restart = false};
	struct mgr_child_spec bad = {.name = "bad", .group = "x", .argv = NULL};

	assert_int_equal(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO), 0);
	assert_int_equal(mgr_sup_new(loop, on_exit_cb, &e, &sup), 0);
	assert_int_equal(mgr_sup_add(sup, &bad, &c), -EINVAL);
	assert_int_equal(mgr_sup_add(sup, &missing, &m), 0);
	assert_int_equal(mgr_sup_add(sup, &spec, &c), 0);
	/* exec failed: the start says so (exec-status pipe), no exit is reported */
	assert_int_equal(mgr_child_start(m), -ENOENT);
	assert_int_equal(mgr_child_state(m), MGR_CHILD_STOPPED);
	assert_int_equal(mgr_child_start(c), 0);
	run_until_exits(loop, &e, 1, 2000000);
	assert_string_equal(e.last.name, "once");
	assert_int_equal(e.last.last_code, CLD_EXITED);
	assert_int_equal(e.last.last_status, 5);
	assert_int_equal(e.last.state, MGR_CHILD_STOPPED); /* one-shot: not restarted */
	run_for(loop, 800000);
	assert_int_equal(e.n, 1);
	mgr_sup_free(sup);
	ipc_loop_free(loop);
}

static void test_fd_inheritance(void **state)
{
	(void)state;
	struct ipc_loop *loop;
	struct mgr_supervisor *sup;
	struct mgr_child *c;
	struct exits e = {0};
	int kept = memfd_create("kcmd-test-kept", MFD_CLOEXEC);
	int other = memfd_create("kcmd-test-other", MFD_CLOEXEC);
	char script[256];

	assert_true(kept >= 0 && other >= 0);
	/* exit 0 only if the kept fd is there and the other is not */
	snprintf(script, sizeof(script), "test -e /proc/self/fd/%d && ! test -e /proc/self/fd/%d",
	         kept, other);
	char *argv[] = {"/bin/sh", "-c", script, NULL};
	struct mgr_child_spec spec = {
	        .name = "fds", .group = "x", .argv = argv, .keep_fds = {kept}, .n_keep_fds = 1};

	assert_int_equal(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO), 0);
	assert_int_equal(mgr_sup_new(loop, on_exit_cb, &e, &sup), 0);
	assert_int_equal(mgr_sup_add(sup, &spec, &c), 0);
	assert_int_equal(mgr_child_start(c), 0);
	run_until_exits(loop, &e, 1, 2000000);
	assert_int_equal(e.last.last_code, CLD_EXITED);
	assert_int_equal(e.last.last_status, 0);
	/* The manager's own copy keeps CLOEXEC. */
	assert_true(fcntl(kept, F_GETFD) & FD_CLOEXEC);
	mgr_sup_free(sup);
	ipc_loop_free(loop);
	close(kept);
	close(other);
}

/* A manager killed with SIGKILL takes its children with it (PR_SET_PDEATHSIG). */
static void test_children_die_with_manager(void **state)
{
	(void)state;
	int p[2];
	pid_t child = 0;

	assert_int_equal(pipe(p), 0);
	pid_t mgr = fork();
	assert_true(mgr >= 0);
	if (mgr == 0) {
		struct ipc_loop *loop;
		struct mgr_supervisor *sup;
		struct mgr_child *c;
		struct mgr_child_info info;
		char *argv[] = {"/bin/sleep", "100", NULL};
		struct mgr_child_spec spec = {
		        .name = "s", .group = "w", .argv = argv, .restart = true};
		if (ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO) < 0 ||
		    mgr_sup_new(loop, NULL, NULL, &sup) < 0 || mgr_sup_add(sup, &spec, &c) < 0 ||
		    mgr_child_start(c) < 0)
			_exit(1);
		mgr_child_get_info(c, &info);
		if (write(p[1], &info.pid, sizeof(info.pid)) != sizeof(info.pid))
			_exit(1);
		for (;;)
			ipc_loop_run_once(loop, 1000000);
	}
	close(p[1]);
	assert_int_equal(read(p[0], &child, sizeof(child)), sizeof(child));
	close(p[0]);
	assert_false(pid_gone(child));
	assert_int_equal(kill(mgr, SIGKILL), 0);
	assert_int_equal(waitpid(mgr, NULL, 0), mgr);
	for (int i = 0; i < 100 && !pid_gone(child); i++)
		usleep(20000);
	assert_true(pid_gone(child));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_one_shot_child_and_bad_spec),
	        cmocka_unit_test(test_on_demand_child),
	        cmocka_unit_test(test_fd_inheritance),
	        cmocka_unit_test(test_failed_start_is_retried),
	        cmocka_unit_test(test_exec_failure_is_a_failed_start),
	        cmocka_unit_test(test_killed_child_restarts_and_stop),
	        cmocka_unit_test(test_start_before_stopped_child_is_reaped),
	        cmocka_unit_test(test_children_die_with_manager),
	        cmocka_unit_test(test_restart_with_backoff),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
