/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/resourcepoolstatus/rps.c: calculatePoolStatus and its views (rps.h has the design
 * note). Every table here grows; nothing is bounded but by memory.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workers/resourcepoolstatus/rps.h"
#include "workers/resourcequota/quantity.h"

/* ---- JSON helpers --------------------------------------------------------------------------- */
static const cJSON *jget(const cJSON *o, const char *k)
{
	return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

static const char *jstr(const cJSON *o, const char *k)
{
	const cJSON *v = jget(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const char *jstr0(const cJSON *o, const char *k)
{
	const char *s = jstr(o, k);
	return s ? s : "";
}

static int64_t jint(const cJSON *o, const char *k)
{
	const cJSON *v = jget(o, k);
	return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : 0;
}

static bool jtrue(const cJSON *o, const char *k)
{
	return cJSON_IsTrue(jget(o, k));
}

/* a Quantity's text, as the zero Quantity when absent or not a quantity */
static struct rq_qty qty(const cJSON *v)
{
	struct rq_qty q = {0};
	if (!cJSON_IsString(v) || rq_qty_parse(v->valuestring, &q) < 0)
		q = (struct rq_qty){0};
	return q;
}

/* q.Sub(y): Add of the negation (Go's Sub and Add share the zero-takes-the-format rule) */
static void qty_sub(struct rq_qty *q, const struct rq_qty *y)
{
	struct rq_qty n = {-y->nano, y->fmt};
	if (rq_qty_add(q, &n) < 0) /* beyond 1.7e29: saturate rather than wrap */
		q->nano = 0;
}

static void qty_add(struct rq_qty *q, const struct rq_qty *y)
{
	(void)rq_qty_add(q, y); /* -ERANGE leaves q as it was */
}

static char *vfmt(const char *f, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, f, ap);
	char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (s)
		vsnprintf(s, (size_t)n + 1, f, ap2);
	va_end(ap2);
	return s;
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	char *s = vfmt(f, ap);
	va_end(ap);
	return s;
}

char *rps_quote(const char *s, char *dst, size_t n)
{
	size_t l = 0;
	char e[8];

	if (!n)
		return dst;
#define PUT(c)                                                                                     \
	do {                                                                                       \
		if (l + 1 < n)                                                                     \
			dst[l++] = (c);                                                            \
	} while (0)
	PUT('"');
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		const char *esc = NULL;
		switch (*p) {
		case '"':
			esc = "\\\"";
			break;
		case '\\':
			esc = "\\\\";
			break;
		case '\a':
			esc = "\\a";
			break;
		case '\b':
			esc = "\\b";
			break;
		case '\f':
			esc = "\\f";
			break;
		case '\n':
			esc = "\\n";
			break;
		case '\r':
			esc = "\\r";
			break;
		case '\t':
			esc = "\\t";
			break;
		case '\v':
			esc = "\\v";
			break;
		default:
			if (*p < 0x20 || *p == 0x7f) {
				snprintf(e, sizeof(e), "\\x%02x", *p);
				esc = e;
			}
		}
		if (esc)
			for (; *esc; esc++)
				PUT(*esc);
		else
			PUT((char)*p);
	}
	PUT('"');
#undef PUT
	dst[l] = 0;
	return dst;
}

/* grows *p (elements of sz bytes) so that index n fits */
static int grow(void *pp, size_t *cap, size_t n, size_t sz)
{
	void **p = pp;
	if (n < *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 8;
	while (c <= n)
		c *= 2;
	void *np = realloc(*p, c * sz);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = c;
	return 0;
}

/* ---- the model ------------------------------------------------------------------------------ */
struct dev { /* deviceRecord */
	const char *name;
	const char *attr; /* the grouping attribute resolved for it ("" none) */
	const char *type; /* its value on the device */
	bool has_type;
	const cJSON *consumes;   /* consumesCounters */
	bool multi;              /* allowMultipleAllocations */
	const cJSON *capacity;   /* capacity: {name: {value}} */
	const cJSON *attributes; /* attributes: {name: {string: ...}} */
};

struct cnt { /* one [set][counter] quantity */
	const char *set, *name;
	struct rq_qty q;
};

struct nq { /* one named quantity */
	const char *name;
	struct rq_qty q;
};

struct pool {
	const char *name, *node;
	bool mixed, seen;
	int64_t gen, expected;
	int32_t total, unavail, n_slices;
	struct dev *devs;
	size_t n_devs, cap_devs;
	const cJSON **sets; /* sharedCounters of every slice at the max generation */
	size_t n_sets, cap_sets;
	const char **inuse; /* device names allocated by a non-adminAccess claim */
	size_t n_inuse, cap_inuse;
	struct nq *consumed; /* consumedCapacity summed over those claims */
	size_t n_consumed, cap_consumed;
	cJSON *out; /* its PoolStatus */
	bool incomplete;
	bool has_error;
};

struct calc {
	struct pool *pools;
	size_t n, cap;
};

static void calc_free(struct calc *c)
{
	for (size_t i = 0; i < c->n; i++) {
		struct pool *p = &c->pools[i];
		free(p->devs);
		free(p->sets);
		free(p->inuse);
		free(p->consumed);
		cJSON_Delete(p->out);
	}
	free(c->pools);
}

static struct pool *pool_find(struct calc *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->pools[i].name, name))
			return &c->pools[i];
	return NULL;
}

static bool in_use(const struct pool *p, const char *name)
{
	for (size_t i = 0; i < p->n_inuse; i++)
		if (!strcmp(p->inuse[i], name))
			return true;
	return false;
}

/* ---- taints --------------------------------------------------------------------------------- */
static bool effect_unavailable(const char *e)
{
	return e && (!strcmp(e, "NoSchedule") || !strcmp(e, "NoExecute"));
}

static bool sel_mismatch(const cJSON *sel, const char *k, const char *v)
{
	const cJSON *f = jget(sel, k);
	return cJSON_IsString(f) && strcmp(f->valuestring, v);
}

/* deviceUnavailable */
static bool device_unavailable(const struct rps_input *in, const char *driver, const char *pool,
                               const cJSON *device)
{
	const cJSON *t;
	const char *name = jstr0(device, "name");

	cJSON_ArrayForEach(t, jget(device, "taints"))
	{
		if (effect_unavailable(jstr(t, "effect")))
			return true;
	}
	for (size_t i = 0; in->rules_enabled && i < in->n_rules; i++) {
		const cJSON *spec = jget(in->rules[i], "spec");
		const cJSON *sel = jget(spec, "deviceSelector");
		if (!effect_unavailable(jstr(jget(spec, "taint"), "effect")) ||
		    !cJSON_IsObject(sel))
			continue;
		if (sel_mismatch(sel, "driver", driver) || sel_mismatch(sel, "pool", pool) ||
		    sel_mismatch(sel, "device", name))
			continue;
		return true;
	}
	return false;
}

/* ---- views (views.go) ----------------------------------------------------------------------- */
/* resolvePartitionType */
static void resolve_type(const char *driver, struct dev *d)
{
	const cJSON *a = jget(d->attributes, d->attr);
	size_t dl = strlen(driver);

	if (!a && !strncmp(d->attr, driver, dl) && d->attr[dl] == '/')
		a = jget(d->attributes, d->attr + dl + 1);
	const char *s = jstr(a, "string");
	d->type = s ? s : "";
	d->has_type = s != NULL;
}

/* resolveDevicePartitions */
static void resolve_partitions(const char *driver, const char *request_attr, struct pool *p)
{
	bool declares = false;

	for (size_t i = 0; i < p->n_devs; i++)
		if (p->devs[i].attr[0])
			declares = true;
	for (size_t i = 0; i < p->n_devs; i++) {
		struct dev *d = &p->devs[i];
		if (!d->attr[0]) {
			if (declares || !request_attr)
				continue;
			d->attr = request_attr;
		}
		resolve_type(driver, d);
	}
}

static struct cnt *cnt_find(struct cnt *a, size_t n, const char *set, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(a[i].set, set) && !strcmp(a[i].name, name))
			return &a[i];
	return NULL;
}

/* deviceFits */
static bool device_fits(const cJSON *cost, struct cnt *avail, size_t n)
{
	const cJSON *cc, *c;

	cJSON_ArrayForEach(cc, cost)
	{
		const char *set = jstr0(cc, "counterSet");
		cJSON_ArrayForEach(c, jget(cc, "counters"))
		{
			struct cnt *have = c->string ? cnt_find(avail, n, set, c->string) : NULL;
			struct rq_qty want = qty(jget(c, "value"));
			if (!have || rq_qty_cmp(&have->q, &want) < 0)
				return false;
		}
	}
	return true;
}

/* deductCounters */
static void deduct(const cJSON *cost, struct cnt *avail, size_t n)
{
	const cJSON *cc, *c;

	cJSON_ArrayForEach(cc, cost)
	{
		const char *set = jstr0(cc, "counterSet");
		cJSON_ArrayForEach(c, jget(cc, "counters"))
		{
			struct cnt *have = c->string ? cnt_find(avail, n, set, c->string) : NULL;
			struct rq_qty v = qty(jget(c, "value"));
			if (have)
				qty_sub(&have->q, &v);
		}
	}
}

static int strpcmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* consumesCountersKey */
static char *cost_key(const cJSON *cost)
{
	char **parts = NULL, buf[RQ_QTY_STR_MAX], *out = NULL;
	size_t n = 0, cap = 0, len = 1;
	const cJSON *cc, *c;

	cJSON_ArrayForEach(cc, cost)
	{
		cJSON_ArrayForEach(c, jget(cc, "counters"))
		{
			struct rq_qty v = qty(jget(c, "value"));
			rq_qty_format(&v, buf, sizeof(buf));
			if (grow(&parts, &cap, n, sizeof(*parts)) < 0 ||
			    !(parts[n] = fmt("%s/%s=%s", jstr0(cc, "counterSet"),
			                     c->string ? c->string : "", buf)))
				goto out;
			len += strlen(parts[n++]) + 1;
		}
	}
	if (n)
		qsort(parts, n, sizeof(*parts), strpcmp);
	if (!(out = malloc(len)))
		goto out;
	out[0] = 0;
	for (size_t i = 0, l = 0; i < n; i++) {
		size_t pl = strlen(parts[i]);
		if (i)
			out[l++] = ',';
		memcpy(out + l, parts[i], pl + 1);
		l += pl;
	}
out:
	for (size_t i = 0; i < n; i++)
		free(parts[i]);
	free(parts);
	return out;
}

struct group {
	const char *attr, *type;
	int32_t total;
	size_t *fresh;
	size_t n_fresh, cap_fresh;
	char *cost;
};

static int group_cmp(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	int r = strcmp(x->attr, y->attr);
	return r ? r : strcmp(x->type, y->type);
}

/* computePartitionSummary: 0 with *ret (an array, maybe empty) or *ret_err; -ENOMEM */
static int partition_summary(const char *driver, struct pool *p, cJSON **ret, char **ret_err)
{
	struct group *g = NULL;
	size_t n = 0, cap = 0, n_base = 0, cap_base = 0;
	struct cnt *base = NULL, *avail = NULL;
	char q1[512], q2[512];
	int r = -ENOMEM;

	*ret = NULL;
	*ret_err = NULL;
	for (size_t i = 0; i < p->n_devs; i++) {
		const struct dev *d = &p->devs[i];
		if (cJSON_GetArraySize(d->consumes) == 0 || !d->attr[0])
			continue;
		if (!d->has_type) {
			if (!(*ret_err =
			              fmt("PartitionTypeMissing: device %s in pool %s/%s does not "
			                  "carry partition type attribute %s",
			                  rps_quote(d->name, q1, sizeof(q1)), driver, p->name,
			                  rps_quote(d->attr, q2, sizeof(q2)))))
				goto out;
			r = 0;
			goto out;
		}
		struct group *k = NULL;
		for (size_t j = 0; j < n && !k; j++)
			if (!strcmp(g[j].attr, d->attr) && !strcmp(g[j].type, d->type))
				k = &g[j];
		if (!k) {
			if (grow(&g, &cap, n, sizeof(*g)) < 0)
				goto out;
			k = &g[n++];
			*k = (struct group){.attr = d->attr, .type = d->type};
		}
		char *key = cost_key(d->consumes);
		if (!key)
			goto out;
		if (k->total == 0) {
			free(k->cost);
			k->cost = key;
		} else {
			bool differ = strcmp(key, k->cost) != 0;
			free(key);
			if (differ) {
				if (!(*ret_err = fmt(
				              "PartitionCostMismatch: devices of partition type %s "
				              "in pool %s/%s consume different counters",
				              rps_quote(d->type, q1, sizeof(q1)), driver, p->name)))
					goto out;
				r = 0;
				goto out;
			}
		}
		k->total++;
		if (!in_use(p, d->name)) {
			if (grow(&k->fresh, &k->cap_fresh, k->n_fresh, sizeof(*k->fresh)) < 0)
				goto out;
			k->fresh[k->n_fresh++] = i;
		}
	}
	/* availableCounters: capacity minus in-use consumption, once per in-use device */
	for (size_t i = 0; i < p->n_sets; i++) {
		const char *set = jstr0(p->sets[i], "name");
		const cJSON *c;
		cJSON_ArrayForEach(c, jget(p->sets[i], "counters"))
		{
			if (!c->string)
				continue;
			struct cnt *e = cnt_find(base, n_base, set, c->string);
			if (!e) {
				if (grow(&base, &cap_base, n_base, sizeof(*base)) < 0)
					goto out;
				e = &base[n_base++];
				e->set = set;
				e->name = c->string;
			}
			e->q = qty(jget(c, "value"));
		}
	}
	for (size_t i = 0; i < p->n_devs; i++)
		if (in_use(p, p->devs[i].name))
			deduct(p->devs[i].consumes, base, n_base);
	if (n_base && !(avail = malloc(n_base * sizeof(*avail))))
		goto out;
	qsort(g, n, sizeof(*g), group_cmp);
	if (n > RPS_MAX_STATUS_LIST_ITEMS) {
		if (!(*ret_err = fmt("PartitionSummaryOverCap: pool %s/%s has %zu partition types, "
		                     "exceeding the maximum of %d",
		                     driver, p->name, n, RPS_MAX_STATUS_LIST_ITEMS)))
			goto out;
		r = 0;
		goto out;
	}
	if (!(*ret = cJSON_CreateArray()))
		goto out;
	for (size_t j = 0; j < n; j++) {
		int32_t allocatable = 0;
		if (n_base)
			memcpy(avail, base, n_base * sizeof(*avail));
		for (size_t f = 0; f < g[j].n_fresh; f++) {
			const cJSON *cost = p->devs[g[j].fresh[f]].consumes;
			if (device_fits(cost, avail, n_base)) {
				allocatable++;
				deduct(cost, avail, n_base);
			}
		}
		cJSON *e = cJSON_CreateObject();
		if (!e)
			goto out;
		if (!cJSON_AddItemToArray(*ret, e)) {
			cJSON_Delete(e);
			goto out;
		}
		if ((g[j].attr[0] && !cJSON_AddStringToObject(e, "attribute", g[j].attr)) ||
		    (g[j].type[0] && !cJSON_AddStringToObject(e, "type", g[j].type)) ||
		    !cJSON_AddNumberToObject(e, "total", g[j].total) ||
		    !cJSON_AddNumberToObject(e, "allocatable", allocatable))
			goto out;
	}
	r = 0;
out:
	if (r < 0 || *ret_err) {
		cJSON_Delete(*ret);
		*ret = NULL;
	}
	if (r < 0) {
		free(*ret_err);
		*ret_err = NULL;
	}
	for (size_t j = 0; j < n; j++) {
		free(g[j].fresh);
		free(g[j].cost);
	}
	free(g);
	free(base);
	free(avail);
	return r;
}

static int nq_cmp(const void *a, const void *b)
{
	return strcmp(((const struct nq *)a)->name, ((const struct nq *)b)->name);
}

static int add_qty(cJSON *o, const char *k, const struct rq_qty *q)
{
	char buf[RQ_QTY_STR_MAX];
	rq_qty_format(q, buf, sizeof(buf));
	return cJSON_AddStringToObject(o, k, buf) ? 0 : -ENOMEM;
}

/* computeShareableSummary: 0 with *ret (NULL: no shareable device) or *ret_err; -ENOMEM */
static int shareable_summary(const char *driver, const struct pool *p, cJSON **ret, char **ret_err)
{
	struct nq *tot = NULL;
	size_t n = 0, cap = 0;
	int32_t full = 0, partial = 0;
	bool any = false;
	cJSON *o = NULL, *caps = NULL;
	int r = -ENOMEM;

	*ret = NULL;
	*ret_err = NULL;
	for (size_t i = 0; i < p->n_devs; i++) {
		const struct dev *d = &p->devs[i];
		const cJSON *c;
		if (!d->multi)
			continue;
		any = true;
		if (in_use(p, d->name))
			partial++;
		else
			full++;
		cJSON_ArrayForEach(c, d->capacity)
		{
			struct nq *e = NULL;
			struct rq_qty v = qty(jget(c, "value"));
			if (!c->string)
				continue;
			for (size_t j = 0; j < n && !e; j++)
				if (!strcmp(tot[j].name, c->string))
					e = &tot[j];
			if (!e) {
				if (grow(&tot, &cap, n, sizeof(*tot)) < 0)
					goto out;
				e = &tot[n++];
				*e = (struct nq){.name = c->string};
			}
			qty_add(&e->q, &v);
		}
	}
	if (!any) {
		r = 0;
		goto out;
	}
	if (n)
		qsort(tot, n, sizeof(*tot), nq_cmp);
	if (n > RPS_MAX_STATUS_LIST_ITEMS) {
		if ((*ret_err =
		             fmt("ShareableSummaryOverCap: pool %s/%s has %zu shareable capacity "
		                 "keys, exceeding the maximum of %d",
		                 driver, p->name, n, RPS_MAX_STATUS_LIST_ITEMS)))
			r = 0;
		goto out;
	}
	if (!(o = cJSON_CreateObject()) ||
	    !cJSON_AddNumberToObject(o, "fullyAvailableDevices", full) ||
	    !cJSON_AddNumberToObject(o, "partiallyAvailableDevices", partial))
		goto out;
	if (n && !(caps = cJSON_AddArrayToObject(o, "capacity")))
		goto out;
	for (size_t j = 0; j < n; j++) {
		struct rq_qty cons = {0}, avail = tot[j].q;
		for (size_t k = 0; k < p->n_consumed; k++)
			if (!strcmp(p->consumed[k].name, tot[j].name))
				cons = p->consumed[k].q;
		/* nonNegativeDiff */
		qty_sub(&avail, &cons);
		if (avail.nano < 0)
			avail = (struct rq_qty){0, tot[j].q.fmt};
		cJSON *e = cJSON_CreateObject();
		if (!e)
			goto out;
		cJSON_AddItemToArray(caps, e);
		if (!cJSON_AddStringToObject(e, "name", tot[j].name) ||
		    add_qty(e, "total", &tot[j].q) < 0 || add_qty(e, "consumed", &cons) < 0 ||
		    add_qty(e, "available", &avail) < 0)
			goto out;
	}
	*ret = o;
	o = NULL;
	r = 0;
out:
	cJSON_Delete(o);
	free(tot);
	return r;
}

/* computePoolViews, into the pool's PoolStatus; *ret_err: the validationError, or NULL */
static int pool_views(const char *driver, struct pool *p, char **ret_err)
{
	bool grouped = false;
	cJSON *part = NULL, *sh = NULL;
	char *err = NULL, *sh_err = NULL;
	int r = 0;

	*ret_err = NULL;
	for (size_t i = 0; i < p->n_devs; i++)
		if (p->devs[i].attr[0])
			grouped = true;
	if (grouped && p->n_sets == 0) {
		if (!(err = fmt("PartitionTypeMissing: pool %s/%s declares partitionTypeAttribute "
		                "but "
		                "publishes no sharedCounters",
		                driver, p->name)))
			return -ENOMEM;
	} else if (grouped && (r = partition_summary(driver, p, &part, &err)) < 0) {
		return r;
	}
	if ((r = shareable_summary(driver, p, &sh, &sh_err)) < 0)
		goto out;
	if (!err) {
		err = sh_err;
		sh_err = NULL;
	}
	if (err) {
		cJSON_Delete(part);
		part = NULL;
	}
	if (part && cJSON_GetArraySize(part) > 0) {
		cJSON_AddItemToObject(p->out, "partitionSummary", part);
		part = NULL;
	}
	if (sh) {
		cJSON_AddItemToObject(p->out, "shareableSummary", sh);
		sh = NULL;
	}
	*ret_err = err;
	err = NULL;
out:
	cJSON_Delete(part);
	cJSON_Delete(sh);
	free(err);
	free(sh_err);
	return r;
}

/* ---- calculatePoolStatus -------------------------------------------------------------------- */
static cJSON *condition(const char *type, const char *reason, const char *msg, const char *now)
{
	cJSON *c = cJSON_CreateObject();
	if (!c || !cJSON_AddStringToObject(c, "type", type) ||
	    !cJSON_AddStringToObject(c, "status", "True") ||
	    !cJSON_AddStringToObject(c, "lastTransitionTime", now ? now : "") ||
	    !cJSON_AddStringToObject(c, "reason", reason) ||
	    !cJSON_AddStringToObject(c, "message", msg)) {
		cJSON_Delete(c);
		return NULL;
	}
	return c;
}

cJSON *rps_error_status(const char *message, const char *now)
{
	cJSON *s = cJSON_CreateObject(), *conds, *c;
	if (!s || !cJSON_AddNumberToObject(s, "poolCount", 0) ||
	    !(conds = cJSON_AddArrayToObject(s, "conditions")) ||
	    !(c = condition("Failed", "CalculationFailed", message, now))) {
		cJSON_Delete(s);
		return NULL;
	}
	cJSON_AddItemToArray(conds, c);
	return s;
}

static bool slice_selected(const cJSON *spec, const char *driver, const char *filter)
{
	return !strcmp(jstr0(spec, "driver"), driver) &&
	       (!filter[0] || !strcmp(jstr0(jget(spec, "pool"), "name"), filter));
}

static int pool_cmp(const void *a, const void *b)
{
	return strcmp(((const struct pool *)a)->name, ((const struct pool *)b)->name);
}

static int set_int(cJSON *o, const char *k, int64_t v)
{
	return cJSON_AddNumberToObject(o, k, (double)v) ? 0 : -ENOMEM;
}

/* Step 3 for one pool: its PoolStatus */
static int pool_status(const struct rps_input *in, const char *driver, const char *request_attr,
                       struct pool *p)
{
	char *err = NULL;
	int r = -ENOMEM;

	if (!(p->out = cJSON_CreateObject()) ||
	    !cJSON_AddStringToObject(p->out, "driver", driver) ||
	    !cJSON_AddStringToObject(p->out, "poolName", p->name) ||
	    set_int(p->out, "generation", p->gen) < 0)
		return -ENOMEM;
	if (p->node[0] && !p->mixed && !cJSON_AddStringToObject(p->out, "nodeName", p->node))
		return -ENOMEM;
	if ((int64_t)p->n_slices < p->expected) {
		if (!(err = fmt(
		              "%s pool %s/%s is incomplete: observed %d/%lld slices at generation "
		              "%lld",
		              RPS_PREFIX_POOL_INCOMPLETE, driver, p->name, p->n_slices,
		              (long long)p->expected, (long long)p->gen)))
			return -ENOMEM;
		p->incomplete = true;
	} else {
		int32_t alloc = (int32_t)p->n_inuse;
		int32_t avail = p->total - alloc - p->unavail;
		if (avail < 0)
			avail = 0;
		if (set_int(p->out, "resourceSliceCount", p->n_slices) < 0 ||
		    set_int(p->out, "totalDevices", p->total) < 0 ||
		    set_int(p->out, "allocatedDevices", alloc) < 0 ||
		    set_int(p->out, "availableDevices", avail) < 0 ||
		    set_int(p->out, "unavailableDevices", p->unavail) < 0)
			return -ENOMEM;
		(void)in;
		resolve_partitions(driver, request_attr, p);
		if ((r = pool_views(driver, p, &err)) < 0)
			return r;
	}
	if (err) {
		if (strlen(err) > RPS_MAX_MESSAGE_BYTES)
			err[RPS_MAX_MESSAGE_BYTES] = 0;
		p->has_error = true;
		r = cJSON_AddStringToObject(p->out, "validationError", err) ? 0 : -ENOMEM;
		free(err);
		return r;
	}
	return 0;
}

int rps_calculate(const struct rps_input *in, cJSON **ret_status, bool *ret_incomplete)
{
	const cJSON *spec = jget(in->request, "spec");
	const char *driver = jstr0(spec, "driver");
	const char *filter = jstr0(spec, "poolName");
	const char *request_attr = jstr(spec, "defaultPartitionTypeAttribute");
	const cJSON *lim = jget(spec, "limit");
	int64_t limit = cJSON_IsNumber(lim) ? (int64_t)lim->valuedouble : RPS_LIMIT_DEFAULT;
	struct calc c = {0};
	cJSON *st = NULL, *pools = NULL, *conds, *cond;
	size_t shown, n_bad = 0;
	bool incomplete = false;
	char *msg = NULL;
	int r = -ENOMEM;

	/* pass 1: the highest generation of each pool */
	for (size_t i = 0; i < in->n_slices; i++) {
		const cJSON *sp = jget(in->slices[i], "spec");
		if (!slice_selected(sp, driver, filter))
			continue;
		const char *name = jstr0(jget(sp, "pool"), "name");
		int64_t gen = jint(jget(sp, "pool"), "generation");
		struct pool *p = pool_find(&c, name);
		if (!p) {
			if (grow(&c.pools, &c.cap, c.n, sizeof(*c.pools)) < 0)
				goto out;
			p = &c.pools[c.n++];
			*p = (struct pool){.name = name, .gen = gen};
		} else if (gen > p->gen) {
			p->gen = gen;
		}
	}
	/* pass 2: the slices at that generation */
	for (size_t i = 0; i < in->n_slices; i++) {
		const cJSON *sp = jget(in->slices[i], "spec"), *d;
		if (!slice_selected(sp, driver, filter))
			continue;
		struct pool *p = pool_find(&c, jstr0(jget(sp, "pool"), "name"));
		if (!p || jint(jget(sp, "pool"), "generation") < p->gen)
			continue;
		const char *node = jstr0(sp, "nodeName");
		int32_t n_dev = 0, n_unavail = 0;
		cJSON_ArrayForEach(d, jget(sp, "devices"))
		{
			n_dev++;
			if (device_unavailable(in, driver, p->name, d))
				n_unavail++;
		}
		if (!p->seen) {
			p->seen = true;
			p->node = node;
			p->expected = jint(jget(sp, "pool"), "resourceSliceCount");
			p->total = n_dev;
			p->unavail = n_unavail;
			p->n_slices = 1;
		} else {
			p->total += n_dev;
			p->unavail += n_unavail;
			p->n_slices++;
			if (strcmp(node, p->node))
				p->mixed = true;
		}
		const char *slice_attr = jstr0(sp, "partitionTypeAttribute");
		cJSON_ArrayForEach(d, jget(sp, "devices"))
		{
			if (grow(&p->devs, &p->cap_devs, p->n_devs, sizeof(*p->devs)) < 0)
				goto out;
			p->devs[p->n_devs++] = (struct dev){
			        .name = jstr0(d, "name"),
			        .attr = slice_attr,
			        .type = "",
			        .consumes = jget(d, "consumesCounters"),
			        .multi = jtrue(d, "allowMultipleAllocations"),
			        .capacity = jget(d, "capacity"),
			        .attributes = jget(d, "attributes"),
			};
		}
		const cJSON *cs;
		cJSON_ArrayForEach(cs, jget(sp, "sharedCounters"))
		{
			if (grow(&p->sets, &p->cap_sets, p->n_sets, sizeof(*p->sets)) < 0)
				goto out;
			p->sets[p->n_sets++] = cs;
		}
	}
	/* step 2: allocated devices and consumed capacity, per pool of this driver */
	for (size_t i = 0; i < in->n_claims; i++) {
		const cJSON *alloc = jget(jget(in->claims[i], "status"), "allocation"), *res;
		if (!cJSON_IsObject(alloc))
			continue;
		cJSON_ArrayForEach(res, jget(jget(alloc, "devices"), "results"))
		{
			if (jtrue(res, "adminAccess") || strcmp(jstr0(res, "driver"), driver))
				continue;
			struct pool *p = pool_find(&c, jstr0(res, "pool"));
			const char *dev = jstr0(res, "device");
			const cJSON *q;
			if (!p)
				continue;
			if (!in_use(p, dev)) {
				if (grow(&p->inuse, &p->cap_inuse, p->n_inuse, sizeof(*p->inuse)) <
				    0)
					goto out;
				p->inuse[p->n_inuse++] = dev;
			}
			cJSON_ArrayForEach(q, jget(res, "consumedCapacity"))
			{
				struct nq *e = NULL;
				struct rq_qty v = qty(q);
				if (!q->string)
					continue;
				for (size_t j = 0; j < p->n_consumed && !e; j++)
					if (!strcmp(p->consumed[j].name, q->string))
						e = &p->consumed[j];
				if (!e) {
					if (grow(&p->consumed, &p->cap_consumed, p->n_consumed,
					         sizeof(*p->consumed)) < 0)
						goto out;
					e = &p->consumed[p->n_consumed++];
					*e = (struct nq){.name = q->string};
				}
				qty_add(&e->q, &v);
			}
		}
	}
	/* step 3 */
	for (size_t i = 0; i < c.n; i++)
		if ((r = pool_status(in, driver, request_attr, &c.pools[i])) < 0)
			goto out;
	r = -ENOMEM;
	if (c.n)
		qsort(c.pools, c.n, sizeof(*c.pools), pool_cmp);
	shown = c.n;
	if (limit < 0)
		limit = 0;
	if ((int64_t)shown > limit)
		shown = (size_t)limit;
	if (!(st = cJSON_CreateObject()) || set_int(st, "poolCount", (int64_t)c.n) < 0)
		goto out;
	if (shown && !(pools = cJSON_AddArrayToObject(st, "pools")))
		goto out;
	for (size_t i = 0; i < shown; i++) {
		struct pool *p = &c.pools[i];
		cJSON_AddItemToArray(pools, p->out);
		p->out = NULL;
		n_bad += p->has_error;
		incomplete |= p->incomplete;
	}
	msg = n_bad ? fmt("Calculated status for %zu pools (%zu incomplete)", shown, n_bad)
	            : fmt("Calculated status for %zu pools", shown);
	if (!msg || !(conds = cJSON_AddArrayToObject(st, "conditions")) ||
	    !(cond = condition("Complete", "CalculationComplete", msg, in->now)))
		goto out;
	cJSON_AddItemToArray(conds, cond);
	*ret_status = st;
	*ret_incomplete = incomplete;
	st = NULL;
	r = 0;
out:
	free(msg);
	cJSON_Delete(st);
	calc_free(&c);
	return r;
}

/* ---- TTL ------------------------------------------------------------------------------------ */
bool rps_has_status(const cJSON *request)
{
	const cJSON *s = jget(request, "status");
	return s && !cJSON_IsNull(s);
}

/* isOlderThan */
static bool older_than(const char *t, kube_time_t now, int64_t d)
{
	kube_time_t v;
	if (!t || !*t || kube_time_parse(t, strlen(t), &v) < 0)
		return false; /* the zero time */
	return now - v > d;
}

bool rps_should_delete(const cJSON *request, kube_time_t now)
{
	const char *created = jstr(jget(request, "metadata"), "creationTimestamp");
	const cJSON *c;

	if (!rps_has_status(request))
		return older_than(created, now, RPS_PENDING_TTL_NS);
	cJSON_ArrayForEach(c, jget(jget(request, "status"), "conditions"))
	{
		const char *t = jstr0(c, "type");
		if (!strcmp(t, "Complete") || !strcmp(t, "Failed"))
			return older_than(jstr(c, "lastTransitionTime"), now, RPS_COMPLETED_TTL_NS);
	}
	return older_than(created, now, RPS_COMPLETED_TTL_NS);
}
