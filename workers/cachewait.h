/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/cachewait.h: the worker's start barrier, upstream's WaitForNamedCacheSync for every
 * controller on the generic key loop (workers/main.c).
 *
 * Design note.
 *   Upstream's controllers take no key before the informers they read have listed once
 *   (client-go's HasSynced): a lister that has not listed yet answers "not found" for objects
 *   that exist, and a sync acting on that creates what exists, deletes what it should keep, or
 *   forgets a key it should act on. kcmd's informers are informerd's, shared in the arena, so
 *   a worker process starts (leadership, a crash, an on-demand pool worker) whenever the
 *   manager says, not after its caches: it waits here, in its own event loop, until
 *   kcmd_cache_synced() is 1 for every resource its descriptor watches (`watches`), then takes
 *   keys. The wait polls every 100 ms (client-go's syncedPollPeriod) with a loop timer, so the
 *   loop keeps serving the process's signals (SIGTERM ends a wait) and the controller's own
 *   sources armed by its init.
 *
 *   An operator must see why a worker does nothing: every 10 s of waiting it logs the
 *   resources not synced yet and why (not listed yet, or not in the cache at all); after 60 s
 *   the line becomes a warning that names the usual cause, a resource the apiserver does not
 *   serve (a CRD or an API group that is off), whose informer never lists. The wait never
 *   gives up, as upstream's does not; controllers that can run without one of their resources
 *   (the resource quota controller's counted kinds) keep their own, bounded, waits in their
 *   sync for what they discover at run time, outside `watches`.
 *
 *   Logging: "Waiting for caches to sync for <controller>" and "Caches are synced for
 *   <controller>" (upstream's WaitForNamedCacheSync lines) at info level in the controller's
 *   first worker process, at --v=2 in the others (a pool worker started on demand later would
 *   repeat them for every start), so the pair appears once per controller start, as upstream's.
 *
 *   Rejected: waiting in the manager before starting the workers (the manager would have to read
 *   every controller's resources, and a worker restarted after a crash, or started on demand,
 *   would still need the check); a futex on the arena's change sequence instead of polling (a
 *   wake for every object written during the initial lists, to look for one flag; 100 ms is
 *   upstream's own latency); busy-waiting before the loop starts (no SIGTERM, no timers).
 *
 * Calling context: the loop's thread only. The module logs (it is part of the worker process,
 * which owns these lines); it keeps no pointer into the arena between polls.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ipc_loop;
struct shm_arena;
struct kcmd_watch;
struct wk_cachewait;

#define WK_CACHEWAIT_POLL_USEC     100000ull   /* client-go's syncedPollPeriod */
#define WK_CACHEWAIT_PROGRESS_USEC 10000000ull /* a progress line this often */
#define WK_CACHEWAIT_SUSPECT_USEC  60000000ull /* then the progress lines are warnings */

struct wk_cachewait_opts {
	const char *controller; /* named in the log lines; must outlive the wait */
	bool announce;          /* info-level start and end lines (the first worker process) */
	/* 0: the defaults above (tests shorten them) */
	uint64_t poll_usec, progress_usec, suspect_usec;
};

/* Called once from the loop when every watched resource has synced. May free the wait. */
typedef void (*wk_cachewait_fn)(void *userdata);

/*
 * Starts waiting for the n resources of watches (the descriptor's; not copied: they must
 * outlive the wait) to be synced in arena a.
 * Returns 1 when they all are already (or n is 0): done is not called, *ret is NULL, and the
 * caller takes keys at once. Returns 0 when waiting: *ret is the caller's (wk_cachewait_free,
 * before or after done ran), done(userdata) runs once from a loop timer. -EINVAL (NULL loop,
 * arena, done or ret; watches NULL with n > 0), -ENOMEM, or the loop's timer error.
 */
int wk_cachewait_start(struct ipc_loop *loop, struct shm_arena *a, const struct kcmd_watch *watches,
                       size_t n, const struct wk_cachewait_opts *opts, wk_cachewait_fn done,
                       void *userdata, struct wk_cachewait **ret);

/* Stops the wait (done is not called after this) and frees it. NULL-safe; returns NULL. */
struct wk_cachewait *wk_cachewait_free(struct wk_cachewait *cw);

/*
 * The resources of watches not synced yet in a, described into buf for a log line
 * ("pods (not listed yet), widgets.example.com (not in the cache)"; "" when none), truncated
 * to len. Returns how many are not synced (0: all are).
 */
size_t wk_cachewait_pending(struct shm_arena *a, const struct kcmd_watch *watches, size_t n,
                            char *buf, size_t len);

/*
 * The same over every type registered in arena a (the garbage collector's graph reads them
 * all: it declares no `watches`): how many are not synced (at the current epoch, in a process
 * with the epoch source set), the first of them named into buf ("" when none). A slot being
 * written or retired is not counted.
 */
size_t wk_cachewait_arena_pending(struct shm_arena *a, char *buf, size_t len);

/* Whether the process named `process` (KCMD_PROCESS: "worker-<controller>-<k>") is its
 * controller's first worker (k = 0), or not one of a pool (no such suffix): it announces. */
bool wk_cachewait_first_worker(const char *process, const char *controller);
