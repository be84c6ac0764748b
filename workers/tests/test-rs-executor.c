/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ReplicaSet controller's executor (workers/replicaset/controller.c) over the real API
 * client against a canned in-process HTTP server: a slow-start batch of creates is in flight at
 * once (the server holds its answers until the whole batch arrived), created names and
 * resourceVersions come back, deletions map to their pods, Events go onto the controller's
 * queue and are written one at a time by the sink (a repeated Event is a PATCH that is re-POSTed
 * with its count when the server lost it (404); a write without an answer is retried), the sink
 * thread writes them in order, and the status / adoption writes return the new resourceVersion
 * for the staleness gate. The controller file is included so its static functions can be called.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>

#include "workers/replicaset/controller.c"
#include "kube/tests/canned-http.h"

/* ---- canned apiserver ----------------------------------------------------------------------- */
#define MAXREQ 256
static struct {
	int lfd, port;
	pthread_t th;
	pthread_mutex_t mu;
	bool stop;
	int conns;
	char *method[MAXREQ], *path[MAXREQ], *body[MAXREQ];
	int n;
	int n_pod_posts;
	int hold_pod_posts; /* > 0: answer no pod POST before this many arrived (2 s, then 500) */
	bool expire_events; /* PATCH of an Event answers 404 */
	int drop_events;    /* the next N Event POSTs get no answer: the connection is shut */
	const char *rc_rv;  /* the ReplicationController's stored resourceVersion (NULL: "42") */
} S;

static const char NOT_FOUND[] =
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":"
        "\"not found\",\"reason\":\"NotFound\",\"code\":404}";

static void handle(int fd, const char *method, const char *path, const char *body)
{
	char out[512];
	pthread_mutex_lock(&S.mu);
	int i = S.n;
	if (S.n < MAXREQ) {
		S.method[i] = strdup(method);
		S.path[i] = strdup(path);
		S.body[i] = strdup(body);
		S.n++;
	}
	bool pod_post = !strcmp(method, "POST") && !strcmp(path, "/api/v1/namespaces/ns/pods");
	int seq = pod_post ? S.n_pod_posts++ : 0;
	pthread_mutex_unlock(&S.mu);
	if (pod_post) {
		bool met = S.hold_pod_posts <= 0;
		for (int w = 0; w < 2000 && !met; w++) {
			pthread_mutex_lock(&S.mu);
			met = S.n_pod_posts >= S.hold_pod_posts;
			pthread_mutex_unlock(&S.mu);
			if (!met)
				usleep(1000);
		}
		if (!met)
			return canned_http_answer(
			        fd, 500,
			        "{\"kind\":\"Status\",\"code\":500,\"message\":\"batch not "
			        "concurrent\"}");
		snprintf(out, sizeof out,
		         "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"rs-%d\",\"namespace\":\"ns\","
		         "\"resourceVersion\":\"%d\"}}",
		         seq, 100 + seq);
		return canned_http_answer(fd, 201, out);
	}
	if (!strcmp(method, "DELETE"))
		return strstr(path, "/gone") ? canned_http_answer(fd, 404, NOT_FOUND)
		                             : canned_http_answer(fd, 200, "{\"kind\":\"Pod\"}");
	if (!strcmp(method, "POST") && strstr(path, "/events")) {
		pthread_mutex_lock(&S.mu);
		bool drop = S.drop_events > 0;
		if (drop)
			S.drop_events--;
		pthread_mutex_unlock(&S.mu);
		if (drop) {
			shutdown(fd, SHUT_RDWR);
			return;
		}
		return canned_http_answer(fd, 201, "{\"kind\":\"Event\"}");
	}
	if (!strcmp(method, "PATCH") && strstr(path, "/events/"))
		return S.expire_events ? canned_http_answer(fd, 404, NOT_FOUND)
		                       : canned_http_answer(fd, 200, "{\"kind\":\"Event\"}");
	if (!strcmp(method, "PATCH") && strstr(path, "/replicasets/rs/status"))
		return canned_http_answer(fd, 200,
		                          "{\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"rs\","
		                          "\"resourceVersion\":\"777\"}}");
	/* the replication controller's status: PATCH refused as by its bootstrap role, then PUT
	 * (JSON), answered as the apiserver does: 409 unless the body's resourceVersion is the
	 * stored one ("42" unless the test asks for another) */
	if (!strcmp(method, "PATCH") && strstr(path, "/replicationcontrollers/rs/status"))
		return canned_http_answer(fd, 403,
		                          "{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":"
		                          "\"Forbidden\",\"code\":403,\"message\":\"forbidden\"}");
	if (!strcmp(method, "GET") &&
	    !strcmp(path, "/api/v1/namespaces/ns/replicationcontrollers/rs")) {
		snprintf(out, sizeof out,
		         "{\"kind\":\"ReplicationController\",\"apiVersion\":\"v1\",\"metadata\":{"
		         "\"name\":\"rs\",\"namespace\":\"ns\",\"uid\":\"rs-uid\","
		         "\"resourceVersion\":\"%s\"},\"spec\":{\"replicas\":1,\"selector\":{"
		         "\"a\":\"b\"}},\"status\":{\"replicas\":0}}",
		         S.rc_rv ? S.rc_rv : "42");
		return canned_http_answer(fd, 200, out);
	}
	if (!strcmp(method, "PUT") && strstr(path, "/replicationcontrollers/rs/status")) {
		char want[64];
		snprintf(want, sizeof want, "\"resourceVersion\":\"%s\"", S.rc_rv ? S.rc_rv : "42");
		if (!body || !strstr(body, want))
			return canned_http_answer(
			        fd, 409,
			        "{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":"
			        "\"Conflict\","
			        "\"code\":409,\"message\":\"Operation cannot be fulfilled on "
			        "replicationcontrollers \\\"rs\\\": the object has been modified; "
			        "please "
			        "apply your changes to the latest version and try again\"}");
		return canned_http_answer(
		        fd, 200,
		        "{\"kind\":\"ReplicationController\",\"metadata\":{\"name\":\"rs\","
		        "\"resourceVersion\":\"778\"}}");
	}
	if (!strcmp(method, "PATCH") && strstr(path, "/pods/"))
		return canned_http_answer(
		        fd, 200,
		        "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"resourceVersion\":"
		        "\"555\"}}");
	canned_http_answer(fd, 404, NOT_FOUND);
}

static void *conn_main(void *arg)
{
	canned_http_serve((int)(intptr_t)arg, handle);
	pthread_mutex_lock(&S.mu);
	S.conns--;
	pthread_mutex_unlock(&S.mu);
	return NULL;
}

static void *server_main(void *arg)
{
	(void)arg;
	while (!S.stop) {
		struct pollfd p = {.fd = S.lfd, .events = POLLIN};
		if (poll(&p, 1, 50) <= 0)
			continue;
		int fd = accept(S.lfd, NULL, NULL);
		if (fd < 0)
			continue;
		pthread_t th;
		pthread_mutex_lock(&S.mu);
		S.conns++;
		pthread_mutex_unlock(&S.mu);
		if (pthread_create(&th, NULL, conn_main, (void *)(intptr_t)fd) == 0)
			pthread_detach(th);
	}
	return NULL;
}

static int count(const char *method, const char *path_part)
{
	int n = 0;
	pthread_mutex_lock(&S.mu);
	for (int i = 0; i < S.n; i++)
		if (!strcmp(S.method[i], method) && strstr(S.path[i], path_part))
			n++;
	pthread_mutex_unlock(&S.mu);
	return n;
}

static const char *last_body(const char *method, const char *path_part)
{
	const char *b = NULL;
	pthread_mutex_lock(&S.mu);
	for (int i = 0; i < S.n; i++)
		if (!strcmp(S.method[i], method) && strstr(S.path[i], path_part))
			b = S.body[i];
	pthread_mutex_unlock(&S.mu);
	return b;
}

/* ---- fixture ----------------------------------------------------------------------------------
 */
static struct kube_config cfg;
static char url[64];
static struct wk_ctx ctx;
static struct rsc *C;
static struct kube_replicaset RS = {
        .meta = {.namespace = "ns", .name = "rs", .uid = "rs-uid", .resource_version = "42"}};

static int setup(void **state)
{
	(void)state;
	memset(&S, 0, sizeof S);
	pthread_mutex_init(&S.mu, NULL);
	S.lfd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(bind(S.lfd, (struct sockaddr *)&a, sizeof a), 0);
	socklen_t al = sizeof a;
	getsockname(S.lfd, (struct sockaddr *)&a, &al);
	S.port = ntohs(a.sin_port);
	assert_int_equal(listen(S.lfd, 64), 0);
	pthread_create(&S.th, NULL, server_main, NULL);
	snprintf(url, sizeof url, "http://127.0.0.1:%d", S.port);
	cfg = (struct kube_config){.server = url, .token = "t"};
	struct kube_client_opts o = {.config = &cfg,
	                             .process = "test",
	                             .controller = "rs",
	                             .burst = 1,
	                             .timeout_ms = 5000,
	                             .retry_base_ms = 10};
	memset(&ctx, 0, sizeof ctx);
	assert_int_equal(kube_client_new(&o, &ctx.kc), 0);
	C = calloc(1, sizeof *C);
	C->ctx = &ctx;
	C->fl = &rs_flavour_replicaset;
	assert_int_equal(evrec_sink_new(&C->sink), 0);
	assert_int_equal(rs_evq_new_private(&C->evq), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	assert_true(sink_stop(C));
	sink_drain(C, ctx.kc);
	rs_evq_free(C->evq);
	evrec_sink_free(C->sink);
	free(C);
	kube_client_free(ctx.kc);
	S.stop = true;
	pthread_join(S.th, NULL);
	for (int w = 0; w < 3000; w++) {
		pthread_mutex_lock(&S.mu);
		int left = S.conns;
		pthread_mutex_unlock(&S.mu);
		if (!left)
			break;
		usleep(1000);
	}
	close(S.lfd);
	for (int i = 0; i < S.n; i++) {
		free(S.method[i]);
		free(S.path[i]);
		free(S.body[i]);
	}
	return 0;
}

static void free_results(struct rs_call_result *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(r[i].msg);
		free(r[i].name);
		free(r[i].rv);
	}
}

/* ---- tests ------------------------------------------------------------------------------------
 */
static void test_batch_concurrent_events_queued(void **state)
{
	(void)state;
	/* the first answer teaches curl the protocol (HTTP/1.1 here: one connection per request in
	 * flight); the next batch of 4 is only answered when all 4 are in flight */
	struct rs_call_result r1[1] = {0}, r4[4] = {0};
	ex_create_pods(C, &RS, "{\"metadata\":{}}", 1, r1);
	assert_int_equal(r1[0].err, 0);
	assert_string_equal(r1[0].name, "rs-0");
	assert_string_equal(r1[0].rv, "100");
	ex_record_event(C, &RS, "Normal", "SuccessfulCreate", "Created pod: rs-0");
	assert_int_equal(rs_evq_len(C->evq), 1);
	assert_int_equal(count("POST", "/events"), 0); /* queued for the sink, not sent */
	S.hold_pod_posts = 5;
	ex_create_pods(C, &RS, "{\"metadata\":{}}", 4, r4);
	bool seen[4] = {0};
	for (int i = 0; i < 4; i++) {
		assert_int_equal(r4[i].err, 0);
		int k = atoi(r4[i].name + 3);
		assert_true(k >= 1 && k <= 4);
		assert_false(seen[k - 1]);
		seen[k - 1] = true;
		char rv[16];
		snprintf(rv, sizeof rv, "%d", 100 + k);
		assert_string_equal(r4[i].rv, rv);
	}
	assert_int_equal(count("POST", "/events"), 0); /* the batch carries no Event */
	assert_int_equal(rs_evq_len(C->evq), 1);
	sink_drain(C, ctx.kc);
	assert_int_equal(rs_evq_len(C->evq), 0);
	assert_int_equal(count("POST", "/events"), 1);
	const char *ev = last_body("POST", "/events");
	assert_non_null(strstr(ev, "\"reason\":\"SuccessfulCreate\""));
	assert_non_null(strstr(ev, "\"message\":\"Created pod: rs-0\""));
	assert_non_null(strstr(ev, "\"component\":\"replicaset-controller\""));
	assert_null(strstr(ev, "\"host\"")); /* upstream's source has no host */
	free_results(r1, 1);
	free_results(r4, 4);
}

static void test_deletes_and_event_repeat(void **state)
{
	(void)state;
	struct kube_pod a = {.meta = {.namespace = "ns", .name = "a"}};
	struct kube_pod g = {.meta = {.namespace = "ns", .name = "gone"}};
	const struct kube_pod *pods[] = {&a, &g};
	struct rs_call_result r[2] = {0};
	ex_delete_pods(C, &RS, pods, 2, r);
	assert_int_equal(r[0].err, 0);
	assert_int_equal(r[1].err, -ENOENT);
	assert_true(r[0].done_rank != r[1].done_rank && r[0].done_rank + r[1].done_rank == 1);
	free_results(r, 2);
	/* the same event twice: the second is a PATCH of the first's Event */
	ex_record_event(C, &RS, "Warning", "FailedCreate", "Error creating: boom");
	ex_record_event(C, &RS, "Warning", "FailedCreate", "Error creating: boom");
	assert_int_equal(count("POST", "/events"), 0);
	S.expire_events = true; /* the Event is gone on the server: re-POSTed with its count */
	sink_drain(C, ctx.kc);
	assert_int_equal(count("POST", "/events"), 2);
	assert_int_equal(count("PATCH", "/events/rs."), 1);
	const char *patch = last_body("PATCH", "/events/rs.");
	assert_non_null(strstr(patch, "\"count\":2"));
	assert_non_null(strstr(patch, "\"message\":\"Error creating: boom\""));
	assert_non_null(strstr(last_body("POST", "/events"), "\"count\":2"));
	/* the third repeat counts on: 3 */
	S.expire_events = false;
	ex_record_event(C, &RS, "Warning", "FailedCreate", "Error creating: boom");
	sink_drain(C, ctx.kc);
	assert_non_null(strstr(last_body("PATCH", "/events/rs."), "\"count\":3"));
}

static void test_written_versions(void **state)
{
	(void)state;
	struct kube_pod p = {.meta = {.namespace = "ns", .name = "p", .uid = "pu"}};
	char *rv = NULL, *msg = NULL;
	assert_int_equal(ex_patch_pod_rv(C, &p, "{}", &rv, &msg), 0);
	assert_string_equal(rv, "555");
	free(rv);
	rv = NULL;
	struct kube_rs_status st = {.replicas = 1};
	assert_int_equal(ex_update_status_rv(C, &RS, &st, &rv, &msg), 0);
	assert_string_equal(rv, "777");
	free(rv);
	assert_non_null(
	        strstr(last_body("PATCH", "/replicasets/rs/status"), "\"resourceVersion\":\"42\""));
	free(msg);
}

/* a write without an answer is tried again (client-go: up to 12 tries, 10 s apart), blocking the
 * sink meanwhile; a Status refusal is not retried; 12 unanswered tries give up */
static void test_event_retry(void **state)
{
	(void)state;
	evrec_retry_usec = 0;
	S.drop_events = 2;
	ex_record_event(C, &RS, "Normal", "SuccessfulCreate", "Created pod: x");
	ex_record_event(C, &RS, "Normal", "SuccessfulCreate", "Created pod: y");
	sink_drain(C, ctx.kc);
	/* x: two unanswered tries then written; y after it (curl may re-send once on its own when a
	 * reused connection was shut, so "at least") */
	int n = count("POST", "/events");
	assert_true(n >= 4 && n <= 6);
	assert_non_null(strstr(last_body("POST", "/events"), "\"message\":\"Created pod: y\""));
	S.drop_events = 100;
	ex_record_event(C, &RS, "Normal", "SuccessfulCreate", "Created pod: z");
	sink_drain(C, ctx.kc);
	int m = count("POST", "/events") - n;
	assert_true(m >= EVREC_MAX_TRIES && m <= 2 * EVREC_MAX_TRIES);
	assert_int_equal(rs_evq_len(C->evq), 0); /* given up, not kept */
	S.drop_events = 0;
	evrec_retry_usec = 10000000;
}

/* the sink thread: takes the sink lock, writes queued Events in order, one at a time; stops */
static void test_sink_thread(void **state)
{
	(void)state;
	ctx.config = &cfg;
	ctx.controller = "replicaset-controller";
	assert_int_equal(sink_start(C), 0);
	for (int i = 0; i < 12; i++) {
		char m[64];
		snprintf(m, sizeof m, "Created pod: p%d", i);
		ex_record_event(C, &RS, "Normal", "SuccessfulCreate", m);
	}
	for (int w = 0; w < 1000 && count("POST", "/events") + count("PATCH", "/events") < 12; w++)
		usleep(10000);
	usleep(100000); /* nothing more comes */
	/* 9 single Events, then the 10th and later distinct messages on one combined Event */
	assert_int_equal(count("POST", "/events"), 10);
	assert_int_equal(count("PATCH", "/events/rs."), 2);
	assert_non_null(strstr(last_body("PATCH", "/events/rs."), "\"count\":3"));
	assert_true(sink_stop(C));
	ctx.config = NULL;
}

/* The replication controller's flavour (flavour.h): status through a PUT of the object as read
 * (no GET) on replicationcontrollers after the PATCH is refused (403), as JSON without the
 * merge patch's terminatingReplicas; a stale resourceVersion is the apiserver's Conflict naming
 * replicationcontrollers; the Events name the v1 ReplicationController and the component
 * replication-controller. */
static void test_rc_flavour(void **state)
{
	(void)state;
	C->fl = &rs_flavour_replicationcontroller;
	struct kube_rs_status st = {.replicas = 1, .fully_labeled_replicas = 1};
	char *rv = NULL, *msg = NULL;
	assert_int_equal(ex_update_status_rv(C, &RS, &st, &rv, &msg), 0);
	assert_null(msg);
	assert_string_equal(rv, "778");
	free(rv);
	rv = NULL;
	assert_true(C->status_put);
	assert_int_equal(count("PATCH", "/api/v1/namespaces/ns/replicationcontrollers/rs/status"),
	                 1);
	assert_int_equal(count("PUT", "/api/v1/namespaces/ns/replicationcontrollers/rs/status"), 1);
	const char *put = last_body("PUT", "/replicationcontrollers/rs/status");
	assert_non_null(strstr(put, "\"kind\":\"ReplicationController\""));
	assert_non_null(strstr(put, "\"fullyLabeledReplicas\":1"));
	assert_null(strstr(put, "terminatingReplicas"));
	assert_non_null(strstr(put, "\"resourceVersion\":\"42\""));
	assert_non_null(strstr(put, "\"uid\":\"rs-uid\""));
	assert_null(strstr(put, "\"spec\""));
	assert_int_equal(count("GET", "/replicationcontrollers/rs"), 0);
	/* from now on straight to PUT; a stored resourceVersion other than the one read is the
	 * apiserver's conflict */
	S.rc_rv = "43";
	assert_int_equal(ex_update_status_rv(C, &RS, &st, &rv, &msg), -ESTALE);
	assert_non_null(msg);
	assert_non_null(
	        strstr(msg, "Operation cannot be fulfilled on replicationcontrollers \"rs\""));
	free(msg);
	S.rc_rv = NULL;
	assert_int_equal(count("PATCH", "/replicationcontrollers/rs/status"), 1);
	assert_int_equal(count("PUT", "/replicationcontrollers/rs/status"), 2);
	assert_int_equal(count("GET", "/replicationcontrollers/rs"), 0);
	assert_int_equal(count("PATCH", "/replicasets/"), 0);
	/* Events */
	ex_record_event(C, &RS, "Normal", "SuccessfulCreate", "Created pod: rs-x");
	sink_drain(C, ctx.kc);
	const char *ev = last_body("POST", "/events");
	assert_non_null(ev);
	assert_non_null(strstr(ev, "\"component\":\"replication-controller\""));
	assert_non_null(strstr(ev, "\"kind\":\"ReplicationController\""));
	assert_non_null(strstr(ev, "\"apiVersion\":\"v1\""));
	C->fl = &rs_flavour_replicaset;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test_setup_teardown(test_batch_concurrent_events_queued, setup,
	                                        teardown),
	        cmocka_unit_test_setup_teardown(test_deletes_and_event_repeat, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_written_versions, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_event_retry, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_sink_thread, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_rc_flavour, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
