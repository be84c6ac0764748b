/* SPDX-License-Identifier: Apache-2.0 */
/*
 * informerd/store.c: decoded objects -> arena records -> handlers (see store.h).
 *
 * The store keeps no copy of any object: the arena is the cache, and the previous state an
 * UPDATE or a tombstone needs is read back from it (the writer may read its own arena) just
 * before it is replaced. Private state per type is only the key set of a replace in progress.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "informerd/store.h"
#include "shm/feed.h"
#include "shm/record-model.h"
#include "shm/records.h"

/* ---- a set of "ns/name" strings (open addressing, linear probing) ------------------------- */
struct keyset {
	char **slots;
	size_t cap, n;
};

static uint64_t hash_str(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ULL;
	}
	return h ^ (h >> 29);
}

static void ks_clear(struct keyset *k)
{
	for (size_t i = 0; i < k->cap; i++)
		free(k->slots[i]);
	free(k->slots);
	*k = (struct keyset){0};
}

static bool ks_has(const struct keyset *k, const char *key, size_t len)
{
	if (!k->cap)
		return false;
	for (size_t i = hash_str(key, len) & (k->cap - 1);; i = (i + 1) & (k->cap - 1)) {
		if (!k->slots[i])
			return false;
		if (strlen(k->slots[i]) == len && memcmp(k->slots[i], key, len) == 0)
			return true;
	}
}

static int ks_put(struct keyset *k, char *owned)
{
	size_t len = strlen(owned);

	for (size_t i = hash_str(owned, len) & (k->cap - 1);; i = (i + 1) & (k->cap - 1)) {
		if (!k->slots[i]) {
			k->slots[i] = owned;
			k->n++;
			return 0;
		}
	}
}

static int ks_add(struct keyset *k, const char *key, size_t len)
{
	char *dup;

	if (ks_has(k, key, len))
		return 0;
	if ((k->n + 1) * 2 > k->cap) {
		struct keyset nk = {.cap = k->cap ? k->cap * 2 : 1024};

		nk.slots = calloc(nk.cap, sizeof(*nk.slots));
		if (!nk.slots)
			return -ENOMEM;
		for (size_t i = 0; i < k->cap; i++)
			if (k->slots[i])
				ks_put(&nk, k->slots[i]);
		free(k->slots);
		*k = nk;
	}
	dup = strndup(key, len);
	if (!dup)
		return -ENOMEM;
	return ks_put(k, dup);
}

/* ---- the store ---------------------------------------------------------------------------- */
struct type_state {
	bool used;
	bool replacing;
	bool synced;
	const struct inf_resource *res;
	struct keyset seen;
};

struct inf_store {
	struct shm_arena *a;
	bool dropping; /* inf_store_drop in progress: its deletions are SHM_FEED_DROPPED */
	struct inf_dispatch *d;
	struct type_state *types;
	size_t n_types;
	struct shm_obj old;
	struct shm_rec_enc enc; /* reused encoding buffers (shm/record-model.h) */
	char key[1024];
	struct inf_store_stats stats;
	/* the change feed (shm/feed.h): every applied change is published after the arena write */
	struct shm_feed *feed;
	void (*published)(void *ud);
	void *published_ud;
	/* the sharded cache's filter (store.h); NULL keeps everything */
	bool (*keep_ns)(const char *ns, void *ud);
	void *keep_ud;
};

void inf_store_set_filter(struct inf_store *s, bool (*keep_ns)(const char *ns, void *ud), void *ud)
{
	s->keep_ns = keep_ns;
	s->keep_ud = ud;
}

/* Whether the filter refuses objects of ns: cluster-scoped ones are always kept. */
static bool refused(const struct inf_store *s, const char *ns)
{
	return s->keep_ns && ns && *ns && !s->keep_ns(ns, s->keep_ud);
}

void inf_store_set_feed(struct inf_store *s, struct shm_feed *feed, void (*published)(void *ud),
                        void *ud)
{
	s->feed = feed;
	s->published = published;
	s->published_ud = ud;
}

int inf_store_new(struct shm_arena *a, struct inf_dispatch *d, struct inf_store **ret)
{
	struct inf_store *s;

	if (!a || !ret)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->a = a;
	s->d = d;
	*ret = s;
	return 0;
}

struct inf_store *inf_store_free(struct inf_store *s)
{
	if (!s)
		return NULL;
	for (size_t i = 0; i < s->n_types; i++)
		ks_clear(&s->types[i].seen);
	free(s->types);
	shm_obj_release(&s->old);
	shm_rec_enc_release(&s->enc);
	free(s);
	return NULL;
}

static struct type_state *ts_get(const struct inf_store *s, uint16_t type)
{
	if (type >= s->n_types || !s->types[type].used)
		return NULL;
	return &s->types[type];
}

/* Whether a stored record reads with this build's codec: the type's record kind and the
 * current payload version (shm/records.h). */
static bool record_current(const struct shm_obj *o, enum shm_record_kind kind)
{
	uint32_t magic;

	if (o->kind != kind || !o->payload || o->payload_len < sizeof(magic))
		return false;
	memcpy(&magic, o->payload, sizeof(magic));
	return magic == SHM_REC_MAGIC;
}

struct first_rec {
	enum shm_record_kind kind;
	bool stale;
};

static int first_visit(const struct shm_obj *o, void *ud)
{
	struct first_rec *f = ud;

	f->stale = !record_current(o, f->kind);
	return -ECANCELED; /* one record tells: a writer writes one version */
}

struct keys {
	char **v;
	size_t n, cap;
	struct inf_store *s; /* inf_store_prune's filter */
};

static int key_visit(const struct shm_obj *o, void *ud)
{
	struct keys *k = ud;
	size_t nl = strlen(o->ns ? o->ns : ""), ml = strlen(o->name);
	char *e;

	if (k->n == k->cap) {
		size_t nc = k->cap ? 2 * k->cap : 64;
		char **nv = realloc(k->v, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		k->v = nv;
		k->cap = nc;
	}
	if (!(e = malloc(nl + ml + 2)))
		return -ENOMEM;
	memcpy(e, o->ns ? o->ns : "", nl + 1);
	memcpy(e + nl + 1, o->name, ml + 1);
	k->v[k->n++] = e;
	return 0;
}

/* The resource is in the arena under another record kind (a warm arena from a run whose
 * controllers wanted it otherwise, e.g. metadata-only before and whole now): its records
 * cannot serve, so they go without events (every consumer resyncs from the arena when
 * informerd starts) and the slot is retired; the caller registers the resource again, unsynced,
 * so it is listed cold. */
static int clear_other_kind(struct inf_store *s, const struct shm_type_desc *d)
{
	int type = shm_reader_find_type(s->a, d->group, d->version, d->resource);
	struct keys k = {0};
	int r;

	if (type < 0)
		return type;
	r = shm_reader_list(s->a, (uint16_t)type, key_visit, &k);
	for (size_t i = 0; i < k.n; i++) {
		if (r >= 0) {
			int d2 = shm_writer_delete(s->a, (uint16_t)type, k.v[i],
			                           k.v[i] + strlen(k.v[i]) + 1);
			if (d2 < 0 && d2 != -ENOENT)
				r = d2;
		}
		free(k.v[i]);
	}
	free(k.v);
	return r < 0 ? r : shm_writer_retire_type(s->a, (uint16_t)type);
}

int inf_store_add_resource(struct inf_store *s, const struct inf_resource *res)
{
	struct shm_type_desc desc;
	struct shm_type_info ti = {0};
	int type, r;

	if (!s || !res || !res->resource || !res->version || !res->kind)
		return -EINVAL;
	desc = (struct shm_type_desc){.group = res->group ? res->group : "",
	                              .version = res->version,
	                              .resource = res->resource,
	                              .kind = res->kind,
	                              .record_kind = res->record_kind};
	type = shm_writer_register_type(s->a, &desc);
	if (type == -EEXIST && clear_other_kind(s, &desc) == 0)
		type = shm_writer_register_type(s->a, &desc);
	if (type < 0)
		return type;
	if ((size_t)type >= s->n_types) {
		struct type_state *nt = realloc(s->types, ((size_t)type + 1) * sizeof(*nt));

		if (!nt)
			return -ENOMEM;
		memset(nt + s->n_types, 0, ((size_t)type + 1 - s->n_types) * sizeof(*nt));
		s->types = nt;
		s->n_types = (size_t)type + 1;
	}
	s->types[type].used = true;
	s->types[type].res = res;
	if (shm_reader_type_info(s->a, (uint16_t)type, &ti) == 0)
		s->types[type].synced = ti.synced;
	/* A warm arena written by a build with another record version: its records do not read
	 * here, and a watch resumed from its version would never rewrite the unchanged ones. The
	 * type is listed cold instead (unsynced, no version); the replace rewrites every record
	 * (upsert's same-version skip applies only to current records). */
	struct first_rec fr = {.kind = res->record_kind};
	if (ti.count && shm_reader_list(s->a, (uint16_t)type, first_visit, &fr) == -ECANCELED &&
	    fr.stale) {
		r = shm_writer_set_sync(s->a, (uint16_t)type, "", false);
		if (r < 0)
			return r;
		s->types[type].synced = false;
	}
	if (s->d) {
		r = inf_dispatch_add_type(s->d, (uint16_t)type, res);
		if (r < 0)
			return r;
	}
	return type;
}

int inf_store_synced_rv(struct inf_store *s, uint16_t type, char *buf, size_t n)
{
	struct shm_type_info ti;
	size_t l;
	int r;

	if (!s || !buf || !n)
		return -EINVAL;
	buf[0] = '\0';
	r = shm_reader_type_info(s->a, type, &ti);
	if (r < 0)
		return r;
	if (!ti.synced || !ti.rv[0])
		return 0;
	l = strnlen(ti.rv, sizeof(ti.rv));
	if (l >= n)
		return -ENAMETOOLONG;
	memcpy(buf, ti.rv, l);
	buf[l] = '\0';
	return (int)l;
}

uint32_t inf_store_sync_epoch(struct inf_store *s, uint16_t type)
{
	struct shm_type_info ti;

	/* informerd sets no epoch source: ti.synced is the plain flag here */
	if (!s || shm_reader_type_info(s->a, type, &ti) < 0 || !ti.synced)
		return 0;
	return ti.sync_epoch;
}

enum kube_kind inf_store_kube_kind(const struct inf_store *s, uint16_t type)
{
	const struct type_state *ts = ts_get(s, type);

	if (!ts)
		return KUBE_KIND_PARTIAL;
	switch (ts->res->record_kind) {
	case SHM_RECORD_POD:
		return KUBE_KIND_POD;
	case SHM_RECORD_REPLICASET:
		/* a ReplicationController is decoded into the ReplicaSet model (kube/model.h) */
		return !ts->res->group[0] && !strcmp(ts->res->resource, "replicationcontrollers")
		               ? KUBE_KIND_REPLICATIONCONTROLLER
		               : KUBE_KIND_REPLICASET;
	case SHM_RECORD_OBJECT:
		return KUBE_KIND_OBJECT;
	default:
		return KUBE_KIND_PARTIAL;
	}
}

/* ---- applying ------------------------------------------------------------------------------ */
static const struct kube_object_meta *meta_of(const void *obj)
{
	/* Every decoded kind starts with its struct kube_object_meta (kube/model.h). */
	return obj;
}

static int build_record(struct inf_store *s, uint16_t type, const struct type_state *ts,
                        const void *obj, struct shm_record_in *rec)
{
	return shm_rec_build(&s->enc, type, ts->res->record_kind, obj, rec);
}

/* Publishes one change to the feed: rec is what was written (ADD/UPDATE), old the arena's
 * previous version (UPDATE/DELETE). A publish that fails is counted and logged by the caller's
 * metrics; the consumers resync from the arena when they see a gap (they never do here: the
 * feed only refuses malformed input or an entry larger than a quarter of its ring). */
static void publish(struct inf_store *s, uint16_t type, enum inf_event_kind kind,
                    const struct shm_record_in *rec, const struct shm_obj *old, bool tombstone,
                    bool relist)
{
	struct shm_feed_pub p = {
	        .op = kind == INF_EVENT_ADD      ? SHM_FEED_ADD
	              : kind == INF_EVENT_UPDATE ? SHM_FEED_UPDATE
	                                         : SHM_FEED_DELETE,
	        .flags =
	                (uint8_t)((relist ? SHM_FEED_RELIST : 0) |
	                          (tombstone ? SHM_FEED_TOMBSTONE : 0) |
	                          (kind == INF_EVENT_DELETE && s->dropping ? SHM_FEED_DROPPED : 0)),
	        .type = type,
	        .handle = old ? old->handle : 0,
	        .arena_seq = shm_reader_change_seq(s->a),
	        .new_obj = kind == INF_EVENT_DELETE ? NULL : rec,
	        .old_obj = kind == INF_EVENT_ADD ? NULL : old,
	        /* F9: the dispatchers whose tables name this resource (or every one) */
	        .wake = type < s->n_types && s->types[type].res
	                        ? shm_feed_wake_bit(s->types[type].res->resource)
	                        : SHM_FEED_WAKE_ALL,
	};

	if (!s->feed)
		return;
	if (shm_feed_publish(s->feed, &p, NULL) < 0) {
		s->stats.errors++;
		s->stats.feed_errors++;
		return;
	}
	s->stats.published++;
	if (s->published)
		s->published(s->published_ud);
}

static void dispatch(struct inf_store *s, uint16_t type, const struct type_state *ts,
                     enum inf_event_kind kind, const void *obj, const struct shm_obj *old,
                     bool tombstone, bool relist)
{
	struct inf_event ev = {
	        .kind = kind,
	        .type = type,
	        .res = ts->res,
	        .obj = obj,
	        .meta = obj ? meta_of(obj) : NULL,
	        .old = old,
	        .tombstone = tombstone,
	        .from_relist = relist,
	        .dropped = kind == INF_EVENT_DELETE && s->dropping,
	};

	if (!s->d)
		return;
	inf_dispatch_event(s->d, &ev);
	s->stats.dispatched++;
}

static int read_old(struct inf_store *s, uint16_t type, const char *ns, const char *name)
{
	int r = shm_reader_get(s->a, type, ns, name, &s->old);

	if (r < 0 && r != -ENOENT)
		s->stats.errors++;
	return r;
}

static int upsert(struct inf_store *s, uint16_t type, struct type_state *ts, const void *obj,
                  bool relist)
{
	const struct kube_object_meta *m = meta_of(obj);
	const char *ns = m->namespace ? m->namespace : "";
	struct shm_record_in rec;
	bool found, same;
	int r;

	if (!m->name || !m->uid || !m->resource_version)
		return -EINVAL;
	found = read_old(s, type, ns, m->name) == 0;
	same = found && strcmp(s->old.uid, m->uid) == 0 &&
	       strcmp(s->old.rv, m->resource_version) == 0 &&
	       record_current(&s->old, ts->res->record_kind);
	if (same) {
		s->stats.skipped_same_rv++;
		/* A replace re-delivers every object (client-go's Replaced delta); a repeated watch
		 * event (replay after a warm restart) is dropped. */
		if (relist) {
			dispatch(s, type, ts, INF_EVENT_UPDATE, obj, &s->old, false, true);
			if (s->feed && build_record(s, type, ts, obj, &rec) == 0)
				publish(s, type, INF_EVENT_UPDATE, &rec, &s->old, false, true);
		}
		return 0;
	}
	r = build_record(s, type, ts, obj, &rec);
	if (r < 0)
		return r;
	r = shm_writer_upsert(s->a, &rec);
	if (r < 0) {
		s->stats.errors++;
		return r;
	}
	s->stats.upserts++;
	dispatch(s, type, ts, found ? INF_EVENT_UPDATE : INF_EVENT_ADD, obj, found ? &s->old : NULL,
	         false, relist);
	publish(s, type, found ? INF_EVENT_UPDATE : INF_EVENT_ADD, &rec, found ? &s->old : NULL,
	        false, relist);
	return 0;
}

static int remove_known(struct inf_store *s, uint16_t type, struct type_state *ts, const char *ns,
                        const char *name, const void *final_obj)
{
	int r;

	if (read_old(s, type, ns, name) < 0)
		return 0; /* not known: nothing to tell handlers */
	r = shm_writer_delete(s->a, type, ns, name);
	if (r < 0 && r != -ENOENT) {
		s->stats.errors++;
		return r;
	}
	s->stats.deletes++;
	if (!final_obj)
		s->stats.tombstones++;
	dispatch(s, type, ts, INF_EVENT_DELETE, final_obj, &s->old, final_obj == NULL,
	         final_obj == NULL);
	publish(s, type, INF_EVENT_DELETE, NULL, &s->old, final_obj == NULL, final_obj == NULL);
	return 0;
}

int inf_store_apply(struct inf_store *s, uint16_t type, enum kube_watch_type ev, const void *obj)
{
	struct type_state *ts;
	const struct kube_object_meta *m;

	if (!s || !obj || !(ts = ts_get(s, type)))
		return -EINVAL;
	m = meta_of(obj);
	if (ev != KUBE_WATCH_ADDED && ev != KUBE_WATCH_MODIFIED && ev != KUBE_WATCH_DELETED)
		return -EINVAL;
	if (refused(s, m->namespace)) {
		int r;

		if (!m->name)
			return -EINVAL;
		s->stats.filtered++;
		/* A copy stored before the filter narrowed is stale from now on: it goes (its
		 * last known state as a tombstone); nothing is stored in its place. */
		r = remove_known(s, type, ts, m->namespace, m->name,
		                 ev == KUBE_WATCH_DELETED ? obj : NULL);
		return r < 0 ? r : 1;
	}
	switch (ev) {
	case KUBE_WATCH_ADDED:
	case KUBE_WATCH_MODIFIED:
		return upsert(s, type, ts, obj, false);
	case KUBE_WATCH_DELETED:
		if (!m->name)
			return -EINVAL;
		return remove_known(s, type, ts, m->namespace ? m->namespace : "", m->name, obj);
	default:
		return -EINVAL;
	}
}

int inf_store_replace_begin(struct inf_store *s, uint16_t type)
{
	struct type_state *ts;

	if (!s || !(ts = ts_get(s, type)))
		return -EINVAL;
	ks_clear(&ts->seen);
	ts->replacing = true;
	return 0;
}

static size_t make_key(struct inf_store *s, const char *ns, const char *name)
{
	int n = snprintf(s->key, sizeof(s->key), "%s/%s", ns ? ns : "", name);

	return n < 0 || (size_t)n >= sizeof(s->key) ? 0 : (size_t)n;
}

int inf_store_replace_add(struct inf_store *s, uint16_t type, const void *obj)
{
	struct type_state *ts;
	const struct kube_object_meta *m;
	size_t kl;
	int r;

	if (!s || !obj || !(ts = ts_get(s, type)) || !ts->replacing)
		return -EINVAL;
	m = meta_of(obj);
	if (!m->name)
		return -EINVAL;
	if (refused(s, m->namespace)) {
		/* not remembered: a copy the arena still holds goes at the commit (tombstone) */
		s->stats.filtered++;
		return 1;
	}
	kl = make_key(s, m->namespace, m->name);
	if (!kl)
		return -ENAMETOOLONG;
	r = ks_add(&ts->seen, s->key, kl);
	if (r < 0)
		return r;
	return upsert(s, type, ts, obj, true);
}

struct gone {
	struct inf_store *s;
	const struct keyset *seen;
	char **keys; /* "ns\0name" pairs, malloc'd */
	size_t n, cap;
	int err;
};

static int collect_gone(const struct shm_obj *o, void *userdata)
{
	struct gone *g = userdata;
	size_t kl = make_key(g->s, o->ns, o->name);
	size_t nl, tl;
	char *k;

	if (!kl || ks_has(g->seen, g->s->key, kl))
		return 0;
	if (g->n == g->cap) {
		size_t nc = g->cap ? g->cap * 2 : 64;
		char **nk = realloc(g->keys, nc * sizeof(*nk));

		if (!nk) {
			g->err = -ENOMEM;
			return -ENOMEM;
		}
		g->keys = nk;
		g->cap = nc;
	}
	nl = strlen(o->ns ? o->ns : "");
	tl = nl + 1 + strlen(o->name) + 1;
	k = malloc(tl);
	if (!k) {
		g->err = -ENOMEM;
		return -ENOMEM;
	}
	memcpy(k, o->ns ? o->ns : "", nl + 1);
	memcpy(k + nl + 1, o->name, strlen(o->name) + 1);
	g->keys[g->n++] = k;
	return 0;
}

int inf_store_replace_commit(struct inf_store *s, uint16_t type, const char *rv)
{
	struct type_state *ts;
	struct gone g = {.s = s};
	int r;

	if (!s || !rv || !(ts = ts_get(s, type)) || !ts->replacing)
		return -EINVAL;
	g.seen = &ts->seen;
	r = shm_reader_list(s->a, type, collect_gone, &g);
	if (r < 0 || g.err) {
		for (size_t i = 0; i < g.n; i++)
			free(g.keys[i]);
		free(g.keys);
		return g.err ? g.err : r;
	}
	/* Objects missing from the new list: deleted while we were not watching. */
	for (size_t i = 0; i < g.n; i++) {
		const char *ns = g.keys[i];

		(void)remove_known(s, type, ts, ns, ns + strlen(ns) + 1, NULL);
		free(g.keys[i]);
	}
	free(g.keys);
	ks_clear(&ts->seen);
	ts->replacing = false;
	ts->synced = true;
	return shm_writer_set_sync(s->a, type, rv, true);
}

static int collect_refused(const struct shm_obj *o, void *ud)
{
	struct keys *k = ud;
	struct inf_store *s = k->s;

	return refused(s, o->ns) ? key_visit(o, ud) : 0;
}

int inf_store_prune(struct inf_store *s, uint16_t type)
{
	struct type_state *ts;
	struct keys k = {0};
	int r, n = 0;

	if (!s || !(ts = ts_get(s, type)))
		return -EINVAL;
	if (!s->keep_ns)
		return 0;
	k.s = s;
	/* keys first, removals after: the arena is not changed under its own walk */
	r = shm_reader_list(s->a, type, collect_refused, &k);
	for (size_t i = 0; i < k.n; i++) {
		const char *ns = k.v[i];

		if (r >= 0) {
			int d = remove_known(s, type, ts, ns, ns + strlen(ns) + 1, NULL);
			if (d < 0)
				r = d;
			else
				n++;
		}
		free(k.v[i]);
	}
	free(k.v);
	s->stats.pruned += (uint64_t)n;
	return r < 0 ? r : n;
}

void inf_store_replace_abort(struct inf_store *s, uint16_t type)
{
	struct type_state *ts = s ? ts_get(s, type) : NULL;

	if (!ts)
		return;
	ks_clear(&ts->seen);
	ts->replacing = false;
}

int inf_store_drop(struct inf_store *s, uint16_t type)
{
	struct type_state *ts;
	int r;

	if (!s || !(ts = ts_get(s, type)))
		return -EINVAL;
	/* An empty replace: every object goes, as tombstones; the type is left "synced" with no
	 * version, so that readiness checks over the resource table do not wait for a resource
	 * nobody watches, and a later watch of it starts cold. */
	r = inf_store_replace_begin(s, type);
	if (r == 0) {
		s->dropping = true; /* the handlers learn these objects were not deleted */
		r = inf_store_replace_commit(s, type, "");
		s->dropping = false;
	}
	return r;
}

int inf_store_retire(struct inf_store *s, uint16_t type)
{
	struct type_state *ts;
	int r;

	if (!s || !(ts = ts_get(s, type)))
		return -EINVAL;
	if (ts->replacing)
		inf_store_replace_abort(s, type);
	r = shm_writer_retire_type(s->a, type);
	if (r < 0)
		return r;
	ks_clear(&ts->seen);
	ts->used = false;
	ts->res = NULL;
	if (s->d)
		inf_dispatch_remove_type(s->d, type);
	return 0;
}

bool inf_store_replacing(const struct inf_store *s, uint16_t type)
{
	const struct type_state *ts = ts_get(s, type);

	return ts && ts->replacing;
}

int inf_store_set_rv(struct inf_store *s, uint16_t type, const char *rv)
{
	struct type_state *ts;

	if (!s || !rv || !(ts = ts_get(s, type)))
		return -EINVAL;
	return shm_writer_set_sync(s->a, type, rv, ts->synced);
}

int inf_store_set_sync_epoch(struct inf_store *s, uint16_t type, const char *rv, uint32_t epoch)
{
	struct type_state *ts;

	if (!s || !rv || !(ts = ts_get(s, type)) || ts->replacing)
		return -EINVAL;
	return shm_writer_set_sync_epoch(s->a, type, rv, ts->synced, epoch);
}

bool inf_store_synced(const struct inf_store *s, uint16_t type)
{
	const struct type_state *ts = ts_get(s, type);

	return ts && ts->synced;
}

void inf_store_get_stats(const struct inf_store *s, struct inf_store_stats *ret)
{
	*ret = s->stats;
}
