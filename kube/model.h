/* SPDX-License-Identifier: Apache-2.0 */
/* kube/model.h - the object model: compact C views of the Kubernetes objects controllers read.
 *
 * A decoded object is ONE allocation family (an arena): the struct and every string and array it
 * points to. Free it with kube_object_free(). Nothing in it points into the input buffer, so the
 * caller may free the JSON right after decoding.
 *
 * What is kept is what the ReplicaSet controller and the garbage collector read (see
 * docs/kube.md); everything else (managedFields, most of the spec, most annotations) is skipped
 * without being materialised. Strings are NUL-terminated UTF-8; an absent string is NULL, never
 * "". Tri-state booleans use int8_t: -1 absent, 0 false, 1 true (ownerReference.controller and
 * blockOwnerDeletion are pointers in Go, and the GC must tell unset from false).
 *
 * Times are kube_time_t: nanoseconds since the Unix epoch, UTC; 0 means unset (JSON null or
 * missing), the Go zero time. Times before 1970 or after 2262 are rejected (-EPROTO).
 *
 * All decoders return 0 on success and a negative errno:
 *   -EBADMSG  the input is not JSON (truncated, syntax error, bad escape, bad UTF-16 escape)
 *   -EPROTO   valid JSON of the wrong shape (string where an object belongs, int out of range,
 *             malformed timestamp)
 *   -E2BIG    input larger than KUBE_DECODE_MAX_BYTES or nested deeper than 512
 *   -ENOMEM
 *   -EINVAL   NULL arguments
 * ret_ out-parameters are written only on success.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef int64_t kube_time_t; /* ns since epoch, UTC; 0 = unset */

#define KUBE_DECODE_MAX_BYTES ((size_t)256 << 20) /* one object or one list page */

struct kube_kv {
	const char *key;
	const char *value;
};

struct kube_owner_ref {
	const char *api_version;
	const char *kind;
	const char *name;
	const char *uid;
	int8_t controller;           /* -1 absent, 0 false, 1 true */
	int8_t block_owner_deletion; /* -1 absent, 0 false, 1 true */
};

struct kube_object_meta {
	const char *name;
	const char *generate_name;
	const char *namespace;
	const char *uid;
	const char *resource_version;
	int64_t generation;
	kube_time_t creation_timestamp;
	kube_time_t deletion_timestamp;
	int64_t deletion_grace_period_seconds;
	bool has_deletion_grace_period_seconds;
	uint32_t n_labels, n_annotations, n_owner_refs, n_finalizers;
	struct kube_kv *labels;      /* in document order */
	struct kube_kv *annotations; /* only kept keys, see KUBE_DECODE_ALL_ANNOTATIONS */
	struct kube_owner_ref *owner_refs;
	const char **finalizers;
};

/* Decoder flags. */
enum {
	/* Keep every annotation. Default: only keys under "controller.kubernetes.io/",
	 * "deployment.kubernetes.io/", "k8s.io/initial-events-end" and
	 * "control-plane.alpha.kubernetes.io/leader" (what controllers read). */
	KUBE_DECODE_ALL_ANNOTATIONS = 1u << 0,
};

/* ---- label selector as it appears in objects (metav1.LabelSelector) ------------------------- */
enum kube_selector_op {
	KUBE_OP_IN,
	KUBE_OP_NOT_IN,
	KUBE_OP_EXISTS,
	KUBE_OP_DOES_NOT_EXIST,
	KUBE_OP_EQUALS,        /* string form "=" and matchLabels */
	KUBE_OP_DOUBLE_EQUALS, /* string form "==" */
	KUBE_OP_NOT_EQUALS,
	KUBE_OP_GT,
	KUBE_OP_LT,
	KUBE_OP_INVALID, /* matchExpressions operator not understood; conversion fails */
};

struct kube_label_requirement {
	const char *key;
	enum kube_selector_op op;
	const char *op_text; /* the operator as written in matchExpressions (for error text) */
	uint32_t n_values;
	const char **values;
};

struct kube_label_selector {
	uint32_t n_match_labels, n_match_expressions;
	struct kube_kv *match_labels;
	struct kube_label_requirement *match_expressions;
};

/* ---- Pod ------------------------------------------------------------------------------------ */
enum kube_pod_phase {
	KUBE_POD_PHASE_UNSET = 0,
	KUBE_POD_PENDING,
	KUBE_POD_RUNNING,
	KUBE_POD_SUCCEEDED,
	KUBE_POD_FAILED,
	KUBE_POD_UNKNOWN,
	KUBE_POD_PHASE_OTHER,
};

struct kube_pod {
	struct kube_object_meta meta;
	const char *node_name; /* spec.nodeName */
	/* The node spec.affinity's required node affinity targets, as upstream's GetTargetNodeName
	 * (pkg/controller/daemon/util) reads it: over the nodeSelectorTerms in order, the first
	 * matchFields requirement with key metadata.name and operator In; its value when it has
	 * exactly one, else NULL (as when there is no such requirement). The DaemonSet controller
	 * reads it for pods not yet bound. */
	const char *affinity_node;
	enum kube_pod_phase phase;         /* status.phase */
	bool ready;                        /* condition Ready has status "True" */
	kube_time_t ready_transition_time; /* that condition's lastTransitionTime (0 if absent) */
	/* the first Ready condition's status as MarkPodsNotReady tells it apart (enum
	 * kube_cond_status; record version 9) */
	uint8_t ready_status;
	int32_t max_restarts;         /* max restartCount over status.containerStatuses */
	int32_t max_sidecar_restarts; /* over initContainerStatuses whose spec init container has
	                               * restartPolicy Always (sidecars), as upstream ranks */
	int32_t deletion_cost;        /* controller.kubernetes.io/pod-deletion-cost, 0 if absent or
	                               * invalid (upstream's parse rules) */
	bool has_deletion_cost;       /* the annotation was present and valid */
	/* the DisruptionTarget condition (the disruption controller's stale-condition cleanup):
	 * enum kube_disruption_target, and its lastTransitionTime (0 if absent) */
	uint8_t disruption_target;
	kube_time_t disruption_target_time;
	/* Whether spec.volumes has a generic ephemeral volume (an item with a non-null
	 * "ephemeral") and whether spec.resourceClaims is not empty: the ephemeral-volume and
	 * resourceclaim controllers queue only such pods, as upstream's enqueuePod (record
	 * version 7; their syncs still read the volumes and claims themselves live). */
	bool has_ephemeral_volume;
	bool has_resource_claims;
	/* that condition is status "True" with reason "DeletionByTaintManager" (the taint eviction
	 * controller's own; record version 9) */
	bool dt_taint_manager;
	/* ---- the EndpointSlice controller's part (record version 6) ----
	 * What the endpointslice reconciler reads of a pod beyond the fields above, so that its
	 * sync reads pods from the cache (docs/endpointslice.md). */
	struct kube_pod_endpoint {
		const char *hostname;  /* spec.hostname, NULL if absent */
		const char *subdomain; /* spec.subdomain, NULL if absent */
		const char *pod_ip;    /* status.podIP, NULL if absent */
		uint32_t n_pod_ips;
		const char **pod_ips; /* status.podIPs[].ip in order ("" for an item without ip) */
		uint32_t n_ports;
		/* the named ports of spec.containers and of the spec.initContainers with
		 * restartPolicy Always (sidecar set), each group in its document order (FindPort
		 * searches the containers' first); unnamed ports are left out (a Service's
		 * targetPort names a port or is a number) */
		struct kube_pod_port {
			const char *name;     /* not empty */
			const char *protocol; /* NULL if absent */
			int32_t container_port;
			bool sidecar;
		} * ports;
	} ep;
	/* ---- spec.tolerations, whole and in order (record version 9): the taint eviction
	 * controller's decisions read them from the cache. No limit but the object's size. */
	uint32_t n_tolerations;
	struct kube_toleration {
		const char *key;    /* NULL if absent or "" */
		const char *op;     /* operator, NULL if absent or "" */
		const char *value;  /* NULL if absent or "" */
		const char *effect; /* NULL if absent or "" */
		bool has_seconds;   /* tolerationSeconds set */
		int64_t seconds;
	} * tolerations;
};

/* A condition's status as three states, plus absent. A status other than the three API values
 * counts as Unknown (it is neither True nor False, which is all a reader asks). */
enum kube_cond_status {
	KUBE_COND_ABSENT = 0,
	KUBE_COND_TRUE,
	KUBE_COND_FALSE,
	KUBE_COND_UNKNOWN,
};

enum kube_disruption_target {
	KUBE_DT_NONE = 0,     /* no DisruptionTarget condition */
	KUBE_DT_TRUE = 1,     /* status "True" */
	KUBE_DT_TRUE_KUBELET, /* status "True", reason "TerminationByKubelet" */
	KUBE_DT_NOT_TRUE,     /* present with another status */
};

/* ---- ReplicaSet ----------------------------------------------------------------------------- */
struct kube_condition {
	const char *type;
	const char *status;
	const char *reason;
	const char *message;
	kube_time_t last_transition_time;
};

struct kube_replicaset {
	struct kube_object_meta meta;
	int32_t spec_replicas; /* spec.replicas; 1 when absent (API default) */
	bool has_spec_replicas;
	int32_t min_ready_seconds;
	struct kube_label_selector *selector; /* NULL: selector absent (nil) */
	uint32_t n_template_labels;
	struct kube_kv *template_labels; /* spec.template.metadata.labels */
	const char *template_json;       /* spec.template verbatim (NUL-terminated) */
	size_t template_json_len;
	/* spec.template's parts a pod is made of, as JSON text spans inside template_json (or a
	 * record), each NULL when absent: metadata.labels, metadata.annotations,
	 * metadata.finalizers, spec. Found by the decoder's walk over the template, so building a
	 * pod from them (kube_encode_pod_from_template_parts) parses nothing. */
	struct kube_template_parts {
		const char *labels, *annotations, *finalizers, *spec;
		size_t labels_len, annotations_len, finalizers_len, spec_len;
		bool valid; /* the spans were found (the template is a JSON object) */
	} template_parts;
	struct {
		int32_t replicas, fully_labeled_replicas, ready_replicas, available_replicas;
		int32_t terminating_replicas;
		bool has_terminating_replicas; /* nil != 0 for change detection */
		int64_t observed_generation;
		uint32_t n_conditions;
		struct kube_condition *conditions;
	} status;
};

/* ---- Lease (coordination.k8s.io/v1) --------------------------------------------------------- */
struct kube_lease {
	struct kube_object_meta meta;
	const char *holder_identity;
	int32_t lease_duration_seconds;
	bool has_lease_duration_seconds;
	kube_time_t acquire_time; /* MicroTime */
	kube_time_t renew_time;   /* MicroTime */
	int32_t lease_transitions;
	bool has_lease_transitions;
	const char *strategy;
	const char *preferred_holder;
};

/* ---- PartialObjectMetadata (meta.k8s.io/v1) ------------------------------------------------- */
struct kube_partial {
	struct kube_object_meta meta;
	const char *api_version;
	const char *kind;
};

/* ---- any object, whole (KUBE_KIND_OBJECT) ------------------------------------------------- */
/* Its metadata with every annotation (KUBE_DECODE_ALL_ANNOTATIONS implied) plus the object's
 * JSON text exactly as received (the bytes of the object in the body or watch event, without
 * surrounding whitespace; NUL-terminated). JSON only: a protobuf body answers -EPROTO (the
 * caller asks for JSON; custom resources have no protobuf form). Starts like kube_partial. */
struct kube_object {
	struct kube_object_meta meta;
	const char *api_version;
	const char *kind;
	const char *raw;
	size_t raw_len;
};

/* ---- Scale (autoscaling/v1) ----------------------------------------------------------------- */
struct kube_scale {
	struct kube_object_meta meta;
	int32_t spec_replicas;
	int32_t status_replicas;
	const char *status_selector; /* string form */
};

/* ---- Status (meta.k8s.io/v1) ---------------------------------------------------------------- */
struct kube_status_cause {
	const char *type; /* "reason" on the wire */
	const char *message;
	const char *field;
};

struct kube_status {
	const char *status; /* "Success" / "Failure" */
	const char *message;
	const char *reason; /* StatusReason, e.g. "NotFound" */
	int32_t code;       /* HTTP code it carried */
	const char *details_name, *details_group, *details_kind, *details_uid;
	int32_t retry_after_seconds;
	uint32_t n_causes;
	struct kube_status_cause *causes;
};

/* ---- decoding ------------------------------------------------------------------------------- */
enum kube_kind {
	KUBE_KIND_POD = 1,
	KUBE_KIND_REPLICASET,
	KUBE_KIND_LEASE,
	KUBE_KIND_PARTIAL, /* PartialObjectMetadata, or any object when only metadata is wanted */
	KUBE_KIND_SCALE,
	KUBE_KIND_STATUS,
	KUBE_KIND_OBJECT, /* struct kube_object: metadata, every annotation, the JSON text */
	/* a core/v1 ReplicationController decoded as the struct kube_replicaset upstream's
	 * replication controller converts it to (its map selector as matchLabels); JSON only */
	KUBE_KIND_REPLICATIONCONTROLLER,
};

int kube_decode(enum kube_kind kind, const void *json, size_t len, unsigned flags, void **ret_obj);
int kube_decode_pod(const void *json, size_t len, unsigned flags, struct kube_pod **ret);
int kube_decode_replicaset(const void *json, size_t len, unsigned flags,
                           struct kube_replicaset **ret);
int kube_decode_lease(const void *json, size_t len, unsigned flags, struct kube_lease **ret);
int kube_decode_partial(const void *json, size_t len, unsigned flags, struct kube_partial **ret);
int kube_decode_scale(const void *json, size_t len, unsigned flags, struct kube_scale **ret);
int kube_decode_status(const void *json, size_t len, unsigned flags, struct kube_status **ret);

/* Frees any object returned by a decoder (NULL is fine). */
void kube_object_free(void *obj);
/* Bytes held by a decoded object (for accounting). */
size_t kube_object_bytes(const void *obj);

static inline void kube_object_freep(void *p)
{
	kube_object_free(*(void **)p);
}
#define _cleanup_kube_object_ __attribute__((cleanup(kube_object_freep)))

/* ---- lists ---------------------------------------------------------------------------------- */
struct kube_list_meta {
	char resource_version[128];
	char cont[4096];              /* continue token ("" when last page) */
	int64_t remaining_item_count; /* -1 when absent */
};

/* Called once per item, in order; the callback owns obj (free it with kube_object_free). A
 * negative return stops decoding and is returned by kube_decode_list(). */
typedef int (*kube_item_fn)(void *obj, void *userdata);

/* Decodes a List (items of `kind`). Returns the number of items or a negative errno; items
 * already handed to the callback stay handed over. ret_meta may be NULL. */
int kube_decode_list(enum kube_kind kind, const void *json, size_t len, unsigned flags,
                     kube_item_fn fn, void *userdata, struct kube_list_meta *ret_meta);

/* ---- scratch decoding ---------------------------------------------------------------------- */
/* For a consumer that copies what it needs elsewhere right away (informerd writing the shared
 * arena): decoding into a scratch reuses the same memory every time, so the steady state makes no
 * malloc at all. An object decoded into a scratch lives until the next decode into the same
 * scratch or kube_scratch_free(); never pass it to kube_object_free(). */
struct kube_scratch;
int kube_scratch_new(struct kube_scratch **ret);
void kube_scratch_free(struct kube_scratch *s);
int kube_decode_scratch(struct kube_scratch *s, enum kube_kind kind, const void *json, size_t len,
                        unsigned flags, void **ret_obj);
/* kube_decode_list() through a scratch: obj is valid only during the callback (do not free). */
int kube_decode_list_scratch(struct kube_scratch *s, enum kube_kind kind, const void *json,
                             size_t len, unsigned flags, kube_item_fn fn, void *userdata,
                             struct kube_list_meta *ret_meta);

/* ---- watch events --------------------------------------------------------------------------- */
enum kube_watch_type {
	KUBE_WATCH_ADDED = 1,
	KUBE_WATCH_MODIFIED,
	KUBE_WATCH_DELETED,
	KUBE_WATCH_BOOKMARK,
	KUBE_WATCH_ERROR, /* obj is a struct kube_status */
};

/* Decodes one watch event line {"type":..., "object":...}. For ERROR the object is decoded as a
 * Status whatever `kind` is. */
int kube_decode_watch_event(enum kube_kind kind, const void *json, size_t len, unsigned flags,
                            enum kube_watch_type *ret_type, void **ret_obj);

/* ---- time ----------------------------------------------------------------------------------- */
/* Parses RFC 3339 ("2006-01-02T15:04:05Z", optional fraction of up to 9 digits, "Z" or
 * "+hh:mm"). Returns 0 or -EINVAL / -ERANGE. */
int kube_time_parse(const char *s, size_t n, kube_time_t *ret);
/* Formats as metav1.Time ("2006-01-02T15:04:05Z", seconds) or MicroTime
 * ("2006-01-02T15:04:05.000000Z"). buf needs 32 bytes. Returns the length. */
#define KUBE_TIME_BUF 32
int kube_time_format(kube_time_t t, char buf[static KUBE_TIME_BUF]);
int kube_microtime_format(kube_time_t t, char buf[static KUBE_TIME_BUF]);
kube_time_t kube_time_now(void);

/* ---- helpers -------------------------------------------------------------------------------- */
const char *kube_labels_get(const struct kube_kv *kv, uint32_t n, const char *key);
/* status.phase as the API spells it ("Pending" ... "Unknown"); NULL for UNSET and OTHER. */
const char *kube_pod_phase_name(enum kube_pod_phase p);
/* The first ownerReference with controller == true (GetControllerOf), or NULL. */
const struct kube_owner_ref *kube_controller_of(const struct kube_object_meta *m);
/* upstream's pod-deletion-cost parse: -EINVAL if invalid. */
int kube_parse_deletion_cost(const char *s, int32_t *ret);
