/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/podgc/plugin.c: the pod garbage collector's descriptor (kcmd/controller.h).
 *
 * kcm's pod-garbage-collector-controller (alias podgc), on by default, client
 * "pod-garbage-collector". A periodic controller: no handlers, no queue; one worker process
 * runs its own main (run.c) over the arena's pods (typed) and nodes (metadata-only). Its two
 * counter vectors are declared here (gc.h, pgc_metric_decl): the manager creates their region,
 * the worker counts, the manager renders them on /metrics (lib/ctlmetrics.h).
 */
#include <stdint.h>

#include "kcmd/controller.h"
#include "workers/podgc/gc.h"
#include "workers/podgc/run.h"

static const char *const pgc_aliases[] = {"podgc", NULL};

static const struct kcmd_watch pgc_watches[] = {
        {"", "v1", "pods", "Pod", KCMD_CACHE_POD, true},
        {"", "v1", "nodes", "Node", KCMD_CACHE_METADATA, false},
};

static const struct kcmd_flag pgc_flags[] = {
        {.name = "terminated-pod-gc-threshold",
         .type = KCMD_FLAG_INT,
         .def = "12500",
         .min = INT32_MIN,
         .max = INT32_MAX,
         .help = "Number of terminated pods that can exist before the terminated pod garbage "
                 "collector starts deleting terminated pods. If <= 0, the terminated pod garbage "
                 "collector is disabled."},
};

const struct kcmd_controller kcmd_podgc_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = PGC_CONTROLLER,
        .aliases = pgc_aliases,
        .enabled_by_default = true,
        .service_account = "pod-garbage-collector",
        .cluster_scoped_keys = false,
        .watches = pgc_watches,
        .n_watches = sizeof(pgc_watches) / sizeof(pgc_watches[0]),
        .flags = pgc_flags,
        .n_flags = sizeof(pgc_flags) / sizeof(pgc_flags[0]),
        .worker_main = pgc_main,
        .metrics = pgc_metric_decl,
        .n_metrics = PGC_M_N,
};
