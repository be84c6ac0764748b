/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/statefulset/ident.c: the statefulset controller's pure pieces (ident.h).
 *
 * The ControllerRevision of a StatefulSet holds, as data, the bytes upstream's getPatch makes:
 * the set encoded to JSON (apps/v1), decoded into map[string]interface{}, its spec.template
 * given "$patch":"replace", and {"spec":{"template":...}} marshalled again. That round trip
 * fixes every byte: Go sorts map keys, escapes strings its own way and prints numbers as
 * float64. kcmd starts from the JSON the apiserver sends, which is the same typed struct's
 * encoding as kcm's (same fields, same omitempty), so walking it with Go's marshalling rules
 * gives the same bytes; the name is FNV-1 (not 1a) of those bytes plus the collision count's
 * decimal, SafeEncodeString'd.
 */
#include "workers/statefulset/ident.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sts_parse_ordinal(const char *name, char *parent, size_t plen)
{
	const char *dash = name ? strrchr(name, '-') : NULL;
	const char *d;
	long long v = 0;
	bool over = false;

	if (parent && plen)
		parent[0] = 0;
	if (!dash || !dash[1])
		return -1;
	for (d = dash + 1; *d; d++) {
		if (*d < '0' || *d > '9')
			return -1;
		if (!over) {
			v = v * 10 + (*d - '0');
			if (v > INT32_MAX)
				over = true;
		}
	}
	if (parent && plen) {
		size_t n = (size_t)(dash - name);
		if (n >= plen)
			n = plen - 1;
		memcpy(parent, name, n);
		parent[n] = 0;
	}
	return over ? -1 : (int)v;
}

/* ---- Go's encoding/json -----------------------------------------------------------------------
 */
struct gbuf {
	char *p;
	size_t n, cap;
	int err;
};

static void put(struct gbuf *b, const char *s, size_t n)
{
	if (b->err)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->n + n + 1)
			cap *= 2;
		char *np = realloc(b->p, cap);
		if (!np) {
			b->err = -ENOMEM;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = 0;
}

static void puts_(struct gbuf *b, const char *s)
{
	put(b, s, strlen(s));
}

/* the length of a valid UTF-8 sequence at s (n bytes left) and its code point, 0: invalid */
static size_t utf8_len(const unsigned char *s, size_t n, uint32_t *cp)
{
	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	size_t len = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
	if (n < len)
		return 0;
	uint32_t c = s[0] & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
	    (len == 4 && (c < 0x10000 || c > 0x10ffff)))
		return 0;
	*cp = c;
	return len;
}

static void go_string(struct gbuf *b, const char *str)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), i = 0;

	put(b, "\"", 1);
	while (i < n) {
		unsigned char c = s[i];
		if (c < 0x80) {
			char esc[7];
			if (c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' &&
			    c != '&') {
				put(b, (const char *)&s[i], 1);
			} else {
				switch (c) {
				case '"':
				case '\\':
					esc[0] = '\\';
					esc[1] = (char)c;
					put(b, esc, 2);
					break;
				case '\b':
					put(b, "\\b", 2);
					break;
				case '\f':
					put(b, "\\f", 2);
					break;
				case '\n':
					put(b, "\\n", 2);
					break;
				case '\r':
					put(b, "\\r", 2);
					break;
				case '\t':
					put(b, "\\t", 2);
					break;
				default:
					memcpy(esc, "\\u00", 4);
					esc[4] = hex[c >> 4];
					esc[5] = hex[c & 15];
					put(b, esc, 6);
				}
			}
			i++;
			continue;
		}
		uint32_t cp;
		size_t len = utf8_len(&s[i], n - i, &cp);
		if (!len) {
			puts_(b, "\\ufffd");
			i++;
			continue;
		}
		if (cp == 0x2028 || cp == 0x2029)
			puts_(b, cp == 0x2028 ? "\\u2028" : "\\u2029");
		else
			put(b, (const char *)&s[i], len);
		i += len;
	}
	put(b, "\"", 1);
}

/* strconv.AppendFloat(f, 'f' or 'e', -1, 64) as encoding/json's floatEncoder uses it */
static void go_number(struct gbuf *b, double f)
{
	char digits[32], out[400];
	int p, exp10;

	if (!isfinite(f)) {
		b->err = b->err ? b->err : -EINVAL; /* json.Marshal refuses them too */
		return;
	}
	if (f == 0) {
		puts_(b, signbit(f) ? "-0" : "0");
		return;
	}
	/* the shortest digits that parse back to f */
	char e[40];
	for (p = 1; p <= 17; p++) {
		snprintf(e, sizeof(e), "%.*e", p - 1, f);
		if (strtod(e, NULL) == f)
			break;
	}
	/* e: [-]d[.ddd]e[+-]XX */
	const char *q = e;
	bool neg = *q == '-';
	size_t nd = 0;
	if (neg)
		q++;
	for (; *q && *q != 'e'; q++)
		if (*q != '.')
			digits[nd++] = *q;
	digits[nd] = 0;
	exp10 = atoi(q + 1); /* value = 0.d1d2.. * 10^(exp10+1) */
	while (nd > 1 && digits[nd - 1] == '0')
		digits[--nd] = 0;
	double a = fabs(f);
	size_t o = 0;
	if (neg)
		out[o++] = '-';
	if (a < 1e-6 || a >= 1e21) {
		out[o++] = digits[0];
		if (nd > 1) {
			out[o++] = '.';
			memcpy(out + o, digits + 1, nd - 1);
			o += nd - 1;
		}
		o += (size_t)snprintf(out + o, sizeof(out) - o, "e%c%02d", exp10 < 0 ? '-' : '+',
		                      abs(exp10));
		out[o] = 0;
		/* Go's cleanup: e-07 -> e-7 (negative exponents only) */
		size_t n = o;
		if (n >= 4 && out[n - 4] == 'e' && out[n - 3] == '-' && out[n - 2] == '0') {
			out[n - 2] = out[n - 1];
			out[n - 1] = 0;
			o--;
		}
		put(b, out, o);
		return;
	}
	int point = exp10 + 1; /* digits before the decimal point */
	if (point <= 0) {
		out[o++] = '0';
		out[o++] = '.';
		for (int i = 0; i < -point; i++)
			out[o++] = '0';
		memcpy(out + o, digits, nd);
		o += nd;
	} else {
		for (int i = 0; i < point; i++)
			out[o++] = (size_t)i < nd ? digits[i] : '0';
		if ((size_t)point < nd) {
			out[o++] = '.';
			memcpy(out + o, digits + point, nd - (size_t)point);
			o += nd - (size_t)point;
		}
	}
	put(b, out, o);
}

static int cmp_child(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
	return strcmp(x->string ? x->string : "", y->string ? y->string : "");
}

static void go_value(struct gbuf *b, const cJSON *v, int depth)
{
	if (b->err)
		return;
	if (depth > 10000) {
		b->err = -E2BIG;
		return;
	}
	if (cJSON_IsNull(v) || !v) {
		puts_(b, "null");
	} else if (cJSON_IsTrue(v)) {
		puts_(b, "true");
	} else if (cJSON_IsFalse(v)) {
		puts_(b, "false");
	} else if (cJSON_IsNumber(v)) {
		go_number(b, v->valuedouble);
	} else if (cJSON_IsString(v)) {
		go_string(b, v->valuestring);
	} else if (cJSON_IsArray(v)) {
		const cJSON *it;
		bool first = true;
		put(b, "[", 1);
		cJSON_ArrayForEach(it, v)
		{
			if (!first)
				put(b, ",", 1);
			first = false;
			go_value(b, it, depth + 1);
		}
		put(b, "]", 1);
	} else if (cJSON_IsObject(v)) {
		size_t n = 0, i = 0;
		const cJSON *it;
		cJSON_ArrayForEach(it, v) n++;
		const cJSON **kids = calloc(n ? n : 1, sizeof(*kids));
		if (!kids) {
			b->err = -ENOMEM;
			return;
		}
		cJSON_ArrayForEach(it, v) kids[i++] = it;
		qsort(kids, n, sizeof(*kids), cmp_child);
		put(b, "{", 1);
		for (i = 0; i < n; i++) {
			/* repeated keys: Go's map keeps the last one */
			if (i + 1 < n && strcmp(kids[i]->string, kids[i + 1]->string) == 0)
				continue;
			if (b->n && b->p[b->n - 1] != '{')
				put(b, ",", 1);
			go_string(b, kids[i]->string ? kids[i]->string : "");
			put(b, ":", 1);
			go_value(b, kids[i], depth + 1);
		}
		put(b, "}", 1);
		free(kids);
	} else {
		b->err = -EINVAL;
	}
}

int sts_go_json(const cJSON *v, char **ret, size_t *ret_len)
{
	struct gbuf b = {0};

	go_value(&b, v, 0);
	if (b.err) {
		free(b.p);
		return b.err;
	}
	*ret = b.p;
	if (ret_len)
		*ret_len = b.n;
	return 0;
}

int sts_revision_patch(const cJSON *set, char **ret, size_t *ret_len)
{
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(set, "spec");
	const cJSON *tmpl =
	        cJSON_IsObject(spec) ? cJSON_GetObjectItemCaseSensitive(spec, "template") : NULL;
	cJSON *root, *sp, *t;
	int r;

	if (!cJSON_IsObject(tmpl))
		return -EINVAL;
	if (!(root = cJSON_CreateObject()) || !(sp = cJSON_AddObjectToObject(root, "spec")) ||
	    !(t = cJSON_Duplicate(tmpl, 1))) {
		cJSON_Delete(root);
		return -ENOMEM;
	}
	cJSON_AddItemToObject(sp, "template", t);
	cJSON_DeleteItemFromObjectCaseSensitive(t, "$patch");
	if (!cJSON_AddStringToObject(t, "$patch", "replace")) {
		cJSON_Delete(root);
		return -ENOMEM;
	}
	r = sts_go_json(root, ret, ret_len);
	cJSON_Delete(root);
	return r;
}

static void safe_encode(const char *s, char *ret, size_t cap)
{
	static const char alnum[] = "bcdfghjklmnpqrstvwxz2456789";
	size_t i;

	for (i = 0; s[i] && i + 1 < cap; i++)
		ret[i] = alnum[(unsigned char)s[i] % (sizeof(alnum) - 1)];
	ret[i] = 0;
}

void sts_revision_hash(const char *raw, size_t len, const int32_t *probe, char ret[STS_HASH_MAX])
{
	uint32_t h = 2166136261u;
	char dec[24];

	for (size_t i = 0; i < len; i++) {
		h *= 16777619u;
		h ^= (unsigned char)raw[i];
	}
	if (probe) {
		int n = snprintf(dec, sizeof(dec), "%d", (int)*probe);
		for (int i = 0; i < n; i++) {
			h *= 16777619u;
			h ^= (unsigned char)dec[i];
		}
	}
	snprintf(dec, sizeof(dec), "%u", h);
	safe_encode(dec, ret, STS_HASH_MAX);
}

void sts_revision_name(const char *prefix, const char *hash, char ret[254])
{
	int n = (int)strlen(prefix);
	if (n > 223)
		n = 223;
	snprintf(ret, 254, "%.*s-%s", n, prefix, hash);
}

int sts_max_unavailable(const cJSON *v, int replicas, int *ret)
{
	int n = 1;

	if (cJSON_IsNumber(v)) {
		n = (int)v->valuedouble;
	} else if (cJSON_IsString(v)) {
		const char *s = v->valuestring;
		size_t len = strlen(s);
		char *end;
		if (len < 2 || s[len - 1] != '%')
			return -EINVAL;
		long pct = strtol(s, &end, 10);
		if (end != s + len - 1)
			return -EINVAL;
		n = (int)floor((double)pct * (double)replicas / 100.0);
	} else if (v && !cJSON_IsNull(v)) {
		return -EINVAL;
	}
	*ret = n < 1 ? 1 : n;
	return 0;
}
