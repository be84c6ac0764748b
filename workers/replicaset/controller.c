/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/replicaset/controller.c: the ReplicaSet controller inside a kcmd-worker process.
 *
 * It reads the ReplicaSet and its candidate pods (controlled by it, plus the namespace's
 * orphans) from the arena, runs rs_sync() (workers/replicaset/sync.h: upstream's
 * syncReplicaSet), and backs rs_sync's executor with the API client:
 *   get_rs        GET apps/v1 replicasets (uncached, as upstream's adoption recheck)
 *   patch_pod     PATCH pods, strategic merge (adopt / release); the response's
 *                 resourceVersion feeds the staleness gate
 *   create_pods   POST pods: a slow-start batch is sent as concurrent requests
 *                 (kube_client_request_many: one HTTP/2 connection, the client's QPS limiter)
 *                 and returns when all finished, as upstream's goroutines + wg.Wait
 *   delete_pods   DELETE pods, all of them concurrently, default options
 *   update_status PATCH replicasets/status, JSON merge patch carrying the resourceVersion (the
 *                 same optimistic lock as upstream's PUT: 409 on a stale version; the arena keeps
 *                 the compact record, not the whole object a PUT would need). If the PATCH is
 *                 refused with 403 (the bootstrap controller role grants only update), the
 *                 process switches to GET + PUT, keeping the resourceVersion check (put_status)
 *   record_event  core/v1 Events, as upstream's one EventBroadcaster per controller: the
 *                 event is pushed (never blocking; dropped when full) onto the controller's
 *                 shared queue (evq.h, in the expectations memfd). One sink thread per
 *                 controller (the worker process holding the queue's sink lock) takes them in
 *                 order and writes each through the Event sink every controller uses
 *                 (lib/evrec.h: the one EventCorrelator, new ones POSTed, counted repeats
 *                 PATCHed (404: POSTed again), a write without an answer retried up to 12 times
 *                 10 s apart, client-go's recordToSink) with a blocking call through its own
 *                 client on the controller's shared token bucket.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "shm/records.h"
#include "kube/encode.h"
#include "kube/limiter.h"
#include "kube/proto.h"
#include "kube/restmetrics.h"
#include "kube/selector.h"
#include "lib/features.h"
#include "lib/log.h"
#include "shm/record-model.h"
#include "lib/evrec.h"
#include "workers/replicaset/evq.h"
#include "workers/replicaset/events.h"
#include "workers/replicaset/expectations.h"
#include "workers/replicaset/flavour.h"
#include "workers/replicaset/sync.h"
#include "workers/worker.h"

struct rsc {
	struct wk_ctx *ctx;
	const struct rs_flavour *fl; /* ReplicaSets or ReplicationControllers */
	struct rs_exp *exp;
	int pod_type, rs_type;
	bool caches_synced; /* once true, stays (a relist keeps serving the old contents) */
	bool status_put;    /* PATCH on replicasets/status was refused (403): PUT from now on */
	char host[256];
	/* the event pipeline: the controller's shared queue; the sink (thread) of this process */
	struct rs_evq *evq;
	struct evrec_sink *sink;     /* the correlator and writer (sink thread only) */
	struct kube_client *sink_kc; /* the sink's client (sink thread only) */
	struct kube_limiter *sink_lim;
	pthread_t sink_th;
	bool sink_started;
	_Atomic bool sink_stop;
	_Atomic bool sink_exited;
};

static int sink_start(struct rsc *c);
static bool sink_stop(struct rsc *c);

static int rsc_init_flavour(struct wk_ctx *ctx, const struct rs_flavour *fl, void **ret)
{
	struct rsc *c = calloc(1, sizeof(*c));
	int r;

	if (!c)
		return -ENOMEM;
	c->ctx = ctx;
	c->fl = fl;
	c->pod_type = c->rs_type = -1;
	/* upstream's recorder source is {Component: "replicaset-controller"} without a host, so
	 * source.host is absent and reportingInstance "" (c->host stays empty) */
	if (ctx->expectations_fd < 0) {
		free(c);
		return -EBADF;
	}
	r = rs_exp_attach(ctx->expectations_fd, RS_EXP_WORKER, rs_exp_now(), &c->exp);
	if (r < 0) {
		free(c);
		return r;
	}
	r = evrec_sink_new(&c->sink);
	if (r < 0) {
		rs_exp_detach(c->exp);
		free(c);
		return r;
	}
	uint64_t off = 0;
	if ((r = rs_exp_evq_offset(ctx->expectations_fd, &off)) < 0 ||
	    (r = rs_evq_attach(ctx->expectations_fd, off, &c->evq)) < 0) {
		log_warning("the shared event queue is not available (%s): this process writes its "
		            "own Events",
		            strerror(-r));
		if ((r = rs_evq_new_private(&c->evq)) < 0)
			goto fail;
	}
	if ((r = sink_start(c)) < 0)
		goto fail;
	*ret = c;
	return 0;
fail:
	rs_evq_free(c->evq);
	evrec_sink_free(c->sink);
	rs_exp_detach(c->exp);
	free(c);
	return r;
}

static int rsc_init(struct wk_ctx *ctx, void **ret)
{
	return rsc_init_flavour(ctx, &rs_flavour_replicaset, ret);
}

static int rcc_init(struct wk_ctx *ctx, void **ret)
{
	return rsc_init_flavour(ctx, &rs_flavour_replicationcontroller, ret);
}

static void rsc_fini(void *state)
{
	struct rsc *c = state;

	if (!sink_stop(c)) {
		/* the sink thread is stuck in a request: leave what it uses, the process exits */
		rs_exp_detach(c->exp);
		return;
	}
	rs_evq_free(c->evq);
	evrec_sink_free(c->sink);
	rs_exp_detach(c->exp);
	free(c);
}

/* ---- executor over the blocking client ---------------------------------------------------- */

static int call(struct rsc *c, const struct kube_request *req, struct kube_response *resp,
                char **ret_msg)
{
	int r = kube_client_request(c->ctx->kc, req, NULL, NULL, resp);

	if (r < 0 && ret_msg)
		*ret_msg = strdup(resp->error.message[0] ? resp->error.message : strerror(-r));
	return r;
}

static int ex_get_rs(void *ud, const struct kube_replicaset *rs, struct kube_replicaset **ret,
                     char **ret_msg)
{
	struct rsc *c = ud;
	struct kube_request req = {.verb = KUBE_GET,
	                           .group = c->fl->group,
	                           .version = c->fl->version,
	                           .resource = c->fl->resource,
	                           .ns = rs->meta.namespace,
	                           .name = rs->meta.name};
	struct kube_response resp;
	int r = call(c, &req, &resp, ret_msg);

	if (r == 0) {
		r = kube_decode(c->fl->decode, resp.body, resp.body_len, 0, (void **)ret);
		if (r < 0 && ret_msg &&
		    asprintf(ret_msg, "decoding the %s failed", c->fl->kind) < 0)
			*ret_msg = NULL;
	}
	kube_response_clear(&resp);
	return r;
}

/* metadata.resourceVersion of a response body (malloc'd), NULL if absent */
static char *resp_rv(const struct kube_response *resp)
{
	char *rv = NULL;
	cJSON *o = cJSON_ParseWithLength(resp->body ? resp->body : "", resp->body_len);
	cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "metadata");
	cJSON *v = cJSON_GetObjectItemCaseSensitive(m, "resourceVersion");

	if (cJSON_IsString(v) && v->valuestring[0])
		rv = strdup(v->valuestring);
	cJSON_Delete(o);
	return rv;
}

static int ex_patch_pod_rv(void *ud, const struct kube_pod *pod, const char *body, char **ret_rv,
                           char **ret_msg)
{
	struct rsc *c = ud;
	struct kube_request req = {.verb = KUBE_PATCH,
	                           .version = "v1",
	                           .resource = "pods",
	                           .ns = pod->meta.namespace,
	                           .name = pod->meta.name,
	                           .body = body,
	                           .body_len = strlen(body),
	                           .patch_type = KUBE_PATCH_STRATEGIC};
	struct kube_response resp;
	int r = call(c, &req, &resp, ret_msg);

	if (r == 0 && ret_rv)
		*ret_rv = resp_rv(&resp);
	kube_response_clear(&resp);
	return r;
}

static int ex_patch_pod(void *ud, const struct kube_pod *pod, const char *body, char **ret_msg)
{
	return ex_patch_pod_rv(ud, pod, body, NULL, ret_msg);
}

/* controlled_pods_rv: an uncached metadata-only LIST of the pods rs's selector matches in its
 * namespace; the newest resourceVersion among those whose controller is rs. */
static int ex_controlled_pods_rv(void *ud, const struct kube_replicaset *rs, char **ret_rv,
                                 char **ret_msg)
{
	struct rsc *c = ud;
	struct kube_selector *sel = NULL;
	char *sels = NULL, err[160];
	int r;

	*ret_rv = NULL;
	if (!rs->selector || !rs->meta.uid)
		return -EINVAL;
	r = kube_selector_from_label_selector(rs->selector, &sel, err, sizeof err);
	if (r == 0 && kube_selector_is_nothing(sel))
		r = -EINVAL;
	if (r == 0)
		r = kube_selector_format(sel, &sels);
	kube_selector_free(sel);
	if (r < 0)
		return r;
	struct kube_request req = {.verb = KUBE_LIST,
	                           .version = "v1",
	                           .resource = "pods",
	                           .ns = rs->meta.namespace,
	                           .label_selector = sels,
	                           .metadata_only = true};
	struct kube_response resp;
	r = call(c, &req, &resp, ret_msg);
	free(sels);
	if (r < 0) {
		kube_response_clear(&resp);
		return r;
	}
	cJSON *list = cJSON_ParseWithLength(resp.body ? resp.body : "", resp.body_len);
	const cJSON *item;
	cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(list, "items"))
	{
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(item, "metadata");
		const cJSON *rv = cJSON_GetObjectItemCaseSensitive(m, "resourceVersion");
		const cJSON *ref;
		bool ours = false;
		cJSON_ArrayForEach(ref, cJSON_GetObjectItemCaseSensitive(m, "ownerReferences"))
		{
			const cJSON *uid = cJSON_GetObjectItemCaseSensitive(ref, "uid");
			if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ref, "controller")) &&
			    cJSON_IsString(uid) && strcmp(uid->valuestring, rs->meta.uid) == 0)
				ours = true;
		}
		int cmp;
		if (!ours || !cJSON_IsString(rv) ||
		    (*ret_rv && (rs_rv_compare(rv->valuestring, *ret_rv, &cmp) < 0 || cmp <= 0)))
			continue;
		free(*ret_rv);
		*ret_rv = strdup(rv->valuestring);
	}
	if (!list)
		r = -EBADMSG;
	cJSON_Delete(list);
	kube_response_clear(&resp);
	return r;
}

static void fill_result(const struct kube_response *resp, int r, struct rs_call_result *res)
{
	res->err = r;
	if (r < 0) {
		res->namespace_terminating = resp->error.namespace_terminating;
		res->msg = strdup(resp->error.message[0] ? resp->error.message : strerror(-r));
	}
}

/* ---- events: the sink ------------------------------------------------------------------- */

/* recordToSink for one queued event (lib/evrec.h: correlate, write, retry an unanswered write
 * up to 12 times, blocking this sink, as upstream's one goroutine). */
static void sink_record(struct rsc *c, struct kube_client *kc, const struct rs_evq_rec *rec)
{
	struct evrec_event ev = {.t = rec->t,
	                         .component = c->fl->component,
	                         .host = c->host,
	                         .kind = c->fl->kind,
	                         .api_version = c->fl->api_version,
	                         .ns = rec->ns,
	                         .name = rec->name,
	                         .uid = rec->uid,
	                         .rv = rec->rv,
	                         .type = rec->type,
	                         .reason = rec->reason,
	                         .message = rec->message};
	(void)evrec_sink_record(c->sink, kc, &ev, &c->sink_stop);
}

/* Writes every queued event now, in this thread (tests; a worker without a sink thread). */
static void sink_drain(struct rsc *c, struct kube_client *kc)
{
	struct rs_evq_rec *rec = malloc(sizeof(*rec));
	while (rec && rs_evq_pop(c->evq, rec, 0) == 1)
		sink_record(c, kc, rec);
	free(rec);
}

static void *sink_main(void *arg)
{
	struct rsc *c = arg;
	struct rs_evq_rec *rec = malloc(sizeof(*rec));
	bool held = false;

	while (rec && !atomic_load(&c->sink_stop)) {
		if (!held) {
			held = rs_evq_sink_lock(c->evq, 500) == 1;
			if (held)
				log_v(2,
				      "this process writes the %s controller's Events now "
				      "(queued: %u)",
				      c->fl->what, rs_evq_len(c->evq));
			continue;
		}
		if (rs_evq_pop(c->evq, rec, 500) == 1)
			sink_record(c, c->sink_kc, rec);
	}
	if (held)
		rs_evq_sink_unlock(c->evq);
	free(rec);
	atomic_store(&c->sink_exited, true);
	return NULL;
}

static int sink_start(struct rsc *c)
{
	struct wk_ctx *ctx = c->ctx;
	if (!ctx->config)
		return 0; /* no client config (tests): the caller drains the queue itself */
	/* the controller's token bucket, shared with this process's main client (workers/main.c) */
	const char *lf = getenv("KCMD_CLIENT_LIMITER_FD");
	int lfd = lf && *lf ? atoi(lf) : -1;
	if (ctx->qps > 0 &&
	    kube_limiter_open(lfd, ctx->qps, ctx->burst > 0 ? ctx->burst : 1, &c->sink_lim) < 0)
		c->sink_lim = NULL;
	struct kube_client_opts ko = {.config = ctx->config,
	                              .process = "worker",
	                              .controller = ctx->controller,
	                              .qps = ctx->qps,
	                              .burst = ctx->burst > 0 ? ctx->burst : 1,
	                              .insecure_ok = true,
	                              .limiter = c->sink_lim};
	int r = kube_client_new(&ko, &c->sink_kc);
	if (r < 0) {
		kube_limiter_free(c->sink_lim);
		c->sink_lim = NULL;
		return r;
	}
	kube_rest_metrics_attach_env(); /* before a second thread may make the first request */
	/* the sink never takes signals: SIGTERM/SIGINT stay with the main thread's signalfd (the
	 * worker blocks them after init; a thread created now would inherit them unblocked) */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r = -pthread_create(&c->sink_th, NULL, sink_main, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		kube_client_free(c->sink_kc);
		c->sink_kc = NULL;
		kube_limiter_free(c->sink_lim);
		c->sink_lim = NULL;
		return r;
	}
	c->sink_started = true;
	return 0;
}

/* Stops the sink thread. false when it did not stop in time (stuck in a request): its state is
 * then left alone (the process is exiting). */
static bool sink_stop(struct rsc *c)
{
	if (!c->sink_started)
		return true;
	atomic_store(&c->sink_stop, true);
	rs_evq_wake(c->evq);
	for (int i = 0; i < 300 && !atomic_load(&c->sink_exited); i++)
		usleep(10000);
	if (!atomic_load(&c->sink_exited)) {
		pthread_detach(c->sink_th);
		return false;
	}
	pthread_join(c->sink_th, NULL);
	kube_client_free(c->sink_kc);
	kube_limiter_free(c->sink_lim);
	c->sink_started = false;
	return true;
}

/* Runs n pod requests concurrently; responses in resps[0..n), order[] (may be NULL) their
 * completion order. */
static int run_batch(struct rsc *c, const struct kube_request *reqs, size_t n,
                     struct kube_response *resps, size_t *order)
{
	int r = kube_client_request_many(c->ctx->kc, reqs, n, resps, order);
	if (r < 0) {
		for (size_t i = 0; i < n; i++) {
			memset(&resps[i], 0, sizeof(resps[i]));
			resps[i].error.err = r;
			if (order)
				order[i] = i;
		}
	}
	return r;
}

static void ex_create_pods(void *ud, const struct kube_replicaset *rs, const char *body, size_t n,
                           struct rs_call_result *results)
{
	struct rsc *c = ud;
	struct kube_request *reqs = calloc(n + 1, sizeof(*reqs));
	struct kube_response *resps = calloc(n + 1, sizeof(*resps));
	size_t *order = calloc(n + 1, sizeof(*order));

	if (!reqs || !resps || !order) {
		for (size_t i = 0; i < n; i++)
			fill_result(&(struct kube_response){0}, -ENOMEM, &results[i]);
		goto out;
	}
	/* as client-go on a protobuf client: the create body as protobuf (encoded once for the
	 * batch), JSON when the transcoder does not know a field of the template */
	void *pb = NULL;
	size_t pb_len = 0;
	int enc = kube_client_protobuf(c->ctx->kc)
	                  ? kube_proto_encode_pod_json(body, strlen(body), &pb, &pb_len)
	                  : 0;
	if (enc < 0) {
		log_v(2, "%s/%s: pod template not sent as protobuf (%s): sending JSON",
		      rs->meta.namespace, rs->meta.name, strerror(-enc));
		pb = NULL;
	}
	for (size_t i = 0; i < n; i++)
		reqs[i] = (struct kube_request){.verb = KUBE_CREATE,
		                                .version = "v1",
		                                .resource = "pods",
		                                .ns = rs->meta.namespace,
		                                .body = pb ? pb : body,
		                                .body_len = pb ? pb_len : strlen(body),
		                                .body_protobuf = pb != NULL};
	uint64_t t0 = ipc_now_usec();
	(void)run_batch(c, reqs, n, resps, order);
	log_v(4, "%s/%s: slow-start batch of %zu pod creations done in %.1f ms", rs->meta.namespace,
	      rs->meta.name, n, (double)(ipc_now_usec() - t0) / 1000.0);
	/* results in completion order: the first error is the first to finish, as upstream's errCh
	 */
	for (size_t k = 0; k < n; k++) {
		struct kube_response *resp = &resps[order[k]];
		int r = resp->error.err;

		fill_result(resp, r, &results[k]);
		struct kube_pod *o;
		if (r == 0 && kube_decode_any(KUBE_KIND_POD, resp->body, resp->body_len, 0,
		                              (void **)&o) == 0) {
			if (o->meta.name)
				results[k].name = strdup(o->meta.name);
			if (o->meta.resource_version && o->meta.resource_version[0])
				results[k].rv = strdup(o->meta.resource_version);
			kube_object_free(o);
		}
	}
	free(pb);
	for (size_t i = 0; i < n; i++)
		kube_response_clear(&resps[i]);
out:
	free(reqs);
	free(resps);
	free(order);
}

static void ex_delete_pods(void *ud, const struct kube_replicaset *rs,
                           const struct kube_pod *const *pods, size_t n,
                           struct rs_call_result *results)
{
	struct rsc *c = ud;
	struct kube_request *reqs = calloc(n + 1, sizeof(*reqs));
	struct kube_response *resps = calloc(n + 1, sizeof(*resps));

	(void)rs;
	if (!reqs || !resps) {
		for (size_t i = 0; i < n; i++)
			fill_result(&(struct kube_response){0}, -ENOMEM, &results[i]);
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		reqs[i] = (struct kube_request){.verb = KUBE_DELETE,
		                                .version = "v1",
		                                .resource = "pods",
		                                .ns = pods[i]->meta.namespace,
		                                .name = pods[i]->meta.name};
	size_t *order = calloc(n + 1, sizeof(*order));
	(void)run_batch(c, reqs, n, resps, order);
	for (size_t i = 0; i < n; i++) {
		fill_result(&resps[i], resps[i].error.err, &results[i]);
		kube_response_clear(&resps[i]);
	}
	for (size_t k = 0; order && k < n; k++)
		results[order[k]].done_rank = (uint32_t)k;
	free(order);
out:
	free(reqs);
	free(resps);
}

/*
 * PUT replicasets/status, as upstream's UpdateStatus: the arena keeps no labels or annotations,
 * so the whole object comes from an uncached GET, its status is replaced and it is PUT back.
 * The optimistic lock stays the one upstream has on its cached copy: if the GET shows another
 * resourceVersion than the one this sync read, that is a conflict (409) without a write.
 */
static int conflict(const struct rsc *c, const struct kube_replicaset *rs, char **ret_msg)
{
	if (ret_msg && asprintf(ret_msg,
	                        "Operation cannot be fulfilled on %s \"%s\": the "
	                        "object has been modified; please apply your changes to the latest "
	                        "version and try again",
	                        c->fl->group_resource, rs->meta.name) < 0)
		*ret_msg = NULL;
	return -ESTALE; /* what a 409 Conflict maps to (kube/errors.c) */
}

/* put_status() on a protobuf client: the ReplicaSet came back as protobuf, so it is PUT back as
 * protobuf (client-go's UpdateStatus on --kube-api-content-type's default) with the status
 * from the patch's "status" object. Consumes *got. */
static int put_status_pb(struct rsc *c, const struct kube_replicaset *rs, const char *patch,
                         struct kube_response *got, char **ret_rv, char **ret_msg)
{
	struct kube_replicaset *cur = NULL;
	void *body = NULL;
	size_t len = 0;
	char *st_json = NULL;
	int r = kube_decode_any(KUBE_KIND_REPLICASET, got->body, got->body_len, 0, (void **)&cur);
	if (r == 0 && (!rs->meta.resource_version || !cur->meta.resource_version ||
	               strcmp(cur->meta.resource_version, rs->meta.resource_version) != 0)) {
		r = conflict(c, rs, ret_msg);
		goto out;
	}
	cJSON *p = r == 0 ? cJSON_Parse(patch) : NULL;
	cJSON *st = cJSON_GetObjectItemCaseSensitive(p, "status");
	st_json = cJSON_IsObject(st) ? cJSON_PrintUnformatted(st) : NULL;
	cJSON_Delete(p);
	if (r < 0 || !st_json ||
	    (r = kube_proto_rs_with_status(got->body, got->body_len, st_json, strlen(st_json),
	                                   &body, &len)) < 0) {
		r = r < 0 ? r : -EIO;
		if (ret_msg)
			*ret_msg = strdup(
			        "the ReplicaSet read back for the status update is malformed");
		goto out;
	}
	struct kube_request put = {.verb = KUBE_UPDATE,
	                           .group = c->fl->group,
	                           .version = c->fl->version,
	                           .resource = c->fl->resource,
	                           .ns = rs->meta.namespace,
	                           .name = rs->meta.name,
	                           .subresource = "status",
	                           .body = body,
	                           .body_len = len,
	                           .body_protobuf = true};
	struct kube_response resp;
	r = call(c, &put, &resp, ret_msg);
	struct kube_replicaset *done;
	if (r == 0 && ret_rv &&
	    kube_decode_any(KUBE_KIND_REPLICASET, resp.body, resp.body_len, 0, (void **)&done) ==
	            0) {
		if (done->meta.resource_version && done->meta.resource_version[0])
			*ret_rv = strdup(done->meta.resource_version);
		kube_object_free(done);
	}
	kube_response_clear(&resp);
out:
	kube_object_free(cur);
	free(st_json);
	free(body);
	kube_response_clear(got);
	return r;
}

static int put_status(struct rsc *c, const struct kube_replicaset *rs, const char *patch,
                      char **ret_rv, char **ret_msg)
{
	struct kube_request get = {.verb = KUBE_GET,
	                           .group = c->fl->group,
	                           .version = c->fl->version,
	                           .resource = c->fl->resource,
	                           .ns = rs->meta.namespace,
	                           .name = rs->meta.name,
	                           .protobuf_ok = c->fl->status_protobuf};
	struct kube_response resp;
	int r = call(c, &get, &resp, ret_msg);
	if (r < 0) {
		kube_response_clear(&resp);
		return r;
	}
	if (kube_proto_is(resp.body, resp.body_len))
		return put_status_pb(c, rs, patch, &resp, ret_rv, ret_msg);
	cJSON *obj = cJSON_ParseWithLength(resp.body ? resp.body : "", resp.body_len);
	cJSON *p = cJSON_Parse(patch);
	kube_response_clear(&resp);
	cJSON *st = cJSON_DetachItemFromObjectCaseSensitive(p, "status");
	cJSON *rv = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "resourceVersion");
	char *body = NULL;
	if (!cJSON_IsObject(obj) || !st || !cJSON_IsString(rv)) {
		r = -EIO;
		if (ret_msg)
			*ret_msg = strdup(
			        "the ReplicaSet read back for the status update is malformed");
	} else if (!rs->meta.resource_version ||
	           strcmp(rv->valuestring, rs->meta.resource_version) != 0) {
		r = conflict(c, rs, ret_msg);
	} else {
		/* the merge patch's null for an absent terminatingReplicas: a field a
		 * ReplicationController's status does not have, so not sent in a PUT */
		if (cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(st, "terminatingReplicas")))
			cJSON_DeleteItemFromObjectCaseSensitive(st, "terminatingReplicas");
		cJSON_DeleteItemFromObjectCaseSensitive(obj, "status");
		cJSON_AddItemToObject(obj, "status", st);
		st = NULL;
		body = cJSON_PrintUnformatted(obj);
		r = body ? 0 : -ENOMEM;
	}
	cJSON_Delete(st);
	cJSON_Delete(p);
	cJSON_Delete(obj);
	if (r < 0)
		return r;
	struct kube_request put = {.verb = KUBE_UPDATE,
	                           .group = c->fl->group,
	                           .version = c->fl->version,
	                           .resource = c->fl->resource,
	                           .ns = rs->meta.namespace,
	                           .name = rs->meta.name,
	                           .subresource = "status",
	                           .body = body,
	                           .body_len = strlen(body),
	                           .body_kind = c->fl->kind /* protobuf on a protobuf client */};
	r = call(c, &put, &resp, ret_msg);
	if (r == 0 && ret_rv)
		*ret_rv = resp_rv(&resp);
	kube_response_clear(&resp);
	free(body);
	return r;
}

static int ex_update_status_rv(void *ud, const struct kube_replicaset *rs,
                               const struct kube_rs_status *st, char **ret_rv, char **ret_msg)
{
	struct rsc *c = ud;
	char *body = NULL;
	int r = kube_encode_rs_status_merge_patch(rs->meta.resource_version, st, &body);

	if (r < 0) {
		if (ret_msg)
			*ret_msg = strdup("encoding the status failed");
		return r;
	}
	if (c->status_put) {
		r = put_status(c, rs, body, ret_rv, ret_msg);
		free(body);
		return r;
	}
	struct kube_request req = {.verb = KUBE_PATCH,
	                           .group = c->fl->group,
	                           .version = c->fl->version,
	                           .resource = c->fl->resource,
	                           .ns = rs->meta.namespace,
	                           .name = rs->meta.name,
	                           .subresource = "status",
	                           .body = body,
	                           .body_len = strlen(body),
	                           .patch_type = KUBE_PATCH_MERGE};
	struct kube_response resp;
	r = call(c, &req, &resp, ret_msg);
	if (r == -EACCES) {
		/* not this call's outcome: the PUT below answers for it */
		if (ret_msg) {
			free(*ret_msg);
			*ret_msg = NULL;
		}
		/* the bootstrap role system:controller:replicaset-controller grants update, not
		 * patch, on replicasets/status (what --use-service-account-credentials runs as) */
		kube_response_clear(&resp);
		c->status_put = true;
		log_info("PATCH %s/status refused (403): writing status with GET + PUT "
		         "from now on",
		         c->fl->resource);
		r = put_status(c, rs, body, ret_rv, ret_msg);
		free(body);
		return r;
	}
	if (r == 0 && ret_rv)
		*ret_rv = resp_rv(&resp);
	kube_response_clear(&resp);
	free(body);
	return r;
}

static int ex_update_status(void *ud, const struct kube_replicaset *rs,
                            const struct kube_rs_status *st, char **ret_msg)
{
	return ex_update_status_rv(ud, rs, st, NULL, ret_msg);
}

/* The recorder: makeEvent + the broadcaster's non-blocking send onto the controller's queue. */
static void ex_record_event(void *ud, const struct kube_replicaset *rs, const char *type,
                            const char *reason, const char *message)
{
	struct rsc *c = ud;
	struct rs_evq_rec *rec = calloc(1, sizeof(*rec));

	/* the broadcaster's StartStructuredLogging(3): every event, before correlation */
	log_v(3,
	      "Event occurred: object=\"%s/%s\" fieldPath=\"\" kind=\"%s\" apiVersion=\"%s\" "
	      "type=\"%s\" reason=\"%s\" "
	      "message=\"%s\"",
	      rs->meta.namespace, rs->meta.name, c->fl->kind, c->fl->api_version, type, reason,
	      message);
	if (!rec)
		return;
	rec->t = kube_time_now();
	snprintf(rec->ns, sizeof rec->ns, "%s", rs->meta.namespace ? rs->meta.namespace : "");
	snprintf(rec->name, sizeof rec->name, "%s", rs->meta.name ? rs->meta.name : "");
	snprintf(rec->uid, sizeof rec->uid, "%s", rs->meta.uid ? rs->meta.uid : "");
	snprintf(rec->rv, sizeof rec->rv, "%s",
	         rs->meta.resource_version ? rs->meta.resource_version : "");
	snprintf(rec->type, sizeof rec->type, "%s", type ? type : "");
	snprintf(rec->reason, sizeof rec->reason, "%s", reason ? reason : "");
	snprintf(rec->message, sizeof rec->message, "%s", message ? message : "");
	if (rs_evq_push(c->evq, rec) == -ENOBUFS) {
		kube_rest_metrics_event_dropped();
		log_error(
		        "unable to record event %s on %s/%s: too many queued events, dropped event",
		        reason, rs->meta.namespace, rs->meta.name);
	}
	free(rec);
}

/* ---- reading the arena ----------------------------------------------------------------------- */

struct podlist {
	struct shm_pod_view *v;
	size_t n, cap;
	const char *only_controller; /* keep only pods controlled by this uid (NULL: keep all) */
	/* keep only pods this selector matches (NULL: keep all); a record's compiled selector */
	const struct kube_label_selector *sel;
	int err;
};

static int collect_pod(const struct shm_obj *o, void *ud)
{
	struct podlist *l = ud;
	struct shm_obj copy;
	int r;

	if (l->only_controller) {
		const struct shm_owner_ref *ref = shm_obj_controller(o);
		if (!ref || strcmp(ref->uid, l->only_controller) != 0)
			return 0;
	}
	if (l->sel) {
		struct kube_kv small[64], *kv = small;
		size_t n = o->n_labels;
		if (n > 64 && !(kv = malloc(n * sizeof(*kv))))
			return l->err = -ENOMEM;
		for (size_t i = 0; i < n; i++)
			kv[i] = (struct kube_kv){o->labels[i].key, o->labels[i].value};
		bool match = shm_rec_selector_match(l->sel, kv, (uint32_t)n);
		if (kv != small)
			free(kv);
		if (!match)
			return 0;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct shm_pod_view *nv = realloc(l->v, cap * sizeof(*nv));
		if (!nv)
			return l->err = -ENOMEM;
		l->v = nv;
		l->cap = cap;
	}
	if ((r = shm_obj_dup(o, &copy)) < 0)
		return l->err = r;
	if ((r = shm_pod_view_init(&copy, &l->v[l->n])) < 0) {
		shm_pod_view_free(&l->v[l->n]); /* it took the copy */
		return l->err = r;
	}
	l->n++;
	return 0;
}

static void podlist_free(struct podlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		shm_pod_view_free(&l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int resolve_types(struct rsc *c)
{
	if (c->pod_type < 0)
		c->pod_type = shm_reader_find_type(c->ctx->arena, "", "v1", "pods");
	if (c->rs_type < 0)
		c->rs_type = shm_reader_find_type(c->ctx->arena, c->fl->group, c->fl->version,
		                                  c->fl->resource);
	return c->pod_type >= 0 && c->rs_type >= 0 ? 0 : -EAGAIN;
}

/* Both informers have completed their initial list (the arena's synced flags). */
static bool caches_synced(struct rsc *c)
{
	struct shm_type_info ti;

	if (c->caches_synced)
		return true;
	if (shm_reader_type_info(c->ctx->arena, (uint16_t)c->pod_type, &ti) < 0 || !ti.synced)
		return false;
	if (shm_reader_type_info(c->ctx->arena, (uint16_t)c->rs_type, &ti) < 0 || !ti.synced)
		return false;
	c->caches_synced = true;
	return true;
}

struct sibctx {
	struct rsc *c;
	struct podlist *out;
	const char *ctrl_uid;
	int err;
};

/* A dependent of the shared controller: if it is a ReplicaSet controlled by it, add the pods of
 * its namespace that its selector matches (upstream lists by selector, not by owner). */
static int sibling_visit(const struct shm_obj *o, void *ud)
{
	struct sibctx *sc = ud;
	const struct shm_owner_ref *ref;
	struct shm_rec_selector sel;

	if (o->type != (uint16_t)sc->c->rs_type)
		return 0;
	ref = shm_obj_controller(o);
	if (!ref || strcmp(ref->uid, sc->ctrl_uid) != 0)
		return 0;
	/* the selector as compiled when stored; nil or invalid selects nothing */
	if (shm_rec_selector_get(o, &sel) < 0 || sel.state != SHM_REC_SEL_VALID) {
		shm_rec_selector_free(&sel);
		return 0;
	}
	sc->out->sel = &sel.ls;
	int r = shm_reader_list_ns(sc->c->ctx->arena, (uint16_t)sc->c->pod_type, o->ns, collect_pod,
	                           sc->out);
	sc->out->sel = NULL;
	shm_rec_selector_free(&sel);
	if (r < 0)
		sc->err = r;
	return r < 0 ? r : 0;
}

static int cmp_pod_uid(const void *a, const void *b)
{
	const struct shm_pod_view *x = a, *y = b;

	return strcmp(x->pod.meta.uid ? x->pod.meta.uid : "",
	              y->pod.meta.uid ? y->pod.meta.uid : "");
}

/* The pods of every ReplicaSet that shares rs's controller, rs included (a Deployment's
 * ReplicaSets): upstream's getIndirectlyRelatedPods, each pod once, for the scale-down ranking. */
static int related_pods(struct rsc *c, const struct kube_replicaset *rs, struct podlist *out)
{
	const struct kube_owner_ref *ctrl = kube_controller_of(&rs->meta);
	struct sibctx sc = {c, out, NULL, 0};

	if (!ctrl || !ctrl->uid)
		return 0;
	sc.ctrl_uid = ctrl->uid;
	int r = shm_reader_list_dependents(c->ctx->arena, ctrl->uid, sibling_visit, &sc);
	if (r < 0 || sc.err < 0)
		return r < 0 ? r : sc.err;
	qsort(out->v, out->n, sizeof(*out->v), cmp_pod_uid);
	size_t k = 0;
	for (size_t i = 0; i < out->n; i++) {
		if (k > 0 && cmp_pod_uid(&out->v[k - 1], &out->v[i]) == 0) {
			shm_pod_view_free(&out->v[i]);
			continue;
		}
		if (k != i)
			out->v[k] = out->v[i];
		k++;
	}
	out->n = k;
	return 0;
}

/* The gates as the manager passed them (--feature-gates; v1.37 defaults otherwise). The
 * staleness gate needs AtomicFIFO too, as upstream's controller does. */
static struct rs_features rs_features(const struct rs_flavour *fl)
{
	struct rs_features f = RS_FEATURES_DEFAULT;

	f.status_terminating = fl->status_terminating;
	f.terminating_replicas = kcmd_feature_enabled(KCMD_FEAT_DEPLOYMENT_RS_TERMINATING_REPLICAS);
	f.pod_deletion_cost = kcmd_feature_enabled(KCMD_FEAT_POD_DELETION_COST);
	f.stale_consistency = fl->consistency &&
	                      kcmd_feature_enabled(KCMD_FEAT_STALE_CONSISTENCY_RS) &&
	                      kcmd_feature_enabled(KCMD_FEAT_ATOMIC_FIFO);
	return f;
}

static int64_t mono_now(void *ud)
{
	(void)ud;
	return rs_exp_now();
}

static void rsc_sync(void *state, size_t q, const char *key, struct wk_result *out)
{
	struct rsc *c = state;
	char ns[254], name[254];
	const char *slash = strchr(key, '/');
	struct shm_obj obj = SHM_OBJ_INIT;
	struct shm_rs_view w = {0};
	struct podlist pods = {0}, rel = {0};
	const struct kube_pod **pv = NULL, **rv = NULL;
	bool have_rs = false;
	int r;

	(void)q;
	memset(out, 0, sizeof(*out));
	if (!slash || (size_t)(slash - key) >= sizeof(ns) || strlen(slash + 1) >= sizeof(name)) {
		log_error("invalid key %s: dropped", key);
		return; /* client-go: utilruntime.HandleError, Forget */
	}
	memcpy(ns, key, (size_t)(slash - key));
	ns[slash - key] = 0;
	snprintf(name, sizeof(name), "%s", slash + 1);
	if (resolve_types(c) < 0) {
		out->err = -EAGAIN; /* informerd has not registered the types yet: retry later */
		return;
	}
	if (!caches_synced(c)) {
		/* upstream starts its workers only once both informers have synced: a sync on a
		 * half-listed cache would miss pods (and create pods where orphans wait to be
		 * adopted). Keep the key until the cache is complete. */
		log_v(4, "%s: waiting for the %s and pod caches to sync", key, c->fl->what);
		out->requeue_after = true;
		out->after_usec = 100000;
		return;
	}
	/* the stores' last synced versions, read before the objects (LastStoreSyncResourceVersion)
	 */
	struct shm_type_info pti, rti;
	char read_rv[RS_EXP_CONS_RESOURCES][sizeof(pti.rv)];
	memset(read_rv, 0, sizeof(read_rv));
	if (shm_reader_type_info(c->ctx->arena, (uint16_t)c->pod_type, &pti) == 0)
		memcpy(read_rv[RS_CONS_PODS], pti.rv, sizeof(pti.rv));
	if (shm_reader_type_info(c->ctx->arena, (uint16_t)c->rs_type, &rti) == 0)
		memcpy(read_rv[RS_CONS_REPLICASETS], rti.rv, sizeof(rti.rv));
	read_rv[RS_CONS_PODS][sizeof(pti.rv) - 1] =
	        read_rv[RS_CONS_REPLICASETS][sizeof(rti.rv) - 1] = 0;
	r = shm_reader_get(c->ctx->arena, (uint16_t)c->rs_type, ns, name, &obj);
	if (r == 0) {
		r = shm_rs_view_init(&obj, &w);
		if (r < 0) {
			shm_rs_view_free(&w);
			log_error("%s: unreadable %s record: %s", key, c->fl->what, strerror(-r));
			out->err = r;
			goto done;
		}
		have_rs = true;
		r = shm_reader_list_controlled(c->ctx->arena, (uint16_t)c->pod_type, w.rs.meta.uid,
		                               ns, collect_pod, &pods);
		if (r >= 0)
			r = related_pods(c, &w.rs, &rel);
		if (r < 0 || pods.err < 0 || rel.err < 0) {
			log_error("%s: reading pods from the cache failed: %s", key,
			          strerror(-(r < 0      ? r
			                     : pods.err ? pods.err
			                                : rel.err)));
			out->err = r < 0 ? r : pods.err ? pods.err : rel.err;
			goto done;
		}
	} else if (r != -ENOENT) {
		log_error("%s: reading the cache failed: %s", key, strerror(-r));
		out->err = r;
		goto done;
	}
	pv = calloc(pods.n + 1, sizeof(*pv));
	rv = calloc(rel.n + 1, sizeof(*rv));
	if (!pv || !rv) {
		out->err = -ENOMEM;
		goto done;
	}
	for (size_t i = 0; i < pods.n; i++)
		pv[i] = &pods.v[i].pod;
	for (size_t i = 0; i < rel.n; i++)
		rv[i] = &rel.v[i].pod;

	struct rs_sync_input in = {.key = key,
	                           .rs = have_rs ? &w.rs : NULL,
	                           .pods = pv,
	                           .n_pods = pods.n,
	                           .related = rv,
	                           .n_related = rel.n,
	                           .exp = c->exp,
	                           .kind = c->fl->kind,
	                           .api_version = c->fl->api_version,
	                           .features = rs_features(c->fl),
	                           .mono = mono_now};
	in.read_rv[RS_CONS_PODS] = read_rv[RS_CONS_PODS];
	in.read_rv[RS_CONS_REPLICASETS] = read_rv[RS_CONS_REPLICASETS];
	struct rs_executor ex = {.ud = c,
	                         .get_rs = ex_get_rs,
	                         .patch_pod = ex_patch_pod,
	                         .create_pods = ex_create_pods,
	                         .delete_pods = ex_delete_pods,
	                         .update_status = ex_update_status,
	                         .record_event = ex_record_event,
	                         .patch_pod_rv = ex_patch_pod_rv,
	                         .controlled_pods_rv = ex_controlled_pods_rv,
	                         .update_status_rv = ex_update_status_rv};
	struct rs_sync_result res;
	uint64_t t0 = ipc_now_usec();
	rs_sync(&in, &ex, &res);
	if (!c->sink_started)
		sink_drain(c, c->ctx->kc); /* no sink thread (no client config): write them now */
	if (res.stale_skip)
		log_v(2, "%s: skipping sync, the cache is older than our last write: %s", key,
		      res.err_msg);
	log_v(4, "synced %s in %.3f ms: created %d deleted %d status %s%s%s", key,
	      (double)(ipc_now_usec() - t0) / 1000.0, res.created, res.deleted,
	      res.status_written ? "written" : "unchanged", res.err ? ", error: " : "",
	      res.err ? (res.err_msg ? res.err_msg : strerror(-res.err)) : "");
	if (res.invalid_selector)
		log_error("%s: invalid selector: not syncing", key);
	if (res.err == -ENOSPC)
		log_error("sync %s failed: %s", key,
		          res.err_msg ? res.err_msg : strerror(-res.err));
	else if (res.err < 0)
		log_warning("sync %s failed: %s", key,
		            res.err_msg ? res.err_msg : strerror(-res.err));
	out->err = res.err;
	if (res.err == 0 && res.requeue) {
		out->requeue_after = true;
		out->after_usec =
		        res.requeue_after_ns > 0 ? (uint64_t)res.requeue_after_ns / 1000 : 0;
	}
	rs_sync_result_free(&res);
done:
	free(pv);
	free(rv);
	podlist_free(&pods);
	podlist_free(&rel);
	if (have_rs)
		shm_rs_view_free(&w);
	else
		shm_obj_release(&obj);
}

static const char *const rs_queues[] = {"replicaset", NULL};

const struct wk_controller wk_replicaset_controller = {
        .name = "replicaset-controller",
        .queues = rs_queues,
        .init = rsc_init,
        .sync = rsc_sync,
        .fini = rsc_fini,
};

/* The replication controller: the same engine over ReplicationControllers (flavour.h). */
static const char *const rc_queues[] = {"replicationmanager", NULL};

const struct wk_controller wk_replicationcontroller_controller = {
        .name = "replicationcontroller-controller",
        .queues = rc_queues,
        .init = rcc_init,
        .sync = rsc_sync,
        .fini = rsc_fini,
};
