/* SPDX-License-Identifier: Apache-2.0 */
/* kube/tests/test-tls.c - the TLS settings of the transport against `openssl s_server -WWW`
 * with a throw-away CA: CA from certificate-authority-data and from a file, tls-server-name,
 * client certificates (mutual TLS required by the server), insecure-skip-tls-verify, and the
 * failures when the name or the client certificate is wrong. Skips (77) without openssl. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "kube/client.h"

static char dir[64];
static pid_t server_pid;
static int port;

static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static unsigned char *slurp(const char *name, size_t *len)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "rb");
	if (!f)
		return NULL;
	unsigned char *b = malloc(65536);
	*len = fread(b, 1, 65535, f);
	fclose(f);
	return b;
}

static int setup(void **state)
{
	(void)state;
	if (system("openssl version >/dev/null 2>&1") != 0)
		return -1;
	snprintf(dir, sizeof(dir), "/tmp/kube-tls-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	const char *ec = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes";
	if (sh("cd %s && openssl req -x509 %s -keyout ca.key -out ca.crt -subj /CN=kcmd-test-ca "
	       "-days 2 "
	       ">/dev/null 2>&1",
	       dir, ec) ||
	    sh("cd %s && openssl req %s -keyout server.key -out server.csr -subj /CN=apiserver "
	       ">/dev/null 2>&1 && "
	       "printf 'subjectAltName=DNS:kubernetes.default\\n' > san.ext && openssl x509 -req "
	       "-in server.csr "
	       "-CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 2 -extfile san.ext "
	       ">/dev/null 2>&1",
	       dir, ec) ||
	    sh("cd %s && openssl req %s -keyout client.key -out client.csr -subj "
	       "/CN=system:kube-controller-manager "
	       ">/dev/null 2>&1 && openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key "
	       "-CAcreateserial "
	       "-out client.crt -days 2 >/dev/null 2>&1",
	       dir, ec) ||
	    sh("cd %s && printf '{\"kind\":\"Status\",\"status\":\"Success\"}' > ok.json", dir))
		return -1;
	srand((unsigned)time(NULL) ^ (unsigned)getpid());
	for (int attempt = 0; attempt < 20; attempt++) {
		port = 20000 + rand() % 40000;
		server_pid = fork();
		if (server_pid == 0) {
			char acc[32];
			snprintf(acc, sizeof(acc), "127.0.0.1:%d", port);
			if (chdir(dir) < 0)
				_exit(1);
			int devnull = open("/dev/null", 1);
			dup2(devnull, 1);
			dup2(devnull, 2);
			execlp("openssl", "openssl", "s_server", "-accept", acc, "-cert",
			       "server.crt", "-key", "server.key", "-CAfile", "ca.crt", "-Verify",
			       "1", "-WWW", "-quiet", (char *)NULL);
			_exit(127);
		}
		for (int i = 0; i < 100; i++) {
			int fd = socket(AF_INET, SOCK_STREAM, 0);
			struct sockaddr_in a = {.sin_family = AF_INET,
			                        .sin_port = htons((uint16_t)port),
			                        .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
			int ok = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
			close(fd);
			if (ok)
				return 0;
			if (waitpid(server_pid, NULL, WNOHANG) == server_pid)
				break; /* port taken: try another */
			usleep(50000);
		}
		kill(server_pid, SIGKILL);
		waitpid(server_pid, NULL, 0);
	}
	return -1;
}

static int teardown(void **state)
{
	(void)state;
	if (server_pid > 0) {
		kill(server_pid, SIGTERM);
		waitpid(server_pid, NULL, 0);
	}
	return sh("rm -rf %s", dir) == 0 ? 0 : -1;
}

static int get(struct kube_config *cfg, bool insecure_ok)
{
	struct kube_client_opts o = {.config = cfg,
	                             .max_retries = 1,
	                             .retry_base_ms = 5,
	                             .timeout_ms = 5000,
	                             .insecure_ok = insecure_ok};
	struct kube_client *c;
	struct kube_response resp;
	struct kube_request r = {.verb = KUBE_GET, .path = "/ok.json"};
	int e = kube_client_new(&o, &c);
	if (e < 0)
		return e;
	e = kube_client_request(c, &r, NULL, NULL, &resp);
	if (e == 0 && (!resp.body || !strstr(resp.body, "\"Success\"")))
		e = -EBADMSG;
	kube_response_clear(&resp);
	kube_client_free(c);
	return e;
}

static void test_tls(void **state)
{
	(void)state;
	char server[64], cafile[128];
	snprintf(server, sizeof(server), "https://127.0.0.1:%d", port);
	snprintf(cafile, sizeof(cafile), "%s/ca.crt", dir);
	size_t ca_len, cert_len, key_len;
	unsigned char *ca = slurp("ca.crt", &ca_len), *cert = slurp("client.crt", &cert_len),
	              *key = slurp("client.key", &key_len);
	assert_non_null(ca);
	struct kube_config cfg = {.server = server,
	                          .ca_data = ca,
	                          .ca_data_len = ca_len,
	                          .tls_server_name = "kubernetes.default",
	                          .client_cert_data = cert,
	                          .client_cert_data_len = cert_len,
	                          .client_key_data = key,
	                          .client_key_data_len = key_len};
	/* everything right */
	assert_int_equal(get(&cfg, false), 0);
	/* CA from a file */
	struct kube_config f = cfg;
	f.ca_data = NULL;
	f.ca_file = cafile;
	assert_int_equal(get(&f, false), 0);
	/* client certificate and key from files */
	char certfile[128], keyfile[128];
	snprintf(certfile, sizeof(certfile), "%s/client.crt", dir);
	snprintf(keyfile, sizeof(keyfile), "%s/client.key", dir);
	struct kube_config cf = cfg;
	cf.client_cert_data = cf.client_key_data = NULL;
	cf.client_cert_file = certfile;
	cf.client_key_file = keyfile;
	assert_int_equal(get(&cf, false), 0);
	/* the certificate names kubernetes.default, not 127.0.0.1 */
	struct kube_config noname = cfg;
	noname.tls_server_name = NULL;
	assert_int_equal(get(&noname, false), -ECONNABORTED);
	/* the server requires a client certificate */
	struct kube_config nocert = cfg;
	nocert.client_cert_data = nocert.client_key_data = NULL;
	int e = get(&nocert, false);
	assert_true(e == -ECONNABORTED || e == -ECONNRESET);
	/* insecure: no CA, no name, still needs the client cert */
	struct kube_config ins = {.server = server,
	                          .insecure_skip_tls_verify = true,
	                          .client_cert_data = cert,
	                          .client_cert_data_len = cert_len,
	                          .client_key_data = key,
	                          .client_key_data_len = key_len};
	assert_int_equal(get(&ins, false), -EINVAL); /* refused unless the caller opts in */
	assert_int_equal(get(&ins, true), 0);
	free(ca);
	free(cert);
	free(key);
}

int main(void)
{
	if (system("openssl version >/dev/null 2>&1") != 0) {
		printf("openssl not installed\n");
		return 77;
	}
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_tls),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
