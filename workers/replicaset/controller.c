/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/replicaset/controller.c: the ReplicaSet controller inside a kcmd-worker process.
 *
 * It reads the ReplicaSet and its candidate pods (controlled by it, plus the namespace's
 * orphans) from the arena, runs rs_sync() (workers/replicaset/sync.h: upstream's
 * syncReplicaSet), and backs rs_sync's executor with the blocking API client:
 *   get_rs        GET apps/v1 replicasets (uncached, as upstream's adoption recheck)
 *   patch_pod     PATCH pods, strategic merge (adopt / release)
 *   create_pods   POST pods, one after another (upstream sends a batch concurrently; the results
 *                 and the slow-start rule are the same, only the batch takes longer)
 *   delete_pods   DELETE pods, one after another, default options
 *   update_status PATCH replicasets/status, JSON merge patch carrying the resourceVersion (the
 *                 same optimistic lock as upstream's PUT: 409 on a stale version; the arena keeps
 *                 the compact record, not the whole object a PUT would need)
 *   record_event  POST core/v1 Event (best effort, as client-go's recorder)
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
#include "manager/log.h"
#include "workers/objects.h"
#include "workers/replicaset/events.h"
#include "workers/replicaset/expectations.h"
#include "workers/replicaset/sync.h"
#include "workers/worker.h"

struct rsc {
	struct wk_ctx *ctx;
	struct rs_exp *exp;
	int pod_type, rs_type;
	bool caches_synced; /* once true, stays (a relist keeps serving the old contents) */
	char host[256];
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
	gethostname(c->host, sizeof(c->host) - 1);
	if (ctx->expectations_fd < 0) {
		free(c);
		return -EBADF;
	}
	r = rs_exp_attach(ctx->expectations_fd, RS_EXP_WORKER, rs_exp_now(), &c->exp);
	if (r < 0) {
		free(c);
		return r;
	}
	*ret = c;
	return 0;
}

static void rsc_fini(void *state)
{
	struct rsc *c = state;

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

static int ex_patch_pod(void *ud, const struct kube_pod *pod, const char *body, char **ret_msg)
{
	struct rsc *c = ud;
	struct kube_request req = { .verb = KUBE_PATCH, .version = "v1", .resource = "pods", .ns = pod->meta.namespace,
				    .name = pod->meta.name, .body = body, .body_len = strlen(body),
				    .patch_type = KUBE_PATCH_STRATEGIC };
	struct kube_response resp;
	int r = call(c, &req, &resp, ret_msg);

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

static void ex_create_pods(void *ud, const struct kube_replicaset *rs, const char *body, size_t n,
			   struct rs_call_result *results)
{
	struct rsc *c = ud;

	for (size_t i = 0; i < n; i++) {
		struct kube_request req = { .verb = KUBE_CREATE, .version = "v1", .resource = "pods",
					    .ns = rs->meta.namespace, .body = body, .body_len = strlen(body) };
		struct kube_response resp;
		int r = kube_client_request(c->ctx->kc, &req, NULL, NULL, &resp);
		fill_result(&resp, r, &results[i]);
		if (r == 0) {
			cJSON *o = cJSON_ParseWithLength(resp.body, resp.body_len);
			cJSON *name = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "metadata"),
								       "name");
			if (cJSON_IsString(name))
				results[i].name = strdup(name->valuestring);
			cJSON_Delete(o);
		}
		kube_response_clear(&resp);
	}
}

static void ex_delete_pods(void *ud, const struct kube_replicaset *rs, const struct kube_pod *const *pods, size_t n,
			   struct rs_call_result *results)
{
	struct rsc *c = ud;

	(void)rs;
	for (size_t i = 0; i < n; i++) {
		struct kube_request req = { .verb = KUBE_DELETE, .version = "v1", .resource = "pods",
					    .ns = pods[i]->meta.namespace, .name = pods[i]->meta.name };
		struct kube_response resp;
		int r = kube_client_request(c->ctx->kc, &req, NULL, NULL, &resp);
		fill_result(&resp, r, &results[i]);
		kube_response_clear(&resp);
	}
}

static int ex_update_status(void *ud, const struct kube_replicaset *rs, const struct kube_rs_status *st, char **ret_msg)
{
	struct rsc *c = ud;
	char *body = NULL;
	int r = kube_encode_rs_status_merge_patch(rs->meta.resource_version, st, &body);

	if (r < 0) {
		if (ret_msg)
			*ret_msg = strdup("encoding the status failed");
		return r;
	}
	struct kube_request req = { .verb = KUBE_PATCH, .group = "apps", .version = "v1", .resource = "replicasets",
				    .ns = rs->meta.namespace, .name = rs->meta.name, .subresource = "status",
				    .body = body, .body_len = strlen(body), .patch_type = KUBE_PATCH_MERGE };
	struct kube_response resp;
	r = call(c, &req, &resp, ret_msg);
	kube_response_clear(&resp);
	free(body);
	return r;
}

static void ex_record_event(void *ud, const struct kube_replicaset *rs, const char *type, const char *reason,
			    const char *message)
{
	struct rsc *c = ud;
	char *body = NULL;
	struct kube_event ev = { .ns = rs->meta.namespace, .kind = RS_KIND, .api_version = RS_API_VERSION,
				 .name = rs->meta.name, .uid = rs->meta.uid,
				 .resource_version = rs->meta.resource_version, .type = type, .reason = reason,
				 .message = message, .component = RS_EVENT_COMPONENT, .host = c->host,
				 .now = kube_time_now() };

	if (kube_encode_event(&ev, &body) < 0)
		return;
	struct kube_request req = { .verb = KUBE_CREATE, .version = "v1", .resource = "events", .ns = rs->meta.namespace,
				    .body = body, .body_len = strlen(body) };
	struct kube_response resp;
	if (kube_client_request(c->ctx->kc, &req, NULL, NULL, &resp) < 0)
		log_v(2, "recording event %s on %s/%s failed: %s", reason, rs->meta.namespace, rs->meta.name,
		      resp.error.message);
	kube_response_clear(&resp);
	free(body);
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
		struct kube_kv kv[64];
		size_t n = o->n_labels < 64 ? o->n_labels : 64;
		for (size_t i = 0; i < n; i++)
			kv[i] = (struct kube_kv){ o->labels[i].key, o->labels[i].value };
		if (o->n_labels > 64 || !kube_selector_matches(l->sel, kv, (uint32_t)n))
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
				    .related = rv, .n_related = rel.n, .exp = c->exp, .features = RS_FEATURES_DEFAULT,
				    .mono = mono_now };
	struct rs_executor ex = { .ud = c, .get_rs = ex_get_rs, .patch_pod = ex_patch_pod,
				  .create_pods = ex_create_pods, .delete_pods = ex_delete_pods,
				  .update_status = ex_update_status, .record_event = ex_record_event };
	struct rs_sync_result res;
	uint64_t t0 = ipc_now_usec();
	rs_sync(&in, &ex, &res);
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
