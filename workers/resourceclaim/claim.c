/* SPDX-License-Identifier: Apache-2.0 */
/* workers/resourceclaim/claim.c: see claim.h. */
#include "workers/resourceclaim/claim.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = get(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const char *nz(const char *s)
{
	return s ? s : "";
}

int rc_claim_name(const cJSON *pod, const cJSON *pod_claim, const char **ret_name,
                  bool *ret_check_owner, char *msg, size_t n)
{
	const char *pc = str(pod_claim, "name"), *direct = str(pod_claim, "resourceClaimName");
	const cJSON *st;

	*ret_name = NULL;
	*ret_check_owner = false;
	if (direct) {
		*ret_name = direct;
		return 0;
	}
	if (!str(pod_claim, "resourceClaimTemplateName")) {
		snprintf(msg, n,
		         "pod \"%s/%s\", spec.resourceClaim \"%s\": none of the supported "
		         "fields are set",
		         nz(str(get(pod, "metadata"), "namespace")),
		         nz(str(get(pod, "metadata"), "name")), nz(pc));
		return -EINVAL;
	}
	cJSON_ArrayForEach(st, get(get(pod, "status"), "resourceClaimStatuses"))
	{
		const char *sn = str(st, "name");
		if (!sn || !pc || strcmp(sn, pc))
			continue;
		*ret_name = str(st, "resourceClaimName"); /* NULL: not needed */
		*ret_check_owner = true;
		return 0;
	}
	snprintf(msg, n, "pod \"%s/%s\": ResourceClaim not created yet",
	         nz(str(get(pod, "metadata"), "namespace")), nz(str(get(pod, "metadata"), "name")));
	return -ENOENT;
}

static const cJSON *controller_ref(const cJSON *obj)
{
	const cJSON *o;
	cJSON_ArrayForEach(o, get(get(obj, "metadata"), "ownerReferences"))
	{
		if (cJSON_IsTrue(get(o, "controller")))
			return o;
	}
	return NULL;
}

int rc_is_for_pod(const cJSON *pod, const cJSON *claim, char *msg, size_t n)
{
	const cJSON *pm = get(pod, "metadata"), *cm = get(claim, "metadata");
	const cJSON *ref = controller_ref(claim);
	const char *uid = str(pm, "uid"), *ruid = str(ref, "uid");

	if (strcmp(nz(str(cm, "namespace")), nz(str(pm, "namespace")))) {
		snprintf(msg, n, "ResourceClaim %s/%s is not in the same namespace as Pod %s/%s",
		         nz(str(cm, "namespace")), nz(str(cm, "name")), nz(str(pm, "namespace")),
		         nz(str(pm, "name")));
		return -EEXIST;
	}
	if (uid && ruid && !strcmp(uid, ruid))
		return 0;
	snprintf(msg, n, "ResourceClaim %s/%s was not created for Pod %s/%s (Pod is not owner)",
	         nz(str(cm, "namespace")), nz(str(cm, "name")), nz(str(pm, "namespace")),
	         nz(str(pm, "name")));
	return -EEXIST;
}

bool rc_is_reserved_for_pod(const char *pod_uid, const cJSON *claim)
{
	const cJSON *e;
	cJSON_ArrayForEach(e, get(get(claim, "status"), "reservedFor"))
	{
		const char *u = str(e, "uid");
		if (pod_uid && u && !strcmp(u, pod_uid))
			return true;
	}
	return false;
}

bool rc_can_be_reserved(const cJSON *claim)
{
	(void)claim; /* no limit on sharing in v1.37 */
	return true;
}

bool rc_allocated(const cJSON *claim)
{
	const cJSON *a = get(get(claim, "status"), "allocation");
	return a && !cJSON_IsNull(a);
}

static bool terminal(const char *phase)
{
	return phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"));
}

bool rc_pod_done(const char *phase, bool deleting, const char *node_name)
{
	return terminal(phase) || (deleting && (!node_name || !node_name[0]));
}

bool rc_pod_needs_claims(const char *phase, bool deleting, const char *node_name, bool deleted)
{
	return !deleted && !rc_pod_done(phase, deleting, node_name);
}

int rc_generate_name(const char *pod, const char *claim, char *buf, size_t n)
{
	size_t lp = strlen(pod), lc = strlen(claim), total = lp + lc + 2, max = 57;
	int l;

	if (total <= max)
		l = snprintf(buf, n, "%s-%s-", pod, claim);
	else
		/* each part keeps its share of 57 (integer division, as upstream); no trailing
		 * "-": the apiserver appends the random suffix directly */
		l = snprintf(buf, n, "%.*s-%.*s", (int)(lp * max / total), pod,
		             (int)(lc * max / total), claim);
	if (l < 0 || (size_t)l >= n) {
		if (n)
			buf[0] = 0;
		return -ENAMETOOLONG;
	}
	return l;
}

bool rc_needs_admin_access(const cJSON *tmpl)
{
	return rc_spec_admin_access(get(get(tmpl, "spec"), "spec"));
}

bool rc_spec_admin_access(const cJSON *spec)
{
	const cJSON *r;
	/* subrequests of firstAvailable have no admin access */
	cJSON_ArrayForEach(r, get(get(spec, "devices"), "requests"))
	{
		if (cJSON_IsTrue(get(get(r, "exactly"), "adminAccess")))
			return true;
	}
	return false;
}

int rc_claim_body(const cJSON *pod, const char *pod_claim_name, const cJSON *tmpl, char **ret)
{
	const cJSON *pm = get(pod, "metadata"), *ts = get(tmpl, "spec");
	const cJSON *tm = get(ts, "metadata"), *spec = get(ts, "spec");
	const char *pname = str(pm, "name"), *uid = str(pm, "uid");
	cJSON *b = NULL, *m, *owners, *o, *ann;
	char gen[256];
	int r = -ENOMEM;

	*ret = NULL;
	if (!pname || !uid || !pod_claim_name || !cJSON_IsObject(ts))
		return -EINVAL;
	if (rc_generate_name(pname, pod_claim_name, gen, sizeof(gen)) < 0)
		return -EINVAL;
	if (!(b = cJSON_CreateObject()) ||
	    !cJSON_AddStringToObject(b, "apiVersion", "resource.k8s.io/v1") ||
	    !cJSON_AddStringToObject(b, "kind", "ResourceClaim") ||
	    !(m = cJSON_AddObjectToObject(b, "metadata")) ||
	    !cJSON_AddStringToObject(m, "generateName", gen) ||
	    !(owners = cJSON_AddArrayToObject(m, "ownerReferences")) ||
	    !(o = cJSON_CreateObject()) || !cJSON_AddItemToArray(owners, o) ||
	    !cJSON_AddStringToObject(o, "apiVersion", "v1") ||
	    !cJSON_AddStringToObject(o, "kind", "Pod") ||
	    !cJSON_AddStringToObject(o, "name", pname) || !cJSON_AddStringToObject(o, "uid", uid) ||
	    !cJSON_AddTrueToObject(o, "controller"))
		goto out;
	ann = cJSON_IsObject(get(tm, "annotations")) ? cJSON_Duplicate(get(tm, "annotations"), true)
	                                             : cJSON_CreateObject();
	if (!ann || !cJSON_AddItemToObject(m, "annotations", ann))
		goto out;
	cJSON_DeleteItemFromObjectCaseSensitive(ann, RC_POD_CLAIM_ANNOTATION);
	if (!cJSON_AddStringToObject(ann, RC_POD_CLAIM_ANNOTATION, pod_claim_name))
		goto out;
	if (cJSON_IsObject(get(tm, "labels"))) {
		cJSON *l = cJSON_Duplicate(get(tm, "labels"), true);
		if (!l || !cJSON_AddItemToObject(m, "labels", l))
			goto out;
	}
	if (spec && !cJSON_IsNull(spec)) {
		cJSON *s = cJSON_Duplicate(spec, true);
		if (!s || !cJSON_AddItemToObject(b, "spec", s))
			goto out;
	}
	if ((*ret = cJSON_PrintUnformatted(b)))
		r = 0;
out:
	cJSON_Delete(b);
	return r;
}

static const cJSON *pod_controller(const cJSON *claim)
{
	const cJSON *o;
	cJSON_ArrayForEach(o, get(get(claim, "metadata"), "ownerReferences"))
	{
		const char *av = str(o, "apiVersion"), *k = str(o, "kind");
		if (cJSON_IsTrue(get(o, "controller")) && av && !strcmp(av, "v1") && k &&
		    !strcmp(k, "Pod"))
			return o;
	}
	return NULL;
}

bool rc_claim_generated_for(const cJSON *claim, const char *pod_uid, const char *pod_claim_name)
{
	const cJSON *o;
	const char *a = str(get(get(claim, "metadata"), "annotations"), RC_POD_CLAIM_ANNOTATION);
	bool owned = false;

	if (!pod_uid || !a || !pod_claim_name || strcmp(a, pod_claim_name))
		return false;
	/* the owner index lists every controller reference to a v1 Pod */
	cJSON_ArrayForEach(o, get(get(claim, "metadata"), "ownerReferences"))
	{
		const char *av = str(o, "apiVersion"), *k = str(o, "kind"), *u = str(o, "uid");
		if (cJSON_IsTrue(get(o, "controller")) && av && !strcmp(av, "v1") && k &&
		    !strcmp(k, "Pod") && u && !strcmp(u, pod_uid))
			owned = true;
	}
	return owned;
}

bool rc_owning_pod(const cJSON *claim, const char **ret_name, const char **ret_uid)
{
	const cJSON *o = pod_controller(claim);

	*ret_name = o ? nz(str(o, "name")) : NULL;
	*ret_uid = o ? nz(str(o, "uid")) : NULL;
	return o && (*ret_name)[0];
}

struct entry {
	const char *name, *claim;
};

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

int rc_status_apply_body(const cJSON *pod, const char *const *names, const char *const *claims,
                         size_t n, char **ret)
{
	const cJSON *pm = get(pod, "metadata"), *st0,
	            *old = get(get(pod, "status"), "resourceClaimStatuses");
	size_t cap = n + (size_t)cJSON_GetArraySize(old), k = 0;
	struct entry *v = calloc(cap ? cap : 1, sizeof(*v));
	cJSON *b = cJSON_CreateObject(), *m, *st, *a;
	int r = -ENOMEM;

	*ret = NULL;
	if (!b || !v || !cJSON_AddStringToObject(b, "apiVersion", "v1") ||
	    !cJSON_AddStringToObject(b, "kind", "Pod") ||
	    !(m = cJSON_AddObjectToObject(b, "metadata")) ||
	    !cJSON_AddStringToObject(m, "name", nz(str(pm, "name"))) ||
	    !cJSON_AddStringToObject(m, "namespace", nz(str(pm, "namespace"))) ||
	    !(st = cJSON_AddObjectToObject(b, "status")) ||
	    !(a = cJSON_AddArrayToObject(st, "resourceClaimStatuses")))
		goto out;
	/* the recorded statuses that name a claim, then the new ones over them (an apply drops
	 * what its manager leaves out), sorted by name */
	cJSON_ArrayForEach(st0, old)
	{
		const char *sn = str(st0, "name"), *claim = str(st0, "resourceClaimName");
		if (sn && claim && k < cap)
			v[k++] = (struct entry){sn, claim};
	}
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		while (j < k && strcmp(v[j].name, names[i]))
			j++;
		if (j == k && k < cap)
			k++;
		if (j < cap)
			v[j] = (struct entry){names[i], claims[i]};
	}
	qsort(v, k, sizeof(*v), cmp_entry);
	for (size_t i = 0; i < k; i++) {
		cJSON *e = cJSON_CreateObject();
		if (!e || !cJSON_AddItemToArray(a, e) ||
		    !cJSON_AddStringToObject(e, "name", v[i].name) ||
		    !cJSON_AddStringToObject(e, "resourceClaimName", v[i].claim))
			goto out;
	}
	if ((*ret = cJSON_PrintUnformatted(b)))
		r = 0;
out:
	free(v);
	cJSON_Delete(b);
	return r;
}

int rc_valid_reservations(const cJSON *claim, rc_pod_lookup_fn fn, void *userdata,
                          cJSON **ret_valid)
{
	const char *ns = nz(str(get(claim, "metadata"), "namespace"));
	cJSON *valid = cJSON_CreateArray();
	const cJSON *e;
	int kept = 0;

	*ret_valid = NULL;
	if (!valid)
		return -ENOMEM;
	cJSON_ArrayForEach(e, get(get(claim, "status"), "reservedFor"))
	{
		const char *g = str(e, "apiGroup"), *res = str(e, "resource");
		const char *name = nz(str(e, "name")), *uid = nz(str(e, "uid"));
		struct rc_pod_info p = {0};
		bool keep = true;
		int r;

		if ((g && g[0]) || !res || strcmp(res, "pods")) {
			/* another kind of consumer: not this controller's to judge, kept */
		} else if ((r = fn(ns, name, &p, userdata)) < 0) {
			cJSON_Delete(valid);
			return r;
		} else if (p.state == RC_POD_DELETED || !p.uid || strcmp(p.uid, uid) ||
		           rc_pod_done(p.phase, p.deleting, p.node_name)) {
			keep = false;
		}
		if (keep) {
			cJSON *c = cJSON_Duplicate(e, true);
			if (!c || !cJSON_AddItemToArray(valid, c)) {
				cJSON_Delete(c);
				cJSON_Delete(valid);
				return -ENOMEM;
			}
			kept++;
		}
	}
	*ret_valid = valid;
	return kept;
}

static int print(cJSON *c, char **ret)
{
	*ret = cJSON_PrintUnformatted(c);
	cJSON_Delete(c);
	return *ret ? 0 : -ENOMEM;
}

bool rc_has_finalizer(const cJSON *claim)
{
	const cJSON *f;
	cJSON_ArrayForEach(f, get(get(claim, "metadata"), "finalizers"))
	{
		if (cJSON_IsString(f) && !strcmp(f->valuestring, RC_FINALIZER))
			return true;
	}
	return false;
}

int rc_status_update_body(const cJSON *claim, cJSON *valid, char **ret)
{
	cJSON *c = cJSON_Duplicate(claim, true), *st;
	bool empty = cJSON_GetArraySize(valid) == 0;

	*ret = NULL;
	if (!c) {
		cJSON_Delete(valid);
		return -ENOMEM;
	}
	st = cJSON_GetObjectItemCaseSensitive(c, "status");
	if (!cJSON_IsObject(st)) {
		cJSON_Delete(valid);
		cJSON_Delete(c);
		return -EINVAL;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(st, "reservedFor");
	if (empty)
		cJSON_Delete(valid); /* omitempty */
	else if (!cJSON_AddItemToObject(st, "reservedFor", valid)) {
		cJSON_Delete(valid);
		cJSON_Delete(c);
		return -ENOMEM;
	}
	if (empty && rc_has_finalizer(claim))
		cJSON_DeleteItemFromObjectCaseSensitive(st, "allocation");
	return print(c, ret);
}

int rc_deallocate_body(const cJSON *claim, char **ret)
{
	cJSON *c = cJSON_Duplicate(claim, true);

	*ret = NULL;
	if (!c)
		return -ENOMEM;
	cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(c, "status"),
	                                        "allocation");
	return print(c, ret);
}

int rc_remove_finalizer_body(const cJSON *claim, char **ret)
{
	cJSON *c = cJSON_Duplicate(claim, true), *fs, *f;
	int i = 0;

	*ret = NULL;
	if (!c)
		return -ENOMEM;
	fs = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c, "metadata"),
	                                      "finalizers");
	cJSON_ArrayForEach(f, fs)
	{
		if (cJSON_IsString(f) && !strcmp(f->valuestring, RC_FINALIZER)) {
			/* slices.Delete of the first match only */
			cJSON_DeleteItemFromArray(fs, i);
			return print(c, ret);
		}
		i++;
	}
	cJSON_Delete(c);
	return -ENOENT;
}

void rc_claim_metric_labels(const cJSON *c, const char *l[3])
{
	const cJSON *ann = get(get(c, "metadata"), "annotations");
	const char *ext = str(ann, RC_EXTENDED_ANNOTATION),
	           *tpl = str(ann, RC_POD_CLAIM_ANNOTATION);

	l[0] = rc_allocated(c) ? "true" : "false";
	l[1] = rc_spec_admin_access(get(c, "spec")) ? "true" : "false";
	l[2] = ext && !strcmp(ext, "true") ? "extended_resource"
	       : tpl && tpl[0]             ? "resource_claim_template"
	                                   : "";
}
