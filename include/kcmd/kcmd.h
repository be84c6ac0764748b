/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * kcmd/kcmd.h: the whole public controller API of kcmd, for an out-of-tree controller
 * (docs/writing-a-controller.md). Build with `pkg-config --cflags --libs kcmd`; the library is
 * libkcmd.so.KCMD_CONTROLLER_ABI.
 *
 *   kcmd/controller.h  the descriptor (struct kcmd_controller), flags, manager hooks
 *   kcmd/handlers.h    event handler tables, adding keys to queues
 *   kcmd/worker.h      the worker's sync interface
 *   kcmd/cache.h       reading the shared cache (listers) and event objects
 *   kcmd/client.h      writing to the apiserver, Events
 *   kcmd/log.h         logging
 *   kcmd/metrics.h     updating the metric families the descriptor declares
 *
 * A plug-in (a shared object kcmd loads with --controller-plugins) exports one function,
 * KCMD_PLUGIN_SYMBOL, returning its descriptor; KCMD_PLUGIN(desc) defines it.
 */
#include "kcmd/cache.h"
#include "kcmd/client.h"
#include "kcmd/controller.h"
#include "kcmd/handlers.h"
#include "kcmd/log.h"
#include "kcmd/metrics.h"
#include "kcmd/worker.h"

/* The version of this API (== KCMD_CONTROLLER_ABI, the library's soname major). */
unsigned kcmd_api_abi(void);
