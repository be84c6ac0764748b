/* SPDX-License-Identifier: Apache-2.0 */
/* workers/volumeprotection/ephemeral.c: see ephemeral.h. */
#include "workers/volumeprotection/ephemeral.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cJSON *get(const cJSON *o, const char *k)
{
	return o ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = get(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

int ev_claim_name(const char *pod, const char *volume, char *buf, size_t n)
{
	int l = snprintf(buf, n, "%s-%s", pod ? pod : "", volume ? volume : "");
	if (l < 0 || (size_t)l >= n) {
		if (n)
			buf[0] = 0;
		return -ENAMETOOLONG;
	}
	return l;
}

int ev_volume_is_for_pod(const cJSON *pod, const struct vp_object *pvc, char *msg, size_t n)
{
	const cJSON *md = get(pod, "metadata");
	const char *ns = str(md, "namespace"), *name = str(md, "name"), *uid = str(md, "uid");
	const char *pns = pvc->ns ? pvc->ns : "";

	if (ns && !strcmp(pns, ns) && uid && pvc->controller_uid &&
	    !strcmp(pvc->controller_uid, uid))
		return 0;
	snprintf(msg, n, "PVC %s/%s was not created for pod %s/%s (pod is not owner)", pns,
	         pvc->name, ns ? ns : "", name ? name : "");
	return -EEXIST;
}

static bool add_copy(cJSON *to, const char *key, const cJSON *from)
{
	cJSON *c;

	if (!from || cJSON_IsNull(from))
		return true;
	c = cJSON_Duplicate(from, true);
	return c && cJSON_AddItemToObject(to, key, c);
}

int ev_claim_body(const cJSON *pod, const cJSON *vol, char **ret)
{
	const cJSON *md = get(pod, "metadata");
	const char *pname = str(md, "name"), *uid = str(md, "uid"), *vname = str(vol, "name");
	const cJSON *tmpl = get(get(vol, "ephemeral"), "volumeClaimTemplate");
	cJSON *b = NULL, *m, *owners, *o;
	char name[512];
	int r = -ENOMEM;

	*ret = NULL;
	if (!pname || !uid || !vname || !cJSON_IsObject(tmpl))
		return -EINVAL;
	if (ev_claim_name(pname, vname, name, sizeof(name)) < 0)
		return -ENAMETOOLONG;
	if (!(b = cJSON_CreateObject()) || !cJSON_AddStringToObject(b, "apiVersion", "v1") ||
	    !cJSON_AddStringToObject(b, "kind", "PersistentVolumeClaim") ||
	    !(m = cJSON_AddObjectToObject(b, "metadata")) ||
	    !cJSON_AddStringToObject(m, "name", name) ||
	    !(owners = cJSON_AddArrayToObject(m, "ownerReferences")) ||
	    !(o = cJSON_CreateObject()) || !cJSON_AddItemToArray(owners, o) ||
	    !cJSON_AddStringToObject(o, "apiVersion", "v1") ||
	    !cJSON_AddStringToObject(o, "kind", "Pod") ||
	    !cJSON_AddStringToObject(o, "name", pname) || !cJSON_AddStringToObject(o, "uid", uid) ||
	    !cJSON_AddTrueToObject(o, "controller") ||
	    !cJSON_AddTrueToObject(o, "blockOwnerDeletion") ||
	    !add_copy(m, "annotations", get(get(tmpl, "metadata"), "annotations")) ||
	    !add_copy(m, "labels", get(get(tmpl, "metadata"), "labels")) ||
	    !add_copy(b, "spec", get(tmpl, "spec")))
		goto out;
	if ((*ret = cJSON_PrintUnformatted(b)))
		r = 0;
out:
	cJSON_Delete(b);
	return r;
}
