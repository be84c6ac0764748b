/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The EndpointSlice reconciler (workers/endpointslice/reconcile.h) on the cases of upstream's
 * staging/src/k8s.io/endpointslice/reconciler_test.go (v1.37), one table row or test per
 * upstream case: the plan is applied to an in-memory set of slices (a create gets a name and a
 * uid) and the actions and the resulting slices are checked as upstream checks its fake
 * clientset's. Also the trackers (tracker.h): StaleSlices and the trigger-time rules of
 * endpointslice_tracker_test.go and trigger_time_tracker_test.go.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/model.h"
#include "shm/record-model.h"
#include "workers/endpointslice/podlist.h"
#include "workers/endpointslice/reconcile.h"
#include "workers/endpointslice/tracker.h"

#define NS "test"

/* ---- fixtures -------------------------------------------------------------------------------- */
static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static cJSON *parse(const char *s)
{
	cJSON *j = cJSON_Parse(s);
	assert_non_null(j);
	return j;
}

/* newServiceAndEndpointMeta: "foo", selector foo=bar, one TCP port 80 targeting 80 */
static cJSON *service(const char *families, const char *cluster_ip, bool pnra)
{
	char buf[2048];
	snprintf(buf, sizeof(buf),
	         "{\"metadata\":{\"name\":\"foo\",\"namespace\":\"" NS "\",\"uid\":\"svc-uid\","
	         "\"creationTimestamp\":\"2026-01-01T00:00:00Z\"},"
	         "\"spec\":{\"selector\":{\"foo\":\"bar\"},\"clusterIP\":\"%s\",%s%s%s"
	         "\"publishNotReadyAddresses\":%s,"
	         "\"ports\":[{\"name\":\"\",\"port\":80,\"targetPort\":80,\"protocol\":\"TCP\"}]}}",
	         cluster_ip, families ? "\"ipFamilies\":" : "", families ? families : "",
	         families ? "," : "", pnra ? "true" : "false");
	return parse(buf);
}

static cJSON *svc4(void)
{
	return service("[\"IPv4\"]", "10.0.0.10", false);
}

/* newPod(i, ns, ready, nIPs, terminating) */
static cJSON *pod(int i, bool ready, int n_ips, bool terminating)
{
	char buf[2048], ips[256] = "";
	for (int k = 0; k < n_ips; k++) {
		char one[64];
		if (k == 0)
			snprintf(one, sizeof(one), "{\"ip\":\"1.2.%d.%d\"}", i / 250, i % 250 + 1);
		else
			snprintf(one, sizeof(one), ",{\"ip\":\"2001:db8::%x\"}", i + 1);
		strcat(ips, one);
	}
	snprintf(buf, sizeof(buf),
	         "{\"metadata\":{\"name\":\"pod%d\",\"namespace\":\"" NS "\",\"uid\":\"uid-%d\","
	         "\"labels\":{\"foo\":\"bar\"}%s},"
	         "\"spec\":{\"nodeName\":\"node-1\",\"containers\":[{\"name\":\"c\","
	         "\"ports\":[{\"name\":\"http\",\"containerPort\":80}]}]},"
	         "\"status\":{\"phase\":\"Running\",\"podIP\":\"1.2.%d.%d\",\"podIPs\":[%s],"
	         "\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\","
	         "\"lastTransitionTime\":\"2026-01-01T00:00:%02dZ\"}]}}",
	         i, i, terminating ? ",\"deletionTimestamp\":\"2026-01-01T00:01:00Z\"" : "",
	         i / 250, i % 250 + 1, ips, ready ? "True" : "False", i % 60);
	return parse(buf);
}

/* the node lookup: node-1 exists in zone-a; "missing" nodes do not */
static int nodes(void *ud, const char *name, const char **ret)
{
	(void)ud;
	*ret = NULL;
	if (!strcmp(name, "node-1")) {
		*ret = "zone-a";
		return 0;
	}
	if (!strcmp(name, "node-2"))
		return 0;
	return -ENOENT;
}

/* ---- a fake apiserver for slices ----------------------------------------------------------- */
struct store {
	cJSON *s[64];
	size_t n;
	int created, updated, deleted, seq;
	int order[64]; /* the ops in order */
	size_t n_order;
};

static void store_free(struct store *st)
{
	for (size_t i = 0; i < st->n; i++)
		cJSON_Delete(st->s[i]);
	st->n = 0;
}

static cJSON *find(struct store *st, const char *name, size_t *ix)
{
	for (size_t i = 0; i < st->n; i++)
		if (!strcmp(get(get(st->s[i], "metadata"), "name")->valuestring, name)) {
			if (ix)
				*ix = i;
			return st->s[i];
		}
	return NULL;
}

static void apply(struct store *st, struct eps_plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		cJSON *o = p->v[i].obj, *md = (cJSON *)get(o, "metadata");
		size_t ix;
		st->order[st->n_order++] = (int)p->v[i].op;
		if (p->v[i].op == EPS_CREATE) {
			char name[64], uid[64];
			snprintf(name, sizeof(name), "%s%d", get(md, "generateName")->valuestring,
			         ++st->seq);
			snprintf(uid, sizeof(uid), "slice-uid-%d", st->seq);
			cJSON *c = cJSON_Duplicate(o, true);
			cJSON *cm = (cJSON *)get(c, "metadata");
			cJSON_DeleteItemFromObject(cm, "generateName");
			cJSON_AddStringToObject(cm, "name", name);
			cJSON_AddStringToObject(cm, "uid", uid);
			st->s[st->n++] = c;
			st->created++;
		} else if (p->v[i].op == EPS_UPDATE) {
			assert_non_null(find(st, get(md, "name")->valuestring, &ix));
			cJSON *c = cJSON_Duplicate(o, true);
			cJSON_Delete(st->s[ix]);
			st->s[ix] = c;
			st->updated++;
		} else {
			assert_non_null(find(st, get(md, "name")->valuestring, &ix));
			cJSON_Delete(st->s[ix]);
			st->s[ix] = st->s[--st->n];
			st->deleted++;
		}
	}
}

static void reconcile(struct store *st, const cJSON *svc, cJSON **pods, size_t n, int max,
                      struct eps_plan *ret)
{
	struct eps_plan p;
	st->created = st->updated = st->deleted = 0;
	st->n_order = 0;
	assert_int_equal(eps_reconcile(svc, (const cJSON *const *)pods, n,
	                               (const cJSON *const *)st->s, st->n, NULL, max, nodes, NULL,
	                               &p),
	                 0);
	apply(st, &p);
	if (ret)
		*ret = p;
	else
		eps_plan_free(&p);
}

static int cmp_int_desc(const void *a, const void *b)
{
	return *(const int *)b - *(const int *)a;
}

/* expectUnorderedSlicesWithLengths */
static void expect_lengths(struct store *st, const int *want, size_t n)
{
	int have[64];
	int w[64];
	assert_int_equal(st->n, n);
	for (size_t i = 0; i < n; i++) {
		have[i] = cJSON_GetArraySize(get(st->s[i], "endpoints"));
		w[i] = want[i];
	}
	qsort(have, n, sizeof(int), cmp_int_desc);
	qsort(w, n, sizeof(int), cmp_int_desc);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(have[i], w[i]);
}

static void free_pods(cJSON **p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cJSON_Delete(p[i]);
}

/* a slice as newEmptyEndpointSlice(n, ns, meta, svc) with pods[from..to step] as endpoints,
 * built by running the reconciler on those pods alone (podToEndpoint's output) */
static void preexisting(struct store *st, const cJSON *svc, cJSON **pods, int from, int to,
                        int step)
{
	cJSON *sub[300];
	size_t n = 0;
	struct store tmp = {.seq = st->seq + 100};
	for (int i = from; i < to; i += step)
		sub[n++] = pods[i];
	reconcile(&tmp, svc, sub, n, 1000, NULL);
	assert_int_equal(tmp.n, 1);
	st->s[st->n++] = tmp.s[0];
	st->seq = tmp.seq;
}

/* ---- TestReconcileEmpty -----------------------------------------------------------------------
 */
static void t_empty(void **state)
{
	(void)state;
	struct store st = {0};
	cJSON *svc = svc4();
	reconcile(&st, svc, NULL, 0, 100, NULL);
	assert_int_equal(st.created, 1);
	assert_int_equal(st.n, 1);
	const cJSON *s = st.s[0], *l = get(get(s, "metadata"), "labels");
	assert_string_equal(get(l, EPS_LABEL_SVC)->valuestring, "foo");
	assert_string_equal(get(l, EPS_LABEL_MGD)->valuestring, EPS_MANAGED_BY);
	assert_string_equal(get(s, "addressType")->valuestring, "IPv4");
	assert_int_equal(cJSON_GetArraySize(get(s, "endpoints")), 0);
	assert_int_equal(cJSON_GetArraySize(get(s, "ports")), 0);
	const cJSON *ref = cJSON_GetArrayItem(get(get(s, "metadata"), "ownerReferences"), 0);
	assert_string_equal(get(ref, "uid")->valuestring, "svc-uid");
	assert_true(cJSON_IsTrue(get(ref, "controller")));
	/* a second run keeps the placeholder: no action */
	reconcile(&st, svc, NULL, 0, 100, NULL);
	assert_int_equal(st.created + st.updated + st.deleted, 0);
	store_free(&st);
	cJSON_Delete(svc);
}

/* ---- TestReconcile1Pod: one pod (IPv4 + IPv6) against Service variants ---------------------- */
struct one_pod_case {
	const char *name;
	const char *families; /* NULL: none */
	const char *cluster_ip;
	int n_ips;
	const char *want_types[2]; /* address types of the slices created, in order */
	int want_eps[2];           /* endpoints in each */
};

static const struct one_pod_case one_pod_cases[] = {
        {"no-family-service", NULL, "10.0.0.10", 1, {"IPv4"}, {1}},
        {"ipv4", "[\"IPv4\"]", "10.0.0.10", 2, {"IPv4"}, {1}},
        {"ipv6", "[\"IPv6\"]", "2001:db8::10", 2, {"IPv6"}, {1}},
        {"ipv4-clusterip", NULL, "1.1.1.1", 2, {"IPv4"}, {1}},
        {"ipv6-clusterip", NULL, "2001:db8::10", 2, {"IPv6"}, {1}},
        {"dualstack", "[\"IPv4\",\"IPv6\"]", "10.0.0.10", 2, {"IPv4", "IPv6"}, {1, 1}},
        {"headless-no-family", NULL, "None", 2, {"IPv4", "IPv6"}, {1, 1}},
        /* an IPv6 Service whose pod has only an IPv4 address: a placeholder */
        {"ipv6-pod-ipv4-only", "[\"IPv6\"]", "2001:db8::10", 1, {"IPv6"}, {0}},
};

static void t_one_pod(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(one_pod_cases) / sizeof(one_pod_cases[0]); c++) {
		const struct one_pod_case *tc = &one_pod_cases[c];
		struct store st = {0};
		cJSON *svc = service(tc->families, tc->cluster_ip, false);
		cJSON *p = pod(1, true, tc->n_ips, false);
		reconcile(&st, svc, &p, 1, 100, NULL);
		size_t want = tc->want_types[1] ? 2 : 1;
		if (st.n != want)
			fail_msg("%s: %zu slices, want %zu", tc->name, st.n, want);
		for (size_t i = 0; i < want; i++) {
			assert_string_equal(get(st.s[i], "addressType")->valuestring,
			                    tc->want_types[i]);
			assert_int_equal(cJSON_GetArraySize(get(st.s[i], "endpoints")),
			                 tc->want_eps[i]);
			if (!tc->want_eps[i])
				continue;
			const cJSON *ep = cJSON_GetArrayItem(get(st.s[i], "endpoints"), 0);
			const cJSON *addr = cJSON_GetArrayItem(get(ep, "addresses"), 0);
			assert_true(strchr(addr->valuestring, ':')
			                    ? !strcmp(tc->want_types[i], "IPv6")
			                    : !strcmp(tc->want_types[i], "IPv4"));
			assert_true(cJSON_IsTrue(get(get(ep, "conditions"), "ready")));
			assert_string_equal(get(ep, "nodeName")->valuestring, "node-1");
			assert_string_equal(get(ep, "zone")->valuestring, "zone-a");
			assert_string_equal(get(get(ep, "targetRef"), "name")->valuestring, "pod1");
			assert_string_equal(get(get(ep, "targetRef"), "kind")->valuestring, "Pod");
			const cJSON *port = cJSON_GetArrayItem(get(st.s[i], "ports"), 0);
			assert_int_equal(get(port, "port")->valueint, 80);
			assert_string_equal(get(port, "protocol")->valuestring, "TCP");
		}
		if (!strcmp(tc->cluster_ip, "None"))
			assert_non_null(get(get(get(st.s[0], "metadata"), "labels"), EPS_LABEL_HL));
		else
			assert_null(get(get(get(st.s[0], "metadata"), "labels"), EPS_LABEL_HL));
		store_free(&st);
		cJSON_Delete(svc);
		cJSON_Delete(p);
	}
}

/* ---- TestReconcile1EndpointSlice: existing slices before a sync with no pods ---------------- */
static void t_one_slice(void **state)
{
	(void)state;
	cJSON *svc = svc4();
	/* an existing placeholder: no action */
	{
		struct store st = {0};
		reconcile(&st, svc, NULL, 0, 100, NULL);
		reconcile(&st, svc, NULL, 0, 100, NULL);
		assert_int_equal(st.created + st.updated + st.deleted, 0);
		store_free(&st);
	}
	/* an existing slice with endpoints, now none desired: updated into the placeholder */
	{
		struct store st = {0};
		cJSON *p = pod(1, true, 1, false);
		reconcile(&st, svc, &p, 1, 100, NULL);
		reconcile(&st, svc, NULL, 0, 100, NULL);
		assert_int_equal(st.updated, 1);
		assert_int_equal(st.created + st.deleted, 0);
		assert_int_equal(st.n, 1);
		assert_int_equal(cJSON_GetArraySize(get(st.s[0], "endpoints")), 0);
		cJSON_Delete(p);
		store_free(&st);
	}
	/* an existing placeholder with other labels: replaced (updated) */
	{
		struct store st = {0};
		reconcile(&st, svc, NULL, 0, 100, NULL);
		cJSON *l = (cJSON *)get(get(st.s[0], "metadata"), "labels");
		cJSON_AddStringToObject(l, "extra", "x");
		reconcile(&st, svc, NULL, 0, 100, NULL);
		assert_int_equal(st.updated, 1);
		assert_int_equal(st.created + st.deleted, 0);
		assert_null(get(get(get(st.s[0], "metadata"), "labels"), "extra"));
		store_free(&st);
	}
	cJSON_Delete(svc);
}

/* ---- TestReconcileManyPods ------------------------------------------------------------------ */
static void t_many_pods(void **state)
{
	(void)state;
	struct store st = {0};
	cJSON *svc = svc4(), *pods[250];
	for (int i = 0; i < 250; i++)
		pods[i] = pod(i, i % 3 != 0, 1, false);
	reconcile(&st, svc, pods, 250, 100, NULL);
	assert_int_equal(st.created, 3);
	assert_int_equal(st.updated + st.deleted, 0);
	expect_lengths(&st, (int[]){100, 100, 50}, 3);
	/* not-ready pods are in, not ready */
	int not_ready = 0;
	for (size_t s = 0; s < st.n; s++) {
		const cJSON *ep;
		cJSON_ArrayForEach(ep, get(st.s[s], "endpoints")) not_ready +=
		        !cJSON_IsTrue(get(get(ep, "conditions"), "ready"));
	}
	assert_int_equal(not_ready, 84);
	/* and again: nothing to do */
	reconcile(&st, svc, pods, 250, 100, NULL);
	assert_int_equal(st.created + st.updated + st.deleted, 0);
	free_pods(pods, 250);
	store_free(&st);
	cJSON_Delete(svc);
}

/* ---- TestReconcileEndpointSlicesSomePreexisting: 62 + 61 existing, 127 to add ---------------- */
static void t_some_preexisting(void **state)
{
	(void)state;
	struct store st = {0};
	cJSON *svc = svc4(), *pods[250];
	for (int i = 0; i < 250; i++)
		pods[i] = pod(i, i % 3 != 0, 1, false);
	preexisting(&st, svc, pods, 1, 246, 4);
	preexisting(&st, svc, pods, 3, 246, 4);
	reconcile(&st, svc, pods, 250, 100, NULL);
	assert_int_equal(st.created, 1);
	assert_int_equal(st.updated, 1);
	assert_int_equal(st.deleted, 0);
	expect_lengths(&st, (int[]){100, 89, 61}, 3);
	free_pods(pods, 250);
	store_free(&st);
	cJSON_Delete(svc);
}

/* ---- TestReconcileEndpointSlicesSomePreexistingWorseAllocation ------------------------------ */
/* 300 pods; slices of 1/3 (100, all desired ... first 99 + one stale) and the rest: upstream
 * fills the changed slices first, then creates */
static void t_some_preexisting_worse(void **state)
{
	(void)state;
	struct store st = {0};
	cJSON *svc = svc4(), *pods[300], *other[300];
	for (int i = 0; i < 300; i++)
		pods[i] = pod(i, i % 3 != 0, 1, false);
	/* slice 1: pods 0..98 and a pod no longer desired; slice 2: pods 99..197 and another */
	for (int i = 0; i < 300; i++)
		other[i] = pod(1000 + i, true, 1, false);
	cJSON *s1[100], *s2[100];
	for (int i = 0; i < 99; i++) {
		s1[i] = pods[i];
		s2[i] = pods[99 + i];
	}
	s1[99] = other[0];
	s2[99] = other[1];
	struct store tmp = {0};
	reconcile(&tmp, svc, s1, 100, 100, NULL);
	st.s[st.n++] = tmp.s[0];
	tmp = (struct store){.seq = 50};
	reconcile(&tmp, svc, s2, 100, 100, NULL);
	st.s[st.n++] = tmp.s[0];
	st.seq = 60;
	reconcile(&st, svc, pods, 300, 100, NULL);
	/* both changed slices updated (filled back to 100), one new slice of 100 */
	assert_int_equal(st.updated, 2);
	assert_int_equal(st.created, 1);
	assert_int_equal(st.deleted, 0);
	expect_lengths(&st, (int[]){100, 100, 100}, 3);
	free_pods(pods, 300);
	free_pods(other, 300);
	store_free(&st);
	cJSON_Delete(svc);
}

/* ---- TestReconcileEndpointSlicesUpdating: readiness changes update in place ----------------- */
static void t_updating(void **state)
{
	(void)state;
	struct store st = {0};
	cJSON *svc = svc4(), *pods[250];
	for (int i = 0; i < 250; i++)
		pods[i] = pod(i, i % 3 != 0, 1, false);
	reconcile(&st, svc, pods, 250, 100, NULL);
	expect_lengths(&st, (int[]){100, 100, 50}, 3);
	/* every pod ready now */
	for (int i = 0; i < 250; i += 3) {
		cJSON_Delete(pods[i]);
		pods[i] = pod(i, true, 1, false);
	}
	reconcile(&st, svc, pods, 250, 100, NULL);
	assert_int_equal(st.created + st.deleted, 0);
	assert_int_equal(st.updated, 3);
	expect_lengths(&st, (int[]){100, 100, 50}, 3);
	for (size_t s = 0; s < st.n; s++) {
		const cJSON *ep;
		cJSON_ArrayForEach(ep, get(st.s[s], "endpoints"))
		        assert_true(cJSON_IsTrue(get(get(ep, "conditions"), "ready")));
	}
	free_pods(pods, 250);
	store_free(&st);
	cJSON_Delete(svc);
}

/* ---- TestReconcileEndpointSlicesServicesLabelsUpdating / ServicesReservedLabels ------------- */
static void t_service_labels(void **state)
{
	(void)state;
	struct store st = {0};
	cJSON *svc = svc4(), *pods[250];
	for (int i = 0; i < 250; i++)
		pods[i] = pod(i, true, 1, false);
	reconcile(&st, svc, pods, 250, 100, NULL);
	/* reserved labels on the Service change nothing */
	cJSON *l = cJSON_AddObjectToObject((cJSON *)get(svc, "metadata"), "labels");
	cJSON_AddStringToObject(l, EPS_LABEL_SVC, "bad");
	cJSON_AddStringToObject(l, EPS_LABEL_MGD, "bad");
	cJSON_AddStringToObject(l, EPS_LABEL_HL, "");
	reconcile(&st, svc, pods, 250, 100, NULL);
	assert_int_equal(st.created + st.updated + st.deleted, 0);
	/* a new label is copied to every slice */
	cJSON_AddStringToObject(l, "new-label", "bar");
	reconcile(&st, svc, pods, 250, 100, NULL);
	assert_int_equal(st.updated, 3);
	assert_int_equal(st.created + st.deleted, 0);
	for (size_t s = 0; s < st.n; s++) {
		const cJSON *sl = get(get(st.s[s], "metadata"), "labels");
		assert_string_equal(get(sl, "new-label")->valuestring, "bar");
		assert_string_equal(get(sl, EPS_LABEL_SVC)->valuestring, "foo");
		assert_string_equal(get(sl, EPS_LABEL_MGD)->valuestring, EPS_MANAGED_BY);
		assert_null(get(sl, EPS_LABEL_HL));
	}
	free_pods(pods, 250);
	store_free(&st);
	cJSON_Delete(svc);
}

/* ---- TestReconcileEndpointSlicesRecycling: all pods replaced: 3 updates, no create/delete ---- */
static void t_recycling(void **state)
{
	(void)state;
	struct store st = {0};
	cJSON *svc = svc4(), *pods[300];
	for (int i = 0; i < 300; i++)
		pods[i] = pod(i, true, 1, false);
	reconcile(&st, svc, pods, 300, 100, NULL);
	expect_lengths(&st, (int[]){100, 100, 100}, 3);
	free_pods(pods, 300);
	for (int i = 0; i < 300; i++)
		pods[i] = pod(1000 + i, true, 1, false);
	reconcile(&st, svc, pods, 300, 100, NULL);
	assert_int_equal(st.updated, 3);
	assert_int_equal(st.created + st.deleted, 0);
	expect_lengths(&st, (int[]){100, 100, 100}, 3);
	free_pods(pods, 300);
	store_free(&st);
	cJSON_Delete(svc);
}

/* ---- TestReconcileEndpointSlicesUpdatePacking ---------------------------------------------- */
/* slices of 80 and 70 desired; 50 new pods: the changed slice is filled first, the rest into the
 * unchanged slice closest to full when it fits */
static void t_update_packing(void **state)
{
	(void)state;
	struct store st = {0};
	cJSON *svc = svc4(), *pods[200];
	for (int i = 0; i < 200; i++)
		pods[i] = pod(i, true, 1, false);
	preexisting(&st, svc, pods, 0, 80, 1);
	preexisting(&st, svc, pods, 80, 150, 1);
	/* remove pod 0 (slice 1 changes); add pods 150..169 (20 new) */
	reconcile(&st, svc, pods + 1, 169, 100, NULL);
	assert_int_equal(st.updated, 1);
	assert_int_equal(st.created + st.deleted, 0);
	expect_lengths(&st, (int[]){99, 70}, 2);
	free_pods(pods, 200);
	store_free(&st);
	cJSON_Delete(svc);
}

/* ---- TestReconcileEndpointSlicesReplaceDeprecated: an "IP" slice is replaced ---------------- */
static void t_replace_deprecated(void **state)
{
	(void)state;
	struct store st = {0};
	cJSON *svc = svc4(), *pods[10];
	for (int i = 0; i < 10; i++)
		pods[i] = pod(i, true, 1, false);
	reconcile(&st, svc, pods, 10, 100, NULL);
	cJSON_ReplaceItemInObject(st.s[0], "addressType", cJSON_CreateString("IP"));
	reconcile(&st, svc, pods, 10, 100, NULL);
	assert_int_equal(st.created, 1);
	assert_int_equal(st.deleted, 1);
	assert_int_equal(st.updated, 0);
	assert_int_equal(st.n, 1);
	assert_string_equal(get(st.s[0], "addressType")->valuestring, "IPv4");
	free_pods(pods, 10);
	store_free(&st);
	cJSON_Delete(svc);
}

/* ---- TestReconcileEndpointSlicesRecreation: a slice owned by an older Service of that name --- */
static void t_recreation(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		bool owned;
		int created, updated, deleted;
	} cases[] = {
	        {"existing-slice-owned", true, 0, 1, 0},
	        {"existing-slice-not-owned", false, 1, 0, 1},
	};
	for (size_t c = 0; c < 2; c++) {
		struct store st = {0};
		cJSON *svc = svc4(), *p = pod(1, true, 1, false), *other = pod(2, true, 1, false);
		reconcile(&st, svc, &other, 1, 100, NULL);
		if (!cases[c].owned) {
			cJSON *ref = cJSON_GetArrayItem(
			        get(get(st.s[0], "metadata"), "ownerReferences"), 0);
			cJSON_ReplaceItemInObject(ref, "uid", cJSON_CreateString("old-uid"));
		}
		reconcile(&st, svc, &p, 1, 100, NULL);
		if (st.created != cases[c].created || st.updated != cases[c].updated ||
		    st.deleted != cases[c].deleted)
			fail_msg("%s: %d/%d/%d", cases[c].name, st.created, st.updated, st.deleted);
		store_free(&st);
		cJSON_Delete(svc);
		cJSON_Delete(p);
		cJSON_Delete(other);
	}
}

/* ---- TestReconcileEndpointSlicesNamedPorts: named target ports resolved per pod ------------- */
static void t_named_ports(void **state)
{
	(void)state;
	struct store st = {0};
	cJSON *svc =
	        parse("{\"metadata\":{\"name\":\"foo\",\"namespace\":\"" NS "\",\"uid\":\"u\"},"
	              "\"spec\":{\"selector\":{\"foo\":\"bar\"},\"clusterIP\":\"10.0.0.1\","
	              "\"ipFamilies\":[\"IPv4\"],\"ports\":[{\"name\":\"http\",\"port\":80,"
	              "\"targetPort\":\"http\",\"protocol\":\"TCP\"}]}}");
	cJSON *pods[300];
	for (int i = 0; i < 300; i++) {
		pods[i] = pod(i, true, 1, false);
		cJSON *cp = cJSON_GetArrayItem(
		        get(cJSON_GetArrayItem(get(get(pods[i], "spec"), "containers"), 0),
		            "ports"),
		        0);
		cJSON_ReplaceItemInObject(cp, "containerPort", cJSON_CreateNumber(8080 + i % 5));
	}
	reconcile(&st, svc, pods, 300, 100, NULL);
	assert_int_equal(st.created, 5);
	expect_lengths(&st, (int[]){60, 60, 60, 60, 60}, 5);
	int seen = 0;
	for (size_t s = 0; s < st.n; s++) {
		const cJSON *p = cJSON_GetArrayItem(get(st.s[s], "ports"), 0);
		assert_string_equal(get(p, "name")->valuestring, "http");
		seen |= 1 << (get(p, "port")->valueint - 8080);
	}
	assert_int_equal(seen, 0x1f);
	free_pods(pods, 300);
	store_free(&st);
	cJSON_Delete(svc);
}

/* ---- TestReconcileMaxEndpointsPerSlice ------------------------------------------------------ */
static void t_max_per_slice(void **state)
{
	(void)state;
	static const struct {
		int max, pods, slices;
	} cases[] = {{50, 250, 5}, {100, 250, 3}, {1000, 250, 1}, {1, 10, 10}};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct store st = {0};
		cJSON *svc = svc4(), *pods[250];
		for (int i = 0; i < cases[c].pods; i++)
			pods[i] = pod(i, true, 1, false);
		reconcile(&st, svc, pods, (size_t)cases[c].pods, cases[c].max, NULL);
		assert_int_equal(st.n, cases[c].slices);
		for (size_t s = 0; s < st.n; s++)
			assert_true(cJSON_GetArraySize(get(st.s[s], "endpoints")) <= cases[c].max);
		free_pods(pods, (size_t)cases[c].pods);
		store_free(&st);
		cJSON_Delete(svc);
	}
}

/* ---- TestReconcilerPodMissingNode ------------------------------------------------------------ */
static void t_missing_node(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		bool pnra, existing;
		int want_eps, skipped;
	} cases[] = {
	        {"Create and publishNotReadyAddresses is false", false, false, 0, 1},
	        {"Create and publishNotReadyAddresses is true", true, false, 1, 0},
	        {"Update and publishNotReadyAddresses is false", false, true, 0, 1},
	        {"Update and publishNotReadyAddresses is true", true, true, 1, 0},
	};
	for (size_t c = 0; c < 4; c++) {
		struct store st = {0};
		cJSON *svc = service("[\"IPv4\"]", "10.0.0.10", cases[c].pnra);
		cJSON *p = pod(1, true, 1, false);
		struct eps_plan plan;
		if (cases[c].existing)
			reconcile(&st, svc, &p, 1, 100, NULL);
		cJSON_ReplaceItemInObject((cJSON *)get(p, "spec"), "nodeName",
		                          cJSON_CreateString("node-missing"));
		reconcile(&st, svc, &p, 1, 100, &plan);
		if (plan.skipped_pods != cases[c].skipped)
			fail_msg("%s: skipped %d", cases[c].name, plan.skipped_pods);
		if (cases[c].skipped)
			assert_non_null(strstr(plan.err, "Node node-missing Not Found"));
		assert_int_equal(st.n, 1);
		assert_int_equal(cJSON_GetArraySize(get(st.s[0], "endpoints")), cases[c].want_eps);
		eps_plan_free(&plan);
		store_free(&st);
		cJSON_Delete(svc);
		cJSON_Delete(p);
	}
}

/* ---- TestReconcileTerminatingEndpoints (the conditions of podToEndpoint) --------------------- */
static void t_terminating(void **state)
{
	(void)state;
	static const struct {
		bool pnra, ready, terminating;
		bool want_ready, want_serving, want_terminating;
	} cases[] = {
	        {false, true, false, true, true, false},
	        {false, false, false, false, false, false},
	        {false, true, true, false, true, true},
	        {false, false, true, false, false, true},
	        {true, false, false, true, false, false},
	        {true, true, true, true, true, true},
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct store st = {0};
		cJSON *svc = service("[\"IPv4\"]", "10.0.0.10", cases[c].pnra);
		cJSON *p = pod(1, cases[c].ready, 1, cases[c].terminating);
		reconcile(&st, svc, &p, 1, 100, NULL);
		const cJSON *ep = cJSON_GetArrayItem(get(st.s[0], "endpoints"), 0);
		assert_non_null(ep);
		const cJSON *cd = get(ep, "conditions");
		assert_int_equal(cJSON_IsTrue(get(cd, "ready")), cases[c].want_ready);
		assert_int_equal(cJSON_IsTrue(get(cd, "serving")), cases[c].want_serving);
		assert_int_equal(cJSON_IsTrue(get(cd, "terminating")), cases[c].want_terminating);
		store_free(&st);
		cJSON_Delete(svc);
		cJSON_Delete(p);
	}
}

/* terminal pods and pods without an IP are left out (ShouldPodBeInEndpoints); the hostname is
 * set when hostname and subdomain match the Service (ShouldSetHostname) */
static void t_pod_filters(void **state)
{
	(void)state;
	struct store st = {0};
	cJSON *svc = svc4(), *p[3];
	p[0] = pod(1, true, 1, false);
	cJSON_ReplaceItemInObject((cJSON *)get(p[0], "status"), "phase",
	                          cJSON_CreateString("Failed"));
	p[1] = pod(2, true, 0, false);
	cJSON_DeleteItemFromObject((cJSON *)get(p[1], "status"), "podIP");
	p[2] = pod(3, true, 1, false);
	cJSON_AddStringToObject((cJSON *)get(p[2], "spec"), "hostname", "h3");
	cJSON_AddStringToObject((cJSON *)get(p[2], "spec"), "subdomain", "foo");
	reconcile(&st, svc, p, 3, 100, NULL);
	assert_int_equal(st.n, 1);
	assert_int_equal(cJSON_GetArraySize(get(st.s[0], "endpoints")), 1);
	const cJSON *ep = cJSON_GetArrayItem(get(st.s[0], "endpoints"), 0);
	assert_string_equal(get(get(ep, "targetRef"), "name")->valuestring, "pod3");
	assert_string_equal(get(ep, "hostname")->valuestring, "h3");
	store_free(&st);
	free_pods(p, 3);
	cJSON_Delete(svc);
}

/* no creates while the Service is being deleted (finalize) */
static void t_service_deleting(void **state)
{
	(void)state;
	struct store st = {0};
	cJSON *svc = svc4(), *p = pod(1, true, 1, false);
	cJSON_AddStringToObject((cJSON *)get(svc, "metadata"), "deletionTimestamp",
	                        "2026-01-01T00:00:00Z");
	reconcile(&st, svc, &p, 1, 100, NULL);
	assert_int_equal(st.n, 0);
	store_free(&st);
	cJSON_Delete(svc);
	cJSON_Delete(p);
}

/* the trigger-time annotation is set on writes, removed when there is none */
static void t_trigger_annotation(void **state)
{
	(void)state;
	cJSON *svc = svc4(), *p = pod(1, true, 1, false);
	struct eps_plan plan;
	assert_int_equal(eps_reconcile(svc, (const cJSON *const *)&p, 1, NULL, 0,
	                               "2026-01-01T00:00:01Z", 100, nodes, NULL, &plan),
	                 0);
	assert_int_equal(plan.n, 1);
	const cJSON *ann = get(get(plan.v[0].obj, "metadata"), "annotations");
	assert_string_equal(get(ann, EPS_ANN_TRIGGER)->valuestring, "2026-01-01T00:00:01Z");
	eps_plan_free(&plan);
	cJSON_Delete(svc);
	cJSON_Delete(p);
}

/* ---- the trackers -----------------------------------------------------------------------------
 */
static bool is_gone(void *ud, const char *name, const char *uid)
{
	assert_string_equal(name, "slice-a");
	assert_string_equal(uid, "a");
	return *(bool *)ud;
}

static void t_tracker_stale(void **state)
{
	(void)state;
	struct eps_tracker *t;
	const char *uids[2] = {"a", "b"};
	int64_t gens[2] = {1, 1};
	assert_int_equal(eps_tracker_new(&t), 0);
	bool gone = false;
	/* nothing tracked: never stale */
	assert_false(eps_tracker_stale(t, "ns/s", uids, gens, 2, NULL, NULL));
	eps_tracker_update(t, "ns/s", "slice-a", "a", 2);
	/* the cache holds generation 1 of a slice this worker wrote as 2 */
	assert_true(eps_tracker_stale(t, "ns/s", uids, gens, 2, NULL, NULL));
	gens[0] = 2;
	assert_false(eps_tracker_stale(t, "ns/s", uids, gens, 2, NULL, NULL));
	/* a written slice the cache does not have yet (still at the apiserver) */
	assert_true(eps_tracker_stale(t, "ns/s", uids + 1, gens + 1, 1, is_gone, &gone));
	/* ... or deleted by someone else: its entry goes, not stale */
	gone = true;
	assert_false(eps_tracker_stale(t, "ns/s", uids + 1, gens + 1, 1, is_gone, &gone));
	gone = false;
	assert_false(eps_tracker_stale(t, "ns/s", uids + 1, gens + 1, 1, is_gone, &gone));
	eps_tracker_update(t, "ns/s", "slice-a", "a", 2);
	/* a deleted slice still in the cache; then gone */
	eps_tracker_expect_deletion(t, "ns/s", "slice-b", "b");
	assert_true(eps_tracker_stale(t, "ns/s", uids, gens, 2, NULL, NULL));
	assert_false(eps_tracker_stale(t, "ns/s", uids, gens, 1, NULL, NULL));
	assert_false(eps_tracker_stale(t, "ns/s", uids, gens, 1, NULL, NULL));
	eps_tracker_delete_service(t, "ns/s");
	assert_false(eps_tracker_stale(t, "ns/s", uids, gens, 0, NULL, NULL));
	eps_tracker_free(t);
}

static void t_tracker_trigger(void **state)
{
	(void)state;
	struct eps_tracker *t;
	const char *names[2] = {"p1", "p2"};
	long long times[2] = {100, 200};
	assert_int_equal(eps_tracker_new(&t), 0);
	/* a new Service: its creation time */
	assert_int_equal(eps_tracker_trigger_time(t, "ns/s", names, times, 2, 50), 50);
	/* nothing changed: none */
	assert_int_equal(eps_tracker_trigger_time(t, "ns/s", names, times, 2, 50), 0);
	/* p2 changed: its time; then p1 and p2: the earlier */
	times[1] = 300;
	assert_int_equal(eps_tracker_trigger_time(t, "ns/s", names, times, 2, 50), 300);
	times[0] = 310;
	times[1] = 305;
	assert_int_equal(eps_tracker_trigger_time(t, "ns/s", names, times, 2, 50), 305);
	/* a pod that went away and came back with an older time: not a change */
	assert_int_equal(eps_tracker_trigger_time(t, "ns/s", names, times, 1, 50), 0);
	eps_tracker_free(t);
}

/* ---- pods from the cache (podlist.h) ----------------------------------------------------------
 * A pod as the apiserver sends it -> informerd's decoder -> the arena record -> the worker's
 * view -> eps_pod_json: the reconciler must make the same slices from the rebuilt pod as from
 * the original, for every field it reads. */
static cJSON *via_cache(const cJSON *orig)
{
	cJSON *dup = cJSON_Duplicate(orig, true);
	char *txt;
	struct kube_pod *kp = NULL;
	struct shm_rec_enc e = {0};
	struct shm_record_in in;
	struct shm_obj o, tmp;
	struct shm_pod_view v;
	cJSON *j;

	/* a record needs a resourceVersion (the reconciler reads none) */
	cJSON_AddStringToObject((cJSON *)get(dup, "metadata"), "resourceVersion", "1");
	txt = cJSON_PrintUnformatted(dup);
	cJSON_Delete(dup);
	assert_non_null(txt);
	assert_int_equal(kube_decode_pod(txt, strlen(txt), 0, &kp), 0);
	assert_int_equal(shm_rec_build(&e, 0, SHM_RECORD_POD, kp, &in), 0);
	tmp = (struct shm_obj){.kind = in.kind,
	                       .ns = in.ns,
	                       .name = in.name,
	                       .uid = in.uid,
	                       .rv = in.rv,
	                       .labels = in.labels,
	                       .n_labels = in.n_labels,
	                       .owners = in.owners,
	                       .n_owners = in.n_owners,
	                       .payload = in.payload,
	                       .payload_len = in.payload_len};
	assert_int_equal(shm_obj_clone(&tmp, &o), 0);
	assert_int_equal(shm_pod_view_init(&o, &v), 0);
	j = eps_pod_json(&v.pod);
	assert_non_null(j);
	shm_pod_view_free(&v);
	shm_rec_enc_release(&e);
	kube_object_free(kp);
	free(txt);
	return j;
}

static void same_slices(const cJSON *svc, cJSON **pods, size_t n)
{
	cJSON *cached[16];
	struct store a = {0}, b = {0};
	struct eps_plan pa, pb;

	assert_true(n <= 16);
	for (size_t i = 0; i < n; i++) {
		cached[i] = via_cache(pods[i]);
		assert_int_equal(eps_pod_ready(cached[i]), eps_pod_ready(pods[i]));
		assert_int_equal(eps_pod_trigger_time(cached[i]), eps_pod_trigger_time(pods[i]));
	}
	reconcile(&a, svc, pods, n, 2, &pa);
	reconcile(&b, svc, cached, n, 2, &pb);
	assert_int_equal(pa.skipped_pods, pb.skipped_pods);
	assert_string_equal(pa.err, pb.err);
	assert_int_equal(a.n, b.n);
	assert_true(a.n > 0);
	for (size_t i = 0; i < a.n; i++) {
		if (!cJSON_Compare(a.s[i], b.s[i], true)) {
			char *x = cJSON_Print(a.s[i]), *y = cJSON_Print(b.s[i]);
			fprintf(stderr, "from the apiserver:\n%s\nfrom the cache:\n%s\n", x, y);
			free(x);
			free(y);
			fail();
		}
	}
	eps_plan_free(&pa);
	eps_plan_free(&pb);
	store_free(&a);
	store_free(&b);
	free_pods(cached, n);
}

static void t_pods_from_cache(void **state)
{
	(void)state;
	cJSON *pods[12];
	size_t n = 0;
	/* the reconciler tests' pods: ready, not ready, dual-stack, terminating */
	pods[n++] = pod(1, true, 1, false);
	pods[n++] = pod(2, false, 1, false);
	pods[n++] = pod(3, true, 2, false);
	pods[n++] = pod(4, true, 2, true);
	pods[n++] = pod(5, false, 1, true);
	/* hostname and subdomain (the Service's name), a sidecar's named UDP port and a name
	 * the containers also have (theirs wins), an init container that is no sidecar, a second
	 * container; a node not in the cache */
	pods[n++] =
	        parse("{\"metadata\":{\"name\":\"h1\",\"namespace\":\"" NS "\",\"uid\":\"u-h1\","
	              "\"labels\":{\"foo\":\"bar\"}},\"spec\":{\"nodeName\":\"node-2\","
	              "\"hostname\":\"web-0\",\"subdomain\":\"foo\","
	              "\"initContainers\":[{\"name\":\"s\",\"restartPolicy\":\"Always\","
	              "\"ports\":[{\"name\":\"dns\",\"containerPort\":53,\"protocol\":\"UDP\"},"
	              "{\"name\":\"http\",\"containerPort\":9999}]},"
	              "{\"name\":\"i\",\"ports\":[{\"name\":\"http\",\"containerPort\":1}]}],"
	              "\"containers\":[{\"name\":\"a\"},{\"name\":\"b\",\"ports\":[{\"name\":"
	              "\"http\",\"containerPort\":8080,\"protocol\":\"TCP\"}]}]},"
	              "\"status\":{\"phase\":\"Running\",\"podIP\":\"10.1.0.7\",\"podIPs\":"
	              "[{\"ip\":\"10.1.0.7\"},{\"ip\":\"fd00::7\"}],\"conditions\":[{\"type\":"
	              "\"Ready\",\"status\":\"True\",\"lastTransitionTime\":"
	              "\"2026-03-04T05:06:07Z\"}]}}");
	pods[n++] = parse("{\"metadata\":{\"name\":\"lost\",\"namespace\":\"" NS "\","
	                  "\"uid\":\"u-l\"},\"spec\":{\"nodeName\":\"missing\"},"
	                  "\"status\":{\"phase\":\"Pending\",\"podIP\":\"10.1.0.8\","
	                  "\"podIPs\":[{\"ip\":\"10.1.0.8\"}]}}");
	/* terminal, and without an IP: left out */
	pods[n++] = parse("{\"metadata\":{\"name\":\"done\",\"namespace\":\"" NS "\","
	                  "\"uid\":\"u-d\"},\"spec\":{\"nodeName\":\"node-1\"},"
	                  "\"status\":{\"phase\":\"Succeeded\",\"podIP\":\"10.1.0.9\","
	                  "\"podIPs\":[{\"ip\":\"10.1.0.9\"}]}}");
	pods[n++] = parse("{\"metadata\":{\"name\":\"noip\",\"namespace\":\"" NS "\","
	                  "\"uid\":\"u-n\"},\"spec\":{\"nodeName\":\"node-1\"},"
	                  "\"status\":{\"phase\":\"Pending\"}}");

	cJSON *svcs[] = {
	        svc4(),
	        service("[\"IPv6\"]", "fd00::10", true),
	        service(NULL, "None", false), /* headless without families: both */
	        parse("{\"metadata\":{\"name\":\"foo\",\"namespace\":\"" NS "\",\"uid\":"
	              "\"svc-uid\",\"creationTimestamp\":\"2026-01-01T00:00:00Z\"},\"spec\":"
	              "{\"selector\":{\"foo\":\"bar\"},\"clusterIP\":\"10.0.0.10\","
	              "\"ipFamilies\":[\"IPv4\"],\"publishNotReadyAddresses\":true,\"ports\":["
	              "{\"name\":\"web\",\"port\":80,\"targetPort\":\"http\",\"protocol\":"
	              "\"TCP\"},{\"name\":\"dns\",\"port\":53,\"targetPort\":\"dns\","
	              "\"protocol\":\"UDP\"}]}}"),
	};
	for (size_t i = 0; i < sizeof(svcs) / sizeof(svcs[0]); i++) {
		same_slices(svcs[i], pods, n);
		cJSON_Delete(svcs[i]);
	}
	free_pods(pods, n);
}

/* ---- trafficDistribution: trafficdist_test.go's TestReconcileHints -------------------------- */
/* an endpoint: address, zone and node (NULL: none), ready, hints as JSON (NULL: none) */
static cJSON *hep(const char *addr, const char *zone, const char *node, bool ready,
                  const char *hints)
{
	char buf[512];
	snprintf(buf, sizeof(buf),
	         "{\"addresses\":[\"%s\"]%s%s%s%s%s%s,"
	         "\"conditions\":{\"ready\":%s}%s%s}",
	         addr, zone ? ",\"zone\":\"" : "", zone ? zone : "", zone ? "\"" : "",
	         node ? ",\"nodeName\":\"" : "", node ? node : "", node ? "\"" : "",
	         ready ? "true" : "false", hints ? ",\"hints\":" : "", hints ? hints : "");
	return parse(buf);
}

static cJSON *hslice(const char *name, cJSON *e1, cJSON *e2)
{
	cJSON *s = cJSON_CreateObject(), *eps;
	cJSON_AddItemToObject(s, "metadata", cJSON_CreateObject());
	cJSON_AddStringToObject((cJSON *)get(s, "metadata"), "name", name);
	eps = cJSON_AddArrayToObject(s, "endpoints");
	cJSON_AddItemToArray(eps, e1);
	if (e2)
		cJSON_AddItemToArray(eps, e2);
	return s;
}

#define ZH(z) "{\"forZones\":[{\"name\":\"" z "\"}]}"

/* ReconcileHints over three lists with the exposed steps: returns how many unchanged slices
 * moved to update (appended to upd from *n_upd) */
static size_t hints_lists(enum eps_hints mode, cJSON **cre, size_t n_cre, cJSON **upd,
                          size_t *n_upd, cJSON **unch, size_t *n_unch)
{
	size_t moved = 0, j = 0;
	for (size_t i = 0; i < *n_unch; i++) {
		if (eps_hints_stale(unch[i], mode)) {
			upd[(*n_upd)++] = cJSON_Duplicate(unch[i], true);
			cJSON_Delete(unch[i]);
			moved++;
		} else {
			unch[j++] = unch[i];
		}
	}
	*n_unch = j;
	for (size_t i = 0; i < n_cre; i++)
		assert_int_equal(eps_hints_apply(cre[i], mode), 0);
	for (size_t i = 0; i < *n_upd; i++)
		assert_int_equal(eps_hints_apply(upd[i], mode), 0);
	return moved;
}

/* the hints of endpoint i of slice s, as compact JSON ("-" none) */
static char *hints_of(const cJSON *s, int i)
{
	const cJSON *h = get(cJSON_GetArrayItem(get(s, "endpoints"), i), "hints");
	return h ? cJSON_PrintUnformatted(h) : strdup("-");
}

static void expect_hints(const cJSON *s, int i, const char *want)
{
	char *h = hints_of(s, i);
	assert_string_equal(h, want);
	free(h);
}

static void free_all(cJSON **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cJSON_Delete(v[i]);
}

static cJSON *svc_td(const char *td, const char *annotations)
{
	cJSON *svc = svc4();
	if (td)
		cJSON_AddStringToObject((cJSON *)get(svc, "spec"), "trafficDistribution", td);
	if (annotations)
		cJSON_AddItemToObject((cJSON *)get(svc, "metadata"), "annotations",
		                      parse(annotations));
	return svc;
}

static void t_hints_mode(void **state)
{
	(void)state;
	static const struct {
		const char *td, *ann;
		enum eps_hints want;
	} cases[] = {
	        {NULL, NULL, EPS_HINTS_REMOVE},
	        {"", NULL, EPS_HINTS_REMOVE},
	        {"Unknown", NULL, EPS_HINTS_REMOVE},
	        {"PreferClose", NULL, EPS_HINTS_ZONE},
	        {"PreferSameZone", NULL, EPS_HINTS_ZONE},
	        {"PreferSameNode", NULL, EPS_HINTS_ZONE_NODE},
	        /* the topology annotation asking for Auto takes precedence */
	        {"PreferClose", "{\"service.kubernetes.io/topology-mode\":\"Auto\"}",
	         EPS_HINTS_REMOVE},
	        {"PreferClose", "{\"service.kubernetes.io/topology-aware-hints\":\"auto\"}",
	         EPS_HINTS_REMOVE},
	        {"PreferClose", "{\"service.kubernetes.io/topology-mode\":\"Disabled\"}",
	         EPS_HINTS_ZONE},
	        /* the deprecated key, when present, decides over topology-mode */
	        {"PreferClose",
	         "{\"service.kubernetes.io/topology-aware-hints\":\"Disabled\","
	         "\"service.kubernetes.io/topology-mode\":\"Auto\"}",
	         EPS_HINTS_ZONE},
	        {"PreferSameNode",
	         "{\"service.kubernetes.io/topology-aware-hints\":\"\","
	         "\"service.kubernetes.io/topology-mode\":\"Auto\"}",
	         EPS_HINTS_ZONE_NODE},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *svc = svc_td(cases[i].td, cases[i].ann);
		assert_int_equal(eps_hints_mode(svc), cases[i].want);
		cJSON_Delete(svc);
	}
}

static void t_trafficdist_hints(void **state)
{
	(void)state;
	cJSON *cre[4], *upd[8], *unch[4];
	size_t n_upd, n_unch;

	/* should set zone hints with PreferClose */
	cre[0] = hslice("c0", hep("10.0.0.1", "zone-a", "node-1", true, NULL),
	                hep("10.0.0.2", "zone-b", "node-2", true, NULL));
	cre[1] = hslice("c1", hep("10.0.0.3", "zone-a", "node-3", true, NULL),
	                hep("10.0.0.4", "zone-b", "node-4", true, NULL));
	upd[0] = hslice("u0", hep("10.0.0.5", "zone-a", "node-5", true, NULL),
	                hep("10.0.0.6", "zone-a", "node-6", true, NULL));
	upd[1] = hslice("u1", hep("10.0.0.7", "zone-b", "node-7", true, NULL),
	                hep("10.0.0.8", "zone-c", "node-8", true, NULL));
	n_upd = 2, n_unch = 0;
	assert_int_equal(hints_lists(EPS_HINTS_ZONE, cre, 2, upd, &n_upd, unch, &n_unch), 0);
	expect_hints(cre[0], 0, ZH("zone-a"));
	expect_hints(cre[0], 1, ZH("zone-b"));
	expect_hints(cre[1], 0, ZH("zone-a"));
	expect_hints(cre[1], 1, ZH("zone-b"));
	expect_hints(upd[0], 0, ZH("zone-a"));
	expect_hints(upd[0], 1, ZH("zone-a"));
	expect_hints(upd[1], 0, ZH("zone-b"));
	expect_hints(upd[1], 1, ZH("zone-c"));
	free_all(cre, 2);
	free_all(upd, n_upd);

	/* should correct incorrect hints with PreferClose */
	upd[0] = hslice("u0", hep("10.0.0.1", "zone-a", "node-1", true, ZH("zone-b")), NULL);
	unch[0] = hslice("n0", hep("10.0.0.2", "zone-b", "node-2", true, ZH("zone-c")), NULL);
	unch[1] = hslice("n1", hep("10.0.0.3", "zone-c", "node-3", true, NULL), NULL);
	n_upd = 1, n_unch = 2;
	assert_int_equal(hints_lists(EPS_HINTS_ZONE, NULL, 0, upd, &n_upd, unch, &n_unch), 2);
	assert_int_equal(n_upd, 3);
	assert_int_equal(n_unch, 0);
	expect_hints(upd[0], 0, ZH("zone-a"));
	expect_hints(upd[1], 0, ZH("zone-b"));
	expect_hints(upd[2], 0, ZH("zone-c"));
	free_all(upd, n_upd);

	/* unready endpoints should not trigger updates */
	unch[0] = hslice("n0", hep("10.0.0.2", "zone-b", "node-2", false, NULL), NULL);
	n_upd = 0, n_unch = 1;
	assert_int_equal(hints_lists(EPS_HINTS_ZONE, NULL, 0, upd, &n_upd, unch, &n_unch), 0);
	assert_int_equal(n_unch, 1);
	expect_hints(unch[0], 0, "-");
	free_all(unch, n_unch);

	/* should remove hints when trafficDistribution is unrecognized (or unset: same mode) */
	cre[0] = hslice("c0", hep("10.0.0.1", "zone-a", "node-1", true, ZH("zone-a")),
	                hep("10.0.0.2", "zone-b", "node-2", true, ZH("zone-b")));
	upd[0] = hslice("u0", hep("10.0.0.5", "zone-a", "node-5", true, ZH("zone-a")), NULL);
	unch[0] = hslice("n0", hep("10.0.0.6", "zone-b", "node-6", true, ZH("zone-b")), NULL);
	unch[1] = hslice("n1", hep("10.0.0.7", "zone-b", "node-7", true, NULL), NULL);
	n_upd = 1, n_unch = 2;
	assert_int_equal(hints_lists(EPS_HINTS_REMOVE, cre, 1, upd, &n_upd, unch, &n_unch), 1);
	assert_int_equal(n_unch, 1); /* n1 had no hints: it stays unchanged */
	expect_hints(cre[0], 0, "-");
	expect_hints(cre[0], 1, "-");
	expect_hints(upd[0], 0, "-");
	expect_hints(upd[1], 0, "-");
	free_all(cre, 1);
	free_all(upd, n_upd);
	free_all(unch, n_unch);

	/* PreferSameNode: zone and node hints; an endpoint without a zone gets the node hint
	 * only; PreferClose finds a node hint stale and drops it; no zone and no node: none */
	cre[0] = hslice("c0", hep("10.0.0.1", "zone-a", "node-1", true, NULL),
	                hep("10.0.0.2", NULL, "node-2", true, NULL));
	assert_int_equal(eps_hints_apply(cre[0], EPS_HINTS_ZONE_NODE), 0);
	expect_hints(cre[0], 0,
	             "{\"forZones\":[{\"name\":\"zone-a\"}],\"forNodes\":[{\"name\":\"node-1\"}]}");
	expect_hints(cre[0], 1, "{\"forNodes\":[{\"name\":\"node-2\"}]}");
	assert_false(eps_hints_stale(cre[0], EPS_HINTS_ZONE_NODE));
	assert_true(eps_hints_stale(cre[0], EPS_HINTS_ZONE));
	assert_true(eps_hints_stale(cre[0], EPS_HINTS_REMOVE));
	assert_int_equal(eps_hints_apply(cre[0], EPS_HINTS_ZONE), 0);
	expect_hints(cre[0], 0, ZH("zone-a"));
	expect_hints(cre[0], 1, "-");
	assert_false(eps_hints_stale(cre[0], EPS_HINTS_ZONE));
	assert_true(eps_hints_stale(cre[0], EPS_HINTS_ZONE_NODE));
	free_all(cre, 1);
	/* a zone hint on an endpoint with no zone is stale under PreferClose */
	cre[0] = hslice("c0", hep("10.0.0.1", NULL, NULL, true, ZH("zone-a")), NULL);
	assert_true(eps_hints_stale(cre[0], EPS_HINTS_ZONE));
	assert_int_equal(eps_hints_apply(cre[0], EPS_HINTS_ZONE), 0);
	expect_hints(cre[0], 0, "-");
	assert_false(eps_hints_stale(cre[0], EPS_HINTS_ZONE));
	free_all(cre, 1);
	/* two zone hints where one is wanted: stale */
	cre[0] = hslice("c0",
	                hep("10.0.0.1", "zone-a", NULL, true,
	                    "{\"forZones\":[{\"name\":\"zone-a\"},{\"name\":\"zone-b\"}]}"),
	                NULL);
	assert_true(eps_hints_stale(cre[0], EPS_HINTS_ZONE));
	free_all(cre, 1);
}

/* ---- TestReconcile_TrafficDistribution: node-0 zone-a {pod0}, node-1 zone-b {pod1..3},
 * node-2 zone-c {pod4, pod5} ----------------------------------------------------------------- */
static int zoned_nodes(void *ud, const char *name, const char **ret)
{
	static const char *const zones[] = {"zone-a", "zone-b", "zone-c"};
	(void)ud;
	if (strncmp(name, "node-", 5) || name[5] < '0' || name[5] > '2' || name[6])
		return -ENOENT;
	*ret = zones[name[5] - '0'];
	return 0;
}

/* ready pods pod0..pod<n-1>, pod i on node-<node_of[i]> */
static void zoned_pods(cJSON **pods, const int *node_of, int n)
{
	char node[16];
	for (int i = 0; i < n; i++) {
		pods[i] = pod(i, true, 1, false);
		snprintf(node, sizeof(node), "node-%d", node_of[i]);
		cJSON_ReplaceItemInObject((cJSON *)get(pods[i], "spec"), "nodeName",
		                          cJSON_CreateString(node));
	}
}

static void set_ready(cJSON *p, bool ready)
{
	cJSON *c = cJSON_GetArrayItem((cJSON *)get(get(p, "status"), "conditions"), 0);
	cJSON_ReplaceItemInObject(c, "status", cJSON_CreateString(ready ? "True" : "False"));
}

static void reconcile_zoned(struct store *st, const cJSON *svc, cJSON **pods, size_t n)
{
	struct eps_plan p;
	st->created = st->updated = st->deleted = 0;
	st->n_order = 0;
	assert_int_equal(eps_reconcile(svc, (const cJSON *const *)pods, n,
	                               (const cJSON *const *)st->s, st->n, NULL, 100, zoned_nodes,
	                               NULL, &p),
	                 0);
	apply(st, &p);
	eps_plan_free(&p);
}

/* endpoints per zone hint ("" none) over the store's slices, as "a=1,b=3,c=2,-=0" */
static void hint_counts(struct store *st, char *buf, size_t len, int *cross_zone)
{
	int c[4] = {0};
	*cross_zone = 0;
	for (size_t i = 0; i < st->n; i++) {
		const cJSON *e;
		cJSON_ArrayForEach(e, get(st->s[i], "endpoints"))
		{
			const cJSON *z = get(get(e, "hints"), "forZones");
			const char *zn =
			        cJSON_GetArraySize(z) == 1
			                ? get(cJSON_GetArrayItem(z, 0), "name")->valuestring
			                : NULL;
			c[zn ? zn[5] - 'a' : 3]++;
			if (zn && strcmp(zn, get(e, "zone")->valuestring))
				(*cross_zone)++;
		}
	}
	snprintf(buf, len, "a=%d,b=%d,c=%d,-=%d", c[0], c[1], c[2], c[3]);
}

static void t_traffic_distribution(void **state)
{
	(void)state;
	static const struct {
		const char *td, *ann, *want;
	} cases[] = {
	        {"PreferClose", "{\"service.kubernetes.io/topology-aware-hints\":\"Disabled\"}",
	         "a=1,b=3,c=2,-=0"},
	        {"PreferSameZone", NULL, "a=1,b=3,c=2,-=0"},
	        {"PreferSameNode", NULL, "a=1,b=3,c=2,-=0"},
	        {"", "{\"service.kubernetes.io/topology-aware-hints\":\"\"}", "a=0,b=0,c=0,-=6"},
	        /* topology-aware routing is not done: the annotation wins over
	         * trafficDistribution and, with no topology cache, no hints are set */
	        {"PreferClose", "{\"service.kubernetes.io/topology-aware-hints\":\"Auto\"}",
	         "a=0,b=0,c=0,-=6"},
	};
	static const int node_of[6] = {0, 1, 1, 1, 2, 2};
	cJSON *pods[6];
	char buf[64];
	int cross;

	zoned_pods(pods, node_of, 6);
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct store st = {0};
		cJSON *svc = svc_td(cases[k].td, cases[k].ann);
		reconcile_zoned(&st, svc, pods, 6);
		assert_int_equal(st.created, 1);
		assert_int_equal(st.updated + st.deleted, 0);
		hint_counts(&st, buf, sizeof(buf), &cross);
		assert_string_equal(buf, cases[k].want);
		assert_int_equal(cross, 0);
		/* PreferSameNode adds each endpoint's node */
		const cJSON *e = cJSON_GetArrayItem(get(st.s[0], "endpoints"), 0);
		const cJSON *fn = get(get(e, "hints"), "forNodes");
		if (!strcmp(cases[k].td, "PreferSameNode")) {
			assert_int_equal(cJSON_GetArraySize(fn), 1);
			assert_string_equal(get(cJSON_GetArrayItem(fn, 0), "name")->valuestring,
			                    get(e, "nodeName")->valuestring);
		} else {
			assert_null(fn);
		}
		/* a second sync with nothing changed writes nothing */
		reconcile_zoned(&st, svc, pods, 6);
		assert_int_equal(st.created + st.updated + st.deleted, 0);
		store_free(&st);
		cJSON_Delete(svc);
	}
	free_pods(pods, 6);
}

/* A slice whose only change is its hints is updated, and the cache's copy is not modified:
 * trafficDistribution set on a Service with slices, changed, then removed. */
static void t_traffic_distribution_changes(void **state)
{
	(void)state;
	static const int node_of[3] = {0, 1, 2};
	struct store st = {0};
	cJSON *pods[3], *svc = svc_td(NULL, NULL), *svc_pc = svc_td("PreferClose", NULL),
	                *svc_sn = svc_td("PreferSameNode", NULL);
	char buf[64], *before, *after;
	int cross;

	zoned_pods(pods, node_of, 3);
	/* pod2 not ready: it gets no hint, and does not make the slice stale */
	set_ready(pods[2], false);
	reconcile_zoned(&st, svc, pods, 3);
	assert_int_equal(st.created, 1);
	hint_counts(&st, buf, sizeof(buf), &cross);
	assert_string_equal(buf, "a=0,b=0,c=0,-=3");

	/* PreferClose set: the one slice is updated with hints only; the input is untouched */
	before = cJSON_PrintUnformatted(st.s[0]);
	{
		struct eps_plan p;
		assert_int_equal(eps_reconcile(svc_pc, (const cJSON *const *)pods, 3,
		                               (const cJSON *const *)st.s, st.n, NULL, 100,
		                               zoned_nodes, NULL, &p),
		                 0);
		after = cJSON_PrintUnformatted(st.s[0]);
		assert_string_equal(before, after);
		free(after);
		assert_int_equal(p.n, 1);
		assert_int_equal(p.v[0].op, EPS_UPDATE);
		apply(&st, &p);
		eps_plan_free(&p);
	}
	free(before);
	hint_counts(&st, buf, sizeof(buf), &cross);
	assert_string_equal(buf, "a=1,b=1,c=0,-=1");
	reconcile_zoned(&st, svc_pc, pods, 3);
	assert_int_equal(st.created + st.updated + st.deleted, 0);

	/* PreferSameNode: node hints added (an update); PreferClose again: removed (update) */
	reconcile_zoned(&st, svc_sn, pods, 3);
	assert_int_equal(st.updated, 1);
	assert_int_equal(st.created + st.deleted, 0);
	reconcile_zoned(&st, svc_sn, pods, 3);
	assert_int_equal(st.created + st.updated + st.deleted, 0);
	reconcile_zoned(&st, svc_pc, pods, 3);
	assert_int_equal(st.updated, 1);
	assert_null(
	        get(get(cJSON_GetArrayItem(get(st.s[0], "endpoints"), 0), "hints"), "forNodes"));

	/* pod2 becomes ready: the endpoint changes, the slice is updated and gets its hint */
	set_ready(pods[2], true);
	reconcile_zoned(&st, svc_pc, pods, 3);
	assert_int_equal(st.updated, 1);
	hint_counts(&st, buf, sizeof(buf), &cross);
	assert_string_equal(buf, "a=1,b=1,c=1,-=0");

	/* trafficDistribution removed: every hint removed in one update, then nothing */
	reconcile_zoned(&st, svc, pods, 3);
	assert_int_equal(st.updated, 1);
	assert_int_equal(st.created + st.deleted, 0);
	hint_counts(&st, buf, sizeof(buf), &cross);
	assert_string_equal(buf, "a=0,b=0,c=0,-=3");
	reconcile_zoned(&st, svc, pods, 3);
	assert_int_equal(st.created + st.updated + st.deleted, 0);

	store_free(&st);
	free_pods(pods, 3);
	cJSON_Delete(svc);
	cJSON_Delete(svc_pc);
	cJSON_Delete(svc_sn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(t_empty),
	        cmocka_unit_test(t_one_pod),
	        cmocka_unit_test(t_one_slice),
	        cmocka_unit_test(t_many_pods),
	        cmocka_unit_test(t_some_preexisting),
	        cmocka_unit_test(t_some_preexisting_worse),
	        cmocka_unit_test(t_updating),
	        cmocka_unit_test(t_service_labels),
	        cmocka_unit_test(t_recycling),
	        cmocka_unit_test(t_update_packing),
	        cmocka_unit_test(t_replace_deprecated),
	        cmocka_unit_test(t_recreation),
	        cmocka_unit_test(t_named_ports),
	        cmocka_unit_test(t_max_per_slice),
	        cmocka_unit_test(t_missing_node),
	        cmocka_unit_test(t_terminating),
	        cmocka_unit_test(t_pod_filters),
	        cmocka_unit_test(t_service_deleting),
	        cmocka_unit_test(t_trigger_annotation),
	        cmocka_unit_test(t_tracker_stale),
	        cmocka_unit_test(t_tracker_trigger),
	        cmocka_unit_test(t_pods_from_cache),
	        cmocka_unit_test(t_hints_mode),
	        cmocka_unit_test(t_trafficdist_hints),
	        cmocka_unit_test(t_traffic_distribution),
	        cmocka_unit_test(t_traffic_distribution_changes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
