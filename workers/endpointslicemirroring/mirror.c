/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/endpointslicemirroring/mirror.c: see mirror.h. Everything here is a pure function
 * of its inputs; allocation failures are reported as -ENOMEM and leave no leak.
 */
#include "workers/endpointslicemirroring/mirror.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cJSON *get(const cJSON *o, const char *k)
{
	return o ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

/* the string at k, or NULL when absent or not a string (Go: a nil pointer) */
static const char *str0(const cJSON *o, const char *k)
{
	const cJSON *v = get(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const char *str(const cJSON *o, const char *k)
{
	const char *s = str0(o, k);
	return s ? s : "";
}

static bool streq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* ---- a string builder ------------------------------------------------------------------ */
struct sb {
	char *s;
	size_t n, cap;
	bool oom;
};

static void sb_add(struct sb *b, const char *s)
{
	size_t l = strlen(s);
	if (b->oom)
		return;
	if (b->n + l + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		while (cap < b->n + l + 1)
			cap *= 2;
		char *n = realloc(b->s, cap);
		if (!n) {
			b->oom = true;
			return;
		}
		b->s = n;
		b->cap = cap;
	}
	memcpy(b->s + b->n, s, l + 1);
	b->n += l;
}

static void sb_addf(struct sb *b, const char *fmt, long long v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), fmt, v);
	sb_add(b, buf);
}

/* the built string (never NULL unless out of memory) */
static char *sb_take(struct sb *b)
{
	if (b->oom) {
		free(b->s);
		return NULL;
	}
	if (!b->s)
		return strdup("");
	return b->s;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ---- IPs ------------------------------------------------------------------------------------ */
/* IPv4 as Go's sloppy parser reads it: four decimal fields of any length, each <= 255 */
static bool parse_v4(const char *s, unsigned char out[4])
{
	for (int i = 0; i < 4; i++) {
		unsigned v = 0;
		const char *st = s;
		if (i && *s++ != '.')
			return false;
		st = s;
		while (*s >= '0' && *s <= '9') {
			v = v * 10 + (unsigned)(*s - '0');
			if (v > 255)
				return false;
			s++;
		}
		if (s == st)
			return false;
		out[i] = (unsigned char)v;
	}
	return *s == '\0';
}

int esm_canon_ip(const char *ip, char *buf, size_t len, bool *v6)
{
	unsigned char a[16];
	static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	if (!ip || !*ip || len < 46)
		return -EINVAL;
	if (!strchr(ip, ':')) {
		if (!parse_v4(ip, a))
			return -EINVAL;
		snprintf(buf, len, "%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
		*v6 = false;
		return 0;
	}
	if (inet_pton(AF_INET6, ip, a) != 1)
		return -EINVAL;
	if (!memcmp(a, mapped, 12)) {
		snprintf(buf, len, "%u.%u.%u.%u", a[12], a[13], a[14], a[15]);
		*v6 = false;
		return 0;
	}
	/* Go's IP.String for IPv6: the first longest run (>= 2) of zero groups is "::" */
	int best = -1, best_len = 0;
	for (int i = 0; i < 8;) {
		int j = i;
		while (j < 8 && a[2 * j] == 0 && a[2 * j + 1] == 0)
			j++;
		if (j - i > best_len && j - i >= 2) {
			best = i;
			best_len = j - i;
		}
		i = j > i ? j : i + 1;
	}
	size_t n = 0;
	buf[0] = '\0';
	for (int i = 0; i < 8; i++) {
		if (i == best) {
			n += (size_t)snprintf(buf + n, len - n, "::");
			i += best_len - 1;
			continue;
		}
		if (i && i != best + best_len)
			n += (size_t)snprintf(buf + n, len - n, ":");
		n += (size_t)snprintf(buf + n, len - n, "%x",
		                      (unsigned)(a[2 * i] << 8 | a[2 * i + 1]));
	}
	*v6 = true;
	return 0;
}

void esm_slice_prefix(const char *name, char *buf, size_t len)
{
	/* ValidateEndpointSliceName(prefix=true): a DNS subdomain of at most 253 characters once
	 * the trailing dash is masked; name itself is a valid Endpoints name */
	if (strlen(name) + 1 > 253)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "%s-", name);
}

bool esm_should_mirror(const char *skip_label, bool has_leader_annotation)
{
	return !(skip_label && !strcmp(skip_label, "true")) && !has_leader_annotation;
}

bool esm_service_has_selector(const cJSON *svc)
{
	const cJSON *sel = get(get(svc, "spec"), "selector");
	return cJSON_IsObject(sel) && sel->child;
}

/* ---- keys ---------------------------------------------------------------------------------- */
/* one EndpointSlice port (name, port, protocol, appProtocol; absent differs from empty) */
static char *port_key1(const cJSON *p)
{
	static const char *const f[] = {"name", "protocol", "appProtocol"};
	const cJSON *port = get(p, "port");
	struct sb b = {0};
	for (size_t i = 0; i < 3; i++) {
		const char *v = str0(p, f[i]);
		sb_add(&b, v ? "=" : "!");
		sb_add(&b, v ? v : "");
		sb_add(&b, "\x1f");
	}
	if (cJSON_IsNumber(port))
		sb_addf(&b, "%lld", (long long)port->valuedouble);
	else
		sb_add(&b, "!");
	return sb_take(&b);
}

/* upstream's addrTypePortMapKey: the address type and the set of ports */
static char *port_map_key(const char *at, const cJSON *ports)
{
	size_t n = (size_t)cJSON_GetArraySize(ports), i = 0;
	char **v = calloc(n + 1, sizeof(*v));
	const cJSON *p;
	struct sb b = {0};
	bool oom = !v;

	sb_add(&b, at);
	sb_add(&b, "-");
	if (v) {
		cJSON_ArrayForEach(p, ports) if (i < n && !(v[i++] = port_key1(p))) oom = true;
		qsort(v, i, sizeof(*v), cmp_str);
		for (size_t k = 0; k < i; k++) {
			sb_add(&b, v[k] ? v[k] : "");
			sb_add(&b, "\x1e");
			free(v[k]);
		}
	}
	free(v);
	char *s = sb_take(&b);
	if (oom) {
		free(s);
		return NULL;
	}
	return s;
}

/* upstream's endpoint hash input: sorted addresses, hostname, targetRef namespace and name */
static char *endpoint_key(const cJSON *ep)
{
	const cJSON *addrs = get(ep, "addresses"), *a, *ref = get(ep, "targetRef");
	size_t n = (size_t)cJSON_GetArraySize(addrs), i = 0;
	const char **v = calloc(n + 1, sizeof(*v));
	struct sb b = {0};

	if (!v)
		return NULL;
	cJSON_ArrayForEach(a, addrs) if (i < n && cJSON_IsString(a)) v[i++] = a->valuestring;
	qsort(v, i, sizeof(*v), cmp_str);
	for (size_t k = 0; k < i; k++) {
		sb_add(&b, v[k]);
		sb_add(&b, ",");
	}
	free(v);
	sb_add(&b, "\x1f");
	sb_add(&b, str(ep, "hostname"));
	sb_add(&b, "\x1f");
	sb_add(&b, str(ref, "namespace"));
	sb_add(&b, "\x1f");
	sb_add(&b, str(ref, "name"));
	return sb_take(&b);
}

static bool bool_ptr_changed(const cJSON *a, const cJSON *b)
{
	if (!a != !b)
		return true;
	return a && b && (cJSON_IsTrue(a) != cJSON_IsTrue(b));
}

/* EndpointsEqualBeyondHash (targetRef compared without its resourceVersion) */
static bool endpoints_equal_beyond_hash(const cJSON *a, const cJSON *b)
{
	static const char *const conds[] = {"ready", "serving", "terminating"};
	static const char *const refs[] = {"kind", "namespace",  "name",
	                                   "uid",  "apiVersion", "fieldPath"};
	const cJSON *ca = get(a, "conditions"), *cb = get(b, "conditions");
	const cJSON *ra = get(a, "targetRef"), *rb = get(b, "targetRef");

	if (!streq(str0(a, "nodeName"), str0(b, "nodeName")) ||
	    !streq(str0(a, "zone"), str0(b, "zone")))
		return false;
	for (size_t i = 0; i < 3; i++)
		if (bool_ptr_changed(get(ca, conds[i]), get(cb, conds[i])))
			return false;
	if (!ra != !rb)
		return false;
	for (size_t i = 0; ra && i < sizeof(refs) / sizeof(refs[0]); i++)
		if (strcmp(str(ra, refs[i]), str(rb, refs[i])))
			return false;
	return true;
}

/* two string maps equal, nil == empty; `skip` keys of b are ignored (NULL-terminated) */
static bool map_equal(const cJSON *a, const cJSON *b, const char *const *skip_a,
                      const char *const *skip_b)
{
	const cJSON *it;
	size_t na = 0, nb = 0;

	cJSON_ArrayForEach(it, a)
	{
		bool skip = false;
		for (size_t i = 0; skip_a && skip_a[i]; i++)
			skip |= !strcmp(it->string, skip_a[i]);
		if (skip)
			continue;
		na++;
		const cJSON *o = get(b, it->string);
		for (size_t i = 0; skip_b && skip_b[i]; i++)
			if (!strcmp(it->string, skip_b[i]))
				o = NULL;
		if (!cJSON_IsString(o) || !cJSON_IsString(it) ||
		    strcmp(o->valuestring, it->valuestring))
			return false;
	}
	cJSON_ArrayForEach(it, b)
	{
		bool skip = false;
		for (size_t i = 0; skip_b && skip_b[i]; i++)
			skip |= !strcmp(it->string, skip_b[i]);
		nb += !skip;
	}
	return na == nb;
}

/* ---- RepackSubsets ------------------------------------------------------------------------- */
struct occ {       /* one address occurrence */
	char *key; /* ip \x1f targetRef uid */
	size_t order;
	const cJSON *addr;
};

struct tup { /* (port, address, ready) */
	size_t port, addr;
	bool ready;
};

struct rport {
	char *key;         /* its identity (pointer identity of an appProtocol: unique) */
	const cJSON *port; /* NULL: the sentinel of a subset without ports */
	size_t first, n;   /* its (address, ready) pairs in the sorted tuples */
	char *sig;         /* the address set, as text */
};

struct rsubset {
	cJSON *ports;                   /* Endpoints ports (references into the input) */
	const cJSON **ready, **unready; /* the first occurrence of each address */
	size_t n_ready, n_unready;
};

static int cmp_occ(const void *a, const void *b)
{
	const struct occ *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : (x->order > y->order) - (x->order < y->order);
}

static int cmp_tup(const void *a, const void *b)
{
	const struct tup *x = a, *y = b;
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	return (x->addr > y->addr) - (x->addr < y->addr);
}

static const struct rport *g_rports; /* for cmp_rport (qsort has no context argument) */
static int cmp_rport_idx(const void *a, const void *b)
{
	const struct rport *x = &g_rports[*(const size_t *)a], *y = &g_rports[*(const size_t *)b];
	int c = strcmp(x->sig, y->sig);
	return c ? c : strcmp(x->key, y->key);
}

/* LessEndpointAddress: the IP's bytes, then the targetRef uid */
static int cmp_addr(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
	int c = strcmp(str(x, "ip"), str(y, "ip"));
	return c ? c : strcmp(str(get(x, "targetRef"), "uid"), str(get(y, "targetRef"), "uid"));
}

struct repack {
	struct rsubset *v;
	size_t n;
};

static void repack_free(struct repack *r)
{
	for (size_t i = 0; i < r->n; i++) {
		cJSON_Delete(r->v[i].ports);
		free(r->v[i].ready);
		free(r->v[i].unready);
	}
	free(r->v);
	*r = (struct repack){0};
}

static int repack(const cJSON *subsets, struct repack *out)
{
	size_t n_occ = 0, n_ports = 0, n_tup = 0, o = 0, t = 0, pi = 0;
	const cJSON *s, *a, *p;
	struct occ *occ = NULL;
	size_t *uid_of = NULL, *idx = NULL;
	struct tup *tup = NULL;
	struct rport *rp = NULL;
	int r = -ENOMEM;

	*out = (struct repack){0};
	cJSON_ArrayForEach(s, subsets)
	{
		size_t na = (size_t)cJSON_GetArraySize(get(s, "addresses")) +
		            (size_t)cJSON_GetArraySize(get(s, "notReadyAddresses"));
		size_t np = (size_t)cJSON_GetArraySize(get(s, "ports"));
		n_occ += na;
		n_ports += np ? np : 1;
		n_tup += na * (np ? np : 1);
	}
	occ = calloc(n_occ + 1, sizeof(*occ));
	uid_of = calloc(n_occ + 1, sizeof(*uid_of));
	tup = calloc(n_tup + 1, sizeof(*tup));
	rp = calloc(n_ports + 1, sizeof(*rp));
	idx = calloc(n_ports + 1, sizeof(*idx));
	if (!occ || !uid_of || !tup || !rp || !idx)
		goto out;

	/* every address occurrence, in order; its identity is the first of its key */
	cJSON_ArrayForEach(s, subsets)
	{
		for (int ready = 1; ready >= 0; ready--) {
			cJSON_ArrayForEach(a, get(s, ready ? "addresses" : "notReadyAddresses"))
			{
				struct sb b = {0};
				sb_add(&b, str(a, "ip"));
				sb_add(&b, "\x1f");
				sb_add(&b, str(get(a, "targetRef"), "uid"));
				if (!(occ[o].key = sb_take(&b)))
					goto out;
				occ[o].order = o;
				occ[o].addr = a;
				o++;
			}
		}
	}
	struct occ *sorted = malloc((n_occ + 1) * sizeof(*sorted));
	if (!sorted)
		goto out;
	memcpy(sorted, occ, n_occ * sizeof(*occ));
	qsort(sorted, n_occ, sizeof(*sorted), cmp_occ);
	for (size_t i = 0, first = 0; i < n_occ; i++) {
		if (i == 0 || strcmp(sorted[i].key, sorted[i - 1].key))
			first = sorted[i].order;
		uid_of[sorted[i].order] = first;
	}
	free(sorted);

	/* every port (or sentinel) of every subset, and its (address, ready) tuples */
	o = 0;
	size_t si = 0;
	cJSON_ArrayForEach(s, subsets)
	{
		size_t na = (size_t)cJSON_GetArraySize(get(s, "addresses")),
		       nn = (size_t)cJSON_GetArraySize(get(s, "notReadyAddresses"));
		const cJSON *ports = get(s, "ports");
		size_t np = (size_t)cJSON_GetArraySize(ports), pj = 0;
		for (size_t k = 0; k < (np ? np : 1); k++) {
			struct sb b = {0};
			p = np ? cJSON_GetArrayItem(ports, (int)k) : NULL;
			if (!p) {
				sb_add(&b, "\x01sentinel");
			} else {
				char *k1;
				const cJSON *port = get(p, "port");
				sb_add(&b, "=");
				sb_add(&b, str(p, "name"));
				sb_add(&b, "\x1f");
				sb_addf(&b, "%lld",
				        cJSON_IsNumber(port) ? (long long)port->valuedouble : 0);
				sb_add(&b, "\x1f");
				sb_add(&b, str(p, "protocol"));
				if ((k1 = (char *)str0(p, "appProtocol"))) {
					/* a Go map key holding a pointer: each occurrence its own
					 * key */
					sb_add(&b, "\x1f");
					sb_add(&b, k1);
					sb_addf(&b, "\x1f#%lld", (long long)si);
					sb_addf(&b, ".%lld", (long long)pj);
				}
			}
			pj++;
			if (!(rp[pi].key = sb_take(&b)))
				goto out;
			rp[pi].port = p;
			for (size_t m = 0; m < na + nn; m++)
				tup[t++] = (struct tup){
				        .port = pi, .addr = uid_of[o + m], .ready = m < na};
			pi++;
		}
		o += na + nn;
		si++;
	}
	/* the same port key in several subsets is one port: renumber to its first */
	for (size_t i = 0; i < pi; i++)
		for (size_t j = 0; j < i; j++)
			if (!strcmp(rp[i].key, rp[j].key)) {
				for (size_t k = 0; k < t; k++)
					if (tup[k].port == i)
						tup[k].port = j;
				rp[i].n = (size_t)-1; /* merged */
				break;
			}
	qsort(tup, t, sizeof(*tup), cmp_tup);
	/* collapse (port, address): not ready wins */
	size_t w = 0;
	for (size_t i = 0; i < t; i++) {
		if (w && tup[w - 1].port == tup[i].port && tup[w - 1].addr == tup[i].addr) {
			tup[w - 1].ready = tup[w - 1].ready && tup[i].ready;
			continue;
		}
		tup[w++] = tup[i];
	}
	t = w;
	for (size_t i = 0; i < pi; i++)
		if (rp[i].n != (size_t)-1)
			rp[i].n = 0;
	for (size_t i = 0; i < t; i++) {
		struct rport *x = &rp[tup[i].port];
		if (!x->n)
			x->first = i;
		x->n++;
	}
	/* each port's address set as text; a port with no address disappears */
	size_t n_live = 0;
	for (size_t i = 0; i < pi; i++) {
		struct sb b = {0};
		if (rp[i].n == (size_t)-1 || rp[i].n == 0)
			continue;
		for (size_t k = rp[i].first; k < rp[i].first + rp[i].n; k++) {
			sb_addf(&b, "%lld", (long long)tup[k].addr);
			sb_add(&b, tup[k].ready ? "r," : "n,");
		}
		if (!(rp[i].sig = sb_take(&b)))
			goto out;
		idx[n_live++] = i;
	}
	g_rports = rp;
	qsort(idx, n_live, sizeof(*idx), cmp_rport_idx);
	out->v = calloc(n_live + 1, sizeof(*out->v));
	if (!out->v)
		goto out;
	for (size_t i = 0; i < n_live;) {
		size_t j = i;
		struct rsubset *rs = &out->v[out->n++];
		const struct rport *x = &rp[idx[i]];
		if (!(rs->ports = cJSON_CreateArray()))
			goto out;
		while (j < n_live && !strcmp(rp[idx[j]].sig, x->sig)) {
			if (rp[idx[j]].port)
				cJSON_AddItemReferenceToArray(rs->ports, (cJSON *)rp[idx[j]].port);
			j++;
		}
		rs->ready = calloc(x->n + 1, sizeof(*rs->ready));
		rs->unready = calloc(x->n + 1, sizeof(*rs->unready));
		if (!rs->ready || !rs->unready)
			goto out;
		for (size_t k = x->first; k < x->first + x->n; k++) {
			if (tup[k].ready)
				rs->ready[rs->n_ready++] = occ[tup[k].addr].addr;
			else
				rs->unready[rs->n_unready++] = occ[tup[k].addr].addr;
		}
		qsort(rs->ready, rs->n_ready, sizeof(*rs->ready), cmp_addr);
		qsort(rs->unready, rs->n_unready, sizeof(*rs->unready), cmp_addr);
		i = j;
	}
	r = 0;
out:
	for (size_t i = 0; occ && i < n_occ; i++)
		free(occ[i].key);
	for (size_t i = 0; rp && i < n_ports; i++) {
		free(rp[i].key);
		free(rp[i].sig);
	}
	free(occ);
	free(uid_of);
	free(tup);
	free(rp);
	free(idx);
	if (r < 0)
		repack_free(out);
	return r;
}

/* ---- the desired state --------------------------------------------------------------------- */
struct dep {
	char *key;
	cJSON *ep;
	size_t seq;
};

struct dgroup {
	char *key; /* addrTypePortMapKey */
	bool v6;
	cJSON *ports;  /* EndpointSlice ports (owned) */
	struct dep *v; /* after seal: unique by key (the last inserted wins), sorted */
	size_t n, cap;
};

struct desired {
	struct dgroup *g;
	size_t n, cap;
};

static void desired_free(struct desired *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->g[i].key);
		cJSON_Delete(d->g[i].ports);
		for (size_t k = 0; k < d->g[i].n; k++) {
			free(d->g[i].v[k].key);
			cJSON_Delete(d->g[i].v[k].ep);
		}
		free(d->g[i].v);
	}
	free(d->g);
}

static int cmp_dep(const void *a, const void *b)
{
	const struct dep *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

static void group_seal(struct dgroup *g)
{
	size_t w = 0;
	if (g->n) /* never qsort a NULL array, even of 0 items */
		qsort(g->v, g->n, sizeof(*g->v), cmp_dep);
	for (size_t i = 0; i < g->n; i++) {
		if (w && !strcmp(g->v[w - 1].key, g->v[i].key)) { /* Insert replaces */
			free(g->v[w - 1].key);
			cJSON_Delete(g->v[w - 1].ep);
			g->v[w - 1] = g->v[i];
			continue;
		}
		g->v[w++] = g->v[i];
	}
	g->n = w;
}

static const struct dep *group_get(const struct dgroup *g, const char *key)
{
	size_t lo = 0, hi = g->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(g->v[mid].key, key);
		if (!c)
			return &g->v[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* initPorts: the group of key, created (with ports) if new; its ports replaced otherwise */
static struct dgroup *group_for(struct desired *d, const cJSON *slice_ports, bool v6)
{
	char *key = port_map_key(v6 ? "IPv6" : "IPv4", slice_ports);
	if (!key)
		return NULL;
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->g[i].key, key)) {
			cJSON *dup = cJSON_Duplicate(slice_ports, true);
			free(key);
			if (!dup)
				return NULL;
			cJSON_Delete(d->g[i].ports);
			d->g[i].ports = dup;
			return &d->g[i];
		}
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 8;
		struct dgroup *g = realloc(d->g, cap * sizeof(*g));
		if (!g) {
			free(key);
			return NULL;
		}
		d->g = g;
		d->cap = cap;
	}
	struct dgroup *g = &d->g[d->n];
	*g = (struct dgroup){.key = key, .v6 = v6, .ports = cJSON_Duplicate(slice_ports, true)};
	if (!g->ports) {
		free(key);
		return NULL;
	}
	d->n++;
	return g;
}

/* epPortsToEpsPorts */
static cJSON *slice_ports(const cJSON *ep_ports)
{
	cJSON *out = cJSON_CreateArray();
	const cJSON *p;
	size_t n = (size_t)cJSON_GetArraySize(ep_ports), i = 0;
	char **keys = calloc(n + 1, sizeof(*keys));
	cJSON **items = calloc(n + 1, sizeof(*items));

	if (!out || !keys || !items)
		goto fail;
	cJSON_ArrayForEach(p, ep_ports)
	{
		cJSON *q = cJSON_CreateObject();
		const cJSON *port = get(p, "port");
		if (!q)
			goto fail;
		items[i] = q;
		cJSON_AddStringToObject(q, "name", str(p, "name"));
		cJSON_AddNumberToObject(q, "port", cJSON_IsNumber(port) ? port->valuedouble : 0);
		cJSON_AddStringToObject(q, "protocol", str(p, "protocol"));
		if (str0(p, "appProtocol"))
			cJSON_AddStringToObject(q, "appProtocol", str0(p, "appProtocol"));
		if (!(keys[i] = port_key1(q)))
			goto fail;
		i++;
	}
	/* a sorted order (upstream: the order of their hashes) */
	for (size_t a = 1; a < i; a++)
		for (size_t b = a; b > 0 && strcmp(keys[b - 1], keys[b]) > 0; b--) {
			char *tk = keys[b];
			cJSON *ti = items[b];
			keys[b] = keys[b - 1];
			items[b] = items[b - 1];
			keys[b - 1] = tk;
			items[b - 1] = ti;
		}
	for (size_t k = 0; k < i; k++) {
		cJSON_AddItemToArray(out, items[k]);
		items[k] = NULL;
		free(keys[k]);
	}
	free(keys);
	free(items);
	return out;
fail:
	for (size_t k = 0; k < n; k++) {
		if (keys)
			free(keys[k]);
		if (items)
			cJSON_Delete(items[k]);
	}
	free(keys);
	free(items);
	cJSON_Delete(out);
	return NULL;
}

/* addressToEndpoint; *v6 its type. NULL with *invalid for an address that is not an IP. */
static cJSON *address_to_endpoint(const cJSON *addr, bool ready, bool *v6, bool *invalid)
{
	char ip[64];
	const cJSON *ref = get(addr, "targetRef"), *node = get(addr, "nodeName");
	cJSON *ep, *arr;

	*invalid = false;
	if (esm_canon_ip(str(addr, "ip"), ip, sizeof(ip), v6) < 0) {
		*invalid = true;
		return NULL;
	}
	if (!(ep = cJSON_CreateObject()))
		return NULL;
	if (!(arr = cJSON_AddArrayToObject(ep, "addresses")))
		goto fail;
	cJSON_AddItemToArray(arr, cJSON_CreateString(ip));
	cJSON *conds = cJSON_AddObjectToObject(ep, "conditions");
	if (!conds || !cJSON_AddBoolToObject(conds, "ready", ready))
		goto fail;
	if (str(addr, "hostname")[0])
		cJSON_AddStringToObject(ep, "hostname", str(addr, "hostname"));
	if (cJSON_IsString(node))
		cJSON_AddStringToObject(ep, "nodeName", node->valuestring);
	if (cJSON_IsObject(ref))
		cJSON_AddItemToObject(ep, "targetRef", cJSON_Duplicate(ref, true));
	if (cJSON_GetArraySize(arr) != 1)
		goto fail;
	return ep;
fail:
	cJSON_Delete(ep);
	return NULL;
}

static int group_add(struct dgroup *g, cJSON *ep)
{
	char *key = endpoint_key(ep);
	if (!key) {
		cJSON_Delete(ep);
		return -ENOMEM;
	}
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 16;
		struct dep *v = realloc(g->v, cap * sizeof(*v));
		if (!v) {
			free(key);
			cJSON_Delete(ep);
			return -ENOMEM;
		}
		g->v = v;
		g->cap = cap;
	}
	g->v[g->n] = (struct dep){.key = key, .ep = ep, .seq = g->n};
	g->n++;
	return 0;
}

/* ---- the plan ------------------------------------------------------------------------------ */
static int plan_add(struct esm_plan *p, enum esm_op op, cJSON *obj)
{
	if (!obj)
		return -ENOMEM;
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 8;
		struct esm_action *v = realloc(p->v, cap * sizeof(*v));
		if (!v) {
			cJSON_Delete(obj);
			return -ENOMEM;
		}
		p->v = v;
		p->cap = cap;
	}
	p->v[p->n++] = (struct esm_action){.op = op, .obj = obj};
	return 0;
}

void esm_plan_free(struct esm_plan *p)
{
	for (size_t i = 0; p && i < p->n; i++)
		cJSON_Delete(p->v[i].obj);
	if (p)
		free(p->v);
	if (p)
		*p = (struct esm_plan){0};
}

/* newEndpointSlice, with the group's endpoints */
static cJSON *new_slice(const cJSON *eps, const struct dgroup *g, const char *name, int max)
{
	const cJSON *md = get(eps, "metadata"), *it;
	cJSON *s = cJSON_CreateObject(), *m, *labels, *ann, *refs, *ref, *arr;
	char prefix[320];

	if (!s)
		return NULL;
	cJSON_AddStringToObject(s, "apiVersion", "discovery.k8s.io/v1");
	cJSON_AddStringToObject(s, "kind", "EndpointSlice");
	if (!(m = cJSON_AddObjectToObject(s, "metadata")))
		goto fail;
	if (name) {
		cJSON_AddStringToObject(m, "name", name);
	} else {
		esm_slice_prefix(str(md, "name"), prefix, sizeof(prefix));
		cJSON_AddStringToObject(m, "generateName", prefix);
	}
	cJSON_AddStringToObject(m, "namespace", str(md, "namespace"));
	if (!(labels = cJSON_AddObjectToObject(m, "labels")))
		goto fail;
	cJSON_ArrayForEach(it, get(md, "labels")) if (cJSON_IsString(it) &&
	                                              strcmp(it->string, ESM_LABEL_SVC) &&
	                                              strcmp(it->string, ESM_LABEL_MGD))
	        cJSON_AddStringToObject(labels, it->string, it->valuestring);
	cJSON_AddStringToObject(labels, ESM_LABEL_SVC, str(md, "name"));
	cJSON_AddStringToObject(labels, ESM_LABEL_MGD, ESM_MANAGED_BY);
	if (!(ann = cJSON_CreateObject()))
		goto fail;
	cJSON_ArrayForEach(it, get(md, "annotations")) if (cJSON_IsString(it) &&
	                                                   strcmp(it->string, ESM_ANN_TRIGGER) &&
	                                                   strcmp(it->string, ESM_ANN_APPLIED))
	        cJSON_AddStringToObject(ann, it->string, it->valuestring);
	if (ann->child)
		cJSON_AddItemToObject(m, "annotations", ann);
	else
		cJSON_Delete(ann);
	if (!(refs = cJSON_AddArrayToObject(m, "ownerReferences")) || !(ref = cJSON_CreateObject()))
		goto fail;
	cJSON_AddItemToArray(refs, ref);
	cJSON_AddStringToObject(ref, "apiVersion", "v1");
	cJSON_AddStringToObject(ref, "kind", "Endpoints");
	cJSON_AddStringToObject(ref, "name", str(md, "name"));
	cJSON_AddStringToObject(ref, "uid", str(md, "uid"));
	cJSON_AddBoolToObject(ref, "controller", true);
	cJSON_AddBoolToObject(ref, "blockOwnerDeletion", true);
	cJSON_AddStringToObject(s, "addressType", g->v6 ? "IPv6" : "IPv4");
	if (!(arr = cJSON_AddArrayToObject(s, "endpoints")))
		goto fail;
	for (size_t i = 0; i < g->n && (int)i < max; i++)
		cJSON_AddItemToArray(arr, cJSON_Duplicate(g->v[i].ep, true));
	cJSON_AddItemToObject(s, "ports", cJSON_Duplicate(g->ports, true));
	if (cJSON_GetArraySize(arr) != (int)(g->n < (size_t)max ? g->n : (size_t)max) ||
	    !get(s, "ports"))
		goto fail;
	return s;
fail:
	cJSON_Delete(s);
	return NULL;
}

/* needRebuildExistingSlices */
static bool need_rebuild(const cJSON *eps, const cJSON *slice)
{
	const cJSON *md = get(eps, "metadata"), *r;
	cJSON_ArrayForEach(r, get(get(slice, "metadata"), "ownerReferences"))
	{
		if (!strcmp(str(r, "kind"), "Endpoints") &&
		    !strcmp(str(r, "name"), str(md, "name")) &&
		    strcmp(str(r, "uid"), str(md, "uid")))
			return true;
	}
	return false;
}

/* totalChanges of the first slice against the group */
static void total_changes(const cJSON *slice, const struct dgroup *g, int *added, int *updated,
                          int *removed)
{
	const cJSON *e;
	int matches = 0;
	*added = *updated = *removed = 0;
	cJSON_ArrayForEach(e, get(slice, "endpoints"))
	{
		char *k = endpoint_key(e);
		const struct dep *d = k ? group_get(g, k) : NULL;
		free(k);
		if (!d) {
			(*removed)++;
			continue;
		}
		matches++;
		if (!endpoints_equal_beyond_hash(d->ep, e))
			(*updated)++;
	}
	*added = (int)g->n - matches;
}

/* the first slice needs no write: no change of endpoints (totalChanges all zero), labels,
 * annotations, owner */
static bool slice_matches(const cJSON *eps, const cJSON *slice, const struct dgroup *g,
                          struct esm_plan *ret)
{
	static const char *const skip_labels[] = {ESM_LABEL_MGD, ESM_LABEL_SVC, NULL};
	static const char *const skip_ann[] = {ESM_ANN_TRIGGER, ESM_ANN_APPLIED, NULL};
	const cJSON *md = get(eps, "metadata"), *smd = get(slice, "metadata");
	int added, updated, removed;

	total_changes(slice, g, &added, &updated, &removed);
	ret->added += added;
	ret->updated += updated;
	ret->removed += removed;
	if (added || updated || removed)
		return false;
	if (!map_equal(get(md, "labels"), get(smd, "labels"), NULL, skip_labels))
		return false;
	if (!map_equal(get(md, "annotations"), get(smd, "annotations"), skip_ann, NULL))
		return false;
	return !need_rebuild(eps, slice);
}

struct egroup {
	char *key;
	const cJSON **v;
	size_t n;
	bool desired;
};

static int cmp_slice_name(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
	return strcmp(str(get(x, "metadata"), "name"), str(get(y, "metadata"), "name"));
}

int esm_reconcile(const cJSON *eps, const cJSON *const *slices, size_t n_slices, int max_per_subset,
                  struct esm_plan *ret)
{
	struct repack rp = {0};
	struct desired d = {0};
	struct egroup *eg = NULL;
	size_t n_eg = 0;
	cJSON **creates = NULL, **updates = NULL, **deletes = NULL, **keeps = NULL;
	size_t nc = 0, nu = 0, nd = 0, nk = 0;
	int r = -ENOMEM;

	*ret = (struct esm_plan){0};
	if (max_per_subset < 1)
		max_per_subset = 1;
	if ((r = repack(get(eps, "subsets"), &rp)) < 0)
		goto out;
	r = -ENOMEM;
	for (size_t i = 0; i < rp.n; i++) {
		struct rsubset *s = &rp.v[i];
		cJSON *ports = slice_ports(s->ports);
		struct dgroup *g4, *g6;
		size_t g4i, g6i;
		int added = 0;
		if (!ports)
			goto out;
		g4 = group_for(&d, ports, false);
		g4i = g4 ? (size_t)(g4 - d.g) : 0;
		g6 = g4 ? group_for(&d, ports, true) : NULL;
		g6i = g6 ? (size_t)(g6 - d.g) : 0;
		cJSON_Delete(ports);
		if (!g4 || !g6)
			goto out;
		for (size_t k = 0; k < s->n_ready + s->n_unready; k++) {
			bool ready = k < s->n_ready, v6, invalid;
			const cJSON *a = ready ? s->ready[k] : s->unready[k - s->n_ready];
			if (added >= max_per_subset)
				break;
			cJSON *ep = address_to_endpoint(a, ready, &v6, &invalid);
			if (!ep && !invalid)
				goto out;
			if (invalid) {
				ret->invalid++;
				continue;
			}
			if (group_add(&d.g[v6 ? g6i : g4i], ep) < 0)
				goto out;
			added++;
		}
		ret->skipped += (int)(s->n_ready + s->n_unready) - added;
	}
	for (size_t i = 0; i < d.n; i++) {
		group_seal(&d.g[i]);
		ret->desired += (int)d.g[i].n;
	}

	/* the existing slices by key, each list in name order */
	eg = calloc(n_slices + 1, sizeof(*eg));
	creates = calloc(d.n + 1, sizeof(*creates));
	updates = calloc(d.n + 1, sizeof(*updates));
	deletes = calloc(n_slices + 1, sizeof(*deletes));
	keeps = calloc(n_slices + 1, sizeof(*keeps));
	if (!eg || !creates || !updates || !deletes || !keeps)
		goto out;
	for (size_t i = 0; i < n_slices; i++) {
		const char *at = str(slices[i], "addressType");
		char *key = port_map_key(at, get(slices[i], "ports"));
		size_t k;
		if (!key)
			goto out;
		for (k = 0; k < n_eg; k++)
			if (!strcmp(eg[k].key, key))
				break;
		if (k == n_eg) {
			eg[n_eg].key = key;
			if (!(eg[n_eg].v = calloc(n_slices + 1, sizeof(*eg[n_eg].v)))) {
				n_eg++;
				goto out;
			}
			n_eg++;
		} else {
			free(key);
		}
		eg[k].v[eg[k].n++] = slices[i];
	}
	for (size_t k = 0; k < n_eg; k++)
		qsort(eg[k].v, eg[k].n, sizeof(*eg[k].v), cmp_slice_name);

	/* reconcileByPortMapping, per desired group */
	for (size_t i = 0; i < d.n; i++) {
		struct dgroup *g = &d.g[i];
		struct egroup *e = NULL;
		for (size_t k = 0; k < n_eg; k++)
			if (!strcmp(eg[k].key, g->key))
				e = &eg[k];
		if (e)
			e->desired = true;
		/* the metrics cache's entry of this key (a key without endpoints: 0 and 0) */
		ret->cache_endpoints += (int)g->n;
		ret->cache_desired_slices += ((int)g->n + max_per_subset - 1) / max_per_subset;
		if (g->n == 0) {
			for (size_t k = 0; e && k < e->n; k++) {
				deletes[nd++] = (cJSON *)e->v[k];
				ret->removed += cJSON_GetArraySize(get(e->v[k], "endpoints"));
			}
			continue;
		}
		ret->cache_slices++; /* the one kept, rewritten or created */
		const char *name = NULL;
		if (e && e->n) {
			for (size_t k = 1; k < e->n; k++)
				deletes[nd++] = (cJSON *)e->v[k];
			if (slice_matches(eps, e->v[0], g, ret)) {
				keeps[nk++] = (cJSON *)e->v[0];
				continue;
			}
			name = str(get(e->v[0], "metadata"), "name");
		} else {
			ret->added += (int)g->n;
		}
		cJSON *s = new_slice(eps, g, name, max_per_subset);
		if (!s)
			goto out;
		if (name)
			updates[nu++] = s;
		else
			creates[nc++] = s;
	}
	for (size_t k = 0; k < n_eg; k++)
		for (size_t j = 0; !eg[k].desired && j < eg[k].n; j++)
			deletes[nd++] = (cJSON *)eg[k].v[j];

	/* recycleSlices: per address type, the i-th create takes the i-th delete's name */
	for (int v6 = 0; v6 <= 1; v6++) {
		const char *at = v6 ? "IPv6" : "IPv4";
		for (;;) {
			size_t c = nc, x = nd;
			for (size_t k = 0; k < nc && c == nc; k++)
				if (creates[k] && !strcmp(str(creates[k], "addressType"), at))
					c = k;
			for (size_t k = 0; k < nd && x == nd; k++)
				if (deletes[k] && !strcmp(str(deletes[k], "addressType"), at))
					x = k;
			if (c == nc || x == nd)
				break;
			cJSON *m = cJSON_GetObjectItemCaseSensitive(creates[c], "metadata");
			if (!cJSON_AddStringToObject(m, "name",
			                             str(get(deletes[x], "metadata"), "name")))
				goto out;
			updates[nu++] = creates[c];
			creates[c] = NULL;
			deletes[x] = NULL;
		}
	}

	const cJSON *dts = get(get(eps, "metadata"), "deletionTimestamp");
	bool deleting = dts && !cJSON_IsNull(dts);
	for (size_t k = 0; k < nc; k++) {
		if (!creates[k] || deleting)
			continue;
		cJSON *c = creates[k];
		creates[k] = NULL;
		if ((r = plan_add(ret, ESM_CREATE, c)) < 0)
			goto out;
	}
	for (size_t k = 0; k < nu; k++) {
		cJSON *u = updates[k];
		updates[k] = NULL;
		if ((r = plan_add(ret, ESM_UPDATE, u)) < 0)
			goto out;
	}
	for (size_t k = 0; k < nd; k++)
		if (deletes[k] &&
		    (r = plan_add(ret, ESM_DELETE, cJSON_Duplicate(deletes[k], true))) < 0)
			goto out;
	for (size_t k = 0; k < nk; k++)
		if ((r = plan_add(ret, ESM_KEEP, cJSON_Duplicate(keeps[k], true))) < 0)
			goto out;
	r = 0;
out:
	for (size_t k = 0; creates && k < nc; k++)
		cJSON_Delete(creates[k]);
	for (size_t k = 0; updates && k < nu; k++)
		cJSON_Delete(updates[k]);
	for (size_t k = 0; eg && k < n_eg; k++) {
		free(eg[k].key);
		free(eg[k].v);
	}
	free(eg);
	free(creates);
	free(updates);
	free(deletes);
	free(keeps);
	desired_free(&d);
	repack_free(&rp);
	return r;
}
