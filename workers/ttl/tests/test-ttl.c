/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ttl-controller's rules (workers/ttl/ttl.h) with upstream's ttl_controller_test.go
 * (v1.37): TestDesiredTTL (the step table's hysteresis, each case from its count, step and
 * TTL), the patches of TestPatchNode/TestUpdateNodeIfNeeded, strconv.Atoi's reading of the
 * annotation; and the shared page (attach, magic, store/load across two mappings).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "workers/ttl/ttl.h"

static void step(bool add, int count, int desired, int bstep, int want)
{
	struct ttl_state s = {.count = count, .step = bstep, .desired = desired};
	if (add)
		ttl_node_added(&s);
	else
		ttl_node_deleted(&s);
	assert_int_equal(s.desired, want);
}

static void test_desired(void **state)
{
	(void)state;
	step(true, 0, 0, 0, 0);
	step(true, 99, 0, 0, 0);
	step(true, 100, 0, 0, 15);
	step(false, 101, 15, 1, 15);
	step(false, 91, 15, 1, 15);
	step(true, 91, 15, 1, 15);
	step(false, 90, 15, 1, 0);
	step(false, 1800, 300, 4, 60);
	step(false, 10000, 300, 4, 300);
	/* from an empty start (the initial list) */
	assert_int_equal(ttl_state_for(100).desired, 0);
	assert_int_equal(ttl_state_for(101).desired, 15);
	assert_int_equal(ttl_state_for(501).desired, 30);
	assert_int_equal(ttl_state_for(1001).desired, 60);
	assert_int_equal(ttl_state_for(2001).desired, 300);
	/* hysteresis: 95 nodes is 15 s on the way down, 0 s on the way up */
	struct ttl_state s = ttl_state_for(101);
	for (int i = 0; i < 6; i++)
		ttl_node_deleted(&s);
	assert_int_equal(s.count, 95);
	assert_int_equal(s.desired, 15);
	assert_int_equal(ttl_state_for(95).desired, 0);
}

/* The dispatcher's start-up and its resync from the arena may deliver a node's add twice (the
 * arena list and the change feed overlap): the count must be the number of nodes, as an
 * informer's store counts them. The CI failure this pins: 100 nodes created while kcmd started
 * were counted as 101+, the desired TTL went to 15 s and TestTTL_Annotations saw no 0. */
static void test_names_count_once(void **state)
{
	struct ttl_names t = {0};
	struct ttl_state s = {0};
	char name[32];

	(void)state;
	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "node-%d", i);
		assert_int_equal(ttl_names_add(&t, &s, name), 1);
	}
	/* the feed re-delivers the last 30 adds the arena listing already counted */
	for (int i = 70; i < 100; i++) {
		snprintf(name, sizeof(name), "node-%d", i);
		assert_int_equal(ttl_names_add(&t, &s, name), 0);
	}
	assert_int_equal(s.count, 100);
	assert_int_equal(s.desired, 0);
	assert_int_equal(ttl_names_add(&t, &s, "node-100"), 1);
	assert_int_equal(s.desired, 15);
	/* 12 deletes (one twice, one unknown) take it to 89 and back to 0 */
	for (int i = 89; i <= 100; i++) {
		snprintf(name, sizeof(name), "node-%d", i);
		assert_int_equal(ttl_names_del(&t, &s, name), 1);
	}
	assert_int_equal(ttl_names_del(&t, &s, "node-95"), 0);
	assert_int_equal(ttl_names_del(&t, &s, "never-added"), 0);
	assert_int_equal(s.count, 89);
	assert_int_equal(s.desired, 0);
	/* every remaining name is still found after the backward-shift deletes */
	for (int i = 0; i < 89; i++) {
		snprintf(name, sizeof(name), "node-%d", i);
		assert_int_equal(ttl_names_add(&t, &s, name), 0);
	}
	assert_int_equal(t.n, 89);
	ttl_names_free(&t);
	assert_int_equal(ttl_names_del(&t, &s, "node-1"), 0);
}

static void test_parse_and_patch(void **state)
{
	int64_t v = -1;
	char b[128];
	(void)state;
	assert_true(ttl_parse("60", &v) && v == 60);
	assert_true(ttl_parse("+7", &v) && v == 7);
	assert_true(ttl_parse("-3", &v) && v == -3);
	assert_false(ttl_parse("", &v));
	assert_false(ttl_parse("1.5", &v));
	assert_false(ttl_parse(" 1", &v));
	assert_false(ttl_parse("-", &v));
	assert_false(ttl_parse("99999999999999999999", &v));
	assert_false(ttl_parse(NULL, &v));
	assert_true(ttl_patch_body(b, sizeof(b), 30) > 0);
	assert_string_equal(
	        b, "{\"metadata\":{\"annotations\":{\"node.alpha.kubernetes.io/ttl\":\"30\"}}}");
	assert_int_equal(ttl_patch_body(b, 10, 30), -ENAMETOOLONG);
}

static void test_region(void **state)
{
	struct ttl_region *w = NULL, *r = NULL;
	int fd = ttl_region_memfd_create();
	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(ttl_region_attach(fd, true, &w), 0);
	assert_int_equal(ttl_region_attach(fd, false, &r), 0);
	struct ttl_state s = ttl_state_for(150);
	ttl_region_store(w, &s);
	struct ttl_state got = ttl_region_load(r);
	assert_int_equal(got.desired, 15);
	assert_int_equal(got.count, 150);
	assert_int_equal(got.step, 1);
	ttl_region_detach(w);
	ttl_region_detach(r);
	/* a page of another kind is refused */
	int bad = memfd_create("x", 0);
	assert_int_equal(ftruncate(bad, 4096), 0);
	assert_int_equal(ttl_region_attach(bad, false, &r), -EPROTO);
	close(bad);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_desired),
	        cmocka_unit_test(test_names_count_once),
	        cmocka_unit_test(test_parse_and_patch),
	        cmocka_unit_test(test_region),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
