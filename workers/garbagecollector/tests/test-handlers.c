/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/garbagecollector/tests/test-handlers.c: informer events to graph changes: the monitor
 * GVK as the identity's apiVersion/kind, the old state read from the arena copy (finalizer
 * flags and deletion timestamp in the record header), tombstones unwrapped.
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

#include "informerd/records.h"
#include "workers/garbagecollector/handlers.h"
#include "workers/garbagecollector/tests/fake-api.h"

static const struct inf_resource rc_res = {.group = "",
                                           .version = "v1",
                                           .resource = "replicationcontrollers",
                                           .kind = "ReplicationController",
                                           .record_kind = SHM_RECORD_META,
                                           .namespaced = true};
static const struct inf_resource dep_res = {.group = "apps",
                                            .version = "v1",
                                            .resource = "deployments",
                                            .kind = "Deployment",
                                            .record_kind = SHM_RECORD_META,
                                            .namespaced = true};

static void test_api_version(void **state)
{
	(void)state;
	char b[64];
	assert_string_equal(gc_api_version_of("", "v1", b, sizeof b), "v1");
	assert_string_equal(gc_api_version_of(NULL, "v1", b, sizeof b), "v1");
	assert_string_equal(gc_api_version_of("apps", "v1", b, sizeof b), "apps/v1");
}

static void test_events(void **state)
{
	(void)state;
	struct gc_graph *g;
	struct gc_absent_cache *c;
	struct rec_sink rec = {0};
	assert_int_equal(gc_graph_new(&g), 0);
	assert_int_equal(gc_absent_cache_new(10, &c), 0);
	struct gc_builder b = {.graph = g, .absent = c, .sink = rec_sink_ops(&rec)};

	/* ADD of a deployment: identity from the resource's GVK */
	struct kube_object_meta m = {.name = "d", .namespace = "ns1", .uid = "duid"};
	struct inf_event ev = {.kind = INF_EVENT_ADD, .res = &dep_res, .meta = &m};
	assert_int_equal(gc_handle_event(&b, &ev), 0);
	struct gc_node *n = gc_graph_get(g, "duid");
	assert_non_null(n);
	assert_string_equal(n->id.api_version, "apps/v1");
	assert_string_equal(n->id.kind, "Deployment");

	/* an RC: old state from the arena (not deleting), new state deleting with orphan */
	struct kube_object_meta rc = {.name = "rc", .namespace = "ns1", .uid = "rcuid"};
	ev = (struct inf_event){.kind = INF_EVENT_ADD, .res = &rc_res, .meta = &rc};
	assert_int_equal(gc_handle_event(&b, &ev), 0);
	struct inf_rec_hdr h = {.magic = INF_REC_MAGIC, .kind = SHM_RECORD_META};
	struct shm_obj old = {
	        .uid = "rcuid", .name = "rc", .ns = "ns1", .payload = &h, .payload_len = sizeof h};
	const char *fins[] = {"orphan"};
	struct kube_object_meta rc2 = rc;
	rc2.deletion_timestamp = 1;
	rc2.n_finalizers = 1;
	rc2.finalizers = fins;
	ev = (struct inf_event){
	        .kind = INF_EVENT_UPDATE, .res = &rc_res, .meta = &rc2, .old = &old};
	assert_int_equal(gc_handle_event(&b, &ev), 0);
	assert_int_equal(rec.n_orphan, 1);
	/* the same state again, old read from the arena header: no second transition */
	h.deletion_ts = 1;
	h.flags = INF_REC_FIN_ORPHAN;
	assert_int_equal(gc_handle_event(&b, &ev), 0);
	assert_int_equal(rec.n_orphan, 1);

	/* a pod owned by the rc, then a tombstone delete of the rc (last state from the arena) */
	struct kube_owner_ref owners[] = {{.api_version = "v1",
	                                   .kind = "ReplicationController",
	                                   .name = "rc",
	                                   .uid = "rcuid",
	                                   .controller = 1,
	                                   .block_owner_deletion = 1}};
	static const struct inf_resource pod_res = {.group = "",
	                                            .version = "v1",
	                                            .resource = "pods",
	                                            .kind = "Pod",
	                                            .record_kind = SHM_RECORD_POD,
	                                            .namespaced = true};
	struct kube_object_meta pod = {.name = "p",
	                               .namespace = "ns1",
	                               .uid = "puid",
	                               .n_owner_refs = 1,
	                               .owner_refs = owners};
	ev = (struct inf_event){.kind = INF_EVENT_ADD, .res = &pod_res, .meta = &pod};
	assert_int_equal(gc_handle_event(&b, &ev), 0);
	rec_reset(&rec);
	ev = (struct inf_event){
	        .kind = INF_EVENT_DELETE, .res = &rc_res, .old = &old, .tombstone = true};
	assert_int_equal(gc_handle_event(&b, &ev), 0);
	assert_null(gc_graph_get(g, "rcuid"));
	assert_true(rec_has(&rec, "puid"));
	struct gc_ref absent = {"v1", "ReplicationController", "rc", "rcuid", "ns1"};
	assert_true(gc_absent_cache_has(c, &absent));

	/* a virtual delete coming back from a worker as a key */
	struct kube_owner_ref vref[] = {{.api_version = "v1",
	                                 .kind = "ReplicationController",
	                                 .name = "ghost",
	                                 .uid = "ghostuid",
	                                 .controller = -1,
	                                 .block_owner_deletion = -1}};
	struct kube_object_meta pod2 = {.name = "p2",
	                                .namespace = "ns1",
	                                .uid = "p2uid",
	                                .n_owner_refs = 1,
	                                .owner_refs = vref};
	ev = (struct inf_event){.kind = INF_EVENT_ADD, .res = &pod_res, .meta = &pod2};
	assert_int_equal(gc_handle_event(&b, &ev), 0);
	assert_true(gc_graph_get(g, "ghostuid")->virtual_);
	char key[512];
	struct gc_ref ghost = {"v1", "ReplicationController", "ghost", "ghostuid", "ns1"};
	assert_true(gc_queue_key_encode(&ghost, true, 507, key, sizeof key) > 0);
	rec_reset(&rec);
	assert_int_equal(gc_handle_virtual_delete_key(&b, key), 0);
	assert_null(gc_graph_get(g, "ghostuid"));
	assert_true(rec_has(&rec, "p2uid"));
	assert_int_equal(gc_handle_virtual_delete_key(&b, "ghostuid"), -EINVAL);

	/* an event without object is refused */
	ev = (struct inf_event){.kind = INF_EVENT_DELETE, .res = &rc_res};
	assert_int_equal(gc_handle_event(&b, &ev), -EINVAL);
	gc_graph_free(g);
	gc_absent_cache_free(c);
}

static void test_table_shape(void **state)
{
	(void)state;
	assert_string_equal(gc_handler_table.queues[0], "gc-attempt-to-delete");
	assert_string_equal(gc_handler_table.queues[1], "gc-attempt-to-orphan");
	assert_null(gc_handler_table.queues[2]);
	assert_string_equal(gc_handler_table.entries[0].resource, "*");
	/* init/fini without queues: state is created and freed */
	struct inf_handler_ctx ctx = {0};
	assert_int_equal(gc_handler_table.init(&ctx), 0);
	assert_non_null(ctx.state);
	gc_handler_table.fini(&ctx);
	assert_null(ctx.state);
}

/* A restarted informerd: the builder's graph is seeded from the arena as an initial LIST would
 * build it (observed nodes, a virtual node for an owner that is not there, links). */
static void test_seed_from_arena(void **state)
{
	(void)state;
	struct shm_create_opts o = {.max_size = UINT64_C(1) << 28, .initial_size = 1 << 20};
	int fd, rfd;
	struct shm_arena *w, *r;
	assert_int_equal(shm_arena_create(&o, &fd), 0);
	assert_int_equal(shm_writer_open(fd, &w), 0);
	int rs = shm_writer_register_type(w, &(struct shm_type_desc){"apps", "v1", "replicasets", "ReplicaSet",
	                                                            SHM_RECORD_META});
	int pod = shm_writer_register_type(w, &(struct shm_type_desc){"", "v1", "pods", "Pod", SHM_RECORD_META});
	assert_true(rs >= 0 && pod >= 0);
	struct inf_rec_hdr h = {.magic = INF_REC_MAGIC, .kind = SHM_RECORD_META};
	struct shm_owner_ref to_rs = {"apps/v1", "ReplicaSet", "rs1", "u-rs1", 1, 1};
	struct shm_owner_ref to_gone = {"apps/v1", "ReplicaSet", "gone", "u-gone", 1, 1};
	/* dependents first in the arena: the seed still sees the owner before them */
	struct shm_record_in recs[] = {
	        {.type = (uint16_t)pod, .kind = SHM_RECORD_META, .ns = "ns", .name = "p1", .uid = "u-p1", .rv = "1",
	         .owners = &to_rs, .n_owners = 1, .payload = &h, .payload_len = sizeof h},
	        {.type = (uint16_t)pod, .kind = SHM_RECORD_META, .ns = "ns", .name = "p2", .uid = "u-p2", .rv = "1",
	         .owners = &to_gone, .n_owners = 1, .payload = &h, .payload_len = sizeof h},
	        {.type = (uint16_t)rs, .kind = SHM_RECORD_META, .ns = "ns", .name = "rs1", .uid = "u-rs1", .rv = "1",
	         .payload = &h, .payload_len = sizeof h},
	};
	for (size_t i = 0; i < 3; i++)
		assert_true(shm_writer_upsert(w, &recs[i]) >= 0);
	assert_int_equal(shm_arena_reader_fd(fd, &rfd), 0);
	assert_int_equal(shm_reader_open(rfd, &r), 0);

	struct inf_handler_ctx ctx = {.arena = r};
	assert_int_equal(gc_handler_table.init(&ctx), 0);
	gc_handler_table.resync(&ctx, 1, true); /* the orphan queue's resync does nothing */
	assert_int_equal(gc_graph_len(gc_handlers_builder(&ctx)->graph), 0);
	gc_handler_table.resync(&ctx, 0, true);
	const struct gc_graph *g = gc_handlers_builder(&ctx)->graph;
	assert_int_equal(gc_graph_len(g), 4);
	struct gc_node *n = gc_graph_get(g, "u-rs1");
	assert_non_null(n);
	assert_false(n->virtual_);
	assert_string_equal(n->id.api_version, "apps/v1");
	assert_string_equal(n->id.kind, "ReplicaSet");
	n = gc_graph_get(g, "u-gone");
	assert_non_null(n);
	assert_true(n->virtual_);
	assert_string_equal(n->id.ns, "ns");
	assert_int_equal(gc_graph_check(g), 0);
	/* once only */
	assert_int_equal(gc_handlers_seed(&ctx), 0);
	gc_handler_table.fini(&ctx);
	shm_arena_close(r);
	shm_arena_close(w);
	close(rfd);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_api_version),
	        cmocka_unit_test(test_events),
	        cmocka_unit_test(test_table_shape),
	        cmocka_unit_test(test_seed_from_arena),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
