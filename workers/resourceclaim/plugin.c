/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/resourceclaim/plugin.c: kcm's resourceclaim-controller (on by default, client
 * "resource-claim-controller", upstream pkg/controller/resourceclaim, resource.k8s.io/v1).
 * docs/resourceclaim.md.
 *
 * One queue "resource_claim" with keys "pod:<ns>/<name>" and "claim:<ns>/<name>", as
 * upstream's; --concurrent-resourceclaim-syncs says how many syncs run at once (kcmd: worker
 * processes, at most RC_MAX_PROCS).
 *
 * What the cache holds: pods as kcmd's typed record (phase, nodeName, deletion; no
 * spec.resourceClaims), ResourceClaims and ResourceClaimTemplates whole (JSON). Because the pod
 * record lacks the pod's claims, two of upstream's indexes are replaced:
 *   - "pod → its claims" (released when the pod is done or gone): the handlers look through
 *     the cached claims of the pod's namespace for those reserved for the pod's uid or
 *     controlled by it (a substring test on the JSON first, so unrelated claims are not parsed);
 *   - "claim → pods using it": a claim event queues the pod that controls it (a generated or
 *     extended-resource claim) when that pod may need it reserved or re-created.
 * Only a pod with resource claims is looked at (the record says whether it has any,
 * kube_pod.has_resource_claims), as upstream's enqueuePod: it is queued when it is added and
 * when it gets a node; its sync reads the pod live (GET) for the claims the record does not
 * hold, as the ephemeral-volume controller does, and does upstream's syncPod.
 *
 * Not twice: before creating a claim the sync looks for one the pod already controls with the
 * pod-claim-name annotation in the cache and, when the cache has none, in a live LIST of the
 * namespace's claims: a claim created by a worker that died before it recorded the claim in the
 * pod's status (or by this one, before the cache saw it) is found and recorded instead of being
 * created again (upstream keeps a mutation cache in its one process for that).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcmd/kcmd.h"
#include "kube/client.h"
#include "shm/record-model.h"
#include "workers/resourceclaim/claim.h"
#include "workers/worker.h"

#define RC_CONTROLLER "resourceclaim-controller"
#define RC_QUEUE      "resource_claim"
#define RC_COMPONENT  "resource_claim"
#define RC_GROUP      "resource.k8s.io"
#define RC_VERSION    "v1"
#define RC_MAX_PROCS  8

enum { RC_M_CREATES, RC_M_CLAIMS, RC_M_N };

static const char *const status_values[] = {"success", "failure", NULL};
static const char *const bool_values[] = {"false", "true", NULL};
static const char *const source_values[] = {"", "extended_resource", "resource_claim_template",
                                            NULL};
static const char *const group_values[] = {"", "scheduling.k8s.io", NULL};
static const char *const kind_values[] = {"Pod", "PodGroup", NULL};
static const struct kcmd_metric_label creates_labels[] = {{"status", status_values},
                                                          {"admin_access", bool_values},
                                                          {"owner_api_group", group_values},
                                                          {"owner_api_kind", kind_values}};
static const struct kcmd_metric_label claims_labels[] = {
        {"allocated", bool_values}, {"admin_access", bool_values}, {"source", source_values}};
static const struct kcmd_metric rc_metric_decl[RC_M_N] = {
        [RC_M_CREATES] = {.name = "dynamic_resource_allocation_resourceclaim_creates_total",
                          .help = "Number of ResourceClaims creation requests, categorized by "
                                  "creation status, admin access, and owning API group and kind "
                                  "(either Pod or scheduling.k8s.io/PodGroup)",
                          .type = KCMD_METRIC_COUNTER,
                          .stability = KCMD_METRIC_ALPHA,
                          .labels = creates_labels,
                          .n_labels = 4},
        [RC_M_CLAIMS] = {.name = "dynamic_resource_allocation_resource_claims",
                         .help = "Number of ResourceClaims, categorized by allocation status, "
                                 "admin access, and source. Source can be "
                                 "'resource_claim_template' (created from a template), "
                                 "'extended_resource' (extended resources), or empty (manually "
                                 "created by a user).",
                         .type = KCMD_METRIC_GAUGE,
                         .stability = KCMD_METRIC_ALPHA,
                         .labels = claims_labels,
                         .n_labels = 3},
};

/* ---- keys ----------------------------------------------------------------------------------- */
static void queue_key(struct inf_handler_ctx *ctx, const char *prefix, const char *ns,
                      const char *name)
{
	char k[KCMD_KEY_MAX + 1], key[KCMD_KEY_MAX + 8];

	if (kcmd_key_make(k, sizeof(k), ns, name) < 0)
		return;
	snprintf(key, sizeof(key), "%s%s", prefix, k);
	kcmd_queue_add(ctx, 0, key);
}

static const char *phase_str(enum kube_pod_phase p)
{
	const char *n = kube_pod_phase_name(p);
	return n ? n : "";
}

/* ---- the claims gauge (upstream's collector over the claim lister) ----------------------------
 */
static void gauge_json(const char *js, size_t len, double d)
{
	cJSON *c = js ? cJSON_ParseWithLength(js, len) : NULL;
	const char *l[3];

	if (!c)
		return;
	rc_claim_metric_labels(c, l);
	kcmd_metric_gauge_add(kcmd_metrics_get(), RC_M_CLAIMS, l, d);
	cJSON_Delete(c);
}

static int count_one(const struct shm_obj *o, void *userdata)
{
	size_t len = 0;
	const char *js = kcmd_obj_json(o, &len);
	(void)userdata;
	gauge_json(js, len, 1);
	return 0;
}

/* ---- handlers ------------------------------------------------------------------------------- */
struct scan {
	struct inf_handler_ctx *ctx;
	const char *uid;
};

/* a claim reserved for the pod or controlled by it: its key */
static int scan_one(const struct shm_obj *o, void *userdata)
{
	struct scan *s = userdata;
	size_t len = 0;
	const char *js = kcmd_obj_json(o, &len), *n, *u;
	cJSON *c;

	if (!js || !strstr(js, s->uid))
		return 0;
	if (!(c = cJSON_ParseWithLength(js, len)))
		return 0;
	if (rc_is_reserved_for_pod(s->uid, c) || (rc_owning_pod(c, &n, &u) && !strcmp(u, s->uid)))
		queue_key(s->ctx, "claim:", kcmd_obj_namespace(o), kcmd_obj_name(o));
	cJSON_Delete(c);
	return 0;
}

static void release_claims(struct inf_handler_ctx *ctx, const char *ns, const char *uid)
{
	struct scan s = {ctx, uid};

	if (uid && uid[0])
		kcmd_cache_list(ctx->arena, RC_GROUP, "resourceclaims", ns, scan_one, &s);
}

static void on_pod(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	const struct kube_pod *p = ev->obj;
	bool deleting;

	if (!p || !p->has_resource_claims) /* "nothing to do for it at all" */
		return;
	deleting = p->meta.deletion_timestamp != 0;
	if (!rc_pod_needs_claims(phase_str(p->phase), deleting, p->node_name, false))
		release_claims(ctx, p->meta.namespace, p->meta.uid);
	if (deleting)
		return; /* podNeedsWork: "pod is deleted" */
	if (ev->kind == INF_EVENT_ADD || !ev->old) {
		queue_key(ctx, "pod:", p->meta.namespace, p->meta.name);
		return;
	}
	/* an update: scheduled now (an allocated claim may need the reservation) */
	struct shm_obj copy;
	struct shm_pod_view v;
	bool was_scheduled = true;
	if (shm_obj_dup(ev->old, &copy) == 0) {
		if (shm_pod_view_init(&copy, &v) == 0)
			was_scheduled = v.pod.node_name && v.pod.node_name[0];
		shm_pod_view_free(&v);
	}
	if (!was_scheduled && p->node_name && p->node_name[0])
		queue_key(ctx, "pod:", p->meta.namespace, p->meta.name);
}

static void on_pod_delete(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	const struct shm_obj *o = ev->old;

	if (o && shm_pod_flag(o, SHM_REC_POD_CLAIMS) == 0)
		return; /* no claims: nothing to release */
	if (o)
		release_claims(ctx, kcmd_obj_namespace(o), kcmd_obj_uid(o));
	else if (ev->meta)
		release_claims(ctx, kcmd_meta_namespace(ev->meta), kcmd_meta_uid(ev->meta));
}

/* the pod controlling a claim, when that pod may have work: a deleted claim to re-create, an
 * allocated one to reserve */
static void claim_owner_work(struct inf_handler_ctx *ctx, const cJSON *c, const char *ns,
                             bool deleted)
{
	const char *name, *uid;
	struct shm_obj *o = NULL, copy;
	struct shm_pod_view v;
	bool work = false;

	if (!rc_owning_pod(c, &name, &uid) ||
	    kcmd_cache_get(ctx->arena, "", "pods", ns, name, &o) < 0)
		return;
	if (shm_obj_dup(o, &copy) == 0) {
		if (shm_pod_view_init(&copy, &v) == 0 && v.pod.meta.uid &&
		    !strcmp(v.pod.meta.uid, uid) && !v.pod.meta.deletion_timestamp &&
		    v.pod.has_resource_claims)
			work = deleted ||
			       (v.pod.node_name && v.pod.node_name[0] && rc_allocated(c) &&
			        !rc_is_reserved_for_pod(uid, c) && rc_can_be_reserved(c));
		shm_pod_view_free(&v);
	}
	kcmd_obj_free(o);
	if (work)
		queue_key(ctx, "pod:", ns, name);
}

static void on_claim(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	size_t len = 0, olen = 0;
	const char *js = kcmd_event_json(ev, &len);
	const char *ojs = ev->old ? kcmd_obj_json(ev->old, &olen) : NULL;
	cJSON *c;

	if (!ev->meta)
		return;
	if (ojs)
		gauge_json(ojs, olen, -1);
	gauge_json(js, len, 1);
	queue_key(ctx, "claim:", kcmd_meta_namespace(ev->meta), kcmd_meta_name(ev->meta));
	if (js && (c = cJSON_ParseWithLength(js, len))) {
		claim_owner_work(ctx, c, kcmd_meta_namespace(ev->meta), false);
		cJSON_Delete(c);
	}
}

static void on_claim_delete(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	size_t len = 0;
	const char *js = ev->old ? kcmd_obj_json(ev->old, &len) : NULL;
	cJSON *c;

	if (!js)
		return;
	gauge_json(js, len, -1);
	if ((c = cJSON_ParseWithLength(js, len))) {
		claim_owner_work(ctx, c, kcmd_obj_namespace(ev->old), true);
		cJSON_Delete(c);
	}
}

/* a pod waiting for a template's claim is not scheduled yet (the scheduler waits for it) */
static int unscheduled_pod(const struct shm_obj *o, void *userdata)
{
	struct shm_obj copy;
	struct shm_pod_view v;
	bool waiting = false;

	if (shm_obj_dup(o, &copy) == 0) {
		if (shm_pod_view_init(&copy, &v) == 0)
			waiting = v.pod.has_resource_claims && !v.pod.meta.deletion_timestamp &&
			          (!v.pod.node_name || !v.pod.node_name[0]) &&
			          rc_pod_needs_claims(phase_str(v.pod.phase), false, "", false);
		shm_pod_view_free(&v);
	}
	if (waiting)
		queue_key(userdata, "pod:", kcmd_obj_namespace(o), kcmd_obj_name(o));
	return 0;
}

/* a template added or updated: the pods of its namespace that may wait for it (upstream's
 * index by template; see the design note) */
static void on_template_add(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	if (ev->meta)
		kcmd_cache_list(ctx->arena, "", "pods", kcmd_meta_namespace(ev->meta),
		                unscheduled_pod, ctx);
}

static int resync_pod(const struct shm_obj *o, void *userdata)
{
	if (shm_pod_flag(o, SHM_REC_POD_CLAIMS) != 0)
		queue_key(userdata, "pod:", kcmd_obj_namespace(o), kcmd_obj_name(o));
	return 0;
}

static int resync_claim(const struct shm_obj *o, void *userdata)
{
	queue_key(userdata, "claim:", kcmd_obj_namespace(o), kcmd_obj_name(o));
	return 0;
}

static void rc_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	struct kcmd_metrics *m = kcmd_metrics_get();

	(void)queue;
	(void)restarted;
	/* the gauge is counted again from the cache: zero every series first */
	for (size_t a = 0; bool_values[a]; a++)
		for (size_t b = 0; bool_values[b]; b++)
			for (size_t s = 0; source_values[s]; s++)
				kcmd_metric_set(m, RC_M_CLAIMS,
				                (const char *[]){bool_values[a], bool_values[b],
				                                 source_values[s]},
				                0);
	kcmd_cache_list(ctx->arena, RC_GROUP, "resourceclaims", NULL, count_one, NULL);
	/* the informers' initial lists: an add per pod and per claim */
	kcmd_cache_list(ctx->arena, "", "pods", NULL, resync_pod, ctx);
	kcmd_cache_list(ctx->arena, RC_GROUP, "resourceclaims", NULL, resync_claim, ctx);
}

static const char *const rc_queue_names[] = {RC_QUEUE, NULL};
static const struct inf_handler_entry rc_entries[] = {
        {"", "pods", on_pod, on_pod, on_pod_delete},
        {RC_GROUP, "resourceclaims", on_claim, on_claim, on_claim_delete},
        {RC_GROUP, "resourceclaimtemplates", on_template_add, on_template_add, NULL},
};
static const struct inf_handler_table rc_handlers = {
        .controller = RC_CONTROLLER,
        .queues = rc_queue_names,
        .entries = rc_entries,
        .n_entries = sizeof(rc_entries) / sizeof(rc_entries[0]),
        .resync = rc_resync,
};

/* ---- sync ----------------------------------------------------------------------------------- */
struct rc_state {
	struct wk_ctx *ctx;
	struct kcmd_metrics *met;
};

static int rc_init(struct wk_ctx *ctx, void **ret_state)
{
	struct rc_state *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->ctx = ctx;
	s->met = kcmd_metrics_get();
	*ret_state = s;
	return 0;
}

static void rc_fini(void *state)
{
	free(state);
}

/* the Status message of a failed request, else the errno's reason */
static void err_text(int r, const char *body, char *out, size_t n)
{
	cJSON *st = body ? cJSON_Parse(body) : NULL;
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(st, "message");

	snprintf(out, n, "%s",
	         cJSON_IsString(m)     ? m->valuestring
	         : kcmd_kube_reason(r) ? kcmd_kube_reason(r)
	                               : strerror(-r));
	cJSON_Delete(st);
}

/* one request; *ret (may be NULL) gets the parsed answer on success; msg the error's text */
static int request(struct rc_state *s, const struct kcmd_request *req, cJSON **ret, char *msg,
                   size_t n)
{
	char *body = NULL;
	int r = kcmd_kube_request(s->ctx->kc, req, NULL, &body);

	if (ret)
		*ret = NULL;
	if (r < 0)
		err_text(r, body, msg, n);
	else if (ret && !(*ret = body ? cJSON_Parse(body) : NULL))
		r = -EBADMSG;
	free(body);
	return r;
}

/* a cached claim or template (JSON), parsed: 0, -ENOENT, or -errno */
static int cached_json(struct rc_state *s, const char *resource, const char *ns, const char *name,
                       cJSON **ret)
{
	struct shm_obj *o = NULL;
	size_t len = 0;
	const char *js;
	int r;

	*ret = NULL;
	if ((r = kcmd_cache_get(s->ctx->arena, RC_GROUP, resource, ns, name, &o)) < 0)
		return r;
	js = kcmd_obj_json(o, &len);
	*ret = js ? cJSON_ParseWithLength(js, len) : NULL;
	kcmd_obj_free(o);
	return *ret ? 0 : -EBADMSG;
}

static const cJSON *field(const cJSON *o, const char *a, const char *b)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
	return b ? cJSON_GetObjectItemCaseSensitive(x, b) : x;
}

static const char *sfield(const cJSON *o, const char *a, const char *b)
{
	const cJSON *x = field(o, a, b);
	return cJSON_IsString(x) ? x->valuestring : NULL;
}

struct find {
	const char *uid, *pod_claim;
	char *name; /* malloc'd */
};

static int find_one(const struct shm_obj *o, void *userdata)
{
	struct find *f = userdata;
	size_t len = 0;
	const char *js = kcmd_obj_json(o, &len);
	cJSON *c;

	if (f->name || !js || !strstr(js, f->uid) || !(c = cJSON_ParseWithLength(js, len)))
		return 0;
	if (rc_claim_generated_for(c, f->uid, f->pod_claim))
		f->name = strdup(kcmd_obj_name(o));
	cJSON_Delete(c);
	return 0;
}

/* findPodResourceClaim: the name of a claim the pod controls for pod claim pc (cache, then a
 * live LIST), NULL with 0 when there is none; -errno */
static int find_pod_claim(struct rc_state *s, const char *ns, const char *uid, const char *pc,
                          char **ret, char *msg, size_t n)
{
	struct find f = {uid, pc, NULL};
	cJSON *list = NULL;
	const cJSON *c;
	int r;

	*ret = NULL;
	kcmd_cache_list(s->ctx->arena, RC_GROUP, "resourceclaims", ns, find_one, &f);
	if (f.name) {
		*ret = f.name;
		return 0;
	}
	/* not in the cache: a claim made moments ago (by a worker that died since) may not have
	 * reached it yet; ask the apiserver */
	struct kube_response resp = {0};
	r = kube_client_request(s->ctx->kc,
	                        &(struct kube_request){.verb = KUBE_LIST,
	                                               .group = RC_GROUP,
	                                               .version = RC_VERSION,
	                                               .resource = "resourceclaims",
	                                               .ns = ns},
	                        NULL, NULL, &resp);
	if (r < 0) {
		snprintf(msg, n, "%s", resp.error.message[0] ? resp.error.message : strerror(-r));
		kube_response_clear(&resp);
		return r;
	}
	list = resp.body ? cJSON_ParseWithLength(resp.body, resp.body_len) : NULL;
	kube_response_clear(&resp);
	if (!list) {
		snprintf(msg, n, "reading the list of claims: %s", strerror(EBADMSG));
		return -EBADMSG;
	}
	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(list, "items"))
	{
		const char *name = sfield(c, "metadata", "name");
		if (name && rc_claim_generated_for(c, uid, pc)) {
			*ret = strdup(name);
			r = *ret ? 0 : -ENOMEM;
			break;
		}
	}
	cJSON_Delete(list);
	return r;
}

struct new_claims {
	size_t n;
	const char *names[64];
	char *claims[64];
};

/* handleClaim: 0, or -errno with the error's text in msg */
static int handle_claim(struct rc_state *s, const cJSON *pod, const char *ns, const cJSON *pc,
                        struct new_claims *nc, char *msg, size_t n)
{
	const char *pcname = sfield(pc, "name", NULL), *uid = sfield(pod, "metadata", "uid");
	const char *tname = sfield(pc, "resourceClaimTemplateName", NULL), *name = NULL;
	char e[512], *found = NULL, *body = NULL;
	cJSON *tmpl = NULL, *created = NULL;
	bool check_owner;
	int r;

	kcmd_log_v(5, "checking podClaim=\"%s\"", pcname ? pcname : "");
	r = rc_claim_name(pod, pc, &name, &check_owner, e, sizeof(e));
	if (r < 0 && r != -ENOENT) {
		snprintf(msg, n, "checking for claim before creating it: %s", e);
		return r;
	}
	if (r == 0 && !name)
		return 0; /* no claim needed */
	if (r == 0 && name[0]) {
		cJSON *c = NULL;
		int g = cached_json(s, "resourceclaims", ns, name, &c);
		if (g == -ENOENT) {
			/* claimExists: not cached (yet?): ask the apiserver */
			g = request(s,
			            &(struct kcmd_request){.method = "GET",
			                                   .group = RC_GROUP,
			                                   .version = RC_VERSION,
			                                   .resource = "resourceclaims",
			                                   .ns = ns,
			                                   .name = name},
			            &c, e, sizeof(e));
			if (g == -ENOENT)
				g = 0;
			else if (g < 0) {
				snprintf(msg, n, "checking claim existence: %s", e);
				return g;
			}
		}
		if (g < 0) {
			snprintf(msg, n, "checking claim existence: %s", strerror(-g));
			return g;
		}
		if (c) {
			int own = check_owner ? rc_is_for_pod(pod, c, e, sizeof(e)) : 0;
			cJSON_Delete(c);
			if (own == 0) {
				kcmd_log_v(5,
				           "claim already created podClaim=\"%s\" "
				           "resourceClaim=\"%s\"",
				           pcname, name);
				return 0;
			}
			kcmd_log_error(
			        "claim that was created for the pod is no longer owned by the "
			        "pod, creating a new one err=\"%s\" podClaim=\"%s\" "
			        "resourceClaim=\"%s\"",
			        e, pcname, name);
		}
	}
	if (!tname)
		return 0;
	if (!pcname || !uid) {
		snprintf(msg, n, "pod claim without a name or pod without a uid");
		return -EINVAL;
	}
	if (nc->n >= sizeof(nc->names) / sizeof(nc->names[0])) {
		snprintf(msg, n, "too many resource claims in one pod");
		return -E2BIG;
	}
	r = find_pod_claim(s, ns, uid, pcname, &found, e, sizeof(e));
	if (r < 0) {
		snprintf(msg, n, "finding ResourceClaim for claim %s in pod %s/%s failed: %s",
		         pcname, ns, sfield(pod, "metadata", "name"), e);
		return r;
	}
	if (!found) {
		r = cached_json(s, "resourceclaimtemplates", ns, tname, &tmpl);
		if (r < 0) {
			if (r == -ENOENT)
				snprintf(msg, n,
				         "resource claim template \"%s\": "
				         "resourceclaimtemplate.resource.k8s.io "
				         "\"%s\" not found",
				         tname, tname);
			else
				snprintf(msg, n, "resource claim template \"%s\": %s", tname,
				         strerror(-r));
			return r;
		}
		const char *admin = rc_needs_admin_access(tmpl) ? "true" : "false";
		r = rc_claim_body(pod, pcname, tmpl, &body);
		cJSON_Delete(tmpl);
		if (r < 0) {
			snprintf(msg, n, "create ResourceClaim : %s", strerror(-r));
			return r;
		}
		r = request(s,
		            &(struct kcmd_request){.method = "POST",
		                                   .group = RC_GROUP,
		                                   .version = RC_VERSION,
		                                   .resource = "resourceclaims",
		                                   .ns = ns,
		                                   .body = body,
		                                   .body_kind = "ResourceClaim"},
		            &created, e, sizeof(e));
		free(body);
		kcmd_metric_inc(s->met, RC_M_CREATES,
		                (const char *[]){r < 0 ? "failure" : "success", admin, "", "Pod"});
		if (r < 0) {
			/* upstream names the claim it tried, which has only a generateName */
			snprintf(msg, n, "create ResourceClaim : %s", e);
			return r;
		}
		const char *cn = sfield(created, "metadata", "name");
		found = cn ? strdup(cn) : NULL;
		cJSON_Delete(created);
		if (!found) {
			snprintf(msg, n, "create ResourceClaim: no name in the answer");
			return -EBADMSG;
		}
		kcmd_log_v(4, "Created ResourceClaim claim=\"%s/%s\" pod=\"%s/%s\"", ns, found, ns,
		           sfield(pod, "metadata", "name"));
	}
	nc->names[nc->n] = pcname;
	nc->claims[nc->n++] = found;
	return 0;
}

static int reserve_for_pod(struct rc_state *s, const cJSON *pod, const cJSON *claim, char *msg,
                           size_t n)
{
	cJSON *c = cJSON_Duplicate(claim, true), *st, *rf, *e;
	const char *ns = sfield(claim, "metadata", "namespace"),
	           *cn = sfield(claim, "metadata", "name");
	char *body = NULL, err[512];
	int r = -ENOMEM;

	if (!c)
		return -ENOMEM;
	if (!(st = cJSON_GetObjectItemCaseSensitive(c, "status")) ||
	    (!(rf = cJSON_GetObjectItemCaseSensitive(st, "reservedFor")) &&
	     !(rf = cJSON_AddArrayToObject(st, "reservedFor"))) ||
	    !(e = cJSON_CreateObject()) || !cJSON_AddItemToArray(rf, e) ||
	    !cJSON_AddStringToObject(e, "resource", "pods") ||
	    !cJSON_AddStringToObject(e, "name", sfield(pod, "metadata", "name")) ||
	    !cJSON_AddStringToObject(e, "uid", sfield(pod, "metadata", "uid")) ||
	    !(body = cJSON_PrintUnformatted(c))) {
		cJSON_Delete(c);
		return -ENOMEM;
	}
	cJSON_Delete(c);
	r = request(s,
	            &(struct kcmd_request){.method = "PUT",
	                                   .group = RC_GROUP,
	                                   .version = RC_VERSION,
	                                   .resource = "resourceclaims",
	                                   .ns = ns,
	                                   .name = cn,
	                                   .subresource = "status",
	                                   .body = body,
	                                   .body_kind = "ResourceClaim"},
	            NULL, err, sizeof(err));
	free(body);
	if (r < 0)
		snprintf(msg, n, "reserve claim %s/%s: %s", ns, cn, err);
	return r;
}

static int apply_status(struct rc_state *s, const cJSON *pod, const char *ns, const char *name,
                        const struct new_claims *nc, char *msg, size_t n)
{
	struct kube_response resp = {0};
	char *body = NULL;
	int r = rc_status_apply_body(pod, nc->names, (const char *const *)nc->claims, nc->n, &body);

	if (r < 0)
		return r;
	r = kube_client_request(s->ctx->kc,
	                        &(struct kube_request){.verb = KUBE_PATCH,
	                                               .version = "v1",
	                                               .resource = "pods",
	                                               .ns = ns,
	                                               .name = name,
	                                               .subresource = "status",
	                                               .patch_type = KUBE_PATCH_APPLY,
	                                               .field_manager = RC_FIELD_MANAGER,
	                                               .body = body,
	                                               .body_len = strlen(body)},
	                        NULL, NULL, &resp);
	if (r < 0)
		snprintf(msg, n, "update pod %s/%s ResourceClaimStatuses: %.300s", ns, name,
		         resp.error.message[0] ? resp.error.message : strerror(-r));
	kube_response_clear(&resp);
	free(body);
	return r;
}

static int sync_pod(struct rc_state *s, const char *ns, const char *name)
{
	struct shm_obj *o = NULL, copy;
	struct shm_pod_view v;
	struct new_claims nc = {0};
	bool deleting = false, claims = true;
	char msg[1024] = "";
	cJSON *pod = NULL, *pc;
	const cJSON *pcs;
	int r;

	r = kcmd_cache_get(s->ctx->arena, "", "pods", ns, name, &o);
	if (r == -ENOENT) {
		kcmd_log_v(5, "nothing to do for pod, it is gone pod=\"%s/%s\"", ns, name);
		return 0;
	}
	if (r < 0)
		return r;
	if ((r = shm_obj_dup(o, &copy)) == 0) {
		if (shm_pod_view_init(&copy, &v) == 0) {
			deleting = v.pod.meta.deletion_timestamp != 0;
			claims = v.pod.has_resource_claims;
		}
		shm_pod_view_free(&v);
	}
	kcmd_obj_free(o);
	if (deleting) {
		kcmd_log_v(5, "nothing to do for pod, it is marked for deletion pod=\"%s/%s\"", ns,
		           name);
		return 0;
	}
	if (!claims) /* upstream's loops over spec.resourceClaims find none */
		return 0;
	/* the cached record says it has claims but does not hold them: read the pod */
	r = request(s,
	            &(struct kcmd_request){.method = "GET",
	                                   .version = "v1",
	                                   .resource = "pods",
	                                   .ns = ns,
	                                   .name = name},
	            &pod, msg, sizeof(msg));
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	const cJSON *dt = field(pod, "metadata", "deletionTimestamp");
	pcs = field(pod, "spec", "resourceClaims");
	if ((dt && !cJSON_IsNull(dt)) || !cJSON_GetArraySize(pcs)) {
		cJSON_Delete(pod);
		return 0;
	}
	/* getPodGroup: GenericWorkload is off by default in v1.37 (a non-retryable error) */
	const char *pg = sfield(field(pod, "spec", "schedulingGroup"), "podGroupName", NULL);
	if (pg) {
		kcmd_log_error(
		        "Work item failed, will not retry item=\"pod:%s/%s\" err=\"get PodGroup "
		        "for Pod %s/%s: Pod is a member of PodGroup %s but GenericWorkload "
		        "feature is disabled\"",
		        ns, name, ns, name, pg);
		cJSON_Delete(pod);
		return 0;
	}
	cJSON_ArrayForEach(pc, pcs)
	{
		const char *pcname = sfield(pc, "name", NULL);
		if ((r = handle_claim(s, pod, ns, pc, &nc, msg, sizeof(msg))) < 0) {
			struct kcmd_object_ref ref = {.api_version = "v1",
			                              .kind = "Pod",
			                              .ns = ns,
			                              .name = name,
			                              .uid = sfield(pod, "metadata", "uid")};
			kcmd_event_record(s->ctx->kc, RC_COMPONENT, &ref, KCMD_EVENT_WARNING,
			                  "FailedResourceClaimCreation", "PodResourceClaim %s: %s",
			                  pcname ? pcname : "", msg);
			kcmd_log_error("pod:%s/%s failed with: pod %s/%s, PodResourceClaim %s: %s",
			               ns, name, ns, name, pcname ? pcname : "", msg);
			goto out;
		}
	}
	if (nc.n && (r = apply_status(s, pod, ns, name, &nc, msg, sizeof(msg))) < 0) {
		kcmd_log_error("pod:%s/%s failed with: %s", ns, name, msg);
		goto out;
	}
	const char *node = sfield(pod, "spec", "nodeName");
	if (!node || !node[0]) {
		kcmd_log_v(5, "nothing to do for pod, scheduler will deal with it pod=\"%s/%s\"",
		           ns, name);
		goto out;
	}
	cJSON_ArrayForEach(pc, pcs)
	{
		const char *cn;
		bool check_owner;
		cJSON *claim = NULL;

		if ((r = rc_claim_name(pod, pc, &cn, &check_owner, msg, sizeof(msg))) < 0)
			break;
		if (!cn)
			continue;
		if ((r = cached_json(s, "resourceclaims", ns, cn, &claim)) < 0) {
			if (r == -ENOENT)
				r = 0;
			else
				snprintf(msg, sizeof(msg), "retrieve claim: %s", strerror(-r));
			break;
		}
		if (check_owner && (r = rc_is_for_pod(pod, claim, msg, sizeof(msg))) < 0) {
			cJSON_Delete(claim);
			break;
		}
		if (rc_allocated(claim) &&
		    !rc_is_reserved_for_pod(sfield(pod, "metadata", "uid"), claim) &&
		    rc_can_be_reserved(claim)) {
			kcmd_log_v(5, "reserve claim for pod resourceClaim=\"%s/%s\"", ns, cn);
			r = reserve_for_pod(s, pod, claim, msg, sizeof(msg));
		}
		cJSON_Delete(claim);
		if (r < 0)
			break;
	}
	if (r < 0)
		kcmd_log_error("pod:%s/%s failed with: %s", ns, name, msg);
out:
	for (size_t i = 0; i < nc.n; i++)
		free(nc.claims[i]);
	cJSON_Delete(pod);
	return r;
}

/* rc_pod_lookup_fn: the cache, then (not cached) the apiserver */
struct lookup {
	struct rc_state *s;
	struct shm_pod_view v;
	bool have_view;
	char uid[128];
};

static int lookup_pod(const char *ns, const char *name, struct rc_pod_info *ret, void *userdata)
{
	struct lookup *l = userdata;
	struct shm_obj *o = NULL, copy;
	cJSON *pod = NULL;
	char msg[256];
	int r;

	if (l->have_view) {
		shm_pod_view_free(&l->v);
		l->have_view = false;
	}
	*ret = (struct rc_pod_info){0};
	r = kcmd_cache_get(l->s->ctx->arena, "", "pods", ns, name, &o);
	if (r == 0) {
		r = shm_obj_dup(o, &copy);
		kcmd_obj_free(o);
		if (r < 0)
			return r;
		if ((r = shm_pod_view_init(&copy, &l->v)) < 0) {
			shm_pod_view_free(&l->v);
			return r;
		}
		l->have_view = true;
		*ret = (struct rc_pod_info){.state = RC_POD_CACHED,
		                            .uid = l->v.pod.meta.uid,
		                            .phase = phase_str(l->v.pod.phase),
		                            .node_name = l->v.pod.node_name,
		                            .deleting = l->v.pod.meta.deletion_timestamp != 0};
		return 0;
	}
	if (r != -ENOENT)
		return r;
	/* not cached (yet?): removing the entry of a pod being scheduled would be bad; ask */
	r = request(l->s,
	            &(struct kcmd_request){.method = "GET",
	                                   .version = "v1",
	                                   .resource = "pods",
	                                   .ns = ns,
	                                   .name = name},
	            &pod, msg, sizeof(msg));
	if (r == -ENOENT) {
		ret->state = RC_POD_DELETED;
		return 0;
	}
	if (r < 0)
		return r;
	/* upstream compares only the uid of a pod read this way */
	snprintf(l->uid, sizeof(l->uid), "%s",
	         sfield(pod, "metadata", "uid") ? sfield(pod, "metadata", "uid") : "");
	cJSON_Delete(pod);
	*ret = (struct rc_pod_info){.state = RC_POD_CACHED, .uid = l->uid, .node_name = "x"};
	return 0;
}

static int put_claim(struct rc_state *s, const char *ns, const char *name, const char *sub,
                     const char *body, cJSON **ret, char *msg, size_t n)
{
	return request(s,
	               &(struct kcmd_request){.method = "PUT",
	                                      .group = RC_GROUP,
	                                      .version = RC_VERSION,
	                                      .resource = "resourceclaims",
	                                      .ns = ns,
	                                      .name = name,
	                                      .subresource = sub,
	                                      .body = body,
	                                      .body_kind = "ResourceClaim"},
	               ret, msg, n);
}

static int sync_claim(struct rc_state *s, const char *ns, const char *name)
{
	struct lookup l = {.s = s};
	cJSON *claim = NULL, *valid = NULL, *upd = NULL;
	char msg[1024] = "", *body = NULL;
	int r, total, kept;

	r = cached_json(s, "resourceclaims", ns, name, &claim);
	if (r == -ENOENT) {
		kcmd_log_v(5, "nothing to do for claim, it is gone claim=\"%s/%s\"", ns, name);
		return 0;
	}
	if (r < 0)
		return r;
	total = cJSON_GetArraySize(field(claim, "status", "reservedFor"));
	kept = rc_valid_reservations(claim, lookup_pod, &l, &valid);
	if (l.have_view)
		shm_pod_view_free(&l.v);
	if (kept < 0) {
		r = kept;
		snprintf(msg, sizeof(msg), "%s", strerror(-r));
		goto fail;
	}
	bool fin = rc_has_finalizer(claim);
	const cJSON *dt = field(claim, "metadata", "deletionTimestamp");
	bool deleting = dt && !cJSON_IsNull(dt);
	kcmd_log_v(5,
	           "claim reserved for counts claim=\"%s/%s\" currentCount=%d updatedCount=%d "
	           "builtinController=%s",
	           ns, name, total, kept, fin ? "true" : "false");
	if (kept < total) {
		r = rc_status_update_body(claim, valid, &body);
		valid = NULL;
		if (r < 0 ||
		    (r = put_claim(s, ns, name, "status", body, &upd, msg, sizeof(msg))) < 0)
			goto fail;
		free(body);
		body = NULL;
		if (rc_has_finalizer(upd) && !rc_allocated(upd)) {
			if ((r = rc_remove_finalizer_body(upd, &body)) < 0 ||
			    (r = put_claim(s, ns, name, NULL, body, NULL, msg, sizeof(msg))) < 0)
				goto fail;
		}
	} else if (fin && deleting && kept == 0) {
		const cJSON *cur = claim;
		if (rc_allocated(claim)) {
			if ((r = rc_deallocate_body(claim, &body)) < 0 ||
			    (r = put_claim(s, ns, name, "status", body, &upd, msg, sizeof(msg))) <
			            0)
				goto fail;
			free(body);
			body = NULL;
			cur = upd;
		}
		if ((r = rc_remove_finalizer_body(cur, &body)) < 0 && r != -ENOENT)
			goto fail;
		if (r == 0 && (r = put_claim(s, ns, name, NULL, body, NULL, msg, sizeof(msg))) < 0)
			goto fail;
		r = 0;
	}
	if (kept == 0) {
		const char *pname, *puid;
		if (rc_owning_pod(claim, &pname, &puid)) {
			struct shm_obj *o = NULL, copy;
			struct shm_pod_view v;
			bool del = false;
			r = kcmd_cache_get(s->ctx->arena, "", "pods", ns, pname, &o);
			if (r == -ENOENT) {
				kcmd_log_v(5,
				           "pod for claim not found claim=\"%s/%s\" pod=\"%s/%s\"",
				           ns, name, ns, pname);
				r = 0;
			} else if (r < 0) {
				snprintf(msg, sizeof(msg), "lookup pod: %s", strerror(-r));
				goto fail;
			} else {
				r = shm_obj_dup(o, &copy);
				kcmd_obj_free(o);
				if (r == 0) {
					/* the view owns the copy from here on, also when it fails
					 */
					if ((r = shm_pod_view_init(&copy, &v)) == 0)
						del = !v.pod.meta.uid ||
						      strcmp(v.pod.meta.uid, puid) ||
						      rc_pod_done(phase_str(v.pod.phase),
						                  v.pod.meta.deletion_timestamp !=
						                          0,
						                  v.pod.node_name);
					shm_pod_view_free(&v);
				}
				if (r < 0) {
					snprintf(msg, sizeof(msg), "lookup pod: %s", strerror(-r));
					goto fail;
				}
			}
			if (del) {
				kcmd_log_v(5,
				           "deleting unused generated claim claim=\"%s/%s\" "
				           "pod=\"%s/%s\"",
				           ns, name, ns, pname);
				r = request(s,
				            &(struct kcmd_request){.method = "DELETE",
				                                   .group = RC_GROUP,
				                                   .version = RC_VERSION,
				                                   .resource = "resourceclaims",
				                                   .ns = ns,
				                                   .name = name},
				            NULL, msg, sizeof(msg));
				if (r < 0) {
					char e[1024];
					snprintf(e, sizeof(e),
					         "delete unused generated claim %.200s/%.260s: "
					         "%.500s",
					         ns, name, msg);
					snprintf(msg, sizeof(msg), "%s", e);
					goto fail;
				}
			}
		} else {
			kcmd_log_v(5, "claim not generated for a pod claim=\"%s/%s\"", ns, name);
		}
	}
	r = 0;
	goto out;
fail:
	kcmd_log_error("claim:%s/%s failed with: %s", ns, name, msg[0] ? msg : strerror(-r));
out:
	free(body);
	cJSON_Delete(valid);
	cJSON_Delete(upd);
	cJSON_Delete(claim);
	return r;
}

static void rc_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct rc_state *s = state;
	char ns[256], name[256];
	const char *obj;
	bool pod;
	int r;

	(void)q;
	*res = (struct wk_result){0};
	/* WaitForNamedCacheSync over pods, claims and templates: kcmd-worker takes no key before
	 * (workers/cachewait.h) */
	if (!strncmp(key, "pod:", 4)) {
		pod = true;
		obj = key + 4;
	} else if (!strncmp(key, "claim:", 6)) {
		pod = false;
		obj = key + 6;
	} else {
		kcmd_log_error("%s failed with: unexpected key prefix", key);
		return;
	}
	if (kcmd_key_split(obj, ns, sizeof(ns), name, sizeof(name)) < 0 || !ns[0]) {
		kcmd_log_error("%s failed with: invalid key", key);
		return;
	}
	r = pod ? sync_pod(s, ns, name) : sync_claim(s, ns, name);
	if (r < 0)
		res->err = r;
}

static const struct wk_controller rc_worker = {
        .name = RC_CONTROLLER,
        .queues = rc_queue_names,
        .init = rc_init,
        .sync = rc_sync,
        .fini = rc_fini,
};

/* ---- the descriptor -------------------------------------------------------------------------- */
static int rc_workers(const struct kcmd_flag_values *v)
{
	/* upstream runs --concurrent-resourceclaim-syncs goroutines (default 50); kcmd runs that
	 * many processes, at most RC_MAX_PROCS: each sync is a few requests */
	int64_t n = kcmd_flag_int(v, "concurrent-resourceclaim-syncs");
	return n < RC_MAX_PROCS ? (int)n : RC_MAX_PROCS;
}

static const char *const rc_aliases[] = {"resource-claim-controller", NULL};
static const struct kcmd_watch rc_watches[] = {
        {"", "v1", "pods", "Pod", KCMD_CACHE_POD, true},
        {RC_GROUP, RC_VERSION, "resourceclaims", "ResourceClaim", KCMD_CACHE_OBJECT, true},
        {RC_GROUP, RC_VERSION, "resourceclaimtemplates", "ResourceClaimTemplate", KCMD_CACHE_OBJECT,
         true},
};
static const struct kcmd_queue rc_queues[] = {{.name = RC_QUEUE}};
static const struct kcmd_flag rc_flags[] = {
        {.name = "concurrent-resourceclaim-syncs",
         .type = KCMD_FLAG_INT,
         .def = "50",
         .min = 1,
         .max = 2147483647,
         .help = "The number of operations (creating or deleting ResourceClaims) allowed to run "
                 "concurrently. Larger number = more responsive, but more CPU (and network) load "
                 "(kcmd: that many worker processes, at most 8)."},
};

const struct kcmd_controller kcmd_resourceclaim_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = RC_CONTROLLER,
        .aliases = rc_aliases,
        .enabled_by_default = true,
        .service_account = "resource-claim-controller",
        .watches = rc_watches,
        .n_watches = sizeof(rc_watches) / sizeof(rc_watches[0]),
        .queues = rc_queues,
        .n_queues = 1,
        .flags = rc_flags,
        .n_flags = sizeof(rc_flags) / sizeof(rc_flags[0]),
        .worker_count = rc_workers,
        .handlers = &rc_handlers,
        .worker = &rc_worker,
        .metrics = rc_metric_decl,
        .n_metrics = RC_M_N,
};
