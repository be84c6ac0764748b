/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/* workers/podgc/run.h: `kcmd-worker --controller=pod-garbage-collector-controller` (run.c). */

int pgc_main(int argc, char **argv);
