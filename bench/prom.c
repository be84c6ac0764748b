/* SPDX-License-Identifier: Apache-2.0 */
/* bench/prom.c: Prometheus text format reader (see prom.h). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/prom.h"

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

static bool is_name_char(char c, bool first)
{
	return isalpha((unsigned char)c) || c == '_' || c == ':' ||
	       (!first && isdigit((unsigned char)c));
}

static int parse_value(const char *p, const char *end, double *out)
{
	char buf[64];
	size_t n = 0;

	while (p + n < end && p[n] != ' ' && p[n] != '\t')
		n++;
	if (!n || n >= sizeof(buf))
		return -EBADMSG;
	memcpy(buf, p, n);
	buf[n] = 0;
	if (!strcmp(buf, "+Inf") || !strcmp(buf, "Inf")) {
		*out = INFINITY;
	} else if (!strcmp(buf, "-Inf")) {
		*out = -INFINITY;
	} else if (!strcmp(buf, "NaN")) {
		*out = NAN;
	} else {
		char *e;
		errno = 0;
		*out = strtod(buf, &e);
		if (*e || errno == EINVAL)
			return -EBADMSG;
	}
	/* an optional integer timestamp may follow */
	p = skip_ws(p + n, end);
	while (p < end && (isdigit((unsigned char)*p) || *p == '-'))
		p++;
	p = skip_ws(p, end);
	return p == end ? 0 : -EBADMSG;
}

int prom_parse_line(const char *line, size_t len, struct prom_sample *s)
{
	const char *p = line, *end = line + len;
	size_t n = 0;

	while (end > p && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
		end--;
	p = skip_ws(p, end);
	if (p == end || *p == '#')
		return 1;
	s->n_labels = 0;
	while (p < end && is_name_char(*p, n == 0)) {
		if (n + 1 >= sizeof(s->name))
			return -EBADMSG;
		s->name[n++] = *p++;
	}
	if (!n)
		return -EBADMSG;
	s->name[n] = 0;
	if (p < end && *p == '{') {
		p++;
		for (;;) {
			p = skip_ws(p, end);
			if (p < end && *p == '}') {
				p++;
				break;
			}
			if (s->n_labels >= PROM_MAX_LABELS)
				return -EBADMSG;
			char *ln = s->labels[s->n_labels].name, *lv = s->labels[s->n_labels].value;
			size_t k = 0;
			while (p < end && is_name_char(*p, k == 0) && *p != ':') {
				if (k + 1 >= sizeof(s->labels[0].name))
					return -EBADMSG;
				ln[k++] = *p++;
			}
			if (!k)
				return -EBADMSG;
			ln[k] = 0;
			p = skip_ws(p, end);
			if (p + 1 >= end || *p != '=' || p[1] != '"')
				return -EBADMSG;
			p += 2;
			k = 0;
			for (;;) {
				if (p >= end)
					return -EBADMSG;
				char c = *p++;
				if (c == '"')
					break;
				if (c == '\\') {
					if (p >= end)
						return -EBADMSG;
					c = *p++;
					if (c == 'n')
						c = '\n';
					else if (c != '\\' && c != '"')
						return -EBADMSG;
				}
				if (k + 1 >= sizeof(s->labels[0].value))
					return -EBADMSG;
				lv[k++] = c;
			}
			lv[k] = 0;
			s->n_labels++;
			p = skip_ws(p, end);
			if (p < end && *p == ',')
				p++;
			else if (p < end && *p == '}')
				continue;
			else
				return -EBADMSG;
		}
	}
	if (p >= end || (*p != ' ' && *p != '\t'))
		return -EBADMSG;
	p = skip_ws(p, end);
	return parse_value(p, end, &s->value);
}

int prom_parse(const char *text, size_t len, int (*fn)(const struct prom_sample *s, void *ud),
               void *ud, unsigned *bad)
{
	const char *p = text, *end = text + len;
	struct prom_sample *s = malloc(sizeof(*s));
	int count = 0;
	unsigned nbad = 0;

	if (!s)
		return -ENOMEM;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		int r = prom_parse_line(p, (size_t)(le - p), s);
		if (r < 0) {
			nbad++;
		} else if (r == 0) {
			int x = fn(s, ud);
			if (x) {
				free(s);
				return x;
			}
			count++;
		}
		p = nl ? nl + 1 : end;
	}
	free(s);
	if (bad)
		*bad = nbad;
	return count;
}

const char *prom_label(const struct prom_sample *s, const char *name)
{
	for (unsigned i = 0; i < s->n_labels; i++)
		if (!strcmp(s->labels[i].name, name))
			return s->labels[i].value;
	return NULL;
}

int prom_counts_add(struct prom_counts *c, const char *key, double v)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->items[i].key, key)) {
			c->items[i].v += v;
			return 0;
		}
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		struct prom_count *it = realloc(c->items, cap * sizeof(*it));
		if (!it)
			return -ENOMEM;
		c->items = it;
		c->cap = cap;
	}
	snprintf(c->items[c->n].key, sizeof(c->items[0].key), "%s", key);
	c->items[c->n++].v = v;
	return 0;
}

double prom_counts_get(const struct prom_counts *c, const char *key)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->items[i].key, key))
			return c->items[i].v;
	return 0;
}

double prom_counts_total(const struct prom_counts *c)
{
	double t = 0;

	for (size_t i = 0; i < c->n; i++)
		t += c->items[i].v;
	return t;
}

void prom_counts_free(struct prom_counts *c)
{
	free(c->items);
	*c = (struct prom_counts){0};
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(((const struct prom_count *)a)->key, ((const struct prom_count *)b)->key);
}

void prom_counts_sort(struct prom_counts *c)
{
	if (c->n)
		qsort(c->items, c->n, sizeof(c->items[0]), cmp_key);
}

int prom_counts_delta(const struct prom_counts *after, const struct prom_counts *before,
                      struct prom_counts *out)
{
	for (size_t i = 0; i < after->n; i++) {
		double d = after->items[i].v - prom_counts_get(before, after->items[i].key);
		if (d != 0) {
			int r = prom_counts_add(out, after->items[i].key, d);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

struct collect {
	const char *metric;
	const char *const *filters;
	unsigned n_filters;
	const char *const *group;
	unsigned n_group;
	struct prom_counts *out;
	int summed;
};

static int collect_one(const struct prom_sample *s, void *ud)
{
	struct collect *c = ud;
	char key[96] = "";
	size_t kl = 0;

	if (strcmp(s->name, c->metric) != 0 || !isfinite(s->value))
		return 0;
	for (unsigned i = 0; i < c->n_filters; i++) {
		const char *v = prom_label(s, c->filters[2 * i]);
		if (!v || strcmp(v, c->filters[2 * i + 1]) != 0)
			return 0;
	}
	for (unsigned i = 0; i < c->n_group; i++) {
		const char *v = prom_label(s, c->group[i]);
		int w = snprintf(key + kl, sizeof(key) - kl, "%s%s", i ? " " : "", v ? v : "");
		if (w < 0 || (size_t)w >= sizeof(key) - kl)
			break;
		kl += (size_t)w;
	}
	int r = prom_counts_add(c->out, key, s->value);
	if (r < 0)
		return r;
	c->summed++;
	return 0;
}

int prom_collect(const char *text, size_t len, const char *metric, const char *const *filters,
                 unsigned n_filters, const char *const *group_labels, unsigned n_group,
                 struct prom_counts *out)
{
	struct collect c = {metric, filters, n_filters, group_labels, n_group, out, 0};
	int r = prom_parse(text, len, collect_one, &c, NULL);

	return r < 0 ? r : c.summed;
}
