/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/garbagecollector/tests/test-limiter.c: the GC's shared token bucket: burst then qps,
 * refill after idle time, one bucket for several mappings and processes, no limit at qps 0.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "kube/limiter.h"

#define MS 1000000LL

static void test_burst_then_rate(void **state)
{
	(void)state;
	struct kube_limiter *l;
	assert_int_equal(kube_limiter_open(-1, 40, 30, &l), 0);
	int64_t now = 1000 * MS;
	for (int i = 0; i < 30; i++)
		assert_int_equal(kube_limiter_reserve(l, now), 0);
	/* the 31st waits one interval (25 ms at 40 qps), the 32nd two */
	assert_int_equal(kube_limiter_reserve(l, now), 25 * MS);
	assert_int_equal(kube_limiter_reserve(l, now), 50 * MS);
	/* after a long idle time the bucket is full again, but not fuller */
	now += 10000 * MS;
	for (int i = 0; i < 30; i++)
		assert_int_equal(kube_limiter_reserve(l, now), 0);
	assert_true(kube_limiter_reserve(l, now) > 0);
	kube_limiter_free(l);
}

static void test_no_limit(void **state)
{
	(void)state;
	struct kube_limiter *l;
	assert_int_equal(kube_limiter_open(-1, 0, 1, &l), 0);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(kube_limiter_reserve(l, 0), 0);
	kube_limiter_free(l);
	kube_limiter_wait(NULL);
}

static void test_shared_between_mappings(void **state)
{
	(void)state;
	int fd = kube_limiter_memfd_create();
	assert_true(fd >= 0);
	struct kube_limiter *a, *b;
	assert_int_equal(kube_limiter_open(fd, 10, 2, &a), 0);
	assert_int_equal(kube_limiter_open(fd, 10, 2, &b), 0);
	int64_t now = 5000 * MS;
	assert_int_equal(kube_limiter_reserve(a, now), 0);
	assert_int_equal(kube_limiter_reserve(b, now), 0);
	/* the burst of 2 is spent by the two together */
	assert_int_equal(kube_limiter_reserve(a, now), 100 * MS);
	assert_int_equal(kube_limiter_reserve(b, now), 200 * MS);
	/* issue 21: sealed against resizing, so no process can pull the bucket from under the
	 * others' mappings (SIGBUS) */
	assert_true(ftruncate(fd, 0) < 0);
	assert_int_equal(errno, EPERM);
	assert_true(ftruncate(fd, 1 << 20) < 0);
	assert_int_equal(kube_limiter_reserve(a, now), 300 * MS);
	kube_limiter_free(a);
	kube_limiter_free(b);
	close(fd);
}

static void test_shared_between_processes(void **state)
{
	(void)state;
	int fd = kube_limiter_memfd_create();
	assert_true(fd >= 0);
	/* 4 processes x 10 requests at 200 qps, burst 1: 40 slots need >= 39 intervals (195 ms) */
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int p = 0; p < 4; p++) {
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			struct kube_limiter *l;
			if (kube_limiter_open(fd, 200, 1, &l) < 0)
				_exit(1);
			for (int i = 0; i < 10; i++)
				kube_limiter_wait(l);
			_exit(0);
		}
	}
	for (int p = 0; p < 4; p++) {
		int st;
		assert_true(wait(&st) > 0);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	int64_t el = (t1.tv_sec - t0.tv_sec) * 1000 * MS + (t1.tv_nsec - t0.tv_nsec);
	assert_true(el >= 190 * MS);
	close(fd);
}

static void test_bad_fd(void **state)
{
	(void)state;
	struct kube_limiter *l;
	int fd = memfd_create("not-a-limiter", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 4096), 0);
	assert_int_equal(kube_limiter_open(fd, 1, 1, &l), -EBADMSG);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_burst_then_rate),
	        cmocka_unit_test(test_no_limit),
	        cmocka_unit_test(test_shared_between_mappings),
	        cmocka_unit_test(test_shared_between_processes),
	        cmocka_unit_test(test_bad_fd),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
