/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/svm/plugin.c: kcm's storage-version-migrator-controller (alias svm), on by default
 * in v1.37 (gates StorageVersionMigrator and InformerResourceVersion, both GA), client
 * "storage-version-migrator-controller" with kcm's QPS x20 and burst x100 (upstream
 * pkg/controller/storageversionmigrator and cmd/kube-controller-manager/app/
 * storageversionmigrator.go). svm.h has the decisions; docs/svm.md.
 *
 * Shape: StorageVersionMigrations are cached whole; the objects to migrate are the metadata
 * records the arena keeps for every deletable resource (watch_deletable, the GC's discovery),
 * the counterpart of upstream's GC monitors. Three queues, one per upstream loop:
 *   - "migration-runner-controller" (keys "resource.group"): which migration of a resource
 *     runs (Running=True, the CRD's StorageMigrating condition) and the clean-up of finished
 *     ones (Running=False MigrationCompleted, the CRD's storedVersions);
 *   - "resource-version-controller" (names): status.resourceVersion of a running migration,
 *     from a LIST limit=1 in a namespace that cannot exist;
 *   - "storage-version-migrator-controller" (names): once the cache has observed that
 *     resourceVersion, every cached object not newer is rewritten by a JSON merge patch with
 *     its resourceVersion as precondition, then Succeeded (or Failed).
 * One worker process takes the three queues (upstream: 5 goroutines for the last, 1 each for
 * the others); keys of one queue are never synced twice at once either way.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kcmd/kcmd.h"
#include "kube/client.h"
#include "kube/model.h"
#include "shm/arena.h"
#include "workers/svm/svm.h"
#include "workers/worker.h"

#define SVM_CONTROLLER  "storage-version-migrator-controller"
#define SVM_Q_RUNNER    "migration-runner-controller"
#define SVM_Q_RV        "resource-version-controller"
#define SVM_Q_MIGRATE   SVM_CONTROLLER
#define SVM_GROUP       "storagemigration.k8s.io"
#define SVM_VERSION     "v1"
#define SVM_RESOURCE    "storageversionmigrations"
#define SVM_CRD_GROUP   "apiextensions.k8s.io"
#define SVM_FAKE_NS     "@fake:svm_ns!"               /* not a valid namespace name: never exists */
#define SVM_RUNNER_NAME "migration-runner-controller" /* its field manager */

enum { Q_RUNNER = 0, Q_RV = 1, Q_MIGRATE = 2 };

/* ---- handlers (kcmd-dispatcher) ----------------------------------------------------------- */

/* Queues a migration's keys: its name on the resource-version and migration queues (when
 * `names`), its group/resource on the runner's (when `runner`). */
static void enqueue_json(struct inf_handler_ctx *ctx, const char *js, size_t len, bool names,
                         bool runner)
{
	cJSON *svm = js ? cJSON_ParseWithLength(js, len) : NULL;
	const char *name, *g, *r;
	char key[512];

	if (!svm)
		return;
	name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(svm, "metadata"), "name"));
	if (names && name && *name) {
		kcmd_queue_add(ctx, Q_MIGRATE, name);
		kcmd_queue_add(ctx, Q_RV, name);
	}
	if (runner && svm_spec_resource(svm, &g, &r) == 0 &&
	    svm_gr_key(g, r, key, sizeof(key)) == 0)
		kcmd_queue_add(ctx, Q_RUNNER, key);
	cJSON_Delete(svm);
}

static void on_svm(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	size_t len = 0;
	const char *js = kcmd_event_json(ev, &len);

	enqueue_json(ctx, js, len, true, true);
}

/* deletes reach only the runner (another migration of the resource may start) */
static void on_svm_delete(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	size_t len = 0;
	const char *js = ev->old ? kcmd_obj_json(ev->old, &len) : NULL;

	enqueue_json(ctx, js, len, false, true);
}

struct resync_walk {
	struct inf_handler_ctx *ctx;
	size_t queue;
};

static int resync_one(const struct shm_obj *o, void *userdata)
{
	struct resync_walk *w = userdata;
	size_t len = 0;
	const char *js = kcmd_obj_json(o, &len);

	if (w->queue == Q_RUNNER)
		enqueue_json(w->ctx, js, len, false, true);
	else
		enqueue_json(w->ctx, js, len, true, false);
	return 0;
}

/* A queue's owner attached (again): every migration is looked at again, as the informer's
 * initial adds. (The two name queues are refilled together: an extra key is a no-op sync.) */
static void svm_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	struct resync_walk w = {ctx, queue};

	(void)restarted;
	kcmd_cache_list(ctx->arena, SVM_GROUP, SVM_RESOURCE, NULL, resync_one, &w);
}

static const char *const svm_queue_names[] = {SVM_Q_RUNNER, SVM_Q_RV, SVM_Q_MIGRATE, NULL};

static const struct inf_handler_entry svm_entries[] = {
        {SVM_GROUP, SVM_RESOURCE, on_svm, on_svm, on_svm_delete},
};

static const struct inf_handler_table svm_handlers = {
        .controller = SVM_CONTROLLER,
        .queues = svm_queue_names,
        .entries = svm_entries,
        .n_entries = 1,
        .resync = svm_resync,
};

/* ---- sync (kcmd-worker) ------------------------------------------------------------------- */
struct svm_state {
	struct wk_ctx *ctx;
	struct kube_client *kc; /* QPS x20, burst x100 */
};

/* Test seam (docs/svm.md, docs/testing.md): KCMD_TEST_SVM_SKIP_PREFIX=<prefix> makes this worker
 * count every object whose name starts with <prefix> as migrated without rewriting it, as a
 * worker that lost its patch would (the fault TestSVM_WorkerKilled's oracle targets). Read once
 * at start; unset or empty: no effect. */
static const char *skip_prefix;

static int svm_init(struct wk_ctx *ctx, void **ret_state)
{
	struct svm_state *s = calloc(1, sizeof(*s));
	int burst = ctx->burst >= 1 ? ctx->burst : 1;
	struct kube_client_opts ko;
	const char *v = getenv("KCMD_TEST_SVM_SKIP_PREFIX");
	int r;

	if (!s)
		return -ENOMEM;
	if (v && *v) {
		skip_prefix = v;
		kcmd_log_warning("KCMD_TEST_SVM_SKIP_PREFIX=%s: those objects are never rewritten "
		                 "(a test seam: their patch is dropped)",
		                 v);
	}
	/* kcm: config.QPS *= 20, config.Burst *= 100 for this controller's clients */
	ko = (struct kube_client_opts){.config = ctx->config,
	                               .process = ctx->process,
	                               .controller = SVM_CONTROLLER,
	                               .qps = ctx->qps > 0 ? ctx->qps * 20 : 0,
	                               .burst = burst > INT_MAX / 100 ? INT_MAX : burst * 100,
	                               .insecure_ok = true,
	                               .content_type = ctx->content_type};
	if ((r = kube_client_new(&ko, &s->kc)) < 0) {
		free(s);
		return r;
	}
	s->ctx = ctx;
	kcmd_log_info("Starting controller=\"%s\"", SVM_CONTROLLER);
	kcmd_log_info("Starting controller=\"%s\"", SVM_Q_RV);
	kcmd_log_info("Starting controller=\"%s\"", SVM_Q_RUNNER);
	*ret_state = s;
	return 0;
}

static void svm_fini(void *state)
{
	struct svm_state *s = state;

	kcmd_log_info("Shutting down controller=\"%s\"", SVM_CONTROLLER);
	kube_client_free(s->kc);
	free(s);
}

/* One request; *ret_body (may be NULL) gets the parsed body on success; msg (may be NULL)
 * the apiserver's message (or the errno's text) on failure. */
static int call(struct svm_state *s, const struct kube_request *rq, cJSON **ret_body, char *msg,
                size_t msglen)
{
	struct kube_response resp = {0};
	int r = kube_client_request(s->kc, rq, NULL, NULL, &resp);

	if (r == 0)
		r = resp.error.err;
	if (ret_body)
		*ret_body = NULL;
	if (r == 0 && ret_body && !(*ret_body = resp.body ? cJSON_Parse(resp.body) : NULL))
		r = -EBADMSG;
	if (r < 0 && msg && msglen)
		snprintf(msg, msglen, "%s",
		         resp.error.message[0] ? resp.error.message : strerror(-r));
	kube_response_clear(&resp);
	return r;
}

static const char *meta_str(const cJSON *o, const char *key)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(o, "metadata"), key));
}

static int64_t meta_int(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(o, "metadata"), key);
	return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : 0;
}

static const char *status_rv(const cJSON *svm)
{
	const char *rv = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(svm, "status"), "resourceVersion"));
	return rv ? rv : "";
}

/* The lister's copy of a migration, or NULL (not cached). */
static cJSON *cached_svm(struct svm_state *s, const char *name)
{
	struct shm_obj *o = NULL;
	size_t len = 0;
	const char *js;
	cJSON *svm = NULL;

	if (kcmd_cache_get(s->ctx->arena, SVM_GROUP, SVM_RESOURCE, NULL, name, &o) < 0)
		return NULL;
	if ((js = kcmd_obj_json(o, &len)))
		svm = cJSON_ParseWithLength(js, len);
	kcmd_obj_free(o);
	return svm;
}

/* UpdateStatus with the copy's resourceVersion (a Conflict is retried by the queue). */
static int put_status(struct svm_state *s, cJSON *svm)
{
	const char *name = meta_str(svm, "name");
	char *body;
	int r;

	if (!name)
		return -EINVAL;
	cJSON_DeleteItemFromObjectCaseSensitive(svm, "apiVersion");
	cJSON_DeleteItemFromObjectCaseSensitive(svm, "kind");
	cJSON_AddStringToObject(svm, "apiVersion", SVM_GROUP "/" SVM_VERSION);
	cJSON_AddStringToObject(svm, "kind", "StorageVersionMigration");
	if (!(body = cJSON_PrintUnformatted(svm)))
		return -ENOMEM;
	r = call(s,
	         &(struct kube_request){.verb = KUBE_UPDATE,
	                                .group = SVM_GROUP,
	                                .version = SVM_VERSION,
	                                .resource = SVM_RESOURCE,
	                                .name = name,
	                                .subresource = "status",
	                                .body = body,
	                                .body_len = strlen(body),
	                                .body_kind = "StorageVersionMigration"},
	         NULL, NULL, 0);
	free(body);
	return r;
}

static void now_str(char buf[static KUBE_TIME_BUF])
{
	kube_time_format(kube_time_now(), buf);
}

/* ---- discovery (the RESTMapper) --------------------------------------------------------------
 * The version a RESTMapper maps group/resource to: the group's preferred version if it serves
 * the resource, else the first other version that does. 1 found (version copied into ver,
 * the entry's facts into *info with kind copied into kind), 0 not served, -errno. */
struct svm_gvr {
	char group[256], version[64], resource[256], kind[256];
	bool namespaced, migratable;
};

static int lookup_version(struct svm_state *s, struct svm_gvr *g, const char *version)
{
	char path[640];
	cJSON *list = NULL;
	struct svm_api_resource ar;
	int r;

	if (*g->group)
		snprintf(path, sizeof(path), "/apis/%s/%s", g->group, version);
	else
		snprintf(path, sizeof(path), "/api/%s", version);
	r = call(s, &(struct kube_request){.verb = KUBE_GET, .path = path}, &list, NULL, 0);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	r = svm_find_resource(list, g->resource, &ar) == 0;
	if (r) {
		snprintf(g->version, sizeof(g->version), "%s", version);
		snprintf(g->kind, sizeof(g->kind), "%s", ar.kind ? ar.kind : "");
		g->namespaced = ar.namespaced;
		g->migratable = ar.migratable;
	}
	cJSON_Delete(list);
	return r;
}

static int resolve(struct svm_state *s, struct svm_gvr *g)
{
	const char *versions[32];
	char path[320];
	cJSON *grp = NULL;
	size_t n;
	int r;

	if (!*g->group)
		return lookup_version(s, g, "v1");
	snprintf(path, sizeof(path), "/apis/%s", g->group);
	r = call(s, &(struct kube_request){.verb = KUBE_GET, .path = path}, &grp, NULL, 0);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	n = svm_group_versions(grp, versions, 32);
	r = 0;
	for (size_t i = 0; i < n && r == 0; i++)
		r = lookup_version(s, g, versions[i]);
	cJSON_Delete(grp);
	return r;
}

static int gvr_from(const cJSON *svm, struct svm_gvr *g)
{
	const char *group, *res;

	memset(g, 0, sizeof(*g));
	if (svm_spec_resource(svm, &group, &res) < 0)
		return -EINVAL;
	if (strlen(group) >= sizeof(g->group) || strlen(res) >= sizeof(g->resource))
		return -ENAMETOOLONG;
	strcpy(g->group, group);
	strcpy(g->resource, res);
	return 0;
}

/* ---- the migration runner ---------------------------------------------------------------- */
struct svm_list {
	const char *group, *resource;
	cJSON **v;
	size_t n, cap;
};

static int collect_svm(const struct shm_obj *o, void *userdata)
{
	struct svm_list *l = userdata;
	size_t len = 0;
	const char *js = kcmd_obj_json(o, &len), *g, *r;
	cJSON *svm = js ? cJSON_ParseWithLength(js, len) : NULL;

	if (!svm)
		return 0;
	if (svm_spec_resource(svm, &g, &r) < 0 || strcmp(g, l->group) || strcmp(r, l->resource)) {
		cJSON_Delete(svm);
		return 0;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 8;
		cJSON **v = realloc(l->v, cap * sizeof(*v));
		if (!v) {
			cJSON_Delete(svm);
			return -ENOMEM;
		}
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = svm;
	return 0;
}

/* The CRD serving group/resource, or NULL (-ENOENT in *err when there is none). */
static cJSON *get_crd(struct svm_state *s, const char *group, const char *resource, int *err)
{
	char name[600];
	cJSON *crd = NULL;

	snprintf(name, sizeof(name), "%s.%s", resource, group);
	*err = call(s,
	            &(struct kube_request){.verb = KUBE_GET,
	                                   .group = SVM_CRD_GROUP,
	                                   .version = "v1",
	                                   .resource = "customresourcedefinitions",
	                                   .name = name},
	            &crd, NULL, 0);
	return crd;
}

/* A server-side apply of the CRD's StorageMigrating condition (and storedVersions), with the
 * resourceVersion it was read at as precondition, forced, field manager
 * migration-runner-controller. */
static int apply_crd_status(struct svm_state *s, const cJSON *crd, const char *status,
                            const char *reason, const char *message, const char *stored)
{
	cJSON *o = cJSON_CreateObject(), *m, *st, *cs, *c;
	const char *name = meta_str(crd, "name"), *rv = meta_str(crd, "resourceVersion");
	char now[KUBE_TIME_BUF], *body = NULL;
	int r = -ENOMEM;

	now_str(now);
	if (!o || !name)
		goto out;
	if (!cJSON_AddStringToObject(o, "apiVersion", SVM_CRD_GROUP "/v1") ||
	    !cJSON_AddStringToObject(o, "kind", "CustomResourceDefinition") ||
	    !(m = cJSON_AddObjectToObject(o, "metadata")) ||
	    !cJSON_AddStringToObject(m, "name", name) ||
	    (rv && !cJSON_AddStringToObject(m, "resourceVersion", rv)) ||
	    !(st = cJSON_AddObjectToObject(o, "status")) ||
	    !(cs = cJSON_AddArrayToObject(st, "conditions")) || !(c = cJSON_CreateObject()))
		goto out;
	cJSON_AddItemToArray(cs, c);
	if (!cJSON_AddStringToObject(c, "type", "StorageMigrating") ||
	    !cJSON_AddStringToObject(c, "status", status) ||
	    !cJSON_AddStringToObject(c, "lastTransitionTime", now) ||
	    !cJSON_AddStringToObject(c, "reason", reason) ||
	    !cJSON_AddStringToObject(c, "message", message) ||
	    !cJSON_AddNumberToObject(c, "observedGeneration", (double)meta_int(crd, "generation")))
		goto out;
	if (stored) {
		cJSON *sv = cJSON_AddArrayToObject(st, "storedVersions");
		if (!sv)
			goto out;
		cJSON_AddItemToArray(sv, cJSON_CreateString(stored));
	}
	if (!(body = cJSON_PrintUnformatted(o)))
		goto out;
	r = call(s,
	         &(struct kube_request){.verb = KUBE_PATCH,
	                                .group = SVM_CRD_GROUP,
	                                .version = "v1",
	                                .resource = "customresourcedefinitions",
	                                .name = name,
	                                .subresource = "status",
	                                .body = body,
	                                .body_len = strlen(body),
	                                .patch_type = KUBE_PATCH_APPLY,
	                                .field_manager = SVM_RUNNER_NAME},
	         NULL, NULL, 0);
out:
	free(body);
	cJSON_Delete(o);
	return r;
}

/* retry.RetryOnConflict(retry.DefaultRetry): 5 attempts, 10 ms apart. */
#define CONFLICT_TRIES 5

static void short_sleep(void)
{
	struct timespec ts = {0, 10 * 1000 * 1000};
	nanosleep(&ts, NULL);
}

static int crd_mark_running(struct svm_state *s, const char *group, const char *resource,
                            const char *svm_name)
{
	char msg[600];
	int r = 0;

	snprintf(msg, sizeof(msg), "Migration %s is running", svm_name);
	for (int i = 0; i < CONFLICT_TRIES; i++) {
		cJSON *crd = get_crd(s, group, resource, &r);
		if (!crd)
			return r;
		r = apply_crd_status(s, crd, "True", "MigrationRunning", msg, NULL);
		cJSON_Delete(crd);
		if (r != -ESTALE)
			return r;
		short_sleep();
	}
	return r;
}

/* finishCRDMigration: the condition False; storedVersions reduced to the storage version when
 * the Running condition was set for the CRD's current generation. */
static int crd_finish(struct svm_state *s, const char *group, const char *resource, bool success)
{
	int r = 0;

	for (int i = 0; i < CONFLICT_TRIES; i++) {
		cJSON *crd = get_crd(s, group, resource, &r), *c, *v;
		const char *stored = NULL;
		bool can_update = false;
		char msg[200];

		if (!crd)
			return r == -ENOENT ? 0 : r;
		cJSON_ArrayForEach(
		        c, cJSON_GetObjectItemCaseSensitive(
		                   cJSON_GetObjectItemCaseSensitive(crd, "status"), "conditions"))
		{
			const char *t =
			        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "type"));
			const cJSON *og = cJSON_GetObjectItemCaseSensitive(c, "observedGeneration");
			if (t && !strcmp(t, "StorageMigrating")) {
				can_update = (cJSON_IsNumber(og) ? (int64_t)og->valuedouble : 0) ==
				             meta_int(crd, "generation");
				break;
			}
		}
		if (success)
			snprintf(msg, sizeof(msg), "The migration has succeeded%s",
			         can_update
			                 ? " and the stored versions have been updated"
			                 : " but the stored versions have not been updated due to "
			                   "a generation mismatch");
		else
			snprintf(msg, sizeof(msg), "The migration has failed");
		if (can_update)
			cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(
			                              cJSON_GetObjectItemCaseSensitive(crd, "spec"),
			                              "versions"))
			{
				if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "storage"))) {
					stored = cJSON_GetStringValue(
					        cJSON_GetObjectItemCaseSensitive(v, "name"));
					break;
				}
			}
		r = apply_crd_status(s, crd, "False",
		                     success ? "MigrationSucceeded" : "MigrationFailed", msg,
		                     stored);
		cJSON_Delete(crd);
		if (r != -ESTALE)
			return r;
		short_sleep();
	}
	return r;
}

static int runner_sync(struct svm_state *s, const char *key)
{
	char group[256], resource[256], now[KUBE_TIME_BUF];
	struct svm_list l = {.group = group, .resource = resource};
	bool *cleanup = NULL;
	long pick;
	int r;

	if (svm_gr_parse(key, group, resource, sizeof(group)) < 0)
		return 0; /* not a key this controller makes */
	r = kcmd_cache_list(s->ctx->arena, SVM_GROUP, SVM_RESOURCE, NULL, collect_svm, &l);
	if (r < 0 && r != -ENOENT)
		goto out;
	r = 0;
	if (l.n && !(cleanup = calloc(l.n, sizeof(*cleanup)))) {
		r = -ENOMEM;
		goto out;
	}
	pick = svm_runner_pick(l.v, l.n, cleanup);
	now_str(now);
	for (size_t i = 0; i < l.n; i++) {
		cJSON *svm = l.v[i];
		if (!cleanup[i])
			continue;
		/* cleanupAdmission */
		if (svm_set_condition(svm, SVM_COND_RUNNING, "False", SVM_REASON_COMPLETED,
		                      "Migration completed", now,
		                      meta_int(svm, "generation")) < 0) {
			r = -ENOMEM;
			goto out;
		}
		if ((r = crd_finish(s, group, resource, svm_cond_true(svm, SVM_COND_SUCCEEDED))) <
		    0)
			goto out;
		if ((r = put_status(s, svm)) < 0)
			goto out;
		kcmd_log_v(4, "migration %s of %s cleaned up", meta_str(svm, "name"), key);
	}
	if (pick >= 0) {
		cJSON *svm = l.v[pick];
		char msg[128];
		if ((r = crd_mark_running(s, group, resource, meta_str(svm, "name"))) < 0 &&
		    r != -ENOENT)
			goto out;
		svm_running_message(msg, sizeof(msg), NULL, NULL, NULL);
		if (svm_add_condition_once(svm, SVM_COND_RUNNING, SVM_REASON_RUNNING, msg, now) <
		    0) {
			r = -ENOMEM;
			goto out;
		}
		r = put_status(s, svm);
		if (r == 0)
			kcmd_log_v(4, "migration %s of %s is running", meta_str(svm, "name"), key);
	}
out:
	for (size_t i = 0; i < l.n; i++)
		cJSON_Delete(l.v[i]);
	free(l.v);
	free(cleanup);
	return r;
}

/* ---- the resource version controller ----------------------------------------------------- */
static int rv_fail(struct svm_state *s, cJSON *svm, const char *message)
{
	char now[KUBE_TIME_BUF];

	now_str(now);
	kcmd_log_error("migration %s failed: %s", meta_str(svm, "name"), message);
	if (svm_add_condition_once(svm, SVM_COND_FAILED, SVM_REASON_FAILED, message, now) < 0)
		return -ENOMEM;
	return put_status(s, svm);
}

static int64_t now_sec(void)
{
	return (int64_t)time(NULL);
}

/* upstream's one-minute grace for a resource its caches may not know yet: within it the key is
 * retried (-EAGAIN, logged at V2 with why); past it 1, and the caller fails the migration */
static int grace_or_fail(const cJSON *svm, const char *name, const char *why)
{
	if (!svm_within_grace(meta_str(svm, "creationTimestamp"), now_sec()))
		return 1;
	kcmd_log_v(2, "migration %s: %s, requeuing to attempt again", name, why);
	return -EAGAIN;
}

static int rv_sync(struct svm_state *s, const char *name)
{
	cJSON *svm = cached_svm(s, name), *list = NULL;
	struct svm_gvr g;
	char gvr[700], msg[1024];
	const char *rv, *bad = NULL;
	int r, cmp;

	if (!svm)
		return 0;
	if (!svm_cond_true(svm, SVM_COND_RUNNING) || svm_terminal(svm) || *status_rv(svm)) {
		r = 0;
		goto out;
	}
	if ((r = gvr_from(svm, &g)) < 0) {
		r = rv_fail(s, svm, "resource does not exist in discovery");
		goto out;
	}
	if ((r = resolve(s, &g)) < 0)
		goto out;
	if (r == 0) {
		if ((r = grace_or_fail(svm, name, "resource does not exist in our rest mapper")) ==
		    1)
			r = rv_fail(s, svm, "resource does not exist in discovery");
		goto out;
	}
	svm_gvr_string(gvr, sizeof(gvr), g.group, g.version, g.resource);
	if (!g.migratable) {
		snprintf(msg, sizeof(msg),
		         "resource \"%s\" does not support discovery operations: [update patch "
		         "list]",
		         gvr);
		r = rv_fail(s, svm, msg);
		goto out;
	}
	/* a namespaced resource is listed in a namespace that cannot exist: only its
	 * resourceVersion is wanted */
	r = call(s,
	         &(struct kube_request){.verb = KUBE_LIST,
	                                .group = g.group,
	                                .version = g.version,
	                                .resource = g.resource,
	                                .ns = g.namespaced ? SVM_FAKE_NS : NULL,
	                                .limit = 1,
	                                .metadata_only = true},
	         &list, msg, sizeof(msg));
	if (r < 0) {
		kcmd_log_error("error getting latest resourceVersion for %s: %s", gvr, msg);
		goto out;
	}
	rv = meta_str(list, "resourceVersion");
	if (svm_rv_compare(rv, rv, &cmp, &bad) < 0) {
		snprintf(msg, sizeof(msg),
		         "latest resourceVersion for %s is not valid: resource version is not well "
		         "formed: %s",
		         gvr, bad);
		r = rv_fail(s, svm, msg);
		goto out;
	}
	{
		cJSON *st = cJSON_GetObjectItemCaseSensitive(svm, "status");
		if (!cJSON_IsObject(st)) {
			cJSON_DeleteItemFromObjectCaseSensitive(svm, "status");
			st = cJSON_AddObjectToObject(svm, "status");
		}
		cJSON_DeleteItemFromObjectCaseSensitive(st, "resourceVersion");
		if (!st || !cJSON_AddStringToObject(st, "resourceVersion", rv)) {
			r = -ENOMEM;
			goto out;
		}
	}
	if ((r = put_status(s, svm)) < 0)
		kcmd_log_error("error updating status for %s: %s", name, strerror(-r));
	else
		kcmd_log_v(4, "Resource version has been successfully added svm=\"%s\" rv=%s", name,
		           rv);
out:
	cJSON_Delete(list);
	cJSON_Delete(svm);
	return r;
}

/* ---- the migration ----------------------------------------------------------------------- */
static int migrate_fail(struct svm_state *s, cJSON *svm, const char *err)
{
	char now[KUBE_TIME_BUF], msg[1200];
	int r;

	now_str(now);
	snprintf(msg, sizeof(msg), "migration encountered unhandled error: %s", err);
	kcmd_log_error("migration %s failed: %s", meta_str(svm, "name"), msg);
	r = svm_set_condition(svm, SVM_COND_FAILED, "True", SVM_REASON_FAILED, msg, now, -1);
	if (r <= 0)
		return r;
	return put_status(s, svm);
}

static int migrate_fail_counted(struct svm_state *s, cJSON *svm, const char *err, int to_patch,
                                int total)
{
	char now[KUBE_TIME_BUF], msg[1200], running[256];
	int a, b;

	now_str(now);
	snprintf(msg, sizeof(msg),
	         "%d/%d not yet migrated. migration encountered unhandled error: %s", to_patch,
	         total, err);
	kcmd_log_error("migration %s failed: %s", meta_str(svm, "name"), msg);
	svm_running_message(running, sizeof(running), &to_patch, &total, NULL);
	a = svm_set_condition(svm, SVM_COND_RUNNING, "True", SVM_REASON_RUNNING, running, now, -1);
	b = svm_set_condition(svm, SVM_COND_FAILED, "True", SVM_REASON_FAILED, msg, now, -1);
	if (a < 0 || b < 0)
		return -ENOMEM;
	if (!a && !b)
		return 0;
	return put_status(s, svm);
}

struct cand {
	char *ns, *name, *rv;
};

struct cand_list {
	const char *list_rv;
	struct cand *v;
	size_t n, cap;
	int total;
	const char *bad; /* a malformed resourceVersion met (static copy in bad_buf) */
	char bad_buf[128];
};

static int collect_obj(const struct shm_obj *o, void *userdata)
{
	struct cand_list *l = userdata;
	const char *rv = kcmd_obj_resource_version(o), *bad = NULL;
	int cmp;

	l->total++;
	if (svm_rv_compare(rv, l->list_rv, &cmp, &bad) < 0) {
		snprintf(l->bad_buf, sizeof(l->bad_buf), "%s", bad);
		l->bad = l->bad_buf;
		return -EINVAL;
	}
	if (cmp > 0)
		return 0; /* written after the migration's checkpoint: already in the new form */
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct cand *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n] =
	        (struct cand){strdup(kcmd_obj_namespace(o)), strdup(kcmd_obj_name(o)), strdup(rv)};
	if (!l->v[l->n].ns || !l->v[l->n].name || !l->v[l->n].rv)
		return -ENOMEM;
	l->n++;
	return 0;
}

static int run_migration(struct svm_state *s, cJSON *svm, const struct svm_gvr *g, int type,
                         const char *list_rv)
{
	struct cand_list l = {.list_rv = list_rv};
	char api_version[400], msg[1024], running[256], now[KUBE_TIME_BUF];
	int r, to_patch, a, b;

	r = shm_reader_list(s->ctx->arena, (uint16_t)type, collect_obj, &l);
	if (r == -EINVAL && l.bad) {
		char err[200];
		snprintf(err, sizeof(err), "resource version is not well formed: %s", l.bad);
		r = migrate_fail(s, svm, err);
		goto out;
	}
	if (r < 0)
		goto out;
	if (*g->group)
		snprintf(api_version, sizeof(api_version), "%s/%s", g->group, g->version);
	else
		snprintf(api_version, sizeof(api_version), "%s", g->version);
	to_patch = (int)l.n;
	for (size_t i = 0; i < l.n; i++) {
		char *body;
		if (skip_prefix && !strncmp(l.v[i].name, skip_prefix, strlen(skip_prefix))) {
			kcmd_log_warning("KCMD_TEST_SVM_SKIP_PREFIX: patch of %s/%s dropped",
			                 l.v[i].ns, l.v[i].name);
			to_patch--;
			continue;
		}
		body = svm_patch_body(api_version, g->kind, l.v[i].rv);
		if (!body) {
			r = migrate_fail_counted(s, svm, "out of memory", to_patch, l.total);
			goto out;
		}
		r = call(s,
		         &(struct kube_request){.verb = KUBE_PATCH,
		                                .group = g->group,
		                                .version = g->version,
		                                .resource = g->resource,
		                                .ns = *l.v[i].ns ? l.v[i].ns : NULL,
		                                .name = l.v[i].name,
		                                .body = body,
		                                .body_len = strlen(body),
		                                .patch_type = KUBE_PATCH_MERGE,
		                                .field_manager = SVM_CONTROLLER},
		         NULL, msg, sizeof(msg));
		free(body);
		/* changed since (already rewritten), or gone: nothing left to migrate */
		if (r == -ESTALE || r == -ENOENT) {
			kcmd_log_v(
			        6,
			        "Resource ignored due to conflict namespace=\"%s\" name=\"%s\": %s",
			        l.v[i].ns, l.v[i].name, msg);
			to_patch--;
			continue;
		}
		if (r < 0 && svm_retriable(r)) {
			now_str(now);
			svm_running_message(running, sizeof(running), &to_patch, &l.total, msg);
			if (svm_set_condition(svm, SVM_COND_RUNNING, "True", SVM_REASON_RUNNING,
			                      running, now, -1) > 0)
				(void)put_status(s, svm);
			goto out; /* retried by the queue */
		}
		if (r < 0) {
			kcmd_log_error(
			        "Failed to migrate the resource namespace=\"%s\" name=\"%s\": %s",
			        l.v[i].ns, l.v[i].name, msg);
			r = migrate_fail_counted(s, svm, msg, to_patch, l.total);
			goto out;
		}
		to_patch--;
		kcmd_log_v(4, "Successfully migrated the resource namespace=\"%s\" name=\"%s\"",
		           l.v[i].ns, l.v[i].name);
	}
	now_str(now);
	svm_running_message(running, sizeof(running), &to_patch, &l.total, NULL);
	a = svm_set_condition(svm, SVM_COND_RUNNING, "True", SVM_REASON_RUNNING, running, now, -1);
	b = svm_set_condition(svm, SVM_COND_SUCCEEDED, "True", SVM_REASON_SUCCEEDED,
	                      "Migration completed", now, -1);
	if (a < 0 || b < 0)
		r = -ENOMEM;
	else if (a || b)
		r = put_status(s, svm);
	else
		r = 0;
out:
	for (size_t i = 0; i < l.n; i++) {
		free(l.v[i].ns);
		free(l.v[i].name);
		free(l.v[i].rv);
	}
	free(l.v);
	return r;
}

static int migrate_sync(struct svm_state *s, const char *name)
{
	cJSON *svm = cached_svm(s, name);
	struct shm_type_info ti;
	struct svm_gvr g;
	const char *list_rv, *bad = NULL;
	char err[300];
	int r, type, cmp;

	if (!svm)
		return 0;
	list_rv = status_rv(svm);
	if (svm_terminal(svm) || !*list_rv) {
		r = 0;
		goto out;
	}
	if ((r = gvr_from(svm, &g)) < 0) {
		r = migrate_fail(s, svm, "unable to obtain GVR from discovery");
		goto out;
	}
	if ((r = resolve(s, &g)) < 0)
		goto out;
	if (r == 0) {
		if ((r = grace_or_fail(svm, name, "resource does not exist in rest mapper")) == 1)
			r = migrate_fail(s, svm, "unable to obtain GVR from discovery");
		goto out;
	}
	/* the GC's monitor of that resource: the arena's metadata records, synced */
	type = shm_reader_find_type(s->ctx->arena, g.group, g.version, g.resource);
	if (type < 0 || shm_reader_type_info(s->ctx->arena, (uint16_t)type, &ti) < 0 ||
	    !ti.synced) {
		/* upstream wraps a nil error here; its text is Go's rendering of that */
		if ((r = grace_or_fail(svm, name, "resource does not exist in GC")) == 1)
			r = migrate_fail(s, svm, "resource does not exist in GC: %!w(<nil>)");
		goto out;
	}
	if (svm_rv_compare(ti.rv, list_rv, &cmp, &bad) < 0) {
		snprintf(err, sizeof(err),
		         "error comparing resource versions between GC and SVM resource: resource "
		         "version is not well formed: %s",
		         bad);
		r = migrate_fail(s, svm, err);
		goto out;
	}
	if (cmp < 0) {
		kcmd_log_v(2,
		           "migration %s: GC cache is not up to date, requeuing to attempt again. "
		           "gcListResourceVersion: %s, listResourceVersion: %s",
		           name, ti.rv, list_rv);
		r = -EAGAIN;
		goto out;
	}
	r = run_migration(s, svm, &g, type, list_rv);
out:
	cJSON_Delete(svm);
	return r;
}

/* WaitForNamedCacheSync(storageversionmigrations) */
static bool caches_synced(struct shm_arena *a)
{
	static bool synced;

	if (synced)
		return true;
	if (kcmd_cache_synced(a, SVM_GROUP, SVM_RESOURCE) != 1)
		return false;
	synced = true;
	kcmd_log_info("Caches are synced for %s", SVM_CONTROLLER);
	return true;
}

static void svm_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct svm_state *s = state;
	int r;

	*res = (struct wk_result){0};
	if (!caches_synced(s->ctx->arena)) {
		res->requeue_after = true;
		res->after_usec = 100000;
		return;
	}
	switch (q) {
	case Q_RUNNER:
		r = runner_sync(s, key);
		break;
	case Q_RV:
		r = rv_sync(s, key);
		break;
	default:
		r = migrate_sync(s, key);
		break;
	}
	if (r < 0 && r != -EAGAIN)
		kcmd_log_v(2, "Error syncing SVM resource, retrying svm=\"%s\" queue=%s err=\"%s\"",
		           key, svm_queue_names[q],
		           kcmd_kube_reason(r) ? kcmd_kube_reason(r) : strerror(-r));
	res->err = r < 0 ? r : 0;
}

static const struct wk_controller svm_worker = {
        .name = SVM_CONTROLLER,
        .queues = svm_queue_names,
        .init = svm_init,
        .sync = svm_sync,
        .fini = svm_fini,
};

/* ---- the descriptor ----------------------------------------------------------------------- */
static const char *const svm_aliases[] = {"svm", NULL};
/* kcm: the controller is not started unless both are on */
static const char *const svm_gates[] = {"StorageVersionMigrator", "InformerResourceVersion", NULL};
static const struct kcmd_watch svm_watches[] = {
        {SVM_GROUP, SVM_VERSION, SVM_RESOURCE, "StorageVersionMigration", KCMD_CACHE_OBJECT, false},
};
static const struct kcmd_queue svm_queues[] = {
        {.name = SVM_Q_RUNNER}, {.name = SVM_Q_RV}, {.name = SVM_Q_MIGRATE}};

const struct kcmd_controller kcmd_svm_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = SVM_CONTROLLER,
        .aliases = svm_aliases,
        .enabled_by_default = true,
        .feature_gates = svm_gates,
        .service_account = SVM_CONTROLLER,
        .cluster_scoped_keys = true,
        .watches = svm_watches,
        .n_watches = 1,
        .watch_deletable = true,
        .queues = svm_queues,
        .n_queues = 3,
        .handlers = &svm_handlers,
        .worker = &svm_worker,
};
