/* SPDX-License-Identifier: Apache-2.0 */
/* kube/client.h - HTTP transport to the apiserver (libcurl multi).
 *
 * One struct kube_client per process (or per identity): one curl multi handle with HTTP/2
 * multiplexing over TLS when the server offers it (every watch of the process shares one
 * connection), a shared connection/TLS-session/DNS cache, a client-side token bucket
 * (--kube-api-qps / --kube-api-burst), the credentials (kube/auth.h) and the retry policy.
 *
 * Two ways to drive it:
 *  - non-blocking: kube_client_set_loop() gives the caller's event loop the sockets to watch and
 *    one timer to arm; the loop calls kube_client_socket_action() / kube_client_timeout(); calls
 *    are started with kube_call_start() and finish through their callback (and watch events
 *    through on_event, as they arrive);
 *  - blocking, for tools and tests: kube_client_request() runs one request to completion.
 * Both must not be mixed on one client. A client is not thread-safe; use it from one thread,
 * unless kube_client_share_threads() made it shared (blocking calls only, from any thread).
 *
 * Retries (kube_retry_delay()): 429 for any verb, after Retry-After (default 1 s); connection
 * refused / DNS failure / TLS handshake failure for any verb (the request provably never left);
 * resets, timeouts and 5xx only for GET and LIST; never for WATCH (the reflector decides); a
 * 401 once after invalidating exec/token-file credentials. Backoff 200 ms doubling, cap 5 s.
 *
 * Transport failures map to: -ECONNREFUSED, -EHOSTUNREACH (DNS), -ETIMEDOUT, -ECONNRESET (reset,
 * empty reply, HTTP/2 stream error), -ECONNABORTED (TLS handshake or certificate verification),
 * -ENOMEM, -EIO (anything else). API failures map as in kube/errors.h.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/config.h"
#include "kube/errors.h"

enum kube_verb {
	KUBE_GET = 1,
	KUBE_LIST,
	KUBE_WATCH,
	KUBE_CREATE, /* POST */
	KUBE_UPDATE, /* PUT */
	KUBE_PATCH,
	KUBE_DELETE,
};

enum kube_patch_type {
	KUBE_PATCH_STRATEGIC = 0, /* application/strategic-merge-patch+json */
	KUBE_PATCH_MERGE,         /* application/merge-patch+json */
	KUBE_PATCH_JSON,          /* application/json-patch+json */
	KUBE_PATCH_APPLY,         /* application/apply-patch+yaml (server-side apply, JSON body;
	                           * field_manager required, sent with force=true) */
};

struct kube_request {
	enum kube_verb verb;
	const char *group;    /* NULL or "" for the core group (/api/v1) */
	const char *version;  /* "v1" */
	const char *resource; /* "pods" */
	const char *ns;       /* NULL: cluster-scoped, or all namespaces for LIST/WATCH */
	const char *name;
	const char *subresource; /* "status", "scale" */
	const char *path;        /* raw path instead of the above ("/api", "/apis", "/version") */
	/* LIST and WATCH */
	const char *label_selector, *field_selector;
	const char *resource_version, *resource_version_match, *cont;
	int64_t limit;           /* 0: none */
	int32_t timeout_seconds; /* server-side; 0: none */
	bool allow_watch_bookmarks;
	bool send_initial_events;
	bool metadata_only; /* PartialObjectMetadata(List) via the Accept header */
	/* GET, LIST, WATCH of a built-in type (or metadata_only): ask for protobuf when the
	 * client's content_type is protobuf. The body (and watch events) may then be protobuf or
	 * JSON: decode with kube_decode_any() and friends (kube/proto.h). */
	bool protobuf_ok;
	/* CREATE, UPDATE, PATCH */
	const char *body;
	size_t body_len;
	enum kube_patch_type patch_type;
	const char *field_manager;
	/* CREATE, UPDATE: body is protobuf (kube_proto_encode_*(), kube/proto.h), sent as
	 * application/vnd.kubernetes.protobuf, and the answer is asked for as protobuf too (decode
	 * it with kube_decode_any()); body_len is required. Set it only when
	 * kube_client_protobuf() says the client was configured for protobuf. */
	bool body_protobuf;
	/* CREATE, UPDATE with a JSON body of a built-in type: its kind ("Lease", "Event", ...;
	 * the apiVersion is group/version). On a protobuf client the body is transcoded
	 * (kube_proto_encode_json(), kube/proto.h) and sent as protobuf, as client-go sends it;
	 * when the transcoder refuses it (a kind or a field it has no table for) the JSON body
	 * goes instead. The answer's encoding does not change (JSON unless protobuf_ok asks
	 * otherwise). Ignored on a JSON client and for patches. */
	const char *body_kind;
	/* DELETE (sent as a DeleteOptions body) */
	const char *precondition_uid, *precondition_rv;
	const char *propagation_policy; /* "Orphan", "Background", "Foreground" */
	int64_t grace_period_seconds;
	bool has_grace_period;
	long timeout_ms;    /* client-side; 0: client default (watch: timeout_seconds + 30 s) */
	const char *accept; /* Accept header override (e.g. KUBE_ACCEPT_DISCOVERY_V2); NULL: JSON */
};

struct kube_client_opts {
	const struct kube_config *config; /* must outlive the client */
	const char *process;              /* User-Agent: kcmd/<version> (<process>/<controller>) */
	const char *controller;
	double qps;         /* <= 0: no client-side limit */
	int burst;          /* >= 1 */
	int max_retries;    /* 0: default 5 */
	long timeout_ms;    /* per request, 0: default 60 s */
	long retry_base_ms; /* 0: default 200 */
	bool insecure_ok;   /* must be set for a config with insecure-skip-tls-verify */
	/* optional (kube/limiter.h): a bucket shared with other processes replaces the client's
	 * own qps/burst one; not owned, must outlive the client */
	struct kube_limiter *limiter;
	/* optional (kube/fence.h): writes sent at or past its deadline fail with -ENOLCK before any
	 * byte goes out (only the leader's processes write); not owned, must outlive the client */
	const struct kube_fence *fence;
	/* kcm's --kube-api-content-type: NULL or "application/json" for JSON everywhere;
	 * KUBE_CONTENT_PROTOBUF ("application/vnd.kubernetes.protobuf") asks protobuf for the
	 * requests marked protobuf_ok and accepts request bodies marked body_protobuf; patches
	 * and DeleteOptions stay JSON. */
	const char *content_type;
};

struct kube_client;
struct kube_fence;

/* -EINVAL for an unusable config (no server; insecure without insecure_ok); -ENOMEM; -EIO. */
int kube_client_new(const struct kube_client_opts *o, struct kube_client **ret);
void kube_client_free(struct kube_client *c);
/* Every client made after this call in this process uses f when its opts name no fence (a
 * worker process fences all its clients, also those a controller makes for itself). */
void kube_client_set_process_fence(const struct kube_fence *f);
/* Sharding (kube/fence.h F6): this process runs a controller that is not sharded by namespace,
 * so every write it makes is checked against range 0 (the range that runs such controllers),
 * not against the range of the namespace it writes into. Default false. */
void kube_client_set_process_unsharded(bool unsharded);
/* Writes refused by the client's fence so far. */
uint64_t kube_client_fenced(const struct kube_client *c);
/* Request bodies marked body_kind so far: sent as protobuf / sent as JSON (a JSON client, or
 * the transcoder refused them). */
void kube_client_body_counts(const struct kube_client *c, uint64_t *ret_pb, uint64_t *ret_json);
static inline void kube_client_freep(struct kube_client **c)
{
	kube_client_free(*c);
}
#define _cleanup_kube_client_ __attribute__((cleanup(kube_client_freep)))

/* ---- non-blocking ------------------------------------------------------------------------- */
enum { KUBE_POLL_IN = 1, KUBE_POLL_OUT = 2, KUBE_POLL_REMOVE = 4 };
/* fd: watch it for `events` (replacing earlier interest), or stop watching it (REMOVE). */
typedef void (*kube_socket_fn)(int fd, unsigned events, void *userdata);
/* Arm the one timer to fire after timeout_ms (0: as soon as possible), or disarm it (-1). */
typedef void (*kube_timer_fn)(long timeout_ms, void *userdata);

void kube_client_set_loop(struct kube_client *c, kube_socket_fn sock, kube_timer_fn timer,
                          void *userdata);
void kube_client_socket_action(struct kube_client *c, int fd, unsigned events);
void kube_client_timeout(struct kube_client *c);

struct kube_result {
	int err;          /* 0, or the negative errno (API or transport) */
	int http_code;    /* 0 if no response */
	const char *body; /* response body (for WATCH: only when it failed) */
	size_t body_len;
	const struct kube_error *error; /* when err came from an HTTP status */
	int http_version;               /* 1 or 2 (0 if no response) */
	int new_connections; /* connections this call opened (0: reused or multiplexed) */
};
struct kube_call;
/* Called once when the call ends (success, failure or after kube_call_cancel: err -ECANCELED).
 * Memory in *r is valid during the callback only. */
typedef void (*kube_done_fn)(struct kube_call *call, const struct kube_result *r, void *userdata);
/* WATCH only: one complete event (see kube/watch.h); a negative return ends the watch. */
typedef int (*kube_watch_event_fn)(const char *json, size_t len, void *userdata);

int kube_call_start(struct kube_client *c, const struct kube_request *req, kube_done_fn done,
                    kube_watch_event_fn on_event, void *userdata, struct kube_call **ret);
/* The done callback runs (with -ECANCELED) before this returns. */
void kube_call_cancel(struct kube_call *call);

/* ---- blocking ----------------------------------------------------------------------------- */
struct kube_response {
	int http_code;
	char *body; /* malloc'd, NUL-terminated; free with kube_response_clear() */
	size_t body_len;
	struct kube_error error;
	int http_version; /* 1 or 2 (0 if no response) */
};
/* Runs one request to completion. Returns 0 or a negative errno. *resp is always written (also
 * on failure: it carries the apiserver's Status). on_event may be NULL unless verb is WATCH. */
int kube_client_request(struct kube_client *c, const struct kube_request *req,
                        kube_watch_event_fn on_event, void *userdata, struct kube_response *resp);
void kube_response_clear(struct kube_response *resp);
/* Runs n requests (no WATCH) concurrently to completion: all are started at once (the limiter
 * still spaces them; over HTTP/2 they share one connection), and the call returns when every
 * one has finished. resps[i] belongs to reqs[i]; resps[i].error.err is its 0 or negative errno.
 * order (may be NULL) receives the indices in completion order. Returns 0, or -EINVAL / -ENOMEM
 * before anything was sent. */
int kube_client_request_many(struct kube_client *c, const struct kube_request *reqs, size_t n,
                             struct kube_response *resps, size_t *order);

/* Makes c shareable by threads for the blocking calls: a thread of its own drives it from now
 * on, and kube_client_request() (no WATCH: -EINVAL) and kube_client_request_many() called from
 * any thread hand their requests to it and wait; the requests of all callers are in flight
 * together over one connection (the way client-go's workers share a client). Call it before
 * the client is used by more than one thread; not with kube_client_set_loop(). Every caller
 * must have returned before kube_client_free(), which stops the thread. Returns 0, -EINVAL
 * (NULL, event-loop client, already shared), -ENOMEM or -EAGAIN (no thread). */
int kube_client_share_threads(struct kube_client *c);

/* ---- pieces exposed for tests ------------------------------------------------------------- */
int kube_build_url(const char *server, const struct kube_request *req, char **ret);
/* proxy-url (http://, https://, socks5://) as libcurl's CURLOPT_PROXY (socks5 -> socks5h: the
 * proxy resolves names, as Go's dialer has it). ret may be NULL (check only). 0, -EINVAL, -ENOMEM
 */
int kube_proxy_for_curl(const char *proxy_url, char **ret);
int kube_delete_options_body(const struct kube_request *req, char **ret); /* NULL body when none */
long kube_retry_delay(enum kube_verb verb, int curl_code, int http_code, int32_t retry_after_s,
                      int attempt, int max_retries, long base_ms);
const char *kube_user_agent(const struct kube_client *c);
bool kube_client_http2(const struct kube_client *c); /* libcurl can do HTTP/2 */
/* The client's content_type is protobuf (create/update bodies may be sent as protobuf). */
bool kube_client_protobuf(const struct kube_client *c);
