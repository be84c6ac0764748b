/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * shm/record-model.h: the one home of the record codec: kube/model.h objects -> arena records
 * (the encoder informerd's store calls) and arena records -> kube/model.h views (the decoder
 * every worker, dispatcher and handler calls). The byte layout is shm/records.h.
 *
 * Design note.
 *   The arena (libshm) knows no Kubernetes type; this codec is a separate library (libshmrec)
 *   in the same folder that also links kube/'s object model. kube/ includes nothing of shm/,
 *   so the direction shm/record-model -> kube/model.h is the only edge between the two bottom
 *   layers (tools/lint/lint.py, LAYERS, names exactly which headers it may use).
 *
 *   Encoding: shm_rec_build turns a decoded object into a struct shm_record_in (names, labels,
 *   owner references with their tri-states, and the typed payload) using buffers it reuses
 *   across calls; nothing of the input is copied beyond the payload, so the object must outlive
 *   the shm_writer_upsert that consumes the record.
 *
 *   Decoding: a worker copies a record out of the arena (a consistent snapshot, shm/arena.h),
 *   then views it as a struct kube_pod / kube_replicaset / kube_partial whose strings point
 *   into that copy. One struct shm_*_view owns both; free it as a whole. Every offset and
 *   length read from the payload is checked against the payload (the record may come from a
 *   damaged or hostile arena: shm/fuzz/fuzz-records.c drives the decoders with arbitrary
 *   bytes); a record that does not fit answers -EBADMSG, never a read outside it.
 */
#include "kube/model.h"
#include "shm/arena.h"
#include "shm/records.h"

/* ---- encoding ------------------------------------------------------------------------------ */

/* Reusable encoding buffers (zero-initialise; shm_rec_enc_release frees them). */
struct shm_rec_enc {
	struct shm_label *labels;
	size_t labels_cap;
	struct shm_owner_ref *owners;
	size_t owners_cap;
	uint8_t *payload;
	size_t payload_cap;
};
void shm_rec_enc_release(struct shm_rec_enc *e);

/* The record of `obj` (a decoded object of the kube kind that record kind `kind` stores: a
 * struct kube_pod for SHM_RECORD_POD, kube_replicaset for SHM_RECORD_REPLICASET, any object
 * starting with its struct kube_object_meta for SHM_RECORD_META, a struct kube_object
 * (KUBE_KIND_OBJECT, with its JSON) for SHM_RECORD_OBJECT). *ret points into e's buffers and obj
 * until the next call. Returns 0, -EINVAL (no name/uid/resourceVersion, or a kind this function
 * does not build), -ENOMEM, -E2BIG (a string longer than a record can hold). */
int shm_rec_build(struct shm_rec_enc *e, uint16_t type, enum shm_record_kind kind, const void *obj,
                  struct shm_record_in *ret);

/* Only the payload (shm/records.h) of such an object, into *buf (grown as needed, *cap its
 * size). Returns 0 and *ret_len, -EINVAL, -ENOMEM, -E2BIG. */
int shm_rec_encode(enum shm_record_kind kind, const void *obj, uint8_t **buf, size_t *cap,
                   size_t *ret_len);

/* ---- decoding ------------------------------------------------------------------------------ */

/* Any record's metadata (metadata-only records, or the meta of a typed one). p comes first so
 * that &view->p is a struct kube_partial a caller may hand on (api_version, kind: NULL). */
struct shm_meta_view {
	struct kube_partial p;
	struct shm_obj obj;
	struct kube_kv *labels;
	struct kube_owner_ref *owners;
	const char **finalizers;
};

struct shm_pod_view {
	struct shm_obj obj;
	struct kube_pod pod;
	/* storage the views point at */
	struct kube_kv *labels;
	struct kube_owner_ref *owners;
	const char **finalizers;
	const char **pod_ips;                /* pod.ep.pod_ips */
	struct kube_pod_port *ports;         /* pod.ep.ports */
	struct kube_toleration *tolerations; /* pod.tolerations (strings point into obj) */
};

/* A ReplicaSet's selector as its record keeps it: compiled when stored (validated once by the
 * encoder, kept as requirements), so a reader neither parses nor validates it again. */
struct shm_rec_selector {
	uint8_t state;                 /* enum shm_rec_sel_state */
	struct kube_label_selector ls; /* VALID: the requirements; INVALID: one expression with
	                                * op KUBE_OP_INVALID whose op_text is the error */
	struct kube_kv *kv;            /* storage */
	struct kube_label_requirement *reqs;
	const char **vals;
};

struct shm_rs_view {
	struct shm_obj obj;
	struct kube_replicaset rs; /* rs.selector: shm_rec_selector_ls(&sel) */
	struct kube_kv *labels;
	struct kube_owner_ref *owners;
	const char **finalizers;
	struct shm_rec_selector sel;
	struct kube_condition *conds;
	struct kube_kv *tmpl_labels; /* point into the record */
	struct kube_kv *annotations; /* rs.meta.annotations: every annotation (version 5) */
};

/* A full-object record (SHM_RECORD_OBJECT): o.meta with every annotation, o.api_version,
 * o.kind, and o.raw / o.raw_len, the object's JSON as the apiserver sent it (NUL-terminated). */
struct shm_object_view {
	struct kube_object o;
	struct shm_obj obj;
	struct kube_kv *labels;
	struct kube_kv *annotations;
	struct kube_owner_ref *owners;
	const char **finalizers;
};

/* Views a copied-out record (shm_reader_get and friends, or shm_obj_dup / shm_obj_clone).
 * Each takes ownership of *obj (moved; *obj is left empty) even when it fails, and the view
 * must be freed with its _free in every case. Returns 0, -EPROTONOSUPPORT (another record
 * version), -EBADMSG (a payload that does not fit its own lengths), -ENOMEM, -EINVAL (the
 * record is not of the view's kind; any kind for the meta view). */
/* Whether a pod record's header has `flag` (SHM_REC_POD_EPHEMERAL, SHM_REC_POD_CLAIMS), read
 * without viewing the pod: 1 or 0; -EINVAL (not a pod record), -EPROTONOSUPPORT, -EBADMSG (a
 * caller then reads the pod the way it would without the flag). */
int shm_pod_flag(const struct shm_obj *o, unsigned flag);
int shm_meta_view_init(struct shm_obj *obj, struct shm_meta_view *ret);
int shm_pod_view_init(struct shm_obj *obj, struct shm_pod_view *ret);
int shm_rs_view_init(struct shm_obj *obj, struct shm_rs_view *ret);
int shm_object_view_init(struct shm_obj *obj, struct shm_object_view *ret);
void shm_meta_view_free(struct shm_meta_view *m);
void shm_pod_view_free(struct shm_pod_view *p);
void shm_rs_view_free(struct shm_rs_view *r);
void shm_object_view_free(struct shm_object_view *v);

/* The compiled selector of a ReplicaSet record without the rest of the view (listers walking
 * every ReplicaSet of a namespace per pod event). Strings point into o, which must outlive
 * *ret; free with shm_rec_selector_free (also after a failure). Returns 0, -EINVAL (not a
 * ReplicaSet record), -EPROTONOSUPPORT, -EBADMSG, -ENOMEM. */
int shm_rec_selector_get(const struct shm_obj *o, struct shm_rec_selector *ret);
void shm_rec_selector_free(struct shm_rec_selector *s);
/* NULL for a nil selector (matches nothing), else &s->ls. */
const struct kube_label_selector *shm_rec_selector_ls(const struct shm_rec_selector *s);
/* Whether labels satisfy ls, a selector as a record holds it (VALID: validated when stored;
 * matchLabels, In, NotIn, Exists, DoesNotExist). No allocation, no validation: an INVALID
 * selector (KUBE_OP_INVALID) or NULL matches nothing; callers that must report an invalid
 * selector check for KUBE_OP_INVALID first. An empty selector matches everything. */
bool shm_rec_selector_match(const struct kube_label_selector *ls, const struct kube_kv *labels,
                            uint32_t n);
