/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/statefulset/plugin.c: the statefulset controller's descriptor (kcmd/controller.h).
 * kcm's statefulset-controller (alias statefulset), on by default, client
 * "statefulset-controller": StatefulSets, ControllerRevisions and PersistentVolumeClaims cached
 * whole (their JSON), pods typed, handlers in its dispatcher (handlers.c), queue "statefulset",
 * --concurrent-statefulset-syncs worker processes running sync.c. docs/statefulset.md.
 */
#include "kcmd/controller.h"
#include "workers/statefulset/controller.h"

static int sts_workers(const struct kcmd_flag_values *v)
{
	/* upstream runs --concurrent-statefulset-syncs goroutines; kcmd as many processes */
	return (int)kcmd_flag_int(v, "concurrent-statefulset-syncs");
}

static const char *const sts_aliases[] = {"statefulset", NULL};

static const struct kcmd_watch sts_watches[] = {
        {"apps", "v1", "statefulsets", "StatefulSet", KCMD_CACHE_OBJECT, true},
        {"apps", "v1", "controllerrevisions", "ControllerRevision", KCMD_CACHE_OBJECT, true},
        {"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", KCMD_CACHE_OBJECT, true},
        {"", "v1", "pods", "Pod", KCMD_CACHE_POD, true},
};

static const struct kcmd_queue sts_queues[] = {
        {.name = STS_QUEUE, .metric_name = STS_QUEUE},
};

static const struct kcmd_flag sts_flags[] = {
        {.name = "concurrent-statefulset-syncs",
         .type = KCMD_FLAG_INT,
         .def = "5",
         .min = 1,
         .max = 16384, /* one process per sync; a queue holds up to 16,384 workers (ipc/queue.h) */
         .help = "The number of statefulset objects that are allowed to sync concurrently. "
                 "Larger number = more responsive statefulsets, but more CPU (and network) "
                 "load (kcmd: that many worker processes.)"},
};

const struct kcmd_controller kcmd_statefulset_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = STS_CONTROLLER,
        .aliases = sts_aliases,
        .enabled_by_default = true,
        .service_account = "statefulset-controller",
        .watches = sts_watches,
        .n_watches = sizeof(sts_watches) / sizeof(sts_watches[0]),
        .queues = sts_queues,
        .n_queues = sizeof(sts_queues) / sizeof(sts_queues[0]),
        .flags = sts_flags,
        .n_flags = sizeof(sts_flags) / sizeof(sts_flags[0]),
        .worker_count = sts_workers,
        .handlers = &sts_handler_table,
        .worker = &wk_sts_controller,
};
