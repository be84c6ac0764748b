/* SPDX-License-Identifier: Apache-2.0 */
/*
 * informerd/informer.c: reflectors on the kube client, answers into the store (informer.h).
 *
 * Re-entrancy: a new request is never started from inside a kube callback; the callback reports
 * to the reflector and arms the informer's timer (at once or after the backoff), and the timer
 * starts the next call from the loop. A watch the reflector wants stopped is ended by returning
 * a negative value from the event callback (the transport aborts the transfer and reports it
 * once, later), never by freeing the call under the transport's feet.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "informerd/informer.h"
#include "informerd/reflector.h"
#include "kube/proto.h"

#define STOP_WATCH (-ECANCELED)

struct informer {
	struct inf_informers *ii;
	const struct inf_resource *res;
	uint16_t type;
	enum kube_kind kkind;
	struct inf_reflector *refl;
	struct kube_call *call;
	enum inf_refl_op call_op;
	struct ipc_source *timer;
	uint64_t watch_events; /* events of the watch in flight */
	bool removing;
	bool abandoned; /* the call in flight was cancelled for a barrier: ignore its end */
	struct inf_metrics_row *row;
	struct inf_reflector_stats reported;
};

struct inf_informers {
	struct inf_informers_config cfg;
	struct informer **inf;
	size_t n, cap;
	uint64_t errors;
	uint32_t epoch; /* the acquisition barrier asked last (0 none) */
	char epoch_rv[INF_RV_MAX];
};

static void note(struct informer *in, const char *what, int err)
{
	if (in->ii->cfg.on_error)
		in->ii->cfg.on_error(in->ii->cfg.userdata, in->res, what, err);
}

static void report_metrics(struct informer *in)
{
	struct inf_reflector_stats st;

	if (!in->row)
		return;
	inf_reflector_get_stats(in->refl, &st);
#define DELTA(field, idx) inf_metrics_add(in->row, idx, st.field - in->reported.field)
	DELTA(watch_events, INF_M_WATCH_EVENTS);
	DELTA(lists, INF_M_LISTS);
	DELTA(relists, INF_M_RELISTS);
	DELTA(watches, INF_M_WATCHES);
	DELTA(watch_restarts, INF_M_WATCH_RESTARTS);
	DELTA(expired, INF_M_EXPIRED);
	DELTA(backoffs, INF_M_BACKOFFS);
	DELTA(watch_list_fallbacks, INF_M_WATCH_LIST_FALLBACKS);
#undef DELTA
	in->reported = st;
	inf_metrics_set(in->row, INF_M_SYNCED, inf_reflector_synced(in->refl));
}

static void replace_done(struct informer *in)
{
	struct inf_reflector_stats st;
	uint32_t e = inf_reflector_barrier_epoch(in->refl);

	/* a barrier replace: the arena says "synced at epoch e" only now, after the commit */
	if (e && inf_store_set_sync_epoch(in->ii->cfg.store, in->type,
	                                  inf_reflector_last_rv(in->refl), e) < 0)
		inf_metrics_add(in->row, INF_M_ERRORS, 1);

	inf_reflector_get_stats(in->refl, &st);
	inf_metrics_add(in->row, INF_M_LIST_COUNT, 1);
	inf_metrics_add(in->row, INF_M_LIST_USEC_SUM, st.last_list_usec);
	inf_metrics_set(in->row, INF_M_LIST_USEC_LAST, st.last_list_usec);
}

/* Arms the timer for the reflector's next step (the loop calls on_timer). */
static void schedule(struct informer *in)
{
	uint64_t w = inf_reflector_next_wakeup(in->refl);

	if (w == UINT64_MAX) {
		(void)ipc_source_set_time(in->timer, 0);
		return;
	}
	(void)ipc_source_set_time(in->timer, w ? w : 1);
}

static void on_done(struct kube_call *call, const struct kube_result *r, void *ud);
static int on_event(const char *json, size_t len, void *ud);

static void start(struct informer *in)
{
	struct inf_refl_request q;
	struct kube_request req;
	uint64_t now = ipc_now_usec();
	int r;

	if (in->call || inf_reflector_step(in->refl, now, &q) != 1) {
		schedule(in);
		return;
	}
	if (q.replace_begin)
		(void)inf_store_replace_begin(in->ii->cfg.store, in->type);
	req = (struct kube_request){
	        .verb = q.op == INF_REFL_LIST ? KUBE_LIST : KUBE_WATCH,
	        .group = in->res->group,
	        .version = in->res->version,
	        .resource = in->res->resource,
	        .resource_version = q.rv && q.rv[0] ? q.rv : NULL,
	        .resource_version_match = q.rv_match,
	        .cont = q.cont,
	        .limit = q.limit,
	        .timeout_seconds = q.timeout_s,
	        .allow_watch_bookmarks = q.allow_bookmarks,
	        .send_initial_events = q.send_initial_events,
	        .metadata_only = in->res->record_kind == SHM_RECORD_META,
	};
	/* Protobuf (when the client's --kube-api-content-type asks for it), as client-go's typed
	 * and metadata informers: for Pods and for metadata-only resources (PartialObjectMetadata
	 * is a built-in type even for custom resources). ReplicaSets stay JSON: the model keeps
	 * spec.template as JSON text for pod creation, which protobuf does not carry
	 * (kube/proto.h). Full-object records stay JSON: their body is stored as received, for
	 * readers of any resource, custom ones included (shm/records.h). */
	req.protobuf_ok = req.metadata_only || in->kkind == KUBE_KIND_POD;
	in->call_op = q.op;
	in->watch_events = 0;
	r = kube_call_start(in->ii->cfg.client, &req, on_done,
	                    q.op == INF_REFL_WATCH ? on_event : NULL, in, &in->call);
	if (r < 0) {
		in->call = NULL;
		note(in, "cannot start a call", r);
		if (inf_store_replacing(in->ii->cfg.store, in->type))
			inf_store_replace_abort(in->ii->cfg.store, in->type);
		(void)inf_reflector_call_failed(in->refl, now, r);
	}
	report_metrics(in);
	schedule(in);
}

static int on_timer(struct ipc_source *s, uint64_t now, void *ud)
{
	(void)s;
	(void)now;
	start(ud);
	return 0;
}

struct list_ctx {
	struct informer *in;
	int err;
};

/* An object the store refused (arena.h T1: the arena full, out of handles, a part over
 * SHM_RECORD_MAX_BYTES). Never skipped: the informer stops here, the type's version is not
 * advanced past it, and the reflector relists after its backoff (so a transient cause heals).
 * The message names the object. */
static void store_failed(struct informer *in, const char *what, const void *obj, int err)
{
	const struct kube_object_meta *m = obj;
	char msg[600];

	in->ii->errors++;
	inf_metrics_add(in->row, INF_M_ERRORS, 1);
	snprintf(msg, sizeof(msg),
	         "cannot store %s %s%s%.253s (resourceVersion %.40s); the informer stops before it "
	         "and relists after its backoff",
	         what, m && m->namespace && m->namespace[0] ? m->namespace : "",
	         m && m->namespace && m->namespace[0] ? "/" : "", m && m->name ? m->name : "?",
	         m && m->resource_version ? m->resource_version : "?");
	note(in, msg, err);
}

static int list_item(void *obj, void *ud)
{
	struct list_ctx *lc = ud;
	int r = inf_store_replace_add(lc->in->ii->cfg.store, lc->in->type, obj);

	if (r < 0) {
		/* No valid object is dropped: the list fails (the replace is aborted, nothing
		 * is committed past it) and is retried after the reflector's backoff. */
		store_failed(lc->in, "listed object", obj, r);
		lc->err = r;
		kube_object_free(obj);
		return r;
	}
	if (r == 1) /* the sharded cache's filter: not ours to store */
		inf_metrics_add(lc->in->row, INF_M_FILTERED, 1);
	kube_object_free(obj);
	return 0;
}

/* ReplicaSet records keep every annotation (the Deployment controller compares and copies
 * them, shm/records.h); other typed records keep none, so the default filter serves them */
static unsigned decode_flags(const struct informer *in)
{
	return in->kkind == KUBE_KIND_REPLICASET || in->kkind == KUBE_KIND_REPLICATIONCONTROLLER
	               ? KUBE_DECODE_ALL_ANNOTATIONS
	               : 0;
}

static void list_done(struct informer *in, const struct kube_result *r, uint64_t now)
{
	struct inf_store *st = in->ii->cfg.store;
	struct kube_list_meta meta;
	struct inf_list_result lr = {.err = r->err};
	struct list_ctx lc = {.in = in};
	int v, d;

	if (r->err == 0) {
		memset(&meta, 0, sizeof(meta));
		d = kube_decode_list_any(in->kkind, r->body, r->body_len, decode_flags(in),
		                         list_item, &lc, &meta);
		if (d < 0 || lc.err) {
			lr.err = lc.err ? lc.err : d;
		} else {
			lr.rv = meta.resource_version;
			lr.cont = meta.cont;
		}
	} else if (r->error) {
		lr.rv_too_large = r->error->rv_too_large;
	}
	if (lr.err)
		note(in, "list failed", lr.err);
	v = inf_reflector_list_result(in->refl, now, &lr);
	if (v == INF_LIST_DONE) {
		if (inf_store_replace_commit(st, in->type, inf_reflector_last_rv(in->refl)) < 0)
			inf_metrics_add(in->row, INF_M_ERRORS, 1);
		replace_done(in);
	} else if (v == INF_LIST_FAILED) {
		inf_store_replace_abort(st, in->type);
	}
}

static void on_done(struct kube_call *call, const struct kube_result *r, void *ud)
{
	struct informer *in = ud;
	uint64_t now = ipc_now_usec();

	(void)call;
	in->call = NULL;
	if (in->removing)
		return;
	if (in->abandoned) {
		/* cancelled by inf_informers_barrier, which told the reflector already */
		in->abandoned = false;
		schedule(in);
		return;
	}
	if (in->call_op == INF_REFL_LIST) {
		list_done(in, r, now);
	} else {
		bool started = r->http_code == 200 || in->watch_events > 0;

		if (r->err && r->err != STOP_WATCH)
			note(in, started ? "watch ended" : "watch failed", r->err);

		(void)inf_reflector_watch_done(
		        in->refl, now, r->err == STOP_WATCH && started ? 0 : r->err, started);
		/* A WatchList replace that did not reach its bookmark is void. */
		if (inf_store_replacing(in->ii->cfg.store, in->type))
			inf_store_replace_abort(in->ii->cfg.store, in->type);
	}
	report_metrics(in);
	schedule(in);
}

static bool initial_events_end(const struct kube_object_meta *m)
{
	const char *v =
	        kube_labels_get(m->annotations, m->n_annotations, "k8s.io/initial-events-end");

	return v && strcmp(v, "true") == 0;
}

static int on_event(const char *json, size_t len, void *ud)
{
	struct informer *in = ud;
	struct inf_store *st = in->ii->cfg.store;
	enum kube_watch_type t;
	void *obj = NULL;
	const struct kube_object_meta *m;
	uint64_t now = ipc_now_usec();
	int r, v, err = 0;

	if (in->removing || in->abandoned)
		return STOP_WATCH;
	r = kube_decode_watch_event_any(in->kkind, json, len, decode_flags(in), &t, &obj);
	if (r < 0) {
		/* Undecodable event: client-go turns it into an ERROR (relist after backoff). */
		inf_metrics_add(in->row, INF_M_ERRORS, 1);
		note(in, "undecodable watch event", r);
		(void)inf_reflector_watch_event(in->refl, now, KUBE_WATCH_ERROR, NULL, false, r);
		return STOP_WATCH;
	}
	in->watch_events++;
	if (t == KUBE_WATCH_ERROR) {
		const struct kube_status *s = obj;

		err = kube_errno_for(s->reason, s->code, false);
		if (!err)
			err = -EREMOTEIO;
		note(in, "watch ERROR event", err);
		v = inf_reflector_watch_event(in->refl, now, t, NULL, false, err);
		kube_object_free(obj);
		return STOP_WATCH;
	}
	m = obj;
	v = inf_reflector_watch_event(in->refl, now, t, m->resource_version, initial_events_end(m),
	                              0);
	switch (v) {
	case INF_EV_APPLY:
		r = inf_store_apply(st, in->type, t, obj);
		if (r < 0) {
			/* Not applied: the stored version stays before this event and the watch
			 * ends as an error (a relist after backoff), as client-go does with an
			 * event it cannot process; never a resourceVersion past a lost object. */
			store_failed(in, "object", obj, r);
			(void)inf_reflector_watch_event(in->refl, now, KUBE_WATCH_ERROR, NULL,
			                                false, r);
			kube_object_free(obj);
			return STOP_WATCH;
		}
		if (r == 1)
			inf_metrics_add(in->row, INF_M_FILTERED, 1);
		if (!inf_store_replacing(st, in->type))
			(void)inf_store_set_rv(st, in->type, inf_reflector_last_rv(in->refl));
		break;
	case INF_EV_COLLECT:
		r = inf_store_replace_add(st, in->type, obj);
		if (r < 0) {
			/* WatchList: the replace in progress is void; relist after backoff */
			store_failed(in, "initial event's object", obj, r);
			(void)inf_reflector_watch_event(in->refl, now, KUBE_WATCH_ERROR, NULL,
			                                false, r);
			kube_object_free(obj);
			inf_store_replace_abort(st, in->type);
			return STOP_WATCH;
		}
		if (r == 1)
			inf_metrics_add(in->row, INF_M_FILTERED, 1);
		break;
	case INF_EV_REPLACED:
		if (inf_store_replace_commit(st, in->type, inf_reflector_last_rv(in->refl)) < 0)
			inf_metrics_add(in->row, INF_M_ERRORS, 1);
		replace_done(in);
		break;
	case INF_EV_BOOKMARK:
		if (!inf_store_replacing(st, in->type))
			(void)inf_store_set_rv(st, in->type, inf_reflector_last_rv(in->refl));
		break;
	default:
		note(in, "watch stopped by the reflector", v);
		kube_object_free(obj);
		if (inf_store_replacing(st, in->type))
			inf_store_replace_abort(st, in->type);
		return STOP_WATCH;
	}
	kube_object_free(obj);
	report_metrics(in);
	return 0;
}

int inf_informers_new(const struct inf_informers_config *cfg, struct inf_informers **ret)
{
	struct inf_informers *ii;

	if (!cfg || !cfg->loop || !cfg->client || !cfg->store || !ret)
		return -EINVAL;
	ii = calloc(1, sizeof(*ii));
	if (!ii)
		return -ENOMEM;
	ii->cfg = *cfg;
	*ret = ii;
	return 0;
}

static void informer_free(struct informer *in)
{
	in->removing = true;
	if (in->call)
		kube_call_cancel(in->call); /* on_done runs now, and sees `removing` */
	if (inf_store_replacing(in->ii->cfg.store, in->type))
		inf_store_replace_abort(in->ii->cfg.store, in->type);
	ipc_source_free(in->timer);
	inf_reflector_free(in->refl);
	free(in);
}

struct inf_informers *inf_informers_free(struct inf_informers *ii)
{
	if (!ii)
		return NULL;
	for (size_t i = 0; i < ii->n; i++)
		informer_free(ii->inf[i]);
	free(ii->inf);
	free(ii);
	return NULL;
}

static ssize_t find(const struct inf_informers *ii, const char *group, const char *resource)
{
	for (size_t i = 0; i < ii->n; i++) {
		const struct inf_resource *r = ii->inf[i]->res;

		if (strcmp(r->group ? r->group : "", group ? group : "") == 0 &&
		    strcmp(r->resource, resource) == 0)
			return (ssize_t)i;
	}
	return -1;
}

int inf_informers_add(struct inf_informers *ii, const struct inf_resource *res)
{
	struct inf_reflector_config rc = {0};
	char warm[INF_RV_MAX] = "";
	struct informer *in;
	int type, r;

	if (!ii || !res || !res->resource)
		return -EINVAL;
	if (find(ii, res->group, res->resource) >= 0)
		return -EEXIST;
	type = inf_store_add_resource(ii->cfg.store, res);
	if (type < 0)
		return type;
	if (!ii->cfg.no_warm_start &&
	    inf_store_synced_rv(ii->cfg.store, (uint16_t)type, warm, sizeof(warm)) < 0)
		warm[0] = '\0';
	if (ii->n == ii->cap) {
		size_t nc = ii->cap ? ii->cap * 2 : 16;
		struct informer **ni = realloc(ii->inf, nc * sizeof(*ni));

		if (!ni)
			return -ENOMEM;
		ii->inf = ni;
		ii->cap = nc;
	}
	in = calloc(1, sizeof(*in));
	if (!in)
		return -ENOMEM;
	in->ii = ii;
	in->res = res;
	in->type = (uint16_t)type;
	in->kkind = inf_store_kube_kind(ii->cfg.store, (uint16_t)type);
	rc.watch_list = ii->cfg.watch_list;
	rc.min_watch_timeout_s = ii->cfg.min_watch_timeout_s;
	rc.page_size = ii->cfg.page_size;
	rc.warm_rv = warm;
	r = inf_reflector_new(&rc, &in->refl);
	if (r < 0) {
		free(in);
		return r;
	}
	r = ipc_loop_add_timer(ii->cfg.loop, &in->timer, 1, on_timer, in);
	if (r < 0) {
		inf_reflector_free(in->refl);
		free(in);
		return r;
	}
	/* a type first watched after an acquisition is listed for its barrier too, unless the
	 * arena was relisted for this very epoch already (informerd restarted within the term:
	 * its warm watch resumes from a version newer than the Lease's) */
	if (ii->epoch && warm[0] && inf_store_sync_epoch(ii->cfg.store, in->type) == ii->epoch)
		(void)inf_reflector_barrier_done(in->refl, ii->epoch);
	else if (ii->epoch)
		(void)inf_reflector_barrier(in->refl, ipc_now_usec(), ii->epoch, ii->epoch_rv);
	in->row = inf_metrics_row(ii->cfg.metrics, res->group, res->resource);
	inf_metrics_set(in->row, INF_M_SYNCED, inf_reflector_synced(in->refl));
	ii->inf[ii->n++] = in;
	return 0;
}

int inf_informers_remove(struct inf_informers *ii, const char *group, const char *resource,
                         bool drop)
{
	ssize_t i = ii ? find(ii, group, resource) : -1;
	uint16_t type;

	if (i < 0)
		return -ENOENT;
	type = ii->inf[i]->type;
	informer_free(ii->inf[i]);
	/* dropped and retired: the type slot is free for another resource (arena.h T2), so
	 * created-and-deleted CRDs never exhaust the resource table */
	if (drop && inf_store_drop(ii->cfg.store, type) == 0)
		(void)inf_store_retire(ii->cfg.store, type);
	ii->inf[i] = ii->inf[--ii->n];
	return 0;
}

bool inf_informers_watching(const struct inf_informers *ii, const char *group, const char *resource)
{
	return find(ii, group, resource) >= 0;
}

bool inf_informers_all_synced(const struct inf_informers *ii)
{
	for (size_t i = 0; i < ii->n; i++)
		if (!inf_reflector_synced(ii->inf[i]->refl))
			return false;
	return ii->n > 0;
}

static void barrier_one(struct informer *in, uint32_t epoch, const char *rv)
{
	int r = inf_reflector_barrier(in->refl, ipc_now_usec(), epoch, rv);

	if (r == 1 && in->call) {
		/* the reflector forgot the call; its end (now or later) must not reach it */
		in->abandoned = true;
		kube_call_cancel(in->call);
	}
	if (r == 1 && inf_store_replacing(in->ii->cfg.store, in->type))
		inf_store_replace_abort(in->ii->cfg.store, in->type);
	schedule(in);
}

int inf_informers_barrier(struct inf_informers *ii, uint32_t epoch, const char *rv)
{
	if (!ii || !epoch || (rv && strlen(rv) >= sizeof(ii->epoch_rv)))
		return -EINVAL;
	ii->epoch = epoch;
	snprintf(ii->epoch_rv, sizeof(ii->epoch_rv), "%s", rv ? rv : "");
	for (size_t i = 0; i < ii->n; i++)
		barrier_one(ii->inf[i], epoch, ii->epoch_rv);
	return (int)ii->n;
}

size_t inf_informers_barrier_pending(const struct inf_informers *ii)
{
	size_t n = 0;

	for (size_t i = 0; ii->epoch && i < ii->n; i++)
		if (inf_reflector_barrier_epoch(ii->inf[i]->refl) != ii->epoch)
			n++;
	return n;
}

size_t inf_informers_count(const struct inf_informers *ii)
{
	return ii->n;
}

uint64_t inf_informers_lists(const struct inf_informers *ii)
{
	uint64_t n = 0;
	struct inf_reflector_stats st;

	for (size_t i = 0; i < ii->n; i++) {
		inf_reflector_get_stats(ii->inf[i]->refl, &st);
		n += st.lists;
	}
	return n;
}

int inf_informers_prune(struct inf_informers *ii)
{
	int n = 0, err = 0;

	if (!ii)
		return -EINVAL;
	for (size_t i = 0; i < ii->n; i++) {
		int r = inf_store_prune(ii->cfg.store, ii->inf[i]->type);

		if (r < 0) {
			note(ii->inf[i], "cannot prune the objects the cache filter refuses", r);
			err = r;
		} else {
			n += r;
		}
	}
	return err < 0 ? err : n;
}
