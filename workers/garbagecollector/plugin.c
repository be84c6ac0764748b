/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/garbagecollector/plugin.c: the garbage collector's descriptor (kcmd/controller.h).
 *
 * The GC watches every deletable resource (metadata only) through informerd's discovery; its
 * graph builder runs as informerd's handler table (handlers.h) and consumes the virtual delete
 * events the workers produce on gc-graph-changes; its workers (attemptToDelete/attemptToOrphan)
 * share one client token bucket at twice --kube-api-qps, upstream's generic-garbage-collector
 * client. The dependency graph is served as DOT on kcm's debug path.
 */
#include <errno.h>
#include <string.h>

#include "kcmd/controller.h"
#include "kube/limiter.h"
#include "lib/goflag.h"
#include "shm/arena.h"
#include "workers/garbagecollector/debug.h"
#include "workers/garbagecollector/handlers.h"
#include "workers/worker.h"

extern const struct wk_controller wk_gc_controller; /* controller.c */

static int gc_workers(const struct kcmd_flag_values *v)
{
	int64_t n = kcmd_flag_int(v, "concurrent-gc-syncs");
	/* the GC's workers block on API calls, and four processes keep the shared bucket busy */
	return n < 4 ? (int)n : 4;
}

static int gc_mgr_setup(struct kcmd_mgr_env *env, const struct kcmd_flag_values *v,
                        void **ret_state)
{
	int fd = kube_limiter_memfd_create();

	(void)v;
	*ret_state = NULL;
	if (fd < 0)
		return 0; /* each GC worker limits itself: still correct, only less exact */
	return kcmd_mgr_export_fd(env, "KCMD_GC_LIMITER_FD", fd, KCMD_TO_WORKERS);
}

/* GET <path>/graph[?uid=...]: the graph of the arena in DOT (dump.go's format). */
static int gc_graph(int arena_fd, const char *sub, const char *const *uids, size_t n_uids,
                    unsigned *status, const char **ctype, char **body, size_t *len)
{
	struct shm_arena *a = NULL;
	int r;

	if (strcmp(sub, "/graph") != 0) {
		*status = 404; /* http.Error(w, "", 404) */
		*body = strdup("\n");
		*len = 1;
		return *body ? 0 : -ENOMEM;
	}
	if ((r = shm_reader_open(arena_fd, &a)) < 0)
		return r;
	r = gc_dot_render_arena(a, uids, n_uids, body, len);
	shm_arena_close(a);
	if (r < 0)
		return r;
	*status = 200;
	*ctype = "text/vnd.graphviz";
	return 0;
}

static const char *const gc_aliases[] = {"garbagecollector", NULL};

static const struct kcmd_queue gc_queues[] = {
        {.name = "gc-attempt-to-delete", .metric_name = "garbage_collector_attempt_to_delete"},
        {.name = "gc-attempt-to-orphan", .metric_name = "garbage_collector_attempt_to_orphan"},
        /* GC workers -> the graph builder (the GC dispatcher): virtual delete events */
        {.name = "gc-graph-changes",
         .metric_name = "garbage_collector_graph_changes",
         .flags = KCMD_QUEUE_DISPATCHER_CONSUMES},
};

static const struct kcmd_flag gc_flags[] = {
        {.name = "concurrent-gc-syncs",
         .type = KCMD_FLAG_INT,
         .def = "20",
         .min = 1,
         .max = 1000000,
         .help = "The number of garbage collector workers that are allowed to sync concurrently "
                 "(kcmd: "
                 "min(this, 4) worker processes)."},
        {.name = "enable-garbage-collector",
         .type = KCMD_FLAG_BOOL,
         .def = "true",
         .enables_controller = true,
         .manager_only = true,
         .help = "Enables the generic garbage collector. MUST be synced with the corresponding "
                 "flag of the "
                 "kube-apiserver."},
};

static const struct kcmd_debug_endpoint gc_debug[] = {
        {"/debug/controllers/garbage-collector-controller", "uid", gc_graph},
        {"/debug/controllers/garbagecollector", "uid", gc_graph},
};

const struct kcmd_controller kcmd_gc_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = "garbage-collector-controller",
        .aliases = gc_aliases,
        .enabled_by_default = true,
        .service_account = "generic-garbage-collector",
        .watch_deletable = true,
        .discovery_error_metric = "garbagecollector_controller_resources_sync_error_total",
        .discovery_error_help = "[ALPHA] Number of garbage collector resources sync errors",
        .queues = gc_queues,
        .n_queues = sizeof(gc_queues) / sizeof(gc_queues[0]),
        .flags = gc_flags,
        .n_flags = sizeof(gc_flags) / sizeof(gc_flags[0]),
        .worker_count = gc_workers,
        .mgr_setup = gc_mgr_setup,
        .debug = gc_debug,
        .n_debug = sizeof(gc_debug) / sizeof(gc_debug[0]),
        .handlers = &gc_handler_table,
        .worker = &wk_gc_controller,
};
