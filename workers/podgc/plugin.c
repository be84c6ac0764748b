/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/podgc/plugin.c: the pod garbage collector's descriptor (kcmd/controller.h).
 *
 * kcm's pod-garbage-collector-controller (alias podgc), on by default, client
 * "pod-garbage-collector". A periodic controller: no handlers, no queue; one worker process
 * runs its own main (run.c) over the arena's pods (typed) and nodes (metadata-only). Its two
 * counter vectors live in a region the manager creates here and renders on /metrics
 * (metrics.h).
 */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "kcmd/controller.h"
#include "workers/podgc/gc.h"
#include "workers/podgc/metrics.h"
#include "workers/podgc/run.h"

static int pgc_mgr_setup(struct kcmd_mgr_env *env, const struct kcmd_flag_values *v,
                         void **ret_state)
{
	struct pgc_metrics *m = NULL;
	int fd = pgc_metrics_memfd_create(), r;

	(void)v;
	*ret_state = NULL;
	if (fd < 0)
		return fd;
	if ((r = pgc_metrics_attach(fd, false, &m)) == 0)
		r = kcmd_mgr_export_fd(env, "KCMD_PODGC_METRICS_FD", fd, KCMD_TO_WORKERS);
	if (r < 0) {
		pgc_metrics_detach(m);
		close(fd);
		return r;
	}
	*ret_state = m;
	return 0;
}

static void pgc_mgr_metrics(void *state, struct kcmd_text *out)
{
	char *text = NULL;

	if (state && pgc_metrics_text(state, &text) == 0 && text)
		kcmd_text_printf(out, "%s", text);
	free(text);
}

static void pgc_mgr_fini(void *state)
{
	pgc_metrics_detach(state);
}

static const char *const pgc_aliases[] = {"podgc", NULL};

static const struct kcmd_watch pgc_watches[] = {
        {"", "v1", "pods", "Pod", KCMD_CACHE_POD, true},
        {"", "v1", "nodes", "Node", KCMD_CACHE_METADATA, false},
};

static const struct kcmd_flag pgc_flags[] = {
        {.name = "terminated-pod-gc-threshold",
         .type = KCMD_FLAG_INT,
         .def = "12500",
         .min = INT32_MIN,
         .max = INT32_MAX,
         .help = "Number of terminated pods that can exist before the terminated pod garbage "
                 "collector starts deleting terminated pods. If <= 0, the terminated pod garbage "
                 "collector is disabled."},
};

const struct kcmd_controller kcmd_podgc_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = PGC_CONTROLLER,
        .aliases = pgc_aliases,
        .enabled_by_default = true,
        .service_account = "pod-garbage-collector",
        .cluster_scoped_keys = false,
        .watches = pgc_watches,
        .n_watches = sizeof(pgc_watches) / sizeof(pgc_watches[0]),
        .flags = pgc_flags,
        .n_flags = sizeof(pgc_flags) / sizeof(pgc_flags[0]),
        .mgr_setup = pgc_mgr_setup,
        .mgr_metrics = pgc_mgr_metrics,
        .mgr_fini = pgc_mgr_fini,
        .worker_main = pgc_main,
};
