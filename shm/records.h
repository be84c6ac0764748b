/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * shm/records.h: the typed payload informerd stores in each arena record (the
 * `payload` of shm_record_in / shm_obj), header-only raw readers, and deep copies of a
 * copied-out shm_obj.
 *
 * Design note.
 *   The arena treats the payload as opaque bytes; this file is the one definition of its
 *   layout. The codec between it and kube/model.h objects (the encoder informerd's store calls,
 *   the views workers read) is shm/record-model.h, in the same folder. Raw readers here are
 *   static inline and need no kube/ type (the GC's handlers and kcmctl read only the header).
 *   Layout, all little-endian host order (the arena never leaves the host):
 *
 *     struct shm_rec_hdr   56 bytes: magic+version, kind, flags, blob count, finalizer count,
 *                          fixed-part length, generation, creation/deletion timestamps, grace
 *     fixed part           fixed_len bytes: struct shm_rec_pod or struct shm_rec_rs (none for
 *                          metadata-only records)
 *     blobs                n_blobs times { uint32 len; len bytes; NUL }, unaligned
 *
 *   Blob order: pods: node_name, the node its required node affinity targets (kube_pod
 *   affinity_node), then one blob per toleration (version 9, struct shm_rec_pod), then the
 *   endpoint part (struct shm_rec_pod), then the finalizers. ReplicaSets: the selector's error text
 *   (sel_state INVALID; else empty), the compiled selector (n_sel_blobs blobs: per matchLabel
 *   key, value; per matchExpression key, then 5 raw bytes {uint8 enum kube_selector_op,
 *   uint32 value count}, then the values), spec.template JSON, the template's labels (key,
 *   value per label), the template's four parts (enum shm_rec_tmpl_parts), then per status
 *   condition five blobs (type, status, reason, message,
 *   lastTransitionTime as 8 raw bytes of kube_time_t), then n_annotations (key, value) pairs
 *   (every annotation: the Deployment controller reads them), metadata.generateName (version 8:
 * the status PUT writes the whole metadata), then the finalizers. Metadata-only
 * records: the finalizers. Full objects (struct shm_rec_object): apiVersion, kind, n_annotations
 * (key, value) pairs, the body, then the finalizers. An absent string is a blob of length 0 (the
 * model's NULL and "" are not told apart here).
 *
 *   The payload is copied out by shm readers, so it has no alignment: readers memcpy fields.
 *   Version rule: SHM_REC_MAGIC carries the version; a change of any layout bumps it, and a
 *   reader that sees another magic treats the record as unreadable (-EPROTONOSUPPORT). The
 *   arena is rebuilt by a cold informerd start in that case.
 *
 *   Rejected: storing the apiserver's JSON (every reader would parse it again: the very cost
 *   the arena exists to avoid); one struct per kind with fixed string buffers (wastes the
 *   arena and truncates).
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* "CRK9" read little-endian: version 9 (v2: 32-bit n_blobs; v3: ReplicaSets keep their
 * selector compiled and their template's labels parsed; v4: the pod's fixed part keeps the
 * DisruptionTarget condition, 24 -> 32 bytes; v5: ReplicaSets keep every annotation, for the
 * Deployment controller's sync; v6: a pod keeps the node its required node affinity targets,
 * a second blob, for the DaemonSet controller's unbound pods, and the EndpointSlice
 * controller's part, 32 -> 40 bytes and the endpoint blobs; v7: a pod's header flags say
 * whether it has a generic ephemeral volume and resource claims; v8: a ReplicaSet keeps its
 * generateName, a blob after the annotations, so that its status PUT needs no GET; v9: a pod
 * keeps its Ready condition as three states and its tolerations whole, for the node lifecycle
 * and taint eviction controllers, 40 -> 48 bytes and a blob per toleration) */
#define SHM_REC_MAGIC 0x394b5243u

enum shm_rec_flags {
	SHM_REC_HAS_GRACE = 1u << 0,      /* deletionGracePeriodSeconds present */
	SHM_REC_FIN_ORPHAN = 1u << 1,     /* finalizer "orphan" present */
	SHM_REC_FIN_FOREGROUND = 1u << 2, /* finalizer "foregroundDeletion" present */
	/* pods only (version 7): kube_pod has_ephemeral_volume, has_resource_claims */
	SHM_REC_POD_EPHEMERAL = 1u << 3,
	SHM_REC_POD_CLAIMS = 1u << 4,
};

struct shm_rec_hdr {
	uint32_t magic;
	uint8_t kind;       /* enum shm_record_kind */
	uint8_t flags;      /* enum shm_rec_flags */
	uint16_t reserved0; /* version 1's 16-bit n_blobs: a pod may have more finalizers */
	uint32_t n_finalizers;
	uint32_t fixed_len;
	int64_t generation;
	int64_t creation_ts; /* kube_time_t */
	int64_t deletion_ts; /* kube_time_t, 0 = not being deleted */
	int64_t deletion_grace_s;
	uint32_t n_blobs; /* no bound but the object's size (issue 21) */
	uint32_t reserved1;
};
_Static_assert(sizeof(struct shm_rec_hdr) == 56, "record header layout");

struct shm_rec_pod {
	uint8_t phase; /* enum kube_pod_phase */
	uint8_t ready;
	uint8_t has_deletion_cost;
	uint8_t disruption_target; /* enum kube_disruption_target */
	int32_t max_restarts;
	int32_t max_sidecar_restarts;
	int32_t deletion_cost;
	int64_t ready_transition_time;
	int64_t disruption_target_time; /* kube_time_t */
	/* ---- version 6: the EndpointSlice controller's part (struct kube_pod_endpoint) ----
	 * Its shm_rec_pod_endpoint_blobs blobs are the last ones before the finalizers, so that
	 * blobs other parts add after node_name do not move them: hostname, subdomain, podIP,
	 * then ep_n_pod_ips IPs, then per port three blobs: name, protocol, and 5 raw bytes
	 * {int32 containerPort, uint8 sidecar}. */
	uint32_t ep_n_pod_ips;
	uint32_t ep_n_ports;
	/* ---- version 9 ----
	 * n_tolerations blobs right after affinity_node, one per spec.tolerations item in order,
	 * each SHM_REC_POD_TOL_RAW raw bytes {uint8 has_seconds, int64 tolerationSeconds} then
	 * key, operator, value, effect, each NUL-terminated ("" when absent). No limit but the
	 * record's size: a pod's tolerations are stored whole or the pod is not stored (-E2BIG,
	 * as any record too large). */
	uint32_t n_tolerations;
	uint8_t ready_status;     /* enum kube_cond_status: the first Ready condition */
	uint8_t dt_taint_manager; /* DisruptionTarget True, reason DeletionByTaintManager */
	uint8_t pad0[2];
};
_Static_assert(sizeof(struct shm_rec_pod) == 48, "pod fixed layout");
#define SHM_REC_POD_PORT_RAW 5u /* the raw blob of an endpoint port */
#define SHM_REC_POD_TOL_RAW  9u /* the raw head of a toleration blob */
/* The blobs before the tolerations: node_name, affinity_node. */
#define SHM_REC_POD_HEAD_BLOBS 2u

/* The blobs before the endpoint part that it may not overlap: node_name, affinity_node and the
 * tolerations (fits in 64 bits: the count is 32-bit). */
static inline uint64_t shm_rec_pod_head_blobs(const struct shm_rec_pod *p)
{
	return SHM_REC_POD_HEAD_BLOBS + (uint64_t)p->n_tolerations;
}

/* The blob count of a pod's endpoint part (fits in 64 bits: each count is 32-bit). */
static inline uint64_t shm_rec_pod_endpoint_blobs(const struct shm_rec_pod *p)
{
	return 3 + (uint64_t)p->ep_n_pod_ips + 3 * (uint64_t)p->ep_n_ports;
}

/* The selector is compiled when stored: validated once (metav1.LabelSelectorAsSelector's
 * rules) by the encoder, kept as its requirements, so that no reader parses or validates it
 * again per event (shm_rec_selector_match). */
enum shm_rec_sel_state {
	SHM_REC_SEL_NIL = 0,     /* spec.selector absent: matches nothing */
	SHM_REC_SEL_VALID = 1,   /* valid: the selector blobs hold its requirements */
	SHM_REC_SEL_INVALID = 2, /* did not convert; blob 0 holds the error text */
};

struct shm_rec_rs {
	int32_t spec_replicas;
	uint8_t has_spec_replicas;
	uint8_t sel_state; /* enum shm_rec_sel_state */
	uint8_t has_terminating_replicas;
	uint8_t tmpl_parts; /* enum shm_rec_tmpl_parts: which template part blobs are present */
	int32_t min_ready_seconds;
	int32_t replicas, fully_labeled_replicas, ready_replicas, available_replicas;
	int32_t terminating_replicas;
	uint32_t n_conditions;
	uint32_t n_annotations; /* version 5 (was padding) */
	int64_t observed_generation;
	/* version 3: the compiled selector and the parsed template labels */
	uint32_t n_sel_labels, n_sel_exprs; /* matchLabels, matchExpressions */
	uint32_t n_sel_blobs;               /* blobs after blob 0 that hold them */
	uint32_t n_template_labels;
};
_Static_assert(sizeof(struct shm_rec_rs) == 64, "replicaset fixed layout");

/* The template's parts a pod is built from (kube_template_parts), stored as four blobs after
 * the template's labels: metadata.labels, metadata.annotations, metadata.finalizers, spec (JSON
 * text each; an absent part is an empty blob without its bit). */
enum shm_rec_tmpl_parts {
	SHM_REC_TMPL_VALID = 1u << 0, /* the parts were found: build pods from them */
	SHM_REC_TMPL_LABELS = 1u << 1,
	SHM_REC_TMPL_ANNOTATIONS = 1u << 2,
	SHM_REC_TMPL_FINALIZERS = 1u << 3,
	SHM_REC_TMPL_SPEC = 1u << 4,
};
#define SHM_REC_TMPL_N_PARTS 4

/* Blob indexes of a ReplicaSet record's parts (the selector's first blob is 1). */
static inline uint64_t shm_rec_rs_template(const struct shm_rec_rs *r)
{
	return 1 + (uint64_t)r->n_sel_blobs;
}
static inline uint64_t shm_rec_rs_first_condition(const struct shm_rec_rs *r)
{
	return shm_rec_rs_template(r) + 1 + 2 * (uint64_t)r->n_template_labels +
	       SHM_REC_TMPL_N_PARTS;
}
static inline uint64_t shm_rec_rs_first_annotation(const struct shm_rec_rs *r)
{
	return shm_rec_rs_first_condition(r) + 5 * (uint64_t)r->n_conditions;
}

/* Full-object records (SHM_RECORD_OBJECT): any resource a controller watches whole. The body is
 * the object's JSON text as the apiserver sent it (list item or watch event object): JSON
 * rather than protobuf because custom resources have no protobuf form, because a reader needs
 * no schema to read JSON, and because kcmd's encoders and decoders speak JSON. */
enum shm_rec_body_format {
	SHM_REC_BODY_JSON = 0,
};

struct shm_rec_object {
	uint8_t body_format; /* enum shm_rec_body_format */
	uint8_t pad0[3];
	uint32_t n_annotations;
};
_Static_assert(sizeof(struct shm_rec_object) == 8, "object fixed layout");

/* A parsed view of a payload (pointers into it). */
struct shm_rec_view {
	struct shm_rec_hdr hdr;
	const uint8_t *fixed;
	const uint8_t *blobs; /* first blob */
	const uint8_t *end;
};

/* Every blob takes at least its length word and its NUL. */
#define SHM_REC_MIN_BLOB 5u

/* Returns 0, -EPROTONOSUPPORT (other magic), -EBADMSG (truncated, or counts the bytes cannot
 * hold). After 0: fixed_len fits the payload, n_blobs blobs could fit the rest (each takes at
 * least SHM_REC_MIN_BLOB bytes; each is still checked when read), and n_finalizers <= n_blobs,
 * so shm_rec_first_finalizer cannot wrap. */
static inline int shm_rec_parse(const void *payload, size_t len, struct shm_rec_view *v)
{
	const uint8_t *p = (const uint8_t *)payload;

	if (!payload || len < sizeof(v->hdr))
		return -EBADMSG;
	memcpy(&v->hdr, p, sizeof(v->hdr));
	if (v->hdr.magic != SHM_REC_MAGIC)
		return -EPROTONOSUPPORT;
	if (v->hdr.fixed_len > len - sizeof(v->hdr))
		return -EBADMSG;
	if ((uint64_t)v->hdr.n_blobs * SHM_REC_MIN_BLOB > len - sizeof(v->hdr) - v->hdr.fixed_len ||
	    v->hdr.n_finalizers > v->hdr.n_blobs)
		return -EBADMSG;
	v->fixed = p + sizeof(v->hdr);
	v->blobs = v->fixed + v->hdr.fixed_len;
	v->end = p + len;
	return 0;
}

/* The i-th blob: 0 and *ret and *ret_len (NUL-terminated), -ENOENT past the end, -EBADMSG. */
static inline int shm_rec_blob(const struct shm_rec_view *v, unsigned i, const char **ret,
                               size_t *ret_len)
{
	const uint8_t *p = v->blobs;
	uint32_t l;

	if (i >= v->hdr.n_blobs)
		return -ENOENT;
	for (unsigned k = 0;; k++) {
		if ((size_t)(v->end - p) < 4)
			return -EBADMSG;
		memcpy(&l, p, 4);
		if ((size_t)(v->end - p) - 4 < (size_t)l + 1 || p[4 + (size_t)l] != 0)
			return -EBADMSG;
		if (k == i) {
			*ret = (const char *)(p + 4);
			if (ret_len)
				*ret_len = l;
			return 0;
		}
		p += 4 + (size_t)l + 1;
	}
}

static inline int shm_rec_pod_get(const struct shm_rec_view *v, struct shm_rec_pod *ret)
{
	if (v->hdr.fixed_len < sizeof(*ret))
		return -EBADMSG;
	memcpy(ret, v->fixed, sizeof(*ret));
	return 0;
}

static inline int shm_rec_rs_get(const struct shm_rec_view *v, struct shm_rec_rs *ret)
{
	if (v->hdr.fixed_len < sizeof(*ret))
		return -EBADMSG;
	memcpy(ret, v->fixed, sizeof(*ret));
	return 0;
}

static inline int shm_rec_object_get(const struct shm_rec_view *v, struct shm_rec_object *ret)
{
	if (v->hdr.fixed_len < sizeof(*ret))
		return -EBADMSG;
	memcpy(ret, v->fixed, sizeof(*ret));
	return 0;
}

/* Every blob at once, in one pass (shm_rec_blob walks from the first blob on every call):
 * ret[i] and ret_len[i] for i < hdr.n_blobs, each NUL-terminated inside the payload.
 * Returns 0 or -EBADMSG (a blob runs past the payload). */
static inline int shm_rec_blobs(const struct shm_rec_view *v, const char **ret, size_t *ret_len)
{
	const uint8_t *p = v->blobs;
	uint32_t l;

	for (uint32_t k = 0; k < v->hdr.n_blobs; k++) {
		if ((size_t)(v->end - p) < 4)
			return -EBADMSG;
		memcpy(&l, p, 4);
		if ((size_t)(v->end - p) - 4 < (size_t)l + 1 || p[4 + (size_t)l] != 0)
			return -EBADMSG;
		ret[k] = (const char *)(p + 4);
		ret_len[k] = l;
		p += 4 + (size_t)l + 1;
	}
	return 0;
}

/* The node a pod record is bound to (blob 0, spec.nodeName): 1 and *ret / *ret_len (inside the
 * payload, NUL-terminated) when it is set, 0 when it is empty, -EPROTONOSUPPORT (another
 * record version) or -EBADMSG. The arena's node index keys pods by it (shm/arena.h). */
static inline int shm_rec_pod_node(const void *payload, size_t len, const char **ret,
                                   size_t *ret_len)
{
	struct shm_rec_view v;
	int r = shm_rec_parse(payload, len, &v);

	if (r < 0)
		return r;
	if (v.hdr.n_blobs - v.hdr.n_finalizers < 1)
		return -EBADMSG;
	if ((r = shm_rec_blob(&v, 0, ret, ret_len)) < 0)
		return r;
	return *ret_len > 0;
}

/* Index of the first finalizer blob (shm_rec_parse checked n_finalizers <= n_blobs). */
static inline unsigned shm_rec_first_finalizer(const struct shm_rec_view *v)
{
	return (unsigned)(v->hdr.n_blobs - v->hdr.n_finalizers);
}

/* ---- copies of a copied-out object ------------------------------------------------------- */
struct shm_obj;

/* A deep copy of a copied-out object (iteration hands out a copy that the next object
 * overwrites). Returns 0, -ENOMEM, -EINVAL (a pointer outside the object's own memory). */
int shm_obj_dup(const struct shm_obj *src, struct shm_obj *dst);
/* A deep copy of any shm_obj, also one whose memory is not a copied-out record (a change-feed
 * event's): dst owns one malloc'd block (shm_obj_release frees it). 0 or -ENOMEM. */
int shm_obj_clone(const struct shm_obj *src, struct shm_obj *dst);
