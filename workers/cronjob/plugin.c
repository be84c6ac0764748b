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
#include "workers/cronjob/metrics.h"

/* The creation-skew histogram: created here, observed by the workers, rendered on /metrics. */
static int cj_mgr_setup(struct kcmd_mgr_env *env, const struct kcmd_flag_values *v,
                        void **ret_state)
{
	struct cj_metrics *m = NULL;
	int fd = cj_metrics_memfd_create(), r;

	(void)v;
	*ret_state = NULL;
	if (fd < 0)
		return fd;
	if ((r = cj_metrics_attach(fd, false, &m)) == 0)
		r = kcmd_mgr_export_fd(env, CJ_METRICS_ENV, fd, KCMD_TO_WORKERS);
	if (r < 0) {
		cj_metrics_detach(m);
		close(fd);
		return r;
	}
	*ret_state = m;
	return 0;
}

static void cj_mgr_metrics(void *state, struct kcmd_text *out)
{
	char *text = NULL;

	if (state && cj_metrics_text(state, &text) == 0 && text)
		kcmd_text_printf(out, "%s", text);
	free(text);
}

static void cj_mgr_fini(void *state)
{
	cj_metrics_detach(state);
}

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
        .mgr_setup = cj_mgr_setup,
        .mgr_metrics = cj_mgr_metrics,
        .mgr_fini = cj_mgr_fini,
        .handlers = &cj_handler_table,
        .worker = &cj_worker,
};
