/* SPDX-License-Identifier: Apache-2.0 */
/* kube/selector.c - label selector parsing, validation, conversion and matching.
 *
 * Follows apimachinery's labels package: the string grammar
 *     selector    := requirement ("," requirement)*
 *     requirement := ["!"] KEY [ ("in"|"notin") "(" values ")" | ("="|"=="|"!="|">"|"<") VALUE ]
 * with its quirks kept on purpose, because a selector string means what the apiserver thinks it
 * means: "in"/"notin" are identifiers when they stand where a key or value belongs; "()" is the
 * set {""}; "(a,,b)" and "(a,)" add ""; "x=" means x equals ""; set values are de-duplicated and
 * sorted; requirements are sorted by key. LabelSelector conversion keeps values as written.
 *
 * A selector is one arena allocation (kube/json.h's arena): the struct, its requirement array and
 * all strings, so free is one call and the object can be shared read-only.
 */
#include "kube/selector.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"

#include <cjson/cJSON.h>

enum shape { SEL_NOTHING, SEL_EVERYTHING, SEL_REQS };

struct req {
	const char *key;
	enum kube_selector_op op;
	uint32_t n;
	const char **vals;
};

struct kube_selector {
	enum shape shape;
	uint32_t n, cap;
	struct req *reqs;
	struct js_arena arena; /* a copy of the arena descriptor, for allocations after creation */
};

static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	if (!err || !errlen)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* ---- validation ----------------------------------------------------------------------------- */

static bool alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] */
static bool qualified_part(const char *s, size_t n)
{
	if (n == 0 || !alnum(s[0]) || !alnum(s[n - 1]))
		return false;
	for (size_t i = 1; i + 1 < n; i++)
		if (!alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

static bool dns1123_subdomain(const char *s, size_t n)
{
	if (n == 0 || n > 253)
		return false;
	size_t start = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i == n || s[i] == '.') {
			size_t ln = i - start;
			if (ln == 0)
				return false;
			const char *l = s + start;
			bool lead = (l[0] >= 'a' && l[0] <= 'z') || (l[0] >= '0' && l[0] <= '9');
			bool trail = (l[ln - 1] >= 'a' && l[ln - 1] <= 'z') ||
			             (l[ln - 1] >= '0' && l[ln - 1] <= '9');
			if (!lead || !trail)
				return false;
			for (size_t k = 0; k < ln; k++)
				if (!((l[k] >= 'a' && l[k] <= 'z') ||
				      (l[k] >= '0' && l[k] <= '9') || l[k] == '-'))
					return false;
			start = i + 1;
		}
	}
	return true;
}

int kube_validate_label_key(const char *k)
{
	if (!k)
		return -EINVAL;
	const char *slash = strchr(k, '/');
	const char *name = k;
	if (slash) {
		if (strchr(slash + 1, '/'))
			return -EINVAL;
		if (slash == k || !dns1123_subdomain(k, (size_t)(slash - k)))
			return -EINVAL;
		name = slash + 1;
	}
	size_t n = strlen(name);
	if (n == 0 || n > 63 || !qualified_part(name, n))
		return -EINVAL;
	return 0;
}

int kube_validate_label_value(const char *v)
{
	if (!v)
		return -EINVAL;
	size_t n = strlen(v);
	if (n > 63)
		return -EINVAL;
	if (n && !qualified_part(v, n))
		return -EINVAL;
	return 0;
}

static bool parse_i64(const char *s, int64_t *ret)
{
	/* strconv.ParseInt(s, 10, 64): optional sign, digits, no spaces */
	const char *p = s;
	bool neg = false;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if (!*p)
		return false;
	uint64_t v = 0;
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		if (v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX)
		return false;
	*ret = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
	return true;
}

static const char *op_name(enum kube_selector_op op)
{
	static const char *const names[] = {"in", "notin", "exists", "!",  "=",
	                                    "==", "!=",    "gt",     "lt", "?"};
	return op <= KUBE_OP_INVALID ? names[op] : "?";
}

/* labels.NewRequirement's checks. */
static int check_req(const char *key, enum kube_selector_op op, const char *const *vals, uint32_t n,
                     char *err, size_t errlen)
{
	if (kube_validate_label_key(key) < 0) {
		seterr(err, errlen,
		       "invalid label key \"%s\": must be [prefix/]name, name at most 63 "
		       "alphanumeric characters with '-', '_' or '.' inside, prefix a DNS "
		       "subdomain",
		       key);
		return -EINVAL;
	}
	switch (op) {
	case KUBE_OP_IN:
	case KUBE_OP_NOT_IN:
		if (n == 0) {
			seterr(err, errlen,
			       "key %s: for 'in', 'notin' operators, values set can't be empty",
			       key);
			return -EINVAL;
		}
		break;
	case KUBE_OP_EQUALS:
	case KUBE_OP_DOUBLE_EQUALS:
	case KUBE_OP_NOT_EQUALS:
		if (n != 1) {
			seterr(err, errlen,
			       "key %s: exact-match compatibility requires one single value", key);
			return -EINVAL;
		}
		break;
	case KUBE_OP_EXISTS:
	case KUBE_OP_DOES_NOT_EXIST:
		if (n != 0) {
			seterr(err, errlen,
			       "key %s: values set must be empty for exists and does not exist",
			       key);
			return -EINVAL;
		}
		break;
	case KUBE_OP_GT:
	case KUBE_OP_LT: {
		int64_t v;
		if (n != 1 || !parse_i64(vals[0], &v)) {
			seterr(err, errlen,
			       "key %s: for 'Gt', 'Lt' operators, exactly one integer value is "
			       "required",
			       key);
			return -EINVAL;
		}
		break;
	}
	default:
		seterr(err, errlen, "key %s: operator not supported", key);
		return -EINVAL;
	}
	for (uint32_t i = 0; i < n; i++)
		if (kube_validate_label_value(vals[i]) < 0) {
			seterr(err, errlen,
			       "invalid label value \"%s\" for key %s: must be at most 63 "
			       "alphanumeric characters with '-', '_' or '.' inside",
			       vals[i], key);
			return -EINVAL;
		}
	return 0;
}

/* ---- construction --------------------------------------------------------------------------- */

static struct kube_selector *sel_new(enum shape shape)
{
	struct js_arena a;
	if (js_arena_init(&a, 512) < 0)
		return NULL;
	struct kube_selector *s = js_alloc(&a, sizeof(*s));
	if (!s) {
		js_arena_free(&a);
		return NULL;
	}
	s->shape = shape;
	s->arena = a;
	return s;
}

void kube_selector_free(struct kube_selector *s)
{
	if (s)
		js_arena_free_obj(s);
}

static char *sdup(struct kube_selector *s, const char *p, size_t n)
{
	char *d = js_strndup(&s->arena, p, n);
	/* the arena's first chunk is the selector itself; later chunks hang off it */
	return d;
}

static int add_req(struct kube_selector *s, const char *key, enum kube_selector_op op,
                   const char **vals, uint32_t n)
{
	if (s->n == s->cap) {
		uint32_t nc = s->cap ? s->cap * 2 : 4;
		struct req *na = js_alloc(&s->arena, nc * sizeof(*na));
		if (!na)
			return -ENOMEM;
		if (s->n)
			memcpy(na, s->reqs, s->n * sizeof(*na));
		s->reqs = na;
		s->cap = nc;
	}
	struct req *r = &s->reqs[s->n];
	r->key = sdup(s, key, strlen(key));
	r->vals = n ? js_alloc(&s->arena, n * sizeof(char *)) : NULL;
	if (!r->key || (n && !r->vals))
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		if (!(r->vals[i] = sdup(s, vals[i], strlen(vals[i]))))
			return -ENOMEM;
	r->op = op;
	r->n = n;
	s->n++;
	return 0;
}

static void sort_reqs(struct kube_selector *s)
{
	/* insertion sort: stable, and selectors are short */
	for (uint32_t i = 1; i < s->n; i++) {
		struct req t = s->reqs[i];
		uint32_t k = i;
		while (k > 0 && strcmp(s->reqs[k - 1].key, t.key) > 0) {
			s->reqs[k] = s->reqs[k - 1];
			k--;
		}
		s->reqs[k] = t;
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int kube_selector_from_label_selector(const struct kube_label_selector *ls,
                                      struct kube_selector **ret, char *err, size_t errlen)
{
	struct kube_selector *s;
	int r;
	if (!ret)
		return -EINVAL;
	if (!ls) {
		if (!(s = sel_new(SEL_NOTHING)))
			return -ENOMEM;
		*ret = s;
		return 0;
	}
	if (ls->n_match_labels + ls->n_match_expressions == 0) {
		if (!(s = sel_new(SEL_EVERYTHING)))
			return -ENOMEM;
		*ret = s;
		return 0;
	}
	if (!(s = sel_new(SEL_REQS)))
		return -ENOMEM;
	for (uint32_t i = 0; i < ls->n_match_labels; i++) {
		const char *v = ls->match_labels[i].value;
		if ((r = check_req(ls->match_labels[i].key, KUBE_OP_EQUALS, &v, 1, err, errlen)) <
		            0 ||
		    (r = add_req(s, ls->match_labels[i].key, KUBE_OP_EQUALS, &v, 1)) < 0)
			goto fail;
	}
	for (uint32_t i = 0; i < ls->n_match_expressions; i++) {
		const struct kube_label_requirement *q = &ls->match_expressions[i];
		if (q->op > KUBE_OP_DOES_NOT_EXIST) {
			seterr(err, errlen, "\"%s\" is not a valid label selector operator",
			       q->op_text ? q->op_text : "");
			r = -EINVAL;
			goto fail;
		}
		if ((r = check_req(q->key, q->op, q->values, q->n_values, err, errlen)) < 0 ||
		    (r = add_req(s, q->key, q->op, q->values, q->n_values)) < 0)
			goto fail;
	}
	sort_reqs(s);
	*ret = s;
	return 0;
fail:
	kube_selector_free(s);
	return r;
}

/* ---- string parser -------------------------------------------------------------------------- */

enum tok {
	T_ERR,
	T_END,
	T_CPAR,
	T_COMMA,
	T_NOT,
	T_DEQ,
	T_EQ,
	T_GT,
	T_ID,
	T_IN,
	T_LT,
	T_NEQ,
	T_NOTIN,
	T_OPAR
};

struct item {
	enum tok t;
	const char *s;
	size_t n;
};

static bool special(char c)
{
	return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' || c == '>' || c == '<';
}
static bool white(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static struct item lex(const char **pp)
{
	const char *p = *pp;
	struct item it = {T_END, p, 0};
	while (white(*p))
		p++;
	it.s = p;
	if (!*p) {
		*pp = p;
		return it;
	}
	if (special(*p)) {
		if (p[1] == '=' && (p[0] == '!' || p[0] == '=')) {
			it.t = p[0] == '!' ? T_NEQ : T_DEQ;
			it.n = 2;
		} else {
			it.n = 1;
			switch (*p) {
			case '=':
				it.t = T_EQ;
				break;
			case '!':
				it.t = T_NOT;
				break;
			case '(':
				it.t = T_OPAR;
				break;
			case ')':
				it.t = T_CPAR;
				break;
			case ',':
				it.t = T_COMMA;
				break;
			case '>':
				it.t = T_GT;
				break;
			default:
				it.t = T_LT;
				break;
			}
		}
		*pp = p + it.n;
		return it;
	}
	const char *st = p;
	while (*p && !special(*p) && !white(*p))
		p++;
	it.n = (size_t)(p - st);
	it.t = T_ID;
	if (it.n == 2 && !memcmp(st, "in", 2))
		it.t = T_IN;
	else if (it.n == 5 && !memcmp(st, "notin", 5))
		it.t = T_NOTIN;
	*pp = p;
	return it;
}

struct parser {
	struct item *items;
	size_t n, pos;
	char *err;
	size_t errlen;
};

/* Values context: "in" and "notin" read as identifiers. */
static struct item look(struct parser *p, bool values)
{
	struct item it = p->items[p->pos];
	if (values && (it.t == T_IN || it.t == T_NOTIN))
		it.t = T_ID;
	return it;
}
static struct item take(struct parser *p, bool values)
{
	struct item it = look(p, values);
	if (it.t != T_END)
		p->pos++;
	return it;
}

#define MAXVALS 4096

struct valset {
	char *v[MAXVALS];
	uint32_t n;
};

static int vs_add(struct valset *vs, const char *s, size_t n)
{
	for (uint32_t i = 0; i < vs->n; i++)
		if (strlen(vs->v[i]) == n && !memcmp(vs->v[i], s, n))
			return 0;
	if (vs->n == MAXVALS)
		return -E2BIG;
	if (!(vs->v[vs->n] = strndup(s, n)))
		return -ENOMEM;
	vs->n++;
	return 0;
}

static void vs_clear(struct valset *vs)
{
	for (uint32_t i = 0; i < vs->n; i++)
		free(vs->v[i]);
	vs->n = 0;
}

static int perr(struct parser *p, const char *what, struct item it)
{
	seterr(p->err, p->errlen, "unable to parse requirement: found '%.*s', expected: %s",
	       (int)it.n, it.s, what);
	return -EINVAL;
}

static int parse_requirement(struct parser *p, struct kube_selector *s, struct valset *vs)
{
	enum kube_selector_op op = KUBE_OP_INVALID;
	char key[320];
	struct item it = take(p, true);
	if (it.t == T_NOT) {
		op = KUBE_OP_DOES_NOT_EXIST;
		it = take(p, true);
	}
	if (it.t != T_ID)
		return perr(p, "identifier", it);
	if (it.n >= sizeof(key)) {
		seterr(p->err, p->errlen, "unable to parse requirement: label key too long");
		return -EINVAL;
	}
	memcpy(key, it.s, it.n);
	key[it.n] = 0;
	if (kube_validate_label_key(key) < 0)
		return check_req(key, KUBE_OP_EXISTS, NULL, 0, p->err, p->errlen);
	struct item nx = look(p, true);
	if (nx.t == T_END || nx.t == T_COMMA) {
		if (op != KUBE_OP_DOES_NOT_EXIST)
			op = KUBE_OP_EXISTS;
	}
	vs_clear(vs);
	if (op != KUBE_OP_EXISTS && op != KUBE_OP_DOES_NOT_EXIST) {
		it = take(p, false);
		switch (it.t) {
		case T_IN:
			op = KUBE_OP_IN;
			break;
		case T_NOTIN:
			op = KUBE_OP_NOT_IN;
			break;
		case T_EQ:
			op = KUBE_OP_EQUALS;
			break;
		case T_DEQ:
			op = KUBE_OP_DOUBLE_EQUALS;
			break;
		case T_NEQ:
			op = KUBE_OP_NOT_EQUALS;
			break;
		case T_GT:
			op = KUBE_OP_GT;
			break;
		case T_LT:
			op = KUBE_OP_LT;
			break;
		default:
			return perr(p, "in, notin, =, ==, !=, gt, lt", it);
		}
		int r;
		if (op == KUBE_OP_IN || op == KUBE_OP_NOT_IN) {
			it = take(p, true);
			if (it.t != T_OPAR)
				return perr(p, "'('", it);
			it = look(p, true);
			if (it.t == T_CPAR) {
				take(p, true);
				if ((r = vs_add(vs, "", 0)) < 0)
					return r;
			} else if (it.t == T_ID || it.t == T_COMMA) {
				for (bool done = false; !done;) {
					it = take(p, true);
					if (it.t == T_ID) {
						if ((r = vs_add(vs, it.s, it.n)) < 0)
							return r;
						struct item t2 = look(p, true);
						if (t2.t == T_COMMA)
							continue;
						if (t2.t == T_CPAR)
							done = true;
						else
							return perr(p, "',' or ')'", t2);
					} else if (it.t == T_COMMA) {
						if (vs->n == 0 && (r = vs_add(vs, "", 0)) < 0)
							return r;
						struct item t2 = look(p, true);
						if (t2.t == T_CPAR) {
							if ((r = vs_add(vs, "", 0)) < 0)
								return r;
							done = true;
						} else if (t2.t == T_COMMA) {
							take(p, true);
							if ((r = vs_add(vs, "", 0)) < 0)
								return r;
						}
					} else
						return perr(p, "',', or identifier", it);
				}
				it = take(p, true);
				if (it.t != T_CPAR)
					return perr(p, "')'", it);
			} else
				return perr(p, "',', ')' or identifier", it);
		} else {
			it = look(p, true);
			if (it.t == T_END || it.t == T_COMMA) {
				if ((r = vs_add(vs, "", 0)) < 0)
					return r;
			} else {
				it = take(p, true);
				if (it.t != T_ID)
					return perr(p, "identifier", it);
				if ((r = vs_add(vs, it.s, it.n)) < 0)
					return r;
			}
		}
		qsort(vs->v, vs->n, sizeof(vs->v[0]), cmp_str);
	}
	int r = check_req(key, op, (const char *const *)vs->v, vs->n, p->err, p->errlen);
	if (r < 0)
		return r;
	return add_req(s, key, op, (const char **)vs->v, vs->n);
}

int kube_selector_parse(const char *str, struct kube_selector **ret, char *err, size_t errlen)
{
	struct parser p = {.err = err, .errlen = errlen};
	struct kube_selector *s = NULL;
	struct valset *vs = NULL;
	int r = 0;
	if (!str || !ret)
		return -EINVAL;
	size_t len = strlen(str);
	if (len > (1u << 20))
		return -E2BIG;
	/* every token takes at least one byte, plus the end token */
	p.items = malloc((len + 1) * sizeof(*p.items));
	vs = calloc(1, sizeof(*vs));
	if (!p.items || !vs) {
		r = -ENOMEM;
		goto out;
	}
	const char *cur = str;
	for (;;) {
		struct item it = lex(&cur);
		p.items[p.n++] = it;
		if (it.t == T_END)
			break;
	}
	if (!(s = sel_new(SEL_REQS))) {
		r = -ENOMEM;
		goto out;
	}
	for (;;) {
		struct item it = look(&p, true);
		if (it.t == T_END)
			break;
		if (it.t != T_ID && it.t != T_NOT) {
			seterr(err, errlen,
			       "found '%.*s', expected: !, identifier, or 'end of string'",
			       (int)it.n, it.s);
			r = -EINVAL;
			goto out;
		}
		if ((r = parse_requirement(&p, s, vs)) < 0)
			goto out;
		it = take(&p, true);
		if (it.t == T_END)
			break;
		if (it.t != T_COMMA) {
			seterr(err, errlen, "found '%.*s', expected: ',' or 'end of string'",
			       (int)it.n, it.s);
			r = -EINVAL;
			goto out;
		}
		struct item t2 = look(&p, true);
		if (t2.t != T_ID && t2.t != T_NOT) {
			seterr(err, errlen, "found '%.*s', expected: identifier after ','",
			       (int)t2.n, t2.s);
			r = -EINVAL;
			goto out;
		}
	}
	if (s->n == 0)
		s->shape = SEL_EVERYTHING;
	sort_reqs(s);
	*ret = s;
	s = NULL;
out:
	if (vs)
		vs_clear(vs);
	free(vs);
	free(p.items);
	kube_selector_free(s);
	return r;
}

/* ---- matching and formatting ---------------------------------------------------------------- */

static const char *get(const struct kube_kv *kv, uint32_t n, const char *key)
{
	/* last one wins, as a Go map decoded from JSON with a duplicate key */
	for (uint32_t i = n; i-- > 0;)
		if (!strcmp(kv[i].key, key))
			return kv[i].value;
	return NULL;
}

static bool has_value(const struct req *r, const char *v)
{
	for (uint32_t i = 0; i < r->n; i++)
		if (!strcmp(r->vals[i], v))
			return true;
	return false;
}

bool kube_selector_matches(const struct kube_selector *s, const struct kube_kv *labels, uint32_t n)
{
	if (!s || s->shape == SEL_NOTHING)
		return false;
	for (uint32_t i = 0; i < s->n; i++) {
		const struct req *r = &s->reqs[i];
		const char *v = get(labels, n, r->key);
		int64_t a, b;
		switch (r->op) {
		case KUBE_OP_IN:
		case KUBE_OP_EQUALS:
		case KUBE_OP_DOUBLE_EQUALS:
			if (!v || !has_value(r, v))
				return false;
			break;
		case KUBE_OP_NOT_IN:
		case KUBE_OP_NOT_EQUALS:
			if (v && has_value(r, v))
				return false;
			break;
		case KUBE_OP_EXISTS:
			if (!v)
				return false;
			break;
		case KUBE_OP_DOES_NOT_EXIST:
			if (v)
				return false;
			break;
		case KUBE_OP_GT:
		case KUBE_OP_LT:
			if (!v || r->n != 1 || !parse_i64(v, &a) || !parse_i64(r->vals[0], &b))
				return false;
			if (r->op == KUBE_OP_GT ? !(a > b) : !(a < b))
				return false;
			break;
		default:
			return false;
		}
	}
	return true;
}

bool kube_selector_is_everything(const struct kube_selector *s)
{
	return s && s->shape == SEL_EVERYTHING;
}

bool kube_selector_is_nothing(const struct kube_selector *s)
{
	return !s || s->shape == SEL_NOTHING;
}

int kube_selector_format(const struct kube_selector *s, char **ret)
{
	size_t cap = 1;
	if (!s || !ret)
		return -EINVAL;
	for (uint32_t i = 0; i < s->n; i++) {
		cap += strlen(s->reqs[i].key) + 12;
		for (uint32_t k = 0; k < s->reqs[i].n; k++)
			cap += strlen(s->reqs[i].vals[k]) + 1;
	}
	char *buf = malloc(cap), *o = buf;
	const char **tmp = NULL;
	if (!buf)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->n; i++) {
		const struct req *r = &s->reqs[i];
		if (i)
			*o++ = ',';
		if (r->op == KUBE_OP_DOES_NOT_EXIST)
			*o++ = '!';
		size_t kl = strlen(r->key);
		memcpy(o, r->key, kl);
		o += kl;
		const char *sep = "";
		switch (r->op) {
		case KUBE_OP_EQUALS:
			sep = "=";
			break;
		case KUBE_OP_DOUBLE_EQUALS:
			sep = "==";
			break;
		case KUBE_OP_NOT_EQUALS:
			sep = "!=";
			break;
		case KUBE_OP_IN:
			sep = " in (";
			break;
		case KUBE_OP_NOT_IN:
			sep = " notin (";
			break;
		case KUBE_OP_GT:
			sep = ">";
			break;
		case KUBE_OP_LT:
			sep = "<";
			break;
		default:
			continue;
		}
		o = stpcpy(o, sep);
		free(tmp);
		tmp = malloc((r->n ? r->n : 1) * sizeof(*tmp));
		if (!tmp) {
			free(buf);
			return -ENOMEM;
		}
		memcpy(tmp, r->vals, r->n * sizeof(*tmp));
		qsort(tmp, r->n, sizeof(*tmp), cmp_str);
		for (uint32_t k = 0; k < r->n; k++) {
			if (k)
				*o++ = ',';
			o = stpcpy(o, tmp[k]);
		}
		if (r->op == KUBE_OP_IN || r->op == KUBE_OP_NOT_IN)
			*o++ = ')';
	}
	*o = 0;
	free(tmp);
	*ret = buf;
	(void)op_name;
	return 0;
}

/* ---- LabelSelector JSON ------------------------------------------------------------------- */

static enum kube_selector_op op_of_json(const char *s)
{
	static const struct {
		const char *s;
		enum kube_selector_op op;
	} ops[] = {{"In", KUBE_OP_IN},
	           {"NotIn", KUBE_OP_NOT_IN},
	           {"Exists", KUBE_OP_EXISTS},
	           {"DoesNotExist", KUBE_OP_DOES_NOT_EXIST}};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(s, ops[i].s))
			return ops[i].op;
	return KUBE_OP_INVALID;
}

static const char *json_str_or_empty(const cJSON *v)
{
	return cJSON_IsString(v) && v->valuestring ? v->valuestring : "";
}

int kube_selector_from_json(const cJSON *js, struct kube_selector **ret, char *err, size_t errlen)
{
	struct kube_label_selector ls = {0};
	const cJSON *ml, *me, *it;
	uint32_t i = 0;
	int r = -ENOMEM;

	if (!cJSON_IsObject(js))
		return kube_selector_from_label_selector(NULL, ret, err, errlen);
	ml = cJSON_GetObjectItemCaseSensitive(js, "matchLabels");
	me = cJSON_GetObjectItemCaseSensitive(js, "matchExpressions");
	if (!cJSON_IsObject(ml))
		ml = NULL;
	if (!cJSON_IsArray(me))
		me = NULL;
	ls.n_match_labels = (uint32_t)cJSON_GetArraySize(ml);
	ls.n_match_expressions = (uint32_t)cJSON_GetArraySize(me);
	ls.match_labels = calloc(ls.n_match_labels + 1, sizeof(*ls.match_labels));
	ls.match_expressions = calloc(ls.n_match_expressions + 1, sizeof(*ls.match_expressions));
	if (!ls.match_labels || !ls.match_expressions)
		goto out;
	cJSON_ArrayForEach(it, ml)
	{
		ls.match_labels[i].key = it->string;
		ls.match_labels[i].value = json_str_or_empty(it);
		i++;
	}
	i = 0;
	cJSON_ArrayForEach(it, me)
	{
		struct kube_label_requirement *q = &ls.match_expressions[i++];
		const cJSON *vals = cJSON_GetObjectItemCaseSensitive(it, "values"), *v;
		uint32_t k = 0;

		q->key = json_str_or_empty(cJSON_GetObjectItemCaseSensitive(it, "key"));
		q->op_text = json_str_or_empty(cJSON_GetObjectItemCaseSensitive(it, "operator"));
		q->op = op_of_json(q->op_text);
		if (!cJSON_IsArray(vals))
			continue;
		q->n_values = (uint32_t)cJSON_GetArraySize(vals);
		if (!(q->values = calloc(q->n_values + 1, sizeof(*q->values))))
			goto out;
		cJSON_ArrayForEach(v, vals) q->values[k++] = json_str_or_empty(v);
	}
	r = kube_selector_from_label_selector(&ls, ret, err, errlen);
out:
	for (uint32_t k = 0; ls.match_expressions && k < ls.n_match_expressions; k++)
		free(ls.match_expressions[k].values);
	free(ls.match_expressions);
	free(ls.match_labels);
	return r;
}

bool kube_selector_matches_json(const struct kube_selector *s, const cJSON *labels)
{
	struct kube_kv *kv;
	const cJSON *x;
	uint32_t n = 0;
	bool m;

	if (!cJSON_IsObject(labels))
		return kube_selector_matches(s, NULL, 0);
	if (!(kv = calloc((size_t)cJSON_GetArraySize(labels) + 1, sizeof(*kv))))
		return false;
	cJSON_ArrayForEach(x, labels)
	{
		if (cJSON_IsString(x))
			kv[n++] = (struct kube_kv){.key = x->string, .value = x->valuestring};
	}
	m = kube_selector_matches(s, kv, n);
	free(kv);
	return m;
}
