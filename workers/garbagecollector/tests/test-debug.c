/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/garbagecollector/tests/test-debug.c: the DOT dump (upstream dump.go's format, checked
 * against its testdata/escaping.dot and empty.dot) and the graph read from a real arena: only
 * nodes with owners or dependents, virtual owners, flags, ?uid= components; the queue names.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "shm/records.h"
#include "workers/garbagecollector/debug.h"

/* upstream testdata/escaping.dot */
static const char escaping_dot[] =
        "strict digraph full {\n"
        "  // Node definitions.\n"
        "  \"ref1-[]\\\"\\\\Iñtërnâtiônàlizætiøn,🐹\" [\n"
        "    "
        "label=\"uid=ref1-[]\\\"\\\\Iñtërnâtiônàlizætiøn,🐹\\nnamespace=ref1ns\\nref1kind-"
        "Iñtërnâtiônàlizætiøn,🐹.version.ref1group/ref1name-Iñtërnâtiônàlizætiøn,🐹\\n\"\n"
        "    group=\"ref1group\"\n"
        "    version=\"version\"\n"
        "    kind=\"ref1kind-Iñtërnâtiônàlizætiøn,🐹\"\n"
        "    namespace=\"ref1ns\"\n"
        "    name=\"ref1name-Iñtërnâtiônàlizætiøn,🐹\"\n"
        "    uid=\"ref1-[]\\\"\\\\Iñtërnâtiônàlizætiøn,🐹\"\n"
        "    missing=\"false\"\n"
        "    beingDeleted=\"false\"\n"
        "    deletingDependents=\"false\"\n"
        "    virtual=\"false\"\n"
        "  ];\n"
        "  \"ref2-\" [\n"
        "    label=\"uid=ref2-\\nnamespace=ref2ns\\nref2kind-.version.ref2group/ref2name-\\n\"\n"
        "    group=\"ref2group\"\n"
        "    version=\"version\"\n"
        "    kind=\"ref2kind-\"\n"
        "    namespace=\"ref2ns\"\n"
        "    name=\"ref2name-\"\n"
        "    uid=\"ref2-\"\n"
        "    missing=\"false\"\n"
        "    beingDeleted=\"false\"\n"
        "    deletingDependents=\"false\"\n"
        "    virtual=\"false\"\n"
        "  ];\n"
        "  // Edge definitions.\n"
        "  \"ref1-[]\\\"\\\\Iñtërnâtiônàlizætiøn,🐹\" -> \"ref2-\";\n"
        "}\n";

static void test_marshal_golden(void **state)
{
	(void)state;
	const char *u1 = "ref1-[]\"\\Iñtërnâtiônàlizætiøn,🐹";
	struct gc_dot_vertex v[] = {
	        {.uid = u1,
	         .group = "ref1group",
	         .version = "version",
	         .kind = "ref1kind-Iñtërnâtiônàlizætiøn,🐹",
	         .ns = "ref1ns",
	         .name = "ref1name-Iñtërnâtiônàlizætiøn,🐹"},
	        {.uid = "ref2-",
	         .group = "ref2group",
	         .version = "version",
	         .kind = "ref2kind-",
	         .ns = "ref2ns",
	         .name = "ref2name-"},
	};
	struct gc_dot_edge e[] = {{u1, "ref2-"}};
	char *out;
	size_t len;
	assert_int_equal(gc_dot_marshal(v, 2, e, 1, &out, &len), 0);
	assert_string_equal(out, escaping_dot);
	assert_int_equal(len, strlen(escaping_dot));
	free(out);
	assert_int_equal(gc_dot_marshal(NULL, 0, NULL, 0, &out, &len), 0);
	assert_string_equal(out, "strict digraph full {\n}\n");
	free(out);
}

struct fx {
	int fd;
	struct shm_arena *w, *r;
	int rs_type, pod_type, cm_type;
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
	f->rs_type = shm_writer_register_type(
	        f->w, &(struct shm_type_desc){"apps", "v1", "replicasets", "ReplicaSet",
	                                      SHM_RECORD_META});
	f->pod_type = shm_writer_register_type(
	        f->w, &(struct shm_type_desc){"", "v1", "pods", "Pod", SHM_RECORD_META});
	f->cm_type = shm_writer_register_type(
	        f->w,
	        &(struct shm_type_desc){"", "v1", "configmaps", "ConfigMap", SHM_RECORD_META});
	assert_true(f->rs_type >= 0 && f->pod_type >= 0 && f->cm_type >= 0);
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

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* rs1 (deleting, foreground) <- pod-a, pod-b; pod-c -> virtual ReplicationController "gone";
 * cm-lonely has neither owners nor dependents; a second component rs2 <- pod-d. */
static void fill(struct fx *f)
{
	struct shm_owner_ref to_rs1 = {"apps/v1", "ReplicaSet", "rs1", "u-rs1", 1, 1};
	struct shm_owner_ref to_gone = {"v1", "ReplicationController", "gone", "u-gone", 1, -1};
	struct shm_owner_ref to_rs2 = {"apps/v1", "ReplicaSet", "rs2", "u-rs2", 1, 1};
	put(f, f->rs_type, "ns1", "rs1", "u-rs1", NULL, 0, true, SHM_REC_FIN_FOREGROUND);
	put(f, f->rs_type, "ns1", "rs2", "u-rs2", NULL, 0, false, 0);
	put(f, f->pod_type, "ns1", "pod-b", "u-pod-b", &to_rs1, 1, false, 0);
	put(f, f->pod_type, "ns1", "pod-a", "u-pod-a", &to_rs1, 1, true, 0);
	put(f, f->pod_type, "ns2", "pod-c", "u-pod-c", &to_gone, 1, false, 0);
	put(f, f->pod_type, "ns1", "pod-d", "u-pod-d", &to_rs2, 1, false, 0);
	put(f, f->cm_type, "ns1", "cm-lonely", "u-cm", NULL, 0, false, 0);
}

static void test_arena_graph(void **state)
{
	(void)state;
	struct fx f;
	setup_fx(&f);
	fill(&f);
	char *out;
	size_t len;
	assert_int_equal(gc_dot_render_arena(f.r, NULL, 0, &out, &len), 0);
	/* 7 vertices (cm-lonely left out), 4 edges, sorted */
	assert_int_equal(count(out, "  ];\n"), 7);
	assert_int_equal(count(out, " -> "), 4);
	assert_null(strstr(out, "cm-lonely"));
	assert_non_null(strstr(out,
	                       "  \"u-pod-a\" -> \"u-rs1\";\n  \"u-pod-b\" -> \"u-rs1\";\n"
	                       "  \"u-pod-c\" -> \"u-gone\";\n  \"u-pod-d\" -> \"u-rs2\";\n}\n"));
	/* the first vertex is u-gone (sorted): virtual, the dependent's namespace */
	assert_non_null(strstr(out, "  // Node definitions.\n  \"u-gone\" [\n"
	                            "    label=\"uid=u-gone\\nnamespace=ns2\\n"
	                            "ReplicationController.v1/gone\\nvirtual\\n\"\n"
	                            "    group=\"\"\n    version=\"v1\"\n"
	                            "    kind=\"ReplicationController\"\n    namespace=\"ns2\"\n"
	                            "    name=\"gone\"\n    uid=\"u-gone\"\n    missing=\"false\"\n"
	                            "    beingDeleted=\"false\"\n    deletingDependents=\"false\"\n"
	                            "    virtual=\"true\"\n  ];\n"));
	assert_non_null(strstr(out,
	                       "  \"u-rs1\" [\n    label=\"uid=u-rs1\\nnamespace=ns1\\n"
	                       "ReplicaSet.v1.apps/rs1\\nbeingDeleted,deletingDependents\\n\"\n"));
	assert_non_null(strstr(out, "    label=\"uid=u-pod-a\\nnamespace=ns1\\nPod.v1/pod-a\\n"
	                            "beingDeleted\\n\"\n"));
	assert_true(strstr(out, "\"u-gone\" [") < strstr(out, "\"u-pod-a\" [") &&
	            strstr(out, "\"u-pod-a\" [") < strstr(out, "\"u-pod-b\" [") &&
	            strstr(out, "\"u-pod-d\" [") < strstr(out, "\"u-rs1\" [") &&
	            strstr(out, "\"u-rs1\" [") < strstr(out, "\"u-rs2\" ["));
	free(out);

	/* ?uid=u-pod-a: the rs1 component only (pod-a, its owner, the owner's other dependent) */
	const char *sel[] = {"u-pod-a"};
	assert_int_equal(gc_dot_render_arena(f.r, sel, 1, &out, &len), 0);
	assert_int_equal(count(out, "  ];\n"), 3);
	assert_int_equal(count(out, " -> "), 2);
	assert_null(strstr(out, "u-rs2"));
	assert_null(strstr(out, "u-gone"));
	free(out);
	/* two roots, one unknown uid: both components; the unknown one is skipped */
	const char *sel2[] = {"u-gone", "nope", "u-rs2"};
	assert_int_equal(gc_dot_render_arena(f.r, sel2, 3, &out, &len), 0);
	assert_int_equal(count(out, "  ];\n"), 4);
	assert_int_equal(count(out, " -> "), 2);
	free(out);
	/* a uid with no node: an empty graph */
	const char *sel3[] = {"u-cm"};
	assert_int_equal(gc_dot_render_arena(f.r, sel3, 1, &out, &len), 0);
	assert_string_equal(out, "strict digraph full {\n}\n");
	free(out);
	teardown_fx(&f);
}

static void test_queue_names(void **state)
{
	(void)state;
	assert_string_equal(gc_queue_metric_name("gc-attempt-to-delete"),
	                    "garbage_collector_attempt_to_delete");
	assert_string_equal(gc_queue_metric_name("gc-attempt-to-orphan"),
	                    "garbage_collector_attempt_to_orphan");
	assert_string_equal(gc_queue_metric_name("gc-graph-changes"),
	                    "garbage_collector_graph_changes");
	assert_string_equal(gc_queue_metric_name("replicaset"), "replicaset");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_marshal_golden),
	        cmocka_unit_test(test_arena_graph),
	        cmocka_unit_test(test_queue_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
