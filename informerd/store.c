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

#include "shm/records.h"
#include "informerd/store.h"
#include "shm/feed.h"
#include "kube/selector.h"

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
	/* reused encoding buffers */
	struct shm_label *labels;
	size_t labels_cap;
	struct shm_owner_ref *owners;
	size_t owners_cap;
	uint8_t *payload;
	size_t payload_cap;
	char key[1024];
	struct inf_store_stats stats;
	/* the change feed (shm/feed.h): every applied change is published after the arena write */
	struct shm_feed *feed;
	void (*published)(void *ud);
	void *published_ud;
};

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
	free(s->labels);
	free(s->owners);
	free(s->payload);
	free(s);
	return NULL;
}

static struct type_state *ts_get(const struct inf_store *s, uint16_t type)
{
	if (type >= s->n_types || !s->types[type].used)
		return NULL;
	return &s->types[type];
}

int inf_store_add_resource(struct inf_store *s, const struct inf_resource *res)
{
	struct shm_type_desc desc;
	struct shm_type_info ti;
	int type, r;

	if (!s || !res || !res->resource || !res->version || !res->kind)
		return -EINVAL;
	desc = (struct shm_type_desc){.group = res->group ? res->group : "",
	                              .version = res->version,
	                              .resource = res->resource,
	                              .kind = res->kind,
	                              .record_kind = res->record_kind};
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

enum kube_kind inf_store_kube_kind(const struct inf_store *s, uint16_t type)
{
	const struct type_state *ts = ts_get(s, type);

	if (!ts)
		return KUBE_KIND_PARTIAL;
	switch (ts->res->record_kind) {
	case SHM_RECORD_POD:
		return KUBE_KIND_POD;
	case SHM_RECORD_REPLICASET:
		return KUBE_KIND_REPLICASET;
	default:
		return KUBE_KIND_PARTIAL;
	}
}

/* ---- payload encoding ------------------------------------------------------------------- */
struct enc {
	uint8_t **buf;
	size_t *cap;
	size_t len;
	uint32_t n_blobs;
	int err;
};

static void enc_put(struct enc *e, const void *p, size_t n)
{
	if (e->err)
		return;
	if (e->len + n > *e->cap) {
		size_t nc = *e->cap ? *e->cap : 256;
		uint8_t *nb;

		while (nc < e->len + n)
			nc *= 2;
		nb = realloc(*e->buf, nc);
		if (!nb) {
			e->err = -ENOMEM;
			return;
		}
		*e->buf = nb;
		*e->cap = nc;
	}
	memcpy(*e->buf + e->len, p, n);
	e->len += n;
}

static void enc_blob(struct enc *e, const void *p, size_t n)
{
	uint32_t l = (uint32_t)n;
	char nul = '\0';

	if (n > UINT32_MAX - 1) {
		e->err = -E2BIG;
		return;
	}
	enc_put(e, &l, 4);
	if (n)
		enc_put(e, p, n);
	enc_put(e, &nul, 1);
	e->n_blobs++;
}

static void enc_str(struct enc *e, const char *s)
{
	enc_blob(e, s ? s : "", s ? strlen(s) : 0);
}

static void enc_selector(struct enc *e, const struct kube_label_selector *ls, uint8_t *state)
{
	struct kube_selector *sel = NULL;
	char err[256] = "";
	char *str = NULL;

	if (!ls) {
		*state = INF_REC_SEL_NIL;
		enc_str(e, "");
		return;
	}
	if (kube_selector_from_label_selector(ls, &sel, err, sizeof(err)) < 0) {
		*state = INF_REC_SEL_INVALID;
		enc_str(e, err);
		return;
	}
	if (kube_selector_format(sel, &str) < 0) {
		kube_selector_free(sel);
		e->err = -ENOMEM;
		return;
	}
	*state = INF_REC_SEL_VALID;
	enc_str(e, str);
	free(str);
	kube_selector_free(sel);
}

int inf_store_encode_payload(enum shm_record_kind kind, const void *obj, uint8_t **buf, size_t *cap,
                             size_t *ret_len)
{
	const struct kube_object_meta *m = obj;
	struct inf_rec_hdr h = {.magic = INF_REC_MAGIC, .kind = (uint8_t)kind};
	struct enc e = {.buf = buf, .cap = cap};
	struct inf_rec_pod pod = {0};
	struct inf_rec_rs rs = {0};

	if (!obj || !buf || !cap || !ret_len)
		return -EINVAL;
	h.generation = m->generation;
	h.creation_ts = m->creation_timestamp;
	h.deletion_ts = m->deletion_timestamp;
	h.deletion_grace_s = m->deletion_grace_period_seconds;
	if (m->has_deletion_grace_period_seconds)
		h.flags |= INF_REC_HAS_GRACE;
	for (uint32_t i = 0; i < m->n_finalizers; i++) {
		if (m->finalizers[i] && strcmp(m->finalizers[i], "orphan") == 0)
			h.flags |= INF_REC_FIN_ORPHAN;
		if (m->finalizers[i] && strcmp(m->finalizers[i], "foregroundDeletion") == 0)
			h.flags |= INF_REC_FIN_FOREGROUND;
	}
	h.n_finalizers = m->n_finalizers;
	/* Header first (patched at the end with the blob count), then fixed part and blobs. */
	enc_put(&e, &h, sizeof(h));
	if (kind == SHM_RECORD_POD) {
		const struct kube_pod *p = obj;

		pod.phase = (uint8_t)p->phase;
		pod.ready = p->ready;
		pod.has_deletion_cost = p->has_deletion_cost;
		pod.max_restarts = p->max_restarts;
		pod.max_sidecar_restarts = p->max_sidecar_restarts;
		pod.deletion_cost = p->deletion_cost;
		pod.ready_transition_time = p->ready_transition_time;
		h.fixed_len = sizeof(pod);
		enc_put(&e, &pod, sizeof(pod));
		enc_str(&e, p->node_name);
	} else if (kind == SHM_RECORD_REPLICASET) {
		const struct kube_replicaset *r = obj;
		size_t fixed_at = e.len;

		rs.spec_replicas = r->spec_replicas;
		rs.has_spec_replicas = r->has_spec_replicas;
		rs.has_terminating_replicas = r->status.has_terminating_replicas;
		rs.min_ready_seconds = r->min_ready_seconds;
		rs.replicas = r->status.replicas;
		rs.fully_labeled_replicas = r->status.fully_labeled_replicas;
		rs.ready_replicas = r->status.ready_replicas;
		rs.available_replicas = r->status.available_replicas;
		rs.terminating_replicas = r->status.terminating_replicas;
		rs.n_conditions = r->status.n_conditions;
		rs.observed_generation = r->status.observed_generation;
		h.fixed_len = sizeof(rs);
		enc_put(&e, &rs, sizeof(rs));
		enc_selector(&e, r->selector, &rs.sel_state);
		if (!e.err) /* sel_state is known only now */
			memcpy(*e.buf + fixed_at, &rs, sizeof(rs));
		enc_blob(&e, r->template_json ? r->template_json : "",
		         r->template_json ? r->template_json_len : 0);
		for (uint32_t i = 0; i < r->status.n_conditions; i++) {
			const struct kube_condition *c = &r->status.conditions[i];

			enc_str(&e, c->type);
			enc_str(&e, c->status);
			enc_str(&e, c->reason);
			enc_str(&e, c->message);
			enc_blob(&e, &c->last_transition_time, sizeof(c->last_transition_time));
		}
	}
	for (uint32_t i = 0; i < m->n_finalizers; i++)
		enc_str(&e, m->finalizers[i]);
	if (e.err)
		return e.err;
	h.n_blobs = e.n_blobs;
	memcpy(*e.buf, &h, sizeof(h));
	*ret_len = e.len;
	return 0;
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
	const struct kube_object_meta *m = meta_of(obj);
	size_t len;
	int r;

	if (m->n_labels > s->labels_cap) {
		struct shm_label *nl = realloc(s->labels, m->n_labels * sizeof(*nl));

		if (!nl)
			return -ENOMEM;
		s->labels = nl;
		s->labels_cap = m->n_labels;
	}
	if (m->n_owner_refs > s->owners_cap) {
		struct shm_owner_ref *no = realloc(s->owners, m->n_owner_refs * sizeof(*no));

		if (!no)
			return -ENOMEM;
		s->owners = no;
		s->owners_cap = m->n_owner_refs;
	}
	for (uint32_t i = 0; i < m->n_labels; i++)
		s->labels[i] = (struct shm_label){m->labels[i].key,
		                                  m->labels[i].value ? m->labels[i].value : ""};
	for (uint32_t i = 0; i < m->n_owner_refs; i++) {
		const struct kube_owner_ref *o = &m->owner_refs[i];

		s->owners[i] = (struct shm_owner_ref){
		        .api_version = o->api_version ? o->api_version : "",
		        .kind = o->kind ? o->kind : "",
		        .name = o->name ? o->name : "",
		        .uid = o->uid ? o->uid : "",
		        /* tri-states as they are: absent (-1) is not false (0) (kube/model.h) */
		        .controller = o->controller < 0 ? -1 : o->controller > 0,
		        .block_owner_deletion =
		                o->block_owner_deletion < 0 ? -1 : o->block_owner_deletion > 0,
		};
	}
	r = inf_store_encode_payload(ts->res->record_kind, obj, &s->payload, &s->payload_cap, &len);
	if (r < 0)
		return r;
	*rec = (struct shm_record_in){
	        .type = type,
	        .kind = ts->res->record_kind,
	        .ns = m->namespace ? m->namespace : "",
	        .name = m->name,
	        .uid = m->uid,
	        .rv = m->resource_version,
	        .labels = s->labels,
	        .n_labels = m->n_labels,
	        .owners = s->owners,
	        .n_owners = m->n_owner_refs,
	        .payload = s->payload,
	        .payload_len = len,
	};
	return 0;
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
	       strcmp(s->old.rv, m->resource_version) == 0;
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

bool inf_store_synced(const struct inf_store *s, uint16_t type)
{
	const struct type_state *ts = ts_get(s, type);

	return ts && ts->synced;
}

void inf_store_get_stats(const struct inf_store *s, struct inf_store_stats *ret)
{
	*ret = s->stats;
}
