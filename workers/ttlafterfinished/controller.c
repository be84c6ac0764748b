/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/ttlafterfinished/controller.c: the TTL-after-finished controller (upstream
 * pkg/controller/ttlafterfinished) over kcmd's cache and queue.
 *
 * Handlers (kcmd-dispatcher): a Job added or updated that is not being deleted and needs cleanup
 * (a TTL and a Complete/Failed condition) has its key added to "ttl_jobs_to_delete"; deletes are
 * not handled (upstream registers add and update only). The event's metadata does not carry the
 * Job's spec and status, so the handler reads the Job's JSON from the arena (it holds at least
 * the event's version).
 *
 * Sync (kcmd-worker, --concurrent-ttl-after-finished-syncs processes): processJob. The cached
 * Job is checked (processTTL: not expired → AddAfter the remaining time); an expired one is read
 * again with an uncached GET, because the cached copy may be stale (its TTL changed, or it was
 * re-created), and checked again; if still expired it is deleted with foreground propagation and
 * a precondition on the fresh copy's uid, and the time since it expired is observed in
 * ttl_after_finished_controller_job_deletion_duration_seconds. A Job gone (404) is done; any
 * other error is retried with the queue's rate limit.
 *
 * Upstream also makes an Event recorder (component ttl-after-finished-controller) but records no
 * Event; kcmd records none either.
 */
#include "workers/ttlafterfinished/controller.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/queue.h"
#include "kcmd/metrics.h"
#include "kube/client.h"
#include "lib/log.h"
#include "shm/arena.h"
#include "shm/record-model.h"
#include "workers/ttlafterfinished/ttl.h"

/* The Job ns/name as the arena holds it, parsed. 0, -ENOENT, or -errno. */
static int cached_job(struct shm_arena *a, int type, const char *ns, const char *name,
                      struct ttl_job *ret)
{
	struct shm_obj o = SHM_OBJ_INIT;
	struct shm_object_view v;
	int r;

	if (type < 0)
		return -ENOENT;
	r = shm_reader_get(a, (uint16_t)type, ns, name, &o);
	if (r < 0)
		return r;
	r = shm_object_view_init(&o, &v);
	if (r == 0)
		r = ttl_job_parse(v.o.raw, v.o.raw_len, ret);
	shm_object_view_free(&v);
	return r;
}

/* "ns/name" (MetaNamespaceKeyFunc); -ENAMETOOLONG when it does not fit */
static int make_key(char *buf, size_t n, const char *ns, const char *name)
{
	int l = snprintf(buf, n, "%s%s%s", ns && *ns ? ns : "", ns && *ns ? "/" : "", name);
	return l < 0 || (size_t)l >= n ? -ENAMETOOLONG : l;
}

static void add_key(struct inf_handler_ctx *ctx, const char *key)
{
	int r = ipc_queue_owner_add(ctx->queues[0], key);

	if (r < 0)
		log_error("%s queue: adding %s failed: %s", TTL_QUEUE, key, strerror(-r));
}

/* ---- handlers ---------------------------------------------------------------------------------
 */
struct ttlh {
	int job_type;
};

static int job_type(struct inf_handler_ctx *ctx, struct ttlh *h)
{
	if (h->job_type < 0)
		h->job_type = shm_reader_find_type(ctx->arena, "batch", "v1", "jobs");
	return h->job_type;
}

/* addJob / updateJob: enqueue a Job that is not being deleted and needs cleanup. */
static void on_job(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	struct ttlh *h = ctx->state;
	struct ttl_job j;
	char key[KCMD_KEY_MAX + 1];

	if (!ev->meta || ev->meta->deletion_timestamp)
		return;
	const char *ns = ev->meta->namespace ? ev->meta->namespace : "";
	if (cached_job(ctx->arena, job_type(ctx, h), ns, ev->meta->name, &j) < 0)
		return; /* gone again already: its delete needs nothing from this controller */
	if (j.deleting || !ttl_needs_cleanup(&j))
		return;
	if (make_key(key, sizeof(key), ns, ev->meta->name) < 0)
		return;
	log_v(4, "Add job to cleanup: %s", key);
	add_key(ctx, key);
}

static int ttlh_init(struct inf_handler_ctx *ctx)
{
	struct ttlh *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	h->job_type = -1;
	ctx->state = h;
	return 0;
}

static void ttlh_fini(struct inf_handler_ctx *ctx)
{
	free(ctx->state);
	ctx->state = NULL;
}

struct resync_ctx {
	struct inf_handler_ctx *ctx;
};

static int resync_visit(const struct shm_obj *o, void *ud)
{
	struct resync_ctx *rc = ud;
	struct shm_obj copy = SHM_OBJ_INIT;
	struct shm_object_view v;
	struct ttl_job j;
	char key[KCMD_KEY_MAX + 1];

	if (shm_obj_dup(o, &copy) < 0)
		return 0;
	int r = shm_object_view_init(&copy, &v);
	if (r == 0)
		r = ttl_job_parse(v.o.raw, v.o.raw_len, &j);
	shm_object_view_free(&v);
	if (r == 0 && !j.deleting && ttl_needs_cleanup(&j) &&
	    make_key(key, sizeof(key), o->ns, o->name) >= 0)
		add_key(rc->ctx, key);
	return 0;
}

/* A (re)started queue owner or a dispatcher starting again from the arena: every cached Job
 * that needs cleanup gets a sync (as the informer's initial list adds them upstream). */
static void ttlh_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	struct ttlh *h = ctx->state;
	struct resync_ctx rc = {ctx};

	(void)queue;
	(void)restarted;
	if (job_type(ctx, h) >= 0)
		shm_reader_list(ctx->arena, (uint16_t)h->job_type, resync_visit, &rc);
}

static const char *const ttlh_queues[] = {TTL_QUEUE, NULL};
static const struct inf_handler_entry ttlh_entries[] = {
        {"batch", "jobs", on_job, on_job, NULL},
};

const struct inf_handler_table ttl_handler_table = {
        .controller = TTL_CONTROLLER,
        .queues = ttlh_queues,
        .entries = ttlh_entries,
        .n_entries = sizeof(ttlh_entries) / sizeof(ttlh_entries[0]),
        .init = ttlh_init,
        .fini = ttlh_fini,
        .resync = ttlh_resync,
};

/* ---- sync -------------------------------------------------------------------------------------
 */
struct ttlc {
	struct wk_ctx *ctx;
	struct kcmd_metrics *metrics; /* NULL when not passed (tests) */
	int job_type;
	bool synced;
};

static int ttlc_init(struct wk_ctx *ctx, void **ret)
{
	struct ttlc *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->ctx = ctx;
	c->job_type = -1;
	c->metrics = kcmd_metrics_get(); /* NULL without KCMD_METRICS_FD: not recorded */
	*ret = c;
	return 0;
}

static void ttlc_fini(void *state)
{
	struct ttlc *c = state;

	free(c);
}

/* processTTL on j at now: what the worker does next. The error text (malloc'd) on TTL_ERROR. */
static enum ttl_verdict process(const struct ttl_job *j, const char *key, kube_time_t now,
                                struct wk_result *out, kube_time_t *expired_at, char **err)
{
	int64_t after = 0;
	enum ttl_err e;
	bool future = false;
	int64_t left;
	kube_time_t exp;

	if (!j->deleting && ttl_time_left(j, now, &left, &exp, &future) == TTL_OK && future)
		log_warning("Found Job finished in the future. This is likely due to time skew in "
		            "the cluster. Job cleanup will be deferred: %s",
		            key);
	enum ttl_verdict v = ttl_process(j, now, &after, expired_at, &e);
	if (v == TTL_REQUEUE) {
		out->requeue_after = true;
		out->after_usec = (uint64_t)(after / 1000);
		log_v(4, "%s: TTL expires in %.3f s", key, (double)after / 1e9);
	} else if (v == TTL_ERROR) {
		*err = ttl_err_text(e, j);
	}
	return v;
}

static void ttlc_sync(void *state, size_t q, const char *key, struct wk_result *out)
{
	struct ttlc *c = state;
	char ns[254], name[254], *err = NULL;
	struct ttl_job j;
	kube_time_t expired_at = 0;
	int r;

	(void)q;
	memset(out, 0, sizeof(*out));
	const char *slash = strchr(key, '/');
	if (!slash || strchr(slash + 1, '/') || (size_t)(slash - key) >= sizeof(ns) ||
	    strlen(slash + 1) >= sizeof(name)) {
		log_error("invalid key %s: dropped", key); /* Jobs are namespaced */
		return;
	}
	memcpy(ns, key, (size_t)(slash - key));
	ns[slash - key] = 0;
	snprintf(name, sizeof(name), "%s", slash + 1);
	if (c->job_type < 0)
		c->job_type = shm_reader_find_type(c->ctx->arena, "batch", "v1", "jobs");
	if (!c->synced) {
		struct shm_type_info ti;
		if (c->job_type < 0 ||
		    shm_reader_type_info(c->ctx->arena, (uint16_t)c->job_type, &ti) < 0 ||
		    !ti.synced) {
			/* upstream's workers start once the Job informer synced */
			out->requeue_after = true;
			out->after_usec = 100000;
			return;
		}
		c->synced = true;
	}
	log_v(4, "Checking if Job is ready for cleanup: %s", key);
	r = cached_job(c->ctx->arena, c->job_type, ns, name, &j);
	if (r == -ENOENT)
		return;
	if (r < 0) {
		log_warning("Failed to clean up job, will retry: %s: reading the cache: %s", key,
		            strerror(-r));
		out->err = r;
		return;
	}
	enum ttl_verdict v = process(&j, key, kube_time_now(), out, &expired_at, &err);
	if (v != TTL_EXPIRED)
		goto done;

	/* the cached Job may be stale: read it again, uncached, and decide on that */
	struct kube_request get = {.verb = KUBE_GET,
	                           .group = "batch",
	                           .version = "v1",
	                           .resource = "jobs",
	                           .ns = ns,
	                           .name = name};
	struct kube_response resp;
	r = kube_client_request(c->ctx->kc, &get, NULL, NULL, &resp);
	if (r == -ENOENT) {
		kube_response_clear(&resp);
		return;
	}
	if (r == 0)
		r = ttl_job_parse(resp.body, resp.body_len, &j);
	if (r < 0 && !err &&
	    asprintf(&err, "%s", resp.error.message[0] ? resp.error.message : strerror(-r)) < 0)
		err = NULL;
	kube_response_clear(&resp);
	if (r < 0) {
		out->err = r;
		goto done;
	}
	memset(out, 0, sizeof(*out));
	v = process(&j, key, kube_time_now(), out, &expired_at, &err);
	if (v != TTL_EXPIRED)
		goto done;
	struct kube_request del = {.verb = KUBE_DELETE,
	                           .group = "batch",
	                           .version = "v1",
	                           .resource = "jobs",
	                           .ns = ns,
	                           .name = name,
	                           .propagation_policy = "Foreground",
	                           .precondition_uid = j.uid};
	log_v(4, "Cleaning up Job %s", key);
	r = kube_client_request(c->ctx->kc, &del, NULL, NULL, &resp);
	if (r < 0) {
		if (asprintf(&err, "%s",
		             resp.error.message[0] ? resp.error.message : strerror(-r)) < 0)
			err = NULL;
		out->err = r;
	} else {
		kcmd_metric_observe(c->metrics, TTL_M_DELETION, NULL,
		                    (double)(kube_time_now() - expired_at) / 1e9);
	}
	kube_response_clear(&resp);
done:
	if (v == TTL_ERROR)
		out->err = -EINVAL;
	if (out->err < 0)
		log_warning("Failed to clean up job, will retry: %s: %s", key,
		            err ? err : strerror(-out->err));
	free(err);
}

static const char *const ttlc_queues[] = {TTL_QUEUE, NULL};

const struct wk_controller wk_ttl_controller = {
        .name = TTL_CONTROLLER,
        .queues = ttlc_queues,
        .init = ttlc_init,
        .sync = ttlc_sync,
        .fini = ttlc_fini,
};
