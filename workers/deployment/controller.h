/* SPDX-License-Identifier: Apache-2.0 */
/* workers/deployment/controller.h - the deployment controller's handler table (run by its
 * kcmd-dispatcher) and sync (run by kcmd-worker). docs/deployment.md. */
#pragma once
#include "lib/handlers.h"
#include "workers/worker.h"

#define DP_CONTROLLER "deployment-controller"
#define DP_QUEUE      "deployment"

extern const struct inf_handler_table dp_handler_table;
extern const struct wk_controller wk_dp_controller;
