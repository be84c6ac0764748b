/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/zygote.h: `kcmd-worker --zygote --zygote-fd=N <room>`, the process the manager forks
 * its dispatchers and workers from (lib/zygote-abi.h says why and how).
 */

/* The two programs the zygote can become; kcmd-worker's and kcmd-dispatcher's mains. */
int kcmd_worker_main(int argc, char **argv);
int kcmd_dispatcher_main(int argc, char **argv);

/* Runs the zygote: serves spawn requests on the fd of --zygote-fd until the manager closes
 * its end (returns 0) or the socket fails (returns 1). Every child it forks runs the main its
 * argv[0] names and never returns here. */
int kcmd_zygote_main(int argc, char **argv);
