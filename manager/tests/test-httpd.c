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

#include <arpa/inet.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>
#include <sys/time.h>
#include <time.h>
#include <netinet/in.h>
#include <sys/socket.h>

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
static int echo(void *u, const char *sub, const char *const *args, size_t n, unsigned *status,
                const char **ctype, char **body, size_t *len)
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

static const char *bearer_token; /* sent by get() when set */
static const char *accept_hdr;   /* an Accept header get() sends when set */

static int zpage(void *ud, const char *page, char **ret, size_t *len)
{
	(void)ud;
	if (asprintf(ret, "\nkcmd %s\nbody\n", page) < 0)
		return -ENOMEM;
	*len = strlen(*ret);
	return 0;
}
static long tls_version; /* CURLOPT_SSLVERSION for get() when set */

static long get(const char *url, const char *method, struct resp *r, bool tls, const char *cafile)
{
	CURL *c = curl_easy_init();
	long code = 0;
	struct curl_slist *hd = NULL;
	char auth[256];

	if (bearer_token) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", bearer_token);
		hd = curl_slist_append(hd, auth);
	}
	if (accept_hdr) {
		char ah[256];
		snprintf(ah, sizeof(ah), "Accept: %s", accept_hdr);
		hd = curl_slist_append(hd, ah);
	}
	if (hd)
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, hd);
	if (tls_version)
		curl_easy_setopt(c, CURLOPT_SSLVERSION, tls_version);

	r->len = 0;
	r->body[0] = 0;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
	if (method && strcmp(method, "HEAD") == 0)
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	else if (method)
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	if (tls && cafile)
		curl_easy_setopt(c, CURLOPT_CAINFO, cafile);
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(c);
	curl_slist_free_all(hd);
	return code;
}

/* A TLS handshake offering only the versions in prio (GnuTLS priority string): 0 or the GnuTLS
 * error. curl cannot be used: its GnuTLS backend no longer offers TLS 1.1. */
static int tls_handshake(int port, const char *prio)
{
	gnutls_session_t s;
	gnutls_certificate_credentials_t cred;
	struct sockaddr_in a = {.sin_family = AF_INET,
	                        .sin_port = htons((uint16_t)port),
	                        .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), r;

	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	gnutls_certificate_allocate_credentials(&cred);
	gnutls_init(&s, GNUTLS_CLIENT);
	assert_int_equal(gnutls_priority_set_direct(s, prio, NULL), 0);
	gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, cred);
	gnutls_transport_set_int(s, fd);
	gnutls_handshake_set_timeout(s, 5000);
	do
		r = gnutls_handshake(s);
	while (r < 0 && !gnutls_error_is_fatal(r));
	gnutls_deinit(s);
	gnutls_certificate_free_credentials(cred);
	close(fd);
	return r;
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
	/* every path allowed: this test is about the answers, not who may have them */
	struct mgr_httpd_auth_opts all = {.always_allow_paths = "/*", .no_in_cluster = true};
	struct mgr_httpd_config cfg = {
	        .bind_address = "127.0.0.1", .port = 0, .plain_http = true, .auth = &all};
	char err[256], url[256];
	pthread_t th;
	static struct resp r;

	assert_int_equal(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO), 0);
	assert_int_equal(mgr_httpd_new(loop, &cfg, &h, err, sizeof(err)), 0);
	assert_int_equal(
	        mgr_httpd_add_check(h, "informer-sync", MGR_CHECK_READY, check_synced, NULL), 0);
	assert_int_equal(mgr_httpd_add_check(h, "leaderElection", MGR_CHECK_LIVE | MGR_CHECK_READY,
	                                     check_always, NULL),
	                 0);
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
	assert_non_null(strstr(
	        r.body,
	        "[+]ping ok\n[+]informer-sync ok\n[+]leaderElection ok\nhealthz check passed\n"));
	assert_int_equal(get(U("/readyz/informer-sync"), NULL, &r, false, NULL), 200);
	assert_int_equal(get(U("/livez/informer-sync"), NULL, &r, false, NULL),
	                 404); /* readiness only */
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

	/* z-pages: 404 until a producer is set; text for no Accept, text/plain or a wildcard; a
	 * structured media type is a 406 Status, as kcm answers one it does not serve */
	assert_int_equal(get(U("/statusz"), NULL, &r, false, NULL), 404);
	mgr_httpd_set_zpages(h, zpage, NULL);
	assert_int_equal(get(U("/statusz"), NULL, &r, false, NULL), 200);
	assert_string_equal(r.body, "\nkcmd statusz\nbody\n");
	accept_hdr = "text/plain";
	assert_int_equal(get(U("/flagz"), NULL, &r, false, NULL), 200);
	assert_string_equal(r.body, "\nkcmd flagz\nbody\n");
	accept_hdr = "application/json;as=Statusz;v=v1alpha1;g=config.k8s.io, */*";
	assert_int_equal(get(U("/statusz"), NULL, &r, false, NULL), 200);
	accept_hdr = "application/json";
	assert_int_equal(get(U("/statusz"), NULL, &r, false, NULL), 406);
	assert_non_null(strstr(r.body, "\"reason\": \"NotAcceptable\""));
	accept_hdr = NULL;
	assert_int_equal(get(U("/statusz/x"), NULL, &r, false, NULL), 404);

	assert_int_equal(
	        get(U("/debug/controllers/gc/graph?uid=a&x=1&uid=b%2Fc"), NULL, &r, false, NULL),
	        200);
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
	struct mgr_httpd_auth_opts noauth = {.no_in_cluster =
	                                             true}; /* kcm's defaults outside a pod */
	struct mgr_httpd_config cfg = {
	        .bind_address = "127.0.0.1", .port = 0, .cert_dir = dir, .auth = &noauth};
	assert_int_equal(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO), 0);
	assert_int_equal(mgr_httpd_new(loop, &cfg, &h, err, sizeof(err)), 0);
	snprintf(ca, sizeof(ca), "%s/kcmd.crt", dir);
	assert_int_equal(access(ca, R_OK), 0);
	int port = mgr_httpd_port(h);
	atomic_store(&stop_loop, false);
	pthread_create(&th, NULL, loop_thread, loop);
	snprintf(url, sizeof(url), "https://127.0.0.1:%d/healthz", port);
	assert_int_equal(get(url, NULL, &r, true, ca),
	                 200); /* verified against the generated cert */
	assert_string_equal(r.body, "ok");
	/* TLS 1.2 and 1.3 only: a client that offers at most TLS 1.1 is refused */
	assert_int_not_equal(tls_handshake(port, "NORMAL:-VERS-ALL:+VERS-TLS1.1:+VERS-TLS1.0"), 0);
	assert_int_equal(tls_handshake(port, "NORMAL:-VERS-ALL:+VERS-TLS1.2"), 0);
	assert_int_equal(tls_handshake(port, "NORMAL:-VERS-ALL:+VERS-TLS1.3"), 0);
	tls_version = CURL_SSLVERSION_TLSv1_2 | CURL_SSLVERSION_MAX_TLSv1_2;
	assert_int_equal(get(url, NULL, &r, true, ca), 200);
	tls_version = 0;
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

/* ---- a fake apiserver answering TokenReviews and SubjectAccessReviews -------------------------
 */

static atomic_int fake_token_reviews, fake_access_reviews;
static char fake_last_sar[8192], fake_last_auth[256];
static pthread_mutex_t fake_mu = PTHREAD_MUTEX_INITIALIZER;

struct fake_body {
	char buf[8192];
	size_t len;
};

/* tokens: good -> alice (group team), admin -> root (system:masters), slow -> slowpoke after 1 s,
 * anything else unauthenticated. Access: alice and slowpoke may get /metrics, nobody else. */
static enum MHD_Result fake_handler(void *cls, struct MHD_Connection *c, const char *url,
                                    const char *method, const char *version, const char *upload,
                                    size_t *upload_size, void **con_cls)
{
	struct fake_body *b = *con_cls;
	char out[1024];
	const char *ans;

	(void)cls;
	(void)version;
	(void)method;
	if (!b) {
		*con_cls = calloc(1, sizeof(*b));
		return *con_cls ? MHD_YES : MHD_NO;
	}
	if (*upload_size) {
		const char *az = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
		pthread_mutex_lock(&fake_mu);
		snprintf(fake_last_auth, sizeof(fake_last_auth), "%s", az ? az : "");
		pthread_mutex_unlock(&fake_mu);
		size_t n = *upload_size < sizeof(b->buf) - 1 - b->len ? *upload_size
		                                                      : sizeof(b->buf) - 1 - b->len;
		memcpy(b->buf + b->len, upload, n);
		b->len += n;
		b->buf[b->len] = 0;
		*upload_size = 0;
		return MHD_YES;
	}
	if (strcmp(url, "/apis/authentication.k8s.io/v1/tokenreviews") == 0) {
		atomic_fetch_add(&fake_token_reviews, 1);
		if (strstr(b->buf, "\"token\":\"good\""))
			ans = "{\"authenticated\":true,\"user\":{\"username\":\"alice\",\"uid\":"
			      "\"u-1\",\"groups\":[\"team\","
			      "\"system:authenticated\"],\"extra\":{\"k\":[\"v\"]}}}";
		else if (strstr(b->buf, "\"token\":\"admin\""))
			ans = "{\"authenticated\":true,\"user\":{\"username\":\"root\",\"groups\":["
			      "\"system:masters\"]}}";
		else if (strstr(b->buf, "\"token\":\"slow\"")) {
			usleep(1000000);
			ans = "{\"authenticated\":true,\"user\":{\"username\":\"slowpoke\"}}";
		} else
			ans = "{\"authenticated\":false,\"error\":\"invalid bearer token\"}";
		snprintf(out, sizeof(out),
		         "{\"kind\":\"TokenReview\",\"apiVersion\":\"authentication.k8s.io/"
		         "v1\",\"status\":%s}",
		         ans);
	} else if (strcmp(url, "/apis/authorization.k8s.io/v1/subjectaccessreviews") == 0) {
		atomic_fetch_add(&fake_access_reviews, 1);
		pthread_mutex_lock(&fake_mu);
		snprintf(fake_last_sar, sizeof(fake_last_sar), "%s", b->buf);
		pthread_mutex_unlock(&fake_mu);
		bool ok = (strstr(b->buf, "\"user\":\"alice\"") ||
		           strstr(b->buf, "\"user\":\"slowpoke\"")) &&
		          strstr(b->buf, "\"path\":\"/metrics\"");
		snprintf(out, sizeof(out),
		         "{\"kind\":\"SubjectAccessReview\",\"apiVersion\":\"authorization.k8s.io/"
		         "v1\","
		         "\"status\":{\"allowed\":%s%s}}",
		         ok ? "true" : "false", ok ? "" : ",\"reason\":\"no RBAC policy matched\"");
	} else {
		snprintf(out, sizeof(out), "{\"kind\":\"Status\",\"code\":404}");
		struct MHD_Response *r =
		        MHD_create_response_from_buffer(strlen(out), out, MHD_RESPMEM_MUST_COPY);
		enum MHD_Result q = MHD_queue_response(c, 404, r);
		MHD_destroy_response(r);
		return q;
	}
	struct MHD_Response *r =
	        MHD_create_response_from_buffer(strlen(out), out, MHD_RESPMEM_MUST_COPY);
	MHD_add_response_header(r, "Content-Type", "application/json");
	enum MHD_Result q = MHD_queue_response(c, 201, r);
	MHD_destroy_response(r);
	return q;
}

static void fake_done(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode t)
{
	(void)cls;
	(void)c;
	(void)t;
	free(*con_cls);
	*con_cls = NULL;
}

static struct MHD_Daemon *fake_start(char *kubeconfig, size_t n)
{
	struct MHD_Daemon *d = MHD_start_daemon(
	        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0, NULL, NULL,
	        fake_handler, NULL, MHD_OPTION_NOTIFY_COMPLETED, fake_done, NULL, MHD_OPTION_END);
	assert_non_null(d);
	int port = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port;
	char dir[] = "/tmp/kcmd-fakeapi-XXXXXX";
	assert_non_null(mkdtemp(dir));
	snprintf(kubeconfig, n, "%s/kubeconfig", dir);
	FILE *f = fopen(kubeconfig, "w");
	assert_non_null(f);
	fprintf(f,
	        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: "
	        "http://127.0.0.1:%d\n"
	        "users:\n- name: u\n  user:\n    token: kcmd-reviewer\ncontexts:\n- name: x\n  "
	        "context:\n"
	        "    cluster: c\n    user: u\ncurrent-context: x\n",
	        port);
	fclose(f);
	atomic_store(&fake_token_reviews, 0);
	atomic_store(&fake_access_reviews, 0);
	return d;
}

static int64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

struct bg_get {
	const char *url, *token;
	long code;
	struct resp r;
};

static void *bg_get_main(void *arg)
{
	struct bg_get *g = arg;
	CURL *c = curl_easy_init();
	char auth[128];
	struct curl_slist *hd;

	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", g->token);
	hd = curl_slist_append(NULL, auth);
	curl_easy_setopt(c, CURLOPT_URL, g->url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hd);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &g->r);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &g->code);
	curl_easy_cleanup(c);
	curl_slist_free_all(hd);
	return NULL;
}

static void test_delegated_auth(void **state)
{
	(void)state;
	struct ipc_loop *loop;
	struct mgr_httpd *h;
	char kc[256], err[512], url[256];
	pthread_t th;
	static struct resp r;
	struct MHD_Daemon *fake = fake_start(kc, sizeof(kc));
	struct mgr_httpd_auth_opts ao;
	struct mgr_httpd_auth_stats st;

	mgr_httpd_auth_defaults(&ao);
	ao.authentication_kubeconfig = kc;
	ao.authorization_kubeconfig = kc;
	ao.no_in_cluster = true;
	struct mgr_httpd_config cfg = {
	        .bind_address = "127.0.0.1", .plain_http = true, .auth = &ao};
	assert_int_equal(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO), 0);
	assert_int_equal(mgr_httpd_new(loop, &cfg, &h, err, sizeof(err)), 0);
	assert_non_null(strstr(mgr_httpd_auth_summary(h),
	                       "TokenReview through --authentication-kubeconfig"));
	mgr_httpd_set_metrics(h, metrics, NULL);
	assert_int_equal(mgr_httpd_add_handler(h, "/debug/controllers/gc", "uid", echo, "gc"), 0);
	int port = mgr_httpd_port(h);
	atomic_store(&stop_loop, false);
	pthread_create(&th, NULL, loop_thread, loop);
#define U(path) (snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path), url)

	/* anonymous: the always-allowed paths only; the rest is a 403 from the SubjectAccessReview
	 */
	bearer_token = NULL;
	assert_int_equal(get(U("/healthz"), NULL, &r, false, NULL), 200);
	assert_int_equal(atomic_load(&fake_access_reviews), 0);
	assert_int_equal(get(U("/metrics"), NULL, &r, false, NULL), 403);
	assert_non_null(strstr(
	        r.body, "\"message\":\"forbidden: User \\\"system:anonymous\\\" cannot get path "
	                "\\\"/metrics\\\": no RBAC policy matched\""));
	assert_non_null(strstr(r.body, "\"reason\":\"Forbidden\""));
	assert_int_equal(atomic_load(&fake_access_reviews), 1);
	pthread_mutex_lock(&fake_mu);
	assert_non_null(
	        strstr(fake_last_sar,
	               "\"nonResourceAttributes\":{\"path\":\"/metrics\",\"verb\":\"get\"}"));
	assert_non_null(strstr(fake_last_sar, "\"groups\":[\"system:unauthenticated\"]"));
	pthread_mutex_unlock(&fake_mu);
	assert_int_equal(atomic_load(&fake_token_reviews), 0);

	/* an invalid token: 401, even on an always-allowed path (authentication comes first) */
	bearer_token = "bogus";
	assert_int_equal(get(U("/healthz"), NULL, &r, false, NULL), 401);
	assert_non_null(strstr(r.body, "\"reason\":\"Unauthorized\""));
	assert_int_equal(atomic_load(&fake_token_reviews), 1);

	/* a token allowed /metrics: 200; again: both answers come from the caches */
	bearer_token = "good";
	assert_int_equal(get(U("/metrics"), NULL, &r, false, NULL), 200);
	assert_non_null(strstr(r.body, "leader_election_master_status"));
	pthread_mutex_lock(&fake_mu);
	assert_non_null(strstr(fake_last_sar,
	                       "\"user\":\"alice\",\"groups\":[\"team\",\"system:authenticated\"],"
	                       "\"extra\":{\"k\":[\"v\"]},\"uid\":\"u-1\""));
	pthread_mutex_unlock(&fake_mu);
	int tr = atomic_load(&fake_token_reviews), ar = atomic_load(&fake_access_reviews);
	assert_int_equal(get(U("/metrics"), NULL, &r, false, NULL), 200);
	assert_int_equal(atomic_load(&fake_token_reviews), tr);
	assert_int_equal(atomic_load(&fake_access_reviews), ar);
	mgr_httpd_auth_stats(h, &st);
	assert_true(st.token_cache_hits >= 1 && st.access_cache_hits >= 1);
	/* ...but not the debug handler */
	assert_int_equal(get(U("/debug/controllers/gc/graph"), NULL, &r, false, NULL), 403);
	assert_non_null(strstr(r.body, "cannot get path \\\"/debug/controllers/gc/graph\\\""));
	assert_int_equal(get(U("/debug/controllers/gc/graph"), "HEAD", &r, false, NULL), 403);

	/* system:masters needs no SubjectAccessReview */
	bearer_token = "admin";
	ar = atomic_load(&fake_access_reviews);
	assert_int_equal(get(U("/debug/controllers/gc/graph?uid=x"), NULL, &r, false, NULL), 200);
	assert_string_equal(r.body, "gc sub=/graph uid=x");
	assert_int_equal(atomic_load(&fake_access_reviews), ar);

	/* a TokenReview that takes 1 s does not hold the loop: /healthz answers meanwhile */
	struct bg_get slow = {.url = strdup(U("/metrics")), .token = "slow"};
	pthread_t bg;
	int64_t t0 = now_ms();
	pthread_create(&bg, NULL, bg_get_main, &slow);
	usleep(200000);
	bearer_token = NULL;
	int64_t t1 = now_ms();
	assert_int_equal(get(U("/healthz"), NULL, &r, false, NULL), 200);
	assert_true(now_ms() - t1 < 300);
	pthread_join(bg, NULL);
	assert_true(now_ms() - t0 >= 900);
	assert_int_equal(slow.code, 200);
	free((char *)slow.url);

	atomic_store(&stop_loop, true);
	pthread_join(th, NULL);
	mgr_httpd_free(h);
	ipc_loop_free(loop);
	MHD_stop_daemon(fake);
	bearer_token = NULL;
}

static void test_cache_ttl(void **state)
{
	(void)state;
	struct ipc_loop *loop;
	struct mgr_httpd *h;
	char kc[256], err[512], url[256];
	pthread_t th;
	static struct resp r;
	struct MHD_Daemon *fake = fake_start(kc, sizeof(kc));
	struct mgr_httpd_auth_opts ao;

	mgr_httpd_auth_defaults(&ao);
	ao.authentication_kubeconfig = kc;
	ao.authorization_kubeconfig = kc;
	ao.token_cache_ttl_us = 300000;
	ao.authorized_ttl_us = 300000;
	ao.unauthorized_ttl_us = 0; /* denials are not cached */
	ao.no_in_cluster = true;
	struct mgr_httpd_config cfg = {
	        .bind_address = "127.0.0.1", .plain_http = true, .auth = &ao};
	assert_int_equal(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO), 0);
	assert_int_equal(mgr_httpd_new(loop, &cfg, &h, err, sizeof(err)), 0);
	int port = mgr_httpd_port(h);
	atomic_store(&stop_loop, false);
	pthread_create(&th, NULL, loop_thread, loop);
	bearer_token = "good";
	assert_int_equal(get(U("/metrics"), NULL, &r, false, NULL), 200);
	assert_int_equal(get(U("/metrics"), NULL, &r, false, NULL), 200);
	assert_int_equal(atomic_load(&fake_token_reviews), 1);
	assert_int_equal(atomic_load(&fake_access_reviews), 1);
	usleep(400000); /* both expired */
	assert_int_equal(get(U("/metrics"), NULL, &r, false, NULL), 200);
	assert_int_equal(atomic_load(&fake_token_reviews), 2);
	assert_int_equal(atomic_load(&fake_access_reviews), 2);
	assert_int_equal(get(U("/livez/ping"), NULL, &r, false, NULL), 403); /* exact paths only */
	assert_int_equal(get(U("/livez/ping"), NULL, &r, false, NULL), 403);
	assert_int_equal(atomic_load(&fake_access_reviews), 4); /* no denial cached */
	atomic_store(&stop_loop, true);
	pthread_join(th, NULL);
	mgr_httpd_free(h);
	ipc_loop_free(loop);
	MHD_stop_daemon(fake);
	bearer_token = NULL;
}

static void test_no_reviewers(void **state)
{
	(void)state;
	struct ipc_loop *loop;
	struct mgr_httpd *h;
	char err[512], url[256];
	pthread_t th;
	static struct resp r;
	/* kcm outside a pod without --authentication/authorization-kubeconfig: tokens are not
	 * checked (anonymous), only the always-allowed paths are served */
	struct mgr_httpd_auth_opts ao;
	mgr_httpd_auth_defaults(&ao);
	ao.no_in_cluster = true;
	struct mgr_httpd_config cfg = {
	        .bind_address = "127.0.0.1", .plain_http = true, .auth = &ao};
	assert_int_equal(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO), 0);
	assert_int_equal(mgr_httpd_new(loop, &cfg, &h, err, sizeof(err)), 0);
	assert_non_null(strstr(mgr_httpd_auth_summary(h), "authentication: none"));
	mgr_httpd_set_metrics(h, metrics, NULL);
	mgr_httpd_set_zpages(h, zpage, NULL);
	int port = mgr_httpd_port(h);
	atomic_store(&stop_loop, false);
	pthread_create(&th, NULL, loop_thread, loop);
	bearer_token = "anything";
	assert_int_equal(get(U("/metrics"), NULL, &r, false, NULL), 403);
	assert_non_null(strstr(
	        r.body,
	        "forbidden: User \\\"system:anonymous\\\" cannot get path \\\"/metrics\\\"\""));
	assert_int_equal(get(U("/readyz"), NULL, &r, false, NULL), 200);
	assert_int_equal(get(U("/healthz/ping"), NULL, &r, false, NULL), 403);
	/* the z-pages are behind the same authorization as /metrics */
	assert_int_equal(get(U("/statusz"), NULL, &r, false, NULL), 403);
	assert_int_equal(get(U("/flagz"), NULL, &r, false, NULL), 403);
	bearer_token = NULL;
	atomic_store(&stop_loop, true);
	pthread_join(th, NULL);
	mgr_httpd_free(h);
	/* a bad allow-path and an unreadable kubeconfig are refused */
	ao.always_allow_paths = "/a*b";
	assert_int_equal(mgr_httpd_new(loop, &cfg, &h, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "only trailing * allowed in /a*b"));
	ao.always_allow_paths = NULL;
	ao.authorization_kubeconfig = "/nonexistent/kubeconfig";
	assert_true(mgr_httpd_new(loop, &cfg, &h, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "failed to get delegated authorization kubeconfig"));
	ipc_loop_free(loop);
}

/* a mounted handler that takes 1 s */
static int slow_handler(void *u, const char *sub, const char *const *args, size_t n,
                        unsigned *status, const char **ctype, char **body, size_t *len)
{
	(void)u;
	(void)args;
	(void)n;
	usleep(1000000);
	*status = 200;
	*ctype = "text/plain";
	*body = strdup(sub);
	*len = strlen(sub);
	return 0;
}

static void test_render_off_loop(void **state)
{
	(void)state;
	struct ipc_loop *loop;
	struct mgr_httpd *h;
	char err[512], url[256];
	pthread_t th, bg;
	static struct resp r;
	struct mgr_httpd_auth_opts all = {.always_allow_paths = "/*", .no_in_cluster = true};
	struct mgr_httpd_config cfg = {
	        .bind_address = "127.0.0.1", .plain_http = true, .auth = &all};
	assert_int_equal(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO), 0);
	assert_int_equal(mgr_httpd_new(loop, &cfg, &h, err, sizeof(err)), 0);
	assert_int_equal(mgr_httpd_add_handler(h, "/debug/slow", NULL, slow_handler, NULL), 0);
	int port = mgr_httpd_port(h);
	atomic_store(&stop_loop, false);
	pthread_create(&th, NULL, loop_thread, loop);
	struct bg_get slow = {.url = strdup(U("/debug/slow/graph")), .token = "x"};
	int64_t t0 = now_ms();
	pthread_create(&bg, NULL, bg_get_main, &slow);
	usleep(200000);
	int64_t t1 = now_ms();
	assert_int_equal(get(U("/healthz"), NULL, &r, false, NULL), 200);
	assert_true(now_ms() - t1 < 300); /* the loop is not rendering */
	pthread_join(bg, NULL);
	assert_true(now_ms() - t0 >= 900);
	assert_int_equal(slow.code, 200);
	assert_string_equal(slow.r.body, "/graph");
	free((char *)slow.url);
	/* per-client connection limit: one more than MGR_HTTPD_PER_IP is closed at once */
	int fds[MGR_HTTPD_PER_IP + 1];
	for (int i = 0; i <= MGR_HTTPD_PER_IP; i++) {
		struct sockaddr_in a = {.sin_family = AF_INET,
		                        .sin_port = htons((uint16_t)port),
		                        .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		assert_int_equal(connect(fds[i], (struct sockaddr *)&a, sizeof(a)), 0);
	}
	usleep(200000);
	char c;
	struct timeval tv = {.tv_sec = 2};
	setsockopt(fds[MGR_HTTPD_PER_IP], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	assert_int_equal(recv(fds[MGR_HTTPD_PER_IP], &c, 1, 0), 0); /* closed by the server */
	for (int i = 0; i <= MGR_HTTPD_PER_IP; i++)
		close(fds[i]);
	atomic_store(&stop_loop, true);
	pthread_join(th, NULL);
	mgr_httpd_free(h);
	ipc_loop_free(loop);
}

/* ---- client certificates ------------------------------------------------------------------- */

static char *pem_of_crt(gnutls_x509_crt_t c)
{
	gnutls_datum_t d;
	char *s;
	assert_int_equal(gnutls_x509_crt_export2(c, GNUTLS_X509_FMT_PEM, &d), 0);
	s = strndup((char *)d.data, d.size);
	gnutls_free(d.data);
	return s;
}

static char *pem_of_key(gnutls_x509_privkey_t k)
{
	gnutls_datum_t d;
	char *s;
	assert_int_equal(gnutls_x509_privkey_export2(k, GNUTLS_X509_FMT_PEM, &d), 0);
	s = strndup((char *)d.data, d.size);
	gnutls_free(d.data);
	return s;
}

/* A certificate for cn/org signed by (ca_crt, ca_key), or self-signed CA when ca_crt is NULL. */
static void issue(gnutls_x509_crt_t ca_crt, gnutls_x509_privkey_t ca_key, const char *cn,
                  const char *org, bool client_auth, gnutls_x509_crt_t *ret_crt,
                  gnutls_x509_privkey_t *ret_key)
{
	gnutls_x509_crt_t c;
	gnutls_x509_privkey_t k;
	unsigned char serial[8];
	time_t now = time(NULL);
	static unsigned char ctr;

	memset(serial, 0, sizeof(serial));
	serial[7] = ++ctr;
	assert_int_equal(gnutls_x509_privkey_init(&k), 0);
	assert_int_equal(
	        gnutls_x509_privkey_generate(k, GNUTLS_PK_ECDSA,
	                                     GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0),
	        0);
	assert_int_equal(gnutls_x509_crt_init(&c), 0);
	gnutls_x509_crt_set_version(c, 3);
	gnutls_x509_crt_set_serial(c, serial, sizeof(serial));
	gnutls_x509_crt_set_activation_time(c, now - 3600);
	gnutls_x509_crt_set_expiration_time(c, now + 3600);
	gnutls_x509_crt_set_dn_by_oid(c, GNUTLS_OID_X520_COMMON_NAME, 0, cn, strlen(cn));
	if (org)
		gnutls_x509_crt_set_dn_by_oid(c, GNUTLS_OID_X520_ORGANIZATION_NAME, 0, org,
		                              strlen(org));
	gnutls_x509_crt_set_key(c, k);
	if (!ca_crt) {
		gnutls_x509_crt_set_basic_constraints(c, 1, -1);
		gnutls_x509_crt_set_key_usage(c, GNUTLS_KEY_KEY_CERT_SIGN |
		                                         GNUTLS_KEY_DIGITAL_SIGNATURE);
		assert_int_equal(gnutls_x509_crt_sign2(c, c, k, GNUTLS_DIG_SHA256, 0), 0);
	} else {
		gnutls_x509_crt_set_basic_constraints(c, 0, -1);
		gnutls_x509_crt_set_key_usage(c, GNUTLS_KEY_DIGITAL_SIGNATURE);
		gnutls_x509_crt_set_key_purpose_oid(
		        c, client_auth ? GNUTLS_KP_TLS_WWW_CLIENT : GNUTLS_KP_TLS_WWW_SERVER, 0);
		if (!client_auth) {
			unsigned char lo[4] = {127, 0, 0, 1};
			gnutls_x509_crt_set_subject_alt_name(c, GNUTLS_SAN_IPADDRESS, lo, 4,
			                                     GNUTLS_FSAN_APPEND);
		}
		assert_int_equal(gnutls_x509_crt_sign2(c, ca_crt, ca_key, GNUTLS_DIG_SHA256, 0), 0);
	}
	*ret_crt = c;
	*ret_key = k;
}

static long get_cert(const char *url, const char *cert, const char *key, struct resp *r)
{
	CURL *c = curl_easy_init();
	long code = 0;
	struct curl_blob cb = {.data = (void *)cert, .len = strlen(cert), .flags = CURL_BLOB_COPY};
	struct curl_blob kb = {.data = (void *)key, .len = strlen(key), .flags = CURL_BLOB_COPY};

	r->len = 0;
	r->body[0] = 0;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	curl_easy_setopt(c, CURLOPT_SSLCERT_BLOB, &cb);
	curl_easy_setopt(c, CURLOPT_SSLKEY_BLOB, &kb);
	curl_easy_setopt(c, CURLOPT_SSLCERTTYPE, "PEM");
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(c);
	return code;
}

static void write_str(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(s, f);
	fclose(f);
}

/* get_cert with extra request headers (NULL-terminated "Name: value" strings). */
static long get_cert_hdrs(const char *url, const char *cert, const char *key,
                          const char *const *hdrs, struct resp *r)
{
	CURL *c = curl_easy_init();
	long code = 0;
	struct curl_slist *hl = NULL;
	struct curl_blob cb = {.data = (void *)cert, .len = strlen(cert), .flags = CURL_BLOB_COPY};
	struct curl_blob kb = {.data = (void *)key, .len = strlen(key), .flags = CURL_BLOB_COPY};

	r->len = 0;
	r->body[0] = 0;
	for (; hdrs && *hdrs; hdrs++)
		hl = curl_slist_append(hl, *hdrs);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	curl_easy_setopt(c, CURLOPT_SSLCERT_BLOB, &cb);
	curl_easy_setopt(c, CURLOPT_SSLKEY_BLOB, &kb);
	curl_easy_setopt(c, CURLOPT_SSLCERTTYPE, "PEM");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(c);
	curl_slist_free_all(hl);
	return code;
}

/* --requestheader-*: a front proxy's certificate (its own CA, an allowed CommonName) names the
 * user in X-Remote-User and its groups in X-Remote-Group; any other certificate's headers are
 * ignored; a front proxy without a username header is no identity. */
static void test_request_headers(void **state)
{
	(void)state;
	struct ipc_loop *loop;
	struct mgr_httpd *h;
	char err[512], url[256], dir[] = "/tmp/kcmd-rh-XXXXXX", cafile[300], rhfile[300];
	pthread_t th;
	static struct resp r;
	gnutls_x509_crt_t ca, pca, proxy, other_proxy, carol, dave;
	gnutls_x509_privkey_t ca_k, pca_k, proxy_k, other_proxy_k, carol_k, dave_k;

	issue(NULL, NULL, "client-ca", NULL, false, &ca, &ca_k);
	issue(NULL, NULL, "front-proxy-ca", NULL, false, &pca, &pca_k);
	issue(pca, pca_k, "front-proxy-client", NULL, true, &proxy, &proxy_k);
	issue(pca, pca_k, "other-proxy", NULL, true, &other_proxy, &other_proxy_k);
	issue(ca, ca_k, "carol", "system:masters", true, &carol, &carol_k);
	issue(ca, ca_k, "dave", "team", true, &dave, &dave_k);
	assert_non_null(mkdtemp(dir));
	snprintf(cafile, sizeof(cafile), "%s/ca.crt", dir);
	snprintf(rhfile, sizeof(rhfile), "%s/front-proxy-ca.crt", dir);
	char *ca_pem = pem_of_crt(ca), *pca_pem = pem_of_crt(pca);
	write_str(cafile, ca_pem);
	write_str(rhfile, pca_pem);

	struct mgr_httpd_auth_opts ao;
	mgr_httpd_auth_defaults(&ao);
	ao.client_ca_file = cafile;
	ao.requestheader_client_ca_file = rhfile;
	ao.requestheader_allowed_names = "front-proxy-client";
	ao.no_in_cluster = true;
	struct mgr_httpd_config cfg = {.bind_address = "127.0.0.1", .auth = &ao};
	assert_int_equal(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO), 0);
	assert_int_equal(mgr_httpd_new(loop, &cfg, &h, err, sizeof(err)), 0);
	mgr_httpd_set_metrics(h, metrics, NULL);
	atomic_store(&stop_loop, false);
	pthread_create(&th, NULL, loop_thread, loop);
	snprintf(url, sizeof(url), "https://127.0.0.1:%d/metrics", mgr_httpd_port(h));
	char *pc = pem_of_crt(proxy), *pk = pem_of_key(proxy_k);
	char *oc = pem_of_crt(other_proxy), *ok = pem_of_key(other_proxy_k);
	char *cc = pem_of_crt(carol), *ck = pem_of_key(carol_k);
	char *dc = pem_of_crt(dave), *dk = pem_of_key(dave_k);
	const char *const masters[] = {"X-Remote-User: alice", "X-Remote-Group: team",
	                               "x-remote-group: system:masters", NULL};
	const char *const alice[] = {"X-Remote-User: alice", "X-Remote-Group: team", NULL};
	const char *const groups_only[] = {"X-Remote-Group: system:masters", NULL};

	/* the proxy's user, in a group from the second header line: always allowed */
	assert_int_equal(get_cert_hdrs(url, pc, pk, masters, &r), 200);
	/* the proxy's user without system:masters: authenticated as alice, no reviewer */
	assert_int_equal(get_cert_hdrs(url, pc, pk, alice, &r), 403);
	assert_non_null(
	        strstr(r.body, "forbidden: User \\\"alice\\\" cannot get path \\\"/metrics\\\""));
	/* no username header: not the request-header authenticator's; the client-CA one refuses
	 * the proxy's certificate */
	assert_int_equal(get_cert_hdrs(url, pc, pk, groups_only, &r), 401);
	/* a certificate of the proxy CA whose CommonName is not allowed */
	assert_int_equal(get_cert_hdrs(url, oc, ok, masters, &r), 401);
	/* a client-CA certificate: its own identity, the headers count for nothing */
	assert_int_equal(get_cert_hdrs(url, cc, ck, alice, &r), 200);
	assert_int_equal(get_cert_hdrs(url, dc, dk, masters, &r), 403);
	assert_non_null(
	        strstr(r.body, "forbidden: User \\\"dave\\\" cannot get path \\\"/metrics\\\""));
	atomic_store(&stop_loop, true);
	pthread_join(th, NULL);
	mgr_httpd_free(h);

	/* --requestheader-uid-headers: the first non-empty one is the user's UID, and the
	 * SubjectAccessReview carries it */
	char kc[256];
	struct MHD_Daemon *fake = fake_start(kc, sizeof(kc));
	ao.authorization_kubeconfig = kc;
	ao.requestheader_uid_headers = "x-remote-uid,x-other-uid";
	assert_int_equal(mgr_httpd_new(loop, &cfg, &h, err, sizeof(err)), 0);
	mgr_httpd_set_metrics(h, metrics, NULL);
	atomic_store(&stop_loop, false);
	pthread_create(&th, NULL, loop_thread, loop);
	snprintf(url, sizeof(url), "https://127.0.0.1:%d/metrics", mgr_httpd_port(h));
	const char *const with_uid[] = {"X-Remote-User: alice",
	                                "X-Remote-Uid: ", "X-Other-Uid: u-123", NULL};
	assert_int_equal(get_cert_hdrs(url, pc, pk, with_uid, &r), 200); /* the fake allows alice */
	pthread_mutex_lock(&fake_mu);
	assert_non_null(strstr(fake_last_sar, "\"user\":\"alice\""));
	assert_non_null(strstr(fake_last_sar, "\"uid\":\"u-123\""));
	pthread_mutex_unlock(&fake_mu);
	/* without a UID header the review has no uid */
	assert_int_equal(get_cert_hdrs(url, pc, pk, alice, &r), 200);
	pthread_mutex_lock(&fake_mu);
	assert_null(strstr(fake_last_sar, "\"uid\""));
	pthread_mutex_unlock(&fake_mu);
	atomic_store(&stop_loop, true);
	pthread_join(th, NULL);
	mgr_httpd_free(h);
	MHD_stop_daemon(fake);
	ao.authorization_kubeconfig = NULL;
	/* kcm's validation: X-Remote-Uid must be among them; the gate must be on */
	ao.requestheader_uid_headers = "x-other-uid";
	assert_int_equal(mgr_httpd_new(loop, &cfg, &h, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "without specifying the standard X-Remote-Uid header"));
	ao.requestheader_uid_headers = "X-Remote-Uid";
	ao.requestheader_uid_gate = false;
	assert_int_equal(mgr_httpd_new(loop, &cfg, &h, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "requires the \"RemoteRequestHeaderUID\" feature"));
	ao.requestheader_uid_headers = NULL;
	ao.requestheader_uid_gate = true;

	/* an empty --requestheader-username-headers turns the authenticator off (kcm's nil
	 * RequestHeaderConfig): the proxy's headers are ignored, its certificate refused */
	ao.requestheader_username_headers = "";
	assert_int_equal(mgr_httpd_new(loop, &cfg, &h, err, sizeof(err)), 0);
	mgr_httpd_set_metrics(h, metrics, NULL);
	atomic_store(&stop_loop, false);
	pthread_create(&th, NULL, loop_thread, loop);
	snprintf(url, sizeof(url), "https://127.0.0.1:%d/metrics", mgr_httpd_port(h));
	assert_int_equal(get_cert_hdrs(url, pc, pk, masters, &r), 401);
	atomic_store(&stop_loop, true);
	pthread_join(th, NULL);
	mgr_httpd_free(h);

	/* a blank header name is refused at start, as kcm's "empty header" */
	ao.requestheader_username_headers = "x-remote-user, ";
	assert_int_equal(mgr_httpd_new(loop, &cfg, &h, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "empty header"));
	/* a CA file without a certificate is refused at start */
	ao.requestheader_username_headers = "x-remote-user";
	ao.requestheader_client_ca_file = cafile;
	write_str(cafile, "not a certificate\n");
	assert_int_equal(mgr_httpd_new(loop, &cfg, &h, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no certificate"));
	ipc_loop_free(loop);
	free(ca_pem), free(pca_pem), free(pc), free(pk), free(oc), free(ok);
	free(cc), free(ck), free(dc), free(dk);
	gnutls_x509_crt_t crts[] = {ca, pca, proxy, other_proxy, carol, dave};
	gnutls_x509_privkey_t keys[] = {ca_k, pca_k, proxy_k, other_proxy_k, carol_k, dave_k};
	for (int i = 0; i < 6; i++) {
		gnutls_x509_crt_deinit(crts[i]);
		gnutls_x509_privkey_deinit(keys[i]);
	}
	unlink(cafile);
	unlink(rhfile);
	rmdir(dir);
}

static void test_client_certificates(void **state)
{
	(void)state;
	struct ipc_loop *loop;
	struct mgr_httpd *h;
	char err[512], url[256], dir[] = "/tmp/kcmd-clientca-XXXXXX", cafile[300];
	pthread_t th;
	static struct resp r;
	gnutls_x509_crt_t ca, other_ca, admin, plain, server_only, stranger;
	gnutls_x509_privkey_t ca_k, other_k, admin_k, plain_k, server_only_k, stranger_k;

	issue(NULL, NULL, "test-ca", NULL, false, &ca, &ca_k);
	issue(NULL, NULL, "other-ca", NULL, false, &other_ca, &other_k);
	issue(ca, ca_k, "carol", "system:masters", true, &admin, &admin_k);
	issue(ca, ca_k, "dave", "team", true, &plain, &plain_k);
	issue(ca, ca_k, "eve", "system:masters", false, &server_only,
	      &server_only_k); /* not for client auth */
	issue(other_ca, other_k, "mallory", "system:masters", true, &stranger, &stranger_k);
	assert_non_null(mkdtemp(dir));
	snprintf(cafile, sizeof(cafile), "%s/ca.crt", dir);
	char *ca_pem = pem_of_crt(ca);
	FILE *f = fopen(cafile, "w");
	fputs(ca_pem, f);
	fclose(f);

	struct mgr_httpd_auth_opts ao;
	mgr_httpd_auth_defaults(&ao);
	ao.client_ca_file = cafile;
	ao.no_in_cluster = true;
	struct mgr_httpd_config cfg = {.bind_address = "127.0.0.1", .auth = &ao};
	assert_int_equal(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO), 0);
	assert_int_equal(mgr_httpd_new(loop, &cfg, &h, err, sizeof(err)), 0);
	mgr_httpd_set_metrics(h, metrics, NULL);
	int port = mgr_httpd_port(h);
	atomic_store(&stop_loop, false);
	pthread_create(&th, NULL, loop_thread, loop);
	snprintf(url, sizeof(url), "https://127.0.0.1:%d/metrics", port);
	char *c1 = pem_of_crt(admin), *k1 = pem_of_key(admin_k);
	assert_int_equal(get_cert(url, c1, k1, &r), 200); /* CN carol, O system:masters */
	char *c2 = pem_of_crt(plain), *k2 = pem_of_key(plain_k);
	assert_int_equal(get_cert(url, c2, k2, &r), 403); /* authenticated as dave, no reviewer */
	assert_non_null(
	        strstr(r.body, "forbidden: User \\\"dave\\\" cannot get path \\\"/metrics\\\""));
	char *c3 = pem_of_crt(server_only), *k3 = pem_of_key(server_only_k);
	assert_int_equal(get_cert(url, c3, k3, &r), 401); /* not valid for client auth */
	char *c4 = pem_of_crt(stranger), *k4 = pem_of_key(stranger_k);
	snprintf(url, sizeof(url), "https://127.0.0.1:%d/healthz", port);
	assert_int_equal(get_cert(url, c4, k4, &r),
	                 401); /* another CA: refused, even on /healthz */
	assert_int_equal(get(url, NULL, &r, true, NULL), 0); /* (curl verifies by default: no CA) */
	atomic_store(&stop_loop, true);
	pthread_join(th, NULL);
	mgr_httpd_free(h);
	/* an unreadable CA file is refused at start */
	ao.client_ca_file = "/nonexistent/ca.crt";
	assert_int_equal(mgr_httpd_new(loop, &cfg, &h, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "unable to load client CA file /nonexistent/ca.crt"));
	ipc_loop_free(loop);
	free(ca_pem);
	free(c1), free(k1), free(c2), free(k2), free(c3), free(k3), free(c4), free(k4);
	gnutls_x509_crt_t crts[] = {ca, other_ca, admin, plain, server_only, stranger};
	gnutls_x509_privkey_t keys[] = {ca_k, other_k, admin_k, plain_k, server_only_k, stranger_k};
	for (int i = 0; i < 6; i++) {
		gnutls_x509_crt_deinit(crts[i]);
		gnutls_x509_privkey_deinit(keys[i]);
	}
	unlink(cafile);
	rmdir(dir);
}

/* Stops the loop thread, frees the server and its loop. */
static void stop_server(pthread_t th, struct mgr_httpd *h, struct ipc_loop *loop)
{
	atomic_store(&stop_loop, true);
	pthread_join(th, NULL);
	mgr_httpd_free(h);
	ipc_loop_free(loop);
}

static void deinit_pairs(gnutls_x509_crt_t *crts, gnutls_x509_privkey_t *keys, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		gnutls_x509_crt_deinit(crts[i]);
		gnutls_x509_privkey_deinit(keys[i]);
	}
}

/* Swaps path's content at once (a rename, as a Secret volume's update or an editor's save). */
static void replace_file(const char *path, const char *a, const char *b)
{
	char tmp[400];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	assert_non_null(f);
	fputs(a, f);
	if (b)
		fputs(b, f);
	fclose(f);
	assert_int_equal(rename(tmp, path), 0);
}

/* Polls url with a client certificate until it answers want (5 s at most). */
static long wait_code(const char *url, const char *cert, const char *key, long want)
{
	static struct resp r;
	long got = 0;
	for (int i = 0; i < 100 && (got = get_cert(url, cert, key, &r)) != want; i++)
		usleep(50000);
	return got;
}

/* kcm's dynamic CA content: a new --client-ca-file is in force for the next connection without a
 * restart; content with no certificate keeps the CAs in force; a CA taken out stops being
 * trusted. (Before the reload, the first wait times out at 401.) */
static void test_client_ca_reload(void **state)
{
	(void)state;
	struct ipc_loop *loop;
	struct mgr_httpd *h;
	char err[512], url[256], dir[] = "/tmp/kcmd-careload-XXXXXX", cafile[300];
	pthread_t th;
	static struct resp r;
	gnutls_x509_crt_t ca, other_ca, carol, mallory;
	gnutls_x509_privkey_t ca_k, other_k, carol_k, mallory_k;

	issue(NULL, NULL, "test-ca", NULL, false, &ca, &ca_k);
	issue(NULL, NULL, "rotated-ca", NULL, false, &other_ca, &other_k);
	issue(ca, ca_k, "carol", "system:masters", true, &carol, &carol_k);
	issue(other_ca, other_k, "mallory", "system:masters", true, &mallory, &mallory_k);
	assert_non_null(mkdtemp(dir));
	snprintf(cafile, sizeof(cafile), "%s/ca.crt", dir);
	char *ca_pem = pem_of_crt(ca), *other_pem = pem_of_crt(other_ca);
	replace_file(cafile, ca_pem, NULL);

	struct mgr_httpd_auth_opts ao;
	mgr_httpd_auth_defaults(&ao);
	ao.client_ca_file = cafile;
	ao.no_in_cluster = true;
	struct mgr_httpd_config cfg = {.bind_address = "127.0.0.1", .auth = &ao};
	assert_int_equal(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO), 0);
	assert_int_equal(mgr_httpd_new(loop, &cfg, &h, err, sizeof(err)), 0);
	mgr_httpd_set_metrics(h, metrics, NULL);
	atomic_store(&stop_loop, false);
	pthread_create(&th, NULL, loop_thread, loop);
	snprintf(url, sizeof(url), "https://127.0.0.1:%d/metrics", mgr_httpd_port(h));
	char *c1 = pem_of_crt(carol), *k1 = pem_of_key(carol_k);
	char *c2 = pem_of_crt(mallory), *k2 = pem_of_key(mallory_k);
	assert_int_equal(get_cert(url, c1, k1, &r), 200);
	assert_int_equal(get_cert(url, c2, k2, &r), 401); /* the rotated CA is not trusted yet */
	assert_int_equal(mgr_httpd_ca_reloads(h), 0);

	replace_file(cafile, ca_pem, other_pem); /* both: a rotation's first step */
	assert_int_equal(wait_code(url, c2, k2, 200), 200);
	assert_int_equal(get_cert(url, c1, k1, &r), 200);
	assert_int_equal(mgr_httpd_ca_reloads(h), 1);

	replace_file(cafile, "not a certificate\n", NULL); /* refused: the CAs in force stay */
	usleep(300000);
	assert_int_equal(get_cert(url, c1, k1, &r), 200);
	assert_int_equal(get_cert(url, c2, k2, &r), 200);
	assert_int_equal(mgr_httpd_ca_reloads(h), 1);

	replace_file(cafile, other_pem, NULL); /* the old CA taken out */
	assert_int_equal(wait_code(url, c1, k1, 401), 401);
	assert_int_equal(get_cert(url, c2, k2, &r), 200);
	assert_int_equal(mgr_httpd_ca_reloads(h), 2);

	stop_server(th, h, loop);
	free(ca_pem), free(other_pem), free(c1), free(k1), free(c2), free(k2);
	deinit_pairs((gnutls_x509_crt_t[]){ca, other_ca, carol, mallory},
	             (gnutls_x509_privkey_t[]){ca_k, other_k, carol_k, mallory_k}, 4);
	unlink(cafile);
	rmdir(dir);
}

/* kcm's dynamic serving content: a new --tls-cert-file/--tls-private-key-file pair is served to
 * the next connection; a certificate whose key has not been written yet is refused until it is. */
static void test_serving_cert_reload(void **state)
{
	(void)state;
	struct ipc_loop *loop;
	struct mgr_httpd *h;
	char err[512], url[256], dir[] = "/tmp/kcmd-servreload-XXXXXX", crt[300], key[300],
	                         ca_a[300], ca_b[300];
	pthread_t th;
	static struct resp r;
	gnutls_x509_crt_t a, b, sa, sb;
	gnutls_x509_privkey_t a_k, b_k, sa_k, sb_k;

	issue(NULL, NULL, "serving-ca-a", NULL, false, &a, &a_k);
	issue(NULL, NULL, "serving-ca-b", NULL, false, &b, &b_k);
	issue(a, a_k, "kcmd-a", NULL, false, &sa, &sa_k);
	issue(b, b_k, "kcmd-b", NULL, false, &sb, &sb_k);
	assert_non_null(mkdtemp(dir));
	snprintf(crt, sizeof(crt), "%s/tls.crt", dir);
	snprintf(key, sizeof(key), "%s/tls.key", dir);
	snprintf(ca_a, sizeof(ca_a), "%s/ca-a.crt", dir);
	snprintf(ca_b, sizeof(ca_b), "%s/ca-b.crt", dir);
	char *pa = pem_of_crt(a), *pb = pem_of_crt(b), *psa = pem_of_crt(sa), *psb = pem_of_crt(sb),
	     *ksa = pem_of_key(sa_k), *ksb = pem_of_key(sb_k);
	replace_file(ca_a, pa, NULL);
	replace_file(ca_b, pb, NULL);
	replace_file(crt, psa, NULL);
	replace_file(key, ksa, NULL);

	struct mgr_httpd_config cfg = {
	        .bind_address = "127.0.0.1", .tls_cert_file = crt, .tls_key_file = key};
	assert_int_equal(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO), 0);
	assert_int_equal(mgr_httpd_new(loop, &cfg, &h, err, sizeof(err)), 0);
	atomic_store(&stop_loop, false);
	pthread_create(&th, NULL, loop_thread, loop);
	snprintf(url, sizeof(url), "https://127.0.0.1:%d/healthz", mgr_httpd_port(h));
	assert_int_equal(get(url, NULL, &r, true, ca_a), 200);
	assert_int_equal(get(url, NULL, &r, true, ca_b), 0); /* not signed by b: refused */

	replace_file(crt, psb, NULL); /* the new certificate, its key not written yet */
	usleep(300000);
	assert_int_equal(get(url, NULL, &r, true, ca_a), 200);
	assert_int_equal(mgr_httpd_cert_reloads(h), 0);
	replace_file(key, ksb, NULL);
	long code = 0;
	for (int i = 0; i < 100 && (code = get(url, NULL, &r, true, ca_b)) != 200; i++)
		usleep(50000);
	assert_int_equal(code, 200);
	assert_int_equal(get(url, NULL, &r, true, ca_a), 0);
	assert_int_equal(mgr_httpd_cert_reloads(h), 1);

	stop_server(th, h, loop);
	free(pa), free(pb), free(psa), free(psb), free(ksa), free(ksb);
	deinit_pairs((gnutls_x509_crt_t[]){a, b, sa, sb},
	             (gnutls_x509_privkey_t[]){a_k, b_k, sa_k, sb_k}, 4);
	const char *files[] = {crt, key, ca_a, ca_b};
	for (int i = 0; i < 4; i++)
		unlink(files[i]);
	rmdir(dir);
}

static int mkpath(const char *dir)
{
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", dir);
	return system(cmd);
}

static void test_in_cluster_reviewers(void **state)
{
	(void)state;
	/* no --authentication/authorization-kubeconfig in a pod: the service account's token and
	 * CA are used to reach the apiserver (here a fake one on HTTPS) */
	gnutls_x509_crt_t ca, srv;
	gnutls_x509_privkey_t ca_k, srv_k;
	char root[] = "/tmp/kcmd-incluster-XXXXXX", sa[400], path[500], err[512], url[256],
	     port_s[16];
	struct ipc_loop *loop;
	struct mgr_httpd *h;
	pthread_t th;
	static struct resp r;

	issue(NULL, NULL, "fake-ca", NULL, false, &ca, &ca_k);
	issue(ca, ca_k, "fake-apiserver", NULL, false, &srv, &srv_k);
	char *ca_pem = pem_of_crt(ca), *srv_pem = pem_of_crt(srv), *srv_key = pem_of_key(srv_k);
	struct MHD_Daemon *fake = MHD_start_daemon(
	        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_TLS, 0,
	        NULL, NULL, fake_handler, NULL, MHD_OPTION_HTTPS_MEM_CERT, srv_pem,
	        MHD_OPTION_HTTPS_MEM_KEY, srv_key, MHD_OPTION_NOTIFY_COMPLETED, fake_done, NULL,
	        MHD_OPTION_END);
	assert_non_null(fake);
	atomic_store(&fake_token_reviews, 0);
	atomic_store(&fake_access_reviews, 0);
	assert_non_null(mkdtemp(root));
	snprintf(sa, sizeof(sa), "%s/var/run/secrets/kubernetes.io/serviceaccount", root);
	assert_int_equal(mkpath(sa), 0);
	snprintf(path, sizeof(path), "%s/token", sa);
	write_str(path, "in-cluster-token\n");
	snprintf(path, sizeof(path), "%s/ca.crt", sa);
	write_str(path, ca_pem);
	snprintf(port_s, sizeof(port_s), "%u",
	         MHD_get_daemon_info(fake, MHD_DAEMON_INFO_BIND_PORT)->port);
	setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", port_s, 1);

	struct mgr_httpd_auth_opts ao;
	mgr_httpd_auth_defaults(&ao);
	ao.in_cluster_root = root;
	struct mgr_httpd_config cfg = {
	        .bind_address = "127.0.0.1", .plain_http = true, .auth = &ao};
	assert_int_equal(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO), 0);
	assert_int_equal(mgr_httpd_new(loop, &cfg, &h, err, sizeof(err)), 0);
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	assert_non_null(
	        strstr(mgr_httpd_auth_summary(h), "TokenReview through the in-cluster config"));
	assert_non_null(strstr(mgr_httpd_auth_summary(h),
	                       "SubjectAccessReview through the in-cluster config"));
	mgr_httpd_set_metrics(h, metrics, NULL);
	int port = mgr_httpd_port(h);
	atomic_store(&stop_loop, false);
	pthread_create(&th, NULL, loop_thread, loop);
	bearer_token = "good";
	assert_int_equal(get(U("/metrics"), NULL, &r, false, NULL), 200);
	assert_int_equal(atomic_load(&fake_token_reviews), 1);
	assert_int_equal(atomic_load(&fake_access_reviews), 1);
	pthread_mutex_lock(&fake_mu);
	assert_string_equal(fake_last_auth, "Bearer in-cluster-token");
	pthread_mutex_unlock(&fake_mu);
	bearer_token = NULL;
	atomic_store(&stop_loop, true);
	pthread_join(th, NULL);
	mgr_httpd_free(h);
	ipc_loop_free(loop);
	MHD_stop_daemon(fake);
	free(ca_pem);
	free(srv_pem);
	free(srv_key);
	gnutls_x509_crt_deinit(ca);
	gnutls_x509_crt_deinit(srv);
	gnutls_x509_privkey_deinit(ca_k);
	gnutls_x509_privkey_deinit(srv_k);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
}

static void test_errors(void **state)
{
	(void)state;
	struct ipc_loop *loop;
	struct mgr_httpd *h, *h2;
	char err[256];
	struct mgr_httpd_config bad = {.bind_address = "not-an-ip", .plain_http = true};
	struct mgr_httpd_config nocert = {.bind_address = "127.0.0.1",
	                                  .tls_cert_file = "/nonexistent.crt",
	                                  .tls_key_file = "/nonexistent.key"};

	assert_int_equal(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO), 0);
	assert_int_equal(mgr_httpd_new(loop, &bad, &h, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not-an-ip"));
	assert_int_equal(mgr_httpd_new(loop, &nocert, &h, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent.crt"));
	struct mgr_httpd_config ok = {.bind_address = "127.0.0.1", .plain_http = true};
	assert_int_equal(mgr_httpd_new(loop, &ok, &h, err, sizeof(err)), 0);
	struct mgr_httpd_config same = {
	        .bind_address = "127.0.0.1", .port = mgr_httpd_port(h), .plain_http = true};
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
	        cmocka_unit_test(test_delegated_auth),
	        cmocka_unit_test(test_cache_ttl),
	        cmocka_unit_test(test_no_reviewers),
	        cmocka_unit_test(test_render_off_loop),
	        cmocka_unit_test(test_client_certificates),
	        cmocka_unit_test(test_client_ca_reload),
	        cmocka_unit_test(test_serving_cert_reload),
	        cmocka_unit_test(test_request_headers),
	        cmocka_unit_test(test_in_cluster_reviewers),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return r;
}
