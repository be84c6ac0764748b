/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/tainteviction/plugin.c: kcm's taint-eviction-controller (no alias), on by default
 * (its gate SeparateTaintEvictionController is GA and locked on), client "node-controller"
 * (upstream reuses the node controller's role). docs/taint-eviction.md.
 *
 * Shape.
 *   Nodes are cached whole (their taints are read from the JSON; the ttl controller caches them
 *   so too), Pods typed (nodeName, generation; the typed record has no tolerations, so the
 *   worker reads those from the apiserver, and only for pods on a node with a NoExecute taint).
 *   The dispatcher queues a node on its add and on a change of its NoExecute taints
 *   (noexec_taint_node), a pod on its add, on a change of nodeName or generation (a change of
 *   its tolerations changes its spec, hence its generation) and on its delete
 *   (noexec_taint_pod). One worker process holds upstream's timed-worker table: the pending
 *   evictions by pod key (taint.h, te_schedule); a pending eviction's timer is a requeue-after
 *   of the key whose sync scheduled it (the pod's, or the node's at the earliest pending time on
 *   the node), and every sync decides again from the cache and the apiserver, so an early or
 *   stale wake-up (a duplicate, a cancelled eviction) does nothing and a due one evicts.
 *   The table is written through to a store the manager holds (store.h, KCMD_TE_FD): a worker
 *   that crashes is followed by one that reads the pending evictions back, and the keys the
 *   dead one had requeued are still in the queue, so each eviction keeps its time. A dispatcher
 *   restart queues every node again; the table is kept.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "kcmd/kcmd.h"
#include "kube/client.h"
#include "shm/record-model.h"
#include "shm/records.h"
#include "workers/tainteviction/store.h"
#include "workers/tainteviction/taint.h"
#include "workers/worker.h"

enum { TE_Q_NODE, TE_Q_POD };
enum { TE_M_DELETIONS, TE_M_LATENCY, TE_M_N };

static const double te_buckets[] = {0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 30, 60, 120, 180, 240};
static const struct kcmd_metric te_metrics[TE_M_N] = {
        [TE_M_DELETIONS] = {.name = "taint_eviction_controller_pod_deletions_total",
                            .help = "Total number of Pods deleted by TaintEvictionController "
                                    "since its start.",
                            .type = KCMD_METRIC_COUNTER,
                            .stability = KCMD_METRIC_ALPHA},
        [TE_M_LATENCY] = {.name = "taint_eviction_controller_pod_deletion_duration_seconds",
                          .help = "Latency, in seconds, between the time when a taint effect "
                                  "has been activated for the Pod and its deletion via "
                                  "TaintEvictionController.",
                          .type = KCMD_METRIC_HISTOGRAM,
                          .stability = KCMD_METRIC_ALPHA,
                          .buckets = te_buckets,
                          .n_buckets = sizeof(te_buckets) / sizeof(te_buckets[0])},
};

/* ---- handlers (kcmd-dispatcher) ----------------------------------------------------------- */

static void node_add(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	if (ev->meta)
		kcmd_queue_add(ctx, TE_Q_NODE, kcmd_meta_name(ev->meta));
}

/* NodeUpdated: queued when the NoExecute taints differ (unreadable JSON: queued) */
static void node_update(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	struct te_taints a = {0}, b = {0};
	size_t la = 0, lb = 0;
	const char *ja = ev->old ? kcmd_obj_json(ev->old, &la) : NULL;
	const char *jb = kcmd_event_json(ev, &lb);
	bool same = ja && jb && te_node_noexec_taints(ja, la, &a) == 0 &&
	            te_node_noexec_taints(jb, lb, &b) == 0 && te_taints_equal(&a, &b);

	te_taints_free(&a);
	te_taints_free(&b);
	if (!same && ev->meta)
		kcmd_queue_add(ctx, TE_Q_NODE, kcmd_meta_name(ev->meta));
}

static void add_pod_key(struct inf_handler_ctx *ctx, const char *ns, const char *name)
{
	char key[KCMD_KEY_MAX + 1];
	if (kcmd_key_make(key, sizeof(key), ns, name) > 0)
		kcmd_queue_add(ctx, TE_Q_POD, key);
}

static void pod_add(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	const struct kube_pod *p = ev->obj;
	if (p && p->node_name && *p->node_name)
		add_pod_key(ctx, p->meta.namespace, p->meta.name);
}

/* PodUpdated: queued when nodeName or the tolerations change; the typed record keeps no
 * tolerations, a change of them is a spec change, which bumps metadata.generation */
static void pod_update(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	const struct kube_pod *p = ev->obj;
	struct shm_obj copy = {0};
	struct shm_pod_view old;
	bool changed = true;

	if (!p)
		return;
	if (ev->old && shm_obj_clone(ev->old, &copy) == 0) {
		if (shm_pod_view_init(&copy, &old) == 0)
			changed = strcmp(old.pod.node_name ? old.pod.node_name : "",
			                 p->node_name ? p->node_name : "") ||
			          old.pod.meta.generation != p->meta.generation;
		shm_pod_view_free(&old);
	}
	if (changed)
		add_pod_key(ctx, p->meta.namespace, p->meta.name);
}

static void pod_delete(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	if (ev->meta)
		add_pod_key(ctx, kcmd_meta_namespace(ev->meta), kcmd_meta_name(ev->meta));
	else if (ev->old)
		add_pod_key(ctx, kcmd_obj_namespace(ev->old), kcmd_obj_name(ev->old));
}

static int add_node(const struct shm_obj *o, void *ud)
{
	kcmd_queue_add(ud, TE_Q_NODE, kcmd_obj_name(o));
	return 0;
}

/* (re)start from the arena: every node (its sync covers the pods on it) */
static void te_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)restarted;
	if (queue == TE_Q_NODE)
		kcmd_cache_list(ctx->arena, "", "nodes", NULL, add_node, ctx);
}

static const char *const te_queue_names[] = {TE_NODE_QUEUE, TE_POD_QUEUE, NULL};
static const struct inf_handler_entry te_entries[] = {
        {.group = "", .resource = "nodes", .on_add = node_add, .on_update = node_update},
        {.group = "",
         .resource = "pods",
         .on_add = pod_add,
         .on_update = pod_update,
         .on_delete = pod_delete},
};
static const struct inf_handler_table te_handlers = {
        .controller = TE_CONTROLLER,
        .queues = te_queue_names,
        .entries = te_entries,
        .n_entries = sizeof(te_entries) / sizeof(te_entries[0]),
        .resync = te_resync,
};

/* ---- sync (kcmd-worker) ------------------------------------------------------------------- */
struct te_worker {
	struct wk_ctx *ctx;
	struct te_schedule *sched;
	struct kcmd_metrics *met;
	struct te_store *store; /* the table's durable copy (store.h), or NULL */
	bool full_logged;
};

/* the table and its durable copy, changed together */
static bool sched_drop(struct te_worker *w, const char *key)
{
	const struct te_sched *cur = te_schedule_get(w->sched, key);
	if (cur)
		te_store_del(w->store, cur->slot);
	return te_schedule_del(w->sched, key);
}

static int sched_put(struct te_worker *w, const char *key, const char *node, struct te_sched *v)
{
	const struct te_sched *cur = te_schedule_get(w->sched, key);
	int r;

	if (cur && cur->slot == v->slot && cur->created_at == v->created_at &&
	    cur->fire_at == v->fire_at)
		return 0; /* kept as it is */
	if (w->store && (r = te_store_put(w->store, key, node, v)) < 0 && !w->full_logged) {
		w->full_logged = true;
		kcmd_log_error(
		        "pending eviction of pod %s kept in process memory only (lost if the "
		        "worker dies): %s",
		        key, strerror(-r));
	}
	return te_schedule_put(w->sched, key, node, v);
}

static int restore(const char *key, const char *node, const struct te_sched *v, void *ud)
{
	struct te_worker *w = ud;
	return te_schedule_put(w->sched, key, node, v);
}

static int store_fd(void)
{
	const char *v = getenv("KCMD_TE_FD");
	char *end;
	long l;

	if (!v || !*v)
		return -1;
	l = strtol(v, &end, 10);
	return *end || l < 0 || l > 65535 ? -1 : (int)l;
}

static int64_t now_usec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int te_init(struct wk_ctx *ctx, void **ret_state)
{
	struct te_worker *w = calloc(1, sizeof(*w));
	int r;

	if (!w)
		return -ENOMEM;
	if ((r = te_schedule_new(&w->sched)) < 0) {
		free(w);
		return r;
	}
	w->ctx = ctx;
	w->met = kcmd_metrics_get();
	int fd = store_fd();
	if (fd < 0)
		kcmd_log_warning(
		        "KCMD_TE_FD not passed: pending evictions live in process memory only");
	else if ((r = te_store_attach(fd, restore, w, &w->store)) < 0)
		kcmd_log_error("KCMD_TE_FD: %s: pending evictions live in process memory only",
		               strerror(-r));
	else if (te_schedule_len(w->sched))
		kcmd_log_info("restored %zu pending evictions from the previous worker",
		              te_schedule_len(w->sched));
	*ret_state = w;
	return 0;
}

static void te_fini(void *state)
{
	struct te_worker *w = state;
	if (w) {
		te_schedule_free(w->sched);
		te_store_detach(w->store);
	}
	free(w);
}

static void pod_event(struct te_worker *w, const char *ns, const char *name, const char *fmt)
{
	char key[KCMD_KEY_MAX + 1];
	struct kcmd_object_ref ref = {.api_version = "v1", .kind = "Pod", .ns = ns, .name = name};
	int r;

	kcmd_key_make(key, sizeof(key), ns, name);
	r = kcmd_event_record(w->ctx->kc, TE_CONTROLLER, &ref, KCMD_EVENT_NORMAL, TE_EVENT_REASON,
	                      fmt, key);
	if (r < 0)
		kcmd_log_v(2, "event about pod %s not recorded: %s", key, strerror(-r));
}

static const char *errtext(const struct kube_response *rs, int r)
{
	return rs->error.message[0] ? rs->error.message : strerror(-r);
}

/* One due eviction (deletePodHandler) and where it is (te_ev). */
struct te_due {
	char *ns, *name;
	int64_t fire_at;
	char *patch; /* the DisruptionTarget patch of the last GET, or NULL */
};

static void due_free(struct te_due *d, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(d[i].ns);
		free(d[i].name);
		free(d[i].patch);
	}
	free(d);
}

struct evict_run {
	struct te_worker *w;
	struct te_due *d;
	struct te_ev *ev;
};

/* one step of the evictions idx[0..k): their requests at once (request_many) */
static int evict_send(void *ud, enum te_ev_step step, const size_t *idx, size_t k, int *results)
{
	struct evict_run *er = ud;
	struct kube_request *rq = calloc(k, sizeof(*rq));
	struct kube_response *rs = calloc(k, sizeof(*rs));
	static const char *const what[] = {"get pod", "patch status of pod", "delete pod"};
	int r = 0;

	if (!rq || !rs) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t j = 0; j < k; j++) {
		struct te_due *e = &er->d[idx[j]];
		rq[j] = (struct kube_request){.verb = step == TE_EV_GET     ? KUBE_GET
		                                      : step == TE_EV_PATCH ? KUBE_PATCH
		                                                            : KUBE_DELETE,
		                              .version = "v1",
		                              .resource = "pods",
		                              .ns = e->ns,
		                              .name = e->name};
		if (step == TE_EV_PATCH) {
			rq[j].subresource = "status";
			rq[j].patch_type = KUBE_PATCH_STRATEGIC;
			rq[j].body = e->patch;
			rq[j].body_len = strlen(e->patch);
		}
	}
	if ((r = kube_client_request_many(er->w->ctx->kc, rq, k, rs, NULL)) < 0)
		goto out;
	for (size_t j = 0; j < k; j++) {
		struct te_due *e = &er->d[idx[j]];
		int x = rs[j].error.err;
		if (x < 0)
			kcmd_log_v(2, "%s %s/%s: %s", what[step], e->ns, e->name,
			           errtext(&rs[j], x));
		else if (step == TE_EV_GET) {
			free(e->patch);
			e->patch = NULL;
			x = rs[j].body ? te_condition_patch(rs[j].body, rs[j].body_len,
			                                    kube_time_now(), &e->patch)
			               : -EBADMSG;
		}
		results[j] = x;
	}
out:
	for (size_t j = 0; rs && j < k; j++)
		kube_response_clear(&rs[j]);
	free(rq);
	free(rs);
	return r;
}

static void evict_done(void *ud, size_t i)
{
	struct evict_run *er = ud;
	const struct te_ev *v = &er->ev[i];
	const struct te_due *e = &er->d[i];

	if (v->step == TE_EV_DONE) {
		kcmd_metric_inc(er->w->met, TE_M_DELETIONS, NULL);
		kcmd_metric_observe(er->w->met, TE_M_LATENCY, NULL,
		                    te_latency_observed(now_usec() - e->fire_at));
	} else if (v->err != -ENOLCK) {
		kcmd_log_error("TaintEvictionController: timed worker failed pod=\"%s/%s\": %s",
		               e->ns, e->name, strerror(-v->err));
	}
}

static void evict_pause(void *ud)
{
	(void)ud;
	nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
}

/* deletePodHandler for n due pods at once (upstream: a goroutine each): each one's Event, then
 * te_ev_run's rounds. Returns 0, -ENOLCK (not the leader any more: everything stops) or
 * -ENOMEM. */
static int evict_many(struct te_worker *w, struct te_due *d, size_t n)
{
	struct evict_run er = {.w = w, .d = d, .ev = calloc(n ? n : 1, sizeof(struct te_ev))};
	int r;

	if (!er.ev)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		kcmd_log_info("Deleting pod controller=\"%s\" pod=\"%s/%s\"", TE_CONTROLLER,
		              d[i].ns, d[i].name);
		pod_event(w, d[i].ns, d[i].name, "Marking for deletion Pod %s");
	}
	r = te_ev_run(
	        er.ev, n,
	        &(struct te_ev_ops){.send = evict_send, .done = evict_done, .pause = evict_pause},
	        &er);
	free(er.ev);
	return r;
}

/* deletePodHandler for one pod */
static int evict(struct te_worker *w, const char *ns, const char *name, int64_t fire_at)
{
	struct te_due *d = calloc(1, sizeof(*d));
	int r;

	if (!d || !(d->ns = strdup(ns)) || !(d->name = strdup(name))) {
		due_free(d, d ? 1 : 0);
		return -ENOMEM;
	}
	d->fire_at = fire_at;
	r = evict_many(w, d, 1);
	due_free(d, 1);
	return r;
}

/* cancelWorkWithEvent */
static void cancel(struct te_worker *w, const char *key, const char *ns, const char *name)
{
	if (sched_drop(w, key))
		pod_event(w, ns, name, "Cancelling deletion of Pod %s");
}

/* The due evictions of a node's sync, evicted together once its pods are all decided. */
struct due_list {
	struct te_due *d;
	size_t n, cap;
};

static int due_add(struct due_list *l, const char *ns, const char *name, int64_t fire_at)
{
	if (l->n == l->cap) {
		size_t c = l->cap ? l->cap * 2 : 16;
		struct te_due *p = realloc(l->d, c * sizeof(*p));
		if (!p)
			return -ENOMEM;
		l->d = p;
		l->cap = c;
	}
	struct te_due *e = &l->d[l->n];
	*e = (struct te_due){.fire_at = fire_at};
	if (!(e->ns = strdup(ns)) || !(e->name = strdup(name))) {
		free(e->ns);
		return -ENOMEM;
	}
	l->n++;
	return 0;
}

/* processPodOnNode for one pod: its key, whether this controller already evicted it, its
 * tolerations. A due eviction is made at once, or added to `due` (not NULL) to be made with the
 * others. Returns 0 or -ENOLCK / -ENOMEM. */
static int decide_pod(struct te_worker *w, const char *ns, const char *name, bool evicted,
                      const struct te_tolerations *tols, const char *node,
                      const struct te_taints *taints, struct due_list *due)
{
	struct te_decision d;
	char key[KCMD_KEY_MAX + 1];
	int r;

	if (kcmd_key_make(key, sizeof(key), ns, name) < 0)
		return 0;
	if (evicted) {
		sched_drop(w, key);
		return 0;
	}
	int64_t now = now_usec();
	te_process_pod(te_schedule_get(w->sched, key), now, taints, tols, &d);
	switch (d.action) {
	case TE_NOTHING:
		return 0;
	case TE_CANCEL:
		if (d.cancel_event)
			cancel(w, key, ns, name);
		else
			sched_drop(w, key);
		return 0;
	case TE_EVICT_NOW: {
		if (d.cancel_event)
			cancel(w, key, ns, name);
		const struct te_sched *cur = te_schedule_get(w->sched, key);
		int64_t fire = cur ? cur->fire_at : d.sched.fire_at ? d.sched.fire_at : now;
		sched_drop(w, key);
		kcmd_log_v(2,
		           "Not all taints are tolerated after update for pod on node, or its "
		           "toleration ended pod=\"%s\" node=\"%s\"",
		           key, node);
		if (due)
			return due_add(due, ns, name, fire);
		r = evict(w, ns, name, fire);
		return r == -ENOLCK ? r : 0;
	}
	case TE_WAIT:
		return sched_put(w, key, node, &d.sched);
	}
	return 0;
}

/* A node's sync walks its pods in the cache (the arena's node index): each decided as it is
 * read, the due ones gathered. */
struct node_walk {
	struct te_worker *w;
	const char *node;
	const struct te_taints *taints;
	struct due_list *due;
};

/* decide_pod for a pod record's view: its tolerations as te_tolerations (pointers into the
 * view, not copied), already evicted when deleting with this controller's DisruptionTarget. */
static int decide_view(struct te_worker *w, const struct kube_pod *p, const char *node,
                       const struct te_taints *taints, struct due_list *due)
{
	struct te_tolerations tols = {0};
	int r;

	if (!p->meta.name)
		return 0;
	if (p->n_tolerations && !(tols.v = calloc(p->n_tolerations, sizeof(*tols.v))))
		return -ENOMEM;
	for (uint32_t i = 0; i < p->n_tolerations; i++) {
		const struct kube_toleration *t = &p->tolerations[i];
		tols.v[i] = (struct te_toleration){.key = (char *)t->key,
		                                   .op = (char *)t->op,
		                                   .value = (char *)t->value,
		                                   .effect = (char *)t->effect,
		                                   .has_seconds = t->has_seconds,
		                                   .seconds = t->seconds};
	}
	tols.n = p->n_tolerations;
	bool evicted = p->meta.deletion_timestamp && p->dt_taint_manager;
	r = decide_pod(w, p->meta.namespace ? p->meta.namespace : "", p->meta.name, evicted, &tols,
	               node, taints, due);
	free(tols.v);
	return r;
}

static int walk_pod(const struct shm_obj *o, void *ud)
{
	struct node_walk *nw = ud;
	struct shm_obj cp;
	struct shm_pod_view v;
	int r;

	if ((r = shm_obj_dup(o, &cp)) < 0)
		return r;
	if ((r = shm_pod_view_init(&cp, &v)) < 0) {
		shm_pod_view_free(&v);
		return r == -ENOMEM ? r : 0; /* unreadable: skipped, as the lister would */
	}
	r = 0;
	if (v.pod.node_name && !strcmp(v.pod.node_name, nw->node))
		r = decide_view(nw->w, &v.pod, nw->node, nw->taints, nw->due);
	shm_pod_view_free(&v);
	return r;
}

/* The node's NoExecute taints from the cache: 0, -ENOENT (no such node), other -errno. */
static int node_taints(struct te_worker *w, const char *name, struct te_taints *ret)
{
	struct shm_obj *o = NULL;
	const char *json;
	size_t len = 0;
	int r;

	*ret = (struct te_taints){0};
	if ((r = kcmd_cache_get(w->ctx->arena, "", "nodes", NULL, name, &o)) < 0)
		return r;
	json = kcmd_obj_json(o, &len);
	r = json ? te_node_noexec_taints(json, len, ret) : -EPROTO;
	kcmd_obj_free(o);
	return r;
}

static void requeue_at(int64_t at, struct wk_result *res)
{
	int64_t now = now_usec();
	if (!at || res->err)
		return;
	res->requeue_after = true;
	res->after_usec = at > now ? (uint64_t)(at - now) : 1;
}

/* handleNodeUpdate */
static void sync_node(struct te_worker *w, const char *name, struct wk_result *res)
{
	struct te_taints taints = {0};
	struct due_list due = {0};
	int r = node_taints(w, name, &taints);

	if (r == -ENOENT) /* deleted: its pending evictions stay (upstream's do) */
		return;
	if (r < 0) {
		kcmd_log_error("cannot get node %s: %s", name, strerror(-r));
		res->err = r;
		return;
	}
	if (!taints.n) {
		char **keys = NULL;
		if ((r = te_schedule_keys_on_node(w->sched, name, &keys)) < 0)
			res->err = r;
		for (char **k = keys; k && *k; k++) {
			char ns[254], pn[254];
			if (kcmd_key_split(*k, ns, sizeof(ns), pn, sizeof(pn)) == 0)
				cancel(w, *k, ns, pn);
		}
		te_keys_free(keys);
		return;
	}
	/* the pods bound to the node, with their tolerations: from the cache, as upstream's
	 * podIndexer.ByIndex("spec.nodeName") */
	struct node_walk nw = {.w = w, .node = name, .taints = &taints, .due = &due};
	if ((r = kcmd_cache_list_pods_on_node(w->ctx->arena, name, walk_pod, &nw)) < 0) {
		kcmd_log_error("Failed to get pods assigned to node node=\"%s\": %s", name,
		               strerror(-r));
		res->err = r;
	}
	/* upstream's goroutine per due pod: the node's due evictions in flight together. Each was
	 * taken out of the table before (as upstream's timed worker is): a worker that dies here
	 * leaves them to the node's sync again (its key is still queued), which finds each pod
	 * evicted (deleting with this controller's condition: decide_view) or due again */
	if (due.n && (r = evict_many(w, due.d, due.n)) < 0 && (r == -ENOLCK || !res->err))
		res->err = r;
	due_free(due.d, due.n);
	te_taints_free(&taints);
	requeue_at(te_schedule_next_on_node(w->sched, name), res);
}

/* handlePodUpdate: the pod, its node's taints and its tolerations from the cache (upstream's
 * listers). */
static void sync_pod(struct te_worker *w, const char *key, struct wk_result *res)
{
	char ns[254], name[254];
	struct shm_obj *o = NULL;
	struct shm_pod_view v;
	struct te_taints taints = {0};
	int r;

	if (kcmd_key_split(key, ns, sizeof(ns), name, sizeof(name)) < 0)
		return;
	if ((r = kcmd_cache_get(w->ctx->arena, "", "pods", ns, name, &o)) == -ENOENT) {
		cancel(w, key, ns, name); /* deleted */
		return;
	}
	if (r < 0) {
		kcmd_log_error("could not get pod %s/%s: %s", ns, name, strerror(-r));
		res->err = r;
		return;
	}
	r = shm_pod_view_init(o, &v);
	free(o);
	const char *node = r == 0 && v.pod.node_name && *v.pod.node_name ? v.pod.node_name : NULL;
	if (r < 0 || !node) {
		res->err = r;
		goto out;
	}
	r = node_taints(w, node, &taints);
	if (r == -ENOENT) {
		/* no such node: upstream leaves a pending eviction to its timer */
		const struct te_sched *cur = te_schedule_get(w->sched, key);
		if (cur && cur->fire_at <= now_usec()) {
			int64_t fire = cur->fire_at;
			sched_drop(w, key);
			if (evict(w, ns, name, fire) == -ENOLCK)
				res->err = -ENOLCK;
		} else if (cur)
			requeue_at(cur->fire_at, res);
		goto out;
	}
	if (r < 0) {
		res->err = r;
		goto out;
	}
	if (!taints.n) {
		cancel(w, key, ns, name);
		goto out;
	}
	if ((r = decide_view(w, &v.pod, node, &taints, NULL)) < 0)
		res->err = r;
	const struct te_sched *cur = te_schedule_get(w->sched, key);
	if (cur)
		requeue_at(cur->fire_at, res);
out:
	te_taints_free(&taints);
	shm_pod_view_free(&v);
}

static void te_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct te_worker *w = state;

	*res = (struct wk_result){0};
	/* WaitForNamedCacheSync: nothing is decided before both caches have been listed;
	 * kcmd-worker takes no key before (workers/cachewait.h) */
	if (q == TE_Q_NODE)
		sync_node(w, key, res);
	else
		sync_pod(w, key, res);
}

static const struct wk_controller te_worker_desc = {
        .name = TE_CONTROLLER,
        .queues = te_queue_names,
        .init = te_init,
        .sync = te_sync,
        .fini = te_fini,
};

/* ---- the descriptor ----------------------------------------------------------------------- */
/* the store outlives the worker: the manager creates it and holds it (store.h) */
static int te_mgr_setup(struct kcmd_mgr_env *env, const struct kcmd_flag_values *v,
                        void **ret_state)
{
	int fd = te_store_memfd_create(0);

	(void)v;
	*ret_state = NULL;
	if (fd < 0)
		return fd;
	return kcmd_mgr_export_fd(env, "KCMD_TE_FD", fd, KCMD_TO_WORKERS);
}

static const struct kcmd_watch te_watches[] = {
        {"", "v1", "nodes", "Node", KCMD_CACHE_OBJECT, false},
        {"", "v1", "pods", "Pod", KCMD_CACHE_POD, true},
};
static const struct kcmd_queue te_queues[] = {
        {.name = TE_NODE_QUEUE},
        {.name = TE_POD_QUEUE},
};

const struct kcmd_controller kcmd_tainteviction_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = TE_CONTROLLER,
        .enabled_by_default = true,
        .service_account = "node-controller",
        .watches = te_watches,
        .n_watches = sizeof(te_watches) / sizeof(te_watches[0]),
        .queues = te_queues,
        .n_queues = sizeof(te_queues) / sizeof(te_queues[0]),
        .mgr_setup = te_mgr_setup,
        .handlers = &te_handlers,
        .worker = &te_worker_desc,
        .metrics = te_metrics,
        .n_metrics = TE_M_N,
};
