/* SPDX-License-Identifier: Apache-2.0 */
/* workers/statefulset/controller.h - the statefulset controller's handler table (run by its
 * kcmd-dispatcher) and sync (run by kcmd-worker). docs/statefulset.md. */
#pragma once
#include "lib/handlers.h"
#include "workers/worker.h"

#define STS_CONTROLLER "statefulset-controller"
#define STS_QUEUE      "statefulset"

extern const struct inf_handler_table sts_handler_table;
extern const struct wk_controller wk_sts_controller;
