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
	        cmocka_unit_test(test_creation_order),
	        cmocka_unit_test(test_message),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
