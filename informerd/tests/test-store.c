/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of the store: arena writes before handlers, ADD/UPDATE/DELETE mapping, replays, replace
 * with tombstones carrying the last known state, the resource table, payload layouts, and the
 * test handler table with a real queue owner.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/handlers.h"
#include "shm/record-model.h"
#include "shm/records.h"
#include "informerd/store.h"
#include "kube/fence.h"
#include "kube/shard.h"

struct seen_ev {
	enum inf_event_kind kind;
	char name[64], rv[32], old_rv[32], arena_rv[32];
	bool tombstone, relist, dropped;
};
static struct seen_ev g_ev[64];
static size_t g_n;

static void rec(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	struct seen_ev *e = &g_ev[g_n++];
	struct shm_obj cur = SHM_OBJ_INIT;
	const char *ns, *name;

	memset(e, 0, sizeof(*e));
	e->kind = ev->kind;
	e->tombstone = ev->tombstone;
	e->relist = ev->from_relist;
	e->dropped = ev->dropped;
	name = ev->meta ? ev->meta->name : ev->old->name;
	ns = ev->meta ? (ev->meta->namespace ? ev->meta->namespace : "") : ev->old->ns;
	snprintf(e->name, sizeof(e->name), "%s", name);
	if (ev->meta)
		snprintf(e->rv, sizeof(e->rv), "%s", ev->meta->resource_version);
	if (ev->old)
		snprintf(e->old_rv, sizeof(e->old_rv), "%s", ev->old->rv);
	/* What a worker woken now would read. */
	if (shm_reader_get(ctx->arena, ev->type, ns, name, &cur) == 0)
		snprintf(e->arena_rv, sizeof(e->arena_rv), "%s", cur.rv);
	else
		snprintf(e->arena_rv, sizeof(e->arena_rv), "<none>");
	shm_obj_release(&cur);
}

static const struct inf_handler_entry rec_entries[] = {
        {.group = "", .resource = "pods", .on_add = rec, .on_update = rec, .on_delete = rec},
};
static const struct inf_handler_table rec_table = {
        .controller = "rec",
        .entries = rec_entries,
        .n_entries = 1,
};

static const struct inf_resource pods = {"", "v1", "pods", "Pod", SHM_RECORD_POD, true};
static const struct inf_resource rss = {
        "apps", "v1", "replicasets", "ReplicaSet", SHM_RECORD_REPLICASET, true};
static const struct inf_resource cms = {"", "v1", "configmaps", "ConfigMap", SHM_RECORD_META, true};

struct fx {
	int fd;
	struct shm_arena *a;
	struct inf_dispatch *d;
	struct inf_store *s;
	int pod_t;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct shm_create_opts o = {.max_size = 1ULL << 30};

	assert_int_equal(shm_arena_create(&o, &f->fd), 0);
	assert_int_equal(shm_writer_open(f->fd, &f->a), 0);
	assert_int_equal(inf_dispatch_new(&f->d), 0);
	assert_int_equal(inf_dispatch_register(f->d, &rec_table, NULL, 0, f->a), 0);
	assert_int_equal(inf_store_new(f->a, f->d, &f->s), 0);
	f->pod_t = inf_store_add_resource(f->s, &pods);
	assert_true(f->pod_t >= 0);
	g_n = 0;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	inf_store_free(f->s);
	inf_dispatch_free(f->d);
	shm_arena_close(f->a);
	close(f->fd);
	free(f);
	return 0;
}

static void *pod(const char *name, const char *uid, const char *rv, const char *extra)
{
	char buf[2048];
	struct kube_pod *p = NULL;
	int n = snprintf(buf, sizeof(buf),
	                 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns1\",\"uid\":\"%s\","
	                 "\"resourceVersion\":\"%s\","
	                 "\"labels\":{\"app\":\"x\"},\"finalizers\":[\"orphan\",\"a/b\"],"
	                 "\"ownerReferences\":[{\"apiVersion\":\"apps/"
	                 "v1\",\"kind\":\"ReplicaSet\",\"name\":\"rs\","
	                 "\"uid\":\"u-rs\",\"controller\":true}]},"
	                 "\"spec\":{\"nodeName\":\"node-1\"},\"status\":{\"phase\":\"Running\"%s}}",
	                 name, uid, rv, extra ? extra : "");
	assert_int_equal(kube_decode_pod(buf, (size_t)n, 0, &p), 0);
	return p;
}

static void apply(struct fx *f, enum kube_watch_type t, void *obj)
{
	assert_int_equal(inf_store_apply(f->s, (uint16_t)f->pod_t, t, obj), 0);
	kube_object_free(obj);
}

static void radd(struct fx *f, void *obj)
{
	assert_int_equal(inf_store_replace_add(f->s, (uint16_t)f->pod_t, obj), 0);
	kube_object_free(obj);
}

static void test_events_after_arena(void **state)
{
	struct fx *f = *state;
	char rv[64];
	struct inf_store_stats st;

	assert_int_equal(inf_store_synced_rv(f->s, (uint16_t)f->pod_t, rv, sizeof(rv)), 0);
	assert_false(inf_store_synced(f->s, (uint16_t)f->pod_t));
	assert_int_equal(inf_store_replace_begin(f->s, (uint16_t)f->pod_t), 0);
	radd(f, pod("a", "u-a", "5", NULL));
	radd(f, pod("b", "u-b", "6", NULL));
	assert_int_equal(inf_store_replace_commit(f->s, (uint16_t)f->pod_t, "10"), 0);
	assert_true(inf_store_synced(f->s, (uint16_t)f->pod_t));
	assert_int_equal(inf_store_synced_rv(f->s, (uint16_t)f->pod_t, rv, sizeof(rv)), 2);
	assert_string_equal(rv, "10");
	assert_int_equal(g_n, 2);
	assert_int_equal(g_ev[0].kind, INF_EVENT_ADD);
	assert_true(g_ev[0].relist);
	assert_string_equal(g_ev[0].arena_rv, "5"); /* arena written before the handler ran */

	apply(f, KUBE_WATCH_MODIFIED, pod("a", "u-a", "11", NULL));
	assert_int_equal(g_n, 3);
	assert_int_equal(g_ev[2].kind, INF_EVENT_UPDATE);
	assert_string_equal(g_ev[2].rv, "11");
	assert_string_equal(g_ev[2].old_rv, "5");
	assert_string_equal(g_ev[2].arena_rv, "11");
	assert_false(g_ev[2].relist);

	/* A replayed event (warm restart) is not dispatched again. */
	apply(f, KUBE_WATCH_MODIFIED, pod("a", "u-a", "11", NULL));
	assert_int_equal(g_n, 3);
	/* Delete of an unknown object: nothing. Of a known one: DELETE with the last state. */
	apply(f, KUBE_WATCH_DELETED, pod("zz", "u-zz", "12", NULL));
	assert_int_equal(g_n, 3);
	apply(f, KUBE_WATCH_DELETED, pod("b", "u-b", "13", NULL));
	assert_int_equal(g_n, 4);
	assert_int_equal(g_ev[3].kind, INF_EVENT_DELETE);
	assert_false(g_ev[3].tombstone);
	assert_string_equal(g_ev[3].rv, "13");
	assert_string_equal(g_ev[3].old_rv, "6");
	assert_string_equal(g_ev[3].arena_rv, "<none>");
	/* A recreated object (new uid) is an UPDATE whose old has the old uid. */
	apply(f, KUBE_WATCH_ADDED, pod("a", "u-a2", "14", NULL));
	assert_int_equal(g_ev[4].kind, INF_EVENT_UPDATE);
	assert_string_equal(g_ev[4].old_rv, "11");
	assert_int_equal(inf_store_set_rv(f->s, (uint16_t)f->pod_t, "14"), 0);
	assert_int_equal(inf_store_synced_rv(f->s, (uint16_t)f->pod_t, rv, sizeof(rv)), 2);
	assert_string_equal(rv, "14");
	inf_store_get_stats(f->s, &st);
	assert_int_equal(st.upserts, 4);
	assert_int_equal(st.deletes, 1);
	assert_int_equal(st.skipped_same_rv, 1);
	assert_int_equal(shm_writer_check(f->a), 0);
}

/* The acquisition barrier's epoch in the sync word: set after a replace, kept by events and by
 * an ordinary relist, refused during a replace (it must cover a committed one). */
static void test_sync_epoch(void **state)
{
	struct fx *f = *state;
	uint16_t t = (uint16_t)f->pod_t;

	assert_int_equal(inf_store_sync_epoch(f->s, t), 0);
	assert_int_equal(inf_store_replace_begin(f->s, t), 0);
	radd(f, pod("a", "u-a", "5", NULL));
	assert_int_equal(inf_store_set_sync_epoch(f->s, t, "5", 3), -EINVAL); /* mid-replace */
	assert_int_equal(inf_store_replace_commit(f->s, t, "10"), 0);
	assert_int_equal(inf_store_sync_epoch(f->s, t), 0);
	assert_int_equal(inf_store_set_sync_epoch(f->s, t, "10", 3), 0);
	assert_int_equal(inf_store_sync_epoch(f->s, t), 3);
	assert_int_equal(inf_store_set_rv(f->s, t, "11"), 0);
	assert_int_equal(inf_store_sync_epoch(f->s, t), 3);
	assert_int_equal(inf_store_replace_begin(f->s, t), 0);
	assert_int_equal(inf_store_replace_commit(f->s, t, "12"), 0);
	assert_int_equal(inf_store_sync_epoch(f->s, t), 3);
}

static void test_replace_tombstones(void **state)
{
	struct fx *f = *state;
	struct shm_obj o = SHM_OBJ_INIT;
	struct inf_store_stats st;

	assert_int_equal(inf_store_replace_begin(f->s, (uint16_t)f->pod_t), 0);
	radd(f, pod("a", "u-a", "5", NULL));
	radd(f, pod("b", "u-b", "6", NULL));
	radd(f, pod("c", "u-c", "7", NULL));
	assert_int_equal(inf_store_replace_commit(f->s, (uint16_t)f->pod_t, "10"), 0);
	apply(f, KUBE_WATCH_MODIFIED, pod("b", "u-b", "12", NULL));
	g_n = 0;
	/* Relist: a unchanged, b gone, c gone, d new. */
	assert_int_equal(inf_store_replace_begin(f->s, (uint16_t)f->pod_t), 0);
	radd(f, pod("a", "u-a", "5", NULL));
	radd(f, pod("d", "u-d", "20", NULL));
	assert_true(inf_store_replacing(f->s, (uint16_t)f->pod_t));
	assert_int_equal(inf_store_replace_commit(f->s, (uint16_t)f->pod_t, "30"), 0);
	assert_false(inf_store_replacing(f->s, (uint16_t)f->pod_t));
	assert_int_equal(g_n, 4);
	assert_int_equal(g_ev[0].kind, INF_EVENT_UPDATE); /* re-delivered, same version */
	assert_string_equal(g_ev[0].old_rv, "5");
	assert_int_equal(g_ev[1].kind, INF_EVENT_ADD);
	for (size_t i = 2; i < 4; i++) {
		assert_int_equal(g_ev[i].kind, INF_EVENT_DELETE);
		assert_true(g_ev[i].tombstone);
		assert_string_equal(g_ev[i].arena_rv, "<none>");
		if (strcmp(g_ev[i].name, "b") == 0)
			assert_string_equal(g_ev[i].old_rv, "12"); /* last known state */
		else
			assert_string_equal(g_ev[i].name, "c");
	}
	assert_int_equal(shm_reader_get(f->a, (uint16_t)f->pod_t, "ns1", "b", &o), -ENOENT);
	assert_int_equal(shm_reader_get(f->a, (uint16_t)f->pod_t, "ns1", "d", &o), 0);
	shm_obj_release(&o);
	inf_store_get_stats(f->s, &st);
	assert_int_equal(st.tombstones, 2);
	assert_false(g_ev[2].dropped || g_ev[3].dropped); /* a relist's tombstone is a deletion */
	/* An aborted replace deletes nothing. */
	assert_int_equal(inf_store_replace_begin(f->s, (uint16_t)f->pod_t), 0);
	inf_store_replace_abort(f->s, (uint16_t)f->pod_t);
	assert_int_equal(inf_store_replace_commit(f->s, (uint16_t)f->pod_t, "40"), -EINVAL);
	assert_int_equal(shm_reader_get(f->a, (uint16_t)f->pod_t, "ns1", "a", &o), 0);
	shm_obj_release(&o);
	assert_int_equal(inf_store_replace_add(f->s, (uint16_t)f->pod_t, &o),
	                 -EINVAL); /* not replacing */
	assert_int_equal(shm_writer_check(f->a), 0);
}

/* A resource discovery dropped: every object leaves as a tombstone; the table says synced with
 * no version (nothing to wait for, and a later watch starts cold). */
static void test_drop(void **state)
{
	struct fx *f = *state;
	struct shm_type_info ti;
	char rv[64];

	assert_int_equal(inf_store_replace_begin(f->s, (uint16_t)f->pod_t), 0);
	radd(f, pod("a", "u-a", "5", NULL));
	radd(f, pod("b", "u-b", "6", NULL));
	assert_int_equal(inf_store_replace_commit(f->s, (uint16_t)f->pod_t, "10"), 0);
	g_n = 0;
	assert_int_equal(inf_store_drop(f->s, (uint16_t)f->pod_t), 0);
	assert_int_equal(g_n, 2);
	assert_true(g_ev[0].tombstone && g_ev[1].tombstone);
	/* issue 21: marked as drops (the objects were not deleted at the apiserver) */
	assert_true(g_ev[0].dropped && g_ev[1].dropped);
	assert_int_equal(shm_reader_type_info(f->a, (uint16_t)f->pod_t, &ti), 0);
	assert_int_equal(ti.count, 0);
	assert_true(ti.synced);
	assert_string_equal(ti.rv, "");
	assert_int_equal(inf_store_synced_rv(f->s, (uint16_t)f->pod_t, rv, sizeof(rv)), 0);
	assert_int_equal(inf_store_drop(f->s, 999), -EINVAL);
}

/* Issue 21: after the drop, retire frees the type slot; the next resource reuses it under a
 * new generation, with no handler of the old one bound and no "synced" inherited. */
static void test_drop_retire_reuse(void **state)
{
	struct fx *f = *state;
	struct shm_type_info ti;
	int t = inf_store_add_resource(f->s, &cms);
	static const struct inf_resource secrets = {"",  "v1", "secrets", "Secret", SHM_RECORD_META,
	                                            true};

	assert_true(t >= 0);
	assert_int_equal(shm_reader_type_info(f->a, (uint16_t)t, &ti), 0);
	uint32_t gen = ti.gen;
	assert_int_equal(inf_store_replace_begin(f->s, (uint16_t)t), 0);
	assert_int_equal(inf_store_replace_commit(f->s, (uint16_t)t, "3"), 0);
	/* not dropped: objects could remain, refused only by the arena when some do */
	assert_int_equal(inf_store_drop(f->s, (uint16_t)t), 0);
	assert_int_equal(inf_store_retire(f->s, (uint16_t)t), 0);
	assert_int_equal(inf_store_retire(f->s, (uint16_t)t), -EINVAL);
	assert_int_equal(shm_reader_find_type(f->a, "", "v1", "configmaps"), -ENOENT);
	assert_int_equal(inf_store_add_resource(f->s, &secrets), t);
	assert_int_equal(shm_reader_type_info(f->a, (uint16_t)t, &ti), 0);
	assert_string_equal(ti.resource, "secrets");
	assert_int_not_equal(ti.gen, gen);
	assert_false(ti.synced);
	/* the pods type keeps its objects: retiring it is refused */
	apply(f, KUBE_WATCH_ADDED, pod("a", "u-a", "5", NULL));
	assert_int_equal(inf_store_retire(f->s, (uint16_t)f->pod_t), -EBUSY);
	assert_int_equal(shm_writer_check(f->a), 0);
}

/* Issue 21 (shm/arena.h T3): a cluster serving 2,000 resources at once (well past the 1,024
 * the arena's resource table used to hold), then half of them deleted and as many new ones
 * created: every one gets an id, syncs, and the retired ids are reused. */
static void test_many_resources(void **state)
{
	struct fx *f = *state;
	enum { N = 2000 };
	static char names[2 * N][3][32];
	static struct inf_resource rs[2 * N];
	static int ids[2 * N];
	struct shm_type_info ti;
	char rv[16];

	for (unsigned i = 0; i < 2 * N; i++) {
		snprintf(names[i][0], sizeof(names[i][0]), "g%u.example.com", i % 7);
		snprintf(names[i][1], sizeof(names[i][1]), "widgets%u", i);
		snprintf(names[i][2], sizeof(names[i][2]), "Widget%u", i);
		rs[i] = (struct inf_resource){names[i][0],     "v1", names[i][1], names[i][2],
		                              SHM_RECORD_META, true};
	}
	for (unsigned i = 0; i < N; i++) {
		ids[i] = inf_store_add_resource(f->s, &rs[i]);
		assert_int_equal(ids[i], (int)i + 1); /* after pods */
		snprintf(rv, sizeof(rv), "%u", 100 + i);
		assert_int_equal(inf_store_replace_begin(f->s, (uint16_t)ids[i]), 0);
		assert_int_equal(inf_store_replace_commit(f->s, (uint16_t)ids[i], rv), 0);
	}
	for (unsigned i = 0; i < N; i++) {
		assert_int_equal(shm_reader_type_info(f->a, (uint16_t)ids[i], &ti), 0);
		assert_string_equal(ti.resource, names[i][1]);
		assert_true(ti.synced);
		snprintf(rv, sizeof(rv), "%u", 100 + i);
		assert_string_equal(ti.rv, rv);
	}
	/* the odd ones are deleted (CRDs gone), and N / 2 new ones take their ids */
	for (unsigned i = 1; i < N; i += 2) {
		assert_int_equal(inf_store_drop(f->s, (uint16_t)ids[i]), 0);
		assert_int_equal(inf_store_retire(f->s, (uint16_t)ids[i]), 0);
	}
	for (unsigned i = N; i < N + N / 2; i++) {
		ids[i] = inf_store_add_resource(f->s, &rs[i]);
		assert_int_equal(ids[i], ids[2 * (i - N) + 1]); /* the lowest retired id first */
		assert_int_equal(shm_reader_type_info(f->a, (uint16_t)ids[i], &ti), 0);
		assert_string_equal(ti.resource, names[i][1]);
		assert_false(ti.synced);
	}
	struct shm_stats st;
	assert_int_equal(shm_reader_stats(f->a, &st), 0);
	assert_int_equal(st.n_types, N + 1);
	assert_int_equal(shm_writer_check(f->a), 0);
}

/* Issue 21: ownerReference controller / blockOwnerDeletion: absent stays distinct from false
 * from the decoded model through the arena to a reader (upstream's *bool). */
static void test_owner_tristate(void **state)
{
	struct fx *f = *state;
	struct kube_pod *p = NULL;
	struct shm_obj o = SHM_OBJ_INIT;
	const char *js = "{\"metadata\":{\"name\":\"t\",\"namespace\":\"ns1\",\"uid\":\"u-t\","
	                 "\"resourceVersion\":\"7\",\"ownerReferences\":["
	                 "{\"apiVersion\":\"v1\",\"kind\":\"A\",\"name\":\"a\",\"uid\":\"u1\","
	                 "\"controller\":true},"
	                 "{\"apiVersion\":\"v1\",\"kind\":\"B\",\"name\":\"b\",\"uid\":\"u2\","
	                 "\"controller\":false,\"blockOwnerDeletion\":false},"
	                 "{\"apiVersion\":\"v1\",\"kind\":\"C\",\"name\":\"c\",\"uid\":\"u3\","
	                 "\"blockOwnerDeletion\":true}]},\"spec\":{},\"status\":{}}";

	assert_int_equal(kube_decode_pod(js, strlen(js), 0, &p), 0);
	apply(f, KUBE_WATCH_ADDED, p);
	assert_int_equal(shm_reader_get(f->a, (uint16_t)f->pod_t, "ns1", "t", &o), 0);
	assert_int_equal(o.n_owners, 3);
	assert_int_equal(o.owners[0].controller, 1);
	assert_int_equal(o.owners[0].block_owner_deletion, -1);
	assert_int_equal(o.owners[1].controller, 0);
	assert_int_equal(o.owners[1].block_owner_deletion, 0);
	assert_int_equal(o.owners[2].controller, -1);
	assert_int_equal(o.owners[2].block_owner_deletion, 1);
	shm_obj_release(&o);
}

/* Issue 21: more blobs than a 16-bit count holds (70,000 finalizers: the apiserver bounds
 * only the object's size) are counted exactly, none lost, the last one readable. */
static void test_many_finalizers(void **state)
{
	struct fx *f = *state;
	enum { N = 70000 };
	size_t cap = 256 + (size_t)N * 16, n = 0;
	char *js = malloc(cap);
	struct kube_pod *p = NULL;
	struct shm_obj o = SHM_OBJ_INIT;
	struct shm_rec_view v = {0};
	const char *str = NULL;
	size_t l;

	n += (size_t)snprintf(js + n, cap - n,
	                      "{\"metadata\":{\"name\":\"f\",\"namespace\":\"ns1\",\"uid\":\"u-f\","
	                      "\"resourceVersion\":\"9\",\"finalizers\":[");
	for (unsigned i = 0; i < N; i++)
		n += (size_t)snprintf(js + n, cap - n, "%s\"x.io/f%u\"", i ? "," : "", i);
	n += (size_t)snprintf(js + n, cap - n, "]},\"spec\":{},\"status\":{}}");
	assert_int_equal(kube_decode_pod(js, n, 0, &p), 0);
	free(js);
	apply(f, KUBE_WATCH_ADDED, p);
	assert_int_equal(shm_reader_get(f->a, (uint16_t)f->pod_t, "ns1", "f", &o), 0);
	assert_int_equal(shm_rec_parse(o.payload, o.payload_len, &v), 0);
	assert_int_equal(v.hdr.n_finalizers, N);
	/* node name, affinity target node, the endpoint part (hostname, subdomain, podIP: no
	 * IPs, no ports), then the finalizers */
	assert_int_equal(v.hdr.n_blobs, 5 + N);
	assert_int_equal(shm_rec_first_finalizer(&v), 5);
	assert_int_equal(shm_rec_blob(&v, N + 4, &str, &l), 0);
	assert_string_equal(str, "x.io/f69999");
	assert_int_equal(shm_rec_blob(&v, N + 5, &str, &l), -ENOENT);
	shm_obj_release(&o);
}

static void test_pod_payload(void **state)
{
	struct fx *f = *state;
	struct shm_obj o = SHM_OBJ_INIT;
	struct shm_rec_view v = {0};
	struct shm_rec_pod p;
	const char *s = NULL;
	size_t l;

	apply(f, KUBE_WATCH_ADDED,
	      pod("a", "u-a", "5",
	          ",\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"lastTransitionTime\":"
	          "\"2026-01-01T00:00:00Z\"}],"
	          "\"containerStatuses\":[{\"name\":\"c\",\"restartCount\":3}]"));
	assert_int_equal(shm_reader_get(f->a, (uint16_t)f->pod_t, "ns1", "a", &o), 0);
	assert_int_equal(o.kind, SHM_RECORD_POD);
	assert_string_equal(shm_obj_label(&o, "app"), "x");
	assert_non_null(shm_obj_controller(&o));
	assert_string_equal(shm_obj_controller(&o)->uid, "u-rs");
	assert_int_equal(shm_rec_parse(o.payload, o.payload_len, &v), 0);
	assert_int_equal(v.hdr.kind, SHM_RECORD_POD);
	assert_int_equal(v.hdr.n_finalizers, 2);
	assert_true(v.hdr.flags & SHM_REC_FIN_ORPHAN);
	assert_false(v.hdr.flags & SHM_REC_FIN_FOREGROUND);
	assert_int_equal(shm_rec_pod_get(&v, &p), 0);
	assert_int_equal(p.phase, KUBE_POD_RUNNING);
	assert_int_equal(p.ready, 1);
	assert_int_equal(p.max_restarts, 3);
	assert_true(p.ready_transition_time > 0);
	assert_int_equal(shm_rec_blob(&v, 0, &s, &l), 0);
	assert_string_equal(s, "node-1");
	assert_int_equal(shm_rec_blob(&v, shm_rec_first_finalizer(&v) + 1, &s, &l), 0);
	assert_string_equal(s, "a/b");
	assert_int_equal(shm_rec_blob(&v, v.hdr.n_blobs, &s, &l), -ENOENT);
	/* Truncations are detected. */
	assert_int_equal(shm_rec_parse(o.payload, 10, &v), -EBADMSG);
	assert_int_equal(shm_rec_parse(o.payload, o.payload_len - 3, &v), 0);
	assert_int_equal(shm_rec_blob(&v, shm_rec_first_finalizer(&v) + 1, &s, &l), -EBADMSG);
	shm_obj_release(&o);
}

static void test_rs_and_meta_payload(void **state)
{
	struct fx *f = *state;
	static const char rs_json[] =
	        "{\"metadata\":{\"name\":\"rs\",\"namespace\":\"ns1\",\"uid\":\"u-rs\","
	        "\"resourceVersion\":\"3\",\"generation\":4},"
	        "\"spec\":{\"replicas\":3,\"selector\":{\"matchLabels\":{\"app\":\"x\"}},"
	        "\"template\":{\"metadata\":{\"labels\":{\"app\":\"x\"}},\"spec\":{}}},"
	        "\"status\":{\"replicas\":2,\"observedGeneration\":3,\"conditions\":[{\"type\":"
	        "\"ReplicaFailure\","
	        "\"status\":\"True\",\"reason\":\"FailedCreate\",\"message\":\"m\"}]}}";
	static const char cm_json[] =
	        "{\"apiVersion\":\"meta.k8s.io/"
	        "v1\",\"kind\":\"PartialObjectMetadata\",\"metadata\":{\"name\":\"cm\","
	        "\"namespace\":\"ns1\",\"uid\":\"u-cm\",\"resourceVersion\":\"9\","
	        "\"deletionTimestamp\":\"2026-01-01T00:00:00Z\","
	        "\"finalizers\":[\"foregroundDeletion\"]}}";
	struct kube_replicaset *r = NULL;
	struct kube_partial *cm = NULL;
	struct shm_obj o = SHM_OBJ_INIT;
	struct shm_rec_view v = {0};
	struct shm_rec_rs rs;
	const char *s = NULL;
	size_t l;
	int rt = inf_store_add_resource(f->s, &rss), ct = inf_store_add_resource(f->s, &cms);

	assert_true(rt >= 0 && ct >= 0 && rt != ct);
	assert_int_equal(inf_store_kube_kind(f->s, (uint16_t)rt), KUBE_KIND_REPLICASET);
	assert_int_equal(inf_store_kube_kind(f->s, (uint16_t)ct), KUBE_KIND_PARTIAL);
	assert_int_equal(inf_store_kube_kind(f->s, (uint16_t)f->pod_t), KUBE_KIND_POD);
	assert_int_equal(kube_decode_replicaset(rs_json, sizeof(rs_json) - 1, 0, &r), 0);
	assert_int_equal(inf_store_apply(f->s, (uint16_t)rt, KUBE_WATCH_ADDED, r), 0);
	kube_object_free(r);
	assert_int_equal(shm_reader_get(f->a, (uint16_t)rt, "ns1", "rs", &o), 0);
	assert_int_equal(shm_rec_parse(o.payload, o.payload_len, &v), 0);
	assert_int_equal(v.hdr.generation, 4);
	assert_int_equal(shm_rec_rs_get(&v, &rs), 0);
	assert_int_equal(rs.spec_replicas, 3);
	assert_int_equal(rs.replicas, 2);
	assert_int_equal(rs.observed_generation, 3);
	assert_int_equal(rs.sel_state, SHM_REC_SEL_VALID);
	assert_int_equal(rs.n_conditions, 1);
	/* blob 0 (no error), the compiled selector app=x (key, value), the template, its label
	 * (key, value), then the condition's five blobs */
	assert_int_equal(rs.n_sel_labels, 1);
	assert_int_equal(rs.n_sel_exprs, 0);
	assert_int_equal(rs.n_sel_blobs, 2);
	assert_int_equal(shm_rec_blob(&v, 0, &s, &l), 0);
	assert_int_equal(l, 0);
	assert_int_equal(shm_rec_blob(&v, 1, &s, &l), 0);
	assert_string_equal(s, "app");
	assert_int_equal(shm_rec_blob(&v, 2, &s, &l), 0);
	assert_string_equal(s, "x");
	assert_int_equal(shm_rec_rs_template(&rs), 3);
	assert_int_equal(shm_rec_blob(&v, 3, &s, &l), 0);
	assert_non_null(strstr(s, "\"labels\""));
	assert_int_equal(rs.n_template_labels, 1);
	assert_int_equal(shm_rec_blob(&v, 4, &s, &l), 0);
	assert_string_equal(s, "app");
	/* the template's four parts: labels, annotations (absent), finalizers (absent), spec */
	assert_int_equal(rs.tmpl_parts,
	                 SHM_REC_TMPL_VALID | SHM_REC_TMPL_LABELS | SHM_REC_TMPL_SPEC);
	assert_int_equal(shm_rec_blob(&v, 6, &s, &l), 0);
	assert_string_equal(s, "{\"app\":\"x\"}");
	assert_int_equal(shm_rec_blob(&v, 9, &s, &l), 0);
	assert_string_equal(s, "{}");
	assert_int_equal(shm_rec_rs_first_condition(&rs), 10);
	assert_int_equal(shm_rec_blob(&v, 12, &s, &l), 0);
	assert_string_equal(s, "FailedCreate");
	assert_int_equal(v.hdr.n_blobs, 10 + 5 + 1); /* + generateName (record version 8) */
	assert_int_equal(g_n, 0);                    /* the test table only handles pods */

	assert_int_equal(kube_decode_partial(cm_json, sizeof(cm_json) - 1, 0, &cm), 0);
	assert_int_equal(inf_store_apply(f->s, (uint16_t)ct, KUBE_WATCH_ADDED, cm), 0);
	kube_object_free(cm);
	assert_int_equal(shm_reader_get(f->a, (uint16_t)ct, "ns1", "cm", &o), 0);
	assert_int_equal(o.kind, SHM_RECORD_META);
	assert_int_equal(shm_rec_parse(o.payload, o.payload_len, &v), 0);
	assert_true(v.hdr.deletion_ts > 0);
	assert_true(v.hdr.flags & SHM_REC_FIN_FOREGROUND);
	assert_int_equal(v.hdr.n_blobs, 1);
	assert_int_equal(v.hdr.fixed_len, 0);
	shm_obj_release(&o);
	assert_int_equal(inf_store_apply(f->s, 999, KUBE_WATCH_ADDED, cm_json), -EINVAL);
}

/* The test table with a real queue owner: keys per event, resync re-adds the arena. */
static void test_test_table_with_queue(void **state)
{
	struct fx *f = *state;
	struct ipc_loop *loop = NULL;
	struct ipc_queue_owner *q = NULL;
	struct inf_dispatch *d = NULL;
	struct inf_store *s = NULL;
	int qfd = ipc_queue_memfd_create("informer-test");
	int t;

	assert_true(qfd >= 0);
	assert_int_equal(ipc_loop_new(&loop, IPC_LOOP_BACKEND_AUTO), 0);
	assert_int_equal(ipc_queue_owner_new(&q, loop, qfd, NULL), 0);
	assert_int_equal(inf_dispatch_new(&d), 0);
	assert_int_equal(inf_dispatch_register(d, &inf_test_handler_table, NULL, 0, f->a), -EINVAL);
	assert_int_equal(inf_dispatch_register(d, &inf_test_handler_table, &q, 1, f->a), 0);
	assert_int_equal(inf_store_new(f->a, d, &s), 0);
	t = inf_store_add_resource(s, &pods);
	assert_int_equal(t, f->pod_t);
	void *p = pod("a", "u-a", "5", NULL);
	assert_int_equal(inf_store_apply(s, (uint16_t)t, KUBE_WATCH_ADDED, p), 0);
	assert_int_equal(inf_store_apply(s, (uint16_t)t, KUBE_WATCH_ADDED, p),
	                 0); /* replay: no dispatch */
	kube_object_free(p);
	p = pod("b", "u-b", "6", NULL);
	assert_int_equal(inf_store_apply(s, (uint16_t)t, KUBE_WATCH_ADDED, p), 0);
	kube_object_free(p);
	assert_int_equal(ipc_queue_owner_len(q), 2);
	assert_int_equal(inf_dispatch_calls(d), 2);
	inf_dispatch_resync(d, 0, 0, true); /* dedup: still two keys */
	assert_int_equal(ipc_queue_owner_len(q), 2);
	inf_store_free(s);
	inf_dispatch_free(d);
	ipc_queue_owner_free(q);
	ipc_loop_free(loop);
	close(qfd);
}

/* A warm arena from another build: records of an older payload version make the type list cold
 * (unsynced, no version) and the relist rewrites them although their resourceVersion did not
 * change; a resource stored under another record kind (metadata-only before, whole now) is
 * cleared and registered again. Without this a warm restart after an upgrade kept records no
 * reader of the new build can decode. */
static void test_warm_arena_other_format(void **state)
{
	struct fx *f = *state;
	struct shm_obj o = SHM_OBJ_INIT;
	struct shm_type_info ti;
	char rvbuf[64];

	/* a pod record written by an older build (version 2 magic), synced at "5" */
	struct shm_rec_hdr old = {.magic = 0x324b5243u, .kind = SHM_RECORD_POD};
	struct shm_record_in in = {.type = (uint16_t)f->pod_t,
	                           .kind = SHM_RECORD_POD,
	                           .ns = "ns1",
	                           .name = "p",
	                           .uid = "u-p",
	                           .rv = "3",
	                           .payload = &old,
	                           .payload_len = sizeof old};
	assert_true(shm_writer_upsert(f->a, &in) >= 0);
	assert_int_equal(shm_writer_set_sync(f->a, (uint16_t)f->pod_t, "5", true), 0);
	/* the cm resource, metadata-only in that run, with one object */
	int ct = inf_store_add_resource(f->s, &cms);
	assert_true(ct >= 0);
	struct shm_record_in cin = {.type = (uint16_t)ct,
	                            .kind = SHM_RECORD_META,
	                            .ns = "ns1",
	                            .name = "cm",
	                            .uid = "u-cm",
	                            .rv = "4",
	                            .payload = &old,
	                            .payload_len = sizeof old};
	assert_true(shm_writer_upsert(f->a, &cin) >= 0);
	inf_store_free(f->s);

	/* the new build's informerd */
	assert_int_equal(inf_store_new(f->a, NULL, &f->s), 0);
	int pt = inf_store_add_resource(f->s, &pods);
	assert_int_equal(pt, f->pod_t);
	assert_false(inf_store_synced(f->s, (uint16_t)pt));
	assert_int_equal(inf_store_synced_rv(f->s, (uint16_t)pt, rvbuf, sizeof rvbuf), 0);
	/* the relist re-delivers the pod at the same resourceVersion: rewritten, current now */
	assert_int_equal(inf_store_replace_begin(f->s, (uint16_t)pt), 0);
	void *p = pod("p", "u-p", "3", "");
	assert_int_equal(inf_store_replace_add(f->s, (uint16_t)pt, p), 0);
	kube_object_free(p);
	assert_int_equal(inf_store_replace_commit(f->s, (uint16_t)pt, "6"), 0);
	assert_int_equal(shm_reader_get(f->a, (uint16_t)pt, "ns1", "p", &o), 0);
	struct shm_pod_view pv;
	assert_int_equal(shm_pod_view_init(&o, &pv), 0);
	shm_pod_view_free(&pv);

	/* configmaps wanted whole now: the metadata-only records go, the type is new and cold */
	static const struct inf_resource cms_whole = {
	        "", "v1", "configmaps", "ConfigMap", SHM_RECORD_OBJECT, true};
	int ct2 = inf_store_add_resource(f->s, &cms_whole);
	assert_true(ct2 >= 0);
	assert_int_equal(shm_reader_type_info(f->a, (uint16_t)ct2, &ti), 0);
	assert_int_equal(ti.record_kind, SHM_RECORD_OBJECT);
	assert_int_equal(ti.count, 0);
	assert_false(ti.synced);
	assert_int_equal(shm_reader_get(f->a, (uint16_t)ct2, "ns1", "cm", &o), -ENOENT);
	shm_obj_release(&o);
}

/* ---- the sharded cache's filter (docs/sharding.md "Caches", kube/fence.h F9) ---- */

static void *pod_in(const char *ns, const char *name, const char *uid, const char *rv)
{
	char buf[512];
	struct kube_pod *p = NULL;
	int n = snprintf(buf, sizeof(buf),
	                 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"uid\":\"%s\","
	                 "\"resourceVersion\":\"%s\"},\"spec\":{},\"status\":{}}",
	                 name, ns, uid, rv);
	assert_int_equal(kube_decode_pod(buf, (size_t)n, 0, &p), 0);
	return p;
}

/* A namespace name of range r of n (found by search: the hash decides). */
static void ns_of_range(unsigned r, unsigned n, char *buf, size_t len)
{
	for (int i = 0;; i++) {
		snprintf(buf, len, "ns-%d", i);
		if (kube_shard_range_of_ns(buf, n) == r)
			return;
	}
}

/* The decision informerd asks per object: what the manager stored in the fence's cache set. */
static void test_filter_decision(void **state)
{
	struct kube_fence *w, *r0, *plain;
	uint64_t set[KUBE_FENCE_MAX_RANGES / 64];
	char ns[4][32];
	int fd, pfd;

	(void)state;
	for (unsigned i = 0; i < 4; i++)
		ns_of_range(i, 4, ns[i], sizeof(ns[i]));
	fd = kube_fence_memfd_create_ranges(4);
	assert_true(fd >= 0);
	assert_int_equal(kube_fence_open(fd, true, &w), 0);
	assert_int_equal(kube_fence_open(fd, false, &r0), 0);
	/* nothing owned yet: only cluster-scoped objects */
	assert_true(kube_fence_cache_filtering(r0));
	assert_true(kube_fence_caches_ns(r0, ""));
	assert_true(kube_fence_caches_ns(r0, NULL));
	for (unsigned i = 0; i < 4; i++)
		assert_false(kube_fence_caches_ns(r0, ns[i]));
	assert_true(kube_fence_cache_set(r0, set));
	assert_int_equal(set[0], 0);
	/* ranges 1 and 3: their namespaces, not the others */
	kube_fence_set_cache_range(w, 1, true);
	kube_fence_set_cache_range(w, 3, true);
	assert_false(kube_fence_caches_ns(r0, ns[0]));
	assert_true(kube_fence_caches_ns(r0, ns[1]));
	assert_false(kube_fence_caches_ns(r0, ns[2]));
	assert_true(kube_fence_caches_ns(r0, ns[3]));
	assert_false(kube_fence_caches_range(r0, 0)); /* range 0's namespaces: not ours */
	assert_false(kube_fence_caches_range(r0, 4)); /* past the ranges */
	assert_true(kube_fence_cache_set(r0, set));
	assert_int_equal(set[0], 0xa);
	/* range 0 won: the filter is off, everything is stored */
	kube_fence_set_cache_range(w, 0, true);
	assert_false(kube_fence_cache_filtering(r0));
	for (unsigned i = 0; i < 4; i++)
		assert_true(kube_fence_caches_ns(r0, ns[i]));
	assert_false(kube_fence_cache_set(r0, set));
	assert_int_equal(set[0], ~0ull);
	/* range 0 and range 3 lost: back to range 1 only */
	kube_fence_set_cache_range(w, 0, false);
	kube_fence_set_cache_range(w, 3, false);
	assert_true(kube_fence_caches_ns(r0, ns[1]));
	assert_false(kube_fence_caches_ns(r0, ns[3]));
	/* a reader cannot change the set; an index past the ranges is ignored */
	kube_fence_set_cache_range(r0, 2, true);
	kube_fence_set_cache_range(w, 200, true);
	assert_false(kube_fence_caches_ns(r0, ns[2]));
	assert_true(kube_fence_cache_set(r0, set));
	assert_int_equal(set[0], 0x2);
	assert_int_equal(set[3], 0);
	/* negative control: without ranges (sharding off) and without a fence nothing is filtered
	 */
	pfd = kube_fence_memfd_create();
	assert_true(pfd >= 0);
	assert_int_equal(kube_fence_open(pfd, false, &plain), 0);
	assert_false(kube_fence_cache_filtering(plain));
	assert_true(kube_fence_caches_ns(plain, ns[2]));
	assert_false(kube_fence_cache_filtering(NULL));
	assert_true(kube_fence_caches_ns(NULL, ns[2]));
	kube_fence_close(plain);
	kube_fence_close(r0);
	kube_fence_close(w);
	close(pfd);
	close(fd);
}

static const char *g_keep = "mine"; /* the test filter keeps this namespace only */

static bool keep_one(const char *ns, void *ud)
{
	(void)ud;
	return g_keep && strcmp(ns, g_keep) == 0;
}

static bool in_arena(struct fx *f, const char *ns, const char *name)
{
	struct shm_obj o = SHM_OBJ_INIT;
	bool r = shm_reader_get(f->a, (uint16_t)f->pod_t, ns, name, &o) == 0;

	shm_obj_release(&o);
	return r;
}

static int apply_r(struct fx *f, enum kube_watch_type t, void *obj)
{
	int r = inf_store_apply(f->s, (uint16_t)f->pod_t, t, obj);

	kube_object_free(obj);
	return r;
}

static int radd_r(struct fx *f, void *obj)
{
	int r = inf_store_replace_add(f->s, (uint16_t)f->pod_t, obj);

	kube_object_free(obj);
	return r;
}

/* The store with a filter: refused objects never reach the arena or the handlers; a DELETE of
 * one never stored is a no-op; a stale copy goes as a tombstone (event, relist, prune). */
static void test_filter_store(void **state)
{
	struct fx *f = *state;
	uint16_t t = (uint16_t)f->pod_t;
	struct inf_store_stats st;

	g_keep = "mine";
	inf_store_set_filter(f->s, keep_one, NULL);
	/* a relist: only "mine" and cluster-scoped... (pods are all namespaced) */
	assert_int_equal(inf_store_replace_begin(f->s, t), 0);
	assert_int_equal(radd_r(f, pod_in("mine", "a", "u-a", "5")), 0);
	assert_int_equal(radd_r(f, pod_in("other", "b", "u-b", "6")), 1);
	assert_int_equal(radd_r(f, pod_in("mine", "c", "u-c", "7")), 0);
	assert_int_equal(inf_store_replace_commit(f->s, t, "10"), 0);
	assert_true(in_arena(f, "mine", "a"));
	assert_false(in_arena(f, "other", "b"));
	assert_int_equal(g_n, 2);
	/* watch events */
	assert_int_equal(apply_r(f, KUBE_WATCH_ADDED, pod_in("other", "d", "u-d", "11")), 1);
	assert_int_equal(apply_r(f, KUBE_WATCH_MODIFIED, pod_in("other", "b", "u-b", "12")), 1);
	assert_int_equal(apply_r(f, KUBE_WATCH_DELETED, pod_in("other", "b", "u-b", "13")), 1);
	assert_int_equal(g_n, 2); /* nothing stored, nothing told */
	assert_false(in_arena(f, "other", "d"));
	assert_int_equal(apply_r(f, KUBE_WATCH_ADDED, pod_in("mine", "e", "u-e", "14")), 0);
	assert_int_equal(g_n, 3);
	assert_true(in_arena(f, "mine", "e"));
	/* the filter narrows ("mine" is lost): an event of a stored object removes its stale
	 * copy as a tombstone carrying the last known state */
	g_keep = "none";
	assert_int_equal(apply_r(f, KUBE_WATCH_MODIFIED, pod_in("mine", "a", "u-a", "15")), 1);
	assert_false(in_arena(f, "mine", "a"));
	assert_int_equal(g_n, 4);
	assert_int_equal(g_ev[3].kind, INF_EVENT_DELETE);
	assert_true(g_ev[3].tombstone);
	assert_false(g_ev[3].dropped);
	assert_string_equal(g_ev[3].old_rv, "5");
	/* prune: the rest of "mine" goes at once */
	assert_int_equal(inf_store_prune(f->s, t), 2);
	assert_false(in_arena(f, "mine", "c"));
	assert_false(in_arena(f, "mine", "e"));
	assert_int_equal(g_n, 6);
	assert_true(g_ev[4].tombstone && g_ev[5].tombstone);
	assert_int_equal(inf_store_prune(f->s, t), 0); /* nothing left to prune */
	inf_store_get_stats(f->s, &st);
	assert_int_equal(st.filtered, 5);
	assert_int_equal(st.pruned, 2);
	assert_int_equal(shm_writer_check(f->a), 0);
}

/* A relist after the filter narrowed: the refused items are not remembered, so the copies the
 * arena still holds go at the commit; the filter widened ("other" now kept) stores them. */
static void test_filter_relist(void **state)
{
	struct fx *f = *state;
	uint16_t t = (uint16_t)f->pod_t;

	g_keep = "mine";
	inf_store_set_filter(f->s, NULL, NULL); /* no filter: everything */
	assert_int_equal(inf_store_replace_begin(f->s, t), 0);
	assert_int_equal(radd_r(f, pod_in("mine", "a", "u-a", "5")), 0);
	assert_int_equal(radd_r(f, pod_in("other", "b", "u-b", "6")), 0);
	assert_int_equal(inf_store_replace_commit(f->s, t, "10"), 0);
	assert_int_equal(inf_store_prune(f->s, t), 0); /* no filter: prune is a no-op */
	inf_store_set_filter(f->s, keep_one, NULL);
	g_n = 0;
	assert_int_equal(inf_store_replace_begin(f->s, t), 0);
	assert_int_equal(radd_r(f, pod_in("mine", "a", "u-a", "5")), 0);
	assert_int_equal(radd_r(f, pod_in("other", "b", "u-b", "6")), 1);
	assert_int_equal(inf_store_replace_commit(f->s, t, "11"), 0);
	assert_true(in_arena(f, "mine", "a"));
	assert_false(in_arena(f, "other", "b"));
	assert_int_equal(g_n, 2); /* the re-delivered "a", and "b"'s tombstone */
	assert_int_equal(g_ev[1].kind, INF_EVENT_DELETE);
	assert_true(g_ev[1].tombstone);
	/* widened (a range acquired: its relist) */
	g_keep = "other";
	assert_int_equal(inf_store_replace_begin(f->s, t), 0);
	assert_int_equal(radd_r(f, pod_in("mine", "a", "u-a", "5")), 1);
	assert_int_equal(radd_r(f, pod_in("other", "b", "u-b", "6")), 0);
	assert_int_equal(inf_store_replace_commit(f->s, t, "12"), 0);
	assert_false(in_arena(f, "mine", "a"));
	assert_true(in_arena(f, "other", "b"));
	assert_int_equal(shm_writer_check(f->a), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test_setup_teardown(test_events_after_arena, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_sync_epoch, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_replace_tombstones, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_drop, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_drop_retire_reuse, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_many_resources, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_owner_tristate, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_many_finalizers, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_pod_payload, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_rs_and_meta_payload, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_test_table_with_queue, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_warm_arena_other_format, setup, teardown),
	        cmocka_unit_test(test_filter_decision),
	        cmocka_unit_test_setup_teardown(test_filter_store, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_filter_relist, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
