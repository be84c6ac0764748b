/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The creation-skew histogram as the CronJob controller declares it (cj_metric_decl in cronjob.c,
 * rendered by lib/ctlmetrics): upstream's name, help and ExponentialBuckets(1, 2, 10), cumulative
 * rendering, a sum that forked writers never lose an observation of, and a region of another
 * layout refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/ctlmetrics.h"
#include "workers/cronjob/cronjob.h"

#define NAME "cronjob_controller_job_creation_skew_duration_seconds"

static const struct kcmd_controller ctl = {.abi = KCMD_CONTROLLER_ABI,
                                           .name = CJ_CONTROLLER,
                                           .metrics = cj_metric_decl,
                                           .n_metrics = CJ_M_N};

static int text_of(struct kcmd_metrics *m, char **ret)
{
	size_t len = 0;
	FILE *f = open_memstream(ret, &len);

	if (!f)
		return -ENOMEM;
	ctlm_render(m, f);
	return fclose(f) == 0 ? 0 : -ENOMEM;
}

static void observe(struct kcmd_metrics *m, double v)
{
	assert_int_equal(kcmd_metric_observe(m, CJ_M_SKEW, NULL, v), 0);
}

static void test_histogram(void **state)
{
	int fd = ctlm_create(&ctl);
	struct kcmd_metrics *w = NULL, *r = NULL;
	char *text = NULL;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(ctlm_attach(&ctl, fd, true, &w), 0);
	assert_int_equal(ctlm_attach(&ctl, fd, false, &r), 0);
	assert_int_equal(text_of(r, &text), 0);
	assert_non_null(strstr(text, "# HELP " NAME " [STABLE] Time between when a cronjob is "
	                             "scheduled to be run, and when the corresponding job is "
	                             "created\n# TYPE " NAME " histogram\n" NAME
	                             "_bucket{le=\"1\"} 0\n"));
	assert_non_null(
	        strstr(text, NAME "_bucket{le=\"256\"} 0\n" NAME "_bucket{le=\"512\"} 0\n"));
	assert_non_null(strstr(text, NAME "_bucket{le=\"+Inf\"} 0\n"));
	free(text);
	observe(w, 0);
	observe(w, 1);
	observe(w, 3);
	observe(w, 512);
	observe(w, 600);
	assert_int_equal(text_of(r, &text), 0);
	assert_non_null(strstr(text, NAME "_bucket{le=\"1\"} 2\n"));
	assert_non_null(strstr(text, NAME "_bucket{le=\"2\"} 2\n"));
	assert_non_null(strstr(text, NAME "_bucket{le=\"4\"} 3\n"));
	assert_non_null(strstr(text, NAME "_bucket{le=\"256\"} 3\n"));
	assert_non_null(strstr(text, NAME "_bucket{le=\"512\"} 4\n"));
	assert_non_null(strstr(text, NAME "_bucket{le=\"+Inf\"} 5\n"));
	assert_non_null(strstr(text, NAME "_sum 1116\n"));
	assert_non_null(strstr(text, NAME "_count 5\n"));
	free(text);

	/* four processes, 1,000 observations of 1 s each */
	for (int p = 0; p < 4; p++) {
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			for (int i = 0; i < 1000; i++)
				observe(w, 1);
			_exit(0);
		}
	}
	for (int p = 0; p < 4; p++) {
		int st;
		assert_true(wait(&st) > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	assert_int_equal(text_of(r, &text), 0);
	assert_non_null(strstr(text, NAME "_sum 5116\n"));
	assert_non_null(strstr(text, NAME "_count 4005\n"));
	assert_non_null(strstr(text, NAME "_bucket{le=\"1\"} 4002\n"));
	free(text);
	ctlm_detach(w);
	ctlm_detach(r);
	close(fd);
}

static void test_refuses_other_layout(void **state)
{
	int fd = memfd_create("not-ours", MFD_CLOEXEC);
	struct kcmd_metrics *m = NULL;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(ctlm_attach(&ctl, fd, false, &m), -EPROTO); /* empty */
	assert_int_equal(ftruncate(fd, 4096), 0);
	assert_int_equal(ctlm_attach(&ctl, fd, false, &m), -EPROTO); /* no magic */
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_histogram),
	        cmocka_unit_test(test_refuses_other_layout),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
