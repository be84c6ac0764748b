/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The service-cidr-controller's decisions (workers/servicecidr/cidr.h) on the cases of upstream's
 * pkg/controller/servicecidrs/servicecidrs_controller_test.go (v1.37.2): TestControllerSync
 * (the writes of one sync, by case name), TestController_canDeleteCIDR,
 * TestController_ipToCidrs, TestController_cidrToCidrs; and net/netip's parsing rules.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "workers/servicecidr/cidr.h"

static cJSON *cidr(const char *name, const char *primary, const char *secondary,
                   const char *extra_meta)
{
	char buf[1024];
	snprintf(buf, sizeof(buf),
	         "{\"metadata\":{\"name\":\"%s\"%s%s},\"spec\":{\"cidrs\":[\"%s\"%s%s%s]}}", name,
	         extra_meta ? "," : "", extra_meta ? extra_meta : "", primary,
	         secondary ? ",\"" : "", secondary ? secondary : "", secondary ? "\"" : "");
	cJSON *j = cJSON_Parse(buf);
	if (!j)
		fail_msg("bad JSON %s", buf);
	return j;
}

/* makeIPAddress: family from the name, managed by ipallocator.k8s.io */
static const char *label_of(void *ud, size_t i, const char *label)
{
	const char *const *names = ud;
	if (!strcmp(label, SCC_LABEL_MGD))
		return SCC_IPALLOCATOR;
	return strchr(names[i], ':') ? "IPv6" : "IPv4";
}

#define DEFAULT "kubernetes"

static void free_all(cJSON **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cJSON_Delete(v[i]);
}

/* TestController_canDeleteCIDR */
static void test_can_delete(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		int n_cidrs; /* 0: none; 1: the default; 2: + overlapping */
		const char *overlap4, *ip;
		bool want;
	} c[] = {
	        {"empty", 0, NULL, NULL, true},
	        {"CIDR and no IPs", 1, NULL, NULL, true},
	        {"CIDR with IPs", 1, NULL, "192.168.0.24", false},
	        {"CIDR without IPs", 1, NULL, "192.168.1.24", true},
	        {"CIDR with IPv4 address referencing the subnet address", 1, NULL, "192.168.0.0",
	         true},
	        {"CIDR with IPv4 address referencing the broadcast address", 1, NULL,
	         "192.168.0.255", true},
	        {"CIDR with IPv6 address referencing the broadcast address", 1, NULL,
	         "2001:0db2::ffff:ffff:ffff:ffff", false},
	        {"CIDR with same range overlapping and IPs", 2, "192.168.0.0/24", "192.168.0.23",
	         true},
	        {"CIDR with smaller range overlapping and IPs", 2, "192.168.0.0/26", "192.168.0.23",
	         true},
	        {"CIDR with smaller range overlapping but IPs orphan", 2, "192.168.0.0/28",
	         "192.168.0.23", false},
	        {"CIDR with larger range overlapping and IPs", 2, "192.168.0.0/16", "192.168.0.23",
	         true},
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		cJSON *all[2] = {0};
		size_t n = 0;
		if (c[i].n_cidrs >= 1)
			all[n++] = cidr(DEFAULT, "192.168.0.0/24", "2001:db2::/64", NULL);
		if (c[i].n_cidrs >= 2)
			all[n++] = cidr("overlapping", c[i].overlap4, "2001:db2::/64", NULL);
		cJSON *synced = cidr(DEFAULT, "192.168.0.0/24", "2001:db2::/64", NULL);
		const char *ips[1] = {c[i].ip};
		bool got = scc_can_delete(synced, (const cJSON *const *)all, n, ips,
		                          c[i].ip ? 1 : 0, label_of, (void *)ips);
		if (got != c[i].want)
			fail_msg("%s: canDeleteCIDR = %d, want %d", c[i].name, got, c[i].want);
		cJSON_Delete(synced);
		free_all(all, n);
	}
}

static void expect_names(const char *what, const char **got, size_t n, const char *want)
{
	char buf[256] = "";
	/* sorted, comma-joined */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && strcmp(got[j - 1], got[j]) > 0; j--) {
			const char *t = got[j];
			got[j] = got[j - 1];
			got[j - 1] = t;
		}
	for (size_t i = 0; i < n; i++) {
		strncat(buf, i ? "," : "", sizeof(buf) - strlen(buf) - 1);
		strncat(buf, got[i], sizeof(buf) - strlen(buf) - 1);
	}
	if (strcmp(buf, want))
		fail_msg("%s: got [%s], want [%s]", what, buf, want);
}

/* TestController_ipToCidrs */
static void test_ip_to_cidrs(void **state)
{
	(void)state;
	cJSON *all[5] = {
	        cidr(DEFAULT, "192.168.0.0/24", "2001:db2::/64", NULL),
	        cidr("overlapping", "192.168.0.0/24", "2001:db2::/64", NULL),
	        cidr("overlapping2", "192.168.0.0/26", "2001:db2::/96", NULL),
	        cidr("unrelated", "10.0.0.0/24", NULL, NULL),
	        cidr("unrelated2", "10.0.0.0/16", NULL, NULL),
	};
	const char *names[6];
	size_t k;

	k = scc_containing("192.168.0.23", NULL, 0, names);
	expect_names("empty", names, k, "");
	cJSON *one[3] = {all[0], all[3], all[4]};
	k = scc_containing("192.168.0.23", (const cJSON *const *)one, 3, names);
	expect_names("one CIDR", names, k, DEFAULT);
	cJSON *two_eq = cidr("overlapping", "192.168.0.0/24", "2001:db2::/96", NULL);
	cJSON *two[4] = {all[0], two_eq, all[3], all[4]};
	k = scc_containing("192.168.0.23", (const cJSON *const *)two, 4, names);
	expect_names("two equal CIDR", names, k, DEFAULT ",overlapping");
	cJSON_Delete(two_eq);
	k = scc_containing("192.168.0.23", (const cJSON *const *)all, 5, names);
	expect_names("three CIDR", names, k, DEFAULT ",overlapping,overlapping2");
	k = scc_containing("192.168.0.0", (const cJSON *const *)all, 5, names);
	expect_names("IPv4 subnet address", names, k, "");
	k = scc_containing("192.168.0.63", (const cJSON *const *)all, 5, names);
	expect_names("IPv4 broadcast address", names, k, DEFAULT ",overlapping");
	k = scc_containing("2001:db2::", (const cJSON *const *)all, 5, names);
	expect_names("IPv6 subnet address", names, k, "");
	k = scc_containing("2001:0db2::ffff:ffff:ffff:ffff", (const cJSON *const *)all, 5, names);
	expect_names("IPv6 broadcast address", names, k, DEFAULT ",overlapping");
	free_all(all, 5);
}

/* TestController_cidrToCidrs */
static void test_cidr_to_cidrs(void **state)
{
	(void)state;
	cJSON *me = cidr(DEFAULT, "192.168.0.0/24", "2001:db2::/64", NULL);
	cJSON *all[5] = {
	        cidr(DEFAULT, "192.168.0.0/24", "2001:db2::/64", NULL),
	        cidr("overlapping", "192.168.0.0/24", "2001:db2::/64", NULL),
	        cidr("overlapping2", "192.168.0.0/26", "2001:db2::/96", NULL),
	        cidr("unrelated", "10.0.0.0/24", NULL, NULL),
	        cidr("unrelated2", "10.0.0.0/16", NULL, NULL),
	};
	const char *names[6];
	size_t k = scc_overlapping(me, NULL, 0, names);
	expect_names("empty", names, k, "");
	cJSON *one[3] = {all[0], all[3], all[4]};
	k = scc_overlapping(me, (const cJSON *const *)one, 3, names);
	expect_names("one CIDR", names, k, DEFAULT);
	cJSON *two[4] = {all[0], all[1], all[3], all[4]};
	k = scc_overlapping(me, (const cJSON *const *)two, 4, names);
	expect_names("two equal CIDR", names, k, DEFAULT ",overlapping");
	k = scc_overlapping(me, (const cJSON *const *)all, 5, names);
	expect_names("three CIDR", names, k, DEFAULT ",overlapping,overlapping2");
	cJSON_Delete(me);
	free_all(all, 5);
}

/* TestControllerSync: the writes one sync makes */
static void test_controller_sync(void **state)
{
	(void)state;
	time_t now = time(NULL);
	char deleted_ts[64], deleting_ts[64], meta_deleted[160], meta_deleting[160];
	struct tm tm;
	time_t t1 = now - 11, t2 = now;
	gmtime_r(&t1, &tm);
	strftime(deleted_ts, sizeof(deleted_ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	gmtime_r(&t2, &tm);
	strftime(deleting_ts, sizeof(deleting_ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(meta_deleted, sizeof(meta_deleted),
	         "\"finalizers\":[\"" SCC_FINALIZER "\"],\"deletionTimestamp\":\"%s\"", deleted_ts);
	snprintf(meta_deleting, sizeof(meta_deleting),
	         "\"finalizers\":[\"" SCC_FINALIZER "\"],\"deletionTimestamp\":\"%s\"",
	         deleting_ts);
	static const struct {
		const char *name;
		int which;                 /* 0 default, 1 no-finalizer, 2 deleted, 3 deleting */
		const char *over4, *over6; /* an "overlapping" ServiceCIDR, or NULL */
		const char *ip;
		unsigned want;
	} c[] = {
	        {"default service CIDR must have finalizer", 0, NULL, NULL, NULL,
	         SCC_ADD_FINALIZER | SCC_READY},
	        {"service CIDR must have finalizer", 1, NULL, NULL, NULL,
	         SCC_ADD_FINALIZER | SCC_READY},
	        {"service CIDR being deleted must remove the finalizer", 2, NULL, NULL, NULL,
	         SCC_REMOVE_FINALIZER},
	        {"... but within the grace period must be requeued", 3, NULL, NULL, NULL,
	         SCC_REQUEUE},
	        {"... with IPv4 addresses should update the status", 2, NULL, NULL, "192.168.0.1",
	         SCC_TERMINATING},
	        {"... overlapping same range and IPv4 addresses", 2, "192.168.0.0/24",
	         "2001:db2::/64", "192.168.0.1", SCC_REMOVE_FINALIZER},
	        {"... overlapping and IPv4 addresses", 2, "192.168.0.0/16", "2001:db2::/64",
	         "192.168.0.1", SCC_REMOVE_FINALIZER},
	        {"... not overlapping and IPv4 addresses", 2, "192.168.255.0/26", "2001:db2::/64",
	         "192.168.0.1", SCC_TERMINATING},
	        {"... with IPv6 addresses should update the status", 2, NULL, NULL, "2001:db2::1",
	         SCC_TERMINATING},
	        {"... overlapping same range and IPv6 addresses", 2, "192.168.0.0/24",
	         "2001:db2::/64", "2001:db2::1", SCC_REMOVE_FINALIZER},
	        {"... overlapping and IPv6 addresses", 2, "192.168.0.0/16", "2001:db2::/48",
	         "2001:db2::1", SCC_REMOVE_FINALIZER},
	        {"... not overlapping and IPv6 addresses", 2, "192.168.255.0/26",
	         "2001:db2:a:b::/64", "2001:db2::1", SCC_TERMINATING},
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		static const char *const names[] = {DEFAULT, "no-finalizer", "deleted-cidr",
		                                    "deleting-cidr"};
		cJSON *all[2];
		size_t n = 0;
		all[n++] = cidr(names[c[i].which], "192.168.0.0/24", "2001:db2::/64",
		                c[i].which == 2   ? meta_deleted
		                : c[i].which == 3 ? meta_deleting
		                                  : NULL);
		if (c[i].over4)
			all[n++] = cidr("overlapping", c[i].over4, c[i].over6, NULL);
		const char *ips[1] = {c[i].ip};
		unsigned long long after = 0;
		unsigned got =
		        scc_decide(all[0], (const cJSON *const *)all, n, ips, c[i].ip ? 1 : 0,
		                   label_of, (void *)ips, (long long)now, &after);
		if (got != c[i].want)
			fail_msg("%s: actions %#x, want %#x", c[i].name, got, c[i].want);
		if (got & SCC_REQUEUE)
			assert_true(after > 0 && after <= SCC_GRACE_US);
		free_all(all, n);
	}

	/* a Ready=True condition already there: only the missing finalizer is written; with both,
	 * nothing; a Terminating condition already there: nothing */
	cJSON *ready = cidr("r", "10.0.0.0/24", NULL, NULL);
	cJSON_AddItemToObject(
	        ready, "status",
	        cJSON_Parse("{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\","
	                    "\"reason\":\"\",\"message\":\"" SCC_MSG_READY "\"}]}"));
	unsigned long long after;
	assert_int_equal(scc_decide(ready, NULL, 0, NULL, 0, label_of, NULL, now, &after),
	                 SCC_ADD_FINALIZER);
	cJSON_AddItemToArray(
	        cJSON_AddArrayToObject(cJSON_GetObjectItem(ready, "metadata"), "finalizers"),
	        cJSON_CreateString(SCC_FINALIZER));
	assert_int_equal(scc_decide(ready, NULL, 0, NULL, 0, label_of, NULL, now, &after), 0);
	cJSON_Delete(ready);
	cJSON *term = cidr("t", "10.0.0.0/24", NULL, meta_deleted);
	cJSON_AddItemToObject(
	        term, "status",
	        cJSON_Parse("{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\","
	                    "\"reason\":\"Terminating\",\"message\":\"" SCC_MSG_BLOCKED "\"}]}"));
	const char *ips[1] = {"10.0.0.5"};
	assert_int_equal(scc_decide(term, (const cJSON *const *)&term, 1, ips, 1, label_of,
	                            (void *)ips, now, &after),
	                 0);
	cJSON_Delete(term);
}

/* net/netip and the apply body */
static void test_parsing(void **state)
{
	(void)state;
	struct scc_prefix p;
	assert_int_equal(scc_parse_prefix("10.0.0.0/24", &p), 0);
	assert_true(p.v4);
	assert_int_equal(p.bits, 24);
	assert_int_equal(scc_parse_prefix("10.0.0.1/24", &p), 0); /* host bits are allowed */
	assert_int_equal(scc_parse_prefix("2001:db8::/64", &p), 0);
	assert_false(p.v4);
	static const char *const bad[] = {
	        "10.0.0.0", "010.0.0.0/8", "10.0.0.0/33", "10.0.0.0/08", "2001:db8::/129",
	        "/8",       "10.0.0.0/",   "x/8",         "10.0.0/8",    "1.2.3.4/-1"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (scc_parse_prefix(bad[i], &p) == 0)
			fail_msg("%s parsed", bad[i]);
	assert_int_equal(scc_parse_addr("1.2.3.04", &p), -EINVAL);
	assert_int_equal(scc_parse_addr("fe80::1%eth0", &p), -EINVAL);
	assert_string_equal(scc_cidr_family("10.0.0.0/24"), "IPv4");
	assert_string_equal(scc_cidr_family("2001:db8::/64"), "IPv6");
	assert_string_equal(scc_cidr_family("::ffff:10.0.0.0/120"), "IPv4");
	assert_string_equal(scc_cidr_family("nonsense"), "");
	struct scc_prefix a, b;
	scc_parse_prefix("10.0.0.0/8", &a);
	scc_parse_prefix("10.1.0.0/16", &b);
	assert_true(scc_overlaps(&a, &b));
	scc_parse_prefix("11.0.0.0/8", &b);
	assert_false(scc_overlaps(&a, &b));
	scc_parse_prefix("::/0", &b);
	assert_false(scc_overlaps(&a, &b)); /* families never overlap */

	char *body = scc_status_apply("x", "True", "", SCC_MSG_READY, "2026-01-01T00:00:00Z");
	cJSON *j = cJSON_Parse(body);
	const cJSON *cond = cJSON_GetArrayItem(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(j, "status"), "conditions"), 0);
	assert_string_equal(cJSON_GetObjectItem(j, "kind")->valuestring, "ServiceCIDR");
	assert_string_equal(cJSON_GetObjectItem(cond, "type")->valuestring, "Ready");
	assert_string_equal(cJSON_GetObjectItem(cond, "reason")->valuestring, "");
	assert_string_equal(cJSON_GetObjectItem(cond, "message")->valuestring, SCC_MSG_READY);
	cJSON_Delete(j);
	free(body);
}

/* malformed ServiceCIDRs never crash and never block a deletion by themselves */
static void test_malformed(void **state)
{
	(void)state;
	cJSON *bad = cJSON_Parse("{\"metadata\":{\"name\":\"b\",\"deletionTimestamp\":\"junk\"},"
	                         "\"spec\":{\"cidrs\":[5,\"x\",null]}}");
	cJSON *odd = cJSON_Parse("{\"metadata\":7,\"spec\":[]}");
	cJSON *all[2] = {bad, odd};
	const char *names[3];
	const char *ips[2] = {"bad ip", "10.0.0.1"};
	unsigned long long after;
	assert_true(
	        scc_can_delete(bad, (const cJSON *const *)all, 2, ips, 2, label_of, (void *)ips));
	assert_int_equal(scc_overlapping(odd, (const cJSON *const *)all, 2, names), 0);
	assert_int_equal(scc_containing("10.0.0.1", (const cJSON *const *)all, 2, names), 0);
	/* a deletionTimestamp that is not a time: the grace period counts from the epoch (over) */
	assert_int_equal(scc_decide(bad, (const cJSON *const *)all, 2, ips, 2, label_of,
	                            (void *)ips, 1000000, &after),
	                 0);
	cJSON_Delete(bad);
	cJSON_Delete(odd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_can_delete),    cmocka_unit_test(test_ip_to_cidrs),
	        cmocka_unit_test(test_cidr_to_cidrs), cmocka_unit_test(test_controller_sync),
	        cmocka_unit_test(test_parsing),       cmocka_unit_test(test_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
