/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/pvbinder/tests/test-binder.c: the binder's sync logic (binder.h) run as upstream's
 * binder_test.go runs it: a store of volumes, claims and StorageClasses (the fake reactor: a
 * write with a stale resourceVersion is a conflict, every write bumps it), one syncClaim or
 * syncVolume on the first initial object, then the store compared with the expected objects
 * (resourceVersions and lastPhaseTransitionTime left out, as upstream leaves them out) and
 * the Events with the expected "Type Reason" list. Cases are named after upstream's ids
 * (TestSync, sets 1-4 and 13); the ones kcmd adds (external provisioning, default class,
 * WaitForFirstConsumer, reclaim policies without in-tree plugins) say "kcmd:".
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "workers/pvbinder/binder.h"

/* ---- objects (upstream's newVolume / newClaim) ------------------------------------------ */
enum {
	A_BOUND_BY = 1u << 0,      /* pv.kubernetes.io/bound-by-controller: yes */
	A_COMPLETED = 1u << 1,     /* pv.kubernetes.io/bind-completed: yes */
	A_PROV_EXT = 1u << 2,      /* pv.kubernetes.io/provisioned-by: kcmd.test/external */
	A_PROV_EXT_ANNS = 1u << 3, /* both storage-provisioner annotations: kcmd.test/external */
	A_SELECTED = 1u << 4,      /* volume.kubernetes.io/selected-node: node1 */
};

static void add_anns(cJSON *o, unsigned anns)
{
	cJSON *md = cJSON_GetObjectItem(o, "metadata"), *a;

	if (!anns)
		return;
	a = cJSON_AddObjectToObject(md, "annotations");
	if (anns & A_BOUND_BY)
		cJSON_AddStringToObject(a, PVB_ANN_BOUND_BY_CTRL, "yes");
	if (anns & A_COMPLETED)
		cJSON_AddStringToObject(a, PVB_ANN_BIND_COMPLETED, "yes");
	if (anns & A_PROV_EXT)
		cJSON_AddStringToObject(a, PVB_ANN_PROVISIONED_BY, "kcmd.test/external");
	if (anns & A_PROV_EXT_ANNS) {
		cJSON_AddStringToObject(a, PVB_ANN_BETA_STORAGE_PROV, "kcmd.test/external");
		cJSON_AddStringToObject(a, PVB_ANN_STORAGE_PROV, "kcmd.test/external");
	}
	if (anns & A_SELECTED)
		cJSON_AddStringToObject(a, PVB_ANN_SELECTED_NODE, "node1");
}

static cJSON *modes(void)
{
	const char *m[] = {"ReadWriteOnce", "ReadOnlyMany"};

	return cJSON_CreateStringArray(m, 2);
}

/* cls: NULL no storageClassName, else that value */
static cJSON *vol(const char *name, const char *cap, const char *uid, const char *claim,
                  const char *phase, const char *policy, const char *cls, unsigned anns)
{
	cJSON *o = cJSON_CreateObject(), *md = cJSON_AddObjectToObject(o, "metadata");
	cJSON *spec = cJSON_AddObjectToObject(o, "spec"),
	      *st = cJSON_AddObjectToObject(o, "status");

	cJSON_AddStringToObject(md, "name", name);
	cJSON_AddStringToObject(md, "uid", name);
	cJSON_AddStringToObject(md, "resourceVersion", "1");
	cJSON_AddStringToObject(cJSON_AddObjectToObject(spec, "capacity"), "storage", cap);
	cJSON_AddStringToObject(cJSON_AddObjectToObject(spec, "csi"), "driver", "kcmd.test/csi");
	cJSON_AddItemToObject(spec, "accessModes", modes());
	cJSON_AddStringToObject(spec, "persistentVolumeReclaimPolicy", policy);
	if (cls)
		cJSON_AddStringToObject(spec, "storageClassName", cls);
	if (*claim) {
		cJSON *ref = cJSON_AddObjectToObject(spec, "claimRef");

		cJSON_AddStringToObject(ref, "kind", "PersistentVolumeClaim");
		cJSON_AddStringToObject(ref, "namespace", "default");
		cJSON_AddStringToObject(ref, "name", claim);
		if (*uid)
			cJSON_AddStringToObject(ref, "uid", uid);
		cJSON_AddStringToObject(ref, "apiVersion", "v1");
	}
	if (*phase)
		cJSON_AddStringToObject(st, "phase", phase);
	add_anns(o, anns);
	return o;
}

static cJSON *claim(const char *name, const char *uid, const char *req, const char *volume,
                    const char *phase, const char *cls, unsigned anns)
{
	cJSON *o = cJSON_CreateObject(), *md = cJSON_AddObjectToObject(o, "metadata");
	cJSON *spec = cJSON_AddObjectToObject(o, "spec"),
	      *st = cJSON_AddObjectToObject(o, "status");

	cJSON_AddStringToObject(md, "name", name);
	cJSON_AddStringToObject(md, "namespace", "default");
	cJSON_AddStringToObject(md, "uid", uid);
	cJSON_AddStringToObject(md, "resourceVersion", "1");
	cJSON_AddItemToObject(spec, "accessModes", modes());
	cJSON_AddStringToObject(
	        cJSON_AddObjectToObject(cJSON_AddObjectToObject(spec, "resources"), "requests"),
	        "storage", req);
	if (*volume)
		cJSON_AddStringToObject(spec, "volumeName", volume);
	if (cls)
		cJSON_AddStringToObject(spec, "storageClassName", cls);
	cJSON_AddStringToObject(st, "phase", phase);
	if (!strcmp(phase, "Bound")) {
		cJSON_AddItemToObject(st, "accessModes", modes());
		cJSON_AddStringToObject(cJSON_AddObjectToObject(st, "capacity"), "storage", req);
	}
	add_anns(o, anns);
	return o;
}

static cJSON *sc(const char *name, const char *prov, const char *mode, bool def, const char *ts)
{
	cJSON *o = cJSON_CreateObject(), *md = cJSON_AddObjectToObject(o, "metadata");

	cJSON_AddStringToObject(md, "name", name);
	cJSON_AddStringToObject(md, "creationTimestamp", ts);
	if (def)
		cJSON_AddStringToObject(cJSON_AddObjectToObject(md, "annotations"),
		                        PVB_ANN_DEFAULT_CLASS, "true");
	cJSON_AddStringToObject(o, "provisioner", prov);
	cJSON_AddStringToObject(o, "volumeBindingMode", mode);
	return o;
}

/* withExpectedCapacity */
static cJSON *with_capacity(const char *cap, cJSON *c)
{
	cJSON *st = cJSON_GetObjectItem(c, "status");

	cJSON_DeleteItemFromObject(st, "capacity");
	cJSON_AddStringToObject(cJSON_AddObjectToObject(st, "capacity"), "storage", cap);
	return c;
}

/* withLabels / withLabelSelector: foo=true, bar=false */
static cJSON *with_labels(cJSON *v)
{
	cJSON *l = cJSON_AddObjectToObject(cJSON_GetObjectItem(v, "metadata"), "labels");

	cJSON_AddStringToObject(l, "foo", "true");
	cJSON_AddStringToObject(l, "bar", "false");
	return v;
}

static cJSON *with_selector(cJSON *c)
{
	cJSON *s = cJSON_AddObjectToObject(cJSON_GetObjectItem(c, "spec"), "selector");
	cJSON *l = cJSON_AddObjectToObject(s, "matchLabels");

	cJSON_AddStringToObject(l, "foo", "true");
	cJSON_AddStringToObject(l, "bar", "false");
	return c;
}

static cJSON *with_mode(const char *mode, cJSON *o)
{
	cJSON_AddStringToObject(cJSON_GetObjectItem(o, "spec"), "volumeMode", mode);
	return o;
}

static cJSON *with_message(const char *msg, cJSON *v)
{
	cJSON_AddStringToObject(cJSON_GetObjectItem(v, "status"), "message", msg);
	return v;
}

static cJSON *arr(int n, ...)
{
	cJSON *a = cJSON_CreateArray();
	va_list ap;

	va_start(ap, n);
	for (int i = 0; i < n; i++)
		cJSON_AddItemToArray(a, va_arg(ap, cJSON *));
	va_end(ap);
	return a;
}

#define NONE cJSON_CreateArray()

/* ---- the fake store (upstream's volumeReactor) ------------------------------------------ */
struct store {
	cJSON *volumes, *claims, *classes, *pods;
	long rv;
	char events[16][768];
	int n_events;
	char enqueued[8][128];
	int n_enqueued;
	int writes;
	int retro_ok, retro_failed; /* ops->retroactive_class calls */
};

static cJSON *find(cJSON *a, const char *ns, const char *name)
{
	cJSON *x;

	cJSON_ArrayForEach(x, a)
	{
		cJSON *md = cJSON_GetObjectItem(x, "metadata");
		const char *n = cJSON_GetStringValue(cJSON_GetObjectItem(md, "name"));
		const char *s = cJSON_GetStringValue(cJSON_GetObjectItem(md, "namespace"));

		if (n && !strcmp(n, name) && (!ns || (s && !strcmp(s, ns))))
			return x;
	}
	return NULL;
}

static int get_in(cJSON *a, const char *ns, const char *name, cJSON **ret)
{
	cJSON *x = find(a, ns, name);

	*ret = x ? cJSON_Duplicate(x, true) : NULL;
	return x ? 0 : -ENOENT;
}

static int f_get_volume(void *ud, const char *name, cJSON **ret)
{
	return get_in(((struct store *)ud)->volumes, NULL, name, ret);
}

static int f_list_volumes(void *ud, cJSON **ret)
{
	*ret = cJSON_Duplicate(((struct store *)ud)->volumes, true);
	return 0;
}

static int f_get_claim(void *ud, const char *ns, const char *name, cJSON **ret)
{
	return get_in(((struct store *)ud)->claims, ns, name, ret);
}

static int f_get_class(void *ud, const char *name, cJSON **ret)
{
	return get_in(((struct store *)ud)->classes, NULL, name, ret);
}

static int f_list_classes(void *ud, cJSON **ret)
{
	*ret = cJSON_Duplicate(((struct store *)ud)->classes, true);
	return 0;
}

static int f_list_pods(void *ud, const char *ns, cJSON **ret)
{
	struct store *s = ud;
	cJSON *a = cJSON_CreateArray(), *p;

	cJSON_ArrayForEach(p, s->pods)
	{
		const char *pns = cJSON_GetStringValue(
		        cJSON_GetObjectItem(cJSON_GetObjectItem(p, "metadata"), "namespace"));

		if (pns && !strcmp(pns, ns))
			cJSON_AddItemToArray(a, cJSON_Duplicate(p, true));
	}
	*ret = a;
	return 0;
}

static int f_write(void *ud, enum pvb_write w, const cJSON *obj, cJSON **ret, char *err,
                   size_t errlen)
{
	struct store *s = ud;
	bool is_claim = w == PVB_UPDATE_CLAIM || w == PVB_UPDATE_CLAIM_STATUS;
	bool status = w == PVB_UPDATE_VOLUME_STATUS || w == PVB_UPDATE_CLAIM_STATUS;
	cJSON *md = cJSON_GetObjectItem(obj, "metadata");
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(md, "name"));
	const char *ns =
	        is_claim ? cJSON_GetStringValue(cJSON_GetObjectItem(md, "namespace")) : NULL;
	const char *rv = cJSON_GetStringValue(cJSON_GetObjectItem(md, "resourceVersion"));
	cJSON *a = is_claim ? s->claims : s->volumes, *cur = find(a, ns, name), *next;
	char buf[32];

	if (!cur) {
		snprintf(err, errlen, "not found");
		return -ENOENT;
	}
	if (!rv || strcmp(rv, cJSON_GetStringValue(cJSON_GetObjectItem(
	                              cJSON_GetObjectItem(cur, "metadata"), "resourceVersion")))) {
		snprintf(err, errlen, "conflict");
		return -ESTALE;
	}
	if (status) { /* the status subresource keeps spec and metadata */
		next = cJSON_Duplicate(cur, true);
		cJSON_DeleteItemFromObject(next, "status");
		cJSON_AddItemToObject(next, "status",
		                      cJSON_Duplicate(cJSON_GetObjectItem(obj, "status"), true));
	} else { /* the main resource keeps status */
		next = cJSON_Duplicate(obj, true);
		cJSON_DeleteItemFromObject(next, "status");
		cJSON_AddItemToObject(next, "status",
		                      cJSON_Duplicate(cJSON_GetObjectItem(cur, "status"), true));
	}
	snprintf(buf, sizeof(buf), "%ld", ++s->rv);
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(next, "metadata"), "resourceVersion",
	                          cJSON_CreateString(buf));
	for (int i = 0; i < cJSON_GetArraySize(a); i++)
		if (cJSON_GetArrayItem(a, i) == cur) {
			cJSON_ReplaceItemInArray(a, i, next);
			break;
		}
	s->writes++;
	*ret = cJSON_Duplicate(next, true);
	return 0;
}

static void f_event(void *ud, const cJSON *obj, bool is_claim, const char *type, const char *reason,
                    const char *msg)
{
	struct store *s = ud;

	(void)obj;
	(void)is_claim;
	assert_true(s->n_events < 16);
	snprintf(s->events[s->n_events++], sizeof(s->events[0]), "%s %s: %s", type, reason, msg);
}

static void f_enqueue(void *ud, const char *key)
{
	struct store *s = ud;

	assert_true(s->n_enqueued < 8);
	snprintf(s->enqueued[s->n_enqueued++], sizeof(s->enqueued[0]), "%s", key);
}

static void f_now(void *ud, char *buf, size_t n)
{
	(void)ud;
	snprintf(buf, n, "2026-12-06T20:00:00Z");
}

static void f_retro(void *ud, bool success)
{
	struct store *s = ud;

	if (success)
		s->retro_ok++;
	else
		s->retro_failed++;
}

static struct pvb_ops ops_for(struct store *s)
{
	return (struct pvb_ops){.ud = s,
	                        .get_volume = f_get_volume,
	                        .list_volumes = f_list_volumes,
	                        .get_claim = f_get_claim,
	                        .get_class = f_get_class,
	                        .list_classes = f_list_classes,
	                        .get_claim_live = f_get_claim,
	                        .list_pods = f_list_pods,
	                        .write = f_write,
	                        .event = f_event,
	                        .enqueue_claim = f_enqueue,
	                        .now = f_now,
	                        .retroactive_class = f_retro,
	                        .enable_dynamic_provisioning = true};
}

/* what upstream's checkVolumes/checkClaims leave out */
static void normalise(cJSON *a)
{
	cJSON *x;

	cJSON_ArrayForEach(x, a)
	{
		cJSON_DeleteItemFromObject(cJSON_GetObjectItem(x, "metadata"), "resourceVersion");
		cJSON_DeleteItemFromObject(
		        cJSON_GetObjectItem(cJSON_GetObjectItem(x, "spec"), "claimRef"),
		        "resourceVersion");
		cJSON_DeleteItemFromObject(cJSON_GetObjectItem(x, "status"),
		                           "lastPhaseTransitionTime");
		if (!cJSON_GetObjectItem(x, "status"))
			cJSON_AddObjectToObject(x, "status");
	}
}

static void expect_same(const char *what, const char *test, const cJSON *store, cJSON *want)
{
	cJSON *w, *got = cJSON_Duplicate(store, true);

	normalise(got);
	normalise(want);
	assert_int_equal(cJSON_GetArraySize(got), cJSON_GetArraySize(want));
	cJSON_ArrayForEach(w, want)
	{
		cJSON *md = cJSON_GetObjectItem(w, "metadata");
		cJSON *g = find(got, cJSON_GetStringValue(cJSON_GetObjectItem(md, "namespace")),
		                cJSON_GetStringValue(cJSON_GetObjectItem(md, "name")));

		if (!g || !cJSON_Compare(g, w, true)) {
			char *gs = g ? cJSON_PrintUnformatted(g) : NULL,
			     *ws = cJSON_PrintUnformatted(w);

			print_error("%s: %s differ\n  got  %s\n  want %s\n", test, what,
			            gs ? gs : "(missing)", ws);
			free(gs);
			free(ws);
			fail();
		}
	}
	cJSON_Delete(got);
}

enum call { SYNC_CLAIM, SYNC_VOLUME };

/* runSyncTests for one case: want_err < 0 expects an error (testSyncClaimError) */
static struct store *run(const char *test, cJSON *vols, cJSON *want_vols, cJSON *claims,
                         cJSON *want_claims, cJSON *classes, const char *const *events,
                         bool want_err, enum call call)
{
	static struct store s;
	struct pvb_ops ops;
	char err[1024];
	int r, n = 0;

	cJSON_Delete(s.volumes);
	cJSON_Delete(s.claims);
	cJSON_Delete(s.classes);
	memset(&s, 0, sizeof(s));
	s.volumes = vols;
	s.claims = claims;
	s.classes = classes ? classes : cJSON_CreateArray();
	s.rv = 100;
	ops = ops_for(&s);
	if (call == SYNC_CLAIM) {
		cJSON *c = cJSON_Duplicate(cJSON_GetArrayItem(claims, 0), true);
		r = pvb_sync_claim(&ops, c, err, sizeof(err));
		cJSON_Delete(c);
	} else {
		cJSON *v = cJSON_Duplicate(cJSON_GetArrayItem(vols, 0), true);
		r = pvb_sync_volume(&ops, v, err, sizeof(err));
		cJSON_Delete(v);
	}
	if (want_err && r >= 0)
		fail_msg("%s: expected an error", test);
	if (!want_err && r < 0)
		fail_msg("%s: unexpected error %d: %s", test, r, err);
	expect_same("volumes", test, s.volumes, want_vols);
	expect_same("claims", test, s.claims, want_claims);
	for (; events && events[n]; n++) {
		if (n >= s.n_events || strncmp(s.events[n], events[n], strlen(events[n])) != 0)
			fail_msg("%s: event %d: got \"%s\", want \"%s...\"", test, n,
			         n < s.n_events ? s.events[n] : "(none)", events[n]);
	}
	if (n != s.n_events)
		fail_msg("%s: %d events, want %d (first extra: %s)", test, s.n_events, n,
		         s.events[n]);
	cJSON_Delete(want_vols);
	cJSON_Delete(want_claims);
	return &s;
}

#define RETAIN  "Retain"
#define DELETE  "Delete"
#define BOUND   "Bound"
#define PENDING "Pending"
#define AVAIL   "Available"
#define REL     "Released"
static const char *const noevents[] = {NULL};
static const char *const ev_failed_binding[] = {"Normal FailedBinding", NULL};
static const char *const ev_claim_lost[] = {"Warning ClaimLost", NULL};
static const char *const ev_misbound[] = {"Warning ClaimMisbound", NULL};

/* ---- [Unit test set 1] the user did not care which volume they get -------------------- */
static void test_set1(void **state)
{
	(void)state;
	run("1-1 - successful bind",
	    arr(1, vol("volume1-1", "1Gi", "", "", AVAIL, RETAIN, NULL, 0)),
	    arr(1, vol("volume1-1", "1Gi", "uid1-1", "claim1-1", BOUND, RETAIN, NULL, A_BOUND_BY)),
	    arr(1, claim("claim1-1", "uid1-1", "1Gi", "", PENDING, NULL, 0)),
	    arr(1, claim("claim1-1", "uid1-1", "1Gi", "volume1-1", BOUND, NULL,
	                 A_BOUND_BY | A_COMPLETED)),
	    NULL, noevents, false, SYNC_CLAIM);
	run("1-2 - noop", arr(1, vol("volume1-2", "1Gi", "", "", AVAIL, RETAIN, NULL, 0)),
	    arr(1, vol("volume1-2", "1Gi", "", "", AVAIL, RETAIN, NULL, 0)),
	    arr(1, claim("claim1-2", "uid1-2", "10Gi", "", PENDING, NULL, 0)),
	    arr(1, claim("claim1-2", "uid1-2", "10Gi", "", PENDING, NULL, 0)), NULL,
	    ev_failed_binding, false, SYNC_CLAIM);
	run("1-3 - reset to Pending",
	    arr(1, vol("volume1-3", "1Gi", "", "", AVAIL, RETAIN, NULL, 0)),
	    arr(1, vol("volume1-3", "1Gi", "", "", AVAIL, RETAIN, NULL, 0)),
	    arr(1, claim("claim1-3", "uid1-3", "10Gi", "", BOUND, NULL, 0)),
	    arr(1, claim("claim1-3", "uid1-3", "10Gi", "", PENDING, NULL, 0)), NULL,
	    ev_failed_binding, false, SYNC_CLAIM);
	run("1-4 - smallest volume",
	    arr(2, vol("volume1-4_1", "10Gi", "", "", AVAIL, RETAIN, NULL, 0),
	        vol("volume1-4_2", "1Gi", "", "", AVAIL, RETAIN, NULL, 0)),
	    arr(2, vol("volume1-4_1", "10Gi", "", "", AVAIL, RETAIN, NULL, 0),
	        vol("volume1-4_2", "1Gi", "uid1-4", "claim1-4", BOUND, RETAIN, NULL, A_BOUND_BY)),
	    arr(1, claim("claim1-4", "uid1-4", "1Gi", "", PENDING, NULL, 0)),
	    arr(1, claim("claim1-4", "uid1-4", "1Gi", "volume1-4_2", BOUND, NULL,
	                 A_BOUND_BY | A_COMPLETED)),
	    NULL, noevents, false, SYNC_CLAIM);
	run("1-5 - prebound volume by name - success",
	    arr(2, vol("volume1-5_1", "10Gi", "", "claim1-5", AVAIL, RETAIN, NULL, 0),
	        vol("volume1-5_2", "1Gi", "", "", AVAIL, RETAIN, NULL, 0)),
	    arr(2, vol("volume1-5_1", "10Gi", "uid1-5", "claim1-5", BOUND, RETAIN, NULL, 0),
	        vol("volume1-5_2", "1Gi", "", "", AVAIL, RETAIN, NULL, 0)),
	    arr(1, claim("claim1-5", "uid1-5", "1Gi", "", PENDING, NULL, 0)),
	    arr(1, with_capacity("10Gi", claim("claim1-5", "uid1-5", "1Gi", "volume1-5_1", BOUND,
	                                       NULL, A_BOUND_BY | A_COMPLETED))),
	    NULL, noevents, false, SYNC_CLAIM);
	run("1-6 - prebound volume by UID - success",
	    arr(2, vol("volume1-6_1", "10Gi", "uid1-6", "claim1-6", AVAIL, RETAIN, NULL, 0),
	        vol("volume1-6_2", "1Gi", "", "", AVAIL, RETAIN, NULL, 0)),
	    arr(2, vol("volume1-6_1", "10Gi", "uid1-6", "claim1-6", BOUND, RETAIN, NULL, 0),
	        vol("volume1-6_2", "1Gi", "", "", AVAIL, RETAIN, NULL, 0)),
	    arr(1, claim("claim1-6", "uid1-6", "1Gi", "", PENDING, NULL, 0)),
	    arr(1, with_capacity("10Gi", claim("claim1-6", "uid1-6", "1Gi", "volume1-6_1", BOUND,
	                                       NULL, A_BOUND_BY | A_COMPLETED))),
	    NULL, noevents, false, SYNC_CLAIM);
	run("1-7 - prebound volume to different claim",
	    arr(1, vol("volume1-7", "10Gi", "uid1-777", "claim1-7", AVAIL, RETAIN, NULL, 0)),
	    arr(1, vol("volume1-7", "10Gi", "uid1-777", "claim1-7", AVAIL, RETAIN, NULL, 0)),
	    arr(1, claim("claim1-7", "uid1-7", "1Gi", "", PENDING, NULL, 0)),
	    arr(1, claim("claim1-7", "uid1-7", "1Gi", "", PENDING, NULL, 0)), NULL,
	    ev_failed_binding, false, SYNC_CLAIM);
	run("1-8 - complete bind after crash - PV bound",
	    arr(1,
	        vol("volume1-8", "1Gi", "uid1-8", "claim1-8", "Pending", RETAIN, NULL, A_BOUND_BY)),
	    arr(1, vol("volume1-8", "1Gi", "uid1-8", "claim1-8", BOUND, RETAIN, NULL, A_BOUND_BY)),
	    arr(1, claim("claim1-8", "uid1-8", "1Gi", "", PENDING, NULL, 0)),
	    arr(1, claim("claim1-8", "uid1-8", "1Gi", "volume1-8", BOUND, NULL,
	                 A_BOUND_BY | A_COMPLETED)),
	    NULL, noevents, false, SYNC_CLAIM);
	run("1-9 - complete bind after crash - PV status saved",
	    arr(1, vol("volume1-9", "1Gi", "uid1-9", "claim1-9", BOUND, RETAIN, NULL, A_BOUND_BY)),
	    arr(1, vol("volume1-9", "1Gi", "uid1-9", "claim1-9", BOUND, RETAIN, NULL, A_BOUND_BY)),
	    arr(1, claim("claim1-9", "uid1-9", "1Gi", "", PENDING, NULL, 0)),
	    arr(1, claim("claim1-9", "uid1-9", "1Gi", "volume1-9", BOUND, NULL,
	                 A_BOUND_BY | A_COMPLETED)),
	    NULL, noevents, false, SYNC_CLAIM);
	run("1-10 - complete bind after crash - PVC bound",
	    arr(1,
	        vol("volume1-10", "1Gi", "uid1-10", "claim1-10", BOUND, RETAIN, NULL, A_BOUND_BY)),
	    arr(1,
	        vol("volume1-10", "1Gi", "uid1-10", "claim1-10", BOUND, RETAIN, NULL, A_BOUND_BY)),
	    arr(1, claim("claim1-10", "uid1-10", "1Gi", "volume1-10", PENDING, NULL,
	                 A_BOUND_BY | A_COMPLETED)),
	    arr(1, claim("claim1-10", "uid1-10", "1Gi", "volume1-10", BOUND, NULL,
	                 A_BOUND_BY | A_COMPLETED)),
	    NULL, noevents, false, SYNC_CLAIM);
	run("1-11 - bind when selector matches",
	    arr(1, with_labels(vol("volume1-1", "1Gi", "", "", AVAIL, RETAIN, NULL, 0))),
	    arr(1, with_labels(vol("volume1-1", "1Gi", "uid1-1", "claim1-1", BOUND, RETAIN, NULL,
	                           A_BOUND_BY))),
	    arr(1, with_selector(claim("claim1-1", "uid1-1", "1Gi", "", PENDING, NULL, 0))),
	    arr(1, with_selector(claim("claim1-1", "uid1-1", "1Gi", "volume1-1", BOUND, NULL,
	                               A_BOUND_BY | A_COMPLETED))),
	    NULL, noevents, false, SYNC_CLAIM);
	run("1-12 - do not bind when selector does not match",
	    arr(1, vol("volume1-1", "1Gi", "", "", AVAIL, RETAIN, NULL, 0)),
	    arr(1, vol("volume1-1", "1Gi", "", "", AVAIL, RETAIN, NULL, 0)),
	    arr(1, with_selector(claim("claim1-1", "uid1-1", "1Gi", "", PENDING, NULL, 0))),
	    arr(1, with_selector(claim("claim1-1", "uid1-1", "1Gi", "", PENDING, NULL, 0))), NULL,
	    ev_failed_binding, false, SYNC_CLAIM);
	/* a volume not yet Available is not chosen (FindMatchingVolume's phase filter) */
	run("1-13 - do not bind a Pending volume",
	    arr(1, vol("volume1-13", "1Gi", "", "", "Pending", RETAIN, NULL, 0)),
	    arr(1, vol("volume1-13", "1Gi", "", "", "Pending", RETAIN, NULL, 0)),
	    arr(1, claim("claim1-13", "uid1-13", "1Gi", "", PENDING, NULL, 0)),
	    arr(1, claim("claim1-13", "uid1-13", "1Gi", "", PENDING, NULL, 0)), NULL,
	    ev_failed_binding, false, SYNC_CLAIM);
	run("1-15 - volumeMode mismatch: no bind",
	    arr(1, with_mode("Block", vol("volume1-15", "1Gi", "", "", AVAIL, RETAIN, NULL, 0))),
	    arr(1, with_mode("Block", vol("volume1-15", "1Gi", "", "", AVAIL, RETAIN, NULL, 0))),
	    arr(1, claim("claim1-15", "uid1-15", "1Gi", "", PENDING, NULL, 0)),
	    arr(1, claim("claim1-15", "uid1-15", "1Gi", "", PENDING, NULL, 0)), NULL,
	    ev_failed_binding, false, SYNC_CLAIM);
	run("1-16 - volumeMode Block on both: bind",
	    arr(1, with_mode("Block", vol("volume1-16", "1Gi", "", "", AVAIL, RETAIN, NULL, 0))),
	    arr(1, with_mode("Block", vol("volume1-16", "1Gi", "uid1-16", "claim1-16", BOUND,
	                                  RETAIN, NULL, A_BOUND_BY))),
	    arr(1, with_mode("Block", claim("claim1-16", "uid1-16", "1Gi", "", PENDING, NULL, 0))),
	    arr(1, with_mode("Block", claim("claim1-16", "uid1-16", "1Gi", "volume1-16", BOUND,
	                                    NULL, A_BOUND_BY | A_COMPLETED))),
	    NULL, noevents, false, SYNC_CLAIM);
}

/* ---- [Unit test set 2] the user asked for a specific volume ---------------------------- */
static void test_set2(void **state)
{
	static const char *const ev_mismatch[] = {"Warning VolumeMismatch", NULL};
	struct store *s;

	(void)state;
	run("2-1 - claim prebound to non-existing volume - noop", NONE, NONE,
	    arr(1, claim("claim2-1", "uid2-1", "10Gi", "volume2-1", PENDING, NULL, 0)),
	    arr(1, claim("claim2-1", "uid2-1", "10Gi", "volume2-1", PENDING, NULL, 0)), NULL,
	    noevents, false, SYNC_CLAIM);
	run("2-2 - claim prebound to non-existing volume - reset status", NONE, NONE,
	    arr(1, claim("claim2-2", "uid2-2", "10Gi", "volume2-2", BOUND, NULL, 0)),
	    arr(1, claim("claim2-2", "uid2-2", "10Gi", "volume2-2", PENDING, NULL, 0)), NULL,
	    noevents, false, SYNC_CLAIM);
	run("2-3 - claim prebound to unbound volume",
	    arr(1, vol("volume2-3", "1Gi", "", "", AVAIL, RETAIN, NULL, 0)),
	    arr(1, vol("volume2-3", "1Gi", "uid2-3", "claim2-3", BOUND, RETAIN, NULL, A_BOUND_BY)),
	    arr(1, claim("claim2-3", "uid2-3", "1Gi", "volume2-3", PENDING, NULL, 0)),
	    arr(1, claim("claim2-3", "uid2-3", "1Gi", "volume2-3", BOUND, NULL, A_COMPLETED)), NULL,
	    noevents, false, SYNC_CLAIM);
	run("2-4 - claim prebound to prebound volume by name",
	    arr(1, vol("volume2-4", "1Gi", "", "claim2-4", AVAIL, RETAIN, NULL, 0)),
	    arr(1, vol("volume2-4", "1Gi", "uid2-4", "claim2-4", BOUND, RETAIN, NULL, 0)),
	    arr(1, claim("claim2-4", "uid2-4", "1Gi", "volume2-4", PENDING, NULL, 0)),
	    arr(1, claim("claim2-4", "uid2-4", "1Gi", "volume2-4", BOUND, NULL, A_COMPLETED)), NULL,
	    noevents, false, SYNC_CLAIM);
	run("2-5 - claim prebound to prebound volume by UID",
	    arr(1, vol("volume2-5", "1Gi", "uid2-5", "claim2-5", AVAIL, RETAIN, NULL, 0)),
	    arr(1, vol("volume2-5", "1Gi", "uid2-5", "claim2-5", BOUND, RETAIN, NULL, 0)),
	    arr(1, claim("claim2-5", "uid2-5", "1Gi", "volume2-5", PENDING, NULL, 0)),
	    arr(1, claim("claim2-5", "uid2-5", "1Gi", "volume2-5", BOUND, NULL, A_COMPLETED)), NULL,
	    noevents, false, SYNC_CLAIM);
	run("2-6 - claim prebound to already bound volume",
	    arr(1, vol("volume2-6", "1Gi", "uid2-6_1", "claim2-6_1", BOUND, RETAIN, NULL, 0)),
	    arr(1, vol("volume2-6", "1Gi", "uid2-6_1", "claim2-6_1", BOUND, RETAIN, NULL, 0)),
	    arr(1, claim("claim2-6", "uid2-6", "1Gi", "volume2-6", BOUND, NULL, 0)),
	    arr(1, claim("claim2-6", "uid2-6", "1Gi", "volume2-6", PENDING, NULL, 0)), NULL,
	    noevents, false, SYNC_CLAIM);
	run("2-7 - claim bound by controller to already bound volume",
	    arr(1, vol("volume2-7", "1Gi", "uid2-7_1", "claim2-7_1", BOUND, RETAIN, NULL, 0)),
	    arr(1, vol("volume2-7", "1Gi", "uid2-7_1", "claim2-7_1", BOUND, RETAIN, NULL, 0)),
	    arr(1, claim("claim2-7", "uid2-7", "1Gi", "volume2-7", BOUND, NULL, A_BOUND_BY)),
	    arr(1, claim("claim2-7", "uid2-7", "1Gi", "volume2-7", BOUND, NULL, A_BOUND_BY)), NULL,
	    noevents, true, SYNC_CLAIM);
	run("2-8 - claim prebound to unbound volume that does not match the selector",
	    arr(1, vol("volume2-8", "1Gi", "", "", AVAIL, RETAIN, NULL, 0)),
	    arr(1, vol("volume2-8", "1Gi", "uid2-8", "claim2-8", BOUND, RETAIN, NULL, A_BOUND_BY)),
	    arr(1,
	        with_selector(claim("claim2-8", "uid2-8", "1Gi", "volume2-8", PENDING, NULL, 0))),
	    arr(1, with_selector(claim("claim2-8", "uid2-8", "1Gi", "volume2-8", BOUND, NULL,
	                               A_COMPLETED))),
	    NULL, noevents, false, SYNC_CLAIM);
	s = run("2-9 - claim prebound to too small volume",
	        arr(1, vol("volume2-9", "1Gi", "", "", AVAIL, RETAIN, NULL, 0)),
	        arr(1, vol("volume2-9", "1Gi", "", "", AVAIL, RETAIN, NULL, 0)),
	        arr(1, claim("claim2-9", "uid2-9", "10Gi", "volume2-9", BOUND, NULL, 0)),
	        arr(1, claim("claim2-9", "uid2-9", "10Gi", "volume2-9", PENDING, NULL, 0)), NULL,
	        ev_mismatch, false, SYNC_CLAIM);
	assert_string_equal(s->events[0], "Warning VolumeMismatch: Cannot bind to requested volume "
	                                  "\"volume2-9\": requested PV is too small");
	s = run("2-10 - claim prebound to volume of another class",
	        arr(1, vol("volume2-10", "1Gi", "", "", AVAIL, RETAIN, "gold", 0)),
	        arr(1, vol("volume2-10", "1Gi", "", "", AVAIL, RETAIN, "gold", 0)),
	        arr(1, claim("claim2-10", "uid2-10", "1Gi", "volume2-10", PENDING, "", 0)),
	        arr(1, claim("claim2-10", "uid2-10", "1Gi", "volume2-10", PENDING, "", 0)), NULL,
	        ev_mismatch, false, SYNC_CLAIM);
	assert_non_null(strstr(s->events[0], "storageClassName does not match"));
}

/* ---- [Unit test set 3] syncing a bound claim ------------------------------------------- */
static void test_set3(void **state)
{
	struct store *s;

	(void)state;
	s = run("3-1 - bound claim with missing VolumeName", NONE, NONE,
	        arr(1,
	            claim("claim3-1", "uid3-1", "10Gi", "", BOUND, NULL, A_BOUND_BY | A_COMPLETED)),
	        arr(1, claim("claim3-1", "uid3-1", "10Gi", "", "Lost", NULL,
	                     A_BOUND_BY | A_COMPLETED)),
	        NULL, ev_claim_lost, false, SYNC_CLAIM);
	assert_string_equal(s->events[0], "Warning ClaimLost: Bound claim has lost reference to "
	                                  "PersistentVolume. Data on the volume is lost!");
	s = run("3-2 - bound claim with missing volume", NONE, NONE,
	        arr(1, claim("claim3-2", "uid3-2", "10Gi", "volume3-2", BOUND, NULL,
	                     A_BOUND_BY | A_COMPLETED)),
	        arr(1, claim("claim3-2", "uid3-2", "10Gi", "volume3-2", "Lost", NULL,
	                     A_BOUND_BY | A_COMPLETED)),
	        NULL, ev_claim_lost, false, SYNC_CLAIM);
	assert_string_equal(s->events[0], "Warning ClaimLost: Bound claim has lost its "
	                                  "PersistentVolume. Data on the volume is lost!");
	run("3-3 - bound claim with unbound volume",
	    arr(1, vol("volume3-3", "10Gi", "", "", "Pending", RETAIN, NULL, 0)),
	    arr(1, vol("volume3-3", "10Gi", "uid3-3", "claim3-3", BOUND, RETAIN, NULL, A_BOUND_BY)),
	    arr(1, claim("claim3-3", "uid3-3", "10Gi", "volume3-3", PENDING, NULL,
	                 A_BOUND_BY | A_COMPLETED)),
	    arr(1, claim("claim3-3", "uid3-3", "10Gi", "volume3-3", BOUND, NULL,
	                 A_BOUND_BY | A_COMPLETED)),
	    NULL, noevents, false, SYNC_CLAIM);
	run("3-4 - bound claim with prebound volume",
	    arr(1, vol("volume3-4", "10Gi", "claim3-4-x", "claim3-4", "Pending", RETAIN, NULL, 0)),
	    arr(1, vol("volume3-4", "10Gi", "claim3-4-x", "claim3-4", "Pending", RETAIN, NULL, 0)),
	    arr(1, claim("claim3-4", "uid3-4", "10Gi", "volume3-4", PENDING, NULL,
	                 A_BOUND_BY | A_COMPLETED)),
	    arr(1, claim("claim3-4", "uid3-4", "10Gi", "volume3-4", "Lost", NULL,
	                 A_BOUND_BY | A_COMPLETED)),
	    NULL, ev_misbound, false, SYNC_CLAIM);
	run("3-5 - bound claim with bound volume",
	    arr(1, vol("volume3-5", "10Gi", "uid3-5", "claim3-5", "Pending", RETAIN, NULL, 0)),
	    arr(1, vol("volume3-5", "10Gi", "uid3-5", "claim3-5", BOUND, RETAIN, NULL, 0)),
	    arr(1, claim("claim3-5", "uid3-5", "10Gi", "volume3-5", PENDING, NULL, A_COMPLETED)),
	    arr(1, claim("claim3-5", "uid3-5", "10Gi", "volume3-5", BOUND, NULL, A_COMPLETED)),
	    NULL, noevents, false, SYNC_CLAIM);
	run("3-6 - bound claim with bound volume",
	    arr(1, vol("volume3-6", "10Gi", "uid3-6-x", "claim3-6-x", "Pending", RETAIN, NULL, 0)),
	    arr(1, vol("volume3-6", "10Gi", "uid3-6-x", "claim3-6-x", "Pending", RETAIN, NULL, 0)),
	    arr(1, claim("claim3-6", "uid3-6", "10Gi", "volume3-6", PENDING, NULL, A_COMPLETED)),
	    arr(1, claim("claim3-6", "uid3-6", "10Gi", "volume3-6", "Lost", NULL, A_COMPLETED)),
	    NULL, ev_misbound, false, SYNC_CLAIM);
	run("3-7 - bound claim with unbound volume where selector doesn't match",
	    arr(1, vol("volume3-3", "10Gi", "", "", "Pending", RETAIN, NULL, 0)),
	    arr(1, vol("volume3-3", "10Gi", "uid3-3", "claim3-3", BOUND, RETAIN, NULL, A_BOUND_BY)),
	    arr(1, with_selector(claim("claim3-3", "uid3-3", "10Gi", "volume3-3", PENDING, NULL,
	                               A_BOUND_BY | A_COMPLETED))),
	    arr(1, with_selector(claim("claim3-3", "uid3-3", "10Gi", "volume3-3", BOUND, NULL,
	                               A_BOUND_BY | A_COMPLETED))),
	    NULL, noevents, false, SYNC_CLAIM);
}

/* ---- [Unit test set 4] syncVolume ------------------------------------------------------ */
static void test_set4(void **state)
{
	struct store *s;

	(void)state;
	s = run("4-1 - pending volume",
	        arr(1, vol("volume4-1", "10Gi", "", "", "Pending", RETAIN, NULL, 0)),
	        arr(1, vol("volume4-1", "10Gi", "", "", AVAIL, RETAIN, NULL, 0)), NONE, NONE, NULL,
	        noevents, false, SYNC_VOLUME);
	/* lastPhaseTransitionTime is set with the phase (left out of the comparison above) */
	assert_string_equal(
	        cJSON_GetStringValue(cJSON_GetObjectItem(
	                cJSON_GetObjectItem(cJSON_GetArrayItem(s->volumes, 0), "status"),
	                "lastPhaseTransitionTime")),
	        "2026-12-06T20:00:00Z");
	run("4-2 - pending prebound volume",
	    arr(1, vol("volume4-2", "10Gi", "", "claim4-2", "Pending", RETAIN, NULL, 0)),
	    arr(1, vol("volume4-2", "10Gi", "", "claim4-2", AVAIL, RETAIN, NULL, 0)), NONE, NONE,
	    NULL, noevents, false, SYNC_VOLUME);
	run("4-3 - bound volume with missing claim",
	    arr(1, vol("volume4-3", "10Gi", "uid4-3", "claim4-3", BOUND, RETAIN, NULL, 0)),
	    arr(1, vol("volume4-3", "10Gi", "uid4-3", "claim4-3", REL, RETAIN, NULL, 0)), NONE,
	    NONE, NULL, noevents, false, SYNC_VOLUME);
	run("4-4 - volume bound to claim with different UID",
	    arr(1, vol("volume4-4", "10Gi", "uid4-4", "claim4-4", BOUND, RETAIN, NULL, 0)),
	    arr(1, vol("volume4-4", "10Gi", "uid4-4", "claim4-4", REL, RETAIN, NULL, 0)),
	    arr(1, claim("claim4-4", "uid4-4-x", "10Gi", "volume4-4", BOUND, NULL, A_COMPLETED)),
	    arr(1, claim("claim4-4", "uid4-4-x", "10Gi", "volume4-4", BOUND, NULL, A_COMPLETED)),
	    NULL, noevents, false, SYNC_VOLUME);
	s = run("4-5 - volume bound by controller to unbound claim",
	        arr(1, vol("volume4-5", "10Gi", "uid4-5", "claim4-5", BOUND, RETAIN, NULL,
	                   A_BOUND_BY)),
	        arr(1, vol("volume4-5", "10Gi", "uid4-5", "claim4-5", BOUND, RETAIN, NULL,
	                   A_BOUND_BY)),
	        arr(1, claim("claim4-5", "uid4-5", "10Gi", "", PENDING, NULL, 0)),
	        arr(1, claim("claim4-5", "uid4-5", "10Gi", "", PENDING, NULL, 0)), NULL, noevents,
	        false, SYNC_VOLUME);
	assert_int_equal(s->n_enqueued, 1); /* the claim's sync finishes the binding */
	assert_string_equal(s->enqueued[0], "default/claim4-5");
	run("4-5 - volume bound by user to bound claim",
	    arr(1, vol("volume4-5", "10Gi", "uid4-5", "claim4-5", BOUND, RETAIN, NULL, 0)),
	    arr(1, vol("volume4-5", "10Gi", "uid4-5", "claim4-5", BOUND, RETAIN, NULL, 0)),
	    arr(1, claim("claim4-5", "uid4-5", "10Gi", "", PENDING, NULL, 0)),
	    arr(1, claim("claim4-5", "uid4-5", "10Gi", "", PENDING, NULL, 0)), NULL, noevents,
	    false, SYNC_VOLUME);
	run("4-6 - volume bound by to bound claim",
	    arr(1, vol("volume4-6", "10Gi", "uid4-6", "claim4-6", AVAIL, RETAIN, NULL, 0)),
	    arr(1, vol("volume4-6", "10Gi", "uid4-6", "claim4-6", BOUND, RETAIN, NULL, 0)),
	    arr(1, claim("claim4-6", "uid4-6", "10Gi", "volume4-6", BOUND, NULL, 0)),
	    arr(1, claim("claim4-6", "uid4-6", "10Gi", "volume4-6", BOUND, NULL, 0)), NULL,
	    noevents, false, SYNC_VOLUME);
	run("4-7 - volume bound by controller to claim bound somewhere else",
	    arr(1, vol("volume4-7", "10Gi", "uid4-7", "claim4-7", BOUND, RETAIN, NULL, A_BOUND_BY)),
	    arr(1, vol("volume4-7", "10Gi", "", "", AVAIL, RETAIN, NULL, 0)),
	    arr(1, claim("claim4-7", "uid4-7", "10Gi", "volume4-7-x", BOUND, NULL, 0)),
	    arr(1, claim("claim4-7", "uid4-7", "10Gi", "volume4-7-x", BOUND, NULL, 0)), NULL,
	    noevents, false, SYNC_VOLUME);
	run("4-8 - volume bound by user to claim bound somewhere else",
	    arr(1, vol("volume4-8", "10Gi", "uid4-8", "claim4-8", BOUND, RETAIN, NULL, 0)),
	    arr(1, vol("volume4-8", "10Gi", "", "claim4-8", AVAIL, RETAIN, NULL, 0)),
	    arr(1, claim("claim4-8", "uid4-8", "10Gi", "volume4-8-x", BOUND, NULL, 0)),
	    arr(1, claim("claim4-8", "uid4-8", "10Gi", "volume4-8-x", BOUND, NULL, 0)), NULL,
	    noevents, false, SYNC_VOLUME);
}

/* ---- claims with a class (13-x) -------------------------------------------------------- */
static void test_set13(void **state)
{
	(void)state;
	run("13-1 - binding to class",
	    arr(2, vol("volume13-1-1", "1Gi", "", "", AVAIL, RETAIN, NULL, 0),
	        vol("volume13-1-2", "10Gi", "", "", AVAIL, RETAIN, "gold", 0)),
	    arr(2, vol("volume13-1-1", "1Gi", "", "", AVAIL, RETAIN, NULL, 0),
	        vol("volume13-1-2", "10Gi", "uid13-1", "claim13-1", BOUND, RETAIN, "gold",
	            A_BOUND_BY)),
	    arr(1, claim("claim13-1", "uid13-1", "1Gi", "", PENDING, "gold", 0)),
	    arr(1, with_capacity("10Gi", claim("claim13-1", "uid13-1", "1Gi", "volume13-1-2", BOUND,
	                                       "gold", A_BOUND_BY | A_COMPLETED))),
	    NULL, noevents, false, SYNC_CLAIM);
	run("13-2 - binding without a class",
	    arr(2, vol("volume13-2-1", "1Gi", "", "", AVAIL, RETAIN, "gold", 0),
	        vol("volume13-2-2", "10Gi", "", "", AVAIL, RETAIN, NULL, 0)),
	    arr(2, vol("volume13-2-1", "1Gi", "", "", AVAIL, RETAIN, "gold", 0),
	        vol("volume13-2-2", "10Gi", "uid13-2", "claim13-2", BOUND, RETAIN, NULL,
	            A_BOUND_BY)),
	    arr(1, claim("claim13-2", "uid13-2", "1Gi", "", PENDING, NULL, 0)),
	    arr(1, with_capacity("10Gi", claim("claim13-2", "uid13-2", "1Gi", "volume13-2-2", BOUND,
	                                       NULL, A_BOUND_BY | A_COMPLETED))),
	    NULL, noevents, false, SYNC_CLAIM);
	run("13-4 - empty class", arr(1, vol("volume13-4", "1Gi", "", "", AVAIL, RETAIN, "", 0)),
	    arr(1, vol("volume13-4", "1Gi", "uid13-4", "claim13-4", BOUND, RETAIN, "", A_BOUND_BY)),
	    arr(1, claim("claim13-4", "uid13-4", "1Gi", "", PENDING, "", 0)),
	    arr(1, claim("claim13-4", "uid13-4", "1Gi", "volume13-4", BOUND, "",
	                 A_BOUND_BY | A_COMPLETED)),
	    NULL, noevents, false, SYNC_CLAIM);
	run("13-5 - nil class", arr(1, vol("volume13-5", "1Gi", "", "", AVAIL, RETAIN, "", 0)),
	    arr(1, vol("volume13-5", "1Gi", "uid13-5", "claim13-5", BOUND, RETAIN, "", A_BOUND_BY)),
	    arr(1, claim("claim13-5", "uid13-5", "1Gi", "", PENDING, NULL, 0)),
	    arr(1, claim("claim13-5", "uid13-5", "1Gi", "volume13-5", BOUND, NULL,
	                 A_BOUND_BY | A_COMPLETED)),
	    NULL, noevents, false, SYNC_CLAIM);
	run("13-6 - nil class in PV, '' class in claim",
	    arr(1, vol("volume13-6", "1Gi", "", "", AVAIL, RETAIN, NULL, 0)),
	    arr(1,
	        vol("volume13-6", "1Gi", "uid13-6", "claim13-6", BOUND, RETAIN, NULL, A_BOUND_BY)),
	    arr(1, claim("claim13-6", "uid13-6", "1Gi", "", PENDING, "", 0)),
	    arr(1, claim("claim13-6", "uid13-6", "1Gi", "volume13-6", BOUND, "",
	                 A_BOUND_BY | A_COMPLETED)),
	    NULL, noevents, false, SYNC_CLAIM);
}

/* ---- provisioning, default class, delayed binding (kcmd: no in-tree plugins) ----------- */
static void test_provisioning(void **state)
{
	static const char *const ev_ext[] = {"Normal ExternalProvisioning", NULL};
	static const char *const ev_wffc[] = {"Normal WaitForFirstConsumer", NULL};
	static const char *const ev_prov_failed[] = {"Warning ProvisioningFailed", NULL};
	struct store *s;

	(void)state;
	s = run("kcmd: external provisioner annotations and event", NONE, NONE,
	        arr(1, claim("claim11-1", "uid11-1", "1Gi", "", PENDING, "ext", 0)),
	        arr(1, claim("claim11-1", "uid11-1", "1Gi", "", PENDING, "ext", A_PROV_EXT_ANNS)),
	        arr(1, sc("ext", "kcmd.test/external", "Immediate", false, "2026-01-01T00:00:00Z")),
	        ev_ext, false, SYNC_CLAIM);
	assert_string_equal(
	        s->events[0],
	        "Normal ExternalProvisioning: Waiting for a volume to be created either "
	        "by the external provisioner 'kcmd.test/external' or manually by the "
	        "system administrator. If volume creation is delayed, please verify "
	        "that the provisioner is running and correctly registered.");
	/* annotated already: no write, the event again (each sync) */
	s = run("kcmd: external provisioner, already annotated", NONE, NONE,
	        arr(1, claim("claim11-2", "uid11-2", "1Gi", "", PENDING, "ext", A_PROV_EXT_ANNS)),
	        arr(1, claim("claim11-2", "uid11-2", "1Gi", "", PENDING, "ext", A_PROV_EXT_ANNS)),
	        arr(1, sc("ext", "kcmd.test/external", "Immediate", false, "2026-01-01T00:00:00Z")),
	        ev_ext, false, SYNC_CLAIM);
	assert_int_equal(s->writes, 0);
	s = run("kcmd: unknown class: ProvisioningFailed", NONE, NONE,
	        arr(1, claim("claim11-3", "uid11-3", "1Gi", "", PENDING, "missing", 0)),
	        arr(1, claim("claim11-3", "uid11-3", "1Gi", "", PENDING, "missing", 0)), NULL,
	        ev_prov_failed, false, SYNC_CLAIM);
	assert_string_equal(s->events[0], "Warning ProvisioningFailed: storageclass.storage.k8s.io "
	                                  "\"missing\" not found");
	run("kcmd: WaitForFirstConsumer without a selected node", NONE, NONE,
	    arr(1, claim("claim11-4", "uid11-4", "1Gi", "", PENDING, "wffc", 0)),
	    arr(1, claim("claim11-4", "uid11-4", "1Gi", "", PENDING, "wffc", 0)),
	    arr(1, sc("wffc", "kcmd.test/external", "WaitForFirstConsumer", false,
	              "2026-01-01T00:00:00Z")),
	    ev_wffc, false, SYNC_CLAIM);
	/* an Available volume of the class is left to the scheduler */
	run("kcmd: WaitForFirstConsumer does not bind an Available volume",
	    arr(1, vol("volume11-5", "1Gi", "", "", AVAIL, RETAIN, "wffc", 0)),
	    arr(1, vol("volume11-5", "1Gi", "", "", AVAIL, RETAIN, "wffc", 0)),
	    arr(1, claim("claim11-5", "uid11-5", "1Gi", "", PENDING, "wffc", 0)),
	    arr(1, claim("claim11-5", "uid11-5", "1Gi", "", PENDING, "wffc", 0)),
	    arr(1, sc("wffc", "kcmd.test/external", "WaitForFirstConsumer", false,
	              "2026-01-01T00:00:00Z")),
	    ev_wffc, false, SYNC_CLAIM);
	run("kcmd: WaitForFirstConsumer with a selected node provisions", NONE, NONE,
	    arr(1, claim("claim11-6", "uid11-6", "1Gi", "", PENDING, "wffc", A_SELECTED)),
	    arr(1, claim("claim11-6", "uid11-6", "1Gi", "", PENDING, "wffc",
	                 A_SELECTED | A_PROV_EXT_ANNS)),
	    arr(1, sc("wffc", "kcmd.test/external", "WaitForFirstConsumer", false,
	              "2026-01-01T00:00:00Z")),
	    ev_ext, false, SYNC_CLAIM);
	/* retroactive default class: the newest default wins, the claim is updated and the
	 * sync ends there (the update's event syncs it again) */
	s = run("kcmd: default StorageClass assigned retroactively", NONE, NONE,
	        arr(1, claim("claim12-1", "uid12-1", "1Gi", "", PENDING, NULL, 0)),
	        arr(1, claim("claim12-1", "uid12-1", "1Gi", "", PENDING, "newer", 0)),
	        arr(3, sc("older", "kcmd.test/external", "Immediate", true, "2026-01-01T00:00:00Z"),
	            sc("newer", "kcmd.test/external", "Immediate", true, "2026-02-01T00:00:00Z"),
	            sc("plain", "kcmd.test/external", "Immediate", false, "2026-03-01T00:00:00Z")),
	        noevents, false, SYNC_CLAIM);
	/* retroactive_storageclass_total counts it, the errors do not */
	assert_int_equal(s->retro_ok, 1);
	assert_int_equal(s->retro_failed, 0);
	s = run("kcmd: no default for a claim asking for class \"\"", NONE, NONE,
	        arr(1, claim("claim12-2", "uid12-2", "1Gi", "", PENDING, "", 0)),
	        arr(1, claim("claim12-2", "uid12-2", "1Gi", "", PENDING, "", 0)),
	        arr(1, sc("def", "kcmd.test/external", "Immediate", true, "2026-01-01T00:00:00Z")),
	        ev_failed_binding, false, SYNC_CLAIM);
	/* nothing to assign: not an attempt */
	assert_int_equal(s->retro_ok + s->retro_failed, 0);
	/* a matching volume is bound before any default class is considered */
	run("kcmd: a matching volume wins over the default class",
	    arr(1, vol("volume12-3", "1Gi", "", "", AVAIL, RETAIN, NULL, 0)),
	    arr(1,
	        vol("volume12-3", "1Gi", "uid12-3", "claim12-3", BOUND, RETAIN, NULL, A_BOUND_BY)),
	    arr(1, claim("claim12-3", "uid12-3", "1Gi", "", PENDING, NULL, 0)),
	    arr(1, claim("claim12-3", "uid12-3", "1Gi", "volume12-3", BOUND, NULL,
	                 A_BOUND_BY | A_COMPLETED)),
	    arr(1, sc("def", "kcmd.test/external", "Immediate", true, "2026-01-01T00:00:00Z")),
	    noevents, false, SYNC_CLAIM);
}

/* a pod of namespace "default" using claim (eph: as a generic ephemeral volume "data") */
static cJSON *pod(const char *name, const char *claim_name, const char *node, const char *phase,
                  bool eph)
{
	cJSON *o = cJSON_CreateObject(), *md = cJSON_AddObjectToObject(o, "metadata");
	cJSON *spec = cJSON_AddObjectToObject(o, "spec");
	cJSON *v = cJSON_CreateObject();

	cJSON_AddStringToObject(md, "name", name);
	cJSON_AddStringToObject(md, "namespace", "default");
	if (*node)
		cJSON_AddStringToObject(spec, "nodeName", node);
	cJSON_AddStringToObject(v, "name", "data");
	if (eph)
		cJSON_AddObjectToObject(v, "ephemeral");
	else
		cJSON_AddStringToObject(cJSON_AddObjectToObject(v, "persistentVolumeClaim"),
		                        "claimName", claim_name);
	cJSON_AddItemToArray(cJSON_AddArrayToObject(spec, "volumes"), v);
	cJSON_AddStringToObject(cJSON_AddObjectToObject(o, "status"), "phase", phase);
	return o;
}

/* emitEventForUnboundDelayBindingClaim: the claim's unscheduled, live pods name the wait */
static void test_wait_for_pod_scheduled(void **state)
{
	struct store s = {0};
	struct pvb_ops ops = ops_for(&s);
	cJSON *c;
	char err[512];

	(void)state;
	s.volumes = cJSON_CreateArray();
	s.classes = arr(1, sc("wffc", "kcmd.test/external", "WaitForFirstConsumer", false,
	                      "2026-01-01T00:00:00Z"));
	s.claims = arr(1, claim("claim-w", "uid-w", "1Gi", "", PENDING, "wffc", 0));
	s.pods = arr(5, pod("p1", "claim-w", "", "Pending", false),
	             pod("p2", "claim-w", "node1", "Running", false), /* scheduled */
	             pod("p3", "claim-w", "", "Succeeded", false),    /* terminated */
	             pod("p4", "other", "", "Pending", false),        /* another claim */
	             pod("claim", "", "", "Pending", true));          /* "claim-data" */
	c = cJSON_Duplicate(cJSON_GetArrayItem(s.claims, 0), true);
	assert_int_equal(pvb_sync_claim(&ops, c, err, sizeof(err)), 0);
	assert_int_equal(s.n_events, 1);
	assert_string_equal(s.events[0],
	                    "Normal WaitForPodScheduled: waiting for pod p1 to be scheduled");
	/* two pods: the plural form */
	cJSON_AddItemToArray(s.pods, pod("p5", "claim-w", "", "Pending", false));
	s.n_events = 0;
	assert_int_equal(pvb_sync_claim(&ops, c, err, sizeof(err)), 0);
	assert_string_equal(s.events[0],
	                    "Normal WaitForPodScheduled: waiting for pods p1,p5 to be scheduled");
	/* a generic ephemeral volume's claim is "<pod>-<volume>" */
	cJSON_Delete(c);
	c = claim("claim-data", "uid-d", "1Gi", "", PENDING, "wffc", 0);
	cJSON_AddItemToArray(s.claims, cJSON_Duplicate(c, true));
	s.n_events = 0;
	assert_int_equal(pvb_sync_claim(&ops, c, err, sizeof(err)), 0);
	assert_string_equal(s.events[0],
	                    "Normal WaitForPodScheduled: waiting for pod claim to be scheduled");
	cJSON_Delete(c);
	cJSON_Delete(s.volumes);
	cJSON_Delete(s.classes);
	cJSON_Delete(s.claims);
	cJSON_Delete(s.pods);
}

/* ---- reclaim policies without in-tree plugins ------------------------------------------ */
static void test_reclaim(void **state)
{
	static const char *const ev_del[] = {"Warning VolumeFailedDelete", NULL};
	static const char *const ev_rec[] = {"Warning VolumeFailedRecycle", NULL};
	static const char *const ev_unknown[] = {"Warning VolumeUnknownReclaimPolicy", NULL};
	struct store *s;

	(void)state;
	run("kcmd: Delete of an external provisioner's volume: Released, nothing else",
	    arr(1, vol("volume8-1", "1Gi", "uid8-1", "claim8-1", BOUND, DELETE, NULL, A_PROV_EXT)),
	    arr(1, vol("volume8-1", "1Gi", "uid8-1", "claim8-1", REL, DELETE, NULL, A_PROV_EXT)),
	    NONE, NONE, NULL, noevents, false, SYNC_VOLUME);
	s = run("kcmd: Delete without a deleter: Failed",
	        arr(1, vol("volume8-2", "1Gi", "uid8-2", "claim8-2", BOUND, DELETE, NULL, 0)),
	        arr(1, with_message("error getting deleter volume plugin for volume \"volume8-2\": "
	                            "no deletable volume plugin matched",
	                            vol("volume8-2", "1Gi", "uid8-2", "claim8-2", "Failed", DELETE,
	                                NULL, 0))),
	        NONE, NONE, NULL, ev_del, true, SYNC_VOLUME);
	assert_string_equal(
	        cJSON_GetStringValue(cJSON_GetObjectItem(
	                cJSON_GetObjectItem(cJSON_GetArrayItem(s->volumes, 0), "status"),
	                "message")),
	        "error getting deleter volume plugin for volume \"volume8-2\": no deletable volume "
	        "plugin matched");
	run("kcmd: Recycle without a recycler: Failed",
	    arr(1, vol("volume6-1", "1Gi", "uid6-1", "claim6-1", BOUND, "Recycle", NULL, 0)),
	    arr(1, with_message("No recycler plugin found for the volume!",
	                        vol("volume6-1", "1Gi", "uid6-1", "claim6-1", "Failed", "Recycle",
	                            NULL, 0))),
	    NONE, NONE, NULL, ev_rec, false, SYNC_VOLUME);
	run("kcmd: unknown reclaim policy: Failed",
	    arr(1, vol("volume6-2", "1Gi", "uid6-2", "claim6-2", BOUND, "Keep", NULL, 0)),
	    arr(1, with_message("Volume has unrecognized PersistentVolumeReclaimPolicy",
	                        vol("volume6-2", "1Gi", "uid6-2", "claim6-2", "Failed", "Keep",
	                            NULL, 0))),
	    NONE, NONE, NULL, ev_unknown, false, SYNC_VOLUME);
	/* a provisioned volume whose claim got another volume is released for its deleter */
	run("kcmd: provisioned volume of a claim bound elsewhere: Released",
	    arr(1, vol("volume8-3", "1Gi", "uid8-3", "claim8-3", BOUND, DELETE, NULL, A_PROV_EXT)),
	    arr(1, vol("volume8-3", "1Gi", "uid8-3", "claim8-3", REL, DELETE, NULL, A_PROV_EXT)),
	    arr(1, claim("claim8-3", "uid8-3", "1Gi", "volume8-3-x", BOUND, NULL, A_COMPLETED)),
	    arr(1, claim("claim8-3", "uid8-3", "1Gi", "volume8-3-x", BOUND, NULL, A_COMPLETED)),
	    NULL, noevents, false, SYNC_VOLUME);
}

/* updateMigrationAnnotations: migrated-to follows the provisioner before the sync runs */
static void test_migration_annotations(void **state)
{
	struct store s = {0};
	struct pvb_ops ops = ops_for(&s);
	char err[512];
	cJSON *v, *c, *a;

	(void)state;
	/* an in-tree aws-ebs volume, Delete, claim gone: annotated for its CSI driver, Released,
	 * and left to the driver (not Failed) */
	v = vol("volume-m", "1Gi", "uid-m", "claim-m", BOUND, DELETE, NULL, 0);
	cJSON_AddStringToObject(
	        cJSON_AddObjectToObject(cJSON_GetObjectItem(v, "metadata"), "annotations"),
	        PVB_ANN_PROVISIONED_BY, "kubernetes.io/aws-ebs");
	s.volumes = arr(1, v);
	s.claims = cJSON_CreateArray();
	s.classes = cJSON_CreateArray();
	v = cJSON_Duplicate(v, true);
	assert_int_equal(pvb_sync_volume(&ops, v, err, sizeof(err)), 0);
	cJSON_Delete(v);
	v = cJSON_GetArrayItem(s.volumes, 0);
	a = cJSON_GetObjectItem(cJSON_GetObjectItem(v, "metadata"), "annotations");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(a, PVB_ANN_MIGRATED_TO)),
	                    "ebs.csi.aws.com");
	assert_string_equal(cJSON_GetStringValue(
	                            cJSON_GetObjectItem(cJSON_GetObjectItem(v, "status"), "phase")),
	                    REL);
	assert_int_equal(s.n_events, 0);
	/* a claim whose provisioner is not migrated loses a stale migrated-to */
	c = claim("claim-n", "uid-n", "1Gi", "", PENDING, "ext", A_PROV_EXT_ANNS);
	cJSON_AddStringToObject(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(c, "metadata"), "annotations"),
	        PVB_ANN_MIGRATED_TO, "ebs.csi.aws.com");
	cJSON_AddItemToArray(s.claims, c);
	cJSON_AddItemToArray(s.classes, sc("ext", "kcmd.test/external", "Immediate", false,
	                                   "2026-01-01T00:00:00Z"));
	c = cJSON_Duplicate(c, true);
	assert_int_equal(pvb_sync_claim(&ops, c, err, sizeof(err)), 0);
	cJSON_Delete(c);
	a = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(s.claims, 0), "metadata"),
	                        "annotations");
	assert_null(cJSON_GetObjectItem(a, PVB_ANN_MIGRATED_TO));
	assert_non_null(cJSON_GetObjectItem(a, PVB_ANN_STORAGE_PROV));
	/* a class of an in-tree migrated plugin is provisioned by its CSI driver */
	c = claim("claim-e", "uid-e", "1Gi", "", PENDING, "ebs", 0);
	cJSON_AddItemToArray(s.claims, c);
	cJSON_AddItemToArray(s.classes, sc("ebs", "kubernetes.io/aws-ebs", "Immediate", false,
	                                   "2026-01-01T00:00:00Z"));
	s.n_events = 0;
	c = cJSON_Duplicate(c, true);
	assert_int_equal(pvb_sync_claim(&ops, c, err, sizeof(err)), 0);
	cJSON_Delete(c);
	a = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(s.claims, 1), "metadata"),
	                        "annotations");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(a, PVB_ANN_STORAGE_PROV)),
	                    "ebs.csi.aws.com");
	assert_null(cJSON_GetObjectItem(a, PVB_ANN_MIGRATED_TO));
	assert_non_null(strstr(s.events[0], "external provisioner 'ebs.csi.aws.com'"));
	cJSON_Delete(s.volumes);
	cJSON_Delete(s.claims);
	cJSON_Delete(s.classes);
}

/* upstream's TestModifyDeletionFinalizers (13-1 … 13-15) on pvb_deletion_finalizers: the
 * volume's provisioned-by, reclaim policy and finalizers in, the finalizers and "modified" out
 * ("" = no finalizers key) */
static void test_deletion_finalizers(void **state)
{
#define EXT  "\"external-provisioner.volume.kubernetes.io/finalizer\""
#define INT  "\"kubernetes.io/pv-controller\""
#define CUST "\"test.volume.kubernetes.io/finalizer\""
	static const struct {
		const char *name, *prov, *policy, *fins, *want;
		int modified;
	} cases[] = {
	        {"13-1 external provisioner keeps its finalizer", "rbd.csi.ceph.com", "Delete",
	         "[" EXT "]", "[" EXT "]", 0},
	        {"13-2 external provisioner, no finalizer", "rbd.csi.ceph.com", "Delete", NULL,
	         NULL, 0},
	        {"13-3 in-tree, custom finalizer: in-tree one added", "kubernetes.io/mock-volume",
	         "Delete", "[" CUST "]", "[" CUST "," INT "]", 1},
	        {"13-4 in-tree, no finalizers", "kubernetes.io/mock-volume", "Delete", NULL,
	         "[" INT "]", 1},
	        {"13-5 in-tree, the external one replaced", "kubernetes.io/mock-volume", "Delete",
	         "[" EXT "]", "[" INT "]", 1},
	        {"13-6 in-tree, several", "kubernetes.io/mock-volume", "Delete",
	         "[" EXT "," CUST "]", "[" CUST "," INT "]", 1},
	        {"13-7 migrated: the in-tree one removed, the external kept",
	         "kubernetes.io/gce-pd", "Delete", "[" EXT "," INT "]", "[" EXT "]", 1},
	        {"13-8 in-tree not migrated, the external one", "kubernetes.io/mock-volume",
	         "Delete", "[" EXT "]", "[" INT "]", 1},
	        {"13-9 in-tree not migrated, several", "kubernetes.io/mock-volume", "Delete",
	         "[" EXT "," CUST "]", "[" CUST "," INT "]", 1},
	        {"13-10 no provisioned-by, finalizers kept", NULL, "Delete", "[" EXT "]",
	         "[" EXT "]", 0},
	        {"13-11 no provisioned-by, no finalizers", NULL, "Delete", NULL, NULL, 0},
	        {"13-12 Retain: not added", "kubernetes.io/mock-volume", "Retain", NULL, NULL, 0},
	        {"13-13 Recycle: not added", "kubernetes.io/mock-volume", "Recycle", NULL, NULL, 0},
	        {"13-14 Retain: removed", "kubernetes.io/mock-volume", "Retain", "[" INT "]", NULL,
	         1},
	        {"13-15 statically provisioned", NULL, "Delete", NULL, NULL, 0},
	        {"kcmd: migrated, no in-tree finalizer: untouched", "kubernetes.io/aws-ebs",
	         "Delete", "[" EXT "]", "[" EXT "]", 0},
	};
#undef EXT
#undef INT
#undef CUST
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char js[1024];
		cJSON *v, *got, *want;

		snprintf(js, sizeof(js),
		         "{\"metadata\":{\"name\":\"v\"%s%s%s%s%s},\"spec\":{"
		         "\"persistentVolumeReclaimPolicy\":\"%s\"}}",
		         cases[i].prov ? ",\"annotations\":{\"pv.kubernetes.io/provisioned-by\":\""
		                       : "",
		         cases[i].prov ? cases[i].prov : "", cases[i].prov ? "\"}" : "",
		         cases[i].fins ? ",\"finalizers\":" : "",
		         cases[i].fins ? cases[i].fins : "", cases[i].policy);
		v = cJSON_Parse(js);
		assert_non_null(v);
		if (pvb_deletion_finalizers(v) != cases[i].modified)
			fail_msg("%s: modified %d, want %d", cases[i].name, !cases[i].modified,
			         cases[i].modified);
		got = cJSON_GetObjectItem(cJSON_GetObjectItem(v, "metadata"), "finalizers");
		want = cases[i].want ? cJSON_Parse(cases[i].want) : NULL;
		if (!cJSON_Compare(got, want, true) && (got || want)) {
			char *g = got ? cJSON_PrintUnformatted(got) : NULL;
			fail_msg("%s: finalizers %s, want %s", cases[i].name, g ? g : "(none)",
			         cases[i].want ? cases[i].want : "(none)");
		}
		cJSON_Delete(want);
		cJSON_Delete(v);
	}
}

/* syncVolume writes the finalizer with the migration annotations: one Update, then the sync */
static void test_deletion_finalizer_sync(void **state)
{
	struct store s = {0};
	struct pvb_ops ops;
	char err[1024];
	cJSON *v, *fins;

	(void)state;
	s.volumes = arr(1, vol("volume13-16", "1Gi", "", "", AVAIL, DELETE, NULL, 0));
	cJSON_AddItemToObject(
	        cJSON_AddObjectToObject(
	                cJSON_GetObjectItem(cJSON_GetArrayItem(s.volumes, 0), "metadata"),
	                "annotations"),
	        "pv.kubernetes.io/provisioned-by", cJSON_CreateString("kubernetes.io/mock-volume"));
	s.claims = cJSON_CreateArray();
	s.classes = cJSON_CreateArray();
	s.rv = 100;
	ops = ops_for(&s);
	v = cJSON_Duplicate(cJSON_GetArrayItem(s.volumes, 0), true);
	assert_int_equal(pvb_sync_volume(&ops, v, err, sizeof(err)), 0);
	cJSON_Delete(v);
	fins = cJSON_GetObjectItem(
	        cJSON_GetObjectItem(cJSON_GetArrayItem(s.volumes, 0), "metadata"), "finalizers");
	assert_int_equal(cJSON_GetArraySize(fins), 1);
	assert_string_equal(cJSON_GetArrayItem(fins, 0)->valuestring,
	                    "kubernetes.io/pv-controller");
	assert_int_equal(s.writes, 1); /* already Available: the finalizer is the only write */
	cJSON_Delete(s.volumes);
	cJSON_Delete(s.claims);
	cJSON_Delete(s.classes);
}

/* a retroactive assignment whose update fails (a stale claim: a conflict) counts in both
 * retroactive_storageclass_total and retroactive_storageclass_errors_total */
static void test_retroactive_failed(void **state)
{
	struct store s = {0};
	struct pvb_ops ops;
	char err[1024];
	cJSON *c;

	(void)state;
	s.volumes = cJSON_CreateArray();
	s.claims = arr(1, claim("claim12-9", "uid12-9", "1Gi", "", PENDING, NULL, 0));
	s.classes =
	        arr(1, sc("def", "kcmd.test/external", "Immediate", true, "2026-01-01T00:00:00Z"));
	s.rv = 100;
	ops = ops_for(&s);
	c = cJSON_Duplicate(cJSON_GetArrayItem(s.claims, 0), true);
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(c, "metadata"), "resourceVersion",
	                          cJSON_CreateString("0"));
	assert_true(pvb_sync_claim(&ops, c, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "can't update PersistentVolumeClaim"));
	assert_int_equal(s.retro_ok, 0);
	assert_int_equal(s.retro_failed, 1);
	cJSON_Delete(c);
	cJSON_Delete(s.volumes);
	cJSON_Delete(s.claims);
	cJSON_Delete(s.classes);
}

/* ---- matching, default class and quantities -------------------------------------------- */
static void test_helpers(void **state)
{
	const cJSON *m = NULL;
	char err[256];
	cJSON *c = claim("c", "u", "1Gi", "", PENDING, NULL, 0), *vs, *cls;

	(void)state;
	/* access-mode groups: a volume with exactly the claim's modes wins over a bigger set
	 * even when the bigger set's volume is smaller */
	vs = arr(2, vol("small-rwx", "1Gi", "", "", AVAIL, RETAIN, NULL, 0),
	         vol("big-rwo", "5Gi", "", "", AVAIL, RETAIN, NULL, 0));
	cJSON_ReplaceItemInObject(
	        cJSON_GetObjectItem(cJSON_GetArrayItem(vs, 0), "spec"), "accessModes",
	        cJSON_CreateStringArray(
	                (const char *[]){"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany"}, 3));
	assert_int_equal(pvb_find_best_match(c, vs, false, &m, err, sizeof(err)), 0);
	assert_non_null(m);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(
	                            cJSON_GetObjectItem(m, "metadata"), "name")),
	                    "big-rwo");
	/* a volume marked for deletion is never chosen */
	cJSON_AddStringToObject(cJSON_GetObjectItem(cJSON_GetArrayItem(vs, 1), "metadata"),
	                        "deletionTimestamp", "2026-01-01T00:00:00Z");
	assert_int_equal(pvb_find_best_match(c, vs, false, &m, err, sizeof(err)), 0);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(
	                            cJSON_GetObjectItem(m, "metadata"), "name")),
	                    "small-rwx");
	cJSON_Delete(vs);
	/* a selector that does not convert is an error */
	cJSON *s = cJSON_AddObjectToObject(cJSON_GetObjectItem(c, "spec"), "selector");
	cJSON *e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "key", "a");
	cJSON_AddStringToObject(e, "operator", "Bogus");
	cJSON_AddItemToArray(cJSON_AddArrayToObject(s, "matchExpressions"), e);
	vs = arr(1, vol("v", "1Gi", "", "", AVAIL, RETAIN, NULL, 0));
	assert_true(pvb_find_matching_volume(c, vs, false, &m, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "error creating internal label selector for claim"));
	cJSON_Delete(vs);
	cJSON_Delete(c);
	/* default class: newest first, then name */
	cls = arr(3, sc("b", "p", "Immediate", true, "2026-01-01T00:00:00Z"),
	          sc("a", "p", "Immediate", true, "2026-01-01T00:00:00Z"),
	          sc("c", "p", "Immediate", false, "2027-01-01T00:00:00Z"));
	assert_string_equal(
	        cJSON_GetStringValue(cJSON_GetObjectItem(
	                cJSON_GetObjectItem(pvb_default_class(cls), "metadata"), "name")),
	        "a");
	cJSON_Delete(cls);
	cls = arr(1, sc("c", "p", "Immediate", false, "2027-01-01T00:00:00Z"));
	assert_null(pvb_default_class(cls));
	cJSON_Delete(cls);
	/* quantities */
	assert_int_equal(pvb_qty_cmp("1Gi", "1073741824"), 0);
	assert_true(pvb_qty_cmp("1G", "1Gi") < 0);
	assert_true(pvb_qty_cmp("1500m", "1") > 0);
	assert_true(pvb_qty_cmp(NULL, "1") < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_set1),
	        cmocka_unit_test(test_set2),
	        cmocka_unit_test(test_set3),
	        cmocka_unit_test(test_set4),
	        cmocka_unit_test(test_set13),
	        cmocka_unit_test(test_provisioning),
	        cmocka_unit_test(test_wait_for_pod_scheduled),
	        cmocka_unit_test(test_reclaim),
	        cmocka_unit_test(test_migration_annotations),
	        cmocka_unit_test(test_helpers),
	        cmocka_unit_test(test_retroactive_failed),
	        cmocka_unit_test(test_deletion_finalizers),
	        cmocka_unit_test(test_deletion_finalizer_sync),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
