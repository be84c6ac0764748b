/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ValidatingAdmissionPolicy status controller's pure parts (workers/vapstatus/vapstatus.h):
 * reconcile's generation test, the apply body (upstream's apply configuration, as
 * controller_test.go's TestTypeChecking checks the status it leads to), and the kubeconfig
 * handed to the type checker. The type checking itself is upstream's (the e2e test,
 * tests/cluster/e2e/vapstatus_test.go, runs it against real policies).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kube/config.h"
#include "workers/vapstatus/vapstatus.h"

static cJSON *parse(const char *s)
{
	cJSON *j = cJSON_Parse(s);
	assert_non_null(j);
	return j;
}

static void test_needs_check(void **state)
{
	(void)state;
	struct {
		const char *json;
		bool want;
	} cases[] = {
	        {"{\"metadata\":{\"name\":\"p\",\"generation\":1}}", true},
	        {"{\"metadata\":{\"name\":\"p\",\"generation\":1},\"status\":{}}", true},
	        {"{\"metadata\":{\"name\":\"p\",\"generation\":2},\"status\":{"
	         "\"observedGeneration\":1}}",
	         true},
	        {"{\"metadata\":{\"name\":\"p\",\"generation\":2},\"status\":{"
	         "\"observedGeneration\":2}}",
	         false},
	        {"{\"metadata\":{\"name\":\"p\",\"generation\":2},\"status\":{"
	         "\"observedGeneration\":3}}",
	         false},
	        {"{\"metadata\":{\"name\":\"p\"}}", false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *p = parse(cases[i].json);
		assert_int_equal(vap_needs_check(p), cases[i].want);
		cJSON_Delete(p);
	}
}

static void test_apply_body(void **state)
{
	(void)state;
	cJSON *p = parse("{\"metadata\":{\"name\":\"my-policy\",\"generation\":7},"
	                 "\"spec\":{\"validations\":[{\"expression\":\"x\"}]}}");
	cJSON *w = parse("[{\"fieldRef\":\"spec.validations[0].expression\",\"warning\":\"bad\"}]");
	char *s = vap_status_apply_body(p, w);

	assert_non_null(s);
	assert_string_equal(s,
	                    "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":"
	                    "\"ValidatingAdmissionPolicy\",\"metadata\":{\"name\":\"my-policy\"},"
	                    "\"status\":{\"observedGeneration\":7,\"typeChecking\":{"
	                    "\"expressionWarnings\":[{\"fieldRef\":\"spec.validations[0]."
	                    "expression\",\"warning\":\"bad\"}]}}}");
	free(s);
	/* no warning: typeChecking written empty (the apply configuration's nil slice) */
	cJSON *none = parse("[]");
	s = vap_status_apply_body(p, none);
	assert_string_equal(s,
	                    "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":"
	                    "\"ValidatingAdmissionPolicy\",\"metadata\":{\"name\":\"my-policy\"},"
	                    "\"status\":{\"observedGeneration\":7,\"typeChecking\":{}}}");
	free(s);
	s = vap_status_apply_body(p, NULL);
	assert_non_null(strstr(s, "\"typeChecking\":{}"));
	free(s);
	cJSON_Delete(none);
	cJSON_Delete(w);
	cJSON_Delete(p);
	/* no name: nothing to write */
	p = parse("{\"metadata\":{\"generation\":1}}");
	assert_null(vap_status_apply_body(p, NULL));
	cJSON_Delete(p);
}

static void test_kubeconfig(void **state)
{
	(void)state;
	unsigned char ca[] = "PEM";
	struct kube_config c = {.server = "https://10.0.0.1:6443",
	                        .tls_server_name = "kubernetes",
	                        .ca_data = ca,
	                        .ca_data_len = 3,
	                        .token_file = "/proc/self/fd/9"};
	char *s = NULL;
	cJSON *j, *cl, *us;

	assert_int_equal(vap_kubeconfig(&c, &s), 0);
	j = parse(s);
	cl = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "clusters"), 0),
	                         "cluster");
	us = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "users"), 0), "user");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(cl, "server")),
	                    "https://10.0.0.1:6443");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(cl, "tls-server-name")),
	                    "kubernetes");
	assert_string_equal(
	        cJSON_GetStringValue(cJSON_GetObjectItem(cl, "certificate-authority-data")),
	        "UEVN");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(us, "tokenFile")),
	                    "/proc/self/fd/9");
	assert_null(cJSON_GetObjectItem(us, "token"));
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(j, "current-context")),
	                    "kcmd");
	cJSON_Delete(j);
	free(s);

	/* what cannot be handed over is refused, not dropped */
	struct kube_exec_config *fake_exec = (struct kube_exec_config *)&c;
	struct kube_config e = {.server = "https://x", .exec = fake_exec};
	assert_int_equal(vap_kubeconfig(&e, &s), -ENOTSUP);
	assert_null(s);
	struct kube_config b = {.server = "https://x", .username = "u", .password = "p"};
	assert_int_equal(vap_kubeconfig(&b, &s), -ENOTSUP);
	struct kube_config none = {0};
	assert_int_equal(vap_kubeconfig(&none, &s), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_needs_check),
	        cmocka_unit_test(test_apply_body),
	        cmocka_unit_test(test_kubeconfig),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
