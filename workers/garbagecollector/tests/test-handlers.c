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

#include "shm/records.h"
#include "informerd/store.h"
#include "ipc/loop.h"
#include "ipc/queue.h"
#include "kube/shard.h"
#include "workers/garbagecollector/handlers.h"
#include "workers/garbagecollector/shard.h"
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
	struct shm_rec_hdr h = {.magic = SHM_REC_MAGIC, .kind = SHM_RECORD_META};
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
	h.flags = SHM_REC_FIN_ORPHAN;
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
	/* informerd dropped the rc's type (it left discovery): not a deletion. The node stays, the
	 * owner is not recorded absent, no dependent is queued (upstream: a removed monitor) */
	ev = (struct inf_event){.kind = INF_EVENT_DELETE,
	                        .res = &rc_res,
	                        .old = &old,
	                        .tombstone = true,
	                        .from_relist = true,
	                        .dropped = true};
	assert_int_equal(gc_handle_event(&b, &ev), 0);
	assert_non_null(gc_graph_get(g, "rcuid"));
	assert_false(rec_has(&rec, "puid"));
	struct gc_ref not_absent = {"v1", "ReplicationController", "rc", "rcuid", "ns1"};
	assert_false(gc_absent_cache_has(c, &not_absent));
	/* a real deletion of it */
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
	int rs =
	        shm_writer_register_type(w, &(struct shm_type_desc){"apps", "v1", "replicasets",
	                                                            "ReplicaSet", SHM_RECORD_META});
	int pod = shm_writer_register_type(
	        w, &(struct shm_type_desc){"", "v1", "pods", "Pod", SHM_RECORD_META});
	assert_true(rs >= 0 && pod >= 0);
	struct shm_rec_hdr h = {.magic = SHM_REC_MAGIC, .kind = SHM_RECORD_META};
	struct shm_owner_ref to_rs = {"apps/v1", "ReplicaSet", "rs1", "u-rs1", 1, 1};
	struct shm_owner_ref to_gone = {"apps/v1", "ReplicaSet", "gone", "u-gone", 1, 1};
	/* dependents first in the arena: the seed still sees the owner before them */
	struct shm_record_in recs[] = {
	        {.type = (uint16_t)pod,
	         .kind = SHM_RECORD_META,
	         .ns = "ns",
	         .name = "p1",
	         .uid = "u-p1",
	         .rv = "1",
	         .owners = &to_rs,
	         .n_owners = 1,
	         .payload = &h,
	         .payload_len = sizeof h},
	        {.type = (uint16_t)pod,
	         .kind = SHM_RECORD_META,
	         .ns = "ns",
	         .name = "p2",
	         .uid = "u-p2",
	         .rv = "1",
	         .owners = &to_gone,
	         .n_owners = 1,
	         .payload = &h,
	         .payload_len = sizeof h},
	        {.type = (uint16_t)rs,
	         .kind = SHM_RECORD_META,
	         .ns = "ns",
	         .name = "rs1",
	         .uid = "u-rs1",
	         .rv = "1",
	         .payload = &h,
	         .payload_len = sizeof h},
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

/* ---- informerd killed while pods are being created, then restarted --------------------------
 * The real informerd pieces over one arena: the store writes each watch event into the arena,
 * then runs the handlers (the GC table). "Killing" informerd throws its dispatcher (with the
 * builder's graph) and its queue owners away; what survives is the arena. Two crash windows are
 * modelled: an event written to the arena whose handlers never ran (a pod ADD, an owner DELETE:
 * informerd died between the two), and the watch resumed from the arena's version after the
 * restart (the event already in the arena is re-delivered and dropped as a replay). The
 * restarted builder must end up with the graph an initial LIST would build, so that deleting
 * the owners later queues every dependent: every dependent whose owners are gone is collected. */
static void *hgm_meta(const char *kind, const char *name, const char *uid, const char *rv,
                      const char *owner_name, const char *owner_uid)
{
	char json[1024], refs[512] = "";
	if (owner_uid)
		snprintf(
		        refs, sizeof refs,
		        ",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\","
		        "\"name\":\"%s\",\"uid\":\"%s\",\"controller\":true,\"blockOwnerDeletion\":"
		        "true}]",
		        owner_name, owner_uid);
	int n = snprintf(json, sizeof json,
	                 "{\"kind\":\"%s\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\","
	                 "\"uid\":\"%s\",\"resourceVersion\":\"%s\"%s}}",
	                 kind, name, uid, rv, refs);
	struct kube_partial *o = NULL;
	assert_int_equal(kube_decode_partial(json, (size_t)n, 0, &o), 0);
	return o;
}

static void hgm_apply(struct inf_store *s, int type, enum kube_watch_type t, void *obj)
{
	assert_int_equal(inf_store_apply(s, (uint16_t)type, t, obj), 0);
	kube_object_free(obj);
}

static const struct inf_resource hgm_rs_res = {.group = "apps",
                                               .version = "v1",
                                               .resource = "replicasets",
                                               .kind = "ReplicaSet",
                                               .record_kind = SHM_RECORD_META,
                                               .namespaced = true};
static const struct inf_resource hgm_pod_res = {.group = "",
                                                .version = "v1",
                                                .resource = "pods",
                                                .kind = "Pod",
                                                .record_kind = SHM_RECORD_META,
                                                .namespaced = true};

/* One informerd life: queue owners on the surviving memfds, the dispatcher with the GC table
 * (its builder's sink replaced by a recorder before the start-up resync), a store. */
struct hgm_life {
	struct ipc_queue_owner *q[2];
	struct inf_dispatch *d;
	struct inf_store *s;
	struct gc_builder *b;
	int rs_t, pod_t;
};

static void hgm_start(struct hgm_life *l, struct ipc_loop *loop, const int *qfd,
                      struct shm_arena *a, struct rec_sink *rec)
{
	for (int i = 0; i < 2; i++)
		assert_int_equal(ipc_queue_owner_new(&l->q[i], loop, qfd[i], NULL), 0);
	assert_int_equal(inf_dispatch_new(&l->d), 0);
	int idx = inf_dispatch_register(l->d, &gc_handler_table, l->q, 2, a);
	assert_true(idx >= 0);
	l->b = gc_handlers_builder(inf_dispatch_ctx(l->d, (size_t)idx));
	assert_non_null(l->b);
	l->b->sink = rec_sink_ops(rec);
	/* informerd: queue resync once the table is registered (the seed), then the informers */
	inf_dispatch_resync(l->d, (size_t)idx, 0, true);
	inf_dispatch_resync(l->d, (size_t)idx, 1, true);
	assert_int_equal(inf_store_new(a, l->d, &l->s), 0);
	l->rs_t = inf_store_add_resource(l->s, &hgm_rs_res);
	l->pod_t = inf_store_add_resource(l->s, &hgm_pod_res);
	assert_true(l->rs_t >= 0 && l->pod_t >= 0);
}

static void hgm_kill(struct hgm_life *l)
{
	inf_store_free(l->s);
	inf_dispatch_free(l->d); /* the builder's graph is gone with the process */
	for (int i = 0; i < 2; i++)
		ipc_queue_owner_free(l->q[i]);
	*l = (struct hgm_life){0};
}

/* ---- --shard-ranges: the builder's keys and Warnings, filtered by range ----------------------
 * Every instance runs the whole builder; its sink queues only the items of its ranges (an
 * observed item: its namespace's range; a virtual or orphaning owner: any dependent's range)
 * and writes only the Warnings whose Event namespace is in its ranges. */
static unsigned sh_bits;
static bool sh_owned(void *ud, unsigned range)
{
	(void)ud;
	return (sh_bits >> range) & 1u;
}
static unsigned sh_warnings;
static void sh_warning(const struct gc_ref *involved, const char *reason, const char *message)
{
	(void)involved;
	(void)reason;
	(void)message;
	sh_warnings++;
}

static void sh_ns(unsigned r, char *buf, size_t len)
{
	for (int i = 0; i < 10000; i++) {
		snprintf(buf, len, "ns-%d", i);
		if (kube_shard_range_of_ns(buf, 8) == r)
			return;
	}
	fail();
}

/* One instance's view of the same events: returns the keys queued on gc-attempt-to-delete and
 * gc-attempt-to-orphan and the Warnings written. */
static void sh_run(unsigned bits, size_t *ret_del, size_t *ret_orphan, unsigned *ret_warn)
{
	static const struct inf_resource node_res = {.group = "",
	                                             .version = "v1",
	                                             .resource = "nodes",
	                                             .kind = "Node",
	                                             .record_kind = SHM_RECORD_META,
	                                             .namespaced = false};
	static const struct inf_resource pod_res = {.group = "",
	                                            .version = "v1",
	                                            .resource = "pods",
	                                            .kind = "Pod",
	                                            .record_kind = SHM_RECORD_META,
	                                            .namespaced = true};
	char ns_a[32], ns_b[32];
	sh_ns(1, ns_a, sizeof ns_a);
	sh_ns(2, ns_b, sizeof ns_b);
	struct gc_shard sh = {.nranges = bits ? 8 : 0, .owned = sh_owned};
	sh_bits = bits;
	sh_warnings = 0;
	gc_handlers_shard_override = &sh;
	gc_handlers_warning_hook = sh_warning;
	struct ipc_loop *loop;
	struct ipc_queue_owner *q[2];
	int qfd[2] = {ipc_queue_memfd_create("gc-attempt-to-delete"),
	              ipc_queue_memfd_create("gc-attempt-to-orphan")};
	assert_int_equal(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(ipc_queue_owner_new(&q[i], loop, qfd[i], NULL), 0);
	struct inf_handler_ctx ctx = {.queues = q, .n_queues = 2};
	assert_int_equal(gc_handler_table.init(&ctx), 0);
	struct gc_builder *b = gc_handlers_builder(&ctx);

	struct kube_owner_ref to_node[] = {{.api_version = "v1",
	                                    .kind = "Node",
	                                    .name = "n1",
	                                    .uid = "u-n1",
	                                    .controller = -1,
	                                    .block_owner_deletion = 1}};
	struct kube_owner_ref to_ghost[] = {{.api_version = "v1",
	                                     .kind = "Node",
	                                     .name = "ghost",
	                                     .uid = "u-ghost",
	                                     .controller = -1,
	                                     .block_owner_deletion = -1}};
	struct kube_owner_ref to_pa[] = {{.api_version = "v1",
	                                  .kind = "Pod",
	                                  .name = "pa",
	                                  .uid = "u-pa",
	                                  .controller = -1,
	                                  .block_owner_deletion = -1}};
	struct kube_object_meta node = {.name = "n1", .uid = "u-n1"};
	struct kube_object_meta pa = {.name = "pa",
	                              .namespace = ns_a,
	                              .uid = "u-pa",
	                              .n_owner_refs = 1,
	                              .owner_refs = to_node};
	struct kube_object_meta pb = {.name = "pb",
	                              .namespace = ns_b,
	                              .uid = "u-pb",
	                              .n_owner_refs = 1,
	                              .owner_refs = to_node};
	/* a pod of range 2 with an owner never observed: a virtual node */
	struct kube_object_meta pv = {.name = "pv",
	                              .namespace = ns_b,
	                              .uid = "u-pv",
	                              .n_owner_refs = 1,
	                              .owner_refs = to_ghost};
	/* a pod of range 2 naming a pod of range 1 as its owner: OwnerRefInvalidNamespace,
	 * written into range 2's namespace */
	struct kube_object_meta px = {.name = "px",
	                              .namespace = ns_b,
	                              .uid = "u-px",
	                              .n_owner_refs = 1,
	                              .owner_refs = to_pa};
	struct inf_event ev = {.kind = INF_EVENT_ADD, .res = &node_res, .meta = &node};
	assert_int_equal(gc_handle_event(b, &ev), 0);
	ev.res = &pod_res;
	ev.meta = &pa;
	assert_int_equal(gc_handle_event(b, &ev), 0);
	ev.meta = &pb;
	assert_int_equal(gc_handle_event(b, &ev), 0);
	ev.meta = &pv;
	assert_int_equal(gc_handle_event(b, &ev), 0);
	ev.meta = &px;
	assert_int_equal(gc_handle_event(b, &ev), 0);
	/* the node starts an orphaning deletion, then is deleted: its dependents are queued */
	const char *fins[] = {"orphan"};
	struct kube_object_meta node2 = node;
	node2.deletion_timestamp = 1;
	node2.n_finalizers = 1;
	node2.finalizers = fins;
	struct shm_rec_hdr h = {.magic = SHM_REC_MAGIC, .kind = SHM_RECORD_META};
	struct shm_obj old = {
	        .uid = "u-n1", .name = "n1", .ns = "", .payload = &h, .payload_len = sizeof h};
	ev = (struct inf_event){
	        .kind = INF_EVENT_UPDATE, .res = &node_res, .meta = &node2, .old = &old};
	assert_int_equal(gc_handle_event(b, &ev), 0);
	ev = (struct inf_event){.kind = INF_EVENT_DELETE, .res = &node_res, .meta = &node2};
	assert_int_equal(gc_handle_event(b, &ev), 0);
	*ret_del = ipc_queue_owner_len(q[0]);
	*ret_orphan = ipc_queue_owner_len(q[1]);
	*ret_warn = sh_warnings;
	gc_handler_table.fini(&ctx);
	for (int i = 0; i < 2; i++) {
		ipc_queue_owner_free(q[i]);
		close(qfd[i]);
	}
	ipc_loop_free(loop);
	gc_handlers_shard_override = NULL;
	gc_handlers_warning_hook = NULL;
}

static void test_sharded_sink(void **state)
{
	(void)state;
	size_t del, orphan;
	unsigned warn;
	/* unsharded: u-ghost (virtual), u-px (its reference to a pod of another namespace), then
	 * the removed node's dependents u-pa and u-pb; one orphan key; one Warning */
	sh_run(0, &del, &orphan, &warn);
	size_t all_del = del;
	assert_int_equal(all_del, 4);
	assert_int_equal(orphan, 1);
	assert_int_equal(warn, 1);
	/* range 1 only: u-pa (the node's dependent); the orphan key (a dependent here) */
	sh_run(1u << 1, &del, &orphan, &warn);
	assert_int_equal(del, 1);
	assert_int_equal(orphan, 1);
	assert_int_equal(warn, 0);
	/* range 2 only: u-ghost, u-px, u-pb; the orphan key; the Warning */
	size_t del2;
	sh_run(1u << 2, &del2, &orphan, &warn);
	assert_int_equal(del2, 3);
	assert_int_equal(orphan, 1);
	assert_int_equal(warn, 1);
	/* range 0 only (the node's): nothing of the pods; the orphan key (the owner's range) */
	sh_run(1u << 0, &del, &orphan, &warn);
	assert_int_equal(del, 0);
	assert_int_equal(orphan, 1);
	assert_int_equal(warn, 0);
	/* ranges 1 and 2 together see what one unsharded instance sees */
	assert_int_equal(1 + del2, all_del);
}

/* A range acquired: the graph is seeded again from the arena. Cluster-scoped owners being
 * deleted (one orphaning, one in the foreground) come before their dependents in the seed; the
 * instance that owns only the dependents' range must still get the orphaning owner and the
 * foreground owner's dependent queued (the seed's third pass). */
static void test_seed_sharded(void **state)
{
	(void)state;
	struct shm_create_opts o = {.max_size = UINT64_C(1) << 28, .initial_size = 1 << 20};
	int fd, rfd;
	struct shm_arena *w, *r;
	assert_int_equal(shm_arena_create(&o, &fd), 0);
	assert_int_equal(shm_writer_open(fd, &w), 0);
	int cr = shm_writer_register_type(
	        w, &(struct shm_type_desc){"rbac.authorization.k8s.io", "v1", "clusterroles",
	                                   "ClusterRole", SHM_RECORD_META});
	int cm = shm_writer_register_type(
	        w, &(struct shm_type_desc){"", "v1", "configmaps", "ConfigMap", SHM_RECORD_META});
	assert_true(cr >= 0 && cm >= 0);
	char ns[32];
	sh_ns(2, ns, sizeof ns);
	struct shm_rec_hdr plain = {.magic = SHM_REC_MAGIC, .kind = SHM_RECORD_META};
	struct shm_rec_hdr orphaning = plain, foreground = plain;
	orphaning.deletion_ts = foreground.deletion_ts = 1;
	orphaning.flags = SHM_REC_FIN_ORPHAN;
	foreground.flags = SHM_REC_FIN_FOREGROUND;
	struct shm_owner_ref to_or = {
	        "rbac.authorization.k8s.io/v1", "ClusterRole", "or", "u-or", -1, 1};
	struct shm_owner_ref to_fg = {
	        "rbac.authorization.k8s.io/v1", "ClusterRole", "fg", "u-fg", -1, 1};
	struct shm_record_in recs[] = {
	        {.type = (uint16_t)cr,
	         .kind = SHM_RECORD_META,
	         .ns = "",
	         .name = "or",
	         .uid = "u-or",
	         .rv = "1",
	         .payload = &orphaning,
	         .payload_len = sizeof orphaning},
	        {.type = (uint16_t)cr,
	         .kind = SHM_RECORD_META,
	         .ns = "",
	         .name = "fg",
	         .uid = "u-fg",
	         .rv = "2",
	         .payload = &foreground,
	         .payload_len = sizeof foreground},
	        {.type = (uint16_t)cm,
	         .kind = SHM_RECORD_META,
	         .ns = ns,
	         .name = "c1",
	         .uid = "u-c1",
	         .rv = "3",
	         .owners = &to_or,
	         .n_owners = 1,
	         .payload = &plain,
	         .payload_len = sizeof plain},
	        {.type = (uint16_t)cm,
	         .kind = SHM_RECORD_META,
	         .ns = ns,
	         .name = "c2",
	         .uid = "u-c2",
	         .rv = "4",
	         .owners = &to_fg,
	         .n_owners = 1,
	         .payload = &plain,
	         .payload_len = sizeof plain},
	};
	for (size_t i = 0; i < 4; i++)
		assert_true(shm_writer_upsert(w, &recs[i]) >= 0);
	assert_int_equal(shm_arena_reader_fd(fd, &rfd), 0);
	assert_int_equal(shm_reader_open(rfd, &r), 0);

	struct gc_shard sh = {.nranges = 8, .owned = sh_owned};
	sh_bits = 1u << 2;
	gc_handlers_shard_override = &sh;
	struct ipc_loop *loop;
	struct ipc_queue_owner *q[2];
	int qfd[2] = {ipc_queue_memfd_create("gc-attempt-to-delete"),
	              ipc_queue_memfd_create("gc-attempt-to-orphan")};
	assert_int_equal(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(ipc_queue_owner_new(&q[i], loop, qfd[i], NULL), 0);
	struct inf_handler_ctx ctx = {.arena = r, .queues = q, .n_queues = 2};
	assert_int_equal(gc_handler_table.init(&ctx), 0);
	gc_handler_table.resync(&ctx, 0, true);
	/* the orphaning owner (for c1), and the foreground owner's dependent c2 */
	assert_int_equal(ipc_queue_owner_len(q[1]), 1);
	assert_int_equal(ipc_queue_owner_len(q[0]), 1);
	char key[IPC_QUEUE_KEY_MAX + 1];
	struct ipc_queue *wq;
	assert_int_equal(ipc_queue_attach(&wq, qfd[0], IPC_QUEUE_WORKER, 1), 0);
	assert_int_equal(ipc_queue_owner_pump(q[0]), 0);
	assert_true(ipc_queue_get(wq, key, sizeof key, 1000000) > 0);
	assert_string_equal(key, "u-c2");
	ipc_queue_free(wq);
	gc_handler_table.fini(&ctx);
	for (int i = 0; i < 2; i++) {
		ipc_queue_owner_free(q[i]);
		close(qfd[i]);
	}
	ipc_loop_free(loop);
	gc_handlers_shard_override = NULL;
	shm_arena_close(r);
	shm_arena_close(w);
	close(rfd);
	close(fd);
}

static void test_restart_mid_creation(void **state)
{
	(void)state;
	struct shm_create_opts o = {.max_size = UINT64_C(1) << 28, .initial_size = 1 << 20};
	int fd, qfd[2] = {ipc_queue_memfd_create("gc-attempt-to-delete"),
	                  ipc_queue_memfd_create("gc-attempt-to-orphan")};
	struct shm_arena *a;
	struct ipc_loop *loop;
	assert_true(qfd[0] >= 0 && qfd[1] >= 0);
	assert_int_equal(shm_arena_create(&o, &fd), 0);
	assert_int_equal(shm_writer_open(fd, &a), 0);
	assert_int_equal(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO), 0);

	/* first life: two ReplicaSets; pods arrive */
	struct rec_sink rec = {0};
	struct hgm_life l;
	hgm_start(&l, loop, qfd, a, &rec);
	hgm_apply(l.s, l.rs_t, KUBE_WATCH_ADDED,
	          hgm_meta("ReplicaSet", "rs1", "u-rs1", "1", NULL, NULL));
	hgm_apply(l.s, l.rs_t, KUBE_WATCH_ADDED,
	          hgm_meta("ReplicaSet", "rs2", "u-rs2", "2", NULL, NULL));
	hgm_apply(l.s, l.pod_t, KUBE_WATCH_ADDED,
	          hgm_meta("Pod", "p1", "u-p1", "3", "rs1", "u-rs1"));
	hgm_apply(l.s, l.pod_t, KUBE_WATCH_ADDED,
	          hgm_meta("Pod", "p4", "u-p4", "4", "rs2", "u-rs2"));
	assert_int_equal(gc_graph_get(l.b->graph, "u-rs1")->n_deps, 1);
	assert_int_equal(rec.n_del, 0);

	/* the crash windows: written to the arena, handlers never ran */
	struct inf_store *arena_only;
	assert_int_equal(inf_store_new(a, NULL, &arena_only), 0);
	assert_int_equal(inf_store_add_resource(arena_only, &hgm_rs_res), l.rs_t);
	assert_int_equal(inf_store_add_resource(arena_only, &hgm_pod_res), l.pod_t);
	void *p2 = hgm_meta("Pod", "p2", "u-p2", "5", "rs1", "u-rs1");
	assert_int_equal(inf_store_apply(arena_only, (uint16_t)l.pod_t, KUBE_WATCH_ADDED, p2), 0);
	hgm_apply(arena_only, l.rs_t, KUBE_WATCH_DELETED,
	          hgm_meta("ReplicaSet", "rs2", "u-rs2", "6", NULL, NULL));
	inf_store_free(arena_only);
	hgm_kill(&l);

	/* the manager restarts informerd: the builder starts from the arena */
	struct rec_sink rec2 = {0};
	hgm_start(&l, loop, qfd, a, &rec2);
	struct gc_node *rs1 = gc_graph_get(l.b->graph, "u-rs1");
	assert_non_null(rs1);
	assert_false(rs1->virtual_);
	assert_int_equal(rs1->n_deps, 2); /* p1, and p2 whose ADD no handler saw */
	/* rs2's DELETE was lost: the owner p4 names is verified as a virtual node */
	struct gc_node *rs2 = gc_graph_get(l.b->graph, "u-rs2");
	assert_non_null(rs2);
	assert_true(rs2->virtual_);
	assert_true(rec_has(&rec2, "u-rs2"));
	assert_false(rec_has(&rec2, "u-p1") || rec_has(&rec2, "u-p2") || rec_has(&rec2, "u-p4"));

	/* the watch resumes from the arena's version: p2 again (a replay, dropped), then a new pod
	 */
	assert_int_equal(inf_store_apply(l.s, (uint16_t)l.pod_t, KUBE_WATCH_ADDED, p2), 0);
	kube_object_free(p2);
	hgm_apply(l.s, l.pod_t, KUBE_WATCH_ADDED,
	          hgm_meta("Pod", "p3", "u-p3", "7", "rs1", "u-rs1"));
	assert_int_equal(rs1->n_deps, 3);

	/* a GC worker found rs2 absent (404): its virtual delete event queues p4 */
	char key[IPC_QUEUE_KEY_MAX + 1];
	assert_true(gc_queue_key_encode(&rs2->id, true, IPC_QUEUE_KEY_MAX, key, sizeof key) > 0);
	rec_reset(&rec2);
	assert_int_equal(gc_handle_virtual_delete_key(l.b, key), 0);
	assert_true(rec_has(&rec2, "u-p4"));
	assert_null(gc_graph_get(l.b->graph, "u-rs2"));

	/* later the owner is deleted in the background: every pod is queued */
	rec_reset(&rec2);
	hgm_apply(l.s, l.rs_t, KUBE_WATCH_DELETED,
	          hgm_meta("ReplicaSet", "rs1", "u-rs1", "8", NULL, NULL));
	assert_true(rec_has(&rec2, "u-p1"));
	assert_true(rec_has(&rec2, "u-p2"));
	assert_true(rec_has(&rec2, "u-p3"));
	assert_int_equal(rec2.n_del, 3);
	assert_int_equal(gc_graph_check(l.b->graph), 0);

	hgm_kill(&l);
	ipc_loop_free(loop);
	shm_arena_close(a);
	close(fd);
	close(qfd[0]);
	close(qfd[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_api_version),          cmocka_unit_test(test_events),
	        cmocka_unit_test(test_table_shape),          cmocka_unit_test(test_seed_from_arena),
	        cmocka_unit_test(test_restart_mid_creation), cmocka_unit_test(test_sharded_sink),
	        cmocka_unit_test(test_seed_sharded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
