/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * kcmd/controller.h: what a controller is to kcmd. Every controller (in-tree under workers/, or a
 * user's) fills one `struct kcmd_controller`; the registry (controllers/registry.c) is the one
 * table of them. The manager, informerd and the worker main read only this descriptor: none of
 * them names a controller.
 *
 * Design note.
 *   Declared as data where possible, so that --controllers, --help, the queue memfds, the child
 *   environment, the health checks, /metrics and kcmctl are all derived from the table:
 *   - identity: kcm's canonical name and aliases (`--controllers=*,-foo,bar` takes both), whether
 *     `*` turns it on, the feature gates it needs (off while one is off, as kcm does), and the
 *     service account it uses with --use-service-account-credentials;
 *   - cache: the resources it watches, typed or metadata-only; informerd watches the union of the
 *     enabled controllers' resources (and, for `watch_deletable`, every deletable resource of
 *     discovery, as the garbage collector's and the namespace deleter's monitors do);
 *   - queues: names (memfds `kcmd-queue-<name>`), the name under which the workqueue metrics are
 *     exported (upstream's), and who consumes each;
 *   - flags: kcm's names, types and defaults; the manager parses them, checks their type, and
 *     passes each enabled controller its own values as `--name=value` arguments;
 *   - processes: a rule for how many worker processes to run from those flag values;
 *   - hooks, each optional, in the process that runs them:
 *       manager    setup (shared regions the controller's processes inherit, e.g. the
 *                  ReplicaSet expectations), child_died (repair what a dead process held),
 *                  metrics text, debug endpoints;
 *       informerd  the event handlers (today a table linked into informerd: see "State" below);
 *       worker     init / sync(key) -> done, requeue (rate limited), requeue after / fini, or a
 *                  whole main of its own (a controller that keeps many writes in flight).
 *
 *   Sharding and out-of-tree controllers were kept in mind: a controller states its keys' scope
 *   (namespaced or cluster) so a shard filter can be applied by the framework, never by the
 *   controller; the descriptor carries an ABI version checked by the registry.
 *
 *   State (this version): the informerd-side handlers are still linked into kcmd-informerd
 *   through the registry library; the change feed (shm/feed.h) that lets each controller run its
 *   own handlers in its own process is the next step (docs/architecture.md, "Controllers").
 *
 *   Rejected: registering controllers at run time from constructors (link order decides what
 *   exists, and a static table is checked by the compiler); one process per controller holding
 *   everything (a fault in one controller's handler would stop the others).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KCMD_CONTROLLER_ABI 1u

struct inf_handler_table; /* lib/handlers.h */
struct wk_controller;     /* workers/worker.h */
struct kcmd_flag_values;  /* below */
struct kube_config;       /* kube/config.h */

/* ---- flags ------------------------------------------------------------------------------------
 */
enum kcmd_flag_type {
	KCMD_FLAG_INT = 1,  /* int, non-negative unless min < 0 (with max > 0) */
	KCMD_FLAG_BOOL,     /* Go's strconv.ParseBool; a bare --name is true */
	KCMD_FLAG_DOUBLE,   /* non-negative */
	KCMD_FLAG_DURATION, /* Go duration ("15s", "1m30s") */
	KCMD_FLAG_STRING,
};

struct kcmd_flag {
	const char *name; /* without dashes, kcm's spelling */
	enum kcmd_flag_type type;
	const char *def; /* default, in the flag's own syntax */
	const char *help;
	int64_t min, max; /* INT only: accepted range when max > 0 */
	/* BOOL only: false turns the controller off (kcm's --enable-garbage-collector) */
	bool enables_controller;
	/* Not passed to the controller's processes (read by hooks in the manager only). */
	bool manager_only;
};

/* Values as the manager parsed them (defaults applied). Lookups of a name the controller did not
 * declare return the zero value. */
int64_t kcmd_flag_int(const struct kcmd_flag_values *v, const char *name);
bool kcmd_flag_bool(const struct kcmd_flag_values *v, const char *name);
double kcmd_flag_double(const struct kcmd_flag_values *v, const char *name);
uint64_t kcmd_flag_duration_us(const struct kcmd_flag_values *v, const char *name);
const char *kcmd_flag_string(const struct kcmd_flag_values *v, const char *name);

/* ---- cache ------------------------------------------------------------------------------------
 */
enum kcmd_cache_kind {
	KCMD_CACHE_METADATA = 0, /* PartialObjectMetadata: names, labels, owners, finalizers */
	KCMD_CACHE_POD,          /* typed records (shm record kinds) */
	KCMD_CACHE_REPLICASET,
};

struct kcmd_watch {
	const char *group; /* "" core */
	const char *version;
	const char *resource; /* plural */
	const char *kind;
	enum kcmd_cache_kind cache;
	bool namespaced;
};

/* ---- queues -----------------------------------------------------------------------------------
 */
enum kcmd_queue_flags {
	/* the controller's dispatcher also attaches to it as a worker (its handlers consume it,
	 * e.g. the GC's virtual delete events for its graph builder) */
	KCMD_QUEUE_DISPATCHER_CONSUMES = 1u << 0,
};

struct kcmd_queue {
	const char *name;        /* memfd and KCMD_QUEUE_FDS name */
	const char *metric_name; /* workqueue_* name label; NULL = name */
	unsigned flags;
};

/* ---- manager-side hooks ------------------------------------------------------------------------
 */
enum kcmd_region_users {
	KCMD_TO_DISPATCHER = 1u << 0, /* the process running the controller's handlers */
	KCMD_TO_WORKERS = 1u << 1,
};

struct kcmd_mgr_env; /* the manager's side of the child contract */

/* Hands the controller's processes an fd in an environment variable (`ENV=fd`): the fd stays
 * owned by the manager. Returns 0, -E2BIG (too many), -EINVAL. */
int kcmd_mgr_export_fd(struct kcmd_mgr_env *env, const char *var, int fd, unsigned users);

/* A text buffer the manager serves (/metrics, debug endpoints). */
struct kcmd_text;
void kcmd_text_printf(struct kcmd_text *t, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

struct kcmd_debug_endpoint {
	const char *path;  /* e.g. "/debug/controllers/garbage-collector-controller" */
	const char *query; /* the one repeated query parameter it takes, or NULL */
	/* sub: the path below `path`; the arena fd is read-only. Sets *status, *ctype, *body
	 * (malloc'd). */
	int (*handle)(int arena_fd, const char *sub, const char *const *vals, size_t n_vals,
	              unsigned *status, const char **ctype, char **body, size_t *len);
};

/* ---- the descriptor -----------------------------------------------------------------------------
 */
struct kcmd_controller {
	uint32_t abi; /* KCMD_CONTROLLER_ABI */
	const char *name;
	const char *const *aliases; /* NULL-terminated, may be NULL */
	bool enabled_by_default;    /* does `*` turn it on */
	/* Not a kcm controller (a kcmd tool such as the kubelet simulator): never turned on by `*`,
	 * not listed as a controller in --help, enabled by its own flag `enable_flag`. */
	bool hidden;
	const char *enable_flag;
	const char *const *feature_gates; /* NULL-terminated gates it needs, may be NULL */
	const char *service_account; /* kube-system/<name> with --use-service-account-credentials */
	bool cluster_scoped_keys;    /* its keys name cluster-scoped objects (sharding) */

	const struct kcmd_watch *watches; /* n_watches entries */
	size_t n_watches;
	bool watch_deletable; /* metadata informers for every deletable resource (discovery) */
	/* With watch_deletable: the counter of failed discovery syncs is exported under this name
	 * (upstream's garbagecollector_controller_resources_sync_error_total) and help text. */
	const char *discovery_error_metric, *discovery_error_help;

	const struct kcmd_queue *queues; /* n_queues entries */
	size_t n_queues;

	const struct kcmd_flag *flags; /* n_flags entries */
	size_t n_flags;
	/* How many worker processes (>= 1); NULL = 1. */
	int (*worker_count)(const struct kcmd_flag_values *v);

	/* manager */
	int (*mgr_setup)(struct kcmd_mgr_env *env, const struct kcmd_flag_values *v,
	                 void **ret_state);
	/* A process of the controller ended (crashed: killed by a signal); returns how many items
	 * it held were repaired (the manager logs it), or -errno. */
	int (*mgr_child_died)(void *state, int pid, const char *process, bool crashed);
	void (*mgr_metrics)(void *state, struct kcmd_text *out);
	void (*mgr_fini)(void *state);
	const struct kcmd_debug_endpoint *debug; /* n_debug entries */
	size_t n_debug;
	/* Checked once before the processes start (e.g. refusing a cluster it must not act on):
	 * returns 0, or -errno with a message; -EEXIST is fatal. */
	int (*mgr_precheck)(const struct kcmd_flag_values *v, const struct kube_config *kcfg,
	                    char *err, size_t errlen);

	/* informerd */
	const struct inf_handler_table *handlers;

	/* worker */
	const struct wk_controller *worker;
	/* A main of its own instead of the generic key loop (argc/argv as kcmd-worker got them). */
	int (*worker_main)(int argc, char **argv);
};
