/* SPDX-License-Identifier: Apache-2.0 */
/* shm/reader.c - the read side (listers): copy out, validate, decode.
 *
 * A read never trusts the arena until the block it copied has been validated (A3): every length
 * is bounded by the class size and the published arena size before use (A5), every block is
 * copied with relaxed atomic loads and re-checked after an acquire fence. A mismatch means the
 * writer reused the block during the copy; the read restarts at the handle slot, which holds the
 * current version. Readers store nothing in shared memory: a reader killed anywhere leaves
 * nothing behind.
 *
 * Index walks load slots in place (no copy): a slot is one atomic word, and after the walk the
 * table's generation is re-checked; if the table was retired and reused meanwhile the walk is
 * repeated. Every index hit is then confirmed against the record's content (A8).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shm/index.h"
#include "shm/records.h"
#include "shm/shm-internal.h"

static int scratch(struct shm_arena *a, unsigned slot, size_t n)
{
	if (a->scr_cap[slot] >= n)
		return 0;
	size_t c = a->scr_cap[slot] ? a->scr_cap[slot] : 512;
	while (c < n)
		c *= 2;
	uint8_t *p = realloc(a->scr[slot], c);
	if (!p)
		return -ENOMEM;
	a->scr[slot] = p;
	a->scr_cap[slot] = c;
	return 0;
}

int shm_read_block(struct shm_arena *a, uint64_t ref, unsigned kind, unsigned slot,
                   const uint8_t **ret_body, uint32_t *ret_len)
{
	uint64_t off = shm_ref_off(ref);
	/* acquire: pairs with grow_to's release store; memory below size is backed. */
	uint64_t size = atomic_load_explicit(&a->hdr->size, memory_order_acquire);
	uint64_t cs = shm_block_class_size(a, off, size);
	if (!cs)
		return -EAGAIN;
	struct shm_abi_block *b = shm_blk(a, off);
	/* acquire: pairs with w_close's release store of the even gen (the body is complete). */
	uint64_t w1 = atomic_load_explicit(&b->word, memory_order_acquire);
	uint32_t g1 = SHM_ABI_WORD_GEN(w1);
	if ((g1 & 1) || shm_gen16(g1) != shm_ref_gen16(ref) || SHM_ABI_WORD_KIND(w1) != kind ||
	    SHM_ABI_WORD_SLACK(w1) > cs - SHM_ABI_BLK_HDR)
		return -EAGAIN;
	uint32_t len = (uint32_t)(cs - SHM_ABI_BLK_HDR - SHM_ABI_WORD_SLACK(w1));
	size_t n = ((size_t)len + 7) & ~(size_t)7;
	int r = scratch(a, slot, n + 8);
	if (r < 0)
		return r;
	const uint8_t *body = (const uint8_t *)b + SHM_ABI_BLK_HDR;
	if (__builtin_expect((shm__test_flags & SHM_TEST_SLOW_COPY) && n >= 4096, 0)) {
		/* test seam: widen the race window as a preemption mid-copy would */
		size_t half = n / 2 & ~(size_t)7;
		shm_copy_out(a->scr[slot], body, half);
		shm__test_pause();
		shm_copy_out(a->scr[slot] + half, body + half, n - half);
	} else {
		shm_copy_out(a->scr[slot], body, n);
	}
	/* acquire fence: orders the copy above before the word re-check; pairs with the release
	 * fence in w_alloc that follows the odd gen store of a reuse (A3). */
	atomic_thread_fence(memory_order_acquire);
	uint64_t w2 = atomic_load_explicit(&b->word, memory_order_relaxed);
	if (w2 != w1 && !(shm__test_flags & SHM_TEST_NO_VALIDATE))
		return -EAGAIN;
	*ret_body = a->scr[slot];
	*ret_len = len;
	return 0;
}

/* Copy an atom of the given kind into scratch slot; returns its bytes. */
static int read_atom(struct shm_arena *a, uint64_t ref, unsigned kind, unsigned slot,
                     const uint8_t **ret, uint32_t *ret_len)
{
	const uint8_t *b;
	uint32_t len;
	int r = shm_read_block(a, ref, SHM_ABI_BLK_ATOM, slot, &b, &len);
	if (r < 0)
		return r;
	struct shm_abi_atom at;
	if (len < sizeof(at))
		return -EAGAIN;
	memcpy(&at, b, sizeof(at));
	if (at.kind != kind || at.len > len - sizeof(at))
		return -EAGAIN;
	*ret = b + sizeof(at);
	*ret_len = at.len;
	return 0;
}

static size_t count_labels(const uint8_t *p, uint32_t n, bool *ok)
{
	size_t strings = 0;
	for (uint32_t i = 0; i < n; i++)
		strings += p[i] == 0;
	*ok = (n == 0 || p[n - 1] == 0) && strings % 2 == 0;
	return strings / 2;
}

static int count_owners(const uint8_t *p, uint32_t n, size_t *ret_strings)
{
	size_t i = 0, k = 0, strs = 0;
	while (i < n) {
		struct shm_abi_owner o;
		if (n - i < sizeof(o))
			return -1;
		memcpy(&o, p + i, sizeof(o));
		i += sizeof(o);
		size_t need = (size_t)o.uid_len + o.api_version_len + o.kind_len + o.name_len;
		if (n - i < need)
			return -1;
		i += need;
		strs += need + 4;
		k++;
	}
	*ret_strings = strs;
	return (int)k;
}

static int obj_reserve(struct shm_obj *obj, size_t n)
{
	if (obj->cap_ >= n)
		return 0;
	size_t c = obj->cap_ ? obj->cap_ : 256;
	while (c < n)
		c *= 2;
	void *p = realloc(obj->mem_, c);
	if (!p)
		return -ENOMEM;
	obj->mem_ = p;
	obj->cap_ = c;
	return 0;
}

static char *put_str(char **cur, const void *s, size_t n)
{
	char *d = *cur;
	if (n)
		memcpy(d, s, n);
	d[n] = 0;
	*cur = d + n + 1;
	return d;
}

/* One attempt: 0, -EAGAIN (retry), -ENOENT, -ENOMEM. */
static int read_obj_once(struct shm_arena *a, uint32_t h, struct shm_obj *obj)
{
	uint64_t ref = shm_handle_load(a, h);
	if (!ref)
		return -ENOENT;
	const uint8_t *rb, *nsb, *lb = NULL, *ob = NULL;
	uint32_t rl, nsl, ll = 0, ol = 0;
	int r = shm_read_block(a, ref, SHM_ABI_BLK_RECORD, 0, &rb, &rl);
	if (r < 0)
		return r;
	struct shm_abi_record rec;
	if (rl < sizeof(rec))
		return -EAGAIN;
	memcpy(&rec, rb, sizeof(rec));
	size_t need =
	        sizeof(rec) + (size_t)rec.uid_len + rec.name_len + rec.rv_len + rec.payload_len;
	if (need > rl || ((rec.flags & SHM_ABI_REC_UID_BIN) && rec.uid_len != 16) ||
	    !rec.atom_unit[SHM_ABI_REC_NS])
		return -EAGAIN;
	if ((r = read_atom(a, shm_abi_rec_atom(&rec, SHM_ABI_REC_NS), SHM_ABI_ATOM_STRING, 1, &nsb,
	                   &nsl)) < 0)
		return r;
	if (rec.atom_unit[SHM_ABI_REC_LABELS] &&
	    (r = read_atom(a, shm_abi_rec_atom(&rec, SHM_ABI_REC_LABELS), SHM_ABI_ATOM_LABELS, 2,
	                   &lb, &ll)) < 0)
		return r;
	if (rec.atom_unit[SHM_ABI_REC_OWNERS] &&
	    (r = read_atom(a, shm_abi_rec_atom(&rec, SHM_ABI_REC_OWNERS), SHM_ABI_ATOM_OWNERS, 3,
	                   &ob, &ol)) < 0)
		return r;
	bool ok;
	size_t nlab = count_labels(lb, ll, &ok), ostr = 0;
	int nown = count_owners(ob, ol, &ostr);
	if (!ok || nown < 0)
		return -EAGAIN;
	size_t total = nlab * sizeof(struct shm_label) +
	               (size_t)nown * sizeof(struct shm_owner_ref) +
	               ((rec.payload_len + 7) & ~(size_t)7) + nsl + 1 + rec.name_len + 1 + 37 +
	               rec.uid_len + 1 + rec.rv_len + 1 + ll + ostr + 16;
	if ((r = obj_reserve(obj, total)) < 0)
		return r;
	uint8_t *m = obj->mem_;
	struct shm_label *labels = (struct shm_label *)m;
	m += nlab * sizeof(*labels);
	struct shm_owner_ref *owners = (struct shm_owner_ref *)m;
	m += (size_t)nown * sizeof(*owners);
	const uint8_t *v = rb + sizeof(rec);
	obj->payload = m;
	if (rec.payload_len)
		memcpy(m, v + rec.uid_len + rec.name_len + rec.rv_len, rec.payload_len);
	m += (rec.payload_len + 7) & ~(size_t)7;
	char *cur = (char *)m;
	obj->ns = put_str(&cur, nsb, nsl);
	obj->name = put_str(&cur, v + rec.uid_len, rec.name_len);
	if (rec.flags & SHM_ABI_REC_UID_BIN) {
		char u[37];
		shm_uid_unpack(v, u);
		obj->uid = put_str(&cur, u, 36);
	} else {
		obj->uid = put_str(&cur, v, rec.uid_len);
	}
	obj->rv = put_str(&cur, v + rec.uid_len + rec.name_len, rec.rv_len);
	/* labels: the atom's "k\0v\0" bytes are copied once and pointed into */
	char *lcopy = cur;
	if (ll)
		memcpy(lcopy, lb, ll);
	cur += ll;
	for (size_t i = 0, o = 0; i < nlab; i++) {
		labels[i].key = lcopy + o;
		o += strlen(lcopy + o) + 1;
		labels[i].value = lcopy + o;
		o += strlen(lcopy + o) + 1;
	}
	for (size_t i = 0, o = 0; i < (size_t)nown; i++) {
		struct shm_abi_owner oh;
		memcpy(&oh, ob + o, sizeof(oh));
		o += sizeof(oh);
		owners[i].uid = put_str(&cur, ob + o, oh.uid_len);
		o += oh.uid_len;
		owners[i].api_version = put_str(&cur, ob + o, oh.api_version_len);
		o += oh.api_version_len;
		owners[i].kind = put_str(&cur, ob + o, oh.kind_len);
		o += oh.kind_len;
		owners[i].name = put_str(&cur, ob + o, oh.name_len);
		o += oh.name_len;
		owners[i].controller =
		        (oh.flags & SHM_ABI_OWNER_CONTROLLER_SET)
		                ? (int8_t)((oh.flags & SHM_ABI_OWNER_CONTROLLER) != 0)
		                : -1;
		owners[i].block_owner_deletion =
		        (oh.flags & SHM_ABI_OWNER_BLOCK_SET)
		                ? (int8_t)((oh.flags & SHM_ABI_OWNER_BLOCK) != 0)
		                : -1;
	}
	obj->type = rec.type;
	obj->type_gen = rec.type_gen;
	obj->kind = (enum shm_record_kind)rec.payload_kind;
	obj->handle = h;
	obj->labels = labels;
	obj->n_labels = nlab;
	obj->owners = owners;
	obj->n_owners = (size_t)nown;
	obj->payload_len = rec.payload_len;
	return 0;
}

int shm_read_obj(struct shm_arena *a, uint32_t h, struct shm_obj *obj)
{
	for (int i = 0; i < SHM_READ_RETRIES; i++) {
		int r = read_obj_once(a, h, obj);
		if (r != -EAGAIN)
			return r;
	}
	return -EAGAIN;
}

void shm_obj_release(struct shm_obj *obj)
{
	if (!obj)
		return;
	free(obj->mem_);
	*obj = (struct shm_obj){0};
}

const struct shm_owner_ref *shm_obj_controller(const struct shm_obj *obj)
{
	for (size_t i = 0; obj && i < obj->n_owners; i++)
		if (obj->owners[i].controller == 1)
			return &obj->owners[i];
	return NULL;
}

const char *shm_obj_label(const struct shm_obj *obj, const char *key)
{
	for (size_t i = 0; obj && key && i < obj->n_labels; i++)
		if (strcmp(obj->labels[i].key, key) == 0)
			return obj->labels[i].value;
	return NULL;
}

/* ---- index walks ------------------------------------------------------------------------------
 */
/* Validate a table ref: returns the table (and its gen) or NULL. */
/* Opens the table block ref; *ret_cap is its capacity as validated against the block's size
 * (callers use this copy: the word in shared memory may change under them). */
static struct shm_abi_table *table_open(struct shm_arena *a, uint64_t ref, uint64_t *ret_gen,
                                        uint32_t *ret_cap)
{
	uint64_t off = shm_ref_off(ref);
	uint64_t size = atomic_load_explicit(&a->hdr->size, memory_order_acquire);
	uint64_t cs = shm_block_class_size(a, off, size);
	if (!cs)
		return NULL;
	struct shm_abi_block *b = shm_blk(a, off);
	/* acquire: pairs with w_close (the table's cap and zeroed slots are visible). */
	uint64_t w = atomic_load_explicit(&b->word, memory_order_acquire);
	uint32_t g = SHM_ABI_WORD_GEN(w);
	if ((g & 1) || shm_gen16(g) != shm_ref_gen16(ref) ||
	    SHM_ABI_WORD_KIND(w) != SHM_ABI_BLK_TABLE)
		return NULL;
	struct shm_abi_table *t = (struct shm_abi_table *)((uint8_t *)b + SHM_ABI_BLK_HDR);
	uint64_t w0 = atomic_load_explicit((_Atomic uint64_t *)t, memory_order_relaxed);
	uint32_t cap = (uint32_t)w0;
	if (cap == 0 || (cap & (cap - 1)) || SHM_ABI_BLK_HDR + sizeof(*t) + (uint64_t)cap * 8 > cs)
		return NULL;
	*ret_gen = w;
	*ret_cap = cap;
	return t;
}

static bool still(struct shm_abi_table *t, uint64_t gen)
{
	struct shm_abi_block *b = (struct shm_abi_block *)((uint8_t *)t - SHM_ABI_BLK_HDR);
	/* acquire fence: slot loads above happen before the re-check (pairs with w_alloc's
	 * release fence after the odd gen of a reuse). */
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(&b->word, memory_order_relaxed) == gen;
}

static int hv_push(struct shm_arena *a, uint32_t h)
{
	if (a->hv_len == a->hv_cap) {
		size_t c = a->hv_cap ? a->hv_cap * 2 : 256;
		uint32_t *p = realloc(a->hv, c * sizeof(*p));
		if (!p)
			return -ENOMEM;
		a->hv = p;
		a->hv_cap = c;
	}
	a->hv[a->hv_len++] = h;
	return 0;
}

/* Append every live handle of the handle table under root to a->hv. */
static int collect_table(struct shm_arena *a, _Atomic uint64_t *root)
{
	size_t base = a->hv_len;
	for (int tries = 0; tries < SHM_READ_RETRIES; tries++) {
		a->hv_len = base;
		/* acquire: pairs with the release store of a rebuilt table into the root. */
		uint64_t ref = atomic_load_explicit(root, memory_order_acquire);
		if (!ref)
			return 0;
		uint64_t g;
		uint32_t cap;
		struct shm_abi_table *t = table_open(a, ref, &g, &cap);
		if (!t)
			continue;
		_Atomic uint64_t *s = shm_tab_slots(t);
		for (uint32_t i = 0; i < cap; i++) {
			/* acquire: pairs with tab_put's release (the handle slot is published). */
			uint64_t v = atomic_load_explicit(&s[i], memory_order_acquire);
			if (v && (uint32_t)v != SHM_ABI_TOMB) {
				int r = hv_push(a, (uint32_t)v);
				if (r < 0)
					return r;
			}
		}
		if (still(t, g))
			return 0;
	}
	return -EAGAIN;
}

/* Append the members of key's set in the multi-index under root to a->hv. */
static int collect_set(struct shm_arena *a, _Atomic uint64_t *root, uint64_t key)
{
	size_t base = a->hv_len;
	for (int tries = 0; tries < SHM_READ_RETRIES; tries++) {
		a->hv_len = base;
		uint64_t ref =
		        atomic_load_explicit(root, memory_order_acquire); /* pairs: multi_rebuild */
		if (!ref)
			return 0;
		uint64_t g;
		uint32_t cap;
		struct shm_abi_table *t = table_open(a, ref, &g, &cap);
		if (!t)
			continue;
		uint32_t mask = cap - 1;
		_Atomic uint64_t *s = shm_tab_slots(t);
		bool retry = false;
		uint64_t size = atomic_load_explicit(&a->hdr->size, memory_order_acquire);
		for (uint32_t i = (uint32_t)(key >> 32) & mask, n = 0; n < cap;
		     i = (i + 1) & mask, n++) {
			/* acquire: pairs with multi_put / shm_mset_add's release of a closed set.
			 */
			uint64_t v = atomic_load_explicit(&s[i], memory_order_acquire);
			if (v == 0)
				break;
			if (v == SHM_ABI_TOMB64 || shm_ref_aux(v) != (key >> 48))
				continue;
			uint64_t off = shm_ref_off(v);
			uint64_t cs = shm_block_class_size(a, off, size);
			struct shm_abi_block *b = shm_blk(a, off);
			if (!cs) {
				retry = true;
				break;
			}
			uint64_t sg = atomic_load_explicit(
			        &b->word, memory_order_acquire); /* pairs: w_close */
			struct shm_abi_set *st =
			        (struct shm_abi_set *)((uint8_t *)b + SHM_ABI_BLK_HDR);
			uint64_t kh = atomic_load_explicit((_Atomic uint64_t *)&st->key_hash,
			                                   memory_order_relaxed);
			uint64_t w1 = atomic_load_explicit((_Atomic uint64_t *)&st->key_hash + 1,
			                                   memory_order_relaxed);
			uint32_t scap = (uint32_t)w1;
			if ((SHM_ABI_WORD_GEN(sg) & 1) ||
			    shm_gen16(SHM_ABI_WORD_GEN(sg)) != shm_ref_gen16(v) ||
			    SHM_ABI_WORD_KIND(sg) != SHM_ABI_BLK_SET || scap == 0 ||
			    SHM_ABI_BLK_HDR + sizeof(*st) + (uint64_t)scap * 4 > cs) {
				retry = true;
				break;
			}
			if (kh != key)
				continue;
			_Atomic uint32_t *ss = shm_set_slots(st);
			for (uint32_t j = 0; j < scap; j++) {
				/* acquire: pairs with set_put's release (the handle slot is
				 * published). */
				uint32_t hv = atomic_load_explicit(&ss[j], memory_order_acquire);
				if (hv && hv != SHM_ABI_TOMB) {
					int r = hv_push(a, hv);
					if (r < 0)
						return r;
				}
			}
			atomic_thread_fence(
			        memory_order_acquire); /* the slot loads before the re-check */
			if (atomic_load_explicit(&b->word, memory_order_relaxed) != sg) {
				retry = true;
				break;
			}
			break; /* one set per key */
		}
		if (!retry && still(t, g))
			return 0;
	}
	return -EAGAIN;
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t p = *(const uint32_t *)x, q = *(const uint32_t *)y;
	return p < q ? -1 : p > q;
}

/* The entry of a registered type id, or NULL (T3: no chunk published yet = unknown id). */
static struct shm_abi_type *type_ok(struct shm_arena *a, unsigned type)
{
	struct shm_abi_type *t = shm_type_entry(a, type);
	/* acquire: pairs with register_type's release (strings, kind). */
	return t && SHM_ABI_TYPE_STATUS(atomic_load_explicit(&t->state, memory_order_acquire)) ==
	                               SHM_ABI_TYPE_REGISTERED
	               ? t
	               : NULL;
}

static void copy_fixed(char *dst, const char *src)
{
	memcpy(dst, src, SHM_ABI_NAME_MAX);
	dst[SHM_ABI_NAME_MAX] = 0;
}

/* T2: copies the strings of a registered slot, validated against a re-registration (seqlock
 * rule: state before and after, acquire fence between). 0, -ENOENT not registered, -EAGAIN. */
static int type_snapshot(struct shm_arena *a, unsigned type, struct shm_type_info *ti)
{
	struct shm_abi_type *t = shm_type_entry(a, type);
	if (!t)
		return -ENOENT;
	for (int tries = 0; tries < SHM_READ_RETRIES; tries++) {
		/* acquire: pairs with register_type's release store of REGISTERED */
		uint64_t s1 = atomic_load_explicit(&t->state, memory_order_acquire);
		if (SHM_ABI_TYPE_STATUS(s1) != SHM_ABI_TYPE_REGISTERED)
			return -ENOENT;
		copy_fixed(ti->group, t->group);
		copy_fixed(ti->version, t->version);
		copy_fixed(ti->resource, t->resource);
		copy_fixed(ti->kind, t->kind);
		ti->record_kind = (enum shm_record_kind)t->record_kind;
		/* acquire fence: the copies above before the re-check; pairs with the writer's
		 * release fence after it stored WRITING */
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&t->state, memory_order_relaxed) == s1) {
			ti->gen = SHM_ABI_TYPE_GEN(s1);
			return 0;
		}
	}
	return -EAGAIN;
}

/* ---- lookups ------------------------------------------------------------------------------------
 */
typedef bool (*match_fn)(const struct shm_obj *o, const void *arg);

static int probe_get(struct shm_arena *a, _Atomic uint64_t *root, uint64_t key, match_fn match,
                     const void *arg, struct shm_obj *obj)
{
	for (int tries = 0; tries < SHM_READ_RETRIES; tries++) {
		uint64_t ref =
		        atomic_load_explicit(root, memory_order_acquire); /* pairs: tab_rebuild */
		if (!ref)
			return -ENOENT;
		uint64_t g;
		uint32_t cap;
		struct shm_abi_table *t = table_open(a, ref, &g, &cap);
		if (!t)
			continue;
		uint32_t mask = cap - 1;
		_Atomic uint64_t *s = shm_tab_slots(t);
		for (uint32_t i = (uint32_t)(key >> 32) & mask, n = 0; n < cap;
		     i = (i + 1) & mask, n++) {
			uint64_t v = atomic_load_explicit(
			        &s[i], memory_order_acquire); /* pairs: tab_put */
			if (v == 0)
				break;
			if ((uint32_t)v == SHM_ABI_TOMB || (v >> 32) != (key >> 32))
				continue;
			int r = shm_read_obj(a, (uint32_t)v, obj);
			if (r == -ENOENT)
				continue;
			if (r < 0)
				return r;
			if (match(obj, arg))
				return 0;
		}
		/* A miss counts only if the table stayed the published one (A4: a concurrent
		 * rebuild could have moved the key). */
		if (still(t, g) && atomic_load_explicit(root, memory_order_acquire) == ref)
			return -ENOENT;
	}
	return -EAGAIN;
}

struct name_arg {
	unsigned type;
	const char *ns, *name;
};

static bool match_name(const struct shm_obj *o, const void *arg)
{
	const struct name_arg *n = arg;
	return o->type == n->type && strcmp(o->ns, n->ns) == 0 && strcmp(o->name, n->name) == 0;
}

static bool match_uid(const struct shm_obj *o, const void *arg)
{
	return strcmp(o->uid, arg) == 0;
}

int shm_reader_get(struct shm_arena *a, uint16_t type, const char *ns, const char *name,
                   struct shm_obj *obj)
{
	struct shm_abi_type *t;
	if (!a || !name || !obj || !(t = type_ok(a, type)))
		return -EINVAL;
	ns = ns ? ns : "";
	struct name_arg arg = {type, ns, name};
	uint64_t key = shm_key_name(a->seed, ns, strlen(ns), name, strlen(name));
	return probe_get(a, &t->name_index, key, match_name, &arg, obj);
}

int shm_reader_get_uid(struct shm_arena *a, const char *uid, struct shm_obj *obj)
{
	if (!a || !uid || !obj)
		return -EINVAL;
	uint64_t key = shm_key_uid(a->seed, uid, strlen(uid));
	return probe_get(a, &a->hdr->uid_index, key, match_uid, uid, obj);
}

/* ---- iteration ----------------------------------------------------------------------------------
 */
struct filter {
	unsigned type;     /* SHM_ABI_MAX_TYPES = any */
	const char *ns;    /* NULL = any */
	const char *owner; /* controller uid, or any owner if any_owner */
	bool any_owner;
	const char *orphan_ns; /* also accept objects of this ns without controller */
	const char *node;      /* bound to this node (shm_rec_pod_node); NULL = any */
};

static bool pass(const struct filter *f, const struct shm_obj *o)
{
	if (f->type < SHM_ABI_MAX_TYPES && o->type != f->type)
		return false;
	if (f->ns && strcmp(o->ns, f->ns) != 0)
		return false;
	if (f->node) {
		const char *nd;
		size_t nl;
		if (o->kind != SHM_RECORD_POD ||
		    shm_rec_pod_node(o->payload, o->payload_len, &nd, &nl) <= 0 ||
		    strcmp(nd, f->node) != 0)
			return false;
	}
	if (!f->owner)
		return true;
	if (f->any_owner) {
		for (size_t i = 0; i < o->n_owners; i++)
			if (strcmp(o->owners[i].uid, f->owner) == 0)
				return true;
		return false;
	}
	const struct shm_owner_ref *c = shm_obj_controller(o);
	if (c)
		return strcmp(c->uid, f->owner) == 0;
	return f->orphan_ns && strcmp(o->ns, f->orphan_ns) == 0;
}

static int visit(struct shm_arena *a, size_t from, bool dedupe, const struct filter *f,
                 shm_visit_fn fn, void *ud)
{
	size_t n = a->hv_len - from;
	if (dedupe && n > 1) {
		qsort(a->hv + from, n, sizeof(uint32_t), cmp_u32);
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if (k == 0 || a->hv[from + i] != a->hv[from + k - 1])
				a->hv[from + k++] = a->hv[from + i];
		n = k;
	}
	/* The handle list is copied: a callback may itself read the arena. */
	uint32_t *hs = malloc((n ? n : 1) * sizeof(*hs));
	if (!hs)
		return -ENOMEM;
	if (n)
		memcpy(hs, a->hv + from, n * sizeof(*hs));
	a->hv_len = from;
	struct shm_obj o = SHM_OBJ_INIT;
	int r = 0, count = 0;
	for (size_t i = 0; i < n; i++) {
		r = shm_read_obj(a, hs[i], &o);
		if (r == -ENOENT) {
			r = 0;
			continue;
		}
		if (r < 0)
			break;
		if (!pass(f, &o))
			continue;
		count++;
		if (fn && (r = fn(&o, ud)) < 0)
			break;
		r = 0;
	}
	shm_obj_release(&o);
	free(hs);
	return r < 0 ? r : count;
}

int shm_reader_list(struct shm_arena *a, uint16_t type, shm_visit_fn fn, void *ud)
{
	struct shm_abi_type *t;
	if (!a || !(t = type_ok(a, type)))
		return -EINVAL;
	size_t from = a->hv_len;
	int r = collect_table(a, &t->name_index);
	if (r < 0)
		return r;
	struct filter f = {.type = type};
	return visit(a, from, false, &f, fn, ud);
}

int shm_reader_list_ns(struct shm_arena *a, uint16_t type, const char *ns, shm_visit_fn fn,
                       void *ud)
{
	struct shm_abi_type *t;
	if (!a || !(t = type_ok(a, type)))
		return -EINVAL;
	ns = ns ? ns : "";
	size_t from = a->hv_len;
	int r = collect_set(a, &t->ns_index, shm_key_ns(a->seed, ns, strlen(ns)));
	if (r < 0)
		return r;
	struct filter f = {.type = type, .ns = ns};
	return visit(a, from, false, &f, fn, ud);
}

int shm_reader_list_node(struct shm_arena *a, uint16_t type, const char *node, shm_visit_fn fn,
                         void *ud)
{
	struct shm_abi_type *t;
	if (!a || !node || !*node || !(t = type_ok(a, type)))
		return -EINVAL;
	size_t from = a->hv_len;
	int r = collect_set(a, &t->node_index, shm_key_node(a->seed, node, strlen(node)));
	if (r < 0)
		return r;
	struct filter f = {.type = type, .node = node};
	return visit(a, from, false, &f, fn, ud);
}

int shm_reader_list_controlled(struct shm_arena *a, uint16_t type, const char *owner_uid,
                               const char *ns, shm_visit_fn fn, void *ud)
{
	struct shm_abi_type *t;
	if (!a || !owner_uid || !(t = type_ok(a, type)))
		return -EINVAL;
	size_t from = a->hv_len;
	int r = collect_set(a, &a->hdr->owner_index,
	                    shm_key_owner(a->seed, owner_uid, strlen(owner_uid)));
	if (r >= 0 && ns)
		r = collect_set(a, &t->orphan_index, shm_key_ns(a->seed, ns, strlen(ns)));
	if (r < 0) {
		a->hv_len = from;
		return r;
	}
	struct filter f = {.type = type, .owner = owner_uid, .orphan_ns = ns};
	return visit(a, from, true, &f, fn, ud);
}

int shm_reader_list_dependents(struct shm_arena *a, const char *owner_uid, shm_visit_fn fn,
                               void *ud)
{
	if (!a || !owner_uid)
		return -EINVAL;
	size_t from = a->hv_len;
	int r = collect_set(a, &a->hdr->owner_index,
	                    shm_key_owner(a->seed, owner_uid, strlen(owner_uid)));
	if (r < 0)
		return r;
	struct filter f = {.type = SHM_ABI_MAX_TYPES, .owner = owner_uid, .any_owner = true};
	return visit(a, from, false, &f, fn, ud);
}

/* ---- resource table and statistics -------------------------------------------------------------
 */
static bool type_is(struct shm_arena *a, unsigned id, const char *group, const char *version,
                    const char *resource)
{
	struct shm_type_info ti;
	return type_ok(a, id) && type_snapshot(a, id, &ti) == 0 && strcmp(ti.group, group) == 0 &&
	       strcmp(ti.version, version) == 0 && strcmp(ti.resource, resource) == 0;
}

static uint64_t gvr_hash(struct shm_arena *a, const char *group, const char *version,
                         const char *resource)
{
	uint64_t h = shm_hash(a->seed ^ 5, group, strlen(group));
	h = shm_hash(h, version, strlen(version));
	h = shm_hash(h, resource, strlen(resource));
	return h ? h : 1; /* 0 marks an empty hint */
}

/* Remember that (group, version, resource) is type id: the entry with the same hash is
 * overwritten (a GVR's slot moved, or a 64-bit collision: hints are only hints). A failed
 * allocation leaves the table as it was (the next lookup scans again). */
static void hint_put(struct shm_arena *a, uint64_t h, uint32_t id)
{
	if ((a->th_len + 1) * 2 > a->th_cap) {
		size_t cap = a->th_cap ? a->th_cap * 2 : 64;
		struct shm_type_hint *n = calloc(cap, sizeof(*n));
		if (!n)
			return;
		for (size_t i = 0; i < a->th_cap; i++) {
			if (!a->th[i].h)
				continue;
			size_t j = a->th[i].h & (cap - 1);
			while (n[j].h)
				j = (j + 1) & (cap - 1);
			n[j] = a->th[i];
		}
		free(a->th);
		a->th = n;
		a->th_cap = cap;
	}
	size_t j = h & (a->th_cap - 1);
	while (a->th[j].h && a->th[j].h != h)
		j = (j + 1) & (a->th_cap - 1);
	if (!a->th[j].h)
		a->th_len++;
	a->th[j] = (struct shm_type_hint){.h = h, .id = id};
}

int shm_reader_find_type(struct shm_arena *a, const char *group, const char *version,
                         const char *resource)
{
	if (!a || !version || !resource)
		return -EINVAL;
	group = group ? group : "";
	uint64_t h = gvr_hash(a, group, version, resource);
	if (a->th_cap) {
		size_t j = h & (a->th_cap - 1);
		for (; a->th[j].h; j = (j + 1) & (a->th_cap - 1))
			if (a->th[j].h == h) {
				if (type_is(a, a->th[j].id, group, version, resource))
					return (int)a->th[j].id;
				break; /* stale: the slot was retired or reused */
			}
	}
	uint64_t n = atomic_load_explicit(&a->hdr->n_types, memory_order_acquire);
	for (unsigned i = 0; i < n && i < SHM_ABI_MAX_TYPES; i++) {
		if (type_is(a, i, group, version, resource)) {
			hint_put(a, h, i);
			return (int)i;
		}
	}
	return -ENOENT;
}

/* The acquisition barrier (arena.h shm_reader_set_epoch_source): written once at start-up. */
static uint32_t (*epoch_source)(void);

void shm_reader_set_epoch_source(uint32_t (*fn)(void))
{
	epoch_source = fn;
}

int shm_reader_type_info(struct shm_arena *a, uint16_t type, struct shm_type_info *ret)
{
	struct shm_abi_type *t;
	if (!a || !ret || !(t = type_ok(a, type)))
		return -EINVAL;
	uint64_t words[SHM_ABI_SYNC_WORDS];
	struct shm_type_info ti = {.id = type};
	for (int tries = 0;; tries++) {
		if (tries >= SHM_READ_RETRIES)
			return -EAGAIN;
		/* T2 first: the sync words read next belong to this registration only if the slot
		 * still has the same state afterwards (a re-registration resets them) */
		int r = type_snapshot(a, type, &ti);
		if (r < 0)
			return r == -ENOENT ? -EINVAL : r;
		/* acquire: pairs with set_sync's release store of sync_seq (the copy is complete).
		 */
		uint64_t s1 = atomic_load_explicit(&t->sync_seq, memory_order_acquire);
		for (unsigned i = 0; i < SHM_ABI_SYNC_WORDS; i++)
			words[i] = atomic_load_explicit(&t->sync[s1 & 1][i], memory_order_relaxed);
		atomic_thread_fence(
		        memory_order_acquire); /* copy before the re-check (latch rule) */
		if (atomic_load_explicit(&t->sync_seq, memory_order_relaxed) == s1 &&
		    atomic_load_explicit(&t->state, memory_order_relaxed) ==
		            SHM_ABI_TYPE_STATE(ti.gen, SHM_ABI_TYPE_REGISTERED))
			break;
	}
	memcpy(ti.rv, words, SHM_ABI_RV_MAX);
	ti.rv[SHM_ABI_RV_MAX] = 0;
	ti.synced = (words[SHM_ABI_SYNC_WORDS - 1] & SHM_ABI_SYNC_SYNCED) != 0;
	ti.sync_epoch = (uint32_t)(words[SHM_ABI_SYNC_WORDS - 1] >> SHM_ABI_SYNC_EPOCH_SHIFT);
	if (epoch_source) {
		uint32_t cur = epoch_source();
		if (cur && ti.sync_epoch != cur)
			ti.synced = false; /* listed before this kcmd won its Lease: not yet */
	}
	ti.count = atomic_load_explicit(&t->count, memory_order_relaxed);
	*ret = ti;
	return 0;
}

int shm_reader_stats(struct shm_arena *a, struct shm_stats *ret)
{
	if (!a || !ret)
		return -EINVAL;
	struct shm_abi_header *h = a->hdr;
	/* relaxed: independent counters for display; no decision is taken on their combination. */
	*ret = (struct shm_stats){
	        .size = atomic_load_explicit(&h->size, memory_order_relaxed),
	        .max_size = h->max_size,
	        .carved = atomic_load_explicit(&h->carved, memory_order_relaxed),
	        .incarnation = atomic_load_explicit(&h->incarnation, memory_order_relaxed),
	        .change_seq = atomic_load_explicit(&h->change_seq, memory_order_relaxed),
	        .recoveries = atomic_load_explicit(&h->stat_recoveries, memory_order_relaxed),
	        .objects = atomic_load_explicit(&h->stat_objects, memory_order_relaxed),
	        .handles_hw = atomic_load_explicit(&h->handles_hw, memory_order_relaxed),
	        .n_types = atomic_load_explicit(&h->n_types, memory_order_relaxed),
	        .live_bytes = atomic_load_explicit(&h->stat_live_bytes, memory_order_relaxed),
	        .quarantine_bytes =
	                atomic_load_explicit(&h->stat_quarantine_bytes, memory_order_relaxed),
	        .free_bytes = atomic_load_explicit(&h->stat_free_bytes, memory_order_relaxed),
	        .violations = atomic_load_explicit(&h->stat_violations, memory_order_relaxed),
	};
	return 0;
}

uint64_t shm_reader_change_seq(struct shm_arena *a)
{
	/* acquire: pairs with bump_change's release (changes before it are visible). */
	return a ? atomic_load_explicit(&a->hdr->change_seq, memory_order_acquire) : 0;
}
