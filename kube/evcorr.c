/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kube/evcorr.c: the EventCorrelator (see evcorr.h). Three LRU caches of at most
 * KUBE_EVC_CACHE_SIZE keys; a lookup scans the entries by 64-bit hash (a few microseconds at the
 * maximum size, against an API call per event), eviction drops the least recently used.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "kube/evcorr.h"

struct agg_rec {
	char *msgs[KUBE_EVC_AGG_MAX_EVENTS]; /* the set of messages, insertion order */
	int n;
	kube_time_t last;
};

struct log_rec {
	int32_t count;
	kube_time_t first;
	char *name;
};

struct spam_rec {
	double tokens;
	kube_time_t last;
	bool init;
};

enum cache_kind { AGG, LOG, SPAM };

struct entry {
	char *key;
	uint64_t hash, used;
	union {
		struct agg_rec agg;
		struct log_rec log;
		struct spam_rec spam;
	} v;
};

struct cache {
	enum cache_kind kind;
	struct entry *e;
	size_t n;
	uint64_t clock;
};

struct kube_evc {
	struct cache agg, log, spam;
};

static uint64_t fnv(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static void value_free(enum cache_kind k, struct entry *e)
{
	if (k == AGG)
		for (int i = 0; i < e->v.agg.n; i++)
			free(e->v.agg.msgs[i]);
	else if (k == LOG)
		free(e->v.log.name);
	memset(&e->v, 0, sizeof(e->v));
}

static struct entry *cache_get(struct cache *c, const char *key)
{
	uint64_t h = fnv(key);
	for (size_t i = 0; i < c->n; i++)
		if (c->e[i].hash == h && strcmp(c->e[i].key, key) == 0) {
			c->e[i].used = ++c->clock;
			return &c->e[i];
		}
	return NULL;
}

/* The entry of key, created empty (evicting the least recently used when full). */
static struct entry *cache_put(struct cache *c, const char *key)
{
	struct entry *e = cache_get(c, key);
	if (e)
		return e;
	char *k = strdup(key);
	if (!k)
		return NULL;
	if (c->n == KUBE_EVC_CACHE_SIZE) {
		size_t lru = 0;
		for (size_t i = 1; i < c->n; i++)
			if (c->e[i].used < c->e[lru].used)
				lru = i;
		e = &c->e[lru];
		value_free(c->kind, e);
		free(e->key);
	} else {
		e = &c->e[c->n++];
	}
	memset(e, 0, sizeof(*e));
	e->key = k;
	e->hash = fnv(key);
	e->used = ++c->clock;
	return e;
}

static int cache_init(struct cache *c, enum cache_kind k)
{
	c->kind = k;
	c->e = calloc(KUBE_EVC_CACHE_SIZE, sizeof(*c->e));
	return c->e ? 0 : -ENOMEM;
}

static void cache_fini(struct cache *c)
{
	for (size_t i = 0; i < c->n; i++) {
		value_free(c->kind, &c->e[i]);
		free(c->e[i].key);
	}
	free(c->e);
}

int kube_evc_new(struct kube_evc **ret)
{
	struct kube_evc *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	if (cache_init(&c->agg, AGG) < 0 || cache_init(&c->log, LOG) < 0 ||
	    cache_init(&c->spam, SPAM) < 0) {
		kube_evc_free(c);
		return -ENOMEM;
	}
	*ret = c;
	return 0;
}

void kube_evc_free(struct kube_evc *c)
{
	if (!c)
		return;
	cache_fini(&c->agg);
	cache_fini(&c->log);
	cache_fini(&c->spam);
	free(c);
}

void kube_evc_result_free(struct kube_evc_result *r)
{
	if (!r)
		return;
	free(r->event_name);
	free(r->message);
	memset(r, 0, sizeof(*r));
}

static const char *s(const char *x)
{
	return x ? x : "";
}

/* Go's strings.Join(parts, ""): the keys are plain concatenations, as upstream's. */
static char *join(const char *const *parts, size_t n)
{
	size_t len = 1;
	for (size_t i = 0; i < n; i++)
		len += strlen(s(parts[i]));
	char *k = malloc(len), *p = k;
	if (!k)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(s(parts[i]));
		memcpy(p, s(parts[i]), l);
		p += l;
	}
	*p = 0;
	return k;
}

/* getEventKey (fieldPath empty) with the given message */
static char *event_key(const struct kube_evc_event *ev, const char *message)
{
	const char *p[] = {ev->component, ev->host,        ev->kind, ev->ns,     ev->name, "",
	                   ev->uid,       ev->api_version, ev->type, ev->reason, message};
	return join(p, sizeof(p) / sizeof(p[0]));
}

/* EventAggregatorByReasonFunc's aggregate key (reporting controller/instance = source) */
static char *aggregate_key(const struct kube_evc_event *ev)
{
	const char *p[] = {ev->component,   ev->host, ev->kind,   ev->ns,        ev->name, ev->uid,
	                   ev->api_version, ev->type, ev->reason, ev->component, ev->host};
	return join(p, sizeof(p) / sizeof(p[0]));
}

/* getSpamKey */
static char *spam_key(const struct kube_evc_event *ev)
{
	const char *p[] = {ev->component, ev->host, ev->kind,       ev->ns,
	                   ev->name,      ev->uid,  ev->api_version};
	return join(p, sizeof(p) / sizeof(p[0]));
}

static char *event_name(const char *name, kube_time_t now)
{
	char *n = NULL;
	if (asprintf(&n, "%s.%llx", s(name), (unsigned long long)now) < 0)
		return NULL;
	return n;
}

int kube_evc_correlate(struct kube_evc *c, const struct kube_evc_event *ev, kube_time_t now,
                       struct kube_evc_result *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (!c || !ev)
		return -EINVAL;
	char *akey = aggregate_key(ev), *ckey = NULL, *skey = NULL;
	int r = -ENOMEM;
	if (!akey)
		goto out;
	/* EventAggregate */
	struct entry *ae = cache_put(&c->agg, akey);
	if (!ae)
		goto out;
	struct agg_rec *ar = &ae->v.agg;
	if (now - ar->last > (int64_t)KUBE_EVC_AGG_INTERVAL_S * 1000000000) {
		for (int i = 0; i < ar->n; i++)
			free(ar->msgs[i]);
		ar->n = 0;
	}
	bool have = false;
	for (int i = 0; i < ar->n; i++)
		if (strcmp(ar->msgs[i], s(ev->message)) == 0)
			have = true;
	if (!have) {
		/* the set never holds more than maxEvents - 1 between calls */
		if (!(ar->msgs[ar->n] = strdup(s(ev->message))))
			goto out;
		ar->n++;
	}
	ar->last = now;
	/* makeEvent's event keeps its own timestamp and name; the combined one is made now */
	kube_time_t made = ev->t ? ev->t : now;
	ret->first = ret->last = made;
	ret->count = 1;
	if (ar->n < KUBE_EVC_AGG_MAX_EVENTS) {
		ckey = event_key(ev, s(ev->message));
		ret->message = strdup(s(ev->message));
	} else {
		made = now;
		ret->first = ret->last = now;
		/* PopAny: drop the oldest message */
		free(ar->msgs[0]);
		memmove(&ar->msgs[0], &ar->msgs[1], (size_t)(ar->n - 1) * sizeof(ar->msgs[0]));
		ar->n--;
		ret->aggregated = true;
		ckey = strdup(akey);
		if (asprintf(&ret->message, "%s%s", KUBE_EVC_AGG_PREFIX, s(ev->message)) < 0)
			ret->message = NULL;
	}
	ret->event_name = event_name(ev->name, made);
	if (!ckey || !ret->message || !ret->event_name)
		goto out;
	/* eventObserve */
	struct entry *le = cache_put(&c->log, ckey);
	if (!le)
		goto out;
	struct log_rec *lr = &le->v.log;
	if (lr->count > 0 && lr->name) {
		free(ret->event_name);
		if (!(ret->event_name = strdup(lr->name)))
			goto out;
		ret->first = lr->first;
		ret->count = lr->count + 1;
	}
	char *nm = strdup(ret->event_name);
	if (!nm)
		goto out;
	free(lr->name);
	lr->name = nm;
	lr->count = ret->count;
	lr->first = ret->first;
	ret->action = ret->count > 1 ? KUBE_EVC_PATCH : KUBE_EVC_CREATE;
	/* the spam filter (on the observed event: same source and object) */
	if (!(skey = spam_key(ev)))
		goto out;
	struct entry *se = cache_put(&c->spam, skey);
	if (!se)
		goto out;
	struct spam_rec *sr = &se->v.spam;
	if (!sr->init) {
		sr->init = true;
		sr->tokens = KUBE_EVC_SPAM_BURST;
		sr->last = now;
	} else if (now > sr->last) {
		sr->tokens += (double)(now - sr->last) / 1e9 * KUBE_EVC_SPAM_QPS;
		if (sr->tokens > KUBE_EVC_SPAM_BURST)
			sr->tokens = KUBE_EVC_SPAM_BURST;
		sr->last = now;
	}
	if (sr->tokens >= 1)
		sr->tokens -= 1;
	else
		ret->action = KUBE_EVC_SKIP;
	r = 0;
out:
	if (r < 0)
		kube_evc_result_free(ret);
	free(akey);
	free(ckey);
	free(skey);
	return r;
}

int kube_evc_update_state(struct kube_evc *c, const struct kube_evc_event *ev,
                          const struct kube_evc_result *r)
{
	char *key = event_key(ev, r->message);
	if (!key)
		return -ENOMEM;
	struct entry *e = cache_put(&c->log, key);
	free(key);
	if (!e)
		return -ENOMEM;
	char *nm = strdup(r->event_name);
	if (!nm)
		return -ENOMEM;
	free(e->v.log.name);
	e->v.log.name = nm;
	e->v.log.count = r->count;
	e->v.log.first = r->first;
	return 0;
}

int kube_evc_patch_body(const struct kube_evc_result *r, char **ret)
{
	char ts[KUBE_TIME_BUF];
	kube_time_format(r->last, ts);
	cJSON *o = cJSON_CreateObject();
	if (!o || !cJSON_AddNumberToObject(o, "count", r->count) ||
	    !cJSON_AddStringToObject(o, "lastTimestamp", ts) ||
	    !cJSON_AddStringToObject(o, "message", s(r->message))) {
		cJSON_Delete(o);
		return -ENOMEM;
	}
	*ret = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return *ret ? 0 : -ENOMEM;
}
