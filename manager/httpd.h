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
 *   Who may read what: every path is served to anyone who can connect; kcmd does no delegated
 *   authentication (kcm's --authentication-kubeconfig). Bind it to 127.0.0.1 or a
 *   private interface (--bind-address) if /metrics must not be public. Nothing secret is served.
 */
#include <stdbool.h>
#include <stddef.h>

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

struct mgr_httpd_config {
	const char *bind_address; /* "0.0.0.0", "127.0.0.1", "::" */
	int port;                 /* 0 = pick a free one (tests); read it back with mgr_httpd_port */
	const char *tls_cert_file, *tls_key_file; /* both or neither */
	const char *cert_dir;     /* where a generated pair is kept; NULL = memory only */
	bool plain_http;          /* tests only: no TLS */
};

int mgr_httpd_new(struct ipc_loop *loop, const struct mgr_httpd_config *cfg,
		  struct mgr_httpd **ret, char *err, size_t errlen);
struct mgr_httpd *mgr_httpd_free(struct mgr_httpd *h);
int mgr_httpd_port(const struct mgr_httpd *h);

/* Registers a check under /healthz and /livez (liveness) or /readyz (readiness) or both.
 * name is copied. Returns 0 or -ENOMEM. */
enum { MGR_CHECK_LIVE = 1, MGR_CHECK_READY = 2 };
int mgr_httpd_add_check(struct mgr_httpd *h, const char *name, unsigned where, mgr_health_fn fn,
			void *userdata);
/* A GET handler mounted at `path` and under `path/` (kcm's debug mux: UnlistedHandle and
 * UnlistedHandlePrefix). fn gets what follows path ("" or e.g. "/graph") and the values of the
 * query key `arg` (each repetition, in order); it sets *status, *ctype (static) and *body
 * (malloc'd, *len bytes; the server frees it). A negative return is a 500. Up to 8 handlers. */
typedef int (*mgr_handler_fn)(void *userdata, const char *sub, const char *const *args,
			      size_t n_args, unsigned *status, const char **ctype, char **body,
			      size_t *len);
int mgr_httpd_add_handler(struct mgr_httpd *h, const char *path, const char *arg, mgr_handler_fn fn,
			  void *userdata);

/* Sets the /metrics producer. */
void mgr_httpd_set_metrics(struct mgr_httpd *h, mgr_metrics_fn fn, void *userdata);
