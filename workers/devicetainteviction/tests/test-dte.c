/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The device-taint-eviction-controller's decisions (workers/devicetainteviction/dte.h) with
 * cases of upstream's device_taint_eviction_test.go (v1.37) TestController, as the claim's
 * and pod's eviction computed from slices and rules: tainted-claim-through-resourceslice,
 * tainted-claim-through-rule, untainted-claim, evict-pod-later, evict-pod-toleration-mismatch,
 * no-evict-pod-toleration-forever, evict-pod-partial-toleration, evict-pod-many-taints,
 * no-evict-other-device, ignore-none-effect, ignore-unknown-effect,
 * cancel-eviction-remove-taint-in-new-slice (pool generations), no-evict-resourceclaim-
 * deallocated, multiple-claims (the merge); plus ToleratesTaint's operators, the
 * DisruptionTarget patch and the DeviceTaintRule condition texts (maybeUpdateRuleStatus).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workers/devicetainteviction/dte.h"

#define T0   "2026-01-01T00:00:00Z"
#define NSEC 1000000000LL

static kube_time_t t0(void)
{
	kube_time_t t;
	assert_int_equal(kube_time_parse(T0, strlen(T0), &t), 0);
	return t;
}

/* a slice of driver "d", pool "p" at generation gen with one device "dev" and its taints */
static cJSON *slice(const char *name, int gen, const char *dev, const char *taints)
{
	char js[2048];
	snprintf(js, sizeof(js),
	         "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"driver\":\"d\",\"pool\":{\"name\":"
	         "\"p\","
	         "\"generation\":%d,\"resourceSliceCount\":1},\"devices\":[{\"name\":\"%s\","
	         "\"taints\":[%s]}]}}",
	         name, gen, dev, taints);
	cJSON *c = cJSON_Parse(js);
	assert_non_null(c);
	return c;
}

static cJSON *rule(const char *name, const char *effect, const char *device)
{
	char js[1024];
	snprintf(js, sizeof(js),
	         "{\"metadata\":{\"name\":\"%s\",\"uid\":\"uid-%s\"},\"spec\":{\"deviceSelector\":"
	         "{\"driver\":\"d\",\"device\":\"%s\"},\"taint\":{\"key\":\"rk\",\"value\":\"rv\","
	         "\"effect\":\"%s\",\"timeAdded\":\"" T0 "\"}}}",
	         name, name, device, effect);
	cJSON *c = cJSON_Parse(js);
	assert_non_null(c);
	return c;
}

/* a claim allocated device "dev" of d/p with the given tolerations, reserved for pod uid-1 */
static cJSON *claim(const char *dev, const char *tolerations)
{
	char js[2048];
	snprintf(js, sizeof(js),
	         "{\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\"},\"status\":{\"allocation\":"
	         "{\"devices\":{\"results\":[{\"request\":\"r\",\"driver\":\"d\",\"pool\":\"p\","
	         "\"device\":\"%s\",\"tolerations\":[%s]}]}},\"reservedFor\":[{\"resource\":"
	         "\"pods\",\"name\":\"pod\",\"uid\":\"uid-1\"}]}}",
	         dev, tolerations);
	cJSON *c = cJSON_Parse(js);
	assert_non_null(c);
	return c;
}

#define TAINT(effect)                                                                              \
	"{\"key\":\"k\",\"value\":\"v\",\"effect\":\"" effect "\",\"timeAdded\":\"" T0 "\"}"
#define TOL(secs) "{\"key\":\"k\",\"operator\":\"Exists\",\"effect\":\"NoExecute\"" secs "}"

/* claim eviction for one slice/rule set; returns r, *when */
static int eviction(cJSON **slices, size_t ns, cJSON **rules, size_t nr, const cJSON *c,
                    struct dte_eviction *e)
{
	struct dte_world w = {.slices = (const cJSON *const *)slices,
	                      .n_slices = ns,
	                      .rules = (const cJSON *const *)rules,
	                      .n_rules = nr};
	return dte_claim_eviction(&w, c, e);
}

static void test_slice_taint(void **state)
{
	(void)state;
	cJSON *s = slice("s1", 1, "dev", TAINT("NoExecute"));
	cJSON *c = claim("dev", "");
	struct dte_eviction e;

	assert_int_equal(eviction(&s, 1, NULL, 0, c, &e), 1);
	assert_int_equal(e.when, t0());
	assert_int_equal(e.n_reasons, 1);
	assert_false(e.reasons[0].rule);
	assert_string_equal(e.reasons[0].device, "dev");
	assert_int_equal(e.reasons[0].index, 0);
	dte_eviction_free(&e);
	/* untainted-claim / no-evict-other-device */
	cJSON *c2 = claim("other", "");
	assert_int_equal(eviction(&s, 1, NULL, 0, c2, &e), 0);
	cJSON_Delete(c2);
	/* no-evict-resourceclaim-deallocated */
	cJSON_DeleteItemFromObject(cJSON_GetObjectItem(c, "status"), "allocation");
	assert_int_equal(eviction(&s, 1, NULL, 0, c, &e), 0);
	cJSON_Delete(c);
	cJSON_Delete(s);
}

static void test_effects(void **state)
{
	(void)state;
	/* ignore-none-effect, ignore-unknown-effect, NoSchedule */
	const char *effects[] = {TAINT("None"), TAINT("NoSchedule"), TAINT("Whatever")};
	for (size_t i = 0; i < 3; i++) {
		cJSON *s = slice("s1", 1, "dev", effects[i]);
		cJSON *c = claim("dev", "");
		struct dte_eviction e;
		assert_int_equal(eviction(&s, 1, NULL, 0, c, &e), 0);
		cJSON_Delete(c);
		cJSON_Delete(s);
	}
}

static void test_tolerations(void **state)
{
	(void)state;
	cJSON *s = slice("s1", 1, "dev", TAINT("NoExecute"));
	struct dte_eviction e;

	/* evict-pod-later: tolerationSeconds delays */
	cJSON *c = claim("dev", TOL(",\"tolerationSeconds\":60"));
	assert_int_equal(eviction(&s, 1, NULL, 0, c, &e), 1);
	assert_int_equal(e.when, t0() + 60 * NSEC);
	dte_eviction_free(&e);
	cJSON_Delete(c);
	/* the smallest of several matching tolerations; negative counts as 0 */
	c = claim("dev", TOL(",\"tolerationSeconds\":60") "," TOL(",\"tolerationSeconds\":30"));
	assert_int_equal(eviction(&s, 1, NULL, 0, c, &e), 1);
	assert_int_equal(e.when, t0() + 30 * NSEC);
	dte_eviction_free(&e);
	cJSON_Delete(c);
	c = claim("dev", TOL(",\"tolerationSeconds\":-5"));
	assert_int_equal(eviction(&s, 1, NULL, 0, c, &e), 1);
	assert_int_equal(e.when, t0());
	dte_eviction_free(&e);
	cJSON_Delete(c);
	/* no-evict-pod-toleration-forever */
	c = claim("dev", TOL(""));
	assert_int_equal(eviction(&s, 1, NULL, 0, c, &e), 0);
	cJSON_Delete(c);
	/* evict-pod-toleration-mismatch: another key, or a NoSchedule toleration */
	c = claim("dev", "{\"key\":\"other\",\"operator\":\"Exists\",\"effect\":\"NoExecute\"},"
	                 "{\"key\":\"k\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}");
	assert_int_equal(eviction(&s, 1, NULL, 0, c, &e), 1);
	assert_int_equal(e.when, t0());
	dte_eviction_free(&e);
	cJSON_Delete(c);
	cJSON_Delete(s);
	/* evict-pod-partial-toleration / many taints: one tolerated forever, one not */
	s = slice("s1", 1, "dev",
	          TAINT("NoExecute") ",{\"key\":\"k2\",\"value\":\"v\",\"effect\":\"NoExecute\","
	                             "\"timeAdded\":\"" T0 "\"}");
	c = claim("dev", TOL(""));
	assert_int_equal(eviction(&s, 1, NULL, 0, c, &e), 1);
	assert_int_equal(e.n_reasons, 1);
	assert_int_equal(e.reasons[0].index, 1);
	dte_eviction_free(&e);
	cJSON_Delete(c);
	cJSON_Delete(s);
}

static void test_rules(void **state)
{
	(void)state;
	cJSON *r[2] = {rule("b-rule", "NoExecute", "dev"), rule("a-rule", "None", "dev")};
	cJSON *s = slice("s1", 1, "dev", TAINT("NoExecute"));
	cJSON *c = claim("dev", "");
	struct dte_eviction e;

	/* tainted-claim-through-rule: the None rule does not evict */
	assert_int_equal(eviction(NULL, 0, r, 2, c, &e), 1);
	assert_int_equal(e.n_reasons, 1);
	assert_true(e.reasons[0].rule);
	assert_string_equal(e.reasons[0].name, "b-rule");
	assert_string_equal(e.reasons[0].uid, "uid-b-rule");
	dte_eviction_free(&e);
	/* a None rule simulated as NoExecute (its status); rules sort before slice taints */
	struct dte_world w = {.slices = (const cJSON *const *)&s,
	                      .n_slices = 1,
	                      .rules = (const cJSON *const *)r,
	                      .n_rules = 2,
	                      .simulate_rule = "a-rule"};
	assert_int_equal(dte_claim_eviction(&w, c, &e), 1);
	assert_int_equal(e.n_reasons, 3);
	assert_string_equal(e.reasons[0].name, "a-rule");
	assert_string_equal(e.reasons[1].name, "b-rule");
	assert_false(e.reasons[2].rule);
	dte_eviction_free(&e);
	/* a rule for another device, a rule without a selector */
	cJSON *o = rule("o", "NoExecute", "other");
	assert_int_equal(eviction(NULL, 0, &o, 1, c, &e), 0);
	cJSON_DeleteItemFromObject(cJSON_GetObjectItem(o, "spec"), "deviceSelector");
	assert_false(dte_rule_matches(o, "d", "p", "dev"));
	cJSON_Delete(o);
	cJSON_Delete(c);
	cJSON_Delete(s);
	cJSON_Delete(r[0]);
	cJSON_Delete(r[1]);
}

static void test_generations(void **state)
{
	(void)state;
	/* cancel-eviction-remove-taint-in-new-slice: the newest generation hides the old one */
	cJSON *s[2] = {slice("s1", 1, "dev", TAINT("NoExecute")), slice("s2", 2, "dev", "")};
	cJSON *c = claim("dev", "");
	struct dte_eviction e;

	assert_int_equal(eviction(s, 2, NULL, 0, c, &e), 0);
	assert_int_equal(eviction(s, 1, NULL, 0, c, &e), 1);
	dte_eviction_free(&e);
	cJSON_Delete(c);
	cJSON_Delete(s[0]);
	cJSON_Delete(s[1]);
}

static void test_merge(void **state)
{
	(void)state;
	/* multiple claims: the earliest time, the union of reasons */
	cJSON *s = slice("s1", 1, "dev", TAINT("NoExecute"));
	cJSON *r = rule("rule", "NoExecute", "dev");
	cJSON *c1 = claim("dev", TOL(",\"tolerationSeconds\":100"));
	cJSON *c2 = claim("dev", "{\"key\":\"rk\",\"operator\":\"Exists\",\"effect\":"
	                         "\"NoExecute\",\"tolerationSeconds\":10}");
	struct dte_eviction a = {0}, e;

	assert_int_equal(eviction(&s, 1, NULL, 0, c1, &e), 1);
	assert_int_equal(dte_eviction_merge(&a, &e), 0);
	dte_eviction_free(&e);
	assert_int_equal(eviction(NULL, 0, &r, 1, c2, &e), 1);
	assert_int_equal(dte_eviction_merge(&a, &e), 0);
	dte_eviction_free(&e);
	assert_int_equal(a.when, t0() + 10 * NSEC);
	assert_int_equal(a.n_reasons, 2);
	assert_true(a.reasons[0].rule);
	assert_true(dte_claim_reserved_for_pod(c1, "uid-1"));
	assert_false(dte_claim_reserved_for_pod(c1, "uid-2"));
	dte_eviction_free(&a);
	cJSON_Delete(c1);
	cJSON_Delete(c2);
	cJSON_Delete(r);
	cJSON_Delete(s);
}

static void test_tolerates(void **state)
{
	(void)state;
	cJSON *t = cJSON_Parse(TAINT("NoExecute"));
	struct {
		const char *tol;
		bool want;
	} cases[] = {
	        {"{\"operator\":\"Exists\"}", true},
	        {"{\"key\":\"k\",\"value\":\"v\"}", true},
	        {"{\"key\":\"k\",\"operator\":\"Equal\",\"value\":\"x\"}", false},
	        {"{\"key\":\"k\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}", false},
	        {"{\"key\":\"x\",\"operator\":\"Exists\"}", false},
	        {"{\"key\":\"k\",\"operator\":\"Bogus\"}", false},
	        {"{\"value\":\"v\"}", true},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *tol = cJSON_Parse(cases[i].tol);
		assert_int_equal(dte_tolerates(tol, t), cases[i].want);
		cJSON_Delete(tol);
	}
	cJSON_Delete(t);
}

static void test_condition_patch(void **state)
{
	(void)state;
	char *body = NULL;
	const char *pod = "{\"metadata\":{\"uid\":\"u\"},\"status\":{}}";

	assert_int_equal(dte_condition_patch(pod, strlen(pod), t0(), &body), 1);
	assert_non_null(strstr(body, "\"reason\":\"DeletionByDeviceTaintManager\""));
	assert_non_null(strstr(body, "\"message\":\"Device Taint manager: deleting due to "
	                             "NoExecute taint\""));
	assert_non_null(strstr(body, "\"uid\":\"u\""));
	assert_non_null(strstr(body, "\"lastTransitionTime\":\"" T0 "\""));
	free(body);
	const char *done =
	        "{\"metadata\":{\"uid\":\"u\"},\"status\":{\"conditions\":[{\"type\":"
	        "\"DisruptionTarget\",\"status\":\"True\",\"reason\":"
	        "\"DeletionByDeviceTaintManager\",\"message\":\"Device Taint manager: "
	        "deleting due to NoExecute taint\",\"lastTransitionTime\":\"" T0 "\"}]}}";
	assert_int_equal(dte_condition_patch(done, strlen(done), t0() + NSEC, &body), 0);
	assert_null(body);
	assert_int_equal(dte_condition_patch("[", 1, t0(), &body), -EBADMSG);
}

static void test_rule_condition(void **state)
{
	(void)state;
	const char *st, *re;
	char m[512];

	dte_rule_condition("NoExecute", 1, 1, 0, 0, 0, &st, &re, m, sizeof(m));
	assert_string_equal(st, "True");
	assert_string_equal(re, "PodsPendingEviction");
	assert_string_equal(m, "1 pod needs to be evicted in 1 namespace.");
	dte_rule_condition("NoExecute", 3, 2, 1, 0, 0, &st, &re, m, sizeof(m));
	assert_string_equal(m, "3 pods need to be evicted in 2 different namespaces. 1 pod evicted "
	                       "since starting the controller.");
	dte_rule_condition("NoExecute", 0, 0, 2, 0, 0, &st, &re, m, sizeof(m));
	assert_string_equal(st, "False");
	assert_string_equal(re, "Completed");
	assert_string_equal(m, "2 pods evicted since starting the controller.");
	dte_rule_condition("NoExecute", 0, 0, 0, 0, 0, &st, &re, m, sizeof(m));
	assert_string_equal(re, "NotStarted");
	assert_string_equal(m, "");
	dte_rule_condition("None", 1, 1, 0, 2, 1, &st, &re, m, sizeof(m));
	assert_string_equal(re, "NoEffect");
	assert_string_equal(m, "2 published devices selected. 1 allocated device selected. 1 pod "
	                       "would be evicted in 1 namespace if the effect was NoExecute. This "
	                       "information will not be updated again. Recreate the "
	                       "DeviceTaintRule to trigger an update.");
	dte_rule_condition("NoSchedule", 0, 0, 0, 0, 0, &st, &re, m, sizeof(m));
	assert_string_equal(re, "OtherEffect");
	assert_string_equal(m, "Eviction only happens for the NoExecute effect.");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_slice_taint),    cmocka_unit_test(test_effects),
	        cmocka_unit_test(test_tolerations),    cmocka_unit_test(test_rules),
	        cmocka_unit_test(test_generations),    cmocka_unit_test(test_merge),
	        cmocka_unit_test(test_tolerates),      cmocka_unit_test(test_condition_patch),
	        cmocka_unit_test(test_rule_condition),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
