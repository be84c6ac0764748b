/* SPDX-License-Identifier: Apache-2.0 */
/*
 * shm/tests/test-records.c: the record codec (shm/record-model.h) on its own: kube objects ->
 * shm_rec_build -> a record -> the views, and the decoder's clamping on damaged payloads
 * (every truncation, counts larger than the bytes). The informerd -> arena -> worker round
 * trip is workers/tests/test-objects.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/encode.h"
#include "kube/model.h"
#include "shm/record-model.h"
#include "shm/records.h"

/* The record a writer would store, as the copied-out shm_obj a reader gets (an owned clone). */
static void to_obj(const struct shm_record_in *in, struct shm_obj *ret)
{
	struct shm_obj tmp = {
	        .type = in->type,
	        .kind = in->kind,
	        .ns = in->ns,
	        .name = in->name,
	        .uid = in->uid,
	        .rv = in->rv,
	        .labels = in->labels,
	        .n_labels = in->n_labels,
	        .owners = in->owners,
	        .n_owners = in->n_owners,
	        .payload = in->payload,
	        .payload_len = in->payload_len,
	};
	assert_int_equal(shm_obj_clone(&tmp, ret), 0);
}

static const char PARTIAL[] =
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm\","
        "\"namespace\":\"ns\",\"uid\":\"u-cm\",\"resourceVersion\":\"7\",\"generation\":3,"
        "\"labels\":{\"a\":\"1\"},\"finalizers\":[\"x/y\",\"foregroundDeletion\"],"
        "\"ownerReferences\":["
        "{\"apiVersion\":\"v1\",\"kind\":\"A\",\"name\":\"absent\",\"uid\":\"u1\"},"
        "{\"apiVersion\":\"v1\",\"kind\":\"B\",\"name\":\"false\",\"uid\":\"u2\","
        "\"controller\":false,\"blockOwnerDeletion\":false},"
        "{\"apiVersion\":\"v1\",\"kind\":\"C\",\"name\":\"true\",\"uid\":\"u3\","
        "\"controller\":true,\"blockOwnerDeletion\":true},"
        "{\"apiVersion\":\"v1\",\"kind\":\"D\",\"name\":\"mixed\",\"uid\":\"u4\","
        "\"blockOwnerDeletion\":false}]}}";

/* ownerReference controller / blockOwnerDeletion keep absent (-1) apart from false (0) and
 * true (1) through the encoder and the meta view (the GC must tell unset from false). */
static void test_owner_tristate(void **state)
{
	(void)state;
	struct kube_partial *p;
	struct shm_rec_enc e = {0};
	struct shm_record_in in;
	struct shm_obj o;
	struct shm_meta_view mv;

	assert_int_equal(kube_decode_partial(PARTIAL, strlen(PARTIAL), 0, &p), 0);
	assert_int_equal(shm_rec_build(&e, 3, SHM_RECORD_META, p, &in), 0);
	to_obj(&in, &o);
	assert_int_equal(shm_meta_view_init(&o, &mv), 0);
	const struct kube_object_meta *m = &mv.p.meta;
	assert_int_equal(m->n_owner_refs, 4);
	static const int8_t want_c[] = {-1, 0, 1, -1}, want_b[] = {-1, 0, 1, 0};
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(m->owner_refs[i].controller, want_c[i]);
		assert_int_equal(m->owner_refs[i].block_owner_deletion, want_b[i]);
		assert_string_equal(m->owner_refs[i].uid, p->meta.owner_refs[i].uid);
	}
	assert_string_equal(m->name, "cm");
	assert_string_equal(m->namespace, "ns");
	assert_int_equal(m->generation, 3);
	assert_int_equal(m->n_finalizers, 2);
	assert_string_equal(m->finalizers[0], "x/y");
	assert_string_equal(m->finalizers[1], "foregroundDeletion");
	assert_int_equal(m->n_labels, 1);
	assert_string_equal(m->labels[0].value, "1");
	shm_meta_view_free(&mv);
	shm_rec_enc_release(&e);
	kube_object_free(p);
}

static void test_wrong_kind(void **state)
{
	(void)state;
	struct kube_partial *p;
	struct shm_rec_enc e = {0};
	struct shm_record_in in;
	struct shm_obj o;
	struct shm_pod_view pv;
	struct shm_rs_view rv;

	assert_int_equal(kube_decode_partial(PARTIAL, strlen(PARTIAL), 0, &p), 0);
	assert_int_equal(shm_rec_build(&e, 0, (enum shm_record_kind)77, p, &in), -EINVAL);
	assert_int_equal(shm_rec_build(&e, 0, SHM_RECORD_META, p, &in), 0);
	to_obj(&in, &o);
	assert_int_equal(shm_pod_view_init(&o, &pv), -EINVAL);
	assert_null(o.mem_); /* moved even on failure */
	shm_pod_view_free(&pv);
	to_obj(&in, &o);
	assert_int_equal(shm_rs_view_init(&o, &rv), -EINVAL);
	shm_rs_view_free(&rv);
	shm_rec_enc_release(&e);
	kube_object_free(p);
}

static const char DEPLOY[] =
        "{\"kind\":\"Deployment\",\"apiVersion\":\"apps/v1\",\"metadata\":{\"name\":\"d\","
        "\"namespace\":\"ns\",\"uid\":\"u-d\",\"resourceVersion\":\"9\",\"annotations\":{"
        "\"deployment.kubernetes.io/revision\":\"2\",\"example.com/any\":\"kept too\","
        "\"kubectl.kubernetes.io/last-applied-configuration\":\"{\\\"x\\\":1}\"},"
        "\"finalizers\":[\"f\"]},\"spec\":{\"replicas\":3,\"template\":{\"spec\":{}}}}";

/* A full-object record: every annotation (not only the ones controllers' typed records keep)
 * and the object's JSON byte for byte, from a single object and from a list. */
static void test_full_object(void **state)
{
	(void)state;
	struct kube_object *ko;
	struct shm_rec_enc e = {0};
	struct shm_record_in in;
	struct shm_obj o;
	struct shm_object_view v;
	char *padded;

	assert_int_equal(asprintf(&padded, "  %s\n", DEPLOY) > 0, 1);
	assert_int_equal(kube_decode(KUBE_KIND_OBJECT, padded, strlen(padded), 0, (void **)&ko), 0);
	assert_int_equal(ko->raw_len, strlen(DEPLOY));
	assert_memory_equal(ko->raw, DEPLOY, ko->raw_len);
	assert_int_equal(ko->meta.n_annotations, 3);
	assert_int_equal(shm_rec_build(&e, 1, SHM_RECORD_OBJECT, ko, &in), 0);
	to_obj(&in, &o);
	assert_int_equal(shm_object_view_init(&o, &v), 0);
	assert_string_equal(v.o.api_version, "apps/v1");
	assert_string_equal(v.o.kind, "Deployment");
	assert_int_equal(v.o.meta.n_annotations, 3);
	assert_string_equal(kube_labels_get(v.o.meta.annotations, 3, "example.com/any"),
	                    "kept too");
	assert_string_equal(kube_labels_get(v.o.meta.annotations, 3,
	                                    "kubectl.kubernetes.io/last-applied-configuration"),
	                    "{\"x\":1}");
	assert_int_equal(v.o.raw_len, strlen(DEPLOY));
	assert_string_equal(v.o.raw, DEPLOY);
	assert_int_equal(v.o.meta.n_finalizers, 1);
	assert_string_equal(v.o.meta.finalizers[0], "f");
	shm_object_view_free(&v);
	/* the meta view reads any record, a full object's too */
	struct shm_meta_view mv;
	to_obj(&in, &o);
	assert_int_equal(shm_meta_view_init(&o, &mv), 0);
	assert_string_equal(mv.p.meta.name, "d");
	assert_int_equal(mv.p.meta.n_finalizers, 1);
	shm_meta_view_free(&mv);
	/* a full-object view of another kind of record refuses it */
	struct kube_partial *p;
	assert_int_equal(kube_decode_partial(PARTIAL, strlen(PARTIAL), 0, &p), 0);
	assert_int_equal(shm_rec_build(&e, 0, SHM_RECORD_META, p, &in), 0);
	to_obj(&in, &o);
	assert_int_equal(shm_object_view_init(&o, &v), -EINVAL);
	shm_object_view_free(&v);
	kube_object_free(p);
	/* the object kind without its JSON is not a full object */
	ko->raw = NULL;
	assert_int_equal(shm_rec_build(&e, 1, SHM_RECORD_OBJECT, ko, &in), -EINVAL);
	kube_object_free(ko);
	free(padded);
	shm_rec_enc_release(&e);
}

struct list_seen {
	int n;
	char names[4][8];
	size_t raw_len[4];
};

static int list_fn(void *obj, void *ud)
{
	struct list_seen *ls = ud;
	struct kube_object *ko = obj;
	if (ls->n < 4) {
		snprintf(ls->names[ls->n], sizeof ls->names[0], "%s", ko->meta.name);
		ls->raw_len[ls->n] = ko->raw_len;
		assert_int_equal(ko->raw[0], '{');
		assert_int_equal(ko->raw[ko->raw_len - 1], '}');
	}
	ls->n++;
	kube_object_free(obj);
	return 0;
}

static void test_full_object_list(void **state)
{
	(void)state;
	static const char LIST[] =
	        "{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\":{"
	        "\"resourceVersion\":"
	        "\"5\"},\"items\":[ "
	        "{\"metadata\":{\"name\":\"a\",\"uid\":\"1\",\"resourceVersion\":"
	        "\"3\"},\"data\":{\"k\":\"v\"}} ,\n{\"metadata\":{\"name\":\"bb\",\"uid\":\"2\","
	        "\"resourceVersion\":\"4\"}}]}";
	struct list_seen ls = {0};
	struct kube_list_meta lm;
	/* the number of items */
	assert_int_equal(
	        kube_decode_list(KUBE_KIND_OBJECT, LIST, strlen(LIST), 0, list_fn, &ls, &lm), 2);
	assert_int_equal(ls.n, 2);
	assert_string_equal(ls.names[0], "a");
	assert_int_equal(ls.raw_len[0],
	                 strlen("{\"metadata\":{\"name\":\"a\",\"uid\":\"1\",\"resourceVersion\":"
	                        "\"3\"},\"data\":{\"k\":\"v\"}}"));
	assert_string_equal(ls.names[1], "bb");
}

/* Pod templates are stored parsed: the pod a sync builds from the record's template parts
 * (kube_encode_pod_from_template_parts, no JSON parse) is the pod built from the template's
 * JSON (kube_encode_pod_from_template), field for field, errors included. */
static void test_template_parts(void **state)
{
	(void)state;
	static const char *tmpls[] = {
	        "{\"metadata\":{\"labels\":{\"app\":\"web\",\"t\":\"\\u00e9x\"},\"annotations\":{"
	        "\"a\":\"1\"},\"finalizers\":[\"f/x\"]},\"spec\":{\"containers\":[{\"name\":\"c\","
	        "\"image\":\"i\"}]}}",
	        "{ \"spec\" : { \"x\" : [1, 2] } , \"metadata\" : { \"labels\" : { \"a\" : \"b\" } "
	        ", "
	        "\"annotations\" : { } , \"finalizers\" : [ ] } }",
	        "{\"metadata\":{\"labels\":{\"a\":\"b\"}}}",               /* no spec */
	        "{\"metadata\":{\"labels\":{\"a\":\"b\"}},\"spec\":null}", /* spec null */
	        "{\"metadata\":{\"labels\":{}},\"spec\":{}}",              /* no labels */
	        "{\"metadata\":{},\"spec\":{}}",                           /* no labels */
	        "{}",
	};
	struct kube_owner_ref ref = {"apps/v1", "ReplicaSet", "rs", "u-rs", 1, 1};
	struct shm_rec_enc e = {0};
	for (size_t i = 0; i < sizeof(tmpls) / sizeof(tmpls[0]); i++) {
		char json[1024];
		snprintf(json, sizeof json,
		         "{\"metadata\":{\"name\":\"rs\",\"uid\":\"u-rs\",\"resourceVersion\":"
		         "\"1\"},"
		         "\"spec\":{\"template\":%s}}",
		         tmpls[i]);
		struct kube_replicaset *rs;
		assert_int_equal(kube_decode_replicaset(json, strlen(json), 0, &rs), 0);
		assert_true(rs->template_parts.valid);
		struct shm_record_in in;
		struct shm_obj o;
		struct shm_rs_view v;
		assert_int_equal(shm_rec_build(&e, 0, SHM_RECORD_REPLICASET, rs, &in), 0);
		to_obj(&in, &o);
		assert_int_equal(shm_rs_view_init(&o, &v), 0);
		assert_true(v.rs.template_parts.valid);
		char *want = NULL, *got = NULL, *got2 = NULL;
		int rw = kube_encode_pod_from_template(rs->template_json, rs->template_json_len,
		                                       "rs", &ref, &want);
		int rg =
		        kube_encode_pod_from_template_parts(&v.rs.template_parts, "rs", &ref, &got);
		int rg2 =
		        kube_encode_pod_from_template_parts(&rs->template_parts, "rs", &ref, &got2);
		assert_int_equal(rg, rw);
		assert_int_equal(rg2, rw);
		if (rw == 0) {
			cJSON *a = cJSON_Parse(want), *b = cJSON_Parse(got), *c = cJSON_Parse(got2);
			assert_non_null(b);
			if (!cJSON_Compare(a, b, true) || !cJSON_Compare(a, c, true))
				fail_msg("template %zu:\n want %s\n got  %s\n got2 %s", i, want,
				         got, got2);
			cJSON_Delete(a);
			cJSON_Delete(b);
			cJSON_Delete(c);
		}
		free(want);
		free(got);
		free(got2);
		shm_rs_view_free(&v);
		kube_object_free(rs);
	}
	/* a record without parts (a template the decoder could not split) says so */
	struct kube_template_parts none = {0};
	char *body = NULL;
	assert_int_equal(kube_encode_pod_from_template_parts(&none, "rs", &ref, &body), -EPROTO);
	shm_rec_enc_release(&e);
}

/* A ReplicaSet record keeps every annotation the decoder kept (informerd decodes ReplicaSets
 * with KUBE_DECODE_ALL_ANNOTATIONS for the Deployment controller), after its conditions and
 * before its finalizers, without disturbing either. */
static void test_rs_annotations(void **state)
{
	(void)state;
	static const char json[] =
	        "{\"metadata\":{\"name\":\"rs\",\"uid\":\"u-rs\",\"resourceVersion\":\"1\","
	        "\"annotations\":{\"deployment.kubernetes.io/revision\":\"4\",\"team\":\"a\","
	        "\"empty\":\"\"},\"finalizers\":[\"f/x\"]},"
	        "\"spec\":{\"replicas\":2,\"template\":{\"metadata\":{\"labels\":{\"a\":\"b\"}}}},"
	        "\"status\":{\"replicas\":2,\"conditions\":[{\"type\":\"ReplicaFailure\","
	        "\"status\":\"True\",\"reason\":\"R\",\"message\":\"m\"}]}}";
	struct shm_rec_enc e = {0};
	for (int all = 0; all <= 1; all++) {
		struct kube_replicaset *rs;
		struct shm_record_in in;
		struct shm_obj o;
		struct shm_rs_view v;
		assert_int_equal(kube_decode_replicaset(json, strlen(json),
		                                        all ? KUBE_DECODE_ALL_ANNOTATIONS : 0, &rs),
		                 0);
		assert_int_equal(shm_rec_build(&e, 0, SHM_RECORD_REPLICASET, rs, &in), 0);
		to_obj(&in, &o);
		assert_int_equal(shm_rs_view_init(&o, &v), 0);
		const struct kube_object_meta *m = &v.rs.meta;
		/* without the flag the decoder keeps deployment.kubernetes.io/ keys only */
		assert_int_equal(m->n_annotations, all ? 3 : 1);
		assert_string_equal(m->annotations[0].key, "deployment.kubernetes.io/revision");
		assert_string_equal(m->annotations[0].value, "4");
		if (all) {
			assert_string_equal(m->annotations[1].key, "team");
			assert_string_equal(m->annotations[1].value, "a");
			assert_string_equal(m->annotations[2].key, "empty");
			assert_string_equal(m->annotations[2].value, "");
		}
		assert_int_equal(v.rs.status.n_conditions, 1);
		assert_string_equal(v.rs.status.conditions[0].type, "ReplicaFailure");
		assert_string_equal(v.rs.status.conditions[0].message, "m");
		assert_int_equal(m->n_finalizers, 1);
		assert_string_equal(m->finalizers[0], "f/x");
		assert_int_equal(v.rs.spec_replicas, 2);
		assert_null(m->generate_name); /* none in the object */
		shm_rs_view_free(&v);
		kube_object_free(rs);
	}
	shm_rec_enc_release(&e);
}

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

/* Views of every truncation and of counts the bytes cannot hold: an error, never a read past
 * the payload (run under ASan by `make asan`). */
static void try_views(enum shm_record_kind kind, const void *payload, size_t len, int *ret)
{
	struct shm_obj tmp = {.kind = kind,
	                      .name = "n",
	                      .ns = "",
	                      .uid = "u",
	                      .rv = "1",
	                      .payload = payload,
	                      .payload_len = len};
	struct shm_obj o;
	assert_int_equal(shm_obj_clone(&tmp, &o), 0);
	if (kind == SHM_RECORD_POD) {
		struct shm_pod_view v;
		*ret = shm_pod_view_init(&o, &v);
		shm_pod_view_free(&v);
	} else if (kind == SHM_RECORD_REPLICASET) {
		struct shm_rs_view v;
		*ret = shm_rs_view_init(&o, &v);
		shm_rs_view_free(&v);
	} else if (kind == SHM_RECORD_OBJECT) {
		struct shm_object_view v;
		*ret = shm_object_view_init(&o, &v);
		shm_object_view_free(&v);
	} else {
		struct shm_meta_view v;
		*ret = shm_meta_view_init(&o, &v);
		shm_meta_view_free(&v);
	}
}

static void damage(enum shm_record_kind kind, const uint8_t *pl, size_t len)
{
	int r;
	try_views(kind, pl, len, &r);
	assert_int_equal(r, 0);
	for (size_t n = 0; n < len; n++) {
		try_views(kind, pl, n, &r);
		assert_true(r == -EBADMSG);
	}
	uint8_t *c = malloc(len);
	struct shm_rec_hdr h;
	memcpy(c, pl, len);
	memcpy(&h, c, sizeof h);
	h.n_finalizers = UINT32_MAX; /* more finalizers than blobs */
	memcpy(c, &h, sizeof h);
	try_views(kind, c, len, &r);
	assert_int_equal(r, -EBADMSG);
	memcpy(c, pl, len);
	h.n_finalizers = 0;
	h.n_blobs = UINT32_MAX; /* more blobs than bytes */
	memcpy(c, &h, sizeof h);
	try_views(kind, c, len, &r);
	assert_int_equal(r, -EBADMSG);
	memcpy(c, pl, len);
	memcpy(&h, c, sizeof h);
	h.fixed_len = UINT32_MAX;
	memcpy(c, &h, sizeof h);
	try_views(kind, c, len, &r);
	assert_int_equal(r, -EBADMSG);
	memcpy(c, pl, len);
	memcpy(&h, c, sizeof h);
	h.magic ^= 1;
	memcpy(c, &h, sizeof h);
	try_views(kind, c, len, &r);
	assert_int_equal(r, -EPROTONOSUPPORT);
	/* a blob length word pointing past the end */
	memcpy(c, pl, len);
	uint32_t big = UINT32_MAX - 2;
	memcpy(c + sizeof h + h.fixed_len, &big, 4);
	try_views(kind, c, len, &r);
	assert_int_equal(r, -EBADMSG);
	if (kind == SHM_RECORD_OBJECT) {
		struct shm_rec_object fo;
		memcpy(c, pl, len);
		memcpy(&fo, c + sizeof h, sizeof fo);
		fo.n_annotations = UINT32_MAX / 2; /* more annotations than blobs */
		memcpy(c + sizeof h, &fo, sizeof fo);
		try_views(kind, c, len, &r);
		assert_int_equal(r, -EBADMSG);
		memcpy(c, pl, len);
		fo.n_annotations = 0;
		fo.body_format = 9;
		memcpy(c + sizeof h, &fo, sizeof fo);
		try_views(kind, c, len, &r);
		assert_int_equal(r, -EPROTONOSUPPORT);
	}
	if (kind == SHM_RECORD_POD) {
		/* endpoint part counts the blobs cannot hold, each alone and both at their limit
		 * (3 * UINT32_MAX ports must not wrap) */
		const uint32_t bad[][2] = {
		        {UINT32_MAX, 0}, {0, UINT32_MAX}, {UINT32_MAX, UINT32_MAX}, {0, 2}};
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			struct shm_rec_pod fp;
			memcpy(c, pl, len);
			memcpy(&fp, c + sizeof h, sizeof fp);
			fp.ep_n_pod_ips = bad[i][0];
			fp.ep_n_ports = bad[i][1];
			memcpy(c + sizeof h, &fp, sizeof fp);
			try_views(kind, c, len, &r);
			assert_int_equal(r, -EBADMSG);
		}
	}
	if (kind == SHM_RECORD_REPLICASET) {
		struct shm_rec_rs fr;
		memcpy(c, pl, len);
		memcpy(&fr, c + sizeof h, sizeof fr);
		fr.n_conditions = UINT32_MAX; /* more conditions than blobs */
		memcpy(c + sizeof h, &fr, sizeof fr);
		try_views(kind, c, len, &r);
		assert_int_equal(r, -EBADMSG);
	}
	free(c);
}

static void test_damaged(void **state)
{
	(void)state;
	struct shm_rec_enc e = {0};
	struct shm_record_in in;
	size_t len;
	char *pj = slurp("kube/tests/fixtures/pod-running.json", &len);
	struct kube_pod *pod;
	assert_int_equal(kube_decode_pod(pj, len, 0, &pod), 0);
	assert_int_equal(shm_rec_build(&e, 0, SHM_RECORD_POD, pod, &in), 0);
	damage(SHM_RECORD_POD, in.payload, in.payload_len);
	char *rj = slurp("kube/tests/fixtures/replicaset.json", &len);
	struct kube_replicaset *rs;
	assert_int_equal(kube_decode_replicaset(rj, len, KUBE_DECODE_ALL_ANNOTATIONS, &rs), 0);
	assert_int_equal(rs->meta.n_annotations, 4); /* their blobs damaged too */
	assert_int_equal(shm_rec_build(&e, 0, SHM_RECORD_REPLICASET, rs, &in), 0);
	damage(SHM_RECORD_REPLICASET, in.payload, in.payload_len);
	struct kube_partial *p;
	assert_int_equal(kube_decode_partial(PARTIAL, strlen(PARTIAL), 0, &p), 0);
	assert_int_equal(shm_rec_build(&e, 0, SHM_RECORD_META, p, &in), 0);
	damage(SHM_RECORD_META, in.payload, in.payload_len);
	kube_object_free(p);
	struct kube_object *ko;
	assert_int_equal(kube_decode(KUBE_KIND_OBJECT, DEPLOY, strlen(DEPLOY), 0, (void **)&ko), 0);
	assert_int_equal(shm_rec_build(&e, 0, SHM_RECORD_OBJECT, ko, &in), 0);
	damage(SHM_RECORD_OBJECT, in.payload, in.payload_len);
	kube_object_free(ko);
	kube_object_free(rs);
	kube_object_free(pod);
	free(rj);
	free(pj);
	shm_rec_enc_release(&e);
}

/* Record version 6: a pod keeps the node its required node affinity targets (affinity_node,
 * the blob after node_name) apart from spec.nodeName, with its finalizers after both. */
static void test_pod_affinity_node(void **state)
{
	(void)state;
	static const char *const pods[] = {
	        /* unbound daemon pod: the target only in the affinity */
	        "{\"metadata\":{\"name\":\"d\",\"namespace\":\"ns\",\"uid\":\"u1\","
	        "\"resourceVersion\":\"3\",\"finalizers\":[\"a/b\"]},\"spec\":{\"affinity\":"
	        "{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
	        "{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\","
	        "\"operator\":\"In\",\"values\":[\"node-7\"]}]}]}}}}}",
	        /* bound since: both, and the finalizers still found after them */
	        "{\"metadata\":{\"name\":\"d\",\"namespace\":\"ns\",\"uid\":\"u1\","
	        "\"resourceVersion\":\"4\",\"finalizers\":[\"a/b\"]},\"spec\":{\"nodeName\":"
	        "\"node-7\",\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnored"
	        "DuringExecution\":{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":"
	        "\"metadata.name\",\"operator\":\"In\",\"values\":[\"node-8\"]}]}]}}}}}",
	        /* neither */
	        "{\"metadata\":{\"name\":\"d\",\"namespace\":\"ns\",\"uid\":\"u1\","
	        "\"resourceVersion\":\"5\",\"finalizers\":[\"a/b\"]},\"spec\":{}}",
	};
	static const char *const want_node[] = {NULL, "node-7", NULL};
	static const char *const want_aff[] = {"node-7", "node-8", NULL};
	struct shm_rec_enc e = {0};
	for (size_t i = 0; i < 3; i++) {
		struct kube_pod *pod;
		struct shm_record_in in;
		struct shm_obj o;
		struct shm_pod_view v;
		assert_int_equal(kube_decode_pod(pods[i], strlen(pods[i]), 0, &pod), 0);
		assert_int_equal(shm_rec_build(&e, 0, SHM_RECORD_POD, pod, &in), 0);
		to_obj(&in, &o);
		assert_int_equal(shm_pod_view_init(&o, &v), 0);
		if (want_node[i])
			assert_string_equal(v.pod.node_name, want_node[i]);
		else
			assert_null(v.pod.node_name);
		if (want_aff[i])
			assert_string_equal(v.pod.affinity_node, want_aff[i]);
		else
			assert_null(v.pod.affinity_node);
		assert_int_equal(v.pod.meta.n_finalizers, 1);
		assert_string_equal(v.pod.meta.finalizers[0], "a/b");
		shm_pod_view_free(&v);
		if (i == 0) { /* every truncation and bad count of the new layout */
			damage(SHM_RECORD_POD, in.payload, in.payload_len);
			/* a version-5 pod (node_name only) is refused, not misread */
			struct shm_rec_view rv;
			assert_int_equal(shm_rec_parse(in.payload, in.payload_len, &rv), 0);
			uint8_t *c = malloc(in.payload_len);
			memcpy(c, in.payload, in.payload_len);
			uint32_t old = 0x354b5243u; /* "CRK5" */
			memcpy(c, &old, 4);
			int r;
			try_views(SHM_RECORD_POD, c, in.payload_len, &r);
			assert_int_equal(r, -EPROTONOSUPPORT);
			/* a pod record short of the affinity blob (one blob before the finalizers)
			 */
			struct shm_rec_hdr h;
			memcpy(&h, in.payload, sizeof h);
			h.n_finalizers = h.n_blobs - 1;
			memcpy(c, &h, sizeof h);
			try_views(SHM_RECORD_POD, c, in.payload_len, &r);
			assert_int_equal(r, -EBADMSG);
			free(c);
		}
		kube_object_free(pod);
	}
	shm_rec_enc_release(&e);
}

/* Record version 8: a ReplicaSet keeps its generateName (the blob after the annotations, before
 * the finalizers), which the status PUT sends back; a record one blob short of it is refused. */
static void test_rs_generate_name(void **state)
{
	(void)state;
	static const char json[] =
	        "{\"metadata\":{\"name\":\"web-x\",\"generateName\":\"web-\",\"uid\":\"u\","
	        "\"resourceVersion\":\"1\",\"annotations\":{\"a\":\"1\"},\"finalizers\":[\"f/x\"]},"
	        "\"spec\":{\"replicas\":1}}";
	struct shm_rec_enc e = {0};
	struct kube_replicaset *rs;
	struct shm_record_in in;
	struct shm_obj o;
	struct shm_rs_view v;
	assert_int_equal(
	        kube_decode_replicaset(json, strlen(json), KUBE_DECODE_ALL_ANNOTATIONS, &rs), 0);
	assert_int_equal(shm_rec_build(&e, 0, SHM_RECORD_REPLICASET, rs, &in), 0);
	to_obj(&in, &o);
	assert_int_equal(shm_rs_view_init(&o, &v), 0);
	assert_string_equal(v.rs.meta.generate_name, "web-");
	assert_int_equal(v.rs.meta.n_annotations, 1);
	assert_string_equal(v.rs.meta.finalizers[0], "f/x");
	shm_rs_view_free(&v);
	damage(SHM_RECORD_REPLICASET, in.payload, in.payload_len);
	uint8_t *c = malloc(in.payload_len);
	struct shm_rec_hdr h;
	int r;
	memcpy(c, in.payload, in.payload_len);
	memcpy(&h, in.payload, sizeof h);
	h.n_finalizers = h.n_blobs - 1 - 2; /* the annotation and generateName read as finalizers */
	memcpy(c, &h, sizeof h);
	try_views(SHM_RECORD_REPLICASET, c, in.payload_len, &r);
	assert_int_equal(r, -EBADMSG);
	free(c);
	kube_object_free(rs);
	shm_rec_enc_release(&e);
}

/* Record version 7: a pod's header flags carry has_ephemeral_volume and has_resource_claims,
 * read back by the view and by shm_pod_flag without a view; a version-6 pod is refused (its
 * missing flags would read as "none": the controllers would skip pods that have them). */
static void test_pod_volume_flags(void **state)
{
	(void)state;
	static const char *const specs[] = {
	        "{}",
	        "{\"volumes\":[{\"name\":\"v\",\"ephemeral\":{}}]}",
	        "{\"resourceClaims\":[{\"name\":\"c\"}]}",
	        "{\"volumes\":[{\"name\":\"v\",\"ephemeral\":{}}],\"resourceClaims\":[{}]}",
	};
	struct shm_rec_enc e = {0};
	for (size_t i = 0; i < 4; i++) {
		char js[512];
		struct kube_pod *pod;
		struct shm_record_in in;
		struct shm_obj o;
		struct shm_pod_view v;
		bool eph = i & 1, claims = i & 2;
		snprintf(js, sizeof(js),
		         "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"uid\":\"u\","
		         "\"resourceVersion\":\"1\",\"deletionGracePeriodSeconds\":3,"
		         "\"finalizers\":[\"orphan\"]},\"spec\":%s}",
		         specs[i]);
		assert_int_equal(kube_decode_pod(js, strlen(js), 0, &pod), 0);
		assert_int_equal(shm_rec_build(&e, 0, SHM_RECORD_POD, pod, &in), 0);
		to_obj(&in, &o);
		assert_int_equal(shm_pod_flag(&o, SHM_REC_POD_EPHEMERAL), eph);
		assert_int_equal(shm_pod_flag(&o, SHM_REC_POD_CLAIMS), claims);
		assert_int_equal(shm_pod_view_init(&o, &v), 0);
		assert_int_equal(v.pod.has_ephemeral_volume, eph);
		assert_int_equal(v.pod.has_resource_claims, claims);
		/* the other header flags are untouched by them */
		assert_true(v.pod.meta.has_deletion_grace_period_seconds);
		assert_string_equal(v.pod.meta.finalizers[0], "orphan");
		shm_pod_view_free(&v);
		uint8_t *c = malloc(in.payload_len);
		memcpy(c, in.payload, in.payload_len);
		uint32_t old = 0x364b5243u; /* "CRK6" */
		memcpy(c, &old, 4);
		struct shm_obj oo; /* o went to the view */
		to_obj(&in, &oo);
		oo.payload = c;
		assert_int_equal(shm_pod_flag(&oo, SHM_REC_POD_EPHEMERAL), -EPROTONOSUPPORT);
		int r;
		try_views(SHM_RECORD_POD, c, in.payload_len, &r);
		assert_int_equal(r, -EPROTONOSUPPORT);
		oo.kind = SHM_RECORD_META;
		assert_int_equal(shm_pod_flag(&oo, SHM_REC_POD_EPHEMERAL), -EINVAL);
		shm_obj_release(&oo);
		free(c);
		kube_object_free(pod);
	}
	shm_rec_enc_release(&e);
}

/* The pod's EndpointSlice part (kube_pod_endpoint) through the record and the view: every
 * field as decoded, and its blobs right before the finalizers whatever comes after node_name. */
static void test_pod_endpoint_part(void **state)
{
	(void)state;
	static const char pj[] =
	        "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"uid\":\"u-p\","
	        "\"resourceVersion\":\"5\",\"finalizers\":[\"a/b\",\"c/d\"]},"
	        "\"spec\":{\"nodeName\":\"n1\",\"hostname\":\"web-0\",\"subdomain\":\"web\","
	        "\"containers\":[{\"name\":\"c\",\"ports\":[{\"name\":\"http\","
	        "\"containerPort\":8080,\"protocol\":\"TCP\"},{\"containerPort\":1}]}],"
	        "\"initContainers\":[{\"name\":\"s\",\"restartPolicy\":\"Always\",\"ports\":"
	        "[{\"name\":\"m\",\"containerPort\":-7}]}]},"
	        "\"status\":{\"podIP\":\"10.0.0.1\",\"podIPs\":[{\"ip\":\"10.0.0.1\"},"
	        "{\"ip\":\"fd00::1\"},{}]}}";
	struct kube_pod *pod;
	struct shm_rec_enc e = {0};
	struct shm_record_in in;
	struct shm_obj o;
	struct shm_pod_view v;

	assert_int_equal(kube_decode_pod(pj, strlen(pj), 0, &pod), 0);
	assert_int_equal(shm_rec_build(&e, 0, SHM_RECORD_POD, pod, &in), 0);
	to_obj(&in, &o);
	assert_int_equal(shm_pod_view_init(&o, &v), 0);
	const struct kube_pod_endpoint *ep = &v.pod.ep;
	assert_string_equal(v.pod.node_name, "n1");
	assert_string_equal(ep->hostname, "web-0");
	assert_string_equal(ep->subdomain, "web");
	assert_string_equal(ep->pod_ip, "10.0.0.1");
	assert_int_equal(ep->n_pod_ips, 3);
	assert_string_equal(ep->pod_ips[0], "10.0.0.1");
	assert_string_equal(ep->pod_ips[1], "fd00::1");
	assert_string_equal(ep->pod_ips[2], ""); /* an item without ip */
	assert_int_equal(ep->n_ports, 2);
	assert_string_equal(ep->ports[0].name, "http");
	assert_string_equal(ep->ports[0].protocol, "TCP");
	assert_int_equal(ep->ports[0].container_port, 8080);
	assert_false(ep->ports[0].sidecar);
	assert_string_equal(ep->ports[1].name, "m");
	assert_null(ep->ports[1].protocol);
	assert_int_equal(ep->ports[1].container_port, -7);
	assert_true(ep->ports[1].sidecar);
	assert_int_equal(v.pod.meta.n_finalizers, 2);
	assert_string_equal(v.pod.meta.finalizers[1], "c/d");
	shm_pod_view_free(&v);

	/* a pod with none of it: empty part, NULL strings */
	static const char bare[] = "{\"metadata\":{\"name\":\"q\",\"uid\":\"u\","
	                           "\"resourceVersion\":\"1\"}}";
	kube_object_free(pod);
	assert_int_equal(kube_decode_pod(bare, strlen(bare), 0, &pod), 0);
	assert_int_equal(shm_rec_build(&e, 0, SHM_RECORD_POD, pod, &in), 0);
	to_obj(&in, &o);
	assert_int_equal(shm_pod_view_init(&o, &v), 0);
	assert_null(v.pod.ep.hostname);
	assert_null(v.pod.ep.subdomain);
	assert_null(v.pod.ep.pod_ip);
	assert_int_equal(v.pod.ep.n_pod_ips, 0);
	assert_int_equal(v.pod.ep.n_ports, 0);
	shm_pod_view_free(&v);
	kube_object_free(pod);
	shm_rec_enc_release(&e);
}

/* Version 7: the Ready condition as three states (the first one counts) and the tolerations
 * whole, through the JSON decoder, the record and the view. */
static void test_pod_ready_and_tolerations(void **state)
{
	(void)state;
	static const char pj[] =
	        "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"uid\":\"u-p\","
	        "\"resourceVersion\":\"5\",\"finalizers\":[\"a/b\"]},"
	        "\"spec\":{\"nodeName\":\"n1\",\"hostname\":\"h\",\"tolerations\":["
	        "{\"key\":\"node.kubernetes.io/unreachable\",\"operator\":\"Exists\","
	        "\"effect\":\"NoExecute\",\"tolerationSeconds\":300},"
	        "{\"key\":\"k\",\"operator\":\"Equal\",\"value\":\"v\",\"effect\":\"NoSchedule\"},"
	        "{\"operator\":\"Exists\",\"tolerationSeconds\":-5},"
	        "null,{\"key\":\"\",\"value\":\"\",\"tolerationSeconds\":0,\"x\":[1]}]},"
	        "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"},"
	        "{\"type\":\"Ready\",\"status\":\"True\"},{\"type\":\"DisruptionTarget\","
	        "\"status\":\"True\",\"reason\":\"DeletionByTaintManager\"}],"
	        "\"podIP\":\"10.0.0.1\"}}";
	struct kube_pod *pod;
	struct shm_rec_enc e = {0};
	struct shm_record_in in;
	struct shm_obj o;
	struct shm_pod_view v;

	assert_int_equal(kube_decode_pod(pj, strlen(pj), 0, &pod), 0);
	assert_int_equal(pod->ready_status, KUBE_COND_FALSE); /* the first Ready */
	assert_int_equal(shm_rec_build(&e, 0, SHM_RECORD_POD, pod, &in), 0);
	to_obj(&in, &o);
	assert_int_equal(shm_pod_view_init(&o, &v), 0);
	const struct kube_pod *q = &v.pod;
	assert_int_equal(q->ready_status, KUBE_COND_FALSE);
	assert_true(q->dt_taint_manager);
	assert_int_equal(q->n_tolerations, 5);
	assert_string_equal(q->tolerations[0].key, "node.kubernetes.io/unreachable");
	assert_string_equal(q->tolerations[0].op, "Exists");
	assert_null(q->tolerations[0].value);
	assert_string_equal(q->tolerations[0].effect, "NoExecute");
	assert_true(q->tolerations[0].has_seconds);
	assert_int_equal(q->tolerations[0].seconds, 300);
	assert_string_equal(q->tolerations[1].value, "v");
	assert_false(q->tolerations[1].has_seconds);
	assert_null(q->tolerations[2].key);
	assert_int_equal(q->tolerations[2].seconds, -5);
	/* null: an empty toleration, as a Go client decodes it */
	assert_null(q->tolerations[3].key);
	assert_null(q->tolerations[3].op);
	assert_false(q->tolerations[3].has_seconds);
	assert_true(q->tolerations[4].has_seconds);
	assert_int_equal(q->tolerations[4].seconds, 0);
	/* the parts around them did not move */
	assert_string_equal(q->node_name, "n1");
	assert_string_equal(q->ep.hostname, "h");
	assert_string_equal(q->ep.pod_ip, "10.0.0.1");
	assert_string_equal(q->meta.finalizers[0], "a/b");
	/* the node a raw reader sees (the arena's node index) */
	const char *nd;
	size_t nl;
	assert_int_equal(shm_rec_pod_node(in.payload, in.payload_len, &nd, &nl), 1);
	assert_string_equal(nd, "n1");
	shm_pod_view_free(&v);
	kube_object_free(pod);

	/* the other states */
	static const char *const st[] = {"True", "Unknown", "Maybe", NULL};
	static const uint8_t want[] = {KUBE_COND_TRUE, KUBE_COND_UNKNOWN, KUBE_COND_UNKNOWN,
	                               KUBE_COND_ABSENT};
	for (int i = 0; i < 4; i++) {
		char buf[256];
		snprintf(buf, sizeof(buf),
		         "{\"metadata\":{\"name\":\"q\",\"uid\":\"u\",\"resourceVersion\":\"1\"},"
		         "\"status\":{\"conditions\":[{\"type\":\"%s\",\"status\":\"%s\"}]}}",
		         st[i] ? "Ready" : "PodScheduled", st[i] ? st[i] : "True");
		assert_int_equal(kube_decode_pod(buf, strlen(buf), 0, &pod), 0);
		assert_int_equal(shm_rec_build(&e, 0, SHM_RECORD_POD, pod, &in), 0);
		to_obj(&in, &o);
		assert_int_equal(shm_pod_view_init(&o, &v), 0);
		assert_int_equal(v.pod.ready_status, want[i]);
		assert_int_equal(v.pod.n_tolerations, 0);
		assert_null(v.pod.tolerations);
		assert_false(v.pod.dt_taint_manager);
		assert_int_equal(shm_rec_pod_node(in.payload, in.payload_len, &nd, &nl), 0);
		shm_pod_view_free(&v);
		kube_object_free(pod);
	}
	shm_rec_enc_release(&e);
}

/* Malformed tolerations fail the pod's decode (a field of the wrong type, as for every typed
 * field); a damaged toleration blob fails the view, never a read outside the record. */
static void test_pod_tolerations_malformed(void **state)
{
	(void)state;
	static const char *const bad[] = {
	        "{\"spec\":{\"tolerations\":[{\"tolerationSeconds\":\"5\"}]}}",
	        "{\"spec\":{\"tolerations\":[{\"tolerationSeconds\":1.5}]}}",
	        "{\"spec\":{\"tolerations\":[{\"tolerationSeconds\":99999999999999999999}]}}",
	        "{\"spec\":{\"tolerations\":[{\"key\":7}]}}",
	        "{\"spec\":{\"tolerations\":[\"x\"]}}",
	        "{\"spec\":{\"tolerations\":{\"key\":\"k\"}}}",
	};
	struct kube_pod *pod = NULL;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_true(kube_decode_pod(bad[i], strlen(bad[i]), 0, &pod) < 0);
		pod = NULL;
	}

	/* a record whose toleration blob is damaged */
	static const char pj[] = "{\"metadata\":{\"name\":\"p\",\"uid\":\"u\",\"resourceVersion\":"
	                         "\"1\"},\"spec\":{\"tolerations\":[{\"key\":\"k\",\"value\":"
	                         "\"v\"}]}}";
	struct shm_rec_enc e = {0};
	struct shm_record_in in;
	struct shm_obj o;
	struct shm_pod_view v;
	assert_int_equal(kube_decode_pod(pj, strlen(pj), 0, &pod), 0);
	assert_int_equal(shm_rec_build(&e, 0, SHM_RECORD_POD, pod, &in), 0);
	uint8_t *pl = malloc(in.payload_len);
	assert_non_null(pl);
	/* blob 2 (the toleration) starts after the header, the fixed part and two empty blobs */
	size_t at = sizeof(struct shm_rec_hdr) + sizeof(struct shm_rec_pod) + 2 * 5;
	uint32_t l;
	memcpy(pl, in.payload, in.payload_len);
	memcpy(&l, pl + at, 4);
	assert_int_equal(l, SHM_REC_POD_TOL_RAW + 1 + 1 + 1 + 1 + 2); /* k, "", v, "" */
	struct shm_record_in dam = in;
	dam.payload = pl;
	/* a string without its NUL inside the blob */
	pl[at + 4 + l - 1] = 'x';
	to_obj(&dam, &o);
	assert_int_equal(shm_pod_view_init(&o, &v), -EBADMSG);
	shm_pod_view_free(&v);
	/* shorter than its raw head */
	memcpy(pl, in.payload, in.payload_len);
	pl[at + 4 + 3] = 0;
	uint32_t shortl = 3;
	memcpy(pl + at, &shortl, 4);
	to_obj(&dam, &o);
	assert_true(shm_pod_view_init(&o, &v) < 0);
	shm_pod_view_free(&v);
	/* more tolerations than blobs: they would overlap the endpoint part */
	memcpy(pl, in.payload, in.payload_len);
	struct shm_rec_pod fp;
	memcpy(&fp, pl + sizeof(struct shm_rec_hdr), sizeof(fp));
	fp.n_tolerations = 1000;
	memcpy(pl + sizeof(struct shm_rec_hdr), &fp, sizeof(fp));
	to_obj(&dam, &o);
	assert_int_equal(shm_pod_view_init(&o, &v), -EBADMSG);
	shm_pod_view_free(&v);
	fp.n_tolerations = UINT32_MAX;
	memcpy(pl + sizeof(struct shm_rec_hdr), &fp, sizeof(fp));
	to_obj(&dam, &o);
	assert_int_equal(shm_pod_view_init(&o, &v), -EBADMSG);
	shm_pod_view_free(&v);
	free(pl);
	kube_object_free(pod);
	shm_rec_enc_release(&e);
}

/* No limit on the count: 20,000 tolerations (each distinct) are stored whole and read back. */
static void test_pod_tolerations_huge(void **state)
{
	(void)state;
	enum { N = 20000 };
	size_t cap = 256 + (size_t)N * 160, len = 0;
	char *pj = malloc(cap);
	assert_non_null(pj);
	len += (size_t)snprintf(pj + len, cap - len,
	                        "{\"metadata\":{\"name\":\"p\",\"uid\":\"u\",\"resourceVersion\":"
	                        "\"1\"},\"spec\":{\"nodeName\":\"n\",\"tolerations\":[");
	for (int i = 0; i < N; i++)
		len += (size_t)snprintf(
		        pj + len, cap - len,
		        "%s{\"key\":\"k%d\",\"operator\":\"Equal\",\"value\":\"v%d\","
		        "\"effect\":\"NoExecute\",\"tolerationSeconds\":%d}",
		        i ? "," : "", i, i, i);
	len += (size_t)snprintf(pj + len, cap - len, "]}}");
	struct kube_pod *pod;
	struct shm_rec_enc e = {0};
	struct shm_record_in in;
	struct shm_obj o;
	struct shm_pod_view v;
	assert_int_equal(kube_decode_pod(pj, len, 0, &pod), 0);
	assert_int_equal(pod->n_tolerations, N);
	assert_int_equal(shm_rec_build(&e, 0, SHM_RECORD_POD, pod, &in), 0);
	to_obj(&in, &o);
	assert_int_equal(shm_pod_view_init(&o, &v), 0);
	assert_int_equal(v.pod.n_tolerations, N);
	for (int i = 0; i < N; i += 997) {
		char k[32], val[32];
		snprintf(k, sizeof(k), "k%d", i);
		snprintf(val, sizeof(val), "v%d", i);
		assert_string_equal(v.pod.tolerations[i].key, k);
		assert_string_equal(v.pod.tolerations[i].value, val);
		assert_int_equal(v.pod.tolerations[i].seconds, i);
	}
	assert_string_equal(v.pod.tolerations[N - 1].effect, "NoExecute");
	assert_string_equal(v.pod.node_name, "n");
	shm_pod_view_free(&v);
	kube_object_free(pod);
	shm_rec_enc_release(&e);
	free(pj);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_owner_tristate),
	        cmocka_unit_test(test_wrong_kind),
	        cmocka_unit_test(test_damaged),
	        cmocka_unit_test(test_full_object),
	        cmocka_unit_test(test_full_object_list),
	        cmocka_unit_test(test_template_parts),
	        cmocka_unit_test(test_rs_annotations),
	        cmocka_unit_test(test_pod_affinity_node),
	        cmocka_unit_test(test_pod_volume_flags),
	        cmocka_unit_test(test_rs_generate_name),
	        cmocka_unit_test(test_pod_endpoint_part),
	        cmocka_unit_test(test_pod_ready_and_tolerations),
	        cmocka_unit_test(test_pod_tolerations_malformed),
	        cmocka_unit_test(test_pod_tolerations_huge),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
