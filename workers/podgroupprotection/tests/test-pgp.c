/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The PodGroup protection controller's decisions (workers/podgroupprotection/pgp.h), with the
 * cases of upstream's podgroup_protection_controller_test.go (v1.37.2): TestIsPodTerminated,
 * TestHandlePodChange (as the pod-event decision; which PodGroup a pod names is judged by the
 * sync, see pgp.h), TestPodGroupProtectionController (as processPodGroup's decision on the
 * PodGroup and the pods of its namespace), TestActivePodSchedulingGroupIndexer, TestHasActivePods
 * and TestHandlePodGroupUpdate; plus the Update body. TestGetPod (tombstones of other types) has
 * no counterpart: the dispatcher hands a pod's tombstone as the pod's last cached state.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workers/podgroupprotection/pgp.h"

#define NS  "default"
#define PG  "my-podgroup"
#define FIN "\"" PGP_FINALIZER "\""

/* ---- fixtures, as upstream's helpers ---------------------------------------------------------
 * podForPG(name, pg): scheduled on node-1, Running, spec.schedulingGroup.podGroupName = pg. */
static char *pod_json(const char *name, const char *pg, const char *phase, bool scheduled)
{
	char *s = NULL;
	char spec[200];

	snprintf(spec, sizeof(spec), "%s%s%s%s%s", scheduled ? "\"nodeName\":\"node-1\"" : "",
	         scheduled && pg ? "," : "", pg ? "\"schedulingGroup\":{\"podGroupName\":\"" : "",
	         pg ? pg : "", pg ? "\"}" : "");
	assert_true(asprintf(&s,
	                     "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"" NS
	                     "\",\"uid\":\"%s-uid\"},\"spec\":{%s},\"status\":{\"phase\":\"%s\"}}",
	                     name, name, spec, phase) > 0);
	return s;
}

/* A PodList of the given pods' JSON (each freed). */
static cJSON *pod_list(int n, ...)
{
	va_list ap;
	cJSON *list = cJSON_CreateObject(), *items = cJSON_AddArrayToObject(list, "items");

	va_start(ap, n);
	for (int i = 0; i < n; i++) {
		char *p = va_arg(ap, char *);
		cJSON *o = cJSON_Parse(p);
		assert_non_null(o);
		cJSON_AddItemToArray(items, o);
		free(p);
	}
	va_end(ap);
	return list;
}

static void group(struct pgp_group *g, bool finalizer, bool deleted)
{
	char js[512];
	snprintf(js, sizeof(js),
	         "{\"apiVersion\":\"scheduling.k8s.io/v1beta1\",\"kind\":\"PodGroup\","
	         "\"metadata\":{\"name\":\"" PG "\",\"namespace\":\"" NS "\",\"uid\":\"pg-uid-1\","
	         "\"resourceVersion\":\"7\"%s%s},\"spec\":{\"schedulingPolicy\":{\"basic\":{}}}}",
	         finalizer ? ",\"finalizers\":[" FIN "]" : "",
	         deleted ? ",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"" : "");
	assert_int_equal(pgp_group_parse(js, strlen(js), g), 0);
}

/* ---- TestIsPodTerminated ----------------------------------------------------------------------
 */
static void test_is_pod_terminated(void **state)
{
	(void)state;
	assert_false(pgp_phase_terminated(KUBE_POD_RUNNING));
	assert_false(pgp_phase_terminated(KUBE_POD_PENDING));
	assert_true(pgp_phase_terminated(KUBE_POD_SUCCEEDED));
	assert_true(pgp_phase_terminated(KUBE_POD_FAILED));
	assert_false(pgp_phase_terminated(KUBE_POD_PHASE_UNSET));
	assert_false(pgp_phase_terminated(KUBE_POD_UNKNOWN));

	const char *phases[] = {"Running", "Pending", "Succeeded", "Failed"};
	for (int i = 0; i < 4; i++) {
		char *p = pod_json("p", PG, phases[i], true);
		cJSON *o = cJSON_Parse(p);
		assert_int_equal(pgp_pod_terminated(o), i >= 2);
		cJSON_Delete(o);
		free(p);
	}
}

/* ---- TestHandlePodChange ----------------------------------------------------------------------
 */
static void test_handle_pod_change(void **state)
{
	(void)state;
	const struct pgp_pod_state running = {"pod-1-uid", KUBE_POD_RUNNING};
	const struct pgp_pod_state pending = {"pod-1-uid", KUBE_POD_PENDING};
	const struct pgp_pod_state succeeded = {"pod-1-uid", KUBE_POD_SUCCEEDED};
	const struct pgp_pod_state old_uid = {"old-uid", KUBE_POD_RUNNING};
	const struct pgp_pod_state new_done = {"new-uid", KUBE_POD_SUCCEEDED};
	const struct pgp_pod_state new_failed = {"new-uid", KUBE_POD_FAILED};
	const struct pgp_pod_state new_pending = {"new-uid", KUBE_POD_PENDING};

	/* deleted pod (with a schedulingGroup) enqueues its group */
	assert_int_equal(pgp_pod_event(&running, NULL), PGP_LOOK_OLD);
	/* terminated pod enqueues */
	assert_int_equal(pgp_pod_event(&running, &succeeded), PGP_LOOK_NEW);
	/* unscheduled new pod, scheduled running new pod: nothing */
	assert_int_equal(pgp_pod_event(NULL, &pending), 0);
	assert_int_equal(pgp_pod_event(NULL, &running), 0);
	/* a pod added already terminated */
	assert_int_equal(pgp_pod_event(NULL, &succeeded), PGP_LOOK_NEW);
	/* a status update of a running pod: nothing */
	assert_int_equal(pgp_pod_event(&running, &running), 0);
	/* UID mismatch with a terminated new pod: both (upstream dedups the same group, and queues
	 * two groups when they differ; here one walk of the namespace covers either) */
	assert_int_equal(pgp_pod_event(&old_uid, &new_done), PGP_LOOK_NEW | PGP_LOOK_OLD);
	assert_int_equal(pgp_pod_event(&old_uid, &new_failed), PGP_LOOK_NEW | PGP_LOOK_OLD);
	/* UID mismatch with a non-terminated new pod: only the old pod's group */
	assert_int_equal(pgp_pod_event(&old_uid, &new_pending), PGP_LOOK_OLD);
	/* "deleted pod without schedulingGroup / with nil podGroupName does not enqueue": the
	 * record holds no group, so the namespace's deletion candidates are looked at, and such a
	 * pod never keeps one (pgp_pod_active_for, below) */
	assert_int_equal(pgp_pod_event(NULL, NULL), 0);
}

/* ---- TestPodGroupProtectionController (processPodGroup's outcome) -----------------------------
 */
static enum pgp_action decide(bool finalizer, bool deleted, cJSON *pods)
{
	struct pgp_group g;
	enum pgp_action a;

	group(&g, finalizer, deleted);
	a = pgp_decide(&g, pods);
	pgp_group_free(&g);
	cJSON_Delete(pods);
	return a;
}

static void test_controller_cases(void **state)
{
	(void)state;
	/* new PodGroup without finalizer: no action (the admission plugin adds it) */
	assert_int_equal(decide(false, false, pod_list(0)), PGP_NOTHING);
	/* ... with an active pod: still no action (the controller never adds it) */
	assert_int_equal(decide(false, false, pod_list(1, pod_json("pod-1", PG, "Running", true))),
	                 PGP_NOTHING);
	/* with finalizer, not being deleted: no action */
	assert_int_equal(decide(true, false, pod_list(0)), PGP_NOTHING);
	/* deleted with finalizer, no active pods: removed */
	assert_int_equal(decide(true, true, pod_list(0)), PGP_REMOVE);
	/* deleted with finalizer, an active pod: kept */
	assert_int_equal(decide(true, true, pod_list(1, pod_json("pod-1", PG, "Running", true))),
	                 PGP_KEEP);
	/* deleted with finalizer, only terminated pods: removed */
	assert_int_equal(decide(true, true, pod_list(1, pod_json("pod-1", PG, "Succeeded", true))),
	                 PGP_REMOVE);
	/* mix of active and terminated pods: kept */
	assert_int_equal(decide(true, true,
	                        pod_list(2, pod_json("pod-active", PG, "Running", true),
	                                 pod_json("pod-done", PG, "Succeeded", true))),
	                 PGP_KEEP);
	/* without finalizer, already deleted: not a deletion candidate (and never given one) */
	assert_int_equal(decide(false, true, pod_list(0)), PGP_NOTHING);
	assert_int_equal(decide(false, true, pod_list(1, pod_json("pod-1", PG, "Running", true))),
	                 PGP_NOTHING);
	/* the last active pod deleted: the list no longer holds it, removed */
	assert_int_equal(decide(true, true, pod_list(0)), PGP_REMOVE);
	/* the last active pod terminated, Succeeded or Failed: removed */
	assert_int_equal(decide(true, true, pod_list(1, pod_json("pod-1", PG, "Succeeded", true))),
	                 PGP_REMOVE);
	assert_int_equal(decide(true, true, pod_list(1, pod_json("pod-1", PG, "Failed", true))),
	                 PGP_REMOVE);
	/* a new unscheduled pod, PodGroup without finalizer: no action */
	assert_int_equal(decide(false, false, pod_list(1, pod_json("pod-1", PG, "Pending", false))),
	                 PGP_NOTHING);
	/* a pod without schedulingGroup: the finalizer stays on a live PodGroup, and does not keep
	 * a deleted one */
	assert_int_equal(decide(true, false, pod_list(1, pod_json("pod-1", NULL, "Running", true))),
	                 PGP_NOTHING);
	assert_int_equal(decide(true, true, pod_list(1, pod_json("pod-1", NULL, "Running", true))),
	                 PGP_REMOVE);
	/* an unscheduled (Pending) pod of the group is active too: kept */
	assert_int_equal(decide(true, true, pod_list(1, pod_json("pod-1", PG, "Pending", false))),
	                 PGP_KEEP);
	/* a pod of another group does not keep it */
	assert_int_equal(
	        decide(true, true, pod_list(1, pod_json("pod-1", "other-pg", "Running", true))),
	        PGP_REMOVE);
	/* "terminated pod references a non-existent PodGroup": the sync finds no PodGroup in the
	 * cache and is done (plugin.c); nothing to decide here */
}

/* ---- TestActivePodSchedulingGroupIndexer ------------------------------------------------------
 */
static void test_active_index(void **state)
{
	(void)state;
	char *nil_group = strdup("{\"metadata\":{\"name\":\"pod-3\",\"namespace\":\"" NS "\"},"
	                         "\"spec\":{\"schedulingGroup\":{}}}");
	char *null_name = strdup("{\"metadata\":{\"name\":\"pod-5\",\"namespace\":\"" NS "\"},"
	                         "\"spec\":{\"schedulingGroup\":{\"podGroupName\":null}}}");
	cJSON *pods = pod_list(5, pod_json("pod-1", "pg-a", "Running", true),
	                       pod_json("pod-2", NULL, "Running", true), nil_group,
	                       pod_json("pod-4", "pg-a", "Succeeded", true), null_name);
	const cJSON *p = pgp_first_active_pod(pods, NS, "pg-a");
	const cJSON *it;
	int n = 0;

	assert_non_null(p);
	assert_string_equal(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(p, "metadata"), "name")->valuestring,
	        "pod-1");
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(pods, "items")) n +=
	        pgp_pod_active_for(it, NS, "pg-a");
	assert_int_equal(n, 1); /* only pod-1: pod-4 is terminated, the others name no group */
	assert_null(pgp_first_active_pod(pods, NS, "nonexistent"));
	/* the index key carries the namespace */
	assert_null(pgp_first_active_pod(pods, "other-ns", "pg-a"));
	assert_null(pgp_pod_group_name(cJSON_GetArrayItem(cJSON_GetObjectItem(pods, "items"), 2)));
	assert_null(pgp_pod_group_name(cJSON_GetArrayItem(cJSON_GetObjectItem(pods, "items"), 4)));
	assert_null(pgp_first_active_pod(NULL, NS, "pg-a"));
	cJSON_Delete(pods);
}

/* ---- TestHasActivePods ------------------------------------------------------------------------
 */
static void test_has_active_pods(void **state)
{
	(void)state;
	struct {
		cJSON *pods;
		bool want;
	} cases[] = {
	        {pod_list(0), false},
	        {pod_list(1, pod_json("pod-1", PG, "Running", true)), true},
	        {pod_list(2, pod_json("pod-1", PG, "Succeeded", true),
	                  pod_json("pod-2", PG, "Failed", true)),
	         false},
	        {pod_list(2, pod_json("pod-active", PG, "Running", true),
	                  pod_json("pod-done", PG, "Succeeded", true)),
	         true},
	        {pod_list(1, pod_json("pod-1", "other-pg", "Running", true)), false},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(pgp_first_active_pod(cases[i].pods, NS, PG) != NULL,
		                 cases[i].want);
		cJSON_Delete(cases[i].pods);
	}
}

/* ---- TestHandlePodGroupUpdate -----------------------------------------------------------------
 */
static void test_handle_podgroup_update(void **state)
{
	(void)state;
	struct pgp_group g;

	group(&g, false, false); /* without finalizer, not deleting: not queued */
	assert_false(pgp_is_deletion_candidate(&g));
	pgp_group_free(&g);
	group(&g, true, true); /* a deletion candidate: queued */
	assert_true(pgp_is_deletion_candidate(&g));
	assert_string_equal(g.ns, NS);
	assert_string_equal(g.name, PG);
	assert_string_equal(g.uid, "pg-uid-1");
	pgp_group_free(&g);
	group(&g, true, false); /* has the finalizer, not deleting: not queued */
	assert_false(pgp_is_deletion_candidate(&g));
	pgp_group_free(&g);
	/* a null deletionTimestamp is not a deletion */
	const char *js = "{\"metadata\":{\"name\":\"a\",\"deletionTimestamp\":null,"
	                 "\"finalizers\":[" FIN "]}}";
	assert_int_equal(pgp_group_parse(js, strlen(js), &g), 0);
	assert_false(g.deleting);
	assert_true(g.has_finalizer);
	pgp_group_free(&g);
}

static void test_parse_errors(void **state)
{
	(void)state;
	struct pgp_group g;
	assert_int_equal(pgp_group_parse(NULL, 0, &g), -EINVAL);
	assert_int_equal(pgp_group_parse("[1]", 3, &g), -EINVAL);
	assert_int_equal(pgp_group_parse("{\"metadata\":{}}", 15, &g), -EINVAL);
	assert_int_equal(pgp_group_parse("{nope", 5, &g), -EINVAL);
	assert_null(g.json);
}

/* ---- removeFinalizer's Update body ------------------------------------------------------------
 */
static void test_finalizer_remove(void **state)
{
	(void)state;
	struct pgp_group g, back;
	char *body = NULL;
	const char *js =
	        "{\"apiVersion\":\"scheduling.k8s.io/v1beta1\",\"kind\":\"PodGroup\","
	        "\"metadata\":{\"name\":\"" PG "\",\"namespace\":\"" NS "\","
	        "\"resourceVersion\":\"42\",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\","
	        "\"finalizers\":[\"a/b\"," FIN ",\"c/d\"," FIN "]},"
	        "\"spec\":{\"schedulingPolicy\":{\"gang\":{\"minCount\":2}}}}";

	assert_int_equal(pgp_group_parse(js, strlen(js), &g), 0);
	assert_true(pgp_is_deletion_candidate(&g));
	assert_int_equal(pgp_finalizer_remove(&g, &body), 0);
	assert_non_null(body);
	/* every copy gone (slice.RemoveString), the others kept in order, the rest untouched */
	assert_non_null(strstr(body, "\"finalizers\":[\"a/b\",\"c/d\"]"));
	assert_non_null(strstr(body, "\"resourceVersion\":\"42\""));
	assert_non_null(strstr(body, "\"minCount\":2"));
	assert_int_equal(pgp_group_parse(body, strlen(body), &back), 0);
	assert_false(back.has_finalizer);
	assert_true(back.deleting);
	pgp_group_free(&back);
	free(body);
	/* the parsed group is left as it was */
	assert_true(g.has_finalizer);
	pgp_group_free(&g);

	/* only the protection finalizer: an empty list */
	group(&g, true, true);
	assert_int_equal(pgp_finalizer_remove(&g, &body), 0);
	assert_non_null(strstr(body, "\"finalizers\":[]"));
	free(body);
	pgp_group_free(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_is_pod_terminated),
	        cmocka_unit_test(test_handle_pod_change),
	        cmocka_unit_test(test_controller_cases),
	        cmocka_unit_test(test_active_index),
	        cmocka_unit_test(test_has_active_pods),
	        cmocka_unit_test(test_handle_podgroup_update),
	        cmocka_unit_test(test_parse_errors),
	        cmocka_unit_test(test_finalizer_remove),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
