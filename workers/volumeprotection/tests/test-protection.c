/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/volumeprotection/tests/test-protection.c: the protection controllers' decisions
 * against upstream's pvc_protection_controller_test.go (TestPVCProtectionController: the PVC
 * event cases, the pod event cases, finished/unscheduled/replaced pods) and
 * pv_protection_controller_test.go (TestPVProtectionController), plus the Unused condition of
 * PersistentVolumeClaimUnusedSinceTime (KEP-5541: terminated pods do not count, unscheduled
 * ones do; no write when the status is unchanged), generic ephemeral volumes, and the patch
 * bodies; vac_protection_controller_test.go (TestVACProtectionController); and the ephemeral
 * volume controller's claim (controller_test.go's create / wrong-PVC-owner cases).
 *
 * `plan` below follows plugin-pvc.c's process_pvc step by step over the pure functions: what a
 * sync of the PVC would write given the live pod list.
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

#include "workers/volumeprotection/ephemeral.h"
#include "workers/volumeprotection/protection.h"

/* ---- fixtures (upstream's pod(), pvc(), withPVC, ...) as JSON ------------------------------ */
static char *pvc_json(bool finalizer, bool deleted, const char *phase, const char *unused,
                      const char *owner_uid)
{
	char *s = NULL;
	char cond[256] = "", own[256] = "";
	if (unused)
		snprintf(cond, sizeof(cond),
		         ",\"conditions\":[{\"type\":\"Resizing\",\"status\":\"True\"},"
		         "{\"type\":\"Unused\",\"status\":\"%s\",\"lastTransitionTime\":"
		         "\"2026-01-01T00:00:00Z\"}]",
		         unused);
	if (owner_uid)
		snprintf(own, sizeof(own),
		         ",\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":"
		         "\"pod1\",\"uid\":\"%s\",\"controller\":true}]",
		         owner_uid);
	assert_true(asprintf(&s,
	                     "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\","
	                     "\"resourceVersion\":\"7\"%s%s%s},\"status\":{\"phase\":\"%s\"%s}}",
	                     owner_uid ? "pod1-eph" : "pvc1",
	                     finalizer
	                             ? ",\"finalizers\":[\"a/b\",\"kubernetes.io/pvc-protection\"]"
	                             : ",\"finalizers\":[\"a/b\"]",
	                     deleted ? ",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"" : "", own,
	                     phase, cond) > 0);
	return s;
}

struct podspec {
	const char *uid, *node, *phase, *claim, *ephemeral;
	bool deleting, grace0, running_container;
};

static char *pod_json(const struct podspec *p)
{
	char *s = NULL;
	char vols[512] = "";
	size_t n = 0;
	n += (size_t)snprintf(vols + n, sizeof(vols) - n,
	                      "{\"name\":\"emptyDir\",\"emptyDir\":{}}");
	if (p->claim)
		n += (size_t)snprintf(
		        vols + n, sizeof(vols) - n,
		        ",{\"name\":\"v\",\"persistentVolumeClaim\":{\"claimName\":\"%s\"}}",
		        p->claim);
	if (p->ephemeral)
		n += (size_t)snprintf(
		        vols + n, sizeof(vols) - n,
		        ",{\"name\":\"%s\",\"ephemeral\":{\"volumeClaimTemplate\":{}}}",
		        p->ephemeral);
	assert_true(asprintf(&s,
	                     "{\"metadata\":{\"name\":\"pod1\",\"namespace\":\"default\",\"uid\":"
	                     "\"%s\"%s%s},\"spec\":{%s%s%s\"volumes\":[%s]},\"status\":{\"phase\":"
	                     "\"%s\"%s}}",
	                     p->uid ? p->uid : "uid1",
	                     p->deleting ? ",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"" : "",
	                     p->grace0 ? ",\"deletionGracePeriodSeconds\":0" : "",
	                     p->node ? "\"nodeName\":\"" : "", p->node ? p->node : "",
	                     p->node ? "\"," : "", vols, p->phase ? p->phase : "Pending",
	                     p->running_container ? ",\"containerStatuses\":[{\"name\":\"c\","
	                                            "\"state\":{\"running\":{}}}]"
	                                          : "") > 0);
	return s;
}

static cJSON *pod_list(const struct podspec *pods, size_t n)
{
	cJSON *l = cJSON_CreateObject(), *items = cJSON_AddArrayToObject(l, "items");
	for (size_t i = 0; i < n; i++) {
		char *js = pod_json(&pods[i]);
		cJSON_AddItemToArray(items, cJSON_Parse(js));
		free(js);
	}
	return l;
}

/* what one sync writes (process_pvc): finalizer removed / added, Unused set (-1: untouched) */
struct plan {
	bool remove, add;
	int unused;
};

static struct plan plan(const char *pvc_js, const cJSON *pods, bool gate)
{
	struct vp_object pvc;
	struct plan p = {.unused = -1};
	assert_int_equal(vp_object_parse(pvc_js, strlen(pvc_js), VP_PVC_FINALIZER, &pvc), 0);
	if (vp_is_deletion_candidate(&pvc) && !vp_pods_using(pods, &pvc, VP_FOR_DELETION)) {
		p.remove = true;
		vp_object_free(&pvc);
		return p;
	}
	p.add = vp_need_to_add_finalizer(&pvc);
	if (vp_pvc_unused_managed(&pvc, gate)) {
		char *body = NULL;
		bool unused = !vp_pods_using(pods, &pvc, VP_FOR_UNUSED_SINCE);
		assert_int_equal(vp_unused_update(&pvc, unused, 1, &body), 0);
		if (body)
			p.unused = unused;
		free(body);
	}
	vp_object_free(&pvc);
	return p;
}

static void expect(const char *name, struct plan got, struct plan want)
{
	if (got.remove != want.remove || got.add != want.add || got.unused != want.unused)
		fail_msg("%s: got remove=%d add=%d unused=%d, want %d %d %d", name, got.remove,
		         got.add, got.unused, want.remove, want.add, want.unused);
}

/* TestPVCProtectionController, the PVC and pod event cases (gate off: the finalizer only) */
static void test_pvc_protection_cases(void **state)
{
	(void)state;
	const struct podspec scheduled = {.node = "node1", .claim = "pvc1"};
	const struct podspec unrelated = {.node = "node1", .claim = "unrelatedPVC"};
	const struct podspec failed = {.node = "node1", .claim = "pvc1", .phase = "Failed"};
	const struct podspec succeeded = {.node = "node1", .claim = "pvc1", .phase = "Succeeded"};
	const struct podspec running = {.node = "node1", .claim = "pvc1", .phase = "Running"};
	const struct podspec unscheduled = {.claim = "pvc1"};
	const struct podspec other_uid = {.uid = "uid2", .node = "node1"};
	struct {
		const char *name;
		bool finalizer, deleted;
		const struct podspec *pods;
		size_t n;
		struct plan want;
	} cases[] = {
	        {"PVC without finalizer -> finalizer is added",
	         false,
	         false,
	         NULL,
	         0,
	         {false, true, -1}},
	        {"PVC with finalizer -> no action", true, false, NULL, 0, {false, false, -1}},
	        {"deleted PVC with finalizer -> finalizer is removed",
	         true,
	         true,
	         NULL,
	         0,
	         {true, false, -1}},
	        {"deleted PVC with finalizer + pod with the PVC exists -> finalizer is not removed",
	         true,
	         true,
	         &scheduled,
	         1,
	         {false, false, -1}},
	        {"deleted PVC with finalizer + pod with unrelated PVC and EmptyDir exists -> "
	         "finalizer is removed",
	         true,
	         true,
	         &unrelated,
	         1,
	         {true, false, -1}},
	        {"deleted PVC with finalizer + pod with the PVC finished but is not deleted -> "
	         "finalizer is not removed",
	         true,
	         true,
	         &failed,
	         1,
	         {false, false, -1}},
	        {"updated running Pod -> no action", true, true, &running, 1, {false, false, -1}},
	        {"updated finished Pod -> finalizer is not removed",
	         true,
	         true,
	         &succeeded,
	         1,
	         {false, false, -1}},
	        {"updated unscheduled Pod -> finalizer is removed",
	         true,
	         true,
	         &unscheduled,
	         1,
	         {true, false, -1}},
	        {"deleted running Pod -> finalizer is removed",
	         true,
	         true,
	         NULL,
	         0,
	         {true, false, -1}},
	        {"pod delete and create with same namespaced name seen as an update, old pod used "
	         "deleted PVC -> finalizer is removed",
	         true,
	         true,
	         &other_uid,
	         1,
	         {true, false, -1}},
	        {"pod delete and create with same namespaced name seen as an update, old pod used "
	         "non-deleted PVC -> finalizer is not removed",
	         true,
	         false,
	         &other_uid,
	         1,
	         {false, false, -1}},
	        {"pod update from unscheduled to scheduled, deleted PVC is referenced -> finalizer "
	         "is not removed",
	         true,
	         true,
	         &scheduled,
	         1,
	         {false, false, -1}},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *js = pvc_json(cases[i].finalizer, cases[i].deleted, "Pending", NULL, NULL);
		cJSON *pods = pod_list(cases[i].pods, cases[i].n);
		expect(cases[i].name, plan(js, pods, false), cases[i].want);
		cJSON_Delete(pods);
		free(js);
	}
}

/* KEP-5541 / test/e2e/storage's "PVC Unused Condition" cases, on a Bound PVC with the gate */
static void test_unused_condition(void **state)
{
	(void)state;
	const struct podspec running = {.node = "node1", .claim = "pvc1", .phase = "Running"};
	const struct podspec succeeded = {.node = "node1", .claim = "pvc1", .phase = "Succeeded"};
	const struct podspec pending_unscheduled = {.claim = "pvc1"};
	const struct podspec deleting_stopped = {.node = "n", .claim = "pvc1", .deleting = true};
	const struct podspec deleting_running = {
	        .node = "n", .claim = "pvc1", .deleting = true, .running_container = true};
	const struct podspec two[] = {succeeded, running};
	struct {
		const char *name;
		const char *phase, *cond;
		bool gate, deleted;
		const struct podspec *pods;
		size_t n;
		int want;
	} cases[] = {
	        {"no pod -> Unused=True", "Bound", NULL, true, false, NULL, 0, 1},
	        {"running pod -> Unused=False", "Bound", NULL, true, false, &running, 1, 0},
	        {"Unused=True and a pod starts -> False", "Bound", "True", true, false, &running, 1,
	         0},
	        {"Unused=False and the pod is gone -> True", "Bound", "False", true, false, NULL, 0,
	         1},
	        {"only a terminated pod -> True", "Bound", NULL, true, false, &succeeded, 1, 1},
	        {"pending unscheduled pod counts -> False", "Bound", NULL, true, false,
	         &pending_unscheduled, 1, 0},
	        {"deleting pod with no running container is terminated -> True", "Bound", "False",
	         true, false, &deleting_stopped, 1, 1},
	        {"deleting pod still running counts -> stays False (no write)", "Bound", "False",
	         true, false, &deleting_running, 1, -1},
	        {"a terminated and a running pod -> False", "Bound", "True", true, false, two, 2,
	         0},
	        {"unchanged True -> no write", "Bound", "True", true, false, NULL, 0, -1},
	        {"unchanged False -> no write", "Bound", "False", true, false, &running, 1, -1},
	        {"not Bound -> not managed", "Pending", NULL, true, false, NULL, 0, -1},
	        {"gate off -> not managed", "Bound", NULL, false, false, NULL, 0, -1},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *js = pvc_json(true, cases[i].deleted, cases[i].phase, cases[i].cond, NULL);
		cJSON *pods = pod_list(cases[i].pods, cases[i].n);
		expect(cases[i].name, plan(js, pods, cases[i].gate),
		       (struct plan){false, false, cases[i].want});
		cJSON_Delete(pods);
		free(js);
	}
	/* a deleted PVC keeps its condition and loses the finalizer */
	char *js = pvc_json(true, true, "Bound", "True", NULL);
	cJSON *pods = pod_list(NULL, 0);
	expect("deleted Bound PVC -> finalizer removed, condition untouched", plan(js, pods, true),
	       (struct plan){true, false, -1});
	cJSON_Delete(pods);
	free(js);
}

/* generic ephemeral volumes: the claim <pod>-<volume> controlled by the pod */
static void test_ephemeral(void **state)
{
	(void)state;
	struct vp_object pvc, stranger;
	char *own = pvc_json(true, true, "Bound", NULL, "uid1");
	char *other = pvc_json(true, true, "Bound", NULL, "uid9");
	const struct podspec eph = {.node = "n", .ephemeral = "eph"};
	const struct podspec eph_shut = {
	        .node = "n", .ephemeral = "eph", .deleting = true, .grace0 = true};
	const struct podspec eph_unsched = {.ephemeral = "eph"};
	cJSON *l;

	assert_int_equal(vp_object_parse(own, strlen(own), VP_PVC_FINALIZER, &pvc), 0);
	assert_int_equal(vp_object_parse(other, strlen(other), VP_PVC_FINALIZER, &stranger), 0);
	l = pod_list(&eph, 1);
	assert_non_null(vp_pods_using(l, &pvc, VP_FOR_DELETION));
	assert_non_null(vp_pods_using(l, &pvc, VP_FOR_UNUSED_SINCE));
	/* same name, not owned by the pod: not its claim */
	assert_null(vp_pods_using(l, &stranger, VP_FOR_DELETION));
	cJSON_Delete(l);
	/* a pod shut down (deleted with grace 0) releases its ephemeral claim */
	l = pod_list(&eph_shut, 1);
	assert_true(vp_pod_shut_down(cJSON_GetArrayItem(cJSON_GetObjectItem(l, "items"), 0)));
	assert_null(vp_pods_using(l, &pvc, VP_FOR_DELETION));
	cJSON_Delete(l);
	/* unscheduled: kept only for the Unused condition */
	l = pod_list(&eph_unsched, 1);
	assert_null(vp_pods_using(l, &pvc, VP_FOR_DELETION));
	assert_non_null(vp_pods_using(l, &pvc, VP_FOR_UNUSED_SINCE));
	cJSON_Delete(l);
	vp_object_free(&pvc);
	vp_object_free(&stranger);
	free(own);
	free(other);
}

/* TestPVProtectionController: the PV decisions */
static void test_pv_protection_cases(void **state)
{
	(void)state;
	struct {
		const char *name, *js;
		bool add, remove;
	} cases[] = {
	        {"PV without finalizer -> finalizer is added",
	         "{\"metadata\":{\"name\":\"pv1\"},\"status\":{\"phase\":\"Available\"}}", true,
	         false},
	        {"PV with finalizer -> no action",
	         "{\"metadata\":{\"name\":\"pv1\",\"finalizers\":[\"kubernetes.io/"
	         "pv-protection\"]},"
	         "\"status\":{\"phase\":\"Available\"}}",
	         false, false},
	        {"deleted PV with finalizer -> finalizer is removed",
	         "{\"metadata\":{\"name\":\"pv1\",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\","
	         "\"finalizers\":[\"kubernetes.io/pv-protection\"]},\"status\":{\"phase\":"
	         "\"Released\"}}",
	         false, true},
	        {"deleted PV with finalizer + PV is bound -> finalizer is not removed",
	         "{\"metadata\":{\"name\":\"pv1\",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\","
	         "\"finalizers\":[\"kubernetes.io/"
	         "pv-protection\"]},\"status\":{\"phase\":\"Bound\"}}",
	         false, false},
	        {"deleted PV without finalizer -> nothing",
	         "{\"metadata\":{\"name\":\"pv1\",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"}}",
	         false, false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct vp_object pv;
		assert_int_equal(
		        vp_object_parse(cases[i].js, strlen(cases[i].js), VP_PV_FINALIZER, &pv), 0);
		bool remove = vp_is_deletion_candidate(&pv) && !pv.bound;
		bool add = !remove && vp_need_to_add_finalizer(&pv);
		if (add != cases[i].add || remove != cases[i].remove)
			fail_msg("%s: add=%d remove=%d", cases[i].name, add, remove);
		vp_object_free(&pv);
	}
}

/* field of an update body */
static const cJSON *at(const cJSON *o, const char *a, const char *b)
{
	return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, a), b);
}

static void test_bodies(void **state)
{
	(void)state;
	struct vp_object pvc;
	char *js = pvc_json(true, false, "Bound", "False", NULL), *b = NULL, *f;
	cJSON *u;

	assert_int_equal(vp_object_parse(js, strlen(js), VP_PVC_FINALIZER, &pvc), 0);
	assert_int_equal(pvc.unused, 0);
	assert_int_equal(vp_finalizer_update(&pvc, VP_PVC_FINALIZER, false, &b), 0);
	u = cJSON_Parse(b);
	f = cJSON_PrintUnformatted(at(u, "metadata", "finalizers"));
	assert_string_equal(f, "[\"a/b\"]");
	assert_string_equal(at(u, "metadata", "resourceVersion")->valuestring, "7");
	assert_string_equal(at(u, "status", "phase")->valuestring, "Bound"); /* the whole object */
	free(f);
	cJSON_Delete(u);
	free(b);
	vp_object_free(&pvc);
	free(js);

	js = pvc_json(false, false, "Bound", "False", NULL);
	assert_int_equal(vp_object_parse(js, strlen(js), VP_PVC_FINALIZER, &pvc), 0);
	assert_int_equal(vp_finalizer_update(&pvc, VP_PVC_FINALIZER, true, &b), 0);
	u = cJSON_Parse(b);
	f = cJSON_PrintUnformatted(at(u, "metadata", "finalizers"));
	assert_string_equal(f, "[\"a/b\",\"kubernetes.io/pvc-protection\"]");
	free(f);
	cJSON_Delete(u);
	free(b);
	/* the Unused condition replaced in place, the other one kept */
	assert_int_equal(vp_unused_update(&pvc, true, 1767225600LL * 1000000000LL, &b), 0);
	u = cJSON_Parse(b);
	f = cJSON_PrintUnformatted(at(u, "status", "conditions"));
	assert_string_equal(
	        f,
	        "[{\"type\":\"Resizing\",\"status\":\"True\"},{\"type\":\"Unused\",\"status\":"
	        "\"True\",\"lastProbeTime\":null,\"lastTransitionTime\":\"2026-01-01T00:00:00Z\","
	        "\"reason\":\"NoPodsUsingPVC\",\"message\":\"No pods are currently referencing "
	        "this PVC\"}]");
	assert_string_equal(at(u, "metadata", "resourceVersion")->valuestring, "7");
	free(f);
	cJSON_Delete(u);
	free(b);
	assert_int_equal(vp_unused_update(&pvc, false, 1, &b), 0);
	assert_null(b); /* already False: no write */
	vp_object_free(&pvc);
	free(js);

	/* no conditions yet: appended; a PVC without status gets one */
	js = strdup("{\"metadata\":{\"name\":\"p\",\"namespace\":\"d\"}}");
	assert_int_equal(vp_object_parse(js, strlen(js), VP_PVC_FINALIZER, &pvc), 0);
	assert_int_equal(vp_unused_update(&pvc, false, 1, &b), 0);
	u = cJSON_Parse(b);
	assert_string_equal(
	        cJSON_GetArrayItem(at(u, "status", "conditions"), 0)->child->next->valuestring,
	        "False");
	cJSON_Delete(u);
	free(b);
	vp_object_free(&pvc);
	free(js);

	/* bad input */
	assert_int_equal(vp_object_parse("[1]", 3, VP_PVC_FINALIZER, &pvc), -EINVAL);
	assert_int_equal(vp_object_parse("{\"metadata\":{}}", 15, VP_PVC_FINALIZER, &pvc), -EINVAL);
	assert_int_equal(vp_object_parse("{nope", 5, VP_PVC_FINALIZER, &pvc), -EINVAL);
	assert_int_equal(vp_object_parse(NULL, 0, VP_PVC_FINALIZER, &pvc), -EINVAL);
}

/* the event filters */
static void test_filters(void **state)
{
	(void)state;
	struct vp_object o;
	char *js = pvc_json(true, false, "Bound", NULL, NULL);

	assert_int_equal(vp_object_parse(js, strlen(js), VP_PVC_FINALIZER, &o), 0);
	assert_true(vp_pvc_wants_sync(&o, true));   /* no Unused condition yet */
	assert_false(vp_pvc_wants_sync(&o, false)); /* has the finalizer */
	assert_true(vp_pvc_pod_event_relevant(&o, true));
	assert_false(vp_pvc_pod_event_relevant(&o, false));
	vp_object_free(&o);
	free(js);
	js = pvc_json(true, true, "Bound", "True", NULL);
	assert_int_equal(vp_object_parse(js, strlen(js), VP_PVC_FINALIZER, &o), 0);
	assert_true(vp_pvc_wants_sync(&o, false));
	assert_true(vp_pvc_pod_event_relevant(&o, false));
	vp_object_free(&o);
	free(js);
}

/* TestVACProtectionController (vac_protection_controller_test.go): which classes an update or a
 * delete of a PV/PVC queues, and whether the remaining PVs/PVCs keep a deleted class. */
#define PV_VAC1                                                                                    \
	"{\"metadata\":{\"name\":\"pv1\"},\"spec\":{\"volumeAttributesClassName\":\"vac1\"}}"
#define PV_VAC2                                                                                    \
	"{\"metadata\":{\"name\":\"pv1\"},\"spec\":{\"volumeAttributesClassName\":\"vac2\"}}"
#define PV2_VAC1                                                                                   \
	"{\"metadata\":{\"name\":\"pv2\"},\"spec\":{\"volumeAttributesClassName\":\"vac1\"}}"
#define PVC_VAC1                                                                                   \
	"{\"metadata\":{\"name\":\"pvc1\",\"namespace\":\"d\"},\"spec\":{"                         \
	"\"volumeAttributesClassName\":\"vac1\"}}"
#define PVC2_VAC1                                                                                  \
	"{\"metadata\":{\"name\":\"pvc2\",\"namespace\":\"d\"},\"spec\":{"                         \
	"\"volumeAttributesClassName\":\"vac1\"}}"
#define PVC_VAC2                                                                                   \
	"{\"metadata\":{\"name\":\"pvc1\",\"namespace\":\"d\"},\"spec\":{"                         \
	"\"volumeAttributesClassName\":\"vac2\"}}"
#define PVC_VAC2_CUR1                                                                              \
	"{\"metadata\":{\"name\":\"pvc1\",\"namespace\":\"d\"},\"spec\":{"                         \
	"\"volumeAttributesClassName\":\"vac2\"},\"status\":{"                                     \
	"\"currentVolumeAttributesClassName\":"                                                    \
	"\"vac1\"}}"
#define PVC_VAC2_TARGET1                                                                           \
	"{\"metadata\":{\"name\":\"pvc1\",\"namespace\":\"d\"},\"spec\":{"                         \
	"\"volumeAttributesClassName\":\"vac2\"},\"status\":{\"modifyVolumeStatus\":{"             \
	"\"targetVolumeAttributesClassName\":\"vac1\",\"status\":\"InProgress\"}}}"

/* the handler: is vac1 queued by this update (new NULL: a delete)? */
static bool queues_vac1(const char *old, const char *new_, bool is_pvc)
{
	const char *on[3], *nn[3];
	cJSON *oj = cJSON_Parse(old), *nj = new_ ? cJSON_Parse(new_) : NULL;
	size_t no = vp_vac_names(oj, is_pvc, on), n = nj ? vp_vac_names(nj, is_pvc, nn) : 0;
	bool q = vp_vac_listed(on, no, "vac1") && !vp_vac_listed(nn, n, "vac1");
	cJSON_Delete(oj);
	cJSON_Delete(nj);
	return q;
}

/* isBeingUsed over the objects left in the cache: PVs first, then PVCs */
static bool vac1_used(const char *const *pvs, const char *const *pvcs)
{
	for (int pass = 0; pass < 2; pass++)
		for (const char *const *o = pass ? pvcs : pvs; o && *o; o++) {
			const char *names[3];
			cJSON *j = cJSON_Parse(*o);
			bool hit = vp_vac_listed(names, vp_vac_names(j, pass == 1, names), "vac1");
			cJSON_Delete(j);
			if (hit)
				return true;
		}
	return false;
}

static void test_vac_protection_cases(void **state)
{
	(void)state;
	const char *pv2[] = {PV2_VAC1, NULL}, *pv1[] = {PV_VAC1, NULL};
	const char *pvc1[] = {PVC_VAC1, NULL}, *pvc2[] = {PVC2_VAC1, NULL};
	const char *pvc_cur[] = {PVC_VAC2_CUR1, NULL}, *pvc_target[] = {PVC_VAC2_TARGET1, NULL};
	const char *names[3];
	cJSON *j;

	/* "deleted VAC with finalizer -> finalizer is removed" / referenced by a PV / by a PVC */
	assert_false(vac1_used(NULL, NULL));
	assert_true(vac1_used(pv1, NULL));
	assert_true(vac1_used(NULL, pvc1));
	/* "pv changes vac and deleted VAC with finalizer -> finalizer is removed" */
	assert_true(queues_vac1(PV_VAC1, PV_VAC2, false));
	assert_false(vac1_used((const char *[]){PV_VAC2, NULL}, NULL));
	/* "pv is deleted ..." -> removed; other pv / a pvc still holds it -> kept */
	assert_true(queues_vac1(PV_VAC1, NULL, false));
	assert_true(vac1_used(pv2, NULL));
	assert_true(vac1_used(NULL, pvc1));
	/* "pvc changes vac ..." -> removed; its status (current / target) still holds it -> kept */
	assert_true(queues_vac1(PVC_VAC1, PVC_VAC2, true));
	assert_false(vac1_used(NULL, (const char *[]){PVC_VAC2, NULL}));
	assert_false(queues_vac1(PVC_VAC1, PVC_VAC2_CUR1, true));
	assert_true(vac1_used(NULL, pvc_cur));
	assert_false(queues_vac1(PVC_VAC1, PVC_VAC2_TARGET1, true));
	assert_true(vac1_used(NULL, pvc_target));
	/* "pvc is deleted but other pvc / a pv still holds terminating vac" -> kept */
	assert_true(queues_vac1(PVC_VAC1, NULL, true));
	assert_true(vac1_used(NULL, pvc2));
	assert_true(vac1_used(pv1, NULL));
	/* an unchanged reference queues nothing */
	assert_false(queues_vac1(PVC_VAC1, PVC_VAC1, true));
	/* a PV's status is not read; duplicates are dropped, empty names skipped */
	j = cJSON_Parse("{\"spec\":{\"volumeAttributesClassName\":\"\"},\"status\":{"
	                "\"currentVolumeAttributesClassName\":\"a\"}}");
	assert_int_equal(vp_vac_names(j, false, names), 0);
	assert_int_equal(vp_vac_names(j, true, names), 1);
	cJSON_Delete(j);
	j = cJSON_Parse(PVC_VAC2_CUR1);
	cJSON_AddItemToObject(cJSON_GetObjectItem(j, "status"), "modifyVolumeStatus",
	                      cJSON_Parse("{\"targetVolumeAttributesClassName\":\"vac2\"}"));
	assert_int_equal(vp_vac_names(j, true, names), 2);
	cJSON_Delete(j);

	/* the class's own finalizer decisions */
	struct vp_object vac;
	const char *t =
	        "{\"metadata\":{\"name\":\"vac1\",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\","
	        "\"finalizers\":[\"kubernetes.io/vac-protection\"]},\"driverName\":\"d\"}";
	assert_int_equal(vp_object_parse(t, strlen(t), VP_VAC_FINALIZER, &vac), 0);
	assert_true(vp_is_deletion_candidate(&vac));
	vp_object_free(&vac);
	t = "{\"metadata\":{\"name\":\"vac1\"},\"driverName\":\"d\"}";
	assert_int_equal(vp_object_parse(t, strlen(t), VP_VAC_FINALIZER, &vac), 0);
	assert_true(vp_need_to_add_finalizer(&vac));
	vp_object_free(&vac);
}

/* ephemeral-volume-controller (upstream's controller_test.go TestSyncHandler: "create" builds
 * the claim from the template with the pod as controller owner; "wrong-PVC-owner" is an error
 * with VolumeIsForPod's message; the claim of another pod of the same name is not ours) */
static void test_ephemeral_controller(void **state)
{
	(void)state;
	const char *pod_js =
	        "{\"metadata\":{\"name\":\"my-pod\",\"namespace\":\"my-namespace\",\"uid\":"
	        "\"uidpod\"},"
	        "\"spec\":{\"volumes\":[{\"name\":\"my-volume\",\"ephemeral\":{"
	        "\"volumeClaimTemplate\":"
	        "{\"metadata\":{\"labels\":{\"a\":\"b\"},\"annotations\":{\"c\":\"d\"}},\"spec\":{"
	        "\"accessModes\":[\"ReadWriteOnce\"],\"resources\":{\"requests\":{\"storage\":"
	        "\"1Gi\"}}}}}}]}}";
	cJSON *pod = cJSON_Parse(pod_js), *b;
	const cJSON *vol = cJSON_GetArrayItem(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "spec"), "volumes"), 0);
	char *body = NULL, name[16], msg[256];
	struct vp_object pvc;

	assert_int_equal(ev_claim_name("my-pod", "my-volume", name, sizeof(name)), -ENAMETOOLONG);
	assert_int_equal(ev_claim_name("p", "v", name, sizeof(name)), 3);
	assert_string_equal(name, "p-v");

	assert_int_equal(ev_claim_body(pod, vol, &body), 0);
	b = cJSON_Parse(body);
	char *md = cJSON_PrintUnformatted(cJSON_GetObjectItem(b, "metadata"));
	assert_string_equal(md,
	                    "{\"name\":\"my-pod-my-volume\",\"ownerReferences\":[{\"apiVersion\":"
	                    "\"v1\",\"kind\":"
	                    "\"Pod\",\"name\":\"my-pod\",\"uid\":\"uidpod\",\"controller\":true,"
	                    "\"blockOwnerDeletion\":true}],\"annotations\":{\"c\":\"d\"},"
	                    "\"labels\":{\"a\":\"b\"}}");
	assert_string_equal(cJSON_GetObjectItem(b, "kind")->valuestring, "PersistentVolumeClaim");
	assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(b, "spec"), "accessModes"));
	free(md);
	cJSON_Delete(b);
	free(body);

	/* the claim exists and is the pod's */
	const char *own =
	        "{\"metadata\":{\"name\":\"my-pod-my-volume\",\"namespace\":\"my-namespace\","
	        "\"ownerReferences\":[{\"kind\":\"Pod\",\"name\":\"my-pod\",\"uid\":"
	        "\"uidpod\",\"controller\":true}]}}";
	assert_int_equal(vp_object_parse(own, strlen(own), VP_PVC_FINALIZER, &pvc), 0);
	assert_int_equal(ev_volume_is_for_pod(pod, &pvc, msg, sizeof(msg)), 0);
	vp_object_free(&pvc);
	/* "wrong-PVC-owner": owned by another uid, or not as controller */
	const char *other[] = {
	        "{\"metadata\":{\"name\":\"my-pod-my-volume\",\"namespace\":\"my-namespace\","
	        "\"ownerReferences\":[{\"kind\":\"Pod\",\"name\":\"my-pod\",\"uid\":\"older\","
	        "\"controller\":true}]}}",
	        "{\"metadata\":{\"name\":\"my-pod-my-volume\",\"namespace\":\"my-namespace\","
	        "\"ownerReferences\":[{\"kind\":\"Pod\",\"name\":\"my-pod\",\"uid\":\"uidpod\"}]}}",
	        "{\"metadata\":{\"name\":\"my-pod-my-volume\",\"namespace\":\"my-namespace\"}}",
	};
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(
		        vp_object_parse(other[i], strlen(other[i]), VP_PVC_FINALIZER, &pvc), 0);
		assert_int_equal(ev_volume_is_for_pod(pod, &pvc, msg, sizeof(msg)), -EEXIST);
		assert_string_equal(msg,
		                    "PVC my-namespace/my-pod-my-volume was not created for pod "
		                    "my-namespace/my-pod (pod is not owner)");
		vp_object_free(&pvc);
	}
	/* no template / no uid: refused */
	cJSON *bad = cJSON_Parse("{\"name\":\"v\",\"ephemeral\":{}}");
	assert_int_equal(ev_claim_body(pod, bad, &body), -EINVAL);
	cJSON_Delete(bad);
	cJSON_Delete(pod);
}

/* the pod-event filter of the PVC protection controller's handler */
static void test_pod_usage_changed(void **state)
{
	(void)state;
	struct kube_pod a = {.meta = {.name = "p", .uid = "u1"}, .phase = KUBE_POD_PENDING};
	struct kube_pod b = a;

	assert_false(vp_pod_usage_changed(&a, &b));
	b.ready = true; /* status-only */
	b.max_restarts = 3;
	assert_false(vp_pod_usage_changed(&a, &b));
	b.node_name = "node1"; /* scheduled */
	assert_true(vp_pod_usage_changed(&a, &b));
	b = a;
	b.node_name = ""; /* "" and absent are the same */
	assert_false(vp_pod_usage_changed(&a, &b));
	b = a;
	b.phase = KUBE_POD_SUCCEEDED;
	assert_true(vp_pod_usage_changed(&a, &b));
	b = a;
	b.meta.uid = "u2"; /* deleted and re-created under the same name */
	assert_true(vp_pod_usage_changed(&a, &b));
	b = a;
	b.meta.deletion_timestamp = 1;
	assert_true(vp_pod_usage_changed(&a, &b));
	b = a;
	b.meta.has_deletion_grace_period_seconds = true; /* grace 0: shut down */
	assert_true(vp_pod_usage_changed(&a, &b));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_pvc_protection_cases),
	        cmocka_unit_test(test_unused_condition),
	        cmocka_unit_test(test_ephemeral),
	        cmocka_unit_test(test_pv_protection_cases),
	        cmocka_unit_test(test_bodies),
	        cmocka_unit_test(test_filters),
	        cmocka_unit_test(test_vac_protection_cases),
	        cmocka_unit_test(test_ephemeral_controller),
	        cmocka_unit_test(test_pod_usage_changed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
