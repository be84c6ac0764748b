/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/pvbinder/binder.c: the sync logic of kcm's persistentvolume-binder-controller
 * (binder.h, docs/pvbinder.md).
 */
#include "workers/pvbinder/binder.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/quantity.h"
#include "kube/selector.h"

#define NORMAL  "Normal"
#define WARNING "Warning"

/* ---- JSON access ------------------------------------------------------------------------ */
static const cJSON *get(const cJSON *o, const char *k)
{
	return o ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

static const cJSON *get2(const cJSON *o, const char *a, const char *b)
{
	return get(get(o, a), b);
}

static const char *str(const cJSON *o)
{
	return cJSON_IsString(o) ? o->valuestring : NULL;
}

static const char *s0(const char *s)
{
	return s ? s : "";
}

static bool eq(const char *a, const char *b)
{
	return strcmp(s0(a), s0(b)) == 0;
}

static const char *name_of(const cJSON *o)
{
	return s0(str(get2(o, "metadata", "name")));
}

static const char *ns_of(const cJSON *o)
{
	return s0(str(get2(o, "metadata", "namespace")));
}

static const char *uid_of(const cJSON *o)
{
	return s0(str(get2(o, "metadata", "uid")));
}

static const char *ann(const cJSON *o, const char *key)
{
	return str(get(get2(o, "metadata", "annotations"), key));
}

static bool has_ann(const cJSON *o, const char *key)
{
	return get(get2(o, "metadata", "annotations"), key) != NULL;
}

static const char *phase_of(const cJSON *o)
{
	return s0(str(get2(o, "status", "phase")));
}

static const cJSON *claim_ref(const cJSON *volume)
{
	const cJSON *r = get2(volume, "spec", "claimRef");

	return cJSON_IsObject(r) ? r : NULL;
}

static const char *claim_volume_name(const cJSON *claim)
{
	return s0(str(get2(claim, "spec", "volumeName")));
}

/* cJSON_Duplicate with a NULL check left to the caller */
static cJSON *dup(const cJSON *o)
{
	return cJSON_Duplicate(o, true);
}

/* sets o[key] = value (a string), replacing what is there; false on ENOMEM */
static bool set_str(cJSON *o, const char *key, const char *value)
{
	cJSON *v = cJSON_CreateString(value);

	if (!v)
		return false;
	if (cJSON_GetObjectItemCaseSensitive(o, key))
		return cJSON_ReplaceItemInObjectCaseSensitive(o, key, v);
	return cJSON_AddItemToObject(o, key, v);
}

static cJSON *obj_child(cJSON *o, const char *key)
{
	cJSON *c = cJSON_GetObjectItemCaseSensitive(o, key);

	if (cJSON_IsObject(c))
		return c;
	if (c)
		cJSON_DeleteItemFromObjectCaseSensitive(o, key);
	return cJSON_AddObjectToObject(o, key);
}

static bool set_ann(cJSON *o, const char *key, const char *value)
{
	cJSON *md = obj_child(o, "metadata"), *a = md ? obj_child(md, "annotations") : NULL;

	return a && set_str(a, key, value);
}

static void del_ann(cJSON *o, const char *key)
{
	cJSON *md = cJSON_GetObjectItemCaseSensitive(o, "metadata");
	cJSON *a = cJSON_GetObjectItemCaseSensitive(md, "annotations");

	cJSON_DeleteItemFromObjectCaseSensitive(a, key);
	/* no annotations look better than an empty map (upstream's unbindVolume) */
	if (a && !a->child)
		cJSON_DeleteItemFromObjectCaseSensitive(md, "annotations");
}

/* csi-translation-lib's in-tree plugins, all migrated to CSI in v1.37 */
static const struct {
	const char *plugin, *driver;
} migrated[] = {
        {"kubernetes.io/gce-pd", "pd.csi.storage.gke.io"},
        {"kubernetes.io/aws-ebs", "ebs.csi.aws.com"},
        {"kubernetes.io/cinder", "cinder.csi.openstack.org"},
        {"kubernetes.io/azure-disk", "disk.csi.azure.com"},
        {"kubernetes.io/azure-file", "file.csi.azure.com"},
        {"kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com"},
        {"kubernetes.io/portworx-volume", "pxd.portworx.com"},
};

/* the CSI driver an in-tree plugin migrated to, or NULL */
static const char *csi_driver_of(const char *plugin)
{
	for (size_t i = 0; plugin && i < sizeof(migrated) / sizeof(migrated[0]); i++)
		if (!strcmp(plugin, migrated[i].plugin))
			return migrated[i].driver;
	return NULL;
}

/* ---- quantities ------------------------------------------------------------------------- */
/* absent or not a quantity: zero (Go's zero Quantity from a map miss) */
static __int128 qty(const char *s)
{
	return kube_quantity_nano_or_zero(s);
}

/* Quantity.Value(): rounded up to a whole unit */
static __int128 qty_value(const char *s)
{
	__int128 v = qty(s), u = 1000000000;

	return v >= 0 ? (v + u - 1) / u : -((-v) / u);
}

int pvb_qty_cmp(const char *a, const char *b)
{
	__int128 x = qty(a), y = qty(b);

	return x < y ? -1 : x > y;
}

static const char *claim_request(const cJSON *claim)
{
	return str(get(get2(get(claim, "spec"), "resources", "requests"), "storage"));
}

static const char *volume_capacity(const cJSON *volume)
{
	return str(get2(get(volume, "spec"), "capacity", "storage"));
}

/* ---- pv_helpers ------------------------------------------------------------------------- */
const char *pvb_claim_class(const cJSON *claim)
{
	const cJSON *a = get(get2(claim, "metadata", "annotations"), PVB_ANN_BETA_CLASS);
	const cJSON *c = get2(claim, "spec", "storageClassName");

	if (a)
		return s0(str(a));
	return s0(str(c));
}

const char *pvb_volume_class(const cJSON *volume)
{
	return pvb_claim_class(volume);
}

/* PersistentVolumeClaimHasClass: the beta annotation or spec.storageClassName is set (even
 * to "") */
static bool claim_has_class(const cJSON *claim)
{
	const cJSON *c = get2(claim, "spec", "storageClassName");

	return has_ann(claim, PVB_ANN_BETA_CLASS) || (c && !cJSON_IsNull(c));
}

bool pvb_volume_bound_to_claim(const cJSON *volume, const cJSON *claim)
{
	const cJSON *r = claim_ref(volume);
	const char *uid;

	if (!r)
		return false;
	if (!eq(str(get(r, "name")), name_of(claim)) || !eq(str(get(r, "namespace")), ns_of(claim)))
		return false;
	uid = s0(str(get(r, "uid")));
	return !*uid || eq(uid, uid_of(claim));
}

static const char *volume_mode(const cJSON *o)
{
	const char *m = str(get2(o, "spec", "volumeMode"));

	return m ? m : "Filesystem";
}

bool pvb_volume_mode_mismatch(const cJSON *claim, const cJSON *volume)
{
	return !eq(volume_mode(claim), volume_mode(volume));
}

static bool has_mode(const cJSON *modes, const char *m)
{
	const cJSON *x;

	cJSON_ArrayForEach(x, modes) if (eq(str(x), m)) return true;
	return false;
}

/* CheckAccessModes: every mode the claim asks for is the volume's */
static bool access_modes_ok(const cJSON *claim, const cJSON *volume)
{
	const cJSON *want = get2(claim, "spec", "accessModes");
	const cJSON *have = get2(volume, "spec", "accessModes"), *x;

	cJSON_ArrayForEach(x, want) if (!has_mode(have, s0(str(x)))) return false;
	return true;
}

static const char *vac_of(const cJSON *o)
{
	return s0(str(get2(o, "spec", "volumeAttributesClassName")));
}

static bool deleting(const cJSON *o)
{
	const cJSON *t = get2(o, "metadata", "deletionTimestamp");

	return t && !cJSON_IsNull(t);
}

int pvb_find_matching_volume(const cJSON *claim, const cJSON *volumes, bool delay_binding,
                             const cJSON **ret, char *err, size_t errlen)
{
	const cJSON *sel_js = get2(claim, "spec", "selector"), *v, *best = NULL;
	const char *want = claim_request(claim), *best_cap = NULL;
	const char *cls = pvb_claim_class(claim), *vac = vac_of(claim);
	struct kube_selector *sel = NULL;

	*ret = NULL;
	if (cJSON_IsObject(sel_js)) {
		char why[256] = "";
		int r = kube_selector_from_json(sel_js, &sel, why, sizeof(why));

		if (r < 0) {
			snprintf(err, errlen,
			         "error creating internal label selector for claim: %s/%s: %s",
			         ns_of(claim), name_of(claim), why[0] ? why : strerror(-r));
			return r;
		}
	}
	cJSON_ArrayForEach(v, volumes)
	{
		const char *cap = volume_capacity(v);

		if (claim_ref(v) && !pvb_volume_bound_to_claim(v, claim))
			continue;
		if (pvb_qty_cmp(cap, want) < 0)
			continue;
		if (pvb_volume_mode_mismatch(claim, v))
			continue;
		if (deleting(v))
			continue;
		if (pvb_volume_bound_to_claim(v, claim)) {
			best = v;
			break;
		}
		/* the scheduler binds claims of WaitForFirstConsumer classes */
		if (delay_binding)
			continue;
		if (!eq(phase_of(v), "Available"))
			continue;
		if (sel && !kube_selector_matches_json(sel, get2(v, "metadata", "labels")))
			continue;
		if (!eq(pvb_volume_class(v), cls))
			continue;
		if (!eq(vac_of(v), vac))
			continue;
		if (!best || pvb_qty_cmp(best_cap, cap) > 0) {
			best = v;
			best_cap = cap;
		}
	}
	kube_selector_free(sel);
	*ret = best;
	return 0;
}

/* the access modes in GetAccessModesAsString's order, as a bit set */
static const char *const mode_names[] = {"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany",
                                         "ReadWriteOncePod"};
#define N_MODES 4

static unsigned modes_of(const cJSON *o)
{
	unsigned m = 0;

	for (unsigned i = 0; i < N_MODES; i++)
		if (has_mode(get2(o, "spec", "accessModes"), mode_names[i]))
			m |= 1u << i;
	return m;
}

int pvb_find_best_match(const cJSON *claim, const cJSON *volumes, bool delay_binding,
                        const cJSON **ret, char *err, size_t errlen)
{
	unsigned want = modes_of(claim);
	const cJSON *v;
	bool present[1u << N_MODES] = {false};

	*ret = NULL;
	cJSON_ArrayForEach(v, volumes) present[modes_of(v)] = true;
	/* the index keys holding every requested mode, fewest modes first (ties by key) */
	for (int n = 0; n <= N_MODES; n++) {
		for (unsigned key = 0; key < (1u << N_MODES); key++) {
			cJSON *group;
			int r;

			if (!present[key] || (unsigned)__builtin_popcount(key) != (unsigned)n ||
			    (key & want) != want)
				continue;
			if (!(group = cJSON_CreateArray())) {
				snprintf(err, errlen, "out of memory");
				return -ENOMEM;
			}
			/* a reference array: the volumes stay owned by `volumes` */
			cJSON_ArrayForEach(v, volumes)
			{
				if (modes_of(v) == key)
					cJSON_AddItemReferenceToArray(group, (cJSON *)v);
			}
			r = pvb_find_matching_volume(claim, group, delay_binding, ret, err, errlen);
			if (*ret) {
				/* the reference dies with the group: point at the volume itself */
				const cJSON *ref = *ret;

				*ret = NULL;
				cJSON_ArrayForEach(v, volumes)
				{
					if (v->child == ref->child)
						*ret = v;
				}
			}
			cJSON_Delete(group);
			if (r < 0 || *ret)
				return r;
		}
	}
	return 0;
}

/* CreationTimestamp as comparable text: RFC 3339 in UTC with second precision */
const cJSON *pvb_default_class(const cJSON *classes)
{
	const cJSON *c, *best = NULL;

	cJSON_ArrayForEach(c, classes)
	{
		const char *ts, *bts;
		int d;

		if (!eq(ann(c, PVB_ANN_DEFAULT_CLASS), "true") &&
		    !eq(ann(c, PVB_ANN_BETA_DEFAULT_CLASS), "true"))
			continue;
		if (!best) {
			best = c;
			continue;
		}
		ts = s0(str(get2(c, "metadata", "creationTimestamp")));
		bts = s0(str(get2(best, "metadata", "creationTimestamp")));
		d = strcmp(ts, bts);
		if (d > 0 || (d == 0 && strcmp(name_of(c), name_of(best)) < 0))
			best = c;
	}
	return best;
}

/* ---- the controller's writes ------------------------------------------------------------ */
static void event(const struct pvb_ops *ops, const cJSON *o, bool is_claim, const char *type,
                  const char *reason, const char *msg)
{
	if (ops->event)
		ops->event(ops->ud, o, is_claim, type, reason, msg);
}

static void note(const struct pvb_ops *ops, const char *fmt, const char *a, const char *b)
{
	char msg[768];

	if (!ops->note)
		return;
	snprintf(msg, sizeof(msg), fmt, a, b);
	ops->note(ops->ud, msg);
}

static int nomem(char *err, size_t errlen)
{
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}

/*
 * updateVolumePhase: a status update when the phase differs, with the message and
 * lastPhaseTransitionTime. *io is replaced by the apiserver's object on success (it is the
 * caller's).
 */
/*
 * Writes clone (owned: freed here) with verb w; on success the written object replaces *io.
 * With dirty false nothing is written (the object already says what it should). 0 or -errno.
 */
static int write_back(const struct pvb_ops *ops, enum pvb_write w, cJSON *clone, bool dirty,
                      cJSON **io, char *err, size_t errlen)
{
	cJSON *out = NULL;
	int r = 0;

	if (dirty)
		r = ops->write(ops->ud, w, clone, &out, err, errlen);
	cJSON_Delete(clone);
	if (r < 0 || !dirty)
		return r;
	cJSON_Delete(*io);
	*io = out;
	return 0;
}

static int update_volume_phase(const struct pvb_ops *ops, cJSON **io, const char *phase,
                               const char *message, char *err, size_t errlen)
{
	cJSON *clone, *status;
	char now[64] = "";

	if (eq(phase_of(*io), phase))
		return 0;
	if (!(clone = dup(*io)) || !(status = obj_child(clone, "status"))) {
		cJSON_Delete(clone);
		return nomem(err, errlen);
	}
	if (ops->now)
		ops->now(ops->ud, now, sizeof(now));
	if (!set_str(status, "phase", phase) || !set_str(status, "message", message) ||
	    (now[0] && !set_str(status, "lastPhaseTransitionTime", now))) {
		cJSON_Delete(clone);
		return nomem(err, errlen);
	}
	if (!*message)
		cJSON_DeleteItemFromObjectCaseSensitive(status, "message");
	return write_back(ops, PVB_UPDATE_VOLUME_STATUS, clone, true, io, err, errlen);
}

/* updateVolumePhaseWithEvent: the Event only when the phase changes */
static int update_volume_phase_event(const struct pvb_ops *ops, cJSON **io, const char *phase,
                                     const char *type, const char *reason, const char *message,
                                     char *err, size_t errlen)
{
	int r;

	if (eq(phase_of(*io), phase))
		return 0;
	r = update_volume_phase(ops, io, phase, message, err, errlen);
	if (r < 0)
		return r;
	event(ops, *io, false, type, reason, message);
	return 0;
}

static bool json_equal(const cJSON *a, const cJSON *b)
{
	if (!a || !b)
		return !a == !b;
	return cJSON_Compare(a, b, true);
}

/*
 * updateClaimStatus: phase, accessModes and capacity from the volume (capacity only when the
 * claim becomes that phase), or both cleared without a volume. *io as update_volume_phase.
 */
static int update_claim_status(const struct pvb_ops *ops, cJSON **io, const char *phase,
                               const cJSON *volume, char *err, size_t errlen)
{
	const cJSON *claim = *io;
	cJSON *clone = dup(claim), *status;
	const cJSON *cur_modes = get2(claim, "status", "accessModes");
	const cJSON *cur_cap = get2(claim, "status", "capacity");
	bool dirty = false;

	if (!clone || !(status = obj_child(clone, "status"))) {
		cJSON_Delete(clone);
		return nomem(err, errlen);
	}
	if (!eq(phase_of(claim), phase)) {
		if (!set_str(status, "phase", phase))
			goto oom;
		dirty = true;
	}
	if (!volume) {
		if (cur_modes && !cJSON_IsNull(cur_modes)) {
			cJSON_DeleteItemFromObjectCaseSensitive(status, "accessModes");
			dirty = true;
		}
		if (cur_cap && !cJSON_IsNull(cur_cap)) {
			cJSON_DeleteItemFromObjectCaseSensitive(status, "capacity");
			dirty = true;
		}
	} else {
		const cJSON *vmodes = get2(volume, "spec", "accessModes");
		const cJSON *vcap = get2(volume, "spec", "capacity");

		if (!json_equal(cJSON_IsNull(cur_modes) ? NULL : cur_modes,
		                cJSON_IsNull(vmodes) ? NULL : vmodes)) {
			cJSON_DeleteItemFromObjectCaseSensitive(status, "accessModes");
			if (vmodes && !cJSON_IsNull(vmodes) &&
			    !cJSON_AddItemToObject(status, "accessModes", dup(vmodes)))
				goto oom;
			dirty = true;
		}
		if (!eq(phase_of(claim), phase)) {
			const char *claim_cap = str(get(cur_cap, "storage"));
			const char *pre = ann(volume, PVB_ANN_PRE_RESIZE);

			if (!volume_capacity(volume)) {
				snprintf(err, errlen,
				         "persistentVolume %s is without a storage capacity",
				         name_of(volume));
				cJSON_Delete(clone);
				return -EINVAL;
			}
			if (has_ann(volume, PVB_ANN_PRE_RESIZE)) {
				/* the claim's status capacity is the size before the resize */
				__int128 q;
				cJSON *cap;

				if (!pre || kube_quantity_nano(pre, &q) < 0)
					pre = volume_capacity(volume);
				if (!(cap = obj_child(status, "capacity")) ||
				    !set_str(cap, "storage", pre))
					goto oom;
				dirty = true;
			} else if (!claim_cap ||
			           pvb_qty_cmp(volume_capacity(volume), claim_cap) != 0) {
				cJSON_DeleteItemFromObjectCaseSensitive(status, "capacity");
				if (!cJSON_AddItemToObject(status, "capacity", dup(vcap)))
					goto oom;
				dirty = true;
			}
		}
	}
	return write_back(ops, PVB_UPDATE_CLAIM_STATUS, clone, dirty, io, err, errlen);
oom:
	cJSON_Delete(clone);
	return nomem(err, errlen);
}

/* updateClaimStatusWithEvent: the Event only when the phase changes */
static int update_claim_status_event(const struct pvb_ops *ops, cJSON **io, const char *phase,
                                     const cJSON *volume, const char *type, const char *reason,
                                     const char *message, char *err, size_t errlen)
{
	int r;

	if (eq(phase_of(*io), phase))
		return 0;
	r = update_claim_status(ops, io, phase, volume, err, errlen);
	if (r < 0)
		return r;
	event(ops, *io, true, type, reason, message);
	return 0;
}

/* reference.GetReference of a claim */
static cJSON *claim_reference(const cJSON *claim)
{
	cJSON *r = cJSON_CreateObject();
	const char *rv = str(get2(claim, "metadata", "resourceVersion"));

	if (!r || !cJSON_AddStringToObject(r, "kind", "PersistentVolumeClaim") ||
	    !cJSON_AddStringToObject(r, "namespace", ns_of(claim)) ||
	    !cJSON_AddStringToObject(r, "name", name_of(claim)) ||
	    !cJSON_AddStringToObject(r, "uid", uid_of(claim)) ||
	    !cJSON_AddStringToObject(r, "apiVersion", "v1") ||
	    (rv && !cJSON_AddStringToObject(r, "resourceVersion", rv))) {
		cJSON_Delete(r);
		return NULL;
	}
	return r;
}

/* bindVolumeToClaim: claimRef and bound-by-controller, written when either changes */
static int bind_volume_to_claim(const struct pvb_ops *ops, cJSON **io, const cJSON *claim,
                                char *err, size_t errlen)
{
	const cJSON *volume = *io, *ref = claim_ref(volume);
	bool by_ctrl = !pvb_volume_bound_to_claim(volume, claim), dirty = false;
	cJSON *clone = dup(volume);

	if (!clone)
		return nomem(err, errlen);
	if (!ref || !eq(str(get(ref, "name")), name_of(claim)) ||
	    !eq(str(get(ref, "namespace")), ns_of(claim)) ||
	    !eq(str(get(ref, "uid")), uid_of(claim))) {
		cJSON *spec = obj_child(clone, "spec"), *nref = claim_reference(claim);

		if (!spec || !nref) {
			cJSON_Delete(nref);
			goto oom;
		}
		cJSON_DeleteItemFromObjectCaseSensitive(spec, "claimRef");
		cJSON_AddItemToObject(spec, "claimRef", nref);
		dirty = true;
	}
	if (by_ctrl && !has_ann(clone, PVB_ANN_BOUND_BY_CTRL)) {
		if (!set_ann(clone, PVB_ANN_BOUND_BY_CTRL, "yes"))
			goto oom;
		dirty = true;
	}
	return write_back(ops, PVB_UPDATE_VOLUME, clone, dirty, io, err, errlen);
oom:
	cJSON_Delete(clone);
	return nomem(err, errlen);
}

/* bindClaimToVolume: volumeName, bound-by-controller (when the controller chose the volume)
 * and bind-completed */
static int bind_claim_to_volume(const struct pvb_ops *ops, cJSON **io, const cJSON *volume,
                                char *err, size_t errlen)
{
	const cJSON *claim = *io;
	bool choose = !eq(name_of(volume), claim_volume_name(claim)), dirty = false;
	cJSON *clone = dup(claim), *spec;

	if (!clone)
		return nomem(err, errlen);
	if (choose) {
		if (!(spec = obj_child(clone, "spec")) ||
		    !set_str(spec, "volumeName", name_of(volume)))
			goto oom;
		dirty = true;
	}
	if (choose && !has_ann(clone, PVB_ANN_BOUND_BY_CTRL)) {
		if (!set_ann(clone, PVB_ANN_BOUND_BY_CTRL, "yes"))
			goto oom;
		dirty = true;
	}
	if (!has_ann(clone, PVB_ANN_BIND_COMPLETED)) {
		if (!set_ann(clone, PVB_ANN_BIND_COMPLETED, "yes"))
			goto oom;
		dirty = true;
	}
	return write_back(ops, PVB_UPDATE_CLAIM, clone, dirty, io, err, errlen);
oom:
	cJSON_Delete(clone);
	return nomem(err, errlen);
}

/* bind: volume (claimRef, then phase Bound), then claim (volumeName and annotations, then
 * status Bound). Each step uses what the previous write returned. */
static int bind(const struct pvb_ops *ops, const cJSON *volume, const cJSON *claim, char *err,
                size_t errlen)
{
	cJSON *v = dup(volume), *c = dup(claim);
	int r = -ENOMEM;

	if (!v || !c) {
		nomem(err, errlen);
		goto out;
	}
	if ((r = bind_volume_to_claim(ops, &v, c, err, errlen)) < 0)
		goto out;
	if ((r = update_volume_phase(ops, &v, "Bound", "", err, errlen)) < 0)
		goto out;
	if ((r = bind_claim_to_volume(ops, &c, v, err, errlen)) < 0)
		goto out;
	r = update_claim_status(ops, &c, "Bound", v, err, errlen);
out:
	cJSON_Delete(v);
	cJSON_Delete(c);
	return r;
}

/* unbindVolume: a controller's binding is removed whole; a user's pre-binding keeps the
 * claimRef without its uid. Then phase Available. */
static int unbind_volume(const struct pvb_ops *ops, const cJSON *volume, char *err, size_t errlen)
{
	cJSON *clone = dup(volume), *out = NULL;
	int r;

	if (!clone)
		return nomem(err, errlen);
	if (has_ann(volume, PVB_ANN_BOUND_BY_CTRL)) {
		cJSON_DeleteItemFromObjectCaseSensitive(
		        cJSON_GetObjectItemCaseSensitive(clone, "spec"), "claimRef");
		del_ann(clone, PVB_ANN_BOUND_BY_CTRL);
	} else {
		cJSON *ref = cJSON_GetObjectItemCaseSensitive(
		        cJSON_GetObjectItemCaseSensitive(clone, "spec"), "claimRef");

		cJSON_DeleteItemFromObjectCaseSensitive(ref, "uid");
	}
	r = ops->write(ops->ud, PVB_UPDATE_VOLUME, clone, &out, err, errlen);
	cJSON_Delete(clone);
	if (r < 0)
		return r;
	r = update_volume_phase(ops, &out, "Available", "", err, errlen);
	cJSON_Delete(out);
	return r;
}

/* ---- reclaim ---------------------------------------------------------------------------- */
/* isVolumeReleased, against the claim cache */
static int volume_released(const struct pvb_ops *ops, const cJSON *volume, bool *ret)
{
	const cJSON *ref = claim_ref(volume);
	cJSON *claim = NULL;
	int r;

	*ret = false;
	if (!ref || !*s0(str(get(ref, "uid"))))
		return 0;
	r = ops->get_claim(ops->ud, s0(str(get(ref, "namespace"))), s0(str(get(ref, "name"))),
	                   &claim);
	if (r < 0 && r != -ENOENT)
		return r;
	if (claim && eq(uid_of(claim), str(get(ref, "uid")))) {
		const char *vn = claim_volume_name(claim);

		*ret = *vn && !eq(vn, name_of(volume));
	} else {
		*ret = true;
	}
	cJSON_Delete(claim);
	return 0;
}

/* deleteVolumeOperation as far as kcmd has deleters: none in-tree (docs/pvbinder.md) */
static int delete_volume(const struct pvb_ops *ops, cJSON **io, char *err, size_t errlen)
{
	const cJSON *volume = *io;
	const char *prov = ann(volume, PVB_ANN_PROVISIONED_BY);
	char msg[600];
	bool released;
	int r;

	if (deleting(volume))
		return 0;
	r = volume_released(ops, volume, &released);
	if (r < 0 || !released)
		return 0; /* upstream: logged, retried at the next sync */
	if (has_ann(volume, PVB_ANN_PROVISIONED_BY) && prov && *prov) {
		if (strncmp(prov, "kubernetes.io/", 14) != 0)
			return 0; /* the external deleter's volume: wait for it */
		if (!strcmp(prov, "kubernetes.io/host-path")) {
			note(ops,
			     "volume %s: the hostPath deleter is not built in kcmd (%s); left "
			     "Released",
			     name_of(volume), prov);
			return 0;
		}
		snprintf(msg, sizeof(msg), "no volume plugin matched name: %s", prov);
	} else if (cJSON_IsObject(get2(volume, "spec", "hostPath"))) {
		note(ops, "volume %s: the hostPath deleter is not built in kcmd%s; left Released",
		     name_of(volume), "");
		return 0;
	} else {
		snprintf(msg, sizeof(msg),
		         "error getting deleter volume plugin for volume \"%s\": no deletable "
		         "volume "
		         "plugin matched",
		         name_of(volume));
	}
	r = update_volume_phase_event(ops, io, "Failed", WARNING, "VolumeFailedDelete", msg, err,
	                              errlen);
	if (r < 0)
		return r;
	snprintf(err, errlen, "%s", msg);
	return -ENOTSUP;
}

/* recycleVolumeOperation: kcm recycles hostPath and NFS volumes with a pod, which kcmd does not
 * build; any other volume has no recycler in kcm either */
static int recycle_volume(const struct pvb_ops *ops, cJSON **io, char *err, size_t errlen)
{
	const cJSON *volume = *io;
	bool released;
	int r = volume_released(ops, volume, &released);

	if (r < 0 || !released)
		return 0;
	if (cJSON_IsObject(get2(volume, "spec", "hostPath")) ||
	    cJSON_IsObject(get2(volume, "spec", "nfs"))) {
		note(ops, "volume %s: the recycler pod is not built in kcmd (%s); left Released",
		     name_of(volume), "policy Recycle");
		return 0;
	}
	return update_volume_phase_event(ops, io, "Failed", WARNING, "VolumeFailedRecycle",
	                                 "No recycler plugin found for the volume!", err, errlen);
}

static int reclaim_volume(const struct pvb_ops *ops, cJSON **io, char *err, size_t errlen)
{
	const char *pol = s0(str(get2(*io, "spec", "persistentVolumeReclaimPolicy")));
	const char *to = ann(*io, PVB_ANN_MIGRATED_TO);

	if (to && *to)
		return 0; /* the external provisioner's volume */
	if (!strcmp(pol, "Retain"))
		return 0;
	if (!strcmp(pol, "Recycle"))
		return recycle_volume(ops, io, err, errlen);
	if (!strcmp(pol, "Delete"))
		return delete_volume(ops, io, err, errlen);
	return update_volume_phase_event(ops, io, "Failed", WARNING, "VolumeUnknownReclaimPolicy",
	                                 "Volume has unrecognized PersistentVolumeReclaimPolicy",
	                                 err, errlen);
}

/* ---- syncVolume ------------------------------------------------------------------------- */
static int volume_phase_only(const struct pvb_ops *ops, const cJSON *volume, const char *phase,
                             char *err, size_t errlen)
{
	cJSON *v = dup(volume);
	int r;

	if (!v)
		return nomem(err, errlen);
	r = update_volume_phase(ops, &v, phase, "", err, errlen);
	cJSON_Delete(v);
	return r;
}

/* the volume's claim gone (or replaced): Released, then the reclaim policy */
static int release(const struct pvb_ops *ops, const cJSON *volume, char *err, size_t errlen)
{
	cJSON *v = dup(volume);
	int r = 0;

	if (!v)
		return nomem(err, errlen);
	if (!eq(phase_of(v), "Released") && !eq(phase_of(v), "Failed"))
		r = update_volume_phase(ops, &v, "Released", "", err, errlen);
	if (r == 0)
		r = reclaim_volume(ops, &v, err, errlen);
	cJSON_Delete(v);
	return r;
}

static int sync_volume(const struct pvb_ops *ops, const cJSON *volume, char *err, size_t errlen)
{
	const cJSON *ref = claim_ref(volume);
	const char *rns, *rname, *ruid;
	cJSON *claim = NULL;
	char key[520], msg[700];
	int r = 0;

	err[0] = 0;
	if (!ref || !*s0(str(get(ref, "uid"))))
		/* unused, or pre-bound to a claim the claim sync will bind */
		return volume_phase_only(ops, volume, "Available", err, errlen);
	rns = s0(str(get(ref, "namespace")));
	rname = s0(str(get(ref, "name")));
	ruid = s0(str(get(ref, "uid")));
	r = ops->get_claim(ops->ud, rns, rname, &claim);
	if (r < 0 && r != -ENOENT)
		goto fail;
	if (r == -ENOENT && !eq(phase_of(volume), "Released") && !eq(phase_of(volume), "Failed")) {
		/* not in the cache yet (a volume an external provisioner just made): ask the
		 * apiserver before releasing it */
		r = ops->get_claim_live(ops->ud, rns, rname, &claim);
		if (r < 0 && r != -ENOENT)
			goto fail;
	}
	if (claim && !eq(uid_of(claim), ruid)) {
		/* the cache may be behind the apiserver: check the newest claim */
		cJSON_Delete(claim);
		claim = NULL;
		r = ops->get_claim_live(ops->ud, rns, rname, &claim);
		if (r < 0 && r != -ENOENT)
			goto fail;
		if (claim && !eq(uid_of(claim), ruid)) {
			cJSON_Delete(claim);
			claim = NULL;
		}
	}
	r = 0;
	if (!claim) {
		r = release(ops, volume, err, errlen);
	} else if (!*claim_volume_name(claim)) {
		if (pvb_volume_mode_mismatch(claim, volume)) {
			snprintf(msg, sizeof(msg),
			         "Cannot bind PersistentVolume to requested PersistentVolumeClaim "
			         "%s due "
			         "to incompatible volumeMode.",
			         name_of(claim));
			event(ops, volume, false, WARNING, "VolumeMismatch", msg);
			snprintf(msg, sizeof(msg),
			         "Cannot bind PersistentVolume %s to requested "
			         "PersistentVolumeClaim due "
			         "to incompatible volumeMode.",
			         name_of(volume));
			event(ops, claim, true, WARNING, "VolumeMismatch", msg);
		} else if (ops->enqueue_claim) {
			/* bound volume, pending claim: the claim sync finishes it */
			snprintf(key, sizeof(key), "%s/%s", ns_of(claim), name_of(claim));
			ops->enqueue_claim(ops->ud, key);
		}
	} else if (eq(claim_volume_name(claim), name_of(volume))) {
		r = volume_phase_only(ops, volume, "Bound", err, errlen);
	} else if (has_ann(volume, PVB_ANN_PROVISIONED_BY) &&
	           eq(str(get2(volume, "spec", "persistentVolumeReclaimPolicy")), "Delete")) {
		/* provisioned for this claim, which got another volume: not needed */
		r = release(ops, volume, err, errlen);
	} else {
		/* the controller's binding is undone; a user's pre-binding keeps its claimRef */
		r = unbind_volume(ops, volume, err, errlen);
	}
	cJSON_Delete(claim);
	return r;
fail:
	snprintf(err, errlen, "error getting claim %s/%s: %s", rns, rname, strerror(-r));
	cJSON_Delete(claim);
	return r;
}

static int migration_annotations(cJSON *o, bool is_claim);

/* ---- syncClaim -------------------------------------------------------------------------- */
/* IsDelayBindingMode */
static int delay_binding_mode(const struct pvb_ops *ops, const cJSON *claim, bool *ret, char *err,
                              size_t errlen)
{
	const char *cls = pvb_claim_class(claim);
	const cJSON *mode;
	cJSON *sc = NULL;
	int r;

	*ret = false;
	if (!*cls)
		return 0;
	r = ops->get_class(ops->ud, cls, &sc);
	if (r == -ENOENT)
		return 0;
	if (r < 0) {
		snprintf(err, errlen, "error getting StorageClass %s: %s", cls, strerror(-r));
		return r;
	}
	mode = get(sc, "volumeBindingMode");
	if (!cJSON_IsString(mode)) {
		snprintf(err, errlen, "VolumeBindingMode not set for StorageClass \"%s\"", cls);
		cJSON_Delete(sc);
		return -EINVAL;
	}
	*ret = !strcmp(mode->valuestring, "WaitForFirstConsumer");
	cJSON_Delete(sc);
	return 0;
}

/* assignDefaultStorageClass: 1 when the claim was updated, 0 when there is nothing to do */
static int assign_default_class(const struct pvb_ops *ops, const cJSON *claim, char *err,
                                size_t errlen)
{
	cJSON *classes = NULL, *clone = NULL, *out = NULL, *spec;
	const cJSON *def;
	int r;

	if (claim_has_class(claim))
		return 0;
	r = ops->list_classes(ops->ud, &classes);
	if (r < 0) {
		snprintf(err, errlen, "listing StorageClasses: %s", strerror(-r));
		return r;
	}
	def = pvb_default_class(classes);
	if (!def) {
		cJSON_Delete(classes);
		return 0;
	}
	if (!(clone = dup(claim)) || !(spec = obj_child(clone, "spec")) ||
	    !set_str(spec, "storageClassName", name_of(def))) {
		cJSON_Delete(clone);
		cJSON_Delete(classes);
		return nomem(err, errlen);
	}
	cJSON_Delete(classes);
	r = ops->write(ops->ud, PVB_UPDATE_CLAIM, clone, &out, err, errlen);
	cJSON_Delete(clone);
	cJSON_Delete(out);
	return r < 0 ? r : 1;
}

/* provisionClaim for an external provisioner: the provisioner annotations (current and beta)
 * on the claim, then the ExternalProvisioning Event */
static int provision_claim(const struct pvb_ops *ops, const cJSON *claim, char *err, size_t errlen)
{
	const char *cls = pvb_claim_class(claim), *prov;
	cJSON *sc = NULL, *clone = NULL, *out = NULL;
	char msg[1024];
	int r;

	if (!ops->enable_dynamic_provisioning)
		return 0;
	r = ops->get_class(ops->ud, cls, &sc);
	if (r < 0) {
		/* the lister's error text; retried at the next sync */
		if (r == -ENOENT)
			snprintf(msg, sizeof(msg), "storageclass.storage.k8s.io \"%s\" not found",
			         cls);
		else
			snprintf(msg, sizeof(msg), "error getting StorageClass %s: %s", cls,
			         strerror(-r));
		event(ops, claim, true, WARNING, "ProvisioningFailed", msg);
		return 0;
	}
	prov = s0(str(get(sc, "provisioner")));
	if (csi_driver_of(prov))
		prov = csi_driver_of(prov); /* CSI migration: the CSI driver provisions */
	if (!strncmp(prov, "kubernetes.io/", 14)) {
		/* an in-tree plugin: none is built in kcmd (docs/pvbinder.md) */
		snprintf(msg, sizeof(msg), "no volume plugin matched name: %s", prov);
		event(ops, claim, true, WARNING, "ProvisioningFailed", msg);
		cJSON_Delete(sc);
		return 0;
	}
	if (!eq(ann(claim, PVB_ANN_STORAGE_PROV), prov)) {
		if (!(clone = dup(claim)) || !set_ann(clone, PVB_ANN_BETA_STORAGE_PROV, prov) ||
		    !set_ann(clone, PVB_ANN_STORAGE_PROV, prov) ||
		    migration_annotations(clone, true) < 0) {
			cJSON_Delete(clone);
			cJSON_Delete(sc);
			return nomem(err, errlen);
		}
		r = ops->write(ops->ud, PVB_UPDATE_CLAIM, clone, &out, err, errlen);
		cJSON_Delete(clone);
		if (r < 0) {
			cJSON_Delete(sc);
			return r;
		}
		claim = out;
	}
	snprintf(msg, sizeof(msg),
	         "Waiting for a volume to be created either by the external provisioner '%s' or "
	         "manually by the system administrator. If volume creation is delayed, please "
	         "verify "
	         "that the provisioner is running and correctly registered.",
	         prov);
	event(ops, claim, true, NORMAL, "ExternalProvisioning", msg);
	cJSON_Delete(out);
	cJSON_Delete(sc);
	return 0;
}

static int claim_status_only(const struct pvb_ops *ops, const cJSON *claim, const char *phase,
                             char *err, size_t errlen)
{
	cJSON *c = dup(claim);
	int r;

	if (!c)
		return nomem(err, errlen);
	r = update_claim_status(ops, &c, phase, NULL, err, errlen);
	cJSON_Delete(c);
	return r;
}

static int claim_lost(const struct pvb_ops *ops, const cJSON *claim, const char *reason,
                      const char *msg, char *err, size_t errlen)
{
	cJSON *c = dup(claim);
	int r;

	if (!c)
		return nomem(err, errlen);
	r = update_claim_status_event(ops, &c, "Lost", NULL, WARNING, reason, msg, err, errlen);
	cJSON_Delete(c);
	return r;
}

/* checkVolumeSatisfyClaim: NULL, or why the requested volume does not fit */
static const char *volume_unsatisfying(const cJSON *volume, const cJSON *claim, char *buf, size_t n)
{
	if (deleting(volume)) {
		snprintf(buf, n, "the volume is marked for deletion \"%s\"", name_of(volume));
		return buf;
	}
	if (qty_value(volume_capacity(volume)) < qty_value(claim_request(claim)))
		return "requested PV is too small";
	if (!eq(pvb_volume_class(volume), pvb_claim_class(claim)))
		return "storageClassName does not match";
	if (pvb_volume_mode_mismatch(claim, volume))
		return "incompatible volumeMode";
	if (!access_modes_ok(claim, volume))
		return "incompatible accessMode";
	if (!eq(vac_of(volume), vac_of(claim)))
		return "volumeAttributesClassName does not match";
	return NULL;
}

/* the pod has ended: Succeeded, Failed, or being deleted with no container running */
static bool pod_terminated(const cJSON *pod)
{
	const char *ph = phase_of(pod);
	const cJSON *cs;

	if (eq(ph, "Succeeded") || eq(ph, "Failed"))
		return true;
	if (!deleting(pod))
		return false;
	cJSON_ArrayForEach(cs, get2(pod, "status", "containerStatuses"))
	{
		const cJSON *st = get(cs, "state");

		if (!get(st, "terminated") && !get(st, "waiting"))
			return false;
	}
	return true;
}

static bool pod_uses_claim(const cJSON *pod, const char *claim_name)
{
	const cJSON *v;
	char eph[600];

	cJSON_ArrayForEach(v, get2(pod, "spec", "volumes"))
	{
		if (eq(str(get2(v, "persistentVolumeClaim", "claimName")), claim_name))
			return true;
		if (get(v, "ephemeral")) {
			snprintf(eph, sizeof(eph), "%s-%s", name_of(pod), s0(str(get(v, "name"))));
			if (!strcmp(eph, claim_name))
				return true;
		}
	}
	return false;
}

int pvb_unscheduled_pods(const cJSON *claim, const cJSON *pods, char *buf, size_t n)
{
	const cJSON *p;
	size_t len = 0;
	int count = 0;

	if (n)
		buf[0] = 0;
	cJSON_ArrayForEach(p, pods)
	{
		if (!eq(ns_of(p), ns_of(claim)) || !pod_uses_claim(p, name_of(claim)) ||
		    pod_terminated(p) || *s0(str(get2(p, "spec", "nodeName"))))
			continue;
		if (len < n)
			len += (size_t)snprintf(buf + len, n - len, "%s%s", count ? "," : "",
			                        name_of(p));
		count++;
	}
	return count;
}

/* emitEventForUnboundDelayBindingClaim */
static int wait_event(const struct pvb_ops *ops, const cJSON *claim, char *err, size_t errlen)
{
	cJSON *pods = NULL;
	char names[600], msg[700];
	int r, n = 0;

	if (ops->list_pods) {
		if ((r = ops->list_pods(ops->ud, ns_of(claim), &pods)) < 0) {
			snprintf(err, errlen, "listing the pods of namespace %s: %s", ns_of(claim),
			         strerror(-r));
			return r;
		}
		n = pvb_unscheduled_pods(claim, pods, names, sizeof(names));
		cJSON_Delete(pods);
	}
	if (n == 0) {
		event(ops, claim, true, NORMAL, "WaitForFirstConsumer",
		      "waiting for first consumer to be created before binding");
		return 0;
	}
	snprintf(msg, sizeof(msg), "waiting for pod%s %s to be scheduled", n > 1 ? "s" : "", names);
	event(ops, claim, true, NORMAL, "WaitForPodScheduled", msg);
	return 0;
}

static int sync_unbound_claim(const struct pvb_ops *ops, const cJSON *claim, char *err,
                              size_t errlen)
{
	const char *vn = claim_volume_name(claim);
	cJSON *volume = NULL;
	char msg[700], why[300];
	int r;

	if (!*vn) {
		cJSON *volumes = NULL;
		const cJSON *match = NULL;
		bool delay;

		if ((r = delay_binding_mode(ops, claim, &delay, err, errlen)) < 0)
			return r;
		if ((r = ops->list_volumes(ops->ud, &volumes)) < 0) {
			snprintf(err, errlen, "listing volumes: %s", strerror(-r));
			return r;
		}
		r = pvb_find_best_match(claim, volumes, delay, &match, why, sizeof(why));
		if (r < 0) {
			snprintf(err, errlen, "error finding PV for claim \"%s/%s\": %s",
			         ns_of(claim), name_of(claim), why);
			cJSON_Delete(volumes);
			return r;
		}
		if (match) {
			r = bind(ops, match, claim, err, errlen);
			cJSON_Delete(volumes);
			return r;
		}
		cJSON_Delete(volumes);
		/* no volume: a default class (retroactively), provisioning, or Pending */
		r = assign_default_class(ops, claim, err, errlen);
		if (r != 0 && ops->retroactive_class)
			ops->retroactive_class(ops->ud, r == 1);
		if (r < 0) {
			char inner[400];

			snprintf(inner, sizeof(inner), "%s", err);
			snprintf(err, errlen, "can't update PersistentVolumeClaim[\"%s/%s\"]: %s",
			         ns_of(claim), name_of(claim), inner);
			return r;
		}
		if (r == 1)
			return 0; /* the update's event syncs the claim again */
		if (delay && !has_ann(claim, PVB_ANN_SELECTED_NODE)) {
			if ((r = wait_event(ops, claim, err, errlen)) < 0)
				return r;
		} else if (*pvb_claim_class(claim)) {
			return provision_claim(ops, claim, err, errlen);
		} else {
			event(ops, claim, true, NORMAL, "FailedBinding",
			      "no persistent volumes available for this claim and no storage class "
			      "is "
			      "set");
		}
		return claim_status_only(ops, claim, "Pending", err, errlen);
	}
	/* the user asked for a volume by name */
	r = ops->get_volume(ops->ud, vn, &volume);
	if (r == -ENOENT)
		return claim_status_only(ops, claim, "Pending", err, errlen);
	if (r < 0) {
		snprintf(err, errlen, "error getting volume %s: %s", vn, strerror(-r));
		return r;
	}
	if (!claim_ref(volume)) {
		const char *no = volume_unsatisfying(volume, claim, why, sizeof(why));

		if (no) {
			snprintf(msg, sizeof(msg), "Cannot bind to requested volume \"%s\": %s", vn,
			         no);
			event(ops, claim, true, WARNING, "VolumeMismatch", msg);
			r = claim_status_only(ops, claim, "Pending", err, errlen);
		} else {
			r = bind(ops, volume, claim, err, errlen);
		}
	} else if (pvb_volume_bound_to_claim(volume, claim)) {
		r = bind(ops, volume, claim, err, errlen);
	} else if (!has_ann(claim, PVB_ANN_BOUND_BY_CTRL)) {
		/* claimed by someone else: the user's choice, retried later */
		r = claim_status_only(ops, claim, "Pending", err, errlen);
	} else {
		const cJSON *ref = claim_ref(volume);

		snprintf(err, errlen,
		         "invalid binding of claim \"%s/%s\" to volume \"%s\": volume already "
		         "claimed "
		         "by \"%s/%s\"",
		         ns_of(claim), name_of(claim), vn, s0(str(get(ref, "namespace"))),
		         s0(str(get(ref, "name"))));
		r = -EINVAL;
	}
	cJSON_Delete(volume);
	return r;
}

static int sync_bound_claim(const struct pvb_ops *ops, const cJSON *claim, char *err, size_t errlen)
{
	const char *vn = claim_volume_name(claim);
	cJSON *volume = NULL;
	const cJSON *ref;
	int r;

	if (!*vn)
		return claim_lost(ops, claim, "ClaimLost",
		                  "Bound claim has lost reference to PersistentVolume. Data on the "
		                  "volume is lost!",
		                  err, errlen);
	r = ops->get_volume(ops->ud, vn, &volume);
	if (r == -ENOENT)
		return claim_lost(
		        ops, claim, "ClaimLost",
		        "Bound claim has lost its PersistentVolume. Data on the volume is "
		        "lost!",
		        err, errlen);
	if (r < 0) {
		snprintf(err, errlen, "error getting volume %s: %s", vn, strerror(-r));
		return r;
	}
	ref = claim_ref(volume);
	if (!ref || eq(str(get(ref, "uid")), uid_of(claim)))
		/* come unbound (or not seen bound yet), or all is well: bind() sets what is
		 * missing */
		r = bind(ops, volume, claim, err, errlen);
	else
		r = claim_lost(
		        ops, claim, "ClaimMisbound",
		        "Two claims are bound to the same volume, this one is bound incorrectly",
		        err, errlen);
	cJSON_Delete(volume);
	return r;
}

/*
 * updateMigrationAnnotations: pv.kubernetes.io/migrated-to follows the provisioner (a claim's
 * storage-provisioner annotation, else the beta one; a volume's provisioned-by): the CSI
 * driver of a migrated in-tree plugin, removed for any other provisioner. Without a
 * provisioner annotation nothing changes. Returns whether o changed (-ENOMEM).
 */
static int migration_annotations(cJSON *o, bool is_claim)
{
	const char *key = is_claim ? PVB_ANN_STORAGE_PROV : PVB_ANN_PROVISIONED_BY;
	const char *prov, *driver, *cur = ann(o, PVB_ANN_MIGRATED_TO);

	if (!has_ann(o, key)) {
		if (!is_claim || !has_ann(o, PVB_ANN_BETA_STORAGE_PROV))
			return 0;
		key = PVB_ANN_BETA_STORAGE_PROV;
	}
	prov = ann(o, key);
	driver = csi_driver_of(prov);
	if (driver) {
		if (eq(cur, driver))
			return 0;
		return set_ann(o, PVB_ANN_MIGRATED_TO, driver) ? 1 : -ENOMEM;
	}
	if (!cur || !*cur)
		return 0;
	del_ann(o, PVB_ANN_MIGRATED_TO);
	return 1;
}

static bool has_finalizer(const cJSON *fins, const char *f)
{
	const cJSON *x;

	cJSON_ArrayForEach(x, fins)
	{
		if (cJSON_IsString(x) && !strcmp(x->valuestring, f))
			return true;
	}
	return false;
}

/* every occurrence of f out of fins (slice.RemoveString) */
static void remove_finalizer(cJSON *fins, const char *f)
{
	cJSON *x = fins ? fins->child : NULL;

	while (x) {
		cJSON *next = x->next;
		if (cJSON_IsString(x) && !strcmp(x->valuestring, f))
			cJSON_Delete(cJSON_DetachItemViaPointer(fins, x));
		x = next;
	}
}

int pvb_deletion_finalizers(cJSON *volume)
{
	cJSON *md = cJSON_GetObjectItemCaseSensitive(volume, "metadata");
	cJSON *fins = cJSON_GetObjectItemCaseSensitive(md, "finalizers");
	const char *prov = ann(volume, PVB_ANN_PROVISIONED_BY);
	const char *policy = str(get2(volume, "spec", "persistentVolumeReclaimPolicy"));
	bool modified = false;

	/* only dynamically provisioned volumes (the annotation present, whatever its value) */
	if (!has_ann(volume, PVB_ANN_PROVISIONED_BY) || !md)
		return 0;
	if (fins && !cJSON_IsArray(fins))
		return 0; /* not a list: nothing this sync can reason about */
	if (csi_driver_of(prov)) {
		/* migrated to CSI: the in-tree finalizer goes, the CSI provisioner's stays */
		if (!has_finalizer(fins, PVB_FIN_IN_TREE))
			return 0;
		remove_finalizer(fins, PVB_FIN_IN_TREE);
		modified = true;
	} else if (!prov || strncmp(prov, "kubernetes.io/", 14) != 0) {
		return 0; /* an external provisioner's volume */
	} else {
		if (eq(policy, "Delete") && !has_finalizer(fins, PVB_FIN_IN_TREE)) {
			if (!fins && !(fins = cJSON_AddArrayToObject(md, "finalizers")))
				return -ENOMEM;
			cJSON *f = cJSON_CreateString(PVB_FIN_IN_TREE);
			if (!f)
				return -ENOMEM;
			cJSON_AddItemToArray(fins, f);
			modified = true;
		} else if ((eq(policy, "Retain") || eq(policy, "Recycle")) &&
		           has_finalizer(fins, PVB_FIN_IN_TREE)) {
			remove_finalizer(fins, PVB_FIN_IN_TREE);
			modified = true;
		}
		if (has_finalizer(fins, PVB_FIN_EXTERNAL)) {
			remove_finalizer(fins, PVB_FIN_EXTERNAL);
			modified = true;
		}
	}
	/* an emptied list is no list (Go's nil slice, omitted) */
	if (fins && !fins->child)
		cJSON_DeleteItemFromObjectCaseSensitive(md, "finalizers");
	return modified ? 1 : 0;
}

/* the annotation written (an Update) before the sync, which then runs on what was written */
static int anneal(const struct pvb_ops *ops, const cJSON *o, bool is_claim, cJSON **ret, char *err,
                  size_t errlen)
{
	cJSON *clone = dup(o);
	char inner[600];
	int r;

	*ret = NULL;
	if (!clone)
		return nomem(err, errlen);
	r = migration_annotations(clone, is_claim);
	if (r >= 0 && !is_claim) {
		/* updateVolumeMigrationAnnotationsAndFinalizers: both in one Update */
		int f = pvb_deletion_finalizers(clone);
		r = f < 0 ? f : r || f;
	}
	if (r <= 0) {
		cJSON_Delete(clone);
		return r < 0 ? nomem(err, errlen) : 0;
	}
	r = ops->write(ops->ud, is_claim ? PVB_UPDATE_CLAIM : PVB_UPDATE_VOLUME, clone, ret, inner,
	               sizeof(inner));
	cJSON_Delete(clone);
	if (r < 0)
		snprintf(err, errlen,
		         "persistent Volume Controller can't anneal migration annotations%s: %s",
		         is_claim ? "" : " or finalizer", inner);
	return r;
}

int pvb_sync_volume(const struct pvb_ops *ops, const cJSON *volume, char *err, size_t errlen)
{
	cJSON *updated = NULL;
	int r;

	err[0] = 0;
	if ((r = anneal(ops, volume, false, &updated, err, errlen)) < 0)
		return r;
	r = sync_volume(ops, updated ? updated : volume, err, errlen);
	cJSON_Delete(updated);
	return r;
}

int pvb_sync_claim(const struct pvb_ops *ops, const cJSON *claim, char *err, size_t errlen)
{
	cJSON *updated = NULL;
	const cJSON *c;
	int r;

	err[0] = 0;
	if ((r = anneal(ops, claim, true, &updated, err, errlen)) < 0)
		return r;
	c = updated ? updated : claim;
	if (!has_ann(c, PVB_ANN_BIND_COMPLETED))
		r = sync_unbound_claim(ops, c, err, errlen);
	else
		r = sync_bound_claim(ops, c, err, errlen);
	cJSON_Delete(updated);
	return r;
}
