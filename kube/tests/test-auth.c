/* SPDX-License-Identifier: Apache-2.0 */
/* kube/tests/test-auth.c - token file rotation, exec plugin runs/caching/invalidation and the
 * ExecCredential parser. The plugin is a small shell script written to a temp dir. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "kube/auth.h"

static char dir[64];

static void write_file(const char *name, const char *content, int mode)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
	chmod(p, (mode_t)mode);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/kube-auth-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static const kube_time_t S = 1000000000;

static void test_token_file(void **state)
{
	(void)state;
	char p[256];
	snprintf(p, sizeof(p), "%s/token", dir);
	write_file("token", "first\n", 0600);
	struct kube_config cfg = {.server = "https://x", .token = "static", .token_file = p};
	struct kube_auth *a;
	struct kube_credentials c;
	kube_time_t now = 1000 * S;
	assert_int_equal(kube_auth_new(&cfg, &a), 0);
	assert_int_equal(kube_auth_get(a, now, &c), 0);
	assert_string_equal(c.token, "first");
	write_file("token", "second", 0600);
	assert_int_equal(kube_auth_get(a, now + 30 * S, &c), 0);
	assert_string_equal(c.token, "first"); /* cached within the period */
	assert_int_equal(kube_auth_get(a, now + 61 * S, &c), 0);
	assert_string_equal(c.token, "second");
	unlink(p);
	assert_int_equal(kube_auth_get(a, now + 200 * S, &c), 0);
	assert_string_equal(c.token, "second"); /* last good value kept */
	kube_auth_invalidate(a);
	assert_int_equal(kube_auth_get(a, now + 201 * S, &c), 0);
	assert_string_equal(c.token, "second");
	kube_auth_free(a);
	/* a missing file at start is an error */
	assert_int_equal(kube_auth_new(&cfg, &a), 0);
	assert_int_equal(kube_auth_get(a, now, &c), -ENOENT);
	kube_auth_free(a);
	/* static token only */
	struct kube_config st = {.server = "https://x", .token = "static"};
	assert_int_equal(kube_auth_new(&st, &a), 0);
	assert_int_equal(kube_auth_get(a, now, &c), 0);
	assert_string_equal(c.token, "static");
	kube_auth_free(a);
}

static void test_exec(void **state)
{
	(void)state;
	char script[4096], cmd[256];
	/* counts its runs in a file; prints the run number in the token; checks env and args */
	snprintf(
	        script, sizeof(script),
	        "#!/bin/sh\n"
	        "n=$(cat %s/count 2>/dev/null || echo 0); n=$((n+1)); echo $n > %s/count\n"
	        "[ \"$1\" = --flag ] || exit 3\n"
	        "[ \"$MYVAR\" = myval ] || exit 4\n"
	        "case \"$KUBERNETES_EXEC_INFO\" in *'\"interactive\":false'*) ;; *) exit 5;; esac\n"
	        "printf "
	        "'{\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/v1\","
	        "\"status\":{\"token\":\"tok-%%s\",\"expirationTimestamp\":\"2030-01-01T00:00:"
	        "00Z\"}}' $n\n",
	        dir, dir);
	write_file("plugin.sh", script, 0755);
	snprintf(cmd, sizeof(cmd), "%s/plugin.sh", dir);
	char *args[] = {"--flag", NULL};
	struct kube_exec_env env[] = {{"MYVAR", "myval"}};
	struct kube_exec_config x = {.command = cmd,
	                             .args = args,
	                             .env = env,
	                             .n_env = 1,
	                             .api_version = "client.authentication.k8s.io/v1"};
	struct kube_config cfg = {.server = "https://x", .exec = &x};
	struct kube_auth *a;
	struct kube_credentials c;
	kube_time_t t0, exp;
	assert_int_equal(kube_time_parse("2029-12-31T00:00:00Z", 20, &t0), 0);
	assert_int_equal(kube_time_parse("2030-01-01T00:00:00Z", 20, &exp), 0);
	assert_int_equal(kube_auth_new(&cfg, &a), 0);
	assert_int_equal(kube_auth_get(a, t0, &c), 0);
	assert_string_equal(c.token, "tok-1");
	assert_int_equal(c.expiry, exp);
	assert_int_equal(kube_auth_get(a, t0 + 3600 * S, &c), 0);
	assert_string_equal(c.token, "tok-1"); /* cached */
	kube_auth_invalidate(a);               /* as after a 401 */
	assert_int_equal(kube_auth_get(a, t0 + 3601 * S, &c), 0);
	assert_string_equal(c.token, "tok-2");
	assert_int_equal(kube_auth_get(a, exp - 5 * S, &c), 0); /* about to expire: re-run */
	assert_string_equal(c.token, "tok-3");
	kube_auth_free(a);

	/* wrong apiVersion requested -> the plugin's answer is rejected */
	x.api_version = "client.authentication.k8s.io/v1beta1";
	assert_int_equal(kube_auth_new(&cfg, &a), 0);
	assert_int_equal(kube_auth_get(a, t0, &c), -ENOEXEC);
	assert_non_null(strstr(kube_auth_last_error(a), "no valid"));
	kube_auth_free(a);
	/* failing plugin */
	x.api_version = "client.authentication.k8s.io/v1";
	x.args = NULL;
	assert_int_equal(kube_auth_new(&cfg, &a), 0);
	assert_int_equal(kube_auth_get(a, t0, &c), -ENOEXEC);
	assert_non_null(strstr(kube_auth_last_error(a), "status 3"));
	kube_auth_free(a);
}

static const char WANT_INFO[] =
        "{\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/v1\","
        "\"spec\":{\"cluster\":{\"server\":\"https://x\\\"y\",\"tls-server-name\":\"n\","
        "\"certificate-authority-data\":\"Q0E=\",\"proxy-url\":\"http://p:1\"},"
        "\"interactive\":false}}";

/* This test program is its own exec plugin (argv[1] == "--exec-plugin-check"): it checks what it
 * inherited and exits with the number of the first check that failed. A shell script cannot read
 * its own signal mask reliably (dash masks signals around forks, procfs text shifts under
 * byte-wise reads). */
static int plugin_check(int leak)
{
	DIR *d;
	struct dirent *de;
	sigset_t cur;
	struct stat st, dn;
	if (fcntl(leak, F_GETFD) >= 0) /* before opendir, which would take the lowest free fd */
		return 10;
	d = opendir("/proc/self/fd");
	while (d && (de = readdir(d))) {
		int fd = atoi(de->d_name);
		if (de->d_name[0] != '.' && fd > 2 && fd != dirfd(d))
			return 11;
	}
	if (d)
		closedir(d);
	sigprocmask(SIG_SETMASK, NULL, &cur);
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction sa;
		if (sigismember(&cur, sig) == 1)
			return 12;
		if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
			return 13;
	}
	if (fstat(0, &st) < 0 || stat("/dev/null", &dn) < 0 || st.st_rdev != dn.st_rdev)
		return 14;
	const char *v = getenv("MYVAR");
	if (!v || strcmp(v, "over"))
		return 15;
	v = getenv("KUBERNETES_EXEC_INFO");
	if (!v || strcmp(v, WANT_INFO))
		return 16;
	printf("{\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/v1\","
	       "\"status\":{\"token\":\"clean\"}}");
	return 0;
}

static void test_exec_hygiene(void **state)
{
	(void)state;
	char self[4096], p[256], leakarg[16];
	/* An fd left open without O_CLOEXEC, SIGTERM blocked and SIGUSR1 ignored (as a daemon's
	 * loop has them): the plugin sees none of it, stdin is /dev/null, the kubeconfig's env
	 * wins over ours, and the cluster info is passed as JSON. */
	int leak = open("/dev/null", O_RDONLY);
	assert_true(leak > 2);
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = 0;
	snprintf(leakarg, sizeof(leakarg), "%d", leak);
	char *args[] = {"--exec-plugin-check", leakarg, NULL};
	struct kube_exec_env env[] = {{"MYVAR", "over"}};
	struct kube_exec_config x = {.command = self,
	                             .args = args,
	                             .env = env,
	                             .n_env = 1,
	                             .provide_cluster_info = true,
	                             .api_version = "client.authentication.k8s.io/v1"};
	unsigned char ca[] = "CA";
	struct kube_config cfg = {.server = "https://x\"y",
	                          .tls_server_name = "n",
	                          .ca_data = ca,
	                          .ca_data_len = 2,
	                          .proxy_url = "http://p:1",
	                          .exec = &x};
	struct kube_auth *a;
	struct kube_credentials c;
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, &old);
	struct sigaction ign = {.sa_handler = SIG_IGN}, old_usr1;
	sigaction(SIGUSR1, &ign, &old_usr1);
	setenv("MYVAR", "process", 1); /* the kubeconfig's env wins over ours */
	assert_int_equal(kube_auth_new(&cfg, &a), 0);
	int r = kube_auth_get(a, 1000 * S, &c);
	snprintf(p, sizeof(p), "%s", kube_auth_last_error(a));
	sigprocmask(SIG_SETMASK, &old, NULL);
	sigaction(SIGUSR1, &old_usr1, NULL);
	unsetenv("MYVAR");
	close(leak);
	if (r < 0)
		fprintf(stderr, "plugin: %s\n", p);
	assert_int_equal(r, 0);
	assert_string_equal(c.token, "clean");
	kube_auth_free(a);
}

static void test_exec_nb(void **state)
{
	(void)state;
	char cmd[256];
	/* the non-blocking form: -EINPROGRESS, an fd to watch, then the credentials; a plugin
	 * that never answers is killed at its deadline (not waited for here: checked by state) */
	write_file("nb.sh",
	           "#!/bin/sh\nsleep 0.3\nprintf '{\"kind\":\"ExecCredential\",\"apiVersion\":"
	           "\"client.authentication.k8s.io/v1\",\"status\":{\"token\":\"nb\"}}'\n",
	           0755);
	snprintf(cmd, sizeof(cmd), "%s/nb.sh", dir);
	struct kube_exec_config x = {.command = cmd,
	                             .api_version = "client.authentication.k8s.io/v1"};
	struct kube_config cfg = {.server = "https://x", .exec = &x};
	struct kube_auth *a;
	struct kube_credentials c;
	assert_int_equal(kube_auth_new(&cfg, &a), 0);
	assert_int_equal(kube_auth_get_nb(a, 1000 * S, &c), -EINPROGRESS);
	assert_true(kube_auth_exec_running(a));
	assert_true(kube_auth_exec_fd(a) > 2);
	assert_true(kube_auth_exec_wake_ms(a) > 0);
	int r, steps = 0;
	do {
		struct pollfd pf = {.fd = kube_auth_exec_fd(a), .events = POLLIN};
		poll(&pf, pf.fd >= 0 ? 1 : 0, 10);
		r = kube_auth_exec_step(a);
		steps++;
	} while (r == -EINPROGRESS && steps < 1000);
	assert_int_equal(r, 0);
	assert_false(kube_auth_exec_running(a));
	assert_int_equal(kube_auth_exec_fd(a), -1);
	assert_int_equal(kube_auth_get_nb(a, 1000 * S, &c), 0);
	assert_string_equal(c.token, "nb");
	kube_auth_free(a);
	/* freed while the plugin runs: killed and reaped, no zombie left */
	assert_int_equal(kube_auth_new(&cfg, &a), 0);
	assert_int_equal(kube_auth_get_nb(a, 1000 * S, &c), -EINPROGRESS);
	kube_auth_free(a);
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
}

static void test_parse(void **state)
{
	(void)state;
	struct kube_exec_credential c;
	const char *ok = "{\"apiVersion\":\"client.authentication.k8s.io/"
	                 "v1beta1\",\"kind\":\"ExecCredential\","
	                 "\"spec\":{},\"status\":{\"clientCertificateData\":\"-----BEGIN "
	                 "CERTIFICATE-----\\nX\\n\","
	                 "\"clientKeyData\":\"-----BEGIN PRIVATE KEY-----\\nY\\n\"}}";
	assert_int_equal(kube_parse_exec_credential(ok, strlen(ok),
	                                            "client.authentication.k8s.io/v1beta1", &c),
	                 0);
	assert_null(c.token);
	assert_non_null(strstr(c.cert_pem, "BEGIN CERTIFICATE"));
	assert_int_equal(c.expiry, 0);
	kube_exec_credential_clear(&c);
	const char *bad[] = {
	        "{\"kind\":\"ExecCredential\",\"status\":{}}",
	        "{\"kind\":\"Other\",\"status\":{\"token\":\"t\"}}",
	        "{\"kind\":\"ExecCredential\",\"status\":{\"clientCertificateData\":\"c\"}}",
	        "{\"kind\":\"ExecCredential\",\"status\":{\"token\":\"t\",\"expirationTimestamp\":"
	        "\"soon\"}}",
	        "{\"kind\":\"ExecCredential\",\"status\":{\"token\":\"t\"}",
	        "not json",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_true(kube_parse_exec_credential(bad[i], strlen(bad[i]), NULL, &c) < 0);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--exec-plugin-check") == 0)
		return plugin_check(atoi(argv[2]));
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_token_file),   cmocka_unit_test(test_exec),
	        cmocka_unit_test(test_exec_hygiene), cmocka_unit_test(test_exec_nb),
	        cmocka_unit_test(test_parse),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
