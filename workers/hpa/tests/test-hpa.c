/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/hpa/tests/test-hpa.c: the HPA's arithmetic (hpa.c) against upstream's
 * replica_calculator_test.go (TestReplicaCalc cases, named after them) and the
 * normalisation rules of horizontal.go (convertDesiredReplicasWithRules, the behaviour
 * policies, the stabilisation windows). Upstream's pods have two containers of 1.0 CPU
 * request each and the same level in both; here a pod's sample is that sum (2 x level) and
 * its request 2000m, which gives the same ratios, and the raw value upstream expects
 * (numContainersPerPod * level).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "workers/hpa/hpa.h"
#include "workers/hpa/util.h"

#define NOW ((kube_time_t)1700000000LL * 1000000000LL)
#define SEC 1000000000LL

struct rc_case {
	const char *name;
	int32_t current;
	size_t n_pods;
	const char *ready;    /* per pod: 'T' True, 'F' False; NULL all True */
	const char *phase;    /* per pod: 'R' Running, 'P' Pending, 'F' Failed; NULL all Running */
	const char *deleting; /* per pod: '1' deleting */
	size_t n_levels;
	int64_t levels[8];
	int32_t target;
	int32_t want_replicas, want_util;
	int64_t want_raw;
};

static void run_rc(const struct rc_case *c)
{
	char names[8][32];
	struct hpa_pod pods[8];
	struct hpa_sample samples[8];
	struct hpa_calc_cfg cfg = {.tol = {0.1, 0.1},
	                           .cpu_init_ns = 120 * SEC,
	                           .readiness_delay_ns = 10 * SEC,
	                           .now = NOW};
	char err[256] = "";

	memset(pods, 0, sizeof(pods));
	for (size_t i = 0; i < c->n_pods; i++) {
		snprintf(names[i], sizeof(names[i]), "test-pod-%zu", i);
		bool f = c->ready && c->ready[i] == 'F';
		/* upstream's fixture: a zero startTime and a zero lastTransitionTime */
		pods[i] =
		        (struct hpa_pod){.name = names[i],
		                         .deleting = c->deleting && c->deleting[i] == '1',
		                         .phase = !c->phase || c->phase[i] == 'R' ? HPA_POD_RUNNING
		                                  : c->phase[i] == 'P'            ? HPA_POD_PENDING
		                                                                  : HPA_POD_FAILED,
		                         .has_ready = true,
		                         .ready = !f,
		                         .ready_false = f,
		                         .ready_ltt = 1,
		                         .start = 1,
		                         .request = 2000};
	}
	for (size_t i = 0; i < c->n_levels; i++)
		samples[i] = (struct hpa_sample){names[i], 2 * c->levels[i], NOW, 30 * SEC};
	int32_t replicas = -1, util = -1;
	int64_t raw = -1;
	int r = hpa_resource_replicas(&cfg, pods, c->n_pods, samples, c->n_levels, c->current,
	                              c->target, true, &replicas, &util, &raw, err, sizeof(err));
	if (r < 0)
		fail_msg("%s: %s", c->name, err);
	if (replicas != c->want_replicas || util != c->want_util || raw != c->want_raw)
		fail_msg("%s: replicas %d util %d raw %lld, want %d %d %lld", c->name, replicas,
		         util, (long long)raw, c->want_replicas, c->want_util,
		         (long long)c->want_raw);
}

static void t_replica_calc(void **state)
{
	(void)state;
	static const struct rc_case cases[] = {
	        {"scale up", 3, 3, NULL, NULL, NULL, 3, {300, 500, 700}, 30, 5, 50, 1000},
	        {"scale up: unready pod scales less",
	         3,
	         3,
	         "FTT",
	         NULL,
	         NULL,
	         3,
	         {300, 500, 700},
	         30,
	         4,
	         60,
	         1200},
	        {"no scale: unready pods ignored",
	         3,
	         3,
	         "TFF",
	         NULL,
	         NULL,
	         3,
	         {400, 500, 700},
	         30,
	         3,
	         40,
	         800},
	        {"scale down",
	         5,
	         5,
	         NULL,
	         NULL,
	         NULL,
	         5,
	         {100, 300, 500, 250, 250},
	         50,
	         3,
	         28,
	         560},
	        {"scale down: exclude unready pods",
	         5,
	         5,
	         "TTTFF",
	         NULL,
	         NULL,
	         5,
	         {100, 300, 500, 250, 250},
	         50,
	         2,
	         30,
	         600},
	        {"scale down: exclude unscheduled pods",
	         5,
	         5,
	         "TFFFF",
	         "RPPPP",
	         NULL,
	         1,
	         {100},
	         50,
	         1,
	         10,
	         200},
	        {"scale down: failed pods ignored",
	         5,
	         7,
	         "TTTTTFF",
	         "RRRRRFF",
	         NULL,
	         5,
	         {100, 300, 500, 250, 250},
	         50,
	         3,
	         28,
	         560},
	        {"scale down: pods being deleted are ignored",
	         5,
	         7,
	         "TTTTTFF",
	         NULL,
	         "0000011",
	         5,
	         {100, 300, 500, 250, 250},
	         50,
	         3,
	         28,
	         560},
	        {"tolerance", 3, 3, NULL, NULL, NULL, 3, {1010, 1030, 1020}, 100, 3, 102, 2040},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_rc(&cases[i]);
}

/* TestReplicaCalcMissingMetricsScaleDown-like: a pod without a sample counts as using 100% of
 * its request on a scale-down (the second pass), which can hold the count. */
static void t_missing_metrics(void **state)
{
	(void)state;
	/* upstream "scale down: missing metrics": 4 pods, levels 400 95 (one missing), request
	 * 1.0 each (here 2000 and 2x), target 50: ratio 0.. -> 3 replicas */
	char n[4][8] = {"p0", "p1", "p2", "p3"};
	struct hpa_pod pods[4];
	struct hpa_sample s[3];
	struct hpa_calc_cfg cfg = {{0.1, 0.1}, 120 * SEC, 10 * SEC, NOW};
	char err[128];
	int32_t replicas, util;
	int64_t raw;
	for (int i = 0; i < 4; i++)
		pods[i] = (struct hpa_pod){.name = n[i],
		                           .phase = HPA_POD_RUNNING,
		                           .has_ready = true,
		                           .ready = true,
		                           .ready_ltt = 1,
		                           .start = 1,
		                           .request = 1000};
	int64_t lv[3] = {100, 100, 100}; /* 10% each; p3 missing */
	for (int i = 0; i < 3; i++)
		s[i] = (struct hpa_sample){n[i], lv[i], NOW, 30 * SEC};
	assert_int_equal(hpa_resource_replicas(&cfg, pods, 4, s, 3, 4, 50, true, &replicas, &util,
	                                       &raw, err, sizeof(err)),
	                 0);
	/* first pass 10/50 = 0.2 (scale down); second pass with p3 at 100%: (300+1000)/4000 =
	 * 32% -> 0.64, ceil(0.64*4) = 3 */
	assert_int_equal(util, 10);
	assert_int_equal(replicas, 3);
	/* a scale-up with a missing pod: it counts 0%, which may reverse the direction */
	int64_t hot[3] = {900, 900, 900};
	for (int i = 0; i < 3; i++)
		s[i].value = hot[i];
	assert_int_equal(hpa_resource_replicas(&cfg, pods, 4, s, 3, 4, 50, true, &replicas, &util,
	                                       &raw, err, sizeof(err)),
	                 0);
	/* 90/50 = 1.8; second pass 2700/4000 = 67% -> 1.35 -> ceil(5.4) = 6 */
	assert_int_equal(replicas, 6);
}

static void t_errors(void **state)
{
	(void)state;
	struct hpa_calc_cfg cfg = {{0.1, 0.1}, 120 * SEC, 10 * SEC, NOW};
	char err[256];
	int32_t r, u;
	int64_t raw;
	assert_int_equal(hpa_resource_replicas(&cfg, NULL, 0, NULL, 0, 1, 50, true, &r, &u, &raw,
	                                       err, sizeof(err)),
	                 -EINVAL);
	assert_string_equal(err, "no pods returned by selector while calculating replica count");
	struct hpa_pod p = {.name = "a", .phase = HPA_POD_PENDING, .request = 100};
	struct hpa_sample s = {"a", 50, NOW, 30 * SEC};
	assert_int_equal(hpa_resource_replicas(&cfg, &p, 1, &s, 1, 1, 50, true, &r, &u, &raw, err,
	                                       sizeof(err)),
	                 -EINVAL);
	assert_string_equal(err,
	                    "did not receive metrics for targeted pods (pods might be unready)");
	p.phase = HPA_POD_RUNNING;
	p.has_ready = p.ready = true;
	p.start = p.ready_ltt = 1;
	p.request_err = "missing request for cpu in container c of Pod a";
	assert_int_equal(hpa_resource_replicas(&cfg, &p, 1, &s, 1, 1, 50, true, &r, &u, &raw, err,
	                                       sizeof(err)),
	                 -EINVAL);
	assert_string_equal(err, "missing request for cpu in container c of Pod a");
}

/* calcPlainMetricReplicas: upstream "scale up: pods metric" (levels 20000 10000 30000,
 * target 15000 -> 4 replicas, usage 20000) and "scale down: pods metric" */
static void t_plain(void **state)
{
	(void)state;
	char n[3][4] = {"a", "b", "c"};
	struct hpa_pod pods[3];
	struct hpa_sample s[3];
	struct hpa_calc_cfg cfg = {{0.1, 0.1}, 120 * SEC, 10 * SEC, NOW};
	char err[128];
	int32_t r;
	int64_t usage;
	int64_t up[3] = {20000, 10000, 30000};
	for (int i = 0; i < 3; i++) {
		pods[i] = (struct hpa_pod){.name = n[i],
		                           .phase = HPA_POD_RUNNING,
		                           .has_ready = true,
		                           .ready = true,
		                           .ready_ltt = 1,
		                           .start = 1};
		s[i] = (struct hpa_sample){n[i], up[i], NOW, 60 * SEC};
	}
	assert_int_equal(hpa_plain_replicas(&cfg, pods, 3, s, 3, 3, 15000, false, &r, &usage, err,
	                                    sizeof(err)),
	                 0);
	assert_int_equal(r, 4);
	assert_int_equal(usage, 20000);
	int64_t down[3] = {12000, 12000, 12000};
	for (int i = 0; i < 3; i++)
		s[i].value = down[i];
	assert_int_equal(hpa_plain_replicas(&cfg, pods, 3, s, 3, 3, 20000, false, &r, &usage, err,
	                                    sizeof(err)),
	                 0);
	assert_int_equal(r, 2); /* 0.6 * 3 = 1.8 -> 2 */
	/* per-pod external/object: usage 8000 over 3 replicas, target 2000 each: 4 */
	int64_t avg;
	assert_int_equal(hpa_per_pod_replicas(3, 8000, 2000, cfg.tol, &avg), 4);
	assert_int_equal(avg, 2667);
	assert_int_equal(hpa_usage_ratio_replicas(3, 1.05, cfg.tol, 3), 3); /* within tolerance */
	assert_int_equal(hpa_usage_ratio_replicas(3, 2.0, cfg.tol, 2), 4);  /* ready pods count */
	assert_int_equal(hpa_usage_ratio_replicas(0, 1.5, cfg.tol, 0), 2);  /* from zero */
}

static void t_convert_with_rules(void **state)
{
	(void)state;
	const char *reason, *msg;
	assert_int_equal(hpa_convert_with_rules(3, 10, 1, 20, &reason, &msg), 6);
	assert_string_equal(reason, "ScaleUpLimit");
	assert_int_equal(hpa_convert_with_rules(1, 10, 1, 20, &reason, &msg), 4);
	assert_int_equal(hpa_convert_with_rules(5, 30, 1, 8, &reason, &msg), 8);
	assert_string_equal(reason, "TooManyReplicas");
	assert_string_equal(msg,
	                    "the desired replica count is more than the maximum replica count");
	assert_int_equal(hpa_convert_with_rules(5, 1, 2, 8, &reason, &msg), 2);
	assert_string_equal(reason, "TooFewReplicas");
	assert_int_equal(hpa_convert_with_rules(5, 6, 2, 8, &reason, &msg), 6);
	assert_string_equal(reason, "DesiredWithinRange");
}

static struct hpa_rules rules(enum hpa_select sel, int32_t window, int n, ...)
{
	struct hpa_rules r = {.window_s = window, .select = sel, .n_policies = (size_t)n};
	va_list ap;
	va_start(ap, n);
	for (int i = 0; i < n; i++) {
		r.policies[i].type = (enum hpa_policy_type)va_arg(ap, int);
		r.policies[i].value = va_arg(ap, int32_t);
		r.policies[i].period_s = va_arg(ap, int32_t);
	}
	va_end(ap);
	return r;
}

/* calculateScaleUpLimitWithScalingRules / calculateScaleDownLimitWithBehaviors */
static void t_policies(void **state)
{
	(void)state;
	struct hpa_history h = {0};
	struct hpa_rules up =
	        rules(HPA_SELECT_MAX, 0, 2, HPA_POLICY_PODS, 4, 60, HPA_POLICY_PERCENT, 100, 60);
	assert_int_equal(hpa_scale_up_limit(&h, NOW, 3, &up), 7);
	up.select = HPA_SELECT_MIN;
	assert_int_equal(hpa_scale_up_limit(&h, NOW, 3, &up), 6);
	up.select = HPA_SELECT_DISABLED;
	assert_int_equal(hpa_scale_up_limit(&h, NOW, 3, &up), 3);
	struct hpa_rules down = rules(HPA_SELECT_MAX, 300, 1, HPA_POLICY_PERCENT, 50, 60);
	assert_int_equal(hpa_scale_down_limit(&h, NOW, 10, &down), 5);
	/* a scale-up of 2 stored 30 s ago counts inside a 60 s period, not a 15 s one */
	struct hpa_rules one = rules(HPA_SELECT_MAX, 0, 1, HPA_POLICY_PODS, 1, 60);
	assert_int_equal(hpa_store_scale_event(&h, NOW - 30 * SEC, true, &one, &down, 3, 5), 0);
	assert_int_equal(hpa_scale_up_limit(&h, NOW, 5, &one), 4); /* 5 - 2 + 1 */
	struct hpa_rules short_ = rules(HPA_SELECT_MAX, 0, 1, HPA_POLICY_PODS, 1, 15);
	assert_int_equal(hpa_scale_up_limit(&h, NOW, 5, &short_), 6);
	/* the behaviour normalisation holds the step: current 5, desired 9 -> 5 (limit 4 < 5) */
	struct hpa_cond able, lim;
	int32_t d = hpa_normalize_behavior(&h, NOW, &one, &down, 5, 9, 1, 10, &able, &lim);
	assert_int_equal(d, 5);
	assert_string_equal(lim.reason, "ScaleUpLimit");
	assert_string_equal(lim.status, "True");
	/* without a behaviour nothing is stored */
	struct hpa_history h2 = {0};
	assert_int_equal(hpa_store_scale_event(&h2, NOW, false, &one, &down, 1, 5), 0);
	assert_int_equal(h2.n_up, 0);
	hpa_history_free(&h);
}

/* stabilizeRecommendation (no behaviour): the highest recommendation inside the window wins
 * (ScaleDownStabilized) until it ages out */
static void t_stabilization(void **state)
{
	(void)state;
	struct hpa_history h = {0};
	struct hpa_cond able, lim;
	assert_int_equal(hpa_history_init(&h, 4, NOW), 0);
	int32_t d = hpa_normalize(&h, NOW + 1 * SEC, 300 * SEC, 4, 1, 1, 10, &able, &lim);
	assert_int_equal(d, 4);
	assert_string_equal(able.reason, "ScaleDownStabilized");
	d = hpa_normalize(&h, NOW + 301 * SEC, 300 * SEC, 4, 1, 1, 10, &able, &lim);
	assert_int_equal(d, 1);
	assert_string_equal(able.reason, "ReadyForNewScale");
	assert_string_equal(lim.reason, "DesiredWithinRange");
	assert_string_equal(lim.status, "False");
	hpa_history_free(&h);

	/* with behaviours: scaleUp window 60 s holds a rise to the lowest recent recommendation */
	struct hpa_rules up = rules(HPA_SELECT_MAX, 60, 1, HPA_POLICY_PERCENT, 100, 15);
	struct hpa_rules down = rules(HPA_SELECT_MAX, 0, 1, HPA_POLICY_PERCENT, 100, 15);
	assert_int_equal(hpa_history_init(&h, 3, NOW), 0);
	d = hpa_normalize_behavior(&h, NOW + SEC, &up, &down, 3, 6, 1, 10, &able, &lim);
	assert_int_equal(d, 3);
	assert_string_equal(able.reason, "ScaleUpStabilized");
	d = hpa_normalize_behavior(&h, NOW + 62 * SEC, &up, &down, 3, 6, 1, 10, &able, &lim);
	assert_int_equal(d, 6);
	hpa_history_free(&h);
}

/* Quantity.MilliValue and NewMilliQuantity(...).String() */
static void t_quantity(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		int64_t milli;
	} in[] = {{"100m", 100}, {"1", 1000},      {"1.5", 1500}, {"1Ki", 1024000},
	          {"0.0001", 1}, {"2e3", 2000000}, {"250u", 1},   {"10Mi", 10485760000LL}};
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		int64_t v = -1;
		assert_int_equal(hpa_qty_milli(in[i].in, &v), 0);
		assert_int_equal(v, in[i].milli);
	}
	int64_t v;
	assert_int_equal(hpa_qty_milli("abc", &v), -EINVAL);
	assert_int_equal(hpa_qty_milli("", &v), -EINVAL);
	char buf[64];
	hpa_qty_format_milli(200, false, buf, sizeof(buf));
	assert_string_equal(buf, "200m");
	hpa_qty_format_milli(2000, false, buf, sizeof(buf));
	assert_string_equal(buf, "2");
	hpa_qty_format_milli(5000000, false, buf, sizeof(buf));
	assert_string_equal(buf, "5k");
	hpa_qty_format_milli(0, false, buf, sizeof(buf));
	assert_string_equal(buf, "0");
	hpa_qty_format_milli(10485760000LL, true, buf, sizeof(buf));
	assert_string_equal(buf, "10Mi");
	hpa_qty_format_milli(1536000, true, buf, sizeof(buf));
	assert_string_equal(buf, "1536");
	hpa_qty_format_milli(1500, true, buf, sizeof(buf));
	assert_string_equal(buf, "1500m");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(t_replica_calc),
	        cmocka_unit_test(t_missing_metrics),
	        cmocka_unit_test(t_errors),
	        cmocka_unit_test(t_plain),
	        cmocka_unit_test(t_convert_with_rules),
	        cmocka_unit_test(t_policies),
	        cmocka_unit_test(t_stabilization),
	        cmocka_unit_test(t_quantity),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
