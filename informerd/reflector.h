/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * informerd/reflector.h: client-go's Reflector (tools/cache/reflector.go) for one resource, as a
 * pure state machine.
 *
 * Design note.
 *   The reflector decides which LIST or WATCH to send and when; it never does I/O and never
 *   sees an object body. Its driver (informerd/informer.c) sends the request it asks for on the
 *   event loop, feeds every list page, watch event and end of call back, and does what the
 *   answer says with the objects (apply them, collect them into a replace, commit the replace).
 *   That is the shape of manager/leader.h: the timing and resourceVersion rules are testable
 *   with a simulated clock and a scripted server (informerd/tests/test-reflector.c), and the
 *   same code runs against the real apiserver.
 *
 *   Rules (client-go behaviour, see docs/informerd.md for the sources):
 *   - The first LIST asks resourceVersion "0" (served from the watch cache) with limit 500 and
 *     follows continue tokens; continue pages send no resourceVersion. A later relist asks the
 *     last seen version with no limit (the watch cache serves it), unless an RV "0" list came
 *     back paginated (then it keeps paging). A 410 on a continue page restarts as one full list
 *     at RV "" (the pager's FullListIfExpired).
 *   - After a list, WATCH from its version with allowWatchBookmarks and timeoutSeconds drawn
 *     from [min, 2*min) (min 300 s). A watch that ends normally is re-opened from the last
 *     version at once, no relist. Every ADDED/MODIFIED/DELETED/BOOKMARK advances the version.
 *   - 410 Expired (status or ERROR event) or "too large resource version": relist at the last
 *     version; if that list fails the same way, relist at "" (a consistent read).
 *   - A watch that cannot start because of connection refused or 429: back off and re-watch
 *     from the same version. Any other watch failure, and a "very short watch" (closed within
 *     1 s with no event), ends the ListAndWatch: back off, then relist.
 *   - Backoff: 800 ms doubling to a 30 s cap, jitter 1.0 (wait d + rand*d), reset to 800 ms when
 *     the previous backoff was asked for more than 2 min ago (client-go's backoff manager).
 *   - WatchList (optional): WATCH with sendInitialEvents=true, resourceVersionMatch=NotOlderThan
 *     and RV "" the first time (last version later); the initial ADDED events build a replace
 *     that is committed at the BOOKMARK annotated k8s.io/initial-events-end, at its version, and
 *     the same stream goes on as a normal watch. Before that bookmark: 429/refused back off and
 *     retry WatchList, 410 retries at once at "", an early close retries at once, anything else
 *     falls back to LIST at once; a 400/422 answer (server without the feature) also disables
 *     WatchList for this reflector for good.
 *   - Acquisition barrier (beyond upstream): inf_reflector_barrier() below.
 *   - Warm start (beyond upstream): when the arena already holds a synced version for the type,
 *     the first request is a WATCH from it: no LIST at all unless that watch answers 410.
 *
 *   Rejected: a reflector that owns the HTTP call and the decoding (untestable without a
 *   server; every branch above would need a socket); one reflector for all resources (the
 *   rules are per resource and independent).
 *
 * Calling context: single-threaded, the loop's thread. At most one request is in flight; after
 * inf_reflector_step() returned one, the driver must report its end (list_result / watch_done)
 * before the reflector asks for another.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/model.h"

#define INF_RV_MAX   128  /* resourceVersion strings (kube_list_meta uses 128) */
#define INF_CONT_MAX 4096 /* continue tokens */

#define INF_BACKOFF_INITIAL_US          800000ULL
#define INF_BACKOFF_CAP_US              30000000ULL
#define INF_BACKOFF_RESET_US            120000000ULL
#define INF_SHORT_WATCH_US              1000000ULL
#define INF_DEFAULT_PAGE_SIZE           500
#define INF_DEFAULT_MIN_WATCH_TIMEOUT_S 300

struct inf_reflector_config {
	bool watch_list;             /* try WatchList before LIST */
	int64_t page_size;           /* 0: 500 */
	int32_t min_watch_timeout_s; /* 0: 300; timeoutSeconds is drawn from [min, 2*min) */
	const char *warm_rv;         /* the arena's synced version, NULL or "" for a cold start */
	double (*rand01)(void *userdata); /* random in [0,1); NULL: random() */
	void *rand_userdata;
};

enum inf_refl_op {
	INF_REFL_NONE = 0,
	INF_REFL_LIST,
	INF_REFL_WATCH,
};

/* What to send. Strings are owned by the reflector, valid until its next call. */
struct inf_refl_request {
	enum inf_refl_op op;
	const char *rv;       /* resourceVersion parameter; "" = omit */
	const char *rv_match; /* resourceVersionMatch or NULL */
	const char *cont;     /* continue token or NULL */
	int64_t limit;        /* 0 = none */
	int32_t timeout_s;    /* WATCH: timeoutSeconds */
	bool allow_bookmarks;
	bool send_initial_events;
	/* The objects this request returns start a new replace: the driver drops any replace in
	 * progress for this resource and begins an empty one. */
	bool replace_begin;
};

/* The answer to a list page. */
struct inf_list_result {
	int err;           /* 0 or a negative errno (kube/errors.h: -EKEYEXPIRED for 410) */
	bool rv_too_large; /* kube_error.rv_too_large */
	const char *rv;    /* the list's metadata.resourceVersion (success) */
	const char *cont;  /* metadata.continue, "" or NULL on the last page */
};

enum inf_refl_list_verdict {
	INF_LIST_MORE = 1, /* more pages follow (step() asks for them); keep collecting */
	INF_LIST_DONE,     /* commit the replace at inf_reflector_last_rv() */
	INF_LIST_FAILED,   /* abort the replace in progress */
};

enum inf_refl_event_verdict {
	INF_EV_APPLY = 1, /* apply the object as a normal event */
	INF_EV_COLLECT,   /* WatchList initial event: add the object to the replace in progress */
	INF_EV_REPLACED,  /* initial-events-end: commit the replace at inf_reflector_last_rv() */
	INF_EV_BOOKMARK,  /* nothing to apply; the version advanced (record it) */
	INF_EV_STOP,      /* the watch is over: cancel it; its done report will be ignored. If a
	                   * replace was in progress (WatchList), abort it */
};

struct inf_reflector_stats {
	uint64_t lists;          /* LIST requests sent (pages included) */
	uint64_t relists;        /* replaces started after the first */
	uint64_t watches;        /* WATCH requests sent */
	uint64_t watch_restarts; /* watches re-opened after a normal end */
	uint64_t watch_events;   /* ADDED/MODIFIED/DELETED/BOOKMARK seen */
	uint64_t expired;        /* 410s seen */
	uint64_t backoffs;
	uint64_t watch_list_fallbacks;
	uint64_t last_list_usec; /* duration of the last completed (multi-page) list */
};

struct inf_reflector;

/* -EINVAL (page_size < 0, warm_rv too long), -ENOMEM. */
int inf_reflector_new(const struct inf_reflector_config *cfg, struct inf_reflector **ret);
struct inf_reflector *inf_reflector_free(struct inf_reflector *r);

/* Returns 1 and fills *ret when a request must be sent now, 0 when there is nothing to send
 * (one is in flight, or a backoff runs until inf_reflector_next_wakeup()). */
int inf_reflector_step(struct inf_reflector *r, uint64_t now_us, struct inf_refl_request *ret);
/* When step() must be called again (UINT64_MAX: only after a report). */
uint64_t inf_reflector_next_wakeup(const struct inf_reflector *r);

/* A list page answered. -EINVAL when no LIST is in flight. */
int inf_reflector_list_result(struct inf_reflector *r, uint64_t now_us,
                              const struct inf_list_result *res);

/* One watch event. rv: metadata.resourceVersion of the object (bookmarks carry only that);
 * initial_end: the object has annotation k8s.io/initial-events-end "true"; err: for ERROR, the
 * Status as an errno (kube_errno_for). -EINVAL when no WATCH is in flight. */
int inf_reflector_watch_event(struct inf_reflector *r, uint64_t now_us, enum kube_watch_type type,
                              const char *rv, bool initial_end, int err);

/* The watch call ended. err 0: the server closed the stream (timeoutSeconds, EOF); otherwise
 * the errno. started: the server had answered 200 (a later transport error is a normal end, as
 * client-go treats probable-EOF errors). Ignored (returns 0) after INF_EV_STOP. */
int inf_reflector_watch_done(struct inf_reflector *r, uint64_t now_us, int err, bool started);

/* The driver lost the call without an answer (e.g. it could not start it): treated as a
 * connection failure of the request in flight. */
int inf_reflector_call_failed(struct inf_reflector *r, uint64_t now_us, int err);

/* The acquisition barrier (beyond upstream, which starts fresh informers on winning its
 * Lease): a replace that makes the type at least as new as the Lease write of leadership
 * epoch `epoch`, begun now. Its LIST asks resourceVersion=rv with
 * resourceVersionMatch=NotOlderThan and no limit (WatchList: the same rv); rv NULL or "", or a
 * "too large resource version"/410 answer, falls back to a consistent LIST (RV ""). Any call
 * in flight is abandoned: returns 1 when there was one, and the driver must cancel it and not
 * report it; 0 otherwise (also when epoch was asked already). -EINVAL (epoch 0, rv too long).
 * Once that replace is committed, inf_reflector_barrier_epoch() returns epoch. */
int inf_reflector_barrier(struct inf_reflector *r, uint64_t now_us, uint32_t epoch, const char *rv);
/* A warm start whose arena was already relisted for epoch (an informerd restarted within the
 * term): the barrier of epoch counts as done, the watch resumes. -EINVAL (epoch 0). */
int inf_reflector_barrier_done(struct inf_reflector *r, uint32_t epoch);
/* The epoch of the last barrier replace committed (0: none). */
uint32_t inf_reflector_barrier_epoch(const struct inf_reflector *r);
const char *inf_reflector_last_rv(const struct inf_reflector *r);
/* True once a replace was committed (or the reflector started warm). */
bool inf_reflector_synced(const struct inf_reflector *r);
bool inf_reflector_watch_list_enabled(const struct inf_reflector *r);
void inf_reflector_get_stats(const struct inf_reflector *r, struct inf_reflector_stats *ret);
