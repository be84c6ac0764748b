/* SPDX-License-Identifier: Apache-2.0 */
/* soak-torture: test-torture with 60 s per scenario (`make soak`); argv[1] overrides. */
#define TORTURE_DEFAULT_SECS 60.0
#include "ipc/tests/test-torture.c"
