/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/job/table.c: the Job controller's event handlers (kcmd/handlers.h), run in its
 * dispatcher: upstream's addJob/updateJob/deleteJob and addPod/updatePod/deletePod. Each maps
 * an event to the key "namespace/name" of the Job, and the pod handlers record the expectation
 * observations (creation seen, deletion seen) in the controller's shared expectations region
 * (workers/replicaset/expectations.h, a region of the Job controller's own).
 *
 * A pod event is counted only for the Job its controller reference names with the same uid (as
 * upstream's resolveControllerRef); the key is queued either way, so the sync can release the
 * finalizer of a pod whose Job is gone or was replaced. The Job of a pod event is queued after
 * upstream's syncJobBatchPeriod (1 s, enqueueSyncJobBatched), so a burst of pod changes is
 * handled in one sync; a key whose Job does not own the pod (upstream's orphan-pod queue) is
 * queued at once. An orphan pod (no controller reference) added, or updated with new labels or
 * a changed controller reference, queues (batched) every Job of its namespace whose selector
 * matches it (getPodJobs), whose sync adopts it.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcmd/cache.h"
#include "kcmd/handlers.h"
#include "kcmd/metrics.h"
#include "kube/model.h"
#include "lib/log.h"
#include "shm/arena.h"
#include "shm/record-model.h"
#include "workers/job/job.h"
#include "workers/job/table.h"
#include "workers/replicaset/expectations.h"

#define JOB_BATCH_PERIOD_US 1000000 /* syncJobBatchPeriod */

struct jt {
	struct rs_exp *exp, *fin; /* pod creations/deletions; finalizer removals */
	struct kcmd_metrics *met; /* NULL without KCMD_METRICS_FD */
};

static bool has_tracking(const struct kube_object_meta *m);

/* isFinishedPodWithTrackingFinalizer (terminated_pods_tracking_finalizer_total) */
static bool finished_tracking(const struct kube_pod *p)
{
	return p && (p->phase == KUBE_POD_SUCCEEDED || p->phase == KUBE_POD_FAILED) &&
	       has_tracking(&p->meta);
}

static bool has_tracking(const struct kube_object_meta *m)
{
	for (uint32_t i = 0; m && i < m->n_finalizers; i++)
		if (!strcmp(m->finalizers[i], JOB_TRACKING_FINALIZER))
			return true;
	return false;
}

static void add(struct inf_handler_ctx *ctx, const char *key, uint64_t after_us)
{
	int r = after_us ? kcmd_queue_add_after(ctx, 0, key, after_us)
	                 : kcmd_queue_add(ctx, 0, key);

	if (r < 0)
		log_error("job queue: adding %s failed: %s", key, strerror(-r));
}

static const struct kube_owner_ref *job_owner(const struct kube_object_meta *m)
{
	for (uint32_t i = 0; m && i < m->n_owner_refs; i++) {
		const struct kube_owner_ref *o = &m->owner_refs[i];
		if (o->controller == 1)
			return o->kind && !strcmp(o->kind, "Job") && o->api_version &&
			                       !strcmp(o->api_version, "batch/v1")
			               ? o
			               : NULL;
	}
	return NULL;
}

/* The Job key of the pod's controller reference into key; true when the cached Job of that
 * name has the reference's uid (the pod is that Job's). */
static bool owner_key(struct inf_handler_ctx *ctx, const struct kube_object_meta *m, char *key,
                      size_t len)
{
	const struct kube_owner_ref *o = job_owner(m);
	struct shm_obj *j = NULL;
	bool same;

	key[0] = 0;
	if (!o || !o->name || kcmd_key_make(key, len, m->namespace, o->name) < 0)
		return false;
	if (kcmd_cache_get(ctx->arena, "batch", "jobs", m->namespace, o->name, &j) < 0)
		return false;
	same = o->uid && !strcmp(kcmd_obj_uid(j), o->uid);
	kcmd_obj_free(j);
	return same;
}

/* gone: the pod left the apiserver (its finalizers were all removed, whatever the last state
 * the cache kept says); else it is being deleted (deletionTimestamp set). */
static void pod_deleted(struct inf_handler_ctx *ctx, const struct kube_object_meta *m, bool gone)
{
	struct jt *t = ctx->state;
	char key[KCMD_KEY_MAX + 1], pk[KCMD_KEY_MAX + 1];
	bool mine = owner_key(ctx, m, key, sizeof(key));

	if (!key[0])
		return;
	if (mine && kcmd_key_make(pk, sizeof(pk), m->namespace, m->name) >= 0) {
		rs_exp_deletion_observed(t->exp, key, pk);
		if (gone || !has_tracking(m))
			rs_exp_deletion_observed(t->fin, key, pk); /* its finalizer is gone too */
	}
	add(ctx, key, mine ? JOB_BATCH_PERIOD_US : 0);
}

static bool has_controller(const struct kube_object_meta *m)
{
	for (uint32_t i = 0; i < m->n_owner_refs; i++)
		if (m->owner_refs[i].controller == 1)
			return true;
	return false;
}

struct match_ud {
	struct inf_handler_ctx *ctx;
	const struct kube_object_meta *pod;
};

static int match_visit(const struct shm_obj *o, void *ud)
{
	struct match_ud *mu = ud;
	size_t len;
	const char *js = kcmd_obj_json(o, &len);
	cJSON *j = js ? cJSON_ParseWithLength(js, len) : NULL;
	cJSON *sel = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "spec"),
	                                              "selector");
	char key[KCMD_KEY_MAX + 1];

	if (j && job_selector_matches(sel, mu->pod->labels, mu->pod->n_labels) &&
	    kcmd_key_make(key, sizeof(key), kcmd_obj_namespace(o), kcmd_obj_name(o)) >= 0)
		add(mu->ctx, key, JOB_BATCH_PERIOD_US);
	cJSON_Delete(j);
	return 0;
}

/* getPodJobs: the Jobs of the orphan's namespace whose selector matches it (none for a pod
 * without labels), queued batched. */
static void queue_matching_jobs(struct inf_handler_ctx *ctx, const struct kube_object_meta *m)
{
	struct match_ud mu = {ctx, m};

	if (m->n_labels == 0 || !m->namespace)
		return;
	kcmd_cache_list(ctx->arena, "batch", "jobs", m->namespace, match_visit, &mu);
}

static void on_pod_add(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	const struct kube_pod *p = ev->obj;
	struct jt *t = ctx->state;
	char key[KCMD_KEY_MAX + 1];

	if (!p)
		return;
	job_metrics_terminated_fin(t->met, false, finished_tracking(p));
	if (p->meta.deletion_timestamp) {
		pod_deleted(ctx, &p->meta, false);
		return;
	}
	bool mine = owner_key(ctx, &p->meta, key, sizeof(key));
	if (mine)
		rs_exp_creation_observed(t->exp, key);
	if (key[0])
		add(ctx, key, mine ? JOB_BATCH_PERIOD_US : 0);
	else if (!has_controller(&p->meta))
		queue_matching_jobs(ctx, &p->meta);
}

static bool labels_equal(const struct kube_object_meta *a, const struct kube_object_meta *b)
{
	if (a->n_labels != b->n_labels)
		return false;
	for (uint32_t i = 0; i < a->n_labels; i++) {
		const char *v = kube_labels_get(b->labels, b->n_labels, a->labels[i].key);
		if (!v || strcmp(v, a->labels[i].value))
			return false;
	}
	return true;
}

static int old_pod(const struct shm_obj *o, struct shm_pod_view *ret)
{
	struct shm_obj copy;
	int r = shm_obj_dup(o, &copy);

	if (r < 0)
		return r;
	r = shm_pod_view_init(&copy, ret);
	if (r < 0)
		shm_pod_view_free(ret);
	return r;
}

static void on_pod_update(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	const struct kube_pod *p = ev->obj;
	struct shm_pod_view old;
	bool have_old;
	char key[KCMD_KEY_MAX + 1], okey[KCMD_KEY_MAX + 1];

	if (!p)
		return;
	have_old = ev->old && old_pod(ev->old, &old) == 0;
	if (have_old && old.pod.meta.resource_version && p->meta.resource_version &&
	    !strcmp(old.pod.meta.resource_version, p->meta.resource_version)) {
		shm_pod_view_free(&old); /* a resync: nothing changed */
		return;
	}
	if (have_old)
		job_metrics_terminated_fin(((struct jt *)ctx->state)->met,
		                           finished_tracking(&old.pod), finished_tracking(p));
	if (p->meta.deletion_timestamp) {
		pod_deleted(ctx, &p->meta, false);
	} else {
		bool mine = owner_key(ctx, &p->meta, key, sizeof(key));
		if (key[0])
			add(ctx, key, mine ? JOB_BATCH_PERIOD_US : 0);
		else if (!has_controller(&p->meta) && (!have_old || has_controller(&old.pod.meta) ||
		                                       !labels_equal(&old.pod.meta, &p->meta)))
			queue_matching_jobs(ctx, &p->meta); /* labels or controller changed */
	}
	if (have_old && has_tracking(&old.pod.meta) && !has_tracking(&p->meta)) {
		char pk[KCMD_KEY_MAX + 1];
		/* upstream's finalizerRemovalObserved */
		if (owner_key(ctx, &p->meta, key, sizeof(key)) &&
		    kcmd_key_make(pk, sizeof(pk), p->meta.namespace, p->meta.name) >= 0)
			rs_exp_deletion_observed(((struct jt *)ctx->state)->fin, key, pk);
	}
	if (have_old) {
		/* the controller reference changed: the old Job syncs too */
		bool omine = owner_key(ctx, &old.pod.meta, okey, sizeof(okey));
		owner_key(ctx, &p->meta, key, sizeof(key));
		if (okey[0] && strcmp(okey, key) != 0)
			add(ctx, okey, omine ? JOB_BATCH_PERIOD_US : 0);
		shm_pod_view_free(&old);
	}
}

static void on_pod_delete(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	struct shm_pod_view old;

	if (ev->obj) {
		pod_deleted(ctx, &((const struct kube_pod *)ev->obj)->meta, true);
	} else if (ev->old && old_pod(ev->old, &old) == 0) {
		job_metrics_terminated_fin(((struct jt *)ctx->state)->met,
		                           finished_tracking(&old.pod), false);
		pod_deleted(ctx, &old.pod.meta, true); /* the last known state */
		shm_pod_view_free(&old);
	}
}

static void job_key_add(struct inf_handler_ctx *ctx, const char *ns, const char *name)
{
	char key[KCMD_KEY_MAX + 1];

	if (kcmd_key_make(key, sizeof(key), ns, name) >= 0)
		add(ctx, key, 0);
}

static void on_job_update(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	if (ev->meta)
		job_key_add(ctx, kcmd_meta_namespace(ev->meta), kcmd_meta_name(ev->meta));
}

/* addJob: also jobs_by_external_controller_total for a spec.managedBy other than the Job
 * controller's */
static void on_job_add(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	struct jt *t = ctx->state;
	struct shm_obj *o = NULL;

	on_job_update(ctx, ev);
	if (!ev->meta || !t->met ||
	    kcmd_cache_get(ctx->arena, "batch", "jobs", kcmd_meta_namespace(ev->meta),
	                   kcmd_meta_name(ev->meta), &o) < 0)
		return;
	size_t len;
	const char *js = kcmd_obj_json(o, &len);
	cJSON *j = js ? cJSON_ParseWithLength(js, len) : NULL;
	cJSON *mb = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "spec"),
	                                             "managedBy");
	if (cJSON_IsString(mb) && strcmp(mb->valuestring, "kubernetes.io/job-controller") != 0)
		job_metrics_external(t->met, mb->valuestring);
	cJSON_Delete(j);
	kcmd_obj_free(o);
}

static void on_job_delete(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	struct jt *t = ctx->state;
	const char *ns = ev->meta  ? kcmd_meta_namespace(ev->meta)
	                 : ev->old ? kcmd_obj_namespace(ev->old)
	                           : NULL;
	const char *name = ev->meta  ? kcmd_meta_name(ev->meta)
	                   : ev->old ? kcmd_obj_name(ev->old)
	                             : NULL;
	char key[KCMD_KEY_MAX + 1];

	if (!name || kcmd_key_make(key, sizeof(key), ns, name) < 0)
		return;
	rs_exp_informer_delete(t->exp, key);
	rs_exp_informer_delete(t->fin, key);
	add(ctx, key, 0); /* its pods' finalizers are released by the sync */
}

static int jt_init(struct inf_handler_ctx *ctx)
{
	struct jt *t = calloc(1, sizeof(*t));
	const char *fdv = getenv("KCMD_EXPECTATIONS_FD");
	int r;

	if (!t)
		return -ENOMEM;
	if (!fdv || !*fdv) {
		free(t);
		return -EBADF;
	}
	r = rs_exp_attach((int)strtol(fdv, NULL, 10), RS_EXP_INFORMER, rs_exp_now(), &t->exp);
	if (r < 0) {
		free(t);
		return r;
	}
	fdv = getenv("KCMD_JOB_FINALIZER_EXPECTATIONS_FD");
	if (!fdv || !*fdv ||
	    (r = rs_exp_attach((int)strtol(fdv, NULL, 10), RS_EXP_INFORMER, rs_exp_now(),
	                       &t->fin)) < 0) {
		rs_exp_detach(t->exp);
		free(t);
		return fdv && *fdv ? r : -EBADF;
	}
	t->met = kcmd_metrics_get();
	ctx->state = t;
	return 0;
}

static void jt_fini(struct inf_handler_ctx *ctx)
{
	struct jt *t = ctx->state;

	if (t) {
		rs_exp_detach(t->exp);
		rs_exp_detach(t->fin);
		free(t);
	}
	ctx->state = NULL;
}

static int resync_visit(const struct shm_obj *o, void *ud)
{
	job_key_add(ud, kcmd_obj_namespace(o), kcmd_obj_name(o));
	return 0;
}

static void jt_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	kcmd_cache_list(ctx->arena, "batch", "jobs", NULL, resync_visit, ctx);
}

static const char *const jt_queues[] = {"job", NULL};
static const struct inf_handler_entry jt_entries[] = {
        {"batch", "jobs", on_job_add, on_job_update, on_job_delete},
        {"", "pods", on_pod_add, on_pod_update, on_pod_delete},
};

const struct inf_handler_table job_handler_table = {
        .controller = JOB_CONTROLLER,
        .queues = jt_queues,
        .entries = jt_entries,
        .n_entries = sizeof(jt_entries) / sizeof(jt_entries[0]),
        .init = jt_init,
        .fini = jt_fini,
        .resync = jt_resync,
};
