/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The namespace deleter's pure parts (workers/namespace/nsdel.h), with the facts of upstream's
 * deletion/status_condition_utils_test.go (TestUpdateConditions, TestProcessContentTotals) and
 * namespaced_resources_deleter_test.go (TestFinalized, TestFinalizeNamespaceFunc, the
 * estimate rules of estimateGracefulTermination) at v1.37, plus the aggregated discovery
 * selection of ServerPreferredNamespacedResources.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "workers/namespace/nsdel.h"

static cJSON *parse(const char *s)
{
	cJSON *j = cJSON_Parse(s);
	assert_non_null(j);
	return j;
}

static const cJSON *cond(const cJSON *ns, const char *type)
{
	const cJSON *c;
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(cJSON_GetObjectItem(ns, "status"), "conditions"))
	{
		if (!strcmp(cJSON_GetObjectItem(c, "type")->valuestring, type))
			return c;
	}
	return NULL;
}

static const char *field(const cJSON *c, const char *k)
{
	const cJSON *v = cJSON_GetObjectItem(c, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void test_conditions_success(void **state)
{
	struct ns_conditions u = {0};
	(void)state;
	/* "leave unknown": an unknown condition stays first, the five are added as successes */
	cJSON *ns =
	        parse("{\"status\":{\"conditions\":[{\"type\":\"unknown\",\"status\":\"True\"}]}}");
	assert_int_equal(ns_conditions_apply(&u, ns, "2026-01-01T00:00:00Z"), 1);
	const cJSON *cs = cJSON_GetObjectItem(cJSON_GetObjectItem(ns, "status"), "conditions");
	assert_int_equal(cJSON_GetArraySize(cs), 6);
	assert_string_equal(field(cJSON_GetArrayItem(cs, 0), "type"), "unknown");
	const cJSON *c = cond(ns, "NamespaceDeletionContentFailure");
	assert_string_equal(field(c, "status"), "False");
	assert_string_equal(field(c, "reason"), "ContentDeleted");
	assert_string_equal(field(c, "message"),
	                    "All content successfully deleted, may be waiting on finalization");
	c = cond(ns, "NamespaceDeletionGroupVersionParsingFailure");
	assert_string_equal(field(c, "reason"), "ParsedGroupVersions");
	assert_string_equal(field(c, "message"), "All legacy kube types successfully parsed");
	assert_string_equal(field(cond(ns, "NamespaceDeletionDiscoveryFailure"), "message"),
	                    "All resources successfully discovered");
	assert_string_equal(field(cond(ns, "NamespaceContentRemaining"), "reason"),
	                    "ContentRemoved");
	assert_string_equal(field(cond(ns, "NamespaceFinalizersRemaining"), "message"),
	                    "All content-preserving finalizers finished");
	/* the same again: nothing changed, nothing to write */
	assert_int_equal(ns_conditions_apply(&u, ns, "2026-01-01T00:00:09Z"), 0);
	ns_conditions_clear(&u);
	cJSON_Delete(ns);
}

static void test_conditions_failure(void **state)
{
	struct ns_conditions u = {0};
	(void)state;
	/* "replace with success" and "overwrite with failure"; the order of existing ones stays */
	cJSON *ns = parse("{\"status\":{\"conditions\":["
	                  "{\"type\":\"NamespaceDeletionGroupVersionParsingFailure\",\"status\":"
	                  "\"False\",\"lastTransitionTime\":\"2020-01-01T00:00:00Z\"},"
	                  "{\"type\":\"NamespaceDeletionDiscoveryFailure\",\"status\":\"True\","
	                  "\"lastTransitionTime\":\"2020-01-01T00:00:00Z\"}]}}");
	assert_int_equal(ns_conditions_content_err(&u, "b failed"), 0);
	assert_int_equal(ns_conditions_content_err(&u, "a failed"), 0);
	assert_int_equal(ns_conditions_apply(&u, ns, "2026-01-01T00:00:00Z"), 1);
	const cJSON *cs = cJSON_GetObjectItem(cJSON_GetObjectItem(ns, "status"), "conditions");
	assert_string_equal(field(cJSON_GetArrayItem(cs, 0), "type"),
	                    "NamespaceDeletionGroupVersionParsingFailure");
	const cJSON *c = cond(ns, "NamespaceDeletionDiscoveryFailure");
	assert_string_equal(field(c, "status"), "False");
	assert_string_equal(field(c, "lastTransitionTime"), "2026-01-01T00:00:00Z");
	/* GV parsing kept its status: its transition time stays */
	assert_string_equal(field(cond(ns, "NamespaceDeletionGroupVersionParsingFailure"),
	                          "lastTransitionTime"),
	                    "2020-01-01T00:00:00Z");
	c = cond(ns, "NamespaceDeletionContentFailure");
	assert_string_equal(field(c, "status"), "True");
	assert_string_equal(field(c, "reason"), "ContentDeletionFailed");
	assert_string_equal(field(c, "message"),
	                    "Failed to delete all resource types, 2 remaining: a failed, b failed");
	ns_conditions_clear(&u);

	assert_int_equal(ns_conditions_discovery(&u,
	                                         "unable to retrieve the complete list of "
	                                         "server APIs: x/v1: stale GroupVersion "
	                                         "discovery: x/v1",
	                                         1),
	                 0);
	assert_int_equal(ns_conditions_apply(&u, ns, "2026-01-01T00:00:05Z"), 1);
	c = cond(ns, "NamespaceDeletionDiscoveryFailure");
	assert_string_equal(field(c, "status"), "True");
	assert_string_equal(field(c, "reason"), "DiscoveryFailed");
	assert_string_equal(field(c, "message"),
	                    "Discovery failed for some groups, 1 failing: unable to retrieve the "
	                    "complete list of server APIs: x/v1: stale GroupVersion discovery: "
	                    "x/v1");
	assert_string_equal(field(cond(ns, "NamespaceDeletionContentFailure"), "status"), "False");
	ns_conditions_clear(&u);
	cJSON_Delete(ns);
}

static void test_content_totals(void **state)
{
	struct ns_conditions u = {0};
	struct ns_counts gvrs = {0}, fins = {0};
	(void)state;
	ns_counts_add(&gvrs, "deployments.apps.k8s.io", 5);
	ns_counts_add(&gvrs, "daemonsets.apps.k8s.io", 5);
	ns_counts_add(&fins, "service-catalog", 6);
	ns_counts_add(&fins, "kubedb", 5);
	assert_int_equal(ns_conditions_totals(&u, &gvrs, &fins), 0);
	cJSON *ns = parse("{}");
	assert_int_equal(ns_conditions_apply(&u, ns, "2026-01-01T00:00:00Z"), 1);
	const cJSON *c = cond(ns, "NamespaceContentRemaining");
	assert_string_equal(field(c, "reason"), "SomeResourcesRemain");
	assert_string_equal(field(c, "message"),
	                    "Some resources are remaining: daemonsets.apps.k8s.io has 5 resource "
	                    "instances, deployments.apps.k8s.io has 5 resource instances");
	c = cond(ns, "NamespaceFinalizersRemaining");
	assert_string_equal(field(c, "reason"), "SomeFinalizersRemain");
	assert_string_equal(field(c, "message"),
	                    "Some content in the namespace has finalizers remaining: kubedb in 5 "
	                    "resource instances, service-catalog in 6 resource instances");
	cJSON_Delete(ns);
	ns_conditions_clear(&u);
	ns_counts_clear(&gvrs);
	ns_counts_clear(&fins);
	/* "nothing": no failure conditions */
	assert_int_equal(ns_conditions_totals(&u, &gvrs, &fins), 0);
	assert_false(u.set[NS_COND_REMAINING] || u.set[NS_COND_FINALIZERS]);
}

static void test_finalize(void **state)
{
	(void)state;
	/* TestFinalized */
	cJSON *a = parse("{\"spec\":{\"finalizers\":[\"kubernetes\"]}}");
	cJSON *b = parse("{\"spec\":{}}");
	assert_false(ns_finalized(a));
	assert_true(ns_finalized(b));
	cJSON_Delete(b);
	cJSON_Delete(a);
	/* TestFinalizeNamespaceFunc: {kubernetes, other} -> {other}; sorted, unique */
	cJSON *ns = parse("{\"metadata\":{\"name\":\"test\",\"resourceVersion\":\"1\"},"
	                  "\"spec\":{\"finalizers\":[\"z\",\"kubernetes\",\"other\",\"z\"]}}");
	assert_int_equal(ns_finalize(ns), 0);
	char *s = cJSON_PrintUnformatted(ns);
	assert_string_equal(s, "{\"metadata\":{\"name\":\"test\",\"resourceVersion\":\"1\"},"
	                       "\"spec\":{\"finalizers\":[\"other\",\"z\"]}}");
	free(s);
	cJSON_Delete(ns);
}

static void test_terminating(void **state)
{
	(void)state;
	cJSON *ns = parse("{\"metadata\":{\"name\":\"a\",\"deletionTimestamp\":"
	                  "\"2026-01-01T00:00:10Z\"},\"status\":{\"phase\":\"Active\"}}");
	assert_int_equal(ns_deletion_time(ns), 1767225610);
	assert_int_equal(ns_mark_terminating(ns), 1);
	assert_string_equal(field(cJSON_GetObjectItem(ns, "status"), "phase"), "Terminating");
	assert_int_equal(ns_mark_terminating(ns), 0);
	cJSON_Delete(ns);
	ns = parse("{\"metadata\":{\"name\":\"a\"},\"status\":{\"phase\":\"Active\"}}");
	assert_int_equal(ns_deletion_time(ns), 0);
	assert_int_equal(ns_mark_terminating(ns), 0); /* not deleting: left Active */
	cJSON_Delete(ns);
}

static void test_estimate(void **state)
{
	int64_t e = -1;
	const char *pods = "{\"items\":["
	                   "{\"spec\":{\"terminationGracePeriodSeconds\":30},\"status\":{\"phase\":"
	                   "\"Running\"}},"
	                   "{\"spec\":{\"terminationGracePeriodSeconds\":90},\"status\":{\"phase\":"
	                   "\"Succeeded\"}},"
	                   "{\"spec\":{\"terminationGracePeriodSeconds\":60},\"status\":{\"phase\":"
	                   "\"Failed\"}},"
	                   "{\"spec\":{},\"status\":{\"phase\":\"Pending\"}}]}";
	(void)state;
	/* terminal pods do not count; the largest grace of the others */
	assert_int_equal(ns_pods_estimate(pods, strlen(pods), 1000, 1010, &e), 0);
	assert_int_equal(e, 30);
	/* deleted 30 s or more ago: nothing left to wait */
	assert_int_equal(ns_pods_estimate(pods, strlen(pods), 1000, 1030, &e), 0);
	assert_int_equal(e, 0);
	assert_int_equal(ns_pods_estimate("{\"items\":[]}", 12, 1000, 1000, &e), 0);
	assert_int_equal(e, 0);
	assert_int_equal(ns_pods_estimate("x", 1, 0, 0, &e), -EBADMSG);
	/* an empty list from the apiserver: items null (a nil slice) */
	assert_int_equal(ns_pods_estimate("{\"kind\":\"PodList\",\"items\":null}", 33, 0, 0, &e),
	                 0);
	assert_int_equal(e, 0);
	assert_int_equal(ns_pods_estimate("{\"items\":3}", 11, 0, 0, &e), -EBADMSG);
	/* the requeue: estimate/2 + 1 s */
	assert_int_equal(ns_requeue_us(30), 16000000);
	assert_int_equal(ns_requeue_us(15), 8000000);
}

static void test_remaining(void **state)
{
	struct ns_counts fin = {0};
	int64_t n = -1;
	const char *l = "{\"items\":[{\"metadata\":{\"name\":\"a\",\"finalizers\":[\"x\",\"y\"]}},"
	                "{\"metadata\":{\"name\":\"b\",\"finalizers\":[\"x\"]}},"
	                "{\"metadata\":{\"name\":\"c\"}}]}";
	(void)state;
	assert_int_equal(ns_list_remaining(l, strlen(l), &n, &fin), 0);
	assert_int_equal(n, 3);
	assert_int_equal(fin.n, 2);
	assert_string_equal(fin.v[0].name, "x");
	assert_int_equal(fin.v[0].n, 2);
	assert_int_equal(fin.v[1].n, 1);
	ns_counts_clear(&fin);
	/* what the apiserver sends for an empty PartialObjectMetadataList */
	const char *empty =
	        "{\"kind\":\"PartialObjectMetadataList\",\"apiVersion\":\"meta.k8s.io/v1\","
	        "\"metadata\":{\"resourceVersion\":\"7\"},\"items\":null}";
	assert_int_equal(ns_list_remaining(empty, strlen(empty), &n, &fin), 0);
	assert_int_equal(n, 0);
	assert_int_equal(fin.n, 0);
	assert_int_equal(ns_list_remaining("{\"metadata\":{}}", 15, &n, &fin), 0);
	assert_int_equal(n, 0);
	assert_int_equal(ns_list_remaining("[]", 2, &n, &fin), -EBADMSG);
}

static const char core[] =
        "{\"kind\":\"APIGroupDiscoveryList\",\"items\":[{\"metadata\":{},\"versions\":[{"
        "\"version\":\"v1\",\"resources\":["
        "{\"resource\":\"pods\",\"scope\":\"Namespaced\",\"verbs\":[\"create\",\"delete\","
        "\"deletecollection\",\"get\",\"list\"],\"subresources\":[{\"subresource\":\"status\"}]},"
        "{\"resource\":\"namespaces\",\"scope\":\"Cluster\",\"verbs\":[\"delete\",\"list\"]},"
        "{\"resource\":\"bindings\",\"scope\":\"Namespaced\",\"verbs\":[\"create\"]},"
        "{\"resource\":\"services\",\"scope\":\"Namespaced\",\"verbs\":[\"delete\",\"list\"]}"
        "]}]}]}";
static const char apis[] =
        "{\"kind\":\"APIGroupDiscoveryList\",\"items\":["
        "{\"metadata\":{\"name\":\"autoscaling\"},\"versions\":["
        "{\"version\":\"v2\",\"resources\":[{\"resource\":\"horizontalpodautoscalers\","
        "\"scope\":\"Namespaced\",\"verbs\":[\"delete\",\"deletecollection\",\"list\"]}]},"
        "{\"version\":\"v1\",\"resources\":[{\"resource\":\"horizontalpodautoscalers\","
        "\"scope\":\"Namespaced\",\"verbs\":[\"delete\",\"list\"]},"
        "{\"resource\":\"olds\",\"scope\":\"Namespaced\",\"verbs\":[\"delete\"]}]}]},"
        "{\"metadata\":{\"name\":\"metrics.k8s.io\"},\"versions\":["
        "{\"version\":\"v1beta1\",\"freshness\":\"Stale\"}]}]}";

static void test_discovery(void **state)
{
	struct ns_discovery d = {0};
	char *m = NULL;
	(void)state;
	assert_int_equal(ns_discovery_add_v2(&d, core, strlen(core)), 0);
	assert_int_equal(ns_discovery_add_v2(&d, apis, strlen(apis)), 0);
	/* pods and services (namespaced, deletable), not namespaces or bindings */
	assert_int_equal(d.n, 4);
	assert_string_equal(d.v[0].resource, "pods");
	assert_true(d.v[0].deletecollection && d.v[0].list);
	assert_string_equal(d.v[1].resource, "services");
	assert_false(d.v[1].deletecollection);
	/* the preferred (first) version wins; a resource only in another version is kept */
	assert_string_equal(d.v[2].resource, "horizontalpodautoscalers");
	assert_string_equal(d.v[2].version, "v2");
	assert_true(d.v[2].deletecollection);
	assert_string_equal(d.v[3].resource, "olds");
	assert_string_equal(d.v[3].version, "v1");
	assert_false(d.v[3].list);
	/* the stale version is a failed group-version */
	assert_int_equal(d.n_failed, 1);
	assert_int_equal(ns_discovery_error(&d, &m), 0);
	assert_string_equal(m, "unable to retrieve the complete list of server APIs: "
	                       "metrics.k8s.io/v1beta1: stale GroupVersion discovery: "
	                       "metrics.k8s.io/v1beta1");
	free(m);
	ns_discovery_clear(&d);
	assert_int_equal(ns_discovery_add_v2(&d, "{}", 2), -EBADMSG);
	assert_int_equal(ns_discovery_error(&d, &m), 0);
	assert_null(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_conditions_success),
	        cmocka_unit_test(test_conditions_failure),
	        cmocka_unit_test(test_content_totals),
	        cmocka_unit_test(test_finalize),
	        cmocka_unit_test(test_terminating),
	        cmocka_unit_test(test_estimate),
	        cmocka_unit_test(test_remaining),
	        cmocka_unit_test(test_discovery),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
