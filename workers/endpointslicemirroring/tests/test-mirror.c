/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The mirroring reconciler (workers/endpointslicemirroring/mirror.h) on the cases of upstream's
 * pkg/controller/endpointslicemirroring (v1.37.2): reconciler_test.go TestReconcile (each case by
 * its name: the number of writes and of slices after them, the slices' endpoints, labels and
 * annotations), reconciler_helpers_test.go TestRecycleSlices, utils_test.go TestNewEndpointSlice
 * and TestAddressToEndpoint, endpointslicemirroring_controller_test.go TestShouldMirror; and
 * RepackSubsets' canonical form (pkg/api/v1/endpoints) as the reconciler sees it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workers/endpointslicemirroring/mirror.h"

static cJSON *parse(const char *s)
{
	cJSON *j = cJSON_Parse(s);
	if (!j)
		fail_msg("bad JSON: %s", s);
	return j;
}

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* the test's Endpoints "test-ep" in "test": extra metadata (JSON members) and subsets */
static cJSON *endpoints(const char *meta, const char *subsets)
{
	char buf[8192];
	snprintf(buf, sizeof(buf),
	         "{\"metadata\":{\"name\":\"test-ep\",\"namespace\":\"test\",\"uid\":\"%s\"%s%s},"
	         "\"subsets\":%s}",
	         "d8f2c1f6-5285-4b3c-b3c1-9b89f9e7ed7a", meta ? "," : "", meta ? meta : "",
	         subsets);
	return parse(buf);
}

/* an existing mirrored slice: its labels as the test sets them (service name, managed-by) */
static cJSON *slice(const char *name, const char *meta, const char *at, const char *ports,
                    const char *eps)
{
	char buf[8192];
	snprintf(buf, sizeof(buf),
	         "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"test\",\"uid\":\"u-%s\","
	         "\"generation\":1,\"labels\":{\"kubernetes.io/service-name\":\"test-ep\","
	         "\"endpointslice.kubernetes.io/managed-by\":"
	         "\"endpointslicemirroring-controller.k8s.io\"}%s%s},"
	         "\"addressType\":\"%s\",\"ports\":%s,\"endpoints\":%s}",
	         name, name, meta ? "," : "", meta ? meta : "", at, ports, eps ? eps : "[]");
	return parse(buf);
}

#define P_HTTP             "{\"name\":\"http\",\"port\":80,\"protocol\":\"TCP\"}"
#define P_HTTPS_UDP        "{\"name\":\"https\",\"port\":443,\"protocol\":\"UDP\"}"
#define P_3000             "{\"name\":\"http\",\"port\":3000,\"protocol\":\"TCP\"}"
#define P_3001             "{\"name\":\"https\",\"port\":3001,\"protocol\":\"UDP\"}"
#define A(ip, host)        "{\"ip\":\"" ip "\",\"hostname\":\"" host "\"}"
#define AN(ip, host, node) "{\"ip\":\"" ip "\",\"hostname\":\"" host "\",\"nodeName\":\"" node "\"}"
#define S_2PORTS_2ADDR                                                                             \
	"{\"ports\":[" P_HTTP "," P_HTTPS_UDP "],\"addresses\":[" AN(                              \
	        "10.0.0.1", "pod-1", "node-1") "," AN("10.0.0.2", "pod-2", "node-2") "]}"
#define S_3000_3ADDR                                                                               \
	"{\"ports\":[" P_3000 "," P_3001                                                           \
	"],\"addresses\":[" AN("10.0.1.1", "pod-11", "node-1") "," AN(                             \
	        "10.0.1.2", "pod-12", "node-2") "," AN("10.0.1.3", "pod-13", "node-3") "]}"

struct outcome {
	int creates, updates, deletes, keeps;
	int slices; /* after the writes */
};

static struct outcome run(cJSON *ep, cJSON **slices, size_t n, int max, struct esm_plan *p)
{
	struct outcome o = {0};
	assert_int_equal(esm_reconcile(ep, (const cJSON *const *)slices, n, max, p), 0);
	for (size_t i = 0; i < p->n; i++) {
		o.creates += p->v[i].op == ESM_CREATE;
		o.updates += p->v[i].op == ESM_UPDATE;
		o.deletes += p->v[i].op == ESM_DELETE;
		o.keeps += p->v[i].op == ESM_KEEP;
	}
	o.slices = (int)n + o.creates - o.deletes;
	return o;
}

static int writes(struct outcome o)
{
	return o.creates + o.updates + o.deletes;
}

/* the written slices must each be upstream's expectEndpointSlices shape */
static void check_written(const cJSON *ep, const struct esm_plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		const cJSON *s = p->v[i].obj, *md = get(s, "metadata");
		if (p->v[i].op != ESM_CREATE && p->v[i].op != ESM_UPDATE)
			continue;
		assert_string_equal(
		        get(get(md, "labels"), "kubernetes.io/service-name")->valuestring,
		        "test-ep");
		assert_string_equal(get(get(md, "labels"), "endpointslice.kubernetes.io/managed-by")
		                            ->valuestring,
		                    ESM_MANAGED_BY);
		const cJSON *ref = cJSON_GetArrayItem(get(md, "ownerReferences"), 0);
		assert_string_equal(get(ref, "kind")->valuestring, "Endpoints");
		assert_string_equal(get(ref, "name")->valuestring, "test-ep");
		assert_string_equal(get(ref, "uid")->valuestring,
		                    get(get(ep, "metadata"), "uid")->valuestring);
		assert_true(cJSON_IsTrue(get(ref, "controller")));
		const cJSON *ann = get(md, "annotations");
		assert_null(get(ann, ESM_ANN_APPLIED));
		assert_null(get(ann, ESM_ANN_TRIGGER));
		if (p->v[i].op == ESM_CREATE)
			assert_string_equal(get(md, "generateName")->valuestring, "test-ep-");
	}
}

static void free_all(cJSON *ep, cJSON **s, size_t n, struct esm_plan *p)
{
	cJSON_Delete(ep);
	for (size_t i = 0; i < n; i++)
		cJSON_Delete(s[i]);
	esm_plan_free(p);
}

/* one TestReconcile case: endpoints, existing slices, max, expected writes and slices */
static void reconcile_case(const char *name, const char *meta, const char *subsets,
                           const char *const *existing, int max, int want_writes, int want_slices)
{
	cJSON *ep = endpoints(meta, subsets), *s[8];
	size_t n = 0;
	struct esm_plan p = {0};
	for (; existing && existing[n]; n++)
		s[n] = parse(existing[n]);
	struct outcome o = run(ep, s, n, max, &p);
	if (writes(o) != want_writes || o.slices != want_slices)
		fail_msg("%s: %d writes (want %d), %d slices (want %d)", name, writes(o),
		         want_writes, o.slices, want_slices);
	check_written(ep, &p);
	free_all(ep, s, n, &p);
}

#define EXISTING_META                                                                              \
	"\"labels\":{\"kubernetes.io/service-name\":\"test-ep\","                                  \
	"\"endpointslice.kubernetes.io/managed-by\":\"endpointslicemirroring-controller.k8s.io\"}"
#define SLICE(extra, at, ports, eps)                                                               \
	"{\"metadata\":{\"name\":\"test-ep-1\",\"namespace\":\"test\"," EXISTING_META extra "},"   \
	"\"addressType\":\"" at "\",\"ports\":" ports ",\"endpoints\":" eps "}"

static void test_reconcile_cases(void **state)
{
	(void)state;
	reconcile_case("Endpoints with no subsets", NULL, "[]", NULL, 1000, 0, 0);
	reconcile_case("Endpoints with no addresses", NULL, "[{\"ports\":[" P_HTTP "]}]", NULL,
	               1000, 0, 0);
	reconcile_case("Endpoints with 1 subset, port, and address", NULL,
	               "[{\"ports\":[" P_HTTP
	               "],\"addresses\":[" AN("10.0.0.1", "pod-1", "node-1") "]}]",
	               NULL, 1000, 1, 1);
	reconcile_case("Endpoints with 2 subset, different port and address", NULL,
	               "[{\"ports\":[" P_HTTP "],\"addresses\":[" A(
	                       "10.0.0.1", "pod-1") "]},"
	                                            "{\"ports\":[{\"name\":\"https\",\"port\":443,"
	                                            "\"protocol\":\"TCP\"}],"
	                                            "\"addresses\":[" A("10.0.0.2", "pod-2") "]}]",
	               NULL, 1000, 2, 2);
	reconcile_case("Endpoints with 2 subset, different port and same address", NULL,
	               "[{\"ports\":[" P_HTTP "],\"addresses\":[" A(
	                       "10.0.0.1", "pod-1") "]},"
	                                            "{\"ports\":[{\"name\":\"https\",\"port\":443,"
	                                            "\"protocol\":\"TCP\"}],"
	                                            "\"addresses\":[" A("10.0.0.1", "pod-1") "]}]",
	               NULL, 1000, 1, 1);
	reconcile_case("Endpoints with 2 subset, different address and same port", NULL,
	               "[{\"ports\":[" P_HTTP "],\"addresses\":[" A(
	                       "10.0.0.1", "pod-1") "]},"
	                                            "{\"ports\":[" P_HTTP "],\"addresses\":[" A(
	                                                    "10.0.0.2", "pod-2") "]}]",
	               NULL, 1000, 1, 1);
	reconcile_case("Endpoints with 1 subset, port, and address, pending deletion",
	               "\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"",
	               "[{\"ports\":[" P_HTTP "],\"addresses\":[" A("10.0.0.1", "pod-1") "]}]",
	               NULL, 1000, 0, 0);
	const char *same[] = {
	        SLICE(",\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Endpoints\","
	              "\"name\":\"test-ep\",\"uid\":\"d8f2c1f6-5285-4b3c-b3c1-9b89f9e7ed7a\"}]",
	              "IPv4", "[" P_HTTP "]",
	              "[{\"addresses\":[\"10.0.0.1\"],\"hostname\":\"pod-1\","
	              "\"conditions\":{\"ready\":true}}]"),
	        NULL};
	reconcile_case("... existing slice with same fields", NULL,
	               "[{\"ports\":[" P_HTTP "],\"addresses\":[" A("10.0.0.1", "pod-1") "]}]",
	               same, 1000, 0, 1);
	const char *other_owner[] = {
	        SLICE(",\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Endpoints\","
	              "\"name\":\"test-ep\",\"uid\":\"fb91e798-1875-4857-b5eb-e2c878157b4d\"}]",
	              "IPv4", "[" P_HTTP "]",
	              "[{\"addresses\":[\"10.0.0.1\"],\"hostname\":\"pod-1\","
	              "\"conditions\":{\"ready\":true}}]"),
	        NULL};
	reconcile_case("... same fields but different OwnerReferences", NULL,
	               "[{\"ports\":[" P_HTTP "],\"addresses\":[" A("10.0.0.1", "pod-1") "]}]",
	               other_owner, 1000, 1, 1);
	const char *extra_ann[] = {SLICE(",\"annotations\":{\"foo\":\"bar\"}", "IPv4",
	                                 "[" P_HTTP "]",
	                                 "[{\"addresses\":[\"10.0.0.1\"],\"hostname\":\"pod-1\","
	                                 "\"conditions\":{\"ready\":true}}]"),
	                           NULL};
	reconcile_case("... existing slice with an additional annotation", NULL,
	               "[{\"ports\":[" P_HTTP "],\"addresses\":[" A("10.0.0.1", "pod-1") "]}]",
	               extra_ann, 1000, 1, 1);
	reconcile_case(
	        "... port, label and address and existing slice with same fields but the label",
	        "\"labels\":{\"foo\":\"bar\"}",
	        "[{\"ports\":[" P_HTTP "],\"addresses\":[" A("10.0.0.1", "pod-1") "]}]", extra_ann,
	        1000, 1, 1);
	reconcile_case("Endpoints with 1 subset, 2 ports, and 2 addresses", NULL,
	               "[" S_2PORTS_2ADDR "]", NULL, 1000, 1, 1);
	reconcile_case("Endpoints with 1 subset, 2 ports, and 2 not ready addresses", NULL,
	               "[{\"ports\":[" P_HTTP "," P_HTTPS_UDP
	               "],\"notReadyAddresses\":[" AN("10.0.0.1", "pod-1", "node-1") "," AN(
	                       "10.0.0.2", "pod-2", "node-2") "]}]",
	               NULL, 1000, 1, 1);
	reconcile_case("Endpoints with 2 subsets, multiple ports and addresses", NULL,
	               "[" S_2PORTS_2ADDR "," S_3000_3ADDR "]", NULL, 1000, 2, 2);
	const char *empty[] = {SLICE("", "IPv4", "[" P_HTTP "," P_HTTPS_UDP "]", "[]"), NULL};
	reconcile_case("... existing empty EndpointSlice", NULL,
	               "[" S_2PORTS_2ADDR "," S_3000_3ADDR "]", empty, 1000, 2, 2);
	const char *some[] = {SLICE("", "IPv4", "[" P_HTTP "," P_HTTPS_UDP "]",
	                            "[{\"addresses\":[\"10.0.0.2\"],\"hostname\":\"pod-2\"},"
	                            "{\"addresses\":[\"10.0.0.1\",\"10.0.0.3\"],"
	                            "\"hostname\":\"pod-1\"}]"),
	                      NULL};
	reconcile_case("... existing EndpointSlice with some addresses", NULL,
	               "[" S_2PORTS_2ADDR "," S_3000_3ADDR "]", some, 1000, 2, 2);
	const char *ident[] = {SLICE("", "IPv4", "[" P_HTTP "," P_HTTPS_UDP "]",
	                             "[{\"addresses\":[\"10.0.0.1\"],\"hostname\":\"pod-1\","
	                             "\"nodeName\":\"node-1\",\"conditions\":{\"ready\":true}},"
	                             "{\"addresses\":[\"10.0.0.2\"],\"hostname\":\"pod-2\","
	                             "\"nodeName\":\"node-2\",\"conditions\":{\"ready\":true}}]"),
	                       NULL};
	reconcile_case("... existing EndpointSlice identical to subset", NULL,
	               "[" S_2PORTS_2ADDR "," S_3000_3ADDR "]", ident, 1000, 1, 2);
	reconcile_case("Endpoints with 2 subsets, multiple ports, and dual stack addresses", NULL,
	               "[{\"ports\":[" P_HTTP "," P_HTTPS_UDP "],\"addresses\":[" A(
	                       "10.0.0.1", "pod-1") "," A("2001:db8:2222:3333:4444:5555:6666:7777",
	                                                  "pod-2") "]}," S_3000_3ADDR "]",
	               NULL, 1000, 3, 3);
	reconcile_case(
	        "Endpoints with 2 subsets, multiple ports, ipv6 only addresses", NULL,
	        "[{\"ports\":[" P_HTTP "," P_HTTPS_UDP
	        "],\"addresses\":[" A("2001:db8:1111:3333:4444:5555:6666:7777", "pod-1") "," A(
	                "2001:db8:2222:3333:4444:5555:6666:7777",
	                "pod-2") "]},"
	                         "{\"ports\":[" P_3000 "," P_3001 "],\"addresses\":[" A(
	                                 "2001:db8:3333:3333:4444:5555:6666:7777", "pod-11") "]}]",
	        NULL, 1000, 2, 2);
	reconcile_case("Endpoints with 2 subsets, 1 exceeding maxEndpointsPerSubset", NULL,
	               "[" S_2PORTS_2ADDR "," S_3000_3ADDR "]", NULL, 2, 2, 2);
	reconcile_case("The last-applied-configuration annotation should not get mirrored",
	               "\"annotations\":{\"" ESM_ANN_APPLIED "\":\"{}\"}",
	               "[{\"ports\":[" P_HTTP "],\"addresses\":[" A("10.0.0.1", "pod-1") "]}]",
	               NULL, 1000, 1, 1);
	const char *applied[] = {SLICE(",\"annotations\":{\"" ESM_ANN_APPLIED "\":\"{}\"}", "IPv4",
	                               "[" P_HTTP "]",
	                               "[{\"addresses\":[\"10.0.0.1\"],\"hostname\":\"pod-1\","
	                               "\"conditions\":{\"ready\":true}}]"),
	                         NULL};
	reconcile_case("Annotation mirroring should remove the last-applied-configuration", NULL,
	               "[{\"ports\":[" P_HTTP "],\"addresses\":[" A("10.0.0.1", "pod-1") "]}]",
	               applied, 1000, 1, 1);
}

/* upstream's expectedMetrics of a TestReconcile case: desiredSlices, actualSlices,
 * desiredEndpoints, added/updated/removed/skipped per sync, numCreated, numUpdated */
struct want_metrics {
	int desired_slices, actual_slices, desired_endpoints, added, updated, removed, skipped,
	        created, updated_n;
};

static void metrics_case(const char *name, const char *subsets, const char *const *existing,
                         int max, struct want_metrics w)
{
	cJSON *ep = endpoints(NULL, subsets), *s[8];
	size_t n = 0;
	struct esm_plan p = {0};
	for (; existing && existing[n]; n++)
		s[n] = parse(existing[n]);
	struct outcome o = run(ep, s, n, max, &p);
	struct want_metrics got = {p.cache_desired_slices,
	                           p.cache_slices,
	                           p.cache_endpoints,
	                           p.added,
	                           p.updated,
	                           p.removed,
	                           p.skipped,
	                           o.creates,
	                           o.updates};
	if (memcmp(&got, &w, sizeof(w)))
		fail_msg("%s: metrics {%d %d %d %d %d %d %d %d %d}, want {%d %d %d %d %d %d %d %d "
		         "%d}",
		         name, got.desired_slices, got.actual_slices, got.desired_endpoints,
		         got.added, got.updated, got.removed, got.skipped, got.created,
		         got.updated_n, w.desired_slices, w.actual_slices, w.desired_endpoints,
		         w.added, w.updated, w.removed, w.skipped, w.created, w.updated_n);
	free_all(ep, s, n, &p);
}

static void test_reconcile_metrics(void **state)
{
	(void)state;
	metrics_case("Endpoints with 1 subset, port, and address",
	             "[{\"ports\":[" P_HTTP
	             "],\"addresses\":[" AN("10.0.0.1", "pod-1", "node-1") "]}]",
	             NULL, 1000, (struct want_metrics){1, 1, 1, 1, 0, 0, 0, 1, 0});
	metrics_case("Endpoints with 2 subset, different address and same port",
	             "[{\"ports\":[" P_HTTP "],\"addresses\":[" A(
	                     "10.0.0.1", "pod-1") "]},"
	                                          "{\"ports\":[" P_HTTP
	                                          "],\"addresses\":[" A("10.0.0.2", "pod-2") "]}]",
	             NULL, 1000, (struct want_metrics){1, 1, 2, 2, 0, 0, 0, 1, 0});
	const char *empty[] = {SLICE("", "IPv4", "[" P_HTTP "," P_HTTPS_UDP "]", "[]"), NULL};
	metrics_case("... existing empty EndpointSlice", "[" S_2PORTS_2ADDR "," S_3000_3ADDR "]",
	             empty, 1000, (struct want_metrics){2, 2, 5, 5, 0, 0, 0, 1, 1});
	const char *some[] = {SLICE("", "IPv4", "[" P_HTTP "," P_HTTPS_UDP "]",
	                            "[{\"addresses\":[\"10.0.0.2\"],\"hostname\":\"pod-2\"},"
	                            "{\"addresses\":[\"10.0.0.1\",\"10.0.0.3\"],"
	                            "\"hostname\":\"pod-1\"}]"),
	                      NULL};
	metrics_case("... existing EndpointSlice with some addresses",
	             "[" S_2PORTS_2ADDR "," S_3000_3ADDR "]", some, 1000,
	             (struct want_metrics){2, 2, 5, 4, 1, 1, 0, 1, 1});
	metrics_case("Endpoints with 2 subsets, 1 exceeding maxEndpointsPerSubset",
	             "[" S_2PORTS_2ADDR "," S_3000_3ADDR "]", NULL, 2,
	             (struct want_metrics){2, 2, 4, 4, 0, 0, 1, 2, 0});
	metrics_case(
	        "Endpoints with 2 subsets, multiple ports, some invalid addresses",
	        "[{\"ports\":[" P_HTTP "," P_HTTPS_UDP
	        "],\"addresses\":[" A("10.0.0.1", "pod-1") "," A(
	                "10.0.0.2//128",
	                "pod-2") "]},"
	                         "{\"ports\":[" P_3000 "," P_3001
	                         "],\"addresses\":[" A("10.0.1.1", "pod-11") "," A(
	                                 "10.0.1.2", "pod-12") "," A("10.0.1.3::", "pod-13") "]}]",
	        NULL, 1000, (struct want_metrics){2, 2, 3, 3, 0, 0, 2, 2, 0});
}

/* "some invalid addresses" / "all invalid addresses": counted, skipped, not mirrored */
static void test_invalid_addresses(void **state)
{
	(void)state;
	cJSON *ep = endpoints(
	        NULL,
	        "[{\"ports\":[" P_HTTP "],\"addresses\":[" A("10.0.0.1", "pod-1") "," A(
	                "bad-ip", "pod-2") "]},{\"ports\":[" P_3000
	                                   "],\"addresses\":[" A("10.0.1.300", "pod-11") "," A(
	                                           "10.0.1.2", "pod-12") "]}]");
	struct esm_plan p = {0};
	struct outcome o = run(ep, NULL, 0, 1000, &p);
	assert_int_equal(o.creates, 2);
	assert_int_equal(p.invalid, 2);
	assert_int_equal(p.skipped, 2);
	assert_int_equal(p.desired, 2);
	free_all(ep, NULL, 0, &p);

	ep = endpoints(NULL, "[{\"ports\":[" P_HTTP
	                     "],\"addresses\":[" A("x", "pod-1") "," A("y", "pod-2") "]}]");
	o = run(ep, NULL, 0, 1000, &p);
	assert_int_equal(writes(o), 0);
	assert_int_equal(p.invalid, 2);
	free_all(ep, NULL, 0, &p);
}

/* maxEndpointsPerSubset: ready addresses first, then not ready; the rest skipped */
static void test_max_per_subset(void **state)
{
	(void)state;
	cJSON *ep = endpoints(NULL,
	                      "[{\"ports\":[" P_HTTP
	                      "],\"notReadyAddresses\":[" A("10.0.0.9", "a") "],\"addresses\":[" A(
	                              "10.0.0.3", "b") "," A("10.0.0.2", "c") "]}]");
	struct esm_plan p = {0};
	struct outcome o = run(ep, NULL, 0, 2, &p);
	assert_int_equal(o.creates, 1);
	assert_int_equal(p.skipped, 1);
	assert_int_equal(p.invalid, 0);
	const cJSON *eps = get(p.v[0].obj, "endpoints"), *e;
	assert_int_equal(cJSON_GetArraySize(eps), 2);
	cJSON_ArrayForEach(e, eps) assert_true(cJSON_IsTrue(get(get(e, "conditions"), "ready")));
	free_all(ep, NULL, 0, &p);
}

/* RepackSubsets: an address ready in one subset and not ready in another for the same port is
 * not ready; the same address under two subsets with different ports is one endpoint of one
 * slice with both ports */
static void test_repack(void **state)
{
	(void)state;
	cJSON *ep =
	        endpoints(NULL, "[{\"ports\":[" P_HTTP "],\"addresses\":[" A(
	                                "10.0.0.1", "pod-1") "]},{\"ports\":[" P_HTTP
	                                                     "],\"notReadyAddresses\":[" A(
	                                                             "10.0.0.1", "pod-1") "]}]");
	struct esm_plan p = {0};
	run(ep, NULL, 0, 1000, &p);
	assert_int_equal(p.n, 1);
	const cJSON *e = cJSON_GetArrayItem(get(p.v[0].obj, "endpoints"), 0);
	assert_false(cJSON_IsTrue(get(get(e, "conditions"), "ready")));
	assert_int_equal(cJSON_GetArraySize(get(p.v[0].obj, "endpoints")), 1);
	free_all(ep, NULL, 0, &p);

	ep = endpoints(NULL, "[{\"ports\":[" P_HTTP "],\"addresses\":[" A(
	                             "10.0.0.1", "pod-1") "]},"
	                                                  "{\"ports\":[" P_3000
	                                                  "],\"addresses\":[" A("10.0.0.1",
	                                                                        "pod-1") "]}]");
	run(ep, NULL, 0, 1000, &p);
	assert_int_equal(p.n, 1);
	assert_int_equal(cJSON_GetArraySize(get(p.v[0].obj, "ports")), 2);
	free_all(ep, NULL, 0, &p);

	/* a subset without ports: mirrored with no ports */
	ep = endpoints(NULL, "[{\"addresses\":[" A("10.0.0.1", "pod-1") "]}]");
	run(ep, NULL, 0, 1000, &p);
	assert_int_equal(p.n, 1);
	assert_int_equal(cJSON_GetArraySize(get(p.v[0].obj, "ports")), 0);
	free_all(ep, NULL, 0, &p);
}

/* stale slices: a slice of ports no longer wanted is deleted; with a create of the same address
 * type pending it is recycled into an update instead (TestRecycleSlices) */
static void test_stale_and_recycle(void **state)
{
	(void)state;
	cJSON *ep = endpoints(NULL, "[{\"ports\":[" P_HTTP
	                            "],\"addresses\":[" A("10.0.0.1", "pod-1") "]}]");
	cJSON *s[3] = {
	        slice("old-v4", NULL, "IPv4", "[" P_3000 "]", NULL),
	        slice("old-v6", NULL, "IPv6", "[" P_3000 "]", NULL),
	        slice("old-v4b", NULL, "IPv4", "[" P_3001 "]", NULL),
	};
	struct esm_plan p = {0};
	struct outcome o = run(ep, s, 3, 1000, &p);
	assert_int_equal(o.creates, 0);
	assert_int_equal(o.updates, 1);
	assert_int_equal(o.deletes, 2);
	assert_int_equal(p.v[0].op, ESM_UPDATE);
	/* the first IPv4 delete (name order) was recycled; the IPv6 slice is never recycled for v4
	 */
	assert_string_equal(get(get(p.v[0].obj, "metadata"), "name")->valuestring, "old-v4");
	for (size_t i = 1; i < p.n; i++)
		assert_string_not_equal(get(get(p.v[i].obj, "metadata"), "name")->valuestring,
		                        "old-v4");
	free_all(ep, s, 3, &p);

	/* the Endpoints lost every address: its slices go */
	ep = endpoints(NULL, "[]");
	s[0] = slice("a", NULL, "IPv4", "[" P_HTTP "]",
	             "[{\"addresses\":[\"10.0.0.1\"],\"conditions\":{\"ready\":true}}]");
	o = run(ep, s, 1, 1000, &p);
	assert_int_equal(o.deletes, 1);
	assert_int_equal(o.slices, 0);
	free_all(ep, s, 1, &p);

	/* two slices of the same ports: the first (by name) is kept, the other deleted */
	ep = endpoints(NULL,
	               "[{\"ports\":[" P_HTTP "],\"addresses\":[" A("10.0.0.1", "pod-1") "]}]");
	s[0] = slice("b", NULL, "IPv4", "[" P_HTTP "]",
	             "[{\"addresses\":[\"10.0.0.1\"],\"hostname\":\"pod-1\","
	             "\"conditions\":{\"ready\":true}}]");
	s[1] = slice("a", NULL, "IPv4", "[" P_HTTP "]",
	             "[{\"addresses\":[\"10.0.0.1\"],\"hostname\":\"pod-1\","
	             "\"conditions\":{\"ready\":true}}]");
	o = run(ep, s, 2, 1000, &p);
	assert_int_equal(o.deletes, 1);
	assert_int_equal(o.keeps, 1);
	assert_int_equal(o.updates + o.creates, 0);
	assert_string_equal(get(get(p.v[0].obj, "metadata"), "name")->valuestring, "b");
	free_all(ep, s, 2, &p);
}

/* TestNewEndpointSlice: labels cloned, service-name and managed-by overwritten, annotations
 * cloned but the trigger time and last-applied-configuration; the owner reference */
static void test_new_endpoint_slice(void **state)
{
	(void)state;
	cJSON *ep = endpoints("\"labels\":{\"foo\":\"bar\",\"kubernetes.io/service-name\":\"x\","
	                      "\"endpointslice.kubernetes.io/managed-by\":\"y\"},"
	                      "\"annotations\":{\"foo\":\"bar\",\"" ESM_ANN_TRIGGER
	                      "\":\"2020-01-01T00:00:00Z\",\"" ESM_ANN_APPLIED "\":\"{}\"}",
	                      "[{\"ports\":[" P_HTTP "],\"addresses\":[" A("10.0.0.1", "p") "]}]");
	struct esm_plan p = {0};
	run(ep, NULL, 0, 1000, &p);
	assert_int_equal(p.n, 1);
	const cJSON *md = get(p.v[0].obj, "metadata"), *l = get(md, "labels"),
	            *a = get(md, "annotations");
	assert_string_equal(get(l, "foo")->valuestring, "bar");
	assert_string_equal(get(l, "kubernetes.io/service-name")->valuestring, "test-ep");
	assert_string_equal(get(l, "endpointslice.kubernetes.io/managed-by")->valuestring,
	                    ESM_MANAGED_BY);
	assert_int_equal(cJSON_GetArraySize(a), 1);
	assert_string_equal(get(a, "foo")->valuestring, "bar");
	assert_string_equal(get(p.v[0].obj, "addressType")->valuestring, "IPv4");
	const cJSON *port = cJSON_GetArrayItem(get(p.v[0].obj, "ports"), 0);
	assert_string_equal(get(port, "name")->valuestring, "http");
	assert_int_equal(get(port, "port")->valueint, 80);
	assert_string_equal(get(port, "protocol")->valuestring, "TCP");
	assert_null(get(port, "appProtocol"));
	free_all(ep, NULL, 0, &p);

	char buf[300];
	esm_slice_prefix("svc", buf, sizeof(buf));
	assert_string_equal(buf, "svc-");
	char long_name[254];
	memset(long_name, 'a', 253);
	long_name[253] = 0;
	esm_slice_prefix(long_name, buf, sizeof(buf));
	assert_string_equal(buf, long_name);
}

/* TestAddressToEndpoint and ParseIPSloppy + IP.String */
static void test_address_to_endpoint(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
		bool v6;
	} c[] = {
	        {"10.1.2.3", "10.1.2.3", false},
	        {"010.001.002.003", "10.1.2.3", false},
	        {"::ffff:10.1.2.3", "10.1.2.3", false},
	        {"2001:db8:0:0:0:0:0:1", "2001:db8::1", true},
	        {"2001:0db8:0000:0001:0000:0000:0000:0001", "2001:db8:0:1::1", true},
	        {"2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1", true},
	        {"::", "::", true},
	        {"::1", "::1", true},
	        {"::1.2.3.4", "::102:304", true},
	        {"FE80::ABCD", "fe80::abcd", true},
	};
	char buf[64];
	bool v6;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		assert_int_equal(esm_canon_ip(c[i].in, buf, sizeof(buf), &v6), 0);
		assert_string_equal(buf, c[i].out);
		assert_int_equal(v6, c[i].v6);
	}
	static const char *const bad[] = {"",        "1.2.3", "1.2.3.256",    "1.2.3.4.5",
	                                  "a.b.c.d", "1:2",   "fe80::1%eth0", "1.2.3.4 "};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(esm_canon_ip(bad[i], buf, sizeof(buf), &v6), -EINVAL);

	/* the endpoint: addresses, ready, hostname, nodeName, targetRef copied */
	cJSON *ep = endpoints(NULL, "[{\"ports\":[" P_HTTP "],\"notReadyAddresses\":[{\"ip\":"
	                            "\"10.1.2.3\",\"hostname\":\"foo\",\"nodeName\":\"node-abc\","
	                            "\"targetRef\":{\"kind\":\"Pod\",\"namespace\":\"default\","
	                            "\"name\":\"foo\",\"uid\":\"u\"}}]}]");
	struct esm_plan p = {0};
	run(ep, NULL, 0, 1000, &p);
	const cJSON *e = cJSON_GetArrayItem(get(p.v[0].obj, "endpoints"), 0);
	assert_string_equal(cJSON_GetArrayItem(get(e, "addresses"), 0)->valuestring, "10.1.2.3");
	assert_true(cJSON_IsFalse(get(get(e, "conditions"), "ready")));
	assert_string_equal(get(e, "hostname")->valuestring, "foo");
	assert_string_equal(get(e, "nodeName")->valuestring, "node-abc");
	assert_string_equal(get(get(e, "targetRef"), "name")->valuestring, "foo");
	free_all(ep, NULL, 0, &p);
}

/* TestShouldMirror; a Service selector that is empty counts as none */
static void test_should_mirror(void **state)
{
	(void)state;
	assert_true(esm_should_mirror(NULL, false));
	assert_false(esm_should_mirror("true", false));
	assert_true(esm_should_mirror("false", false));
	assert_false(esm_should_mirror(NULL, true));
	cJSON *svc = parse("{\"spec\":{\"selector\":{\"a\":\"b\"}}}");
	assert_true(esm_service_has_selector(svc));
	cJSON_Delete(svc);
	svc = parse("{\"spec\":{\"selector\":{}}}");
	assert_false(esm_service_has_selector(svc));
	cJSON_Delete(svc);
	svc = parse("{\"spec\":{}}");
	assert_false(esm_service_has_selector(svc));
	cJSON_Delete(svc);
}

/* malformed input never crashes: wrong types everywhere */
static void test_malformed(void **state)
{
	(void)state;
	static const char *const bad[] = {
	        "{}",
	        "{\"subsets\":5}",
	        "{\"subsets\":[5,{\"ports\":\"x\",\"addresses\":[1,{\"ip\":7}]}]}",
	        "{\"subsets\":[{\"ports\":[{\"port\":\"80\"}],\"addresses\":[{\"ip\":\"1.2.3.4\","
	        "\"targetRef\":5,\"nodeName\":3}]}]}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cJSON *ep = parse(bad[i]);
		cJSON *s =
		        parse("{\"metadata\":5,\"ports\":7,\"endpoints\":[1,{\"addresses\":3}]}");
		struct esm_plan p = {0};
		assert_int_equal(esm_reconcile(ep, (const cJSON *const *)&s, 1, 1000, &p), 0);
		esm_plan_free(&p);
		cJSON_Delete(ep);
		cJSON_Delete(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_reconcile_cases),
	        cmocka_unit_test(test_reconcile_metrics),
	        cmocka_unit_test(test_invalid_addresses),
	        cmocka_unit_test(test_max_per_subset),
	        cmocka_unit_test(test_repack),
	        cmocka_unit_test(test_stale_and_recycle),
	        cmocka_unit_test(test_new_endpoint_slice),
	        cmocka_unit_test(test_address_to_endpoint),
	        cmocka_unit_test(test_should_mirror),
	        cmocka_unit_test(test_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
