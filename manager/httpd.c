/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manager/httpd.c: health and metrics over HTTPS with libmicrohttpd inside the event loop
 * (see httpd.h).
 *
 * A request goes through stages, each of which may suspend the connection and come back when
 * its work finished elsewhere: authentication (a TokenReview on the authn client), authorization
 * (a SubjectAccessReview on the authz client), then serving (health and /metrics on the loop;
 * mounted handlers on the render thread). MHD calls the access handler again for a resumed
 * connection, with the same per-request state in *con_cls.
 */
#include "manager/httpd.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>

#include "ipc/loop.h"
#include "kube/client.h"
#include "kube/config.h"
#include "lib/kube-loop.h"
#include "lib/log.h"

struct check {
	char *name;
	unsigned where;
	mgr_health_fn fn;
	void *userdata;
};

struct hreq;

/* A small cache of review results keyed by a SHA-256 (of the token, or of the review's spec). */
#define CACHE_SLOTS 512
struct cache_entry {
	unsigned char key[32];
	uint64_t expires_usec; /* 0: free */
	bool ok;               /* authenticated / allowed */
	char *data;            /* the user (JSON) / the denial reason */
};

/* A reviewer: one API client in loop mode (NULL when there is none). */
struct reviewer {
	struct kube_config *cfg;
	struct kube_client *client;
	struct kube_loop *kl;
	char *source; /* "--authentication-kubeconfig /x" / "in-cluster config" */
};

struct tls_cred;
struct ca_set;

struct mgr_httpd {
	struct ipc_loop *loop;
	struct MHD_Daemon *d;
	struct ipc_source *io, *timer;
	int port;
	struct check *checks;
	size_t n_checks;
	mgr_metrics_fn metrics;
	void *metrics_userdata;
	mgr_zpage_fn zpage; /* /statusz and /flagz */
	void *zpage_userdata;
	struct {
		char *path, *arg;
		mgr_handler_fn fn;
		void *userdata;
	} handlers[8];
	size_t n_handlers;
	char *cert_pem, *key_pem;
	char *client_ca_pem;                /* --client-ca-file (or the looked-up one), or NULL */
	char *trust_pem;                    /* what MHD asks client certificates for: both CAs */
	gnutls_x509_trust_list_t client_tl; /* client_ca_pem's, or NULL */
	/* the request-header authenticator (a front proxy), off when rh_tl is NULL */
	gnutls_x509_trust_list_t rh_tl;
	char *rh_ca_pem;
	struct strlist {
		char **v;
		size_t n;
	} rh_names, rh_user_hdrs, rh_uid_hdrs, rh_group_hdrs, rh_extra_prefixes;

	/* delegated authentication and authorization */
	struct reviewer authn, authz;
	char **allow_paths; /* "healthz" exact, or "debug/" prefix (trailing '*' dropped) */
	bool *allow_prefix;
	size_t n_allow;
	uint64_t token_ttl, allow_ttl, deny_ttl;
	struct cache_entry token_cache[CACHE_SLOTS], access_cache[CACHE_SLOTS];
	struct mgr_httpd_auth_stats stats;
	char summary[512];
	struct hreq *inflight; /* requests waiting for a review (to cancel them at the end) */

	/* reloading the client CAs (kcm's dynamic CA content), "CA reload" below */
	char *client_ca_path, *rh_ca_path;  /* the flags' files, or NULL */
	char *tls_cert_path, *tls_key_path; /* --tls-cert-file/--tls-private-key-file, or NULL */
	bool client_from_cm, rh_from_cm;    /* else looked up in the ConfigMap, read every minute */
	struct tls_cred *cred;              /* what new connections get; NULL: plain HTTP */
	int ino_fd;                         /* inotify on the files' folders, or -1 */
	struct ipc_source *ino_src, *ca_timer, *cm_src;
	pthread_t cm_th;
	bool cm_started, cm_stop;
	pthread_cond_t cm_cv;
	int cm_efd;               /* ConfigMap thread -> loop: a fetch finished */
	struct ca_set *cm_result; /* its last result, taken by the loop; guarded by mu */
	uint64_t ca_reloads, cert_reloads;

	/* the render thread for mounted handlers */
	pthread_t render_th;
	bool render_started, render_stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct hreq *render_todo, *render_done; /* FIFO / any order; guarded by mu */
	int render_efd;                         /* render thread -> loop: jobs done */
	struct ipc_source *render_src;
};

enum stage {
	ST_NEW = 0,
	ST_AUTHN_WAIT, /* TokenReview in flight (suspended) */
	ST_AUTHZ,
	ST_AUTHZ_WAIT, /* SubjectAccessReview in flight (suspended) */
	ST_SERVE,
	ST_RENDER_WAIT, /* on the render thread (suspended) */
	ST_RENDERED,
};

struct hreq {
	struct mgr_httpd *h;
	struct MHD_Connection *conn;
	enum stage stage;
	bool suspended;
	bool done_early; /* the review finished inside kube_call_start */
	struct kube_call *call;
	struct hreq *next, *prev; /* h->inflight */
	/* who */
	cJSON *user; /* {"username","uid","groups","extra"}; NULL: anonymous */
	unsigned char key[32];
	int status;       /* a final answer decided by a stage (401/403/500), 0: go on */
	bool cert_failed; /* a client certificate was presented and did not verify */
	char *message;
	/* a mounted handler's job */
	size_t handler;
	char *sub;
	char **args;
	size_t n_args;
	unsigned r_status;
	const char *r_ctype;
	char *r_body;
	size_t r_len;
	int r_rc;
	struct hreq *job_next;
};

struct mgr_metrics_buf {
	char *p;
	size_t len, cap;
	bool oom;
};

void mgr_metrics_printf(struct mgr_metrics_buf *b, const char *fmt, ...)
{
	va_list ap;

	for (;;) {
		size_t room = b->cap - b->len;
		int n;
		if (b->oom)
			return;
		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? room : 0, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = b->cap ? b->cap * 2 : 4096;
		while (cap - b->len <= (size_t)n)
			cap *= 2;
		char *np = realloc(b->p, cap);
		if (!np) {
			b->oom = true;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
}

int mgr_metrics_render(mgr_metrics_fn fn, void *userdata, char **ret, size_t *len)
{
	struct mgr_metrics_buf b = {0};

	mgr_metrics_printf(&b, "%s", ""); /* an empty exposition is still a string */
	if (fn)
		fn(&b, userdata);
	if (b.oom) {
		free(b.p);
		return -ENOMEM;
	}
	*ret = b.p;
	*len = b.len;
	return 0;
}

/* ---- self-signed certificate (GnuTLS) ---------------------------------------------------- */

static int read_file(const char *path, char **ret)
{
	FILE *f = fopen(path, "re");
	char *buf;
	long n;

	if (!f)
		return -errno;
	if (fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 || n > (1 << 20) ||
	    fseek(f, 0, SEEK_SET) < 0) {
		fclose(f);
		return -EINVAL;
	}
	buf = malloc((size_t)n + 1);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		fclose(f);
		return -EIO;
	}
	buf[n] = 0;
	fclose(f);
	*ret = buf;
	return 0;
}

static int write_file(const char *path, const char *data, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	size_t n = strlen(data);

	if (fd < 0)
		return -errno;
	if (write(fd, data, n) != (ssize_t)n) {
		int r = -errno;
		close(fd);
		return r ? r : -EIO;
	}
	return close(fd) < 0 ? -errno : 0;
}

static char *datum_str(gnutls_datum_t *d)
{
	char *s = malloc(d->size + 1);

	if (s) {
		memcpy(s, d->data, d->size);
		s[d->size] = 0;
	}
	gnutls_free(d->data);
	return s;
}

static int make_self_signed(char **ret_cert, char **ret_key)
{
	gnutls_x509_privkey_t key = NULL;
	gnutls_x509_crt_t crt = NULL;
	gnutls_datum_t d;
	char cn[300], host[256] = "localhost";
	unsigned char serial[16];
	unsigned char lo4[4] = {127, 0, 0, 1}, lo6[16] = {[15] = 1};
	time_t now = time(NULL);
	int r = -EIO;

	gethostname(host, sizeof(host) - 1);
	snprintf(cn, sizeof(cn), "%s@%lld", host, (long long)now);
	if (gnutls_rnd(GNUTLS_RND_NONCE, serial, sizeof(serial)) < 0)
		return -EIO;
	serial[0] &= 0x7f;
	if (gnutls_x509_privkey_init(&key) < 0 || gnutls_x509_crt_init(&crt) < 0)
		goto out;
	if (gnutls_x509_privkey_generate(key, GNUTLS_PK_ECDSA,
	                                 GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0) < 0 ||
	    gnutls_x509_crt_set_version(crt, 3) < 0 ||
	    gnutls_x509_crt_set_serial(crt, serial, sizeof(serial)) < 0 ||
	    gnutls_x509_crt_set_activation_time(crt, now - 3600) < 0 ||
	    gnutls_x509_crt_set_expiration_time(crt, now + 365 * 24 * 3600) < 0 ||
	    gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, cn, strlen(cn)) <
	            0 ||
	    gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_DNSNAME, "localhost", 9,
	                                         GNUTLS_FSAN_APPEND) < 0 ||
	    gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_DNSNAME, host, strlen(host),
	                                         GNUTLS_FSAN_APPEND) < 0 ||
	    gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, lo4, 4,
	                                         GNUTLS_FSAN_APPEND) < 0 ||
	    gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, lo6, 16,
	                                         GNUTLS_FSAN_APPEND) < 0 ||
	    gnutls_x509_crt_set_key(crt, key) < 0 ||
	    gnutls_x509_crt_set_basic_constraints(crt, 0, -1) < 0 ||
	    gnutls_x509_crt_set_key_usage(crt, GNUTLS_KEY_DIGITAL_SIGNATURE) < 0 ||
	    gnutls_x509_crt_set_key_purpose_oid(crt, GNUTLS_KP_TLS_WWW_SERVER, 0) < 0 ||
	    gnutls_x509_crt_sign2(crt, crt, key, GNUTLS_DIG_SHA256, 0) < 0)
		goto out;
	if (gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &d) < 0)
		goto out;
	*ret_cert = datum_str(&d);
	if (gnutls_x509_privkey_export2(key, GNUTLS_X509_FMT_PEM, &d) < 0) {
		free(*ret_cert);
		goto out;
	}
	*ret_key = datum_str(&d);
	r = *ret_cert && *ret_key ? 0 : -ENOMEM;
out:
	if (crt)
		gnutls_x509_crt_deinit(crt);
	if (key)
		gnutls_x509_privkey_deinit(key);
	return r;
}

static int load_or_make_cert(struct mgr_httpd *h, const struct mgr_httpd_config *cfg, char *err,
                             size_t errlen)
{
	char cpath[4096], kpath[4096];
	int r;

	if (cfg->tls_cert_file) {
		if ((r = read_file(cfg->tls_cert_file, &h->cert_pem)) < 0) {
			snprintf(err, errlen, "reading --tls-cert-file %s: %s", cfg->tls_cert_file,
			         strerror(-r));
			return r;
		}
		if ((r = read_file(cfg->tls_key_file, &h->key_pem)) < 0) {
			snprintf(err, errlen, "reading --tls-private-key-file %s: %s",
			         cfg->tls_key_file, strerror(-r));
			return r;
		}
		/* followed while serving ("CA reload") */
		if (!(h->tls_cert_path = strdup(cfg->tls_cert_file)) ||
		    !(h->tls_key_path = strdup(cfg->tls_key_file)))
			return -ENOMEM;
		return 0;
	}
	if (cfg->cert_dir) {
		snprintf(cpath, sizeof(cpath), "%s/kcmd.crt", cfg->cert_dir);
		snprintf(kpath, sizeof(kpath), "%s/kcmd.key", cfg->cert_dir);
		if (read_file(cpath, &h->cert_pem) == 0 && read_file(kpath, &h->key_pem) == 0)
			return 0;
		free(h->cert_pem);
		h->cert_pem = NULL;
	}
	if ((r = make_self_signed(&h->cert_pem, &h->key_pem)) < 0) {
		snprintf(err, errlen, "generating a self-signed serving certificate failed");
		return r;
	}
	if (cfg->cert_dir) {
		mkdir(cfg->cert_dir, 0700);
		if ((r = write_file(kpath, h->key_pem, 0600)) < 0 ||
		    (r = write_file(cpath, h->cert_pem, 0644)) < 0) {
			snprintf(err, errlen,
			         "writing the serving certificate into --cert-dir %s: %s",
			         cfg->cert_dir, strerror(-r));
			return r;
		}
	}
	return 0;
}

/* ---- requests ------------------------------------------------------------------------------- */

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type,
                             char *body, size_t len)
{
	struct MHD_Response *resp =
	        MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result r;

	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache, private");
	r = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return r;
}

static enum MHD_Result find_verbose(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
	(void)kind;
	(void)value;
	if (strcmp(key, "verbose") == 0)
		*(bool *)cls = true;
	return MHD_YES;
}

static enum MHD_Result health(struct mgr_httpd *h, struct MHD_Connection *c, const char *group,
                              unsigned where, const char *sub)
{
	struct mgr_metrics_buf b = {0};
	bool verbose = false;
	bool all_ok = true, found = false;
	char why[256];
	enum MHD_Result r;

	/* "?verbose" has no value, which MHD_lookup_connection_value cannot tell from absence. */
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, find_verbose, &verbose);
	if (sub && strcmp(sub, "ping") == 0)
		return reply(c, 200, "text/plain; charset=utf-8", "ok", 2);
	if (!sub)
		mgr_metrics_printf(&b, "[+]ping ok\n");
	for (size_t i = 0; i < h->n_checks; i++) {
		struct check *k = &h->checks[i];
		if (!(k->where & where) || (sub && strcmp(sub, k->name) != 0))
			continue;
		found = true;
		why[0] = 0;
		bool ok = k->fn(k->userdata, why, sizeof(why));
		all_ok &= ok;
		if (ok)
			mgr_metrics_printf(&b, "[+]%s ok\n", k->name);
		else if (verbose || sub)
			mgr_metrics_printf(&b, "[-]%s failed: %s\n", k->name,
			                   why[0] ? why : "not healthy");
		else
			mgr_metrics_printf(&b, "[-]%s failed: reason withheld\n", k->name);
	}
	if (sub && !found) {
		free(b.p);
		return reply(c, 404, "text/plain; charset=utf-8", "404 page not found\n", 19);
	}
	if (all_ok && !verbose) {
		free(b.p);
		return reply(c, 200, "text/plain; charset=utf-8", "ok", 2);
	}
	mgr_metrics_printf(&b, "%s check %s\n", group, all_ok ? "passed" : "failed");
	if (b.oom) {
		free(b.p);
		return reply(c, 500, "text/plain; charset=utf-8", "out of memory\n", 14);
	}
	r = reply(c, all_ok ? 200 : 500, "text/plain; charset=utf-8", b.p, b.len);
	free(b.p);
	return r;
}

/* ---- delegated authentication and authorization ------------------------------------------ */

static int authenticate_token(struct hreq *q);

static void sha256(const void *p, size_t n, unsigned char out[32])
{
	gnutls_hash_fast(GNUTLS_DIG_SHA256, p, n, out);
}

static struct cache_entry *cache_find(struct cache_entry *c, const unsigned char key[32],
                                      uint64_t now)
{
	for (size_t i = 0; i < CACHE_SLOTS; i++)
		if (c[i].expires_usec > now && memcmp(c[i].key, key, 32) == 0)
			return &c[i];
	return NULL;
}

static void cache_put(struct cache_entry *c, const unsigned char key[32], uint64_t ttl, bool ok,
                      const char *data)
{
	uint64_t now = ipc_now_usec();
	struct cache_entry *slot = &c[0];

	if (!ttl)
		return;
	for (size_t i = 0; i < CACHE_SLOTS;
	     i++) { /* a free or expired slot, else the one ending first */
		if (c[i].expires_usec <= now) {
			slot = &c[i];
			break;
		}
		if (c[i].expires_usec < slot->expires_usec)
			slot = &c[i];
	}
	free(slot->data);
	slot->data = data ? strdup(data) : NULL;
	if (data && !slot->data) {
		slot->expires_usec = 0;
		return;
	}
	memcpy(slot->key, key, 32);
	slot->ok = ok;
	slot->expires_usec = now + ttl;
}

static void cache_clear(struct cache_entry *c)
{
	for (size_t i = 0; i < CACHE_SLOTS; i++) {
		free(c[i].data);
		c[i].data = NULL;
		c[i].expires_usec = 0;
	}
}

static void inflight_add(struct hreq *q)
{
	struct mgr_httpd *h = q->h;

	q->prev = NULL;
	q->next = h->inflight;
	if (h->inflight)
		h->inflight->prev = q;
	h->inflight = q;
}

static void inflight_del(struct hreq *q)
{
	if (q->prev)
		q->prev->next = q->next;
	else if (q->h->inflight == q)
		q->h->inflight = q->next;
	if (q->next)
		q->next->prev = q->prev;
	q->next = q->prev = NULL;
}

/* MHD runs soon (a resumed connection is processed by the next MHD_run). */
static void kick(struct mgr_httpd *h)
{
	if (h->timer)
		ipc_source_set_time(h->timer, ipc_now_usec());
}

static void resume(struct hreq *q)
{
	if (q->suspended) {
		q->suspended = false;
		MHD_resume_connection(q->conn);
		kick(q->h);
	} else {
		q->done_early = true;
	}
}

static void set_answer(struct hreq *q, int status, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static void set_answer(struct hreq *q, int status, const char *fmt, ...)
{
	va_list ap;

	q->status = status;
	free(q->message);
	va_start(ap, fmt);
	if (vasprintf(&q->message, fmt, ap) < 0)
		q->message = NULL;
	va_end(ap);
}

/* TokenReview answer: status.authenticated and status.user. */
static void token_done(struct kube_call *call, const struct kube_result *r, void *ud)
{
	struct hreq *q = ud;
	struct mgr_httpd *h = q->h;
	cJSON *doc = NULL, *st, *user;

	(void)call;
	q->call = NULL;
	inflight_del(q);
	q->stage = ST_AUTHZ;
	if (r->err == -ECANCELED) {
		set_answer(q, 503, "shutting down");
	} else if (r->err < 0 || !(doc = cJSON_ParseWithLength(r->body, r->body_len)) ||
	           !cJSON_IsObject(st = cJSON_GetObjectItemCaseSensitive(doc, "status"))) {
		/* a failed review is not cached: the next request asks again */
		set_answer(q, 401, "Unauthorized");
	} else if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(st, "authenticated")) ||
	           !cJSON_IsObject(user = cJSON_GetObjectItemCaseSensitive(st, "user")) ||
	           !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(user, "username"))) {
		cache_put(h->token_cache, q->key, h->token_ttl, false, NULL);
		set_answer(q, 401, "Unauthorized");
	} else {
		char *u = cJSON_PrintUnformatted(user);
		if (u)
			cache_put(h->token_cache, q->key, h->token_ttl, true, u);
		q->user = cJSON_Duplicate(user, true);
		free(u);
		if (!q->user)
			set_answer(q, 500, "out of memory");
	}
	cJSON_Delete(doc);
	resume(q);
}

/* Starts a review; returns 1 when it runs (the caller suspends), 0 when it already ended. */
static int start_review(struct hreq *q, struct reviewer *rv, const char *group,
                        const char *resource, cJSON *body, kube_done_fn done)
{
	char *json = cJSON_PrintUnformatted(body);
	struct kube_request kr = {.verb = KUBE_CREATE,
	                          .group = group,
	                          .version = "v1",
	                          .resource = resource,
	                          .body = json,
	                          /* protobuf on a protobuf client, as client-go sends them */
	                          .body_kind = !strcmp(resource, "tokenreviews")
	                                               ? "TokenReview"
	                                               : "SubjectAccessReview",
	                          .timeout_ms = 10000};
	int r;

	if (!json) {
		set_answer(q, 500, "out of memory");
		return 0;
	}
	q->done_early = false;
	inflight_add(q);
	r = kube_call_start(rv->client, &kr, done, NULL, q, &q->call);
	explicit_bzero(json, strlen(json)); /* a TokenReview carries the token */
	free(json);
	if (r < 0) {
		inflight_del(q);
		q->call = NULL;
		set_answer(q, 500, "cannot start the review: %s", strerror(-r));
		return 0;
	}
	return q->done_early ? 0 : 1;
}

/* The request's bearer token, as k8s.io/apiserver's bearertoken authenticator reads it
 * ("Bearer <token>", scheme case-insensitive), or NULL. *len is its length. */
static const char *bearer(struct MHD_Connection *c, size_t *len)
{
	const char *v =
	        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	const char *t;

	if (!v)
		return NULL;
	while (*v == ' ' || *v == '\t')
		v++;
	if (strncasecmp(v, "bearer ", 7) != 0)
		return NULL;
	t = v + 7;
	*len = strcspn(t, " ");
	while (*len && (t[*len - 1] == '\t' || t[*len - 1] == '\r' || t[*len - 1] == '\n'))
		(*len)--;
	return *len ? t : NULL;
}

/* The peer's certificate chain verified for client auth against tl (x509.DefaultVerifyOptions:
 * the leaf first, the rest as intermediates). 1: verified, *ret_crt is the leaf (the caller
 * deinits it) and *ret_der its DER; 0: no certificate; -1: it does not verify; -2: no memory. */
#define PEER_CHAIN_MAX 16
static int peer_verify(struct hreq *q, gnutls_x509_trust_list_t tl, gnutls_x509_crt_t *ret_crt,
                       const gnutls_datum_t **ret_der)
{
	const union MHD_ConnectionInfo *ci;
	gnutls_session_t s;
	const gnutls_datum_t *chain;
	gnutls_x509_crt_t crts[PEER_CHAIN_MAX] = {0};
	unsigned n = 0, m = 0, status = 0;
	gnutls_typed_vdata_st purpose = {.type = GNUTLS_DT_KEY_PURPOSE_OID,
	                                 .data = (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT};
	int r = -1;

	if (!(ci = MHD_get_connection_info(q->conn, MHD_CONNECTION_INFO_GNUTLS_SESSION)) ||
	    !(s = (gnutls_session_t)ci->tls_session) ||
	    !(chain = gnutls_certificate_get_peers(s, &n)) || !n)
		return 0;
	if (n > PEER_CHAIN_MAX)
		return -1; /* longer than any real chain: not verified */
	for (m = 0; m < n; m++)
		if (gnutls_x509_crt_init(&crts[m]) < 0 ||
		    gnutls_x509_crt_import(crts[m], &chain[m], GNUTLS_X509_FMT_DER) < 0) {
			m++;
			goto out;
		}
	if (gnutls_x509_trust_list_verify_crt2(tl, crts, n, &purpose, 1, 0, &status, NULL) < 0 ||
	    status != 0)
		goto out;
	*ret_crt = crts[0];
	crts[0] = NULL;
	*ret_der = &chain[0];
	r = 1;
out:
	for (unsigned i = 0; i < m; i++)
		if (crts[i])
			gnutls_x509_crt_deinit(crts[i]);
	return r;
}

/* The certificate's CommonName into buf: 0, or -1 when it has none. */
static int cert_cn(gnutls_x509_crt_t crt, char *buf, size_t size)
{
	size_t len = size;

	if (gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, 0, buf, &len) < 0 ||
	    !len)
		return -1;
	return 0;
}

/* A client certificate signed by --client-ca-file and valid for client auth; CommonName the
 * user, Organizations the groups, its SHA-256 the credential id.
 * 1: q->user set, 0: no certificate (or no CA), -1: a certificate that does not verify. */
static int x509_user(struct hreq *q)
{
	const gnutls_datum_t *der = NULL;
	gnutls_x509_crt_t crt = NULL;
	char buf[1024], hex[65 + 20];
	size_t len;
	unsigned char fp[32];
	cJSON *u = NULL, *groups, *extra, *ids;
	int r;

	if (!q->h->client_tl)
		return 0;
	if ((r = peer_verify(q, q->h->client_tl, &crt, &der)) <= 0)
		return r;
	r = -1;
	if (cert_cn(crt, buf, sizeof(buf)) < 0) {
		r = 0; /* no CommonName: not an identity (kcm: not authenticated by this one) */
		goto out;
	}
	if (!(u = cJSON_CreateObject()) || !cJSON_AddStringToObject(u, "username", buf) ||
	    !(groups = cJSON_AddArrayToObject(u, "groups")))
		goto out;
	for (unsigned i = 0;; i++) {
		len = sizeof(buf);
		if (gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_ORGANIZATION_NAME, i, 0, buf,
		                                  &len) < 0)
			break;
		if (!cJSON_AddItemToArray(groups, cJSON_CreateString(buf)))
			goto out;
	}
	sha256(der->data, der->size, fp);
	len = (size_t)snprintf(hex, sizeof(hex), "X509SHA256=");
	for (int i = 0; i < 32; i++)
		len += (size_t)snprintf(hex + len, sizeof(hex) - len, "%02x", fp[i]);
	if (!(extra = cJSON_AddObjectToObject(u, "extra")) ||
	    !(ids = cJSON_AddArrayToObject(extra, "authentication.kubernetes.io/credential-id")) ||
	    !cJSON_AddItemToArray(ids, cJSON_CreateString(hex)))
		goto out;
	q->user = u;
	u = NULL;
	r = 1;
out:
	cJSON_Delete(u);
	if (crt)
		gnutls_x509_crt_deinit(crt);
	if (r < 0 && !q->user)
		return -2; /* out of memory or an unreadable certificate */
	return r;
}

/* ---- the request-header authenticator (k8s.io/apiserver headerrequest) ------------------- */
static bool has_prefix_caseless(const char *s, const char *prefix)
{
	return strncasecmp(s, prefix, strlen(prefix)) == 0;
}

/* url.PathUnescape of s into a new string; s itself (copied) when it is not valid escaping. */
static char *path_unescape(const char *s)
{
	size_t n = strlen(s), o = 0;
	char *out = malloc(n + 1);

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '%') {
			out[o++] = s[i];
			continue;
		}
		if (i + 2 >= n + 0 || !isxdigit((unsigned char)s[i + 1]) ||
		    !isxdigit((unsigned char)s[i + 2])) {
			memcpy(out, s, n + 1); /* malformed: the key as it came */
			return out;
		}
		char hx[3] = {s[i + 1], s[i + 2], 0};
		out[o++] = (char)strtol(hx, NULL, 16);
		i += 2;
	}
	out[o] = '\0';
	return out;
}

struct hdr_walk {
	const struct strlist *names; /* exact names (groups), or */
	const char *prefix;          /* a prefix (extras) */
	cJSON *arr;                  /* groups: the array to fill */
	cJSON *extra;                /* extras: key -> array */
	bool oom;
};

static enum MHD_Result hdr_visit(void *ud, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
	struct hdr_walk *w = ud;

	(void)kind;
	if (!key || !value)
		return MHD_YES;
	if (w->arr) {
		if (!*value)
			return MHD_YES;
		for (size_t i = 0; i < w->names->n; i++)
			if (!strcasecmp(key, w->names->v[i])) {
				if (!cJSON_AddItemToArray(w->arr, cJSON_CreateString(value)))
					w->oom = true;
				break;
			}
		return MHD_YES;
	}
	if (!has_prefix_caseless(key, w->prefix))
		return MHD_YES;
	char *low = strdup(key + strlen(w->prefix)), *k;
	if (!low) {
		w->oom = true;
		return MHD_NO;
	}
	for (char *c = low; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	k = path_unescape(low);
	free(low);
	if (!k) {
		w->oom = true;
		return MHD_NO;
	}
	cJSON *a = cJSON_GetObjectItemCaseSensitive(w->extra, k);
	if (!a && !(a = cJSON_AddArrayToObject(w->extra, k)))
		w->oom = true;
	else if (!cJSON_AddItemToArray(a, cJSON_CreateString(value)))
		w->oom = true;
	free(k);
	return MHD_YES;
}

/* A front proxy: its certificate verifies against --requestheader-client-ca-file (and its
 * CommonName is allowed); then the first non-empty username header names the user, every group
 * header value is a group and every header under an extra prefix an extra (key lowercased and
 * unescaped). 1: q->user set; 0: not this authenticator's (no certificate, no CA, or no
 * username header); -1: a certificate it does not accept (an error to the union); -2: no
 * memory. */
static int requestheader_user(struct hreq *q)
{
	struct mgr_httpd *h = q->h;
	const gnutls_datum_t *der = NULL;
	gnutls_x509_crt_t crt = NULL;
	const char *name = NULL;
	char cn[1024];
	cJSON *u = NULL, *groups, *extra;
	int r;

	if (!h->rh_tl || !h->rh_user_hdrs.n)
		return 0;
	if ((r = peer_verify(q, h->rh_tl, &crt, &der)) <= 0)
		return r;
	if (h->rh_names.n) {
		bool ok = false;
		if (cert_cn(crt, cn, sizeof(cn)) == 0)
			for (size_t i = 0; i < h->rh_names.n && !ok; i++)
				ok = !strcmp(cn, h->rh_names.v[i]);
		if (!ok) {
			gnutls_x509_crt_deinit(crt);
			return -1; /* x509: subject ... is not in the allowed list */
		}
	}
	gnutls_x509_crt_deinit(crt);
	for (size_t i = 0; i < h->rh_user_hdrs.n && !(name && *name); i++)
		name = MHD_lookup_connection_value(q->conn, MHD_HEADER_KIND, h->rh_user_hdrs.v[i]);
	if (!name || !*name)
		return 0;
	/* the UID: the first non-empty UID header, as the name */
	const char *uid = NULL;
	for (size_t i = 0; i < h->rh_uid_hdrs.n && !(uid && *uid); i++)
		uid = MHD_lookup_connection_value(q->conn, MHD_HEADER_KIND, h->rh_uid_hdrs.v[i]);
	if (!(u = cJSON_CreateObject()) || !cJSON_AddStringToObject(u, "username", name) ||
	    (uid && *uid && !cJSON_AddStringToObject(u, "uid", uid)) ||
	    !(groups = cJSON_AddArrayToObject(u, "groups")) ||
	    !(extra = cJSON_AddObjectToObject(u, "extra"))) {
		cJSON_Delete(u);
		return -2;
	}
	struct hdr_walk gw = {.names = &h->rh_group_hdrs, .arr = groups};
	if (h->rh_group_hdrs.n)
		MHD_get_connection_values(q->conn, MHD_HEADER_KIND, hdr_visit, &gw);
	for (size_t i = 0; i < h->rh_extra_prefixes.n && !gw.oom; i++) {
		struct hdr_walk ew = {.prefix = h->rh_extra_prefixes.v[i], .extra = extra};
		MHD_get_connection_values(q->conn, MHD_HEADER_KIND, hdr_visit, &ew);
		gw.oom = ew.oom;
	}
	if (gw.oom) {
		cJSON_Delete(u);
		return -2;
	}
	q->user = u;
	return 1;
}

/* k8s.io/apiserver's AuthenticatedGroupAdder: every authenticated user is in
 * system:authenticated. */
static void add_authenticated_group(struct hreq *q)
{
	cJSON *gs;

	if (!q->user)
		return;
	if (!cJSON_IsArray(gs = cJSON_GetObjectItemCaseSensitive(q->user, "groups"))) {
		cJSON_DeleteItemFromObjectCaseSensitive(q->user, "groups");
		if (!(gs = cJSON_AddArrayToObject(q->user, "groups")))
			return;
	}
	for (cJSON *x = gs->child; x; x = x->next)
		if (cJSON_IsString(x) && strcmp(x->valuestring, "system:authenticated") == 0)
			return;
	cJSON_AddItemToArray(gs, cJSON_CreateString("system:authenticated"));
}

/* 0: authenticated (q->user set, or anonymous), 1: suspended for a TokenReview, or q->status set.
 * kcm's order (its union of authenticators): a front proxy's request headers, a client
 * certificate, then a bearer token; a certificate one of them refuses is a 401 unless a later
 * one authenticates. */
static int authenticate(struct hreq *q)
{
	int rh = requestheader_user(q), x = rh == 1 ? 1 : x509_user(q);

	if (x == 1)
		return 0;
	if (x == -2 || rh == -2) {
		set_answer(q, 500, "out of memory");
		return 0;
	}
	q->cert_failed = x == -1 || rh == -1;
	return authenticate_token(q);
}

static int authenticate_token(struct hreq *q)
{
	struct mgr_httpd *h = q->h;
	struct cache_entry *e;
	size_t len = 0;
	const char *tok = bearer(q->conn, &len);
	cJSON *body, *spec;
	char *t;
	int r;

	if (!tok || !h->authn.client) {
		/* anonymous (kcm: a token is ignored when there is no TokenReview client) */
		if (q->cert_failed)
			set_answer(q, 401, "Unauthorized");
		return 0;
	}
	sha256(tok, len, q->key);
	if ((e = cache_find(h->token_cache, q->key, ipc_now_usec()))) {
		h->stats.token_cache_hits++;
		if (!e->ok) {
			set_answer(q, 401, "Unauthorized");
			return 0;
		}
		if (!(q->user = cJSON_Parse(e->data)))
			set_answer(q, 500, "out of memory");
		return 0;
	}
	if (!(t = strndup(tok, len))) {
		set_answer(q, 500, "out of memory");
		return 0;
	}
	body = cJSON_CreateObject();
	if (!body || !cJSON_AddStringToObject(body, "apiVersion", "authentication.k8s.io/v1") ||
	    !cJSON_AddStringToObject(body, "kind", "TokenReview") ||
	    !(spec = cJSON_AddObjectToObject(body, "spec")) ||
	    !cJSON_AddStringToObject(spec, "token", t)) {
		explicit_bzero(t, len);
		free(t);
		cJSON_Delete(body);
		set_answer(q, 500, "out of memory");
		return 0;
	}
	explicit_bzero(t, len);
	free(t);
	h->stats.token_reviews++;
	q->stage = ST_AUTHN_WAIT;
	r = start_review(q, &h->authn, "authentication.k8s.io", "tokenreviews", body, token_done);
	spec = cJSON_GetObjectItemCaseSensitive(spec, "token");
	if (spec && spec->valuestring)
		explicit_bzero(spec->valuestring, strlen(spec->valuestring));
	cJSON_Delete(body);
	return r;
}

static const char *user_name(const struct hreq *q)
{
	const cJSON *u = q->user ? cJSON_GetObjectItemCaseSensitive(q->user, "username") : NULL;

	return cJSON_IsString(u) ? u->valuestring : "system:anonymous";
}

static bool in_group(const struct hreq *q, const char *g)
{
	const cJSON *gs = q->user ? cJSON_GetObjectItemCaseSensitive(q->user, "groups") : NULL, *x;

	cJSON_ArrayForEach(x,
	                   gs) if (cJSON_IsString(x) && strcmp(x->valuestring, g) == 0) return true;
	return false;
}

/* Non-resource verb as k8s.io/apiserver's RequestInfoFactory makes it: the lower-cased method. */
static void verb_of(const char *method, char *out, size_t n)
{
	size_t i = 0;

	for (; method[i] && i + 1 < n; i++)
		out[i] = (char)(method[i] >= 'A' && method[i] <= 'Z' ? method[i] + 32 : method[i]);
	out[i] = 0;
}

static void access_done(struct kube_call *call, const struct kube_result *r, void *ud)
{
	struct hreq *q = ud;
	struct mgr_httpd *h = q->h;
	cJSON *doc = NULL, *st;
	const cJSON *reason;

	(void)call;
	q->call = NULL;
	inflight_del(q);
	q->stage = ST_SERVE;
	if (r->err == -ECANCELED) {
		set_answer(q, 503, "shutting down");
	} else if (r->err < 0 || !(doc = cJSON_ParseWithLength(r->body, r->body_len)) ||
	           !cJSON_IsObject(st = cJSON_GetObjectItemCaseSensitive(doc, "status"))) {
		set_answer(q, 500, "Internal Server Error: \"%s\": authorization review failed: %s",
		           q->sub ? q->sub : "",
		           r->err < 0 ? strerror(-r->err) : "malformed answer");
	} else if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(st, "allowed"))) {
		cache_put(h->access_cache, q->key, h->allow_ttl, true, NULL);
	} else {
		reason = cJSON_GetObjectItemCaseSensitive(st, "reason");
		cache_put(h->access_cache, q->key, h->deny_ttl, false,
		          cJSON_IsString(reason) ? reason->valuestring : "");
		set_answer(q, 403, "%s", cJSON_IsString(reason) ? reason->valuestring : "");
		q->status = -403; /* decided: forbidden, message is the reason */
	}
	cJSON_Delete(doc);
	resume(q);
}

static bool path_allowed(const struct mgr_httpd *h, const char *url)
{
	const char *p = url[0] == '/' ? url + 1 : url;

	for (size_t i = 0; i < h->n_allow; i++)
		if (h->allow_prefix[i]
		            ? strncmp(p, h->allow_paths[i], strlen(h->allow_paths[i])) == 0
		            : strcmp(p, h->allow_paths[i]) == 0)
			return true;
	return false;
}

/* 0: allowed, 1: suspended for a SubjectAccessReview, or q->status set (403 / 500). */
static int authorize(struct hreq *q, const char *url, const char *method)
{
	struct mgr_httpd *h = q->h;
	struct cache_entry *e;
	cJSON *body, *spec, *nr;
	char verb[16], *key;
	const cJSON *f;

	if (in_group(q, "system:masters") || path_allowed(h, url))
		return 0;
	if (!h->authz.client) {
		q->status = -403;
		free(q->message);
		q->message = NULL;
		return 0;
	}
	verb_of(method, verb, sizeof(verb));
	body = cJSON_CreateObject();
	if (!body || !cJSON_AddStringToObject(body, "apiVersion", "authorization.k8s.io/v1") ||
	    !cJSON_AddStringToObject(body, "kind", "SubjectAccessReview") ||
	    !(spec = cJSON_AddObjectToObject(body, "spec")) ||
	    !(nr = cJSON_AddObjectToObject(spec, "nonResourceAttributes")) ||
	    !cJSON_AddStringToObject(nr, "path", url) ||
	    !cJSON_AddStringToObject(nr, "verb", verb) ||
	    !cJSON_AddStringToObject(spec, "user", user_name(q)))
		goto oom;
	if (q->user) {
		static const char *const keep[] = {"groups", "extra", "uid"};
		for (size_t i = 0; i < 3; i++)
			if ((f = cJSON_GetObjectItemCaseSensitive(q->user, keep[i])) &&
			    !cJSON_AddItemToObject(spec, keep[i], cJSON_Duplicate(f, true)))
				goto oom;
	} else {
		cJSON *g = cJSON_AddArrayToObject(spec, "groups");
		if (!g || !cJSON_AddItemToArray(g, cJSON_CreateString("system:unauthenticated")))
			goto oom;
	}
	if (!(key = cJSON_PrintUnformatted(spec)))
		goto oom;
	sha256(key, strlen(key), q->key);
	free(key);
	if ((e = cache_find(h->access_cache, q->key, ipc_now_usec()))) {
		h->stats.access_cache_hits++;
		cJSON_Delete(body);
		if (e->ok)
			return 0;
		set_answer(q, 403, "%s", e->data ? e->data : "");
		q->status = -403;
		return 0;
	}
	h->stats.access_reviews++;
	free(q->sub);
	q->sub = strdup(url);
	q->stage = ST_AUTHZ_WAIT;
	int r = start_review(q, &h->authz, "authorization.k8s.io", "subjectaccessreviews", body,
	                     access_done);
	cJSON_Delete(body);
	return r;
oom:
	cJSON_Delete(body);
	set_answer(q, 500, "out of memory");
	return 0;
}

/* k8s.io/apiserver's Status answers (JSON), as kcm writes them. */
static enum MHD_Result status_reply(struct hreq *q, const char *url, const char *method)
{
	cJSON *o = cJSON_CreateObject(), *md;
	char verb[16], *msg = NULL, *json;
	const char *reason;
	int code = q->status < 0 ? -q->status : q->status;
	enum MHD_Result r;

	verb_of(method, verb, sizeof(verb));
	switch (code) {
	case 401:
		reason = "Unauthorized";
		msg = strdup("Unauthorized");
		break;
	case 403: {
		/* forbidden: User "x" cannot get path "/metrics"[: reason] */
		const char *why = q->message && *q->message ? q->message : NULL;
		if (asprintf(&msg, "forbidden: User \"%s\" cannot %s path \"%s\"%s%s", user_name(q),
		             verb, url, why ? ": " : "", why ? why : "") < 0)
			msg = NULL;
		reason = "Forbidden";
		break;
	}
	case 503:
		reason = "ServiceUnavailable";
		msg = strdup(q->message ? q->message : "");
		break;
	default:
		reason = "InternalError";
		msg = strdup(q->message ? q->message : "internal error");
		break;
	}
	if (!o || !msg || !cJSON_AddStringToObject(o, "kind", "Status") ||
	    !cJSON_AddStringToObject(o, "apiVersion", "v1") ||
	    !(md = cJSON_AddObjectToObject(o, "metadata")) ||
	    !cJSON_AddStringToObject(o, "status", "Failure") ||
	    !cJSON_AddStringToObject(o, "message", msg) ||
	    !cJSON_AddStringToObject(o, "reason", reason) ||
	    (code == 403 && !cJSON_AddObjectToObject(o, "details")) ||
	    !cJSON_AddNumberToObject(o, "code", code) || !(json = cJSON_PrintUnformatted(o))) {
		cJSON_Delete(o);
		free(msg);
		return reply(q->conn, 500, "text/plain", "out of memory\n", 14);
	}
	cJSON_Delete(o);
	free(msg);
	r = reply(q->conn, (unsigned)code, "application/json", json, strlen(json));
	free(json);
	return r;
}

/* ---- the render thread ---------------------------------------------------------------------- */

static void *render_main(void *arg)
{
	struct mgr_httpd *h = arg;
	uint64_t one = 1;

	pthread_mutex_lock(&h->mu);
	for (;;) {
		while (!h->render_todo && !h->render_stop)
			pthread_cond_wait(&h->cv, &h->mu);
		if (h->render_stop)
			break;
		struct hreq *q = h->render_todo;
		h->render_todo = q->job_next;
		pthread_mutex_unlock(&h->mu);
		q->r_status = 500;
		q->r_ctype = "text/plain; charset=utf-8";
		q->r_rc = h->handlers[q->handler].fn(
		        h->handlers[q->handler].userdata, q->sub, (const char *const *)q->args,
		        q->n_args, &q->r_status, &q->r_ctype, &q->r_body, &q->r_len);
		pthread_mutex_lock(&h->mu);
		q->job_next = h->render_done;
		h->render_done = q;
		if (write(h->render_efd, &one, sizeof(one)) < 0) {
			/* the counter cannot overflow with one job at a time; nothing to do */
		}
	}
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

static int on_rendered(struct ipc_source *s, int fd, uint32_t revents, void *userdata)
{
	struct mgr_httpd *h = userdata;
	uint64_t n;
	struct hreq *done;

	(void)s;
	(void)revents;
	if (read(fd, &n, sizeof(n)) < 0) {
		/* EAGAIN: nothing new */
	}
	pthread_mutex_lock(&h->mu);
	done = h->render_done;
	h->render_done = NULL;
	pthread_mutex_unlock(&h->mu);
	while (done) {
		struct hreq *q = done;
		done = q->job_next;
		q->stage = ST_RENDERED;
		resume(q);
	}
	return 0;
}

static int render_start(struct mgr_httpd *h)
{
	int r;

	if (h->render_started)
		return 0;
	h->render_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (h->render_efd < 0)
		return -errno;
	if ((r = ipc_loop_add_io(h->loop, &h->render_src, h->render_efd, POLLIN, on_rendered, h)) <
	    0)
		return r;
	if ((r = pthread_create(&h->render_th, NULL, render_main, h)) != 0)
		return -r;
	h->render_started = true;
	return 0;
}

struct args {
	const char *key;
	char **v;
	size_t n;
	bool oom;
};

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
	struct args *a = cls;

	(void)kind;
	if (strcmp(key, a->key) == 0 && a->n < 64) {
		char **nv = realloc(a->v, (a->n + 2) * sizeof(*nv));
		if (!nv || !(nv[a->n] = strdup(value ? value : ""))) {
			a->oom = true;
			if (nv)
				a->v = nv;
			return MHD_NO;
		}
		a->v = nv;
		a->n++;
		a->v[a->n] = NULL;
	}
	return MHD_YES;
}

/* Queues a mounted handler's job for the render thread; 1: suspended, else an answer was queued */
static int mounted(struct mgr_httpd *h, struct hreq *q, size_t i, const char *sub,
                   enum MHD_Result *ret)
{
	struct args a = {.key = h->handlers[i].arg};
	int r;

	if (a.key)
		MHD_get_connection_values(q->conn, MHD_GET_ARGUMENT_KIND, collect_arg, &a);
	q->handler = i;
	q->args = a.v;
	q->n_args = a.n;
	free(q->sub);
	q->sub = strdup(sub);
	if (a.oom || !q->sub || (r = render_start(h)) < 0) {
		*ret = reply(q->conn, 500, "text/plain; charset=utf-8", "internal error\n", 15);
		return 0;
	}
	q->stage = ST_RENDER_WAIT;
	pthread_mutex_lock(&h->mu);
	struct hreq **pp = &h->render_todo;
	while (*pp)
		pp = &(*pp)->job_next;
	q->job_next = NULL;
	*pp = q;
	pthread_cond_signal(&h->cv);
	pthread_mutex_unlock(&h->mu);
	return 1;
}

static enum MHD_Result rendered(struct hreq *q)
{
	enum MHD_Result r;

	if (q->r_rc < 0)
		return reply(q->conn, 500, "text/plain; charset=utf-8", "internal error\n", 15);
	r = reply(q->conn, q->r_status, q->r_ctype, q->r_body ? q->r_body : "",
	          q->r_body ? q->r_len : 0);
	free(q->r_body);
	q->r_body = NULL;
	return r;
}

static enum MHD_Result serve(struct mgr_httpd *h, struct hreq *q, const char *url,
                             const char *method)
{
	static const struct {
		const char *path;
		unsigned where;
	} groups[] = {{"/healthz", MGR_CHECK_LIVE | MGR_CHECK_READY},
	              {"/livez", MGR_CHECK_LIVE},
	              {"/readyz", MGR_CHECK_READY}};
	struct MHD_Connection *c = q->conn;

	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return reply(c, 405, "text/plain", "method not allowed\n", 19);
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		size_t n = strlen(groups[i].path);
		if (strncmp(url, groups[i].path, n) != 0)
			continue;
		if (url[n] == 0)
			return health(h, c, groups[i].path + 1, groups[i].where, NULL);
		if (url[n] == '/' && url[n + 1])
			return health(h, c, groups[i].path + 1, groups[i].where, url + n + 1);
	}
	if (h->zpage && (strcmp(url, "/statusz") == 0 || strcmp(url, "/flagz") == 0)) {
		/* kcm's z-pages: text/plain (also for no Accept or a wildcard); their structured
		 * JSON/YAML forms (Accept with as=Statusz/Flagz) are not served: 406 as kcm answers
		 * a media type it does not serve */
		const char *acc = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept");
		char *text;
		size_t len;
		enum MHD_Result r;
		if (acc && *acc && !strstr(acc, "text/plain") && !strstr(acc, "*/*") &&
		    !strstr(acc, "text/*")) {
			static char na[] =
			        "{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n  "
			        "\"metadata\": "
			        "{},\n  \"status\": \"Failure\",\n  \"message\": \"only the "
			        "following "
			        "media types are accepted: text/plain\",\n  \"reason\": "
			        "\"NotAcceptable\",\n  \"code\": 406\n}";
			return reply(c, 406, "application/json", na, sizeof(na) - 1);
		}
		if (h->zpage(h->zpage_userdata, url + 1, &text, &len) < 0)
			return reply(c, 500, "text/plain", "out of memory\n", 14);
		r = reply(c, 200, "text/plain; charset=utf-8", text, len);
		free(text);
		return r;
	}
	if (strcmp(url, "/metrics") == 0) {
		char *text;
		size_t len;
		enum MHD_Result r;
		if (mgr_metrics_render(h->metrics, h->metrics_userdata, &text, &len) < 0)
			return reply(c, 500, "text/plain", "out of memory\n", 14);
		r = reply(c, 200, "text/plain; version=0.0.4; charset=utf-8", text, len);
		free(text);
		return r;
	}
	for (size_t i = 0; i < h->n_handlers; i++) {
		size_t n = strlen(h->handlers[i].path);
		if (strncmp(url, h->handlers[i].path, n) == 0 && (url[n] == 0 || url[n] == '/')) {
			enum MHD_Result r = MHD_YES;
			if (mounted(h, q, i, url + n, &r) == 1) {
				q->suspended = true;
				MHD_suspend_connection(c);
			}
			return r;
		}
	}
	return reply(c, 404, "text/plain; charset=utf-8", "404 page not found\n", 19);
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
	struct mgr_httpd *h = cls;
	struct hreq *q = *con_cls;
	int r;

	(void)version;
	(void)upload;
	if (*upload_size) /* no bodies accepted */
		return reply(c, 413, "text/plain", "request body not accepted\n", 26);
	if (!q) {
		if (!(q = calloc(1, sizeof(*q))))
			return MHD_NO;
		q->h = h;
		q->conn = c;
		*con_cls = q;
	}
	/* authentication, then authorization (kcm's filter order), then the mux */
	switch (q->stage) {
	case ST_NEW:
		q->stage = ST_AUTHZ;
		if ((r = authenticate(q)) == 1)
			goto suspend;
		/* fall through */
	case ST_AUTHZ:
		if (q->status)
			return status_reply(q, url, method);
		add_authenticated_group(q);
		q->stage = ST_SERVE;
		if ((r = authorize(q, url, method)) == 1)
			goto suspend;
		/* fall through */
	case ST_SERVE:
		if (q->status)
			return status_reply(q, url, method);
		return serve(h, q, url, method);
	case ST_AUTHN_WAIT:
	case ST_AUTHZ_WAIT:
	case ST_RENDER_WAIT:
		/* suspended: MHD does not call us until resume(); nothing is decided yet */
		return MHD_YES;
	case ST_RENDERED:
		return rendered(q);
	}
	return MHD_NO;
suspend:
	q->suspended = true;
	MHD_suspend_connection(c);
	return MHD_YES;
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
	struct hreq *q = *con_cls;

	(void)cls;
	(void)c;
	(void)toe;
	if (!q)
		return;
	if (q->call) /* cannot happen while suspended; kept total */
		kube_call_cancel(q->call);
	cJSON_Delete(q->user);
	free(q->message);
	free(q->sub);
	for (size_t i = 0; i < q->n_args; i++)
		free(q->args[i]);
	free(q->args);
	free(q->r_body);
	free(q);
	*con_cls = NULL;
}

/* ---- loop integration ----------------------------------------------------------------------- */

static int rearm(struct mgr_httpd *h)
{
	MHD_UNSIGNED_LONG_LONG ms;

	if (MHD_get_timeout(h->d, &ms) == MHD_YES)
		return ipc_source_set_time(h->timer, ipc_now_usec() + (uint64_t)ms * 1000 + 1);
	return ipc_source_set_time(h->timer, 0);
}

static int on_io(struct ipc_source *s, int fd, uint32_t revents, void *userdata)
{
	struct mgr_httpd *h = userdata;

	(void)s;
	(void)fd;
	(void)revents;
	MHD_run(h->d);
	return rearm(h);
}

static int on_timer(struct ipc_source *s, uint64_t now, void *userdata)
{
	(void)now;
	return on_io(s, -1, 0, userdata);
}

/* ---- setup of the delegated authentication and authorization -------------------------------- */

void mgr_httpd_auth_defaults(struct mgr_httpd_auth_opts *o)
{
	*o = (struct mgr_httpd_auth_opts){.always_allow_paths = "/healthz,/readyz,/livez",
	                                  .requestheader_username_headers = "x-remote-user",
	                                  .requestheader_group_headers = "x-remote-group",
	                                  .requestheader_extra_prefixes = "x-remote-extra-",
	                                  .requestheader_uid_gate = true,
	                                  .token_cache_ttl_us = 10000000,
	                                  .authorized_ttl_us = 10000000,
	                                  .unauthorized_ttl_us = 10000000,
	                                  .tolerate_lookup_failure = false};
}

int mgr_httpd_check_paths(const char *paths, char *err, size_t errlen)
{
	const char *p = paths ? paths : "";

	while (*p) {
		size_t n = strcspn(p, ",");
		const char *star = memchr(p, '*', n);
		if (star && star != p + n - 1) {
			snprintf(err, errlen, "only trailing * allowed in %.*s", (int)n, p);
			return -EINVAL;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

static void reviewer_free(struct reviewer *rv)
{
	kube_loop_detach(rv->kl);
	kube_client_free(rv->client);
	kube_config_free(rv->cfg);
	free(rv->source);
	*rv = (struct reviewer){0};
}

/* kcm's getClient(): the named kubeconfig (its errors are fatal), else the in-cluster config,
 * else (not in a pod) no reviewer. */
static int reviewer_setup(struct mgr_httpd *h, struct reviewer *rv, const char *kubeconfig,
                          const char *what, const struct mgr_httpd_auth_opts *o, char *err,
                          size_t errlen)
{
	struct kube_config_opts co = {.kubeconfig = kubeconfig,
	                              .no_in_cluster = true,
	                              .kubeconfig_env = "",
	                              .home = "/nonexistent"};
	char kerr[512] = "";
	int r;

	if (kubeconfig && *kubeconfig) {
		if ((r = kube_config_load(&co, &rv->cfg, kerr, sizeof(kerr))) < 0) {
			snprintf(err, errlen, "failed to get delegated %s kubeconfig: %s", what,
			         kerr[0] ? kerr : strerror(-r));
			return r;
		}
		if (asprintf(&rv->source, "--%s-kubeconfig %s", what, kubeconfig) < 0)
			rv->source = NULL;
	} else {
		struct kube_config_opts ic = {.in_cluster_root = o->in_cluster_root};
		if (o->no_in_cluster ||
		    kube_config_in_cluster(&ic, &rv->cfg, kerr, sizeof(kerr)) < 0)
			return 0; /* kcm: RemoteKubeConfigFileOptional, no reviewer */
		rv->source = strdup("the in-cluster config");
	}
	/* kcm's delegated clients: qps 200, burst 400 */
	struct kube_client_opts ko = {.config = rv->cfg,
	                              .process = "kcmd",
	                              .controller = "delegated-auth",
	                              .qps = 200,
	                              .burst = 400,
	                              .timeout_ms = 10000,
	                              .insecure_ok = true};
	if ((r = kube_client_new(&ko, &rv->client)) < 0) {
		snprintf(err, errlen, "delegated %s client for %s: %s", what, rv->cfg->server,
		         strerror(-r));
		return r;
	}
	if ((r = kube_loop_attach(h->loop, rv->client, &rv->kl)) < 0) {
		snprintf(err, errlen, "delegated %s client: cannot join the event loop: %s", what,
		         strerror(-r));
		return r;
	}
	return 0;
}

static int auth_setup(struct mgr_httpd *h, const struct mgr_httpd_auth_opts *opts, char *err,
                      size_t errlen)
{
	struct mgr_httpd_auth_opts def;
	const struct mgr_httpd_auth_opts *o = opts;
	const char *p;
	int r;

	mgr_httpd_auth_defaults(&def);
	if (!o)
		o = &def;
	p = o->always_allow_paths ? o->always_allow_paths : def.always_allow_paths;
	if ((r = mgr_httpd_check_paths(p, err, errlen)) < 0)
		return r;
	while (*p) {
		size_t n = strcspn(p, ",");
		if (n) {
			const char *s = p;
			if (*s ==
			    '/') /* stored without the leading '/', as k8s's path authorizer does */
				s++, n--;
			bool prefix = n && s[n - 1] == '*';
			char **np = realloc(h->allow_paths, (h->n_allow + 1) * sizeof(*np));
			bool *nb = np ? realloc(h->allow_prefix, (h->n_allow + 1) * sizeof(*nb))
			              : NULL;
			if (np)
				h->allow_paths = np;
			if (nb)
				h->allow_prefix = nb;
			if (!np || !nb || !(np[h->n_allow] = strndup(s, prefix ? n - 1 : n)))
				return -ENOMEM;
			nb[h->n_allow++] = prefix;
			p = s + n;
		}
		if (*p == ',')
			p++;
	}
	h->token_ttl = o->token_cache_ttl_us;
	h->allow_ttl = o->authorized_ttl_us;
	h->deny_ttl = o->unauthorized_ttl_us;
	if ((r = reviewer_setup(h, &h->authn, o->authentication_kubeconfig, "authentication", o,
	                        err, errlen)) < 0 ||
	    (r = reviewer_setup(h, &h->authz, o->authorization_kubeconfig, "authorization", o, err,
	                        errlen)) < 0)
		return r;
	snprintf(h->summary, sizeof(h->summary),
	         "authentication: %s%s; authorization: %s%s; always allowed: %s and group "
	         "system:masters",
	         h->authn.client
	                 ? "TokenReview through "
	                 : "none (no authentication-kubeconfig: every request is anonymous)",
	         h->authn.client ? h->authn.source : "",
	         h->authz.client ? "SubjectAccessReview through "
	                         : "none (no authorization-kubeconfig: other paths get 403)",
	         h->authz.client ? h->authz.source : "",
	         o->always_allow_paths ? o->always_allow_paths : def.always_allow_paths);
	return 0;
}

/* ---- client certificates: the CAs, from flags or looked up in the cluster ----------------- */
static void strlist_clear(struct strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	*l = (struct strlist){0};
}

static int strlist_add(struct strlist *l, const char *s, size_t n)
{
	char **nv = realloc(l->v, (l->n + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	l->v = nv;
	if (!(l->v[l->n] = strndup(s, n)))
		return -ENOMEM;
	l->n++;
	return 0;
}

/* A flag's comma-separated list (pflag's StringSlice). trim: a header list, whose entries are
 * trimmed and must not be empty (kcm: "empty header"). 0, -EINVAL, -ENOMEM. */
static int strlist_csv(struct strlist *l, const char *csv, bool trim, const char *flag, char *err,
                       size_t errlen)
{
	const char *p = csv ? csv : "";

	strlist_clear(l);
	if (!*p)
		return 0;
	for (;;) {
		size_t n = strcspn(p, ",");
		const char *b = p, *e = p + n;
		if (trim) {
			while (b < e && isspace((unsigned char)*b))
				b++;
			while (e > b && isspace((unsigned char)e[-1]))
				e--;
			if (b == e) {
				snprintf(err, errlen, "--%s: empty header %.*s", flag, (int)n, p);
				return -EINVAL;
			}
		}
		if (strlist_add(l, b, (size_t)(e - b)) < 0)
			return -ENOMEM;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

/* kcm's validation of --requestheader-uid-headers, whether or not a request-header CA is given:
 * only with the RemoteRequestHeaderUID gate, no blank name, and X-Remote-Uid among them. */
static int check_uid_headers(const struct mgr_httpd_auth_opts *o, char *err, size_t errlen)
{
	struct strlist l = {0};
	bool standard = false;
	int r;

	if (!o->requestheader_uid_headers || !*o->requestheader_uid_headers)
		return 0;
	if (!o->requestheader_uid_gate) {
		snprintf(err, errlen,
		         "--requestheader-uid-headers requires the \"RemoteRequestHeaderUID\" "
		         "feature to be enabled");
		return -EINVAL;
	}
	if ((r = strlist_csv(&l, o->requestheader_uid_headers, true, "requestheader-uid-headers",
	                     err, errlen)) < 0)
		return r;
	for (size_t i = 0; i < l.n; i++)
		standard = standard || !strcasecmp(l.v[i], "X-Remote-Uid");
	strlist_clear(&l);
	if (!standard) {
		snprintf(err, errlen,
		         "--requestheader-uid-headers is set without specifying the standard "
		         "X-Remote-Uid header - API aggregation will not work");
		return -EINVAL;
	}
	return 0;
}

/* The extension-apiserver-authentication ConfigMap's JSON string arrays ("" or absent: empty). */
static int strlist_json(struct strlist *l, const cJSON *data, const char *key, char *err,
                        size_t errlen)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(data, key), *e;
	cJSON *a;

	strlist_clear(l);
	if (!cJSON_IsString(v) || !*v->valuestring)
		return 0;
	if (!(a = cJSON_Parse(v->valuestring)) || !cJSON_IsArray(a)) {
		snprintf(err, errlen,
		         "configmap/extension-apiserver-authentication: %s is not a JSON "
		         "array of strings",
		         key);
		cJSON_Delete(a);
		return -EINVAL;
	}
	cJSON_ArrayForEach(e, a)
	{
		if (!cJSON_IsString(e) ||
		    strlist_add(l, e->valuestring, strlen(e->valuestring)) < 0) {
			snprintf(err, errlen, "configmap/extension-apiserver-authentication: %s",
			         key);
			cJSON_Delete(a);
			return cJSON_IsString(e) ? -ENOMEM : -EINVAL;
		}
	}
	cJSON_Delete(a);
	return 0;
}

static int trust_from_pem(const char *pem, const char *what, gnutls_x509_trust_list_t *ret,
                          char *err, size_t errlen)
{
	gnutls_datum_t d = {.data = (unsigned char *)pem, .size = (unsigned)strlen(pem)};
	int n;

	if (gnutls_x509_trust_list_init(ret, 0) < 0)
		return -ENOMEM;
	n = gnutls_x509_trust_list_add_trust_mem(*ret, &d, NULL, GNUTLS_X509_FMT_PEM, 0, 0);
	if (n <= 0) {
		snprintf(err, errlen, "unable to load %s: no certificate in it%s%s", what,
		         n < 0 ? ": " : "", n < 0 ? gnutls_strerror(n) : "");
		gnutls_x509_trust_list_deinit(*ret, 1);
		*ret = NULL;
		return -EINVAL;
	}
	return 0;
}

/* One reading of the CAs' sources; NULL: that source has none. */
struct ca_set {
	char *client_pem, *rh_pem;
	/* with rh_pem from the ConfigMap, its request-header settings too */
	struct strlist rh_names, rh_user_hdrs, rh_uid_hdrs, rh_group_hdrs, rh_extra_prefixes;
};

static void ca_set_clear(struct ca_set *cs)
{
	free(cs->client_pem);
	free(cs->rh_pem);
	strlist_clear(&cs->rh_names);
	strlist_clear(&cs->rh_user_hdrs);
	strlist_clear(&cs->rh_uid_hdrs);
	strlist_clear(&cs->rh_group_hdrs);
	strlist_clear(&cs->rh_extra_prefixes);
	*cs = (struct ca_set){0};
}

/* kube-system/extension-apiserver-authentication into cs. 0, -ENOENT (no ConfigMap), or -errno
 * with err. Blocking: called at start and on the ConfigMap thread, never on the loop. */
static int cm_fetch(struct kube_config *cfg, struct ca_set *cs, char *err, size_t errlen)
{
	struct kube_client_opts ko = {.config = cfg,
	                              .process = "kcmd",
	                              .controller = "delegated-auth",
	                              .qps = 200,
	                              .burst = 400,
	                              .timeout_ms = 10000,
	                              .insecure_ok = true};
	struct kube_request req = {.verb = KUBE_GET,
	                           .version = "v1",
	                           .resource = "configmaps",
	                           .ns = "kube-system",
	                           .name = "extension-apiserver-authentication"};
	struct kube_response resp = {0};
	struct kube_client *c = NULL;
	const cJSON *data, *v;
	cJSON *cm = NULL;
	int r;

	*cs = (struct ca_set){0};
	if ((r = kube_client_new(&ko, &c)) < 0) {
		snprintf(err, errlen, "authentication lookup client: %s", strerror(-r));
		return r;
	}
	r = kube_client_request(c, &req, NULL, NULL, &resp);
	kube_client_free(c);
	if (r == -ENOENT) {
		kube_response_clear(&resp);
		return -ENOENT;
	}
	if (r < 0) {
		if (r == -EACCES)
			log_warning("Unable to get configmap/extension-apiserver-authentication in "
			            "kube-system.  Usually fixed by 'kubectl create rolebinding -n "
			            "kube-system ROLE_NAME "
			            "--role=extension-apiserver-authentication-reader "
			            "--serviceaccount=YOUR_NS:YOUR_SA'");
		snprintf(err, errlen,
		         "looking up configmap/extension-apiserver-authentication in kube-system: "
		         "%s%s%s",
		         strerror(-r), resp.body && resp.http_code ? ": " : "",
		         resp.body && resp.http_code ? resp.body : "");
		kube_response_clear(&resp);
		return r;
	}
	cm = cJSON_ParseWithLength(resp.body, resp.body_len);
	kube_response_clear(&resp);
	data = cm ? cJSON_GetObjectItemCaseSensitive(cm, "data") : NULL;
	if ((v = cJSON_GetObjectItemCaseSensitive(data, "client-ca-file")) && cJSON_IsString(v) &&
	    *v->valuestring && !(cs->client_pem = strdup(v->valuestring)))
		r = -ENOMEM;
	if (r == 0 &&
	    (v = cJSON_GetObjectItemCaseSensitive(data, "requestheader-client-ca-file")) &&
	    cJSON_IsString(v) && *v->valuestring) {
		/* kcm takes the whole request-header configuration from the ConfigMap then */
		if (!(cs->rh_pem = strdup(v->valuestring)))
			r = -ENOMEM;
		if (r == 0)
			r = strlist_json(&cs->rh_user_hdrs, data, "requestheader-username-headers",
			                 err, errlen);
		if (r == 0)
			r = strlist_json(&cs->rh_uid_hdrs, data, "requestheader-uid-headers", err,
			                 errlen);
		if (r == 0)
			r = strlist_json(&cs->rh_group_hdrs, data, "requestheader-group-headers",
			                 err, errlen);
		if (r == 0)
			r = strlist_json(&cs->rh_extra_prefixes, data,
			                 "requestheader-extra-headers-prefix", err, errlen);
		if (r == 0)
			r = strlist_json(&cs->rh_names, data, "requestheader-allowed-names", err,
			                 errlen);
	}
	cJSON_Delete(cm);
	if (r < 0) {
		ca_set_clear(cs);
		if (!err[0])
			snprintf(err, errlen, "authentication lookup: %s", strerror(-r));
	}
	return r;
}

/* Moves the request-header part of a reading into h's (or another reading's) fields. */
static void rh_take(struct strlist *dst[5], struct ca_set *src)
{
	struct strlist *from[5] = {&src->rh_names, &src->rh_user_hdrs, &src->rh_uid_hdrs,
	                           &src->rh_group_hdrs, &src->rh_extra_prefixes};
	for (int i = 0; i < 5; i++) {
		strlist_clear(dst[i]);
		*dst[i] = *from[i];
		*from[i] = (struct strlist){0};
	}
}

#define H_RH_LISTS(h)                                                                              \
	(struct strlist *[5])                                                                      \
	{                                                                                          \
		&(h)->rh_names, &(h)->rh_user_hdrs, &(h)->rh_uid_hdrs, &(h)->rh_group_hdrs,        \
		        &(h)->rh_extra_prefixes                                                    \
	}

/* kcm's lookupMissingConfigInCluster: the CAs not given as flags from
 * kube-system/extension-apiserver-authentication (read again every minute afterwards: "CA
 * reload"). 0 or -errno with err. */
static int lookup_in_cluster(struct mgr_httpd *h, char *err, size_t errlen)
{
	struct ca_set cs;
	int r = cm_fetch(h->authn.cfg, &cs, err, errlen);

	if (r < 0 && r != -ENOENT)
		return r;
	if (!h->client_ca_pem && cs.client_pem) {
		h->client_ca_pem = cs.client_pem;
		cs.client_pem = NULL;
	}
	if (!h->rh_ca_pem && cs.rh_pem) {
		h->rh_ca_pem = cs.rh_pem;
		cs.rh_pem = NULL;
		rh_take(H_RH_LISTS(h), &cs);
	}
	ca_set_clear(&cs);
	if (!h->client_ca_pem)
		log_warning(
		        "Cluster doesn't provide client-ca-file in "
		        "configmap/extension-apiserver-authentication in kube-system, so client "
		        "certificate authentication won't work.");
	if (!h->rh_ca_pem)
		log_warning("Cluster doesn't provide requestheader-client-ca-file in "
		            "configmap/extension-apiserver-authentication in kube-system, so "
		            "request-header client certificate authentication won't work.");
	return 0;
}

/* The client-certificate authenticators: --client-ca-file and --requestheader-*, the rest
 * looked up in the cluster unless --authentication-skip-lookup. */
static int cert_auth_setup(struct mgr_httpd *h, const struct mgr_httpd_auth_opts *o, char *err,
                           size_t errlen)
{
	struct mgr_httpd_auth_opts def;
	int r;

	mgr_httpd_auth_defaults(&def);
	if (!o)
		o = &def;
	if ((r = check_uid_headers(o, err, errlen)) < 0)
		return r;
	if (o->client_ca_file && *o->client_ca_file &&
	    (r = read_file(o->client_ca_file, &h->client_ca_pem)) < 0) {
		snprintf(err, errlen, "unable to load client CA file %s: %s", o->client_ca_file,
		         strerror(-r));
		return r;
	}
	if (o->requestheader_client_ca_file && *o->requestheader_client_ca_file) {
		if ((r = read_file(o->requestheader_client_ca_file, &h->rh_ca_pem)) < 0) {
			snprintf(err, errlen, "unable to load client CA file %s: %s",
			         o->requestheader_client_ca_file, strerror(-r));
			return r;
		}
		if ((r = strlist_csv(&h->rh_user_hdrs, o->requestheader_username_headers, true,
		                     "requestheader-username-headers", err, errlen)) < 0 ||
		    (r = strlist_csv(&h->rh_uid_hdrs, o->requestheader_uid_headers, true,
		                     "requestheader-uid-headers", err, errlen)) < 0 ||
		    (r = strlist_csv(&h->rh_group_hdrs, o->requestheader_group_headers, true,
		                     "requestheader-group-headers", err, errlen)) < 0 ||
		    (r = strlist_csv(&h->rh_extra_prefixes, o->requestheader_extra_prefixes, true,
		                     "requestheader-extra-headers-prefix", err, errlen)) < 0 ||
		    (r = strlist_csv(&h->rh_names, o->requestheader_allowed_names, false,
		                     "requestheader-allowed-names", err, errlen)) < 0)
			return r;
	}
	if (o->client_ca_file && *o->client_ca_file &&
	    !(h->client_ca_path = strdup(o->client_ca_file)))
		return -ENOMEM;
	if (o->requestheader_client_ca_file && *o->requestheader_client_ca_file &&
	    !(h->rh_ca_path = strdup(o->requestheader_client_ca_file)))
		return -ENOMEM;
	/* kcm: a CA not given as a file comes from the ConfigMap, followed while it runs */
	h->client_from_cm = !h->client_ca_path && !o->skip_lookup && h->authn.cfg;
	h->rh_from_cm = !h->rh_ca_path && !o->skip_lookup && h->authn.cfg;
	if (!o->skip_lookup && (!h->client_ca_pem || !h->rh_ca_pem)) {
		if (!h->authn.cfg) {
			if (!h->client_ca_pem)
				log_warning(
				        "No authentication-kubeconfig provided in order to lookup "
				        "client-ca-file in "
				        "configmap/extension-apiserver-authentication in "
				        "kube-system, "
				        "so client certificate authentication won't work.");
			if (!h->rh_ca_pem)
				log_warning(
				        "No authentication-kubeconfig provided in order to lookup "
				        "requestheader-client-ca-file in "
				        "configmap/extension-apiserver-authentication in "
				        "kube-system, "
				        "so request-header client certificate authentication won't "
				        "work.");
		} else if ((r = lookup_in_cluster(h, err, errlen)) < 0) {
			if (!o->tolerate_lookup_failure)
				return r;
			log_warning("Error looking up in-cluster authentication configuration: %s",
			            err);
			log_warning(
			        "Continuing without authentication configuration. This may treat "
			        "all requests as anonymous.");
			log_warning(
			        "To require authentication configuration lookup to succeed, set "
			        "--authentication-tolerate-lookup-failure=false");
			err[0] = '\0';
		}
	}
	if (h->client_ca_pem && (r = trust_from_pem(h->client_ca_pem, "client CA file",
	                                            &h->client_tl, err, errlen)) < 0)
		return r;
	if (h->rh_ca_pem && (r = trust_from_pem(h->rh_ca_pem, "requestheader client CA file",
	                                        &h->rh_tl, err, errlen)) < 0)
		return r;
	if (h->client_ca_pem || h->rh_ca_pem) {
		size_t a = h->client_ca_pem ? strlen(h->client_ca_pem) : 0,
		       b = h->rh_ca_pem ? strlen(h->rh_ca_pem) : 0;
		if (!(h->trust_pem = malloc(a + b + 2)))
			return -ENOMEM;
		snprintf(h->trust_pem, a + b + 2, "%s\n%s",
		         h->client_ca_pem ? h->client_ca_pem : "",
		         h->rh_ca_pem ? h->rh_ca_pem : "");
	}
	size_t sl = strlen(h->summary);
	snprintf(h->summary + sl, sizeof(h->summary) - sl,
	         "; client certificates: %s; request headers: %s",
	         h->client_tl ? "verified with the client CA" : "none",
	         h->rh_tl && h->rh_user_hdrs.n ? "from a front proxy's verified certificate"
	                                       : "none");
	return 0;
}

/* ---- CA reload ------------------------------------------------------------------------------
 * kcm's dynamic CA content: the --client-ca-file and --requestheader-client-ca-file files are
 * watched (inotify on their folders, where a Secret volume's symlink swap shows too) and read
 * again every minute; the CAs looked up in kube-system/extension-apiserver-authentication are
 * read again every minute, on a thread of their own (the loop never waits for the apiserver).
 * A change gets new trust lists and new TLS credentials for the connections that open after it
 * (their CertificateRequest names the new CAs: a Go client picks its certificate by them);
 * open connections keep theirs. Content with no certificate, an unreadable file or a failed
 * lookup keeps the CAs in force, with an error in the log (kcm's controllers do the same). */
#define CA_REFRESH_US (60ull * 1000000) /* kcm's FileRefreshDuration */

struct tls_cred {
	gnutls_certificate_credentials_t c;
	unsigned refs; /* open connections using it, + 1 while it is h->cred */
};

static void cred_put(struct tls_cred *tc)
{
	if (tc && --tc->refs == 0) {
		gnutls_certificate_free_credentials(tc->c);
		free(tc);
	}
}

/* A serving pair (the key must match the certificate) and trust_pem (the CAs a
 * CertificateRequest names). */
static int cred_new_pair(const char *cert_pem, const char *key_pem, const char *trust_pem,
                         struct tls_cred **ret)
{
	struct tls_cred *tc = calloc(1, sizeof(*tc));
	gnutls_datum_t cert = {(unsigned char *)cert_pem, (unsigned)strlen(cert_pem)},
	               key = {(unsigned char *)key_pem, (unsigned)strlen(key_pem)};

	if (!tc)
		return -ENOMEM;
	if (gnutls_certificate_allocate_credentials(&tc->c) < 0) {
		free(tc);
		return -ENOMEM;
	}
	if (gnutls_certificate_set_x509_key_mem(tc->c, &cert, &key, GNUTLS_X509_FMT_PEM) < 0)
		goto fail;
	if (trust_pem) {
		gnutls_datum_t t = {(unsigned char *)trust_pem, (unsigned)strlen(trust_pem)};
		if (gnutls_certificate_set_x509_trust_mem(tc->c, &t, GNUTLS_X509_FMT_PEM) < 0)
			goto fail;
	}
	tc->refs = 1;
	*ret = tc;
	return 0;
fail:
	gnutls_certificate_free_credentials(tc->c);
	free(tc);
	return -EINVAL;
}

static int cred_new(const struct mgr_httpd *h, const char *trust_pem, struct tls_cred **ret)
{
	return cred_new_pair(h->cert_pem, h->key_pem, trust_pem, ret);
}

/* MHD_OPTION_NOTIFY_CONNECTION: a new connection's TLS session gets the credentials in force. */
static void on_conn(void *cls, struct MHD_Connection *c, void **socket_context,
                    enum MHD_ConnectionNotificationCode code)
{
	struct mgr_httpd *h = cls;
	const union MHD_ConnectionInfo *ci;
	struct tls_cred *tc;

	if (code != MHD_CONNECTION_NOTIFY_STARTED) {
		cred_put(*socket_context);
		*socket_context = NULL;
		return;
	}
	*socket_context = NULL;
	if (!(tc = h->cred) ||
	    !(ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION)) ||
	    !ci->tls_session)
		return;
	gnutls_session_t session = (gnutls_session_t)ci->tls_session;
	if (gnutls_credentials_set(session, GNUTLS_CRD_CERTIFICATE, tc->c) < 0)
		return; /* MHD's own (the CAs of the start) stay */
	if (h->trust_pem)
		gnutls_certificate_server_set_request(session, GNUTLS_CERT_REQUEST);
	tc->refs++;
	*socket_context = tc;
}

static bool str_same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static bool strlist_same(const struct strlist *a, const struct strlist *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]))
			return false;
	return true;
}

static int strlist_copy(struct strlist *dst, const struct strlist *src)
{
	strlist_clear(dst);
	for (size_t i = 0; i < src->n; i++)
		if (strlist_add(dst, src->v[i], strlen(src->v[i])) < 0)
			return -ENOMEM;
	return 0;
}

/* The CAs in force, with the files read again (files) and the ConfigMap's reading (cm, or
 * NULL) taken where they are the source. 0, or -errno (logged) when a file cannot be read. */
static int ca_candidate(struct mgr_httpd *h, bool files, struct ca_set *cm, struct ca_set *out)
{
	struct strlist *mine[5] = {&out->rh_names, &out->rh_user_hdrs, &out->rh_uid_hdrs,
	                           &out->rh_group_hdrs, &out->rh_extra_prefixes};
	struct strlist *cur[5] = {&h->rh_names, &h->rh_user_hdrs, &h->rh_uid_hdrs,
	                          &h->rh_group_hdrs, &h->rh_extra_prefixes};
	const char *paths[2] = {files ? h->client_ca_path : NULL, files ? h->rh_ca_path : NULL};
	char **pems[2] = {&out->client_pem, &out->rh_pem};
	int r;

	*out = (struct ca_set){0};
	if ((h->client_ca_pem && !(out->client_pem = strdup(h->client_ca_pem))) ||
	    (h->rh_ca_pem && !(out->rh_pem = strdup(h->rh_ca_pem))))
		goto nomem;
	for (int i = 0; i < 5; i++)
		if (strlist_copy(mine[i], cur[i]) < 0)
			goto nomem;
	for (int i = 0; i < 2; i++) {
		char *pem;
		if (!paths[i])
			continue;
		if ((r = read_file(paths[i], &pem)) < 0) {
			log_error("Failed to reload the %s file %s: %s (the CAs in force stay)",
			          i ? "requestheader client CA" : "client CA", paths[i],
			          strerror(-r));
			ca_set_clear(out);
			return r;
		}
		free(*pems[i]);
		*pems[i] = pem;
	}
	if (cm && h->client_from_cm && cm->client_pem) {
		free(out->client_pem);
		if (!(out->client_pem = strdup(cm->client_pem)))
			goto nomem;
	}
	if (cm && h->rh_from_cm && cm->rh_pem) {
		free(out->rh_pem);
		if (!(out->rh_pem = strdup(cm->rh_pem)))
			goto nomem;
		for (int i = 0; i < 5; i++)
			if (strlist_copy(mine[i], (const struct strlist *[5]){
			                                  &cm->rh_names, &cm->rh_user_hdrs,
			                                  &cm->rh_uid_hdrs, &cm->rh_group_hdrs,
			                                  &cm->rh_extra_prefixes}[i]) < 0)
				goto nomem;
	}
	return 0;
nomem:
	ca_set_clear(out);
	return -ENOMEM;
}

/* Puts nw in force when it differs from what is: 1 changed, 0 the same, -errno refused (the CAs
 * in force stay; logged). nw is consumed. */
static int ca_apply(struct mgr_httpd *h, struct ca_set *nw)
{
	gnutls_x509_trust_list_t ctl = NULL, rtl = NULL;
	struct tls_cred *tc = NULL;
	char *trust = NULL, err[256] = "";
	struct strlist *cur[5] = {&h->rh_names, &h->rh_user_hdrs, &h->rh_uid_hdrs,
	                          &h->rh_group_hdrs, &h->rh_extra_prefixes};
	struct strlist *mine[5] = {&nw->rh_names, &nw->rh_user_hdrs, &nw->rh_uid_hdrs,
	                           &nw->rh_group_hdrs, &nw->rh_extra_prefixes};
	bool same =
	        str_same(h->client_ca_pem, nw->client_pem) && str_same(h->rh_ca_pem, nw->rh_pem);
	int r = 0;

	for (int i = 0; i < 5 && same; i++)
		same = strlist_same(cur[i], mine[i]);
	if (same) {
		ca_set_clear(nw);
		return 0;
	}
	if ((nw->client_pem &&
	     (r = trust_from_pem(nw->client_pem, "client CA file", &ctl, err, sizeof(err))) < 0) ||
	    (nw->rh_pem && (r = trust_from_pem(nw->rh_pem, "requestheader client CA file", &rtl,
	                                       err, sizeof(err))) < 0)) {
		log_error("Not reloading the CAs: %s (the CAs in force stay)", err);
		goto out;
	}
	if ((nw->client_pem || nw->rh_pem) &&
	    asprintf(&trust, "%s\n%s", nw->client_pem ? nw->client_pem : "",
	             nw->rh_pem ? nw->rh_pem : "") < 0) {
		trust = NULL;
		r = -ENOMEM;
		goto out;
	}
	if (h->cred && (r = cred_new(h, trust, &tc)) < 0) {
		log_error("Not reloading the CAs: TLS credentials: %s (the CAs in force stay)",
		          strerror(-r));
		goto out;
	}
	log_info("Loaded a new CA bundle and verifier: client CA %s, requestheader client CA %s",
	         str_same(h->client_ca_pem, nw->client_pem) ? "unchanged" : "changed",
	         str_same(h->rh_ca_pem, nw->rh_pem) ? "unchanged" : "changed");
	/* swap: the old ones go (the loop is the only user of the trust lists) */
	if (h->client_tl)
		gnutls_x509_trust_list_deinit(h->client_tl, 1);
	if (h->rh_tl)
		gnutls_x509_trust_list_deinit(h->rh_tl, 1);
	h->client_tl = ctl, h->rh_tl = rtl, ctl = rtl = NULL;
	free(h->client_ca_pem);
	free(h->rh_ca_pem);
	free(h->trust_pem);
	h->client_ca_pem = nw->client_pem, h->rh_ca_pem = nw->rh_pem, h->trust_pem = trust;
	nw->client_pem = nw->rh_pem = NULL, trust = NULL;
	rh_take(cur, nw);
	if (tc) {
		cred_put(h->cred); /* freed when its last connection closes */
		h->cred = tc, tc = NULL;
	}
	__atomic_add_fetch(&h->ca_reloads, 1, __ATOMIC_RELAXED); /* read by tests off the loop */
	r = 1;
out:
	if (ctl)
		gnutls_x509_trust_list_deinit(ctl, 1);
	if (rtl)
		gnutls_x509_trust_list_deinit(rtl, 1);
	free(trust);
	ca_set_clear(nw);
	return r;
}

/* kcm's dynamic serving content: --tls-cert-file and --tls-private-key-file read again; a pair
 * whose key matches its certificate is served to the connections that open after it. A
 * half-written rotation (the certificate new, the key not yet) is refused until both are. */
static void serving_reload(struct mgr_httpd *h)
{
	char *cert = NULL, *key = NULL;
	struct tls_cred *tc = NULL;
	int r;

	if (!h->tls_cert_path || !h->cred)
		return;
	if ((r = read_file(h->tls_cert_path, &cert)) < 0 ||
	    (r = read_file(h->tls_key_path, &key)) < 0) {
		log_error("Failed to reload the serving certificate %s / %s: %s (the one in use "
		          "stays)",
		          h->tls_cert_path, h->tls_key_path, strerror(-r));
		goto out;
	}
	if (str_same(cert, h->cert_pem) && str_same(key, h->key_pem))
		goto out;
	if ((r = cred_new_pair(cert, key, h->trust_pem, &tc)) < 0) {
		log_error(
		        "Not reloading the serving certificate %s: the key %s does not match it or "
		        "one of them is not PEM (the one in use stays)",
		        h->tls_cert_path, h->tls_key_path);
		goto out;
	}
	log_info("Loaded a new cert/key pair from %s and %s", h->tls_cert_path, h->tls_key_path);
	free(h->cert_pem);
	explicit_bzero(h->key_pem, strlen(h->key_pem));
	free(h->key_pem);
	h->cert_pem = cert, h->key_pem = key, cert = key = NULL;
	cred_put(h->cred);
	h->cred = tc;
	__atomic_add_fetch(&h->cert_reloads, 1, __ATOMIC_RELAXED);
out:
	free(cert);
	if (key) {
		explicit_bzero(key, strlen(key));
		free(key);
	}
}

static void ca_reload_files(struct mgr_httpd *h)
{
	struct ca_set nw;

	if ((h->client_ca_path || h->rh_ca_path) && ca_candidate(h, true, NULL, &nw) == 0)
		ca_apply(h, &nw);
	serving_reload(h);
}

static int on_ca_timer(struct ipc_source *s, uint64_t now, void *userdata)
{
	struct mgr_httpd *h = userdata;

	ca_reload_files(h);
	return ipc_source_set_time(s, now + CA_REFRESH_US);
}

static int on_ino(struct ipc_source *s, int fd, uint32_t revents, void *userdata)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	(void)s;
	(void)revents;
	while (read(fd, buf, sizeof(buf)) > 0)
		; /* which file does not matter: both are read again, a same content is no change */
	ca_reload_files(userdata);
	return 0;
}

/* The ConfigMap thread: a reading every CA_REFRESH_US, handed to the loop through cm_efd. */
static void *cm_thread(void *arg)
{
	struct mgr_httpd *h = arg;

	pthread_mutex_lock(&h->mu);
	while (!h->cm_stop) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += (time_t)(CA_REFRESH_US / 1000000);
		while (!h->cm_stop && pthread_cond_timedwait(&h->cm_cv, &h->mu, &ts) != ETIMEDOUT)
			;
		if (h->cm_stop)
			break;
		pthread_mutex_unlock(&h->mu);
		struct ca_set *cs = calloc(1, sizeof(*cs));
		char err[512] = "";
		int r = cs ? cm_fetch(h->authn.cfg, cs, err, sizeof(err)) : -ENOMEM;
		if (r < 0) {
			if (r != -ENOENT)
				log_error("Reloading the CAs of configmap/extension-apiserver-"
				          "authentication: %s (the CAs in force stay)",
				          err[0] ? err : strerror(-r));
			free(cs);
			cs = NULL;
		}
		pthread_mutex_lock(&h->mu);
		if (cs) {
			if (h->cm_result) {
				ca_set_clear(h->cm_result);
				free(h->cm_result);
			}
			h->cm_result = cs;
			uint64_t one = 1;
			if (write(h->cm_efd, &one, sizeof(one)) < 0)
				log_warning("ConfigMap thread: eventfd: %s", strerror(errno));
		}
	}
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

static int on_cm(struct ipc_source *s, int fd, uint32_t revents, void *userdata)
{
	struct mgr_httpd *h = userdata;
	struct ca_set *cm, nw;
	uint64_t v;

	(void)s;
	(void)revents;
	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return 0;
	pthread_mutex_lock(&h->mu);
	cm = h->cm_result;
	h->cm_result = NULL;
	pthread_mutex_unlock(&h->mu);
	if (!cm)
		return 0;
	if (ca_candidate(h, false, cm, &nw) == 0)
		ca_apply(h, &nw);
	ca_set_clear(cm);
	free(cm);
	return 0;
}

/* Starts following the CAs' sources (after the server started). Failures to watch are logged:
 * the minute's reading still runs. */
static int ca_reload_start(struct mgr_httpd *h)
{
	const char *paths[4] = {h->client_ca_path, h->rh_ca_path, h->tls_cert_path,
	                        h->tls_key_path};
	int r;

	if (!h->cred)
		return 0;
	if (h->client_ca_path || h->rh_ca_path || h->tls_cert_path) {
		if ((h->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0)
			log_warning("inotify: %s: the CA and serving files are read again every "
			            "minute only",
			            strerror(errno));
		for (int i = 0; i < 4 && h->ino_fd >= 0; i++) {
			char *dir;
			if (!paths[i] || !(dir = strdup(paths[i])))
				continue;
			char *slash = strrchr(dir, '/');
			const char *d = !slash ? "." : slash == dir ? "/" : (*slash = 0, dir);
			if (inotify_add_watch(h->ino_fd, d, IN_CLOSE_WRITE | IN_MOVED_TO) < 0)
				log_warning("inotify on %s: %s: %s is read again every minute only",
				            d, strerror(errno), paths[i]);
			free(dir);
		}
		if (h->ino_fd >= 0 &&
		    (r = ipc_loop_add_io(h->loop, &h->ino_src, h->ino_fd, POLLIN, on_ino, h)) < 0)
			return r;
		if ((r = ipc_loop_add_timer(h->loop, &h->ca_timer, ipc_now_usec() + CA_REFRESH_US,
		                            on_ca_timer, h)) < 0)
			return r;
	}
	if (h->client_from_cm || h->rh_from_cm) {
		if ((h->cm_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
			return -errno;
		if ((r = ipc_loop_add_io(h->loop, &h->cm_src, h->cm_efd, POLLIN, on_cm, h)) < 0)
			return r;
		if ((r = pthread_create(&h->cm_th, NULL, cm_thread, h)) != 0)
			return -r;
		h->cm_started = true;
	}
	return 0;
}

static void ca_reload_stop(struct mgr_httpd *h)
{
	if (h->cm_started) {
		pthread_mutex_lock(&h->mu);
		h->cm_stop = true;
		pthread_cond_signal(&h->cm_cv);
		pthread_mutex_unlock(&h->mu);
		pthread_join(h->cm_th, NULL);
		h->cm_started = false;
	}
	if (h->cm_result) {
		ca_set_clear(h->cm_result);
		free(h->cm_result);
		h->cm_result = NULL;
	}
	ipc_source_free(h->cm_src);
	ipc_source_free(h->ino_src);
	ipc_source_free(h->ca_timer);
	h->cm_src = h->ino_src = h->ca_timer = NULL;
	if (h->cm_efd >= 0)
		close(h->cm_efd);
	if (h->ino_fd >= 0)
		close(h->ino_fd);
	h->cm_efd = h->ino_fd = -1;
}

uint64_t mgr_httpd_ca_reloads(const struct mgr_httpd *h)
{
	return __atomic_load_n(&h->ca_reloads, __ATOMIC_RELAXED);
}

uint64_t mgr_httpd_cert_reloads(const struct mgr_httpd *h)
{
	return __atomic_load_n(&h->cert_reloads, __ATOMIC_RELAXED);
}

const char *mgr_httpd_auth_summary(const struct mgr_httpd *h)
{
	return h->summary;
}

void mgr_httpd_auth_stats(const struct mgr_httpd *h, struct mgr_httpd_auth_stats *ret)
{
	*ret = h->stats;
}

int mgr_httpd_new(struct ipc_loop *loop, const struct mgr_httpd_config *cfg, struct mgr_httpd **ret,
                  char *err, size_t errlen)
{
	struct mgr_httpd *h = calloc(1, sizeof(*h));
	struct sockaddr_storage ss = {0};
	unsigned flags = MHD_USE_EPOLL;
	const union MHD_DaemonInfo *info;
	int r;

	if (!h)
		return -ENOMEM;
	h->loop = loop;
	h->render_efd = h->ino_fd = h->cm_efd = -1;
	pthread_mutex_init(&h->mu, NULL);
	{
		pthread_condattr_t ca;
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&h->cm_cv, &ca);
		pthread_condattr_destroy(&ca);
	}
	pthread_cond_init(&h->cv, NULL);
	if (inet_pton(AF_INET, cfg->bind_address, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		((struct sockaddr_in *)&ss)->sin_family = AF_INET;
		((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)cfg->port);
	} else if (inet_pton(AF_INET6, cfg->bind_address,
	                     &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		((struct sockaddr_in6 *)&ss)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)&ss)->sin6_port = htons((uint16_t)cfg->port);
		flags |= MHD_USE_IPv6;
	} else {
		snprintf(err, errlen, "--bind-address %s is not an IP address", cfg->bind_address);
		free(h);
		return -EINVAL;
	}
	if (!cfg->plain_http) {
		if ((r = load_or_make_cert(h, cfg, err, errlen)) < 0) {
			mgr_httpd_free(h);
			return r;
		}
		flags |= MHD_USE_TLS;
	}
	unsigned timeout = cfg->conn_timeout_s ? cfg->conn_timeout_s : 30;
	flags |= MHD_ALLOW_SUSPEND_RESUME;
	if ((r = auth_setup(h, cfg->auth, err, errlen)) < 0) {
		mgr_httpd_free(h);
		return r;
	}
	if (!cfg->plain_http && (r = cert_auth_setup(h, cfg->auth, err, errlen)) < 0) {
		mgr_httpd_free(h);
		return r;
	}
	if (!cfg->plain_http && (r = cred_new(h, h->trust_pem, &h->cred)) < 0) {
		snprintf(err, errlen,
		         "TLS credentials: the serving certificate or a CA is invalid");
		mgr_httpd_free(h);
		return r;
	}
	{
		struct MHD_OptionItem ops[16];
		size_t n = 0;
#define OPT(o, v, p) (ops[n++] = (struct MHD_OptionItem){(o), (intptr_t)(v), (p)})
		OPT(MHD_OPTION_SOCK_ADDR, 0, &ss);
		OPT(MHD_OPTION_CONNECTION_TIMEOUT, timeout, NULL);
		OPT(MHD_OPTION_CONNECTION_LIMIT, 64, NULL);
		OPT(MHD_OPTION_PER_IP_CONNECTION_LIMIT, MGR_HTTPD_PER_IP, NULL);
		OPT(MHD_OPTION_NOTIFY_COMPLETED, completed, h);
		if (!cfg->plain_http)
			OPT(MHD_OPTION_NOTIFY_CONNECTION, on_conn, h);
		if (!cfg->plain_http) {
			OPT(MHD_OPTION_HTTPS_MEM_CERT, 0, h->cert_pem);
			OPT(MHD_OPTION_HTTPS_MEM_KEY, 0, h->key_pem);
			OPT(MHD_OPTION_HTTPS_PRIORITIES, 0,
			    (void *)(cfg->tls13_only ? MGR_HTTPD_TLS13_PRIORITY
			                             : MGR_HTTPD_TLS_PRIORITY));
			if (h->trust_pem) /* MHD then asks for (does not require) a client
			                     certificate; each authenticator verifies it with its CA
			                   */
				OPT(MHD_OPTION_HTTPS_MEM_TRUST, 0, h->trust_pem);
		}
		OPT(MHD_OPTION_END, 0, NULL);
#undef OPT
		h->d = MHD_start_daemon(flags, (uint16_t)cfg->port, NULL, NULL, handler, h,
		                        MHD_OPTION_ARRAY, ops, MHD_OPTION_END);
	}
	if (!h->d) {
		snprintf(err, errlen,
		         "cannot serve on %s:%d (address in use, or a bad certificate)",
		         cfg->bind_address, cfg->port);
		mgr_httpd_free(h);
		return -EADDRINUSE;
	}
	info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
	h->port = info ? info->port : cfg->port;
	info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_EPOLL_FD);
	if (!info || (r = ipc_loop_add_io(loop, &h->io, info->epoll_fd, POLLIN, on_io, h)) < 0 ||
	    (r = ipc_loop_add_timer(loop, &h->timer, 0, on_timer, h)) < 0) {
		snprintf(err, errlen, "attaching the HTTPS server to the event loop failed");
		mgr_httpd_free(h);
		return -EIO;
	}
	if ((r = ca_reload_start(h)) < 0) {
		snprintf(err, errlen, "following the client CAs: %s", strerror(-r));
		mgr_httpd_free(h);
		return r;
	}
	*ret = h;
	return 0;
}

struct mgr_httpd *mgr_httpd_free(struct mgr_httpd *h)
{
	if (!h)
		return NULL;
	/* reviews in flight end now (their connections resume with a 503), the render thread
	 * finishes its current job, then MHD closes every connection */
	while (h->inflight) {
		struct hreq *q = h->inflight;
		if (q->call)
			kube_call_cancel(q->call); /* its done callback takes it off the list */
		else
			inflight_del(q);
	}
	if (h->render_started) {
		pthread_mutex_lock(&h->mu);
		h->render_stop = true;
		pthread_cond_signal(&h->cv);
		pthread_mutex_unlock(&h->mu);
		pthread_join(h->render_th, NULL);
		/* queued and finished jobs: their connections are resumed to be closed */
		for (struct hreq *q = h->render_todo; q; q = q->job_next)
			q->stage = ST_RENDERED, q->r_rc = -ECANCELED, resume(q);
		for (struct hreq *q = h->render_done; q; q = q->job_next)
			q->stage = ST_RENDERED, resume(q);
	}
	ipc_source_free(h->render_src);
	if (h->render_efd >= 0)
		close(h->render_efd);
	ipc_source_free(h->io);
	ipc_source_free(h->timer);
	h->timer = NULL;
	ca_reload_stop(h);
	if (h->d)
		MHD_stop_daemon(h->d); /* closes the connections: their credentials are put */
	cred_put(h->cred);
	pthread_cond_destroy(&h->cm_cv);
	free(h->client_ca_path);
	free(h->rh_ca_path);
	free(h->tls_cert_path);
	free(h->tls_key_path);
	reviewer_free(&h->authn);
	reviewer_free(&h->authz);
	cache_clear(h->token_cache);
	cache_clear(h->access_cache);
	for (size_t i = 0; i < h->n_allow; i++)
		free(h->allow_paths[i]);
	free(h->allow_paths);
	free(h->allow_prefix);
	pthread_mutex_destroy(&h->mu);
	pthread_cond_destroy(&h->cv);
	for (size_t i = 0; i < h->n_checks; i++)
		free(h->checks[i].name);
	for (size_t i = 0; i < h->n_handlers; i++) {
		free(h->handlers[i].path);
		free(h->handlers[i].arg);
	}
	free(h->checks);
	free(h->cert_pem);
	free(h->client_ca_pem);
	free(h->rh_ca_pem);
	free(h->trust_pem);
	if (h->client_tl)
		gnutls_x509_trust_list_deinit(h->client_tl, 1);
	if (h->rh_tl)
		gnutls_x509_trust_list_deinit(h->rh_tl, 1);
	strlist_clear(&h->rh_names);
	strlist_clear(&h->rh_user_hdrs);
	strlist_clear(&h->rh_uid_hdrs);
	strlist_clear(&h->rh_group_hdrs);
	strlist_clear(&h->rh_extra_prefixes);
	if (h->key_pem) {
		explicit_bzero(h->key_pem, strlen(h->key_pem));
		free(h->key_pem);
	}
	free(h);
	return NULL;
}

int mgr_httpd_port(const struct mgr_httpd *h)
{
	return h->port;
}

int mgr_httpd_add_check(struct mgr_httpd *h, const char *name, unsigned where, mgr_health_fn fn,
                        void *userdata)
{
	struct check *n = realloc(h->checks, (h->n_checks + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	h->checks = n;
	n[h->n_checks].name = strdup(name);
	if (!n[h->n_checks].name)
		return -ENOMEM;
	n[h->n_checks].where = where;
	n[h->n_checks].fn = fn;
	n[h->n_checks].userdata = userdata;
	h->n_checks++;
	return 0;
}

int mgr_httpd_add_handler(struct mgr_httpd *h, const char *path, const char *arg, mgr_handler_fn fn,
                          void *userdata)
{
	size_t i = h->n_handlers;

	if (i >= sizeof(h->handlers) / sizeof(h->handlers[0]))
		return -ENOSPC;
	h->handlers[i].path = strdup(path);
	h->handlers[i].arg = arg ? strdup(arg) : NULL;
	if (!h->handlers[i].path || (arg && !h->handlers[i].arg)) {
		free(h->handlers[i].path);
		free(h->handlers[i].arg);
		return -ENOMEM;
	}
	h->handlers[i].fn = fn;
	h->handlers[i].userdata = userdata;
	h->n_handlers++;
	return 0;
}

void mgr_httpd_set_metrics(struct mgr_httpd *h, mgr_metrics_fn fn, void *userdata)
{
	h->metrics = fn;
	h->metrics_userdata = userdata;
}

void mgr_httpd_set_zpages(struct mgr_httpd *h, mgr_zpage_fn fn, void *userdata)
{
	h->zpage = fn;
	h->zpage_userdata = userdata;
}
