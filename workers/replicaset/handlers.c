/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/replicaset/handlers.c: informer event handlers (see handlers.h). Keys are
 * "namespace/name"; a key that does not fit the queue's limit cannot come from a valid object
 * and is dropped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shm/record-model.h"
#include "workers/replicaset/handlers.h"

#define KEY_MAX 512

static bool str_eq(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

static bool make_key(char buf[KEY_MAX], const char *ns, const char *name)
{
	int n = snprintf(buf, KEY_MAX, "%s/%s", ns ? ns : "", name ? name : "");
	return n > 0 && n < KEY_MAX;
}

static void add(const struct rs_handler_ops *ops, const char *ns, const char *name)
{
	char key[KEY_MAX];
	if (make_key(key, ns, name))
		ops->add(ops->ud, key);
}

bool rs_owner_ref_equal(const struct kube_owner_ref *a, const struct kube_owner_ref *b)
{
	if (!a || !b)
		return a == b;
	return str_eq(a->api_version, b->api_version) && str_eq(a->kind, b->kind) &&
	       str_eq(a->name, b->name) && str_eq(a->uid, b->uid) &&
	       a->controller == b->controller && a->block_owner_deletion == b->block_owner_deletion;
}

/* resolveControllerRef: the cached RS only if kind, name and uid all agree. */
static bool resolve(const struct rs_handler_ops *ops, const char *ns,
                    const struct kube_owner_ref *ref, struct rs_cached *ret)
{
	if (!ref || !str_eq(ref->kind, ops->kind))
		return false;
	struct rs_cached c;
	if (ops->get_rs(ops->ud, ns, ref->name, &c) < 0)
		return false;
	if (!str_eq(c.uid, ref->uid))
		return false;
	*ret = c;
	return true;
}

void rs_handle_rs_add(const struct rs_handler_ops *ops, const struct kube_object_meta *rs)
{
	add(ops, rs->namespace, rs->name);
}

void rs_handle_rs_delete(const struct rs_handler_ops *ops, const struct kube_object_meta *rs)
{
	char key[KEY_MAX];
	if (!make_key(key, rs->namespace, rs->name))
		return;
	rs_exp_informer_delete(ops->exp, key);
	ops->add(ops->ud, key);
}

void rs_handle_rs_update(const struct rs_handler_ops *ops, const struct kube_object_meta *old,
                         const struct kube_object_meta *cur)
{
	/* a delete and a re-create collapsed into one update: the old one's expectations go */
	if (!str_eq(old->uid, cur->uid))
		rs_handle_rs_delete(ops, old);
	/* always, also for status-only updates and resyncs */
	add(ops, cur->namespace, cur->name);
}

struct orphan_walk {
	const struct kube_pod *pod;
	char **names;
	size_t n, cap;
	bool error;
};

static int orphan_fn(void *ud, const char *name, const struct kube_label_selector *ls)
{
	struct orphan_walk *w = ud;
	/* The lister hands selectors as their records keep them, compiled and validated when
	 * stored (shm/record-model.h): an invalid one is marked, nothing is parsed per event. */
	for (uint32_t i = 0; ls && i < ls->n_match_expressions; i++)
		if (ls->match_expressions[i].op == KUBE_OP_INVALID) {
			w->error = true; /* the lister fails the whole lookup */
			return -1;
		}
	/* GetPodReplicaSets skips nil and empty selectors */
	bool m = ls && (ls->n_match_labels || ls->n_match_expressions) &&
	         shm_rec_selector_match(ls, w->pod->meta.labels, w->pod->meta.n_labels);
	if (!m)
		return 0;
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 4;
		char **nn = realloc(w->names, cap * sizeof *nn);
		if (!nn) {
			w->error = true;
			return -1;
		}
		w->names = nn;
		w->cap = cap;
	}
	if (!(w->names[w->n] = strdup(name ? name : ""))) {
		w->error = true;
		return -1;
	}
	w->n++;
	return 0;
}

/* getPodReplicaSets + enqueue each: RSes of the pod's namespace with a non-empty selector
 * matching the pod's labels; nothing when the pod has no labels or any selector in the
 * namespace is invalid (GetPodReplicaSets returns an error then). More than one match is a
 * user error upstream logs; every match is still enqueued. */
static void enqueue_orphan(const struct rs_handler_ops *ops, const struct kube_pod *pod)
{
	if (pod->meta.n_labels == 0)
		return;
	struct orphan_walk w = {.pod = pod};
	if (ops->list_rs(ops->ud, pod->meta.namespace, orphan_fn, &w) >= 0 && !w.error)
		for (size_t i = 0; i < w.n; i++)
			add(ops, pod->meta.namespace, w.names[i]);
	for (size_t i = 0; i < w.n; i++)
		free(w.names[i]);
	free(w.names);
}

void rs_handle_pod_delete(const struct rs_handler_ops *ops, const struct kube_pod *pod)
{
	const struct kube_owner_ref *ref = kube_controller_of(&pod->meta);
	if (!ref)
		return; /* nobody waits for orphan deletions */
	struct rs_cached c;
	if (!resolve(ops, pod->meta.namespace, ref, &c))
		return;
	char key[KEY_MAX], pod_key[KEY_MAX];
	if (!make_key(key, pod->meta.namespace, ref->name) ||
	    !make_key(pod_key, pod->meta.namespace, pod->meta.name))
		return;
	rs_exp_deletion_observed(ops->exp, key, pod_key);
	ops->add(ops->ud, key);
}

void rs_handle_pod_add(const struct rs_handler_ops *ops, const struct kube_pod *pod)
{
	if (pod->meta.deletion_timestamp) {
		/* a pod that shows up already being deleted: not a creation */
		rs_handle_pod_delete(ops, pod);
		return;
	}
	const struct kube_owner_ref *ref = kube_controller_of(&pod->meta);
	if (ref) {
		struct rs_cached c;
		if (!resolve(ops, pod->meta.namespace, ref, &c))
			return;
		char key[KEY_MAX];
		if (!make_key(key, pod->meta.namespace, ref->name))
			return;
		rs_exp_creation_observed(ops->exp, key);
		ops->add(ops->ud, key);
		return;
	}
	enqueue_orphan(ops, pod);
}

static bool labels_equal(const struct kube_object_meta *a, const struct kube_object_meta *b)
{
	if (a->n_labels != b->n_labels)
		return false;
	for (uint32_t i = 0; i < a->n_labels; i++) {
		const char *v = kube_labels_get(b->labels, b->n_labels, a->labels[i].key);
		if (!v || !str_eq(v, a->labels[i].value))
			return false;
	}
	return true;
}

void rs_handle_pod_update(const struct rs_handler_ops *ops, const struct kube_pod *old,
                          const struct kube_pod *cur)
{
	if (str_eq(old->meta.resource_version, cur->meta.resource_version))
		return; /* periodic resync: nothing changed */
	bool label_changed = !labels_equal(&old->meta, &cur->meta);
	if (cur->meta.deletion_timestamp) {
		/* graceful deletion seen at once, so replacements start before the pod is gone */
		rs_handle_pod_delete(ops, cur);
		if (label_changed)
			rs_handle_pod_delete(ops, old);
		return;
	}
	const struct kube_owner_ref *cur_ref = kube_controller_of(&cur->meta);
	const struct kube_owner_ref *old_ref = kube_controller_of(&old->meta);
	bool ref_changed = !rs_owner_ref_equal(cur_ref, old_ref);
	if (ref_changed && old_ref) {
		struct rs_cached c;
		if (resolve(ops, old->meta.namespace, old_ref, &c))
			add(ops, old->meta.namespace, old_ref->name);
	}
	if (cur_ref) {
		struct rs_cached c;
		if (!resolve(ops, cur->meta.namespace, cur_ref, &c))
			return;
		char key[KEY_MAX];
		if (!make_key(key, cur->meta.namespace, cur_ref->name))
			return;
		ops->add(ops->ud, key);
		/* becoming Ready: look again when it becomes available (no +1 s since 1.34) */
		if (!old->ready && cur->ready && c.min_ready_seconds > 0)
			ops->add_after(ops->ud, key, (int64_t)c.min_ready_seconds * 1000000000);
		return;
	}
	if (label_changed || ref_changed)
		enqueue_orphan(ops, cur);
}
