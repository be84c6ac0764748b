/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/resourcequota/usage.c: the quota controller's pure decisions (usage.h).
 *
 * Design note.
 *   Each function is the upstream function of the same role, rule for rule, over the objects'
 *   JSON (cJSON) and the exact quantities of quantity.h:
 *   - lists: quota.Add / Mask / Equals, and component-helpers' addResourceList /
 *     maxResourceList (a quantity's Format travels with it exactly as in Go, since the printed
 *     usage depends on it: a sum started from a zero takes its first addend's format);
 *   - pods: PodUsageFunc with kcm v1.37's options (InPlacePodVerticalScaling and
 *     PodLevelResources on: requests and limits are max(spec, allocated, actuated) per
 *     container, init containers and sidecars by the KEP-753 rule, pod-level cpu/memory/hugepages
 *     override, overhead added), QuotaV1Pod, podComputeUsageHelper, the pod scopes;
 *   - services, persistentvolumeclaims (storage rounded up, allocatedResources when larger,
 *     per-StorageClass names, the VolumeAttributesClass scope) and object counts;
 *   - the sync: CalculateUsage (each evaluator over the resources of spec.hard it tracks,
 *     starting every tracked resource at a DecimalSI zero as CalculateUsageStats does), the old
 *     used kept for what nothing recomputed, masked to spec.hard, and the dirty test.
 *   The DRA node-allocatable claim terms of PodRequests are left out (their gate is off by
 *   default in v1.37), as is the resourceclaims evaluator (docs/resourcequota.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workers/resourcequota/usage.h"

/* ---- lists ----------------------------------------------------------------------------------- */
void rq_list_free(struct rq_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].text);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static struct rq_item *find(const struct rq_list *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].name, name))
			return &l->v[i];
	return NULL;
}

const struct rq_item *rq_list_get(const struct rq_list *l, const char *name)
{
	return find(l, name);
}

static int set_text(struct rq_list *l, const char *name, const struct rq_qty *q, const char *text)
{
	struct rq_item *it = find(l, name);
	char *t = NULL;

	if (text && !(t = strdup(text)))
		return -ENOMEM;
	if (!it) {
		if (l->n == l->cap) {
			size_t cap = l->cap ? l->cap * 2 : 8;
			struct rq_item *v = realloc(l->v, cap * sizeof(*v));
			if (!v) {
				free(t);
				return -ENOMEM;
			}
			l->v = v;
			l->cap = cap;
		}
		it = &l->v[l->n];
		if (!(it->name = strdup(name))) {
			free(t);
			return -ENOMEM;
		}
		it->text = NULL;
		l->n++;
	}
	free(it->text);
	it->text = t;
	it->q = *q;
	return 0;
}

int rq_list_set(struct rq_list *l, const char *name, const struct rq_qty *q)
{
	return set_text(l, name, q, NULL);
}

static int set_item(struct rq_list *l, const struct rq_item *it)
{
	return set_text(l, it->name, &it->q, it->text);
}

int rq_list_add(struct rq_list *a, const struct rq_list *b)
{
	int r;

	for (size_t i = 0; i < b->n; i++) {
		struct rq_item *it = find(a, b->v[i].name);
		if (!it) {
			if ((r = set_item(a, &b->v[i])) < 0)
				return r;
			continue;
		}
		if ((r = rq_qty_add(&it->q, &b->v[i].q)) < 0)
			return r;
		free(it->text); /* Add drops the cached string */
		it->text = NULL;
	}
	return 0;
}

/* maxResourceList: list[k] = newList[k] where absent or greater */
static int list_max(struct rq_list *l, const struct rq_list *b)
{
	int r;

	for (size_t i = 0; i < b->n; i++) {
		struct rq_item *it = find(l, b->v[i].name);
		if (!it || rq_qty_cmp(&b->v[i].q, &it->q) > 0)
			if ((r = set_item(l, &b->v[i])) < 0)
				return r;
	}
	return 0;
}

static int list_copy(struct rq_list *dst, const struct rq_list *src)
{
	rq_list_free(dst);
	return rq_list_add(dst, src);
}

int rq_list_from_json(const cJSON *obj, struct rq_list *ret)
{
	const cJSON *e;
	int r;

	memset(ret, 0, sizeof(*ret));
	if (!obj || cJSON_IsNull(obj))
		return 0;
	if (!cJSON_IsObject(obj))
		return -EINVAL;
	cJSON_ArrayForEach(e, obj)
	{
		struct rq_qty q;
		if (!cJSON_IsString(e) || !e->string) {
			r = -EINVAL;
			goto fail;
		}
		if ((r = rq_qty_parse(e->valuestring, &q)) < 0 ||
		    (r = set_text(ret, e->string, &q, e->valuestring)) < 0)
			goto fail;
	}
	return 0;
fail:
	rq_list_free(ret);
	return r;
}

bool rq_list_equal(const struct rq_list *a, const struct rq_list *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++) {
		const struct rq_item *o = find(b, a->v[i].name);
		if (!o || rq_qty_cmp(&o->q, &a->v[i].q) != 0)
			return false;
	}
	return true;
}

static int item_cmp(const void *x, const void *y)
{
	return strcmp(((const struct rq_item *)x)->name, ((const struct rq_item *)y)->name);
}

cJSON *rq_list_to_json(const struct rq_list *l)
{
	cJSON *o = cJSON_CreateObject();
	struct rq_item *v = l->n ? malloc(l->n * sizeof(*v)) : NULL;

	if (!o || (l->n && !v)) {
		cJSON_Delete(o);
		free(v);
		return NULL;
	}
	if (l->n)
		memcpy(v, l->v, l->n * sizeof(*v));
	if (l->n > 1) /* qsort's array may not be NULL, even for no element */
		qsort(v, l->n, sizeof(*v), item_cmp);
	for (size_t i = 0; i < l->n; i++) {
		char buf[RQ_QTY_STR_MAX];
		if (!v[i].text)
			rq_qty_format(&v[i].q, buf, sizeof(buf));
		if (!cJSON_AddStringToObject(o, v[i].name, v[i].text ? v[i].text : buf)) {
			cJSON_Delete(o);
			o = NULL;
			break;
		}
	}
	free(v);
	return o;
}

/* ---- JSON helpers ------------------------------------------------------------------------------
 */
static const cJSON *get(const cJSON *o, const char *k)
{
	const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
	return v && !cJSON_IsNull(v) ? v : NULL;
}

static const cJSON *path(const cJSON *o, const char *a, const char *b)
{
	return get(get(o, a), b);
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = get(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool has_prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

static bool has_suffix(const char *s, const char *p)
{
	size_t n = strlen(s), m = strlen(p);
	return n >= m && !strcmp(s + n - m, p);
}

/* ---- evaluators ----------------------------------------------------------------------------- */
const struct rq_evaluator rq_evaluators[] = {
        {RQ_EVAL_PODS, "", "v1", "pods", NULL, "count/pods"},
        {RQ_EVAL_SERVICES, "", "v1", "services", NULL, "count/services"},
        {RQ_EVAL_PVCS, "", "v1", "persistentvolumeclaims", NULL, "count/persistentvolumeclaims"},
        {RQ_EVAL_COUNT, "", "v1", "configmaps", "configmaps", "count/configmaps"},
        {RQ_EVAL_COUNT, "", "v1", "resourcequotas", "resourcequotas", "count/resourcequotas"},
        {RQ_EVAL_COUNT, "", "v1", "replicationcontrollers", "replicationcontrollers",
         "count/replicationcontrollers"},
        {RQ_EVAL_COUNT, "", "v1", "secrets", "secrets", "count/secrets"},
        {RQ_EVAL_COUNT, "apps", "v1", "deployments", NULL, "count/deployments.apps"},
        {RQ_EVAL_COUNT, "apps", "v1", "replicasets", NULL, "count/replicasets.apps"},
        {RQ_EVAL_COUNT, "apps", "v1", "statefulsets", NULL, "count/statefulsets.apps"},
        {RQ_EVAL_COUNT, "apps", "v1", "daemonsets", NULL, "count/daemonsets.apps"},
        {RQ_EVAL_COUNT, "batch", "v1", "jobs", NULL, "count/jobs.batch"},
        {RQ_EVAL_COUNT, "batch", "v1", "cronjobs", NULL, "count/cronjobs.batch"},
};
const size_t rq_n_evaluators = sizeof(rq_evaluators) / sizeof(rq_evaluators[0]);

const struct rq_evaluator *rq_evaluator_for(const char *group, const char *resource)
{
	for (size_t i = 0; i < rq_n_evaluators; i++)
		if (!strcmp(rq_evaluators[i].group, group) &&
		    !strcmp(rq_evaluators[i].resource, resource))
			return &rq_evaluators[i];
	return NULL;
}

/* install.DefaultIgnoredResources */
static bool ignored_resource(const char *group, const char *resource)
{
	static const char *const ignored[][2] = {
	        {"", "bindings"},
	        {"", "componentstatuses"},
	        {"authentication.k8s.io", "tokenreviews"},
	        {"authentication.k8s.io", "selfsubjectreviews"},
	        {"authorization.k8s.io", "subjectaccessreviews"},
	        {"authorization.k8s.io", "selfsubjectaccessreviews"},
	        {"authorization.k8s.io", "localsubjectaccessreviews"},
	        {"authorization.k8s.io", "selfsubjectrulesreviews"},
	        {"", "events"},
	        {"events.k8s.io", "events"},
	};
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		if (!strcmp(ignored[i][0], group) && !strcmp(ignored[i][1], resource))
			return true;
	return false;
}

bool rq_dynamic_count(const char *name, char *buf, size_t len, struct rq_evaluator *ret)
{
	const char *gr = name + strlen("count/");
	size_t n = strncmp(name, "count/", 6) ? 0 : strlen(gr);

	if (!n || n >= len)
		return false;
	for (size_t i = 0; i < rq_n_evaluators; i++)
		if (rq_evaluator_matches(&rq_evaluators[i], name))
			return false;
	memcpy(buf, gr, n + 1);
	char *dot = strchr(buf, '.');
	if (dot)
		*dot = '\0';
	const char *group = dot ? dot + 1 : "";
	if (!*buf || strchr(buf, '/') || ignored_resource(group, buf))
		return false;
	*ret = (struct rq_evaluator){.kind = RQ_EVAL_COUNT,
	                             .group = group,
	                             .version = "",
	                             .resource = buf,
	                             .alias = NULL,
	                             .count_name = name};
	return true;
}

/* helper.IsNativeResource: no '/' or a kubernetes.io/ prefixed name */
static bool native_resource(const char *n)
{
	return !strchr(n, '/') || strstr(n, "kubernetes.io/");
}

static bool alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* validation.IsQualifiedName: [dns-subdomain/]name, name <= 63 of [-_.A-Za-z0-9] with alnum
 * ends */
static bool qualified_name(const char *s)
{
	const char *slash = strchr(s, '/'), *name = s;
	if (slash) {
		size_t pl = (size_t)(slash - s);
		if (!pl || pl > 253 || strchr(slash + 1, '/'))
			return false;
		for (size_t i = 0; i < pl; i++) {
			char c = s[i];
			bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
			          c == '.';
			if (!ok)
				return false;
		}
		if (!alnum(s[0]) || !alnum(s[pl - 1]))
			return false;
		name = slash + 1;
	}
	size_t n = strlen(name);
	if (!n || n > 63 || !alnum(name[0]) || !alnum(name[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!alnum(name[i]) && name[i] != '-' && name[i] != '_' && name[i] != '.')
			return false;
	return true;
}

/* helper.IsExtendedResourceName */
static bool extended_resource(const char *n)
{
	char buf[512];
	if (native_resource(n) || has_prefix(n, "requests."))
		return false;
	if ((size_t)snprintf(buf, sizeof(buf), "requests.%s", n) >= sizeof(buf))
		return false;
	return qualified_name(buf);
}

static const char *const pod_resources[] = {
        "count/pods",
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
        NULL,
};

static bool in_set(const char *const *set, const char *n)
{
	for (; *set; set++)
		if (!strcmp(*set, n))
			return true;
	return false;
}

#define SC_SUFFIX ".storageclass.storage.k8s.io/"

bool rq_evaluator_matches(const struct rq_evaluator *ev, const char *n)
{
	switch (ev->kind) {
	case RQ_EVAL_PODS:
		return in_set(pod_resources, n) || has_prefix(n, "hugepages-") ||
		       has_prefix(n, "requests.hugepages-") ||
		       (!native_resource(n) && has_prefix(n, "requests."));
	case RQ_EVAL_SERVICES: {
		static const char *const s[] = {"count/services", "services", "services.nodeports",
		                                "services.loadbalancers", NULL};
		return in_set(s, n);
	}
	case RQ_EVAL_PVCS:
		return !strcmp(n, "count/persistentvolumeclaims") ||
		       !strcmp(n, "persistentvolumeclaims") || !strcmp(n, "requests.storage") ||
		       has_suffix(n, SC_SUFFIX "persistentvolumeclaims") ||
		       has_suffix(n, SC_SUFFIX "requests.storage");
	case RQ_EVAL_COUNT:
		return !strcmp(n, ev->count_name) || (ev->alias && !strcmp(n, ev->alias));
	}
	return false;
}

/* ---- pods --------------------------------------------------------------------------------------
 */
bool rq_pod_counts(const cJSON *pod, kube_time_t now)
{
	const char *phase = str(get(pod, "status"), "phase");
	if (phase && (!strcmp(phase, "Failed") || !strcmp(phase, "Succeeded")))
		return false;
	const cJSON *meta = get(pod, "metadata");
	const char *dts = str(meta, "deletionTimestamp");
	const cJSON *grace = get(meta, "deletionGracePeriodSeconds");
	kube_time_t dt;
	if (dts && cJSON_IsNumber(grace) && kube_time_parse(dts, strlen(dts), &dt) == 0) {
		kube_time_t deadline = dt + (kube_time_t)grace->valuedouble * 1000000000LL;
		if (now > deadline)
			return false;
	}
	return true;
}

/* requirementsQOS over a ResourceRequirements JSON */
enum qos { QOS_NONE, QOS_BEST_EFFORT, QOS_BURSTABLE, QOS_GUARANTEED };

static enum qos requirements_qos(const cJSON *res)
{
	const cJSON *req = get(res, "requests"), *lim = get(res, "limits");
	enum qos q = QOS_NONE;
	static const char *const names[] = {"cpu", "memory"};

	if (cJSON_GetArraySize(req) == 0 && cJSON_GetArraySize(lim) == 0)
		return QOS_BEST_EFFORT;
	for (int i = 0; i < 2; i++) {
		struct rq_qty a = {0}, b = {0};
		const char *sa = str(req, names[i]), *sb = str(lim, names[i]);
		if (sa && rq_qty_parse(sa, &a) < 0)
			a.nano = 0;
		if (sb && rq_qty_parse(sb, &b) < 0)
			b.nano = 0;
		enum qos r = rq_qty_cmp(&a, &b) != 0 ? QOS_BURSTABLE
		             : rq_qty_is_zero(&a)    ? QOS_BEST_EFFORT
		                                     : QOS_GUARANTEED;
		if (r == QOS_BURSTABLE)
			return r;
		if (q == QOS_NONE)
			q = r;
		else if (q != r)
			return QOS_BURSTABLE;
	}
	return q;
}

static bool pod_level_resource(const char *n)
{
	return !strcmp(n, "cpu") || !strcmp(n, "memory") || has_prefix(n, "hugepages-");
}

static bool any_pod_level(const cJSON *list)
{
	const cJSON *e;
	cJSON_ArrayForEach(e, list)
	{
		if (e->string && pod_level_resource(e->string))
			return true;
	}
	return false;
}

/* IsPodLevelResourcesSet / IsPodLevelRequestsSet */
static bool pod_level_set(const cJSON *pod, bool requests_only)
{
	const cJSON *res = path(pod, "spec", "resources");
	return any_pod_level(get(res, "requests")) ||
	       (!requests_only && any_pod_level(get(res, "limits")));
}

bool rq_pod_best_effort(const cJSON *pod)
{
	const char *qc = str(get(pod, "status"), "qosClass");
	if (qc && *qc)
		return !strcmp(qc, "BestEffort");
	if (pod_level_set(pod, false))
		return requirements_qos(path(pod, "spec", "resources")) == QOS_BEST_EFFORT;
	enum qos q = QOS_NONE;
	static const char *const kinds[] = {"initContainers", "containers"};
	for (int k = 0; k < 2; k++) {
		const cJSON *c;
		cJSON_ArrayForEach(c, path(pod, "spec", kinds[k]))
		{
			enum qos cq = requirements_qos(get(c, "resources"));
			if (cq == QOS_BURSTABLE)
				return false;
			if (q == QOS_NONE)
				q = cq;
			else if (q != cq)
				return false;
		}
	}
	return q == QOS_NONE || q == QOS_BEST_EFFORT;
}

enum cfn { SPEC_REQ, ALLOC_REQ, ACT_REQ, SPEC_LIM, ACT_LIM };

static const cJSON *container_status(const cJSON *pod, const char *name)
{
	static const char *const kinds[] = {"containerStatuses", "initContainerStatuses"};
	for (int k = 0; k < 2; k++) {
		const cJSON *s;
		cJSON_ArrayForEach(s, path(pod, "status", kinds[k]))
		{
			const char *n = str(s, "name");
			if (n && name && !strcmp(n, name))
				return s;
		}
	}
	return NULL;
}

/* the getResourceList functions: the list JSON to use, or NULL for nil */
static const cJSON *container_list(const cJSON *c, const cJSON *cs, bool infeasible, enum cfn f)
{
	const cJSON *spec_req = path(c, "resources", "requests");
	const cJSON *spec_lim = path(c, "resources", "limits");
	const cJSON *alloc = get(cs, "allocatedResources");
	const cJSON *act_req = path(cs, "resources", "requests");
	const cJSON *act_lim = path(cs, "resources", "limits");

	switch (f) {
	case SPEC_REQ:
		return spec_req;
	case SPEC_LIM:
		return spec_lim;
	case ALLOC_REQ:
		return alloc ? alloc : infeasible ? NULL : spec_req;
	case ACT_REQ:
		return act_req ? act_req : alloc ? alloc : infeasible ? NULL : spec_req;
	case ACT_LIM:
		return act_lim ? act_lim : infeasible ? NULL : spec_lim;
	}
	return NULL;
}

static bool resize_infeasible(const cJSON *pod)
{
	const cJSON *c;
	cJSON_ArrayForEach(c, path(pod, "status", "conditions"))
	{
		const char *t = str(c, "type");
		if (t && !strcmp(t, "PodResizePending")) {
			const char *r = str(c, "reason");
			return r && !strcmp(r, "Infeasible");
		}
	}
	return false;
}

static bool restartable(const cJSON *c)
{
	const char *p = str(c, "restartPolicy");
	return p && !strcmp(p, "Always");
}

/* aggregateContainerResourcesByFn with UseStatusResources (kcm's options) */
static int aggregate(const cJSON *pod, enum cfn f, struct rq_list *out)
{
	bool infeasible = resize_infeasible(pod);
	struct rq_list sidecars = {0}, init = {0}, cur = {0}, tmp = {0};
	const cJSON *c;
	int r = 0;

	memset(out, 0, sizeof(*out));
	cJSON_ArrayForEach(c, path(pod, "spec", "containers"))
	{
		const cJSON *cs = container_status(pod, str(c, "name"));
		if ((r = rq_list_from_json(container_list(c, cs, infeasible, f), &cur)) < 0 ||
		    (r = rq_list_add(out, &cur)) < 0)
			goto done;
		rq_list_free(&cur);
	}
	cJSON_ArrayForEach(c, path(pod, "spec", "initContainers"))
	{
		const cJSON *cs = container_status(pod, str(c, "name"));
		if ((r = rq_list_from_json(container_list(c, cs, infeasible, f), &cur)) < 0)
			goto done;
		if (restartable(c)) {
			if ((r = rq_list_add(out, &cur)) < 0 ||
			    (r = rq_list_add(&sidecars, &cur)) < 0 ||
			    (r = list_max(&init, &sidecars)) < 0)
				goto done;
		} else {
			if ((r = list_copy(&tmp, &cur)) < 0 ||
			    (r = rq_list_add(&tmp, &sidecars)) < 0 ||
			    (r = list_max(&init, &tmp)) < 0)
				goto done;
		}
		rq_list_free(&cur);
	}
	r = list_max(out, &init);
done:
	rq_list_free(&sidecars);
	rq_list_free(&init);
	rq_list_free(&cur);
	rq_list_free(&tmp);
	if (r < 0)
		rq_list_free(out);
	return r;
}

/* applyPodLevelResources */
static int apply_pod_level(struct rq_list *l, const cJSON *list)
{
	struct rq_list pl;
	int r = rq_list_from_json(list, &pl);
	for (size_t i = 0; r == 0 && i < pl.n; i++)
		if (pod_level_resource(pl.v[i].name))
			r = set_item(l, &pl.v[i]);
	rq_list_free(&pl);
	return r;
}

/* max(a, b, c): a copy of a raised by b then c */
static int max3(struct rq_list *out, const struct rq_list *a, const struct rq_list *b,
                const struct rq_list *c)
{
	int r = list_copy(out, a);
	if (r == 0)
		r = list_max(out, b);
	if (r == 0 && c)
		r = list_max(out, c);
	return r;
}

int rq_pod_requests(const cJSON *pod, struct rq_list *ret)
{
	struct rq_list spec = {0}, alloc = {0}, act = {0}, overhead = {0};
	int r;

	memset(ret, 0, sizeof(*ret));
	if ((r = aggregate(pod, SPEC_REQ, &spec)) < 0 ||
	    (r = aggregate(pod, ALLOC_REQ, &alloc)) < 0 || (r = aggregate(pod, ACT_REQ, &act)) < 0)
		goto done;
	if (resize_infeasible(pod))
		r = max3(ret, &act, &alloc, NULL);
	else
		r = max3(ret, &spec, &act, &alloc);
	if (r < 0)
		goto done;
	if (pod_level_set(pod, true) &&
	    (r = apply_pod_level(ret, get(path(pod, "spec", "resources"), "requests"))) < 0)
		goto done;
	if ((r = rq_list_from_json(path(pod, "spec", "overhead"), &overhead)) < 0 ||
	    (r = rq_list_add(ret, &overhead)) < 0)
		goto done;
done:
	rq_list_free(&spec);
	rq_list_free(&alloc);
	rq_list_free(&act);
	rq_list_free(&overhead);
	if (r < 0)
		rq_list_free(ret);
	return r;
}

int rq_pod_limits(const cJSON *pod, struct rq_list *ret)
{
	struct rq_list spec = {0}, act = {0}, overhead = {0};
	int r;

	memset(ret, 0, sizeof(*ret));
	if ((r = aggregate(pod, SPEC_LIM, &spec)) < 0 || (r = aggregate(pod, ACT_LIM, &act)) < 0)
		goto done;
	if (resize_infeasible(pod))
		r = list_copy(ret, &act);
	else
		r = max3(ret, &spec, &act, NULL);
	if (r < 0)
		goto done;
	if (pod_level_set(pod, false) &&
	    (r = apply_pod_level(ret, get(path(pod, "spec", "resources"), "limits"))) < 0)
		goto done;
	if ((r = rq_list_from_json(path(pod, "spec", "overhead"), &overhead)) < 0)
		goto done;
	for (size_t i = 0; i < overhead.n; i++) {
		struct rq_item *it = find(ret, overhead.v[i].name);
		if (it && !rq_qty_is_zero(&it->q)) {
			if ((r = rq_qty_add(&it->q, &overhead.v[i].q)) < 0)
				goto done;
			free(it->text);
			it->text = NULL;
		}
	}
done:
	rq_list_free(&spec);
	rq_list_free(&act);
	rq_list_free(&overhead);
	if (r < 0)
		rq_list_free(ret);
	return r;
}

static int put(struct rq_list *l, const char *name, const struct rq_item *it)
{
	return set_text(l, name, &it->q, it->text);
}

/* podComputeUsageHelper */
static int pod_compute_usage(const struct rq_list *req, const struct rq_list *lim,
                             struct rq_list *out)
{
	struct rq_qty one = rq_qty_int(1);
	const struct rq_item *it;
	int r = set_text(out, "pods", &one, "1");
	static const char *const names[] = {"cpu", "memory", "ephemeral-storage"};

	for (int k = 0; r == 0 && k < 3; k++) {
		char buf[64];
		if ((it = find(req, names[k]))) {
			snprintf(buf, sizeof(buf), "requests.%s", names[k]);
			if ((r = put(out, names[k], it)) < 0 || (r = put(out, buf, it)) < 0)
				break;
		}
		if ((it = find(lim, names[k]))) {
			snprintf(buf, sizeof(buf), "limits.%s", names[k]);
			r = put(out, buf, it);
		}
	}
	for (size_t i = 0; r == 0 && i < req->n; i++) {
		char buf[512];
		const struct rq_item *q = &req->v[i];
		if ((size_t)snprintf(buf, sizeof(buf), "requests.%s", q->name) >= sizeof(buf))
			continue;
		if (has_prefix(q->name, "hugepages-")) {
			if ((r = put(out, q->name, q)) < 0 || (r = put(out, buf, q)) < 0)
				break;
		}
		if (extended_resource(q->name))
			r = put(out, buf, q);
	}
	return r;
}

static int pod_usage(const cJSON *pod, kube_time_t now, struct rq_list *out)
{
	struct rq_qty one = rq_qty_int(1);
	struct rq_list req = {0}, lim = {0}, comp = {0};
	int r = rq_list_set(out, "count/pods", &one);

	if (r < 0 || !rq_pod_counts(pod, now))
		return r;
	if ((r = rq_pod_requests(pod, &req)) == 0 && (r = rq_pod_limits(pod, &lim)) == 0 &&
	    (r = pod_compute_usage(&req, &lim, &comp)) == 0)
		r = rq_list_add(out, &comp);
	rq_list_free(&req);
	rq_list_free(&lim);
	rq_list_free(&comp);
	return r;
}

/* ---- services ---------------------------------------------------------------------------------
 */
static int service_usage(const cJSON *svc, struct rq_list *out)
{
	struct rq_qty one = rq_qty_int(1), zero = {0};
	const cJSON *spec = get(svc, "spec"), *ports = get(spec, "ports");
	const char *type = str(spec, "type");
	int n = cJSON_IsArray(ports) ? cJSON_GetArraySize(ports) : 0;
	int r;

	if ((r = rq_list_set(out, "count/services", &one)) < 0 ||
	    (r = rq_list_set(out, "services", &one)) < 0 ||
	    (r = rq_list_set(out, "services.loadbalancers", &zero)) < 0 ||
	    (r = rq_list_set(out, "services.nodeports", &zero)) < 0)
		return r;
	if (type && !strcmp(type, "NodePort")) {
		struct rq_qty q = rq_qty_int(n);
		return rq_list_set(out, "services.nodeports", &q);
	}
	if (type && !strcmp(type, "LoadBalancer")) {
		const cJSON *alloc = get(spec, "allocateLoadBalancerNodePorts");
		struct rq_qty q = rq_qty_int(n);
		if (cJSON_IsFalse(alloc)) {
			const cJSON *p;
			int with = 0;
			cJSON_ArrayForEach(p, ports)
			{
				const cJSON *np = get(p, "nodePort");
				with += cJSON_IsNumber(np) && np->valuedouble != 0;
			}
			q = rq_qty_int(with);
		}
		if ((r = rq_list_set(out, "services.nodeports", &q)) < 0)
			return r;
		return rq_list_set(out, "services.loadbalancers", &one);
	}
	return 0;
}

/* ---- persistentvolumeclaims --------------------------------------------------------------------
 */
/* storagehelpers.GetPersistentVolumeClaimClass */
static const char *pvc_class(const cJSON *pvc)
{
	const char *a = str(path(pvc, "metadata", "annotations"),
	                    "volume.beta.kubernetes.io/storage-class");
	if (a)
		return a;
	const char *c = str(get(pvc, "spec"), "storageClassName");
	return c ? c : "";
}

/* getStorageUsage: 1 with *ret set, 0 when no storage request, -errno */
static int pvc_storage(const cJSON *pvc, struct rq_item *ret)
{
	const char *req = str(path(get(pvc, "spec"), "resources", "requests"), "storage");
	const cJSON *allocated = path(pvc, "status", "allocatedResources");
	struct rq_qty q, a;
	int r;

	if (!req)
		return 0;
	if ((r = rq_qty_parse(req, &q)) < 0)
		return r;
	ret->q = q;
	ret->text = rq_qty_round_up_integer(&ret->q) ? (char *)req : NULL;
	const char *as = str(allocated, "storage");
	if (as && cJSON_GetArraySize(allocated) > 0) {
		if ((r = rq_qty_parse(as, &a)) < 0)
			return r;
		if (rq_qty_cmp(&a, &ret->q) > 0) {
			ret->q = a;
			ret->text = rq_qty_round_up_integer(&ret->q) ? (char *)as : NULL;
		}
	}
	return 1;
}

static int pvc_usage(const cJSON *pvc, struct rq_list *out)
{
	struct rq_qty one = rq_qty_int(1);
	const char *cls = pvc_class(pvc);
	char buf[512];
	struct rq_item st = {0};
	int r;

	if ((r = rq_list_set(out, "persistentvolumeclaims", &one)) < 0 ||
	    (r = rq_list_set(out, "count/persistentvolumeclaims", &one)) < 0)
		return r;
	if (*cls) {
		snprintf(buf, sizeof(buf), "%s" SC_SUFFIX "persistentvolumeclaims", cls);
		if ((r = rq_list_set(out, buf, &one)) < 0)
			return r;
	}
	if ((r = pvc_storage(pvc, &st)) <= 0)
		return r;
	if ((r = set_text(out, "requests.storage", &st.q, st.text)) < 0)
		return r;
	if (*cls) {
		snprintf(buf, sizeof(buf), "%s" SC_SUFFIX "requests.storage", cls);
		r = set_text(out, buf, &st.q, st.text);
	}
	return r;
}

int rq_usage(const struct rq_evaluator *ev, const cJSON *obj, kube_time_t now, struct rq_list *ret)
{
	struct rq_qty one = rq_qty_int(1);
	int r = 0;

	memset(ret, 0, sizeof(*ret));
	switch (ev->kind) {
	case RQ_EVAL_PODS:
		r = pod_usage(obj, now, ret);
		break;
	case RQ_EVAL_SERVICES:
		r = service_usage(obj, ret);
		break;
	case RQ_EVAL_PVCS:
		r = pvc_usage(obj, ret);
		break;
	case RQ_EVAL_COUNT:
		r = rq_list_set(ret, ev->count_name, &one);
		if (r == 0 && ev->alias)
			r = rq_list_set(ret, ev->alias, &one);
		break;
	}
	if (r < 0)
		rq_list_free(ret);
	return r;
}

/* ---- scopes ------------------------------------------------------------------------------------
 */
static bool label_value(const char *v)
{
	size_t n = strlen(v);
	if (n == 0)
		return true;
	if (n > 63 || !alnum(v[0]) || !alnum(v[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!alnum(v[i]) && v[i] != '-' && v[i] != '_' && v[i] != '.')
			return false;
	return true;
}

/* ScopedResourceSelectorRequirementsAsSelector(req).Matches(labels): the label set holds the
 * scope's key with `value`, or nothing when value is NULL. 1, 0, -EINVAL. */
static int selector_matches(const cJSON *req, const char *value)
{
	const char *op = str(req, "operator");
	const cJSON *values = get(req, "values"), *v;
	int n = cJSON_IsArray(values) ? cJSON_GetArraySize(values) : 0;
	bool in = false;

	if (!op)
		return -EINVAL;
	cJSON_ArrayForEach(v, values)
	{
		if (!cJSON_IsString(v) || !label_value(v->valuestring))
			return -EINVAL;
		in |= value && !strcmp(v->valuestring, value);
	}
	if (!strcmp(op, "In") || !strcmp(op, "NotIn")) {
		if (n == 0)
			return -EINVAL;
		return !strcmp(op, "In") ? in : !in;
	}
	if (!strcmp(op, "Exists") || !strcmp(op, "DoesNotExist")) {
		if (n != 0)
			return -EINVAL;
		return !strcmp(op, "Exists") ? value != NULL : value == NULL;
	}
	return -EINVAL;
}

static bool cross_ns_term(const cJSON *t)
{
	return cJSON_GetArraySize(get(t, "namespaces")) > 0 || get(t, "namespaceSelector");
}

static bool cross_ns_affinity(const cJSON *pod)
{
	static const char *const kinds[] = {"podAffinity", "podAntiAffinity"};
	const cJSON *aff = path(pod, "spec", "affinity"), *t;
	for (int k = 0; k < 2; k++) {
		const cJSON *a = get(aff, kinds[k]);
		cJSON_ArrayForEach(t, get(a, "requiredDuringSchedulingIgnoredDuringExecution"))
		{
			if (cross_ns_term(t))
				return true;
		}
		cJSON_ArrayForEach(t, get(a, "preferredDuringSchedulingIgnoredDuringExecution"))
		{
			if (cross_ns_term(get(t, "podAffinityTerm")))
				return true;
		}
	}
	return false;
}

static int pod_scope(const cJSON *req, const cJSON *pod)
{
	const char *scope = str(req, "scopeName");
	if (!scope)
		return 0;
	if (!strcmp(scope, "Terminating") || !strcmp(scope, "NotTerminating")) {
		const cJSON *ads = path(pod, "spec", "activeDeadlineSeconds");
		bool terminating = cJSON_IsNumber(ads) && ads->valuedouble >= 0;
		return !strcmp(scope, "Terminating") ? terminating : !terminating;
	}
	if (!strcmp(scope, "BestEffort"))
		return rq_pod_best_effort(pod);
	if (!strcmp(scope, "NotBestEffort"))
		return !rq_pod_best_effort(pod);
	if (!strcmp(scope, "PriorityClass")) {
		const char *pc = str(get(pod, "spec"), "priorityClassName");
		const char *op = str(req, "operator");
		if (op && !strcmp(op, "Exists"))
			return pc && *pc;
		return selector_matches(req, pc && *pc ? pc : NULL);
	}
	if (!strcmp(scope, "CrossNamespacePodAffinity"))
		return cross_ns_affinity(pod);
	return 0;
}

static int pvc_scope(const cJSON *req, const cJSON *pvc)
{
	const char *scope = str(req, "scopeName");
	const char *names[3] = {0};
	size_t n = 0;

	if (!scope || strcmp(scope, "VolumeAttributesClass"))
		return 0;
	const char *cand[3] = {
	        str(get(pvc, "spec"), "volumeAttributesClassName"),
	        str(get(pvc, "status"), "currentVolumeAttributesClassName"),
	        str(path(pvc, "status", "modifyVolumeStatus"), "targetVolumeAttributesClassName")};
	for (int i = 0; i < 3; i++) {
		bool dup = false;
		if (!cand[i] || !*cand[i])
			continue;
		for (size_t k = 0; k < n; k++)
			dup |= !strcmp(names[k], cand[i]);
		if (!dup)
			names[n++] = cand[i];
	}
	const char *op = str(req, "operator");
	if (op && !strcmp(op, "Exists"))
		return n != 0;
	if (n == 0)
		return selector_matches(req, NULL);
	for (size_t k = 0; k < n; k++) {
		int m = selector_matches(req, names[k]);
		if (m != 0)
			return m;
	}
	return 0;
}

int rq_matches_scope(const struct rq_evaluator *ev, const cJSON *req, const cJSON *obj)
{
	switch (ev->kind) {
	case RQ_EVAL_PODS:
		return pod_scope(req, obj);
	case RQ_EVAL_PVCS:
		return pvc_scope(req, obj);
	default:
		return 0; /* generic.MatchesNoScopeFunc */
	}
}

/* ---- the sync ----------------------------------------------------------------------------------
 */
struct stats_ud {
	const struct rq_evaluator *ev;
	const cJSON *scopes, *selector;
	kube_time_t now;
	struct rq_list *used;
};

static int stats_visit(const cJSON *obj, void *p)
{
	struct stats_ud *s = p;
	const cJSON *sc;
	bool match = true;
	int r;

	cJSON_ArrayForEach(sc, s->scopes)
	{
		if (!cJSON_IsString(sc))
			continue;
		cJSON *req = cJSON_CreateObject();
		if (!req || !cJSON_AddStringToObject(req, "scopeName", sc->valuestring) ||
		    !cJSON_AddStringToObject(req, "operator", "Exists")) {
			cJSON_Delete(req);
			return -ENOMEM;
		}
		r = rq_matches_scope(s->ev, req, obj);
		cJSON_Delete(req);
		if (r < 0)
			return r;
		match = match && r;
	}
	cJSON_ArrayForEach(sc, get(s->selector, "matchExpressions"))
	{
		if ((r = rq_matches_scope(s->ev, sc, obj)) < 0)
			return r;
		match = match && r;
	}
	if (!match)
		return 0;
	struct rq_list u;
	if ((r = rq_usage(s->ev, obj, s->now, &u)) < 0)
		return r;
	r = rq_list_add(s->used, &u);
	rq_list_free(&u);
	return r;
}

/* Mask: keep only the names for which keep() says so */
static void mask(struct rq_list *l, const struct rq_list *names)
{
	size_t w = 0;
	for (size_t i = 0; i < l->n; i++) {
		if (find(names, l->v[i].name)) {
			l->v[w++] = l->v[i];
		} else {
			free(l->v[i].name);
			free(l->v[i].text);
		}
	}
	l->n = w;
}

int rq_sync_status(const cJSON *quota, const struct rq_source *src, kube_time_t now,
                   struct rq_sync_out *out)
{
	const cJSON *spec = get(quota, "spec"), *status = get(quota, "status");
	const char *ns = str(get(quota, "metadata"), "namespace");
	struct rq_list hard = {0}, status_hard = {0}, old_used = {0}, used = {0}, matched = {0};
	struct rq_list new_usage = {0};
	struct rq_evaluator *dyn = NULL;
	struct {
		char res[256], name[272];
	} *dyn_buf = NULL;
	int r;

	memset(out, 0, sizeof(*out));
	if (!ns)
		return -EINVAL;
	if ((r = rq_list_from_json(get(spec, "hard"), &hard)) < 0 ||
	    (r = rq_list_from_json(get(status, "hard"), &status_hard)) < 0 ||
	    (r = rq_list_from_json(get(status, "used"), &old_used)) < 0)
		goto done;
	out->dirty =
	        !rq_list_equal(&hard, &status_hard) || !get(status, "hard") || !get(status, "used");
	if ((r = rq_list_add(&used, &old_used)) < 0)
		goto done;

	/* CalculateUsage: the resources of hard some evaluator tracks */
	struct rq_qty zero = {0};
	size_t n_dyn = 0;
	for (size_t i = 0; i < hard.n; i++) {
		char tmp[256];
		struct rq_evaluator tev;
		bool m = rq_dynamic_count(hard.v[i].name, tmp, sizeof(tmp), &tev);
		for (size_t e = 0; !m && e < rq_n_evaluators; e++)
			m = rq_evaluator_matches(&rq_evaluators[e], hard.v[i].name);
		if (m && (r = rq_list_set(&matched, hard.v[i].name, &zero)) < 0)
			goto done;
	}
	/* the dynamic count evaluators, one per such name of matched (their strings in dyn_buf) */
	if (matched.n && !(dyn = calloc(matched.n, sizeof(*dyn)))) {
		r = -ENOMEM;
		goto done;
	}
	if (matched.n && !(dyn_buf = calloc(matched.n, sizeof(*dyn_buf)))) {
		r = -ENOMEM;
		goto done;
	}
	for (size_t i = 0; i < matched.n; i++)
		if (strlen(matched.v[i].name) < sizeof(dyn_buf[n_dyn].name) &&
		    rq_dynamic_count(matched.v[i].name, dyn_buf[n_dyn].res,
		                     sizeof(dyn_buf[n_dyn].res), &dyn[n_dyn])) {
			/* its own copy of the name: a failed evaluator's names leave matched */
			memcpy(dyn_buf[n_dyn].name, matched.v[i].name,
			       strlen(matched.v[i].name) + 1);
			dyn[n_dyn].count_name = dyn_buf[n_dyn].name;
			n_dyn++;
		}
	for (size_t e = 0; e < rq_n_evaluators + n_dyn; e++) {
		const struct rq_evaluator *ev =
		        e < rq_n_evaluators ? &rq_evaluators[e] : &dyn[e - rq_n_evaluators];
		struct rq_list stats = {0};
		for (size_t i = 0; i < matched.n; i++)
			if (rq_evaluator_matches(ev, matched.v[i].name) &&
			    (r = rq_list_set(&stats, matched.v[i].name, &zero)) < 0) {
				rq_list_free(&stats);
				goto done;
			}
		if (!stats.n)
			continue;
		struct rq_list tracked = {0};
		if ((r = rq_list_add(&tracked, &stats)) < 0) {
			rq_list_free(&stats);
			goto done;
		}
		struct stats_ud sud = {ev, get(spec, "scopes"), get(spec, "scopeSelector"), now,
		                       &stats};
		int lr = src->list(src->ud, ev, ns, stats_visit, &sud);
		if (lr == -ENOMEM) {
			r = lr;
			rq_list_free(&stats);
			rq_list_free(&tracked);
			goto done;
		}
		if (lr < 0) {
			/* the evaluator failed: its resources keep their old usage; a count of
			 * a kind not served is no evaluator at all (no error, as upstream) */
			if (!(ev->kind == RQ_EVAL_COUNT && !ev->alias && lr == -ENOENT) &&
			    !out->calc_err)
				out->calc_err = lr;
			for (size_t i = 0; i < tracked.n; i++) {
				struct rq_item *m = find(&matched, tracked.v[i].name);
				if (m) {
					free(m->name);
					free(m->text);
					*m = matched.v[--matched.n];
				}
			}
		} else {
			r = rq_list_add(&new_usage, &stats);
		}
		rq_list_free(&stats);
		rq_list_free(&tracked);
		if (r < 0)
			goto done;
	}
	mask(&new_usage, &matched);
	for (size_t i = 0; i < new_usage.n; i++)
		if ((r = set_item(&used, &new_usage.v[i])) < 0)
			goto done;
	mask(&used, &hard);
	out->dirty = out->dirty || !rq_list_equal(&used, &old_used);

	cJSON *st = cJSON_CreateObject(), *h = rq_list_to_json(&hard), *u = rq_list_to_json(&used);
	if (!st || !h || !u) {
		cJSON_Delete(st);
		cJSON_Delete(h);
		cJSON_Delete(u);
		r = -ENOMEM;
		goto done;
	}
	cJSON_AddItemToObject(st, "hard", h);
	cJSON_AddItemToObject(st, "used", u);
	out->status = st;
	r = 0;
done:
	rq_list_free(&hard);
	rq_list_free(&status_hard);
	rq_list_free(&old_used);
	rq_list_free(&used);
	rq_list_free(&matched);
	rq_list_free(&new_usage);
	free(dyn);
	free(dyn_buf);
	return r;
}

bool rq_quota_tracks(const cJSON *quota, const char *group, const char *resource)
{
	const struct rq_evaluator *ev = rq_evaluator_for(group, resource);
	const cJSON *e;

	cJSON_ArrayForEach(e, path(quota, "status", "hard"))
	{
		char buf[256];
		struct rq_evaluator dyn;
		if (!e->string)
			continue;
		if (ev && rq_evaluator_matches(ev, e->string))
			return true;
		if (!ev && rq_dynamic_count(e->string, buf, sizeof(buf), &dyn) &&
		    !strcmp(dyn.group, group) && !strcmp(dyn.resource, resource))
			return true;
	}
	return false;
}

bool rq_quota_needs_priority(const cJSON *quota)
{
	const cJSON *status = get(quota, "status"), *e;
	struct rq_list spec = {0}, st = {0};
	bool differ = rq_list_from_json(path(quota, "spec", "hard"), &spec) < 0 ||
	              rq_list_from_json(get(status, "hard"), &st) < 0 || !rq_list_equal(&spec, &st);

	rq_list_free(&spec);
	rq_list_free(&st);
	if (differ)
		return true;
	cJSON_ArrayForEach(e, get(status, "hard"))
	{
		char buf[256];
		struct rq_evaluator dyn;
		if (!e->string || get(get(status, "used"), e->string))
			continue;
		bool tracked = rq_dynamic_count(e->string, buf, sizeof(buf), &dyn);
		for (size_t k = 0; !tracked && k < rq_n_evaluators; k++)
			tracked = rq_evaluator_matches(&rq_evaluators[k], e->string);
		if (tracked)
			return true;
	}
	return false;
}
