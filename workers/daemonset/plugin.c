/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/daemonset/plugin.c: the DaemonSet controller's descriptor (kcmd/controller.h), kcm's
 * daemonset-controller (alias daemonset), on by default, service account
 * daemon-set-controller. DaemonSets, ControllerRevisions and Nodes are cached whole (their
 * JSON), pods typed. Its shared state is an expectations region of its own (the ReplicaSet
 * controller's module, workers/replicaset/expectations.h), created by the manager, handed to the
 * dispatcher (observations) and the workers, reclaimed when a worker dies mid-sync.
 * docs/daemonset.md.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "kcmd/controller.h"
#include "workers/daemonset/controller.h"
#include "workers/replicaset/expectations.h"

static int ds_workers(const struct kcmd_flag_values *v)
{
	/* upstream runs --concurrent-daemonset-syncs goroutines; kcmd as many processes */
	return (int)kcmd_flag_int(v, "concurrent-daemonset-syncs");
}

static void ds_mgr_fini(void *state)
{
	rs_exp_detach(state);
}

static int ds_mgr_setup(struct kcmd_mgr_env *env, const struct kcmd_flag_values *v,
                        void **ret_state)
{
	struct rs_exp_create_opts eo = {0};
	struct rs_exp *e = NULL;
	int fd, r;

	(void)v;
	*ret_state = NULL;
	fd = rs_exp_memfd_create(&eo);
	if (fd < 0)
		return fd;
	r = rs_exp_attach(fd, RS_EXP_WORKER, rs_exp_now(), &e);
	if (r == 0)
		r = kcmd_mgr_export_fd(env, "KCMD_EXPECTATIONS_FD", fd,
		                       KCMD_TO_DISPATCHER | KCMD_TO_WORKERS);
	else
		close(fd);
	if (r < 0) {
		rs_exp_detach(e);
		return r;
	}
	*ret_state = e;
	return 0;
}

static int ds_mgr_child_died(void *state, int pid, const char *process, bool crashed)
{
	(void)process;
	if (!state || !crashed)
		return 0;
	return rs_exp_reclaim_pid(state, pid);
}

static const char *const ds_aliases[] = {"daemonset", NULL};

static const struct kcmd_watch ds_watches[] = {
        {"apps", "v1", "daemonsets", "DaemonSet", KCMD_CACHE_OBJECT, true},
        {"apps", "v1", "controllerrevisions", "ControllerRevision", KCMD_CACHE_OBJECT, true},
        {"", "v1", "pods", "Pod", KCMD_CACHE_POD, true},
        {"", "v1", "nodes", "Node", KCMD_CACHE_OBJECT, false},
};

static const struct kcmd_queue ds_queues[] = {
        {.name = DS_QUEUE, .metric_name = DS_QUEUE},
};

static const struct kcmd_flag ds_flags[] = {
        {.name = "concurrent-daemonset-syncs",
         .type = KCMD_FLAG_INT,
         .def = "2",
         .min = 1,
         .max = 16384, /* one process per sync; a queue holds up to 16,384 workers */
         .help = "The number of daemonset objects that are allowed to sync concurrently. Larger "
                 "number = more responsive daemonsets, but more CPU (and network) load (kcmd: "
                 "that many worker processes)."},
};

const struct kcmd_controller kcmd_daemonset_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = DS_CONTROLLER,
        .aliases = ds_aliases,
        .enabled_by_default = true,
        .service_account = "daemon-set-controller",
        .watches = ds_watches,
        .n_watches = sizeof(ds_watches) / sizeof(ds_watches[0]),
        .queues = ds_queues,
        .n_queues = sizeof(ds_queues) / sizeof(ds_queues[0]),
        .flags = ds_flags,
        .n_flags = sizeof(ds_flags) / sizeof(ds_flags[0]),
        .worker_count = ds_workers,
        .mgr_setup = ds_mgr_setup,
        .mgr_child_died = ds_mgr_child_died,
        .mgr_fini = ds_mgr_fini,
        .handlers = &ds_handler_table,
        .worker = &wk_ds_controller,
};
