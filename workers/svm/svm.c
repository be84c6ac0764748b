/* SPDX-License-Identifier: Apache-2.0 */
/* workers/svm/svm.c: the storage-version-migrator-controller's decisions (svm.h). */
#include "workers/svm/svm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/model.h"

static bool rv_well_formed(const char *s)
{
	if (!s || !*s || *s == '0')
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

int svm_rv_compare(const char *a, const char *b, int *cmp, const char **bad)
{
	size_t la, lb;
	int c;

	if (!rv_well_formed(a) || !rv_well_formed(b)) {
		if (bad)
			*bad = !rv_well_formed(a) ? (a ? a : "") : b ? b : "";
		return -EINVAL;
	}
	la = strlen(a);
	lb = strlen(b);
	if (la != lb)
		c = la < lb ? -1 : 1;
	else {
		c = strcmp(a, b);
		c = c < 0 ? -1 : c > 0;
	}
	*cmp = c;
	return 0;
}

void svm_running_message(char *buf, size_t len, const int *to_patch, const int *total,
                         const char *transient)
{
	size_t n;

	if (!len)
		return;
	n = (size_t)snprintf(buf, len, "The migration is running");
	if (to_patch && total && *total > 0 && n < len) {
		if (*to_patch > 0)
			n += (size_t)snprintf(buf + n, len - n, ", %d/%d objects not yet migrated",
			                      *to_patch, *total);
		else
			n += (size_t)snprintf(buf + n, len - n, ", %d objects verified migrated",
			                      *total);
	}
	if (transient && n < len)
		snprintf(buf + n, len - n, "; transient error: %s", transient);
}

static cJSON *conditions(const cJSON *svm)
{
	return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(svm, "status"),
	                                        "conditions");
}

static const char *str(const cJSON *o, const char *key)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
}

cJSON *svm_cond_find(const cJSON *svm, const char *type)
{
	cJSON *c;

	cJSON_ArrayForEach(c, conditions(svm))
	{
		const char *t = str(c, "type");
		if (t && !strcmp(t, type))
			return c;
	}
	return NULL;
}

bool svm_cond_true(const cJSON *svm, const char *type)
{
	const char *s = str(svm_cond_find(svm, type), "status");

	return s && !strcmp(s, "True");
}

bool svm_terminal(const cJSON *svm)
{
	return svm_cond_true(svm, SVM_COND_SUCCEEDED) || svm_cond_true(svm, SVM_COND_FAILED);
}

static int set_str(cJSON *o, const char *key, const char *v)
{
	cJSON *n = cJSON_CreateString(v ? v : "");

	if (!n)
		return -ENOMEM;
	if (cJSON_GetObjectItemCaseSensitive(o, key))
		cJSON_ReplaceItemInObjectCaseSensitive(o, key, n);
	else
		cJSON_AddItemToObject(o, key, n);
	return 0;
}

/* status.conditions, created when absent (an explicit null is replaced). */
static cJSON *conditions_for_write(cJSON *svm)
{
	cJSON *st = cJSON_GetObjectItemCaseSensitive(svm, "status"), *cs;

	if (!cJSON_IsObject(st)) {
		cJSON_DeleteItemFromObjectCaseSensitive(svm, "status");
		if (!(st = cJSON_AddObjectToObject(svm, "status")))
			return NULL;
	}
	cs = cJSON_GetObjectItemCaseSensitive(st, "conditions");
	if (!cJSON_IsArray(cs)) {
		cJSON_DeleteItemFromObjectCaseSensitive(st, "conditions");
		cs = cJSON_AddArrayToObject(st, "conditions");
	}
	return cs;
}

static int append_condition(cJSON *svm, const char *type, const char *status, const char *reason,
                            const char *message, const char *now, int64_t observed_gen)
{
	cJSON *cs = conditions_for_write(svm), *c;

	if (!cs || !(c = cJSON_CreateObject()))
		return -ENOMEM;
	cJSON_AddItemToArray(cs, c);
	if (set_str(c, "type", type) < 0 || set_str(c, "status", status) < 0)
		return -ENOMEM;
	if (observed_gen >= 0 &&
	    !cJSON_AddNumberToObject(c, "observedGeneration", (double)observed_gen))
		return -ENOMEM;
	if (set_str(c, "lastTransitionTime", now) < 0 || set_str(c, "reason", reason) < 0 ||
	    set_str(c, "message", message) < 0)
		return -ENOMEM;
	return 1;
}

int svm_set_condition(cJSON *svm, const char *type, const char *status, const char *reason,
                      const char *message, const char *now, int64_t observed_gen)
{
	cJSON *c = svm_cond_find(svm, type), *og;
	const char *s;
	bool changed = false;

	if (!c)
		return append_condition(svm, type, status, reason, message, now, observed_gen);
	s = str(c, "status");
	if (!s || strcmp(s, status)) {
		if (set_str(c, "status", status) < 0 || set_str(c, "lastTransitionTime", now) < 0)
			return -ENOMEM;
		changed = true;
	}
	s = str(c, "reason");
	if (!s || strcmp(s, reason)) {
		if (set_str(c, "reason", reason) < 0)
			return -ENOMEM;
		changed = true;
	}
	s = str(c, "message");
	if (!s || strcmp(s, message)) {
		if (set_str(c, "message", message) < 0)
			return -ENOMEM;
		changed = true;
	}
	og = cJSON_GetObjectItemCaseSensitive(c, "observedGeneration");
	{
		int64_t cur = cJSON_IsNumber(og) ? (int64_t)og->valuedouble : 0;
		int64_t want = observed_gen >= 0 ? observed_gen : 0;
		if (cur != want) {
			cJSON *n = cJSON_CreateNumber((double)want);
			if (!n)
				return -ENOMEM;
			if (og)
				cJSON_ReplaceItemInObjectCaseSensitive(c, "observedGeneration", n);
			else
				cJSON_AddItemToObject(c, "observedGeneration", n);
			changed = true;
		}
	}
	return changed;
}

int svm_add_condition_once(cJSON *svm, const char *type, const char *reason, const char *message,
                           const char *now)
{
	const char *s = str(svm_cond_find(svm, type), "status");

	if (s && (!strcmp(s, "True") || !strcmp(s, "False")))
		return 0;
	return append_condition(svm, type, "True", reason, message, now, -1);
}

/* compareSVM: creationTimestamp, then name. */
static int older(const cJSON *a, const cJSON *b)
{
	const cJSON *ma = cJSON_GetObjectItemCaseSensitive(a, "metadata");
	const cJSON *mb = cJSON_GetObjectItemCaseSensitive(b, "metadata");
	const char *ca = str(ma, "creationTimestamp"), *cb = str(mb, "creationTimestamp");
	kube_time_t ta = 0, tb = 0;
	const char *na = str(ma, "name"), *nb = str(mb, "name");

	if (ca)
		(void)kube_time_parse(ca, strlen(ca), &ta);
	if (cb)
		(void)kube_time_parse(cb, strlen(cb), &tb);
	if (ta != tb)
		return ta < tb ? -1 : 1;
	return strcmp(na ? na : "", nb ? nb : "");
}

long svm_runner_pick(cJSON *const *svms, size_t n, bool *cleanup)
{
	bool in_progress = false;
	long pick = -1;

	for (size_t i = 0; i < n; i++) {
		bool running = svm_cond_true(svms[i], SVM_COND_RUNNING);
		bool terminal = svm_terminal(svms[i]);

		cleanup[i] = running && terminal;
		if (running && !terminal)
			in_progress = true;
		else if (!running && !terminal && (pick < 0 || older(svms[i], svms[pick]) < 0))
			pick = (long)i;
	}
	return in_progress ? -1 : pick;
}

bool svm_retriable(int err)
{
	switch (err) {
	case -ECONNRESET: /* IsConnectionReset, IsHTTP2ConnectionLost */
	case -EPIPE:
	case -EAGAIN:    /* TooManyRequests */
	case -EHOSTDOWN: /* ServiceUnavailable */
	case -EREMOTEIO: /* InternalError */
	case -ETIMEDOUT: /* Timeout */
		return true;
	default:
		return false;
	}
}

bool svm_within_grace(const char *created, int64_t now)
{
	kube_time_t t;

	if (!created || kube_time_parse(created, strlen(created), &t) < 0)
		return false;
	return t / 1000000000 + SVM_UNKNOWN_GRACE_SEC > now;
}

int svm_spec_resource(const cJSON *svm, const char **group, const char **resource)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(svm, "spec"), "resource");
	const char *g = str(r, "group"), *res = str(r, "resource");

	if (!res || !*res)
		return -EINVAL;
	*group = g ? g : "";
	*resource = res;
	return 0;
}

int svm_gr_key(const char *group, const char *resource, char *buf, size_t len)
{
	int n = group && *group ? snprintf(buf, len, "%s.%s", resource, group)
	                        : snprintf(buf, len, "%s", resource);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int svm_gr_parse(const char *key, char *group, char *resource, size_t len)
{
	const char *dot = strchr(key, '.');
	size_t rl = dot ? (size_t)(dot - key) : strlen(key);

	if (!rl || rl >= len || (dot && strlen(dot + 1) >= len))
		return -EINVAL;
	memcpy(resource, key, rl);
	resource[rl] = 0;
	snprintf(group, len, "%s", dot ? dot + 1 : "");
	return 0;
}

void svm_gvr_string(char *buf, size_t len, const char *group, const char *version,
                    const char *resource)
{
	snprintf(buf, len, "%s/%s, Resource=%s", group ? group : "", version, resource);
}

int svm_find_resource(const cJSON *list, const char *resource, struct svm_api_resource *ret)
{
	const cJSON *r;

	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(list, "resources"))
	{
		const char *name = str(r, "name");
		const cJSON *v;
		bool upd = false, pat = false, lst = false;

		if (!name || strcmp(name, resource))
			continue;
		ret->namespaced = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "namespaced"));
		ret->kind = str(r, "kind");
		cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(r, "verbs"))
		{
			const char *s = cJSON_GetStringValue(v);
			if (!s)
				continue;
			upd |= !strcmp(s, "update");
			pat |= !strcmp(s, "patch");
			lst |= !strcmp(s, "list");
		}
		ret->migratable = upd && pat && lst;
		return 0;
	}
	return -ENOENT;
}

size_t svm_group_versions(const cJSON *group, const char **out, size_t max)
{
	const char *pref =
	        str(cJSON_GetObjectItemCaseSensitive(group, "preferredVersion"), "version");
	const cJSON *v;
	size_t n = 0;

	if (pref && *pref && n < max)
		out[n++] = pref;
	cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(group, "versions"))
	{
		const char *s = str(v, "version");
		if (!s || !*s || (pref && !strcmp(s, pref)) || n >= max)
			continue;
		out[n++] = s;
	}
	return n;
}

char *svm_patch_body(const char *api_version, const char *kind, const char *rv)
{
	cJSON *o = cJSON_CreateObject(), *m;
	char *s = NULL;

	if (!o)
		return NULL;
	if (cJSON_AddStringToObject(o, "apiVersion", api_version) &&
	    cJSON_AddStringToObject(o, "kind", kind) &&
	    (m = cJSON_AddObjectToObject(o, "metadata")) &&
	    (!rv || !*rv || cJSON_AddStringToObject(m, "resourceVersion", rv)))
		s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}
