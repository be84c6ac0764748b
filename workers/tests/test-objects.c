/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Round trip: apiserver JSON → kube decoder → informerd's store → arena → worker view. What a
 * worker sees must equal what the decoder produced (selector semantics, template labels,
 * status, conditions, owners, pod fields).
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

#include "informerd/store.h"
#include "kube/selector.h"
#include "shm/record-model.h"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
	b[n] = 0;
	fclose(f);
	*len = (size_t)n;
	return b;
}

static const struct inf_resource pods = {"", "v1", "pods", "Pod", SHM_RECORD_POD, true};
static const struct inf_resource rss = {
        "apps", "v1", "replicasets", "ReplicaSet", SHM_RECORD_REPLICASET, true};

/* Selectors are compiled when stored: what a reader matches with shm_rec_selector_match (no
 * parse, no validation) decides exactly as the apiserver's LabelSelector does
 * (kube_selector_from_label_selector + kube_selector_matches on the decoded object), on label
 * sets that hit and miss each requirement; invalid and nil selectors keep their state. */
static void test_selector_compiled(void **state)
{
	(void)state;
	static const char *cases[] = {
	        "{}",
	        "{\"matchLabels\":{\"a\":\"b\"}}",
	        "{\"matchLabels\":{\"a\":\"b\"},\"matchExpressions\":[{\"key\":\"c\","
	        "\"operator\":\"NotIn\",\"values\":[\"d\"]}]}",
	        "{\"matchLabels\":{\"app\":\"web\"},\"matchExpressions\":[{\"key\":\"tier\","
	        "\"operator\":\"NotIn\",\"values\":[\"cache\",\"db\"]}]}",
	        "{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"In\",\"values\":[\"1\",\"2\","
	        "\"3\"]},{\"key\":\"y\",\"operator\":\"DoesNotExist\"},{\"key\":\"z\","
	        "\"operator\":\"Exists\"}]}",
	        "{\"matchLabels\":{\"k8s.io/app\":\"v-1_2.x\"}}",
	        "{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Bogus\"}]}",
	        "{\"matchLabels\":{\"bad key\":\"x\"}}",
	        NULL, /* no selector: nil */
	};
	struct kube_kv on[] = {{"app", "web"}, {"tier", "frontend"},      {"a", "b"}, {"x", "2"},
	                       {"z", ""},      {"k8s.io/app", "v-1_2.x"}, {"c", "d"}, {"y", "1"}};
	int fd;
	struct shm_arena *w;
	struct inf_store *st;
	assert_int_equal(shm_arena_create(NULL, &fd), 0);
	assert_int_equal(shm_writer_open(fd, &w), 0);
	assert_int_equal(inf_store_new(w, NULL, &st), 0);
	int rt = inf_store_add_resource(st, &rss);
	assert_true(rt >= 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char json[1024], name[16];
		snprintf(name, sizeof name, "rs%zu", i);
		snprintf(json, sizeof json,
		         "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"n\",\"uid\":\"u%zu\","
		         "\"resourceVersion\":\"1\"},\"spec\":{%s%s%s\"template\":{}}}",
		         name, i, cases[i] ? "\"selector\":" : "", cases[i] ? cases[i] : "",
		         cases[i] ? "," : "");
		struct kube_replicaset *rs;
		assert_int_equal(kube_decode_replicaset(json, strlen(json), 0, &rs), 0);
		assert_int_equal(inf_store_apply(st, (uint16_t)rt, KUBE_WATCH_ADDED, rs), 0);
		struct kube_selector *want = NULL;
		int valid = kube_selector_from_label_selector(rs->selector, &want, NULL, 0) == 0;

		struct shm_obj o = SHM_OBJ_INIT;
		struct shm_rec_selector sel;
		assert_int_equal(shm_reader_get(w, (uint16_t)rt, "n", name, &o), 0);
		assert_int_equal(shm_rec_selector_get(&o, &sel), 0);
		if (!cases[i]) {
			assert_int_equal(sel.state, SHM_REC_SEL_NIL);
			assert_null(shm_rec_selector_ls(&sel));
		} else if (!valid) {
			assert_int_equal(sel.state, SHM_REC_SEL_INVALID);
			assert_int_equal(sel.ls.n_match_expressions, 1);
			assert_int_equal(sel.ls.match_expressions[0].op, KUBE_OP_INVALID);
			assert_true(strlen(sel.ls.match_expressions[0].op_text) >
			            0); /* the error */
		} else {
			assert_int_equal(sel.state, SHM_REC_SEL_VALID);
			for (size_t k = 0; k <= sizeof(on) / sizeof(on[0]); k++)
				assert_int_equal(kube_selector_matches(want, on, (uint32_t)k),
				                 shm_rec_selector_match(&sel.ls, on, (uint32_t)k));
		}
		/* the full view hands the same selector to the sync */
		struct shm_rs_view v;
		assert_int_equal(shm_rs_view_init(&o, &v), 0);
		if (cases[i]) {
			assert_non_null(v.rs.selector);
			assert_int_equal(v.rs.selector->n_match_labels, sel.ls.n_match_labels);
			assert_int_equal(v.rs.selector->n_match_expressions,
			                 sel.ls.n_match_expressions);
			struct kube_selector *got = NULL;
			assert_int_equal(kube_selector_from_label_selector(v.rs.selector, &got,
			                                                   NULL, 0) == 0,
			                 valid);
			char *f1 = NULL, *f2 = NULL;
			if (valid) {
				kube_selector_format(want, &f1);
				kube_selector_format(got, &f2);
				assert_string_equal(f1, f2);
			}
			free(f1);
			free(f2);
			kube_selector_free(got);
		} else {
			assert_null(v.rs.selector);
		}
		shm_rs_view_free(&v);
		shm_rec_selector_free(&sel);
		kube_selector_free(want);
		kube_object_free(rs);
	}
	inf_store_free(st);
	shm_arena_close(w);
	close(fd);
}

static void test_round_trip(void **state)
{
	(void)state;
	int fd;
	struct shm_arena *w, *r;
	struct inf_store *st;
	size_t len;

	assert_int_equal(shm_arena_create(NULL, &fd), 0);
	assert_int_equal(shm_writer_open(fd, &w), 0);
	assert_int_equal(inf_store_new(w, NULL, &st), 0);
	int pt = inf_store_add_resource(st, &pods), rt = inf_store_add_resource(st, &rss);
	assert_true(pt >= 0 && rt >= 0);

	char *rj = slurp("kube/tests/fixtures/replicaset.json", &len);
	struct kube_replicaset *rs;
	assert_int_equal(kube_decode_replicaset(rj, len, 0, &rs), 0);
	assert_int_equal(inf_store_apply(st, (uint16_t)rt, KUBE_WATCH_ADDED, rs), 0);
	char *pj = slurp("kube/tests/fixtures/pod-running.json", &len);
	struct kube_pod *pod;
	assert_int_equal(kube_decode_pod(pj, len, 0, &pod), 0);
	assert_int_equal(inf_store_apply(st, (uint16_t)pt, KUBE_WATCH_ADDED, pod), 0);

	assert_int_equal(shm_reader_open(fd, &r), 0);
	struct shm_obj o = SHM_OBJ_INIT;
	struct shm_rs_view wr;
	assert_int_equal(shm_reader_get(r, (uint16_t)rt, rs->meta.namespace, rs->meta.name, &o), 0);
	assert_int_equal(shm_rs_view_init(&o, &wr), 0);
	const struct kube_replicaset *g = &wr.rs;
	assert_string_equal(g->meta.name, rs->meta.name);
	assert_string_equal(g->meta.uid, rs->meta.uid);
	assert_string_equal(g->meta.resource_version, rs->meta.resource_version);
	assert_int_equal(g->meta.generation, rs->meta.generation);
	assert_int_equal(g->meta.creation_timestamp, rs->meta.creation_timestamp);
	assert_int_equal(g->spec_replicas, rs->spec_replicas);
	assert_int_equal(g->min_ready_seconds, rs->min_ready_seconds);
	assert_int_equal(g->status.replicas, rs->status.replicas);
	assert_int_equal(g->status.ready_replicas, rs->status.ready_replicas);
	assert_int_equal(g->status.available_replicas, rs->status.available_replicas);
	assert_int_equal(g->status.observed_generation, rs->status.observed_generation);
	assert_int_equal(g->status.n_conditions, rs->status.n_conditions);
	for (uint32_t i = 0; i < rs->status.n_conditions; i++) {
		assert_string_equal(g->status.conditions[i].type, rs->status.conditions[i].type);
		assert_int_equal(g->status.conditions[i].last_transition_time,
		                 rs->status.conditions[i].last_transition_time);
	}
	assert_int_equal(g->n_template_labels, rs->n_template_labels);
	assert_true(rs->n_template_labels > 0);
	for (uint32_t i = 0; i < rs->n_template_labels; i++) {
		assert_string_equal(g->template_labels[i].key, rs->template_labels[i].key);
		assert_string_equal(g->template_labels[i].value, rs->template_labels[i].value);
	}
	assert_int_equal(g->template_json_len, rs->template_json_len);
	assert_memory_equal(g->template_json, rs->template_json, rs->template_json_len);
	assert_int_equal(g->meta.n_owner_refs, rs->meta.n_owner_refs);
	assert_string_equal(g->meta.owner_refs[0].uid, rs->meta.owner_refs[0].uid);
	assert_int_equal(g->meta.owner_refs[0].controller, rs->meta.owner_refs[0].controller);
	struct kube_selector *s1, *s2;
	assert_int_equal(kube_selector_from_label_selector(rs->selector, &s1, NULL, 0), 0);
	assert_int_equal(kube_selector_from_label_selector(g->selector, &s2, NULL, 0), 0);
	char *f1, *f2;
	kube_selector_format(s1, &f1);
	kube_selector_format(s2, &f2);
	assert_string_equal(f1, f2);
	free(f1);
	free(f2);
	kube_selector_free(s1);
	kube_selector_free(s2);
	shm_rs_view_free(&wr);

	struct shm_pod_view wp;
	struct shm_obj po = SHM_OBJ_INIT, dup;
	assert_int_equal(shm_reader_get(r, (uint16_t)pt, pod->meta.namespace, pod->meta.name, &po),
	                 0);
	assert_int_equal(shm_obj_dup(&po, &dup), 0);
	shm_obj_release(&po); /* the copy must not depend on the original */
	assert_int_equal(shm_pod_view_init(&dup, &wp), 0);
	assert_string_equal(wp.pod.meta.name, pod->meta.name);
	assert_int_equal(wp.pod.phase, pod->phase);
	assert_int_equal(wp.pod.ready, pod->ready);
	assert_int_equal(wp.pod.ready_transition_time, pod->ready_transition_time);
	assert_int_equal(wp.pod.max_restarts, pod->max_restarts);
	assert_int_equal(wp.pod.meta.n_labels, pod->meta.n_labels);
	if (pod->node_name)
		assert_string_equal(wp.pod.node_name, pod->node_name);
	shm_pod_view_free(&wp);

	struct shm_rs_view bad;
	struct shm_obj po2 = SHM_OBJ_INIT;
	assert_int_equal(shm_reader_get(r, (uint16_t)pt, pod->meta.namespace, pod->meta.name, &po2),
	                 0);
	assert_int_equal(shm_rs_view_init(&po2, &bad), -EINVAL); /* a pod is not a replicaset */
	shm_rs_view_free(&bad);

	kube_object_free(rs);
	kube_object_free(pod);
	free(rj);
	free(pj);
	inf_store_free(st);
	shm_arena_close(r);
	shm_arena_close(w);
	close(fd);
}

/* A change-feed event's object is not a copied-out record (no mem_): the dispatcher clones it
 * before handing it to handlers that copy `old` with shm_obj_dup (which refuses such an object:
 * a pod's DELETE from the feed was silently dropped by the ReplicaSet handlers without this). */
static void test_clone(void **state)
{
	(void)state;
	struct shm_label labels[] = {{"app", "x"}, {"tier", ""}};
	struct shm_owner_ref owners[] = {{"apps/v1", "ReplicaSet", "rs", "u-1", -1, 1}};
	char payload[] = {1, 2, 0, 3};
	struct shm_obj feed_obj = {.type = 3,
	                           .kind = SHM_RECORD_POD,
	                           .handle = 7,
	                           .ns = "ns",
	                           .name = "p",
	                           .uid = "u",
	                           .rv = "42",
	                           .labels = labels,
	                           .n_labels = 2,
	                           .owners = owners,
	                           .n_owners = 1,
	                           .payload = payload,
	                           .payload_len = sizeof(payload)};
	struct shm_obj c, d;

	assert_int_equal(shm_obj_dup(&feed_obj, &d), -EINVAL); /* why the clone exists */
	assert_int_equal(shm_obj_clone(&feed_obj, &c), 0);
	assert_int_equal(shm_obj_dup(&c, &d), 0);
	for (int k = 0; k < 2; k++) {
		const struct shm_obj *o = k ? &d : &c;
		assert_int_equal(o->type, 3);
		assert_int_equal(o->handle, 7);
		assert_string_equal(o->ns, "ns");
		assert_string_equal(o->name, "p");
		assert_string_equal(o->uid, "u");
		assert_string_equal(o->rv, "42");
		assert_int_equal(o->n_labels, 2);
		assert_string_equal(o->labels[1].key, "tier");
		assert_string_equal(o->labels[1].value, "");
		assert_int_equal(o->n_owners, 1);
		assert_string_equal(o->owners[0].uid, "u-1");
		assert_int_equal(o->owners[0].controller, -1); /* absent stays absent */
		assert_int_equal(o->owners[0].block_owner_deletion, 1);
		assert_memory_equal(o->payload, payload, sizeof(payload));
		assert_ptr_not_equal(o->name, feed_obj.name);
	}
	shm_obj_release(&d);
	shm_obj_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_selector_compiled),
	        cmocka_unit_test(test_round_trip),
	        cmocka_unit_test(test_clone),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
