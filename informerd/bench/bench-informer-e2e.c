/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench-informer-e2e: runs the Go bench TestBench_InformerSync (tests/cluster/e2e/
 * informer_bench_test.go) against a real apiserver loaded with KCMD_BENCH_PODS pods (default
 * 100,000) and forwards its lines:
 *   bench: informer.sync_100k_pods_s / informer.pss_100k_pods_mb          kcmd-informerd
 *   bench: informer.kcm_sync_100k_pods_s / informer.kcm_pss_100k_pods_mb  upstream kcm
 * Set KCMD_BENCH_SKIP_E2E=1 to skip it (it takes minutes: the loader creates every pod).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	char cwd[4096], cmd[8192], line[4096];
	FILE *f;
	int n = 0, rc;

	if (getenv("KCMD_BENCH_SKIP_E2E")) {
		printf("bench-informer-e2e: skipped (KCMD_BENCH_SKIP_E2E)\n");
		return 0;
	}
	if (!getcwd(cwd, sizeof(cwd)) || access("tests/cluster/run-e2e.sh", X_OK) != 0) {
		fprintf(stderr, "bench-informer-e2e: run from the top of the tree\n");
		return 1;
	}
	if (snprintf(cmd, sizeof(cmd),
	             "KCMD_BENCH_INFORMER=1 KCMD_BIN_DIR='%s/build/bin' tests/cluster/run-e2e.sh "
	             "-run '^TestBench_InformerSync$' 2>&1",
	             cwd) >= (int)sizeof(cmd))
		return 1;
	f = popen(cmd, "r");
	if (!f)
		return 1;
	while (fgets(line, sizeof(line), f)) {
		char *b = strstr(line, "bench: ");

		if (b) {
			fputs(b, stdout);
			n++;
		} else {
			fputs(line, stderr);
		}
	}
	rc = pclose(f);
	return rc == 0 && n == 4 ? 0 : 1;
}
