/* SPDX-License-Identifier: Apache-2.0 */
/* Tests of the public controller API's functions (lib/api.c, include/kcmd/). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kcmd/kcmd.h"
#include "kube/model.h"
#include "shm/arena.h"
#include "shm/records.h"

static void test_keys(void **state)
{
	(void)state;
	char buf[32], ns[16], name[16];

	assert_int_equal(kcmd_key_make(buf, sizeof(buf), "default", "web"), 11);
	assert_string_equal(buf, "default/web");
	assert_int_equal(kcmd_key_make(buf, sizeof(buf), "", "node-1"), 6);
	assert_string_equal(buf, "node-1");
	assert_int_equal(kcmd_key_make(buf, sizeof(buf), NULL, "node-1"), 6);
	assert_int_equal(kcmd_key_make(buf, 4, "default", "web"), -ENAMETOOLONG);
	assert_string_equal(buf, "");

	assert_int_equal(kcmd_key_split("default/web", ns, sizeof(ns), name, sizeof(name)), 0);
	assert_string_equal(ns, "default");
	assert_string_equal(name, "web");
	assert_int_equal(kcmd_key_split("node-1", ns, sizeof(ns), name, sizeof(name)), 0);
	assert_string_equal(ns, "");
	assert_string_equal(name, "node-1");
	assert_int_equal(kcmd_key_split("a/b/c", ns, sizeof(ns), name, sizeof(name)), -EINVAL);
	assert_int_equal(
	        kcmd_key_split("a-very-long-namespace/b", ns, sizeof(ns), name, sizeof(name)),
	        -ENAMETOOLONG);
	assert_int_equal(kcmd_api_abi(), KCMD_CONTROLLER_ABI);
}

static void test_meta(void **state)
{
	(void)state;
	struct kube_kv labels[] = {{"app", "web"}, {"example.kcmd.io/configmap", "true"}};
	struct kube_owner_ref owners[] = {{"v1", "Namespace", "ns1", "uid-ns", 1, -1}};
	struct kube_object_meta m = {.name = "cm",
	                             .namespace = "ns1",
	                             .uid = "uid-cm",
	                             .resource_version = "7",
	                             .n_labels = 2,
	                             .labels = labels,
	                             .n_owner_refs = 1,
	                             .owner_refs = owners};
	struct kcmd_owner_ref r;

	assert_string_equal(kcmd_meta_name(&m), "cm");
	assert_string_equal(kcmd_meta_namespace(&m), "ns1");
	assert_string_equal(kcmd_meta_uid(&m), "uid-cm");
	assert_string_equal(kcmd_meta_resource_version(&m), "7");
	assert_string_equal(kcmd_meta_label(&m, "example.kcmd.io/configmap"), "true");
	assert_null(kcmd_meta_label(&m, "missing"));
	assert_false(kcmd_meta_deleting(&m));
	m.deletion_timestamp = 1;
	assert_true(kcmd_meta_deleting(&m));
	assert_int_equal(kcmd_meta_n_owners(&m), 1);
	assert_int_equal(kcmd_meta_owner(&m, 0, &r), 0);
	assert_string_equal(r.kind, "Namespace");
	assert_string_equal(r.uid, "uid-ns");
	assert_int_equal(r.controller, 1);
	assert_int_equal(r.block_owner_deletion, -1);
	assert_int_equal(kcmd_meta_owner(&m, 1, &r), -ENOENT);
	m.namespace = NULL;
	assert_string_equal(kcmd_meta_namespace(&m), "");
	assert_string_equal(kcmd_meta_name(NULL), "");
}

static int count_visit(const struct shm_obj *o, void *ud)
{
	(*(int *)ud)++;
	return strcmp(kcmd_obj_namespace(o), "ns1") == 0 ? 0 : -EBADE;
}

static void test_cache(void **state)
{
	(void)state;
	struct shm_arena *w, *rd;
	struct shm_obj *o = NULL;
	struct kcmd_owner_ref r;
	int fd, rfd, n = 0;

	assert_int_equal(shm_arena_create(NULL, &fd), 0);
	assert_int_equal(shm_writer_open(fd, &w), 0);
	int t = shm_writer_register_type(w,
	                                 &(struct shm_type_desc){.version = "v1",
	                                                         .resource = "configmaps",
	                                                         .kind = "ConfigMap",
	                                                         .record_kind = SHM_RECORD_META});
	assert_true(t >= 0);
	struct shm_label l[] = {{"k", "v"}};
	struct shm_owner_ref ow[] = {{"v1", "Namespace", "ns1", "uid-ns", 1, 0}};
	assert_int_equal(shm_writer_upsert(w, &(struct shm_record_in){.type = (uint16_t)t,
	                                                              .kind = SHM_RECORD_META,
	                                                              .ns = "ns1",
	                                                              .name = "cm",
	                                                              .uid = "uid-cm",
	                                                              .rv = "5",
	                                                              .labels = l,
	                                                              .n_labels = 1,
	                                                              .owners = ow,
	                                                              .n_owners = 1}),
	                 1);
	assert_int_equal(shm_arena_reader_fd(fd, &rfd), 0);
	assert_int_equal(shm_reader_open(rfd, &rd), 0);

	assert_int_equal(kcmd_cache_synced(rd, "", "configmaps"), 0);
	assert_int_equal(shm_writer_set_sync(w, (uint16_t)t, "5", true), 0);
	assert_int_equal(kcmd_cache_synced(rd, NULL, "configmaps"), 1);
	assert_int_equal(kcmd_cache_synced(rd, "", "secrets"), -ENOENT);

	assert_int_equal(kcmd_cache_get(rd, "", "configmaps", "ns1", "cm", &o), 0);
	assert_string_equal(kcmd_obj_name(o), "cm");
	assert_string_equal(kcmd_obj_namespace(o), "ns1");
	assert_string_equal(kcmd_obj_uid(o), "uid-cm");
	assert_string_equal(kcmd_obj_resource_version(o), "5");
	assert_string_equal(kcmd_obj_label(o, "k"), "v");
	assert_null(kcmd_obj_label(o, "x"));
	assert_int_equal(kcmd_obj_n_owners(o), 1);
	assert_int_equal(kcmd_obj_owner(o, 0, &r), 0);
	assert_string_equal(r.name, "ns1");
	assert_int_equal(r.block_owner_deletion, 0);
	assert_int_equal(kcmd_obj_owner(o, 1, &r), -ENOENT);
	kcmd_obj_free(o);
	kcmd_obj_free(NULL);
	o = NULL;
	assert_int_equal(kcmd_cache_get(rd, "", "configmaps", "ns2", "cm", &o), -ENOENT);
	assert_null(o);
	assert_int_equal(kcmd_cache_get(rd, "apps", "configmaps", "ns1", "cm", &o), -ENOENT);

	assert_int_equal(kcmd_cache_list(rd, "", "configmaps", NULL, count_visit, &n), 1);
	assert_int_equal(n, 1);
	assert_int_equal(kcmd_cache_list(rd, "", "configmaps", "ns2", count_visit, &n), 0);
	assert_int_equal(kcmd_cache_list(rd, "", "secrets", NULL, count_visit, &n), -ENOENT);

	shm_arena_close(rd);
	shm_arena_close(w);
	close(rfd);
	close(fd);
}

/* The acquisition barrier: in a worker (an epoch source set), a type listed before this kcmd
 * won its Lease is not synced; it is once informerd relisted it for the current epoch. */
static uint32_t g_epoch;
static uint32_t fake_epoch(void)
{
	return g_epoch;
}

static void test_cache_synced_epoch(void **state)
{
	(void)state;
	struct shm_arena *w, *rd;
	struct shm_type_info ti;
	int fd, rfd;

	assert_int_equal(shm_arena_create(NULL, &fd), 0);
	assert_int_equal(shm_writer_open(fd, &w), 0);
	int t = shm_writer_register_type(w,
	                                 &(struct shm_type_desc){.version = "v1",
	                                                         .resource = "pods",
	                                                         .kind = "Pod",
	                                                         .record_kind = SHM_RECORD_META});
	assert_true(t >= 0);
	assert_int_equal(shm_arena_reader_fd(fd, &rfd), 0);
	assert_int_equal(shm_reader_open(rfd, &rd), 0);
	/* synced by a standby's informerd (no epoch yet) */
	assert_int_equal(shm_writer_set_sync(w, (uint16_t)t, "10", true), 0);

	/* no epoch source (informerd, the manager, tools): the plain meaning */
	assert_int_equal(kcmd_cache_synced(rd, "", "pods"), 1);
	shm_reader_set_epoch_source(fake_epoch);
	g_epoch = 0; /* a source with no epoch published yet: the plain meaning too */
	assert_int_equal(kcmd_cache_synced(rd, "", "pods"), 1);
	/* negative control: epoch 5 began, the cache was listed before it */
	g_epoch = 5;
	assert_int_equal(kcmd_cache_synced(rd, "", "pods"), 0);
	assert_int_equal(shm_reader_type_info(rd, (uint16_t)t, &ti), 0);
	assert_false(ti.synced);
	assert_int_equal(ti.sync_epoch, 0);
	/* watch events keep the (old) epoch: still not synced */
	assert_int_equal(shm_writer_set_sync(w, (uint16_t)t, "11", true), 0);
	assert_int_equal(kcmd_cache_synced(rd, "", "pods"), 0);
	/* a relist of an earlier epoch does not count either */
	assert_int_equal(shm_writer_set_sync_epoch(w, (uint16_t)t, "12", true, 4), 0);
	assert_int_equal(kcmd_cache_synced(rd, "", "pods"), 0);
	/* the barrier relist of epoch 5 committed: synced, and later events keep it so */
	assert_int_equal(shm_writer_set_sync_epoch(w, (uint16_t)t, "20", true, 5), 0);
	assert_int_equal(kcmd_cache_synced(rd, "", "pods"), 1);
	assert_int_equal(shm_writer_set_sync(w, (uint16_t)t, "21", true), 0);
	assert_int_equal(kcmd_cache_synced(rd, "", "pods"), 1);
	assert_int_equal(shm_reader_type_info(rd, (uint16_t)t, &ti), 0);
	assert_int_equal(ti.sync_epoch, 5);
	assert_string_equal(ti.rv, "21");
	/* an epoch is no sync by itself: a type with its initial list not done stays 0 */
	assert_int_equal(shm_writer_set_sync_epoch(w, (uint16_t)t, "", false, 5), 0);
	assert_int_equal(kcmd_cache_synced(rd, "", "pods"), 0);
	/* the next acquisition (epoch 6) makes every type wait again */
	assert_int_equal(shm_writer_set_sync_epoch(w, (uint16_t)t, "30", true, 5), 0);
	g_epoch = 6;
	assert_int_equal(kcmd_cache_synced(rd, "", "pods"), 0);
	/* high epochs survive the flags word (32 bits) */
	g_epoch = 0xfffffffeu;
	assert_int_equal(shm_writer_set_sync_epoch(w, (uint16_t)t, "31", true, 0xfffffffeu), 0);
	assert_int_equal(kcmd_cache_synced(rd, "", "pods"), 1);
	shm_reader_set_epoch_source(NULL);
	g_epoch = 0;

	shm_arena_close(rd);
	shm_arena_close(w);
	close(rfd);
	close(fd);
}

static void test_queue_and_client_args(void **state)
{
	(void)state;
	struct inf_handler_ctx ctx = {0};

	/* no such queue: refused, never a crash */
	assert_int_equal(kcmd_queue_add(&ctx, 0, "k"), -EINVAL);
	assert_int_equal(kcmd_queue_add(NULL, 0, "k"), -EINVAL);
	assert_int_equal(kcmd_queue_add_after(&ctx, 3, "k", 1), -EINVAL);
	assert_int_equal(kcmd_queue_add_rate_limited(&ctx, 0, "k"), -EINVAL);
	/* a request without a client or with an unknown method is refused before any I/O */
	int code = 7;
	char *body = (char *)"x";
	assert_int_equal(kcmd_kube_request(NULL,
	                                   &(struct kcmd_request){.method = "GET",
	                                                          .version = "v1",
	                                                          .resource = "pods"},
	                                   &code, &body),
	                 -EINVAL);
	assert_int_equal(code, 0);
	assert_null(body);
	assert_string_equal(kcmd_kube_reason(-ENOENT), "NotFound");
	assert_string_equal(kcmd_kube_reason(-EEXIST), "AlreadyExists");
}

static void test_client_new(void **state)
{
	(void)state;
	struct kcmd_client *c = NULL;
	char err[256] = "";

	unsetenv("KUBECONFIG");
	assert_int_equal(kcmd_client_new(NULL, &c, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "KUBECONFIG"));
	assert_null(c);
	assert_true(kcmd_client_new("/nonexistent/kubeconfig", &c, err, sizeof(err)) < 0);
	assert_null(c);
	assert_null(kcmd_client_kube(NULL));
	kcmd_client_free(NULL);
}

/* appends one blob (u32 length, bytes, NUL) of the record format (shm/records.h) */
static size_t put_blob(uint8_t *b, size_t at, const char *s)
{
	uint32_t l = (uint32_t)strlen(s);
	memcpy(b + at, &l, 4);
	memcpy(b + at + 4, s, l + 1);
	return at + 4 + l + 1;
}

static void test_whole_object_cached(void **state)
{
	(void)state;
	static const char json[] = "{\"kind\":\"Widget\",\"spec\":{\"size\":3}}";
	uint8_t payload[512];
	struct shm_rec_hdr h = {.magic = SHM_REC_MAGIC,
	                        .kind = SHM_RECORD_OBJECT,
	                        .fixed_len = sizeof(struct shm_rec_object),
	                        .n_blobs = 7, /* apiVersion, kind, 2 annotation pairs, body */
	                        .n_finalizers = 0};
	struct shm_rec_object fo = {.body_format = SHM_REC_BODY_JSON, .n_annotations = 2};
	size_t at = 0;
	memcpy(payload, &h, sizeof(h));
	at += sizeof(h);
	memcpy(payload + at, &fo, sizeof(fo));
	at += sizeof(fo);
	at = put_blob(payload, at, "example.io/v1");
	at = put_blob(payload, at, "Widget");
	at = put_blob(payload, at, "a");
	at = put_blob(payload, at, "1");
	at = put_blob(payload, at, "example.kcmd.io/configmap");
	at = put_blob(payload, at, "cfg");
	at = put_blob(payload, at, json);

	struct shm_arena *w, *rd;
	struct shm_obj *o = NULL, *m = NULL;
	int fd, rfd;
	size_t len = 0;
	assert_int_equal(shm_arena_create(NULL, &fd), 0);
	assert_int_equal(shm_writer_open(fd, &w), 0);
	int t = shm_writer_register_type(w,
	                                 &(struct shm_type_desc){.group = "example.io",
	                                                         .version = "v1",
	                                                         .resource = "widgets",
	                                                         .kind = "Widget",
	                                                         .record_kind = SHM_RECORD_OBJECT});
	int tm = shm_writer_register_type(w,
	                                  &(struct shm_type_desc){.version = "v1",
	                                                          .resource = "configmaps",
	                                                          .kind = "ConfigMap",
	                                                          .record_kind = SHM_RECORD_META});
	assert_true(t >= 0 && tm >= 0);
	assert_int_equal(shm_writer_upsert(w, &(struct shm_record_in){.type = (uint16_t)t,
	                                                              .kind = SHM_RECORD_OBJECT,
	                                                              .ns = "ns1",
	                                                              .name = "w",
	                                                              .uid = "uid-w",
	                                                              .rv = "3",
	                                                              .payload = payload,
	                                                              .payload_len = at}),
	                 1);
	assert_int_equal(shm_writer_upsert(w, &(struct shm_record_in){.type = (uint16_t)tm,
	                                                              .kind = SHM_RECORD_META,
	                                                              .ns = "ns1",
	                                                              .name = "cm",
	                                                              .uid = "uid-cm",
	                                                              .rv = "4"}),
	                 1);
	assert_int_equal(shm_arena_reader_fd(fd, &rfd), 0);
	assert_int_equal(shm_reader_open(rfd, &rd), 0);
	assert_int_equal(kcmd_cache_get(rd, "example.io", "widgets", "ns1", "w", &o), 0);
	assert_string_equal(kcmd_obj_json(o, &len), json);
	assert_int_equal(len, sizeof(json) - 1);
	assert_string_equal(kcmd_obj_annotation(o, "example.kcmd.io/configmap"), "cfg");
	assert_string_equal(kcmd_obj_annotation(o, "a"), "1");
	assert_null(kcmd_obj_annotation(o, "b"));
	/* a metadata-only record has neither */
	assert_int_equal(kcmd_cache_get(rd, "", "configmaps", "ns1", "cm", &m), 0);
	assert_null(kcmd_obj_json(m, &len));
	assert_null(kcmd_obj_annotation(m, "a"));
	assert_null(kcmd_obj_json(NULL, NULL));
	kcmd_obj_free(o);
	kcmd_obj_free(m);
	shm_arena_close(rd);
	shm_arena_close(w);
	close(rfd);
	close(fd);
}

/* A ReplicaSet record's annotations (after its template parts and conditions) are readable too;
 * a record whose counts point past its blobs answers NULL, never a read outside it. */
static void test_replicaset_annotations(void **state)
{
	(void)state;
	uint8_t payload[512];
	struct shm_rec_hdr h = {.magic = SHM_REC_MAGIC,
	                        .kind = SHM_RECORD_REPLICASET,
	                        .fixed_len = sizeof(struct shm_rec_rs),
	                        /* selector error, template, its 4 parts, 2 annotation pairs */
	                        .n_blobs = 10};
	struct shm_rec_rs fr = {.n_annotations = 2};
	size_t at = 0;
	memcpy(payload, &h, sizeof(h));
	at += sizeof(h);
	memcpy(payload + at, &fr, sizeof(fr));
	at += sizeof(fr);
	for (int i = 0; i < 6; i++)
		at = put_blob(payload, at, "");
	at = put_blob(payload, at, "deployment.kubernetes.io/revision");
	at = put_blob(payload, at, "3");
	at = put_blob(payload, at, "team");
	at = put_blob(payload, at, "a");
	assert_int_equal(shm_rec_rs_first_annotation(&fr), 6);

	struct shm_arena *w, *rd;
	struct shm_obj *o = NULL;
	int fd, rfd;
	assert_int_equal(shm_arena_create(NULL, &fd), 0);
	assert_int_equal(shm_writer_open(fd, &w), 0);
	int t = shm_writer_register_type(
	        w, &(struct shm_type_desc){.group = "apps",
	                                   .version = "v1",
	                                   .resource = "replicasets",
	                                   .kind = "ReplicaSet",
	                                   .record_kind = SHM_RECORD_REPLICASET});
	assert_true(t >= 0);
	struct shm_record_in in = {.type = (uint16_t)t,
	                           .kind = SHM_RECORD_REPLICASET,
	                           .ns = "ns1",
	                           .name = "rs",
	                           .uid = "uid-rs",
	                           .rv = "3",
	                           .payload = payload,
	                           .payload_len = at};
	assert_int_equal(shm_writer_upsert(w, &in), 1);
	/* the same record claiming a third pair it does not hold */
	fr.n_annotations = 3;
	memcpy(payload + sizeof(h), &fr, sizeof(fr));
	in.name = "bad";
	in.uid = "uid-bad";
	assert_int_equal(shm_writer_upsert(w, &in), 1);
	assert_int_equal(shm_arena_reader_fd(fd, &rfd), 0);
	assert_int_equal(shm_reader_open(rfd, &rd), 0);
	assert_int_equal(kcmd_cache_get(rd, "apps", "replicasets", "ns1", "rs", &o), 0);
	assert_string_equal(kcmd_obj_annotation(o, "deployment.kubernetes.io/revision"), "3");
	assert_string_equal(kcmd_obj_annotation(o, "team"), "a");
	assert_null(kcmd_obj_annotation(o, "other"));
	assert_null(kcmd_obj_json(o, NULL)); /* no JSON: a typed record */
	kcmd_obj_free(o);
	assert_int_equal(kcmd_cache_get(rd, "apps", "replicasets", "ns1", "bad", &o), 0);
	assert_null(kcmd_obj_annotation(o, "other"));
	kcmd_obj_free(o);
	shm_arena_close(rd);
	shm_arena_close(w);
	close(rfd);
	close(fd);
}

static void test_whole_object_event(void **state)
{
	(void)state;
	struct kube_kv ann[] = {{"example.kcmd.io/configmap", "cfg"}};
	static const char json[] = "{\"kind\":\"Widget\",\"spec\":{\"size\":3}}";
	struct kube_object o = {.meta = {.name = "w",
	                                 .uid = "u",
	                                 .resource_version = "1",
	                                 .n_annotations = 1,
	                                 .annotations = ann},
	                        .api_version = "example.io/v1",
	                        .kind = "Widget",
	                        .raw = json,
	                        .raw_len = sizeof(json) - 1};
	struct inf_resource whole = {.group = "example.io",
	                             .version = "v1",
	                             .resource = "widgets",
	                             .kind = "Widget",
	                             .record_kind = KCMD_CACHE_OBJECT};
	struct inf_resource meta_only = whole;
	meta_only.record_kind = KCMD_CACHE_METADATA;
	struct inf_event ev = {.kind = INF_EVENT_ADD, .res = &whole, .obj = &o, .meta = &o.meta};
	size_t len = 0;

	assert_string_equal(kcmd_event_json(&ev, &len), json);
	assert_int_equal(len, sizeof(json) - 1);
	assert_string_equal(kcmd_event_json(&ev, NULL), json);
	assert_string_equal(kcmd_meta_annotation(ev.meta, "example.kcmd.io/configmap"), "cfg");
	assert_null(kcmd_meta_annotation(ev.meta, "other"));
	assert_null(kcmd_meta_annotation(NULL, "other"));
	ev.res = &meta_only; /* a metadata-only watch has no JSON */
	assert_null(kcmd_event_json(&ev, &len));
	ev.res = &whole;
	ev.kind = INF_EVENT_DELETE; /* a delete has no new object */
	ev.obj = NULL;
	ev.meta = NULL;
	assert_null(kcmd_event_json(&ev, &len));
	assert_null(kcmd_event_json(NULL, &len));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_keys),
	        cmocka_unit_test(test_meta),
	        cmocka_unit_test(test_cache),
	        cmocka_unit_test(test_cache_synced_epoch),
	        cmocka_unit_test(test_queue_and_client_args),
	        cmocka_unit_test(test_client_new),
	        cmocka_unit_test(test_whole_object_event),
	        cmocka_unit_test(test_whole_object_cached),
	        cmocka_unit_test(test_replicaset_annotations),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
