/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/* workers/disruption/disruption.h: the disruption controller's names, handler table and sync
 * (controller.c), for its descriptor (plugin.c). docs/disruption.md. */
#include "kcmd/handlers.h"
#include "kcmd/worker.h"

#define DISRUPTION_CONTROLLER  "disruption-controller"
#define DISRUPTION_QUEUE       "disruption"           /* PDB keys */
#define DISRUPTION_STALE_QUEUE "stale_pod_disruption" /* pod keys */
enum { DISRUPTION_Q_PDB = 0, DISRUPTION_Q_STALE = 1 };

extern const struct inf_handler_table disruption_handler_table;
extern const struct wk_controller wk_disruption_controller;
