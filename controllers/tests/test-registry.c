/* SPDX-License-Identifier: Apache-2.0 */
/* Tests of the controller registry (controllers/registry.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

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

/* Sharding: the audited controllers are sharded by namespace, the rest (the GC, controllers
 * whose keys name cluster-scoped objects) run whole on range 0. */
static void test_shard_by_namespace(void **state)
{
	(void)state;
	assert_true(kcmd_registry_shard_by_namespace(kcmd_registry_find("replicaset")));
	assert_true(kcmd_registry_shard_by_namespace(kcmd_registry_find("deployment")));
	assert_false(kcmd_registry_shard_by_namespace(kcmd_registry_find("garbagecollector")));
	assert_false(kcmd_registry_shard_by_namespace(kcmd_registry_find("namespace")));
	assert_false(kcmd_registry_shard_by_namespace(NULL));
	for (size_t i = 0; i < kcmd_registry_count(); i++) {
		const struct kcmd_controller *c = kcmd_registry_at(i);
		if (c->cluster_scoped_keys)
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
