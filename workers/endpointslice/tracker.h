/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/endpointslice/tracker.h: upstream's EndpointSliceTracker and TriggerTimeTracker
 * (k8s.io/endpointslice/util), per Service, in the memory of the one worker process.
 *
 * Design note.
 *   The slice tracker remembers, per Service, the generation of every slice this worker wrote
 *   (from the write's answer) and the slices it deleted; a sync whose cached slices are older
 *   than that, miss one, or still hold a deleted one is stale and retried with backoff
 *   (upstream's StaleSlices). A deleted slice's entry goes once the cache no longer holds it
 *   (upstream drops it on the informer's delete event, HandleDeletion); a written slice the
 *   cache lacks is looked up at the apiserver (the worker sees no events): deleted by someone
 *   else, its entry goes too (upstream's HandleDeletion of an unexpected deletion). The
 * trigger-time tracker keeps, per Service, the last-seen Ready transition time of each pod and the
 *   Service's creation time, and gives the earliest of those that moved since the last sync
 *   (the Service's creation time for a Service it has not seen).
 *   Both are process memory: the controller runs one worker process (docs/endpointslice.md),
 *   so every sync of a Service sees the same tracker. The tables grow without bound only with
 *   the number of Services; a Service's entries go when its sync finds it deleted.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct eps_tracker;

int eps_tracker_new(struct eps_tracker **ret);
void eps_tracker_free(struct eps_tracker *t);

/* A write's answer: the slice (name, uid) of Service key now has generation gen. */
int eps_tracker_update(struct eps_tracker *t, const char *key, const char *name, const char *uid,
                       int64_t gen);
/* The slice was deleted by this worker. */
int eps_tracker_expect_deletion(struct eps_tracker *t, const char *key, const char *name,
                                const char *uid);
/* Whether slice name/uid no longer exists at the apiserver (someone else deleted it). */
typedef bool (*eps_gone_fn)(void *ud, const char *name, const char *uid);
/* The cached slices (uids[i] at gens[i]) are older than what this worker wrote. A written slice
 * the cache lacks is asked about with gone (may be NULL): gone, its entry is dropped (upstream
 * drops it on the informer's delete event) and it does not make the cache stale. */
bool eps_tracker_stale(struct eps_tracker *t, const char *key, const char *const *uids,
                       const int64_t *gens, size_t n, eps_gone_fn gone, void *gone_ud);
/* Forget the Service (it is gone). */
void eps_tracker_delete_service(struct eps_tracker *t, const char *key);

/* ComputeEndpointLastChangeTriggerTime: pods[i] named names[i] with trigger time times[i]
 * (0: none); svc_time the Service's creation time. Returns the trigger time (0: none). */
long long eps_tracker_trigger_time(struct eps_tracker *t, const char *key, const char *const *names,
                                   const long long *times, size_t n, long long svc_time);
