/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/garbagecollector/controller.c: the garbage collector inside a kcmd-worker process.
 *
 * Design note.
 *   The graph builder runs in informerd (handlers.c); a GC worker process consumes the two
 *   queues it fills: gc-attempt-to-delete (queue index 0) and gc-attempt-to-orphan (1). Each
 *   key runs gc_attempt_to_delete_worker() or gc_attempt_to_orphan_worker() (worker.h) over
 *     - the graph view of the arena (arena-view.h), read-only;
 *     - the API over the process's blocking client (kube-api.h), with the REST mapping taken
 *       from aggregated discovery (GET /api and /apis, apidiscovery v2), refetched when older
 *       than 30 s at the next key (upstream resets its deferred mapper every sync period);
 *     - the merge-patch fallback reading the arena (gc_arena_get_cached);
 *     - two producer attachments: gc-attempt-to-delete for the plain Adds of
 *       processDeletingDependentsItem, gc-graph-changes for virtual delete events, which
 *       informerd (its owner and only worker) hands to the builder.
 *   The returned gc_queue_action maps to the worker result: GC_FORGET -> Forget, GC_REQUEUE ->
 *   AddRateLimited. Each process keeps its own absentOwnerCache (absent-cache.h).
 *   Start-up (GarbageCollector.Run): init returns, and so the process takes its first key,
 *   only once every deletable resource of its discovery has a synced informer in the arena, or
 *   after 30 s anyway (monitors_synced / wait_for_monitors).
 *
 *   The API client is the GC's own, as kube-controller-manager builds one for it: named
 *   generic-garbage-collector (User-Agent kcmd/<version> (<process>/generic-garbage-collector)),
 *   rate-limited at 2x --kube-api-qps with burst --kube-api-burst by one token bucket that all GC
 *   processes share (limiter.h, KCMD_GC_LIMITER_FD from the manager; a private bucket without
 *   it). The client itself has no limiter, so the shared bucket is the only one.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/childenv.h"
#include "ipc/queue.h"
#include "kube/discovery.h"
#include "kube/model.h"
#include "lib/log.h"
#include "workers/garbagecollector/arena-view.h"
#include "workers/garbagecollector/kube-api.h"
#include "kube/limiter.h"
#include "workers/garbagecollector/worker.h"
#include "workers/worker.h"

#include "lib/fence-env.h"
#include "lib/goflag.h"
#include "workers/cachewait.h"
#include "workers/garbagecollector/shard.h"

#define GC_DISCOVERY_PERIOD_USEC (30ULL * 1000000ULL)
/* GarbageCollector.Run's initialSyncTimeout (kube-controller-manager passes 30 s) */
#define GC_INITIAL_SYNC_TIMEOUT_USEC (30ULL * 1000000ULL)

struct gcc;

/* One extra worker thread: everything a sync touches that is not thread-safe is its own (the
 * arena reader mapping, the view, the absentOwnerCache, the client with its connection, the
 * queue attachment); discovery and the producers are the process's, under locks. */
struct gc_lane {
	struct gcc *c;
	struct shm_arena *arena;
	struct gc_arena_view view;
	struct gc_kube_api api;
	struct gc_absent_cache *absent;
	struct gc_worker w;
	struct kube_client *kc;
	struct ipc_queue *q; /* gc-attempt-to-delete, a worker slot of its own */
	pthread_t th;
	bool started;
};

static void start_lanes(struct gcc *c);
static uint64_t types_signature(struct shm_arena *a);
static void stop_lanes(struct gcc *c);

struct gcc {
	struct wk_ctx *ctx;
	struct gc_arena_view view;
	struct gc_kube_api api;
	struct gc_absent_cache *absent;
	struct gc_worker w;
	/* discovery: the two documents and one table over both (entries point into them) */
	struct kube_discovery *core, *apis, merged;
	uint64_t disc_at;
	struct ipc_queue *delete_producer, *changes_producer;
	struct kube_client *kc; /* generic-garbage-collector */
	struct kube_limiter *limiter;
	/* the lanes (GC_MAX_LANES): discovery is replaced under disc_lock's write side and read
	 * under its read side for a whole sync; the producers are used under prod_lock */
	pthread_rwlock_t disc_lock;
	_Atomic uint64_t disc_checked; /* refresh_discovery's last start, for the lanes */
	/* the arena's resource set (types_signature) when discovery was last fetched */
	_Atomic uint64_t disc_types;
	pthread_mutex_t prod_lock;
	struct gc_lane lanes[GC_MAX_LANES - 1];
	size_t n_lanes;
	atomic_bool stop;
	/* --shard-ranges (shard.h): the ranges this instance owns, read from the fence at each
	 * key; keys of other ranges are dropped before any API call */
	struct gc_shard shard;
	_Atomic uint64_t shard_skipped;
	/* the acquisition barrier (shard.h): keys wait after a range generation move until every
	 * type in the arena is synced at the epoch; the generation last logged as waiting */
	struct gc_shard_barrier barrier;
	_Atomic uint64_t barrier_logged;
};

static bool fence_range_owned(void *ud, unsigned range)
{
	(void)ud;
	return kcmd_shard_range_owned(range);
}

/* the barrier's check, over the lane's own arena mapping */
static bool arena_synced(void *ud)
{
	return wk_cachewait_arena_pending(ud, NULL, 0) == 0;
}

static const char *const gc_queues[] = {"gc-attempt-to-delete", "gc-attempt-to-orphan", NULL};

static int fetch_root(struct gcc *c, const char *path, struct kube_discovery **ret)
{
	struct kube_request req = {
	        .verb = KUBE_GET, .path = path, .accept = KUBE_ACCEPT_DISCOVERY_V2};
	struct kube_response resp = {0};
	int r = kube_client_request(c->kc, &req, NULL, NULL, &resp);

	if (r == 0)
		r = kube_decode_discovery_v2(resp.body, resp.body_len, ret);
	else
		log_warning("discovery %s: %s", path,
		            resp.error.message[0] ? resp.error.message : strerror(-r));
	kube_response_clear(&resp);
	return r;
}

/* Refetches discovery; on failure the previous table stays (a group that fails keeps its
 * mapping, as upstream keeps the monitors of failed groups). */
static void refresh_discovery(struct gcc *c)
{
	struct kube_discovery *core = NULL, *apis = NULL;
	struct kube_api_resource *res;

	c->disc_at = ipc_now_usec();
	if (fetch_root(c, "/api", &core) < 0 || fetch_root(c, "/apis", &apis) < 0) {
		kube_object_free(core);
		kube_object_free(apis);
		return;
	}
	res = calloc((size_t)core->n + apis->n + 1, sizeof(*res));
	if (!res) {
		kube_object_free(core);
		kube_object_free(apis);
		return;
	}
	memcpy(res, core->res, sizeof(*res) * core->n);
	memcpy(res + core->n, apis->res, sizeof(*res) * apis->n);
	free(c->merged.res);
	kube_object_free(c->core);
	kube_object_free(c->apis);
	c->core = core;
	c->apis = apis;
	c->merged = (struct kube_discovery){.n = core->n + apis->n, .res = res};
	log_v(3, "discovery: %u resources", c->merged.n);
}

/* GraphBuilder.IsSynced over kcmd's monitors: every deletable resource discovery lists has its
 * informer in the arena (informerd adds one per deletable resource) and that informer synced;
 * false while there are none. why names the first one that is not. */
static bool monitors_synced(struct gcc *c, char *why, size_t n)
{
	size_t seen = 0;

	if (!c->merged.n) {
		snprintf(why, n, "no discovery");
		return false;
	}
	for (uint32_t i = 0; i < c->merged.n; i++) {
		const struct kube_api_resource *r = &c->merged.res[i];
		struct shm_type_info ti;
		int t;

		if (!gc_resource_deletable(r))
			continue;
		t = shm_reader_find_type(c->ctx->arena, r->group, r->version, r->resource);
		if (t < 0 || shm_reader_type_info(c->ctx->arena, (uint16_t)t, &ti) < 0) {
			snprintf(why, n, "%s%s%s not watched yet", r->resource,
			         r->group[0] ? "." : "", r->group);
			return false;
		}
		if (!ti.synced) {
			snprintf(why, n, "%s%s%s not synced", r->resource, r->group[0] ? "." : "",
			         r->group);
			return false;
		}
		seen++;
	}
	if (!seen)
		snprintf(why, n, "no monitors");
	return seen > 0;
}

/* GarbageCollector.Run: workers start once the monitors synced, or after the initial sync
 * timeout anyway (PR #125796). Keys wait in the queues meanwhile (none is taken). SIGTERM
 * still ends the process here (its disposition is the default until the loop takes it). */
static void wait_for_monitors(struct gcc *c)
{
	uint64_t start = ipc_now_usec(), deadline = start + GC_INITIAL_SYNC_TIMEOUT_USEC;
	char why[256] = "";

	for (;;) {
		uint64_t now = ipc_now_usec();
		if (monitors_synced(c, why, sizeof(why))) {
			log_info("Garbage collector: all resource monitors have synced (%.3f s)",
			         (double)(now - start) / 1e6);
			return;
		}
		if (now >= deadline) {
			log_info("Garbage collector: not all resource monitors could be synced, "
			         "proceeding anyways (%s)",
			         why);
			return;
		}
		if (!c->merged.n && now - c->disc_at >= 1000000)
			refresh_discovery(c);
		struct timespec ts = {.tv_nsec = 100 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}

static void produce(struct gcc *c, struct ipc_queue *q, const char *name, const char *key)
{
	pthread_mutex_lock(&c->prod_lock);
	int r = q ? ipc_queue_add(q, key) : -ENOTCONN;
	pthread_mutex_unlock(&c->prod_lock);

	if (r < 0)
		log_warning("%s: cannot add %s: %s", name, key, strerror(-r));
}

static void on_virtual_delete(void *ud, const struct gc_ref *id)
{
	struct gcc *c = ud;
	char key[IPC_QUEUE_KEY_MAX + 1];

	if (gc_queue_key_encode(id, true, IPC_QUEUE_KEY_MAX, key, sizeof(key)) < 0) {
		log_warning("virtual delete event for %s: identity too long", id->uid);
		return;
	}
	produce(c, c->changes_producer, "gc-graph-changes", key);
}

static void on_attempt_to_delete(void *ud, const char *uid)
{
	struct gcc *c = ud;

	produce(c, c->delete_producer, "gc-attempt-to-delete", uid);
}

static struct ipc_queue *attach_producer(const char *name)
{
	struct ipc_queue *q = NULL;
	int fd = kcmd_env_queue_fd(name), r;

	if (fd < 0) {
		log_warning("queue %s not passed: %s", name,
		            strcmp(name, "gc-graph-changes") ? "Adds from the worker are lost"
		                                             : "virtual delete events are lost");
		return NULL;
	}
	r = ipc_queue_attach(&q, fd, IPC_QUEUE_PRODUCER, 1);
	if (r < 0) {
		log_warning("queue %s: cannot attach as a producer: %s", name, strerror(-r));
		return NULL;
	}
	return q;
}

static int gc_kube_client(struct gcc *c, struct kube_client **ret)
{
	struct kube_client_opts ko = {.config = c->ctx->config,
	                              .process = c->ctx->process,
	                              .controller = "generic-garbage-collector",
	                              .qps = 0, /* the shared bucket limits */
	                              .burst = c->ctx->burst >= 1 ? c->ctx->burst : 1,
	                              .insecure_ok = true,
	                              .content_type = c->ctx->content_type};
	return kube_client_new(&ko, ret);
}

/* upstream's startGarbageCollectorController: a client named generic-garbage-collector whose
 * QPS is doubled (each collected object costs two calls); burst unchanged. */
static int gc_client_new(struct gcc *c)
{
	const char *v = getenv("KCMD_GC_LIMITER_FD");
	double qps = c->ctx->qps > 0 ? 2 * c->ctx->qps : 0;
	int burst = c->ctx->burst >= 1 ? c->ctx->burst : 1, fd = -1, r;

	if (v && *v) {
		char *end;
		long l = strtol(v, &end, 10);
		fd = *end || l < 0 || l > 65535 ? -1 : (int)l;
	}
	r = kube_limiter_open(fd, qps, burst, &c->limiter);
	if (r < 0 && fd >= 0) {
		log_warning("KCMD_GC_LIMITER_FD: %s; using a bucket of this process only",
		            strerror(-r));
		r = kube_limiter_open(-1, qps, burst, &c->limiter);
	}
	if (r < 0)
		return r;
	if (!c->ctx->config) /* a test harness without a config: share the process's client */
		return -EINVAL;
	r = gc_kube_client(c, &c->kc);
	if (r < 0)
		return r;
	log_v(1, "API client %s: %g qps, burst %d, %s bucket", kube_user_agent(c->kc), qps, burst,
	      fd >= 0 ? "shared" : "private");
	return 0;
}

static void gcc_fini(void *state)
{
	struct gcc *c = state;

	if (!c)
		return;
	stop_lanes(c);
	ipc_queue_free(c->delete_producer);
	ipc_queue_free(c->changes_producer);
	gc_arena_view_release(&c->view);
	gc_absent_cache_free(c->absent);
	kube_client_free(c->kc);
	kube_limiter_free(c->limiter);
	free(c->merged.res);
	kube_object_free(c->core);
	kube_object_free(c->apis);
	pthread_rwlock_destroy(&c->disc_lock);
	pthread_mutex_destroy(&c->prod_lock);
	free(c);
}

static int gcc_init(struct wk_ctx *ctx, void **ret)
{
	struct gcc *c = calloc(1, sizeof(*c));
	int r;

	if (!c)
		return -ENOMEM;
	c->ctx = ctx;
	/* writer-preferring: lanes whose syncs overlap would otherwise hold the read side
	 * forever and starve the discovery refresh */
	pthread_rwlockattr_t ra;
	pthread_rwlockattr_init(&ra);
	pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&c->disc_lock, &ra);
	pthread_rwlockattr_destroy(&ra);
	pthread_mutex_init(&c->prod_lock, NULL);
	r = gc_absent_cache_new(GC_ABSENT_CACHE_SIZE, &c->absent);
	if (r < 0) {
		gcc_fini(c);
		return r;
	}
	r = gc_client_new(c);
	if (r < 0) {
		gcc_fini(c);
		return r;
	}
	gc_arena_view_init(&c->view, ctx->arena);
	gc_kube_api_init(&c->api, c->kc, &c->merged);
	c->api.limiter = c->limiter;
	c->api.virtual_delete = on_virtual_delete;
	c->api.attempt_to_delete = on_attempt_to_delete;
	c->api.ud = c;
	c->api.cache_get = gc_arena_get_cached;
	c->api.cache_put = gc_arena_put_cached;
	c->api.cache_ud = ctx->arena;
	c->delete_producer = attach_producer("gc-attempt-to-delete");
	c->changes_producer = attach_producer("gc-graph-changes");
	c->shard = (struct gc_shard){.nranges = kcmd_shard_ranges(), .owned = fence_range_owned};
	c->w = (struct gc_worker){.graph = &c->view.view,
	                          .api = &c->api.api,
	                          .absent = c->absent,
	                          .shard = &c->shard};
	atomic_store_explicit(&c->disc_types, types_signature(ctx->arena), memory_order_relaxed);
	refresh_discovery(c);
	wait_for_monitors(c);
	atomic_store_explicit(&c->disc_checked, c->disc_at, memory_order_relaxed);
	start_lanes(c);
	*ret = c;
	return 0;
}

/* The set of resources informerd caches, as one number: a registered type slot counts with its
 * generation (arena.h T2), so a resource added, dropped or followed to another version changes
 * it. A slot being written or retired reads as absent (at worst one refresh too many). */
static uint64_t types_signature(struct shm_arena *a)
{
	struct shm_stats st;
	uint64_t sig = 1469598103934665603ULL; /* FNV-1a over the slots */

	if (shm_reader_stats(a, &st) < 0)
		return 0;
	for (uint64_t t = 0; t < st.n_types; t++) {
		struct shm_type_info ti;
		uint64_t v = shm_reader_type_info(a, (uint16_t)t, &ti) == 0
		                     ? ((uint64_t)ti.gen << 16 | t) + 1
		                     : 0;
		sig = (sig ^ v) * 1099511628211ULL;
	}
	return sig ^ st.n_types;
}

/* One key on one lane (the framework's thread uses the gcc's own worker and api; each lane
 * reads the arena through its own mapping). */
static void sync_on(struct gcc *c, struct shm_arena *arena, struct gc_worker *w,
                    struct gc_kube_api *api, size_t q, const char *key, struct wk_result *res)
{
	struct gc_result gr;
	enum gc_queue_action a;

	*res = (struct wk_result){0};
	/* --shard-ranges, a range acquired (shard.h's barrier): no decision on a graph the range's
	 * relist has not filled yet; the key comes back, not dropped */
	uint64_t gen = c->shard.nranges ? kcmd_shard_gen() : 0;
	bool timed_out = false;
	if (c->shard.nranges && !gc_shard_barrier_open(&c->barrier, gen, ipc_now_usec(),
	                                               arena_synced, arena, &timed_out)) {
		char why[256];
		if (atomic_exchange_explicit(&c->barrier_logged, gen, memory_order_relaxed) !=
		    gen) {
			(void)wk_cachewait_arena_pending(arena, why, sizeof(why));
			log_info("shard: a range was acquired (generation %llu): keys wait until "
			         "every cache is synced at the epoch (%s)",
			         (unsigned long long)gen, why);
		}
		*res = (struct wk_result){.requeue_after = true,
		                          .after_usec = GC_SHARD_BARRIER_WAIT_USEC};
		return;
	}
	if (timed_out) {
		char why[256];
		(void)wk_cachewait_arena_pending(arena, why, sizeof(why));
		log_warning("shard: not every cache synced within %llu s of a range acquisition "
		            "(generation %llu), proceeding anyways (%s)",
		            GC_SHARD_BARRIER_TIMEOUT_USEC / 1000000ull, (unsigned long long)gen,
		            why);
	}
	uint64_t now = ipc_now_usec();
	/* Upstream resets its REST mapper in the same Sync that resyncs the monitors, so the
	 * mapping is never older than the monitor set. Here informerd runs the monitors: when its
	 * resource set changed since this process last fetched discovery, fetch again before
	 * judging a key (else an owner of a version informerd already dropped as unserved could
	 * still map, its GET answer 404, and the dependent be collected). */
	uint64_t types = types_signature(arena);
	if (now - atomic_load_explicit(&c->disc_checked, memory_order_relaxed) >=
	            GC_DISCOVERY_PERIOD_USEC ||
	    !c->merged.n || types != atomic_load_explicit(&c->disc_types, memory_order_relaxed)) {
		pthread_rwlock_wrlock(&c->disc_lock);
		/* another lane may have refreshed while this one waited; the signature is taken
		 * before the fetch, so a change during it is seen at the next key */
		types = types_signature(arena);
		if (ipc_now_usec() - c->disc_at >= GC_DISCOVERY_PERIOD_USEC || !c->merged.n ||
		    types != atomic_load_explicit(&c->disc_types, memory_order_relaxed)) {
			refresh_discovery(c);
			atomic_store_explicit(&c->disc_types, types, memory_order_relaxed);
		}
		atomic_store_explicit(&c->disc_checked, c->disc_at, memory_order_relaxed);
		pthread_rwlock_unlock(&c->disc_lock);
	}
	/* for logs: a virtual node's key with its separators shown as '/' */
	char shown[IPC_QUEUE_KEY_MAX + 1];
	snprintf(shown, sizeof(shown), "%s", key);
	for (char *p = shown; *p; p++)
		if (*p == GC_KEY_SEP)
			*p = '/';
	/* --shard-ranges: an item of a range another instance owns is its (not retried here) */
	if (c->shard.nranges && !gc_shard_takes_key(&c->shard, w->graph, q, key)) {
		atomic_fetch_add_explicit(&c->shard_skipped, 1, memory_order_relaxed);
		log_v(4, "shard: %s %s is not in a range this instance owns: skipped", gc_queues[q],
		      shown);
		return;
	}
	pthread_rwlock_rdlock(&c->disc_lock);
	memset(&gr, 0, sizeof(gr));
	if (q == 0)
		a = gc_attempt_to_delete_worker(w, key, &gr);
	else
		a = gc_attempt_to_orphan_worker(w, key, &gr);
	pthread_rwlock_unlock(&c->disc_lock);
	if (gr.outcome == GC_FAILED || gr.outcome == GC_REST_MAPPING)
		/* upstream keeps a restMappingError (an owner kind it cannot resolve: retried with
		 * backoff until discovery knows it) at V(5); other failures are loud */
		log_v(gr.outcome == GC_REST_MAPPING ? 5 : 1, "%s %s: %s%s%s", gc_queues[q], shown,
		      gr.msg, api->last_error[0] ? ": " : "", api->last_error);
	else
		log_v(3, "%s %s: outcome %d action %d%s%s", gc_queues[q], shown, (int)gr.outcome,
		      (int)gr.action, gr.policy ? " policy " : "", gr.policy ? gr.policy : "");
	api->last_error[0] = '\0';
	if (a == GC_REQUEUE && c->shard.nranges &&
	    (gr.err == -ENOLCK || !gc_shard_takes_key(&c->shard, w->graph, q, key))) {
		/* a write refused by a range's fence, or the item's range handed over while it
		 * synced: the owner of that range has the item in its own graph; not retried */
		atomic_fetch_add_explicit(&c->shard_skipped, 1, memory_order_relaxed);
		log_v(2, "shard: %s %s: left to the owner of its range (%s)", gc_queues[q], shown,
		      gr.err == -ENOLCK ? "write refused by the fence" : "range handed over");
		return;
	}
	if (a == GC_REQUEUE)
		res->err = gr.err < 0 ? gr.err : -EAGAIN;
	else if (a == GC_WAIT)
		*res = (struct wk_result){.requeue_after = true, .after_usec = GC_ORPHAN_WAIT_USEC};
}

static void gcc_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct gcc *c = state;
	sync_on(c, c->ctx->arena, &c->w, &c->api, q, key, res);
}

/* An extra lane: takes gc-attempt-to-delete keys until told to stop, as the framework's loop
 * does (workers/main.c: Forget, AddRateLimited, AddAfter folded into Done). */
static void *lane_main(void *arg)
{
	struct gc_lane *l = arg;
	struct gcc *c = l->c;
	char key[IPC_QUEUE_KEY_MAX + 1];

	while (!atomic_load_explicit(&c->stop, memory_order_relaxed)) {
		int n = ipc_queue_get(l->q, key, sizeof(key), 200 * 1000);
		if (n == -ETIMEDOUT || n == -EAGAIN)
			continue;
		if (n == -ESHUTDOWN)
			break;
		if (n < 0) {
			log_error("gc-attempt-to-delete (lane): %s", strerror(-n));
			struct timespec ts = {.tv_nsec = 100 * 1000 * 1000};
			nanosleep(&ts, NULL);
			continue;
		}
		struct wk_result res;
		sync_on(c, l->arena, &l->w, &l->api, 0, key, &res);
		if (res.err < 0)
			ipc_queue_done(l->q, IPC_QUEUE_DONE_RATE_LIMITED, 0);
		else if (res.requeue_after)
			ipc_queue_done(l->q, IPC_QUEUE_DONE_FORGET | IPC_QUEUE_DONE_AFTER,
			               res.after_usec);
		else
			ipc_queue_done(l->q, IPC_QUEUE_DONE_FORGET, 0);
	}
	return NULL;
}

static void lane_free(struct gc_lane *l)
{
	ipc_queue_free(l->q);
	gc_arena_view_release(&l->view);
	gc_absent_cache_free(l->absent);
	kube_client_free(l->kc);
	shm_arena_close(l->arena);
}

static int lane_init(struct gcc *c, struct gc_lane *l, int arena_fd, int queue_fd)
{
	int r;
	l->c = c;
	if ((r = shm_reader_open(arena_fd, &l->arena)) < 0 ||
	    (r = gc_absent_cache_new(GC_ABSENT_CACHE_SIZE, &l->absent)) < 0 ||
	    (r = gc_kube_client(c, &l->kc)) < 0 ||
	    (r = ipc_queue_attach(&l->q, queue_fd, IPC_QUEUE_WORKER, 1)) < 0)
		return r;
	gc_arena_view_init(&l->view, l->arena);
	gc_kube_api_init(&l->api, l->kc, &c->merged);
	l->api.limiter = c->limiter;
	l->api.virtual_delete = on_virtual_delete;
	l->api.attempt_to_delete = on_attempt_to_delete;
	l->api.ud = c;
	l->api.cache_get = gc_arena_get_cached;
	l->api.cache_ud = l->arena;
	l->w = (struct gc_worker){.graph = &l->view.view,
	                          .api = &l->api.api,
	                          .absent = l->absent,
	                          .shard = &c->shard};
	return 0;
}

/* Lanes beside the framework's one: ceil(--concurrent-gc-syncs / processes) - 1, capped. A
 * lane that cannot be set up is logged and left out (the process still syncs). */
static void start_lanes(struct gcc *c)
{
	int want = gc_lanes_per_process(
	        c->ctx->flags ? kcmd_flag_int(c->ctx->flags, "concurrent-gc-syncs") : 1);
	int afd = kcmd_env_fd("KCMD_ARENA_FD"), qfd = kcmd_env_queue_fd("gc-attempt-to-delete");

	for (int i = 0; i + 1 < want && afd >= 0 && qfd >= 0; i++) {
		struct gc_lane *l = &c->lanes[c->n_lanes];
		int r = lane_init(c, l, afd, qfd);
		if (r == 0 && (r = -pthread_create(&l->th, NULL, lane_main, l)) == 0) {
			l->started = true;
			c->n_lanes++;
			continue;
		}
		log_warning("garbage collector: lane %d not started: %s", i + 2, strerror(-r));
		lane_free(l);
		memset(l, 0, sizeof(*l));
		break;
	}
	log_v(1, "garbage collector: %zu key(s) of gc-attempt-to-delete in flight", c->n_lanes + 1);
}

/* Stops the lanes: each finishes its key (a request is bounded by the client's timeout). A
 * lane still in a request after 5 s is left running; its resources are then not freed (the
 * process is exiting). */
static void stop_lanes(struct gcc *c)
{
	struct timespec dl; /* one deadline for all of them */
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 5;
	atomic_store_explicit(&c->stop, true, memory_order_relaxed);
	for (size_t i = 0; i < c->n_lanes; i++) {
		struct gc_lane *l = &c->lanes[i];
		if (l->started && pthread_timedjoin_np(l->th, NULL, &dl) != 0) {
			log_warning("garbage collector: a lane is still in a request at exit");
			continue;
		}
		lane_free(l);
	}
	c->n_lanes = 0;
}

const struct wk_controller wk_gc_controller = {
        .name = "garbage-collector-controller",
        .queues = gc_queues,
        .init = gcc_init,
        .sync = gcc_sync,
        .fini = gcc_fini,
};
