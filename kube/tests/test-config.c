/* SPDX-License-Identifier: Apache-2.0 */
/* kube/tests/test-config.c - kubeconfig loading: merge order, overrides, path resolution, exec
 * config, in-cluster config, and error messages with file:line that never carry secrets. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "kube/config.h"

#define D "kube/tests/fixtures/kubeconfig/"

static const struct kube_config_opts BASE = {
        .kubeconfig_env = "", .home = "/nonexistent", .no_in_cluster = true};

static void test_single(void **state)
{
	(void)state;
	struct kube_config_opts o = BASE;
	struct kube_config *c;
	char err[512];
	o.kubeconfig = D "a.yaml";
	assert_int_equal(kube_config_load(&o, &c, err, sizeof(err)), 0);
	assert_string_equal(c->server, "https://127.0.0.1:6443");
	assert_string_equal(c->context, "dev");
	assert_string_equal(c->namespace, "team-a");
	assert_string_equal(c->tls_server_name, "kubernetes.default");
	assert_string_equal(c->token, "s3cr3t-token-value");
	assert_non_null(c->ca_data);
	assert_true(memcmp(c->ca_data, "-----BEGIN CERTIFICATE-----\n", 28) == 0);
	assert_false(c->insecure_skip_tls_verify);
	kube_config_free(c);

	o.context = "exec";
	assert_int_equal(kube_config_load(&o, &c, err, sizeof(err)), 0);
	assert_string_equal(c->server, "https://a.example:6443");
	assert_string_equal(c->ca_file, D "ca/ca.crt");
	assert_non_null(c->exec);
	assert_string_equal(c->exec->command, D "./bin/cred-helper");
	assert_string_equal(c->exec->args[0], "--cluster");
	assert_string_equal(c->exec->args[1], "dev");
	assert_null(c->exec->args[2]);
	assert_int_equal(c->exec->n_env, 1);
	assert_string_equal(c->exec->env[0].value, "bar");
	assert_true(c->exec->provide_cluster_info);
	kube_config_free(c);

	o.context = "nope";
	assert_int_equal(kube_config_load(&o, &c, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "\"nope\""));

	o.context = NULL;
	o.master = "https://override:443";
	assert_int_equal(kube_config_load(&o, &c, err, sizeof(err)), 0);
	assert_string_equal(c->server, "https://override:443");
	assert_string_equal(c->token, "s3cr3t-token-value");
	kube_config_free(c);
}

static void test_merge(void **state)
{
	(void)state;
	struct kube_config_opts o = BASE;
	struct kube_config *c;
	char err[512];
	/* b first: its current-context and its "shared" and "dev" win */
	o.kubeconfig_env = D "missing.yaml:" D "b.yaml:" D "a.yaml";
	assert_int_equal(kube_config_load(&o, &c, err, sizeof(err)), 0);
	assert_string_equal(c->context, "other");
	assert_string_equal(c->server, "https://b-only.example");
	assert_string_equal(c->client_cert_file, "/etc/k/cert.pem");
	assert_string_equal(c->client_key_file, D "key.pem");
	assert_string_equal(c->token_file, D "tok");
	kube_config_free(c);
	o.context = "exec"; /* context from a, cluster "shared" from b (first definition) */
	assert_int_equal(kube_config_load(&o, &c, err, sizeof(err)), 0);
	assert_string_equal(c->server, "https://b.example:6443");
	assert_true(c->insecure_skip_tls_verify);
	assert_non_null(c->exec);
	kube_config_free(c);
	o.context = "dev"; /* defined in both: b's wins */
	assert_int_equal(kube_config_load(&o, &c, err, sizeof(err)), 0);
	assert_string_equal(c->server, "https://b-only.example");
	kube_config_free(c);
	/* a first */
	o.context = NULL;
	o.kubeconfig_env = D "a.yaml:" D "b.yaml";
	assert_int_equal(kube_config_load(&o, &c, err, sizeof(err)), 0);
	assert_string_equal(c->context, "dev");
	kube_config_free(c);
	/* --kubeconfig overrides KUBECONFIG */
	o.kubeconfig = D "b.yaml";
	assert_int_equal(kube_config_load(&o, &c, err, sizeof(err)), 0);
	assert_string_equal(c->context, "other");
	kube_config_free(c);
	/* an explicit file must exist */
	o.kubeconfig = D "missing.yaml";
	assert_int_equal(kube_config_load(&o, &c, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "missing.yaml"));
}

static void test_errors(void **state)
{
	(void)state;
	struct kube_config_opts o = BASE;
	struct kube_config *c;
	char err[512];
	o.kubeconfig = D "bad-type.yaml";
	assert_int_equal(kube_config_load(&o, &c, err, sizeof(err)), -EINVAL);
	assert_non_null(
	        strstr(err, "bad-type.yaml:4:13: clusters[c].cluster.server: expected a string"));
	o.kubeconfig = D "bad-yaml.yaml";
	assert_int_equal(kube_config_load(&o, &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bad-yaml.yaml:"));
	assert_non_null(strstr(err, "YAML error"));
	o.kubeconfig = D "bad-b64.yaml";
	assert_int_equal(kube_config_load(&o, &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "invalid base64"));
	assert_null(strstr(err, "notbase64")); /* secrets never echoed */
	o.kubeconfig = D "half-cert.yaml";
	assert_int_equal(kube_config_load(&o, &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "must be given together"));
	/* nothing at all */
	o.kubeconfig = NULL;
	assert_int_equal(kube_config_load(&o, &c, err, sizeof(err)), -ENOENT);
	/* --master alone is enough */
	o.master = "http://127.0.0.1:8080/";
	assert_int_equal(kube_config_load(&o, &c, err, sizeof(err)), 0);
	assert_string_equal(c->server, "http://127.0.0.1:8080");
	kube_config_free(c);
	o.master = "ftp://x";
	assert_int_equal(kube_config_load(&o, &c, err, sizeof(err)), -EINVAL);
}

static void test_tls_proxy(void **state)
{
	(void)state;
	struct kube_config_opts o = BASE;
	struct kube_config *c;
	char err[512];
	/* unused clusters with a bad combination do not matter; the selected one does */
	o.kubeconfig = D "tls-proxy.yaml";
	assert_int_equal(kube_config_load(&o, &c, err, sizeof(err)), 0);
	assert_true(c->insecure_skip_tls_verify);
	assert_string_equal(c->proxy_url, "socks5://127.0.0.1:1080");
	kube_config_free(c);
	const char *refused[] = {"insecure-ca", "insecure-cafile"};
	for (int i = 0; i < 2; i++) {
		o.context = refused[i];
		assert_int_equal(kube_config_load(&o, &c, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "specifying a root certificates file with the insecure "
		                            "flag is not allowed"));
	}
	o.context = "bad-proxy";
	assert_int_equal(kube_config_load(&o, &c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "invalid 'proxy-url' \"socks4://127.0.0.1:1080\" for cluster "
	                         "\"bad-proxy\": unsupported scheme \"socks4\", must be http, "
	                         "https, or socks5");
}

static void test_in_cluster(void **state)
{
	(void)state;
	char dir[] = "/tmp/kube-test-XXXXXX", path[512];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path),
	         "mkdir -p %s/var/run/secrets/kubernetes.io/serviceaccount && cd %s/var/run/"
	         "secrets/kubernetes.io/serviceaccount && echo tok > token && echo ca > ca.crt && "
	         "printf 'kube-system\\n'"
	         " > namespace",
	         dir, dir);
	assert_int_equal(system(path), 0);
	struct kube_config_opts o = {.kubeconfig_env = "",
	                             .home = "/nonexistent",
	                             .in_cluster_root = dir,
	                             .service_host = "fd00::1",
	                             .service_port = "443"};
	struct kube_config *c;
	assert_int_equal(kube_config_load(&o, &c, NULL, 0), 0);
	assert_true(c->in_cluster);
	assert_string_equal(c->server, "https://[fd00::1]:443");
	assert_string_equal(c->namespace, "kube-system");
	assert_non_null(strstr(c->token_file, "/serviceaccount/token"));
	kube_config_free(c);
	o.service_host = "";
	assert_int_equal(kube_config_in_cluster(&o, &c, NULL, 0), -ENOENT);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	assert_int_equal(system(path), 0);
}

static void test_base64(void **state)
{
	(void)state;
	unsigned char *out;
	size_t n;
	assert_int_equal(kube_base64_decode("aGVs\nbG8=", 9, &out, &n), 0);
	assert_int_equal(n, 5);
	assert_memory_equal(out, "hello", 5);
	free(out);
	assert_int_equal(kube_base64_decode("aGVsbA==", 8, &out, &n), 0);
	assert_int_equal(n, 4);
	free(out);
	assert_int_equal(kube_base64_decode("a=b", 3, &out, &n), -EINVAL);
	assert_int_equal(kube_base64_decode("a", 1, &out, &n), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_single), cmocka_unit_test(test_merge),
	        cmocka_unit_test(test_errors), cmocka_unit_test(test_in_cluster),
	        cmocka_unit_test(test_base64), cmocka_unit_test(test_tls_proxy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
