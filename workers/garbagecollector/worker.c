/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/garbagecollector/worker.c: attemptToDelete / attemptToOrphan (see worker.h).
 *
 * Rule sources (kubernetes v1.37.2, pkg/controller/garbagecollector):
 *   garbagecollector.go  attemptToDeleteWorker, isDangling, classifyReferences,
 *                        attemptToDeleteItem, processDeletingDependentsItem, orphanDependents,
 *                        attemptToOrphanWorker
 *   operations.go        deleteObject (409 follow-up), getObject, patchObject, removeFinalizer
 *   patch.go             patch (SMP then merge patch on 415), deleteOwnerRefJSONMergePatch,
 *                        unblockOwnerReferencesStrategicMergePatch / JSONMergePatch, getMetadata
 *   pkg/controller/controller_ref_manager.go  GenerateDeleteOwnerRefStrategicMergeBytes
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/encode.h"
#include "kube/errors.h"
#include "workers/garbagecollector/shard.h"
#include "workers/garbagecollector/worker.h"

/* ---- the in-memory graph as a view ------------------------------------------------------- */
static void node_to_view(const struct gc_node *n, struct gc_node_view *v)
{
	*v = (struct gc_node_view){
	        .id = n->id,
	        .owners = n->owners,
	        .n_owners = n->n_owners,
	        .virtual_ = n->virtual_,
	        .being_deleted = n->being_deleted,
	        .deleting_dependents = n->deleting_dependents,
	        .n_dependents = n->n_deps,
	};
}

static int mem_node(void *ud, const char *uid, struct gc_node_view *ret)
{
	const struct gc_node *n = gc_graph_get(ud, uid);
	if (!n)
		return -ENOENT;
	node_to_view(n, ret);
	return 0;
}

static int mem_dependents(void *ud, const char *uid, gc_dep_fn fn, void *fn_ud)
{
	const struct gc_node *n = gc_graph_get(ud, uid);
	if (!n)
		return 0;
	for (size_t i = 0; fn && i < n->n_deps; i++) {
		struct gc_node_view v;
		node_to_view(n->deps[i], &v);
		int r = fn(&v, fn_ud);
		if (r < 0)
			return r;
	}
	return (int)n->n_deps;
}

void gc_graph_view_init(struct gc_graph_view *v, struct gc_graph *g)
{
	*v = (struct gc_graph_view){.ud = g, .node = mem_node, .dependents = mem_dependents};
}

/* ---- pure decisions ---------------------------------------------------------------------- */
enum gc_decision gc_decide(size_t n_solid, size_t n_dangling, size_t n_waiting,
                           size_t n_item_dependents)
{
	if (n_solid) {
		/* never delete an object with a live owner; strip what would keep a waiting owner
		 * blocked forever, and the dangling references */
		return (n_dangling || n_waiting) ? GC_DECIDE_REMOVE_REFS : GC_DECIDE_NOTHING;
	}
	if (n_waiting && n_item_dependents)
		return GC_DECIDE_DELETE_FOREGROUND_CASCADE;
	return GC_DECIDE_DELETE;
}

const char *gc_delete_policy(const struct kube_object_meta *live)
{
	if (gc_has_finalizer(live, GC_FINALIZER_ORPHAN))
		return GC_POLICY_ORPHAN;
	if (gc_has_finalizer(live, GC_FINALIZER_FOREGROUND))
		return GC_POLICY_FOREGROUND;
	return GC_POLICY_BACKGROUND;
}

double gc_finalizer_backoff_ms(int attempt, double r)
{
	double d = 10.0;
	for (int i = 2; i < attempt; i++)
		d *= 5.0;
	return d + r * 0.1 * d;
}

/* ---- helpers ----------------------------------------------------------------------------- */
static void res_fail(struct gc_result *res, enum gc_outcome o, int err, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static void res_fail(struct gc_result *res, enum gc_outcome o, int err, const char *fmt, ...)
{
	res->outcome = o;
	res->err = err;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(res->msg, sizeof res->msg, fmt, ap);
	va_end(ap);
}

/* Appends to a NUL-terminated buffer, truncating (texts are for logs). */
static void appendf(char *buf, size_t size, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static void appendf(char *buf, size_t size, const char *fmt, ...)
{
	size_t l = strlen(buf);
	if (l + 1 >= size)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + l, size - l, fmt, ap);
	va_end(ap);
}

/* The text of an API error when the seam only gives the errno: client-go's generic texts for
 * a response without a Status body (the real client's Status message is logged by the
 * process that owns the request). */
static const char *errtext(int err)
{
	switch (err) {
	case -ESTALE:
		return "the server reported a conflict";
	case -ENOENT:
		return "the server could not find the requested resource";
	case -EMEDIUMTYPE:
		return "the server does not support the requested media type";
	default:
		break;
	}
	const char *r = kube_errno_reason(err);
	return r ? r : strerror(-err);
}

static void rest_mapping_error(struct gc_result *res, const char *api_version, const char *kind)
{
	/* restMappingError.Error() */
	res_fail(res, GC_REST_MAPPING, -ENOENT, "unable to get REST mapping for %s/%s.",
	         gc_s(api_version), gc_s(kind));
}

static bool owners_equal(const struct kube_owner_ref *a, size_t na, const struct kube_owner_ref *b,
                         size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (!gc_str_eq(a[i].api_version, b[i].api_version) ||
		    !gc_str_eq(a[i].kind, b[i].kind) || !gc_str_eq(a[i].name, b[i].name) ||
		    !gc_str_eq(a[i].uid, b[i].uid) || a[i].controller != b[i].controller ||
		    a[i].block_owner_deletion != b[i].block_owner_deletion)
			return false;
	return true;
}

/* Resolves where calls about `id` go. 0, or a REST-mapping failure recorded in res. */
static int target_of(struct gc_worker *w, const struct gc_ref *id, struct gc_target *t,
                     bool *namespaced, struct gc_result *res)
{
	bool ns = false;
	if (w->api->rest_map(w->api->ud, id->api_version, id->kind, &ns) < 0) {
		rest_mapping_error(res, id->api_version, id->kind);
		return -ENOENT;
	}
	*t = (struct gc_target){id->api_version, id->kind, gc_owner_lookup_ns(ns, id->ns),
	                        id->name};
	if (namespaced)
		*namespaced = ns;
	return 0;
}

/* getObject: -ENOENT (404), other errno, or the sentinels recorded in res (returns -EINVAL for
 * the cluster-scoped-child sentinel and -ENOENT + GC_REST_MAPPING for mapping failures: the
 * caller checks res->outcome first). */
static int get_object(struct gc_worker *w, const struct gc_ref *id, struct kube_partial **ret,
                      struct gc_result *res)
{
	struct gc_target t;
	bool namespaced;
	if (target_of(w, id, &t, &namespaced, res) < 0)
		return -ENOENT;
	if (namespaced && gc_s(t.ns)[0] == '\0') {
		res_fail(res, GC_CLUSTER_CHILD_NS_OWNER, -EINVAL,
		         "cluster-scoped objects cannot refer to namespaced owners");
		return -EINVAL;
	}
	int r = w->api->get(w->api->ud, &t, ret);
	if (r == GC_ERR_NOT_SERVED) { /* our mapping is stale: the kind is not served now */
		rest_mapping_error(res, id->api_version, id->kind);
		return -ENOENT;
	}
	return r;
}

/* patch.go getMetadata: the informer store's copy, else a GET (namespace as in the identity). */
static int get_metadata(struct gc_worker *w, const struct gc_ref *id, struct kube_partial **ret,
                        bool *ret_cached, struct gc_result *res)
{
	bool ns;
	if (w->api->rest_map(w->api->ud, id->api_version, id->kind, &ns) < 0) {
		rest_mapping_error(res, id->api_version, id->kind);
		return -ENOENT;
	}
	struct gc_target t = {id->api_version, id->kind, gc_s(id->ns), id->name};
	if (w->api->get_cached) {
		int r = w->api->get_cached(w->api->ud, &t, ret);
		if (r != -ENOENT) {
			*ret_cached = r == 0;
			return r;
		}
	}
	*ret_cached = false;
	return w->api->get(w->api->ud, &t, ret);
}

/* What get_metadata returned goes back where it came from: a cache view or a decoded GET. */
static void meta_free(struct gc_worker *w, struct kube_partial *meta, bool cached)
{
	if (cached && w->api->put_cached)
		w->api->put_cached(w->api->ud, meta);
	else
		kube_object_free(meta);
}

enum patch_kind { PATCH_DELETE_REFS, PATCH_UNBLOCK };

/* gc.patch: strategic merge first; only a 415 falls back to a JSON merge patch built from the
 * cached (or fetched) metadata, carrying its resourceVersion. */
static int patch_item(struct gc_worker *w, const struct gc_node_view *item, const char *smp,
                      enum patch_kind kind, const char *const *uids, size_t n_uids,
                      struct gc_result *res)
{
	struct gc_target t;
	if (target_of(w, &item->id, &t, NULL, res) < 0)
		return -ENOENT;
	int r = w->api->patch(w->api->ud, &t, KUBE_PATCH_STRATEGIC, smp);
	if (r != -EMEDIUMTYPE)
		return r;
	struct kube_partial *meta = NULL;
	bool cached = false;
	r = get_metadata(w, &item->id, &meta, &cached, res);
	if (r < 0)
		return r;
	const char *rv = gc_s(meta->meta.resource_version);
	char *body = NULL;
	if (kind == PATCH_DELETE_REFS) {
		/* every live ref except the removed uids */
		struct kube_owner_ref *keep = calloc(meta->meta.n_owner_refs + 1, sizeof *keep);
		size_t n = 0;
		if (!keep) {
			meta_free(w, meta, cached);
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < meta->meta.n_owner_refs; i++) {
			bool drop = false;
			for (size_t j = 0; j < n_uids && !drop; j++)
				drop = gc_str_eq(meta->meta.owner_refs[i].uid, uids[j]);
			if (!drop)
				keep[n++] = meta->meta.owner_refs[i];
		}
		r = kube_encode_owner_refs_merge_patch(rv, keep, n, &body);
		free(keep);
	} else {
		/* every ref of the graph node, blockOwnerDeletion=false */
		struct kube_owner_ref *refs = calloc(item->n_owners + 1, sizeof *refs);
		if (!refs) {
			meta_free(w, meta, cached);
			return -ENOMEM;
		}
		for (size_t i = 0; i < item->n_owners; i++) {
			refs[i] = item->owners[i];
			refs[i].block_owner_deletion = 0;
		}
		r = kube_encode_owner_refs_merge_patch(rv, refs, item->n_owners, &body);
		free(refs);
	}
	meta_free(w, meta, cached);
	if (r < 0)
		return r;
	r = w->api->patch(w->api->ud, &t, KUBE_PATCH_MERGE, body);
	free(body);
	return r;
}

/* deleteObject with the v1.36 follow-up: after a 409 on a request that carried the
 * resourceVersion, GET the object; gone -> 404; same uid, other resourceVersion and owners
 * deep-equal to the ones the decision saw -> DELETE again with the uid precondition only. */
static int delete_object(struct gc_worker *w, const struct gc_ref *id, const char *rv,
                         const struct kube_owner_ref *owners, size_t n_owners, const char *policy,
                         struct gc_result *res)
{
	struct gc_target t;
	if (target_of(w, id, &t, NULL, res) < 0)
		return -ENOENT;
	const char *prv = rv && rv[0] ? rv : NULL;
	int r = w->api->delete_(w->api->ud, &t, id->uid, prv, policy);
	if (r == -ESTALE && prv) {
		struct kube_partial *live = NULL;
		int g = w->api->get(w->api->ud, &t, &live);
		if (g == -ENOENT)
			return -ENOENT;
		bool retry = g == 0 && gc_str_eq(live->meta.uid, id->uid) &&
		             !gc_str_eq(live->meta.resource_version, prv) &&
		             owners_equal(live->meta.owner_refs, live->meta.n_owner_refs, owners,
		                          n_owners);
		kube_object_free(live);
		if (retry)
			return w->api->delete_(w->api->ud, &t, id->uid, NULL, policy);
	}
	return r;
}

/* removeFinalizer: GET, drop `fin`, merge-patch {resourceVersion, finalizers|null}; conflicts
 * retried with DefaultBackoff (4 attempts). */
static int remove_finalizer(struct gc_worker *w, const struct gc_ref *owner, const char *fin,
                            struct gc_result *res)
{
	char ident[1280];
	gc_ref_format(owner, ident, sizeof ident);
	for (int attempt = 1;; attempt++) {
		struct kube_partial *obj = NULL;
		int r = get_object(w, owner, &obj, res);
		if (r == -ENOENT && res->outcome == GC_OK)
			return 0;
		if (r < 0) {
			/* upstream wraps every GET failure (sentinels included) in a plain error */
			char inner[sizeof res->msg];
			snprintf(inner, sizeof inner, "%s",
			         res->outcome != GC_OK ? res->msg : errtext(r));
			res_fail(res, GC_FAILED, r,
			         "cannot finalize owner %s, because cannot get it: %s. The garbage "
			         "collector will retry later",
			         ident, inner);
			return r;
		}
		const char **keep = calloc(obj->meta.n_finalizers + 1, sizeof *keep);
		if (!keep) {
			kube_object_free(obj);
			return -ENOMEM;
		}
		size_t n = 0;
		bool found = false;
		for (uint32_t i = 0; i < obj->meta.n_finalizers; i++) {
			if (gc_str_eq(obj->meta.finalizers[i], fin))
				found = true;
			else
				keep[n++] = obj->meta.finalizers[i];
		}
		char *body = NULL;
		if (found)
			r = kube_encode_finalizers_merge_patch(gc_s(obj->meta.resource_version),
			                                       keep, n, &body);
		free(keep);
		kube_object_free(obj);
		if (!found)
			return 0; /* already removed */
		if (r < 0)
			return r;
		struct gc_target t;
		r = target_of(w, owner, &t, NULL, res);
		if (r == 0)
			r = w->api->patch(w->api->ud, &t, KUBE_PATCH_MERGE, body);
		free(body);
		if (r != -ESTALE)
			return r;
		if (attempt >= GC_FINALIZER_RETRY_STEPS) {
			res_fail(res, GC_FAILED, r,
			         "updateMaxRetries(%d) has reached. The garbage collector will "
			         "retry later for owner %s",
			         GC_FINALIZER_RETRY_STEPS, ident);
			return r;
		}
		if (w->api->sleep_ms)
			w->api->sleep_ms(
			        w->api->ud,
			        gc_finalizer_backoff_ms(attempt + 1,
			                                w->rand01 ? w->rand01(w->rand_ud) : 0));
	}
}

/* ---- isDangling / classifyReferences ------------------------------------------------------ */
enum ref_class { REF_SOLID, REF_DANGLING, REF_WAITING };

static int is_dangling(struct gc_worker *w, const struct kube_owner_ref *ref,
                       const struct gc_node_view *item, enum ref_class *cls, struct gc_result *res)
{
	/* the cache first, cluster-scoped key then the dependent's namespace, before any mapping */
	struct gc_ref key = gc_ref_from_owner(ref, "");
	if (w->absent && gc_absent_cache_has(w->absent, &key)) {
		*cls = REF_DANGLING;
		return 0;
	}
	key.ns = gc_s(item->id.ns);
	if (w->absent && gc_absent_cache_has(w->absent, &key)) {
		*cls = REF_DANGLING;
		return 0;
	}
	bool namespaced;
	if (w->api->rest_map(w->api->ud, ref->api_version, ref->kind, &namespaced) < 0) {
		rest_mapping_error(res, ref->api_version, ref->kind);
		return -ENOENT;
	}
	if (!namespaced)
		key.ns = "";
	if (gc_ref_validity(item->id.ns, namespaced) == GC_REF_CLUSTER_CHILD_NAMESPACED_OWNER) {
		res_fail(res, GC_CLUSTER_CHILD_NS_OWNER, -EINVAL,
		         "cluster-scoped objects cannot refer to namespaced owners");
		return -EINVAL;
	}
	struct gc_target t = {ref->api_version, ref->kind,
	                      gc_owner_lookup_ns(namespaced, item->id.ns), ref->name};
	struct kube_partial *owner = NULL;
	int r = w->api->get(w->api->ud, &t, &owner);
	if (r == GC_ERR_NOT_SERVED) { /* the owner's kind is not served now: not absent */
		rest_mapping_error(res, ref->api_version, ref->kind);
		return -ENOENT;
	}
	if (r == -ENOENT) {
		if (w->absent)
			(void)gc_absent_cache_add(w->absent, &key);
		*cls = REF_DANGLING;
		return 0;
	}
	if (r < 0) {
		res_fail(res, GC_FAILED, r, "%s", errtext(r));
		return r;
	}
	if (!gc_str_eq(owner->meta.uid, ref->uid)) {
		if (w->absent)
			(void)gc_absent_cache_add(w->absent, &key);
		*cls = REF_DANGLING;
	} else if (owner->meta.deletion_timestamp != 0 &&
	           gc_has_finalizer(&owner->meta, GC_FINALIZER_FOREGROUND)) {
		*cls = REF_WAITING;
	} else {
		*cls = REF_SOLID;
	}
	kube_object_free(owner);
	return 0;
}

/* ---- processDeletingDependentsItem ------------------------------------------------------- */
struct blocking_ctx {
	const char *owner_uid;
	struct gc_worker *w;
	size_t n_blocking;
	bool enqueue;
};

static int blocking_visit(const struct gc_node_view *dep, void *ud)
{
	struct blocking_ctx *c = ud;
	for (size_t i = 0; i < dep->n_owners; i++) {
		if (!gc_str_eq(dep->owners[i].uid, c->owner_uid) ||
		    dep->owners[i].block_owner_deletion != 1)
			continue;
		c->n_blocking++;
		if (c->enqueue && !dep->deleting_dependents && c->w->api->attempt_to_delete)
			c->w->api->attempt_to_delete(c->w->api->ud, dep->id.uid);
	}
	return 0;
}

static enum gc_outcome process_deleting_dependents(struct gc_worker *w,
                                                   const struct gc_node_view *item,
                                                   struct gc_result *res)
{
	struct blocking_ctx c = {.owner_uid = item->id.uid, .w = w};
	int r = w->graph->dependents(w->graph->ud, item->id.uid, blocking_visit, &c);
	if (r < 0) {
		res_fail(res, GC_FAILED, r, "%s", errtext(r));
		return res->outcome;
	}
	if (c.n_blocking == 0) {
		res->action = GC_ACT_REMOVE_FINALIZER;
		r = remove_finalizer(w, &item->id, GC_FINALIZER_FOREGROUND, res);
		if (r < 0 && res->outcome == GC_OK)
			res_fail(res, GC_FAILED, r, "%s", errtext(r));
		return res->outcome;
	}
	res->action = GC_ACT_ENQUEUE_BLOCKING;
	c.enqueue = true;
	c.n_blocking = 0;
	r = w->graph->dependents(w->graph->ud, item->id.uid, blocking_visit, &c);
	if (r < 0)
		res_fail(res, GC_FAILED, r, "%s", errtext(r));
	return res->outcome;
}

static int any_deleting_visit(const struct gc_node_view *dep, void *ud)
{
	if (dep->deleting_dependents) {
		*(bool *)ud = true;
		return -ECANCELED; /* stop: one is enough */
	}
	return 0;
}

/* ---- attemptToDeleteItem ------------------------------------------------------------------ */
static enum gc_outcome virtual_delete(struct gc_worker *w, const struct gc_node_view *item,
                                      struct gc_result *res)
{
	if (w->api->virtual_delete)
		w->api->virtual_delete(w->api->ud, &item->id);
	res->outcome = GC_VIRTUAL_DELETE_ENQUEUED;
	snprintf(res->msg, sizeof res->msg, "enqueued virtual delete event");
	return res->outcome;
}

static enum gc_outcome finish_delete(struct gc_worker *w, const struct gc_node_view *item, int r,
                                     struct gc_result *res)
{
	if (r == -ENOENT && res->outcome == GC_OK)
		return virtual_delete(w, item, res);
	if (r < 0 && res->outcome == GC_OK)
		res_fail(res, GC_FAILED, r, "%s", errtext(r));
	return res->outcome;
}

enum gc_outcome gc_attempt_to_delete_item(struct gc_worker *w, const struct gc_node_view *item,
                                          struct gc_result *res)
{
	*res = (struct gc_result){0};
	/* being deleted is one-way: wait for the delete event, which queues the dependents */
	if (item->being_deleted && !item->deleting_dependents) {
		res->action = GC_ACT_WAIT_DELETION;
		return GC_OK;
	}
	struct kube_partial *latest = NULL;
	int r = get_object(w, &item->id, &latest, res);
	if (r == -ENOENT && res->outcome == GC_OK)
		return virtual_delete(w, item, res);
	if (r < 0) {
		if (res->outcome == GC_OK)
			res_fail(res, GC_FAILED, r, "%s", errtext(r));
		return res->outcome;
	}
	enum gc_outcome out = GC_OK;
	if (!gc_str_eq(latest->meta.uid, item->id.uid)) {
		out = virtual_delete(w, item, res);
		goto done;
	}
	if (item->deleting_dependents) {
		out = process_deleting_dependents(w, item, res);
		goto done;
	}
	const struct kube_object_meta *m = &latest->meta;
	if (m->n_owner_refs == 0) {
		res->action = GC_ACT_NO_OWNERS;
		goto done;
	}
	enum ref_class *cls = calloc(m->n_owner_refs, sizeof *cls);
	if (!cls) {
		res_fail(res, GC_FAILED, -ENOMEM, "out of memory");
		out = res->outcome;
		goto done;
	}
	for (uint32_t i = 0; i < m->n_owner_refs; i++) {
		r = is_dangling(w, &m->owner_refs[i], item, &cls[i], res);
		if (r < 0) {
			free(cls);
			out = res->outcome;
			goto done;
		}
		res->n_solid += cls[i] == REF_SOLID;
		res->n_dangling += cls[i] == REF_DANGLING;
		res->n_waiting += cls[i] == REF_WAITING;
	}
	switch (gc_decide(res->n_solid, res->n_dangling, res->n_waiting, item->n_dependents)) {
	case GC_DECIDE_NOTHING:
		res->action = GC_ACT_SOLID;
		break;
	case GC_DECIDE_REMOVE_REFS: {
		/* dangling uids first, then waiting ones, each in ownerReferences order */
		const char **uids = calloc(m->n_owner_refs, sizeof *uids);
		size_t n = 0;
		char *smp = NULL;
		if (!uids) {
			r = -ENOMEM;
		} else {
			for (uint32_t i = 0; i < m->n_owner_refs; i++)
				if (cls[i] == REF_DANGLING)
					uids[n++] = gc_s(m->owner_refs[i].uid);
			for (uint32_t i = 0; i < m->n_owner_refs; i++)
				if (cls[i] == REF_WAITING)
					uids[n++] = gc_s(m->owner_refs[i].uid);
			r = kube_encode_release_patch(item->id.uid, uids, n, &smp);
			if (r == 0)
				r = patch_item(w, item, smp, PATCH_DELETE_REFS, uids, n, res);
		}
		free(smp);
		free(uids);
		res->action = GC_ACT_REMOVE_REFS;
		if (r < 0 && res->outcome == GC_OK)
			res_fail(res, GC_FAILED, r, "%s", errtext(r));
		break;
	}
	case GC_DECIDE_DELETE_FOREGROUND_CASCADE: {
		/* cycle breaker: a dependent of ours is itself waiting for its dependents; make our
		 * references non-blocking before the Foreground delete (one patch at most) */
		bool cycle = false;
		r = w->graph->dependents(w->graph->ud, item->id.uid, any_deleting_visit, &cycle);
		if (cycle) {
			struct kube_owner_ref *blk = calloc(item->n_owners + 1, sizeof *blk);
			size_t n = 0;
			char *smp = NULL;
			r = blk ? 0 : -ENOMEM;
			for (size_t i = 0; blk && i < item->n_owners; i++)
				if (item->owners[i].block_owner_deletion == 1) {
					blk[n] = item->owners[i];
					blk[n++].block_owner_deletion = 0;
				}
			if (r == 0)
				r = kube_encode_unblock_patch(item->id.uid, blk, n, &smp);
			if (r == 0)
				r = patch_item(w, item, smp, PATCH_UNBLOCK, NULL, 0, res);
			free(smp);
			free(blk);
			if (r < 0) {
				if (res->outcome == GC_OK)
					res_fail(res, GC_FAILED, r, "%s", errtext(r));
				break;
			}
			res->unblocked = true;
		}
		res->action = GC_ACT_DELETE;
		res->policy = GC_POLICY_FOREGROUND;
		r = delete_object(w, &item->id, m->resource_version, m->owner_refs, m->n_owner_refs,
		                  res->policy, res);
		finish_delete(w, item, r, res);
		break;
	}
	case GC_DECIDE_DELETE:
		res->action = GC_ACT_DELETE;
		res->policy = gc_delete_policy(m);
		r = delete_object(w, &item->id, m->resource_version, m->owner_refs, m->n_owner_refs,
		                  res->policy, res);
		finish_delete(w, item, r, res);
		break;
	}
	free(cls);
	out = res->outcome;
done:
	kube_object_free(latest);
	return out;
}

int gc_queue_key_encode(const struct gc_ref *id, bool virtual_, size_t max_len, char *buf,
                        size_t size)
{
	int n;
	if (virtual_) {
		n = snprintf(buf, size, "v%c%s%c%s%c%s%c%s%c%s", GC_KEY_SEP, gc_s(id->api_version),
		             GC_KEY_SEP, gc_s(id->kind), GC_KEY_SEP, gc_s(id->ns), GC_KEY_SEP,
		             gc_s(id->name), GC_KEY_SEP, gc_s(id->uid));
		if (n >= 0 && (size_t)n <= max_len && (size_t)n < size)
			return n;
	}
	n = snprintf(buf, size, "%s", gc_s(id->uid));
	if (n < 0 || (size_t)n >= size || (size_t)n > max_len)
		return -ENOBUFS;
	return n;
}

int gc_queue_key_decode(const char *key, struct gc_ref *ret, bool *ret_virtual, char *scratch,
                        size_t size)
{
	if (!key || !key[0])
		return -EINVAL;
	if (!(key[0] == 'v' && key[1] == GC_KEY_SEP)) {
		*ret = (struct gc_ref){.uid = key};
		*ret_virtual = false;
		return 0;
	}
	size_t len = strlen(key);
	if (len + 1 > size)
		return -ENOBUFS;
	memcpy(scratch, key, len + 1);
	const char *f[5];
	char *p = scratch + 2;
	for (int i = 0; i < 5; i++) {
		f[i] = p;
		char *sep = strchr(p, GC_KEY_SEP);
		if (i < 4) {
			if (!sep)
				return -EINVAL;
			*sep = '\0';
			p = sep + 1;
		} else if (sep) {
			return -EINVAL;
		}
	}
	if (!f[4][0])
		return -EINVAL;
	*ret = (struct gc_ref){
	        .api_version = f[0], .kind = f[1], .ns = f[2], .name = f[3], .uid = f[4]};
	*ret_virtual = true;
	return 0;
}

int gc_queue_key_encode_absent(const char *dep_uid, const struct gc_ref *owner, size_t max_len,
                               char *buf, size_t size)
{
	int n = snprintf(buf, size, "a%c%s%c%s%c%s%c%s%c%s%c%s", GC_KEY_SEP,
	                 gc_s(owner->api_version), GC_KEY_SEP, gc_s(owner->kind), GC_KEY_SEP,
	                 gc_s(owner->ns), GC_KEY_SEP, gc_s(owner->name), GC_KEY_SEP,
	                 gc_s(owner->uid), GC_KEY_SEP, gc_s(dep_uid));
	if (n >= 0 && (size_t)n <= max_len && (size_t)n < size && gc_s(dep_uid)[0])
		return n;
	n = snprintf(buf, size, "%s", gc_s(dep_uid));
	if (n <= 0 || (size_t)n >= size || (size_t)n > max_len)
		return -ENOBUFS;
	return n;
}

int gc_queue_key_decode_absent(const char *key, struct gc_ref *owner, const char **dep_uid,
                               char *scratch, size_t size)
{
	if (!key || key[0] != 'a' || key[1] != GC_KEY_SEP)
		return -EINVAL;
	size_t len = strlen(key);
	if (len + 1 > size)
		return -ENOBUFS;
	memcpy(scratch, key, len + 1);
	const char *f[6];
	char *p = scratch + 2;
	for (int i = 0; i < 6; i++) {
		f[i] = p;
		char *sep = strchr(p, GC_KEY_SEP);
		if (i < 5) {
			if (!sep)
				return -EINVAL;
			*sep = '\0';
			p = sep + 1;
		} else if (sep) {
			return -EINVAL;
		}
	}
	if (!f[4][0] || !f[5][0])
		return -EINVAL;
	*owner = (struct gc_ref){
	        .api_version = f[0], .kind = f[1], .ns = f[2], .name = f[3], .uid = f[4]};
	*dep_uid = f[5];
	return 0;
}

enum gc_queue_action gc_attempt_to_delete_worker(struct gc_worker *w, const char *key,
                                                 struct gc_result *res)
{
	struct gc_result local;
	if (!res)
		res = &local;
	*res = (struct gc_result){0};
	char scratch[1024];
	if (key && key[0] == 'a' && key[1] == GC_KEY_SEP) {
		/* the builder removed this dependent's owner: it is absent (upstream's shared
		 * absentOwnerCache), also when its kind can no longer be mapped */
		struct gc_ref owner;
		const char *dep;
		if (gc_queue_key_decode_absent(key, &owner, &dep, scratch, sizeof scratch) < 0)
			return GC_FORGET;
		if (w->absent)
			(void)gc_absent_cache_add(w->absent, &owner);
		char uid[256]; /* dep points into scratch, which the inner call reuses */
		if (snprintf(uid, sizeof uid, "%s", dep) >= (int)sizeof uid)
			return GC_FORGET;
		return gc_attempt_to_delete_worker(w, uid, res);
	}
	struct gc_ref kid;
	bool kvirtual;
	if (gc_queue_key_decode(key, &kid, &kvirtual, scratch, sizeof scratch) < 0)
		return GC_FORGET; /* not a key this controller writes */
	struct gc_node_view item;
	bool in_graph = w->graph->node(w->graph->ud, kid.uid, &item) == 0;
	if (kvirtual) {
		/* the queued virtual copy: skip it once the uid got observed (upstream: the graph's
		 * node is observed); a view without virtual nodes (the arena) does not know it, and
		 * its identity is the one in the key */
		if (in_graph && !item.virtual_)
			return GC_FORGET;
		if (!in_graph)
			item = (struct gc_node_view){0};
		item.id = kid;
		item.virtual_ = true;
		int nd = w->graph->dependents(w->graph->ud, kid.uid, NULL, NULL);
		if (nd >= 0)
			item.n_dependents = (size_t)nd;
	} else if (!in_graph) {
		return GC_FORGET; /* left the graph: its delete was observed */
	}
	/* copy the identity: API calls below must not depend on the view's lifetime */
	struct gc_ref id;
	if (gc_ref_copy(&id, &item.id) < 0)
		return GC_REQUEUE;
	item.id = id;
	enum gc_outcome o = gc_attempt_to_delete_item(w, &item, res);
	gc_ref_clear(&id);
	switch (o) {
	case GC_VIRTUAL_DELETE_ENQUEUED:
	case GC_CLUSTER_CHILD_NS_OWNER:
		return GC_FORGET;
	case GC_REST_MAPPING:
	case GC_FAILED:
		return GC_REQUEUE;
	case GC_OK:
		break;
	}
	/* a virtual node is polled until an informer observes it or it is found absent (#56121) */
	return item.virtual_ ? GC_REQUEUE : GC_FORGET;
}

/* ---- attemptToOrphan --------------------------------------------------------------------- */
struct orphan_ctx {
	struct gc_worker *w;
	const struct gc_ref *owner;
	char errs[512];
	size_t n_errs, errs_len;
	struct gc_ref *deps; /* snapshot */
	size_t n, cap;
};

static int orphan_collect(const struct gc_node_view *dep, void *ud)
{
	struct orphan_ctx *c = ud;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 8;
		struct gc_ref *p = realloc(c->deps, cap * sizeof *p);
		if (!p)
			return -ENOMEM;
		c->deps = p;
		c->cap = cap;
	}
	/* the dependent's owners are not needed: the patch only names the owner's uid */
	if (gc_ref_copy(&c->deps[c->n], &dep->id) < 0)
		return -ENOMEM;
	c->n++;
	return 0;
}

enum gc_queue_action gc_attempt_to_orphan_worker(struct gc_worker *w, const char *uid,
                                                 struct gc_result *res)
{
	struct gc_result local;
	if (!res)
		res = &local;
	*res = (struct gc_result){0};
	struct gc_node_view ownerv;
	if (w->graph->node(w->graph->ud, uid, &ownerv) < 0)
		return GC_FORGET;
	struct gc_ref owner;
	if (gc_ref_copy(&owner, &ownerv.id) < 0)
		return GC_REQUEUE;
	struct orphan_ctx c = {.w = w, .owner = &owner};
	int r = w->graph->dependents(w->graph->ud, uid, orphan_collect, &c);
	char ident[1280];
	gc_ref_format(&owner, ident, sizeof ident);
	enum gc_queue_action act = GC_FORGET;
	if (r < 0) {
		res_fail(res, GC_FAILED, r, "%s", errtext(r));
		act = GC_REQUEUE;
		goto out;
	}
	/* orphanDependents: one SMP per dependent (uid precondition), 404 ignored */
	char agg[sizeof res->msg] = "";
	size_t n_err = 0, n_foreign = 0;
	for (size_t i = 0; i < c.n; i++) {
		const char *uids[1] = {owner.uid};
		if (!gc_shard_ns_owned(w->shard, c.deps[i].ns)) {
			n_foreign++; /* its range's owner releases it */
			continue;
		}
		char *smp = NULL;
		struct gc_result sub = {0};
		struct gc_node_view dv = {.id = c.deps[i]};
		r = kube_encode_release_patch(c.deps[i].uid, uids, 1, &smp);
		if (r == 0)
			r = patch_item(w, &dv, smp, PATCH_DELETE_REFS, uids, 1, &sub);
		free(smp);
		if (r < 0 && r != -ENOENT) {
			char did[1280];
			gc_ref_format(&c.deps[i], did, sizeof did);
			appendf(agg, sizeof agg, "%sorphaning %s failed, %s", n_err ? ", " : "",
			        did, sub.outcome != GC_OK ? sub.msg : errtext(r));
			n_err++;
		}
	}
	if (n_err) {
		/* utilerrors.NewAggregate: one error prints bare, several as [a, b] */
		res_fail(res, GC_FAILED, -EIO,
		         "failed to orphan dependents of owner %s, got errors: %s%s%s", ident,
		         n_err > 1 ? "[" : "", agg, n_err > 1 ? "]" : "");
		act = GC_REQUEUE;
		goto out;
	}
	if (!gc_shard_ns_owned(w->shard, owner.ns)) {
		res->action = GC_ACT_ORPHANED_OWN_RANGES;
		goto out;
	}
	if (n_foreign) {
		res->action = GC_ACT_ORPHAN_WAIT;
		act = GC_WAIT;
		goto out;
	}
	r = remove_finalizer(w, &owner, GC_FINALIZER_ORPHAN, res);
	if (r < 0) {
		if (res->outcome == GC_OK)
			res_fail(res, GC_FAILED, r, "%s", errtext(r));
		act = GC_REQUEUE;
		goto out;
	}
	res->action = GC_ACT_ORPHANED;
out:
	for (size_t i = 0; i < c.n; i++)
		gc_ref_clear(&c.deps[i]);
	free(c.deps);
	gc_ref_clear(&owner);
	return act;
}
