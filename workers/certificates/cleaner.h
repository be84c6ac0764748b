/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/certificates/cleaner.h: kcm's certificatesigningrequest-cleaner-controller's decision,
 * pure (no I/O).
 *
 * Design note.
 *   Upstream (pkg/controller/certificates/cleaner/cleaner.go) lists every CSR from its informer
 *   at start and every hour (wait.Until, one worker) and deletes a CSR when one of these holds,
 *   checked in this order (the first that holds is the one logged):
 *     - issued past deadline: an Approved condition whose lastUpdateTime is more than 1 h ago,
 *       and status.certificate is not empty;
 *     - denied past deadline: a Denied condition more than 1 h old (lastUpdateTime);
 *     - failed past deadline: a Failed condition more than 1 h old (deniedExpiration);
 *     - pending past deadline: no condition at all, created more than 24 h ago;
 *     - approved but never issued: an Approved condition more than 24 h old and no certificate
 *       (added upstream in 2025, kubernetes/kubernetes#133116; the stored source does not show
 *       its code: docs/certificates.md says what could not be confirmed);
 *     - issued and expired: an Approved condition, a certificate whose first PEM block parses
 *       as X.509, and now after its notAfter. An unparseable certificate is not an error (it
 *       never changes, so retrying is pointless): the rule simply does not hold.
 *   "More than d old" is isOlderThan: the time is set (a zero or absent time never is) and
 *   now - t > d.
 */
#include <stddef.h>
#include <stdint.h>

#define CSR_CLEANER_CONTROLLER  "certificatesigningrequest-cleaner-controller"
#define CSR_CLEANER_QUEUE       "certificatesigningrequest_cleaner"
#define CSR_CLEANER_KEY         "clean"
#define CSR_CLEANER_INTERVAL_US (3600ull * 1000000) /* pollingInterval */

#define CSR_APPROVED_EXPIRATION_NS (3600ll * 1000000000)      /* approvedExpiration */
#define CSR_DENIED_EXPIRATION_NS   (3600ll * 1000000000)      /* deniedExpiration */
#define CSR_PENDING_EXPIRATION_NS  (24ll * 3600 * 1000000000) /* pendingExpiration */

enum csr_clean {
	CSR_KEEP = 0,
	CSR_CLEAN_ISSUED,            /* issued past deadline */
	CSR_CLEAN_DENIED,            /* denied past deadline */
	CSR_CLEAN_FAILED,            /* failed past deadline */
	CSR_CLEAN_PENDING,           /* pending past deadline */
	CSR_CLEAN_APPROVED_UNISSUED, /* approved, no certificate, past the pending deadline */
	CSR_CLEAN_EXPIRED,           /* the issued certificate has expired */
};

/* The decision for one CSR's JSON (certificates.k8s.io/v1) at now_ns (ns since the epoch).
 * Malformed JSON is CSR_KEEP. */
enum csr_clean csr_cleaner_decide(const char *json, size_t len, int64_t now_ns);

/* Upstream's log line for a decision (CSR_KEEP: NULL). */
const char *csr_cleaner_message(enum csr_clean c);

/* notAfter (ns since the epoch) of the first PEM block of pem, which must parse as an X.509
 * certificate. 0, or -EINVAL. */
int csr_cert_not_after(const unsigned char *pem, size_t len, int64_t *ret_ns);
