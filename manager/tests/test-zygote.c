/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of the zygote (manager/zygote.h) with the real `build/bin/kcmd-worker --zygote`: a child
 * it forks becomes the caller's child (waitid on its pid works, its exit status is the
 * program's), it gets the request's environment, requests the zygote does not serve say
 * -ENOTSUP (the caller execs), and a killed zygote means -ENOTSUP from then on. Skipped (77)
 * without build/bin/kcmd-worker.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/zygote-abi.h"
#include "manager/zygote.h"

static char dir[4096], worker[4200], dispatcher[4200];

/* the status of our child pid, waited for */
static int exit_status(pid_t pid)
{
	siginfo_t si = {0};

	assert_int_equal(waitid(P_PID, (id_t)pid, &si, WEXITED), 0);
	assert_int_equal(si.si_code, CLD_EXITED);
	return si.si_status;
}

static void test_child_is_ours_with_its_env(void **state)
{
	struct mgr_zygote *z = NULL;
	char *argv[] = {worker, "--kube-api-content-type=bogus", NULL};
	char *env_bad[] = {"KCMD_FENCE_FD=x", NULL};
	char *env_none[] = {NULL};
	pid_t pid = 0;
	int flag = -1;

	(void)state;
	assert_int_equal(mgr_zygote_start(dir, &z), 0);
	assert_true(mgr_zygote_pid(z) > 0);
	/* its comm is its own, so nothing counting kcmd-worker processes counts it */
	char path[64], comm[32] = "";
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)mgr_zygote_pid(z));
	for (int i = 0; i < 200 && strncmp(comm, "kcmd-zygote", 11); i++) {
		FILE *f = fopen(path, "r");
		if (f) {
			if (!fgets(comm, sizeof(comm), f))
				comm[0] = '\0';
			fclose(f);
		}
		usleep(5000);
	}
	assert_string_equal(comm, "kcmd-zygote\n");
	/* kcmd-worker's main runs: a bad flag is its exit 2 ... */
	assert_int_equal(mgr_zygote_spawn(z, argv, env_none, NULL, 0, &pid), 0);
	assert_true(pid > 0 && pid != mgr_zygote_pid(z));
	assert_int_equal(exit_status(pid), 2);
	/* ... and the environment is the request's: a bad fence fd is its exit 1 before that */
	assert_int_equal(mgr_zygote_spawn(z, argv, env_bad, NULL, 0, &pid), 0);
	assert_int_equal(exit_status(pid), 1);
	/* the subreaper window is closed again */
	assert_int_equal(prctl(PR_GET_CHILD_SUBREAPER, &flag), 0);
	assert_int_equal(flag, 0);
	mgr_zygote_free(z);
}

static void test_refused_and_gone(void **state)
{
	struct mgr_zygote *z = NULL;
	char *other[] = {"/bin/true", NULL};
	char *elsewhere[] = {"/tmp/kcmd-worker", NULL};
	char *argv[] = {dispatcher, "--v=0", NULL}, *env[] = {NULL};
	char *big = malloc(KCMD_ZYGOTE_ARGV_AREA + 1);
	char *long_argv[] = {worker, big, NULL};
	pid_t pid = 0;

	(void)state;
	assert_non_null(big);
	memset(big, 'a', KCMD_ZYGOTE_ARGV_AREA);
	big[KCMD_ZYGOTE_ARGV_AREA] = '\0';
	assert_int_equal(mgr_zygote_start(dir, &z), 0);
	assert_int_equal(mgr_zygote_spawn(z, other, env, NULL, 0, &pid), -ENOTSUP);
	assert_int_equal(mgr_zygote_spawn(z, elsewhere, env, NULL, 0, &pid), -ENOTSUP);
	assert_int_equal(mgr_zygote_spawn(z, long_argv, env, NULL, 0, &pid), -ENOTSUP);
	/* still serving after those */
	assert_int_equal(mgr_zygote_spawn(z, argv, env, NULL, 0, &pid), 0);
	assert_true(pid > 0);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	/* killed: -ENOTSUP from now on, and its pid is 0 */
	kill(mgr_zygote_pid(z), SIGKILL);
	assert_int_equal(mgr_zygote_spawn(z, argv, env, NULL, 0, &pid), -ENOTSUP);
	assert_int_equal(mgr_zygote_pid(z), 0);
	assert_int_equal(mgr_zygote_spawn(z, argv, env, NULL, 0, &pid), -ENOTSUP);
	mgr_zygote_free(z);
	free(big);
}

static void test_no_worker_binary(void **state)
{
	struct mgr_zygote *z = NULL;

	(void)state;
	assert_int_equal(mgr_zygote_start("/nonexistent", &z), -ENOENT);
	assert_null(z);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_child_is_ours_with_its_env),
	        cmocka_unit_test(test_refused_and_gone),
	        cmocka_unit_test(test_no_worker_binary),
	};
	const char *bin = getenv("KCMD_BIN_DIR");

	snprintf(dir, sizeof(dir), "%s", bin && *bin ? bin : "build/bin");
	if (dir[0] != '/') { /* the zygote serves absolute paths of its own directory */
		char *abs = realpath(dir, NULL);
		if (!abs)
			return 77;
		snprintf(dir, sizeof(dir), "%s", abs);
		free(abs);
	}
	snprintf(worker, sizeof(worker), "%s/kcmd-worker", dir);
	snprintf(dispatcher, sizeof(dispatcher), "%s/kcmd-dispatcher", dir);
	if (access(worker, X_OK) < 0) {
		fprintf(stderr, "test-zygote: no %s: skipped\n", worker);
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
