/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/garbagecollector/tests/test-absent-cache.c: the absentOwnerCache LRU (upstream
 * uid_cache.go over k8s.io/utils/lru; TestAbsentOwnerCache's size-2 promotion/eviction).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "workers/garbagecollector/absent-cache.h"

static struct gc_ref rc(const char *name, const char *uid)
{
	return (struct gc_ref){"v1", "ReplicationController", name, uid, "ns1"};
}

static void test_lru_promotion(void **state)
{
	(void)state;
	struct gc_absent_cache *c;
	assert_int_equal(gc_absent_cache_new(2, &c), 0);
	struct gc_ref r1 = rc("rc1", "1"), r2 = rc("rc2", "2"), r3 = rc("rc3", "3");
	assert_int_equal(gc_absent_cache_add(c, &r1), 0);
	assert_int_equal(gc_absent_cache_add(c, &r2), 0);
	assert_true(gc_absent_cache_has(c, &r1));         /* a hit promotes rc1 */
	assert_int_equal(gc_absent_cache_add(c, &r3), 0); /* evicts rc2, the LRU */
	assert_true(gc_absent_cache_has(c, &r1));
	assert_false(gc_absent_cache_has(c, &r2));
	assert_true(gc_absent_cache_has(c, &r3));
	assert_int_equal(gc_absent_cache_len(c), 2);
	/* re-adding refreshes, no duplicate */
	assert_int_equal(gc_absent_cache_add(c, &r1), 0);
	assert_int_equal(gc_absent_cache_len(c), 2);
	gc_absent_cache_free(c);
}

static void test_key_is_all_five_fields(void **state)
{
	(void)state;
	struct gc_absent_cache *c;
	assert_int_equal(gc_absent_cache_new(GC_ABSENT_CACHE_SIZE, &c), 0);
	struct gc_ref r = rc("rc1", "1");
	gc_absent_cache_add(c, &r);
	struct gc_ref other = r;
	other.ns = ""; /* the cluster-scoped key is a different entry */
	assert_false(gc_absent_cache_has(c, &other));
	other = r;
	other.api_version = "apps/v1";
	assert_false(gc_absent_cache_has(c, &other));
	other = r;
	other.name = "rc2";
	assert_false(gc_absent_cache_has(c, &other));
	other = r;
	other.uid = "2";
	assert_false(gc_absent_cache_has(c, &other));
	/* field boundaries are kept: ("ab","c") != ("a","bc") */
	struct gc_ref x = {"v1", "K", "ab", "c", "n"}, y = {"v1", "K", "a", "bc", "n"};
	gc_absent_cache_add(c, &x);
	assert_false(gc_absent_cache_has(c, &y));
	gc_absent_cache_free(c);
}

static void test_capacity_500(void **state)
{
	(void)state;
	struct gc_absent_cache *c;
	assert_int_equal(gc_absent_cache_new(GC_ABSENT_CACHE_SIZE, &c), 0);
	char name[32], uid[32];
	for (int i = 0; i < 600; i++) {
		snprintf(name, sizeof name, "o%d", i);
		snprintf(uid, sizeof uid, "u%d", i);
		struct gc_ref r = rc(name, uid);
		assert_int_equal(gc_absent_cache_add(c, &r), 0);
	}
	assert_int_equal(gc_absent_cache_len(c), 500);
	struct gc_ref first = rc("o0", "u0"), kept = rc("o100", "u100"), last = rc("o599", "u599");
	assert_false(gc_absent_cache_has(c, &first));
	assert_true(gc_absent_cache_has(c, &kept));
	assert_true(gc_absent_cache_has(c, &last));
	gc_absent_cache_free(c);
	struct gc_absent_cache *none = NULL;
	assert_int_equal(gc_absent_cache_new(0, &none), -EINVAL);
	assert_null(none);
	gc_absent_cache_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_lru_promotion),
	        cmocka_unit_test(test_key_is_all_five_fields),
	        cmocka_unit_test(test_capacity_500),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
