/* SPDX-License-Identifier: Apache-2.0 */
/* shm/index.c - the writer's side of the indexes: handle tables and multi-index sets.
 *
 * Every change a reader can observe is one atomic store: a slot filled (release, after the
 * handle slot it names was published), a slot tombstoned, or a root switched to a rebuilt table
 * (release, after the table was filled). Tables are never shifted or moved in place, so a reader
 * probing concurrently sees each slot either before or after a change, and a table replaced
 * while it probes is still intact (it sits in quarantine) until reused; readers check the
 * table's generation after probing to notice that.
 *
 * Sizing: a table or set is rebuilt when live + tombstones would exceed 3/4 of its capacity,
 * to the power of two that puts the live entries at 1/4..1/2; sets also shrink when they fall
 * under 1/8. Tombstones are therefore reclaimed by rebuilds and memory follows the live count.
 */
#include <errno.h>
#include <string.h>

#include "shm/index.h"

static uint32_t cap_for(uint64_t n, uint32_t min)
{
	uint64_t c = min;
	while (c < n * 2 + 2)
		c *= 2;
	return c > (UINT64_C(1) << 31) ? (uint32_t)(UINT64_C(1) << 31) : (uint32_t)c;
}

/* Allocate a zeroed, closed table; returns its ref through ret_ref. */
static int tab_new(struct shm_arena *a, uint32_t kind, uint32_t cap, uint64_t *ret_ref)
{
	uint64_t off;
	size_t body = sizeof(struct shm_abi_table) + (size_t)cap * 8;
	int r = w_alloc(a, body, SHM_ABI_BLK_TABLE, &off);
	if (r < 0)
		return r;
	uint64_t hd[4] = {(uint64_t)cap | ((uint64_t)kind << 32), 0, 0, 0};
	shm_copy_in(shm_body(a, off), hd, sizeof(hd));
	w_zero(a, off, sizeof(struct shm_abi_table), (size_t)cap * 8);
	*ret_ref = shm_ref_make(off, w_close(a, off), 0);
	return 0;
}

static int set_new(struct shm_arena *a, uint64_t key, uint32_t cap, uint64_t *ret_off)
{
	uint64_t off;
	size_t slots = ((size_t)cap * 4 + 7) & ~(size_t)7;
	int r = w_alloc(a, sizeof(struct shm_abi_set) + slots, SHM_ABI_BLK_SET, &off);
	if (r < 0)
		return r;
	uint64_t hd[4] = {key, cap, 0, 0};
	shm_copy_in(shm_body(a, off), hd, sizeof(hd));
	w_zero(a, off, sizeof(struct shm_abi_set), slots);
	*ret_off = off; /* still open: the caller fills and closes it */
	return 0;
}

/* ---- handle tables ----------------------------------------------------------------------------
 */
static void tab_put(struct shm_abi_table *t, uint64_t slot)
{
	_Atomic uint64_t *s = shm_tab_slots(t);
	uint32_t mask = t->cap - 1;
	for (uint32_t i = (uint32_t)(slot >> 32) & mask;; i = (i + 1) & mask) {
		uint64_t v = atomic_load_explicit(&s[i], memory_order_relaxed);
		if (v == 0 || (uint32_t)v == SHM_ABI_TOMB) {
			/* release: the handle slot this entry names was published before (pairs
			 * with the reader's acquire load of index slots). */
			atomic_store_explicit(&s[i], slot, memory_order_release);
			if (v)
				atomic_fetch_sub_explicit(&t->tombs, 1, memory_order_relaxed);
			atomic_fetch_add_explicit(&t->count, 1, memory_order_relaxed);
			return;
		}
	}
}

static int tab_rebuild(struct shm_arena *a, _Atomic uint64_t *root, uint64_t need)
{
	uint64_t old = atomic_load_explicit(root, memory_order_relaxed);
	uint64_t nref;
	int r = tab_new(a, SHM_ABI_TAB_HANDLES, cap_for(need, 16), &nref);
	if (r < 0)
		return r;
	struct shm_abi_table *nt = shm_tab_at(a, nref);
	if (old) {
		struct shm_abi_table *ot = shm_tab_at(a, old);
		_Atomic uint64_t *s = shm_tab_slots(ot);
		for (uint32_t i = 0; i < ot->cap; i++) {
			uint64_t v = atomic_load_explicit(&s[i], memory_order_relaxed);
			if (v && (uint32_t)v != SHM_ABI_TOMB)
				tab_put(nt, v);
		}
	}
	SHM_CRASH_POINT(7); /* a full new table, never published: swept by the next recovery */
	/* release: the filled table before the root names it (pairs: reader acquire of root). */
	atomic_store_explicit(root, nref, memory_order_release);
	if (old)
		w_free(a, shm_ref_off(old));
	return 0;
}

int shm_tab_reserve(struct shm_arena *a, _Atomic uint64_t *root, uint64_t n)
{
	return tab_rebuild(a, root, n);
}

int shm_tab_insert(struct shm_arena *a, _Atomic uint64_t *root, uint64_t key, uint32_t h)
{
	uint64_t ref = atomic_load_explicit(root, memory_order_relaxed);
	if (ref) {
		struct shm_abi_table *t = shm_tab_at(a, ref);
		uint64_t c = atomic_load_explicit(&t->count, memory_order_relaxed);
		uint64_t tb = atomic_load_explicit(&t->tombs, memory_order_relaxed);
		if ((c + tb + 1) * 4 <= (uint64_t)t->cap * 3) {
			tab_put(t, (key >> 32) << 32 | h);
			return 0;
		}
	}
	uint64_t c =
	        ref ? atomic_load_explicit(&shm_tab_at(a, ref)->count, memory_order_relaxed) : 0;
	int r = tab_rebuild(a, root, c + 1);
	if (r < 0)
		return r;
	tab_put(shm_tab_at(a, atomic_load_explicit(root, memory_order_relaxed)),
	        (key >> 32) << 32 | h);
	return 0;
}

static _Atomic uint64_t *tab_find(struct shm_arena *a, _Atomic uint64_t *root, uint64_t key,
                                  uint32_t h)
{
	uint64_t ref = atomic_load_explicit(root, memory_order_relaxed);
	if (!ref)
		return NULL;
	struct shm_abi_table *t = shm_tab_at(a, ref);
	_Atomic uint64_t *s = shm_tab_slots(t);
	uint32_t mask = t->cap - 1;
	uint64_t want = (key >> 32) << 32 | h;
	for (uint32_t i = (uint32_t)(key >> 32) & mask, n = 0; n < t->cap;
	     i = (i + 1) & mask, n++) {
		uint64_t v = atomic_load_explicit(&s[i], memory_order_relaxed);
		if (v == 0)
			return NULL;
		if (v == want)
			return &s[i];
	}
	return NULL;
}

int shm_tab_remove(struct shm_arena *a, _Atomic uint64_t *root, uint64_t key, uint32_t h)
{
	_Atomic uint64_t *s = tab_find(a, root, key, h);
	if (!s)
		return -ENOENT;
	struct shm_abi_table *t = shm_tab_at(a, atomic_load_explicit(root, memory_order_relaxed));
	/* release: readers that see the tombstone see everything before it (nothing they need;
	 * kept release for uniformity of index slot stores). */
	atomic_store_explicit(s, (key >> 32) << 32 | SHM_ABI_TOMB, memory_order_release);
	atomic_fetch_sub_explicit(&t->count, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&t->tombs, 1, memory_order_relaxed);
	return 0;
}

bool shm_tab_contains(struct shm_arena *a, _Atomic uint64_t *root, uint64_t key, uint32_t h)
{
	return tab_find(a, root, key, h) != NULL;
}

int shm_tab_candidates(struct shm_arena *a, _Atomic uint64_t *root, uint64_t key, uint32_t *out,
                       int max)
{
	uint64_t ref = atomic_load_explicit(root, memory_order_relaxed);
	if (!ref)
		return 0;
	struct shm_abi_table *t = shm_tab_at(a, ref);
	_Atomic uint64_t *s = shm_tab_slots(t);
	uint32_t mask = t->cap - 1;
	int k = 0;
	for (uint32_t i = (uint32_t)(key >> 32) & mask, n = 0; n < t->cap;
	     i = (i + 1) & mask, n++) {
		uint64_t v = atomic_load_explicit(&s[i], memory_order_relaxed);
		if (v == 0)
			break;
		if ((uint32_t)v != SHM_ABI_TOMB && (v >> 32) == (key >> 32) && k < max)
			out[k++] = (uint32_t)v;
	}
	return k;
}

uint64_t shm_tab_count(struct shm_arena *a, _Atomic uint64_t *root)
{
	uint64_t ref = atomic_load_explicit(root, memory_order_relaxed);
	if (!ref)
		return 0;
	struct shm_abi_table *t = shm_tab_at(a, ref);
	_Atomic uint64_t *s = shm_tab_slots(t);
	uint64_t n = 0;
	for (uint32_t i = 0; i < t->cap; i++) {
		uint64_t v = atomic_load_explicit(&s[i], memory_order_relaxed);
		n += v && (uint32_t)v != SHM_ABI_TOMB;
	}
	return n;
}

/* ---- multi-indexes ----------------------------------------------------------------------------
 */
static void set_put(struct shm_abi_set *st, uint32_t h)
{
	_Atomic uint32_t *s = shm_set_slots(st);
	uint32_t mask = st->cap - 1;
	for (uint32_t i = shm_mix32(h) & mask;; i = (i + 1) & mask) {
		uint32_t v = atomic_load_explicit(&s[i], memory_order_relaxed);
		if (v == 0 || v == SHM_ABI_TOMB) {
			/* release: pairs with the reader's acquire load of set slots (the handle
			 * slot named here was published before). */
			atomic_store_explicit(&s[i], h, memory_order_release);
			if (v)
				atomic_fetch_sub_explicit(&st->tombs, 1, memory_order_relaxed);
			atomic_fetch_add_explicit(&st->count, 1, memory_order_relaxed);
			return;
		}
	}
}

static _Atomic uint32_t *set_find(struct shm_abi_set *st, uint32_t h)
{
	_Atomic uint32_t *s = shm_set_slots(st);
	uint32_t mask = st->cap - 1;
	for (uint32_t i = shm_mix32(h) & mask, n = 0; n < st->cap; i = (i + 1) & mask, n++) {
		uint32_t v = atomic_load_explicit(&s[i], memory_order_relaxed);
		if (v == 0)
			return NULL;
		if (v == h)
			return &s[i];
	}
	return NULL;
}

/* The multi-table slot holding key's set, or NULL. */
static _Atomic uint64_t *multi_find(struct shm_arena *a, _Atomic uint64_t *root, uint64_t key)
{
	uint64_t ref = atomic_load_explicit(root, memory_order_relaxed);
	if (!ref)
		return NULL;
	struct shm_abi_table *t = shm_tab_at(a, ref);
	_Atomic uint64_t *s = shm_tab_slots(t);
	uint32_t mask = t->cap - 1;
	for (uint32_t i = (uint32_t)(key >> 32) & mask, n = 0; n < t->cap;
	     i = (i + 1) & mask, n++) {
		uint64_t v = atomic_load_explicit(&s[i], memory_order_relaxed);
		if (v == 0)
			return NULL;
		if (v == SHM_ABI_TOMB64 || shm_ref_aux(v) != (key >> 48))
			continue;
		if (shm_set_at(a, v)->key_hash == key)
			return &s[i];
	}
	return NULL;
}

static void multi_put(struct shm_arena *a, struct shm_abi_table *t, uint64_t setref)
{
	uint64_t key = shm_set_at(a, setref)->key_hash;
	_Atomic uint64_t *s = shm_tab_slots(t);
	uint32_t mask = t->cap - 1;
	for (uint32_t i = (uint32_t)(key >> 32) & mask;; i = (i + 1) & mask) {
		uint64_t v = atomic_load_explicit(&s[i], memory_order_relaxed);
		if (v == 0 || v == SHM_ABI_TOMB64) {
			/* release: the closed set before the slot naming it (pairs: reader
			 * acquire). */
			atomic_store_explicit(&s[i], setref, memory_order_release);
			if (v)
				atomic_fetch_sub_explicit(&t->tombs, 1, memory_order_relaxed);
			atomic_fetch_add_explicit(&t->count, 1, memory_order_relaxed);
			return;
		}
	}
}

static int multi_rebuild(struct shm_arena *a, _Atomic uint64_t *root, uint64_t need)
{
	uint64_t old = atomic_load_explicit(root, memory_order_relaxed);
	uint64_t nref;
	int r = tab_new(a, SHM_ABI_TAB_MULTI, cap_for(need, 16), &nref);
	if (r < 0)
		return r;
	struct shm_abi_table *nt = shm_tab_at(a, nref);
	if (old) {
		struct shm_abi_table *ot = shm_tab_at(a, old);
		_Atomic uint64_t *s = shm_tab_slots(ot);
		for (uint32_t i = 0; i < ot->cap; i++) {
			uint64_t v = atomic_load_explicit(&s[i], memory_order_relaxed);
			if (v && v != SHM_ABI_TOMB64)
				multi_put(a, nt, v);
		}
	}
	/* release: pairs with the reader's acquire load of the root. */
	atomic_store_explicit(root, nref, memory_order_release);
	if (old)
		w_free(a, shm_ref_off(old));
	return 0;
}

/* Copy st's members (plus h if nonzero) into a new set of capacity cap; closed; returns ref. */
static int set_rebuild(struct shm_arena *a, uint64_t key, struct shm_abi_set *st, uint32_t cap,
                       uint32_t h, uint64_t *ret_ref)
{
	uint64_t off;
	int r = set_new(a, key, cap, &off);
	if (r < 0)
		return r;
	struct shm_abi_set *ns = shm_body(a, off);
	if (st) {
		_Atomic uint32_t *s = shm_set_slots(st);
		for (uint32_t i = 0; i < st->cap; i++) {
			uint32_t v = atomic_load_explicit(&s[i], memory_order_relaxed);
			if (v && v != SHM_ABI_TOMB)
				set_put(ns, v);
		}
	}
	if (h)
		set_put(ns, h);
	*ret_ref = shm_ref_make(off, w_close(a, off), key >> 48);
	return 0;
}

int shm_mset_add(struct shm_arena *a, _Atomic uint64_t *root, uint64_t key, uint32_t h)
{
	_Atomic uint64_t *slot = multi_find(a, root, key);
	int r;
	if (!slot) {
		uint64_t ref = atomic_load_explicit(root, memory_order_relaxed);
		struct shm_abi_table *t = ref ? shm_tab_at(a, ref) : NULL;
		if (!t || (atomic_load_explicit(&t->count, memory_order_relaxed) +
		           atomic_load_explicit(&t->tombs, memory_order_relaxed) + 1) *
		                          4 >
		                  (uint64_t)t->cap * 3) {
			uint64_t c = t ? atomic_load_explicit(&t->count, memory_order_relaxed) : 0;
			if ((r = multi_rebuild(a, root, c + 1)) < 0)
				return r;
			t = shm_tab_at(a, atomic_load_explicit(root, memory_order_relaxed));
		}
		uint64_t sref;
		if ((r = set_rebuild(a, key, NULL, 4, h, &sref)) < 0)
			return r;
		multi_put(a, t, sref);
		return 0;
	}
	uint64_t sref = atomic_load_explicit(slot, memory_order_relaxed);
	struct shm_abi_set *st = shm_set_at(a, sref);
	if (set_find(st, h))
		return 0;
	uint64_t c = atomic_load_explicit(&st->count, memory_order_relaxed);
	if ((c + atomic_load_explicit(&st->tombs, memory_order_relaxed) + 1) * 4 <=
	    (uint64_t)st->cap * 3) {
		set_put(st, h);
		return 0;
	}
	uint64_t nref;
	if ((r = set_rebuild(a, key, st, cap_for(c + 1, 4), h, &nref)) < 0)
		return r;
	SHM_CRASH_POINT(8); /* the grown set is built, the old one still published */
	/* release: the new set replaces the old in one store (pairs: reader acquire of the slot).
	 */
	atomic_store_explicit(slot, nref, memory_order_release);
	w_free(a, shm_ref_off(sref));
	return 0;
}

void shm_mset_del(struct shm_arena *a, _Atomic uint64_t *root, uint64_t key, uint32_t h)
{
	_Atomic uint64_t *slot = multi_find(a, root, key);
	if (!slot)
		return;
	uint64_t sref = atomic_load_explicit(slot, memory_order_relaxed);
	struct shm_abi_set *st = shm_set_at(a, sref);
	_Atomic uint32_t *s = set_find(st, h);
	if (!s)
		return;
	atomic_store_explicit(s, SHM_ABI_TOMB, memory_order_release);
	uint64_t c = atomic_fetch_sub_explicit(&st->count, 1, memory_order_relaxed) - 1;
	atomic_fetch_add_explicit(&st->tombs, 1, memory_order_relaxed);
	if (c == 0) {
		struct shm_abi_table *t =
		        shm_tab_at(a, atomic_load_explicit(root, memory_order_relaxed));
		/* release: uniform with other index stores; readers then skip the slot. */
		atomic_store_explicit(slot, SHM_ABI_TOMB64, memory_order_release);
		atomic_fetch_sub_explicit(&t->count, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&t->tombs, 1, memory_order_relaxed);
		w_free(a, shm_ref_off(sref));
		return;
	}
	if (c * 8 < st->cap && st->cap > 8) {
		uint64_t nref;
		if (set_rebuild(a, key, st, cap_for(c, 4), 0, &nref) < 0)
			return; /* shrinking is optional */
		atomic_store_explicit(slot, nref, memory_order_release);
		w_free(a, shm_ref_off(sref));
	}
}

bool shm_mset_contains(struct shm_arena *a, _Atomic uint64_t *root, uint64_t key, uint32_t h)
{
	_Atomic uint64_t *slot = multi_find(a, root, key);
	return slot && set_find(shm_set_at(a, atomic_load_explicit(slot, memory_order_relaxed)), h);
}

uint64_t shm_mset_total(struct shm_arena *a, _Atomic uint64_t *root)
{
	uint64_t ref = atomic_load_explicit(root, memory_order_relaxed);
	if (!ref)
		return 0;
	struct shm_abi_table *t = shm_tab_at(a, ref);
	_Atomic uint64_t *s = shm_tab_slots(t);
	uint64_t n = 0;
	for (uint32_t i = 0; i < t->cap; i++) {
		uint64_t v = atomic_load_explicit(&s[i], memory_order_relaxed);
		if (v && v != SHM_ABI_TOMB64)
			n += atomic_load_explicit(&shm_set_at(a, v)->count, memory_order_relaxed);
	}
	return n;
}
