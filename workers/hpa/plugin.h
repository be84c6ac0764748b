/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/* workers/hpa/plugin.h: the horizontal pod autoscaler's handler table and sync
 * (controller.c), for its descriptor (plugin.c). docs/hpa.md. */
#include "kcmd/handlers.h"
#include "kcmd/worker.h"

extern const struct inf_handler_table hpa_handler_table;
extern const struct wk_controller wk_hpa_controller;
