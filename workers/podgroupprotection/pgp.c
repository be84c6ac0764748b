/* SPDX-License-Identifier: Apache-2.0 */
/* workers/podgroupprotection/pgp.c: see pgp.h. */
#include "workers/podgroupprotection/pgp.h"

#include <errno.h>
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

int pgp_group_parse(const char *json, size_t len, struct pgp_group *ret)
{
	struct pgp_group g = {0};
	const cJSON *md, *v, *dt;

	memset(ret, 0, sizeof(*ret));
	if (!json)
		return -EINVAL;
	g.json = cJSON_ParseWithLength(json, len);
	if (!g.json)
		return cJSON_GetErrorPtr() ? -EINVAL : -ENOMEM;
	md = get(g.json, "metadata");
	g.name = str(md, "name");
	if (!cJSON_IsObject(g.json) || !g.name) {
		cJSON_Delete(g.json);
		return -EINVAL;
	}
	g.ns = str(md, "namespace");
	g.uid = str(md, "uid");
	dt = get(md, "deletionTimestamp");
	g.deleting = dt && !cJSON_IsNull(dt);
	cJSON_ArrayForEach(v, get(md, "finalizers"))
	{
		if (cJSON_IsString(v) && !strcmp(v->valuestring, PGP_FINALIZER))
			g.has_finalizer = true;
	}
	*ret = g;
	return 0;
}

void pgp_group_free(struct pgp_group *g)
{
	if (g) {
		cJSON_Delete(g->json);
		memset(g, 0, sizeof(*g));
	}
}

bool pgp_pod_terminated(const cJSON *pod)
{
	const char *phase = str(get(pod, "status"), "phase");
	return phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"));
}

const char *pgp_pod_group_name(const cJSON *pod)
{
	return str(get(get(pod, "spec"), "schedulingGroup"), "podGroupName");
}

bool pgp_pod_active_for(const cJSON *pod, const char *ns, const char *name)
{
	const char *pg = pgp_pod_group_name(pod);
	const char *pns = str(get(pod, "metadata"), "namespace");

	if (!pg || !name || strcmp(pg, name) || pgp_pod_terminated(pod))
		return false;
	/* the index key is "<pod namespace>/<podGroupName>": a pod of another namespace never
	 * matches (a namespaced LIST holds none, but a PodList of any origin may) */
	return !pns || !ns || !strcmp(pns, ns);
}

const cJSON *pgp_first_active_pod(const cJSON *pod_list, const char *ns, const char *name)
{
	const cJSON *pod;

	cJSON_ArrayForEach(pod, get(pod_list, "items"))
	{
		if (pgp_pod_active_for(pod, ns, name))
			return pod;
	}
	return NULL;
}

enum pgp_action pgp_decide(const struct pgp_group *g, const cJSON *pod_list)
{
	if (!pgp_is_deletion_candidate(g))
		return PGP_NOTHING;
	return pgp_first_active_pod(pod_list, g->ns, g->name) ? PGP_KEEP : PGP_REMOVE;
}

static bool same_uid(const char *a, const char *b)
{
	return (!a || !*a) ? (!b || !*b) : (b && !strcmp(a, b));
}

unsigned pgp_pod_event(const struct pgp_pod_state *old, const struct pgp_pod_state *cur)
{
	unsigned look = 0;

	if (cur && pgp_phase_terminated(cur->phase))
		look |= PGP_LOOK_NEW;
	/* an update may hide the deletion of a pod and the creation of another of the same name:
	 * the old one may have been the last active pod of its group */
	if (cur && old && !same_uid(old->uid, cur->uid))
		look |= PGP_LOOK_OLD;
	if (!cur && old)
		look |= PGP_LOOK_OLD;
	return look;
}

int pgp_finalizer_remove(const struct pgp_group *g, char **ret)
{
	cJSON *copy, *md, *fin, *kept;
	const cJSON *v;

	*ret = NULL;
	copy = cJSON_Duplicate(g->json, true);
	if (!copy)
		return -ENOMEM;
	md = cJSON_GetObjectItemCaseSensitive(copy, "metadata");
	fin = cJSON_GetObjectItemCaseSensitive(md, "finalizers");
	kept = cJSON_CreateArray();
	if (!kept)
		goto nomem;
	cJSON_ArrayForEach(v, fin)
	{
		cJSON *c;
		if (cJSON_IsString(v) && !strcmp(v->valuestring, PGP_FINALIZER))
			continue;
		if (!(c = cJSON_Duplicate(v, true)) || !cJSON_AddItemToArray(kept, c)) {
			cJSON_Delete(c);
			cJSON_Delete(kept);
			goto nomem;
		}
	}
	if (md && fin) {
		if (!cJSON_ReplaceItemInObjectCaseSensitive(md, "finalizers", kept)) {
			cJSON_Delete(kept);
			goto nomem;
		}
	} else {
		cJSON_Delete(kept);
	}
	*ret = cJSON_PrintUnformatted(copy);
	cJSON_Delete(copy);
	return *ret ? 0 : -ENOMEM;
nomem:
	cJSON_Delete(copy);
	return -ENOMEM;
}
