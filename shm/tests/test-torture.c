/* SPDX-License-Identifier: Apache-2.0 */
/* shm/tests/test-torture.c - the short kill -9 torture run for `make unit` (about 24 s):
 * 14 s healthy (must be clean), then 4 s of the negative control (readers without generation
 * validation), whose torn reads the oracle must report, then 4 s of the type negative control
 * (a writer publishing type registrations before their strings), whose torn type reads the
 * type oracle must report. SHM_TORTURE_SECONDS scales the healthy
 * run. See shm/tests/torture.h for the harness and its oracles. */
#include "shm/tests/torture.h"

int main(void)
{
	double secs = 14;
	const char *e = getenv("SHM_TORTURE_SECONDS");
	if (e && atof(e) > 0)
		secs = atof(e);
	struct t_result ok, broken;
	int r = t_run(secs, T_HEALTHY, &ok);
	if (r < 0) {
		fprintf(stderr, "torture: setup failed: %s\n", strerror(-r));
		return 1;
	}
	t_print("healthy", &ok, secs);
	int bad = t_judge_healthy(&ok);

	r = t_run(4, T_NO_VALIDATE, &broken);
	if (r < 0) {
		fprintf(stderr, "torture: setup failed: %s\n", strerror(-r));
		return 1;
	}
	t_print("negative control (no validation)", &broken, 4);
	if (broken.torn + broken.backwards == 0) {
		printf("torture: FAIL: the oracle did not catch the broken variant\n");
		bad = 1;
	} else {
		printf("torture: negative control caught %llu torn reads\n",
		       (unsigned long long)broken.torn);
	}
	struct t_result early;
	r = t_run(4, T_TYPE_EARLY, &early);
	if (r < 0) {
		fprintf(stderr, "torture: setup failed: %s\n", strerror(-r));
		return 1;
	}
	t_print("type negative control (registration published early)", &early, 4);
	if (early.type_torn == 0) {
		printf("torture: FAIL: the type oracle did not catch the broken variant\n");
		bad = 1;
	} else {
		printf("torture: type negative control caught %llu torn type reads\n",
		       (unsigned long long)early.type_torn);
	}
	printf("torture: %s\n", bad ? "FAIL" : "PASS");
	return bad;
}
