/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/objects.h: arena records (shm_obj + shm/records.h payload) as kube/model.h
 * structs, so controller logic written against the object model runs on the shared cache.
 *
 * Design note.
 *   A worker never keeps objects of its own: it copies a record out of the arena (a consistent
 *   snapshot, see shm/arena.h), then views it as a struct kube_pod / kube_replicaset whose
 *   strings point into that copy. One struct wk_pod / wk_rs owns both; free it as a whole.
 *   The ReplicaSet's selector is stored in the arena in its canonical string form; it is turned
 *   back into a LabelSelector (matchExpressions) that selects exactly the same pods.
 */
#include "kube/model.h"
#include "shm/arena.h"

struct wk_pod {
	struct shm_obj obj;
	struct kube_pod pod;
	/* storage the views point at */
	struct kube_kv *labels;
	struct kube_owner_ref *owners;
	const char **finalizers;
};

/* Any record's metadata (metadata-only records, or the meta of a typed one). */
struct wk_meta {
	struct shm_obj obj;
	struct kube_partial p; /* api_version and kind left NULL */
	struct kube_kv *labels;
	struct kube_owner_ref *owners;
	const char **finalizers;
};

struct wk_rs {
	struct shm_obj obj;
	struct kube_replicaset rs;
	struct kube_kv *labels;
	struct kube_owner_ref *owners;
	const char **finalizers;
	struct kube_label_selector sel;
	struct kube_label_requirement *reqs;
	char *sel_text; /* owned copy the requirements point into */
	struct kube_condition *conds;
	struct kube_kv *tmpl_labels;
	char *tmpl_strings; /* template labels' storage */
};

/* A deep copy of a copied-out object (iteration hands out a copy that the next object
 * overwrites). Returns 0, -ENOMEM, -EINVAL (a pointer outside the object's own memory). */
int wk_obj_dup(const struct shm_obj *src, struct shm_obj *dst);
/* A deep copy of any shm_obj, also one whose memory is not a copied-out record (a change-feed
 * event's): dst owns one malloc'd block (shm_obj_release frees it). 0 or -ENOMEM. */
int wk_obj_clone(const struct shm_obj *src, struct shm_obj *dst);

/* Views a copied-out record. Returns 0, -EPROTONOSUPPORT / -EBADMSG (payload), -ENOMEM,
 * -EINVAL (not a pod / replicaset record). The wk_* takes ownership of *obj (moved). */
int wk_pod_from_obj(struct shm_obj *obj, struct wk_pod *ret);
int wk_rs_from_obj(struct shm_obj *obj, struct wk_rs *ret);
int wk_meta_from_obj(struct shm_obj *obj, struct wk_meta *ret);
void wk_meta_free(struct wk_meta *m);
void wk_pod_free(struct wk_pod *p);
void wk_rs_free(struct wk_rs *r);

/* The canonical selector string ("a=b,c in (x,y),!d") as a LabelSelector: every requirement
 * becomes a matchExpression. Strings point into `text`, which the caller keeps. Returns 0,
 * -EINVAL (not canonical form), -ENOMEM. */
int wk_selector_from_string(char *text, struct kube_label_selector *ret,
                            struct kube_label_requirement **ret_reqs);
