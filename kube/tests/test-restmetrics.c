/* SPDX-License-Identifier: Apache-2.0 */
/* kube/tests/test-restmetrics.c - the shared rest_client_* table: counts from this process and a
 * forked child land in one table, durations fall into client-go's buckets, a full table counts
 * drops, a foreign fd is refused, and kube_config_use_token_file swaps every credential for a
 * re-read token file (what the workers do with --use-service-account-credentials). */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "kube/auth.h"
#include "kube/config.h"
#include "kube/restmetrics.h"

struct sums {
	uint64_t get200, post201, err, rows, dur_count, sum_us;
	uint64_t buckets[KUBE_RM_NBUCKETS];
};

static void sum_row(const struct kube_rest_metrics_row *r, void *ud)
{
	struct sums *s = ud;
	assert_string_equal(r->host, "127.0.0.1:6443");
	s->rows++;
	if (!strcmp(r->method, "GET") && r->code == 200)
		s->get200 += r->count;
	else if (!strcmp(r->method, "POST") && r->code == 201)
		s->post201 += r->count;
	else if (r->code == 0)
		s->err += r->count;
	s->dur_count += r->dur_count;
	s->sum_us += r->dur_sum_usec;
	for (int b = 0; b < KUBE_RM_NBUCKETS; b++)
		s->buckets[b] += r->buckets[b];
}

static void count_rows(const struct kube_rest_metrics_row *r, void *ud)
{
	(void)r;
	(*(int *)ud)++;
}

static void test_shared_counts(void **state)
{
	(void)state;
	int fd = kube_rest_metrics_create();
	assert_true(fd >= 0);
	/* not attached yet: observing is a no-op */
	kube_rest_metrics_observe("GET", 200, "127.0.0.1:6443", 1000);
	assert_int_equal(kube_rest_metrics_attach(fd), 0);
	kube_rest_metrics_observe("GET", 200, "127.0.0.1:6443", 1000);      /* 1 ms -> 0.005 */
	kube_rest_metrics_observe("GET", 200, "127.0.0.1:6443", 300000);    /* 0.3 s -> 0.5 */
	kube_rest_metrics_observe("POST", 201, "127.0.0.1:6443", 70000000); /* 70 s -> +Inf only */
	kube_rest_metrics_observe("GET", 0, "127.0.0.1:6443", -1); /* no response, no duration */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* a child process counts into the same table (it inherited the mapping) */
		for (int i = 0; i < 1000; i++)
			kube_rest_metrics_observe("GET", 200, "127.0.0.1:6443", 10);
		_exit(0);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	struct sums s = {0};
	uint64_t dropped = 99;
	assert_int_equal(kube_rest_metrics_read(fd, sum_row, &s, &dropped), 3);
	assert_int_equal(s.rows, 3);
	assert_int_equal(s.get200, 1002);
	assert_int_equal(s.post201, 1);
	assert_int_equal(s.err, 1);
	assert_int_equal(dropped, 0);
	assert_int_equal(s.dur_count, 1003);
	assert_int_equal(s.buckets[0], 1001); /* <= 0.005 */
	assert_int_equal(s.buckets[4], 1);    /* <= 0.5 */
	uint64_t in_buckets = 0;
	for (int b = 0; b < KUBE_RM_NBUCKETS; b++)
		in_buckets += s.buckets[b];
	assert_int_equal(in_buckets, 1002); /* the 70 s one is only in +Inf (count) */
	assert_int_equal(s.sum_us, 1000 + 300000 + 70000000 + 1000 * 10);

	/* a full table drops and counts the drops */
	char host[32];
	for (int i = 0; i < KUBE_RM_ROWS + 5; i++) {
		snprintf(host, sizeof(host), "h%d:1", i);
		kube_rest_metrics_observe("GET", 200, host, 1);
	}
	int rows = 0;
	assert_int_equal(kube_rest_metrics_read(fd, count_rows, &rows, &dropped), KUBE_RM_ROWS);
	assert_int_equal(rows, KUBE_RM_ROWS);
	assert_int_equal(dropped, KUBE_RM_ROWS + 5 - (KUBE_RM_ROWS - 3));
	close(fd);
}

/* In a forked child: die with the test program, even when an assertion ends it early. */
static void die_with_parent(void)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}

/* ---- multi-process: writers (some killed with SIGKILL mid-run) and a reader ---- */
#define TORTURE_KEYS 2
struct seen {
	uint64_t count[TORTURE_KEYS], dur_count[TORTURE_KEYS], buckets[TORTURE_KEYS];
	int bad; /* 1: buckets > dur_count in a row; 2: a sum went backwards; 3: a foreign row */
};

static void torture_row(const struct kube_rest_metrics_row *r, void *ud)
{
	struct seen *s = ud;
	uint64_t in_buckets = 0;
	for (int b = 0; b < KUBE_RM_NBUCKETS; b++)
		in_buckets += r->buckets[b];
	if (in_buckets > r->dur_count) /* R3: le="60" would exceed le="+Inf" */
		s->bad = 1;
	int k = r->host[1] - '0';
	if (strcmp(r->method, "GET") || r->code != 200 || r->host[0] != 'h' || k < 0 ||
	    k >= TORTURE_KEYS) {
		s->bad = 3;
		return;
	}
	s->count[k] += r->count;
	s->dur_count[k] += r->dur_count;
	s->buckets[k] += in_buckets;
}

/* Reads until *stop; each read must hold R3 per row and never see a key's sums go back (R2).
 * Returns the number of reads, or -bad. */
static long torture_reader(int fd, volatile sig_atomic_t *stop, struct seen *last)
{
	long n = 0;
	memset(last, 0, sizeof(*last));
	while (!*stop) {
		struct seen now = {0};
		if (kube_rest_metrics_read(fd, torture_row, &now, NULL) < 0)
			return -4;
		if (now.bad)
			return -now.bad;
		for (int k = 0; k < TORTURE_KEYS; k++)
			if (now.count[k] < last->count[k] ||
			    now.dur_count[k] < last->dur_count[k] ||
			    now.buckets[k] < last->buckets[k])
				return -2;
		*last = now;
		n++;
	}
	return n;
}

/* A writer: `n` observations (forever when n < 0) of its key. Key 0 cycles through the first
 * and the last bucket only, so Σ buckets == dur_count at rest and any reordering of R3 shows;
 * key 1 also has durations above the last bound and attempts without a duration. */
static void torture_writer(int fd, int key, long n)
{
	static const int64_t usecs[TORTURE_KEYS][4] = {{10, 45000000, 10, 45000000},
	                                               {10, 45000000, 70000000, -1}};
	const int64_t *usec = usecs[key];
	char host[8];
	snprintf(host, sizeof(host), "h%d:1", key);
	die_with_parent();
	if (kube_rest_metrics_attach(fd) < 0)
		_exit(2);
	for (long i = 0; n < 0 || i < n; i++)
		kube_rest_metrics_observe("GET", 200, host, usec[i & 3]);
	_exit(0);
}

static volatile sig_atomic_t reader_stop;
static void on_term(int sig)
{
	(void)sig;
	reader_stop = 1;
}

static pid_t spawn_reader(int fd, int out_fd)
{
	pid_t pid = fork();
	if (pid == 0) {
		struct seen last;
		die_with_parent();
		signal(SIGTERM, on_term);
		long r = torture_reader(fd, &reader_stop, &last);
		(void)!write(out_fd, &r, sizeof(r));
		_exit(0);
	}
	return pid;
}

static long stop_reader(pid_t pid, int in_fd)
{
	static const char *const why[] = {"", "a row with more in its buckets than dur_count (R3)",
	                                  "a sum that went backwards (R2)",
	                                  "a row with a foreign key (R1)",
	                                  "kube_rest_metrics_read failed"};
	long r = -5;
	int st;
	kill(pid, SIGTERM);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_int_equal(read(in_fd, &r, sizeof(r)), (ssize_t)sizeof(r));
	if (r < 0 && r >= -4)
		print_message("the reader saw %s\n", why[-r]);
	return r;
}

static void test_torture_writers_and_reader(void **state)
{
	(void)state;
	/* This test runs first: the process has not attached yet, so each forked writer attaches
	 * to this table (attach is once per process). */
	int fd = kube_rest_metrics_create(), p[2];
	assert_true(fd >= 0);
	assert_int_equal(pipe(p), 0);

	/* phase 1: four writers (two per key, racing for the claim and the counters), exact totals
	 */
	const long per = 200000;
	pid_t rd = spawn_reader(fd, p[1]), w[4];
	assert_true(rd > 0);
	for (int i = 0; i < 4; i++) {
		w[i] = fork();
		assert_true(w[i] >= 0);
		if (w[i] == 0)
			torture_writer(fd, i % TORTURE_KEYS, per);
	}
	for (int i = 0; i < 4; i++) {
		int st;
		assert_int_equal(waitpid(w[i], &st, 0), w[i]);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	long reads = stop_reader(rd, p[0]);
	print_message("phase 1: %ld reads during %ld observations\n", reads, 4 * per);
	assert_true(reads > 0);
	struct seen fin = {0};
	assert_true(kube_rest_metrics_read(fd, torture_row, &fin, NULL) >= TORTURE_KEYS);
	assert_int_equal(fin.bad, 0);
	/* R2: no increment lost */
	assert_int_equal(fin.count[0], 2 * per);
	assert_int_equal(fin.dur_count[0], 2 * per);
	assert_int_equal(fin.buckets[0], 2 * per);
	assert_int_equal(fin.count[1], 2 * per);
	assert_int_equal(fin.dur_count[1], 2 * per / 4 * 3); /* all but the "no duration" ones */
	assert_int_equal(fin.buckets[1], 2 * per / 4 * 2);   /* 10 us and 45 s; not 70 s */

	/* phase 2: writers killed with SIGKILL at random points and restarted; R2/R3 still hold */
	rd = spawn_reader(fd, p[1]);
	assert_true(rd > 0);
	srand((unsigned)getpid());
	for (int i = 0; i < 4; i++) {
		w[i] = fork();
		assert_true(w[i] >= 0);
		if (w[i] == 0)
			torture_writer(fd, i % TORTURE_KEYS, -1);
	}
	for (int round = 0; round < 40; round++) {
		usleep(1000 + rand() % 20000);
		int i = rand() % 4;
		assert_int_equal(kill(w[i], SIGKILL), 0);
		assert_int_equal(waitpid(w[i], NULL, 0), w[i]);
		w[i] = fork();
		assert_true(w[i] >= 0);
		if (w[i] == 0)
			torture_writer(fd, i % TORTURE_KEYS, -1);
	}
	for (int i = 0; i < 4; i++) {
		kill(w[i], SIGKILL);
		waitpid(w[i], NULL, 0);
	}
	reads = stop_reader(rd, p[0]);
	print_message("phase 2: %ld reads, 40 writers killed\n", reads);
	assert_true(reads > 0);
	memset(&fin, 0, sizeof(fin));
	assert_true(kube_rest_metrics_read(fd, torture_row, &fin, NULL) >= TORTURE_KEYS);
	assert_int_equal(fin.bad, 0);
	close(p[0]);
	close(p[1]);
	close(fd);
}

static void test_full_and_foreign(void **state)
{
	(void)state;
	int fd = kube_rest_metrics_create();
	assert_true(fd >= 0);
	/* a fresh table is empty (this process counts into the first test's table: attach is once
	 * per process and a second attach is a no-op) */
	assert_int_equal(kube_rest_metrics_attach(fd), 0);
	kube_rest_metrics_observe("GET", 200, "127.0.0.1:6443", 1);
	int rows = 0;
	uint64_t dropped = 0;
	assert_int_equal(kube_rest_metrics_read(fd, count_rows, &rows, &dropped), 0);
	assert_int_equal(rows, 0);

	int other = memfd_create("not-a-table", MFD_CLOEXEC);
	assert_true(other >= 0);
	assert_int_equal(ftruncate(other, 4096), 0);
	assert_int_equal(kube_rest_metrics_read(other, count_rows, &rows, NULL), -EINVAL);
	close(other);
	close(fd);
}

static void test_token_file_swap(void **state)
{
	(void)state;
	char dir[] = "/tmp/kcmd-rm-XXXXXX", kc[128], tok[64];
	assert_non_null(mkdtemp(dir));
	snprintf(kc, sizeof(kc), "%s/kubeconfig", dir);
	FILE *f = fopen(kc, "w");
	assert_non_null(f);
	fprintf(f, "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: "
	           "https://127.0.0.1:6443\n"
	           "users:\n- name: u\n  user:\n    token: root-token\n    username: x\n    "
	           "password: y\n"
	           "contexts:\n- name: c\n  context:\n    cluster: c\n    user: "
	           "u\ncurrent-context: c\n");
	fclose(f);
	struct kube_config *cfg = NULL;
	struct kube_config_opts o = {.kubeconfig = kc, .no_in_cluster = true};
	char err[256];
	assert_int_equal(kube_config_load(&o, &cfg, err, sizeof(err)), 0);
	assert_string_equal(cfg->token, "root-token");

	int tfd = memfd_create("kcmd-token-test", MFD_CLOEXEC);
	assert_true(tfd >= 0);
	char padded[4096];
	memset(padded, ' ', sizeof(padded));
	memcpy(padded, "sa-token-1", 10);
	assert_int_equal(pwrite(tfd, padded, sizeof(padded), 0), (ssize_t)sizeof(padded));
	snprintf(tok, sizeof(tok), "/proc/self/fd/%d", tfd);
	assert_int_equal(kube_config_use_token_file(cfg, tok), 0);
	assert_null(cfg->token);
	assert_null(cfg->username);
	assert_null(cfg->password);
	assert_string_equal(cfg->server, "https://127.0.0.1:6443");

	struct kube_auth *a = NULL;
	struct kube_credentials c;
	assert_int_equal(kube_auth_new(cfg, &a), 0);
	assert_int_equal(kube_auth_get(a, 1, &c), 0);
	assert_string_equal(c.token, "sa-token-1"); /* the padding is trimmed */
	/* the manager rewrites the memfd in place; after invalidation (a 401) the new one is read
	 */
	memcpy(padded, "sa-token-2", 10);
	assert_int_equal(pwrite(tfd, padded, sizeof(padded), 0), (ssize_t)sizeof(padded));
	kube_auth_invalidate(a);
	assert_int_equal(kube_auth_get(a, 2, &c), 0);
	assert_string_equal(c.token, "sa-token-2");
	kube_auth_free(a);
	kube_config_free(cfg);
	close(tfd);
	unlink(kc);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(
	                test_torture_writers_and_reader), /* first: it must not be attached */
	        cmocka_unit_test(test_shared_counts),
	        cmocka_unit_test(test_full_and_foreign),
	        cmocka_unit_test(test_token_file_swap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
