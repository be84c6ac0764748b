/* SPDX-License-Identifier: Apache-2.0 */
/*
 * examples/configmap/configmap.c: an out-of-tree kcmd controller, built only against the
 * installed API (`pkg-config --cflags --libs kcmd`) and loaded with
 * `kcmd --controller-plugins=.../example-configmap.so
 * --controllers=*,example-configmap-controller`.
 *
 * What it does: every Namespace labelled example.kcmd.io/configmap=true gets a ConfigMap
 * `kcmd-example`, owned by the Namespace (so the garbage collector removes it with the
 * Namespace). It is created when missing, created again when someone deletes it, and deleted
 * when the label goes. A ConfigMap of that name this controller does not own (no controller
 * reference to the Namespace) is left alone, as upstream controllers leave objects they did
 * not adopt.
 *
 * How (the shape of every kcmd controller, docs/writing-a-controller.md):
 *   - watches: Namespaces and ConfigMaps, metadata-only (labels and owners are all it reads);
 *   - handlers (run in its kcmd-dispatcher): any change of a Namespace, or of a ConfigMap named
 *     kcmd-example, adds the Namespace's name to the queue `example-configmap`;
 *   - sync (run in its kcmd-worker processes): reads the Namespace and the ConfigMap from the
 *     shared cache, decides (ex_decide, pure, unit-tested), writes with the API client, and
 *     records an Event on the Namespace as upstream controllers do (SuccessfulCreate,
 *     SuccessfulDelete). kcmd-worker calls it only once the cache has listed both watched
 *     resources (upstream's WaitForNamedCacheSync, logged "Caches are synced for
 *     example-configmap-controller"): until then a Namespace would read as having no ConfigMap.
 *   Level-triggered: the sync looks at the state, never at the event, so a missed or repeated
 *   key is harmless. A write the cache has not seen yet is answered by the apiserver
 *   (AlreadyExists on create, NotFound on delete), both treated as done.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kcmd/kcmd.h>

#include "configmap.h"

/* ---- the decision (pure) ----------------------------------------------------------------------
 */
enum ex_action ex_decide(const struct ex_state *s)
{
	bool want = s->ns_exists && s->ns_label && strcmp(s->ns_label, "true") == 0;

	if (want && !s->cm_exists)
		return EX_CREATE;
	if (!want && s->ns_exists && s->cm_exists && s->cm_owned)
		return EX_DELETE;
	return EX_NOTHING;
}

int ex_configmap_body(char *buf, size_t len, const char *ns, const char *ns_uid)
{
	int n = snprintf(buf, len,
	                 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
	                 "\"name\":\"%s\",\"namespace\":\"%s\","
	                 "\"labels\":{\"app.kubernetes.io/managed-by\":\"%s\"},"
	                 "\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
	                 "\"name\":\"%s\",\"uid\":\"%s\",\"controller\":true}]},"
	                 "\"data\":{\"namespace\":\"%s\"}}",
	                 EX_CONFIGMAP, ns, EX_CONTROLLER, ns, ns_uid, ns);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : n;
}

/* ---- handlers (kcmd-dispatcher) ------------------------------------------------------------- */
/* The namespace an event is about: ev->meta, or the last known state of a tombstone. */
static void enqueue(struct inf_handler_ctx *ctx, const struct inf_event *ev, bool namespaces)
{
	const char *name = ev->meta ? kcmd_meta_name(ev->meta) : kcmd_obj_name(ev->old);
	const char *ns = ev->meta ? kcmd_meta_namespace(ev->meta) : kcmd_obj_namespace(ev->old);

	if (namespaces) {
		kcmd_queue_add(ctx, 0, name);
		return;
	}
	if (strcmp(name, EX_CONFIGMAP) == 0 && ns[0])
		kcmd_queue_add(ctx, 0, ns);
}

static void on_namespace(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	enqueue(ctx, ev, true);
}

static void on_configmap(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	enqueue(ctx, ev, false);
}

static int add_namespace(const struct shm_obj *o, void *ud)
{
	kcmd_queue_add(ud, 0, kcmd_obj_name(o));
	return 0;
}

/* the dispatcher started (again) from the cache: every Namespace is looked at once */
static void resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	kcmd_cache_list(ctx->arena, "", "namespaces", NULL, add_namespace, ctx);
}

static const char *const ex_queue_names[] = {EX_QUEUE, NULL};
static const struct inf_handler_entry ex_entries[] = {
        {.group = "",
         .resource = "namespaces",
         .on_add = on_namespace,
         .on_update = on_namespace,
         .on_delete = on_namespace},
        {.group = "",
         .resource = "configmaps",
         .on_add = on_configmap,
         .on_update = on_configmap,
         .on_delete = on_configmap},
};
static const struct inf_handler_table ex_handlers = {
        .controller = EX_CONTROLLER,
        .queues = ex_queue_names,
        .entries = ex_entries,
        .n_entries = sizeof(ex_entries) / sizeof(ex_entries[0]),
        .resync = resync,
};

/* ---- sync (kcmd-worker) ------------------------------------------------------------------------
 */
static int ex_init(struct wk_ctx *ctx, void **ret_state)
{
	*ret_state = ctx; /* the arena and the client are all it needs */
	return 0;
}

static void ex_fini(void *state)
{
	(void)state;
}

static void event(struct wk_ctx *ctx, const char *ns, const char *uid, const char *reason,
                  const char *verb)
{
	struct kcmd_object_ref ref = {
	        .api_version = "v1", .kind = "Namespace", .name = ns, .uid = uid};
	int r = kcmd_event_record(ctx->kc, EX_CONTROLLER, &ref, KCMD_EVENT_NORMAL, reason,
	                          "%s ConfigMap %s", verb, EX_CONFIGMAP);
	if (r < 0)
		kcmd_log_v(2, "event %s on namespace %s: %s", reason, ns, strerror(-r));
}

static void ex_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct wk_ctx *ctx = state;
	struct shm_obj *ns = NULL, *cm = NULL;
	struct ex_state s = {0};
	char body[2048];
	int r;

	(void)q;
	*res = (struct wk_result){0};
	r = kcmd_cache_get(ctx->arena, "", "namespaces", NULL, key, &ns);
	if (r < 0 && r != -ENOENT) {
		res->err = r;
		return;
	}
	r = kcmd_cache_get(ctx->arena, "", "configmaps", key, EX_CONFIGMAP, &cm);
	if (r < 0 && r != -ENOENT) {
		res->err = r;
		goto out;
	}
	s.ns_exists = ns != NULL;
	s.ns_label = ns ? kcmd_obj_label(ns, EX_LABEL) : NULL;
	s.cm_exists = cm != NULL;
	for (size_t i = 0; cm && ns && i < kcmd_obj_n_owners(cm); i++) {
		struct kcmd_owner_ref o;
		if (kcmd_obj_owner(cm, i, &o) == 0 && o.controller == 1 &&
		    strcmp(o.uid, kcmd_obj_uid(ns)) == 0)
			s.cm_owned = true;
	}

	switch (ex_decide(&s)) {
	case EX_NOTHING:
		break;
	case EX_CREATE:
		if ((r = ex_configmap_body(body, sizeof(body), key, kcmd_obj_uid(ns))) < 0) {
			res->err = r;
			break;
		}
		r = kcmd_kube_request(ctx->kc,
		                      &(struct kcmd_request){.method = "POST",
		                                             .version = "v1",
		                                             .resource = "configmaps",
		                                             .ns = key,
		                                             .body = body,
		                                             .body_kind = "ConfigMap"},
		                      NULL, NULL);
		if (r == 0) {
			kcmd_log_info("created configmap %s/%s", key, EX_CONFIGMAP);
			event(ctx, key, kcmd_obj_uid(ns), "SuccessfulCreate", "Created");
		} else if (r == -ESHUTDOWN) {
			r = 0; /* the namespace is terminating: nothing to keep */
		} else if (r != -EEXIST) {
			kcmd_log_warning("creating configmap %s/%s: %s", key, EX_CONFIGMAP,
			                 kcmd_kube_reason(r) ? kcmd_kube_reason(r) : strerror(-r));
			res->err = r;
		}
		break;
	case EX_DELETE:
		r = kcmd_kube_request(ctx->kc,
		                      &(struct kcmd_request){.method = "DELETE",
		                                             .version = "v1",
		                                             .resource = "configmaps",
		                                             .ns = key,
		                                             .name = EX_CONFIGMAP,
		                                             .precondition_uid = kcmd_obj_uid(cm)},
		                      NULL, NULL);
		if (r == 0) {
			kcmd_log_info("deleted configmap %s/%s", key, EX_CONFIGMAP);
			event(ctx, key, kcmd_obj_uid(ns), "SuccessfulDelete", "Deleted");
		} else if (r != -ENOENT && r != -ESTALE) {
			/* NotFound: gone already; Conflict: another object of that name now,
			 * which the next event looks at */
			kcmd_log_warning("deleting configmap %s/%s: %s", key, EX_CONFIGMAP,
			                 kcmd_kube_reason(r) ? kcmd_kube_reason(r) : strerror(-r));
			res->err = r;
		}
		break;
	}
out:
	/* as upstream's syncs do at V(4): every key handled shows with --v=4 */
	kcmd_log_v(4, "Finished syncing namespace \"%s\"", key);
	kcmd_obj_free(cm);
	kcmd_obj_free(ns);
}

static const struct wk_controller ex_worker = {
        .name = EX_CONTROLLER,
        .queues = ex_queue_names,
        .init = ex_init,
        .sync = ex_sync,
        .fini = ex_fini,
};

/* ---- the descriptor ---------------------------------------------------------------------------
 */
static const struct kcmd_watch ex_watches[] = {
        {.group = "",
         .version = "v1",
         .resource = "namespaces",
         .kind = "Namespace",
         .cache = KCMD_CACHE_METADATA,
         .namespaced = false},
        {.group = "",
         .version = "v1",
         .resource = "configmaps",
         .kind = "ConfigMap",
         .cache = KCMD_CACHE_METADATA,
         .namespaced = true},
};
static const struct kcmd_queue ex_queues[] = {{.name = EX_QUEUE}};
static const struct kcmd_flag ex_flags[] = {
        {.name = "concurrent-example-configmap-syncs",
         .type = KCMD_FLAG_INT,
         .def = "1",
         .min = 1,
         .max = 16,
         .help = "The number of namespaces the example ConfigMap controller syncs at once "
                 "(worker processes)."},
};

static int ex_worker_count(const struct kcmd_flag_values *v)
{
	return (int)kcmd_flag_int(v, "concurrent-example-configmap-syncs");
}

static const struct kcmd_controller ex_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = EX_CONTROLLER,
        .enabled_by_default = false, /* like kcm's optional controllers: name it to run it */
        .service_account = EX_CONTROLLER,
        .cluster_scoped_keys = true, /* its keys are Namespace names */
        .watches = ex_watches,
        .n_watches = sizeof(ex_watches) / sizeof(ex_watches[0]),
        .queues = ex_queues,
        .n_queues = 1,
        .flags = ex_flags,
        .n_flags = sizeof(ex_flags) / sizeof(ex_flags[0]),
        .worker_count = ex_worker_count,
        .handlers = &ex_handlers,
        .worker = &ex_worker,
};

KCMD_PLUGIN(ex_controller)
