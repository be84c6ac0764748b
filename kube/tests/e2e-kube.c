/* SPDX-License-Identifier: Apache-2.0 */
/* kube/tests/e2e-kube.c - kube/ against the real test cluster (tests/cluster).
 *
 * Runs only when KCMD_TEST_SERVER is set (`eval $(tests/cluster/cluster env)`), else exits 77, so
 * it never touches a cluster somebody merely has in KUBECONFIG. Everything happens in a fresh
 * namespace, deleted at the end. Covers: token auth (kubeconfig), client-cert auth
 * (kubeconfig-cert), an exec plugin, HTTP/2, aggregated discovery, pagination over 1,200 objects,
 * metadata-only list, watch + bookmark + resume from a list RV, conflict on a stale update, each
 * patch type, delete preconditions, upstream's adoption/release patch bodies on a real pod, a
 * pod created from a ReplicaSet template, Lease create/update/conflict, an Event, and the
 * Status errors (404, 409 AlreadyExists, 422 Invalid with causes), and protobuf (list,
 * metadata-only list, length-framed watch, a protobuf Status error).
 * With KCMD_CAPTURE_DIR set, raw responses are written there (fixture capture).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <cjson/cJSON.h>

#include "kube/client.h"
#include "kube/config.h"
#include "kube/discovery.h"
#include "kube/encode.h"
#include "kube/errors.h"
#include "kube/model.h"
#include "kube/proto.h"
#include "kube/selector.h"

static struct kube_config *cfg;
static struct kube_client *cl;
static char ns[64];

static void capture(const char *name, const char *body, size_t len)
{
	const char *dir = getenv("KCMD_CAPTURE_DIR");
	if (!dir || !body)
		return;
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "wb");
	if (f) {
		fwrite(body, 1, len, f);
		fclose(f);
	}
}

static int req(const struct kube_request *r, struct kube_response *resp)
{
	return kube_client_request(cl, r, NULL, NULL, resp);
}

static int do_simple(enum kube_verb v, const char *group, const char *res, const char *name,
                     const char *body, struct kube_response *resp)
{
	struct kube_request r = {.verb = v,
	                         .group = group,
	                         .version = "v1",
	                         .resource = res,
	                         .ns = ns,
	                         .name = name,
	                         .body = body};
	return req(&r, resp);
}

static int setup(void **state)
{
	(void)state;
	char err[512] = "";
	struct kube_config_opts o = {.no_in_cluster = true};
	if (kube_config_load(&o, &cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "kubeconfig: %s\n", err);
		return -1;
	}
	struct kube_client_opts co = {.config = cfg, .process = "e2e", .controller = "kube"};
	if (kube_client_new(&co, &cl) < 0)
		return -1;
	snprintf(ns, sizeof(ns), "kube-e2e-%d", (int)getpid());
	char body[256];
	snprintf(body, sizeof(body),
	         "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}",
	         ns);
	struct kube_request r = {
	        .verb = KUBE_CREATE, .version = "v1", .resource = "namespaces", .body = body};
	struct kube_response resp;
	int e = req(&r, &resp);
	kube_response_clear(&resp);
	return e;
}

static int teardown(void **state)
{
	(void)state;
	struct kube_request r = {
	        .verb = KUBE_DELETE, .version = "v1", .resource = "namespaces", .name = ns};
	struct kube_response resp;
	req(&r, &resp);
	kube_response_clear(&resp);
	kube_client_free(cl);
	kube_config_free(cfg);
	return 0;
}

static void test_discovery_http2(void **state)
{
	(void)state;
	struct kube_response resp;
	struct kube_discovery *d;
	struct kube_request r = {
	        .verb = KUBE_GET, .path = "/apis", .accept = KUBE_ACCEPT_DISCOVERY_V2};
	assert_int_equal(req(&r, &resp), 0);
	assert_int_equal(resp.http_version, 2); /* the apiserver offers h2 over TLS */
	capture("discovery-v2-apis.json", resp.body, resp.body_len);
	assert_int_equal(kube_decode_discovery_v2(resp.body, resp.body_len, &d), 0);
	const struct kube_api_resource *rs = kube_discovery_find(d, "apps", "replicasets", NULL);
	assert_non_null(rs);
	assert_string_equal(rs->kind, "ReplicaSet");
	assert_true(rs->namespaced);
	assert_true(rs->verbs & KUBE_VERB_BIT_WATCH);
	assert_non_null(kube_discovery_find(d, "coordination.k8s.io", "leases", "v1"));
	kube_object_free(d);
	kube_response_clear(&resp);
	r.path = "/api";
	assert_int_equal(req(&r, &resp), 0);
	capture("discovery-v2-api.json", resp.body, resp.body_len);
	assert_int_equal(kube_decode_discovery_v2(resp.body, resp.body_len, &d), 0);
	assert_non_null(kube_discovery_find(d, "", "pods", NULL));
	assert_false(kube_discovery_find(d, "", "namespaces", NULL)->namespaced);
	kube_object_free(d);
	kube_response_clear(&resp);
	/* legacy form */
	struct kube_request l = {.verb = KUBE_GET, .path = "/apis/apps/v1"};
	assert_int_equal(req(&l, &resp), 0);
	capture("apiresourcelist-apps.json", resp.body, resp.body_len);
	assert_int_equal(kube_decode_api_resource_list(resp.body, resp.body_len, true, &d), 0);
	assert_non_null(kube_discovery_find(d, "apps", "replicasets", "v1"));
	kube_object_free(d);
	kube_response_clear(&resp);
}

struct count {
	int n;
	int partial;
};

static int count_item(void *obj, void *ud)
{
	struct count *c = ud;
	struct kube_partial *p = obj;
	c->n++;
	if (p->kind && !strcmp(p->kind, "PartialObjectMetadata"))
		c->partial++;
	kube_object_free(obj);
	return 0;
}

static void test_pagination_metadata(void **state)
{
	(void)state;
	struct kube_response resp;
	char body[256];
	/* 1,200 ConfigMaps through the non-blocking interface would be faster; the blocking one
	 * keeps this readable and still takes only a few seconds over one HTTP/2 connection */
	for (int i = 0; i < 1200; i++) {
		snprintf(body, sizeof(body),
		         "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
		         "\"cm-%04d\","
		         "\"labels\":{\"set\":\"page\",\"i\":\"%d\"}},\"data\":{\"k\":\"v\"}}",
		         i, i);
		assert_int_equal(do_simple(KUBE_CREATE, NULL, "configmaps", NULL, body, &resp), 0);
		kube_response_clear(&resp);
	}
	struct kube_request r = {.verb = KUBE_LIST,
	                         .version = "v1",
	                         .resource = "configmaps",
	                         .ns = ns,
	                         .label_selector = "set=page",
	                         .limit = 500,
	                         .metadata_only = true};
	struct kube_list_meta lm = {0};
	struct count c = {0};
	int pages = 0;
	char cont[4096] = "";
	do {
		r.cont = cont[0] ? cont : NULL;
		assert_int_equal(req(&r, &resp), 0);
		if (pages == 0)
			capture("configmaplist-partial-page1.json", resp.body, resp.body_len);
		assert_non_null(strstr(resp.body, "\"kind\":\"PartialObjectMetadataList\""));
		assert_true(kube_decode_list(KUBE_KIND_PARTIAL, resp.body, resp.body_len, 0,
		                             count_item, &c, &lm) >= 0);
		if (pages == 0) /* the server omits it when a selector is used */
			assert_int_equal(lm.remaining_item_count, -1);
		snprintf(cont, sizeof(cont), "%s", lm.cont);
		kube_response_clear(&resp);
		pages++;
	} while (cont[0]);
	assert_int_equal(pages, 3);
	assert_int_equal(c.n, 1200);
	assert_int_equal(c.partial, 1200);
	/* without a selector the first page says how many remain */
	struct kube_request ns_only = {.verb = KUBE_LIST,
	                               .version = "v1",
	                               .resource = "configmaps",
	                               .ns = ns,
	                               .limit = 500,
	                               .metadata_only = true};
	c = (struct count){0};
	assert_int_equal(req(&ns_only, &resp), 0);
	assert_int_equal(kube_decode_list(KUBE_KIND_PARTIAL, resp.body, resp.body_len, 0,
	                                  count_item, &c, &lm),
	                 500);
	assert_int_equal(lm.remaining_item_count, 700);
	assert_true(lm.cont[0] != 0);
	kube_response_clear(&resp);
	/* the full (non-metadata) list of one page */
	struct kube_request full = {.verb = KUBE_LIST,
	                            .version = "v1",
	                            .resource = "configmaps",
	                            .ns = ns,
	                            .label_selector = "set=page,i in (1,2,3)"};
	c = (struct count){0};
	assert_int_equal(req(&full, &resp), 0);
	assert_int_equal(kube_decode_list(KUBE_KIND_PARTIAL, resp.body, resp.body_len, 0,
	                                  count_item, &c, NULL),
	                 3);
	kube_response_clear(&resp);
}

struct wstate {
	int added, bookmarks;
	char last_rv[64];
};

static int on_watch(const char *json, size_t len, void *ud)
{
	struct wstate *w = ud;
	enum kube_watch_type t;
	void *o;
	int r = kube_decode_watch_event(KUBE_KIND_PARTIAL, json, len, 0, &t, &o);
	if (r < 0)
		return r;
	if (t == KUBE_WATCH_ADDED)
		w->added++;
	if (t == KUBE_WATCH_BOOKMARK)
		w->bookmarks++;
	if (t != KUBE_WATCH_ERROR) {
		struct kube_partial *p = o;
		snprintf(w->last_rv, sizeof(w->last_rv), "%s",
		         p->meta.resource_version ? p->meta.resource_version : "");
	}
	if (w->added == 1 && t == KUBE_WATCH_ADDED)
		capture("watch-added-configmap.json", json, len);
	kube_object_free(o);
	return 0;
}

static void test_watch_resume(void **state)
{
	(void)state;
	struct kube_response resp;
	struct kube_list_meta lm;
	struct count c = {0};
	struct kube_request l = {.verb = KUBE_LIST,
	                         .version = "v1",
	                         .resource = "configmaps",
	                         .ns = ns,
	                         .label_selector = "set=watch"};
	assert_int_equal(req(&l, &resp), 0);
	assert_int_equal(kube_decode_list(KUBE_KIND_PARTIAL, resp.body, resp.body_len, 0,
	                                  count_item, &c, &lm),
	                 0);
	kube_response_clear(&resp);
	for (int i = 0; i < 3; i++) {
		char body[200];
		snprintf(body, sizeof(body),
		         "{\"metadata\":{\"name\":\"w-%d\",\"labels\":{\"set\":\"watch\"}}}", i);
		assert_int_equal(do_simple(KUBE_CREATE, NULL, "configmaps", NULL, body, &resp), 0);
		kube_response_clear(&resp);
	}
	/* watch from the list RV: the three creations are replayed; the server ends it at 2 s */
	struct wstate w = {0};
	struct kube_request wr = {.verb = KUBE_WATCH,
	                          .version = "v1",
	                          .resource = "configmaps",
	                          .ns = ns,
	                          .label_selector = "set=watch",
	                          .resource_version = lm.resource_version,
	                          .allow_watch_bookmarks = true,
	                          .timeout_seconds = 2};
	assert_int_equal(kube_client_request(cl, &wr, on_watch, &w, &resp), 0);
	kube_response_clear(&resp);
	assert_int_equal(w.added, 3);
	/* resume from the last RV seen: nothing new is replayed */
	char rv[64];
	snprintf(rv, sizeof(rv), "%s", w.last_rv);
	struct wstate w2 = {0};
	wr.resource_version = rv;
	wr.timeout_seconds = 1;
	assert_int_equal(kube_client_request(cl, &wr, on_watch, &w2, &resp), 0);
	kube_response_clear(&resp);
	assert_int_equal(w2.added, 0);
	/* WatchList: initial events then the initial-events-end bookmark */
	struct wstate w3 = {0};
	struct kube_request wl = {.verb = KUBE_WATCH,
	                          .version = "v1",
	                          .resource = "configmaps",
	                          .ns = ns,
	                          .label_selector = "set=watch",
	                          .resource_version_match = "NotOlderThan",
	                          .resource_version = "",
	                          .send_initial_events = true,
	                          .allow_watch_bookmarks = true,
	                          .timeout_seconds = 2};
	assert_int_equal(kube_client_request(cl, &wl, on_watch, &w3, &resp), 0);
	kube_response_clear(&resp);
	assert_int_equal(w3.added, 3);
	assert_true(w3.bookmarks >= 1);
}

struct expired {
	int errors, code;
	char reason[32];
};

static int on_expired(const char *json, size_t len, void *ud)
{
	struct expired *x = ud;
	enum kube_watch_type t;
	void *o;
	int r = kube_decode_watch_event(KUBE_KIND_PARTIAL, json, len, 0, &t, &o);
	if (r < 0)
		return r;
	if (t == KUBE_WATCH_ERROR) {
		struct kube_status *st = o;
		x->errors++;
		x->code = st->code;
		snprintf(x->reason, sizeof(x->reason), "%s", st->reason ? st->reason : "");
		capture("watch-error-expired.json", json, len);
	}
	kube_object_free(o);
	return 0;
}

static void test_watch_too_old(void **state)
{
	(void)state;
	/* resourceVersion 1 is long out of the watch cache's window: 410 Expired, either as the
	 * HTTP status or (the usual case) as an ERROR event on a 200 stream */
	struct kube_response resp;
	struct expired x = {0};
	struct kube_request wr = {.verb = KUBE_WATCH,
	                          .version = "v1",
	                          .resource = "configmaps",
	                          .ns = ns,
	                          .resource_version = "1",
	                          .allow_watch_bookmarks = true,
	                          .timeout_seconds = 3};
	int e = kube_client_request(cl, &wr, on_expired, &x, &resp);
	if (e == 0) {
		assert_int_equal(x.errors, 1);
		assert_int_equal(x.code, 410);
		assert_string_equal(x.reason, "Expired");
		assert_int_equal(kube_errno_for(x.reason, x.code, false), -EKEYEXPIRED);
	} else {
		assert_int_equal(e, -EKEYEXPIRED);
	}
	kube_response_clear(&resp);
}

/* ---- the non-blocking interface, many watches multiplexed on one HTTP/2 connection ---------- */
#define NW 20
struct mux {
	struct pollfd fds[64];
	int nfds;
	long timer_ms;
	struct timespec armed;
	int done, failed, conns, h2;
	int added[NW];
};

static void mux_sock(int fd, unsigned ev, void *ud)
{
	struct mux *m = ud;
	int i;
	for (i = 0; i < m->nfds && m->fds[i].fd != fd; i++)
		;
	if (ev & KUBE_POLL_REMOVE) {
		if (i < m->nfds)
			m->fds[i] = m->fds[--m->nfds];
		return;
	}
	if (i == m->nfds)
		m->nfds++;
	m->fds[i].fd = fd;
	m->fds[i].events =
	        (short)(((ev & KUBE_POLL_IN) ? POLLIN : 0) | ((ev & KUBE_POLL_OUT) ? POLLOUT : 0));
}

static void mux_timer(long ms, void *ud)
{
	struct mux *m = ud;
	m->timer_ms = ms;
	clock_gettime(CLOCK_MONOTONIC, &m->armed);
}

static void mux_done(struct kube_call *call, const struct kube_result *r, void *ud)
{
	(void)call;
	struct mux *m = ud;
	m->done++;
	m->failed += r->err != 0;
	m->conns += r->new_connections;
	m->h2 += r->http_version == 2;
}

struct mux_watch {
	struct mux *m;
	int i;
};

static int mux_event(const char *json, size_t len, void *ud)
{
	struct mux_watch *w = ud;
	enum kube_watch_type t;
	void *o;
	if (kube_decode_watch_event(KUBE_KIND_PARTIAL, json, len, 0, &t, &o) < 0)
		return -EBADMSG;
	if (t == KUBE_WATCH_ADDED)
		w->m->added[w->i]++;
	kube_object_free(o);
	return 0;
}

static void mux_done_w(struct kube_call *call, const struct kube_result *r, void *ud)
{
	mux_done(call, r, ((struct mux_watch *)ud)->m);
}

static void test_nonblocking_multiplex(void **state)
{
	(void)state;
	struct kube_response resp;
	struct kube_list_meta lm;
	struct count c = {0};
	struct kube_request l = {.verb = KUBE_LIST,
	                         .version = "v1",
	                         .resource = "configmaps",
	                         .ns = ns,
	                         .label_selector = "mux",
	                         .limit = 1};
	assert_int_equal(req(&l, &resp), 0);
	assert_true(kube_decode_list(KUBE_KIND_PARTIAL, resp.body, resp.body_len, 0, count_item, &c,
	                             &lm) >= 0);
	kube_response_clear(&resp);

	struct kube_client_opts co = {
	        .config = cfg, .process = "e2e", .controller = "mux", .qps = 200, .burst = 50};
	struct kube_client *k;
	assert_int_equal(kube_client_new(&co, &k), 0);
	static struct mux m;
	memset(&m, 0, sizeof(m));
	m.timer_ms = -1;
	kube_client_set_loop(k, mux_sock, mux_timer, &m);
	static struct mux_watch mw[NW];
	static char sels[NW][16], bodies[NW][160];
	for (int i = 0; i < NW; i++) {
		mw[i] = (struct mux_watch){.m = &m, .i = i};
		snprintf(sels[i], sizeof(sels[i]), "mux=%d", i);
		struct kube_request w = {.verb = KUBE_WATCH,
		                         .version = "v1",
		                         .resource = "configmaps",
		                         .ns = ns,
		                         .label_selector = sels[i],
		                         .resource_version = lm.resource_version,
		                         .timeout_seconds = 3};
		assert_int_equal(kube_call_start(k, &w, mux_done_w, mux_event, &mw[i], NULL), 0);
	}
	for (int i = 0; i < NW; i++) {
		snprintf(bodies[i], sizeof(bodies[i]),
		         "{\"metadata\":{\"name\":\"mux-%d\",\"labels\":{\"mux\":\"%d\"}}}", i, i);
		struct kube_request cr = {.verb = KUBE_CREATE,
		                          .version = "v1",
		                          .resource = "configmaps",
		                          .ns = ns,
		                          .body = bodies[i]};
		assert_int_equal(kube_call_start(k, &cr, mux_done, NULL, &m, NULL), 0);
	}
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (m.done < 2 * NW) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		assert_true(now.tv_sec - start.tv_sec < 30);
		long wait = 200;
		if (m.timer_ms >= 0) {
			long el = (now.tv_sec - m.armed.tv_sec) * 1000 +
			          (now.tv_nsec - m.armed.tv_nsec) / 1000000;
			wait = m.timer_ms - el < 0 ? 0 : m.timer_ms - el;
		}
		struct pollfd fds[64];
		int n = m.nfds;
		memcpy(fds, m.fds, sizeof(fds));
		if (poll(fds, (nfds_t)n, (int)wait) == 0) {
			m.timer_ms = -1;
			kube_client_timeout(k);
			continue;
		}
		for (int i = 0; i < n; i++)
			if (fds[i].revents)
				kube_client_socket_action(
				        k, fds[i].fd,
				        ((fds[i].revents & (POLLIN | POLLHUP | POLLERR))
				                 ? KUBE_POLL_IN
				                 : 0) |
				                ((fds[i].revents & POLLOUT) ? KUBE_POLL_OUT : 0));
	}
	assert_int_equal(m.failed, 0);
	for (int i = 0; i < NW; i++)
		assert_int_equal(m.added[i], 1);
	assert_int_equal(m.h2, 2 * NW);
	assert_int_equal(m.conns, 1); /* 40 requests, one TCP+TLS connection */
	kube_client_free(k);
}

static void test_conflict_patch_delete(void **state)
{
	(void)state;
	struct kube_response resp, got;
	assert_int_equal(do_simple(KUBE_CREATE, NULL, "configmaps", NULL,
	                           "{\"metadata\":{\"name\":\"cf\"},\"data\":{\"a\":\"1\"}}",
	                           &resp),
	                 0);
	struct kube_partial *p;
	assert_int_equal(kube_decode_partial(resp.body, resp.body_len, 0, &p), 0);
	char stale[512];
	snprintf(stale, sizeof(stale),
	         "{\"metadata\":{\"name\":\"cf\",\"resourceVersion\":\"%s\"},\"data\":{\"a\":\"2\"}"
	         "}",
	         p->meta.resource_version);
	char uid[64];
	snprintf(uid, sizeof(uid), "%s", p->meta.uid);
	kube_object_free(p);
	kube_response_clear(&resp);
	assert_int_equal(do_simple(KUBE_UPDATE, NULL, "configmaps", "cf", stale, &resp), 0);
	kube_response_clear(&resp);
	assert_int_equal(do_simple(KUBE_UPDATE, NULL, "configmaps", "cf", stale, &resp), -ESTALE);
	assert_string_equal(resp.error.reason, "Conflict");
	capture("status-conflict.json", resp.body, resp.body_len);
	kube_response_clear(&resp);
	/* AlreadyExists and NotFound */
	assert_int_equal(do_simple(KUBE_CREATE, NULL, "configmaps", NULL,
	                           "{\"metadata\":{\"name\":\"cf\"}}", &resp),
	                 -EEXIST);
	kube_response_clear(&resp);
	assert_int_equal(do_simple(KUBE_GET, NULL, "configmaps", "nope", NULL, &resp), -ENOENT);
	capture("status-notfound.json", resp.body, resp.body_len);
	kube_response_clear(&resp);
	/* Invalid with causes */
	assert_int_equal(
	        do_simple(KUBE_CREATE, NULL, "configmaps", NULL,
	                  "{\"metadata\":{\"name\":\"Bad_Name\",\"labels\":{\"-x\":\"y\"}}}",
	                  &resp),
	        -EINVAL);
	assert_true(resp.error.n_causes >= 1);
	capture("status-invalid.json", resp.body, resp.body_len);
	kube_response_clear(&resp);

	/* the three patch types */
	struct kube_request pr = {.verb = KUBE_PATCH,
	                          .version = "v1",
	                          .resource = "configmaps",
	                          .ns = ns,
	                          .name = "cf",
	                          .patch_type = KUBE_PATCH_MERGE,
	                          .body = "{\"metadata\":{\"labels\":{\"m\":\"1\"}}}"};
	assert_int_equal(req(&pr, &resp), 0);
	kube_response_clear(&resp);
	pr.patch_type = KUBE_PATCH_STRATEGIC;
	pr.body = "{\"metadata\":{\"labels\":{\"s\":\"1\"}}}";
	assert_int_equal(req(&pr, &resp), 0);
	kube_response_clear(&resp);
	pr.patch_type = KUBE_PATCH_JSON;
	pr.body = "[{\"op\":\"add\",\"path\":\"/metadata/labels/j\",\"value\":\"1\"}]";
	assert_int_equal(req(&pr, &resp), 0);
	assert_int_equal(kube_decode_partial(resp.body, resp.body_len, 0, &p), 0);
	assert_string_equal(kube_labels_get(p->meta.labels, p->meta.n_labels, "m"), "1");
	assert_string_equal(kube_labels_get(p->meta.labels, p->meta.n_labels, "s"), "1");
	assert_string_equal(kube_labels_get(p->meta.labels, p->meta.n_labels, "j"), "1");
	kube_object_free(p);
	kube_response_clear(&resp);
	/* a JSON patch test op that fails is a 422 */
	pr.body = "[{\"op\":\"test\",\"path\":\"/metadata/labels/j\",\"value\":\"2\"}]";
	assert_int_equal(req(&pr, &resp), -EINVAL);
	kube_response_clear(&resp);

	/* delete with a wrong uid precondition: Conflict; then the right one */
	struct kube_request dr = {.verb = KUBE_DELETE,
	                          .version = "v1",
	                          .resource = "configmaps",
	                          .ns = ns,
	                          .name = "cf",
	                          .precondition_uid = "00000000-0000-0000-0000-000000000000",
	                          .propagation_policy = "Background"};
	assert_int_equal(req(&dr, &resp), -ESTALE);
	kube_response_clear(&resp);
	dr.precondition_uid = uid;
	dr.has_grace_period = true;
	dr.grace_period_seconds = 0;
	assert_int_equal(req(&dr, &resp), 0);
	kube_response_clear(&resp);
	assert_int_equal(do_simple(KUBE_GET, NULL, "configmaps", "cf", NULL, &got), -ENOENT);
	kube_response_clear(&got);
}

static const char RS_BODY[] =
        "{\"apiVersion\":\"apps/"
        "v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"web\",\"labels\":{\"app\":\"web\"}},"
        "\"spec\":{\"replicas\":2,\"minReadySeconds\":5,\"selector\":{\"matchLabels\":{\"app\":"
        "\"web\"},"
        "\"matchExpressions\":[{\"key\":\"tier\",\"operator\":\"In\",\"values\":[\"fe\"]}]},"
        "\"template\":{\"metadata\":"
        "{\"labels\":{\"app\":\"web\",\"tier\":\"fe\"},\"annotations\":{\"a\":\"b\"}},\"spec\":{"
        "\"containers\":[{\"name\":"
        "\"c\",\"image\":\"registry.k8s.io/"
        "pause:3.10\"}],\"initContainers\":[{\"name\":\"side\",\"image\":"
        "\"registry.k8s.io/pause:3.10\",\"restartPolicy\":\"Always\"}]}}}}";

static void test_replicaset_pod_adoption(void **state)
{
	(void)state;
	struct kube_response resp;
	struct kube_replicaset *rs;
	struct kube_pod *pod;
	assert_int_equal(do_simple(KUBE_CREATE, "apps", "replicasets", NULL, RS_BODY, &resp), 0);
	capture("replicaset-created.json", resp.body, resp.body_len);
	assert_int_equal(kube_decode_replicaset(resp.body, resp.body_len, 0, &rs), 0);
	kube_response_clear(&resp);
	assert_int_equal(rs->spec_replicas, 2);
	assert_int_equal(rs->min_ready_seconds, 5);
	struct kube_selector *sel;
	assert_int_equal(kube_selector_from_label_selector(rs->selector, &sel, NULL, 0), 0);
	assert_true(kube_selector_matches(sel, rs->template_labels, rs->n_template_labels));

	/* a pod from the template, exactly as the RS controller builds it */
	struct kube_owner_ref ref = {.api_version = "apps/v1",
	                             .kind = "ReplicaSet",
	                             .name = rs->meta.name,
	                             .uid = rs->meta.uid,
	                             .controller = 1,
	                             .block_owner_deletion = 1};
	char *body;
	assert_int_equal(kube_encode_pod_from_template(rs->template_json, rs->template_json_len,
	                                               rs->meta.name, &ref, &body),
	                 0);
	assert_int_equal(do_simple(KUBE_CREATE, NULL, "pods", NULL, body, &resp), 0);
	free(body);
	capture("pod-created-from-template.json", resp.body, resp.body_len);
	assert_int_equal(kube_decode_pod(resp.body, resp.body_len, 0, &pod), 0);
	kube_response_clear(&resp);
	assert_true(!strncmp(pod->meta.name, "web-", 4) && strlen(pod->meta.name) == 9);
	assert_string_equal(kube_controller_of(&pod->meta)->uid, rs->meta.uid);
	assert_int_equal(pod->phase, KUBE_POD_PENDING);
	assert_true(kube_selector_matches(sel, pod->meta.labels, pod->meta.n_labels));
	char pod_name[64], pod_uid[64];
	snprintf(pod_name, sizeof(pod_name), "%s", pod->meta.name);
	snprintf(pod_uid, sizeof(pod_uid), "%s", pod->meta.uid);
	kube_object_free(pod);

	/* release: upstream's SMP body removes the controller ref */
	const char *owners[] = {rs->meta.uid};
	assert_int_equal(kube_encode_release_patch(pod_uid, owners, 1, &body), 0);
	struct kube_request pr = {.verb = KUBE_PATCH,
	                          .version = "v1",
	                          .resource = "pods",
	                          .ns = ns,
	                          .name = pod_name,
	                          .patch_type = KUBE_PATCH_STRATEGIC,
	                          .body = body};
	assert_int_equal(req(&pr, &resp), 0);
	free(body);
	assert_int_equal(kube_decode_pod(resp.body, resp.body_len, 0, &pod), 0);
	assert_int_equal(pod->meta.n_owner_refs, 0);
	kube_object_free(pod);
	kube_response_clear(&resp);
	/* adoption: upstream's SMP body sets it again */
	assert_int_equal(kube_encode_adopt_patch(&ref, pod_uid, &body), 0);
	pr.body = body;
	assert_int_equal(req(&pr, &resp), 0);
	free(body);
	assert_int_equal(kube_decode_pod(resp.body, resp.body_len, 0, &pod), 0);
	assert_string_equal(kube_controller_of(&pod->meta)->uid, rs->meta.uid);
	assert_int_equal(kube_controller_of(&pod->meta)->block_owner_deletion, 1);
	kube_object_free(pod);
	kube_response_clear(&resp);
	/* the uid in the body is a precondition: a wrong one is refused */
	assert_int_equal(
	        kube_encode_adopt_patch(&ref, "00000000-0000-0000-0000-000000000000", &body), 0);
	pr.body = body;
	int e = req(&pr, &resp);
	free(body);
	assert_true(e == -EINVAL || e == -ESTALE);
	kube_response_clear(&resp);

	/* RS status through PUT /status (upstream) and merge patch (compact record) */
	struct kube_rs_status st = {
	        .replicas = 1, .fully_labeled_replicas = 1, .observed_generation = 1};
	char *stj, *put;
	assert_int_equal(do_simple(KUBE_GET, "apps", "replicasets", "web", NULL, &resp), 0);
	assert_int_equal(kube_encode_rs_status_json(&st, &stj), 0);
	assert_int_equal(kube_encode_status_put(resp.body, resp.body_len, stj, &put), 0);
	kube_response_clear(&resp);
	struct kube_request sr = {.verb = KUBE_UPDATE,
	                          .group = "apps",
	                          .version = "v1",
	                          .resource = "replicasets",
	                          .ns = ns,
	                          .name = "web",
	                          .subresource = "status",
	                          .body = put};
	assert_int_equal(req(&sr, &resp), 0);
	struct kube_replicaset *rs2;
	assert_int_equal(kube_decode_replicaset(resp.body, resp.body_len, 0, &rs2), 0);
	assert_int_equal(rs2->status.replicas, 1);
	assert_int_equal(rs2->status.observed_generation, 1);
	kube_response_clear(&resp);
	assert_int_equal(req(&sr, &resp), -ESTALE); /* same body again: stale resourceVersion */
	kube_response_clear(&resp);
	st.replicas = 2;
	char *mp;
	assert_int_equal(kube_encode_rs_status_merge_patch(rs2->meta.resource_version, &st, &mp),
	                 0);
	struct kube_request mr = {.verb = KUBE_PATCH,
	                          .group = "apps",
	                          .version = "v1",
	                          .resource = "replicasets",
	                          .ns = ns,
	                          .name = "web",
	                          .subresource = "status",
	                          .patch_type = KUBE_PATCH_MERGE,
	                          .body = mp};
	assert_int_equal(req(&mr, &resp), 0);
	kube_response_clear(&resp);
	assert_int_equal(req(&mr, &resp), -ESTALE);
	kube_response_clear(&resp);
	free(mp);
	free(stj);
	free(put);
	kube_object_free(rs2);
	/* scale subresource */
	struct kube_request sc = {.verb = KUBE_GET,
	                          .group = "apps",
	                          .version = "v1",
	                          .resource = "replicasets",
	                          .ns = ns,
	                          .name = "web",
	                          .subresource = "scale"};
	struct kube_scale *scale;
	assert_int_equal(req(&sc, &resp), 0);
	assert_int_equal(kube_decode_scale(resp.body, resp.body_len, 0, &scale), 0);
	assert_int_equal(scale->spec_replicas, 2);
	kube_object_free(scale);
	kube_response_clear(&resp);

	/* an Event about the RS */
	struct kube_event ev = {.ns = ns,
	                        .kind = "ReplicaSet",
	                        .api_version = "apps/v1",
	                        .name = "web",
	                        .uid = rs->meta.uid,
	                        .type = "Normal",
	                        .reason = "SuccessfulCreate",
	                        .message = "Created pod: x",
	                        .component = "replicaset-controller",
	                        .now = kube_time_now()};
	assert_int_equal(kube_encode_event(&ev, &body), 0);
	assert_int_equal(do_simple(KUBE_CREATE, NULL, "events", NULL, body, &resp), 0);
	free(body);
	kube_response_clear(&resp);
	kube_selector_free(sel);
	kube_object_free(rs);
}

static void test_lease(void **state)
{
	(void)state;
	struct kube_response resp;
	struct kube_lease *l;
	char *body;
	kube_time_t now = kube_time_now();
	struct kube_lease_spec sp = {.holder_identity = "e2e_1",
	                             .lease_duration_seconds = 15,
	                             .acquire_time = now,
	                             .renew_time = now,
	                             .lease_transitions = 0};
	assert_int_equal(kube_encode_lease(ns, "lock", NULL, &sp, &body), 0);
	struct kube_request r = {.verb = KUBE_CREATE,
	                         .group = "coordination.k8s.io",
	                         .version = "v1",
	                         .resource = "leases",
	                         .ns = ns,
	                         .body = body};
	assert_int_equal(req(&r, &resp), 0);
	free(body);
	capture("lease.json", resp.body, resp.body_len);
	assert_int_equal(kube_decode_lease(resp.body, resp.body_len, 0, &l), 0);
	kube_response_clear(&resp);
	assert_int_equal(l->renew_time / 1000, now / 1000); /* MicroTime round trip */
	char rv[64];
	snprintf(rv, sizeof(rv), "%s", l->meta.resource_version);
	kube_object_free(l);
	sp.renew_time = now + 2000000000LL;
	assert_int_equal(kube_encode_lease(ns, "lock", rv, &sp, &body), 0);
	struct kube_request u = {.verb = KUBE_UPDATE,
	                         .group = "coordination.k8s.io",
	                         .version = "v1",
	                         .resource = "leases",
	                         .ns = ns,
	                         .name = "lock",
	                         .body = body};
	assert_int_equal(req(&u, &resp), 0);
	kube_response_clear(&resp);
	assert_int_equal(req(&u, &resp), -ESTALE); /* another writer came first */
	kube_response_clear(&resp);
	free(body);
}

static void test_auth_variants(void **state)
{
	(void)state;
	const char *dir = getenv("KCMD_CLUSTER_DIR");
	if (!dir)
		skip();
	char path[512], err[256];
	struct kube_response resp;
	struct kube_request r = {
	        .verb = KUBE_LIST, .version = "v1", .resource = "namespaces", .limit = 1};
	/* client certificate */
	snprintf(path, sizeof(path), "%s/kubeconfig-cert", dir);
	struct kube_config_opts o = {.kubeconfig = path, .no_in_cluster = true};
	struct kube_config *c2;
	assert_int_equal(kube_config_load(&o, &c2, err, sizeof(err)), 0);
	assert_non_null(c2->client_cert_file ? (void *)c2->client_cert_file
	                                     : (void *)c2->client_cert_data);
	struct kube_client_opts co = {.config = c2};
	struct kube_client *k2;
	assert_int_equal(kube_client_new(&co, &k2), 0);
	assert_int_equal(kube_client_request(k2, &r, NULL, NULL, &resp), 0);
	kube_response_clear(&resp);
	kube_client_free(k2);
	kube_config_free(c2);
	/* an exec plugin handing out the admin token */
	char script[256], kc[256];
	snprintf(script, sizeof(script), "/tmp/kube-e2e-exec-%d.sh", (int)getpid());
	snprintf(kc, sizeof(kc), "/tmp/kube-e2e-exec-%d.yaml", (int)getpid());
	FILE *f = fopen(script, "w");
	fprintf(f,
	        "#!/bin/sh\nprintf "
	        "'{\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/v1\","
	        "\"status\":{\"token\":\"%%s\"}}' \"$TOK\"\n");
	fclose(f);
	chmod(script, 0700);
	f = fopen(kc, "w");
	fprintf(f,
	        "clusters: [{name: c, cluster: {server: \"%s\", certificate-authority: \"%s\"}}]\n"
	        "users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, "
	        "command: \"%s\", "
	        "env: [{name: TOK, value: \"%s\"}]}}}]\n"
	        "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n",
	        cfg->server, cfg->ca_file ? cfg->ca_file : "", script,
	        cfg->token ? cfg->token : "");
	fclose(f);
	o.kubeconfig = kc;
	assert_int_equal(kube_config_load(&o, &c2, err, sizeof(err)), 0);
	co.config = c2;
	assert_int_equal(kube_client_new(&co, &k2), 0);
	assert_int_equal(kube_client_request(k2, &r, NULL, NULL, &resp), 0);
	kube_response_clear(&resp);
	kube_client_free(k2);
	kube_config_free(c2);
	unlink(script);
	unlink(kc);
	/* a bad token: Unauthorized */
	struct kube_config bad = *cfg;
	bad.token = "not-a-token";
	co.config = &bad;
	assert_int_equal(kube_client_new(&co, &k2), 0);
	assert_int_equal(kube_client_request(k2, &r, NULL, NULL, &resp), -EKEYREJECTED);
	kube_response_clear(&resp);
	kube_client_free(k2);
}

/* ---- protobuf (kube/proto.h) through the client, as informerd uses it ------------------------ */

struct pb_items {
	int n;
	char names[8][32];
};

static int pb_item(void *obj, void *ud)
{
	struct pb_items *it = ud;
	const struct kube_object_meta *m = obj; /* meta is the first member of every model struct */
	if (it->n < 8)
		snprintf(it->names[it->n], sizeof(it->names[0]), "%s", m->name ? m->name : "");
	it->n++;
	kube_object_free(obj);
	return 0;
}

struct pb_watch {
	int added, bookmarks, proto_frames;
};

static int on_pb_event(const char *buf, size_t len, void *ud)
{
	struct pb_watch *w = ud;
	enum kube_watch_type t;
	void *o;
	if (len && buf[0] == 0x0a) /* a bare protobuf WatchEvent, not a '{' */
		w->proto_frames++;
	int r = kube_decode_watch_event_any(KUBE_KIND_POD, buf, len, 0, &t, &o);
	if (r < 0)
		return r;
	if (t == KUBE_WATCH_ADDED)
		w->added++;
	if (t == KUBE_WATCH_BOOKMARK)
		w->bookmarks++;
	kube_object_free(o);
	return 0;
}

/* A pod with most of what a template can hold, created once with a protobuf body
 * (kube_proto_encode_pod_json) and once as JSON: the apiserver must store the same pod. This is
 * what proves the generated field numbers (kube/proto-schema.c) beyond the captured fixtures. */
static const char RICH_POD[] =
        "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"%s\",\"labels\":{\"a\":"
        "\"b\",\"e\":\"\"},\"annotations\":{\"x/y\":\"z\\n\\u00e9\"},\"finalizers\":[\"f/x\"]},"
        "\"spec\":{\"volumes\":[{\"name\":\"ed\",\"emptyDir\":{\"medium\":\"Memory\","
        "\"sizeLimit\":\"64Mi\"}},{\"name\":\"cm\",\"configMap\":{\"name\":\"c\","
        "\"items\":[{\"key\":\"k\",\"path\":\"p\",\"mode\":256}],\"optional\":true}},"
        "{\"name\":\"pj\",\"projected\":{\"sources\":[{\"secret\":{"
        "\"name\":\"s\",\"optional\":true}},{\"downwardAPI\":{\"items\":[{\"path\":"
        "\"l\",\"fieldRef\":{\"fieldPath\":\"metadata.labels\"}}]}}]}}],"
        "\"initContainers\":[{\"name\":\"side\",\"image\":\"busybox\",\"restartPolicy\":"
        "\"Always\"}],\"containers\":[{\"name\":\"c\",\"image\":\"nginx:1\",\"command\":[\"sh\","
        "\"-c\"],\"args\":[\"sleep 1\",\"\"],\"workingDir\":\"/w\",\"ports\":[{\"name\":\"http\","
        "\"containerPort\":8080,\"protocol\":\"TCP\"}],\"env\":[{\"name\":\"A\",\"value\":\"1\"},"
        "{\"name\":\"B\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":\"metadata.name\"}}},"
        "{\"name\":\"C\",\"valueFrom\":{\"resourceFieldRef\":{\"resource\":\"limits.cpu\","
        "\"divisor\":\"1m\"}}}],\"resources\":{\"limits\":{\"cpu\":\"500m\",\"memory\":"
        "\"128Mi\"},\"requests\":{\"cpu\":\"250m\"}},\"volumeMounts\":[{\"name\":\"ed\","
        "\"mountPath\":\"/ed\",\"readOnly\":true}],\"livenessProbe\":{\"httpGet\":{\"path\":"
        "\"/h\",\"port\":\"http\",\"httpHeaders\":[{\"name\":\"X\",\"value\":\"y\"}]},"
        "\"initialDelaySeconds\":3,\"periodSeconds\":7,\"failureThreshold\":2},"
        "\"readinessProbe\":{\"tcpSocket\":{\"port\":8080},\"timeoutSeconds\":2},"
        "\"startupProbe\":{\"exec\":{\"command\":[\"true\"]}},\"lifecycle\":{\"preStop\":{"
        "\"sleep\":{\"seconds\":1}}},\"securityContext\":{\"runAsUser\":1000,\"runAsNonRoot\":"
        "true,\"allowPrivilegeEscalation\":false,\"capabilities\":{\"drop\":[\"ALL\"]}}}],"
        "\"restartPolicy\":\"Always\",\"terminationGracePeriodSeconds\":5,"
        "\"activeDeadlineSeconds\":600,\"nodeSelector\":{\"kubernetes.io/os\":\"linux\"},"
        "\"securityContext\":{\"fsGroup\":2000,\"supplementalGroups\":[1,2,3],\"sysctls\":[{"
        "\"name\":\"net.ipv4.ip_local_port_range\",\"value\":\"1024 65535\"}]},"
        "\"affinity\":{\"podAntiAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":"
        "[{\"weight\":10,\"podAffinityTerm\":{\"labelSelector\":{\"matchExpressions\":[{\"key\":"
        "\"a\",\"operator\":\"In\",\"values\":[\"b\"]}]},\"topologyKey\":\"kubernetes.io/"
        "hostname\"}}]}},\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\",\"effect\":"
        "\"NoExecute\",\"tolerationSeconds\":30}],\"hostAliases\":[{\"ip\":\"10.0.0.1\","
        "\"hostnames\":[\"h\"]}],\"dnsConfig\":{\"options\":[{\"name\":\"ndots\",\"value\":"
        "\"2\"}]},\"topologySpreadConstraints\":[{\"maxSkew\":1,\"topologyKey\":\"zone\","
        "\"whenUnsatisfiable\":\"ScheduleAnyway\",\"labelSelector\":{\"matchLabels\":{\"a\":"
        "\"b\"}}}],\"priority\":0,\"enableServiceLinks\":false},\"status\":{}}";

static cJSON *stored_pod(const char *name)
{
	struct kube_response resp;
	assert_int_equal(do_simple(KUBE_GET, NULL, "pods", name, NULL, &resp), 0);
	cJSON *o = cJSON_ParseWithLength(resp.body, resp.body_len);
	kube_response_clear(&resp);
	assert_non_null(o);
	/* what differs between any two pods: identity, times, managedFields */
	cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "metadata");
	static const char *const drop[] = {"name", "uid", "resourceVersion", "creationTimestamp",
	                                   "managedFields"};
	for (size_t i = 0; i < sizeof(drop) / sizeof(drop[0]); i++)
		cJSON_DeleteItemFromObjectCaseSensitive(m, drop[i]);
	return o;
}

static void test_protobuf_create_body(void **state)
{
	(void)state;
	struct kube_client *pc;
	struct kube_client_opts co = {.config = cfg,
	                              .process = "e2e",
	                              .controller = "proto",
	                              .content_type = KUBE_CONTENT_PROTOBUF};
	assert_int_equal(kube_client_new(&co, &pc), 0);
	assert_true(kube_client_protobuf(pc));
	char json[8192];
	snprintf(json, sizeof(json), RICH_POD, "rich-json");
	struct kube_response resp;
	if (do_simple(KUBE_CREATE, NULL, "pods", NULL, json, &resp) != 0)
		fail_msg("the JSON pod was refused: %s", resp.error.message);
	kube_response_clear(&resp);
	snprintf(json, sizeof(json), RICH_POD, "rich-pb");
	void *pb;
	size_t pb_len;
	assert_int_equal(kube_proto_encode_pod_json(json, strlen(json), &pb, &pb_len), 0);
	struct kube_request r = {.verb = KUBE_CREATE,
	                         .version = "v1",
	                         .resource = "pods",
	                         .ns = ns,
	                         .body = pb,
	                         .body_len = pb_len,
	                         .body_protobuf = true};
	assert_int_equal(kube_client_request(pc, &r, NULL, NULL, &resp), 0);
	free(pb);
	/* the answer came back as protobuf */
	assert_true(kube_proto_is(resp.body, resp.body_len));
	struct kube_pod *p;
	assert_int_equal(kube_decode_any(KUBE_KIND_POD, resp.body, resp.body_len, 0, (void **)&p),
	                 0);
	assert_string_equal(p->meta.name, "rich-pb");
	kube_object_free(p);
	kube_response_clear(&resp);
	cJSON *a = stored_pod("rich-json"), *b = stored_pod("rich-pb");
	if (!cJSON_Compare(a, b, true)) {
		char *sa = cJSON_Print(a), *sb = cJSON_Print(b);
		fprintf(stderr, "JSON-created:\n%s\nprotobuf-created:\n%s\n", sa, sb);
		free(sa);
		free(sb);
		fail_msg("the protobuf body stored another pod than the JSON body");
	}
	cJSON_Delete(a);
	cJSON_Delete(b);
	/* a protobuf create refused by validation: the Status comes back decoded */
	snprintf(json, sizeof(json), RICH_POD, "Bad_Name");
	assert_int_equal(kube_proto_encode_pod_json(json, strlen(json), &pb, &pb_len), 0);
	r.body = pb;
	r.body_len = pb_len;
	assert_int_equal(kube_client_request(pc, &r, NULL, NULL, &resp), -EINVAL);
	assert_string_equal(resp.error.reason, "Invalid");
	free(pb);
	kube_response_clear(&resp);
	kube_client_free(pc);
}

/* ---- protobuf bodies of the other kinds kcmd writes (body_kind) ----------------------------
 * Each object is created (and then updated) twice: once as JSON on a JSON client, once through
 * a protobuf client with body_kind, which transcodes the same JSON and sends it as
 * application/vnd.kubernetes.protobuf. The apiserver must store the same object both times
 * (read back as JSON; what differs between two objects of one kind — name, uid, times,
 * resourceVersion, managedFields, status written by a controller — is taken out). The bodies
 * reach the apiserver as protobuf: the client counts them, and the apiserver accepted bytes that
 * start with "k8s\0", which no JSON decoder does. "{N}" is the object's name, "{NS}" the test's
 * namespace. */
static const struct {
	const char *group, *resource, *kind, *tmpl, *update_from, *update_to;
	/* the kinds added with the controllers' other writes: version NULL is "v1"; cluster
	 * for cluster-scoped kinds; status, when set, is PUT to .../status after the update
	 * (the object as read with this status: what a controller's UpdateStatus sends) and then
	 * compared too, status_mark showing that it landed */
	const char *version;
	bool cluster;
	const char *status, *status_mark;
} PB_KINDS[] = {
        {"coordination.k8s.io", "leases", "Lease",
         "{\"kind\":\"Lease\",\"apiVersion\":\"coordination.k8s.io/v1\",\"metadata\":{\"name\":"
         "\"{N}\"},\"spec\":{\"holderIdentity\":\"kcm-1_5f2c\",\"leaseDurationSeconds\":15,"
         "\"acquireTime\":\"2026-12-03T08:00:00.123456Z\",\"renewTime\":"
         "\"2026-12-03T08:00:10.654321Z\",\"leaseTransitions\":3}}",
         "\"leaseTransitions\":3", "\"leaseTransitions\":4", NULL, false, NULL, NULL},
        {"", "events", "Event",
         "{\"kind\":\"Event\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"{N}\",\"namespace\":"
         "\"{NS}\"},\"involvedObject\":{\"kind\":\"ReplicaSet\",\"namespace\":\"{NS}\",\"name\":"
         "\"web\",\"uid\":\"0b6d3c1e-8f4a-4f7e-9a51-2c8d7e6f5a43\",\"apiVersion\":\"apps/v1\"},"
         "\"reason\":\"SuccessfulCreate\",\"message\":\"Created pod: web-x \\\"q\\\" \\u00e9\","
         "\"source\":{\"component\":\"replicaset-controller\"},\"firstTimestamp\":"
         "\"2026-12-03T07:59:50Z\",\"lastTimestamp\":\"2026-12-03T08:00:00Z\",\"count\":1,"
         "\"type\":\"Normal\",\"eventTime\":null,\"reportingComponent\":"
         "\"replicaset-controller\",\"reportingInstance\":\"\"}",
         "\"count\":1", "\"count\":2", NULL, false, NULL, NULL},
        {"", "endpoints", "Endpoints",
         "{\"kind\":\"Endpoints\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"{N}\",\"labels\":"
         "{\"app\":\"web\"}},\"subsets\":[{\"addresses\":[{\"ip\":\"10.244.1.5\",\"hostname\":"
         "\"web-0\",\"nodeName\":\"node-a\",\"targetRef\":{\"kind\":\"Pod\",\"namespace\":"
         "\"{NS}\",\"name\":\"web-0\",\"uid\":\"11111111-0000-4000-8000-000000000003\"}}],"
         "\"notReadyAddresses\":[{\"ip\":\"10.244.2.7\"}],\"ports\":[{\"name\":\"http\",\"port\":"
         "8080,\"protocol\":\"TCP\",\"appProtocol\":\"http\"}]}]}",
         "\"port\":8080", "\"port\":8081", NULL, false, NULL, NULL},
        {"discovery.k8s.io", "endpointslices", "EndpointSlice",
         "{\"kind\":\"EndpointSlice\",\"apiVersion\":\"discovery.k8s.io/v1\",\"metadata\":{"
         "\"name\":\"{N}\",\"labels\":{\"endpointslice.kubernetes.io/managed-by\":\"e2e\","
         "\"kubernetes.io/service-name\":\"web\"}},\"addressType\":\"IPv4\",\"endpoints\":[{"
         "\"addresses\":[\"10.244.1.5\"],\"conditions\":{\"ready\":true,\"serving\":true,"
         "\"terminating\":false},\"hostname\":\"web-0\",\"targetRef\":{\"kind\":\"Pod\","
         "\"namespace\":\"{NS}\",\"name\":\"web-0\"},\"nodeName\":\"node-a\",\"zone\":\"zone-1\","
         "\"hints\":{\"forZones\":[{\"name\":\"zone-1\"}]}},{\"addresses\":[\"10.244.2.7\"],"
         "\"conditions\":{\"ready\":false}}],\"ports\":[{\"name\":\"http\",\"protocol\":\"TCP\","
         "\"port\":8080,\"appProtocol\":\"http\"},{\"name\":\"\",\"protocol\":\"UDP\",\"port\":"
         "53}]}",
         "\"port\":53", "\"port\":54", NULL, false, NULL, NULL},
        {"apps", "replicasets", "ReplicaSet",
         "{\"kind\":\"ReplicaSet\",\"apiVersion\":\"apps/v1\",\"metadata\":{\"name\":\"{N}\","
         "\"labels\":{\"app\":\"pbk\"},\"annotations\":{\"deployment.kubernetes.io/revision\":"
         "\"2\"}},\"spec\":{\"replicas\":0,\"minReadySeconds\":5,\"selector\":{\"matchLabels\":{"
         "\"app\":\"pbk\"},\"matchExpressions\":[{\"key\":\"tier\",\"operator\":\"NotIn\","
         "\"values\":[\"db\"]}]},\"template\":{\"metadata\":{\"labels\":{\"app\":\"pbk\"}},"
         "\"spec\":{\"containers\":[{\"name\":\"web\",\"image\":\"nginx:1.27\",\"ports\":[{"
         "\"containerPort\":80}],\"resources\":{\"limits\":{\"cpu\":\"500m\",\"memory\":"
         "\"128Mi\"}},\"readinessProbe\":{\"httpGet\":{\"path\":\"/\",\"port\":80},"
         "\"periodSeconds\":10}}],\"terminationGracePeriodSeconds\":30}}}}",
         "\"minReadySeconds\":5", "\"minReadySeconds\":6", NULL, false, NULL, NULL},
        {"batch", "jobs", "Job",
         "{\"kind\":\"Job\",\"apiVersion\":\"batch/v1\",\"metadata\":{\"name\":\"{N}\","
         "\"labels\":{\"app\":\"pbk\"},\"annotations\":{"
         "\"batch.kubernetes.io/cronjob-scheduled-timestamp\":\"2026-12-03T08:00:00Z\"}},"
         "\"spec\":{\"suspend\":true,\"parallelism\":2,\"completions\":4,"
         "\"activeDeadlineSeconds\":3600,\"backoffLimit\":6,\"completionMode\":\"Indexed\","
         "\"ttlSecondsAfterFinished\":100,\"podFailurePolicy\":{\"rules\":[{\"action\":"
         "\"FailJob\",\"onExitCodes\":{\"containerName\":\"main\",\"operator\":\"In\","
         "\"values\":[42]}}]},\"template\":{\"spec\":{\"containers\":[{\"name\":\"main\","
         "\"image\":\"busybox\",\"command\":[\"sh\",\"-c\",\"exit 0\"]}],\"restartPolicy\":"
         "\"Never\"}}}}",
         "\"backoffLimit\":6", "\"backoffLimit\":5", NULL, false, NULL, NULL},
        {"apps", "deployments", "Deployment",
         "{\"metadata\":{\"name\":\"{N}\",\"labels\":{\"app\":\"pbk\"}},\"spec\":{\"replicas\""
         ":0,\"selector\":{\"matchLabels\":{\"app\":\"pbk\"}},\"template\":{\"metadata\":{\"la"
         "bels\":{\"app\":\"pbk\"}},\"spec\":{\"containers\":[{\"name\":\"web\",\"image\":\"ng"
         "inx:1.27\",\"resources\":{\"limits\":{\"cpu\":\"500m\"}}}]}},\"strategy\":{\"type\":"
         "\"RollingUpdate\",\"rollingUpdate\":{\"maxUnavailable\":\"25%\",\"maxSurge\":1}},\"m"
         "inReadySeconds\":5}}",
         "\"minReadySeconds\":5", "\"minReadySeconds\":6", NULL, false,
         "{\"observedGeneration\":2,\"replicas\":0,\"conditions\":[{\"type\":\"Available\",\"s"
         "tatus\":\"True\",\"lastUpdateTime\":\"2026-12-03T08:00:01Z\",\"lastTransitionTime\":"
         "\"2026-12-03T08:00:01Z\",\"reason\":\"MinimumReplicasAvailable\",\"message\":\"ok\"}"
         "],\"collisionCount\":1}",
         "\"collisionCount\":1"},
        {"apps", "statefulsets", "StatefulSet",
         "{\"metadata\":{\"name\":\"{N}\"},\"spec\":{\"replicas\":0,\"serviceName\":\"web\",\""
         "selector\":{\"matchLabels\":{\"app\":\"pbk\"}},\"template\":{\"metadata\":{\"labels\""
         ":{\"app\":\"pbk\"}},\"spec\":{\"containers\":[{\"name\":\"web\",\"image\":\"nginx:1."
         "27\",\"resources\":{\"limits\":{\"cpu\":\"500m\"}}}]}},\"volumeClaimTemplates\":[{\""
         "metadata\":{\"name\":\"data\"},\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],\"resou"
         "rces\":{\"requests\":{\"storage\":\"1Gi\"}}}}],\"podManagementPolicy\":\"Parallel\","
         "\"minReadySeconds\":3,\"persistentVolumeClaimRetentionPolicy\":{\"whenDeleted\":\"De"
         "lete\",\"whenScaled\":\"Retain\"}}}",
         "\"minReadySeconds\":3", "\"minReadySeconds\":4", NULL, false,
         "{\"observedGeneration\":2,\"replicas\":0,\"currentRevision\":\"web-7c9d\",\"updateRe"
         "vision\":\"web-7c9d\",\"collisionCount\":2}",
         "\"collisionCount\":2"},
        {"apps", "daemonsets", "DaemonSet",
         "{\"metadata\":{\"name\":\"{N}\"},\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\""
         "pbk\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"pbk\"}},\"spec\":{\"contai"
         "ners\":[{\"name\":\"web\",\"image\":\"nginx:1.27\",\"resources\":{\"limits\":{\"cpu\""
         ":\"500m\"}}}]}},\"updateStrategy\":{\"type\":\"RollingUpdate\",\"rollingUpdate\":{\""
         "maxUnavailable\":1}},\"revisionHistoryLimit\":10}}",
         "\"revisionHistoryLimit\":10", "\"revisionHistoryLimit\":9", NULL, false,
         "{\"currentNumberScheduled\":0,\"numberMisscheduled\":0,\"desiredNumberScheduled\":0,"
         "\"numberReady\":0,\"observedGeneration\":2,\"collisionCount\":3}",
         "\"collisionCount\":3"},
        {"apps", "controllerrevisions", "ControllerRevision",
         "{\"metadata\":{\"name\":\"{N}\",\"labels\":{\"tier\":\"a\"}},\"data\":{\"spec\":{\"t"
         "emplate\":{\"$patch\":\"replace\",\"spec\":{\"containers\":[{\"name\":\"c\",\"image\""
         ":\"i\"}]}}}},\"revision\":4}",
         "\"revision\":4", "\"revision\":5", NULL, false, NULL, NULL},
        {"batch", "cronjobs", "CronJob",
         "{\"metadata\":{\"name\":\"{N}\"},\"spec\":{\"schedule\":\"*/5 * * * *\",\"suspend\":"
         "true,\"startingDeadlineSeconds\":200,\"concurrencyPolicy\":\"Forbid\",\"jobTemplate\""
         ":{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"busy"
         "box\"}],\"restartPolicy\":\"OnFailure\"}}}}}}",
         "\"startingDeadlineSeconds\":200", "\"startingDeadlineSeconds\":201", NULL, false,
         "{\"lastScheduleTime\":\"2026-12-03T08:00:00Z\",\"lastSuccessfulTime\":\"2026-12-03T0"
         "7:59:07Z\"}",
         "\"lastSuccessfulTime\""},
        {"", "configmaps", "ConfigMap",
         "{\"metadata\":{\"name\":\"{N}\"},\"data\":{\"ca.crt\":\"-----BEGIN CERTIFICATE-----\\n"
         "MIIB\\n-----END CERTIFICATE-----\\n\",\"e\":\"1\"},\"binaryData\":{\"b\":\"AAEC/w==\""
         "}}",
         "\"e\":\"1\"", "\"e\":\"2\"", NULL, false, NULL, NULL},
        {"", "secrets", "Secret",
         "{\"metadata\":{\"name\":\"{N}\"},\"type\":\"Opaque\",\"data\":{\"token\":\"ZXlKaGJHY"
         "2lPaUpTVXpJMU5pSjku\",\"ns\":\"bnM=\",\"empty\":\"\"}}",
         /* "bnN=" would be the same bytes: base64's unused low bits */
         "\"bnM=\"", "\"bnQ=\"", NULL, false, NULL, NULL},
        {"", "serviceaccounts", "ServiceAccount",
         "{\"metadata\":{\"name\":\"{N}\"},\"secrets\":[{\"name\":\"a\"}],\"automountServiceAc"
         "countToken\":false}",
         "\"automountServiceAccountToken\":false", "\"automountServiceAccountToken\":true", NULL,
         false, NULL, NULL},
        {"", "persistentvolumeclaims", "PersistentVolumeClaim",
         "{\"metadata\":{\"name\":\"{N}\",\"labels\":{\"tier\":\"a\"}},\"spec\":{\"accessModes"
         "\":[\"ReadWriteOnce\"],\"resources\":{\"requests\":{\"storage\":\"1Gi\"}},\"storageC"
         "lassName\":\"manual\",\"volumeMode\":\"Filesystem\"}}",
         "\"tier\":\"a\"", "\"tier\":\"b\"", NULL, false,
         "{\"phase\":\"Bound\",\"accessModes\":[\"ReadWriteOnce\"],\"capacity\":{\"storage\":\""
         "1Gi\"}}",
         "\"phase\":\"Bound\""},
        {"", "resourcequotas", "ResourceQuota",
         "{\"metadata\":{\"name\":\"{N}\"},\"spec\":{\"hard\":{\"pods\":\"10\",\"requests.cpu\""
         ":\"2\"}}}",
         "\"pods\":\"10\"", "\"pods\":\"11\"", NULL, false,
         "{\"hard\":{\"pods\":\"11\",\"requests.cpu\":\"2\"},\"used\":{\"pods\":\"0\",\"reques"
         "ts.cpu\":\"1500m\"}}",
         "\"1500m\""},
        {"", "replicationcontrollers", "ReplicationController",
         "{\"metadata\":{\"name\":\"{N}\"},\"spec\":{\"replicas\":0,\"minReadySeconds\":1,\"se"
         "lector\":{\"app\":\"pbk-rc\"},\"template\":{\"metadata\":{\"labels\":{\"app\":\"pbk-"
         "rc\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}}}",
         "\"minReadySeconds\":1", "\"minReadySeconds\":2", NULL, false,
         "{\"replicas\":0,\"observedGeneration\":2,\"conditions\":[{\"type\":\"ReplicaFailure\""
         ",\"status\":\"True\",\"lastTransitionTime\":\"2026-12-03T08:00:00Z\",\"reason\":\"Fa"
         "iledCreate\",\"message\":\"m\"}]}",
         "\"FailedCreate\""},
        {"policy", "poddisruptionbudgets", "PodDisruptionBudget",
         "{\"metadata\":{\"name\":\"{N}\"},\"spec\":{\"minAvailable\":\"50%\",\"selector\":{\""
         "matchLabels\":{\"app\":\"pbk\"}},\"unhealthyPodEvictionPolicy\":\"AlwaysAllow\"}}",
         "\"50%\"", "\"60%\"", NULL, false,
         "{\"observedGeneration\":2,\"disruptedPods\":{\"web-1\":\"2026-12-03T08:00:00Z\"},\"d"
         "isruptionsAllowed\":1,\"currentHealthy\":2,\"desiredHealthy\":1,\"expectedPods\":2,\""
         "conditions\":[{\"type\":\"DisruptionAllowed\",\"status\":\"True\",\"lastTransitionTi"
         "me\":\"2026-12-03T08:00:00Z\",\"reason\":\"SufficientPods\",\"message\":\"m\"}]}",
         "\"SufficientPods\""},
        {"autoscaling", "horizontalpodautoscalers", "HorizontalPodAutoscaler",
         "{\"metadata\":{\"name\":\"{N}\"},\"spec\":{\"scaleTargetRef\":{\"kind\":\"Deployment"
         "\",\"name\":\"web\",\"apiVersion\":\"apps/v1\"},\"minReplicas\":1,\"maxReplicas\":10"
         ",\"metrics\":[{\"type\":\"Resource\",\"resource\":{\"name\":\"cpu\",\"target\":{\"ty"
         "pe\":\"Utilization\",\"averageUtilization\":50}}}],\"behavior\":{\"scaleDown\":{\"st"
         "abilizationWindowSeconds\":300,\"selectPolicy\":\"Max\",\"policies\":[{\"type\":\"Pe"
         "rcent\",\"value\":100,\"periodSeconds\":15}]}}}}",
         "\"maxReplicas\":10", "\"maxReplicas\":11", "v2", false,
         "{\"currentReplicas\":2,\"desiredReplicas\":3,\"lastScaleTime\":\"2026-12-03T08:00:00"
         "Z\",\"currentMetrics\":[{\"type\":\"Resource\",\"resource\":{\"name\":\"cpu\",\"curr"
         "ent\":{\"averageValue\":\"250m\",\"averageUtilization\":75}}}],\"conditions\":[{\"ty"
         "pe\":\"AbleToScale\",\"status\":\"True\",\"lastTransitionTime\":\"2026-12-03T08:00:0"
         "0Z\",\"reason\":\"SucceededRescale\",\"message\":\"m\"}]}",
         "\"SucceededRescale\""},
        {"", "nodes", "Node",
         "{\"metadata\":{\"name\":\"{N}\",\"labels\":{\"tier\":\"a\"}},\"spec\":{\"podCIDR\":\""
         "10.244.9.0/24\",\"podCIDRs\":[\"10.244.9.0/24\"],\"taints\":[{\"key\":\"example.com/"
         "t\",\"effect\":\"NoSchedule\"}]}}",
         "\"tier\":\"a\"", "\"tier\":\"b\"", NULL, true,
         "{\"capacity\":{\"cpu\":\"4\",\"pods\":\"110\"},\"allocatable\":{\"cpu\":\"3800m\",\""
         "pods\":\"110\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"Unknown\",\"lastHea"
         "rtbeatTime\":\"2026-12-03T08:00:00Z\",\"lastTransitionTime\":\"2026-12-03T08:00:40Z\""
         ",\"reason\":\"NodeStatusUnknown\",\"message\":\"Kubelet stopped posting node status."
         "\"}],\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"10.0.0.5\"}],\"daemonEndp"
         "oints\":{\"kubeletEndpoint\":{\"Port\":10250}}}",
         "\"NodeStatusUnknown\""},
        {"", "namespaces", "Namespace",
         "{\"metadata\":{\"name\":\"{N}\",\"labels\":{\"tier\":\"a\"}}}", "\"tier\":\"a\"",
         "\"tier\":\"b\"", NULL, true,
         "{\"phase\":\"Active\",\"conditions\":[{\"type\":\"NamespaceDeletionDiscoveryFailure\""
         ",\"status\":\"True\",\"lastTransitionTime\":\"2026-12-03T08:00:00Z\",\"reason\":\"Re"
         "sourcesDiscovered\",\"message\":\"m\"}]}",
         "\"ResourcesDiscovered\""},
        {"", "persistentvolumes", "PersistentVolume",
         "{\"metadata\":{\"name\":\"{N}\",\"labels\":{\"tier\":\"a\"}},\"spec\":{\"capacity\":"
         "{\"storage\":\"10Gi\"},\"csi\":{\"driver\":\"hostpath.csi.k8s.io\",\"volumeHandle\":"
         "\"vol-1\",\"volumeAttributes\":{\"a\":\"b\"}},\"accessModes\":[\"ReadWriteOnce\"],\""
         "persistentVolumeReclaimPolicy\":\"Retain\",\"storageClassName\":\"manual\",\"nodeAff"
         "inity\":{\"required\":{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"zone"
         "\",\"operator\":\"In\",\"values\":[\"z1\"]}]}]}}}}",
         "\"tier\":\"a\"", "\"tier\":\"b\"", NULL, true, NULL, NULL},
        {"storage.k8s.io", "volumeattachments", "VolumeAttachment",
         "{\"metadata\":{\"name\":\"{N}\",\"labels\":{\"tier\":\"a\"}},\"spec\":{\"attacher\":"
         "\"hostpath.csi.k8s.io\",\"source\":{\"persistentVolumeName\":\"pv-1\"},\"nodeName\":"
         "\"node-a\"}}",
         "\"tier\":\"a\"", "\"tier\":\"b\"", NULL, true,
         "{\"attached\":true,\"attachmentMetadata\":{\"devicePath\":\"/dev/sdb\"},\"detachErro"
         "r\":{\"time\":\"2026-12-03T08:00:00Z\",\"message\":\"m\"}}",
         "\"/dev/sdb\""},
        {"storage.k8s.io", "volumeattributesclasses", "VolumeAttributesClass",
         "{\"metadata\":{\"name\":\"{N}\",\"labels\":{\"tier\":\"a\"}},\"driverName\":\"hostpa"
         "th.csi.k8s.io\",\"parameters\":{\"iops\":\"1000\"}}",
         "\"tier\":\"a\"", "\"tier\":\"b\"", NULL, true, NULL, NULL},
};

#define PB_VERSION(k) (PB_KINDS[k].version ? PB_KINDS[k].version : "v1")
#define PB_NS(k)      (PB_KINDS[k].cluster ? NULL : ns)

/* s with every "{N}" / "{NS}" replaced (malloc'd) */
static char *pb_fill(const char *s, const char *name)
{
	size_t cap = strlen(s) * 2 + 256, n = 0;
	char *out = malloc(cap);
	assert_non_null(out);
	while (*s) {
		const char *with = NULL;
		size_t skip = 0;
		if (!strncmp(s, "{NS}", 4)) {
			with = ns;
			skip = 4;
		} else if (!strncmp(s, "{N}", 3)) {
			with = name;
			skip = 3;
		}
		if (with) {
			size_t k = strlen(with);
			assert_true(n + k < cap);
			memcpy(out + n, with, k);
			n += k;
			s += skip;
		} else {
			assert_true(n + 1 < cap);
			out[n++] = *s++;
		}
	}
	out[n] = 0;
	return out;
}

/* text with every occurrence of from replaced by to (malloc'd) */
static char *pb_replace(const char *text, const char *from, const char *to)
{
	size_t nf = strlen(from), nt = strlen(to), cap = strlen(text) * 2 + 64, n = 0;
	char *out = malloc(cap);
	assert_non_null(out);
	for (const char *p = text; *p;) {
		if (nf && !strncmp(p, from, nf)) {
			assert_true(n + nt < cap);
			memcpy(out + n, to, nt);
			n += nt;
			p += nf;
		} else {
			assert_true(n + 1 < cap);
			out[n++] = *p++;
		}
	}
	out[n] = 0;
	return out;
}

/* the stored object as JSON, its identity taken out */
static cJSON *pb_stored(int k, const char *name)
{
	struct kube_response resp;
	struct kube_request r = {.verb = KUBE_GET,
	                         .group = PB_KINDS[k].group,
	                         .version = PB_VERSION(k),
	                         .resource = PB_KINDS[k].resource,
	                         .ns = PB_NS(k),
	                         .name = name};
	if (req(&r, &resp) != 0)
		fail_msg("GET %s %s: %s", PB_KINDS[k].resource, name, resp.error.message);
	char *text = strndup(resp.body, resp.body_len);
	kube_response_clear(&resp);
	cJSON *o = cJSON_Parse(text);
	assert_non_null(o);
	cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "metadata");
	const cJSON *uid = cJSON_GetObjectItemCaseSensitive(m, "uid");
	assert_true(cJSON_IsString(uid));
	/* the uid and the name also appear in labels and selectors the apiserver adds (Job) */
	char *a = pb_replace(text, uid->valuestring, "<uid>");
	char *b = pb_replace(a, name, "<name>");
	free(text);
	free(a);
	cJSON_Delete(o);
	o = cJSON_Parse(b);
	free(b);
	assert_non_null(o);
	m = cJSON_GetObjectItemCaseSensitive(o, "metadata");
	static const char *const drop[] = {"resourceVersion", "creationTimestamp", "managedFields"};
	for (size_t i = 0; i < sizeof(drop) / sizeof(drop[0]); i++)
		cJSON_DeleteItemFromObjectCaseSensitive(m, drop[i]);
	if (!PB_KINDS[k].status) /* a controller's, if one ran; no controller writes the others' */
		cJSON_DeleteItemFromObjectCaseSensitive(o, "status");
	return o;
}

static void pb_compare(int k, const char *nj, const char *np, const char *when)
{
	cJSON *a = pb_stored(k, nj), *b = pb_stored(k, np);
	if (!cJSON_Compare(a, b, true)) {
		char *sa = cJSON_Print(a), *sb = cJSON_Print(b);
		fprintf(stderr, "JSON body:\n%s\nprotobuf body:\n%s\n", sa, sb);
		free(sa);
		free(sb);
		fail_msg("%s %s: the protobuf body stored another object than the JSON body",
		         PB_KINDS[k].kind, when);
	}
	cJSON_Delete(a);
	cJSON_Delete(b);
}

/* the stored object's JSON with resourceVersion, for a PUT, with from replaced by to */
static char *pb_for_update(int k, const char *name)
{
	struct kube_response resp;
	struct kube_request r = {.verb = KUBE_GET,
	                         .group = PB_KINDS[k].group,
	                         .version = PB_VERSION(k),
	                         .resource = PB_KINDS[k].resource,
	                         .ns = PB_NS(k),
	                         .name = name};
	assert_int_equal(req(&r, &resp), 0);
	char *text = strndup(resp.body, resp.body_len);
	kube_response_clear(&resp);
	assert_non_null(strstr(text, PB_KINDS[k].update_from));
	char *out = pb_replace(text, PB_KINDS[k].update_from, PB_KINDS[k].update_to);
	free(text);
	return out;
}

/* the stored object's JSON with its status replaced by PB_KINDS[k].status (malloc'd) */
static char *pb_for_status(int k, const char *name)
{
	struct kube_response resp;
	struct kube_request r = {.verb = KUBE_GET,
	                         .group = PB_KINDS[k].group,
	                         .version = PB_VERSION(k),
	                         .resource = PB_KINDS[k].resource,
	                         .ns = PB_NS(k),
	                         .name = name};
	assert_int_equal(req(&r, &resp), 0);
	cJSON *o = cJSON_ParseWithLength(resp.body, resp.body_len);
	kube_response_clear(&resp);
	cJSON *st = cJSON_Parse(PB_KINDS[k].status);
	assert_non_null(o);
	assert_non_null(st);
	cJSON_DeleteItemFromObjectCaseSensitive(o, "status");
	cJSON_AddItemToObject(o, "status", st);
	char *out = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	assert_non_null(out);
	return out;
}

/* PUTs the object named nj through the JSON client and np through pc with body_kind: an
 * update (sub NULL: the object as read with update_from replaced) or a status update (sub
 * "status": the object as read with PB_KINDS[k].status); then both are compared, and the
 * change must have landed. sent: protobuf bodies pc must have sent by then. */
static void pb_put_both(int k, const char *nj, const char *np, const char *sub,
                        struct kube_client *pc, uint64_t sent)
{
	const char *what = sub ? "status update" : "update";
	struct kube_response resp;
	for (int pb = 0; pb < 2; pb++) {
		char *body = sub ? pb_for_status(k, pb ? np : nj) : pb_for_update(k, pb ? np : nj);
		struct kube_request r = {.verb = KUBE_UPDATE,
		                         .group = PB_KINDS[k].group,
		                         .version = PB_VERSION(k),
		                         .resource = PB_KINDS[k].resource,
		                         .ns = PB_NS(k),
		                         .name = pb ? np : nj,
		                         .subresource = sub,
		                         .body = body,
		                         .body_kind = pb ? PB_KINDS[k].kind : NULL};
		int e = kube_client_request(pb ? pc : cl, &r, NULL, NULL, &resp);
		if (e != 0)
			fail_msg("%s %s (%s): %s", what, PB_KINDS[k].kind, pb ? "protobuf" : "JSON",
			         resp.error.message);
		kube_response_clear(&resp);
		free(body);
	}
	uint64_t npb, njs;
	kube_client_body_counts(pc, &npb, &njs);
	if (npb != sent || njs != 0)
		fail_msg("%s %s: %llu bodies sent as protobuf, %llu as JSON", PB_KINDS[k].kind,
		         what, (unsigned long long)npb, (unsigned long long)njs);
	pb_compare(k, nj, np, what);
	cJSON *o = pb_stored(k, np);
	char *s = cJSON_PrintUnformatted(o);
	const char *mark = sub ? PB_KINDS[k].status_mark : PB_KINDS[k].update_to;
	if (!strstr(s, mark))
		fail_msg("%s: the %s did not land: %s", PB_KINDS[k].kind, what, s);
	free(s);
	cJSON_Delete(o);
}

static void test_protobuf_bodies(void **state)
{
	(void)state;
	struct kube_client *pc;
	struct kube_client_opts co = {.config = cfg,
	                              .process = "e2e",
	                              .controller = "proto-bodies",
	                              .content_type = KUBE_CONTENT_PROTOBUF};
	assert_int_equal(kube_client_new(&co, &pc), 0);
	uint64_t sent = 0;
	for (int k = 0; k < (int)(sizeof(PB_KINDS) / sizeof(PB_KINDS[0])); k++) {
		char nj[64], np[64];
		snprintf(nj, sizeof(nj), "pbk-json-%s", PB_KINDS[k].resource);
		snprintf(np, sizeof(np), "pbk-pb-%s", PB_KINDS[k].resource);
		struct kube_response resp;
		for (int pb = 0; pb < 2; pb++) {
			char *body = pb_fill(PB_KINDS[k].tmpl, pb ? np : nj);
			struct kube_request r = {.verb = KUBE_CREATE,
			                         .group = PB_KINDS[k].group,
			                         .version = PB_VERSION(k),
			                         .resource = PB_KINDS[k].resource,
			                         .ns = PB_NS(k),
			                         .body = body,
			                         .body_kind = pb ? PB_KINDS[k].kind : NULL};
			int e = kube_client_request(pb ? pc : cl, &r, NULL, NULL, &resp);
			if (e != 0)
				fail_msg("create %s (%s): %s", PB_KINDS[k].kind,
				         pb ? "protobuf" : "JSON", resp.error.message);
			kube_response_clear(&resp);
			free(body);
		}
		sent++;
		uint64_t npb, njs;
		kube_client_body_counts(pc, &npb, &njs);
		if (npb != sent || njs != 0)
			fail_msg("%s: %llu bodies sent as protobuf, %llu as JSON", PB_KINDS[k].kind,
			         (unsigned long long)npb, (unsigned long long)njs);
		pb_compare(k, nj, np, "create");
		/* an update of the object as read (metadata with uid, resourceVersion,
		 * managedFields) */
		pb_put_both(k, nj, np, NULL, pc, ++sent);
		if (PB_KINDS[k].status) /* PUT .../status: the whole object, as UpdateStatus */
			pb_put_both(k, nj, np, "status", pc, ++sent);
	}
	kube_client_free(pc);
}

static void test_protobuf(void **state)
{
	(void)state;
	struct kube_client *pc;
	struct kube_client_opts co = {.config = cfg,
	                              .process = "e2e",
	                              .controller = "proto",
	                              .content_type = KUBE_CONTENT_PROTOBUF};
	assert_int_equal(kube_client_new(&co, &pc), 0);
	struct kube_response resp;
	for (int i = 0; i < 3; i++) {
		char body[256];
		snprintf(body, sizeof(body),
		         "{\"metadata\":{\"name\":\"pb-%d\",\"labels\":{\"set\":\"pb\"}},"
		         "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}",
		         i);
		assert_int_equal(do_simple(KUBE_CREATE, NULL, "pods", NULL, body, &resp), 0);
		kube_response_clear(&resp);
	}
	/* LIST: a protobuf body (the magic), decoded like the JSON one */
	struct kube_request l = {.verb = KUBE_LIST,
	                         .version = "v1",
	                         .resource = "pods",
	                         .ns = ns,
	                         .label_selector = "set=pb",
	                         .protobuf_ok = true};
	struct pb_items a = {0}, b = {0};
	struct kube_list_meta lm;
	assert_int_equal(kube_client_request(pc, &l, NULL, NULL, &resp), 0);
	assert_true(kube_proto_is(resp.body, resp.body_len));
	assert_int_equal(
	        kube_decode_list_any(KUBE_KIND_POD, resp.body, resp.body_len, 0, pb_item, &a, &lm),
	        3);
	kube_response_clear(&resp);
	l.protobuf_ok = false;
	assert_int_equal(kube_client_request(pc, &l, NULL, NULL, &resp), 0);
	assert_false(kube_proto_is(resp.body, resp.body_len));
	assert_int_equal(
	        kube_decode_list_any(KUBE_KIND_POD, resp.body, resp.body_len, 0, pb_item, &b, NULL),
	        3);
	kube_response_clear(&resp);
	for (int i = 0; i < 3; i++)
		assert_string_equal(a.names[i], b.names[i]);
	/* metadata-only LIST: PartialObjectMetadataList as protobuf */
	struct kube_request m = {.verb = KUBE_LIST,
	                         .version = "v1",
	                         .resource = "pods",
	                         .ns = ns,
	                         .label_selector = "set=pb",
	                         .metadata_only = true,
	                         .protobuf_ok = true};
	struct pb_items c = {0};
	assert_int_equal(kube_client_request(pc, &m, NULL, NULL, &resp), 0);
	assert_true(kube_proto_is(resp.body, resp.body_len));
	assert_int_equal(kube_decode_list_any(KUBE_KIND_PARTIAL, resp.body, resp.body_len, 0,
	                                      pb_item, &c, NULL),
	                 3);
	kube_response_clear(&resp);
	/* WATCH from the list RV with initial events: length-framed protobuf events */
	struct pb_watch w = {0};
	struct kube_request wr = {.verb = KUBE_WATCH,
	                          .version = "v1",
	                          .resource = "pods",
	                          .ns = ns,
	                          .label_selector = "set=pb",
	                          .resource_version_match = "NotOlderThan",
	                          .resource_version = "",
	                          .send_initial_events = true,
	                          .allow_watch_bookmarks = true,
	                          .timeout_seconds = 2,
	                          .protobuf_ok = true};
	assert_int_equal(kube_client_request(pc, &wr, on_pb_event, &w, &resp), 0);
	kube_response_clear(&resp);
	assert_int_equal(w.added, 3);
	assert_true(w.bookmarks >= 1);
	assert_int_equal(w.proto_frames, w.added + w.bookmarks);
	/* an error comes back as a protobuf Status and maps as the JSON one does */
	struct kube_request g = {.verb = KUBE_GET,
	                         .version = "v1",
	                         .resource = "pods",
	                         .ns = ns,
	                         .name = "pb-missing",
	                         .protobuf_ok = true};
	assert_int_equal(kube_client_request(pc, &g, NULL, NULL, &resp), -ENOENT);
	assert_true(kube_proto_is(resp.body, resp.body_len));
	assert_string_equal(resp.error.reason, "NotFound");
	kube_response_clear(&resp);
	kube_client_free(pc);
}

int main(void)
{
	if (!getenv("KCMD_TEST_SERVER")) {
		printf("KCMD_TEST_SERVER not set: run with the test cluster's env "
		       "(tests/cluster/cluster env)\n");
		return 77;
	}
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_discovery_http2),
	        cmocka_unit_test(test_pagination_metadata),
	        cmocka_unit_test(test_watch_resume),
	        cmocka_unit_test(test_watch_too_old),
	        cmocka_unit_test(test_nonblocking_multiplex),
	        cmocka_unit_test(test_conflict_patch_delete),
	        cmocka_unit_test(test_replicaset_pod_adoption),
	        cmocka_unit_test(test_lease),
	        cmocka_unit_test(test_auth_variants),
	        cmocka_unit_test(test_protobuf),
	        cmocka_unit_test(test_protobuf_create_body),
	        cmocka_unit_test(test_protobuf_bodies),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
