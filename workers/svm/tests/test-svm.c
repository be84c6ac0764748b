/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The storage version migrator's decisions (workers/svm/svm.h), with the pure-logic cases of
 * upstream's storageversionmigrator_test.go, resourceversion_test.go, migrationrunner_test.go
 * and apimachinery's resourceversion_test.go (v1.37.2): resourceVersion comparison, the
 * Running/Failed messages, condition updates, which migration the runner starts or cleans
 * up, what is retried, discovery's verbs and the per-object patch. The requests themselves are
 * the e2e test's (tests/cluster/e2e/svm_test.go).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workers/svm/svm.h"

#define NOW   "2026-12-07T03:00:00Z"
#define LATER "2026-12-07T03:05:00Z"

static void test_rv_compare(void **st)
{
	static const struct {
		const char *a, *b;
		int want; /* 2: error */
	} cases[] = {
	        {"1", "1", 0},
	        {"1", "2", -1},
	        {"2", "1", 1},
	        {"10", "9", 1},
	        {"9", "10", -1},
	        {"123", "124", -1},
	        {"", "1", 2},
	        {"1", "", 2},
	        {"01", "1", 2},
	        {"0", "1", 2},
	        {"1a", "1", 2},
	        {"1", "-1", 2},
	        {"18446744073709551616", "18446744073709551615", 1},
	};
	(void)st;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int cmp = 7;
		const char *bad = NULL;
		int r = svm_rv_compare(cases[i].a, cases[i].b, &cmp, &bad);
		if (cases[i].want == 2) {
			assert_int_equal(r, -EINVAL);
			assert_non_null(bad);
		} else {
			assert_int_equal(r, 0);
			assert_int_equal(cmp, cases[i].want);
		}
	}
	/* the malformed one is named, the first when both are */
	const char *bad = NULL;
	int cmp;
	assert_int_equal(svm_rv_compare("5", "x", &cmp, &bad), -EINVAL);
	assert_string_equal(bad, "x");
	assert_int_equal(svm_rv_compare("y", "x", &cmp, &bad), -EINVAL);
	assert_string_equal(bad, "y");
	assert_int_equal(svm_rv_compare(NULL, "1", &cmp, &bad), -EINVAL);
}

static void test_running_message(void **st)
{
	char buf[256];
	int one = 1, two = 2, zero = 0;

	(void)st;
	svm_running_message(buf, sizeof(buf), NULL, NULL, NULL);
	assert_string_equal(buf, "The migration is running");
	svm_running_message(buf, sizeof(buf), &one, &two, "simulating throttling");
	assert_string_equal(buf, "The migration is running, 1/2 objects not yet migrated; "
	                         "transient error: simulating throttling");
	svm_running_message(buf, sizeof(buf), &zero, &two, NULL);
	assert_string_equal(buf, "The migration is running, 2 objects verified migrated");
	/* no objects at all: no counts */
	svm_running_message(buf, sizeof(buf), &zero, &zero, NULL);
	assert_string_equal(buf, "The migration is running");
	/* truncation stays NUL-terminated */
	svm_running_message(buf, 10, &one, &two, "x");
	assert_int_equal(strlen(buf), 9);
}

static cJSON *svm_new(const char *name, const char *created, const char *conds)
{
	char js[2048];
	cJSON *o;

	snprintf(js, sizeof(js),
	         "{\"metadata\":{\"name\":\"%s\",\"creationTimestamp\":\"%s\",\"generation\":1},"
	         "\"spec\":{\"resource\":{\"group\":\"example.com\",\"resource\":\"widgets\"}},"
	         "\"status\":{\"conditions\":[%s]}}",
	         name, created, conds ? conds : "");
	o = cJSON_Parse(js);
	assert_non_null(o);
	return o;
}

static const char *cond_field(const cJSON *svm, const char *type, const char *field)
{
	return cJSON_GetStringValue(
	        cJSON_GetObjectItemCaseSensitive(svm_cond_find(svm, type), field));
}

static void test_set_condition(void **st)
{
	cJSON *svm = svm_new("a", NOW, NULL);

	(void)st;
	/* added */
	assert_int_equal(svm_set_condition(svm, "Running", "True", "MigrationRunning",
	                                   "The migration is running", NOW, -1),
	                 1);
	assert_string_equal(cond_field(svm, "Running", "lastTransitionTime"), NOW);
	/* the same again: nothing changes, nothing to write */
	assert_int_equal(svm_set_condition(svm, "Running", "True", "MigrationRunning",
	                                   "The migration is running", LATER, -1),
	                 0);
	/* a new message, same status: the transition time stays */
	assert_int_equal(svm_set_condition(svm, "Running", "True", "MigrationRunning",
	                                   "The migration is running, 2 objects verified migrated",
	                                   LATER, -1),
	                 1);
	assert_string_equal(cond_field(svm, "Running", "lastTransitionTime"), NOW);
	assert_string_equal(cond_field(svm, "Running", "message"),
	                    "The migration is running, 2 objects verified migrated");
	/* the status flips: a new transition time; observedGeneration set */
	assert_int_equal(svm_set_condition(svm, "Running", "False", "MigrationCompleted",
	                                   "Migration completed", LATER, 3),
	                 1);
	assert_string_equal(cond_field(svm, "Running", "lastTransitionTime"), LATER);
	assert_string_equal(cond_field(svm, "Running", "status"), "False");
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(svm_cond_find(svm, "Running"),
	                                                  "observedGeneration")
	                         ->valuedouble,
	                 3);
	assert_false(svm_cond_true(svm, "Running"));
	cJSON_Delete(svm);

	/* no status at all (a fresh object), or status: null */
	svm = cJSON_Parse("{\"metadata\":{\"name\":\"b\"},\"status\":null}");
	assert_int_equal(svm_set_condition(svm, "Failed", "True", "StorageVersionMigrationFailed",
	                                   "m", NOW, -1),
	                 1);
	assert_true(svm_cond_true(svm, "Failed"));
	assert_true(svm_terminal(svm));
	cJSON_Delete(svm);
}

static void test_add_condition_once(void **st)
{
	cJSON *svm = svm_new("a", NOW, NULL);

	(void)st;
	assert_int_equal(svm_add_condition_once(svm, "Running", "MigrationRunning",
	                                        "The migration is running", NOW),
	                 1);
	assert_true(svm_cond_true(svm, "Running"));
	/* never twice: True stays as it is */
	assert_int_equal(svm_add_condition_once(svm, "Running", "Other", "other", LATER), 0);
	assert_string_equal(cond_field(svm, "Running", "reason"), "MigrationRunning");
	cJSON_Delete(svm);
	/* nor over a False one */
	svm = svm_new("a", NOW, "{\"type\":\"Running\",\"status\":\"False\"}");
	assert_int_equal(svm_add_condition_once(svm, "Running", "MigrationRunning", "m", NOW), 0);
	assert_false(svm_cond_true(svm, "Running"));
	cJSON_Delete(svm);
	/* an Unknown one does not count: appended (upstream appends, it does not replace) */
	svm = svm_new("a", NOW, "{\"type\":\"Failed\",\"status\":\"Unknown\"}");
	assert_int_equal(svm_add_condition_once(svm, "Failed", "StorageVersionMigrationFailed",
	                                        "resource does not exist in discovery", NOW),
	                 1);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(
	                         cJSON_GetObjectItemCaseSensitive(svm, "status"), "conditions")),
	                 2);
	cJSON_Delete(svm);
}

#define RUNNING   "{\"type\":\"Running\",\"status\":\"True\"}"
#define SUCCEEDED "{\"type\":\"Succeeded\",\"status\":\"True\"}"
#define FAILED    "{\"type\":\"Failed\",\"status\":\"True\"}"

static void test_runner_pick(void **st)
{
	bool cleanup[4];
	cJSON *v[4];

	(void)st;
	/* Promote older SVM first (whatever the list order) */
	v[0] = svm_new("test-svm-newer", "2026-12-07T04:00:00Z", NULL);
	v[1] = svm_new("test-svm-older", "2026-12-07T02:00:00Z", NULL);
	assert_int_equal(svm_runner_pick(v, 2, cleanup), 1);
	assert_false(cleanup[0] || cleanup[1]);
	/* the same creation time: by name */
	cJSON_Delete(v[0]);
	v[0] = svm_new("test-svm-a", "2026-12-07T02:00:00Z", NULL);
	assert_int_equal(svm_runner_pick(v, 2, cleanup), 0);
	/* Migration running (no-op): nothing promoted while one runs, before or after it */
	v[2] = svm_new("running", "2026-12-07T05:00:00Z", RUNNING);
	assert_int_equal(svm_runner_pick(v, 3, cleanup), -1);
	{
		cJSON *w[3] = {v[2], v[0], v[1]};
		assert_int_equal(svm_runner_pick(w, 3, cleanup), -1);
	}
	/* Cleanup admission: running and succeeded (or failed) are cleaned up and no longer
	 * block; a terminal one never runs again */
	cJSON_Delete(v[2]);
	v[2] = svm_new("done", "2026-12-07T01:00:00Z", RUNNING "," SUCCEEDED);
	v[3] = svm_new("failed-old", "2026-12-07T00:00:00Z", FAILED);
	assert_int_equal(svm_runner_pick(v, 4, cleanup), 0);
	assert_true(cleanup[2]);
	assert_false(cleanup[0] || cleanup[1] || cleanup[3]);
	/* only terminal ones left: none to start */
	assert_int_equal(svm_runner_pick(v + 2, 2, cleanup), -1);
	assert_true(cleanup[0]);
	assert_false(cleanup[1]);
	for (int i = 0; i < 4; i++)
		cJSON_Delete(v[i]);
}

static void test_retriable(void **st)
{
	(void)st;
	assert_true(svm_retriable(-EAGAIN));     /* TooManyRequests */
	assert_true(svm_retriable(-EHOSTDOWN));  /* ServiceUnavailable */
	assert_true(svm_retriable(-EREMOTEIO));  /* InternalError */
	assert_true(svm_retriable(-ETIMEDOUT));  /* Timeout */
	assert_true(svm_retriable(-ECONNRESET)); /* connection reset */
	assert_false(svm_retriable(-EINVAL));    /* Invalid: fails the migration */
	assert_false(svm_retriable(-EACCES));    /* Forbidden */
	assert_false(svm_retriable(-EBADR));     /* BadRequest */
	assert_false(svm_retriable(0));
}

static void test_grace(void **st)
{
	(void)st;
	/* 2026-12-07T03:00:00Z = 1796612400 */
	assert_true(svm_within_grace(NOW, 1796612400));
	assert_true(svm_within_grace(NOW, 1796612459));
	assert_false(svm_within_grace(NOW, 1796612460));
	assert_false(svm_within_grace("garbage", 0));
	assert_false(svm_within_grace(NULL, 0));
}

static void test_keys(void **st)
{
	char k[64], g[64], r[64];
	cJSON *svm = svm_new("a", NOW, NULL);
	const char *sg, *sr;

	(void)st;
	assert_int_equal(svm_spec_resource(svm, &sg, &sr), 0);
	assert_int_equal(svm_gr_key(sg, sr, k, sizeof(k)), 0);
	assert_string_equal(k, "widgets.example.com");
	assert_int_equal(svm_gr_parse(k, g, r, sizeof(g)), 0);
	assert_string_equal(g, "example.com");
	assert_string_equal(r, "widgets");
	assert_int_equal(svm_gr_key("", "secrets", k, sizeof(k)), 0);
	assert_string_equal(k, "secrets");
	assert_int_equal(svm_gr_parse(k, g, r, sizeof(g)), 0);
	assert_string_equal(g, "");
	assert_string_equal(r, "secrets");
	assert_int_equal(svm_gr_parse("", g, r, sizeof(g)), -EINVAL);
	assert_int_equal(svm_gr_parse(".x", g, r, sizeof(g)), -EINVAL);
	cJSON_Delete(svm);
	svm = cJSON_Parse("{\"spec\":{\"resource\":{\"group\":\"x\"}}}");
	assert_int_equal(svm_spec_resource(svm, &sg, &sr), -EINVAL);
	cJSON_Delete(svm);

	svm_gvr_string(k, sizeof(k), "", "v1", "secrets");
	assert_string_equal(k, "/v1, Resource=secrets");
	svm_gvr_string(k, sizeof(k), "apps", "v1", "deployments");
	assert_string_equal(k, "apps/v1, Resource=deployments");
}

/* TestIsResourceMigratable */
static void test_migratable(void **st)
{
	cJSON *l = cJSON_Parse(
	        "{\"resources\":["
	        "{\"name\":\"deployments\",\"namespaced\":true,\"kind\":\"Deployment\","
	        "\"verbs\":[\"create\",\"delete\",\"get\",\"list\",\"patch\",\"update\",\"watch\"]}"
	        ","
	        "{\"name\":\"deployments/status\",\"namespaced\":true,\"kind\":\"Deployment\","
	        "\"verbs\":[\"get\",\"patch\",\"update\"]},"
	        "{\"name\":\"noupdate\",\"kind\":\"A\",\"verbs\":[\"list\",\"patch\"]},"
	        "{\"name\":\"nopatch\",\"kind\":\"B\",\"verbs\":[\"list\",\"update\"]},"
	        "{\"name\":\"nolist\",\"kind\":\"C\",\"verbs\":[\"patch\",\"update\"]},"
	        "{\"name\":\"noverbs\",\"kind\":\"D\"}]}");
	struct svm_api_resource ar;

	(void)st;
	assert_int_equal(svm_find_resource(l, "deployments", &ar), 0);
	assert_true(ar.migratable);
	assert_true(ar.namespaced);
	assert_string_equal(ar.kind, "Deployment");
	assert_int_equal(svm_find_resource(l, "noupdate", &ar), 0);
	assert_false(ar.migratable);
	assert_false(ar.namespaced);
	assert_int_equal(svm_find_resource(l, "nopatch", &ar), 0);
	assert_false(ar.migratable);
	assert_int_equal(svm_find_resource(l, "nolist", &ar), 0);
	assert_false(ar.migratable);
	assert_int_equal(svm_find_resource(l, "noverbs", &ar), 0);
	assert_false(ar.migratable);
	assert_int_equal(svm_find_resource(l, "unknown", &ar), -ENOENT);
	assert_int_equal(svm_find_resource(l, "status", &ar), -ENOENT);
	cJSON_Delete(l);
}

/* the mapper's order: preferred version first */
static void test_group_versions(void **st)
{
	cJSON *g = cJSON_Parse("{\"name\":\"example.com\",\"versions\":[{\"groupVersion\":"
	                       "\"example.com/v1\",\"version\":\"v1\"},{\"groupVersion\":"
	                       "\"example.com/v2\",\"version\":\"v2\"}],\"preferredVersion\":{"
	                       "\"groupVersion\":\"example.com/v2\",\"version\":\"v2\"}}");
	const char *v[4];

	(void)st;
	assert_int_equal(svm_group_versions(g, v, 4), 2);
	assert_string_equal(v[0], "v2");
	assert_string_equal(v[1], "v1");
	assert_int_equal(svm_group_versions(g, v, 1), 1);
	cJSON_Delete(g);
	g = cJSON_Parse("{\"versions\":[]}");
	assert_int_equal(svm_group_versions(g, v, 4), 0);
	cJSON_Delete(g);
}

/* the patch the migration sends: type, kind and the resourceVersion precondition only */
static void test_patch_body(void **st)
{
	char *b;

	(void)st;
	b = svm_patch_body("apps/v1", "Deployment", "90");
	assert_string_equal(b, "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{"
	                       "\"resourceVersion\":\"90\"}}");
	free(b);
	b = svm_patch_body("v1", "Secret", "");
	assert_string_equal(b, "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{}}");
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_rv_compare),    cmocka_unit_test(test_running_message),
	        cmocka_unit_test(test_set_condition), cmocka_unit_test(test_add_condition_once),
	        cmocka_unit_test(test_runner_pick),   cmocka_unit_test(test_retriable),
	        cmocka_unit_test(test_grace),         cmocka_unit_test(test_keys),
	        cmocka_unit_test(test_migratable),    cmocka_unit_test(test_group_versions),
	        cmocka_unit_test(test_patch_body),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
