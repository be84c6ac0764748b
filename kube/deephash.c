/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kube/deephash.c: go-spew's "%#v" text of a decoded Go object, printed from its JSON, and the
 * pod-template hash over it (see deephash.h).
 *
 * Design note.
 *   Two passes. The JSON is first read into a small tree in one arena (the printer needs the
 *   members in Go declaration order, not in the order the JSON has them, and map keys sorted),
 *   then printed by walking the generated type tables. The printer mirrors the formatter's own
 *   state machine, including its one piece of state that crosses values ("ignore the next
 *   type": set before a slice element, a map key or value and a pointer's target, cleared by
 *   the next value that prints, and left set by a nil pointer printed as "<nil>" so that the
 *   struct field after a slice ending in a nil pointer prints without its type, as spew does).
 *   Bytes go straight into the FNV state; the dump for tests appends them to a buffer too.
 *
 *   The three types whose JSON is not their Go layout are rebuilt as small synthetic trees of
 *   their Go fields (keys are the Go names, which the generator gives those fields) and then
 *   printed by the same walk: a quantity as ParseQuantity leaves it after the protobuf (or JSON)
 *   decoder read the apiserver's canonical string (the int64 fast path with or without the
 *   cached string, or the inf.Dec path with its big.Int words), an IntOrString as its
 *   Type/IntVal/StrVal, the zero metav1.Time as its zero time.Time.
 *
 *   Absent and null are the same for every kind (Go's decoder leaves the zero value: nil
 *   pointers, slices and maps, empty strings); an empty JSON array or object is a non-nil empty
 *   slice or map. The apiserver never sends those (its storage is protobuf, which has no empty
 *   lists), so kcm sees nil there too.
 *
 *   Rejected: printing straight from the pull scanner (members come in JSON order); cJSON
 *   (numbers as doubles lose int64 precision); hashing the apiserver's protobuf bytes (not what
 *   upstream hashes).
 */
#include "kube/deephash.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/deephash-schema.h"
#include "kube/json.h"

/* ---- the JSON tree ------------------------------------------------------------------------ */
enum { DN_NULL, DN_BOOL, DN_NUM, DN_STR, DN_ARR, DN_OBJ };

struct dn {
	unsigned char kind;
	bool b;
	const char *s; /* DN_STR: the unescaped string; DN_NUM: the number's text */
	size_t len;
	const char *key; /* a member of an object: its key */
	size_t keylen;
	struct dn *first; /* DN_ARR, DN_OBJ: children in JSON order */
	struct dn *next;
	size_t n; /* number of children */
};

static int tree_read(struct js *j, struct js_arena *a, struct dn **ret);

static int tree_children(struct js *j, struct js_arena *a, struct dn *d, bool obj)
{
	struct dn **tail = &d->first;
	for (;;) {
		const char *k = NULL;
		size_t kn = 0;
		int r = obj ? js_obj_next(j, &k, &kn) : js_arr_next(j);
		if (r < 0)
			return r;
		if (r == 0)
			return 0;
		char *key = NULL;
		if (obj) {
			key = js_strndup(a, k, kn);
			if (!key)
				return -ENOMEM;
		}
		struct dn *c;
		r = tree_read(j, a, &c);
		if (r < 0)
			return r;
		c->key = key;
		c->keylen = kn;
		*tail = c;
		tail = &c->next;
		d->n++;
	}
}

static int tree_read(struct js *j, struct js_arena *a, struct dn **ret)
{
	struct dn *d = js_alloc(a, sizeof(*d));
	if (!d)
		return -ENOMEM;
	int c = js_peek(j), r;
	if (j->err)
		return j->err;
	switch (c) {
	case '{':
		r = js_obj_begin(j);
		if (r < 0)
			return r;
		d->kind = DN_OBJ;
		r = tree_children(j, a, d, true);
		break;
	case '[':
		r = js_arr_begin(j);
		if (r < 0)
			return r;
		d->kind = DN_ARR;
		r = tree_children(j, a, d, false);
		break;
	case '"': {
		char *s;
		r = js_str(j, &s);
		if (r > 0) {
			d->kind = DN_STR;
			d->s = s;
			d->len = strlen(s);
		}
		break;
	}
	case 't':
	case 'f':
		r = js_bool(j, &d->b);
		d->kind = DN_BOOL;
		break;
	case 'n':
		r = js_null(j) ? 0 : js_fail(j, -EBADMSG);
		d->kind = DN_NULL;
		break;
	default:
		r = js_raw(j, &d->s, &d->len);
		d->kind = DN_NUM;
		break;
	}
	if (r < 0)
		return r;
	*ret = d;
	return 0;
}

/* The member of object o named key (the last one when the JSON repeats it, as Go's decoder
 * keeps the last); NULL when absent or when o is absent. */
static const struct dn *member(const struct dn *o, const char *key)
{
	const struct dn *found = NULL;
	size_t kn = strlen(key);
	if (!o || o->kind != DN_OBJ)
		return NULL;
	for (const struct dn *c = o->first; c; c = c->next)
		if (c->keylen == kn && memcmp(c->key, key, kn) == 0)
			found = c;
	return found;
}

static bool absent(const struct dn *d)
{
	return !d || d->kind == DN_NULL;
}

/* ---- synthetic nodes for the special types ------------------------------------------------ */
static struct dn *syn(struct js_arena *a, unsigned char kind, const char *s)
{
	struct dn *d = js_alloc(a, sizeof(*d));
	if (!d)
		return NULL;
	d->kind = kind;
	if (s) {
		d->s = js_strndup(a, s, strlen(s));
		if (!d->s)
			return NULL;
		d->len = strlen(s);
	}
	return d;
}

/* Appends child c (NULL: allocation failed earlier) to the object or array o under key. */
static struct dn *syn_add(struct dn *o, const char *key, struct dn *c)
{
	if (!o || !c)
		return NULL;
	c->key = key;
	c->keylen = key ? strlen(key) : 0;
	struct dn **tail = &o->first;
	while (*tail)
		tail = &(*tail)->next;
	*tail = c;
	o->n++;
	return o;
}

static struct dn *syn_num(struct js_arena *a, const char *fmt, long long v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), fmt, v);
	return syn(a, DN_NUM, buf);
}

/* ---- resource.Quantity -------------------------------------------------------------------- */
/* A magnitude in 32-bit limbs, little-endian; enough for any quantity string of a sane length
 * (a longer one is refused with -EOPNOTSUPP, never truncated). */
#define BIG_LIMBS 24
struct big {
	uint32_t l[BIG_LIMBS];
	int n; /* limbs in use (no leading zero limbs) */
};

static int big_muladd(struct big *b, uint32_t m, uint32_t add)
{
	uint64_t carry = add;
	for (int i = 0; i < b->n; i++) {
		uint64_t v = (uint64_t)b->l[i] * m + carry;
		b->l[i] = (uint32_t)v;
		carry = v >> 32;
	}
	if (carry) {
		if (b->n == BIG_LIMBS)
			return -EOPNOTSUPP;
		b->l[b->n++] = (uint32_t)carry;
	}
	return 0;
}

static uint32_t big_divmod(struct big *b, uint32_t d)
{
	uint64_t rem = 0;
	for (int i = b->n - 1; i >= 0; i--) {
		uint64_t v = (rem << 32) | b->l[i];
		b->l[i] = (uint32_t)(v / d);
		rem = v % d;
	}
	while (b->n > 0 && b->l[b->n - 1] == 0)
		b->n--;
	return (uint32_t)rem;
}

static bool big_zero(const struct big *b)
{
	return b->n == 0;
}

/* b > x * 10^9 for x < 2^64? (used against the BinarySI cap 2^63-1 at scale 9) */
static int big_cmp(const struct big *a, const struct big *b)
{
	if (a->n != b->n)
		return a->n < b->n ? -1 : 1;
	for (int i = a->n - 1; i >= 0; i--)
		if (a->l[i] != b->l[i])
			return a->l[i] < b->l[i] ? -1 : 1;
	return 0;
}

static void big_set_u64(struct big *b, uint64_t v)
{
	b->l[0] = (uint32_t)v;
	b->l[1] = (uint32_t)(v >> 32);
	b->n = b->l[1] ? 2 : b->l[0] ? 1 : 0;
}

struct qty {
	int64_t value; /* i.value */
	int32_t scale; /* i.scale */
	bool dec;      /* d.Dec != nil */
	bool neg;      /* d.Dec.unscaled.neg */
	struct big abs;
	int32_t dec_scale;
	const char *s; /* the cached string, or NULL */
	size_t slen;
	const char *format;
};

static bool isdig(char c)
{
	return c >= '0' && c <= '9';
}

static bool has_any(char c, const char *set)
{
	return c && strchr(set, c) != NULL;
}

/* Go's strconv.ParseInt(s, 10, 64) over [s, s+n). */
static int parse_i64(const char *s, size_t n, int64_t *ret)
{
	bool negv = false;
	size_t i = 0;
	uint64_t v = 0;
	if (n > 0 && (s[0] == '+' || s[0] == '-')) {
		negv = s[0] == '-';
		i = 1;
	}
	if (i == n)
		return -EPROTO;
	for (; i < n; i++) {
		if (!isdig(s[i]))
			return -EPROTO;
		if (v > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (negv ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX)
		return -ERANGE;
	*ret = negv ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

/* ParseQuantity (k8s.io/apimachinery v0.37.2, pkg/api/resource/quantity.go), step for step, for
 * the Go value it returns. */
static int qty_parse(const char *str, size_t end, struct qty *q)
{
	memset(q, 0, sizeof(*q));
	if (end == 0)
		return -EPROTO;
	if (end == 1 && str[0] == '0') {
		q->format = "DecimalSI";
		q->s = str;
		q->slen = 1;
		return 0;
	}
	/* parseQuantityString */
	bool positive = true;
	size_t pos = 0;
	const char *num = NULL, *denom = "", *suf = "";
	size_t num_n = 0, denom_n = 0, suf_n = 0, value_n = 0;
	const char *value = str;
	if (str[0] == '-') {
		positive = false;
		pos++;
	} else if (str[0] == '+') {
		pos++;
	}
	for (size_t i = pos;; i++) {
		if (i >= end) {
			num = "0", num_n = 1;
			value = num, value_n = 1;
			goto parsed;
		}
		if (str[i] != '0')
			break;
		pos++;
	}
	for (size_t i = pos;; i++) {
		if (i >= end) {
			num = str + pos, num_n = end - pos;
			value_n = end;
			goto parsed;
		}
		if (!isdig(str[i])) {
			num = str + pos, num_n = i - pos;
			pos = i;
			break;
		}
	}
	if (num_n == 0)
		num = "0", num_n = 1;
	if (pos < end && str[pos] == '.') {
		pos++;
		for (size_t i = pos;; i++) {
			if (i >= end) {
				denom = str + pos, denom_n = end - pos;
				value_n = end;
				goto parsed;
			}
			if (!isdig(str[i])) {
				denom = str + pos, denom_n = i - pos;
				pos = i;
				break;
			}
		}
	}
	value_n = pos;
	{
		size_t suffix_start = pos;
		for (size_t i = pos;; i++) {
			if (i >= end) {
				suf = str + suffix_start, suf_n = end - suffix_start;
				goto parsed;
			}
			if (!has_any(str[i], "eEinumkKMGTP")) {
				pos = i;
				break;
			}
		}
		if (pos < end && (str[pos] == '-' || str[pos] == '+'))
			pos++;
		for (size_t i = pos;; i++) {
			if (i >= end) {
				suf = str + suffix_start, suf_n = end - suffix_start;
				goto parsed;
			}
			if (!isdig(str[i]))
				return -EPROTO;
		}
	}
parsed:;
	/* quantitySuffixer.interpret */
	int base;
	int32_t exponent;
	static const struct {
		const char *s;
		int base, exp;
		const char *fmt;
	} sufs[] = {
	        {"", 10, 0, "DecimalSI"},   {"n", 10, -9, "DecimalSI"}, {"u", 10, -6, "DecimalSI"},
	        {"m", 10, -3, "DecimalSI"}, {"k", 10, 3, "DecimalSI"},  {"M", 10, 6, "DecimalSI"},
	        {"G", 10, 9, "DecimalSI"},  {"T", 10, 12, "DecimalSI"}, {"P", 10, 15, "DecimalSI"},
	        {"E", 10, 18, "DecimalSI"}, {"Ki", 2, 10, "BinarySI"},  {"Mi", 2, 20, "BinarySI"},
	        {"Gi", 2, 30, "BinarySI"},  {"Ti", 2, 40, "BinarySI"},  {"Pi", 2, 50, "BinarySI"},
	        {"Ei", 2, 60, "BinarySI"},
	};
	const char *format = NULL;
	for (size_t k = 0; k < sizeof(sufs) / sizeof(sufs[0]); k++)
		if (strlen(sufs[k].s) == suf_n && memcmp(sufs[k].s, suf, suf_n) == 0) {
			base = sufs[k].base;
			exponent = sufs[k].exp;
			format = sufs[k].fmt;
			break;
		}
	if (!format) {
		int64_t e;
		if (suf_n > 1 && (suf[0] == 'e' || suf[0] == 'E') &&
		    parse_i64(suf + 1, suf_n - 1, &e) == 0) {
			base = 10;
			exponent = (int32_t)e;
			format = "DecimalExponent";
		} else {
			return -EPROTO;
		}
	}
	bool binary = strcmp(format, "BinarySI") == 0;
	int32_t precision = 0, scale = 0;
	int64_t mantissa = 1;
	if (!binary) {
		scale = exponent;
		precision = 18 - (int32_t)(num_n + denom_n);
	} else if (exponent >= 0 && denom_n == 0) {
		mantissa = (int64_t)((uint64_t)mantissa << exponent);
		precision = 15 - (int32_t)num_n - (int32_t)((float)exponent * 3 / 10) - 1;
	} else {
		precision = -1;
	}
	if (precision >= 0) {
		scale = (int32_t)((uint32_t)scale -
		                  (uint32_t)denom_n); /* wraps, as Go's int32 does */
		if (scale >= -9) {
			char shifted[64];
			int64_t v;
			if (num_n + denom_n >= sizeof(shifted))
				return -EPROTO;
			memcpy(shifted, num, num_n);
			memcpy(shifted + num_n, denom, denom_n);
			size_t sn = num_n + denom_n;
			if (parse_i64(shifted, sn, &v) < 0)
				return -EPROTO; /* ErrNumeric */
			int64_t result;
			bool ok;
			if (v == 0 || mantissa == 0 || v == 1 || mantissa == 1) {
				result = (int64_t)((uint64_t)v * (uint64_t)mantissa);
				ok = true;
			} else if (v == INT64_MIN || mantissa == INT64_MIN) {
				ok = false;
			} else {
				ok = !__builtin_mul_overflow(v, mantissa, &result);
			}
			if (ok) {
				if (!positive)
					result = (int64_t)(0 - (uint64_t)result);
				q->value = result;
				q->scale = scale;
				q->format = format;
				bool cache;
				if (binary)
					cache = exponent % 10 == 0 && (v & 0x07) != 0;
				else
					cache = scale % 3 == 0 &&
					        !(sn >= 3 &&
					          memcmp(shifted + sn - 3, "000", 3) == 0) &&
					        shifted[0] != '0';
				if (cache) {
					q->s = str;
					q->slen = end;
				}
				return 0;
			}
		}
	}
	/* The inf.Dec path: amount.SetString(value). */
	struct big *m = &q->abs;
	int64_t dscale = 0; /* int64: an exponent near INT32_MIN must not overflow */
	bool seen_dot = false, digits = false;
	m->n = 0;
	for (size_t i = 0; i < value_n; i++) {
		char c = value[i];
		if (i == 0 && (c == '-' || c == '+'))
			continue; /* the sign is `positive`, read above from the same text */
		if (c == '.' && !seen_dot) {
			seen_dot = true;
			continue;
		}
		if (!isdig(c))
			return -EPROTO;
		digits = true;
		if (big_muladd(m, 10, (uint32_t)(c - '0')) < 0)
			return -EOPNOTSUPP;
		if (seen_dot)
			dscale++;
	}
	if (!digits)
		return -EPROTO;
	if (big_zero(m))
		return -EOPNOTSUPP; /* a zero that is not "0": the big.Int's nil-or-empty words */
	if (base == 10) {
		dscale -= exponent;
	} else {
		for (int32_t k = 0; k < exponent; k++)
			if (big_muladd(m, 2, 0) < 0)
				return -EOPNOTSUPP;
	}
	/* Round to nano scale, away from zero (the magnitude is rounded; the sign comes back
	 * after). */
	if (dscale <= 9) {
		for (int64_t k = dscale; k < 9; k++)
			if (big_muladd(m, 10, 0) < 0)
				return -EOPNOTSUPP;
	} else {
		bool rem = false;
		for (int64_t k = 9; k < dscale && !big_zero(m); k++)
			rem |= big_divmod(m, 10) != 0;
		if (rem && big_muladd(m, 1, 1) < 0)
			return -EOPNOTSUPP;
	}
	dscale = 9;
	if (binary) {
		struct big cap, one;
		big_set_u64(&cap, (uint64_t)INT64_MAX);
		for (int k = 0; k < 9; k++)
			big_muladd(&cap, 10, 0);
		big_set_u64(&one, 1000000000u);
		if (big_cmp(m, &cap) > 0) {
			big_set_u64(m, (uint64_t)INT64_MAX);
			dscale = 0;
		} else if (big_cmp(m, &one) < 0 && !big_zero(m)) {
			format = "DecimalSI";
		}
	}
	q->dec = true;
	q->neg = !positive && !big_zero(m);
	q->dec_scale = (int32_t)dscale;
	q->format = format;
	return 0;
}

/* The synthetic tree of a Quantity's Go fields (see the design note). */
static struct dn *qty_tree(struct js_arena *a, const struct qty *q)
{
	struct dn *o = syn(a, DN_OBJ, NULL);
	struct dn *i = syn(a, DN_OBJ, NULL);
	syn_add(i, "value", syn_num(a, "%lld", q->value));
	syn_add(i, "scale", syn_num(a, "%lld", q->scale));
	syn_add(o, "i", i);
	struct dn *d = syn(a, DN_OBJ, NULL);
	if (q->dec) {
		struct dn *dec = syn(a, DN_OBJ, NULL);
		struct dn *u = syn(a, DN_OBJ, NULL);
		struct dn *abs = syn(a, DN_ARR, NULL);
		syn_add(u, "neg", syn(a, DN_BOOL, NULL));
		if (u && u->first)
			u->first->b = q->neg;
		for (int k = 0; k < q->abs.n; k += 2) {
			uint64_t w = q->abs.l[k];
			if (k + 1 < q->abs.n)
				w |= (uint64_t)q->abs.l[k + 1] << 32;
			char buf[24];
			snprintf(buf, sizeof(buf), "%" PRIu64, w);
			syn_add(abs, NULL, syn(a, DN_NUM, buf));
		}
		syn_add(u, "abs", abs);
		syn_add(dec, "unscaled", u);
		syn_add(dec, "scale", syn_num(a, "%lld", q->dec_scale));
		syn_add(d, "Dec", dec);
	}
	syn_add(o, "d", d);
	if (q->s) {
		struct dn *s = syn(a, DN_STR, NULL);
		if (s) {
			s->s = q->s;
			s->len = q->slen;
		}
		syn_add(o, "s", s);
	}
	syn_add(o, "Format", syn(a, DN_STR, q->format));
	return o;
}

/* A quantity's value as sign, digits without trailing zeros, and a power of ten: equal values
 * (Quantity.Cmp == 0) print alike whatever path or format they were parsed into. */
#define QTY_CANON_MAX (BIG_LIMBS * 10 + 32)
static void qty_canonical(const struct qty *q, char out[QTY_CANON_MAX])
{
	char digits[BIG_LIMBS * 10 + 1];
	size_t nd = 0;
	int64_t exp;
	bool negv;
	if (!q->dec) {
		uint64_t m = q->value < 0 ? 0 - (uint64_t)q->value : (uint64_t)q->value;
		negv = q->value < 0;
		exp = q->scale;
		while (m) {
			digits[nd++] = (char)('0' + m % 10);
			m /= 10;
		}
	} else {
		struct big m = q->abs;
		negv = q->neg;
		exp = -(int64_t)q->dec_scale;
		while (!big_zero(&m))
			digits[nd++] = (char)('0' + big_divmod(&m, 10));
	}
	if (nd == 0) {
		snprintf(out, QTY_CANON_MAX, "0");
		return;
	}
	size_t lo = 0; /* digits[] is little end first: drop trailing zeros of the number */
	while (lo < nd && digits[lo] == '0') {
		lo++;
		exp++;
	}
	size_t k = 0;
	if (negv)
		out[k++] = '-';
	for (size_t i = nd; i > lo; i--)
		out[k++] = digits[i - 1];
	snprintf(out + k, QTY_CANON_MAX - k, "e%lld", (long long)exp);
}

/* ---- the printer -------------------------------------------------------------------------- */
struct out {
	uint32_t h;
	bool ign; /* spew's ignoreNextType */
	int err;
	struct js_arena *arena;
	char *buf; /* the dump, when asked for */
	size_t len, cap;
	bool dump;
	/* Semantic mode (kube_pod_template_equal_ignore_hash): a canonical text for equality, not
	 * upstream's: nil and empty lists and maps print alike, a quantity prints its value,
	 * strings are length-prefixed (no two values print alike), and the map skip_map leaves
	 * out its key skip_key. */
	bool semantic;
	const struct dn *skip_map;
	const char *skip_key;
};

#define FNV32_OFFSET 2166136261u
#define FNV32_PRIME  16777619u

static void put(struct out *o, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		o->h ^= (unsigned char)s[i];
		o->h *= FNV32_PRIME;
	}
	if (!o->dump || o->err || n == 0)
		return;
	if (o->len + n + 1 > o->cap) {
		size_t c = o->cap ? o->cap : 4096;
		while (c < o->len + n + 1)
			c *= 2;
		char *b = realloc(o->buf, c);
		if (!b) {
			o->err = -ENOMEM;
			return;
		}
		o->buf = b;
		o->cap = c;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = 0;
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

static void put_len(struct out *o, size_t n)
{
	char buf[24];
	int k = snprintf(buf, sizeof(buf), "%zu\"", n);
	put(o, buf, (size_t)k);
}

static void fail(struct out *o, int err)
{
	if (!o->err)
		o->err = err;
}

static void format(struct out *o, int ti, const struct dn *d);

static void format_ptr(struct out *o, int ti, const struct dn *d)
{
	const struct dh_type *t = &dh_types[ti];
	if (absent(d)) {
		if (o->ign) {
			puts_(o, "<nil>"); /* ign stays set, as in spew */
			return;
		}
		puts_(o, "(");
		puts_(o, t->name);
		puts_(o, ")<nil>");
		return;
	}
	if (!o->ign) {
		puts_(o, "(");
		puts_(o, t->name); /* "*" + the element's name: one level of pointer */
		puts_(o, ")");
	} else {
		puts_(o, "<*>");
	}
	o->ign = true;
	format(o, t->elem, d);
}

struct keyed {
	const struct dn *d;
	size_t idx; /* JSON order: of equal keys the last one is kept, as Go's decoder does */
};

static int key_cmp(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	size_t n = x->d->keylen < y->d->keylen ? x->d->keylen : y->d->keylen;
	int c = memcmp(x->d->key, y->d->key, n);
	if (c)
		return c;
	if (x->d->keylen != y->d->keylen)
		return x->d->keylen < y->d->keylen ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static bool same_key(const struct dn *x, const struct dn *y)
{
	return x->keylen == y->keylen && memcmp(x->key, y->key, x->keylen) == 0;
}

/* Keys in Go's string order (bytewise), as SortKeys sorts string keys. */
static void format_map(struct out *o, const struct dh_type *t, const struct dn *d)
{
	if (d->kind != DN_OBJ)
		return fail(o, -EPROTO);
	struct keyed *v = d->n ? calloc(d->n, sizeof(*v)) : NULL;
	if (d->n && !v)
		return fail(o, -ENOMEM);
	size_t n = 0;
	for (const struct dn *c = d->first; c; c = c->next, n++)
		v[n] = (struct keyed){c, n};
	if (n > 1)
		qsort(v, n, sizeof(*v), key_cmp);
	puts_(o, "map[");
	bool first = true;
	for (size_t i = 0; i < n; i++) {
		if (i + 1 < n && same_key(v[i + 1].d, v[i].d))
			continue;
		if (d == o->skip_map && v[i].d->keylen == strlen(o->skip_key) &&
		    memcmp(v[i].d->key, o->skip_key, v[i].d->keylen) == 0)
			continue;
		if (!first)
			puts_(o, " ");
		first = false;
		if (o->semantic)
			put_len(o, v[i].d->keylen);
		put(o, v[i].d->key, v[i].d->keylen); /* a string key, its type ignored */
		o->ign = false;
		puts_(o, ":");
		o->ign = true;
		format(o, t->elem, v[i].d);
	}
	puts_(o, "]");
	free(v);
}

/* How many members of map d the semantic mode leaves out (the hash label, maybe repeated). */
static size_t skipped(const struct out *o, const struct dn *d)
{
	size_t k = 0;
	if (d != o->skip_map)
		return 0;
	for (const struct dn *c = d->first; c; c = c->next)
		if (c->keylen == strlen(o->skip_key) && memcmp(c->key, o->skip_key, c->keylen) == 0)
			k++;
	return k;
}

static void format_struct(struct out *o, int ti, const struct dn *d)
{
	const struct dh_type *t = &dh_types[ti];
	if (!absent(d) && d->kind != DN_OBJ)
		return fail(o, -EPROTO);
	puts_(o, "{");
	for (int k = 0; k < t->n_fields; k++) {
		const struct dh_field *f = &dh_fields[t->first_field + k];
		if (k > 0)
			puts_(o, " ");
		puts_(o, f->go_name);
		puts_(o, ":");
		format(o, f->type, f->inline_ ? d : member(d, f->json_name));
	}
	puts_(o, "}");
}

static void format_int(struct out *o, const struct dn *d, bool is_signed)
{
	char buf[24];
	if (absent(d)) {
		puts_(o, "0");
		return;
	}
	if (d->kind != DN_NUM)
		return fail(o, -EPROTO);
	if (is_signed) {
		int64_t v;
		if (parse_i64(d->s, d->len, &v) < 0)
			return fail(o, -EPROTO);
		snprintf(buf, sizeof(buf), "%" PRId64, v);
	} else {
		uint64_t v = 0;
		if (d->len == 0 || d->len > 20)
			return fail(o, -EPROTO);
		for (size_t i = 0; i < d->len; i++) {
			if (!isdig(d->s[i]) || v > (UINT64_MAX - 9) / 10)
				return fail(o, -EPROTO);
			v = v * 10 + (uint64_t)(d->s[i] - '0');
		}
		snprintf(buf, sizeof(buf), "%" PRIu64, v);
	}
	puts_(o, buf);
}

static void format(struct out *o, int ti, const struct dn *d)
{
	const struct dh_type *t = &dh_types[ti];
	if (o->err)
		return;
	if (t->kind == DH_PTR)
		return format_ptr(o, ti, d);
	/* Special types: swap the JSON value for the tree of its Go fields. */
	if (t->special != DH_SP_NONE && !absent(d)) {
		switch (t->special) {
		case DH_SP_QUANTITY: {
			struct qty q;
			if (d->kind != DN_STR && d->kind != DN_NUM)
				return fail(o, -EPROTO);
			int r = qty_parse(d->s, d->len, &q);
			if (r < 0)
				return fail(o, r);
			if (o->semantic) {
				char buf[QTY_CANON_MAX];
				qty_canonical(&q, buf);
				puts_(o, "(Quantity)");
				puts_(o, buf);
				o->ign = false;
				return;
			}
			d = qty_tree(o->arena, &q);
			break;
		}
		case DH_SP_INTORSTRING: {
			struct dn *x = syn(o->arena, DN_OBJ, NULL);
			if (d->kind == DN_NUM) {
				syn_add(x, "Type", syn(o->arena, DN_NUM, "0"));
				struct dn *v = syn(o->arena, DN_NUM, NULL);
				if (v) {
					v->s = d->s;
					v->len = d->len;
				}
				syn_add(x, "IntVal", v);
			} else if (d->kind == DN_STR) {
				syn_add(x, "Type", syn(o->arena, DN_NUM, "1"));
				struct dn *v = syn(o->arena, DN_STR, NULL);
				if (v) {
					v->s = d->s;
					v->len = d->len;
				}
				syn_add(x, "StrVal", v);
			} else {
				return fail(o, -EPROTO);
			}
			d = x;
			break;
		}
		default: /* DH_SP_TIME (set), DH_SP_UNSUPPORTED */
			return fail(o, -EOPNOTSUPP);
		}
		if (!d)
			return fail(o, -ENOMEM);
	}
	if (!o->ign) {
		puts_(o, "(");
		puts_(o, t->name);
		puts_(o, ")");
	}
	o->ign = false;
	switch (t->kind) {
	case DH_BOOL:
		if (!absent(d) && d->kind != DN_BOOL)
			return fail(o, -EPROTO);
		puts_(o, !absent(d) && d->b ? "true" : "false");
		break;
	case DH_INT:
	case DH_UINT:
		format_int(o, d, t->kind == DH_INT);
		break;
	case DH_STRING:
		if (absent(d))
			break;
		if (d->kind != DN_STR)
			return fail(o, -EPROTO);
		if (o->semantic)
			put_len(o, d->len);
		put(o, d->s, d->len);
		break;
	case DH_SLICE:
		if (absent(d) || (o->semantic && d->kind == DN_ARR && d->n == 0)) {
			puts_(o, "<nil>");
			break;
		}
		if (d->kind != DN_ARR)
			return fail(o, -EPROTO);
		puts_(o, "[");
		for (const struct dn *c = d->first; c; c = c->next) {
			if (c != d->first)
				puts_(o, " ");
			o->ign = true;
			format(o, t->elem, c);
		}
		puts_(o, "]");
		break;
	case DH_MAP:
		if (absent(d) || (o->semantic && d->kind == DN_OBJ && d->n == skipped(o, d))) {
			puts_(o, "<nil>");
			break;
		}
		format_map(o, t, d);
		break;
	case DH_STRUCT:
		format_struct(o, ti, d);
		break;
	default:
		fail(o, -EPROTO);
	}
}

static int print_root(int root, const char *json, size_t len, struct out *o)
{
	struct js_arena a;
	struct js j;
	struct dn *tree;
	int r = js_arena_init(&a, 4096);
	if (r < 0)
		return r;
	js_init(&j, json, len, &a);
	r = tree_read(&j, &a, &tree);
	if (r == 0 && js_peek(&j) != 0)
		r = j.err ? j.err : -EBADMSG; /* trailing bytes after the value */
	if (r == 0 && tree->kind != DN_OBJ)
		r = -EPROTO;
	if (r == 0) {
		o->h = FNV32_OFFSET;
		o->arena = &a;
		format(o, root, tree);
		r = o->err;
	}
	js_arena_free(&a);
	return r;
}

int kube_deephash_fnv32a(const char *json, size_t len, uint32_t *ret)
{
	struct out o = {0};
	int r = print_root(dh_root_pod_template_spec, json, len, &o);
	if (r < 0)
		return r;
	*ret = o.h;
	return 0;
}

int kube_deephash_dump(const char *json, size_t len, char **ret, size_t *ret_len)
{
	struct out o = {.dump = true};
	int r = print_root(dh_root_pod_template_spec, json, len, &o);
	if (r < 0) {
		free(o.buf);
		return r;
	}
	if (!o.buf) {
		o.buf = strdup("");
		if (!o.buf)
			return -ENOMEM;
	}
	*ret = o.buf;
	if (ret_len)
		*ret_len = o.len;
	return 0;
}

void kube_pod_template_hash_finish(uint32_t h, const int32_t *collision_count,
                                   char ret[KUBE_POD_TEMPLATE_HASH_MAX])
{
	static const char alphanums[] = "bcdfghjklmnpqrstvwxz2456789";
	if (collision_count) {
		uint32_t c = (uint32_t)*collision_count;
		unsigned char b[8] = {(unsigned char)c, (unsigned char)(c >> 8),
		                      (unsigned char)(c >> 16), (unsigned char)(c >> 24)};
		for (size_t i = 0; i < sizeof(b); i++) {
			h ^= b[i];
			h *= FNV32_PRIME;
		}
	}
	char dec[KUBE_POD_TEMPLATE_HASH_MAX];
	int n = snprintf(dec, sizeof(dec), "%" PRIu32, h);
	for (int i = 0; i < n; i++)
		ret[i] = alphanums[(unsigned char)dec[i] % (sizeof(alphanums) - 1)];
	ret[n] = 0;
}

int kube_pod_template_hash(const char *json, size_t len, const int32_t *collision_count,
                           char ret[KUBE_POD_TEMPLATE_HASH_MAX])
{
	uint32_t h;
	int r = kube_deephash_fnv32a(json, len, &h);
	if (r < 0)
		return r;
	kube_pod_template_hash_finish(h, collision_count, ret);
	return 0;
}

/* The root template's metadata.labels node (NULL when absent). */
static const struct dn *root_labels(const struct dn *tree)
{
	return member(member(tree, "metadata"), "labels");
}

static int semantic_text(const char *json, size_t len, char **ret, size_t *ret_len)
{
	struct js_arena a;
	struct js j;
	struct dn *tree;
	struct out o = {.dump = true, .semantic = true, .skip_key = "pod-template-hash"};
	int r = js_arena_init(&a, 4096);
	if (r < 0)
		return r;
	js_init(&j, json, len, &a);
	r = tree_read(&j, &a, &tree);
	if (r == 0 && js_peek(&j) != 0)
		r = j.err ? j.err : -EBADMSG;
	if (r == 0 && tree->kind != DN_OBJ)
		r = -EPROTO;
	if (r == 0) {
		o.arena = &a;
		o.skip_map = root_labels(tree);
		format(&o, dh_root_pod_template_spec, tree);
		r = o.err;
	}
	js_arena_free(&a);
	if (r < 0) {
		free(o.buf);
		return r;
	}
	*ret = o.buf;
	*ret_len = o.len;
	return 0;
}

int kube_pod_template_equal_ignore_hash(const char *a, size_t alen, const char *b, size_t blen)
{
	char *ta = NULL, *tb = NULL;
	size_t la = 0, lb = 0;
	int r = semantic_text(a, alen, &ta, &la);
	if (r == 0)
		r = semantic_text(b, blen, &tb, &lb);
	if (r == 0)
		r = la == lb && (la == 0 || memcmp(ta, tb, la) == 0);
	free(ta);
	free(tb);
	return r;
}
