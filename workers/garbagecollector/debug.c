/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/garbagecollector/debug.c: the dependency graph as DOT and the queue metric names
 * (see debug.h). Source of the format: pkg/controller/garbagecollector/dump.go (v1.37.2).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shm/records.h"
#include "workers/garbagecollector/debug.h"

const char *gc_queue_metric_name(const char *queue)
{
	static const char *const map[][2] = {
	        {"gc-attempt-to-delete", "garbage_collector_attempt_to_delete"},
	        {"gc-attempt-to-orphan", "garbage_collector_attempt_to_orphan"},
	        {"gc-graph-changes", "garbage_collector_graph_changes"},
	};
	for (size_t i = 0; queue && i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(queue, map[i][0]))
			return map[i][1];
	return queue;
}

/* ---- marshalDOT ------------------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at p (1..4), or 0. */
static size_t utf8_len(const unsigned char *p)
{
	size_t n;
	uint32_t c;
	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0)
		n = 2, c = p[0] & 0x1f;
	else if ((p[0] & 0xf0) == 0xe0)
		n = 3, c = p[0] & 0x0f;
	else if ((p[0] & 0xf8) == 0xf0)
		n = 4, c = p[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if ((n == 2 && c < 0x80) || (n == 3 && c < 0x800) || (n == 4 && c < 0x10000) ||
	    c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return n;
}

/* Go's %q (strconv.Quote) for the strings kcmd sees: ASCII escapes as Go writes them, valid
 * multi-byte UTF-8 kept (Go keeps printable runes; non-printable ones are rare enough in
 * names that they are kept too), invalid bytes as \x.. */
static void go_quote(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	fputc('"', f);
	while (*p) {
		size_t n = utf8_len(p);
		if (n > 1) {
			fwrite(p, 1, n, f);
			p += n;
			continue;
		}
		unsigned char c = *p++;
		switch (c) {
		case '\a':
			fputs("\\a", f);
			break;
		case '\b':
			fputs("\\b", f);
			break;
		case '\f':
			fputs("\\f", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\v':
			fputs("\\v", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '"':
			fputs("\\\"", f);
			break;
		default:
			if (c < 0x20 || c >= 0x7f)
				fprintf(f, "\\x%02x", c);
			else
				fputc(c, f);
		}
	}
	fputc('"', f);
}

static void attr(FILE *f, const char *k, const char *v)
{
	fprintf(f, "    %s=", k);
	go_quote(f, v);
	fputc('\n', f);
}

static void vertex(FILE *f, const struct gc_dot_vertex *v)
{
	char *label = NULL;
	size_t ll = 0;
	FILE *lf = open_memstream(&label, &ll);
	if (!lf)
		return;
	fprintf(lf, "uid=%s\nnamespace=%s\n%s.%s%s%s/%s\n", v->uid ? v->uid : "",
	        v->ns ? v->ns : "", v->kind ? v->kind : "", v->version ? v->version : "",
	        v->group && v->group[0] ? "." : "", v->group ? v->group : "",
	        v->name ? v->name : "");
	const char *conds[4];
	size_t nc = 0;
	if (v->being_deleted)
		conds[nc++] = "beingDeleted";
	if (v->deleting_dependents)
		conds[nc++] = "deletingDependents";
	if (v->virtual_)
		conds[nc++] = "virtual";
	if (v->missing)
		conds[nc++] = "missingFromGraph";
	for (size_t i = 0; i < nc; i++)
		fprintf(lf, "%s%s", i ? "," : "", conds[i]);
	if (nc)
		fputc('\n', lf);
	fclose(lf);
	fputs("  ", f);
	go_quote(f, v->uid);
	fputs(" [\n", f);
	attr(f, "label", label);
	attr(f, "group", v->group);
	attr(f, "version", v->version);
	attr(f, "kind", v->kind);
	attr(f, "namespace", v->ns);
	attr(f, "name", v->name);
	attr(f, "uid", v->uid);
	attr(f, "missing", v->missing ? "true" : "false");
	attr(f, "beingDeleted", v->being_deleted ? "true" : "false");
	attr(f, "deletingDependents", v->deleting_dependents ? "true" : "false");
	attr(f, "virtual", v->virtual_ ? "true" : "false");
	fputs("  ];\n", f);
	free(label);
}

int gc_dot_marshal(const struct gc_dot_vertex *v, size_t nv, const struct gc_dot_edge *e, size_t ne,
                   char **ret, size_t *len)
{
	char *buf = NULL;
	size_t bl = 0;
	FILE *f = open_memstream(&buf, &bl);
	if (!f)
		return -ENOMEM;
	fputs("strict digraph full {\n", f);
	if (nv)
		fputs("  // Node definitions.\n", f);
	for (size_t i = 0; i < nv; i++)
		vertex(f, &v[i]);
	if (ne)
		fputs("  // Edge definitions.\n", f);
	for (size_t i = 0; i < ne; i++) {
		fputs("  ", f);
		go_quote(f, e[i].from);
		fputs(" -> ", f);
		go_quote(f, e[i].to);
		fputs(";\n", f);
	}
	fputs("}\n", f);
	if (fclose(f) != 0 || !buf) {
		free(buf);
		return -ENOMEM;
	}
	*ret = buf;
	*len = bl;
	return 0;
}

/* ---- the graph from the arena ------------------------------------------------------------ */

struct dref {
	char *uid, *av, *kind, *name;
	size_t owner; /* node index, resolved */
};

struct dnode {
	char *uid, *group, *version, *kind, *ns, *name;
	bool being_deleted, deleting_dependents, virtual_;
	size_t first_ref, n_refs; /* into refs (owners) */
	size_t n_deps, first_dep; /* into deps (dependent node indexes) */
	int sel;                  /* selected (0/1) */
};

struct dgraph {
	struct dnode *n;
	size_t nn, cap;
	struct dref *r;
	size_t nr, rcap;
	size_t *deps;
	/* the type being listed */
	char group[64], version[64], kind[64];
	int err;
};

static char *dup(const char *s)
{
	return strdup(s ? s : "");
}

static int push_node(struct dgraph *g, struct dnode **ret)
{
	if (g->nn == g->cap) {
		size_t c = g->cap ? 2 * g->cap : 256;
		struct dnode *p = realloc(g->n, c * sizeof(*p));
		if (!p)
			return -ENOMEM;
		g->n = p;
		g->cap = c;
	}
	*ret = &g->n[g->nn++];
	memset(*ret, 0, sizeof(**ret));
	return 0;
}

static int visit(const struct shm_obj *o, void *ud)
{
	struct dgraph *g = ud;
	struct dnode *d;
	if (push_node(g, &d) < 0)
		return -ENOMEM;
	d->uid = dup(o->uid);
	d->group = dup(g->group);
	d->version = dup(g->version);
	d->kind = dup(g->kind);
	d->ns = dup(o->ns);
	d->name = dup(o->name);
	struct shm_rec_view rv;
	if (shm_rec_parse(o->payload, o->payload_len, &rv) == 0) {
		d->being_deleted = rv.hdr.deletion_ts != 0;
		d->deleting_dependents =
		        d->being_deleted && (rv.hdr.flags & SHM_REC_FIN_FOREGROUND);
	}
	d->first_ref = g->nr;
	d->n_refs = o->n_owners;
	if (g->nr + o->n_owners > g->rcap) {
		size_t c = g->rcap ? 2 * g->rcap : 256;
		while (c < g->nr + o->n_owners)
			c *= 2;
		struct dref *p = realloc(g->r, c * sizeof(*p));
		if (!p)
			return -ENOMEM;
		g->r = p;
		g->rcap = c;
	}
	for (size_t i = 0; i < o->n_owners; i++)
		g->r[g->nr++] = (struct dref){.uid = dup(o->owners[i].uid),
		                              .av = dup(o->owners[i].api_version),
		                              .kind = dup(o->owners[i].kind),
		                              .name = dup(o->owners[i].name)};
	if (!d->uid || !d->group || !d->version || !d->kind || !d->ns || !d->name)
		return -ENOMEM;
	for (size_t i = d->first_ref; i < g->nr; i++)
		if (!g->r[i].uid || !g->r[i].av || !g->r[i].kind || !g->r[i].name)
			return -ENOMEM;
	return 0;
}

static int cmp_node(const void *a, const void *b)
{
	const struct dnode *x = a, *y = b;
	int c = strcmp(x->uid, y->uid);
	/* equal uids (an object seen in two resources, a virtual node added twice): keep the
	 * observed one first, then the earliest */
	if (c)
		return c;
	if (x->virtual_ != y->virtual_)
		return x->virtual_ ? 1 : -1;
	return x->first_ref < y->first_ref ? -1 : x->first_ref > y->first_ref;
}

/* Binary search among the first n nodes (sorted by uid). */
static ssize_t find_node_in(const struct dgraph *g, size_t n, const char *uid)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(g->n[mid].uid, uid);
		if (!c)
			return (ssize_t)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static ssize_t find_node(const struct dgraph *g, const char *uid)
{
	return find_node_in(g, g->nn, uid);
}

static void free_node(struct dnode *d)
{
	free(d->uid);
	free(d->group);
	free(d->version);
	free(d->kind);
	free(d->ns);
	free(d->name);
}

static void dgraph_free(struct dgraph *g)
{
	for (size_t i = 0; i < g->nn; i++)
		free_node(&g->n[i]);
	for (size_t i = 0; i < g->nr; i++) {
		free(g->r[i].uid);
		free(g->r[i].av);
		free(g->r[i].kind);
		free(g->r[i].name);
	}
	free(g->n);
	free(g->r);
	free(g->deps);
}

/* Sorts by uid and drops later duplicates. */
static void sort_unique(struct dgraph *g)
{
	qsort(g->n, g->nn, sizeof(*g->n), cmp_node);
	size_t w = 0;
	for (size_t i = 0; i < g->nn; i++) {
		if (w && !strcmp(g->n[w - 1].uid, g->n[i].uid)) {
			free_node(&g->n[i]);
			continue;
		}
		g->n[w++] = g->n[i];
	}
	g->nn = w;
}

/* schema.ParseGroupVersion: "v1" -> ("", "v1"), "g/v" -> ("g", "v"), more slashes -> ("", "") */
static int split_gv(const char *av, char **group, char **version)
{
	const char *s = strchr(av, '/');
	if (!s) {
		*group = strdup("");
		*version = strdup(av);
	} else if (strchr(s + 1, '/')) {
		*group = strdup("");
		*version = strdup("");
	} else {
		*group = strndup(av, (size_t)(s - av));
		*version = strdup(s + 1);
	}
	return *group && *version ? 0 : -ENOMEM;
}

static int build(struct shm_arena *a, struct dgraph *g)
{
	struct shm_stats st;
	int r = shm_reader_stats(a, &st);
	if (r < 0)
		return r;
	for (uint64_t t = 0; t < st.n_types; t++) {
		struct shm_type_info ti;
		if (shm_reader_type_info(a, (uint16_t)t, &ti) < 0)
			continue;
		snprintf(g->group, sizeof(g->group), "%s", ti.group);
		snprintf(g->version, sizeof(g->version), "%s", ti.version);
		snprintf(g->kind, sizeof(g->kind), "%s", ti.kind);
		r = shm_reader_list(a, (uint16_t)t, visit, g);
		if (r < 0)
			return r;
	}
	sort_unique(g);
	/* virtual nodes for owners not observed, in the namespace of the first dependent */
	size_t observed = g->nn;
	for (size_t i = 0; i < observed; i++) {
		for (size_t k = g->n[i].first_ref; k < g->n[i].first_ref + g->n[i].n_refs; k++) {
			struct dref *ref = &g->r[k];
			if (find_node_in(g, observed, ref->uid) >= 0)
				continue;
			struct dnode *d;
			if (push_node(g, &d) < 0)
				return -ENOMEM;
			/* nn changed: the loop reads g->n[i] afresh each time */
			d->virtual_ = true;
			d->first_ref = g->nn - 1; /* order among duplicates: the first made wins */
			d->uid = dup(ref->uid);
			d->kind = dup(ref->kind);
			d->name = dup(ref->name);
			d->ns = dup(g->n[i].ns);
			if (!d->uid || !d->kind || !d->name || !d->ns ||
			    split_gv(ref->av, &d->group, &d->version) < 0)
				return -ENOMEM;
		}
	}
	sort_unique(g);
	/* first_ref of virtual nodes was only an order key; they have no refs */
	for (size_t i = 0; i < g->nn; i++)
		if (g->n[i].virtual_)
			g->n[i].first_ref = g->n[i].n_refs = 0;
	/* resolve owners, count and list dependents */
	for (size_t i = 0; i < g->nn; i++)
		for (size_t k = g->n[i].first_ref; k < g->n[i].first_ref + g->n[i].n_refs; k++) {
			ssize_t o = find_node(g, g->r[k].uid);
			g->r[k].owner = (size_t)o; /* always found: virtual nodes were added */
			g->n[o].n_deps++;
		}
	size_t total = 0;
	for (size_t i = 0; i < g->nn; i++) {
		g->n[i].first_dep = total;
		total += g->n[i].n_deps;
		g->n[i].n_deps = 0;
	}
	g->deps = malloc((total ? total : 1) * sizeof(*g->deps));
	if (!g->deps)
		return -ENOMEM;
	for (size_t i = 0; i < g->nn; i++)
		for (size_t k = g->n[i].first_ref; k < g->n[i].first_ref + g->n[i].n_refs; k++) {
			struct dnode *o = &g->n[g->r[k].owner];
			g->deps[o->first_dep + o->n_deps++] = i;
		}
	return 0;
}

struct vw {
	struct gc_dot_vertex v;
	size_t ord;
};

/* sort.SliceStable by uid: the original order breaks ties */
static int cmp_vertex(const void *a, const void *b)
{
	const struct vw *x = a, *y = b;
	int c = strcmp(x->v.uid, y->v.uid);
	return c ? c : (x->ord < y->ord ? -1 : x->ord > y->ord);
}

static int cmp_edge(const void *a, const void *b)
{
	const struct gc_dot_edge *x = a, *y = b;
	int c = strcmp(x->from, y->from);
	return c ? c : strcmp(x->to, y->to);
}

static int select_component(struct dgraph *g, const char *const *uids, size_t n_uids)
{
	size_t *stack = malloc((g->nn + n_uids + 1) * sizeof(*stack)), sp = 0;
	if (!stack)
		return -ENOMEM;
	for (size_t i = 0; i < n_uids; i++) {
		ssize_t x = find_node(g, uids[i]);
		if (x >= 0 && !g->n[x].sel) {
			g->n[x].sel = 1;
			stack[sp++] = (size_t)x;
		}
	}
	while (sp) {
		struct dnode *d = &g->n[stack[--sp]];
		for (size_t k = d->first_ref; k < d->first_ref + d->n_refs; k++) {
			size_t o = g->r[k].owner;
			if (!g->n[o].sel) {
				g->n[o].sel = 1;
				stack[sp++] = o;
			}
		}
		for (size_t k = d->first_dep; k < d->first_dep + d->n_deps; k++) {
			size_t o = g->deps[k];
			if (!g->n[o].sel) {
				g->n[o].sel = 1;
				stack[sp++] = o;
			}
		}
	}
	free(stack);
	return 0;
}

int gc_dot_render_arena(struct shm_arena *a, const char *const *uids, size_t n_uids, char **ret,
                        size_t *len)
{
	struct dgraph g = {0};
	struct vw *v = NULL;
	struct gc_dot_vertex *out_v = NULL;
	struct gc_dot_edge *e = NULL;
	char **missing_gv = NULL;
	size_t nv = 0, ne = 0, nm = 0;
	int r = build(a, &g);
	if (r < 0)
		goto out;
	if (n_uids) {
		r = select_component(&g, uids, n_uids);
		if (r < 0)
			goto out;
	} else {
		for (size_t i = 0; i < g.nn; i++)
			g.n[i].sel = 1;
	}
	r = -ENOMEM;
	v = calloc(g.nn + g.nr + 1, sizeof(*v));
	out_v = calloc(g.nn + g.nr + 1, sizeof(*out_v));
	e = calloc(g.nr + 1, sizeof(*e));
	missing_gv = calloc(2 * g.nr + 1, sizeof(*missing_gv));
	if (!v || !out_v || !e || !missing_gv)
		goto out;
	for (size_t i = 0; i < g.nn; i++) {
		struct dnode *d = &g.n[i];
		if (!d->sel || (!d->n_deps && !d->n_refs))
			continue;
		v[nv].ord = nv;
		v[nv++].v = (struct gc_dot_vertex){.uid = d->uid,
		                                   .group = d->group,
		                                   .version = d->version,
		                                   .kind = d->kind,
		                                   .ns = d->ns,
		                                   .name = d->name,
		                                   .being_deleted = d->being_deleted,
		                                   .deleting_dependents = d->deleting_dependents,
		                                   .virtual_ = d->virtual_};
	}
	for (size_t i = 0; i < g.nn; i++) {
		struct dnode *d = &g.n[i];
		if (!d->sel)
			continue;
		for (size_t k = d->first_ref; k < d->first_ref + d->n_refs; k++) {
			struct dref *ref = &g.r[k];
			if (!g.n[ref->owner].sel) {
				/* NewMissingdotVertex: the reference's coordinates, no namespace */
				char **gv = &missing_gv[2 * nm++];
				if (split_gv(ref->av, &gv[0], &gv[1]) < 0)
					goto out;
				v[nv].ord = nv;
				v[nv++].v = (struct gc_dot_vertex){.uid = ref->uid,
				                                   .group = gv[0],
				                                   .version = gv[1],
				                                   .kind = ref->kind,
				                                   .ns = "",
				                                   .name = ref->name,
				                                   .missing = true};
			}
			e[ne++] = (struct gc_dot_edge){.from = d->uid, .to = ref->uid};
		}
	}
	qsort(v, nv, sizeof(*v), cmp_vertex);
	for (size_t i = 0; i < nv; i++)
		out_v[i] = v[i].v;
	qsort(e, ne, sizeof(*e), cmp_edge);
	r = gc_dot_marshal(out_v, nv, e, ne, ret, len);
out:
	for (size_t i = 0; missing_gv && i < 2 * nm; i++)
		free(missing_gv[i]);
	free(missing_gv);
	free(v);
	free(out_v);
	free(e);
	dgraph_free(&g);
	return r;
}
