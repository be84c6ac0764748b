/* SPDX-License-Identifier: Apache-2.0 */
/* kube/tests/test-client.c - the transport against a scripted in-process HTTP/1.1 server:
 * request shape (URL, headers, DeleteOptions body), retry rules (429, 5xx, POST not retried,
 * connection refused), the limiter, watch streaming, 401 re-auth, and the non-blocking interface
 * driven by a poll() loop through the socket/timer callbacks. Pure pieces (URL building, retry
 * policy) are tested directly. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <curl/curl.h>

#include "kube/client.h"
#include "kube/proto.h"
#include "kube/limiter.h"

/* ---- scripted server ---------------------------------------------------------------------- */
#define MAXREQ 64
struct server {
	int lfd, port;
	pthread_t th;
	pthread_mutex_t mu;
	const char *script[MAXREQ]; /* raw responses, in order; "" = close without answer */
	int n_script, next;
	char *req[MAXREQ]; /* raw requests seen */
	int n_req;
	bool stop;
	bool threaded;    /* one thread per connection (concurrent requests over HTTP/1.1) */
	int barrier;      /* > 0: hold answers until this many requests arrived (2 s, then 503) */
	int barrier_skip; /* ...except the first ones (curl learns the protocol from the first
	                   * answer before it opens more HTTP/1.1 connections) */
	int conns;        /* connection threads alive */
	int cur_fd;       /* the connection the serial server is serving (-1: none) */
};

static struct server srv;

static void serve_conn(int fd)
{
	char buf[65536];
	size_t have = 0;
	for (;;) {
		ssize_t n = recv(fd, buf + have, sizeof(buf) - 1 - have, 0);
		if (n <= 0)
			return;
		have += (size_t)n;
		buf[have] = 0;
		char *eoh;
		while ((eoh = strstr(buf, "\r\n\r\n"))) {
			size_t hl = (size_t)(eoh - buf) + 4, cl = 0;
			char *p = strcasestr(buf, "\r\nContent-Length:");
			if (p && p < eoh)
				cl = strtoul(p + 17, NULL, 10);
			if (have < hl + cl)
				break;
			pthread_mutex_lock(&srv.mu);
			int seq = srv.next;
			const char *resp = srv.next < srv.n_script ? srv.script[srv.next++] : "";
			if (srv.n_req < MAXREQ)
				srv.req[srv.n_req++] = strndup(buf, hl + cl);
			pthread_mutex_unlock(&srv.mu);
			if (!*resp)
				return;
			if (srv.barrier > 0 && seq >= srv.barrier_skip) {
				bool met = false;
				for (int w = 0; w < 2000 && !met; w++) {
					pthread_mutex_lock(&srv.mu);
					met = srv.n_req >= srv.barrier;
					pthread_mutex_unlock(&srv.mu);
					if (!met)
						usleep(1000);
				}
				if (!met)
					resp = "HTTP/1.1 503 Service "
					       "Unavailable\r\nContent-Length: 0\r\n\r\n";
			}
			/* responses containing "|" are sent in pieces with pauses (streaming) */
			const char *r = resp;
			while (*r) {
				const char *bar = strchr(r, '|');
				size_t len = bar ? (size_t)(bar - r) : strlen(r);
				if (send(fd, r, len, MSG_NOSIGNAL) < 0)
					return;
				if (!bar)
					break;
				usleep(20000);
				r = bar + 1;
			}
			memmove(buf, buf + hl + cl, have - hl - cl);
			have -= hl + cl;
			buf[have] = 0;
		}
	}
}

static void *conn_main(void *arg)
{
	int fd = (int)(intptr_t)arg;
	serve_conn(fd);
	close(fd);
	pthread_mutex_lock(&srv.mu);
	srv.conns--;
	pthread_mutex_unlock(&srv.mu);
	return NULL;
}

static void *server_main(void *arg)
{
	(void)arg;
	while (!srv.stop) {
		struct pollfd p = {.fd = srv.lfd, .events = POLLIN};
		if (poll(&p, 1, 50) <= 0)
			continue;
		int fd = accept4(srv.lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		if (srv.threaded) {
			pthread_t th;
			pthread_mutex_lock(&srv.mu);
			srv.conns++;
			pthread_mutex_unlock(&srv.mu);
			if (pthread_create(&th, NULL, conn_main, (void *)(intptr_t)fd) == 0) {
				pthread_detach(th);
				continue;
			}
			pthread_mutex_lock(&srv.mu);
			srv.conns--;
			pthread_mutex_unlock(&srv.mu);
		}
		__atomic_store_n(&srv.cur_fd, fd, __ATOMIC_SEQ_CST);
		serve_conn(fd);
		__atomic_store_n(&srv.cur_fd, -1, __ATOMIC_SEQ_CST);
		close(fd);
	}
	return NULL;
}

static bool srv_running;
static void server_stop(void);

static void server_start(const char **script, int n)
{
	if (srv_running) /* a failed test left it running */
		server_stop();
	srv_running = true;
	memset(&srv, 0, sizeof(srv));
	pthread_mutex_init(&srv.mu, NULL);
	for (int i = 0; i < n; i++)
		srv.script[i] = script[i];
	srv.n_script = n;
	srv.cur_fd = -1;
	srv.lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0); /* test_cloexec counts sockets */
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(bind(srv.lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	socklen_t al = sizeof(a);
	getsockname(srv.lfd, (struct sockaddr *)&a, &al);
	srv.port = ntohs(a.sin_port);
	assert_int_equal(listen(srv.lfd, 16), 0);
	pthread_create(&srv.th, NULL, server_main, NULL);
}

static void server_stop(void)
{
	srv_running = false;
	srv.stop = true;
	/* a failed test may leave its client (and so this connection) open: end it */
	int cur = __atomic_load_n(&srv.cur_fd, __ATOMIC_SEQ_CST);
	if (cur >= 0)
		shutdown(cur, SHUT_RDWR);
	pthread_join(srv.th, NULL);
	for (int w = 0; w < 3000; w++) { /* connection threads end when the client closed */
		pthread_mutex_lock(&srv.mu);
		int left = srv.conns;
		pthread_mutex_unlock(&srv.mu);
		if (!left)
			break;
		usleep(1000);
	}
	close(srv.lfd);
	for (int i = 0; i < srv.n_req; i++)
		free(srv.req[i]);
}

static struct kube_config cfg;
static char server_url[64];

static struct kube_client *client(double qps, int burst)
{
	snprintf(server_url, sizeof(server_url), "http://127.0.0.1:%d", srv.port);
	memset(&cfg, 0, sizeof(cfg));
	cfg.server = server_url;
	cfg.token = "tkn";
	struct kube_client_opts o = {.config = &cfg,
	                             .process = "test",
	                             .controller = "unit",
	                             .qps = qps,
	                             .burst = burst,
	                             .max_retries = 3,
	                             .retry_base_ms = 10,
	                             .timeout_ms = 5000};
	struct kube_client *c;
	assert_int_equal(kube_client_new(&o, &c), 0);
	return c;
}

static const char R200[] =
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n"
        "{\"kind\":\"Pod\"} ";
static const char R429[] =
        "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 0\r\nContent-Type: application/json\r\n"
        "Content-Length: 55\r\n\r\n"
        "{\"kind\":\"Status\",\"reason\":\"TooManyRequests\",\"code\":429}";
static const char R503[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n";
static const char R404[] =
        "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: 73\r\n\r\n"
        "{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"NotFound\",\"code\":404,\"x\":1}";
static const char R401[] = "HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n";

/* ---- pure pieces -------------------------------------------------------------------------- */

static void test_url(void **state)
{
	(void)state;
	char *u;
	struct kube_request r = {.verb = KUBE_LIST,
	                         .version = "v1",
	                         .resource = "pods",
	                         .ns = "default",
	                         .label_selector = "app=web,tier in (a,b)",
	                         .limit = 500,
	                         .cont = "abc+/=",
	                         .resource_version = "0"};
	assert_int_equal(kube_build_url("https://h:6443", &r, &u), 0);
	assert_string_equal(u, "https://h:6443/api/v1/namespaces/default/"
	                       "pods?labelSelector=app%3Dweb%2Ctier%20in%20"
	                       "%28a%2Cb%29&resourceVersion=0&limit=500&continue=abc%2B%2F%3D");
	free(u);
	struct kube_request w = {.verb = KUBE_WATCH,
	                         .group = "apps",
	                         .version = "v1",
	                         .resource = "replicasets",
	                         .resource_version = "77",
	                         .timeout_seconds = 321,
	                         .allow_watch_bookmarks = true,
	                         .send_initial_events = true,
	                         .resource_version_match = "NotOlderThan"};
	assert_int_equal(kube_build_url("https://h", &w, &u), 0);
	assert_string_equal(
	        u, "https://h/apis/apps/v1/replicasets?watch=true&resourceVersion=77&"
	           "resourceVersionMatch=NotOlderThan&timeoutSeconds=321&allowWatchBookmarks=true&"
	           "sendInitialEvents=true");
	free(u);
	struct kube_request s = {.verb = KUBE_UPDATE,
	                         .group = "apps",
	                         .version = "v1",
	                         .resource = "replicasets",
	                         .ns = "ns",
	                         .name = "rs",
	                         .subresource = "status"};
	assert_int_equal(kube_build_url("https://h", &s, &u), 0);
	assert_string_equal(u, "https://h/apis/apps/v1/namespaces/ns/replicasets/rs/status");
	free(u);
	/* server-side apply: fieldManager and force=true (clusterrole aggregation) */
	struct kube_request ap = {.verb = KUBE_PATCH,
	                          .group = "rbac.authorization.k8s.io",
	                          .version = "v1",
	                          .resource = "clusterroles",
	                          .name = "admin",
	                          .patch_type = KUBE_PATCH_APPLY,
	                          .field_manager = "clusterrole-aggregation-controller"};
	assert_int_equal(kube_build_url("https://h", &ap, &u), 0);
	assert_string_equal(u, "https://h/apis/rbac.authorization.k8s.io/v1/clusterroles/admin"
	                       "?fieldManager=clusterrole-aggregation-controller&force=true");
	free(u);
	ap.patch_type = KUBE_PATCH_MERGE; /* no force for other patches */
	assert_int_equal(kube_build_url("https://h", &ap, &u), 0);
	assert_null(strstr(u, "force"));
	free(u);
	struct kube_request bad = {
	        .verb = KUBE_GET, .version = "v1", .resource = "pods", .name = "../x"};
	assert_int_equal(kube_build_url("https://h", &bad, &u), -EINVAL);
	bad.name = NULL; /* GET needs a name */
	assert_int_equal(kube_build_url("https://h", &bad, &u), -EINVAL);
	struct kube_request d = {.verb = KUBE_GET, .path = "/apis"};
	assert_int_equal(kube_build_url("https://h", &d, &u), 0);
	assert_string_equal(u, "https://h/apis");
	free(u);

	struct kube_request del = {.verb = KUBE_DELETE,
	                           .precondition_uid = "u1",
	                           .precondition_rv = "5",
	                           .propagation_policy = "Foreground",
	                           .grace_period_seconds = 0,
	                           .has_grace_period = true};
	char *b;
	assert_int_equal(kube_delete_options_body(&del, &b), 0);
	assert_string_equal(
	        b, "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"gracePeriodSeconds\":0,"
	           "\"preconditions\":{\"uid\":\"u1\",\"resourceVersion\":\"5\"},"
	           "\"propagationPolicy\":"
	           "\"Foreground\"}");
	free(b);
	/* built without a DOM: strings escaped as JSON, keys in the same order */
	struct kube_request esc = {.verb = KUBE_DELETE, .precondition_rv = "a\"b\\c\n"};
	assert_int_equal(kube_delete_options_body(&esc, &b), 0);
	assert_string_equal(b, "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\","
	                       "\"preconditions\":{\"resourceVersion\":\"a\\\"b\\\\c\\u000a\"}}");
	free(b);
	struct kube_request plain = {.verb = KUBE_DELETE};
	assert_int_equal(kube_delete_options_body(&plain, &b), 0);
	assert_null(b);
}

static void test_retry_policy(void **state)
{
	(void)state;
	/* 429: any verb, Retry-After honoured */
	assert_int_equal(kube_retry_delay(KUBE_CREATE, 0, 429, 3, 0, 5, 200), 3000);
	assert_int_equal(kube_retry_delay(KUBE_CREATE, 0, 429, 0, 0, 5, 200), 1000);
	/* 5xx: safe verbs only */
	assert_int_equal(kube_retry_delay(KUBE_GET, 0, 503, 0, 0, 5, 200), 200);
	assert_int_equal(kube_retry_delay(KUBE_LIST, 0, 500, 0, 2, 5, 200), 800);
	assert_int_equal(kube_retry_delay(KUBE_CREATE, 0, 503, 0, 0, 5, 200), -1);
	assert_int_equal(kube_retry_delay(KUBE_DELETE, 0, 500, 0, 0, 5, 200), -1);
	assert_int_equal(kube_retry_delay(KUBE_GET, 0, 404, 0, 0, 5, 200), -1);
	/* connection refused: never sent, every verb */
	assert_int_equal(kube_retry_delay(KUBE_CREATE, CURLE_COULDNT_CONNECT, 0, 0, 0, 5, 200),
	                 200);
	/* reset after sending: only safe verbs */
	assert_int_equal(kube_retry_delay(KUBE_CREATE, CURLE_RECV_ERROR, 0, 0, 0, 5, 200), -1);
	assert_int_equal(kube_retry_delay(KUBE_GET, CURLE_GOT_NOTHING, 0, 0, 0, 5, 200), 200);
	assert_int_equal(kube_retry_delay(KUBE_CREATE, CURLE_OPERATION_TIMEDOUT, 0, 0, 0, 5, 200),
	                 -1);
	/* certificate failures are not transient */
	assert_int_equal(
	        kube_retry_delay(KUBE_GET, CURLE_PEER_FAILED_VERIFICATION, 0, 0, 0, 5, 200), -1);
	/* watch never, attempts bounded, backoff capped */
	assert_int_equal(kube_retry_delay(KUBE_WATCH, 0, 429, 0, 0, 5, 200), -1);
	assert_int_equal(kube_retry_delay(KUBE_GET, 0, 503, 0, 5, 5, 200), -1);
	assert_int_equal(kube_retry_delay(KUBE_GET, 0, 503, 0, 4, 9, 1000), 5000);
}

/* ---- against the server ------------------------------------------------------------------- */

static void test_get_and_headers(void **state)
{
	(void)state;
	const char *script[] = {R200, R404};
	server_start(script, 2);
	struct kube_client *c = client(0, 1);
	struct kube_response resp;
	struct kube_request r = {.verb = KUBE_GET,
	                         .version = "v1",
	                         .resource = "pods",
	                         .ns = "ns",
	                         .name = "p",
	                         .metadata_only = true};
	assert_int_equal(kube_client_request(c, &r, NULL, NULL, &resp), 0);
	assert_int_equal(resp.http_code, 200);
	assert_string_equal(resp.body, "{\"kind\":\"Pod\"} ");
	kube_response_clear(&resp);
	assert_int_equal(kube_client_request(c, &r, NULL, NULL, &resp), -ENOENT);
	assert_string_equal(resp.error.reason, "NotFound");
	kube_response_clear(&resp);
	assert_int_equal(srv.n_req, 2);
	const char *q = srv.req[0];
	assert_non_null(strstr(q, "GET /api/v1/namespaces/ns/pods/p HTTP/1.1\r\n"));
	assert_non_null(strstr(q, "\r\nUser-Agent: kcmd/" KCMD_VERSION " (test/unit)\r\n"));
	assert_non_null(strstr(q, "\r\nAuthorization: Bearer tkn\r\n"));
	assert_non_null(strstr(
	        q, "\r\nAccept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,"
	           "application/json\r\n"));
	assert_non_null(strstr(q, "Accept-Encoding:"));
	kube_client_free(c);
	server_stop();
}

static void test_retries(void **state)
{
	(void)state;
	const char *script[] = {R429, R200, R503, R503, R200, R503};
	server_start(script, 6);
	struct kube_client *c = client(0, 1);
	struct kube_response resp;
	/* POST: 429 retried */
	struct kube_request p = {.verb = KUBE_CREATE,
	                         .version = "v1",
	                         .resource = "pods",
	                         .ns = "ns",
	                         .body = "{\"a\":1}"};
	assert_int_equal(kube_client_request(c, &p, NULL, NULL, &resp), 0);
	kube_response_clear(&resp);
	assert_int_equal(srv.n_req, 2);
	assert_non_null(strstr(srv.req[1], "POST /api/v1/namespaces/ns/pods HTTP/1.1"));
	assert_non_null(strstr(srv.req[1], "Content-Type: application/json"));
	assert_non_null(strstr(srv.req[1], "\r\n\r\n{\"a\":1}"));
	/* GET: 503 twice, then 200 */
	struct kube_request g = {.verb = KUBE_LIST, .version = "v1", .resource = "pods"};
	assert_int_equal(kube_client_request(c, &g, NULL, NULL, &resp), 0);
	kube_response_clear(&resp);
	assert_int_equal(srv.n_req, 5);
	/* POST: 503 is not retried */
	assert_int_equal(kube_client_request(c, &p, NULL, NULL, &resp), -EHOSTDOWN);
	kube_response_clear(&resp);
	assert_int_equal(srv.n_req, 6);
	kube_client_free(c);
	server_stop();

	/* connection refused: a POST is retried (never sent), then fails */
	struct kube_config rc = {.server = "http://127.0.0.1:1"};
	struct kube_client_opts o = {.config = &rc, .max_retries = 2, .retry_base_ms = 5};
	assert_int_equal(kube_client_new(&o, &c), 0);
	assert_int_equal(kube_client_request(c, &p, NULL, NULL, &resp), -ECONNREFUSED);
	kube_response_clear(&resp);
	kube_client_free(c);
}

/* A connection that dies after a POST's body went out (the server may have acted on it) fails
 * the POST: libcurl would otherwise send it again on a fresh connection by itself (it retries a
 * request on a reused connection that died before any answer byte, bodies included), and a create
 * sent twice is an object created twice (client-go's transport does not resend such a request).
 * A request whose body never went out may still be sent on a new connection. */
static void test_post_not_resent_after_reset(void **state)
{
	(void)state;
	const char *script[] = {R200, "", R200, R200, R200};
	server_start(script, 5);
	struct kube_client *c = client(0, 1);
	struct kube_response resp;
	struct kube_request g = {
	        .verb = KUBE_GET, .version = "v1", .resource = "pods", .ns = "ns", .name = "a"};
	assert_int_equal(kube_client_request(c, &g, NULL, NULL, &resp),
	                 0); /* the connection is open */
	kube_response_clear(&resp);
	struct kube_request p = {.verb = KUBE_CREATE,
	                         .version = "v1",
	                         .resource = "pods",
	                         .ns = "ns",
	                         .body = "{\"a\":1}"};
	/* the server reads the whole POST, then closes the reused connection without an answer */
	assert_int_equal(kube_client_request(c, &p, NULL, NULL, &resp), -ECONNRESET);
	kube_response_clear(&resp);
	int posts = 0;
	for (int i = 0; i < srv.n_req; i++)
		posts += strstr(srv.req[i], "POST /api/v1/namespaces/ns/pods ") != NULL;
	assert_int_equal(posts, 1);
	assert_int_equal(srv.n_req, 2);
	/* the client goes on: the next POST and a PUT are sent once each and answered */
	assert_int_equal(kube_client_request(c, &p, NULL, NULL, &resp), 0);
	kube_response_clear(&resp);
	struct kube_request u = {.verb = KUBE_UPDATE,
	                         .version = "v1",
	                         .resource = "pods",
	                         .ns = "ns",
	                         .name = "a",
	                         .body = "{\"b\":2}"};
	assert_int_equal(kube_client_request(c, &u, NULL, NULL, &resp), 0);
	kube_response_clear(&resp);
	assert_int_equal(srv.n_req, 4);
	assert_non_null(strstr(srv.req[2], "\r\n\r\n{\"a\":1}"));
	assert_non_null(strstr(srv.req[3], "PUT /api/v1/namespaces/ns/pods/a "));
	assert_non_null(strstr(srv.req[3], "\r\n\r\n{\"b\":2}"));
	kube_client_free(c);
	server_stop();
}

static void test_patch_delete(void **state)
{
	(void)state;
	const char *script[] = {R200, R200, R200};
	server_start(script, 3);
	struct kube_client *c = client(0, 1);
	struct kube_response resp;
	struct kube_request p = {.verb = KUBE_PATCH,
	                         .version = "v1",
	                         .resource = "pods",
	                         .ns = "ns",
	                         .name = "p",
	                         .patch_type = KUBE_PATCH_MERGE,
	                         .body = "{}"};
	assert_int_equal(kube_client_request(c, &p, NULL, NULL, &resp), 0);
	kube_response_clear(&resp);
	p.patch_type = KUBE_PATCH_STRATEGIC;
	assert_int_equal(kube_client_request(c, &p, NULL, NULL, &resp), 0);
	kube_response_clear(&resp);
	struct kube_request d = {.verb = KUBE_DELETE,
	                         .version = "v1",
	                         .resource = "pods",
	                         .ns = "ns",
	                         .name = "p",
	                         .precondition_uid = "u"};
	assert_int_equal(kube_client_request(c, &d, NULL, NULL, &resp), 0);
	kube_response_clear(&resp);
	assert_non_null(strstr(srv.req[0], "PATCH /api/v1/namespaces/ns/pods/p "));
	assert_non_null(strstr(srv.req[0], "Content-Type: application/merge-patch+json"));
	assert_non_null(strstr(srv.req[1], "Content-Type: application/strategic-merge-patch+json"));
	assert_non_null(strstr(srv.req[2], "DELETE /api/v1/namespaces/ns/pods/p "));
	assert_non_null(strstr(srv.req[2], "\"preconditions\":{\"uid\":\"u\"}"));
	kube_client_free(c);
	server_stop();
}

static void test_limiter(void **state)
{
	(void)state;
	const char *script[] = {R200, R200, R200, R200, R200};
	server_start(script, 5);
	struct kube_client *c = client(20, 1); /* 20 qps, burst 1: 5 requests take >= 200 ms */
	struct kube_response resp;
	struct kube_request g = {.verb = KUBE_LIST, .version = "v1", .resource = "pods"};
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(kube_client_request(c, &g, NULL, NULL, &resp), 0);
		kube_response_clear(&resp);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	double el = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	assert_true(el >= 0.19);
	assert_true(el < 2.0);
	kube_client_free(c);
	server_stop();
}

struct evs {
	int n;
	char last[256];
};

static int on_ev(const char *json, size_t len, void *ud)
{
	struct evs *e = ud;
	e->n++;
	snprintf(e->last, sizeof(e->last), "%.*s", (int)len, json);
	return 0;
}

static const char WATCH[] =
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        "2a\r\n{\"type\":\"ADDED\",\"object\":{\"metadata\":{}}}\n\r\n|"
        "f\r\n{\"type\":\"BOOKMA\r\n|"
        "1e\r\nRK\",\"object\":{\"metadata\":{}}}\n\r\n|0\r\n\r\n";

static void test_watch_sync(void **state)
{
	(void)state;
	const char *gone =
	        "HTTP/1.1 410 Gone\r\nContent-Type: application/json\r\nContent-Length: 51\r\n\r\n"
	        "{\"kind\":\"Status\",\"reason\":\"Expired\",\"code\":410}\n   ";
	const char *script[] = {WATCH, gone};
	server_start(script, 2);
	struct kube_client *c = client(0, 1);
	struct kube_response resp;
	struct evs e = {0};
	struct kube_request w = {.verb = KUBE_WATCH,
	                         .version = "v1",
	                         .resource = "pods",
	                         .resource_version = "5",
	                         .allow_watch_bookmarks = true,
	                         .timeout_seconds = 5};
	assert_int_equal(kube_client_request(c, &w, on_ev, &e, &resp), 0);
	kube_response_clear(&resp);
	assert_int_equal(e.n, 2);
	assert_string_equal(e.last, "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{}}}");
	assert_non_null(strstr(srv.req[0],
	                       "GET /api/v1/pods?watch=true&resourceVersion=5&timeoutSeconds=5&"
	                       "allowWatchBookmarks=true "));
	assert_int_equal(kube_client_request(c, &w, on_ev, &e, &resp), -EKEYEXPIRED);
	assert_string_equal(resp.error.reason, "Expired");
	assert_int_equal(e.n, 2);
	kube_response_clear(&resp);
	kube_client_free(c);
	server_stop();
}

/* A metadata-only WATCH asks for PartialObjectMetadata (one object per event, as client-go's
 * metadata client does), a metadata-only LIST for PartialObjectMetadataList. */
static void test_watch_metadata_accept(void **state)
{
	(void)state;
	const char *script[] = {WATCH, R200};
	server_start(script, 2);
	struct kube_client *c = client(0, 1);
	struct kube_response resp;
	struct evs e = {0};
	struct kube_request w = {.verb = KUBE_WATCH,
	                         .version = "v1",
	                         .resource = "configmaps",
	                         .resource_version = "5",
	                         .timeout_seconds = 5,
	                         .metadata_only = true};
	assert_int_equal(kube_client_request(c, &w, on_ev, &e, &resp), 0);
	kube_response_clear(&resp);
	struct kube_request l = {.verb = KUBE_LIST,
	                         .version = "v1",
	                         .resource = "configmaps",
	                         .metadata_only = true};
	assert_int_equal(kube_client_request(c, &l, NULL, NULL, &resp), 0);
	kube_response_clear(&resp);
	assert_int_equal(srv.n_req, 2);
	assert_non_null(strstr(srv.req[0], "GET /api/v1/configmaps?watch=true"));
	assert_non_null(strstr(
	        srv.req[0], "\r\nAccept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;"
	                    "v=v1,application/json\r\n"));
	assert_non_null(strstr(srv.req[1], "GET /api/v1/configmaps "));
	assert_non_null(strstr(srv.req[1],
	                       "\r\nAccept: application/json;as=PartialObjectMetadataList;"
	                       "g=meta.k8s.io;v=v1,application/json\r\n"));
	kube_client_free(c);
	server_stop();
}

/* --kube-api-content-type=application/vnd.kubernetes.protobuf: requests marked protobuf_ok ask
 * for protobuf with a JSON fallback (client-go's Accept lists); others, bodies sent, and clients
 * without the option stay JSON. */
static void test_protobuf_accept(void **state)
{
	(void)state;
	const char *script[] = {R200, R200, R200, R200, R200, R200};
	server_start(script, 6);
	snprintf(server_url, sizeof(server_url), "http://127.0.0.1:%d", srv.port);
	memset(&cfg, 0, sizeof(cfg));
	cfg.server = server_url;
	struct kube_client_opts o = {.config = &cfg,
	                             .process = "test",
	                             .burst = 1,
	                             .content_type = KUBE_CONTENT_PROTOBUF};
	struct kube_client *c, *cj;
	assert_int_equal(kube_client_new(&o, &c), 0);
	o.content_type = NULL;
	assert_int_equal(kube_client_new(&o, &cj), 0);
	struct kube_response resp;
	struct kube_request l = {
	        .verb = KUBE_LIST, .version = "v1", .resource = "pods", .protobuf_ok = true};
	struct kube_request m = {.verb = KUBE_LIST,
	                         .version = "v1",
	                         .resource = "configmaps",
	                         .metadata_only = true,
	                         .protobuf_ok = true};
	struct kube_request g = {.verb = KUBE_GET,
	                         .group = "apps",
	                         .version = "v1",
	                         .resource = "replicasets",
	                         .ns = "n",
	                         .name = "r"};
	struct kube_request p = {.verb = KUBE_CREATE,
	                         .version = "v1",
	                         .resource = "pods",
	                         .ns = "n",
	                         .body = "{}",
	                         .body_len = 2,
	                         .protobuf_ok = true};
	const struct kube_request *order[] = {&l, &m, &g, &p};
	for (int i = 0; i < 4; i++) {
		assert_int_equal(kube_client_request(c, order[i], NULL, NULL, &resp), 0);
		kube_response_clear(&resp);
	}
	kube_client_free(c); /* the test server serves one connection at a time */
	assert_int_equal(kube_client_request(cj, &l, NULL, NULL, &resp), 0);
	kube_response_clear(&resp);
	assert_int_equal(kube_client_request(cj, &m, NULL, NULL, &resp), 0);
	kube_response_clear(&resp);
	assert_int_equal(srv.n_req, 6);
	assert_non_null(strstr(srv.req[0], "\r\nAccept: application/vnd.kubernetes.protobuf,"
	                                   "application/json\r\n"));
	assert_non_null(
	        strstr(srv.req[1],
	               "\r\nAccept: application/vnd.kubernetes.protobuf;"
	               "as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;"
	               "as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json\r\n"));
	assert_non_null(strstr(srv.req[2], "\r\nAccept: application/json\r\n"));
	assert_non_null(strstr(srv.req[3], "\r\nAccept: application/json\r\n"));
	assert_non_null(strstr(srv.req[3], "\r\nContent-Type: application/json\r\n"));
	assert_non_null(strstr(srv.req[4], "\r\nAccept: application/json\r\n"));
	assert_non_null(
	        strstr(srv.req[5], "\r\nAccept: application/json;as=PartialObjectMetadataList;"));
	/* the flag's values */
	const char *ct;
	assert_int_equal(kube_content_type_parse("application/vnd.kubernetes.protobuf", &ct), 0);
	assert_string_equal(ct, KUBE_CONTENT_PROTOBUF);
	assert_int_equal(kube_content_type_parse("application/json", &ct), 0);
	assert_string_equal(ct, "application/json");
	assert_int_equal(kube_content_type_parse("application/yaml", &ct), -EINVAL);
	assert_int_equal(kube_content_type_parse("", &ct), -EINVAL);
	kube_client_free(cj);
	server_stop();
}

/* body_kind: on a protobuf client a create/update body of a built-in kind is transcoded and
 * sent as protobuf (the answer still asked for as JSON); a body the transcoder refuses, a JSON
 * client and a patch send JSON. */
static void test_body_kind(void **state)
{
	(void)state;
	const char *script[] = {R200, R200, R200, R200, R200};
	server_start(script, 5);
	snprintf(server_url, sizeof(server_url), "http://127.0.0.1:%d", srv.port);
	memset(&cfg, 0, sizeof(cfg));
	cfg.server = server_url;
	struct kube_client_opts o = {.config = &cfg,
	                             .process = "test",
	                             .burst = 1,
	                             .content_type = KUBE_CONTENT_PROTOBUF};
	struct kube_client *c, *cj;
	assert_int_equal(kube_client_new(&o, &c), 0);
	o.content_type = NULL;
	assert_int_equal(kube_client_new(&o, &cj), 0);
	static const char lease[] =
	        "{\"kind\":\"Lease\",\"apiVersion\":\"coordination.k8s.io/v1\",\"metadata\":{"
	        "\"name\":\"l\",\"namespace\":\"n\",\"resourceVersion\":\"7\"},\"spec\":{"
	        "\"holderIdentity\":\"me\",\"leaseDurationSeconds\":15}}";
	static const char event_new_field[] =
	        "{\"kind\":\"Event\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"e\"},"
	        "\"someNewField\":1}";
	struct kube_request u = {.verb = KUBE_UPDATE,
	                         .group = "coordination.k8s.io",
	                         .version = "v1",
	                         .resource = "leases",
	                         .ns = "n",
	                         .name = "l",
	                         .body = lease,
	                         .body_kind = "Lease"};
	struct kube_request e = {.verb = KUBE_CREATE,
	                         .version = "v1",
	                         .resource = "events",
	                         .ns = "n",
	                         .body = event_new_field,
	                         .body_kind = "Event"};
	struct kube_request pa = {.verb = KUBE_PATCH,
	                          .version = "v1",
	                          .resource = "events",
	                          .ns = "n",
	                          .name = "e",
	                          .body = "{\"count\":2}",
	                          .body_kind = "Event",
	                          .patch_type = KUBE_PATCH_STRATEGIC};
	struct kube_response resp;
	const struct kube_request *order[] = {&u, &e, &pa};
	for (int i = 0; i < 3; i++) {
		assert_int_equal(kube_client_request(c, order[i], NULL, NULL, &resp), 0);
		kube_response_clear(&resp);
	}
	uint64_t npb, njs;
	kube_client_body_counts(c, &npb, &njs);
	assert_int_equal(npb, 1);
	assert_int_equal(njs, 1);
	kube_client_free(c);
	assert_int_equal(kube_client_request(cj, &u, NULL, NULL, &resp), 0);
	kube_response_clear(&resp);
	assert_int_equal(kube_client_request(cj, &e, NULL, NULL, &resp), 0);
	kube_response_clear(&resp);
	kube_client_body_counts(cj, &npb, &njs);
	assert_int_equal(npb, 0);
	assert_int_equal(njs, 2);
	assert_int_equal(srv.n_req, 5);
	assert_non_null(
	        strstr(srv.req[0], "PUT /apis/coordination.k8s.io/v1/namespaces/n/leases/l "));
	assert_non_null(strstr(srv.req[0], "\r\nContent-Type: " KUBE_CONTENT_PROTOBUF "\r\n"));
	assert_non_null(strstr(srv.req[0], "\r\nAccept: application/json\r\n"));
	/* the body is the protobuf envelope (the raw request is kept up to its first NUL) */
	const char *body = strstr(srv.req[0], "\r\n\r\n");
	assert_non_null(body);
	assert_string_equal(body + 4, "k8s");
	assert_non_null(strstr(srv.req[1], "\r\nContent-Type: application/json\r\n"));
	assert_non_null(strstr(srv.req[1], "someNewField"));
	assert_non_null(
	        strstr(srv.req[2], "\r\nContent-Type: application/strategic-merge-patch+json\r\n"));
	assert_non_null(strstr(srv.req[3], "\r\nContent-Type: application/json\r\n"));
	assert_non_null(strstr(srv.req[3], "\"holderIdentity\":\"me\""));
	assert_non_null(strstr(srv.req[4], "\r\nContent-Type: application/json\r\n"));
	kube_client_free(cj);
	server_stop();
}

static void test_reauth(void **state)
{
	(void)state;
	const char *script[] = {R401, R200};
	server_start(script, 2);
	char tf[] = "/tmp/kube-tok-XXXXXX";
	int fd = mkstemp(tf);
	assert_true(write(fd, "filetok\n", 8) == 8);
	close(fd);
	snprintf(server_url, sizeof(server_url), "http://127.0.0.1:%d", srv.port);
	struct kube_config fc = {.server = server_url, .token_file = tf};
	struct kube_client_opts o = {.config = &fc, .max_retries = 2};
	struct kube_client *c;
	struct kube_response resp;
	assert_int_equal(kube_client_new(&o, &c), 0);
	struct kube_request g = {.verb = KUBE_LIST, .version = "v1", .resource = "pods"};
	assert_int_equal(kube_client_request(c, &g, NULL, NULL, &resp), 0);
	kube_response_clear(&resp);
	assert_int_equal(srv.n_req, 2);
	assert_non_null(strstr(srv.req[1], "Authorization: Bearer filetok\r\n"));
	kube_client_free(c);
	server_stop();
	unlink(tf);
}

/* ---- non-blocking, driven by a poll() loop ------------------------------------------------ */
struct loop {
	struct pollfd fds[16];
	int nfds;
	long timer_ms;
	struct timespec armed;
	int done;
	int err[8];
};

static void loop_sock(int fd, unsigned ev, void *ud)
{
	struct loop *l = ud;
	int i;
	for (i = 0; i < l->nfds && l->fds[i].fd != fd; i++)
		;
	if (ev & KUBE_POLL_REMOVE) {
		if (i < l->nfds)
			l->fds[i] = l->fds[--l->nfds];
		return;
	}
	if (i == l->nfds)
		l->nfds++;
	l->fds[i].fd = fd;
	l->fds[i].events =
	        (short)(((ev & KUBE_POLL_IN) ? POLLIN : 0) | ((ev & KUBE_POLL_OUT) ? POLLOUT : 0));
}

static void loop_timer(long ms, void *ud)
{
	struct loop *l = ud;
	l->timer_ms = ms;
	clock_gettime(CLOCK_MONOTONIC, &l->armed);
}

static void loop_done(struct kube_call *call, const struct kube_result *r, void *ud)
{
	(void)call;
	struct loop *l = ud;
	l->err[l->done++] = r->err;
}

static void test_reauth_exec(void **state)
{
	(void)state;
	/* 401 -> the exec plugin runs again and the request is repeated with the new token */
	const char *script[] = {R401, R200};
	server_start(script, 2);
	char dir[] = "/tmp/kube-exec-XXXXXX", plugin[128], count[128], body[1024];
	assert_non_null(mkdtemp(dir));
	snprintf(plugin, sizeof(plugin), "%s/p.sh", dir);
	snprintf(count, sizeof(count), "%s/n", dir);
	snprintf(body, sizeof(body),
	         "#!/bin/sh\nn=$(cat %s 2>/dev/null || echo 0); n=$((n+1)); echo $n > %s\n"
	         "printf "
	         "'{\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/v1\","
	         "\"status\":{\"token\":\"run-%%s\"}}' $n\n",
	         count, count);
	FILE *f = fopen(plugin, "w");
	fputs(body, f);
	fclose(f);
	chmod(plugin, 0700);
	snprintf(server_url, sizeof(server_url), "http://127.0.0.1:%d", srv.port);
	char *args[] = {NULL};
	struct kube_exec_config x = {
	        .command = plugin, .args = args, .api_version = "client.authentication.k8s.io/v1"};
	struct kube_config ec = {.server = server_url, .exec = &x};
	struct kube_client_opts o = {.config = &ec, .max_retries = 2};
	struct kube_client *c;
	struct kube_response resp;
	assert_int_equal(kube_client_new(&o, &c), 0);
	struct kube_request g = {.verb = KUBE_LIST, .version = "v1", .resource = "pods"};
	assert_int_equal(kube_client_request(c, &g, NULL, NULL, &resp), 0);
	kube_response_clear(&resp);
	assert_int_equal(srv.n_req, 2);
	assert_non_null(strstr(srv.req[0], "Authorization: Bearer run-1\r\n"));
	assert_non_null(strstr(srv.req[1], "Authorization: Bearer run-2\r\n"));
	kube_client_free(c);
	server_stop();
	unlink(plugin);
	unlink(count);
	rmdir(dir);
}

static int64_t mono_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Runs the poll loop until n calls are done; returns the longest time one step of the loop
 * (a socket action or the timer) took, in ms. */
static int64_t run_loop(struct kube_client *c, struct loop *l, int n)
{
	int64_t longest = 0;
	for (int iter = 0; l->done < n && iter < 5000; iter++) {
		long wait = 100;
		if (l->timer_ms >= 0) {
			struct timespec now;
			clock_gettime(CLOCK_MONOTONIC, &now);
			long el = (now.tv_sec - l->armed.tv_sec) * 1000 +
			          (now.tv_nsec - l->armed.tv_nsec) / 1000000;
			wait = l->timer_ms - el < 0 ? 0 : l->timer_ms - el;
		}
		struct pollfd fds[16];
		int nf = l->nfds;
		memcpy(fds, l->fds, sizeof(fds));
		int pr = poll(fds, (nfds_t)nf, (int)wait);
		int64_t t0 = mono_ms();
		if (pr == 0) {
			l->timer_ms = -1;
			kube_client_timeout(c);
		}
		for (int i = 0; pr > 0 && i < nf; i++)
			if (fds[i].revents)
				kube_client_socket_action(
				        c, fds[i].fd,
				        ((fds[i].revents & (POLLIN | POLLHUP | POLLERR))
				                 ? KUBE_POLL_IN
				                 : 0) |
				                ((fds[i].revents & POLLOUT) ? KUBE_POLL_OUT : 0));
		if (mono_ms() - t0 > longest)
			longest = mono_ms() - t0;
	}
	return longest;
}

static void test_exec_async(void **state)
{
	(void)state;
	/* in loop mode a slow exec plugin (1 s) never blocks the loop: the call waits for it */
	const char *script[] = {R200, R200};
	server_start(script, 2);
	char dir[] = "/tmp/kube-exec-XXXXXX", plugin[128];
	assert_non_null(mkdtemp(dir));
	snprintf(plugin, sizeof(plugin), "%s/p.sh", dir);
	FILE *f = fopen(plugin, "w");
	fputs("#!/bin/sh\nsleep 1\nprintf '{\"kind\":\"ExecCredential\",\"apiVersion\":"
	      "\"client.authentication.k8s.io/v1\",\"status\":{\"token\":\"slow\"}}'\n",
	      f);
	fclose(f);
	chmod(plugin, 0700);
	snprintf(server_url, sizeof(server_url), "http://127.0.0.1:%d", srv.port);
	struct kube_exec_config x = {.command = plugin,
	                             .api_version = "client.authentication.k8s.io/v1"};
	struct kube_config ec = {.server = server_url, .exec = &x};
	struct kube_client_opts o = {.config = &ec, .max_retries = 1};
	struct kube_client *c;
	assert_int_equal(kube_client_new(&o, &c), 0);
	struct loop l = {.timer_ms = -1};
	kube_client_set_loop(c, loop_sock, loop_timer, &l);
	struct kube_request g = {.verb = KUBE_LIST, .version = "v1", .resource = "pods"};
	int64_t t0 = mono_ms();
	assert_int_equal(kube_call_start(c, &g, loop_done, NULL, &l, NULL), 0);
	assert_int_equal(kube_call_start(c, &g, loop_done, NULL, &l, NULL), 0);
	assert_true(mono_ms() - t0 < 300); /* the plugin's second was not spent here */
	assert_int_equal(l.nfds, 1);       /* its stdout is watched */
	int64_t longest = run_loop(c, &l, 2);
	assert_true(mono_ms() - t0 >= 900);
	assert_true(longest < 300);
	assert_int_equal(l.done, 2);
	assert_int_equal(l.err[0], 0);
	assert_int_equal(l.err[1], 0);
	assert_int_equal(srv.n_req, 2);
	assert_non_null(strstr(srv.req[0], "Authorization: Bearer slow\r\n"));
	assert_non_null(strstr(srv.req[1], "Authorization: Bearer slow\r\n"));
	kube_client_free(c);
	server_stop();
	/* a plugin that fails: the waiting calls fail with -ENOEXEC, the loop still not blocked */
	f = fopen(plugin, "w");
	fputs("#!/bin/sh\nsleep 0.5\nexit 3\n", f);
	fclose(f);
	server_start(script, 0);
	assert_int_equal(kube_client_new(&o, &c), 0);
	l = (struct loop){.timer_ms = -1};
	kube_client_set_loop(c, loop_sock, loop_timer, &l);
	assert_int_equal(kube_call_start(c, &g, loop_done, NULL, &l, NULL), 0);
	longest = run_loop(c, &l, 1);
	assert_true(longest < 300);
	assert_int_equal(l.done, 1);
	assert_int_equal(l.err[0], -ENOEXEC);
	assert_int_equal(l.nfds, 0);
	kube_client_free(c);
	server_stop();
	unlink(plugin);
	rmdir(dir);
}

static void test_nonblocking(void **state)
{
	(void)state;
	const char *script[] = {R200, R200, R200, R200};
	server_start(script, 4);
	struct kube_client *c =
	        client(50, 2); /* 4 requests at burst 2, 50 qps: limiter timer used */
	struct loop l = {.timer_ms = -1};
	kube_client_set_loop(c, loop_sock, loop_timer, &l);
	struct kube_request g = {.verb = KUBE_LIST, .version = "v1", .resource = "pods"};
	for (int i = 0; i < 4; i++)
		assert_int_equal(kube_call_start(c, &g, loop_done, NULL, &l, NULL), 0);
	/* blocking use is refused while a loop is attached */
	struct kube_response resp;
	assert_int_equal(kube_client_request(c, &g, NULL, NULL, &resp), -EINVAL);
	for (int iter = 0; l.done < 4 && iter < 2000; iter++) {
		long wait = 100;
		if (l.timer_ms >= 0) {
			struct timespec now;
			clock_gettime(CLOCK_MONOTONIC, &now);
			long el = (now.tv_sec - l.armed.tv_sec) * 1000 +
			          (now.tv_nsec - l.armed.tv_nsec) / 1000000;
			wait = l.timer_ms - el < 0 ? 0 : l.timer_ms - el;
		}
		struct pollfd fds[16];
		int n = l.nfds;
		memcpy(fds, l.fds, sizeof(fds));
		int pr = poll(fds, (nfds_t)n, (int)wait);
		if (pr == 0) {
			l.timer_ms = -1;
			kube_client_timeout(c);
			continue;
		}
		for (int i = 0; i < n; i++)
			if (fds[i].revents)
				kube_client_socket_action(
				        c, fds[i].fd,
				        ((fds[i].revents & (POLLIN | POLLHUP | POLLERR))
				                 ? KUBE_POLL_IN
				                 : 0) |
				                ((fds[i].revents & POLLOUT) ? KUBE_POLL_OUT : 0));
	}
	assert_int_equal(l.done, 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(l.err[i], 0);
	/* cancel: the callback runs with -ECANCELED */
	struct kube_call *call;
	assert_int_equal(kube_call_start(c, &g, loop_done, NULL, &l, &call), 0);
	kube_call_cancel(call);
	assert_int_equal(l.done, 5);
	assert_int_equal(l.err[4], -ECANCELED);
	kube_client_free(c);
	server_stop();
}

static struct kube_call *cancel_me;
static int cancel_events;

static int cancel_on_event(const char *json, size_t len, void *ud)
{
	(void)json;
	(void)len;
	(void)ud;
	cancel_events++;
	kube_call_cancel(cancel_me); /* from inside libcurl's write callback */
	return 0;
}

static void test_cancel_from_event(void **state)
{
	(void)state;
	const char *script[] = {WATCH};
	server_start(script, 1);
	struct kube_client *c = client(0, 1);
	struct loop l = {.timer_ms = -1};
	kube_client_set_loop(c, loop_sock, loop_timer, &l);
	struct kube_request w = {
	        .verb = KUBE_WATCH, .version = "v1", .resource = "pods", .timeout_seconds = 5};
	assert_int_equal(kube_call_start(c, &w, loop_done, cancel_on_event, &l, &cancel_me), 0);
	for (int iter = 0; l.done < 1 && iter < 500; iter++) {
		struct pollfd fds[16];
		int n = l.nfds;
		memcpy(fds, l.fds, sizeof(fds));
		if (poll(fds, (nfds_t)n,
		         l.timer_ms >= 0 && l.timer_ms < 50 ? (int)l.timer_ms : 50) == 0) {
			kube_client_timeout(c);
			continue;
		}
		for (int i = 0; i < n; i++)
			if (fds[i].revents)
				kube_client_socket_action(c, fds[i].fd,
				                          KUBE_POLL_IN | KUBE_POLL_OUT);
	}
	assert_int_equal(l.done, 1);
	assert_int_equal(l.err[0], -ECANCELED);
	assert_int_equal(cancel_events, 1); /* nothing delivered after the cancel */
	/* the client stays usable */
	kube_client_free(c);
	server_stop();
}

/* kube_client_request_many: the requests are in flight at once (after the first, the server
 * answers none until all arrived; a serial client would get 503s), results by index, completion
 * order reported. */
static void test_request_many(void **state)
{
	(void)state;
	const char *script[] = {R200, R404, R200, R200, R200};
	server_start(script, 5);
	srv.threaded = true;
	srv.barrier = 5;
	srv.barrier_skip = 1;
	struct kube_client *c = client(0, 1);
	struct kube_request reqs[5];
	struct kube_response resps[5];
	size_t order[5];
	for (int i = 0; i < 5; i++)
		reqs[i] = (struct kube_request){.verb = KUBE_CREATE,
		                                .version = "v1",
		                                .resource = "pods",
		                                .ns = "default",
		                                .body = "{}"};
	assert_int_equal(kube_client_request_many(c, reqs, 5, resps, order), 0);
	int ok = 0, nf = 0;
	bool seen[5] = {0};
	for (int i = 0; i < 5; i++) {
		if (resps[i].error.err == 0) {
			ok++;
			assert_int_equal(resps[i].http_code, 200);
			assert_non_null(resps[i].body);
		} else {
			assert_int_equal(resps[i].error.err, -ENOENT);
			assert_int_equal(resps[i].http_code, 404);
			nf++;
		}
		assert_true(order[i] < 5);
		assert_false(seen[order[i]]);
		seen[order[i]] = true;
		kube_response_clear(&resps[i]);
	}
	assert_int_equal(ok, 4);
	assert_int_equal(nf, 1);
	assert_int_equal(srv.n_req, 5);
	/* n = 0 is a no-op; WATCH is refused */
	assert_int_equal(kube_client_request_many(c, reqs, 0, resps, NULL), 0);
	struct kube_request w = {.verb = KUBE_WATCH, .version = "v1", .resource = "pods"};
	assert_int_equal(kube_client_request_many(c, &w, 1, resps, NULL), -EINVAL);
	/* a request that cannot be built fails alone */
	reqs[1].name = "a/b";
	srv.barrier = 0;
	srv.next = 0;
	srv.n_script = 1;
	assert_int_equal(kube_client_request_many(c, reqs, 2, resps, order), 0);
	assert_int_equal(resps[0].error.err, 0);
	assert_int_equal(resps[1].error.err, -EINVAL);
	assert_int_equal(order[0], 1); /* finished first: never sent */
	kube_response_clear(&resps[0]);
	kube_response_clear(&resps[1]);
	kube_client_free(c);
	server_stop();
}

/* the limiter spaces a concurrent batch too */
static void test_request_many_limiter(void **state)
{
	(void)state;
	const char *script[] = {R200, R200, R200, R200, R200};
	server_start(script, 5);
	srv.threaded = true;
	struct kube_client *c = client(20, 1);
	struct kube_request reqs[5];
	struct kube_response resps[5];
	for (int i = 0; i < 5; i++)
		reqs[i] = (struct kube_request){
		        .verb = KUBE_LIST, .version = "v1", .resource = "pods"};
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	assert_int_equal(kube_client_request_many(c, reqs, 5, resps, NULL), 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(resps[i].error.err, 0);
		kube_response_clear(&resps[i]);
	}
	double el = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	assert_true(el >= 0.19);
	kube_client_free(c);
	server_stop();
}

/* kube_client_share_threads: blocking requests of several threads are in flight together on the
 * shared client (the server holds its answers until all five arrived: a client that ran them one
 * at a time would get 503s), each thread gets its own answer and error, and request_many works
 * through it too. */
static int share_event(const char *json, size_t len, void *ud)
{
	(void)json;
	(void)len;
	(void)ud;
	return 0;
}

struct share_arg {
	struct kube_client *c;
	int r, code;
};

static void *share_thread(void *arg)
{
	struct share_arg *a = arg;
	struct kube_request req = {
	        .verb = KUBE_CREATE, .version = "v1", .resource = "pods", .ns = "d", .body = "{}"};
	struct kube_response resp;
	a->r = kube_client_request(a->c, &req, NULL, NULL, &resp);
	a->code = resp.http_code;
	if (a->r == 0 && !resp.body)
		a->r = -EBADMSG;
	kube_response_clear(&resp);
	return NULL;
}

static void test_share_threads(void **state)
{
	(void)state;
	const char *script[] = {R200, R200, R404, R200, R200, R200, R200};
	server_start(script, 7);
	srv.threaded = true;
	srv.barrier = 5;
	srv.barrier_skip = 1;
	struct kube_client *c = client(0, 1);
	assert_int_equal(kube_client_share_threads(NULL), -EINVAL);
	assert_int_equal(kube_client_share_threads(c), 0);
	assert_int_equal(kube_client_share_threads(c), -EINVAL);
	struct share_arg a[5];
	pthread_t th[5];
	for (int i = 0; i < 5; i++) {
		a[i] = (struct share_arg){.c = c};
		assert_int_equal(pthread_create(&th[i], NULL, share_thread, &a[i]), 0);
	}
	int ok = 0, nf = 0;
	for (int i = 0; i < 5; i++) {
		pthread_join(th[i], NULL);
		if (a[i].r == 0 && a[i].code == 200)
			ok++;
		else if (a[i].r == -ENOENT && a[i].code == 404)
			nf++;
	}
	assert_int_equal(ok, 4);
	assert_int_equal(nf, 1);
	/* request_many from another thread than the client's, and WATCH refused */
	srv.barrier = 0;
	struct kube_request reqs[2] = {
	        {.verb = KUBE_GET, .version = "v1", .resource = "pods", .ns = "d", .name = "a"},
	        {.verb = KUBE_GET, .version = "v1", .resource = "pods", .ns = "d", .name = "a/b"}};
	struct kube_response resps[2];
	size_t order[2];
	assert_int_equal(kube_client_request_many(c, reqs, 2, resps, order), 0);
	assert_int_equal(resps[0].error.err, 0);
	assert_int_equal(resps[0].http_code, 200);
	assert_int_equal(resps[1].error.err, -EINVAL);
	assert_int_equal(order[0], 1); /* never sent: finished first */
	kube_response_clear(&resps[0]);
	kube_response_clear(&resps[1]);
	struct kube_request w = {.verb = KUBE_WATCH, .version = "v1", .resource = "pods"};
	struct kube_response wr;
	assert_int_equal(kube_client_request(c, &w, share_event, NULL, &wr), -EINVAL);
	assert_int_equal(srv.n_req, 6);
	kube_client_free(c); /* stops the client's thread */
	server_stop();
}

/* Two clients on one shared bucket (kube/limiter.h, as two worker processes of one controller):
 * after the first client spent the burst, the second one waits for a slot too. */
static void test_shared_limiter(void **state)
{
	(void)state;
	const char *script[] = {R200, R200, R200, R200};
	server_start(script, 4);
	srv.threaded = true; /* two clients, two connections */
	int fd = kube_limiter_memfd_create();
	assert_true(fd >= 0);
	struct kube_limiter *la, *lb;
	assert_int_equal(kube_limiter_open(fd, 20, 1, &la), 0);
	assert_int_equal(kube_limiter_open(fd, 20, 1, &lb), 0);
	struct kube_client *a = client(0, 1), *b = client(0, 1);
	kube_client_free(a);
	kube_client_free(b);
	struct kube_client_opts o = {.config = &cfg,
	                             .process = "test",
	                             .controller = "unit",
	                             .qps = 1000,
	                             .burst = 1000,
	                             .max_retries = 3,
	                             .retry_base_ms = 10,
	                             .timeout_ms = 5000,
	                             .limiter = la};
	assert_int_equal(kube_client_new(&o, &a), 0);
	o.limiter = lb;
	assert_int_equal(kube_client_new(&o, &b), 0);
	struct kube_response resp;
	struct kube_request g = {.verb = KUBE_LIST, .version = "v1", .resource = "pods"};
	for (int i = 0; i < 3; i++) {
		assert_int_equal(kube_client_request(a, &g, NULL, NULL, &resp), 0);
		kube_response_clear(&resp);
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(kube_client_request(b, &g, NULL, NULL, &resp),
	                 0); /* a private bucket: at once */
	clock_gettime(CLOCK_MONOTONIC, &t1);
	kube_response_clear(&resp);
	double el = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	assert_true(el >= 0.03); /* the shared slot after a's third request, ~50 ms later */
	kube_client_free(a);
	kube_client_free(b);
	kube_limiter_free(la);
	kube_limiter_free(lb);
	close(fd);
	server_stop();
}

/* Sockets of the process a child inherits across execve: the child shell lists its own fds. */
static int child_sockets(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c",
		      "n=0; for f in /proc/$$/fd/*; do case $(readlink $f) in socket:*) "
		      "n=$((n+1));; esac; done; exit $n",
		      (char *)NULL);
		_exit(127);
	}
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_cloexec(void **state)
{
	(void)state;
	/* an open (kept-alive) apiserver connection must not leak into an exec'd child */
	const char *script[] = {R200, R200};
	server_start(script, 2);
	assert_int_equal(child_sockets(), 0); /* the test's own sockets are close-on-exec */
	struct kube_client *c = client(0, 1);
	struct kube_request g = {.verb = KUBE_LIST, .version = "v1", .resource = "pods"};
	struct kube_response resp;
	assert_int_equal(kube_client_request(c, &g, NULL, NULL, &resp), 0);
	kube_response_clear(&resp);
	int open_sockets = 0;
	for (int fd = 0; fd < 1024; fd++) {
		struct stat st;
		if (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode))
			open_sockets++;
	}
	assert_true(open_sockets >= 2); /* listener + the kept-alive client connection */
	assert_int_equal(child_sockets(), 0);
	kube_client_free(c);
	server_stop();
}

static void test_url_escaping(void **state)
{
	(void)state;
	char *u;
	/* client-go escapes names as Go's url.URL escapes a path; '/' and '%' are refused */
	struct kube_request r = {.verb = KUBE_GET,
	                         .version = "v1",
	                         .resource = "pods",
	                         .ns = "n s",
	                         .name = "a?b#c d:e@f"};
	assert_int_equal(kube_build_url("https://h", &r, &u), 0);
	assert_string_equal(u, "https://h/api/v1/namespaces/n%20s/pods/a%3Fb%23c%20d:e@f");
	free(u);
	r.name = "\xc3\xa9t\xc3\xa9";
	r.subresource = "st atus";
	assert_int_equal(kube_build_url("https://h", &r, &u), 0);
	assert_string_equal(u, "https://h/api/v1/namespaces/n%20s/pods/%C3%A9t%C3%A9/st%20atus");
	free(u);
	r.subresource = NULL;
	const char *bad[] = {"a/b", "a%2Fb", "%", ".", "..", ""};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r.name = bad[i];
		assert_int_equal(kube_build_url("https://h", &r, &u), -EINVAL);
		r.name = "x";
		r.ns = bad[i];
		assert_int_equal(kube_build_url("https://h", &r, &u), -EINVAL);
		r.ns = "n";
		r.subresource = bad[i];
		assert_int_equal(kube_build_url("https://h", &r, &u), -EINVAL);
		r.subresource = NULL;
	}
}

static void test_proxy(void **state)
{
	(void)state;
	char *p;
	assert_int_equal(kube_proxy_for_curl("socks5://127.0.0.1:1080", &p), 0);
	assert_string_equal(p, "socks5h://127.0.0.1:1080");
	free(p);
	assert_int_equal(kube_proxy_for_curl("HTTPS://px:3128", &p), 0);
	assert_string_equal(p, "https://px:3128");
	free(p);
	assert_int_equal(kube_proxy_for_curl("socks4://px:1080", &p), -EINVAL);
	assert_int_equal(kube_proxy_for_curl("px:3128", &p), -EINVAL);
	/* requests go through the proxy: the scripted server plays an HTTP proxy and sees the
	 * absolute URI of the apiserver (which does not exist) */
	const char *script[] = {R200};
	server_start(script, 1);
	char proxy[64];
	snprintf(proxy, sizeof(proxy), "http://127.0.0.1:%d", srv.port);
	struct kube_config pc = {
	        .server = "http://apiserver.invalid:6443", .proxy_url = proxy, .token = "t"};
	struct kube_client_opts o = {.config = &pc, .max_retries = 1};
	struct kube_client *c;
	assert_int_equal(kube_client_new(&o, &c), 0);
	struct kube_request g = {.verb = KUBE_LIST, .version = "v1", .resource = "pods"};
	struct kube_response resp;
	setenv("NO_PROXY", "*", 1); /* proxy-url overrides the environment, as client-go */
	int r = kube_client_request(c, &g, NULL, NULL, &resp);
	unsetenv("NO_PROXY");
	assert_int_equal(r, 0);
	kube_response_clear(&resp);
	assert_int_equal(srv.n_req, 1);
	assert_true(!strncmp(srv.req[0], "GET http://apiserver.invalid:6443/api/v1/pods ", 46));
	kube_client_free(c);
	server_stop();
	pc.proxy_url = "ftp://x";
	assert_int_equal(kube_client_new(&o, &c), -EINVAL);

	/* without proxy-url: the environment's proxy, read once when the client is made (libcurl
	 * no longer reads five variables per request): HTTP_PROXY without a scheme is http:// as
	 * in Go, and a NO_PROXY set later changes nothing */
	server_start(script, 1);
	snprintf(proxy, sizeof(proxy), "127.0.0.1:%d", srv.port);
	pc.proxy_url = NULL;
	setenv("HTTP_PROXY", proxy, 1);
	assert_int_equal(kube_client_new(&o, &c), 0);
	unsetenv("HTTP_PROXY");
	setenv("NO_PROXY", "*", 1);
	r = kube_client_request(c, &g, NULL, NULL, &resp);
	unsetenv("NO_PROXY");
	assert_int_equal(r, 0);
	kube_response_clear(&resp);
	assert_int_equal(srv.n_req, 1);
	assert_true(!strncmp(srv.req[0], "GET http://apiserver.invalid:6443/api/v1/pods ", 46));
	kube_client_free(c);
	server_stop();
	/* NO_PROXY at creation time: no proxy (the apiserver name does not resolve) */
	setenv("HTTP_PROXY", proxy, 1);
	setenv("NO_PROXY", "apiserver.invalid", 1);
	assert_int_equal(kube_client_new(&o, &c), 0);
	unsetenv("HTTP_PROXY");
	unsetenv("NO_PROXY");
	r = kube_client_request(c, &g, NULL, NULL, &resp);
	assert_int_equal(r, -EHOSTUNREACH);
	kube_response_clear(&resp);
	kube_client_free(c);
}

static void test_insecure_guard(void **state)
{
	(void)state;
	struct kube_config ic = {.server = "https://x", .insecure_skip_tls_verify = true};
	struct kube_client_opts o = {.config = &ic};
	struct kube_client *c;
	assert_int_equal(kube_client_new(&o, &c), -EINVAL);
	o.insecure_ok = true;
	assert_int_equal(kube_client_new(&o, &c), 0);
	kube_client_free(c);
	/* a CA together with insecure is refused, as client-go's transport does */
	ic.ca_file = "/etc/ssl/certs/ca-certificates.crt";
	assert_int_equal(kube_client_new(&o, &c), -EINVAL);
	ic.ca_file = NULL;
	unsigned char pem[] = "-----BEGIN CERTIFICATE-----";
	ic.ca_data = pem;
	ic.ca_data_len = sizeof(pem) - 1;
	assert_int_equal(kube_client_new(&o, &c), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_url),
	        cmocka_unit_test(test_retry_policy),
	        cmocka_unit_test(test_get_and_headers),
	        cmocka_unit_test(test_retries),
	        cmocka_unit_test(test_post_not_resent_after_reset),
	        cmocka_unit_test(test_patch_delete),
	        cmocka_unit_test(test_limiter),
	        cmocka_unit_test(test_watch_sync),
	        cmocka_unit_test(test_watch_metadata_accept),
	        cmocka_unit_test(test_protobuf_accept),
	        cmocka_unit_test(test_body_kind),
	        cmocka_unit_test(test_reauth),
	        cmocka_unit_test(test_reauth_exec),
	        cmocka_unit_test(test_nonblocking),
	        cmocka_unit_test(test_exec_async),
	        cmocka_unit_test(test_insecure_guard),
	        cmocka_unit_test(test_cloexec),
	        cmocka_unit_test(test_url_escaping),
	        cmocka_unit_test(test_proxy),
	        cmocka_unit_test(test_cancel_from_event),
	        cmocka_unit_test(test_request_many),
	        cmocka_unit_test(test_request_many_limiter),
	        cmocka_unit_test(test_shared_limiter),
	        cmocka_unit_test(test_share_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
