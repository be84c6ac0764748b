/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * informerd/informer.h: the driver that joins reflectors (reflector.h), the HTTP transport
 * (kube/client.h, non-blocking, in the caller's ipc_loop) and the store (store.h).
 *
 * Design note.
 *   One struct inf_informers per process holds one informer per watched resource; every
 *   informer runs its reflector's requests as kube_call's on the one kube_client (one libcurl
 *   multi, HTTP/2: every watch shares one connection) and feeds the answers back:
 *     LIST page     -> kube_decode_list, each item into the store's replace; the reflector's
 *                      verdict commits or aborts the replace
 *     WATCH event   -> kube_decode_watch_event; the reflector's verdict says apply, collect into
 *                      the WatchList replace, commit it, record a bookmark, or stop the stream
 *     end of call   -> reflector, then the next request (or a timer for the backoff)
 *   The decoded object is freed right after the store has written it and the handlers ran:
 *   nothing is kept outside the arena.
 *   Warm start: the arena's synced resourceVersion of each type becomes the reflector's
 *   warm_rv, so the first request is a WATCH.
 *
 * Calling context: the loop's thread only.
 */
#include <stdbool.h>
#include <stdint.h>

#include "lib/handlers.h"
#include "lib/infmetrics.h"
#include "informerd/store.h"
#include "ipc/loop.h"
#include "kube/client.h"

struct inf_informers_config {
	struct ipc_loop *loop;
	struct kube_client *client;
	struct inf_store *store;
	struct inf_metrics *metrics; /* may be NULL */
	bool watch_list;
	int32_t min_watch_timeout_s; /* 0: 300 */
	int64_t page_size;           /* 0: 500 */
	bool no_warm_start;          /* ignore the arena's synced versions (always list first) */
	/* Optional: told about every failed call, dropped watch and bad object (the process logs;
	 * the library never does). what is a short static description. */
	void (*on_error)(void *userdata, const struct inf_resource *res, const char *what, int err);
	void *userdata;
};

struct inf_informers;

int inf_informers_new(const struct inf_informers_config *cfg, struct inf_informers **ret);
/* Cancels every call. NULL-safe. */
struct inf_informers *inf_informers_free(struct inf_informers *ii);

/* Starts an informer for res (res must outlive it). Returns 0, -EEXIST already watched, or the
 * store's/reflector's error. */
int inf_informers_add(struct inf_informers *ii, const struct inf_resource *res);
/* Stops the informer of group/resource; with drop, its objects are deleted from the arena
 * (tombstones to handlers: discovery dropped the resource). -ENOENT if not watched. */
int inf_informers_remove(struct inf_informers *ii, const char *group, const char *resource,
                         bool drop);
bool inf_informers_watching(const struct inf_informers *ii, const char *group,
                            const char *resource);

/* True when every informer committed its first replace (or started warm). */
bool inf_informers_all_synced(const struct inf_informers *ii);
/* The acquisition barrier: every informer, and every one added later, relists at least as new
 * as the Lease write of leadership epoch `epoch` (resourceVersion rv, NULL or "" unknown: a
 * consistent LIST), abandoning the call it had in flight; each type is then recorded in the
 * arena as synced at epoch. Returns the number of informers asked, or -EINVAL. */
int inf_informers_barrier(struct inf_informers *ii, uint32_t epoch, const char *rv);
/* How many informers have not yet committed the replace of epoch (0 when none was asked). */
size_t inf_informers_barrier_pending(const struct inf_informers *ii);
size_t inf_informers_count(const struct inf_informers *ii);
/* The store's filter narrowed (sharding: a range was lost): every watched type's objects that
 * it now refuses leave the arena (inf_store_prune). Returns how many, or the last -errno (each
 * failure is also reported through on_error; what is left goes at the next prune or relist). */
int inf_informers_prune(struct inf_informers *ii);
/* LIST requests sent by all informers since start (for the warm-restart tests). */
uint64_t inf_informers_lists(const struct inf_informers *ii);
