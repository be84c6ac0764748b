/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/podgc/gc.c: the pod garbage collector's pure decisions (see gc.h).
 */
#include "workers/podgc/gc.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcmd/controller.h"

static const char *const reason_names[PGC_N_REASONS + 1] = {
        [PGC_REASON_TERMINATED] = "terminated",
        [PGC_REASON_OUT_OF_SERVICE] = "out-of-service",
        [PGC_REASON_ORPHANED] = "orphaned",
        [PGC_REASON_UNSCHEDULED] = "unscheduled",
        [PGC_N_REASONS] = NULL,
};

const char *pgc_reason_label(enum pgc_reason r)
{
	return (unsigned)r < PGC_N_REASONS ? reason_names[r] : "";
}

static const struct kcmd_metric_label pgc_labels[] = {{"namespace", NULL},
                                                      {"reason", reason_names}};

const struct kcmd_metric pgc_metric_decl[PGC_M_N] = {
        [PGC_M_FORCE_DELETE] = {.name = "pod_gc_collector_force_delete_pods_total",
                                .help = "Number of pods that are being forcefully deleted since "
                                        "the Pod GC Controller started.",
                                .type = KCMD_METRIC_COUNTER,
                                .stability = KCMD_METRIC_ALPHA,
                                .labels = pgc_labels,
                                .n_labels = 2,
                                .max_series = PGC_METRIC_SERIES},
        [PGC_M_FORCE_DELETE_ERRORS] = {.name = "pod_gc_collector_force_delete_pod_errors_total",
                                       .help = "Number of errors encountered when forcefully "
                                               "deleting the pods since the Pod GC Controller "
                                               "started.",
                                       .type = KCMD_METRIC_COUNTER,
                                       .stability = KCMD_METRIC_ALPHA,
                                       .labels = pgc_labels,
                                       .n_labels = 2,
                                       .max_series = PGC_METRIC_SERIES},
};

bool pgc_pod_terminated(const struct pgc_pod *p)
{
	return p->phase != KUBE_POD_PENDING && p->phase != KUBE_POD_RUNNING &&
	       p->phase != KUBE_POD_UNKNOWN;
}

bool pgc_needs_failed_patch(const struct pgc_pod *p)
{
	return p->phase != KUBE_POD_SUCCEEDED && p->phase != KUBE_POD_FAILED;
}

int pgc_pod_cmp(const struct pgc_pod *a, const struct pgc_pod *b)
{
	if (a->evicted != b->evicted)
		return a->evicted ? -1 : 1;
	/* metav1.Time compares at second precision (it is serialised so) */
	int64_t ta = a->creation_ts / 1000000000, tb = b->creation_ts / 1000000000;
	if (ta != tb)
		return ta < tb ? -1 : 1;
	return strcmp(a->name ? a->name : "", b->name ? b->name : "");
}

/* qsort_r is a GNU extension with the context last */
static int idx_cmp(const void *x, const void *y, void *ud)
{
	const struct pgc_pod *pods = ud;
	return pgc_pod_cmp(&pods[*(const size_t *)x], &pods[*(const size_t *)y]);
}

void pgc_sort(const struct pgc_pod *pods, size_t *idx, size_t n)
{
	if (n > 1)
		qsort_r(idx, n, sizeof(*idx), idx_cmp, (void *)pods);
}

int pgc_select_terminated(const struct pgc_pod *pods, size_t n, int64_t threshold, size_t **ret,
                          size_t *ret_n)
{
	size_t *idx, k = 0;

	*ret = NULL;
	*ret_n = 0;
	if (threshold <= 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		k += pgc_pod_terminated(&pods[i]);
	if ((int64_t)k <= threshold)
		return 0;
	idx = malloc(k * sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	k = 0;
	for (size_t i = 0; i < n; i++)
		if (pgc_pod_terminated(&pods[i]))
			idx[k++] = i;
	pgc_sort(pods, idx, k);
	*ret = idx;
	*ret_n = k - (size_t)threshold;
	return 0;
}

/* ---- JSON reads -------------------------------------------------------------------------------
 */

static const char *jstr(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

int pgc_node_facts_from_json(const char *json, size_t len, struct pgc_node_facts *ret)
{
	cJSON *root = cJSON_ParseWithLength(json, len);
	const cJSON *c, *t;

	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		return -EBADMSG;
	}
	*ret = (struct pgc_node_facts){0};
	/* nodeutil.IsNodeReady: the (first) Ready condition's status is True */
	cJSON_ArrayForEach(c,
	                   cJSON_GetObjectItemCaseSensitive(
	                           cJSON_GetObjectItemCaseSensitive(root, "status"), "conditions"))
	{
		const char *type = jstr(c, "type");
		if (type && !strcmp(type, "Ready")) {
			const char *st = jstr(c, "status");
			ret->ready = st && !strcmp(st, "True");
			break;
		}
	}
	/* taints.TaintKeyExists: the key alone decides, whatever the effect */
	cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(
	                              cJSON_GetObjectItemCaseSensitive(root, "spec"), "taints"))
	{
		const char *key = jstr(t, "key");
		if (key && !strcmp(key, PGC_OUT_OF_SERVICE))
			ret->out_of_service = true;
	}
	cJSON_Delete(root);
	return 0;
}

int pgc_cond_state_from_json(const char *json, size_t len, const char *uid,
                             struct pgc_cond_state *ret)
{
	cJSON *root = cJSON_ParseWithLength(json, len);
	const cJSON *pod = root, *items, *c;

	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		return -EBADMSG;
	}
	*ret = (struct pgc_cond_state){0};
	items = cJSON_GetObjectItemCaseSensitive(root, "items");
	if (cJSON_IsArray(items)) {
		pod = NULL;
		cJSON_ArrayForEach(c, items)
		{
			const char *u =
			        jstr(cJSON_GetObjectItemCaseSensitive(c, "metadata"), "uid");
			if (u && uid && !strcmp(u, uid)) {
				pod = c;
				break;
			}
		}
		if (!pod) {
			cJSON_Delete(root);
			return -ENOENT;
		}
	}
	cJSON_ArrayForEach(
	        c, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pod, "status"),
	                                            "conditions"))
	{
		const char *type = jstr(c, "type"), *st, *ltt;
		if (!type || strcmp(type, PGC_COND_DISRUPTION) != 0)
			continue;
		/* GetPodCondition: the first of that type */
		ret->present = true;
		st = jstr(c, "status");
		snprintf(ret->status, sizeof(ret->status), "%s", st ? st : "");
		ltt = jstr(c, "lastTransitionTime");
		if (ltt && kube_time_parse(ltt, strlen(ltt), &ret->last_transition_time) < 0)
			ret->last_transition_time = 0;
		break;
	}
	cJSON_Delete(root);
	return 0;
}

/* ---- the status patch -------------------------------------------------------------------------
 */

int pgc_failed_patch_body(const char *uid, int64_t generation, bool with_condition,
                          const struct pgc_cond_state *cur, kube_time_t now, char **ret)
{
	cJSON *root = cJSON_CreateObject(), *meta, *status, *conds, *c;
	char ts[KUBE_TIME_BUF];
	int r = -ENOMEM;

	*ret = NULL;
	if (!root || !(meta = cJSON_AddObjectToObject(root, "metadata")) ||
	    !cJSON_AddStringToObject(meta, "uid", uid ? uid : "") ||
	    !(status = cJSON_AddObjectToObject(root, "status")))
		goto out;
	if (with_condition) {
		kube_time_t ltt = now;
		/* UpdatePodCondition: an existing condition with the same status keeps its time */
		if (cur && cur->present && !strcmp(cur->status, "True") &&
		    cur->last_transition_time)
			ltt = cur->last_transition_time;
		kube_time_format(ltt, ts);
		if (!(conds = cJSON_AddArrayToObject(status, "conditions")) ||
		    !(c = cJSON_CreateObject()))
			goto out;
		cJSON_AddItemToArray(conds, c);
		if (!cJSON_AddNullToObject(c, "lastProbeTime") ||
		    !cJSON_AddStringToObject(c, "lastTransitionTime", ts) ||
		    !cJSON_AddStringToObject(c, "message", PGC_ORPHAN_MESSAGE) ||
		    (generation && /* omitempty */
		     !cJSON_AddNumberToObject(c, "observedGeneration", (double)generation)) ||
		    !cJSON_AddStringToObject(c, "reason", PGC_ORPHAN_REASON) ||
		    !cJSON_AddStringToObject(c, "status", "True") ||
		    !cJSON_AddStringToObject(c, "type", PGC_COND_DISRUPTION))
			goto out;
	}
	if ((generation &&
	     !cJSON_AddNumberToObject(status, "observedGeneration", (double)generation)) ||
	    !cJSON_AddStringToObject(status, "phase", "Failed"))
		goto out;
	*ret = cJSON_PrintUnformatted(root);
	r = *ret ? 0 : -ENOMEM;
out:
	cJSON_Delete(root);
	return r;
}

/* ---- string set and quarantine ----------------------------------------------------------------
 */

struct pgc_set {
	char **slot;
	size_t cap, n;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

int pgc_set_new(struct pgc_set **ret)
{
	struct pgc_set *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	*ret = s;
	return 0;
}

void pgc_set_free(struct pgc_set *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->cap; i++)
		free(s->slot[i]);
	free(s->slot);
	free(s);
}

static size_t set_find(const struct pgc_set *s, const char *name, bool *found)
{
	size_t i = hash_str(name) & (s->cap - 1);

	for (;; i = (i + 1) & (s->cap - 1)) {
		if (!s->slot[i]) {
			*found = false;
			return i;
		}
		if (!strcmp(s->slot[i], name)) {
			*found = true;
			return i;
		}
	}
}

int pgc_set_add(struct pgc_set *s, const char *name)
{
	bool found;
	size_t i;

	if ((s->n + 1) * 2 > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct pgc_set t = {.slot = calloc(cap, sizeof(char *)), .cap = cap};
		if (!t.slot)
			return -ENOMEM;
		for (size_t k = 0; k < s->cap; k++)
			if (s->slot[k])
				t.slot[set_find(&t, s->slot[k], &found)] = s->slot[k];
		free(s->slot);
		s->slot = t.slot;
		s->cap = cap;
	}
	i = set_find(s, name, &found);
	if (found)
		return 1;
	if (!(s->slot[i] = strdup(name)))
		return -ENOMEM;
	s->n++;
	return 0;
}

bool pgc_set_has(const struct pgc_set *s, const char *name)
{
	bool found;

	if (!s || !s->cap || !name)
		return false;
	set_find(s, name, &found);
	return found;
}

struct qent {
	char *name;
	uint64_t ready_us;
};

struct pgc_quarantine {
	struct qent *e;
	size_t n, cap;
};

int pgc_quarantine_new(struct pgc_quarantine **ret)
{
	struct pgc_quarantine *q = calloc(1, sizeof(*q));

	if (!q)
		return -ENOMEM;
	*ret = q;
	return 0;
}

void pgc_quarantine_free(struct pgc_quarantine *q)
{
	if (!q)
		return;
	for (size_t i = 0; i < q->n; i++)
		free(q->e[i].name);
	free(q->e);
	free(q);
}

size_t pgc_quarantine_len(const struct pgc_quarantine *q)
{
	return q->n;
}

/* A linear scan: the entries are the distinct missing node names of one pass (few). */
int pgc_quarantine_add(struct pgc_quarantine *q, const char *node, uint64_t now_us)
{
	uint64_t at = now_us + PGC_QUARANTINE_US;

	for (size_t i = 0; i < q->n; i++)
		if (!strcmp(q->e[i].name, node)) {
			if (at < q->e[i].ready_us)
				q->e[i].ready_us = at;
			return 0;
		}
	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 16;
		struct qent *e = realloc(q->e, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		q->e = e;
		q->cap = cap;
	}
	if (!(q->e[q->n].name = strdup(node)))
		return -ENOMEM;
	q->e[q->n++].ready_us = at;
	return 0;
}

size_t pgc_quarantine_take_ready(struct pgc_quarantine *q, uint64_t now_us,
                                 void (*fn)(const char *node, void *ud), void *ud)
{
	size_t taken = 0;

	for (;;) {
		size_t best = q->n;
		for (size_t i = 0; i < q->n; i++)
			if (q->e[i].ready_us <= now_us &&
			    (best == q->n || q->e[i].ready_us < q->e[best].ready_us))
				best = i;
		if (best == q->n)
			return taken;
		char *name = q->e[best].name;
		q->e[best] = q->e[--q->n];
		fn(name, ud);
		free(name);
		taken++;
	}
}

/* ---- the collectors' selections ---------------------------------------------------------------
 */

int pgc_select_terminating(const struct pgc_pod *pods, size_t n, const struct pgc_set *cached,
                           const struct pgc_nodes_api *api, size_t **ret, size_t *ret_n)
{
	struct pgc_set *checked = NULL, *oos = NULL;
	size_t *idx = malloc((n ? n : 1) * sizeof(*idx)), k = 0;
	int r = -ENOMEM;

	*ret = NULL;
	*ret_n = 0;
	if (!idx || pgc_set_new(&checked) < 0 || pgc_set_new(&oos) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		const struct pgc_pod *p = &pods[i];
		struct pgc_node_facts f;
		if (!p->deletion_ts)
			continue;
		/* nodeLister.Get: a node the cache lacks is an error; the pod is skipped */
		if (!pgc_set_has(cached, p->node_name))
			continue;
		int a = pgc_set_add(checked, p->node_name);
		if (a < 0)
			goto out;
		if (a == 0 && api->get(api->ud, p->node_name, &f) == 0 &&
		    pgc_node_out_of_service(&f) && pgc_set_add(oos, p->node_name) < 0)
			goto out;
		if (pgc_set_has(oos, p->node_name))
			idx[k++] = i;
	}
	pgc_sort(pods, idx, k);
	*ret = idx;
	*ret_n = k;
	idx = NULL;
	r = 0;
out:
	free(idx);
	pgc_set_free(checked);
	pgc_set_free(oos);
	return r;
}

struct discover {
	const struct pgc_set *cached;
	const struct pgc_nodes_api *api;
	struct pgc_set *gone;
	int err;
};

static void discover_one(const char *node, void *ud)
{
	struct discover *d = ud;
	struct pgc_node_facts f;

	if (pgc_set_has(d->cached, node))
		return;
	if (d->api->get(d->api->ud, node, &f) == -ENOENT && pgc_set_add(d->gone, node) < 0)
		d->err = -ENOMEM;
}

int pgc_select_orphaned(struct pgc_quarantine *q, const struct pgc_pod *pods, size_t n,
                        const struct pgc_set *cached, uint64_t now_us,
                        const struct pgc_nodes_api *api, size_t **ret, size_t *ret_n)
{
	struct discover d = {.cached = cached, .api = api};
	struct pgc_set *seen = NULL;
	size_t *idx = NULL, k = 0;
	int r = -ENOMEM;

	*ret = NULL;
	*ret_n = 0;
	if (pgc_set_new(&seen) < 0 || pgc_set_new(&d.gone) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		const char *node = pods[i].node_name;
		int a;
		if (!node || !node[0] || pgc_set_has(cached, node))
			continue;
		if ((a = pgc_set_add(seen, node)) < 0)
			goto out;
		if (a == 0 && pgc_quarantine_add(q, node, now_us) < 0)
			goto out;
	}
	pgc_quarantine_take_ready(q, now_us, discover_one, &d);
	if (d.err < 0 || !(idx = malloc((n ? n : 1) * sizeof(*idx))))
		goto out;
	for (size_t i = 0; i < n; i++)
		if (pods[i].node_name && pgc_set_has(d.gone, pods[i].node_name))
			idx[k++] = i;
	*ret = idx;
	*ret_n = k;
	idx = NULL;
	r = 0;
out:
	free(idx);
	pgc_set_free(seen);
	pgc_set_free(d.gone);
	return r;
}

int pgc_select_unscheduled(const struct pgc_pod *pods, size_t n, size_t **ret, size_t *ret_n)
{
	size_t *idx = malloc((n ? n : 1) * sizeof(*idx)), k = 0;

	*ret = NULL;
	*ret_n = 0;
	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (pods[i].deletion_ts && (!pods[i].node_name || !pods[i].node_name[0]))
			idx[k++] = i;
	*ret = idx;
	*ret_n = k;
	return 0;
}
