/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/resourcequota/tests/test-usage.c: usage.c against upstream's tests:
 * - resource_quota_controller_test.go TestSyncResourceQuota (every case: best-effort scope,
 *   PriorityClass Exists/In/NotIn/DoesNotExist, pods, quota-spec-hard-updated, quota-unchanged,
 *   the calculation errors), with the status it writes compared as text (String());
 * - pods_test.go TestPodEvaluatorUsage (init containers, hugepages, extended resources, init
 *   maximums over the containers' sum, deletion grace, overhead, pod-level resources),
 *   TestPodEvaluatorMatchingScopes and TestPodEvaluatorUsageResourceResize (status resources);
 * - services_test.go TestServiceEvaluatorUsage and TestServiceEvaluatorMatchesResources;
 * - persistent_volume_claims_test.go TestPersistentVolumeClaimEvaluatorUsage,
 *   ...MatchingResources and ...MatchingScopes;
 * - sidecar (restartable init container) sums, quota.Add's format rule, Equals.
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

#include "workers/resourcequota/usage.h"

#define NOW ((kube_time_t)1700000000LL * 1000000000LL) /* 2023-11-14T22:13:20Z */

static const struct rq_evaluator *ev_named(const char *resource)
{
	for (size_t i = 0; i < rq_n_evaluators; i++)
		if (!strcmp(rq_evaluators[i].resource, resource))
			return &rq_evaluators[i];
	fail_msg("no evaluator %s", resource);
	return NULL;
}

/* the list as "k=v,k=v" in key order */
static char *list_text(const struct rq_list *l)
{
	cJSON *o = rq_list_to_json(l), *e;
	char *buf = calloc(1, 8192);
	size_t n = 0;
	assert_non_null(o);
	cJSON_ArrayForEach(e, o)
	{
		n += (size_t)snprintf(buf + n, 8192 - n, "%s%s=%s", n ? "," : "", e->string,
		                      e->valuestring);
	}
	cJSON_Delete(o);
	return buf;
}

static void expect_usage(const char *resource, const char *json, const char *want)
{
	cJSON *o = cJSON_Parse(json);
	struct rq_list l;
	if (!o)
		fail_msg("bad fixture %s", json);
	assert_int_equal(rq_usage(ev_named(resource), o, NOW, &l), 0);
	char *got = list_text(&l);
	if (strcmp(got, want))
		fail_msg("usage of %s\n got  %s\n want %s", json, got, want);
	free(got);
	rq_list_free(&l);
	cJSON_Delete(o);
}

#define PODS_1 "count/pods=1,"
/* ---- TestPodEvaluatorUsage ----------------------------------------------------------------- */
static void test_pod_usage(void **state)
{
	(void)state;
	expect_usage("pods",
	             "{\"spec\":{\"initContainers\":[{\"resources\":{\"requests\":{\"cpu\":\"1m\"},"
	             "\"limits\":{\"cpu\":\"2m\"}}}]}}",
	             PODS_1 "cpu=1m,limits.cpu=2m,pods=1,requests.cpu=1m");
	expect_usage(
	        "pods",
	        "{\"spec\":{\"initContainers\":[{\"resources\":{\"requests\":{\"memory\":\"1m\"},"
	        "\"limits\":{\"memory\":\"2m\"}}}]}}",
	        PODS_1 "limits.memory=2m,memory=1m,pods=1,requests.memory=1m");
	expect_usage("pods",
	             "{\"spec\":{\"initContainers\":[{\"resources\":{\"requests\":{\"ephemeral-"
	             "storage\":"
	             "\"32Mi\"},\"limits\":{\"ephemeral-storage\":\"64Mi\"}}}]}}",
	             PODS_1 "ephemeral-storage=32Mi,limits.ephemeral-storage=64Mi,pods=1,"
	                    "requests.ephemeral-storage=32Mi");
	/* init container hugepages */
	expect_usage(
	        "pods",
	        "{\"spec\":{\"initContainers\":[{\"resources\":{\"requests\":{\"hugepages-2Mi\":"
	        "\"100Mi\"}}}]}}",
	        PODS_1 "hugepages-2Mi=100Mi,pods=1,requests.hugepages-2Mi=100Mi");
	/* init container extended resources (limits are not charged) */
	expect_usage("pods",
	             "{\"spec\":{\"initContainers\":[{\"resources\":{\"requests\":{\"example.com/"
	             "dongle\":"
	             "\"3\"},\"limits\":{\"example.com/dongle\":\"3\"}}}]}}",
	             PODS_1 "pods=1,requests.example.com/dongle=3");
	/* container CPU, MEM, hugepages, extended */
	expect_usage("pods",
	             "{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\"},"
	             "\"limits\":{\"cpu\":\"2\"}}}]}}",
	             PODS_1 "cpu=1,limits.cpu=2,pods=1,requests.cpu=1");
	expect_usage("pods",
	             "{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"memory\":\"1\"},"
	             "\"limits\":{\"memory\":\"2\"}}}]}}",
	             PODS_1 "limits.memory=2,memory=1,pods=1,requests.memory=1");
	expect_usage("pods",
	             "{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"hugepages-2Mi\":"
	             "\"100Mi\"}}}]}}",
	             PODS_1 "hugepages-2Mi=100Mi,pods=1,requests.hugepages-2Mi=100Mi");
	expect_usage(
	        "pods",
	        "{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"example.com/dongle\":"
	        "\"3\"},\"limits\":{\"example.com/dongle\":\"3\"}}}]}}",
	        PODS_1 "pods=1,requests.example.com/dongle=3");
	/* a native prefixed name (kubernetes.io/) is not an extended resource */
	expect_usage("pods",
	             "{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"kubernetes.io/x\":"
	             "\"3\"}}}]}}",
	             PODS_1 "pods=1");
	/* terminated generic count still appears */
	expect_usage(
	        "pods",
	        "{\"status\":{\"phase\":\"Succeeded\"},\"spec\":{\"containers\":[{\"resources\":"
	        "{\"requests\":{\"cpu\":\"1\"},\"limits\":{\"cpu\":\"2\"}}}]}}",
	        "count/pods=1");
	expect_usage("pods", "{\"status\":{\"phase\":\"Failed\"},\"spec\":{\"containers\":[{}]}}",
	             "count/pods=1");
	/* init container maximums override sum of containers */
	expect_usage(
	        "pods",
	        "{\"spec\":{\"initContainers\":["
	        "{\"resources\":{\"requests\":{\"cpu\":\"4\",\"memory\":\"100M\",\"example.com/"
	        "dongle\":\"4\"},"
	        "\"limits\":{\"cpu\":\"8\",\"memory\":\"200M\",\"example.com/dongle\":\"4\"}}},"
	        "{\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"50M\",\"example.com/"
	        "dongle\":\"2\"},"
	        "\"limits\":{\"cpu\":\"2\",\"memory\":\"100M\",\"example.com/dongle\":\"2\"}}}],"
	        "\"containers\":["
	        "{\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"50M\",\"example.com/"
	        "dongle\":\"1\"},"
	        "\"limits\":{\"cpu\":\"2\",\"memory\":\"100M\",\"example.com/dongle\":\"1\"}}},"
	        "{\"resources\":{\"requests\":{\"cpu\":\"2\",\"memory\":\"25M\",\"example.com/"
	        "dongle\":\"2\"},"
	        "\"limits\":{\"cpu\":\"5\",\"memory\":\"50M\",\"example.com/dongle\":\"2\"}}}]}}",
	        PODS_1 "cpu=4,limits.cpu=8,limits.memory=200M,memory=100M,pods=1,"
	               "requests.cpu=4,requests.example.com/dongle=4,requests.memory=100M");
	/* pod deletion timestamp exceeded (60 s ago with a 30 s grace) / not exceeded */
	expect_usage("pods",
	             "{\"metadata\":{\"deletionTimestamp\":\"2023-11-14T22:12:20Z\","
	             "\"deletionGracePeriodSeconds\":30},\"status\":{\"reason\":\"NodeLost\"},"
	             "\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\","
	             "\"memory\":\"50M\"},\"limits\":{\"cpu\":\"2\",\"memory\":\"100M\"}}}]}}",
	             "count/pods=1");
	expect_usage("pods",
	             "{\"metadata\":{\"deletionTimestamp\":\"2023-11-14T22:13:20Z\","
	             "\"deletionGracePeriodSeconds\":30},\"spec\":{\"containers\":[{\"resources\":"
	             "{\"requests\":{\"cpu\":\"1\"},\"limits\":{\"cpu\":\"2\"}}}]}}",
	             PODS_1 "cpu=1,limits.cpu=2,pods=1,requests.cpu=1");
	/* count pod overhead as usage */
	expect_usage("pods",
	             "{\"spec\":{\"overhead\":{\"cpu\":\"1\"},\"containers\":[{\"resources\":"
	             "{\"requests\":{\"cpu\":\"1\"},\"limits\":{\"cpu\":\"2\"}}}]}}",
	             PODS_1 "cpu=2,limits.cpu=3,pods=1,requests.cpu=2");
	/* pod-level CPU, memory, memory with container-level ephemeral storage */
	expect_usage("pods",
	             "{\"spec\":{\"resources\":{\"requests\":{\"cpu\":\"1m\"},\"limits\":{\"cpu\":"
	             "\"2m\"}}}}",
	             PODS_1 "cpu=1m,limits.cpu=2m,pods=1,requests.cpu=1m");
	expect_usage("pods",
	             "{\"spec\":{\"resources\":{\"requests\":{\"memory\":\"1Mi\"},\"limits\":{"
	             "\"memory\":\"2Mi\"}}}}",
	             PODS_1 "limits.memory=2Mi,memory=1Mi,pods=1,requests.memory=1Mi");
	expect_usage(
	        "pods",
	        "{\"spec\":{\"resources\":{\"requests\":{\"memory\":\"1Mi\"},\"limits\":{"
	        "\"memory\":\"2Mi\"}},\"containers\":[{\"resources\":{\"requests\":{"
	        "\"ephemeral-storage\":\"32Mi\"},\"limits\":{\"ephemeral-storage\":\"64Mi\"}}}]}}",
	        PODS_1 "ephemeral-storage=32Mi,limits.ephemeral-storage=64Mi,limits.memory=2Mi,"
	               "memory=1Mi,pods=1,requests.ephemeral-storage=32Mi,requests.memory=1Mi");
	/* pod-level requests override the containers' sum */
	expect_usage("pods",
	             "{\"spec\":{\"resources\":{\"requests\":{\"cpu\":\"3\"}},\"containers\":["
	             "{\"resources\":{\"requests\":{\"cpu\":\"1\"}}},{\"resources\":{\"requests\":"
	             "{\"cpu\":\"1\"}}}]}}",
	             PODS_1 "cpu=3,pods=1,requests.cpu=3");
}

/* KEP-753: sidecars (restartable init containers) add to the sum; a later init container runs
 * beside the sidecars before it */
static void test_pod_sidecars(void **state)
{
	(void)state;
	expect_usage(
	        "pods",
	        "{\"spec\":{\"initContainers\":["
	        "{\"name\":\"s1\",\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{"
	        "\"cpu\":\"1\"}}},"
	        "{\"name\":\"i1\",\"resources\":{\"requests\":{\"cpu\":\"3\"}}}],"
	        "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]}}",
	        /* max(c 2 + s1 1 = 3, i1 3 + s1 1 = 4) */
	        PODS_1 "cpu=4,pods=1,requests.cpu=4");
	expect_usage("pods",
	             "{\"spec\":{\"initContainers\":["
	             "{\"name\":\"i1\",\"resources\":{\"requests\":{\"memory\":\"1Gi\"}}},"
	             "{\"name\":\"s1\",\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{"
	             "\"memory\":\"512Mi\"}}}],"
	             "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"memory\":"
	             "\"1Gi\"}}}]}}",
	             PODS_1 "memory=1536Mi,pods=1,requests.memory=1536Mi");
}

/* TestPodEvaluatorUsageResourceResize: max(spec, allocated, actuated) per container */
static void test_pod_resize(void **state)
{
	(void)state;
	/* status resources larger than the spec */
	expect_usage("pods",
	             "{\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{"
	             "\"memory\":\"200Mi\"},\"limits\":{\"memory\":\"400Mi\"}}}]},\"status\":{"
	             "\"containerStatuses\":[{\"name\":\"c\",\"allocatedResources\":{\"memory\":"
	             "\"150Mi\"},\"resources\":{\"requests\":{\"memory\":\"250Mi\"},\"limits\":{"
	             "\"memory\":\"500Mi\"}}}]}}",
	             PODS_1 "limits.memory=500Mi,memory=250Mi,pods=1,requests.memory=250Mi");
	expect_usage(
	        "pods",
	        "{\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{"
	        "\"cpu\":\"500m\"},\"limits\":{\"cpu\":\"1\"}}}]},\"status\":{"
	        "\"containerStatuses\":[{\"name\":\"c\",\"allocatedResources\":{\"cpu\":\"150m\"},"
	        "\"resources\":{\"requests\":{\"cpu\":\"150m\"},\"limits\":{\"cpu\":\"2\"}}}]}}",
	        PODS_1 "cpu=500m,limits.cpu=2,pods=1,requests.cpu=500m");
	/* no status resources: the spec */
	expect_usage(
	        "pods",
	        "{\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{"
	        "\"cpu\":\"200m\",\"memory\":\"200Mi\"},\"limits\":{\"cpu\":\"400m\",\"memory\":"
	        "\"400Mi\"}}}]},\"status\":{\"containerStatuses\":[{\"name\":\"c\","
	        "\"allocatedResources\":{\"cpu\":\"150m\",\"memory\":\"150Mi\"}}]}}",
	        PODS_1 "cpu=200m,limits.cpu=400m,limits.memory=400Mi,memory=200Mi,pods=1,"
	               "requests.cpu=200m,requests.memory=200Mi");
	/* an infeasible resize: the spec is not charged, only what was allocated / actuated */
	expect_usage(
	        "pods",
	        "{\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{"
	        "\"cpu\":\"4\"}}}]},\"status\":{\"conditions\":[{\"type\":\"PodResizePending\","
	        "\"reason\":\"Infeasible\"}],\"containerStatuses\":[{\"name\":\"c\","
	        "\"allocatedResources\":{\"cpu\":\"1\"}}]}}",
	        PODS_1 "cpu=1,pods=1,requests.cpu=1");
}

/* ---- scopes: TestPodEvaluatorMatchingScopes ------------------------------------------------ */
static int scope(const char *resource, const char *req, const char *obj)
{
	cJSON *r = cJSON_Parse(req), *o = cJSON_Parse(obj);
	assert_non_null(r);
	assert_non_null(o);
	int m = rq_matches_scope(ev_named(resource), r, o);
	cJSON_Delete(r);
	cJSON_Delete(o);
	return m;
}

#define SC(name, op) "{\"scopeName\":\"" name "\",\"operator\":\"" op "\"}"

static void test_pod_scopes(void **state)
{
	(void)state;
	const char *empty = "{\"spec\":{\"containers\":[{}]}}";
	/* EmptyPod: BestEffort, NotTerminating */
	assert_int_equal(scope("pods", SC("BestEffort", "Exists"), empty), 1);
	assert_int_equal(scope("pods", SC("NotBestEffort", "Exists"), empty), 0);
	assert_int_equal(scope("pods", SC("NotTerminating", "Exists"), empty), 1);
	assert_int_equal(scope("pods", SC("Terminating", "Exists"), empty), 0);
	/* PriorityClass */
	const char *pc = "{\"spec\":{\"priorityClassName\":\"class1\",\"containers\":[{}]}}";
	assert_int_equal(scope("pods", SC("PriorityClass", "Exists"), pc), 1);
	assert_int_equal(scope("pods", SC("PriorityClass", "Exists"), empty), 0);
	assert_int_equal(scope("pods",
	                       "{\"scopeName\":\"PriorityClass\",\"operator\":\"In\","
	                       "\"values\":[\"class1\",\"x\"]}",
	                       pc),
	                 1);
	assert_int_equal(scope("pods",
	                       "{\"scopeName\":\"PriorityClass\",\"operator\":\"In\","
	                       "\"values\":[\"x\"]}",
	                       pc),
	                 0);
	assert_int_equal(scope("pods",
	                       "{\"scopeName\":\"PriorityClass\",\"operator\":\"NotIn\","
	                       "\"values\":[\"x\"]}",
	                       pc),
	                 1);
	assert_int_equal(scope("pods",
	                       "{\"scopeName\":\"PriorityClass\",\"operator\":\"NotIn\","
	                       "\"values\":[\"x\"]}",
	                       empty),
	                 1);
	assert_int_equal(scope("pods", SC("PriorityClass", "DoesNotExist"), empty), 1);
	assert_int_equal(scope("pods", SC("PriorityClass", "DoesNotExist"), pc), 0);
	assert_int_equal(scope("pods", "{\"scopeName\":\"PriorityClass\",\"operator\":\"In\"}", pc),
	                 -EINVAL);
	assert_int_equal(scope("pods", SC("PriorityClass", "Bogus"), pc), -EINVAL);
	/* NotBestEffort */
	const char *burst =
	        "{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}";
	assert_int_equal(scope("pods", SC("NotBestEffort", "Exists"), burst), 1);
	/* status.qosClass wins over the spec */
	assert_int_equal(scope("pods", SC("BestEffort", "Exists"),
	                       "{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":"
	                       "\"1\"}}}]},\"status\":{\"qosClass\":\"BestEffort\"}}"),
	                 1);
	/* Terminating, OnlyTerminating */
	const char *term = "{\"spec\":{\"activeDeadlineSeconds\":60,\"containers\":[{}]}}";
	assert_int_equal(scope("pods", SC("Terminating", "Exists"), term), 1);
	assert_int_equal(scope("pods", SC("NotTerminating", "Exists"), term), 0);
	/* CrossNamespacePodAffinity: required / preferred, affinity / anti-affinity, namespaces
	 * or a namespaceSelector (even an empty one) */
	assert_int_equal(
	        scope("pods", SC("CrossNamespacePodAffinity", "Exists"),
	              "{\"spec\":{\"affinity\":{\"podAffinity\":{"
	              "\"requiredDuringSchedulingIgnoredDuringExecution\":[{\"namespaces\":"
	              "[\"ns1\"]}]}}}}"),
	        1);
	assert_int_equal(
	        scope("pods", SC("CrossNamespacePodAffinity", "Exists"),
	              "{\"spec\":{\"affinity\":{\"podAffinity\":{"
	              "\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"podAffinityTerm\":"
	              "{\"namespaceSelector\":{}}}]}}}}"),
	        1);
	assert_int_equal(
	        scope("pods", SC("CrossNamespacePodAffinity", "Exists"),
	              "{\"spec\":{\"affinity\":{\"podAntiAffinity\":{"
	              "\"requiredDuringSchedulingIgnoredDuringExecution\":[{\"namespaces\":"
	              "[\"ns1\"]}]}}}}"),
	        1);
	assert_int_equal(
	        scope("pods", SC("CrossNamespacePodAffinity", "Exists"),
	              "{\"spec\":{\"affinity\":{\"podAffinity\":{"
	              "\"requiredDuringSchedulingIgnoredDuringExecution\":[{\"topologyKey\":"
	              "\"x\"}]}}}}"),
	        0);
	/* services and counts match no scope */
	assert_int_equal(scope("services", SC("BestEffort", "Exists"), "{}"), 0);
	assert_int_equal(scope("configmaps", SC("NotTerminating", "Exists"), "{}"), 0);
}

/* ---- services -------------------------------------------------------------------------------- */
static void test_service_usage(void **state)
{
	(void)state;
	const char *base = "count/services=1,services=1,services.loadbalancers=";
	char want[256];
	expect_usage("services", "{\"spec\":{\"type\":\"ClusterIP\"}}",
	             "count/services=1,services=1,services.loadbalancers=0,services.nodeports=0");
	snprintf(want, sizeof(want), "%s1,services.nodeports=1", base);
	expect_usage("services",
	             "{\"spec\":{\"type\":\"LoadBalancer\",\"ports\":[{\"port\":27443}]}}", want);
	/* allocateLoadBalancerNodePorts false: only ports that have a nodePort */
	snprintf(want, sizeof(want), "%s1,services.nodeports=0", base);
	expect_usage("services",
	             "{\"spec\":{\"type\":\"LoadBalancer\",\"allocateLoadBalancerNodePorts\":false,"
	             "\"ports\":[{\"port\":27443}]}}",
	             want);
	snprintf(want, sizeof(want), "%s1,services.nodeports=1", base);
	expect_usage("services",
	             "{\"spec\":{\"type\":\"LoadBalancer\",\"allocateLoadBalancerNodePorts\":false,"
	             "\"ports\":[{\"port\":27443,\"nodePort\":32001},{\"port\":27444}]}}",
	             want);
	expect_usage("services", "{\"spec\":{\"type\":\"NodePort\",\"ports\":[{\"port\":27443}]}}",
	             "count/services=1,services=1,services.loadbalancers=0,services.nodeports=1");
	expect_usage(
	        "services",
	        "{\"spec\":{\"type\":\"NodePort\",\"ports\":[{\"port\":27443},{\"port\":27444}]}}",
	        "count/services=1,services=1,services.loadbalancers=0,services.nodeports=2");
	const struct rq_evaluator *ev = ev_named("services");
	assert_true(rq_evaluator_matches(ev, "services"));
	assert_true(rq_evaluator_matches(ev, "count/services"));
	assert_true(rq_evaluator_matches(ev, "services.loadbalancers"));
	assert_true(rq_evaluator_matches(ev, "services.nodeports"));
	assert_false(rq_evaluator_matches(ev, "cpu"));
}

/* ---- persistentvolumeclaims ----------------------------------------------------------------- */
static void test_pvc_usage(void **state)
{
	(void)state;
	/* pvc-usage */
	expect_usage(
	        "persistentvolumeclaims",
	        "{\"spec\":{\"resources\":{\"requests\":{\"storage\":\"10Gi\"}}}}",
	        "count/persistentvolumeclaims=1,persistentvolumeclaims=1,requests.storage=10Gi");
	/* pvc-usage-by-class */
	expect_usage(
	        "persistentvolumeclaims",
	        "{\"spec\":{\"storageClassName\":\"gold\",\"resources\":{\"requests\":"
	        "{\"storage\":\"10Gi\"}}}}",
	        "count/persistentvolumeclaims=1,gold.storageclass.storage.k8s.io/"
	        "persistentvolumeclaims=1,gold.storageclass.storage.k8s.io/requests.storage=10Gi,"
	        "persistentvolumeclaims=1,requests.storage=10Gi");
	/* the beta annotation wins over the field */
	expect_usage("persistentvolumeclaims",
	             "{\"metadata\":{\"annotations\":{\"volume.beta.kubernetes.io/storage-class\":"
	             "\"silver\"}},\"spec\":{\"storageClassName\":\"gold\",\"resources\":{"
	             "\"requests\":{\"storage\":\"1G\"}}}}",
	             "count/persistentvolumeclaims=1,persistentvolumeclaims=1,requests.storage=1G,"
	             "silver.storageclass.storage.k8s.io/persistentvolumeclaims=1,"
	             "silver.storageclass.storage.k8s.io/requests.storage=1G");
	/* pvc-usage-rounded: 1Gi + 1m rounds up */
	expect_usage(
	        "persistentvolumeclaims",
	        "{\"spec\":{\"resources\":{\"requests\":{\"storage\":\"1073741824001m\"}}}}",
	        "count/"
	        "persistentvolumeclaims=1,persistentvolumeclaims=1,requests.storage=1073741825");
	/* pvc-usage-higher-allocated-resource / lower-allocated-resource */
	expect_usage(
	        "persistentvolumeclaims",
	        "{\"spec\":{\"resources\":{\"requests\":{\"storage\":\"10Gi\"}}},\"status\":"
	        "{\"allocatedResources\":{\"storage\":\"20Gi\"}}}",
	        "count/persistentvolumeclaims=1,persistentvolumeclaims=1,requests.storage=20Gi");
	expect_usage(
	        "persistentvolumeclaims",
	        "{\"spec\":{\"resources\":{\"requests\":{\"storage\":\"10Gi\"}}},\"status\":"
	        "{\"allocatedResources\":{\"storage\":\"5Gi\"}}}",
	        "count/persistentvolumeclaims=1,persistentvolumeclaims=1,requests.storage=10Gi");
	/* no storage request: only the counts */
	expect_usage("persistentvolumeclaims", "{\"spec\":{}}",
	             "count/persistentvolumeclaims=1,persistentvolumeclaims=1");

	const struct rq_evaluator *ev = ev_named("persistentvolumeclaims");
	assert_true(rq_evaluator_matches(ev, "count/persistentvolumeclaims"));
	assert_true(rq_evaluator_matches(ev, "persistentvolumeclaims"));
	assert_true(rq_evaluator_matches(ev, "requests.storage"));
	assert_true(rq_evaluator_matches(ev, "gold.storageclass.storage.k8s.io/requests.storage"));
	assert_true(rq_evaluator_matches(
	        ev, "gold.storageclass.storage.k8s.io/persistentvolumeclaims"));
	assert_false(rq_evaluator_matches(ev, "storage"));
	assert_false(rq_evaluator_matches(ev, "ephemeral-storage"));
	assert_false(rq_evaluator_matches(ev, "gold.storageclass.storage.k8s.io/storage"));

	/* VolumeAttributesClass scope (MatchingScopes) */
	const char *vac = "{\"spec\":{\"volumeAttributesClassName\":\"gold\"}}";
	assert_int_equal(
	        scope("persistentvolumeclaims", SC("VolumeAttributesClass", "Exists"), vac), 1);
	assert_int_equal(
	        scope("persistentvolumeclaims", SC("VolumeAttributesClass", "Exists"), "{}"), 0);
	assert_int_equal(scope("persistentvolumeclaims",
	                       "{\"scopeName\":\"VolumeAttributesClass\",\"operator\":\"In\","
	                       "\"values\":[\"gold\"]}",
	                       "{\"status\":{\"currentVolumeAttributesClassName\":\"gold\"}}"),
	                 1);
	assert_int_equal(scope("persistentvolumeclaims",
	                       "{\"scopeName\":\"VolumeAttributesClass\",\"operator\":\"In\","
	                       "\"values\":[\"gold\"]}",
	                       "{\"status\":{\"modifyVolumeStatus\":{"
	                       "\"targetVolumeAttributesClassName\":\"gold\"}}}"),
	                 1);
	assert_int_equal(scope("persistentvolumeclaims",
	                       "{\"scopeName\":\"VolumeAttributesClass\",\"operator\":\"NotIn\","
	                       "\"values\":[\"gold\"]}",
	                       vac),
	                 0);
	assert_int_equal(
	        scope("persistentvolumeclaims", SC("VolumeAttributesClass", "DoesNotExist"), "{}"),
	        1);
	assert_int_equal(scope("persistentvolumeclaims", SC("BestEffort", "Exists"), vac), 0);
}

static void test_pod_matching_resources(void **state)
{
	(void)state;
	const struct rq_evaluator *ev = ev_named("pods");
	static const char *const yes[] = {"pods",
	                                  "count/pods",
	                                  "cpu",
	                                  "memory",
	                                  "requests.cpu",
	                                  "limits.memory",
	                                  "ephemeral-storage",
	                                  "requests.ephemeral-storage",
	                                  "limits.ephemeral-storage",
	                                  "hugepages-2Mi",
	                                  "requests.hugepages-1Gi",
	                                  "requests.example.com/dongle"};
	static const char *const no[] = {"limits.example.com/dongle",
	                                 "example.com/dongle",
	                                 "requests.storage",
	                                 "services",
	                                 "count/services",
	                                 "requests.foo"};
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (!rq_evaluator_matches(ev, yes[i]))
			fail_msg("%s not matched", yes[i]);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (rq_evaluator_matches(ev, no[i]))
			fail_msg("%s matched", no[i]);
	/* the legacy count names and count/<resource>.<group> */
	assert_true(rq_evaluator_matches(ev_named("configmaps"), "configmaps"));
	assert_true(rq_evaluator_matches(ev_named("configmaps"), "count/configmaps"));
	assert_true(rq_evaluator_matches(ev_named("secrets"), "secrets"));
	assert_true(rq_evaluator_matches(ev_named("deployments"), "count/deployments.apps"));
	assert_false(rq_evaluator_matches(ev_named("deployments"), "deployments"));
}

/* ---- TestSyncResourceQuota --------------------------------------------------------------- */
struct fake {
	const char *pods;    /* JSON array, or NULL */
	const char *failing; /* a resource whose listing fails */
	int n_configmaps;
};

static int fake_list(void *ud, const struct rq_evaluator *ev, const char *ns, rq_visit_fn fn,
                     void *fn_ud)
{
	struct fake *f = ud;
	int n = 0, r;
	(void)ns;
	if (f->failing && !strcmp(f->failing, ev->resource))
		return -EIO; /* "error listing" */
	if (!strcmp(ev->resource, "pods") && f->pods) {
		cJSON *a = cJSON_Parse(f->pods), *it;
		assert_non_null(a);
		cJSON_ArrayForEach(it, a)
		{
			if ((r = fn(it, fn_ud)) < 0) {
				cJSON_Delete(a);
				return r;
			}
			n++;
		}
		cJSON_Delete(a);
	}
	if (!strcmp(ev->resource, "widgets") && !strcmp(ev->group, "example.com"))
		for (; n < 2; n++)
			if ((r = fn(NULL, fn_ud)) < 0)
				return r;
	if (!strcmp(ev->resource, "gadgets") || !strcmp(ev->resource, "cronjobs"))
		return -ENOENT; /* not served */
	if (!strcmp(ev->resource, "configmaps"))
		for (; n < f->n_configmaps; n++)
			if ((r = fn(NULL, fn_ud)) < 0)
				return r;
	return n;
}

#define POD(name, phase, cpu, mem, extra)                                                          \
	"{\"metadata\":{\"name\":\"" name                                                          \
	"\",\"namespace\":\"testing\"},\"status\":{\"phase\":\"" phase "\"},\"spec\":{" extra      \
	"\"containers\":[{\"name\":\"ctr\",\"image\":\"image\","                                   \
	"\"resources\":{\"requests\":{" cpu mem "}}}]}}"
#define TEST_PODS                                                                                  \
	"[" POD("pod-running", "Running", "\"cpu\":\"100m\",", "\"memory\":\"1Gi\"",               \
	        "") "," POD("pod-running-2", "Running", "\"cpu\":\"100m\",", "\"memory\":\"1Gi\"", \
	                    "") "," POD("pod-failed", "Failed", "\"cpu\":\"100m\",",               \
	                                "\"memory\":\"1Gi\"", "") "]"
#define BEST_EFFORT_PODS                                                                           \
	"[" POD("pod-running", "Running", "", "",                                                  \
	        "") "," POD("pod-running-2", "Running", "", "",                                    \
	                    "") "," POD("pod-failed", "Failed", "\"cpu\":\"100m\",",               \
	                                "\"memory\":\"1Gi\"", "") "]"
#define PRIORITY_PODS                                                                                                             \
	"[" POD("pod-running", "Running", "\"cpu\":\"500m\",", "\"memory\":\"50Gi\"", "\"priorityClassName\":\"high\",") "," POD( \
	        "pod-running-2", "Running", "\"cpu\":\"100m\",", "\"memory\":\"1Gi\"",                                            \
	        "\"priorityClassName\":\"low\",") "," POD("pod-failed", "Failed",                                                 \
	                                                  "\"cpu\":\"100m\",",                                                    \
	                                                  "\"memory\":\"1Gi\"", "") "]"

#define HARD3 "\"hard\":{\"cpu\":\"3\",\"memory\":\"100Gi\",\"pods\":\"5\"}"

/* runs the sync; checks the status it writes (as text) and whether it writes */
static void sync_case(const char *name, const char *quota, struct fake *f, const char *want_status,
                      bool want_dirty, int want_err)
{
	cJSON *q = cJSON_Parse(quota);
	struct rq_source src = {fake_list, f};
	struct rq_sync_out out;
	if (!q)
		fail_msg("%s: bad fixture", name);
	assert_int_equal(rq_sync_status(q, &src, NOW, &out), 0);
	char *got = cJSON_PrintUnformatted(out.status);
	if (strcmp(got, want_status) || out.dirty != want_dirty || out.calc_err != want_err)
		fail_msg("%s:\n got  %s dirty=%d err=%d\n want %s dirty=%d err=%d", name, got,
		         out.dirty, out.calc_err, want_status, want_dirty, want_err);
	free(got);
	cJSON_Delete(out.status);
	cJSON_Delete(q);
}

#define QUOTA(spec_extra, status)                                                                  \
	"{\"metadata\":{\"name\":\"quota\",\"namespace\":\"testing\"},\"spec\":{" HARD3 spec_extra \
	"}" status "}"
#define SEL(expr)  ",\"scopeSelector\":{\"matchExpressions\":[" expr "]}"
#define WANT(used) "{" HARD3 ",\"used\":{" used "}}"

static void test_sync_resource_quota(void **state)
{
	(void)state;
	struct fake pods = {.pods = TEST_PODS}, be = {.pods = BEST_EFFORT_PODS},
	            pri = {.pods = PRIORITY_PODS};

	sync_case("non-matching-best-effort-scoped-quota",
	          QUOTA(",\"scopes\":[\"BestEffort\"]", ""), &pods,
	          WANT("\"cpu\":\"0\",\"memory\":\"0\",\"pods\":\"0\""), true, 0);
	sync_case("matching-best-effort-scoped-quota", QUOTA(",\"scopes\":[\"BestEffort\"]", ""),
	          &be, WANT("\"cpu\":\"0\",\"memory\":\"0\",\"pods\":\"2\""), true, 0);
	sync_case("non-matching-priorityclass-scoped-quota-OpExists",
	          QUOTA(SEL(SC("PriorityClass", "Exists")), ""), &pods,
	          WANT("\"cpu\":\"0\",\"memory\":\"0\",\"pods\":\"0\""), true, 0);
	sync_case("matching-priorityclass-scoped-quota-OpExists",
	          QUOTA(SEL(SC("PriorityClass", "Exists")), ""), &pri,
	          WANT("\"cpu\":\"600m\",\"memory\":\"51Gi\",\"pods\":\"2\""), true, 0);
	sync_case("matching-priorityclass-scoped-quota-OpIn",
	          QUOTA(SEL("{\"scopeName\":\"PriorityClass\",\"operator\":\"In\",\"values\":["
	                    "\"high\",\"low\"]}"),
	                ""),
	          &pri, WANT("\"cpu\":\"600m\",\"memory\":\"51Gi\",\"pods\":\"2\""), true, 0);
	sync_case("matching-priorityclass-scoped-quota-OpIn-high",
	          QUOTA(SEL("{\"scopeName\":\"PriorityClass\",\"operator\":\"In\",\"values\":["
	                    "\"high\"]}"),
	                ""),
	          &pri, WANT("\"cpu\":\"500m\",\"memory\":\"50Gi\",\"pods\":\"1\""), true, 0);
	sync_case("matching-priorityclass-scoped-quota-OpIn-low",
	          QUOTA(SEL("{\"scopeName\":\"PriorityClass\",\"operator\":\"In\",\"values\":["
	                    "\"low\"]}"),
	                ""),
	          &pri, WANT("\"cpu\":\"100m\",\"memory\":\"1Gi\",\"pods\":\"1\""), true, 0);
	sync_case("matching-priorityclass-scoped-quota-OpNotIn-low",
	          QUOTA(SEL("{\"scopeName\":\"PriorityClass\",\"operator\":\"NotIn\",\"values\":["
	                    "\"high\"]}"),
	                ""),
	          &pri, WANT("\"cpu\":\"100m\",\"memory\":\"1Gi\",\"pods\":\"1\""), true, 0);
	sync_case("non-matching-priorityclass-scoped-quota-OpIn",
	          QUOTA(SEL("{\"scopeName\":\"PriorityClass\",\"operator\":\"In\",\"values\":["
	                    "\"random\"]}"),
	                ""),
	          &pri, WANT("\"cpu\":\"0\",\"memory\":\"0\",\"pods\":\"0\""), true, 0);
	sync_case("non-matching-priorityclass-scoped-quota-OpNotIn",
	          QUOTA(SEL("{\"scopeName\":\"PriorityClass\",\"operator\":\"NotIn\",\"values\":["
	                    "\"random\"]}"),
	                ""),
	          &pri, WANT("\"cpu\":\"600m\",\"memory\":\"51Gi\",\"pods\":\"2\""), true, 0);
	sync_case("matching-priorityclass-scoped-quota-OpDoesNotExist",
	          QUOTA(SEL(SC("PriorityClass", "DoesNotExist")), ""), &pods,
	          WANT("\"cpu\":\"200m\",\"memory\":\"2Gi\",\"pods\":\"2\""), true, 0);
	sync_case("pods", QUOTA("", ""), &pods,
	          WANT("\"cpu\":\"200m\",\"memory\":\"2Gi\",\"pods\":\"2\""), true, 0);
	/* beyond upstream's table: the same status again writes nothing */
	sync_case("pods-in-sync",
	          QUOTA("", ",\"status\":{" HARD3 ",\"used\":{\"cpu\":\"0.2\",\"memory\":"
	                    "\"2048Mi\",\"pods\":\"2\"}}"),
	          &pods, WANT("\"cpu\":\"200m\",\"memory\":\"2Gi\",\"pods\":\"2\""), false, 0);

	struct fake none = {0};
	sync_case(
	        "quota-spec-hard-updated",
	        "{\"metadata\":{\"name\":\"rq\",\"namespace\":\"default\"},\"spec\":{\"hard\":"
	        "{\"cpu\":\"4\"}},\"status\":{\"hard\":{\"cpu\":\"3\"},\"used\":{\"cpu\":\"0\"}}}",
	        &none, "{\"hard\":{\"cpu\":\"4\"},\"used\":{\"cpu\":\"0\"}}", true, 0);
	sync_case("quota-unchanged",
	          "{\"metadata\":{\"name\":\"rq\",\"namespace\":\"default\"},\"spec\":{\"hard\":"
	          "{\"cpu\":\"4\"}},\"status\":{\"hard\":{\"cpu\":\"0\"}}}",
	          &none, "{\"hard\":{\"cpu\":\"4\"},\"used\":{\"cpu\":\"0\"}}", true, 0);
	sync_case(
	        "quota-in-sync",
	        "{\"metadata\":{\"name\":\"rq\",\"namespace\":\"default\"},\"spec\":{\"hard\":"
	        "{\"cpu\":\"4\"}},\"status\":{\"hard\":{\"cpu\":\"4\"},\"used\":{\"cpu\":\"0\"}}}",
	        &none, "{\"hard\":{\"cpu\":\"4\"},\"used\":{\"cpu\":\"0\"}}", false, 0);

	struct fake podfail = {.failing = "pods"};
	sync_case("quota-missing-status-with-calculation-error",
	          "{\"metadata\":{\"name\":\"rq\",\"namespace\":\"default\"},\"spec\":{\"hard\":"
	          "{\"pods\":\"1\"}},\"status\":{}}",
	          &podfail, "{\"hard\":{\"pods\":\"1\"},\"used\":{}}", true, -EIO);
	sync_case(
	        "quota-missing-status-with-partial-calculation-error",
	        "{\"metadata\":{\"name\":\"rq\",\"namespace\":\"default\"},\"spec\":{\"hard\":"
	        "{\"configmaps\":\"1\",\"pods\":\"1\"}},\"status\":{}}",
	        &podfail,
	        "{\"hard\":{\"configmaps\":\"1\",\"pods\":\"1\"},\"used\":{\"configmaps\":\"0\"}}",
	        true, -EIO);
	/* a failed evaluator keeps the old usage of its resources */
	sync_case(
	        "calculation-error-keeps-old-usage",
	        "{\"metadata\":{\"name\":\"rq\",\"namespace\":\"default\"},\"spec\":{\"hard\":"
	        "{\"configmaps\":\"1\",\"pods\":\"1\"}},\"status\":{\"hard\":{\"configmaps\":\"1\","
	        "\"pods\":\"1\"},\"used\":{\"configmaps\":\"1\",\"pods\":\"1\"}}}",
	        &podfail,
	        "{\"hard\":{\"configmaps\":\"1\",\"pods\":\"1\"},\"used\":{\"configmaps\":\"0\","
	        "\"pods\":\"1\"}}",
	        true, -EIO);
	/* counts, a resource no evaluator tracks (kept out of used), a used entry no longer hard */
	struct fake cms = {.n_configmaps = 3};
	sync_case(
	        "object-counts",
	        "{\"metadata\":{\"name\":\"rq\",\"namespace\":\"default\"},\"spec\":{\"hard\":"
	        "{\"configmaps\":\"10\",\"count/configmaps\":\"10\",\"example.com/foo\":\"1\"}},"
	        "\"status\":{\"hard\":{\"configmaps\":\"10\"},\"used\":{\"configmaps\":\"3\","
	        "\"secrets\":\"2\"}}}",
	        &cms,
	        "{\"hard\":{\"configmaps\":\"10\",\"count/configmaps\":\"10\",\"example.com/foo\":"
	        "\"1\"},\"used\":{\"configmaps\":\"3\",\"count/configmaps\":\"3\"}}",
	        true, 0);
}

/* count/<resource>.<group> of any kind (upstream's monitors): counted from the source, a kind
 * not served gets no usage and no error, ignored kinds (events) no evaluator */
static void test_dynamic_counts(void **state)
{
	(void)state;
	struct fake f = {0};
	sync_case("dynamic-counts",
	          "{\"metadata\":{\"name\":\"rq\",\"namespace\":\"default\"},\"spec\":{\"hard\":"
	          "{\"count/widgets.example.com\":\"5\",\"count/gadgets.example.com\":\"5\","
	          "\"count/cronjobs.batch\":\"5\",\"count/events\":\"5\",\"count/"
	          "leases.coordination.k8s.io\":\"5\"}},"
	          "\"status\":{\"hard\":{},\"used\":{\"count/gadgets.example.com\":\"1\"}}}",
	          &f,
	          "{\"hard\":{\"count/cronjobs.batch\":\"5\",\"count/events\":\"5\",\"count/"
	          "gadgets.example.com\":"
	          "\"5\",\"count/leases.coordination.k8s.io\":\"5\",\"count/"
	          "widgets.example.com\":\"5\"},"
	          "\"used\":{\"count/gadgets.example.com\":\"1\",\"count/"
	          "leases.coordination.k8s.io\":\"0\","
	          "\"count/widgets.example.com\":\"2\"}}",
	          true, 0);
	struct rq_evaluator ev;
	char buf[256];
	assert_true(rq_dynamic_count("count/widgets.example.com", buf, sizeof(buf), &ev));
	assert_string_equal(ev.resource, "widgets");
	assert_string_equal(ev.group, "example.com");
	assert_true(rq_dynamic_count("count/leases.coordination.k8s.io", buf, sizeof(buf), &ev));
	assert_string_equal(ev.group, "coordination.k8s.io");
	assert_false(rq_dynamic_count("count/pods", buf, sizeof(buf), &ev));       /* the table's */
	assert_false(rq_dynamic_count("count/configmaps", buf, sizeof(buf), &ev)); /* the table's */
	assert_false(rq_dynamic_count("count/events.events.k8s.io", buf, sizeof(buf), &ev));
	assert_false(rq_dynamic_count("count/bindings", buf, sizeof(buf), &ev));
	assert_false(rq_dynamic_count("widgets", buf, sizeof(buf), &ev));
	assert_false(rq_dynamic_count("count/", buf, sizeof(buf), &ev));
	cJSON *q = cJSON_Parse("{\"status\":{\"hard\":{\"count/widgets.example.com\":\"1\"}}}");
	assert_true(rq_quota_tracks(q, "example.com", "widgets"));
	assert_false(rq_quota_tracks(q, "example.com", "gadgets"));
	assert_false(rq_quota_tracks(q, "", "widgets"));
	cJSON_Delete(q);
}

/* TestAddQuota (every case: no status; status, no usage; the same for an extended resource;
 * status mismatch; missing usage nothing tracks; ready) and kcmd's: which quotas go to the
 * priority queue */
static void test_add_quota_priority(void **state)
{
	(void)state;
	static const struct {
		const char *name, *quota;
		bool priority;
	} cases[] = {
	        {"no status", "{\"spec\":{\"hard\":{\"cpu\":\"4\"}}}", true},
	        {"hard changed",
	         "{\"spec\":{\"hard\":{\"cpu\":\"4\"}},\"status\":{\"hard\":{\"cpu\":\"3\"},"
	         "\"used\":{\"cpu\":\"0\"}}}",
	         true},
	        {"equal hard written differently",
	         "{\"spec\":{\"hard\":{\"cpu\":\"4\"}},\"status\":{\"hard\":{\"cpu\":\"4000m\"},"
	         "\"used\":{\"cpu\":\"0\"}}}",
	         false},
	        {"tracked usage missing",
	         "{\"spec\":{\"hard\":{\"cpu\":\"4\"}},\"status\":{\"hard\":{\"cpu\":\"4\"}}}",
	         true},
	        {"untracked usage missing",
	         "{\"spec\":{\"hard\":{\"example.com/foo\":\"4\"}},\"status\":{\"hard\":{"
	         "\"example.com/foo\":\"4\"}}}",
	         false},
	        {"dynamic count usage missing",
	         "{\"spec\":{\"hard\":{\"count/"
	         "roles.rbac.authorization.k8s.io\":\"4\"}},\"status\":"
	         "{\"hard\":{\"count/roles.rbac.authorization.k8s.io\":\"4\"}}}",
	         true},
	        {"status, no usage (extended resource)",
	         "{\"spec\":{\"hard\":{\"requests.example/foobars.example.com\":\"4\"}},\"status\":"
	         "{\"hard\":{\"requests.example/foobars.example.com\":\"4\"}}}",
	         true},
	        {"status, missing usage, but don't care (no informer)",
	         "{\"spec\":{\"hard\":{\"foobars.example.com\":\"4\"}},\"status\":{\"hard\":{"
	         "\"foobars.example.com\":\"4\"}}}",
	         false},
	        {"in sync",
	         "{\"spec\":{\"hard\":{\"cpu\":\"4\"}},\"status\":{\"hard\":{\"cpu\":\"4\"},"
	         "\"used\":{\"cpu\":\"1\"}}}",
	         false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *q = cJSON_Parse(cases[i].quota);
		assert_non_null(q);
		if (rq_quota_needs_priority(q) != cases[i].priority)
			fail_msg("%s: priority %d, want %d", cases[i].name, !cases[i].priority,
			         cases[i].priority);
		cJSON_Delete(q);
	}
}

static void test_quota_tracks(void **state)
{
	(void)state;
	cJSON *q = cJSON_Parse("{\"status\":{\"hard\":{\"requests.storage\":\"1Gi\",\"count/"
	                       "jobs.batch\":\"1\"}}}");
	assert_true(rq_quota_tracks(q, "", "persistentvolumeclaims"));
	assert_true(rq_quota_tracks(q, "batch", "jobs"));
	assert_false(rq_quota_tracks(q, "", "pods"));
	assert_false(rq_quota_tracks(q, "", "services"));
	cJSON_Delete(q);
}

static void test_bad_input(void **state)
{
	(void)state;
	struct rq_list l;
	cJSON *o = cJSON_Parse(
	        "{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"x\"}}}]}}");
	assert_int_equal(rq_usage(ev_named("pods"), o, NOW, &l), -EINVAL);
	cJSON_Delete(o);
	o = cJSON_Parse("{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":5}}}]}}");
	assert_int_equal(rq_usage(ev_named("pods"), o, NOW, &l), -EINVAL);
	cJSON_Delete(o);
	/* a quota without a namespace, or with a bad hard quantity */
	struct fake none = {0};
	struct rq_source src = {fake_list, &none};
	struct rq_sync_out out;
	o = cJSON_Parse("{\"spec\":{\"hard\":{\"pods\":\"1\"}}}");
	assert_int_equal(rq_sync_status(o, &src, NOW, &out), -EINVAL);
	cJSON_Delete(o);
	o = cJSON_Parse(
	        "{\"metadata\":{\"namespace\":\"a\"},\"spec\":{\"hard\":{\"pods\":\"1x\"}}}");
	assert_int_equal(rq_sync_status(o, &src, NOW, &out), -EINVAL);
	cJSON_Delete(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_pod_usage),
	        cmocka_unit_test(test_pod_sidecars),
	        cmocka_unit_test(test_pod_resize),
	        cmocka_unit_test(test_pod_scopes),
	        cmocka_unit_test(test_service_usage),
	        cmocka_unit_test(test_pvc_usage),
	        cmocka_unit_test(test_pod_matching_resources),
	        cmocka_unit_test(test_sync_resource_quota),
	        cmocka_unit_test(test_quota_tracks),
	        cmocka_unit_test(test_dynamic_counts),
	        cmocka_unit_test(test_add_quota_priority),
	        cmocka_unit_test(test_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
