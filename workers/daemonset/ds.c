/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/daemonset/ds.c: the DaemonSet controller's pure decisions (ds.h), over the JSON the
 * apiserver sends (the DaemonSet's template, a Node) and small pod views.
 *
 * Scheduling predicates are component-helpers' (scheduling/corev1): a node fits when the
 * template's nodeName is empty or the node's, its nodeSelector labels all match, one of its
 * required node-affinity terms matches (label requirements In/NotIn/Exists/DoesNotExist/Gt/Lt,
 * field requirement metadata.name In/NotIn with one value; empty terms and terms that do not
 * parse never match), and every NoSchedule/NoExecute taint is tolerated by the template's
 * tolerations plus the daemon ones (not-ready and unreachable NoExecute; disk-, memory-,
 * pid-pressure and unschedulable NoSchedule; network-unavailable NoSchedule for hostNetwork).
 * A node that fails only on taints still keeps (shouldContinueRunning) a pod that tolerates its
 * NoExecute taints. Label keys and values are not re-validated here (the apiserver validated
 * the template); what upstream would refuse to parse is treated as not matching, as upstream's
 * lazy selector drops such terms.
 */
#include "workers/daemonset/ds.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "kube/json.h"

static cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

static const char *str(const cJSON *o, const char *k)
{
	cJSON *v = get(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool eq(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

/* ---- tolerations ---------------------------------------------------------------------------- */
struct tol {
	const char *key, *op, *effect;
};
static const struct tol daemon_tols[] = {
        {"node.kubernetes.io/not-ready", "Exists", "NoExecute"},
        {"node.kubernetes.io/unreachable", "Exists", "NoExecute"},
        {"node.kubernetes.io/disk-pressure", "Exists", "NoSchedule"},
        {"node.kubernetes.io/memory-pressure", "Exists", "NoSchedule"},
        {"node.kubernetes.io/pid-pressure", "Exists", "NoSchedule"},
        {"node.kubernetes.io/unschedulable", "Exists", "NoSchedule"},
        {"node.kubernetes.io/network-unavailable", "Exists", "NoSchedule"}, /* hostNetwork */
};
#define N_DAEMON_TOLS (sizeof(daemon_tols) / sizeof(daemon_tols[0]))

static size_t n_daemon_tols(const cJSON *spec)
{
	return cJSON_IsTrue(get(spec, "hostNetwork")) ? N_DAEMON_TOLS : N_DAEMON_TOLS - 1;
}

/* v1 Toleration.ToleratesTaint (the comparison operators' gate is off by default) */
static bool tolerates(const char *key, const char *op, const char *value, const char *effect,
                      const cJSON *taint)
{
	if (effect && *effect && !eq(effect, str(taint, "effect")))
		return false;
	if (key && *key && !eq(key, str(taint, "key")))
		return false;
	if (!op || !*op || !strcmp(op, "Equal"))
		return eq(value, str(taint, "value"));
	return !strcmp(op, "Exists");
}

bool ds_tolerates(const cJSON *tspec, const cJSON *taint)
{
	const cJSON *t;

	cJSON_ArrayForEach(t, get(tspec, "tolerations"))
	{
		if (tolerates(str(t, "key"), str(t, "operator"), str(t, "value"), str(t, "effect"),
		              taint))
			return true;
	}
	for (size_t i = 0; i < n_daemon_tols(tspec); i++)
		if (tolerates(daemon_tols[i].key, daemon_tols[i].op, NULL, daemon_tols[i].effect,
		              taint))
			return true;
	return false;
}

/* FindMatchingUntoleratedTaint with a filter on effects */
static bool untolerated(const cJSON *tspec, const cJSON *node, bool no_schedule_too)
{
	const cJSON *t;

	cJSON_ArrayForEach(t, get(get(node, "spec"), "taints"))
	{
		const char *e = str(t, "effect");
		if (!eq(e, "NoExecute") && !(no_schedule_too && eq(e, "NoSchedule")))
			continue;
		if (!ds_tolerates(tspec, t))
			return true;
	}
	return false;
}

/* ---- node affinity -------------------------------------------------------------------------- */
static bool parse_i64(const char *s, int64_t *ret)
{
	char *end;
	if (!s || !*s)
		return false;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || *end)
		return false;
	*ret = v;
	return true;
}

/* one label requirement: 1 match, 0 no match, -1 does not parse */
static int label_req(const cJSON *r, const cJSON *labels)
{
	const char *key = str(r, "key"), *op = str(r, "operator");
	const cJSON *vals = get(r, "values"), *v;
	int n = cJSON_IsArray(vals) ? cJSON_GetArraySize(vals) : 0;
	const char *have = str(labels, key ? key : "");
	bool in = false;

	if (!key || !*key || !op)
		return -1;
	cJSON_ArrayForEach(v, vals)
	{
		if (!cJSON_IsString(v))
			return -1;
		in |= have && !strcmp(have, v->valuestring);
	}
	if (!strcmp(op, "In") || !strcmp(op, "NotIn")) {
		if (n == 0)
			return -1;
		return !strcmp(op, "In") ? in : !in;
	}
	if (!strcmp(op, "Exists") || !strcmp(op, "DoesNotExist")) {
		if (n != 0)
			return -1;
		return !strcmp(op, "Exists") ? have != NULL : have == NULL;
	}
	if (!strcmp(op, "Gt") || !strcmp(op, "Lt")) {
		int64_t want, got;
		if (n != 1 || !parse_i64(cJSON_GetArrayItem(vals, 0)->valuestring, &want))
			return -1;
		if (!have || !parse_i64(have, &got))
			return 0;
		return !strcmp(op, "Gt") ? got > want : got < want;
	}
	return -1;
}

static int field_req(const cJSON *r, const char *node_name)
{
	const char *key = str(r, "key"), *op = str(r, "operator");
	const cJSON *vals = get(r, "values");

	if (!eq(key, "metadata.name") || !op || !cJSON_IsArray(vals) ||
	    cJSON_GetArraySize(vals) != 1 || !cJSON_IsString(vals->child))
		return -1;
	if (!strcmp(op, "In"))
		return eq(vals->child->valuestring, node_name);
	if (!strcmp(op, "NotIn"))
		return !eq(vals->child->valuestring, node_name);
	return -1;
}

/* a term: 1 match, 0 no match (also empty or unparsable) */
static bool term_matches(const cJSON *term, const cJSON *labels, const char *node_name)
{
	const cJSON *exprs = get(term, "matchExpressions"), *fields = get(term, "matchFields"), *r;
	bool ok = true;

	if (cJSON_GetArraySize(exprs) == 0 && cJSON_GetArraySize(fields) == 0)
		return false;
	/* every requirement must parse (else the term is dropped) */
	cJSON_ArrayForEach(r, exprs)
	{
		int m = label_req(r, labels);
		if (m < 0)
			return false;
		ok &= m == 1;
	}
	cJSON_ArrayForEach(r, fields)
	{
		int m = field_req(r, node_name);
		if (m < 0)
			return false;
		ok &= m == 1;
	}
	return ok;
}

bool ds_node_affinity_matches(const cJSON *spec, const cJSON *node)
{
	const cJSON *md = get(node, "metadata");
	const cJSON *labels = get(md, "labels"), *sel = get(spec, "nodeSelector"), *it;
	const char *name = str(md, "name");

	cJSON_ArrayForEach(it, sel)
	{
		const char *have = str(labels, it->string);
		if (!cJSON_IsString(it) || !have || strcmp(have, it->valuestring) != 0)
			return false;
	}
	const cJSON *req = get(get(get(spec, "affinity"), "nodeAffinity"),
	                       "requiredDuringSchedulingIgnoredDuringExecution");
	if (!cJSON_IsObject(req))
		return true;
	cJSON_ArrayForEach(it, get(req, "nodeSelectorTerms"))
	{
		if (term_matches(it, labels, name))
			return true;
	}
	return false;
}

void ds_node_should_run(const cJSON *tspec, const cJSON *node, bool *run, bool *cont)
{
	const char *want = str(tspec, "nodeName");
	const char *name = str(get(node, "metadata"), "name");

	*run = *cont = false;
	if (want && *want && !eq(want, name))
		return;
	/* NewPod sets spec.nodeName to the node: fitsNodeName holds */
	if (!ds_node_affinity_matches(tspec, node))
		return;
	if (untolerated(tspec, node, true)) {
		*cont = !untolerated(tspec, node, false);
		return;
	}
	*run = *cont = true;
}

/* ---- node updates --------------------------------------------------------------------------- */
struct node_spans {
	const char *spec, *labels;
	size_t spec_n, labels_n;
};

/* the raw text of spec and metadata.labels in a Node's JSON (a scan, no tree); 0 or -errno */
static int node_spans(const char *json, size_t len, struct node_spans *ret)
{
	struct js j;
	const char *k;
	size_t kn;
	int r;

	memset(ret, 0, sizeof(*ret));
	js_init(&j, json, len, NULL);
	if (js_obj_begin(&j) != 1)
		return -EBADMSG;
	while ((r = js_obj_next(&j, &k, &kn)) == 1) {
		if (JS_KEY(k, kn, "spec")) {
			r = js_raw(&j, &ret->spec, &ret->spec_n);
		} else if (JS_KEY(k, kn, "metadata")) {
			if ((r = js_obj_begin(&j)) == 1)
				while ((r = js_obj_next(&j, &k, &kn)) == 1)
					if ((r = JS_KEY(k, kn, "labels")
					                 ? js_raw(&j, &ret->labels, &ret->labels_n)
					                 : js_skip(&j)) < 0)
						break;
		} else {
			r = js_skip(&j);
		}
		if (r < 0)
			return r;
	}
	return r < 0 ? r : 0;
}

static bool span_eq(const char *a, size_t an, const char *b, size_t bn)
{
	return an == bn && (an == 0 || memcmp(a, b, an) == 0);
}

bool ds_node_update_same(const char *a, size_t a_len, const char *b, size_t b_len)
{
	struct node_spans x, y;

	if (!a || !b || node_spans(a, a_len, &x) < 0 || node_spans(b, b_len, &y) < 0)
		return false;
	return span_eq(x.spec, x.spec_n, y.spec, y.spec_n) &&
	       span_eq(x.labels, x.labels_n, y.labels, y.labels_n);
}

/* ---- the pod body --------------------------------------------------------------------------- */
static cJSON *tol_json(const struct tol *t)
{
	cJSON *o = cJSON_CreateObject();
	if (!o || !cJSON_AddStringToObject(o, "key", t->key) ||
	    !cJSON_AddStringToObject(o, "operator", t->op) ||
	    !cJSON_AddStringToObject(o, "effect", t->effect)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* v1helper.AddOrUpdateTolerationInPodSpec for one toleration */
static int add_or_update_tol(cJSON *spec, const struct tol *t)
{
	cJSON *tols = get(spec, "tolerations"), *it, *nl = cJSON_CreateArray();
	bool updated = false;

	if (!nl)
		return -ENOMEM;
	cJSON_ArrayForEach(it, tols)
	{
		bool match = eq(str(it, "key"), t->key) && eq(str(it, "operator"), t->op) &&
		             eq(str(it, "value"), NULL) && eq(str(it, "effect"), t->effect);
		if (match && !get(it, "tolerationSeconds")) {
			cJSON_Delete(nl); /* semantically equal: nothing changes */
			return 0;
		}
		cJSON *c = match ? tol_json(t) : cJSON_Duplicate(it, 1);
		if (!c || !cJSON_AddItemToArray(nl, c)) {
			cJSON_Delete(c);
			cJSON_Delete(nl);
			return -ENOMEM;
		}
		updated |= match;
	}
	if (!updated) {
		cJSON *c = tol_json(t);
		if (!c || !cJSON_AddItemToArray(nl, c)) {
			cJSON_Delete(c);
			cJSON_Delete(nl);
			return -ENOMEM;
		}
	}
	cJSON_DeleteItemFromObjectCaseSensitive(spec, "tolerations");
	return cJSON_AddItemToObject(spec, "tolerations", nl) ? 0 : -ENOMEM;
}

int ds_add_daemon_tolerations(cJSON *spec)
{
	int r;

	for (size_t i = 0; i < n_daemon_tols(spec); i++)
		if ((r = add_or_update_tol(spec, &daemon_tols[i])) < 0)
			return r;
	return 0;
}

static cJSON *ensure_obj(cJSON *o, const char *k)
{
	cJSON *v = get(o, k);
	if (cJSON_IsObject(v))
		return v;
	cJSON_DeleteItemFromObjectCaseSensitive(o, k);
	return cJSON_AddObjectToObject(o, k);
}

int ds_replace_node_affinity(cJSON *spec, const char *node)
{
	cJSON *aff = ensure_obj(spec, "affinity");
	cJSON *na = aff ? ensure_obj(aff, "nodeAffinity") : NULL;
	cJSON *req = na ? ensure_obj(na, "requiredDuringSchedulingIgnoredDuringExecution") : NULL;
	cJSON *terms = cJSON_CreateArray(), *term = cJSON_CreateObject();
	cJSON *fields = cJSON_AddArrayToObject(term, "matchFields"), *r = cJSON_CreateObject();
	cJSON *vals = cJSON_AddArrayToObject(r, "values");

	if (!req || !terms || !term || !fields || !r || !vals ||
	    !cJSON_AddStringToObject(r, "key", "metadata.name") ||
	    !cJSON_AddStringToObject(r, "operator", "In") ||
	    !cJSON_AddItemToArray(vals, cJSON_CreateString(node)) ||
	    !cJSON_AddItemToArray(fields, r)) {
		cJSON_Delete(terms);
		cJSON_Delete(term);
		cJSON_Delete(r);
		return -ENOMEM;
	}
	cJSON_AddItemToArray(terms, term);
	cJSON_DeleteItemFromObjectCaseSensitive(req, "nodeSelectorTerms");
	cJSON_AddItemToObject(req, "nodeSelectorTerms", terms);
	return 0;
}

const char *ds_target_node(const cJSON *spec)
{
	const char *nn = str(spec, "nodeName");
	const cJSON *t, *f;

	if (nn && *nn)
		return nn;
	const cJSON *req = get(get(get(spec, "affinity"), "nodeAffinity"),
	                       "requiredDuringSchedulingIgnoredDuringExecution");
	cJSON_ArrayForEach(t, get(req, "nodeSelectorTerms"))
	{
		cJSON_ArrayForEach(f, get(t, "matchFields"))
		{
			if (!eq(str(f, "key"), "metadata.name") || !eq(str(f, "operator"), "In"))
				continue;
			const cJSON *v = get(f, "values");
			if (cJSON_GetArraySize(v) != 1 || !cJSON_IsString(v->child))
				return NULL; /* not unique */
			return v->child->valuestring;
		}
	}
	return NULL;
}

static int set_label(cJSON *labels, const char *k, const char *v)
{
	cJSON_DeleteItemFromObjectCaseSensitive(labels, k);
	return cJSON_AddStringToObject(labels, k, v) ? 0 : -ENOMEM;
}

int ds_pod_body(const cJSON *tmpl, const char *ds_name, const char *ds_uid, const char *gen,
                const char *hash, const char *node, char **ret)
{
	const cJSON *tm = get(tmpl, "metadata"), *x;
	cJSON *pod = cJSON_CreateObject(), *md, *labels, *spec, *owners, *ref;
	char prefix[300];
	int r = -ENOMEM;

	*ret = NULL;
	if (!pod)
		return -ENOMEM;
	if (!cJSON_AddStringToObject(pod, "apiVersion", "v1") ||
	    !cJSON_AddStringToObject(pod, "kind", "Pod") ||
	    !(md = cJSON_AddObjectToObject(pod, "metadata")))
		goto out;
	x = get(tm, "labels");
	labels = cJSON_IsObject(x) ? cJSON_Duplicate(x, 1) : cJSON_CreateObject();
	if (!labels || !cJSON_AddItemToObject(md, "labels", labels))
		goto out;
	if (gen && set_label(labels, DS_GEN_LABEL, gen) < 0)
		goto out;
	if (hash && *hash && set_label(labels, DS_HASH_LABEL, hash) < 0)
		goto out;
	if (!labels->child) {
		r = -EINVAL; /* "unable to create pods, no labels" */
		goto out;
	}
	if (cJSON_IsObject(x = get(tm, "annotations")) && x->child &&
	    !cJSON_AddItemToObject(md, "annotations", cJSON_Duplicate(x, 1)))
		goto out;
	snprintf(prefix, sizeof(prefix), "%s-", ds_name);
	if (!cJSON_AddStringToObject(md, "generateName", prefix))
		goto out;
	if (cJSON_IsArray(x = get(tm, "finalizers")) && x->child &&
	    !cJSON_AddItemToObject(md, "finalizers", cJSON_Duplicate(x, 1)))
		goto out;
	if (!(owners = cJSON_AddArrayToObject(md, "ownerReferences")) ||
	    !(ref = cJSON_CreateObject()) || !cJSON_AddItemToArray(owners, ref) ||
	    !cJSON_AddStringToObject(ref, "apiVersion", "apps/v1") ||
	    !cJSON_AddStringToObject(ref, "kind", "DaemonSet") ||
	    !cJSON_AddStringToObject(ref, "name", ds_name) ||
	    !cJSON_AddStringToObject(ref, "uid", ds_uid) ||
	    !cJSON_AddBoolToObject(ref, "controller", 1) ||
	    !cJSON_AddBoolToObject(ref, "blockOwnerDeletion", 1))
		goto out;
	x = get(tmpl, "spec");
	spec = cJSON_IsObject(x) ? cJSON_Duplicate(x, 1) : cJSON_CreateObject();
	if (!spec || !cJSON_AddItemToObject(pod, "spec", spec))
		goto out;
	if ((r = ds_add_daemon_tolerations(spec)) < 0 ||
	    (r = ds_replace_node_affinity(spec, node)) < 0)
		goto out;
	*ret = cJSON_PrintUnformatted(pod);
	r = *ret ? 0 : -ENOMEM;
out:
	cJSON_Delete(pod);
	return r;
}

/* the node's name in the split body: "..."values":["<marker>"]..." */
#define BODY_MARKER "kcmd-daemonset-node-name-marker"

int ds_pod_body_split(const cJSON *tmpl, const char *ds_name, const char *ds_uid, const char *gen,
                      const char *hash, struct ds_pod_body_split *ret)
{
	static const char quoted[] = "\"" BODY_MARKER "\"";
	char *body = NULL, *at;
	int r;

	memset(ret, 0, sizeof(*ret));
	if ((r = ds_pod_body(tmpl, ds_name, ds_uid, gen, hash, BODY_MARKER, &body)) < 0)
		return r;
	at = strstr(body, quoted);
	if (!at || strstr(at + 1, quoted)) { /* the template holds the marker too */
		free(body);
		return -EEXIST;
	}
	size_t off = (size_t)(at - body) + 1, len = strlen(body);
	size_t toff = off + sizeof(BODY_MARKER) - 1;
	ret->head = strndup(body, off);
	ret->tail = strdup(body + toff);
	free(body);
	if (!ret->head || !ret->tail) {
		ds_pod_body_split_free(ret);
		return -ENOMEM;
	}
	ret->head_len = off;
	ret->tail_len = len - toff;
	return 0;
}

int ds_pod_body_splice(const struct ds_pod_body_split *b, const char *node, char **ret)
{
	size_t n = strlen(node);

	*ret = NULL;
	for (size_t i = 0; i < n; i++) /* what cJSON would escape */
		if ((unsigned char)node[i] < 0x20 || node[i] == '"' || node[i] == '\\')
			return -EINVAL;
	char *out = malloc(b->head_len + n + b->tail_len + 1);
	if (!out)
		return -ENOMEM;
	memcpy(out, b->head, b->head_len);
	memcpy(out + b->head_len, node, n);
	memcpy(out + b->head_len + n, b->tail, b->tail_len + 1);
	*ret = out;
	return 0;
}

void ds_pod_body_split_free(struct ds_pod_body_split *b)
{
	free(b->head);
	free(b->tail);
	memset(b, 0, sizeof(*b));
}

/* ---- pods ----------------------------------------------------------------------------------- */
int ds_pod_cmp(const struct ds_pod *a, const struct ds_pod *b)
{
	if (a->scheduled != b->scheduled)
		return a->scheduled ? -1 : 1;
	if (a->created != b->created)
		return a->created < b->created ? -1 : 1;
	return strcmp(a->name ? a->name : "", b->name ? b->name : "");
}

bool ds_pod_available(const struct ds_pod *p, int32_t min_ready, kube_time_t now)
{
	if (!p->ready)
		return false;
	if (min_ready <= 0)
		return true;
	return p->ready_since != 0 && p->ready_since + (kube_time_t)min_ready * 1000000000 < now;
}

bool ds_pod_updated(const struct ds_pod *p, const char *hash, const char *gen)
{
	bool gen_matches = gen && eq(p->gen, gen);
	bool hash_matches = hash && *hash && eq(p->hash, hash);
	return hash_matches || gen_matches;
}

static int pod_ptr_cmp(const void *a, const void *b)
{
	return ds_pod_cmp(*(struct ds_pod *const *)a, *(struct ds_pod *const *)b);
}

void ds_pods_on_node(bool run, bool cont, struct ds_pod **pods, size_t n, bool surge,
                     const char *hash, int32_t min_ready, kube_time_t now, size_t *del,
                     size_t *failed, size_t *succeeded, struct ds_node_plan *ret)
{
	*ret = (struct ds_node_plan){0};
	if (n > 1)
		qsort(pods, n, sizeof(*pods), pod_ptr_cmp);
	if (run && n == 0) {
		ret->create = true;
		return;
	}
	if (cont) {
		size_t running[n ? n : 1], n_run = 0;
		for (size_t i = 0; i < n; i++) {
			if (pods[i]->deleting)
				continue;
			if (pods[i]->phase == KUBE_POD_FAILED) {
				failed[ret->n_failed++] = i;
			} else if (pods[i]->phase == KUBE_POD_SUCCEEDED) {
				succeeded[ret->n_succeeded++] = i;
				del[ret->n_del++] = i;
			} else {
				running[n_run++] = i;
			}
		}
		if (!surge) {
			for (size_t i = 1; i < n_run; i++)
				del[ret->n_del++] = running[i];
			return;
		}
		if (n_run <= 1) {
			if (n_run == 0 && run)
				ret->create = true;
			return;
		}
		/* surge: keep the oldest pod of the current hash and the oldest older one */
		ssize_t new_ix = -1, old_ix = -1;
		for (size_t i = 0; i < n_run; i++) {
			struct ds_pod *p = pods[running[i]];
			if (eq(p->hash, hash)) {
				if (new_ix < 0) {
					new_ix = (ssize_t)running[i];
					continue;
				}
			} else if (old_ix < 0) {
				old_ix = (ssize_t)running[i];
				continue;
			}
			del[ret->n_del++] = running[i];
		}
		if (new_ix >= 0 && old_ix >= 0 &&
		    (!pods[old_ix]->ready || ds_pod_available(pods[new_ix], min_ready, now)))
			del[ret->n_del++] = (size_t)old_ix;
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (!pods[i]->deleting)
			del[ret->n_del++] = i;
}

void ds_status_add(struct ds_status *st, bool run, struct ds_pod *const *pods, size_t n,
                   const char *hash, const char *gen, int32_t min_ready, kube_time_t now)
{
	if (!run) {
		if (n > 0)
			st->misscheduled++;
		return;
	}
	st->desired++;
	if (n == 0)
		return;
	st->current++;
	const struct ds_pod *p = pods[0];
	if (p->ready) {
		st->ready++;
		if (ds_pod_available(p, min_ready, now))
			st->available++;
	}
	if (ds_pod_updated(p, hash, gen))
		st->updated++;
}

int ds_scaled(const cJSON *v, int total, int *ret)
{
	*ret = 0;
	if (!v || cJSON_IsNull(v))
		return 0;
	if (cJSON_IsNumber(v)) {
		*ret = (int)v->valuedouble;
		return 0;
	}
	if (!cJSON_IsString(v))
		return -EINVAL;
	const char *s = v->valuestring;
	size_t len = strlen(s);
	char *end;
	if (len < 2 || s[len - 1] != '%')
		return -EINVAL;
	errno = 0;
	long pct = strtol(s, &end, 10);
	if (errno || end != s + len - 1)
		return -EINVAL;
	*ret = (int)ceil((double)pct * total / 100.0);
	return 0;
}

/* findUpdatedPodsOnNode: at most one new and one old live pod, else false */
static bool updated_on_node(const struct ds_ru_node *nd, const char *hash, const char *gen,
                            const struct ds_pod **newp, const struct ds_pod **oldp)
{
	*newp = *oldp = NULL;
	for (size_t i = 0; i < nd->n; i++) {
		const struct ds_pod *p = nd->pods[i];
		if (p->deleting)
			continue;
		const struct ds_pod **slot = ds_pod_updated(p, hash, gen) ? newp : oldp;
		if (*slot) {
			*newp = *oldp = NULL;
			return false;
		}
		*slot = p;
	}
	return true;
}

void ds_rolling_update(const struct ds_ru_node *nodes, size_t n_nodes, int max_surge,
                       int max_unavailable, int desired, const char *hash, const char *gen,
                       int32_t min_ready, kube_time_t now, const char **del, size_t *n_del,
                       const char **create, size_t *n_create)
{
	const struct ds_pod *np, *op;

	*n_del = *n_create = 0;
	if (max_surge == 0) {
		int unavailable = 0;
		size_t n_allowed = 0, n_cand = 0;
		const char **cand = create; /* scratch: no creations without surge */
		for (size_t i = 0; i < n_nodes; i++) {
			if (!updated_on_node(&nodes[i], hash, gen, &np, &op)) {
				unavailable++; /* the manage loop prunes the excess */
				continue;
			}
			if ((!op && !np) || (op && np)) {
				unavailable++;
			} else if (np) {
				if (!ds_pod_available(np, min_ready, now))
					unavailable++;
			} else if (!ds_pod_available(op, min_ready, now)) {
				del[n_allowed++] = op->name; /* replace it: it is not available */
				unavailable++;
			} else if (unavailable < max_unavailable) {
				cand[n_cand++] = op->name;
			}
		}
		int remaining = max_unavailable - unavailable;
		if (remaining < 0)
			remaining = 0;
		if ((size_t)remaining > n_cand)
			remaining = (int)n_cand;
		for (int i = 0; i < remaining; i++)
			del[n_allowed++] = cand[i];
		*n_del = n_allowed;
		return;
	}

	int surge = 0, available = 0;
	size_t n_old = 0, n_allowed = 0, n_cand = 0, n_notrun = 0;
	/* candidate nodes, and old pods on nodes that should no longer run (one per node each) */
	const char **cand = malloc((n_nodes + 1) * sizeof(*cand));
	const char **notrun = malloc((n_nodes + 1) * sizeof(*notrun));
	if (!cand || !notrun) {
		free(cand);
		free(notrun);
		return;
	}
	for (size_t i = 0; i < n_nodes; i++) {
		const struct ds_ru_node *nd = &nodes[i];
		if (!updated_on_node(nd, hash, gen, &np, &op)) {
			surge++;
			continue;
		}
		if (op ? ds_pod_available(op, min_ready, now)
		       : np && ds_pod_available(np, min_ready, now))
			available++;
		if (!op)
			continue; /* the manage loop handles the node */
		if (!np) {
			if (!ds_pod_available(op, min_ready, now)) {
				if (!nd->run)
					del[n_old++] = op->name;
				else
					create[n_allowed++] = nd->name;
			} else if (!nd->run) {
				notrun[n_notrun++] = op->name;
			} else if (surge < max_surge) {
				cand[n_cand++] = nd->name;
			}
			continue;
		}
		if (!ds_pod_available(np, min_ready, now)) {
			surge++;
			continue;
		}
		del[n_old++] = op->name; /* the new pod is available: the old one goes */
	}
	int remaining = max_surge - surge;
	int deletable = available - desired;
	if (deletable > 0) {
		if ((size_t)deletable > n_notrun)
			deletable = (int)n_notrun;
		for (int i = 0; i < deletable; i++)
			del[n_old++] = notrun[i];
	}
	if (remaining < 0)
		remaining = 0;
	if ((size_t)remaining > n_cand)
		remaining = (int)n_cand;
	for (int i = 0; i < remaining; i++)
		create[n_allowed++] = cand[i];
	*n_del = n_old;
	*n_create = n_allowed;
	free(cand);
	free(notrun);
}
