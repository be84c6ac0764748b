/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/svgc/plugin.c: kcm's storageversion-garbage-collector-controller (alias
 * storage-version-gc), on by default but only with the feature gates APIServerIdentity (beta, on)
 * and StorageVersionAPI (alpha, off in v1.37), client "storage-version-garbage-collector"
 * (upstream pkg/controller/storageversiongc and cmd/kube-controller-manager/app/core.go).
 * svgc.h has the decisions; docs/storageversiongc.md.
 *
 * Shape: Leases and StorageVersions are cached whole. Two queues, as upstream's:
 * "storage_version_garbage_collector_leases" (names of deleted identity Leases) and
 * "storage_version_garbage_collector_storageversions" (StorageVersions naming an apiserver whose
 * identity Lease the cache does not hold). One worker process takes both (upstream runs one
 * goroutine per queue; the two never write the same field differently, and a Conflict between
 * them is retried by the queue either way).
 *
 * Sync of a Lease name (processDeletedLease): a live GET; still there -> done; another error ->
 * retried; gone -> every StorageVersion listed live loses the entries of that apiServerID, and is
 * deleted when none is left or its status written otherwise.
 * Sync of a StorageVersion (syncStorageVersion): a live GET (gone -> done); an entry whose
 * identity Lease cannot be read live, or is not labelled as a kube-apiserver's, is dropped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcmd/kcmd.h"
#include "kube/client.h"
#include "kube/model.h"
#include "workers/svgc/svgc.h"
#include "workers/worker.h"

#define SVGC_CONTROLLER  "storageversion-garbage-collector-controller"
#define SVGC_Q_LEASES    "storage_version_garbage_collector_leases"
#define SVGC_Q_SVS       "storage_version_garbage_collector_storageversions"
#define SVGC_GROUP       "internal.apiserver.k8s.io"
#define SVGC_VERSION     "v1alpha1"
#define SVGC_RESOURCE    "storageversions"
#define SVGC_LEASE_GROUP "coordination.k8s.io"

enum { Q_LEASES = 0, Q_SVS = 1 };

/* ---- handlers (kcmd-dispatcher) ----------------------------------------------------------- */

/* onDeleteLease: a kube-apiserver identity Lease of kube-system was deleted (a tombstone's last
 * known state counts as the Lease, as upstream's DeletedFinalStateUnknown). */
static void on_lease_delete(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	size_t len = 0;
	const char *js = ev->old ? kcmd_obj_json(ev->old, &len) : NULL;
	cJSON *lease;

	if (!js || !(lease = cJSON_ParseWithLength(js, len)))
		return;
	if (svgc_is_identity_lease(lease, true)) {
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
		        cJSON_GetObjectItemCaseSensitive(lease, "metadata"), "name"));
		if (name && *name) {
			kcmd_log_v(4, "Observed lease deleted castObjName=\"%s\"", name);
			kcmd_queue_add(ctx, Q_LEASES, name);
		}
	}
	cJSON_Delete(lease);
}

/* Whether the cache holds kube-system/<id> as a kube-apiserver identity Lease. */
static bool cached_identity(struct shm_arena *a, const char *id)
{
	struct shm_obj *o = NULL;
	size_t len = 0;
	const char *js;
	cJSON *lease;
	bool ok = false;

	if (!id || !*id || kcmd_cache_get(a, SVGC_LEASE_GROUP, "leases", SVGC_LEASE_NS, id, &o) < 0)
		return false;
	js = kcmd_obj_json(o, &len);
	if (js && (lease = cJSON_ParseWithLength(js, len))) {
		ok = svgc_is_identity_lease(lease, false);
		cJSON_Delete(lease);
	}
	kcmd_obj_free(o);
	return ok;
}

/* enqueueStorageVersion: queued at its first entry without an identity Lease in the cache. */
static void queue_if_stale(struct inf_handler_ctx *ctx, const char *js, size_t len)
{
	cJSON *sv = js ? cJSON_ParseWithLength(js, len) : NULL;
	const char *id, *name;
	size_t i;

	if (!sv)
		return;
	name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(sv, "metadata"), "name"));
	for (i = 0; name && *name && (id = svgc_entry_id(sv, i)); i++) {
		if (!cached_identity(ctx->arena, id)) {
			kcmd_log_v(4,
			           "Observed storage version with invalid apiserver entry "
			           "objName=\"%s\"",
			           name);
			kcmd_queue_add(ctx, Q_SVS, name);
			break;
		}
	}
	cJSON_Delete(sv);
}

static void on_sv(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	size_t len = 0;
	const char *js = kcmd_event_json(ev, &len);

	queue_if_stale(ctx, js, len);
}

static int resync_one(const struct shm_obj *o, void *userdata)
{
	size_t len = 0;
	const char *js = kcmd_obj_json(o, &len);

	queue_if_stale(userdata, js, len);
	return 0;
}

/* The queue's owner came back (a dispatcher restart): every StorageVersion is judged again, as
 * the informer's initial adds would. A deleted Lease missed meanwhile leaves entries whose
 * Lease the cache no longer holds: those StorageVersions are queued by this walk. */
static void svgc_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)restarted;
	if (queue == Q_SVS)
		kcmd_cache_list(ctx->arena, SVGC_GROUP, SVGC_RESOURCE, NULL, resync_one, ctx);
}

static const char *const svgc_queue_names[] = {SVGC_Q_LEASES, SVGC_Q_SVS, NULL};

static const struct inf_handler_entry svgc_entries[] = {
        {SVGC_LEASE_GROUP, "leases", NULL, NULL, on_lease_delete},
        {SVGC_GROUP, SVGC_RESOURCE, on_sv, on_sv, NULL},
};

static const struct inf_handler_table svgc_handlers = {
        .controller = SVGC_CONTROLLER,
        .queues = svgc_queue_names,
        .entries = svgc_entries,
        .n_entries = sizeof(svgc_entries) / sizeof(svgc_entries[0]),
        .resync = svgc_resync,
};

/* ---- sync (kcmd-worker) ------------------------------------------------------------------- */

/* Test seam (docs/storageversiongc.md, docs/testing.md): KCMD_TEST_SVGC_KEEP_ID=<apiserver id>
 * makes this worker never remove an entry of that apiserver (its deleted Lease is ignored, its
 * entries read as live), as a worker that lost the keys would (the fault
 * TestStorageVersionGC_WorkerKilled's oracle targets). Read once at start; unset or empty: no
 * effect. */
static const char *keep_id;

static int svgc_init(struct wk_ctx *ctx, void **ret_state)
{
	const char *v = getenv("KCMD_TEST_SVGC_KEEP_ID");

	if (v && *v) {
		keep_id = v;
		kcmd_log_warning(
		        "KCMD_TEST_SVGC_KEEP_ID=%s: the entries of that apiserver are kept "
		        "(a test seam: their removal is dropped)",
		        v);
	}
	kcmd_log_info("Starting controller controller=\"%s\"", SVGC_CONTROLLER);
	*ret_state = ctx;
	return 0;
}

static void svgc_fini(void *state)
{
	(void)state;
	kcmd_log_info("Shutting down controller controller=\"%s\"", SVGC_CONTROLLER);
}

static const char *reason(int r)
{
	return kcmd_kube_reason(r) ? kcmd_kube_reason(r) : strerror(-r);
}

static int get_json(struct wk_ctx *ctx, const struct kcmd_request *rq, cJSON **ret)
{
	char *body = NULL;
	int r = kcmd_kube_request(ctx->kc, rq, NULL, &body);

	*ret = NULL;
	if (r == 0 && !(*ret = body ? cJSON_Parse(body) : NULL))
		r = -EBADMSG;
	free(body);
	return r;
}

/* The live identity check of one entry (syncStorageVersion): any error reads as "no Lease". */
static bool live_stale(const char *id, void *ud)
{
	struct wk_ctx *ctx = ud;
	cJSON *lease = NULL;
	bool stale;

	if (!*id)
		return true;
	if (keep_id && !strcmp(id, keep_id)) {
		kcmd_log_warning("KCMD_TEST_SVGC_KEEP_ID: entry of apiserver %s kept", id);
		return false;
	}
	if (get_json(ctx,
	             &(struct kcmd_request){.method = "GET",
	                                    .group = SVGC_LEASE_GROUP,
	                                    .version = "v1",
	                                    .resource = "leases",
	                                    .ns = SVGC_LEASE_NS,
	                                    .name = id},
	             &lease) < 0)
		return true;
	stale = !svgc_is_identity_lease(lease, false);
	cJSON_Delete(lease);
	return stale;
}

static bool is_id(const char *id, void *ud)
{
	return !strcmp(id, (const char *)ud);
}

/* updateOrDeleteStorageVersion, with sv already stripped of the stale entries. */
static int update_or_delete(struct wk_ctx *ctx, cJSON *sv, size_t left)
{
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(sv, "metadata"), "name"));
	char now[KUBE_TIME_BUF];
	char *body;
	int r;

	if (!name || !*name)
		return -EINVAL;
	if (left == 0)
		return kcmd_kube_request(ctx->kc,
		                         &(struct kcmd_request){.method = "DELETE",
		                                                .group = SVGC_GROUP,
		                                                .version = SVGC_VERSION,
		                                                .resource = SVGC_RESOURCE,
		                                                .name = name},
		                         NULL, NULL);
	kube_time_format(kube_time_now(), now);
	if ((r = svgc_set_common_encoding(sv, now)) < 0)
		return r;
	/* a list's items carry no apiVersion/kind */
	cJSON_DeleteItemFromObjectCaseSensitive(sv, "apiVersion");
	cJSON_DeleteItemFromObjectCaseSensitive(sv, "kind");
	cJSON_AddStringToObject(sv, "apiVersion", SVGC_GROUP "/" SVGC_VERSION);
	cJSON_AddStringToObject(sv, "kind", "StorageVersion");
	if (!(body = cJSON_PrintUnformatted(sv)))
		return -ENOMEM;
	r = kcmd_kube_request(ctx->kc,
	                      &(struct kcmd_request){.method = "PUT",
	                                             .group = SVGC_GROUP,
	                                             .version = SVGC_VERSION,
	                                             .resource = SVGC_RESOURCE,
	                                             .name = name,
	                                             .subresource = "status",
	                                             .body = body,
	                                             .body_kind = "StorageVersion"},
	                      NULL, NULL);
	free(body);
	return r;
}

static int process_deleted_lease(struct wk_ctx *ctx, const char *name)
{
	cJSON *lease = NULL, *list = NULL, *it;
	int r, first_err = 0;

	r = get_json(ctx,
	             &(struct kcmd_request){.method = "GET",
	                                    .group = SVGC_LEASE_GROUP,
	                                    .version = "v1",
	                                    .resource = "leases",
	                                    .ns = SVGC_LEASE_NS,
	                                    .name = name},
	             &lease);
	cJSON_Delete(lease);
	if (r == 0)
		return 0; /* the Lease is back (or never went): nothing to collect */
	if (r != -ENOENT)
		return r;
	if (keep_id && !strcmp(name, keep_id)) {
		kcmd_log_warning("KCMD_TEST_SVGC_KEEP_ID: entries of apiserver %s kept", name);
		return 0;
	}
	{
		struct kube_response resp = {0};
		r = kube_client_request(ctx->kc,
		                        &(struct kube_request){.verb = KUBE_LIST,
		                                               .group = SVGC_GROUP,
		                                               .version = SVGC_VERSION,
		                                               .resource = SVGC_RESOURCE},
		                        NULL, NULL, &resp);
		if (r == 0)
			r = resp.error.err;
		if (r == 0 && !(list = resp.body ? cJSON_Parse(resp.body) : NULL))
			r = -EBADMSG;
		kube_response_clear(&resp);
	}
	if (r < 0)
		return r;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(list, "items"))
	{
		size_t left = 0;

		if (svgc_drop_entries(it, is_id, (void *)name, &left) == 0)
			continue;
		r = update_or_delete(ctx, it, left);
		if (r < 0) {
			kcmd_log_error(
			        "storage version %s: removing the entries of apiserver %s: %s",
			        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
			                cJSON_GetObjectItemCaseSensitive(it, "metadata"), "name")),
			        name, reason(r));
			if (!first_err)
				first_err = r;
		}
	}
	cJSON_Delete(list);
	return first_err;
}

static int sync_storage_version(struct wk_ctx *ctx, const char *name)
{
	cJSON *sv = NULL;
	size_t left = 0;
	int r;

	r = get_json(ctx,
	             &(struct kcmd_request){.method = "GET",
	                                    .group = SVGC_GROUP,
	                                    .version = SVGC_VERSION,
	                                    .resource = SVGC_RESOURCE,
	                                    .name = name},
	             &sv);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	if (svgc_drop_entries(sv, live_stale, ctx, &left) > 0)
		r = update_or_delete(ctx, sv, left);
	cJSON_Delete(sv);
	return r;
}

/* WaitForNamedCacheSync(leases, storageversions): until both are synced a key is looked at
 * again 100 ms later. */
static bool caches_synced(struct shm_arena *a)
{
	static bool synced;

	if (synced)
		return true;
	if (kcmd_cache_synced(a, SVGC_LEASE_GROUP, "leases") != 1 ||
	    kcmd_cache_synced(a, SVGC_GROUP, SVGC_RESOURCE) != 1)
		return false;
	synced = true;
	kcmd_log_info("Caches are synced for %s", SVGC_CONTROLLER);
	return true;
}

static void svgc_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct wk_ctx *ctx = state;
	int r;

	*res = (struct wk_result){0};
	if (!caches_synced(ctx->arena)) {
		res->requeue_after = true;
		res->after_usec = 100000;
		return;
	}
	if (q == Q_LEASES) {
		if ((r = process_deleted_lease(ctx, key)) < 0)
			kcmd_log_error("lease %s failed with: %s", key, reason(r));
	} else {
		if ((r = sync_storage_version(ctx, key)) < 0)
			kcmd_log_error("storage version %s failed with: %s", key, reason(r));
	}
	res->err = r < 0 ? r : 0;
}

static const struct wk_controller svgc_worker = {
        .name = SVGC_CONTROLLER,
        .queues = svgc_queue_names,
        .init = svgc_init,
        .sync = svgc_sync,
        .fini = svgc_fini,
};

/* ---- the descriptor ----------------------------------------------------------------------- */
static const char *const svgc_aliases[] = {"storage-version-gc", NULL};
/* kcm's requiredFeatureGates: both on, or the controller does not start */
static const char *const svgc_gates[] = {"APIServerIdentity", "StorageVersionAPI", NULL};
static const struct kcmd_watch svgc_watches[] = {
        {SVGC_LEASE_GROUP, "v1", "leases", "Lease", KCMD_CACHE_OBJECT, true},
        {SVGC_GROUP, SVGC_VERSION, SVGC_RESOURCE, "StorageVersion", KCMD_CACHE_OBJECT, false},
};
static const struct kcmd_queue svgc_queues[] = {{.name = SVGC_Q_LEASES}, {.name = SVGC_Q_SVS}};

const struct kcmd_controller kcmd_svgc_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = SVGC_CONTROLLER,
        .aliases = svgc_aliases,
        .enabled_by_default = true,
        .feature_gates = svgc_gates,
        .service_account = "storage-version-garbage-collector",
        .cluster_scoped_keys = true,
        .watches = svgc_watches,
        .n_watches = sizeof(svgc_watches) / sizeof(svgc_watches[0]),
        .queues = svgc_queues,
        .n_queues = 2,
        .handlers = &svgc_handlers,
        .worker = &svgc_worker,
};
