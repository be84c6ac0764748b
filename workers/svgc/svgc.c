/* SPDX-License-Identifier: Apache-2.0 */
/* workers/svgc/svgc.c: see svgc.h. */
#include "workers/svgc/svgc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static cJSON *get(const cJSON *o, const char *k)
{
	return o ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = get(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

bool svgc_is_identity_lease(const cJSON *lease, bool check_ns)
{
	const cJSON *md = get(lease, "metadata");
	const char *ns = str(md, "namespace");
	const char *v = str(get(md, "labels"), SVGC_IDENTITY_LABEL);

	if (check_ns && (!ns || strcmp(ns, SVGC_LEASE_NS)))
		return false;
	return v && !strcmp(v, SVGC_KUBE_APISERVER);
}

static cJSON *entries(const cJSON *sv)
{
	cJSON *e = get(get(sv, "status"), "storageVersions");
	return cJSON_IsArray(e) ? e : NULL;
}

const char *svgc_entry_id(const cJSON *sv, size_t i)
{
	cJSON *e = entries(sv);
	const cJSON *it;
	const char *id;

	if (!e || i >= (size_t)cJSON_GetArraySize(e))
		return NULL;
	it = cJSON_GetArrayItem(e, (int)i);
	id = str(it, "apiServerID");
	return id ? id : "";
}

size_t svgc_drop_entries(cJSON *sv, bool (*drop)(const char *id, void *ud), void *ud,
                         size_t *ret_left)
{
	cJSON *e = entries(sv);
	size_t removed = 0;
	int i;

	if (ret_left)
		*ret_left = 0;
	if (!e)
		return 0;
	for (i = cJSON_GetArraySize(e) - 1; i >= 0; i--) {
		const char *id = str(cJSON_GetArrayItem(e, i), "apiServerID");
		if (drop(id ? id : "", ud)) {
			cJSON_DeleteItemFromArray(e, i);
			removed++;
		}
	}
	if (ret_left)
		*ret_left = (size_t)cJSON_GetArraySize(e);
	return removed;
}

static int set_str(cJSON *o, const char *k, const char *v)
{
	cJSON *n = cJSON_CreateString(v);

	if (!n)
		return -ENOMEM;
	if (get(o, k))
		cJSON_ReplaceItemInObjectCaseSensitive(o, k, n);
	else
		cJSON_AddItemToObject(o, k, n);
	return 0;
}

int svgc_set_common_encoding(cJSON *sv, const char *now)
{
	cJSON *status = get(sv, "status"), *e, *conds, *c = NULL, *it;
	const char *old_common, *first = NULL, *new_common = NULL;
	char old_buf[256] = "";
	bool had_old, agreed = true, force, changed;
	const cJSON *gen;
	double generation = 0;
	int r = 0;

	if (!cJSON_IsObject(status)) {
		cJSON_DeleteItemFromObjectCaseSensitive(sv, "status");
		if (!(status = cJSON_AddObjectToObject(sv, "status")))
			return -ENOMEM;
	}
	old_common = str(status, "commonEncodingVersion");
	had_old = old_common != NULL;
	if (had_old)
		snprintf(old_buf, sizeof(old_buf), "%s", old_common);
	e = entries(sv);
	if (e && cJSON_GetArraySize(e) > 0) {
		cJSON_ArrayForEach(it, e)
		{
			const char *v = str(it, "encodingVersion");
			if (!v)
				v = "";
			if (!first)
				first = v;
			else if (strcmp(first, v)) {
				agreed = false;
				break;
			}
		}
		if (agreed)
			new_common = first;
	}
	if (new_common) {
		/* first points into the tree: copy before replacing anything */
		char nb[256];
		snprintf(nb, sizeof(nb), "%s", new_common);
		if ((r = set_str(status, "commonEncodingVersion", nb)) < 0)
			return r;
		new_common = str(status, "commonEncodingVersion");
	} else {
		cJSON_DeleteItemFromObjectCaseSensitive(status, "commonEncodingVersion");
	}
	force = had_old && new_common && strcmp(old_buf, new_common);

	gen = get(get(sv, "metadata"), "generation");
	if (cJSON_IsNumber(gen))
		generation = gen->valuedouble;
	conds = get(status, "conditions");
	if (!cJSON_IsArray(conds)) {
		cJSON_DeleteItemFromObjectCaseSensitive(status, "conditions");
		if (!(conds = cJSON_AddArrayToObject(status, "conditions")))
			return -ENOMEM;
	}
	cJSON_ArrayForEach(it, conds)
	{
		const char *t = str(it, "type");
		if (t && !strcmp(t, SVGC_CONDITION)) {
			c = it;
			break;
		}
	}
	const char *want = new_common ? "True" : "False";
	if (!c) {
		if (!(c = cJSON_CreateObject()))
			return -ENOMEM;
		cJSON_AddItemToArray(conds, c);
		if (!cJSON_AddStringToObject(c, "type", SVGC_CONDITION))
			return -ENOMEM;
		changed = true;
	} else {
		const char *s = str(c, "status");
		changed = !s || strcmp(s, want);
	}
	if ((r = set_str(c, "status", want)) < 0 ||
	    (r = set_str(c, "reason",
	                 new_common ? "CommonEncodingVersionSet" : "CommonEncodingVersionUnset")) <
	            0 ||
	    (r = set_str(c, "message",
	                 new_common ? "Common encoding version set"
	                            : "Common encoding version unset")) < 0)
		return r;
	if (changed || force)
		if ((r = set_str(c, "lastTransitionTime", now)) < 0)
			return r;
	cJSON_DeleteItemFromObjectCaseSensitive(c, "observedGeneration");
	if (generation != 0 && !cJSON_AddNumberToObject(c, "observedGeneration", generation))
		return -ENOMEM;
	return 0;
}
