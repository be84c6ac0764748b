/* SPDX-License-Identifier: Apache-2.0 */
/* kube/encode.c - request bodies, built with cJSON.
 *
 * cJSON keeps insertion order and prints compactly, so the byte layout of each patch is decided
 * here, in one place, by the order of the AddItem calls (upstream's order, see kube/encode.h).
 * Writes are rare next to reads, so the DOM cost does not matter here.
 */
#include "kube/encode.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline void cjson_freep(cJSON **p)
{
	cJSON_Delete(*p);
}
#define _cleanup_cjson_ __attribute__((cleanup(cjson_freep)))

static int finish(cJSON *root, char **ret)
{
	char *s = cJSON_PrintUnformatted(root);
	if (!s)
		return -ENOMEM;
	*ret = s;
	return 0;
}

/* Adds a string member; NULL adds nothing. Returns false on ENOMEM. */
static bool add_str(cJSON *o, const char *k, const char *v)
{
	return !v || cJSON_AddStringToObject(o, k, v) != NULL;
}

static bool add_bool(cJSON *o, const char *k, bool v)
{
	return cJSON_AddBoolToObject(o, k, v) != NULL;
}

static bool add_num(cJSON *o, const char *k, double v)
{
	return cJSON_AddNumberToObject(o, k, v) != NULL;
}

static bool add_time(cJSON *o, const char *k, kube_time_t t, bool micro)
{
	char buf[KUBE_TIME_BUF];
	if (!t)
		return cJSON_AddNullToObject(o, k) != NULL;
	if (micro)
		kube_microtime_format(t, buf);
	else
		kube_time_format(t, buf);
	return cJSON_AddStringToObject(o, k, buf) != NULL;
}

/* {apiVersion,kind,name,uid,controller?,blockOwnerDeletion?} in upstream's field order */
static cJSON *owner_ref_json(const struct kube_owner_ref *r, int block_override)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	int8_t block = block_override >= 0 ? (int8_t)block_override : r->block_owner_deletion;
	if (!add_str(o, "apiVersion", r->api_version ? r->api_version : "") ||
	    !add_str(o, "kind", r->kind ? r->kind : "") ||
	    !add_str(o, "name", r->name ? r->name : "") ||
	    !add_str(o, "uid", r->uid ? r->uid : "") ||
	    (r->controller >= 0 && !add_bool(o, "controller", r->controller)) ||
	    (block >= 0 && !add_bool(o, "blockOwnerDeletion", block))) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* The controller reference a created pod carries: complete, controller and blocking. */
static bool controller_ref_ok(const struct kube_owner_ref *ref)
{
	return ref->api_version && *ref->api_version && ref->kind && *ref->kind && ref->name &&
	       ref->uid && *ref->uid && ref->controller == 1 && ref->block_owner_deletion == 1;
}

/* What both pod encoders start with: kind, apiVersion and metadata.generateName from the owner's
 * name (as upstream's getPodsPrefix). 0 or -ENOMEM; *ret_pod owned by the caller. */
static int pod_frame(const char *owner_name, cJSON **ret_pod, cJSON **ret_meta)
{
	cJSON *pod = cJSON_CreateObject(), *meta;
	if (!pod || !add_str(pod, "kind", "Pod") || !add_str(pod, "apiVersion", "v1") ||
	    !(meta = cJSON_AddObjectToObject(pod, "metadata"))) {
		cJSON_Delete(pod);
		return -ENOMEM;
	}
	*ret_pod = pod;
	size_t nl = strlen(owner_name);
	char *prefix = malloc(nl + 2);
	if (!prefix)
		return -ENOMEM;
	memcpy(prefix, owner_name, nl);
	prefix[nl] = '-';
	prefix[nl + 1] = 0;
	if (nl + 1 > 253)
		prefix[nl] = 0; /* the dashed prefix would fail pod name validation */
	bool ok = add_str(meta, "generateName", prefix);
	free(prefix);
	if (!ok)
		return -ENOMEM;
	*ret_meta = meta;
	return 0;
}

/* metadata.ownerReferences: [ref]. 0 or -ENOMEM. */
static int add_controller_ref(cJSON *meta, const struct kube_owner_ref *ref)
{
	cJSON *refs = cJSON_AddArrayToObject(meta, "ownerReferences");
	cJSON *r = owner_ref_json(ref, -1);
	if (!refs || !r) {
		cJSON_Delete(r);
		return -ENOMEM;
	}
	cJSON_AddItemToArray(refs, r);
	return 0;
}

int kube_encode_pod_from_template(const char *template_json, size_t len, const char *owner_name,
                                  const struct kube_owner_ref *ref, char **ret)
{
	if (!template_json || !owner_name || !ref || !ret)
		return -EINVAL;
	if (!controller_ref_ok(ref))
		return -EINVAL;
	_cleanup_cjson_ cJSON *tmpl = cJSON_ParseWithLength(template_json, len);
	if (!tmpl)
		return -EBADMSG;
	if (!cJSON_IsObject(tmpl))
		return -EPROTO;
	cJSON *tmeta = cJSON_GetObjectItemCaseSensitive(tmpl, "metadata");
	cJSON *labels = tmeta ? cJSON_GetObjectItemCaseSensitive(tmeta, "labels") : NULL;
	cJSON *annotations = tmeta ? cJSON_GetObjectItemCaseSensitive(tmeta, "annotations") : NULL;
	cJSON *finalizers = tmeta ? cJSON_GetObjectItemCaseSensitive(tmeta, "finalizers") : NULL;
	cJSON *spec = cJSON_GetObjectItemCaseSensitive(tmpl, "spec");
	if (!cJSON_IsObject(labels) || !labels->child)
		return -EINVAL; /* "unable to create pods, no labels" */

	_cleanup_cjson_ cJSON *pod = NULL;
	cJSON *meta;
	if (pod_frame(owner_name, &pod, &meta) < 0)
		return -ENOMEM;
	cJSON_AddItemToObject(meta, "labels", cJSON_DetachItemViaPointer(tmeta, labels));
	if (cJSON_IsObject(annotations) && annotations->child)
		cJSON_AddItemToObject(meta, "annotations",
		                      cJSON_DetachItemViaPointer(tmeta, annotations));
	if (cJSON_IsArray(finalizers) && finalizers->child)
		cJSON_AddItemToObject(meta, "finalizers",
		                      cJSON_DetachItemViaPointer(tmeta, finalizers));
	if (add_controller_ref(meta, ref) < 0)
		return -ENOMEM;
	if (spec)
		cJSON_AddItemToObject(pod, "spec", cJSON_DetachItemViaPointer(tmpl, spec));
	else if (!cJSON_AddObjectToObject(pod, "spec"))
		return -ENOMEM;
	if (!cJSON_AddObjectToObject(pod, "status"))
		return -ENOMEM;
	return finish(pod, ret);
}

/* A span that is a non-empty JSON object ('{' then a member) or array ('[' then an item). */
static bool nonempty(const char *s, size_t n, char open, char close)
{
	size_t i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
		i++;
	if (i >= n || s[i] != open)
		return false;
	for (i++; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r')
			return s[i] != close;
	return false;
}

/* Adds the span as a raw (already JSON) member; false on ENOMEM. */
static bool add_raw(cJSON *o, const char *k, const char *s, size_t n)
{
	char *c = strndup(s, n);
	bool ok = c && cJSON_AddRawToObject(o, k, c) != NULL;
	free(c);
	return ok;
}

int kube_encode_pod_from_template_parts(const struct kube_template_parts *tp,
                                        const char *owner_name, const struct kube_owner_ref *ref,
                                        char **ret)
{
	if (!tp || !owner_name || !ref || !ret)
		return -EINVAL;
	if (!controller_ref_ok(ref))
		return -EINVAL;
	if (!tp->valid)
		return -EPROTO;
	if (!tp->labels || !nonempty(tp->labels, tp->labels_len, '{', '}'))
		return -EINVAL; /* "unable to create pods, no labels" */

	_cleanup_cjson_ cJSON *pod = NULL;
	cJSON *meta;
	if (pod_frame(owner_name, &pod, &meta) < 0)
		return -ENOMEM;
	if (!add_raw(meta, "labels", tp->labels, tp->labels_len))
		return -ENOMEM;
	if (tp->annotations && nonempty(tp->annotations, tp->annotations_len, '{', '}') &&
	    !add_raw(meta, "annotations", tp->annotations, tp->annotations_len))
		return -ENOMEM;
	if (tp->finalizers && nonempty(tp->finalizers, tp->finalizers_len, '[', ']') &&
	    !add_raw(meta, "finalizers", tp->finalizers, tp->finalizers_len))
		return -ENOMEM;
	if (add_controller_ref(meta, ref) < 0)
		return -ENOMEM;
	if (tp->spec ? !add_raw(pod, "spec", tp->spec, tp->spec_len)
	             : !cJSON_AddObjectToObject(pod, "spec"))
		return -ENOMEM;
	if (!cJSON_AddObjectToObject(pod, "status"))
		return -ENOMEM;
	return finish(pod, ret);
}

int kube_encode_adopt_patch(const struct kube_owner_ref *owner, const char *dependent_uid,
                            char **ret)
{
	if (!owner || !owner->uid || !owner->api_version || !owner->kind || !owner->name ||
	    !dependent_uid || !ret)
		return -EINVAL;
	struct kube_owner_ref r = *owner;
	r.controller = 1;
	r.block_owner_deletion = 1;
	_cleanup_cjson_ cJSON *root = cJSON_CreateObject();
	cJSON *meta, *refs, *o;
	if (!root || !(meta = cJSON_AddObjectToObject(root, "metadata")) ||
	    !(refs = cJSON_AddArrayToObject(meta, "ownerReferences")) ||
	    !(o = owner_ref_json(&r, -1)))
		return -ENOMEM;
	cJSON_AddItemToArray(refs, o);
	if (!add_str(meta, "uid", dependent_uid))
		return -ENOMEM;
	return finish(root, ret);
}

int kube_encode_release_patch(const char *dependent_uid, const char *const *owner_uids, size_t n,
                              char **ret)
{
	if (!dependent_uid || (!owner_uids && n) || !ret)
		return -EINVAL;
	_cleanup_cjson_ cJSON *root = cJSON_CreateObject();
	cJSON *meta, *refs;
	if (!root || !(meta = cJSON_AddObjectToObject(root, "metadata")) ||
	    !add_str(meta, "uid", dependent_uid) ||
	    !(refs = cJSON_AddArrayToObject(meta, "ownerReferences")))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (!owner_uids[i])
			return -EINVAL;
		cJSON *o = cJSON_CreateObject();
		if (!o)
			return -ENOMEM;
		cJSON_AddItemToArray(refs, o);
		if (!add_str(o, "$patch", "delete") || !add_str(o, "uid", owner_uids[i]))
			return -ENOMEM;
	}
	return finish(root, ret);
}

int kube_encode_unblock_patch(const char *dependent_uid, const struct kube_owner_ref *refs,
                              size_t n, char **ret)
{
	if (!dependent_uid || (!refs && n) || !ret)
		return -EINVAL;
	_cleanup_cjson_ cJSON *root = cJSON_CreateObject();
	cJSON *meta, *arr;
	if (!root || !(meta = cJSON_AddObjectToObject(root, "metadata")) ||
	    !add_str(meta, "uid", dependent_uid) ||
	    !(arr = cJSON_AddArrayToObject(meta, "ownerReferences")))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		cJSON *o = owner_ref_json(&refs[i], 0);
		if (!o)
			return -ENOMEM;
		cJSON_AddItemToArray(arr, o);
	}
	return finish(root, ret);
}

static int merge_patch_meta(const char *rv, cJSON **root, cJSON **meta)
{
	*root = cJSON_CreateObject();
	if (!*root || !(*meta = cJSON_AddObjectToObject(*root, "metadata")) ||
	    !add_str(*meta, "resourceVersion", rv))
		return -ENOMEM;
	return 0;
}

int kube_encode_finalizers_merge_patch(const char *rv, const char *const *finalizers, size_t n,
                                       char **ret)
{
	if (!rv || (!finalizers && n) || !ret)
		return -EINVAL;
	_cleanup_cjson_ cJSON *root = NULL;
	cJSON *meta, *arr;
	if (merge_patch_meta(rv, &root, &meta) < 0)
		return -ENOMEM;
	if (n == 0)
		return cJSON_AddNullToObject(meta, "finalizers") ? finish(root, ret) : -ENOMEM;
	if (!(arr = cJSON_AddArrayToObject(meta, "finalizers")))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		cJSON *s = finalizers[i] ? cJSON_CreateString(finalizers[i]) : NULL;
		if (!s)
			return finalizers[i] ? -ENOMEM : -EINVAL;
		cJSON_AddItemToArray(arr, s);
	}
	return finish(root, ret);
}

int kube_encode_owner_refs_merge_patch(const char *rv, const struct kube_owner_ref *refs, size_t n,
                                       char **ret)
{
	if (!rv || (!refs && n) || !ret)
		return -EINVAL;
	_cleanup_cjson_ cJSON *root = NULL;
	cJSON *meta, *arr;
	if (merge_patch_meta(rv, &root, &meta) < 0)
		return -ENOMEM;
	if (n == 0)
		return cJSON_AddNullToObject(meta, "ownerReferences") ? finish(root, ret) : -ENOMEM;
	if (!(arr = cJSON_AddArrayToObject(meta, "ownerReferences")))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		cJSON *o = owner_ref_json(&refs[i], -1);
		if (!o)
			return -ENOMEM;
		cJSON_AddItemToArray(arr, o);
	}
	return finish(root, ret);
}

/* ReplicaSetStatus in Go field order. As an object (PUT) zero ints are omitted (omitempty)
 * except replicas; as a merge patch (null_terminating) every counter is written, zeros too,
 * because a field absent from a merge patch keeps the server's old value. */
static cJSON *rs_status(const struct kube_rs_status *st, bool null_terminating)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	bool all = null_terminating;
	bool ok = add_num(o, "replicas", st->replicas);
	if (ok && (st->fully_labeled_replicas || all))
		ok = add_num(o, "fullyLabeledReplicas", st->fully_labeled_replicas);
	if (ok && (st->ready_replicas || all))
		ok = add_num(o, "readyReplicas", st->ready_replicas);
	if (ok && (st->available_replicas || all))
		ok = add_num(o, "availableReplicas", st->available_replicas);
	if (ok && st->has_terminating_replicas)
		ok = add_num(o, "terminatingReplicas", st->terminating_replicas);
	else if (ok && null_terminating)
		ok = cJSON_AddNullToObject(o, "terminatingReplicas") != NULL;
	if (ok && (st->observed_generation || all))
		ok = add_num(o, "observedGeneration", (double)st->observed_generation);
	if (ok && (st->n_conditions || null_terminating)) {
		cJSON *arr = st->n_conditions ? cJSON_AddArrayToObject(o, "conditions")
		                              : cJSON_AddNullToObject(o, "conditions");
		ok = arr != NULL;
		for (size_t i = 0; ok && i < st->n_conditions; i++) {
			const struct kube_condition *c = &st->conditions[i];
			cJSON *co = cJSON_CreateObject();
			if (!co) {
				ok = false;
				break;
			}
			cJSON_AddItemToArray(arr, co);
			ok = add_str(co, "type", c->type ? c->type : "") &&
			     add_str(co, "status", c->status ? c->status : "") &&
			     add_time(co, "lastTransitionTime", c->last_transition_time, false) &&
			     (!c->reason || !*c->reason || add_str(co, "reason", c->reason)) &&
			     (!c->message || !*c->message || add_str(co, "message", c->message));
		}
	}
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

int kube_encode_rs_status_json(const struct kube_rs_status *st, char **ret)
{
	if (!st || !ret)
		return -EINVAL;
	_cleanup_cjson_ cJSON *o = rs_status(st, false);
	if (!o)
		return -ENOMEM;
	return finish(o, ret);
}

int kube_encode_status_put(const char *object_json, size_t len, const char *status_json, char **ret)
{
	if (!object_json || !status_json || !ret)
		return -EINVAL;
	_cleanup_cjson_ cJSON *obj = cJSON_ParseWithLength(object_json, len);
	if (!obj)
		return -EBADMSG;
	if (!cJSON_IsObject(obj))
		return -EPROTO;
	cJSON *st = cJSON_Parse(status_json);
	if (!st)
		return -EBADMSG;
	if (cJSON_GetObjectItemCaseSensitive(obj, "status"))
		cJSON_ReplaceItemInObjectCaseSensitive(obj, "status", st);
	else
		cJSON_AddItemToObject(obj, "status", st);
	/* managedFields are not ours to send back; an absent list leaves the server's intact */
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	if (meta)
		cJSON_DeleteItemFromObjectCaseSensitive(meta, "managedFields");
	return finish(obj, ret);
}

int kube_encode_rs_status_merge_patch(const char *rv, const struct kube_rs_status *st, char **ret)
{
	if (!rv || !st || !ret)
		return -EINVAL;
	_cleanup_cjson_ cJSON *root = NULL;
	cJSON *meta, *s;
	if (merge_patch_meta(rv, &root, &meta) < 0 || !(s = rs_status(st, true)))
		return -ENOMEM;
	cJSON_AddItemToObject(root, "status", s);
	return finish(root, ret);
}

int kube_encode_lease(const char *ns, const char *name, const char *rv,
                      const struct kube_lease_spec *spec, char **ret)
{
	if (!ns || !name || !spec || !ret)
		return -EINVAL;
	_cleanup_cjson_ cJSON *root = cJSON_CreateObject();
	cJSON *meta, *sp;
	if (!root || !add_str(root, "kind", "Lease") ||
	    !add_str(root, "apiVersion", "coordination.k8s.io/v1") ||
	    !(meta = cJSON_AddObjectToObject(root, "metadata")) || !add_str(meta, "name", name) ||
	    !add_str(meta, "namespace", ns) || !add_str(meta, "resourceVersion", rv) ||
	    !(sp = cJSON_AddObjectToObject(root, "spec")) ||
	    !add_str(sp, "holderIdentity", spec->holder_identity ? spec->holder_identity : "") ||
	    !add_num(sp, "leaseDurationSeconds", spec->lease_duration_seconds) ||
	    !add_time(sp, "acquireTime", spec->acquire_time, true) ||
	    !add_time(sp, "renewTime", spec->renew_time, true) ||
	    !add_num(sp, "leaseTransitions", spec->lease_transitions) ||
	    (spec->strategy && *spec->strategy && !add_str(sp, "strategy", spec->strategy)) ||
	    (spec->preferred_holder && *spec->preferred_holder &&
	     !add_str(sp, "preferredHolder", spec->preferred_holder)))
		return -ENOMEM;
	return finish(root, ret);
}

int kube_encode_event(const struct kube_event *ev, char **ret)
{
	if (!ev || !ev->name || !ev->kind || !ev->reason || !ev->type || !ret)
		return -EINVAL;
	const char *ns = ev->ns && *ev->ns ? ev->ns : "default";
	size_t nl = strlen(ev->name) + 24;
	char *evname = malloc(nl);
	if (!evname)
		return -ENOMEM;
	snprintf(evname, nl, "%s.%llx", ev->name, (unsigned long long)ev->now);
	if (ev->event_name) {
		free(evname);
		if (!(evname = strdup(ev->event_name)))
			return -ENOMEM;
	}
	_cleanup_cjson_ cJSON *root = cJSON_CreateObject();
	cJSON *meta, *inv, *src;
	bool ok = root && add_str(root, "kind", "Event") && add_str(root, "apiVersion", "v1") &&
	          (meta = cJSON_AddObjectToObject(root, "metadata")) &&
	          add_str(meta, "name", evname) && add_str(meta, "namespace", ns) &&
	          (inv = cJSON_AddObjectToObject(root, "involvedObject")) &&
	          add_str(inv, "kind", ev->kind) &&
	          add_str(inv, "namespace", ev->ns && *ev->ns ? ev->ns : NULL) &&
	          add_str(inv, "name", ev->name) && add_str(inv, "uid", ev->uid) &&
	          add_str(inv, "apiVersion", ev->api_version) &&
	          add_str(inv, "resourceVersion", ev->resource_version) &&
	          add_str(root, "reason", ev->reason) &&
	          add_str(root, "message", ev->message ? ev->message : "") &&
	          (src = cJSON_AddObjectToObject(root, "source")) &&
	          add_str(src, "component", ev->component) && add_str(src, "host", ev->host) &&
	          add_time(root, "firstTimestamp", ev->first ? ev->first : ev->now, false) &&
	          add_time(root, "lastTimestamp", ev->now, false) &&
	          add_num(root, "count", ev->count > 1 ? ev->count : 1) &&
	          add_str(root, "type", ev->type) && cJSON_AddNullToObject(root, "eventTime") &&
	          add_str(root, "reportingComponent",
	                  ev->component && !ev->no_reporting ? ev->component : "") &&
	          add_str(root, "reportingInstance", ev->host && !ev->no_reporting ? ev->host : "");
	free(evname);
	if (!ok)
		return -ENOMEM;
	return finish(root, ret);
}
