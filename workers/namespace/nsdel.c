/* SPDX-License-Identifier: Apache-2.0 */
/* workers/namespace/nsdel.c: the namespace deleter's pure parts (nsdel.h). */
#include "workers/namespace/nsdel.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/model.h"

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = get(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ---- discovery ------------------------------------------------------------------------------ */
void ns_discovery_clear(struct ns_discovery *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].group);
		free(d->v[i].version);
		free(d->v[i].resource);
	}
	for (size_t i = 0; i < d->n_failed; i++)
		free(d->failed[i]);
	free(d->v);
	free(d->failed);
	*d = (struct ns_discovery){0};
}

int ns_discovery_fail(struct ns_discovery *d, const char *gv, const char *err)
{
	char **f = realloc(d->failed, (d->n_failed + 1) * sizeof(*f));
	if (!f)
		return -ENOMEM;
	d->failed = f;
	if (asprintf(&f[d->n_failed], "%s: %s", gv, err) < 0)
		return -ENOMEM;
	d->n_failed++;
	return 0;
}

static bool has_verb(const cJSON *verbs, const char *verb)
{
	const cJSON *v;
	cJSON_ArrayForEach(v, verbs) if (cJSON_IsString(v) &&
	                                 strcmp(v->valuestring, verb) == 0) return true;
	return false;
}

static struct ns_gvr *find(struct ns_discovery *d, const char *group, const char *resource)
{
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->v[i].group, group) && !strcmp(d->v[i].resource, resource))
			return &d->v[i];
	return NULL;
}

/* one resource of version `version` of group `group` (preferred: the group's first version) */
static int add_resource(struct ns_discovery *d, const char *group, const char *version,
                        bool preferred, const cJSON *r)
{
	const char *name = str(r, "resource"), *scope = str(r, "scope");
	const cJSON *verbs = get(r, "verbs");
	struct ns_gvr *g;

	if (!name || strchr(name, '/') || !scope || strcmp(scope, "Namespaced") != 0)
		return 0;
	/* SupportsAllVerbs{delete} */
	if (!has_verb(verbs, "delete"))
		return 0;
	if ((g = find(d, group, name))) {
		if (!preferred)
			return 0; /* only the preferred version overrides */
		char *v = strdup(version);
		if (!v)
			return -ENOMEM;
		free(g->version);
		g->version = v;
	} else {
		if (d->n == d->cap) {
			size_t cap = d->cap ? 2 * d->cap : 64;
			struct ns_gvr *nv = realloc(d->v, cap * sizeof(*nv));
			if (!nv)
				return -ENOMEM;
			d->v = nv;
			d->cap = cap;
		}
		g = &d->v[d->n];
		*g = (struct ns_gvr){.group = strdup(group),
		                     .version = strdup(version),
		                     .resource = strdup(name)};
		if (!g->group || !g->version || !g->resource) {
			free(g->group);
			free(g->version);
			free(g->resource);
			return -ENOMEM;
		}
		d->n++;
	}
	g->deletecollection = has_verb(verbs, "deletecollection");
	g->list = has_verb(verbs, "list");
	return 0;
}

int ns_discovery_add_v2(struct ns_discovery *d, const char *json, size_t len)
{
	cJSON *root = cJSON_ParseWithLength(json, len);
	const cJSON *items, *it;
	int r = 0;

	if (!root || !cJSON_IsArray(items = get(root, "items"))) {
		cJSON_Delete(root);
		return -EBADMSG;
	}
	cJSON_ArrayForEach(it, items)
	{
		const char *group = str(get(it, "metadata"), "name");
		const cJSON *versions = get(it, "versions"), *v;
		bool first = true;
		if (!group)
			group = "";
		cJSON_ArrayForEach(v, versions)
		{
			const char *version = str(v, "version"), *fresh = str(v, "freshness");
			const cJSON *res = get(v, "resources"), *rr;
			bool preferred = first;
			first = false;
			if (!version)
				continue;
			if (fresh && strcmp(fresh, "Stale") == 0) {
				/* client-go's StaleGroupVersionError for the group-version */
				char gv[300], msg[340];
				snprintf(gv, sizeof(gv), "%s%s%s", group, *group ? "/" : "",
				         version);
				snprintf(msg, sizeof(msg), "stale GroupVersion discovery: %s", gv);
				if ((r = ns_discovery_fail(d, gv, msg)) < 0)
					goto out;
				continue;
			}
			cJSON_ArrayForEach(
			        rr, res) if ((r = add_resource(d, group, version, preferred, rr)) <
			                     0) goto out;
		}
	}
out:
	cJSON_Delete(root);
	return r;
}

int ns_discovery_error(const struct ns_discovery *d, char **ret)
{
	char **s;
	size_t len = 64;
	char *out;

	*ret = NULL;
	if (!d->n_failed)
		return 0;
	if (!(s = malloc(d->n_failed * sizeof(*s))))
		return -ENOMEM;
	memcpy(s, d->failed, d->n_failed * sizeof(*s));
	qsort(s, d->n_failed, sizeof(*s), cmp_str);
	for (size_t i = 0; i < d->n_failed; i++)
		len += strlen(s[i]) + 2;
	if (!(out = malloc(len))) {
		free(s);
		return -ENOMEM;
	}
	strcpy(out, "unable to retrieve the complete list of server APIs: ");
	for (size_t i = 0; i < d->n_failed; i++) {
		if (i)
			strcat(out, ", ");
		strcat(out, s[i]);
	}
	free(s);
	*ret = out;
	return 0;
}

/* ---- estimate and leftovers ------------------------------------------------------------------ */
int ns_pods_estimate(const char *podlist, size_t len, int64_t deleted_at_s, int64_t now_s,
                     int64_t *ret)
{
	cJSON *root = cJSON_ParseWithLength(podlist, len);
	const cJSON *items, *p;
	int64_t est = 0;

	/* an empty list's items may be null or absent (a nil slice) */
	items = get(root, "items");
	if (!cJSON_IsObject(root) || (items && !cJSON_IsArray(items) && !cJSON_IsNull(items))) {
		cJSON_Delete(root);
		return -EBADMSG;
	}
	cJSON_ArrayForEach(p, items)
	{
		const char *phase = str(get(p, "status"), "phase");
		const cJSON *g = get(get(p, "spec"), "terminationGracePeriodSeconds");
		if (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")))
			continue;
		if (cJSON_IsNumber(g) && (int64_t)g->valuedouble > est)
			est = (int64_t)g->valuedouble;
	}
	cJSON_Delete(root);
	/* estimateGracefulTermination: nothing left to wait once the deletion is that old */
	if (now_s - deleted_at_s >= est)
		est = 0;
	*ret = est;
	return 0;
}

int ns_counts_add(struct ns_counts *c, const char *name, int64_t n)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].name, name)) {
			c->v[i].n += n;
			return 0;
		}
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 8;
		struct ns_count *v = realloc(c->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		c->v = v;
		c->cap = cap;
	}
	if (!(c->v[c->n].name = strdup(name)))
		return -ENOMEM;
	c->v[c->n++].n = n;
	return 0;
}

void ns_counts_clear(struct ns_counts *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].name);
	free(c->v);
	*c = (struct ns_counts){0};
}

int ns_list_remaining(const char *list, size_t len, int64_t *ret_items, struct ns_counts *fin)
{
	cJSON *root = cJSON_ParseWithLength(list, len);
	const cJSON *items, *it;
	int64_t n = 0;
	int r = 0;

	items = get(root, "items");
	if (!cJSON_IsObject(root) || (items && !cJSON_IsArray(items) && !cJSON_IsNull(items))) {
		cJSON_Delete(root);
		return -EBADMSG;
	}
	cJSON_ArrayForEach(it, items)
	{
		const cJSON *f;
		n++;
		cJSON_ArrayForEach(f, get(get(it, "metadata"),
		                          "finalizers")) if (cJSON_IsString(f) &&
		                                             (r = ns_counts_add(fin, f->valuestring,
		                                                                1)) < 0) goto out;
	}
out:
	cJSON_Delete(root);
	*ret_items = n;
	return r;
}

/* ---- conditions --------------------------------------------------------------------------- */
static const struct {
	const char *type, *ok_reason, *ok_message;
} cond_info[NS_N_COND] = {
        {"NamespaceDeletionDiscoveryFailure", "ResourcesDiscovered",
         "All resources successfully discovered"},
        {"NamespaceDeletionGroupVersionParsingFailure", "ParsedGroupVersions",
         "All legacy kube types successfully parsed"},
        {"NamespaceDeletionContentFailure", "ContentDeleted",
         "All content successfully deleted, may be waiting on finalization"},
        {"NamespaceContentRemaining", "ContentRemoved", "All content successfully removed"},
        {"NamespaceFinalizersRemaining", "ContentHasNoFinalizers",
         "All content-preserving finalizers finished"},
};

const char *ns_cond_type_name(enum ns_cond_type t)
{
	return t < NS_N_COND ? cond_info[t].type : NULL;
}

void ns_conditions_clear(struct ns_conditions *u)
{
	for (int i = 0; i < NS_N_COND; i++) {
		free(u->reason[i]);
		free(u->message[i]);
	}
	for (size_t i = 0; i < u->n_content_errs; i++)
		free(u->content_errs[i]);
	free(u->content_errs);
	*u = (struct ns_conditions){0};
}

/* a failure condition of type t; the first one of a type wins (getCondition finds it first) */
static int set_cond(struct ns_conditions *u, enum ns_cond_type t, const char *reason, char *msg)
{
	if (!msg)
		return -ENOMEM;
	if (u->set[t]) {
		free(msg);
		return 0;
	}
	if (!(u->reason[t] = strdup(reason))) {
		free(msg);
		return -ENOMEM;
	}
	u->message[t] = msg;
	u->set[t] = true;
	return 0;
}

int ns_conditions_discovery(struct ns_conditions *u, const char *err, size_t groups_failed)
{
	char *m = NULL;
	if (groups_failed) {
		if (asprintf(&m, "Discovery failed for some groups, %zu failing: %s", groups_failed,
		             err) < 0)
			m = NULL;
	} else
		m = strdup(err);
	return set_cond(u, NS_COND_DISCOVERY, "DiscoveryFailed", m);
}

int ns_conditions_content_err(struct ns_conditions *u, const char *err)
{
	char **v = realloc(u->content_errs, (u->n_content_errs + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	u->content_errs = v;
	if (!(v[u->n_content_errs] = strdup(err)))
		return -ENOMEM;
	u->n_content_errs++;
	return 0;
}

/* "prefix" + sorted items joined with ", " (items built with fmt from each count) */
static char *joined(const char *prefix, const struct ns_counts *c, bool finalizers)
{
	char **s = calloc(c->n ? c->n : 1, sizeof(*s));
	size_t n = 0, len = strlen(prefix) + 1;
	char *out = NULL;

	if (!s)
		return NULL;
	for (size_t i = 0; i < c->n; i++) {
		if (c->v[i].n == 0)
			continue;
		int k = finalizers ? asprintf(&s[n], "%s in %lld resource instances", c->v[i].name,
		                              (long long)c->v[i].n)
		                   : asprintf(&s[n], "%s has %lld resource instances", c->v[i].name,
		                              (long long)c->v[i].n);
		if (k < 0)
			goto out;
		len += (size_t)k + 2;
		n++;
	}
	qsort(s, n, sizeof(*s), cmp_str);
	if (!(out = malloc(len)))
		goto out;
	strcpy(out, prefix);
	for (size_t i = 0; i < n; i++) {
		if (i)
			strcat(out, ", ");
		strcat(out, s[i]);
	}
out:
	for (size_t i = 0; i < n; i++)
		free(s[i]);
	free(s);
	return out;
}

int ns_conditions_totals(struct ns_conditions *u, const struct ns_counts *gvrs,
                         const struct ns_counts *finalizers)
{
	int r = 0;
	if (gvrs->n)
		r = set_cond(u, NS_COND_REMAINING, "SomeResourcesRemain",
		             joined("Some resources are remaining: ", gvrs, false));
	if (r == 0 && finalizers->n)
		r = set_cond(u, NS_COND_FINALIZERS, "SomeFinalizersRemain",
		             joined("Some content in the namespace has finalizers remaining: ",
		                    finalizers, true));
	return r;
}

static int content_condition(struct ns_conditions *u)
{
	size_t len = 128;
	char *m;

	if (u->set[NS_COND_CONTENT] || !u->n_content_errs)
		return 0;
	qsort(u->content_errs, u->n_content_errs, sizeof(char *), cmp_str);
	for (size_t i = 0; i < u->n_content_errs; i++)
		len += strlen(u->content_errs[i]) + 2;
	if (!(m = malloc(len)))
		return -ENOMEM;
	snprintf(m, len, "Failed to delete all resource types, %zu remaining: ", u->n_content_errs);
	for (size_t i = 0; i < u->n_content_errs; i++) {
		if (i)
			strcat(m, ", ");
		strcat(m, u->content_errs[i]);
	}
	return set_cond(u, NS_COND_CONTENT, "ContentDeletionFailed", m);
}

static cJSON *ensure_obj(cJSON *o, const char *k)
{
	cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	if (cJSON_IsObject(v))
		return v;
	cJSON_DeleteItemFromObjectCaseSensitive(o, k);
	return cJSON_AddObjectToObject(o, k);
}

static cJSON *ensure_arr(cJSON *o, const char *k)
{
	cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	if (cJSON_IsArray(v))
		return v;
	cJSON_DeleteItemFromObjectCaseSensitive(o, k);
	return cJSON_AddArrayToObject(o, k);
}

static int set_str(cJSON *o, const char *k, const char *v)
{
	cJSON_DeleteItemFromObjectCaseSensitive(o, k);
	return cJSON_AddStringToObject(o, k, v) ? 0 : -ENOMEM;
}

int ns_conditions_apply(struct ns_conditions *u, cJSON *ns, const char *now)
{
	cJSON *status, *conds;
	int changed = 0, r;

	if ((r = content_condition(u)) < 0)
		return r;
	if (!(status = ensure_obj(ns, "status")) || !(conds = ensure_arr(status, "conditions")))
		return -ENOMEM;
	for (int t = 0; t < NS_N_COND; t++) {
		const char *want_status = u->set[t] ? "True" : "False";
		const char *reason = u->set[t] ? u->reason[t] : cond_info[t].ok_reason;
		const char *msg = u->set[t] ? u->message[t] : cond_info[t].ok_message;
		cJSON *old = NULL, *c;
		cJSON_ArrayForEach(c, conds)
		{
			const char *ty = str(c, "type");
			if (ty && !strcmp(ty, cond_info[t].type)) {
				old = c;
				break;
			}
		}
		if (!old) {
			if (!(c = cJSON_CreateObject()) ||
			    !cJSON_AddStringToObject(c, "type", cond_info[t].type) ||
			    !cJSON_AddStringToObject(c, "status", want_status) ||
			    !cJSON_AddStringToObject(c, "lastTransitionTime", now) ||
			    !cJSON_AddStringToObject(c, "reason", reason) ||
			    !cJSON_AddStringToObject(c, "message", msg)) {
				cJSON_Delete(c);
				return -ENOMEM;
			}
			cJSON_AddItemToArray(conds, c);
			changed = 1;
			continue;
		}
		const char *os = str(old, "status"), *orr = str(old, "reason"),
		           *om = str(old, "message");
		bool same_status = os && !strcmp(os, want_status);
		if (same_status && orr && !strcmp(orr, reason) && om && !strcmp(om, msg))
			continue;
		if (!same_status && (r = set_str(old, "lastTransitionTime", now)) < 0)
			return r;
		if ((r = set_str(old, "status", want_status)) < 0 ||
		    (r = set_str(old, "reason", reason)) < 0 ||
		    (r = set_str(old, "message", msg)) < 0)
			return r;
		changed = 1;
	}
	return changed;
}

/* ---- the namespace ------------------------------------------------------------------------- */
int64_t ns_deletion_time(const cJSON *ns)
{
	const char *ts = str(get(ns, "metadata"), "deletionTimestamp");
	kube_time_t t;

	if (!ts || !*ts)
		return 0;
	if (kube_time_parse(ts, strlen(ts), &t) < 0)
		return 1; /* set, unreadable: deleting, as old as can be */
	return (int64_t)(t / 1000000000ll);
}

int ns_mark_terminating(cJSON *ns)
{
	cJSON *st;
	const char *ph;

	if (!ns_deletion_time(ns))
		return 0;
	ph = str(get(ns, "status"), "phase");
	if (ph && !strcmp(ph, "Terminating"))
		return 0;
	if (!(st = ensure_obj(ns, "status")))
		return -ENOMEM;
	return set_str(st, "phase", "Terminating") < 0 ? -ENOMEM : 1;
}

bool ns_finalized(const cJSON *ns)
{
	const cJSON *f = get(get(ns, "spec"), "finalizers");
	return !cJSON_IsArray(f) || cJSON_GetArraySize(f) == 0;
}

int ns_finalize(cJSON *ns)
{
	cJSON *spec = ensure_obj(ns, "spec"), *f, *out, *x;
	const char **keep;
	size_t n = 0;

	if (!spec)
		return -ENOMEM;
	f = cJSON_GetObjectItemCaseSensitive(spec, "finalizers");
	keep = calloc((size_t)(cJSON_IsArray(f) ? cJSON_GetArraySize(f) : 0) + 1, sizeof(*keep));
	if (!keep)
		return -ENOMEM;
	cJSON_ArrayForEach(x, f)
	{
		if (!cJSON_IsString(x) || !strcmp(x->valuestring, NS_FINALIZER))
			continue;
		bool dup = false;
		for (size_t i = 0; i < n && !dup; i++)
			dup = !strcmp(keep[i], x->valuestring);
		if (!dup)
			keep[n++] = x->valuestring;
	}
	qsort(keep, n, sizeof(*keep), cmp_str);
	if (!(out = cJSON_CreateArray())) {
		free(keep);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(out, cJSON_CreateString(keep[i]));
	free(keep);
	cJSON_DeleteItemFromObjectCaseSensitive(spec, "finalizers");
	cJSON_AddItemToObject(spec, "finalizers", out);
	return 0;
}

uint64_t ns_requeue_us(int64_t estimate)
{
	return (uint64_t)(estimate / 2 + 1) * 1000000ull;
}

void ns_rfc3339(int64_t t, char *buf, size_t len)
{
	struct tm tm;
	time_t tt = (time_t)t;
	gmtime_r(&tt, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
