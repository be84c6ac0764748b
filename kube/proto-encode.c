/* SPDX-License-Identifier: Apache-2.0 */
/* kube/proto-encode.c - request bodies in Kubernetes' protobuf encoding (kube/proto.h).
 *
 * What client-go does: a typed client on a protobuf content type sends create and update bodies
 * of built-in types as protobuf; patches stay JSON. kcmd builds its bodies as JSON
 * (kube/encode.h), and the objects it writes come from JSON it read (the ReplicaSet's pod
 * template is kept as JSON text), so the encoder here is a transcoder: it walks a JSON object
 * with the pull scanner (kube/json.h) and writes each field as the message's field, driven by
 * tables generated from k8s.io/api's generated.proto (kube/proto-schema.c, see
 * tools/gen-proto-schema.py). encoding/json's inlined structs (a Volume's VolumeSource, a
 * Probe's ProbeHandler, ...) are written as one occurrence of the embedded message per JSON key:
 * protobuf merges repeated occurrences of a message field, and Go's generated Unmarshal does.
 *
 * Anything the tables do not know (a key of a newer API version, a Duration, a float, bytes
 * that are not strict padded base64) gives -EOPNOTSUPP, so the caller can send the JSON body
 * instead: the transcoder never drops a field.
 *
 * Nested messages: a message is written after a 5-byte gap for its length (a length is at most
 * 2^32, five varint bytes), then moved down over the unused part of the gap; the cost is one
 * memmove per message level, on bodies of a few KiB.
 *
 * Rejected: building protobuf from kcmd's model structs (the template's spec is only kept as
 * JSON, and a hand-written PodSpec encoder would be several thousand lines that drift from
 * upstream); protobuf-c (see docs/dependencies.md).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "kube/proto-schema.h"
#include "kube/proto.h"

#define PE_MAX_DEPTH 64 /* deeper than any Kubernetes object; JSON nesting is bounded here */

struct pw {
	uint8_t *p;
	size_t len, cap;
	int err;
};

struct pe {
	struct js js;
	struct js_arena arena; /* unescaped strings; reset per top-level field */
	struct pw w;
	int depth;
};

static int pe_fail(struct pe *e, int err)
{
	if (!e->w.err)
		e->w.err = err;
	return e->w.err;
}

static int pw_reserve(struct pw *w, size_t n)
{
	if (w->err)
		return w->err;
	if (w->len + n <= w->cap)
		return 0;
	size_t cap = w->cap ? w->cap : 1024;
	while (cap < w->len + n) {
		if (cap > KUBE_DECODE_MAX_BYTES)
			return w->err = -E2BIG;
		cap *= 2;
	}
	uint8_t *p = realloc(w->p, cap);
	if (!p)
		return w->err = -ENOMEM;
	w->p = p;
	w->cap = cap;
	return 0;
}

static size_t varint_put(uint8_t *out, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

static void pw_varint(struct pw *w, uint64_t v)
{
	if (pw_reserve(w, 10) == 0)
		w->len += varint_put(w->p + w->len, v);
}

static void pw_tag(struct pw *w, unsigned num, unsigned wt)
{
	pw_varint(w, (uint64_t)num << 3 | wt);
}

static void pw_bytes(struct pw *w, unsigned num, const void *s, size_t n)
{
	pw_tag(w, num, 2);
	pw_varint(w, n);
	if (pw_reserve(w, n) == 0 && n) {
		memcpy(w->p + w->len, s, n);
		w->len += n;
	}
}

/* Opens a length-delimited field; returns the offset to hand to pw_close(). */
static size_t pw_open(struct pw *w, unsigned num)
{
	pw_tag(w, num, 2);
	if (pw_reserve(w, 5) < 0)
		return 0;
	w->len += 5;
	return w->len;
}

static void pw_close(struct pw *w, size_t start)
{
	if (w->err)
		return;
	size_t n = w->len - start;
	uint8_t len[10];
	size_t k = varint_put(len, n);
	uint8_t *gap = w->p + start - 5;
	memcpy(gap, len, k);
	memmove(gap + k, w->p + start, n);
	w->len -= 5 - k;
}

/* ---- transcoding ---------------------------------------------------------------------------- */

static const struct pb_field *find(const struct pb_msg *m, const char *k, size_t n)
{
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct pb_field *f = &m->fields[mid];
		int c = memcmp(k, f->name, n < f->name_len ? n : f->name_len);
		if (c == 0)
			c = n < f->name_len ? -1 : n > f->name_len ? 1 : 0;
		if (c == 0)
			return f;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

static int enc_message(struct pe *e, int mi);

/* a JSON string into field num (unescaped); absent (null) writes nothing unless always */
static int enc_string(struct pe *e, unsigned num, bool always)
{
	const char *s;
	size_t n;
	bool esc;
	int r = js_str_span(&e->js, &s, &n, &esc);
	if (r < 0)
		return pe_fail(e, r);
	if (r == 0) {
		if (always)
			pw_bytes(&e->w, num, "", 0);
		return 0;
	}
	if (esc) {
		char *u = js_alloc(&e->arena, n + 1);
		long k;
		if (!u)
			return pe_fail(e, -ENOMEM);
		if ((k = js_unescape(s, n, u)) < 0)
			return pe_fail(e, (int)k);
		s = u;
		n = (size_t)k;
	}
	pw_bytes(&e->w, num, s, n);
	return 0;
}

static int enc_time(struct pe *e, unsigned num, bool micro)
{
	const char *s;
	size_t n;
	bool esc;
	kube_time_t t;
	int r = js_str_span(&e->js, &s, &n, &esc);
	if (r <= 0)
		return r < 0 ? pe_fail(e, r) : 0;
	if (esc || kube_time_parse(s, n, &t) < 0)
		return pe_fail(e, -EPROTO);
	int64_t sec = t / 1000000000;
	int32_t ns = (int32_t)(t % 1000000000);
	if (!micro)
		ns = 0; /* metav1.Time is whole seconds on the wire as in JSON */
	size_t at = pw_open(&e->w, num);
	pw_tag(&e->w, 1, 0);
	pw_varint(&e->w, (uint64_t)sec);
	pw_tag(&e->w, 2, 0);
	pw_varint(&e->w, (uint64_t)(int64_t)ns);
	pw_close(&e->w, at);
	return 0;
}

/* a JSON number's text, validated as an integer by js_int64 */
static int enc_intorstr(struct pe *e, unsigned num)
{
	int c = js_peek(&e->js);
	if (c == '"') {
		size_t at = pw_open(&e->w, num);
		pw_tag(&e->w, 1, 0);
		pw_varint(&e->w, 1);
		enc_string(e, 3, true);
		pw_close(&e->w, at);
		return e->w.err;
	}
	if (js_null(&e->js))
		return 0;
	int32_t v;
	int r = js_int32(&e->js, &v);
	if (r < 0)
		return pe_fail(e, r);
	size_t at = pw_open(&e->w, num);
	pw_tag(&e->w, 1, 0);
	pw_varint(&e->w, 0);
	pw_tag(&e->w, 2, 0);
	pw_varint(&e->w, (uint64_t)(int64_t)v);
	pw_close(&e->w, at);
	return 0;
}

static int enc_quantity(struct pe *e, unsigned num)
{
	int c = js_peek(&e->js);
	if (c == '"') {
		size_t at = pw_open(&e->w, num);
		enc_string(e, 1, true);
		pw_close(&e->w, at);
		return e->w.err;
	}
	if (js_null(&e->js))
		return 0;
	/* a bare number (Quantity's UnmarshalJSON takes one): its text is the quantity */
	const char *s;
	size_t n;
	int r = js_raw(&e->js, &s, &n);
	if (r < 0)
		return pe_fail(e, r);
	if (!n || !(s[0] == '-' || (s[0] >= '0' && s[0] <= '9')))
		return pe_fail(e, -EPROTO);
	size_t at = pw_open(&e->w, num);
	pw_bytes(&e->w, 1, s, n);
	pw_close(&e->w, at);
	return 0;
}

/* Standard base64 with padding, as encoding/json writes a []byte, into bytes field num. Only
 * the strict form is taken (Go's decoder would also skip CR and LF): anything else is
 * -EOPNOTSUPP, so the JSON body goes and the apiserver judges it. */
static int enc_base64(struct pe *e, unsigned num, bool in_list)
{
	static const char alphabet[] =
	        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *s;
	size_t n;
	bool esc;
	int r = js_str_span(&e->js, &s, &n, &esc);
	if (r < 0)
		return pe_fail(e, r);
	if (r == 0) { /* null: a nil []byte; a map value is still written */
		if (in_list)
			pw_bytes(&e->w, num, "", 0);
		return 0;
	}
	if (esc || n % 4)
		return pe_fail(e, -EOPNOTSUPP);
	size_t pad = n && s[n - 1] == '=' ? (s[n - 2] == '=' ? 2 : 1) : 0;
	size_t out = n / 4 * 3 - pad;
	pw_tag(&e->w, num, 2);
	pw_varint(&e->w, out);
	if (pw_reserve(&e->w, out + 3) < 0)
		return e->w.err;
	uint8_t *p = e->w.p + e->w.len;
	for (size_t i = 0; i < n; i += 4) {
		uint32_t v = 0;
		for (size_t j = 0; j < 4; j++) {
			const char *c = i + j < n - pad ? memchr(alphabet, s[i + j], 64) : alphabet;
			if (!c)
				return pe_fail(e, -EOPNOTSUPP);
			v = v << 6 | (uint32_t)(c - alphabet);
		}
		p[0] = (uint8_t)(v >> 16);
		p[1] = (uint8_t)(v >> 8);
		p[2] = (uint8_t)v;
		p += 3;
	}
	e->w.len += out; /* the last group's padding bytes were written past out and are dropped */
	return 0;
}

/* an ExtraValue: a JSON array of strings as message {repeated string items = 1} */
static int enc_strlist(struct pe *e, unsigned num, bool in_list)
{
	int r = js_peek(&e->js);
	if (r != '[') {
		if (!js_null(&e->js))
			return pe_fail(e, e->js.err ? e->js.err : -EPROTO);
		if (in_list) { /* a null map value: the empty message, as Go writes it */
			size_t at = pw_open(&e->w, num);
			pw_close(&e->w, at);
		}
		return 0;
	}
	size_t at = pw_open(&e->w, num);
	if ((r = js_arr_begin(&e->js)) < 0)
		return pe_fail(e, r);
	while (r > 0 && (r = js_arr_next(&e->js)) > 0)
		if (enc_string(e, 1, true) < 0)
			return e->w.err;
	if (r < 0)
		return pe_fail(e, r);
	pw_close(&e->w, at);
	return e->w.err;
}

/* one value of kind f->kind (not repeated, not a map) into field num */
static int enc_value(struct pe *e, const struct pb_field *f, unsigned num, bool in_list)
{
	int r;
	switch (f->kind) {
	case PBK_STRING:
		return enc_string(e, num, in_list);
	case PBK_INT32:
	case PBK_INT64: {
		int64_t v;
		if (f->kind == PBK_INT32) {
			int32_t v32;
			r = js_int32(&e->js, &v32);
			v = v32;
		} else {
			r = js_int64(&e->js, &v);
		}
		if (r < 0)
			return pe_fail(e, r);
		if (r == 0 && !in_list)
			return 0;
		pw_tag(&e->w, num, 0);
		pw_varint(&e->w, r == 0 ? 0 : (uint64_t)v); /* negative: 10 bytes, as proto2 */
		return 0;
	}
	case PBK_BOOL: {
		bool b = false;
		r = js_bool(&e->js, &b);
		if (r < 0)
			return pe_fail(e, r);
		if (r == 0 && !in_list)
			return 0;
		pw_tag(&e->w, num, 0);
		pw_varint(&e->w, b);
		return 0;
	}
	case PBK_MESSAGE: {
		r = js_peek(&e->js);
		if (r != '{') {
			if (js_null(&e->js)) {
				if (in_list) { /* Go decodes a null element as the zero value */
					size_t at = pw_open(&e->w, num);
					pw_close(&e->w, at);
				}
				return 0;
			}
			return pe_fail(e, e->js.err ? e->js.err : -EPROTO);
		}
		size_t at = pw_open(&e->w, num);
		enc_message(e, f->msg);
		pw_close(&e->w, at);
		return e->w.err;
	}
	case PBK_TIME:
	case PBK_MICROTIME:
		return enc_time(e, num, f->kind == PBK_MICROTIME);
	case PBK_QUANTITY:
		return enc_quantity(e, num);
	case PBK_INTORSTR:
		return enc_intorstr(e, num);
	case PBK_RAWJSON: {
		const char *s;
		size_t n;
		if (js_null(&e->js))
			return 0;
		if ((r = js_raw(&e->js, &s, &n)) < 0)
			return pe_fail(e, r);
		size_t at = pw_open(&e->w, num);
		pw_bytes(&e->w, 1, s, n);
		pw_close(&e->w, at);
		return 0;
	}
	case PBK_BYTES:
		return enc_base64(e, num, in_list);
	case PBK_STRLIST:
		return enc_strlist(e, num, in_list);
	case PBK_TYPEMETA: /* Go's Marshal has no field for them: a nested TypeMeta is dropped */
		if ((r = js_skip(&e->js)) < 0)
			return pe_fail(e, r);
		return 0;
	default: /* double, Duration */
		return pe_fail(e, -EOPNOTSUPP);
	}
}

static int enc_field(struct pe *e, const struct pb_field *f)
{
	int r;
	if (f->flags & PBF_MAP) {
		if ((r = js_obj_begin(&e->js)) <= 0)
			return r < 0 ? pe_fail(e, r) : 0;
		const char *k;
		size_t kn;
		while ((r = js_obj_next(&e->js, &k, &kn)) > 0) {
			size_t at = pw_open(&e->w, f->num);
			pw_bytes(&e->w, 1, k, kn);
			/* a map value is always written (Go writes the zero value too) */
			if (enc_value(e, f, 2, true) < 0)
				return e->w.err;
			pw_close(&e->w, at);
		}
		return r < 0 ? pe_fail(e, r) : e->w.err;
	}
	if (f->flags & PBF_REPEATED) {
		if ((r = js_arr_begin(&e->js)) <= 0)
			return r < 0 ? pe_fail(e, r) : 0;
		while ((r = js_arr_next(&e->js)) > 0)
			if (enc_value(e, f, f->num, true) < 0)
				return e->w.err;
		return r < 0 ? pe_fail(e, r) : e->w.err;
	}
	return enc_value(e, f, f->num, false);
}

/* The JSON object at the scanner as message mi (fields written into e->w, no length). */
static int enc_message(struct pe *e, int mi)
{
	const struct pb_msg *m = &kube_pb_msgs[mi];
	const char *k;
	size_t kn;
	int r;
	if (++e->depth > PE_MAX_DEPTH)
		return pe_fail(e, -E2BIG);
	if ((r = js_obj_begin(&e->js)) < 0)
		return pe_fail(e, r);
	while (r > 0 && (r = js_obj_next(&e->js, &k, &kn)) > 0) {
		char key[256];
		if (kn >= sizeof(key))
			return pe_fail(e, -EOPNOTSUPP);
		memcpy(key, k, kn); /* k may point into the scanner's key buffer */
		const struct pb_field *f = find(m, key, kn);
		if (f && !(f->flags & PBF_INLINE)) {
			if (enc_field(e, f) < 0)
				return e->w.err;
			continue;
		}
		/* a key of an inlined struct: one occurrence of the embedded message per key */
		const struct pb_field *in = NULL;
		for (unsigned i = 0; i < m->n && !f; i++) {
			in = &m->fields[i];
			if (in->flags & PBF_INLINE)
				f = find(&kube_pb_msgs[in->msg], key, kn);
		}
		if (!f || (f->flags & PBF_INLINE))
			return pe_fail(e, -EOPNOTSUPP); /* unknown here: the caller sends JSON */
		size_t before = e->w.len, at = pw_open(&e->w, in->num);
		if (enc_field(e, f) < 0)
			return e->w.err;
		if (e->w.len == at)
			e->w.len = before; /* a null: no empty occurrence */
		else
			pw_close(&e->w, at);
	}
	if (r < 0)
		return pe_fail(e, r);
	e->depth--;
	return e->w.err;
}

/* "k8s\0" + runtime.Unknown{1 typeMeta{1 apiVersion, 2 kind}, 2 raw}: returns the offset of
 * raw's contents (close with pw_close). */
static size_t envelope_open(struct pw *w, const char *api_version, const char *kind)
{
	if (pw_reserve(w, KUBE_PROTO_MAGIC_LEN) == 0) {
		memcpy(w->p, KUBE_PROTO_MAGIC, KUBE_PROTO_MAGIC_LEN);
		w->len = KUBE_PROTO_MAGIC_LEN;
	}
	size_t at = pw_open(w, 1);
	pw_bytes(w, 1, api_version, strlen(api_version));
	pw_bytes(w, 2, kind, strlen(kind));
	pw_close(w, at);
	return pw_open(w, 2);
}

static int finish(struct pe *e, void **ret, size_t *ret_len)
{
	js_arena_free(&e->arena);
	if (e->w.err) {
		free(e->w.p);
		return e->w.err;
	}
	*ret = e->w.p;
	*ret_len = e->w.len;
	return 0;
}

/* Top-level object of message mi: "kind" and "apiVersion" (TypeMeta, in the envelope) are
 * checked against the expected ones when present. */
static int enc_object(struct pe *e, int mi, const char *api_version, const char *kind)
{
	const struct pb_msg *m = &kube_pb_msgs[mi];
	const char *k;
	size_t kn;
	int r;
	size_t raw = envelope_open(&e->w, api_version, kind);
	if ((r = js_obj_begin(&e->js)) <= 0)
		return pe_fail(e, r < 0 ? r : -EPROTO);
	while ((r = js_obj_next(&e->js, &k, &kn)) > 0) {
		if (JS_KEY(k, kn, "kind") || JS_KEY(k, kn, "apiVersion")) {
			bool is_kind = JS_KEY(k, kn, "kind");
			const char *s;
			size_t n;
			bool esc;
			if ((r = js_str_span(&e->js, &s, &n, &esc)) < 0)
				return pe_fail(e, r);
			const char *want = is_kind ? kind : api_version;
			if (r > 0 && n && (n != strlen(want) || memcmp(s, want, n)))
				return pe_fail(e, -EPROTO);
			continue;
		}
		char key[64];
		if (kn >= sizeof(key))
			return pe_fail(e, -EOPNOTSUPP);
		memcpy(key, k, kn);
		const struct pb_field *f = find(m, key, kn);
		if (!f)
			return pe_fail(e, -EOPNOTSUPP);
		if (enc_field(e, f) < 0)
			return e->w.err;
		js_arena_reset(&e->arena);
	}
	if (r < 0)
		return pe_fail(e, r);
	if (js_peek(&e->js) != 0)
		return pe_fail(e, -EBADMSG); /* trailing bytes after the object */
	pw_close(&e->w, raw);
	return e->w.err;
}

static int pe_init(struct pe *e, const void *json, size_t len)
{
	memset(e, 0, sizeof(*e));
	if (len > KUBE_DECODE_MAX_BYTES)
		return -E2BIG;
	if (js_arena_init(&e->arena, 512) < 0)
		return -ENOMEM;
	js_init(&e->js, json, len, &e->arena);
	return 0;
}

/* the built-in kinds whose bodies kcmd writes, with their tables (the generator's ROOTS) */
static const struct {
	const char *api_version, *kind;
	const int *msg;
} kinds[] = {
        {"v1", "Pod", &kube_pb_msg_Pod},
        {"v1", "Event", &kube_pb_msg_Event},
        {"v1", "Endpoints", &kube_pb_msg_Endpoints},
        {"coordination.k8s.io/v1", "Lease", &kube_pb_msg_Lease},
        {"discovery.k8s.io/v1", "EndpointSlice", &kube_pb_msg_EndpointSlice},
        {"apps/v1", "ReplicaSet", &kube_pb_msg_ReplicaSet},
        {"batch/v1", "Job", &kube_pb_msg_Job},
        {"v1", "Node", &kube_pb_msg_Node},
        {"v1", "Namespace", &kube_pb_msg_Namespace},
        {"v1", "ServiceAccount", &kube_pb_msg_ServiceAccount},
        {"v1", "Secret", &kube_pb_msg_Secret},
        {"v1", "ConfigMap", &kube_pb_msg_ConfigMap},
        {"v1", "PersistentVolume", &kube_pb_msg_PersistentVolume},
        {"v1", "PersistentVolumeClaim", &kube_pb_msg_PersistentVolumeClaim},
        {"v1", "ResourceQuota", &kube_pb_msg_ResourceQuota},
        {"v1", "ReplicationController", &kube_pb_msg_ReplicationController},
        {"apps/v1", "Deployment", &kube_pb_msg_Deployment},
        {"apps/v1", "StatefulSet", &kube_pb_msg_StatefulSet},
        {"apps/v1", "DaemonSet", &kube_pb_msg_DaemonSet},
        {"apps/v1", "ControllerRevision", &kube_pb_msg_ControllerRevision},
        {"batch/v1", "CronJob", &kube_pb_msg_CronJob},
        {"policy/v1", "PodDisruptionBudget", &kube_pb_msg_PodDisruptionBudget},
        {"autoscaling/v2", "HorizontalPodAutoscaler", &kube_pb_msg_HorizontalPodAutoscaler},
        {"certificates.k8s.io/v1", "CertificateSigningRequest",
         &kube_pb_msg_CertificateSigningRequest},
        {"certificates.k8s.io/v1", "ClusterTrustBundle", &kube_pb_msg_ClusterTrustBundle},
        {"authorization.k8s.io/v1", "SubjectAccessReview", &kube_pb_msg_SubjectAccessReview},
        {"authentication.k8s.io/v1", "TokenReview", &kube_pb_msg_TokenReview},
        {"storage.k8s.io/v1", "VolumeAttachment", &kube_pb_msg_VolumeAttachment},
        {"storage.k8s.io/v1", "VolumeAttributesClass", &kube_pb_msg_VolumeAttributesClass},
        {"resource.k8s.io/v1", "ResourceClaim", &kube_pb_msg_ResourceClaim},
        {"resource.k8s.io/v1alpha3", "ResourcePoolStatusRequest",
         &kube_pb_msg_ResourcePoolStatusRequest},
        {"scheduling.k8s.io/v1beta1", "PodGroup", &kube_pb_msg_PodGroup},
        {"internal.apiserver.k8s.io/v1alpha1", "StorageVersion", &kube_pb_msg_StorageVersion},
        {"storagemigration.k8s.io/v1", "StorageVersionMigration",
         &kube_pb_msg_StorageVersionMigration},
};

bool kube_proto_encodes(const char *api_version, const char *kind)
{
	if (!api_version || !kind)
		return false;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(kinds[i].api_version, api_version) && !strcmp(kinds[i].kind, kind))
			return true;
	return false;
}

int kube_proto_encode_json(const char *api_version, const char *kind, const char *json, size_t len,
                           void **ret, size_t *ret_len)
{
	struct pe e;
	int r, mi = -1;
	if (!api_version || !kind || !json || !ret || !ret_len)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]) && mi < 0; i++)
		if (!strcmp(kinds[i].api_version, api_version) && !strcmp(kinds[i].kind, kind))
			mi = *kinds[i].msg;
	if (mi < 0)
		return -EOPNOTSUPP;
	if ((r = pe_init(&e, json, len)) < 0)
		return r;
	(void)enc_object(&e, mi, api_version, kind);
	return finish(&e, ret, ret_len);
}

int kube_proto_encode_pod_json(const char *json, size_t len, void **ret, size_t *ret_len)
{
	return kube_proto_encode_json("v1", "Pod", json, len, ret, ret_len);
}

/* ---- ReplicaSet status replaced in a served ReplicaSet -------------------------------------- */

struct rd {
	const uint8_t *p, *end;
};

static int rd_varint(struct rd *b, uint64_t *ret)
{
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (b->p >= b->end)
			return -EBADMSG;
		uint8_t c = *b->p++;
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*ret = v;
			return 0;
		}
	}
	return -EBADMSG;
}

/* the next field: its number, wire type and the span of the whole field (tag included) and of
 * its payload (length-delimited fields only) */
static int rd_field(struct rd *b, uint32_t *num, unsigned *wt, struct rd *whole, struct rd *payload)
{
	uint64_t tag, v;
	whole->p = b->p;
	if (rd_varint(b, &tag) < 0 || (tag >> 3) == 0 || (tag >> 3) > UINT32_MAX)
		return -EBADMSG;
	*num = (uint32_t)(tag >> 3);
	*wt = tag & 7;
	payload->p = payload->end = NULL;
	switch (*wt) {
	case 0:
		if (rd_varint(b, &v) < 0)
			return -EBADMSG;
		break;
	case 1:
	case 5:
		if ((size_t)(b->end - b->p) < (*wt == 1 ? 8u : 4u))
			return -EBADMSG;
		b->p += *wt == 1 ? 8 : 4;
		break;
	case 2:
		if (rd_varint(b, &v) < 0 || v > (uint64_t)(b->end - b->p))
			return -EBADMSG;
		payload->p = b->p;
		payload->end = b->p + v;
		b->p += v;
		break;
	default:
		return -EBADMSG;
	}
	whole->end = b->p;
	return 0;
}

static void pw_raw(struct pw *w, const uint8_t *p, const uint8_t *end)
{
	size_t n = (size_t)(end - p);
	if (pw_reserve(w, n) == 0 && n) {
		memcpy(w->p + w->len, p, n);
		w->len += n;
	}
}

int kube_proto_rs_with_status(const void *rs_pb, size_t len, const char *status_json,
                              size_t status_len, void **ret, size_t *ret_len)
{
	struct pe e;
	int r;
	if (!rs_pb || !status_json || !ret || !ret_len)
		return -EINVAL;
	if (!kube_proto_is(rs_pb, len))
		return -EBADMSG;
	if ((r = pe_init(&e, status_json, status_len)) < 0)
		return r;
	struct rd env = {(const uint8_t *)rs_pb + KUBE_PROTO_MAGIC_LEN,
	                 (const uint8_t *)rs_pb + len};
	struct rd raw = {NULL, NULL}, tm = {NULL, NULL}, whole, pl;
	uint32_t num;
	unsigned wt;
	while (env.p < env.end && !e.w.err) {
		if (rd_field(&env, &num, &wt, &whole, &pl) < 0)
			pe_fail(&e, -EBADMSG);
		else if (num == 1 && wt == 2)
			tm = whole;
		else if (num == 2 && wt == 2)
			raw = pl;
		else if (num == 3 && wt == 2 && pl.end != pl.p)
			pe_fail(&e, -EPROTO); /* a content encoding */
	}
	if (!e.w.err && (!tm.p || !raw.p))
		pe_fail(&e, -EPROTO);
	if (!e.w.err && pw_reserve(&e.w, KUBE_PROTO_MAGIC_LEN) == 0) {
		memcpy(e.w.p, KUBE_PROTO_MAGIC, KUBE_PROTO_MAGIC_LEN);
		e.w.len = KUBE_PROTO_MAGIC_LEN;
		pw_raw(&e.w, tm.p, tm.end);
	}
	size_t at = pw_open(&e.w, 2);
	/* ReplicaSet {1 metadata, 2 spec, 3 status}: metadata without managedFields (17), as the
	 * JSON PUT drops them; spec as read; status from the JSON */
	while (raw.p < raw.end && !e.w.err) {
		if (rd_field(&raw, &num, &wt, &whole, &pl) < 0) {
			pe_fail(&e, -EBADMSG);
		} else if (num == 1 && wt == 2) {
			size_t m = pw_open(&e.w, 1);
			struct rd meta = pl, mw, mp;
			while (meta.p < meta.end && !e.w.err) {
				if (rd_field(&meta, &num, &wt, &mw, &mp) < 0)
					pe_fail(&e, -EBADMSG);
				else if (num != 17)
					pw_raw(&e.w, mw.p, mw.end);
			}
			pw_close(&e.w, m);
		} else if (num != 3) {
			pw_raw(&e.w, whole.p, whole.end);
		}
	}
	if (!e.w.err && js_peek(&e.js) == '{') {
		size_t st = pw_open(&e.w, 3);
		enc_message(&e, kube_pb_msg_ReplicaSetStatus);
		pw_close(&e.w, st);
	} else if (!e.w.err) {
		pe_fail(&e, e.js.err ? e.js.err : -EPROTO);
	}
	if (!e.w.err && js_peek(&e.js) != 0)
		pe_fail(&e, -EBADMSG);
	pw_close(&e.w, at);
	return finish(&e, ret, ret_len);
}
