/* SPDX-License-Identifier: Apache-2.0 */
/* kube/discovery.h - what the apiserver serves: groups, versions, resources, scopes, verbs.
 *
 * Two wire forms are decoded into the same flat table:
 *  - aggregated discovery (apidiscovery.k8s.io/v2 APIGroupDiscoveryList, from GET /api and
 *    /apis with Accept "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,
 *    application/json"): one request per root for everything; versions are listed in preference
 *    order, so the first version of a group is its preferred one;
 *  - legacy: /apis (APIGroupList: groups, versions, preferredVersion) then one APIResourceList
 *    per group-version (/api/v1, /apis/<g>/<v>).
 * Subresources ("pods/status", and v2's subresources lists) are not listed: informers and the GC
 * work on top-level resources only. The table is one arena object (kube_object_free()).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	KUBE_VERB_BIT_GET = 1u << 0,
	KUBE_VERB_BIT_LIST = 1u << 1,
	KUBE_VERB_BIT_WATCH = 1u << 2,
	KUBE_VERB_BIT_CREATE = 1u << 3,
	KUBE_VERB_BIT_UPDATE = 1u << 4,
	KUBE_VERB_BIT_PATCH = 1u << 5,
	KUBE_VERB_BIT_DELETE = 1u << 6,
	KUBE_VERB_BIT_DELETECOLLECTION = 1u << 7,
};

struct kube_api_resource {
	const char *group; /* "" for core */
	const char *version;
	const char *resource; /* plural, e.g. "replicasets" */
	const char *kind;
	bool namespaced;
	bool preferred; /* version is the group's preferred version */
	uint32_t verbs; /* KUBE_VERB_BIT_* */
};

struct kube_discovery {
	uint32_t n;
	struct kube_api_resource *res;
};

struct kube_api_group {
	const char *name;
	const char *preferred_version;
	uint32_t n_versions;
	const char **versions;
};

struct kube_api_group_list {
	uint32_t n;
	struct kube_api_group *groups;
};

#define KUBE_ACCEPT_DISCOVERY_V2                                                                   \
	"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"

/* Errors as the model decoders (kube/model.h); -EPROTO also for a document of another kind. */
int kube_decode_discovery_v2(const void *json, size_t len, struct kube_discovery **ret);
int kube_decode_api_group_list(const void *json, size_t len, struct kube_api_group_list **ret);
/* APIResourceList of one group-version; `preferred` is stored in every entry. */
int kube_decode_api_resource_list(const void *json, size_t len, bool preferred,
                                  struct kube_discovery **ret);

/* Finds group/resource (version NULL: the preferred one); NULL if absent. */
const struct kube_api_resource *kube_discovery_find(const struct kube_discovery *d,
                                                    const char *group, const char *resource,
                                                    const char *version);
uint32_t kube_verbs_mask(const char *verb); /* 0 for an unknown verb */
