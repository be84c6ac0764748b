/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/garbagecollector/shard.c: the garbage collector's range decisions (see shard.h).
 */
#include <errno.h>

#include "kube/shard.h"
#include "workers/garbagecollector/shard.h"
#include "workers/garbagecollector/worker.h"

static bool off(const struct gc_shard *s)
{
	return !s || s->nranges == 0 || !s->owned;
}

bool gc_shard_ns_owned(const struct gc_shard *s, const char *ns)
{
	if (off(s))
		return true;
	return s->owned(s->ud, kube_shard_range_of_ns(gc_s(ns), s->nranges));
}

static int owned_dep_visit(const struct gc_node_view *dep, void *ud)
{
	const struct gc_shard *s = ud;
	return gc_shard_ns_owned(s, dep->id.ns) ? -ECANCELED : 0; /* stop at the first one */
}

bool gc_shard_takes_with_dependents(const struct gc_shard *s, const struct gc_graph_view *g,
                                    const struct gc_ref *id)
{
	if (off(s) || gc_shard_ns_owned(s, id->ns))
		return true;
	return g && g->dependents(g->ud, id->uid, owned_dep_visit, (void *)s) == -ECANCELED;
}

bool gc_shard_takes_key(const struct gc_shard *s, const struct gc_graph_view *g, size_t queue,
                        const char *key)
{
	char scratch[1024];
	struct gc_ref kid, owner;
	struct gc_node_view n;
	const char *dep;
	bool virt;

	if (off(s))
		return true;
	if (queue == 0 &&
	    gc_queue_key_decode_absent(key, &owner, &dep, scratch, sizeof scratch) == 0)
		return g->node(g->ud, dep, &n) < 0 || gc_shard_ns_owned(s, n.id.ns);
	if (gc_queue_key_decode(key, &kid, &virt, scratch, sizeof scratch) < 0)
		return true; /* not a key of this controller: the worker forgets it */
	bool in_graph = g->node(g->ud, kid.uid, &n) == 0;
	if (virt && !(in_graph && !n.virtual_))
		return gc_shard_takes_with_dependents(s, g, &kid);
	if (!in_graph)
		return true;
	if (queue == 1 || n.virtual_) {
		struct gc_ref id = n.id; /* the view's strings stay valid until the graph changes */
		return gc_shard_takes_with_dependents(s, g, &id);
	}
	return gc_shard_ns_owned(s, n.id.ns);
}

bool gc_shard_takes_event(const struct gc_shard *s, const struct gc_ref *involved)
{
	const char *ns = gc_s(involved->ns);
	return gc_shard_ns_owned(s, ns[0] ? ns : "default");
}

bool gc_shard_barrier_open(struct gc_shard_barrier *b, uint64_t gen, uint64_t now_usec,
                           bool (*synced)(void *ud), void *ud, bool *timed_out)
{
	if (timed_out)
		*timed_out = false;
	if (atomic_load_explicit(&b->gen, memory_order_acquire) == gen)
		return true;
	if (!synced(ud)) {
		if (atomic_load_explicit(&b->closed_gen, memory_order_acquire) != gen) {
			atomic_store_explicit(&b->closed_since, now_usec, memory_order_relaxed);
			atomic_store_explicit(&b->closed_gen, gen, memory_order_release);
			return false;
		}
		uint64_t since = atomic_load_explicit(&b->closed_since, memory_order_relaxed);
		if (now_usec < since || now_usec - since < GC_SHARD_BARRIER_TIMEOUT_USEC)
			return false;
		/* one lane reports the timeout: the one that moves gen */
		uint64_t seen = atomic_load_explicit(&b->gen, memory_order_acquire);
		if (seen != gen &&
		    atomic_compare_exchange_strong_explicit(
		            &b->gen, &seen, gen, memory_order_acq_rel, memory_order_acquire) &&
		    timed_out)
			*timed_out = true;
		return true;
	}
	atomic_store_explicit(&b->gen, gen, memory_order_release);
	return true;
}
