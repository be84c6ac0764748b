/* shm/tests/soak-torture.c - the long kill -9 torture run for `make soak`: SHM_SOAK_SECONDS
 * (default 300) of the healthy configuration, then the negative control. */
#include "shm/tests/torture.h"

int main(void) {
	double secs = 300;
	const char *e = getenv("SHM_SOAK_SECONDS");
	if (e && atof(e) > 0)
		secs = atof(e);
	struct t_result ok, broken;
	int r = t_run(secs, false, &ok);
	if (r < 0)
		return 1;
	t_print("soak healthy", &ok, secs);
	int bad = t_judge_healthy(&ok);
	if (t_run(10, true, &broken) < 0)
		return 1;
	t_print("soak negative control", &broken, 10);
	bad |= broken.torn + broken.backwards == 0;
	printf("soak: %s\n", bad ? "FAIL" : "PASS");
	return bad;
}
