/* SPDX-License-Identifier: Apache-2.0 */
/* kube/tests/test-discovery.c - aggregated (v2) and legacy discovery documents (hand-written
 * fixtures shaped like a 1.3x apiserver's, not yet captured from the real cluster). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kube/discovery.h"
#include "kube/model.h"
#include "kube/tests/helpers.h"

static void test_v2(void **state)
{
	(void)state;
	size_t len;
	char *b = fixture("discovery-v2-apis.json", &len);
	struct kube_discovery *d;
	assert_int_equal(kube_decode_discovery_v2(b, len, &d), 0);
	assert_int_equal(d->n, 5);
	const struct kube_api_resource *rs = kube_discovery_find(d, "apps", "replicasets", NULL);
	assert_non_null(rs);
	assert_string_equal(rs->version, "v1");
	assert_string_equal(rs->kind, "ReplicaSet");
	assert_true(rs->namespaced);
	assert_true(rs->preferred);
	assert_int_equal(rs->verbs, 0xff);
	const struct kube_api_resource *lc =
	        kube_discovery_find(d, "coordination.k8s.io", "leasecandidates", NULL);
	assert_null(lc); /* only in the non-preferred version */
	lc = kube_discovery_find(d, "coordination.k8s.io", "leasecandidates", "v1beta1");
	assert_non_null(lc);
	assert_false(lc->preferred);
	const struct kube_api_resource *cr =
	        kube_discovery_find(d, "rbac.authorization.k8s.io", "clusterroles", NULL);
	assert_false(cr->namespaced);
	kube_object_free(d);
	free(b);

	b = fixture("discovery-v2-api.json", &len);
	assert_int_equal(kube_decode_discovery_v2(b, len, &d), 0);
	assert_int_equal(d->n, 3);
	const struct kube_api_resource *p = kube_discovery_find(d, "", "pods", NULL);
	assert_non_null(p);
	assert_string_equal(p->group, "");
	const struct kube_api_resource *bi = kube_discovery_find(d, NULL, "bindings", "v1");
	assert_int_equal(bi->verbs, KUBE_VERB_BIT_CREATE);
	assert_false(kube_discovery_find(d, "", "namespaces", NULL)->namespaced);
	kube_object_free(d);
	free(b);
}

static void test_legacy(void **state)
{
	(void)state;
	size_t len;
	char *b = fixture("apigrouplist.json", &len);
	struct kube_api_group_list *gl;
	assert_int_equal(kube_decode_api_group_list(b, len, &gl), 0);
	assert_int_equal(gl->n, 2);
	assert_string_equal(gl->groups[1].name, "autoscaling");
	assert_string_equal(gl->groups[1].preferred_version, "v2");
	assert_int_equal(gl->groups[1].n_versions, 2);
	assert_string_equal(gl->groups[1].versions[1], "v1");
	kube_object_free(gl);
	free(b);

	b = fixture("apiresourcelist-apps.json", &len);
	struct kube_discovery *d;
	assert_int_equal(kube_decode_api_resource_list(b, len, true, &d), 0);
	assert_int_equal(d->n, 1); /* subresources dropped */
	assert_string_equal(d->res[0].group, "apps");
	assert_string_equal(d->res[0].version, "v1");
	assert_string_equal(d->res[0].resource, "replicasets");
	assert_true(d->res[0].preferred);
	assert_true(d->res[0].verbs & KUBE_VERB_BIT_WATCH);
	kube_object_free(d);
	free(b);

	const char *core = "{\"kind\":\"APIResourceList\",\"groupVersion\":\"v1\",\"resources\":[{"
	                   "\"name\":\"pods\","
	                   "\"namespaced\":true,\"kind\":\"Pod\",\"verbs\":[\"get\",\"bogus\"]}]}";
	assert_int_equal(kube_decode_api_resource_list(core, strlen(core), true, &d), 0);
	assert_string_equal(d->res[0].group, "");
	assert_int_equal(d->res[0].verbs, KUBE_VERB_BIT_GET);
	kube_object_free(d);
	assert_int_equal(kube_decode_api_resource_list("{\"resources\":[]}", 16, true, &d),
	                 -EPROTO);
	assert_int_equal(kube_decode_discovery_v2("{\"items\":[", 10, &d), -EBADMSG);
	assert_int_equal(kube_decode_discovery_v2("[]", 2, &d), -EPROTO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_v2),
	        cmocka_unit_test(test_legacy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
