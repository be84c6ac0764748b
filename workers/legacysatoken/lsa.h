/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/legacysatoken/lsa.h: kcm's legacy-serviceaccount-token-cleaner-controller's
 * decisions, pure (no I/O).
 *
 * Design note.
 *   Upstream (pkg/controller/serviceaccount/legacy_serviceaccount_token_cleaner.go, v1.37) runs
 *   evaluateSATokens at start and every 24 h. Nothing happens until the apiserver has tracked
 *   legacy token use for the clean-up period: the day after the date in
 *   kube-system/kube-apiserver-legacy-service-account-token-tracking's data.since, plus
 *   --legacy-service-account-token-clean-up-period (default one year). Then every Secret of type
 *   kubernetes.io/service-account-token created before now - period, not being deleted, whose
 *   label kubernetes.io/legacy-token-last-used (a date; a malformed one skips the Secret) is
 *   absent or older than the date of now - period, whose ServiceAccount (annotation
 *   kubernetes.io/service-account.name, and .uid when set) exists and lists it in .secrets, and
 *   which no pod of its namespace references (image pull secrets, env and envFrom of every
 *   container kind, volumes): without a well-formed label kubernetes.io/legacy-token-invalid-since
 *   it gets one with today's date (a merge patch with the UID); with one older than the date of
 *   now - period it is deleted (resourceVersion precondition; NotFound and Conflict are done).
 *   Errors are logged; the next run tries again.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LSA_CONTROLLER    "legacy-serviceaccount-token-cleaner-controller"
#define LSA_QUEUE         "legacy_serviceaccount_token_cleaner"
#define LSA_KEY           "evaluate"
#define LSA_INTERVAL_US   (24ull * 3600 * 1000000) /* DefaultCleanerSyncInterval */
#define LSA_TRACKING_CM   "kube-apiserver-legacy-service-account-token-tracking"
#define LSA_LAST_USED     "kubernetes.io/legacy-token-last-used"
#define LSA_INVALID_SINCE "kubernetes.io/legacy-token-invalid-since"

/* "YYYY-MM-DD" of t (ns since the epoch, UTC) into buf[11]. */
void lsa_date(int64_t t_ns, char buf[11]);

/* The tracking ConfigMap's JSON: 1 when tracking has run for period (now >= the day after
 * data.since + period), 0 not yet, -EINVAL without a well-formed data.since. */
int lsa_tracking_ready(const char *cm_json, size_t len, int64_t now_ns, int64_t period_ns);

/* The checks of a Secret that need nothing else (type, age, deletion, last use). 1 with its
 * ServiceAccount's name and uid ("" when absent) copied out, 0 when it is kept. */
int lsa_candidate(const char *secret_json, size_t len, int64_t now_ns, int64_t period_ns,
                  char *sa_name, size_t name_len, char *sa_uid, size_t uid_len);

/* getServiceAccount + hasSecretReference: whether the ServiceAccount (its JSON) matches uid
 * (when not empty) and lists secret_name in .secrets. */
bool lsa_sa_references(const char *sa_json, size_t len, const char *uid, const char *secret_name);

/* VisitPodSecretNames of a pod's JSON: fn for every Secret name it references. */
void lsa_pod_secret_names(const char *pod_json, size_t len, void (*fn)(const char *, void *),
                          void *ud);

enum lsa_action { LSA_KEEP = 0, LSA_LABEL, LSA_DELETE };
/* The last step for a candidate no pod mounts: LSA_LABEL (today's date in date), LSA_KEEP, or
 * LSA_DELETE. */
enum lsa_action lsa_final(const char *secret_json, size_t len, int64_t now_ns, int64_t period_ns,
                          char date[11]);
