/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/svm/svm.h: the decisions of kcm's storage-version-migrator-controller
 * (docs/svm.md), free of I/O so that the unit tests drive them: resourceVersion comparison,
 * the MigrationRunning message, the two ways upstream sets a condition, which migration of a
 * resource runs and which are cleaned up, which write errors are retried, discovery lookups
 * and the per-object patch.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#define SVM_COND_RUNNING   "Running"
#define SVM_COND_SUCCEEDED "Succeeded"
#define SVM_COND_FAILED    "Failed"

#define SVM_REASON_RUNNING   "MigrationRunning"
#define SVM_REASON_SUCCEEDED "StorageVersionMigrationSucceeded"
#define SVM_REASON_FAILED    "StorageVersionMigrationFailed"
#define SVM_REASON_COMPLETED "MigrationCompleted"

/* How long a migration whose resource is unknown (discovery, the cache) waits before it fails:
 * one minute after its creation. */
#define SVM_UNKNOWN_GRACE_SEC 60

/* CompareResourceVersion: both must be decimal integers without a leading zero. 0 and *cmp in
 * {-1, 0, 1}; -EINVAL with *bad naming the malformed one (a first). */
int svm_rv_compare(const char *a, const char *b, int *cmp, const char **bad);

/* The MigrationRunning message: counts only when both are given and total > 0; a transient
 * error appended. Writes at most len bytes (NUL included). */
void svm_running_message(char *buf, size_t len, const int *to_patch, const int *total,
                         const char *transient);

/* status.conditions[type] of a StorageVersionMigration, or NULL. */
cJSON *svm_cond_find(const cJSON *svm, const char *type);
/* The condition's status is "True". */
bool svm_cond_true(const cJSON *svm, const char *type);
/* Terminal: Succeeded or Failed is True. */
bool svm_terminal(const cJSON *svm);

/* meta.SetStatusCondition: adds the condition (lastTransitionTime now) or updates it in place
 * (lastTransitionTime only when the status changes; reason, message, observedGeneration
 * always). observed_gen < 0: not set. Returns whether anything changed, -ENOMEM. */
int svm_set_condition(cJSON *svm, const char *type, const char *status, const char *reason,
                      const char *message, const char *now, int64_t observed_gen);
/* setStatusConditions (util.go): appends the condition as True unless one of that type with
 * status True or False is already there. Returns whether it was added, -ENOMEM. */
int svm_add_condition_once(cJSON *svm, const char *type, const char *reason, const char *message,
                           const char *now);

/* The migration runner's choice among the migrations of one group/resource: those both
 * Running and terminal are cleaned up (flags in cleanup[], n entries); the one to start is the
 * oldest (creationTimestamp, then name) neither running nor terminal, unless one is running and
 * not terminal. Returns its index, or -1. */
long svm_runner_pick(cJSON *const *svms, size_t n, bool *cleanup);

/* Errors after which the migration is retried (the status keeps Running with the transient
 * error) rather than failed: connection reset, TooManyRequests, ServiceUnavailable,
 * InternalError, Timeout. err is a kcmd errno (kcmd/client.h). */
bool svm_retriable(int err);

/* Whether a migration created at created (RFC 3339) still waits for its resource to appear at
 * now (seconds since the epoch); a malformed time waits no longer. */
bool svm_within_grace(const char *created, int64_t now);

/* spec.resource: group ("" core) and resource; -EINVAL when resource is missing. */
int svm_spec_resource(const cJSON *svm, const char **group, const char **resource);
/* The queue key of a group/resource (GroupResource.String(): "resource.group" or "resource")
 * and back. svm_gr_parse writes into buffers of size len. */
int svm_gr_key(const char *group, const char *resource, char *buf, size_t len);
int svm_gr_parse(const char *key, char *group, char *resource, size_t len);

/* schema.GroupVersionResource.String(). */
void svm_gvr_string(char *buf, size_t len, const char *group, const char *version,
                    const char *resource);

/* In an APIResourceList, the entry named resource (no subresource): 0 with namespaced, kind
 * and whether its verbs hold update, patch and list; -ENOENT when absent. */
struct svm_api_resource {
	bool namespaced;
	const char *kind; /* points into the list */
	bool migratable;
};
int svm_find_resource(const cJSON *list, const char *resource, struct svm_api_resource *ret);

/* An APIGroup's versions in the order a RESTMapper prefers them: the preferred version first,
 * then the others as listed. Fills up to max names (pointing into group); returns the count. */
size_t svm_group_versions(const cJSON *group, const char **out, size_t max);

/* The body of the per-object write: a JSON merge patch with apiVersion, kind and
 * metadata.resourceVersion (the precondition). malloc'd, or NULL. */
char *svm_patch_body(const char *api_version, const char *kind, const char *rv);
