/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * kcmd/cache.h: reading the shared cache (client-go's listers) and the objects handlers see
 * (part of the public controller API, versioned by KCMD_CONTROLLER_ABI).
 *
 * Design note.
 *   The cache is one arena in shared memory that informerd writes and every other process maps
 *   read-only (docs/shm.md). A read copies the object out (never a pointer into shared memory
 *   that a later write could reuse), so what a caller holds stays valid until it frees it.
 *   The objects are opaque and read through accessors, so the record layout can change without
 *   breaking a controller built against this header:
 *   - `struct shm_obj`: a cached object (kcmd_cache_get/kcmd_cache_list, and an event's `old`);
 *   - `struct kube_object_meta`: the metadata of an event's new object (`ev->meta`).
 *   What a cached object carries depends on its watch's cache kind (kcmd/controller.h): every
 *   kind has namespace, name, uid, resourceVersion, labels and owner references; metadata-only
 *   records carry no annotations and no spec or status.
 *   A resource is named by group ("" core) and plural resource; the cache holds the resources
 *   the enabled controllers watch (their descriptors' `watches`), so read only what yours lists.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct shm_arena;
struct shm_obj;
struct kube_object_meta;

/* An owner reference. controller and block_owner_deletion: -1 unset, 0 false, 1 true. */
struct kcmd_owner_ref {
	const char *api_version;
	const char *kind;
	const char *name;
	const char *uid;
	int controller;
	int block_owner_deletion;
};

/* ---- cached objects ------------------------------------------------------------------------ */
/* Strings are owned by the object; "" for an absent namespace. */
const char *kcmd_obj_namespace(const struct shm_obj *o);
const char *kcmd_obj_name(const struct shm_obj *o);
const char *kcmd_obj_uid(const struct shm_obj *o);
const char *kcmd_obj_resource_version(const struct shm_obj *o);
/* The value of label key, or NULL. */
const char *kcmd_obj_label(const struct shm_obj *o, const char *key);
size_t kcmd_obj_n_owners(const struct shm_obj *o);
/* The i-th owner reference: 0, or -ENOENT past the end. */
int kcmd_obj_owner(const struct shm_obj *o, size_t i, struct kcmd_owner_ref *ret);
/* A cached object of a watch cached whole (KCMD_CACHE_OBJECT): its JSON as the apiserver sent
 * it (NUL-terminated, owned by o; *ret_len, if not NULL, gets its length), and its annotations.
 * NULL for other cache kinds (metadata-only and typed records keep no JSON; of the typed
 * records only KCMD_CACHE_REPLICASET keeps the annotations, every one of them), for an absent
 * annotation, or for a record this build cannot read. */
const char *kcmd_obj_json(const struct shm_obj *o, size_t *ret_len);
const char *kcmd_obj_annotation(const struct shm_obj *o, const char *key);
/* Frees an object kcmd_cache_get returned; NULL is a no-op. */
void kcmd_obj_free(struct shm_obj *o);

/* ---- an event's new object (ev->meta) ------------------------------------------------------- */
const char *kcmd_meta_namespace(const struct kube_object_meta *m); /* "" when cluster-scoped */
const char *kcmd_meta_name(const struct kube_object_meta *m);
const char *kcmd_meta_uid(const struct kube_object_meta *m);
const char *kcmd_meta_resource_version(const struct kube_object_meta *m);
const char *kcmd_meta_label(const struct kube_object_meta *m, const char *key);
/* metadata.deletionTimestamp is set */
bool kcmd_meta_deleting(const struct kube_object_meta *m);
/* The value of annotation key, or NULL: absent, or the watch's cache kind keeps no annotations
 * (only KCMD_CACHE_OBJECT and KCMD_CACHE_REPLICASET keep them). */
const char *kcmd_meta_annotation(const struct kube_object_meta *m, const char *key);
size_t kcmd_meta_n_owners(const struct kube_object_meta *m);
int kcmd_meta_owner(const struct kube_object_meta *m, size_t i, struct kcmd_owner_ref *ret);

/* ---- listers --------------------------------------------------------------------------------
 * ns: NULL or "" for a cluster-scoped object (get), or every namespace (list).
 * Errors: -ENOENT (no such object, or the resource is not in the cache), -EINVAL, -ENOMEM,
 * -EAGAIN (the writer kept the object busy; retry), -EIO (the arena is corrupt). */
/* One object by namespace/name; *ret is the caller's (kcmd_obj_free). */
int kcmd_cache_get(struct shm_arena *a, const char *group, const char *resource, const char *ns,
                   const char *name, struct shm_obj **ret);
/* fn is called once per object with a copy valid during the call; a negative return stops
 * the walk and is returned. Returns the number of objects visited. */
typedef int (*kcmd_cache_visit_fn)(const struct shm_obj *o, void *userdata);
int kcmd_cache_list(struct shm_arena *a, const char *group, const char *resource, const char *ns,
                    kcmd_cache_visit_fn fn, void *userdata);
/* The pods bound to node (spec.nodeName), from the arena's node index (client-go's
 * "spec.nodeName" indexer): fn as for kcmd_cache_list. -EINVAL for an empty node. */
int kcmd_cache_list_pods_on_node(struct shm_arena *a, const char *node, kcmd_cache_visit_fn fn,
                                 void *userdata);
/* 1 when the resource has been listed once (client-go's HasSynced), 0 not yet, -ENOENT when
 * it is not in the cache. */
int kcmd_cache_synced(struct shm_arena *a, const char *group, const char *resource);
