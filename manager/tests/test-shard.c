/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of the range Leases' request budget (manager/shard.h, mgr_shard_lease_budget): the
 * formula, and a simulation of one instance holding R ranges: R real electors (manager/leader.h)
 * and the shard's LIST send their requests through one token bucket with kube/client.c's
 * arithmetic (tokens refilled at qps up to burst, one per request, first come first served, a
 * request not sent within its timeout fails). With the budget every range is acquired within
 * two retry periods and none is ever lost; with kcm's defaults alone (qps 20, burst 30: the
 * budget before) the same instance cannot hold 64 ranges (the negative control).
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
#include "manager/shard.h"

#define SEC  1000000ull
#define MAXR 256

static void test_budget_formula(void **state)
{
	(void)state;
	double qps;
	int burst;

	/* 64 ranges, kcm's default retry period (2 s): 2 x 66 requests per 2 s */
	mgr_shard_lease_budget(64, 2 * SEC, 20, 30, &qps, &burst);
	assert_true(qps > 65.99 && qps < 66.01);
	assert_int_equal(burst, 132);
	/* the most --shard-ranges allows, with the e2e test's 1 s retry period */
	mgr_shard_lease_budget(256, 1 * SEC, 20, 30, &qps, &burst);
	assert_true(qps > 515.99 && qps < 516.01);
	assert_int_equal(burst, 516);
	/* few ranges: never below --kube-api-qps / --kube-api-burst */
	mgr_shard_lease_budget(4, 2 * SEC, 20, 30, &qps, &burst);
	assert_true(qps > 19.99 && qps < 20.01);
	assert_int_equal(burst, 30);
	/* --kube-api-qps <= 0 means no client-side limit: it stays so */
	mgr_shard_lease_budget(64, 2 * SEC, 0, 30, &qps, &burst);
	assert_true(qps == 0);
}

/* ---- one instance, R range Leases, one token bucket ---- */

struct lease {
	bool exists;
	struct mgr_le_record rec;
	uint64_t rv, cand_rv;
};

struct req {
	int who; /* range, or -1: the shard's LIST */
	uint64_t enq;
	struct mgr_le_request q;
};

struct sim {
	unsigned R;
	uint64_t lease_us, renew_us, retry_us, timeout_us, rtt_us;
	double qps, burst, tokens;
	struct mgr_le *le[MAXR];
	struct lease st[MAXR];
	bool busy[MAXR];
	/* answers in flight: due time and result, one per range at most */
	bool ans[MAXR];
	uint64_t ans_due[MAXR];
	struct mgr_le_result res[MAXR];
	struct req queue[MAXR + 2];
	size_t nq;
	uint64_t next_list;
	bool list_queued;
	unsigned long timeouts, sent;
};

static kube_time_t wall(uint64_t mono)
{
	return (kube_time_t)(1700000000ull * 1000000000ull + mono * 1000ull);
}

static void apply(struct lease *l, const struct mgr_le_request *q, struct mgr_le_result *res)
{
	memset(res, 0, sizeof(*res));
	res->op = q->op;
	switch (q->op) {
	case MGR_LE_OP_GET:
		if (!l->exists) {
			res->err = -ENOENT;
			return;
		}
		res->record = l->rec;
		l->cand_rv = l->rv;
		return;
	case MGR_LE_OP_CREATE:
		if (l->exists) {
			res->err = -EEXIST;
			return;
		}
		l->exists = true;
		break;
	case MGR_LE_OP_UPDATE:
		if (!l->exists) {
			res->err = -ENOENT;
			return;
		}
		if (l->cand_rv != l->rv) {
			res->err = -ESTALE;
			return;
		}
		break;
	default:
		fail();
	}
	l->rec = q->record;
	l->rv++;
	l->cand_rv = l->rv;
	res->record = l->rec;
}

static void enqueue(struct sim *s, int who, uint64_t now, const struct mgr_le_request *q)
{
	assert_true(s->nq < MAXR + 2);
	s->queue[s->nq].who = who;
	s->queue[s->nq].enq = now;
	if (q)
		s->queue[s->nq].q = *q;
	s->nq++;
	if (who >= 0)
		s->busy[who] = true;
}

static void pop(struct sim *s, size_t i)
{
	memmove(&s->queue[i], &s->queue[i + 1], (s->nq - i - 1) * sizeof(s->queue[0]));
	s->nq--;
}

static void feed(struct sim *s, unsigned i, uint64_t now, const struct mgr_le_result *res)
{
	struct mgr_le_request q;
	int n = mgr_le_step(s->le[i], now, wall(now), res, &q);

	assert_true(n >= 0);
	s->busy[i] = false;
	if (n == 1)
		enqueue(s, (int)i, now, &q);
}

/* Runs the instance for `secs` simulated seconds; returns how many ranges it holds at the end
 * and, in *lost, how many times a range it held was lost, and in *all_at the time all R were
 * first held (UINT64_MAX: never). */
static unsigned run(struct sim *s, unsigned secs, uint64_t *all_at, unsigned long *lost)
{
	const uint64_t step = 1000; /* 1 ms */
	char id[] = "kcmd-a";

	*all_at = UINT64_MAX;
	s->tokens = s->burst;
	for (unsigned i = 0; i < s->R; i++) {
		struct mgr_le_config c = {.identity = id,
		                          .lease_duration_us = s->lease_us,
		                          .renew_deadline_us = s->renew_us,
		                          .retry_period_us = s->retry_us,
		                          .attempt_at_expiry = true};
		assert_int_equal(mgr_le_new(&c, &s->le[i]), 0);
	}
	for (uint64_t now = 0; now < secs * SEC; now += step) {
		if (s->qps > 0) {
			s->tokens += (double)step / 1e6 * s->qps;
			if (s->tokens > s->burst)
				s->tokens = s->burst;
		}
		/* answers due */
		for (unsigned i = 0; i < s->R; i++)
			if (s->ans[i] && s->ans_due[i] <= now) {
				s->ans[i] = false;
				feed(s, i, now, &s->res[i]);
			}
		/* requests past their timeout fail where they wait */
		for (size_t k = 0; k < s->nq;) {
			struct req *q = &s->queue[k];
			if (now - q->enq < s->timeout_us) {
				k++;
				continue;
			}
			s->timeouts++;
			if (q->who < 0) {
				s->list_queued = false;
			} else {
				struct mgr_le_result r = {.op = q->q.op, .err = -ETIMEDOUT};
				unsigned who = (unsigned)q->who;
				pop(s, k);
				feed(s, who, now, &r);
				continue;
			}
			pop(s, k);
		}
		/* the shard's LIST, every retry period */
		if (now >= s->next_list && !s->list_queued) {
			enqueue(s, -1, now, NULL);
			s->list_queued = true;
			s->next_list = now + s->retry_us;
		}
		/* electors due */
		for (unsigned i = 0; i < s->R; i++)
			if (!s->busy[i] && !s->ans[i] && mgr_le_next_wakeup(s->le[i]) <= now)
				feed(s, i, now, NULL);
		/* the bucket: first come, first served */
		while (s->nq && (s->qps <= 0 || s->tokens >= 1)) {
			struct req q = s->queue[0];
			pop(s, 0);
			if (s->qps > 0)
				s->tokens -= 1;
			s->sent++;
			if (q.who < 0) {
				s->list_queued = false;
				continue;
			}
			unsigned i = (unsigned)q.who;
			apply(&s->st[i], &q.q, &s->res[i]);
			s->ans[i] = true;
			s->ans_due[i] = now + s->rtt_us;
		}
		unsigned held = 0;
		for (unsigned i = 0; i < s->R; i++)
			held += mgr_le_is_leader(s->le[i], now);
		if (held == s->R && *all_at == UINT64_MAX)
			*all_at = now;
	}
	unsigned held = 0;
	*lost = 0;
	for (unsigned i = 0; i < s->R; i++) {
		struct mgr_le_stats st;
		mgr_le_get_stats(s->le[i], &st);
		*lost += st.losses;
		held += mgr_le_is_leader(s->le[i], (uint64_t)secs * SEC - 1000);
		mgr_le_free(s->le[i]);
	}
	return held;
}

static struct sim *sim_new(unsigned R, uint64_t lease, uint64_t renew, uint64_t retry, double qps,
                           int burst)
{
	struct sim *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	s->R = R;
	s->lease_us = lease;
	s->renew_us = renew;
	s->retry_us = retry;
	s->timeout_us = renew / 2 > SEC ? renew / 2 : SEC; /* lease-client.c's per-request one */
	s->rtt_us = 5000;
	s->qps = qps;
	s->burst = burst;
	/* the range Leases exist, released (as after a previous instance's clean stop) */
	for (unsigned i = 0; i < R; i++) {
		s->st[i].exists = true;
		s->st[i].rec.lease_duration_s = 1;
		s->st[i].rv = 1;
	}
	return s;
}

static void hold_all(unsigned R, uint64_t lease, uint64_t renew, uint64_t retry)
{
	double qps;
	int burst;
	uint64_t all_at;
	unsigned long lost;

	mgr_shard_lease_budget(R, retry, 20, 30, &qps, &burst);
	struct sim *s = sim_new(R, lease, renew, retry, qps, burst);
	unsigned held = run(s, 300, &all_at, &lost);
	print_message("%u ranges, retry %llums, budget qps %g burst %d: all held at %.2fs, %u "
	              "held at the end, %lu losses, %lu requests, %lu timeouts\n",
	              R, (unsigned long long)(retry / 1000), qps, burst, (double)all_at / 1e6, held,
	              lost, s->sent, s->timeouts);
	assert_int_equal(held, R);
	assert_int_equal(lost, 0);
	assert_int_equal(s->timeouts, 0);
	assert_true(all_at <= 2 * retry);
	free(s);
}

static void test_hold_all_ranges(void **state)
{
	(void)state;
	hold_all(64, 15 * SEC, 10 * SEC, 2 * SEC); /* kcm's default timings */
	hold_all(64, 6 * SEC, 4 * SEC, 1 * SEC);   /* the e2e test's */
	hold_all(64, 6 * SEC, 4 * SEC, 800000);    /* h-shbench's */
	hold_all(256, 15 * SEC, 10 * SEC, 2 * SEC);
	hold_all(256, 6 * SEC, 4 * SEC, 1 * SEC);
}

/* Negative control: the budget before (one client at --kube-api-qps 20 / --kube-api-burst 30
 * for every range Lease) cannot hold 64 ranges with the e2e test's timings (6 s / 4 s / 1 s),
 * nor 256 with kcm's:
 * the ranges held first renew every retry period and use the whole budget, the others' requests
 * time out in the queue. */
static void starve(unsigned R, uint64_t lease, uint64_t renew, uint64_t retry)
{
	uint64_t all_at;
	unsigned long lost;
	struct sim *s = sim_new(R, lease, renew, retry, 20, 30);
	unsigned held = run(s, 300, &all_at, &lost);

	print_message("%u ranges, retry %llums, qps 20 burst 30: %u held at the end, %lu losses, "
	              "%lu timeouts, all held %s\n",
	              R, (unsigned long long)(retry / 1000), held, lost, s->timeouts,
	              all_at == UINT64_MAX ? "never" : "once");
	assert_true(held < R);
	assert_true(lost > 0);
	assert_true(all_at == UINT64_MAX);
	free(s);
}

static void test_kcm_budget_alone_starves(void **state)
{
	(void)state;
	starve(64, 6 * SEC, 4 * SEC, 1 * SEC); /* the e2e test's timings */
	starve(64, 6 * SEC, 4 * SEC, 800000);
	/* kcm's timings (15 s / 10 s / 2 s): 64 ranges happen to fit (the electors pace
	 * themselves, one renewal per range every 3.2 s < 10 s), the most --shard-ranges allows
	 * does not */
	starve(256, 15 * SEC, 10 * SEC, 2 * SEC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_budget_formula),
	        cmocka_unit_test(test_hold_all_ranges),
	        cmocka_unit_test(test_kcm_budget_alone_starves),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
