/* SPDX-License-Identifier: Apache-2.0 */
/*
 * informerd/reflector.c: the list/watch state machine of one resource (see reflector.h for the
 * rules and the design note).
 *
 * Shape: `next` is the action the reflector will take when the clock reaches `wake_at` and no
 * call is in flight; `inflight` is the call the driver is running. Every report (list page,
 * watch event, end of watch) clears or keeps `inflight` and chooses the next action, either
 * immediately (wake_at = now) or after a backoff. The ListAndWatch of client-go becomes the
 * action ACT_LIST_AND_WATCH; its internal retries become the other actions.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "informerd/reflector.h"

enum action {
	ACT_NONE = 0,
	ACT_LIST_AND_WATCH, /* a replace: WatchList when enabled, else LIST */
	ACT_LIST,           /* LIST first page at relist_rv() */
	ACT_LIST_PAGE,      /* next page with the saved continue token */
	ACT_FULL_LIST,      /* unpaginated LIST at "" (continue token expired) */
	ACT_WATCH,          /* WATCH from last_rv */
	ACT_WATCH_LIST,     /* WATCH with sendInitialEvents (a replace) */
};

enum inflight {
	IN_NONE = 0,
	IN_LIST,
	IN_WATCH,
};

struct inf_reflector {
	int64_t page_size;
	int32_t min_timeout_s;
	double (*rand01)(void *);
	void *rand_userdata;

	char last_rv[INF_RV_MAX];
	char req_rv[INF_RV_MAX]; /* the rv parameter of the request in flight */
	char cont[INF_CONT_MAX];
	bool rv_unavailable; /* client-go isLastSyncResourceVersionUnavailable */
	bool paginated;      /* an RV "0" list came back in pages: keep paging relists */
	bool synced;
	bool watch_list;
	bool replaced_once;

	/* The acquisition barrier (inf_reflector_barrier): the epoch asked for, the epoch of the
	 * last barrier replace committed, and the epoch the replace in progress counts for. */
	uint32_t barrier_want, barrier_have, list_barrier;
	char barrier_rv[INF_RV_MAX];

	enum action next;
	uint64_t wake_at;
	enum inflight inflight;
	bool list_is_continue; /* the LIST in flight carries a continue token */
	int64_t list_limit;    /* limit of the first page of the list in progress */
	bool wl_initial;       /* WatchList: still before the initial-events-end bookmark */
	uint64_t watch_started_at;
	uint64_t watch_events;
	uint64_t list_started_at;

	uint64_t bo_cur, bo_last;
	bool bo_used;

	struct inf_reflector_stats stats;
};

static double default_rand01(void *u)
{
	(void)u;
	return (double)random() / ((double)RAND_MAX + 1.0);
}

static void copy_str(char *dst, size_t n, const char *src)
{
	size_t l = src ? strnlen(src, n - 1) : 0;

	if (l)
		memcpy(dst, src, l);
	dst[l] = '\0';
}

int inf_reflector_new(const struct inf_reflector_config *cfg, struct inf_reflector **ret)
{
	struct inf_reflector *r;

	if (!cfg || !ret || cfg->page_size < 0 || cfg->min_watch_timeout_s < 0)
		return -EINVAL;
	if (cfg->warm_rv && strlen(cfg->warm_rv) >= INF_RV_MAX)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->page_size = cfg->page_size ? cfg->page_size : INF_DEFAULT_PAGE_SIZE;
	r->min_timeout_s = cfg->min_watch_timeout_s ? cfg->min_watch_timeout_s
	                                            : INF_DEFAULT_MIN_WATCH_TIMEOUT_S;
	r->rand01 = cfg->rand01 ? cfg->rand01 : default_rand01;
	r->rand_userdata = cfg->rand_userdata;
	r->watch_list = cfg->watch_list;
	if (cfg->warm_rv && cfg->warm_rv[0]) {
		/* Warm start: the arena is synced at warm_rv; resume the watch, list nothing. */
		copy_str(r->last_rv, sizeof(r->last_rv), cfg->warm_rv);
		r->synced = true;
		r->replaced_once = true;
		r->next = ACT_WATCH;
	} else {
		r->next = ACT_LIST_AND_WATCH;
	}
	r->wake_at = 0;
	*ret = r;
	return 0;
}

struct inf_reflector *inf_reflector_free(struct inf_reflector *r)
{
	free(r);
	return NULL;
}

/* client-go relistResourceVersion(). */
static const char *relist_rv(const struct inf_reflector *r)
{
	if (r->rv_unavailable)
		return "";
	if (!r->last_rv[0])
		return "0";
	return r->last_rv;
}

static double rnd(struct inf_reflector *r)
{
	double x = r->rand01(r->rand_userdata);

	if (!(x >= 0.0))
		x = 0.0;
	if (x >= 1.0)
		x = 0.999999;
	return x;
}

/* The backoff manager: 800 ms doubling to 30 s, jitter 1.0, reset after 2 min of quiet. */
static uint64_t backoff_delay(struct inf_reflector *r, uint64_t now)
{
	uint64_t d;

	if (!r->bo_used || now - r->bo_last >= INF_BACKOFF_RESET_US)
		r->bo_cur = INF_BACKOFF_INITIAL_US;
	d = r->bo_cur;
	r->bo_cur = d * 2 > INF_BACKOFF_CAP_US ? INF_BACKOFF_CAP_US : d * 2;
	r->bo_last = now;
	r->bo_used = true;
	r->stats.backoffs++;
	return d + (uint64_t)(rnd(r) * (double)d);
}

static void schedule(struct inf_reflector *r, enum action a, uint64_t at)
{
	r->next = a;
	r->wake_at = at;
}

static void schedule_backoff(struct inf_reflector *r, enum action a, uint64_t now)
{
	schedule(r, a, now + backoff_delay(r, now));
}

/* What client-go's StreamWatcher treats as a normal end of stream (net.IsProbableEOF, timeouts):
 * the watch is re-opened. Other stream failures (undecodable data, a broken encoding) surface as
 * errors and end the ListAndWatch. */
static bool probable_eof(int err)
{
	return err == 0 || err == -ECONNRESET || err == -ETIMEDOUT || err == -EPIPE;
}

static bool expired(int err, bool too_large)
{
	return err == -EKEYEXPIRED || too_large;
}

uint64_t inf_reflector_next_wakeup(const struct inf_reflector *r)
{
	if (r->inflight != IN_NONE || r->next == ACT_NONE)
		return UINT64_MAX;
	return r->wake_at;
}

static bool barrier_pending(const struct inf_reflector *r)
{
	return r->barrier_want != r->barrier_have;
}

/* The version a barrier replace asks: the Lease's, unless it proved unusable (then a
 * consistent read, which is newer than any Lease write that came before it). */
static const char *barrier_rv(const struct inf_reflector *r)
{
	return r->rv_unavailable ? "" : r->barrier_rv;
}

static void begin_replace(struct inf_reflector *r, struct inf_refl_request *q, uint64_t now)
{
	/* a replace begun while a barrier is pending asks a version that satisfies it (ACT_LIST
	 * and ACT_WATCH_LIST use barrier_rv(); ACT_FULL_LIST is a consistent read) */
	r->list_barrier = barrier_pending(r) ? r->barrier_want : 0;
	q->replace_begin = true;
	if (r->replaced_once)
		r->stats.relists++;
	r->list_started_at = now;
}

int inf_reflector_step(struct inf_reflector *r, uint64_t now, struct inf_refl_request *q)
{
	enum action a;

	if (!r || !q)
		return -EINVAL;
	if (r->inflight != IN_NONE || r->next == ACT_NONE || now < r->wake_at)
		return 0;
	memset(q, 0, sizeof(*q));
	a = r->next;
	if (a == ACT_LIST_AND_WATCH)
		a = r->watch_list ? ACT_WATCH_LIST : ACT_LIST;
	r->next = ACT_NONE;

	switch (a) {
	case ACT_LIST:
		if (barrier_pending(r)) {
			/* at least as new as the Lease write that won: NotOlderThan R (served by
			 * the watch cache once it has seen R), or a consistent list */
			copy_str(r->req_rv, sizeof(r->req_rv), barrier_rv(r));
			q->rv_match = r->req_rv[0] ? "NotOlderThan" : NULL;
			q->limit = r->req_rv[0] ? 0 : r->page_size;
		} else {
			copy_str(r->req_rv, sizeof(r->req_rv), relist_rv(r));
			/* An RV other than "" and "0" is served unpaginated by the watch cache. */
			if (r->req_rv[0] && strcmp(r->req_rv, "0") != 0 && !r->paginated)
				q->limit = 0;
			else
				q->limit = r->page_size;
		}
		q->op = INF_REFL_LIST;
		q->rv = r->req_rv;
		r->list_limit = q->limit;
		r->list_is_continue = false;
		begin_replace(r, q, now);
		r->inflight = IN_LIST;
		r->stats.lists++;
		return 1;
	case ACT_LIST_PAGE:
		q->op = INF_REFL_LIST;
		q->rv = "";
		q->cont = r->cont;
		q->limit = r->list_limit;
		r->req_rv[0] = '\0';
		r->list_is_continue = true;
		r->inflight = IN_LIST;
		r->stats.lists++;
		return 1;
	case ACT_FULL_LIST:
		q->op = INF_REFL_LIST;
		q->rv = "";
		r->req_rv[0] = '\0';
		r->list_limit = 0;
		r->list_is_continue = false;
		begin_replace(r, q, now);
		r->inflight = IN_LIST;
		r->stats.lists++;
		return 1;
	case ACT_WATCH:
	case ACT_WATCH_LIST:
		q->op = INF_REFL_WATCH;
		q->allow_bookmarks = true;
		q->timeout_s = r->min_timeout_s + (int32_t)(rnd(r) * (double)r->min_timeout_s);
		if (a == ACT_WATCH_LIST) {
			copy_str(r->req_rv, sizeof(r->req_rv),
			         barrier_pending(r) ? barrier_rv(r)
			                            : (r->rv_unavailable ? "" : r->last_rv));
			q->send_initial_events = true;
			q->rv_match = "NotOlderThan";
			begin_replace(r, q, now);
			r->wl_initial = true;
		} else {
			copy_str(r->req_rv, sizeof(r->req_rv), r->last_rv);
			r->wl_initial = false;
		}
		q->rv = r->req_rv;
		r->inflight = IN_WATCH;
		r->watch_started_at = now;
		r->watch_events = 0;
		r->stats.watches++;
		return 1;
	default:
		return 0;
	}
}

int inf_reflector_list_result(struct inf_reflector *r, uint64_t now,
                              const struct inf_list_result *res)
{
	if (!r || !res || r->inflight != IN_LIST)
		return -EINVAL;
	r->inflight = IN_NONE;

	if (res->err == 0) {
		if (res->cont && res->cont[0]) {
			if (strlen(res->cont) >= sizeof(r->cont)) {
				/* A token we cannot send back: give up this list. */
				schedule_backoff(r, ACT_LIST_AND_WATCH, now);
				return INF_LIST_FAILED;
			}
			if (!r->list_is_continue && strcmp(r->req_rv, "0") == 0)
				r->paginated = true;
			copy_str(r->cont, sizeof(r->cont), res->cont);
			schedule(r, ACT_LIST_PAGE, now);
			return INF_LIST_MORE;
		}
		if (!res->rv || !res->rv[0] || strlen(res->rv) >= INF_RV_MAX) {
			schedule_backoff(r, ACT_LIST_AND_WATCH, now);
			return INF_LIST_FAILED;
		}
		copy_str(r->last_rv, sizeof(r->last_rv), res->rv);
		r->rv_unavailable = false;
		r->synced = true;
		r->replaced_once = true;
		r->stats.last_list_usec = now - r->list_started_at;
		r->cont[0] = '\0';
		if (r->list_barrier)
			r->barrier_have = r->list_barrier;
		r->list_barrier = 0;
		schedule(r, ACT_WATCH, now);
		return INF_LIST_DONE;
	}

	if (expired(res->err, res->rv_too_large))
		r->stats.expired++;
	if (r->list_is_continue && res->err == -EKEYEXPIRED) {
		/* The continue token expired mid-list: one full list at "" (pager fallback). */
		schedule(r, ACT_FULL_LIST, now);
		return INF_LIST_FAILED;
	}
	if (expired(res->err, res->rv_too_large) && r->req_rv[0]) {
		/* The version we asked for is gone: relist at once with a consistent read. */
		r->rv_unavailable = true;
		schedule(r, ACT_LIST, now);
		return INF_LIST_FAILED;
	}
	if (expired(res->err, res->rv_too_large))
		r->rv_unavailable = true;
	schedule_backoff(r, ACT_LIST_AND_WATCH, now);
	return INF_LIST_FAILED;
}

/* The watch ended with err (0: closed normally). */
static void watch_ended(struct inf_reflector *r, uint64_t now, int err, bool started)
{
	r->inflight = IN_NONE;

	if (r->wl_initial) {
		/* WatchList did not reach its initial-events-end bookmark (client-go watchList()).
		 */
		r->wl_initial = false;
		if (err == -ECONNREFUSED || err == -EAGAIN) {
			schedule_backoff(r, ACT_WATCH_LIST, now);
			return;
		}
		if (err == -EKEYEXPIRED) {
			r->stats.expired++;
			r->rv_unavailable = true; /* retry at once with a consistent snapshot */
			schedule(r, ACT_WATCH_LIST, now);
			return;
		}
		if (started && probable_eof(err) &&
		    !(r->watch_events == 0 && now - r->watch_started_at < INF_SHORT_WATCH_US)) {
			/* Closed (or a probable EOF) before the bookmark: start the stream again.
			 */
			schedule(r, ACT_WATCH_LIST, now);
			return;
		}
		/* Anything else: fall back to LIST now (making progress beats waiting). */
		r->stats.watch_list_fallbacks++;
		if (err == -EINVAL || err == -EBADR)
			r->watch_list = false; /* the server rejects sendInitialEvents */
		schedule(r, ACT_LIST, now);
		return;
	}
	if (err == -EKEYEXPIRED) {
		/* Too old: relist at the last version (then "" if that is gone too). */
		r->stats.expired++;
		schedule_backoff(r, ACT_LIST, now);
		return;
	}
	if (err == -ECONNREFUSED || err == -EAGAIN) {
		/* isWatchErrorRetriable / TooManyRequests: same version, after a backoff. */
		schedule_backoff(r, ACT_WATCH, now);
		return;
	}
	if (started && probable_eof(err)) {
		if (r->watch_events == 0 && now - r->watch_started_at < INF_SHORT_WATCH_US) {
			/* "very short watch": something is wrong; end the ListAndWatch. */
			schedule_backoff(r, ACT_LIST_AND_WATCH, now);
			return;
		}
		r->stats.watch_restarts++;
		schedule(r, ACT_WATCH, now);
		return;
	}
	schedule_backoff(r, ACT_LIST_AND_WATCH, now);
}

int inf_reflector_watch_event(struct inf_reflector *r, uint64_t now, enum kube_watch_type type,
                              const char *rv, bool initial_end, int err)
{
	if (!r || r->inflight != IN_WATCH)
		return -EINVAL;
	if (type == KUBE_WATCH_ERROR) {
		/* An error event: the watch is over; the errno decides what follows. A 200 stream
		 * ended by an ERROR is not a transport end, so it is handled as "not started"
		 * (relist, or backoff + re-watch for 429). */
		watch_ended(r, now, err ? err : -EREMOTEIO, false);
		return INF_EV_STOP;
	}
	if (type < KUBE_WATCH_ADDED || type > KUBE_WATCH_BOOKMARK)
		return -EINVAL;
	r->watch_events++;
	r->stats.watch_events++;
	if (rv && strlen(rv) >= INF_RV_MAX)
		rv = NULL;

	if (r->wl_initial) {
		if (type == KUBE_WATCH_BOOKMARK) {
			if (!initial_end)
				return INF_EV_BOOKMARK;
			if (!rv || !rv[0]) {
				watch_ended(r, now, -EPROTO, true);
				return INF_EV_STOP;
			}
			copy_str(r->last_rv, sizeof(r->last_rv), rv);
			r->wl_initial = false;
			r->rv_unavailable = false;
			r->synced = true;
			r->replaced_once = true;
			r->stats.last_list_usec = now - r->list_started_at;
			if (r->list_barrier)
				r->barrier_have = r->list_barrier;
			r->list_barrier = 0;
			return INF_EV_REPLACED;
		}
		/* Initial events come in no version order: the version waits for the bookmark. */
		return type == KUBE_WATCH_DELETED ? INF_EV_APPLY : INF_EV_COLLECT;
	}
	if (rv && rv[0])
		copy_str(r->last_rv, sizeof(r->last_rv), rv);
	return type == KUBE_WATCH_BOOKMARK ? INF_EV_BOOKMARK : INF_EV_APPLY;
}

int inf_reflector_watch_done(struct inf_reflector *r, uint64_t now, int err, bool started)
{
	if (!r)
		return -EINVAL;
	if (r->inflight != IN_WATCH)
		return 0; /* after INF_EV_STOP */
	watch_ended(r, now, err, started);
	return 0;
}

int inf_reflector_call_failed(struct inf_reflector *r, uint64_t now, int err)
{
	struct inf_list_result res = {.err = err ? err : -EIO};

	if (!r)
		return -EINVAL;
	if (r->inflight == IN_LIST)
		return inf_reflector_list_result(r, now, &res) < 0 ? -EINVAL : 0;
	if (r->inflight == IN_WATCH)
		watch_ended(r, now, res.err, false);
	return 0;
}

int inf_reflector_barrier(struct inf_reflector *r, uint64_t now, uint32_t epoch, const char *rv)
{
	bool cancel;

	if (!r || !epoch || (rv && strlen(rv) >= INF_RV_MAX))
		return -EINVAL;
	if (epoch == r->barrier_want)
		return 0; /* asked already (and maybe done) */
	r->barrier_want = epoch;
	copy_str(r->barrier_rv, sizeof(r->barrier_rv), rv);
	cancel = r->inflight != IN_NONE;
	r->inflight = IN_NONE;
	r->wl_initial = false;
	r->list_barrier = 0;
	r->cont[0] = '\0';
	/* begin the replace now, even during a backoff: one request per type per acquisition;
	 * and with a fresh backoff, as upstream's new leader has (fresh informers), so a failure
	 * of this list (an apiserver restarting) is retried after 0.8 s, not after the 30 s that
	 * earlier failures may have reached: the workers wait for it */
	r->bo_used = false;
	schedule(r, ACT_LIST_AND_WATCH, now);
	return cancel ? 1 : 0;
}

int inf_reflector_barrier_done(struct inf_reflector *r, uint32_t epoch)
{
	if (!r || !epoch)
		return -EINVAL;
	r->barrier_want = r->barrier_have = epoch;
	return 0;
}

uint32_t inf_reflector_barrier_epoch(const struct inf_reflector *r)
{
	return r->barrier_have;
}

const char *inf_reflector_last_rv(const struct inf_reflector *r)
{
	return r->last_rv;
}

bool inf_reflector_synced(const struct inf_reflector *r)
{
	return r->synced;
}

bool inf_reflector_watch_list_enabled(const struct inf_reflector *r)
{
	return r->watch_list;
}

void inf_reflector_get_stats(const struct inf_reflector *r, struct inf_reflector_stats *ret)
{
	*ret = r->stats;
}
