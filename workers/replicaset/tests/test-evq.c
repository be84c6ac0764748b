/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/replicaset/tests/test-evq.c: the controller's shared event queue (evq.h): FIFO,
 * bounded with drops (client-go's broadcaster queue), truncation of long fields, a waiting pop
 * woken by another process's push, several producer processes on the expectations memfd's
 * region, producers killed with SIGKILL in the middle of a push (robust mutex), the sink lock
 * (one holder; taken over when the holder is killed), and the point of it all: events of one
 * ReplicaSet pushed by two worker processes meet one correlator, so they are aggregated and
 * spam-filtered as upstream's one recorder does (10 POSTs + 15 PATCHes for 30 creations, where
 * two per-process correlators would write 2 x (10 + 5)).
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "kube/evcorr.h"
#include "workers/replicaset/evq.h"
#include "workers/replicaset/expectations.h"

static struct rs_evq_rec rec(const char *name, const char *msg)
{
	struct rs_evq_rec r = {.t = 1};
	snprintf(r.ns, sizeof r.ns, "ns");
	snprintf(r.name, sizeof r.name, "%s", name);
	snprintf(r.uid, sizeof r.uid, "uid-%s", name);
	snprintf(r.rv, sizeof r.rv, "7");
	snprintf(r.type, sizeof r.type, "Normal");
	snprintf(r.reason, sizeof r.reason, "SuccessfulCreate");
	snprintf(r.message, sizeof r.message, "%s", msg);
	return r;
}

static int64_t ms_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* the shared region as the manager makes it */
static struct rs_evq *shared_queue(int *ret_fd)
{
	int fd = rs_exp_memfd_create(&(struct rs_exp_create_opts){.capacity = 64});
	assert_true(fd >= 0);
	uint64_t off = 0;
	assert_int_equal(rs_exp_evq_offset(fd, &off), 0);
	assert_true(off > 0 && off % 4096 == 0);
	struct rs_evq *q = NULL;
	assert_int_equal(rs_evq_attach(fd, off, &q), 0);
	*ret_fd = fd;
	return q;
}

static struct rs_evq *attach_again(int fd)
{
	uint64_t off = 0;
	struct rs_evq *q = NULL;
	if (rs_exp_evq_offset(fd, &off) < 0 || rs_evq_attach(fd, off, &q) < 0)
		return NULL;
	return q;
}

static void test_fifo_and_truncation(void **state)
{
	(void)state;
	struct rs_evq *q;
	struct rs_evq_rec r, out;
	assert_int_equal(rs_evq_new_private(&q), 0);
	assert_int_equal(rs_evq_pop(q, &out, 0), 0);
	for (int i = 0; i < 5; i++) {
		char m[32];
		snprintf(m, sizeof m, "m%d", i);
		r = rec("rs", m);
		assert_int_equal(rs_evq_push(q, &r), 0);
	}
	assert_int_equal(rs_evq_len(q), 5);
	for (int i = 0; i < 5; i++) {
		char m[32];
		snprintf(m, sizeof m, "m%d", i);
		assert_int_equal(rs_evq_pop(q, &out, 0), 1);
		assert_string_equal(out.message, m);
		assert_string_equal(out.name, "rs");
		assert_string_equal(out.rv, "7");
	}
	/* a field without room for its NUL is cut, never overflowed */
	memset(r.reason, 'x', sizeof r.reason);
	memset(r.message, 'y', sizeof r.message);
	assert_int_equal(rs_evq_push(q, &r), 0);
	assert_int_equal(rs_evq_pop(q, &out, 0), 1);
	assert_int_equal(strlen(out.reason), sizeof out.reason - 1);
	assert_int_equal(strlen(out.message), sizeof out.message - 1);
	rs_evq_free(q);
}

static void test_full_queue_drops(void **state)
{
	(void)state;
	struct rs_evq *q;
	struct rs_evq_rec r = rec("rs", "x"), out;
	assert_int_equal(rs_evq_new_private(&q), 0);
	for (int i = 0; i < RS_EVQ_CAP; i++)
		assert_int_equal(rs_evq_push(q, &r), 0);
	assert_int_equal(rs_evq_push(q, &r), -ENOBUFS);
	assert_int_equal(rs_evq_push(q, &r), -ENOBUFS);
	assert_int_equal(rs_evq_dropped(q), 2);
	assert_int_equal(rs_evq_len(q), RS_EVQ_CAP);
	assert_int_equal(rs_evq_pop(q, &out, 0), 1);
	assert_int_equal(rs_evq_push(q, &r), 0);
	assert_int_equal(rs_evq_len(q), RS_EVQ_CAP);
	rs_evq_free(q);
}

static void test_pop_waits_for_other_process(void **state)
{
	(void)state;
	int fd;
	struct rs_evq *q = shared_queue(&fd);
	struct rs_evq_rec out;
	int64_t t0 = ms_now();
	assert_int_equal(rs_evq_pop(q, &out, 200), 0);
	assert_true(ms_now() - t0 >= 190);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rs_evq *cq = attach_again(fd);
		usleep(200000);
		struct rs_evq_rec r = rec("child", "hello");
		_exit(cq && rs_evq_push(cq, &r) == 0 ? 0 : 1);
	}
	t0 = ms_now();
	assert_int_equal(rs_evq_pop(q, &out, 10000), 1);
	assert_true(ms_now() - t0 < 5000); /* woken, not timed out */
	assert_string_equal(out.message, "hello");
	int st;
	waitpid(pid, &st, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	rs_evq_free(q);
	close(fd);
}

/* 4 producer processes x 300 records: all arrive, each producer's in its order */
static void test_many_producers(void **state)
{
	(void)state;
	int fd;
	struct rs_evq *q = shared_queue(&fd);
	enum { P = 4, N = 300 };
	pid_t pids[P];
	for (int p = 0; p < P; p++) {
		pids[p] = fork();
		assert_true(pids[p] >= 0);
		if (pids[p] == 0) {
			struct rs_evq *cq = attach_again(fd);
			if (!cq)
				_exit(1);
			for (int i = 0; i < N; i++) {
				char name[16], m[32];
				snprintf(name, sizeof name, "p%d", p);
				snprintf(m, sizeof m, "%d", i);
				struct rs_evq_rec r = rec(name, m);
				if (rs_evq_push(cq, &r) < 0)
					_exit(2);
			}
			_exit(0);
		}
	}
	int next[P] = {0}, got = 0;
	struct rs_evq_rec out;
	int64_t end = ms_now() + 20000;
	while (got < P * N && ms_now() < end) {
		if (rs_evq_pop(q, &out, 100) != 1)
			continue;
		int p = out.name[1] - '0';
		assert_true(p >= 0 && p < P);
		assert_int_equal(atoi(out.message), next[p]);
		next[p]++;
		got++;
	}
	assert_int_equal(got, P * N);
	for (int p = 0; p < P; p++) {
		int st;
		waitpid(pids[p], &st, 0);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	assert_int_equal(rs_evq_dropped(q), 0);
	rs_evq_free(q);
	close(fd);
}

/* producers SIGKILLed at random points (also inside the queue's mutex): the queue goes on */
static void test_producer_killed_mid_push(void **state)
{
	(void)state;
	int fd;
	struct rs_evq *q = shared_queue(&fd);
	struct rs_evq_rec out, r = rec("parent", "after");
	srand(42);
	alarm(60); /* a dead owner never recovered would hang the pops below */
	for (int round = 0; round < 30; round++) {
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			struct rs_evq *cq = attach_again(fd);
			struct rs_evq_rec cr = rec("child", "spam");
			for (;;) {
				if (cq && rs_evq_push(cq, &cr) == -ENOBUFS) {
					struct rs_evq_rec o;
					(void)rs_evq_pop(cq, &o, 0);
				}
			}
		}
		usleep(1000 + (useconds_t)(rand() % 4000));
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		while (rs_evq_pop(q, &out, 0) == 1)
			assert_true(!strcmp(out.message, "spam"));
		assert_int_equal(rs_evq_push(q, &r), 0);
		assert_int_equal(rs_evq_pop(q, &out, 0), 1);
		assert_string_equal(out.message, "after");
	}
	alarm(0);
	rs_evq_free(q);
	close(fd);
}

/* one sink at a time; when the holder is killed, the next one takes over */
static void test_sink_lock_takeover(void **state)
{
	(void)state;
	int fd;
	struct rs_evq *q = shared_queue(&fd);
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rs_evq *cq = attach_again(fd);
		if (!cq || rs_evq_sink_lock(cq, 5000) != 1)
			_exit(1);
		(void)!write(pfd[1], "x", 1);
		pause();
		_exit(0);
	}
	char c;
	assert_int_equal(read(pfd[0], &c, 1), 1);
	assert_int_equal(rs_evq_sink_lock(q, 200), 0); /* held by the child */
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	assert_int_equal(rs_evq_sink_lock(q, 5000), 1); /* the dead holder's lock is ours */
	rs_evq_sink_unlock(q);
	assert_int_equal(rs_evq_sink_lock(q, 100), 1);
	rs_evq_sink_unlock(q);
	close(pfd[0]);
	close(pfd[1]);
	rs_evq_free(q);
	close(fd);
}

/* two workers create 15 pods each for one RS; the one sink correlates all 30 events */
static void test_one_correlator_for_all_workers(void **state)
{
	(void)state;
	int fd;
	struct rs_evq *q = shared_queue(&fd);
	for (int w = 0; w < 2; w++) {
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			struct rs_evq *cq = attach_again(fd);
			for (int i = 0; cq && i < 15; i++) {
				char m[64];
				snprintf(m, sizeof m, "Created pod: rs-w%d-%d", w, i);
				struct rs_evq_rec r = rec("rs", m);
				if (rs_evq_push(cq, &r) < 0)
					_exit(1);
			}
			_exit(cq ? 0 : 1);
		}
		int st;
		waitpid(pid, &st, 0);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	struct kube_evc *c;
	assert_int_equal(kube_evc_new(&c), 0);
	struct rs_evq_rec out;
	int creates = 0, patches = 0, skips = 0;
	int64_t now = INT64_C(1767225600) * 1000000000;
	while (rs_evq_pop(q, &out, 0) == 1) {
		struct kube_evc_event e = {.component = "replicaset-controller",
		                           .kind = "ReplicaSet",
		                           .ns = out.ns,
		                           .name = out.name,
		                           .uid = out.uid,
		                           .api_version = "apps/v1",
		                           .type = out.type,
		                           .reason = out.reason,
		                           .message = out.message};
		struct kube_evc_result res;
		assert_int_equal(kube_evc_correlate(c, &e, now++, &res), 0);
		creates += res.action == KUBE_EVC_CREATE;
		patches += res.action == KUBE_EVC_PATCH;
		skips += res.action == KUBE_EVC_SKIP;
		kube_evc_result_free(&res);
	}
	assert_int_equal(creates, 10); /* 9 single + the combined Event */
	assert_int_equal(patches, 15); /* the combined Event counted up to the spam burst (25) */
	assert_int_equal(skips, 5);
	kube_evc_free(c);
	rs_evq_free(q);
	close(fd);
}

static void test_bad_region(void **state)
{
	(void)state;
	struct rs_evq *q = NULL;
	uint64_t off = 0;
	assert_int_equal(rs_exp_evq_offset(-1, &off), -EINVAL);
	int fd = memfd_create("not-expectations", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 1 << 20), 0);
	assert_int_equal(rs_exp_evq_offset(fd, &off), -EPROTO);
	assert_int_equal(rs_evq_attach(fd, 0, &q), -EPROTO); /* too small for the region */
	assert_int_equal(ftruncate(fd, (off_t)rs_evq_region_size()), 0);
	assert_int_equal(rs_evq_attach(fd, 0, &q), -EPROTO); /* zeroes: no magic */
	assert_int_equal(rs_evq_attach(fd, 100, &q), -EINVAL);
	assert_null(q);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_fifo_and_truncation),
	        cmocka_unit_test(test_full_queue_drops),
	        cmocka_unit_test(test_pop_waits_for_other_process),
	        cmocka_unit_test(test_many_producers),
	        cmocka_unit_test(test_producer_killed_mid_push),
	        cmocka_unit_test(test_sink_lock_takeover),
	        cmocka_unit_test(test_one_correlator_for_all_workers),
	        cmocka_unit_test(test_bad_region),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
