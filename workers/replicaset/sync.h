/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/replicaset/sync.h: syncReplicaSet (upstream pkg/controller/replicaset/replica_set.go
 * and replica_set_utils.go) as pure decisions plus one driver over an executor interface.
 *
 * The split:
 *  - pure functions (no I/O, no clock): claim decision per pod, the manageReplicas diff, the
 *    slow-start batch sizes, calculateStatus, the "nothing changed" test, availability and
 *    the next availability check. The unit tests pin each one to upstream's behaviour.
 *  - rs_sync(): the order of syncReplicaSet (staleness gate, expectations, selector, active
 *    filter, claim, terminating pods, manageReplicas with slow start and deletion ranking,
 *    status with one retry, requeue), driving a struct rs_executor for every API call and
 *    event. The lead backs the executor with the real client; the tests back it with a
 *    recording double.
 *
 * Not here (the caller's part, see docs/replicaset.md): reading from the arena the RS, the
 * candidate pods (owned by this RS plus the namespace's orphans, FilterPodsByOwner), the
 * related pods of sibling RSes for the ranking and the stores' last synced resourceVersions;
 * the queue calls (Forget / AddRateLimited / AddAfter) that follow the result.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/encode.h"
#include "kube/model.h"
#include "kube/selector.h"
#include "workers/replicaset/expectations.h"

#define RS_BURST_REPLICAS           500 /* BurstReplicas */
#define RS_SLOW_START_INITIAL_BATCH 1   /* SlowStartInitialBatchSize */
#define RS_STATUS_UPDATE_RETRIES    1   /* statusUpdateRetries */
#define RS_KIND                     "ReplicaSet"
#define RS_API_VERSION              "apps/v1"

struct rs_features {
	bool terminating_replicas; /* gate DeploymentReplicaSetTerminatingReplicas (on since 1.35)
	                            */
	bool status_terminating;   /* controller flavour: true for ReplicaSet, false for RC */
	bool pod_deletion_cost;    /* gate PodDeletionCost (beta, on) */
	bool stale_consistency; /* gate StaleControllerConsistencyReplicaSet (beta, on in 1.36) */
};
#define RS_FEATURES_DEFAULT ((struct rs_features){true, true, true, true})

/* ---- pure decisions ------------------------------------------------------------------------ */
enum rs_claim {
	RS_CLAIM_IGNORE = 0, /* not ours and not adoptable (or ours but RS being deleted) */
	RS_CLAIM_OWNED,      /* controlled by this RS and matching: claimed as is */
	RS_CLAIM_ADOPT,      /* orphan, matching: adopt (PATCH), claimed if that succeeds */
	RS_CLAIM_RELEASE,    /* controlled by this RS, no longer matching: release (PATCH) */
};
/* ClaimObject's decision for one active pod (controller_ref_manager.go). */
enum rs_claim rs_claim_decide(const struct kube_replicaset *rs, const struct kube_selector *sel,
                              const struct kube_pod *pod);

/* manageReplicas' diff: < 0 create -diff pods, > 0 delete diff pods, both capped at burst. */
int32_t rs_manage_diff(size_t n_active, int32_t spec_replicas, int32_t burst);

/* slowStartBatch's next batch size: min(2 * prev, remaining); the first is
 * min(remaining, RS_SLOW_START_INITIAL_BATCH) (pass prev = 0). */
int32_t rs_slow_start_next(int32_t prev, int32_t remaining);

/* podutil.IsPodAvailable: Ready, and minReadySeconds == 0 or the Ready transition time is set
 * and transition + minReadySeconds is strictly before now. */
bool rs_pod_is_available(const struct kube_pod *p, int32_t min_ready_seconds, kube_time_t now);

/* A computed status. conditions are malloc'd copies (strings too): free with
 * rs_status_free(). */
struct rs_status {
	struct kube_rs_status s; /* conditions points at `conds` */
	struct kube_condition *conds;
	size_t n_conds;
};
void rs_status_free(struct rs_status *st);

/* calculateStatus(rs, active (claimed), n_terminating, manageErr, now): starts from a copy of
 * rs->status (foreign conditions kept), counts, sets or clears ReplicaFailure. manage_err is
 * the manageReplicas error text or NULL. observedGeneration is copied, not set. 0 / -ENOMEM. */
int rs_calculate_status(const struct kube_replicaset *rs, const struct kube_pod *const *active,
                        size_t n_active, size_t n_terminating, const struct rs_features *f,
                        const char *manage_err, kube_time_t now, struct rs_status *ret);

/* updateReplicaSetStatus' no-op test: true when nothing would change (no API call). */
bool rs_status_unchanged(const struct kube_replicaset *rs, const struct rs_status *st);

/* FindMinNextPodAvailabilityCheck: among Ready active pods with a set Ready transition time,
 * the smallest transition + minReadySeconds - now that is > 0; that pod's deadline is then
 * measured against clock_now (>= 0). Returns true and *ret_ns when such a pod exists. */
bool rs_next_availability_check(const struct kube_pod *const *active, size_t n,
                                int32_t min_ready_seconds, kube_time_t now, kube_time_t clock_now,
                                int64_t *ret_ns);

/* ---- the executor -------------------------------------------------------------------------- */
/* One API call's outcome. Strings are malloc'd by the executor and freed by the driver. */
struct rs_call_result {
	int err;                    /* 0 or the negative errno of kube/errors.h (-ENOENT = 404) */
	bool namespace_terminating; /* Status cause NamespaceTerminating */
	char *msg;                  /* the error's text (Go's err.Error(): Status.message) */
	char *name;                 /* create: the server-assigned pod name */
	char *rv;                   /* create: the created pod's resourceVersion (consistency store;
	                             * NULL = not reported: nothing recorded) */
	uint32_t done_rank; /* delete: completion order (0 = first to finish); events and the
	                     * first error follow it, as upstream's goroutines and errCh. Equal
	                     * ranks (an executor that does not report it) keep pod order */
};

struct rs_executor {
	void *ud;
	/* Uncached quorum GET of the ReplicaSet (adoption recheck and the status retry). On
	 * success *ret_fresh is a decoded object the driver frees with kube_object_free. */
	int (*get_rs)(void *ud, const struct kube_replicaset *rs,
	              struct kube_replicaset **ret_fresh, char **ret_msg);
	/* Strategic-merge PATCH of a pod with `body` (adopt / release). */
	int (*patch_pod)(void *ud, const struct kube_pod *pod, const char *body, char **ret_msg);
	/* POST `n` pods built from `body` (the same JSON each time, generateName), concurrently;
	 * results[0..n) in completion order. */
	void (*create_pods)(void *ud, const struct kube_replicaset *rs, const char *body, size_t n,
	                    struct rs_call_result *results);
	/* DELETE the pods (default options), concurrently; results[i] belongs to pods[i]. */
	void (*delete_pods)(void *ud, const struct kube_replicaset *rs,
	                    const struct kube_pod *const *pods, size_t n,
	                    struct rs_call_result *results);
	/* PUT .../status of `rs` (its resourceVersion) with `st`. */
	int (*update_status)(void *ud, const struct kube_replicaset *rs,
	                     const struct kube_rs_status *st, char **ret_msg);
	/* An Event on the ReplicaSet. */
	void (*record_event)(void *ud, const struct kube_replicaset *rs, const char *type,
	                     const char *reason, const char *message);
	/* Optional, for the v1.36 consistency store: patch_pod / update_status that also return
	 * the resourceVersion of the object in the response (malloc'd, *ret_rv). When set they are
	 * used instead of the plain ones; when not, those writes are not recorded. */
	int (*patch_pod_rv)(void *ud, const struct kube_pod *pod, const char *body, char **ret_rv,
	                    char **ret_msg);
	int (*update_status_rv)(void *ud, const struct kube_replicaset *rs,
	                        const struct kube_rs_status *st, char **ret_rv, char **ret_msg);
	/* Optional: an uncached LIST of the pods of rs's namespace its selector matches; *ret_rv
	 * (malloc'd) is the newest resourceVersion among the pods rs controls, NULL when it
	 * controls none. Used after a create whose outcome is unknown (kcmd, not upstream). */
	int (*controlled_pods_rv)(void *ud, const struct kube_replicaset *rs, char **ret_rv,
	                          char **ret_msg);
};

struct rs_sync_input {
	const char *key; /* "ns/name" */
	/* The controller's kind: "ReplicationController"/"v1" for the replication controller
	 * (upstream runs this engine over RCs converted to ReplicaSets); NULL = RS_KIND /
	 * RS_API_VERSION. It names the controllerRef of created and adopted pods and the
	 * "original <kind> ... is gone" error. */
	const char *kind, *api_version;
	const struct kube_replicaset *rs;   /* from the cache; NULL when not found */
	const struct kube_pod *const *pods; /* candidates: owned by this RS + orphans */
	size_t n_pods;
	const struct kube_pod *const *related; /* pods of the RSes sharing rs's controller */
	size_t n_related;
	struct rs_exp *exp; /* a WORKER handle */
	struct rs_features features;
	kube_time_t (*clock)(void *ud); /* wall clock (status, ranking); NULL = real */
	void *clock_ud;
	int64_t (*mono)(void *ud); /* CLOCK_BOOTTIME for expectations; NULL = real */
	/* The informer stores' last synced resourceVersion of pods and of replicasets
	 * (LastStoreSyncResourceVersion; the arena's shm_type_info.rv). NULL/"" = unknown: the
	 * staleness gate lets that resource pass, as upstream does for "". */
	const char *read_rv[RS_EXP_CONS_RESOURCES];
};

struct rs_sync_result {
	int err;       /* 0: Forget; < 0: AddRateLimited */
	char *err_msg; /* malloc'd text of the error (NULL on success) */
	bool requeue;  /* AddAfter(key, requeue_after_ns) */
	int64_t requeue_after_ns;
	/* what happened, for metrics and tests */
	bool needs_sync, managed, status_written, rs_gone, invalid_selector;
	/* the staleness gate skipped the sync (replicaset_controller_stale_sync_skips_total) */
	bool stale_skip;
	enum rs_cons_resource stale_resource;
	enum rs_exp_verdict exp_verdict;
	int32_t created, create_failed, skipped, deleted, delete_failed;
	uint32_t adopted, released, status_puts;
};
void rs_sync_result_free(struct rs_sync_result *r);

/* Runs one sync of in->key. Always fills *res (free with rs_sync_result_free); returns res->err.
 * Kcmd addition: when the expectations are PENDING because a crash orphaned them (see
 * expectations-abi.h E4), res->requeue asks for a recheck when they expire. */
int rs_sync(const struct rs_sync_input *in, const struct rs_executor *ex,
            struct rs_sync_result *res);

/* The body of a status PUT (JSON, malloc'd; NULL without memory or an argument): `rs` as read
 * (its whole metadata: name, generateName, namespace, uid, resourceVersion, generation,
 * timestamps, labels, annotations, owner references with their tri-states, finalizers; no
 * spec, which the status strategy replaces with the stored one) with status `st`. A kind other
 * than ReplicaSet (a ReplicationController) sends no terminatingReplicas. */
char *rs_status_put_json(const char *api_version, const char *kind,
                         const struct kube_replicaset *rs, const struct kube_rs_status *st);
