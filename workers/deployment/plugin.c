/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/deployment/plugin.c: the deployment controller's descriptor (kcmd/controller.h).
 * kcm's deployment-controller (alias deployment), on by default, client
 * "deployment-controller": Deployments cached whole (their JSON), ReplicaSets and Pods as typed
 * records, handlers in its dispatcher (handlers.c), queue "deployment",
 * --concurrent-deployment-syncs worker processes running sync.c. docs/deployment.md.
 */
#include "kcmd/controller.h"
#include "workers/deployment/controller.h"

static int dp_workers(const struct kcmd_flag_values *v)
{
	/* upstream runs --concurrent-deployment-syncs goroutines; kcmd as many processes */
	return (int)kcmd_flag_int(v, "concurrent-deployment-syncs");
}

static const char *const dp_aliases[] = {"deployment", NULL};

static const struct kcmd_watch dp_watches[] = {
        {"apps", "v1", "deployments", "Deployment", KCMD_CACHE_OBJECT, true},
        {"apps", "v1", "replicasets", "ReplicaSet", KCMD_CACHE_REPLICASET, true},
        {"", "v1", "pods", "Pod", KCMD_CACHE_POD, true},
};

static const struct kcmd_queue dp_queues[] = {
        {.name = DP_QUEUE, .metric_name = DP_QUEUE},
};

static const struct kcmd_flag dp_flags[] = {
        {.name = "concurrent-deployment-syncs",
         .type = KCMD_FLAG_INT,
         .def = "5",
         .min = 1,
         .max = 16384, /* one process per sync; a queue holds up to 16,384 workers (ipc/queue.h) */
         .help = "The number of deployment objects that are allowed to sync concurrently. "
                 "Larger number = more responsive deployments, but more CPU (and network) "
                 "load (kcmd: that many worker processes.)"},
};

const struct kcmd_controller kcmd_deployment_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = DP_CONTROLLER,
        .aliases = dp_aliases,
        .enabled_by_default = true,
        .service_account = "deployment-controller",
        .watches = dp_watches,
        .n_watches = sizeof(dp_watches) / sizeof(dp_watches[0]),
        .queues = dp_queues,
        .n_queues = sizeof(dp_queues) / sizeof(dp_queues[0]),
        .flags = dp_flags,
        .n_flags = sizeof(dp_flags) / sizeof(dp_flags[0]),
        .worker_count = dp_workers,
        .handlers = &dp_handler_table,
        .worker = &wk_dp_controller,
};
