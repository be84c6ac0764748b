/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/resourcequota/plugin.c: the resource quota controller's descriptor
 * (kcmd/controller.h). kcm's resourcequota-controller (alias resourcequota), on by default,
 * client "resourcequota-controller": ResourceQuotas, Services and PVCs cached whole, pods typed
 * (their usage is listed from the apiserver, controller.c), the counted kinds and every
 * deletable kind as metadata; queues "resourcequota_primary" and "resourcequota_priority",
 * --concurrent-resource-quota-syncs worker processes taking from both, every quota re-synced
 * each --resource-quota-sync-period. docs/resourcequota.md.
 */
#include "kcmd/controller.h"
#include "workers/resourcequota/controller.h"

static int rq_workers(const struct kcmd_flag_values *v)
{
	/* upstream runs --concurrent-resource-quota-syncs goroutines; kcmd as many processes */
	return (int)kcmd_flag_int(v, "concurrent-resource-quota-syncs");
}

static const char *const rq_aliases[] = {"resourcequota", NULL};

static const struct kcmd_watch rq_watches[] = {
        {"", "v1", "resourcequotas", "ResourceQuota", KCMD_CACHE_OBJECT, true},
        {"", "v1", "pods", "Pod", KCMD_CACHE_POD, true},
        {"", "v1", "services", "Service", KCMD_CACHE_OBJECT, true},
        {"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", KCMD_CACHE_OBJECT, true},
        {"", "v1", "configmaps", "ConfigMap", KCMD_CACHE_METADATA, true},
        {"", "v1", "secrets", "Secret", KCMD_CACHE_METADATA, true},
        {"", "v1", "replicationcontrollers", "ReplicationController", KCMD_CACHE_REPLICASET, true},
        {"apps", "v1", "deployments", "Deployment", KCMD_CACHE_METADATA, true},
        {"apps", "v1", "replicasets", "ReplicaSet", KCMD_CACHE_REPLICASET, true},
        {"apps", "v1", "statefulsets", "StatefulSet", KCMD_CACHE_METADATA, true},
        {"apps", "v1", "daemonsets", "DaemonSet", KCMD_CACHE_METADATA, true},
        {"batch", "v1", "jobs", "Job", KCMD_CACHE_METADATA, true},
        {"batch", "v1", "cronjobs", "CronJob", KCMD_CACHE_METADATA, true},
};

static const struct kcmd_queue rq_queues[] = {
        {.name = RQ_QUEUE, .metric_name = RQ_QUEUE},
        {.name = RQ_QUEUE_PRIO, .metric_name = RQ_QUEUE_PRIO},
};

static const struct kcmd_flag rq_flags[] = {
        {.name = "concurrent-resource-quota-syncs",
         .type = KCMD_FLAG_INT,
         .def = "5",
         .min = 1,
         .max = 16384, /* one process per sync; a queue holds up to 16,384 workers (ipc/queue.h) */
         .help = "The number of resource quotas that are allowed to sync concurrently. Larger "
                 "number = more responsive quota management, but more CPU (and network) load. "
                 "(kcmd: that many worker processes.)"},
        {.name = "resource-quota-sync-period",
         .type = KCMD_FLAG_DURATION,
         .def = "5m0s",
         .help = "The period for syncing quota usage status in the system"},
};

const struct kcmd_controller kcmd_resourcequota_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = RQ_CONTROLLER,
        .aliases = rq_aliases,
        .enabled_by_default = true,
        .service_account = "resourcequota-controller",
        .watches = rq_watches,
        .n_watches = sizeof(rq_watches) / sizeof(rq_watches[0]),
        /* every deletable kind as metadata, as upstream's quota monitors: counts of any kind */
        .watch_deletable = true,
        .queues = rq_queues,
        .n_queues = sizeof(rq_queues) / sizeof(rq_queues[0]),
        .flags = rq_flags,
        .n_flags = sizeof(rq_flags) / sizeof(rq_flags[0]),
        .worker_count = rq_workers,
        .handlers = &rq_handler_table,
        .worker = &wk_rq_controller,
};
