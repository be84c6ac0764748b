/* SPDX-License-Identifier: Apache-2.0 */
/* kube/client.c - libcurl multi transport (design note in kube/client.h).
 *
 * A call goes through: build (URL, headers, body) -> wait queue (limiter / retry not-before) ->
 * curl multi -> done (or back to the wait queue for a retry). The wait queue is a plain list
 * scanned on every pump: it holds at most the calls the limiter is holding back, and a scan is
 * cheaper than a heap at those sizes.
 *
 * One timer is exposed to the caller's loop: the earlier of curl's own timeout and the next time
 * a held call may start. tls-server-name is implemented with CURLOPT_CONNECT_TO: the URL carries
 * the TLS name (so SNI and verification use it) and the connection goes to the real host.
 */
#include "kube/client.h"
#include "kube/fence.h"
#include "kube/shard.h"
#include "kube/limiter.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include "kube/auth.h"
#include "kube/model.h"
#include "kube/proto.h"
#include "kube/restmetrics.h"
#include "kube/watch.h"

#define DEFAULT_TIMEOUT_MS    60000L
#define DEFAULT_RETRIES       5
#define DEFAULT_RETRY_BASE_MS 200L
#define MAX_BODY              KUBE_DECODE_MAX_BYTES

static const char ACCEPT_META_ONE[] =
        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";
static const char ACCEPT_META_LIST[] =
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";

/* protobuf (kube/proto.h): asked only for requests marked protobuf_ok on a client whose
 * content_type is protobuf; JSON stays acceptable, as client-go's lists: the apiserver answers
 * JSON for what it cannot encode as protobuf (custom resources). */
static const char ACCEPT_PB[] = KUBE_CONTENT_PROTOBUF ",application/json";
static const char ACCEPT_PB_META_ONE[] = KUBE_CONTENT_PROTOBUF
        ";as=PartialObjectMetadata;g=meta.k8s.io;v=v1,"
        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";
static const char ACCEPT_PB_META_LIST[] = KUBE_CONTENT_PROTOBUF
        ";as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";

struct kube_call {
	struct kube_client *c;
	CURL *easy;
	struct curl_slist *headers;
	char *url;
	char *connect_to_entry;
	struct curl_slist *connect_to;
	char *body;
	size_t body_len;
	size_t body_sent;   /* bytes of body handed to libcurl in this attempt (body_read) */
	const char *method; /* custom request verb */
	enum kube_verb verb;
	long timeout_ms;
	int attempt;
	bool auth_retried;
	bool in_multi;
	bool in_done;   /* the done callback is running: cancel is a no-op */
	bool cancelled; /* cancelled while libcurl was running: freed once it returns */
	int64_t not_before_ms;
	bool slot_reserved; /* holds a slot of the shared limiter (reset for each retry) */
	/* response */
	char *resp;
	size_t resp_len, resp_cap;
	int32_t retry_after;
	bool resp_too_big;
	int stream_err;
	struct kube_watch_splitter split;
	kube_watch_event_fn on_event;
	kube_done_fn done;
	void *ud;
	struct kube_call *next;                /* wait queue link */
	struct kube_call *all_next, *all_prev; /* every live call */
};

/* easy handles and response buffers kept for reuse: as many as requests usually in flight */
#define KUBE_EASY_POOL 32
/* response buffers larger than this are freed rather than kept (a LIST page) */
#define KUBE_BUF_KEEP_MAX (256u * 1024u)

struct kube_client {
	CURLM *multi;
	CURLSH *share;
	const struct kube_config *cfg;
	struct kube_auth *auth;
	char *user_agent;
	char *proxy; /* proxy-url in libcurl's terms, or NULL */
	/* Without proxy-url: the environment's proxy for the server's scheme and NO_PROXY, read
	 * once when the client is made (Go's ProxyFromEnvironment reads them once per process too),
	 * handed to every request, so libcurl does not getenv() five names per transfer. */
	char *env_proxy, *env_noproxy;
	double qps, burst, tokens;
	int64_t refill_ms;
	struct kube_limiter *limiter;   /* shared bucket; when set, qps is 0 */
	const struct kube_fence *fence; /* leadership fence for writes (fence.h), or NULL */
	uint64_t fenced;                /* writes refused by it */
	uint64_t pb_bodies;             /* body_kind bodies sent as protobuf / as JSON */
	uint64_t json_bodies;
	int max_retries;
	long timeout_ms, retry_base_ms;
	struct kube_call *wait_head;
	struct kube_call *all;
	kube_socket_fn sock_cb;
	kube_timer_fn timer_cb;
	void *loop_ud;
	long curl_timeout_ms; /* -1: none */
	int64_t curl_timeout_set_ms;
	bool http2;
	bool protobuf; /* opts.content_type is protobuf */
	bool in_pump;
	int in_curl;         /* inside curl_multi_*(): handles must not be removed now */
	int pending_cancels; /* calls cancelled meanwhile, freed by sweep() */
	int exec_fd;         /* the exec plugin's stdout while the loop watches it, or -1 */
	/* Reuse across calls (issue 20: no allocation storm per request): easy handles of
	 * finished calls (curl_easy_reset() before the next use keeps libcurl's own buffers) and
	 * their response buffers. When a pool is full the extra one is freed. */
	CURL *easy_pool[KUBE_EASY_POOL];
	int n_easy_pool;
	struct {
		char *p;
		size_t cap;
	} buf_pool[KUBE_EASY_POOL];
	int n_buf_pool;
	struct kube_mux *mux; /* kube_client_share_threads(), or NULL */
};

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- request building ----------------------------------------------------------------------- */

struct sbuf {
	char *p;
	size_t n, cap;
	bool oom;
};

static void sb_put(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t nc = b->cap ? b->cap * 2 : 256;
		while (nc < b->n + n + 1)
			nc *= 2;
		char *np = realloc(b->p, nc);
		if (!np) {
			b->oom = true;
			return;
		}
		b->p = np;
		b->cap = nc;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = 0;
}

static void sb_str(struct sbuf *b, const char *s)
{
	sb_put(b, s, strlen(s));
}

/* percent-encodes everything but RFC 3986 unreserved characters */
static void sb_esc(struct sbuf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' || ch == '_' || ch == '~') {
			sb_put(b, (const char *)&ch, 1);
		} else {
			char e[3] = {'%', hex[ch >> 4], hex[ch & 15]};
			sb_put(b, e, 3);
		}
	}
}

/* A name, namespace, resource or subresource must be one path segment: client-go's
 * IsValidPathSegmentName refuses ".", ".." and anything containing '/' or '%'. */
static bool seg_ok(const char *s)
{
	return s && *s && strcmp(s, ".") && strcmp(s, "..") && !strchr(s, '/') && !strchr(s, '%');
}

/* One path segment, escaped as Go's url.URL escapes a path (what client-go sends): unreserved
 * characters and "$&+,:;=@" stay, everything else ('?', '#', ' ', non-ASCII ...) becomes %XX. */
static void sb_seg(struct sbuf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || strchr("-._~$&+,:;=@", ch)) {
			sb_put(b, (const char *)&ch, 1);
		} else {
			char e[3] = {'%', hex[ch >> 4], hex[ch & 15]};
			sb_put(b, e, 3);
		}
	}
}

static void q_add(struct sbuf *b, bool *first, const char *k, const char *v)
{
	sb_str(b, *first ? "?" : "&");
	*first = false;
	sb_str(b, k);
	sb_str(b, "=");
	sb_esc(b, v);
}

int kube_build_url(const char *server, const struct kube_request *r, char **ret)
{
	struct sbuf b = {0};
	bool first = true;
	char num[32];
	if (!server || !r || !ret)
		return -EINVAL;
	sb_str(&b, server);
	if (r->path) {
		if (r->path[0] != '/')
			return free(b.p), -EINVAL;
		sb_str(&b, r->path);
	} else {
		if (!seg_ok(r->version) || !seg_ok(r->resource) || (r->ns && !seg_ok(r->ns)) ||
		    (r->name && !seg_ok(r->name)) || (r->subresource && !seg_ok(r->subresource)) ||
		    (r->group && *r->group && !seg_ok(r->group)))
			return free(b.p), -EINVAL;
		bool needs_name = r->verb == KUBE_GET || r->verb == KUBE_UPDATE ||
		                  r->verb == KUBE_PATCH || r->verb == KUBE_DELETE;
		if (needs_name != (r->name != NULL) || (r->subresource && !r->name))
			return free(b.p), -EINVAL;
		if (r->group && *r->group) {
			sb_str(&b, "/apis/");
			sb_seg(&b, r->group);
			sb_str(&b, "/");
		} else
			sb_str(&b, "/api/");
		sb_seg(&b, r->version);
		if (r->ns) {
			sb_str(&b, "/namespaces/");
			sb_seg(&b, r->ns);
		}
		sb_str(&b, "/");
		sb_seg(&b, r->resource);
		if (r->name) {
			sb_str(&b, "/");
			sb_seg(&b, r->name);
		}
		if (r->subresource) {
			sb_str(&b, "/");
			sb_seg(&b, r->subresource);
		}
	}
	if (r->verb == KUBE_LIST || r->verb == KUBE_WATCH) {
		if (r->verb == KUBE_WATCH)
			q_add(&b, &first, "watch", "true");
		if (r->label_selector && *r->label_selector)
			q_add(&b, &first, "labelSelector", r->label_selector);
		if (r->field_selector && *r->field_selector)
			q_add(&b, &first, "fieldSelector", r->field_selector);
		if (r->resource_version)
			q_add(&b, &first, "resourceVersion", r->resource_version);
		if (r->resource_version_match && *r->resource_version_match)
			q_add(&b, &first, "resourceVersionMatch", r->resource_version_match);
		if (r->verb == KUBE_LIST && r->limit > 0) {
			snprintf(num, sizeof(num), "%lld", (long long)r->limit);
			q_add(&b, &first, "limit", num);
		}
		if (r->verb == KUBE_LIST && r->cont && *r->cont)
			q_add(&b, &first, "continue", r->cont);
		if (r->timeout_seconds > 0) {
			snprintf(num, sizeof(num), "%d", (int)r->timeout_seconds);
			q_add(&b, &first, "timeoutSeconds", num);
		}
		if (r->verb == KUBE_WATCH && r->allow_watch_bookmarks)
			q_add(&b, &first, "allowWatchBookmarks", "true");
		if (r->verb == KUBE_WATCH && r->send_initial_events)
			q_add(&b, &first, "sendInitialEvents", "true");
	} else if (r->verb == KUBE_GET && r->resource_version) {
		q_add(&b, &first, "resourceVersion", r->resource_version);
	}
	if ((r->verb == KUBE_CREATE || r->verb == KUBE_UPDATE || r->verb == KUBE_PATCH) &&
	    r->field_manager)
		q_add(&b, &first, "fieldManager", r->field_manager);
	if (r->verb == KUBE_PATCH && r->patch_type == KUBE_PATCH_APPLY)
		q_add(&b, &first, "force", "true");
	if (b.oom) {
		free(b.p);
		return -ENOMEM;
	}
	*ret = b.p;
	return 0;
}

/* a JSON string (quoted, escaped as encoding/json does for control characters, '"', '\\') */
static void sb_json_str(struct sbuf *b, const char *s)
{
	sb_put(b, "\"", 1);
	for (const char *p = s; *p; p++) {
		unsigned char ch = (unsigned char)*p;
		if (ch == '"' || ch == '\\') {
			char e[2] = {'\\', (char)ch};
			sb_put(b, e, 2);
		} else if (ch < 0x20) {
			char e[8];
			snprintf(e, sizeof(e), "\\u%04x", ch);
			sb_put(b, e, 6);
		} else {
			sb_put(b, p, 1);
		}
	}
	sb_put(b, "\"", 1);
}

/* Built by hand, not with cJSON: a delete is the GC's hot request (issue 20), and a DOM made a
 * dozen allocations for a body of one line. Same bytes as before: the key order is kept. */
int kube_delete_options_body(const struct kube_request *r, char **ret)
{
	if (!r || !ret)
		return -EINVAL;
	if (!r->precondition_uid && !r->precondition_rv && !r->propagation_policy &&
	    !r->has_grace_period) {
		*ret = NULL;
		return 0;
	}
	struct sbuf b = {0};
	char num[32];
	sb_str(&b, "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\"");
	if (r->has_grace_period) {
		snprintf(num, sizeof(num), "%lld", (long long)r->grace_period_seconds);
		sb_str(&b, ",\"gracePeriodSeconds\":");
		sb_str(&b, num);
	}
	if (r->precondition_uid || r->precondition_rv) {
		sb_str(&b, ",\"preconditions\":{");
		if (r->precondition_uid) {
			sb_str(&b, "\"uid\":");
			sb_json_str(&b, r->precondition_uid);
		}
		if (r->precondition_rv) {
			sb_str(&b, r->precondition_uid ? ",\"resourceVersion\":"
			                               : "\"resourceVersion\":");
			sb_json_str(&b, r->precondition_rv);
		}
		sb_put(&b, "}", 1);
	}
	if (r->propagation_policy) {
		sb_str(&b, ",\"propagationPolicy\":");
		sb_json_str(&b, r->propagation_policy);
	}
	sb_put(&b, "}", 1);
	if (b.oom) {
		free(b.p);
		return -ENOMEM;
	}
	*ret = b.p;
	return 0;
}

int kube_proxy_for_curl(const char *proxy_url, char **ret)
{
	static const struct {
		const char *go, *curl;
	} map[] = {
	        {"http://", "http://"},
	        {"https://", "https://"},
	        /* Go's SOCKS5 dialer hands host names to the proxy: libcurl's socks5h */
	        {"socks5://", "socks5h://"},
	};
	if (!proxy_url)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		size_t n = strlen(map[i].go);
		if (strncasecmp(proxy_url, map[i].go, n))
			continue;
		if (!proxy_url[n])
			return -EINVAL;
		if (ret && asprintf(ret, "%s%s", map[i].curl, proxy_url + n) < 0) {
			*ret = NULL;
			return -ENOMEM;
		}
		return 0;
	}
	return -EINVAL;
}

/* ---- retry policy --------------------------------------------------------------------------- */

long kube_retry_delay(enum kube_verb verb, int curl_code, int http_code, int32_t retry_after_s,
                      int attempt, int max_retries, long base_ms)
{
	bool safe = verb == KUBE_GET || verb == KUBE_LIST;
	long backoff;
	if (verb == KUBE_WATCH || attempt >= max_retries)
		return -1;
	if (base_ms <= 0)
		base_ms = DEFAULT_RETRY_BASE_MS;
	backoff = base_ms << (attempt < 5 ? attempt : 5);
	if (backoff > 5000)
		backoff = 5000;
	if (curl_code) {
		switch (curl_code) {
		case CURLE_COULDNT_RESOLVE_HOST:
		case CURLE_COULDNT_CONNECT:
		case CURLE_SSL_CONNECT_ERROR:
			return backoff; /* never sent: safe for every verb */
		case CURLE_SEND_ERROR:
		case CURLE_RECV_ERROR:
		case CURLE_GOT_NOTHING:
		case CURLE_PARTIAL_FILE:
		case CURLE_HTTP2:
		case CURLE_HTTP2_STREAM:
		case CURLE_OPERATION_TIMEDOUT:
		case CURLE_SEND_FAIL_REWIND:
			return safe ? backoff : -1;
		default:
			return -1;
		}
	}
	if (http_code == 429) {
		long d = retry_after_s > 0 ? (long)retry_after_s * 1000 : 1000;
		return d > 60000 ? 60000 : d;
	}
	if (safe &&
	    (http_code == 500 || http_code == 502 || http_code == 503 || http_code == 504)) {
		if (retry_after_s > 0)
			return retry_after_s > 60 ? 60000 : (long)retry_after_s * 1000;
		return backoff;
	}
	return -1;
}

static int curl_errno(CURLcode cc)
{
	switch (cc) {
	case CURLE_OK:
		return 0;
	case CURLE_COULDNT_CONNECT:
		return -ECONNREFUSED;
	case CURLE_COULDNT_RESOLVE_HOST:
		return -EHOSTUNREACH;
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
	case CURLE_SEND_FAIL_REWIND: /* the connection died after the body went out */
		return -ECONNRESET;
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CACERT_BADFILE:
		return -ECONNABORTED;
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	default:
		return -EIO;
	}
}

/* ---- curl callbacks ------------------------------------------------------------------------- */

static size_t on_header(char *buf, size_t size, size_t n, void *ud)
{
	struct kube_call *call = ud;
	if (call->cancelled)
		return 0;
	size_t len = size * n;
	if (len > 12 && !strncasecmp(buf, "Retry-After:", 12)) {
		char tmp[32];
		size_t k = len - 12 < sizeof(tmp) - 1 ? len - 12 : sizeof(tmp) - 1;
		memcpy(tmp, buf + 12, k);
		tmp[k] = 0;
		char *end;
		long v = strtol(tmp, &end, 10);
		if (end != tmp && v >= 0 && v < 86400)
			call->retry_after = (int32_t)v;
	}
	return len;
}

static bool buffer(struct kube_call *call, const char *p, size_t n)
{
	if (call->resp_len + n > MAX_BODY) {
		call->resp_too_big = true;
		return false;
	}
	if (call->resp_len + n + 1 > call->resp_cap) {
		size_t nc = call->resp_cap ? call->resp_cap : 16384;
		while (nc < call->resp_len + n + 1)
			nc *= 2;
		char *np = realloc(call->resp, nc);
		if (!np)
			return false;
		call->resp = np;
		call->resp_cap = nc;
	}
	memcpy(call->resp + call->resp_len, p, n);
	call->resp_len += n;
	call->resp[call->resp_len] = 0;
	return true;
}

static size_t on_write(char *p, size_t size, size_t n, void *ud)
{
	struct kube_call *call = ud;
	if (call->cancelled)
		return 0;
	size_t len = size * n;
	long code = 0;
	if (call->verb == KUBE_WATCH && call->on_event) {
		curl_easy_getinfo(call->easy, CURLINFO_RESPONSE_CODE, &code);
		if (code == 200) {
			if (!call->split.framing_set) {
				/* a protobuf watch is length-framed (kube/watch.h) */
				char *ct = NULL;
				curl_easy_getinfo(call->easy, CURLINFO_CONTENT_TYPE, &ct);
				kube_watch_splitter_set_framing(
				        &call->split,
				        ct && !strncasecmp(ct, KUBE_CONTENT_PROTOBUF,
				                           sizeof(KUBE_CONTENT_PROTOBUF) - 1)
				                ? KUBE_WATCH_FRAMING_LENGTH
				                : KUBE_WATCH_FRAMING_JSON);
			}
			int r = kube_watch_splitter_feed(&call->split, p, len, call->on_event,
			                                 call->ud);
			if (r < 0) {
				call->stream_err = r;
				return 0; /* aborts the transfer */
			}
			return len;
		}
	}
	return buffer(call, p, len) ? len : 0;
}

/* ---- limiter and pump ----------------------------------------------------------------------- */

static void refill(struct kube_client *c, int64_t now)
{
	if (c->qps <= 0)
		return;
	double add = (double)(now - c->refill_ms) / 1000.0 * c->qps;
	c->refill_ms = now;
	c->tokens = c->tokens + add > c->burst ? c->burst : c->tokens + add;
}

static void arm_timer(struct kube_client *c)
{
	if (!c->timer_cb)
		return;
	int64_t now = now_ms(), wake = -1;
	if (c->curl_timeout_ms >= 0)
		wake = c->curl_timeout_set_ms + c->curl_timeout_ms;
	int64_t ew = kube_auth_exec_wake_ms(c->auth);
	if (ew >= 0 && (wake < 0 || ew < wake))
		wake = ew;
	for (struct kube_call *w = c->wait_head; w; w = w->next) {
		if (kube_auth_exec_running(c->auth))
			break; /* nothing in the queue moves before the plugin ends */
		int64_t t = w->not_before_ms;
		if (c->qps > 0 && c->tokens < 1) {
			int64_t tok = now + (int64_t)((1 - c->tokens) / c->qps * 1000) + 1;
			if (tok > t)
				t = tok;
		}
		if (wake < 0 || t < wake)
			wake = t;
	}
	c->timer_cb(wake < 0 ? -1 : (wake <= now ? 0 : (long)(wake - now)), c->loop_ud);
}

static int prepare_full(struct kube_call *call);
static void call_free(struct kube_call *call);

/* The loop watches the exec plugin's stdout while it is open (kube_auth_get_nb). */
static void exec_watch(struct kube_client *c)
{
	int fd = kube_auth_exec_fd(c->auth);
	if (c->exec_fd >= 0 && c->exec_fd != fd) {
		if (c->sock_cb)
			c->sock_cb(c->exec_fd, KUBE_POLL_REMOVE, c->loop_ud);
		c->exec_fd = -1;
	}
	if (fd >= 0 && c->exec_fd < 0 && c->sock_cb) {
		c->exec_fd = fd;
		c->sock_cb(fd, KUBE_POLL_IN, c->loop_ud);
	}
}

/* Advances a running exec plugin; when it failed, every call waiting for it fails with its
 * error (as a blocking kube_auth_get failure fails the call). */
static void exec_progress(struct kube_client *c)
{
	int r = kube_auth_exec_step(c->auth);
	exec_watch(c);
	if (r == -EINPROGRESS || r >= 0 || r == -EAGAIN)
		return;
	struct kube_call **pp = &c->wait_head;
	while (*pp) {
		struct kube_call *w = *pp;
		*pp = w->next;
		w->next = NULL;
		struct kube_result res = {.err = r};
		kube_done_fn done = w->done;
		void *ud = w->ud;
		w->done = NULL;
		w->in_done = true;
		if (done)
			done(w, &res, ud);
		call_free(w);
	}
}

static bool is_write(const struct kube_call *w)
{
	if (w->method)
		return strcmp(w->method, "GET") != 0;
	return w->verb == KUBE_CREATE || w->verb == KUBE_UPDATE || w->verb == KUBE_PATCH ||
	       w->verb == KUBE_DELETE;
}

static uint64_t mono_usec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static const struct kube_fence *process_fence; /* kube_client_set_process_fence */
static bool process_unsharded;                 /* kube_client_set_process_unsharded */

void kube_client_set_process_unsharded(bool unsharded)
{
	process_unsharded = unsharded;
}

/* The fence's verdict on a write (fence.h F1, F6): the instance word, and with ranges the word
 * of the range of the namespace the request writes into (a process of an unsharded controller:
 * range 0, the range that runs it). */
static bool fence_allows_call(const struct kube_fence *f, const struct kube_call *w, uint64_t now)
{
	char ns[256];

	if (kube_fence_ranges(f) == 0 || process_unsharded)
		return kube_fence_allows_ns(f, "", now);
	if (kube_shard_ns_of_url(w->url, ns, sizeof(ns)) < 0)
		return false; /* no namespace is that long: refuse rather than guess */
	return kube_fence_allows_ns(f, ns, now);
}

void kube_client_set_process_fence(const struct kube_fence *f)
{
	process_fence = f;
}

uint64_t kube_client_fenced(const struct kube_client *c)
{
	return c ? c->fenced : 0;
}

void kube_client_body_counts(const struct kube_client *c, uint64_t *ret_pb, uint64_t *ret_json)
{
	*ret_pb = c ? __atomic_load_n(&c->pb_bodies, __ATOMIC_RELAXED) : 0;
	*ret_json = c ? __atomic_load_n(&c->json_bodies, __ATOMIC_RELAXED) : 0;
}

static void pump(struct kube_client *c)
{
	int64_t now = now_ms();
	struct kube_call **pp = &c->wait_head;
	refill(c, now);
	struct kube_call *held = NULL; /* waiting for the exec plugin */
	while (*pp) {
		struct kube_call *w = *pp;
		if (kube_auth_exec_running(c->auth)) { /* credentials are being made */
			pp = &w->next;
			continue;
		}
		if (w->not_before_ms > now || (c->qps > 0 && c->tokens < 1)) {
			pp = &w->next;
			continue;
		}
		if (c->limiter && !w->slot_reserved) {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			int64_t d = kube_limiter_reserve(
			        c->limiter, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
			w->slot_reserved = true;
			if (d > 0) {
				w->not_before_ms = now + (d + 999999) / 1000000;
				pp = &w->next;
				continue;
			}
		}
		*pp = w->next;
		w->next = NULL;
		if (c->fence && is_write(w) && !fence_allows_call(c->fence, w, mono_usec())) {
			/* past the leadership deadline: refused before any byte goes out (fence.h)
			 */
			c->fenced++;
			struct kube_result res = {.err = -ENOLCK};
			kube_done_fn done = w->done;
			void *ud = w->ud;
			w->done = NULL;
			w->in_done = true;
			done(w, &res, ud);
			call_free(w);
			continue;
		}
		if (c->qps > 0)
			c->tokens -= 1;
		int r = prepare_full(w);
		if (r == 0 && curl_multi_add_handle(c->multi, w->easy) == CURLM_OK) {
			w->in_multi = true;
			continue;
		}
		if (r == -EINPROGRESS) {
			if (c->qps > 0)
				c->tokens += 1;
			w->next = held;
			held = w;
			exec_watch(c);
			continue;
		}
		struct kube_result res = {.err = r < 0 ? r : -EIO};
		kube_done_fn done = w->done;
		void *ud = w->ud;
		w->done = NULL;
		w->in_done = true;
		done(w, &res, ud);
		call_free(w);
	}
	while (held) {
		struct kube_call *w = held;
		held = w->next;
		w->next = c->wait_head;
		c->wait_head = w;
	}
}

/* ---- call lifecycle ------------------------------------------------------------------------- */

static void call_free(struct kube_call *call)
{
	struct kube_client *c = call->c;
	if (call->in_multi)
		curl_multi_remove_handle(c->multi, call->easy);
	if (call->all_prev)
		call->all_prev->all_next = call->all_next;
	else if (c->all == call)
		c->all = call->all_next;
	if (call->all_next)
		call->all_next->all_prev = call->all_prev;
	for (struct kube_call **pp = &c->wait_head; *pp; pp = &(*pp)->next)
		if (*pp == call) {
			*pp = call->next;
			break;
		}
	if (call->easy && c->n_easy_pool < KUBE_EASY_POOL)
		c->easy_pool[c->n_easy_pool++] = call->easy; /* reset at its next use */
	else if (call->easy)
		curl_easy_cleanup(call->easy);
	if (call->resp && call->resp_cap <= KUBE_BUF_KEEP_MAX && c->n_buf_pool < KUBE_EASY_POOL) {
		c->buf_pool[c->n_buf_pool].p = call->resp;
		c->buf_pool[c->n_buf_pool++].cap = call->resp_cap;
		call->resp = NULL;
	}
	curl_slist_free_all(call->headers);
	curl_slist_free_all(call->connect_to);
	free(call->connect_to_entry);
	free(call->url);
	if (call->body)
		explicit_bzero(call->body, call->body_len);
	free(call->body);
	free(call->resp);
	kube_watch_splitter_free(&call->split);
	free(call);
}

void kube_call_cancel(struct kube_call *call)
{
	if (!call || call->in_done || call->cancelled)
		return;
	if (call->done) {
		kube_done_fn done = call->done;
		call->done = NULL;
		struct kube_result res = {.err = -ECANCELED};
		done(call, &res, call->ud);
	}
	if (call->in_multi && call->c->in_curl) {
		/* called from inside a libcurl callback (an on_event handler cancelling a watch):
		 * libcurl forbids removing a handle now; the write callback aborts the transfer and
		 * sweep() frees the call when libcurl returns */
		call->cancelled = true;
		call->c->pending_cancels++;
		return;
	}
	call_free(call);
}

static void sweep(struct kube_client *c)
{
	struct kube_call *call, *next;
	if (!c->pending_cancels)
		return;
	for (call = c->all; call; call = next) {
		next = call->all_next;
		if (call->cancelled) {
			c->pending_cancels--;
			call_free(call);
		}
	}
}

/* Every socket libcurl opens is close-on-exec: the manager forks children and exec plugins, and
 * an inherited apiserver connection would outlive us there (libcurl 7.88 opens them without
 * SOCK_CLOEXEC). */
static curl_socket_t open_socket(void *ud, curlsocktype purpose, struct curl_sockaddr *a)
{
	(void)ud;
	(void)purpose;
	return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

/* For sockets libcurl got elsewhere (accept() is not used by us, but keep the rule total). */
static int sock_opt(void *ud, curl_socket_t fd, curlsocktype purpose)
{
	(void)ud;
	(void)purpose;
	int fl = fcntl(fd, F_GETFD);
	if (fl >= 0 && !(fl & FD_CLOEXEC))
		fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
	return CURL_SOCKOPT_OK;
}

/* Sets up the easy handle for one attempt (fresh credentials, reset response state). */
static int prepare_attempt(struct kube_call *call)
{
	struct kube_client *c = call->c;
	const struct kube_config *cfg = c->cfg;
	struct kube_credentials cred = {0};
	char *hdr = NULL;
	int r;

	if (!call->easy && c->n_easy_pool > 0)
		call->easy = c->easy_pool[--c->n_easy_pool];
	if (!call->resp && c->n_buf_pool > 0) {
		call->resp = c->buf_pool[--c->n_buf_pool].p;
		call->resp_cap = c->buf_pool[c->n_buf_pool].cap;
	}
	if (call->easy)
		curl_easy_reset(call->easy);
	else if (!(call->easy = curl_easy_init()))
		return -ENOMEM;
	curl_slist_free_all(call->headers);
	call->headers = NULL;
	call->resp_len = 0;
	call->retry_after = 0;
	call->resp_too_big = false;
	call->stream_err = 0;
	kube_watch_splitter_free(&call->split);
	kube_watch_splitter_init(&call->split, 0);

	/* loop mode: an exec plugin runs beside the loop (-EINPROGRESS holds the call) */
	r = c->sock_cb ? kube_auth_get_nb(c->auth, kube_time_now(), &cred)
	               : kube_auth_get(c->auth, kube_time_now(), &cred);
	if (r < 0)
		return r;
	CURL *e = call->easy;
	curl_easy_setopt(e, CURLOPT_URL, call->url);
	curl_easy_setopt(e, CURLOPT_PRIVATE, call);
	curl_easy_setopt(e, CURLOPT_SHARE, c->share);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_USERAGENT, c->user_agent);
	/* compressed bodies for lists and gets; none for watches: events are small, must not wait
	 * in a compressor, and a gzip stream cut at the watch timeout fails to decode */
	if (call->verb != KUBE_WATCH)
		curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPIDLE, 30L);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPINTVL, 15L);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 30000L);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, call->timeout_ms);
	curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
	curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L); /* wait for a multiplexed connection */
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, call);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, call);
	curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, open_socket);
	curl_easy_setopt(e, CURLOPT_SOCKOPTFUNCTION, sock_opt);
	if (c->proxy) {
		/* proxy-url replaces the environment's proxy settings (NO_PROXY included), as
		 * client-go's http.ProxyURL does; the proxy's TLS is verified like the apiserver's
		 */
		curl_easy_setopt(e, CURLOPT_PROXY, c->proxy);
		curl_easy_setopt(e, CURLOPT_NOPROXY, "");
		if (cfg->insecure_skip_tls_verify) {
			curl_easy_setopt(e, CURLOPT_PROXY_SSL_VERIFYPEER, 0L);
			curl_easy_setopt(e, CURLOPT_PROXY_SSL_VERIFYHOST, 0L);
		} else if (cfg->ca_data) {
			struct curl_blob blob = {.data = cfg->ca_data,
			                         .len = cfg->ca_data_len,
			                         .flags = CURL_BLOB_COPY};
			curl_easy_setopt(e, CURLOPT_PROXY_CAINFO_BLOB, &blob);
		} else if (cfg->ca_file) {
			curl_easy_setopt(e, CURLOPT_PROXY_CAINFO, cfg->ca_file);
		}
	} else {
		curl_easy_setopt(e, CURLOPT_PROXY, c->env_proxy);     /* "": none */
		curl_easy_setopt(e, CURLOPT_NOPROXY, c->env_noproxy); /* "": none */
	}
	if (call->connect_to)
		curl_easy_setopt(e, CURLOPT_CONNECT_TO, call->connect_to);
	if (cfg->insecure_skip_tls_verify) {
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
	} else if (cfg->ca_data) {
		/* no copy per request: the config outlives the client (kube_client_opts) */
		struct curl_blob blob = {
		        .data = cfg->ca_data, .len = cfg->ca_data_len, .flags = CURL_BLOB_NOCOPY};
		curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &blob);
	} else if (cfg->ca_file) {
		curl_easy_setopt(e, CURLOPT_CAINFO, cfg->ca_file);
	}
	if (cred.cert_pem) {
		struct curl_blob cb = {.data = (void *)cred.cert_pem,
		                       .len = cred.cert_len,
		                       .flags = CURL_BLOB_COPY};
		struct curl_blob kb = {
		        .data = (void *)cred.key_pem, .len = cred.key_len, .flags = CURL_BLOB_COPY};
		curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &cb);
		curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &kb);
	} else if (cfg->client_cert_data) {
		struct curl_blob cb = {.data = cfg->client_cert_data,
		                       .len = cfg->client_cert_data_len,
		                       .flags = CURL_BLOB_COPY};
		struct curl_blob kb = {.data = cfg->client_key_data,
		                       .len = cfg->client_key_data_len,
		                       .flags = CURL_BLOB_COPY};
		curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &cb);
		curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &kb);
	} else if (cfg->client_cert_file) {
		curl_easy_setopt(e, CURLOPT_SSLCERT, cfg->client_cert_file);
		curl_easy_setopt(e, CURLOPT_SSLKEY, cfg->client_key_file);
	}
	if (cred.token) {
		if (asprintf(&hdr, "Authorization: Bearer %s", cred.token) < 0)
			return -ENOMEM;
		call->headers = curl_slist_append(call->headers, hdr);
		explicit_bzero(hdr, strlen(hdr));
		free(hdr);
		if (!call->headers)
			return -ENOMEM;
	} else if (cfg->username && cfg->password) {
		curl_easy_setopt(e, CURLOPT_USERNAME, cfg->username);
		curl_easy_setopt(e, CURLOPT_PASSWORD, cfg->password);
	}
	return 0;
}

static int add_header(struct kube_call *call, struct curl_slist **h, const char *s)
{
	(void)call;
	struct curl_slist *n = curl_slist_append(*h, s);
	if (!n)
		return -ENOMEM;
	*h = n;
	return 0;
}

/* libcurl's read callback for a request body: the next piece of call->body. */
static size_t body_read(char *buf, size_t size, size_t nitems, void *ud)
{
	struct kube_call *call = ud;
	size_t room = size * nitems, left = call->body_len - call->body_sent;
	size_t n = left < room ? left : room;
	memcpy(buf, call->body + call->body_sent, n);
	call->body_sent += n;
	return n;
}

/* libcurl's rewind of a request body: allowed while nothing was handed out (a new attempt of
 * kcmd's own starts at 0 too); refused after, which fails the transfer with
 * CURLE_SEND_FAIL_REWIND instead of a silent second send on a fresh connection. */
static int body_seek(void *ud, curl_off_t off, int origin)
{
	struct kube_call *call = ud;
	if (origin != SEEK_SET || off != 0 || call->body_sent)
		return CURL_SEEKFUNC_FAIL;
	return CURL_SEEKFUNC_OK;
}

/* the request-specific headers; kept separately and appended on each attempt */
struct fixed {
	char accept[200];
	const char *content_type;
};

static int finish_headers(struct kube_call *call, const struct fixed *fx)
{
	char line[256];
	int r;
	snprintf(line, sizeof(line), "Accept: %s", fx->accept);
	if ((r = add_header(call, &call->headers, line)) < 0)
		return r;
	if (fx->content_type) {
		snprintf(line, sizeof(line), "Content-Type: %s", fx->content_type);
		if ((r = add_header(call, &call->headers, line)) < 0)
			return r;
	}
	/* no "Expect: 100-continue" round trip for bodies */
	if ((r = add_header(call, &call->headers, "Expect:")) < 0)
		return r;
	curl_easy_setopt(call->easy, CURLOPT_HTTPHEADER, call->headers);
	if (call->method)
		curl_easy_setopt(call->easy, CURLOPT_CUSTOMREQUEST, call->method);
	if (call->body) {
		/* The body through a read callback, not CURLOPT_POSTFIELDS: libcurl sends a request
		 * again by itself when a reused connection dies before any answer byte, and rewinds
		 * the body to do it. body_seek refuses that rewind once body bytes went out, so
		 * such a request fails (-ECONNRESET: the apiserver may have acted on it) instead of
		 * being sent twice; client-go never resends a request it has written either. */
		call->body_sent = 0;
		curl_easy_setopt(call->easy, CURLOPT_POST, 1L);
		curl_easy_setopt(call->easy, CURLOPT_POSTFIELDSIZE_LARGE,
		                 (curl_off_t)call->body_len);
		curl_easy_setopt(call->easy, CURLOPT_READFUNCTION, body_read);
		curl_easy_setopt(call->easy, CURLOPT_READDATA, call);
		curl_easy_setopt(call->easy, CURLOPT_SEEKFUNCTION, body_seek);
		curl_easy_setopt(call->easy, CURLOPT_SEEKDATA, call);
	}
	return 0;
}

struct kube_call_ext {
	struct kube_call call;
	struct fixed fx;
};

static int prepare_full(struct kube_call *call)
{
	int r = prepare_attempt(call);
	if (r < 0)
		return r;
	return finish_headers(call, &((struct kube_call_ext *)call)->fx);
}

int kube_call_start(struct kube_client *c, const struct kube_request *req, kube_done_fn done,
                    kube_watch_event_fn on_event, void *ud, struct kube_call **ret)
{
	struct kube_call_ext *x;
	struct kube_call *call;
	void *transcoded = NULL; /* body_kind's protobuf body, until handed to the call */
	size_t transcoded_len = 0;
	int r;
	if (!c || !req || !done || (req->verb == KUBE_WATCH && !on_event))
		return -EINVAL;
	if (!(x = calloc(1, sizeof(*x))))
		return -ENOMEM;
	call = &x->call;
	call->c = c;
	call->verb = req->verb;
	call->done = done;
	call->on_event = on_event;
	call->ud = ud;
	kube_watch_splitter_init(&call->split, 0);
	call->all_next = c->all;
	if (c->all)
		c->all->all_prev = call;
	c->all = call;

	const char *base = c->cfg->server;
	char *tmp_base = NULL;
	if (c->cfg->tls_server_name && *c->cfg->tls_server_name && !strncmp(base, "https://", 8)) {
		/* URL host := tls-server-name; CONNECT_TO sends the connection to the real host */
		const char *hostport = base + 8;
		const char *colon =
		        hostport[0] == '[' ? strstr(hostport, "]:") : strrchr(hostport, ':');
		const char *port = colon ? colon + (hostport[0] == '[' ? 2 : 1) : "443";
		char *host = colon ? strndup(hostport, (size_t)(colon - hostport +
		                                                (hostport[0] == '[' ? 1 : 0)))
		                   : strdup(hostport);
		if (!host ||
		    asprintf(&tmp_base, "https://%s:%s", c->cfg->tls_server_name, port) < 0 ||
		    asprintf(&call->connect_to_entry, "%s:%s:%s:%s", c->cfg->tls_server_name, port,
		             host, port) < 0) {
			free(host);
			r = -ENOMEM;
			goto fail;
		}
		free(host);
		if (!(call->connect_to = curl_slist_append(NULL, call->connect_to_entry))) {
			r = -ENOMEM;
			goto fail;
		}
		base = tmp_base;
	}
	r = kube_build_url(base, req, &call->url);
	free(tmp_base);
	if (r < 0)
		goto fail;

	/* A WATCH streams single objects: client-go's metadata client watches with
	 * as=PartialObjectMetadata. Asked for ...List, the apiserver answers 200 and sends no
	 * event. */
	bool list_like = req->verb == KUBE_LIST;
	bool body_pb = req->body_protobuf && (req->verb == KUBE_CREATE || req->verb == KUBE_UPDATE);
	bool pb = (c->protobuf && req->protobuf_ok &&
	           (req->verb == KUBE_GET || req->verb == KUBE_LIST || req->verb == KUBE_WATCH)) ||
	          body_pb;
	if (body_pb && !req->body_len) {
		r = -EINVAL;
		goto fail;
	}
	/* a JSON body of a built-in kind on a protobuf client: transcoded here, as client-go
	 * sends it; JSON when the transcoder refuses it (a field it does not know, ...). The
	 * answer's encoding stays as protobuf_ok asks: callers decode these answers as JSON. */
	if (req->body_kind && req->body && !body_pb &&
	    (req->verb == KUBE_CREATE || req->verb == KUBE_UPDATE)) {
		char api_version[128];
		snprintf(api_version, sizeof(api_version), "%s%s%s",
		         req->group && *req->group ? req->group : "",
		         req->group && *req->group ? "/" : "", req->version ? req->version : "");
		int e = c->protobuf ? kube_proto_encode_json(api_version, req->body_kind, req->body,
		                                             req->body_len ? req->body_len
		                                                           : strlen(req->body),
		                                             &transcoded, &transcoded_len)
		                    : -EOPNOTSUPP;
		if (e == -ENOMEM) {
			r = e;
			goto fail;
		}
		if (e == 0) {
			body_pb = true;
			__atomic_add_fetch(&c->pb_bodies, 1, __ATOMIC_RELAXED);
		} else {
			transcoded = NULL;
			__atomic_add_fetch(&c->json_bodies, 1, __ATOMIC_RELAXED);
		}
	}
	snprintf(x->fx.accept, sizeof(x->fx.accept), "%s",
	         req->accept          ? req->accept
	         : req->metadata_only ? (pb ? (list_like ? ACCEPT_PB_META_LIST : ACCEPT_PB_META_ONE)
	                                    : (list_like ? ACCEPT_META_LIST : ACCEPT_META_ONE))
	         : pb                 ? ACCEPT_PB
	                              : "application/json");
	switch (req->verb) {
	case KUBE_CREATE:
		call->method = "POST";
		x->fx.content_type = body_pb ? KUBE_CONTENT_PROTOBUF : "application/json";
		break;
	case KUBE_UPDATE:
		call->method = "PUT";
		x->fx.content_type = body_pb ? KUBE_CONTENT_PROTOBUF : "application/json";
		break;
	case KUBE_PATCH:
		call->method = "PATCH";
		x->fx.content_type =
		        req->patch_type == KUBE_PATCH_MERGE  ? "application/merge-patch+json"
		        : req->patch_type == KUBE_PATCH_JSON ? "application/json-patch+json"
		        : req->patch_type == KUBE_PATCH_APPLY
		                ? "application/apply-patch+yaml"
		                : "application/strategic-merge-patch+json";
		break;
	case KUBE_DELETE:
		call->method = "DELETE";
		if ((r = kube_delete_options_body(req, &call->body)) < 0)
			goto fail;
		if (call->body) {
			call->body_len = strlen(call->body);
			x->fx.content_type = "application/json";
		}
		break;
	case KUBE_GET:
	case KUBE_LIST:
	case KUBE_WATCH:
		break;
	default:
		r = -EINVAL;
		goto fail;
	}
	if (req->verb == KUBE_CREATE || req->verb == KUBE_UPDATE || req->verb == KUBE_PATCH) {
		if (!req->body) {
			r = -EINVAL;
			goto fail;
		}
		if (transcoded) {
			call->body = transcoded; /* handed over */
			call->body_len = transcoded_len;
			transcoded = NULL;
		} else {
			size_t n = req->body_len ? req->body_len : strlen(req->body);
			if (!(call->body = malloc(n + 1))) {
				r = -ENOMEM;
				goto fail;
			}
			memcpy(call->body, req->body, n);
			call->body[n] = 0;
			call->body_len = n;
		}
	}
	call->timeout_ms = req->timeout_ms ? req->timeout_ms : c->timeout_ms;
	if (req->verb == KUBE_WATCH && !req->timeout_ms)
		call->timeout_ms =
		        req->timeout_seconds > 0 ? ((long)req->timeout_seconds + 30) * 1000 : 0;
	call->not_before_ms = 0;
	call->next = c->wait_head; /* order among ready calls does not matter */
	c->wait_head = call;
	if (ret)
		*ret = call;
	if (!c->in_pump) {
		pump(c);
		arm_timer(c);
	}
	return 0;
fail:
	free(transcoded);
	call->done = NULL;
	call_free(call);
	return r;
}

/* rest_client_requests_total / _request_duration_seconds for one attempt (kube/restmetrics.h) */
static void observe_attempt(struct kube_call *call, long code)
{
	const char *server = call->c->cfg->server, *p = strstr(server, "://");
	char host[KUBE_RM_HOST_MAX];
	curl_off_t us = -1;
	p = p ? p + 3 : server;
	snprintf(host, sizeof(host), "%.*s", (int)strcspn(p, "/"), p);
	if (call->verb != KUBE_WATCH &&
	    curl_easy_getinfo(call->easy, CURLINFO_TOTAL_TIME_T, &us) != CURLE_OK)
		us = -1;
	kube_rest_metrics_observe(call->method ? call->method : "GET", (int)code, host,
	                          (int64_t)us);
}

static void finish_call(struct kube_call *call, CURLcode cc)
{
	struct kube_client *c = call->c;
	long code = 0;
	struct kube_error err;
	struct kube_result res = {0};
	long httpv = 0;
	curl_easy_getinfo(call->easy, CURLINFO_RESPONSE_CODE, &code);
	if (!call->cancelled)
		observe_attempt(call, code);
	curl_easy_getinfo(call->easy, CURLINFO_HTTP_VERSION, &httpv);
	res.http_version = httpv == CURL_HTTP_VERSION_2_0 ? 2 : httpv ? 1 : 0;
	long nconn = 0;
	curl_easy_getinfo(call->easy, CURLINFO_NUM_CONNECTS, &nconn);
	res.new_connections = (int)nconn;
	curl_multi_remove_handle(c->multi, call->easy);
	call->in_multi = false;
	if (call->cancelled) {
		c->pending_cancels--;
		call_free(call);
		return;
	}

	if (call->stream_err) {
		res.err = call->stream_err;
	} else if (cc != CURLE_OK && !(cc == CURLE_WRITE_ERROR && call->resp_too_big)) {
		long d = kube_retry_delay(call->verb, cc, 0, 0, call->attempt, c->max_retries,
		                          c->retry_base_ms);
		if (d >= 0)
			goto retry_in;
		res.err = curl_errno(cc);
		res.http_code = (int)code;
	} else if (call->resp_too_big) {
		res.err = -E2BIG;
	} else {
		res.http_code = (int)code;
		if (code < 200 || code >= 300) {
			kube_error_from_response((int)code, call->resp, call->resp_len, NULL, &err);
			if (call->retry_after && !err.retry_after_s)
				err.retry_after_s = call->retry_after;
			if (code == 401 && !call->auth_retried &&
			    (c->cfg->exec || c->cfg->token_file)) {
				call->auth_retried = true;
				kube_auth_invalidate(c->auth);
				call->not_before_ms = 0;
				goto requeue;
			}
			long d = kube_retry_delay(call->verb, 0, (int)code, err.retry_after_s,
			                          call->attempt, c->max_retries, c->retry_base_ms);
			if (d >= 0) {
				call->not_before_ms = now_ms() + d;
				goto requeue_counted;
			}
			res.err = err.err;
			res.error = &err;
		}
		res.body = call->resp;
		res.body_len = call->resp_len;
		if (!res.err && call->verb == KUBE_WATCH) {
			res.body = NULL;
			res.body_len = 0;
		}
	}
	{
		kube_done_fn done = call->done;
		call->done = NULL;
		call->in_done = true;
		if (done)
			done(call, &res, call->ud);
		call_free(call);
		return;
	}
retry_in:
	call->not_before_ms = now_ms() + kube_retry_delay(call->verb, cc, 0, 0, call->attempt,
	                                                  c->max_retries, c->retry_base_ms);
requeue_counted:
	call->attempt++;
requeue:
	call->slot_reserved = false;
	call->next = c->wait_head;
	c->wait_head = call;
}

static void drain(struct kube_client *c)
{
	CURLMsg *m;
	int left;
	while ((m = curl_multi_info_read(c->multi, &left))) {
		if (m->msg != CURLMSG_DONE)
			continue;
		struct kube_call *call;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&call);
		finish_call(call, m->data.result);
	}
}

/* ---- loop integration ----------------------------------------------------------------------- */

static int curl_sock_cb(CURL *e, curl_socket_t fd, int what, void *cbp, void *sockp)
{
	(void)e;
	(void)sockp;
	struct kube_client *c = cbp;
	unsigned ev = what == CURL_POLL_REMOVE  ? KUBE_POLL_REMOVE
	              : what == CURL_POLL_IN    ? KUBE_POLL_IN
	              : what == CURL_POLL_OUT   ? KUBE_POLL_OUT
	              : what == CURL_POLL_INOUT ? (KUBE_POLL_IN | KUBE_POLL_OUT)
	                                        : 0;
	if (c->sock_cb && ev)
		c->sock_cb(fd, ev, c->loop_ud);
	return 0;
}

static int curl_timer_cb(CURLM *m, long timeout_ms, void *ud)
{
	(void)m;
	struct kube_client *c = ud;
	c->curl_timeout_ms = timeout_ms;
	c->curl_timeout_set_ms = now_ms();
	if (!c->in_pump)
		arm_timer(c);
	return 0;
}

void kube_client_set_loop(struct kube_client *c, kube_socket_fn sock, kube_timer_fn timer, void *ud)
{
	c->sock_cb = sock;
	c->timer_cb = timer;
	c->loop_ud = ud;
	curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, sock ? curl_sock_cb : NULL);
	curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
	curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, timer ? curl_timer_cb : NULL);
	curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
}

void kube_client_socket_action(struct kube_client *c, int fd, unsigned events)
{
	int running, mask = 0;
	if (events & KUBE_POLL_IN)
		mask |= CURL_CSELECT_IN;
	if (events & KUBE_POLL_OUT)
		mask |= CURL_CSELECT_OUT;
	c->in_pump = true;
	if (fd >= 0 && fd == c->exec_fd) {
		exec_progress(c);
	} else {
		c->in_curl++;
		curl_multi_socket_action(c->multi, fd, mask, &running);
		c->in_curl--;
	}
	sweep(c);
	drain(c);
	pump(c);
	c->in_pump = false;
	arm_timer(c);
}

void kube_client_timeout(struct kube_client *c)
{
	int running;
	c->in_pump = true;
	c->curl_timeout_ms = -1;
	if (kube_auth_exec_running(c->auth))
		exec_progress(c);
	c->in_curl++;
	curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	c->in_curl--;
	sweep(c);
	drain(c);
	pump(c);
	c->in_pump = false;
	arm_timer(c);
}

/* ---- blocking ------------------------------------------------------------------------------- */

struct kube_mux;
static bool mux_is_server(const struct kube_mux *m);
static int mux_run(struct kube_mux *m, const struct kube_request *reqs, size_t n,
                   struct kube_response *resps, size_t *order);
static void mux_stop(struct kube_client *c);

struct sync_state {
	bool done;
	struct kube_response *resp;
	int err;
	struct kube_mux *mux; /* mux_run's requests */
};

static void sync_done(struct kube_call *call, const struct kube_result *r, void *ud)
{
	(void)call;
	struct sync_state *s = ud;
	s->done = true;
	s->err = r->err;
	s->resp->http_code = r->http_code;
	s->resp->http_version = r->http_version;
	if (r->error)
		s->resp->error = *r->error;
	else
		s->resp->error.err = r->err;
	if (r->body) {
		s->resp->body = malloc(r->body_len + 1);
		if (s->resp->body) {
			memcpy(s->resp->body, r->body, r->body_len);
			s->resp->body[r->body_len] = 0;
			s->resp->body_len = r->body_len;
		} else if (!s->err)
			s->err = -ENOMEM;
	}
}

struct sync_watch {
	kube_watch_event_fn fn;
	void *ud;
	struct sync_state st;
};

static int sync_event(const char *json, size_t len, void *ud)
{
	struct sync_watch *w = ud;
	return w->fn(json, len, w->ud);
}

static void sync_done_w(struct kube_call *call, const struct kube_result *r, void *ud)
{
	sync_done(call, r, &((struct sync_watch *)ud)->st);
}

/* Sleeps until I/O or the next limiter/retry deadline (at most 1 s). */
static void blocking_wait(struct kube_client *c)
{
	long wait = 1000;
	int64_t now = now_ms();
	for (struct kube_call *q = c->wait_head; q; q = q->next) {
		int64_t t = q->not_before_ms;
		if (c->qps > 0 && c->tokens < 1)
			t = t > now + (int64_t)((1 - c->tokens) / c->qps * 1000) + 1
			            ? t
			            : now + (int64_t)((1 - c->tokens) / c->qps * 1000) + 1;
		long d = t <= now ? 0 : (long)(t - now);
		if (d < wait)
			wait = d;
	}
	curl_multi_poll(c->multi, NULL, 0, (int)wait, NULL);
}

int kube_client_request(struct kube_client *c, const struct kube_request *req,
                        kube_watch_event_fn on_event, void *ud, struct kube_response *resp)
{
	struct sync_watch w = {.fn = on_event, .ud = ud};
	int r;
	if (!resp)
		return -EINVAL;
	memset(resp, 0, sizeof(*resp));
	if (!c || !req || c->sock_cb)
		return resp->error.err = -EINVAL;
	if (c->mux && !mux_is_server(c->mux)) {
		if (on_event)
			return resp->error.err = -EINVAL;
		r = mux_run(c->mux, req, 1, resp, NULL);
		return r < 0 ? (resp->error.err = r) : resp->error.err;
	}
	w.st.resp = resp;
	c->in_pump = true;
	r = kube_call_start(c, req, sync_done_w, on_event ? sync_event : NULL, &w, NULL);
	if (r < 0) {
		c->in_pump = false;
		return resp->error.err = r;
	}
	while (!w.st.done) {
		int running;
		pump(c);
		if (w.st.done)
			break;
		c->in_curl++;
		curl_multi_perform(c->multi, &running);
		c->in_curl--;
		sweep(c);
		drain(c);
		if (w.st.done)
			break;
		blocking_wait(c);
	}
	c->in_pump = false;
	return w.st.err;
}

struct many_state {
	struct sync_state *st;
	size_t left, *order, n_done;
};

struct many_one {
	struct many_state *m;
	size_t i;
};

static void many_done(struct kube_call *call, const struct kube_result *r, void *ud)
{
	struct many_one *o = ud;
	struct many_state *m = o->m;
	sync_done(call, r, &m->st[o->i]);
	if (m->order)
		m->order[m->n_done] = o->i;
	m->n_done++;
	if (m->left)
		m->left--;
}

int kube_client_request_many(struct kube_client *c, const struct kube_request *reqs, size_t n,
                             struct kube_response *resps, size_t *order)
{
	struct sync_state *st;
	struct many_one *one;
	struct many_state m = {.order = order};
	if (!c || (n && (!reqs || !resps)) || c->sock_cb)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (reqs[i].verb == KUBE_WATCH)
			return -EINVAL;
	if (!n)
		return 0;
	if (c->mux && !mux_is_server(c->mux))
		return mux_run(c->mux, reqs, n, resps, order);
	st = calloc(n, sizeof(*st));
	one = calloc(n, sizeof(*one));
	if (!st || !one) {
		free(st);
		free(one);
		return -ENOMEM;
	}
	m.st = st;
	c->in_pump = true;
	for (size_t i = 0; i < n; i++) {
		memset(&resps[i], 0, sizeof(resps[i]));
		st[i].resp = &resps[i];
		one[i] = (struct many_one){&m, i};
		int r = kube_call_start(c, &reqs[i], many_done, NULL, &one[i], NULL);
		if (r < 0) {
			/* not started: finished at once, as a failed call */
			struct kube_result res = {.err = r};
			many_done(NULL, &res, &one[i]);
		}
	}
	m.left = n - m.n_done;
	while (m.left) {
		int running;
		pump(c);
		if (!m.left)
			break;
		c->in_curl++;
		curl_multi_perform(c->multi, &running);
		c->in_curl--;
		sweep(c);
		drain(c);
		if (!m.left)
			break;
		blocking_wait(c);
	}
	c->in_pump = false;
	for (size_t i = 0; i < n; i++)
		if (!resps[i].error.err && st[i].err)
			resps[i].error.err = st[i].err;
	free(st);
	free(one);
	return 0;
}

/* ---- one client shared by threads (kube_client_share_threads) ------------------------------
 *
 * A server thread owns the client: it alone touches the multi handle, the calls, the pools and
 * the limiter. A caller thread puts a job (its requests, on its own stack) on the submission
 * list under mu, wakes the server out of curl_multi_poll() with curl_multi_wakeup() (libcurl:
 * callable from any thread) and sleeps on the job's condition variable until the server has
 * finished every request of it. So the requests of all callers are in flight together over the
 * client's one HTTP/2 connection: one poll() wakeup, one TLS record and one read serve several
 * streams, where a connection per thread pays each of those per request (docs/benchmarks.md,
 * "The request path"). Rejected: a lock around the client (one request in flight at a time) and
 * making the callers asynchronous (the garbage collector's attemptToDelete is a sequence of
 * dependent requests, written as upstream's blocking code).
 *
 * Ownership: a job's memory belongs to its caller; the server reads it between taking it off
 * the list and the last completion, which it signals under mu as the last thing it does with
 * the job (the caller frees the job only after seeing left == 0 under mu). */

struct mux_one {
	struct mux_job *j;
	size_t i;
};

struct mux_job {
	const struct kube_request *reqs;
	struct kube_response *resps;
	size_t n, left, n_done, *order;
	struct sync_state *st;
	struct mux_one *one;
	pthread_cond_t cv;
	struct mux_job *next;
};

struct kube_mux {
	struct kube_client *c;
	pthread_t th;
	pthread_mutex_t mu;
	struct mux_job *head, *tail; /* submitted, not started yet */
	bool stop;
	bool sleeping; /* the server is in (or about to enter) its poll: a submission wakes it */
};

static bool mux_is_server(const struct kube_mux *m)
{
	return pthread_equal(pthread_self(), m->th);
}

/* Server thread: one request of a job ended. */
static void mux_done(struct kube_call *call, const struct kube_result *r, void *ud)
{
	struct mux_one *o = ud;
	struct mux_job *j = o->j;
	struct kube_mux *m = j->st[o->i].mux;
	sync_done(call, r, &j->st[o->i]);
	pthread_mutex_lock(&m->mu);
	if (j->order)
		j->order[j->n_done] = o->i;
	j->n_done++;
	if (--j->left == 0)
		pthread_cond_signal(&j->cv); /* the caller may free j once mu is released */
	pthread_mutex_unlock(&m->mu);
}

static int mux_run(struct kube_mux *m, const struct kube_request *reqs, size_t n,
                   struct kube_response *resps, size_t *order)
{
	struct sync_state st1;
	struct mux_one one1;
	struct mux_job j = {.reqs = reqs, .resps = resps, .n = n, .left = n, .order = order};
	int r = 0;
	if (n == 1) {
		j.st = &st1;
		j.one = &one1;
	} else {
		j.st = calloc(n, sizeof(*j.st));
		j.one = calloc(n, sizeof(*j.one));
		if (!j.st || !j.one) {
			free(j.st);
			free(j.one);
			return -ENOMEM;
		}
	}
	for (size_t i = 0; i < n; i++) {
		memset(&resps[i], 0, sizeof(resps[i]));
		j.st[i] = (struct sync_state){.resp = &resps[i], .mux = m};
		j.one[i] = (struct mux_one){&j, i};
	}
	pthread_cond_init(&j.cv, NULL);
	pthread_mutex_lock(&m->mu);
	if (m->stop) {
		r = -ESHUTDOWN;
	} else {
		if (m->tail)
			m->tail->next = &j;
		else
			m->head = &j;
		m->tail = &j;
		if (m->sleeping) { /* a busy server takes the job before it polls again */
			m->sleeping = false;
			curl_multi_wakeup(m->c->multi);
		}
		while (j.left)
			pthread_cond_wait(&j.cv, &m->mu);
	}
	pthread_mutex_unlock(&m->mu);
	pthread_cond_destroy(&j.cv);
	for (size_t i = 0; r == 0 && i < n; i++)
		if (!resps[i].error.err && j.st[i].err)
			resps[i].error.err = j.st[i].err;
	if (n != 1) {
		free(j.st);
		free(j.one);
	}
	return r;
}

static void *mux_main(void *arg)
{
	struct kube_mux *m = arg;
	struct kube_client *c = m->c;
	c->in_pump = true; /* this thread drives the client, as kube_client_request does */
	for (;;) {
		pthread_mutex_lock(&m->mu);
		struct mux_job *j = m->head;
		bool stop = m->stop;
		m->head = m->tail = NULL;
		m->sleeping = false;
		pthread_mutex_unlock(&m->mu);
		while (j) {
			struct mux_job *next = j->next;
			size_t n = j->n;
			for (size_t i = 0; i < n; i++) {
				struct mux_one *o = &j->one[i];
				int r = kube_call_start(c, &j->reqs[i], mux_done, NULL, o, NULL);
				if (r < 0) { /* not started: finished at once, as a failed call */
					struct kube_result res = {.err = r};
					mux_done(NULL, &res, o);
				}
			}
			j = next;
		}
		if (stop && !c->all)
			break;
		int running;
		pump(c);
		c->in_curl++;
		curl_multi_perform(c->multi, &running);
		c->in_curl--;
		sweep(c);
		drain(c);
		pthread_mutex_lock(&m->mu);
		bool more = m->head || (m->stop && !stop);
		m->sleeping = !more; /* from here on a submission wakes the poll below */
		pthread_mutex_unlock(&m->mu);
		if (more)
			continue;
		if (c->all)
			blocking_wait(c);
		else /* idle: only a submission (curl_multi_wakeup) ends this */
			curl_multi_poll(c->multi, NULL, 0, 60000, NULL);
	}
	c->in_pump = false;
	return NULL;
}

int kube_client_share_threads(struct kube_client *c)
{
	struct kube_mux *m;
	int r;
	if (!c || c->sock_cb || c->mux)
		return -EINVAL;
	if (!(m = calloc(1, sizeof(*m))))
		return -ENOMEM;
	m->c = c;
	pthread_mutex_init(&m->mu, NULL);
	if ((r = pthread_create(&m->th, NULL, mux_main, m)) != 0) {
		pthread_mutex_destroy(&m->mu);
		free(m);
		return -r;
	}
	c->mux = m;
	return 0;
}

/* Ends the server thread once every call it holds has finished (no caller may be waiting). */
static void mux_stop(struct kube_client *c)
{
	struct kube_mux *m = c->mux;
	if (!m)
		return;
	pthread_mutex_lock(&m->mu);
	m->stop = true;
	pthread_mutex_unlock(&m->mu);
	curl_multi_wakeup(c->multi);
	pthread_join(m->th, NULL);
	pthread_mutex_destroy(&m->mu);
	free(m);
	c->mux = NULL;
}

void kube_response_clear(struct kube_response *resp)
{
	if (!resp)
		return;
	free(resp->body);
	memset(resp, 0, sizeof(*resp));
}

/* ---- construction ------------------------------------------------------------------------- */

/* fds open before a library call that may open some without O_CLOEXEC: everything open
 * afterwards and not before gets FD_CLOEXEC. Other threads of the process (at most one in kcmd)
 * opening an fd meanwhile get it too, which is the rule anyway. */
struct fd_set_snap {
	int *fd;
	size_t n;
};

static void fd_snap(struct fd_set_snap *s)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	size_t cap = 0;
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		if (s->n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			int *np = realloc(s->fd, nc * sizeof(*np));
			if (!np)
				break;
			s->fd = np;
			cap = nc;
		}
		int fd = (int)strtol(de->d_name, NULL, 10);
		if (fd != dirfd(d)) /* closed again below */
			s->fd[s->n++] = fd;
	}
	closedir(d);
}

static void cloexec_since(struct fd_set_snap *before)
{
	struct fd_set_snap after = {0};
	fd_snap(&after);
	for (size_t i = 0; i < after.n; i++) {
		bool old = false;
		for (size_t k = 0; k < before->n && !old; k++)
			old = before->fd[k] == after.fd[i];
		int fl;
		if (!old && (fl = fcntl(after.fd[i], F_GETFD)) >= 0 && !(fl & FD_CLOEXEC))
			fcntl(after.fd[i], F_SETFD, fl | FD_CLOEXEC);
	}
	free(after.fd);
	free(before->fd);
	before->fd = NULL;
}

static const char *getenv_any(const char *a, const char *b)
{
	const char *v = getenv(a);
	return v && *v ? v : (v = getenv(b)) && *v ? v : NULL;
}

/* http(s)_proxy and no_proxy as Go's httpproxy.FromEnvironment reads them (upper case first, no
 * ALL_PROXY); a value without a scheme is an http:// proxy, as in Go. */
static int env_proxy(struct kube_client *c, const char *server)
{
	bool https = server && !strncmp(server, "https://", 8);
	const char *p = https ? getenv_any("HTTPS_PROXY", "https_proxy")
	                      : getenv_any("HTTP_PROXY", "http_proxy");
	const char *np = getenv_any("NO_PROXY", "no_proxy");
	if (p && strstr(p, "://")) {
		if (kube_proxy_for_curl(p, &c->env_proxy) < 0)
			c->env_proxy = strdup(p); /* libcurl's own reading of it, as before */
	} else if (p && asprintf(&c->env_proxy, "http://%s", p) < 0) {
		c->env_proxy = NULL;
		return -ENOMEM;
	}
	if ((!c->env_proxy && !(c->env_proxy = strdup(p ? p : ""))) ||
	    !(c->env_noproxy = strdup(np ? np : "")))
		return -ENOMEM;
	return 0;
}

int kube_client_new(const struct kube_client_opts *o, struct kube_client **ret)
{
	static bool global_done;
	struct kube_client *c;
	int r;
	if (!o || !o->config || !o->config->server || !ret)
		return -EINVAL;
	if (o->config->insecure_skip_tls_verify && !o->insecure_ok)
		return -EINVAL;
	/* client-go: "specifying a root certificates file with the insecure flag is not allowed"
	 * (kube_config_load reports it with that text; this guards hand-built configs) */
	if (o->config->insecure_skip_tls_verify &&
	    ((o->config->ca_file && *o->config->ca_file) || o->config->ca_data_len))
		return -EINVAL;
	if (o->config->proxy_url && *o->config->proxy_url &&
	    kube_proxy_for_curl(o->config->proxy_url, NULL) < 0)
		return -EINVAL;
	if (!global_done) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			return -EIO;
		global_done = true;
	}
	kube_rest_metrics_attach_env();
	if (!(c = calloc(1, sizeof(*c))))
		return -ENOMEM;
	if (o->config->proxy_url && *o->config->proxy_url &&
	    (r = kube_proxy_for_curl(o->config->proxy_url, &c->proxy)) < 0)
		goto fail;
	if (!c->proxy && (r = env_proxy(c, o->config->server)) < 0)
		goto fail;
	c->cfg = o->config;
	c->limiter = o->limiter;
	c->fence = o->fence ? o->fence : process_fence;
	c->protobuf = o->content_type && !strcmp(o->content_type, KUBE_CONTENT_PROTOBUF);
	c->qps = o->limiter ? 0 : o->qps;
	c->burst = o->burst >= 1 ? o->burst : 1;
	c->tokens = c->burst;
	c->refill_ms = now_ms();
	c->max_retries = o->max_retries > 0 ? o->max_retries : DEFAULT_RETRIES;
	c->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : DEFAULT_TIMEOUT_MS;
	c->retry_base_ms = o->retry_base_ms > 0 ? o->retry_base_ms : DEFAULT_RETRY_BASE_MS;
	c->curl_timeout_ms = -1;
	c->exec_fd = -1;
	curl_version_info_data *vi = curl_version_info(CURLVERSION_NOW);
	c->http2 = vi && (vi->features & CURL_VERSION_HTTP2);
	if (asprintf(&c->user_agent, "kcmd/%s (%s/%s)", KCMD_VERSION,
	             o->process ? o->process : "kcmd",
	             o->controller ? o->controller : "client") < 0) {
		c->user_agent = NULL;
		r = -ENOMEM;
		goto fail;
	}
	if ((r = kube_auth_new(o->config, &c->auth)) < 0)
		goto fail;
	/* libcurl 7.88's multi handle opens a wakeup socketpair without SOCK_CLOEXEC */
	struct fd_set_snap before = {0};
	fd_snap(&before);
	c->multi = curl_multi_init();
	cloexec_since(&before);
	c->share = curl_share_init();
	if (!c->multi || !c->share) {
		r = -ENOMEM;
		goto fail;
	}
	curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
	curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
	curl_multi_setopt(c->multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
	curl_multi_setopt(c->multi, CURLMOPT_MAX_HOST_CONNECTIONS, 0L);
	*ret = c;
	return 0;
fail:
	kube_client_free(c);
	return r;
}

void kube_client_free(struct kube_client *c)
{
	if (!c)
		return;
	mux_stop(c);
	while (c->all)
		kube_call_cancel(c->all);
	if (c->exec_fd >= 0 && c->sock_cb)
		c->sock_cb(c->exec_fd, KUBE_POLL_REMOVE, c->loop_ud);
	while (c->n_easy_pool > 0)
		curl_easy_cleanup(c->easy_pool[--c->n_easy_pool]);
	while (c->n_buf_pool > 0)
		free(c->buf_pool[--c->n_buf_pool].p);
	if (c->multi)
		curl_multi_cleanup(c->multi);
	if (c->share)
		curl_share_cleanup(c->share);
	kube_auth_free(c->auth);
	free(c->proxy);
	free(c->env_proxy);
	free(c->env_noproxy);
	free(c->user_agent);
	free(c);
}

const char *kube_user_agent(const struct kube_client *c)
{
	return c->user_agent;
}

bool kube_client_http2(const struct kube_client *c)
{
	return c->http2;
}

bool kube_client_protobuf(const struct kube_client *c)
{
	return c && c->protobuf;
}
