/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/garbagecollector/absent-cache.h: the absentOwnerCache (upstream uid_cache.go,
 * ReferenceCache over k8s.io/utils/lru).
 *
 * Design note.
 *   An LRU of owner identities the API server said do not exist, so that many dependents of
 *   one deleted owner cost one GET, not one each (issue #32571). Upstream sizes it 500 and keys
 *   it by the whole objectReference: apiVersion, kind, name, uid and namespace (the namespace
 *   is "" for a cluster-scoped owner kind, else the dependent's). Callers pass identities
 *   already reduced to those five fields, so controller/blockOwnerDeletion never matter.
 *   Has() is a Get: a hit moves the entry to the front, as lru.Cache.Get does. Add() of a
 *   present key moves it to the front too. There is no removal: entries only age out.
 *
 *   In kcmd each process that consults the cache has its own (the graph builder in informerd
 *   adds on node removal; each GC worker adds on 404 / uid mismatch and looks up before every
 *   owner GET). Upstream shares one between the builder and the workers; a miss here costs
 *   one extra GET that returns the same answer (docs/garbagecollector.md). The one case where
 *   a miss would change the decision, an owner whose kind cannot be mapped any more (its CRD
 *   was deleted), is covered by the builder: the dependents of a removed node are queued with
 *   the owner's identity in the key, which the worker adds to its cache first
 *   (gc_queue_key_encode_absent).
 *
 *   Rejected: a shared-memory LRU (a cross-process LRU needs a lock or a lock-free list with
 *   crash repair for a cache whose only effect is saving GETs).
 */
#include <stdbool.h>
#include <stddef.h>

#include "workers/garbagecollector/identity.h"

#define GC_ABSENT_CACHE_SIZE 500

struct gc_absent_cache;

/* max >= 1. 0 / -EINVAL / -ENOMEM. */
int gc_absent_cache_new(size_t max, struct gc_absent_cache **ret);
void gc_absent_cache_free(struct gc_absent_cache *c);
/* Adds (or refreshes) the identity; evicts the least recently used entry when full.
 * 0 or -ENOMEM. */
int gc_absent_cache_add(struct gc_absent_cache *c, const struct gc_ref *r);
/* true when present (and marks it most recently used). */
bool gc_absent_cache_has(struct gc_absent_cache *c, const struct gc_ref *r);
size_t gc_absent_cache_len(const struct gc_absent_cache *c);
