/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/garbagecollector/tests/test-kube-api.c: REST mapping by served version and the
 * deletable-resource filter (GetDeletableResources, DefaultIgnoredResources).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "workers/garbagecollector/kube-api.h"

#define ALL (KUBE_VERB_BIT_GET | KUBE_VERB_BIT_LIST | KUBE_VERB_BIT_WATCH | KUBE_VERB_BIT_DELETE)

static struct kube_api_resource res[] = {
        {"", "v1", "pods", "Pod", true, true, ALL},
        {"", "v1", "nodes", "Node", false, true, ALL},
        {"", "v1", "events", "Event", true, true, ALL},
        {"events.k8s.io", "v1", "events", "Event", true, true, ALL},
        {"apps", "v1", "deployments", "Deployment", true, true, ALL},
        {"rbac.authorization.k8s.io", "v1", "roles", "Role", true, true, ALL},
        {"example.com", "v1", "widgets", "Widget", true, false, ALL},
        {"example.com", "v2", "widgets", "Widget", true, true, ALL},
        {"", "v1", "bindings", "Binding", true, true, KUBE_VERB_BIT_CREATE},
};
static const struct kube_discovery disc = {.n = sizeof res / sizeof res[0], .res = res};

static void test_rest_map(void **state)
{
	(void)state;
	const struct kube_api_resource *r;
	assert_int_equal(gc_rest_map(&disc, "v1", "Pod", &r), 0);
	assert_string_equal(r->resource, "pods");
	assert_true(r->namespaced);
	assert_int_equal(gc_rest_map(&disc, "v1", "Node", &r), 0);
	assert_false(r->namespaced);
	assert_int_equal(gc_rest_map(&disc, "apps/v1", "Deployment", &r), 0);
	/* a version that is not served has no mapping (extensions/v1beta1 Deployment) */
	assert_int_equal(gc_rest_map(&disc, "extensions/v1beta1", "Deployment", &r), -ENOENT);
	assert_int_equal(gc_rest_map(&disc, "rbac.authorization.k8s.io/v1beta1", "Role", &r),
	                 -ENOENT);
	/* a served non-preferred version maps */
	assert_int_equal(gc_rest_map(&disc, "example.com/v1", "Widget", &r), 0);
	assert_string_equal(r->version, "v1");
	assert_int_equal(gc_rest_map(&disc, "unknown.group/v1", "UnknownType", &r), -ENOENT);
	assert_int_equal(gc_rest_map(&disc, "v1", "", &r), -ENOENT);
	assert_int_equal(gc_rest_map(NULL, "v1", "Pod", &r), -ENOENT);
}

static void test_deletable(void **state)
{
	(void)state;
	size_t n = 0;
	for (size_t i = 0; i < disc.n; i++)
		n += gc_resource_deletable(&res[i]);
	/* pods, nodes, deployments, roles, widgets v2 */
	assert_int_equal(n, 5);
	assert_true(gc_resource_ignored("", "events"));
	assert_true(gc_resource_ignored("events.k8s.io", "events"));
	assert_false(gc_resource_ignored("example.com", "events"));
	assert_false(gc_resource_deletable(&res[6])); /* not preferred */
	assert_false(gc_resource_deletable(&res[8])); /* verbs */
}

static void test_lanes_per_process(void **state)
{
	(void)state;
	/* --concurrent-gc-syncs -> keys in flight per process (processes: min(syncs, 4)) */
	assert_int_equal(gc_lanes_per_process(20), 5); /* the default: 4 x 5 = 20, as upstream */
	assert_int_equal(gc_lanes_per_process(1), 1);
	assert_int_equal(gc_lanes_per_process(3), 1);  /* 3 processes x 1 */
	assert_int_equal(gc_lanes_per_process(6), 2);  /* 4 x 2 = 8 >= 6 */
	assert_int_equal(gc_lanes_per_process(24), 6); /* 4 x 6 */
	assert_int_equal(gc_lanes_per_process(25), GC_MAX_LANES);
	assert_int_equal(gc_lanes_per_process(1000000), GC_MAX_LANES);
	assert_int_equal(gc_lanes_per_process(0), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_lanes_per_process),
	        cmocka_unit_test(test_rest_map),
	        cmocka_unit_test(test_deletable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
