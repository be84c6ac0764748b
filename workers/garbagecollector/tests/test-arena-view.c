/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/garbagecollector/tests/test-arena-view.c: the worker's graph view over a real arena
 * (shm/): identity from the record's type, flags from the record header, dependents from the
 * owner index; a worker driven through it against the fake API server.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "shm/records.h"
#include "workers/garbagecollector/arena-view.h"
#include "workers/garbagecollector/tests/fake-api.h"

struct fx {
	int fd;
	struct shm_arena *w, *r;
	int rc_type, cm_type;
};

static void put(struct fx *f, int type, const char *ns, const char *name, const char *uid,
                const struct shm_owner_ref *owners, size_t n, bool deleting, uint8_t fin_flags)
{
	struct shm_rec_hdr h = {.magic = SHM_REC_MAGIC,
	                        .kind = SHM_RECORD_META,
	                        .flags = fin_flags,
	                        .deletion_ts = deleting ? 1 : 0};
	struct shm_record_in rec = {.type = (uint16_t)type,
	                            .kind = SHM_RECORD_META,
	                            .ns = ns,
	                            .name = name,
	                            .uid = uid,
	                            .rv = "1",
	                            .owners = owners,
	                            .n_owners = n,
	                            .payload = &h,
	                            .payload_len = sizeof h};
	assert_true(shm_writer_upsert(f->w, &rec) >= 0);
}

static void setup_fx(struct fx *f)
{
	struct shm_create_opts o = {.max_size = UINT64_C(1) << 28, .initial_size = 1 << 20};
	assert_int_equal(shm_arena_create(&o, &f->fd), 0);
	assert_int_equal(shm_writer_open(f->fd, &f->w), 0);
	f->rc_type = shm_writer_register_type(
	        f->w, &(struct shm_type_desc){"", "v1", "replicationcontrollers",
	                                      "ReplicationController", SHM_RECORD_META});
	f->cm_type = shm_writer_register_type(
	        f->w,
	        &(struct shm_type_desc){"", "v1", "configmaps", "ConfigMap", SHM_RECORD_META});
	assert_true(f->rc_type >= 0 && f->cm_type >= 0);
	int rfd;
	assert_int_equal(shm_arena_reader_fd(f->fd, &rfd), 0);
	assert_int_equal(shm_reader_open(rfd, &f->r), 0);
	close(rfd);
}

static void teardown_fx(struct fx *f)
{
	shm_arena_close(f->r);
	shm_arena_close(f->w);
	close(f->fd);
}

static int collect(const struct gc_node_view *d, void *ud)
{
	char *out = ud;
	size_t l = strlen(out);
	snprintf(out + l, 256 - l, "%s%s:%s:%d", l ? "," : "", d->id.kind, d->id.name,
	         d->n_owners ? d->owners[0].block_owner_deletion : -2);
	return 0;
}

static void test_view(void **state)
{
	(void)state;
	struct fx f;
	setup_fx(&f);
	struct shm_owner_ref own = {"v1", "ReplicationController", "rc", "rcuid", 1, 1};
	put(&f, f.rc_type, "ns1", "rc", "rcuid", NULL, 0, true, SHM_REC_FIN_FOREGROUND);
	put(&f, f.cm_type, "ns1", "cm", "cmuid", &own, 1, false, 0);
	struct gc_arena_view av;
	gc_arena_view_init(&av, f.r);
	struct gc_node_view n;
	assert_int_equal(av.view.node(av.view.ud, "rcuid", &n), 0);
	assert_string_equal(n.id.api_version, "v1");
	assert_string_equal(n.id.kind, "ReplicationController");
	assert_string_equal(n.id.ns, "ns1");
	assert_true(n.being_deleted);
	assert_true(n.deleting_dependents);
	assert_false(n.virtual_);
	assert_int_equal(n.n_dependents, 1);
	char out[256] = "";
	assert_int_equal(av.view.dependents(av.view.ud, "rcuid", collect, out), 1);
	assert_string_equal(out, "ConfigMap:cm:1");
	assert_int_equal(av.view.node(av.view.ud, "cmuid", &n), 0);
	assert_int_equal(n.n_owners, 1);
	assert_string_equal(n.owners[0].uid, "rcuid");
	assert_int_equal(n.owners[0].controller, 1);
	/* a uid that only appears as an owner (virtual) is unknown to the arena */
	assert_int_equal(av.view.node(av.view.ud, "nope", &n), -ENOENT);
	gc_arena_view_release(&av);
	teardown_fx(&f);
}

static void test_worker_over_arena(void **state)
{
	(void)state;
	struct fx f;
	setup_fx(&f);
	/* rc deleting in foreground with a blocking configmap: the configmap is re-queued; once the
	 * configmap is gone from the arena, the finalizer is removed */
	struct shm_owner_ref own = {"v1", "ReplicationController", "rc", "rcuid", -1, 1};
	put(&f, f.rc_type, "ns1", "rc", "rcuid", NULL, 0, true, SHM_REC_FIN_FOREGROUND);
	put(&f, f.cm_type, "ns1", "cm", "cmuid", &own, 1, false, 0);
	struct fake_api fa = {0};
	struct fake_obj *rc =
	        fake_add(&fa, "v1", "ReplicationController", "ns1", "rc", "rcuid", NULL);
	fake_set_finalizers(rc, "[\"foregroundDeletion\"]", true);
	struct fake_obj *cm = fake_add(&fa, "v1", "ConfigMap", "ns1", "cm", "cmuid",
	                               "[{\"apiVersion\":\"v1\",\"kind\":\"ReplicationController\","
	                               "\"name\":\"rc\",\"uid\":\"rcuid\","
	                               "\"blockOwnerDeletion\":true}]");
	struct gc_api api = fake_api_ops(&fa);
	struct gc_arena_view av;
	gc_arena_view_init(&av, f.r);
	struct gc_absent_cache *c;
	assert_int_equal(gc_absent_cache_new(GC_ABSENT_CACHE_SIZE, &c), 0);
	struct gc_worker w = {.graph = &av.view, .api = &api, .absent = c};
	struct gc_result res;
	assert_int_equal(gc_attempt_to_delete_worker(&w, "rcuid", &res), GC_FORGET);
	assert_int_equal(res.action, GC_ACT_ENQUEUE_BLOCKING);
	assert_int_equal(fa.n_adds, 1);
	assert_string_equal(fa.adds[0], "cmuid");
	/* the configmap: its owner waits, it has no dependents: Background */
	assert_int_equal(gc_attempt_to_delete_worker(&w, "cmuid", &res), GC_FORGET);
	assert_string_equal(res.policy, GC_POLICY_BACKGROUND);
	assert_false(cm->live);
	assert_int_equal(shm_writer_delete(f.w, (uint16_t)f.cm_type, "ns1", "cm"), 0);
	assert_int_equal(gc_attempt_to_delete_worker(&w, "rcuid", &res), GC_FORGET);
	assert_int_equal(res.action, GC_ACT_REMOVE_FINALIZER);
	assert_false(rc->live);
	gc_arena_view_release(&av);
	gc_absent_cache_free(c);
	fake_free(&fa);
	teardown_fx(&f);
}

static void test_get_cached(void **state)
{
	(void)state;
	struct fx f;
	setup_fx(&f);
	struct shm_owner_ref own[] = {{"v1", "ReplicationController", "rc", "rcuid", 1, -1},
	                              {"v1", "ReplicationController", "rc2", "rc2uid", -1, 0}};
	put(&f, f.cm_type, "ns1", "cm", "cmuid", own, 2, false, 0);
	struct kube_partial *p = NULL;
	struct gc_target t = {"v1", "ConfigMap", "ns1", "cm"};
	assert_int_equal(gc_arena_get_cached(f.r, &t, &p), 0);
	assert_string_equal(p->meta.resource_version, "1");
	assert_string_equal(p->meta.uid, "cmuid");
	assert_int_equal(p->meta.n_owner_refs, 2);
	assert_int_equal(p->meta.owner_refs[0].controller, 1);
	assert_int_equal(p->meta.owner_refs[0].block_owner_deletion, -1);
	assert_int_equal(p->meta.owner_refs[1].controller, -1);
	assert_int_equal(p->meta.owner_refs[1].block_owner_deletion, 0);
	gc_arena_put_cached(f.r, p);
	/* another version of the kind is not a monitored type; a missing object is not cached */
	struct gc_target t2 = {"v2", "ConfigMap", "ns1", "cm"},
	                 t3 = {"v1", "ConfigMap", "ns1", "nope"};
	assert_int_equal(gc_arena_get_cached(f.r, &t2, &p), -ENOENT);
	assert_int_equal(gc_arena_get_cached(f.r, &t3, &p), -ENOENT);
	teardown_fx(&f);
}

static struct shm_arena *g_arena;
static int arena_get(void *ud, const struct gc_target *t, struct kube_partial **ret)
{
	(void)ud;
	return gc_arena_get_cached(g_arena, t, ret);
}
static void arena_put(void *ud, struct kube_partial *p)
{
	(void)ud;
	gc_arena_put_cached(g_arena, p);
}

/* patch.go's merge-patch fallback reads the arena's record in place (no JSON round trip): the
 * resourceVersion and the remaining references come from the cached record, whose rc
 * reference has blockOwnerDeletion false where the API's copy has it absent (false stays
 * false, absent stays absent through the view), and the view goes back through put_cached
 * (ASan: a kube_object_free of it would be a bad free). */
static void test_merge_patch_from_arena(void **state)
{
	(void)state;
	struct fx f;
	setup_fx(&f);
	struct shm_owner_ref own[] = {{"v1", "ReplicationController", "rc", "rcuid", -1, 0},
	                              {"v1", "ReplicationController", "gone", "goneuid", 1, -1}};
	put(&f, f.rc_type, "ns1", "rc", "rcuid", NULL, 0, false, 0);
	put(&f, f.cm_type, "ns1", "cm", "cmuid", own, 2, false, 0);
	struct fake_api fa = {0};
	fa.smp_unsupported_kind = "ConfigMap";
	fake_add(&fa, "v1", "ReplicationController", "ns1", "rc", "rcuid", NULL);
	struct fake_obj *cm = fake_add(&fa, "v1", "ConfigMap", "ns1", "cm", "cmuid",
	                               "[{\"apiVersion\":\"v1\",\"kind\":\"ReplicationController\","
	                               "\"name\":\"rc\",\"uid\":\"rcuid\"},{\"apiVersion\":\"v1\","
	                               "\"kind\":\"ReplicationController\",\"name\":\"gone\","
	                               "\"uid\":\"goneuid\",\"controller\":true}]");
	struct gc_api api = fake_api_ops(&fa);
	g_arena = f.r;
	api.get_cached = arena_get;
	api.put_cached = arena_put;
	struct gc_arena_view av;
	gc_arena_view_init(&av, f.r);
	struct gc_absent_cache *c;
	assert_int_equal(gc_absent_cache_new(GC_ABSENT_CACHE_SIZE, &c), 0);
	struct gc_worker w = {.graph = &av.view, .api = &api, .absent = c};
	struct gc_result res;
	int rr = gc_attempt_to_delete_worker(&w, "cmuid", &res);
	for (size_t i = 0; rr != GC_FORGET && i < fa.n_calls; i++)
		fprintf(stderr, "call: %s\n", fa.calls[i]);
	assert_int_equal(rr, GC_FORGET);
	assert_int_equal(res.action, GC_ACT_REMOVE_REFS);
	bool found = false;
	for (size_t i = 0; i < fa.n_calls; i++)
		found |= strstr(fa.calls[i], "PATCH merge") &&
		         strstr(fa.calls[i],
		                "{\"metadata\":{\"resourceVersion\":\"1\",\"ownerReferences\":["
		                "{\"apiVersion\":\"v1\",\"kind\":\"ReplicationController\","
		                "\"name\":\"rc\",\"uid\":\"rcuid\",\"blockOwnerDeletion\":false}]}"
		                "}");
	if (!found)
		for (size_t i = 0; i < fa.n_calls; i++)
			fprintf(stderr, "call: %s\n", fa.calls[i]);
	assert_true(found);
	assert_non_null(strstr(cm->owners_json, "\"blockOwnerDeletion\":false"));
	gc_arena_view_release(&av);
	gc_absent_cache_free(c);
	fake_free(&fa);
	teardown_fx(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_view),
	        cmocka_unit_test(test_worker_over_arena),
	        cmocka_unit_test(test_get_cached),
	        cmocka_unit_test(test_merge_patch_from_arena),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
