/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/endpointslice/podlist.h: the pods a Service selects, by one uncached LIST (shared by
 * the EndpointSlice and Endpoints controllers: the typed pod record in the cache has no IPs,
 * ports or conditions; docs/endpointslice.md).
 */
#include <cjson/cJSON.h>

struct kube_client;

/* GET /api/v1/namespaces/<ns>/pods?labelSelector=<sel's k=v pairs, comma-joined>; *ret is the
 * parsed PodList (cJSON_Delete it). 0, -E2BIG (selector over 4 KiB), -EBADMSG (no body or not
 * JSON), or the client's -errno. */
int eps_list_selected_pods(struct kube_client *kc, const char *ns, const cJSON *sel, cJSON **ret);
