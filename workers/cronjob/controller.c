/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/cronjob/controller.c: the CronJob controller's event handlers (run in its
 * kcmd-dispatcher) and its worker (kcmd-worker --controller=cronjob-controller): the cache
 * reads, the API calls and the Events around the sync of cronjob.c.
 *
 * Handlers, as upstream's ControllerV2 registers them:
 *   CronJob add/delete: queue its key; update: a changed schedule or timeZone queues the key
 *   for the next activation (an unparseable one queues nothing), anything else queues it now.
 *   Job add/update/delete: queue the CronJob its controller reference names (kind CronJob,
 *   that name in the Job's namespace, that uid in the cache); an update whose controller
 *   reference changed also queues the old one; an update with an unchanged resourceVersion is
 *   ignored.
 * Worker: the CronJob and every Job of its namespace whose controller reference has its name
 *   (getJobsToBeReconciled), read from the arena as full objects (KCMD_CACHE_OBJECT), then
 *   cj_sync; its result maps to Forget / AddRateLimited / AddAfter.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kcmd/cache.h"
#include "kcmd/client.h"
#include "kcmd/handlers.h"
#include "kcmd/log.h"
#include "kcmd/metrics.h"
#include "kcmd/worker.h"
#include "shm/record-model.h"
#include "workers/cronjob/controller.h"
#include "workers/cronjob/cronjob.h"

static int64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* A cached full object's JSON, parsed (NULL when it is not a full-object record). */
static cJSON *parse_obj(const struct shm_obj *o)
{
	struct shm_obj copy;
	struct shm_object_view v;
	cJSON *j = NULL;

	if (shm_obj_dup(o, &copy) < 0)
		return NULL;
	if (shm_object_view_init(&copy, &v) == 0 && v.o.raw)
		j = cJSON_ParseWithLength(v.o.raw, v.o.raw_len);
	shm_object_view_free(&v);
	shm_obj_release(&copy);
	return j;
}

/* ---- handlers (kcmd-dispatcher) -------------------------------------------------------------- */
static void enqueue(struct inf_handler_ctx *ctx, const char *ns, const char *name)
{
	char key[KCMD_KEY_MAX + 1];

	if (kcmd_key_make(key, sizeof(key), ns, name) > 0)
		kcmd_queue_add(ctx, 0, key);
}

/* resolveControllerRef + enqueueController */
static void enqueue_owner(struct inf_handler_ctx *ctx, const char *ns,
                          const struct kcmd_owner_ref *ref)
{
	struct shm_obj *cj = NULL;

	if (!ref->kind || strcmp(ref->kind, "CronJob") != 0 || !ref->name)
		return;
	if (kcmd_cache_get(ctx->arena, "batch", "cronjobs", ns, ref->name, &cj) < 0)
		return;
	if (ref->uid && !strcmp(kcmd_obj_uid(cj), ref->uid))
		enqueue(ctx, ns, ref->name);
	kcmd_obj_free(cj);
}

static bool meta_controller(const struct kube_object_meta *m, struct kcmd_owner_ref *ret)
{
	for (size_t i = 0; m && i < kcmd_meta_n_owners(m); i++)
		if (kcmd_meta_owner(m, i, ret) == 0 && ret->controller == 1)
			return true;
	return false;
}

static bool obj_controller(const struct shm_obj *o, struct kcmd_owner_ref *ret)
{
	for (size_t i = 0; o && i < kcmd_obj_n_owners(o); i++)
		if (kcmd_obj_owner(o, i, ret) == 0 && ret->controller == 1)
			return true;
	return false;
}

static bool str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static bool ref_equal(const struct kcmd_owner_ref *a, const struct kcmd_owner_ref *b)
{
	return str_eq(a->api_version, b->api_version) && str_eq(a->kind, b->kind) &&
	       str_eq(a->name, b->name) && str_eq(a->uid, b->uid) &&
	       a->controller == b->controller && a->block_owner_deletion == b->block_owner_deletion;
}

static void on_job_add(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	struct kcmd_owner_ref ref;

	/* a Job already being deleted is handled as a delete: the same owner lookup */
	if (meta_controller(ev->meta, &ref))
		enqueue_owner(ctx, kcmd_meta_namespace(ev->meta), &ref);
}

static void on_job_update(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	struct kcmd_owner_ref cur, old;
	bool has_cur, has_old;

	if (!ev->meta || !ev->old)
		return;
	if (!strcmp(kcmd_meta_resource_version(ev->meta), kcmd_obj_resource_version(ev->old)))
		return;
	has_cur = meta_controller(ev->meta, &cur);
	has_old = obj_controller(ev->old, &old);
	if (has_old && (!has_cur || !ref_equal(&cur, &old)))
		enqueue_owner(ctx, kcmd_obj_namespace(ev->old), &old);
	if (has_cur)
		enqueue_owner(ctx, kcmd_meta_namespace(ev->meta), &cur);
}

static void on_job_delete(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	struct kcmd_owner_ref ref;

	if (ev->old && obj_controller(ev->old, &ref))
		enqueue_owner(ctx, kcmd_obj_namespace(ev->old), &ref);
}

static void on_cronjob_add(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	enqueue(ctx, kcmd_meta_namespace(ev->meta), kcmd_meta_name(ev->meta));
}

static void on_cronjob_delete(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	const struct shm_obj *o = ev->old;

	if (ev->meta)
		enqueue(ctx, kcmd_meta_namespace(ev->meta), kcmd_meta_name(ev->meta));
	else if (o)
		enqueue(ctx, kcmd_obj_namespace(o), kcmd_obj_name(o));
}

/* updateCronJob: the old version is the event's, the new one the arena's (at least as new). */
static void on_cronjob_update(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	const char *ns = kcmd_meta_namespace(ev->meta), *name = kcmd_meta_name(ev->meta);
	struct shm_obj *cur_obj = NULL;
	cJSON *old = ev->old ? parse_obj(ev->old) : NULL, *cur = NULL;
	char key[KCMD_KEY_MAX + 1], err[256];
	int64_t after = 0;
	int d = 2;

	if (kcmd_cache_get(ctx->arena, "batch", "cronjobs", ns, name, &cur_obj) == 0)
		cur = parse_obj(cur_obj);
	if (old && cur)
		d = cj_update_decision(old, cur, now_us(), &after, err, sizeof(err));
	if (d == 0)
		kcmd_log_v(2, "unparseable schedule for cronjob %s/%s: %s", ns, name, err);
	else if (d == 1 && kcmd_key_make(key, sizeof(key), ns, name) > 0)
		kcmd_queue_add_after(ctx, 0, key, after > 0 ? (uint64_t)after : 0);
	else if (d != 0)
		enqueue(ctx, ns, name);
	cJSON_Delete(old);
	cJSON_Delete(cur);
	kcmd_obj_free(cur_obj);
}

static int add_cronjob(const struct shm_obj *o, void *ud)
{
	enqueue(ud, kcmd_obj_namespace(o), kcmd_obj_name(o));
	return 0;
}

static void resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	kcmd_cache_list(ctx->arena, "batch", "cronjobs", NULL, add_cronjob, ctx);
}

static const char *const cj_queue_names[] = {CJ_QUEUE, NULL};
static const struct inf_handler_entry cj_entries[] = {
        {.group = "batch",
         .resource = "cronjobs",
         .on_add = on_cronjob_add,
         .on_update = on_cronjob_update,
         .on_delete = on_cronjob_delete},
        {.group = "batch",
         .resource = "jobs",
         .on_add = on_job_add,
         .on_update = on_job_update,
         .on_delete = on_job_delete},
};
const struct inf_handler_table cj_handler_table = {
        .controller = CJ_CONTROLLER,
        .queues = cj_queue_names,
        .entries = cj_entries,
        .n_entries = sizeof(cj_entries) / sizeof(cj_entries[0]),
        .resync = resync,
};

/* ---- worker (kcmd-worker) -------------------------------------------------------------------- */
struct cj_worker {
	struct wk_ctx *ctx;
	struct kcmd_metrics *metrics; /* NULL without KCMD_METRICS_FD */
	/* test seams of e2e TestCronJob_CrashDuringSchedule, never set otherwise: a pause after
	 * each created Job before the status write (KCMD_TEST_CJ_CREATE_PAUSE_MS), so the test's
	 * kill -9 lands between the two; and a namespace whose Jobs are named uniquely per create
	 * (KCMD_TEST_CJ_UNGUARDED_NS), which takes away the deterministic name a replayed
	 * create collides with (the negative control: there a replay makes a second Job) */
	long create_pause_ms;
	const char *unguarded_ns;
};

static void status_message(int r, char *body, char *msg, size_t msglen)
{
	cJSON *st = body ? cJSON_Parse(body) : NULL;
	const char *m = cj_json_str(st, "message");

	if (msglen)
		snprintf(msg, msglen, "%s", m ? m : (kcmd_kube_reason(r) ?: strerror(-r)));
	cJSON_Delete(st);
}

static int api_get(struct wk_ctx *ctx, const char *resource, const char *ns, const char *name,
                   cJSON **ret)
{
	char *body = NULL;
	int r = kcmd_kube_request(ctx->kc,
	                          &(struct kcmd_request){.method = "GET",
	                                                 .group = "batch",
	                                                 .version = "v1",
	                                                 .resource = resource,
	                                                 .ns = ns,
	                                                 .name = name},
	                          NULL, &body);
	*ret = NULL;
	if (r == 0 && !(*ret = cJSON_Parse(body ? body : "")))
		r = -EBADMSG;
	free(body);
	return r;
}

static int op_get_cronjob(void *ud, const char *ns, const char *name, cJSON **ret)
{
	return api_get(((struct cj_worker *)ud)->ctx, "cronjobs", ns, name, ret);
}

static int op_get_job(void *ud, const char *ns, const char *name, cJSON **ret)
{
	return api_get(((struct cj_worker *)ud)->ctx, "jobs", ns, name, ret);
}

static int op_create_job(void *ud, const char *ns, const cJSON *job, cJSON **ret, char *msg,
                         size_t msglen)
{
	struct cj_worker *w = ud;
	struct wk_ctx *ctx = w->ctx;
	char *req = NULL, *body = NULL;
	int r;

	*ret = NULL;
	if (w->unguarded_ns && !strcmp(ns, w->unguarded_ns)) {
		cJSON *copy = cJSON_Duplicate(job, 1),
		      *meta = cJSON_GetObjectItem(copy, "metadata");
		const char *n = cj_json_str(copy, "metadata.name");
		char gen[300];
		snprintf(gen, sizeof(gen), "%s-", n ? n : "job");
		if (meta) {
			cJSON_DeleteItemFromObject(meta, "name");
			cJSON_AddStringToObject(meta, "generateName", gen);
		}
		req = copy ? cJSON_PrintUnformatted(copy) : NULL;
		cJSON_Delete(copy);
	} else {
		req = cJSON_PrintUnformatted(job);
	}
	if (!req)
		return -ENOMEM;
	r = kcmd_kube_request(ctx->kc,
	                      &(struct kcmd_request){.method = "POST",
	                                             .group = "batch",
	                                             .version = "v1",
	                                             .resource = "jobs",
	                                             .ns = ns,
	                                             .body = req,
	                                             .body_kind = "Job"},
	                      NULL, &body);
	if (r == 0 && !(*ret = cJSON_Parse(body ? body : "")))
		r = -EBADMSG;
	else if (r < 0)
		status_message(r, body, msg, msglen);
	if (r == 0) {
		/* the creation skew: the request's creationTimestamp is the scheduled time */
		int64_t scheduled, created;
		if (cj_json_time(job, "metadata.creationTimestamp", &scheduled) == 0 &&
		    cj_json_time(*ret, "metadata.creationTimestamp", &created) == 0)
			kcmd_metric_observe(((struct cj_worker *)ud)->metrics, CJ_M_SKEW, NULL,
			                    (double)(created - scheduled));
		if (w->create_pause_ms > 0) {
			struct timespec ts = {.tv_sec = w->create_pause_ms / 1000,
			                      .tv_nsec = (w->create_pause_ms % 1000) * 1000000};
			nanosleep(&ts, NULL);
		}
	}
	free(req);
	free(body);
	return r;
}

static int op_delete_job(void *ud, const char *ns, const char *name, char *msg, size_t msglen)
{
	struct wk_ctx *ctx = ((struct cj_worker *)ud)->ctx;
	char *body = NULL;
	int r = kcmd_kube_request(ctx->kc,
	                          &(struct kcmd_request){.method = "DELETE",
	                                                 .group = "batch",
	                                                 .version = "v1",
	                                                 .resource = "jobs",
	                                                 .ns = ns,
	                                                 .name = name,
	                                                 .propagation_policy = "Background"},
	                          NULL, &body);
	if (r < 0)
		status_message(r, body, msg, msglen);
	else
		kcmd_log_v(4, "deleted job %s/%s", ns, name);
	free(body);
	return r;
}

static int op_update_status(void *ud, const cJSON *cj, char *msg, size_t msglen)
{
	struct wk_ctx *ctx = ((struct cj_worker *)ud)->ctx;
	const char *ns = cj_json_str(cj, "metadata.namespace");
	const char *name = cj_json_str(cj, "metadata.name");
	cJSON *obj = cJSON_Duplicate(cj, true);
	char *req = NULL, *body = NULL;
	int r;

	/* a LIST's items come without apiVersion and kind: the object says what it is */
	if (obj && !cj_json_str(obj, "apiVersion"))
		cJSON_AddStringToObject(obj, "apiVersion", "batch/v1");
	if (obj && !cj_json_str(obj, "kind"))
		cJSON_AddStringToObject(obj, "kind", "CronJob");
	req = obj ? cJSON_PrintUnformatted(obj) : NULL;
	cJSON_Delete(obj);
	if (!req)
		return -ENOMEM;
	r = kcmd_kube_request(ctx->kc,
	                      &(struct kcmd_request){.method = "PUT",
	                                             .group = "batch",
	                                             .version = "v1",
	                                             .resource = "cronjobs",
	                                             .ns = ns,
	                                             .name = name,
	                                             .subresource = "status",
	                                             .body = req,
	                                             .body_kind = "CronJob"},
	                      NULL, &body);
	if (r < 0) {
		status_message(r, body, msg, msglen);
		kcmd_log_v(2, "unable to update status for cronjob %s/%s: %s", ns, name, msg);
	}
	free(req);
	free(body);
	return r;
}

static void op_event(void *ud, const cJSON *cj, const char *type, const char *reason,
                     const char *message)
{
	struct wk_ctx *ctx = ((struct cj_worker *)ud)->ctx;
	struct kcmd_object_ref ref = {.api_version = "batch/v1",
	                              .kind = "CronJob",
	                              .ns = cj_json_str(cj, "metadata.namespace"),
	                              .name = cj_json_str(cj, "metadata.name"),
	                              .uid = cj_json_str(cj, "metadata.uid")};
	int r = kcmd_event_record(ctx->kc, CJ_CONTROLLER, &ref, type, reason, "%s", message);

	kcmd_log_v(4, "event %s %s on cronjob %s/%s: %s", type, reason, ref.ns, ref.name, message);
	if (r < 0)
		kcmd_log_v(2, "event %s on cronjob %s/%s: %s", reason, ref.ns, ref.name,
		           strerror(-r));
}

static int cj_init(struct wk_ctx *ctx, void **ret_state)
{
	struct cj_worker *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->ctx = ctx;
	w->metrics = kcmd_metrics_get(); /* NULL without KCMD_METRICS_FD: not recorded */
	const char *v = getenv("KCMD_TEST_CJ_CREATE_PAUSE_MS");
	if (v && *v) {
		w->create_pause_ms = strtol(v, NULL, 10);
		kcmd_log_warning("KCMD_TEST_CJ_CREATE_PAUSE_MS=%ld: a pause after each Job create "
		                 "(a test seam)",
		                 w->create_pause_ms);
	}
	v = getenv("KCMD_TEST_CJ_UNGUARDED_NS");
	if (v && *v) {
		w->unguarded_ns = v;
		kcmd_log_warning("KCMD_TEST_CJ_UNGUARDED_NS=%s: Jobs there get a unique name per "
		                 "create (a test seam: a replayed create duplicates the Job)",
		                 v);
	}
	*ret_state = w;
	return 0;
}

static void cj_fini(void *state)
{
	struct cj_worker *w = state;

	free(w);
}

struct job_list {
	const char *cronjob;
	struct cj_job *jobs;
	size_t n, cap;
	int err;
};

static int visit_job(const struct shm_obj *o, void *ud)
{
	struct job_list *l = ud;
	struct kcmd_owner_ref ref;
	cJSON *j;

	/* getJobsToBeReconciled: a controller reference with the CronJob's name is all it takes */
	if (!obj_controller(o, &ref) || !ref.name || strcmp(ref.name, l->cronjob) != 0)
		return 0;
	if (!(j = parse_obj(o))) {
		l->err = -EBADMSG;
		return 0;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 8;
		struct cj_job *p = realloc(l->jobs, cap * sizeof(*p));
		if (!p) {
			cJSON_Delete(j);
			return -ENOMEM;
		}
		l->jobs = p;
		l->cap = cap;
	}
	if (cj_job_from_json(j, &l->jobs[l->n]) == 0)
		l->n++;
	cJSON_Delete(j);
	return 0;
}

static void cj_worker_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct cj_worker *w = state;
	struct wk_ctx *ctx = w->ctx;
	char ns[254], name[254];
	struct shm_obj *o = NULL;
	struct job_list jobs = {0};
	struct cj_result cr;
	const struct cj_ops ops = {.ud = w,
	                           .get_cronjob = op_get_cronjob,
	                           .get_job = op_get_job,
	                           .create_job = op_create_job,
	                           .delete_job = op_delete_job,
	                           .update_status = op_update_status,
	                           .event = op_event};
	cJSON *cj = NULL;
	int r;

	(void)q;
	*res = (struct wk_result){0};
	if (kcmd_key_split(key, ns, sizeof(ns), name, sizeof(name)) < 0)
		return; /* a key that cannot name a CronJob: nothing to retry */
	/* upstream's workers start once both informers have synced (WaitForNamedCacheSync) */
	if (kcmd_cache_synced(ctx->arena, "batch", "cronjobs") != 1 ||
	    kcmd_cache_synced(ctx->arena, "batch", "jobs") != 1) {
		res->err = -EAGAIN;
		return;
	}
	r = kcmd_cache_get(ctx->arena, "batch", "cronjobs", ns, name, &o);
	if (r == -ENOENT) {
		kcmd_log_v(4, "cronjob %s not found, may be it is deleted", key);
		return;
	}
	if (r < 0 || !(cj = parse_obj(o))) {
		res->err = r < 0 ? r : -EBADMSG;
		goto out;
	}
	jobs.cronjob = name;
	if ((r = kcmd_cache_list(ctx->arena, "batch", "jobs", ns, visit_job, &jobs)) < 0 &&
	    r != -ENOENT) {
		res->err = r;
		goto out;
	}
	if (jobs.err < 0) {
		res->err = jobs.err;
		goto out;
	}
	cj_sync(&ops, cj, jobs.jobs, jobs.n, now_us(), &cr);
	if (cr.err < 0) {
		kcmd_log_v(2, "error syncing cronjob %s, requeuing: %s", key,
		           kcmd_kube_reason(cr.err) ?: strerror(-cr.err));
		res->err = cr.err;
	} else if (cr.requeue_after) {
		kcmd_log_v(4, "re-queuing cronjob %s after %lld us", key, (long long)cr.after_us);
		res->requeue_after = true;
		res->after_usec = cr.after_us > 0 ? (uint64_t)cr.after_us : 0;
	}
out:
	free(jobs.jobs);
	cJSON_Delete(cj);
	kcmd_obj_free(o);
}

const struct wk_controller cj_worker = {
        .name = CJ_CONTROLLER,
        .queues = cj_queue_names,
        .init = cj_init,
        .sync = cj_worker_sync,
        .fini = cj_fini,
};
