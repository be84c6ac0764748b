/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/* workers/resourcequota/controller.h: the resource quota controller's handler table (run in its
 * kcmd-dispatcher) and its sync (run in its kcmd-worker processes); see controller.c. */
#include "lib/handlers.h"
#include "workers/worker.h"

#define RQ_CONTROLLER "resourcequota-controller"
#define RQ_QUEUE      "resourcequota_primary" /* upstream's primary queue name */

extern const struct inf_handler_table rq_handler_table;
extern const struct wk_controller wk_rq_controller;
