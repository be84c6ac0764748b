/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/garbagecollector/kube-api.h: struct gc_api over the real API server (kube/client.h)
 * and the REST mapping and resource selection the GC does with discovery.
 *
 * Design note.
 *   REST mapping (upstream: the shared DeferredDiscoveryRESTMapper, reset every sync): an
 *   apiVersion/kind maps only to a resource the server serves *in that version*; a kind
 *   referenced through a version no longer served has no mapping (a restMappingError, retried
 *   forever), exactly like upstream's RESTMapping(gk, version).
 *   Deletable resources (GetDeletableResources): preferred versions, verbs delete+list+watch,
 *   minus the ignored ones (core events, events.k8s.io events: DefaultIgnoredResources).
 *
 *   Calls are blocking (kube_client_request) and go through the metadata Accept header for
 *   GETs. Each GET, PATCH and DELETE first waits on `limiter` (limiter.h: one bucket of
 *   2x --kube-api-qps and --kube-api-burst shared by every GC process, upstream's metadata
 *   client); the client itself is then created without a limit of its own (controller.c).
 *   Not unit-tested against a server here: the e2e tests do.
 */
#include "kube/client.h"
#include "kube/discovery.h"
#include "kube/limiter.h"
#include "workers/garbagecollector/worker.h"

/* Maps apiVersion ("v1", "apps/v1") and kind to a served resource. 0 and *ret, or -ENOENT. */
int gc_rest_map(const struct kube_discovery *d, const char *api_version, const char *kind,
                const struct kube_api_resource **ret);
/* The GC watches this resource (preferred version, delete+list+watch, not ignored). */
bool gc_resource_deletable(const struct kube_api_resource *r);
/* DefaultIgnoredResources: "" events and events.k8s.io events. */
bool gc_resource_ignored(const char *group, const char *resource);

/* Keys of gc-attempt-to-delete in flight per GC process, the framework's own one included:
 * the manager runs min(--concurrent-gc-syncs, 4) processes and each runs ceil(syncs /
 * processes) lanes (controller.c), at most GC_MAX_LANES: so 20 syncs = 4 x 5, upstream's 20
 * workers. Beyond the cap extra syncs are not run: 4 x 6 = 24 of a queue's 32 worker slots,
 * the rest stays free for restarts. syncs < 1 counts as 1. */
#define GC_MAX_LANES 6
int gc_lanes_per_process(int64_t syncs);

struct gc_kube_api {
	struct gc_api api; /* pass &k->api to struct gc_worker */
	struct kube_client *client;
	const struct kube_discovery *disc; /* the caller refreshes it (every sync period) */
	struct kube_limiter *limiter;      /* optional: waited on before each request */
	/* optional: the producer side of the virtual delete channel and the attemptToDelete Add */
	void (*virtual_delete)(void *ud, const struct gc_ref *id);
	void (*attempt_to_delete)(void *ud, const char *uid);
	void *ud;
	/* optional: the informer store for the merge-patch fallback (gc_arena_get_cached) */
	int (*cache_get)(void *cache_ud, const struct gc_target *t, struct kube_partial **ret);
	void (*cache_put)(void *cache_ud, struct kube_partial *p); /* frees cache_get's answer */
	void *cache_ud;
	/* last error's apiserver message (for logs) */
	char last_error[512];
};

void gc_kube_api_init(struct gc_kube_api *k, struct kube_client *client,
                      const struct kube_discovery *disc);
