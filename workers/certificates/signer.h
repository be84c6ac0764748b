/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/certificates/signer.h: kcm's certificatesigningrequest-signing-controller's pieces
 * that need no apiserver: which files each built-in signer uses, a request's validation for
 * its signer, the certificate's lifetime, and signing (GnuTLS).
 *
 * Design note.
 *   Upstream (pkg/controller/certificates/signer/signer.go, authority/, and
 *   pkg/apis/certificates/helpers.go) runs one loop per built-in signer:
 *   kubernetes.io/kubelet-serving, kubernetes.io/kube-apiserver-client-kubelet,
 *   kubernetes.io/kube-apiserver-client and kubernetes.io/legacy-unknown. Each signs an
 *   Approved CSR of its signerName that has no certificate and no Failed condition:
 *     - the request must be a PEM "CERTIFICATE REQUEST" that parses and whose signature
 *       verifies, else the sync fails and is retried (no condition);
 *     - the signer's rules (csr_signer_validate) failing adds a Failed condition, reason
 *       SignerValidationFailure, message the rule's error, by UpdateStatus;
 *     - else the certificate: a random serial below 2^128; subject, DNS/IP/email/URI SANs and
 *       public key from the request, every other extension of the request dropped; key usage
 *       and extended key usages from spec.usages (csr_usage_bits); basic constraints CA:FALSE;
 *       notBefore now - 5 min; notAfter now + ttl (ttl < 8 h) or now + ttl - 5 min, and never
 *       past the CA's notAfter; ttl --cluster-signing-duration, or spec.expirationSeconds when
 *       shorter, at least 10 min. A CA that has expired refuses to sign.
 *   The CA's files are re-read when they change (upstream's dynamic content): a new pair that
 *   does not load keeps the one in force.
 *   Not here: ML-DSA requests (GnuTLS 3.7 has no ML-DSA; such a request does not parse).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gnutls/abstract.h>
#include <gnutls/x509.h>

#define CSR_SIGNING_CONTROLLER "certificatesigningrequest-signing-controller"

enum csr_signer {
	CSR_SIGNER_KUBELET_SERVING = 0,
	CSR_SIGNER_KUBELET_CLIENT,
	CSR_SIGNER_APISERVER_CLIENT,
	CSR_SIGNER_LEGACY_UNKNOWN,
	CSR_SIGNER_N,
};

struct csr_signer_desc {
	const char *signer_name; /* spec.signerName */
	const char *loop;        /* upstream's controller (and queue) name */
	const char *cert_flag, *key_flag;
};
extern const struct csr_signer_desc csr_signers[CSR_SIGNER_N];

/* The signer of a signerName, or -1. */
int csr_signer_lookup(const char *signer_name);

/* kcm's file selection (startCSRSigningController): with any per-signer file set, each signer
 * uses only its own pair; otherwise every signer uses --cluster-signing-{cert,key}-file.
 * get(name) returns a flag's value ("" when unset). Fills cert/key per signer ("" and "":
 * that signer does not run). Returns 1 when some signer runs, 0 when none does ("no csr
 * cert/key was specified"), -EINVAL with msg when both kinds are set. */
int csr_signer_files(const char *(*get)(void *ud, const char *flag), void *ud,
                     const char *cert[CSR_SIGNER_N], const char *key[CSR_SIGNER_N], char *msg,
                     size_t msglen);

/* A parsed request (x509.CertificateRequest's fields the rules read). */
struct csr_req {
	gnutls_x509_crq_t crq;
	char *cn;    /* the last CN ("" none) */
	char **orgs; /* O values in order */
	size_t n_orgs;
	size_t n_dns, n_ip, n_email, n_uri;
};
/* ParseCSR: the first PEM block must be "CERTIFICATE REQUEST" and parse. 0, or -EINVAL with
 * a message. */
int csr_req_parse(const unsigned char *pem, size_t len, struct csr_req *ret, char *msg,
                  size_t msglen);
void csr_req_clear(struct csr_req *r);

/* The signer's rules for the request and spec.usages (n of them). 0, or 1 with upstream's
 * error text in msg (the Failed condition's message). */
int csr_signer_validate(enum csr_signer s, const struct csr_req *r, const char *const *usages,
                        size_t n, char *msg, size_t msglen);

/* signer.duration: ttl_ns, or the requested seconds (has_exp) within [10 min, ttl]. */
int64_t csr_duration(int64_t ttl_ns, bool has_exp, int64_t exp_seconds);

/* keyUsagesFromStrings: x509 key usage bits (GNUTLS_KEY_*) and extended key usage OIDs in
 * Go's ExtKeyUsage order (n_oids of them, at most 12). 0, or -EINVAL with
 * "unrecognized usage values: [...]" in msg. */
int csr_usage_bits(const char *const *usages, size_t n, unsigned *ret_bits,
                   const char *ret_oids[12], size_t *ret_n_oids, char *msg, size_t msglen);

/* A CA: certificate and key. */
struct csr_ca {
	gnutls_x509_crt_t crt;
	gnutls_privkey_t key;
	int64_t not_after_ns;
};
/* Loads a PEM certificate (exactly one) and its private key (PEM; PKCS#1, PKCS#8 or EC), and
 * checks that they match. 0, or -EINVAL with upstream's message for the first check that
 * fails (empty content, no PEM data, unparseable, mismatched key, not one certificate). */
int csr_ca_load(const unsigned char *cert, size_t cert_len, const unsigned char *key,
                size_t key_len, struct csr_ca *ret, char *msg, size_t msglen);
void csr_ca_clear(struct csr_ca *ca);

/* Signs r (its signature must verify) with ca at now_ns: usages, ttl_ns as above. Returns 0
 * with the certificate in PEM (*ret_pem malloc'd), or -EINVAL/-ENOMEM with a message. */
int csr_sign(const struct csr_ca *ca, const struct csr_req *r, const char *const *usages, size_t n,
             int64_t ttl_ns, int64_t now_ns, char **ret_pem, size_t *ret_len, char *msg,
             size_t msglen);

/* ---- the approver (pkg/controller/certificates/approver/sarapprove.go) ------------------------
 * A CSR without certificate, Approved or Denied condition is recognized, in this order, as
 *   selfnodeclient: spec.username equals the request's CN, and it is a nodeclient;
 *   nodeclient: signerName kubernetes.io/kube-apiserver-client-kubelet and the kubelet client
 *     rules hold (csr_signer_validate for CSR_SIGNER_KUBELET_CLIENT).
 * For each one recognized a SubjectAccessReview asks whether spec.username (uid, groups,
 * extra) may create certificatesigningrequests/<that subresource> (group certificates.k8s.io,
 * version "*"); the first allowed adds the condition Approved/True, reason AutoApproved, with
 * the recognizer's message, through the approval subresource. Recognized but not allowed: the
 * sync fails (an IgnorableError upstream: retried with backoff, logged as an error). */
enum csr_recognizer { CSR_SELF_NODE_CLIENT = 0, CSR_NODE_CLIENT, CSR_RECOGNIZER_N };
struct csr_recognizer_desc {
	const char *subresource;
	const char *message;
};
extern const struct csr_recognizer_desc csr_recognizers[CSR_RECOGNIZER_N];

/* Whether recognizer k recognizes the CSR (signerName, spec.username, the parsed request and
 * spec.usages). */
bool csr_recognize(enum csr_recognizer k, const char *signer_name, const char *username,
                   const struct csr_req *r, const char *const *usages, size_t n);
