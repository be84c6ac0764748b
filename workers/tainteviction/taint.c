/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/tainteviction/taint.c: the taint eviction controller's pure decisions (taint.h).
 *
 * Design note.
 *   Upstream keeps one TimedWorker per pod (created-at, fire-at, a timer) and decides, on each
 *   node or pod update, to cancel it, replace it or keep it (processPodOnNode). The decision is
 *   here as a function of (pending eviction, now, taints, tolerations); the timer is the
 *   caller's (a requeue-after of a key, plugin.c). The schedule is an open-addressing table of
 *   the pending evictions keyed by "ns/name", doubled when half full, so it has no fixed limit.
 */
#include "workers/tainteviction/taint.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

/* ---- parsing ------------------------------------------------------------------------------ */

static const char *str_of(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int dup_opt(const char *s, char **ret)
{
	*ret = NULL;
	if (!s)
		return 0;
	return (*ret = strdup(s)) ? 0 : -ENOMEM;
}

void te_taints_free(struct te_taints *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].key);
		free(t->v[i].value);
		free(t->v[i].effect);
		free(t->v[i].time_added);
	}
	free(t->v);
	*t = (struct te_taints){0};
}

int te_node_noexec_taints_cjson(const void *node, struct te_taints *ret)
{
	const cJSON *root = node, *spec, *taints, *it;
	size_t n = 0;

	*ret = (struct te_taints){0};
	if (!cJSON_IsObject(root))
		return -EPROTO;
	spec = cJSON_GetObjectItemCaseSensitive(root, "spec");
	taints = cJSON_IsObject(spec) ? cJSON_GetObjectItemCaseSensitive(spec, "taints") : NULL;
	if (!cJSON_IsArray(taints))
		return 0;
	cJSON_ArrayForEach(it, taints) n++;
	if (!n)
		return 0;
	if (!(ret->v = calloc(n, sizeof(*ret->v))))
		return -ENOMEM;
	cJSON_ArrayForEach(it, taints)
	{
		const char *eff = str_of(it, "effect");
		struct te_taint *t = &ret->v[ret->n];
		if (!eff || strcmp(eff, "NoExecute"))
			continue;
		ret->n++;
		if (dup_opt(str_of(it, "key") ? str_of(it, "key") : "", &t->key) < 0 ||
		    dup_opt(str_of(it, "value") ? str_of(it, "value") : "", &t->value) < 0 ||
		    dup_opt(eff, &t->effect) < 0 ||
		    dup_opt(str_of(it, "timeAdded"), &t->time_added) < 0)
			return -ENOMEM;
	}
	return 0;
}

int te_node_noexec_taints(const char *json, size_t len, struct te_taints *ret)
{
	cJSON *root = cJSON_ParseWithLength(json, len);
	int r;

	*ret = (struct te_taints){0};
	if (!root)
		return -EBADMSG;
	r = te_node_noexec_taints_cjson(root, ret);
	cJSON_Delete(root);
	return r;
}

static bool str_eq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return !strcmp(a, b);
}

bool te_taints_equal(const struct te_taints *a, const struct te_taints *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (!str_eq(a->v[i].key, b->v[i].key) || !str_eq(a->v[i].value, b->v[i].value) ||
		    !str_eq(a->v[i].effect, b->v[i].effect) ||
		    !str_eq(a->v[i].time_added, b->v[i].time_added))
			return false;
	return true;
}

void te_tolerations_free(struct te_tolerations *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].key);
		free(t->v[i].op);
		free(t->v[i].value);
		free(t->v[i].effect);
	}
	free(t->v);
	*t = (struct te_tolerations){0};
}

int te_pod_tolerations_cjson(const void *pod, struct te_tolerations *ret)
{
	const cJSON *root = pod, *spec, *tols, *it;
	size_t n = 0;

	*ret = (struct te_tolerations){0};
	if (!cJSON_IsObject(root))
		return -EPROTO;
	spec = cJSON_GetObjectItemCaseSensitive(root, "spec");
	tols = cJSON_IsObject(spec) ? cJSON_GetObjectItemCaseSensitive(spec, "tolerations") : NULL;
	if (!cJSON_IsArray(tols))
		return 0;
	cJSON_ArrayForEach(it, tols) n++;
	if (!n)
		return 0;
	if (!(ret->v = calloc(n, sizeof(*ret->v))))
		return -ENOMEM;
	cJSON_ArrayForEach(it, tols)
	{
		struct te_toleration *t = &ret->v[ret->n++];
		const cJSON *s = cJSON_GetObjectItemCaseSensitive(it, "tolerationSeconds");
		if (!cJSON_IsObject(it))
			continue; /* all fields empty: matches nothing but an empty-key taint value
			             "" */
		if (dup_opt(str_of(it, "key") ? str_of(it, "key") : "", &t->key) < 0 ||
		    dup_opt(str_of(it, "operator") ? str_of(it, "operator") : "", &t->op) < 0 ||
		    dup_opt(str_of(it, "value") ? str_of(it, "value") : "", &t->value) < 0 ||
		    dup_opt(str_of(it, "effect") ? str_of(it, "effect") : "", &t->effect) < 0)
			return -ENOMEM;
		if (cJSON_IsNumber(s)) {
			t->has_seconds = true;
			/* an int64 in the API; cJSON keeps a double (exact up to 2^53) */
			double d = s->valuedouble;
			t->seconds = d >= 9.2e18    ? INT64_MAX
			             : d <= -9.2e18 ? INT64_MIN
			                            : (int64_t)d;
		}
	}
	return 0;
}

int te_pod_tolerations(const char *json, size_t len, struct te_tolerations *ret)
{
	cJSON *root = cJSON_ParseWithLength(json, len);
	int r;

	*ret = (struct te_tolerations){0};
	if (!root)
		return -EBADMSG;
	r = te_pod_tolerations_cjson(root, ret);
	cJSON_Delete(root);
	return r;
}

/* ---- matching ----------------------------------------------------------------------------- */

static const char *nz(const char *s)
{
	return s ? s : "";
}

bool te_tolerates(const struct te_toleration *tol, const struct te_taint *taint)
{
	const char *op = nz(tol->op);

	if (*nz(tol->effect) && strcmp(nz(tol->effect), nz(taint->effect)))
		return false;
	if (*nz(tol->key) && strcmp(nz(tol->key), nz(taint->key)))
		return false;
	if (!*op || !strcmp(op, "Equal"))
		return !strcmp(nz(tol->value), nz(taint->value));
	if (!strcmp(op, "Exists"))
		return true;
	return false; /* Lt, Gt (gate off) and anything else */
}

bool te_matching_tolerations(const struct te_taints *taints, const struct te_tolerations *tols,
                             const struct te_toleration **used)
{
	if (!taints->n)
		return true;
	if (!tols->n)
		return false;
	for (size_t i = 0; i < taints->n; i++) {
		bool ok = false;
		for (size_t j = 0; j < tols->n && !ok; j++)
			if (te_tolerates(&tols->v[j], &taints->v[i])) {
				used[i] = &tols->v[j];
				ok = true;
			}
		if (!ok)
			return false;
	}
	return true;
}

int64_t te_min_toleration_seconds(const struct te_toleration *const *used, size_t n)
{
	int64_t min = INT64_MAX;

	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (!used[i]->has_seconds)
			continue;
		if (used[i]->seconds <= 0)
			return 0;
		if (used[i]->seconds < min)
			min = used[i]->seconds;
	}
	return min == INT64_MAX ? -1 : min;
}

/* seconds to usec without overflow (a toleration of years is "never" in practice) */
static int64_t add_sec(int64_t t, int64_t sec)
{
	if (sec > (INT64_MAX - t) / 1000000)
		return INT64_MAX;
	return t + sec * 1000000;
}

void te_process_pod(const struct te_sched *cur, int64_t now, const struct te_taints *taints,
                    const struct te_tolerations *tols, struct te_decision *ret)
{
	const struct te_toleration **used;
	int64_t min;

	*ret = (struct te_decision){.action = TE_CANCEL, .cancel_event = cur != NULL};
	if (!taints->n)
		return; /* the callers' short cut: no NoExecute taint, nothing pending */
	used = calloc(taints->n, sizeof(*used));
	if (!used) {
		/* cannot decide: keep what is pending (its own time still holds) */
		*ret = (struct te_decision){.action = cur ? TE_WAIT : TE_NOTHING};
		if (cur)
			ret->sched = *cur;
		return;
	}
	if (!te_matching_tolerations(taints, tols, used)) {
		/* cancel what was pending (with its Event) and evict now */
		ret->action = TE_EVICT_NOW;
		free(used);
		return;
	}
	min = te_min_toleration_seconds(used, taints->n);
	free(used);
	if (min < 0)
		return; /* tolerated forever: cancel */
	if (cur) {
		/* a pending eviction is kept unless it was created at this very instant (or the
		 * clock went back): then it is replaced with one from its own creation time */
		if (cur->created_at < now) {
			*ret = (struct te_decision){.action = TE_WAIT, .sched = *cur};
			if (cur->fire_at <= now)
				ret->action = TE_EVICT_NOW;
			return;
		}
		ret->sched = (struct te_sched){.slot = cur->slot,
		                               .created_at = cur->created_at,
		                               .fire_at = add_sec(now, min)};
	} else {
		ret->cancel_event = false;
		ret->sched = (struct te_sched){.created_at = now, .fire_at = add_sec(now, min)};
	}
	/* upstream's timer with a delay <= 0 runs at once */
	ret->action = ret->sched.fire_at <= ret->sched.created_at || ret->sched.fire_at <= now
	                      ? TE_EVICT_NOW
	                      : TE_WAIT;
}

/* ---- the schedule ------------------------------------------------------------------------- */

struct te_slot {
	char *key; /* NULL: empty; TOMB: deleted */
	char *node;
	struct te_sched v;
};

struct te_schedule {
	struct te_slot *slot;
	size_t cap, used, n; /* used counts live entries and tombstones */
};

static char tomb_mark;
#define TOMB (&tomb_mark)

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

int te_schedule_new(struct te_schedule **ret)
{
	struct te_schedule *s = calloc(1, sizeof(*s));

	if (!s || !(s->slot = calloc(16, sizeof(*s->slot)))) {
		free(s);
		return -ENOMEM;
	}
	s->cap = 16;
	*ret = s;
	return 0;
}

void te_schedule_free(struct te_schedule *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->cap; i++)
		if (s->slot[i].key && s->slot[i].key != TOMB) {
			free(s->slot[i].key);
			free(s->slot[i].node);
		}
	free(s->slot);
	free(s);
}

/* the slot holding key, or (found = false) the first free slot of its probe sequence */
static size_t find(const struct te_schedule *s, const char *key, bool *found)
{
	size_t i = hash_str(key) & (s->cap - 1), free_at = SIZE_MAX;

	for (;; i = (i + 1) & (s->cap - 1)) {
		if (!s->slot[i].key) {
			*found = false;
			return free_at != SIZE_MAX ? free_at : i;
		}
		if (s->slot[i].key == TOMB) {
			if (free_at == SIZE_MAX)
				free_at = i;
			continue;
		}
		if (!strcmp(s->slot[i].key, key)) {
			*found = true;
			return i;
		}
	}
}

static int grow(struct te_schedule *s)
{
	size_t cap = s->n * 4 > s->cap ? s->cap * 2 : s->cap; /* else only clear tombstones */
	struct te_slot *old = s->slot, *nw = calloc(cap, sizeof(*nw));
	size_t ocap = s->cap;

	if (!nw)
		return -ENOMEM;
	s->slot = nw;
	s->cap = cap;
	s->used = 0;
	for (size_t i = 0; i < ocap; i++) {
		bool f;
		if (!old[i].key || old[i].key == TOMB)
			continue;
		size_t j = find(s, old[i].key, &f);
		s->slot[j] = old[i];
		s->used++;
	}
	free(old);
	return 0;
}

const struct te_sched *te_schedule_get(const struct te_schedule *s, const char *key)
{
	bool f;
	size_t i = find(s, key, &f);
	return f ? &s->slot[i].v : NULL;
}

int te_schedule_put(struct te_schedule *s, const char *key, const char *node,
                    const struct te_sched *v)
{
	bool f;
	size_t i;
	char *n;

	if ((s->used + 1) * 2 > s->cap && grow(s) < 0)
		return -ENOMEM;
	i = find(s, key, &f);
	if (!(n = strdup(node ? node : "")))
		return -ENOMEM;
	if (f) {
		free(s->slot[i].node);
		s->slot[i].node = n;
		s->slot[i].v = *v;
		return 0;
	}
	char *k = strdup(key);
	if (!k) {
		free(n);
		return -ENOMEM;
	}
	if (!s->slot[i].key)
		s->used++;
	s->slot[i] = (struct te_slot){.key = k, .node = n, .v = *v};
	s->n++;
	return 0;
}

bool te_schedule_del(struct te_schedule *s, const char *key)
{
	bool f;
	size_t i = find(s, key, &f);

	if (!f)
		return false;
	free(s->slot[i].key);
	free(s->slot[i].node);
	s->slot[i] = (struct te_slot){.key = TOMB};
	s->n--;
	return true;
}

size_t te_schedule_len(const struct te_schedule *s)
{
	return s->n;
}

void te_keys_free(char **keys)
{
	if (!keys)
		return;
	for (char **k = keys; *k; k++)
		free(*k);
	free(keys);
}

int te_schedule_keys_on_node(const struct te_schedule *s, const char *node, char ***ret_keys)
{
	size_t n = 0;
	char **keys = calloc(s->n + 1, sizeof(*keys));

	*ret_keys = NULL;
	if (!keys)
		return -ENOMEM;
	for (size_t i = 0; i < s->cap; i++) {
		const struct te_slot *e = &s->slot[i];
		if (!e->key || e->key == TOMB || strcmp(e->node, node))
			continue;
		if (!(keys[n++] = strdup(e->key))) {
			te_keys_free(keys);
			return -ENOMEM;
		}
	}
	*ret_keys = keys;
	return (int)n;
}

int64_t te_schedule_next_on_node(const struct te_schedule *s, const char *node)
{
	int64_t next = 0;

	for (size_t i = 0; i < s->cap; i++) {
		const struct te_slot *e = &s->slot[i];
		if (!e->key || e->key == TOMB || strcmp(e->node, node))
			continue;
		if (!next || e->v.fire_at < next)
			next = e->v.fire_at;
	}
	return next;
}

/* ---- the condition ------------------------------------------------------------------------ */

int te_condition_patch(const char *pod_json, size_t len, kube_time_t now, char **ret_body)
{
	cJSON *pod = cJSON_ParseWithLength(pod_json, len), *out = NULL, *c, *conds;
	const cJSON *meta, *status, *cur = NULL, *it;
	char ts[KUBE_TIME_BUF];
	kube_time_t ltt = now;
	int64_t gen = 0;
	int r = -ENOMEM;

	*ret_body = NULL;
	if (!pod)
		return -EBADMSG;
	if (!cJSON_IsObject(pod)) {
		r = -EPROTO;
		goto out;
	}
	meta = cJSON_GetObjectItemCaseSensitive(pod, "metadata");
	status = cJSON_GetObjectItemCaseSensitive(pod, "status");
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(meta, "generation");
	if (cJSON_IsNumber(g))
		gen = (int64_t)g->valuedouble;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(status, "conditions"))
	{
		const char *t = str_of(it, "type");
		if (t && !strcmp(t, TE_COND_TYPE)) {
			cur = it;
			break;
		}
	}
	if (cur && str_eq(str_of(cur, "status"), "True")) {
		const char *l = str_of(cur, "lastTransitionTime");
		const cJSON *probe = cJSON_GetObjectItemCaseSensitive(cur, "lastProbeTime");
		ltt = 0;
		if (l && kube_time_parse(l, strlen(l), &ltt) < 0)
			ltt = 0;
		/* UpdatePodCondition: same status, reason, message, probe time (zero) and kept
		 * transition time: nothing to write */
		if (str_eq(str_of(cur, "reason"), TE_COND_REASON) &&
		    str_eq(str_of(cur, "message"), TE_COND_MESSAGE) &&
		    (!probe || cJSON_IsNull(probe))) {
			r = 0;
			goto out;
		}
	}
	if (!(out = cJSON_CreateObject()) || !(c = cJSON_AddObjectToObject(out, "metadata")) ||
	    !cJSON_AddStringToObject(c, "uid", nz(str_of(meta, "uid"))) ||
	    !(c = cJSON_AddObjectToObject(out, "status")) ||
	    !(conds = cJSON_AddArrayToObject(c, "conditions")) || !(c = cJSON_CreateObject()))
		goto out;
	cJSON_AddItemToArray(conds, c);
	if (ltt)
		kube_time_format(ltt, ts);
	if (!cJSON_AddNullToObject(c, "lastProbeTime") ||
	    !(ltt ? cJSON_AddStringToObject(c, "lastTransitionTime", ts)
	          : cJSON_AddNullToObject(c, "lastTransitionTime")) ||
	    !cJSON_AddStringToObject(c, "message", TE_COND_MESSAGE) ||
	    (gen && !cJSON_AddNumberToObject(c, "observedGeneration", (double)gen)) ||
	    !cJSON_AddStringToObject(c, "reason", TE_COND_REASON) ||
	    !cJSON_AddStringToObject(c, "status", "True") ||
	    !cJSON_AddStringToObject(c, "type", TE_COND_TYPE))
		goto out;
	if (!(*ret_body = cJSON_PrintUnformatted(out)))
		goto out;
	r = 1;
out:
	cJSON_Delete(out);
	cJSON_Delete(pod);
	return r;
}

double te_latency_observed(int64_t since_fire_usec)
{
	/* Duration(ns) * Duration(1e9) in Go's int64 arithmetic: wraps like uint64 */
	uint64_t ns = (uint64_t)since_fire_usec * 1000u;
	return (double)(int64_t)(ns * 1000000000u);
}

/* ---- many evictions at once ---------------------------------------------------------------- */

void te_ev_advance(struct te_ev *e, int r)
{
	if (e->step >= TE_EV_DONE)
		return;
	if (r >= 0) {
		if (e->step == TE_EV_GET)
			e->step = r > 0 ? TE_EV_PATCH : TE_EV_DELETE;
		else if (e->step == TE_EV_PATCH)
			e->step = TE_EV_DELETE;
		else
			e->step = TE_EV_DONE;
		return;
	}
	e->err = r;
	e->attempts++;
	if (r == -ENOLCK || e->attempts >= TE_DELETE_RETRIES) {
		e->step = TE_EV_FAILED;
		return;
	}
	e->step = TE_EV_GET;
	e->retry = true;
}

size_t te_ev_pick(const struct te_ev *e, size_t n, enum te_ev_step step, size_t max, size_t *ret)
{
	size_t k = 0;
	for (size_t i = 0; i < n && k < max; i++)
		if (e[i].step == step && !e[i].retry)
			ret[k++] = i;
	return k;
}

size_t te_ev_retry_due(struct te_ev *e, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (e[i].retry) {
			e[i].retry = false;
			k++;
		}
	return k;
}

int te_ev_run(struct te_ev *ev, size_t n, const struct te_ev_ops *ops, void *ud)
{
	size_t *idx = calloc(TE_EVICT_INFLIGHT, sizeof(*idx));
	int *res = calloc(TE_EVICT_INFLIGHT, sizeof(*res));
	int r = 0;

	if (!idx || !res) {
		free(idx);
		free(res);
		return -ENOMEM;
	}
	for (;;) {
		for (int st = TE_EV_GET; st <= TE_EV_DELETE && r == 0; st++) {
			size_t k;
			while (r == 0 && (k = te_ev_pick(ev, n, (enum te_ev_step)st,
			                                 TE_EVICT_INFLIGHT, idx)) > 0) {
				memset(res, 0, TE_EVICT_INFLIGHT * sizeof(*res));
				if ((r = ops->send(ud, (enum te_ev_step)st, idx, k, res)) < 0)
					break;
				for (size_t j = 0; j < k; j++) {
					struct te_ev *e = &ev[idx[j]];
					te_ev_advance(e, res[j]);
					if (e->step == TE_EV_FAILED && e->err == -ENOLCK)
						r = -ENOLCK;
					if (e->step >= TE_EV_DONE && ops->done)
						ops->done(ud, idx[j]);
				}
			}
		}
		if (r < 0 || !te_ev_retry_due(ev, n))
			break;
		if (ops->pause)
			ops->pause(ud); /* deletePodHandler's 10 ms between attempts */
	}
	free(idx);
	free(res);
	return r;
}
