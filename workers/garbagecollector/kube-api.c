/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/garbagecollector/kube-api.c: the GC's API calls over kube_client (see kube-api.h).
 * Sources: operations.go (apiResource, getObject, patchObject, deleteObject), garbagecollector.go
 * GetDeletableResources, graph_builder.go DefaultIgnoredResources.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "kube/model.h"
#include "kube/proto.h"
#include "workers/garbagecollector/kube-api.h"

static void split_api_version(const char *av, char *group, size_t glen, const char **version)
{
	const char *slash = strchr(gc_s(av), '/');
	if (!slash) {
		group[0] = '\0';
		*version = gc_s(av);
		return;
	}
	size_t n = (size_t)(slash - av);
	if (n >= glen)
		n = glen - 1;
	memcpy(group, av, n);
	group[n] = '\0';
	*version = slash + 1;
}

int gc_rest_map(const struct kube_discovery *d, const char *api_version, const char *kind,
                const struct kube_api_resource **ret)
{
	char group[256];
	const char *version;
	if (!d || !kind || !kind[0])
		return -ENOENT;
	split_api_version(api_version, group, sizeof group, &version);
	for (uint32_t i = 0; i < d->n; i++) {
		const struct kube_api_resource *r = &d->res[i];
		if (gc_str_eq(r->group, group) && gc_str_eq(r->version, version) &&
		    gc_str_eq(r->kind, kind)) {
			*ret = r;
			return 0;
		}
	}
	return -ENOENT;
}

bool gc_resource_ignored(const char *group, const char *resource)
{
	return gc_str_eq(resource, "events") &&
	       (gc_str_eq(group, "") || gc_str_eq(group, "events.k8s.io"));
}

bool gc_resource_deletable(const struct kube_api_resource *r)
{
	uint32_t need = KUBE_VERB_BIT_DELETE | KUBE_VERB_BIT_LIST | KUBE_VERB_BIT_WATCH;
	return r->preferred && (r->verbs & need) == need &&
	       !gc_resource_ignored(r->group, r->resource);
}

int gc_lanes_per_process(int64_t syncs)
{
	int64_t procs = syncs < 4 ? syncs : 4, lanes;
	if (syncs < 1)
		return 1;
	lanes = (syncs + procs - 1) / procs;
	return lanes > GC_MAX_LANES ? GC_MAX_LANES : (int)lanes;
}

static int map_target(struct gc_kube_api *k, const struct gc_target *t, struct kube_request *req)
{
	const struct kube_api_resource *r;
	if (gc_rest_map(k->disc, t->api_version, t->kind, &r) < 0)
		return -ENOENT;
	req->group = r->group;
	req->version = r->version;
	req->resource = r->resource;
	req->ns = r->namespaced && t->ns && t->ns[0] ? t->ns : NULL;
	req->name = t->name;
	return 0;
}

static int finish(struct gc_kube_api *k, int r, struct kube_response *resp)
{
	if (r < 0)
		snprintf(k->last_error, sizeof k->last_error, "%s", resp->error.message);
	kube_response_clear(resp);
	return r;
}

static int k_rest_map(void *ud, const char *api_version, const char *kind, bool *ret)
{
	struct gc_kube_api *k = ud;
	const struct kube_api_resource *r;
	if (gc_rest_map(k->disc, api_version, kind, &r) < 0)
		return -ENOENT;
	*ret = r->namespaced;
	return 0;
}

static int k_get(void *ud, const struct gc_target *t, struct kube_partial **ret)
{
	struct gc_kube_api *k = ud;
	/* metadata-only, as protobuf when the client is (upstream's metadata client) */
	struct kube_request req = {.verb = KUBE_GET, .metadata_only = true, .protobuf_ok = true};
	if (map_target(k, t, &req) < 0)
		return -ENOENT;
	struct kube_response resp = {0};
	kube_limiter_wait(k->limiter);
	int r = kube_client_request(k->client, &req, NULL, NULL, &resp);
	if (r == 0)
		r = kube_decode_any(KUBE_KIND_PARTIAL, resp.body, resp.body_len, 0, (void **)ret);
	/* Every 404 is NotFound, with or without a Status body, as client-go's IsNotFound sees it
	 * (a CRD deleted under its objects answers a bare 404: its dependents must be collected,
	 * upstream's TestCRDDeletionCascading). */
	return finish(k, r, &resp);
}

static int k_patch(void *ud, const struct gc_target *t, enum kube_patch_type type, const char *body)
{
	struct gc_kube_api *k = ud;
	struct kube_request req = {.verb = KUBE_PATCH,
	                           .metadata_only = true,
	                           .body = body,
	                           .body_len = strlen(body),
	                           .patch_type = type};
	if (map_target(k, t, &req) < 0)
		return -ENOENT;
	struct kube_response resp = {0};
	kube_limiter_wait(k->limiter);
	return finish(k, kube_client_request(k->client, &req, NULL, NULL, &resp), &resp);
}

static int k_delete(void *ud, const struct gc_target *t, const char *uid, const char *rv,
                    const char *policy)
{
	struct gc_kube_api *k = ud;
	struct kube_request req = {.verb = KUBE_DELETE,
	                           .precondition_uid = uid,
	                           .precondition_rv = rv,
	                           .propagation_policy = policy};
	if (map_target(k, t, &req) < 0)
		return -ENOENT;
	struct kube_response resp = {0};
	kube_limiter_wait(k->limiter);
	return finish(k, kube_client_request(k->client, &req, NULL, NULL, &resp), &resp);
}

static int k_get_cached(void *ud, const struct gc_target *t, struct kube_partial **ret)
{
	struct gc_kube_api *k = ud;
	return k->cache_get ? k->cache_get(k->cache_ud, t, ret) : -ENOENT;
}

static void k_put_cached(void *ud, struct kube_partial *p)
{
	struct gc_kube_api *k = ud;
	if (k->cache_put)
		k->cache_put(k->cache_ud, p);
	else
		kube_object_free(p);
}

static void k_virtual_delete(void *ud, const struct gc_ref *id)
{
	struct gc_kube_api *k = ud;
	if (k->virtual_delete)
		k->virtual_delete(k->ud, id);
}

static void k_attempt_to_delete(void *ud, const char *uid)
{
	struct gc_kube_api *k = ud;
	if (k->attempt_to_delete)
		k->attempt_to_delete(k->ud, uid);
}

static void k_sleep(void *ud, double ms)
{
	(void)ud;
	struct timespec ts = {.tv_sec = (time_t)(ms / 1000),
	                      .tv_nsec = (long)((ms - (double)(long)(ms / 1000) * 1000) * 1e6)};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void gc_kube_api_init(struct gc_kube_api *k, struct kube_client *client,
                      const struct kube_discovery *disc)
{
	*k = (struct gc_kube_api){.client = client, .disc = disc};
	k->api = (struct gc_api){
	        .ud = k,
	        .rest_map = k_rest_map,
	        .get = k_get,
	        .get_cached = k_get_cached,
	        .put_cached = k_put_cached,
	        .patch = k_patch,
	        .delete_ = k_delete,
	        .virtual_delete = k_virtual_delete,
	        .attempt_to_delete = k_attempt_to_delete,
	        .sleep_ms = k_sleep,
	};
}
