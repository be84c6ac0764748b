/* SPDX-License-Identifier: Apache-2.0 */
/* kube/tests/test-encode.c - request bodies, compared byte for byte with upstream's shapes. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kube/encode.h"
#include "kube/model.h"
#include "kube/tests/helpers.h"

static const struct kube_owner_ref RS_REF = {
        .api_version = "apps/v1",
        .kind = "ReplicaSet",
        .name = "web",
        .uid = "rs-uid",
        .controller = 1,
        .block_owner_deletion = 1,
};

#define EQ(expr, want)                                                                             \
	do {                                                                                       \
		int r_ = (expr);                                                                   \
		eq(r_, s, want);                                                                   \
	} while (0)

static void eq(int r, char *got, const char *want)
{
	assert_int_equal(r, 0);
	if (strcmp(got, want))
		fail_msg("got  %s\nwant %s", got, want);
	free(got);
}

static void test_patches(void **state)
{
	(void)state;
	char *s;
	EQ(kube_encode_adopt_patch(&RS_REF, "pod-uid", &s),
	   "{\"metadata\":{\"ownerReferences\":[{\"apiVersion\":\"apps/"
	   "v1\",\"kind\":\"ReplicaSet\","
	   "\"name\":\"web\",\"uid\":\"rs-uid\",\"controller\":true,\"blockOwnerDeletion\":true}],"
	   "\"uid\":\"pod-uid\"}}");
	const char *uids[] = {"o1", "o2"};
	EQ(kube_encode_release_patch("pod-uid", uids, 1, &s),
	   "{\"metadata\":{\"uid\":\"pod-uid\",\"ownerReferences\":[{\"$patch\":\"delete\",\"uid\":"
	   "\"o1\"}]}}");
	EQ(kube_encode_release_patch("d", uids, 2, &s),
	   "{\"metadata\":{\"uid\":\"d\",\"ownerReferences\":[{\"$patch\":\"delete\",\"uid\":"
	   "\"o1\"},"
	   "{\"$patch\":\"delete\",\"uid\":\"o2\"}]}}");
	EQ(kube_encode_unblock_patch("d", &RS_REF, 1, &s),
	   "{\"metadata\":{\"uid\":\"d\",\"ownerReferences\":[{\"apiVersion\":\"apps/"
	   "v1\",\"kind\":\"ReplicaSet\","
	   "\"name\":\"web\",\"uid\":\"rs-uid\",\"controller\":true,\"blockOwnerDeletion\":false}]}"
	   "}");
	const char *fin[] = {"orphan", "x/y"};
	EQ(kube_encode_finalizers_merge_patch("42", fin + 1, 1, &s),
	   "{\"metadata\":{\"resourceVersion\":\"42\",\"finalizers\":[\"x/y\"]}}");
	EQ(kube_encode_finalizers_merge_patch("42", NULL, 0, &s),
	   "{\"metadata\":{\"resourceVersion\":\"42\",\"finalizers\":null}}");
	EQ(kube_encode_owner_refs_merge_patch("42", NULL, 0, &s),
	   "{\"metadata\":{\"resourceVersion\":\"42\",\"ownerReferences\":null}}");
	struct kube_owner_ref plain = {.api_version = "v1",
	                               .kind = "ConfigMap",
	                               .name = "c",
	                               .uid = "cu",
	                               .controller = -1,
	                               .block_owner_deletion = -1};
	EQ(kube_encode_owner_refs_merge_patch("7", &plain, 1, &s),
	   "{\"metadata\":{\"resourceVersion\":\"7\",\"ownerReferences\":[{\"apiVersion\":\"v1\","
	   "\"kind\":"
	   "\"ConfigMap\",\"name\":\"c\",\"uid\":\"cu\"}]}}");
	assert_int_equal(kube_encode_adopt_patch(&RS_REF, NULL, &s), -EINVAL);
}

static void test_pod_from_template(void **state)
{
	(void)state;
	size_t len;
	char *b = fixture("replicaset.json", &len), *s;
	struct kube_replicaset *rs;
	assert_int_equal(kube_decode_replicaset(b, len, 0, &rs), 0);
	struct kube_owner_ref ref = {.api_version = "apps/v1",
	                             .kind = "ReplicaSet",
	                             .name = rs->meta.name,
	                             .uid = rs->meta.uid,
	                             .controller = 1,
	                             .block_owner_deletion = 1};
	assert_int_equal(kube_encode_pod_from_template(rs->template_json, rs->template_json_len,
	                                               rs->meta.name, &ref, &s),
	                 0);
	/* decode it back with our own decoder */
	struct kube_pod *p;
	assert_int_equal(kube_decode_pod(s, strlen(s), KUBE_DECODE_ALL_ANNOTATIONS, &p), 0);
	assert_null(p->meta.name);
	assert_string_equal(p->meta.generate_name, "web-7d4b9c8f6d-");
	assert_int_equal(p->meta.n_labels, 3);
	assert_int_equal(p->meta.n_annotations, 1);
	assert_int_equal(p->meta.n_finalizers, 1);
	assert_string_equal(p->meta.owner_refs[0].uid, rs->meta.uid);
	assert_int_equal(p->meta.owner_refs[0].controller, 1);
	assert_int_equal(p->meta.owner_refs[0].block_owner_deletion, 1);
	assert_non_null(strstr(s, "\"spec\":{\"containers\":[{\"name\":\"web\""));
	assert_null(strstr(s, "creationTimestamp"));
	kube_object_free(p);
	free(s);
	/* invalid controllerRef and missing labels */
	ref.block_owner_deletion = -1;
	assert_int_equal(kube_encode_pod_from_template(rs->template_json, rs->template_json_len,
	                                               "web", &ref, &s),
	                 -EINVAL);
	ref.block_owner_deletion = 1;
	const char *nolabels = "{\"metadata\":{},\"spec\":{}}";
	assert_int_equal(kube_encode_pod_from_template(nolabels, strlen(nolabels), "web", &ref, &s),
	                 -EINVAL);
	assert_int_equal(kube_encode_pod_from_template("{", 1, "web", &ref, &s), -EBADMSG);
	/* a name whose dashed prefix exceeds 253 chars uses the bare name */
	char longname[260];
	memset(longname, 'a', 253);
	longname[253] = 0;
	const char *t = "{\"metadata\":{\"labels\":{\"a\":\"b\"}}}";
	assert_int_equal(kube_encode_pod_from_template(t, strlen(t), longname, &ref, &s), 0);
	assert_int_equal(kube_decode_pod(s, strlen(s), 0, &p), 0);
	assert_string_equal(p->meta.generate_name, longname);
	kube_object_free(p);
	free(s);
	kube_object_free(rs);
	free(b);
}

static void test_status(void **state)
{
	(void)state;
	char *s, *put;
	kube_time_t t;
	assert_int_equal(kube_time_parse("2026-12-01T00:00:00Z", 20, &t), 0);
	struct kube_condition c = {.type = "ReplicaFailure",
	                           .status = "True",
	                           .reason = "FailedCreate",
	                           .message = "quota",
	                           .last_transition_time = t};
	struct kube_rs_status st = {.replicas = 3,
	                            .fully_labeled_replicas = 3,
	                            .ready_replicas = 1,
	                            .observed_generation = 5,
	                            .n_conditions = 1,
	                            .conditions = &c};
	EQ(kube_encode_rs_status_json(&st, &s),
	   "{\"replicas\":3,\"fullyLabeledReplicas\":3,\"readyReplicas\":1,\"observedGeneration\":"
	   "5,"
	   "\"conditions\":[{\"type\":\"ReplicaFailure\",\"status\":\"True\","
	   "\"lastTransitionTime\":"
	   "\"2026-12-01T00:00:00Z\",\"reason\":\"FailedCreate\",\"message\":\"quota\"}]}");
	/* a merge patch states every counter: an absent one would keep the server's old value */
	struct kube_rs_status zero = {0};
	EQ(kube_encode_rs_status_merge_patch("9", &zero, &s),
	   "{\"metadata\":{\"resourceVersion\":\"9\"},\"status\":{\"replicas\":0,"
	   "\"fullyLabeledReplicas\":0,\"readyReplicas\":0,\"availableReplicas\":0,"
	   "\"terminatingReplicas\":null,\"observedGeneration\":0,"
	   "\"conditions\":null}}");
	size_t len;
	char *b = fixture("replicaset.json", &len);
	assert_int_equal(kube_encode_rs_status_json(&st, &s), 0);
	assert_int_equal(kube_encode_status_put(b, len, s, &put), 0);
	struct kube_replicaset *rs;
	assert_int_equal(kube_decode_replicaset(put, strlen(put), 0, &rs), 0);
	assert_int_equal(rs->status.ready_replicas, 1);
	assert_false(rs->status.has_terminating_replicas);
	assert_string_equal(rs->meta.resource_version, "123400");
	assert_null(strstr(put, "managedFields"));
	kube_object_free(rs);
	free(put);
	free(s);
	free(b);
}

static void test_lease_event(void **state)
{
	(void)state;
	char *s;
	kube_time_t t;
	assert_int_equal(kube_time_parse("2026-12-01T12:00:00.654321Z", 27, &t), 0);
	struct kube_lease_spec sp = {.holder_identity = "h_1",
	                             .lease_duration_seconds = 15,
	                             .acquire_time = t,
	                             .renew_time = t,
	                             .lease_transitions = 2};
	EQ(kube_encode_lease("kube-system", "kube-controller-manager", "77", &sp, &s),
	   "{\"kind\":\"Lease\",\"apiVersion\":\"coordination.k8s.io/v1\",\"metadata\":{\"name\":"
	   "\"kube-controller-manager\",\"namespace\":\"kube-system\",\"resourceVersion\":\"77\"},"
	   "\"spec\":"
	   "{\"holderIdentity\":\"h_1\",\"leaseDurationSeconds\":15,\"acquireTime\":\"2026-12-"
	   "01T12:00:00.654321Z\","
	   "\"renewTime\":\"2026-12-01T12:00:00.654321Z\",\"leaseTransitions\":2}}");
	struct kube_lease_spec rel = {
	        .holder_identity = "", .lease_duration_seconds = 1, .lease_transitions = 2};
	EQ(kube_encode_lease("kube-system", "l", NULL, &rel, &s),
	   "{\"kind\":\"Lease\",\"apiVersion\":\"coordination.k8s.io/"
	   "v1\",\"metadata\":{\"name\":\"l\","
	   "\"namespace\":\"kube-system\"},\"spec\":{\"holderIdentity\":\"\","
	   "\"leaseDurationSeconds\":1,"
	   "\"acquireTime\":null,\"renewTime\":null,\"leaseTransitions\":2}}");
	struct kube_event ev = {.ns = "default",
	                        .kind = "ReplicaSet",
	                        .api_version = "apps/v1",
	                        .name = "web",
	                        .uid = "u",
	                        .resource_version = "5",
	                        .type = "Normal",
	                        .reason = "SuccessfulCreate",
	                        .message = "Created pod: web-abcde",
	                        .component = "replicaset-controller",
	                        .now = 0x1234};
	EQ(kube_encode_event(&ev, &s),
	   "{\"kind\":\"Event\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"web.1234\","
	   "\"namespace\":\"default\"},"
	   "\"involvedObject\":{\"kind\":\"ReplicaSet\",\"namespace\":\"default\",\"name\":\"web\","
	   "\"uid\":\"u\","
	   "\"apiVersion\":\"apps/"
	   "v1\",\"resourceVersion\":\"5\"},\"reason\":\"SuccessfulCreate\",\"message\":"
	   "\"Created pod: "
	   "web-abcde\",\"source\":{\"component\":\"replicaset-controller\"},\"firstTimestamp\":"
	   "\"1970-01-01T00:00:00Z\",\"lastTimestamp\":\"1970-01-01T00:00:00Z\",\"count\":1,"
	   "\"type\":\"Normal\","
	   "\"eventTime\":null,\"reportingComponent\":\"replicaset-controller\","
	   "\"reportingInstance\":\"\"}");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_patches),
	        cmocka_unit_test(test_pod_from_template),
	        cmocka_unit_test(test_status),
	        cmocka_unit_test(test_lease_event),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
