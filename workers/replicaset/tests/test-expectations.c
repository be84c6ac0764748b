/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/replicaset/tests/test-expectations.c: cmocka units for the shared expectations.
 * The cases follow upstream's controller_utils_test.go (TestControllerExpectations,
 * TestUIDExpectations) and replica_set_test.go (expectation handling in syncs) rewritten for
 * the two-role API, plus the kcmd-only crash rules (orphaned, torn, informer restart).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "workers/replicaset/expectations.h"

#define SEC INT64_C(1000000000)
#define T0  (INT64_C(1000) * SEC)

struct fx {
	int fd;
	struct rs_exp *w, *inf;
};

static int setup_opts(void **state, uint32_t cap)
{
	static struct fx f;
	struct rs_exp_create_opts o = {.capacity = cap};
	f.fd = rs_exp_memfd_create(&o);
	assert_true(f.fd >= 0);
	assert_int_equal(rs_exp_attach(f.fd, RS_EXP_INFORMER, T0 - 100 * SEC, &f.inf), 0);
	assert_int_equal(rs_exp_attach(f.fd, RS_EXP_WORKER, 0, &f.w), 0);
	*state = &f;
	return 0;
}
static int setup(void **state)
{
	return setup_opts(state, 0);
}
static int setup_small(void **state)
{
	return setup_opts(state, 2);
}

static int teardown(void **state)
{
	struct fx *f = *state;
	rs_exp_detach(f->w);
	rs_exp_detach(f->inf);
	close(f->fd);
	return 0;
}

static enum rs_exp_verdict verdict(struct rs_exp *e, const char *key, int64_t now)
{
	struct rs_exp_state st;
	bool ok = rs_exp_satisfied(e, key, now, &st);
	assert_int_equal(ok, st.verdict != RS_EXP_PENDING);
	return st.verdict;
}

static void test_absent_is_satisfied(void **state)
{
	struct fx *f = *state;
	assert_int_equal(verdict(f->w, "ns/rs", T0), RS_EXP_ABSENT);
	/* observations without a record are no-ops */
	assert_int_equal(rs_exp_creation_observed(f->inf, "ns/rs"), 0);
	assert_int_equal(rs_exp_deletion_observed(f->inf, "ns/rs", "ns/p"), 0);
	assert_int_equal(rs_exp_lower_creations(f->w, "ns/rs", 1), 0);
	assert_int_equal(verdict(f->w, "ns/rs", T0), RS_EXP_ABSENT);
}

static void test_creations(void **state)
{
	struct fx *f = *state;
	struct rs_exp_state st;
	assert_int_equal(rs_exp_expect_creations(f->w, "ns/rs", 3, T0), 0);
	assert_false(rs_exp_satisfied(f->w, "ns/rs", T0, &st));
	assert_int_equal(st.adds_left, 3);
	assert_int_equal(rs_exp_creation_observed(f->inf, "ns/rs"), 1);
	assert_int_equal(rs_exp_creation_observed(f->inf, "ns/rs"), 1);
	assert_false(rs_exp_satisfied(f->w, "ns/rs", T0, &st));
	assert_int_equal(st.adds_left, 1);
	/* other keys are untouched */
	assert_int_equal(rs_exp_creation_observed(f->inf, "ns/other"), 0);
	assert_int_equal(rs_exp_creation_observed(f->inf, "ns/rs"), 1);
	assert_true(rs_exp_satisfied(f->w, "ns/rs", T0, &st));
	assert_int_equal(st.verdict, RS_EXP_FULFILLED);
	/* counters may go negative: any new pod resolving to the RS counts */
	assert_int_equal(rs_exp_creation_observed(f->inf, "ns/rs"), 1);
	assert_true(rs_exp_satisfied(f->w, "ns/rs", T0, &st));
	assert_int_equal(st.adds_left, -1);
}

static void test_replace_voids_old_observations(void **state)
{
	struct fx *f = *state;
	struct rs_exp_state st;
	assert_int_equal(rs_exp_expect_creations(f->w, "ns/rs", 2, T0), 0);
	assert_int_equal(rs_exp_creation_observed(f->inf, "ns/rs"), 1);
	assert_int_equal(rs_exp_creation_observed(f->inf, "ns/rs"), 1);
	assert_int_equal(rs_exp_creation_observed(f->inf, "ns/rs"), 1); /* adds = -1 */
	assert_true(rs_exp_satisfied(f->w, "ns/rs", T0, NULL));
	/* ExpectCreations replaces the record: the -1 is gone */
	assert_int_equal(rs_exp_expect_creations(f->w, "ns/rs", 2, T0 + SEC), 0);
	assert_false(rs_exp_satisfied(f->w, "ns/rs", T0 + SEC, &st));
	assert_int_equal(st.adds_left, 2);
	/* ExpectDeletions replaces it too: adds back to 0 */
	const char *keys[] = {"ns/a"};
	assert_int_equal(rs_exp_expect_deletions(f->w, "ns/rs", keys, 1, T0 + 2 * SEC), 0);
	assert_false(rs_exp_satisfied(f->w, "ns/rs", T0 + 2 * SEC, &st));
	assert_int_equal(st.adds_left, 0);
	assert_int_equal(st.dels_left, 1);
}

static void test_deletions_tracked_by_key(void **state)
{
	struct fx *f = *state;
	struct rs_exp_state st;
	const char *keys[] = {"ns/a", "ns/b", "ns/b", "ns/c"};
	assert_int_equal(rs_exp_expect_deletions(f->w, "ns/rs", keys, 4, T0), 0);
	assert_false(rs_exp_satisfied(f->w, "ns/rs", T0, &st));
	assert_int_equal(st.dels_left, 3); /* a set: b counts once */
	/* a deletion we did not ask for is not counted */
	assert_int_equal(rs_exp_deletion_observed(f->inf, "ns/rs", "ns/zzz"), 0);
	assert_int_equal(rs_exp_deletion_observed(f->inf, "ns/rs", "ns/a"), 1);
	/* seen first as a deletionTimestamp update, then as the delete: counted once */
	assert_int_equal(rs_exp_deletion_observed(f->inf, "ns/rs", "ns/a"), 0);
	/* a failed DELETE lowers the expectation from the worker side */
	assert_int_equal(rs_exp_deletion_failed(f->w, "ns/rs", "ns/b"), 1);
	assert_int_equal(rs_exp_deletion_failed(f->w, "ns/rs", "ns/b"), 0);
	/* and informerd seeing the same pod afterwards does not count twice */
	assert_int_equal(rs_exp_deletion_observed(f->inf, "ns/rs", "ns/b"), 0);
	assert_false(rs_exp_satisfied(f->w, "ns/rs", T0, &st));
	assert_int_equal(st.dels_left, 1);
	/* worker after informer: also once */
	assert_int_equal(rs_exp_deletion_observed(f->inf, "ns/rs", "ns/c"), 1);
	assert_int_equal(rs_exp_deletion_failed(f->w, "ns/rs", "ns/c"), 0);
	assert_true(rs_exp_satisfied(f->w, "ns/rs", T0, &st));
	assert_int_equal(st.verdict, RS_EXP_FULFILLED);
	/* creations observed during a deletion generation push adds negative, still satisfied */
	assert_int_equal(rs_exp_creation_observed(f->inf, "ns/rs"), 1);
	assert_true(rs_exp_satisfied(f->w, "ns/rs", T0, &st));
	assert_int_equal(st.adds_left, -1);
	/* a new ExpectDeletions with the same keys starts over */
	assert_int_equal(rs_exp_expect_deletions(f->w, "ns/rs", keys, 2, T0), 0);
	assert_false(rs_exp_satisfied(f->w, "ns/rs", T0, &st));
	assert_int_equal(st.dels_left, 2);
}

static void test_expect_both(void **state)
{
	/* rs_exp_expect: SetExpectations(key, add, del) of the DaemonSet controller, both counts in
	 * one generation; satisfied once the creations and the set's deletions are all seen */
	struct fx *f = *state;
	struct rs_exp_state st;
	const char *keys[] = {"ns/a", "ns/b"};
	assert_int_equal(rs_exp_expect(f->w, "ns/ds", 2, keys, 2, T0), 0);
	assert_false(rs_exp_satisfied(f->w, "ns/ds", T0, &st));
	assert_int_equal(st.adds_left, 2);
	assert_int_equal(st.dels_left, 2);
	assert_int_equal(rs_exp_creation_observed(f->inf, "ns/ds"), 1);
	assert_int_equal(rs_exp_creation_observed(f->inf, "ns/ds"), 1);
	assert_false(rs_exp_satisfied(f->w, "ns/ds", T0, &st)); /* deletions pending */
	assert_int_equal(rs_exp_deletion_observed(f->inf, "ns/ds", "ns/x"), 0);
	assert_int_equal(rs_exp_deletion_observed(f->inf, "ns/ds", "ns/a"), 1);
	assert_int_equal(rs_exp_deletion_failed(f->w, "ns/ds", "ns/b"), 1);
	assert_true(rs_exp_satisfied(f->w, "ns/ds", T0, &st));
	assert_int_equal(st.verdict, RS_EXP_FULFILLED);
	/* zero of both: fulfilled at once; a negative count is refused */
	assert_int_equal(rs_exp_expect(f->w, "ns/ds", 0, NULL, 0, T0), 0);
	assert_true(rs_exp_satisfied(f->w, "ns/ds", T0, NULL));
	assert_int_equal(rs_exp_expect(f->w, "ns/ds", -1, NULL, 0, T0), -EINVAL);
}

static void test_lower_creations(void **state)
{
	struct fx *f = *state;
	struct rs_exp_state st;
	assert_int_equal(rs_exp_expect_creations(f->w, "ns/rs", 7, T0), 0);
	assert_int_equal(rs_exp_creation_observed(f->inf, "ns/rs"), 1); /* one created */
	assert_int_equal(rs_exp_lower_creations(f->w, "ns/rs", 5), 0);  /* five skipped */
	assert_false(rs_exp_satisfied(f->w, "ns/rs", T0, &st));
	assert_int_equal(st.adds_left, 1);
	assert_int_equal(rs_exp_creation_observed(f->inf, "ns/rs"), 1);
	assert_true(rs_exp_satisfied(f->w, "ns/rs", T0, NULL));
}

static void test_timeout(void **state)
{
	struct fx *f = *state;
	assert_int_equal(rs_exp_expect_creations(f->w, "ns/rs", 1, T0), 0);
	assert_int_equal(rs_exp_settle(f->w, "ns/rs"), 0);
	struct rs_exp_state st;
	assert_false(rs_exp_satisfied(f->w, "ns/rs", T0 + RS_EXP_TIMEOUT_NS,
	                              &st)); /* not yet: strictly after */
	assert_int_equal(st.recheck_after_ns, 1);
	assert_false(st.orphaned);
	assert_int_equal(verdict(f->w, "ns/rs", T0 + RS_EXP_TIMEOUT_NS + 1), RS_EXP_EXPIRED);
	/* a fresh ExpectCreations restarts the clock */
	assert_int_equal(rs_exp_expect_creations(f->w, "ns/rs", 1, T0 + RS_EXP_TIMEOUT_NS + 1), 0);
	assert_int_equal(verdict(f->w, "ns/rs", T0 + RS_EXP_TIMEOUT_NS + 2), RS_EXP_PENDING);
}

static void test_delete(void **state)
{
	struct fx *f = *state;
	assert_int_equal(rs_exp_expect_creations(f->w, "ns/rs", 1, T0), 0);
	assert_int_equal(rs_exp_delete(f->w, "ns/rs"), 0);
	assert_int_equal(verdict(f->w, "ns/rs", T0), RS_EXP_ABSENT);
	assert_int_equal(rs_exp_delete(f->w, "ns/rs"), -ENOENT);
	assert_int_equal(rs_exp_creation_observed(f->inf, "ns/rs"), 0);
	/* the RS delete handler's DeleteExpectations */
	assert_int_equal(rs_exp_expect_creations(f->w, "ns/rs", 1, T0), 0);
	assert_int_equal(rs_exp_informer_delete(f->inf, "ns/rs"), 1);
	assert_int_equal(verdict(f->w, "ns/rs", T0), RS_EXP_ABSENT);
	assert_int_equal(rs_exp_creation_observed(f->inf, "ns/rs"), 0);
	/* recreated RS of the same name: a new record is live again */
	assert_int_equal(rs_exp_expect_creations(f->w, "ns/rs", 1, T0), 0);
	assert_int_equal(verdict(f->w, "ns/rs", T0), RS_EXP_PENDING);
	assert_int_equal(rs_exp_creation_observed(f->inf, "ns/rs"), 1);
	assert_int_equal(verdict(f->w, "ns/rs", T0), RS_EXP_FULFILLED);
}

static void test_roles_and_args(void **state)
{
	struct fx *f = *state;
	char longkey[RS_EXP_KEY_MAX + 2];
	memset(longkey, 'a', sizeof longkey - 1);
	longkey[sizeof longkey - 1] = 0;
	assert_int_equal(rs_exp_expect_creations(f->inf, "ns/rs", 1, T0), -EPERM);
	assert_int_equal(rs_exp_expect_deletions(f->inf, "ns/rs", NULL, 0, T0), -EPERM);
	assert_int_equal(rs_exp_delete(f->inf, "ns/rs"), -EPERM);
	assert_int_equal(rs_exp_creation_observed(f->w, "ns/rs"), -EPERM);
	assert_int_equal(rs_exp_deletion_observed(f->w, "ns/rs", "ns/p"), -EPERM);
	assert_int_equal(rs_exp_informer_delete(f->w, "ns/rs"), -EPERM);
	assert_int_equal(rs_exp_expect_creations(f->w, "", 1, T0), -EINVAL);
	assert_int_equal(rs_exp_expect_creations(f->w, NULL, 1, T0), -EINVAL);
	assert_int_equal(rs_exp_expect_creations(f->w, "ns/rs", -1, T0), -EINVAL);
	assert_int_equal(rs_exp_expect_creations(f->w, longkey, 1, T0), -EINVAL);
	longkey[RS_EXP_KEY_MAX] = 0; /* exactly the maximum is fine */
	assert_int_equal(rs_exp_expect_creations(f->w, longkey, 1, T0), 0);
	assert_int_equal(rs_exp_creation_observed(f->inf, longkey), 1);
	assert_int_equal(verdict(f->w, longkey, T0), RS_EXP_FULFILLED);
	static const char *many[RS_EXP_MAX_DELETES + 1];
	for (unsigned i = 0; i <= RS_EXP_MAX_DELETES; i++)
		many[i] = "ns/p";
	assert_int_equal(rs_exp_expect_deletions(f->w, "ns/rs", many, RS_EXP_MAX_DELETES + 1, T0),
	                 -EINVAL);
	assert_int_equal(rs_exp_expect_deletions(f->w, "ns/rs", many, RS_EXP_MAX_DELETES, T0), 0);
	assert_int_equal(rs_exp_attach(-1, RS_EXP_WORKER, 0, &(struct rs_exp *){NULL}), -EINVAL);
	int bad = memfd_create("x", 0);
	assert_int_equal(ftruncate(bad, 65536), 0);
	struct rs_exp *x;
	assert_int_equal(rs_exp_attach(bad, RS_EXP_WORKER, 0, &x), -EPROTO);
	close(bad);
}

static void test_full_deletion_batch(void **state)
{
	struct fx *f = *state;
	static char names[RS_EXP_MAX_DELETES][32];
	static const char *keys[RS_EXP_MAX_DELETES];
	for (unsigned i = 0; i < RS_EXP_MAX_DELETES; i++) {
		snprintf(names[i], sizeof names[i], "ns/rs-%05u", i);
		keys[i] = names[i];
	}
	assert_int_equal(rs_exp_expect_deletions(f->w, "ns/rs", keys, RS_EXP_MAX_DELETES, T0), 0);
	for (unsigned i = 0; i < RS_EXP_MAX_DELETES; i++) {
		assert_int_equal(verdict(f->w, "ns/rs", T0), RS_EXP_PENDING);
		if (i % 3)
			assert_int_equal(rs_exp_deletion_observed(f->inf, "ns/rs", keys[i]), 1);
		else
			assert_int_equal(rs_exp_deletion_failed(f->w, "ns/rs", keys[i]), 1);
	}
	assert_int_equal(verdict(f->w, "ns/rs", T0), RS_EXP_FULFILLED);
}

/* A worker killed between ExpectCreations and settle: another pid sees the record orphaned;
 * it expires after the grace, not after 5 minutes. */
static void test_orphaned_by_dead_worker(void **state)
{
	struct fx *f = *state;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rs_exp *w2;
		if (rs_exp_attach(f->fd, RS_EXP_WORKER, 0, &w2) < 0)
			_exit(2);
		_exit(rs_exp_expect_creations(w2, "ns/rs", 5, T0) < 0 ? 3 : 0); /* dies in flight */
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(WEXITSTATUS(status), 0);
	struct rs_exp_state st;
	assert_false(rs_exp_satisfied(f->w, "ns/rs", T0 + SEC, &st));
	assert_true(st.orphaned);
	assert_int_equal(st.recheck_after_ns, RS_EXP_ORPHAN_GRACE_NS - SEC + 1);
	/* observations still count while it waits */
	for (int i = 0; i < 5; i++)
		assert_int_equal(rs_exp_creation_observed(f->inf, "ns/rs"), 1);
	assert_int_equal(verdict(f->w, "ns/rs", T0 + SEC), RS_EXP_FULFILLED);
	/* a settled record of a dead worker is not orphaned */
	pid = fork();
	if (pid == 0) {
		struct rs_exp *w2;
		if (rs_exp_attach(f->fd, RS_EXP_WORKER, 0, &w2) < 0)
			_exit(2);
		if (rs_exp_expect_creations(w2, "ns/rs", 5, T0) < 0 ||
		    rs_exp_settle(w2, "ns/rs") < 0)
			_exit(3);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_false(rs_exp_satisfied(f->w, "ns/rs", T0 + 2 * RS_EXP_ORPHAN_GRACE_NS, &st));
	assert_false(st.orphaned);
	/* unsettled again, then the grace passes */
	pid = fork();
	if (pid == 0) {
		struct rs_exp *w2;
		if (rs_exp_attach(f->fd, RS_EXP_WORKER, 0, &w2) < 0)
			_exit(2);
		_exit(rs_exp_expect_creations(w2, "ns/rs", 5, T0) < 0 ? 3 : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(verdict(f->w, "ns/rs", T0 + RS_EXP_ORPHAN_GRACE_NS), RS_EXP_PENDING);
	assert_int_equal(verdict(f->w, "ns/rs", T0 + RS_EXP_ORPHAN_GRACE_NS + 1),
	                 RS_EXP_ORPHAN_EXPIRED);
	/* the caller's own unsettled record is not orphaned */
	assert_int_equal(rs_exp_expect_creations(f->w, "ns/rs", 5, T0), 0);
	assert_false(rs_exp_satisfied(f->w, "ns/rs", T0 + 2 * RS_EXP_ORPHAN_GRACE_NS, &st));
	assert_false(st.orphaned);
}

static void test_informer_restart(void **state)
{
	struct fx *f = *state;
	struct rs_exp_state st;
	assert_int_equal(rs_exp_expect_creations(f->w, "ns/rs", 2, T0), 0);
	assert_int_equal(rs_exp_settle(f->w, "ns/rs"), 0);
	assert_false(rs_exp_satisfied(f->w, "ns/rs", T0 + 30 * SEC, &st));
	assert_false(st.orphaned);
	/* informerd dies and a new one attaches 100 s later: observations may be lost */
	f->inf = rs_exp_detach(f->inf);
	assert_int_equal(rs_exp_attach(f->fd, RS_EXP_INFORMER, T0 + 100 * SEC, &f->inf), 0);
	assert_false(rs_exp_satisfied(f->w, "ns/rs", T0 + 100 * SEC, &st));
	assert_true(st.orphaned);
	assert_int_equal(st.recheck_after_ns, RS_EXP_ORPHAN_GRACE_NS + 1);
	assert_int_equal(verdict(f->w, "ns/rs", T0 + 100 * SEC + RS_EXP_ORPHAN_GRACE_NS + 1),
	                 RS_EXP_ORPHAN_EXPIRED);
	/* records written after the restart follow the normal rules */
	assert_int_equal(rs_exp_expect_creations(f->w, "ns/rs", 1, T0 + 200 * SEC), 0);
	assert_int_equal(rs_exp_settle(f->w, "ns/rs"), 0);
	assert_false(rs_exp_satisfied(f->w, "ns/rs", T0 + 290 * SEC, &st));
	assert_false(st.orphaned);
}

/* Direct access to the slots for the crash cases. */
static struct rs_exp_ix *raw_ix;
static uint32_t raw_cap;
static struct rs_exp_slot *raw_live_slot(int fd, void **map, size_t *size)
{
	struct rs_exp_header h;
	assert_int_equal(pread(fd, &h, sizeof h, 0), (ssize_t)sizeof h);
	*size = rs_exp_slots_offset(h.capacity) + (size_t)h.capacity * sizeof(struct rs_exp_slot);
	*map = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(*map != MAP_FAILED);
	raw_ix = (void *)((char *)*map + RS_EXP_HEADER_SIZE);
	raw_cap = h.capacity;
	struct rs_exp_slot *slots = (void *)((char *)*map + rs_exp_slots_offset(h.capacity));
	for (uint32_t i = 0; i < h.capacity; i++)
		if ((atomic_load(&raw_ix[i].state) & 3) == RS_EXP_SLOT_LIVE)
			return &slots[i];
	return NULL;
}

static void test_torn_record(void **state)
{
	struct fx *f = *state;
	assert_int_equal(rs_exp_expect_creations(f->w, "ns/rs", 4, T0), 0);
	void *map;
	size_t size;
	struct rs_exp_slot *s = raw_live_slot(f->fd, &map, &size);
	assert_non_null(s);
	/* a writer killed after making seq odd */
	atomic_fetch_add(&s->seq, 1);
	assert_int_equal(verdict(f->w, "ns/rs", T0), RS_EXP_TORN);
	assert_int_equal(rs_exp_creation_observed(f->inf, "ns/rs"), 0);
	assert_int_equal(rs_exp_lower_creations(f->w, "ns/rs", 1), 0);
	/* informerd's delete while torn targets the next publication, which never comes */
	assert_int_equal(rs_exp_informer_delete(f->inf, "ns/rs"), 1);
	/* the next lease holder rewrites it normally */
	assert_int_equal(rs_exp_expect_creations(f->w, "ns/rs", 1, T0), 0);
	assert_int_equal(atomic_load(&s->seq) & 1, 0);
	assert_int_equal(verdict(f->w, "ns/rs", T0), RS_EXP_PENDING);
	assert_int_equal(rs_exp_creation_observed(f->inf, "ns/rs"), 1);
	assert_int_equal(verdict(f->w, "ns/rs", T0), RS_EXP_FULFILLED);
	munmap(map, size);
}

static void test_capacity_and_reclaim(void **state)
{
	struct fx *f = *state;
	uint32_t c[4];
	assert_int_equal(rs_exp_expect_creations(f->w, "ns/a", 1, T0), 0);
	assert_int_equal(rs_exp_expect_creations(f->w, "ns/b", 1, T0), 0);
	assert_int_equal(rs_exp_expect_creations(f->w, "ns/c", 1, T0), -ENOSPC);
	/* a full table is counted and exported (E7) */
	char *text = NULL;
	assert_int_equal(rs_exp_metrics_text(f->w, &text), 0);
	assert_non_null(strstr(text, "kcmd_replicaset_expectations_capacity 2\n"));
	assert_non_null(strstr(text, "kcmd_replicaset_expectations_table_full_total 1\n"));
	free(text);
	assert_int_equal(rs_exp_delete(f->w, "ns/a"), 0);
	rs_exp_count(f->w, c);
	assert_int_equal(c[RS_EXP_SLOT_TOMBSTONE], 1);
	assert_int_equal(rs_exp_expect_creations(f->w, "ns/c", 1, T0),
	                 0); /* reuses the tombstone */
	assert_int_equal(verdict(f->w, "ns/b", T0), RS_EXP_PENDING);
	assert_int_equal(verdict(f->w, "ns/c", T0), RS_EXP_PENDING);
	assert_int_equal(rs_exp_creation_observed(f->inf, "ns/c"), 1);
	assert_int_equal(verdict(f->w, "ns/c", T0), RS_EXP_FULFILLED);
	assert_int_equal(verdict(f->w, "ns/b", T0), RS_EXP_PENDING);
	/* a claimer killed before publishing leaves CLAIMED(pid): the manager reclaims it */
	assert_int_equal(rs_exp_delete(f->w, "ns/b"), 0);
	void *map;
	size_t size;
	struct rs_exp_slot *s = raw_live_slot(f->fd, &map, &size);
	size_t si =
	        (size_t)(s - (struct rs_exp_slot *)((char *)map + rs_exp_slots_offset(raw_cap)));
	struct rs_exp_ix *other = &raw_ix[si == 0 ? 1 : si - 1];
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	atomic_store(&other->state, RS_EXP_SLOT_CLAIMED | ((uint64_t)pid << 32));
	assert_int_equal(rs_exp_reclaim_pid(f->w, pid + 1), 0);
	assert_int_equal(rs_exp_reclaim_pid(f->w, pid), 1);
	rs_exp_count(f->w, c);
	assert_int_equal(c[RS_EXP_SLOT_TOMBSTONE], 1);
	/* and a claim probing past a dead claimer frees it lazily */
	atomic_store(&other->state, RS_EXP_SLOT_CLAIMED | ((uint64_t)pid << 32));
	assert_int_equal(rs_exp_expect_creations(f->w, "ns/d", 1, T0), 0);
	assert_int_equal(verdict(f->w, "ns/d", T0), RS_EXP_PENDING);
	munmap(map, size);
}

/* Two controllers on this engine (flavour.h): upstream's families are rendered once, summed over
 * both regions, by the one given them; each renders its own kcmd_<name>_ lines. */
static void test_metrics_two_controllers(void **state)
{
	struct fx *f = *state;
	struct rs_exp_create_opts o = {.capacity = 8};
	int fd2 = rs_exp_memfd_create(&o);
	struct rs_exp *rc = NULL;
	char *text = NULL;

	assert_true(fd2 >= 0);
	assert_int_equal(rs_exp_attach(fd2, RS_EXP_WORKER, 0, &rc), 0);
	rs_exp_metric_age_ratio(f->w, 0.2);
	rs_exp_metric_age_ratio(rc, 0.3);
	rs_exp_metric_age_ratio(rc, 100);
	struct rs_exp *both[] = {f->w, rc};
	assert_int_equal(rs_exp_metrics_text_ex(f->w, both, 2, "replicaset", "ReplicaSet", &text),
	                 0);
	assert_non_null(strstr(
	        text, "replicaset_controller_sorting_deletion_age_ratio_bucket{le=\"0.25\"} 1\n"));
	assert_non_null(strstr(
	        text, "replicaset_controller_sorting_deletion_age_ratio_bucket{le=\"0.5\"} 2\n"));
	assert_non_null(strstr(
	        text, "replicaset_controller_sorting_deletion_age_ratio_bucket{le=\"+Inf\"} 3\n"));
	assert_non_null(strstr(text, "replicaset_controller_sorting_deletion_age_ratio_count 3\n"));
	assert_non_null(strstr(text, "kcmd_replicaset_expectations_capacity"));
	assert_null(strstr(text, "replicationcontroller"));
	free(text);
	assert_int_equal(rs_exp_metrics_text_ex(rc, NULL, 0, "replicationcontroller",
	                                        "ReplicationController", &text),
	                 0);
	assert_null(strstr(text, "replicaset_controller_"));
	assert_non_null(strstr(text, "kcmd_replicationcontroller_expectations_capacity 8\n"));
	assert_non_null(
	        strstr(text, "kcmd_replicationcontroller_expectations_table_full_total 0\n"));
	free(text);
	rs_exp_detach(rc);
	close(fd2);
}

static void test_rv_compare(void **state)
{
	(void)state;
	int c;
	assert_int_equal(rs_rv_compare("10", "9", &c), 0);
	assert_int_equal(c, 1);
	assert_int_equal(rs_rv_compare("9", "10", &c), 0);
	assert_int_equal(c, -1);
	assert_int_equal(rs_rv_compare("123", "123", &c), 0);
	assert_int_equal(c, 0);
	assert_int_equal(rs_rv_compare("124", "123", &c), 0);
	assert_int_equal(c, 1);
	/* longer than uint64 is fine: compared as digits */
	assert_int_equal(rs_rv_compare("123456789012345678901234", "99999999999999999999", &c), 0);
	assert_int_equal(c, 1);
	assert_int_equal(rs_rv_compare("", "1", &c), -EINVAL);
	assert_int_equal(rs_rv_compare("0", "1", &c), -EINVAL);
	assert_int_equal(rs_rv_compare("01", "1", &c), -EINVAL);
	assert_int_equal(rs_rv_compare("1a", "1", &c), -EINVAL);
	assert_int_equal(rs_rv_compare("1", "-1", &c), -EINVAL);
	assert_int_equal(rs_rv_compare(NULL, "1", &c), -EINVAL);
	assert_string_equal(rs_cons_resource_name(RS_CONS_PODS), "pods");
	assert_string_equal(rs_cons_resource_name(RS_CONS_REPLICASETS), "replicasets.apps");
}

static void test_consistency_store(void **state)
{
	struct fx *f = *state;
	const char *rv[2] = {"100", "100"};
	struct rs_cons_stale st;
	/* no record: ready */
	assert_int_equal(rs_exp_ensure_ready(f->w, "ns/rs", rv, &st), 0);
	assert_int_equal(rs_exp_wrote_at(f->w, "ns/rs", "u1", RS_CONS_PODS, "150"), 0);
	/* an older write does not lower it */
	assert_int_equal(rs_exp_wrote_at(f->w, "ns/rs", "u1", RS_CONS_PODS, "120"), 0);
	assert_int_equal(rs_exp_ensure_ready(f->w, "ns/rs", rv, &st), 1);
	assert_int_equal(st.resource, RS_CONS_PODS);
	assert_string_equal(st.wrote_rv, "150");
	assert_string_equal(st.read_rv, "100");
	/* not ready keeps the record; ready clears it */
	const char *rv2[2] = {"150", "100"};
	assert_int_equal(rs_exp_ensure_ready(f->w, "ns/rs", rv2, &st), 0);
	assert_int_equal(rs_exp_ensure_ready(f->w, "ns/rs", (const char *[2]){"1", "1"}, &st), 0);
	/* another uid replaces the record (the old RVs go) */
	assert_int_equal(rs_exp_wrote_at(f->w, "ns/rs", "u1", RS_CONS_REPLICASETS, "300"), 0);
	assert_int_equal(rs_exp_wrote_at(f->w, "ns/rs", "u2", RS_CONS_PODS, "200"), 0);
	assert_int_equal(rs_exp_ensure_ready(f->w, "ns/rs", (const char *[2]){"200", "1"}, &st), 0);
	/* an unparseable stored RV is overwritten; an unparseable read RV lets it pass */
	assert_int_equal(rs_exp_wrote_at(f->w, "ns/rs", "u2", RS_CONS_PODS, "junk"), 0);
	assert_int_equal(rs_exp_wrote_at(f->w, "ns/rs", "u2", RS_CONS_PODS, "500"), 0);
	assert_int_equal(rs_exp_ensure_ready(f->w, "ns/rs", (const char *[2]){"400", "1"}, &st), 1);
	assert_int_equal(rs_exp_ensure_ready(f->w, "ns/rs", (const char *[2]){"x", "1"}, &st), 0);
	/* the record survives replaces of the expectations and is cleared with them by informerd */
	assert_int_equal(rs_exp_wrote_at(f->w, "ns/rs", "u2", RS_CONS_PODS, "500"), 0);
	assert_int_equal(rs_exp_expect_creations(f->w, "ns/rs", 1, T0), 0);
	const char *k[] = {"ns/p"};
	assert_int_equal(rs_exp_expect_deletions(f->w, "ns/rs", k, 1, T0), 0);
	assert_int_equal(rs_exp_ensure_ready(f->w, "ns/rs", rv, &st), 1);
	assert_int_equal(rs_exp_informer_delete(f->inf, "ns/rs"), 1);
	assert_int_equal(rs_exp_ensure_ready(f->w, "ns/rs", rv, &st), 0);
	/* a write after the delete mark starts a fresh generation: no expectations, live record */
	assert_int_equal(rs_exp_wrote_at(f->w, "ns/rs", "u3", RS_CONS_PODS, "700"), 0);
	assert_int_equal(verdict(f->w, "ns/rs", T0), RS_EXP_FULFILLED);
	assert_int_equal(rs_exp_ensure_ready(f->w, "ns/rs", rv, &st), 1);
	/* the worker's DeleteExpectations frees everything */
	assert_int_equal(rs_exp_delete(f->w, "ns/rs"), 0);
	assert_int_equal(rs_exp_ensure_ready(f->w, "ns/rs", rv, &st), 0);
	/* limits and roles */
	char big[80];
	memset(big, '1', sizeof big - 1);
	big[sizeof big - 1] = 0;
	assert_int_equal(rs_exp_wrote_at(f->w, "ns/rs", big, RS_CONS_PODS, "1"), -E2BIG);
	assert_int_equal(rs_exp_wrote_at(f->w, "ns/rs", "u", RS_CONS_PODS, big), -E2BIG);
	assert_int_equal(rs_exp_wrote_at(f->inf, "ns/rs", "u", RS_CONS_PODS, "1"), -EPERM);
	assert_int_equal(rs_exp_ensure_ready(f->inf, "ns/rs", rv, &st), -EPERM);
	/* a writer killed mid-record leaves none (cons_seq 0 while writing) */
	assert_int_equal(rs_exp_wrote_at(f->w, "ns/rs", "u4", RS_CONS_PODS, "900"), 0);
	void *map;
	size_t size;
	struct rs_exp_slot *s = raw_live_slot(f->fd, &map, &size);
	assert_non_null(s);
	atomic_store(&s->cons_seq, 0);
	assert_int_equal(rs_exp_ensure_ready(f->w, "ns/rs", rv, &st), 0);
	munmap(map, size);
}

/* issue 21: 50,000 ReplicaSets. Round 1 adds a record for each (default capacity), observes
 * it fulfilled, deletes it as the RS delete handler and the sync do; round 2 re-adds the same
 * keys, which must start clean (no observation of round 1 counts). Then, in a table of 65,536
 * slots, 50,000 more distinct keys go in after round 1's were freed: they fit only by reusing
 * the freed slots (100,000 keys through 65,536 slots), at a load of 0.76. */
static void rs_key(char *buf, size_t n, const char *tag, unsigned i)
{
	snprintf(buf, n, "ns-%u/rs-%s-%u", i % 97, tag, i);
}

static void add_observe(struct rs_exp *w, struct rs_exp *inf, const char *tag, unsigned n,
                        int64_t adds)
{
	char key[64];
	for (unsigned i = 0; i < n; i++) {
		rs_key(key, sizeof key, tag, i);
		assert_int_equal(rs_exp_expect_creations(w, key, adds, T0), 0);
		assert_int_equal(rs_exp_creation_observed(inf, key), 1);
	}
	for (unsigned i = 0; i < n; i++) {
		struct rs_exp_state st;
		rs_key(key, sizeof key, tag, i);
		bool ok = rs_exp_satisfied(w, key, T0, &st);
		assert_int_equal(st.adds_left, adds - 1);
		assert_int_equal(ok, adds <= 1);
	}
}

static void delete_all(struct rs_exp *w, struct rs_exp *inf, const char *tag, unsigned n)
{
	char key[64];
	for (unsigned i = 0; i < n; i++) {
		rs_key(key, sizeof key, tag, i);
		assert_int_equal(rs_exp_informer_delete(inf, key), 1);
		assert_int_equal(verdict(w, key, T0), RS_EXP_ABSENT);
		assert_int_equal(rs_exp_delete(w, key), 0);
	}
}

static void test_50000_replicasets(void **state)
{
	struct fx *f = *state;
	const unsigned n = 50000;
	uint32_t c[4];
	add_observe(f->w, f->inf, "a", n, 1);
	rs_exp_count(f->w, c);
	assert_int_equal(c[RS_EXP_SLOT_LIVE], n);
	delete_all(f->w, f->inf, "a", n);
	rs_exp_count(f->w, c);
	assert_int_equal(c[RS_EXP_SLOT_LIVE], 0);
	assert_int_equal(c[RS_EXP_SLOT_TOMBSTONE], n);
	/* re-added: fresh records (adds_left 2 - 1 own observation), none of round 1's count */
	add_observe(f->w, f->inf, "a", n, 2);
	rs_exp_count(f->w, c);
	assert_int_equal(c[RS_EXP_SLOT_LIVE], n);
	assert_int_equal(c[RS_EXP_SLOT_LIVE] + c[RS_EXP_SLOT_TOMBSTONE], n); /* same slots again */

	struct fx g;
	struct rs_exp_create_opts o = {.capacity = 65536};
	g.fd = rs_exp_memfd_create(&o);
	assert_true(g.fd >= 0);
	assert_int_equal(rs_exp_attach(g.fd, RS_EXP_INFORMER, T0 - 100 * SEC, &g.inf), 0);
	assert_int_equal(rs_exp_attach(g.fd, RS_EXP_WORKER, 0, &g.w), 0);
	add_observe(g.w, g.inf, "a", n, 1);
	delete_all(g.w, g.inf, "a", n);
	add_observe(g.w, g.inf, "b", n, 3); /* 50,000 other keys through the freed slots */
	rs_exp_count(g.w, c);
	assert_int_equal(c[RS_EXP_SLOT_LIVE], n);
	/* round 1's keys are gone for good, a lookup of an absent key ends */
	char key[64];
	rs_key(key, sizeof key, "a", 7);
	assert_int_equal(verdict(g.w, key, T0), RS_EXP_ABSENT);
	assert_int_equal(rs_exp_creation_observed(g.inf, key), 0);
	rs_exp_detach(g.w);
	rs_exp_detach(g.inf);
	close(g.fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test_setup_teardown(test_absent_is_satisfied, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_creations, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_replace_voids_old_observations, setup,
	                                        teardown),
	        cmocka_unit_test_setup_teardown(test_deletions_tracked_by_key, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_expect_both, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_lower_creations, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_delete, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_roles_and_args, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_full_deletion_batch, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_orphaned_by_dead_worker, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_informer_restart, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_torn_record, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_capacity_and_reclaim, setup_small, teardown),
	        cmocka_unit_test_setup_teardown(test_metrics_two_controllers, setup, teardown),
	        cmocka_unit_test(test_rv_compare),
	        cmocka_unit_test_setup_teardown(test_consistency_store, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_50000_replicasets, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
