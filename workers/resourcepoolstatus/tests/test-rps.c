/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ResourcePoolStatusRequest controller's status computation (workers/resourcepoolstatus/
 * rps.h), with the cases of upstream's controller_test.go (v1.37.2): TestCalculatePoolStatus,
 * TestCalculatePoolStatus_DeviceCounts, _PartitionSummary, _ShareableSummary,
 * TestSyncRequestRequeuesIncompletePool and TestSyncRequestWritesStructuralViewError (as the
 * computation's incomplete flag and validationError), TestSkipProcessedRequest (rps_has_status),
 * TestIsOlderThan and TestShouldDeleteRequest; and views_test.go's TestComputePartitionSummary,
 * _MultiCounterSet, TestComputePoolViews_Hybrid, TestComputeShareableSummary (+_MultipleCapacities,
 * _NoShareableDevices), TestComputePoolViews_PartitionAttributeGatesView,
 * TestResolveDevicePartitions and TestResolvePartitionType, run through whole pools (kcmd's views
 * take the pool's JSON, not upstream's deviceRecord). TestCleanupExpiredRequests is the e2e
 * suite's (it needs the apiserver's DELETE).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workers/resourcepoolstatus/rps.h"

#define DRV "test.example.com"
#define GPU "gpu.example.com"
#define NOW "2026-12-07T18:00:00Z"

/* JSON with ' for " */
static cJSON *J(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	assert_true(vasprintf(&s, fmt, ap) > 0);
	va_end(ap);
	for (char *p = s; *p; p++)
		if (*p == '\'')
			*p = '"';
	cJSON *j = cJSON_Parse(s);
	if (!j)
		fail_msg("bad fixture: %s", s);
	free(s);
	return j;
}

/* makeSliceWithGenerationAndCount; node NULL: makeSliceWithoutNode. taint_n devices carry a taint
 * of effect taint (makeSliceWithTaintedDevices). */
static cJSON *slice_t(const char *driver, const char *pool, const char *node, int n, long gen,
                      long count, int taint_n, const char *taint)
{
	char devs[4096] = "", nn[128] = "";
	size_t l = 0;

	for (int i = 0; i < n; i++) {
		char tt[128] = "";
		if (i < taint_n)
			snprintf(tt, sizeof(tt),
			         ",'taints':[{'key':'example.com/maintenance','effect':'%s'}]",
			         taint);
		l += (size_t)snprintf(devs + l, sizeof(devs) - l, "%s{'name':'device-%d'%s}",
		                      i ? "," : "", i, tt);
	}
	if (node)
		snprintf(nn, sizeof(nn), "'nodeName':'%s',", node);
	return J("{'metadata':{'name':'s'},'spec':{'driver':'%s',%s'pool':{'name':'%s',"
	         "'generation':%ld,'resourceSliceCount':%ld},'devices':[%s]}}",
	         driver, nn, pool, gen, count, devs);
}

static cJSON *slice(const char *driver, const char *pool, const char *node, int n)
{
	return slice_t(driver, pool, node, n, 1, 1, 0, NULL);
}

/* makeAllocatedClaim; extra: more fields of the result ("" none) */
static cJSON *claim(const char *driver, const char *pool, const char *device, const char *extra)
{
	return J("{'metadata':{'name':'c','namespace':'default'},'spec':{},'status':{'allocation':"
	         "{'devices':{'results':[{'request':'r','driver':'%s','pool':'%s','device':'%s'%s}]"
	         "}}}}",
	         driver, pool, device, extra);
}

static cJSON *request(const char *driver, const char *extra)
{
	return J("{'metadata':{'name':'test-request'},'spec':{'driver':'%s'%s}}", driver, extra);
}

struct fx {
	cJSON *req;
	cJSON *slices[8], *claims[8], *rules[4];
	size_t ns, nc, nr;
	bool rules_on;
	cJSON *st;
	bool incomplete;
};

static void run(struct fx *f)
{
	struct rps_input in = {.request = f->req,
	                       .slices = (const cJSON *const *)f->slices,
	                       .n_slices = f->ns,
	                       .claims = (const cJSON *const *)f->claims,
	                       .n_claims = f->nc,
	                       .rules = (const cJSON *const *)f->rules,
	                       .n_rules = f->nr,
	                       .rules_enabled = f->rules_on,
	                       .now = NOW};
	assert_int_equal(rps_calculate(&in, &f->st, &f->incomplete), 0);
	assert_non_null(f->st);
}

static void fx_free(struct fx *f)
{
	cJSON_Delete(f->req);
	for (size_t i = 0; i < f->ns; i++)
		cJSON_Delete(f->slices[i]);
	for (size_t i = 0; i < f->nc; i++)
		cJSON_Delete(f->claims[i]);
	for (size_t i = 0; i < f->nr; i++)
		cJSON_Delete(f->rules[i]);
	cJSON_Delete(f->st);
	memset(f, 0, sizeof(*f));
}

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* an int32 pointer field: -1 when nil (derefInt32) */
static int geti(const cJSON *o, const char *k)
{
	const cJSON *v = get(o, k);
	return cJSON_IsNumber(v) ? v->valueint : -1;
}

static const char *gets(const cJSON *o, const char *k)
{
	return cJSON_GetStringValue(get(o, k));
}

static const cJSON *pools(const struct fx *f)
{
	return get(f->st, "pools");
}

static const cJSON *pool(const struct fx *f, int i)
{
	return cJSON_GetArrayItem(pools(f), i);
}

/* ---- TestCalculatePoolStatus ---------------------------------------------------------------- */
struct calc_case {
	const char *name;
	int n_pools, total, alloc, pool_count; /* pool_count 0: not checked */
	bool truncated;
	bool check_node;
	const char *node; /* NULL: no nodeName */
	int incomplete;   /* -1: not checked */
};

static void check_calc(struct fx *f, const struct calc_case *c)
{
	run(f);
	const cJSON *p;
	int n = cJSON_GetArraySize(pools(f)), total = 0, alloc = 0, bad = 0;

	assert_int_equal(n, c->n_pools);
	if (c->pool_count)
		assert_int_equal(geti(f->st, "poolCount"), c->pool_count);
	if (c->truncated)
		assert_true(n < geti(f->st, "poolCount"));
	cJSON_ArrayForEach(p, pools(f))
	{
		if (geti(p, "totalDevices") >= 0)
			total += geti(p, "totalDevices");
		if (geti(p, "allocatedDevices") >= 0)
			alloc += geti(p, "allocatedDevices");
		if (get(p, "validationError")) {
			bad++;
			assert_int_equal(geti(p, "totalDevices"), -1);
			assert_int_equal(geti(p, "allocatedDevices"), -1);
			assert_int_equal(geti(p, "resourceSliceCount"), -1);
		}
	}
	if (c->n_pools > 0 && !c->truncated) {
		assert_int_equal(total, c->total);
		assert_int_equal(alloc, c->alloc);
	}
	if (c->check_node && n == 1) {
		if (c->node)
			assert_string_equal(gets(pool(f, 0), "nodeName") ?: "(nil)", c->node);
		else
			assert_null(get(pool(f, 0), "nodeName"));
	}
	if (c->incomplete >= 0)
		assert_int_equal(bad, c->incomplete);
	assert_int_equal(cJSON_GetArraySize(get(f->st, "conditions")), 1);
	fx_free(f);
}

static void test_calculate_pool_status(void **state)
{
	(void)state;
	struct fx f = {0};

	/* single-pool-no-allocations */
	f = (struct fx){
	        .req = request(DRV, ""), .slices = {slice(DRV, "pool-1", "node-1", 4)}, .ns = 1};
	check_calc(&f,
	           &(struct calc_case){"single-pool-no-allocations", 1, 4, 0, 0, .incomplete = -1});
	/* single-pool-with-allocations */
	f = (struct fx){.req = request(DRV, ""),
	                .slices = {slice(DRV, "pool-1", "node-1", 4)},
	                .ns = 1,
	                .claims = {claim(DRV, "pool-1", "device-0", ""),
	                           claim(DRV, "pool-1", "device-1", "")},
	                .nc = 2};
	check_calc(&f, &(struct calc_case){"with-allocations", 1, 4, 2, 0, .incomplete = -1});
	/* multiple-pools */
	f = (struct fx){
	        .req = request(DRV, ""),
	        .slices = {slice(DRV, "pool-1", "node-1", 4), slice(DRV, "pool-2", "node-2", 8)},
	        .ns = 2};
	check_calc(&f, &(struct calc_case){"multiple-pools", 2, 12, 0, 0, .incomplete = -1});
	/* filter-by-driver */
	f = (struct fx){.req = request(DRV, ""),
	                .slices = {slice(DRV, "pool-1", "node-1", 4),
	                           slice("other.example.com", "pool-2", "node-2", 8)},
	                .ns = 2};
	check_calc(&f, &(struct calc_case){"filter-by-driver", 1, 4, 0, 0, .incomplete = -1});
	/* filter-by-pool-name */
	f = (struct fx){
	        .req = request(DRV, ",'poolName':'pool-1'"),
	        .slices = {slice(DRV, "pool-1", "node-1", 4), slice(DRV, "pool-2", "node-2", 8)},
	        .ns = 2};
	check_calc(&f, &(struct calc_case){"filter-by-pool-name", 1, 4, 0, 0, .incomplete = -1});
	/* multiple-slices-same-pool (resourceSliceCount 1 each, as upstream's fixture) */
	f = (struct fx){
	        .req = request(DRV, ""),
	        .slices = {slice(DRV, "pool-1", "node-1", 4), slice(DRV, "pool-1", "node-1", 4)},
	        .ns = 2};
	check_calc(&f, &(struct calc_case){"same-pool", 1, 8, 0, 0, .incomplete = -1});
	/* limit-pools */
	f = (struct fx){
	        .req = request(DRV, ",'limit':1"),
	        .slices = {slice(DRV, "pool-1", "node-1", 4), slice(DRV, "pool-2", "node-2", 8)},
	        .ns = 2};
	check_calc(&f, &(struct calc_case){"limit-pools", 1, 0, 0, 2, true, .incomplete = -1});
	/* no-matching-pools */
	f = (struct fx){.req = request("nonexistent.example.com", ""),
	                .slices = {slice(DRV, "pool-1", "node-1", 4)},
	                .ns = 1};
	check_calc(&f, &(struct calc_case){"no-matching-pools", 0, 0, 0, 0, .incomplete = -1});
	/* older-generation-slices-ignored */
	f = (struct fx){.req = request(DRV, ""),
	                .slices = {slice_t(DRV, "pool-1", "node-1", 8, 1, 1, 0, NULL),
	                           slice_t(DRV, "pool-1", "node-1", 4, 2, 1, 0, NULL),
	                           slice_t(DRV, "pool-1", "node-1", 4, 2, 1, 0, NULL)},
	                .ns = 3};
	check_calc(&f, &(struct calc_case){"older-generation", 1, 8, 0, 0, .incomplete = -1});
	/* incomplete-pool-has-validation-error */
	f = (struct fx){.req = request(DRV, ""),
	                .slices = {slice_t(DRV, "pool-1", "node-1", 4, 1, 5, 0, NULL),
	                           slice_t(DRV, "pool-1", "node-1", 4, 1, 5, 0, NULL),
	                           slice_t(DRV, "pool-1", "node-1", 4, 1, 5, 0, NULL)},
	                .ns = 3};
	check_calc(&f, &(struct calc_case){"incomplete", 1, 0, 0, 0, .incomplete = 1});
	/* mix-of-complete-and-incomplete-pools */
	f = (struct fx){.req = request(DRV, ""),
	                .slices = {slice_t(DRV, "pool-1", "node-1", 4, 1, 1, 0, NULL),
	                           slice_t(DRV, "pool-2", "node-2", 4, 1, 3, 0, NULL),
	                           slice_t(DRV, "pool-2", "node-2", 4, 1, 3, 0, NULL)},
	                .ns = 3};
	check_calc(&f, &(struct calc_case){"mix", 2, 4, 0, 0, .incomplete = 1});
	/* same-node-pool-sets-nodename */
	f = (struct fx){
	        .req = request(DRV, ""),
	        .slices = {slice(DRV, "pool-1", "node-1", 4), slice(DRV, "pool-1", "node-1", 4)},
	        .ns = 2};
	check_calc(&f, &(struct calc_case){"same-node", 1, 8, 0, 0, false, true, "node-1", -1});
	/* mixed-node-pool-clears-nodename */
	f = (struct fx){
	        .req = request(DRV, ""),
	        .slices = {slice(DRV, "pool-1", "node-1", 4), slice(DRV, "pool-1", "node-2", 4)},
	        .ns = 2};
	check_calc(&f, &(struct calc_case){"mixed-node", 1, 8, 0, 0, false, true, NULL, -1});
	/* nil-nodename-slices-no-nodename */
	f = (struct fx){.req = request(DRV, ""),
	                .slices = {slice(DRV, "pool-1", NULL, 4), slice(DRV, "pool-1", NULL, 4)},
	                .ns = 2};
	check_calc(&f, &(struct calc_case){"nil-node", 1, 8, 0, 0, false, true, NULL, -1});
	/* all-pools-complete-no-validation-errors */
	f = (struct fx){.req = request(DRV, ""),
	                .slices = {slice_t(DRV, "pool-1", "node-1", 4, 1, 2, 0, NULL),
	                           slice_t(DRV, "pool-1", "node-1", 4, 1, 2, 0, NULL)},
	                .ns = 2};
	check_calc(&f, &(struct calc_case){"all-complete", 1, 8, 0, 0, .incomplete = 0});
}

/* The whole status of one case, field by field as upstream's struct serializes: the condition,
 * the incomplete message and the sort order. */
static void test_status_shape(void **state)
{
	(void)state;
	struct fx f = {.req = request(DRV, ""),
	               .slices = {slice_t(DRV, "pool-b", "node-1", 2, 3, 1, 0, NULL),
	                          slice_t(DRV, "pool-a", "node-1", 4, 1, 2, 0, NULL)},
	               .ns = 2};
	run(&f);
	const cJSON *c = cJSON_GetArrayItem(get(f.st, "conditions"), 0);
	assert_string_equal(gets(c, "type"), "Complete");
	assert_string_equal(gets(c, "status"), "True");
	assert_string_equal(gets(c, "reason"), "CalculationComplete");
	assert_string_equal(gets(c, "lastTransitionTime"), NOW);
	assert_string_equal(gets(c, "message"), "Calculated status for 2 pools (1 incomplete)");
	assert_string_equal(gets(pool(&f, 0), "poolName"), "pool-a");
	assert_string_equal(gets(pool(&f, 0), "validationError"),
	                    "PoolIncomplete: pool test.example.com/pool-a is incomplete: observed "
	                    "1/2 slices at generation 1");
	assert_true(f.incomplete);
	assert_string_equal(gets(pool(&f, 1), "poolName"), "pool-b");
	assert_string_equal(gets(pool(&f, 1), "driver"), DRV);
	assert_int_equal(geti(pool(&f, 1), "generation"), 3);
	assert_int_equal(geti(pool(&f, 1), "resourceSliceCount"), 1);
	assert_int_equal(geti(pool(&f, 1), "totalDevices"), 2);
	assert_int_equal(geti(pool(&f, 1), "availableDevices"), 2);
	assert_int_equal(geti(pool(&f, 1), "unavailableDevices"), 0);
	assert_string_equal(gets(pool(&f, 1), "nodeName"), "node-1");
	assert_null(get(pool(&f, 1), "partitionSummary"));
	assert_null(get(pool(&f, 1), "shareableSummary"));
	fx_free(&f);

	/* no pool: poolCount 0, no pools list, the plain message */
	f = (struct fx){.req = request(DRV, "")};
	run(&f);
	assert_int_equal(geti(f.st, "poolCount"), 0);
	assert_null(get(f.st, "pools"));
	assert_false(f.incomplete);
	assert_string_equal(gets(cJSON_GetArrayItem(get(f.st, "conditions"), 0), "message"),
	                    "Calculated status for 0 pools");
	fx_free(&f);

	/* an incomplete pool cut by the limit does not requeue (the check runs on the kept pools)
	 */
	f = (struct fx){.req = request(DRV, ",'limit':1"),
	                .slices = {slice_t(DRV, "pool-b", NULL, 1, 1, 2, 0, NULL),
	                           slice(DRV, "pool-a", NULL, 1)},
	                .ns = 2};
	run(&f);
	assert_false(f.incomplete);
	assert_int_equal(geti(f.st, "poolCount"), 2);
	fx_free(&f);

	/* errorStatus */
	cJSON *e = rps_error_status("Failed to list ResourceSlices: boom", NOW);
	assert_int_equal(geti(e, "poolCount"), 0);
	c = cJSON_GetArrayItem(get(e, "conditions"), 0);
	assert_string_equal(gets(c, "type"), "Failed");
	assert_string_equal(gets(c, "reason"), "CalculationFailed");
	assert_string_equal(gets(c, "message"), "Failed to list ResourceSlices: boom");
	cJSON_Delete(e);
}

/* ---- TestCalculatePoolStatus_DeviceCounts --------------------------------------------------- */
static void counts(struct fx *f, int total, int alloc, int avail, int unavail)
{
	run(f);
	assert_int_equal(cJSON_GetArraySize(pools(f)), 1);
	assert_int_equal(geti(pool(f, 0), "totalDevices"), total);
	assert_int_equal(geti(pool(f, 0), "allocatedDevices"), alloc);
	assert_int_equal(geti(pool(f, 0), "availableDevices"), avail);
	assert_int_equal(geti(pool(f, 0), "unavailableDevices"), unavail);
	fx_free(f);
}

static cJSON *rule(const char *effect)
{
	return J("{'metadata':{'name':'rule-1'},'spec':{'deviceSelector':{'driver':'%s','pool':"
	         "'pool-1','device':'device-0'},'taint':{'key':'example.com/maintenance',"
	         "'effect':'%s'}}}",
	         DRV, effect);
}

static void test_device_counts(void **state)
{
	(void)state;
	struct fx f;

	/* repeated claims on one device count once */
	f = (struct fx){.req = request(DRV, ""),
	                .slices = {slice(DRV, "pool-1", "node-1", 4)},
	                .ns = 1,
	                .claims = {claim(DRV, "pool-1", "device-0", ""),
	                           claim(DRV, "pool-1", "device-0", ""),
	                           claim(DRV, "pool-1", "device-0", "")},
	                .nc = 3};
	counts(&f, 4, 1, 3, 0);
	/* adminAccess claim is not an allocation */
	f = (struct fx){.req = request(DRV, ""),
	                .slices = {slice(DRV, "pool-1", "node-1", 4)},
	                .ns = 1,
	                .claims = {claim(DRV, "pool-1", "device-0", ""),
	                           claim(DRV, "pool-1", "device-1", ",'adminAccess':true")},
	                .nc = 2};
	counts(&f, 4, 1, 3, 0);
	/* noSchedule / noExecute taints are unavailable, None is not */
	f = (struct fx){.req = request(DRV, ""),
	                .slices = {slice_t(DRV, "pool-1", "node-1", 5, 1, 1, 2, "NoSchedule")},
	                .ns = 1};
	counts(&f, 5, 0, 3, 2);
	f = (struct fx){.req = request(DRV, ""),
	                .slices = {slice_t(DRV, "pool-1", "node-1", 5, 1, 1, 2, "NoExecute")},
	                .ns = 1};
	counts(&f, 5, 0, 3, 2);
	f = (struct fx){.req = request(DRV, ""),
	                .slices = {slice_t(DRV, "pool-1", "node-1", 5, 1, 1, 2, "None")},
	                .ns = 1};
	counts(&f, 5, 0, 5, 0);
	/* taint rule applies when the gate is enabled, is ignored when it is disabled */
	f = (struct fx){.req = request(DRV, ""),
	                .slices = {slice(DRV, "pool-1", "node-1", 4)},
	                .ns = 1,
	                .rules = {rule("NoSchedule")},
	                .nr = 1,
	                .rules_on = true};
	counts(&f, 4, 0, 3, 1);
	f = (struct fx){.req = request(DRV, ""),
	                .slices = {slice(DRV, "pool-1", "node-1", 4)},
	                .ns = 1,
	                .rules = {rule("NoSchedule")},
	                .nr = 1};
	counts(&f, 4, 0, 4, 0);
	/* kcmd's: a None rule, a rule without selector, a rule for another device do nothing; an
	 * allocated tainted device is counted in both (available clamps at 0) */
	f = (struct fx){
	        .req = request(DRV, ""),
	        .slices = {slice(DRV, "pool-1", "node-1", 2)},
	        .ns = 1,
	        .rules = {rule("None"), J("{'spec':{'taint':{'key':'k','effect':'NoExecute'}}}"),
	                  J("{'spec':{'deviceSelector':{'device':'device-9'},'taint':{'key':"
	                    "'k','effect':'NoExecute'}}}")},
	        .nr = 3,
	        .rules_on = true};
	counts(&f, 2, 0, 2, 0);
	f = (struct fx){
	        .req = request(DRV, ""),
	        .slices = {slice_t(DRV, "pool-1", "node-1", 1, 1, 1, 1, "NoSchedule")},
	        .ns = 1,
	        .claims = {claim(DRV, "pool-1", "device-0", ""), claim(DRV, "pool-1", "ghost", "")},
	        .nc = 2};
	counts(&f, 1, 2, 0, 1);
}

/* ---- partition and shareable views ---------------------------------------------------------- */
#define PDEV(n, prof, cost)                                                                        \
	"{'name':'" n "','attributes':{'profile':{'string':'" prof "'}},'consumesCounters':"       \
	"[{'counterSet':'gpu-0','counters':{'memory':{'value':'" cost "'}}}]}"

/* makePartitionCounterSlice / makePartitionDeviceSlice / makePartitionClassSlice */
static cJSON *pslice(const char *what, bool declare, long count)
{
	char attr[128] = "";
	const char *body;

	if (!strcmp(what, "counters"))
		body = "'sharedCounters':[{'name':'gpu-0','counters':{'memory':{'value':'80Gi'}}}]";
	else if (!strcmp(what, "devices"))
		body = "'devices':[" PDEV("full-0", "Full", "80Gi") "," PDEV(
		        "half-0", "Half", "40Gi") "," PDEV("half-1", "Half", "40Gi") "]";
	else
		body = "'devices':[{'name':'a-0','attributes':{'class':{'string':'A'}},"
		       "'consumesCounters':[{'counterSet':'gpu-0','counters':{'memory':{'value':"
		       "'40Gi'}}}]}]";
	if (declare)
		snprintf(attr, sizeof(attr), "'partitionTypeAttribute':'" GPU "/%s',",
		         !strcmp(what, "class") ? "class" : "profile");
	return J("{'spec':{'driver':'" GPU "','nodeName':'node-0',%s'pool':{'name':'pool-0',"
	         "'generation':1,'resourceSliceCount':%ld},%s}}",
	         attr, count, body);
}

/* partitionSummary as "attr|type=total/allocatable;..." */
static void summary(const cJSON *p, char *buf, size_t n)
{
	const cJSON *e;
	size_t l = 0;

	buf[0] = 0;
	cJSON_ArrayForEach(e, get(p, "partitionSummary"))
	{
		l += (size_t)snprintf(buf + l, n - l, "%s|%s=%d/%d;", gets(e, "attribute") ?: "",
		                      gets(e, "type") ?: "", geti(e, "total"),
		                      geti(e, "allocatable"));
	}
}

static void test_partition_summary(void **state)
{
	(void)state;
	char buf[512];
	struct {
		bool declare, mixed;
		const char *req;
		const char *want;
	} cases[] = {
	        /* pool declares the attribute */
	        {true, false, "", GPU "/profile|Full=1/1;" GPU "/profile|Half=2/2;"},
	        /* pool declaration beats the request default */
	        {true, false, ",'defaultPartitionTypeAttribute':'" GPU "/other'",
	         GPU "/profile|Full=1/1;" GPU "/profile|Half=2/2;"},
	        /* request default applies when the pool declares none */
	        {false, false, ",'defaultPartitionTypeAttribute':'" GPU "/profile'",
	         GPU "/profile|Full=1/1;" GPU "/profile|Half=2/2;"},
	        /* pool mixes two grouping attributes */
	        {true, true, "",
	         GPU "/class|A=1/1;" GPU "/profile|Full=1/1;" GPU "/profile|Half=2/2;"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		long count = cases[i].mixed ? 3 : 2;
		struct fx f = {.req = request(GPU, cases[i].req),
		               .slices = {pslice("counters", cases[i].declare, count),
		                          pslice("devices", cases[i].declare, count)},
		               .ns = 2};
		if (cases[i].mixed)
			f.slices[f.ns++] = pslice("class", true, count);
		run(&f);
		assert_int_equal(cJSON_GetArraySize(pools(&f)), 1);
		assert_null(get(pool(&f, 0), "validationError"));
		summary(pool(&f, 0), buf, sizeof(buf));
		assert_string_equal(buf, cases[i].want);
		fx_free(&f);
	}
}

/* one complete pool from a slice whose body is given; claims in use by name */
static struct fx view_fx(const char *body, const char *const *in_use)
{
	struct fx f = {.req = request(GPU, "")};
	f.slices[f.ns++] = J("{'spec':{'driver':'" GPU "','pool':{'name':'pool-0','generation':1,"
	                     "'resourceSliceCount':1},%s}}",
	                     body);
	for (; in_use && *in_use; in_use++)
		f.claims[f.nc++] = claim(GPU, "pool-0", *in_use, "");
	return f;
}

#define SC(set, v) "{'name':'" set "','counters':{'memory':{'value':'" v "'}}}"

static void view_case(const char *body, const char *const *in_use, const char *want,
                      const char *err_prefix)
{
	char buf[512];
	struct fx f = view_fx(body, in_use);

	run(&f);
	const char *ve = gets(pool(&f, 0), "validationError");
	if (err_prefix) {
		assert_non_null(ve);
		assert_true(!strncmp(ve, err_prefix, strlen(err_prefix)));
		assert_null(get(pool(&f, 0), "partitionSummary"));
		/* the basic counts stay valid */
		assert_true(geti(pool(&f, 0), "totalDevices") >= 0);
		/* a structural error is written, not retried */
		assert_false(f.incomplete);
	} else {
		assert_null(ve);
		summary(pool(&f, 0), buf, sizeof(buf));
		assert_string_equal(buf, want);
	}
	fx_free(&f);
}

#define PA "'partitionTypeAttribute':'" GPU "/profile',"

static void test_compute_partition_summary(void **state)
{
	(void)state;
	const char *none[] = {NULL}, *full0[] = {"full-0", NULL};
	const char *devs = "'devices':[" PDEV("full-0", "Full", "80Gi") "," PDEV(
	        "half-0", "Half", "40Gi") "," PDEV("half-1", "Half", "40Gi") "]";
	char body[2048];

	/* all-fresh-independent-per-type */
	snprintf(body, sizeof(body), PA "'sharedCounters':[" SC("gpu-0", "80Gi") "],%s", devs);
	view_case(body, none, GPU "/profile|Full=1/1;" GPU "/profile|Half=2/2;", NULL);
	/* in-use-full-consumes-counter */
	view_case(body, full0, GPU "/profile|Full=1/0;" GPU "/profile|Half=2/0;", NULL);
	/* fresh-device-clamp-binds-before-counter */
	view_case(PA "'sharedCounters':[" SC("gpu-1",
	                                     "800Gi") "],'devices':[{'name':'full-0',"
	                                              "'attributes':{'profile':{'string':'Full'}},'"
	                                              "consumesCounters':[{'counterSet':"
	                                              "'gpu-1','counters':{'memory':{'value':'80Gi'"
	                                              "}}}]},{'name':'full-1','attributes':"
	                                              "{'profile':{'string':'Full'}},'"
	                                              "consumesCounters':[{'counterSet':'gpu-1',"
	                                              "'counters':{'memory':{'value':'80Gi'}}}]},{'"
	                                              "name':'full-2','attributes':"
	                                              "{'profile':{'string':'Full'}},'"
	                                              "consumesCounters':[{'counterSet':'gpu-1',"
	                                              "'counters':{'memory':{'value':'80Gi'}}}]}]",
	          none, GPU "/profile|Full=3/3;", NULL);
	/* missing-attribute */
	view_case(PA "'sharedCounters':[" SC("gpu-0", "80Gi") "],'devices':[" PDEV(
	                  "full-0", "Full", "80Gi") ",{'name':'mystery','consumesCounters':[{"
	                                            "'counterSet':'gpu-0','counters':{'memory':{"
	                                            "'value':'40Gi'}}}]}]",
	          none, NULL, "PartitionTypeMissing:");
	/* cost-mismatch-within-type (and 40Gi vs 40960Mi is no mismatch: canonical text) */
	view_case(PA "'sharedCounters':[" SC("gpu-0", "80Gi") "],'devices':[" PDEV(
	                  "half-0", "Half", "40Gi") "," PDEV("half-1", "Half", "50Gi") "]",
	          none, NULL, "PartitionCostMismatch:");
	view_case(PA "'sharedCounters':[" SC("gpu-0", "80Gi") "],'devices':[" PDEV(
	                  "half-0", "Half", "40Gi") "," PDEV("half-1", "Half", "40960Mi") "]",
	          none, GPU "/profile|Half=2/2;", NULL);
	/* MultiCounterSet: bound by the sm counter */
	view_case(PA
	          "'sharedCounters':[{'name':'mem','counters':{'memory':{'value':'160Gi'}}},"
	          "{'name':'cores','counters':{'sm':{'value':'8'}}}],'devices':["
	          "{'name':'full-0','attributes':{'profile':{'string':'Full'}},'consumesCounters':"
	          "[{'counterSet':'mem','counters':{'memory':{'value':'80Gi'}}},{'counterSet':"
	          "'cores','counters':{'sm':{'value':'8'}}}]},"
	          "{'name':'full-1','attributes':{'profile':{'string':'Full'}},'consumesCounters':"
	          "[{'counterSet':'mem','counters':{'memory':{'value':'80Gi'}}},{'counterSet':"
	          "'cores','counters':{'sm':{'value':'8'}}}]}]",
	          none, GPU "/profile|Full=2/1;", NULL);
	/* PartitionAttributeGatesView: a pool that declares no attribute has no partition view;
	 * one that declares it without sharedCounters is flagged */
	view_case("'sharedCounters':[" SC("gpu-0", "80Gi") "],'devices':[" PDEV("d0", "Full",
	                                                                        "10Gi") "]",
	          none, "", NULL);
	view_case(PA "'devices':[" PDEV("d0", "Full", "10Gi") "]", none, NULL,
	          "PartitionTypeMissing:");
	/* ResolvePartitionType: the explicit domain wins over the bare name; a non-string
	 * attribute is missing */
	view_case(PA "'sharedCounters':[" SC(
	                  "gpu-0", "80Gi") "],'devices':[{'name':'d0',"
	                                   "'attributes':{'profile':{'string':'bare'},'" GPU
	                                   "/profile':{'string':"
	                                   "'explicit'}},'consumesCounters':[{'counterSet':'gpu-0',"
	                                   "'counters':{'memory':"
	                                   "{'value':'10Gi'}}}]}]",
	          none, GPU "/profile|explicit=1/1;", NULL);
	view_case(PA "'sharedCounters':[" SC("gpu-0",
	                                     "80Gi") "],'devices':[{'name':'d0',"
	                                             "'attributes':{'profile':{'int':3}},'"
	                                             "consumesCounters':[{'counterSet':'gpu-0',"
	                                             "'counters':{'memory':{'value':'10Gi'}}}]}]",
	          none, NULL, "PartitionTypeMissing:");
	/* a device consuming a counter set the pool does not publish never fits */
	view_case(PA "'sharedCounters':[" SC(
	                  "gpu-0", "80Gi") "],'devices':[{'name':'d0',"
	                                   "'attributes':{'profile':{'string':'X'}},'"
	                                   "consumesCounters':[{'counterSet':"
	                                   "'nope','counters':{'memory':{'value':'1'}}}]}]",
	          none, GPU "/profile|X=1/0;", NULL);
}

static void test_partition_over_cap(void **state)
{
	(void)state;
	char body[16384];
	size_t l = (size_t)snprintf(body, sizeof(body),
	                            PA "'sharedCounters':[" SC("gpu-0", "1") "],"
	                                                                     "'devices':[");
	for (int i = 0; i < 33; i++)
		l += (size_t)snprintf(
		        body + l, sizeof(body) - l,
		        "%s{'name':'d%d','attributes':{'profile':{'string':'t%02d'}},"
		        "'consumesCounters':[{'counterSet':'gpu-0','counters':{'memory':"
		        "{'value':'1'}}}]}",
		        i ? "," : "", i, i);
	snprintf(body + l, sizeof(body) - l, "]");
	view_case(body, (const char *[]){NULL}, NULL, "PartitionSummaryOverCap:");
}

static void test_shareable_summary(void **state)
{
	(void)state;
	struct fx f;
	const cJSON *sh, *c;

	/* TestCalculatePoolStatus_ShareableSummary: single and multiple capacities */
	f = view_fx("'devices':[{'name':'device-0','allowMultipleAllocations':true,'capacity':"
	            "{'memory':{'value':'40Gi'},'cores':{'value':'8'}}}]",
	            NULL);
	f.claims[f.nc++] = claim(GPU, "pool-0", "device-0",
	                         ",'consumedCapacity':{'memory':'10Gi','cores':'2'}");
	run(&f);
	sh = get(pool(&f, 0), "shareableSummary");
	assert_non_null(sh);
	assert_int_equal(geti(sh, "fullyAvailableDevices"), 0);
	assert_int_equal(geti(sh, "partiallyAvailableDevices"), 1);
	c = get(sh, "capacity");
	assert_int_equal(cJSON_GetArraySize(c), 2);
	/* sorted by name */
	assert_string_equal(gets(cJSON_GetArrayItem(c, 0), "name"), "cores");
	assert_string_equal(gets(cJSON_GetArrayItem(c, 0), "total"), "8");
	assert_string_equal(gets(cJSON_GetArrayItem(c, 0), "consumed"), "2");
	assert_string_equal(gets(cJSON_GetArrayItem(c, 0), "available"), "6");
	assert_string_equal(gets(cJSON_GetArrayItem(c, 1), "name"), "memory");
	assert_string_equal(gets(cJSON_GetArrayItem(c, 1), "total"), "40Gi");
	assert_string_equal(gets(cJSON_GetArrayItem(c, 1), "consumed"), "10Gi");
	assert_string_equal(gets(cJSON_GetArrayItem(c, 1), "available"), "30Gi");
	fx_free(&f);

	/* TestComputeShareableSummary: two shareable devices, one in use, one plain; capacity
	 * summed over both; over-consumption clamps available to 0 */
	f = view_fx("'devices':[{'name':'shareable-0','allowMultipleAllocations':true,'capacity':"
	            "{'memory':{'value':'40Gi'}}},{'name':'shareable-1','allowMultipleAllocations':"
	            "true,'capacity':{'memory':{'value':'40Gi'}}},{'name':'plain'}]",
	            NULL);
	f.claims[f.nc++] =
	        claim(GPU, "pool-0", "shareable-0", ",'consumedCapacity':{'memory':'10Gi'}");
	f.claims[f.nc++] =
	        claim(GPU, "pool-0", "shareable-0", ",'consumedCapacity':{'memory':'5Gi'}");
	f.claims[f.nc++] = claim(GPU, "pool-0", "shareable-0",
	                         ",'adminAccess':true,'consumedCapacity':{'memory':'50Gi'}");
	run(&f);
	sh = get(pool(&f, 0), "shareableSummary");
	assert_int_equal(geti(sh, "fullyAvailableDevices"), 1);
	assert_int_equal(geti(sh, "partiallyAvailableDevices"), 1);
	c = cJSON_GetArrayItem(get(sh, "capacity"), 0);
	assert_string_equal(gets(c, "total"), "80Gi");
	assert_string_equal(gets(c, "consumed"), "15Gi");
	assert_string_equal(gets(c, "available"), "65Gi");
	assert_int_equal(geti(pool(&f, 0), "allocatedDevices"), 1);
	fx_free(&f);

	f = view_fx("'devices':[{'name':'s','allowMultipleAllocations':true,'capacity':{'memory':"
	            "{'value':'1Gi'}}}]",
	            NULL);
	f.claims[f.nc++] = claim(GPU, "pool-0", "s", ",'consumedCapacity':{'memory':'2Gi'}");
	run(&f);
	c = cJSON_GetArrayItem(get(get(pool(&f, 0), "shareableSummary"), "capacity"), 0);
	assert_string_equal(gets(c, "available"), "0");
	fx_free(&f);

	/* NoShareableDevices */
	f = view_fx("'devices':[{'name':'plain'}]", NULL);
	run(&f);
	assert_null(get(pool(&f, 0), "shareableSummary"));
	fx_free(&f);

	/* Hybrid: a partition device that is also shareable has both views */
	f = view_fx(PA "'sharedCounters':[" SC(
	                    "gpu-0", "80Gi") "],'devices':[{'name':'full-0',"
	                                     "'attributes':{'profile':{'string':'Full'}},'"
	                                     "consumesCounters':[{'counterSet':"
	                                     "'gpu-0','counters':{'memory':{'value':'80Gi'}}}],'"
	                                     "allowMultipleAllocations':"
	                                     "true,'capacity':{'memory':{'value':'80Gi'}}}]",
	            NULL);
	run(&f);
	assert_null(get(pool(&f, 0), "validationError"));
	assert_int_equal(cJSON_GetArraySize(get(pool(&f, 0), "partitionSummary")), 1);
	assert_int_equal(geti(get(pool(&f, 0), "shareableSummary"), "fullyAvailableDevices"), 1);
	fx_free(&f);
}

/* ---- TestSkipProcessedRequest, TestIsOlderThan, TestShouldDeleteRequest --------------------- */
static kube_time_t t_of(const char *s)
{
	kube_time_t t;
	assert_int_equal(kube_time_parse(s, strlen(s), &t), 0);
	return t;
}

static void test_ttl(void **state)
{
	(void)state;
	kube_time_t now = t_of("2026-12-07T18:00:00Z");
	struct {
		const char *json;
		bool del;
	} cases[] = {
	        /* completed-request-not-expired / expired (condition time + 1h) */
	        {"{'metadata':{'creationTimestamp':'2026-12-01T00:00:00Z'},'status':{'conditions':"
	         "[{'type':'Complete','lastTransitionTime':'2026-12-07T17:30:00Z'}]}}",
	         false},
	        {"{'metadata':{'creationTimestamp':'2026-12-07T17:59:00Z'},'status':{'conditions':"
	         "[{'type':'Complete','lastTransitionTime':'2026-12-07T16:30:00Z'}]}}",
	         true},
	        {"{'status':{'conditions':[{'type':'Failed','lastTransitionTime':"
	         "'2026-12-07T16:59:59Z'}]}}",
	         true},
	        /* exactly at the TTL: not older (strictly greater) */
	        {"{'status':{'conditions':[{'type':'Complete','lastTransitionTime':"
	         "'2026-12-07T17:00:00Z'}]}}",
	         false},
	        /* pending-request-not-expired / expired (creation + 24h) */
	        {"{'metadata':{'creationTimestamp':'2026-12-07T00:00:00Z'},'spec':{}}", false},
	        {"{'metadata':{'creationTimestamp':'2026-12-06T17:00:00Z'},'spec':{}}", true},
	        /* status without a Complete/Failed condition: creation + 1h */
	        {"{'metadata':{'creationTimestamp':'2026-12-07T16:00:00Z'},'status':{}}", true},
	        {"{'metadata':{'creationTimestamp':'2026-12-07T17:30:00Z'},'status':{}}", false},
	        /* zero-time-is-not-older */
	        {"{'metadata':{},'spec':{}}", false},
	        {"{'status':{'conditions':[{'type':'Complete'}]}}", false},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *r = J("%s", cases[i].json);
		if (rps_should_delete(r, now) != cases[i].del)
			fail_msg("case %zu: %s: want %d", i, cases[i].json, cases[i].del);
		cJSON_Delete(r);
	}
	cJSON *r = J("{'spec':{},'status':null}");
	assert_false(rps_has_status(r));
	cJSON_Delete(r);
	r = J("{'spec':{},'status':{'poolCount':0}}");
	assert_true(rps_has_status(r));
	cJSON_Delete(r);
}

/* bad input never crashes: wrong types read as absent */
static void test_bad_input(void **state)
{
	(void)state;
	struct fx f = {.req = J("{'spec':{'driver':7,'limit':-3}}"),
	               .slices = {J("[]"), J("{'spec':{'driver':'','devices':'x','pool':5}}"),
	                          J("{'spec':{'driver':'','pool':{'name':'p'},'devices':[1,{}],"
	                            "'sharedCounters':{},'partitionTypeAttribute':3}}")},
	               .ns = 3,
	               .claims = {J("{'status':{'allocation':{'devices':{'results':[5,{'driver':''"
	                            ",'pool':'p','consumedCapacity':{'m':'garbage'}}]}}}}")},
	               .nc = 1};
	run(&f);
	/* pools "" (a slice without pool name) and "p", as Go's zero values would */
	assert_int_equal(geti(f.st, "poolCount"), 2);
	assert_null(get(f.st, "pools")); /* limit < 0 shows none */
	fx_free(&f);

	char q[64];
	assert_string_equal(rps_quote("a\"b\\c\n\x01", q, sizeof(q)), "\"a\\\"b\\\\c\\n\\x01\"");
	assert_string_equal(rps_quote("abcdef", q, 4), "\"ab");
}

/* the validationError is cut to 256 bytes */
static void test_message_truncated(void **state)
{
	(void)state;
	char pool_name[300];
	memset(pool_name, 'p', 250);
	pool_name[250] = 0;
	struct fx f = {.req = request(DRV, "")};
	f.slices[f.ns++] = slice_t(DRV, pool_name, NULL, 1, 1, 2, 0, NULL);
	run(&f);
	assert_int_equal(strlen(gets(pool(&f, 0), "validationError")), 256);
	fx_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_calculate_pool_status),
	        cmocka_unit_test(test_status_shape),
	        cmocka_unit_test(test_device_counts),
	        cmocka_unit_test(test_partition_summary),
	        cmocka_unit_test(test_compute_partition_summary),
	        cmocka_unit_test(test_partition_over_cap),
	        cmocka_unit_test(test_shareable_summary),
	        cmocka_unit_test(test_ttl),
	        cmocka_unit_test(test_bad_input),
	        cmocka_unit_test(test_message_truncated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
