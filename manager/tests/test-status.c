/* SPDX-License-Identifier: Apache-2.0 */
/* Tests of the status page kcmctl status reads: a round trip through the memfd, a reader in
 * another process while the writer keeps publishing (never a torn copy), a foreign memfd. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "manager/status.h"

static struct mgr_status st, got;

static void fill(struct mgr_status *s, uint32_t gen)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->identity, sizeof(s->identity), "host_%u", gen);
	snprintf(s->holder, sizeof(s->holder), "host_%u", gen);
	snprintf(s->lease, sizeof(s->lease), "kube-system/kcmd");
	s->leader_elect = 1;
	s->leading = gen & 1;
	s->manager_pid = (int32_t)gen;
	s->n_children = 1 + gen % MGR_STATUS_MAX_CHILDREN;
	for (uint32_t i = 0; i < s->n_children; i++) {
		snprintf(s->children[i].name, sizeof(s->children[i].name), "worker-%u", i);
		s->children[i].pid = (int32_t)gen;
		s->children[i].restarts = gen;
	}
}

static void test_round_trip(void **state)
{
	(void)state;
	struct mgr_status_page *p;
	int fd;

	assert_int_equal(mgr_status_create(&p, &fd), 0);
	fill(&st, 7);
	mgr_status_publish(p, &st);
	assert_int_equal(mgr_status_read(fd, &got), 0);
	assert_string_equal(got.identity, "host_7");
	assert_int_equal(got.n_children, 8);
	assert_string_equal(got.children[7].name, "worker-7");
	assert_int_equal(got.children[3].restarts, 7);

	/* a reader process never sees a mix of two publications */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		for (int i = 0; i < 20000; i++) {
			if (mgr_status_read(fd, &got) < 0)
				continue;
			uint32_t gen = (uint32_t)got.manager_pid;
			char want[32];
			snprintf(want, sizeof(want), "host_%u", gen);
			if (strcmp(got.identity, want) || got.n_children != 1 + gen % MGR_STATUS_MAX_CHILDREN ||
			    got.children[got.n_children - 1].restarts != gen)
				_exit(1);
		}
		_exit(0);
	}
	for (uint32_t g = 8; g < 200000; g++) {
		fill(&st, g);
		mgr_status_publish(p, &st);
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			pid = 0;
			break;
		}
	}
	int ws = 0;
	if (pid)
		assert_int_equal(waitpid(pid, &ws, 0), pid);
	assert_true(!pid || (WIFEXITED(ws) && WEXITSTATUS(ws) == 0));
	mgr_status_free(p);
	close(fd);
}

static void test_foreign(void **state)
{
	(void)state;
	int fd = memfd_create("not-status", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(mgr_status_read(fd, &got), -EINVAL);
	close(fd);
	assert_null(mgr_status_free(NULL));
	mgr_status_publish(NULL, &st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_foreign),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
