/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The legacy service account token cleaner's decisions (workers/legacysatoken/lsa.h) with the
 * cases of upstream's TestLegacyServiceAccountTokenCleanUp (v1.37): the tracking ConfigMap
 * without a since date, with one that cannot be parsed, tracked for less than the period; a
 * Secret of another type, not referenced by its ServiceAccount, created late, being deleted,
 * used late, with a last-used label that cannot be parsed; the ServiceAccount missing, of
 * another uid, unnamed; no last-used label and not yet invalid (labelled today), an invalid-since
 * that cannot be parsed (labelled today), invalid for less than the period (kept), for more
 * (deleted); a pod mounting it (kept); and VisitPodSecretNames' places.
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
#include "workers/legacysatoken/lsa.h"

static int64_t at(const char *rfc3339)
{
	kube_time_t t;
	assert_int_equal(kube_time_parse(rfc3339, strlen(rfc3339), &t), 0);
	return t;
}

#define NOW_S "2023-01-05T12:00:00Z"

/* configuredLegacyTokenCleanUpPeriod(start): now - start's midnight */
static int64_t period(const char *start)
{
	char full[32];
	snprintf(full, sizeof(full), "%sT00:00:00Z", start);
	return at(NOW_S) - at(full);
}

/* configuredServiceAccountTokenSecret */
static char *secret(const char *last_used, const char *invalid_since, const char *created,
                    const char *sa_name, const char *sa_uid, bool deleting)
{
	char labels[256] = "", *out;
	int n = 0;
	if (*last_used)
		n += snprintf(labels + n, sizeof(labels) - (size_t)n, "\"%s\":\"%s\"",
		              LSA_LAST_USED, last_used);
	if (*invalid_since)
		n += snprintf(labels + n, sizeof(labels) - (size_t)n, "%s\"%s\":\"%s\"",
		              n ? "," : "", LSA_INVALID_SINCE, invalid_since);
	assert_true(asprintf(&out,
	                     "{\"metadata\":{\"name\":\"token-secret-1\",\"namespace\":\"default\","
	                     "\"uid\":\"23456\",\"resourceVersion\":\"1\",\"labels\":{%s},"
	                     "\"creationTimestamp\":\"%sT00:00:00Z\"%s,\"annotations\":{"
	                     "\"kubernetes.io/service-account.name\":\"%s\","
	                     "\"kubernetes.io/service-account.uid\":\"%s\"}},"
	                     "\"type\":\"kubernetes.io/service-account-token\"}",
	                     labels, created,
	                     deleting ? ",\"deletionTimestamp\":\"2023-01-05T11:00:00Z\"" : "",
	                     sa_name, sa_uid) > 0);
	return out;
}

static const char sa_refs[] = "{\"metadata\":{\"name\":\"default\",\"namespace\":\"default\","
                              "\"uid\":\"12345\"},\"secrets\":[{\"name\":\"token-secret-1\"}]}";
static const char sa_none[] = "{\"metadata\":{\"name\":\"default\",\"namespace\":\"default\","
                              "\"uid\":\"12345\"},\"secrets\":[]}";

/* the whole evaluation for one Secret, as the sync runs it: -1 skipped before the last step */
static int decide(const char *s, const char *sa, bool mounted, const char *start, char date[11])
{
	char name[64], uid[64];
	if (!lsa_candidate(s, strlen(s), at(NOW_S), period(start), name, sizeof(name), uid,
	                   sizeof(uid)))
		return -1;
	if (!sa || strcmp(name, "default") != 0 ||
	    !lsa_sa_references(sa, strlen(sa), uid, "token-secret-1"))
		return -1;
	if (mounted)
		return -1;
	return (int)lsa_final(s, strlen(s), at(NOW_S), period(start), date);
}

static void test_tracking(void **state)
{
	(void)state;
	const char *none = "{\"metadata\":{}}", *bad = "{\"data\":{\"since\":\"2022-12-27-1\"}}",
	           *late = "{\"data\":{\"since\":\"2022-12-29\"}}",
	           *ok = "{\"data\":{\"since\":\"2022-12-28\"}}";
	assert_int_equal(lsa_tracking_ready(none, strlen(none), at(NOW_S), period("2022-12-28")),
	                 -EINVAL);
	assert_int_equal(lsa_tracking_ready(bad, strlen(bad), at(NOW_S), period("2022-12-29")),
	                 -EINVAL);
	/* tracked since 12-29 (from 12-30): less than now - 12-29 */
	assert_int_equal(lsa_tracking_ready(late, strlen(late), at(NOW_S), period("2022-12-29")),
	                 0);
	assert_int_equal(lsa_tracking_ready(ok, strlen(ok), at(NOW_S), period("2022-12-30")), 1);
}

static void test_cases(void **state)
{
	(void)state;
	char date[11] = "", *s;
	struct {
		const char *what, *last_used, *invalid, *created, *sa_name, *sa_uid;
		bool deleting;
		const char *sa;
		bool mounted;
		const char *start;
		int want;
	} c[] = {
	        {"not referenced by the serviceaccount", "2022-12-27", "", "2022-12-27", "default",
	         "12345", false, sa_none, false, "2022-12-29", -1},
	        {"late creation time", "2022-12-27", "", "2022-12-30", "default", "12345", false,
	         sa_refs, false, "2022-12-29", -1},
	        {"deletion time", "2022-12-27", "", "2022-12-27", "default", "12345", true, sa_refs,
	         false, "2022-12-30", -1},
	        {"late last-used", "2022-12-30", "", "2022-12-27", "default", "12345", false,
	         sa_refs, false, "2022-12-29", -1},
	        {"last-used unparseable", "2022-12-27-1", "", "2022-12-27", "default", "12345",
	         false, sa_refs, false, "2022-12-29", -1},
	        {"service account missing", "2022-12-27", "", "2022-12-27", "default", "12345",
	         false, NULL, false, "2022-12-29", -1},
	        {"service account uid mismatch", "2022-12-27", "", "2022-12-27", "default",
	         "123456", false, sa_refs, false, "2022-12-29", -1},
	        {"service account name empty", "2022-12-27", "", "2022-12-27", "", "12345", false,
	         sa_refs, false, "2022-12-29", -1},
	        {"no last-used, not yet invalid", "", "", "2022-12-27", "default", "12345", false,
	         sa_refs, false, "2022-12-30", LSA_LABEL},
	        {"invalid-since unparseable", "", "2022-12-29-1", "2022-12-27", "default", "12345",
	         false, sa_refs, false, "2022-12-30", LSA_LABEL},
	        {"invalid for less than the period", "", "2023-01-01", "2022-12-27", "default",
	         "12345", false, sa_refs, false, "2022-12-29", LSA_KEEP},
	        {"invalid for more than the period", "", "2022-12-29", "2022-12-27", "default",
	         "12345", false, sa_refs, false, "2023-01-01", LSA_DELETE},
	        {"last used long ago, invalid long ago", "2022-12-28", "2022-12-29", "2022-12-27",
	         "default", "12345", false, sa_refs, false, "2023-01-01", LSA_DELETE},
	        {"mounted by a pod", "", "2022-12-29", "2022-12-27", "default", "12345", false,
	         sa_refs, true, "2023-01-01", -1},
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		s = secret(c[i].last_used, c[i].invalid, c[i].created, c[i].sa_name, c[i].sa_uid,
		           c[i].deleting);
		int got = decide(s, c[i].sa, c[i].mounted, c[i].start, date);
		if (got != c[i].want)
			fail_msg("%s: got %d, want %d", c[i].what, got, c[i].want);
		if (got == LSA_LABEL)
			assert_string_equal(date, "2023-01-05");
		free(s);
	}
	/* a Secret of another type is never a candidate */
	const char *opaque = "{\"metadata\":{\"creationTimestamp\":\"2020-01-01T00:00:00Z\"},"
	                     "\"type\":\"Opaque\"}";
	char n[8], u[8];
	assert_int_equal(lsa_candidate(opaque, strlen(opaque), at(NOW_S), period("2022-12-29"), n,
	                               sizeof(n), u, sizeof(u)),
	                 0);
}

struct names {
	char v[32][64];
	int n;
};

static void collect(const char *name, void *ud)
{
	struct names *c = ud;
	if (c->n < 32)
		snprintf(c->v[c->n++], 64, "%s", name);
}

static bool has(const struct names *c, const char *name)
{
	for (int i = 0; i < c->n; i++)
		if (!strcmp(c->v[i], name))
			return true;
	return false;
}

static void test_pod_secret_names(void **state)
{
	(void)state;
	const char *pod =
	        "{\"spec\":{\"imagePullSecrets\":[{\"name\":\"pull\"}],"
	        "\"initContainers\":[{\"envFrom\":[{\"secretRef\":{\"name\":\"init-envfrom\"}}]}],"
	        "\"containers\":[{\"env\":[{\"name\":\"A\",\"valueFrom\":{\"secretKeyRef\":"
	        "{\"name\":\"env-ref\",\"key\":\"k\"}}},{\"name\":\"B\",\"value\":\"x\"}]}],"
	        "\"ephemeralContainers\":[{\"envFrom\":[{\"secretRef\":{\"name\":\"eph\"}}]}],"
	        "\"volumes\":[{\"secret\":{\"secretName\":\"vol\"}},"
	        "{\"azureFile\":{\"secretName\":\"azure\"}},{\"cephfs\":{\"secretRef\":{\"name\":"
	        "\"ceph\"}}},{\"csi\":{\"nodePublishSecretRef\":{\"name\":\"csi\"}}},"
	        "{\"projected\":{\"sources\":[{\"secret\":{\"name\":\"proj\"}},{\"configMap\":"
	        "{\"name\":\"not-a-secret\"}}]}},{\"iscsi\":{\"secretRef\":{\"name\":\"iscsi\"}}},"
	        "{\"configMap\":{\"name\":\"cm\"}}]}}";
	struct names c = {0};
	lsa_pod_secret_names(pod, strlen(pod), collect, &c);
	const char *want[] = {"pull",  "init-envfrom", "env-ref", "eph",  "vol",
	                      "azure", "ceph",         "csi",     "proj", "iscsi"};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!has(&c, want[i]))
			fail_msg("%s not visited", want[i]);
	assert_int_equal(c.n, 10);
	assert_false(has(&c, "not-a-secret"));
	assert_false(has(&c, "cm"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_tracking),
	        cmocka_unit_test(test_cases),
	        cmocka_unit_test(test_pod_secret_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
