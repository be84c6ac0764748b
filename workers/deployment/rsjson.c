/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/deployment/rsjson.c: a ReplicaSet as the shared cache's typed record holds it (a
 * struct kube_replicaset view, shm/record-model.h), rebuilt as the JSON subset sync.c reads of
 * a ReplicaSet: metadata (name, namespace, uid, generation, creation and deletion timestamps,
 * labels, every annotation, ownerReferences with their tri-states), spec.replicas,
 * spec.minReadySeconds, spec.template (the record keeps it verbatim) and the status counts.
 * docs/deployment.md.
 */
#include <cjson/cJSON.h>
#include <errno.h>

#include "kube/model.h"
#include "workers/deployment/rsjson.h"

static int add_kv(cJSON *parent, const char *name, const struct kube_kv *kv, uint32_t n)
{
	cJSON *o = cJSON_AddObjectToObject(parent, name);

	if (!o)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		if (kv[i].key &&
		    !cJSON_AddStringToObject(o, kv[i].key, kv[i].value ? kv[i].value : ""))
			return -ENOMEM;
	return 0;
}

static int add_time(cJSON *o, const char *name, kube_time_t t)
{
	char buf[KUBE_TIME_BUF];

	if (!t)
		return 0;
	if (kube_time_format(t, buf) < 0)
		return -EINVAL;
	return cJSON_AddStringToObject(o, name, buf) ? 0 : -ENOMEM;
}

int dp_rs_to_json(const struct kube_replicaset *rs, cJSON **ret)
{
	const struct kube_object_meta *m = &rs->meta;
	cJSON *o = cJSON_CreateObject(), *md, *spec, *st, *refs;
	int r = -ENOMEM;

	*ret = NULL;
	if (!o || !(md = cJSON_AddObjectToObject(o, "metadata")) ||
	    !(spec = cJSON_AddObjectToObject(o, "spec")) ||
	    !(st = cJSON_AddObjectToObject(o, "status")))
		goto fail;
	if (!cJSON_AddStringToObject(md, "name", m->name ? m->name : "") ||
	    !cJSON_AddStringToObject(md, "namespace", m->namespace ? m->namespace : "") ||
	    !cJSON_AddStringToObject(md, "uid", m->uid ? m->uid : "") ||
	    !cJSON_AddNumberToObject(md, "generation", (double)m->generation))
		goto fail;
	if ((r = add_time(md, "creationTimestamp", m->creation_timestamp)) < 0 ||
	    (r = add_time(md, "deletionTimestamp", m->deletion_timestamp)) < 0 ||
	    (r = add_kv(md, "labels", m->labels, m->n_labels)) < 0 ||
	    (r = add_kv(md, "annotations", m->annotations, m->n_annotations)) < 0)
		goto fail;
	r = -ENOMEM;
	if (!(refs = cJSON_AddArrayToObject(md, "ownerReferences")))
		goto fail;
	for (uint32_t i = 0; i < m->n_owner_refs; i++) {
		const struct kube_owner_ref *k = &m->owner_refs[i];
		cJSON *ref = cJSON_CreateObject();
		if (!ref || !cJSON_AddItemToArray(refs, ref))
			goto fail_ref;
		if ((k->api_version &&
		     !cJSON_AddStringToObject(ref, "apiVersion", k->api_version)) ||
		    (k->kind && !cJSON_AddStringToObject(ref, "kind", k->kind)) ||
		    (k->name && !cJSON_AddStringToObject(ref, "name", k->name)) ||
		    (k->uid && !cJSON_AddStringToObject(ref, "uid", k->uid)) ||
		    (k->controller >= 0 &&
		     !cJSON_AddBoolToObject(ref, "controller", k->controller)) ||
		    (k->block_owner_deletion >= 0 &&
		     !cJSON_AddBoolToObject(ref, "blockOwnerDeletion", k->block_owner_deletion)))
			goto fail;
		continue;
	fail_ref:
		cJSON_Delete(ref);
		goto fail;
	}
	/* spec.replicas: the record holds the API default (1) when it is absent */
	if (!cJSON_AddNumberToObject(spec, "replicas", rs->spec_replicas) ||
	    !cJSON_AddNumberToObject(spec, "minReadySeconds", rs->min_ready_seconds))
		goto fail;
	if (rs->template_json && rs->template_json_len) {
		cJSON *t = cJSON_ParseWithLength(rs->template_json, rs->template_json_len);
		if (!t) {
			r = -EBADMSG;
			goto fail;
		}
		cJSON_AddItemToObject(spec, "template", t);
	}
	if (!cJSON_AddNumberToObject(st, "replicas", rs->status.replicas) ||
	    !cJSON_AddNumberToObject(st, "readyReplicas", rs->status.ready_replicas) ||
	    !cJSON_AddNumberToObject(st, "availableReplicas", rs->status.available_replicas) ||
	    !cJSON_AddNumberToObject(st, "observedGeneration",
	                             (double)rs->status.observed_generation))
		goto fail;
	if (rs->status.has_terminating_replicas &&
	    !cJSON_AddNumberToObject(st, "terminatingReplicas", rs->status.terminating_replicas))
		goto fail;
	*ret = o;
	return 0;
fail:
	cJSON_Delete(o);
	return r;
}
