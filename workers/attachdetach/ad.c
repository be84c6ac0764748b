/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/attachdetach/ad.c: the attach/detach controller's decisions (ad.h).
 *
 * Design note.
 *   Upstream keeps a desired and an actual state of the world in memory, fed by informers and
 *   a populator, and a reconciler loop compares them every 100 ms. kcmd derives both, per
 *   node, from the shared cache each time the node's key is synced: the desired volumes from
 *   the node's pods, the actual ones from the VolumeAttachments and the node's status. So a
 *   restart rebuilds nothing and forgets nothing but the detach timers (as upstream's ASW,
 *   whose detachRequestedTime is in memory too). Rejected: a shared-memory copy of the two
 *   worlds (it would be a second cache of what the arena already holds).
 */
#include "workers/attachdetach/ad.h"

#include <errno.h>
#include <gnutls/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static const char *str(const cJSON *o, const char *k)
{
	return cJSON_GetStringValue(get(o, k));
}

int ad_va_name(const char *handle, const char *driver, const char *node, char *buf)
{
	unsigned char sum[32];
	size_t lh, ld, ln;
	char *in;
	int r;

	if (!handle || !driver || !node || !buf)
		return -EINVAL;
	lh = strlen(handle);
	ld = strlen(driver);
	ln = strlen(node);
	in = malloc(lh + ld + ln + 1);
	if (!in)
		return -ENOMEM;
	memcpy(in, handle, lh);
	memcpy(in + lh, driver, ld);
	memcpy(in + lh + ld, node, ln);
	r = gnutls_hash_fast(GNUTLS_DIG_SHA256, in, lh + ld + ln, sum);
	free(in);
	if (r < 0)
		return -EIO;
	memcpy(buf, "csi-", 4);
	for (size_t i = 0; i < sizeof(sum); i++)
		snprintf(buf + 4 + 2 * i, 3, "%02x", sum[i]);
	return 0;
}

int ad_unique_name(const char *driver, const char *handle, char *buf, size_t n)
{
	int l = snprintf(buf, n, AD_CSI_PLUGIN "/%s^%s", driver, handle);

	if (l < 0 || (size_t)l >= n) {
		if (n)
			buf[0] = 0;
		return -ENAMETOOLONG;
	}
	return l;
}

int ad_pv_csi(const cJSON *pv, const char **ret_driver, const char **ret_handle)
{
	const cJSON *csi = get(get(pv, "spec"), "csi");
	const char *d, *h;

	if (!cJSON_IsObject(csi))
		return -ENOENT;
	d = str(csi, "driver");
	h = str(csi, "volumeHandle");
	if (!d || !*d || !h || !*h)
		return -EINVAL;
	*ret_driver = d;
	*ret_handle = h;
	return 0;
}

bool ad_attach_required(const cJSON *csidriver)
{
	const cJSON *ar = get(get(csidriver, "spec"), "attachRequired");

	return !cJSON_IsBool(ar) || cJSON_IsTrue(ar);
}

bool ad_multi_attach_allowed(const cJSON *pv)
{
	const cJSON *modes = get(get(pv, "spec"), "accessModes"), *m;

	if (cJSON_GetArraySize(modes) == 0)
		return true;
	cJSON_ArrayForEach(m, modes)
	{
		const char *s = cJSON_GetStringValue(m);

		if (s && (!strcmp(s, "ReadOnlyMany") || !strcmp(s, "ReadWriteMany")))
			return true;
	}
	return false;
}

bool ad_pod_terminated(const cJSON *pod)
{
	const char *phase = str(get(pod, "status"), "phase");
	const cJSON *dt = get(get(pod, "metadata"), "deletionTimestamp"), *cs;

	if (phase && (!strcmp(phase, "Failed") || !strcmp(phase, "Succeeded")))
		return true;
	if (!dt || cJSON_IsNull(dt))
		return false;
	/* notRunning: every status of every kind of container waiting or terminated */
	static const char *const kinds[] = {"initContainerStatuses", "containerStatuses",
	                                    "ephemeralContainerStatuses"};
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		cJSON_ArrayForEach(cs, get(get(pod, "status"), kinds[k]))
		{
			const cJSON *st = get(cs, "state");

			if (!get(st, "terminated") && !get(st, "waiting"))
				return false;
		}
	return true;
}

int ad_claim_volume(const cJSON *pvc, const cJSON *pv, const char **ret_pv_name, char *err,
                    size_t errlen)
{
	const cJSON *md = get(pvc, "metadata");
	const char *phase = str(get(pvc, "status"), "phase");
	const char *vol = str(get(pvc, "spec"), "volumeName");
	const char *uid = str(md, "uid"), *ruid;

	if (!phase || strcmp(phase, "Bound") || !vol || !*vol) {
		snprintf(err, errlen,
		         "PVC %s/%s has non-bound phase (\"%s\") or empty pvc.Spec.VolumeName "
		         "(\"%s\")",
		         str(md, "namespace") ? str(md, "namespace") : "",
		         str(md, "name") ? str(md, "name") : "", phase ? phase : "",
		         vol ? vol : "");
		return -EAGAIN;
	}
	if (pv) {
		const cJSON *ref = get(get(pv, "spec"), "claimRef");

		if (!cJSON_IsObject(ref)) {
			snprintf(err, errlen,
			         "found PV object %s but it has a nil pv.Spec.ClaimRef", vol);
			return -EINVAL;
		}
		ruid = str(ref, "uid");
		if (!uid || !ruid || strcmp(uid, ruid)) {
			snprintf(err, errlen,
			         "found PV object %s but its pv.Spec.ClaimRef.UID (%s) does not "
			         "point "
			         "to claim.UID (%s)",
			         vol, ruid ? ruid : "", uid ? uid : "");
			return -EINVAL;
		}
	}
	*ret_pv_name = vol;
	return 0;
}

int ad_pod_volume_claim(const cJSON *pod, const cJSON *vol, char *buf, size_t n,
                        bool *ret_ephemeral)
{
	const char *claim = str(get(vol, "persistentVolumeClaim"), "claimName");
	const char *pod_name = str(get(pod, "metadata"), "name"), *vol_name = str(vol, "name");
	int l;

	*ret_ephemeral = false;
	if (claim)
		l = snprintf(buf, n, "%s", claim);
	else if (cJSON_IsObject(get(vol, "ephemeral")) && pod_name && vol_name)
		l = snprintf(buf, n, "%s-%s", pod_name, vol_name);
	else
		return -ENOENT;
	if (l < 0 || (size_t)l >= n) {
		if (n)
			buf[0] = 0;
		return -ENAMETOOLONG;
	}
	*ret_ephemeral = !claim;
	return 0;
}

bool ad_claim_owned_by_pod(const cJSON *pvc, const cJSON *pod)
{
	const char *uid = str(get(pod, "metadata"), "uid");
	const cJSON *ref;

	cJSON_ArrayForEach(ref, get(get(pvc, "metadata"), "ownerReferences"))
	{
		const char *ruid = str(ref, "uid");

		if (cJSON_IsTrue(get(ref, "controller")))
			return uid && ruid && !strcmp(uid, ruid);
	}
	return false;
}

bool ad_node_managed(const cJSON *node)
{
	const char *v = str(get(get(node, "metadata"), "annotations"), AD_ANN_MANAGED);

	return v && !strcmp(v, "true");
}

bool ad_node_ready(const cJSON *node)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, get(get(node, "status"), "conditions"))
	{
		const char *t = str(c, "type");

		if (t && !strcmp(t, "Ready")) {
			const char *s = str(c, "status");
			return s && !strcmp(s, "True");
		}
	}
	return false;
}

bool ad_node_out_of_service(const cJSON *node)
{
	const cJSON *t;

	cJSON_ArrayForEach(t, get(get(node, "spec"), "taints"))
	{
		const char *k = str(t, "key");

		if (k && !strcmp(k, AD_TAINT_OOS))
			return true;
	}
	return false;
}

bool ad_node_lists(const cJSON *node, const char *field, const char *unique)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, get(get(node, "status"), field))
	{
		/* volumesInUse holds names, volumesAttached objects with a name */
		const char *s = cJSON_IsString(e) ? e->valuestring : str(e, "name");

		if (s && !strcmp(s, unique))
			return true;
	}
	return false;
}

int ad_va_body(const char *name, const char *driver, const char *node, const char *pv, char **ret)
{
	cJSON *o = cJSON_CreateObject(), *md, *spec, *src;
	char *s = NULL;

	if (!o)
		return -ENOMEM;
	if (!cJSON_AddStringToObject(o, "apiVersion", "storage.k8s.io/v1") ||
	    !cJSON_AddStringToObject(o, "kind", "VolumeAttachment") ||
	    !(md = cJSON_AddObjectToObject(o, "metadata")) ||
	    !cJSON_AddStringToObject(md, "name", name) ||
	    !(spec = cJSON_AddObjectToObject(o, "spec")) ||
	    !cJSON_AddStringToObject(spec, "attacher", driver) ||
	    !(src = cJSON_AddObjectToObject(spec, "source")) ||
	    !cJSON_AddStringToObject(src, "persistentVolumeName", pv) ||
	    !cJSON_AddStringToObject(spec, "nodeName", node) || !(s = cJSON_PrintUnformatted(o))) {
		cJSON_Delete(o);
		return -ENOMEM;
	}
	cJSON_Delete(o);
	*ret = s;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int ad_status_patch(const char *const *unique, size_t n, char **ret)
{
	cJSON *o = cJSON_CreateObject(), *st, *list;
	const char **sorted = NULL;
	char *s;

	if (!o || !(st = cJSON_AddObjectToObject(o, "status")))
		goto nomem;
	if (n == 0) {
		if (!cJSON_AddNullToObject(st, "volumesAttached"))
			goto nomem;
	} else {
		if (!(sorted = malloc(n * sizeof(*sorted))) ||
		    !(list = cJSON_AddArrayToObject(st, "volumesAttached")))
			goto nomem;
		memcpy(sorted, unique, n * sizeof(*sorted));
		qsort(sorted, n, sizeof(*sorted), cmp_str);
		for (size_t i = 0; i < n; i++) {
			cJSON *e = cJSON_CreateObject();

			if (!e)
				goto nomem;
			cJSON_AddItemToArray(list, e);
			if (!cJSON_AddStringToObject(e, "name", sorted[i]) ||
			    !cJSON_AddStringToObject(e, "devicePath", ""))
				goto nomem;
		}
	}
	if (!(s = cJSON_PrintUnformatted(o)))
		goto nomem;
	free(sorted);
	cJSON_Delete(o);
	*ret = s;
	return 0;
nomem:
	free(sorted);
	cJSON_Delete(o);
	return -ENOMEM;
}

/* ---- the plan ----------------------------------------------------------------------------- */
static int push(struct ad_plan *p, enum ad_action_kind k, size_t i)
{
	struct ad_action *n = realloc(p->actions, (p->n_actions + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	p->actions = n;
	n[p->n_actions++] = (struct ad_action){k, i};
	return 0;
}

static ssize_t find_timer(struct ad_timer *t, size_t n, const char *node, const char *va)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(t[i].node, node) && !strcmp(t[i].va, va))
			return (ssize_t)i;
	return -1;
}

static void drop_timer(struct ad_timer *t, size_t *n, size_t i)
{
	t[i] = t[--*n];
}

static void recheck(struct ad_plan *p, uint64_t us)
{
	if (us && (!p->recheck_us || us < p->recheck_us))
		p->recheck_us = us;
}

int ad_plan(const struct ad_node_state *ns, const struct ad_desired *d, size_t nd,
            const struct ad_actual *a, size_t na, struct ad_timer **timers, size_t *n_timers,
            uint64_t now_us, struct ad_plan *ret)
{
	struct ad_plan p = {0};
	const char *node = ns->name ? ns->name : "";
	size_t reported_before = 0;
	const cJSON *e;

	if (!(p.report = calloc(na + 1, sizeof(*p.report))))
		return -ENOMEM;
	/* timers of volumes no longer waiting to detach (gone or desired again) are dropped */
	for (size_t t = 0; t < *n_timers;) {
		bool keep = false;

		if (strcmp((*timers)[t].node, node)) {
			t++; /* another node's */
			continue;
		}

		for (size_t j = 0; j < na && !keep; j++) {
			if (strcmp((*timers)[t].va, a[j].va))
				continue;
			keep = !a[j].deleting;
			for (size_t i = 0; i < nd && keep; i++)
				if (!strcmp(d[i].unique, a[j].unique))
					keep = false;
		}
		if (keep)
			t++;
		else
			drop_timer(*timers, n_timers, t);
	}

	/* detaches first, as upstream's reconcile */
	for (size_t j = 0; j < na; j++) {
		ssize_t want = -1;

		for (size_t i = 0; i < nd && want < 0; i++)
			if (!strcmp(d[i].unique, a[j].unique))
				want = (ssize_t)i;
		if (want >= 0) {
			if (a[j].attached && !a[j].deleting) {
				p.report[p.n_report++] = a[j].unique;
				if (!ns->node ||
				    !ad_node_lists(ns->node, "volumesAttached", a[j].unique))
					if (push(&p, AD_REPORT_NEW, (size_t)want) < 0)
						goto nomem;
			} else if (push(&p, AD_WAIT_ATTACH, (size_t)want) < 0) {
				goto nomem;
			}
			continue;
		}
		if (a[j].deleting)
			continue; /* being detached: reported no more */
		ssize_t ti = find_timer(*timers, *n_timers, node, a[j].va);
		if (ti < 0) {
			struct ad_timer *nt = realloc(*timers, (*n_timers + 1) * sizeof(*nt));

			if (!nt)
				goto nomem;
			*timers = nt;
			ti = (ssize_t)(*n_timers)++;
			snprintf(nt[ti].node, sizeof(nt[ti].node), "%s", node);
			snprintf(nt[ti].va, sizeof(nt[ti].va), "%s", a[j].va);
			nt[ti].since_us = now_us;
		}
		uint64_t elapsed = now_us - (*timers)[ti].since_us;
		bool expired = elapsed > AD_MAX_UNMOUNT_US;
		bool force_timeout = expired && !ns->disable_force_detach;
		bool force = !ns->ready && force_timeout;
		bool mounted = ns->exists && ad_node_lists(ns->node, "volumesInUse", a[j].unique);

		if (mounted && !force && !ns->out_of_service) {
			if (a[j].attached)
				p.report[p.n_report++] = a[j].unique;
			if (push(&p, AD_WAIT_UNMOUNT, j) < 0)
				goto nomem;
			if (!ns->disable_force_detach && !expired)
				recheck(&p, AD_MAX_UNMOUNT_US - elapsed + 1000000);
			continue;
		}
		if (push(&p, AD_DETACH, j) < 0)
			goto nomem;
	}

	for (size_t i = 0; i < nd; i++) {
		bool have = false;

		for (size_t j = 0; j < na && !have; j++)
			have = !strcmp(d[i].unique, a[j].unique);
		if (have)
			continue;
		if (!d[i].multi_attach_allowed && d[i].attached_elsewhere) {
			if (push(&p, AD_MULTI_ATTACH, i) < 0)
				goto nomem;
		} else if (push(&p, AD_CREATE, i) < 0) {
			goto nomem;
		}
	}

	/* the node status: compared as sets with what the node lists */
	if (ns->exists && ns->node) {
		cJSON_ArrayForEach(e, get(get(ns->node, "status"), "volumesAttached"))
		{
			const char *s = str(e, "name");
			bool in = false;

			for (size_t k = 0; k < p.n_report && !in; k++)
				in = s && !strcmp(s, p.report[k]);
			if (!in)
				p.status_changed = true;
			reported_before++;
		}
		if (reported_before != p.n_report)
			p.status_changed = true;
	}
	*ret = p;
	return 0;
nomem:
	ad_plan_free(&p);
	return -ENOMEM;
}

void ad_plan_free(struct ad_plan *p)
{
	free(p->actions);
	free(p->report);
	*p = (struct ad_plan){0};
}
