/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/worker-main.c: the entry of kcmd-worker. `kcmd-worker --zygote` is the process the
 * manager forks dispatchers and workers from (workers/zygote.h); anything else is a worker
 * (workers/main.c).
 */
#include <string.h>

#include "workers/zygote.h"

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "--zygote"))
		return kcmd_zygote_main(argc, argv);
	return kcmd_worker_main(argc, argv);
}
