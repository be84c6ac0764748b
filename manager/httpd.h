/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * manager/httpd.h: the manager's HTTPS endpoint: /healthz, /livez, /readyz (with per-check
 * sub-paths and ?verbose, as kube-controller-manager serves them) and /metrics (Prometheus text).
 *
 * Design note.
 *   HTTP parsing is libmicrohttpd's (Debian's libmicrohttpd, TLS through GnuTLS), never ours.
 *   It runs inside the manager's event loop: MHD's internal epoll fd is one io source, MHD's
 *   timeout one timer; MHD_run() is called when either fires. No thread.
 *   With no --tls-cert-file the server makes a self-signed ECDSA certificate in memory (as kcm
 *   does), optionally kept in --cert-dir so clients can pin it across restarts.
 *
 *   Who may read what: as kube-controller-manager (k8s.io/apiserver's delegating authentication
 *   and authorization). A bearer token is checked with a TokenReview, then the user with a
 *   SubjectAccessReview for the non-resource path and the verb (GET -> "get"); results are
 *   cached (--authentication-token-webhook-cache-ttl, --authorization-webhook-cache-*-ttl,
 *   10 s each). A client certificate signed by --client-ca-file (and valid for client auth)
 *   authenticates: CommonName is the user, Organizations the groups. Before it, a front proxy's
 *   certificate signed by --requestheader-client-ca-file (CommonName in
 *   --requestheader-allowed-names when given) names the user in --requestheader-username-headers,
 *   its groups in --requestheader-group-headers and extras under
 *   --requestheader-extra-headers-prefix. Unless --authentication-skip-lookup, the CAs (and the
 *   request-header settings) not given as flags are read once at start from
 *   kube-system/extension-apiserver-authentication, as kcm does (a failed lookup is fatal unless
 *   --authentication-tolerate-lookup-failure). None of them: the user is system:anonymous.
 * system:masters is always allowed, and so are --authorization-always-allow-paths (default
 * /healthz,/readyz,/livez; exact, or a prefix when ending in '*'). Without
 * --authentication-kubeconfig / --authorization-kubeconfig the in-cluster config is used, and
 * outside a pod there is no reviewer: tokens are ignored (anonymous) and every other path is 403,
 * as kcm does. Invalid token: 401. The reviews never block the loop: the connection is suspended
 * (MHD_suspend_connection) while they run on a kube_client attached to the same loop, and resumed
 * when they end. Mounted handlers (the GC's graph) run on one render thread beside the loop, never
 * on it. TLS 1.2 or newer; at most MGR_HTTPD_PER_IP connections per client address.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ipc_loop;
struct mgr_httpd;

/* A health check: returns true when healthy; may write a short reason into why. */
typedef bool (*mgr_health_fn)(void *userdata, char *why, size_t whylen);

/* Appends Prometheus text exposition to the buffer through mgr_metrics_printf(). */
struct mgr_metrics_buf;
typedef void (*mgr_metrics_fn)(struct mgr_metrics_buf *b, void *userdata);
void mgr_metrics_printf(struct mgr_metrics_buf *b, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* Runs fn into a fresh buffer. Returns 0 with *ret (malloc'ed, NUL-terminated, caller frees)
 * and *len, or -ENOMEM. */
int mgr_metrics_render(mgr_metrics_fn fn, void *userdata, char **ret, size_t *len);

/* Delegated authentication/authorization (kcm's flags). Strings are borrowed. */
struct mgr_httpd_auth_opts {
	const char *authentication_kubeconfig; /* NULL/"": in-cluster config, else none */
	const char *authorization_kubeconfig;  /* NULL/"": in-cluster config, else none */
	const char *always_allow_paths;        /* comma-separated; NULL: /healthz,/readyz,/livez */
	bool skip_lookup;                      /* --authentication-skip-lookup */
	bool tolerate_lookup_failure;          /* --authentication-tolerate-lookup-failure */
	uint64_t token_cache_ttl_us;           /* 10 s */
	uint64_t authorized_ttl_us;            /* 10 s */
	uint64_t unauthorized_ttl_us;          /* 10 s */
	const char *client_ca_file;            /* --client-ca-file: client certificates (x509) */
	/* --requestheader-*: a client certificate signed by requestheader_client_ca_file (whose
	 * CommonName is in requestheader_allowed_names, when that is not empty) may name the user
	 * in headers (a front proxy). Comma-separated lists; an empty username_headers turns the
	 * request-header authenticator off, as kcm's. */
	const char *requestheader_client_ca_file;
	const char *requestheader_allowed_names;
	const char *requestheader_username_headers; /* "x-remote-user" */
	const char *requestheader_group_headers;    /* "x-remote-group" */
	const char *requestheader_extra_prefixes;   /* "x-remote-extra-" */
	/* --requestheader-uid-headers: none by default (kcm's); the first non-empty one names the
	 * user's UID. Refused unless uid_gate (RemoteRequestHeaderUID, on by default in v1.37), and
	 * refused without X-Remote-Uid among them, as kcm's validation. */
	const char *requestheader_uid_headers;
	bool requestheader_uid_gate;
	/* tests: the in-cluster service-account root ("" = /); no in-cluster lookup at all */
	const char *in_cluster_root;
	bool no_in_cluster;
};
void mgr_httpd_auth_defaults(struct mgr_httpd_auth_opts *o);
/* Checks --authorization-always-allow-paths as kcm does ('*' only at the end). 0 or -EINVAL. */
int mgr_httpd_check_paths(const char *paths, char *err, size_t errlen);

#define MGR_HTTPD_PER_IP         16 /* connections per client address */
#define MGR_HTTPD_TLS_PRIORITY   "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"
#define MGR_HTTPD_TLS13_PRIORITY "NORMAL:-VERS-ALL:+VERS-TLS1.3"

struct mgr_httpd_config {
	const char *bind_address; /* "0.0.0.0", "127.0.0.1", "::" */
	int port; /* 0 = pick a free one (tests); read it back with mgr_httpd_port */
	const char *tls_cert_file, *tls_key_file; /* both or neither */
	const char *cert_dir; /* where a generated pair is kept; NULL = memory only */
	bool plain_http;      /* tests only: no TLS */
	/* NULL: the defaults (kcm's, outside a pod: only the always-allowed paths are served) */
	const struct mgr_httpd_auth_opts *auth;
	unsigned conn_timeout_s; /* idle connection timeout; 0: 30 s */
	bool tls13_only;         /* --tls-min-version=VersionTLS13 */
};

int mgr_httpd_new(struct ipc_loop *loop, const struct mgr_httpd_config *cfg, struct mgr_httpd **ret,
                  char *err, size_t errlen);
struct mgr_httpd *mgr_httpd_free(struct mgr_httpd *h);
int mgr_httpd_port(const struct mgr_httpd *h);
/* One line for the log: who reviews tokens and requests, what is always allowed. */
const char *mgr_httpd_auth_summary(const struct mgr_httpd *h);
/* Counters for tests and metrics: reviews sent, requests answered from the caches. */
struct mgr_httpd_auth_stats {
	uint64_t token_reviews, access_reviews, token_cache_hits, access_cache_hits;
};
void mgr_httpd_auth_stats(const struct mgr_httpd *h, struct mgr_httpd_auth_stats *ret);
/* How often the client CAs changed since the start (kcm's dynamic CA content: the CA files are
 * watched and read every minute, the looked-up ConfigMap read every minute; httpd.c "CA
 * reload"). */
uint64_t mgr_httpd_ca_reloads(const struct mgr_httpd *h);
/* How often the serving pair (--tls-cert-file, --tls-private-key-file) changed since the start:
 * followed the same way, a key that does not match its certificate is refused. */
uint64_t mgr_httpd_cert_reloads(const struct mgr_httpd *h);

/* Registers a check under /healthz and /livez (liveness) or /readyz (readiness) or both.
 * name is copied. Returns 0 or -ENOMEM. */
enum { MGR_CHECK_LIVE = 1, MGR_CHECK_READY = 2 };
int mgr_httpd_add_check(struct mgr_httpd *h, const char *name, unsigned where, mgr_health_fn fn,
                        void *userdata);
/* A GET handler mounted at `path` and under `path/` (kcm's debug mux: UnlistedHandle and
 * UnlistedHandlePrefix). It runs on the httpd's render thread, not on the loop (a large GC graph
 * takes long to render): it must only read what is safe to read from another thread, and
 * requests to handlers are served one at a time. fn gets what follows path ("" or e.g. "/graph")
 * and the values of the query key `arg` (each repetition, in order); it sets *status, *ctype
 * (static) and *body (malloc'd, *len bytes; the server frees it). A negative return is a 500. Up to
 * 8 handlers. */
typedef int (*mgr_handler_fn)(void *userdata, const char *sub, const char *const *args,
                              size_t n_args, unsigned *status, const char **ctype, char **body,
                              size_t *len);
int mgr_httpd_add_handler(struct mgr_httpd *h, const char *path, const char *arg, mgr_handler_fn fn,
                          void *userdata);

/* Sets the /metrics producer. */
void mgr_httpd_set_metrics(struct mgr_httpd *h, mgr_metrics_fn fn, void *userdata);
/* Sets the producer of kcm's z-pages /statusz and /flagz (text/plain; other Accept types are a
 * 406), served on the loop after the same authentication and authorization as /metrics. fn gets
 * "statusz" or "flagz" and returns a malloc'd body (0) or -errno (a 500). */
typedef int (*mgr_zpage_fn)(void *userdata, const char *page, char **ret, size_t *ret_len);
void mgr_httpd_set_zpages(struct mgr_httpd *h, mgr_zpage_fn fn, void *userdata);
