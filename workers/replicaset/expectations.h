/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/replicaset/expectations.h: the ReplicaSet controller's expectations in shared memory
 * (upstream pkg/controller/controller_utils.go: ControllerExpectations +
 * UIDTrackingControllerExpectations). Layout, writers and crash rules: expectations-abi.h.
 *
 * Roles. A WORKER handle (RS worker processes) may call everything the sync loop calls:
 * expect_creations, expect_deletions, lower_creations (skipped slow-start creations),
 * deletion_failed (a failed DELETE), settle, satisfied, delete. It must hold the work-queue
 * lease of the key it passes (the queue gives one key to one worker at a time); that is what
 * makes it the single writer of the record's worker side. An INFORMER handle (informerd) may
 * call creation_observed, deletion_observed, informer_delete (the RS delete handler) and must be
 * the only informer handle attached (the manager runs one informerd).
 *
 * Keys are "namespace/name" of the ReplicaSet; pod keys "namespace/name" of the pod (what
 * upstream's PodKey returns). Times are CLOCK_BOOTTIME nanoseconds (rs_exp_now()).
 *
 * Errors: -EINVAL bad argument (key empty or longer than RS_EXP_KEY_MAX, more than
 * RS_EXP_MAX_DELETES pod keys, negative count), -EPERM call not allowed for the handle's role,
 * -ENOSPC table full (the caller must not start API calls: requeue with backoff), -EPROTO bad
 * memfd layout, -errno from mmap/ftruncate. The library never logs.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "workers/replicaset/expectations-abi.h"

#define RS_EXP_TIMEOUT_NS      (INT64_C(300) * 1000000000) /* ExpectationsTimeout: 5 min */
#define RS_EXP_ORPHAN_GRACE_NS (INT64_C(60) * 1000000000)  /* see E4 in expectations-abi.h */

struct rs_exp;

enum rs_exp_role {
	RS_EXP_WORKER = 1,
	RS_EXP_INFORMER = 2,
};

struct rs_exp_create_opts {
	uint32_t capacity;       /* slots, rounded up to a power of two; 0 = 4096 */
	int64_t timeout_ns;      /* 0 = RS_EXP_TIMEOUT_NS (tests shorten it) */
	int64_t orphan_grace_ns; /* 0 = RS_EXP_ORPHAN_GRACE_NS */
};

/* Creates an initialised expectations memfd (close-on-exec, sealed against shrinking and
 * growing). The memory is sparse: a slot costs a page once used, 8 KiB once it held deletions.
 * Returns the fd or -errno. */
int rs_exp_memfd_create(const struct rs_exp_create_opts *opts);
/* The memfd also holds the controller's shared event queue (evq.h) after the slots, on a page
 * boundary. Its offset in the memfd: 0, or -EPROTO for a memfd without it. */
int rs_exp_evq_offset(int fd, uint64_t *ret_off);

/* Maps the memfd (dup'ed) for a role. An INFORMER attach bumps informer_epoch and stamps
 * informer_attached_at = now (rule E4). Returns 0 or -EPROTO / -EINVAL / -errno. */
int rs_exp_attach(int fd, enum rs_exp_role role, int64_t now, struct rs_exp **ret);
struct rs_exp *rs_exp_detach(struct rs_exp *e); /* NULL-safe; returns NULL */
static inline void rs_exp_detachp(struct rs_exp **e)
{
	rs_exp_detach(*e);
}
#define _cleanup_rs_exp_ __attribute__((cleanup(rs_exp_detachp)))

/* CLOCK_BOOTTIME in nanoseconds. */
int64_t rs_exp_now(void);

/* ---- worker (lease holder of key) ---------------------------------------------------------- */
/* ExpectCreations: replace the record with {adds = n, dels = 0, timestamp = now}, phase
 * IN_FLIGHT. 0, -EINVAL, -ENOSPC, -EPERM. */
int rs_exp_expect_creations(struct rs_exp *e, const char *key, int64_t n, int64_t now);
/* ExpectDeletions: replace the record with {adds = 0, dels = |set(pod_keys)|, timestamp = now}
 * and remember the set (duplicates count once), phase IN_FLIGHT. */
int rs_exp_expect_deletions(struct rs_exp *e, const char *key, const char *const *pod_keys,
                            size_t n, int64_t now);
/* SetExpectations(key, adds, dels) of the DaemonSet controller: both at once, the deletions as
 * the set of pod keys (as rs_exp_expect_deletions). Same errors. */
int rs_exp_expect(struct rs_exp *e, const char *key, int64_t adds, const char *const *pod_keys,
                  size_t n, int64_t now);
/* The worker's CreationObserved for `n` creations it never attempted or that failed (slow-start
 * skips). No-op (0) when there is no record. */
int rs_exp_lower_creations(struct rs_exp *e, const char *key, int64_t n);
/* The worker's DeletionObserved after a failed DELETE of pod_key (404 included): counts only
 * if pod_key is in the set and not yet observed. Returns 1 if it counted, 0 if not. */
int rs_exp_deletion_failed(struct rs_exp *e, const char *key, const char *pod_key);
/* End of manageReplicas: every API call of this generation has returned and its outcome was
 * recorded. Returns 0 (also when there is no record). */
int rs_exp_settle(struct rs_exp *e, const char *key);
/* DeleteExpectations from the sync (RS gone from the cache): frees the slot. 0 or -ENOENT. */
int rs_exp_delete(struct rs_exp *e, const char *key);

enum rs_exp_verdict {
	RS_EXP_ABSENT = 0,     /* no record (or deleted by informerd): satisfied */
	RS_EXP_FULFILLED,      /* adds <= 0 and dels <= 0: satisfied */
	RS_EXP_EXPIRED,        /* older than timeout_ns: satisfied */
	RS_EXP_ORPHAN_EXPIRED, /* orphaned by a crash and older than the grace: satisfied */
	RS_EXP_TORN,           /* left half-written by a dead worker: treated as absent */
	RS_EXP_PENDING,        /* not satisfied */
};
struct rs_exp_state {
	enum rs_exp_verdict verdict;
	int64_t adds_left, dels_left; /* as upstream's counters (adds may be negative) */
	int64_t recheck_after_ns;     /* PENDING: time until it expires (timeout or grace) */
	bool orphaned;                /* a crash rule (E4) applies to this record */
	uint32_t seq;
	uint64_t informer_epoch; /* the record's, for tests and kcmctl */
};
/* SatisfiedExpectations. Returns true when the sync may manage replicas; st (may be NULL)
 * receives the details. Any role may call it (kcmctl uses an INFORMER-less reader). */
bool rs_exp_satisfied(struct rs_exp *e, const char *key, int64_t now, struct rs_exp_state *st);

/* ---- consistency store (v1.36 staleness gate, upstream pkg/controller/util/consistency) -------
 * Per RS key, the newest resourceVersion this controller wrote per resource, with the RS uid;
 * kept in the same slot as the expectations so any worker that next holds the key sees it.
 * Lease holder only. Crash rule: the record is written under cons_seq = 0, so a writer killed
 * mid-write leaves no record (as upstream after a restart), never a torn RV that could block. */
enum rs_cons_resource {
	RS_CONS_PODS = 0,        /* "pods" */
	RS_CONS_REPLICASETS = 1, /* "replicasets.apps" */
};
/* GroupResource.String() of r. */
const char *rs_cons_resource_name(enum rs_cons_resource r);
/* resourceversion.CompareResourceVersion: well-formed = non-empty decimal digits without a
 * leading zero; longer is greater, equal lengths compare lexically. *ret = -1/0/1, or -EINVAL
 * when either is malformed. */
int rs_rv_compare(const char *a, const char *b, int *ret);
/* WroteAt: a record for another uid (or none) is replaced by one for owner_uid; the RV of
 * resource r is kept if the stored one compares >= rv, else replaced (also when the stored one
 * does not compare). 0, -EINVAL, -E2BIG (uid > 63 or rv > 31 bytes: nothing recorded), -ENOSPC,
 * -EPERM. */
int rs_exp_wrote_at(struct rs_exp *e, const char *key, const char *owner_uid,
                    enum rs_cons_resource r, const char *rv);
struct rs_cons_stale {
	enum rs_cons_resource resource;
	char wrote_rv[32], read_rv[32];
};
/* EnsureReady: read_rv[r] is the informer store's last synced RV of resource r (NULL or ""
 * = unknown: skipped). Returns 0 when ready (the record, if any, is cleared), 1 when a written
 * RV is newer than the read one (*ret filled, the record kept), or -EINVAL / -EPERM. A
 * comparison error counts as ready for that resource, as upstream. */
int rs_exp_ensure_ready(struct rs_exp *e, const char *key,
                        const char *const read_rv[RS_EXP_CONS_RESOURCES],
                        struct rs_cons_stale *ret);

/* ---- informerd -------------------------------------------------------------------------------
 * Each returns 1 when it counted, 0 when there was nothing to count (no record, a record being
 * replaced, a pod key not in the set or already counted), or -EINVAL / -EPERM. */
int rs_exp_creation_observed(struct rs_exp *e, const char *key);
int rs_exp_deletion_observed(struct rs_exp *e, const char *key, const char *pod_key);
/* DeleteExpectations from the RS delete handler: marks the current generation deleted (the
 * next sync of the key frees the slot); this also clears the consistency record, as upstream's
 * deleteRS clears it. */
int rs_exp_informer_delete(struct rs_exp *e, const char *key);

/* ---- manager ------------------------------------------------------------------------------- */
/* Frees slots a dead pid left CLAIMED (killed between claim and publish). Returns how many. */
int rs_exp_reclaim_pid(struct rs_exp *e, pid_t pid);
/* Counts slots by kind (for kcmctl / tests). */
void rs_exp_count(struct rs_exp *e, uint32_t counts[4]);

/* ---- controller metrics (header words, E6) ------------------------------------------------- */
/* replicaset_controller_stale_sync_skips_total{group,resource}: one skip for resource r. */
void rs_exp_metric_stale_skip(struct rs_exp *e, enum rs_cons_resource r);
/* replicaset_controller_sorting_deletion_age_ratio: one observation (buckets 0.25·2^k, k < 6). */
void rs_exp_metric_age_ratio(struct rs_exp *e, double ratio);
/* Both families in Prometheus text format, as kube-controller-manager exports them (HELP/TYPE
 * lines, [ALPHA]); malloc'd into *ret. For the manager's /metrics. 0 or -ENOMEM / -EINVAL. */
int rs_exp_metrics_text(struct rs_exp *e, char **ret);
/* The same for one of the controllers sharing this engine (flavour.h): upstream's
 * replicaset_controller_* families are process-wide (the replication controller observes into
 * them too), so they are rendered summed over sum[0..n_sum) (n_sum 0: not rendered, another
 * controller renders them); then kcmd_<name>_expectations_* of e, "what" naming its kind in the
 * help text. 0, -EINVAL, -ENOMEM. */
int rs_exp_metrics_text_ex(struct rs_exp *e, struct rs_exp *const *sum, size_t n_sum,
                           const char *name, const char *what, char **ret);
