/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/* workers/ttlafterfinished/controller.h: the controller's handler table (run in its
 * kcmd-dispatcher) and its sync (run in its kcmd-worker processes); see controller.c. */
#include "lib/handlers.h"
#include "workers/worker.h"

extern const struct inf_handler_table ttl_handler_table;
extern const struct wk_controller wk_ttl_controller;
