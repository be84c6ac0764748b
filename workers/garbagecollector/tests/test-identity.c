/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/garbagecollector/tests/test-identity.c: identity equality, matching, ordering, the
 * objectReference text and the OwnerRefInvalidNamespace message (upstream graph.go,
 * graph_builder.go reportInvalidNamespaceOwnerRef, garbagecollector_test.go TestConflictingData
 * event strings), the namespace rules.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "workers/garbagecollector/identity.h"

static void test_equal_and_match(void **state)
{
	(void)state;
	struct gc_ref a = {"v1", "Pod", "p", "u1", "ns1"}, b = a;
	assert_true(gc_ref_equal(&a, &b));
	b.ns = "ns2";
	assert_false(gc_ref_equal(&a, &b));
	assert_true(gc_ref_same_coords(&a, &b));
	b.ns = "ns1";
	b.api_version = "v2";
	assert_false(gc_ref_equal(&a, &b));
	/* NULL and "" are the same Go string */
	struct gc_ref c = {"v1", "Pod", "p", "u1", NULL}, d = {"v1", "Pod", "p", "u1", ""};
	assert_true(gc_ref_equal(&c, &d));

	struct kube_owner_ref r = {.api_version = "v1",
	                           .kind = "Pod",
	                           .name = "p",
	                           .uid = "u1",
	                           .controller = 1,
	                           .block_owner_deletion = 1};
	assert_true(gc_ref_matches(&r, &a)); /* controller/blockOwnerDeletion never matter */
	r.name = "other";
	assert_false(gc_ref_matches(&r, &a));
	r.name = "p";
	r.kind = "Secret";
	assert_false(gc_ref_matches(&r, &a));

	struct gc_ref o = gc_ref_from_owner(&r, "nsX");
	assert_string_equal(o.ns, "nsX");
	assert_string_equal(o.kind, "Secret");
}

static void test_cmp_order(void **state)
{
	(void)state;
	/* kind, then apiVersion, then namespace, name, uid */
	struct gc_ref a = {"v1", "A", "z", "z", "z"}, b = {"v0", "B", "a", "a", "a"};
	assert_true(gc_ref_cmp(&a, &b) < 0);
	struct gc_ref c = {"apps/v1", "K", "z", "z", "z"}, d = {"v1", "K", "a", "a", "a"};
	assert_true(gc_ref_cmp(&c, &d) < 0);
	struct gc_ref e = {"v1", "K", "z", "u", ""}, f = {"v1", "K", "a", "u", "ns"};
	assert_true(gc_ref_cmp(&e, &f) < 0); /* cluster-scoped ("") before any namespace */
	struct gc_ref g = {"v1", "K", "a", "u2", "ns"}, h = {"v1", "K", "b", "u1", "ns"};
	assert_true(gc_ref_cmp(&g, &h) < 0);
	assert_int_equal(gc_ref_cmp(&g, &g), 0);
}

static void test_format_and_event(void **state)
{
	(void)state;
	char buf[256];
	struct gc_ref r = {"v1", "Pod", "podname2", "poduid2", "ns1"};
	assert_string_equal(gc_ref_format(&r, buf, sizeof buf),
	                    "[v1/Pod, namespace: ns1, name: podname2, uid: poduid2]");

	/* TestConflictingData: a namespaced child in ns1 pointing at a pod of ns2 */
	struct kube_owner_ref owners[] = {
	        {.api_version = "v1",
	         .kind = "Pod",
	         .name = "podname2",
	         .uid = "poduid2",
	         .controller = -1,
	         .block_owner_deletion = -1},
	};
	struct gc_ref child = {"v1", "Pod", "badchild1", "badchilduid1", "ns1"};
	assert_int_equal(gc_invalid_ns_message(&child, owners, 1, "poduid2", buf, sizeof buf), 0);
	assert_string_equal(
	        buf,
	        "ownerRef [v1/Pod, namespace: ns1, name: podname2, uid: poduid2] does not exist in "
	        "namespace \"ns1\"");
	/* a cluster-scoped child: empty namespace in both places */
	struct kube_owner_ref o2[] = {{.api_version = "v1",
	                               .kind = "Pod",
	                               .name = "podname1",
	                               .uid = "poduid1",
	                               .controller = -1,
	                               .block_owner_deletion = -1}};
	struct gc_ref node = {"v1", "Node", "nodename", "nodeuid1", ""};
	assert_int_equal(gc_invalid_ns_message(&node, o2, 1, "poduid1", buf, sizeof buf), 0);
	assert_string_equal(buf, "ownerRef [v1/Pod, namespace: , name: podname1, uid: poduid1] "
	                         "does not exist in namespace \"\"");
	/* no ref with that uid: no event */
	assert_int_equal(gc_invalid_ns_message(&node, o2, 1, "other", buf, sizeof buf), -ENOENT);
	/* too small */
	assert_int_equal(gc_invalid_ns_message(&node, o2, 1, "poduid1", buf, 10), -ENOBUFS);
	/* %q escaping */
	struct gc_ref odd = {"v1", "Pod", "n", "u", "a\"b\\c\n\x01"};
	struct kube_owner_ref o3[] = {{.uid = "x", .controller = -1, .block_owner_deletion = -1}};
	assert_int_equal(gc_invalid_ns_message(&odd, o3, 1, "x", buf, sizeof buf), 0);
	assert_non_null(strstr(buf, "in namespace \"a\\\"b\\\\c\\n\\x01\""));
}

static void test_copy(void **state)
{
	(void)state;
	struct gc_ref src = {"apps/v1", "Deployment", "d", "u", NULL}, dst;
	assert_int_equal(gc_ref_copy(&dst, &src), 0);
	assert_true(gc_ref_equal(&dst, &src));
	assert_string_equal(dst.ns, "");
	gc_ref_clear(&dst);
	assert_null(dst.api_version);
}

static void test_namespace_rules(void **state)
{
	(void)state;
	assert_int_equal(gc_ref_validity("ns1", true), GC_REF_OK);
	assert_int_equal(gc_ref_validity("ns1", false), GC_REF_OK);
	assert_int_equal(gc_ref_validity("", false), GC_REF_OK);
	assert_int_equal(gc_ref_validity("", true), GC_REF_CLUSTER_CHILD_NAMESPACED_OWNER);
	assert_int_equal(gc_ref_validity(NULL, true), GC_REF_CLUSTER_CHILD_NAMESPACED_OWNER);
	assert_string_equal(gc_owner_lookup_ns(true, "ns1"), "ns1");
	assert_string_equal(gc_owner_lookup_ns(false, "ns1"), "");

	const char *fins[] = {"x/y", "foregroundDeletion"};
	struct kube_object_meta m = {.n_finalizers = 2, .finalizers = fins};
	assert_true(gc_has_finalizer(&m, GC_FINALIZER_FOREGROUND));
	assert_false(gc_has_finalizer(&m, GC_FINALIZER_ORPHAN));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_equal_and_match),  cmocka_unit_test(test_cmp_order),
	        cmocka_unit_test(test_format_and_event), cmocka_unit_test(test_copy),
	        cmocka_unit_test(test_namespace_rules),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
