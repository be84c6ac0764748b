/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/replicaset/plugin-rc.c: the replication controller's descriptor (kcmd/controller.h).
 * As upstream (pkg/controller/replication: NewBaseController of the ReplicaSet controller over
 * ReplicationControllers converted to ReplicaSets), it is the ReplicaSet engine of this folder
 * with the ReplicationController flavour (flavour.h): its own expectations region and Event
 * queue, its own queue "replicationmanager", its own worker processes (--concurrent-rc-syncs),
 * handlers and service account.
 *
 * Why here and not in a folder of its own: a controller folder includes only its own headers
 * (make lint, rule "layers"), and this descriptor is nothing but the engine's parts with another
 * flavour (docs/replicationcontroller.md).
 */
#include "kcmd/controller.h"
#include "lib/goflag.h"
#include "workers/replicaset/mgr.h"
#include "workers/replicaset/table.h"
#include "workers/worker.h"

extern const struct wk_controller wk_replicationcontroller_controller; /* controller.c */

static int rc_workers(const struct kcmd_flag_values *v)
{
	/* upstream runs --concurrent-rc-syncs goroutines; kcmd as many processes */
	return (int)kcmd_flag_int(v, "concurrent-rc-syncs");
}

static int rc_setup(struct kcmd_mgr_env *env, const struct kcmd_flag_values *v, void **ret_state)
{
	int64_t grace_ns = (int64_t)kcmd_flag_duration_us(
	                           v, "replicationcontroller-orphaned-expectations-grace") *
	                   1000;

	return rs_mgr_setup(env, &rs_flavour_replicationcontroller, grace_ns, ret_state);
}

static const char *const rc_aliases[] = {"replicationcontroller", NULL};

static const struct kcmd_watch rc_watches[] = {
        {"", "v1", "pods", "Pod", KCMD_CACHE_POD, true},
        {"", "v1", "replicationcontrollers", "ReplicationController", KCMD_CACHE_REPLICASET, true},
};

static const struct kcmd_queue rc_queues[] = {
        {.name = "replicationmanager", .metric_name = "replicationmanager"},
};

static const struct kcmd_flag rc_flags[] = {
        {.name = "concurrent-rc-syncs",
         .type = KCMD_FLAG_INT,
         .def = "5",
         .min = 1,
         .max = 16384, /* one process per sync; a queue holds up to 16,384 workers (ipc/queue.h) */
         .help = "The number of replication controllers that are allowed to sync concurrently. "
                 "Larger number = more responsive replica management, but more CPU (and "
                 "network) load (kcmd: that many worker processes)."},
        {.name = "replicationcontroller-orphaned-expectations-grace",
         .type = KCMD_FLAG_DURATION,
         .def = "60s",
         .manager_only = true,
         .help = "kcmd: how long a ReplicationController waits on the expectations of a worker "
                 "process that died mid-sync before syncing again (default 60s: the "
                 "apiserver's request timeout, after which no request of the dead process can "
                 "still land)."},
};

const struct kcmd_controller kcmd_replicationcontroller_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = "replicationcontroller-controller",
        .aliases = rc_aliases,
        .enabled_by_default = true,
        .service_account = "replication-controller",
        .watches = rc_watches,
        .n_watches = sizeof(rc_watches) / sizeof(rc_watches[0]),
        .queues = rc_queues,
        .n_queues = sizeof(rc_queues) / sizeof(rc_queues[0]),
        .flags = rc_flags,
        .n_flags = sizeof(rc_flags) / sizeof(rc_flags[0]),
        .worker_count = rc_workers,
        .mgr_setup = rc_setup,
        .mgr_child_died = rs_mgr_child_died,
        .mgr_metrics = rs_mgr_metrics,
        .mgr_fini = rs_mgr_fini,
        .handlers = &rc_handler_table,
        .worker = &wk_replicationcontroller_controller,
};
