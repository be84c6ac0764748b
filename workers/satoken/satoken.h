/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/satoken/satoken.h: the serviceaccount-token-controller's pure parts: the signing key,
 * the legacy token (a JWT), the facts of a token Secret, and the bodies it writes (no I/O).
 *
 * Design note.
 *   Upstream's TokensController (pkg/controller/serviceaccount/tokens_controller.go, v1.36/37;
 *   no longer creates a token Secret per ServiceAccount since LegacyServiceAccountTokenNo-
 *   AutoGeneration) keeps two queues:
 *   - serviceaccount_tokens_service, key <ns>/<name>/<uid>, on every ServiceAccount add, update
 *     and delete: when the cache has no ServiceAccount of that name and uid, every Secret of
 *     type kubernetes.io/service-account-token in the namespace that names it (annotation
 *     kubernetes.io/service-account.name equal, .uid equal or empty) is deleted with a UID
 *     precondition (NotFound and Conflict end it; any other error retries);
 *   - serviceaccount_tokens_secret, key <ns>/<name>/<uid>/<saName>/<saUID>, on every add, update
 *     and delete of a token Secret: Secret gone from the cache (or another uid) -> the
 *     ServiceAccount, if cached, loses the reference (a live GET and an update without that
 *     name in .secrets, retried on conflict); ServiceAccount gone (cache, then a live GET) ->
 *     the Secret is deleted; else the Secret gets what it lacks: data["ca.crt"] (the root CA,
 *     when it differs and the CA is not empty), data["namespace"], data["token"] (a legacy
 *     JWT), and both annotations; written by a PUT of the live Secret when its
 *     resourceVersion is the cached one (else the update event comes later).
 *   The token: header {"alg":...,"kid":...} and the claims iss "kubernetes/serviceaccount",
 *   the four kubernetes.io/serviceaccount/... claims and sub system:serviceaccount:<ns>:<name>,
 *   each a JSON object with its keys sorted (what go-jose serialises), base64url without
 *   padding; RS256 for an RSA key, ES256/ES384/ES512 for a P-256/P-384/P-521 key (signature
 *   r||s); kid the base64url SHA-256 of the public key's DER SubjectPublicKeyInfo
 *   (upstream's keyIDFromPublicKey). RSA signatures are deterministic, so an RSA token is
 *   byte for byte upstream's (the e2e compares).
 */
#include <stdbool.h>
#include <stddef.h>

#define ST_CONTROLLER    "serviceaccount-token-controller"
#define ST_QUEUE_SA      "serviceaccount_tokens_service"
#define ST_QUEUE_SECRET  "serviceaccount_tokens_secret"
#define ST_TYPE          "kubernetes.io/service-account-token"
#define ST_ANN_NAME      "kubernetes.io/service-account.name"
#define ST_ANN_UID       "kubernetes.io/service-account.uid"
#define ST_LEGACY_ISSUER "kubernetes/serviceaccount"

/* ---- the key -------------------------------------------------------------------------------- */
struct st_key;

/* Parses a PEM private key (PKCS#1 RSA, SEC 1 EC or PKCS#8 of either, as keyutil does). 0, or
 * -EINVAL with a reason in err (not a key; a key of another type; an EC curve JOSE has no
 * algorithm for), -ENOMEM. */
int st_key_load(const char *pem, size_t len, struct st_key **ret, char *err, size_t errlen);
void st_key_free(struct st_key *k);
const char *st_key_alg(const struct st_key *k); /* "RS256", "ES256", ... */
const char *st_key_id(const struct st_key *k);

/* The legacy token of Secret secret_name for ServiceAccount ns/sa_name (uid sa_uid): the JWT,
 * malloc'd into *ret. 0, -EIO (signing failed), -ENOMEM. */
int st_legacy_token(const struct st_key *k, const char *ns, const char *sa_name, const char *sa_uid,
                    const char *secret_name, char **ret);
/* The JSON of the claims and header alone (tests compare them with upstream's). */
int st_legacy_claims(const char *ns, const char *sa_name, const char *sa_uid,
                     const char *secret_name, char **ret);

/* ---- a token Secret ------------------------------------------------------------------------- */
struct st_secret {
	char ns[254], name[254], uid[128], rv[64];
	char sa_name[254], sa_uid[128]; /* its annotations ("" when absent) */
	bool is_token;                  /* type kubernetes.io/service-account-token */
	bool needs_ca, needs_namespace, needs_token;
};

/* Reads a Secret's JSON; ca is the root CA ("" or NULL: never needed). 0, -EBADMSG. */
int st_secret_parse(const char *json, size_t len, const char *ca, struct st_secret *s);

/* Whether the Secret is a token of ServiceAccount sa_name/sa_uid (IsServiceAccountToken). */
bool st_secret_for_sa(const struct st_secret *s, const char *sa_name, const char *sa_uid);

/* Queue keys: <ns>/<name>/<uid> and <ns>/<name>/<uid>/<saName>/<saUID>. 0, -ENOSPC. */
int st_sa_key(char *out, size_t n, const char *ns, const char *name, const char *uid);
int st_secret_key(char *out, size_t n, const struct st_secret *s);
/* Splits a key in place into its parts (3 or 5). 0, or -EINVAL. */
int st_key_split(char *key, char **parts, size_t n_parts);

/* The update of the live Secret's JSON: the missing data and both annotations set. *ret NULL
 * when nothing is missing any more. 0, -EBADMSG, -ENOMEM. token is only computed when needed:
 * gen(ud, &token) is called then. */
int st_update_body(const char *live_json, size_t len, const char *ca, const char *sa_name,
                   const char *sa_uid, int (*gen)(void *ud, char **token), void *ud, char **ret);

/* The ServiceAccount's JSON without the reference to secret in .secrets: *ret NULL when it
 * has none (or its uid is not sa_uid, when sa_uid is set). 0, -EBADMSG, -ENOMEM. */
int st_remove_reference_body(const char *sa_json, size_t len, const char *sa_uid,
                             const char *secret, char **ret);
