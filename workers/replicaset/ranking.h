/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/replicaset/ranking.h: which pods a ReplicaSet deletes first when it scales down.
 *
 * Upstream: pkg/controller/controller_utils.go ActivePodsWithRanks.Less (with the
 * LogarithmicScaleDown gate, GA and locked on since 1.31, and PodDeletionCost, beta and on by
 * default in 1.36/1.37), and pkg/controller/replicaset/replica_set.go getPodsToDelete /
 * getPodsRankedByRelatedPodsOnSameNode. "a before b" means a is the better victim:
 *   1. exactly one of the two is unscheduled (empty spec.nodeName): the unscheduled one;
 *   2. phase ordinal Pending(0) < Unknown(1) < Running(2) (anything else counts as 0);
 *   3. not Ready before Ready;
 *   4. (PodDeletionCost) lower controller.kubernetes.io/pod-deletion-cost first;
 *   5. higher rank first (more active related pods on the same node);
 *   6. both Ready with different Ready lastTransitionTime: a zero time (or a zero `now`)
 *      first, else floor(log2(now - t)) in nanoseconds (-1 when now - t <= 0), the smaller
 *      bucket (more recent) first, equal buckets ordered by UID string;
 *   7. higher max restartCount of regular containers first, then of sidecars;
 *   8. different creationTimestamp: as 6 with the creation times;
 *   9. otherwise not before.
 * The sort is a stable merge sort; Go's sort.Sort is not stable, so victims among exact ties
 * may differ from upstream's (upstream's order among exact ties depends on map order anyway).
 */
#include <stdbool.h>
#include <stddef.h>

#include "kube/model.h"

struct rs_rank_opts {
	kube_time_t now;        /* reference time for the log2 buckets (wall clock, ns) */
	bool pod_deletion_cost; /* the PodDeletionCost gate (true by default upstream) */
};

/* The comparator: true when pod a (with rank ra) should be deleted before pod b. */
bool rs_pod_delete_before(const struct kube_pod *a, int ra, const struct kube_pod *b, int rb,
                          const struct rs_rank_opts *o);

/* Go's int64(math.Log2(float64(d))) for d > 0; -1 for d <= 0. */
int64_t rs_log2_bucket(int64_t d);

/* ranks[i] = number of ACTIVE pods in related (phase not Succeeded/Failed, no
 * deletionTimestamp) on the same spec.nodeName as pods[i] (the empty name is a node too).
 * Returns 0 or -ENOMEM. */
int rs_rank_by_related(const struct kube_pod *const *pods, size_t n,
                       const struct kube_pod *const *related, size_t n_related, int *ranks);

/* getPodsToDelete: when diff < n, sorts pods (in place) by rs_pod_delete_before with the ranks
 * from related; the victims are then pods[0..diff). diff >= n leaves the order alone (all go).
 * Returns min(diff, n) or -ENOMEM / -EINVAL. */
int rs_pods_to_delete(const struct kube_pod **pods, size_t n, const struct kube_pod *const *related,
                      size_t n_related, size_t diff, const struct rs_rank_opts *o);

/* FilterActivePods / IsPodActive and IsPodTerminating (controller_utils.go). */
bool rs_pod_is_active(const struct kube_pod *p);
bool rs_pod_is_terminating(const struct kube_pod *p);
