/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/daemonset/handlers.c: the DaemonSet controller's event handlers (upstream
 * daemon_controller.go's add/update/deleteDaemonset, add/update/deletePod, addNode/updateNode,
 * add/update/deleteHistory), run in its kcmd-dispatcher; they add "ns/name" of a DaemonSet to
 * the queue "daemonset" and record the expectation observations (a pod of the set seen
 * created; seen deleted or being deleted) in the controller's expectations region.
 *
 * Nodes: an added node enqueues every DaemonSet that should run on it; an updated node every
 * DaemonSet whose (shouldRun, shouldContinueRunning) differs between the old and the new node
 * (a Node update that changes neither labels nor spec is skipped first, as upstream's
 * shouldIgnoreNodeUpdate skips status-only updates). Pods: a pod with a controller reference to a
 * cached DaemonSet of that uid enqueues it; an orphan (added, or updated with other labels or
 * another controller) enqueues the DaemonSets of its namespace whose selector matches it.
 * ControllerRevisions: a controlled one enqueues its set when it is deleted or its controller
 * changes, an orphan the sets selecting it.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kcmd/cache.h"
#include "kcmd/handlers.h"
#include "kube/model.h"
#include "lib/log.h"
#include "shm/arena.h"
#include "shm/record-model.h"
#include "workers/daemonset/controller.h"
#include "workers/daemonset/ds.h"
#include "workers/replicaset/expectations.h"

struct dh {
	struct rs_exp *exp;
};

static void add_key(struct inf_handler_ctx *ctx, const char *ns, const char *name)
{
	char key[KCMD_KEY_MAX + 1];
	int r;

	if (!name || kcmd_key_make(key, sizeof(key), ns, name) < 0)
		return;
	if ((r = kcmd_queue_add(ctx, 0, key)) < 0)
		log_error("%s queue: adding %s failed: %s", DS_QUEUE, key, strerror(-r));
}

/* ---- DaemonSets ------------------------------------------------------------------------------ */
static void on_ds(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	if (ev->meta)
		add_key(ctx, kcmd_meta_namespace(ev->meta), kcmd_meta_name(ev->meta));
}

static void on_ds_delete(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	struct dh *h = ctx->state;
	const char *ns = ev->meta  ? kcmd_meta_namespace(ev->meta)
	                 : ev->old ? kcmd_obj_namespace(ev->old)
	                           : NULL;
	const char *name = ev->meta  ? kcmd_meta_name(ev->meta)
	                   : ev->old ? kcmd_obj_name(ev->old)
	                             : NULL;
	char key[KCMD_KEY_MAX + 1];

	if (!name || kcmd_key_make(key, sizeof(key), ns, name) < 0)
		return;
	rs_exp_informer_delete(h->exp, key); /* DeleteExpectations */
	add_key(ctx, ns, name);
}

/* ---- selectors ------------------------------------------------------------------------------- */
typedef const char *(*label_fn)(const void *o, const char *k);

static bool sel_holds(const cJSON *sel, label_fn lf, const void *o)
{
	const cJSON *it, *x;
	int n = 0;

	if (!cJSON_IsObject(sel))
		return false;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(sel, "matchLabels"))
	{
		const char *v = lf(o, it->string);
		if (!cJSON_IsString(it) || !v || strcmp(v, it->valuestring) != 0)
			return false;
		n++;
	}
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(sel, "matchExpressions"))
	{
		const cJSON *k = cJSON_GetObjectItemCaseSensitive(it, "key");
		const cJSON *op = cJSON_GetObjectItemCaseSensitive(it, "operator");
		bool in = false;
		if (!cJSON_IsString(k) || !cJSON_IsString(op))
			return false;
		const char *v = lf(o, k->valuestring);
		cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(it, "values"))
		{
			in |= v && cJSON_IsString(x) && strcmp(x->valuestring, v) == 0;
		}
		const char *s = op->valuestring;
		if (!strcmp(s, "In")             ? !in
		    : !strcmp(s, "NotIn")        ? in
		    : !strcmp(s, "Exists")       ? !v
		    : !strcmp(s, "DoesNotExist") ? v != NULL
		                                 : true)
			return false;
		n++;
	}
	/* GetPodDaemonSets: an empty selector selects nothing there */
	return n > 0;
}

static const char *meta_label(const void *o, const char *k)
{
	return kcmd_meta_label(o, k);
}

struct walk {
	struct inf_handler_ctx *ctx;
	label_fn lf;
	const void *o;
	const cJSON *node, *old_node; /* node events */
	bool node_update;
};

static cJSON *obj_json(const struct shm_obj *o)
{
	size_t len;
	const char *js = kcmd_obj_json(o, &len);
	return js ? cJSON_ParseWithLength(js, len) : NULL;
}

static int selecting_visit(const struct shm_obj *o, void *ud)
{
	struct walk *w = ud;
	cJSON *ds = obj_json(o);
	cJSON *spec = cJSON_GetObjectItemCaseSensitive(ds, "spec");

	if (sel_holds(cJSON_GetObjectItemCaseSensitive(spec, "selector"), w->lf, w->o))
		add_key(w->ctx, kcmd_obj_namespace(o), kcmd_obj_name(o));
	cJSON_Delete(ds);
	return 0;
}

static void enqueue_selecting(struct inf_handler_ctx *ctx, const char *ns, label_fn lf,
                              const void *o)
{
	struct walk w = {.ctx = ctx, .lf = lf, .o = o};
	kcmd_cache_list(ctx->arena, "apps", "daemonsets", ns, selecting_visit, &w);
}

/* resolveControllerRef: true when the cached set of that name has the reference's uid */
static bool resolve(struct inf_handler_ctx *ctx, const char *ns, const struct kube_owner_ref *r)
{
	struct shm_obj *set = NULL;
	bool same;

	if (!r || !r->kind || strcmp(r->kind, "DaemonSet") != 0 || !r->name)
		return false;
	if (kcmd_cache_get(ctx->arena, "apps", "daemonsets", ns, r->name, &set) < 0)
		return false;
	same = r->uid && strcmp(kcmd_obj_uid(set), r->uid) == 0;
	kcmd_obj_free(set);
	return same;
}

static const struct kube_owner_ref *controller_of(const struct kube_object_meta *m)
{
	for (uint32_t i = 0; m && i < m->n_owner_refs; i++)
		if (m->owner_refs[i].controller == 1)
			return &m->owner_refs[i];
	return NULL;
}

static bool same_ref(const struct kube_owner_ref *a, const struct kube_owner_ref *b)
{
	if (!a || !b)
		return a == b;
	return !strcmp(a->uid ? a->uid : "", b->uid ? b->uid : "") &&
	       !strcmp(a->name ? a->name : "", b->name ? b->name : "") &&
	       !strcmp(a->kind ? a->kind : "", b->kind ? b->kind : "");
}

static bool same_labels(const struct kube_object_meta *a, const struct kube_object_meta *b)
{
	if (a->n_labels != b->n_labels)
		return false;
	for (uint32_t i = 0; i < a->n_labels; i++) {
		const char *v = kube_labels_get(b->labels, b->n_labels, a->labels[i].key);
		if (!v || strcmp(v, a->labels[i].value ? a->labels[i].value : "") != 0)
			return false;
	}
	return true;
}

/* ---- pods ------------------------------------------------------------------------------------ */
static void pod_gone(struct inf_handler_ctx *ctx, const struct kube_object_meta *m)
{
	struct dh *h = ctx->state;
	const struct kube_owner_ref *ref = controller_of(m);
	char key[KCMD_KEY_MAX + 1], pk[KCMD_KEY_MAX + 1];

	if (!ref || !resolve(ctx, m->namespace, ref))
		return;
	if (kcmd_key_make(key, sizeof(key), m->namespace, ref->name) < 0 ||
	    kcmd_key_make(pk, sizeof(pk), m->namespace, m->name) < 0)
		return;
	rs_exp_deletion_observed(h->exp, key, pk);
	add_key(ctx, m->namespace, ref->name);
}

static void on_pod_add(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	const struct kube_pod *p = ev->obj;
	struct dh *h = ctx->state;
	char key[KCMD_KEY_MAX + 1];

	if (!p)
		return;
	if (p->meta.deletion_timestamp) {
		pod_gone(ctx, &p->meta);
		return;
	}
	const struct kube_owner_ref *ref = controller_of(&p->meta);
	if (ref) {
		if (!resolve(ctx, p->meta.namespace, ref) ||
		    kcmd_key_make(key, sizeof(key), p->meta.namespace, ref->name) < 0)
			return;
		rs_exp_creation_observed(h->exp, key);
		add_key(ctx, p->meta.namespace, ref->name);
		return;
	}
	enqueue_selecting(ctx, p->meta.namespace, meta_label, &p->meta);
}

static int old_pod(const struct shm_obj *o, struct shm_pod_view *ret)
{
	struct shm_obj copy;
	int r = shm_obj_dup(o, &copy);

	if (r < 0)
		return r;
	r = shm_pod_view_init(&copy, ret);
	if (r < 0)
		shm_pod_view_free(ret);
	return r;
}

static void on_pod_update(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	const struct kube_pod *p = ev->obj;
	struct shm_pod_view old;
	bool have_old;

	if (!p)
		return;
	have_old = ev->old && old_pod(ev->old, &old) == 0;
	if (have_old && old.pod.meta.resource_version && p->meta.resource_version &&
	    !strcmp(old.pod.meta.resource_version, p->meta.resource_version)) {
		shm_pod_view_free(&old);
		return;
	}
	if (p->meta.deletion_timestamp) {
		pod_gone(ctx, &p->meta);
		if (have_old) {
			const struct kube_owner_ref *o = controller_of(&old.pod.meta);
			if (!same_ref(o, controller_of(&p->meta)) && o &&
			    resolve(ctx, p->meta.namespace, o))
				add_key(ctx, p->meta.namespace, o->name);
			shm_pod_view_free(&old);
		}
		return;
	}
	const struct kube_owner_ref *cur = controller_of(&p->meta);
	const struct kube_owner_ref *was = have_old ? controller_of(&old.pod.meta) : NULL;
	if (have_old && !same_ref(cur, was) && was && resolve(ctx, p->meta.namespace, was))
		add_key(ctx, p->meta.namespace, was->name);
	if (cur) {
		if (resolve(ctx, p->meta.namespace, cur))
			add_key(ctx, p->meta.namespace, cur->name);
		/* the minReadySeconds requeue after a pod turns ready is done by the sync, which
		 * requeues while ready and available differ */
	} else if (!have_old || !same_ref(cur, was) || !same_labels(&old.pod.meta, &p->meta)) {
		/* an orphan: the sets selecting it, when its labels or controller changed */
		enqueue_selecting(ctx, p->meta.namespace, meta_label, &p->meta);
	}
	if (have_old)
		shm_pod_view_free(&old);
}

static void on_pod_delete(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	struct shm_pod_view old;

	if (ev->obj) {
		pod_gone(ctx, &((const struct kube_pod *)ev->obj)->meta);
	} else if (ev->old && old_pod(ev->old, &old) == 0) {
		pod_gone(ctx, &old.pod.meta);
		shm_pod_view_free(&old);
	}
}

/* ---- nodes ----------------------------------------------------------------------------------- */
static int node_visit(const struct shm_obj *o, void *ud)
{
	struct walk *w = ud;
	cJSON *ds = obj_json(o);
	const cJSON *tspec = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ds, "spec"),
	                                         "template"),
	        "spec");
	bool run, cont, orun = false, ocont = false;

	if (ds) {
		ds_node_should_run(tspec, w->node, &run, &cont);
		if (w->node_update)
			ds_node_should_run(tspec, w->old_node, &orun, &ocont);
		if (w->node_update ? (run != orun || cont != ocont) : run)
			add_key(w->ctx, kcmd_obj_namespace(o), kcmd_obj_name(o));
	}
	cJSON_Delete(ds);
	return 0;
}

static cJSON *event_json(const struct inf_event *ev)
{
	size_t len;
	const char *js = kcmd_event_json(ev, &len);
	return js ? cJSON_ParseWithLength(js, len) : NULL;
}

static void on_node_add(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	cJSON *node = event_json(ev);
	struct walk w = {.ctx = ctx, .node = node};

	if (node)
		kcmd_cache_list(ctx->arena, "apps", "daemonsets", NULL, node_visit, &w);
	cJSON_Delete(node);
}

static void on_node_update(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	size_t nl = 0, ol = 0;
	const char *nj = kcmd_event_json(ev, &nl),
	           *oj = ev->old ? kcmd_obj_json(ev->old, &ol) : NULL;

	/* a heartbeat leaves spec and labels byte for byte as they were: skipped before any
	 * parse (the comparison of trees below stays for what differs in bytes only) */
	if (ds_node_update_same(nj, nl, oj, ol))
		return;
	cJSON *node = event_json(ev), *old = ev->old ? obj_json(ev->old) : NULL;
	struct walk w = {.ctx = ctx, .node = node, .old_node = old, .node_update = old != NULL};

	/* the outcome depends on the name, labels and spec (taints) only: a heartbeat (status,
	 * resourceVersion) changes nothing, as upstream's shouldIgnoreNodeUpdate */
	if (node && old &&
	    cJSON_Compare(cJSON_GetObjectItemCaseSensitive(node, "spec"),
	                  cJSON_GetObjectItemCaseSensitive(old, "spec"), true) &&
	    cJSON_Compare(cJSON_GetObjectItemCaseSensitive(
	                          cJSON_GetObjectItemCaseSensitive(node, "metadata"), "labels"),
	                  cJSON_GetObjectItemCaseSensitive(
	                          cJSON_GetObjectItemCaseSensitive(old, "metadata"), "labels"),
	                  true))
		goto out;
	if (node)
		kcmd_cache_list(ctx->arena, "apps", "daemonsets", NULL, node_visit, &w);
out:
	cJSON_Delete(node);
	cJSON_Delete(old);
}

static void on_node_delete(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	(void)ctx; /* upstream has no node delete handler: podgc removes the orphaned pods */
	(void)ev;
}

/* ---- ControllerRevisions --------------------------------------------------------------------- */
static const char *json_label(const void *o, const char *k)
{
	const cJSON *l = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(o, "metadata"), "labels");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(l, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const cJSON *json_ctl(const cJSON *o)
{
	const cJSON *r;
	cJSON_ArrayForEach(
	        r, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "metadata"),
	                                            "ownerReferences"))
	{
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "controller")))
			return r;
	}
	return NULL;
}

static const char *jstr(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void enqueue_json_ref(struct inf_handler_ctx *ctx, const char *ns, const cJSON *ref)
{
	struct kube_owner_ref r = {
	        .kind = jstr(ref, "kind"), .name = jstr(ref, "name"), .uid = jstr(ref, "uid")};
	if (resolve(ctx, ns, &r))
		add_key(ctx, ns, r.name);
}

static void on_history(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	cJSON *cur = ev->kind == INF_EVENT_DELETE ? NULL : event_json(ev);
	cJSON *old = ev->old ? obj_json(ev->old) : NULL;
	const char *ns = ev->meta  ? kcmd_meta_namespace(ev->meta)
	                 : ev->old ? kcmd_obj_namespace(ev->old)
	                           : NULL;

	if (ev->kind == INF_EVENT_DELETE || !cur || (ev->meta && kcmd_meta_deleting(ev->meta))) {
		/* deleteHistory: its controller */
		const cJSON *ref = json_ctl(cur ? cur : old);
		if (ref)
			enqueue_json_ref(ctx, ns, ref);
		goto out;
	}
	const cJSON *ref = json_ctl(cur), *oref = old ? json_ctl(old) : NULL;
	if (ev->kind == INF_EVENT_UPDATE && old) {
		if (!strcmp(jstr(cJSON_GetObjectItemCaseSensitive(cur, "metadata"),
		                 "resourceVersion")
		                    ?: "",
		            jstr(cJSON_GetObjectItemCaseSensitive(old, "metadata"),
		                 "resourceVersion")
		                    ?: ""))
			goto out;
		bool changed = (ref == NULL) != (oref == NULL) ||
		               (ref && strcmp(jstr(ref, "uid") ?: "", jstr(oref, "uid") ?: ""));
		if (changed && oref)
			enqueue_json_ref(ctx, ns, oref);
		if (ref) {
			enqueue_json_ref(ctx, ns, ref);
			goto out;
		}
	} else if (ref) {
		goto out; /* addHistory of a controlled revision: nothing to do */
	}
	enqueue_selecting(ctx, ns, json_label, cur);
out:
	cJSON_Delete(cur);
	cJSON_Delete(old);
}

/* ---- table ----------------------------------------------------------------------------------- */
static int resync_visit(const struct shm_obj *o, void *ud)
{
	add_key(ud, kcmd_obj_namespace(o), kcmd_obj_name(o));
	return 0;
}

static void dh_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	kcmd_cache_list(ctx->arena, "apps", "daemonsets", NULL, resync_visit, ctx);
}

static int dh_init(struct inf_handler_ctx *ctx)
{
	struct dh *h = calloc(1, sizeof(*h));
	const char *fdv = getenv("KCMD_EXPECTATIONS_FD");
	int r;

	if (!h)
		return -ENOMEM;
	if (!fdv || !*fdv) {
		free(h);
		return -EBADF;
	}
	r = rs_exp_attach((int)strtol(fdv, NULL, 10), RS_EXP_INFORMER, rs_exp_now(), &h->exp);
	if (r < 0) {
		free(h);
		return r;
	}
	ctx->state = h;
	return 0;
}

static void dh_fini(struct inf_handler_ctx *ctx)
{
	struct dh *h = ctx->state;

	if (h) {
		rs_exp_detach(h->exp);
		free(h);
	}
	ctx->state = NULL;
}

static const char *const dh_queues[] = {DS_QUEUE, NULL};
static const struct inf_handler_entry dh_entries[] = {
        {"apps", "daemonsets", on_ds, on_ds, on_ds_delete},
        {"", "pods", on_pod_add, on_pod_update, on_pod_delete},
        {"", "nodes", on_node_add, on_node_update, on_node_delete},
        {"apps", "controllerrevisions", on_history, on_history, on_history},
};

const struct inf_handler_table ds_handler_table = {
        .controller = DS_CONTROLLER,
        .queues = dh_queues,
        .entries = dh_entries,
        .n_entries = sizeof(dh_entries) / sizeof(dh_entries[0]),
        .init = dh_init,
        .fini = dh_fini,
        .resync = dh_resync,
};
