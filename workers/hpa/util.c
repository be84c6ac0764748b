/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/hpa/util.c: quantities and label selectors for the HPA's sync (util.h).
 * A quantity is parsed into an exact count of nano units (a 128-bit integer: every value
 * ParseQuantity keeps is a whole number of nano units), so MilliValue's rounding is exact.
 */
#include "workers/hpa/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hpa_qty_milli(const char *s, int64_t *ret)
{
	const char *p = s;
	bool neg = false;
	__int128 mant = 0; /* digits read, as an integer */
	int frac = 0;      /* digits after the point */
	int ndig = 0;

	if (!s || !*s)
		return -EINVAL;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	for (; *p >= '0' && *p <= '9'; p++, ndig++)
		if (mant < ((__int128)1 << 100))
			mant = mant * 10 + (*p - '0');
		else
			return -ERANGE;
	if (*p == '.') {
		p++;
		for (; *p >= '0' && *p <= '9'; p++, ndig++) {
			if (frac >= 9) /* beyond nano: rounded up below */
				continue;
			mant = mant * 10 + (*p - '0');
			frac++;
		}
	}
	if (!ndig)
		return -EINVAL;
	/* the suffix: a power of ten (exp10) or of two (exp2) */
	int exp10 = 0, exp2 = 0;
	if (!*p) {
	} else if (!strcmp(p, "n")) {
		exp10 = -9;
	} else if (!strcmp(p, "u")) {
		exp10 = -6;
	} else if (!strcmp(p, "m")) {
		exp10 = -3;
	} else if (!strcmp(p, "k")) {
		exp10 = 3;
	} else if (!strcmp(p, "M")) {
		exp10 = 6;
	} else if (!strcmp(p, "G")) {
		exp10 = 9;
	} else if (!strcmp(p, "T")) {
		exp10 = 12;
	} else if (!strcmp(p, "P")) {
		exp10 = 15;
	} else if (!strcmp(p, "E")) {
		exp10 = 18;
	} else if (p[1] == 'i' && !p[2] && strchr("KMGTPE", p[0])) {
		exp2 = 10 * (int)(strchr("KMGTPE", p[0]) - "KMGTPE" + 1);
	} else if (*p == 'e' || *p == 'E') {
		char *end;
		long e = strtol(p + 1, &end, 10);
		if (*end || end == p + 1 || e > 30 || e < -30)
			return -EINVAL;
		exp10 = (int)e;
	} else {
		return -EINVAL;
	}
	/* value = mant * 10^(exp10 - frac) * 2^exp2; in nano units: * 10^9 */
	int e = exp10 - frac + 9;
	__int128 nano = mant;
	bool inexact = false;
	for (int i = 0; i < exp2; i++) {
		nano *= 2;
		if (nano > ((__int128)1 << 120))
			return -ERANGE;
	}
	for (; e > 0; e--) {
		nano *= 10;
		if (nano > ((__int128)1 << 120))
			return -ERANGE;
	}
	for (; e < 0; e++) {
		inexact |= nano % 10 != 0;
		nano /= 10;
	}
	if (inexact)
		nano++; /* ParseQuantity rounds up to the nano unit */
	/* MilliValue: ceil for positive values, towards zero... as ScaledValue(-3) rounds up */
	__int128 milli = (nano + 999999) / 1000000;
	if (neg)
		milli = -(nano / 1000000);
	if (milli > INT64_MAX || milli < INT64_MIN)
		return -ERANGE;
	*ret = (int64_t)milli;
	return 0;
}

void hpa_qty_format_milli(int64_t v, bool binary, char *buf, size_t len)
{
	if (v == 0) {
		snprintf(buf, len, "0");
		return;
	}
	if (binary && v % 1000 == 0 && (v / 1000 >= 1024 || v / 1000 <= -1024)) {
		int64_t n = v / 1000;
		int k = 0;
		static const char *const suf[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
		while (n % 1024 == 0 && k < 6) {
			n /= 1024;
			k++;
		}
		snprintf(buf, len, "%lld%s", (long long)n, suf[k]);
		return;
	}
	/* DecimalSI: the largest exponent, a multiple of 3, that keeps an integer mantissa */
	int64_t n = v;
	int e = -3;
	while (n % 1000 == 0 && e < 18) {
		n /= 1000;
		e += 3;
	}
	static const char *const dsuf[] = {"m", "", "k", "M", "G", "T", "P", "E"};
	snprintf(buf, len, "%lld%s", (long long)n, dsuf[(e + 3) / 3]);
}

static const char *jstr(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

struct sbuf {
	char *s;
	size_t len;
	bool oom;
};

static void add(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	char *piece = NULL;
	va_start(ap, fmt);
	int n = vasprintf(&piece, fmt, ap);
	va_end(ap);
	if (n < 0 || b->oom) {
		b->oom = true;
		return;
	}
	char *ns = realloc(b->s, b->len + (size_t)n + 1);
	if (!ns) {
		free(piece);
		b->oom = true;
		return;
	}
	memcpy(ns + b->len, piece, (size_t)n + 1);
	b->s = ns;
	b->len += (size_t)n;
	free(piece);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

char *hpa_selector_gostring(const cJSON *sel)
{
	struct sbuf b = {0};
	const cJSON *it;

	if (!cJSON_IsObject(sel))
		return strdup("nil");
	const cJSON *ml = cJSON_GetObjectItemCaseSensitive(sel, "matchLabels");
	const cJSON *me = cJSON_GetObjectItemCaseSensitive(sel, "matchExpressions");
	size_t n = (size_t)cJSON_GetArraySize(cJSON_IsObject(ml) ? ml : NULL), i = 0;
	const char **keys = calloc(n + 1, sizeof(*keys));
	if (!keys)
		return NULL;
	if (n)
		cJSON_ArrayForEach(it, ml) keys[i++] = it->string;
	qsort(keys, n, sizeof(*keys), by_name); /* Go prints a map sorted by key */
	add(&b, "&LabelSelector{MatchLabels:map[string]string{");
	for (i = 0; i < n; i++)
		add(&b, "%s: %s,", keys[i], jstr(ml, keys[i]) ? jstr(ml, keys[i]) : "");
	free(keys);
	add(&b, "},MatchExpressions:[]LabelSelectorRequirement{");
	if (cJSON_IsArray(me))
		cJSON_ArrayForEach(it, me)
		{
			const cJSON *x;
			bool first = true;
			add(&b, "LabelSelectorRequirement{Key:%s,Operator:%s,Values:[",
			    jstr(it, "key") ? jstr(it, "key") : "",
			    jstr(it, "operator") ? jstr(it, "operator") : "");
			cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(it, "values"))
			{
				add(&b, "%s%s", first ? "" : " ",
				    cJSON_IsString(x) ? x->valuestring : "");
				first = false;
			}
			add(&b, "],},");
		}
	add(&b, "},}");
	if (b.oom) {
		free(b.s);
		return NULL;
	}
	return b.s;
}
