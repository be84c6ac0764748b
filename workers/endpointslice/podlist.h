/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/endpointslice/podlist.h: the pods a Service selects, from the shared cache (upstream's
 * podLister.Pods(ns).List(selector)), shared by the EndpointSlice and Endpoints controllers.
 *
 * Design note.
 *   Both reconcilers read pods as the apiserver's JSON (reconcile.h, endpoints.h). The typed pod
 *   record keeps every field they read (struct kube_pod and its EndpointSlice part, struct
 *   kube_pod_endpoint, record version 6), and this builds that JSON from it, field for field:
 *   metadata (name, namespace, uid, deletionTimestamp), spec (nodeName, hostname, subdomain,
 *   the named ports of the containers and of the sidecar init containers), status (phase,
 *   podIP, podIPs, the Ready condition with its status and lastTransitionTime). Nothing else
 *   of the pod is there.
 *   Rejected: an uncached LIST per sync (what this was before: one apiserver request per sync
 *   where upstream makes none); caching pods whole (a resource has one record kind in the
 *   arena, and the ReplicaSet, Job and pod GC readers need the typed one); rewriting both
 *   reconcilers over struct kube_pod (their tests are upstream's cases over JSON).
 */
#include <cjson/cJSON.h>

struct shm_arena;
struct kube_pod;

/* The pods of namespace ns that svc's spec.selector matches (a Service without a selector
 * matches none; an empty one every pod), as a cJSON array of pod objects (cJSON_Delete it).
 * A record this build cannot read is skipped. 0, -ENOMEM, or a lister error of
 * kcmd_cache_list other than -ENOENT (pods not in the cache: an empty array). */
int eps_cached_selected_pods(struct shm_arena *a, const char *ns, const cJSON *svc, cJSON **ret);

/* The pod JSON described above for one typed pod (exposed for the tests); NULL: no memory. */
cJSON *eps_pod_json(const struct kube_pod *p);
