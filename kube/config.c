/* SPDX-License-Identifier: Apache-2.0 */
/* kube/config.c - kubeconfig loading with libyaml, and in-cluster config.
 *
 * Each file is loaded as a libyaml document (node graph with line/column marks); named entries
 * (clusters, users, contexts) are indexed across files first-definition-wins, then only the
 * selected context, cluster and user are turned into a struct kube_config. Every entry of every
 * file is still validated with the same extraction code, so a malformed entry is reported even if
 * it is not the one selected (kubectl refuses such files too). Aliases are resolved by libyaml to
 * shared nodes and we only walk fixed paths, so alias bombs cost nothing.
 *
 * Rejected: a hand-rolled YAML subset parser (kubeconfigs in the wild use flow style, anchors,
 * block scalars); libyaml's event API (the document API gives the marks we need for messages).
 */
#include "kube/config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#define MAX_FILE  (16u << 20)
#define MAX_FILES 32

struct file {
	char *path;
	char *dir;
	yaml_document_t doc;
	bool loaded;
};

struct entry {
	const char *name;
	struct file *f;
	yaml_node_t *body; /* the "cluster"/"user"/"context" mapping, may be NULL */
	yaml_node_t *item; /* the list item, for its line */
};

struct loader {
	struct file files[MAX_FILES];
	size_t n_files;
	struct entry *clusters, *users, *contexts;
	size_t n_clusters, n_users, n_contexts;
	const char *current_context;
	char *err;
	size_t errlen;
};

static int fail(struct loader *l, struct file *f, yaml_node_t *n, const char *fmt, ...)
{
	if (l->err && l->errlen) {
		int off = 0;
		if (f && n)
			off = snprintf(l->err, l->errlen, "%s:%zu:%zu: ", f->path,
			               (size_t)n->start_mark.line + 1,
			               (size_t)n->start_mark.column + 1);
		else if (f)
			off = snprintf(l->err, l->errlen, "%s: ", f->path);
		if (off < 0 || (size_t)off >= l->errlen)
			return -EINVAL;
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(l->err + off, l->errlen - (size_t)off, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	if (!err || !errlen)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static yaml_node_t *node(struct file *f, int idx)
{
	return yaml_document_get_node(&f->doc, idx);
}

static bool is_scalar(yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE;
}

static const char *scalar(yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

/* null, ~ and empty plain scalars mean "absent", as in Go's YAML->JSON conversion */
static bool is_null(yaml_node_t *n)
{
	if (!n)
		return true;
	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	const char *s = scalar(n);
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
	       !strcmp(s, "NULL");
}

static yaml_node_t *get(struct file *f, yaml_node_t *map, const char *key)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	yaml_node_t *found = NULL;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = node(f, p->key);
		if (is_scalar(k) && !strcmp(scalar(k), key))
			found = node(f, p->value); /* last one wins */
	}
	return found;
}

/* String field: 0 absent, 1 present (*out points into the document), <0 error. */
static int get_str(struct loader *l, struct file *f, yaml_node_t *map, const char *key,
                   const char *what, const char **out)
{
	yaml_node_t *v = get(f, map, key);
	*out = NULL;
	if (is_null(v))
		return 0;
	if (!is_scalar(v))
		return fail(l, f, v, "%s.%s: expected a string", what, key);
	if (strlen(scalar(v)) != v->data.scalar.length)
		return fail(l, f, v, "%s.%s: contains a NUL byte", what, key);
	*out = scalar(v);
	return 1;
}

static int get_bool(struct loader *l, struct file *f, yaml_node_t *map, const char *key,
                    const char *what, bool *out)
{
	static const char *const t[] = {"true", "True", "TRUE", "yes", "Yes",
	                                "YES",  "on",   "On",   "ON"};
	static const char *const fl[] = {"false", "False", "FALSE", "no", "No",
	                                 "NO",    "off",   "Off",   "OFF"};
	yaml_node_t *v = get(f, map, key);
	*out = false;
	if (is_null(v))
		return 0;
	if (is_scalar(v) && v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
		for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
			if (!strcmp(scalar(v), t[i])) {
				*out = true;
				return 1;
			}
		for (size_t i = 0; i < sizeof(fl) / sizeof(fl[0]); i++)
			if (!strcmp(scalar(v), fl[i]))
				return 1;
	}
	return fail(l, f, v, "%s.%s: expected true or false", what, key);
}

/* ---- small helpers -------------------------------------------------------------------------- */

static char *path_resolve(const char *dir, const char *p)
{
	char *out;
	if (!p)
		return NULL;
	if (p[0] == '/' || !dir)
		return strdup(p);
	if (asprintf(&out, "%s/%s", dir, p) < 0)
		return NULL;
	return out;
}

static int b64(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int kube_base64url_append(const unsigned char *in, size_t n, char *out, size_t outlen, size_t *pos)
{
	static const char tab[] =
	        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;
		size_t k = n - i >= 3 ? 4 : n - i + 1;
		if (i + 1 < n)
			v |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < n)
			v |= in[i + 2];
		for (size_t j = 0; j < k; j++) {
			if (*pos + 1 >= outlen)
				return -ENOSPC;
			out[(*pos)++] = tab[(v >> (18 - 6 * j)) & 63];
		}
	}
	out[*pos] = 0;
	return 0;
}

char *kube_base64_encode(const unsigned char *p, size_t n)
{
	static const char tab[] =
	        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *o = malloc((n + 2) / 3 * 4 + 1), *q = o;
	if (!o)
		return NULL;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) |
		             (i + 2 < n ? p[i + 2] : 0);
		*q++ = tab[v >> 18 & 63];
		*q++ = tab[v >> 12 & 63];
		*q++ = i + 1 < n ? tab[v >> 6 & 63] : '=';
		*q++ = i + 2 < n ? tab[v & 63] : '=';
	}
	*q = 0;
	return o;
}

int kube_base64_decode(const char *in, size_t n, unsigned char **ret, size_t *ret_len)
{
	unsigned char *out = malloc(n / 4 * 3 + 4);
	uint32_t acc = 0;
	int bits = 0;
	size_t o = 0, pad = 0;
	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)in[i];
		if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
			continue;
		if (c == '=') {
			pad++;
			continue;
		}
		if (pad || b64(c) < 0) {
			free(out);
			return -EINVAL;
		}
		acc = (acc << 6) | (uint32_t)b64(c);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (unsigned char)(acc >> bits);
		}
	}
	if (pad > 2 || bits >= 6) {
		free(out);
		return -EINVAL;
	}
	out[o] = 0;
	*ret = out;
	*ret_len = o;
	return 0;
}

/* ---- loading and indexing ------------------------------------------------------------------- */

static int read_file(const char *path, char **ret, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > MAX_FILE) {
		int e = S_ISREG(st.st_mode) ? -EFBIG : -EINVAL;
		close(fd);
		return e;
	}
	char *b = malloc((size_t)st.st_size + 1);
	size_t got = 0;
	if (!b) {
		close(fd);
		return -ENOMEM;
	}
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, b + got, (size_t)st.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	b[got] = 0;
	*ret = b;
	*len = got;
	return 0;
}

static int add_entry(struct loader *l, struct entry **arr, size_t *n, struct file *f,
                     yaml_node_t *item, const char *name, yaml_node_t *body)
{
	(void)l;
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*arr)[i].name, name))
			return 0; /* first definition wins */
	struct entry *na = realloc(*arr, (*n + 1) * sizeof(**arr));
	if (!na)
		return -ENOMEM;
	*arr = na;
	na[*n] = (struct entry){.name = name, .f = f, .body = body, .item = item};
	(*n)++;
	return 0;
}

static int index_list(struct loader *l, struct file *f, yaml_node_t *root, const char *list,
                      const char *bodykey, struct entry **arr, size_t *n)
{
	yaml_node_t *seq = get(f, root, list);
	if (is_null(seq))
		return 0;
	if (seq->type != YAML_SEQUENCE_NODE)
		return fail(l, f, seq, "%s: expected a list", list);
	size_t idx = 0;
	for (yaml_node_item_t *it = seq->data.sequence.items.start;
	     it < seq->data.sequence.items.top; it++, idx++) {
		yaml_node_t *item = node(f, *it);
		char what[64];
		const char *name;
		snprintf(what, sizeof(what), "%s[%zu]", list, idx);
		if (!item || item->type != YAML_MAPPING_NODE)
			return fail(l, f, item, "%s: expected a mapping", what);
		int r = get_str(l, f, item, "name", what, &name);
		if (r < 0)
			return r;
		if (!name || !*name)
			return fail(l, f, item, "%s: name is required", what);
		yaml_node_t *body = get(f, item, bodykey);
		if (!is_null(body) && body->type != YAML_MAPPING_NODE)
			return fail(l, f, body, "%s.%s: expected a mapping", what, bodykey);
		if ((r = add_entry(l, arr, n, f, item, name, is_null(body) ? NULL : body)) < 0)
			return r;
	}
	return 0;
}

static int load_file(struct loader *l, const char *path, bool must_exist)
{
	char *buf;
	size_t len;
	int r;
	if (l->n_files == MAX_FILES)
		return -E2BIG;
	r = read_file(path, &buf, &len);
	if (r == -ENOENT && !must_exist)
		return 0;
	if (r < 0) {
		seterr(l->err, l->errlen, "%s: cannot read: %s", path, strerror(-r));
		return r;
	}
	struct file *f = &l->files[l->n_files];
	memset(f, 0, sizeof(*f));
	f->path = strdup(path);
	const char *slash = strrchr(path, '/');
	f->dir = slash ? strndup(path, (size_t)((slash - path) ? (slash - path) : 1)) : strdup(".");
	if (!f->path || !f->dir) {
		free(buf);
		free(f->path);
		free(f->dir);
		return -ENOMEM;
	}
	l->n_files++;
	yaml_parser_t p;
	if (!yaml_parser_initialize(&p)) {
		free(buf);
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&p, &f->doc)) {
		r = fail(l, NULL, NULL, "");
		seterr(l->err, l->errlen, "%s:%zu:%zu: YAML error: %s%s%s", path,
		       (size_t)p.problem_mark.line + 1, (size_t)p.problem_mark.column + 1,
		       p.problem ? p.problem : "malformed", p.context ? " " : "",
		       p.context ? p.context : "");
		yaml_parser_delete(&p);
		free(buf);
		return r;
	}
	f->loaded = true;
	yaml_parser_delete(&p);
	free(buf);

	yaml_node_t *root = yaml_document_get_root_node(&f->doc);
	if (!root || is_null(root))
		return 0; /* an empty file is a valid, empty config */
	if (root->type != YAML_MAPPING_NODE)
		return fail(l, f, root, "expected a mapping at the top level");
	const char *cc;
	if ((r = get_str(l, f, root, "current-context", "config", &cc)) < 0)
		return r;
	if (cc && *cc && !l->current_context)
		l->current_context = cc;
	if ((r = index_list(l, f, root, "clusters", "cluster", &l->clusters, &l->n_clusters)) < 0 ||
	    (r = index_list(l, f, root, "users", "user", &l->users, &l->n_users)) < 0 ||
	    (r = index_list(l, f, root, "contexts", "context", &l->contexts, &l->n_contexts)) < 0)
		return r;
	return 0;
}

static void loader_free(struct loader *l)
{
	for (size_t i = 0; i < l->n_files; i++) {
		if (l->files[i].loaded)
			yaml_document_delete(&l->files[i].doc);
		free(l->files[i].path);
		free(l->files[i].dir);
	}
	free(l->clusters);
	free(l->users);
	free(l->contexts);
}

static struct entry *find(struct entry *arr, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(arr[i].name, name))
			return &arr[i];
	return NULL;
}

/* ---- extraction ----------------------------------------------------------------------------- */

static int dup_into(char **dst, const char *s)
{
	if (!s)
		return 0;
	free(*dst);
	*dst = strdup(s);
	return *dst ? 0 : -ENOMEM;
}

static int b64_field(struct loader *l, struct entry *e, const char *key, const char *what,
                     unsigned char **out, size_t *outlen)
{
	const char *s;
	int r = get_str(l, e->f, e->body, key, what, &s);
	if (r <= 0)
		return r;
	free(*out);
	*out = NULL;
	r = kube_base64_decode(s, strlen(s), out, outlen);
	if (r == -EINVAL)
		return fail(l, e->f, get(e->f, e->body, key), "%s.%s: invalid base64", what, key);
	return r;
}

static int path_field(struct loader *l, struct entry *e, const char *key, const char *what,
                      char **out)
{
	const char *s;
	int r = get_str(l, e->f, e->body, key, what, &s);
	if (r <= 0)
		return r;
	free(*out);
	*out = path_resolve(e->f->dir, s);
	return *out ? 0 : -ENOMEM;
}

static int extract_cluster(struct loader *l, struct entry *e, struct kube_config *c)
{
	char what[300];
	const char *s;
	int r;
	snprintf(what, sizeof(what), "clusters[%s].cluster", e->name);
	if (!e->body)
		return fail(l, e->f, e->item, "cluster %s: no cluster settings", e->name);
	if ((r = get_str(l, e->f, e->body, "server", what, &s)) < 0 ||
	    (r = dup_into(&c->server, s)) < 0)
		return r;
	if ((r = get_str(l, e->f, e->body, "tls-server-name", what, &s)) < 0 ||
	    (r = dup_into(&c->tls_server_name, s)) < 0)
		return r;
	if ((r = get_bool(l, e->f, e->body, "insecure-skip-tls-verify", what,
	                  &c->insecure_skip_tls_verify)) < 0)
		return r;
	if ((r = path_field(l, e, "certificate-authority", what, &c->ca_file)) < 0 ||
	    (r = b64_field(l, e, "certificate-authority-data", what, &c->ca_data,
	                   &c->ca_data_len)) < 0)
		return r;
	if ((r = get_str(l, e->f, e->body, "proxy-url", what, &s)) < 0 ||
	    (r = dup_into(&c->proxy_url, s)) < 0)
		return r;
	return 0;
}

static int extract_exec(struct loader *l, struct entry *e, yaml_node_t *ex, const char *what,
                        struct kube_exec_config **ret)
{
	struct file *f = e->f;
	const char *s;
	int r;
	if (ex->type != YAML_MAPPING_NODE)
		return fail(l, f, ex, "%s.exec: expected a mapping", what);
	struct kube_exec_config *x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	*ret = x;
	if ((r = get_str(l, f, ex, "command", what, &s)) < 0)
		return r;
	if (!s || !*s)
		return fail(l, f, ex, "%s.exec.command: required", what);
	x->command = strchr(s, '/') ? path_resolve(f->dir, s) : strdup(s);
	if ((r = get_str(l, f, ex, "apiVersion", what, &s)) < 0)
		return r;
	if (!s || (strcmp(s, "client.authentication.k8s.io/v1") &&
	           strcmp(s, "client.authentication.k8s.io/v1beta1")))
		return fail(
		        l, f, ex,
		        "%s.exec.apiVersion: must be client.authentication.k8s.io/v1 or /v1beta1",
		        what);
	x->api_version = strdup(s);
	if ((r = get_str(l, f, ex, "interactiveMode", what, &s)) < 0)
		return r;
	if (s && strcmp(s, "Never") && strcmp(s, "IfAvailable") && strcmp(s, "Always"))
		return fail(l, f, ex,
		            "%s.exec.interactiveMode: must be Never, IfAvailable or Always", what);
	if (s && !strcmp(s, "Always"))
		return fail(l, f, ex,
		            "%s.exec: interactiveMode Always needs a terminal, which a controller "
		            "never has",
		            what);
	x->interactive_mode = s ? strdup(s) : NULL;
	if ((r = get_bool(l, f, ex, "provideClusterInfo", what, &x->provide_cluster_info)) < 0)
		return r;
	yaml_node_t *args = get(f, ex, "args");
	size_t na = 0;
	if (!is_null(args)) {
		if (args->type != YAML_SEQUENCE_NODE)
			return fail(l, f, args, "%s.exec.args: expected a list of strings", what);
		na = (size_t)(args->data.sequence.items.top - args->data.sequence.items.start);
	}
	x->args = calloc(na + 1, sizeof(char *));
	if (!x->args || !x->command || !x->api_version)
		return -ENOMEM;
	for (size_t i = 0; i < na; i++) {
		yaml_node_t *a = node(f, args->data.sequence.items.start[i]);
		if (!is_scalar(a))
			return fail(l, f, a, "%s.exec.args[%zu]: expected a string", what, i);
		if (!(x->args[i] = strdup(scalar(a))))
			return -ENOMEM;
	}
	yaml_node_t *env = get(f, ex, "env");
	if (!is_null(env)) {
		if (env->type != YAML_SEQUENCE_NODE)
			return fail(l, f, env, "%s.exec.env: expected a list of {name, value}",
			            what);
		size_t ne = (size_t)(env->data.sequence.items.top - env->data.sequence.items.start);
		x->env = calloc(ne ? ne : 1, sizeof(*x->env));
		if (!x->env)
			return -ENOMEM;
		for (size_t i = 0; i < ne; i++) {
			yaml_node_t *ev = node(f, env->data.sequence.items.start[i]);
			const char *nm, *val;
			char w2[340];
			snprintf(w2, sizeof(w2), "%s.exec.env[%zu]", what, i);
			if (!ev || ev->type != YAML_MAPPING_NODE)
				return fail(l, f, ev, "%s: expected a mapping", w2);
			if ((r = get_str(l, f, ev, "name", w2, &nm)) < 0 ||
			    (r = get_str(l, f, ev, "value", w2, &val)) < 0)
				return r;
			if (!nm || !*nm)
				return fail(l, f, ev, "%s.name: required", w2);
			x->env[i].name = strdup(nm);
			x->env[i].value = strdup(val ? val : "");
			x->n_env++;
			if (!x->env[i].name || !x->env[i].value)
				return -ENOMEM;
		}
	}
	return 0;
}

static void exec_free(struct kube_exec_config *x)
{
	if (!x)
		return;
	free(x->command);
	for (char **a = x->args; a && *a; a++)
		free(*a);
	free(x->args);
	for (size_t i = 0; i < x->n_env; i++) {
		free(x->env[i].name);
		free(x->env[i].value);
	}
	free(x->env);
	free(x->api_version);
	free(x->interactive_mode);
	free(x);
}

static int extract_user(struct loader *l, struct entry *e, struct kube_config *c)
{
	char what[300];
	const char *s;
	int r;
	snprintf(what, sizeof(what), "users[%s].user", e->name);
	if (!e->body)
		return 0; /* a user with no settings: anonymous */
	if ((r = get_str(l, e->f, e->body, "token", what, &s)) < 0 ||
	    (r = dup_into(&c->token, s)) < 0)
		return r;
	if ((r = path_field(l, e, "tokenFile", what, &c->token_file)) < 0 ||
	    (r = path_field(l, e, "client-certificate", what, &c->client_cert_file)) < 0 ||
	    (r = path_field(l, e, "client-key", what, &c->client_key_file)) < 0 ||
	    (r = b64_field(l, e, "client-certificate-data", what, &c->client_cert_data,
	                   &c->client_cert_data_len)) < 0 ||
	    (r = b64_field(l, e, "client-key-data", what, &c->client_key_data,
	                   &c->client_key_data_len)) < 0)
		return r;
	if ((r = get_str(l, e->f, e->body, "username", what, &s)) < 0 ||
	    (r = dup_into(&c->username, s)) < 0 ||
	    (r = get_str(l, e->f, e->body, "password", what, &s)) < 0 ||
	    (r = dup_into(&c->password, s)) < 0)
		return r;
	yaml_node_t *ap = get(e->f, e->body, "auth-provider");
	if (!is_null(ap))
		return fail(l, e->f, ap,
		            "%s.auth-provider: in-tree auth providers were removed upstream; use "
		            "an exec "
		            "plugin",
		            what);
	yaml_node_t *ex = get(e->f, e->body, "exec");
	if (!is_null(ex)) {
		exec_free(c->exec);
		c->exec = NULL;
		if ((r = extract_exec(l, e, ex, what, &c->exec)) < 0)
			return r;
	}
	bool has_cert = c->client_cert_file || c->client_cert_data;
	bool has_key = c->client_key_file || c->client_key_data;
	if (has_cert != has_key)
		return fail(l, e->f, e->body,
		            "%s: client-certificate and client-key must be given together", what);
	return 0;
}

void kube_config_free(struct kube_config *c)
{
	if (!c)
		return;
	free(c->server);
	free(c->tls_server_name);
	free(c->proxy_url);
	free(c->ca_file);
	free(c->ca_data);
	free(c->client_cert_file);
	free(c->client_key_file);
	if (c->client_key_data)
		explicit_bzero(c->client_key_data, c->client_key_data_len);
	free(c->client_cert_data);
	free(c->client_key_data);
	if (c->token)
		explicit_bzero(c->token, strlen(c->token));
	free(c->token);
	free(c->token_file);
	free(c->username);
	if (c->password)
		explicit_bzero(c->password, strlen(c->password));
	free(c->password);
	exec_free(c->exec);
	free(c->context);
	free(c->cluster);
	free(c->user);
	free(c->namespace);
	free(c);
}

int kube_config_use_token_file(struct kube_config *c, const char *path)
{
	char *tf;
	if (!c || !path || !*path)
		return -EINVAL;
	if (!(tf = strdup(path)))
		return -ENOMEM;
	free(c->client_cert_file);
	free(c->client_key_file);
	if (c->client_key_data)
		explicit_bzero(c->client_key_data, c->client_key_data_len);
	free(c->client_cert_data);
	free(c->client_key_data);
	c->client_cert_file = c->client_key_file = NULL;
	c->client_cert_data = c->client_key_data = NULL;
	c->client_cert_data_len = c->client_key_data_len = 0;
	if (c->token)
		explicit_bzero(c->token, strlen(c->token));
	free(c->token);
	c->token = NULL;
	free(c->username);
	c->username = NULL;
	if (c->password)
		explicit_bzero(c->password, strlen(c->password));
	free(c->password);
	c->password = NULL;
	exec_free(c->exec);
	c->exec = NULL;
	free(c->token_file);
	c->token_file = tf;
	return 0;
}

static int validate_all(struct loader *l)
{
	/* run the extraction over every entry so that any malformed entry is reported */
	for (size_t i = 0; i < l->n_clusters; i++) {
		struct kube_config *t = calloc(1, sizeof(*t));
		if (!t)
			return -ENOMEM;
		int r = extract_cluster(l, &l->clusters[i], t);
		kube_config_free(t);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < l->n_users; i++) {
		struct kube_config *t = calloc(1, sizeof(*t));
		if (!t)
			return -ENOMEM;
		int r = extract_user(l, &l->users[i], t);
		kube_config_free(t);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The lower-cased scheme of url (Go's url.Parse: letters, digits, '+', '-', '.' before the first
 * ':', starting with a letter), or "" when it has none. */
static void url_scheme(const char *url, char *out, size_t outlen)
{
	size_t n = 0;
	out[0] = 0;
	if (!((url[0] >= 'a' && url[0] <= 'z') || (url[0] >= 'A' && url[0] <= 'Z')))
		return;
	while (url[n] && url[n] != ':') {
		char ch = url[n];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '+' || ch == '-' || ch == '.'))
			return;
		n++;
	}
	if (url[n] != ':' || n >= outlen)
		return;
	for (size_t i = 0; i < n; i++)
		out[i] = (char)(url[i] >= 'A' && url[i] <= 'Z' ? url[i] + 32 : url[i]);
	out[n] = 0;
}

/* The checks client-go makes on the selected cluster before it builds a transport: a proxy-url
 * must be http, https or socks5 (clientcmd's validation), and a CA together with
 * insecure-skip-tls-verify is refused (the transport's TLS config). */
static int check_cluster(struct loader *l, struct kube_config *c)
{
	if (c->proxy_url && *c->proxy_url) {
		char scheme[16];
		url_scheme(c->proxy_url, scheme, sizeof(scheme));
		if (strcmp(scheme, "http") && strcmp(scheme, "https") && strcmp(scheme, "socks5"))
			return fail(
			        l, NULL, NULL,
			        "invalid 'proxy-url' \"%s\" for cluster \"%s\": unsupported scheme "
			        "\"%s\", must be http, https, or socks5",
			        c->proxy_url, c->cluster ? c->cluster : "", scheme);
	}
	if (c->insecure_skip_tls_verify && ((c->ca_file && *c->ca_file) || c->ca_data_len))
		return fail(l, NULL, NULL,
		            "cluster \"%s\": specifying a root certificates file with the insecure "
		            "flag is not allowed",
		            c->cluster ? c->cluster : "");
	return 0;
}

static int check_server(struct loader *l, struct kube_config *c)
{
	if (!c->server || !*c->server)
		return fail(l, NULL, NULL, "cluster %s has no server",
		            c->cluster ? c->cluster : "");
	if (strncmp(c->server, "https://", 8) && strncmp(c->server, "http://", 7))
		return fail(l, NULL, NULL, "server \"%s\": must start with https:// or http://",
		            c->server);
	size_t n = strlen(c->server);
	while (n > 8 && c->server[n - 1] == '/')
		c->server[--n] = 0;
	return 0;
}

int kube_config_in_cluster(const struct kube_config_opts *o, struct kube_config **ret, char *err,
                           size_t errlen)
{
	static const struct kube_config_opts none = {0};
	if (!o)
		o = &none;
	const char *host = o->service_host ? o->service_host : getenv("KUBERNETES_SERVICE_HOST");
	const char *port = o->service_port ? o->service_port : getenv("KUBERNETES_SERVICE_PORT");
	const char *root = o->in_cluster_root ? o->in_cluster_root : "";
	if (!host || !*host || !port || !*port) {
		seterr(err, errlen,
		       "not running in a cluster: KUBERNETES_SERVICE_HOST/PORT not set");
		return -ENOENT;
	}
	struct kube_config *c = calloc(1, sizeof(*c));
	char *ns = NULL;
	size_t nslen;
	int r = -ENOMEM;
	if (!c)
		return -ENOMEM;
	bool v6 = strchr(host, ':') != NULL;
	if (asprintf(&c->server, v6 ? "https://[%s]:%s" : "https://%s:%s", host, port) < 0) {
		c->server = NULL;
		goto fail;
	}
	if (asprintf(&c->token_file, "%s/var/run/secrets/kubernetes.io/serviceaccount/token",
	             root) < 0 ||
	    asprintf(&c->ca_file, "%s/var/run/secrets/kubernetes.io/serviceaccount/ca.crt", root) <
	            0) {
		c->token_file = c->ca_file = NULL;
		goto fail;
	}
	if (access(c->token_file, R_OK) < 0 || access(c->ca_file, R_OK) < 0) {
		r = -errno;
		seterr(err, errlen, "in-cluster config: cannot read %s or %s: %s", c->token_file,
		       c->ca_file, strerror(-r));
		goto fail;
	}
	char nsfile[4096];
	snprintf(nsfile, sizeof(nsfile),
	         "%s/var/run/secrets/kubernetes.io/serviceaccount/namespace", root);
	if (read_file(nsfile, &ns, &nslen) == 0) {
		while (nslen && (ns[nslen - 1] == '\n' || ns[nslen - 1] == ' '))
			ns[--nslen] = 0;
		c->namespace = ns;
	}
	c->in_cluster = true;
	*ret = c;
	return 0;
fail:
	kube_config_free(c);
	return r;
}

int kube_config_load(const struct kube_config_opts *o, struct kube_config **ret, char *err,
                     size_t errlen)
{
	static const struct kube_config_opts none = {0};
	struct loader l = {.err = err, .errlen = errlen};
	struct kube_config *c = NULL;
	int r;
	if (!ret)
		return -EINVAL;
	if (!o)
		o = &none;
	if (err && errlen)
		err[0] = 0;
	const char *envkc = o->kubeconfig_env ? o->kubeconfig_env : getenv("KUBECONFIG");
	bool have_env = envkc && *envkc;
	bool have_explicit = o->kubeconfig && *o->kubeconfig;
	bool have_master = o->master && *o->master;

	if (!have_explicit && !have_master && !have_env && !o->no_in_cluster) {
		r = kube_config_in_cluster(o, ret, NULL, 0);
		if (r == 0)
			return 0;
	}
	if (have_explicit) {
		if ((r = load_file(&l, o->kubeconfig, true)) < 0)
			goto out;
	} else if (have_env) {
		char *copy = strdup(envkc), *save = NULL;
		if (!copy) {
			r = -ENOMEM;
			goto out;
		}
		for (char *p = strtok_r(copy, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
			bool dup =
			        false; /* the same file twice is read once, as clientcmd dedups */
			for (size_t i = 0; i < l.n_files; i++)
				dup |= !strcmp(l.files[i].path, p);
			if (!dup && (r = load_file(&l, p, false)) < 0) {
				free(copy);
				goto out;
			}
		}
		free(copy);
	} else {
		const char *home = o->home ? o->home : getenv("HOME");
		if (home && *home) {
			char path[4096];
			snprintf(path, sizeof(path), "%s/.kube/config", home);
			if ((r = load_file(&l, path, false)) < 0)
				goto out;
		}
	}
	if ((r = validate_all(&l)) < 0)
		goto out;

	c = calloc(1, sizeof(*c));
	if (!c) {
		r = -ENOMEM;
		goto out;
	}
	const char *ctxname = o->context && *o->context ? o->context : l.current_context;
	if (!ctxname && !have_master) {
		r = -ENOENT;
		if (l.n_files == 0)
			seterr(err, errlen,
			       "no kubeconfig found (tried %s) and not running in a cluster",
			       have_explicit ? o->kubeconfig
			       : have_env    ? "KUBECONFIG"
			                     : "~/.kube/config");
		else
			seterr(err, errlen,
			       "kubeconfig has no current-context and no --context was given");
		goto out;
	}
	if (ctxname) {
		struct entry *ctx = find(l.contexts, l.n_contexts, ctxname);
		const char *cl = NULL, *us = NULL, *ns = NULL;
		if (!ctx) {
			r = -ENOENT;
			seterr(err, errlen, "context \"%s\" not found in kubeconfig", ctxname);
			goto out;
		}
		char what[300];
		snprintf(what, sizeof(what), "contexts[%s].context", ctx->name);
		if (ctx->body && ((r = get_str(&l, ctx->f, ctx->body, "cluster", what, &cl)) < 0 ||
		                  (r = get_str(&l, ctx->f, ctx->body, "user", what, &us)) < 0 ||
		                  (r = get_str(&l, ctx->f, ctx->body, "namespace", what, &ns)) < 0))
			goto out;
		if ((r = dup_into(&c->context, ctxname)) < 0 ||
		    (r = dup_into(&c->namespace, ns)) < 0)
			goto out;
		if (cl && *cl) {
			struct entry *e = find(l.clusters, l.n_clusters, cl);
			if (!e && !have_master) {
				r = -ENOENT;
				seterr(err, errlen, "context \"%s\": cluster \"%s\" not found",
				       ctxname, cl);
				goto out;
			}
			if ((r = dup_into(&c->cluster, cl)) < 0 ||
			    (e && (r = extract_cluster(&l, e, c)) < 0))
				goto out;
		}
		if (us && *us) {
			struct entry *e = find(l.users, l.n_users, us);
			if (!e) {
				r = -ENOENT;
				seterr(err, errlen, "context \"%s\": user \"%s\" not found",
				       ctxname, us);
				goto out;
			}
			if ((r = dup_into(&c->user, us)) < 0 || (r = extract_user(&l, e, c)) < 0)
				goto out;
		}
	}
	if (have_master && (r = dup_into(&c->server, o->master)) < 0)
		goto out;
	if ((r = check_server(&l, c)) < 0 || (r = check_cluster(&l, c)) < 0)
		goto out;
	*ret = c;
	c = NULL;
	r = 0;
out:
	kube_config_free(c);
	loader_free(&l);
	return r;
}
