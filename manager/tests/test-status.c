/* SPDX-License-Identifier: Apache-2.0 */
/* Tests of the status page kcmctl status reads: a round trip through the memfd, a reader in
 * another process while the writer keeps publishing (never a torn copy), writers killed with -9
 * mid-publication under a reading process, a foreign memfd. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "manager/status.h"

static struct mgr_status st, got;

/* In a forked child: die with the test program, even when an assertion ends it early. */
static void die_with_parent(void)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}

static void fill(struct mgr_status *s, uint32_t gen)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->identity, sizeof(s->identity), "host_%u", gen);
	snprintf(s->holder, sizeof(s->holder), "host_%u", gen);
	snprintf(s->lease, sizeof(s->lease), "kube-system/kcmd");
	s->leader_elect = 1;
	s->leading = gen & 1;
	s->manager_pid = (int32_t)gen;
	s->n_children = 1 + gen % MGR_STATUS_MAX_CHILDREN;
	for (uint32_t i = 0; i < s->n_children; i++) {
		snprintf(s->children[i].name, sizeof(s->children[i].name), "worker-%u", i);
		s->children[i].pid = (int32_t)gen;
		s->children[i].restarts = gen;
	}
}

static void test_round_trip(void **state)
{
	(void)state;
	struct mgr_status_page *p;
	int fd;

	assert_int_equal(mgr_status_create(&p, &fd), 0);
	fill(&st, 7);
	mgr_status_publish(p, &st);
	assert_int_equal(mgr_status_read(fd, &got), 0);
	assert_string_equal(got.identity, "host_7");
	assert_int_equal(got.n_children, 8);
	assert_string_equal(got.children[7].name, "worker-7");
	assert_int_equal(got.children[3].restarts, 7);
	/* issue 21: the manager's mapping is the only writable one */
	assert_true(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED);
	assert_int_equal(errno, EPERM);
	assert_true(write(fd, "x", 1) < 0);
	assert_int_equal(errno, EPERM);

	/* a reader process never sees a mix of two publications */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		for (int i = 0; i < 20000; i++) {
			if (mgr_status_read(fd, &got) < 0)
				continue;
			uint32_t gen = (uint32_t)got.manager_pid;
			char want[32];
			snprintf(want, sizeof(want), "host_%u", gen);
			if (strcmp(got.identity, want) ||
			    got.n_children != 1 + gen % MGR_STATUS_MAX_CHILDREN ||
			    got.children[got.n_children - 1].restarts != gen)
				_exit(1);
		}
		_exit(0);
	}
	for (uint32_t g = 8; g < 200000; g++) {
		fill(&st, g);
		mgr_status_publish(p, &st);
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			pid = 0;
			break;
		}
	}
	int ws = 0;
	if (pid)
		assert_int_equal(waitpid(pid, &ws, 0), pid);
	assert_true(!pid || (WIFEXITED(ws) && WEXITSTATUS(ws) == 0));
	mgr_status_free(p);
	close(fd);
}

/* A consistent copy: everything derived from one generation, as fill() writes it. */
static bool consistent(const struct mgr_status *s)
{
	uint32_t gen = (uint32_t)s->manager_pid;
	char want[32];
	snprintf(want, sizeof(want), "host_%u", gen);
	if (strcmp(s->identity, want) || strcmp(s->holder, want) || s->leading != (gen & 1) ||
	    s->n_children != 1 + gen % MGR_STATUS_MAX_CHILDREN)
		return false;
	for (uint32_t i = 0; i < s->n_children; i++)
		if (s->children[i].pid != (int32_t)gen || s->children[i].restarts != gen)
			return false;
	return true;
}

static void writer_loop(struct mgr_status_page *p, uint32_t gen)
{
	static struct mgr_status w;
	for (;; gen++) {
		fill(&w, gen);
		mgr_status_publish(p, &w);
	}
}

static volatile sig_atomic_t stop_reading;
static void on_term(int sig)
{
	(void)sig;
	stop_reading = 1;
}

/* Writers killed with SIGKILL mid-publication (S1-S3, "Death"): a reader process never gets a
 * mixed copy, only whole publications or -EAGAIN; a page left odd answers -EAGAIN within a
 * bounded time; the next writer on the same page makes it readable again. */
static void test_writer_killed(void **state)
{
	(void)state;
	struct mgr_status_page *p;
	int fd, pp[2];

	assert_int_equal(mgr_status_create(&p, &fd), 0);
	assert_int_equal(pipe(pp), 0);
	fill(&st, 1);
	mgr_status_publish(p, &st);

	pid_t rd = fork();
	assert_true(rd >= 0);
	if (rd == 0) {
		die_with_parent();
		long res[3] = {0, 0, 0}; /* whole copies, -EAGAIN, mixed copies or other errors */
		signal(SIGTERM, on_term);
		while (!stop_reading) {
			int r = mgr_status_read(fd, &got);
			if (r == 0 && consistent(&got))
				res[0]++;
			else if (r == -EAGAIN)
				res[1]++;
			else
				res[2]++;
		}
		(void)!write(pp[1], res, sizeof(res));
		_exit(0);
	}

	srand((unsigned)getpid());
	int odd_left = 0;
	uint32_t gen = 2;
	for (int round = 0; round < 30; round++, gen += 1u << 20) {
		pid_t w = fork();
		assert_true(w >= 0);
		if (w == 0) {
			die_with_parent();
			writer_loop(p, gen);
		}
		usleep(2000 + rand() % 10000);
		assert_int_equal(kill(w, SIGKILL), 0);
		assert_int_equal(waitpid(w, NULL, 0), w);
		/* the writer is gone: the page holds a whole publication, or is left odd */
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		int r = mgr_status_read(fd, &got);
		clock_gettime(CLOCK_MONOTONIC, &b);
		if (r == -EAGAIN) {
			odd_left++;
			assert_true((b.tv_sec - a.tv_sec) * 1000 +
			                    (b.tv_nsec - a.tv_nsec) / 1000000 <
			            2000);
		} else {
			assert_int_equal(r, 0);
			assert_true(consistent(&got));
		}
	}
	/* a writer on a page left odd rounds seq up and publishes normally */
	fill(&st, 77);
	mgr_status_publish(p, &st);
	assert_int_equal(mgr_status_read(fd, &got), 0);
	assert_true(consistent(&got));
	assert_int_equal(got.manager_pid, 77);

	long res[3];
	kill(rd, SIGTERM);
	int ws;
	assert_int_equal(waitpid(rd, &ws, 0), rd);
	assert_int_equal(read(pp[0], res, sizeof(res)), (ssize_t)sizeof(res));
	print_message(
	        "30 writers killed (%d left the page odd); reader: %ld whole copies, %ld -EAGAIN, "
	        "%ld mixed\n",
	        odd_left, res[0], res[1], res[2]);
	assert_int_equal(res[2], 0);
	assert_true(res[0] > 0);
	close(pp[0]);
	close(pp[1]);
	mgr_status_free(p);
	close(fd);
}

static void test_foreign(void **state)
{
	(void)state;
	int fd = memfd_create("not-status", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(mgr_status_read(fd, &got), -EINVAL);
	close(fd);
	assert_null(mgr_status_free(NULL));
	mgr_status_publish(NULL, &st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_round_trip),
	        cmocka_unit_test(test_writer_killed),
	        cmocka_unit_test(test_foreign),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
