/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pod GC's view of the arena (workers/podgc/snap.h): pods written by informerd's own store
 * (the record encoder) read back with every field the collectors use, so a change of the pod
 * record's layout that the pod GC does not follow fails here.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "informerd/store.h"
#include "kube/model.h"
#include "shm/arena.h"
#include "workers/podgc/snap.h"

static const struct inf_resource pods_res = {"", "v1", "pods", "Pod", SHM_RECORD_POD, true};

static struct kube_pod *mkpod(const char *json)
{
	struct kube_pod *p = NULL;

	assert_int_equal(kube_decode_pod(json, strlen(json), 0, &p), 0);
	return p;
}

static const struct pgc_pod *find(const struct pgc_snap *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->pods[i].name, name))
			return &s->pods[i];
	fail_msg("pod %s not in the snapshot", name);
	return NULL;
}

static void test_snapshot(void **state)
{
	struct shm_arena *w, *r;
	struct inf_store *st;
	struct pgc_snap sn = {0};
	kube_time_t created, deleting;
	int afd;

	(void)state;
	assert_int_equal(shm_arena_create(NULL, &afd), 0);
	assert_int_equal(shm_writer_open(afd, &w), 0);
	assert_int_equal(inf_store_new(w, NULL, &st), 0);
	int pt = inf_store_add_resource(st, &pods_res);
	assert_true(pt >= 0);
	struct kube_pod *pods[3] = {
	        mkpod("{\"metadata\":{\"name\":\"a\",\"namespace\":\"n1\",\"uid\":\"u-a\","
	              "\"resourceVersion\":\"1\",\"generation\":3,"
	              "\"creationTimestamp\":\"2026-01-02T03:04:05Z\",\"finalizers\":[\"f1\","
	              "\"f2\"]},"
	              "\"spec\":{\"nodeName\":\"node-1\"},\"status\":{\"phase\":\"Failed\","
	              "\"reason\":\"Evicted\"}}"),
	        mkpod("{\"metadata\":{\"name\":\"b\",\"namespace\":\"n2\",\"uid\":\"u-b\","
	              "\"resourceVersion\":\"2\",\"generation\":1,"
	              "\"creationTimestamp\":\"2026-01-02T03:04:06Z\","
	              "\"deletionTimestamp\":\"2026-01-02T04:00:00Z\"},"
	              "\"spec\":{},\"status\":{\"phase\":\"Running\"}}"),
	        mkpod("{\"metadata\":{\"name\":\"c\",\"namespace\":\"n2\",\"uid\":\"u-c\","
	              "\"resourceVersion\":\"3\"},\"spec\":{\"nodeName\":\"node-2\"},\"status\":{}"
	              "}"),
	};
	for (int i = 0; i < 3; i++)
		assert_int_equal(inf_store_apply(st, (uint16_t)pt, KUBE_WATCH_ADDED, pods[i]), 0);

	assert_int_equal(shm_reader_open(afd, &r), 0);
	int t = shm_reader_find_type(r, "", "v1", "pods");
	assert_true(t >= 0);
	assert_int_equal(pgc_snap_pods(r, (uint16_t)t, &sn), 0);
	assert_int_equal(sn.n, 3);

	const struct pgc_pod *a = find(&sn, "a"), *b = find(&sn, "b"), *c = find(&sn, "c");
	assert_int_equal(kube_time_parse("2026-01-02T03:04:05Z", 20, &created), 0);
	assert_int_equal(kube_time_parse("2026-01-02T04:00:00Z", 20, &deleting), 0);
	assert_string_equal(a->ns, "n1");
	assert_string_equal(a->uid, "u-a");
	assert_string_equal(a->node_name, "node-1"); /* not a finalizer */
	assert_int_equal(a->phase, KUBE_POD_FAILED);
	assert_false(a->evicted); /* status.reason is not in the record: run.c LISTs it */
	assert_int_equal(a->creation_ts, created);
	assert_int_equal(a->deletion_ts, 0);
	assert_int_equal(a->generation, 3);
	assert_string_equal(b->node_name, "");
	assert_int_equal(b->phase, KUBE_POD_RUNNING);
	assert_int_equal(b->deletion_ts, deleting);
	assert_int_equal(b->generation, 1);
	assert_string_equal(c->node_name, "node-2");
	assert_int_equal(c->phase, KUBE_POD_PHASE_UNSET);
	assert_true(pgc_pod_terminated(c)); /* an empty phase counts as terminated */

	pgc_snap_free(&sn);
	assert_int_equal(sn.n, 0);
	for (int i = 0; i < 3; i++)
		kube_object_free(pods[i]);
	inf_store_free(st);
	shm_arena_close(r);
	shm_arena_close(w);
	close(afd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_snapshot),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
