/* SPDX-License-Identifier: Apache-2.0 */
/* workers/disruption/pdb.c - the disruption controller's decisions (pdb.h). */
#include "workers/disruption/pdb.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/selector.h"

static cJSON *member(const cJSON *o, const char *k)
{
	return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

static const char *str_of(const cJSON *o, const char *k)
{
	const cJSON *v = member(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int64_t int_of(const cJSON *o, const char *k)
{
	const cJSON *v = member(o, k);
	return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : 0;
}

static char *fmt_alloc(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *fmt_alloc(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

/* ---- finders ------------------------------------------------------------------------------ */
/* ParseGroupVersion: the group of api_version into buf. -EINVAL: more than one '/'. */
static int group_of(const char *gv, char *buf, size_t n)
{
	const char *slash;

	buf[0] = 0;
	if (!gv || !*gv || strcmp(gv, "/") == 0)
		return 0;
	slash = strchr(gv, '/');
	if (!slash)
		return 0;
	if (strchr(slash + 1, '/'))
		return -EINVAL;
	snprintf(buf, n, "%.*s", (int)(slash - gv), gv);
	return 0;
}

int pdb_verify_group_kind(const struct kube_owner_ref *ref, const char *kind,
                          const char *const *groups)
{
	char g[256];

	if (group_of(ref->api_version, g, sizeof(g)) < 0)
		return -EINVAL;
	if (!ref->kind || strcmp(ref->kind, kind) != 0)
		return 0;
	for (size_t i = 0; groups[i]; i++)
		if (strcmp(groups[i], g) == 0)
			return 1;
	return 0;
}

static const char *const grp_core[] = {"", NULL};
static const char *const grp_apps[] = {"apps", NULL};
static const char *const grp_apps_ext[] = {"apps", "extensions", NULL};

static int verify(const struct kube_owner_ref *ref, const char *kind, const char *const *groups,
                  char **err)
{
	int r = pdb_verify_group_kind(ref, kind, groups);
	if (r == -EINVAL)
		*err = fmt_alloc("unexpected GroupVersion string: %s", ref->api_version);
	return r;
}

static bool same_uid(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

static int find_rc(const struct pdb_lookup *lk, const struct kube_owner_ref *ref, const char *ns,
                   struct pdb_scale *ret, char **err)
{
	int r = verify(ref, "ReplicationController", grp_core, err);
	if (r <= 0)
		return r;
	if (!lk->get_rc || lk->get_rc(lk->ud, ns, ref->name, ret->uid, &ret->scale) != 1)
		return 0; /* upstream: the only lister error is NotFound */
	return same_uid(ret->uid, ref->uid) ? 1 : 0;
}

static int find_rs(const struct pdb_lookup *lk, const struct kube_owner_ref *ref, const char *ns,
                   struct pdb_rs_info *rs, char **err)
{
	int r = verify(ref, "ReplicaSet", grp_apps_ext, err);
	if (r <= 0)
		return r;
	memset(rs, 0, sizeof(*rs));
	if (!lk->get_rs || lk->get_rs(lk->ud, ns, ref->name, rs) != 1)
		return 0;
	return same_uid(rs->uid, ref->uid) ? 1 : 0;
}

static int find_deployment(const struct pdb_lookup *lk, const struct kube_owner_ref *ref,
                           const char *ns, struct pdb_scale *ret, char **err)
{
	struct pdb_rs_info rs;
	int r = find_rs(lk, ref, ns, &rs, err);
	if (r <= 0 || !rs.has_controller)
		return r < 0 ? r : 0;
	struct kube_owner_ref dref = {.api_version = rs.ctl_api_version,
	                              .kind = rs.ctl_kind,
	                              .name = rs.ctl_name,
	                              .uid = rs.ctl_uid};
	if ((r = verify(&dref, "Deployment", grp_apps_ext, err)) <= 0)
		return r;
	if (!lk->get_deployment ||
	    lk->get_deployment(lk->ud, ns, rs.ctl_name, ret->uid, &ret->scale) != 1)
		return 0;
	return same_uid(ret->uid, rs.ctl_uid) ? 1 : 0;
}

static int find_replicaset(const struct pdb_lookup *lk, const struct kube_owner_ref *ref,
                           const char *ns, struct pdb_scale *ret, char **err)
{
	struct pdb_rs_info rs;
	int r = find_rs(lk, ref, ns, &rs, err);
	if (r <= 0)
		return r;
	if (rs.has_controller && strcmp(rs.ctl_kind, "Deployment") == 0)
		return 0; /* the Deployment's finder counts it */
	snprintf(ret->uid, sizeof(ret->uid), "%s", rs.uid);
	ret->scale = rs.replicas;
	return 1;
}

static int find_statefulset(const struct pdb_lookup *lk, const struct kube_owner_ref *ref,
                            const char *ns, struct pdb_scale *ret, char **err)
{
	int r = verify(ref, "StatefulSet", grp_apps, err);
	if (r <= 0)
		return r;
	if (!lk->get_statefulset ||
	    lk->get_statefulset(lk->ud, ns, ref->name, ret->uid, &ret->scale) != 1)
		return 0;
	return same_uid(ret->uid, ref->uid) ? 1 : 0;
}

int pdb_find_controller(const struct pdb_lookup *lk, const struct kube_owner_ref *ref,
                        const char *ns, struct pdb_scale *ret, char **err)
{
	int r;

	*err = NULL;
	memset(ret, 0, sizeof(*ret));
	if ((r = find_rc(lk, ref, ns, ret, err)) != 0)
		return r;
	if ((r = find_deployment(lk, ref, ns, ret, err)) != 0)
		return r;
	if ((r = find_replicaset(lk, ref, ns, ret, err)) != 0)
		return r;
	if ((r = find_statefulset(lk, ref, ns, ret, err)) != 0)
		return r;
	if (!lk->get_scale)
		return 0;
	memset(ret, 0, sizeof(*ret));
	return lk->get_scale(lk->ud, ref, ns, ret, err);
}

/* ---- int or percent ----------------------------------------------------------------------- */
/* strconv.Atoi: 0, -EINVAL (syntax) or -ERANGE */
static int go_atoi(const char *s, size_t n, long long *ret)
{
	size_t i = 0;
	bool neg = false;
	unsigned long long v = 0;

	if (n && (s[0] == '+' || s[0] == '-')) {
		neg = s[0] == '-';
		i = 1;
	}
	if (i == n)
		return -EINVAL;
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long long)(s[i] - '0');
		if (v > (unsigned long long)LLONG_MAX + 1)
			return -ERANGE;
	}
	if (!neg && v > (unsigned long long)LLONG_MAX)
		return -ERANGE;
	*ret = neg ? (long long)(0 - v) : (long long)v;
	return 0;
}

int pdb_scaled_value(const cJSON *v, int total, bool round_up, int *ret, char **err)
{
	*err = NULL;
	if (!v || cJSON_IsNull(v)) {
		*err = fmt_alloc("nil value for IntOrString");
		return -EINVAL;
	}
	if (cJSON_IsNumber(v)) {
		*ret = (int)v->valuedouble;
		return 0;
	}
	if (!cJSON_IsString(v)) {
		*err = fmt_alloc("invalid value for IntOrString: invalid type: neither int nor "
		                 "percentage");
		return -EINVAL;
	}
	const char *s = v->valuestring;
	size_t n = strlen(s);
	long long x;
	if (n == 0 || s[n - 1] != '%') {
		*err = fmt_alloc("invalid value for IntOrString: invalid type: string is not a "
		                 "percentage");
		return -EINVAL;
	}
	int r = go_atoi(s, n - 1, &x);
	if (r < 0) {
		*err = fmt_alloc(
		        "invalid value for IntOrString: invalid value \"%s\": strconv.Atoi: "
		        "parsing \"%.*s\": %s",
		        s, (int)(n - 1), s, r == -ERANGE ? "value out of range" : "invalid syntax");
		return -EINVAL;
	}
	double f = (double)x * (double)total / 100;
	*ret = (int)(round_up ? ceil(f) : floor(f));
	return 0;
}

/* ---- selectors ------------------------------------------------------------------------------ */
int pdb_selector(const cJSON *pdb, struct kube_selector **ret, char **err)
{
	char e[512] = "";
	int r = kube_selector_from_json(member(member(pdb, "spec"), "selector"), ret, e, sizeof(e));

	*err = r == -EINVAL ? strdup(e) : NULL;
	return r;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* appends to *s (realloc'd); false on allocation failure */
static bool cat(char **s, size_t *len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool cat(char **s, size_t *len, const char *fmt, ...)
{
	va_list ap;
	char *add = NULL;
	int n;

	if (!*s)
		return false;
	va_start(ap, fmt);
	n = vasprintf(&add, fmt, ap);
	va_end(ap);
	if (n < 0)
		return false;
	char *ns = realloc(*s, *len + (size_t)n + 1);
	if (!ns) {
		free(add);
		free(*s);
		*s = NULL;
		return false;
	}
	memcpy(ns + *len, add, (size_t)n + 1);
	*len += (size_t)n;
	*s = ns;
	free(add);
	return true;
}

char *pdb_selector_string(const cJSON *sel)
{
	char *s = strdup("");
	size_t len = 0;
	const cJSON *it;

	if (!cJSON_IsObject(sel)) {
		free(s);
		return strdup("nil");
	}
	const cJSON *ml = member(sel, "matchLabels"), *me = member(sel, "matchExpressions");
	size_t n = (size_t)cJSON_GetArraySize(cJSON_IsObject(ml) ? ml : NULL), i = 0;
	const char **keys = calloc(n + 1, sizeof(*keys));
	if (!keys) {
		free(s);
		return NULL;
	}
	if (n)
		cJSON_ArrayForEach(it, ml) keys[i++] = it->string;
	qsort(keys, n, sizeof(*keys), cmp_str);
	cat(&s, &len, "&LabelSelector{MatchLabels:map[string]string{");
	for (i = 0; i < n; i++)
		cat(&s, &len, "%s: %s,", keys[i], str_of(ml, keys[i]) ? str_of(ml, keys[i]) : "");
	free(keys);
	cat(&s, &len, "},MatchExpressions:[]LabelSelectorRequirement{");
	if (cJSON_IsArray(me))
		cJSON_ArrayForEach(it, me)
		{
			const cJSON *x;
			bool first = true;
			cat(&s, &len, "LabelSelectorRequirement{Key:%s,Operator:%s,Values:[",
			    str_of(it, "key") ? str_of(it, "key") : "",
			    str_of(it, "operator") ? str_of(it, "operator") : "");
			cJSON_ArrayForEach(x, member(it, "values"))
			{
				cat(&s, &len, "%s%s", first ? "" : " ",
				    cJSON_IsString(x) ? x->valuestring : "");
				first = false;
			}
			cat(&s, &len, "],},");
		}
	cat(&s, &len, "},}");
	return s;
}

/* ---- trySync -------------------------------------------------------------------------------- */
void pdb_result_free(struct pdb_result *r)
{
	cJSON_Delete(r->disrupted);
	for (size_t i = 0; i < r->n_events; i++) {
		free(r->events[i].message);
		free(r->events[i].pod);
	}
	free(r->err);
	memset(r, 0, sizeof(*r));
}

static void add_event(struct pdb_result *r, const char *type, const char *reason, char *msg,
                      const char *pod)
{
	if (r->n_events >= sizeof(r->events) / sizeof(r->events[0]) || !msg) {
		free(msg); /* the table is full: later Events are dropped, as a full broadcaster */
		return;
	}
	struct pdb_event *e = &r->events[r->n_events++];
	e->type = type;
	e->reason = reason;
	e->message = msg;
	e->on_pod = pod != NULL;
	e->pod = pod ? strdup(pod) : NULL;
}

struct ctl_seen {
	char uid[128];
	int32_t scale;
};

/* getExpectedScale: 0, or -errno with *err; *n_unmanaged pods without a controller */
static int expected_scale(const cJSON *pdb, const struct pdb_pod *pods, size_t n_pods,
                          const struct pdb_lookup *lk, int32_t *ret, size_t *n_unmanaged,
                          char **err)
{
	const char *ns = str_of(member(pdb, "metadata"), "namespace");
	struct ctl_seen *seen = calloc(n_pods + 1, sizeof(*seen));
	size_t n_seen = 0;
	int r = 0;

	*n_unmanaged = 0;
	*ret = 0;
	if (!seen)
		return -ENOMEM;
	for (size_t i = 0; i < n_pods; i++) {
		const struct pdb_pod *p = &pods[i];
		bool known = false;
		struct pdb_scale sc;

		if (!p->has_controller) {
			(*n_unmanaged)++;
			continue;
		}
		for (size_t k = 0; k < n_seen && !known; k++)
			known = same_uid(seen[k].uid, p->controller.uid);
		if (known)
			continue;
		r = pdb_find_controller(lk, &p->controller, ns ? ns : "", &sc, err);
		if (r < 0)
			goto out;
		if (r == 0) {
			*err = fmt_alloc("found no controllers for pod \"%s\"", p->name);
			r = -ENOENT;
			goto out;
		}
		/* keyed by the found controller's uid, as upstream's map */
		known = false;
		for (size_t k = 0; k < n_seen && !known; k++)
			if (same_uid(seen[k].uid, sc.uid)) {
				seen[k].scale = sc.scale;
				known = true;
			}
		if (!known) {
			snprintf(seen[n_seen].uid, sizeof(seen[n_seen].uid), "%s", sc.uid);
			seen[n_seen++].scale = sc.scale;
		}
		r = 0;
	}
	for (size_t k = 0; k < n_seen; k++)
		*ret += seen[k].scale;
out:
	free(seen);
	return r;
}

/* getExpectedPodCount */
static int expected_count(const cJSON *pdb, const struct pdb_pod *pods, size_t n_pods,
                          const struct pdb_lookup *lk, int32_t *expected, int32_t *desired,
                          size_t *n_unmanaged, char **err)
{
	const cJSON *spec = member(pdb, "spec");
	const cJSON *mu = member(spec, "maxUnavailable"), *ma = member(spec, "minAvailable");
	int v, r;

	*expected = *desired = 0;
	*n_unmanaged = 0;
	if (mu && !cJSON_IsNull(mu)) {
		if ((r = expected_scale(pdb, pods, n_pods, lk, expected, n_unmanaged, err)) < 0)
			return r;
		if ((r = pdb_scaled_value(mu, *expected, true, &v, err)) < 0)
			return r;
		*desired = *expected - (int32_t)v;
		if (*desired < 0)
			*desired = 0;
	} else if (ma && !cJSON_IsNull(ma)) {
		if (cJSON_IsNumber(ma)) {
			*desired = (int32_t)ma->valuedouble;
			*expected = (int32_t)n_pods;
		} else if (cJSON_IsString(ma)) {
			if ((r = expected_scale(pdb, pods, n_pods, lk, expected, n_unmanaged,
			                        err)) < 0)
				return r;
			if ((r = pdb_scaled_value(ma, *expected, true, &v, err)) < 0)
				return r;
			*desired = (int32_t)v;
		}
	}
	return 0;
}

int pdb_try_sync(const cJSON *pdb, const char *selector_err, const struct pdb_pod *pods,
                 size_t n_pods, const struct pdb_lookup *lk, kube_time_t now, struct pdb_result *r)
{
	const cJSON *meta = member(pdb, "metadata");
	const char *ns = str_of(meta, "namespace") ? str_of(meta, "namespace") : "";
	size_t n_unmanaged = 0;
	char *err = NULL;
	int rc;

	memset(r, 0, sizeof(*r));
	if (selector_err) {
		add_event(r, "Warning", "NoPods", fmt_alloc("Failed to get pods: %s", selector_err),
		          NULL);
		r->err = strdup(selector_err);
		return r->err ? 0 : -ENOMEM;
	}
	if (n_pods == 0)
		add_event(r, "Normal", "NoPods", strdup("No matching pods found"), NULL);
	rc = expected_count(pdb, pods, n_pods, lk, &r->expected_pods, &r->desired_healthy,
	                    &n_unmanaged, &err);
	if (rc < 0) {
		if (rc == -ENOMEM && !err)
			return -ENOMEM;
		const char *m = err ? err : strerror(-rc);
		add_event(r, "Warning", "CalculateExpectedPodCountFailed",
		          fmt_alloc("Failed to calculate the number of expected pods: %s", m),
		          NULL);
		r->err = strdup(m);
		free(err);
		return r->err ? 0 : -ENOMEM;
	}
	if (n_unmanaged > 0) {
		char *sel = pdb_selector_string(member(member(pdb, "spec"), "selector"));
		add_event(r, "Warning", "UnmanagedPods",
		          fmt_alloc("Pods selected by this PodDisruptionBudget (selector: %s) were "
		                    "found to be unmanaged. As a result, the status of the PDB "
		                    "cannot be calculated correctly, which may result in undefined "
		                    "behavior. To account for these pods please set "
		                    "\".spec.minAvailable\" field of the PDB to an integer value.",
		                    sel ? sel : ""),
		          NULL);
		free(sel);
	}
	/* buildDisruptedPodMap */
	const cJSON *old = member(member(pdb, "status"), "disruptedPods");
	if (!(r->disrupted = cJSON_CreateObject()))
		return -ENOMEM;
	for (size_t i = 0; cJSON_IsObject(old) && i < n_pods; i++) {
		const struct pdb_pod *p = &pods[i];
		const cJSON *t;
		kube_time_t at = 0;

		if (p->deleting || !(t = member(old, p->name)) || !cJSON_IsString(t))
			continue;
		kube_time_parse(t->valuestring, strlen(t->valuestring), &at);
		kube_time_t expected_deletion = at + PDB_DELETION_TIMEOUT_NS;
		if (expected_deletion < now) {
			add_event(
			        r, "Warning", "NotDeleted",
			        fmt_alloc(
			                "Pod was expected by PDB %s/%s to be deleted but it wasn't",
			                ns, ns),
			        p->name);
		} else {
			if (!r->has_recheck || expected_deletion < r->recheck_at) {
				r->has_recheck = true;
				r->recheck_at = expected_deletion;
			}
			if (!cJSON_AddStringToObject(r->disrupted, p->name, t->valuestring))
				return -ENOMEM;
		}
	}
	/* countHealthyPods */
	for (size_t i = 0; i < n_pods; i++) {
		const struct pdb_pod *p = &pods[i];
		const cJSON *t = member(r->disrupted, p->name);
		kube_time_t at = 0;

		if (p->deleting)
			continue;
		if (t && kube_time_parse(t->valuestring, strlen(t->valuestring), &at) == 0 &&
		    at + PDB_DELETION_TIMEOUT_NS > now)
			continue;
		if (p->ready)
			r->current_healthy++;
	}
	return 0;
}

/* ---- conditions and status ------------------------------------------------------------------ */
static bool set_str(cJSON *o, const char *k, const char *v)
{
	cJSON *n = cJSON_CreateString(v ? v : "");
	if (!n)
		return false;
	if (member(o, k))
		return cJSON_ReplaceItemInObjectCaseSensitive(o, k, n);
	return cJSON_AddItemToObject(o, k, n);
}

static bool set_num(cJSON *o, const char *k, double v)
{
	cJSON *n = cJSON_CreateNumber(v);
	if (!n)
		return false;
	if (member(o, k))
		return cJSON_ReplaceItemInObjectCaseSensitive(o, k, n);
	return cJSON_AddItemToObject(o, k, n);
}

int pdb_set_condition(cJSON *conds, const char *type, const char *status, const char *reason,
                      const char *message, int64_t observed_generation, kube_time_t now)
{
	cJSON *c, *found = NULL;
	char ts[KUBE_TIME_BUF];

	kube_time_format(now, ts);
	cJSON_ArrayForEach(c, conds)
	{
		const char *t = str_of(c, "type");
		if (t && !strcmp(t, type)) {
			found = c;
			break;
		}
	}
	if (!found) {
		if (!(found = cJSON_CreateObject()) || !cJSON_AddItemToArray(conds, found))
			return -ENOMEM;
		if (!set_str(found, "type", type) || !set_str(found, "status", status) ||
		    !set_str(found, "lastTransitionTime", ts))
			return -ENOMEM;
	} else if (!str_of(found, "status") || strcmp(str_of(found, "status"), status) != 0) {
		if (!set_str(found, "status", status) || !set_str(found, "lastTransitionTime", ts))
			return -ENOMEM;
	}
	if (!set_str(found, "reason", reason) || !set_str(found, "message", message))
		return -ENOMEM;
	if (observed_generation) {
		if (!set_num(found, "observedGeneration", (double)observed_generation))
			return -ENOMEM;
	} else {
		cJSON_DeleteItemFromObjectCaseSensitive(found, "observedGeneration");
	}
	return 0;
}

static const cJSON *find_condition(const cJSON *status, const char *type)
{
	const cJSON *c;
	cJSON_ArrayForEach(c, member(status, "conditions"))
	{
		const char *t = str_of(c, "type");
		if (t && !strcmp(t, type))
			return c;
	}
	return NULL;
}

/* pdbhelper.ConditionsAreUpToDate */
static bool conditions_up_to_date(const cJSON *pdb)
{
	const cJSON *st = member(pdb, "status");
	const cJSON *c = find_condition(st, PDB_CONDITION_TYPE);
	const char *s, *rs;

	if (!c)
		return false;
	if (int_of(st, "observedGeneration") != int_of(member(pdb, "metadata"), "generation"))
		return false;
	s = str_of(c, "status");
	rs = str_of(c, "reason");
	if (!s || !rs)
		return false;
	if (int_of(st, "disruptionsAllowed") > 0)
		return !strcmp(s, "True") && !strcmp(rs, PDB_REASON_SUFFICIENT);
	return !strcmp(s, "False") && !strcmp(rs, PDB_REASON_INSUFFICIENT);
}

/* Semantic.DeepEqual of two disruptedPods maps (nil == empty; times by instant) */
static bool disrupted_equal(const cJSON *a, const cJSON *b)
{
	const cJSON *it;
	int na = cJSON_IsObject(a) ? cJSON_GetArraySize(a) : 0;
	int nb = cJSON_IsObject(b) ? cJSON_GetArraySize(b) : 0;

	if (na != nb)
		return false;
	if (na == 0)
		return true;
	cJSON_ArrayForEach(it, a)
	{
		const cJSON *o = member(b, it->string);
		kube_time_t ta = 0, tb = 0;
		if (!cJSON_IsString(it) || !cJSON_IsString(o))
			return false;
		if (kube_time_parse(it->valuestring, strlen(it->valuestring), &ta) < 0 ||
		    kube_time_parse(o->valuestring, strlen(o->valuestring), &tb) < 0 || ta != tb)
			return false;
	}
	return true;
}

/* the status object without conditions; NULL on allocation failure */
static cJSON *status_object(int32_t cur, int32_t des, int32_t exp, int32_t allowed,
                            const cJSON *disrupted, int64_t observed)
{
	cJSON *st = cJSON_CreateObject();

	if (!st)
		return NULL;
	if (observed && !cJSON_AddNumberToObject(st, "observedGeneration", (double)observed))
		goto fail;
	if (cJSON_IsObject(disrupted) && cJSON_GetArraySize(disrupted) > 0) {
		cJSON *d = cJSON_Duplicate(disrupted, true);
		if (!d || !cJSON_AddItemToObject(st, "disruptedPods", d)) {
			cJSON_Delete(d);
			goto fail;
		}
	}
	if (!cJSON_AddNumberToObject(st, "disruptionsAllowed", allowed) ||
	    !cJSON_AddNumberToObject(st, "currentHealthy", cur) ||
	    !cJSON_AddNumberToObject(st, "desiredHealthy", des) ||
	    !cJSON_AddNumberToObject(st, "expectedPods", exp))
		goto fail;
	return st;
fail:
	cJSON_Delete(st);
	return NULL;
}

/* a copy of pdb with status st (taken) and the old conditions array (copied, [] when none) */
static cJSON *with_status(const cJSON *pdb, cJSON *st, cJSON **ret_conds)
{
	cJSON *n = cJSON_Duplicate(pdb, true);
	const cJSON *oc = member(member(pdb, "status"), "conditions");
	cJSON *conds = cJSON_IsArray(oc) ? cJSON_Duplicate(oc, true) : cJSON_CreateArray();

	if (!n || !st || !conds || !cJSON_AddItemToObject(st, "conditions", conds)) {
		cJSON_Delete(n);
		cJSON_Delete(st);
		cJSON_Delete(conds);
		return NULL;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(n, "status");
	if (!cJSON_AddItemToObject(n, "status", st)) {
		cJSON_Delete(n);
		cJSON_Delete(st);
		return NULL;
	}
	*ret_conds = conds;
	return n;
}

cJSON *pdb_status_update(const cJSON *pdb, const struct pdb_result *r, kube_time_t now,
                         int *ret_err)
{
	const cJSON *st = member(pdb, "status");
	int64_t gen = int_of(member(pdb, "metadata"), "generation");
	int32_t allowed = r->current_healthy - r->desired_healthy;
	cJSON *conds = NULL;

	*ret_err = 0;
	if (r->expected_pods <= 0 || allowed <= 0)
		allowed = 0;
	if (int_of(st, "currentHealthy") == r->current_healthy &&
	    int_of(st, "desiredHealthy") == r->desired_healthy &&
	    int_of(st, "expectedPods") == r->expected_pods &&
	    int_of(st, "disruptionsAllowed") == allowed &&
	    disrupted_equal(member(st, "disruptedPods"), r->disrupted) &&
	    int_of(st, "observedGeneration") == gen && conditions_up_to_date(pdb))
		return NULL;
	cJSON *n = with_status(pdb,
	                       status_object(r->current_healthy, r->desired_healthy,
	                                     r->expected_pods, allowed, r->disrupted, gen),
	                       &conds);
	if (!n || pdb_set_condition(conds, PDB_CONDITION_TYPE, allowed > 0 ? "True" : "False",
	                            allowed > 0 ? PDB_REASON_SUFFICIENT : PDB_REASON_INSUFFICIENT,
	                            "", gen, now) < 0) {
		cJSON_Delete(n);
		*ret_err = -ENOMEM;
		return NULL;
	}
	return n;
}

cJSON *pdb_fail_safe(const cJSON *pdb, const char *msg, kube_time_t now)
{
	const cJSON *st = member(pdb, "status");
	int64_t observed = int_of(st, "observedGeneration");
	cJSON *conds = NULL;
	cJSON *n = with_status(pdb,
	                       status_object((int32_t)int_of(st, "currentHealthy"),
	                                     (int32_t)int_of(st, "desiredHealthy"),
	                                     (int32_t)int_of(st, "expectedPods"), 0,
	                                     member(st, "disruptedPods"), observed),
	                       &conds);
	if (!n || pdb_set_condition(conds, PDB_CONDITION_TYPE, "False", PDB_REASON_SYNC_FAILED, msg,
	                            observed, now) < 0) {
		cJSON_Delete(n);
		return NULL;
	}
	return n;
}

/* ---- stale DisruptionTarget ------------------------------------------------------------------ */
bool pdb_stale_disruption(const struct kube_pod *p, kube_time_t now, int64_t *wait_ns)
{
	*wait_ns = 0;
	if (p->meta.deletion_timestamp)
		return false;
	if (p->disruption_target != KUBE_DT_TRUE || p->phase == KUBE_POD_SUCCEEDED ||
	    p->phase == KUBE_POD_FAILED)
		return false;
	int64_t w = PDB_STALE_DISRUPTION_NS - (now - p->disruption_target_time);
	*wait_ns = w < 0 ? 0 : w;
	return true;
}

char *pdb_stale_patch(const char *resource_version, int64_t generation, kube_time_t now)
{
	char ts[KUBE_TIME_BUF], gen[32] = "";

	kube_time_format(now, ts);
	if (generation)
		snprintf(gen, sizeof(gen), ",\"observedGeneration\":%lld", (long long)generation);
	return fmt_alloc(
	        "{\"metadata\":{\"resourceVersion\":\"%s\"},\"status\":{\"conditions\":"
	        "[{\"type\":\"DisruptionTarget\",\"status\":\"False\",\"reason\":null,"
	        "\"message\":null,\"lastProbeTime\":null,\"lastTransitionTime\":\"%s\"%s}]}}",
	        resource_version ? resource_version : "", ts, gen);
}
