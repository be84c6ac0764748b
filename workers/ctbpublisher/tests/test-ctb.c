/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ClusterTrustBundle publisher's decisions and bodies (workers/ctbpublisher/ctb.h), with
 * the facts of upstream's publisher_test.go (v1.37.2): the bundle's name from the signer and
 * the CA (constructBundleName: prefix, then the hex of the first 12 bytes of SHA-256, checked
 * with the standard SHA-256 vectors of "abc" and ""), a bundle with the right name and
 * content needs nothing, one with other content is updated keeping its other fields, bundles of
 * other signers are told apart.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "workers/ctbpublisher/ctb.h"

static void test_name(void **state)
{
	char n[128];
	(void)state;

	/* sha256("abc") = ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad */
	ctb_bundle_name("kubernetes.io/kube-apiserver-serving", "abc", 3, n);
	assert_string_equal(n, "kubernetes.io:kube-apiserver-serving:ba7816bf8f01cfea414140de");
	/* sha256("") = e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 */
	ctb_bundle_name("a/b/c", "", 0, n);
	assert_string_equal(n, "a:b:c:e3b0c44298fc1c149afbf4c8");
}

static void test_bodies(void **state)
{
	char *body = NULL;
	struct ctb_facts f;
	(void)state;

	assert_int_equal(ctb_create_body("n1", CTB_SIGNER, "CA1", &body), 0);
	assert_string_equal(body, "{\"apiVersion\":\"certificates.k8s.io/v1\",\"kind\":"
	                          "\"ClusterTrustBundle\",\"metadata\":{\"name\":\"n1\"},\"spec\":"
	                          "{\"signerName\":\"kubernetes.io/kube-apiserver-serving\","
	                          "\"trustBundle\":\"CA1\"}}");
	assert_int_equal(ctb_facts(body, strlen(body), "CA1", &f), 0);
	assert_string_equal(f.name, "n1");
	assert_string_equal(f.signer, CTB_SIGNER);
	assert_true(f.same_bundle);
	assert_int_equal(ctb_facts(body, strlen(body), "CA2", &f), 0);
	assert_false(f.same_bundle);
	free(body);

	/* an update replaces the bundle and keeps the rest (resourceVersion, labels) */
	static const char cached[] =
	        "{\"metadata\":{\"name\":\"n1\",\"resourceVersion\":\"7\",\"labels\":{\"a\":"
	        "\"b\"}},\"spec\":{\"signerName\":\"kubernetes.io/kube-apiserver-serving\","
	        "\"trustBundle\":\"OLD\"}}";
	assert_int_equal(ctb_update_body(cached, strlen(cached), "NEW", &body), 0);
	cJSON *o = cJSON_Parse(body);
	cJSON *md = cJSON_GetObjectItemCaseSensitive(o, "metadata");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(md, "resourceVersion")->valuestring,
	                    "7");
	assert_non_null(cJSON_GetObjectItemCaseSensitive(md, "labels"));
	cJSON *spec = cJSON_GetObjectItemCaseSensitive(o, "spec");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(spec, "trustBundle")->valuestring,
	                    "NEW");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(spec, "signerName")->valuestring,
	                    CTB_SIGNER);
	cJSON_Delete(o);
	free(body);

	/* another signer's bundle, and garbage */
	static const char other[] = "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"signerName\":"
	                            "\"example.com/other\",\"trustBundle\":\"CA1\"}}";
	assert_int_equal(ctb_facts(other, strlen(other), "CA1", &f), 0);
	assert_string_equal(f.signer, "example.com/other");
	assert_int_equal(ctb_facts("[]", 2, "CA1", &f), -EBADMSG);
	assert_int_equal(ctb_update_body("nope", 4, "CA1", &body), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_name),
	        cmocka_unit_test(test_bodies),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
