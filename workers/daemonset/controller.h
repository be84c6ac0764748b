/* SPDX-License-Identifier: Apache-2.0 */
/* workers/daemonset/controller.h - the DaemonSet controller's handler table (run by its
 * kcmd-dispatcher) and sync (run by kcmd-worker). docs/daemonset.md. */
#pragma once
#include "lib/handlers.h"
#include "workers/worker.h"

#define DS_CONTROLLER "daemonset-controller"
#define DS_QUEUE      "daemonset"

extern const struct inf_handler_table ds_handler_table;
extern const struct wk_controller wk_ds_controller;
