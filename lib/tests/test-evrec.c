/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The process Event recorder (lib/evrec.h) against a canned in-process HTTP server:
 *  - kcmd_event_record returns before the apiserver answered (the server holds every Event
 *    write until released), and the Events arrive in order once it answers;
 *  - a full queue drops the event (-ENOBUFS), counted; the ones queued are still written;
 *  - the correlator behind the sink, with client-go's events_cache_test.go facts: a repeat is a
 *    PATCH with count 2; the 10th distinct message of one (object, reason) group is the
 *    combined Event "(combined from similar events): ..."; after 25 Events about one object the
 *    spam filter lets no more through;
 *  - without a recorder kcmd_event_record writes before it returns (tools, dispatchers);
 *  - evrec_stop writes what is queued, then stops.
 * The sink's retry and re-POST paths are exercised in workers/tests/test-rs-executor.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kcmd/client.h"
#include "kube/client.h"
#include "kube/tests/canned-http.h"
#include "lib/evrec.h"

#define MAXREQ 512
static struct {
	int lfd;
	pthread_t th;
	pthread_mutex_t mu;
	_Atomic bool stop;
	_Atomic bool hold; /* Event writes wait while set */
	char *method[MAXREQ], *path[MAXREQ], *body[MAXREQ];
	int n;
} S = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void handle(int fd, const char *method, const char *path, const char *body)
{
	while (atomic_load(&S.hold) && !atomic_load(&S.stop))
		usleep(1000);
	pthread_mutex_lock(&S.mu);
	if (S.n < MAXREQ) {
		S.method[S.n] = strdup(method);
		S.path[S.n] = strdup(path);
		S.body[S.n] = strdup(body);
		S.n++;
	}
	pthread_mutex_unlock(&S.mu);
	canned_http_answer(fd, !strcmp(method, "POST") ? 201 : 200, "{\"kind\":\"Event\"}");
}

static void *conn_main(void *arg)
{
	canned_http_serve((int)(intptr_t)arg, handle);
	return NULL;
}

static void *server_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&S.stop)) {
		struct pollfd p = {.fd = S.lfd, .events = POLLIN};
		if (poll(&p, 1, 50) <= 0)
			continue;
		int fd = accept(S.lfd, NULL, NULL);
		if (fd < 0)
			continue;
		pthread_t th;
		if (pthread_create(&th, NULL, conn_main, (void *)(intptr_t)fd) == 0)
			pthread_detach(th);
	}
	return NULL;
}

static int count(const char *method, const char *part)
{
	int n = 0;
	pthread_mutex_lock(&S.mu);
	for (int i = 0; i < S.n; i++)
		if (!strcmp(S.method[i], method) && (!part || strstr(S.body[i], part)))
			n++;
	pthread_mutex_unlock(&S.mu);
	return n;
}

static char *nth_body(int k) /* the k-th write (0-based), copied */
{
	char *b = NULL;
	pthread_mutex_lock(&S.mu);
	if (k < S.n)
		b = strdup(S.body[k]);
	pthread_mutex_unlock(&S.mu);
	return b;
}

static struct kube_config cfg;
static char url[64];
static struct kube_client *kc;

static int setup(void **state)
{
	(void)state;
	pthread_mutex_lock(&S.mu);
	for (int i = 0; i < S.n; i++) {
		free(S.method[i]);
		free(S.path[i]);
		free(S.body[i]);
	}
	S.n = 0;
	pthread_mutex_unlock(&S.mu);
	atomic_store(&S.stop, false);
	atomic_store(&S.hold, false);
	S.lfd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(bind(S.lfd, (struct sockaddr *)&a, sizeof a), 0);
	socklen_t al = sizeof a;
	getsockname(S.lfd, (struct sockaddr *)&a, &al);
	assert_int_equal(listen(S.lfd, 64), 0);
	pthread_create(&S.th, NULL, server_main, NULL);
	snprintf(url, sizeof url, "http://127.0.0.1:%d", ntohs(a.sin_port));
	cfg = (struct kube_config){.server = url, .token = "t"};
	struct kube_client_opts o = {.config = &cfg,
	                             .process = "test",
	                             .controller = "t",
	                             .burst = 1,
	                             .timeout_ms = 5000,
	                             .retry_base_ms = 10};
	assert_int_equal(kube_client_new(&o, &kc), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	atomic_store(&S.hold, false);
	assert_true(evrec_stop(5000));
	kube_client_free(kc);
	atomic_store(&S.stop, true);
	pthread_join(S.th, NULL);
	close(S.lfd);
	return 0;
}

static void start(size_t cap)
{
	assert_int_equal(evrec_start(&(struct evrec_opts){
	                         .config = &cfg, .controller = "t", .limiter_fd = -1, .cap = cap}),
	                 0);
}

static const struct kcmd_object_ref DS = {
        .api_version = "apps/v1", .kind = "DaemonSet", .ns = "ns", .name = "ds", .uid = "ds-uid"};

static bool wait_writes(int n)
{
	for (int w = 0; w < 500; w++) {
		if (count("POST", NULL) + count("PATCH", NULL) >= n)
			return true;
		usleep(10000);
	}
	return false;
}

/* the call returns while the apiserver holds its answer; the Events then arrive in order */
static void test_async_in_order(void **state)
{
	(void)state;
	start(0);
	atomic_store(&S.hold, true);
	for (int i = 0; i < 5; i++)
		assert_int_equal(kcmd_event_record(kc, "daemonset-controller", &DS,
		                                   KCMD_EVENT_NORMAL, "SuccessfulCreate",
		                                   "Created pod: p%d", i),
		                 0);
	assert_int_equal(count("POST", NULL), 0); /* nothing answered yet: the calls did not wait */
	atomic_store(&S.hold, false);
	assert_true(wait_writes(5));
	assert_true(evrec_flush(5000));
	assert_int_equal(evrec_queued(), 0);
	for (int i = 0; i < 5; i++) {
		char want[64], *b = nth_body(i);
		snprintf(want, sizeof want, "\"message\":\"Created pod: p%d\"", i);
		assert_non_null(b);
		assert_non_null(strstr(b, want));
		assert_non_null(strstr(b, "\"component\":\"daemonset-controller\""));
		assert_non_null(strstr(b, "\"kind\":\"DaemonSet\""));
		free(b);
	}
	assert_int_equal(evrec_dropped(), 0);
}

/* a full queue drops (counted); what was queued is written */
static void test_full_queue_drops(void **state)
{
	(void)state;
	start(3);
	atomic_store(&S.hold, true);
	/* the first is taken by the sink at once and waits on the server; then 3 fill the queue */
	assert_int_equal(kcmd_event_record(kc, "c", &DS, "Normal", "R0", "m"), 0);
	for (int w = 0; w < 500 && evrec_queued() > 0; w++)
		usleep(2000);
	int ok = 0, dropped = 0;
	for (int i = 1; i <= 6; i++) {
		int r = kcmd_event_record(kc, "c", &DS, "Normal", "R", "m%d", i);
		if (r == 0)
			ok++;
		else if (r == -ENOBUFS)
			dropped++;
	}
	assert_int_equal(ok, 3);
	assert_int_equal(dropped, 3);
	assert_int_equal(evrec_dropped(), 3);
	atomic_store(&S.hold, false);
	assert_true(wait_writes(4));
	assert_true(evrec_flush(5000));
	usleep(50000);
	assert_int_equal(count("POST", NULL) + count("PATCH", NULL), 4);
	assert_int_equal(count("POST", "\"message\":\"m4\""), 0); /* dropped */
}

/* the correlator behind the sink (facts from client-go's events_cache_test.go) */
static void test_correlation(void **state)
{
	(void)state;
	start(0);
	/* a repeat of the same event: one Event, PATCHed with count 2 */
	kcmd_event_record(kc, "c", &DS, "Warning", "FailedCreate", "Error creating: x");
	kcmd_event_record(kc, "c", &DS, "Warning", "FailedCreate", "Error creating: x");
	assert_true(wait_writes(2));
	assert_true(evrec_flush(5000));
	assert_int_equal(count("POST", NULL), 1);
	assert_int_equal(count("PATCH", "\"count\":2"), 1);
	/* similar events (one reason, distinct messages): 9 single, the 10th combined */
	for (int i = 0; i < 10; i++)
		kcmd_event_record(kc, "c", &DS, "Normal", "SuccessfulDelete", "Deleted pod: d%d",
		                  i);
	assert_true(wait_writes(12));
	assert_true(evrec_flush(5000));
	assert_int_equal(count("POST", "SuccessfulDelete"), 10);
	assert_int_equal(count("POST", "(combined from similar events): Deleted pod: d9"), 1);
	/* the spam filter: 25 Events per object (source + involvedObject), then none; 12 were
	 * written above, 13 more pass */
	for (int i = 0; i < 20; i++)
		kcmd_event_record(kc, "c", &DS, "Normal", "Reason", "spam %d", i);
	assert_true(evrec_flush(5000));
	usleep(50000);
	assert_int_equal(count("POST", NULL) + count("PATCH", NULL), 25);
	/* another object has its own bucket */
	struct kcmd_object_ref other = DS;
	other.name = "ds2";
	other.uid = "ds2-uid";
	kcmd_event_record(kc, "c", &other, "Normal", "Reason", "spam");
	assert_true(wait_writes(26));
}

/* without a recorder the Event is written before the call returns */
static void test_no_recorder_writes_inline(void **state)
{
	(void)state;
	assert_int_equal(evrec_push(&(struct evrec_event){.name = "x"}), -ENODEV);
	assert_int_equal(kcmd_event_record(kc, "c", &DS, "Normal", "Inline", "now"), 0);
	assert_int_equal(count("POST", "\"reason\":\"Inline\""), 1);
}

/* evrec_stop writes what is queued first; bad arguments */
static void test_stop_flushes(void **state)
{
	(void)state;
	assert_int_equal(evrec_start(NULL), -EINVAL);
	start(0);
	assert_int_equal(evrec_start(&(struct evrec_opts){.config = &cfg}), -EALREADY);
	for (int i = 0; i < 3; i++)
		kcmd_event_record(kc, "c", &DS, "Normal", "Stop", "s%d", i);
	assert_true(evrec_stop(5000));
	assert_int_equal(count("POST", "\"reason\":\"Stop\""), 3);
	assert_int_equal(kcmd_event_record(NULL, "c", &DS, "Normal", "R", "m"), -EINVAL);
	start(0); /* teardown stops it again */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test_setup_teardown(test_async_in_order, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_full_queue_drops, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_correlation, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_no_recorder_writes_inline, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_stop_flushes, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
