/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-loop: every source kind of ipc/loop on both backends (io_uring, then epoll; io_uring is
 * skipped, not failed, where the kernel refuses it). Plain program: 0 pass, 1 fail, 77 skip.
 */
#include <liburing.h>

#include "ipc/loop.h"
#include "ipc/tests/tests.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static int hits[8];
static uint64_t order[8];
static int norder;

static int on_timer(struct ipc_source *s, uint64_t now, void *ud)
{
	(void)s;
	(void)now;
	order[norder++] = (uintptr_t)ud;
	return 0;
}

static void test_timers(struct ipc_loop *l)
{
	struct ipc_source *a, *b, *c;
	uint64_t now = ipc_now_usec();
	norder = 0;
	CHECK_EQ(ipc_loop_add_timer(l, &a, now + 30000, on_timer, (void *)1), 0);
	CHECK_EQ(ipc_loop_add_timer(l, &b, now + 10000, on_timer, (void *)2), 0);
	CHECK_EQ(ipc_loop_add_timer(l, &c, now + 20000, on_timer, (void *)3), 0);
	CHECK_EQ(ipc_source_set_time(c, 0), 0);          /* disarmed: never fires */
	CHECK_EQ(ipc_source_set_time(a, now + 5000), 0); /* moved earlier */
	while (norder < 2)
		CHECK(ipc_loop_run_once(l, 100000) >= 0);
	CHECK(ipc_now_usec() - now >= 10000);
	CHECK_EQ(order[0], 1);
	CHECK_EQ(order[1], 2);
	CHECK_EQ(ipc_loop_run_once(l, 40000), 0);
	CHECK_EQ(norder, 2);
	/* re-arm after firing, then free while armed */
	CHECK_EQ(ipc_source_set_time(a, ipc_now_usec() + 1000), 0);
	while (norder < 3)
		CHECK(ipc_loop_run_once(l, 100000) >= 0);
	CHECK_EQ(ipc_source_set_time(b, ipc_now_usec() + 1000), 0);
	ipc_source_free(b);
	CHECK_EQ(ipc_loop_run_once(l, 5000), 0);
	CHECK_EQ(norder, 3);
	ipc_source_free(a);
	ipc_source_free(c);
}

static struct ipc_source *self_free_src;
static int on_io(struct ipc_source *s, int fd, uint32_t revents, void *ud)
{
	int i = (int)(uintptr_t)ud;
	hits[i]++;
	if (revents & POLLIN) {
		char buf[64];
		ssize_t r = read(fd, buf, sizeof(buf));
		(void)r;
	}
	if (s == self_free_src) {
		ipc_source_free(s);
		self_free_src = NULL;
	}
	return 0;
}

static void test_io(struct ipc_loop *l)
{
	int sv[2];
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	struct ipc_source *s;
	memset(hits, 0, sizeof(hits));
	CHECK_EQ(ipc_loop_add_io(l, &s, sv[0], POLLIN, on_io, (void *)0), 0);
	CHECK_EQ(ipc_loop_run_once(l, 1000), 0);
	CHECK_EQ(write(sv[1], "x", 1), 1);
	CHECK_EQ(ipc_loop_run_once(l, 100000), 1);
	CHECK_EQ(hits[0], 1);
	/* libcurl style: switch to POLLOUT (writable at once), then to nothing */
	CHECK_EQ(ipc_source_set_io_events(s, POLLOUT), 0);
	for (int i = 0; i < 10 && hits[0] < 2; i++)
		CHECK(ipc_loop_run_once(l, 100000) >= 0);
	CHECK_EQ(hits[0], 2);
	CHECK_EQ(ipc_source_set_io_events(s, 0), 0);
	int before = hits[0];
	for (int i = 0; i < 3; i++)
		CHECK(ipc_loop_run_once(l, 2000) >= 0);
	CHECK_EQ(hits[0], before);
	/* level-triggered: unread data keeps firing; free from inside the callback */
	CHECK_EQ(ipc_source_set_io_events(s, POLLIN), 0);
	self_free_src = s;
	CHECK_EQ(write(sv[1], "yy", 2), 2);
	CHECK_EQ(ipc_loop_run_once(l, 100000), 1);
	CHECK(self_free_src == NULL);
	CHECK_EQ(write(sv[1], "z", 1), 1);
	before = hits[0];
	for (int i = 0; i < 3; i++)
		CHECK(ipc_loop_run_once(l, 2000) >= 0);
	CHECK_EQ(hits[0], before);
	close(sv[0]);
	close(sv[1]);
}

static void test_pidfd(struct ipc_loop *l)
{
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		usleep(20000);
		_exit(0);
	}
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	CHECK(pfd >= 0);
	struct ipc_source *s;
	memset(hits, 0, sizeof(hits));
	CHECK_EQ(ipc_loop_add_pidfd(l, &s, pfd, on_io, (void *)1), 0);
	while (hits[1] == 0)
		CHECK(ipc_loop_run_once(l, 1000000) >= 0);
	for (int i = 0; i < 3; i++)
		CHECK(ipc_loop_run_once(l, 2000) >= 0);
	CHECK_EQ(hits[1], 1); /* one-shot */
	ipc_source_free(s);
	CHECK_EQ(waitpid(pid, NULL, 0), pid);
	close(pfd);
}

static int on_sig(struct ipc_source *s, const struct signalfd_siginfo *si, void *ud)
{
	(void)s;
	(void)ud;
	hits[2] = (int)si->ssi_signo;
	return 0;
}

static void test_signal(struct ipc_loop *l)
{
	struct ipc_source *s;
	hits[2] = 0;
	CHECK_EQ(ipc_loop_add_signal(l, &s, SIGUSR1, on_sig, NULL), 0);
	CHECK_EQ(kill(getpid(), SIGUSR1), 0);
	while (hits[2] == 0)
		CHECK(ipc_loop_run_once(l, 1000000) >= 0);
	CHECK_EQ(hits[2], SIGUSR1);
	ipc_source_free(s);
}

static int fres[4];
static int on_futex(struct ipc_source *s, int res, void *ud)
{
	(void)s;
	int i = (int)(uintptr_t)ud;
	fres[i] = res;
	hits[4 + i]++;
	return 0;
}

static void test_futex(struct ipc_loop *l)
{
	uint32_t *w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(w != MAP_FAILED);
	memset(hits, 0, sizeof(hits));
	struct ipc_source *s, *t;
	/* value already differs: -EAGAIN */
	w[0] = 5;
	CHECK_EQ(ipc_loop_add_futex(l, &s, &w[0], 4, on_futex, (void *)0), 0);
	while (hits[4] == 0)
		CHECK(ipc_loop_run_once(l, 1000000) >= 0);
	CHECK_EQ(fres[0], -EAGAIN);
	CHECK(!ipc_source_futex_armed(s));
	/* woken cross-process: a child bumps the word and wakes it */
	CHECK_EQ(ipc_source_futex_arm(s, 5), 0);
	CHECK_EQ(ipc_loop_run_once(l, 5000), 0);
	CHECK_EQ(hits[4], 1);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		usleep(10000);
		__atomic_store_n(&w[0], 6, __ATOMIC_RELEASE);
		ipc_futex_wake(&w[0], 1);
		_exit(0);
	}
	while (hits[4] == 1)
		CHECK(ipc_loop_run_once(l, 1000000) >= 0);
	CHECK(fres[0] == 0 || fres[0] == -EAGAIN);
	waitpid(pid, NULL, 0);
	/* two armed words, one woken by a deferred (op 52 on io_uring) wake from the loop */
	w[16] = 0;
	CHECK_EQ(ipc_source_futex_arm(s, 6), 0);
	CHECK_EQ(ipc_loop_add_futex(l, &t, &w[16], 0, on_futex, (void *)1), 0);
	CHECK_EQ(ipc_loop_run_once(l, 2000), 0);
	__atomic_store_n(&w[16], 1, __ATOMIC_RELEASE);
	CHECK_EQ(ipc_loop_futex_wake(l, &w[16], 1), 0);
	while (hits[5] == 0)
		CHECK(ipc_loop_run_once(l, 1000000) >= 0);
	CHECK_EQ(hits[4], 2);
	/* a masked wait (shm/feed.h F9): a wake of other bits leaves it armed on io_uring (epoll's
	 * futex_waitv has no mask: there it fires, a wider wake), one of its bits completes it */
	bool uring = strcmp(ipc_loop_backend(l), "io_uring") == 0;
	ipc_source_futex_set_mask(t, 1u << 2);
	CHECK_EQ(ipc_source_futex_arm(t, 1), 0);
	CHECK_EQ(ipc_loop_run_once(l, 2000), 0);
	CHECK_EQ(ipc_loop_futex_wake_bits(l, &w[16], 1, 1u << 5), 0);
	for (int i = 0; i < 3 && hits[5] == 1; i++)
		CHECK(ipc_loop_run_once(l, 20000) >= 0);
	CHECK_EQ(hits[5], uring ? 1 : 2);
	if (uring) {
		CHECK(ipc_source_futex_armed(t));
		CHECK_EQ(ipc_loop_futex_wake_bits(l, &w[16], 1, 1u << 2 | 1u << 9), 0);
		while (hits[5] == 1)
			CHECK(ipc_loop_run_once(l, 1000000) >= 0);
		CHECK_EQ(fres[1], 0);
	}
	/* free an armed wait: it must never fire */
	ipc_source_free(s);
	__atomic_store_n(&w[0], 7, __ATOMIC_RELEASE);
	ipc_futex_wake(&w[0], 1);
	for (int i = 0; i < 3; i++)
		CHECK(ipc_loop_run_once(l, 2000) >= 0);
	CHECK_EQ(hits[4], 2);
	ipc_source_free(t);
	munmap(w, 4096);
}

static int on_fail_timer(struct ipc_source *s, uint64_t now, void *ud)
{
	(void)s;
	(void)now;
	(void)ud;
	return -EPROTO;
}

static void test_run_error(struct ipc_loop *l)
{
	struct ipc_source *s;
	CHECK_EQ(ipc_loop_add_timer(l, &s, ipc_now_usec() + 1000, on_fail_timer, NULL), 0);
	CHECK_EQ(ipc_loop_run(l), -EPROTO);
	ipc_source_free(s);
}

static int posts;
static int on_post(struct ipc_source *s, uint64_t now, void *ud)
{
	(void)now;
	(void)ud;
	posts++;
	if (posts == 1)
		ipc_source_post_enable(
		        s); /* re-enabling from the callback runs it next iteration */
	return 0;
}

static void test_post(struct ipc_loop *l)
{
	struct ipc_source *p;
	posts = 0;
	CHECK_EQ(ipc_loop_add_post(l, &p, on_post, NULL), 0);
	CHECK_EQ(ipc_loop_run_once(l, 0), 0); /* not enabled: nothing */
	ipc_source_post_enable(p);
	ipc_source_post_enable(p); /* coalesced */
	uint64_t t0 = ipc_now_usec();
	CHECK_EQ(ipc_loop_run_once(l, 1000000), 1); /* pending post: no sleep */
	CHECK(ipc_now_usec() - t0 < 500000);
	CHECK_EQ(posts, 1);
	CHECK_EQ(ipc_loop_run_once(l, 1000000), 1);
	CHECK_EQ(posts, 2);
	CHECK_EQ(ipc_loop_run_once(l, 1000), 0);
	ipc_source_post_enable(p);
	ipc_source_free(p); /* freed while pending: never runs */
	CHECK_EQ(ipc_loop_run_once(l, 1000), 0);
	CHECK_EQ(posts, 2);
}

/* In a child: a seccomp filter refuses io_uring_setup with EPERM, as the container runtimes'
 * default profiles do. AUTO must fall back to epoll and say why; forcing io_uring must fail. */
static void test_seccomp_fallback(void)
{
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		struct sock_filter f[] = {
		        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_io_uring_setup, 0, 1),
		        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
		        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};
		CHECK_EQ(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
		CHECK_EQ(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog), 0);
		unsetenv("KCMD_IPC_BACKEND");
		struct ipc_loop *l = NULL;
		CHECK_EQ(ipc_loop_new(&l, IPC_LOOP_BACKEND_AUTO), 0);
		CHECK(strcmp(ipc_loop_backend(l), "epoll") == 0);
		CHECK_EQ(ipc_loop_fallback_reason(l), EPERM);
		test_timers(l);
		test_futex(l);
		ipc_loop_free(l);
		CHECK_EQ(ipc_loop_new(&l, IPC_LOOP_BACKEND_URING), -EPERM);
		setenv("KCMD_IPC_BACKEND", "uring", 1);
		CHECK_EQ(ipc_loop_new(&l, IPC_LOOP_BACKEND_AUTO), -EPERM);
		_exit(0);
	}
	int st;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* forcing epoll by environment, with io_uring available */
	setenv("KCMD_IPC_BACKEND", "epoll", 1);
	struct ipc_loop *l = NULL;
	CHECK_EQ(ipc_loop_new(&l, IPC_LOOP_BACKEND_AUTO), 0);
	CHECK(strcmp(ipc_loop_backend(l), "epoll") == 0);
	CHECK_EQ(ipc_loop_fallback_reason(l), 0);
	ipc_loop_free(l);
	unsetenv("KCMD_IPC_BACKEND");
}

/* Issue 21: the io_uring ring accepts only the loop's own opcodes; anything else (a NOP, an
 * OPENAT, a READ) is refused by the kernel with -EACCES. An allowed opcode reaches the kernel
 * (POLL_REMOVE of nothing: -ENOENT). The epoll backend has no ring. */
static void test_ring_restrictions(void)
{
	_cleanup_ipc_loop_ struct ipc_loop *l = NULL;
	if (ipc_loop_new(&l, IPC_LOOP_BACKEND_URING) < 0)
		return;
	CHECK(ipc_loop_uring_restricted(l));
	CHECK_EQ(ipc_loop__test_uring_op(l, IORING_OP_NOP), -EACCES);
	CHECK_EQ(ipc_loop__test_uring_op(l, IORING_OP_OPENAT), -EACCES);
	CHECK_EQ(ipc_loop__test_uring_op(l, IORING_OP_READ), -EACCES);
	CHECK_EQ(ipc_loop__test_uring_op(l, IORING_OP_POLL_REMOVE), -ENOENT);
	_cleanup_ipc_loop_ struct ipc_loop *e = NULL;
	CHECK_EQ(ipc_loop_new(&e, IPC_LOOP_BACKEND_EPOLL), 0);
	CHECK(!ipc_loop_uring_restricted(e));
	CHECK_EQ(ipc_loop__test_uring_op(e, IORING_OP_NOP), -EOPNOTSUPP);
}

static int run_backend(enum ipc_loop_backend_kind kind)
{
	_cleanup_ipc_loop_ struct ipc_loop *l = NULL;
	int r = ipc_loop_new(&l, kind);
	if (r < 0) {
		fprintf(stderr, "backend %d unavailable: %s\n", kind, strerror(-r));
		return 77;
	}
	fprintf(stderr, "backend %s\n", ipc_loop_backend(l));
	test_timers(l);
	test_io(l);
	test_pidfd(l);
	test_signal(l);
	test_futex(l);
	test_post(l);
	test_run_error(l);
	return 0;
}

/* The skip rule checked on this very program: run again with io_uring refused by seccomp, it
 * must exit 77 (SKIP), not 0 (a PASS that tested half of it). */
static void test_unavailable_uring_is_skip(void)
{
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		struct sock_filter f[] = {
		        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_io_uring_setup, 0, 1),
		        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
		        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
			_exit(3);
		setenv("KCMD_TEST_LOOP_INNER", "1", 1);
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0)
			dup2(null, 2);
		execl("/proc/self/exe", "test-loop", (char *)NULL);
		_exit(4);
	}
	int st;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 77);
}

int main(void)
{
	int a = run_backend(IPC_LOOP_BACKEND_URING);
	int b = run_backend(IPC_LOOP_BACKEND_EPOLL);
	CHECK_EQ(b, 0);
	test_ring_restrictions();
	test_seccomp_fallback();
	if (!getenv("KCMD_TEST_LOOP_INNER"))
		test_unavailable_uring_is_skip();
	if (a != 0) { /* half the program did not run: a SKIP, not a PASS (epoll passed) */
		fprintf(stderr, "SKIP: io_uring unavailable (epoll backend passed)\n");
		return 77;
	}
	fprintf(stderr, "ok (io_uring tested)\n");
	return 0;
}
