/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/replicaset/handlers.h: the ReplicaSet controller's informer event handlers
 * (upstream replica_set.go addRS/updateRS/deleteRS, addPod/updatePod/deletePod,
 * resolveControllerRef, getPodReplicaSets), which run in informerd as upstream's run in the
 * informer goroutine. They decide what to enqueue and record observations in the shared
 * expectations; the cache lookups and the queue are seams (struct rs_handler_ops) that
 * informerd backs with the arena and ipc_queue_owner_*.
 *
 * Tombstones: the caller unwraps DeletedFinalStateUnknown and passes the last known object
 * (possibly stale, as upstream). The v1.36 consistency-store clear on RS delete is not here.
 * Labels: the object model does not tell a nil label map from an empty one, so "labels
 * changed" treats both as empty; upstream (reflect.DeepEqual) sees nil vs {} as a change, which
 * only re-runs lookups that find the same answer (an unlabelled orphan matches no RS).
 */
#include <stdbool.h>
#include <stdint.h>

#include "kube/model.h"
#include "workers/replicaset/expectations.h"

/* What the handlers need from an RS in the cache. */
struct rs_cached {
	const char *uid;
	int32_t min_ready_seconds;
};

struct rs_handler_ops {
	void *ud;
	/* The cached RS ns/name: 0 and *ret (valid until the next call), or -ENOENT. */
	int (*get_rs)(void *ud, const char *ns, const char *name, struct rs_cached *ret);
	/* Calls fn for every cached RS of ns with its name and spec.selector (NULL = nil) as its
	 * record keeps it: validated when stored, an invalid one being a single KUBE_OP_INVALID
	 * expression (shm/record-model.h), so the handlers match it without parsing or
	 * validating; fn returning < 0 stops the walk. Returns 0 or a negative errno. */
	int (*list_rs)(void *ud, const char *ns,
	               int (*fn)(void *fn_ud, const char *name,
	                         const struct kube_label_selector *sel),
	               void *fn_ud);
	/* queue.Add(key) / queue.AddAfter(key, delay) */
	void (*add)(void *ud, const char *key);
	void (*add_after)(void *ud, const char *key, int64_t delay_ns);
	struct rs_exp *exp; /* an INFORMER handle */
	const char *kind;   /* "ReplicaSet" (the controllerRef kind it owns) */
};

/* RS events. old/cur/obj are the RS objects as decoded (metadata is what matters). */
void rs_handle_rs_add(const struct rs_handler_ops *ops, const struct kube_object_meta *rs);
void rs_handle_rs_update(const struct rs_handler_ops *ops, const struct kube_object_meta *old,
                         const struct kube_object_meta *cur);
void rs_handle_rs_delete(const struct rs_handler_ops *ops, const struct kube_object_meta *rs);

/* Pod events. */
void rs_handle_pod_add(const struct rs_handler_ops *ops, const struct kube_pod *pod);
void rs_handle_pod_update(const struct rs_handler_ops *ops, const struct kube_pod *old,
                          const struct kube_pod *cur);
void rs_handle_pod_delete(const struct rs_handler_ops *ops, const struct kube_pod *pod);

/* ownerReference deep equality (both NULL = equal), as reflect.DeepEqual on *OwnerReference. */
bool rs_owner_ref_equal(const struct kube_owner_ref *a, const struct kube_owner_ref *b);
