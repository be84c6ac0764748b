/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/ctlmetrics (controllers' declared metrics): the exposition text as client_golang writes
 * it (HELP/TYPE, stability, escaping, sorting, histogram buckets, Go float formatting), the
 * errors of the update API, the table-full rule, the layout check, and the shared-memory
 * invariants with real processes: concurrent writers against a final-sum oracle, a writer
 * killed with SIGKILL mid-run, a claim left by a dead writer, and a negative control that makes
 * the oracle fire on a corrupted counter.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/ctlmetrics.h"

enum { M_SYNCS, M_PLAIN, M_BYNS, M_HIST, M_HIST_CODE, M_GAUGE, M_N };

static const char *const results[] = {"success", "error", NULL};
static const char *const modes[] = {"NonIndexed", "Indexed", NULL};
static const char *const reasons[] = {"A", "B", NULL};
static const struct kcmd_metric_label syncs_l[] = {{"result", results}, {"mode", modes}};
static const struct kcmd_metric_label byns_l[] = {{"namespace", NULL}, {"reason", reasons}};
static const struct kcmd_metric_label code_l[] = {{"code", NULL}};
static const double hbuckets[] = {0.1, 0.2, 0.4, 0.8, 1.6, 3.2};
static const double cbuckets[] = {0.001, 0.002, 0.004, 16.384};

static const struct kcmd_metric metrics[M_N] = {
        [M_SYNCS] = {.name = "t_syncs_total",
                     .help = "Syncs.\n\tSecond line with a \\ backslash.",
                     .type = KCMD_METRIC_COUNTER,
                     .stability = KCMD_METRIC_STABLE,
                     .labels = syncs_l,
                     .n_labels = 2},
        [M_PLAIN] = {.name = "t_plain_total", .help = "Plain.", .type = KCMD_METRIC_COUNTER},
        [M_BYNS] = {.name = "t_byns_total",
                    .help = "By namespace.",
                    .type = KCMD_METRIC_COUNTER,
                    .stability = KCMD_METRIC_ALPHA,
                    .labels = byns_l,
                    .n_labels = 2,
                    .max_series = 8},
        [M_HIST] = {.name = "t_seconds",
                    .help = "Hist.",
                    .type = KCMD_METRIC_HISTOGRAM,
                    .stability = KCMD_METRIC_ALPHA,
                    .buckets = hbuckets,
                    .n_buckets = 6},
        [M_HIST_CODE] = {.name = "t_code_seconds",
                         .help = "By code.",
                         .type = KCMD_METRIC_HISTOGRAM,
                         .labels = code_l,
                         .n_labels = 1,
                         .buckets = cbuckets,
                         .n_buckets = 4},
        [M_GAUGE] = {.name = "t_gauge", .help = "G.", .type = KCMD_METRIC_GAUGE},
};

static const struct kcmd_controller ctl = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = "test-controller",
        .metrics = metrics,
        .n_metrics = M_N,
};

static char *render(struct kcmd_metrics *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	ctlm_render(m, f);
	ctlm_render_dropped(&m, 1, f);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* The oracle: the value of the sample line that starts with `series ` (-1 when absent). */
static long long sample(const char *text, const char *series)
{
	size_t n = strlen(series);
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, series, n) && p[n] == ' ')
			return strtoll(p + n + 1, NULL, 10);
	return -1;
}

static void open_pair(int *fd, struct kcmd_metrics **w, struct kcmd_metrics **r)
{
	*fd = ctlm_create(&ctl);
	assert_true(*fd >= 0);
	assert_int_equal(ctlm_attach(&ctl, *fd, true, w), 0);
	assert_int_equal(ctlm_attach(&ctl, *fd, false, r), 0);
}

static void test_render_format(void **state)
{
	(void)state;
	struct kcmd_metrics *w, *r;
	int fd;
	char *t;

	open_pair(&fd, &w, &r);
	/* nothing updated: only the families without labels (client_golang's plain metrics) */
	t = render(r);
	assert_string_equal(t, "# HELP t_plain_total Plain.\n# TYPE t_plain_total counter\n"
	                       "t_plain_total 0\n"
	                       "# HELP t_seconds [ALPHA] Hist.\n# TYPE t_seconds histogram\n"
	                       "t_seconds_bucket{le=\"0.1\"} 0\nt_seconds_bucket{le=\"0.2\"} 0\n"
	                       "t_seconds_bucket{le=\"0.4\"} 0\nt_seconds_bucket{le=\"0.8\"} 0\n"
	                       "t_seconds_bucket{le=\"1.6\"} 0\nt_seconds_bucket{le=\"3.2\"} 0\n"
	                       "t_seconds_bucket{le=\"+Inf\"} 0\nt_seconds_sum 0\n"
	                       "t_seconds_count 0\n"
	                       "# HELP t_gauge G.\n# TYPE t_gauge gauge\nt_gauge 0\n");
	free(t);
	assert_int_equal(kcmd_metric_inc(w, M_SYNCS, (const char *[]){"error", "Indexed"}), 0);
	assert_int_equal(kcmd_metric_add(w, M_SYNCS, (const char *[]){"success", "Indexed"}, 2), 0);
	assert_int_equal(kcmd_metric_inc(w, M_SYNCS, (const char *[]){"success", "NonIndexed"}), 0);
	/* Add(0) creates the series, as client_golang's WithLabelValues(...).Add(0) */
	assert_int_equal(kcmd_metric_add(w, M_SYNCS, (const char *[]){"error", "NonIndexed"}, 0),
	                 0);
	assert_int_equal(kcmd_metric_set(w, M_GAUGE, NULL, 2.5), 0);
	assert_int_equal(kcmd_metric_gauge_add(w, M_GAUGE, NULL, -1), 0);
	t = render(r);
	/* help escaped (newline, backslash; the tab kept), stability, labels sorted by name, series
	 * by their values in that order */
	assert_non_null(strstr(
	        t, "# HELP t_syncs_total [STABLE] Syncs.\\n\tSecond line with a \\\\ backslash.\n"
	           "# TYPE t_syncs_total counter\n"
	           "t_syncs_total{mode=\"Indexed\",result=\"error\"} 1\n"
	           "t_syncs_total{mode=\"Indexed\",result=\"success\"} 2\n"
	           "t_syncs_total{mode=\"NonIndexed\",result=\"error\"} 0\n"
	           "t_syncs_total{mode=\"NonIndexed\",result=\"success\"} 1\n"
	           "# HELP t_plain_total"));
	assert_non_null(strstr(t, "t_gauge 1.5\n"));
	assert_null(strstr(t, "t_byns_total"));   /* untouched vector: no family at all */
	assert_null(strstr(t, "t_code_seconds")); /* idem */
	assert_null(strstr(t, "kcmd_metric_series_dropped_total"));
	free(t);
	ctlm_detach(w);
	ctlm_detach(r);
	close(fd);
}

static void test_histogram_buckets(void **state)
{
	(void)state;
	struct kcmd_metrics *w, *r;
	int fd;
	char *t;

	open_pair(&fd, &w, &r);
	assert_int_equal(kcmd_metric_observe(w, M_HIST, NULL, 0.05), 0); /* le 0.1 */
	assert_int_equal(kcmd_metric_observe(w, M_HIST, NULL, 0.1), 0);  /* inclusive bound */
	assert_int_equal(kcmd_metric_observe(w, M_HIST, NULL, 3.0), 0);  /* le 3.2 */
	assert_int_equal(kcmd_metric_observe(w, M_HIST, NULL, 1000), 0); /* +Inf only */
	assert_int_equal(kcmd_metric_observe(w, M_HIST, NULL, NAN), -EINVAL);
	assert_int_equal(kcmd_metric_observe(w, M_HIST_CODE, (const char *[]){"200"}, 0.0005), 0);
	assert_int_equal(kcmd_metric_observe(w, M_HIST_CODE, (const char *[]){"200"}, 0.003), 0);
	assert_int_equal(kcmd_metric_observe(w, M_HIST_CODE, (const char *[]){"409"}, 20), 0);
	t = render(r);
	assert_non_null(strstr(t, "t_seconds_bucket{le=\"0.1\"} 2\nt_seconds_bucket{le=\"0.2\"} 2\n"
	                          "t_seconds_bucket{le=\"0.4\"} 2\nt_seconds_bucket{le=\"0.8\"} 2\n"
	                          "t_seconds_bucket{le=\"1.6\"} 2\nt_seconds_bucket{le=\"3.2\"} 3\n"
	                          "t_seconds_bucket{le=\"+Inf\"} 4\nt_seconds_sum 1003.15\n"
	                          "t_seconds_count 4\n"));
	assert_non_null(strstr(t, "# HELP t_code_seconds By code.\n"
	                          "# TYPE t_code_seconds histogram\n"
	                          "t_code_seconds_bucket{code=\"200\",le=\"0.001\"} 1\n"
	                          "t_code_seconds_bucket{code=\"200\",le=\"0.002\"} 1\n"
	                          "t_code_seconds_bucket{code=\"200\",le=\"0.004\"} 2\n"
	                          "t_code_seconds_bucket{code=\"200\",le=\"16.384\"} 2\n"
	                          "t_code_seconds_bucket{code=\"200\",le=\"+Inf\"} 2\n"
	                          "t_code_seconds_sum{code=\"200\"} 0.0035\n"
	                          "t_code_seconds_count{code=\"200\"} 2\n"
	                          "t_code_seconds_bucket{code=\"409\",le=\"0.001\"} 0\n"));
	assert_non_null(strstr(t, "t_code_seconds_bucket{code=\"409\",le=\"+Inf\"} 1\n"
	                          "t_code_seconds_sum{code=\"409\"} 20\n"));
	free(t);
	ctlm_detach(w);
	ctlm_detach(r);
	close(fd);
}

static void test_label_escaping_and_full_table(void **state)
{
	(void)state;
	struct kcmd_metrics *w, *r;
	char ns[32], big[300];
	int fd, full = 0;
	char *t;

	open_pair(&fd, &w, &r);
	assert_int_equal(kcmd_metric_inc(w, M_BYNS, (const char *[]){"a\"b\\c\nd", "A"}), 0);
	assert_int_equal(kcmd_metric_inc(w, M_BYNS, (const char *[]){"a\"b\\c\nd", "A"}), 0);
	t = render(r);
	assert_non_null(strstr(t, "# HELP t_byns_total [ALPHA] By namespace.\n"
	                          "# TYPE t_byns_total counter\n"
	                          "t_byns_total{namespace=\"a\\\"b\\\\c\\nd\",reason=\"A\"} 2\n"));
	free(t);
	/* a fixed label's other value is refused; a free label's too long value is dropped */
	assert_int_equal(kcmd_metric_inc(w, M_BYNS, (const char *[]){"x", "C"}), -EINVAL);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	assert_int_equal(kcmd_metric_inc(w, M_BYNS, (const char *[]){big, "A"}), -ENAMETOOLONG);
	/* 8 series fit (one used); the 8th new key onwards is dropped, counted, not lost silently
	 */
	for (int i = 0; i < 10; i++) {
		snprintf(ns, sizeof(ns), "ns-%d", i);
		full += kcmd_metric_inc(w, M_BYNS, (const char *[]){ns, "B"}) == -ENOSPC;
	}
	assert_int_equal(full, 3);
	/* existing series still count when the table is full */
	assert_int_equal(kcmd_metric_inc(w, M_BYNS, (const char *[]){"ns-0", "B"}), 0);
	assert_int_equal(ctlm_dropped(r, M_BYNS), 4);
	t = render(r);
	assert_int_equal(sample(t, "t_byns_total{namespace=\"ns-0\",reason=\"B\"}"), 2);
	assert_int_equal(sample(t, "t_byns_total{namespace=\"ns-6\",reason=\"B\"}"), 1);
	assert_int_equal(sample(t, "t_byns_total{namespace=\"ns-7\",reason=\"B\"}"), -1);
	assert_non_null(strstr(t, "# TYPE kcmd_metric_series_dropped_total counter\n"
	                          "kcmd_metric_series_dropped_total{metric=\"t_byns_total\"} 4\n"));
	free(t);
	ctlm_detach(w);
	ctlm_detach(r);
	close(fd);
}

static void test_api_errors(void **state)
{
	(void)state;
	struct kcmd_metrics *w, *r;
	int fd;

	open_pair(&fd, &w, &r);
	assert_int_equal(kcmd_metric_inc(NULL, M_PLAIN, NULL), -EBADF);
	assert_int_equal(kcmd_metric_inc(r, M_PLAIN, NULL), -EBADF); /* a reader never writes */
	assert_int_equal(kcmd_metric_inc(w, M_N, NULL), -EINVAL);
	assert_int_equal(kcmd_metric_inc(w, M_HIST, NULL), -EINVAL); /* wrong type */
	assert_int_equal(kcmd_metric_observe(w, M_PLAIN, NULL, 1), -EINVAL);
	assert_int_equal(kcmd_metric_set(w, M_PLAIN, NULL, 1), -EINVAL);
	assert_int_equal(kcmd_metric_inc(w, M_SYNCS, NULL), -EINVAL); /* labels missing */
	assert_int_equal(kcmd_metric_inc(w, M_SYNCS, (const char *[]){"success", NULL}), -EINVAL);
	assert_int_equal(kcmd_metric_inc(w, M_SYNCS, (const char *[]){"ok", "Indexed"}), -EINVAL);
	/* the region is sealed: no process can shrink it under the others */
	assert_true(ftruncate(fd, 0) < 0);
	assert_true(fcntl(fd, F_GET_SEALS) & F_SEAL_SEAL);
	ctlm_detach(w);
	ctlm_detach(r);
	close(fd);
}

static void test_declaration_and_layout_checks(void **state)
{
	(void)state;
	struct kcmd_metrics *m = NULL;
	struct kcmd_metric other[M_N];
	struct kcmd_controller c2 = ctl;
	static const double desc[] = {1, 0.5};
	static const struct kcmd_metric_label le[] = {{"le", NULL}};
	int fd = ctlm_create(&ctl), bad;

	assert_true(fd >= 0);
	memcpy(other, metrics, sizeof(other));
	other[M_HIST].buckets = cbuckets; /* same shape, other bounds: another declaration */
	other[M_HIST].n_buckets = 4;
	c2.metrics = other;
	assert_int_equal(ctlm_attach(&c2, fd, false, &m), -EPROTO);
	close(fd);
	bad = memfd_create("not-metrics", MFD_CLOEXEC);
	assert_int_equal(ctlm_attach(&ctl, bad, false, &m), -EPROTO); /* empty */
	assert_int_equal(ftruncate(bad, 1 << 20), 0);
	assert_int_equal(ctlm_attach(&ctl, bad, false, &m), -EPROTO); /* no magic */
	close(bad);
	/* declarations ctlm_check refuses */
	memcpy(other, metrics, sizeof(other));
	other[M_HIST].buckets = desc;
	other[M_HIST].n_buckets = 2;
	assert_int_equal(ctlm_create(&c2), -EINVAL); /* buckets not ascending */
	memcpy(other, metrics, sizeof(other));
	other[M_BYNS].labels = le;
	other[M_BYNS].n_labels = 1;
	assert_int_equal(ctlm_create(&c2), -EINVAL); /* `le` is the histogram's */
	memcpy(other, metrics, sizeof(other));
	other[M_GAUGE].name = "t_plain_total";
	assert_int_equal(ctlm_create(&c2), -EINVAL); /* a name twice */
	c2.n_metrics = 0;
	assert_int_equal(ctlm_create(&c2), -ENOENT);
}

static void test_format_float(void **state)
{
	(void)state;
	/* what Go's strconv.FormatFloat(v, 'g', -1, 64) writes */
	static const struct {
		double v;
		const char *go;
	} cases[] = {{0, "0"},           {1, "1"},
	             {512, "512"},       {0.001, "0.001"},
	             {16.384, "16.384"}, {0.1 * 8192, "819.2"},
	             {1e-5, "1e-05"},    {0.0001, "0.0001"},
	             {123456, "123456"}, {1234567, "1.234567e+06"},
	             {1e21, "1e+21"},    {0.1 + 0.2, "0.30000000000000004"},
	             {-2.5, "-2.5"},     {INFINITY, "+Inf"},
	             {NAN, "NaN"}};
	char out[40];
	double le = 0.001;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ctlm_format_float(out, sizeof(out), cases[i].v);
		assert_string_equal(out, cases[i].go);
	}
	/* prometheus.ExponentialBuckets(0.001, 2, 15) */
	for (int i = 0; i < 14; i++)
		le *= 2;
	ctlm_format_float(out, sizeof(out), le);
	assert_string_equal(out, "16.384");
}

/* ---- processes ----------------------------------------------------------------------------- */
#define WRITERS 4
#define ITERS   20000

static void writer_loop(int fd, int id, long iters)
{
	struct kcmd_metrics *w;
	char ns[16];

	if (ctlm_attach(&ctl, fd, true, &w) < 0)
		_exit(2);
	for (long i = 0; iters < 0 || i < iters; i++) {
		snprintf(ns, sizeof(ns), "ns-%ld", i % 5); /* 5 keys every writer races to claim */
		if (kcmd_metric_inc(w, M_PLAIN, NULL) < 0 ||
		    kcmd_metric_inc(w, M_SYNCS, (const char *[]){"success", "Indexed"}) < 0 ||
		    kcmd_metric_inc(w, M_BYNS, (const char *[]){ns, "A"}) < 0 ||
		    kcmd_metric_observe(w, M_HIST, NULL, (double)(i % 4)) < 0 ||
		    kcmd_metric_gauge_add(w, M_GAUGE, NULL, 1) < 0)
			_exit(3);
	}
	(void)id;
	ctlm_detach(w);
	_exit(0);
}

static void check_consistent(const char *t, long long total)
{
	long long byns = 0;
	char s[64];

	assert_int_equal(sample(t, "t_plain_total"), total);
	assert_int_equal(sample(t, "t_syncs_total{mode=\"Indexed\",result=\"success\"}"), total);
	for (int k = 0; k < 5; k++) {
		snprintf(s, sizeof(s), "t_byns_total{namespace=\"ns-%d\",reason=\"A\"}", k);
		long long v = sample(t, s);
		assert_true(v >= 0);
		byns += v;
	}
	assert_int_equal(byns, total);
	assert_int_equal(sample(t, "t_seconds_count"), total);
	assert_int_equal(sample(t, "t_seconds_bucket{le=\"+Inf\"}"), total);
}

static void test_concurrent_writers_oracle(void **state)
{
	(void)state;
	struct kcmd_metrics *r;
	pid_t pid[WRITERS];
	int fd = ctlm_create(&ctl), st;
	char *t;

	assert_true(fd >= 0);
	assert_int_equal(ctlm_attach(&ctl, fd, false, &r), 0);
	for (int i = 0; i < WRITERS; i++) {
		pid[i] = fork();
		assert_true(pid[i] >= 0);
		if (pid[i] == 0)
			writer_loop(fd, i, ITERS);
	}
	for (int i = 0; i < WRITERS; i++) {
		assert_int_equal(waitpid(pid[i], &st, 0), pid[i]);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	t = render(r);
	check_consistent(t, (long long)WRITERS * ITERS);
	/* the double sum (CAS loop) lost nothing: each writer observed 0,1,2,3 ITERS/4 times */
	char want[64];
	snprintf(want, sizeof(want), "t_seconds_sum %d\n", WRITERS * (ITERS / 4) * 6);
	assert_non_null(strstr(t, want));
	snprintf(want, sizeof(want), "t_gauge %d\n", WRITERS * ITERS);
	assert_non_null(strstr(t, want));
	/* one series per key although every writer raced to claim each */
	assert_int_equal(ctlm_dropped(r, M_BYNS), 0);
	free(t);

	/* negative control: the oracle fires on a counter off by one. Find the plain counter's
	 * cell by its value in a writable mapping of the region and corrupt it. */
	struct stat sb;
	assert_int_equal(fstat(fd, &sb), 0);
	uint64_t *p = mmap(NULL, (size_t)sb.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(p != MAP_FAILED);
	size_t hits = 0, n = (size_t)sb.st_size / 8;
	for (size_t i = 0; i < n; i++)
		if (p[i] == (uint64_t)WRITERS * ITERS) {
			p[i]--; /* the plain counter, the syncs cell, the histogram's count */
			hits++;
		}
	assert_true(hits >= 1);
	t = render(r);
	assert_int_not_equal(sample(t, "t_plain_total"), (long long)WRITERS * ITERS);
	free(t);
	munmap(p, (size_t)sb.st_size);
	ctlm_detach(r);
	close(fd);
}

static void test_writer_killed_mid_run(void **state)
{
	(void)state;
	struct kcmd_metrics *r;
	pid_t pid[WRITERS], victim;
	int fd = ctlm_create(&ctl), st;
	char *t;

	assert_true(fd >= 0);
	assert_int_equal(ctlm_attach(&ctl, fd, false, &r), 0);
	victim = fork();
	assert_true(victim >= 0);
	if (victim == 0)
		writer_loop(fd, 99, -1); /* forever, until killed */
	for (int i = 0; i < WRITERS - 1; i++) {
		pid[i] = fork();
		assert_true(pid[i] >= 0);
		if (pid[i] == 0)
			writer_loop(fd, i, ITERS);
	}
	nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
	assert_int_equal(kill(victim, SIGKILL), 0);
	assert_int_equal(waitpid(victim, &st, 0), victim);
	assert_true(WIFSIGNALED(st));
	for (int i = 0; i < WRITERS - 1; i++) {
		assert_int_equal(waitpid(pid[i], &st, 0), pid[i]);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	t = render(r);
	/* the survivors' updates are all there, and the victim's up to its death: every counter
	 * at least the survivors' total; the families of one update agree within the one update
	 * the victim may have left half done */
	long long plain = sample(t, "t_plain_total");
	long long survivors = (long long)(WRITERS - 1) * ITERS;
	assert_true(plain >= survivors);
	long long syncs = sample(t, "t_syncs_total{mode=\"Indexed\",result=\"success\"}");
	assert_true(syncs >= plain - 1 && syncs <= plain);
	long long count = sample(t, "t_seconds_count");
	long long inf = sample(t, "t_seconds_bucket{le=\"+Inf\"}");
	assert_true(count == inf && count >= survivors);
	assert_true(sample(t, "t_seconds_bucket{le=\"3.2\"}") <= inf);
	assert_int_equal(ctlm_dropped(r, M_BYNS), 0);
	free(t);
	/* and the region keeps working for a new writer (a restarted worker) */
	pid[0] = fork();
	if (pid[0] == 0)
		writer_loop(fd, 0, 10);
	assert_int_equal(waitpid(pid[0], &st, 0), pid[0]);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	t = render(r);
	assert_int_equal(sample(t, "t_plain_total"), plain + 10);
	free(t);
	ctlm_detach(r);
	close(fd);
}

/* A writer that died between claiming a hash slot and publishing it: the next writer that
 * probes the slot takes it over instead of losing it for good. */
static void test_dead_claimer_taken_over(void **state)
{
	(void)state;
	struct kcmd_metrics *w, *r;
	int fd, st;
	char *t;
	pid_t dead = fork();

	if (dead == 0)
		_exit(0);
	assert_int_equal(waitpid(dead, &st, 0), dead);
	open_pair(&fd, &w, &r);
	/* every slot of the table but one claimed by the dead pid, as if it had died 7 times
	 * between its claim and its publication */
	struct stat sb;
	size_t off, slot_size, n_slots;
	assert_int_equal(fstat(fd, &sb), 0);
	uint8_t *p = mmap(NULL, (size_t)sb.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(p != MAP_FAILED);
	ctlm_table(w, M_BYNS, &off, &slot_size, &n_slots);
	assert_int_equal(n_slots, 8);
	assert_int_equal(kcmd_metric_inc(w, M_BYNS, (const char *[]){"probe", "A"}), 0);
	uint64_t claim = ((uint64_t)(uint32_t)dead << 2) | 1;
	size_t claimed = 0;
	for (size_t i = 0; i < n_slots; i++) {
		_Atomic uint64_t *s = (_Atomic uint64_t *)(p + off + i * slot_size);
		if (atomic_load(s) == 0) {
			atomic_store(s, claim);
			claimed++;
		}
	}
	assert_int_equal(claimed, 7);
	/* new keys: each must take over a dead claim (or use a free slot), never be dropped */
	for (int i = 0; i < 7; i++) {
		char ns[16];
		snprintf(ns, sizeof(ns), "n%d", i);
		assert_int_equal(kcmd_metric_inc(w, M_BYNS, (const char *[]){ns, "B"}), 0);
	}
	/* and now the table is full for real */
	assert_int_equal(kcmd_metric_inc(w, M_BYNS, (const char *[]){"n7", "B"}), -ENOSPC);
	t = render(r);
	assert_int_equal(sample(t, "t_byns_total{namespace=\"n6\",reason=\"B\"}"), 1);
	assert_int_equal(sample(t, "t_byns_total{namespace=\"probe\",reason=\"A\"}"), 1);
	free(t);
	munmap(p, (size_t)sb.st_size);
	ctlm_detach(w);
	ctlm_detach(r);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_render_format),
	        cmocka_unit_test(test_histogram_buckets),
	        cmocka_unit_test(test_label_escaping_and_full_table),
	        cmocka_unit_test(test_api_errors),
	        cmocka_unit_test(test_declaration_and_layout_checks),
	        cmocka_unit_test(test_format_float),
	        cmocka_unit_test(test_concurrent_writers_oracle),
	        cmocka_unit_test(test_writer_killed_mid_run),
	        cmocka_unit_test(test_dead_claimer_taken_over),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
