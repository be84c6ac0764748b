/* SPDX-License-Identifier: Apache-2.0 */
/* kube/proto.c - a streaming protobuf wire scanner and the decoders behind kube/proto.h.
 *
 * Design: no generated code and no message tree. Each decoder walks one message's bytes once,
 * field by field; a field the model keeps is read (strings copied into the object's arena, the
 * same js_arena as the JSON decoders), a sub-message the model reads into is walked in place,
 * and every other field - managedFields, containers, volumes, most of the status - is skipped
 * by its length prefix in O(1), never looked at. A list is walked item by item and each item is
 * handed to the caller before the next is read.
 *
 * Rejected: protobuf-c with code generated from k8s.io/api's generated.proto. It unpacks a
 * whole message into a malloc'd tree (one allocation per sub-message and string, and a copy of
 * each unknown field) before a line of ours can run, then the tree must be copied into the
 * model; measured in docs/dependencies.md.
 *
 * Go semantics kept (gogo-generated Unmarshal, which the apiserver's clients use):
 *  - a repeated field appends per occurrence, a scalar's last occurrence wins;
 *  - proto2 optional non-pointer strings are always on the wire, also when empty; the JSON
 *    encoding omits the empty ones (omitempty), which the JSON decoder turns into NULL. So an
 *    empty string becomes NULL for omitempty fields and "" for the fields JSON always writes
 *    (ownerReference apiVersion/kind/name/uid, condition type/status, selector key/operator);
 *  - metav1.Time drops the nanoseconds (as Time.Unmarshal does; JSON has whole seconds);
 *  - int32 fields take the low 32 bits of the varint, as gogo's decoder does.
 */
#include "kube/proto.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"

/* first arena chunk sizes: as the JSON decoders' */
#define POD_ARENA   1024
#define RS_ARENA    3072
#define SMALL_ARENA 768

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

struct pb {
	const uint8_t *p, *end;
};

struct pd {
	struct js_arena *arena;
	unsigned flags;
	const char *tm_api_version, *tm_kind; /* the envelope's typeMeta (kept spans, copied) */
	size_t tm_api_version_n, tm_kind_n;
};

/* ---- wire ----------------------------------------------------------------------------------- */

static int __attribute__((noinline)) rd_varint_slow(struct pb *b, uint64_t *ret)
{
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (b->p >= b->end)
			return -EBADMSG;
		uint8_t c = *b->p++;
		if (shift == 63 && c > 1)
			return -EBADMSG; /* more than 64 bits */
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*ret = v;
			return 0;
		}
	}
	return -EBADMSG;
}

/* Most varints on this wire are one byte (tags of fields 1-15, short lengths, small ints) or
 * two (tags of fields 16-2047 such as managedFields and initContainers, lengths up to 16 KiB). */
static inline int rd_varint(struct pb *b, uint64_t *ret)
{
	const uint8_t *p = b->p;
	if (__builtin_expect(b->end - p >= 2, 1)) {
		if (p[0] < 0x80) {
			*ret = p[0];
			b->p = p + 1;
			return 0;
		}
		if (p[1] < 0x80) {
			*ret = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
			b->p = p + 2;
			return 0;
		}
	}
	return rd_varint_slow(b, ret);
}

/* 1: a field (number, wire type), 0: end of message, <0: error */
static int rd_tag(struct pb *b, uint32_t *num, unsigned *wt)
{
	uint64_t t;
	if (b->p >= b->end)
		return 0;
	if (rd_varint(b, &t) < 0)
		return -EBADMSG;
	if ((t >> 3) == 0 || (t >> 3) > 0x1fffffff)
		return -EBADMSG;
	*num = (uint32_t)(t >> 3);
	*wt = (unsigned)(t & 7);
	return 1;
}

/* a length-delimited field's bytes as a sub-scanner */
static int rd_len(struct pb *b, struct pb *sub)
{
	uint64_t n;
	if (rd_varint(b, &n) < 0)
		return -EBADMSG;
	if (n > (uint64_t)(b->end - b->p))
		return -EBADMSG;
	sub->p = b->p;
	sub->end = b->p + n;
	b->p += n;
	return 0;
}

static int skip(struct pb *b, unsigned wt)
{
	uint64_t v;
	struct pb s;
	switch (wt) {
	case WT_VARINT:
		return rd_varint(b, &v);
	case WT_I64:
		if (b->end - b->p < 8)
			return -EBADMSG;
		b->p += 8;
		return 0;
	case WT_LEN:
		return rd_len(b, &s);
	case WT_I32:
		if (b->end - b->p < 4)
			return -EBADMSG;
		b->p += 4;
		return 0;
	default: /* groups (3, 4): never written by Kubernetes */
		return -EBADMSG;
	}
}

static int want_len(struct pb *b, unsigned wt, struct pb *sub)
{
	if (wt != WT_LEN)
		return -EPROTO;
	return rd_len(b, sub);
}

static int rd_u64(struct pb *b, unsigned wt, uint64_t *v)
{
	if (wt != WT_VARINT)
		return -EPROTO;
	return rd_varint(b, v);
}

static int rd_i64(struct pb *b, unsigned wt, int64_t *ret)
{
	uint64_t v;
	int r = rd_u64(b, wt, &v);
	if (r == 0)
		*ret = (int64_t)v;
	return r;
}

static int rd_i32(struct pb *b, unsigned wt, int32_t *ret)
{
	uint64_t v;
	int r = rd_u64(b, wt, &v);
	if (r == 0)
		*ret = (int32_t)(uint32_t)v;
	return r;
}

static int rd_bool(struct pb *b, unsigned wt, int8_t *ret)
{
	uint64_t v;
	int r = rd_u64(b, wt, &v);
	if (r == 0)
		*ret = v != 0;
	return r;
}

/* A string span (no copy). Strings become C strings, so a NUL inside is refused. */
static int rd_span(struct pb *b, unsigned wt, const char **s, size_t *n)
{
	struct pb sub;
	int r = want_len(b, wt, &sub);
	if (r < 0)
		return r;
	*n = (size_t)(sub.end - sub.p);
	if (*n && memchr(sub.p, 0, *n))
		return -EPROTO;
	*s = (const char *)sub.p;
	return 0;
}

enum { OMITEMPTY = 0, KEEP_EMPTY = 1 };

/* A string into the arena; an empty one is NULL unless keep_empty. */
static int rd_str(struct pd *d, struct pb *b, unsigned wt, const char **dst, int keep_empty)
{
	const char *s;
	size_t n;
	int r = rd_span(b, wt, &s, &n);
	if (r < 0)
		return r;
	if (!n && !keep_empty) {
		*dst = NULL;
		return 0;
	}
	*dst = js_strndup(d->arena, s, n);
	return *dst ? 0 : -ENOMEM;
}

static bool span_is(const char *s, size_t n, const char *lit)
{
	size_t l = strlen(lit);
	return n == l && memcmp(s, lit, l) == 0;
}

/* metav1.Time {1 seconds, 2 nanos}: the nanoseconds are dropped, as Go's Time.Unmarshal does. */
static int rd_time(struct pb *b, unsigned wt, kube_time_t *ret)
{
	struct pb s;
	uint32_t f;
	unsigned w;
	int64_t sec = 0;
	int r = want_len(b, wt, &s);
	if (r < 0)
		return r;
	while ((r = rd_tag(&s, &f, &w)) > 0) {
		if (f == 1)
			r = rd_i64(&s, w, &sec);
		else
			r = skip(&s, w);
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	if (sec < 0 || sec > INT64_MAX / 1000000000)
		return -EPROTO;
	*ret = sec * 1000000000;
	return 0;
}

/* Grows an arena array when full; the slot to fill or NULL. */
static void *grow(struct pd *d, void **arr, uint32_t *n, uint32_t *cap, size_t elsz, uint32_t first)
{
	if (*n == *cap) {
		if (*cap >= (1u << 24))
			return NULL;
		uint32_t nc = *cap ? *cap * 2 : first;
		void *na = js_alloc(d->arena, (size_t)nc * elsz);
		if (!na)
			return NULL;
		if (*n)
			memcpy(na, *arr, (size_t)*n * elsz);
		*arr = na;
		*cap = nc;
	}
	return (char *)*arr + (size_t)(*n)++ * elsz;
}

#define GROW(d, arr, n, cap, first)                                                                \
	grow((d), (void **)&(arr), &(n), &(cap), sizeof(*(arr)), (first))

/* ---- ObjectMeta ------------------------------------------------------------------------------ */

static bool keep_annotation(const char *k, size_t n)
{
	static const char *const prefixes[] = {
	        "controller.kubernetes.io/",
	        "deployment.kubernetes.io/",
	        "k8s.io/initial-events-end",
	        "control-plane.alpha.kubernetes.io/leader",
	};
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t pn = strlen(prefixes[i]);
		if (n >= pn && memcmp(k, prefixes[i], pn) == 0)
			return true;
	}
	return false;
}

/* one map<string,string> entry {1 key, 2 value}; appended unless filtered out */
static int rd_kv(struct pd *d, struct pb *b, unsigned wt, struct kube_kv **arr, uint32_t *n,
                 uint32_t *cap, bool filter)
{
	struct pb e;
	uint32_t f;
	unsigned w;
	const char *k = "", *v = "";
	size_t kn = 0, vn = 0;
	int r = want_len(b, wt, &e);
	if (r < 0)
		return r;
	while ((r = rd_tag(&e, &f, &w)) > 0) {
		if (f == 1)
			r = rd_span(&e, w, &k, &kn);
		else if (f == 2)
			r = rd_span(&e, w, &v, &vn);
		else
			r = skip(&e, w);
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	if (filter && !keep_annotation(k, kn))
		return 0;
	struct kube_kv *kv = grow(d, (void **)arr, n, cap, sizeof(**arr), 4);
	if (!kv || !(kv->key = js_strndup(d->arena, k, kn)) ||
	    !(kv->value = js_strndup(d->arena, v, vn)))
		return -ENOMEM;
	return 0;
}

static int rd_owner_ref(struct pd *d, struct pb *b, unsigned wt, struct kube_owner_ref *o)
{
	struct pb s;
	uint32_t f;
	unsigned w;
	int r = want_len(b, wt, &s);
	o->controller = o->block_owner_deletion = -1;
	if (r < 0)
		return r;
	while ((r = rd_tag(&s, &f, &w)) > 0) {
		switch (f) {
		case 1:
			r = rd_str(d, &s, w, &o->kind, KEEP_EMPTY);
			break;
		case 3:
			r = rd_str(d, &s, w, &o->name, KEEP_EMPTY);
			break;
		case 4:
			r = rd_str(d, &s, w, &o->uid, KEEP_EMPTY);
			break;
		case 5:
			r = rd_str(d, &s, w, &o->api_version, KEEP_EMPTY);
			break;
		case 6:
			r = rd_bool(&s, w, &o->controller);
			break;
		case 7:
			r = rd_bool(&s, w, &o->block_owner_deletion);
			break;
		default:
			r = skip(&s, w);
		}
		if (r < 0)
			return r;
	}
	return r;
}

static int rd_meta(struct pd *d, struct pb *b, unsigned wt, struct kube_object_meta *m)
{
	struct pb s;
	uint32_t f;
	unsigned w;
	uint32_t cap_l = 0, cap_a = 0, cap_o = 0, cap_f = 0;
	int r = want_len(b, wt, &s);
	if (r < 0)
		return r;
	/* a second occurrence of the message merges (Go); arrays restart their capacity count,
	 * so start them over rather than append past a stale capacity */
	m->n_labels = m->n_annotations = m->n_owner_refs = m->n_finalizers = 0;
	while ((r = rd_tag(&s, &f, &w)) > 0) {
		switch (f) {
		case 1:
			r = rd_str(d, &s, w, &m->name, OMITEMPTY);
			break;
		case 2:
			r = rd_str(d, &s, w, &m->generate_name, OMITEMPTY);
			break;
		case 3:
			r = rd_str(d, &s, w, &m->namespace, OMITEMPTY);
			break;
		case 5:
			r = rd_str(d, &s, w, &m->uid, OMITEMPTY);
			break;
		case 6:
			r = rd_str(d, &s, w, &m->resource_version, OMITEMPTY);
			break;
		case 7:
			r = rd_i64(&s, w, &m->generation);
			break;
		case 8:
			r = rd_time(&s, w, &m->creation_timestamp);
			break;
		case 9:
			r = rd_time(&s, w, &m->deletion_timestamp);
			break;
		case 10:
			r = rd_i64(&s, w, &m->deletion_grace_period_seconds);
			m->has_deletion_grace_period_seconds = r == 0;
			break;
		case 11:
			r = rd_kv(d, &s, w, &m->labels, &m->n_labels, &cap_l, false);
			break;
		case 12:
			r = rd_kv(d, &s, w, &m->annotations, &m->n_annotations, &cap_a,
			          !(d->flags & KUBE_DECODE_ALL_ANNOTATIONS));
			break;
		case 13: {
			struct kube_owner_ref *o =
			        GROW(d, m->owner_refs, m->n_owner_refs, cap_o, 2);
			r = o ? rd_owner_ref(d, &s, w, o) : -ENOMEM;
			break;
		}
		case 14: {
			const char **slot = GROW(d, m->finalizers, m->n_finalizers, cap_f, 4);
			r = slot ? rd_str(d, &s, w, slot, KEEP_EMPTY) : -ENOMEM;
			break;
		}
		default: /* selfLink, managedFields */
			r = skip(&s, w);
		}
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	if (!m->n_labels)
		m->labels = NULL;
	if (!m->n_annotations)
		m->annotations = NULL;
	if (!m->n_owner_refs)
		m->owner_refs = NULL;
	if (!m->n_finalizers)
		m->finalizers = NULL;
	return 0;
}

/* ---- Pod ------------------------------------------------------------------------------------- */

struct name_span {
	const char *s;
	size_t n;
	int32_t restarts;
};

struct pod_tmp {
	struct name_span *sidecars; /* spec.initContainers with restartPolicy Always */
	uint32_t n_sidecars, cap_sidecars;
	struct name_span *init_st; /* status.initContainerStatuses */
	uint32_t n_init_st, cap_init_st;
	uint32_t cap_ports, cap_ips; /* p->ep's arrays */
	uint32_t cap_tols;           /* p->tolerations */
	bool aff_found; /* the metadata.name In requirement affinity_node comes from was seen */
};

/* NodeSelectorRequirement {1 key, 2 operator, 3 values}: the first metadata.name In one decides
 * affinity_node (its single value, else none), as GetTargetNodeName returns at it. */
static int rd_match_field(struct pd *d, struct pb *b, unsigned wt, struct kube_pod *p,
                          struct pod_tmp *t)
{
	struct pb s;
	uint32_t f;
	unsigned w;
	const char *key = NULL, *op = NULL, *v0 = NULL, *v;
	size_t kn = 0, on = 0, v0n = 0, vn;
	uint32_t nv = 0;
	int r = want_len(b, wt, &s);
	if (r < 0)
		return r;
	while ((r = rd_tag(&s, &f, &w)) > 0) {
		if (f == 1)
			r = rd_span(&s, w, &key, &kn);
		else if (f == 2)
			r = rd_span(&s, w, &op, &on);
		else if (f == 3) {
			if ((r = rd_span(&s, w, &v, &vn)) == 0 && nv++ == 0) {
				v0 = v;
				v0n = vn;
			}
		} else
			r = skip(&s, w);
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	if (!t->aff_found && key && span_is(key, kn, "metadata.name") && op &&
	    span_is(op, on, "In")) {
		t->aff_found = true;
		p->affinity_node = NULL;
		if (nv == 1 && v0n && !(p->affinity_node = js_strndup(d->arena, v0, v0n)))
			return -ENOMEM;
	}
	return 0;
}

/* Affinity {1 nodeAffinity} -> NodeAffinity {1 requiredDuringScheduling...} -> NodeSelector
 * {1 nodeSelectorTerms} -> NodeSelectorTerm {2 matchFields}; depth 0 is the Affinity. */
static int rd_affinity(struct pd *d, struct pb *b, unsigned wt, struct kube_pod *p,
                       struct pod_tmp *t, int depth)
{
	struct pb s;
	uint32_t f;
	unsigned w;
	int r = want_len(b, wt, &s);
	if (r < 0)
		return r;
	while ((r = rd_tag(&s, &f, &w)) > 0) {
		if (depth < 3 && f == 1)
			r = rd_affinity(d, &s, w, p, t, depth + 1);
		else if (depth == 3 && f == 2)
			r = rd_match_field(d, &s, w, p, t);
		else
			r = skip(&s, w);
		if (r < 0)
			return r;
	}
	return r;
}

/* ContainerPort {1 name, 3 containerPort, 4 protocol}: a named one appended to p->ep.ports */
static int rd_container_port(struct pd *d, struct pb *b, unsigned wt, struct kube_pod *p,
                             struct pod_tmp *t, bool sidecar)
{
	struct pb s;
	uint32_t f;
	unsigned w;
	const char *name = NULL, *proto = NULL;
	int32_t port = 0;
	int r = want_len(b, wt, &s);
	if (r < 0)
		return r;
	while ((r = rd_tag(&s, &f, &w)) > 0) {
		if (f == 1)
			r = rd_str(d, &s, w, &name, OMITEMPTY);
		else if (f == 3)
			r = rd_i32(&s, w, &port);
		else if (f == 4)
			r = rd_str(d, &s, w, &proto, OMITEMPTY);
		else
			r = skip(&s, w);
		if (r < 0)
			return r;
	}
	if (r < 0 || !name)
		return r;
	struct kube_pod_port *pp = GROW(d, p->ep.ports, p->ep.n_ports, t->cap_ports, 2);
	if (!pp)
		return -ENOMEM;
	*pp = (struct kube_pod_port){name, proto, port, sidecar};
	return 0;
}

/* Container {6 ports}: the named ports of a regular container */
static int rd_container(struct pd *d, struct pb *b, unsigned wt, struct kube_pod *p,
                        struct pod_tmp *t)
{
	struct pb s;
	uint32_t f;
	unsigned w;
	int r = want_len(b, wt, &s);
	if (r < 0)
		return r;
	while ((r = rd_tag(&s, &f, &w)) > 0) {
		if (f == 6)
			r = rd_container_port(d, &s, w, p, t, false);
		else
			r = skip(&s, w);
		if (r < 0)
			return r;
	}
	return r;
}

/* Container {1 name, 6 ports, 24 restartPolicy}: a sidecar when restartPolicy is Always (then
 * its named ports count too) */
static int rd_init_container(struct pd *d, struct pb *b, unsigned wt, struct kube_pod *p,
                             struct pod_tmp *t)
{
	struct pb s;
	uint32_t f;
	unsigned w;
	const char *name = NULL, *pol = NULL;
	size_t nn = 0, pn = 0;
	uint32_t first_port = p->ep.n_ports;
	int r = want_len(b, wt, &s);
	if (r < 0)
		return r;
	while ((r = rd_tag(&s, &f, &w)) > 0) {
		if (f == 1)
			r = rd_span(&s, w, &name, &nn);
		else if (f == 6)
			r = rd_container_port(d, &s, w, p, t, true);
		else if (f == 24)
			r = rd_span(&s, w, &pol, &pn);
		else
			r = skip(&s, w);
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	if (!(pol && span_is(pol, pn, "Always")))
		p->ep.n_ports = first_port; /* only a sidecar's ports count (FindPort) */
	if (name && pol && span_is(pol, pn, "Always")) {
		struct name_span *ns = GROW(d, t->sidecars, t->n_sidecars, t->cap_sidecars, 2);
		if (!ns)
			return -ENOMEM;
		ns->s = name;
		ns->n = nn;
	}
	return 0;
}

/* Volume {2 volumeSource: VolumeSource {29 ephemeral}}: whether it is a generic ephemeral one */
static int rd_volume(struct pb *b, unsigned wt, struct kube_pod *p)
{
	struct pb s, vs;
	uint32_t f;
	unsigned w;
	int r = want_len(b, wt, &s);
	if (r < 0)
		return r;
	while ((r = rd_tag(&s, &f, &w)) > 0) {
		if (f != 2) {
			r = skip(&s, w);
		} else if ((r = want_len(&s, w, &vs)) == 0) {
			while ((r = rd_tag(&vs, &f, &w)) > 0) {
				if (f == 29)
					p->has_ephemeral_volume = true;
				if ((r = skip(&vs, w)) < 0)
					break;
			}
		}
		if (r < 0)
			return r;
	}
	return r;
}

/* Toleration {1 key, 2 operator, 3 value, 4 effect, 5 tolerationSeconds}: appended whole */
static int rd_toleration(struct pd *d, struct pb *b, unsigned wt, struct kube_pod *p,
                         struct pod_tmp *t)
{
	struct pb s;
	uint32_t f;
	unsigned w;
	struct kube_toleration tl = {0};
	int r = want_len(b, wt, &s);
	if (r < 0)
		return r;
	while ((r = rd_tag(&s, &f, &w)) > 0) {
		if (f == 1)
			r = rd_str(d, &s, w, &tl.key, OMITEMPTY);
		else if (f == 2)
			r = rd_str(d, &s, w, &tl.op, OMITEMPTY);
		else if (f == 3)
			r = rd_str(d, &s, w, &tl.value, OMITEMPTY);
		else if (f == 4)
			r = rd_str(d, &s, w, &tl.effect, OMITEMPTY);
		else if (f == 5) {
			r = rd_i64(&s, w, &tl.seconds);
			tl.has_seconds = r >= 0;
		} else
			r = skip(&s, w);
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	struct kube_toleration *slot = GROW(d, p->tolerations, p->n_tolerations, t->cap_tols, 4);
	if (!slot)
		return -ENOMEM;
	*slot = tl;
	return 0;
}

static int rd_pod_spec(struct pd *d, struct pb *b, unsigned wt, struct kube_pod *p,
                       struct pod_tmp *t)
{
	struct pb s;
	uint32_t f;
	unsigned w;
	int r = want_len(b, wt, &s);
	if (r < 0)
		return r;
	while ((r = rd_tag(&s, &f, &w)) > 0) {
		if (f == 10)
			r = rd_str(d, &s, w, &p->node_name, OMITEMPTY);
		else if (f == 2)
			r = rd_container(d, &s, w, p, t);
		else if (f == 16)
			r = rd_str(d, &s, w, &p->ep.hostname, OMITEMPTY);
		else if (f == 17)
			r = rd_str(d, &s, w, &p->ep.subdomain, OMITEMPTY);
		else if (f == 18)
			r = rd_affinity(d, &s, w, p, t, 0);
		else if (f == 20)
			r = rd_init_container(d, &s, w, p, t);
		else if (f == 1)
			r = rd_volume(&s, w, p);
		else if (f == 39) /* resourceClaims: one item makes it not empty */
			p->has_resource_claims = (r = skip(&s, w)) == 0;
		else if (f == 22)
			r = rd_toleration(d, &s, w, p, t);
		else
			r = skip(&s, w);
		if (r < 0)
			return r;
	}
	return r;
}

static enum kube_pod_phase phase_of(const char *s, size_t n)
{
	if (!n)
		return KUBE_POD_PHASE_UNSET;
	if (span_is(s, n, "Pending"))
		return KUBE_POD_PENDING;
	if (span_is(s, n, "Running"))
		return KUBE_POD_RUNNING;
	if (span_is(s, n, "Succeeded"))
		return KUBE_POD_SUCCEEDED;
	if (span_is(s, n, "Failed"))
		return KUBE_POD_FAILED;
	if (span_is(s, n, "Unknown"))
		return KUBE_POD_UNKNOWN;
	return KUBE_POD_PHASE_OTHER;
}

/* PodCondition {1 type, 2 status, 4 lastTransitionTime, 5 reason} */
static int rd_pod_condition(struct pb *b, unsigned wt, struct kube_pod *p)
{
	struct pb s;
	uint32_t f;
	unsigned w;
	const char *type = NULL, *st = NULL, *rs = NULL;
	size_t tn = 0, stn = 0, rsn = 0;
	kube_time_t ltt = 0;
	int r = want_len(b, wt, &s);
	if (r < 0)
		return r;
	while ((r = rd_tag(&s, &f, &w)) > 0) {
		if (f == 1)
			r = rd_span(&s, w, &type, &tn);
		else if (f == 2)
			r = rd_span(&s, w, &st, &stn);
		else if (f == 4)
			r = rd_time(&s, w, &ltt);
		else if (f == 5)
			r = rd_span(&s, w, &rs, &rsn);
		else
			r = skip(&s, w);
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	if (type && span_is(type, tn, "Ready")) {
		p->ready = st && span_is(st, stn, "True");
		if (!p->ready_status) /* the first Ready condition, as MarkPodsNotReady reads */
			p->ready_status = p->ready                          ? KUBE_COND_TRUE
			                  : st && span_is(st, stn, "False") ? KUBE_COND_FALSE
			                                                    : KUBE_COND_UNKNOWN;
		p->ready_transition_time = ltt;
	} else if (type && span_is(type, tn, "DisruptionTarget")) {
		bool on = st && span_is(st, stn, "True");
		bool kl = rs && span_is(rs, rsn, "TerminationByKubelet");
		p->disruption_target = !on  ? KUBE_DT_NOT_TRUE
		                       : kl ? KUBE_DT_TRUE_KUBELET
		                            : KUBE_DT_TRUE;
		p->disruption_target_time = ltt;
		p->dt_taint_manager = on && rs && span_is(rs, rsn, "DeletionByTaintManager");
	}
	return 0;
}

/* ContainerStatus {1 name, 5 restartCount}: max, or collect (name, count) when t != NULL */
static int rd_container_status(struct pd *d, struct pb *b, unsigned wt, int32_t *max,
                               struct pod_tmp *t)
{
	struct pb s;
	uint32_t f;
	unsigned w;
	const char *name = NULL;
	size_t nn = 0;
	int32_t rc = 0;
	int r = want_len(b, wt, &s);
	if (r < 0)
		return r;
	while ((r = rd_tag(&s, &f, &w)) > 0) {
		if (f == 5)
			r = rd_i32(&s, w, &rc);
		else if (f == 1 && t)
			r = rd_span(&s, w, &name, &nn);
		else
			r = skip(&s, w);
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	if (!t) {
		if (rc > *max)
			*max = rc;
	} else if (name) {
		struct name_span *ns = GROW(d, t->init_st, t->n_init_st, t->cap_init_st, 2);
		if (!ns)
			return -ENOMEM;
		ns->s = name;
		ns->n = nn;
		ns->restarts = rc;
	}
	return 0;
}

/* PodIP {1 ip} */
static int rd_pod_ip(struct pd *d, struct pb *b, unsigned wt, struct kube_pod *p, struct pod_tmp *t)
{
	struct pb s;
	uint32_t f;
	unsigned w;
	const char *ip = NULL;
	int r = want_len(b, wt, &s);
	if (r < 0)
		return r;
	while ((r = rd_tag(&s, &f, &w)) > 0) {
		if (f == 1)
			r = rd_str(d, &s, w, &ip, KEEP_EMPTY);
		else
			r = skip(&s, w);
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	const char **slot = GROW(d, p->ep.pod_ips, p->ep.n_pod_ips, t->cap_ips, 2);
	if (!slot)
		return -ENOMEM;
	*slot = ip ? ip : "";
	return 0;
}

static int rd_pod_status(struct pd *d, struct pb *b, unsigned wt, struct kube_pod *p,
                         struct pod_tmp *t)
{
	struct pb s;
	uint32_t f;
	unsigned w;
	const char *ph;
	size_t pn;
	int r = want_len(b, wt, &s);
	if (r < 0)
		return r;
	while ((r = rd_tag(&s, &f, &w)) > 0) {
		switch (f) {
		case 1:
			if ((r = rd_span(&s, w, &ph, &pn)) == 0)
				p->phase = phase_of(ph, pn);
			break;
		case 2:
			r = rd_pod_condition(&s, w, p);
			break;
		case 6:
			r = rd_str(d, &s, w, &p->ep.pod_ip, OMITEMPTY);
			break;
		case 12:
			r = rd_pod_ip(d, &s, w, p, t);
			break;
		case 8:
			r = rd_container_status(d, &s, w, &p->max_restarts, NULL);
			break;
		case 10:
			r = rd_container_status(d, &s, w, NULL, t);
			break;
		default:
			r = skip(&s, w);
		}
		if (r < 0)
			return r;
	}
	return r;
}

static int pod_body(struct pd *d, struct pb *b, void *obj)
{
	struct kube_pod *p = obj;
	struct pod_tmp t = {0};
	uint32_t f;
	unsigned w;
	int r;
	while ((r = rd_tag(b, &f, &w)) > 0) {
		if (f == 1)
			r = rd_meta(d, b, w, &p->meta);
		else if (f == 2)
			r = rd_pod_spec(d, b, w, p, &t);
		else if (f == 3)
			r = rd_pod_status(d, b, w, p, &t);
		else
			r = skip(b, w);
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	for (uint32_t i = 0; i < t.n_init_st; i++)
		for (uint32_t k = 0; k < t.n_sidecars; k++)
			if (t.init_st[i].n == t.sidecars[k].n &&
			    memcmp(t.init_st[i].s, t.sidecars[k].s, t.sidecars[k].n) == 0 &&
			    t.init_st[i].restarts > p->max_sidecar_restarts)
				p->max_sidecar_restarts = t.init_st[i].restarts;
	const char *cost = kube_labels_get(p->meta.annotations, p->meta.n_annotations,
	                                   "controller.kubernetes.io/pod-deletion-cost");
	if (cost && kube_parse_deletion_cost(cost, &p->deletion_cost) == 0)
		p->has_deletion_cost = true;
	else
		p->deletion_cost = 0;
	return 0;
}

/* ---- ReplicaSet ------------------------------------------------------------------------------ */

static enum kube_selector_op op_of(const char *s)
{
	if (!s)
		return KUBE_OP_INVALID;
	if (!strcmp(s, "In"))
		return KUBE_OP_IN;
	if (!strcmp(s, "NotIn"))
		return KUBE_OP_NOT_IN;
	if (!strcmp(s, "Exists"))
		return KUBE_OP_EXISTS;
	if (!strcmp(s, "DoesNotExist"))
		return KUBE_OP_DOES_NOT_EXIST;
	return KUBE_OP_INVALID;
}

/* LabelSelectorRequirement {1 key, 2 operator, 3 values} */
static int rd_requirement(struct pd *d, struct pb *b, unsigned wt, struct kube_label_requirement *q)
{
	struct pb s;
	uint32_t f;
	unsigned w;
	uint32_t cap = 0;
	int r = want_len(b, wt, &s);
	if (r < 0)
		return r;
	while ((r = rd_tag(&s, &f, &w)) > 0) {
		if (f == 1)
			r = rd_str(d, &s, w, &q->key, KEEP_EMPTY);
		else if (f == 2)
			r = rd_str(d, &s, w, &q->op_text, KEEP_EMPTY);
		else if (f == 3) {
			const char **slot = GROW(d, q->values, q->n_values, cap, 4);
			r = slot ? rd_str(d, &s, w, slot, KEEP_EMPTY) : -ENOMEM;
		} else
			r = skip(&s, w);
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	q->op = op_of(q->op_text);
	if (!q->key && !(q->key = js_strndup(d->arena, "", 0)))
		return -ENOMEM;
	return 0;
}

/* LabelSelector {1 matchLabels, 2 matchExpressions}; present (even empty) means non-nil */
static int rd_selector(struct pd *d, struct pb *b, unsigned wt, struct kube_label_selector **ret)
{
	struct pb s;
	uint32_t f;
	unsigned w;
	uint32_t cap_l = 0, cap_e = 0;
	int r = want_len(b, wt, &s);
	if (r < 0)
		return r;
	struct kube_label_selector *ls = js_alloc(d->arena, sizeof(*ls));
	if (!ls)
		return -ENOMEM;
	while ((r = rd_tag(&s, &f, &w)) > 0) {
		if (f == 1)
			r = rd_kv(d, &s, w, &ls->match_labels, &ls->n_match_labels, &cap_l, false);
		else if (f == 2) {
			struct kube_label_requirement *q =
			        GROW(d, ls->match_expressions, ls->n_match_expressions, cap_e, 2);
			r = q ? rd_requirement(d, &s, w, q) : -ENOMEM;
		} else
			r = skip(&s, w);
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	*ret = ls;
	return 0;
}

/* PodTemplateSpec {1 metadata {11 labels}}: only the labels (template_json stays NULL) */
static int rd_template(struct pd *d, struct pb *b, unsigned wt, struct kube_replicaset *rs)
{
	struct pb s, m;
	uint32_t f;
	unsigned w;
	uint32_t cap = 0;
	int r = want_len(b, wt, &s);
	if (r < 0)
		return r;
	rs->n_template_labels = 0;
	while ((r = rd_tag(&s, &f, &w)) > 0) {
		if (f != 1) {
			if ((r = skip(&s, w)) < 0)
				return r;
			continue;
		}
		if ((r = want_len(&s, w, &m)) < 0)
			return r;
		while ((r = rd_tag(&m, &f, &w)) > 0) {
			if (f == 11)
				r = rd_kv(d, &m, w, &rs->template_labels, &rs->n_template_labels,
				          &cap, false);
			else
				r = skip(&m, w);
			if (r < 0)
				return r;
		}
		if (r < 0)
			return r;
	}
	if (!rs->n_template_labels)
		rs->template_labels = NULL;
	return r;
}

/* ReplicaSetCondition {1 type, 2 status, 3 lastTransitionTime, 4 reason, 5 message} */
static int rd_rs_condition(struct pd *d, struct pb *b, unsigned wt, struct kube_condition *c)
{
	struct pb s;
	uint32_t f;
	unsigned w;
	int r = want_len(b, wt, &s);
	if (r < 0)
		return r;
	while ((r = rd_tag(&s, &f, &w)) > 0) {
		switch (f) {
		case 1:
			r = rd_str(d, &s, w, &c->type, KEEP_EMPTY);
			break;
		case 2:
			r = rd_str(d, &s, w, &c->status, KEEP_EMPTY);
			break;
		case 3:
			r = rd_time(&s, w, &c->last_transition_time);
			break;
		case 4:
			r = rd_str(d, &s, w, &c->reason, OMITEMPTY);
			break;
		case 5:
			r = rd_str(d, &s, w, &c->message, OMITEMPTY);
			break;
		default:
			r = skip(&s, w);
		}
		if (r < 0)
			return r;
	}
	return r;
}

static int rd_rs_spec(struct pd *d, struct pb *b, unsigned wt, struct kube_replicaset *rs)
{
	struct pb s;
	uint32_t f;
	unsigned w;
	int r = want_len(b, wt, &s);
	if (r < 0)
		return r;
	while ((r = rd_tag(&s, &f, &w)) > 0) {
		switch (f) {
		case 1:
			r = rd_i32(&s, w, &rs->spec_replicas);
			rs->has_spec_replicas = r == 0;
			break;
		case 2:
			r = rd_selector(d, &s, w, &rs->selector);
			break;
		case 3:
			r = rd_template(d, &s, w, rs);
			break;
		case 4:
			r = rd_i32(&s, w, &rs->min_ready_seconds);
			break;
		default:
			r = skip(&s, w);
		}
		if (r < 0)
			return r;
	}
	return r;
}

static int rd_rs_status(struct pd *d, struct pb *b, unsigned wt, struct kube_replicaset *rs)
{
	struct pb s;
	uint32_t f;
	unsigned w;
	uint32_t cap = 0;
	int r = want_len(b, wt, &s);
	if (r < 0)
		return r;
	rs->status.n_conditions = 0;
	while ((r = rd_tag(&s, &f, &w)) > 0) {
		switch (f) {
		case 1:
			r = rd_i32(&s, w, &rs->status.replicas);
			break;
		case 2:
			r = rd_i32(&s, w, &rs->status.fully_labeled_replicas);
			break;
		case 3:
			r = rd_i64(&s, w, &rs->status.observed_generation);
			break;
		case 4:
			r = rd_i32(&s, w, &rs->status.ready_replicas);
			break;
		case 5:
			r = rd_i32(&s, w, &rs->status.available_replicas);
			break;
		case 6: {
			struct kube_condition *c =
			        GROW(d, rs->status.conditions, rs->status.n_conditions, cap, 2);
			r = c ? rd_rs_condition(d, &s, w, c) : -ENOMEM;
			break;
		}
		case 7:
			r = rd_i32(&s, w, &rs->status.terminating_replicas);
			rs->status.has_terminating_replicas = r == 0;
			break;
		default:
			r = skip(&s, w);
		}
		if (r < 0)
			return r;
	}
	if (!rs->status.n_conditions)
		rs->status.conditions = NULL;
	return r;
}

static int rs_body(struct pd *d, struct pb *b, void *obj)
{
	struct kube_replicaset *rs = obj;
	uint32_t f;
	unsigned w;
	int r;
	rs->spec_replicas = 1; /* the API default when spec.replicas is nil */
	while ((r = rd_tag(b, &f, &w)) > 0) {
		if (f == 1)
			r = rd_meta(d, b, w, &rs->meta);
		else if (f == 2)
			r = rd_rs_spec(d, b, w, rs);
		else if (f == 3)
			r = rd_rs_status(d, b, w, rs);
		else
			r = skip(b, w);
		if (r < 0)
			return r;
	}
	if (!rs->has_spec_replicas)
		rs->spec_replicas = 1;
	return r;
}

/* ---- PartialObjectMetadata, Status ----------------------------------------------------------- */

/* Field 1 is the ObjectMeta in every Kubernetes object, so this reads the metadata of any of
 * them. apiVersion and kind are not in the message: they come from the envelope. */
static int partial_body(struct pd *d, struct pb *b, void *obj)
{
	struct kube_partial *p = obj;
	uint32_t f;
	unsigned w;
	int r;
	while ((r = rd_tag(b, &f, &w)) > 0) {
		if (f == 1)
			r = rd_meta(d, b, w, &p->meta);
		else
			r = skip(b, w);
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	if (d->tm_api_version_n &&
	    !(p->api_version = js_strndup(d->arena, d->tm_api_version, d->tm_api_version_n)))
		return -ENOMEM;
	if (d->tm_kind_n && !(p->kind = js_strndup(d->arena, d->tm_kind, d->tm_kind_n)))
		return -ENOMEM;
	return 0;
}

/* StatusCause {1 reason, 2 message, 3 field} */
static int rd_cause(struct pd *d, struct pb *b, unsigned wt, struct kube_status_cause *c)
{
	struct pb s;
	uint32_t f;
	unsigned w;
	int r = want_len(b, wt, &s);
	if (r < 0)
		return r;
	while ((r = rd_tag(&s, &f, &w)) > 0) {
		if (f == 1)
			r = rd_str(d, &s, w, &c->type, OMITEMPTY);
		else if (f == 2)
			r = rd_str(d, &s, w, &c->message, OMITEMPTY);
		else if (f == 3)
			r = rd_str(d, &s, w, &c->field, OMITEMPTY);
		else
			r = skip(&s, w);
		if (r < 0)
			return r;
	}
	return r;
}

/* StatusDetails {1 name, 2 group, 3 kind, 4 causes, 5 retryAfterSeconds, 6 uid} */
static int rd_details(struct pd *d, struct pb *b, unsigned wt, struct kube_status *st)
{
	struct pb s;
	uint32_t f;
	unsigned w;
	uint32_t cap = 0;
	int r = want_len(b, wt, &s);
	if (r < 0)
		return r;
	st->n_causes = 0;
	while ((r = rd_tag(&s, &f, &w)) > 0) {
		switch (f) {
		case 1:
			r = rd_str(d, &s, w, &st->details_name, OMITEMPTY);
			break;
		case 2:
			r = rd_str(d, &s, w, &st->details_group, OMITEMPTY);
			break;
		case 3:
			r = rd_str(d, &s, w, &st->details_kind, OMITEMPTY);
			break;
		case 4: {
			struct kube_status_cause *c = GROW(d, st->causes, st->n_causes, cap, 2);
			r = c ? rd_cause(d, &s, w, c) : -ENOMEM;
			break;
		}
		case 5:
			r = rd_i32(&s, w, &st->retry_after_seconds);
			break;
		case 6:
			r = rd_str(d, &s, w, &st->details_uid, OMITEMPTY);
			break;
		default:
			r = skip(&s, w);
		}
		if (r < 0)
			return r;
	}
	if (!st->n_causes)
		st->causes = NULL;
	return r;
}

/* Status {1 metadata, 2 status, 3 message, 4 reason, 5 details, 6 code} */
static int status_body(struct pd *d, struct pb *b, void *obj)
{
	struct kube_status *st = obj;
	uint32_t f;
	unsigned w;
	int r;
	while ((r = rd_tag(b, &f, &w)) > 0) {
		switch (f) {
		case 2:
			r = rd_str(d, b, w, &st->status, OMITEMPTY);
			break;
		case 3:
			r = rd_str(d, b, w, &st->message, OMITEMPTY);
			break;
		case 4:
			r = rd_str(d, b, w, &st->reason, OMITEMPTY);
			break;
		case 5:
			r = rd_details(d, b, w, st);
			break;
		case 6:
			r = rd_i32(b, w, &st->code);
			break;
		default:
			r = skip(b, w);
		}
		if (r < 0)
			return r;
	}
	return r;
}

/* ---- objects, envelope ---------------------------------------------------------------------- */

typedef int (*body_fn)(struct pd *d, struct pb *b, void *obj);

static const struct {
	size_t size, extra;
	body_fn body;
} kinds[] = {
        [KUBE_KIND_POD] = {sizeof(struct kube_pod), POD_ARENA, pod_body},
        [KUBE_KIND_REPLICASET] = {sizeof(struct kube_replicaset), RS_ARENA, rs_body},
        [KUBE_KIND_PARTIAL] = {sizeof(struct kube_partial), SMALL_ARENA, partial_body},
        [KUBE_KIND_STATUS] = {sizeof(struct kube_status), SMALL_ARENA, status_body},
};

static bool kind_ok(enum kube_kind kind)
{
	return (unsigned)kind < sizeof(kinds) / sizeof(kinds[0]) && kinds[kind].body;
}

/* Decodes one object message (bytes of b) into a fresh arena or the emptied scratch. */
static int dec_object(struct pd *d, struct pb b, enum kube_kind kind, struct js_arena *scratch,
                      void **ret)
{
	struct js_arena own;
	void *o;
	int r;
	if (!kind_ok(kind))
		return -EOPNOTSUPP;
	if (scratch) {
		js_arena_reset(scratch);
		d->arena = scratch;
	} else {
		if (js_arena_init(&own, kinds[kind].size + kinds[kind].extra) < 0)
			return -ENOMEM;
		d->arena = &own;
	}
	if (!(o = js_alloc(d->arena, kinds[kind].size))) {
		r = -ENOMEM;
		goto fail;
	}
	if ((r = kinds[kind].body(d, &b, o)) < 0)
		goto fail;
	*ret = o;
	return 0;
fail:
	if (!scratch)
		js_arena_free(&own);
	return r;
}

struct envelope {
	struct pb raw;
	const char *api_version, *kind;
	size_t api_version_n, kind_n;
};

/* "k8s\0" + runtime.Unknown {1 typeMeta, 2 raw, 3 contentEncoding, 4 contentType} */
static int rd_envelope(const void *buf, size_t len, struct envelope *e)
{
	struct pb b, s;
	uint32_t f;
	unsigned w;
	const char *str;
	size_t n;
	int r;
	if (!buf && len)
		return -EINVAL;
	if (len > KUBE_DECODE_MAX_BYTES)
		return -E2BIG;
	if (!kube_proto_is(buf, len))
		return -EBADMSG;
	memset(e, 0, sizeof(*e));
	b.p = (const uint8_t *)buf + KUBE_PROTO_MAGIC_LEN;
	b.end = (const uint8_t *)buf + len;
	e->raw.p = e->raw.end = b.end;
	while ((r = rd_tag(&b, &f, &w)) > 0) {
		switch (f) {
		case 1:
			if ((r = want_len(&b, w, &s)) < 0)
				return r;
			while ((r = rd_tag(&s, &f, &w)) > 0) {
				if (f == 1)
					r = rd_span(&s, w, &e->api_version, &e->api_version_n);
				else if (f == 2)
					r = rd_span(&s, w, &e->kind, &e->kind_n);
				else
					r = skip(&s, w);
				if (r < 0)
					return r;
			}
			break;
		case 2:
			r = want_len(&b, w, &e->raw);
			break;
		case 3: /* contentEncoding: Kubernetes writes none */
			if ((r = rd_span(&b, w, &str, &n)) == 0 && n)
				return -EPROTO;
			break;
		case 4: /* contentType: empty or protobuf */
			if ((r = rd_span(&b, w, &str, &n)) == 0 && n &&
			    !span_is(str, n, KUBE_CONTENT_PROTOBUF))
				return -EPROTO;
			break;
		default:
			r = skip(&b, w);
		}
		if (r < 0)
			return r;
	}
	return r;
}

bool kube_proto_is(const void *buf, size_t len)
{
	return buf && len >= KUBE_PROTO_MAGIC_LEN &&
	       memcmp(buf, KUBE_PROTO_MAGIC, KUBE_PROTO_MAGIC_LEN) == 0;
}

static int decode_one(struct js_arena *scratch, enum kube_kind kind, const void *buf, size_t len,
                      unsigned flags, void **ret_obj)
{
	struct envelope e;
	struct pd d = {.flags = flags};
	int r;
	if (!ret_obj)
		return -EINVAL;
	if (!kind_ok(kind))
		return -EOPNOTSUPP;
	if ((r = rd_envelope(buf, len, &e)) < 0)
		return r;
	d.tm_api_version = e.api_version;
	d.tm_api_version_n = e.api_version_n;
	d.tm_kind = e.kind;
	d.tm_kind_n = e.kind_n;
	return dec_object(&d, e.raw, kind, scratch, ret_obj);
}

int kube_proto_decode(enum kube_kind kind, const void *buf, size_t len, unsigned flags,
                      void **ret_obj)
{
	return decode_one(NULL, kind, buf, len, flags, ret_obj);
}

int kube_proto_decode_scratch(struct kube_scratch *s, enum kube_kind kind, const void *buf,
                              size_t len, unsigned flags, void **ret_obj)
{
	if (!s)
		return -EINVAL;
	return decode_one(&s->arena, kind, buf, len, flags, ret_obj);
}

/* ---- lists ---------------------------------------------------------------------------------- */

/* ListMeta {2 resourceVersion, 3 continue, 4 remainingItemCount} */
static int rd_list_meta(struct pb *b, unsigned wt, struct kube_list_meta *lm)
{
	struct pb s;
	uint32_t f;
	unsigned w;
	const char *str;
	size_t n;
	int r = want_len(b, wt, &s);
	if (r < 0)
		return r;
	while ((r = rd_tag(&s, &f, &w)) > 0) {
		if (f == 2 || f == 3) {
			char *dst = f == 2 ? lm->resource_version : lm->cont;
			size_t cap = f == 2 ? sizeof(lm->resource_version) : sizeof(lm->cont);
			if ((r = rd_span(&s, w, &str, &n)) < 0)
				return r;
			if (n >= cap)
				return -EPROTO;
			memcpy(dst, str, n);
			dst[n] = 0;
		} else if (f == 4) {
			r = rd_i64(&s, w, &lm->remaining_item_count);
		} else
			r = skip(&s, w);
		if (r < 0)
			return r;
	}
	return r;
}

static int decode_list(struct js_arena *scratch, enum kube_kind kind, const void *buf, size_t len,
                       unsigned flags, kube_item_fn fn, void *userdata,
                       struct kube_list_meta *ret_meta)
{
	struct envelope e;
	struct kube_list_meta lm = {.remaining_item_count = -1};
	struct pd d = {.flags = flags};
	uint32_t f;
	unsigned w;
	int r, count = 0;
	if (!fn)
		return -EINVAL;
	if (!kind_ok(kind))
		return -EOPNOTSUPP;
	if ((r = rd_envelope(buf, len, &e)) < 0)
		return r;
	/* A PartialObjectMetadataList's items carry no typeMeta on the wire; the apiserver's
	 * JSON gives each one apiVersion meta.k8s.io/v1, kind PartialObjectMetadata. Items of
	 * other lists have none in either encoding. */
	if (kind == KUBE_KIND_PARTIAL && span_is(e.kind, e.kind_n, "PartialObjectMetadataList")) {
		d.tm_api_version = e.api_version;
		d.tm_api_version_n = e.api_version_n;
		d.tm_kind = "PartialObjectMetadata";
		d.tm_kind_n = strlen(d.tm_kind);
	}
	while ((r = rd_tag(&e.raw, &f, &w)) > 0) {
		if (f == 1) {
			r = rd_list_meta(&e.raw, w, &lm);
		} else if (f == 2) {
			struct pb item;
			void *o;
			if ((r = want_len(&e.raw, w, &item)) < 0)
				return r;
			/* The walk over an item is a chain of dependent loads (each length
			 * says where the next tag is); touching its cache lines first lets
			 * the misses of a list larger than the cache overlap. */
			for (const uint8_t *q = item.p; q < item.end; q += 64)
				__builtin_prefetch(q);
			if ((r = dec_object(&d, item, kind, scratch, &o)) < 0)
				return r;
			count++;
			if ((r = fn(o, userdata)) < 0)
				return r;
		} else
			r = skip(&e.raw, w);
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	if (ret_meta)
		*ret_meta = lm;
	return count;
}

int kube_proto_decode_list(enum kube_kind kind, const void *buf, size_t len, unsigned flags,
                           kube_item_fn fn, void *userdata, struct kube_list_meta *ret_meta)
{
	return decode_list(NULL, kind, buf, len, flags, fn, userdata, ret_meta);
}

int kube_proto_decode_list_scratch(struct kube_scratch *s, enum kube_kind kind, const void *buf,
                                   size_t len, unsigned flags, kube_item_fn fn, void *userdata,
                                   struct kube_list_meta *ret_meta)
{
	if (!s)
		return -EINVAL;
	return decode_list(&s->arena, kind, buf, len, flags, fn, userdata, ret_meta);
}

/* ---- watch events --------------------------------------------------------------------------- */

static enum kube_watch_type watch_type_of(const char *s, size_t n)
{
	if (span_is(s, n, "ADDED"))
		return KUBE_WATCH_ADDED;
	if (span_is(s, n, "MODIFIED"))
		return KUBE_WATCH_MODIFIED;
	if (span_is(s, n, "DELETED"))
		return KUBE_WATCH_DELETED;
	if (span_is(s, n, "BOOKMARK"))
		return KUBE_WATCH_BOOKMARK;
	if (span_is(s, n, "ERROR"))
		return KUBE_WATCH_ERROR;
	return 0;
}

int kube_proto_decode_watch_event(enum kube_kind kind, const void *frame, size_t len,
                                  unsigned flags, enum kube_watch_type *ret_type, void **ret_obj)
{
	struct pb b, obj = {NULL, NULL}, s;
	uint32_t f;
	unsigned w;
	const char *t;
	size_t tn;
	enum kube_watch_type type = 0;
	bool have_obj = false;
	int r;
	if (!ret_type || !ret_obj || (!frame && len))
		return -EINVAL;
	if (len > KUBE_DECODE_MAX_BYTES)
		return -E2BIG;
	b.p = frame;
	b.end = (const uint8_t *)frame + len;
	while ((r = rd_tag(&b, &f, &w)) > 0) {
		if (f == 1) {
			if ((r = rd_span(&b, w, &t, &tn)) == 0)
				type = watch_type_of(t, tn);
		} else if (f == 2) {
			/* RawExtension {1 raw} */
			if ((r = want_len(&b, w, &s)) < 0)
				return r;
			while ((r = rd_tag(&s, &f, &w)) > 0) {
				if (f == 1) {
					r = want_len(&s, w, &obj);
					have_obj = r == 0;
				} else
					r = skip(&s, w);
				if (r < 0)
					return r;
			}
		} else
			r = skip(&b, w);
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	if (!type || !have_obj)
		return -EPROTO;
	r = kube_proto_decode(type == KUBE_WATCH_ERROR ? KUBE_KIND_STATUS : kind, obj.p,
	                      (size_t)(obj.end - obj.p), flags, ret_obj);
	if (r < 0)
		return r;
	*ret_type = type;
	return 0;
}

/* ---- either encoding ------------------------------------------------------------------------ */

int kube_decode_any(enum kube_kind kind, const void *buf, size_t len, unsigned flags,
                    void **ret_obj)
{
	if (kube_proto_is(buf, len))
		return kube_proto_decode(kind, buf, len, flags, ret_obj);
	return kube_decode(kind, buf, len, flags, ret_obj);
}

int kube_decode_list_any(enum kube_kind kind, const void *buf, size_t len, unsigned flags,
                         kube_item_fn fn, void *userdata, struct kube_list_meta *ret_meta)
{
	if (kube_proto_is(buf, len))
		return kube_proto_decode_list(kind, buf, len, flags, fn, userdata, ret_meta);
	return kube_decode_list(kind, buf, len, flags, fn, userdata, ret_meta);
}

int kube_decode_list_scratch_any(struct kube_scratch *s, enum kube_kind kind, const void *buf,
                                 size_t len, unsigned flags, kube_item_fn fn, void *userdata,
                                 struct kube_list_meta *ret_meta)
{
	if (kube_proto_is(buf, len))
		return kube_proto_decode_list_scratch(s, kind, buf, len, flags, fn, userdata,
		                                      ret_meta);
	return kube_decode_list_scratch(s, kind, buf, len, flags, fn, userdata, ret_meta);
}

int kube_decode_watch_event_any(enum kube_kind kind, const void *buf, size_t len, unsigned flags,
                                enum kube_watch_type *ret_type, void **ret_obj)
{
	if (!buf || !len || ((const unsigned char *)buf)[0] != 0x0a)
		return kube_decode_watch_event(kind, buf, len, flags, ret_type, ret_obj);
	return kube_proto_decode_watch_event(kind, buf, len, flags, ret_type, ret_obj);
}

int kube_content_type_parse(const char *s, const char **ret)
{
	if (!s || !ret)
		return -EINVAL;
	if (!strcmp(s, KUBE_CONTENT_PROTOBUF))
		*ret = KUBE_CONTENT_PROTOBUF;
	else if (!strcmp(s, KUBE_CONTENT_JSON))
		*ret = KUBE_CONTENT_JSON;
	else
		return -EINVAL;
	return 0;
}
