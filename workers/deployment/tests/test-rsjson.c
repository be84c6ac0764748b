/* SPDX-License-Identifier: Apache-2.0 */
/* workers/deployment/tests/test-rsjson.c - dp_rs_to_json (rsjson.c): a ReplicaSet decoded as
 * informerd decodes it, stored as its typed record and viewed as a worker views it, rebuilt as
 * JSON, reads the same as the apiserver's object in every field the Deployment sync reads (what
 * its former uncached LIST returned). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/model.h"
#include "shm/record-model.h"
#include "shm/records.h"
#include "workers/deployment/rsjson.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
	b[n] = 0;
	fclose(f);
	return b;
}

/* json -> (informerd) decode with every annotation -> record -> (worker) view -> dp_rs_to_json */
static cJSON *through_cache(const char *json)
{
	struct kube_replicaset *rs;
	struct shm_rec_enc e = {0};
	struct shm_record_in in;
	struct shm_obj tmp, o;
	struct shm_rs_view v;
	cJSON *out = NULL;

	assert_int_equal(
	        kube_decode_replicaset(json, strlen(json), KUBE_DECODE_ALL_ANNOTATIONS, &rs), 0);
	assert_int_equal(shm_rec_build(&e, 0, SHM_RECORD_REPLICASET, rs, &in), 0);
	tmp = (struct shm_obj){.type = in.type,
	                       .kind = in.kind,
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
	assert_int_equal(shm_rs_view_init(&o, &v), 0);
	assert_int_equal(dp_rs_to_json(&v.rs, &out), 0);
	shm_rs_view_free(&v);
	kube_object_free(rs);
	shm_rec_enc_release(&e);
	return out;
}

static cJSON *at(cJSON *o, const char *a, const char *b)
{
	cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
	return b ? cJSON_GetObjectItemCaseSensitive(x, b) : x;
}

/* the field read from both, equal (absent in both counts as equal) */
static void same(cJSON *want, cJSON *got, const char *a, const char *b)
{
	cJSON *w = at(want, a, b), *g = at(got, a, b);
	if (!w && !g)
		return;
	if (!w || !g || !cJSON_Compare(w, g, true)) {
		char *ws = w ? cJSON_PrintUnformatted(w) : NULL,
		     *gs = g ? cJSON_PrintUnformatted(g) : NULL;
		fail_msg("%s.%s: want %s, got %s", a, b ? b : "", ws ? ws : "(absent)",
		         gs ? gs : "(absent)");
	}
}

static void compare_read_fields(const char *json)
{
	cJSON *want = cJSON_Parse(json), *got = through_cache(json);
	assert_non_null(want);
	static const char *md[] = {"name",       "namespace",         "uid",
	                           "generation", "creationTimestamp", "deletionTimestamp",
	                           "labels",     "annotations",       "ownerReferences"};
	for (size_t i = 0; i < sizeof(md) / sizeof(md[0]); i++) {
		cJSON *w = at(want, "metadata", md[i]);
		/* empty maps/lists read the same as absent, an absent generation as 0 */
		if (!strcmp(md[i], "generation"))
			assert_int_equal(cJSON_GetNumberValue(at(got, "metadata", md[i])),
			                 w ? cJSON_GetNumberValue(w) : 0);
		else if (!w && (!strcmp(md[i], "labels") || !strcmp(md[i], "annotations") ||
		                !strcmp(md[i], "ownerReferences")))
			assert_int_equal(
			        cJSON_GetArraySize(at(at(got, "metadata", NULL), md[i], NULL)), 0);
		else
			same(at(want, "metadata", NULL), at(got, "metadata", NULL), md[i], NULL);
	}
	same(want, got, "spec", "template");
	cJSON *wm = at(want, "spec", "minReadySeconds"); /* the sync reads absent as 0 */
	assert_int_equal(cJSON_GetNumberValue(at(got, "spec", "minReadySeconds")),
	                 wm ? cJSON_GetNumberValue(wm) : 0);
	cJSON *wr = at(want, "spec", "replicas");
	assert_int_equal(cJSON_GetNumberValue(at(got, "spec", "replicas")),
	                 wr ? cJSON_GetNumberValue(wr) : 1);
	static const char *st[] = {"replicas", "readyReplicas", "availableReplicas",
	                           "observedGeneration", "terminatingReplicas"};
	for (size_t i = 0; i < sizeof(st) / sizeof(st[0]); i++) {
		cJSON *w = at(want, "status", st[i]), *g = at(got, "status", st[i]);
		if (!strcmp(st[i], "terminatingReplicas"))
			assert_true(!w == !g); /* nil kept apart from 0 */
		assert_int_equal(g ? cJSON_GetNumberValue(g) : 0, w ? cJSON_GetNumberValue(w) : 0);
	}
	cJSON_Delete(want);
	cJSON_Delete(got);
}

/* the fixture: every field set, an annotation outside deployment.kubernetes.io/, a template with
 * metadata, annotations and finalizers */
static void test_fixture(void **state)
{
	(void)state;
	char *json = slurp("kube/tests/fixtures/replicaset.json");
	compare_read_fields(json);
	cJSON *got = through_cache(json);
	/* the annotation the default decoder would have dropped */
	assert_non_null(at(at(got, "metadata", NULL), "annotations", NULL));
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
	                            at(got, "metadata", "annotations"),
	                            "kubectl.kubernetes.io/last-applied-configuration")),
	                    "{\"big\":\"blob\"}");
	cJSON_Delete(got);
	free(json);
}

/* absent spec.replicas (the API default), no terminatingReplicas, being deleted, owner
 * references with absent and false tri-states, no labels or annotations */
static void test_sparse(void **state)
{
	(void)state;
	compare_read_fields(
	        "{\"metadata\":{\"name\":\"rs\",\"namespace\":\"ns\",\"uid\":\"u-rs\","
	        "\"resourceVersion\":\"9\",\"creationTimestamp\":\"2026-01-02T03:04:05Z\","
	        "\"deletionTimestamp\":\"2026-01-02T03:05:00Z\",\"ownerReferences\":["
	        "{\"apiVersion\":\"apps/"
	        "v1\",\"kind\":\"Deployment\",\"name\":\"d\",\"uid\":\"u-d\"},"
	        "{\"apiVersion\":\"v1\",\"kind\":\"X\",\"name\":\"x\",\"uid\":\"u-x\","
	        "\"controller\":false,\"blockOwnerDeletion\":false}]},"
	        "\"spec\":{\"selector\":{\"matchLabels\":{\"a\":\"b\"}},\"template\":{\"metadata\":"
	        "{\"labels\":{\"a\":\"b\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":"
	        "\"i\"}]}}},\"status\":{\"replicas\":0}}");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_fixture),
	        cmocka_unit_test(test_sparse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
