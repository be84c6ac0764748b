/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The root CA publisher's pure decisions and bodies (workers/rootcacert/rootca.h), with the
 * facts of upstream's publisher_test.go (v1.37): TestConfigMapCreation (a missing ConfigMap is
 * created; one with an added or modified data key is updated; a terminating namespace's update
 * queues nothing) and TestConfigMapUpdateNoHotLoop (a missing annotation is added keeping the
 * data; a present annotation, equal or different, with the right data means no update).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/ctlmetrics.h"
#include "workers/rootcacert/rootca.h"

static const char pem[] = "-----BEGIN CERTIFICATE-----\n"
                          "MIIBhTCCASugAwIBAgIUPC0HHovbnHTGVFhK5zCaKgBIRjIwCgYIKoZIzj0EAwIw\n"
                          "FzEVMBMGA1UEAwwMa2NtZC10ZXN0LWNhMCAXDTI2MTIwMzE1MTMyOVoYDzIxMjYx\n"
                          "MTA5MTUxMzI5WjAXMRUwEwYDVQQDDAxrY21kLXRlc3QtY2EwWTATBgcqhkjOPQIB\n"
                          "BggqhkjOPQMBBwNCAARhZFcWVFGmcqEjB65dn9ZOqiJv44bEJn21fdvapypLajb8\n"
                          "oiW3+Zp9/QlheckAPJ4+TTCAC1RCdYdQzuUtZbFqo1MwUTAdBgNVHQ4EFgQUEdYA\n"
                          "+tCy65HCFTzjVu5FO88hN2gwHwYDVR0jBBgwFoAUEdYA+tCy65HCFTzjVu5FO88h\n"
                          "N2gwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNIADBFAiATkcflvqY2+BOe\n"
                          "N7UGDooFa2cdtnYWzMqg1dm2qAZ5dwIhAN9jCjVigsqX4PpCc00hY4XOyQtzaqzO\n"
                          "Ua+jwxl8YiDU\n"
                          "-----END CERTIFICATE-----\n";

static cJSON *parse(const char *s)
{
	cJSON *j = cJSON_Parse(s);
	assert_non_null(j);
	return j;
}

static const char *sget(const cJSON *o, const char *a, const char *b)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
	x = cJSON_GetObjectItemCaseSensitive(x, b);
	return cJSON_IsString(x) ? x->valuestring : NULL;
}

static void test_create_body(void **state)
{
	char *b = NULL;
	(void)state;
	assert_int_equal(rc_create_body("fake-root-ca", &b), 0);
	cJSON *j = parse(b);
	assert_string_equal(sget(j, "metadata", "name"), "kube-root-ca.crt");
	assert_string_equal(sget(j, "data", "ca.crt"), "fake-root-ca");
	const cJSON *an = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(j, "metadata"), "annotations");
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(an, "kubernetes.io/description");
	assert_true(cJSON_IsString(d));
	assert_string_equal(
	        d->valuestring,
	        "Contains a CA bundle that can be used to verify the kube-apiserver when "
	        "using internal endpoints such as the internal service IP or "
	        "kubernetes.default.svc. No other usage is guaranteed across "
	        "distributions of Kubernetes clusters.");
	cJSON_Delete(j);
	free(b);
}

#define CM(extra_meta, data)                                                                       \
	"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"kube-root-ca."     \
	"crt\","                                                                                   \
	"\"namespace\":\"default\",\"resourceVersion\":\"7\"" extra_meta "}" data "}"
#define ANN(v) ",\"annotations\":{\"kubernetes.io/description\":\"" v "\",\"keep\":\"me\"}"

static void test_update_body(void **state)
{
	char *b = NULL;
	(void)state;
	/* as wanted: nothing (also with a description of another text) */
	const char *ok = CM(ANN("x"), ",\"data\":{\"ca.crt\":\"fake\"}");
	assert_int_equal(rc_update_body(ok, strlen(ok), "fake", &b), 0);
	assert_null(b);
	/* no annotation: update adding it, data kept */
	const char *noann = CM("", ",\"data\":{\"ca.crt\":\"fake\"}");
	assert_int_equal(rc_update_body(noann, strlen(noann), "fake", &b), 0);
	assert_non_null(b);
	cJSON *j = parse(b);
	assert_string_equal(sget(j, "data", "ca.crt"), "fake");
	assert_string_equal(sget(j, "metadata", "resourceVersion"), "7");
	cJSON_Delete(j);
	free(b);
	/* an empty description counts as missing */
	const char *empty = CM(ANN(""), ",\"data\":{\"ca.crt\":\"fake\"}");
	assert_int_equal(rc_update_body(empty, strlen(empty), "fake", &b), 0);
	assert_non_null(b);
	free(b);
	/* an added data key: replaced by exactly ca.crt; other annotations kept */
	const char *added = CM(ANN("x"), ",\"data\":{\"ca.crt\":\"fake\",\"test\":\"test\"}");
	assert_int_equal(rc_update_body(added, strlen(added), "fake", &b), 0);
	assert_non_null(b);
	j = parse(b);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "data")), 1);
	assert_string_equal(sget(j, "metadata", "name"), "kube-root-ca.crt");
	const cJSON *an = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(j, "metadata"), "annotations");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(an, "keep")->valuestring, "me");
	assert_string_equal(
	        cJSON_GetObjectItemCaseSensitive(an, "kubernetes.io/description")->valuestring,
	        RC_DESCRIPTION);
	cJSON_Delete(j);
	free(b);
	/* a modified value, and no data at all: updated to the CA */
	const char *mod = CM(ANN("x"), ",\"data\":{\"ca.crt\":\"abc\"}");
	assert_int_equal(rc_update_body(mod, strlen(mod), "fake", &b), 0);
	j = parse(b);
	assert_string_equal(sget(j, "data", "ca.crt"), "fake");
	cJSON_Delete(j);
	free(b);
	const char *nodata = CM(ANN("x"), "");
	assert_int_equal(rc_update_body(nodata, strlen(nodata), "fake", &b), 0);
	assert_non_null(b);
	free(b);
	assert_int_equal(rc_update_body("[1]", 3, "fake", &b), -EBADMSG);
	assert_int_equal(rc_update_body("{", 1, "fake", &b), -EBADMSG);
}

static void test_results(void **state)
{
	(void)state;
	assert_int_equal(rc_create_result(0), 0);
	assert_int_equal(rc_create_result(-ENOENT), 0);    /* no namespace */
	assert_int_equal(rc_create_result(-ESHUTDOWN), 0); /* namespace terminating */
	assert_int_equal(rc_create_result(-EEXIST), -EEXIST);
	assert_int_equal(rc_create_result(-EACCES), -EACCES);
	assert_true(rc_namespace_update_wanted("Active"));
	assert_false(rc_namespace_update_wanted("Terminating"));
	assert_false(rc_namespace_update_wanted(""));
}

static void test_pem(void **state)
{
	char err[200];
	(void)state;
	assert_int_equal(rc_check_pem(pem, strlen(pem), err, sizeof(err)), 0);
	assert_int_equal(rc_check_pem("fake", 4, err, sizeof(err)), -EINVAL);
	const char garbage[] = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
	assert_int_equal(rc_check_pem(garbage, strlen(garbage), err, sizeof(err)), -EINVAL);
	assert_int_equal(rc_check_pem("", 0, err, sizeof(err)), -EINVAL);
}

static int text_of(struct kcmd_metrics *m, char **ret)
{
	size_t len = 0;
	FILE *f = open_memstream(ret, &len);

	if (!f)
		return -ENOMEM;
	ctlm_render(m, f);
	ctlm_render_dropped(&m, 1, f);
	return fclose(f) == 0 ? 0 : -ENOMEM;
}

static void test_metrics(void **state)
{
	static const struct kcmd_controller c = {.abi = KCMD_CONTROLLER_ABI,
	                                         .name = RC_CONTROLLER,
	                                         .metrics = rc_metric_decl,
	                                         .n_metrics = RC_M_N};
	struct kcmd_metrics *w = NULL, *r = NULL;
	char *text = NULL;
	int fd = ctlm_create(&c);
	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(ctlm_attach(&c, fd, true, &w), 0);
	assert_int_equal(ctlm_attach(&c, fd, false, &r), 0);
	/* nothing observed: nothing rendered */
	assert_int_equal(text_of(r, &text), 0);
	assert_string_equal(text, "");
	free(text);
	/* recordMetrics' codes */
	assert_int_equal(rc_metrics_code(0, 0), 200);
	assert_int_equal(rc_metrics_code(-EEXIST, 409), 409);
	assert_int_equal(rc_metrics_code(-ECONNREFUSED, 0), 500);
	rc_metrics_observe(w, 200, 500000);         /* 0.5 ms: first bucket */
	rc_metrics_observe(w, 200, 3000000);        /* 3 ms: le 0.004 */
	rc_metrics_observe(w, 409, 20000000000ull); /* 20 s: only +Inf */
	assert_int_equal(text_of(r, &text), 0);
	assert_non_null(strstr(text, "# HELP root_ca_cert_publisher_sync_total [ALPHA] Number of "
	                             "namespace syncs happened in root ca cert publisher.\n"
	                             "# TYPE root_ca_cert_publisher_sync_total counter\n"));
	assert_non_null(strstr(text,
	                       "# HELP root_ca_cert_publisher_sync_duration_seconds [ALPHA] "
	                       "Number of namespace syncs happened in root ca cert "
	                       "publisher.\n# TYPE root_ca_cert_publisher_sync_duration_seconds "
	                       "histogram\n"));
	assert_non_null(strstr(text, "root_ca_cert_publisher_sync_total{code=\"200\"} 2\n"));
	assert_non_null(strstr(text, "root_ca_cert_publisher_sync_total{code=\"409\"} 1\n"));
	assert_non_null(strstr(text,
	                       "root_ca_cert_publisher_sync_duration_seconds_bucket{code=\"200\","
	                       "le=\"0.001\"} 1\n"));
	assert_non_null(strstr(text,
	                       "root_ca_cert_publisher_sync_duration_seconds_bucket{code=\"200\","
	                       "le=\"0.002\"} 1\n"));
	assert_non_null(strstr(text,
	                       "root_ca_cert_publisher_sync_duration_seconds_bucket{code=\"200\","
	                       "le=\"0.004\"} 2\n"));
	assert_non_null(strstr(text,
	                       "root_ca_cert_publisher_sync_duration_seconds_bucket{code=\"409\","
	                       "le=\"16.384\"} 0\n"));
	assert_non_null(strstr(text,
	                       "root_ca_cert_publisher_sync_duration_seconds_bucket{code=\"409\","
	                       "le=\"+Inf\"} 1\n"));
	assert_non_null(strstr(text,
	                       "root_ca_cert_publisher_sync_duration_seconds_sum{code=\"200\"} "
	                       "0.0035\n"));
	free(text);
	/* a 65th code: dropped, counted (in both families) */
	for (int code = 500; code < 570; code++)
		rc_metrics_observe(w, code, 1);
	assert_int_equal(text_of(r, &text), 0);
	assert_non_null(strstr(text, "kcmd_metric_series_dropped_total{metric=\"root_ca_cert_"
	                             "publisher_sync_duration_seconds\"} 8\n"));
	assert_non_null(strstr(text, "kcmd_metric_series_dropped_total{metric=\"root_ca_cert_"
	                             "publisher_sync_total\"} 8\n"));
	free(text);
	/* a reader does not write; another region is refused */
	rc_metrics_observe(r, 200, 1);
	ctlm_detach(w);
	ctlm_detach(r);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_create_body), cmocka_unit_test(test_update_body),
	        cmocka_unit_test(test_results),     cmocka_unit_test(test_pem),
	        cmocka_unit_test(test_metrics),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
