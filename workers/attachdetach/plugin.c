/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/attachdetach/plugin.c: kcm's persistentvolume-attach-detach-controller (alias
 * attachdetach), CSI volumes only, client "attachdetach-controller" (upstream
 * pkg/controller/volume/attachdetach). docs/attachdetach.md says what this slice does and
 * does not do.
 *
 * Shape: one queue, "attachdetach", keyed by node name. Every event maps to the nodes it can
 * change: a pod to its spec.nodeName, a node to itself, a VolumeAttachment to its
 * spec.nodeName (and, when one goes away, every node: a volume held back by a Multi-Attach
 * error may now attach elsewhere), a claim, a volume or a CSIDriver to every node. The sync of
 * a node reads the node, its VolumeAttachments and every other VolumeAttachment from the
 * cache and its pods from the apiserver (the cached pod record carries no volumes: a LIST
 * with fieldSelector spec.nodeName), plans (ad.h) and acts: the node status patch first (a
 * volume to detach leaves volumesAttached before its VolumeAttachment is deleted), then the
 * deletes, then the creates, then the Events. One worker process, so two nodes never race for
 * one ReadWriteOnce volume; it keeps the detach timers and the Multi-Attach errors already
 * reported in memory, as upstream's worlds do.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kcmd/kcmd.h"
#include "shm/record-model.h"
#include "workers/attachdetach/ad.h"
#include "workers/worker.h"

#define AD_QUEUE        "attachdetach"
#define AD_STORAGE      "storage.k8s.io"
#define AD_FLAG_NOSYNC  "disable-attach-detach-reconcile-sync"
#define AD_FLAG_PERIOD  "attach-detach-reconcile-sync-period"
#define AD_FLAG_NOFORCE "disable-force-detach-on-timeout"

/* ---- handlers (kcmd-dispatcher) ----------------------------------------------------------- */
static void add_node(struct inf_handler_ctx *ctx, const char *node)
{
	if (node && *node)
		kcmd_queue_add(ctx, 0, node);
}

static int add_node_obj(const struct shm_obj *o, void *userdata)
{
	add_node(userdata, kcmd_obj_name(o));
	return 0;
}

static int add_va_node(const struct shm_obj *o, void *userdata)
{
	size_t len = 0;
	const char *js = kcmd_obj_json(o, &len);
	cJSON *va = js ? cJSON_ParseWithLength(js, len) : NULL;

	add_node(userdata, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
	                           cJSON_GetObjectItemCaseSensitive(va, "spec"), "nodeName")));
	cJSON_Delete(va);
	return 0;
}

static void all_nodes(struct inf_handler_ctx *ctx)
{
	kcmd_cache_list(ctx->arena, "", "nodes", NULL, add_node_obj, ctx);
}

static void on_pod(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	const struct kube_pod *p = ev->obj;

	if (p) {
		add_node(ctx, p->node_name);
	} else if (ev->old) {
		struct shm_obj copy;
		struct shm_pod_view v;

		if (shm_obj_dup(ev->old, &copy) == 0) {
			if (shm_pod_view_init(&copy, &v) == 0)
				add_node(ctx, v.pod.node_name);
			shm_pod_view_free(&v);
		}
	}
	/* a pod moved off a node (update) is seen through the node it was on: old */
	if (p && ev->old && ev->kind == INF_EVENT_UPDATE) {
		struct shm_obj copy;
		struct shm_pod_view v;

		if (shm_obj_dup(ev->old, &copy) == 0) {
			if (shm_pod_view_init(&copy, &v) == 0 && v.pod.node_name &&
			    (!p->node_name || strcmp(v.pod.node_name, p->node_name)))
				add_node(ctx, v.pod.node_name);
			shm_pod_view_free(&v);
		}
	}
}

static void on_node(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	if (ev->meta)
		add_node(ctx, kcmd_meta_name(ev->meta));
	else if (ev->old)
		add_node(ctx, kcmd_obj_name(ev->old));
}

static void on_va(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	size_t len = 0;
	const char *js = kcmd_event_json(ev, &len);
	cJSON *va;

	if (!js && ev->old)
		js = kcmd_obj_json(ev->old, &len);
	va = js ? cJSON_ParseWithLength(js, len) : NULL;
	add_node(ctx, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
	                      cJSON_GetObjectItemCaseSensitive(va, "spec"), "nodeName")));
	cJSON_Delete(va);
	if (ev->kind == INF_EVENT_DELETE)
		all_nodes(ctx);
}

static void on_any(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	(void)ev;
	all_nodes(ctx);
}

static void ad_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	all_nodes(ctx);
	/* the nodes that are gone but still named by a VolumeAttachment */
	kcmd_cache_list(ctx->arena, AD_STORAGE, "volumeattachments", NULL, add_va_node, ctx);
}

static const char *const ad_queue_names[] = {AD_QUEUE, NULL};

static const struct inf_handler_entry ad_entries[] = {
        {"", "pods", on_pod, on_pod, on_pod},
        {"", "nodes", on_node, on_node, on_node},
        {AD_STORAGE, "volumeattachments", on_va, on_va, on_va},
        {"", "persistentvolumeclaims", on_any, on_any, on_any},
        {"", "persistentvolumes", on_any, on_any, on_any},
        {AD_STORAGE, "csidrivers", on_any, on_any, on_any},
};

static const struct inf_handler_table ad_handlers = {
        .controller = AD_CONTROLLER,
        .queues = ad_queue_names,
        .entries = ad_entries,
        .n_entries = sizeof(ad_entries) / sizeof(ad_entries[0]),
        .resync = ad_resync,
};

/* ---- sync (kcmd-worker) ------------------------------------------------------------------- */
struct keys {
	char **v;
	size_t n;
};

static void keys_free(struct keys *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->v[i]);
	free(k->v);
	*k = (struct keys){0};
}

struct ad_state {
	struct wk_ctx *ctx;
	struct ad_timer *timers;
	size_t n_timers;
	struct keys reported; /* Multi-Attach and attach errors already reported (below) */
	bool no_sync, no_force;
	uint64_t period_us;
};

/* Test seam (docs/testing.md): KCMD_TEST_AD_KEEP_NODE=<node> makes this worker drop every detach
 * from node <node>, as a worker that lost the node's key would (the fault
 * TestAttachDetach_WorkerKilled's oracle targets). Read once at start; unset or empty: no
 * effect. */
static const char *keep_node;

static int ad_init(struct wk_ctx *ctx, void **ret_state)
{
	struct ad_state *s = calloc(1, sizeof(*s));
	const char *v = getenv("KCMD_TEST_AD_KEEP_NODE");

	if (!s)
		return -ENOMEM;
	if (v && *v) {
		keep_node = v;
		kcmd_log_warning("KCMD_TEST_AD_KEEP_NODE=%s: volumes stay attached to that node (a "
		                 "test seam: its detaches are dropped)",
		                 v);
	}
	s->ctx = ctx;
	s->no_sync = kcmd_flag_bool(ctx->flags, AD_FLAG_NOSYNC);
	s->no_force = kcmd_flag_bool(ctx->flags, AD_FLAG_NOFORCE);
	s->period_us = kcmd_flag_duration_us(ctx->flags, AD_FLAG_PERIOD);
	*ret_state = s;
	return 0;
}

static void ad_fini(void *state)
{
	struct ad_state *s = state;

	keys_free(&s->reported);
	free(s->timers);
	free(s);
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static cJSON *cached(struct wk_ctx *ctx, const char *group, const char *res, const char *ns,
                     const char *name)
{
	struct shm_obj *o = NULL;
	size_t len = 0;
	const char *js;
	cJSON *j;

	if (!name || kcmd_cache_get(ctx->arena, group, res, ns, name, &o) < 0)
		return NULL;
	js = kcmd_obj_json(o, &len);
	j = js ? cJSON_ParseWithLength(js, len) : NULL;
	kcmd_obj_free(o);
	return j;
}

static const cJSON *jget(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static const char *jstr(const cJSON *o, const char *k)
{
	return cJSON_GetStringValue(jget(o, k));
}

/* every VolumeAttachment, parsed */
struct va_list_ctx {
	cJSON *all; /* array */
};

static int collect_va(const struct shm_obj *o, void *userdata)
{
	struct va_list_ctx *c = userdata;
	size_t len = 0;
	const char *js = kcmd_obj_json(o, &len);
	cJSON *va = js ? cJSON_ParseWithLength(js, len) : NULL;

	if (va)
		cJSON_AddItemToArray(c->all, va);
	return 0;
}

/* The pods on a node, from the apiserver. */
static int list_pods(struct wk_ctx *ctx, const char *node, cJSON **ret)
{
	char sel[300];
	struct kube_request rq = {
	        .verb = KUBE_LIST, .version = "v1", .resource = "pods", .field_selector = sel};
	struct kube_response resp = {0};
	int r;

	snprintf(sel, sizeof(sel), "spec.nodeName=%s", node);
	r = kube_client_request(ctx->kc, &rq, NULL, NULL, &resp);
	if (r == 0)
		r = resp.error.err;
	if (r == 0 && !(*ret = resp.body ? cJSON_Parse(resp.body) : NULL))
		r = -EBADMSG;
	kube_response_clear(&resp);
	return r;
}

/* one desired volume and the pods on this node that want it */
struct dvol {
	struct ad_desired d;
	const cJSON *pods[64];
	size_t n_pods;
	char unique[1100];
};

/* The PV name of a pod volume, "" when it is none of ours (logged). */
static const char *pod_volume_pv(struct wk_ctx *ctx, const cJSON *pod, const cJSON *vol,
                                 cJSON *keep)
{
	const char *ns = jstr(jget(pod, "metadata"), "namespace");
	const char *pvname = NULL;
	char err[600], claim[520];
	bool eph;
	cJSON *pvc, *pv;

	/* inline volumes (CSI ephemeral included) are not attachable here */
	if (!ns || ad_pod_volume_claim(pod, vol, claim, sizeof(claim), &eph) < 0)
		return NULL;
	pvc = cached(ctx, "", "persistentvolumeclaims", ns, claim);
	if (!pvc) {
		kcmd_log_v(4, "error processing PVC %s/%s: not found in the cache", ns, claim);
		return NULL;
	}
	cJSON_AddItemToArray(keep, pvc);
	if (eph && !ad_claim_owned_by_pod(pvc, pod)) {
		kcmd_log_v(4,
		           "error processing PVC %s/%s: PVC %s/%s was not created for pod %s/%s "
		           "(pod is not owner)",
		           ns, claim, ns, claim, ns, jstr(jget(pod, "metadata"), "name"));
		return NULL;
	}
	if (ad_claim_volume(pvc, NULL, &pvname, err, sizeof(err)) < 0) {
		kcmd_log_v(4, "error processing PVC %s/%s: %s", ns, claim, err);
		return NULL;
	}
	pv = cached(ctx, "", "persistentvolumes", NULL, pvname);
	if (!pv) {
		kcmd_log_v(4, "failed to find PV %s in PV informer cache", pvname);
		return NULL;
	}
	cJSON_AddItemToArray(keep, pv);
	if (ad_claim_volume(pvc, pv, &pvname, err, sizeof(err)) < 0) {
		kcmd_log_v(4, "error processing PVC %s/%s: %s", ns, claim, err);
		return NULL;
	}
	return pvname;
}

static void pod_event(struct wk_ctx *ctx, const cJSON *pod, const char *type, const char *reason,
                      const char *msg)
{
	const cJSON *md = jget(pod, "metadata");
	struct kcmd_object_ref ref = {.api_version = "v1",
	                              .kind = "Pod",
	                              .ns = jstr(md, "namespace"),
	                              .name = jstr(md, "name"),
	                              .uid = jstr(md, "uid")};
	int r = kcmd_event_record(ctx->kc, AD_COMPONENT, &ref, type, reason, "%s", msg);

	if (r < 0)
		kcmd_log_v(2, "event %s on pod %s/%s not recorded: %s", reason,
		           ref.ns ? ref.ns : "", ref.name ? ref.name : "", strerror(-r));
}

/* Whether a pod (not terminated) has a PVC volume bound to PV pv. */
static bool pod_uses_pv(struct wk_ctx *ctx, const cJSON *pod, const char *pv, cJSON *keep)
{
	const cJSON *vol;

	if (ad_pod_terminated(pod))
		return false;
	cJSON_ArrayForEach(vol, jget(jget(pod, "spec"), "volumes"))
	{
		const char *p = pod_volume_pv(ctx, pod, vol, keep);

		if (p && !strcmp(p, pv))
			return true;
	}
	return false;
}

/* reportMultiAttachError, with v1.37's "Waiting for detach" wording (GenerateMsg's
 * "<prefix> for volume %q <suffix>") */
#define AD_WAIT_DETACH "Waiting for detach for volume \"%s\" "
#define AD_ONLY_ATTACHED                                                                           \
	"Volume is already exclusively attached to one node, waiting on detach before it can "     \
	"be attached to another node"
static void report_multi_attach(struct ad_state *s, const struct dvol *v, const char *node,
                                const cJSON *vas, cJSON *keep)
{
	struct wk_ctx *ctx = s->ctx;
	cJSON *users = cJSON_CreateArray(); /* pods on the other nodes using the volume */
	const cJSON *va;
	char msg[2048], why[1200];

	if (!users)
		return;
	cJSON_ArrayForEach(va, vas)
	{
		const cJSON *spec = jget(va, "spec");
		const char *other = jstr(spec, "nodeName");
		const char *pv = jstr(jget(spec, "source"), "persistentVolumeName");
		cJSON *pods = NULL, *on;
		const cJSON *p;

		if (!other || !pv || !strcmp(other, node) || strcmp(pv, v->d.pv))
			continue;
		/* the desired state holds pods of managed nodes only */
		on = cached(ctx, "", "nodes", NULL, other);
		if (!on || !ad_node_managed(on) || list_pods(ctx, other, &pods) < 0) {
			cJSON_Delete(on);
			continue;
		}
		cJSON_Delete(on);
		cJSON_ArrayForEach(p, jget(pods, "items")) if (pod_uses_pv(ctx, p, v->d.pv, keep))
		        cJSON_AddItemToArray(users, cJSON_Duplicate(p, true));
		cJSON_Delete(pods);
	}
	for (size_t i = 0; i < v->n_pods; i++) {
		const char *ns = jstr(jget(v->pods[i], "metadata"), "namespace");
		size_t off = 0, local = 0, others = 0;
		char names[1024] = "";
		const cJSON *u;

		if (cJSON_GetArraySize(users) == 0) {
			/* no pod wants it there any more: it waits for its detach */
			snprintf(msg, sizeof(msg), AD_WAIT_DETACH "%s", v->d.pv, AD_ONLY_ATTACHED);
			pod_event(ctx, v->pods[i], KCMD_EVENT_WARNING, "FailedAttachVolume", msg);
			continue;
		}
		cJSON_ArrayForEach(u, users)
		{
			const cJSON *md = jget(u, "metadata");
			const char *uns = jstr(md, "namespace");

			if (ns && uns && !strcmp(ns, uns)) {
				int w = snprintf(names + off, sizeof(names) - off, "%s%s",
				                 local ? ", " : "", jstr(md, "name"));
				if (w > 0 && (size_t)w < sizeof(names) - off)
					off += (size_t)w;
				local++;
			} else {
				others++;
			}
		}
		if (local && others)
			snprintf(why, sizeof(why),
			         "Volume is already used by pod(s) %s and %zu pod(s) in different "
			         "namespaces",
			         names, others);
		else if (local)
			snprintf(why, sizeof(why), "Volume is already used by pod(s) %s", names);
		else
			snprintf(why, sizeof(why),
			         "Volume is already used by %zu pod(s) in different namespaces",
			         others);
		snprintf(msg, sizeof(msg), AD_WAIT_DETACH "%s", v->d.pv, why);
		pod_event(ctx, v->pods[i], KCMD_EVENT_WARNING, "FailedAttachVolume", msg);
	}
	kcmd_log_info("Waiting for detach: volume is in use by pods or attached elsewhere "
	              "volume=\"%s\" node=\"%s\"",
	              v->unique, node);
	cJSON_Delete(users);
}

/* The errors already reported (upstream's MultiAttachErrorReported, and the attach errors the
 * worker saw), as keys "<node>\n<kind>\n<unique>[\n<message>]". A sync of a node lists the
 * keys that still hold (cur); the node's others are forgotten, so a situation that comes back
 * is reported again. */
static bool keys_has(const struct keys *k, const char *key)
{
	for (size_t i = 0; i < k->n; i++)
		if (!strcmp(k->v[i], key))
			return true;
	return false;
}

static int keys_add(struct keys *k, const char *key)
{
	char **n = realloc(k->v, (k->n + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	k->v = n;
	if (!(n[k->n] = strdup(key)))
		return -ENOMEM;
	k->n++;
	return 0;
}

/* true when key is new (then remembered in s and cur: report it) */
static bool first_report(struct ad_state *s, struct keys *cur, const char *key)
{
	bool seen = keys_has(&s->reported, key);

	if (!keys_has(cur, key))
		(void)keys_add(cur, key);
	if (!seen && keys_add(&s->reported, key) < 0)
		return true; /* out of memory: report, it may repeat */
	return !seen;
}

static void forget_others(struct ad_state *s, const char *node, const struct keys *cur)
{
	size_t nl = strlen(node);

	for (size_t i = 0; i < s->reported.n;) {
		const char *k = s->reported.v[i];

		if (strncmp(k, node, nl) || k[nl] != '\n' || keys_has(cur, k)) {
			i++;
		} else {
			free(s->reported.v[i]);
			s->reported.v[i] = s->reported.v[--s->reported.n];
		}
	}
}

static int patch_status(struct wk_ctx *ctx, const char *node, const struct ad_plan *p)
{
	char *body = NULL;
	struct kube_response resp = {0};
	int r = ad_status_patch(p->report, p->n_report, &body);

	if (r == 0) {
		struct kube_request rq = {.verb = KUBE_PATCH,
		                          .version = "v1",
		                          .resource = "nodes",
		                          .name = node,
		                          .subresource = "status",
		                          .body = body,
		                          .patch_type = KUBE_PATCH_STRATEGIC};
		r = kube_client_request(ctx->kc, &rq, NULL, NULL, &resp);
		if (r == 0)
			r = resp.error.err;
	}
	if (r < 0)
		kcmd_log_error("Could not update node status for node \"%s\": %s", node,
		               resp.error.message[0] ? resp.error.message : strerror(-r));
	else
		kcmd_log_v(4, "Updating status for node succeeded node=\"%s\" patchBytes=%s", node,
		           body);
	kube_response_clear(&resp);
	free(body);
	return r;
}

static int va_request(struct wk_ctx *ctx, const char *method, const char *name, const char *body)
{
	char *resp = NULL;
	int r = kcmd_kube_request(ctx->kc,
	                          &(struct kcmd_request){.method = method,
	                                                 .group = AD_STORAGE,
	                                                 .version = "v1",
	                                                 .resource = "volumeattachments",
	                                                 .name = body ? NULL : name,
	                                                 .body = body,
	                                                 .body_kind = "VolumeAttachment"},
	                          NULL, &resp);

	free(resp);
	return r;
}

static int sync_node(struct ad_state *s, const char *node, struct wk_result *res)
{
	struct wk_ctx *ctx = s->ctx;
	cJSON *n = cached(ctx, "", "nodes", NULL, node);
	cJSON *keep = cJSON_CreateArray(), *pods = NULL;
	struct va_list_ctx vl = {cJSON_CreateArray()};
	struct dvol *dv = NULL;
	struct ad_desired *d = NULL;
	struct ad_actual *a = NULL;
	char(*auniq)[1100] = NULL;
	size_t nd = 0, na = 0, nva;
	struct ad_plan plan = {0};
	struct keys cur = {0};
	const cJSON *va, *pod;
	int r = 0, rr;

	if (!keep || !vl.all) {
		r = -ENOMEM;
		goto out;
	}
	if (n && !ad_node_managed(n)) {
		/* the kubelet attaches on this node: nothing of the controller's */
		kcmd_log_v(5, "node %s does not have the %s annotation: skipped", node,
		           AD_ANN_MANAGED);
		forget_others(s, node, &(struct keys){0});
		goto out;
	}
	kcmd_cache_list(ctx->arena, AD_STORAGE, "volumeattachments", NULL, collect_va, &vl);
	nva = (size_t)cJSON_GetArraySize(vl.all);

	/* desired: the CSI volumes of the node's pods */
	if (n) {
		if ((r = list_pods(ctx, node, &pods)) < 0) {
			kcmd_log_error("listing the pods of node %s: %s", node, strerror(-r));
			goto out;
		}
		size_t npods = (size_t)cJSON_GetArraySize(jget(pods, "items"));
		size_t cap = 0;
		cJSON_ArrayForEach(pod, jget(pods, "items")) cap +=
		        (size_t)cJSON_GetArraySize(jget(jget(pod, "spec"), "volumes"));
		(void)npods;
		if (cap && !(dv = calloc(cap, sizeof(*dv)))) {
			r = -ENOMEM;
			goto out;
		}
		cJSON_ArrayForEach(pod, jget(pods, "items"))
		{
			const cJSON *vol;

			if (ad_pod_terminated(pod))
				continue;
			cJSON_ArrayForEach(vol, jget(jget(pod, "spec"), "volumes"))
			{
				const char *pvname = pod_volume_pv(ctx, pod, vol, keep);
				const char *drv, *handle;
				cJSON *pv, *csid;
				size_t k;

				if (!pvname)
					continue;
				pv = cached(ctx, "", "persistentvolumes", NULL, pvname);
				if (!pv)
					continue;
				cJSON_AddItemToArray(keep, pv);
				if (ad_pv_csi(pv, &drv, &handle) < 0) {
					kcmd_log_v(5, "volume %s is not a CSI volume: not handled",
					           pvname);
					continue;
				}
				csid = cached(ctx, AD_STORAGE, "csidrivers", NULL, drv);
				bool need = ad_attach_required(csid);
				cJSON_Delete(csid);
				if (!need) {
					kcmd_log_v(5,
					           "skipping volume %s: driver %s does not require "
					           "attach",
					           pvname, drv);
					continue;
				}
				struct dvol one = {0};
				if (ad_unique_name(drv, handle, one.unique, sizeof(one.unique)) < 0)
					continue;
				for (k = 0; k < nd; k++)
					if (!strcmp(dv[k].unique, one.unique))
						break;
				if (k == nd) {
					dv[k] = one;
					dv[k].d = (struct ad_desired){
					        .pv = pvname,
					        .driver = drv,
					        .handle = handle,
					        .multi_attach_allowed =
					                ad_multi_attach_allowed(pv)};
					cJSON_ArrayForEach(va, vl.all)
					{
						const cJSON *sp = jget(va, "spec");
						const char *vn = jstr(sp, "nodeName");
						const char *vp = jstr(jget(sp, "source"),
						                      "persistentVolumeName");

						if (vn && vp && strcmp(vn, node) &&
						    !strcmp(vp, pvname))
							dv[k].d.attached_elsewhere = true;
					}
					nd++;
				}
				if (dv[k].n_pods < 64)
					dv[k].pods[dv[k].n_pods++] = pod;
			}
		}
	}

	/* actual: the VolumeAttachments naming this node, for a CSI volume we know */
	if (nva && (!(a = calloc(nva, sizeof(*a))) || !(auniq = calloc(nva, sizeof(*auniq))))) {
		r = -ENOMEM;
		goto out;
	}
	cJSON_ArrayForEach(va, vl.all)
	{
		const cJSON *sp = jget(va, "spec");
		const char *vn = jstr(sp, "nodeName");
		const char *vp = jstr(jget(sp, "source"), "persistentVolumeName");
		const cJSON *dt = jget(jget(va, "metadata"), "deletionTimestamp");
		const char *drv, *handle;
		cJSON *pv;

		if (!vn || strcmp(vn, node) || !vp)
			continue;
		pv = cached(ctx, "", "persistentvolumes", NULL, vp);
		if (!pv)
			continue; /* upstream skips a VolumeAttachment whose PV it cannot find */
		cJSON_AddItemToArray(keep, pv);
		if (ad_pv_csi(pv, &drv, &handle) < 0 ||
		    ad_unique_name(drv, handle, auniq[na], sizeof(auniq[na])) < 0)
			continue;
		a[na] = (struct ad_actual){
		        .va = jstr(jget(va, "metadata"), "name"),
		        .unique = auniq[na],
		        .pv = vp,
		        .attached = cJSON_IsTrue(jget(jget(va, "status"), "attached")),
		        .deleting = dt && !cJSON_IsNull(dt),
		        .attach_error = jstr(jget(jget(va, "status"), "attachError"), "message")};
		if (a[na].va)
			na++;
	}

	if (nd && !(d = calloc(nd, sizeof(*d)))) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nd; i++) {
		d[i] = dv[i].d;
		d[i].unique = dv[i].unique;
	}
	struct ad_node_state st = {.name = node,
	                           .exists = n != NULL,
	                           .ready = n && ad_node_ready(n),
	                           .out_of_service = n && ad_node_out_of_service(n),
	                           .disable_force_detach = s->no_force,
	                           .node = n};
	if ((r = ad_plan(&st, d, nd, a, na, &s->timers, &s->n_timers, now_us(), &plan)) < 0)
		goto out;

	bool detach = false;
	for (size_t k = 0; k < plan.n_actions; k++)
		detach |= plan.actions[k].kind == AD_DETACH;
	bool status_ok = true;
	if (n && (plan.status_changed || detach)) {
		if (plan.status_changed && patch_status(ctx, node, &plan) < 0) {
			status_ok = false;
			r = -EAGAIN;
		}
	}
	for (size_t k = 0; k < plan.n_actions; k++) {
		const struct ad_action *ac = &plan.actions[k];
		char *body = NULL, name[AD_VA_NAME_LEN], key[1400], msg[1400];

		switch (ac->kind) {
		case AD_DETACH:
			if (!status_ok)
				break; /* upstream skips the detach when the status update failed */
			if (keep_node && !strcmp(keep_node, node)) {
				kcmd_log_warning(
				        "KCMD_TEST_AD_KEEP_NODE: detach of volume \"%s\" from "
				        "node \"%s\" dropped",
				        a[ac->i].unique, node);
				break;
			}
			rr = va_request(ctx, "DELETE", a[ac->i].va, NULL);
			if (rr < 0 && rr != -ENOENT) {
				kcmd_log_error("DetachVolume.Detach failed for volume \"%s\" (node "
				               "\"%s\"): %s",
				               a[ac->i].unique, node, strerror(-rr));
				r = rr;
			} else {
				kcmd_log_info("attacherDetacher.DetachVolume started node=\"%s\" "
				              "volumeName=\"%s\"",
				              node, a[ac->i].unique);
			}
			break;
		case AD_CREATE:
			if (ad_va_name(d[ac->i].handle, d[ac->i].driver, node, name) < 0 ||
			    ad_va_body(name, d[ac->i].driver, node, d[ac->i].pv, &body) < 0) {
				r = -ENOMEM;
				break;
			}
			rr = va_request(ctx, "POST", name, body);
			free(body);
			if (rr < 0 && rr != -EEXIST) {
				snprintf(msg, sizeof(msg),
				         "AttachVolume.Attach failed for volume \"%s\" : "
				         "attacher.Attach "
				         "failed: %s",
				         d[ac->i].pv, strerror(-rr));
				for (size_t p = 0; p < dv[ac->i].n_pods; p++)
					pod_event(ctx, dv[ac->i].pods[p], KCMD_EVENT_WARNING,
					          "FailedAttachVolume", msg);
				r = rr;
			} else {
				kcmd_log_info(
				        "attacherDetacher.AttachVolume started volumeName=\"%s\" "
				        "nodeName=\"%s\"",
				        d[ac->i].unique, node);
			}
			break;
		case AD_MULTI_ATTACH:
			snprintf(key, sizeof(key), "%s\nM\n%s", node, d[ac->i].unique);
			if (first_report(s, &cur, key))
				report_multi_attach(s, &dv[ac->i], node, vl.all, keep);
			break;
		case AD_REPORT_NEW:
			if (!status_ok)
				break;
			snprintf(msg, sizeof(msg),
			         "AttachVolume.Attach succeeded for volume \"%s\" ", d[ac->i].pv);
			for (size_t p = 0; p < dv[ac->i].n_pods; p++)
				pod_event(ctx, dv[ac->i].pods[p], KCMD_EVENT_NORMAL,
				          "SuccessfulAttachVolume", msg);
			break;
		case AD_WAIT_ATTACH: {
			/* verifyAttachmentStatus: the attacher's error, or a VolumeAttachment
			 * being deleted, fails the attach (GenerateError's text) */
			const char *why = NULL;

			for (size_t j = 0; j < na && !why; j++)
				if (!strcmp(a[j].unique, d[ac->i].unique))
					why = a[j].deleting ? "volume attachment is being deleted"
					                    : a[j].attach_error;
			if (!why)
				break;
			snprintf(key, sizeof(key), "%s\nE\n%s\n%.400s", node, d[ac->i].unique, why);
			if (!first_report(s, &cur, key))
				break;
			snprintf(msg, sizeof(msg),
			         "AttachVolume.Attach failed for volume \"%s\" : %.900s",
			         d[ac->i].pv, why);
			for (size_t p = 0; p < dv[ac->i].n_pods; p++)
				pod_event(ctx, dv[ac->i].pods[p], KCMD_EVENT_WARNING,
				          "FailedAttachVolume", msg);
			break;
		}
		case AD_WAIT_UNMOUNT:
			break;
		}
	}
	forget_others(s, node, &cur);
	if (plan.recheck_us) {
		res->requeue_after = true;
		res->after_usec = plan.recheck_us;
	}
	/* the reconciler's periodic pass over what is attached */
	if (!s->no_sync && (n || na) && s->period_us >= 1000000 &&
	    (!res->requeue_after || s->period_us < res->after_usec)) {
		res->requeue_after = true;
		res->after_usec = s->period_us;
	}
out:
	ad_plan_free(&plan);
	keys_free(&cur);
	free(d);
	free(a);
	free(auniq);
	free(dv);
	cJSON_Delete(pods);
	cJSON_Delete(vl.all);
	cJSON_Delete(keep);
	cJSON_Delete(n);
	return r;
}

static void ad_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	int r;

	(void)q;
	*res = (struct wk_result){0};
	/* WaitForNamedCacheSync: kcmd-worker takes no key before (workers/cachewait.h) */
	r = sync_node(state, key, res);
	if (r < 0) {
		kcmd_log_error("syncing node %s failed: %s", key, strerror(-r));
		*res = (struct wk_result){.err = r};
	}
}

static const struct wk_controller ad_worker = {
        .name = AD_CONTROLLER,
        .queues = ad_queue_names,
        .init = ad_init,
        .sync = ad_sync,
        .fini = ad_fini,
};

/* ---- the descriptor ----------------------------------------------------------------------- */
static int ad_precheck(const struct kcmd_flag_values *v, const struct kube_config *kcfg, char *err,
                       size_t errlen)
{
	(void)kcfg;
	if (kcmd_flag_duration_us(v, AD_FLAG_PERIOD) < 1000000) {
		snprintf(err, errlen,
		         "duration time must be greater than one second as set via command line "
		         "option reconcile-sync-loop-period");
		return -EEXIST;
	}
	return 0;
}

static const char *const ad_aliases[] = {"attachdetach", NULL};
static const struct kcmd_watch ad_watches[] = {
        {"", "v1", "pods", "Pod", KCMD_CACHE_POD, true},
        {"", "v1", "nodes", "Node", KCMD_CACHE_OBJECT, false},
        {"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", KCMD_CACHE_OBJECT, true},
        {"", "v1", "persistentvolumes", "PersistentVolume", KCMD_CACHE_OBJECT, false},
        {AD_STORAGE, "v1", "volumeattachments", "VolumeAttachment", KCMD_CACHE_OBJECT, false},
        {AD_STORAGE, "v1", "csidrivers", "CSIDriver", KCMD_CACHE_OBJECT, false},
};
static const struct kcmd_queue ad_queues[] = {{.name = AD_QUEUE}};
static const struct kcmd_flag ad_flags[] = {
        {.name = AD_FLAG_NOSYNC,
         .type = KCMD_FLAG_BOOL,
         .def = "false",
         .help = "Disable volume attach detach reconciler sync. Disabling this may cause "
                 "volumes to be mismatched with pods. Use wisely."},
        {.name = AD_FLAG_PERIOD,
         .type = KCMD_FLAG_DURATION,
         .def = "1m0s",
         .help = "The reconciler sync wait time between volume attach detach. This duration "
                 "must be larger than one second, and increasing this value from the default "
                 "may allow for volumes to be mismatched with pods."},
        {.name = AD_FLAG_NOFORCE,
         .type = KCMD_FLAG_BOOL,
         .def = "false",
         .help = "Prevent force detaching volumes based on maximum unmount time and node "
                 "status. If this flag is set to true, the non-graceful node shutdown feature "
                 "must be used to recover from node failure. See "
                 "https://k8s.io/docs/storage-disable-force-detach-on-timeout/."},
};

const struct kcmd_controller kcmd_attachdetach_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = AD_CONTROLLER,
        .aliases = ad_aliases,
        .enabled_by_default = true,
        .service_account = "attachdetach-controller",
        .watches = ad_watches,
        .n_watches = sizeof(ad_watches) / sizeof(ad_watches[0]),
        .queues = ad_queues,
        .n_queues = 1,
        .flags = ad_flags,
        .n_flags = sizeof(ad_flags) / sizeof(ad_flags[0]),
        .mgr_precheck = ad_precheck,
        .handlers = &ad_handlers,
        .worker = &ad_worker,
};
