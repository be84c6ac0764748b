/* SPDX-License-Identifier: Apache-2.0 */
/* The workqueue metric family rendered from a real queue's shared counters. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipc/loop.h"
#include "ipc/queue.h"
#include "manager/metrics.h"

struct ctx {
	int fd;
};

static void render(struct mgr_metrics_buf *b, void *u)
{
	struct ctx *c = u;
	struct ipc_queue_metrics m;

	mgr_metrics_workqueue_headers(b);
	assert_int_equal(ipc_queue_metrics_read(c->fd, &m), 0);
	mgr_metrics_workqueue(b, &m);
}

static void test_workqueue_family(void **state)
{
	(void)state;
	struct ipc_loop *loop;
	struct ipc_queue_owner *o;
	struct ctx c;
	char *text;
	size_t len;

	c.fd = ipc_queue_memfd_create("replicaset");
	assert_true(c.fd >= 0);
	assert_int_equal(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO), 0);
	assert_int_equal(ipc_queue_owner_new(&o, loop, c.fd, NULL), 0);
	assert_int_equal(ipc_queue_owner_add(o, "ns/a"), 0);
	assert_int_equal(ipc_queue_owner_add(o, "ns/b"), 0);
	assert_int_equal(ipc_queue_owner_add(o, "ns/a"), 0); /* dedup: still two waiting */
	ipc_loop_run_once(loop, 0);

	assert_int_equal(mgr_metrics_render(render, &c, &text, &len), 0);
	assert_int_equal(strlen(text), len);
	assert_non_null(strstr(text, "# TYPE workqueue_depth gauge\n"));
	assert_non_null(strstr(text, "# TYPE workqueue_queue_duration_seconds histogram\n"));
	assert_non_null(strstr(text, "workqueue_depth{name=\"replicaset\"} 2\n"));
	assert_non_null(strstr(text, "workqueue_retries_total{name=\"replicaset\"} 0\n"));
	assert_non_null(strstr(
	        text, "workqueue_queue_duration_seconds_bucket{name=\"replicaset\",le=\"1e-08\"}"));
	assert_non_null(strstr(
	        text, "workqueue_queue_duration_seconds_bucket{name=\"replicaset\",le=\"10\"}"));
	assert_non_null(strstr(
	        text,
	        "workqueue_work_duration_seconds_bucket{name=\"replicaset\",le=\"+Inf\"} 0\n"));
	assert_non_null(strstr(
	        text, "workqueue_longest_running_processor_seconds{name=\"replicaset\"} 0\n"));
	/* adds_total counts every Add call client-go counts (the duplicate is not an add). */
	const char *adds = strstr(text, "workqueue_adds_total{name=\"replicaset\"} ");
	assert_non_null(adds);
	long n = strtol(adds + strlen("workqueue_adds_total{name=\"replicaset\"} "), NULL, 10);
	assert_true(n == 2);
	free(text);
	ipc_queue_owner_free(o);
	ipc_loop_free(loop);
	close(c.fd);
}

/* kcmd's own family: a key parked after its worker crashed on it is counted and shown. */
static void test_parked_keys_family(void **state)
{
	(void)state;
	struct ipc_loop *loop;
	struct ipc_queue_owner *o;
	struct ipc_queue_owner_config qc = {.park_after = 1};
	struct ctx c;
	char *text;
	size_t len;

	c.fd = ipc_queue_memfd_create("replicaset");
	assert_true(c.fd >= 0);
	assert_int_equal(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO), 0);
	assert_int_equal(ipc_queue_owner_new(&o, loop, c.fd, &qc), 0);
	assert_int_equal(ipc_queue_owner_add(o, "ns/poison"), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct ipc_queue *w;
		char key[IPC_QUEUE_KEY_MAX + 1];
		if (ipc_queue_attach(&w, c.fd, IPC_QUEUE_WORKER, 1) < 0 ||
		    ipc_queue_get(w, key, sizeof(key), 5000000) < 0)
			_exit(2);
		raise(SIGKILL); /* a crash in the middle of the sync */
	}
	int st;
	while (waitpid(pid, &st, WNOHANG) == 0)
		ipc_loop_run_once(loop, 1000);
	assert_true(WIFSIGNALED(st));
	struct ipc_queue_metrics m = {0};
	uint64_t end = ipc_now_usec() + 5000000;
	while (m.parked == 0 && ipc_now_usec() < end) {
		ipc_loop_run_once(loop, 1000);
		assert_int_equal(ipc_queue_metrics_read(c.fd, &m), 0);
	}
	assert_int_equal(mgr_metrics_render(render, &c, &text, &len), 0);
	assert_non_null(strstr(text, "# TYPE kcmd_workqueue_parked_keys gauge\n"));
	assert_non_null(strstr(text, "# TYPE kcmd_workqueue_parked_keys_total counter\n"));
	assert_non_null(strstr(text, "kcmd_workqueue_parked_keys{name=\"replicaset\"} 1\n"));
	assert_non_null(strstr(text, "kcmd_workqueue_parked_keys_total{name=\"replicaset\"} 1\n"));
	assert_non_null(
	        strstr(text, "kcmd_workqueue_worker_deaths_total{name=\"replicaset\"} 1\n"));
	free(text);
	ipc_queue_owner_free(o);
	ipc_loop_free(loop);
	close(c.fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_workqueue_family),
	                                   cmocka_unit_test(test_parked_keys_family)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
