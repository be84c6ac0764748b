/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/garbagecollector/graph.c: the uid -> node map, and processGraphChanges (see graph.h).
 *
 * Rule sources (kubernetes v1.37.2, pkg/controller/garbagecollector):
 *   graph_builder.go  processGraphChanges, addDependentToOwners, reportInvalidNamespaceOwnerRef,
 *                     removeNode, referencesDiffs, deletionStartsWithFinalizer,
 *                     addUnblockedOwnersToDeleteQueue, processTransitions, partitionDependents,
 *                     referenceLessThan, getAlternateOwnerIdentity
 *   graph.go          node, blockingDependents
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "workers/garbagecollector/graph.h"

/* ---- the map ---------------------------------------------------------------------------- */
struct slot {
	struct slot *next;
	uint64_t hash;
	struct gc_node *node;
};

struct gc_graph {
	struct slot **buckets;
	size_t n_buckets, len;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

int gc_graph_new(struct gc_graph **ret)
{
	struct gc_graph *g = calloc(1, sizeof *g);
	if (!g)
		return -ENOMEM;
	g->n_buckets = 64;
	g->buckets = calloc(g->n_buckets, sizeof *g->buckets);
	if (!g->buckets) {
		free(g);
		return -ENOMEM;
	}
	*ret = g;
	return 0;
}

static void owners_free(struct kube_owner_ref *o, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free((void *)o[i].api_version);
		free((void *)o[i].kind);
		free((void *)o[i].name);
		free((void *)o[i].uid);
	}
	free(o);
}

static void node_free(struct gc_node *n)
{
	if (!n)
		return;
	gc_ref_clear(&n->id);
	owners_free(n->owners, n->n_owners);
	free(n->deps);
	free(n);
}

void gc_graph_free(struct gc_graph *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n_buckets; i++)
		for (struct slot *s = g->buckets[i], *n; s; s = n) {
			n = s->next;
			node_free(s->node);
			free(s);
		}
	free(g->buckets);
	free(g);
}

struct gc_node *gc_graph_get(const struct gc_graph *g, const char *uid)
{
	uint64_t h = hash_str(gc_s(uid));
	for (struct slot *s = g->buckets[h & (g->n_buckets - 1)]; s; s = s->next)
		if (s->hash == h && strcmp(s->node->id.uid, gc_s(uid)) == 0)
			return s->node;
	return NULL;
}

size_t gc_graph_len(const struct gc_graph *g)
{
	return g->len;
}

static void grow(struct gc_graph *g)
{
	size_t nb = g->n_buckets * 2;
	struct slot **b = calloc(nb, sizeof *b);
	if (!b)
		return; /* longer chains, still correct */
	for (size_t i = 0; i < g->n_buckets; i++)
		for (struct slot *s = g->buckets[i], *n; s; s = n) {
			n = s->next;
			s->next = b[s->hash & (nb - 1)];
			b[s->hash & (nb - 1)] = s;
		}
	free(g->buckets);
	g->buckets = b;
	g->n_buckets = nb;
}

/* Inserts n (its uid must not be present). */
static int graph_insert(struct gc_graph *g, struct gc_node *n)
{
	struct slot *s = malloc(sizeof *s);
	if (!s)
		return -ENOMEM;
	s->hash = hash_str(n->id.uid);
	s->node = n;
	s->next = g->buckets[s->hash & (g->n_buckets - 1)];
	g->buckets[s->hash & (g->n_buckets - 1)] = s;
	if (++g->len > g->n_buckets)
		grow(g);
	return 0;
}

/* Unlinks the node of uid from the map (the node itself is not freed). */
static void graph_unlink(struct gc_graph *g, const char *uid)
{
	uint64_t h = hash_str(uid);
	for (struct slot **pp = &g->buckets[h & (g->n_buckets - 1)]; *pp; pp = &(*pp)->next)
		if ((*pp)->hash == h && strcmp((*pp)->node->id.uid, uid) == 0) {
			struct slot *s = *pp;
			*pp = s->next;
			free(s);
			g->len--;
			return;
		}
}

/* ---- nodes ------------------------------------------------------------------------------ */
static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int owners_copy(const struct kube_owner_ref *in, size_t n, struct kube_owner_ref **ret)
{
	*ret = NULL;
	if (n == 0)
		return 0;
	struct kube_owner_ref *o = calloc(n, sizeof *o);
	if (!o)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		o[i] = in[i];
		o[i].api_version = dup_or_null(in[i].api_version);
		o[i].kind = dup_or_null(in[i].kind);
		o[i].name = dup_or_null(in[i].name);
		o[i].uid = dup_or_null(in[i].uid);
		if ((in[i].api_version && !o[i].api_version) || (in[i].kind && !o[i].kind) ||
		    (in[i].name && !o[i].name) || (in[i].uid && !o[i].uid)) {
			owners_free(o, i + 1);
			return -ENOMEM;
		}
	}
	*ret = o;
	return 0;
}

static struct gc_node *node_new(const struct gc_ref *id, const struct kube_owner_ref *owners,
                                size_t n_owners)
{
	struct gc_node *n = calloc(1, sizeof *n);
	if (!n)
		return NULL;
	if (gc_ref_copy(&n->id, id) < 0 || owners_copy(owners, n_owners, &n->owners) < 0) {
		node_free(n);
		return NULL;
	}
	n->n_owners = n_owners;
	return n;
}

static int node_set_identity(struct gc_node *n, const struct gc_ref *id)
{
	struct gc_ref copy;
	if (gc_ref_copy(&copy, id) < 0)
		return -ENOMEM;
	gc_ref_clear(&n->id);
	n->id = copy;
	return 0;
}

static int node_set_owners(struct gc_node *n, const struct kube_owner_ref *owners, size_t n_owners)
{
	struct kube_owner_ref *o;
	if (owners_copy(owners, n_owners, &o) < 0)
		return -ENOMEM;
	owners_free(n->owners, n->n_owners);
	n->owners = o;
	n->n_owners = n_owners;
	return 0;
}

static bool node_has_dep(const struct gc_node *n, const struct gc_node *d)
{
	for (size_t i = 0; i < n->n_deps; i++)
		if (n->deps[i] == d)
			return true;
	return false;
}

static int node_add_dep(struct gc_node *n, struct gc_node *d)
{
	if (node_has_dep(n, d))
		return 0;
	if (n->n_deps == n->cap_deps) {
		size_t cap = n->cap_deps ? n->cap_deps * 2 : 4;
		struct gc_node **p = realloc(n->deps, cap * sizeof *p);
		if (!p)
			return -ENOMEM;
		n->deps = p;
		n->cap_deps = cap;
	}
	n->deps[n->n_deps++] = d;
	return 0;
}

static void node_del_dep(struct gc_node *n, const struct gc_node *d)
{
	for (size_t i = 0; i < n->n_deps; i++)
		if (n->deps[i] == d) {
			n->deps[i] = n->deps[--n->n_deps];
			return;
		}
}

size_t gc_node_blocking_dependents(const struct gc_node *n, struct gc_node **out, size_t cap)
{
	size_t k = 0;
	for (size_t i = 0; i < n->n_deps; i++) {
		const struct gc_node *d = n->deps[i];
		for (size_t j = 0; j < d->n_owners; j++)
			if (gc_str_eq(d->owners[j].uid, n->id.uid) &&
			    d->owners[j].block_owner_deletion == 1) {
				if (k < cap)
					out[k] = n->deps[i];
				k++;
			}
	}
	return k;
}

size_t gc_graph_check(const struct gc_graph *g)
{
	size_t bad = 0;
	for (size_t b = 0; b < g->n_buckets; b++)
		for (const struct slot *s = g->buckets[b]; s; s = s->next) {
			const struct gc_node *n = s->node;
			for (size_t i = 0; i < n->n_deps; i++) {
				bool found = false;
				for (size_t j = 0; j < n->deps[i]->n_owners && !found; j++)
					found = gc_str_eq(n->deps[i]->owners[j].uid, n->id.uid);
				bad += !found;
			}
			for (size_t j = 0; j < n->n_owners; j++) {
				const struct gc_node *o = gc_graph_get(g, n->owners[j].uid);
				if (o && !node_has_dep(o, n))
					bad++;
			}
		}
	return bad;
}

/* ---- pure helpers ----------------------------------------------------------------------- */
struct gc_obj gc_obj_from_meta(const struct kube_object_meta *m)
{
	return (struct gc_obj){
	        .uid = m->uid,
	        .name = m->name,
	        .ns = m->namespace,
	        .owners = m->owner_refs,
	        .n_owners = m->n_owner_refs,
	        .being_deleted = m->deletion_timestamp != 0,
	        .fin_orphan = gc_has_finalizer(m, GC_FINALIZER_ORPHAN),
	        .fin_foreground = gc_has_finalizer(m, GC_FINALIZER_FOREGROUND),
	};
}

static bool obj_has_fin(const struct gc_obj *o, const char *f)
{
	return strcmp(f, GC_FINALIZER_ORPHAN) == 0 ? o->fin_orphan : o->fin_foreground;
}

bool gc_deletion_starts_with(const struct gc_obj *old, const struct gc_obj *new_, const char *f)
{
	if (!new_->being_deleted || !obj_has_fin(new_, f))
		return false;
	if (!old)
		return true;
	return !old->being_deleted || !obj_has_fin(old, f);
}

static bool owner_ref_equal(const struct kube_owner_ref *a, const struct kube_owner_ref *b)
{
	return gc_str_eq(a->api_version, b->api_version) && gc_str_eq(a->kind, b->kind) &&
	       gc_str_eq(a->name, b->name) && gc_str_eq(a->uid, b->uid) &&
	       a->controller == b->controller && a->block_owner_deletion == b->block_owner_deletion;
}

void gc_ref_diff_free(struct gc_ref_diff *d)
{
	free(d->added);
	free(d->removed);
	free(d->changed);
	*d = (struct gc_ref_diff){0};
}

int gc_references_diff(const struct kube_owner_ref *old, size_t n_old,
                       const struct kube_owner_ref *new_, size_t n_new, struct gc_ref_diff *ret)
{
	/* Upstream maps old refs by uid (the last ref of a uid wins), then walks new: a uid still
	 * in the old set is "changed" when not deep-equal and leaves the set (so a second new ref
	 * with that uid counts as added); what stays in the set is "removed". */
	struct gc_ref_diff d = {0};
	bool *pending =
	        calloc(n_old ? n_old : 1, sizeof *pending); /* old index is the last of its uid */
	d.added = calloc(n_new ? n_new : 1, sizeof *d.added);
	d.removed = calloc(n_old ? n_old : 1, sizeof *d.removed);
	d.changed = calloc(n_new ? n_new : 1, sizeof *d.changed);
	if (!pending || !d.added || !d.removed || !d.changed) {
		free(pending);
		gc_ref_diff_free(&d);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n_old; i++) {
		pending[i] = true;
		for (size_t j = i + 1; j < n_old && pending[i]; j++)
			if (gc_str_eq(old[i].uid, old[j].uid))
				pending[i] = false;
	}
	for (size_t k = 0; k < n_new; k++) {
		size_t hit = SIZE_MAX;
		for (size_t i = 0; i < n_old; i++)
			if (pending[i] && gc_str_eq(old[i].uid, new_[k].uid))
				hit = i;
		if (hit == SIZE_MAX) {
			d.added[d.n_added++] = k;
			continue;
		}
		if (!owner_ref_equal(&old[hit], &new_[k])) {
			d.changed[d.n_changed][0] = hit;
			d.changed[d.n_changed][1] = k;
			d.n_changed++;
		}
		pending[hit] = false;
	}
	for (size_t i = 0; i < n_old; i++)
		if (pending[i])
			d.removed[d.n_removed++] = i;
	free(pending);
	*ret = d;
	return 0;
}

int gc_partition_dependents(struct gc_node *const *deps, size_t n, const struct gc_ref *owner,
                            struct gc_node ***match, size_t *n_match, struct gc_node ***mismatch,
                            size_t *n_mismatch)
{
	struct gc_node **m = calloc(n ? n : 1, sizeof *m), **x = calloc(n ? n : 1, sizeof *x);
	if (!m || !x) {
		free(m);
		free(x);
		return -ENOMEM;
	}
	size_t nm = 0, nx = 0;
	bool owner_namespaced = gc_s(owner->ns)[0] != '\0';
	for (size_t i = 0; i < n; i++) {
		const struct gc_node *d = deps[i];
		bool found_match = false, found_mismatch = false;
		if (owner_namespaced && !gc_str_eq(owner->ns, d->id.ns)) {
			/* a namespaced owner in another namespace: every reference is wrong */
			found_mismatch = true;
		} else {
			for (size_t j = 0; j < d->n_owners; j++) {
				if (!gc_str_eq(d->owners[j].uid, owner->uid))
					continue;
				if (gc_ref_matches(&d->owners[j], owner))
					found_match = true;
				else
					found_mismatch = true;
			}
		}
		if (found_match)
			m[nm++] = deps[i];
		if (found_mismatch)
			x[nx++] = deps[i];
	}
	*match = m;
	*n_match = nm;
	*mismatch = x;
	*n_mismatch = nx;
	return 0;
}

bool gc_alternate_owner_identity(struct gc_node *const *deps, size_t n, const struct gc_ref *absent,
                                 struct gc_ref *ret)
{
	bool absent_cluster = gc_s(absent->ns)[0] == '\0';
	struct gc_ref first = {0}, following = {0};
	bool have_first = false, have_following = false;
	for (size_t i = 0; i < n; i++) {
		const struct gc_node *d = deps[i];
		for (size_t j = 0; j < d->n_owners; j++) {
			const struct kube_owner_ref *o = &d->owners[j];
			if (!gc_str_eq(o->uid, absent->uid))
				continue;
			/* references that are exactly the absent identity are not alternates */
			if (gc_ref_matches(o, absent) &&
			    (absent_cluster || gc_str_eq(absent->ns, d->id.ns)))
				continue;
			struct gc_ref r = gc_ref_from_owner(o, d->id.ns);
			/* this apiVersion/kind is known cluster-scoped from the absent identity */
			if (absent_cluster && gc_str_eq(r.api_version, absent->api_version) &&
			    gc_str_eq(r.kind, absent->kind))
				r.ns = "";
			/* upstream skips identities seen before; with a strict order, ties change
			 * nothing except excluding the absent identity itself */
			if (gc_ref_equal(&r, absent))
				continue;
			if (!have_first || gc_ref_cmp(&r, &first) < 0) {
				first = r;
				have_first = true;
			}
			if (gc_ref_cmp(absent, &r) < 0 &&
			    (!have_following || gc_ref_cmp(&r, &following) < 0)) {
				following = r;
				have_following = true;
			}
		}
	}
	if (have_following) {
		*ret = following;
		return true;
	}
	if (have_first) {
		*ret = first;
		return true;
	}
	return false;
}

/* ---- processGraphChanges ---------------------------------------------------------------- */
static void enqueue_delete(struct gc_builder *b, const char *uid, bool rate_limited)
{
	if (b->sink.attempt_to_delete)
		b->sink.attempt_to_delete(b->sink.ud, uid, rate_limited);
}

static void absent_add(struct gc_builder *b, const struct gc_ref *r)
{
	if (b->absent)
		(void)gc_absent_cache_add(b->absent, r); /* -ENOMEM only costs a later GET */
}

/* reportInvalidNamespaceOwnerRef */
static void report_invalid_ns(struct gc_builder *b, const struct gc_node *dep,
                              const char *owner_uid)
{
	char msg[2048];
	if (!b->sink.warning)
		return;
	if (gc_invalid_ns_message(&dep->id, dep->owners, dep->n_owners, owner_uid, msg,
	                          sizeof msg) < 0)
		return;
	b->sink.warning(b->sink.ud, &dep->id, GC_REASON_INVALID_NS, msg);
}

/* addDependentToOwners(n, owners): adds n to each owner's dependents, creating virtual owners
 * (queued for verification), and queues n once if one of its references looks invalid. */
static int add_dependent_to_owners(struct gc_builder *b, struct gc_node *n,
                                   const struct kube_owner_ref *owners, size_t n_owners)
{
	bool suspicious = false;
	int r = 0;
	for (size_t i = 0; i < n_owners; i++) {
		const struct kube_owner_ref *o = &owners[i];
		struct gc_node *owner = gc_graph_get(b->graph, o->uid);
		bool existed = owner != NULL;
		if (!owner) {
			/* a virtual owner: its identity is the reference plus the dependent's
			 * namespace, whatever the owner kind's scope (unknown here) */
			struct gc_ref id = gc_ref_from_owner(o, n->id.ns);
			owner = node_new(&id, NULL, 0);
			if (!owner)
				return -ENOMEM;
			owner->virtual_ = true;
			if (graph_insert(b->graph, owner) < 0) {
				node_free(owner);
				return -ENOMEM;
			}
			b->virtual_nodes_created++;
		}
		if (node_add_dep(owner, n) < 0)
			r = -ENOMEM;
		if (!existed) {
			enqueue_delete(b, owner->id.uid, false);
			continue;
		}
		if (suspicious)
			continue; /* only the first suspicious reference is examined */
		bool owner_namespaced = owner->id.ns[0] != '\0';
		if (owner_namespaced && !gc_str_eq(owner->id.ns, n->id.ns)) {
			/* observed namespaced owner in another namespace: definitely wrong */
			if (!owner->virtual_)
				report_invalid_ns(b, n, o->uid);
			suspicious = true;
		} else if (!gc_ref_matches(o, &owner->id)) {
			suspicious = true;
		} else if (!owner_namespaced && !gc_str_eq(owner->id.ns, n->id.ns) &&
		           owner->virtual_) {
			/* a virtual "cluster-scoped" owner guessed from a cluster-scoped child may
			 * really be a namespaced kind (issue #98040): let the worker verify the
			 * child */
			suspicious = true;
		}
	}
	if (suspicious)
		enqueue_delete(b, n->id.uid, false);
	return r;
}

static void remove_dependent_from_owners(struct gc_builder *b, struct gc_node *n,
                                         const struct kube_owner_ref *owners, const size_t *idx,
                                         size_t n_idx)
{
	for (size_t i = 0; i < n_idx; i++) {
		struct gc_node *o = gc_graph_get(b->graph, owners[idx ? idx[i] : i].uid);
		if (o)
			node_del_dep(o, n);
	}
}

/* addUnblockedOwnersToDeleteQueue */
static void add_unblocked_owners(struct gc_builder *b, const struct kube_owner_ref *old,
                                 const struct kube_owner_ref *new_, const struct gc_ref_diff *d)
{
	for (size_t i = 0; i < d->n_removed; i++) {
		const struct kube_owner_ref *r = &old[d->removed[i]];
		if (r->block_owner_deletion == 1 && gc_graph_get(b->graph, r->uid))
			enqueue_delete(b, r->uid, false);
	}
	for (size_t i = 0; i < d->n_changed; i++) {
		const struct kube_owner_ref *o = &old[d->changed[i][0]],
		                            *n = &new_[d->changed[i][1]];
		if (o->block_owner_deletion == 1 && n->block_owner_deletion != 1 &&
		    gc_graph_get(b->graph, n->uid))
			enqueue_delete(b, n->uid, false);
	}
}

/* processTransitions */
static void process_transitions(struct gc_builder *b, const struct gc_obj *old,
                                const struct gc_obj *new_, struct gc_node *n)
{
	if (gc_deletion_starts_with(old, new_, GC_FINALIZER_ORPHAN)) {
		if (b->sink.attempt_to_orphan)
			b->sink.attempt_to_orphan(b->sink.ud, n->id.uid);
		return;
	}
	if (gc_deletion_starts_with(old, new_, GC_FINALIZER_FOREGROUND)) {
		/* set here too: a node that was virtual when it started deleting never got the flag
		 */
		n->deleting_dependents = true;
		for (size_t i = 0; i < n->n_deps; i++)
			enqueue_delete(b, n->deps[i]->id.uid, false);
		enqueue_delete(b, n->id.uid, false);
	}
}

static struct gc_ref identity_from_event(const struct gc_event *ev)
{
	return (struct gc_ref){
	        .api_version = gc_s(ev->api_version),
	        .kind = gc_s(ev->kind),
	        .name = gc_s(ev->obj.name),
	        .uid = gc_s(ev->obj.uid),
	        .ns = gc_s(ev->obj.ns),
	};
}

/* The first observation of a node that was virtual: dependents that disagree with the observed
 * identity get verified (and an event when the namespace is wrong), then the node takes the
 * observed identity. */
static int observe_virtual(struct gc_builder *b, struct gc_node *n, const struct gc_ref *observed)
{
	if (!gc_ref_equal(observed, &n->id)) {
		struct gc_node **m, **x;
		size_t nm, nx;
		if (gc_partition_dependents(n->deps, n->n_deps, observed, &m, &nm, &x, &nx) < 0)
			return -ENOMEM;
		for (size_t i = 0; i < nx; i++) {
			if (observed->ns[0] && !gc_str_eq(x[i]->id.ns, observed->ns))
				report_invalid_ns(b, x[i], observed->uid);
			enqueue_delete(b, x[i]->id.uid, false);
		}
		free(m);
		free(x);
		if (node_set_identity(n, observed) < 0)
			return -ENOMEM;
	}
	n->virtual_ = false;
	return 0;
}

static int process_delete(struct gc_builder *b, const struct gc_event *ev, struct gc_node *existing)
{
	bool remove = true;
	if (ev->virtual_) {
		struct gc_ref deleted = identity_from_event(ev);
		if (existing->virtual_) {
			struct gc_node **m, **x;
			size_t nm, nx;
			if (gc_partition_dependents(existing->deps, existing->n_deps, &deleted, &m,
			                            &nm, &x, &nx) < 0)
				return -ENOMEM;
			if (nx > 0) {
				/* some dependents know this uid under other coordinates: keep the
				 * node */
				remove = false;
				if (nm > 0) {
					absent_add(b, &deleted);
					for (size_t i = 0; i < nm; i++)
						enqueue_delete(b, m[i]->id.uid, false);
				}
				struct gc_ref alt;
				if (gc_ref_equal(&existing->id, &deleted) &&
				    gc_alternate_owner_identity(x, nx, &deleted, &alt)) {
					/* copy before the identity strings it may point into change
					 */
					struct gc_ref keep;
					int r = gc_ref_copy(&keep, &alt);
					if (r == 0) {
						r = node_set_identity(existing, &keep);
						gc_ref_clear(&keep);
					}
					if (r < 0) {
						free(m);
						free(x);
						return r;
					}
					enqueue_delete(b, existing->id.uid, true);
				}
			}
			free(m);
			free(x);
		} else if (!gc_ref_equal(&existing->id, &deleted)) {
			/* a real node is never removed by a virtual delete of other coordinates;
			 * the dependents that used those coordinates are verified */
			remove = false;
			struct gc_node **m, **x;
			size_t nm, nx;
			if (gc_partition_dependents(existing->deps, existing->n_deps, &deleted, &m,
			                            &nm, &x, &nx) < 0)
				return -ENOMEM;
			if (nm > 0) {
				absent_add(b, &deleted);
				for (size_t i = 0; i < nm; i++)
					enqueue_delete(b, m[i]->id.uid, false);
			}
			free(m);
			free(x);
		}
	}
	if (!remove)
		return 0;
	/* removeNode, then: absent identity (from the event), dependents, waiting owners */
	graph_unlink(b->graph, existing->id.uid);
	remove_dependent_from_owners(b, existing, existing->owners, NULL, existing->n_owners);
	if (existing->n_deps > 0) {
		struct gc_ref id = identity_from_event(ev);
		absent_add(b, &id);
	}
	for (size_t i = 0; i < existing->n_deps; i++) {
		if (b->sink.attempt_to_delete_absent_owner) {
			struct gc_ref id = identity_from_event(ev);
			b->sink.attempt_to_delete_absent_owner(b->sink.ud,
			                                       existing->deps[i]->id.uid, &id);
		} else {
			enqueue_delete(b, existing->deps[i]->id.uid, false);
		}
	}
	for (size_t i = 0; i < existing->n_owners; i++) {
		struct gc_node *o = gc_graph_get(b->graph, existing->owners[i].uid);
		if (o && o->deleting_dependents)
			enqueue_delete(b, o->id.uid, false);
	}
	/* The dependents still name this uid in their owners; they are not touched (upstream
	 * leaves them too) and a later virtual node for the uid may collect them again. */
	node_free(existing);
	return 0;
}

int gc_builder_process(struct gc_builder *b, const struct gc_event *ev)
{
	if (!ev->obj.uid || !ev->obj.uid[0])
		return -EINVAL;
	b->events++;
	struct gc_node *existing = gc_graph_get(b->graph, ev->obj.uid);
	if (existing && !ev->virtual_ && existing->virtual_) {
		struct gc_ref observed = identity_from_event(ev);
		int r = observe_virtual(b, existing, &observed);
		if (r < 0)
			return r;
	}
	switch (ev->type) {
	case GC_EVENT_ADD:
	case GC_EVENT_UPDATE:
		if (!existing) {
			struct gc_ref id = identity_from_event(ev);
			struct gc_node *n = node_new(&id, ev->obj.owners, ev->obj.n_owners);
			if (!n)
				return -ENOMEM;
			n->being_deleted = ev->obj.being_deleted;
			n->deleting_dependents = ev->obj.being_deleted && ev->obj.fin_foreground;
			if (graph_insert(b->graph, n) < 0) {
				node_free(n);
				return -ENOMEM;
			}
			int r = add_dependent_to_owners(b, n, n->owners, n->n_owners);
			/* a create and a delete may arrive merged into one event */
			process_transitions(b, ev->old, &ev->obj, n);
			return r;
		} else {
			struct gc_ref_diff d;
			int r = gc_references_diff(existing->owners, existing->n_owners,
			                           ev->obj.owners, ev->obj.n_owners, &d);
			if (r < 0)
				return r;
			if (d.n_added || d.n_removed || d.n_changed) {
				add_unblocked_owners(b, existing->owners, ev->obj.owners, &d);
				/* keep the old refs until the removed owners are unlinked */
				struct kube_owner_ref *old = existing->owners;
				size_t n_old = existing->n_owners;
				existing->owners = NULL;
				existing->n_owners = 0;
				r = node_set_owners(existing, ev->obj.owners, ev->obj.n_owners);
				if (r < 0) {
					existing->owners = old;
					existing->n_owners = n_old;
					gc_ref_diff_free(&d);
					return r;
				}
				struct kube_owner_ref *added =
				        calloc(d.n_added ? d.n_added : 1, sizeof *added);
				if (!added) {
					r = -ENOMEM;
				} else {
					for (size_t i = 0; i < d.n_added; i++)
						added[i] = existing->owners[d.added[i]];
					r = add_dependent_to_owners(b, existing, added, d.n_added);
					free(added);
				}
				remove_dependent_from_owners(b, existing, old, d.removed,
				                             d.n_removed);
				owners_free(old, n_old);
			}
			gc_ref_diff_free(&d);
			if (ev->obj.being_deleted)
				existing->being_deleted = true;
			process_transitions(b, ev->old, &ev->obj, existing);
			return r;
		}
	case GC_EVENT_DELETE:
		if (!existing) {
			b->ignored_deletes++;
			return 0;
		}
		return process_delete(b, ev, existing);
	}
	return -EINVAL;
}
