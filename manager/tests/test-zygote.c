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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/zygote-abi.h"
#include "manager/zygote.h"
#include "shm/arena.h"

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

/* the whole file, NULs made spaces; "" if unreadable */
static void slurp(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, cap - 1, f) : 0;

	if (f)
		fclose(f);
	for (size_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
}

/* A worker that blocks on its kubeconfig (a FIFO) after mapping its arena: its cmdline, environ
 * and comm are the request's as an exec'd one's would be, and the arena fd is at its number. */
static void test_child_looks_exec_d(void **state)
{
	struct shm_create_opts so = {0};
	struct mgr_zygote *z = NULL;
	char fifo[] = "/tmp/test-zygote-XXXXXX", kc[64], envfd[64], path[64], buf[4096];
	char *argv[] = {worker, "--controller=ttl-controller", kc, NULL};
	char *envp[] = {envfd, "KCMD_TEST_MARK=from-the-request", NULL};
	pid_t pid = 0;
	int afd = -1, ok = 0;

	(void)state;
	assert_non_null(mkdtemp(fifo));
	snprintf(kc, sizeof(kc), "--kubeconfig=%s/kc", fifo);
	snprintf(path, sizeof(path), "%s/kc", fifo);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(shm_arena_create(&so, &afd), 0);
	snprintf(envfd, sizeof(envfd), "KCMD_ARENA_FD=%d", afd);
	assert_int_equal(mgr_zygote_start(dir, &z), 0);
	assert_int_equal(mgr_zygote_spawn(z, argv, envp, &afd, 1, &pid), 0);
	for (int i = 0; i < 400 && !ok; i++) { /* until it blocks on the FIFO */
		char wchan[64];
		snprintf(wchan, sizeof(wchan), "/proc/%d/wchan", (int)pid);
		slurp(wchan, buf, sizeof(buf));
		ok = strstr(buf, "fifo") || strstr(buf, "pipe");
		usleep(5000);
	}
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	slurp(path, buf, sizeof(buf));
	assert_non_null(strstr(buf, "kcmd-worker --controller=ttl-controller --kubeconfig="));
	assert_null(strstr(buf, "--zygote"));
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	slurp(path, buf, sizeof(buf));
	assert_non_null(strstr(buf, "KCMD_TEST_MARK=from-the-request"));
	assert_null(strstr(buf, KCMD_ZYGOTE_ENV_ROOM));
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	slurp(path, buf, sizeof(buf));
	assert_string_equal(buf, "kcmd-worker\n");
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, afd);
	assert_int_equal(access(path, F_OK), 0);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	mgr_zygote_free(z);
	close(afd);
	snprintf(path, sizeof(path), "%s/kc", fifo);
	unlink(path);
	rmdir(fifo);
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
	        cmocka_unit_test(test_child_looks_exec_d),
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
