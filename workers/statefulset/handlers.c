/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/statefulset/handlers.c: the statefulset controller's event handlers (upstream
 * stateful_set.go's enqueueStatefulSet on set events and add/update/deletePod), run in its
 * kcmd-dispatcher; they add "ns/name" of a StatefulSet to the queue "statefulset".
 *
 * A pod with a controllerRef to a StatefulSet enqueues that set when the cache holds a set of
 * that name and uid (resolveControllerRef); on update also the previous controller when the
 * reference changed. An orphan pod enqueues every StatefulSet of its namespace whose selector
 * matches it (upstream GetPodStatefulSets), on add and when its labels or controller changed.
 * ControllerRevisions and claims have no handlers, as upstream.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kcmd/cache.h"
#include "kcmd/handlers.h"
#include "lib/log.h"
#include "workers/statefulset/controller.h"

static void add_key(struct inf_handler_ctx *ctx, const char *ns, const char *name)
{
	char key[KCMD_KEY_MAX + 1];
	int r;

	if (kcmd_key_make(key, sizeof(key), ns, name) < 0)
		return;
	if ((r = kcmd_queue_add(ctx, 0, key)) < 0)
		log_error("%s queue: adding %s failed: %s", STS_QUEUE, key, strerror(-r));
}

static void on_set(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	if (ev->meta)
		add_key(ctx, kcmd_meta_namespace(ev->meta), kcmd_meta_name(ev->meta));
	else if (ev->old)
		add_key(ctx, kcmd_obj_namespace(ev->old), kcmd_obj_name(ev->old));
}

/* resolveControllerRef: the cached set of that name, only if its uid matches */
static void enqueue_ref(struct inf_handler_ctx *ctx, const char *ns, const struct kcmd_owner_ref *r)
{
	struct shm_obj *set = NULL;

	if (!r->kind || strcmp(r->kind, "StatefulSet") != 0 || !r->name)
		return;
	if (kcmd_cache_get(ctx->arena, "apps", "statefulsets", ns, r->name, &set) < 0)
		return;
	if (r->uid && strcmp(kcmd_obj_uid(set), r->uid) == 0)
		add_key(ctx, ns, r->name);
	kcmd_obj_free(set);
}

struct orphan_walk {
	struct inf_handler_ctx *ctx;
	const struct kube_object_meta *pod;
};

static bool sel_holds(const cJSON *sel, const struct kube_object_meta *m)
{
	const cJSON *it, *x;
	int n = 0;

	if (!cJSON_IsObject(sel))
		return false;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(sel, "matchLabels"))
	{
		const char *v = kcmd_meta_label(m, it->string);
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
		const char *v = kcmd_meta_label(m, k->valuestring);
		cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(it, "values"))
		{
			if (v && cJSON_IsString(x) && strcmp(x->valuestring, v) == 0)
				in = true;
		}
		const char *o = op->valuestring;
		if ((!strcmp(o, "In") && !in) || (!strcmp(o, "NotIn") && in) ||
		    (!strcmp(o, "Exists") && !v) || (!strcmp(o, "DoesNotExist") && v))
			return false;
		if (strcmp(o, "In") && strcmp(o, "NotIn") && strcmp(o, "Exists") &&
		    strcmp(o, "DoesNotExist"))
			return false;
		n++;
	}
	return n > 0;
}

static int orphan_visit(const struct shm_obj *o, void *ud)
{
	struct orphan_walk *w = ud;
	size_t len;
	const char *js = kcmd_obj_json(o, &len);
	cJSON *set = js ? cJSON_ParseWithLength(js, len) : NULL;
	cJSON *spec = cJSON_GetObjectItemCaseSensitive(set, "spec");

	if (sel_holds(cJSON_GetObjectItemCaseSensitive(spec, "selector"), w->pod))
		add_key(w->ctx, kcmd_obj_namespace(o), kcmd_obj_name(o));
	cJSON_Delete(set);
	return 0;
}

static bool meta_controller(const struct kube_object_meta *m, struct kcmd_owner_ref *ret)
{
	for (size_t i = 0; m && i < kcmd_meta_n_owners(m); i++)
		if (kcmd_meta_owner(m, i, ret) == 0 && ret->controller == 1)
			return true;
	return false;
}

static bool obj_controller(const struct shm_obj *o, struct kcmd_owner_ref *ret)
{
	for (size_t i = 0; o && i < kcmd_obj_n_owners(o); i++)
		if (kcmd_obj_owner(o, i, ret) == 0 && ret->controller == 1)
			return true;
	return false;
}

static void enqueue_orphan(struct inf_handler_ctx *ctx, const struct kube_object_meta *m)
{
	struct orphan_walk w = {ctx, m};
	kcmd_cache_list(ctx->arena, "apps", "statefulsets", kcmd_meta_namespace(m), orphan_visit,
	                &w);
}

static bool same_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

static void on_pod(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	struct kcmd_owner_ref ref, old_ref;
	bool have, have_old;

	if (ev->kind == INF_EVENT_DELETE || !ev->meta) {
		/* deletePod: the controller only */
		if (ev->old && obj_controller(ev->old, &ref))
			enqueue_ref(ctx, kcmd_obj_namespace(ev->old), &ref);
		return;
	}
	const char *ns = kcmd_meta_namespace(ev->meta);
	have = meta_controller(ev->meta, &ref);
	if (ev->kind != INF_EVENT_UPDATE || !ev->old) {
		if (have)
			enqueue_ref(ctx, ns, &ref);
		else if (!kcmd_meta_deleting(ev->meta))
			enqueue_orphan(ctx, ev->meta);
		return;
	}
	if (same_str(kcmd_obj_resource_version(ev->old), kcmd_meta_resource_version(ev->meta)))
		return;
	have_old = obj_controller(ev->old, &old_ref);
	bool ref_changed =
	        have != have_old ||
	        (have && (!same_str(ref.uid, old_ref.uid) || !same_str(ref.name, old_ref.name)));
	if (ref_changed && have_old)
		enqueue_ref(ctx, ns, &old_ref);
	if (have) {
		enqueue_ref(ctx, ns, &ref);
		return;
	}
	/* an orphan: the sets selecting it, when its labels or controller changed (labels are
	 * not compared here: any update of an orphan is looked at) */
	enqueue_orphan(ctx, ev->meta);
}

static int resync_visit(const struct shm_obj *o, void *ud)
{
	add_key(ud, kcmd_obj_namespace(o), kcmd_obj_name(o));
	return 0;
}

static void stsh_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	kcmd_cache_list(ctx->arena, "apps", "statefulsets", NULL, resync_visit, ctx);
}

static const char *const stsh_queues[] = {STS_QUEUE, NULL};
static const struct inf_handler_entry stsh_entries[] = {
        {"apps", "statefulsets", on_set, on_set, on_set},
        {"", "pods", on_pod, on_pod, on_pod},
};

const struct inf_handler_table sts_handler_table = {
        .controller = STS_CONTROLLER,
        .queues = stsh_queues,
        .entries = stsh_entries,
        .n_entries = sizeof(stsh_entries) / sizeof(stsh_entries[0]),
        .resync = stsh_resync,
};
