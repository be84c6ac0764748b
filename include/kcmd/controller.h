/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * kcmd/controller.h: what a controller is to kcmd. Every controller (in-tree under workers/, or a
 * user's plug-in) fills one `struct kcmd_controller`; the registry (controllers/registry.c) is
 * the one table of them: the in-tree ones, then the plug-ins --controller-plugins loaded. The
 * manager, the dispatcher and the worker main read only this descriptor: none of them names a
 * controller. Part of the public controller API (kcmd/kcmd.h), versioned by
 * KCMD_CONTROLLER_ABI.
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
 *       dispatcher the event handlers (kcmd/handlers.h), run in the controller's own
 *                  `kcmd-dispatcher` process over the change feed;
 *       worker     init / sync(key) -> done, requeue (rate limited), requeue after / fini, or a
 *                  whole main of its own (a controller that keeps many writes in flight).
 *
 *   Sharding and out-of-tree controllers were kept in mind: a controller states its keys' scope
 *   (namespaced or cluster) so a shard filter can be applied by the framework, never by the
 *   controller; the descriptor carries an ABI version checked by the registry.
 *
 *   State (this version): informerd links no controller code; it publishes every change to the
 *   change feed (shm/feed.h) and each enabled controller with handlers gets its own
 *   `kcmd-dispatcher`, which runs its handler table over the feed and owns its queues
 *   (docs/architecture.md, "The data path"). Out-of-tree controllers are shared objects loaded
 *   with --controller-plugins (below, KCMD_PLUGIN) by the manager, the dispatchers and the
 *   workers alike; the ABI version is checked at load.
 *
 *   Rejected: registering controllers at run time from constructors (link order decides what
 *   exists, and a static table is checked by the compiler; a plug-in is one named function
 *   kcmd calls, so nothing runs before the ABI check); one process per controller holding
 *   everything (a fault in one controller's handler would stop the others).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KCMD_CONTROLLER_ABI 2u /* 2: metrics declared in the descriptor */

struct inf_handler_table; /* kcmd/handlers.h */
struct wk_controller;     /* kcmd/worker.h */
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
	KCMD_CACHE_POD,          /* typed records (shm record kinds, same values) */
	KCMD_CACHE_REPLICASET,
	/* the whole object: metadata with every annotation, plus its JSON as the apiserver sent
	 * it (shm/record-model.h, struct shm_object_view); for resources no typed record covers */
	KCMD_CACHE_OBJECT,
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
/* The shared cache's read-only fd, for a manager hook that reads the cache at scrape time
 * (mgr_metrics, as upstream's custom collectors list their informers): owned by the manager,
 * valid for the manager's life (keep it, do not close it). -EBADF when there is none (a unit
 * test's env). In-tree controllers map it with shm/arena.h's reader (the PV binder's
 * pv_collector_* gauges); the public API has no reader for it yet. */
int kcmd_mgr_arena_fd(const struct kcmd_mgr_env *env);

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

/* ---- metrics ----------------------------------------------------------------------------------
 * A controller's own metric families, declared as data (upstream's names, help, labels and
 * buckets): the manager creates one shared region per controller from this declaration before
 * it starts the controller's processes, hands it to them (KCMD_METRICS_FD), and renders every
 * family on /metrics; the processes update it with kcmd/metrics.h. Rendering follows
 * client_golang: a family with labels shows only the series that were touched, one without
 * labels always shows (zero before any update).
 */
enum kcmd_metric_type {
	KCMD_METRIC_COUNTER = 1, /* integral, monotonic (kcmd_metric_add) */
	KCMD_METRIC_GAUGE,       /* a double (kcmd_metric_set, kcmd_metric_gauge_add) */
	KCMD_METRIC_HISTOGRAM,   /* kcmd_metric_observe into `buckets` */
};

/* component-base's stability level, rendered as "[ALPHA] " etc. before the help; NONE renders
 * the help alone (kcmd's own families). */
enum kcmd_metric_stability {
	KCMD_METRIC_NONE = 0,
	KCMD_METRIC_ALPHA,
	KCMD_METRIC_BETA,
	KCMD_METRIC_STABLE,
};

struct kcmd_metric_label {
	const char *name;
	/* NULL-terminated: the only values the label takes (the series table is sized from them,
	 * one slot per combination, and never fills; another value is refused with -EINVAL).
	 * NULL: any value (a namespace name): the metric's series live in a hash table of
	 * `max_series` slots. */
	const char *const *values;
};

struct kcmd_metric {
	const char *name; /* the whole family name, e.g. "job_controller_job_syncs_total" */
	const char *help; /* upstream's help text, unescaped (newlines are escaped on output) */
	enum kcmd_metric_type type;
	enum kcmd_metric_stability stability;
	const struct kcmd_metric_label *labels; /* n_labels entries (at most 8) */
	size_t n_labels;
	/* HISTOGRAM: the upper bounds, ascending, without +Inf (at most 64) */
	const double *buckets;
	size_t n_buckets;
	/* With a label of no fixed values: how many distinct series the table holds (0: 1024).
	 * Past it an update is not recorded: it returns -ENOSPC and is counted in
	 * kcmd_metric_series_dropped_total{metric="<name>"}. */
	unsigned max_series;
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
	 * returns 0, or -errno with a message; -EEXIST is fatal; -ECANCELED leaves the
	 * controller off with the message as a warning (kcm's "disabled" start result, e.g. the
	 * token controller without --service-account-private-key-file). */
	int (*mgr_precheck)(const struct kcmd_flag_values *v, const struct kube_config *kcfg,
	                    char *err, size_t errlen);

	/* dispatcher (kcmd/handlers.h) */
	const struct inf_handler_table *handlers;

	/* worker (kcmd/worker.h) */
	const struct wk_controller *worker;
	/* A main of its own instead of the generic key loop (argc/argv as kcmd-worker got them). */
	int (*worker_main)(int argc, char **argv);

	/* metrics (above): the families this controller's processes update (kcmd/metrics.h) */
	const struct kcmd_metric *metrics; /* n_metrics entries, ids are indexes */
	size_t n_metrics;
};

/* ---- plug-ins -----------------------------------------------------------------------------------
 * A plug-in is a shared object that exports one function named KCMD_PLUGIN_SYMBOL returning
 * its descriptor (static storage; kcmd never frees it). kcmd checks `abi` before it reads any
 * other field and refuses a mismatch, a missing symbol or a name, alias, queue or flag that
 * clashes with a controller it already has. */
#define KCMD_PLUGIN_SYMBOL "kcmd_controller_plugin"
typedef const struct kcmd_controller *(*kcmd_plugin_fn)(void);
#define KCMD_PLUGIN(desc)                                                                          \
	__attribute__((visibility("default"))) const struct kcmd_controller *                      \
	kcmd_controller_plugin(void);                                                              \
	const struct kcmd_controller *kcmd_controller_plugin(void)                                 \
	{                                                                                          \
		return &(desc);                                                                    \
	}
