/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/resourcequota/controller.c: the resource quota controller's handlers (run in its
 * kcmd-dispatcher) and its sync (run in its kcmd-worker processes). docs/resourcequota.md.
 *
 * Design note.
 *   Handlers (upstream's quota informer handlers and its quota monitor's replenishment):
 *   - a ResourceQuota added, or updated with a changed spec.hard, is queued (addQuota: on the
 *     priority queue when its status lacks spec.hard or a tracked usage, else the primary);
 *   - a tracked object (pods, services, PVCs, the counted kinds) deleted, a pod updated from
 *     charged to not charged (QuotaV1Pod: terminal phase, or past its deletion grace period), a
 *     Service whose quota type (NodePort / LoadBalancer / other) changed, or any PVC update
 *     (upstream compares two fresh *Quantity pointers, so every update replenishes), queues
 *     every quota of its namespace whose status.hard names a resource of that kind (primary
 *     queue); a kind outside the evaluator table is seen through the "*" entry (every
 *     deletable kind is watched, watch_deletable);
 *   - the table's resync queues every quota (through addQuota, as the informer's first list).
 *   Creation charges nothing here: the apiserver's quota admission raises status.used itself.
 *   The sync reads the quota from the cache and computes its new status (usage.c). Services,
 *   PVCs and the counted kinds are read from the cache; pods are listed from the apiserver,
 *   because the shared cache's pod record has no container resources (a whole-object pod
 *   watch would replace the typed record every other controller reads). After a sync the key
 *   comes back after --resource-quota-sync-period (upstream re-queues every quota each period).
 *   Rejected: a timer in the dispatcher re-queueing every quota each period (upstream's
 *   enqueueAll): AddAfter per key spreads the re-syncs over the period and needs no timer.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcmd/cache.h"
#include "kcmd/controller.h"
#include "kcmd/handlers.h"
#include "kcmd/worker.h"
#include "kube/client.h"
#include "kube/model.h"
#include "lib/log.h"
#include "shm/arena.h"
#include "shm/record-model.h"
#include "shm/records.h"
#include "workers/resourcequota/controller.h"
#include "workers/resourcequota/usage.h"

static cJSON *obj_json(const struct shm_obj *o)
{
	size_t len = 0;
	const char *j = o ? kcmd_obj_json(o, &len) : NULL;
	return j ? cJSON_ParseWithLength(j, len) : NULL;
}

/* ---- handlers -------------------------------------------------------------------------------- */
struct replenish_ud {
	struct inf_handler_ctx *ctx;
	const char *group, *resource; /* NULL: every quota */
};

static int replenish_visit(const struct shm_obj *o, void *p)
{
	struct replenish_ud *u = p;
	char key[KCMD_KEY_MAX + 1];
	cJSON *q = NULL;

	if (u->resource) {
		if (!(q = obj_json(o)))
			return 0;
		bool tracks = rq_quota_tracks(q, u->group, u->resource);
		cJSON_Delete(q);
		if (!tracks)
			return 0;
	}
	if (kcmd_key_make(key, sizeof(key), kcmd_obj_namespace(o), kcmd_obj_name(o)) > 0)
		kcmd_queue_add(u->ctx, 0, key);
	return 0;
}

static void replenish(struct inf_handler_ctx *ctx, const struct inf_event *ev, const char *ns)
{
	struct replenish_ud u = {ctx, ev->res->group, ev->res->resource};
	if (ns && *ns)
		kcmd_cache_list(ctx->arena, "", "resourcequotas", ns, replenish_visit, &u);
}

static const char *event_ns(const struct inf_event *ev)
{
	if (ev->meta)
		return kcmd_meta_namespace(ev->meta);
	return ev->old ? kcmd_obj_namespace(ev->old) : NULL;
}

static void on_quota(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	char key[KCMD_KEY_MAX + 1];

	if (!ev->meta)
		return;
	if (ev->kind == INF_EVENT_UPDATE && ev->old) {
		/* updateQuota: only a change of spec.hard */
		size_t len = 0;
		const char *j = kcmd_event_json(ev, &len);
		cJSON *n = j ? cJSON_ParseWithLength(j, len) : NULL, *o = obj_json(ev->old);
		struct rq_list a = {0}, b = {0};
		bool same = n && o &&
		            rq_list_from_json(
		                    cJSON_GetObjectItemCaseSensitive(
		                            cJSON_GetObjectItemCaseSensitive(o, "spec"), "hard"),
		                    &a) == 0 &&
		            rq_list_from_json(
		                    cJSON_GetObjectItemCaseSensitive(
		                            cJSON_GetObjectItemCaseSensitive(n, "spec"), "hard"),
		                    &b) == 0 &&
		            rq_list_equal(&a, &b);
		rq_list_free(&a);
		rq_list_free(&b);
		cJSON_Delete(n);
		cJSON_Delete(o);
		if (same)
			return;
	}
	if (kcmd_key_make(key, sizeof(key), kcmd_meta_namespace(ev->meta),
	                  kcmd_meta_name(ev->meta)) > 0)
		kcmd_queue_add(ctx, 0, key);
}

static void on_deleted(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	replenish(ctx, ev, event_ns(ev));
}

/* a delete of a kind the table has no evaluator for (its count is dynamic, rq_dynamic_count);
 * a type informerd stopped watching deleted nothing */
static void on_deleted_any(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	if (ev->dropped ||
	    rq_evaluator_for(ev->res->group ? ev->res->group : "", ev->res->resource))
		return;
	replenish(ctx, ev, event_ns(ev));
}

/* QuotaV1Pod over the typed pod record's fields */
static bool pod_charged(enum kube_pod_phase phase, const struct kube_object_meta *m,
                        kube_time_t now)
{
	if (phase == KUBE_POD_SUCCEEDED || phase == KUBE_POD_FAILED)
		return false;
	if (m->deletion_timestamp && m->has_deletion_grace_period_seconds &&
	    now > m->deletion_timestamp + m->deletion_grace_period_seconds * 1000000000LL)
		return false;
	return true;
}

static void on_pod_update(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	const struct kube_pod *cur = ev->obj;
	struct shm_obj copy = SHM_OBJ_INIT;
	struct shm_pod_view v;
	kube_time_t now = kube_time_now();

	if (!cur || !ev->old || shm_obj_dup(ev->old, &copy) < 0)
		return;
	if (shm_pod_view_init(&copy, &v) == 0 && pod_charged(v.pod.phase, &v.pod.meta, now) &&
	    !pod_charged(cur->phase, &cur->meta, now))
		replenish(ctx, ev, cur->meta.namespace);
	shm_pod_view_free(&v);
}

static const char *service_type(const cJSON *svc)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(svc, "spec"), "type");
	const char *s = cJSON_IsString(t) ? t->valuestring : "";
	return !strcmp(s, "NodePort") || !strcmp(s, "LoadBalancer") ? s : "";
}

static void on_service_update(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	size_t len = 0;
	const char *j = kcmd_event_json(ev, &len);
	cJSON *n = j ? cJSON_ParseWithLength(j, len) : NULL, *o = obj_json(ev->old);

	if (n && o && strcmp(service_type(n), service_type(o)))
		replenish(ctx, ev, event_ns(ev));
	cJSON_Delete(n);
	cJSON_Delete(o);
}

static void on_pvc_update(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	replenish(ctx, ev, event_ns(ev));
}

static void rqh_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	struct replenish_ud u = {ctx, NULL, NULL};
	(void)queue;
	(void)restarted;
	kcmd_cache_list(ctx->arena, "", "resourcequotas", NULL, replenish_visit, &u);
}

static const char *const rqh_queues[] = {RQ_QUEUE, NULL};
static const struct inf_handler_entry rqh_entries[] = {
        {"", "resourcequotas", on_quota, on_quota, NULL},
        {"", "pods", NULL, on_pod_update, on_deleted},
        {"", "services", NULL, on_service_update, on_deleted},
        {"", "persistentvolumeclaims", NULL, on_pvc_update, on_deleted},
        {"", "configmaps", NULL, NULL, on_deleted},
        {"", "secrets", NULL, NULL, on_deleted},
        {"", "replicationcontrollers", NULL, NULL, on_deleted},
        {"apps", "deployments", NULL, NULL, on_deleted},
        {"apps", "replicasets", NULL, NULL, on_deleted},
        {"apps", "statefulsets", NULL, NULL, on_deleted},
        {"apps", "daemonsets", NULL, NULL, on_deleted},
        {"batch", "jobs", NULL, NULL, on_deleted},
        {"batch", "cronjobs", NULL, NULL, on_deleted},
        {NULL, "*", NULL, NULL, on_deleted_any},
};

const struct inf_handler_table rq_handler_table = {
        .controller = RQ_CONTROLLER,
        .queues = rqh_queues,
        .entries = rqh_entries,
        .n_entries = sizeof(rqh_entries) / sizeof(rqh_entries[0]),
        .resync = rqh_resync,
};

/* ---- sync --------------------------------------------------------------------------------------
 */
/* how long workers wait for the counted kinds to be listed (and discovered) at start */
#define RQ_SYNC_WAIT (60LL * 1000000000LL)

struct rqw {
	struct wk_ctx *ctx;
	uint64_t period_usec;
	bool synced;
	kube_time_t start; /* the first sync attempt with the quotas listed */
};

struct cache_visit_ud {
	const struct rq_evaluator *ev;
	rq_visit_fn fn;
	void *fn_ud;
};

static int cache_visit(const struct shm_obj *o, void *p)
{
	struct cache_visit_ud *u = p;
	if (u->ev->kind == RQ_EVAL_COUNT)
		return u->fn(NULL, u->fn_ud);
	cJSON *j = obj_json(o);
	if (!j)
		return -EBADMSG;
	int r = u->fn(j, u->fn_ud);
	cJSON_Delete(j);
	return r;
}

/* every pod of ns, from the apiserver (pages of 500) */
static int list_pods(struct rqw *w, const char *ns, rq_visit_fn fn, void *fn_ud)
{
	char cont[4096] = "";
	int n = 0, r;

	do {
		struct kube_request req = {.verb = KUBE_LIST,
		                           .version = "v1",
		                           .resource = "pods",
		                           .ns = ns,
		                           .limit = 500,
		                           .cont = cont[0] ? cont : NULL};
		struct kube_response resp;
		r = kube_client_request(w->ctx->kc, &req, NULL, NULL, &resp);
		cJSON *list = r == 0 ? cJSON_ParseWithLength(resp.body, resp.body_len) : NULL;
		kube_response_clear(&resp);
		if (r < 0)
			return r;
		if (!list)
			return -EBADMSG;
		const cJSON *it,
		        *c = cJSON_GetObjectItemCaseSensitive(
		                cJSON_GetObjectItemCaseSensitive(list, "metadata"), "continue");
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(list, "items"))
		{
			if ((r = fn(it, fn_ud)) < 0) {
				cJSON_Delete(list);
				return r;
			}
			n++;
		}
		snprintf(cont, sizeof(cont), "%s",
		         cJSON_IsString(c) && c->valuestring ? c->valuestring : "");
		cJSON_Delete(list);
	} while (cont[0]);
	return n;
}

static int source_list(void *ud, const struct rq_evaluator *ev, const char *ns, rq_visit_fn fn,
                       void *fn_ud)
{
	struct rqw *w = ud;
	if (ev->kind == RQ_EVAL_PODS)
		return list_pods(w, ns, fn, fn_ud);
	/* a resource not (yet) listed is an evaluator error: its usage is left as it was */
	int synced = kcmd_cache_synced(w->ctx->arena, ev->group, ev->resource);
	/* a kind not in the cache is not served (no usage for it, no error), once informerd's
	 * discovery has had RQ_SYNC_WAIT to add it; before that it may just not be watched yet */
	if (synced == -ENOENT && ev->kind == RQ_EVAL_COUNT && !ev->alias)
		return kube_time_now() - w->start < RQ_SYNC_WAIT ? -EAGAIN : -ENOENT;
	if (synced != 1)
		return -EAGAIN;
	struct cache_visit_ud u = {ev, fn, fn_ud};
	return kcmd_cache_list(w->ctx->arena, ev->group, ev->resource, ns, cache_visit, &u);
}

static int rqw_init(struct wk_ctx *ctx, void **ret)
{
	struct rqw *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->ctx = ctx;
	w->period_usec =
	        ctx->flags ? kcmd_flag_duration_us(ctx->flags, "resource-quota-sync-period") : 0;
	if (!w->period_usec)
		w->period_usec = 300ULL * 1000000ULL;
	*ret = w;
	return 0;
}

static void rqw_fini(void *state)
{
	free(state);
}

/* upstream's workers start once every monitored informer synced. kcmd waits for the quotas,
 * and for the counted kinds at most RQ_SYNC_WAIT: one that never lists (not served by this
 * apiserver) then fails only its own evaluator (source_list), as upstream leaves a monitor that
 * cannot sync out of the usage. */
static bool caches_synced(struct rqw *w)
{
	if (w->synced)
		return true;
	if (kcmd_cache_synced(w->ctx->arena, "", "resourcequotas") != 1)
		return false;
	if (!w->start)
		w->start = kube_time_now();
	for (size_t e = 0; e < rq_n_evaluators && kube_time_now() - w->start < RQ_SYNC_WAIT; e++) {
		const struct rq_evaluator *ev = &rq_evaluators[e];
		if (kcmd_cache_synced(w->ctx->arena, ev->group, ev->resource) != 1)
			return false;
	}
	return w->synced = true;
}

static int update_status(struct rqw *w, const char *ns, const char *name, cJSON *quota,
                         cJSON *status)
{
	struct kube_response resp;
	char *body;
	int r;

	cJSON_DeleteItemFromObjectCaseSensitive(quota, "status");
	cJSON_AddItemToObject(quota, "status", status);
	if (!(body = cJSON_PrintUnformatted(quota)))
		return -ENOMEM;
	struct kube_request req = {.verb = KUBE_UPDATE,
	                           .version = "v1",
	                           .resource = "resourcequotas",
	                           .ns = ns,
	                           .name = name,
	                           .subresource = "status",
	                           .body = body,
	                           .body_len = strlen(body),
	                           .body_kind = "ResourceQuota"};
	r = kube_client_request(w->ctx->kc, &req, NULL, NULL, &resp);
	kube_response_clear(&resp);
	free(body);
	return r;
}

static void rqw_sync(void *state, size_t q, const char *key, struct wk_result *out)
{
	struct rqw *w = state;
	char ns[254], name[254];
	struct shm_obj *o = NULL;
	struct rq_sync_out so = {0};
	cJSON *quota = NULL;
	int r;

	(void)q;
	memset(out, 0, sizeof(*out));
	if (kcmd_key_split(key, ns, sizeof(ns), name, sizeof(name)) < 0) {
		log_error("invalid key %s: dropped", key);
		return;
	}
	if (!caches_synced(w)) {
		out->requeue_after = true;
		out->after_usec = 100000;
		return;
	}
	r = kcmd_cache_get(w->ctx->arena, "", "resourcequotas", ns, name, &o);
	if (r == -ENOENT) {
		log_v(4, "resource quota %s has been deleted", key);
		return;
	}
	if (r < 0) {
		out->err = r;
		goto done;
	}
	if (!(quota = obj_json(o))) {
		log_error("resource quota %s: unreadable cached object, dropped", key);
		goto done;
	}
	struct rq_source src = {.list = source_list, .ud = w};
	r = rq_sync_status(quota, &src, kube_time_now(), &so);
	if (r == -EINVAL) {
		log_error("resource quota %s: %s (not a quota this controller can read), dropped",
		          key, strerror(-r));
		goto done;
	}
	if (r < 0) {
		out->err = r;
		goto done;
	}
	if (so.dirty) {
		r = update_status(w, ns, name, quota, so.status);
		so.status = NULL; /* now owned by quota */
		if (r == -ENOENT)
			goto done;
		if (r < 0) {
			out->err = r;
			goto done;
		}
	}
	if (so.calc_err < 0) {
		out->err = so.calc_err;
		goto done;
	}
	out->requeue_after = true;
	out->after_usec = w->period_usec;
done:
	if (out->err < 0)
		log_warning("Error syncing resource quota %s: %s, requeuing", key,
		            strerror(-out->err));
	cJSON_Delete(so.status);
	cJSON_Delete(quota);
	kcmd_obj_free(o);
}

static const char *const rqw_queues[] = {RQ_QUEUE, NULL};

const struct wk_controller wk_rq_controller = {
        .name = RQ_CONTROLLER,
        .queues = rqw_queues,
        .init = rqw_init,
        .sync = rqw_sync,
        .fini = rqw_fini,
};
