/* SPDX-License-Identifier: Apache-2.0 */
/* Tests of the controller registry (controllers/registry.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "controllers/registry.h"
#include "lib/goflag.h"

static void test_valid(void **state)
{
	(void)state;
	char err[256] = "";

	assert_int_equal(kcmd_registry_validate(err, sizeof(err)), 0);
	assert_true(kcmd_registry_count() >= 2);
}

static void test_find(void **state)
{
	(void)state;
	const struct kcmd_controller *rs = kcmd_registry_find("replicaset-controller");

	assert_non_null(rs);
	assert_ptr_equal(kcmd_registry_find("replicaset"), rs); /* kcm's alias */
	assert_ptr_equal(kcmd_registry_at((size_t)kcmd_registry_index(rs)), rs);
	assert_ptr_equal(kcmd_registry_find("garbagecollector"),
	                 kcmd_registry_find("garbage-collector-controller"));
	assert_null(kcmd_registry_find("deployment-controller-x"));
	assert_null(kcmd_registry_find(NULL));
	assert_null(kcmd_registry_at(kcmd_registry_count()));
}

/* Every descriptor is complete enough for the mains to run it without naming it. */
static void test_descriptors(void **state)
{
	(void)state;
	for (size_t i = 0; i < kcmd_registry_count(); i++) {
		const struct kcmd_controller *c = kcmd_registry_at(i);
		struct kcmd_flag_values *v;
		assert_int_equal(kcmd_flag_values_new(c->flags, c->n_flags, &v), 0);
		/* a periodic controller with a main of its own may have no queue (the pod GC) */
		assert_true(c->n_queues >= 1 || c->worker_main);
		if (c->worker_count)
			assert_true(c->worker_count(v) >= 1);
		if (c->hidden) {
			assert_non_null(kcmd_flag_values_find(v, c->enable_flag));
			assert_false(c->enabled_by_default);
		}
		/* kcm gives the token controller its root client: the accounts depend on it */
		if (!c->hidden && strcmp(c->name, "serviceaccount-token-controller") != 0)
			assert_non_null(c->service_account);
		kcmd_flag_values_free(v);
	}
}

/* Sharding: the audited controllers are sharded by namespace (docs/sharding.md's table), the
 * rest (the GC, controllers whose keys or writes are cluster-scoped) run whole on range 0. */
static void test_shard_by_namespace(void **state)
{
	(void)state;
	static const char *const ns_name[] = {"replicaset",
	                                      "replicationcontroller",
	                                      "deployment",
	                                      "job",
	                                      "cronjob",
	                                      "statefulset",
	                                      "daemonset",
	                                      "disruption",
	                                      "endpoint",
	                                      "endpointslice",
	                                      "endpointslicemirroring",
	                                      "horizontalpodautoscaling",
	                                      "ttl-after-finished",
	                                      "resourcequota",
	                                      "serviceaccount-token",
	                                      "persistentvolumeclaim-protection-controller",
	                                      "ephemeral-volume",
	                                      "persistentvolume-expander",
	                                      "resource-claim-controller",
	                                      "podgroup-protection-controller",
	                                      "tokencleaner",
	                                      "bootstrapsigner",
	                                      NULL};
	static const char *const namespace_name[] = {"namespace", "serviceaccount",
	                                             "root-ca-cert-publisher", NULL};
	static const char *const range0[] = {
	        "garbagecollector",
	        "pod-garbage-collector-controller",
	        "kubelet-simulator",
	        "clusterrole-aggregation",
	        "ttl",
	        "node-lifecycle-controller",
	        "taint-eviction-controller",
	        "device-taint-eviction-controller",
	        "nodeipam",
	        "csrsigning",
	        "csrapproving",
	        "csrcleaner",
	        "persistentvolume-protection-controller",
	        "volumeattributesclass-protection-controller",
	        "persistentvolume-binder",
	        "attachdetach",
	        "service-cidr-controller",
	        "legacy-service-account-token-cleaner",
	        "podcertificaterequest-cleaner-controller",
	        "kube-apiserver-serving-clustertrustbundle-publisher-controller",
	        "storage-version-gc",
	        "svm",
	        "validatingadmissionpolicy-status-controller",
	        "resourcepoolstatusrequest-controller",
	        "selinux-warning-controller",
	        NULL};
	size_t n = 0;

	for (size_t i = 0; ns_name[i]; i++, n++) {
		const struct kcmd_controller *c = kcmd_registry_find(ns_name[i]);
		assert_non_null(c);
		assert_int_equal(kcmd_registry_shard_keys(c), KUBE_SHARD_KEYS_NS_NAME);
		assert_true(kcmd_registry_shard_by_namespace(c));
	}
	for (size_t i = 0; namespace_name[i]; i++, n++) {
		const struct kcmd_controller *c = kcmd_registry_find(namespace_name[i]);
		assert_non_null(c);
		assert_int_equal(kcmd_registry_shard_keys(c), KUBE_SHARD_KEYS_NAMESPACE);
		assert_true(c->cluster_scoped_keys); /* keys without '/' */
	}
	for (size_t i = 0; range0[i]; i++, n++) {
		const struct kcmd_controller *c = kcmd_registry_find(range0[i]);
		if (!c) /* the kubelet simulator is left out of shipped builds */
			assert_string_equal(range0[i], "kubelet-simulator");
		assert_int_equal(kcmd_registry_shard_keys(c), KUBE_SHARD_KEYS_NONE);
		assert_false(kcmd_registry_shard_by_namespace(c));
	}
	/* the table covers every controller of this build */
	assert_true(n >= kcmd_registry_count());
	for (size_t i = 0; i < kcmd_registry_count(); i++) {
		const struct kcmd_controller *c = kcmd_registry_at(i);
		const char *const *lists[] = {ns_name, namespace_name, range0};
		bool found = false;
		for (size_t l = 0; l < 3 && !found; l++)
			for (size_t k = 0; lists[l][k] && !found; k++)
				found = kcmd_registry_find(lists[l][k]) == c;
		if (!found)
			fail_msg("%s is in no row of the sharding table", c->name);
	}
	assert_false(kcmd_registry_shard_by_namespace(NULL));
	for (size_t i = 0; i < kcmd_registry_count(); i++) {
		const struct kcmd_controller *c = kcmd_registry_at(i);
		/* keys naming cluster-scoped objects are never read as "namespace/name" */
		if (c->cluster_scoped_keys)
			assert_int_not_equal(kcmd_registry_shard_keys(c), KUBE_SHARD_KEYS_NS_NAME);
		/* a main of its own takes no key through the worker's range check: it is gated on
		 * range 0 as a whole (workers/main.c), so it must not be in a sharded list */
		if (c->worker_main)
			assert_false(kcmd_registry_shard_by_namespace(c));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_shard_by_namespace),
	        cmocka_unit_test(test_valid),
	        cmocka_unit_test(test_find),
	        cmocka_unit_test(test_descriptors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
