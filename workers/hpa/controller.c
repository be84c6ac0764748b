/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/hpa/controller.c: the horizontal pod autoscaler (upstream
 * pkg/controller/podautoscaler/horizontal.go) over kcmd's cache and queue: its handler table
 * (kcmd-dispatcher) and its sync (kcmd-worker --controller=horizontal-pod-autoscaler-controller).
 *
 * Handlers: an HPA added, or updated with a new metadata.generation (a spec change), queues its
 * key at once; a status-only update queues nothing (upstream's AddRateLimited of it lands on the
 * key's next periodic sync, which the worker has already scheduled). A deleted HPA's key is
 * queued so the worker forgets its history and selector.
 *
 * Sync (reconcileAutoscaler): the HPA from the cache (whole object); the target's /scale found
 * through discovery of its group (every version serving the kind, preferred first, as the
 * RESTMapper's RESTMappings); the min/max clamp or the metrics (metrics.k8s.io PodMetrics for
 * resource and containerResource metrics, custom.metrics.k8s.io for pods and object metrics,
 * external.metrics.k8s.io for external ones) and the replica calculator (hpa.c) over the pods
 * the scale's selector picks, LISTed from the apiserver (the typed pod cache has no container
 * requests or start time); the normalisation; the scale update (retried on Conflict as
 * retry.RetryOnConflict); the Events and conditions with upstream's reasons and messages; the
 * status written with UpdateStatus when it changed. Every key comes back after
 * --horizontal-pod-autoscaler-sync-period whatever happened (the fixed-interval rate limiter
 * of upstream's queue), until the HPA is gone.
 *
 * The recommendations, scale events and selectors live in this worker process (one process,
 * as upstream keeps them in the controller's maps); a restarted worker starts them afresh,
 * as a restarted kcm does.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kcmd/cache.h"
#include "kcmd/client.h"
#include "kcmd/controller.h"
#include "kcmd/handlers.h"
#include "kcmd/worker.h"
#include "kube/client.h"
#include "kube/model.h"
#include "kube/selector.h"
#include "lib/goflag.h"
#include "lib/log.h"
#include "shm/arena.h"
#include "shm/record-model.h"
#include "workers/hpa/hpa.h"
#include "workers/hpa/plugin.h"
#include "workers/hpa/util.h"

#define ERRLEN 2048

/* snprintf whose truncation of a long message is intended (messages are capped at ERRLEN) */
static void msgf(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void msgf(char *out, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(out, n, fmt, ap);
	va_end(ap);
}

static const cJSON *member(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}
static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = member(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* ---- handlers ------------------------------------------------------------------------------- */
static int64_t json_generation(const struct shm_obj *o)
{
	size_t len = 0;
	const char *j = o ? kcmd_obj_json(o, &len) : NULL;
	cJSON *x = j ? cJSON_ParseWithLength(j, len) : NULL;
	const cJSON *g = member(member(x, "metadata"), "generation");
	int64_t r = cJSON_IsNumber(g) ? (int64_t)g->valuedouble : -1;
	cJSON_Delete(x);
	return r;
}

static void queue_event(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	char key[KCMD_KEY_MAX + 1];
	const char *ns, *name;

	if (ev->meta) {
		ns = kcmd_meta_namespace(ev->meta);
		name = kcmd_meta_name(ev->meta);
	} else if (ev->old) {
		ns = kcmd_obj_namespace(ev->old);
		name = kcmd_obj_name(ev->old);
	} else {
		return;
	}
	if (kcmd_key_make(key, sizeof(key), ns, name) >= 0)
		kcmd_queue_add(ctx, 0, key);
}

static void on_hpa_update(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	/* HPAGeneration (beta, on): a spec change is reconciled at once */
	if (ev->meta && ev->old && json_generation(ev->old) == ev->meta->generation)
		return;
	queue_event(ctx, ev);
}

static int resync_visit(const struct shm_obj *o, void *ud)
{
	char key[KCMD_KEY_MAX + 1];
	if (kcmd_key_make(key, sizeof(key), o->ns, o->name) >= 0)
		kcmd_queue_add(ud, 0, key);
	return 0;
}

static void hh_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	kcmd_cache_list(ctx->arena, "autoscaling", "horizontalpodautoscalers", NULL, resync_visit,
	                ctx);
}

static const char *const hh_queues[] = {HPA_QUEUE, NULL};
static const struct inf_handler_entry hh_entries[] = {
        {"autoscaling", "horizontalpodautoscalers", queue_event, on_hpa_update, queue_event},
};

const struct inf_handler_table hpa_handler_table = {
        .controller = HPA_CONTROLLER,
        .queues = hh_queues,
        .entries = hh_entries,
        .n_entries = 1,
        .resync = hh_resync,
};

/* ---- worker state ------------------------------------------------------------------------- */
struct entry {
	char key[KCMD_KEY_MAX + 1];
	char ns[254];
	struct hpa_history hist;
	struct kube_selector *sel; /* NULL: labels.Nothing() */
	struct entry *next;
};

struct hc {
	struct wk_ctx *ctx;
	uint64_t sync_period_us;
	int64_t downscale_window_ns;
	struct hpa_calc_cfg calc;
	double tolerance;
	struct entry *entries;
	bool synced;
};

static struct entry *entry_get(struct hc *c, const char *key, const char *ns, bool create)
{
	for (struct entry *e = c->entries; e; e = e->next)
		if (!strcmp(e->key, key))
			return e;
	if (!create)
		return NULL;
	struct entry *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	msgf(e->key, sizeof(e->key), "%s", key);
	msgf(e->ns, sizeof(e->ns), "%s", ns);
	e->next = c->entries;
	c->entries = e;
	return e;
}

static void entry_drop(struct hc *c, const char *key)
{
	for (struct entry **p = &c->entries; *p; p = &(*p)->next)
		if (!strcmp((*p)->key, key)) {
			struct entry *e = *p;
			*p = e->next;
			hpa_history_free(&e->hist);
			kube_selector_free(e->sel);
			free(e);
			return;
		}
}

/* ---- the reconcile's working set ----------------------------------------------------------- */
struct rc {
	struct hc *c;
	struct entry *e;
	cJSON *hpa;         /* a copy of the cached HPA; its status is rewritten */
	cJSON *orig_status; /* the status as read */
	cJSON *status;      /* == member(hpa, "status") */
	const char *ns, *name, *uid;
	kube_time_t now;
};

static void record(struct rc *r, const char *type, const char *reason, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static void record(struct rc *r, const char *type, const char *reason, const char *fmt, ...)
{
	char msg[ERRLEN];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	struct kcmd_object_ref ref = {"autoscaling/v2", "HorizontalPodAutoscaler", r->ns, r->name,
	                              r->uid ? r->uid : ""};
	int rc = kcmd_event_record(r->c->ctx->kc, HPA_COMPONENT, &ref, type, reason, "%s", msg);
	if (rc < 0)
		log_v(2, "event %s: %s", reason, strerror(-rc));
}

/* setConditionInList */
static void set_cond(struct rc *r, const char *type, const char *status, const char *reason,
                     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void set_cond(struct rc *r, const char *type, const char *status, const char *reason,
                     const char *fmt, ...)
{
	char msg[ERRLEN], ts[KUBE_TIME_BUF];
	va_list ap;
	cJSON *conds = cJSON_GetObjectItemCaseSensitive(r->status, "conditions"), *c = NULL, *it;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!cJSON_IsArray(conds)) {
		cJSON_DeleteItemFromObjectCaseSensitive(r->status, "conditions");
		conds = cJSON_AddArrayToObject(r->status, "conditions");
	}
	cJSON_ArrayForEach(it, conds)
	{
		const char *t = str(it, "type");
		if (t && !strcmp(t, type)) {
			c = it;
			break;
		}
	}
	if (!c) {
		c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "type", type);
		cJSON_AddItemToArray(conds, c);
	}
	const char *old = str(c, "status");
	if (!old || strcmp(old, status)) {
		kube_time_format(r->now, ts);
		cJSON_DeleteItemFromObjectCaseSensitive(c, "lastTransitionTime");
		cJSON_AddStringToObject(c, "lastTransitionTime", ts);
	}
	cJSON_DeleteItemFromObjectCaseSensitive(c, "status");
	cJSON_AddStringToObject(c, "status", status);
	cJSON_DeleteItemFromObjectCaseSensitive(c, "reason");
	cJSON_AddStringToObject(c, "reason", reason);
	cJSON_DeleteItemFromObjectCaseSensitive(c, "message");
	if (msg[0])
		cJSON_AddStringToObject(c, "message", msg);
}

static bool cond_true(const cJSON *status, const char *type)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, member(status, "conditions"))
	{
		const char *t = str(it, "type"), *s = str(it, "status");
		if (t && !strcmp(t, type))
			return s && !strcmp(s, "True");
	}
	return false;
}

/* client-go's error text for a failed request: the Status message, else the generic text for
 * the code with "(verb resource.group)" */
static void api_err(const struct kube_response *resp, int r, const char *verb, const char *gr,
                    char *out, size_t n)
{
	if (resp->error.message[0] && resp->error.reason[0]) {
		msgf(out, n, "%s", resp->error.message);
		return;
	}
	const char *t = NULL;
	switch (resp->http_code) {
	case 404:
		t = "the server could not find the requested resource";
		break;
	case 503:
		t = "the server is currently unable to handle the request";
		break;
	case 401:
		t = "Unauthorized";
		break;
	case 403:
		t = "forbidden";
		break;
	case 0:
		break;
	default:
		t = NULL;
	}
	if (t)
		msgf(out, n, "%s (%s %s)", t, verb, gr);
	else if (resp->http_code >= 500)
		msgf(out, n,
		     "an error on the server (\"%s\") has prevented the request from "
		     "succeeding (%s %s)",
		     resp->error.message, verb, gr);
	else if (resp->error.message[0])
		msgf(out, n, "%s", resp->error.message);
	else
		msgf(out, n, "%s", strerror(-r));
}

static int64_t milli_of(const char *q, bool *ok)
{
	int64_t v = 0;
	*ok = q && hpa_qty_milli(q, &v) == 0;
	return *ok ? v : 0;
}

static int64_t milli_json(const cJSON *q, bool *ok)
{
	if (cJSON_IsString(q))
		return milli_of(q->valuestring, ok);
	if (cJSON_IsNumber(q)) {
		*ok = true;
		return (int64_t)(q->valuedouble * 1000.0);
	}
	*ok = false;
	return 0;
}

static cJSON *milli_quantity(int64_t v, bool binary)
{
	char buf[64];
	hpa_qty_format_milli(v, binary, buf, sizeof(buf));
	return cJSON_CreateString(buf);
}

/* ---- scale -------------------------------------------------------------------------------- */
struct target {
	char group[256], resource[256], version[64];
	cJSON *scale; /* autoscaling/v1 Scale */
};

static cJSON *get_json(struct hc *c, const char *path, int *ret)
{
	struct kube_request req = {.verb = KUBE_GET, .path = path};
	struct kube_response resp;
	*ret = kube_client_request(c->ctx->kc, &req, NULL, NULL, &resp);
	cJSON *j = *ret == 0 ? cJSON_ParseWithLength(resp.body, resp.body_len) : NULL;
	kube_response_clear(&resp);
	return j;
}

/* RESTMappings(GroupKind): (version, resource) of every version of group serving kind,
 * preferred version first. Returns the count (0: NoKindMatchError). */
static size_t mappings(struct hc *c, const char *group, const char *kind, char vers[][64],
                       char res[][256], size_t max)
{
	char path[600];
	char versions[8][64];
	size_t nv = 0, n = 0;
	int r;

	if (!group[0]) {
		msgf(versions[nv++], 64, "v1");
	} else {
		msgf(path, sizeof(path), "/apis/%s", group);
		cJSON *g = get_json(c, path, &r);
		const char *pref = str(member(g, "preferredVersion"), "version");
		if (pref)
			msgf(versions[nv++], 64, "%s", pref);
		const cJSON *it;
		cJSON_ArrayForEach(it, member(g, "versions"))
		{
			const char *v = str(it, "version");
			if (v && nv < 8 && (!pref || strcmp(v, pref)))
				msgf(versions[nv++], 64, "%s", v);
		}
		cJSON_Delete(g);
	}
	for (size_t i = 0; i < nv && n < max; i++) {
		if (group[0])
			msgf(path, sizeof(path), "/apis/%s/%s", group, versions[i]);
		else
			msgf(path, sizeof(path), "/api/%s", versions[i]);
		cJSON *l = get_json(c, path, &r);
		const cJSON *it;
		cJSON_ArrayForEach(it, member(l, "resources"))
		{
			const char *nm = str(it, "name"), *k = str(it, "kind");
			if (nm && k && !strchr(nm, '/') && !strcmp(k, kind)) {
				msgf(vers[n], 64, "%s", versions[i]);
				msgf(res[n], 256, "%s", nm);
				n++;
				break;
			}
		}
		cJSON_Delete(l);
	}
	return n;
}

static int scale_get(struct hc *c, const char *ns, const char *name, struct target *t, char *err,
                     size_t errlen)
{
	struct kube_request req = {.verb = KUBE_GET,
	                           .group = t->group,
	                           .version = t->version,
	                           .resource = t->resource,
	                           .ns = ns,
	                           .name = name,
	                           .subresource = "scale"};
	struct kube_response resp;
	char gr[600];
	int r = kube_client_request(c->ctx->kc, &req, NULL, NULL, &resp);
	msgf(gr, sizeof(gr), "%s%s%s", t->resource, t->group[0] ? "." : "", t->group);
	if (r == 0) {
		cJSON_Delete(t->scale);
		t->scale = cJSON_ParseWithLength(resp.body, resp.body_len);
		if (!t->scale)
			r = -EBADMSG;
	}
	if (r < 0)
		api_err(&resp, r, "get", gr, err, errlen);
	kube_response_clear(&resp);
	return r;
}

static int scale_update(struct hc *c, const char *ns, const char *name, struct target *t,
                        int32_t replicas, char *err, size_t errlen)
{
	int r = -EIO;
	/* retry.DefaultRetry: 5 steps */
	for (int step = 0; step < 5; step++) {
		cJSON *spec = (cJSON *)member(t->scale, "spec");
		if (!spec)
			spec = cJSON_AddObjectToObject(t->scale, "spec");
		cJSON_DeleteItemFromObjectCaseSensitive(spec, "replicas");
		cJSON_AddNumberToObject(spec, "replicas", replicas);
		char *body = cJSON_PrintUnformatted(t->scale);
		if (!body)
			return -ENOMEM;
		struct kube_request req = {.verb = KUBE_UPDATE,
		                           .group = t->group,
		                           .version = t->version,
		                           .resource = t->resource,
		                           .ns = ns,
		                           .name = name,
		                           .subresource = "scale",
		                           .body = body,
		                           .body_len = strlen(body)};
		struct kube_response resp;
		char gr[600];
		msgf(gr, sizeof(gr), "%s%s%s", t->resource, t->group[0] ? "." : "", t->group);
		r = kube_client_request(c->ctx->kc, &req, NULL, NULL, &resp);
		free(body);
		if (r < 0)
			api_err(&resp, r, "put", gr, err, errlen);
		kube_response_clear(&resp);
		if (r != -ESTALE)
			return r;
		char gerr[ERRLEN];
		if (scale_get(c, ns, name, t, gerr, sizeof(gerr)) < 0)
			log_error("error getting latest scale for %s/%s during conflict retry: %s",
			          ns, name, gerr);
		usleep(10000 << step);
	}
	return r;
}

/* ---- pods ------------------------------------------------------------------------------------ */
struct podset {
	cJSON *list;
	struct hpa_pod *pods;
	size_t n;
	char **errs;
	int ready_running; /* getReadyPodsCount */
};

static void podset_free(struct podset *p)
{
	for (size_t i = 0; p->errs && i < p->n; i++)
		free(p->errs[i]);
	free(p->errs);
	free(p->pods);
	cJSON_Delete(p->list);
	memset(p, 0, sizeof(*p));
}

/* calculateRequests for one pod */
static char *pod_request(const cJSON *pod, const char *container, const char *resource,
                         int64_t *ret)
{
	const cJSON *spec = member(pod, "spec"), *it;
	const char *pname = str(member(pod, "metadata"), "name");
	char *e = NULL;
	bool ok;
	*ret = 0;
	const cJSON *preq = member(member(spec, "resources"), "requests");
	bool pod_level = cJSON_IsObject(preq) && (member(preq, "cpu") || member(preq, "memory"));
	if (pod_level && !container[0]) {
		int64_t v = milli_json(member(preq, resource), &ok);
		if (!ok &&
		    asprintf(&e, "missing pod-level request for %s in Pod %s", resource, pname) < 0)
			e = NULL;
		*ret = v;
		return e;
	}
	const cJSON *lists[2] = {member(spec, "containers"), member(spec, "initContainers")};
	for (int l = 0; l < 2; l++)
		cJSON_ArrayForEach(it, lists[l])
		{
			const char *cn = str(it, "name");
			if (l == 1) {
				const char *rp = str(it, "restartPolicy");
				if (!rp || strcmp(rp, "Always"))
					continue;
			}
			if (!container[0] || (cn && !strcmp(container, cn))) {
				int64_t v = milli_json(
				        member(member(member(it, "resources"), "requests"),
				               resource),
				        &ok);
				if (!ok) {
					if (asprintf(&e,
					             "missing request for %s in container %s of "
					             "Pod %s",
					             resource, cn ? cn : "", pname) < 0)
						e = NULL;
					return e ? e : strdup("missing request");
				}
				*ret += v;
			}
			if (container[0] && cn && !strcmp(container, cn))
				return NULL;
		}
	if (container[0] && asprintf(&e, "container %s not found in Pod %s", container, pname) < 0)
		e = NULL;
	return e;
}

/* the pods the selector picks (podLister.Pods(ns).List(selector)), from the apiserver */
static int list_pods(struct hc *c, const char *ns, const char *selector, const char *container,
                     const char *resource, struct podset *ps, char *err, size_t errlen)
{
	struct kube_request req = {.verb = KUBE_LIST,
	                           .version = "v1",
	                           .resource = "pods",
	                           .ns = ns,
	                           .label_selector = selector};
	struct kube_response resp;
	int r = kube_client_request(c->ctx->kc, &req, NULL, NULL, &resp);
	memset(ps, 0, sizeof(*ps));
	if (r == 0)
		ps->list = cJSON_ParseWithLength(resp.body, resp.body_len);
	if (r < 0 || !ps->list) {
		char m[ERRLEN];
		api_err(&resp, r ? r : -EBADMSG, "list", "pods", m, sizeof(m));
		msgf(err, errlen, "unable to get pods while calculating replica count: %s", m);
		kube_response_clear(&resp);
		return r ? r : -EBADMSG;
	}
	kube_response_clear(&resp);
	const cJSON *items = member(ps->list, "items"), *it;
	size_t n = (size_t)cJSON_GetArraySize(items);
	ps->pods = calloc(n + 1, sizeof(*ps->pods));
	ps->errs = calloc(n + 1, sizeof(*ps->errs));
	if (!ps->pods || !ps->errs)
		return -ENOMEM;
	cJSON_ArrayForEach(it, items)
	{
		struct hpa_pod *p = &ps->pods[ps->n];
		const cJSON *md = member(it, "metadata"), *st = member(it, "status"), *cd;
		const char *phase = str(st, "phase"), *s;
		p->name = str(md, "name") ? str(md, "name") : "";
		p->deleting = str(md, "deletionTimestamp") != NULL;
		p->phase = !phase                      ? HPA_POD_OTHER
		           : !strcmp(phase, "Pending") ? HPA_POD_PENDING
		           : !strcmp(phase, "Running") ? HPA_POD_RUNNING
		           : !strcmp(phase, "Failed")  ? HPA_POD_FAILED
		                                       : HPA_POD_OTHER;
		if ((s = str(st, "startTime")))
			kube_time_parse(s, strlen(s), &p->start);
		cJSON_ArrayForEach(cd, member(st, "conditions"))
		{
			const char *t = str(cd, "type"), *cs = str(cd, "status");
			if (!t || strcmp(t, "Ready"))
				continue;
			p->has_ready = true;
			p->ready = cs && !strcmp(cs, "True");
			p->ready_false = cs && !strcmp(cs, "False");
			if ((s = str(cd, "lastTransitionTime")))
				kube_time_parse(s, strlen(s), &p->ready_ltt);
			break;
		}
		if (p->phase == HPA_POD_RUNNING && p->ready)
			ps->ready_running++;
		if (resource) {
			ps->errs[ps->n] = pod_request(it, container, resource, &p->request);
			p->request_err = ps->errs[ps->n];
		}
		ps->n++;
	}
	return 0;
}

/* ---- metrics ----------------------------------------------------------------------------------
 */
struct samples {
	cJSON *list;
	struct hpa_sample *s;
	size_t n;
	kube_time_t first_ts;
};

static void samples_free(struct samples *s)
{
	cJSON_Delete(s->list);
	free(s->s);
	memset(s, 0, sizeof(*s));
}

static int metrics_list(struct hc *c, const char *group, const char *version, const char *path_tail,
                        const char *ns, const char *label_sel, const char *metric_sel,
                        const char *gr, cJSON **ret, char *err, size_t errlen)
{
	char path[1200];
	char *q = NULL, *esc1 = NULL, *esc2 = NULL;
	msgf(path, sizeof(path), "/apis/%s/%s/namespaces/%s/%s", group, version, ns, path_tail);
	/* the selectors go in the query string */
	{
		size_t n = 0;
		const char *sels[2] = {label_sel, metric_sel};
		const char *names[2] = {"labelSelector", "metricLabelSelector"};
		char *buf = calloc(1, 4096);
		if (!buf)
			return -ENOMEM;
		for (int i = 0; i < 2; i++) {
			if (!sels[i] || !sels[i][0])
				continue;
			n += (size_t)snprintf(buf + n, 4096 - n, "%s%s=", n ? "&" : "?", names[i]);
			for (const unsigned char *p = (const unsigned char *)sels[i];
			     *p && n < 4000; p++) {
				if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
				    (*p >= '0' && *p <= '9') || strchr("-_.~", *p))
					buf[n++] = (char)*p;
				else
					n += (size_t)snprintf(buf + n, 4096 - n, "%%%02X", *p);
			}
		}
		q = buf;
	}
	size_t pl = strlen(path);
	msgf(path + pl, sizeof(path) - pl, "%s", q);
	free(q);
	free(esc1);
	free(esc2);
	struct kube_request req = {.verb = KUBE_GET, .path = path};
	struct kube_response resp;
	int r = kube_client_request(c->ctx->kc, &req, NULL, NULL, &resp);
	if (r == 0 && !(*ret = cJSON_ParseWithLength(resp.body, resp.body_len)))
		r = -EBADMSG;
	if (r < 0)
		api_err(&resp, r, "get", gr, err, errlen);
	kube_response_clear(&resp);
	return r;
}

/* resourceMetricsClient.GetResourceMetric */
static int resource_metric(struct hc *c, const char *ns, const char *selector, const char *res,
                           const char *container, struct samples *out, char *err, size_t errlen)
{
	char m[ERRLEN];
	int r;
	memset(out, 0, sizeof(*out));
	r = metrics_list(c, "metrics.k8s.io", "v1beta1", "pods", ns, selector, NULL,
	                 "pods.metrics.k8s.io", &out->list, m, sizeof(m));
	if (r < 0) {
		msgf(err, errlen, "unable to fetch metrics from resource metrics API: %s", m);
		return r;
	}
	const cJSON *items = member(out->list, "items"), *it, *ct;
	size_t n = (size_t)cJSON_GetArraySize(items);
	if (n == 0) {
		msgf(err, errlen, "no metrics returned from resource metrics API");
		return -ENODATA;
	}
	out->s = calloc(n, sizeof(*out->s));
	if (!out->s)
		return -ENOMEM;
	bool first = true;
	cJSON_ArrayForEach(it, items)
	{
		struct hpa_sample s = {.name = str(member(it, "metadata"), "name")};
		const char *ts = str(it, "timestamp"), *w = str(it, "window");
		uint64_t wus = 0;
		if (ts)
			kube_time_parse(ts, strlen(ts), &s.ts);
		if (w && kcmd_parse_duration(w, &wus) == 0)
			s.window_ns = (int64_t)wus * 1000;
		if (first) {
			out->first_ts = s.ts;
			first = false;
		}
		if (!s.name)
			continue;
		bool missing = cJSON_GetArraySize(member(it, "containers")) == 0, found = false, ok;
		int64_t sum = 0;
		cJSON_ArrayForEach(ct, member(it, "containers"))
		{
			const char *cn = str(ct, "name");
			if (container[0]) {
				if (!cn || strcmp(cn, container))
					continue;
				found = true;
				int64_t v = milli_json(member(member(ct, "usage"), res), &ok);
				if (ok) {
					s.value = v;
					out->s[out->n++] = s;
				}
				break;
			}
			int64_t v = milli_json(member(member(ct, "usage"), res), &ok);
			if (!ok) {
				missing = true;
				break;
			}
			sum += v;
		}
		if (container[0]) {
			if (!found)
				log_v(2, "Missing container metric container=%s pod=%s/%s",
				      container, ns, s.name);
			continue;
		}
		if (!missing) {
			s.value = sum;
			out->s[out->n++] = s;
		}
	}
	return 0;
}

/* ---- computing the replicas ---------------------------------------------------------------- */
struct compute {
	int32_t spec_replicas, status_replicas;
	const char *selector;
};

static struct hpa_tolerances tolerances(struct rc *r)
{
	struct hpa_tolerances t = {r->c->tolerance, r->c->tolerance};
	const cJSON *b = member(member(r->hpa, "spec"), "behavior");
	bool ok;
	int64_t v;
	if (!cJSON_IsObject(b))
		return t;
	const cJSON *d = member(member(b, "scaleDown"), "tolerance");
	const cJSON *u = member(member(b, "scaleUp"), "tolerance");
	if (d && (v = milli_json(d, &ok), ok))
		t.down = (double)v / 1000.0;
	if (u && (v = milli_json(u, &ok), ok))
		t.up = (double)v / 1000.0;
	return t;
}

/* A failed metric: getUnableComputeReplicaCountCondition */
struct mres {
	int32_t replicas;
	char name[512];
	kube_time_t ts;
	const char *cond_reason;
	char cond_msg[ERRLEN]; /* the condition's message */
	char err[ERRLEN];
	cJSON *status; /* the MetricStatus, NULL when it failed */
};

static void unable(struct rc *r, struct mres *m, const char *reason, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static void unable(struct rc *r, struct mres *m, const char *reason, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->err, sizeof(m->err), fmt, ap);
	va_end(ap);
	record(r, "Warning", reason, "%s", m->err);
	m->cond_reason = reason;
	msgf(m->cond_msg, sizeof(m->cond_msg),
	     "the HPA was unable to compute the replica count: %s", m->err);
}

static int resource_generic(struct rc *r, const struct compute *cp, const cJSON *target,
                            const char *res, const char *container, bool container_src,
                            struct mres *m, cJSON **value_status)
{
	struct samples s;
	struct podset ps;
	char err[ERRLEN];
	int rc;
	bool ok;
	struct hpa_calc_cfg cfg = r->c->calc;
	cfg.tol = tolerances(r);
	cfg.now = r->now;
	bool binary = !strcmp(res, "memory"), cpu = !strcmp(res, "cpu");
	const cJSON *av = member(target, "averageValue"),
	            *au = member(target, "averageUtilization");

	if (!av && !cJSON_IsNumber(au)) {
		msgf(m->err, sizeof(m->err),
		     "invalid resource metric source: neither an average utilization target nor "
		     "an average value (usage) target was set");
		return -EINVAL;
	}
	if ((rc = resource_metric(r->c, r->ns, cp->selector, res, container, &s, err,
	                          sizeof(err))) < 0) {
		msgf(m->err, sizeof(m->err),
		     "failed to get %s %s: unable to get metrics for resource %s: %s", res,
		     av ? "usage" : "utilization", res, err);
		samples_free(&s);
		return rc;
	}
	if ((rc = list_pods(r->c, r->ns, cp->selector, container, av ? NULL : res, &ps, err,
	                    sizeof(err))) < 0) {
		msgf(m->err, sizeof(m->err), "failed to get %s %s: %s", res,
		     av ? "usage" : "utilization", err);
		goto out;
	}
	*value_status = cJSON_CreateObject();
	if (av) {
		int64_t usage = 0, target_v = milli_json(av, &ok);
		rc = hpa_plain_replicas(&cfg, ps.pods, ps.n, s.s, s.n, cp->spec_replicas, target_v,
		                        cpu, &m->replicas, &usage, err, sizeof(err));
		if (rc < 0) {
			msgf(m->err, sizeof(m->err), "failed to get %s usage: %s", res, err);
			goto out;
		}
		msgf(m->name, sizeof(m->name), "%s resource", res);
		cJSON_AddItemToObject(*value_status, "averageValue", milli_quantity(usage, binary));
	} else {
		int32_t util = 0;
		int64_t raw = 0;
		rc = hpa_resource_replicas(&cfg, ps.pods, ps.n, s.s, s.n, cp->spec_replicas,
		                           (int32_t)au->valuedouble, cpu, &m->replicas, &util, &raw,
		                           err, sizeof(err));
		if (rc < 0) {
			msgf(m->err, sizeof(m->err), "failed to get %s utilization: %s", res, err);
			goto out;
		}
		msgf(m->name, sizeof(m->name), "%s %sresource utilization (percentage of request)",
		     res, container_src ? "container " : "");
		cJSON_AddItemToObject(*value_status, "averageValue", milli_quantity(raw, binary));
		cJSON_AddNumberToObject(*value_status, "averageUtilization", util);
	}
	m->ts = s.first_ts;
out:
	if (rc < 0) {
		cJSON_Delete(*value_status);
		*value_status = NULL;
	}
	podset_free(&ps);
	samples_free(&s);
	return rc;
}

static char *selector_string(const cJSON *sel, struct kube_selector **ret, char *err, size_t n)
{
	char *s = NULL;
	*ret = NULL;
	if (kube_selector_from_json(sel, ret, err, n) < 0)
		return NULL;
	if (kube_selector_format(*ret, &s) < 0)
		s = NULL;
	return s;
}

static int custom_pods(struct rc *r, const struct compute *cp, const cJSON *spec, struct mres *m)
{
	const cJSON *pm = member(spec, "pods"), *metric = member(pm, "metric");
	const char *mname = str(metric, "name") ? str(metric, "name") : "";
	struct kube_selector *ms = NULL;
	char err[ERRLEN] = "", tail[600];
	int rc;
	char *msel = selector_string(member(metric, "selector"), &ms, err, sizeof(err));
	kube_selector_free(ms);
	if (!msel) {
		unable(r, m, "FailedGetPodsMetric", "%s", err);
		msgf(m->err, sizeof(m->err), "failed to get pods metric value: %s", err);
		return -EINVAL;
	}
	cJSON *list = NULL;
	msgf(tail, sizeof(tail), "pods/*/%s", mname);
	rc = metrics_list(r->c, "custom.metrics.k8s.io", "v1beta2", tail, r->ns, cp->selector, msel,
	                  "pods.custom.metrics.k8s.io", &list, err, sizeof(err));
	char msg[ERRLEN];
	struct samples s = {.list = list};
	struct podset ps = {0};
	int64_t usage = 0;
	if (rc < 0) {
		msgf(msg, sizeof(msg),
		     "unable to get metric %s: unable to fetch metrics from custom metrics API: %s",
		     mname, err);
		goto fail;
	}
	const cJSON *items = member(list, "items"), *it;
	size_t n = (size_t)cJSON_GetArraySize(items);
	if (n == 0) {
		msgf(msg, sizeof(msg),
		     "unable to get metric %s: no metrics returned from custom metrics API", mname);
		rc = -ENODATA;
		goto fail;
	}
	s.s = calloc(n, sizeof(*s.s));
	cJSON_ArrayForEach(it, items)
	{
		struct hpa_sample x = {.name = str(member(it, "describedObject"), "name")};
		const char *ts = str(it, "timestamp");
		bool ok;
		if (ts)
			kube_time_parse(ts, strlen(ts), &x.ts);
		const cJSON *ws = member(it, "windowSeconds");
		x.window_ns = (cJSON_IsNumber(ws) ? (int64_t)ws->valuedouble : 60) * 1000000000LL;
		x.value = milli_json(member(it, "value"), &ok);
		if (!s.n)
			s.first_ts = x.ts;
		if (x.name && s.s)
			s.s[s.n++] = x;
	}
	if ((rc = list_pods(r->c, r->ns, cp->selector, "", NULL, &ps, msg, sizeof(msg))) < 0)
		goto fail;
	struct hpa_calc_cfg cfg = r->c->calc;
	cfg.tol = tolerances(r);
	cfg.now = r->now;
	bool ok;
	int64_t target = milli_json(member(member(pm, "target"), "averageValue"), &ok);
	rc = hpa_plain_replicas(&cfg, ps.pods, ps.n, s.s, s.n, cp->spec_replicas, target, false,
	                        &m->replicas, &usage, msg, sizeof(msg));
	if (rc < 0)
		goto fail;
	m->status = cJSON_CreateObject();
	cJSON_AddStringToObject(m->status, "type", "Pods");
	cJSON *p = cJSON_AddObjectToObject(m->status, "pods");
	cJSON_AddItemToObject(p, "metric", cJSON_Duplicate(metric, true));
	cJSON *cur = cJSON_AddObjectToObject(p, "current");
	cJSON_AddItemToObject(cur, "averageValue", milli_quantity(usage, false));
	msgf(m->name, sizeof(m->name), "pods metric %s", mname);
	m->ts = s.first_ts;
	goto out;
fail:
	unable(r, m, "FailedGetPodsMetric", "%s", msg);
	msgf(m->err, sizeof(m->err), "failed to get pods metric value: %s", msg);
out:
	podset_free(&ps);
	samples_free(&s);
	free(msel);
	return rc;
}

static int external(struct rc *r, const struct compute *cp, const cJSON *spec, struct mres *m)
{
	const cJSON *em = member(spec, "external"), *metric = member(em, "metric");
	const cJSON *target = member(em, "target");
	const char *mname = str(metric, "name") ? str(metric, "name") : "";
	const cJSON *selj = member(metric, "selector");
	struct kube_selector *ms = NULL;
	char err[ERRLEN] = "", msg[ERRLEN];
	bool per_pod = member(target, "averageValue") != NULL, ok;
	char *gosel = hpa_selector_gostring(selj);
	char *msel = NULL;
	cJSON *list = NULL;
	int rc = 0;

	if (!per_pod && !member(target, "value")) {
		msgf(msg, sizeof(msg),
		     "invalid external metric source: neither a value target nor "
		     "an average value target was set");
		unable(r, m, "FailedGetExternalMetric", "%s", msg);
		msgf(m->err, sizeof(m->err), "%s", msg);
		rc = -EINVAL;
		goto out;
	}
	msel = selector_string(selj, &ms, err, sizeof(err));
	kube_selector_free(ms);
	if (!msel) {
		msgf(msg, sizeof(msg), "%s", err);
		rc = -EINVAL;
		goto fail;
	}
	rc = metrics_list(r->c, "external.metrics.k8s.io", "v1beta1", mname, r->ns, msel, NULL,
	                  mname, &list, err, sizeof(err));
	if (rc < 0) {
		msgf(msg, sizeof(msg),
		     "unable to get external metric %s/%s/%s: unable to fetch metrics from "
		     "external metrics API: %s",
		     r->ns, mname, gosel ? gosel : "nil", err);
		goto fail;
	}
	const cJSON *items = member(list, "items"), *it;
	if (cJSON_GetArraySize(items) == 0) {
		msgf(msg, sizeof(msg),
		     "unable to get external metric %s/%s/%s: no metrics returned from external "
		     "metrics API",
		     r->ns, mname, gosel ? gosel : "nil");
		rc = -ENODATA;
		goto fail;
	}
	int64_t usage = 0;
	kube_time_t ts0 = 0;
	cJSON_ArrayForEach(it, items)
	{
		int64_t v = milli_json(member(it, "value"), &ok);
		const char *ts = str(it, "timestamp");
		if (it == items->child && ts)
			kube_time_parse(ts, strlen(ts), &ts0);
		if (per_pod) {
			usage += v;
			if (usage < 0) {
				usage = INT64_MAX;
				break;
			}
		} else {
			if (v > 0 && usage > INT64_MAX - v) {
				usage = INT64_MAX;
				break;
			}
			usage += v;
		}
	}
	struct hpa_tolerances tol = tolerances(r);
	int64_t shown = usage;
	if (per_pod) {
		int64_t t = milli_json(member(target, "averageValue"), &ok);
		m->replicas = hpa_per_pod_replicas(cp->status_replicas, usage, t, tol, &shown);
	} else {
		int64_t t = milli_json(member(target, "value"), &ok);
		double ratio = (double)usage / (double)t;
		struct podset ps = {0};
		if (cp->spec_replicas != 0 && !hpa_tol_within(tol, ratio)) {
			if ((rc = list_pods(r->c, r->ns, cp->selector, "", NULL, &ps, err,
			                    sizeof(err))) == 0 &&
			    ps.n == 0) {
				msgf(err, sizeof(err),
				     "no pods returned by selector while calculating replica "
				     "count");
				rc = -EINVAL;
			}
			if (rc < 0) {
				podset_free(&ps);
				msgf(msg, sizeof(msg), "unable to calculate ready pods: %s", err);
				goto fail;
			}
		}
		m->replicas =
		        hpa_usage_ratio_replicas(cp->spec_replicas, ratio, tol, ps.ready_running);
		podset_free(&ps);
	}
	m->status = cJSON_CreateObject();
	cJSON_AddStringToObject(m->status, "type", "External");
	cJSON *e = cJSON_AddObjectToObject(m->status, "external");
	cJSON_AddItemToObject(e, "metric", cJSON_Duplicate(metric, true));
	cJSON *cur = cJSON_AddObjectToObject(e, "current");
	cJSON_AddItemToObject(cur, per_pod ? "averageValue" : "value",
	                      milli_quantity(shown, false));
	msgf(m->name, sizeof(m->name), "external metric %s(%s)", mname, gosel ? gosel : "nil");
	m->ts = ts0;
	goto out;
fail:
	unable(r, m, "FailedGetExternalMetric", "%s", msg);
	if (per_pod)
		msgf(m->err, sizeof(m->err), "failed to get %s external metric: %s", mname, msg);
	else
		msgf(m->err, sizeof(m->err), "failed to get external metric %s: %s", mname, msg);
out:
	cJSON_Delete(list);
	free(msel);
	free(gosel);
	return rc;
}

static int object_metric(struct rc *r, const struct compute *cp, const cJSON *spec, struct mres *m)
{
	const cJSON *om = member(spec, "object"), *metric = member(om, "metric");
	const cJSON *target = member(om, "target"), *desc = member(om, "describedObject");
	const char *mname = str(metric, "name") ? str(metric, "name") : "";
	const char *kind = str(desc, "kind") ? str(desc, "kind") : "";
	const char *oname = str(desc, "name") ? str(desc, "name") : "";
	const char *av = str(desc, "apiVersion") ? str(desc, "apiVersion") : "";
	const char *ttype = str(target, "type") ? str(target, "type") : "";
	struct kube_selector *ms = NULL;
	char err[ERRLEN] = "", msg[ERRLEN], tail[1024], group[256] = "";
	char *msel = selector_string(member(metric, "selector"), &ms, err, sizeof(err));
	cJSON *list = NULL;
	bool ok, value = !strcmp(ttype, "Value") && member(target, "value");
	bool avg = !strcmp(ttype, "AverageValue") && member(target, "averageValue");
	int rc = 0;

	kube_selector_free(ms);
	if (!msel) {
		unable(r, m, "FailedGetObjectMetric", "%s", err);
		msgf(m->err, sizeof(m->err), "failed to get object metric value: %s", err);
		return -EINVAL;
	}
	if (!value && !avg) {
		msgf(msg, sizeof(msg),
		     "invalid object metric source: neither a value target nor an "
		     "average value target was set");
		unable(r, m, "FailedGetObjectMetric", "%s", msg);
		msgf(m->err, sizeof(m->err), "failed to get object metric value: %s", msg);
		free(msel);
		return -EINVAL;
	}
	const char *slash = strchr(av, '/');
	if (slash)
		msgf(group, sizeof(group), "%.*s", (int)(slash - av), av);
	if (!strcmp(kind, "Namespace") && !group[0]) {
		msgf(tail, sizeof(tail), "metrics/%s", mname);
	} else {
		char vers[4][64], res[4][256];
		size_t n = mappings(r->c, group, kind, vers, res, 4);
		msgf(tail, sizeof(tail), "%s%s%s/%s/%s", n ? res[0] : "", group[0] ? "." : "",
		     group, oname, mname);
		if (!n) {
			msgf(err, sizeof(err), "no matches for kind \"%s\" in group \"%s\"", kind,
			     group);
			rc = -ENOENT;
		}
	}
	int64_t usage = 0;
	kube_time_t ts = 0;
	if (rc == 0)
		rc = metrics_list(r->c, "custom.metrics.k8s.io", "v1beta2", tail, r->ns, NULL, msel,
		                  "custom.metrics.k8s.io", &list, err, sizeof(err));
	const cJSON *item = cJSON_GetArrayItem(member(list, "items"), 0);
	if (rc == 0 && !item) {
		msgf(err, sizeof(err), "no metrics returned from custom metrics API");
		rc = -ENODATA;
	}
	if (rc < 0) {
		msgf(msg, sizeof(msg),
		     "unable to get metric %s on %s %s/%s: unable to fetch metrics from custom "
		     "metrics API: %s",
		     mname, kind, r->ns, oname, err);
		goto fail;
	}
	usage = milli_json(member(item, "value"), &ok);
	if (str(item, "timestamp"))
		kube_time_parse(str(item, "timestamp"), strlen(str(item, "timestamp")), &ts);
	int64_t shown = usage;
	struct hpa_tolerances tol = tolerances(r);
	if (value) {
		int64_t t = milli_json(member(target, "value"), &ok);
		double ratio = (double)usage / (double)t;
		struct podset ps = {0};
		if (cp->spec_replicas != 0 && !hpa_tol_within(tol, ratio)) {
			if ((rc = list_pods(r->c, r->ns, cp->selector, "", NULL, &ps, err,
			                    sizeof(err))) == 0 &&
			    ps.n == 0) {
				msgf(err, sizeof(err),
				     "no pods returned by selector while calculating replica "
				     "count");
				rc = -EINVAL;
			}
			if (rc < 0) {
				podset_free(&ps);
				msgf(msg, sizeof(msg), "unable to calculate ready pods: %s", err);
				goto fail;
			}
		}
		m->replicas =
		        hpa_usage_ratio_replicas(cp->spec_replicas, ratio, tol, ps.ready_running);
		podset_free(&ps);
		msgf(m->name, sizeof(m->name), "%s metric %s", kind, mname);
	} else {
		int64_t t = milli_json(member(target, "averageValue"), &ok);
		m->replicas = hpa_per_pod_replicas(cp->status_replicas, usage, t, tol, &shown);
		char *gosel = hpa_selector_gostring(member(metric, "selector"));
		msgf(m->name, sizeof(m->name), "external metric %s(%s)", mname,
		     gosel ? gosel : "nil");
		free(gosel);
	}
	m->status = cJSON_CreateObject();
	cJSON_AddStringToObject(m->status, "type", "Object");
	cJSON *o = cJSON_AddObjectToObject(m->status, "object");
	cJSON_AddItemToObject(o, "describedObject", cJSON_Duplicate(desc, true));
	cJSON_AddItemToObject(o, "metric", cJSON_Duplicate(metric, true));
	cJSON *cur = cJSON_AddObjectToObject(o, "current");
	cJSON_AddItemToObject(cur, value ? "value" : "averageValue", milli_quantity(shown, false));
	m->ts = ts;
	goto out;
fail:
	unable(r, m, "FailedGetObjectMetric", "%s", msg);
	if (value)
		msgf(m->err, sizeof(m->err), "failed to get object metric value: %s", msg);
	else
		msgf(m->err, sizeof(m->err),
		     "failed to get object metric value: failed to get %s object metric: %s", mname,
		     msg);
out:
	cJSON_Delete(list);
	free(msel);
	return rc;
}

/* computeReplicasForMetric */
static int compute_one(struct rc *r, const struct compute *cp, const cJSON *spec, struct mres *m)
{
	const char *type = str(spec, "type") ? str(spec, "type") : "";
	cJSON *vs = NULL;
	int rc;

	if (!strcmp(type, "Resource") || !strcmp(type, "ContainerResource")) {
		bool cr = type[0] == 'C';
		const cJSON *src = member(spec, cr ? "containerResource" : "resource");
		const char *res = str(src, "name") ? str(src, "name") : "";
		const char *container = cr && str(src, "container") ? str(src, "container") : "";
		rc = resource_generic(r, cp, member(src, "target"), res, container, cr, m, &vs);
		if (rc < 0) {
			char inner[ERRLEN];
			msgf(inner, sizeof(inner), "%s", m->err);
			unable(r, m,
			       cr ? "FailedGetContainerResourceMetric" : "FailedGetResourceMetric",
			       "%s", inner);
			if (cr)
				msgf(m->err, sizeof(m->err),
				     "failed to get %s container metric value: %s", container,
				     inner);
			else
				msgf(m->err, sizeof(m->err),
				     "failed to get %s resource metric value: %s", res, inner);
			return rc;
		}
		m->status = cJSON_CreateObject();
		cJSON_AddStringToObject(m->status, "type", type);
		cJSON *o =
		        cJSON_AddObjectToObject(m->status, cr ? "containerResource" : "resource");
		cJSON_AddStringToObject(o, "name", res);
		if (cr)
			cJSON_AddStringToObject(o, "container", container);
		cJSON_AddItemToObject(o, "current", vs);
		return 0;
	}
	if (!strcmp(type, "Pods"))
		return custom_pods(r, cp, spec, m);
	if (!strcmp(type, "External"))
		return external(r, cp, spec, m);
	if (!strcmp(type, "Object"))
		return object_metric(r, cp, spec, m);
	unable(r, m, "InvalidMetricSourceType", "unknown metric source type \"%s\"", type);
	return -EINVAL;
}

/* HPAsMatchingPods(ns, pods, 2): the tracked HPAs of the namespace whose selector matches a
 * cached pod the new selector picks */
struct match {
	struct hc *c;
	const char *ns;
	const struct kube_selector *sel;
	char keys[2][KCMD_KEY_MAX + 1];
	size_t n;
};

static int match_pod(const struct shm_obj *o, void *ud)
{
	struct match *mu = ud;
	struct shm_obj copy = SHM_OBJ_INIT;
	struct shm_pod_view v;

	if (mu->n >= 2 || shm_obj_dup(o, &copy) < 0)
		return 0;
	if (shm_pod_view_init(&copy, &v) == 0 &&
	    kube_selector_matches(mu->sel, v.pod.meta.labels, v.pod.meta.n_labels)) {
		for (struct entry *e = mu->c->entries; e && mu->n < 2; e = e->next) {
			bool seen = false;
			if (!e->sel || strcmp(e->ns, mu->ns) ||
			    !kube_selector_matches(e->sel, v.pod.meta.labels, v.pod.meta.n_labels))
				continue;
			for (size_t i = 0; i < mu->n; i++)
				seen |= !strcmp(mu->keys[i], e->key);
			if (!seen)
				msgf(mu->keys[mu->n++], sizeof(mu->keys[0]), "%s", e->key);
		}
	}
	shm_pod_view_free(&v);
	return 0;
}

/* validateAndParseSelector; NULL on failure (conditions and Events done) */
static struct kube_selector *validate_selector(struct rc *r, const char *selector, char *err,
                                               size_t errlen)
{
	struct kube_selector *sel = NULL;
	char perr[512] = "";

	if (!selector || !selector[0]) {
		msgf(err, errlen, "selector is required");
		record(r, "Warning", "SelectorRequired", "%s", err);
		set_cond(r, "ScalingActive", "False", "InvalidSelector",
		         "the HPA target's scale is missing a selector");
		return NULL;
	}
	if (kube_selector_parse(selector, &sel, perr, sizeof(perr)) < 0) {
		msgf(err, errlen,
		     "couldn't convert selector into a corresponding internal selector object: %s",
		     perr);
		record(r, "Warning", "InvalidSelector", "%s", err);
		set_cond(r, "ScalingActive", "False", "InvalidSelector", "%s", err);
		return NULL;
	}
	kube_selector_free(r->e->sel);
	r->e->sel = sel;
	struct match mu = {.c = r->c, .ns = r->ns, .sel = sel};
	struct shm_arena *a = r->c->ctx->arena;
	int t = shm_reader_find_type(a, "", "v1", "pods");
	if (t >= 0)
		shm_reader_list_ns(a, (uint16_t)t, r->ns, match_pod, &mu);
	if (mu.n > 1) {
		msgf(err, errlen,
		     "pods by selector %s are controlled by more than one HPA (e.g. [%s %s])",
		     selector, mu.keys[0], mu.keys[1]);
		record(r, "Warning", "AmbiguousSelector", "%s", err);
		set_cond(r, "ScalingActive", "False", "AmbiguousSelector", "%s", err);
		return NULL;
	}
	return sel;
}

/* computeReplicasForMetrics: -1 when nothing can be done (err set); *statuses is the array of
 * MetricStatus (an empty object for a failed metric, as upstream's zero value) or NULL */
static int32_t compute_all(struct rc *r, const cJSON *scale, cJSON **statuses, char *metric,
                           size_t metric_len, char *err, size_t errlen, bool *partial)
{
	const cJSON *specs = member(member(r->hpa, "spec"), "metrics"), *it;
	const char *selector = str(member(scale, "status"), "selector");
	const cJSON *sr = member(member(scale, "spec"), "replicas");
	const cJSON *str_ = member(member(scale, "status"), "replicas");
	struct compute cp = {.spec_replicas = cJSON_IsNumber(sr) ? (int32_t)sr->valuedouble : 0,
	                     .status_replicas =
	                             cJSON_IsNumber(str_) ? (int32_t)str_->valuedouble : 0,
	                     .selector = selector};
	int32_t replicas = 0;
	int n = cJSON_GetArraySize(specs), invalid = 0;
	char first_err[ERRLEN] = "", first_reason[64] = "", first_msg[ERRLEN] = "";

	*statuses = NULL;
	*partial = false;
	metric[0] = 0;
	if (!validate_selector(r, selector, err, errlen))
		return -1;
	*statuses = cJSON_CreateArray();
	cJSON_ArrayForEach(it, specs)
	{
		struct mres m = {0};
		int rc = compute_one(r, &cp, it, &m);
		if (rc < 0) {
			if (invalid++ == 0) {
				msgf(first_err, sizeof(first_err), "%s", m.err);
				msgf(first_reason, sizeof(first_reason), "%s",
				     m.cond_reason ? m.cond_reason : "");
				msgf(first_msg, sizeof(first_msg), "%s", m.cond_msg);
			}
			cJSON_Delete(m.status);
			cJSON *z = cJSON_CreateObject();
			cJSON_AddStringToObject(z, "type", "");
			cJSON_AddItemToArray(*statuses, z);
			continue;
		}
		cJSON_AddItemToArray(*statuses, m.status ? m.status : cJSON_CreateObject());
		if (replicas == 0 || m.replicas > replicas) {
			replicas = m.replicas;
			msgf(metric, metric_len, "%s", m.name);
		}
	}
	if (invalid)
		msgf(err, errlen, "invalid metrics (%d invalid out of %d), first error is: %s",
		     invalid, n, first_err);
	if (invalid >= n || (invalid > 0 && replicas < cp.spec_replicas)) {
		/* upstream sets the first invalid metric's condition (from the error it wrapped) */
		set_cond(r, "ScalingActive", "False", first_reason, "%s", first_msg);
		return -1;
	}
	set_cond(r, "ScalingActive", "True", "ValidMetricFound",
	         "the HPA was able to successfully calculate a replica count from %s", metric);
	*partial = invalid > 0;
	return replicas;
}

/* setStatus */
static void set_status(struct rc *r, int32_t current, int32_t desired, cJSON *statuses,
                       bool rescale)
{
	cJSON *conds = cJSON_DetachItemFromObjectCaseSensitive(r->status, "conditions");
	cJSON *lst = cJSON_DetachItemFromObjectCaseSensitive(r->status, "lastScaleTime");
	const cJSON *gen = member(member(r->hpa, "metadata"), "generation");
	char ts[KUBE_TIME_BUF];

	cJSON_DeleteItemFromObjectCaseSensitive(r->hpa, "status");
	r->status = cJSON_AddObjectToObject(r->hpa, "status");
	if (gen)
		cJSON_AddNumberToObject(r->status, "observedGeneration", gen->valuedouble);
	if (rescale) {
		cJSON_Delete(lst);
		kube_time_format(r->now, ts);
		lst = cJSON_CreateString(ts);
	}
	if (lst)
		cJSON_AddItemToObject(r->status, "lastScaleTime", lst);
	cJSON_AddNumberToObject(r->status, "currentReplicas", current);
	cJSON_AddNumberToObject(r->status, "desiredReplicas", desired);
	if (statuses && cJSON_GetArraySize(statuses) > 0)
		cJSON_AddItemToObject(r->status, "currentMetrics", cJSON_Duplicate(statuses, true));
	if (conds)
		cJSON_AddItemToObject(r->status, "conditions", conds);
}

static void set_current(struct rc *r, int32_t current, cJSON *statuses)
{
	const cJSON *d = member(r->status, "desiredReplicas");
	set_status(r, current, cJSON_IsNumber(d) ? (int32_t)d->valuedouble : 0, statuses, false);
}

static bool status_equal(const cJSON *a, const cJSON *b)
{
	/* Semantic.DeepEqual: absent and zero numbers, empty and absent lists are alike */
	cJSON *x = a ? cJSON_Duplicate(a, true) : cJSON_CreateObject();
	cJSON *y = b ? cJSON_Duplicate(b, true) : cJSON_CreateObject();
	cJSON *both[2] = {x, y};
	for (int i = 0; i < 2; i++) {
		const char *zero[] = {"currentReplicas", "desiredReplicas"};
		for (int k = 0; k < 2; k++) {
			const cJSON *v = member(both[i], zero[k]);
			if (cJSON_IsNumber(v) && v->valuedouble == 0)
				cJSON_DeleteItemFromObjectCaseSensitive(both[i], zero[k]);
		}
		const char *lists[] = {"currentMetrics", "conditions"};
		for (int k = 0; k < 2; k++)
			if (cJSON_GetArraySize(member(both[i], lists[k])) == 0)
				cJSON_DeleteItemFromObjectCaseSensitive(both[i], lists[k]);
	}
	bool eq = cJSON_Compare(x, y, true);
	cJSON_Delete(x);
	cJSON_Delete(y);
	return eq;
}

/* updateStatusIfNeeded: 0 or -errno */
static int update_status(struct rc *r)
{
	if (status_equal(r->orig_status, r->status))
		return 0;
	char *body = cJSON_PrintUnformatted(r->hpa);
	if (!body)
		return -ENOMEM;
	struct kube_request req = {.verb = KUBE_UPDATE,
	                           .group = "autoscaling",
	                           .version = "v2",
	                           .resource = "horizontalpodautoscalers",
	                           .ns = r->ns,
	                           .name = r->name,
	                           .subresource = "status",
	                           .body = body,
	                           .body_len = strlen(body),
	                           .body_kind = "HorizontalPodAutoscaler"};
	struct kube_response resp;
	int rc = kube_client_request(r->c->ctx->kc, &req, NULL, NULL, &resp);
	free(body);
	if (rc < 0) {
		char m[ERRLEN];
		api_err(&resp, rc, "put", "horizontalpodautoscalers.autoscaling", m, sizeof(m));
		record(r, "Warning", "FailedUpdateStatus", "%s", m);
		log_error("failed to update status for %s: %s", r->name, m);
	} else {
		log_v(2, "Successfully updated status HPA=%s/%s", r->ns, r->name);
	}
	kube_response_clear(&resp);
	return rc;
}

static void parse_rules(const cJSON *j, struct hpa_rules *out, int32_t def_window)
{
	const cJSON *w = member(j, "stabilizationWindowSeconds"), *it;
	const char *sp = str(j, "selectPolicy");
	memset(out, 0, sizeof(*out));
	out->window_s = cJSON_IsNumber(w) ? (int32_t)w->valuedouble : def_window;
	out->select = !sp || !strcmp(sp, "Max") ? HPA_SELECT_MAX
	              : !strcmp(sp, "Min")      ? HPA_SELECT_MIN
	                                        : HPA_SELECT_DISABLED;
	cJSON_ArrayForEach(it, member(j, "policies"))
	{
		if (out->n_policies >= HPA_MAX_POLICIES)
			break;
		const char *t = str(it, "type");
		const cJSON *v = member(it, "value"), *p = member(it, "periodSeconds");
		out->policies[out->n_policies].type =
		        t && !strcmp(t, "Percent") ? HPA_POLICY_PERCENT : HPA_POLICY_PODS;
		out->policies[out->n_policies].value =
		        cJSON_IsNumber(v) ? (int32_t)v->valuedouble : 0;
		out->policies[out->n_policies].period_s =
		        cJSON_IsNumber(p) ? (int32_t)p->valuedouble : 0;
		out->n_policies++;
	}
}

static bool has_obj_or_ext(const cJSON *hpa)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, member(member(hpa, "spec"), "metrics"))
	{
		const char *t = str(it, "type");
		if (t && (!strcmp(t, "Object") || !strcmp(t, "External")))
			return true;
	}
	return false;
}

static void failed_get_scale(struct rc *r, const char *msg)
{
	record(r, "Warning", "FailedGetScale", "%s", msg);
	set_cond(r, "AbleToScale", "False", "FailedGetScale",
	         "the HPA controller was unable to get the target's current scale: %s", msg);
	update_status(r);
}

/* reconcileAutoscaler; returns 0 or -errno (logged by the caller) */
static int reconcile(struct rc *r, char *rerr, size_t rerrlen)
{
	const cJSON *spec = member(r->hpa, "spec"), *ref = member(spec, "scaleTargetRef");
	const char *kind = str(ref, "kind") ? str(ref, "kind") : "";
	const char *tname = str(ref, "name") ? str(ref, "name") : "";
	const char *av = str(ref, "apiVersion") ? str(ref, "apiVersion") : "";
	char reference[800], msg[ERRLEN];
	struct target t = {0};
	int rc = 0;
	cJSON *statuses = NULL;

	msgf(reference, sizeof(reference), "%s/%s/%s", kind, r->ns, tname);
	const char *slash = strchr(av, '/');
	if (slash && strchr(slash + 1, '/')) {
		msgf(msg, sizeof(msg), "unexpected GroupVersion string: %s", av);
		failed_get_scale(r, msg);
		msgf(rerr, rerrlen, "invalid API version in scale target reference: %s", msg);
		return -EINVAL;
	}
	if (slash)
		msgf(t.group, sizeof(t.group), "%.*s", (int)(slash - av), av);
	char vers[4][64], res[4][256];
	size_t nm = mappings(r->c, t.group, kind, vers, res, 4);
	if (nm == 0) {
		msgf(msg, sizeof(msg), "no matches for kind \"%s\" in group \"%s\"", kind, t.group);
		failed_get_scale(r, msg);
		msgf(rerr, rerrlen, "unable to determine resource for scale target reference: %s",
		     msg);
		return -ENOENT;
	}
	char first[ERRLEN] = "";
	rc = -ENOENT;
	for (size_t i = 0; i < nm && rc < 0; i++) {
		msgf(t.version, sizeof(t.version), "%s", vers[i]);
		msgf(t.resource, sizeof(t.resource), "%s", res[i]);
		rc = scale_get(r->c, r->ns, tname, &t, msg, sizeof(msg));
		if (rc < 0 && i == 0)
			msgf(first, sizeof(first), "%s", msg);
	}
	if (rc < 0) {
		failed_get_scale(r, first);
		msgf(rerr, rerrlen, "failed to query scale subresource for %s: %s", reference,
		     first);
		goto out;
	}
	set_cond(r, "AbleToScale", "True", "SucceededGetScale",
	         "the HPA controller was able to get the target's current scale");
	const cJSON *sr = member(member(t.scale, "spec"), "replicas");
	int32_t current = cJSON_IsNumber(sr) ? (int32_t)sr->valuedouble : 0;
	if (hpa_history_init(&r->e->hist, current, r->now) < 0) {
		rc = -ENOMEM;
		goto out;
	}
	const cJSON *minj = member(spec, "minReplicas"), *maxj = member(spec, "maxReplicas");
	int32_t min = cJSON_IsNumber(minj) ? (int32_t)minj->valuedouble : 1;
	int32_t max = cJSON_IsNumber(maxj) ? (int32_t)maxj->valuedouble : 0;
	int32_t desired = 0;
	const char *reason = "";
	char reason_buf[700];
	bool rescale = true, needs = true;
	bool has_oe = has_obj_or_ext(r->hpa);
	bool scaled_zero = cond_true(r->status, "ScaledToZero"); /* HPAScaleToZero: beta, on */
	bool from_zero = scaled_zero && has_oe;

	if (current == 0) {
		if ((min != 0 && scaled_zero) || from_zero) {
			needs = true;
		} else {
			needs = false;
			desired = 0;
			rescale = false;
			set_cond(r, "ScalingActive", "False", "ScalingDisabled",
			         "scaling is disabled since the replica count of the target is "
			         "zero");
		}
	} else if (current > max) {
		reason = "Current number of replicas above Spec.MaxReplicas";
		desired = max;
		needs = false;
	} else if (current < min) {
		reason = "Current number of replicas below Spec.MinReplicas";
		desired = min;
		needs = false;
	}
	if (needs) {
		char metric[512], err[ERRLEN] = "";
		bool partial;
		int32_t md = compute_all(r, t.scale, &statuses, metric, sizeof(metric), err,
		                         sizeof(err), &partial);
		if (md == -1) {
			set_current(r, current, statuses);
			update_status(r);
			record(r, "Warning", "FailedComputeMetricsReplicas", "%s", err);
			msgf(rerr, rerrlen,
			     "failed to compute desired number of replicas based on listed metrics "
			     "for %s: %s",
			     reference, err);
			rc = -EINVAL;
			goto out;
		}
		if (partial) {
			msgf(rerr, rerrlen, "%s", err);
			rc = -EINVAL; /* returned at the end, after scaling */
		}
		const char *rescale_metric = "";
		if (md > desired) {
			desired = md;
			rescale_metric = metric;
		}
		if (desired > current) {
			msgf(reason_buf, sizeof(reason_buf), "%s above target", rescale_metric);
			reason = reason_buf;
		}
		if (desired < current)
			reason = "All metrics below target";
		struct hpa_cond able, limited;
		const cJSON *b = member(spec, "behavior");
		if (!cJSON_IsObject(b)) {
			desired = hpa_normalize(&r->e->hist, r->now, r->c->downscale_window_ns,
			                        current, desired, min, max, &able, &limited);
		} else {
			struct hpa_rules up, down;
			parse_rules(member(b, "scaleUp"), &up, 0);
			parse_rules(member(b, "scaleDown"), &down,
			            (int32_t)(r->c->downscale_window_ns / 1000000000LL));
			desired = hpa_normalize_behavior(&r->e->hist, r->now, &up, &down, current,
			                                 desired, min, max, &able, &limited);
		}
		if (desired < 0) {
			rc = -ENOMEM;
			goto out;
		}
		set_cond(r, able.type, able.status, able.reason, "%s", able.message);
		set_cond(r, limited.type, limited.status, limited.reason, "%s", limited.message);
		if (current == 0 && min != 0 && scaled_zero && desired < min) {
			desired = min;
			if (!reason[0])
				reason = "Current number of replicas below Spec.MinReplicas";
		}
		rescale = desired != current;
	}
	if (rescale) {
		char err[ERRLEN] = "";
		int ur = scale_update(r->c, r->ns, tname, &t, desired, err, sizeof(err));
		if (ur < 0) {
			record(r, "Warning", "FailedRescale", "New size: %d; reason: %s; error: %s",
			       desired, reason, err);
			set_cond(r, "AbleToScale", "False", "FailedUpdateScale",
			         "the HPA controller was unable to update the target scale: %s",
			         err);
			set_current(r, current, statuses);
			update_status(r);
			msgf(rerr, rerrlen, "failed to rescale %s: %s", reference, err);
			rc = ur;
			goto out;
		}
		set_cond(r, "AbleToScale", "True", "SucceededRescale",
		         "the HPA controller was able to update the target scale to %d", desired);
		record(r, "Normal", "SuccessfulRescale", "New size: %d; reason: %s", desired,
		       reason);
		const cJSON *b = member(spec, "behavior");
		struct hpa_rules up, down;
		parse_rules(member(b, "scaleUp"), &up, 0);
		parse_rules(member(b, "scaleDown"), &down, 0);
		hpa_store_scale_event(&r->e->hist, r->now, cJSON_IsObject(b), &up, &down, current,
		                      desired);
		log_info("Successfully rescaled HPA=%s/%s currentReplicas=%d desiredReplicas=%d "
		         "reason=\"%s\"",
		         r->ns, r->name, current, desired, reason);
		if (current > 0 && desired == 0 && min == 0 && has_oe)
			set_cond(r, "ScaledToZero", "True", "ScaledToZero",
			         "the HPA controller scaled the workload to zero");
		else
			set_cond(r, "ScaledToZero", "False", "NotScaledToZero",
			         "the HPA controller did not scale the workload to zero");
	} else {
		log_v(4, "Decided not to scale scaleTarget=%s desiredReplicas=%d", reference,
		      desired);
		desired = current;
	}
	set_status(r, current, desired, statuses, rescale);
	int ur = update_status(r);
	if (ur < 0) {
		msgf(rerr, rerrlen, "failed to update status for %s", r->name);
		rc = ur;
	}
out:
	cJSON_Delete(statuses);
	cJSON_Delete(t.scale);
	return rc;
}

/* ---- worker -------------------------------------------------------------------------------- */
static int hc_init(struct wk_ctx *ctx, void **ret)
{
	struct hc *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->ctx = ctx;
	c->sync_period_us =
	        kcmd_flag_duration_us(ctx->flags, "horizontal-pod-autoscaler-sync-period");
	c->downscale_window_ns =
	        (int64_t)kcmd_flag_duration_us(
	                ctx->flags, "horizontal-pod-autoscaler-downscale-stabilization") *
	        1000;
	c->tolerance = kcmd_flag_double(ctx->flags, "horizontal-pod-autoscaler-tolerance");
	c->calc.cpu_init_ns =
	        (int64_t)kcmd_flag_duration_us(
	                ctx->flags, "horizontal-pod-autoscaler-cpu-initialization-period") *
	        1000;
	c->calc.readiness_delay_ns =
	        (int64_t)kcmd_flag_duration_us(
	                ctx->flags, "horizontal-pod-autoscaler-initial-readiness-delay") *
	        1000;
	if (!c->sync_period_us)
		c->sync_period_us = 15000000;
	*ret = c;
	return 0;
}

static void hc_fini(void *state)
{
	struct hc *c = state;
	while (c && c->entries)
		entry_drop(c, c->entries->key);
	free(c);
}

static bool caches_synced(struct hc *c)
{
	const char *types[2][3] = {{"autoscaling", "v2", "horizontalpodautoscalers"},
	                           {"", "v1", "pods"}};
	for (int i = 0; i < 2 && !c->synced; i++) {
		struct shm_type_info ti;
		int id = shm_reader_find_type(c->ctx->arena, types[i][0], types[i][1], types[i][2]);
		if (id < 0 || shm_reader_type_info(c->ctx->arena, (uint16_t)id, &ti) < 0 ||
		    !ti.synced)
			return false;
	}
	return c->synced = true;
}

static void hc_sync(void *state, size_t q, const char *key, struct wk_result *out)
{
	struct hc *c = state;
	char ns[254], name[254], err[ERRLEN] = "";
	struct rc r = {.c = c, .ns = ns, .name = name};

	(void)q;
	memset(out, 0, sizeof(*out));
	if (kcmd_key_split(key, ns, sizeof(ns), name, sizeof(name)) < 0) {
		log_error("invalid key %s: dropped", key);
		return;
	}
	if (!caches_synced(c)) {
		out->requeue_after = true;
		out->after_usec = 100000;
		return;
	}
	struct shm_obj *o = NULL;
	int rc = kcmd_cache_get(c->ctx->arena, "autoscaling", "horizontalpodautoscalers", ns, name,
	                        &o);
	if (rc == -ENOENT) {
		log_info("Horizontal Pod Autoscaler has been deleted HPA=%s", key);
		entry_drop(c, key);
		return;
	}
	size_t len = 0;
	const char *j = rc == 0 ? kcmd_obj_json(o, &len) : NULL;
	r.hpa = j ? cJSON_ParseWithLength(j, len) : NULL;
	kcmd_obj_free(o);
	if (!r.hpa) {
		out->requeue_after = true;
		out->after_usec = c->sync_period_us;
		return;
	}
	r.uid = str(member(r.hpa, "metadata"), "uid");
	r.now = kube_time_now();
	if (!cJSON_IsObject(member(r.hpa, "status")))
		cJSON_AddObjectToObject(r.hpa, "status");
	r.status = (cJSON *)member(r.hpa, "status");
	r.orig_status = cJSON_Duplicate(r.status, true);
	r.e = entry_get(c, key, ns, true);
	if (!r.e) {
		rc = -ENOMEM;
	} else {
		rc = reconcile(&r, err, sizeof(err));
	}
	if (rc < 0)
		log_error("%s", err[0] ? err : strerror(-rc));
	cJSON_Delete(r.orig_status);
	cJSON_Delete(r.hpa);
	/* upstream: AddRateLimited with the fixed-interval limiter, success or not */
	out->requeue_after = true;
	out->after_usec = c->sync_period_us;
}

static const char *const hc_queues[] = {HPA_QUEUE, NULL};

const struct wk_controller wk_hpa_controller = {
        .name = HPA_CONTROLLER,
        .queues = hc_queues,
        .init = hc_init,
        .sync = hc_sync,
        .fini = hc_fini,
};
