/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manager/httpd.c: health and metrics over HTTPS with libmicrohttpd inside the event loop
 * (see httpd.h).
 */
#include "manager/httpd.h"

#include <arpa/inet.h>
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ipc/loop.h"

struct check {
	char *name;
	unsigned where;
	mgr_health_fn fn;
	void *userdata;
};

struct mgr_httpd {
	struct ipc_loop *loop;
	struct MHD_Daemon *d;
	struct ipc_source *io, *timer;
	int port;
	struct check *checks;
	size_t n_checks;
	mgr_metrics_fn metrics;
	void *metrics_userdata;
	struct {
		char *path, *arg;
		mgr_handler_fn fn;
		void *userdata;
	} handlers[8];
	size_t n_handlers;
	char *cert_pem, *key_pem;
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
	struct mgr_metrics_buf b = { 0 };

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
	if (fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 || n > (1 << 20) || fseek(f, 0, SEEK_SET) < 0) {
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
	unsigned char lo4[4] = { 127, 0, 0, 1 }, lo6[16] = { [15] = 1 };
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
	    gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, cn, strlen(cn)) < 0 ||
	    gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_DNSNAME, "localhost", 9, GNUTLS_FSAN_APPEND) < 0 ||
	    gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_DNSNAME, host, strlen(host), GNUTLS_FSAN_APPEND) < 0 ||
	    gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, lo4, 4, GNUTLS_FSAN_APPEND) < 0 ||
	    gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, lo6, 16, GNUTLS_FSAN_APPEND) < 0 ||
	    gnutls_x509_crt_set_key(crt, key) < 0 || gnutls_x509_crt_set_basic_constraints(crt, 0, -1) < 0 ||
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
			snprintf(err, errlen, "reading --tls-cert-file %s: %s", cfg->tls_cert_file, strerror(-r));
			return r;
		}
		if ((r = read_file(cfg->tls_key_file, &h->key_pem)) < 0) {
			snprintf(err, errlen, "reading --tls-private-key-file %s: %s", cfg->tls_key_file, strerror(-r));
			return r;
		}
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
		if ((r = write_file(kpath, h->key_pem, 0600)) < 0 || (r = write_file(cpath, h->cert_pem, 0644)) < 0) {
			snprintf(err, errlen, "writing the serving certificate into --cert-dir %s: %s", cfg->cert_dir,
				 strerror(-r));
			return r;
		}
	}
	return 0;
}

/* ---- requests ------------------------------------------------------------------------------- */

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type, char *body,
			     size_t len)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_COPY);
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

static enum MHD_Result find_verbose(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
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
	struct mgr_metrics_buf b = { 0 };
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
			mgr_metrics_printf(&b, "[-]%s failed: %s\n", k->name, why[0] ? why : "not healthy");
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

struct args {
	const char *key;
	const char *v[64];
	size_t n;
};

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct args *a = cls;

	(void)kind;
	if (strcmp(key, a->key) == 0 && a->n < sizeof(a->v) / sizeof(a->v[0]))
		a->v[a->n++] = value ? value : "";
	return MHD_YES;
}

static enum MHD_Result mounted(struct mgr_httpd *h, struct MHD_Connection *c, size_t i, const char *sub)
{
	struct args a = { .key = h->handlers[i].arg };
	unsigned status = 500;
	const char *ctype = "text/plain; charset=utf-8";
	char *body = NULL;
	size_t len = 0;
	enum MHD_Result r;

	if (a.key)
		MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect_arg, &a);
	if (h->handlers[i].fn(h->handlers[i].userdata, sub, a.v, a.n, &status, &ctype, &body, &len) < 0) {
		free(body);
		return reply(c, 500, "text/plain; charset=utf-8", "internal error\n", 15);
	}
	r = reply(c, status, ctype, body ? body : "", body ? len : 0);
	free(body);
	return r;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			       const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
	struct mgr_httpd *h = cls;
	static const struct {
		const char *path;
		unsigned where;
	} groups[] = { { "/healthz", MGR_CHECK_LIVE | MGR_CHECK_READY },
		       { "/livez", MGR_CHECK_LIVE },
		       { "/readyz", MGR_CHECK_READY } };

	(void)version;
	(void)upload;
	(void)con_cls;
	if (*upload_size) /* no bodies accepted */
		return reply(c, 413, "text/plain", "request body not accepted\n", 26);
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
		if (strncmp(url, h->handlers[i].path, n) == 0 && (url[n] == 0 || url[n] == '/'))
			return mounted(h, c, i, url + n);
	}
	return reply(c, 404, "text/plain; charset=utf-8", "404 page not found\n", 19);
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

int mgr_httpd_new(struct ipc_loop *loop, const struct mgr_httpd_config *cfg, struct mgr_httpd **ret,
		  char *err, size_t errlen)
{
	struct mgr_httpd *h = calloc(1, sizeof(*h));
	struct sockaddr_storage ss = { 0 };
	unsigned flags = MHD_USE_EPOLL;
	const union MHD_DaemonInfo *info;
	int r;

	if (!h)
		return -ENOMEM;
	h->loop = loop;
	if (inet_pton(AF_INET, cfg->bind_address, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		((struct sockaddr_in *)&ss)->sin_family = AF_INET;
		((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)cfg->port);
	} else if (inet_pton(AF_INET6, cfg->bind_address, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
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
	if (cfg->plain_http)
		h->d = MHD_start_daemon(flags, (uint16_t)cfg->port, NULL, NULL, handler, h, MHD_OPTION_SOCK_ADDR, &ss,
					MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_CONNECTION_LIMIT, 64u,
					MHD_OPTION_END);
	else
		h->d = MHD_start_daemon(flags, (uint16_t)cfg->port, NULL, NULL, handler, h, MHD_OPTION_SOCK_ADDR, &ss,
					MHD_OPTION_HTTPS_MEM_CERT, h->cert_pem, MHD_OPTION_HTTPS_MEM_KEY, h->key_pem,
					MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_CONNECTION_LIMIT, 64u,
					MHD_OPTION_END);
	if (!h->d) {
		snprintf(err, errlen, "cannot serve on %s:%d (address in use, or a bad certificate)",
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
	*ret = h;
	return 0;
}

struct mgr_httpd *mgr_httpd_free(struct mgr_httpd *h)
{
	if (!h)
		return NULL;
	ipc_source_free(h->io);
	ipc_source_free(h->timer);
	if (h->d)
		MHD_stop_daemon(h->d);
	for (size_t i = 0; i < h->n_checks; i++)
		free(h->checks[i].name);
	for (size_t i = 0; i < h->n_handlers; i++) {
		free(h->handlers[i].path);
		free(h->handlers[i].arg);
	}
	free(h->checks);
	free(h->cert_pem);
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

int mgr_httpd_add_check(struct mgr_httpd *h, const char *name, unsigned where, mgr_health_fn fn, void *userdata)
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
