/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The storage version GC's decisions (workers/svgc/svgc.h), with the cases of upstream's
 * gc_controller_test.go (v1.37.2) as the entry removal plus SetCommonEncodingVersion they lead
 * to (the live GETs and the writes are the e2e test's: tests/cluster/e2e/storageversiongc_test.go),
 * and the identity-Lease check of the handlers and the sync.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workers/svgc/svgc.h"

#define NOW  "2026-12-07T03:00:00Z"
#define THEN "2020-01-01T00:00:00Z"

/* a StorageVersion "k8s.test.resources" with entries "id:enc" separated by ',' */
static cJSON *sv_new(const char *entries, const char *common, const char *cond)
{
	char buf[2048], list[1500] = "";
	char *copy = strdup(entries), *tok, *save = NULL;
	cJSON *sv;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		*colon = 0;
		snprintf(list + strlen(list), sizeof(list) - strlen(list),
		         "%s{\"apiServerID\":\"%s\",\"encodingVersion\":\"%s\","
		         "\"decodableVersions\":[\"%s\"]}",
		         list[0] ? "," : "", tok, colon + 1, colon + 1);
	}
	free(copy);
	snprintf(buf, sizeof(buf),
	         "{\"metadata\":{\"name\":\"k8s.test.resources\",\"generation\":3},\"status\":{"
	         "\"storageVersions\":[%s]%s%s%s%s%s}}",
	         list, common ? ",\"commonEncodingVersion\":\"" : "", common ? common : "",
	         common ? "\"" : "", cond ? ",\"conditions\":" : "", cond ? cond : "");
	sv = cJSON_Parse(buf);
	assert_non_null(sv);
	return sv;
}

static const char *status_str(const cJSON *sv, const char *k)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(sv, "status"), k));
}

static const cJSON *cond(const cJSON *sv)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(sv, "status"), "conditions");
	assert_int_equal(cJSON_GetArraySize(c), 1);
	return cJSON_GetArrayItem(c, 0);
}

static const char *cstr(const cJSON *c, const char *k)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, k));
}

static bool drop_named(const char *id, void *ud)
{
	return !strcmp(id, ud);
}

/* Test_StorageVersionUpdatedWithAllEncodingVersionsEqualOnLeaseDeletion */
static void test_lease_deleted_versions_agree(void **state)
{
	(void)state;
	cJSON *sv =
	        sv_new("kube-apiserver-1:v1,kube-apiserver-2:v2,kube-apiserver-3:v2", "v1", NULL);
	size_t left = 9;

	assert_int_equal(svgc_drop_entries(sv, drop_named, "kube-apiserver-1", &left), 1);
	assert_int_equal(left, 2);
	assert_string_equal(svgc_entry_id(sv, 0), "kube-apiserver-2");
	assert_string_equal(svgc_entry_id(sv, 1), "kube-apiserver-3");
	assert_null(svgc_entry_id(sv, 2));
	assert_int_equal(svgc_set_common_encoding(sv, NOW), 0);
	assert_string_equal(status_str(sv, "commonEncodingVersion"), "v2");
	const cJSON *c = cond(sv);
	assert_string_equal(cstr(c, "type"), "AllEncodingVersionsEqual");
	assert_string_equal(cstr(c, "status"), "True");
	assert_string_equal(cstr(c, "reason"), "CommonEncodingVersionSet");
	assert_string_equal(cstr(c, "message"), "Common encoding version set");
	assert_string_equal(cstr(c, "lastTransitionTime"), NOW);
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(c, "observedGeneration")->valueint, 3);
	cJSON_Delete(sv);
}

/* Test_StorageVersionUpdatedWithDifferentEncodingVersionsOnLeaseDeletion: the deleted Lease
 * names no entry, so nothing is written and commonEncodingVersion stays v1 */
static void test_lease_deleted_not_listed(void **state)
{
	(void)state;
	cJSON *sv = sv_new("kube-apiserver-1:v1,kube-apiserver-3:v2", "v1", NULL);
	size_t left = 0;

	assert_int_equal(svgc_drop_entries(sv, drop_named, "kube-apiserver-2", &left), 0);
	assert_int_equal(left, 2);
	assert_string_equal(status_str(sv, "commonEncodingVersion"), "v1");
	cJSON_Delete(sv);
}

static bool drop_4(const char *id, void *ud)
{
	(void)ud;
	return !strcmp(id, "kube-apiserver-4");
}

/* Test_StorageVersionContainsInvalidLeaseID */
static void test_invalid_lease_id(void **state)
{
	(void)state;
	cJSON *sv = sv_new("kube-apiserver-1:v1,kube-apiserver-2:v2,kube-apiserver-3:v2,"
	                   "kube-apiserver-4:v2",
	                   "v1", NULL);
	size_t left = 0;

	assert_int_equal(svgc_drop_entries(sv, drop_4, NULL, &left), 1);
	assert_int_equal(left, 3);
	assert_string_equal(svgc_entry_id(sv, 0), "kube-apiserver-1");
	assert_string_equal(svgc_entry_id(sv, 2), "kube-apiserver-3");
	assert_int_equal(svgc_set_common_encoding(sv, NOW), 0);
	assert_null(status_str(sv, "commonEncodingVersion"));
	const cJSON *c = cond(sv);
	assert_string_equal(cstr(c, "status"), "False");
	assert_string_equal(cstr(c, "reason"), "CommonEncodingVersionUnset");
	assert_string_equal(cstr(c, "message"), "Common encoding version unset");
	cJSON_Delete(sv);
}

/* Test_StorageVersionDeletedOnLeaseDeletion: no entry left (the caller deletes the object) */
static void test_last_entry(void **state)
{
	(void)state;
	cJSON *sv = sv_new("kube-apiserver-1:v1", NULL, NULL);
	size_t left = 9;

	assert_int_equal(svgc_drop_entries(sv, drop_named, "kube-apiserver-1", &left), 1);
	assert_int_equal(left, 0);
	cJSON_Delete(sv);
}

/* setStatusCondition: the transition time moves only with the status, or when the common
 * version changed from one set value to another */
static void test_condition_transitions(void **state)
{
	(void)state;
	const char *t_true =
	        "[{\"type\":\"AllEncodingVersionsEqual\",\"status\":\"True\","
	        "\"lastTransitionTime\":\"" THEN "\",\"reason\":\"CommonEncodingVersionSet\","
	        "\"message\":\"Common encoding version set\",\"observedGeneration\":1}]";
	cJSON *sv;

	/* same status, same version: kept */
	sv = sv_new("a:v1,b:v1", "v1", t_true);
	assert_int_equal(svgc_set_common_encoding(sv, NOW), 0);
	assert_string_equal(cstr(cond(sv), "lastTransitionTime"), THEN);
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(cond(sv), "observedGeneration")->valueint,
	                 3);
	cJSON_Delete(sv);
	/* same status, another version: forced */
	sv = sv_new("a:v2,b:v2", "v1", t_true);
	assert_int_equal(svgc_set_common_encoding(sv, NOW), 0);
	assert_string_equal(status_str(sv, "commonEncodingVersion"), "v2");
	assert_string_equal(cstr(cond(sv), "lastTransitionTime"), NOW);
	cJSON_Delete(sv);
	/* no old version, now one (status True before, e.g. written by hand): kept */
	sv = sv_new("a:v2", NULL, t_true);
	assert_int_equal(svgc_set_common_encoding(sv, NOW), 0);
	assert_string_equal(cstr(cond(sv), "lastTransitionTime"), THEN);
	cJSON_Delete(sv);
	/* status changes: new time */
	sv = sv_new("a:v1,b:v2", "v1", t_true);
	assert_int_equal(svgc_set_common_encoding(sv, NOW), 0);
	assert_string_equal(cstr(cond(sv), "status"), "False");
	assert_string_equal(cstr(cond(sv), "lastTransitionTime"), NOW);
	assert_null(status_str(sv, "commonEncodingVersion"));
	cJSON_Delete(sv);
	/* other conditions are kept as they are */
	sv = sv_new("a:v1", NULL, "[{\"type\":\"Other\",\"status\":\"Unknown\"}]");
	assert_int_equal(svgc_set_common_encoding(sv, NOW), 0);
	const cJSON *cs = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(sv, "status"), "conditions");
	assert_int_equal(cJSON_GetArraySize(cs), 2);
	assert_string_equal(cstr(cJSON_GetArrayItem(cs, 0), "type"), "Other");
	cJSON_Delete(sv);
}

/* generation 0 (absent): observedGeneration omitted, as Go's omitempty */
static void test_no_generation(void **state)
{
	(void)state;
	cJSON *sv = cJSON_Parse("{\"metadata\":{\"name\":\"x\"},\"status\":{}}");

	assert_int_equal(svgc_set_common_encoding(sv, NOW), 0);
	assert_null(cJSON_GetObjectItemCaseSensitive(cond(sv), "observedGeneration"));
	assert_string_equal(cstr(cond(sv), "status"), "False");
	cJSON_Delete(sv);
	/* no status at all */
	sv = cJSON_Parse("{\"metadata\":{\"name\":\"x\"}}");
	assert_int_equal(svgc_set_common_encoding(sv, NOW), 0);
	assert_string_equal(cstr(cond(sv), "status"), "False");
	cJSON_Delete(sv);
}

static void test_identity_lease(void **state)
{
	(void)state;
	struct {
		const char *json;
		bool with_ns, without_ns;
	} cases[] = {
	        {"{\"metadata\":{\"name\":\"a\",\"namespace\":\"kube-system\",\"labels\":{"
	         "\"apiserver.kubernetes.io/identity\":\"kube-apiserver\"}}}",
	         true, true},
	        {"{\"metadata\":{\"name\":\"a\",\"namespace\":\"default\",\"labels\":{"
	         "\"apiserver.kubernetes.io/identity\":\"kube-apiserver\"}}}",
	         false, true},
	        {"{\"metadata\":{\"name\":\"a\",\"namespace\":\"kube-system\",\"labels\":{"
	         "\"apiserver.kubernetes.io/identity\":\"sample-apiserver\"}}}",
	         false, false},
	        {"{\"metadata\":{\"name\":\"a\",\"namespace\":\"kube-system\"}}", false, false},
	        {"{\"metadata\":{\"name\":\"a\",\"namespace\":\"kube-system\",\"labels\":{"
	         "\"apiserver.kubernetes.io/identity\":1}}}",
	         false, false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *l = cJSON_Parse(cases[i].json);
		assert_non_null(l);
		assert_int_equal(svgc_is_identity_lease(l, true), cases[i].with_ns);
		assert_int_equal(svgc_is_identity_lease(l, false), cases[i].without_ns);
		cJSON_Delete(l);
	}
	assert_false(svgc_is_identity_lease(NULL, false));
}

/* hostile shapes: entries not an array, an entry without apiServerID */
static bool drop_empty(const char *id, void *ud)
{
	(void)ud;
	return !*id;
}

static void test_bad_shapes(void **state)
{
	(void)state;
	cJSON *sv = cJSON_Parse("{\"status\":{\"storageVersions\":{\"x\":1}}}");
	size_t left = 7;

	assert_int_equal(svgc_drop_entries(sv, drop_empty, NULL, &left), 0);
	assert_int_equal(left, 0);
	assert_null(svgc_entry_id(sv, 0));
	cJSON_Delete(sv);
	sv = cJSON_Parse("{\"status\":{\"storageVersions\":[{\"encodingVersion\":\"v1\"},"
	                 "{\"apiServerID\":\"b\",\"encodingVersion\":\"v1\"}]}}");
	assert_string_equal(svgc_entry_id(sv, 0), "");
	assert_int_equal(svgc_drop_entries(sv, drop_empty, NULL, &left), 1);
	assert_int_equal(left, 1);
	assert_string_equal(svgc_entry_id(sv, 0), "b");
	cJSON_Delete(sv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_lease_deleted_versions_agree),
	        cmocka_unit_test(test_lease_deleted_not_listed),
	        cmocka_unit_test(test_invalid_lease_id),
	        cmocka_unit_test(test_last_entry),
	        cmocka_unit_test(test_condition_transitions),
	        cmocka_unit_test(test_no_generation),
	        cmocka_unit_test(test_identity_lease),
	        cmocka_unit_test(test_bad_shapes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
