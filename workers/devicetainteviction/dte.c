/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/devicetainteviction/dte.c: the pure decisions (dte.h). Upstream keeps its own
 * in-memory index of pools and allocated claims, updated by its event handlers; kcmd decides
 * from the shared cache at sync time instead, so these functions take the cached objects and
 * compute what upstream's index would hold: a pool's devices are those of its slices with the
 * pool's highest spec.pool.generation (pool.getDevice), a rule taints the devices its
 * deviceSelector names (ruleMatchesDevice; CEL selectors are not evaluated upstream either).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workers/devicetainteviction/dte.h"

static const char *str_of(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const char *nz(const char *s)
{
	return s ? s : "";
}

static bool str_eq(const char *a, const char *b)
{
	return !strcmp(nz(a), nz(b));
}

static const cJSON *path(const cJSON *o, const char *a, const char *b)
{
	o = cJSON_GetObjectItemCaseSensitive(o, a);
	return b ? cJSON_GetObjectItemCaseSensitive(o, b) : o;
}

static int64_t int_of(const cJSON *v, int64_t def)
{
	return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : def;
}

void dte_eviction_free(struct dte_eviction *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->n_reasons; i++) {
		struct dte_reason *r = &e->reasons[i];
		free(r->name);
		free(r->uid);
		free(r->driver);
		free(r->pool);
		free(r->device);
	}
	free(e->reasons);
	*e = (struct dte_eviction){0};
}

bool dte_tolerates(const cJSON *tol, const cJSON *taint)
{
	const char *te = str_of(tol, "effect"), *tk = str_of(tol, "key"),
	           *op = str_of(tol, "operator");

	if (te && *te && !str_eq(te, str_of(taint, "effect")))
		return false;
	if (tk && *tk && !str_eq(tk, str_of(taint, "key")))
		return false;
	if (!op || !*op || !strcmp(op, "Equal"))
		return str_eq(str_of(tol, "value"), str_of(taint, "value"));
	return !strcmp(op, "Exists");
}

bool dte_rule_matches(const cJSON *rule, const char *driver, const char *pool, const char *device)
{
	const cJSON *sel = path(rule, "spec", "deviceSelector");
	const char *d, *p, *n;

	if (!cJSON_IsObject(sel))
		return false;
	d = str_of(sel, "driver");
	p = str_of(sel, "pool");
	n = str_of(sel, "device");
	return (!d || str_eq(d, driver)) && (!p || str_eq(p, pool)) && (!n || str_eq(n, device));
}

bool dte_claim_allocated(const cJSON *claim)
{
	return cJSON_IsObject(path(claim, "status", "allocation"));
}

bool dte_claim_reserved_for_pod(const cJSON *claim, const char *pod_uid)
{
	const cJSON *c;

	if (!pod_uid || !*pod_uid)
		return false;
	cJSON_ArrayForEach(c, path(claim, "status", "reservedFor"))
	{
		if (str_eq(str_of(c, "apiGroup"), "") && str_eq(str_of(c, "resource"), "pods") &&
		    str_eq(str_of(c, "uid"), pod_uid))
			return true;
	}
	return false;
}

/* pool.getDevice: the device of that name in the pool's newest generation, and its slice */
static const cJSON *find_device(const struct dte_world *w, const char *driver, const char *pool,
                                const char *name, const cJSON **ret_slice)
{
	int64_t max = INT64_MIN;
	bool any = false;

	for (size_t i = 0; i < w->n_slices; i++) {
		const cJSON *spec = path(w->slices[i], "spec", NULL);
		if (!str_eq(str_of(spec, "driver"), driver) ||
		    !str_eq(str_of(path(spec, "pool", NULL), "name"), pool))
			continue;
		int64_t g = int_of(path(spec, "pool", "generation"), 0);
		if (g > max)
			max = g;
		any = true;
	}
	if (!any)
		return NULL;
	for (size_t i = 0; i < w->n_slices; i++) {
		const cJSON *spec = path(w->slices[i], "spec", NULL), *d;
		if (!str_eq(str_of(spec, "driver"), driver) ||
		    !str_eq(str_of(path(spec, "pool", NULL), "name"), pool) ||
		    int_of(path(spec, "pool", "generation"), 0) != max)
			continue;
		cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(spec, "devices"))
		{
			if (str_eq(str_of(d, "name"), name)) {
				*ret_slice = w->slices[i];
				return d;
			}
		}
	}
	return NULL;
}

static int reason_cmp(const struct dte_reason *a, const struct dte_reason *b)
{
	int c;

	if (a->rule != b->rule)
		return a->rule ? -1 : 1;
	if (a->rule)
		return strcmp(nz(a->name), nz(b->name));
	if ((c = strcmp(nz(a->driver), nz(b->driver))) || (c = strcmp(nz(a->pool), nz(b->pool))) ||
	    (c = strcmp(nz(a->device), nz(b->device))))
		return c;
	return a->index - b->index;
}

static bool reason_same(const struct dte_reason *a, const struct dte_reason *b)
{
	return !reason_cmp(a, b) && str_eq(a->uid, b->uid) && str_eq(a->name, b->name);
}

/* inserts r (copied) in order unless present; 0 or -ENOMEM */
static int reason_add(struct dte_eviction *e, const struct dte_reason *r)
{
	size_t at = 0;
	struct dte_reason *n;

	for (; at < e->n_reasons; at++) {
		if (reason_same(&e->reasons[at], r))
			return 0;
		if (reason_cmp(&e->reasons[at], r) > 0)
			break;
	}
	if (!(n = realloc(e->reasons, (e->n_reasons + 1) * sizeof(*n))))
		return -ENOMEM;
	e->reasons = n;
	memmove(&n[at + 1], &n[at], (e->n_reasons - at) * sizeof(*n));
	n[at] = (struct dte_reason){.rule = r->rule, .index = r->index};
	e->n_reasons++;
	if ((r->name && !(n[at].name = strdup(r->name))) ||
	    (r->uid && !(n[at].uid = strdup(r->uid))) ||
	    (r->driver && !(n[at].driver = strdup(r->driver))) ||
	    (r->pool && !(n[at].pool = strdup(r->pool))) ||
	    (r->device && !(n[at].device = strdup(r->device))))
		return -ENOMEM;
	return 0;
}

static kube_time_t time_of(const cJSON *taint)
{
	const char *s = str_of(taint, "timeAdded");
	kube_time_t t = 0;

	if (s && kube_time_parse(s, strlen(s), &t) < 0)
		t = 0;
	return t;
}

/* one taint of an allocated device: folds it into *e unless tolerated forever */
static int one_taint(struct dte_eviction *e, bool *have, const cJSON *result, const cJSON *taint,
                     const struct dte_reason *r)
{
	const cJSON *tol;
	int64_t secs = INT64_MAX;
	bool tolerated = false;
	kube_time_t when = time_of(taint);

	cJSON_ArrayForEach(tol, cJSON_GetObjectItemCaseSensitive(result, "tolerations"))
	{
		if (!str_eq(str_of(tol, "effect"), "NoExecute") || !dte_tolerates(tol, taint))
			continue;
		const cJSON *ts = cJSON_GetObjectItemCaseSensitive(tol, "tolerationSeconds");
		if (!cJSON_IsNumber(ts))
			return 0; /* tolerated forever: not a reason */
		int64_t v = int_of(ts, 0);
		if (v < 0)
			v = 0;
		if (v < secs)
			secs = v;
		tolerated = true;
	}
	if (tolerated) {
		/* Time.Add(Duration(secs)*Second): Go's duration saturates nothing, kcmd clamps */
		if (secs > (INT64_MAX - when) / 1000000000)
			when = INT64_MAX;
		else
			when += secs * 1000000000;
	}
	if (reason_add(e, r) < 0)
		return -ENOMEM;
	if (!*have || when < e->when)
		e->when = when;
	*have = true;
	return 0;
}

static bool rule_evicts(const struct dte_world *w, const cJSON *rule)
{
	const cJSON *taint = path(rule, "spec", "taint");

	if (w->simulate_rule &&
	    str_eq(str_of(path(rule, "metadata", NULL), "name"), w->simulate_rule))
		return true;
	return str_eq(str_of(taint, "effect"), "NoExecute");
}

int dte_claim_eviction(const struct dte_world *w, const cJSON *claim, struct dte_eviction *ret)
{
	struct dte_eviction e = {0};
	const cJSON *res;
	bool have = false;
	cJSON *ruletaint = NULL;

	*ret = (struct dte_eviction){0};
	if (!dte_claim_allocated(claim))
		return 0;
	cJSON_ArrayForEach(res, path(path(claim, "status", "allocation"), "devices", "results"))
	{
		const char *driver = nz(str_of(res, "driver")), *pool = nz(str_of(res, "pool")),
		           *dev = nz(str_of(res, "device"));
		const cJSON *slice = NULL, *device = find_device(w, driver, pool, dev, &slice), *t;
		int i = 0;

		cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(device, "taints"))
		{
			struct dte_reason r = {
			        .name = (char *)str_of(path(slice, "metadata", NULL), "name"),
			        .driver = (char *)driver,
			        .pool = (char *)pool,
			        .device = (char *)dev,
			        .index = i};
			i++;
			if (!str_eq(str_of(t, "effect"), "NoExecute"))
				continue;
			if (one_taint(&e, &have, res, t, &r) < 0)
				goto nomem;
		}
		for (size_t k = 0; k < w->n_rules; k++) {
			const cJSON *rule = w->rules[k], *md = path(rule, "metadata", NULL),
			            *rt = path(rule, "spec", "taint");
			if (!rule_evicts(w, rule) || !dte_rule_matches(rule, driver, pool, dev))
				continue;
			/* trackedTaint.deviceTaint of a rule: its taint with the effect that evicts
			 */
			if (!(ruletaint = cJSON_Duplicate(rt, true)))
				goto nomem;
			cJSON_DeleteItemFromObjectCaseSensitive(ruletaint, "effect");
			if (!cJSON_AddStringToObject(ruletaint, "effect", "NoExecute"))
				goto nomem;
			struct dte_reason r = {.rule = true,
			                       .name = (char *)str_of(md, "name"),
			                       .uid = (char *)str_of(md, "uid")};
			if (one_taint(&e, &have, res, ruletaint, &r) < 0)
				goto nomem;
			cJSON_Delete(ruletaint);
			ruletaint = NULL;
		}
	}
	if (!have) {
		dte_eviction_free(&e);
		return 0;
	}
	*ret = e;
	return 1;
nomem:
	cJSON_Delete(ruletaint);
	dte_eviction_free(&e);
	return -ENOMEM;
}

int dte_eviction_merge(struct dte_eviction *acc, const struct dte_eviction *e)
{
	bool first = acc->n_reasons == 0;

	for (size_t i = 0; i < e->n_reasons; i++)
		if (reason_add(acc, &e->reasons[i]) < 0)
			return -ENOMEM;
	if (first || e->when < acc->when)
		acc->when = e->when;
	return 0;
}

int dte_condition_patch(const char *pod_json, size_t len, kube_time_t now, char **ret_body)
{
	cJSON *pod = cJSON_ParseWithLength(pod_json, len), *out = NULL, *c, *conds;
	const cJSON *cur = NULL, *it;
	char ts[KUBE_TIME_BUF];
	kube_time_t ltt = now;
	int r = -ENOMEM;

	*ret_body = NULL;
	if (!cJSON_IsObject(pod)) {
		cJSON_Delete(pod);
		return -EBADMSG;
	}
	cJSON_ArrayForEach(it, path(pod, "status", "conditions"))
	{
		if (str_eq(str_of(it, "type"), DTE_COND_TYPE)) {
			cur = it;
			break;
		}
	}
	if (cur && str_eq(str_of(cur, "status"), "True")) {
		const char *l = str_of(cur, "lastTransitionTime");
		const cJSON *probe = cJSON_GetObjectItemCaseSensitive(cur, "lastProbeTime");
		if (!l || kube_time_parse(l, strlen(l), &ltt) < 0)
			ltt = 0;
		if (str_eq(str_of(cur, "reason"), DTE_COND_REASON) &&
		    str_eq(str_of(cur, "message"), DTE_COND_MESSAGE) &&
		    (!probe || cJSON_IsNull(probe))) {
			r = 0;
			goto out;
		}
	}
	if (!(out = cJSON_CreateObject()) || !(c = cJSON_AddObjectToObject(out, "metadata")) ||
	    !cJSON_AddStringToObject(c, "uid", nz(str_of(path(pod, "metadata", NULL), "uid"))) ||
	    !(c = cJSON_AddObjectToObject(out, "status")) ||
	    !(conds = cJSON_AddArrayToObject(c, "conditions")) || !(c = cJSON_CreateObject()))
		goto out;
	cJSON_AddItemToArray(conds, c);
	if (ltt)
		kube_time_format(ltt, ts);
	if (!cJSON_AddNullToObject(c, "lastProbeTime") ||
	    !(ltt ? cJSON_AddStringToObject(c, "lastTransitionTime", ts)
	          : cJSON_AddNullToObject(c, "lastTransitionTime")) ||
	    !cJSON_AddStringToObject(c, "message", DTE_COND_MESSAGE) ||
	    !cJSON_AddStringToObject(c, "reason", DTE_COND_REASON) ||
	    !cJSON_AddStringToObject(c, "status", "True") ||
	    !cJSON_AddStringToObject(c, "type", DTE_COND_TYPE))
		goto out;
	if (!(*ret_body = cJSON_PrintUnformatted(out)))
		goto out;
	r = 1;
out:
	cJSON_Delete(out);
	cJSON_Delete(pod);
	return r;
}

static void cat(char *buf, size_t sz, const char *fmt, int64_t n)
{
	size_t l = strlen(buf);
	if (l < sz)
		snprintf(buf + l, sz - l, fmt, n);
}

static void count(char *buf, size_t sz, int64_t n, const char *one, const char *many)
{
	if (n == 1)
		cat(buf, sz, one, n);
	else
		cat(buf, sz, many, n);
}

void dte_rule_condition(const char *effect, int64_t pending, int64_t pending_ns, int64_t evicted,
                        int64_t slice_devices, int64_t allocated_devices, const char **ret_status,
                        const char **ret_reason, char *msg, size_t sz)
{
	msg[0] = 0;
	*ret_status = "False";
	if (str_eq(effect, "NoExecute")) {
		if (pending > 0) {
			*ret_status = "True";
			*ret_reason = "PodsPendingEviction";
			count(msg, sz, pending, "1 pod needs to be evicted in ",
			      "%" PRId64 " pods need to be evicted in ");
			count(msg, sz, pending_ns, "1 namespace.",
			      "%" PRId64 " different namespaces.");
		} else if (evicted > 0) {
			*ret_reason = "Completed";
		} else {
			*ret_reason = "NotStarted";
		}
	} else if (str_eq(effect, "None")) {
		*ret_reason = "NoEffect";
		count(msg, sz, slice_devices, "1 published device selected. ",
		      "%" PRId64 " published devices selected. ");
		count(msg, sz, allocated_devices, "1 allocated device selected. ",
		      "%" PRId64 " allocated devices selected. ");
		count(msg, sz, pending, "1 pod would be evicted in ",
		      "%" PRId64 " pods would be evicted in ");
		count(msg, sz, pending_ns, "1 namespace ", "%" PRId64 " different namespaces ");
		cat(msg, sz,
		    "if the effect was NoExecute. This information will not be updated again. "
		    "Recreate the DeviceTaintRule to trigger an update.",
		    0);
	} else {
		*ret_reason = "OtherEffect";
		cat(msg, sz, "Eviction only happens for the NoExecute effect.", 0);
	}
	if (evicted > 0) {
		if (msg[0])
			cat(msg, sz, " ", 0);
		count(msg, sz, evicted, "1 pod ", "%" PRId64 " pods ");
		cat(msg, sz, "evicted since starting the controller.", 0);
	}
}
