/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/dispatcher.c: `kcmd-dispatcher --controller=<name>`, one controller's event handlers in
 * a process of their own (the informer side of client-go's shared informer, per controller).
 *
 * informerd writes the arena and then publishes every change to the change feed (shm/feed.h); it
 * links no controller code. This process consumes the feed at its own pace, turns each entry
 * into the inf_event the controller's handler table expects (lib/handlers.h: the object
 * decoded from the record, the previous version, tombstone and relist flags), runs the handlers,
 * and owns the controller's work queues (its workers attach to them as clients). A fault in one
 * controller's handlers kills this process only: the cache and every other controller go on, and
 * the manager restarts it.
 *
 * Start-up: open the feed as the durable consumer "dispatcher/<controller>" (shm/feed.h F8):
 * at the position the previous process of this controller committed, when the ring still holds
 * it, else at its end; queue again the keys a delete left in each queue's journal
 * (ipc/journal.h); register the table, which resyncs from the arena (re-adds every key the
 * controller owns, as after any queue-owner restart); then hand the handlers the DELETE entries
 * the previous process had not handled (a deleted object is not in the arena), and go on from
 * there. Entries published meanwhile are delivered after, and the handlers tolerate seeing a
 * change twice (as after an informerd warm restart). After each entry's handlers ran the
 * position is committed; while a DELETE entry's handlers run, the keys they add are durable. A
 * dispatcher that falls behind the feed's ring (-ESTALE), or that sees informerd restart (a new
 * feed writer incarnation: the old writer may have died between an arena write and its
 * publication), starts its handlers again from the arena in place (resync_from_arena, after the
 * DELETE entries it had not read), which is what a client-go relist does.
 *
 * Started by the manager with the environment contract of docs/architecture.md: KCMD_ARENA_FD
 * (read-only), KCMD_FEED_FD (the ring mapped read-only; only this
 * process's position slot is written, shm/feed.h F7), KCMD_QUEUE_FDS (its controller's queues), the
 * fds the controller exported to its dispatcher, KCMD_PROCESS. SIGTERM: exit 0.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/childenv.h"
#include "controllers/registry.h"
#include "lib/handlers.h"
#include "ipc/loop.h"
#include "ipc/queue.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/fence.h"
#include "lib/ctlmetrics.h"
#include "lib/evrec.h"
#include "lib/fence-env.h"
#include "lib/kube-loop.h"
#include "lib/log.h"
#include "shm/arena.h"
#include "shm/feed-test.h"
#include "shm/feed.h"
#include "shm/record-model.h"
#include "workers/cachewait.h"
#include "workers/zygote.h"

#define BATCH          256 /* entries handled per loop turn before the loop looks at anything else */
#define TERM_POLL_USEC 250000 /* how often the leadership fence is read for a new term */
/* a controller that shards itself waits this long at most for the caches of a range acquisition
 * before its replay (the same as the garbage collector's own barrier period, upstream's 30 s) */
#define SHARD_SELF_REPLAY_TIMEOUT_USEC 30000000ull

struct dsp;

struct dq { /* a queue this process owns */
	const char *name;
	struct ipc_queue_owner *owner;
	bool restarted;
	struct dsp *x;
	uint64_t dropped; /* keys of ranges not owned (--shard-ranges) */
};

struct consumed { /* a queue its workers produce on and its handlers consume */
	struct dsp *x;
	size_t index;
	struct ipc_queue *q;
};

struct dsp {
	const struct kcmd_controller *c;
	struct ipc_loop *loop;
	struct kube_config *kcfg;
	struct kube_client *kc;
	struct kube_loop *kl;
	struct shm_arena *arena;
	struct shm_feed *feed;
	struct ipc_source *feed_src, *more, *sig_term, *sig_int, *term_timer;
	bool leading; /* the fence allowed writes at the last look (a new term: false -> true) */
	struct inf_dispatch *d;
	size_t table;
	struct dq *queues;
	size_t n_queues;
	struct consumed *consumed;
	size_t n_consumed;
	struct inf_resource **types; /* by arena type id; owned */
	size_t n_types;
	char host[256];
	uint64_t handled;
	uint64_t wakes; /* feed futex waits completed (shm/feed.h F9: the wakes of its classes) */
	uint64_t incarnation; /* the feed writer's incarnation the handlers' state follows (0: none
	                         yet) */
	struct ipc_queue_owner **owners; /* the table's queues, in its order */
	size_t n_owners;
	uint64_t resyncs;
	uint64_t shard_gen;              /* the fence's range generation last replayed for (F8) */
	enum kube_shard_keys shard_keys; /* how its keys name a namespace (--shard-ranges) */
	bool shard_self; /* its handlers decide which keys are this instance's (the GC) */
	/* shard_self: the replay of a range generation move waits for the relist of its epoch
	 * (every arena type synced), so the seed judges the transitions on a full graph */
	bool replay_pending;
	uint64_t replay_wait_since, replay_logged;
	bool deletes_only; /* catching up: only DELETE entries before skip_before reach the
	                      handlers (the arena read after or before them holds the others) */
	uint64_t skip_before;
	bool resumed;      /* the feed resumed where the previous process stopped (F8) */
	uint64_t replayed; /* DELETE entries handled while catching up */
};

static const struct inf_resource *type_of(struct dsp *x, uint16_t type);
static void free_type(struct inf_resource *r);
static int catch_up_deletes(struct dsp *x, const char *why, uint64_t bound);

/* The handlers start again from the arena, in this process: first the feed's position moves
 * to its end (nothing published from then on is missed), then a new table state is seeded from
 * the arena and every key re-added (the table's resync), as a client-go relist does. The queues
 * and their owners stay. */
static int resync_from_arena(struct dsp *x)
{
	uint64_t next;
	struct shm_stats ast;
	int r;

	struct shm_feed_stats fst;
	/* everything up to the end: the arena is read after it (a lap: nothing to catch up) */
	(void)catch_up_deletes(x, "resync",
	                       shm_feed_stats(x->feed, &fst) == 0 ? fst.last_seq + 1 : 0);
	if ((r = shm_feed_seek_end(x->feed, &next)) < 0)
		return r;
	x->d = inf_dispatch_free(x->d); /* the table's fini frees its state */
	for (size_t i = 0; i < x->n_types; i++)
		free_type(x->types[i]);
	free(x->types);
	x->types = NULL;
	x->n_types = 0;
	if ((r = inf_dispatch_new(&x->d)) < 0)
		return r;
	inf_dispatch_set_host(x->d, x->loop, x->kc, x->host);
	if (shm_reader_stats(x->arena, &ast) == 0)
		for (uint64_t i = 0; i < ast.n_types; i++)
			(void)type_of(x, (uint16_t)i);
	if ((r = inf_dispatch_register(x->d, x->c->handlers, x->owners, x->n_owners, x->arena)) < 0)
		return r;
	x->table = (size_t)r;
	for (size_t k = 0; k < x->n_owners; k++)
		inf_dispatch_resync(x->d, x->table, k, true);
	x->resyncs++;
	return 0;
}

static void free_type(struct inf_resource *r)
{
	if (!r)
		return;
	free((char *)r->group);
	free((char *)r->version);
	free((char *)r->resource);
	free((char *)r->kind);
	free(r);
}

/* The dispatcher learns the arena's types as informerd registers them. */
static const struct inf_resource *type_of(struct dsp *x, uint16_t type)
{
	struct shm_type_info ti;

	if (type < x->n_types && x->types[type])
		return x->types[type];
	if (shm_reader_type_info(x->arena, type, &ti) < 0)
		return NULL;
	if (type >= x->n_types) {
		struct inf_resource **nt = realloc(x->types, ((size_t)type + 1) * sizeof(*nt));
		if (!nt)
			return NULL;
		memset(nt + x->n_types, 0, ((size_t)type + 1 - x->n_types) * sizeof(*nt));
		x->types = nt;
		x->n_types = (size_t)type + 1;
	}
	struct inf_resource *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->group = strdup(ti.group);
	r->version = strdup(ti.version);
	r->resource = strdup(ti.resource);
	r->kind = strdup(ti.kind);
	r->record_kind = ti.record_kind;
	r->namespaced = true; /* handlers read the namespace from each object */
	if (!r->group || !r->version || !r->resource || !r->kind ||
	    inf_dispatch_add_type(x->d, type, r) < 0) {
		free_type(r);
		return NULL;
	}
	x->types[type] = r;
	return r;
}

/* One feed entry -> the handlers. */
static int on_entry(const struct shm_feed_event *fe, void *ud)
{
	struct dsp *x = ud;
	const struct inf_resource *res = type_of(x, fe->type);
	struct inf_event ev = {
	        .type = fe->type,
	        .res = res,
	        .old = fe->old_obj,
	        .tombstone = fe->flags & SHM_FEED_TOMBSTONE,
	        .from_relist = fe->flags & SHM_FEED_RELIST,
	        .dropped = fe->flags & SHM_FEED_DROPPED,
	};
	struct shm_obj copy = SHM_OBJ_INIT, old = SHM_OBJ_INIT;
	struct shm_pod_view pod;
	struct shm_rs_view rs;
	struct shm_meta_view meta;
	struct shm_object_view whole;
	int r = 0, which = 0;

	if (!res) {
		log_v(2, "feed entry %llu: unknown type %u", (unsigned long long)fe->seq, fe->type);
		return 0;
	}
	if (x->deletes_only && fe->op != SHM_FEED_DELETE && (int64_t)(fe->seq - x->skip_before) < 0)
		return 0; /* in the arena the resync reads (F5: the arena before the entry) */
	if (!inf_dispatch_handles(x->d, fe->type))
		return 0; /* another controller's type: no handler to decode it for */
	switch (fe->op) {
	case SHM_FEED_ADD:
		ev.kind = INF_EVENT_ADD;
		break;
	case SHM_FEED_UPDATE:
		ev.kind = INF_EVENT_UPDATE;
		break;
	default:
		ev.kind = INF_EVENT_DELETE; /* obj NULL: handlers use the last known state (old) */
		break;
	}
	/* handlers copy `old` out as a record copy (shm_obj_dup): hand them an owned one */
	if (fe->old_obj) {
		if ((r = shm_obj_clone(fe->old_obj, &old)) < 0)
			goto out;
		ev.old = &old;
	}
	if (ev.kind != INF_EVENT_DELETE && fe->new_obj) {
		/* the handlers see the object as the arena holds it, the same view as for `old`;
		 * the views point into the event's memory (valid for this call), never freed here
		 */
		copy = *fe->new_obj;
		copy.mem_ = NULL;
		copy.cap_ = 0;
		switch (fe->new_obj->kind) {
		case SHM_RECORD_POD:
			which = 1;
			if ((r = shm_pod_view_init(&copy, &pod)) == 0) {
				ev.obj = &pod.pod;
				ev.meta = &pod.pod.meta;
			}
			break;
		case SHM_RECORD_REPLICASET:
			which = 2;
			if ((r = shm_rs_view_init(&copy, &rs)) == 0) {
				ev.obj = &rs.rs;
				ev.meta = &rs.rs.meta;
			}
			break;
		case SHM_RECORD_OBJECT: /* the whole object: kcmd_event_json, kcmd_meta_annotation
		                         */
			which = 4;
			if ((r = shm_object_view_init(&copy, &whole)) == 0) {
				ev.obj = &whole.o;
				ev.meta = &whole.o.meta;
			}
			break;
		default:
			which = 3;
			if ((r = shm_meta_view_init(&copy, &meta)) == 0) {
				meta.p.kind = res->kind;
				ev.obj = &meta.p;
				ev.meta = &meta.p.meta;
			}
			break;
		}
		if (r < 0)
			goto out;
	}
	/* a key a delete event adds names an object the arena no longer holds: no resync can
	 * find it again, so it is durable until its work is done (ipc/journal.h) */
	if (ev.kind == INF_EVENT_DELETE)
		for (size_t i = 0; i < x->n_queues; i++)
			ipc_queue_owner_set_durable(x->queues[i].owner, true);
	inf_dispatch_event(x->d, &ev);
	if (ev.kind == INF_EVENT_DELETE)
		for (size_t i = 0; i < x->n_queues; i++)
			ipc_queue_owner_set_durable(x->queues[i].owner, false);
	x->handled++;
	if (x->deletes_only)
		x->replayed++;
out:
	if (r < 0)
		log_warning("feed entry %llu (%s): cannot read the record: %s",
		            (unsigned long long)fe->seq, res->resource, strerror(-r));
	if (which == 1)
		shm_pod_view_free(&pod);
	else if (which == 2)
		shm_rs_view_free(&rs);
	else if (which == 3)
		shm_meta_view_free(&meta);
	else if (which == 4)
		shm_object_view_free(&whole);
	shm_obj_release(&copy);
	shm_obj_release(&old);
	return 0;
}

/* The feed's type filter (shm/feed.h F9): an entry of a type no handler of this table is bound to
 * is stepped over, not copied or decoded. The type is learnt first (type_of binds the table's
 * handlers to a type the arena registered since), so a new type is never filtered out. */
static bool want_type(uint16_t type, void *ud)
{
	struct dsp *x = ud;

	return type_of(x, type) && inf_dispatch_handles(x->d, type);
}

/* One entry, then the commit (shm/feed.h F8): a process that dies after this resumes after it. */
static int on_entry_commit(const struct shm_feed_event *fe, void *ud)
{
	struct dsp *x = ud;
	int r = on_entry(fe, ud);
	shm_feed_commit(x->feed);
	return r;
}

/* Around a resync from the arena: the DELETE entries not handled yet, since a deleted object is
 * not in the arena for the resync to find. ADD and UPDATE entries before seq `bound` are skipped:
 * the resync's arena holds their changes (taken after the last entry before bound was published,
 * F5); later ones reach the handlers whole. Returns 0, or -ESTALE when the ring no longer holds
 * them (they may be lost: said loudly). */
static int catch_up_deletes(struct dsp *x, const char *why, uint64_t bound)
{
	uint64_t before = x->replayed;
	int n;

	x->skip_before = bound;
	x->deletes_only = true;
	while ((n = shm_feed_drain(x->feed, BATCH, on_entry_commit, x)) > 0)
		;
	if (n == 0)
		shm_feed_commit(x->feed); /* the entries the type filter stepped over (F9) */
	x->deletes_only = false;
	if (n == -ESTALE)
		log_error("%s: the change feed no longer holds the entries this dispatcher had not "
		          "handled: a delete among them reaches no handler (a lapped ring; "
		          "docs/reliability.md)",
		          why);
	else if (n < 0)
		log_error("%s: change feed: %s", why, strerror(-n));
	else if (x->replayed > before)
		log_info("%s: %llu delete event%s not handled yet, handled now", why,
		         (unsigned long long)(x->replayed - before),
		         x->replayed - before == 1 ? "" : "s");
	return n < 0 ? n : 0;
}

/* Drains up to BATCH entries; re-arms the futex wait or continues in the post source. */
static void drain(struct dsp *x)
{
	uint32_t tok = shm_feed_wait_token(x->feed);
	struct shm_feed_stats st;
	int n;

	/* A restarted informerd (a new writer incarnation) may have died between an arena write
	 * and its publication: that change is in the arena but never in the feed. Start again from
	 * the arena, as informerd's own restart did when the handlers lived there. */
	if (shm_feed_stats(x->feed, &st) == 0 && st.incarnation != x->incarnation) {
		uint64_t was = x->incarnation;
		x->incarnation =
		        st.incarnation; /* the first writer opened after this process started */
		if (was) {
			log_info("informerd restarted (change feed incarnation %llu -> %llu): "
			         "resyncing from the arena",
			         (unsigned long long)was, (unsigned long long)st.incarnation);
			if ((n = resync_from_arena(x)) < 0) {
				log_error("resync from the arena: %s", strerror(-n));
				ipc_loop_exit(x->loop, 1);
				return;
			}
		}
	}
	n = shm_feed_drain(x->feed, BATCH, on_entry_commit, x);
	if (n >= 0)
		shm_feed_commit(x->feed); /* the entries the type filter stepped over (F9) */

	if (n == -ESTALE) {
		log_warning("fell behind the change feed (its ring was overwritten): resyncing "
		            "from the arena");
		if ((n = resync_from_arena(x)) < 0) {
			log_error("resync from the arena: %s", strerror(-n));
			ipc_loop_exit(x->loop, 1);
			return;
		}
		ipc_source_post_enable(x->more);
		return;
	}
	if (n < 0) {
		log_error("change feed: %s", strerror(-n));
		ipc_loop_exit(x->loop, 1);
		return;
	}
	if (shm_feed_pending(x->feed) > 0) {
		ipc_source_post_enable(x->more);
		return;
	}
	/* A wait already armed stands: it completes on the next publication, or at once if the
	 * word moved after it was armed. Arming again would fail with -EBUSY, and falling back to
	 * the post source then would poll the loop for ever (each idle dispatcher burnt ~20 % of a
	 * core that way). */
	if (ipc_source_futex_armed(x->feed_src))
		return;
	if (ipc_source_futex_arm(x->feed_src, tok) < 0)
		ipc_source_post_enable(x->more); /* cannot sleep on it: poll on the next turn */
}

static int on_feed(struct ipc_source *s, int res, void *ud)
{
	struct dsp *x = ud;

	(void)s;
	(void)res;
	x->wakes++;
	drain(x);
	return 0;
}

/* shm/feed.h F9: the wake classes of the resources the table's entries name ("*": every one).
 * The feed still delivers every entry; this only decides which batches end the futex wait. */
static uint32_t interest_of(const struct inf_handler_table *t)
{
	uint32_t m = 0;

	for (size_t i = 0; i < t->n_entries; i++)
		m |= shm_feed_wake_bit(t->entries[i].resource);
	return m ? m : SHM_FEED_WAKE_CONTROL; /* no entry: only what every consumer sees */
}

static int on_more(struct ipc_source *s, uint64_t now, void *ud)
{
	(void)s;
	(void)now;
	drain(ud);
	return 0;
}

static void on_consumed_key(struct ipc_queue *q, void *ud)
{
	struct consumed *c = ud;
	struct dsp *x = c->x;
	struct inf_handler_ctx *ctx = inf_dispatch_ctx(x->d, x->table);
	char key[IPC_QUEUE_KEY_MAX + 1];
	int n;

	while ((n = ipc_queue_get(q, key, sizeof(key), 0)) >= 0) {
		int r = ctx && x->c->handlers->on_key ? x->c->handlers->on_key(ctx, c->index, key)
		                                      : -ENOENT;
		if (r < 0)
			log_v(2, "%s: %s: %s", x->c->handlers->consumes[c->index], key,
			      strerror(-r));
		ipc_queue_done(q, IPC_QUEUE_DONE_FORGET, 0);
	}
	if (n != -ESHUTDOWN && ipc_queue_watch(q, x->loop, on_consumed_key, c) < 0)
		log_error("%s: cannot wait for keys", x->c->handlers->consumes[c->index]);
}

/* Parked keys (ipc/queue.h): loud, counted (kcmd_workqueue_parked_keys), listed by kcmctl. */
static void on_parked(struct ipc_queue_owner *o, const char *key, uint32_t crashes,
                      uint64_t retry_usec, void *ud)
{
	struct dq *q = ud;

	(void)o;
	log_error("queue %s: key %s parked: %u worker crashes in a row on it; it is tried again "
	          "on its next change, at a new leadership term, or in %.0f s (kcmctl queues)",
	          q->name, key, crashes, (double)retry_usec / 1e6);
}

/* Workers the manager killed (the fence deadline passed, or the stop grace ended: the manager
 * publishes 0 before it kills) did not crash on their keys. */
static bool on_death_expected(struct ipc_queue_owner *o, void *ud)
{
	const struct kube_fence *f = kcmd_fence();

	(void)o;
	(void)ud;
	return f && !kube_fence_allows(f, ipc_now_usec());
}

/* A new leadership term starts clean: nothing parked, no crash counted. */
static int on_term_timer(struct ipc_source *s, uint64_t now, void *ud)
{
	struct dsp *x = ud;
	const struct kube_fence *f = kcmd_fence();
	bool leading = f && kube_fence_allows(f, ipc_now_usec());

	if (f && leading && !x->leading)
		for (size_t i = 0; i < x->n_queues; i++) {
			size_t n = ipc_queue_owner_unpark_all(x->queues[i].owner);
			if (n)
				log_info("queue %s: new leadership term: %zu parked key%s tried "
				         "again",
				         x->queues[i].name, n, n == 1 ? "" : "s");
		}
	x->leading = leading;
	/* a range was acquired (kube/fence.h F8): replay the arena so its objects' keys, dropped
	 * while another instance owned it, are queued here now (no key lost on a hand-over) */
	uint64_t gen = kcmd_shard_gen();
	if (kcmd_shard_ranges() && gen != x->shard_gen) {
		x->shard_gen = gen;
		x->replay_pending = true;
		x->replay_wait_since = now;
	}
	/* A controller that shards itself (the GC) reads the whole arena in its handlers: its
	 * seed's third pass and the keys it queues for the new range are only right once the
	 * range's objects are in (kube/fence.h F9: the relist of the acquisition's epoch). The
	 * others replay at once: their workers' shard_gate holds the keys until then. */
	char why[256];
	if (x->replay_pending && x->shard_self &&
	    wk_cachewait_arena_pending(x->arena, why, sizeof(why)) > 0) {
		/* a type that never syncs at the epoch does not hold the replay for ever: after the
		 * GC's own barrier period (upstream's 30 s initial sync timeout) it goes ahead */
		if (now - x->replay_wait_since >= SHARD_SELF_REPLAY_TIMEOUT_USEC) {
			log_warning(
			        "shard: a range was acquired (generation %llu): not every cache "
			        "synced within %.0f s, replaying anyway (%s)",
			        (unsigned long long)gen,
			        (double)SHARD_SELF_REPLAY_TIMEOUT_USEC / 1e6, why);
			goto replay;
		}
		if (now - x->replay_logged >= 10000000ull) {
			x->replay_logged = now;
			log_info("shard: a range was acquired (generation %llu): the replay waits "
			         "for the caches of the epoch (%s; %.1f s)",
			         (unsigned long long)gen, why,
			         (double)(now - x->replay_wait_since) / 1e6);
		}
		ipc_source_set_time(s, now + TERM_POLL_USEC);
		return 0;
	}
replay:
	if (x->replay_pending) {
		int r;
		x->replay_pending = false;
		log_info("shard: a range was acquired (generation %llu): replaying the arena",
		         (unsigned long long)gen);
		if ((r = resync_from_arena(x)) < 0) {
			log_error("resync from the arena: %s", strerror(-r));
			ipc_loop_exit(x->loop, 1);
			return 0;
		}
		ipc_source_post_enable(x->more);
	}
	ipc_source_set_time(s, now + TERM_POLL_USEC);
	return 0;
}

/* --shard-ranges: a key of a range this instance does not own is not queued (docs/sharding.md);
 * its owner's dispatcher queues it. */
static bool on_accept(const char *key, void *ud)
{
	struct dq *q = ud;

	if (kcmd_shard_key_owned(q->x->shard_keys, key))
		return true;
	q->dropped++;
	return false;
}

static void on_owner_resync(struct ipc_queue_owner *o, bool restarted, void *ud)
{
	struct dq *q = ud;

	(void)o;
	q->restarted = restarted;
}

static int on_signal(struct ipc_source *s, const struct signalfd_siginfo *si, void *ud)
{
	struct dsp *x = ud;

	(void)s;
	log_info("signal %u: exiting after %llu events, %llu change feed wake-ups", si->ssi_signo,
	         (unsigned long long)x->handled, (unsigned long long)x->wakes);
	ipc_loop_exit(x->loop, 0);
	return 0;
}

static int setup(struct dsp *x, const char *kubeconfig, const char *master, double qps, int burst)
{
	const struct inf_handler_table *t = x->c->handlers;
	char err[512];
	int r, fd;

	if ((r = ipc_loop_new(&x->loop, IPC_LOOP_BACKEND_AUTO)) < 0) {
		log_error("event loop: %s", strerror(-r));
		return r;
	}
	fd = kcmd_env_fd("KCMD_ARENA_FD");
	if (fd < 0 || (r = shm_reader_open(fd, &x->arena)) < 0) {
		log_error("KCMD_ARENA_FD: no usable arena (%s)", fd < 0 ? "not set" : strerror(-r));
		return -EINVAL;
	}
	/* KCMD_TEST_NO_RESUME=1: start at the feed's end as if nothing were committed (a test
	 * seam: the negative control of TestServiceAccountToken_DispatcherKilledBeforeDelete) */
	if (getenv("KCMD_TEST_NO_RESUME") && !strcmp(getenv("KCMD_TEST_NO_RESUME"), "1")) {
		shm_feed__test_flags |= SHM_FEED_TEST_NO_RESUME;
		log_warning("KCMD_TEST_NO_RESUME=1: the change feed is not resumed after a restart "
		            "(a test seam; never in production)");
	}
	fd = kcmd_env_fd("KCMD_FEED_FD");
	char fname[160];
	snprintf(fname, sizeof(fname), "dispatcher/%s", x->c->name);
	if (fd < 0 || (r = shm_feed_consumer_open(fd, fname, &x->feed, &x->resumed)) < 0) {
		log_error("KCMD_FEED_FD: no usable change feed (%s)",
		          fd < 0 ? "not set" : strerror(-r));
		return -EINVAL;
	}
	struct shm_feed_stats st;
	if (shm_feed_stats(x->feed, &st) == 0)
		x->incarnation = st.incarnation;
	/* the client handlers post through (Events), on this loop, never blocking */
	struct kube_config_opts co = {.kubeconfig = kubeconfig, .master = master};
	if (kube_config_load(&co, &x->kcfg, err, sizeof(err)) < 0) {
		log_error("kubeconfig: %s", err);
		return -EINVAL;
	}
	struct kube_client_opts ko = {.config = x->kcfg,
	                              .process = "dispatcher",
	                              .controller = x->c->name,
	                              .qps = qps,
	                              .burst = burst,
	                              .insecure_ok = true};
	if ((r = kube_client_new(&ko, &x->kc)) < 0 ||
	    (r = kube_loop_attach(x->loop, x->kc, &x->kl)) < 0) {
		log_error("API client: %s", strerror(-r));
		return r;
	}
	/* the handlers' Events (the GC's, disruption's Warnings) go through the correlator and a
	 * sink thread, never blocking this loop (lib/evrec.h) */
	if ((r = evrec_start(&(struct evrec_opts){
	             .config = x->kcfg,
	             .controller = x->c->name,
	             .qps = qps,
	             .burst = burst,
	             .limiter_fd = kcmd_env_fd("KCMD_CLIENT_LIMITER_FD")})) < 0)
		log_warning("event recorder: %s; the handlers' Events are written from this loop",
		            strerror(-r));
	/* this process owns every queue of the controller (also those only its workers and its
	 * handlers' consumers use); the table is handed the owners of the queues it adds to */
	size_t nq = 0;
	while (t->queues && t->queues[nq])
		nq++;
	x->queues = calloc(x->c->n_queues ? x->c->n_queues : 1, sizeof(*x->queues));
	struct ipc_queue_owner **owners = calloc(nq ? nq : 1, sizeof(*owners));
	bool *restarted = calloc(nq ? nq : 1, sizeof(*restarted));
	if (!x->queues || !owners || !restarted) {
		free(owners);
		free(restarted);
		return -ENOMEM;
	}
	for (size_t i = 0; i < x->c->n_queues; i++) {
		struct dq *q = &x->queues[x->n_queues++];
		struct ipc_queue_owner_config qc = {
		        .resync = on_owner_resync,
		        .parked = on_parked,
		        .death_expected = on_death_expected,
		        .accept = kcmd_shard_ranges() && !x->shard_self ? on_accept : NULL,
		        .userdata = q};
		q->x = x;
		q->name = x->c->queues[i].name;
		fd = kcmd_env_queue_fd(q->name);
		if (fd < 0 || (r = ipc_queue_owner_new(&q->owner, x->loop, fd, &qc)) < 0) {
			log_error("queue %s: %s", q->name,
			          fd < 0 ? "not in KCMD_QUEUE_FDS" : strerror(-r));
			free(owners);
			free(restarted);
			return fd < 0 ? -EINVAL : r;
		}
		int jfd = kcmd_env_named_fd("KCMD_JOURNAL_FDS", q->name);
		if (jfd >= 0) {
			int n = ipc_queue_owner_attach_journal(q->owner, jfd);
			if (n < 0)
				log_error("queue %s: its journal of durable keys: %s; keys from "
				          "delete events do not survive this process",
				          q->name, strerror(-n));
			else if (n > 0)
				log_info("queue %s: %d key%s from delete events queued again (left "
				         "by the previous dispatcher)",
				         q->name, n, n == 1 ? "" : "s");
		}
	}
	for (size_t k = 0; k < nq; k++) {
		for (size_t i = 0; i < x->n_queues; i++)
			if (!strcmp(x->queues[i].name, t->queues[k])) {
				owners[k] = x->queues[i].owner;
				restarted[k] = x->queues[i].restarted;
			}
		if (!owners[k]) {
			log_error("handler table %s adds to queue %s, which its descriptor does "
			          "not declare",
			          t->controller, t->queues[k]);
			free(owners);
			free(restarted);
			return -EINVAL;
		}
	}
	if ((r = inf_dispatch_new(&x->d)) < 0) {
		free(owners);
		free(restarted);
		return r;
	}
	gethostname(x->host, sizeof(x->host) - 1);
	inf_dispatch_set_host(x->d, x->loop, x->kc, x->host);
	/* the types the arena has now; later ones are learned from the feed's entries */
	struct shm_stats ast;
	if (shm_reader_stats(x->arena, &ast) == 0)
		for (uint64_t i = 0; i < ast.n_types; i++)
			(void)type_of(x, (uint16_t)i);
	x->owners = owners; /* kept for a resync from the arena */
	x->n_owners = nq;
	r = inf_dispatch_register(x->d, t, owners, nq, x->arena);
	if (r < 0) {
		log_error("handler table %s: %s", t->controller, strerror(-r));
		free(restarted);
		return r;
	}
	x->table = (size_t)r;
	/* re-add every key the controller owns (queue rule: after an owner (re)start); the
	 * entries published before it are in the arena it reads (F5) */
	struct shm_feed_stats fst = {0};
	(void)shm_feed_stats(x->feed, &fst);
	uint64_t bound = fst.last_seq + 1;
	for (size_t k = 0; k < nq; k++)
		inf_dispatch_resync(x->d, x->table, k, restarted[k]);
	free(restarted);
	/* then the previous dispatcher's unhandled deletes (F8), as a client-go relist delivers
	 * what vanished after the listed objects; the entries after them come from the loop */
	if (fst.resume == 2)
		log_error("the change feed no longer holds where the previous dispatcher stopped: "
		          "a delete it had not handled reaches no handler (docs/reliability.md)");
	if (x->resumed && catch_up_deletes(x, "restart", bound) < 0 &&
	    (r = shm_feed_seek_end(x->feed, NULL)) < 0)
		return r;
	for (size_t k = 0; t->consumes && t->consumes[k]; k++) {
		struct consumed *nc = realloc(x->consumed, (x->n_consumed + 1) * sizeof(*nc));
		if (!nc)
			return -ENOMEM;
		x->consumed = nc;
		struct consumed *c = &x->consumed[x->n_consumed++];
		*c = (struct consumed){x, k, NULL};
		fd = kcmd_env_queue_fd(t->consumes[k]);
		if (fd < 0) {
			log_warning("queue %s was not passed: keys the workers produce for the "
			            "handlers are lost",
			            t->consumes[k]);
			continue;
		}
		if ((r = ipc_queue_attach(&c->q, fd, IPC_QUEUE_WORKER, 1)) < 0) {
			log_error("cannot consume %s: %s", t->consumes[k], strerror(-r));
			return r;
		}
	}
	for (size_t k = 0; k < x->n_consumed; k++)
		if (x->consumed[k].q)
			on_consumed_key(x->consumed[k].q, &x->consumed[k]);
	if ((r = ipc_loop_add_post(x->loop, &x->more, on_more, x)) < 0 ||
	    (r = ipc_loop_add_futex(x->loop, &x->feed_src, shm_feed_futex_word(x->feed),
	                            shm_feed_wait_token(x->feed), on_feed, x)) < 0 ||
	    (r = ipc_loop_add_signal(x->loop, &x->sig_term, SIGTERM, on_signal, x)) < 0 ||
	    (r = ipc_loop_add_signal(x->loop, &x->sig_int, SIGINT, on_signal, x)) < 0)
		return r;
	/* F9: from the next arm on (the first wait takes every wake), only batches that hold one
	 * of its resources' classes wake it */
	shm_feed_set_interest(x->feed, interest_of(t));
	shm_feed_set_type_filter(x->feed, want_type, x);
	ipc_source_futex_set_mask(x->feed_src, shm_feed_interest(x->feed));
	x->shard_gen = kcmd_shard_gen(); /* the start-up resync above replayed everything */
	/* ... except, for the GC, what a relist still running had not written yet: once more
	 * when it is done */
	x->replay_pending = kcmd_shard_ranges() && x->shard_self &&
	                    wk_cachewait_arena_pending(x->arena, NULL, 0) > 0;
	x->replay_wait_since = ipc_now_usec();
	if (kcmd_fence() || kcmd_shard_ranges()) {
		x->leading = kcmd_fence() && kube_fence_allows(kcmd_fence(), ipc_now_usec());
		if ((r = ipc_loop_add_timer(x->loop, &x->term_timer,
		                            ipc_now_usec() + TERM_POLL_USEC, on_term_timer, x)) < 0)
			return r;
	}
	ipc_source_post_enable(x->more); /* entries published while the table resynced */
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: kcmd-dispatcher --controller=NAME [--kubeconfig=F] [--master=URL] "
	                "[--kube-api-qps=Q]\n"
	                "                       [--kube-api-burst=B] [--v=N] "
	                "[--controller-plugins=SO,...]\n"
	                "Started by kcmd with KCMD_ARENA_FD, KCMD_FEED_FD, KCMD_QUEUE_FDS and the "
	                "controller's fds set.\n");
}

int kcmd_dispatcher_main(int argc, char **argv)
{
	struct dsp *x = &(struct dsp){0};
	const char *kubeconfig = NULL, *master = NULL, *controller = NULL;
	double qps = 20;
	int burst = 30, v = 0, r;
	char err[512];

	/* the manager's plug-ins (one registry in every process), before any lookup */
	if (kcmd_registry_load_args(argc, argv, err, sizeof(err)) < 0) {
		fprintf(stderr, "kcmd-dispatcher: --controller-plugins: %s\n", err);
		return 2;
	}
	argc = kcmd_registry_drop_args(argc, argv);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strncmp(a, "--controller=", 13) == 0)
			controller = a + 13;
		else if (strncmp(a, "--kubeconfig=", 13) == 0)
			kubeconfig = a + 13;
		else if (strncmp(a, "--master=", 9) == 0)
			master = a + 9;
		else if (strncmp(a, "--kube-api-qps=", 15) == 0)
			qps = strtod(a + 15, NULL);
		else if (strncmp(a, "--kube-api-burst=", 17) == 0)
			burst = (int)strtol(a + 17, NULL, 10);
		else if (strncmp(a, "--v=", 4) == 0)
			v = (int)strtol(a + 4, NULL, 10);
		else {
			usage();
			return 2;
		}
	}
	x->c = controller ? kcmd_registry_find(controller) : NULL;
	if (!x->c || !x->c->handlers) {
		fprintf(stderr,
		        "kcmd-dispatcher: unknown controller, or one without handlers (%s)\n",
		        controller ? controller : "none");
		usage();
		return 2;
	}
	kclog_init(getenv("KCMD_PROCESS") ? getenv("KCMD_PROCESS") : "dispatcher", x->c->name, v);
	/* the controller's declared metrics, for its handlers (KCMD_METRICS_FD) */
	int mr = ctlm_open_self(x->c);
	if (mr < 0 && mr != -ENOENT)
		log_warning("%s: %s; the controller's metrics are not recorded here", CTLM_ENV,
		            strerror(-mr));
	signal(SIGPIPE, SIG_IGN);
	/* its handlers may write (the GC's Warning Events): only while this kcmd leads */
	if (kcmd_fence_from_env() < 0)
		return 1;
	x->shard_keys = kcmd_registry_shard_keys(x->c);
	x->shard_self = kcmd_registry_shard_self(x->c);
	/* --shard-ranges: which range its writes need; a controller that shards itself has each
	 * write fenced by its request's namespace, as a namespace-sharded one */
	kcmd_shard_setup_process(x->shard_self ? KUBE_SHARD_KEYS_NS_NAME : x->shard_keys);
	if ((r = setup(x, kubeconfig, master, qps, burst)) < 0) {
		ipc_loop_free(x->loop);
		return 1;
	}
	log_v(1, "%s dispatcher ready at feed position %llu", x->c->name,
	      (unsigned long long)shm_feed_position(x->feed));
	r = ipc_loop_run(x->loop);

	(void)evrec_stop(2000);
	ipc_source_free(x->feed_src);
	ipc_source_free(x->more);
	ipc_source_free(x->term_timer);
	for (size_t i = 0; i < x->n_consumed; i++)
		ipc_queue_free(x->consumed[i].q);
	free(x->consumed);
	inf_dispatch_free(x->d);
	free(x->owners);
	for (size_t i = 0; i < x->n_queues; i++)
		ipc_queue_owner_free(x->queues[i].owner);
	free(x->queues);
	for (size_t i = 0; i < x->n_types; i++)
		free_type(x->types[i]);
	free(x->types);
	shm_feed_close(x->feed);
	shm_arena_close(x->arena);
	kube_loop_detach(x->kl);
	kube_client_free(x->kc);
	kube_config_free(x->kcfg);
	ipc_loop_free(x->loop);
	return r < 0 ? 1 : r;
}
