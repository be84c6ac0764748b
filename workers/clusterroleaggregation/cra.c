/* SPDX-License-Identifier: Apache-2.0 */
/* workers/clusterroleaggregation/cra.c: the aggregation of ClusterRole rules (cra.h). */
#include "workers/clusterroleaggregation/cra.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/model.h"
#include "kube/selector.h"

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static const char *name_of(const cJSON *role)
{
	const cJSON *n = get(get(role, "metadata"), "name");
	return cJSON_IsString(n) ? n->valuestring : "";
}

bool cra_aggregated(const cJSON *role)
{
	const cJSON *a = get(role, "aggregationRule");
	return a && !cJSON_IsNull(a);
}

/* ---- rules ------------------------------------------------------------------------------------
 */
static const char *const rule_fields[] = {"verbs", "apiGroups", "resources", "resourceNames",
                                          "nonResourceURLs"};
#define N_FIELDS (sizeof(rule_fields) / sizeof(rule_fields[0]))

/* equality.Semantic.DeepEqual of two string lists: absent, null and [] are equal */
static bool list_equal(const cJSON *a, const cJSON *b)
{
	int na = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
	int nb = cJSON_IsArray(b) ? cJSON_GetArraySize(b) : 0;

	if (na != nb)
		return false;
	for (int i = 0; i < na; i++) {
		const cJSON *x = cJSON_GetArrayItem(a, i), *y = cJSON_GetArrayItem(b, i);
		if (!cJSON_IsString(x) || !cJSON_IsString(y) ||
		    strcmp(x->valuestring, y->valuestring))
			return false;
	}
	return true;
}

static bool rule_equal(const cJSON *a, const cJSON *b)
{
	for (size_t f = 0; f < N_FIELDS; f++)
		if (!list_equal(get(a, rule_fields[f]), get(b, rule_fields[f])))
			return false;
	return true;
}

static bool rules_equal(const cJSON *a, const cJSON *b)
{
	int na = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
	int nb = cJSON_IsArray(b) ? cJSON_GetArraySize(b) : 0;

	if (na != nb)
		return false;
	for (int i = 0; i < na; i++)
		if (!rule_equal(cJSON_GetArrayItem(a, i), cJSON_GetArrayItem(b, i)))
			return false;
	return true;
}

/* toApplyPolicyRule: the five lists, each only when not empty */
static cJSON *apply_rule(const cJSON *rule)
{
	cJSON *o = cJSON_CreateObject();
	for (size_t f = 0; o && f < N_FIELDS; f++) {
		const cJSON *l = get(rule, rule_fields[f]);
		if (!cJSON_IsArray(l) || cJSON_GetArraySize(l) == 0)
			continue;
		cJSON *d = cJSON_Duplicate(l, 1);
		if (!d || !cJSON_AddItemToObject(o, rule_fields[f], d)) {
			cJSON_Delete(d);
			cJSON_Delete(o);
			return NULL;
		}
	}
	return o;
}

static int cmp_role(const void *a, const void *b)
{
	return strcmp(name_of(*(const cJSON *const *)a), name_of(*(const cJSON *const *)b));
}

int cra_sync(const cJSON *target, const cJSON *const *roles, size_t n, char **ret, char *err,
             size_t errlen)
{
	const cJSON **sel = calloc(n + 1, sizeof(*sel)), *s;
	cJSON *rules = cJSON_CreateArray(), *body = NULL;
	const char *self = name_of(target);
	int r = 0;

	*ret = NULL;
	if (!sel || !rules) {
		r = -ENOMEM;
		goto out;
	}
	cJSON_ArrayForEach(s, get(get(target, "aggregationRule"), "clusterRoleSelectors"))
	{
		struct kube_selector *ks = NULL;
		size_t m = 0;
		/* a list entry is a LabelSelector value, never nil: null decodes to {} */
		if (cJSON_IsObject(s))
			r = kube_selector_from_json(s, &ks, err, errlen);
		else
			r = kube_selector_from_label_selector(&(struct kube_label_selector){0}, &ks,
			                                      err, errlen);
		if (r < 0)
			goto out;
		for (size_t i = 0; i < n; i++)
			if (kube_selector_matches_json(ks,
			                               get(get(roles[i], "metadata"), "labels")))
				sel[m++] = roles[i];
		kube_selector_free(ks);
		qsort(sel, m, sizeof(*sel), cmp_role);
		for (size_t i = 0; i < m; i++) {
			const cJSON *rule;
			if (!strcmp(name_of(sel[i]), self))
				continue;
			cJSON_ArrayForEach(rule, get(sel[i], "rules"))
			{
				const cJSON *have;
				bool found = false;
				cJSON_ArrayForEach(have, rules) found =
				        found || rule_equal(have, rule);
				if (found)
					continue;
				cJSON *d = cJSON_Duplicate(rule, 1);
				if (!d || !cJSON_AddItemToArray(rules, d)) {
					cJSON_Delete(d);
					r = -ENOMEM;
					goto out;
				}
			}
		}
	}
	if (rules_equal(rules, get(target, "rules")))
		goto out;
	/* rbacv1ac.ClusterRole(name).WithRules(...) */
	cJSON *md, *ar = NULL, *x;
	if (!(body = cJSON_CreateObject()) ||
	    !cJSON_AddStringToObject(body, "apiVersion", "rbac.authorization.k8s.io/v1") ||
	    !cJSON_AddStringToObject(body, "kind", "ClusterRole") ||
	    !(md = cJSON_AddObjectToObject(body, "metadata")) ||
	    !cJSON_AddStringToObject(md, "name", self)) {
		r = -ENOMEM;
		goto out;
	}
	if (cJSON_GetArraySize(rules) > 0 && !(ar = cJSON_AddArrayToObject(body, "rules"))) {
		r = -ENOMEM;
		goto out;
	}
	cJSON_ArrayForEach(x, rules)
	{
		cJSON *a = apply_rule(x);
		if (!a || !cJSON_AddItemToArray(ar, a)) {
			cJSON_Delete(a);
			r = -ENOMEM;
			goto out;
		}
	}
	if (!(*ret = cJSON_PrintUnformatted(body)))
		r = -ENOMEM;
out:
	cJSON_Delete(body);
	cJSON_Delete(rules);
	free(sel);
	return r;
}
