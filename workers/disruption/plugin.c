/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/disruption/plugin.c: the disruption controller's descriptor (kcmd/controller.h).
 * kcm's disruption-controller (alias disruption), on by default, client
 * "disruption-controller": PDBs, Deployments and StatefulSets cached whole, pods,
 * ReplicaSets and ReplicationControllers typed; handlers in its dispatcher, queues
 * "disruption" (PDBs) and "stale_pod_disruption" (pods); --concurrent-disruption-syncs worker
 * processes, each serving both queues (upstream: that many goroutines on the PDB queue, one on
 * the stale-pod queue). docs/disruption.md.
 */
#include "kcmd/controller.h"
#include "workers/disruption/disruption.h"

static int disruption_workers(const struct kcmd_flag_values *v)
{
	return (int)kcmd_flag_int(v, "concurrent-disruption-syncs");
}

static const struct kcmd_flag disruption_flags[] = {
        {.name = "concurrent-disruption-syncs",
         .type = KCMD_FLAG_INT,
         .def = "1",
         .min = 1,
         .max = 16384, /* one process per sync; a queue holds up to 16,384 workers (ipc/queue.h) */
         .help = "The number of PDB objects that are allowed to sync concurrently. Larger number "
                 "= more responsive PDB updates, but more CPU (and network) load (kcmd: that "
                 "many worker processes, each also serving the stale-pod queue.)"},
};

static const char *const disruption_aliases[] = {"disruption", NULL};

static const struct kcmd_watch disruption_watches[] = {
        {"policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", KCMD_CACHE_OBJECT, true},
        {"", "v1", "pods", "Pod", KCMD_CACHE_POD, true},
        {"", "v1", "replicationcontrollers", "ReplicationController", KCMD_CACHE_REPLICASET, true},
        {"apps", "v1", "replicasets", "ReplicaSet", KCMD_CACHE_REPLICASET, true},
        {"apps", "v1", "deployments", "Deployment", KCMD_CACHE_OBJECT, true},
        {"apps", "v1", "statefulsets", "StatefulSet", KCMD_CACHE_OBJECT, true},
};

static const struct kcmd_queue disruption_queues[] = {
        {.name = DISRUPTION_QUEUE, .metric_name = DISRUPTION_QUEUE},
        {.name = DISRUPTION_STALE_QUEUE, .metric_name = DISRUPTION_STALE_QUEUE},
};

const struct kcmd_controller kcmd_disruption_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = DISRUPTION_CONTROLLER,
        .aliases = disruption_aliases,
        .enabled_by_default = true,
        .service_account = "disruption-controller",
        .watches = disruption_watches,
        .n_watches = sizeof(disruption_watches) / sizeof(disruption_watches[0]),
        .queues = disruption_queues,
        .n_queues = sizeof(disruption_queues) / sizeof(disruption_queues[0]),
        .flags = disruption_flags,
        .n_flags = sizeof(disruption_flags) / sizeof(disruption_flags[0]),
        .worker_count = disruption_workers,
        .handlers = &disruption_handler_table,
        .worker = &wk_disruption_controller,
};
