/* SPDX-License-Identifier: Apache-2.0 */
/* kube/tests/test-decode.c - decoders against hand-written fixtures (not yet captured from the
 * real cluster) and against malformed input. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kube/model.h"

static char *slurp(const char *name, size_t *len)
{
	char path[512];
	snprintf(path, sizeof(path), "kube/tests/fixtures/%s", name);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	b[n] = 0;
	*len = (size_t)n;
	return b;
}

static kube_time_t T(const char *s)
{
	kube_time_t t;
	assert_int_equal(kube_time_parse(s, strlen(s), &t), 0);
	return t;
}

static void test_pod_running(void **state)
{
	(void)state;
	size_t len;
	char *b = slurp("pod-running.json", &len);
	struct kube_pod *p = NULL;
	assert_int_equal(kube_decode_pod(b, len, 0, &p), 0);
	assert_string_equal(p->meta.name, "web-7d4b9c8f6d-x2k9p");
	assert_string_equal(p->meta.generate_name, "web-7d4b9c8f6d-");
	assert_string_equal(p->meta.namespace, "default");
	assert_string_equal(p->meta.uid, "5b0a2f6e-8c1d-4e2b-9f3a-1d2c3b4a5e6f");
	assert_string_equal(p->meta.resource_version, "123456");
	assert_int_equal(p->meta.generation, 1);
	assert_int_equal(p->meta.creation_timestamp, T("2026-11-30T10:15:02Z"));
	assert_int_equal(p->meta.deletion_timestamp, 0);
	assert_int_equal(p->meta.n_labels, 3);
	assert_string_equal(kube_labels_get(p->meta.labels, p->meta.n_labels, "tier"), "frontend");
	/* only the controller annotation is kept by default */
	assert_int_equal(p->meta.n_annotations, 1);
	assert_int_equal(p->deletion_cost, -50);
	assert_true(p->has_deletion_cost);
	assert_int_equal(p->meta.n_owner_refs, 1);
	const struct kube_owner_ref *c = kube_controller_of(&p->meta);
	assert_non_null(c);
	assert_string_equal(c->kind, "ReplicaSet");
	assert_string_equal(c->uid, "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0");
	assert_int_equal(c->block_owner_deletion, 1);
	assert_string_equal(p->node_name, "kwok-node-3");
	assert_int_equal(p->phase, KUBE_POD_RUNNING);
	assert_true(p->ready);
	assert_int_equal(p->ready_transition_time, T("2026-11-30T10:15:09Z"));
	assert_int_equal(p->max_restarts, 5);
	assert_int_equal(p->max_sidecar_restarts, 2);
	kube_object_free(p);

	/* all annotations on request */
	assert_int_equal(kube_decode_pod(b, len, KUBE_DECODE_ALL_ANNOTATIONS, &p), 0);
	assert_int_equal(p->meta.n_annotations, 2);
	kube_object_free(p);
	free(b);
}

static void test_pod_minimal(void **state)
{
	(void)state;
	const char *j =
	        "{\"metadata\":{\"name\":\"a\",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\","
	        "\"deletionGracePeriodSeconds\":30,\"finalizers\":[\"x/y\",\"z\"],"
	        "\"ownerReferences\":[{\"uid\":\"u\",\"name\":\"n\"}]},"
	        "\"spec\":{\"initContainers\":[{\"name\":\"i\"}]},"
	        "\"status\":{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"Ready\",\"status\":"
	        "\"False\"}],"
	        "\"initContainerStatuses\":[{\"name\":\"i\",\"restartCount\":9}]}}";
	struct kube_pod *p;
	assert_int_equal(kube_decode_pod(j, strlen(j), 0, &p), 0);
	assert_int_equal(p->phase, KUBE_POD_PENDING);
	assert_false(p->ready);
	assert_null(p->node_name);
	assert_int_equal(p->max_sidecar_restarts, 0); /* not a sidecar: no restartPolicy Always */
	assert_true(p->meta.has_deletion_grace_period_seconds);
	assert_int_equal(p->meta.deletion_grace_period_seconds, 30);
	assert_int_equal(p->meta.n_finalizers, 2);
	assert_string_equal(p->meta.finalizers[0], "x/y");
	assert_int_equal(p->meta.owner_refs[0].controller, -1);
	assert_null(kube_controller_of(&p->meta));
	assert_false(p->has_deletion_cost);
	kube_object_free(p);
}

/* has_ephemeral_volume: a volume with a non-null "ephemeral" (Go's nil pointer for null);
 * has_resource_claims: a spec.resourceClaims with an item. */
static void test_pod_volumes_claims(void **state)
{
	(void)state;
	static const struct {
		const char *spec;
		bool eph, claims;
	} cases[] = {
	        {"{}", false, false},
	        {"{\"volumes\":null,\"resourceClaims\":null}", false, false},
	        {"{\"volumes\":[],\"resourceClaims\":[]}", false, false},
	        {"{\"volumes\":[{\"name\":\"a\",\"emptyDir\":{}},{\"name\":\"b\","
	         "\"ephemeral\":null}]}",
	         false, false},
	        {"{\"volumes\":[{\"name\":\"a\",\"emptyDir\":{}},{\"ephemeral\":{},"
	         "\"name\":\"b\"}]}",
	         true, false},
	        {"{\"resourceClaims\":[{\"name\":\"c\"}],\"nodeName\":\"n\"}", false, true},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char js[512];
		struct kube_pod *p;
		snprintf(js, sizeof(js), "{\"metadata\":{\"name\":\"p\"},\"spec\":%s}",
		         cases[i].spec);
		assert_int_equal(kube_decode_pod(js, strlen(js), 0, &p), 0);
		assert_int_equal(p->has_ephemeral_volume, cases[i].eph);
		assert_int_equal(p->has_resource_claims, cases[i].claims);
		kube_object_free(p);
	}
}

/* spec.affinity's target node (kube_pod affinity_node) as upstream's GetTargetNodeName reads
 * it: the cases of its TestGetTargetNodeName (nodeName is a separate field here) and the term
 * and requirement order it returns at. */
static void test_pod_affinity_node(void **state)
{
	(void)state;
	/* the required terms, with ' for " */
	static const struct {
		const char *terms, *want;
	} cases[] = {
	        {"{'matchFields':[{'key':'metadata.name','operator':'In','values':['node-1']}]}",
	         "node-1"},
	        /* not unique: an error upstream, no target here */
	        {"{'matchFields':[{'key':'metadata.name','operator':'In','values':['n-1','n-2']}]}",
	         NULL},
	        {"{'matchFields':[{'key':'metadata.name','operator':'In','values':[]}]}", NULL},
	        /* no terms; a label requirement on the key; NotIn; another field: none */
	        {"", NULL},
	        {"{'matchExpressions':[{'key':'metadata.name','operator':'In','values':['x']}]}",
	         NULL},
	        {"{'matchFields':[{'key':'metadata.name','operator':'NotIn','values':['x']},"
	         "{'key':'metadata.uid','operator':'In','values':['y']}]}",
	         NULL},
	        /* the first such requirement over the terms in order decides, also when it fails */
	        {"{'matchFields':[{'key':'metadata.name','operator':'NotIn','values':['x']}]},"
	         "{'matchFields':[{'key':'metadata.name','operator':'In','values':['n-2']},"
	         "{'key':'metadata.name','operator':'In','values':['n-3']}]}",
	         "n-2"},
	        {"{'matchFields':[{'key':'metadata.name','operator':'In','values':['a','b']}]},"
	         "{'matchFields':[{'key':'metadata.name','operator':'In','values':['n-2']}]}",
	         NULL},
	        /* keys in another order and escaped as Go would decode them */
	        {"{'matchFields':[{'values':['n\\u002d9'],'operator':'In',"
	         "'key':'metadata\\u002ename'}]}",
	         "n-9"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char j[1024];
		int n = snprintf(
		        j, sizeof(j),
		        "{'metadata':{'name':'p'},'spec':{'affinity':{'podAffinity':{},"
		        "'nodeAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':"
		        "[{'weight':1,'preference':{'matchFields':[{'key':'metadata.name',"
		        "'operator':'In','values':['pref']}]}}],"
		        "'requiredDuringSchedulingIgnoredDuringExecution':"
		        "{'nodeSelectorTerms':[%s]}}}}}",
		        cases[i].terms);
		assert_true(n > 0 && (size_t)n < sizeof(j));
		for (char *c = j; *c; c++)
			if (*c == '\'')
				*c = '"';
		struct kube_pod *p;
		assert_int_equal(kube_decode_pod(j, (size_t)n, 0, &p), 0);
		if (cases[i].want)
			assert_string_equal(p->affinity_node, cases[i].want);
		else
			assert_null(p->affinity_node);
		assert_null(p->node_name);
		kube_object_free(p);
	}
	static const char *const none[] = {
	        "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"affinity\":null}}",
	        "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"affinity\":{\"nodeAffinity\":{}}}}",
	};
	struct kube_pod *p;
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(kube_decode_pod(none[i], strlen(none[i]), 0, &p), 0);
		assert_null(p->affinity_node);
		kube_object_free(p);
	}
	/* a known field of the wrong type is refused, as elsewhere */
	const char *bad =
	        "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"affinity\":{\"nodeAffinity\":"
	        "{\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":"
	        "[{\"matchFields\":[{\"key\":7}]}]}}}}}";
	assert_true(kube_decode_pod(bad, strlen(bad), 0, &p) < 0);
}

static void test_deletion_cost_parse(void **state)
{
	(void)state;
	int32_t v;
	assert_int_equal(kube_parse_deletion_cost("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(kube_parse_deletion_cost("-2147483648", &v), 0);
	assert_int_equal(v, INT32_MIN);
	assert_int_equal(kube_parse_deletion_cost("2147483647", &v), 0);
	assert_int_equal(kube_parse_deletion_cost("2147483648", &v), -EINVAL);
	assert_int_equal(kube_parse_deletion_cost("", &v), -EINVAL);
	assert_int_equal(kube_parse_deletion_cost("+5", &v), -EINVAL);
	assert_int_equal(kube_parse_deletion_cost("05", &v), -EINVAL);
	assert_int_equal(kube_parse_deletion_cost("-0", &v), 0); /* as upstream: '-' passes the */
	assert_int_equal(v, 0);                                  /* first-digit check */
	assert_int_equal(kube_parse_deletion_cost("-05", &v), 0);
	assert_int_equal(v, -5);
	assert_int_equal(kube_parse_deletion_cost("-", &v), -EINVAL);
	assert_int_equal(kube_parse_deletion_cost("-+5", &v), -EINVAL);
	assert_int_equal(kube_parse_deletion_cost("00", &v), -EINVAL);
	assert_int_equal(kube_parse_deletion_cost("-2147483649", &v), -EINVAL);
	assert_int_equal(kube_parse_deletion_cost("1e3", &v), -EINVAL);
	assert_int_equal(kube_parse_deletion_cost(" 1", &v), -EINVAL);
}

static void test_malformed(void **state)
{
	(void)state;
	static const struct {
		const char *j;
		int err;
	} cases[] = {
	        {"", -EBADMSG},
	        {"{", -EBADMSG},
	        {"{\"metadata\":{\"name\":\"a\"}", -EBADMSG},
	        {"{\"metadata\":{\"name\":\"a\",}}", -EBADMSG},
	        {"{\"metadata\" {}}", -EBADMSG},
	        {"{,\"a\":1}", -EBADMSG},
	        {"{\"a\":[1,]}", -EBADMSG},
	        {"{\"a\":[,1]}", -EBADMSG},
	        {"{\"a\":01}", -EBADMSG},
	        {"{\"a\":1.}", -EBADMSG},
	        {"{\"a\":tru}", -EBADMSG},
	        {"{\"a\":\"\\x\"}", -EBADMSG},
	        {"{\"a\":\"\\u12\"}", -EBADMSG},
	        {"{\"a\":\"tab\there\"}", -EBADMSG},
	        {"{} x", -EBADMSG},
	        {"{}{}", -EBADMSG},
	        {"[]", -EPROTO},
	        {"null", -EPROTO},
	        {"{\"metadata\":[]}", -EPROTO},
	        {"{\"metadata\":{\"name\":5}}", -EPROTO},
	        {"{\"metadata\":{\"generation\":1.5}}", -EPROTO},
	        {"{\"metadata\":{\"generation\":99999999999999999999}}", -EPROTO},
	        {"{\"status\":{\"containerStatuses\":[{\"restartCount\":2147483648}]}}", -EPROTO},
	        {"{\"metadata\":{\"creationTimestamp\":\"yesterday\"}}", -EPROTO},
	        {"{\"metadata\":{\"name\":\"a\\u0000b\"}}", -EBADMSG},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kube_pod *p = (void *)0x1;
		int r = kube_decode_pod(cases[i].j, strlen(cases[i].j), 0, &p);
		if (r != cases[i].err)
			fail_msg("case %zu %s: got %d want %d", i, cases[i].j, r, cases[i].err);
		assert_ptr_equal(p, (void *)0x1); /* untouched on failure */
	}
}

static void test_deep_nesting(void **state)
{
	(void)state;
	size_t n = 100000;
	char *b = malloc(2 * n + 64);
	size_t o = (size_t)snprintf(b, 64, "{\"spec\":{\"x\":");
	for (size_t i = 0; i < n; i++)
		b[o++] = '[';
	for (size_t i = 0; i < n; i++)
		b[o++] = ']';
	b[o++] = '}';
	b[o++] = '}';
	struct kube_pod *p;
	assert_int_equal(kube_decode_pod(b, o, 0, &p), -E2BIG);
	free(b);
	/* a nesting within the limit is fine */
	const char *ok = "{\"spec\":{\"x\":[[[[{\"a\":[{}]}]]]]}}";
	assert_int_equal(kube_decode_pod(ok, strlen(ok), 0, &p), 0);
	kube_object_free(p);
}

static void test_escapes(void **state)
{
	(void)state;
	const char *j = "{\"metadata\":{\"n\\u0061me\":\"caf\\u00e9 \\ud83d\\ude00 \\\"q\\\" \\/\","
	                "\"labels\":{\"a\\nb\":\"\\ud800x\"}}}";
	struct kube_pod *p;
	assert_int_equal(kube_decode_pod(j, strlen(j), 0, &p), 0);
	assert_string_equal(p->meta.name, "caf\xc3\xa9 \xf0\x9f\x98\x80 \"q\" /");
	assert_string_equal(p->meta.labels[0].key, "a\nb");
	assert_string_equal(p->meta.labels[0].value, "\xef\xbf\xbdx");
	kube_object_free(p);
}

static void test_time(void **state)
{
	(void)state;
	kube_time_t t;
	char buf[KUBE_TIME_BUF];
	assert_int_equal(kube_time_parse("2026-12-01T08:00:42Z", 20, &t), 0);
	assert_int_equal(t, 1796112042LL * 1000000000LL);
	kube_time_format(t, buf);
	assert_string_equal(buf, "2026-12-01T08:00:42Z");
	assert_int_equal(kube_time_parse("2026-12-01T08:00:42.123456789Z", 30, &t), 0);
	kube_microtime_format(t, buf);
	assert_string_equal(buf, "2026-12-01T08:00:42.123456Z");
	kube_time_format(t, buf);
	assert_string_equal(buf, "2026-12-01T08:00:42Z");
	assert_int_equal(kube_time_parse("2026-12-01T09:00:42+01:00", 25, &t), 0);
	assert_int_equal(t, 1796112042LL * 1000000000LL);
	assert_int_equal(kube_time_parse("2024-02-29T00:00:00Z", 20, &t), 0);
	assert_int_equal(kube_time_parse("2023-02-29T00:00:00Z", 20, &t), -EINVAL);
	assert_int_equal(kube_time_parse("2026-12-01T24:00:00Z", 20, &t), -EINVAL);
	assert_int_equal(kube_time_parse("2026-12-01T08:00:42", 19, &t), -EINVAL);
	assert_int_equal(kube_time_parse("2026-12-01T08:00:42.Z", 21, &t), -EINVAL);
	assert_int_equal(kube_time_parse("1969-12-31T23:59:59Z", 20, &t), -ERANGE);
	assert_int_equal(kube_time_parse("2026-12-01t08:00:42Z", 20, &t), -EINVAL);
	assert_int_equal(kube_time_parse("2000-01-01T00:00:00.000001Z", 27, &t), 0);
	kube_microtime_format(t, buf);
	assert_string_equal(buf, "2000-01-01T00:00:00.000001Z");
}

/* A ReplicationController reads as the ReplicaSet upstream converts it to: the map selector
 * becomes matchLabels, the template and status the same fields. */
static void test_replicationcontroller(void **state)
{
	(void)state;
	static const char rc[] =
	        "{\"kind\":\"ReplicationController\",\"apiVersion\":\"v1\",\"metadata\":{"
	        "\"name\":\"rc\",\"namespace\":\"ns\",\"uid\":\"u1\",\"generation\":3},"
	        "\"spec\":{\"replicas\":4,\"minReadySeconds\":7,\"selector\":{\"a\":\"1\","
	        "\"b\":\"2\"},\"template\":{\"metadata\":{\"labels\":{\"a\":\"1\",\"b\":"
	        "\"2\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}},"
	        "\"status\":{\"replicas\":2,\"fullyLabeledReplicas\":2,\"readyReplicas\":1,"
	        "\"availableReplicas\":1,\"observedGeneration\":2,\"conditions\":[{\"type\":"
	        "\"ReplicaFailure\",\"status\":\"True\",\"reason\":\"FailedCreate\"}]}}";
	struct kube_replicaset *rs = NULL;
	assert_int_equal(
	        kube_decode(KUBE_KIND_REPLICATIONCONTROLLER, rc, strlen(rc), 0, (void **)&rs), 0);
	assert_string_equal(rs->meta.name, "rc");
	assert_int_equal(rs->spec_replicas, 4);
	assert_int_equal(rs->min_ready_seconds, 7);
	assert_non_null(rs->selector);
	assert_int_equal(rs->selector->n_match_labels, 2);
	assert_int_equal(rs->selector->n_match_expressions, 0);
	assert_string_equal(rs->selector->match_labels[1].key, "b");
	assert_string_equal(rs->selector->match_labels[1].value, "2");
	assert_int_equal(rs->n_template_labels, 2);
	assert_true(rs->template_parts.valid);
	assert_non_null(rs->template_parts.spec);
	assert_int_equal(rs->status.replicas, 2);
	assert_int_equal(rs->status.ready_replicas, 1);
	assert_int_equal(rs->status.observed_generation, 2);
	assert_false(rs->status.has_terminating_replicas);
	assert_int_equal(rs->status.n_conditions, 1);
	assert_string_equal(rs->status.conditions[0].reason, "FailedCreate");
	kube_object_free(rs);

	/* the same text decoded as a ReplicaSet does not take the map as a selector */
	assert_int_equal(kube_decode(KUBE_KIND_REPLICASET, rc, strlen(rc), 0, (void **)&rs), 0);
	assert_non_null(rs->selector);
	assert_int_equal(rs->selector->n_match_labels, 0);
	kube_object_free(rs);

	/* a null selector stays nil (matches nothing); replicas absent is the API default 1 */
	static const char nil_sel[] =
	        "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"selector\":null}}";
	assert_int_equal(kube_decode(KUBE_KIND_REPLICATIONCONTROLLER, nil_sel, strlen(nil_sel), 0,
	                             (void **)&rs),
	                 0);
	assert_null(rs->selector);
	assert_int_equal(rs->spec_replicas, 1);
	kube_object_free(rs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_pod_running),
	        cmocka_unit_test(test_pod_minimal),
	        cmocka_unit_test(test_pod_affinity_node),
	        cmocka_unit_test(test_pod_volumes_claims),
	        cmocka_unit_test(test_deletion_cost_parse),
	        cmocka_unit_test(test_malformed),
	        cmocka_unit_test(test_deep_nesting),
	        cmocka_unit_test(test_escapes),
	        cmocka_unit_test(test_time),
	        cmocka_unit_test(test_replicationcontroller),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
