/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/nodelifecycle/nlc.c: the node lifecycle controller's pure decisions (nlc.h).
 *
 * Design note. Everything here works on parsed JSON (cJSON) and times passed in, never on the
 * clock or the network, so the unit tests drive it with upstream's test scenarios. The timed
 * queue is a sorted array (insertion keeps order), not a heap: its size is the number of nodes
 * waiting to be tainted in one zone, and a sorted array keeps equal times in insertion order,
 * which a heap does not promise. Rejected: a fixed-size table (a zone may hold any number of
 * nodes).
 */
#include "workers/nodelifecycle/nlc.h"

#include <errno.h>
#include <math.h>
#include <sys/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cJSON *item(const cJSON *o, const char *k)
{
	return o ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = item(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static kube_time_t time_of(const cJSON *o, const char *k)
{
	const char *s = str(o, k);
	kube_time_t t = 0;
	if (s && kube_time_parse(s, strlen(s), &t) < 0)
		t = 0;
	return t;
}

enum nlc_cond nlc_cond_parse(const char *s)
{
	if (!s)
		return NLC_ABSENT;
	if (!strcmp(s, "True"))
		return NLC_TRUE;
	if (!strcmp(s, "False"))
		return NLC_FALSE;
	if (!strcmp(s, "Unknown"))
		return NLC_UNKNOWN;
	return NLC_OTHER;
}

const char *nlc_zone_state_name(enum nlc_zone_state s)
{
	switch (s) {
	case NLC_ZONE_INITIAL:
		return "Initial";
	case NLC_ZONE_NORMAL:
		return "Normal";
	case NLC_ZONE_FULL_DISRUPTION:
		return "FullDisruption";
	case NLC_ZONE_PARTIAL_DISRUPTION:
		return "PartialDisruption";
	}
	return "?";
}

/* ---- zones ------------------------------------------------------------------------------------
 */

int nlc_zone_key(const cJSON *labels, char **ret)
{
	const cJSON *z = item(labels, "failure-domain.beta.kubernetes.io/zone");
	const cJSON *r = item(labels, "failure-domain.beta.kubernetes.io/region");
	const char *zone, *region;
	size_t n;

	if (!z)
		z = item(labels, "topology.kubernetes.io/zone");
	if (!r)
		r = item(labels, "topology.kubernetes.io/region");
	zone = cJSON_IsString(z) ? z->valuestring : "";
	region = cJSON_IsString(r) ? r->valuestring : "";
	if (!*zone && !*region) {
		*ret = strdup("");
		return *ret ? 0 : -ENOMEM;
	}
	n = strlen(zone) + strlen(region) + 3;
	if (!(*ret = malloc(n)))
		return -ENOMEM;
	snprintf(*ret, n, "%s::%s", region, zone);
	return 0;
}

enum nlc_zone_state nlc_compute_zone_state(const enum nlc_cond *ready, size_t n, float threshold,
                                           int *ret_unhealthy)
{
	int ok = 0, bad = 0;

	for (size_t i = 0; i < n; i++) {
		if (ready[i] == NLC_TRUE)
			ok++;
		else
			bad++;
	}
	*ret_unhealthy = bad;
	if (ok == 0 && bad > 0)
		return NLC_ZONE_FULL_DISRUPTION;
	if (bad > 2 && (float)bad / (float)(bad + ok) >= threshold)
		return NLC_ZONE_PARTIAL_DISRUPTION;
	return NLC_ZONE_NORMAL;
}

float nlc_reduced_qps(int nodes, int32_t large_cluster_threshold, float secondary_qps)
{
	return (int32_t)nodes > large_cluster_threshold ? secondary_qps : 0;
}

static struct nlc_zone_in *seen(struct nlc_zone_in *in, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(in[i].key, key))
			return &in[i];
	return NULL;
}

/* setLimiterInZone */
static void set_limiter(const struct nlc_disruption_params *p, struct nlc_zone_st *z, size_t size,
                        enum nlc_zone_state st)
{
	switch (st) {
	case NLC_ZONE_NORMAL:
	case NLC_ZONE_FULL_DISRUPTION: /* HealthyQPSFunc */
		z->swap = true;
		z->qps = p->eviction_qps;
		break;
	case NLC_ZONE_PARTIAL_DISRUPTION: /* ReducedQPSFunc */
		z->swap = true;
		z->qps = nlc_reduced_qps((int)size, p->large_cluster_threshold, p->secondary_qps);
		break;
	default:
		break;
	}
}

enum nlc_disruption nlc_handle_disruption(const struct nlc_disruption_params *p,
                                          struct nlc_zone_in *in, size_t n_in,
                                          struct nlc_zone_st *zones, size_t n_zones)
{
	bool all_now = true, all_before = true, changed = false;

	for (size_t i = 0; i < n_zones; i++)
		zones[i].swap = zones[i].dropped = zones[i].initialized = false;
	for (size_t i = 0; i < n_in; i++) {
		in[i].state = nlc_compute_zone_state(in[i].ready, in[i].n, p->unhealthy_threshold,
		                                     &in[i].unhealthy);
		if (in[i].state != NLC_ZONE_FULL_DISRUPTION)
			all_now = false;
		for (size_t j = 0; j < n_zones; j++)
			if (!strcmp(zones[j].key, in[i].key) && !zones[j].has_state) {
				zones[j].has_state = true;
				zones[j].state = NLC_ZONE_INITIAL;
				zones[j].initialized = true;
			}
	}
	/* zoneStates in its order: zones nobody reported leave it; the first zone not fully
	 * disrupted ends the walk (Go's map order is random; kcmd's is the zones' order) */
	for (size_t i = 0; i < n_zones; i++) {
		struct nlc_zone_st *z = &zones[i];
		if (!z->has_state)
			continue;
		if (!seen(in, n_in, z->key)) {
			z->has_state = false;
			z->dropped = true;
			continue;
		}
		if (z->state != NLC_ZONE_FULL_DISRUPTION) {
			all_before = false;
			break;
		}
	}
	if (all_now && all_before)
		return NLC_DISRUPT_NONE;
	if (all_now) {
		for (size_t i = 0; i < n_zones; i++)
			if (zones[i].has_state) {
				zones[i].swap = true;
				zones[i].qps = 0;
				zones[i].state = NLC_ZONE_FULL_DISRUPTION;
			}
		return NLC_DISRUPT_ENTER;
	}
	if (all_before) {
		for (size_t i = 0; i < n_zones; i++) {
			struct nlc_zone_in *s =
			        zones[i].has_state ? seen(in, n_in, zones[i].key) : NULL;
			if (!s)
				continue;
			set_limiter(p, &zones[i], s->n, s->state);
			zones[i].state = s->state;
		}
		return NLC_DISRUPT_EXIT;
	}
	for (size_t i = 0; i < n_zones; i++) {
		struct nlc_zone_in *s = zones[i].has_state ? seen(in, n_in, zones[i].key) : NULL;
		if (!s || zones[i].state == s->state)
			continue;
		set_limiter(p, &zones[i], s->n, s->state);
		zones[i].state = s->state;
		changed = true;
	}
	return changed ? NLC_DISRUPT_ZONES : NLC_DISRUPT_NONE;
}

/* ---- token bucket ---------------------------------------------------------------------------- */

void nlc_bucket_init(struct nlc_bucket *b, float qps, kube_time_t now)
{
	*b = (struct nlc_bucket){.qps = qps, .tokens = qps > 0 ? 1.0 : 0.0, .last = now};
}

bool nlc_bucket_try(struct nlc_bucket *b, kube_time_t now)
{
	if (b->qps <= 0)
		return false;
	if (isinf(b->qps))
		return true; /* the "always" limiter (tests) */
	if (now > b->last) {
		b->tokens += (double)(now - b->last) / 1e9 * (double)b->qps;
		if (b->tokens > 1.0)
			b->tokens = 1.0;
		b->last = now;
	}
	if (b->tokens >= 1.0) {
		b->tokens -= 1.0;
		return true;
	}
	return false;
}

/* ---- the rate-limited timed queue ------------------------------------------------------------ */

void nlc_rlq_init(struct nlc_rlq *q, float qps, kube_time_t now)
{
	*q = (struct nlc_rlq){0};
	nlc_bucket_init(&q->lim, qps, now);
}

static void tv_free(struct nlc_tv *tv)
{
	free(tv->value);
	free(tv->uid);
}

void nlc_rlq_free(struct nlc_rlq *q)
{
	for (size_t i = 0; i < q->n; i++)
		tv_free(&q->q[i]);
	for (size_t i = 0; i < q->nset; i++)
		free(q->set[i]);
	free(q->q);
	free(q->set);
	*q = (struct nlc_rlq){0};
}

static ssize_t set_find(const struct nlc_rlq *q, const char *v)
{
	for (size_t i = 0; i < q->nset; i++)
		if (!strcmp(q->set[i], v))
			return (ssize_t)i;
	return -1;
}

bool nlc_rlq_has(const struct nlc_rlq *q, const char *value)
{
	return set_find(q, value) >= 0;
}

static bool tv_before(const struct nlc_tv *a, const struct nlc_tv *b)
{
	return a->process_at < b->process_at || (a->process_at == b->process_at && a->seq < b->seq);
}

/* puts q->q[i] where its order says (the rest is sorted) */
static void resort(struct nlc_rlq *q, size_t i)
{
	struct nlc_tv t = q->q[i];
	memmove(&q->q[i], &q->q[i + 1], (q->n - i - 1) * sizeof(t));
	size_t j = 0;
	while (j < q->n - 1 && !tv_before(&t, &q->q[j]))
		j++;
	memmove(&q->q[j + 1], &q->q[j], (q->n - 1 - j) * sizeof(t));
	q->q[j] = t;
}

int nlc_rlq_add(struct nlc_rlq *q, const char *value, const char *uid, kube_time_t now)
{
	struct nlc_tv tv = {0};

	if (nlc_rlq_has(q, value))
		return 0;
	if (q->n == q->cap) {
		size_t c = q->cap ? q->cap * 2 : 8;
		struct nlc_tv *p = realloc(q->q, c * sizeof(*p));
		if (!p)
			return -ENOMEM;
		q->q = p;
		q->cap = c;
	}
	if (q->nset == q->setcap) {
		size_t c = q->setcap ? q->setcap * 2 : 8;
		char **p = realloc(q->set, c * sizeof(*p));
		if (!p)
			return -ENOMEM;
		q->set = p;
		q->setcap = c;
	}
	char *sv = strdup(value);
	tv.value = strdup(value);
	tv.uid = strdup(uid ? uid : "");
	if (!sv || !tv.value || !tv.uid) {
		free(sv);
		tv_free(&tv);
		return -ENOMEM;
	}
	tv.added_at = tv.process_at = now;
	tv.seq = q->seq++;
	q->set[q->nset++] = sv;
	q->q[q->n++] = tv;
	resort(q, q->n - 1);
	return 1;
}

static bool queue_drop(struct nlc_rlq *q, const char *value)
{
	for (size_t i = 0; i < q->n; i++)
		if (!strcmp(q->q[i].value, value)) {
			tv_free(&q->q[i]);
			memmove(&q->q[i], &q->q[i + 1], (q->n - i - 1) * sizeof(q->q[0]));
			q->n--;
			return true;
		}
	return false;
}

bool nlc_rlq_remove(struct nlc_rlq *q, const char *value)
{
	ssize_t i = set_find(q, value);
	if (i < 0)
		return false;
	free(q->set[i]);
	q->set[i] = q->set[--q->nset];
	queue_drop(q, value);
	return true;
}

static ssize_t seq_find(const struct nlc_rlq *q, uint64_t seq)
{
	for (size_t i = 0; i < q->n; i++)
		if (q->q[i].seq == seq)
			return (ssize_t)i;
	return -1;
}

void nlc_rlq_try(struct nlc_rlq *q, kube_time_t now, nlc_try_fn fn, void *ud)
{
	while (q->n) {
		int64_t wait = 0;
		if (!nlc_bucket_try(&q->lim, now))
			break;
		if (now < q->q[0].process_at)
			break;
		uint64_t seq = q->q[0].seq;
		bool done = fn(ud, &q->q[0], &wait);
		/* fn may have Removed it (or others): act on it only if it is still queued */
		ssize_t i = seq_find(q, seq);
		if (i < 0)
			continue;
		if (!done) {
			q->q[i].process_at = now + wait + 1;
			resort(q, (size_t)i);
		} else {
			/* done: out of the queue, kept in the set (RemoveFromQueue) */
			tv_free(&q->q[i]);
			memmove(&q->q[i], &q->q[i + 1], (q->n - (size_t)i - 1) * sizeof(q->q[0]));
			q->n--;
		}
	}
}

void nlc_rlq_swap_limiter(struct nlc_rlq *q, float qps, kube_time_t now)
{
	struct nlc_bucket nb;

	if ((q->lim.qps <= 0 ? 0.0f : q->lim.qps) == (qps <= 0 ? 0.0f : qps))
		return;
	nlc_bucket_init(&nb, qps, now);
	if (qps > 0 && !nlc_bucket_try(&q->lim, now))
		nlc_bucket_try(&nb, now);
	q->lim = nb;
}

/* ---- node health ----------------------------------------------------------------------------- */

static cJSON *find_cond(const cJSON *conds, const char *type)
{
	cJSON *c;
	cJSON_ArrayForEach(c, conds)
	{
		const char *t = str(c, "type");
		if (t && !strcmp(t, type))
			return c;
	}
	return NULL;
}

enum nlc_cond nlc_node_ready(const cJSON *node)
{
	const cJSON *c = find_cond(item(item(node, "status"), "conditions"), "Ready");
	return c ? nlc_cond_parse(str(c, "status")) : NLC_ABSENT;
}

static int set_str(cJSON *o, const char *k, const char *v)
{
	cJSON *n = cJSON_CreateString(v);
	if (!n)
		return -ENOMEM;
	if (cJSON_HasObjectItem(o, k))
		return cJSON_ReplaceItemInObjectCaseSensitive(o, k, n) ? 0
		                                                       : (cJSON_Delete(n), -ENOMEM);
	return cJSON_AddItemToObject(o, k, n) ? 0 : (cJSON_Delete(n), -ENOMEM);
}

/* the saved fields of a health record from the node's (current) Ready condition */
static void save_status(struct nlc_health *h, const cJSON *node)
{
	const cJSON *c = find_cond(item(item(node, "status"), "conditions"), "Ready");
	h->saved_ready = c ? nlc_cond_parse(str(c, "status")) : NLC_ABSENT;
	h->saved_hb = c ? time_of(c, "lastHeartbeatTime") : 0;
	h->saved_tr = c ? time_of(c, "lastTransitionTime") : 0;
}

static const char *const unknown_types[] = {"Ready", "MemoryPressure", "DiskPressure",
                                            "PIDPressure"};

/* the node's conditions set to Unknown (or added as never updated) */
static int mark_unknown(cJSON *node, kube_time_t now)
{
	cJSON *status = cJSON_GetObjectItemCaseSensitive(node, "status"), *conds;
	const char *created = str(item(node, "metadata"), "creationTimestamp");
	char nows[KUBE_TIME_BUF];
	int r;

	kube_time_format(now, nows);
	if (!cJSON_IsObject(status)) {
		cJSON_DeleteItemFromObjectCaseSensitive(node, "status");
		if (!(status = cJSON_AddObjectToObject(node, "status")))
			return -ENOMEM;
	}
	conds = cJSON_GetObjectItemCaseSensitive(status, "conditions");
	if (!cJSON_IsArray(conds)) {
		cJSON_DeleteItemFromObjectCaseSensitive(status, "conditions");
		if (!(conds = cJSON_AddArrayToObject(status, "conditions")))
			return -ENOMEM;
	}
	for (size_t i = 0; i < sizeof(unknown_types) / sizeof(unknown_types[0]); i++) {
		cJSON *c = find_cond(conds, unknown_types[i]);
		if (!c) {
			if (!(c = cJSON_CreateObject()))
				return -ENOMEM;
			cJSON_AddItemToArray(conds, c);
			if ((r = set_str(c, "type", unknown_types[i])) < 0 ||
			    (r = set_str(c, "status", "Unknown")) < 0)
				return r;
			if (created && (r = set_str(c, "lastHeartbeatTime", created)) < 0)
				return r;
			if ((r = set_str(c, "lastTransitionTime", nows)) < 0 ||
			    (r = set_str(c, "reason", "NodeStatusNeverUpdated")) < 0 ||
			    (r = set_str(c, "message", "Kubelet never posted node status.")) < 0)
				return r;
		} else if (nlc_cond_parse(str(c, "status")) != NLC_UNKNOWN) {
			if ((r = set_str(c, "status", "Unknown")) < 0 ||
			    (r = set_str(c, "reason", "NodeStatusUnknown")) < 0 ||
			    (r = set_str(c, "message", "Kubelet stopped posting node status.")) <
			            0 ||
			    (r = set_str(c, "lastTransitionTime", nows)) < 0)
				return r;
		}
	}
	return 0;
}

int nlc_node_health(const struct nlc_health *saved, cJSON *node, const struct nlc_health_in *in,
                    struct nlc_health_out *out)
{
	const cJSON *meta = item(node, "metadata");
	const cJSON *ready = find_cond(item(item(node, "status"), "conditions"), "Ready");
	struct nlc_health h = saved && saved->present ? *saved : (struct nlc_health){0};
	kube_time_t created, grace, now = in->now;
	bool status_is_node = false; /* the record's status is this node's (upstream's pointer) */
	int r;

	*out = (struct nlc_health_out){0};
	if (!cJSON_IsObject(meta))
		return -EINVAL;
	created = time_of(meta, "creationTimestamp");
	if (!ready) {
		/* never posted: a fake Unknown condition dated at the node's creation */
		out->observed = NLC_UNKNOWN;
		grace = in->startup_grace;
		if (!h.present)
			h = (struct nlc_health){
			        .present = true, .probe = created, .ready_transition = created};
		status_is_node = true;
	} else {
		out->observed = nlc_cond_parse(str(ready, "status"));
		grace = in->monitor_grace;
	}
	/* what the record saw before this pass */
	bool saved_ready = status_is_node ? false : (h.present && h.saved_ready != NLC_ABSENT);
	bool saved_lease = h.has_lease;
	kube_time_t saved_renew = h.lease_renew;
	kube_time_t hb = ready ? time_of(ready, "lastHeartbeatTime") : 0;
	kube_time_t tr = ready ? time_of(ready, "lastTransitionTime") : 0;

	if (!h.present) {
		h = (struct nlc_health){.present = true, .probe = now, .ready_transition = now};
		status_is_node = true;
	} else if (!saved_ready && ready) {
		h = (struct nlc_health){.present = true, .probe = now, .ready_transition = now};
		status_is_node = true;
	} else if (saved_ready && !ready) {
		h = (struct nlc_health){.present = true, .probe = now, .ready_transition = now};
		status_is_node = true;
	} else if (saved_ready && ready && h.saved_hb != hb) {
		kube_time_t t = h.saved_tr != tr ? now : h.ready_transition;
		h = (struct nlc_health){.present = true, .probe = now, .ready_transition = t};
		status_is_node = true;
	}
	/* a renewed Lease is a heartbeat too */
	if (in->lease_found &&
	    (!saved_lease || (saved_renew && in->lease_renew && saved_renew < in->lease_renew))) {
		h.has_lease = true;
		h.lease_renew = in->lease_renew;
		h.probe = now;
	}
	out->current = ready ? out->observed : NLC_ABSENT;
	if (now > h.probe + grace) {
		out->timed_out = true;
		if ((r = mark_unknown(node, now)) < 0)
			return r;
		out->current = nlc_node_ready(node);
		/* Semantic.DeepEqual(current, observed): a fake or non-Unknown Ready changed */
		if (!ready || out->observed != NLC_UNKNOWN) {
			out->update_status = true;
			out->after_update = (struct nlc_health){.present = true,
			                                        .probe = h.probe,
			                                        .ready_transition = now,
			                                        .has_lease = in->lease_found,
			                                        .lease_renew = in->lease_renew};
			save_status(&out->after_update, node);
		}
	}
	if (status_is_node)
		save_status(&h, node);
	out->health = h;
	return 0;
}

bool nlc_node_excluded(const cJSON *node)
{
	return item(item(item(node, "metadata"), "labels"), NLC_LABEL_EXCLUDE_DISRUPTION) != NULL;
}

/* ---- taints ---------------------------------------------------------------------------------- */

static const cJSON *taints_of(const cJSON *node)
{
	const cJSON *t = item(item(node, "spec"), "taints");
	return cJSON_IsArray(t) ? t : NULL;
}

static bool match(const cJSON *t, const char *key, const char *effect)
{
	const char *k = str(t, "key"), *e = str(t, "effect");
	return !strcmp(k ? k : "", key) && !strcmp(e ? e : "", effect);
}

bool nlc_taint_exists(const cJSON *node, const char *key, const char *effect)
{
	const cJSON *t;
	cJSON_ArrayForEach(t, taints_of(node))
	{
		if (match(t, key, effect))
			return true;
	}
	return false;
}

static const struct {
	const char *type, *status, *taint;
} cond_taints[] = {
        {"Ready", "False", NLC_TAINT_NOT_READY},
        {"Ready", "Unknown", NLC_TAINT_UNREACHABLE},
        {"MemoryPressure", "True", "node.kubernetes.io/memory-pressure"},
        {"DiskPressure", "True", "node.kubernetes.io/disk-pressure"},
        {"NetworkUnavailable", "True", "node.kubernetes.io/network-unavailable"},
        {"PIDPressure", "True", "node.kubernetes.io/pid-pressure"},
};

static bool condition_taint_key(const char *k)
{
	for (size_t i = 0; i < sizeof(cond_taints) / sizeof(cond_taints[0]); i++)
		if (!strcmp(cond_taints[i].taint, k))
			return true;
	return false;
}

static bool in_list(const struct nlc_taint *l, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(l[i].key, key))
			return true;
	return false;
}

int nlc_nosched_diff(const cJSON *node, struct nlc_taint *add, size_t *n_add, struct nlc_taint *del,
                     size_t *n_del)
{
	struct nlc_taint want[NLC_MAX_NOSCHED];
	size_t nw = 0;
	const cJSON *c, *t;
	const cJSON *unsched = item(item(node, "spec"), "unschedulable");

	*n_add = *n_del = 0;
	cJSON_ArrayForEach(c, item(item(node, "status"), "conditions"))
	{
		const char *ty = str(c, "type"), *st = str(c, "status");
		if (!ty || !st)
			continue;
		for (size_t i = 0; i < sizeof(cond_taints) / sizeof(cond_taints[0]); i++)
			if (!strcmp(cond_taints[i].type, ty) &&
			    !strcmp(cond_taints[i].status, st) &&
			    !in_list(want, nw, cond_taints[i].taint) && nw < NLC_MAX_NOSCHED)
				want[nw++] = (struct nlc_taint){cond_taints[i].taint, "NoSchedule"};
	}
	if (cJSON_IsTrue(unsched) && !in_list(want, nw, NLC_TAINT_UNSCHEDULABLE))
		want[nw++] = (struct nlc_taint){NLC_TAINT_UNSCHEDULABLE, "NoSchedule"};
	for (size_t i = 0; i < nw; i++)
		if (!nlc_taint_exists(node, want[i].key, "NoSchedule"))
			add[(*n_add)++] = want[i];
	cJSON_ArrayForEach(t, taints_of(node))
	{
		const char *k = str(t, "key"), *e = str(t, "effect");
		if (!k || !e || strcmp(e, "NoSchedule"))
			continue;
		if (strcmp(k, NLC_TAINT_UNSCHEDULABLE) && !condition_taint_key(k))
			continue;
		if (!in_list(want, nw, k) && !in_list(del, *n_del, k) && *n_del < NLC_MAX_NOSCHED)
			del[(*n_del)++] = (struct nlc_taint){k, "NoSchedule"};
	}
	return 0;
}

static cJSON *taint_new(const struct nlc_taint *t, const char *time_added)
{
	cJSON *o = cJSON_CreateObject();
	if (!o || !cJSON_AddStringToObject(o, "key", t->key) ||
	    !cJSON_AddStringToObject(o, "effect", t->effect) ||
	    !cJSON_AddStringToObject(o, "timeAdded", time_added)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

int nlc_taints_patch(const cJSON *node, const struct nlc_taint *add, size_t n_add,
                     const struct nlc_taint *del, size_t n_del, kube_time_t now, char **ret_patch)
{
	const char *rv = str(item(node, "metadata"), "resourceVersion");
	const cJSON *old = taints_of(node);
	cJSON *list = old ? cJSON_Duplicate(old, true) : cJSON_CreateArray();
	cJSON *patch = NULL, *meta, *spec;
	char nows[KUBE_TIME_BUF];
	bool changed = false;
	int r = -ENOMEM;

	*ret_patch = NULL;
	if (!list)
		return -ENOMEM;
	kube_time_format(now, nows);
	for (size_t i = 0; i < n_add; i++) {
		cJSON *t, *found = NULL;
		cJSON_ArrayForEach(t, list)
		{
			if (match(t, add[i].key, add[i].effect)) {
				found = t;
				break;
			}
		}
		/* AddOrUpdateTaint: an equal taint stays; its timeAdded (seconds) never equals now
		 * (nanoseconds) unless now is a whole second */
		if (found) {
			const char *v = str(found, "value");
			if ((!v || !*v) && time_of(found, "timeAdded") == now)
				continue;
		}
		cJSON *nt = taint_new(&add[i], nows);
		if (!nt)
			goto out;
		if (found)
			cJSON_ReplaceItemViaPointer(list, found, nt);
		else
			cJSON_AddItemToArray(list, nt);
		changed = true;
	}
	for (size_t i = 0; i < n_del; i++) {
		cJSON *t = list->child;
		while (t) {
			cJSON *next = t->next;
			if (match(t, del[i].key, del[i].effect)) {
				cJSON_Delete(cJSON_DetachItemViaPointer(list, t));
				changed = true;
			}
			t = next;
		}
	}
	if (!changed) {
		r = 0;
		goto out;
	}
	if (!(patch = cJSON_CreateObject()) ||
	    !(meta = cJSON_AddObjectToObject(patch, "metadata")) ||
	    (rv && !cJSON_AddStringToObject(meta, "resourceVersion", rv)) ||
	    !(spec = cJSON_AddObjectToObject(patch, "spec")))
		goto out;
	if (cJSON_GetArraySize(list) == 0) {
		if (!cJSON_AddNullToObject(spec, "taints"))
			goto out;
	} else {
		cJSON_AddItemToObject(spec, "taints", list);
		list = NULL;
	}
	if (!(*ret_patch = cJSON_PrintUnformatted(patch)))
		goto out;
	r = 1;
out:
	cJSON_Delete(list);
	cJSON_Delete(patch);
	return r;
}

void nlc_taint_base_eviction(const cJSON *node, enum nlc_cond observed, struct nlc_tb_decision *ret)
{
	static const struct nlc_taint unreachable = {NLC_TAINT_UNREACHABLE, "NoExecute"};
	static const struct nlc_taint not_ready = {NLC_TAINT_NOT_READY, "NoExecute"};

	*ret = (struct nlc_tb_decision){0};
	switch (observed) {
	case NLC_FALSE:
	case NLC_UNKNOWN:
		ret->add = observed == NLC_FALSE ? not_ready : unreachable;
		ret->del = observed == NLC_FALSE ? unreachable : not_ready;
		if (nlc_taint_exists(node, ret->del.key, ret->del.effect)) {
			ret->action = NLC_TB_SWAP;
			return;
		}
		ret->action = NLC_TB_QUEUE;
		ret->requeue = !nlc_taint_exists(node, ret->add.key, ret->add.effect);
		return;
	case NLC_TRUE:
		ret->action = NLC_TB_REACHABLE;
		return;
	default:
		return;
	}
}

/* ---- pods ------------------------------------------------------------------------------------ */

int nlc_pod_mark_not_ready(cJSON *pod, kube_time_t now)
{
	cJSON *c = find_cond(item(item(pod, "status"), "conditions"), "Ready");
	char nows[KUBE_TIME_BUF];
	int r;

	if (!c || nlc_cond_parse(str(c, "status")) == NLC_FALSE)
		return 0;
	kube_time_format(now, nows);
	if ((r = set_str(c, "status", "False")) < 0 ||
	    (r = set_str(c, "lastTransitionTime", nows)) < 0)
		return r;
	return 1;
}

/* ---- labels ---------------------------------------------------------------------------------- */

static const struct {
	const char *primary, *secondary;
} label_pairs[] = {
        {"kubernetes.io/os", "beta.kubernetes.io/os"},
        {"kubernetes.io/arch", "beta.kubernetes.io/arch"},
};

int nlc_labels_patch(const cJSON *node, char **ret_patch)
{
	const cJSON *labels = item(item(node, "metadata"), "labels");
	cJSON *patch = NULL, *set = NULL;

	*ret_patch = NULL;
	if (!cJSON_IsObject(labels))
		return 0;
	for (size_t i = 0; i < sizeof(label_pairs) / sizeof(label_pairs[0]); i++) {
		const char *p = str(labels, label_pairs[i].primary);
		const cJSON *s = item(labels, label_pairs[i].secondary);
		if (!p)
			continue;
		if (s && cJSON_IsString(s) && !strcmp(s->valuestring, p))
			continue;
		if (!patch && (!(patch = cJSON_CreateObject()) ||
		               !(set = cJSON_AddObjectToObject(
		                         cJSON_AddObjectToObject(patch, "metadata"), "labels"))))
			goto nomem;
		if (!cJSON_AddStringToObject(set, label_pairs[i].secondary, p))
			goto nomem;
	}
	if (!patch)
		return 0;
	*ret_patch = cJSON_PrintUnformatted(patch);
	cJSON_Delete(patch);
	return *ret_patch ? 1 : -ENOMEM;
nomem:
	cJSON_Delete(patch);
	return -ENOMEM;
}

/* ---- the health pass's workers -------------------------------------------------------------- */

int nlc_pool_run(size_t n_nodes, size_t workers, const struct nlc_pool_ops *ops, void *ud)
{
	size_t *slot, *rn, *rw, active = 0, next_node = 0;

	if (!workers)
		workers = 1;
	slot = calloc(workers, sizeof(*slot));
	rn = calloc(workers, sizeof(*rn));
	rw = calloc(workers, sizeof(*rw));
	if (!slot || !rn || !rw) {
		free(slot);
		free(rn);
		free(rw);
		return -ENOMEM;
	}
	for (;;) {
		size_t m = 0, j = 0;
		while (j < workers) {
			if (j >= active) {
				if (next_node >= n_nodes)
					break;
				size_t k = next_node++;
				if (ops->start(ud, k) <= 0) {
					ops->finish(ud, k);
					continue;
				}
				slot[active++] = k;
			}
			if (ops->next(ud, slot[j], &rw[m])) {
				rn[m++] = slot[j++];
				continue;
			}
			ops->finish(ud, slot[j]);
			slot[j] = slot[--active]; /* not visited yet, or j == active */
		}
		if (!m)
			break; /* no node active and none left */
		ops->send(ud, rn, rw, m);
	}
	free(slot);
	free(rn);
	free(rw);
	return 0;
}
