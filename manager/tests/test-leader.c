/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of the Lease elector against a simulated Lease store with resourceVersion semantics
 * and a simulated clock. The property test runs several electors with random request latency,
 * failures and crashes and checks that two of them never lead at the same instant.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/leader.h"

#define SEC 1000000ull

/* ---- simulated Lease store ---------------------------------------------------------------- */
struct store {
	bool exists;
	struct mgr_le_record rec;
	uint64_t rv;
	bool down; /* every request fails with -EIO */
};

/* One elector plus what its driver remembers (the resourceVersion last read or written). */
struct cand {
	struct mgr_le *le;
	uint64_t rv;
	bool have_req;
	struct mgr_le_request req;
	uint64_t due; /* when the request's answer arrives */
	bool crashed;
};

static kube_time_t wall(uint64_t mono)
{
	return (kube_time_t)(1700000000ull * 1000000000ull + mono * 1000ull);
}

/* Applies req to the store at its arrival; the answer is delivered later. */
static void apply(struct store *s, struct cand *c, struct mgr_le_result *res)
{
	memset(res, 0, sizeof(*res));
	res->op = c->req.op;
	if (s->down) {
		res->err = -EIO;
		return;
	}
	switch (c->req.op) {
	case MGR_LE_OP_GET:
		if (!s->exists) {
			res->err = -ENOENT;
			return;
		}
		res->record = s->rec;
		c->rv = s->rv;
		return;
	case MGR_LE_OP_CREATE:
		if (s->exists) {
			res->err = -EEXIST;
			return;
		}
		s->exists = true;
		s->rec = c->req.record;
		s->rv++;
		c->rv = s->rv;
		res->record = s->rec;
		return;
	case MGR_LE_OP_UPDATE:
		if (!s->exists) {
			res->err = -ENOENT;
			return;
		}
		if (c->rv != s->rv) {
			res->err = -ESTALE;
			return;
		}
		s->rec = c->req.record;
		s->rv++;
		c->rv = s->rv;
		res->record = s->rec;
		return;
	default:
		fail();
	}
}

static struct mgr_le_config cfg(const char *id)
{
	struct mgr_le_config c = {
	        .identity = id,
	        .lease_duration_us = 15 * SEC,
	        .renew_deadline_us = 10 * SEC,
	        .retry_period_us = 2 * SEC,
	};
	return c;
}

/* Steps c synchronously (zero latency) until it has nothing more to send. */
static void step_sync(struct store *s, struct cand *c, uint64_t now,
                      const struct mgr_le_result *res)
{
	struct mgr_le_request req;
	struct mgr_le_result r;
	int n = mgr_le_step(c->le, now, wall(now), res, &req);

	assert_true(n >= 0);
	while (n == 1) {
		c->req = req;
		apply(s, c, &r);
		n = mgr_le_step(c->le, now, wall(now), &r, &req);
		assert_true(n >= 0);
	}
}

static void run_until(struct store *s, struct cand *cs, int n, uint64_t *now, uint64_t end)
{
	while (*now < end) {
		for (int i = 0; i < n; i++) {
			if (cs[i].crashed)
				continue;
			if (mgr_le_next_wakeup(cs[i].le) <= *now)
				step_sync(s, &cs[i], *now, NULL);
		}
		*now += 100000; /* 100 ms */
	}
}

static void test_validate(void **state)
{
	(void)state;
	char err[128];
	struct mgr_le_config c = cfg("a");

	assert_int_equal(mgr_le_config_validate(&c, err, sizeof(err)), 0);
	c.renew_deadline_us = 15 * SEC;
	assert_int_equal(mgr_le_config_validate(&c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "lease-duration"));
	c = cfg("a");
	c.renew_deadline_us = 2 * SEC + 400000; /* == 1.2 x retry */
	assert_int_equal(mgr_le_config_validate(&c, err, sizeof(err)), -EINVAL);
	c = cfg("");
	assert_int_equal(mgr_le_config_validate(&c, err, sizeof(err)), -EINVAL);
	c = cfg("a");
	c.retry_period_us = 0;
	assert_int_equal(mgr_le_config_validate(&c, err, sizeof(err)), -EINVAL);
	struct mgr_le *le = NULL;
	assert_int_equal(mgr_le_new(&c, &le), -EINVAL);
	assert_null(le);
}

static void test_create_and_renew(void **state)
{
	(void)state;
	struct store s = {0};
	struct mgr_le_config c = cfg("host_a");
	struct cand a = {0};
	uint64_t now = 1 * SEC;

	assert_int_equal(mgr_le_new(&c, &a.le), 0);
	assert_false(mgr_le_is_leader(a.le, now));
	step_sync(&s, &a, now, NULL);
	assert_true(mgr_le_is_leader(a.le, now));
	assert_true(s.exists);
	assert_string_equal(s.rec.holder, "host_a");
	assert_int_equal(s.rec.lease_duration_s, 15);
	assert_int_equal(s.rec.transitions, 0);
	kube_time_t acquired = s.rec.acquire_time;
	assert_int_equal(acquired, wall(now));

	/* Renewals every retry period keep acquireTime and transitions. */
	uint64_t rv0 = s.rv;
	run_until(&s, &a, 1, &now, 21 * SEC);
	assert_true(mgr_le_is_leader(a.le, now));
	assert_int_equal(s.rec.acquire_time, acquired);
	assert_int_equal(s.rec.transitions, 0);
	assert_true(s.rv - rv0 >= 9 && s.rv - rv0 <= 11); /* ~ one write per 2 s */
	assert_true(s.rec.renew_time > acquired);
	struct mgr_le_stats st;
	mgr_le_get_stats(a.le, &st);
	assert_int_equal(st.acquisitions, 1);
	assert_int_equal(st.losses, 0);
	mgr_le_free(a.le);
}

static void test_takeover_after_lease_duration(void **state)
{
	(void)state;
	struct store s = {0};
	struct mgr_le_config ca = cfg("host_a"), cb = cfg("host_b");
	struct cand cs[2] = {0};
	uint64_t now = 0;

	assert_int_equal(mgr_le_new(&ca, &cs[0].le), 0);
	assert_int_equal(mgr_le_new(&cb, &cs[1].le), 0);
	run_until(&s, cs, 2, &now, 30 * SEC);
	assert_true(mgr_le_is_leader(cs[0].le, now));
	assert_false(mgr_le_is_leader(cs[1].le, now));
	assert_string_equal(mgr_le_observed_holder(cs[1].le), "host_a");

	/* a dies (kill -9: no release). b must wait leaseDuration after it last saw a change. */
	cs[0].crashed = true;
	uint64_t crash = now;
	kube_time_t last_renew = s.rec.renew_time;
	while (!mgr_le_is_leader(cs[1].le, now)) {
		run_until(&s, cs, 2, &now, now + 100000);
		assert_true(now < crash + 30 * SEC);
	}
	/* b last observed a's record no earlier than a's last renewal. */
	assert_true(wall(now) >= last_renew + 15 * (kube_time_t)1000000000);
	assert_true(now <= crash + 15 * SEC + 4400000 + 200000);
	assert_string_equal(s.rec.holder, "host_b");
	assert_int_equal(s.rec.transitions, 1);
	/* acquireTime is the takeover step's time (run_until advanced the clock one tick since). */
	assert_int_equal(s.rec.acquire_time, wall(now - 100000));
	mgr_le_free(cs[0].le);
	mgr_le_free(cs[1].le);
}

/* attempt_at_expiry: the candidate takes a dead holder's Lease within one tick of the instant
 * it expires by local observation (its last observed change + leaseDuration), not up to 2.2
 * retry periods after it; and never before it (the same rule as without the option). */
static void test_attempt_at_expiry(void **state)
{
	(void)state;
	for (int at_expiry = 0; at_expiry <= 1; at_expiry++) {
		struct store s = {.exists = true, .rv = 3};
		struct mgr_le_config cb = cfg("host_b");
		struct cand c = {0};
		uint64_t now = 21 * SEC;

		snprintf(s.rec.holder, sizeof(s.rec.holder), "host_a");
		s.rec.lease_duration_s = 15;
		s.rec.renew_time = wall(20 * SEC);
		s.rec.acquire_time = wall(0);
		cb.attempt_at_expiry = at_expiry;
		assert_int_equal(mgr_le_new(&cb, &c.le), 0);
		/* a's last renewal, seen by this process at 20 s; a is dead since: expiry 35 s */
		assert_true(mgr_le_prime(c.le, &s.rec, 20 * SEC));
		while (!mgr_le_is_leader(c.le, now)) {
			if (mgr_le_next_wakeup(c.le) <= now)
				step_sync(&s, &c, now, NULL);
			if (mgr_le_is_leader(c.le, now))
				break;
			now += 10000; /* 10 ms */
			assert_true(now < 60 * SEC);
		}
		print_message("attempt_at_expiry=%d: taken at %.2fs (local expiry 35 s)\n",
		              at_expiry, (double)now / 1e6);
		assert_true(now >= 35 * SEC); /* never before the local expiry */
		if (at_expiry)
			assert_true(now <= 35 * SEC + 10000);
		assert_string_equal(s.rec.holder, "host_b");
		mgr_le_free(c.le);
	}
}

/* mgr_le_prime: a new elector seeded with a record another reader saw change long ago takes the
 * Lease at its first attempt once that record is past its duration; the same record seen only
 * now (no prime) makes it wait the whole duration; a primed record the Lease no longer has
 * counts from the elector's own observation; an elector that observed already is not primed. */
static void test_prime(void **state)
{
	(void)state;
	struct store s = {.exists = true, .rv = 7};
	struct mgr_le_config cb = cfg("host_b");
	struct cand c = {0};
	uint64_t now = 40 * SEC;

	snprintf(s.rec.holder, sizeof(s.rec.holder), "host_a");
	s.rec.lease_duration_s = 15;
	s.rec.renew_time = wall(20 * SEC);
	s.rec.acquire_time = wall(0);

	/* seen unchanged since 20 s: expired at 35 s, taken at once at 40 s */
	assert_int_equal(mgr_le_new(&cb, &c.le), 0);
	assert_true(mgr_le_prime(c.le, &s.rec, 20 * SEC));
	step_sync(&s, &c, now, NULL);
	assert_true(mgr_le_is_leader(c.le, now));
	assert_string_equal(s.rec.holder, "host_b");
	assert_false(mgr_le_prime(c.le, &s.rec, 0)); /* it has its own observation now */
	mgr_le_free(c.le);

	/* unprimed: the same stale record is valid for 15 s from the first GET */
	snprintf(s.rec.holder, sizeof(s.rec.holder), "host_a");
	assert_int_equal(mgr_le_new(&cb, &c.le), 0);
	step_sync(&s, &c, now, NULL);
	assert_false(mgr_le_is_leader(c.le, now));
	mgr_le_free(c.le);

	/* primed with an older record than the Lease now has: the change counts from now */
	struct mgr_le_record old = s.rec;
	old.renew_time = wall(10 * SEC);
	assert_int_equal(mgr_le_new(&cb, &c.le), 0);
	assert_true(mgr_le_prime(c.le, &old, 10 * SEC));
	step_sync(&s, &c, now, NULL);
	assert_false(mgr_le_is_leader(c.le, now));
	mgr_le_free(c.le);
}

static void test_fencing_when_apiserver_down(void **state)
{
	(void)state;
	struct store s = {0};
	struct mgr_le_config c = cfg("host_a");
	struct cand a = {0};
	uint64_t now = 0;

	assert_int_equal(mgr_le_new(&c, &a.le), 0);
	run_until(&s, &a, 1, &now, 5 * SEC);
	assert_true(mgr_le_is_leader(a.le, now));
	s.down = true;
	uint64_t fence = mgr_le_fence_deadline(a.le);
	assert_true(fence <= now + 10 * SEC);
	/* Leadership ends exactly at the fence even with no step in between. */
	assert_true(mgr_le_is_leader(a.le, fence - 1));
	assert_false(mgr_le_is_leader(a.le, fence));
	/* The wakeup asked for includes the fence. */
	assert_true(mgr_le_next_wakeup(a.le) <= fence);
	run_until(&s, &a, 1, &now, fence + SEC);
	assert_false(mgr_le_is_leader(a.le, now));
	struct mgr_le_stats st;
	mgr_le_get_stats(a.le, &st);
	assert_int_equal(st.losses, 1);
	assert_true(st.failures >= 4);
	/* The server comes back: a reacquires its own lease (it is still the holder). */
	s.down = false;
	run_until(&s, &a, 1, &now, now + 10 * SEC);
	assert_true(mgr_le_is_leader(a.le, now));
	assert_int_equal(s.rec.transitions, 0);
	mgr_le_free(a.le);
}

static void test_release_then_immediate_takeover(void **state)
{
	(void)state;
	struct store s = {0};
	struct mgr_le_config ca = cfg("host_a"), cb = cfg("host_b");
	struct cand cs[2] = {0};
	uint64_t now = 0;

	assert_int_equal(mgr_le_new(&ca, &cs[0].le), 0);
	assert_int_equal(mgr_le_new(&cb, &cs[1].le), 0);
	run_until(&s, cs, 2, &now, 10 * SEC);
	assert_true(mgr_le_is_leader(cs[0].le, now));
	int32_t transitions = s.rec.transitions;

	mgr_le_begin_release(cs[0].le);
	assert_false(mgr_le_is_leader(cs[0].le, now));
	step_sync(&s, &cs[0], now, NULL);
	assert_true(mgr_le_released(cs[0].le));
	assert_string_equal(s.rec.holder, "");
	assert_int_equal(s.rec.lease_duration_s, 1);
	assert_int_equal(s.rec.transitions, transitions);
	assert_int_equal(s.rec.acquire_time, wall(now));
	assert_int_equal(s.rec.renew_time, wall(now));

	/* b takes an empty holder at its next attempt, without waiting a lease duration. */
	cs[0].crashed = true;
	uint64_t released = now;
	while (!mgr_le_is_leader(cs[1].le, now))
		run_until(&s, cs, 2, &now, now + 100000);
	assert_true(now - released <= 4400000 + 200000);
	assert_int_equal(s.rec.transitions, transitions + 1);
	mgr_le_free(cs[0].le);
	mgr_le_free(cs[1].le);
}

static void test_release_when_not_holder(void **state)
{
	(void)state;
	struct store s = {.exists = true, .rv = 7};
	struct mgr_le_config c = cfg("host_a");
	struct cand a = {0};

	snprintf(s.rec.holder, sizeof(s.rec.holder), "other");
	s.rec.lease_duration_s = 15;
	assert_int_equal(mgr_le_new(&c, &a.le), 0);
	mgr_le_begin_release(a.le);
	step_sync(&s, &a, SEC, NULL);
	assert_true(mgr_le_released(a.le));
	assert_string_equal(s.rec.holder, "other");
	assert_int_equal(s.rv, 7);
	mgr_le_free(a.le);
}

static void test_fast_path_conflict_falls_back_to_get(void **state)
{
	(void)state;
	struct store s = {0};
	struct mgr_le_config c = cfg("host_a");
	struct cand a = {0};
	struct mgr_le_request req;
	struct mgr_le_result res;
	uint64_t now = 0;

	assert_int_equal(mgr_le_new(&c, &a.le), 0);
	step_sync(&s, &a, now, NULL);
	assert_true(mgr_le_is_leader(a.le, now));
	s.rv++; /* an unrelated writer touched the object (say, a label) */
	now = 2 * SEC;
	assert_int_equal(mgr_le_step(a.le, now, wall(now), NULL, &req), 1);
	assert_int_equal(req.op, MGR_LE_OP_UPDATE); /* no GET first */
	a.req = req;
	apply(&s, &a, &res);
	assert_int_equal(res.err, -ESTALE);
	assert_int_equal(mgr_le_step(a.le, now, wall(now), &res, &req), 1);
	assert_int_equal(req.op, MGR_LE_OP_GET);
	a.req = req;
	apply(&s, &a, &res);
	assert_int_equal(mgr_le_step(a.le, now, wall(now), &res, &req), 1);
	assert_int_equal(req.op, MGR_LE_OP_UPDATE);
	a.req = req;
	apply(&s, &a, &res);
	assert_int_equal(res.err, 0);
	assert_int_equal(mgr_le_step(a.le, now, wall(now), &res, &req), 0);
	assert_true(mgr_le_is_leader(a.le, now));
	/* A result nobody asked for is refused. */
	assert_int_equal(mgr_le_step(a.le, now, wall(now), &res, &req), -EINVAL);
	mgr_le_free(a.le);
}

/*
 * Property: with random latencies (0-6 s), random request failures, outages and crashes,
 * two electors never lead at the same instant. Each write is applied to the store when the
 * request arrives (half-way through its latency) and answered at `due`.
 */
static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}
static double rnd01(void *u)
{
	(void)u;
	return (double)(rnd() >> 11) / 9007199254740992.0;
}

/* Mostly fast answers, one in ten up to 6 s (longer than the renew interval), one in fifty up
 * to 30 s (a hung connection: longer than the lease). */
static uint64_t latency(void)
{
	uint64_t kind = rnd() % 50;
	uint64_t r = rnd();

	if (kind == 0)
		return r % (30 * SEC);
	return r % (kind < 5 ? 6 * SEC : 300000);
}

static void test_mutual_exclusion_property(void **state)
{
	(void)state;
	enum { N = 3 };
	char ids[N][32];
	struct store s = {0};
	struct cand cs[N] = {0};
	struct mgr_le_result pending[N] = {0};
	uint64_t arrive[N] = {0};
	uint64_t now = 0, leader_time = 0, handovers = 0, restarts = 0, naive_overlap = 0;
	int last_leader = -1;

	for (int i = 0; i < N; i++) {
		snprintf(ids[i], sizeof(ids[i]), "host_%d", i);
		struct mgr_le_config c = cfg(ids[i]);
		c.rand01 = rnd01;
		c.attempt_at_expiry = i % 2; /* the range Leases' pacing against the leader's */
		assert_int_equal(mgr_le_new(&c, &cs[i].le), 0);
	}
	for (uint64_t tick = 0; tick < 200000; tick++, now += 50000) { /* 10,000 s */
		/* Outages start about every 200 s and last about 20 s. */
		if (!s.down && rnd() % 4000 == 0)
			s.down = true;
		else if (s.down && rnd() % 400 == 0)
			s.down = false;
		for (int i = 0; i < N; i++) {
			struct cand *c = &cs[i];
			struct mgr_le_request req;
			if (c->crashed) {
				if (rnd() % 2000 == 0) { /* restart with no memory */
					struct mgr_le_config cf = cfg(ids[i]);
					cf.rand01 = rnd01;
					cf.attempt_at_expiry = i % 2;
					mgr_le_free(c->le);
					memset(c, 0, sizeof(*c));
					arrive[i] = 0;
					assert_int_equal(mgr_le_new(&cf, &c->le), 0);
					restarts++;
				}
				continue;
			}
			if (c->have_req && now >= arrive[i] && arrive[i] != 0) {
				apply(&s, c, &pending[i]);
				if (rnd() % 20 == 0) /* answer lost: the driver reports a timeout */
					pending[i].err = -ETIMEDOUT;
				arrive[i] = 0;
			}
			if (c->have_req && arrive[i] == 0 && now >= c->due) {
				c->have_req = false;
				int n = mgr_le_step(c->le, now, wall(now), &pending[i], &req);
				assert_true(n >= 0);
				if (n == 1) {
					c->req = req;
					c->have_req = true;
					uint64_t lat = latency();
					arrive[i] = now + lat / 2 + 1;
					c->due = now + lat + 1;
				}
			} else if (!c->have_req && mgr_le_next_wakeup(c->le) <= now) {
				int n = mgr_le_step(c->le, now, wall(now), NULL, &req);
				assert_true(n >= 0);
				if (n == 1) {
					c->req = req;
					c->have_req = true;
					uint64_t lat = latency();
					arrive[i] = now + lat / 2 + 1;
					c->due = now + lat + 1;
				}
			}
			if (rnd() % 30000 == 0)
				c->crashed = true; /* kill -9: no release */
		}
		int leaders = 0, who = -1, naive = 0;
		for (int i = 0; i < N; i++) {
			if (cs[i].crashed)
				continue;
			if (mgr_le_is_leader(cs[i].le, now)) {
				leaders++;
				who = i;
			}
			/* Negative control: "leading until a step says otherwise", i.e. without the
			 * time-based fence, must be caught overlapping by this same oracle. */
			if (mgr_le_fence_deadline(cs[i].le) != UINT64_MAX)
				naive++;
		}
		assert_true(leaders <= 1);
		if (naive > 1)
			naive_overlap++;
		if (leaders == 1) {
			leader_time++;
			if (who != last_leader && last_leader != -1)
				handovers++;
			last_leader = who;
		}
	}
	/* The simulation must actually exercise leadership and handovers. */
	print_message("leader present %.1f%% of the time, %llu handovers, %llu restarts\n",
	              100.0 * (double)leader_time / 200000.0, (unsigned long long)handovers,
	              (unsigned long long)restarts);
	assert_true(leader_time > 200000 / 2); /* outages and crashes leave gaps */
	assert_true(handovers >= 3);
	print_message("negative control (no time fence): %llu ticks with two leaders\n",
	              (unsigned long long)naive_overlap);
	assert_true(naive_overlap > 0);
	for (int i = 0; i < N; i++)
		mgr_le_free(cs[i].le);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_validate),
	        cmocka_unit_test(test_create_and_renew),
	        cmocka_unit_test(test_takeover_after_lease_duration),
	        cmocka_unit_test(test_prime),
	        cmocka_unit_test(test_attempt_at_expiry),
	        cmocka_unit_test(test_fencing_when_apiserver_down),
	        cmocka_unit_test(test_release_then_immediate_takeover),
	        cmocka_unit_test(test_release_when_not_holder),
	        cmocka_unit_test(test_fast_path_conflict_falls_back_to_get),
	        cmocka_unit_test(test_mutual_exclusion_property),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
