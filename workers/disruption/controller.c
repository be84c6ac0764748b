/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/disruption/controller.c: the disruption controller (upstream
 * pkg/controller/disruption) over kcmd's cache and queues: its handler table (run by its
 * kcmd-dispatcher) and its sync (kcmd-worker --controller=disruption-controller).
 *
 * Handlers: a PDB added, updated or deleted queues its key on "disruption"; a pod added,
 * updated or deleted queues the first PDB of its namespace whose selector matches it (upstream
 * enqueues only one, and posts MultiplePodDisruptionBudgets on the pod when several match); a
 * pod added or updated that carries a DisruptionTarget=True condition (not the kubelet's), is
 * not being deleted and is not terminal queues its key on "stale_pod_disruption" after the time
 * left of the condition's 2 minutes.
 *
 * Sync, "disruption": the PDB from the cache, its pods (the namespace's pods matching its
 * selector), the finders over the cache (RCs and ReplicaSets typed, Deployments and
 * StatefulSets whole) and, for any other owner, the /scale subresource found through discovery
 * of the owner's group-version; pdb.c decides; the status is written with UpdateStatus (PUT
 * .../status of the cached object: a newer PDB answers Conflict and is retried with backoff,
 * without the fail-safe, as upstream); any other failure writes the fail-safe status
 * (disruptionsAllowed 0, DisruptionAllowed=False SyncFailed with the error as message). A
 * disrupted pod still inside its 2-minute window makes the PDB come back then (upstream's
 * recheck queue; here an AddAfter on "disruption").
 *
 * Sync, "stale_pod_disruption": the pod from the cache, checked again; when the condition is
 * stale it is set to False by a strategic merge patch of pods/status that replaces it as
 * upstream's UpdateStatus does and carries the cached resourceVersion (pdb_stale_patch).
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/queue.h"
#include "kcmd/cache.h"
#include "kcmd/client.h"
#include "kcmd/controller.h"
#include "kcmd/handlers.h"
#include "kcmd/worker.h"
#include "kube/client.h"
#include "kube/encode.h"
#include "kube/model.h"
#include "kube/selector.h"
#include "lib/log.h"
#include "shm/arena.h"
#include "shm/record-model.h"
#include "workers/disruption/disruption.h"
#include "workers/disruption/pdb.h"

enum { T_PODS, T_PDBS, T_RCS, T_RSS, T_DEPLOYMENTS, T_STS, T_N };
static const struct {
	const char *group, *version, *resource;
} types[T_N] = {
        {"", "v1", "pods"},
        {"policy", "v1", "poddisruptionbudgets"},
        {"", "v1", "replicationcontrollers"},
        {"apps", "v1", "replicasets"},
        {"apps", "v1", "deployments"},
        {"apps", "v1", "statefulsets"},
};

static int type_id(struct shm_arena *a, int *cache, int t)
{
	if (cache[t] < 0)
		cache[t] = shm_reader_find_type(a, types[t].group, types[t].version,
		                                types[t].resource);
	return cache[t];
}

/* The whole object ns/name of a KCMD_CACHE_OBJECT type, parsed. 0, -ENOENT, -errno. */
static int cached_json(struct shm_arena *a, int type, const char *ns, const char *name, cJSON **ret)
{
	struct shm_obj o = SHM_OBJ_INIT;
	struct shm_object_view v;
	int r;

	*ret = NULL;
	if (type < 0)
		return -ENOENT;
	if ((r = shm_reader_get(a, (uint16_t)type, ns, name, &o)) < 0)
		return r;
	r = shm_object_view_init(&o, &v);
	if (r == 0 && !(*ret = cJSON_ParseWithLength(v.o.raw, v.o.raw_len)))
		r = -EBADMSG;
	shm_object_view_free(&v);
	return r;
}

/* ---- handlers ------------------------------------------------------------------------------- */
struct dh {
	int types[T_N];
};

struct match_ud {
	const struct kube_kv *labels;
	uint32_t n_labels;
	char first[254];
	size_t n;
};

static int pdb_match_visit(const struct shm_obj *o, void *ud)
{
	struct match_ud *m = ud;
	struct shm_obj copy = SHM_OBJ_INIT;
	struct shm_object_view v;
	struct kube_selector *sel = NULL;
	char *err = NULL;
	cJSON *pdb = NULL;

	if (shm_obj_dup(o, &copy) < 0)
		return 0;
	if (shm_object_view_init(&copy, &v) == 0)
		pdb = cJSON_ParseWithLength(v.o.raw, v.o.raw_len);
	shm_object_view_free(&v);
	if (pdb && pdb_selector(pdb, &sel, &err) == 0 &&
	    kube_selector_matches(sel, m->labels, m->n_labels)) {
		if (m->n++ == 0)
			snprintf(m->first, sizeof(m->first), "%s", o->name);
	}
	kube_selector_free(sel);
	free(err);
	cJSON_Delete(pdb);
	return 0;
}

/* A Warning Event about the pod, through the process's recorder (lib/evrec.h: the correlator,
 * then the dispatcher's sink thread), never waiting here. */
static void post_pod_event(struct inf_handler_ctx *ctx, const struct kube_object_meta *pod,
                           const char *reason, const char *message)
{
	struct kcmd_object_ref ref = {.api_version = "v1",
	                              .kind = "Pod",
	                              .ns = pod->namespace,
	                              .name = pod->name,
	                              .uid = pod->uid};
	if (ctx->kc)
		(void)kcmd_event_record(ctx->kc, PDB_EVENT_COMPONENT, &ref, KCMD_EVENT_WARNING,
		                        reason, "%s", message);
}

/* getPdbForPod + enqueuePdb */
static void enqueue_pdb_for_pod(struct inf_handler_ctx *ctx, const struct kube_object_meta *m)
{
	struct dh *h = ctx->state;
	struct match_ud mu = {.labels = m->labels, .n_labels = m->n_labels};
	char key[KCMD_KEY_MAX + 1];
	const char *ns = m->namespace ? m->namespace : "";
	int t = type_id(ctx->arena, h->types, T_PDBS);

	if (t < 0)
		return;
	shm_reader_list_ns(ctx->arena, (uint16_t)t, ns, pdb_match_visit, &mu);
	if (mu.n == 0)
		return;
	if (mu.n > 1) {
		char msg[1024];
		snprintf(msg, sizeof(msg),
		         "Pod \"%s\"/\"%s\" matches multiple PodDisruptionBudgets.  Chose \"%s\" "
		         "arbitrarily.",
		         ns, m->name, mu.first);
		log_info("%s", msg);
		post_pod_event(ctx, m, "MultiplePodDisruptionBudgets", msg);
	}
	if (kcmd_key_make(key, sizeof(key), ns, mu.first) >= 0)
		kcmd_queue_add(ctx, DISRUPTION_Q_PDB, key);
}

static void stale_check(struct inf_handler_ctx *ctx, const struct kube_pod *p)
{
	int64_t wait = 0;
	char key[KCMD_KEY_MAX + 1];

	if (!pdb_stale_disruption(p, kube_time_now(), &wait))
		return;
	if (kcmd_key_make(key, sizeof(key), p->meta.namespace, p->meta.name) < 0)
		return;
	kcmd_queue_add_after(ctx, DISRUPTION_Q_STALE, key, (uint64_t)(wait / 1000));
	log_v(4, "Enqueued pod to cleanup stale DisruptionTarget condition: %s", key);
}

static void on_pod(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	const struct kube_pod *p = ev->obj;

	if (!p || !ev->meta)
		return;
	enqueue_pdb_for_pod(ctx, ev->meta);
	stale_check(ctx, p);
}

static void on_pod_delete(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	struct shm_obj copy = SHM_OBJ_INIT;
	struct shm_meta_view v;

	if (ev->meta) {
		enqueue_pdb_for_pod(ctx, ev->meta);
		return;
	}
	if (!ev->old || shm_obj_dup(ev->old, &copy) < 0)
		return;
	if (shm_meta_view_init(&copy, &v) == 0)
		enqueue_pdb_for_pod(ctx, &v.p.meta);
	shm_meta_view_free(&v);
}

static void on_pdb(struct inf_handler_ctx *ctx, const struct inf_event *ev)
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
		kcmd_queue_add(ctx, DISRUPTION_Q_PDB, key);
}

static int dh_init(struct inf_handler_ctx *ctx)
{
	struct dh *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	for (int i = 0; i < T_N; i++)
		h->types[i] = -1;
	ctx->state = h;
	return 0;
}

static void dh_fini(struct inf_handler_ctx *ctx)
{
	free(ctx->state);
	ctx->state = NULL;
}

struct resync_ud {
	struct inf_handler_ctx *ctx;
	size_t q;
};

static int resync_visit(const struct shm_obj *o, void *ud)
{
	struct resync_ud *ru = ud;
	char key[KCMD_KEY_MAX + 1];

	if (ru->q == DISRUPTION_Q_PDB) {
		if (kcmd_key_make(key, sizeof(key), o->ns, o->name) >= 0)
			kcmd_queue_add(ru->ctx, DISRUPTION_Q_PDB, key);
		return 0;
	}
	struct shm_obj copy = SHM_OBJ_INIT;
	struct shm_pod_view v;
	if (shm_obj_dup(o, &copy) < 0)
		return 0;
	if (shm_pod_view_init(&copy, &v) == 0)
		stale_check(ru->ctx, &v.pod);
	shm_pod_view_free(&v);
	return 0;
}

/* A (re)started queue owner or a dispatcher starting over from the arena: every PDB gets a
 * sync, every pod with a DisruptionTarget condition a check (the informers' initial adds). */
static void dh_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	struct dh *h = ctx->state;
	struct resync_ud ru = {ctx, queue};
	int t = type_id(ctx->arena, h->types, queue == DISRUPTION_Q_PDB ? T_PDBS : T_PODS);

	(void)restarted;
	if (t >= 0)
		shm_reader_list(ctx->arena, (uint16_t)t, resync_visit, &ru);
}

static const char *const dh_queues[] = {DISRUPTION_QUEUE, DISRUPTION_STALE_QUEUE, NULL};
static const struct inf_handler_entry dh_entries[] = {
        {"policy", "poddisruptionbudgets", on_pdb, on_pdb, on_pdb},
        {"", "pods", on_pod, on_pod, on_pod_delete},
};

const struct inf_handler_table disruption_handler_table = {
        .controller = DISRUPTION_CONTROLLER,
        .queues = dh_queues,
        .entries = dh_entries,
        .n_entries = sizeof(dh_entries) / sizeof(dh_entries[0]),
        .init = dh_init,
        .fini = dh_fini,
        .resync = dh_resync,
};

/* ---- sync: lookups over the cache --------------------------------------------------------- */
struct dc {
	struct wk_ctx *ctx;
	int types[T_N];
	bool synced;
};

static int get_rs_like(struct dc *c, int t, const char *ns, const char *name,
                       struct pdb_rs_info *ret)
{
	struct shm_obj o = SHM_OBJ_INIT;
	struct shm_rs_view v;
	int tid = type_id(c->ctx->arena, c->types, t), r;

	if (tid < 0 || shm_reader_get(c->ctx->arena, (uint16_t)tid, ns, name, &o) < 0)
		return 0;
	if ((r = shm_rs_view_init(&o, &v)) == 0) {
		const struct kube_owner_ref *ctl = kube_controller_of(&v.rs.meta);
		snprintf(ret->uid, sizeof(ret->uid), "%s", v.rs.meta.uid ? v.rs.meta.uid : "");
		ret->replicas = v.rs.spec_replicas;
		if (ctl) {
			ret->has_controller = true;
			snprintf(ret->ctl_api_version, sizeof(ret->ctl_api_version), "%s",
			         ctl->api_version ? ctl->api_version : "");
			snprintf(ret->ctl_kind, sizeof(ret->ctl_kind), "%s",
			         ctl->kind ? ctl->kind : "");
			snprintf(ret->ctl_name, sizeof(ret->ctl_name), "%s",
			         ctl->name ? ctl->name : "");
			snprintf(ret->ctl_uid, sizeof(ret->ctl_uid), "%s",
			         ctl->uid ? ctl->uid : "");
		}
	}
	shm_rs_view_free(&v);
	return r == 0 ? 1 : 0;
}

static int lk_rc(void *ud, const char *ns, const char *name, char *uid, int32_t *replicas)
{
	struct pdb_rs_info i = {0};
	int r = get_rs_like(ud, T_RCS, ns, name, &i);
	if (r == 1) {
		snprintf(uid, 128, "%s", i.uid);
		*replicas = i.replicas;
	}
	return r;
}

static int lk_rs(void *ud, const char *ns, const char *name, struct pdb_rs_info *ret)
{
	return get_rs_like(ud, T_RSS, ns, name, ret);
}

static int get_whole(struct dc *c, int t, const char *ns, const char *name, char *uid,
                     int32_t *replicas)
{
	cJSON *o = NULL;
	int tid = type_id(c->ctx->arena, c->types, t);

	if (cached_json(c->ctx->arena, tid, ns, name, &o) < 0)
		return 0;
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(o, "metadata"), "uid");
	const cJSON *rp = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(o, "spec"), "replicas");
	snprintf(uid, 128, "%s", cJSON_IsString(u) ? u->valuestring : "");
	*replicas = cJSON_IsNumber(rp) ? (int32_t)rp->valuedouble : 1;
	cJSON_Delete(o);
	return 1;
}

static int lk_deployment(void *ud, const char *ns, const char *name, char *uid, int32_t *replicas)
{
	return get_whole(ud, T_DEPLOYMENTS, ns, name, uid, replicas);
}

static int lk_statefulset(void *ud, const char *ns, const char *name, char *uid, int32_t *replicas)
{
	return get_whole(ud, T_STS, ns, name, uid, replicas);
}

static char *api_error(int r, const char *body)
{
	cJSON *st = body ? cJSON_Parse(body) : NULL;
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(st, "message");
	char *s = strdup(cJSON_IsString(m) ? m->valuestring : strerror(-r));
	cJSON_Delete(st);
	return s;
}

/* the scale subresource versions upstream's scale client converts (ScaleVersions) */
static bool scale_version(const char *g, const char *v)
{
	return (!strcmp(g, "autoscaling") && !strcmp(v, "v1")) ||
	       (!strcmp(g, "extensions") && !strcmp(v, "v1beta1")) ||
	       (!strcmp(g, "apps") && (!strcmp(v, "v1beta1") || !strcmp(v, "v1beta2")));
}

/* getScaleController: the RESTMapping from the owner's group-version's APIResourceList, the
 * /scale GET, and on NotFound implementsScale over the same list. */
static int lk_scale(void *ud, const struct kube_owner_ref *ref, const char *ns,
                    struct pdb_scale *ret, char **err)
{
	struct dc *c = ud;
	const char *av = ref->api_version ? ref->api_version : "";
	const char *slash = strchr(av, '/');
	char group[256] = "", version[256], path[600];
	char *body = NULL;
	int r;

	if (slash && strchr(slash + 1, '/')) {
		*err = NULL;
		if (asprintf(err, "unexpected GroupVersion string: %s", av) < 0)
			*err = NULL;
		return -EINVAL;
	}
	if (slash) {
		snprintf(group, sizeof(group), "%.*s", (int)(slash - av), av);
		snprintf(version, sizeof(version), "%s", slash + 1);
	} else {
		snprintf(version, sizeof(version), "%s", av);
	}
	if (group[0])
		snprintf(path, sizeof(path), "/apis/%s/%s", group, version);
	else
		snprintf(path, sizeof(path), "/api/%s", version);
	struct kube_request dreq = {.verb = KUBE_GET, .path = path};
	struct kube_response dresp;
	r = kube_client_request(c->ctx->kc, &dreq, NULL, NULL, &dresp);
	cJSON *list = r == 0 ? cJSON_ParseWithLength(dresp.body, dresp.body_len) : NULL;
	kube_response_clear(&dresp);
	const cJSON *it, *res = NULL;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(list, "resources"))
	{
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "name");
		const cJSON *k = cJSON_GetObjectItemCaseSensitive(it, "kind");
		if (cJSON_IsString(n) && !strchr(n->valuestring, '/') && cJSON_IsString(k) &&
		    ref->kind && !strcmp(k->valuestring, ref->kind)) {
			res = it;
			break;
		}
	}
	if (!res) {
		/* meta.NoKindMatchError, also for a group-version discovery cannot serve (an
		 * aggregated API that is down) */
		cJSON_Delete(list);
		if (asprintf(err, "no matches for kind \"%s\" in version \"%s%s%s\"",
		             ref->kind ? ref->kind : "", group, group[0] ? "/" : "", version) < 0)
			*err = NULL;
		return r < 0 ? r : -ENOENT;
	}
	const char *resource = cJSON_GetObjectItemCaseSensitive(res, "name")->valuestring;
	struct kube_request sreq = {.verb = KUBE_GET,
	                            .group = group,
	                            .version = version,
	                            .resource = resource,
	                            .ns = ns,
	                            .name = ref->name,
	                            .subresource = "scale"};
	struct kube_response sresp;
	r = kube_client_request(c->ctx->kc, &sreq, NULL, NULL, &sresp);
	if (r == -ENOENT) {
		char sub[300];
		bool is_scale = false;
		snprintf(sub, sizeof(sub), "%s/scale", resource);
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(list, "resources"))
		{
			const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "name");
			const cJSON *g = cJSON_GetObjectItemCaseSensitive(it, "group");
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(it, "version");
			const cJSON *k = cJSON_GetObjectItemCaseSensitive(it, "kind");
			if (cJSON_IsString(n) && !strcmp(n->valuestring, sub) &&
			    cJSON_IsString(g) && cJSON_IsString(v) && cJSON_IsString(k) &&
			    !strcmp(k->valuestring, "Scale") &&
			    scale_version(g->valuestring, v->valuestring))
				is_scale = true;
		}
		kube_response_clear(&sresp);
		if (!is_scale) {
			if (asprintf(err, "%s%s%s does not implement the scale subresource",
			             resource, group[0] ? "." : "", group) < 0)
				*err = NULL;
			cJSON_Delete(list);
			return -EOPNOTSUPP;
		}
		cJSON_Delete(list);
		return 0;
	}
	cJSON_Delete(list);
	if (r < 0) {
		body = sresp.body ? strndup(sresp.body, sresp.body_len) : NULL;
		*err = api_error(r, body);
		free(body);
		kube_response_clear(&sresp);
		return r;
	}
	struct kube_scale *sc = NULL;
	r = kube_decode_scale(sresp.body, sresp.body_len, 0, &sc);
	kube_response_clear(&sresp);
	if (r < 0) {
		*err = strdup("decoding the scale subresource failed");
		return r;
	}
	bool same = sc->meta.uid && ref->uid && !strcmp(sc->meta.uid, ref->uid);
	if (same) {
		snprintf(ret->uid, sizeof(ret->uid), "%s", sc->meta.uid);
		ret->scale = sc->spec_replicas;
	}
	kube_object_free(sc);
	return same ? 1 : 0;
}

/* ---- sync: PDBs ------------------------------------------------------------------------------ */
struct pods_ud {
	const struct kube_selector *sel;
	struct pdb_pod *pods;
	struct shm_pod_view *views;
	size_t n, cap;
	int err;
};

static int pod_visit(const struct shm_obj *o, void *ud)
{
	struct pods_ud *pu = ud;
	struct shm_obj copy = SHM_OBJ_INIT;
	struct shm_pod_view v;

	if (shm_obj_dup(o, &copy) < 0)
		return pu->err = -ENOMEM;
	if (shm_pod_view_init(&copy, &v) < 0) {
		shm_pod_view_free(&v);
		return 0;
	}
	if (!kube_selector_matches(pu->sel, v.pod.meta.labels, v.pod.meta.n_labels)) {
		shm_pod_view_free(&v);
		return 0;
	}
	if (pu->n == pu->cap) {
		size_t cap = pu->cap ? pu->cap * 2 : 16;
		struct pdb_pod *np = realloc(pu->pods, cap * sizeof(*np));
		if (np)
			pu->pods = np;
		struct shm_pod_view *nv = realloc(pu->views, cap * sizeof(*nv));
		if (nv)
			pu->views = nv;
		if (!np || !nv) {
			shm_pod_view_free(&v);
			return pu->err = -ENOMEM;
		}
		pu->cap = cap;
	}
	pu->views[pu->n] = v;
	struct shm_pod_view *pv = &pu->views[pu->n];
	struct pdb_pod *p = &pu->pods[pu->n++];
	const struct kube_owner_ref *ctl = kube_controller_of(&pv->pod.meta);
	memset(p, 0, sizeof(*p));
	p->name = pv->pod.meta.name ? pv->pod.meta.name : "";
	p->ready = pv->pod.ready;
	p->deleting = pv->pod.meta.deletion_timestamp != 0;
	if (ctl) {
		p->has_controller = true;
		p->controller = *ctl;
	}
	return 0;
}

static void record_events(struct dc *c, const cJSON *pdb, const struct pdb_result *r,
                          const struct pods_ud *pu)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(pdb, "metadata");
	const cJSON *ns = cJSON_GetObjectItemCaseSensitive(meta, "namespace");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");
	const cJSON *uid = cJSON_GetObjectItemCaseSensitive(meta, "uid");

	for (size_t i = 0; i < r->n_events; i++) {
		const struct pdb_event *e = &r->events[i];
		struct kcmd_object_ref ref = {"policy/v1", "PodDisruptionBudget",
		                              cJSON_IsString(ns) ? ns->valuestring : "",
		                              cJSON_IsString(name) ? name->valuestring : "",
		                              cJSON_IsString(uid) ? uid->valuestring : ""};
		if (e->on_pod) {
			ref = (struct kcmd_object_ref){"v1", "Pod", ref.ns, e->pod, ""};
			for (size_t k = 0; pu && k < pu->n; k++)
				if (!strcmp(pu->pods[k].name, e->pod))
					ref.uid = pu->views[k].pod.meta.uid
					                  ? pu->views[k].pod.meta.uid
					                  : "";
		}
		int rc = kcmd_event_record(c->ctx->kc, PDB_EVENT_COMPONENT, &ref, e->type,
		                           e->reason, "%s", e->message);
		if (rc < 0)
			log_v(2, "event %s: %s", e->reason, strerror(-rc));
	}
}

/* UpdateStatus of the new object; 0 or -errno */
static int write_status(struct dc *c, const char *ns, const char *name, const cJSON *obj)
{
	char *body = cJSON_PrintUnformatted(obj);
	struct kube_response resp;
	int r;

	if (!body)
		return -ENOMEM;
	struct kube_request req = {.verb = KUBE_UPDATE,
	                           .group = "policy",
	                           .version = "v1",
	                           .resource = "poddisruptionbudgets",
	                           .ns = ns,
	                           .name = name,
	                           .subresource = "status",
	                           .body = body,
	                           .body_len = strlen(body),
	                           .body_kind = "PodDisruptionBudget"};
	r = kube_client_request(c->ctx->kc, &req, NULL, NULL, &resp);
	kube_response_clear(&resp);
	free(body);
	return r;
}

static void sync_pdb(struct dc *c, const char *ns, const char *name, struct wk_result *out)
{
	cJSON *pdb = NULL, *next = NULL;
	struct kube_selector *sel = NULL;
	char *sel_err = NULL;
	struct pods_ud pu = {0};
	struct pdb_result res;
	struct pdb_lookup lk = {.ud = c,
	                        .get_rc = lk_rc,
	                        .get_deployment = lk_deployment,
	                        .get_statefulset = lk_statefulset,
	                        .get_rs = lk_rs,
	                        .get_scale = lk_scale};
	kube_time_t now = kube_time_now();
	int r = cached_json(c->ctx->arena, type_id(c->ctx->arena, c->types, T_PDBS), ns, name,
	                    &pdb);

	memset(&res, 0, sizeof(res));
	if (r == -ENOENT) {
		log_v(4, "podDisruptionBudget has been deleted: %s/%s", ns, name);
		return;
	}
	if (r < 0) {
		out->err = r;
		return;
	}
	r = pdb_selector(pdb, &sel, &sel_err);
	if (r == 0) {
		int pt = type_id(c->ctx->arena, c->types, T_PODS);
		pu.sel = sel;
		if (pt >= 0)
			shm_reader_list_ns(c->ctx->arena, (uint16_t)pt, ns, pod_visit, &pu);
		if (pu.err < 0) {
			out->err = pu.err;
			goto done;
		}
	} else if (r != -EINVAL) {
		out->err = r;
		goto done;
	}
	if ((r = pdb_try_sync(pdb, sel_err, pu.pods, pu.n, &lk, now, &res)) < 0) {
		out->err = r;
		goto done;
	}
	record_events(c, pdb, &res, &pu);
	if (res.err) {
		log_error("Failed to sync PDB %s/%s: %s", ns, name, res.err);
		if (!(next = pdb_fail_safe(pdb, res.err, now))) {
			out->err = -ENOMEM;
			goto done;
		}
		r = write_status(c, ns, name, next);
		if (r < 0)
			out->err = r;
		goto done;
	}
	next = pdb_status_update(pdb, &res, now, &r);
	if (r < 0) {
		out->err = r;
		goto done;
	}
	r = next ? write_status(c, ns, name, next) : 0;
	if (r == -ESTALE) {
		out->err = r; /* Conflict: retried without the fail-safe */
		goto done;
	}
	if (r < 0) {
		char msg[256];
		snprintf(msg, sizeof(msg), "%s", strerror(-r));
		log_error("Failed to sync PDB %s/%s: %s", ns, name, msg);
		cJSON_Delete(next);
		next = pdb_fail_safe(pdb, msg, now);
		r = next ? write_status(c, ns, name, next) : -ENOMEM;
		if (r < 0)
			out->err = r;
		goto done;
	}
	if (res.has_recheck) {
		out->requeue_after = true;
		out->after_usec =
		        res.recheck_at > now ? (uint64_t)(res.recheck_at - now) / 1000 : 0;
	}
done:
	pdb_result_free(&res);
	cJSON_Delete(next);
	cJSON_Delete(pdb);
	kube_selector_free(sel);
	free(sel_err);
	for (size_t i = 0; i < pu.n; i++)
		shm_pod_view_free(&pu.views[i]);
	free(pu.views);
	free(pu.pods);
}

/* ---- sync: stale DisruptionTarget -------------------------------------------------------------
 */
static void sync_stale(struct dc *c, const char *ns, const char *name, struct wk_result *out)
{
	struct shm_obj o = SHM_OBJ_INIT;
	struct shm_pod_view v;
	int64_t wait = 0;
	int pt = type_id(c->ctx->arena, c->types, T_PODS), r;
	char *patch = NULL;

	if (pt < 0 || shm_reader_get(c->ctx->arena, (uint16_t)pt, ns, name, &o) < 0) {
		log_v(4,
		      "Skipping clearing DisruptionTarget condition because pod was deleted: %s/%s",
		      ns, name);
		return;
	}
	if (shm_pod_view_init(&o, &v) < 0) {
		shm_pod_view_free(&v);
		return;
	}
	kube_time_t now = kube_time_now();
	if (!pdb_stale_disruption(&v.pod, now, &wait)) {
		shm_pod_view_free(&v);
		return;
	}
	if (wait > 0) {
		shm_pod_view_free(&v);
		out->requeue_after = true;
		out->after_usec = (uint64_t)wait / 1000;
		return;
	}
	patch = pdb_stale_patch(v.pod.meta.resource_version, v.pod.meta.generation, now);
	shm_pod_view_free(&v);
	if (!patch) {
		out->err = -ENOMEM;
		return;
	}
	struct kube_request req = {.verb = KUBE_PATCH,
	                           .version = "v1",
	                           .resource = "pods",
	                           .ns = ns,
	                           .name = name,
	                           .subresource = "status",
	                           .patch_type = KUBE_PATCH_STRATEGIC,
	                           .body = patch,
	                           .body_len = strlen(patch)};
	struct kube_response resp;
	r = kube_client_request(c->ctx->kc, &req, NULL, NULL, &resp);
	kube_response_clear(&resp);
	free(patch);
	if (r == -ENOENT)
		return;
	if (r < 0) {
		out->err = r;
		return;
	}
	log_v(2, "Reset stale DisruptionTarget condition to False: %s/%s", ns, name);
}

/* ---- worker ---------------------------------------------------------------------------------- */
static int dc_init(struct wk_ctx *ctx, void **ret)
{
	struct dc *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->ctx = ctx;
	for (int i = 0; i < T_N; i++)
		c->types[i] = -1;
	*ret = c;
	return 0;
}

static void dc_fini(void *state)
{
	free(state);
}

/* upstream's workers start once all six informers synced */
static bool caches_synced(struct dc *c)
{
	for (int t = 0; t < T_N && !c->synced; t++) {
		struct shm_type_info ti;
		int id = type_id(c->ctx->arena, c->types, t);
		if (id < 0 || shm_reader_type_info(c->ctx->arena, (uint16_t)id, &ti) < 0 ||
		    !ti.synced)
			return false;
	}
	return c->synced = true;
}

static void dc_sync(void *state, size_t q, const char *key, struct wk_result *out)
{
	struct dc *c = state;
	char ns[254], name[254];

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
	if (q == DISRUPTION_Q_PDB)
		sync_pdb(c, ns, name, out);
	else
		sync_stale(c, ns, name, out);
	if (out->err < 0)
		log_warning("%s %s: %s, requeuing",
		            q == DISRUPTION_Q_PDB ? "Error syncing PodDisruptionBudget"
		                                  : "error syncing Pod to clear DisruptionTarget "
		                                    "condition",
		            key, strerror(-out->err));
}

static const char *const dc_queues[] = {DISRUPTION_QUEUE, DISRUPTION_STALE_QUEUE, NULL};

const struct wk_controller wk_disruption_controller = {
        .name = DISRUPTION_CONTROLLER,
        .queues = dc_queues,
        .init = dc_init,
        .sync = dc_sync,
        .fini = dc_fini,
};
