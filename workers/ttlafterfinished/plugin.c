/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/ttlafterfinished/plugin.c: the TTL-after-finished controller's descriptor
 * (kcmd/controller.h). kcm's ttl-after-finished-controller (alias ttl-after-finished), on by
 * default, client "ttl-after-finished-controller": Jobs cached whole (their JSON), handlers in
 * its dispatcher, queue "ttl_jobs_to_delete", --concurrent-ttl-after-finished-syncs worker
 * processes, and its deletion-duration histogram declared here (ttl.h, ttl_metric_decl; the
 * manager creates, passes and renders its region). docs/ttlafterfinished.md.
 */
#include "kcmd/controller.h"
#include "workers/ttlafterfinished/controller.h"
#include "workers/ttlafterfinished/ttl.h"

static int ttl_workers(const struct kcmd_flag_values *v)
{
	/* upstream runs --concurrent-ttl-after-finished-syncs goroutines; kcmd as many processes */
	return (int)kcmd_flag_int(v, "concurrent-ttl-after-finished-syncs");
}

static const char *const ttl_aliases[] = {"ttl-after-finished", NULL};

static const struct kcmd_watch ttl_watches[] = {
        {"batch", "v1", "jobs", "Job", KCMD_CACHE_OBJECT, true},
};

static const struct kcmd_queue ttl_queues[] = {
        {.name = TTL_QUEUE, .metric_name = TTL_QUEUE},
};

static const struct kcmd_flag ttl_flags[] = {
        {.name = "concurrent-ttl-after-finished-syncs",
         .type = KCMD_FLAG_INT,
         .def = "5",
         .min = 1,
         .max = 16384, /* one process per sync; a queue holds up to 16,384 workers (ipc/queue.h) */
         .help = "The number of ttl-after-finished-controller workers that are allowed to sync "
                 "concurrently. (kcmd: that many worker processes.)"},
};

const struct kcmd_controller kcmd_ttl_after_finished_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = TTL_CONTROLLER,
        .aliases = ttl_aliases,
        .enabled_by_default = true,
        .service_account = "ttl-after-finished-controller",
        .watches = ttl_watches,
        .n_watches = sizeof(ttl_watches) / sizeof(ttl_watches[0]),
        .queues = ttl_queues,
        .n_queues = sizeof(ttl_queues) / sizeof(ttl_queues[0]),
        .flags = ttl_flags,
        .n_flags = sizeof(ttl_flags) / sizeof(ttl_flags[0]),
        .worker_count = ttl_workers,
        .handlers = &ttl_handler_table,
        .worker = &wk_ttl_controller,
        .metrics = ttl_metric_decl,
        .n_metrics = TTL_M_N,
};
