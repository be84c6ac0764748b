/* SPDX-License-Identifier: Apache-2.0 */
/* Tests of /proc parsing and process-tree sampling for `kcmd bench`, and of its pod map. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/podmap.h"
#include "bench/procs.h"

static void test_pstat_parse(void **state)
{
	(void)state;
	struct bench_pstat st;
	/* a comm with spaces and a closing parenthesis */
	const char *s = "4242 (kcmd (w) x) S 17 4242 4242 0 -1 4194560 100 0 0 0 250 50 10 30 20 0 "
	                "1 0 12345 1000 200 "
	                "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
	assert_int_equal(bench_pstat_parse(s, 100, &st), 0);
	assert_int_equal(st.pid, 4242);
	assert_int_equal(st.ppid, 17);
	assert_string_equal(st.comm, "kcmd (w) x");
	assert_int_equal(st.state, 'S');
	assert_true(st.cpu_s == 3.0);       /* (250 + 50) / 100 */
	assert_true(st.child_cpu_s == 0.4); /* (10 + 30) / 100 */
	assert_int_equal(bench_pstat_parse("garbage", 100, &st), -EBADMSG);
	assert_int_equal(bench_pstat_parse("1 (x) S 1", 100, &st), -EBADMSG);
}

static void test_smaps_parse(void **state)
{
	(void)state;
	long pss = 0, rss = 0;
	const char *s = "55d0c0000000-7ffd5e5f8000 ---p 00000000 00:00 0                          "
	                "[rollup]\n"
	                "Rss:               12345 kB\nPss:                6789 kB\nPss_Anon:       "
	                "    100 kB\n";
	assert_int_equal(bench_smaps_parse(s, &pss, &rss), 0);
	assert_int_equal(pss, 6789);
	assert_int_equal(rss, 12345);
	assert_int_equal(bench_smaps_parse("Rss: 1 kB\n", &pss, &rss), -EBADMSG);
}

static void test_pio(void **state)
{
	(void)state;
	unsigned long long r = 0, w = 0;
	assert_int_equal(bench_pio_parse("rchar: 123\nwchar: 45\nsyscr: 3\n", &r, &w), 0);
	assert_true(r == 123 && w == 45);
	assert_int_equal(bench_pio_parse("rchar: 1\n", &r, &w), -EBADMSG);
	/* this process: its CPU and the bytes it writes grow */
	double c0, w0, c1, w1;
	assert_int_equal(bench_proc_cost(getpid(), &c0, &w0), 0);
	FILE *f = fopen("/dev/null", "w");
	assert_non_null(f);
	static char junk[1 << 20];
	for (int i = 0; i < 4; i++)
		assert_int_equal(fwrite(junk, 1, sizeof(junk), f), sizeof(junk));
	fclose(f);
	volatile double x = 0;
	for (long i = 0; i < 50000000; i++)
		x += (double)i;
	assert_int_equal(bench_proc_cost(getpid(), &c1, &w1), 0);
	assert_true(c1 > c0);
	assert_true(w1 - w0 >= 4.0); /* MB */
	assert_int_equal(bench_proc_cost(-1, &c1, &w1), -ESRCH);
}

static void test_tree_sample(void **state)
{
	(void)state;
	struct bench_tree t;
	pid_t child = fork();

	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive a failed test */
		volatile unsigned long x = 0;
		for (;;)
			x++; /* burn CPU until killed */
	}
	assert_true(child > 0);
	/* the child's CPU shows up in the tree (the machine may be busy: wait up to 20 s) */
	for (int i = 0; i < 200; i++) {
		assert_int_equal(bench_tree_sample(getpid(), &t), 0);
		if (t.cpu_s > 0.05)
			break;
		usleep(100000);
	}
	assert_true(t.nprocs >= 2); /* this process and the child */
	assert_true(t.cpu_s > 0.05);
	assert_true(t.pss_mb > 0 && t.rss_mb >= t.pss_mb);
	assert_int_equal(bench_find_child(getpid(), "no-such-comm"), 0);
	char comm[32] = "";
	FILE *f = fopen("/proc/self/comm", "r");
	assert_non_null(f);
	assert_non_null(fgets(comm, sizeof(comm), f));
	fclose(f);
	comm[strcspn(comm, "\n")] = 0;
	assert_int_equal(bench_find_child(getpid(), comm), child); /* a fork keeps the comm */
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	assert_int_equal(bench_tree_sample(child, &t), -ESRCH);
}

/* bench_tree_pids: a child and a grandchild, before the root (the failover kills in that order);
 * a pid not in the tree is never listed; a gone root is -ESRCH. */
static void test_tree_pids(void **state)
{
	(void)state;
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	pid_t child = fork();
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		pid_t g = fork();
		if (g == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			pause();
			_exit(0);
		}
		if (write(pfd[1], &g, sizeof(g)) != sizeof(g))
			_exit(1);
		pause();
		_exit(0);
	}
	assert_true(child > 0);
	pid_t grand = 0;
	assert_int_equal(read(pfd[0], &grand, sizeof(grand)), sizeof(grand));
	pid_t pids[16];
	int n = bench_tree_pids(child, pids, 16);
	assert_int_equal(n, 2);
	assert_int_equal(pids[0], grand);
	assert_int_equal(pids[1], child); /* the root last */
	/* the tree of this process holds both, and this process last */
	n = bench_tree_pids(getpid(), pids, 16);
	assert_true(n >= 3);
	assert_int_equal(pids[n - 1], getpid());
	/* a full table: the root still comes last */
	assert_int_equal(bench_tree_pids(child, pids, 1), 1);
	assert_int_equal(pids[0], child);
	kill(grand, SIGKILL);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	assert_int_equal(bench_tree_pids(child, pids, 16), -ESRCH);
	close(pfd[0]);
	close(pfd[1]);
}

static void test_podmap(void **state)
{
	(void)state;
	struct bench_podmap m = {0};
	bool added;
	char key[64];

	for (int i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "ns-%d/pod-%d", i % 7, i);
		struct bench_pod *p = bench_podmap_put(&m, key, &added);
		assert_non_null(p);
		assert_true(added);
		p->rs = i;
	}
	assert_int_equal(m.live, 5000);
	assert_false(bench_podmap_put(&m, "ns-3/pod-10", &added) == NULL);
	assert_false(added);
	for (int i = 0; i < 5000; i += 2) {
		snprintf(key, sizeof(key), "ns-%d/pod-%d", i % 7, i);
		struct bench_pod *p = bench_podmap_get(&m, key);
		assert_non_null(p);
		assert_int_equal(p->rs, i);
		bench_podmap_del(&m, p);
	}
	assert_int_equal(m.live, 2500);
	/* churn through tombstones: inserts and deletes keep lookups right */
	for (int round = 0; round < 20; round++)
		for (int i = 0; i < 1000; i++) {
			snprintf(key, sizeof(key), "churn-%d/%d", round, i);
			struct bench_pod *p = bench_podmap_put(&m, key, &added);
			assert_non_null(p);
			bench_podmap_del(&m, p);
		}
	assert_int_equal(m.live, 2500);
	for (int i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "ns-%d/pod-%d", i % 7, i);
		struct bench_pod *p = bench_podmap_get(&m, key);
		if (i % 2)
			assert_true(p && p->rs == i);
		else
			assert_null(p);
	}
	bench_podmap_clear(&m);
	assert_null(bench_podmap_get(&m, "ns-1/pod-1"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_pstat_parse), cmocka_unit_test(test_smaps_parse),
	        cmocka_unit_test(test_tree_sample), cmocka_unit_test(test_podmap),
	        cmocka_unit_test(test_pio),         cmocka_unit_test(test_tree_pids)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
