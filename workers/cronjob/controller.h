/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/* workers/cronjob/controller.h: the CronJob controller's handler table and worker
 * (controller.c), named by its descriptor (plugin.c). */
#include "kcmd/handlers.h"
#include "kcmd/worker.h"

extern const struct inf_handler_table cj_handler_table;
extern const struct wk_controller cj_worker;
