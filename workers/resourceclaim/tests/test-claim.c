/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/resourceclaim/tests/test-claim.c: the resourceclaim-controller's decisions against
 * upstream's pkg/controller/resourceclaim controller_test.go (v1.37.2) TestSyncHandler cases:
 * create (the claim body), create with admin access (the label), nop / recreate (the name in
 * the status), find-existing-claim-by-label, wrong-claim-owner, no-such-pod / pod-deleted (pod
 * done), stay-reserved-seen, clear-reserved-structured, clear-reserved-when-done,
 * remove-reserved, clear-reserved-structured-deleted / structured-deleted (deallocate and
 * finalizer), delete-claim-when-done (owning pod), add-reserved (reserved for pod), clean up
 * pod reservation with non-pod reservation present, flapping-resourceclaim-statuses (the
 * merged status apply); resourceclaim.Name / IsForPod from dynamic-resource-allocation; and the
 * generateName truncation.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "workers/resourceclaim/claim.h"

#define NS "my-namespace"

/* upstream's testPodWithResource: test-pod, uid uidpod1, claim acme-resource from my-template */
static cJSON *pod_with(const char *extra_status)
{
	char buf[1024];
	snprintf(buf, sizeof(buf),
	         "{\"metadata\":{\"name\":\"test-pod\",\"namespace\":\"" NS
	         "\",\"uid\":\"uidpod1\"},"
	         "\"spec\":{\"resourceClaims\":[{\"name\":\"acme-resource\","
	         "\"resourceClaimTemplateName\":\"my-template\"}]},\"status\":{%s}}",
	         extra_status ? extra_status : "");
	cJSON *p = cJSON_Parse(buf);
	assert_non_null(p);
	return p;
}

static const cJSON *pod_claim(const cJSON *pod, int i)
{
	return cJSON_GetArrayItem(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "spec"), "resourceClaims"), i);
}

static cJSON *parse(const char *s)
{
	cJSON *c = cJSON_Parse(s);
	assert_non_null(c);
	return c;
}

#define OWNER_POD1                                                                                 \
	"\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"test-pod\","      \
	"\"uid\":\"uidpod1\",\"controller\":true}]"

static void test_name(void **state)
{
	(void)state;
	char msg[256];
	const char *name;
	bool check;

	/* not yet in the status: ErrClaimNotFound */
	cJSON *pod = pod_with(NULL);
	assert_int_equal(rc_claim_name(pod, pod_claim(pod, 0), &name, &check, msg, sizeof(msg)),
	                 -ENOENT);
	assert_string_equal(msg, "pod \"" NS "/test-pod\": ResourceClaim not created yet");
	cJSON_Delete(pod);
	/* "nop": recorded, must check the owner */
	pod = pod_with("\"resourceClaimStatuses\":[{\"name\":\"acme-resource\","
	               "\"resourceClaimName\":\"test-pod-acme-resource-1\"}]");
	assert_int_equal(rc_claim_name(pod, pod_claim(pod, 0), &name, &check, msg, sizeof(msg)), 0);
	assert_string_equal(name, "test-pod-acme-resource-1");
	assert_true(check);
	cJSON_Delete(pod);
	/* recorded without a name: not needed */
	pod = pod_with("\"resourceClaimStatuses\":[{\"name\":\"acme-resource\"}]");
	assert_int_equal(rc_claim_name(pod, pod_claim(pod, 0), &name, &check, msg, sizeof(msg)), 0);
	assert_null(name);
	cJSON_Delete(pod);
	/* a claim named directly */
	cJSON *pc = parse("{\"name\":\"x\",\"resourceClaimName\":\"shared\"}");
	pod = pod_with(NULL);
	assert_int_equal(rc_claim_name(pod, pc, &name, &check, msg, sizeof(msg)), 0);
	assert_string_equal(name, "shared");
	assert_false(check);
	cJSON_Delete(pc);
	/* neither field: ErrAPIUnsupported */
	pc = parse("{\"name\":\"x\"}");
	assert_int_equal(rc_claim_name(pod, pc, &name, &check, msg, sizeof(msg)), -EINVAL);
	assert_string_equal(msg, "pod \"" NS "/test-pod\", spec.resourceClaim \"x\": none of the "
	                         "supported fields are set");
	cJSON_Delete(pc);
	cJSON_Delete(pod);
}

/* "wrong-claim-owner": a claim of that name without the pod as controller */
static void test_is_for_pod(void **state)
{
	(void)state;
	char msg[256];
	cJSON *pod = pod_with(NULL);
	cJSON *mine =
	        parse("{\"metadata\":{\"name\":\"c\",\"namespace\":\"" NS "\"," OWNER_POD1 "}}");
	cJSON *conflicting = parse(
	        "{\"metadata\":{\"name\":\"test-pod-acme-resource\",\"namespace\":\"" NS "\"}}");
	cJSON *other_ns =
	        parse("{\"metadata\":{\"name\":\"c\",\"namespace\":\"not-my-namespace\"," OWNER_POD1
	              "}}");

	assert_int_equal(rc_is_for_pod(pod, mine, msg, sizeof(msg)), 0);
	assert_int_equal(rc_is_for_pod(pod, conflicting, msg, sizeof(msg)), -EEXIST);
	assert_string_equal(msg, "ResourceClaim " NS "/test-pod-acme-resource was not created for "
	                         "Pod " NS "/test-pod (Pod is not owner)");
	assert_int_equal(rc_is_for_pod(pod, other_ns, msg, sizeof(msg)), -EEXIST);
	assert_string_equal(msg, "ResourceClaim not-my-namespace/c is not in the same namespace as "
	                         "Pod " NS "/test-pod");
	cJSON_Delete(pod);
	cJSON_Delete(mine);
	cJSON_Delete(conflicting);
	cJSON_Delete(other_ns);
}

/* "create" and "create with admin and feature gate on" */
static void test_claim_body(void **state)
{
	(void)state;
	cJSON *pod = pod_with(NULL);
	cJSON *tmpl = parse("{\"metadata\":{\"name\":\"my-template\"},\"spec\":{\"metadata\":{"
	                    "\"labels\":{\"l\":\"v\"},\"annotations\":{\"a\":\"b\"}},\"spec\":{"
	                    "\"devices\":{\"requests\":[{\"name\":\"req-0\",\"exactly\":{"
	                    "\"deviceClassName\":\"class\"}}]}}}}");
	char *body = NULL;

	assert_false(rc_needs_admin_access(tmpl));
	assert_int_equal(rc_claim_body(pod, "acme-resource", tmpl, &body), 0);
	cJSON *c = parse(body);
	const cJSON *m = cJSON_GetObjectItem(c, "metadata");
	assert_string_equal(cJSON_GetObjectItem(m, "generateName")->valuestring,
	                    "test-pod-acme-resource-");
	assert_null(cJSON_GetObjectItem(m, "name"));
	assert_string_equal(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(m, "annotations"), RC_POD_CLAIM_ANNOTATION)
	                ->valuestring,
	        "acme-resource");
	assert_string_equal(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(m, "annotations"), "a")->valuestring, "b");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(m, "labels"), "l")->valuestring,
	                    "v");
	const cJSON *o = cJSON_GetArrayItem(cJSON_GetObjectItem(m, "ownerReferences"), 0);
	assert_string_equal(cJSON_GetObjectItem(o, "kind")->valuestring, "Pod");
	assert_string_equal(cJSON_GetObjectItem(o, "uid")->valuestring, "uidpod1");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(o, "controller")));
	assert_null(cJSON_GetObjectItem(o, "blockOwnerDeletion"));
	assert_string_equal(
	        cJSON_GetObjectItem(
	                cJSON_GetObjectItem(
	                        cJSON_GetArrayItem(
	                                cJSON_GetObjectItem(
	                                        cJSON_GetObjectItem(cJSON_GetObjectItem(c, "spec"),
	                                                            "devices"),
	                                        "requests"),
	                                0),
	                        "exactly"),
	                "deviceClassName")
	                ->valuestring,
	        "class");
	/* the generated claim is the one findPodResourceClaim finds */
	cJSON_AddStringToObject(cJSON_GetObjectItem(c, "metadata"), "name",
	                        "test-pod-acme-resource-x");
	assert_true(rc_claim_generated_for(c, "uidpod1", "acme-resource"));
	assert_false(rc_claim_generated_for(c, "uidpod1", "other"));
	assert_false(rc_claim_generated_for(c, "uidpod2", "acme-resource"));
	cJSON_Delete(c);
	free(body);
	cJSON_Delete(tmpl);
	/* admin access: exactly.adminAccess, not a firstAvailable subrequest */
	tmpl = parse("{\"spec\":{\"spec\":{\"devices\":{\"requests\":[{\"name\":\"r\",\"exactly\":{"
	             "\"deviceClassName\":\"c\",\"adminAccess\":true}}]}}}}");
	assert_true(rc_needs_admin_access(tmpl));
	cJSON_Delete(tmpl);
	tmpl = parse("{\"spec\":{\"spec\":{\"devices\":{\"requests\":[{\"name\":\"r\","
	             "\"firstAvailable\":["
	             "{\"name\":\"s\",\"deviceClassName\":\"c\",\"adminAccess\":true}]}]}}}}");
	assert_false(rc_needs_admin_access(tmpl));
	cJSON_Delete(tmpl);
	/* no template spec, no pod uid */
	tmpl = parse("{}");
	assert_int_equal(rc_claim_body(pod, "acme-resource", tmpl, &body), -EINVAL);
	cJSON_Delete(tmpl);
	cJSON_Delete(pod);
}

static void test_generate_name(void **state)
{
	(void)state;
	char buf[128], pod[80], claim[80];

	assert_int_equal(rc_generate_name("p", "c", buf, sizeof(buf)), 4);
	assert_string_equal(buf, "p-c-");
	/* 40 + 20 + 2 = 62 > 57: 40*57/62 = 36 and 20*57/62 = 18 characters, no trailing '-' */
	memset(pod, 'p', 40);
	pod[40] = 0;
	memset(claim, 'c', 20);
	claim[20] = 0;
	assert_int_equal(rc_generate_name(pod, claim, buf, sizeof(buf)), 36 + 1 + 18);
	assert_int_equal(strspn(buf, "p"), 36);
	assert_string_equal(buf + 37, "cccccccccccccccccc");
	/* exactly 57: kept */
	memset(pod, 'p', 45);
	pod[45] = 0;
	memset(claim, 'c', 10);
	claim[10] = 0;
	assert_int_equal(rc_generate_name(pod, claim, buf, sizeof(buf)), 57);
	assert_int_equal(rc_generate_name(pod, claim, buf, 10), -ENAMETOOLONG);
}

static void test_pod_done(void **state)
{
	(void)state;
	assert_true(rc_pod_done("Succeeded", false, "node"));
	assert_true(rc_pod_done("Failed", false, ""));
	assert_true(rc_pod_done("Pending", true, ""));      /* deleted before scheduling */
	assert_false(rc_pod_done("Running", true, "node")); /* still stopping on its node */
	assert_false(rc_pod_done("Pending", false, ""));
	assert_false(rc_pod_needs_claims("Running", false, "node", true)); /* removed */
	assert_true(rc_pod_needs_claims("Running", false, "node", false));
}

/* a fake pod lister: name → state */
struct fake_pod {
	const char *name, *uid, *phase, *node;
	bool deleting;
};
struct fake {
	const struct fake_pod *pods;
	size_t n;
	int fail;
	int calls;
};

static int lookup(const char *ns, const char *name, struct rc_pod_info *ret, void *ud)
{
	struct fake *f = ud;
	(void)ns;
	f->calls++;
	if (f->fail)
		return f->fail;
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->pods[i].name, name)) {
			*ret = (struct rc_pod_info){RC_POD_CACHED, f->pods[i].uid, f->pods[i].phase,
			                            f->pods[i].node, f->pods[i].deleting};
			return 0;
		}
	ret->state = RC_POD_DELETED;
	return 0;
}

#define RESERVED_BOTH                                                                              \
	"\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"test-pod\",\"uid\":\"uidpod1\"},"      \
	"{\"resource\":\"pods\",\"name\":\"test-pod-II\",\"uid\":\"uidpod1-II\"}]"
#define ALLOCATION "\"allocation\":{\"devices\":{\"results\":[]}}"

static cJSON *claim(const char *meta_extra, const char *status)
{
	char buf[1024];
	snprintf(buf, sizeof(buf),
	         "{\"metadata\":{\"name\":\"test-pod-acme-resource\",\"namespace\":\"" NS "\"%s},"
	         "\"status\":{%s}}",
	         meta_extra, status);
	return parse(buf);
}

static int filter(const cJSON *c, const struct fake_pod *pods, size_t n, char **names)
{
	struct fake f = {pods, n, 0, 0};
	cJSON *valid = NULL, *e;
	int kept = rc_valid_reservations(c, lookup, &f, &valid);
	size_t len = 0;

	names[0] = calloc(1, 256);
	if (kept >= 0)
		cJSON_ArrayForEach(e, valid)
		{
			len += (size_t)snprintf(names[0] + len, 256 - len, "%s%s", len ? "," : "",
			                        cJSON_GetObjectItem(e, "name")->valuestring);
		}
	cJSON_Delete(valid);
	return kept;
}

/* stay-reserved-seen, remove-reserved, clear-reserved-*, non-pod reservation present */
static void test_reservations(void **state)
{
	(void)state;
	char *names;
	const struct fake_pod running = {"test-pod", "uidpod1", "Running", "worker", false};
	const struct fake_pod done = {"test-pod", "uidpod1", "Succeeded", "worker", false};
	const struct fake_pod replaced = {"test-pod", "other-uid", "Running", "worker", false};
	const struct fake_pod unscheduled_deleted = {"test-pod", "uidpod1", "Pending", "", true};
	cJSON *c = claim("", ALLOCATION "," RESERVED_BOTH);

	/* remove-reserved: test-pod-II is gone, test-pod stays */
	assert_int_equal(filter(c, &running, 1, &names), 1);
	assert_string_equal(names, "test-pod");
	free(names);
	/* clear-reserved-when-done, a replaced pod, one deleted before it was scheduled */
	assert_int_equal(filter(c, &done, 1, &names), 0);
	free(names);
	assert_int_equal(filter(c, &replaced, 1, &names), 0);
	free(names);
	assert_int_equal(filter(c, &unscheduled_deleted, 1, &names), 0);
	free(names);
	/* a lookup error fails the sync */
	struct fake f = {&running, 1, -EIO, 0};
	cJSON *valid = NULL;
	assert_int_equal(rc_valid_reservations(c, lookup, &f, &valid), -EIO);
	assert_null(valid);
	cJSON_Delete(c);

	/* clean up pod reservation with non-pod reservation present: the foo.com entry stays */
	c = claim("",
	          ALLOCATION ",\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"test-pod\","
	                     "\"uid\":\"uidpod1\"},{\"apiGroup\":\"foo.com\",\"resource\":\"foo\","
	                     "\"name\":\"foo\",\"uid\":\"123\"}]");
	assert_int_equal(filter(c, &done, 1, &names), 1);
	assert_string_equal(names, "foo");
	free(names);
	cJSON_Delete(c);
}

/* clear-reserved-structured: the last entry gone deallocates a claim with the finalizer; the
 * finalizer then goes */
static void test_update_bodies(void **state)
{
	(void)state;
	char *body = NULL;
	cJSON *c =
	        claim(",\"finalizers\":[\"x\",\"" RC_FINALIZER "\"]", ALLOCATION "," RESERVED_BOTH);

	assert_true(rc_has_finalizer(c));
	assert_int_equal(rc_status_update_body(c, cJSON_CreateArray(), &body), 0);
	cJSON *u = parse(body);
	free(body);
	assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(u, "status"), "allocation"));
	assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(u, "status"), "reservedFor"));
	assert_int_equal(rc_remove_finalizer_body(u, &body), 0);
	cJSON *f = parse(body);
	free(body);
	const cJSON *fs = cJSON_GetObjectItem(cJSON_GetObjectItem(f, "metadata"), "finalizers");
	assert_int_equal(cJSON_GetArraySize(fs), 1);
	assert_string_equal(cJSON_GetArrayItem(fs, 0)->valuestring, "x");
	assert_int_equal(rc_remove_finalizer_body(f, &body), -ENOENT);
	cJSON_Delete(f);
	cJSON_Delete(u);

	/* entries remain: the allocation stays */
	cJSON *keep = cJSON_CreateArray();
	cJSON_AddItemToArray(
	        keep, parse("{\"resource\":\"pods\",\"name\":\"test-pod\",\"uid\":\"uidpod1\"}"));
	assert_int_equal(rc_status_update_body(c, keep, &body), 0);
	u = parse(body);
	free(body);
	assert_true(rc_allocated(u));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(u, "status"),
	                                                        "reservedFor")),
	                 1);
	cJSON_Delete(u);
	cJSON_Delete(c);

	/* without the finalizer (not allocated by the scheduler) the allocation is not touched */
	c = claim("", ALLOCATION "," RESERVED_BOTH);
	assert_int_equal(rc_status_update_body(c, cJSON_CreateArray(), &body), 0);
	u = parse(body);
	free(body);
	assert_true(rc_allocated(u));
	cJSON_Delete(u);
	/* structured-deleted: deallocate */
	assert_int_equal(rc_deallocate_body(c, &body), 0);
	u = parse(body);
	free(body);
	assert_false(rc_allocated(u));
	cJSON_Delete(u);
	cJSON_Delete(c);
}

/* delete-claim-when-done: the owning pod; add-reserved: reserved for the pod */
static void test_owner_and_reserved(void **state)
{
	(void)state;
	const char *name, *uid;
	cJSON *c = claim("," OWNER_POD1, ALLOCATION "," RESERVED_BOTH);

	assert_true(rc_owning_pod(c, &name, &uid));
	assert_string_equal(name, "test-pod");
	assert_string_equal(uid, "uidpod1");
	assert_true(rc_is_reserved_for_pod("uidpod1", c));
	assert_false(rc_is_reserved_for_pod("uidpod3", c));
	assert_true(rc_can_be_reserved(c));
	cJSON_Delete(c);
	c = claim(",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\","
	          "\"name\":\"rs\",\"uid\":\"u\",\"controller\":true}]",
	          "");
	assert_false(rc_owning_pod(c, &name, &uid));
	assert_false(rc_allocated(c));
	cJSON_Delete(c);
}

/* flapping-resourceclaim-statuses: the apply carries the recorded claimA and the new claimB */
static void test_status_apply(void **state)
{
	(void)state;
	char *body = NULL;
	cJSON *pod =
	        pod_with("\"resourceClaimStatuses\":[{\"name\":\"claimA\",\"resourceClaimName\":"
	                 "\"claimA-object\"},{\"name\":\"unneeded\"}]");
	const char *names[] = {"claimB"}, *claims[] = {"test-pod-claimB-x"};

	assert_int_equal(rc_status_apply_body(pod, names, claims, 1, &body), 0);
	assert_string_equal(
	        body, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"test-pod\","
	              "\"namespace\":\"" NS "\"},\"status\":{\"resourceClaimStatuses\":[{\"name\":"
	              "\"claimA\",\"resourceClaimName\":\"claimA-object\"},{\"name\":\"claimB\","
	              "\"resourceClaimName\":\"test-pod-claimB-x\"}]}}");
	free(body);
	/* recreate: the new claim replaces the recorded one */
	const char *n2[] = {"claimA"}, *c2[] = {"claimA-new"};
	assert_int_equal(rc_status_apply_body(pod, n2, c2, 1, &body), 0);
	assert_non_null(strstr(body, "\"resourceClaimName\":\"claimA-new\""));
	assert_null(strstr(body, "claimA-object"));
	free(body);
	cJSON_Delete(pod);
}

/* TestEventHandlers' expected gauge labels: a user's claim, one from a template with admin
 * access, allocated or not, an extended-resource claim */
static void test_metric_labels(void **state)
{
	(void)state;
	const char *l[3];
	cJSON *c = claim("", "");

	rc_claim_metric_labels(c, l);
	assert_string_equal(l[0], "false");
	assert_string_equal(l[1], "false");
	assert_string_equal(l[2], "");
	cJSON_Delete(c);
	c = parse("{\"metadata\":{\"annotations\":{\"" RC_POD_CLAIM_ANNOTATION
	          "\":\"acme-resource\"}},"
	          "\"spec\":{\"devices\":{\"requests\":[{\"name\":\"r\",\"exactly\":{"
	          "\"deviceClassName\":\"c\",\"adminAccess\":true}}]}},\"status\":{" ALLOCATION
	          "}}");
	rc_claim_metric_labels(c, l);
	assert_string_equal(l[0], "true");
	assert_string_equal(l[1], "true");
	assert_string_equal(l[2], "resource_claim_template");
	cJSON_Delete(c);
	c = parse("{\"metadata\":{\"annotations\":{\"" RC_EXTENDED_ANNOTATION "\":\"true\","
	          "\"" RC_POD_CLAIM_ANNOTATION "\":\"x\"}}}");
	rc_claim_metric_labels(c, l);
	assert_string_equal(l[2], "extended_resource");
	cJSON_Delete(c);
	c = parse("{\"metadata\":{\"annotations\":{\"" RC_POD_CLAIM_ANNOTATION "\":\"\"}}}");
	rc_claim_metric_labels(c, l);
	assert_string_equal(l[2], "");
	cJSON_Delete(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_name),          cmocka_unit_test(test_is_for_pod),
	        cmocka_unit_test(test_claim_body),    cmocka_unit_test(test_generate_name),
	        cmocka_unit_test(test_pod_done),      cmocka_unit_test(test_reservations),
	        cmocka_unit_test(test_update_bodies), cmocka_unit_test(test_owner_and_reserved),
	        cmocka_unit_test(test_status_apply),  cmocka_unit_test(test_metric_labels),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
