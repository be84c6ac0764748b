/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * kcmd/worker.h: what a controller brings to the `kcmd-worker` process, its sync (part of the
 * public controller API, versioned by KCMD_CONTROLLER_ABI).
 *
 * Design note.
 *   A worker process runs one controller. It holds at most one key per queue at a time (the
 *   queue's prefetch is 1, client-go's exact semantics: a key is "processing" from Get to Done)
 *   and syncs it to completion before taking the next, so a controller's sync may block on API
 *   calls: parallelism comes from running several worker processes, as upstream's comes from
 *   goroutines (--concurrent-replicaset-syncs workers = that many processes; the descriptor's
 *   worker_count).
 *   The sync's result maps to client-go's handling: Forget on success, AddRateLimited on error,
 *   AddAfter for a requested recheck — folded into the queue's Done.
 *   The sync reads the shared cache (ctx->arena, kcmd/cache.h) and writes with ctx->kc
 *   (kcmd/client.h); it keeps no private copy of the objects it reads.
 *   Start-up: init runs first; sync is called only once every resource of the descriptor's
 *   `watches` has been listed by the cache (kcmd_cache_synced() == 1 for each: upstream's
 *   WaitForNamedCacheSync, done by kcmd-worker, which logs "Caches are synced for <name>"),
 *   so a sync never needs a wait of its own. Timers or other sources that init arms run from
 *   the start and must check kcmd_cache_synced() themselves.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ipc_loop;
struct kube_client;
struct kube_config;
struct shm_arena;
struct kcmd_flag_values;

struct wk_ctx {
	struct ipc_loop *loop;
	struct kube_client *kc;  /* blocking use only (kcmd_kube_request) */
	struct shm_arena *arena; /* read-only (kcmd/cache.h) */
	int expectations_fd;     /* -1 when not passed */
	const char *process;     /* KCMD_PROCESS */
	const char *controller;  /* canonical name */
	/* what kc was made from, for a controller that needs a client of its own (the GC's) */
	const struct kube_config *config;
	const struct kcmd_flag_values *flags; /* the controller's own flags (kcmd_flag_int, ...) */
	double qps;                           /* --kube-api-qps */
	int burst;                            /* --kube-api-burst */
	/* --kube-api-content-type: "application/vnd.kubernetes.protobuf" or NULL (JSON) */
	const char *content_type;
};

struct wk_result {
	int err;            /* 0: Forget; < 0: AddRateLimited */
	bool requeue_after; /* AddAfter(after_usec) (with err == 0) */
	uint64_t after_usec;
};

struct wk_controller {
	const char *name;          /* canonical (kcm's name) */
	const char *const *queues; /* NULL-terminated names of the queues it consumes */
	int (*init)(struct wk_ctx *ctx, void **ret_state);
	/* Syncs key taken from queues[q]. */
	void (*sync)(void *state, size_t q, const char *key, struct wk_result *res);
	/* Frees what init made, after the last sync (SIGTERM). May be NULL: nothing to free. */
	void (*fini)(void *state);
};
