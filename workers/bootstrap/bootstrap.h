/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/bootstrap/bootstrap.h: kcm's bootstrap-token controllers' decisions, pure (no I/O).
 *
 * Design note.
 *   Upstream (pkg/controller/bootstrap, v1.37; k8s.io/cluster-bootstrap) has two controllers over
 *   the Secrets of type bootstrap.kubernetes.io/token in kube-system, both off by default and
 *   turned on by kubeadm (`--controllers=*,bootstrapsigner,tokencleaner`):
 *   - token-cleaner-controller (alias tokencleaner): a token Secret whose data.expiration
 *     (RFC 3339) has passed, or does not parse, is deleted with a UID precondition (NotFound and
 *     Conflict are done, other errors are logged and not retried); one that expires later is
 *     looked at again then (AddAfter). No expiration: kept.
 *   - bootstrap-signer-controller (alias bootstrapsigner): the ConfigMap kube-public/cluster-info
 *     gets, for every token Secret valid for signing (name bootstrap-token-<id>, data.token-id
 *     equal to <id>, a non-empty data.token-secret, not expired, data.usage-bootstrap-signing
 *     "true"), the key jws-kubeconfig-<id> = the detached JWS (RFC 7515 appendix F) of
 *     data.kubeconfig: HS256 over base64url(header) "." base64url(content), the header
 *     {"alg":"HS256","kid":"<id>"}, the secret zero-padded to 32 bytes (go-jose's minimum), the
 *     content part left out ("<header>..<signature>"). Signatures of other ids are removed. The
 *     ConfigMap is updated only when a signature was added, changed or removed; a ConfigMap
 *     without data.kubeconfig is left alone. Errors of the update are logged, not retried.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BT_CLEANER_CONTROLLER "token-cleaner-controller"
#define BT_SIGNER_CONTROLLER  "bootstrap-signer-controller"
#define BT_CLEANER_QUEUE      "token_cleaner"
#define BT_SIGNER_QUEUE       "bootstrap_signer_queue"
#define BT_SECRET_TYPE        "bootstrap.kubernetes.io/token"
#define BT_NAMESPACE          "kube-system"
#define BT_CM_NAMESPACE       "kube-public"
#define BT_CM_NAME            "cluster-info"
#define BT_SIG_PREFIX         "jws-kubeconfig-"

/* The detached JWS of content for (id, secret) into out (NUL-terminated, at most outlen).
 * 0, -ENOSPC, -EIO (the HMAC failed). */
int bt_jws_detached(const char *content, size_t content_len, const char *id, const char *secret,
                    size_t secret_len, char *out, size_t outlen);

/* A Secret's JSON: whether it is a bootstrap token Secret of kube-system (type and namespace). */
bool bt_is_token_secret(const char *json, size_t len);

/* GetExpiration: data.expiration of a Secret's JSON against now (ns since the epoch). Returns 1
 * expired (or unparseable), 0 not expired with *ttl_ns the time left (0: no expiration),
 * -EBADMSG when json is not an object. */
int bt_expiration(const char *json, size_t len, int64_t now_ns, int64_t *ttl_ns);

/* validateSecretForSigning: 1 with *id and *secret (malloc'd, the secret decoded) when the
 * Secret may sign; 0 when it may not; -ENOMEM. */
int bt_signing_token(const char *json, size_t len, int64_t now_ns, char **id, char **secret,
                     size_t *secret_len);

struct bt_token {
	char *id;
	char *secret;
	size_t secret_len;
};

/* signConfigMap's decision for the cached cluster-info JSON and the valid tokens (the first of
 * an id wins): 0 with *body = NULL when nothing changes (or there is no data.kubeconfig), 0 with
 * *body = the update (malloc'd: the object with its jws-kubeconfig-* keys replaced), -EBADMSG,
 * -ENOMEM. */
int bt_sign_plan(const char *cm_json, size_t len, const struct bt_token *tokens, size_t n,
                 char **body);
