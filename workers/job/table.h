/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/* workers/job/table.h: the Job controller's handler table (table.c). */
#include "kcmd/handlers.h"

extern const struct inf_handler_table job_handler_table;
