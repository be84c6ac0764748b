/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/cronjob/plugin.c: the CronJob controller's descriptor (kcmd/controller.h).
 *
 * kcm's cronjob-controller (alias cronjob), on by default, client "cronjob-controller". CronJobs
 * and Jobs are cached whole (KCMD_CACHE_OBJECT: the sync reads their spec and status as JSON),
 * one queue "cronjob", --concurrent-cron-job-syncs worker processes (upstream's goroutines).
 */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "kcmd/controller.h"
#include "workers/cronjob/controller.h"
#include "workers/cronjob/cronjob.h"

static int cj_workers(const struct kcmd_flag_values *v)
{
	return (int)kcmd_flag_int(v, "concurrent-cron-job-syncs");
}

static const char *const cj_aliases[] = {"cronjob", NULL};

static const struct kcmd_watch cj_watches[] = {
        {"batch", "v1", "cronjobs", "CronJob", KCMD_CACHE_OBJECT, true},
        {"batch", "v1", "jobs", "Job", KCMD_CACHE_OBJECT, true},
};

static const struct kcmd_queue cj_queues[] = {
        {.name = CJ_QUEUE, .metric_name = "cronjob"},
};

static const struct kcmd_flag cj_flags[] = {
        {.name = "concurrent-cron-job-syncs",
         .type = KCMD_FLAG_INT,
         .def = "5",
         .min = 1,
         .max = 1000,
         .help = "The number of cron job objects that are allowed to sync concurrently. Larger "
                 "number = more responsive jobs, but more CPU (and network) load"},
};

const struct kcmd_controller kcmd_cronjob_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = CJ_CONTROLLER,
        .aliases = cj_aliases,
        .enabled_by_default = true,
        .service_account = "cronjob-controller",
        .watches = cj_watches,
        .n_watches = sizeof(cj_watches) / sizeof(cj_watches[0]),
        .queues = cj_queues,
        .n_queues = sizeof(cj_queues) / sizeof(cj_queues[0]),
        .flags = cj_flags,
        .n_flags = sizeof(cj_flags) / sizeof(cj_flags[0]),
        .worker_count = cj_workers,
        .handlers = &cj_handler_table,
        .worker = &cj_worker,
        .metrics = cj_metric_decl,
        .n_metrics = CJ_M_N,
};
