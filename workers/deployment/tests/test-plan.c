/* SPDX-License-Identifier: Apache-2.0 */
/* workers/deployment/tests/test-plan.c - the deployment controller's arithmetic (plan.c) on the
 * cases of upstream's own unit tests (k8s.io/kubernetes v1.37.2 pkg/controller/deployment:
 * util/deployment_util_test.go TestResolveFenceposts, TestNewRSNewReplicas; sync_test.go
 * TestScale; rolling_test.go TestDeploymentController_reconcileOldReplicaSets,
 * _cleanupUnhealthyReplicas), plus the percentage
 * rounding and the event text. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "workers/deployment/plan.h"

/* The tables below leave trailing fields of their rows zero on purpose. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static struct dp_intstr is_int(int32_t v)
{
	return (struct dp_intstr){.set = true, .ival = v};
}

static struct dp_intstr is_str(const char *s)
{
	struct dp_intstr v = {.set = true, .is_str = true};
	snprintf(v.str, sizeof(v.str), "%s", s);
	return v;
}

static const struct dp_intstr unset = {0};

static void test_fenceposts(void **state)
{
	(void)state;
	static const struct {
		const char *surge, *unavail; /* NULL: nil */
		int32_t desired, want_surge, want_unavail;
		bool err;
	} cases[] = {
	        {"0%", "0%", 0, 0, 1, false},    {"39%", "39%", 10, 4, 3, false},
	        {"oops", "39%", 10, 0, 0, true}, {"55%", "urg", 10, 0, 0, true},
	        {NULL, "39%", 10, 0, 3, false},  {"39%", NULL, 10, 4, 0, false},
	        {NULL, NULL, 10, 0, 1, false},   {"25%", "25%", 1, 1, 0, false},
	        {"25%", "25%", 3, 1, 0, false},  {"100%", "0", 7, 0, 0, true},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dp_intstr s = cases[i].surge ? is_str(cases[i].surge) : unset;
		struct dp_intstr u = cases[i].unavail ? is_str(cases[i].unavail) : unset;
		int32_t gs = -1, gu = -1;
		int r = dp_resolve_fenceposts(&s, &u, cases[i].desired, &gs, &gu);
		if (cases[i].err) {
			if (r != -EINVAL)
				fail_msg("case %zu: %d, want -EINVAL", i, r);
			continue;
		}
		assert_int_equal(r, 0);
		if (gs != cases[i].want_surge || gu != cases[i].want_unavail)
			fail_msg("case %zu: (%d, %d), want (%d, %d)", i, gs, gu,
			         cases[i].want_surge, cases[i].want_unavail);
	}
	/* ints as they are, and MaxUnavailable capped at the replicas */
	struct dp_deployment d = {.replicas = 3, .rolling = true};
	d.max_surge = is_int(2);
	d.max_unavailable = is_int(5);
	assert_int_equal(dp_max_surge(&d), 2);
	assert_int_equal(dp_max_unavailable(&d), 3);
	d.replicas = 0;
	assert_int_equal(dp_max_unavailable(&d), 0);
	d.rolling = false;
	d.replicas = 3;
	assert_int_equal(dp_max_surge(&d), 0);
	assert_int_equal(dp_max_unavailable(&d), 0);
}

static void test_scaled_value(void **state)
{
	(void)state;
	int32_t v;
	struct dp_intstr p = is_str("33%");
	assert_int_equal(dp_scaled_value(&p, 10, true, &v), 0);
	assert_int_equal(v, 4);
	assert_int_equal(dp_scaled_value(&p, 10, false, &v), 0);
	assert_int_equal(v, 3);
	p = is_str("-10%");
	assert_int_equal(dp_scaled_value(&p, 15, true, &v), 0);
	assert_int_equal(v, -1); /* ceil(-1.5) */
	p = is_str("%");
	assert_int_equal(dp_scaled_value(&p, 10, true, &v), -EINVAL);
	p = is_str("1.5%");
	assert_int_equal(dp_scaled_value(&p, 10, true, &v), -EINVAL);
	assert_int_equal(dp_scaled_value(&unset, 10, true, &v), -EINVAL);
}

static void test_new_rs_new_replicas(void **state)
{
	(void)state;
	static const struct {
		bool rolling;
		int32_t dep, new_rs, surge, want;
	} cases[] = {
	        {true, 1, 5, 1, 5},  /* can not scale up - to newRSReplicas */
	        {true, 6, 2, 10, 6}, /* scale up - to depReplicas */
	        {false, 3, 1, 1, 3}, /* recreate - to depReplicas */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dp_deployment d = {.replicas = cases[i].dep, .rolling = cases[i].rolling};
		d.max_unavailable = is_int(1);
		d.max_surge = is_int(cases[i].surge);
		struct dp_rs all[] = {{.name = "rs5", .replicas = 5}};
		struct dp_rs nrs = {.name = "new", .replicas = cases[i].new_rs};
		int32_t got;
		assert_int_equal(dp_new_rs_new_replicas(&d, all, 1, &nrs, &got), 0);
		if (got != cases[i].want)
			fail_msg("case %zu: %d, want %d", i, got, cases[i].want);
	}
}

/* TestScale: old deployment size and surge set the annotations, as the upstream test does. */
struct scale_case {
	const char *name;
	int32_t dep, dep_surge, old_dep, old_surge;
	struct {
		const char *name;
		int32_t replicas, want;
		int64_t created;
		bool is_new;
		int32_t desired; /* 0: the old Deployment's replicas */
		int32_t available;
		bool unchecked; /* upstream's wasntUpdated */
	} rs[3];
};

enum { OLDER = 100, OLD = 200, NEW = 300 };

static const struct scale_case scale_cases[] = {
        {"normal scaling event: 10 -> 12", 12, 0, 10, 0, {{"foo-v1", 10, 12, NEW, true}}},
        {"normal scaling event: 10 -> 5", 5, 0, 10, 0, {{"foo-v1", 10, 5, NEW, true}}},
        {"proportional scaling: 5 -> 10",
         10,
         0,
         5,
         0,
         {{"foo-v2", 2, 4, NEW, true}, {"foo-v1", 3, 6, OLD}}},
        {"proportional scaling: 5 -> 3",
         3,
         0,
         5,
         0,
         {{"foo-v2", 2, 1, NEW, true}, {"foo-v1", 3, 2, OLD}}},
        {"proportional scaling: 9 -> 4",
         4,
         0,
         9,
         0,
         {{"foo-v2", 8, 4, NEW, true}, {"foo-v1", 1, 0, OLD}}},
        {"proportional scaling: 7 -> 10",
         10,
         0,
         7,
         0,
         {{"foo-v3", 2, 3, NEW, true}, {"foo-v2", 3, 4, OLD}, {"foo-v1", 2, 3, OLDER}}},
        {"proportional scaling: 13 -> 8",
         8,
         0,
         13,
         0,
         {{"foo-v3", 2, 1, NEW, true}, {"foo-v2", 8, 5, OLD}, {"foo-v1", 3, 2, OLDER}}},
        {"leftover distribution: 3 -> 4",
         4,
         0,
         3,
         0,
         {{"foo-v3", 1, 2, NEW, true}, {"foo-v2", 1, 1, OLD}, {"foo-v1", 1, 1, OLDER}}},
        {"leftover distribution: 3 -> 2",
         2,
         0,
         3,
         0,
         {{"foo-v3", 1, 1, NEW, true}, {"foo-v2", 1, 1, OLD}, {"foo-v1", 1, 0, OLDER}}},
        {"proportional scaling (no new rs): 4 -> 5",
         5,
         0,
         4,
         0,
         {{"foo-v2", 2, 3, OLD}, {"foo-v1", 2, 2, OLDER}}},
        {"proportional scaling: 6 -> 0",
         0,
         0,
         6,
         0,
         {{"foo-v3", 3, 0, NEW, true}, {"foo-v2", 2, 0, OLD}, {"foo-v1", 1, 0, OLDER}}},
        {"proportional scaling: 0 -> 6",
         6,
         0,
         6,
         0,
         {{"foo-v3", 0, 6, NEW, true},
          {"foo-v2", 0, 0, OLD, false, 0, 0, true},
          {"foo-v1", 0, 0, OLDER, false, 0, 0, true}}},
        {"failed rs update",
         5,
         0,
         5,
         0,
         {{"foo-v3", 2, 2, NEW, true, 0, 0, true},
          {"foo-v2", 1, 2, OLD, false, 3},
          {"foo-v1", 1, 1, OLDER, false, 0, 0, true}}},
        {"deployment with surge pods",
         20,
         2,
         10,
         2,
         {{"foo-v2", 6, 11, NEW, true}, {"foo-v1", 6, 11, OLD}}},
        {"change both surge and size",
         50,
         6,
         10,
         3,
         {{"foo-v2", 5, 22, NEW, true}, {"foo-v1", 8, 34, OLD}}},
        {"change both size and template",
         14,
         0,
         10,
         0,
         {{"foo-v2", 7, 10, NEW}, {"foo-v1", 3, 4, OLD}}},
};

static void test_scale(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(scale_cases) / sizeof(scale_cases[0]); c++) {
		const struct scale_case *sc = &scale_cases[c];
		struct dp_deployment d = {.replicas = sc->dep, .rolling = true};
		d.max_surge = is_int(sc->dep_surge);
		d.max_unavailable = is_int(0);
		struct dp_deployment old = d;
		old.replicas = sc->old_dep;
		old.max_surge = is_int(sc->old_surge);
		struct dp_rs rs[3];
		size_t n = 0;
		for (; n < 3 && sc->rs[n].name; n++) {
			int32_t desired = sc->rs[n].desired ? sc->rs[n].desired : sc->old_dep;
			rs[n] = (struct dp_rs){.name = sc->rs[n].name,
			                       .created = sc->rs[n].created,
			                       .replicas = sc->rs[n].replicas,
			                       .available = sc->rs[n].available,
			                       .is_new = sc->rs[n].is_new,
			                       .desired = desired,
			                       .max_replicas = desired + dp_max_surge(&old)};
		}
		dp_plan_scale(&d, rs, n);
		for (size_t i = 0; i < n; i++) {
			if (sc->rs[i].unchecked)
				continue;
			for (size_t j = 0; j < n; j++)
				if (strcmp(rs[j].name, sc->rs[i].name) == 0 &&
				    rs[j].target != sc->rs[i].want)
					fail_msg("%s: %s: %d, want %d", sc->name, sc->rs[i].name,
					         rs[j].target, sc->rs[i].want);
		}
	}
	/* saturated but broken new replica set does not affect old pods */
	struct dp_deployment d = {.replicas = 2, .rolling = true};
	d.max_surge = is_int(1);
	d.max_unavailable = is_int(1);
	struct dp_rs rs[] = {
	        {.name = "foo-v2",
	         .created = NEW,
	         .replicas = 2,
	         .available = 0,
	         .is_new = true,
	         .desired = 2,
	         .max_replicas = 3},
	        {.name = "foo-v1", .created = OLD, .replicas = 1, .desired = 2, .max_replicas = 3},
	};
	dp_plan_scale(&d, rs, 2);
	for (size_t i = 0; i < 2; i++)
		assert_int_equal(rs[i].target, strcmp(rs[i].name, "foo-v2") == 0 ? 2 : 1);
	/* saturated and available: the old ones go to zero */
	rs[0] = (struct dp_rs){.name = "foo-v2",
	                       .created = NEW,
	                       .replicas = 2,
	                       .available = 2,
	                       .is_new = true,
	                       .desired = 2,
	                       .max_replicas = 3};
	rs[1] = (struct dp_rs){
	        .name = "foo-v1", .created = OLD, .replicas = 1, .desired = 2, .max_replicas = 3};
	dp_plan_scale(&d, rs, 2);
	for (size_t i = 0; i < 2; i++)
		assert_int_equal(rs[i].target, strcmp(rs[i].name, "foo-v2") == 0 ? 2 : 0);
}

static void test_reconcile_old(void **state)
{
	(void)state;
	/* reconcileOldReplicaSets (maxSurge 0; the want of the last case: no scaling) */
	static const struct {
		int32_t dep, max_unavail, old, new_rs, old_ready, new_ready;
		int32_t want_old; /* -1: no scaling expected */
	} cases[] = {
	        {10, 0, 10, 0, 10, 0, 9}, {10, 2, 10, 0, 10, 0, 8}, {10, 2, 10, 0, 8, 0, 8},
	        {10, 2, 10, 0, 9, 0, 8},  {10, 2, 8, 2, 8, 0, -1},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dp_deployment d = {.replicas = cases[i].dep, .rolling = true};
		d.max_surge = is_int(0);
		d.max_unavailable = is_int(cases[i].max_unavail);
		struct dp_rs old = {.name = "foo-old",
		                    .replicas = cases[i].old,
		                    .available = cases[i].old_ready};
		struct dp_rs nrs = {.name = "foo-new",
		                    .replicas = cases[i].new_rs,
		                    .available = cases[i].new_ready};
		int32_t down = dp_plan_scale_down_old(&d, &old, 1, &nrs);
		if (cases[i].want_old < 0) {
			if (down != 0)
				fail_msg("case %zu: scaled down %d, want none", i, down);
			continue;
		}
		if (old.target != cases[i].want_old)
			fail_msg("case %zu: old to %d, want %d", i, old.target, cases[i].want_old);
	}
}

static void test_cleanup_unhealthy(void **state)
{
	(void)state;
	/* cleanupUnhealthyReplicas: (oldReplicas, readyPods, unHealthyPods, maxCleanupCount,
	 * cleanupCountExpected), reached through maxScaledDown = all - minAvailable - newUnavail
	 * with a new ReplicaSet of 0 and minAvailable chosen so maxScaledDown is the max cleanup
	 * (upstream's row with maxCleanupCount 0 cannot be reached so: maxUnavailable 0 with
	 * maxSurge 0 is fenceposted to 1) */
	static const struct {
		int32_t old, ready, unhealthy, max_cleanup, want;
	} cases[] = {
	        {10, 8, 2, 5, 2},
	        {10, 8, 2, 1, 1},
	        {10, 10, 0, 3, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dp_deployment d = {.replicas = 10, .rolling = true};
		d.max_surge = is_int(0);
		/* minAvailable = 10 - maxUnavailable = old - max_cleanup */
		d.max_unavailable = is_int(10 - (cases[i].old - cases[i].max_cleanup));
		struct dp_rs old = {
		        .name = "foo-old", .replicas = cases[i].old, .available = cases[i].ready};
		struct dp_rs nrs = {.name = "foo-new"};
		int32_t down = dp_plan_scale_down_old(&d, &old, 1, &nrs);
		/* the available ones are left alone only when minAvailable is already reached */
		int32_t unhealthy_removed = cases[i].old - old.target;
		if (unhealthy_removed > cases[i].unhealthy)
			unhealthy_removed = cases[i].unhealthy;
		assert_true(down >= unhealthy_removed);
		if (unhealthy_removed != cases[i].want)
			fail_msg("case %zu: cleaned %d, want %d", i, unhealthy_removed,
			         cases[i].want);
	}
}

/* TestDeploymentController_cleanupDeployment (no revisions: order by creation, then name) and
 * TestDeploymentController_cleanupDeploymentOrder (by revision; absent counts as 0). */
static void test_cleanup(void **state)
{
	(void)state;
	static const struct {
		int32_t limit;
		size_t n;
		struct {
			const char *name;
			int32_t spec, status;
			int64_t created, revision;
			bool deleting;
		} rs[4];
		const char *want; /* deleted names, in order, space-separated */
	} cases[] = {
	        {1, 3, {{"foo-1"}, {"foo-2"}, {"foo-3"}}, "foo-1 foo-2"},
	        {0,
	         4,
	         {{"foo-1", 0, 0}, {"foo-2", 0, 1}, {"foo-3", 1, 0}, {"foo-4", 1, 1}},
	         "foo-1"},
	        {0, 2, {{"foo-1"}, {"foo-2"}}, "foo-1 foo-2"},
	        {0, 2, {{"foo-1", 1, 1}, {"foo-2", 1, 1}}, ""},
	        {0, 1, {{"foo-1", 0, 0, 0, 0, true}}, ""},
	        {INT32_MAX, 3, {{"foo-1"}, {"foo-2"}, {"foo-3"}}, ""},
	        {1, 2, {{"foo-1", 0, 0, 100, 1}, {"foo-2", 0, 0, 200, 2}}, "foo-1"},
	        {1, 2, {{"foo-1", 0, 0, 100, 2}, {"foo-2", 0, 0, 200, 1}}, "foo-2"},
	        {1, 2, {{"foo-1", 0, 0, 100, 1}, {"foo-2", 0, 0, 200, 0}}, "foo-2"},
	        {1, 2, {{"foo-1", 0, 0, 100, 0}, {"foo-2", 0, 0, 200, 2}}, "foo-1"},
	        {1,
	         3,
	         {{"foo-1", 1, 0, 100, 1}, {"foo-2", 0, 0, 200, 2}, {"foo-3", 0, 0, 300, 3}},
	         "foo-2"},
	        {1,
	         3,
	         {{"foo-1", 1, 0, 100, 1}, {"foo-2", 1, 0, 200, 2}, {"foo-3", 0, 0, 300, 3}},
	         ""},
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct dp_rs rs[4];
		bool del[4];
		for (size_t i = 0; i < cases[c].n; i++)
			rs[i] = (struct dp_rs){.name = cases[c].rs[i].name,
			                       .replicas = cases[c].rs[i].spec,
			                       .status_replicas = cases[c].rs[i].status,
			                       .created = cases[c].rs[i].created,
			                       .revision = cases[c].rs[i].revision,
			                       .deleting = cases[c].rs[i].deleting};
		size_t k = dp_plan_cleanup(rs, cases[c].n, cases[c].limit, del);
		char got[64] = "";
		for (size_t i = 0; i < cases[c].n; i++)
			if (del[i])
				snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s",
				         got[0] ? " " : "", rs[i].name);
		if (strcmp(got, cases[c].want) != 0)
			fail_msg("case %zu: deleted \"%s\", want \"%s\"", c, got, cases[c].want);
		assert_int_equal(k,
		                 cases[c].want[0] ? 1 + (strchr(cases[c].want, ' ') != NULL) : 0);
	}
}

static void test_revisions(void **state)
{
	(void)state;
	struct dp_rs rs[] = {{.revision = 3},
	                     {.revision = 7},
	                     {.revision = 99, .revision_bad = true},
	                     {.revision = 5}};
	assert_int_equal(dp_max_revision(rs, 4), 7);
	assert_int_equal(dp_last_revision(rs, 4), 5);
	assert_int_equal(dp_max_revision(rs, 0), 0);
	struct dp_rs one[] = {{.revision = 4}};
	assert_int_equal(dp_last_revision(one, 1), 0);
}

/* calculateStatus: counts over all ReplicaSets, updated from the new one, Available by
 * minAvailable; terminating only with the gate and when every ReplicaSet reports it. */
static void test_status(void **state)
{
	(void)state;
	struct dp_deployment d = {.replicas = 4, .rolling = true};
	d.max_surge = is_int(1);
	d.max_unavailable = is_int(1);
	struct dp_rs rs[] = {
	        {.replicas = 3,
	         .status_replicas = 3,
	         .ready = 2,
	         .available = 2,
	         .is_new = true,
	         .has_terminating = true,
	         .terminating = 1},
	        {.replicas = 1,
	         .status_replicas = 2,
	         .ready = 1,
	         .available = 1,
	         .has_terminating = true,
	         .terminating = 2},
	};
	struct dp_status st;
	dp_calc_status(&d, rs, 2, true, &st);
	assert_int_equal(st.replicas, 5);
	assert_int_equal(st.updated, 3);
	assert_int_equal(st.ready, 3);
	assert_int_equal(st.available, 3);
	assert_int_equal(st.unavailable, 1); /* spec total 4 - available 3 */
	assert_true(st.has_terminating);
	assert_int_equal(st.terminating, 3);
	assert_true(st.min_available); /* 3 >= 4 - 1 */
	rs[1].has_terminating = false;
	dp_calc_status(&d, rs, 2, true, &st);
	assert_false(st.has_terminating);
	dp_calc_status(&d, rs, 2, false, &st);
	assert_false(st.has_terminating);
	rs[0].available = 1;
	dp_calc_status(&d, rs, 2, false, &st);
	assert_false(st.min_available);
	rs[0].available = 9; /* more available than wanted: unavailable is not negative */
	dp_calc_status(&d, rs, 2, false, &st);
	assert_int_equal(st.unavailable, 0);
}

/* TestRequeueStuckDeployment's rows (60s deadline; the stuck condition updated at t=0), and the
 * Progressing decisions of TestSyncRolloutStatus. */
static void test_progress(void **state)
{
	(void)state;
	struct dp_progress_in in = {
	        .spec_replicas = 3, .has_deadline = true, .deadline_seconds = 60};
	struct dp_status st = {.replicas = 3, .updated = 3, .available = 1};
	assert_int_equal(dp_requeue_stuck_after(&in, &st), -1); /* no condition */
	in.cur = (struct dp_cond){.present = true,
	                          .status_true = true,
	                          .reason = "ReplicaSetUpdated",
	                          .last_update = 0};
	in.now = 30;
	assert_int_equal(dp_requeue_stuck_after(&in, &st), 30);
	in.now = 59;
	assert_int_equal(dp_requeue_stuck_after(&in, &st), 1);
	in.now = 60;
	assert_int_equal(dp_requeue_stuck_after(&in, &st), 0);
	in.has_deadline = false;
	assert_int_equal(dp_requeue_stuck_after(&in, &st), -1);
	in.has_deadline = true;
	in.cur.reason = "ProgressDeadlineExceeded";
	assert_int_equal(dp_requeue_stuck_after(&in, &st), -1); /* already failed */
	st.available = 3;
	in.cur.reason = "ReplicaSetUpdated";
	assert_int_equal(dp_requeue_stuck_after(&in, &st), -1); /* complete */

	/* decisions */
	char msg[128];
	in = (struct dp_progress_in){
	        .spec_replicas = 2, .has_deadline = true, .deadline_seconds = 60, .now = 1000};
	struct dp_status s2 = {.replicas = 2, .updated = 2, .available = 2};
	assert_int_equal(dp_progress_decide(&in, &s2), DP_PROGRESS_COMPLETE);
	assert_true(dp_progress_message(msg, sizeof(msg), DP_PROGRESS_COMPLETE, "d", "d-5f") > 0);
	assert_string_equal(msg, "ReplicaSet \"d-5f\" has successfully progressed.");
	/* already complete: kept */
	in.cur = (struct dp_cond){.present = true,
	                          .status_true = true,
	                          .reason = "NewReplicaSetAvailable",
	                          .last_update = 0};
	assert_int_equal(dp_progress_decide(&in, &s2), DP_PROGRESS_KEEP);
	/* progress: more updated replicas than the Deployment's status had */
	in.cur.reason = "ReplicaSetUpdated";
	in.old_replicas = 2;
	in.old_updated = 0;
	struct dp_status s3 = {.replicas = 3, .updated = 1, .available = 2};
	assert_int_equal(dp_progress_decide(&in, &s3), DP_PROGRESS_UPDATED);
	assert_true(dp_progress_message(msg, sizeof(msg), DP_PROGRESS_UPDATED, "d", NULL) > 0);
	assert_string_equal(msg, "Deployment \"d\" is progressing.");
	/* no progress, deadline passed since the last update */
	in.old_updated = 1;
	in.old_replicas = 3;
	in.old_available = 2;
	assert_int_equal(dp_progress_decide(&in, &s3), DP_PROGRESS_TIMED_OUT);
	assert_true(dp_progress_message(msg, sizeof(msg), DP_PROGRESS_TIMED_OUT, "d", "d-5f") > 0);
	assert_string_equal(msg, "ReplicaSet \"d-5f\" has timed out progressing.");
	/* no progress, deadline not passed */
	in.cur.last_update = 990;
	assert_int_equal(dp_progress_decide(&in, &s3), DP_PROGRESS_KEEP);
	/* no deadline: the condition goes */
	in.has_deadline = false;
	assert_int_equal(dp_progress_decide(&in, &s3), DP_PROGRESS_REMOVE);
}

/* TestAnnotationUtils/SetNewReplicaSetAnnotations: revisions 11..20 with a 5-character
 * history limit keep the last two replaced revisions; plus the edge rules. */
static void test_revision_history(void **state)
{
	(void)state;
	char rev[24] = "", hist[DP_REV_HISTORY_BUF] = "", r2[24], h2[DP_REV_HISTORY_BUF];
	bool have_rev = false, have_hist = false, changed;
	for (int i = 10; i < 20; i++) {
		char next[16];
		snprintf(next, sizeof(next), "%d", i + 1);
		assert_int_equal(dp_revision_update(have_rev ? rev : NULL, have_hist ? hist : NULL,
		                                    next, 5, r2, h2, &changed),
		                 0);
		assert_true(changed);
		memcpy(rev, r2, sizeof(rev));
		have_rev = true;
		if (h2[0]) {
			memcpy(hist, h2, sizeof(hist));
			have_hist = true;
		}
		if (i >= 12) {
			char want[32];
			snprintf(want, sizeof(want), "%d,%d", i - 1, i);
			assert_string_equal(hist, want);
		}
		assert_string_equal(rev, next);
	}
	/* not higher: nothing changes */
	assert_int_equal(dp_revision_update("5", "3,4", "5", 2000, r2, h2, &changed), 0);
	assert_false(changed);
	assert_string_equal(r2, "5");
	assert_string_equal(h2, "3,4");
	/* "" counts as 0; being present, it is the replaced revision: the history becomes "" */
	assert_int_equal(dp_revision_update("", NULL, "1", 2000, r2, h2, &changed), 0);
	assert_true(changed);
	assert_string_equal(r2, "1");
	/* not numbers */
	assert_int_equal(dp_revision_update("x", NULL, "2", 2000, r2, h2, &changed), -EINVAL);
	assert_false(changed);
	assert_int_equal(dp_revision_update("1", NULL, "y", 2000, r2, h2, &changed), -EINVAL);
	/* an entry that cannot fit is not appended */
	assert_int_equal(dp_revision_update("123456", "1", "123457", 5, r2, h2, &changed), 0);
	assert_string_equal(r2, "123457");
	assert_string_equal(h2, "1");
	/* skipped annotations */
	assert_true(dp_annotation_skipped("deployment.kubernetes.io/revision"));
	assert_true(dp_annotation_skipped("kubectl.kubernetes.io/last-applied-configuration"));
	assert_false(dp_annotation_skipped("app.example.com/owner"));
}

static void test_creation_order(void **state)
{
	(void)state;
	struct dp_rs rs[] = {{.name = "b", .created = 5},
	                     {.name = "a", .created = 5},
	                     {.name = "z", .created = 1}};
	dp_sort_by_creation(rs, 3);
	assert_string_equal(rs[0].name, "z");
	assert_string_equal(rs[1].name, "a");
	assert_string_equal(rs[2].name, "b");
}

static void test_message(void **state)
{
	(void)state;
	char buf[128];
	assert_true(dp_scaling_message(buf, sizeof(buf), "web-7d4b9c", 0, 3) > 0);
	assert_string_equal(buf, "Scaled up replica set web-7d4b9c from 0 to 3");
	assert_true(dp_scaling_message(buf, sizeof(buf), "web-5f6", 3, 1) > 0);
	assert_string_equal(buf, "Scaled down replica set web-5f6 from 3 to 1");
	assert_int_equal(dp_scaling_message(buf, 8, "web", 1, 2), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_fenceposts),
	        cmocka_unit_test(test_scaled_value),
	        cmocka_unit_test(test_new_rs_new_replicas),
	        cmocka_unit_test(test_scale),
	        cmocka_unit_test(test_reconcile_old),
	        cmocka_unit_test(test_cleanup_unhealthy),
	        cmocka_unit_test(test_cleanup),
	        cmocka_unit_test(test_revisions),
	        cmocka_unit_test(test_status),
	        cmocka_unit_test(test_progress),
	        cmocka_unit_test(test_revision_history),
	        cmocka_unit_test(test_creation_order),
	        cmocka_unit_test(test_message),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
