/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/* workers/resourcequota/controller.h: the resource quota controller's handler table (run in its
 * kcmd-dispatcher) and its sync (run in its kcmd-worker processes); see controller.c. */
#include "lib/handlers.h"
#include "workers/worker.h"

#define RQ_CONTROLLER "resourcequota-controller"
#define RQ_QUEUE      "resourcequota_primary"  /* upstream's queue names */
#define RQ_QUEUE_PRIO "resourcequota_priority" /* quotas whose status lacks hard or usage */
enum { RQ_Q_PRIMARY = 0, RQ_Q_PRIORITY = 1 };

extern const struct inf_handler_table rq_handler_table;
extern const struct wk_controller wk_rq_controller;
