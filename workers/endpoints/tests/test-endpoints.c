/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Endpoints controller's sync (workers/endpoints/endpoints.h) on the cases of upstream's
 * pkg/controller/endpoint/endpoints_controller_test.go (v1.37): NewNoSubsets,
 * ExistingNilSubsets / ExistingEmptySubsets, ProtocolTCP / UDP / SCTP,
 * ItemsEmptySelectorSelectsAll, ItemsPreexisting, ItemsPreexistingIdentical, Items (3 pods, 2
 * ports), ItemsWithLabels, HeadlessServiceLabel, HeadlessWithoutPort,
 * PodToEndpointAddressForService, the publishNotReadyAddresses and terminating cases, named ports
 * resolving differently (RepackSubsets), TruncateEndpoints and the over-capacity annotation.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workers/endpoints/endpoints.h"

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static cJSON *parse(const char *s)
{
	cJSON *j = cJSON_Parse(s);
	if (!j)
		fail_msg("bad JSON: %s", s);
	return j;
}

/* a Service foo in "other" with selector foo=bar; ports JSON; extra spec fields */
static cJSON *service(const char *ports, const char *extra)
{
	char buf[2048];
	snprintf(buf, sizeof(buf),
	         "{\"metadata\":{\"name\":\"foo\",\"namespace\":\"other\",\"uid\":\"su\"},"
	         "\"spec\":{\"selector\":{\"foo\":\"bar\"},\"clusterIP\":\"10.0.0.1\","
	         "\"ipFamilies\":[\"IPv4\"],\"ports\":%s%s%s}}",
	         ports, extra ? "," : "", extra ? extra : "");
	return parse(buf);
}

/* addPods: pod<i> with IP 1.2.3.<4+i>, container port 8080 named "p" (and 8088 "p-udp" UDP) */
static cJSON *pod(int i, bool ready, const char *extra_meta)
{
	char buf[2048];
	snprintf(buf, sizeof(buf),
	         "{\"metadata\":{\"name\":\"pod%d\",\"namespace\":\"other\",\"uid\":\"uid%d\","
	         "\"labels\":{\"foo\":\"bar\"}%s%s},"
	         "\"spec\":{\"nodeName\":\"node-1\",\"containers\":[{\"name\":\"c\",\"ports\":["
	         "{\"name\":\"p\",\"containerPort\":8080,\"protocol\":\"TCP\"},"
	         "{\"name\":\"p-udp\",\"containerPort\":8088,\"protocol\":\"UDP\"}]}]},"
	         "\"status\":{\"phase\":\"Running\",\"podIP\":\"1.2.3.%d\","
	         "\"podIPs\":[{\"ip\":\"1.2.3.%d\"},{\"ip\":\"2000::%d\"}],"
	         "\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\"}]}}",
	         i, i, extra_meta ? "," : "", extra_meta ? extra_meta : "", 4 + i, 4 + i, 4 + i,
	         ready ? "True" : "False");
	return parse(buf);
}

/* the subsets as compact JSON */
static char *subsets_text(const cJSON *s)
{
	return cJSON_PrintUnformatted(s);
}

static void expect_subsets(const cJSON *got, const char *want)
{
	char *t = subsets_text(got);
	cJSON *w = parse(want);
	char *wt = cJSON_PrintUnformatted(w);
	if (strcmp(t, wt))
		fail_msg("subsets\n got %s\nwant %s", t, wt);
	free(t);
	free(wt);
	cJSON_Delete(w);
}

#define ADDR(i)                                                                                    \
	"{\"ip\":\"1.2.3." #i "\",\"nodeName\":\"node-1\",\"targetRef\":{\"kind\":\"Pod\","        \
	"\"namespace\":\"other\",\"name\":\"pod%d\",\"uid\":\"uid%d\"}}"

static char *addr(int i)
{
	char *b = malloc(256);
	snprintf(b, 256,
	         "{\"ip\":\"1.2.3.%d\",\"nodeName\":\"node-1\",\"targetRef\":{\"kind\":\"Pod\","
	         "\"namespace\":\"other\",\"name\":\"pod%d\",\"uid\":\"uid%d\"}}",
	         4 + i, i, i);
	return b;
}

static void sync1(const cJSON *svc, cJSON **pods, size_t n, const cJSON *cur, cJSON **out,
                  bool *create)
{
	assert_int_equal(ep_sync(svc, (const cJSON *const *)pods, n, cur, NULL, out, create), 0);
}

/* TestSyncEndpointsNewNoSubsets: no Endpoints, no pods: created with no subsets */
static void t_new_no_subsets(void **s)
{
	(void)s;
	cJSON *svc = service("[{\"port\":80,\"protocol\":\"TCP\",\"targetPort\":8080}]", NULL),
	      *out;
	bool create;
	sync1(svc, NULL, 0, NULL, &out, &create);
	assert_non_null(out);
	assert_true(create);
	assert_string_equal(get(get(out, "metadata"), "name")->valuestring, "foo");
	assert_int_equal(cJSON_GetArraySize(get(out, "subsets")), 0);
	cJSON_Delete(out);
	cJSON_Delete(svc);
}

/* TestSyncEndpointsExistingNilSubsets / ExistingEmptySubsets: nothing to write */
static void t_existing_empty(void **s)
{
	(void)s;
	static const char *const curs[] = {
	        "{\"metadata\":{\"name\":\"foo\",\"namespace\":\"other\",\"resourceVersion\":\"1\"}"
	        "}",
	        "{\"metadata\":{\"name\":\"foo\",\"namespace\":\"other\",\"resourceVersion\":\"1\"}"
	        ","
	        "\"subsets\":[]}",
	};
	cJSON *svc = service("[{\"port\":80,\"protocol\":\"TCP\",\"targetPort\":8080}]", NULL),
	      *out;
	for (size_t i = 0; i < 2; i++) {
		cJSON *cur = parse(curs[i]);
		bool create;
		sync1(svc, NULL, 0, cur, &out, &create);
		assert_null(out);
		cJSON_Delete(cur);
	}
	cJSON_Delete(svc);
}

/* TestSyncEndpointsProtocolTCP / UDP / SCTP: wrong existing subsets replaced by the pod's */
static void t_protocols(void **s)
{
	(void)s;
	static const char *const protos[] = {"TCP", "UDP", "SCTP"};
	for (size_t i = 0; i < 3; i++) {
		char ports[256], want[512];
		snprintf(ports, sizeof(ports),
		         "[{\"port\":80,\"protocol\":\"%s\",\"targetPort\":8080}]", protos[i]);
		cJSON *svc = service(ports, NULL), *p = pod(0, true, NULL), *out;
		cJSON *cur =
		        parse("{\"metadata\":{\"name\":\"foo\",\"namespace\":\"other\","
		              "\"resourceVersion\":\"1\"},\"subsets\":[{\"addresses\":[{\"ip\":"
		              "\"6.7.8.9\",\"nodeName\":\"n\"}],\"ports\":[{\"port\":1000}]}]}");
		bool create;
		sync1(svc, &p, 1, cur, &out, &create);
		assert_non_null(out);
		assert_false(create);
		char *a = addr(0);
		snprintf(want, sizeof(want),
		         "[{\"addresses\":[%s],\"ports\":[{\"name\":\"\",\"port\":8080,"
		         "\"protocol\":\"%s\"}]}]",
		         a, protos[i]);
		free(a);
		expect_subsets(get(out, "subsets"), want);
		assert_string_equal(get(get(out, "metadata"), "resourceVersion")->valuestring, "1");
		cJSON_Delete(out);
		cJSON_Delete(cur);
		cJSON_Delete(svc);
		cJSON_Delete(p);
	}
}

/* TestSyncEndpointsItems: 3 pods, 2 ports (one named): one subset, 3 addresses, 2 ports; then
 * ItemsPreexistingIdentical: the same again writes nothing */
static void t_items(void **s)
{
	(void)s;
	cJSON *svc = service(
	        "[{\"name\":\"port0\",\"port\":80,\"protocol\":\"TCP\",\"targetPort\":8080},"
	        "{\"name\":\"port1\",\"port\":88,\"protocol\":\"TCP\",\"targetPort\":\"p\"}]",
	        NULL);
	cJSON *p[3] = {pod(0, true, NULL), pod(1, true, NULL), pod(2, true, NULL)}, *out;
	bool create;
	sync1(svc, p, 3, NULL, &out, &create);
	assert_true(create);
	char want[2048], *a0 = addr(0), *a1 = addr(1), *a2 = addr(2);
	snprintf(want, sizeof(want),
	         "[{\"addresses\":[%s,%s,%s],\"ports\":[{\"name\":\"port0\",\"port\":8080,"
	         "\"protocol\":\"TCP\"},{\"name\":\"port1\",\"port\":8080,\"protocol\":\"TCP\"}]}]",
	         a0, a1, a2);
	free(a0);
	free(a1);
	free(a2);
	expect_subsets(get(out, "subsets"), want);
	/* as stored (resourceVersion) and synced again: nothing */
	cJSON_AddStringToObject((cJSON *)get(out, "metadata"), "resourceVersion", "5");
	cJSON *again;
	sync1(svc, p, 3, out, &again, &create);
	assert_null(again);
	/* the pods in another order, targetRef resourceVersions set: still nothing */
	cJSON *rev[3] = {p[2], p[0], p[1]};
	cJSON *ref = (cJSON *)get(
	        cJSON_GetArrayItem(get(cJSON_GetArrayItem(get(out, "subsets"), 0), "addresses"), 0),
	        "targetRef");
	cJSON_AddStringToObject(ref, "resourceVersion", "77");
	sync1(svc, rev, 3, out, &again, &create);
	assert_null(again);
	cJSON_Delete(out);
	for (int i = 0; i < 3; i++)
		cJSON_Delete(p[i]);
	cJSON_Delete(svc);
}

/* TestSyncEndpointsItemsWithLabels / HeadlessServiceLabel: the Service's labels, plus the
 * headless label for clusterIP None; a label change rewrites */
static void t_labels(void **s)
{
	(void)s;
	cJSON *svc = parse("{\"metadata\":{\"name\":\"foo\",\"namespace\":\"other\","
	                   "\"labels\":{\"foo\":\"bar\",\"baz\":\"blah\"}},\"spec\":{\"selector\":"
	                   "{\"foo\":\"bar\"},\"clusterIP\":\"None\",\"ports\":[{\"port\":80,"
	                   "\"protocol\":\"TCP\",\"targetPort\":8080}]}}");
	cJSON *p = pod(0, true, NULL), *out, *again;
	bool create;
	sync1(svc, &p, 1, NULL, &out, &create);
	const cJSON *l = get(get(out, "metadata"), "labels");
	assert_string_equal(get(l, "foo")->valuestring, "bar");
	assert_string_equal(get(l, "baz")->valuestring, "blah");
	assert_non_null(get(l, EP_LABEL_HL));
	cJSON_AddStringToObject((cJSON *)get(out, "metadata"), "resourceVersion", "1");
	/* the headless label is not compared: nothing to write */
	sync1(svc, &p, 1, out, &again, &create);
	assert_null(again);
	/* a new Service label */
	cJSON_AddStringToObject((cJSON *)get(get(svc, "metadata"), "labels"), "new", "x");
	sync1(svc, &p, 1, out, &again, &create);
	assert_non_null(again);
	assert_string_equal(get(get(get(again, "metadata"), "labels"), "new")->valuestring, "x");
	cJSON_Delete(again);
	cJSON_Delete(out);
	cJSON_Delete(p);
	cJSON_Delete(svc);
}

/* TestSyncEndpointsHeadlessWithoutPort: a headless Service without ports: addresses without
 * ports; a Service with clusterIP and no ports: none */
static void t_headless_without_port(void **s)
{
	(void)s;
	cJSON *svc = parse("{\"metadata\":{\"name\":\"foo\",\"namespace\":\"other\"},\"spec\":"
	                   "{\"selector\":{\"foo\":\"bar\"},\"clusterIP\":\"None\"}}");
	cJSON *p = pod(0, true, NULL), *out;
	bool create;
	sync1(svc, &p, 1, NULL, &out, &create);
	char want[512], *a = addr(0);
	snprintf(want, sizeof(want), "[{\"addresses\":[%s]}]", a);
	free(a);
	expect_subsets(get(out, "subsets"), want);
	cJSON_Delete(out);
	cJSON_ReplaceItemInObject((cJSON *)get(svc, "spec"), "clusterIP",
	                          cJSON_CreateString("10.0.0.1"));
	sync1(svc, &p, 1, NULL, &out, &create);
	assert_int_equal(cJSON_GetArraySize(get(out, "subsets")), 0);
	cJSON_Delete(out);
	cJSON_Delete(p);
	cJSON_Delete(svc);
}

/* TestPodToEndpointAddressForService: the pod IP of the Service's (first) family */
static void t_families(void **s)
{
	(void)s;
	static const struct {
		const char *extra; /* spec fields replacing the IPv4 defaults */
		const char *want;  /* address, or NULL: none */
	} cases[] = {
	        {"\"ipFamilies\":[\"IPv4\"],\"clusterIP\":\"10.0.0.1\"", "1.2.3.4"},
	        {"\"ipFamilies\":[\"IPv6\"],\"clusterIP\":\"3000::1\"", "2000::4"},
	        {"\"ipFamilies\":[\"IPv6\",\"IPv4\"],\"clusterIP\":\"3000::1\"", "2000::4"},
	        {"\"clusterIP\":\"3000::1\"", "2000::4"},
	        {"\"clusterIP\":\"10.0.0.1\"", "1.2.3.4"},
	        {"\"clusterIP\":\"None\"", "1.2.3.4"}, /* headless: the family of status.podIP */
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		char buf[1024];
		snprintf(buf, sizeof(buf),
		         "{\"metadata\":{\"name\":\"foo\",\"namespace\":\"other\"},\"spec\":{"
		         "\"selector\":{\"foo\":\"bar\"},%s,\"ports\":[{\"port\":80,\"protocol\":"
		         "\"TCP\",\"targetPort\":8080}]}}",
		         cases[c].extra);
		cJSON *svc = parse(buf), *p = pod(0, true, NULL), *out;
		bool create;
		sync1(svc, &p, 1, NULL, &out, &create);
		const cJSON *a = cJSON_GetArrayItem(
		        get(cJSON_GetArrayItem(get(out, "subsets"), 0), "addresses"), 0);
		assert_non_null(a);
		assert_string_equal(get(a, "ip")->valuestring, cases[c].want);
		cJSON_Delete(out);
		cJSON_Delete(p);
		cJSON_Delete(svc);
	}
}

/* not ready pods go to notReadyAddresses; publishNotReadyAddresses makes them ready and keeps
 * terminating pods; terminating pods are left out otherwise; terminal pods always */
static void t_readiness(void **s)
{
	(void)s;
	static const struct {
		bool pnra, ready, terminating, failed;
		int want_ready, want_not_ready;
	} cases[] = {
	        {false, true, false, false, 1, 0}, {false, false, false, false, 0, 1},
	        {false, true, true, false, 0, 0},  {true, false, false, false, 1, 0},
	        {true, true, true, false, 1, 0},   {false, true, false, true, 0, 0},
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		cJSON *svc = service("[{\"port\":80,\"protocol\":\"TCP\",\"targetPort\":8080}]",
		                     cases[c].pnra ? "\"publishNotReadyAddresses\":true" : NULL);
		cJSON *p = pod(0, cases[c].ready,
		               cases[c].terminating
		                       ? "\"deletionTimestamp\":\"2026-01-01T00:00:00Z\""
		                       : NULL),
		      *out;
		if (cases[c].failed)
			cJSON_ReplaceItemInObject((cJSON *)get(p, "status"), "phase",
			                          cJSON_CreateString("Failed"));
		bool create;
		sync1(svc, &p, 1, NULL, &out, &create);
		const cJSON *ss = cJSON_GetArrayItem(get(out, "subsets"), 0);
		if (cJSON_GetArraySize(get(ss, "addresses")) != cases[c].want_ready ||
		    cJSON_GetArraySize(get(ss, "notReadyAddresses")) != cases[c].want_not_ready)
			fail_msg("case %zu", c);
		cJSON_Delete(out);
		cJSON_Delete(p);
		cJSON_Delete(svc);
	}
}

/* RepackSubsets: a named target port resolving to different numbers splits the pods into two
 * subsets; a not-ready pod with the same ports shares the ready ones' subset (not ready) */
static void t_repack(void **s)
{
	(void)s;
	cJSON *svc = service(
	        "[{\"name\":\"http\",\"port\":80,\"protocol\":\"TCP\",\"targetPort\":\"p\"}]",
	        NULL);
	cJSON *p[3] = {pod(0, true, NULL), pod(1, true, NULL), pod(2, false, NULL)}, *out;
	cJSON *cp = cJSON_GetArrayItem(
	        get(cJSON_GetArrayItem(get(get(p[1], "spec"), "containers"), 0), "ports"), 0);
	cJSON_ReplaceItemInObject(cp, "containerPort", cJSON_CreateNumber(9090));
	bool create;
	sync1(svc, p, 3, NULL, &out, &create);
	char want[2048], *a0 = addr(0), *a1 = addr(1), *a2 = addr(2);
	snprintf(want, sizeof(want),
	         "[{\"addresses\":[%s],\"notReadyAddresses\":[%s],\"ports\":[{\"name\":\"http\","
	         "\"port\":8080,\"protocol\":\"TCP\"}]},{\"addresses\":[%s],\"ports\":[{\"name\":"
	         "\"http\",\"port\":9090,\"protocol\":\"TCP\"}]}]",
	         a0, a2, a1);
	free(a0);
	free(a1);
	free(a2);
	expect_subsets(get(out, "subsets"), want);
	cJSON_Delete(out);
	for (int i = 0; i < 3; i++)
		cJSON_Delete(p[i]);
	cJSON_Delete(svc);
}

/* TestTruncateEndpoints: the cases of upstream's table */
static cJSON *endpoints_with(const int *ready, const int *not_ready, size_t n)
{
	cJSON *e = parse("{\"metadata\":{\"name\":\"foo\"},\"subsets\":[]}");
	cJSON *subsets = (cJSON *)get(e, "subsets");
	for (size_t i = 0; i < n; i++) {
		cJSON *s = cJSON_CreateObject(), *r = cJSON_AddArrayToObject(s, "addresses"),
		      *nr = cJSON_AddArrayToObject(s, "notReadyAddresses");
		for (int k = 0; k < ready[i]; k++)
			cJSON_AddItemToArray(r, cJSON_CreateObject());
		for (int k = 0; k < not_ready[i]; k++)
			cJSON_AddItemToArray(nr, cJSON_CreateObject());
		cJSON_AddItemToArray(subsets, s);
	}
	return e;
}

static void t_truncate(void **s)
{
	(void)s;
	static const struct {
		const char *desc;
		int ready[3], not_ready[3];
		size_t n;
		bool truncated;
		int want_ready[3], want_not_ready[3];
	} cases[] = {
	        {"empty", {0}, {0}, 1, false, {0}, {0}},
	        {"10 endpoints", {5, 3}, {1, 1}, 2, false, {5, 3}, {1, 1}},
	        {"1001 endpoints, 0 ready", {0}, {1001}, 1, true, {0}, {1000}},
	        {"1002 endpoints, 1 ready", {1}, {1001}, 1, true, {1}, {999}},
	        {"2000 endpoints, 1000 ready", {1000}, {1000}, 1, true, {1000}, {0}},
	        {"2000 endpoints, 1001 ready", {1001}, {999}, 1, true, {1000}, {0}},
	        {"1001 ready over 3 subsets",
	         {500, 300, 201},
	         {100, 100, 100},
	         3,
	         true,
	         {500, 300, 200},
	         {0, 0, 0}},
	        {"900 ready, 300 not ready over 3 subsets",
	         {300, 300, 300},
	         {150, 100, 50},
	         3,
	         true,
	         {300, 300, 300},
	         {50, 34, 16}},
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		cJSON *e = endpoints_with(cases[c].ready, cases[c].not_ready, cases[c].n);
		if (ep_truncate(e) != cases[c].truncated)
			fail_msg("%s: truncated", cases[c].desc);
		for (size_t i = 0; i < cases[c].n; i++) {
			const cJSON *ss = cJSON_GetArrayItem(get(e, "subsets"), (int)i);
			int r = cJSON_GetArraySize(get(ss, "addresses")),
			    nr = cJSON_GetArraySize(get(ss, "notReadyAddresses"));
			if (r != cases[c].want_ready[i] || nr != cases[c].want_not_ready[i])
				fail_msg("%s: subset %zu: %d/%d want %d/%d", cases[c].desc, i, r,
				         nr, cases[c].want_ready[i], cases[c].want_not_ready[i]);
		}
		cJSON_Delete(e);
	}
}

/* over capacity through the sync: truncated to 1000 with the annotation; under again: the
 * annotation goes */
static void t_over_capacity(void **s)
{
	(void)s;
	cJSON *svc = service("[{\"port\":80,\"protocol\":\"TCP\",\"targetPort\":8080}]", NULL);
	enum { N = 1002 };
	cJSON **p = calloc(N, sizeof(*p)), *out, *again;
	for (int i = 0; i < N; i++) {
		char buf[1024];
		snprintf(
		        buf, sizeof(buf),
		        "{\"metadata\":{\"name\":\"p%d\",\"namespace\":\"other\",\"uid\":\"u%d\"},"
		        "\"spec\":{\"nodeName\":\"n\"},\"status\":{\"phase\":\"Running\",\"podIP\":"
		        "\"10.%d.%d.1\",\"podIPs\":[{\"ip\":\"10.%d.%d.1\"}],\"conditions\":[{"
		        "\"type\":"
		        "\"Ready\",\"status\":\"True\"}]}}",
		        i, i, i / 250, i % 250, i / 250, i % 250);
		p[i] = parse(buf);
	}
	bool create;
	sync1(svc, p, N, NULL, &out, &create);
	const cJSON *ss = cJSON_GetArrayItem(get(out, "subsets"), 0);
	assert_int_equal(cJSON_GetArraySize(get(ss, "addresses")), 1000);
	assert_string_equal(get(get(get(out, "metadata"), "annotations"), EP_ANN_OVER)->valuestring,
	                    "truncated");
	cJSON_AddStringToObject((cJSON *)get(out, "metadata"), "resourceVersion", "1");
	/* still over: rewritten each sync, as upstream (the annotation is never "correct") */
	sync1(svc, p, N, out, &again, &create);
	assert_non_null(again);
	cJSON_Delete(again);
	/* 10 pods: the annotation goes */
	sync1(svc, p, 10, out, &again, &create);
	assert_null(get(get(get(again, "metadata"), "annotations"), EP_ANN_OVER));
	assert_int_equal(
	        cJSON_GetArraySize(get(cJSON_GetArrayItem(get(again, "subsets"), 0), "addresses")),
	        10);
	cJSON_Delete(again);
	cJSON_Delete(out);
	for (int i = 0; i < N; i++)
		cJSON_Delete(p[i]);
	free(p);
	cJSON_Delete(svc);
}

/* the trigger-time annotation */
static void t_trigger(void **s)
{
	(void)s;
	cJSON *svc = service("[{\"port\":80,\"protocol\":\"TCP\",\"targetPort\":8080}]", NULL);
	cJSON *p = pod(0, true, NULL), *out;
	bool create;
	assert_int_equal(ep_sync(svc, (const cJSON *const *)&p, 1, NULL, "2026-01-01T00:00:00Z",
	                         &out, &create),
	                 0);
	assert_string_equal(
	        get(get(get(out, "metadata"), "annotations"), EP_ANN_TRIGGER)->valuestring,
	        "2026-01-01T00:00:00Z");
	cJSON_Delete(out);
	cJSON_Delete(p);
	cJSON_Delete(svc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(t_new_no_subsets), cmocka_unit_test(t_existing_empty),
	        cmocka_unit_test(t_protocols),      cmocka_unit_test(t_items),
	        cmocka_unit_test(t_labels),         cmocka_unit_test(t_headless_without_port),
	        cmocka_unit_test(t_families),       cmocka_unit_test(t_readiness),
	        cmocka_unit_test(t_repack),         cmocka_unit_test(t_truncate),
	        cmocka_unit_test(t_over_capacity),  cmocka_unit_test(t_trigger),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
