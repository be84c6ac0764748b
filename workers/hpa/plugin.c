/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/hpa/plugin.c: the horizontal pod autoscaler's descriptor (kcmd/controller.h). kcm's
 * horizontal-pod-autoscaler-controller (alias horizontalpodautoscaling), on by default, client
 * "horizontal-pod-autoscaler": HPAs cached whole, pods typed (the ambiguous-selector check);
 * queue "horizontalpodautoscaler"; one worker process (the stabilisation history lives in
 * it; docs/hpa.md). Flags and defaults as kcm's HPAControllerOptions.
 */
#include "kcmd/controller.h"
#include "workers/hpa/hpa.h"
#include "workers/hpa/plugin.h"

static int hpa_workers(const struct kcmd_flag_values *v)
{
	(void)v; /* one process: the recommendations and scale events are its memory */
	return 1;
}

static const struct kcmd_flag hpa_flags[] = {
        {.name = "concurrent-horizontal-pod-autoscaler-syncs",
         .type = KCMD_FLAG_INT,
         .def = "5",
         .min = 1,
         .max = 16384,
         .help = "The number of horizontal pod autoscaler objects that are allowed to sync "
                 "concurrently. Larger number = more responsive horizontal pod autoscaler "
                 "objects processing, but more CPU (and network) load. (kcmd: accepted; one "
                 "worker process syncs every HPA, see docs/hpa.md.)"},
        {.name = "horizontal-pod-autoscaler-sync-period",
         .type = KCMD_FLAG_DURATION,
         .def = "15s",
         .help = "The period for syncing the number of pods in horizontal pod autoscaler."},
        {.name = "horizontal-pod-autoscaler-downscale-stabilization",
         .type = KCMD_FLAG_DURATION,
         .def = "5m0s",
         .help = "The period for which autoscaler will look backwards and not scale down below "
                 "any recommendation it made during that period."},
        {.name = "horizontal-pod-autoscaler-tolerance",
         .type = KCMD_FLAG_DOUBLE,
         .def = "0.1",
         .help = "The minimum change (from 1.0) in the desired-to-actual metrics ratio for the "
                 "horizontal pod autoscaler to consider scaling."},
        {.name = "horizontal-pod-autoscaler-cpu-initialization-period",
         .type = KCMD_FLAG_DURATION,
         .def = "5m0s",
         .help = "The period after pod start when CPU samples might be skipped."},
        {.name = "horizontal-pod-autoscaler-initial-readiness-delay",
         .type = KCMD_FLAG_DURATION,
         .def = "30s",
         .help = "The period after pod start during which readiness changes will be treated as "
                 "initial readiness."},
};

static const char *const hpa_aliases[] = {"horizontalpodautoscaling", NULL};

static const struct kcmd_watch hpa_watches[] = {
        {"autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler",
         KCMD_CACHE_OBJECT, true},
        {"", "v1", "pods", "Pod", KCMD_CACHE_POD, true},
};

static const struct kcmd_queue hpa_queues[] = {
        {.name = HPA_QUEUE, .metric_name = HPA_QUEUE},
};

const struct kcmd_controller kcmd_hpa_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = HPA_CONTROLLER,
        .aliases = hpa_aliases,
        .enabled_by_default = true,
        .service_account = "horizontal-pod-autoscaler",
        .watches = hpa_watches,
        .n_watches = sizeof(hpa_watches) / sizeof(hpa_watches[0]),
        .queues = hpa_queues,
        .n_queues = sizeof(hpa_queues) / sizeof(hpa_queues[0]),
        .flags = hpa_flags,
        .n_flags = sizeof(hpa_flags) / sizeof(hpa_flags[0]),
        .worker_count = hpa_workers,
        .handlers = &hpa_handler_table,
        .worker = &wk_hpa_controller,
};
