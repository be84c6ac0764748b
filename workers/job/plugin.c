/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/job/plugin.c: the Job controller's descriptor (kcmd/controller.h), kcm's
 * job-controller (alias job), on by default, service account job-controller.
 *
 * Jobs are cached whole (KCMD_CACHE_OBJECT: the sync reads spec and status from the JSON), pods
 * typed. Its shared state is an expectations region of its own (the ReplicaSet controller's
 * module, workers/replicaset/expectations.h): the manager creates it, hands it to the
 * dispatcher (observations) and the workers (expectations), and reclaims what a worker that
 * died mid-sync held. docs/job.md.
 */
#include <stdint.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "kcmd/controller.h"
#include "workers/job/job.h"
#include "workers/job/table.h"
#include "workers/replicaset/expectations.h"
#include "workers/worker.h"

extern const struct wk_controller wk_job_controller; /* sync.c */

static int job_workers(const struct kcmd_flag_values *v)
{
	/* upstream runs --concurrent-job-syncs goroutines; kcmd as many processes */
	return (int)kcmd_flag_int(v, "concurrent-job-syncs");
}

struct job_mgr {
	struct rs_exp *exp, *fin; /* pod creations/deletions; finalizer removals */
};

static void job_mgr_fini(void *state)
{
	struct job_mgr *m = state;

	if (m) {
		rs_exp_detach(m->exp);
		rs_exp_detach(m->fin);
		free(m);
	}
}

static int job_mgr_setup(struct kcmd_mgr_env *env, const struct kcmd_flag_values *v,
                         void **ret_state)
{
	struct rs_exp_create_opts eo = {
	        .orphan_grace_ns =
	                (int64_t)kcmd_flag_duration_us(v, "job-orphaned-expectations-grace") *
	                1000};
	struct job_mgr *m = calloc(1, sizeof(*m));
	int fd, ffd, r;

	*ret_state = NULL;
	if (!m)
		return -ENOMEM;
	fd = rs_exp_memfd_create(&eo);
	if (fd < 0) {
		free(m);
		return fd;
	}
	r = rs_exp_attach(fd, RS_EXP_WORKER, rs_exp_now(), &m->exp);
	if (r == 0)
		r = kcmd_mgr_export_fd(env, "KCMD_EXPECTATIONS_FD", fd,
		                       KCMD_TO_DISPATCHER | KCMD_TO_WORKERS);
	if (r == 0 && (r = ffd = rs_exp_memfd_create(&eo)) >= 0) {
		r = rs_exp_attach(ffd, RS_EXP_WORKER, rs_exp_now(), &m->fin);
		if (r == 0)
			r = kcmd_mgr_export_fd(env, "KCMD_JOB_FINALIZER_EXPECTATIONS_FD", ffd,
			                       KCMD_TO_DISPATCHER | KCMD_TO_WORKERS);
		else
			close(ffd);
	}
	if (r < 0) {
		job_mgr_fini(m);
		return r;
	}
	*ret_state = m;
	return 0;
}

static int job_mgr_child_died(void *state, int pid, const char *process, bool crashed)
{
	struct job_mgr *m = state;
	int a, b;

	(void)process;
	if (!m || !crashed)
		return 0;
	a = rs_exp_reclaim_pid(m->exp, pid);
	b = rs_exp_reclaim_pid(m->fin, pid);
	return a < 0 ? a : b < 0 ? b : a + b;
}

static const char *const job_aliases[] = {"job", NULL};

static const struct kcmd_watch job_watches[] = {
        {"", "v1", "pods", "Pod", KCMD_CACHE_POD, true},
        {"batch", "v1", "jobs", "Job", KCMD_CACHE_OBJECT, true},
};

static const struct kcmd_queue job_queues[] = {
        {.name = "job", .metric_name = "job"},
};

static const struct kcmd_flag job_flags[] = {
        {.name = "concurrent-job-syncs",
         .type = KCMD_FLAG_INT,
         .def = "5",
         .min = 1,
         .max = 16384, /* one process per sync; a queue holds up to 16,384 workers */
         .help = "The number of job objects that are allowed to sync concurrently. Larger number "
                 "= more responsive jobs, but more CPU (and network) load (kcmd: that many worker "
                 "processes)."},
        {.name = "job-pod-failure-backoff",
         .type = KCMD_FLAG_DURATION,
         .def = "10s",
         .help = "kcmd: the Job controller's pod-creation backoff after the first failed pod "
                 "(upstream's DefaultJobPodFailureBackOff, 10s; doubled per further failure). "
                 "Tests shorten it, as upstream's integration tests do."},
        {.name = "job-pod-failure-max-backoff",
         .type = KCMD_FLAG_DURATION,
         .def = "10m",
         .help = "kcmd: the longest pod-creation backoff of the Job controller (upstream's "
                 "MaxJobPodFailureBackOff, 10m)."},
        {.name = "job-orphaned-expectations-grace",
         .type = KCMD_FLAG_DURATION,
         .def = "60s",
         .manager_only = true,
         .help = "kcmd: how long a Job waits on the expectations of a worker process that died "
                 "mid-sync before syncing again (default 60s: the apiserver's request timeout, "
                 "after which no request of the dead process can still land)."},
};

const struct kcmd_controller kcmd_job_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = JOB_CONTROLLER,
        .aliases = job_aliases,
        .enabled_by_default = true,
        .service_account = "job-controller",
        .watches = job_watches,
        .n_watches = sizeof(job_watches) / sizeof(job_watches[0]),
        .queues = job_queues,
        .n_queues = sizeof(job_queues) / sizeof(job_queues[0]),
        .flags = job_flags,
        .n_flags = sizeof(job_flags) / sizeof(job_flags[0]),
        .worker_count = job_workers,
        .mgr_setup = job_mgr_setup,
        .mgr_child_died = job_mgr_child_died,
        .mgr_fini = job_mgr_fini,
        .handlers = &job_handler_table,
        .worker = &wk_job_controller,
        .metrics = job_metric_decl,
        .n_metrics = JOB_M_N,
};
