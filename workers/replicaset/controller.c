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
 *   record_event  core/v1 Events through client-go's EventCorrelator (evcorr.h): counted
 *                 repeats are PATCHed, new ones POSTed. Events are queued and sent together
 *                 with the next batch of pod calls or at the end of the sync (upstream's
 *                 recorder is asynchronous too); two writes of one Event never share a batch.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "informerd/records.h"
#include "kube/encode.h"
#include "kube/selector.h"
#include "manager/features.h"
#include "manager/log.h"
#include "workers/objects.h"
#include "workers/replicaset/evcorr.h"
#include "workers/replicaset/events.h"
#include "workers/replicaset/expectations.h"
#include "workers/replicaset/sync.h"
#include "workers/worker.h"

/* An Event write waiting for the next batch of calls. */
struct pev {
	struct rs_evc_event ev; /* strings owned (component/kind/api_version are constants) */
	char *rs_rv;		/* involvedObject.resourceVersion */
	struct rs_evc_result res;
	int tries;		/* writes that failed without an answer so far */
	uint64_t not_before;	/* retry: not before this ipc_now_usec() */
};

#define RSC_MAX_PENDING_EVENTS 256
/* client-go's recordToSink: an Event write that got no answer from the server (not a Status) is
 * tried up to 12 times, 10 s apart (the first wait random within those 10 s) */
#define RSC_EVENT_MAX_TRIES 12
static uint64_t rsc_event_retry_usec = 10000000; /* tests shorten it */

struct rsc {
	struct wk_ctx *ctx;
	struct rs_exp *exp;
	struct rs_evc *evc;
	int pod_type, rs_type;
	bool caches_synced; /* once true, stays (a relist keeps serving the old contents) */
	bool status_put;    /* PATCH on replicasets/status was refused (403): PUT from now on */
	char host[256];
	struct pev pend[RSC_MAX_PENDING_EVENTS];
	size_t n_pend;
	struct pev retry[RSC_MAX_PENDING_EVENTS]; /* failed writes waiting to be tried again */
	size_t n_retry;
};

static const char *const rs_queues[] = { "replicaset", NULL };

static int rsc_init(struct wk_ctx *ctx, void **ret)
{
	struct rsc *c = calloc(1, sizeof(*c));
	int r;

	if (!c)
		return -ENOMEM;
	c->ctx = ctx;
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
	r = rs_evc_new(&c->evc);
	if (r < 0) {
		rs_exp_detach(c->exp);
		free(c);
		return r;
	}
	*ret = c;
	return 0;
}

static void pev_free(struct pev *p)
{
	free((char *)p->ev.host);
	free((char *)p->ev.ns);
	free((char *)p->ev.name);
	free((char *)p->ev.uid);
	free((char *)p->ev.type);
	free((char *)p->ev.reason);
	free((char *)p->ev.message);
	free(p->rs_rv);
	rs_evc_result_free(&p->res);
	memset(p, 0, sizeof(*p));
}

static void flush_events(struct rsc *c);

static void rsc_fini(void *state)
{
	struct rsc *c = state;

	flush_events(c);
	for (size_t i = 0; i < c->n_retry; i++)
		pev_free(&c->retry[i]);
	rs_evc_free(c->evc);
	rs_exp_detach(c->exp);
	free(c);
}

/* ---- executor over the blocking client ---------------------------------------------------- */

static int call(struct rsc *c, const struct kube_request *req, struct kube_response *resp, char **ret_msg)
{
	int r = kube_client_request(c->ctx->kc, req, NULL, NULL, resp);

	if (r < 0 && ret_msg)
		*ret_msg = strdup(resp->error.message[0] ? resp->error.message : strerror(-r));
	return r;
}

static int ex_get_rs(void *ud, const struct kube_replicaset *rs, struct kube_replicaset **ret, char **ret_msg)
{
	struct rsc *c = ud;
	struct kube_request req = { .verb = KUBE_GET, .group = "apps", .version = "v1", .resource = "replicasets",
				    .ns = rs->meta.namespace, .name = rs->meta.name };
	struct kube_response resp;
	int r = call(c, &req, &resp, ret_msg);

	if (r == 0) {
		r = kube_decode_replicaset(resp.body, resp.body_len, 0, ret);
		if (r < 0 && ret_msg)
			*ret_msg = strdup("decoding the ReplicaSet failed");
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

static int ex_patch_pod_rv(void *ud, const struct kube_pod *pod, const char *body, char **ret_rv, char **ret_msg)
{
	struct rsc *c = ud;
	struct kube_request req = { .verb = KUBE_PATCH, .version = "v1", .resource = "pods", .ns = pod->meta.namespace,
				    .name = pod->meta.name, .body = body, .body_len = strlen(body),
				    .patch_type = KUBE_PATCH_STRATEGIC };
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

static void fill_result(const struct kube_response *resp, int r, struct rs_call_result *res)
{
	res->err = r;
	if (r < 0) {
		res->namespace_terminating = resp->error.namespace_terminating;
		res->msg = strdup(resp->error.message[0] ? resp->error.message : strerror(-r));
	}
}

/* ---- events ------------------------------------------------------------------------------- */

static int event_create_body(struct rsc *c, const struct pev *p, char **ret)
{
	struct kube_event ev = { .ns = p->ev.ns, .kind = p->ev.kind, .api_version = p->ev.api_version,
				 .name = p->ev.name, .uid = p->ev.uid, .resource_version = p->rs_rv,
				 .type = p->ev.type, .reason = p->ev.reason, .message = p->res.message,
				 .component = p->ev.component, .host = c->host[0] ? c->host : NULL, .now = p->res.last,
				 .event_name = p->res.event_name, .count = p->res.count, .first = p->res.first,
				 .no_reporting = p->res.aggregated };
	return kube_encode_event(&ev, ret);
}

/* The requests of the queued Events, appended at reqs[*n] (bodies in bodies[]). */
static void event_requests(struct rsc *c, struct kube_request *reqs, char **bodies, size_t *n)
{
	for (size_t i = 0; i < c->n_pend; i++) {
		struct pev *p = &c->pend[i];
		char *body = NULL;
		bool patch = p->res.action == RS_EVC_PATCH;
		int r = patch ? rs_evc_patch_body(&p->res, &body) : event_create_body(c, p, &body);

		bodies[*n] = body;
		reqs[*n] = (struct kube_request){ .verb = patch ? KUBE_PATCH : KUBE_CREATE, .version = "v1",
						  .resource = "events", .ns = p->ev.ns && p->ev.ns[0] ? p->ev.ns : "default",
						  .name = patch ? p->res.event_name : NULL, .body = body ? body : "{}",
						  .body_len = body ? strlen(body) : 2,
						  .patch_type = KUBE_PATCH_STRATEGIC };
		if (r < 0) /* cannot happen but for ENOMEM: send nothing useful, drop it below */
			reqs[*n].name = "-";
		(*n)++;
	}
}

/* The outcome of the queued Events' writes (resps[0..n_pend)); PATCHes of Events that expired
 * on the server are POSTed again with their count (client-go's recordEvent). Empties the queue. */
static void events_done(struct rsc *c, struct kube_response *resps)
{
	/* a kube_response is ~4 KiB (the Status with its causes): on the heap */
	struct kube_request *again = calloc(c->n_pend + 1, sizeof(*again));
	struct kube_response *again_resp = calloc(c->n_pend + 1, sizeof(*again_resp));
	char **again_body = calloc(c->n_pend + 1, sizeof(*again_body));
	size_t *again_idx = calloc(c->n_pend + 1, sizeof(*again_idx)), n_again = 0;

	for (size_t i = 0; i < c->n_pend; i++) {
		struct pev *p = &c->pend[i];
		int err = resps[i].error.err;

		if (err == 0) {
			(void)rs_evc_update_state(c->evc, &p->ev, &p->res);
		} else if (err == -ENOENT && p->res.action == RS_EVC_PATCH) {
			char *body = NULL;
			if (again && again_resp && again_body && again_idx && event_create_body(c, p, &body) == 0) {
				again_body[n_again] = body;
				again_idx[n_again] = i;
				again[n_again++] = (struct kube_request){ .verb = KUBE_CREATE, .version = "v1",
									  .resource = "events",
									  .ns = p->ev.ns && p->ev.ns[0] ? p->ev.ns : "default",
									  .body = body, .body_len = strlen(body) };
			}
		} else if (resps[i].http_code == 0 && p->tries + 1 < RSC_EVENT_MAX_TRIES &&
			   c->n_retry < RSC_MAX_PENDING_EVENTS) {
			/* no answer (connection, timeout): hold it and try again later */
			uint64_t wait = rsc_event_retry_usec;
			if (p->tries == 0)
				wait = (uint64_t)((double)wait * ((double)random() / ((double)RAND_MAX + 1.0)));
			log_v(2, "recording event %s on %s/%s failed: %s (will retry)", p->ev.reason, p->ev.ns, p->ev.name,
			      strerror(-err));
			p->tries++;
			p->not_before = ipc_now_usec() + wait;
			c->retry[c->n_retry++] = *p;
			memset(p, 0, sizeof(*p)); /* moved */
		} else {
			log_v(2, "recording event %s on %s/%s failed: %s", p->ev.reason, p->ev.ns, p->ev.name,
			      resps[i].error.message[0] ? resps[i].error.message : strerror(-err));
		}
	}
	if (n_again && kube_client_request_many(c->ctx->kc, again, n_again, again_resp, NULL) == 0) {
		for (size_t k = 0; k < n_again; k++) {
			struct pev *p = &c->pend[again_idx[k]];
			if (again_resp[k].error.err == 0)
				(void)rs_evc_update_state(c->evc, &p->ev, &p->res);
			else
				log_v(2, "recording event %s on %s/%s failed: %s", p->ev.reason, p->ev.ns, p->ev.name,
				      again_resp[k].error.message);
			kube_response_clear(&again_resp[k]);
		}
	}
	for (size_t k = 0; k < n_again; k++)
		free(again_body[k]);
	free(again);
	free(again_resp);
	free(again_body);
	free(again_idx);
	for (size_t i = 0; i < c->n_pend; i++)
		pev_free(&c->pend[i]);
	c->n_pend = 0;
}

/* Runs n pod requests together with the queued Event writes; pod responses in resps[0..n),
 * order[] (may be NULL) the pod requests' completion order. */
/* Moves the retries that are due into the queue (as far as it has room). */
static void take_due_retries(struct rsc *c)
{
	uint64_t now = ipc_now_usec();
	size_t kept = 0;

	for (size_t i = 0; i < c->n_retry; i++) {
		if (c->retry[i].not_before <= now && c->n_pend < RSC_MAX_PENDING_EVENTS)
			c->pend[c->n_pend++] = c->retry[i];
		else
			c->retry[kept++] = c->retry[i];
	}
	c->n_retry = kept;
}

static int run_with_events(struct rsc *c, const struct kube_request *pod_reqs, size_t n, struct kube_response *resps,
			   size_t *order)
{
	take_due_retries(c);
	size_t total = n + c->n_pend, k = n, j = 0;
	struct kube_request *reqs = calloc(total + 1, sizeof(*reqs));
	struct kube_response *all = calloc(total + 1, sizeof(*all));
	size_t *ord = calloc(total + 1, sizeof(*ord));
	char **bodies = calloc(total + 1, sizeof(*bodies));
	int r = -ENOMEM;

	if (!reqs || !all || !ord || !bodies)
		goto out;
	if (n)
		memcpy(reqs, pod_reqs, n * sizeof(*reqs));
	event_requests(c, reqs, bodies, &k);
	r = kube_client_request_many(c->ctx->kc, reqs, total, all, ord);
	if (r < 0)
		goto out;
	if (n)
		memcpy(resps, all, n * sizeof(*resps));
	for (size_t i = 0; i < total; i++)
		if (ord[i] < n && order)
			order[j++] = ord[i];
	events_done(c, all + n);
	for (size_t i = n; i < total; i++)
		kube_response_clear(&all[i]);
out:
	if (r < 0) {
		for (size_t i = 0; i < n; i++) {
			memset(&resps[i], 0, sizeof(resps[i]));
			resps[i].error.err = r;
			if (order)
				order[i] = i;
		}
	}
	for (size_t i = 0; i < total && bodies; i++)
		free(bodies[i]);
	free(bodies);
	free(reqs);
	free(all);
	free(ord);
	return r;
}

static void flush_events(struct rsc *c)
{
	take_due_retries(c);
	if (c->n_pend)
		(void)run_with_events(c, NULL, 0, NULL, NULL);
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
			fill_result(&(struct kube_response){ 0 }, -ENOMEM, &results[i]);
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		reqs[i] = (struct kube_request){ .verb = KUBE_CREATE, .version = "v1", .resource = "pods",
						 .ns = rs->meta.namespace, .body = body, .body_len = strlen(body) };
	uint64_t t0 = ipc_now_usec();
	(void)run_with_events(c, reqs, n, resps, order);
	log_v(4, "%s/%s: slow-start batch of %zu pod creations done in %.1f ms", rs->meta.namespace, rs->meta.name, n,
	      (double)(ipc_now_usec() - t0) / 1000.0);
	/* results in completion order: the first error is the first to finish, as upstream's errCh */
	for (size_t k = 0; k < n; k++) {
		struct kube_response *resp = &resps[order[k]];
		int r = resp->error.err;

		fill_result(resp, r, &results[k]);
		if (r == 0) {
			cJSON *o = cJSON_ParseWithLength(resp->body ? resp->body : "", resp->body_len);
			cJSON *meta = cJSON_GetObjectItemCaseSensitive(o, "metadata");
			cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");
			cJSON *rv = cJSON_GetObjectItemCaseSensitive(meta, "resourceVersion");
			if (cJSON_IsString(name))
				results[k].name = strdup(name->valuestring);
			if (cJSON_IsString(rv) && rv->valuestring[0])
				results[k].rv = strdup(rv->valuestring);
			cJSON_Delete(o);
		}
	}
	for (size_t i = 0; i < n; i++)
		kube_response_clear(&resps[i]);
out:
	free(reqs);
	free(resps);
	free(order);
}

static void ex_delete_pods(void *ud, const struct kube_replicaset *rs, const struct kube_pod *const *pods, size_t n,
			   struct rs_call_result *results)
{
	struct rsc *c = ud;
	struct kube_request *reqs = calloc(n + 1, sizeof(*reqs));
	struct kube_response *resps = calloc(n + 1, sizeof(*resps));

	(void)rs;
	if (!reqs || !resps) {
		for (size_t i = 0; i < n; i++)
			fill_result(&(struct kube_response){ 0 }, -ENOMEM, &results[i]);
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		reqs[i] = (struct kube_request){ .verb = KUBE_DELETE, .version = "v1", .resource = "pods",
						 .ns = pods[i]->meta.namespace, .name = pods[i]->meta.name };
	size_t *order = calloc(n + 1, sizeof(*order));
	(void)run_with_events(c, reqs, n, resps, order);
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
static int put_status(struct rsc *c, const struct kube_replicaset *rs, const char *patch, char **ret_rv,
		      char **ret_msg)
{
	struct kube_request get = { .verb = KUBE_GET, .group = "apps", .version = "v1", .resource = "replicasets",
				    .ns = rs->meta.namespace, .name = rs->meta.name };
	struct kube_response resp;
	int r = call(c, &get, &resp, ret_msg);
	if (r < 0) {
		kube_response_clear(&resp);
		return r;
	}
	cJSON *obj = cJSON_ParseWithLength(resp.body ? resp.body : "", resp.body_len);
	cJSON *p = cJSON_Parse(patch);
	kube_response_clear(&resp);
	cJSON *st = cJSON_DetachItemFromObjectCaseSensitive(p, "status");
	cJSON *rv = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "resourceVersion");
	char *body = NULL;
	if (!cJSON_IsObject(obj) || !st || !cJSON_IsString(rv)) {
		r = -EIO;
		if (ret_msg)
			*ret_msg = strdup("the ReplicaSet read back for the status update is malformed");
	} else if (!rs->meta.resource_version || strcmp(rv->valuestring, rs->meta.resource_version) != 0) {
		r = -ESTALE; /* what a 409 Conflict maps to (kube/errors.c) */
		if (ret_msg && asprintf(ret_msg,
					"Operation cannot be fulfilled on replicasets.apps \"%s\": the object has been "
					"modified; please apply your changes to the latest version and try again",
					rs->meta.name) < 0)
			*ret_msg = NULL;
	} else {
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
	struct kube_request put = { .verb = KUBE_UPDATE, .group = "apps", .version = "v1", .resource = "replicasets",
				    .ns = rs->meta.namespace, .name = rs->meta.name, .subresource = "status",
				    .body = body, .body_len = strlen(body) };
	r = call(c, &put, &resp, ret_msg);
	if (r == 0 && ret_rv)
		*ret_rv = resp_rv(&resp);
	kube_response_clear(&resp);
	free(body);
	return r;
}

static int ex_update_status_rv(void *ud, const struct kube_replicaset *rs, const struct kube_rs_status *st,
			       char **ret_rv, char **ret_msg)
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
	struct kube_request req = { .verb = KUBE_PATCH, .group = "apps", .version = "v1", .resource = "replicasets",
				    .ns = rs->meta.namespace, .name = rs->meta.name, .subresource = "status",
				    .body = body, .body_len = strlen(body), .patch_type = KUBE_PATCH_MERGE };
	struct kube_response resp;
	r = call(c, &req, &resp, r == -EACCES ? NULL : ret_msg);
	if (r == -EACCES) {
		/* the bootstrap role system:controller:replicaset-controller grants update, not
		 * patch, on replicasets/status (what --use-service-account-credentials runs as) */
		kube_response_clear(&resp);
		c->status_put = true;
		log_info("PATCH replicasets/status refused (403): writing status with GET + PUT from now on");
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

static int ex_update_status(void *ud, const struct kube_replicaset *rs, const struct kube_rs_status *st, char **ret_msg)
{
	return ex_update_status_rv(ud, rs, st, NULL, ret_msg);
}

static char *dup0(const char *s)
{
	return strdup(s ? s : "");
}

/* The recorder: correlate now, write with the next batch (or at the end of the sync). */
static void ex_record_event(void *ud, const struct kube_replicaset *rs, const char *type, const char *reason,
			    const char *message)
{
	struct rsc *c = ud;
	struct rs_evc_event ev = { .component = RS_EVENT_COMPONENT, .host = c->host, .kind = RS_KIND,
				   .ns = rs->meta.namespace, .name = rs->meta.name, .uid = rs->meta.uid,
				   .api_version = RS_API_VERSION, .type = type, .reason = reason, .message = message };
	struct rs_evc_result res;

	/* the broadcaster's StartStructuredLogging(3): every event, before correlation */
	log_v(3, "Event occurred: object=\"%s/%s\" fieldPath=\"\" kind=\"%s\" apiVersion=\"%s\" type=\"%s\" reason=\"%s\" "
		 "message=\"%s\"", rs->meta.namespace, rs->meta.name, RS_KIND, RS_API_VERSION, type, reason, message);
	if (rs_evc_correlate(c->evc, &ev, kube_time_now(), &res) < 0)
		return;
	if (res.action == RS_EVC_SKIP) {
		log_v(4, "event %s on %s/%s dropped by the spam filter", reason, rs->meta.namespace, rs->meta.name);
		rs_evc_result_free(&res);
		return;
	}
	/* two writes of one Event object never go in the same batch */
	for (size_t i = 0; i < c->n_pend; i++)
		if (strcmp(c->pend[i].res.event_name, res.event_name) == 0) {
			flush_events(c);
			break;
		}
	if (c->n_pend == RSC_MAX_PENDING_EVENTS)
		flush_events(c);
	if (c->n_pend == RSC_MAX_PENDING_EVENTS) { /* the flush failed (out of memory): drop it */
		rs_evc_result_free(&res);
		return;
	}
	struct pev *p = &c->pend[c->n_pend];
	p->ev = (struct rs_evc_event){ .component = RS_EVENT_COMPONENT, .host = dup0(c->host), .kind = RS_KIND,
				       .ns = dup0(rs->meta.namespace), .name = dup0(rs->meta.name),
				       .uid = dup0(rs->meta.uid), .api_version = RS_API_VERSION, .type = dup0(type),
				       .reason = dup0(reason), .message = dup0(message) };
	p->rs_rv = rs->meta.resource_version ? strdup(rs->meta.resource_version) : NULL;
	p->res = res;
	if (!p->ev.host || !p->ev.ns || !p->ev.name || !p->ev.uid || !p->ev.type || !p->ev.reason || !p->ev.message) {
		pev_free(p);
		return;
	}
	c->n_pend++;
}

/* ---- reading the arena ----------------------------------------------------------------------- */

struct podlist {
	struct wk_pod *v;
	size_t n, cap;
	const char *only_controller;     /* keep only pods controlled by this uid (NULL: keep all) */
	const struct kube_selector *sel; /* keep only pods this selector matches (NULL: keep all) */
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
			kv[i] = (struct kube_kv){ o->labels[i].key, o->labels[i].value };
		bool match = kube_selector_matches(l->sel, kv, (uint32_t)n);
		if (kv != small)
			free(kv);
		if (!match)
			return 0;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct wk_pod *nv = realloc(l->v, cap * sizeof(*nv));
		if (!nv)
			return l->err = -ENOMEM;
		l->v = nv;
		l->cap = cap;
	}
	if ((r = wk_obj_dup(o, &copy)) < 0)
		return l->err = r;
	if ((r = wk_pod_from_obj(&copy, &l->v[l->n])) < 0) {
		wk_pod_free(&l->v[l->n]); /* it took the copy */
		return l->err = r;
	}
	l->n++;
	return 0;
}

static void podlist_free(struct podlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		wk_pod_free(&l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int resolve_types(struct rsc *c)
{
	if (c->pod_type < 0)
		c->pod_type = shm_reader_find_type(c->ctx->arena, "", "v1", "pods");
	if (c->rs_type < 0)
		c->rs_type = shm_reader_find_type(c->ctx->arena, "apps", "v1", "replicasets");
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
	struct inf_rec_view v;
	struct inf_rec_rs fr;
	const char *text;
	size_t len;
	struct kube_selector *sel = NULL;

	if (o->type != (uint16_t)sc->c->rs_type)
		return 0;
	ref = shm_obj_controller(o);
	if (!ref || strcmp(ref->uid, sc->ctrl_uid) != 0)
		return 0;
	if (inf_rec_parse(o->payload, o->payload_len, &v) < 0 || inf_rec_rs_get(&v, &fr) < 0 ||
	    fr.sel_state != INF_REC_SEL_VALID || inf_rec_blob(&v, 0, &text, &len) < 0 ||
	    kube_selector_parse(text, &sel, NULL, 0) < 0)
		return 0; /* nil or invalid selector: selects nothing */
	sc->out->sel = sel;
	int r = shm_reader_list_ns(sc->c->ctx->arena, (uint16_t)sc->c->pod_type, o->ns, collect_pod, sc->out);
	sc->out->sel = NULL;
	kube_selector_free(sel);
	if (r < 0)
		sc->err = r;
	return r < 0 ? r : 0;
}

static int cmp_pod_uid(const void *a, const void *b)
{
	const struct wk_pod *x = a, *y = b;

	return strcmp(x->pod.meta.uid ? x->pod.meta.uid : "", y->pod.meta.uid ? y->pod.meta.uid : "");
}

/* The pods of every ReplicaSet that shares rs's controller, rs included (a Deployment's
 * ReplicaSets): upstream's getIndirectlyRelatedPods, each pod once, for the scale-down ranking. */
static int related_pods(struct rsc *c, const struct kube_replicaset *rs, struct podlist *out)
{
	const struct kube_owner_ref *ctrl = kube_controller_of(&rs->meta);
	struct sibctx sc = { c, out, NULL, 0 };

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
			wk_pod_free(&out->v[i]);
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
static struct rs_features rs_features(void)
{
	struct rs_features f = RS_FEATURES_DEFAULT;

	f.terminating_replicas = kcmd_feature_enabled(KCMD_FEAT_DEPLOYMENT_RS_TERMINATING_REPLICAS);
	f.pod_deletion_cost = kcmd_feature_enabled(KCMD_FEAT_POD_DELETION_COST);
	f.stale_consistency = kcmd_feature_enabled(KCMD_FEAT_STALE_CONSISTENCY_RS) &&
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
	struct wk_rs w = { 0 };
	struct podlist pods = { 0 }, rel = { 0 };
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
		log_v(4, "%s: waiting for the ReplicaSet and pod caches to sync", key);
		out->requeue_after = true;
		out->after_usec = 100000;
		return;
	}
	/* the stores' last synced versions, read before the objects (LastStoreSyncResourceVersion) */
	struct shm_type_info pti, rti;
	char read_rv[RS_EXP_CONS_RESOURCES][sizeof(pti.rv)];
	memset(read_rv, 0, sizeof(read_rv));
	if (shm_reader_type_info(c->ctx->arena, (uint16_t)c->pod_type, &pti) == 0)
		memcpy(read_rv[RS_CONS_PODS], pti.rv, sizeof(pti.rv));
	if (shm_reader_type_info(c->ctx->arena, (uint16_t)c->rs_type, &rti) == 0)
		memcpy(read_rv[RS_CONS_REPLICASETS], rti.rv, sizeof(rti.rv));
	read_rv[RS_CONS_PODS][sizeof(pti.rv) - 1] = read_rv[RS_CONS_REPLICASETS][sizeof(rti.rv) - 1] = 0;
	r = shm_reader_get(c->ctx->arena, (uint16_t)c->rs_type, ns, name, &obj);
	if (r == 0) {
		r = wk_rs_from_obj(&obj, &w);
		if (r < 0) {
			wk_rs_free(&w);
			log_error("%s: unreadable ReplicaSet record: %s", key, strerror(-r));
			out->err = r;
			goto done;
		}
		have_rs = true;
		r = shm_reader_list_controlled(c->ctx->arena, (uint16_t)c->pod_type, w.rs.meta.uid, ns, collect_pod,
					       &pods);
		if (r >= 0)
			r = related_pods(c, &w.rs, &rel);
		if (r < 0 || pods.err < 0 || rel.err < 0) {
			log_error("%s: reading pods from the cache failed: %s", key, strerror(-(r < 0 ? r : pods.err ? pods.err : rel.err)));
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

	struct rs_sync_input in = { .key = key, .rs = have_rs ? &w.rs : NULL, .pods = pv, .n_pods = pods.n,
				    .related = rv, .n_related = rel.n, .exp = c->exp, .features = rs_features(),
				    .mono = mono_now };
	in.read_rv[RS_CONS_PODS] = read_rv[RS_CONS_PODS];
	in.read_rv[RS_CONS_REPLICASETS] = read_rv[RS_CONS_REPLICASETS];
	struct rs_executor ex = { .ud = c, .get_rs = ex_get_rs, .patch_pod = ex_patch_pod,
				  .create_pods = ex_create_pods, .delete_pods = ex_delete_pods,
				  .update_status = ex_update_status, .record_event = ex_record_event,
				  .patch_pod_rv = ex_patch_pod_rv, .update_status_rv = ex_update_status_rv };
	struct rs_sync_result res;
	uint64_t t0 = ipc_now_usec();
	rs_sync(&in, &ex, &res);
	flush_events(c);
	if (res.stale_skip)
		log_v(2, "%s: skipping sync, the cache is older than our last write: %s", key, res.err_msg);
	log_v(4, "synced %s in %.3f ms: created %d deleted %d status %s%s%s", key, (double)(ipc_now_usec() - t0) / 1000.0,
	      res.created, res.deleted, res.status_written ? "written" : "unchanged", res.err ? ", error: " : "",
	      res.err ? (res.err_msg ? res.err_msg : strerror(-res.err)) : "");
	if (res.invalid_selector)
		log_error("%s: invalid selector: not syncing", key);
	if (res.err < 0)
		log_warning("sync %s failed: %s", key, res.err_msg ? res.err_msg : strerror(-res.err));
	out->err = res.err;
	if (res.err == 0 && res.requeue) {
		out->requeue_after = true;
		out->after_usec = res.requeue_after_ns > 0 ? (uint64_t)res.requeue_after_ns / 1000 : 0;
	}
	rs_sync_result_free(&res);
done:
	free(pv);
	free(rv);
	podlist_free(&pods);
	podlist_free(&rel);
	if (have_rs)
		wk_rs_free(&w);
	else
		shm_obj_release(&obj);
}

const struct wk_controller wk_replicaset_controller = {
	.name = "replicaset-controller",
	.queues = rs_queues,
	.init = rsc_init,
	.sync = rsc_sync,
	.fini = rsc_fini,
};
