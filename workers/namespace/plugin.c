/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/namespace/plugin.c: kcm's namespace-controller (alias namespace), on by default,
 * client "namespace-controller": deletes the content of a namespace being deleted, then removes
 * its finalizer `kubernetes` (nsdel.h for the rules).
 *
 * Shape: namespaces are cached metadata-only (the handler needs only the deletionTimestamp; the
 * sync reads the namespace from the API, as upstream's deleter does). An add or update of a
 * namespace with a deletionTimestamp queues its name after 5 s (namespaceDeletionGracePeriod);
 * --concurrent-namespace-syncs worker processes each sync one namespace at a time with blocking
 * requests. kcm gives this controller a client of its own at 20x --kube-api-qps and 100x
 * --kube-api-burst; here one bucket at those rates is shared by the controller's processes
 * (KCMD_NS_LIMITER_FD, as the GC's). --namespace-sync-period: kcm's informer resync re-queues
 * every namespace with a deletionTimestamp that often; here a namespace still present after a
 * successful sync is looked at again after that period.
 * Discovery is the aggregated form (/api and /apis, apidiscovery.k8s.io/v2), read at each sync
 * as kcm's deleter calls ServerPreferredNamespacedResources at each sync; it is not the GC's
 * informerd-side discovery, which lists deletable resources of every scope for informers, not
 * the namespaced ones with their verbs at the moment of the sync.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kcmd/kcmd.h"
#include "kube/config.h"
#include "kube/discovery.h"
#include "kube/limiter.h"
#include "lib/log.h"
#include "shm/record-model.h"
#include "workers/namespace/nsdel.h"
#include "workers/worker.h"

/* ---- handlers (kcmd-dispatcher) ----------------------------------------------------------- */
static void on_namespace(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	if (ev->meta && kcmd_meta_deleting(ev->meta))
		kcmd_queue_add_after(ctx, 0, kcmd_meta_name(ev->meta), NS_GRACE_US);
}

static int add_deleting(const struct shm_obj *o, void *ud)
{
	struct shm_meta_view v;
	struct shm_obj copy;
	int r;

	/* kcmd_obj_* has no deletionTimestamp accessor: view the record's metadata */
	if ((r = shm_obj_dup(o, &copy)) < 0)
		return 0;
	if (shm_meta_view_init(&copy, &v) == 0 && v.p.meta.deletion_timestamp)
		kcmd_queue_add_after(ud, 0, v.p.meta.name, NS_GRACE_US);
	shm_meta_view_free(&v);
	return 0;
}

static void ns_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	kcmd_cache_list(ctx->arena, "", "namespaces", NULL, add_deleting, ctx);
}

static const char *const ns_queue_names[] = {NS_QUEUE, NULL};
static const struct inf_handler_entry ns_entries[] = {
        {.group = "", .resource = "namespaces", .on_add = on_namespace, .on_update = on_namespace},
};
static const struct inf_handler_table ns_handlers = {
        .controller = NS_CONTROLLER,
        .queues = ns_queue_names,
        .entries = ns_entries,
        .n_entries = 1,
        .resync = ns_resync,
};

/* ---- the worker's state ------------------------------------------------------------------ */
struct nsw {
	struct wk_ctx *ctx;
	struct kube_client *kc;
	struct kube_limiter *limiter;
	uint64_t sync_period_us;
};

static int ns_init(struct wk_ctx *ctx, void **ret_state)
{
	struct nsw *w = calloc(1, sizeof(*w));
	const char *v = getenv("KCMD_NS_LIMITER_FD");
	double qps = ctx->qps > 0 ? 20 * ctx->qps : 0;
	int burst = (ctx->burst >= 1 ? ctx->burst : 1) * 100, fd = -1, r;

	if (!w)
		return -ENOMEM;
	w->ctx = ctx;
	w->sync_period_us = kcmd_flag_duration_us(ctx->flags, "namespace-sync-period");
	if (v && *v) {
		char *end;
		long l = strtol(v, &end, 10);
		fd = *end || l < 0 || l > 65535 ? -1 : (int)l;
	}
	if ((r = kube_limiter_open(fd, qps, burst, &w->limiter)) < 0 && fd >= 0)
		r = kube_limiter_open(-1, qps, burst, &w->limiter);
	if (r < 0 || !ctx->config) {
		free(w);
		return r < 0 ? r : -EINVAL;
	}
	struct kube_client_opts ko = {.config = ctx->config,
	                              .process = ctx->process,
	                              .controller = NS_CONTROLLER,
	                              .qps = 0, /* the shared bucket limits */
	                              .burst = burst,
	                              .insecure_ok = true,
	                              .limiter = w->limiter};
	if ((r = kube_client_new(&ko, &w->kc)) < 0) {
		kube_limiter_free(w->limiter);
		free(w);
		return r;
	}
	log_v(1, "API client %s: %g qps, burst %d", kube_user_agent(w->kc), qps, burst);
	*ret_state = w;
	return 0;
}

static void ns_fini(void *state)
{
	struct nsw *w = state;
	if (!w)
		return;
	kube_client_free(w->kc);
	kube_limiter_free(w->limiter);
	free(w);
}

/* ---- requests ------------------------------------------------------------------------------ */
/* The error text upstream's error carries: the Status message, or the transport's. */
static void errtext(int r, const struct kube_response *resp, char *buf, size_t len)
{
	if (resp && resp->error.message[0])
		snprintf(buf, len, "%s", resp->error.message);
	else
		snprintf(buf, len, "%s", strerror(-r));
}

static int do_req(struct nsw *w, struct kube_request *kr, struct kube_response *resp)
{
	*resp = (struct kube_response){0};
	return kube_client_request(w->kc, kr, NULL, NULL, resp);
}

static void base_path(const struct ns_gvr *g, const char *ns, const char *name, char *buf,
                      size_t len)
{
	if (g->group[0])
		snprintf(buf, len, "/apis/%s/%s/namespaces/%s/%s%s%s", g->group, g->version, ns,
		         g->resource, name ? "/" : "", name ? name : "");
	else
		snprintf(buf, len, "/api/%s/namespaces/%s/%s%s%s", g->version, ns, g->resource,
		         name ? "/" : "", name ? name : "");
}

/* GET the namespace: 0 and *ret, -ENOENT, -errno */
static int get_ns(struct nsw *w, const char *name, cJSON **ret)
{
	struct kube_response resp;
	int r = do_req(
	        w,
	        &(struct kube_request){
	                .verb = KUBE_GET, .version = "v1", .resource = "namespaces", .name = name},
	        &resp);
	*ret = NULL;
	if (r == 0 && !(*ret = cJSON_ParseWithLength(resp.body, resp.body_len)))
		r = -EBADMSG;
	kube_response_clear(&resp);
	return r;
}

static const char *uid_of(const cJSON *ns)
{
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(ns, "metadata"), "uid");
	return cJSON_IsString(u) ? u->valuestring : "";
}

/* PUT ns (to subresource "status" or "finalize"); on success *ns becomes the answer. */
static int put_ns(struct nsw *w, cJSON **ns, const char *sub, const char *name)
{
	struct kube_response resp;
	char *body = cJSON_PrintUnformatted(*ns);
	int r;

	if (!body)
		return -ENOMEM;
	r = do_req(w,
	           &(struct kube_request){.verb = KUBE_UPDATE,
	                                  .version = "v1",
	                                  .resource = "namespaces",
	                                  .name = name,
	                                  .subresource = sub,
	                                  .body = body,
	                                  .body_len = strlen(body),
	                                  .body_kind = "Namespace"},
	           &resp);
	free(body);
	if (r == 0) {
		cJSON *n = cJSON_ParseWithLength(resp.body, resp.body_len);
		if (n) {
			cJSON_Delete(*ns);
			*ns = n;
		}
	}
	kube_response_clear(&resp);
	return r;
}

/* retryOnConflictError around fn(ns) (fn returns 1: write it to `sub`, 0: nothing to write) */
static int retry_on_conflict(struct nsw *w, const char *name, cJSON **ns, const char *sub,
                             int (*fn)(cJSON *))
{
	for (;;) {
		int r = fn(*ns);
		if (r <= 0)
			return r;
		r = put_ns(w, ns, sub, name);
		if (r != -ESTALE)
			return r;
		cJSON *latest;
		if ((r = get_ns(w, name, &latest)) < 0)
			return r;
		if (strcmp(uid_of(latest), uid_of(*ns)) != 0) {
			cJSON_Delete(latest);
			return -EIDRM; /* namespace uid has changed across retries */
		}
		cJSON_Delete(*ns);
		*ns = latest;
	}
}

static int finalize_fn(cJSON *ns)
{
	int r = ns_finalize(ns);
	return r < 0 ? r : 1;
}

/* ---- one resource --------------------------------------------------------------------------- */
struct gvr_result {
	int64_t estimate, remaining;
	struct ns_counts fin;
};

static int list_meta(struct nsw *w, const char *path, struct kube_response *resp)
{
	return do_req(
	        w, &(struct kube_request){.verb = KUBE_LIST, .path = path, .metadata_only = true},
	        resp);
}

/* deleteEachItem: a metadata list, then one delete per object (Background). 0 or -errno with
 * upstream's error text in err. */
static int delete_each(struct nsw *w, const struct ns_gvr *g, const char *ns, const char *path,
                       char *err, size_t errlen)
{
	struct kube_response resp;
	int r = list_meta(w, path, &resp);

	if (r < 0 && r != -EOPNOTSUPP && r != -ENOENT) {
		errtext(r, &resp, err, errlen);
		kube_response_clear(&resp);
		return r;
	}
	cJSON *l = r == 0 ? cJSON_ParseWithLength(resp.body, resp.body_len) : NULL;
	kube_response_clear(&resp);
	const cJSON *it;
	r = 0;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(l, "items"))
	{
		const cJSON *nm = cJSON_GetObjectItemCaseSensitive(
		        cJSON_GetObjectItemCaseSensitive(it, "metadata"), "name");
		char ip[1300];
		if (!cJSON_IsString(nm))
			continue;
		base_path(g, ns, nm->valuestring, ip, sizeof(ip));
		r = do_req(w,
		           &(struct kube_request){.verb = KUBE_DELETE,
		                                  .path = ip,
		                                  .propagation_policy = "Background"},
		           &resp);
		if (r < 0 && r != -ENOENT && r != -EOPNOTSUPP) {
			errtext(r, &resp, err, errlen);
			kube_response_clear(&resp);
			break;
		}
		r = 0;
		kube_response_clear(&resp);
	}
	cJSON_Delete(l);
	return r;
}

/* The verification list's answer (r, resp) into out; 0 or -errno with err. */
static int remaining_of(int r, struct kube_response *resp, const struct ns_gvr *g, const char *ns,
                        struct gvr_result *out, char *err, size_t errlen)
{
	if (r == -EOPNOTSUPP || r == -ENOENT)
		return 0; /* list not supported after all */
	if (r == 0)
		r = ns_list_remaining(resp->body, resp->body_len, &out->remaining, &out->fin);
	if (r < 0) {
		errtext(r, resp, err, errlen);
		return r;
	}
	if (out->remaining == 0 || out->estimate != 0)
		return 0;
	if (out->fin.n) {
		out->estimate = NS_FINALIZER_ESTIMATE;
		return 0;
	}
	snprintf(err, errlen,
	         "unexpected items still remain in namespace: %s for gvr: %s/%s, Resource=%s", ns,
	         g->group, g->version, g->resource);
	return -ENOTEMPTY;
}

/* deleteAllContentForGroupVersionResource, one resource; err gets upstream's error text. */
static int delete_gvr(struct nsw *w, const struct ns_gvr *g, const char *ns, int64_t deleted_at,
                      struct gvr_result *out, char *err, size_t errlen)
{
	struct kube_response resp;
	char path[1024];
	bool is_pods = !g->group[0] && !strcmp(g->resource, "pods");
	int r;

	*out = (struct gvr_result){0};
	base_path(g, ns, NULL, path, sizeof(path));
	if (is_pods) {
		r = do_req(w, &(struct kube_request){.verb = KUBE_LIST, .path = path}, &resp);
		if (r == 0)
			r = ns_pods_estimate(resp.body, resp.body_len, deleted_at, time(NULL),
			                     &out->estimate);
		if (r < 0) {
			errtext(r, &resp, err, errlen);
			kube_response_clear(&resp);
			return r;
		}
		kube_response_clear(&resp);
	}
	bool collected = false;
	if (g->deletecollection) {
		r = do_req(w,
		           &(struct kube_request){.verb = KUBE_DELETE,
		                                  .path = path,
		                                  .propagation_policy = "Background"},
		           &resp);
		if (r == 0)
			collected = true;
		else if (r != -EOPNOTSUPP && r != -ENOENT) {
			errtext(r, &resp, err, errlen);
			kube_response_clear(&resp);
			return r;
		}
		kube_response_clear(&resp);
	}
	if (!collected && g->list && (r = delete_each(w, g, ns, path, err, errlen)) < 0)
		return r;
	if (!g->list)
		return 0;
	r = list_meta(w, path, &resp);
	r = remaining_of(r, &resp, g, ns, out, err, errlen);
	kube_response_clear(&resp);
	return r;
}

/* The same for many resources at once (every resource but pods): the deletecollections in
 * one batch of concurrent requests, the per-object fallbacks one by one, the verification
 * lists in a second batch. Upstream walks the resources one after the other; the requests and
 * their outcomes are the same, only not serialized (the order of upstream's walk is a Go map's,
 * so no order was promised). out[i], rc[i] and errs[i] (errlen each) per resource. */
static void delete_gvrs(struct nsw *w, const struct ns_gvr *const *g, size_t n, const char *ns,
                        struct gvr_result *out, int *rc, char *errs, size_t errlen)
{
	struct kube_request *reqs = calloc(n ? n : 1, sizeof(*reqs));
	struct kube_response *resps = calloc(n ? n : 1, sizeof(*resps));
	char(*paths)[1024] = calloc(n ? n : 1, sizeof(*paths));
	size_t *idx = calloc(n ? n : 1, sizeof(*idx)), m = 0;
	bool *collected = calloc(n ? n : 1, sizeof(*collected));

	for (size_t i = 0; i < n; i++) {
		out[i] = (struct gvr_result){0};
		rc[i] = 0;
		errs[i * errlen] = 0;
	}
	if (!reqs || !resps || !paths || !idx || !collected) {
		/* no memory for the batches: one by one */
		for (size_t i = 0; i < n; i++)
			rc[i] = delete_gvr(w, g[i], ns, 0, &out[i], errs + i * errlen, errlen);
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		base_path(g[i], ns, NULL, paths[i], sizeof(paths[i]));
	/* deleteCollection */
	for (size_t i = 0; i < n; i++)
		if (g[i]->deletecollection) {
			reqs[m] = (struct kube_request){.verb = KUBE_DELETE,
			                                .path = paths[i],
			                                .propagation_policy = "Background"};
			idx[m++] = i;
		}
	if (kube_client_request_many(w->kc, reqs, m, resps, NULL) < 0) {
		for (size_t i = 0; i < n; i++)
			rc[i] = delete_gvr(w, g[i], ns, 0, &out[i], errs + i * errlen, errlen);
		goto out;
	}
	for (size_t k = 0; k < m; k++) {
		size_t i = idx[k];
		int r = resps[k].error.err;
		if (r == 0)
			collected[i] = true;
		else if (r != -EOPNOTSUPP && r != -ENOENT) {
			errtext(r, &resps[k], errs + i * errlen, errlen);
			rc[i] = r;
		}
		kube_response_clear(&resps[k]);
	}
	/* deleteEachItem where deletecollection is not served */
	for (size_t i = 0; i < n; i++)
		if (!rc[i] && !collected[i] && g[i]->list)
			rc[i] = delete_each(w, g[i], ns, paths[i], errs + i * errlen, errlen);
	/* what remains */
	m = 0;
	for (size_t i = 0; i < n; i++)
		if (!rc[i] && g[i]->list) {
			reqs[m] = (struct kube_request){
			        .verb = KUBE_LIST, .path = paths[i], .metadata_only = true};
			idx[m++] = i;
		}
	if (kube_client_request_many(w->kc, reqs, m, resps, NULL) < 0) {
		for (size_t k = 0; k < m; k++) {
			size_t i = idx[k];
			struct kube_response one;
			int r = list_meta(w, paths[i], &one);
			rc[i] = remaining_of(r, &one, g[i], ns, &out[i], errs + i * errlen, errlen);
			kube_response_clear(&one);
		}
		goto out;
	}
	for (size_t k = 0; k < m; k++) {
		size_t i = idx[k];
		rc[i] = remaining_of(resps[k].error.err, &resps[k], g[i], ns, &out[i],
		                     errs + i * errlen, errlen);
		kube_response_clear(&resps[k]);
	}
out:
	free(collected);
	free(idx);
	free(paths);
	free(resps);
	free(reqs);
}

/* ---- deleteAllContent ----------------------------------------------------------------------- */
static int discover(struct nsw *w, struct ns_discovery *d, char *err, size_t errlen)
{
	static const char *const roots[] = {"/api", "/apis"};

	for (size_t i = 0; i < 2; i++) {
		struct kube_response resp;
		int r = do_req(w,
		               &(struct kube_request){.verb = KUBE_GET,
		                                      .path = roots[i],
		                                      .accept = KUBE_ACCEPT_DISCOVERY_V2},
		               &resp);
		if (r == 0)
			r = ns_discovery_add_v2(d, resp.body, resp.body_len);
		if (r < 0) {
			/* the whole discovery failed: no resources to work with */
			errtext(r, &resp, err, errlen);
			kube_response_clear(&resp);
			ns_discovery_clear(d);
			return r;
		}
		kube_response_clear(&resp);
	}
	return 0;
}

static void status_update(struct nsw *w, struct ns_conditions *u, cJSON **ns, const char *name)
{
	char now[40];
	ns_rfc3339(time(NULL), now, sizeof(now));
	if (ns_conditions_apply(u, *ns, now) > 0) {
		int r = put_ns(w, ns, "status", name);
		if (r < 0)
			log_warning("Couldn't update status condition for namespace %s: %s", name,
			            strerror(-r));
	}
}

static void add_fin(struct ns_counts *tot, const struct ns_counts *fin)
{
	for (size_t i = 0; i < fin->n; i++)
		if (fin->v[i].n)
			ns_counts_add(tot, fin->v[i].name, fin->v[i].n);
}

/* returns the first error (the aggregate is logged), *estimate */
static int delete_all_content(struct nsw *w, cJSON **ns, const char *name, int64_t *estimate)
{
	struct ns_discovery d = {0};
	struct ns_conditions u = {0};
	struct ns_counts gvrs = {0}, fins = {0};
	int64_t deleted_at = ns_deletion_time(*ns);
	char err[1024];
	int first = 0, r;

	*estimate = 0;
	r = discover(w, &d, err, sizeof(err));
	if (r < 0) {
		ns_conditions_discovery(&u, err, 0);
		first = r;
	} else if (d.n_failed) {
		char *m = NULL;
		if (ns_discovery_error(&d, &m) == 0 && m)
			ns_conditions_discovery(&u, m, d.n_failed);
		free(m);
		first = -EREMOTEIO;
	}
	/* pods first */
	for (size_t i = 0; i < d.n; i++) {
		const struct ns_gvr *g = &d.v[i];
		struct gvr_result res;
		if (g->group[0] || strcmp(g->resource, "pods") || strcmp(g->version, "v1"))
			continue;
		r = delete_gvr(w, g, name, deleted_at, &res, err, sizeof(err));
		if (r < 0) {
			char m[1200];
			snprintf(m, sizeof(m), "failed to delete pods for namespace: %s, err: %s",
			         name, err);
			ns_conditions_content_err(&u, err);
			log_warning("%s", m);
			if (!first)
				first = r;
		}
		if (res.estimate > *estimate)
			*estimate = res.estimate;
		if (res.remaining > 0) {
			log_v(5,
			      "namespace %s: pods still remain, delaying deletion of other "
			      "resources",
			      name);
			ns_counts_clear(&res.fin);
			status_update(w, &u, ns, name);
			goto out;
		}
		ns_counts_clear(&res.fin);
	}
	{
		const struct ns_gvr **rest = calloc(d.n ? d.n : 1, sizeof(*rest));
		struct gvr_result *res = calloc(d.n ? d.n : 1, sizeof(*res));
		int *rcs = calloc(d.n ? d.n : 1, sizeof(*rcs));
		char *errs = calloc(d.n ? d.n : 1, 1024);
		size_t m = 0;
		if (!rest || !res || !rcs || !errs) {
			free(rest);
			free(res);
			free(rcs);
			free(errs);
			first = first ? first : -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < d.n; i++)
			if (d.v[i].group[0] || strcmp(d.v[i].resource, "pods") ||
			    strcmp(d.v[i].version, "v1"))
				rest[m++] = &d.v[i];
		delete_gvrs(w, rest, m, name, res, rcs, errs, 1024);
		for (size_t i = 0; i < m; i++) {
			const struct ns_gvr *g = rest[i];
			if (rcs[i] < 0) {
				ns_conditions_content_err(&u, errs + i * 1024);
				log_v(2, "namespace %s: %s.%s: %s", name, g->resource, g->group,
				      errs + i * 1024);
				if (!first)
					first = rcs[i];
			}
			if (res[i].estimate > *estimate)
				*estimate = res[i].estimate;
			if (res[i].remaining > 0) {
				char gr[600];
				snprintf(gr, sizeof(gr), "%s.%s", g->resource, g->group);
				ns_counts_add(&gvrs, gr, res[i].remaining);
				add_fin(&fins, &res[i].fin);
			}
			ns_counts_clear(&res[i].fin);
		}
		free(rest);
		free(res);
		free(rcs);
		free(errs);
	}
	ns_conditions_totals(&u, &gvrs, &fins);
	status_update(w, &u, ns, name);
out:
	ns_counts_clear(&gvrs);
	ns_counts_clear(&fins);
	ns_conditions_clear(&u);
	ns_discovery_clear(&d);
	return first;
}

/* ---- the sync (NamespacedResourcesDeleter.Delete) ------------------------------------------ */
enum { NS_GONE = 0, NS_DONE_PRESENT = 1 };

static int ns_delete(struct nsw *w, const char *name, int64_t *estimate)
{
	cJSON *ns = NULL;
	int r;

	*estimate = 0;
	if ((r = get_ns(w, name, &ns)) == -ENOENT)
		return NS_GONE;
	if (r < 0)
		return r;
	if (!ns_deletion_time(ns)) {
		cJSON_Delete(ns);
		return NS_GONE; /* not being deleted: nothing to come back for */
	}
	r = retry_on_conflict(w, name, &ns, "status", ns_mark_terminating);
	if (r == -ENOENT) {
		cJSON_Delete(ns);
		return NS_GONE;
	}
	if (r < 0)
		goto out;
	if (!ns_deletion_time(ns)) {
		r = NS_GONE;
		goto out;
	}
	if (ns_finalized(ns)) {
		r = NS_DONE_PRESENT;
		goto out;
	}
	if ((r = delete_all_content(w, &ns, name, estimate)) < 0 || *estimate > 0)
		goto out;
	r = retry_on_conflict(w, name, &ns, "finalize", finalize_fn);
	if (r == -ENOENT)
		r = NS_GONE;
	else if (r == 0)
		r = NS_DONE_PRESENT;
out:
	cJSON_Delete(ns);
	return r;
}

static void ns_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct nsw *w = state;
	int64_t estimate = 0;
	int r;

	(void)q;
	*res = (struct wk_result){0};
	r = ns_delete(w, key, &estimate);
	if (r < 0) {
		log_warning("Deletion of namespace %s failed: %s", key, strerror(-r));
		res->err = r;
	} else if (estimate > 0) {
		log_v(4, "Content remaining in namespace %s, waitSeconds %lld", key,
		      (long long)(estimate / 2 + 1));
		res->requeue_after = true;
		res->after_usec = ns_requeue_us(estimate);
	} else if (r == NS_DONE_PRESENT && w->sync_period_us) {
		res->requeue_after = true; /* the informer's resync */
		res->after_usec = w->sync_period_us;
	}
}

static const struct wk_controller ns_worker = {
        .name = NS_CONTROLLER,
        .queues = ns_queue_names,
        .init = ns_init,
        .sync = ns_sync,
        .fini = ns_fini,
};

/* ---- the descriptor ----------------------------------------------------------------------- */
static int ns_mgr_setup(struct kcmd_mgr_env *env, const struct kcmd_flag_values *v,
                        void **ret_state)
{
	int fd = kube_limiter_memfd_create();

	(void)v;
	*ret_state = NULL;
	if (fd < 0)
		return 0; /* each worker limits itself: still correct, only less exact */
	return kcmd_mgr_export_fd(env, "KCMD_NS_LIMITER_FD", fd, KCMD_TO_WORKERS);
}

static int ns_workers(const struct kcmd_flag_values *v)
{
	int64_t n = kcmd_flag_int(v, "concurrent-namespace-syncs");
	return n < 1 ? 1 : (int)n;
}

static const char *const ns_aliases[] = {"namespace", NULL};
static const struct kcmd_watch ns_watches[] = {
        {"", "v1", "namespaces", "Namespace", KCMD_CACHE_METADATA, false},
};
static const struct kcmd_queue ns_queues[] = {{.name = NS_QUEUE}};
static const struct kcmd_flag ns_flags[] = {
        {.name = "concurrent-namespace-syncs",
         .type = KCMD_FLAG_INT,
         .def = "10",
         .min = 1,
         .max = 64,
         .help = "The number of namespace objects that are allowed to sync concurrently. Larger "
                 "number = more responsive namespace termination, but more CPU (and network) "
                 "load (worker processes)."},
        {.name = "namespace-sync-period",
         .type = KCMD_FLAG_DURATION,
         .def = "5m0s",
         .help = "The period for syncing namespace life-cycle updates"},
};

const struct kcmd_controller kcmd_namespace_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = NS_CONTROLLER,
        .aliases = ns_aliases,
        .enabled_by_default = true,
        .service_account = "namespace-controller",
        .cluster_scoped_keys = true,
        .watches = ns_watches,
        .n_watches = 1,
        .queues = ns_queues,
        .n_queues = 1,
        .flags = ns_flags,
        .n_flags = sizeof(ns_flags) / sizeof(ns_flags[0]),
        .worker_count = ns_workers,
        .mgr_setup = ns_mgr_setup,
        .handlers = &ns_handlers,
        .worker = &ns_worker,
};
