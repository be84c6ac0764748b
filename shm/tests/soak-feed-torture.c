/* SPDX-License-Identifier: Apache-2.0 */
/* shm/tests/soak-feed-torture.c - the change-feed torture for `make soak`: 60 s healthy by
 * default (argument or SHM_FEED_TORTURE_SECONDS to change), then the punch race and the three
 * negative controls. */
#define FEED_TORTURE_SECS 60.0
#include "shm/tests/test-feed-torture.c"
