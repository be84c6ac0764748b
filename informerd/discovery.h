/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * informerd/discovery.h: the garbage collector's GetDeletableResources, re-read every period
 * (30 s in kcm), on the event loop.
 *
 * Design note.
 *   One round is GET /api/v1, GET /apis, then GET /apis/<group>/<preferred version> for each
 *   group (legacy discovery: kube_request has no way to ask for the aggregated v2 form; the
 *   decoders for both exist in kube/discovery.h). A resource is deletable when its verbs
 *   include delete, list and watch; subresources are never listed; events (core) and
 *   events.events.k8s.io are ignored, as the GC's default GCIgnoredResources. At the end of a
 *   round the callback gets the whole set and the groups whose discovery failed, so the caller
 *   can keep the informers of failed groups (kcm keeps synced monitors of failed groups rather
 *   than dropping them on a discovery hiccup).
 *
 *   Rejected: a blocking discovery at start-up (informerd would stall while an aggregated API
 *   is down; the GC must proceed with what it has).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/handlers.h"
#include "ipc/loop.h"
#include "kube/client.h"

struct inf_discovery;

/* res: n deletable resources (valid during the call; strings too); failed_groups: NULL-
 * terminated names of groups whose version could not be read ("" = core). */
typedef void (*inf_discovery_fn)(void *userdata, const struct inf_resource *res, size_t n,
                                 const char *const *failed_groups);

struct inf_discovery_config {
	struct ipc_loop *loop;
	struct kube_client *client;
	uint64_t period_usec; /* 0: 30 s */
	inf_discovery_fn on_round;
	void *userdata;
};

/* Starts the first round at once. */
int inf_discovery_new(const struct inf_discovery_config *cfg, struct inf_discovery **ret);
struct inf_discovery *inf_discovery_free(struct inf_discovery *d);
uint64_t inf_discovery_rounds(const struct inf_discovery *d);

/* A round as soon as the last one is INF_DISCOVERY_SOON_GAP_US old (or one more right after the
 * round in flight), instead of a period later. For a resource whose list or watch says 404: its
 * CRD or APIService went away, and until a round drops it its informer stays unsynced (every
 * cache-sync wait would hang for up to a period; kcm's monitors wait the same, kcmd need not).
 * The gap bounds how often an API that answers 404 yet stays in discovery can cost a round. */
#define INF_DISCOVERY_SOON_GAP_US 2000000ULL
void inf_discovery_soon(struct inf_discovery *d);

/* The filter, exposed for tests: deletable (verbs), not a subresource, not ignored. */
bool inf_discovery_wanted(const char *group, const char *resource, uint32_t verbs);

/* The discovered resources informerd watches: owned copies, growable (no bound: a cluster may
 * serve any number of CRDs; issue 21 replaced informerd/main.c's fixed array of 1,024, which
 * stopped adding informers silently when full). Pointers stay valid until their removal (the
 * informers and the store keep them). Zero-initialise; inf_res_set_clear frees everything. */
struct inf_res_set {
	struct inf_resource **v;
	size_t n, cap;
};
/* Appends a copy of res (strings duplicated); *ret (may be NULL) gets it. 0 or -ENOMEM. */
int inf_res_set_add(struct inf_res_set *s, const struct inf_resource *res,
                    struct inf_resource **ret);
/* Frees element i and moves the last one into its place. */
void inf_res_set_remove(struct inf_res_set *s, size_t i);
void inf_res_set_clear(struct inf_res_set *s);
