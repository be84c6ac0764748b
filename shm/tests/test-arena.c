/* SPDX-License-Identifier: Apache-2.0 */
/* shm/tests/test-arena.c - cmocka units for the arena: every operation, its documented errors,
 * recovery after a writer killed at each crash point, allocation failure at every call,
 * reclamation bounds, growth seen by an existing reader, and the consistency checker itself. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "shm/arena.h"
#include "shm/index.h"
#include "shm/records.h"
#include "shm/shm-internal.h"

struct fx {
	int fd;
	struct shm_arena *w;
	int pods, rs, cm;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct shm_create_opts o = {.max_size = UINT64_C(1) << 30, .initial_size = 1 << 20};
	assert_int_equal(shm_arena_create(&o, &f->fd), 0);
	assert_int_equal(shm_writer_open(f->fd, &f->w), 0);
	f->pods = shm_writer_register_type(
	        f->w, &(struct shm_type_desc){"", "v1", "pods", "Pod", SHM_RECORD_POD});
	f->rs = shm_writer_register_type(f->w, &(struct shm_type_desc){"apps", "v1", "replicasets",
	                                                               "ReplicaSet",
	                                                               SHM_RECORD_REPLICASET});
	f->cm = shm_writer_register_type(
	        f->w,
	        &(struct shm_type_desc){"", "v1", "configmaps", "ConfigMap", SHM_RECORD_META});
	assert_true(f->pods >= 0 && f->rs >= 0 && f->cm >= 0);
	shm__test_flags = 0;
	shm__test_fail_alloc_at = 0;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	shm_arena_close(f->w);
	close(f->fd);
	free(f);
	shm__test_flags = 0;
	shm__test_fail_alloc_at = 0;
	return 0;
}

static void mkuid(char out[37], unsigned n)
{
	snprintf(out, 37, "%08x-0000-4000-8000-%012x", n, n * 7u);
}

/* A pod as a ReplicaSet makes it. */
static int put_pod(struct fx *f, const char *ns, unsigned i, const char *rs_uid, unsigned rv,
                   size_t plen)
{
	char name[64], uid[37], rvs[24];
	snprintf(name, sizeof(name), "web-7d4b9c8f6d-%05u", i);
	mkuid(uid, i + 1000000);
	snprintf(rvs, sizeof(rvs), "%u", rv);
	struct shm_label labels[] = {{"app", "web"}, {"pod-template-hash", "7d4b9c8f6d"}};
	struct shm_owner_ref own = {"apps/v1", "ReplicaSet", "web-7d4b9c8f6d", rs_uid, true, true};
	uint8_t payload[4096];
	for (size_t k = 0; k < plen && k < sizeof(payload); k++)
		payload[k] = (uint8_t)(i + k + rv);
	struct shm_record_in r = {.type = (uint16_t)f->pods,
	                          .kind = SHM_RECORD_POD,
	                          .ns = ns,
	                          .name = name,
	                          .uid = uid,
	                          .rv = rvs,
	                          .labels = labels,
	                          .n_labels = 2,
	                          .owners = rs_uid ? &own : NULL,
	                          .n_owners = rs_uid ? 1 : 0,
	                          .payload = payload,
	                          .payload_len = plen};
	return shm_writer_upsert(f->w, &r);
}

/* ---- open / create
 * ------------------------------------------------------------------------------- */
static void test_create_errors(void **state)
{
	(void)state;
	int fd;
	assert_int_equal(shm_arena_create(NULL, NULL), -EINVAL);
	assert_int_equal(shm_arena_create(&(struct shm_create_opts){.max_size = 4096}, &fd),
	                 -EINVAL);
	assert_int_equal(
	        shm_arena_create(&(struct shm_create_opts){.max_size = UINT64_C(1) << 40}, &fd),
	        -EINVAL);
	assert_int_equal(shm_arena_create(&(struct shm_create_opts){.max_size = 1 << 20,
	                                                            .initial_size = 2 << 20},
	                                  &fd),
	                 -EINVAL);
	/* not an arena */
	int m = memfd_create("junk", MFD_CLOEXEC);
	assert_true(m >= 0);
	assert_int_equal(ftruncate(m, 1 << 20), 0);
	struct shm_arena *a;
	assert_int_equal(shm_reader_open(m, &a), -EBADMSG);
	assert_int_equal(shm_writer_open(m, &a), -EBADMSG);
	uint32_t v;
	assert_int_equal(shm_arena_version(m, &v), -EBADMSG);
	close(m);
	assert_int_equal(shm_reader_open(-1, &a), -EINVAL);
}

static void test_version_mismatch(void **state)
{
	struct fx *f = *state;
	int fd;
	assert_int_equal(shm_arena_create(NULL, &fd), 0);
	uint32_t v = SHM_ABI_VERSION + 1;
	assert_int_equal(pwrite(fd, &v, sizeof(v), offsetof(struct shm_abi_header, version)),
	                 (ssize_t)sizeof(v));
	struct shm_arena *a;
	assert_int_equal(shm_reader_open(fd, &a), -EPROTONOSUPPORT);
	assert_int_equal(shm_writer_open(fd, &a), -EPROTONOSUPPORT);
	uint32_t got = 0;
	assert_int_equal(shm_arena_version(fd, &got), 0);
	assert_int_equal(got, SHM_ABI_VERSION + 1);
	assert_int_equal(shm_arena_version(-1, &got), -EINVAL);
	/* an arena of the previous layout (3: the resource table inline in the header) is
	 * refused the same way: never read with this layout */
	v = SHM_ABI_VERSION - 1;
	assert_int_equal(pwrite(fd, &v, sizeof(v), offsetof(struct shm_abi_header, version)),
	                 (ssize_t)sizeof(v));
	assert_int_equal(shm_reader_open(fd, &a), -EPROTONOSUPPORT);
	assert_int_equal(shm_writer_open(fd, &a), -EPROTONOSUPPORT);
	close(fd);
	(void)f;
}

static void test_single_writer_and_ro_fd(void **state)
{
	struct fx *f = *state;
	struct shm_arena *a2;
	assert_int_equal(shm_writer_open(f->fd, &a2), -EBUSY);
	int ro;
	assert_int_equal(shm_arena_reader_fd(f->fd, &ro), 0);
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, ro, 0);
	assert_true(p == MAP_FAILED && errno == EACCES);
	struct shm_arena *r;
	assert_int_equal(shm_reader_open(ro, &r), 0);
	/* writer calls on a reader mapping are refused */
	assert_int_equal(shm_writer_delete(r, 0, "a", "b"), -EPERM);
	assert_int_equal(shm_writer_check(r), -EPERM);
	shm_arena_close(r);
	close(ro);
	/* the lock goes with the writer */
	shm_arena_close(f->w);
	assert_int_equal(shm_writer_open(f->fd, &f->w), 0);
	/* sealed against shrinking */
	assert_true(ftruncate(f->fd, 4096) < 0);
}

/* ---- resource table
 * ------------------------------------------------------------------------------ */
static void test_register_type(void **state)
{
	struct fx *f = *state;
	assert_int_equal(
	        shm_writer_register_type(
	                f->w, &(struct shm_type_desc){"", "v1", "pods", "Pod", SHM_RECORD_POD}),
	        f->pods);
	assert_int_equal(
	        shm_writer_register_type(
	                f->w, &(struct shm_type_desc){"", "v1", "pods", "Pods", SHM_RECORD_POD}),
	        -EEXIST);
	assert_int_equal(
	        shm_writer_register_type(
	                f->w, &(struct shm_type_desc){"", "v1", "pods", "Pod", SHM_RECORD_META}),
	        -EEXIST);
	assert_int_equal(shm_writer_register_type(f->w, NULL), -EINVAL);
	assert_int_equal(
	        shm_writer_register_type(f->w, &(struct shm_type_desc){"", "", "x", "X", 0}),
	        -EINVAL);
	char longs[80];
	memset(longs, 'a', 79);
	longs[79] = 0;
	assert_int_equal(
	        shm_writer_register_type(f->w, &(struct shm_type_desc){"", "v1", longs, "X", 0}),
	        -ENAMETOOLONG);
	/* T3: an id whose chunk was never published is unknown, not a crash */
	struct shm_type_info ti;
	assert_int_equal(shm_reader_type_info(f->w, (uint16_t)(SHM_ABI_MAX_TYPES - 1), &ti),
	                 -EINVAL);
	assert_int_equal(shm_reader_type_info(f->w, SHM_ABI_TCHUNK_SLOTS, &ti), -EINVAL);
	assert_int_equal(shm_reader_list(f->w, SHM_ABI_TCHUNK_SLOTS, NULL, NULL), -EINVAL);
	assert_int_equal(shm_reader_get(f->w, SHM_ABI_TCHUNK_SLOTS, "", "x", &(struct shm_obj){0}),
	                 -EINVAL);
	int n = 3;
	for (; n < (int)SHM_ABI_MAX_TYPES; n++) {
		char res[32];
		snprintf(res, sizeof(res), "things%d", n);
		assert_int_equal(
		        shm_writer_register_type(
		                f->w, &(struct shm_type_desc){"x.io", "v1", res, "Thing", 0}),
		        n);
	}
	assert_int_equal(shm_writer_register_type(
	                         f->w, &(struct shm_type_desc){"x.io", "v1", "more", "Thing", 0}),
	                 -ENOSPC);
	assert_int_equal(shm_reader_find_type(f->w, "apps", "v1", "replicasets"), f->rs);
	assert_int_equal(shm_reader_find_type(f->w, NULL, "v1", "pods"), f->pods);
	assert_int_equal(shm_reader_find_type(f->w, "apps", "v1", "deployments"), -ENOENT);
	assert_int_equal(shm_reader_find_type(f->w, "x.io", "v1", "things65535"), 65535);
	assert_int_equal(shm_reader_type_info(f->w, (uint16_t)f->rs, &ti), 0);
	assert_string_equal(ti.group, "apps");
	assert_string_equal(ti.kind, "ReplicaSet");
	assert_int_equal(ti.record_kind, SHM_RECORD_REPLICASET);
	assert_string_equal(ti.rv, "");
	assert_false(ti.synced);
	assert_int_equal(shm_reader_type_info(f->w, (uint16_t)(SHM_ABI_MAX_TYPES - 1), &ti), 0);
	assert_string_equal(ti.resource, "things65535");
	/* reader-side argument errors */
	assert_int_equal(shm_reader_type_info(f->w, (uint16_t)f->rs, NULL), -EINVAL);
	assert_int_equal(shm_reader_find_type(f->w, "", NULL, "pods"), -EINVAL);
	assert_int_equal(shm_reader_stats(f->w, NULL), -EINVAL);
	assert_int_equal(shm_reader_stats(NULL, &(struct shm_stats){0}), -EINVAL);
	assert_int_equal(shm_reader_get_uid(f->w, NULL, &(struct shm_obj){0}), -EINVAL);
	assert_int_equal(shm_reader_change_seq(NULL), 0);
	int ro;
	assert_int_equal(shm_arena_reader_fd(-1, &ro), -EINVAL);
	assert_int_equal(shm_writer_register_type(NULL, NULL), -EPERM);
	/* every change moves the change counter */
	uint64_t c0 = shm_reader_change_seq(f->w);
	assert_int_equal(shm_writer_set_sync(f->w, (uint16_t)f->rs, "1", false), 0);
	assert_true(shm_reader_change_seq(f->w) > c0);
}

static void test_sync_latch(void **state)
{
	struct fx *f = *state;
	struct shm_type_info ti;
	assert_int_equal(shm_writer_set_sync(f->w, (uint16_t)f->pods, "12345", false), 0);
	assert_int_equal(shm_reader_type_info(f->w, (uint16_t)f->pods, &ti), 0);
	assert_string_equal(ti.rv, "12345");
	assert_false(ti.synced);
	assert_int_equal(shm_writer_set_sync(f->w, (uint16_t)f->pods, "12399", true), 0);
	assert_int_equal(shm_reader_type_info(f->w, (uint16_t)f->pods, &ti), 0);
	assert_string_equal(ti.rv, "12399");
	assert_true(ti.synced);
	char longrv[80];
	memset(longrv, '9', 79);
	longrv[79] = 0;
	assert_int_equal(shm_writer_set_sync(f->w, (uint16_t)f->pods, longrv, true), -ENAMETOOLONG);
	assert_int_equal(shm_writer_set_sync(f->w, 60, "1", true), -EINVAL);
	/* survives a writer restart */
	shm_arena_close(f->w);
	assert_int_equal(shm_writer_open(f->fd, &f->w), 0);
	assert_int_equal(shm_reader_type_info(f->w, (uint16_t)f->pods, &ti), 0);
	assert_string_equal(ti.rv, "12399");
	assert_true(ti.synced);
}

/* ---- objects
 * ---------------------------------------------------------------------------------------- */
static void test_upsert_get(void **state)
{
	struct fx *f = *state;
	const char *rsuid = "aaaaaaaa-0000-4000-8000-000000000001";
	assert_int_equal(put_pod(f, "default", 1, rsuid, 10, 40), 1);
	assert_int_equal(put_pod(f, "default", 1, rsuid, 11, 48), 0);
	struct shm_obj o = SHM_OBJ_INIT;
	assert_int_equal(
	        shm_reader_get(f->w, (uint16_t)f->pods, "default", "web-7d4b9c8f6d-00001", &o), 0);
	assert_string_equal(o.ns, "default");
	assert_string_equal(o.name, "web-7d4b9c8f6d-00001");
	assert_string_equal(o.rv, "11");
	char uid[37];
	mkuid(uid, 1000001);
	assert_string_equal(o.uid, uid);
	assert_int_equal(o.kind, SHM_RECORD_POD);
	assert_int_equal(o.type, f->pods);
	assert_int_equal(o.n_labels, 2);
	assert_string_equal(shm_obj_label(&o, "app"), "web");
	assert_string_equal(shm_obj_label(&o, "pod-template-hash"), "7d4b9c8f6d");
	assert_null(shm_obj_label(&o, "nope"));
	assert_int_equal(o.n_owners, 1);
	const struct shm_owner_ref *c = shm_obj_controller(&o);
	assert_non_null(c);
	assert_string_equal(c->uid, rsuid);
	assert_string_equal(c->kind, "ReplicaSet");
	assert_string_equal(c->api_version, "apps/v1");
	assert_string_equal(c->name, "web-7d4b9c8f6d");
	assert_int_equal(c->block_owner_deletion, 1);
	assert_int_equal(c->controller, 1);
	assert_int_equal(o.payload_len, 48);
	for (size_t k = 0; k < 48; k++)
		assert_int_equal(((const uint8_t *)o.payload)[k], (uint8_t)(1 + k + 11));
	/* by uid */
	assert_int_equal(shm_reader_get_uid(f->w, uid, &o), 0);
	assert_string_equal(o.name, "web-7d4b9c8f6d-00001");
	assert_int_equal(shm_reader_get_uid(f->w, "nope", &o), -ENOENT);
	/* misses */
	assert_int_equal(
	        shm_reader_get(f->w, (uint16_t)f->pods, "other", "web-7d4b9c8f6d-00001", &o),
	        -ENOENT);
	assert_int_equal(
	        shm_reader_get(f->w, (uint16_t)f->rs, "default", "web-7d4b9c8f6d-00001", &o),
	        -ENOENT);
	assert_int_equal(shm_reader_get(f->w, 50, "default", "x", &o), -EINVAL);
	assert_int_equal(shm_reader_get(f->w, (uint16_t)f->pods, "default", NULL, &o), -EINVAL);
	/* a reader on its own mapping sees the same */
	struct shm_arena *r;
	assert_int_equal(shm_reader_open(f->fd, &r), 0);
	assert_int_equal(
	        shm_reader_get(r, (uint16_t)f->pods, "default", "web-7d4b9c8f6d-00001", &o), 0);
	assert_string_equal(o.rv, "11");
	shm_arena_close(r);
	shm_obj_release(&o);
	assert_int_equal(shm_writer_check(f->w), 0);
}

static void test_cluster_scoped_and_string_uid(void **state)
{
	struct fx *f = *state;
	struct shm_record_in r = {
	        .type = (uint16_t)f->cm, .name = "cfg", .uid = "not-a-uuid", .rv = "7"};
	assert_int_equal(shm_writer_upsert(f->w, &r), 1);
	struct shm_obj o = SHM_OBJ_INIT;
	assert_int_equal(shm_reader_get(f->w, (uint16_t)f->cm, NULL, "cfg", &o), 0);
	assert_string_equal(o.ns, "");
	assert_string_equal(o.uid, "not-a-uuid");
	assert_int_equal(o.n_labels, 0);
	assert_int_equal(o.n_owners, 0);
	assert_int_equal(o.payload_len, 0);
	assert_int_equal(shm_reader_get_uid(f->w, "not-a-uuid", &o), 0);
	/* upper-case UUIDs are kept as strings (exact round trip) */
	r.name = "cfg2";
	r.uid = "AAAAAAAA-0000-4000-8000-000000000001";
	assert_int_equal(shm_writer_upsert(f->w, &r), 1);
	assert_int_equal(shm_reader_get(f->w, (uint16_t)f->cm, "", "cfg2", &o), 0);
	assert_string_equal(o.uid, "AAAAAAAA-0000-4000-8000-000000000001");
	shm_obj_release(&o);
	assert_int_equal(shm_writer_check(f->w), 0);
}

static void test_owner_tristate(void **state)
{
	struct fx *f = *state;
	struct shm_owner_ref own[] = {{"v1", "ConfigMap", "a", "uid-a", -1, -1},
	                              {"v1", "ConfigMap", "b", "uid-b", 0, 0},
	                              {"v1", "ConfigMap", "c", "uid-c", 0, 1}};
	struct shm_record_in r = {.type = (uint16_t)f->cm,
	                          .ns = "t",
	                          .name = "x",
	                          .uid = "u",
	                          .rv = "1",
	                          .owners = own,
	                          .n_owners = 3};
	assert_int_equal(shm_writer_upsert(f->w, &r), 1);
	struct shm_obj o = SHM_OBJ_INIT;
	assert_int_equal(shm_reader_get(f->w, (uint16_t)f->cm, "t", "x", &o), 0);
	assert_int_equal(o.n_owners, 3);
	assert_int_equal(o.owners[0].controller, -1);
	assert_int_equal(o.owners[0].block_owner_deletion, -1);
	assert_int_equal(o.owners[1].controller, 0);
	assert_int_equal(o.owners[1].block_owner_deletion, 0);
	assert_int_equal(o.owners[2].controller, 0);
	assert_int_equal(o.owners[2].block_owner_deletion, 1);
	assert_null(shm_obj_controller(&o));
	/* no controller: an orphan of its namespace, and a dependent of every owner */
	assert_int_equal(
	        shm_reader_list_controlled(f->w, (uint16_t)f->cm, "uid-a", "t", NULL, NULL), 1);
	assert_int_equal(
	        shm_reader_list_controlled(f->w, (uint16_t)f->cm, "uid-a", NULL, NULL, NULL), 0);
	assert_int_equal(shm_reader_list_dependents(f->w, "uid-b", NULL, NULL), 1);
	/* out-of-range tri-state values are refused */
	own[0].controller = 2;
	r.name = "y";
	assert_int_equal(shm_writer_upsert(f->w, &r), -EINVAL);
	shm_obj_release(&o);
	assert_int_equal(shm_writer_check(f->w), 0);
}

static void test_upsert_invalid(void **state)
{
	struct fx *f = *state;
	struct shm_record_in ok = {
	        .type = (uint16_t)f->cm, .ns = "n", .name = "x", .uid = "u", .rv = "1"};
	struct shm_record_in r;
	assert_int_equal(shm_writer_upsert(f->w, NULL), -EINVAL);
	r = ok, r.name = NULL;
	assert_int_equal(shm_writer_upsert(f->w, &r), -EINVAL);
	r = ok, r.name = "";
	assert_int_equal(shm_writer_upsert(f->w, &r), -EINVAL);
	r = ok, r.uid = NULL;
	assert_int_equal(shm_writer_upsert(f->w, &r), -EINVAL);
	r = ok, r.rv = NULL;
	assert_int_equal(shm_writer_upsert(f->w, &r), -EINVAL);
	r = ok, r.type = 40;
	assert_int_equal(shm_writer_upsert(f->w, &r), -EINVAL);
	r = ok, r.payload_len = 3;
	assert_int_equal(shm_writer_upsert(f->w, &r), -EINVAL);
	r = ok, r.kind = SHM_RECORD_POD; /* configmaps were registered as metadata-only */
	assert_int_equal(shm_writer_upsert(f->w, &r), -EINVAL);
	/* T1: a uid or resourceVersion over 65535 bytes is refused (the apiserver writes both:
	 * 36 and at most 20 bytes); 255 was the old bound and is fine now (test_apiserver_shapes)
	 */
	char *big = malloc(70000);
	memset(big, '1', 69999);
	big[69999] = 0;
	r = ok, r.rv = big;
	assert_int_equal(shm_writer_upsert(f->w, &r), -E2BIG);
	r = ok, r.uid = big;
	assert_int_equal(shm_writer_upsert(f->w, &r), -E2BIG);
	free(big);
	struct shm_label dup[] = {{"a", "1"}, {"a", "2"}};
	r = ok, r.labels = dup, r.n_labels = 2;
	assert_int_equal(shm_writer_upsert(f->w, &r), -EINVAL);
	struct shm_label nul[] = {{"a", NULL}};
	r = ok, r.labels = nul, r.n_labels = 1;
	assert_int_equal(shm_writer_upsert(f->w, &r), -EINVAL);
	struct shm_owner_ref bad = {"v1", "X", "n", "", true, false};
	r = ok, r.owners = &bad, r.n_owners = 1;
	assert_int_equal(shm_writer_upsert(f->w, &r), -EINVAL);
	assert_int_equal(shm_writer_delete(f->w, (uint16_t)f->cm, "n", NULL), -EINVAL);
	assert_int_equal(shm_writer_delete(f->w, 44, "n", "x"), -EINVAL);
	/* nothing leaked: the arena holds no object and passes the check */
	struct shm_stats st;
	assert_int_equal(shm_reader_stats(f->w, &st), 0);
	assert_int_equal(st.objects, 0);
	assert_int_equal(st.live_bytes, 0 + st.live_bytes); /* readable */
	assert_int_equal(shm_writer_check(f->w), 0);
	struct shm_obj o = SHM_OBJ_INIT;
	assert_int_equal(shm_reader_get(f->w, (uint16_t)f->cm, "n", "x", &o), -ENOENT);
}

/* Issue 21 (T1): shapes the apiserver accepts and the arena refused before: 300 owner
 * references (the apiserver bounds only the object's size), owner-reference strings over 255
 * bytes, a name over 255 bytes, 5,000 labels, a 300-byte uid and resourceVersion. Everything
 * reads back exactly, the owner index finds the object under each of its 300 owners, and
 * controller / blockOwnerDeletion keep absent (-1) apart from false (0) and true (1). */
static void test_apiserver_shapes(void **state)
{
	struct fx *f = *state;
	enum { NOWN = 300, NLAB = 5000 };
	struct shm_owner_ref *own = calloc(NOWN, sizeof(*own));
	char(*uids)[40] = calloc(NOWN, sizeof(*uids));
	char *longname = malloc(1001), *longkind = malloc(401), *longav = malloc(301);
	memset(longname, 'n', 1000), longname[1000] = 0;
	memset(longkind, 'K', 400), longkind[400] = 0;
	memset(longav, 'g', 290), memcpy(longav + 290, ".io/v1beta", 11);
	for (unsigned i = 0; i < NOWN; i++) {
		mkuid(uids[i], 500000 + i);
		own[i] = (struct shm_owner_ref){.api_version = i == 7 ? longav : "apps/v1",
		                                .kind = i == 8 ? longkind : "ReplicaSet",
		                                .name = i == 9 ? longname : "owner",
		                                .uid = uids[i],
		                                .controller = (int8_t)((int)(i % 3) - 1),
		                                .block_owner_deletion =
		                                        (int8_t)((int)((i / 3) % 3) - 1)};
	}
	own[0].controller = 1; /* one controller, as the apiserver requires at most one */
	for (unsigned i = 1; i < NOWN; i++)
		if (own[i].controller == 1)
			own[i].controller = 0;
	struct shm_label *lab = calloc(NLAB, sizeof(*lab));
	char(*keys)[24] = calloc(NLAB, sizeof(*keys));
	for (unsigned i = 0; i < NLAB; i++) {
		snprintf(keys[i], sizeof(keys[i]), "k%05u", NLAB - i);
		lab[i] = (struct shm_label){keys[i], "v"};
	}
	char uid[301], rv[301];
	memset(uid, 'u', 300), uid[300] = 0;
	memset(rv, '9', 300), rv[300] = 0;
	struct shm_record_in r = {.type = (uint16_t)f->cm,
	                          .kind = SHM_RECORD_META,
	                          .ns = "n",
	                          .name = longname,
	                          .uid = uid,
	                          .rv = rv,
	                          .labels = lab,
	                          .n_labels = NLAB,
	                          .owners = own,
	                          .n_owners = NOWN};
	assert_int_equal(shm_writer_upsert(f->w, &r), 1);
	struct shm_obj o = SHM_OBJ_INIT;
	assert_int_equal(shm_reader_get(f->w, (uint16_t)f->cm, "n", longname, &o), 0);
	assert_string_equal(o.uid, uid);
	assert_string_equal(o.rv, rv);
	assert_int_equal(o.n_labels, NLAB);
	assert_string_equal(shm_obj_label(&o, "k00001"), "v");
	assert_int_equal(o.n_owners, NOWN);
	for (unsigned i = 0; i < NOWN; i++) {
		assert_string_equal(o.owners[i].uid, uids[i]);
		assert_string_equal(o.owners[i].api_version, own[i].api_version);
		assert_string_equal(o.owners[i].kind, own[i].kind);
		assert_string_equal(o.owners[i].name, own[i].name);
		assert_int_equal(o.owners[i].controller, own[i].controller);
		assert_int_equal(o.owners[i].block_owner_deletion, own[i].block_owner_deletion);
	}
	/* the three tri-state values all occur, absent among them */
	assert_int_equal(o.owners[1].controller, 0);
	assert_int_equal(o.owners[3].controller, -1);
	assert_int_equal(o.owners[0].block_owner_deletion, -1);
	assert_int_equal(o.owners[3].block_owner_deletion, 0);
	assert_ptr_equal(shm_obj_controller(&o), &o.owners[0]);
	shm_obj_release(&o);
	/* the dependents index holds every edge, the last owner's included */
	unsigned hits = 0;
	for (unsigned i = 0; i < NOWN; i += 299) {
		int count_fn(const struct shm_obj *x, void *ud);
		assert_int_equal(shm_reader_list_dependents(f->w, uids[i], count_fn, &hits), 1);
	}
	assert_int_equal(hits, 2);
	assert_int_equal(shm_writer_check(f->w), 0);
	/* and a writer restart (recovery) keeps it */
	shm_arena_close(f->w);
	assert_int_equal(shm_writer_open(f->fd, &f->w), 0);
	assert_int_equal(shm_writer_check(f->w), 0);
	assert_int_equal(shm_reader_get(f->w, (uint16_t)f->cm, "n", longname, &o), 0);
	assert_int_equal(o.n_owners, NOWN);
	shm_obj_release(&o);
	free(own), free(uids), free(longname), free(longkind), free(longav), free(lab), free(keys);
}

int count_fn(const struct shm_obj *x, void *ud)
{
	(void)x;
	(*(unsigned *)ud)++;
	return 0;
}

/* Issue 21 (T2): 2,500 CRDs created and deleted through a table of SHM_ABI_MAX_TYPES slots:
 * each registration reuses a retired slot under a new generation; a reader that resolved the
 * old (id, gen) sees that the slot and the records in it are another resource's now. */
static void test_types_retired_and_reused(void **state)
{
	struct fx *f = *state;
	char res[32], name[32];
	int prev = -1;
	uint32_t prev_gen = 0;
	for (unsigned i = 0; i < 2500; i++) {
		snprintf(res, sizeof(res), "crd%u", i);
		int t = shm_writer_register_type(
		        f->w, &(struct shm_type_desc){"x.io", "v1", res, "Crd", 0});
		assert_true(t >= 0);
		struct shm_type_info ti;
		assert_int_equal(shm_reader_type_info(f->w, (uint16_t)t, &ti), 0);
		assert_string_equal(ti.resource, res);
		assert_false(ti.synced); /* a reused slot does not inherit "synced" */
		assert_int_equal(ti.count, 0);
		if (prev >= 0) {
			/* the slot retired last is the lowest free one: reused at once */
			assert_int_equal(t, prev);
			assert_int_not_equal(ti.gen, prev_gen);
		}
		snprintf(name, sizeof(name), "o%u", i);
		struct shm_record_in r = {.type = (uint16_t)t,
		                          .kind = SHM_RECORD_META,
		                          .ns = "n",
		                          .name = name,
		                          .uid = "u",
		                          .rv = "1"};
		assert_int_equal(shm_writer_upsert(f->w, &r), 1);
		assert_int_equal(shm_writer_set_sync(f->w, (uint16_t)t, "5", true), 0);
		struct shm_obj o = SHM_OBJ_INIT;
		assert_int_equal(shm_reader_get(f->w, (uint16_t)t, "n", name, &o), 0);
		assert_int_equal(o.type_gen, ti.gen);
		shm_obj_release(&o);
		/* objects left: not retired */
		assert_int_equal(shm_writer_retire_type(f->w, (uint16_t)t), -EBUSY);
		assert_int_equal(shm_writer_delete(f->w, (uint16_t)t, "n", name), 0);
		assert_int_equal(shm_writer_retire_type(f->w, (uint16_t)t), 0);
		assert_int_equal(shm_reader_find_type(f->w, "x.io", "v1", res), -ENOENT);
		assert_int_equal(shm_reader_type_info(f->w, (uint16_t)t, &ti), -EINVAL);
		assert_int_equal(shm_writer_retire_type(f->w, (uint16_t)t), -EINVAL);
		prev = t;
		prev_gen = ti.gen;
	}
	/* a reader holding crd0's (id, gen) against the slot's current occupant */
	snprintf(res, sizeof(res), "crd-after");
	int t = shm_writer_register_type(f->w,
	                                 &(struct shm_type_desc){"x.io", "v1", res, "Crd", 0});
	assert_int_equal(t, prev);
	struct shm_record_in r = {.type = (uint16_t)t,
	                          .kind = SHM_RECORD_META,
	                          .ns = "n",
	                          .name = "o0",
	                          .uid = "u",
	                          .rv = "1"};
	assert_int_equal(shm_writer_upsert(f->w, &r), 1);
	struct shm_obj o = SHM_OBJ_INIT;
	assert_int_equal(shm_reader_get(f->w, (uint16_t)t, "n", "o0", &o), 0);
	assert_int_not_equal(o.type_gen, 1); /* crd0 was gen 1 of the slot: not its object */
	shm_obj_release(&o);
	/* fill the table with live types: still -ENOSPC beyond SHM_ABI_MAX_TYPES at once */
	unsigned live = 0;
	struct shm_stats st;
	for (unsigned i = 0;; i++) {
		snprintf(res, sizeof(res), "fill%u", i);
		int x = shm_writer_register_type(
		        f->w, &(struct shm_type_desc){"y.io", "v1", res, "F", 0});
		if (x == -ENOSPC)
			break;
		assert_true(x >= 0);
		live++;
	}
	assert_int_equal(shm_reader_stats(f->w, &st), 0);
	assert_int_equal(st.n_types, SHM_ABI_MAX_TYPES);
	assert_int_equal(live + 4, SHM_ABI_MAX_TYPES); /* pods, rs, cm, crd-after */
	assert_int_equal(shm_writer_check(f->w), 0);
	/* recovery keeps the generations and drops nothing */
	shm_arena_close(f->w);
	assert_int_equal(shm_writer_open(f->fd, &f->w), 0);
	assert_int_equal(shm_writer_check(f->w), 0);
	assert_int_equal(shm_reader_get(f->w, (uint16_t)t, "n", "o0", &o), 0);
	shm_obj_release(&o);
	assert_int_equal(shm_reader_find_type(f->w, "x.io", "v1", "crd-after"), t);
}

/* Issue 21 (T3): thousands of resources served at once, well past the 1,024 entries the table
 * had when it lived in the header: each id reads back through the writer's mapping and a
 * read-only reader's, across chunk boundaries, and after a writer restart (recovery). */
static void check_many_types(struct shm_arena *a, unsigned from, unsigned to)
{
	char res[32];
	for (unsigned i = from; i < to; i++) {
		snprintf(res, sizeof(res), "kind%u", i);
		int t = shm_reader_find_type(a, "many.io", "v1", res);
		assert_true(t >= 0);
		struct shm_type_info ti;
		assert_int_equal(shm_reader_type_info(a, (uint16_t)t, &ti), 0);
		assert_string_equal(ti.resource, res);
		assert_string_equal(ti.group, "many.io");
		assert_string_equal(ti.kind, "Many");
		char rv[16];
		snprintf(rv, sizeof(rv), "%u", 7 * i);
		assert_string_equal(ti.rv, rv);
		assert_int_equal(ti.count, 1);
		struct shm_obj o = SHM_OBJ_INIT;
		assert_int_equal(shm_reader_get(a, (uint16_t)t, "ns", res, &o), 0);
		assert_int_equal(o.type, (uint16_t)t);
		assert_int_equal(o.type_gen, ti.gen);
		shm_obj_release(&o);
	}
}

/* shm_reader_find_type remembers where it found a resource; the hint must never outlive the
 * registration: a resource retired and registered again in another slot, and another resource
 * moved into its old slot, are found where they are now, by the writer's mapping and by a
 * reader's (each has its own hints). */
static void test_find_type_hints_follow_slots(void **state)
{
	struct fx *f = *state;
	int ro;
	struct shm_arena *r;
	assert_int_equal(shm_arena_reader_fd(f->fd, &ro), 0);
	assert_int_equal(shm_reader_open(ro, &r), 0);
	struct shm_arena *who[2] = {f->w, r};
	enum { N = 200 };
	char res[32];
	int ids[N];
	for (unsigned i = 0; i < N; i++) {
		snprintf(res, sizeof(res), "h%u", i);
		ids[i] = shm_writer_register_type(
		        f->w, &(struct shm_type_desc){"hint.io", "v1", res, "H", 0});
		assert_true(ids[i] >= 0);
	}
	for (unsigned k = 0; k < 2; k++)
		for (unsigned i = 0; i < N; i++) {
			snprintf(res, sizeof(res), "h%u", i);
			assert_int_equal(shm_reader_find_type(who[k], "hint.io", "v1", res),
			                 ids[i]);
			/* twice: the second answer comes from the hint */
			assert_int_equal(shm_reader_find_type(who[k], "hint.io", "v1", res),
			                 ids[i]);
		}
	/* h0 and h1 retired; "moved" takes h0's slot (the lowest free one), h0 comes back in
	 * h1's */
	assert_int_equal(shm_writer_retire_type(f->w, (uint16_t)ids[0]), 0);
	assert_int_equal(shm_writer_retire_type(f->w, (uint16_t)ids[1]), 0);
	for (unsigned k = 0; k < 2; k++) {
		assert_int_equal(shm_reader_find_type(who[k], "hint.io", "v1", "h0"), -ENOENT);
		assert_int_equal(shm_reader_find_type(who[k], "hint.io", "v1", "h1"), -ENOENT);
	}
	int moved = shm_writer_register_type(
	        f->w, &(struct shm_type_desc){"hint.io", "v1", "moved", "H", 0});
	int back = shm_writer_register_type(f->w,
	                                    &(struct shm_type_desc){"hint.io", "v1", "h0", "H", 0});
	assert_int_equal(moved, ids[0]);
	assert_int_equal(back, ids[1]);
	for (unsigned k = 0; k < 2; k++) {
		assert_int_equal(shm_reader_find_type(who[k], "hint.io", "v1", "h0"), back);
		assert_int_equal(shm_reader_find_type(who[k], "hint.io", "v1", "moved"), moved);
		assert_int_equal(shm_reader_find_type(who[k], "hint.io", "v1", "h1"), -ENOENT);
		for (unsigned i = 2; i < N; i++) {
			snprintf(res, sizeof(res), "h%u", i);
			assert_int_equal(shm_reader_find_type(who[k], "hint.io", "v1", res),
			                 ids[i]);
		}
		/* another version of a known resource is another resource */
		assert_int_equal(shm_reader_find_type(who[k], "hint.io", "v2", "h5"), -ENOENT);
	}
	shm_arena_close(r);
	close(ro);
}

static void test_many_types_at_once(void **state)
{
	struct fx *f = *state;
	enum { N = 3000 };
	static int ids[N];
	char res[32];
	for (unsigned i = 0; i < N; i++) {
		snprintf(res, sizeof(res), "kind%u", i);
		ids[i] = shm_writer_register_type(
		        f->w, &(struct shm_type_desc){"many.io", "v1", res, "Many", 0});
		assert_int_equal(ids[i], (int)i + 3); /* appended after pods, rs, cm */
		char rv[16];
		snprintf(rv, sizeof(rv), "%u", 7 * i);
		assert_int_equal(shm_writer_set_sync(f->w, (uint16_t)ids[i], rv, true), 0);
		struct shm_record_in r = {.type = (uint16_t)ids[i],
		                          .kind = SHM_RECORD_META,
		                          .ns = "ns",
		                          .name = res,
		                          .uid = res,
		                          .rv = rv};
		assert_int_equal(shm_writer_upsert(f->w, &r), 1);
	}
	/* registering again finds the same ids (the writer's lookup), whatever the chunk */
	for (unsigned i = 0; i < N; i += 97) {
		snprintf(res, sizeof(res), "kind%u", i);
		assert_int_equal(
		        shm_writer_register_type(
		                f->w, &(struct shm_type_desc){"many.io", "v1", res, "Many", 0}),
		        ids[i]);
	}
	struct shm_stats st;
	assert_int_equal(shm_reader_stats(f->w, &st), 0);
	assert_int_equal(st.n_types, N + 3);
	assert_int_equal(shm_writer_check(f->w), 0);
	check_many_types(f->w, 0, N);
	int ro;
	struct shm_arena *r;
	assert_int_equal(shm_arena_reader_fd(f->fd, &ro), 0);
	assert_int_equal(shm_reader_open(ro, &r), 0);
	check_many_types(r, 0, N);
	/* retire a whole chunk's worth in the middle; the lowest free ids are reused first */
	for (unsigned i = 500; i < 800; i++) {
		snprintf(res, sizeof(res), "kind%u", i);
		assert_int_equal(shm_writer_delete(f->w, (uint16_t)ids[i], "ns", res), 0);
		assert_int_equal(shm_writer_retire_type(f->w, (uint16_t)ids[i]), 0);
		assert_int_equal(shm_reader_find_type(r, "many.io", "v1", res), -ENOENT);
	}
	assert_int_equal(shm_writer_register_type(
	                         f->w, &(struct shm_type_desc){"late.io", "v1", "late", "Late", 0}),
	                 ids[500]);
	check_many_types(r, 0, 500);
	check_many_types(r, 800, N);
	/* a writer restart (recovery) keeps every chunk and every entry */
	shm_arena_close(f->w);
	assert_int_equal(shm_writer_open(f->fd, &f->w), 0);
	assert_int_equal(shm_writer_check(f->w), 0);
	check_many_types(f->w, 0, 500);
	check_many_types(f->w, 800, N);
	check_many_types(r, 2900, N);
	assert_int_equal(shm_writer_register_type(
	                         f->w, &(struct shm_type_desc){"late.io", "v1", "late", "Late", 0}),
	                 ids[500]);
	assert_int_equal(
	        shm_writer_register_type(
	                f->w, &(struct shm_type_desc){"late.io", "v1", "late2", "Late", 0}),
	        ids[501]);
	shm_arena_close(r);
	close(ro);
}

/* T3: the chunks come from the arena; an arena too small for the next chunk refuses the
 * registration with -ENOMEM and keeps everything registered before. */
static void test_type_chunk_out_of_arena(void **state)
{
	(void)state;
	int fd;
	struct shm_arena *w;
	assert_int_equal(shm_arena_create(&(struct shm_create_opts){.max_size = 1 << 20,
	                                                            .initial_size = 1 << 20},
	                                  &fd),
	                 0);
	assert_int_equal(shm_writer_open(fd, &w), 0);
	int r = 0;
	unsigned n = 0;
	char res[32];
	for (; n < SHM_ABI_MAX_TYPES; n++) {
		snprintf(res, sizeof(res), "r%u", n);
		if ((r = shm_writer_register_type(
		             w, &(struct shm_type_desc){"", "v1", res, "R", 0})) < 0)
			break;
		assert_int_equal(r, (int)n);
	}
	assert_int_equal(r, -ENOMEM);
	assert_true(n >= SHM_ABI_TCHUNK_SLOTS && n % SHM_ABI_TCHUNK_SLOTS == 0);
	assert_int_equal(shm_reader_find_type(w, "", "v1", "r0"), 0);
	snprintf(res, sizeof(res), "r%u", n - 1);
	assert_int_equal(shm_reader_find_type(w, "", "v1", res), (int)n - 1);
	assert_int_equal(shm_reader_type_info(w, (uint16_t)n, &(struct shm_type_info){0}), -EINVAL);
	assert_int_equal(shm_writer_check(w), 0);
	shm_arena_close(w);
	close(fd);
}

static void test_delete(void **state)
{
	struct fx *f = *state;
	const char *rsuid = "aaaaaaaa-0000-4000-8000-000000000002";
	for (unsigned i = 0; i < 50; i++)
		assert_int_equal(put_pod(f, "ns1", i, rsuid, 100 + i, 16), 1);
	assert_int_equal(shm_writer_delete(f->w, (uint16_t)f->pods, "ns1", "web-7d4b9c8f6d-00007"),
	                 0);
	assert_int_equal(shm_writer_delete(f->w, (uint16_t)f->pods, "ns1", "web-7d4b9c8f6d-00007"),
	                 -ENOENT);
	struct shm_obj o = SHM_OBJ_INIT;
	assert_int_equal(shm_reader_get(f->w, (uint16_t)f->pods, "ns1", "web-7d4b9c8f6d-00007", &o),
	                 -ENOENT);
	char uid[37];
	mkuid(uid, 1000007);
	assert_int_equal(shm_reader_get_uid(f->w, uid, &o), -ENOENT);
	assert_int_equal(shm_reader_list(f->w, (uint16_t)f->pods, NULL, NULL), 49);
	assert_int_equal(shm_reader_list_ns(f->w, (uint16_t)f->pods, "ns1", NULL, NULL), 49);
	assert_int_equal(
	        shm_reader_list_controlled(f->w, (uint16_t)f->pods, rsuid, NULL, NULL, NULL), 49);
	struct shm_type_info ti;
	assert_int_equal(shm_reader_type_info(f->w, (uint16_t)f->pods, &ti), 0);
	assert_int_equal(ti.count, 49);
	/* delete all: memory returns (live bytes back near the empty arena's) */
	for (unsigned i = 0; i < 50; i++) {
		char n[32];
		snprintf(n, sizeof(n), "web-7d4b9c8f6d-%05u", i);
		assert_int_equal(shm_writer_delete(f->w, (uint16_t)f->pods, "ns1", n),
		                 i == 7 ? -ENOENT : 0);
	}
	assert_int_equal(shm_reader_list(f->w, (uint16_t)f->pods, NULL, NULL), 0);
	assert_int_equal(shm_reader_list_ns(f->w, (uint16_t)f->pods, "ns1", NULL, NULL), 0);
	assert_int_equal(shm_reader_list_dependents(f->w, rsuid, NULL, NULL), 0);
	assert_int_equal(shm_writer_check(f->w), 0);
	shm_obj_release(&o);
}

static void test_recreate_new_uid(void **state)
{
	struct fx *f = *state;
	struct shm_record_in r = {
	        .type = (uint16_t)f->cm, .ns = "n", .name = "x", .uid = "uid-1", .rv = "1"};
	assert_int_equal(shm_writer_upsert(f->w, &r), 1);
	r.uid = "uid-2";
	r.rv = "2";
	assert_int_equal(shm_writer_upsert(f->w, &r), 0);
	struct shm_obj o = SHM_OBJ_INIT;
	assert_int_equal(shm_reader_get_uid(f->w, "uid-1", &o), -ENOENT);
	assert_int_equal(shm_reader_get_uid(f->w, "uid-2", &o), 0);
	assert_string_equal(o.rv, "2");
	shm_obj_release(&o);
	assert_int_equal(shm_writer_check(f->w), 0);
}

struct collect {
	int n;
	char names[256][64];
	int stop_after;
};

static int collect_fn(const struct shm_obj *o, void *ud)
{
	struct collect *c = ud;
	if (c->n < 256)
		snprintf(c->names[c->n], 64, "%s/%s", o->ns, o->name);
	c->n++;
	if (c->stop_after && c->n >= c->stop_after)
		return -ECANCELED;
	return 0;
}

static void test_iteration(void **state)
{
	struct fx *f = *state;
	const char *rs1 = "aaaaaaaa-0000-4000-8000-00000000000a",
	           *rs2 = "aaaaaaaa-0000-4000-8000-00000000000b";
	for (unsigned i = 0; i < 30; i++)
		assert_int_equal(put_pod(f, "ns-a", i, rs1, 1, 8), 1);
	for (unsigned i = 30; i < 50; i++)
		assert_int_equal(put_pod(f, "ns-a", i, rs2, 1, 8), 1);
	for (unsigned i = 50; i < 55; i++)
		assert_int_equal(put_pod(f, "ns-a", i, NULL, 1, 8), 1); /* orphans */
	for (unsigned i = 55; i < 60; i++)
		assert_int_equal(put_pod(f, "ns-b", i, NULL, 1, 8), 1); /* orphans elsewhere */
	/* an RS whose own owner is a Deployment: the GC's edges cross types */
	struct shm_owner_ref dep = {
	        "apps/v1", "Deployment", "web", "dddddddd-0000-4000-8000-000000000001", true, true};
	struct shm_record_in rs = {.type = (uint16_t)f->rs,
	                           .kind = SHM_RECORD_REPLICASET,
	                           .ns = "ns-a",
	                           .name = "web-7d4b9c8f6d",
	                           .uid = rs1,
	                           .rv = "5",
	                           .owners = &dep,
	                           .n_owners = 1,
	                           .payload = "{\"template\":{}}",
	                           .payload_len = 15};
	assert_int_equal(shm_writer_upsert(f->w, &rs), 1);

	struct collect c = {0};
	assert_int_equal(shm_reader_list(f->w, (uint16_t)f->pods, collect_fn, &c), 60);
	assert_int_equal(c.n, 60);
	c = (struct collect){0};
	assert_int_equal(shm_reader_list_ns(f->w, (uint16_t)f->pods, "ns-a", collect_fn, &c), 55);
	assert_int_equal(shm_reader_list_ns(f->w, (uint16_t)f->pods, "ns-b", NULL, NULL), 5);
	assert_int_equal(shm_reader_list_ns(f->w, (uint16_t)f->pods, "ns-zzz", NULL, NULL), 0);
	assert_int_equal(shm_reader_list_ns(f->w, (uint16_t)f->rs, "ns-a", NULL, NULL), 1);
	/* RS sync: its pods + orphans of its namespace */
	assert_int_equal(
	        shm_reader_list_controlled(f->w, (uint16_t)f->pods, rs1, "ns-a", NULL, NULL), 35);
	assert_int_equal(shm_reader_list_controlled(f->w, (uint16_t)f->pods, rs1, NULL, NULL, NULL),
	                 30);
	assert_int_equal(
	        shm_reader_list_controlled(f->w, (uint16_t)f->pods, rs2, "ns-b", NULL, NULL), 25);
	/* the RS itself is not a pod */
	assert_int_equal(
	        shm_reader_list_controlled(f->w, (uint16_t)f->rs, dep.uid, NULL, NULL, NULL), 1);
	/* GC edges */
	assert_int_equal(shm_reader_list_dependents(f->w, rs1, NULL, NULL), 30);
	assert_int_equal(shm_reader_list_dependents(f->w, dep.uid, NULL, NULL), 1);
	assert_int_equal(shm_reader_list_dependents(f->w, "none", NULL, NULL), 0);
	/* stopping */
	c = (struct collect){.stop_after = 3};
	assert_int_equal(shm_reader_list(f->w, (uint16_t)f->pods, collect_fn, &c), -ECANCELED);
	assert_int_equal(c.n, 3);
	/* argument errors */
	assert_int_equal(shm_reader_list(f->w, 63, NULL, NULL), -EINVAL);
	assert_int_equal(
	        shm_reader_list_controlled(f->w, (uint16_t)f->pods, NULL, NULL, NULL, NULL),
	        -EINVAL);
	assert_int_equal(shm_reader_list_dependents(f->w, NULL, NULL, NULL), -EINVAL);

	/* adoption: an orphan gets a controller; release: a pod loses it */
	assert_int_equal(put_pod(f, "ns-a", 50, rs1, 2, 8), 0);
	assert_int_equal(put_pod(f, "ns-a", 0, NULL, 2, 8), 0);
	assert_int_equal(shm_reader_list_controlled(f->w, (uint16_t)f->pods, rs1, NULL, NULL, NULL),
	                 30);
	assert_int_equal(
	        shm_reader_list_controlled(f->w, (uint16_t)f->pods, rs1, "ns-a", NULL, NULL), 35);
	assert_int_equal(shm_reader_list_dependents(f->w, rs1, NULL, NULL), 30);
	/* ownership moves to another RS */
	assert_int_equal(put_pod(f, "ns-a", 1, rs2, 3, 8), 0);
	assert_int_equal(shm_reader_list_dependents(f->w, rs1, NULL, NULL), 29);
	assert_int_equal(shm_reader_list_dependents(f->w, rs2, NULL, NULL), 21);
	assert_int_equal(shm_writer_check(f->w), 0);
}

/* ---- memory
 * -------------------------------------------------------------------------------------- */
static void test_interning_and_reclaim(void **state)
{
	struct fx *f = *state;
	struct shm_stats s0, s1, s2;
	shm_reader_stats(f->w, &s0);
	const char *rsuid = "aaaaaaaa-0000-4000-8000-0000000000cc";
	for (unsigned i = 0; i < 2000; i++)
		assert_int_equal(put_pod(f, "ns", i, rsuid, 1, 64), 1);
	shm_reader_stats(f->w, &s1);
	/* one record each (≤ 208 B class) + index; shared labels/owners/ns stored once */
	uint64_t per = (s1.live_bytes - s0.live_bytes) / 2000;
	print_message("live bytes per pod: %llu\n", (unsigned long long)per);
	assert_true(per <= 256);
	/* 10k objects-worth of churn: 2000 objects × 100 updates with varying sizes */
	uint64_t carved_warm = 0;
	for (unsigned round = 0; round < 100; round++) {
		for (unsigned i = 0; i < 2000; i++)
			assert_true(put_pod(f, "ns", i, rsuid, 2 + round, (round * 37 + i) % 300) >=
			            0);
		if (round == 10) {
			shm_reader_stats(f->w, &s2);
			carved_warm = s2.carved;
		}
	}
	shm_reader_stats(f->w, &s2);
	print_message("carved after warm-up %llu, at end %llu\n", (unsigned long long)carved_warm,
	              (unsigned long long)s2.carved);
	assert_true(s2.carved <= carved_warm + (1u << 20));
	/* delete everything: live bytes back to the empty arena (index roots may stay) */
	for (unsigned i = 0; i < 2000; i++) {
		char n[32];
		snprintf(n, sizeof(n), "web-7d4b9c8f6d-%05u", i);
		assert_int_equal(shm_writer_delete(f->w, (uint16_t)f->pods, "ns", n), 0);
	}
	shm_reader_stats(f->w, &s2);
	assert_int_equal(s2.objects, 0);
	print_message("live bytes: empty %llu, 2000 pods %llu, all deleted %llu\n",
	              (unsigned long long)s0.live_bytes, (unsigned long long)s1.live_bytes,
	              (unsigned long long)s2.live_bytes);
	/* what stays: the handle chunk and the name/uid tables sized for 2000 (they shrink on
	 * the next rebuild, not on delete) */
	assert_true(s2.live_bytes < s0.live_bytes + 200 * 1024);
	assert_int_equal(shm_writer_check(f->w), 0);
}

static void test_growth_seen_by_reader(void **state)
{
	struct fx *f = *state;
	struct shm_arena *r;
	assert_int_equal(shm_reader_open(f->fd, &r), 0);
	struct shm_stats s0, s1;
	shm_reader_stats(r, &s0);
	static uint8_t big[300000];
	memset(big, 0x5a, sizeof(big));
	for (unsigned i = 0; i < 40; i++) {
		char n[16];
		snprintf(n, sizeof(n), "big%u", i);
		struct shm_record_in rec = {.type = (uint16_t)f->cm,
		                            .ns = "n",
		                            .name = n,
		                            .uid = n,
		                            .rv = "1",
		                            .payload = big,
		                            .payload_len = sizeof(big)};
		assert_int_equal(shm_writer_upsert(f->w, &rec), 1);
	}
	shm_reader_stats(r, &s1);
	assert_true(s1.size > s0.size);
	struct shm_obj o = SHM_OBJ_INIT;
	assert_int_equal(shm_reader_get(r, (uint16_t)f->cm, "n", "big39", &o), 0);
	assert_int_equal(o.payload_len, sizeof(big));
	assert_int_equal(((const uint8_t *)o.payload)[sizeof(big) - 1], 0x5a);
	shm_obj_release(&o);
	shm_arena_close(r);
	assert_int_equal(shm_writer_check(f->w), 0);
}

static void test_arena_full(void **state)
{
	(void)state;
	int fd;
	struct shm_arena *w;
	assert_int_equal(shm_arena_create(&(struct shm_create_opts){.max_size = 2 << 20,
	                                                            .initial_size = 1 << 20},
	                                  &fd),
	                 0);
	assert_int_equal(shm_writer_open(fd, &w), 0);
	int t = shm_writer_register_type(
	        w, &(struct shm_type_desc){"", "v1", "configmaps", "ConfigMap", 0});
	static uint8_t big[100000];
	int r = 0, n = 0;
	for (; n < 100; n++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "c%d", n);
		struct shm_record_in rec = {.type = (uint16_t)t,
		                            .name = nm,
		                            .uid = nm,
		                            .rv = "1",
		                            .payload = big,
		                            .payload_len = sizeof(big)};
		if ((r = shm_writer_upsert(w, &rec)) < 0)
			break;
	}
	assert_int_equal(r, -ENOMEM);
	assert_true(n > 0);
	assert_int_equal(shm_writer_check(w), 0);
	assert_int_equal(shm_reader_list(w, (uint16_t)t, NULL, NULL), n);
	shm_arena_close(w);
	close(fd);
}

static void test_alloc_failure_every_call(void **state)
{
	struct fx *f = *state;
	const char *rs1 = "aaaaaaaa-0000-4000-8000-0000000000ee";
	/* For n = 1..: fail the n-th allocation during a fixed workload; each call must either
	 * succeed or fail cleanly, and the arena must stay consistent. */
	for (long n = 1; n < 80; n++) {
		shm__test_fail_alloc_at = n;
		f->w->w->n_allocs = 0;
		int fails = 0;
		for (unsigned i = 0; i < 20; i++) {
			int r = put_pod(f, "fi", i, (i % 3) ? rs1 : NULL, (unsigned)n, 10 + i);
			if (r < 0) {
				assert_int_equal(r, -ENOMEM);
				fails++;
			}
		}
		shm__test_fail_alloc_at = 0;
		assert_int_equal(shm_writer_check(f->w), 0);
		assert_true(fails <= 1);
	}
}

/* ---- recovery ----------------------------------------------------------------------------------
 */
static void test_writer_restart_keeps_data(void **state)
{
	struct fx *f = *state;
	const char *rs1 = "aaaaaaaa-0000-4000-8000-0000000000ff";
	for (unsigned i = 0; i < 500; i++)
		put_pod(f, "r", i, rs1, 1, 32);
	struct shm_stats s0, s1;
	shm_reader_stats(f->w, &s0);
	shm_arena_close(f->w);
	assert_int_equal(shm_writer_open(f->fd, &f->w), 0);
	shm_reader_stats(f->w, &s1);
	assert_int_equal(s1.incarnation, s0.incarnation + 1);
	assert_int_equal(s1.objects, 500);
	assert_int_equal(s1.violations, 0);
	assert_int_equal(shm_writer_check(f->w), 0);
	assert_int_equal(shm_reader_list_controlled(f->w, (uint16_t)f->pods, rs1, NULL, NULL, NULL),
	                 500);
	/* and continues: updates, deletes */
	for (unsigned i = 0; i < 500; i++)
		assert_int_equal(put_pod(f, "r", i, rs1, 2, 40), 0);
	assert_int_equal(shm_writer_delete(f->w, (uint16_t)f->pods, "r", "web-7d4b9c8f6d-00003"),
	                 0);
	assert_int_equal(shm_writer_check(f->w), 0);
	/* the sweep found the free space again: carving did not restart from scratch */
	struct shm_stats s2;
	shm_reader_stats(f->w, &s2);
	assert_true(s2.carved <= s1.carved + (2u << 20));
}

/* A pod record bound to node ("" = unbound), as the record codec lays it out (records.h):
 * header, fixed part, node_name, affinity_node, the empty endpoint part. magic 0: the current. */
static int put_bound_pod(struct fx *f, unsigned i, const char *node, unsigned rv, uint32_t magic)
{
	uint8_t pl[512];
	size_t at = 0;
	struct shm_rec_hdr h = {.magic = magic ? magic : SHM_REC_MAGIC,
	                        .kind = SHM_RECORD_POD,
	                        .fixed_len = sizeof(struct shm_rec_pod),
	                        .n_blobs = 5};
	struct shm_rec_pod fp = {0};
	const char *blobs[5] = {node, "", "", "", ""};
	memcpy(pl, &h, sizeof(h));
	at += sizeof(h);
	memcpy(pl + at, &fp, sizeof(fp));
	at += sizeof(fp);
	for (int k = 0; k < 5; k++) {
		uint32_t l = (uint32_t)strlen(blobs[k]);
		memcpy(pl + at, &l, 4);
		memcpy(pl + at + 4, blobs[k], l + 1);
		at += 4 + l + 1;
	}
	char name[64], uid[37], rvs[24];
	snprintf(name, sizeof(name), "p-%05u", i);
	mkuid(uid, i + 2000000);
	snprintf(rvs, sizeof(rvs), "%u", rv);
	struct shm_record_in r = {.type = (uint16_t)f->pods,
	                          .kind = SHM_RECORD_POD,
	                          .ns = "nodes",
	                          .name = name,
	                          .uid = uid,
	                          .rv = rvs,
	                          .payload = pl,
	                          .payload_len = at};
	return shm_writer_upsert(f->w, &r);
}

/* The node index: pods by spec.nodeName, kept through updates that bind, move (the arena does
 * not forbid it) and unbind, deletes, a writer restart (rebuilt), and the checker. Unbound
 * pods, other kinds and records of another payload version are not in it. */
static void test_node_index(void **state)
{
	struct fx *f = *state;
	uint16_t t = (uint16_t)f->pods;
	int n = 0;

	for (unsigned i = 0; i < 90; i++)
		assert_true(put_bound_pod(f, i, i < 80 ? (i % 4 ? "n1" : "n2") : "", 1, 0) >= 0);
	put_pod(f, "r", 1, NULL, 1, 64); /* a payload that is no record: not bound */
	assert_int_equal(shm_reader_list_node(f->w, t, "n1", count_fn, &n), 60);
	assert_int_equal(n, 60);
	assert_int_equal(shm_reader_list_node(f->w, t, "n2", NULL, NULL), 20);
	assert_int_equal(shm_reader_list_node(f->w, t, "n3", NULL, NULL), 0);
	assert_int_equal(shm_reader_list_node(f->w, t, "", NULL, NULL), -EINVAL);
	assert_int_equal(shm_reader_list_node(f->w, t, NULL, NULL, NULL), -EINVAL);
	assert_int_equal(shm_reader_list_node(f->w, (uint16_t)f->cm, "n1", NULL, NULL), 0);
	assert_int_equal(shm_writer_check(f->w), 0);

	/* bind two unbound ones, move one, unbind one, an update that keeps the node */
	assert_int_equal(put_bound_pod(f, 80, "n2", 2, 0), 0);
	assert_int_equal(put_bound_pod(f, 81, "n3", 2, 0), 0);
	assert_int_equal(put_bound_pod(f, 1, "n3", 2, 0), 0);
	assert_int_equal(put_bound_pod(f, 2, "", 2, 0), 0);
	assert_int_equal(put_bound_pod(f, 3, "n1", 2, 0), 0);
	assert_int_equal(shm_reader_list_node(f->w, t, "n1", NULL, NULL), 58);
	assert_int_equal(shm_reader_list_node(f->w, t, "n2", NULL, NULL), 21);
	assert_int_equal(shm_reader_list_node(f->w, t, "n3", NULL, NULL), 2);
	assert_int_equal(shm_writer_check(f->w), 0);

	/* deletes leave it */
	assert_int_equal(shm_writer_delete(f->w, t, "nodes", "p-00001"), 0);
	assert_int_equal(shm_writer_delete(f->w, t, "nodes", "p-00005"), 0);
	assert_int_equal(shm_reader_list_node(f->w, t, "n1", NULL, NULL), 57);
	assert_int_equal(shm_reader_list_node(f->w, t, "n3", NULL, NULL), 1);

	/* a record of another payload version has no readable node: out of the index */
	assert_int_equal(put_bound_pod(f, 6, "n1", 3, 0x364b5243u), 0);
	assert_int_equal(shm_reader_list_node(f->w, t, "n1", NULL, NULL), 56);
	assert_int_equal(shm_writer_check(f->w), 0);

	/* a writer restart rebuilds it from the records */
	shm_arena_close(f->w);
	assert_int_equal(shm_writer_open(f->fd, &f->w), 0);
	assert_int_equal(shm_writer_check(f->w), 0);
	assert_int_equal(shm_reader_list_node(f->w, t, "n1", NULL, NULL), 56);
	assert_int_equal(shm_reader_list_node(f->w, t, "n2", NULL, NULL), 21);
	assert_int_equal(shm_reader_list_node(f->w, t, "n3", NULL, NULL), 1);
	assert_int_equal(put_bound_pod(f, 6, "n1", 4, 0), 0);
	assert_int_equal(shm_reader_list_node(f->w, t, "n1", NULL, NULL), 57);
	assert_int_equal(shm_writer_check(f->w), 0);

	/* the checker sees a missing entry (negative control) */
	const char *nd = "n2";
	shm_mset_del(f->w, &shm_type_entry(f->w, t)->node_index,
	             shm_key_node(f->w->seed, nd, strlen(nd)), 0);
	struct shm_obj o = SHM_OBJ_INIT;
	assert_int_equal(shm_reader_get(f->w, t, "nodes", "p-00000", &o), 0);
	shm_mset_del(f->w, &shm_type_entry(f->w, t)->node_index,
	             shm_key_node(f->w->seed, nd, strlen(nd)), o.handle);
	shm_obj_release(&o);
	assert_true(shm_writer_check(f->w) > 0);
	assert_int_equal(shm_reader_list_node(f->w, t, "n2", NULL, NULL), 20);
}

/* Kill the writer (in a child) at crash point p on its k-th visit; the parent then recovers. */
static void test_crash_points(void **state)
{
	struct fx *f = *state;
	const char *rs1 = "aaaaaaaa-0000-4000-8000-000000000111",
	           *rs2 = "aaaaaaaa-0000-4000-8000-000000000222";
	for (unsigned i = 0; i < 20; i++)
		put_pod(f, "c", i, rs1, 1, 32);
	shm_arena_close(f->w);
	f->w = NULL;
	int crashes = 0;
	for (int p = 1; p <= 8; p++) {
		int crashed_here = 0;
		for (long k = 1; k <= 6; k++) {
			pid_t pid = fork();
			assert_true(pid >= 0);
			if (pid == 0) {
				struct shm_arena *w;
				shm__test_crash_point =
				        p; /* armed before open: recovery has points too */
				shm__test_crash_count = k;
				if (shm_writer_open(f->fd, &w) < 0)
					_exit(2);
				for (unsigned i = 0; i < 20; i++) {
					/* creates, updates with owner change, deletes */
					put_pod(&(struct fx){.w = w, .pods = f->pods}, "c", 20 + i,
					        rs2, 2, 24);
					put_pod(&(struct fx){.w = w, .pods = f->pods}, "c", i,
					        (i & 1) ? rs2 : NULL, 3, 48);
					char n[32];
					snprintf(n, sizeof(n), "web-7d4b9c8f6d-%05u", 20 + i);
					shm_writer_delete(w, (uint16_t)f->pods, "c", n);
				}
				_exit(0);
			}
			int st;
			assert_int_equal(waitpid(pid, &st, 0), pid);
			if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
				crashes++, crashed_here++;
			else
				assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
			/* the published state, as readers see it right now, is consistent */
			struct shm_arena *r;
			assert_int_equal(shm_reader_open(f->fd, &r), 0);
			struct shm_obj o = SHM_OBJ_INIT;
			for (unsigned i = 0; i < 20; i++) {
				char n[32];
				snprintf(n, sizeof(n), "web-7d4b9c8f6d-%05u", i);
				assert_int_equal(shm_reader_get(r, (uint16_t)f->pods, "c", n, &o),
				                 0);
				assert_true(strcmp(o.rv, "1") == 0 || strcmp(o.rv, "3") == 0);
			}
			shm_obj_release(&o);
			shm_arena_close(r);
			/* recovery: consistent, nothing lost */
			struct shm_arena *w;
			assert_int_equal(shm_writer_open(f->fd, &w), 0);
			assert_int_equal(shm_writer_check(w), 0);
			struct shm_stats st2;
			shm_reader_stats(w, &st2);
			assert_int_equal(st2.violations, 0);
			assert_true(shm_reader_list_ns(w, (uint16_t)f->pods, "c", NULL, NULL) >=
			            20);
			shm_arena_close(w);
		}
		print_message("crash point %d: %d kills\n", p, crashed_here);
		assert_true(crashed_here >= 1); /* every point is on the workload's path */
	}
	print_message("crash points hit: %d\n", crashes);
	assert_true(crashes >= 30);
	assert_int_equal(shm_writer_open(f->fd, &f->w), 0);
}

/* The checker itself must see damage (else every "== 0" above proves nothing). */
static void test_check_detects_damage(void **state)
{
	struct fx *f = *state;
	for (unsigned i = 0; i < 10; i++)
		put_pod(f, "d", i, NULL, 1, 8);
	assert_int_equal(shm_writer_check(f->w), 0);
	/* drop an object from its handle slot behind the indexes' back */
	uint32_t h = 0;
	struct shm_obj o = SHM_OBJ_INIT;
	assert_int_equal(shm_reader_get(f->w, (uint16_t)f->pods, "d", "web-7d4b9c8f6d-00004", &o),
	                 0);
	h = o.handle;
	shm_obj_release(&o);
	_Atomic uint64_t *slot = shm_handle_slot(f->w, h);
	uint64_t saved = atomic_load(slot);
	atomic_store(slot, 0);
	assert_true(shm_writer_check(f->w) > 0);
	atomic_store(slot, saved);
	assert_int_equal(shm_writer_check(f->w), 0);
	/* a stale owner-set entry (an edge to an object that does not claim that owner) */
	const char *ghost = "99999999-0000-4000-8000-000000000000";
	assert_int_equal(shm_mset_add(f->w, &f->w->hdr->owner_index,
	                              shm_key_owner(f->w->seed, ghost, strlen(ghost)), h),
	                 0);
	assert_true(shm_writer_check(f->w) > 0);
	/* ... which readers filter out by content (A8) */
	assert_int_equal(shm_reader_list_dependents(f->w, ghost, NULL, NULL), 0);
	shm_mset_del(f->w, &f->w->hdr->owner_index, shm_key_owner(f->w->seed, ghost, strlen(ghost)),
	             h);
	assert_int_equal(shm_writer_check(f->w), 0);
	/* a missing orphan-set entry */
	shm_mset_del(f->w, &shm_type_entry(f->w, f->pods)->orphan_index,
	             shm_key_ns(f->w->seed, "d", 1), h);
	assert_true(shm_writer_check(f->w) > 0);
	assert_int_equal(shm_mset_add(f->w, &shm_type_entry(f->w, f->pods)->orphan_index,
	                              shm_key_ns(f->w->seed, "d", 1), h),
	                 0);
	assert_int_equal(shm_writer_check(f->w), 0);
	/* a handle pointing at a block with the wrong generation */
	atomic_store(slot, saved ^ (UINT64_C(1) << 32));
	assert_true(shm_writer_check(f->w) > 0);
	/* recovery drops it and counts it */
	shm_arena_close(f->w);
	assert_int_equal(shm_writer_open(f->fd, &f->w), 0);
	struct shm_stats st;
	shm_reader_stats(f->w, &st);
	assert_int_equal(st.violations, 1);
	assert_int_equal(shm_writer_check(f->w), 0);
	assert_int_equal(shm_reader_list_ns(f->w, (uint16_t)f->pods, "d", NULL, NULL), 9);
}

/* Issue 21: a reader clamps the sizes it reads from shared memory to its own mapping. A header
 * whose size word claims more than the mapping, and a region-table entry for the mapping's
 * last region that claims a class larger than what is left of it, must not make a block
 * "valid" past the end of the mapping (the old code returned the class size, and a reader
 * copied that many bytes past its mapping). A region-table entry pointing back before the
 * first region is refused too. Normal reads still work under the hostile size word. */
static void test_reader_clamps_hostile_sizes(void **state)
{
	struct fx *f = *state;
	struct shm_arena *r;
	int rfd;

	assert_true(put_pod(f, "default", 1, NULL, 1, 64) >= 0);
	assert_int_equal(shm_arena_reader_fd(f->fd, &rfd), 0);
	assert_int_equal(shm_reader_open(rfd, &r), 0);

	unsigned big = 0;
	while (big < SHM_ABI_NCLASSES && shm_abi_class_size(big) <= SHM_ABI_REGION_SIZE)
		big++;
	assert_true(big < SHM_ABI_NCLASSES);
	uint64_t last = (r->map_size >> SHM_ABI_REGION_SHIFT) - 1;
	uint64_t off = last << SHM_ABI_REGION_SHIFT;
	uint64_t saved_size = atomic_load(&f->w->hdr->size);
	uint32_t saved_rt = atomic_load(&f->w->rt[last]);

	/* planted through the writer's mapping, as a corrupt or hostile writer would */
	atomic_store(&f->w->hdr->size, UINT64_MAX / 2);
	atomic_store(&f->w->rt[last], (uint32_t)(big + 1));
	assert_int_equal(shm_block_class_size(r, off, atomic_load(&r->hdr->size)), 0);
	assert_int_equal(shm_block_class_size(r, off, UINT64_MAX), 0);
	/* a back-pointer past region 0 */
	atomic_store(&f->w->rt[last], (uint32_t)(1 + 0) | (uint32_t)((last + 5) << 8));
	assert_int_equal(shm_block_class_size(r, off, UINT64_MAX), 0);

	/* the pod is still readable with the hostile size word (clamped, not refused) */
	struct shm_obj o = {0};
	assert_int_equal(
	        shm_reader_get(r, (uint16_t)f->pods, "default", "web-7d4b9c8f6d-00001", &o), 0);
	shm_obj_release(&o);

	atomic_store(&f->w->rt[last], saved_rt);
	atomic_store(&f->w->hdr->size, saved_size);
	shm_arena_close(r);
	close(rfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_create_errors),
	        cmocka_unit_test_setup_teardown(test_version_mismatch, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_single_writer_and_ro_fd, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_register_type, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_sync_latch, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_upsert_get, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_cluster_scoped_and_string_uid, setup,
	                                        teardown),
	        cmocka_unit_test_setup_teardown(test_owner_tristate, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_upsert_invalid, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_delete, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_apiserver_shapes, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_types_retired_and_reused, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_many_types_at_once, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_find_type_hints_follow_slots, setup, teardown),
	        cmocka_unit_test(test_type_chunk_out_of_arena),
	        cmocka_unit_test_setup_teardown(test_recreate_new_uid, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_iteration, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_interning_and_reclaim, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_growth_seen_by_reader, setup, teardown),
	        cmocka_unit_test(test_arena_full),
	        cmocka_unit_test_setup_teardown(test_alloc_failure_every_call, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_writer_restart_keeps_data, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_node_index, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_crash_points, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_check_detects_damage, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_reader_clamps_hostile_sizes, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
