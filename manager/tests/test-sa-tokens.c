/* SPDX-License-Identifier: Apache-2.0 */
/* Tests of the pure pieces of --use-service-account-credentials: the TokenRequest answer, the
 * padded token memfd as a worker's kube/auth token file reads it, and the refresh schedule
 * (80 % of the lifetime left, as kube-controller-manager's dynamic client builder). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kube/auth.h"
#include "kube/config.h"
#include "ipc/loop.h"
#include "manager/sa-tokens.h"

static void test_parse(void **state)
{
	(void)state;
	char *tok = NULL;
	int64_t exp = 0;
	const char *ok = "{\"kind\":\"TokenRequest\",\"apiVersion\":\"authentication.k8s.io/v1\","
	                 "\"spec\":{\"audiences\":[\"https://"
	                 "kubernetes.default.svc\"],\"expirationSeconds\":3600},"
	                 "\"status\":{\"token\":\"eyJhbGciOi.x.y\",\"expirationTimestamp\":\"2026-"
	                 "12-03T00:00:00Z\"}}";

	assert_int_equal(mgr_sa_parse_token_request(ok, strlen(ok), &tok, &exp), 0);
	assert_string_equal(tok, "eyJhbGciOi.x.y");
	assert_true(exp == 1796256000LL * 1000000000LL);
	free(tok);
	const char *bad[] = {
	        "{}",
	        "{\"status\":{\"token\":\"\",\"expirationTimestamp\":\"2026-12-03T00:00:00Z\"}}",
	        "{\"status\":{\"token\":\"t\"}}",
	        "{\"status\":{\"token\":\"t\",\"expirationTimestamp\":\"soon\"}}", "not json"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(mgr_sa_parse_token_request(bad[i], strlen(bad[i]), &tok, &exp),
		                 -EBADMSG);
}

static void test_memfd_is_a_token_file(void **state)
{
	(void)state;
	int fd = memfd_create("kcmd-token-test", MFD_CLOEXEC);
	char path[64], big[MGR_SA_TOKEN_FILE_SIZE + 1];
	struct kube_config cfg = {.server = "https://127.0.0.1:6443"};
	struct kube_auth *a;
	struct kube_credentials c;

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, MGR_SA_TOKEN_FILE_SIZE), 0);
	assert_int_equal(mgr_sa_write_token(fd, "first-token-that-is-rather-long"), 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	cfg.token_file = path;
	assert_int_equal(kube_auth_new(&cfg, &a), 0);
	assert_int_equal(kube_auth_get(a, 1, &c), 0);
	assert_string_equal(c.token, "first-token-that-is-rather-long");
	/* a shorter token overwrites the longer one completely (fixed size, space padding) */
	assert_int_equal(mgr_sa_write_token(fd, "second"), 0);
	kube_auth_invalidate(a);
	assert_int_equal(kube_auth_get(a, 2, &c), 0);
	assert_string_equal(c.token, "second");
	kube_auth_free(a);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	assert_int_equal(mgr_sa_write_token(fd, big), -E2BIG);
	assert_int_equal(mgr_sa_write_token(fd, ""), -E2BIG);
	close(fd);
}

static void test_refresh_delay(void **state)
{
	(void)state;
	const int64_t s = 1000000000;
	/* 3600 s left: ask again after 2880 s (720 s, 20 %, before expiry) */
	assert_int_equal(mgr_sa_refresh_delay_usec(0, 3600 * s), 2880000000ull);
	assert_int_equal(mgr_sa_refresh_delay_usec(100 * s, 700 * s), 480000000ull);
	/* expired or about to: soon, but never a busy loop */
	assert_int_equal(mgr_sa_refresh_delay_usec(10 * s, 5 * s), 1000000ull);
	assert_int_equal(mgr_sa_refresh_delay_usec(0, s / 2), 1000000ull);
}

/* kubeadm's setup, --controllers=* with --use-service-account-credentials, adds one account per
 * controller that names one (47 in kcmd): each gets its own token memfd; one past the set's
 * capacity is refused with -EINVAL instead of overrunning it. */
static void test_many_accounts(void **state)
{
	(void)state;
	struct ipc_loop *loop = NULL;
	struct mgr_sa_tokens *t = NULL;
	char name[64];
	int fds[MGR_SA_MAX_ACCOUNTS];

	assert_true(MGR_SA_MAX_ACCOUNTS >= 64);
	assert_int_equal(ipc_loop_new(&loop, IPC_LOOP_BACKEND_EPOLL), 0);
	/* the client is only used once fetching starts, which this test never does */
	assert_int_equal(
	        mgr_sa_tokens_new(loop, (struct kube_client *)loop, "kube-system", NULL, NULL, &t),
	        0);
	for (int i = 0; i < MGR_SA_MAX_ACCOUNTS; i++) {
		snprintf(name, sizeof(name), "controller-%d", i);
		fds[i] = mgr_sa_tokens_add(t, name);
		assert_true(fds[i] >= 0);
		for (int j = 0; j < i; j++)
			assert_int_not_equal(fds[i], fds[j]);
	}
	assert_int_equal(mgr_sa_tokens_add(t, "one-too-many"), -EINVAL);
	assert_false(mgr_sa_tokens_ready(t));
	mgr_sa_tokens_free(t);
	ipc_loop_free(loop);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_parse),
	        cmocka_unit_test(test_memfd_is_a_token_file),
	        cmocka_unit_test(test_refresh_delay),
	        cmocka_unit_test(test_many_accounts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
