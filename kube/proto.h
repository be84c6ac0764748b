/* SPDX-License-Identifier: Apache-2.0 */
/* kube/proto.h - Kubernetes' protobuf encoding (application/vnd.kubernetes.protobuf) decoded
 * into the same kube/model.h structs as the JSON decoders.
 *
 * The wire format (apimachinery runtime/serializer/protobuf):
 *  - a body (GET, LIST, an error Status) is the 4-byte magic "k8s\0" followed by a
 *    runtime.Unknown message {1 typeMeta {1 apiVersion, 2 kind}, 2 raw, 3 contentEncoding,
 *    4 contentType}; raw holds the object's own message (Pod, PodList, ...);
 *  - a watch stream (Content-Type ...;stream=watch) is a sequence of frames, each a 4-byte
 *    big-endian length and a bare metav1.WatchEvent {1 type, 2 object {1 raw}} without magic;
 *    object.raw is again a full "k8s\0" + Unknown body (kube/watch.h frames the stream).
 *
 * Decoded kinds: KUBE_KIND_POD, KUBE_KIND_REPLICASET, KUBE_KIND_PARTIAL (a
 * PartialObjectMetadata[List], or the metadata of any object), KUBE_KIND_STATUS. Others give
 * -EOPNOTSUPP (Lease and Scale stay JSON). The result is field for field what kube_decode()
 * makes from the same object served as JSON (kube/tests/test-proto.c checks this on objects
 * captured from a real apiserver), with ONE exception: a ReplicaSet's template_json is NULL,
 * because protobuf carries spec.template as a PodTemplateSpec message, not JSON text. The
 * template's labels (template_labels) are decoded. Whoever creates pods from a template must
 * therefore read ReplicaSets as JSON (informerd does).
 *
 * Errors (ret_ parameters are written only on success):
 *   -EBADMSG  not the protobuf wire format: missing magic, a truncated or over-long varint, a
 *             length past the end of its message, a group or unknown wire type, a truncated
 *             fixed-width field
 *   -EPROTO   well-formed wire of the wrong shape: a known field with the wrong wire type, a
 *             string holding a NUL byte, a time outside 1970..2262, a content encoding other
 *             than none, a watch event without a known type or object
 *   -E2BIG    input larger than KUBE_DECODE_MAX_BYTES
 *   -EOPNOTSUPP  a kind this decoder does not handle
 *   -ENOMEM, -EINVAL (NULL arguments)
 * Nesting depth is bounded by the schema: only known fields are descended into, every other
 * field is skipped by its length without being looked at, so no input can recurse deeper than
 * the envelope -> list -> item -> status -> container status chain.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "kube/model.h"

#define KUBE_PROTO_MAGIC      "k8s\0"
#define KUBE_PROTO_MAGIC_LEN  4
#define KUBE_CONTENT_PROTOBUF "application/vnd.kubernetes.protobuf"
#define KUBE_CONTENT_JSON     "application/json"

/* kcm's --kube-api-content-type: "application/json" or "application/vnd.kubernetes.protobuf"
 * (kcm's default). *ret is the matching constant above, for kube_client_opts.content_type.
 * -EINVAL for anything else (kcmd decodes no other encoding). */
int kube_content_type_parse(const char *s, const char **ret);

/* true if buf starts with the protobuf magic. */
bool kube_proto_is(const void *buf, size_t len);

int kube_proto_decode(enum kube_kind kind, const void *buf, size_t len, unsigned flags,
                      void **ret_obj);
int kube_proto_decode_scratch(struct kube_scratch *s, enum kube_kind kind, const void *buf,
                              size_t len, unsigned flags, void **ret_obj);

/* A PodList / ReplicaSetList / PartialObjectMetadataList, item by item, as kube_decode_list():
 * the callback gets each item as soon as it is decoded; the list is never held. */
int kube_proto_decode_list(enum kube_kind kind, const void *buf, size_t len, unsigned flags,
                           kube_item_fn fn, void *userdata, struct kube_list_meta *ret_meta);
int kube_proto_decode_list_scratch(struct kube_scratch *s, enum kube_kind kind, const void *buf,
                                   size_t len, unsigned flags, kube_item_fn fn, void *userdata,
                                   struct kube_list_meta *ret_meta);

/* One watch frame (without its length prefix). ERROR events carry a Status. */
int kube_proto_decode_watch_event(enum kube_kind kind, const void *frame, size_t len,
                                  unsigned flags, enum kube_watch_type *ret_type, void **ret_obj);

/* ---- either encoding ------------------------------------------------------------------------ */
/* For a consumer that asked for protobuf with a JSON fallback (the apiserver answers JSON for
 * custom resources): bodies are told apart by the magic, watch events by their first byte:
 * a protobuf WatchEvent starts with field 1's tag, 0x0a; anything else goes to the JSON decoder
 * (kube/watch.h hands JSON events over from their '{'). */
int kube_decode_any(enum kube_kind kind, const void *buf, size_t len, unsigned flags,
                    void **ret_obj);
int kube_decode_list_any(enum kube_kind kind, const void *buf, size_t len, unsigned flags,
                         kube_item_fn fn, void *userdata, struct kube_list_meta *ret_meta);
int kube_decode_list_scratch_any(struct kube_scratch *s, enum kube_kind kind, const void *buf,
                                 size_t len, unsigned flags, kube_item_fn fn, void *userdata,
                                 struct kube_list_meta *ret_meta);
int kube_decode_watch_event_any(enum kube_kind kind, const void *buf, size_t len, unsigned flags,
                                enum kube_watch_type *ret_type, void **ret_obj);

/* ---- encoding (kube/proto-encode.c) ---------------------------------------------------------
 * Request bodies as client-go sends them on a protobuf client: create and update bodies of
 * built-in types; patches stay JSON. Both return a malloc'd body (magic + runtime.Unknown) in
 * *ret / *ret_len, written only on success. The JSON input is transcoded field by field with
 * tables generated from k8s.io/api v0.37.2 (kube/proto-schema.c); a key those tables do not
 * know, or a value of a kind the transcoder does not write (floats, Duration, bytes that are
 * not padded standard base64), gives -EOPNOTSUPP: send the JSON body instead (nothing is ever
 * dropped). Other errors: -EBADMSG not JSON, -EPROTO JSON of the wrong shape (or another
 * kind/apiVersion), -E2BIG, -ENOMEM, -EINVAL. */

/* The JSON object json of a built-in kind as a protobuf create/update body. Kinds: those
 * tools/gen-proto-schema.py has tables for, every built-in kind kcmd creates or updates
 * (docs/kube.md lists them). Any other (api_version, kind) gives -EOPNOTSUPP (send JSON). A
 * "kind"/"apiVersion" in the JSON must match the arguments (-EPROTO). */
int kube_proto_encode_json(const char *api_version, const char *kind, const char *json, size_t len,
                           void **ret, size_t *ret_len);
/* true if kube_proto_encode_json() has tables for (api_version, kind). */
bool kube_proto_encodes(const char *api_version, const char *kind);

/* A Pod (as kube_encode_pod_from_template() writes it) as a protobuf create body. */
int kube_proto_encode_pod_json(const char *json, size_t len, void **ret, size_t *ret_len);

/* A PUT replicasets/status body: the ReplicaSet rs_pb as served in protobuf (a GET body), its
 * metadata.managedFields dropped and its status replaced by status_json (a ReplicaSetStatus
 * object as JSON). -EBADMSG / -EPROTO also for an rs_pb that is not a protobuf object. */
int kube_proto_rs_with_status(const void *rs_pb, size_t len, const char *status_json,
                              size_t status_len, void **ret, size_t *ret_len);
