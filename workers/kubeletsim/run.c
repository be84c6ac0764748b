/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/kubeletsim/run.c: `kcmd-worker --controller=kubelet-simulator`, the kubelet simulator
 * process (docs/bench.md "Kubelet simulator").
 *
 * Started by the manager in its "workers" group (so it writes only while kcmd leads) with the
 * worker's environment contract (KCMD_ARENA_FD read-only, KCMD_QUEUE_FDS=kubelet-sim:N) and the
 * flags --simulate-kubelet-nodes/-ready-delay/-qps/-burst[/-force].
 *
 * Flow: a blocking setup (foreign-Node check, fake Nodes, their status and Leases) on a
 * short-lived client; then one event loop with the queue (as worker with prefetch, and as
 * producer for retries), an asynchronous client (libcurl multi, HTTP/2) with up to
 * KS_MAX_INFLIGHT requests in flight, a Lease renewal timer and a stats timer.
 *
 * Per key: read the pod from the arena, ks_decide(), answer Done at once (AddAfter for a pod
 * waiting out the ready delay) and start the write. Local state per pod key (struct ent):
 *   - inflight: a write is running; a key for it only marks the entry dirty, and the key is
 *     added again when the write ends (its watch event may arrive before its answer);
 *   - acted_rv: the pod's resourceVersion when the last successful write was decided; while
 *     the arena still shows that version the write's effect is not cached yet, so the key is
 *     dropped instead of sending the same write twice;
 *   - bound_since: when the pod was first seen bound (the ready delay counts from it).
 * An entry goes when its pod needs nothing more or is gone from the arena.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/childenv.h"
#include "shm/records.h"
#include "ipc/loop.h"
#include "ipc/queue.h"
#include "kube/client.h"
#include "kube/config.h"
#include "lib/kube-loop.h"
#include "lib/log.h"
#include "shm/arena.h"
#include "shm/record-model.h"
#include "workers/kubeletsim/nodes.h"
#include "workers/kubeletsim/run.h"
#include "workers/kubeletsim/sim.h"
#include "workers/kubeletsim/table.h"

/* libcurl multiplexes at most 100 streams on one HTTP/2 connection
 * (CURLMOPT_MAX_CONCURRENT_STREAMS, which kube/ leaves at its default); more calls open extra TLS
 * connections that the connection cache then closes again: measured, 256 in flight opened ~15
 * connections a second and ran slower than 90 on one connection. The Lease renewals use the rest.
 */
#define KS_MAX_INFLIGHT   90u
#define KS_PREFETCH       64u
#define KS_RETRY_USEC     1000000ull
#define KS_LEASE_RENEW_US 10000000ull
#define KS_STATS_US       10000000ull
#define KS_MAX_CONTAINERS 32

struct ent {
	struct ent *next;
	uint64_t hash;
	uint64_t bound_since;
	char acted_rv[40];
	bool inflight;
	bool dirty;         /* a key came while the write was in flight: look again when it ends */
	bool no_containers; /* the apiserver refused our containerStatuses once */
	char key[];
};

struct ks {
	/* options */
	unsigned n_nodes;
	uint64_t ready_delay_us;
	double qps;
	int burst;
	bool force;
	/* runtime */
	struct ipc_loop *loop;
	struct kube_config *kcfg;
	struct kube_client *kc;
	struct kube_loop *kl;
	struct shm_arena *arena;
	struct ipc_queue *q;
	struct ipc_source *post, *lease_timer, *stats_timer, *sig_term, *sig_int;
	int pod_type, rs_type, job_type;
	bool watch_armed, stopping;
	unsigned inflight, rr;
	uint64_t pod_seq;
	struct shm_obj obj, rs_obj, job_obj;
	struct ent **tab;
	size_t tab_cap, tab_n;
	char (*node_names)[64];
	/* counters */
	uint64_t n_bound, n_running, n_succeeded, n_deleted, n_errors, n_lease_errors;
	uint64_t last_running, last_stats_us, started_us;
	uint64_t n_done, done_usec; /* answered writes and their summed latency (stats) */
	uint64_t n_conns;           /* connections opened (HTTP/2 should keep this at 1) */
	unsigned ticks;
	double best_rate;
};

/* ---- the per-pod table ------------------------------------------------------------------------
 */

static uint64_t hash_key(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static struct ent *ent_find(struct ks *s, const char *key)
{
	uint64_t h = hash_key(key);

	if (!s->tab_cap)
		return NULL;
	for (struct ent *e = s->tab[h & (s->tab_cap - 1)]; e; e = e->next)
		if (e->hash == h && strcmp(e->key, key) == 0)
			return e;
	return NULL;
}

static int ent_grow(struct ks *s)
{
	size_t cap = s->tab_cap ? s->tab_cap * 2 : 1024;
	struct ent **t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < s->tab_cap; i++)
		for (struct ent *e = s->tab[i], *next; e; e = next) {
			next = e->next;
			e->next = t[e->hash & (cap - 1)];
			t[e->hash & (cap - 1)] = e;
		}
	free(s->tab);
	s->tab = t;
	s->tab_cap = cap;
	return 0;
}

static struct ent *ent_get(struct ks *s, const char *key)
{
	struct ent *e = ent_find(s, key);
	size_t l;

	if (e)
		return e;
	if (s->tab_n >= s->tab_cap && ent_grow(s) < 0)
		return NULL;
	l = strlen(key);
	e = calloc(1, sizeof(*e) + l + 1);
	if (!e)
		return NULL;
	memcpy(e->key, key, l + 1);
	e->hash = hash_key(key);
	e->next = s->tab[e->hash & (s->tab_cap - 1)];
	s->tab[e->hash & (s->tab_cap - 1)] = e;
	s->tab_n++;
	return e;
}

static void ent_del(struct ks *s, struct ent *x)
{
	struct ent **pp;

	if (!x || x->inflight)
		return;
	for (pp = &s->tab[x->hash & (s->tab_cap - 1)]; *pp; pp = &(*pp)->next)
		if (*pp == x) {
			*pp = x->next;
			free(x);
			s->tab_n--;
			return;
		}
}

static void ent_free_all(struct ks *s)
{
	for (size_t i = 0; i < s->tab_cap; i++)
		for (struct ent *e = s->tab[i], *next; e; e = next) {
			next = e->next;
			free(e);
		}
	free(s->tab);
	s->tab = NULL;
	s->tab_cap = s->tab_n = 0;
}

/* ---- writes -----------------------------------------------------------------------------------
 */

struct op {
	struct ks *s;
	struct ent *e;
	enum ks_action act;
	bool with_containers;
	uint64_t started_us;
	char rv[40];
};

static void pump(struct ks *s);

static void retry_later(struct ks *s, const char *key)
{
	int r = ipc_queue_add_after(s->q, key, KS_RETRY_USEC);
	if (r < 0)
		log_v(1, "re-adding %s: %s", key, strerror(-r));
}

static void on_done(struct kube_call *call, const struct kube_result *r, void *ud)
{
	struct op *op = ud;
	struct ks *s = op->s;
	struct ent *e = op->e;

	(void)call;
	e->inflight = false;
	s->inflight--;
	s->n_done++;
	s->n_conns += r->new_connections > 0 ? (uint64_t)r->new_connections : 0;
	s->done_usec += ipc_now_usec() - op->started_us;
	bool dirty = e->dirty;
	e->dirty = false;
	if (r->err == 0) {
		snprintf(e->acted_rv, sizeof(e->acted_rv), "%s", op->rv);
		switch (op->act) {
		case KS_BIND:
			s->n_bound++;
			if (!e->bound_since)
				e->bound_since = ipc_now_usec();
			break;
		case KS_RUN:
			s->n_running++;
			break;
		case KS_COMPLETE:
			s->n_succeeded++;
			break;
		case KS_DELETE:
			s->n_deleted++;
			break;
		default:
			break;
		}
	} else if (r->err == -ENOENT) {
		/* the pod is gone: its DELETED event removes it from the arena */
	} else if (r->err == -ECANCELED) {
		/* shutting down */
	} else {
		const char *msg =
		        r->error && r->error->message[0] ? r->error->message : strerror(-r->err);
		if (r->err != -ESTALE && r->err != -EEXIST)
			s->n_errors++;
		if (op->act == KS_RUN && op->with_containers && r->err == -EINVAL)
			e->no_containers = true; /* retried with conditions only */
		/* 409: already bound / the uid changed; the watch brings the new state. A retry
		 * costs one arena read and is dropped when nothing is left to do. */
		log_v(r->err == -ESTALE || r->err == -EEXIST ? 3 : 1, "%s %s: %s",
		      ks_action_name(op->act), e->key, msg);
		if (!s->stopping)
			retry_later(s, e->key);
		dirty = false;
	}
	if ((r->err == 0 && op->act == KS_DELETE) || r->err == -ENOENT) {
		/* Gone (or going): no key comes for a deleted pod (the handler table has no
		 * on_delete), so the entry goes now. */
		dirty = false;
		ent_del(s, e);
	}
	if (dirty && !s->stopping) {
		int ar = ipc_queue_add(s->q, e->key);
		if (ar < 0)
			retry_later(s, e->key);
	}
	free(op);
	if (!s->stopping)
		ipc_source_post_enable(s->post); /* a slot is free again */
}

/* Container names and images from the pod's controlling ReplicaSet's template. */
static int containers_of(struct ks *s, const struct shm_obj *pod, struct ks_container *out,
                         char **storage)
{
	const struct shm_owner_ref *c = shm_obj_controller(pod);
	struct shm_rec_view v;
	struct shm_rec_rs fr;
	const char *tmpl;
	size_t len;

	*storage = NULL;
	if (!c || !c->kind || strcmp(c->kind, "ReplicaSet") != 0)
		return 0;
	if (s->rs_type < 0)
		s->rs_type = shm_reader_find_type(s->arena, "apps", "v1", "replicasets");
	if (s->rs_type < 0 ||
	    shm_reader_get(s->arena, (uint16_t)s->rs_type, pod->ns, c->name, &s->rs_obj) < 0)
		return 0;
	if (!s->rs_obj.uid || !c->uid || strcmp(s->rs_obj.uid, c->uid) != 0)
		return 0;
	if (shm_rec_parse(s->rs_obj.payload, s->rs_obj.payload_len, &v) < 0 ||
	    shm_rec_rs_get(&v, &fr) < 0 || shm_rec_rs_template(&fr) >= v.hdr.n_blobs ||
	    shm_rec_blob(&v, (unsigned)shm_rec_rs_template(&fr), &tmpl, &len) < 0)
		return 0;
	int n = ks_template_containers(tmpl, len, out, KS_MAX_CONTAINERS, storage);
	return n < 0 ? 0 : n;
}

/* The plan of the pod's controlling Job (from the arena: the Job controller caches Jobs whole),
 * its template's containers into out. Returns the container count, or -ENOENT when the Job is
 * not in the cache (then the pod succeeds at once, without container statuses). */
static int job_plan_of(struct ks *s, const struct shm_obj *pod, struct ks_job_plan *plan,
                       struct ks_container *out, char **storage)
{
	const struct shm_owner_ref *c = shm_obj_controller(pod);
	struct shm_obj copy = SHM_OBJ_INIT;
	struct shm_object_view v;
	int n;

	*storage = NULL;
	*plan = (struct ks_job_plan){.fail_count = -1};
	if (!c || !c->kind || strcmp(c->kind, "Job") != 0)
		return -ENOENT;
	if (s->job_type < 0)
		s->job_type = shm_reader_find_type(s->arena, "batch", "v1", "jobs");
	if (s->job_type < 0 ||
	    shm_reader_get(s->arena, (uint16_t)s->job_type, pod->ns, c->name, &s->job_obj) < 0)
		return -ENOENT;
	if (!s->job_obj.uid || !c->uid || strcmp(s->job_obj.uid, c->uid) != 0 ||
	    s->job_obj.kind != SHM_RECORD_OBJECT || shm_obj_dup(&s->job_obj, &copy) < 0)
		return -ENOENT;
	if (shm_object_view_init(&copy, &v) < 0) {
		shm_object_view_free(&v);
		return -ENOENT;
	}
	n = ks_job_plan_parse(v.o.raw, v.o.raw_len, plan, out, KS_MAX_CONTAINERS, storage);
	shm_object_view_free(&v);
	return n < 0 ? -ENOENT : n;
}

struct failed_count {
	int64_t n;
};

static int count_failed(const struct shm_obj *o, void *ud)
{
	struct ks_pod p;

	if (ks_pod_from_obj(o, &p) == 0 && p.phase == KUBE_POD_FAILED)
		((struct failed_count *)ud)->n++;
	return 0;
}

/* The exit code of the pod's run that ends now: failures so far are the Job's Failed pods (as
 * the simulator's cache sees them) plus this pod's restarts. */
static int32_t job_exit_code(struct ks *s, const struct shm_obj *pod, const struct ks_pod *p,
                             const struct ks_job_plan *plan)
{
	const struct shm_owner_ref *c = shm_obj_controller(pod);
	struct failed_count fc = {0};
	const char *ix = shm_obj_label(pod, "batch.kubernetes.io/job-completion-index");
	char *end = NULL;
	long long index = ix ? strtoll(ix, &end, 10) : -1;

	if (ix && (!*ix || *end))
		index = -1;
	if (c && c->uid && plan->fail_count >= 0)
		shm_reader_list_controlled(s->arena, (uint16_t)s->pod_type, c->uid, NULL,
		                           count_failed, &fc);
	return ks_job_exit_code(plan, index, fc.n + p->restarts);
}

static int start_op(struct ks *s, struct ent *e, enum ks_action act, const struct ks_pod *p)
{
	struct kube_request req = {
	        .version = "v1", .resource = "pods", .ns = p->ns, .name = p->name};
	struct ks_container cs[KS_MAX_CONTAINERS];
	char *body = NULL, *storage = NULL, hip[32], pip[32], path[600];
	struct op *op;
	int n = 0, r;

	op = calloc(1, sizeof(*op));
	if (!op)
		return -ENOMEM;
	op->s = s;
	op->e = e;
	op->act = act;
	op->started_us = ipc_now_usec();
	snprintf(op->rv, sizeof(op->rv), "%s", p->rv ? p->rv : "");
	switch (act) {
	case KS_BIND: {
		unsigned i = ks_pick_node(&s->rr, s->n_nodes);
		r = ks_binding_body(p->name, p->uid, s->node_names[i], &body);
		/* POST pods/<name>/binding, as the scheduler does (the client's resource form has
		 * no named CREATE) */
		req.verb = KUBE_CREATE;
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/binding", p->ns,
		         p->name);
		req.path = path;
		break;
	}
	case KS_RUN:
	case KS_COMPLETE:
		if (!e->no_containers)
			n = containers_of(s, &s->obj, cs, &storage);
		op->with_containers = n > 0;
		if (act == KS_RUN) {
			long ni = ks_node_index(p->node_name);
			ks_node_ip(ni < 0 ? 0 : (unsigned)ni, hip, sizeof(hip));
			ks_pod_ip(s->pod_seq++, pip, sizeof(pip));
			r = ks_run_status_body(hip, pip, kube_time_now(), cs, (size_t)n, &body);
		} else {
			struct ks_job_plan plan;
			char *jst = NULL;
			int jn = job_plan_of(s, &s->obj, &plan, cs, &jst);
			if (jn < 0) {
				r = ks_complete_status_body(kube_time_now(), cs, (size_t)n, &body);
			} else {
				int32_t code = job_exit_code(s, &s->obj, p, &plan);
				if (e->no_containers)
					jn = 0;
				op->with_containers = jn > 0;
				if (code != 0 && plan.on_failure)
					r = ks_restart_status_body(kube_time_now(), p->ready_since,
					                           code, p->restarts, cs,
					                           (size_t)jn, &body);
				else
					r = ks_finish_status_body(kube_time_now(), p->ready_since,
					                          code, p->restarts, cs, (size_t)jn,
					                          &body);
			}
			free(jst);
		}
		free(storage);
		req.verb = KUBE_PATCH;
		req.subresource = "status";
		req.patch_type = KUBE_PATCH_STRATEGIC;
		break;
	case KS_DELETE:
		r = 0;
		req.verb = KUBE_DELETE;
		req.has_grace_period = true;
		req.grace_period_seconds = 0;
		req.precondition_uid = p->uid;
		break;
	default:
		free(op);
		return -EINVAL;
	}
	if (r < 0) {
		free(op);
		return r;
	}
	req.body = body;
	req.body_len = body ? strlen(body) : 0;
	e->inflight = true;
	s->inflight++;
	r = kube_call_start(s->kc, &req, on_done, NULL, op, NULL);
	free(body);
	if (r < 0) {
		e->inflight = false;
		s->inflight--;
		free(op);
		return r;
	}
	return 0;
}

/* One key: returns the AddAfter delay (0: none). */
static uint64_t handle_key(struct ks *s, char *key)
{
	char *slash = strchr(key, '/');
	struct ks_pod p;
	struct ent *e;
	uint64_t now, wait = 0;
	enum ks_action act;
	int r;

	if (!slash)
		return 0;
	if (s->pod_type < 0 && (s->pod_type = shm_reader_find_type(s->arena, "", "v1", "pods")) < 0)
		return KS_RETRY_USEC; /* informerd has not registered pods yet */
	*slash = 0;
	r = shm_reader_get(s->arena, (uint16_t)s->pod_type, key, slash + 1, &s->obj);
	*slash = '/';
	e = ent_find(s, key);
	if (r == -ENOENT) {
		ent_del(s, e);
		return 0;
	}
	if (r < 0 || ks_pod_from_obj(&s->obj, &p) < 0) {
		log_v(1, "%s: unreadable in the cache (%s)", key, strerror(r < 0 ? -r : EBADMSG));
		return KS_RETRY_USEC;
	}
	if (e && e->inflight) {
		/* The write's watch event may beat its answer: look again once it ends. */
		e->dirty = true;
		return 0;
	}
	if (e && e->acted_rv[0] && p.rv && strcmp(e->acted_rv, p.rv) == 0)
		return 0;
	now = ipc_now_usec();
	if (s->ready_delay_us && p.node_name && ks_is_sim_node(p.node_name) && !p.deletion_ts &&
	    !(p.phase == KUBE_POD_RUNNING && p.ready)) {
		if (!e && !(e = ent_get(s, key)))
			return KS_RETRY_USEC;
		if (!e->bound_since)
			e->bound_since = now;
	}
	act = ks_decide(&p, now, e ? e->bound_since : 0, s->ready_delay_us, &wait);
	if (act == KS_NONE) {
		ent_del(s, e);
		return 0;
	}
	if (act == KS_WAIT)
		return wait ? wait : 1;
	if (act == KS_COMPLETE) {
		/* a Job's pod runs for its template's run-duration from when it became Ready */
		struct ks_job_plan plan;
		struct ks_container cs[KS_MAX_CONTAINERS];
		char *jst = NULL;
		if (job_plan_of(s, &s->obj, &plan, cs, &jst) >= 0 && plan.run_us && p.ready_since) {
			kube_time_t end = p.ready_since + (kube_time_t)plan.run_us * 1000;
			kube_time_t tnow = kube_time_now();
			if (end > tnow) {
				free(jst);
				return (uint64_t)(end - tnow) / 1000 + 1;
			}
		}
		free(jst);
	}
	if (!e && !(e = ent_get(s, key)))
		return KS_RETRY_USEC;
	r = start_op(s, e, act, &p);
	if (r < 0) {
		s->n_errors++;
		log_v(1, "%s %s: cannot start: %s", ks_action_name(act), key, strerror(-r));
		return KS_RETRY_USEC;
	}
	return 0;
}

static void on_key(struct ipc_queue *q, void *ud)
{
	struct ks *s = ud;

	(void)q;
	s->watch_armed = false;
	pump(s);
}

static void pump(struct ks *s)
{
	char key[IPC_QUEUE_KEY_MAX + 1];

	while (!s->stopping && s->inflight < KS_MAX_INFLIGHT) {
		int n = ipc_queue_get(s->q, key, sizeof(key), 0);
		if (n == -EAGAIN)
			break;
		if (n == -ESHUTDOWN) {
			log_info("queue %s shut down", KS_QUEUE);
			s->stopping = true;
			ipc_loop_exit(s->loop, 0);
			return;
		}
		if (n < 0) {
			log_error("queue %s: %s", KS_QUEUE, strerror(-n));
			break;
		}
		uint64_t after = handle_key(s, key);
		if (after)
			ipc_queue_done(s->q, IPC_QUEUE_DONE_FORGET | IPC_QUEUE_DONE_AFTER, after);
		else
			ipc_queue_done(s->q, IPC_QUEUE_DONE_FORGET, 0);
	}
	/* At the in-flight cap the next completion re-runs pump (post source); otherwise wait
	 * for keys. */
	if (!s->stopping && s->inflight < KS_MAX_INFLIGHT && !s->watch_armed) {
		if (ipc_queue_watch(s->q, s->loop, on_key, s) < 0)
			log_error("queue %s: cannot wait for keys", KS_QUEUE);
		else
			s->watch_armed = true;
	}
}

static int on_post(struct ipc_source *src, uint64_t now, void *ud)
{
	(void)src;
	(void)now;
	pump(ud);
	return 0;
}

/* ---- Leases and stats -------------------------------------------------------------------------
 */

struct lease_op {
	struct ks *s;
	unsigned i;
	bool create;
};

static void on_lease_done(struct kube_call *call, const struct kube_result *r, void *ud);

static void lease_call(struct ks *s, unsigned i, bool create)
{
	struct kube_request req = {.group = "coordination.k8s.io",
	                           .version = "v1",
	                           .resource = "leases",
	                           .ns = KS_LEASE_NS};
	struct lease_op *lo = calloc(1, sizeof(*lo));
	char *body = NULL;
	int r;

	if (!lo)
		return;
	lo->s = s;
	lo->i = i;
	lo->create = create;
	if (create) {
		req.verb = KUBE_CREATE;
		r = ks_lease_body(s->node_names[i], NULL, kube_time_now(), &body);
	} else {
		req.verb = KUBE_PATCH;
		req.name = s->node_names[i];
		req.patch_type = KUBE_PATCH_MERGE;
		r = ks_lease_renew_body(s->node_names[i], kube_time_now(), &body);
	}
	if (r == 0) {
		req.body = body;
		req.body_len = strlen(body);
		r = kube_call_start(s->kc, &req, on_lease_done, NULL, lo, NULL);
	}
	free(body);
	if (r < 0) {
		s->n_lease_errors++;
		free(lo);
	}
}

static void on_lease_done(struct kube_call *call, const struct kube_result *r, void *ud)
{
	struct lease_op *lo = ud;

	(void)call;
	if (r->err == -ENOENT && !lo->create && !lo->s->stopping) {
		lease_call(lo->s, lo->i, true); /* someone deleted it: make it again */
	} else if (r->err < 0 && r->err != -ECANCELED && !(lo->create && r->err == -EEXIST)) {
		lo->s->n_lease_errors++;
		log_v(1, "Lease of %s: %s", lo->s->node_names[lo->i],
		      r->error && r->error->message[0] ? r->error->message : strerror(-r->err));
	}
	free(lo);
}

static int on_lease_timer(struct ipc_source *src, uint64_t now, void *ud)
{
	struct ks *s = ud;

	for (unsigned i = 0; i < s->n_nodes && !s->stopping; i++)
		lease_call(s, i, false);
	return ipc_source_set_time(src, now + KS_LEASE_RENEW_US);
}

static void log_stats(struct ks *s, bool final)
{
	uint64_t now = ipc_now_usec();
	double dt = (double)(now - s->last_stats_us) / 1e6;
	double rate = dt > 0 ? (double)(s->n_running - s->last_running) / dt : 0;

	if (rate > s->best_rate)
		s->best_rate = rate;
	s->last_running = s->n_running;
	s->last_stats_us = now;
	if (final)
		log_info("kubelet-simulator: bound %llu, running %llu, succeeded %llu, deleted "
		         "%llu, errors %llu, "
		         "lease errors %llu (best %.0f pods/s to Running)",
		         (unsigned long long)s->n_bound, (unsigned long long)s->n_running,
		         (unsigned long long)s->n_succeeded, (unsigned long long)s->n_deleted,
		         (unsigned long long)s->n_errors, (unsigned long long)s->n_lease_errors,
		         s->best_rate);
	else
		log_v(1,
		      "kubelet-simulator: bound %llu, running %llu, succeeded %llu, deleted %llu, "
		      "errors %llu "
		      "(%.0f pods/s; %u in flight, mean write latency %.1f ms, %llu connections "
		      "opened)",
		      (unsigned long long)s->n_bound, (unsigned long long)s->n_running,
		      (unsigned long long)s->n_succeeded, (unsigned long long)s->n_deleted,
		      (unsigned long long)s->n_errors, rate, s->inflight,
		      s->n_done ? (double)s->done_usec / (double)s->n_done / 1000.0 : 0.0,
		      (unsigned long long)s->n_conns);
	s->n_done = s->done_usec = 0;
}

/* Entries of pods that left the arena without a key (deleted by someone else while an entry
 * was kept) go here, once a minute. */
static void sweep(struct ks *s)
{
	struct shm_obj o = SHM_OBJ_INIT;
	size_t gone = 0;

	if (s->pod_type < 0)
		return;
	for (size_t i = 0; i < s->tab_cap; i++)
		for (struct ent *e = s->tab[i], *next; e; e = next) {
			char *slash = strchr(e->key, '/');
			int r;
			next = e->next;
			if (e->inflight || !slash)
				continue;
			*slash = 0;
			r = shm_reader_get(s->arena, (uint16_t)s->pod_type, e->key, slash + 1, &o);
			*slash = '/';
			if (r == -ENOENT) {
				ent_del(s, e);
				gone++;
			}
		}
	shm_obj_release(&o);
	if (gone)
		log_v(2, "dropped %zu entries of pods no longer cached", gone);
}

static int on_stats_timer(struct ipc_source *src, uint64_t now, void *ud)
{
	struct ks *s = ud;

	if (++s->ticks % 6 == 0)
		sweep(s);
	log_stats(ud, false);
	return ipc_source_set_time(src, now + KS_STATS_US);
}

static int on_signal(struct ipc_source *src, const struct signalfd_siginfo *si, void *ud)
{
	struct ks *s = ud;

	(void)src;
	(void)si;
	s->stopping = true;
	log_stats(s, true);
	ipc_loop_exit(s->loop, 0);
	return 0;
}

/* ---- start-up scan ------------------------------------------------------------------------------
 */

struct scan {
	struct ks *s;
	unsigned added, failed;
};

static int scan_visit(const struct shm_obj *o, void *ud)
{
	struct scan *sc = ud;
	char key[IPC_QUEUE_KEY_MAX + 1];
	struct ks_pod p;
	int n;

	if (ks_pod_from_obj(o, &p) < 0 || ks_decide(&p, 0, 0, 0, NULL) == KS_NONE)
		return 0;
	n = snprintf(key, sizeof(key), "%s/%s", p.ns, p.name);
	if (n < 0 || (size_t)n >= sizeof(key))
		return 0;
	if (ipc_queue_add(sc->s->q, key) < 0)
		sc->failed++;
	else
		sc->added++;
	return 0;
}

/* A simulator that died with writes in flight left pods whose keys were already done: informerd
 * has no event to give for them. So every start re-adds, from the arena, each pod that needs
 * something (informerd's own resync does the same when the queue's owner restarts). */
static void startup_scan(struct ks *s)
{
	struct scan sc = {.s = s};
	int t = shm_reader_find_type(s->arena, "", "v1", "pods");

	if (t < 0)
		return; /* informerd has not registered pods yet: its events and resync will come */
	ipc_queue_set_add_timeout(s->q, 5000000);
	shm_reader_list(s->arena, (uint16_t)t, scan_visit, &sc);
	ipc_queue_set_add_timeout(s->q, 100000);
	log_v(1, "start-up scan: %u pods to look at%s", sc.added,
	      sc.failed ? " (some could not be queued)" : "");
}

/* ---- main -------------------------------------------------------------------------------------
 */

static void usage(void)
{
	fprintf(stderr,
	        "usage: kcmd-worker --controller=" KS_CONTROLLER
	        " [--kubeconfig=F] [--master=URL] [--v=N]\n"
	        "       [--simulate-kubelet-nodes=N] [--simulate-kubelet-ready-delay=DURATION]\n"
	        "       [--simulate-kubelet-qps=Q] [--simulate-kubelet-burst=B] "
	        "[--simulate-kubelet-force]\n"
	        "Started by kcmd --simulate-kubelet with KCMD_ARENA_FD and KCMD_QUEUE_FDS=" KS_QUEUE
	        ":N set.\n");
}

static int parse_num(const char *s, double min, double max, double *ret)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !(v >= min && v <= max))
		return -EINVAL;
	*ret = v;
	return 0;
}

int ks_main(int argc, char **argv)
{
	struct ks *s = &(struct ks){.n_nodes = 10,
	                            .qps = 1000,
	                            .burst = 2000,
	                            .pod_type = -1,
	                            .rs_type = -1,
	                            .job_type = -1};
	const char *kubeconfig = NULL, *master = NULL;
	char err[1024];
	double d;
	int v = 0, r;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool bad = false;
		if (strncmp(a, "--controller=", 13) == 0)
			bad = strcmp(a + 13, KS_CONTROLLER) != 0;
		else if (strncmp(a, "--kubeconfig=", 13) == 0)
			kubeconfig = a + 13;
		else if (strncmp(a, "--master=", 9) == 0)
			master = a + 9;
		else if (strncmp(a, "--kube-api-qps=", 15) == 0 ||
		         strncmp(a, "--kube-api-burst=", 17) == 0)
			; /* the controllers' limits; the simulator has its own */
		else if (strncmp(a, "--v=", 4) == 0)
			v = (int)strtol(a + 4, NULL, 10);
		else if (strncmp(a, "--simulate-kubelet-nodes=", 25) == 0)
			bad = parse_num(a + 25, 1, KS_MAX_NODES, &d) < 0 ||
			      (s->n_nodes = (unsigned)d) != d;
		else if (strncmp(a, "--simulate-kubelet-ready-delay=", 31) == 0)
			bad = ks_parse_duration(a + 31, &s->ready_delay_us) < 0;
		else if (strncmp(a, "--simulate-kubelet-qps=", 23) == 0)
			bad = parse_num(a + 23, 0, 1e9, &s->qps) < 0;
		else if (strncmp(a, "--simulate-kubelet-burst=", 25) == 0)
			bad = parse_num(a + 25, 1, 1e9, &d) < 0 || (s->burst = (int)d) != d;
		else if (strcmp(a, "--simulate-kubelet-force") == 0 ||
		         strcmp(a, "--simulate-kubelet-force=true") == 0)
			s->force = true;
		else if (strcmp(a, "--simulate-kubelet-force=false") == 0)
			s->force = false;
		else
			bad = true;
		if (bad) {
			fprintf(stderr, "kcmd-worker: bad argument %s\n", a);
			usage();
			return 2;
		}
	}
	kclog_init(getenv("KCMD_PROCESS") ? getenv("KCMD_PROCESS") : KS_CONTROLLER, KS_CONTROLLER,
	           v);
	signal(SIGPIPE, SIG_IGN);

	int afd = kcmd_env_fd("KCMD_ARENA_FD"), qfd = kcmd_env_queue_fd(KS_QUEUE);
	if (afd < 0 || (r = shm_reader_open(afd, &s->arena)) < 0) {
		log_error("KCMD_ARENA_FD: no usable arena (%s)",
		          afd < 0 ? "not set" : strerror(-r));
		return 1;
	}
	if (qfd < 0) {
		log_error("queue %s: not in KCMD_QUEUE_FDS", KS_QUEUE);
		return 1;
	}
	struct kube_config_opts co = {.kubeconfig = kubeconfig, .master = master};
	if (kube_config_load(&co, &s->kcfg, err, sizeof(err)) < 0) {
		log_error("kubeconfig: %s", err);
		return 1;
	}
	s->node_names = calloc(s->n_nodes, sizeof(*s->node_names));
	if (!s->node_names)
		return 1;
	for (unsigned i = 0; i < s->n_nodes; i++)
		ks_node_name(i, s->node_names[i], sizeof(s->node_names[i]));

	/* Setup, blocking, on a client of its own. */
	{
		struct kube_client_opts ko = {.config = s->kcfg,
		                              .process = "worker",
		                              .controller = KS_CONTROLLER,
		                              .qps = s->qps,
		                              .burst = s->burst,
		                              .insecure_ok = true};
		struct kube_client *setup = NULL;
		if ((r = kube_client_new(&ko, &setup)) < 0) {
			log_error("API client: %s", strerror(-r));
			return 1;
		}
		r = ks_check_nodes(setup, s->force, err, sizeof(err));
		if (r == -EEXIST) {
			log_error("%s", err);
			kube_client_free(setup);
			return 3;
		}
		if (r < 0 || err[0]) {
			if (r < 0) {
				log_error("%s", err);
				kube_client_free(setup);
				return 1;
			}
			log_warning("%s", err);
		}
		r = ks_setup_nodes(setup, s->n_nodes, err, sizeof(err));
		kube_client_free(setup);
		if (r < 0) {
			log_error("setting up the fake Nodes: %s", err);
			return 1;
		}
	}
	log_info("kubelet-simulator: %u nodes ready (%s0..%u), ready delay %.3fs, qps %g, burst %d",
	         s->n_nodes, KS_NODE_PREFIX, s->n_nodes - 1, (double)s->ready_delay_us / 1e6,
	         s->qps, s->burst);

	if ((r = ipc_loop_new(&s->loop, IPC_LOOP_BACKEND_AUTO)) < 0) {
		log_error("event loop: %s", strerror(-r));
		return 1;
	}
	struct kube_client_opts ko = {.config = s->kcfg,
	                              .process = "worker",
	                              .controller = KS_CONTROLLER,
	                              .qps = s->qps,
	                              .burst = s->burst,
	                              .insecure_ok = true};
	if ((r = kube_client_new(&ko, &s->kc)) < 0 ||
	    (r = kube_loop_attach(s->loop, s->kc, &s->kl)) < 0) {
		log_error("API client: %s", strerror(-r));
		return 1;
	}
	if ((r = ipc_queue_attach(&s->q, qfd, IPC_QUEUE_WORKER | IPC_QUEUE_PRODUCER, KS_PREFETCH)) <
	    0) {
		log_error("queue %s: %s", KS_QUEUE, strerror(-r));
		return 1;
	}
	startup_scan(s);
	s->started_us = s->last_stats_us = ipc_now_usec();
	s->pod_seq = (uint64_t)(kube_time_now() / 1000000000) *
	             1009u; /* a restart does not reuse the first IPs */
	if (ipc_loop_add_post(s->loop, &s->post, on_post, s) < 0 ||
	    ipc_loop_add_timer(s->loop, &s->lease_timer, s->started_us + KS_LEASE_RENEW_US,
	                       on_lease_timer, s) < 0 ||
	    ipc_loop_add_timer(s->loop, &s->stats_timer, s->started_us + KS_STATS_US,
	                       on_stats_timer, s) < 0 ||
	    ipc_loop_add_signal(s->loop, &s->sig_term, SIGTERM, on_signal, s) < 0 ||
	    ipc_loop_add_signal(s->loop, &s->sig_int, SIGINT, on_signal, s) < 0) {
		log_error("event loop sources: out of resources");
		return 1;
	}
	pump(s);
	r = ipc_loop_run(s->loop);
	s->stopping = true;

	/* Detach from the queue first: whatever is still prefetched goes back to the owner. */
	ipc_queue_free(s->q);
	ipc_source_free(s->post);
	ipc_source_free(s->lease_timer);
	ipc_source_free(s->stats_timer);
	ipc_source_free(s->sig_term);
	ipc_source_free(s->sig_int);
	kube_loop_detach(s->kl);
	kube_client_free(s->kc); /* cancels what is in flight (on_done with -ECANCELED) */
	ent_free_all(s);
	shm_obj_release(&s->obj);
	shm_obj_release(&s->rs_obj);
	shm_obj_release(&s->job_obj);
	shm_arena_close(s->arena);
	kube_config_free(s->kcfg);
	free(s->node_names);
	ipc_loop_free(s->loop);
	return r < 0 ? 1 : 0;
}
