/* SPDX-License-Identifier: Apache-2.0 */
/* workers/deployment/match.c - label selector matching over cJSON (match.h). */
#include "workers/deployment/match.h"

#include <string.h>

static const cJSON *member(const cJSON *o, const char *k)
{
	return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

static const char *label(const cJSON *labels, const char *k)
{
	const cJSON *v = member(labels, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool requirement_holds(const cJSON *req, const cJSON *labels)
{
	const cJSON *k = member(req, "key"), *op = member(req, "operator"), *x;
	bool in = false;

	if (!cJSON_IsString(k) || !cJSON_IsString(op))
		return false;
	const char *v = label(labels, k->valuestring);
	cJSON_ArrayForEach(x, member(req, "values"))
	{
		if (v && cJSON_IsString(x) && strcmp(x->valuestring, v) == 0)
			in = true;
	}
	if (strcmp(op->valuestring, "In") == 0)
		return in;
	if (strcmp(op->valuestring, "NotIn") == 0)
		return !in;
	if (strcmp(op->valuestring, "Exists") == 0)
		return v != NULL;
	if (strcmp(op->valuestring, "DoesNotExist") == 0)
		return v == NULL;
	return false;
}

bool dp_selector_matches(const cJSON *sel, const cJSON *labels)
{
	const cJSON *it;
	int n = 0;

	if (!cJSON_IsObject(sel))
		return false;
	cJSON_ArrayForEach(it, member(sel, "matchLabels"))
	{
		const char *v = label(labels, it->string);
		if (!v || !cJSON_IsString(it) || strcmp(v, it->valuestring) != 0)
			return false;
		n++;
	}
	cJSON_ArrayForEach(it, member(sel, "matchExpressions"))
	{
		if (!requirement_holds(it, labels))
			return false;
		n++;
	}
	return n > 0;
}
