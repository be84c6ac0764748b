/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/legacysatoken/lsa.c: the legacy service account token cleaner's decisions (lsa.h).
 */
#include "workers/legacysatoken/lsa.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "kube/model.h"

#define DAY_NS (86400ll * 1000000000ll)

void lsa_date(int64_t t_ns, char buf[11])
{
	time_t s = (time_t)(t_ns / 1000000000ll - (t_ns % 1000000000ll < 0));
	struct tm tm;
	gmtime_r(&s, &tm);
	strftime(buf, 11, "%Y-%m-%d", &tm);
}

/* time.Parse("2006-01-02", s): 0 with the day's midnight, or -EINVAL */
static int parse_date(const char *s, int64_t *ret)
{
	char full[32];
	kube_time_t t;

	if (!s || strlen(s) != 10 || s[4] != '-' || s[7] != '-')
		return -EINVAL;
	snprintf(full, sizeof(full), "%sT00:00:00Z", s);
	if (kube_time_parse(full, strlen(full), &t) < 0)
		return -EINVAL;
	*ret = t;
	return 0;
}

static const char *str_at(const cJSON *o, const char *a, const char *b)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);
	if (b)
		v = cJSON_GetObjectItemCaseSensitive(v, b);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

int lsa_tracking_ready(const char *cm_json, size_t len, int64_t now_ns, int64_t period_ns)
{
	cJSON *cm = cJSON_ParseWithLength(cm_json, len);
	int64_t since;
	int r = -EINVAL;

	if (parse_date(str_at(cJSON_GetObjectItemCaseSensitive(cm, "data"), "since", NULL),
	               &since) == 0)
		r = now_ns < since + DAY_NS + period_ns ? 0 : 1;
	cJSON_Delete(cm);
	return r;
}

static const char *label(const cJSON *s, const char *key)
{
	return str_at(cJSON_GetObjectItemCaseSensitive(
	                      cJSON_GetObjectItemCaseSensitive(s, "metadata"), "labels"),
	              key, NULL);
}

int lsa_candidate(const char *secret_json, size_t len, int64_t now_ns, int64_t period_ns,
                  char *sa_name, size_t name_len, char *sa_uid, size_t uid_len)
{
	cJSON *s = cJSON_ParseWithLength(secret_json, len);
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(s, "metadata");
	const char *type = str_at(s, "type", NULL),
	           *created = str_at(meta, "creationTimestamp", NULL), *used, *name;
	char preserve_used[11];
	kube_time_t ct;
	int64_t d;
	int r = 0;

	if (!type || strcmp(type, "kubernetes.io/service-account-token") != 0 || !created ||
	    kube_time_parse(created, strlen(created), &ct) < 0 || !(ct < now_ns - period_ns) ||
	    cJSON_GetObjectItemCaseSensitive(meta, "deletionTimestamp"))
		goto out;
	lsa_date(now_ns - period_ns, preserve_used);
	if ((used = label(s, LSA_LAST_USED))) {
		if (parse_date(used, &d) < 0 || strcmp(used, preserve_used) >= 0)
			goto out; /* malformed (logged upstream), or used recently */
	}
	const cJSON *ann = cJSON_GetObjectItemCaseSensitive(meta, "annotations");
	if (!(name = str_at(ann, "kubernetes.io/service-account.name", NULL)) || !*name)
		goto out; /* no ServiceAccount: cannot tell it was generated */
	snprintf(sa_name, name_len, "%s", name);
	const char *uid = str_at(ann, "kubernetes.io/service-account.uid", NULL);
	snprintf(sa_uid, uid_len, "%s", uid ? uid : "");
	r = 1;
out:
	cJSON_Delete(s);
	return r;
}

bool lsa_sa_references(const char *sa_json, size_t len, const char *uid, const char *secret_name)
{
	cJSON *sa = cJSON_ParseWithLength(sa_json, len);
	const char *sa_uid = str_at(sa, "metadata", "uid");
	const cJSON *e;
	bool r = false;

	if (uid && *uid && (!sa_uid || strcmp(uid, sa_uid) != 0))
		goto out;
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(sa, "secrets"))
	{
		const char *n = str_at(e, "name", NULL);
		if (n && !strcmp(n, secret_name)) {
			r = true;
			break;
		}
	}
out:
	cJSON_Delete(sa);
	return r;
}

static void name_of(const cJSON *o, const char *field, void (*fn)(const char *, void *), void *ud)
{
	const char *n = str_at(o, field, NULL);
	if (n && *n)
		fn(n, ud);
}

void lsa_pod_secret_names(const char *pod_json, size_t len, void (*fn)(const char *, void *),
                          void *ud)
{
	cJSON *pod = cJSON_ParseWithLength(pod_json, len);
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(pod, "spec"), *e, *c, *v;
	static const char *const kinds[] = {"initContainers", "containers", "ephemeralContainers"};
	/* volume sources whose secretRef names a Secret */
	static const char *const refs[] = {"cephfs",  "cinder", "flexVolume", "rbd",
	                                   "scaleIO", "iscsi",  "storageos"};

	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(spec, "imagePullSecrets"))
	        name_of(e, "name", fn, ud);
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(spec, kinds[k]))
		{
			cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(c, "envFrom"))
			        name_of(cJSON_GetObjectItemCaseSensitive(e, "secretRef"), "name",
			                fn, ud);
			cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(c, "env"))
			        name_of(cJSON_GetObjectItemCaseSensitive(
			                        cJSON_GetObjectItemCaseSensitive(e, "valueFrom"),
			                        "secretKeyRef"),
			                "name", fn, ud);
		}
	cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(spec, "volumes"))
	{
		name_of(cJSON_GetObjectItemCaseSensitive(v, "azureFile"), "secretName", fn, ud);
		name_of(cJSON_GetObjectItemCaseSensitive(v, "secret"), "secretName", fn, ud);
		for (size_t k = 0; k < sizeof(refs) / sizeof(refs[0]); k++)
			name_of(cJSON_GetObjectItemCaseSensitive(
			                cJSON_GetObjectItemCaseSensitive(v, refs[k]), "secretRef"),
			        "name", fn, ud);
		name_of(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(v, "csi"),
		                                         "nodePublishSecretRef"),
		        "name", fn, ud);
		cJSON_ArrayForEach(
		        e, cJSON_GetObjectItemCaseSensitive(
		                   cJSON_GetObjectItemCaseSensitive(v, "projected"), "sources"))
		        name_of(cJSON_GetObjectItemCaseSensitive(e, "secret"), "name", fn, ud);
	}
	cJSON_Delete(pod);
}

enum lsa_action lsa_final(const char *secret_json, size_t len, int64_t now_ns, int64_t period_ns,
                          char date[11])
{
	cJSON *s = cJSON_ParseWithLength(secret_json, len);
	const char *since = s ? label(s, LSA_INVALID_SINCE) : NULL;
	char preserve_used[11];
	enum lsa_action a;
	int64_t d;

	lsa_date(now_ns - period_ns, preserve_used);
	if (parse_date(since, &d) < 0) {
		lsa_date(now_ns, date);
		a = LSA_LABEL;
	} else {
		a = strcmp(since, preserve_used) >= 0 ? LSA_KEEP : LSA_DELETE;
	}
	cJSON_Delete(s);
	return a;
}
