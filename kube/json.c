/* SPDX-License-Identifier: Apache-2.0 */
/* kube/json.c - the pull scanner and bump arena behind the decoders.
 *
 * Why not cJSON for decoding: a DOM parse allocates a node for every value of a pod, ~70 % of
 * whose bytes are managedFields and spec that no controller reads; measured on this machine kind
 * it tops out near 53k pods/s. This scanner walks the bytes once, copies only the strings the
 * decoder keeps into one arena per object, and skips the rest with a tight, allocation-free,
 * iterative (bit-stack, no recursion) validator. Skipped text is validated as strictly as kept
 * text, so a document is either fully JSON or rejected.
 *
 * Rejected alternatives: simdjson-style two-stage indexing (C++ only, and the structural index
 * pass costs as much as our single pass for 4 KB inputs); a hand-written DOM with arena nodes
 * (still pays for every managedFields node).
 *
 * Not validated: UTF-8 well-formedness of string bytes (the apiserver emits valid UTF-8; bytes are
 * copied through unchanged). Duplicate keys: the last one wins, as in Go.
 */
#include "kube/json.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* ---- arena --------------------------------------------------------------------------------- */

static struct js_chunk *chunk_new(size_t cap)
{
	struct js_chunk *c = malloc(sizeof(*c) + cap);
	if (!c)
		return NULL;
	c->next = NULL;
	c->cap = cap;
	c->used = 0;
	return c;
}

int js_arena_init(struct js_arena *a, size_t first_cap)
{
	a->head = a->cur = chunk_new(first_cap);
	return a->head ? 0 : -ENOMEM;
}

void *js_alloc(struct js_arena *a, size_t n)
{
	size_t need = (n + 7) & ~(size_t)7;
	struct js_chunk *c = a->cur;
	if (need < n)
		return NULL;
	if (c->cap - c->used < need) {
		if (c->next && c->next->cap - c->next->used >= need) {
			/* a chunk kept by js_arena_reset() */
			a->cur = c = c->next;
		} else {
			size_t cap = c->cap * 2;
			if (cap < need)
				cap = need;
			if (cap < 1024)
				cap = 1024;
			struct js_chunk *nc = chunk_new(cap);
			if (!nc)
				return NULL;
			nc->next = c->next; /* keep retained chunks after it */
			c->next = nc;
			a->cur = c = nc;
		}
	}
	void *p = c->data + c->used;
	c->used += need;
	memset(p, 0, n);
	return p;
}

void *js_memdup(struct js_arena *a, const void *p, size_t n)
{
	void *d = js_alloc(a, n ? n : 1);
	if (d && n)
		memcpy(d, p, n);
	return d;
}

char *js_strndup(struct js_arena *a, const char *s, size_t n)
{
	if (n == SIZE_MAX)
		return NULL;
	char *d = js_alloc(a, n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = 0;
	}
	return d;
}

void js_arena_reset(struct js_arena *a)
{
	for (struct js_chunk *c = a->head; c; c = c->next)
		c->used = 0;
	a->cur = a->head;
}

void js_arena_free(struct js_arena *a)
{
	struct js_chunk *c = a->head;
	while (c) {
		struct js_chunk *n = c->next;
		free(c);
		c = n;
	}
	a->head = a->cur = NULL;
}

void js_arena_free_obj(void *obj)
{
	if (!obj)
		return;
	struct js_chunk *c =
	        (struct js_chunk *)((unsigned char *)obj - offsetof(struct js_chunk, data));
	while (c) {
		struct js_chunk *n = c->next;
		free(c);
		c = n;
	}
}

size_t js_arena_bytes(const struct js_arena *a)
{
	size_t t = 0;
	for (const struct js_chunk *c = a->head; c; c = c->next)
		t += sizeof(*c) + c->cap;
	return t;
}

/* ---- scanner ------------------------------------------------------------------------------- */

/* 1 for bytes that end the fast part of a string scan: '"', '\\' and control characters. */
static const unsigned char str_stop[256] = {
        [0 ... 0x1f] = 1,
        ['"'] = 1,
        ['\\'] = 1,
};

void js_init(struct js *j, const void *buf, size_t len, struct js_arena *arena)
{
	j->p = buf;
	j->end = j->p + len;
	j->depth = 0;
	j->err = 0;
	j->arena = arena;
}

int js_fail(struct js *j, int err)
{
	if (!j->err)
		j->err = err;
	j->p = j->end; /* stop all further scanning */
	return j->err;
}

static inline void ws(struct js *j)
{
	const unsigned char *p = j->p, *e = j->end;
	while (p < e && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
		p++;
	j->p = p;
}

int js_peek(struct js *j)
{
	if (j->err)
		return 0;
	ws(j);
	return j->p < j->end ? *j->p : 0;
}

static bool lit(struct js *j, const char *w, size_t n)
{
	if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n) != 0)
		return false;
	j->p += n;
	return true;
}

bool js_null(struct js *j)
{
	if (js_peek(j) == 'n') {
		if (lit(j, "null", 4))
			return true;
		js_fail(j, -EBADMSG);
	}
	return false;
}

static inline int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* j->p at the opening quote. On success j->p is past the closing quote. */
static int scan_string(struct js *j, const unsigned char **s, size_t *n, bool *escaped)
{
	const unsigned char *p = j->p + 1, *e = j->end;
	bool esc = false;
	for (;;) {
#ifdef __SSE2__
		/* 16 bytes at a time: stop at '"', '\\' or a control character (x <= 0x1f,
		 * tested unsigned as max(x, 0x1f) == 0x1f) */
		while (p + 16 <= e) {
			__m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
			__m128i hit =
			        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')),
			                                  _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))),
			                     _mm_cmpeq_epi8(_mm_max_epu8(x, _mm_set1_epi8(0x1f)),
			                                    _mm_set1_epi8(0x1f)));
			unsigned m = (unsigned)_mm_movemask_epi8(hit);
			if (m) {
				p += __builtin_ctz(m);
				goto stop;
			}
			p += 16;
		}
#endif
		while (p + 4 <= e && !str_stop[p[0]] && !str_stop[p[1]] && !str_stop[p[2]] &&
		       !str_stop[p[3]])
			p += 4;
		while (p < e && !str_stop[*p])
			p++;
#ifdef __SSE2__
	stop:
#endif
		if (p >= e)
			return js_fail(j, -EBADMSG);
		if (*p == '"')
			break;
		if (*p != '\\')
			return js_fail(j, -EBADMSG); /* raw control character */
		esc = true;
		if (++p >= e)
			return js_fail(j, -EBADMSG);
		switch (*p) {
		case '"':
		case '\\':
		case '/':
		case 'b':
		case 'f':
		case 'n':
		case 'r':
		case 't':
			p++;
			break;
		case 'u':
			if (e - p < 5 || hexval(p[1]) < 0 || hexval(p[2]) < 0 || hexval(p[3]) < 0 ||
			    hexval(p[4]) < 0)
				return js_fail(j, -EBADMSG);
			p += 5;
			break;
		default:
			return js_fail(j, -EBADMSG);
		}
	}
	*s = j->p + 1;
	*n = (size_t)(p - (j->p + 1));
	*escaped = esc;
	j->p = p + 1;
	return 0;
}

static int scan_number(struct js *j)
{
	const unsigned char *p = j->p, *e = j->end;
	if (p < e && *p == '-')
		p++;
	if (p >= e)
		return js_fail(j, -EBADMSG);
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (p < e && *p >= '0' && *p <= '9')
			p++;
	else
		return js_fail(j, -EBADMSG);
	if (p < e && *p == '.') {
		p++;
		if (p >= e || *p < '0' || *p > '9')
			return js_fail(j, -EBADMSG);
		while (p < e && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < e && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < e && (*p == '+' || *p == '-'))
			p++;
		if (p >= e || *p < '0' || *p > '9')
			return js_fail(j, -EBADMSG);
		while (p < e && *p >= '0' && *p <= '9')
			p++;
	}
	j->p = p;
	return 0;
}

/* Scans one scalar at j->p (after whitespace). */
static int scan_scalar(struct js *j)
{
	const unsigned char *s;
	size_t n;
	bool esc;
	switch (*j->p) {
	case '"':
		return scan_string(j, &s, &n, &esc);
	case 't':
		return lit(j, "true", 4) ? 0 : js_fail(j, -EBADMSG);
	case 'f':
		return lit(j, "false", 5) ? 0 : js_fail(j, -EBADMSG);
	case 'n':
		return lit(j, "null", 4) ? 0 : js_fail(j, -EBADMSG);
	default:
		return scan_number(j);
	}
}

int js_skip(struct js *j)
{
	uint64_t kind[JS_MAX_DEPTH / 64]; /* bit set: that level is an object */
	int d = 0;
	const unsigned char *s;
	size_t n;
	bool esc;

	if (j->err)
		return j->err;
value:
	ws(j);
	if (j->p >= j->end)
		return js_fail(j, -EBADMSG);
	if (*j->p == '{' || *j->p == '[') {
		bool obj = *j->p == '{';
		if (d >= JS_MAX_DEPTH || j->depth + d >= JS_MAX_DEPTH)
			return js_fail(j, -E2BIG);
		if (obj)
			kind[d / 64] |= (uint64_t)1 << (d % 64);
		else
			kind[d / 64] &= ~((uint64_t)1 << (d % 64));
		d++;
		j->p++;
		ws(j);
		if (j->p < j->end && *j->p == (obj ? '}' : ']')) {
			j->p++;
			d--;
			goto after;
		}
		if (obj)
			goto key;
		goto value;
	}
	if (scan_scalar(j) < 0)
		return j->err;
after:
	if (d == 0)
		return 0;
	ws(j);
	if (j->p >= j->end)
		return js_fail(j, -EBADMSG);
	{
		bool obj = (kind[(d - 1) / 64] >> ((d - 1) % 64)) & 1;
		if (*j->p == ',') {
			j->p++;
			if (obj)
				goto key;
			goto value;
		}
		if (*j->p == (obj ? '}' : ']')) {
			j->p++;
			d--;
			goto after;
		}
		return js_fail(j, -EBADMSG);
	}
key:
	ws(j);
	if (j->p >= j->end || *j->p != '"')
		return js_fail(j, -EBADMSG);
	if (scan_string(j, &s, &n, &esc) < 0)
		return j->err;
	ws(j);
	if (j->p >= j->end || *j->p != ':')
		return js_fail(j, -EBADMSG);
	j->p++;
	goto value;
}

int js_raw(struct js *j, const char **s, size_t *n)
{
	if (js_peek(j) == 0)
		return j->err ? j->err : js_fail(j, -EBADMSG);
	const unsigned char *start = j->p;
	if (js_skip(j) < 0)
		return j->err;
	*s = (const char *)start;
	*n = (size_t)(j->p - start);
	return 1;
}

int js_obj_begin(struct js *j)
{
	int c = js_peek(j);
	if (j->err)
		return j->err;
	if (c == '{') {
		if (++j->depth >= JS_MAX_DEPTH)
			return js_fail(j, -E2BIG);
		j->p++;
		ws(j);
		/* Mark "first key" by leaving p at the key or at '}'. */
		return 1;
	}
	if (c == 'n' && js_null(j))
		return 0;
	if (c == 0)
		return js_fail(j, -EBADMSG);
	/* A value of another type: skip it so the error is -EPROTO only if it is valid JSON. */
	if (js_skip(j) < 0)
		return j->err;
	return js_fail(j, -EPROTO);
}

int js_obj_next(struct js *j, const char **key, size_t *keylen)
{
	const unsigned char *s;
	size_t n;
	bool esc;
	if (j->err)
		return j->err;
	ws(j);
	if (j->p >= j->end)
		return js_fail(j, -EBADMSG);
	if (*j->p == '}') {
		j->p++;
		j->depth--;
		return 0;
	}
	if (*j->p == ',') {
		/* Only valid after a member: the previous char (ignoring ws) is not '{'. */
		const unsigned char *q = j->p - 1;
		while (*q == ' ' || *q == '\n' || *q == '\r' || *q == '\t')
			q--;
		if (*q == '{')
			return js_fail(j, -EBADMSG);
		j->p++;
		ws(j);
		if (j->p >= j->end || *j->p != '"')
			return js_fail(j, -EBADMSG);
	} else {
		const unsigned char *q = j->p - 1;
		while (*q == ' ' || *q == '\n' || *q == '\r' || *q == '\t')
			q--;
		if (*q != '{' || *j->p != '"')
			return js_fail(j, -EBADMSG);
	}
	if (scan_string(j, &s, &n, &esc) < 0)
		return j->err;
	ws(j);
	if (j->p >= j->end || *j->p != ':')
		return js_fail(j, -EBADMSG);
	j->p++;
	if (esc) {
		if (n < sizeof(j->keybuf)) {
			long r = js_unescape((const char *)s, n, j->keybuf);
			if (r < 0)
				return js_fail(j, -EBADMSG);
			*key = j->keybuf;
			*keylen = (size_t)r;
			return 1;
		}
		/* too long to be a key we know: hand back the raw bytes */
	}
	*key = (const char *)s;
	*keylen = n;
	return 1;
}

int js_arr_begin(struct js *j)
{
	int c = js_peek(j);
	if (j->err)
		return j->err;
	if (c == '[') {
		if (++j->depth >= JS_MAX_DEPTH)
			return js_fail(j, -E2BIG);
		j->p++;
		return 1;
	}
	if (c == 'n' && js_null(j))
		return 0;
	if (c == 0)
		return js_fail(j, -EBADMSG);
	if (js_skip(j) < 0)
		return j->err;
	return js_fail(j, -EPROTO);
}

int js_arr_next(struct js *j)
{
	if (j->err)
		return j->err;
	ws(j);
	if (j->p >= j->end)
		return js_fail(j, -EBADMSG);
	const unsigned char *q = j->p - 1;
	while (*q == ' ' || *q == '\n' || *q == '\r' || *q == '\t')
		q--;
	bool first = *q == '[';
	if (*j->p == ']') {
		if (!first && *q == ',')
			return js_fail(j, -EBADMSG);
		j->p++;
		j->depth--;
		return 0;
	}
	if (first)
		return 1;
	if (*j->p != ',')
		return js_fail(j, -EBADMSG);
	j->p++;
	ws(j);
	if (j->p >= j->end || *j->p == ']')
		return js_fail(j, -EBADMSG);
	return 1;
}

int js_str_span(struct js *j, const char **s, size_t *n, bool *escaped)
{
	int c = js_peek(j);
	if (j->err)
		return j->err;
	if (c == '"') {
		const unsigned char *us;
		if (scan_string(j, &us, n, escaped) < 0)
			return j->err;
		*s = (const char *)us;
		return 1;
	}
	if (c == 'n' && js_null(j))
		return 0;
	if (c == 0)
		return js_fail(j, -EBADMSG);
	if (js_skip(j) < 0)
		return j->err;
	return js_fail(j, -EPROTO);
}

int js_str(struct js *j, char **ret)
{
	const char *s;
	size_t n;
	bool esc;
	int r = js_str_span(j, &s, &n, &esc);
	if (r <= 0) {
		if (r == 0)
			*ret = NULL;
		return r;
	}
	char *d = js_alloc(j->arena, n + 1);
	if (!d)
		return js_fail(j, -ENOMEM);
	if (esc) {
		long m = js_unescape(s, n, d);
		if (m < 0)
			return js_fail(j, -EBADMSG);
	} else {
		memcpy(d, s, n);
		d[n] = 0;
	}
	*ret = d;
	return 1;
}

static size_t put_utf8(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

static int hex4(const char *p)
{
	int v = 0;
	for (int i = 0; i < 4; i++) {
		int h = hexval((unsigned char)p[i]);
		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

/* Output never exceeds input: every escape (>= 2 bytes) yields <= its own length in UTF-8
 * (\uXXXX = 6 bytes -> <= 3; a surrogate pair = 12 bytes -> 4; a lone surrogate -> U+FFFD, 3). */
long js_unescape(const char *in, size_t n, char *out)
{
	size_t i = 0, o = 0;
	while (i < n) {
		char c = in[i];
		if (c != '\\') {
			out[o++] = c;
			i++;
			continue;
		}
		if (i + 1 >= n)
			return -EBADMSG;
		c = in[i + 1];
		i += 2;
		switch (c) {
		case '"':
			out[o++] = '"';
			break;
		case '\\':
			out[o++] = '\\';
			break;
		case '/':
			out[o++] = '/';
			break;
		case 'b':
			out[o++] = '\b';
			break;
		case 'f':
			out[o++] = '\f';
			break;
		case 'n':
			out[o++] = '\n';
			break;
		case 'r':
			out[o++] = '\r';
			break;
		case 't':
			out[o++] = '\t';
			break;
		case 'u': {
			if (i + 4 > n)
				return -EBADMSG;
			int cp = hex4(in + i);
			if (cp < 0)
				return -EBADMSG;
			i += 4;
			if (cp == 0)
				return -EBADMSG;
			uint32_t u = (uint32_t)cp;
			if (cp >= 0xd800 && cp < 0xdc00) {
				int lo = -1;
				if (i + 6 <= n && in[i] == '\\' && in[i + 1] == 'u')
					lo = hex4(in + i + 2);
				if (lo >= 0xdc00 && lo < 0xe000) {
					u = 0x10000 + (((uint32_t)cp - 0xd800) << 10) +
					    ((uint32_t)lo - 0xdc00);
					i += 6;
				} else
					u = 0xfffd; /* lone high surrogate, as Go does */
			} else if (cp >= 0xdc00 && cp < 0xe000)
				u = 0xfffd;
			o += put_utf8(out + o, u);
			break;
		}
		default:
			return -EBADMSG;
		}
	}
	out[o] = 0;
	return (long)o;
}

int js_int64(struct js *j, int64_t *ret)
{
	int c = js_peek(j);
	if (j->err)
		return j->err;
	if (c == 'n' && js_null(j))
		return 0;
	if (c != '-' && (c < '0' || c > '9')) {
		if (c == 0)
			return js_fail(j, -EBADMSG);
		if (js_skip(j) < 0)
			return j->err;
		return js_fail(j, -EPROTO);
	}
	const unsigned char *start = j->p;
	if (scan_number(j) < 0)
		return j->err;
	const unsigned char *p = start, *e = j->p;
	bool neg = false;
	if (*p == '-') {
		neg = true;
		p++;
	}
	uint64_t v = 0;
	for (; p < e; p++) {
		if (*p < '0' || *p > '9')
			return js_fail(j, -EPROTO); /* fraction or exponent in an integer field */
		if (v > (UINT64_MAX - 9) / 10)
			return js_fail(j, -EPROTO);
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (neg) {
		if (v > (uint64_t)INT64_MAX + 1)
			return js_fail(j, -EPROTO);
		*ret = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
	} else {
		if (v > (uint64_t)INT64_MAX)
			return js_fail(j, -EPROTO);
		*ret = (int64_t)v;
	}
	return 1;
}

int js_int32(struct js *j, int32_t *ret)
{
	int64_t v;
	int r = js_int64(j, &v);
	if (r <= 0)
		return r;
	if (v < INT32_MIN || v > INT32_MAX)
		return js_fail(j, -EPROTO);
	*ret = (int32_t)v;
	return 1;
}

int js_bool(struct js *j, bool *ret)
{
	int c = js_peek(j);
	if (j->err)
		return j->err;
	if (c == 't' && lit(j, "true", 4)) {
		*ret = true;
		return 1;
	}
	if (c == 'f' && lit(j, "false", 5)) {
		*ret = false;
		return 1;
	}
	if (c == 'n' && js_null(j))
		return 0;
	if (c == 0)
		return js_fail(j, -EBADMSG);
	if (js_skip(j) < 0)
		return j->err;
	return js_fail(j, -EPROTO);
}
