/* SPDX-License-Identifier: Apache-2.0 */
/* workers/volumeprotection/protection.c: see protection.h. */
#include "workers/volumeprotection/protection.h"

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

static bool present(const cJSON *v)
{
	return v && !cJSON_IsNull(v);
}

int vp_object_parse(const char *json, size_t len, const char *finalizer, struct vp_object *ret)
{
	struct vp_object o = {.unused = -1};
	const cJSON *md, *v;

	memset(ret, 0, sizeof(*ret));
	ret->unused = -1;
	if (!json)
		return -EINVAL;
	o.json = cJSON_ParseWithLength(json, len);
	if (!o.json)
		return cJSON_GetErrorPtr() ? -EINVAL : -ENOMEM;
	md = get(o.json, "metadata");
	o.name = str(md, "name");
	if (!cJSON_IsObject(o.json) || !o.name) {
		cJSON_Delete(o.json);
		return -EINVAL;
	}
	o.ns = str(md, "namespace");
	o.uid = str(md, "uid");
	o.resource_version = str(md, "resourceVersion");
	o.deleting = present(get(md, "deletionTimestamp"));
	cJSON_ArrayForEach(v, get(md, "finalizers")) if (cJSON_IsString(v) &&
	                                                 !strcmp(v->valuestring, finalizer))
	        o.has_finalizer = true;
	cJSON_ArrayForEach(v, get(md, "ownerReferences")) if (cJSON_IsTrue(get(v, "controller")))
	{
		o.controller_uid = str(v, "uid");
		break;
	}
	const cJSON *st = get(o.json, "status");
	const char *phase = str(st, "phase");
	o.bound = phase && !strcmp(phase, "Bound");
	cJSON_ArrayForEach(v, get(st, "conditions"))
	{
		const char *t = str(v, "type"), *s = str(v, "status");
		if (t && !strcmp(t, VP_COND_UNUSED)) {
			o.unused = s && !strcmp(s, "True") ? 1 : s && !strcmp(s, "False") ? 0 : -1;
			break;
		}
	}
	*ret = o;
	return 0;
}

void vp_object_free(struct vp_object *o)
{
	if (o) {
		cJSON_Delete(o->json);
		memset(o, 0, sizeof(*o));
		o->unused = -1;
	}
}

bool vp_pvc_unused_managed(const struct vp_object *pvc, bool unused_gate)
{
	return unused_gate && !pvc->deleting && pvc->bound;
}

bool vp_pvc_wants_sync(const struct vp_object *pvc, bool unused_gate)
{
	return vp_need_to_add_finalizer(pvc) || vp_is_deletion_candidate(pvc) ||
	       (unused_gate && !pvc->deleting && pvc->unused < 0);
}

bool vp_pvc_pod_event_relevant(const struct vp_object *pvc, bool unused_gate)
{
	return vp_is_deletion_candidate(pvc) || vp_pvc_unused_managed(pvc, unused_gate);
}

static bool same(const char *a, const char *b)
{
	return (!a || !*a) ? (!b || !*b) : (b && !strcmp(a, b));
}

bool vp_pod_usage_changed(const struct kube_pod *old, const struct kube_pod *cur)
{
	return !same(old->meta.uid, cur->meta.uid) || !same(old->node_name, cur->node_name) ||
	       old->phase != cur->phase ||
	       old->meta.deletion_timestamp != cur->meta.deletion_timestamp ||
	       old->meta.has_deletion_grace_period_seconds !=
	               cur->meta.has_deletion_grace_period_seconds ||
	       old->meta.deletion_grace_period_seconds != cur->meta.deletion_grace_period_seconds;
}

/* notRunning: every status is waiting or terminated (an empty or absent list is) */
static bool not_running(const cJSON *statuses)
{
	const cJSON *s;

	cJSON_ArrayForEach(s, statuses)
	{
		const cJSON *state = get(s, "state");
		if (!present(get(state, "terminated")) && !present(get(state, "waiting")))
			return false;
	}
	return true;
}

bool vp_pod_terminated(const cJSON *pod)
{
	const cJSON *st = get(pod, "status");
	const char *phase = str(st, "phase");

	if (phase && (!strcmp(phase, "Failed") || !strcmp(phase, "Succeeded")))
		return true;
	return present(get(get(pod, "metadata"), "deletionTimestamp")) &&
	       not_running(get(st, "initContainerStatuses")) &&
	       not_running(get(st, "containerStatuses")) &&
	       not_running(get(st, "ephemeralContainerStatuses"));
}

bool vp_pod_shut_down(const cJSON *pod)
{
	const cJSON *md = get(pod, "metadata");
	const cJSON *g = get(md, "deletionGracePeriodSeconds");

	return present(get(md, "deletionTimestamp")) && cJSON_IsNumber(g) && g->valuedouble == 0;
}

/* ephemeral.VolumeClaimName(pod, volume) == pvc.Name && ephemeral.VolumeIsForPod(pod, pvc) */
static bool ephemeral_is(const cJSON *pod, const char *vol, const struct vp_object *pvc)
{
	const cJSON *md = get(pod, "metadata");
	const char *pname = str(md, "name"), *puid = str(md, "uid");
	size_t pl, vl;

	if (!pname || !vol)
		return false;
	pl = strlen(pname);
	vl = strlen(vol);
	if (strlen(pvc->name) != pl + 1 + vl || strncmp(pvc->name, pname, pl) != 0 ||
	    pvc->name[pl] != '-' || strcmp(pvc->name + pl + 1, vol) != 0)
		return false;
	/* the claim must be controlled by this pod (not a PVC that merely has the name) */
	return pvc->controller_uid && puid && !strcmp(pvc->controller_uid, puid);
}

bool vp_pod_uses_pvc(const cJSON *pod, const struct vp_object *pvc, enum vp_predicate p)
{
	const cJSON *spec = get(pod, "spec"), *v;
	const char *node = str(spec, "nodeName");
	bool shut_down = vp_pod_shut_down(pod);

	if (p == VP_FOR_DELETION) {
		/* only scheduled pods: kubelet sees a pod once it is scheduled and refuses to start
		 * one whose claim is being deleted */
		if (!node || !*node)
			return false;
	} else if (vp_pod_terminated(pod)) {
		return false;
	}
	cJSON_ArrayForEach(v, get(spec, "volumes"))
	{
		const char *claim = str(get(v, "persistentVolumeClaim"), "claimName");
		if (claim && !strcmp(claim, pvc->name))
			return true;
		if (!shut_down && present(get(v, "ephemeral")) &&
		    ephemeral_is(pod, str(v, "name"), pvc))
			return true;
	}
	return false;
}

const cJSON *vp_pods_using(const cJSON *pod_list, const struct vp_object *pvc, enum vp_predicate p)
{
	const cJSON *pod;

	cJSON_ArrayForEach(pod,
	                   get(pod_list, "items")) if (vp_pod_uses_pvc(pod, pvc, p)) return pod;
	return NULL;
}

/* o's object with its metadata.finalizers or status.conditions replaced by `list` (taken) */
static int print_with(const struct vp_object *o, const char *parent, const char *field, cJSON *list,
                      char **ret)
{
	cJSON *copy = cJSON_Duplicate(o->json, true);
	cJSON *p = copy ? cJSON_GetObjectItemCaseSensitive(copy, parent) : NULL;

	*ret = NULL;
	if (copy && !cJSON_IsObject(p)) {
		cJSON_DeleteItemFromObjectCaseSensitive(copy, parent);
		p = cJSON_AddObjectToObject(copy, parent);
	}
	if (!p) {
		cJSON_Delete(list);
		cJSON_Delete(copy);
		return -ENOMEM;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(p, field);
	if (!cJSON_AddItemToObject(p, field, list)) {
		cJSON_Delete(list);
		cJSON_Delete(copy);
		return -ENOMEM;
	}
	*ret = cJSON_PrintUnformatted(copy);
	cJSON_Delete(copy);
	return *ret ? 0 : -ENOMEM;
}

int vp_finalizer_update(const struct vp_object *o, const char *finalizer, bool add, char **ret)
{
	cJSON *list = cJSON_CreateArray(), *v;

	*ret = NULL;
	if (!list)
		return -ENOMEM;
	cJSON_ArrayForEach(v, get(get(o->json, "metadata"), "finalizers"))
	{
		if (!cJSON_IsString(v) || (!add && !strcmp(v->valuestring, finalizer)))
			continue;
		if (!cJSON_AddItemToArray(list, cJSON_CreateString(v->valuestring))) {
			cJSON_Delete(list);
			return -ENOMEM;
		}
	}
	if (add && !cJSON_AddItemToArray(list, cJSON_CreateString(finalizer))) {
		cJSON_Delete(list);
		return -ENOMEM;
	}
	return print_with(o, "metadata", "finalizers", list, ret);
}

int vp_unused_update(const struct vp_object *pvc, bool unused, kube_time_t now, char **ret)
{
	cJSON *list, *c, *v;
	char ts[KUBE_TIME_BUF];
	bool replaced = false;

	*ret = NULL;
	if (pvc->unused == (unused ? 1 : 0))
		return 0;
	kube_time_format(now, ts);
	list = cJSON_CreateArray();
	c = cJSON_CreateObject();
	if (!list || !c || !cJSON_AddStringToObject(c, "type", VP_COND_UNUSED) ||
	    !cJSON_AddStringToObject(c, "status", unused ? "True" : "False") ||
	    !cJSON_AddNullToObject(c, "lastProbeTime") ||
	    !cJSON_AddStringToObject(c, "lastTransitionTime", ts) ||
	    !cJSON_AddStringToObject(c, "reason", unused ? VP_REASON_UNUSED : VP_REASON_USED) ||
	    !cJSON_AddStringToObject(c, "message", unused ? VP_MESSAGE_UNUSED : VP_MESSAGE_USED)) {
		cJSON_Delete(c);
		cJSON_Delete(list);
		return -ENOMEM;
	}
	cJSON_ArrayForEach(v, get(get(pvc->json, "status"), "conditions"))
	{
		const char *t = str(v, "type");
		cJSON *item;
		if (t && !strcmp(t, VP_COND_UNUSED)) {
			if (replaced)
				continue; /* one Unused condition */
			item = c;
			c = NULL;
			replaced = true;
		} else {
			item = cJSON_Duplicate(v, true);
		}
		if (!item || !cJSON_AddItemToArray(list, item)) {
			cJSON_Delete(item);
			cJSON_Delete(c);
			cJSON_Delete(list);
			return -ENOMEM;
		}
	}
	if (c && !cJSON_AddItemToArray(list, c)) {
		cJSON_Delete(c);
		cJSON_Delete(list);
		return -ENOMEM;
	}
	return print_with(pvc, "status", "conditions", list, ret);
}

bool vp_vac_listed(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

static void vac_add(const char *names[static 3], size_t *n, const char *name)
{
	if (name && *name && *n < 3 && !vp_vac_listed(names, *n, name))
		names[(*n)++] = name;
}

size_t vp_vac_names(const cJSON *json, bool is_pvc, const char *names[static 3])
{
	const cJSON *st = get(json, "status");
	size_t n = 0;

	vac_add(names, &n, str(get(json, "spec"), "volumeAttributesClassName"));
	if (is_pvc) {
		vac_add(names, &n, str(st, "currentVolumeAttributesClassName"));
		vac_add(names, &n,
		        str(get(st, "modifyVolumeStatus"), "targetVolumeAttributesClassName"));
	}
	return n;
}
