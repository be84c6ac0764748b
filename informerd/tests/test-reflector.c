/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of the reflector state machine with a simulated clock and a scripted server: every
 * request it asks for is checked against client-go's rules, and every answer is fed back.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "informerd/reflector.h"

#define S 1000000ULL

static double g_rand;
static double fake_rand(void *u)
{
	(void)u;
	return g_rand;
}

static struct inf_reflector *mk(bool watch_list, const char *warm)
{
	struct inf_reflector_config c = {
	        .watch_list = watch_list, .warm_rv = warm, .rand01 = fake_rand};
	struct inf_reflector *r = NULL;

	g_rand = 0.0;
	assert_int_equal(inf_reflector_new(&c, &r), 0);
	return r;
}

static struct inf_refl_request step(struct inf_reflector *r, uint64_t now)
{
	struct inf_refl_request q;

	assert_int_equal(inf_reflector_step(r, now, &q), 1);
	return q;
}

static void no_step(struct inf_reflector *r, uint64_t now)
{
	struct inf_refl_request q;

	assert_int_equal(inf_reflector_step(r, now, &q), 0);
}

static int page(struct inf_reflector *r, uint64_t now, const char *rv, const char *cont)
{
	struct inf_list_result res = {.rv = rv, .cont = cont};

	return inf_reflector_list_result(r, now, &res);
}

static int list_err(struct inf_reflector *r, uint64_t now, int err)
{
	struct inf_list_result res = {.err = err};

	return inf_reflector_list_result(r, now, &res);
}

static void expect_watch(struct inf_reflector *r, uint64_t now, const char *rv)
{
	struct inf_refl_request q = step(r, now);

	assert_int_equal(q.op, INF_REFL_WATCH);
	assert_string_equal(q.rv, rv);
	assert_true(q.allow_bookmarks);
	assert_false(q.send_initial_events);
	assert_null(q.rv_match);
	assert_false(q.replace_begin);
	assert_in_range(q.timeout_s, 300, 599);
}

/* Cold start: paginated LIST at "0", pages without RV, then WATCH from the list's version. */
static void test_cold_paginated_list_then_watch(void **state)
{
	(void)state;
	struct inf_reflector *r = mk(false, NULL);
	struct inf_refl_request q;
	struct inf_reflector_stats st;

	assert_false(inf_reflector_synced(r));
	q = step(r, 0);
	assert_int_equal(q.op, INF_REFL_LIST);
	assert_string_equal(q.rv, "0");
	assert_int_equal(q.limit, 500);
	assert_null(q.cont);
	assert_true(q.replace_begin);
	no_step(r, 0); /* one call in flight at most */
	assert_int_equal(page(r, 10, "90", "tok1"), INF_LIST_MORE);
	q = step(r, 10);
	assert_int_equal(q.op, INF_REFL_LIST);
	assert_string_equal(q.rv, "");
	assert_string_equal(q.cont, "tok1");
	assert_int_equal(q.limit, 500);
	assert_false(q.replace_begin);
	assert_int_equal(page(r, 20, "90", ""), INF_LIST_DONE);
	assert_true(inf_reflector_synced(r));
	assert_string_equal(inf_reflector_last_rv(r), "90");
	expect_watch(r, 20, "90");
	inf_reflector_get_stats(r, &st);
	assert_int_equal(st.lists, 2);
	assert_int_equal(st.watches, 1);
	assert_int_equal(st.relists, 0);
	assert_int_equal(st.last_list_usec, 20);
	/* A later relist keeps paging because the RV "0" list was paginated. */
	assert_int_equal(
	        inf_reflector_watch_event(r, 30, KUBE_WATCH_ERROR, NULL, false, -EKEYEXPIRED),
	        INF_EV_STOP);
	q = step(r, 30 + 2 * S);
	assert_int_equal(q.op, INF_REFL_LIST);
	assert_string_equal(q.rv, "90");
	assert_int_equal(q.limit, 500);
	inf_reflector_free(r);
}

/* Events advance the version; a normal end re-watches at once from it, without a relist. */
static void test_watch_events_and_normal_end(void **state)
{
	(void)state;
	struct inf_reflector *r = mk(false, NULL);
	struct inf_reflector_stats st;
	uint64_t t = 0;

	step(r, t);
	assert_int_equal(page(r, t, "5", NULL), INF_LIST_DONE);
	expect_watch(r, t, "5");
	assert_int_equal(inf_reflector_watch_event(r, t, KUBE_WATCH_ADDED, "6", false, 0),
	                 INF_EV_APPLY);
	assert_int_equal(inf_reflector_watch_event(r, t, KUBE_WATCH_MODIFIED, "7", false, 0),
	                 INF_EV_APPLY);
	assert_int_equal(inf_reflector_watch_event(r, t, KUBE_WATCH_DELETED, "8", false, 0),
	                 INF_EV_APPLY);
	assert_int_equal(inf_reflector_watch_event(r, t, KUBE_WATCH_BOOKMARK, "12", false, 0),
	                 INF_EV_BOOKMARK);
	assert_string_equal(inf_reflector_last_rv(r), "12");
	t += 400 * S;
	assert_int_equal(inf_reflector_watch_done(r, t, 0, true), 0);
	expect_watch(r, t, "12");
	/* A transport reset after the 200 is a normal end too (probable EOF). */
	t += 5 * S;
	assert_int_equal(inf_reflector_watch_done(r, t, -ECONNRESET, true), 0);
	expect_watch(r, t, "12");
	inf_reflector_get_stats(r, &st);
	assert_int_equal(st.lists, 1);
	assert_int_equal(st.watch_restarts, 2);
	assert_int_equal(st.backoffs, 0);
	/* A broken stream (undecodable, bad encoding) is an error: backoff, then relist. */
	t += 5 * S;
	assert_int_equal(inf_reflector_watch_done(r, t, -EIO, true), 0);
	assert_true(inf_reflector_next_wakeup(r) >= t + 800000);
	assert_int_equal(step(r, inf_reflector_next_wakeup(r)).op, INF_REFL_LIST);
	assert_int_equal(page(r, t + 2 * S, "12", NULL), INF_LIST_DONE);
	expect_watch(r, t + 2 * S, "12");
	inf_reflector_get_stats(r, &st);
	assert_int_equal(st.watch_events, 4);
	assert_int_equal(st.backoffs, 1);
	/* Not a WATCH in flight any more after done: events are rejected. */
	assert_int_equal(inf_reflector_watch_done(r, t, 0, true), 0);
	assert_int_equal(inf_reflector_watch_event(r, t, KUBE_WATCH_ADDED, "13", false, 0),
	                 -EINVAL);
	inf_reflector_free(r);
}

/* A watch closed within 1 s with no event is an error: backoff, then relist (no limit). */
static void test_very_short_watch(void **state)
{
	(void)state;
	struct inf_reflector *r = mk(false, NULL);
	struct inf_refl_request q;

	step(r, 0);
	assert_int_equal(page(r, 0, "5", ""), INF_LIST_DONE);
	expect_watch(r, 0, "5");
	assert_int_equal(inf_reflector_watch_done(r, S / 2, 0, true), 0);
	assert_int_equal(inf_reflector_next_wakeup(r), S / 2 + 800000);
	no_step(r, S / 2 + 799999);
	q = step(r, S / 2 + 800000);
	assert_int_equal(q.op, INF_REFL_LIST);
	assert_string_equal(q.rv, "5");
	assert_int_equal(q.limit, 0); /* served by the watch cache, unpaginated */
	assert_true(q.replace_begin);
	inf_reflector_free(r);
}

/* 410: relist at the last version; if that is gone too, at "" (paginated), at once. */
static void test_expired_relist_sequence(void **state)
{
	(void)state;
	struct inf_reflector *r = mk(false, NULL);
	struct inf_refl_request q;
	struct inf_reflector_stats st;
	uint64_t t;

	step(r, 0);
	assert_int_equal(page(r, 0, "100", NULL), INF_LIST_DONE);
	expect_watch(r, 0, "100");
	assert_int_equal(inf_reflector_watch_event(r, 5 * S, KUBE_WATCH_MODIFIED, "120", false, 0),
	                 INF_EV_APPLY);
	assert_int_equal(
	        inf_reflector_watch_event(r, 6 * S, KUBE_WATCH_ERROR, NULL, false, -EKEYEXPIRED),
	        INF_EV_STOP);
	/* The driver cancels; the done report is ignored. */
	assert_int_equal(inf_reflector_watch_done(r, 6 * S, -ECANCELED, true), 0);
	t = inf_reflector_next_wakeup(r);
	assert_int_equal(t, 6 * S + 800000);
	q = step(r, t);
	assert_int_equal(q.op, INF_REFL_LIST);
	assert_string_equal(q.rv, "120");
	assert_int_equal(q.limit, 0);
	assert_int_equal(list_err(r, t, -EKEYEXPIRED), INF_LIST_FAILED);
	q = step(r, t); /* no backoff in between */
	assert_int_equal(q.op, INF_REFL_LIST);
	assert_string_equal(q.rv, "");
	assert_int_equal(q.limit, 500);
	assert_true(q.replace_begin);
	assert_int_equal(page(r, t, "300", ""), INF_LIST_DONE);
	expect_watch(r, t, "300");
	inf_reflector_get_stats(r, &st);
	assert_int_equal(st.expired, 2);
	assert_int_equal(st.relists, 2);
	/* "too large resource version" (504) is handled like 410 on a list. */
	assert_int_equal(inf_reflector_watch_event(r, t + 9 * S, KUBE_WATCH_ERROR, NULL, false,
	                                           -EKEYEXPIRED),
	                 INF_EV_STOP);
	q = step(r, inf_reflector_next_wakeup(r));
	assert_string_equal(q.rv, "300");
	struct inf_list_result tl = {.err = -ETIMEDOUT, .rv_too_large = true};
	assert_int_equal(inf_reflector_list_result(r, t + 20 * S, &tl), INF_LIST_FAILED);
	q = step(r, t + 20 * S);
	assert_string_equal(q.rv, "");
	inf_reflector_free(r);
}

/* A watch that cannot start with 429 or connection refused: backoff, same version. Other start
 * failures: backoff and relist. */
static void test_watch_start_failures(void **state)
{
	(void)state;
	struct inf_reflector *r = mk(false, NULL);
	struct inf_refl_request q;
	uint64_t t;

	step(r, 0);
	assert_int_equal(page(r, 0, "7", NULL), INF_LIST_DONE);
	expect_watch(r, 0, "7");
	assert_int_equal(inf_reflector_watch_done(r, 0, -EAGAIN, false), 0);
	t = inf_reflector_next_wakeup(r);
	assert_int_equal(t, 800000);
	expect_watch(r, t, "7");
	assert_int_equal(inf_reflector_watch_done(r, t, -ECONNREFUSED, false), 0);
	assert_int_equal(inf_reflector_next_wakeup(r), t + 1600000);
	t += 1600000;
	expect_watch(r, t, "7");
	/* 429 as an ERROR event on a running stream: same rule. */
	assert_int_equal(inf_reflector_watch_event(r, t, KUBE_WATCH_ERROR, NULL, false, -EAGAIN),
	                 INF_EV_STOP);
	assert_int_equal(inf_reflector_next_wakeup(r), t + 3200000);
	t += 3200000;
	expect_watch(r, t, "7");
	assert_int_equal(inf_reflector_watch_done(r, t, -EREMOTEIO, false), 0);
	t = inf_reflector_next_wakeup(r);
	q = step(r, t);
	assert_int_equal(q.op, INF_REFL_LIST);
	assert_string_equal(q.rv, "7");
	/* A failing list backs off and retries as a list. */
	assert_int_equal(list_err(r, t, -EHOSTDOWN), INF_LIST_FAILED);
	assert_true(inf_reflector_next_wakeup(r) > t);
	q = step(r, inf_reflector_next_wakeup(r));
	assert_int_equal(q.op, INF_REFL_LIST);
	inf_reflector_free(r);
}

/* 800 ms doubling, cap 30 s, jitter 1.0, reset after 2 min without a backoff. */
static void test_backoff_schedule(void **state)
{
	(void)state;
	struct inf_reflector *r = mk(false, NULL);
	static const uint64_t want[] = {800000,   1600000,  3200000,  6400000,
	                                12800000, 25600000, 30000000, 30000000};
	uint64_t t = 0;

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		step(r, t);
		assert_int_equal(list_err(r, t, -ECONNREFUSED), INF_LIST_FAILED);
		assert_int_equal(inf_reflector_next_wakeup(r) - t, want[i]);
		t = inf_reflector_next_wakeup(r);
	}
	/* Jitter: d + rand*d. */
	g_rand = 0.5;
	step(r, t);
	assert_int_equal(list_err(r, t, -ECONNREFUSED), INF_LIST_FAILED);
	assert_int_equal(inf_reflector_next_wakeup(r) - t, 45000000);
	t = inf_reflector_next_wakeup(r);
	/* Quiet for 2 min: back to 800 ms. */
	g_rand = 0.0;
	step(r, t);
	assert_int_equal(page(r, t, "9", NULL), INF_LIST_DONE);
	expect_watch(r, t, "9");
	t += 130 * S;
	assert_int_equal(inf_reflector_watch_done(r, t, -EAGAIN, false), 0);
	assert_int_equal(inf_reflector_next_wakeup(r) - t, 800000);
	inf_reflector_free(r);
}

/* The continue token expired mid-list: one full list at "" with no limit, as a new replace. */
static void test_continue_expired(void **state)
{
	(void)state;
	struct inf_reflector *r = mk(false, NULL);
	struct inf_refl_request q;

	step(r, 0);
	assert_int_equal(page(r, 0, "50", "c1"), INF_LIST_MORE);
	step(r, 0);
	assert_int_equal(list_err(r, 1, -EKEYEXPIRED), INF_LIST_FAILED);
	q = step(r, 1);
	assert_int_equal(q.op, INF_REFL_LIST);
	assert_string_equal(q.rv, "");
	assert_null(q.cont);
	assert_int_equal(q.limit, 0);
	assert_true(q.replace_begin);
	assert_int_equal(page(r, 2, "77", NULL), INF_LIST_DONE);
	expect_watch(r, 2, "77");
	inf_reflector_free(r);
}

/* WatchList: initial events collected, committed at the initial-events-end bookmark, and the
 * same stream goes on. */
static void test_watch_list(void **state)
{
	(void)state;
	struct inf_reflector *r = mk(true, NULL);
	struct inf_refl_request q;
	struct inf_reflector_stats st;

	q = step(r, 0);
	assert_int_equal(q.op, INF_REFL_WATCH);
	assert_true(q.send_initial_events);
	assert_string_equal(q.rv_match, "NotOlderThan");
	assert_string_equal(q.rv, "");
	assert_true(q.allow_bookmarks);
	assert_true(q.replace_begin);
	assert_int_equal(inf_reflector_watch_event(r, 1, KUBE_WATCH_ADDED, "40", false, 0),
	                 INF_EV_COLLECT);
	assert_int_equal(inf_reflector_watch_event(r, 1, KUBE_WATCH_ADDED, "20", false, 0),
	                 INF_EV_COLLECT);
	assert_string_equal(inf_reflector_last_rv(r), ""); /* no order among initial events */
	assert_false(inf_reflector_synced(r));
	assert_int_equal(inf_reflector_watch_event(r, 1, KUBE_WATCH_BOOKMARK, "30", false, 0),
	                 INF_EV_BOOKMARK);
	assert_int_equal(inf_reflector_watch_event(r, 2, KUBE_WATCH_BOOKMARK, "45", true, 0),
	                 INF_EV_REPLACED);
	assert_true(inf_reflector_synced(r));
	assert_string_equal(inf_reflector_last_rv(r), "45");
	assert_int_equal(inf_reflector_watch_event(r, 3, KUBE_WATCH_MODIFIED, "46", false, 0),
	                 INF_EV_APPLY);
	assert_int_equal(inf_reflector_watch_done(r, 400 * S, 0, true), 0);
	expect_watch(r, 400 * S, "46"); /* a plain watch from then on */
	inf_reflector_get_stats(r, &st);
	assert_int_equal(st.lists, 0);
	assert_int_equal(st.watch_list_fallbacks, 0);
	/* The next ListAndWatch (after a 410) uses WatchList again, from the last version. */
	assert_int_equal(
	        inf_reflector_watch_event(r, 401 * S, KUBE_WATCH_ERROR, NULL, false, -EREMOTEIO),
	        INF_EV_STOP);
	q = step(r, inf_reflector_next_wakeup(r));
	assert_true(q.send_initial_events);
	assert_string_equal(q.rv, "46");
	inf_reflector_free(r);
}

/* WatchList before its bookmark: 429/refused back off and retry WatchList, 410 retries at ""
 * at once, a stream closed early is re-opened, a 400/422 (server without the feature) falls
 * back to LIST for good, any other failure falls back to LIST this time. */
static void test_watch_list_fallback(void **state)
{
	(void)state;
	struct inf_reflector *r = mk(true, NULL);
	struct inf_refl_request q;
	struct inf_reflector_stats st;

	step(r, 0);
	assert_int_equal(inf_reflector_watch_event(r, 1, KUBE_WATCH_ADDED, "3", false, 0),
	                 INF_EV_COLLECT);
	/* Transport reset after the 200 (probable EOF): WatchList again, at once. */
	assert_int_equal(inf_reflector_watch_done(r, 2 * S, -ECONNRESET, true), 0);
	q = step(r, 2 * S);
	assert_true(q.send_initial_events);
	assert_true(q.replace_begin);
	/* 429 at start: backoff, WatchList again. */
	assert_int_equal(inf_reflector_watch_done(r, 2 * S, -EAGAIN, false), 0);
	assert_int_equal(inf_reflector_next_wakeup(r), 2 * S + 800000);
	q = step(r, 2 * S + 800000);
	assert_true(q.send_initial_events);
	/* 410 as an ERROR event: at once, at "". */
	assert_int_equal(
	        inf_reflector_watch_event(r, 3 * S, KUBE_WATCH_ERROR, NULL, false, -EKEYEXPIRED),
	        INF_EV_STOP);
	q = step(r, 3 * S);
	assert_true(q.send_initial_events);
	assert_string_equal(q.rv, "");
	/* A broken stream after the 200 (e.g. the gzip failure in docs/informerd.md): LIST. */
	assert_int_equal(inf_reflector_watch_done(r, 3 * S, -EIO, true), 0);
	q = step(r, 3 * S);
	assert_int_equal(q.op, INF_REFL_LIST);
	assert_int_equal(page(r, 3 * S, "9", NULL), INF_LIST_DONE);
	expect_watch(r, 3 * S, "9");
	assert_int_equal(inf_reflector_watch_done(r, 3 * S, -EREMOTEIO, false), 0);
	q = step(r, inf_reflector_next_wakeup(r));
	assert_true(q.send_initial_events);
	assert_int_equal(
	        inf_reflector_watch_event(r, 3 * S, KUBE_WATCH_ERROR, NULL, false, -EKEYEXPIRED),
	        INF_EV_STOP);
	q = step(r, 3 * S);
	assert_string_equal(q.rv, "");
	/* A transport failure before any answer: LIST now (at "": the 410 above made the version
	 * unavailable), WatchList kept for later. */
	assert_int_equal(inf_reflector_watch_done(r, 3 * S, -EIO, false), 0);
	q = step(r, 3 * S);
	assert_int_equal(q.op, INF_REFL_LIST);
	assert_string_equal(q.rv, "");
	assert_true(q.replace_begin);
	assert_true(inf_reflector_watch_list_enabled(r));
	assert_int_equal(page(r, 3 * S, "10", NULL), INF_LIST_DONE);
	expect_watch(r, 3 * S, "10");
	assert_int_equal(inf_reflector_watch_done(r, 4 * S, -EREMOTEIO, false), 0);
	q = step(r, inf_reflector_next_wakeup(r));
	assert_true(q.send_initial_events);
	assert_string_equal(q.rv, "10");
	/* Refused by the server: LIST, and never WatchList again. */
	assert_int_equal(inf_reflector_watch_done(r, 6 * S, -EINVAL, false), 0);
	assert_false(inf_reflector_watch_list_enabled(r));
	q = step(r, 6 * S);
	assert_int_equal(q.op, INF_REFL_LIST);
	assert_string_equal(q.rv, "10");
	inf_reflector_get_stats(r, &st);
	assert_int_equal(st.watch_list_fallbacks, 3);
	inf_reflector_free(r);
}

/* Warm start: WATCH from the arena's version first; no LIST unless that watch gets 410. */
static void test_warm_start(void **state)
{
	(void)state;
	struct inf_reflector *r = mk(true, "4242");
	struct inf_refl_request q;
	struct inf_reflector_stats st;

	assert_true(inf_reflector_synced(r));
	expect_watch(r, 0, "4242");
	assert_int_equal(inf_reflector_watch_event(r, 1, KUBE_WATCH_ADDED, "4243", false, 0),
	                 INF_EV_APPLY);
	assert_int_equal(inf_reflector_watch_done(r, 500 * S, 0, true), 0);
	expect_watch(r, 500 * S, "4243");
	inf_reflector_get_stats(r, &st);
	assert_int_equal(st.lists, 0);
	assert_int_equal(st.relists, 0);
	/* 410 at the watch's start: a relist at the last version. */
	assert_int_equal(inf_reflector_watch_done(r, 501 * S, -EKEYEXPIRED, false), 0);
	q = step(r, inf_reflector_next_wakeup(r));
	assert_int_equal(q.op, INF_REFL_LIST);
	assert_string_equal(q.rv, "4243");
	assert_int_equal(q.limit, 0);
	inf_reflector_get_stats(r, &st);
	assert_int_equal(st.relists, 1);
	inf_reflector_free(r);
}

static void test_bad_input(void **state)
{
	(void)state;
	struct inf_reflector *r = NULL;
	struct inf_reflector_config c = {.page_size = -1};
	char big[INF_RV_MAX + 1];

	assert_int_equal(inf_reflector_new(&c, &r), -EINVAL);
	memset(big, '1', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	c.page_size = 0;
	c.warm_rv = big;
	assert_int_equal(inf_reflector_new(&c, &r), -EINVAL);
	r = mk(false, NULL);
	assert_int_equal(list_err(r, 0, -EIO), -EINVAL); /* nothing in flight */
	assert_int_equal(inf_reflector_watch_event(r, 0, KUBE_WATCH_ADDED, "1", false, 0), -EINVAL);
	step(r, 0);
	/* A last page without a version cannot be committed. */
	assert_int_equal(page(r, 0, "", NULL), INF_LIST_FAILED);
	inf_reflector_free(r);
}

/* The acquisition barrier: a warm reflector resuming an old watch is made to relist at least as
 * new as the Lease's version, and only that replace counts for the epoch. */
static void test_barrier_relists_at_lease_rv(void **state)
{
	(void)state;
	struct inf_reflector *r = mk(false, "40"); /* warm: a persisted arena at "40" */
	struct inf_refl_request q;

	assert_true(inf_reflector_synced(r));
	assert_int_equal(inf_reflector_barrier_epoch(r), 0);
	expect_watch(r, 0, "40"); /* the old watch, in flight */
	/* the manager won its Lease at RV 100: the watch is abandoned (the driver cancels it) */
	assert_int_equal(inf_reflector_barrier(r, 10, 7, "100"), 1);
	assert_int_equal(inf_reflector_barrier(r, 10, 7, "100"), 0); /* asked already */
	q = step(r, 10);
	assert_int_equal(q.op, INF_REFL_LIST);
	assert_string_equal(q.rv, "100");
	assert_non_null(q.rv_match);
	assert_string_equal(q.rv_match, "NotOlderThan");
	assert_int_equal(q.limit, 0);
	assert_true(q.replace_begin);
	/* the abandoned watch's end never reaches the reflector; a late report is ignored */
	assert_int_equal(inf_reflector_watch_done(r, 11, 0, true), 0);
	assert_int_equal(inf_reflector_barrier_epoch(r), 0); /* not before the commit */
	assert_int_equal(page(r, 20, "105", NULL), INF_LIST_DONE);
	assert_int_equal(inf_reflector_barrier_epoch(r), 7);
	expect_watch(r, 20, "105");
	/* Negative control: a later ordinary relist (410) is no barrier for a new epoch. */
	assert_int_equal(
	        inf_reflector_watch_event(r, 30, KUBE_WATCH_ERROR, NULL, false, -EKEYEXPIRED),
	        INF_EV_STOP);
	q = step(r, 30 + 2 * S);
	assert_string_equal(q.rv, "105");
	assert_null(q.rv_match);
	assert_int_equal(page(r, 40 + 2 * S, "110", NULL), INF_LIST_DONE);
	assert_int_equal(inf_reflector_barrier_epoch(r), 7);
	inf_reflector_free(r);
}

/* The watch cache has not seen R ("too large resource version"): a consistent LIST, which still
 * satisfies the barrier; no R at all is a consistent LIST too; a continue page keeps the epoch. */
static void test_barrier_fallbacks(void **state)
{
	(void)state;
	struct inf_reflector *r = mk(false, NULL);
	struct inf_list_result big = {.err = -EKEYEXPIRED, .rv_too_large = true};
	struct inf_refl_request q;

	step(r, 0);
	assert_int_equal(page(r, 0, "5", NULL), INF_LIST_DONE);
	/* idle (between calls, e.g. in a backoff): nothing to cancel, the relist starts now */
	assert_int_equal(inf_reflector_barrier(r, 1, 3, "50"), 0);
	q = step(r, 1);
	assert_string_equal(q.rv, "50");
	assert_int_equal(inf_reflector_list_result(r, 2, &big), INF_LIST_FAILED);
	assert_int_equal(inf_reflector_barrier_epoch(r), 0);
	q = step(r, 2);
	assert_int_equal(q.op, INF_REFL_LIST);
	assert_string_equal(q.rv, ""); /* consistent read */
	assert_null(q.rv_match);
	assert_int_equal(q.limit, 500);
	assert_int_equal(page(r, 3, "60", "c1"), INF_LIST_MORE);
	q = step(r, 3);
	assert_string_equal(q.cont, "c1");
	assert_int_equal(page(r, 4, "60", NULL), INF_LIST_DONE);
	assert_int_equal(inf_reflector_barrier_epoch(r), 3);
	expect_watch(r, 4, "60");
	/* the watch fails over and over (an apiserver down): the backoff grows */
	for (int i = 0; i < 4; i++) {
		assert_int_equal(inf_reflector_watch_done(r, 4, -EPROTO, false), 0);
		step(r, inf_reflector_next_wakeup(r)); /* LIST */
		assert_int_equal(list_err(r, 4, -ECONNREFUSED), INF_LIST_FAILED);
		step(r, inf_reflector_next_wakeup(r)); /* LIST again */
		assert_int_equal(page(r, 4, "60", NULL), INF_LIST_DONE);
		expect_watch(r, 4, "60");
	}
	/* a new epoch without a Lease version: a consistent LIST */
	assert_int_equal(inf_reflector_barrier(r, 5, 4, ""), 1);
	q = step(r, 5);
	assert_string_equal(q.rv, "");
	assert_null(q.rv_match);
	/* a failed barrier list leaves the epoch unmet; the retry still asks a fresh version,
	 * after the initial backoff (0.8 s, jitter 0 here) even though earlier failures had grown
	 * it: the barrier starts a fresh backoff */
	assert_int_equal(list_err(r, 6, -ECONNREFUSED), INF_LIST_FAILED);
	assert_int_equal(inf_reflector_barrier_epoch(r), 3);
	assert_int_equal(inf_reflector_next_wakeup(r), 6 + 800000);
	q = step(r, 6 + 2 * S);
	assert_string_equal(q.rv, "");
	assert_int_equal(page(r, 7 + 2 * S, "70", NULL), INF_LIST_DONE);
	assert_int_equal(inf_reflector_barrier_epoch(r), 4);
	assert_int_equal(inf_reflector_barrier(r, 8, 0, "1"), -EINVAL);
	inf_reflector_free(r);
	/* informerd restarted within the term over an arena relisted for it: the watch resumes */
	r = mk(false, "80");
	assert_int_equal(inf_reflector_barrier_done(r, 4), 0);
	assert_int_equal(inf_reflector_barrier_epoch(r), 4);
	expect_watch(r, 0, "80");
	assert_int_equal(inf_reflector_barrier(r, 1, 4, "70"), 0); /* that epoch: nothing to do */
	assert_int_equal(inf_reflector_barrier_done(r, 0), -EINVAL);
	inf_reflector_free(r);
}

/* WatchList: the barrier replace is a WatchList at R (NotOlderThan), counted at its bookmark. */
static void test_barrier_watch_list(void **state)
{
	(void)state;
	struct inf_reflector *r = mk(true, "40");
	struct inf_refl_request q;

	expect_watch(r, 0, "40");
	assert_int_equal(inf_reflector_barrier(r, 1, 9, "200"), 1);
	q = step(r, 1);
	assert_int_equal(q.op, INF_REFL_WATCH);
	assert_true(q.send_initial_events);
	assert_string_equal(q.rv, "200");
	assert_string_equal(q.rv_match, "NotOlderThan");
	assert_true(q.replace_begin);
	assert_int_equal(inf_reflector_watch_event(r, 2, KUBE_WATCH_ADDED, "150", false, 0),
	                 INF_EV_COLLECT);
	assert_int_equal(inf_reflector_barrier_epoch(r), 0);
	assert_int_equal(inf_reflector_watch_event(r, 3, KUBE_WATCH_BOOKMARK, "210", true, 0),
	                 INF_EV_REPLACED);
	assert_int_equal(inf_reflector_barrier_epoch(r), 9);
	inf_reflector_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_cold_paginated_list_then_watch),
	        cmocka_unit_test(test_watch_events_and_normal_end),
	        cmocka_unit_test(test_very_short_watch),
	        cmocka_unit_test(test_expired_relist_sequence),
	        cmocka_unit_test(test_watch_start_failures),
	        cmocka_unit_test(test_backoff_schedule),
	        cmocka_unit_test(test_continue_expired),
	        cmocka_unit_test(test_watch_list),
	        cmocka_unit_test(test_watch_list_fallback),
	        cmocka_unit_test(test_warm_start),
	        cmocka_unit_test(test_bad_input),
	        cmocka_unit_test(test_barrier_relists_at_lease_rv),
	        cmocka_unit_test(test_barrier_fallbacks),
	        cmocka_unit_test(test_barrier_watch_list),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
