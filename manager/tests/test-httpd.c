/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of the health and metrics endpoint: kcm's healthz body formats, per-check paths,
 * ?verbose, 404/405, /metrics, and TLS with a generated self-signed certificate kept in a
 * cert dir. The event loop runs on a second thread; the test thread is the HTTP client (curl).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipc/loop.h"
#include "manager/httpd.h"

static atomic_bool synced_ok = true;
static atomic_bool stop_loop = false;

static bool check_synced(void *u, char *why, size_t n)
{
	(void)u;
	if (atomic_load(&synced_ok))
		return true;
	snprintf(why, n, "caches not synced");
	return false;
}

static bool check_always(void *u, char *why, size_t n)
{
	(void)u;
	(void)why;
	(void)n;
	return true;
}

static void metrics(struct mgr_metrics_buf *b, void *u)
{
	(void)u;
	mgr_metrics_printf(b, "# TYPE leader_election_master_status gauge\n");
	mgr_metrics_printf(b, "leader_election_master_status{name=\"kcmd\"} %d\n", 1);
	for (int i = 0; i < 2000; i++) /* grow the buffer past its first size */
		mgr_metrics_printf(b, "kcmd_test_series{i=\"%d\"} %d\n", i, i);
}

/* a mounted handler: echoes the sub-path and the values of ?uid= */
static int echo(void *u, const char *sub, const char *const *args, size_t n, unsigned *status, const char **ctype,
		char **body, size_t *len)
{
	char buf[512];
	int l = snprintf(buf, sizeof(buf), "%s sub=%s", (const char *)u, sub);

	for (size_t i = 0; i < n; i++)
		l += snprintf(buf + l, sizeof(buf) - (size_t)l, " uid=%s", args[i]);
	*status = strcmp(sub, "/graph") == 0 ? 200 : 404;
	*ctype = "text/vnd.graphviz";
	*body = strdup(buf);
	*len = strlen(buf);
	return *body ? 0 : -ENOMEM;
}

struct resp {
	char body[1 << 17];
	size_t len;
};

static size_t collect(char *p, size_t sz, size_t n, void *u)
{
	struct resp *r = u;
	size_t k = sz * n;

	if (r->len + k >= sizeof(r->body))
		k = sizeof(r->body) - 1 - r->len;
	memcpy(r->body + r->len, p, k);
	r->len += k;
	r->body[r->len] = 0;
	return sz * n;
}

static long get(const char *url, const char *method, struct resp *r, bool tls, const char *cafile)
{
	CURL *c = curl_easy_init();
	long code = 0;

	r->len = 0;
	r->body[0] = 0;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
	if (method)
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	if (tls && cafile)
		curl_easy_setopt(c, CURLOPT_CAINFO, cafile);
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(c);
	return code;
}

static void *loop_thread(void *arg)
{
	struct ipc_loop *loop = arg;

	while (!atomic_load(&stop_loop))
		ipc_loop_run_once(loop, 20000);
	return NULL;
}

static void test_plain_health_and_metrics(void **state)
{
	(void)state;
	struct ipc_loop *loop;
	struct mgr_httpd *h;
	struct mgr_httpd_config cfg = { .bind_address = "127.0.0.1", .port = 0, .plain_http = true };
	char err[256], url[256];
	pthread_t th;
	static struct resp r;

	assert_int_equal(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO), 0);
	assert_int_equal(mgr_httpd_new(loop, &cfg, &h, err, sizeof(err)), 0);
	assert_int_equal(mgr_httpd_add_check(h, "informer-sync", MGR_CHECK_READY, check_synced, NULL), 0);
	assert_int_equal(mgr_httpd_add_check(h, "leaderElection", MGR_CHECK_LIVE | MGR_CHECK_READY, check_always, NULL), 0);
	mgr_httpd_set_metrics(h, metrics, NULL);
	assert_int_equal(mgr_httpd_add_handler(h, "/debug/controllers/gc", "uid", echo, "gc"), 0);
	int port = mgr_httpd_port(h);
	assert_true(port > 0);
	atomic_store(&stop_loop, false);
	pthread_create(&th, NULL, loop_thread, loop);

#define U(path) (snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path), url)
	assert_int_equal(get(U("/healthz"), NULL, &r, false, NULL), 200);
	assert_string_equal(r.body, "ok");
	assert_int_equal(get(U("/healthz?verbose"), NULL, &r, false, NULL), 200);
	assert_non_null(strstr(r.body, "[+]ping ok\n[+]informer-sync ok\n[+]leaderElection ok\nhealthz check passed\n"));
	assert_int_equal(get(U("/readyz/informer-sync"), NULL, &r, false, NULL), 200);
	assert_int_equal(get(U("/livez/informer-sync"), NULL, &r, false, NULL), 404); /* readiness only */
	assert_int_equal(get(U("/livez/ping"), NULL, &r, false, NULL), 200);

	atomic_store(&synced_ok, false);
	assert_int_equal(get(U("/readyz"), NULL, &r, false, NULL), 500);
	assert_non_null(strstr(r.body, "[-]informer-sync failed: reason withheld\n"));
	assert_non_null(strstr(r.body, "readyz check failed\n"));
	assert_int_equal(get(U("/readyz?verbose"), NULL, &r, false, NULL), 500);
	assert_non_null(strstr(r.body, "[-]informer-sync failed: caches not synced\n"));
	assert_int_equal(get(U("/livez"), NULL, &r, false, NULL), 200); /* liveness unaffected */
	atomic_store(&synced_ok, true);

	assert_int_equal(get(U("/metrics"), NULL, &r, false, NULL), 200);
	assert_non_null(strstr(r.body, "leader_election_master_status{name=\"kcmd\"} 1\n"));
	assert_non_null(strstr(r.body, "kcmd_test_series{i=\"1999\"} 1999\n"));
	assert_int_equal(get(U("/nope"), NULL, &r, false, NULL), 404);
	assert_int_equal(get(U("/healthz"), "DELETE", &r, false, NULL), 405);

	assert_int_equal(get(U("/debug/controllers/gc/graph?uid=a&x=1&uid=b%2Fc"), NULL, &r, false, NULL), 200);
	assert_string_equal(r.body, "gc sub=/graph uid=a uid=b/c");
	assert_int_equal(get(U("/debug/controllers/gc"), NULL, &r, false, NULL), 404);
	assert_string_equal(r.body, "gc sub=");
	assert_int_equal(get(U("/debug/controllers/gc/other"), NULL, &r, false, NULL), 404);
	assert_int_equal(get(U("/debug/controllers/gcx/graph"), NULL, &r, false, NULL), 404);
	assert_string_equal(r.body, "404 page not found\n");

	atomic_store(&stop_loop, true);
	pthread_join(th, NULL);
	mgr_httpd_free(h);
	ipc_loop_free(loop);
}

static void test_tls_self_signed_kept_in_cert_dir(void **state)
{
	(void)state;
	struct ipc_loop *loop;
	struct mgr_httpd *h;
	char dir[] = "/tmp/kcmd-httpd-XXXXXX", err[256], url[256], ca[300];
	pthread_t th;
	static struct resp r;

	assert_non_null(mkdtemp(dir));
	struct mgr_httpd_config cfg = { .bind_address = "127.0.0.1", .port = 0, .cert_dir = dir };
	assert_int_equal(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO), 0);
	assert_int_equal(mgr_httpd_new(loop, &cfg, &h, err, sizeof(err)), 0);
	snprintf(ca, sizeof(ca), "%s/kcmd.crt", dir);
	assert_int_equal(access(ca, R_OK), 0);
	int port = mgr_httpd_port(h);
	atomic_store(&stop_loop, false);
	pthread_create(&th, NULL, loop_thread, loop);
	snprintf(url, sizeof(url), "https://127.0.0.1:%d/healthz", port);
	assert_int_equal(get(url, NULL, &r, true, ca), 200); /* verified against the generated cert */
	assert_string_equal(r.body, "ok");
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/healthz", port);
	assert_int_not_equal(get(url, NULL, &r, false, NULL), 200); /* plain HTTP is not served */
	atomic_store(&stop_loop, true);
	pthread_join(th, NULL);
	mgr_httpd_free(h);

	/* A restart reuses the same certificate from the cert dir. */
	char *first = NULL;
	FILE *f = fopen(ca, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%ms", &first), 1);
	fclose(f);
	assert_int_equal(mgr_httpd_new(loop, &cfg, &h, err, sizeof(err)), 0);
	mgr_httpd_free(h);
	f = fopen(ca, "r");
	char *second = NULL;
	assert_int_equal(fscanf(f, "%ms", &second), 1);
	fclose(f);
	assert_string_equal(first, second);
	free(first);
	free(second);
	ipc_loop_free(loop);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_errors(void **state)
{
	(void)state;
	struct ipc_loop *loop;
	struct mgr_httpd *h, *h2;
	char err[256];
	struct mgr_httpd_config bad = { .bind_address = "not-an-ip", .plain_http = true };
	struct mgr_httpd_config nocert = { .bind_address = "127.0.0.1", .tls_cert_file = "/nonexistent.crt",
					   .tls_key_file = "/nonexistent.key" };

	assert_int_equal(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO), 0);
	assert_int_equal(mgr_httpd_new(loop, &bad, &h, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not-an-ip"));
	assert_int_equal(mgr_httpd_new(loop, &nocert, &h, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent.crt"));
	struct mgr_httpd_config ok = { .bind_address = "127.0.0.1", .plain_http = true };
	assert_int_equal(mgr_httpd_new(loop, &ok, &h, err, sizeof(err)), 0);
	struct mgr_httpd_config same = { .bind_address = "127.0.0.1", .port = mgr_httpd_port(h), .plain_http = true };
	assert_int_equal(mgr_httpd_new(loop, &same, &h2, err, sizeof(err)), -EADDRINUSE);
	mgr_httpd_free(h);
	ipc_loop_free(loop);
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_health_and_metrics),
		cmocka_unit_test(test_tls_self_signed_kept_in_cert_dir),
		cmocka_unit_test(test_errors),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return r;
}
