/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/replicaset/plugin.c: the ReplicaSet controller's descriptor (kcmd/controller.h).
 *
 * Its shared state is the expectations region (expectations.h, with the controller's Event queue
 * after the slots): the manager creates it, so it survives any process of the controller, hands
 * it to informerd (whose handlers record observations) and to the workers, reclaims the slots a
 * worker that died mid-sync held, and reads the replicaset_controller_* counters for /metrics
 * (mgr.h: hooks shared with the replication controller, which runs the same engine).
 */
#include <errno.h>
#include <stdlib.h>

#include "kcmd/controller.h"
#include "lib/goflag.h"
#include "workers/replicaset/mgr.h"
#include "workers/replicaset/table.h"
#include "workers/worker.h"

extern const struct wk_controller wk_replicaset_controller; /* controller.c */

static int rs_workers(const struct kcmd_flag_values *v)
{
	/* upstream runs --concurrent-replicaset-syncs goroutines; kcmd as many processes */
	return (int)kcmd_flag_int(v, "concurrent-replicaset-syncs");
}

static int rs_setup(struct kcmd_mgr_env *env, const struct kcmd_flag_values *v, void **ret_state)
{
	int64_t grace_ns =
	        (int64_t)kcmd_flag_duration_us(v, "replicaset-orphaned-expectations-grace") * 1000;

	return rs_mgr_setup(env, &rs_flavour_replicaset, grace_ns, ret_state);
}

static const char *const rs_aliases[] = {"replicaset", NULL};

static const struct kcmd_watch rs_watches[] = {
        {"", "v1", "pods", "Pod", KCMD_CACHE_POD, true},
        {"apps", "v1", "replicasets", "ReplicaSet", KCMD_CACHE_REPLICASET, true},
};

static const struct kcmd_queue rs_queues[] = {
        {.name = "replicaset", .metric_name = "replicaset"},
};

static const struct kcmd_flag rs_flags[] = {
        {.name = "concurrent-replicaset-syncs",
         .type = KCMD_FLAG_INT,
         .def = "5",
         .min = 1,
         .max = 16384, /* one process per sync; a queue holds up to 16,384 workers (ipc/queue.h) */
         .help = "The number of replica sets that are allowed to sync concurrently. Larger number "
                 "= more "
                 "responsive replica management, but more CPU (and network) load (kcmd: that many "
                 "worker "
                 "processes)."},
        {.name = "replicaset-orphaned-expectations-grace",
         .type = KCMD_FLAG_DURATION,
         .def = "60s",
         .manager_only = true,
         .help = "kcmd: how long a ReplicaSet waits on the expectations of a worker process that "
                 "died mid-sync "
                 "before syncing again (default 60s: the apiserver's request timeout, after which "
                 "no request of "
                 "the dead process can still land)."},
};

const struct kcmd_controller kcmd_replicaset_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = "replicaset-controller",
        .aliases = rs_aliases,
        .enabled_by_default = true,
        .service_account = "replicaset-controller",
        .watches = rs_watches,
        .n_watches = sizeof(rs_watches) / sizeof(rs_watches[0]),
        .queues = rs_queues,
        .n_queues = sizeof(rs_queues) / sizeof(rs_queues[0]),
        .flags = rs_flags,
        .n_flags = sizeof(rs_flags) / sizeof(rs_flags[0]),
        .worker_count = rs_workers,
        .mgr_setup = rs_setup,
        .mgr_child_died = rs_mgr_child_died,
        .mgr_metrics = rs_mgr_metrics,
        .mgr_fini = rs_mgr_fini,
        .handlers = &rs_handler_table,
        .worker = &wk_replicaset_controller,
};
