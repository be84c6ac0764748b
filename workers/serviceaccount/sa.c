/* SPDX-License-Identifier: Apache-2.0 */
/* workers/serviceaccount/sa.c: the serviceaccount-controller's pure decisions (sa.h). */
#include "workers/serviceaccount/sa.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

const char *const sa_to_ensure[] = {SA_DEFAULT, NULL};

enum sa_action sa_decide(const char *ns_phase, bool sa_exists)
{
	/* a namespace gone from the cache, or not Active (Terminating): nothing to create */
	if (!ns_phase || strcmp(ns_phase, "Active") != 0)
		return SA_NOTHING;
	return sa_exists ? SA_NOTHING : SA_CREATE;
}

int sa_body(char *buf, size_t len, const char *ns, const char *name)
{
	int n = snprintf(buf, len,
	                 "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{"
	                 "\"name\":\"%s\",\"namespace\":\"%s\"}}",
	                 name, ns);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : n;
}

int sa_create_result(int err)
{
	/* -EEXIST: AlreadyExists; -ESHUTDOWN: Forbidden with the NamespaceTerminating cause */
	if (err == 0 || err == -EEXIST || err == -ESHUTDOWN)
		return 0;
	return err;
}

int sa_namespace_phase(const char *json, size_t len, char *buf, size_t buflen)
{
	cJSON *root = cJSON_ParseWithLength(json, len);
	const cJSON *st, *ph;
	int r = 0;

	if (!root)
		return -EBADMSG;
	st = cJSON_GetObjectItemCaseSensitive(root, "status");
	ph = cJSON_GetObjectItemCaseSensitive(st, "phase");
	const char *p = cJSON_IsString(ph) ? ph->valuestring : "";
	if (strlen(p) >= buflen)
		r = -ENAMETOOLONG;
	else
		memcpy(buf, p, strlen(p) + 1);
	cJSON_Delete(root);
	return r;
}
