/* SPDX-License-Identifier: Apache-2.0 */
/* shm/arena.c - the arena's life cycle, the writer's allocator, atoms, records and recovery.
 *
 * The writer owns everything mutable; its bookkeeping (free lists, atom refcounts, the intern
 * map) lives in malloc'd memory and is rebuilt from the published state on every
 * shm_writer_open (mark, sweep, index rebuild). So kill -9 of the writer can tear nothing that a
 * successor depends on: the successor trusts only what readers trust, the refs in the header,
 * the handle table and the blocks they validate.
 *
 * Rejected: keeping free lists in shared memory (a killed writer tears them; recovery would have
 * to validate them anyway, and mark/sweep is O(arena) once per restart); coalescing allocators
 * (a block start could become the middle of another block: a stale ref would read payload
 * bytes as a generation).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shm/index.h"
#include "shm/records.h"
#include "shm/shm-internal.h"

unsigned shm__test_flags;
int shm__test_crash_point;
long shm__test_crash_count;
long shm__test_fail_alloc_at;

void shm__test_pause(void)
{
	struct timespec ts = {0, 20000};
	nanosleep(&ts, NULL);
}

void shm__crash_point(int n)
{
	(void)n;
	if (--shm__test_crash_count <= 0)
		raise(SIGKILL);
}

/* ---- hashing ----------------------------------------------------------------------------------
 */
static inline uint64_t fmix64(uint64_t k)
{
	k ^= k >> 33;
	k *= UINT64_C(0xff51afd7ed558ccd);
	k ^= k >> 33;
	k *= UINT64_C(0xc4ceb9fe1a85ec53);
	k ^= k >> 33;
	return k;
}

uint64_t shm_hash(uint64_t seed, const void *p, size_t n)
{
	const uint8_t *s = p;
	uint64_t h = seed ^ (n * UINT64_C(0x9e3779b97f4a7c15));
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		h ^= fmix64(w + UINT64_C(0x2545f4914f6cdd1d));
		h = (h << 27 | h >> 37) * UINT64_C(0x9e3779b97f4a7c15);
		s += 8;
		n -= 8;
	}
	uint64_t w = 0;
	memcpy(&w, s, n);
	h ^= fmix64(w ^ (n << 56));
	return fmix64(h);
}

uint64_t shm_key_name(uint64_t seed, const char *ns, size_t nsl, const char *name, size_t nl)
{
	return shm_hash(shm_hash(seed ^ 4, ns, nsl), name, nl);
}

/* ---- word copies ------------------------------------------------------------------------------
 */
void shm_copy_in(void *dst, const void *src, size_t len)
{
	_Atomic uint64_t *d = dst;
	const uint8_t *s = src;
	for (size_t i = 0; i < len / 8; i++) {
		uint64_t w;
		memcpy(&w, s + i * 8, 8);
		atomic_store_explicit(&d[i], w, memory_order_relaxed);
	}
}

void shm_copy_out(void *dst, const void *src, size_t len)
{
	_Atomic uint64_t *s = (_Atomic uint64_t *)src;
	uint8_t *d = dst;
	for (size_t i = 0; i < len / 8; i++) {
		uint64_t w = atomic_load_explicit(&s[i], memory_order_relaxed);
		memcpy(d + i * 8, &w, 8);
	}
}

/* ---- uids ---------------------------------------------------------------------------------------
 */
static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

bool shm_uid_pack(const char *uid, size_t len, uint8_t out[16])
{
	if (len != 36)
		return false;
	size_t j = 0;
	for (size_t i = 0; i < 36;) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (uid[i] != '-')
				return false;
			i++;
			continue;
		}
		int hi = hexval(uid[i]), lo = hexval(uid[i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		out[j++] = (uint8_t)(hi << 4 | lo);
		i += 2;
	}
	return true;
}

void shm_uid_unpack(const uint8_t in[16], char out[37])
{
	static const char hx[] = "0123456789abcdef";
	size_t j = 0;
	for (size_t i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[j++] = '-';
		out[j++] = hx[in[i] >> 4];
		out[j++] = hx[in[i] & 15];
	}
	out[j] = 0;
}

/* ---- classes and regions -------------------------------------------------------------------- */
static unsigned class_for(uint64_t total)
{
	if (total <= 256)
		return (unsigned)((total + 15) / 16 - 1);
	unsigned c = 16;
	while (c + 4 < SHM_ABI_NCLASSES && shm_abi_class_size(c + 3) < total)
		c += 4;
	while (c < SHM_ABI_NCLASSES && shm_abi_class_size(c) < total)
		c++;
	return c; /* SHM_ABI_NCLASSES if too big */
}

static uint64_t region_size(unsigned c)
{
	uint64_t cs = shm_abi_class_size(c);
	if (cs <= SHM_ABI_REGION_SIZE)
		return SHM_ABI_REGION_SIZE;
	return (cs + SHM_ABI_REGION_SIZE - 1) & ~(SHM_ABI_REGION_SIZE - 1);
}

static size_t quarantine_len(unsigned c)
{
	if (shm__test_flags & SHM_TEST_NO_QUARANTINE)
		return 0;
	uint64_t q = SHM_ABI_REGION_SIZE / shm_abi_class_size(c);
	return q < 4 ? 4 : (size_t)q;
}

uint64_t shm_block_class_size(struct shm_arena *a, uint64_t off, uint64_t size)
{
	/* size comes from shared memory: clamp it to this process's mapping, so a bad header
	 * can neither index past the region table nor send a read past the mapping (data_off
	 * was validated when the arena was mapped and is not read from shared memory again) */
	if (size > a->map_size)
		size = a->map_size;
	if (off < a->data_off || off >= size)
		return 0;
	/* relaxed: the entry was written before the ref that led here was published (release),
	 * and the caller loaded that ref with acquire. */
	uint32_t e =
	        atomic_load_explicit(&a->rt[off >> SHM_ABI_REGION_SHIFT], memory_order_relaxed);
	if (e == 0 || SHM_ABI_RT_CLASS(e) >= SHM_ABI_NCLASSES)
		return 0;
	if (SHM_ABI_RT_BACK(e) > (off >> SHM_ABI_REGION_SHIFT))
		return 0;
	uint64_t start = ((off >> SHM_ABI_REGION_SHIFT) - SHM_ABI_RT_BACK(e))
	                 << SHM_ABI_REGION_SHIFT;
	uint64_t cs = shm_abi_class_size(SHM_ABI_RT_CLASS(e));
	if (start < a->data_off || (off - start) % cs != 0 || cs > size - off)
		return 0;
	return cs;
}

/* ---- fifo ---------------------------------------------------------------------------------------
 */
static int fifo_push(struct w_fifo *f, uint32_t v)
{
	if (f->len == f->cap) {
		size_t ncap = f->cap ? f->cap * 2 : 64;
		uint32_t *nv = malloc(ncap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		for (size_t i = 0; i < f->len; i++)
			nv[i] = f->v[(f->head + i) % f->cap];
		free(f->v);
		f->v = nv;
		f->cap = ncap;
		f->head = 0;
	}
	f->v[(f->head + f->len) % f->cap] = v;
	f->len++;
	return 0;
}

static uint32_t fifo_pop(struct w_fifo *f)
{
	if (shm__test_flags & SHM_TEST_NO_QUARANTINE) {
		/* test stress: newest first, so the block a reader just found is reused at once */
		f->len--;
		return f->v[(f->head + f->len) % f->cap];
	}
	uint32_t v = f->v[f->head];
	f->head = (f->head + 1) % f->cap;
	f->len--;
	return v;
}

/* ---- allocator ----------------------------------------------------------------------------------
 */
static void stats_publish(struct shm_arena *a)
{
	struct w_state *w = a->w;
	uint64_t fb = w->bump_free;
	/* relaxed: statistics only, no reader acts on them. */
	atomic_store_explicit(&a->hdr->stat_live_bytes, w->live_bytes, memory_order_relaxed);
	atomic_store_explicit(&a->hdr->stat_quarantine_bytes, w->quarantine_bytes,
	                      memory_order_relaxed);
	atomic_store_explicit(&a->hdr->stat_free_bytes, fb, memory_order_relaxed);
}

static int grow_to(struct shm_arena *a, uint64_t end)
{
	struct shm_abi_header *h = a->hdr;
	uint64_t size = atomic_load_explicit(&h->size, memory_order_relaxed);
	if (end <= size)
		return 0;
	if (end > h->max_size)
		return -ENOMEM;
	uint64_t ns = size * 2 > end ? size * 2 : end;
	if (ns > h->max_size)
		ns = h->max_size;
	if (ftruncate(a->lock_fd, (off_t)ns) < 0)
		return -errno;
	/* release: pairs with readers' acquire load of size; the memory below ns exists now. */
	atomic_store_explicit(&h->size, ns, memory_order_release);
	return 0;
}

static int carve(struct shm_arena *a, unsigned c)
{
	struct shm_abi_header *h = a->hdr;
	uint64_t rsz = region_size(c), cs = shm_abi_class_size(c);
	uint64_t off = atomic_load_explicit(&h->carved, memory_order_relaxed);
	int r = grow_to(a, off + rsz);
	if (r < 0)
		return r;
	uint64_t u0 = off >> SHM_ABI_REGION_SHIFT, n = rsz >> SHM_ABI_REGION_SHIFT;
	for (uint64_t i = 0; i < n; i++)
		/* relaxed: published by the release store of carved below, and to readers by the
		 * release stores that publish refs into this region. */
		atomic_store_explicit(&a->rt[u0 + i], (uint32_t)((c + 1) | (i << 8)),
		                      memory_order_relaxed);
	/* release: pairs with the acquire load of carved in recovery (region entries visible). */
	atomic_store_explicit(&h->carved, off + rsz, memory_order_release);
	struct w_class *k = &a->w->cls[c];
	a->w->bump_free -= k->bump_end - k->bump; /* the old region's tail (< one block) is lost */
	k->bump = off;
	k->bump_end = off + (rsz / cs) * cs;
	a->w->bump_free += k->bump_end - k->bump;
	return 0;
}

/* Allocate a block for body_len bytes and open it (gen odd). The body is the caller's to fill,
 * then w_close publishes nothing yet: it only makes the block stable. */
int w_alloc(struct shm_arena *a, size_t body_len, unsigned kind, uint64_t *ret_off)
{
	struct w_state *w = a->w;
	uint64_t total = SHM_ABI_BLK_HDR + (uint64_t)body_len;
	unsigned c = class_for(total);
	if (c >= SHM_ABI_NCLASSES || body_len > UINT32_MAX)
		return -ENOMEM;
	if (shm__test_fail_alloc_at > 0 && ++w->n_allocs == shm__test_fail_alloc_at)
		return -ENOMEM;
	struct w_class *k = &w->cls[c];
	uint64_t cs = shm_abi_class_size(c), off;
	if (k->freed.len > quarantine_len(c)) {
		off = (uint64_t)fifo_pop(&k->freed) << SHM_ABI_UNIT_SHIFT;
		w->quarantine_bytes -= cs;
	} else {
		if (k->bump >= k->bump_end) {
			int r = carve(a, c);
			if (r < 0) {
				if (k->freed.len == 0)
					return r;
				/* Out of arena: reuse early. Safe (readers validate), costs
				 * retries. */
				off = (uint64_t)fifo_pop(&k->freed) << SHM_ABI_UNIT_SHIFT;
				w->quarantine_bytes -= cs;
				goto open;
			}
		}
		off = k->bump;
		k->bump += cs;
		w->bump_free -= cs;
	}
open:;
	struct shm_abi_block *b = shm_blk(a, off);
	uint32_t g = SHM_ABI_WORD_GEN(atomic_load_explicit(&b->word, memory_order_relaxed));
	g += (g & 1) ? 2 : 1; /* a killed writer may have left it odd: stay odd, move on */
	atomic_store_explicit(&b->word, SHM_ABI_WORD(g, kind, cs - SHM_ABI_BLK_HDR - body_len),
	                      memory_order_relaxed);
	/* release fence: orders the odd gen before every body store below; pairs with the
	 * acquire fence readers issue between their copy and their gen re-check (A2/A3). */
	atomic_thread_fence(memory_order_release);
	w->live_bytes += cs;
	*ret_off = off;
	return 0;
}

/* Make the block stable (gen even); returns the even gen for the ref. */
uint64_t w_close(struct shm_arena *a, uint64_t off)
{
	struct shm_abi_block *b = shm_blk(a, off);
	uint64_t w = atomic_load_explicit(&b->word, memory_order_relaxed);
	uint32_t g = SHM_ABI_WORD_GEN(w) + 1;
	/* release: the body stores happen-before any reader seeing this even gen (pairs with the
	 * reader's acquire load of the word before its copy). */
	atomic_store_explicit(&b->word, (w & ~UINT64_C(0xffffffff)) | g, memory_order_release);
	return g;
}

/* Retire a block to its class's quarantine. Its contents stay readable (gen even) until reuse. */
void w_free(struct shm_arena *a, uint64_t off)
{
	struct w_state *w = a->w;
	unsigned c = SHM_ABI_RT_CLASS(
	        atomic_load_explicit(&a->rt[off >> SHM_ABI_REGION_SHIFT], memory_order_relaxed));
	uint64_t cs = shm_abi_class_size(c);
	if (fifo_push(&w->cls[c].freed, (uint32_t)(off >> SHM_ABI_UNIT_SHIFT)) < 0)
		return; /* leaked until the next recovery; never unsafe */
	w->live_bytes -= cs;
	w->quarantine_bytes += cs;
}

void w_zero(struct shm_arena *a, uint64_t off, size_t from, size_t len)
{
	static const uint64_t zero[512];
	uint8_t *p = (uint8_t *)shm_body(a, off) + from;
	while (len > 0) {
		size_t n = len < sizeof(zero) ? len : sizeof(zero);
		shm_copy_in(p, zero, n);
		p += n;
		len -= n;
	}
}

/* ---- handles
 * -------------------------------------------------------------------------------------- */
_Atomic uint64_t *shm_handle_slot(struct shm_arena *a, uint32_t h)
{
	uint32_t c = h >> SHM_ABI_HCHUNK_SHIFT;
	if (c >= SHM_ABI_HDIR_SLOTS)
		return NULL;
	/* acquire: pairs with the release store publishing the chunk (its zeroed slots). */
	uint64_t ref = atomic_load_explicit(&a->hdr->handle_dir[c], memory_order_acquire);
	if (!ref)
		return NULL;
	uint64_t off = shm_ref_off(ref);
	uint64_t size = atomic_load_explicit(&a->hdr->size, memory_order_acquire);
	if (shm_block_class_size(a, off, size) < SHM_ABI_BLK_HDR + 8 * SHM_ABI_HCHUNK_SLOTS)
		return NULL;
	return (_Atomic uint64_t *)shm_body(a, off) + (h & (SHM_ABI_HCHUNK_SLOTS - 1));
}

uint64_t shm_handle_load(struct shm_arena *a, uint32_t h)
{
	if (h == 0 || h >= atomic_load_explicit(&a->hdr->handles_hw, memory_order_acquire))
		return 0;
	_Atomic uint64_t *s = shm_handle_slot(a, h);
	/* acquire: pairs with the writer's release store of the record ref (A2). */
	return s ? atomic_load_explicit(s, memory_order_acquire) : 0;
}

struct shm_abi_type *shm_type_entry(struct shm_arena *a, unsigned type)
{
	if (type >= SHM_ABI_MAX_TYPES)
		return NULL;
	/* acquire: pairs with the release store publishing the chunk (its zeroed entries), T3. */
	uint64_t ref = atomic_load_explicit(&a->hdr->type_dir[type >> SHM_ABI_TCHUNK_SHIFT],
	                                    memory_order_acquire);
	if (!ref)
		return NULL;
	uint64_t off = shm_ref_off(ref);
	uint64_t size = atomic_load_explicit(&a->hdr->size, memory_order_acquire);
	if (shm_block_class_size(a, off, size) <
	    SHM_ABI_BLK_HDR + sizeof(struct shm_abi_type) * SHM_ABI_TCHUNK_SLOTS)
		return NULL; /* A5: never trust a ref beyond the mapping */
	return (struct shm_abi_type *)shm_body(a, off) + (type & (SHM_ABI_TCHUNK_SLOTS - 1));
}

/* T3: make sure the chunk holding type id exists (writer only). */
static int type_chunk_ensure(struct shm_arena *a, unsigned type)
{
	_Atomic uint64_t *d = &a->hdr->type_dir[type >> SHM_ABI_TCHUNK_SHIFT];
	if (atomic_load_explicit(d, memory_order_relaxed))
		return 0;
	const size_t body = sizeof(struct shm_abi_type) * SHM_ABI_TCHUNK_SLOTS;
	uint64_t off;
	int r = w_alloc(a, body, SHM_ABI_BLK_TCHUNK, &off);
	if (r < 0)
		return r;
	w_zero(a, off, 0, body);
	uint64_t g = w_close(a, off);
	/* release: the zeroed (FREE) entries before the directory entry; pairs with the acquire
	 * load in shm_type_entry. A writer killed before this store leaves an unreachable block
	 * that recovery sweeps. */
	atomic_store_explicit(d, shm_ref_make(off, g, 0), memory_order_release);
	return 0;
}

static int handle_alloc(struct shm_arena *a, uint32_t *ret)
{
	struct w_state *w = a->w;
	size_t q = (shm__test_flags & SHM_TEST_NO_QUARANTINE) ? 0 : 1024;
	if (w->free_handles.len > q) {
		*ret = fifo_pop(&w->free_handles);
		return 0;
	}
	uint64_t hw = atomic_load_explicit(&a->hdr->handles_hw, memory_order_relaxed);
	if (hw >= SHM_ABI_MAX_HANDLES) {
		if (w->free_handles.len == 0)
			return -ENOSPC;
		*ret = fifo_pop(&w->free_handles);
		return 0;
	}
	uint32_t c = (uint32_t)(hw >> SHM_ABI_HCHUNK_SHIFT);
	if (!atomic_load_explicit(&a->hdr->handle_dir[c], memory_order_relaxed)) {
		uint64_t off;
		int r = w_alloc(a, 8 * SHM_ABI_HCHUNK_SLOTS, SHM_ABI_BLK_HCHUNK, &off);
		if (r < 0)
			return r;
		w_zero(a, off, 0, 8 * SHM_ABI_HCHUNK_SLOTS);
		uint64_t g = w_close(a, off);
		/* release: the zeroed chunk before its directory entry (pairs: shm_handle_slot). */
		atomic_store_explicit(&a->hdr->handle_dir[c], shm_ref_make(off, g, 0),
		                      memory_order_release);
	}
	/* release: pairs with the acquire load in shm_handle_load. */
	atomic_store_explicit(&a->hdr->handles_hw, hw + 1, memory_order_release);
	*ret = (uint32_t)hw;
	return 0;
}

/* ---- atoms (interned strings, label sets, owner sets) --------------------------------------- */
static uint64_t atom_hash(struct shm_arena *a, unsigned kind, const void *p, size_t n)
{
	return shm_hash(a->seed ^ (UINT64_C(0x100) * kind), p, n);
}

static bool atom_equal(struct shm_arena *a, uint64_t ref, unsigned kind, const void *p, size_t n)
{
	const struct shm_abi_atom *at = shm_body(a, shm_ref_off(ref));
	return at->kind == kind && at->len == n && memcmp(at + 1, p, n) == 0;
}

static int atoms_insert_raw(struct w_state *w, uint64_t hash, uint64_t ref, uint32_t refs)
{
	if ((w->atoms_len + 1) * 2 > w->atoms_cap) {
		size_t ncap = w->atoms_cap ? w->atoms_cap * 2 : 1024;
		struct w_atom *nv = calloc(ncap, sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		for (size_t i = 0; i < w->atoms_cap; i++) {
			if (!w->atoms[i].ref)
				continue;
			size_t j = w->atoms[i].hash & (ncap - 1);
			while (nv[j].ref)
				j = (j + 1) & (ncap - 1);
			nv[j] = w->atoms[i];
		}
		free(w->atoms);
		w->atoms = nv;
		w->atoms_cap = ncap;
	}
	size_t j = hash & (w->atoms_cap - 1);
	while (w->atoms[j].ref)
		j = (j + 1) & (w->atoms_cap - 1);
	w->atoms[j] = (struct w_atom){.hash = hash, .ref = ref, .refs = refs};
	w->atoms_len++;
	return 0;
}

static struct w_atom *atoms_find_ref(struct w_state *w, uint64_t hash, uint64_t ref)
{
	if (!w->atoms_cap)
		return NULL;
	for (size_t j = hash & (w->atoms_cap - 1);; j = (j + 1) & (w->atoms_cap - 1)) {
		if (!w->atoms[j].ref)
			return NULL;
		if (w->atoms[j].ref == ref)
			return &w->atoms[j];
	}
}

static void atoms_remove(struct w_state *w, struct w_atom *e)
{
	size_t mask = w->atoms_cap - 1, i = (size_t)(e - w->atoms);
	w->atoms[i].ref = 0;
	w->atoms_len--;
	/* backward-shift deletion (private memory: no reader to confuse) */
	for (size_t j = (i + 1) & mask; w->atoms[j].ref; j = (j + 1) & mask) {
		size_t home = w->atoms[j].hash & mask;
		if (((j - home) & mask) >= ((j - i) & mask)) {
			w->atoms[i] = w->atoms[j];
			w->atoms[j].ref = 0;
			i = j;
		}
	}
}

/* Take a reference on the atom (kind, bytes), creating it if needed. */
static int atom_get(struct shm_arena *a, unsigned kind, const void *p, size_t n, uint64_t *ret)
{
	struct w_state *w = a->w;
	uint64_t hash = atom_hash(a, kind, p, n);
	if (w->atoms_cap)
		for (size_t j = hash & (w->atoms_cap - 1); w->atoms[j].ref;
		     j = (j + 1) & (w->atoms_cap - 1))
			if (w->atoms[j].hash == hash &&
			    atom_equal(a, w->atoms[j].ref, kind, p, n)) {
				w->atoms[j].refs++;
				*ret = w->atoms[j].ref;
				return 0;
			}
	uint64_t off;
	size_t body = (sizeof(struct shm_abi_atom) + n + 7) & ~(size_t)7;
	if (body > UINT32_MAX)
		return -EINVAL;
	/* built in its own buffer: p may point into w->buf */
	uint8_t *tmp = malloc(body);
	if (!tmp)
		return -ENOMEM;
	memset(tmp, 0, body);
	struct shm_abi_atom hd = {.hash = hash, .len = (uint32_t)n, .kind = kind};
	memcpy(tmp, &hd, sizeof(hd));
	if (n)
		memcpy(tmp + sizeof(hd), p, n);
	int r = w_alloc(a, body, SHM_ABI_BLK_ATOM, &off);
	if (r < 0) {
		free(tmp);
		return r;
	}
	shm_copy_in(shm_body(a, off), tmp, body);
	free(tmp);
	uint64_t ref = shm_ref_make(off, w_close(a, off), 0);
	r = atoms_insert_raw(w, hash, ref, 1);
	if (r < 0) {
		w_free(a, off);
		return r;
	}
	*ret = ref;
	return 0;
}

static void atom_put(struct shm_arena *a, uint64_t ref)
{
	if (!ref)
		return;
	const struct shm_abi_atom *at = shm_body(a, shm_ref_off(ref));
	struct w_atom *e = atoms_find_ref(a->w, at->hash, ref);
	if (!e)
		return;
	if (--e->refs == 0) {
		atoms_remove(a->w, e);
		w_free(a, shm_ref_off(ref));
	}
}

/* ---- writer-side record views -----------------------------------------------------------------
 */
struct w_owner {
	const char *uid;
	size_t uid_len;
	bool controller;
};

struct w_view {
	struct shm_abi_record r;
	const uint8_t *uid, *name, *rv, *payload;
	char uidbuf[37];
	const char *uid_str;
	size_t uid_len;
	const char *ns;
	size_t ns_len;
	const uint8_t *owners;
	size_t owners_len;
};

/* The reference at *pos of an owners atom body: 1 and *out (then *pos moves past it), 0 at
 * the end, -EBADMSG. No bound on the count: the apiserver has none. */
static int owner_next(const uint8_t *p, size_t n, size_t *pos, struct w_owner *out)
{
	size_t i = *pos;
	if (i >= n)
		return 0;
	struct shm_abi_owner o;
	if (n - i < sizeof(o))
		return -EBADMSG;
	memcpy(&o, p + i, sizeof(o));
	i += sizeof(o);
	uint64_t need = (uint64_t)o.uid_len + o.api_version_len + o.kind_len + o.name_len;
	if (n - i < need)
		return -EBADMSG;
	*out = (struct w_owner){(const char *)p + i, o.uid_len,
	                        (o.flags & SHM_ABI_OWNER_CONTROLLER) != 0};
	*pos = i + (size_t)need;
	return 1;
}

/* Validates an owners atom body: the number of references, or -EBADMSG. */
static int owners_walk(const uint8_t *p, size_t n)
{
	size_t pos = 0;
	int k = 0, r;
	struct w_owner o;
	while ((r = owner_next(p, n, &pos, &o)) > 0)
		k++;
	return r < 0 ? r : k;
}

/* A ref is acceptable if it lands on a stable block of the given kind, wholly below limit;
 * *ret_len gets its body length. Used by the writer (own memory, no race) and recovery. */
static bool blk_ok(struct shm_arena *a, uint64_t ref, unsigned kind, uint64_t limit,
                   uint32_t *ret_len)
{
	uint64_t off = shm_ref_off(ref);
	uint64_t cs = ref ? shm_block_class_size(a, off, limit) : 0;
	if (!cs)
		return false;
	uint64_t w = atomic_load_explicit(&shm_blk(a, off)->word, memory_order_relaxed);
	uint32_t g = SHM_ABI_WORD_GEN(w);
	if ((g & 1) || shm_gen16(g) != shm_ref_gen16(ref) || SHM_ABI_WORD_KIND(w) != kind ||
	    SHM_ABI_WORD_SLACK(w) > cs - SHM_ABI_BLK_HDR)
		return false;
	if (ret_len)
		*ret_len = (uint32_t)(cs - SHM_ABI_BLK_HDR - SHM_ABI_WORD_SLACK(w));
	return true;
}

static int view_record(struct shm_arena *a, uint64_t ref, struct w_view *v)
{
	uint64_t off = shm_ref_off(ref);
	uint32_t len;
	if (!blk_ok(a, ref, SHM_ABI_BLK_RECORD,
	            atomic_load_explicit(&a->hdr->size, memory_order_relaxed), &len))
		return -EBADMSG;
	const uint8_t *p = shm_body(a, off);
	if (len < sizeof(v->r))
		return -EBADMSG;
	memcpy(&v->r, p, sizeof(v->r));
	size_t need = sizeof(v->r) + (size_t)v->r.uid_len + v->r.name_len + v->r.rv_len +
	              v->r.payload_len;
	if (need > len)
		return -EBADMSG;
	v->uid = p + sizeof(v->r);
	v->name = v->uid + v->r.uid_len;
	v->rv = v->name + v->r.name_len;
	v->payload = v->rv + v->r.rv_len;
	if (v->r.flags & SHM_ABI_REC_UID_BIN) {
		if (v->r.uid_len != 16)
			return -EBADMSG;
		shm_uid_unpack(v->uid, v->uidbuf);
		v->uid_str = v->uidbuf;
		v->uid_len = 36;
	} else {
		v->uid_str = (const char *)v->uid;
		v->uid_len = v->r.uid_len;
	}
	/* atoms */
	const uint64_t refs[3] = {shm_abi_rec_atom(&v->r, 0), shm_abi_rec_atom(&v->r, 1),
	                          shm_abi_rec_atom(&v->r, 2)};
	const unsigned kinds[3] = {SHM_ABI_ATOM_STRING, SHM_ABI_ATOM_LABELS, SHM_ABI_ATOM_OWNERS};
	uint64_t size = atomic_load_explicit(&a->hdr->size, memory_order_relaxed);
	v->owners = NULL;
	v->owners_len = 0;
	for (int i = 0; i < 3; i++) {
		if (!refs[i]) {
			if (i == 0)
				return -EBADMSG;
			continue;
		}
		uint32_t alen;
		if (!blk_ok(a, refs[i], SHM_ABI_BLK_ATOM, size, &alen))
			return -EBADMSG;
		const struct shm_abi_atom *at = shm_body(a, shm_ref_off(refs[i]));
		if (at->kind != kinds[i] || sizeof(*at) + (uint64_t)at->len > alen)
			return -EBADMSG;
		if (i == 0) {
			v->ns = (const char *)(at + 1);
			v->ns_len = at->len;
		} else if (i == 2) {
			v->owners = (const uint8_t *)(at + 1);
			v->owners_len = at->len;
			if (owners_walk(v->owners, v->owners_len) < 0)
				return -EBADMSG;
		}
	}
	return 0;
}

/* ---- keys ------------------------------------------------------------------------------------ */

/* Index membership of one record (as a writer view): add or remove everywhere. Removal never
 * allocates, so it cannot fail half-way. */
struct roots {
	_Atomic uint64_t *name, *ns, *orphan, *uid, *owner, *node;
};

static void roots_of(struct shm_arena *a, unsigned type, struct roots *r)
{
	struct shm_abi_type *t = shm_type_entry(a, type); /* registered: never NULL */
	*r = (struct roots){&t->name_index,     &t->ns_index,         &t->orphan_index,
	                    &a->hdr->uid_index, &a->hdr->owner_index, &t->node_index};
}

/* The node key of a record (a bound pod's spec.nodeName), or false: not in the node index. */
static bool node_of(const struct w_view *v, const char **node, size_t *nl)
{
	if (v->r.payload_kind != SHM_RECORD_POD)
		return false;
	return shm_rec_pod_node(v->payload, v->r.payload_len, node, nl) > 0;
}

static bool same_node(const struct w_view *x, const struct w_view *y)
{
	const char *a, *b;
	size_t al, bl;
	bool ha = node_of(x, &a, &al), hb = node_of(y, &b, &bl);
	return ha == hb && (!ha || (al == bl && memcmp(a, b, al) == 0));
}

static bool has_controller(const struct w_view *v)
{
	struct w_owner o;
	size_t pos = 0;
	while (owner_next(v->owners, v->owners_len, &pos, &o) > 0)
		if (o.controller)
			return true;
	return false;
}

static int index_add(struct shm_arena *a, const struct roots *rt, const struct w_view *v,
                     uint32_t h, bool name, bool uid, bool owners, bool orphan, bool node)
{
	const char *nd;
	size_t ndl;
	int r = 0;
	if (name)
		r = shm_tab_insert(a, rt->name,
		                   shm_key_name(a->seed, v->ns, v->ns_len, (const char *)v->name,
		                                v->r.name_len),
		                   h);
	if (r >= 0 && uid)
		r = shm_tab_insert(a, rt->uid, shm_key_uid(a->seed, v->uid_str, v->uid_len), h);
	if (r >= 0 && name)
		r = shm_mset_add(a, rt->ns, shm_key_ns(a->seed, v->ns, v->ns_len), h);
	if (r >= 0 && orphan && !has_controller(v))
		r = shm_mset_add(a, rt->orphan, shm_key_ns(a->seed, v->ns, v->ns_len), h);
	if (r >= 0 && node && node_of(v, &nd, &ndl))
		r = shm_mset_add(a, rt->node, shm_key_node(a->seed, nd, ndl), h);
	if (r >= 0 && owners) {
		struct w_owner o;
		size_t pos = 0;
		while (r >= 0 && owner_next(v->owners, v->owners_len, &pos, &o) > 0)
			r = shm_mset_add(a, rt->owner, shm_key_owner(a->seed, o.uid, o.uid_len), h);
	}
	return r < 0 ? r : 0;
}

static void index_del(struct shm_arena *a, const struct roots *rt, const struct w_view *v,
                      uint32_t h, bool name, bool uid, bool owners, bool orphan, bool node)
{
	const char *nd;
	size_t ndl;

	if (name) {
		shm_tab_remove(a, rt->name,
		               shm_key_name(a->seed, v->ns, v->ns_len, (const char *)v->name,
		                            v->r.name_len),
		               h);
		shm_mset_del(a, rt->ns, shm_key_ns(a->seed, v->ns, v->ns_len), h);
	}
	if (uid)
		shm_tab_remove(a, rt->uid, shm_key_uid(a->seed, v->uid_str, v->uid_len), h);
	if (orphan && !has_controller(v))
		shm_mset_del(a, rt->orphan, shm_key_ns(a->seed, v->ns, v->ns_len), h);
	if (node && node_of(v, &nd, &ndl))
		shm_mset_del(a, rt->node, shm_key_node(a->seed, nd, ndl), h);
	if (owners) {
		struct w_owner o;
		size_t pos = 0;
		while (owner_next(v->owners, v->owners_len, &pos, &o) > 0)
			shm_mset_del(a, rt->owner, shm_key_owner(a->seed, o.uid, o.uid_len), h);
	}
}

/* Writer lookup of (type, ns, name): the handle, or 0. */
static uint32_t w_find(struct shm_arena *a, unsigned type, const char *ns, size_t nsl,
                       const char *name, size_t nl)
{
	uint64_t key = shm_key_name(a->seed, ns, nsl, name, nl);
	uint32_t cand[64];
	int n = shm_tab_candidates(a, &shm_type_entry(a, type)->name_index, key, cand, 64);
	for (int i = 0; i < n && i < 64; i++) {
		uint64_t ref = shm_handle_load(a, cand[i]);
		struct w_view v;
		if (!ref || view_record(a, ref, &v) < 0)
			continue;
		if (v.r.type == type && v.ns_len == nsl && v.r.name_len == nl &&
		    memcmp(v.ns, ns, nsl) == 0 && memcmp(v.name, name, nl) == 0)
			return cand[i];
	}
	return 0;
}

static bool registered(struct shm_arena *a, unsigned type)
{
	struct shm_abi_type *t = shm_type_entry(a, type);
	return t && SHM_ABI_TYPE_STATUS(atomic_load_explicit(&t->state, memory_order_relaxed)) ==
	                    SHM_ABI_TYPE_REGISTERED;
}

/* The generation of a type slot (the writer's own word); 0 for an id without a chunk. */
static uint32_t type_gen(struct shm_arena *a, unsigned type)
{
	struct shm_abi_type *t = shm_type_entry(a, type);
	return t ? SHM_ABI_TYPE_GEN(atomic_load_explicit(&t->state, memory_order_relaxed)) : 0;
}

static void bump_change(struct shm_arena *a)
{
	/* release: a reader that sees the new change_seq (acquire) sees the change. */
	atomic_fetch_add_explicit(&a->hdr->change_seq, 1, memory_order_release);
	stats_publish(a);
}

/* ---- record encoding ------------------------------------------------------------------------- */
static int cmp_label(const void *x, const void *y)
{
	const struct shm_label *const *p = x, *const *q = y;
	return strcmp((*p)->key, (*q)->key);
}

static int grow_buf(struct w_state *w, size_t need)
{
	if (w->buf_cap >= need)
		return 0;
	size_t ncap = w->buf_cap ? w->buf_cap : 4096;
	while (ncap < need)
		ncap *= 2;
	uint8_t *nb = realloc(w->buf, ncap);
	if (!nb)
		return -ENOMEM;
	w->buf = nb;
	w->buf_cap = ncap;
	return 0;
}

/* Serialise labels (sorted) into w->buf at offset 0; returns the length or -errno. */
static int encode_labels(struct shm_arena *a, const struct shm_record_in *rec)
{
	struct w_state *w = a->w;
	const struct shm_label *small[64], **idx = small;
	if (rec->n_labels > 64 && !(idx = malloc(rec->n_labels * sizeof(*idx))))
		return -ENOMEM;
	int r = 0;
	size_t total = 0;
	for (size_t i = 0; i < rec->n_labels; i++) {
		if (!rec->labels[i].key || !rec->labels[i].value) {
			r = -EINVAL;
			goto out;
		}
		idx[i] = &rec->labels[i];
		total += strlen(idx[i]->key) + strlen(idx[i]->value) + 2;
	}
	if (rec->n_labels > 16) {
		qsort(idx, rec->n_labels, sizeof(idx[0]), cmp_label);
	} else {
		for (size_t i = 1; i < rec->n_labels;
		     i++) /* insertion sort: label sets are small */
			for (size_t j = i; j > 0 && strcmp(idx[j - 1]->key, idx[j]->key) > 0; j--) {
				const struct shm_label *t = idx[j];
				idx[j] = idx[j - 1];
				idx[j - 1] = t;
			}
	}
	if (total > SHM_RECORD_MAX_BYTES) {
		r = -E2BIG;
		goto out;
	}
	if (grow_buf(w, total) < 0) {
		r = -ENOMEM;
		goto out;
	}
	size_t o = 0;
	for (size_t i = 0; i < rec->n_labels; i++) {
		if (i > 0 && strcmp(idx[i - 1]->key, idx[i]->key) == 0) {
			r = -EINVAL;
			goto out;
		}
		size_t kl = strlen(idx[i]->key) + 1, vl = strlen(idx[i]->value) + 1;
		memcpy(w->buf + o, idx[i]->key, kl);
		o += kl;
		memcpy(w->buf + o, idx[i]->value, vl);
		o += vl;
	}
	r = (int)o;
out:
	if (idx != small)
		free(idx);
	return r;
}

static int encode_owners(struct shm_arena *a, const struct shm_record_in *rec)
{
	struct w_state *w = a->w;
	size_t total = 0;
	for (size_t i = 0; i < rec->n_owners; i++) {
		const struct shm_owner_ref *o = &rec->owners[i];
		if (!o->uid || !o->kind || !o->name || !*o->uid || o->controller < -1 ||
		    o->controller > 1 || o->block_owner_deletion < -1 ||
		    o->block_owner_deletion > 1)
			return -EINVAL;
		const char *av = o->api_version ? o->api_version : "";
		total += sizeof(struct shm_abi_owner) + strlen(o->uid) + strlen(av) +
		         strlen(o->kind) + strlen(o->name);
		if (total > SHM_RECORD_MAX_BYTES)
			return -E2BIG;
	}
	if (grow_buf(w, total) < 0)
		return -ENOMEM;
	size_t off = 0;
	for (size_t i = 0; i < rec->n_owners; i++) {
		const struct shm_owner_ref *o = &rec->owners[i];
		const char *av = o->api_version ? o->api_version : "";
		struct shm_abi_owner h = {
		        .flags =
		                (uint32_t)((o->controller > 0 ? SHM_ABI_OWNER_CONTROLLER : 0) |
		                           (o->controller >= 0 ? SHM_ABI_OWNER_CONTROLLER_SET : 0) |
		                           (o->block_owner_deletion > 0 ? SHM_ABI_OWNER_BLOCK : 0) |
		                           (o->block_owner_deletion >= 0 ? SHM_ABI_OWNER_BLOCK_SET
		                                                         : 0)),
		        .uid_len = (uint32_t)strlen(o->uid),
		        .api_version_len = (uint32_t)strlen(av),
		        .kind_len = (uint32_t)strlen(o->kind),
		        .name_len = (uint32_t)strlen(o->name),
		};
		memcpy(w->buf + off, &h, sizeof(h));
		off += sizeof(h);
		memcpy(w->buf + off, o->uid, h.uid_len);
		off += h.uid_len;
		memcpy(w->buf + off, av, h.api_version_len);
		off += h.api_version_len;
		memcpy(w->buf + off, o->kind, h.kind_len);
		off += h.kind_len;
		memcpy(w->buf + off, o->name, h.name_len);
		off += h.name_len;
	}
	return (int)off;
}

/* ---- writer operations ------------------------------------------------------------------------
 */
static int check_writer(struct shm_arena *a)
{
	return a && a->w ? 0 : -EPERM;
}

int shm_writer_upsert(struct shm_arena *a, const struct shm_record_in *rec)
{
	int r = check_writer(a);
	if (r < 0)
		return r;
	if (!rec || !rec->name || !rec->uid || !rec->rv || !*rec->name || !*rec->uid ||
	    !registered(a, rec->type) || (rec->payload_len && !rec->payload) ||
	    (rec->n_labels && !rec->labels) || (rec->n_owners && !rec->owners) ||
	    rec->payload_len > SHM_RECORD_MAX_BYTES ||
	    (uint32_t)rec->kind != shm_type_entry(a, rec->type)->record_kind)
		return -EINVAL;
	const char *ns = rec->ns ? rec->ns : "";
	size_t nsl = strlen(ns), nl = strlen(rec->name), ul = strlen(rec->uid),
	       rvl = strlen(rec->rv);
	if (nsl > SHM_RECORD_MAX_BYTES || nl > SHM_RECORD_MAX_BYTES || ul > 65535 || rvl > 65535)
		return -E2BIG;

	uint64_t ns_ref = 0, lab_ref = 0, own_ref = 0;
	r = encode_labels(a, rec);
	if (r < 0)
		return r;
	if (r > 0 && (r = atom_get(a, SHM_ABI_ATOM_LABELS, a->w->buf, (size_t)r, &lab_ref)) < 0)
		return r;
	r = encode_owners(a, rec);
	if (r < 0)
		goto fail_atoms;
	if (r > 0 && (r = atom_get(a, SHM_ABI_ATOM_OWNERS, a->w->buf, (size_t)r, &own_ref)) < 0)
		goto fail_atoms;
	if ((r = atom_get(a, SHM_ABI_ATOM_STRING, ns, nsl, &ns_ref)) < 0)
		goto fail_atoms;

	uint32_t h = w_find(a, rec->type, ns, nsl, rec->name, nl);
	bool created = h == 0;
	if (created && (r = handle_alloc(a, &h)) < 0)
		goto fail_atoms;

	uint8_t uidbin[16];
	bool bin = shm_uid_pack(rec->uid, ul, uidbin);
	struct shm_abi_record hd = {
	        .type = rec->type,
	        .payload_kind = (uint8_t)rec->kind,
	        .flags = bin ? SHM_ABI_REC_UID_BIN : 0,
	        .name_len = (uint32_t)nl,
	        .uid_len = (uint16_t)(bin ? 16 : ul),
	        .rv_len = (uint16_t)rvl,
	        .type_gen = type_gen(a, rec->type),
	        .payload_len = (uint32_t)rec->payload_len,
	        .atom_unit = {(uint32_t)ns_ref, (uint32_t)lab_ref, (uint32_t)own_ref},
	        .atom_gen = {(uint16_t)(ns_ref >> 32), (uint16_t)(lab_ref >> 32),
	                     (uint16_t)(own_ref >> 32)},
	};
	size_t body = sizeof(hd) + hd.uid_len + nl + rvl + rec->payload_len;
	size_t padded = (body + 7) & ~(size_t)7;
	if ((r = grow_buf(a->w, padded)) < 0)
		goto fail_handle;
	uint8_t *p = a->w->buf;
	memset(p + padded - 8, 0, 8);
	memcpy(p, &hd, sizeof(hd));
	p += sizeof(hd);
	memcpy(p, bin ? (const void *)uidbin : rec->uid, hd.uid_len);
	p += hd.uid_len;
	memcpy(p, rec->name, nl);
	p += nl;
	memcpy(p, rec->rv, rvl);
	p += rvl;
	if (rec->payload_len)
		memcpy(p, rec->payload, rec->payload_len);
	uint64_t off;
	if ((r = w_alloc(a, padded, SHM_ABI_BLK_RECORD, &off)) < 0)
		goto fail_handle;
	shm_copy_in(shm_body(a, off), a->w->buf, padded);
	SHM_CRASH_POINT(1);
	uint64_t ref = shm_ref_make(off, w_close(a, off), rec->type);
	SHM_CRASH_POINT(2);

	_Atomic uint64_t *slot = shm_handle_slot(a, h);
	uint64_t old = atomic_load_explicit(slot, memory_order_relaxed);
	/* release: THE publication of this version (A2); pairs with the acquire load of the
	 * handle slot in shm_handle_load. */
	atomic_store_explicit(slot, ref, memory_order_release);
	SHM_CRASH_POINT(3);

	struct roots rt;
	roots_of(a, rec->type, &rt);
	struct w_view nv;
	view_record(a, ref, &nv);
	if (created) {
		r = index_add(a, &rt, &nv, h, true, true, true, true, true);
		if (r < 0)
			goto fail_published;
		atomic_fetch_add_explicit(&shm_type_entry(a, rec->type)->count, 1,
		                          memory_order_relaxed);
		atomic_fetch_add_explicit(&a->hdr->stat_objects, 1, memory_order_relaxed);
	} else {
		struct w_view ov;
		if (view_record(a, old, &ov) == 0) {
			bool uid_changed = ov.uid_len != nv.uid_len ||
			                   memcmp(ov.uid_str, nv.uid_str, nv.uid_len) != 0;
			bool own_changed = shm_abi_rec_atom(&ov.r, 2) != shm_abi_rec_atom(&nv.r, 2);
			bool orph_changed = has_controller(&ov) != has_controller(&nv);
			bool node_changed = !same_node(&ov, &nv);
			index_del(a, &rt, &ov, h, false, uid_changed, own_changed, orph_changed,
			          node_changed);
			SHM_CRASH_POINT(4);
			r = index_add(a, &rt, &nv, h, false, uid_changed, own_changed, orph_changed,
			              node_changed);
			for (int i = 0; i < 3; i++)
				atom_put(a, shm_abi_rec_atom(&ov.r, i));
			w_free(a, shm_ref_off(old));
			if (r < 0)
				goto fail_published;
		}
	}
	bump_change(a);
	return created ? 1 : 0;

fail_published:
	/* The object is published but not fully indexed: take it out entirely (removal never
	 * allocates), as documented for -ENOMEM. */
	atomic_store_explicit(slot, 0, memory_order_release);
	index_del(a, &rt, &nv, h, true, true, true, true, true);
	atom_put(a, ns_ref);
	atom_put(a, lab_ref);
	atom_put(a, own_ref);
	w_free(a, off);
	fifo_push(&a->w->free_handles, h);
	if (!created) {
		atomic_fetch_sub_explicit(&shm_type_entry(a, rec->type)->count, 1,
		                          memory_order_relaxed);
		atomic_fetch_sub_explicit(&a->hdr->stat_objects, 1, memory_order_relaxed);
	}
	bump_change(a);
	return r;
fail_handle:
	if (created)
		fifo_push(&a->w->free_handles, h);
fail_atoms:
	atom_put(a, ns_ref);
	atom_put(a, lab_ref);
	atom_put(a, own_ref);
	return r;
}

int shm_writer_delete(struct shm_arena *a, uint16_t type, const char *ns, const char *name)
{
	int r = check_writer(a);
	if (r < 0)
		return r;
	if (!name || !registered(a, type))
		return -EINVAL;
	ns = ns ? ns : "";
	uint32_t h = w_find(a, type, ns, strlen(ns), name, strlen(name));
	if (!h)
		return -ENOENT;
	_Atomic uint64_t *slot = shm_handle_slot(a, h);
	uint64_t ref = atomic_load_explicit(slot, memory_order_relaxed);
	struct w_view v;
	if (view_record(a, ref, &v) < 0)
		return -EIO;
	/* release: publication of the delete (readers following a stale index entry find 0). */
	atomic_store_explicit(slot, 0, memory_order_release);
	SHM_CRASH_POINT(5);
	struct roots rt;
	roots_of(a, type, &rt);
	index_del(a, &rt, &v, h, true, true, true, true, true);
	for (int i = 0; i < 3; i++)
		atom_put(a, shm_abi_rec_atom(&v.r, i));
	w_free(a, shm_ref_off(ref));
	fifo_push(&a->w->free_handles, h);
	atomic_fetch_sub_explicit(&shm_type_entry(a, type)->count, 1, memory_order_relaxed);
	atomic_fetch_sub_explicit(&a->hdr->stat_objects, 1, memory_order_relaxed);
	bump_change(a);
	return 0;
}

static int copy_name(char *dst, const char *src)
{
	size_t n = src ? strlen(src) : 0;
	if (n > SHM_ABI_NAME_MAX)
		return -ENAMETOOLONG;
	memset(dst, 0, SHM_ABI_NAME_MAX + 1);
	if (n)
		memcpy(dst, src, n);
	return 0;
}

/* ---- the writer's private type lookup (T3) ----------------------------------------------- */
static uint64_t tix_key(struct shm_arena *a, const char *g, const char *v, const char *r)
{
	uint64_t h = shm_hash(a->seed ^ 5, g, strlen(g));
	h = shm_hash(h, v, strlen(v));
	return shm_hash(h, r, strlen(r));
}

/* The registered id of (g, v, r), or -ENOENT; *ret_slot = its slot in tix. */
static int tix_find(struct shm_arena *a, const char *g, const char *v, const char *res,
                    uint32_t *ret_slot)
{
	struct w_state *w = a->w;
	uint32_t mask = w->tix_cap - 1;
	for (uint32_t i = (uint32_t)tix_key(a, g, v, res) & mask, k = 0; k < w->tix_cap;
	     i = (i + 1) & mask, k++) {
		uint32_t e = w->tix[i];
		if (e == 0)
			return -ENOENT;
		if (e == UINT32_MAX)
			continue;
		const struct shm_abi_type *t = shm_type_entry(a, e - 1);
		if (t && !strcmp(t->group, g) && !strcmp(t->version, v) &&
		    !strcmp(t->resource, res)) {
			if (ret_slot)
				*ret_slot = i;
			return (int)(e - 1);
		}
	}
	return -ENOENT;
}

/* Add registered id (its strings are in the arena). Too full: rebuilt at the next use. */
static void tix_insert(struct shm_arena *a, unsigned id)
{
	struct w_state *w = a->w;
	if (!w->tix_valid)
		return;
	if ((uint64_t)(w->tix_used + 1) * 2 > w->tix_cap) {
		w->tix_valid = false;
		return;
	}
	const struct shm_abi_type *t = shm_type_entry(a, id);
	uint32_t mask = w->tix_cap - 1;
	uint32_t i = (uint32_t)tix_key(a, t->group, t->version, t->resource) & mask;
	while (w->tix[i] != 0)
		i = (i + 1) & mask; /* tombstones are not reused: the rebuild drops them */
	w->tix[i] = id + 1;
	w->tix_used++;
}

static int tix_build(struct shm_arena *a)
{
	struct w_state *w = a->w;
	uint64_t n = atomic_load_explicit(&a->hdr->n_types, memory_order_relaxed);
	if (n > SHM_ABI_MAX_TYPES)
		return -EUCLEAN;
	uint32_t live = 0;
	for (unsigned i = 0; i < n; i++)
		live += registered(a, i);
	uint32_t cap = 64;
	while (cap < 4 * (uint64_t)live)
		cap *= 2;
	uint32_t *tix = calloc(cap, sizeof(*tix));
	uint64_t *tfree = w->tfree ? w->tfree : malloc(SHM_ABI_MAX_TYPES / 8);
	if (!tix || !tfree) {
		free(tix);
		if (!w->tfree)
			free(tfree);
		return -ENOMEM;
	}
	memset(tfree, 0, SHM_ABI_MAX_TYPES / 8);
	free(w->tix);
	w->tix = tix;
	w->tfree = tfree;
	w->tix_cap = cap;
	w->tix_used = 0;
	w->tix_valid = true;
	for (unsigned i = 0; i < n; i++) {
		if (registered(a, i))
			tix_insert(a, i);
		else
			tfree[i / 64] |= UINT64_C(1) << (i % 64);
	}
	return 0;
}

/* The lowest id below n that is not registered, or SHM_ABI_MAX_TYPES. */
static unsigned tfree_lowest(const struct w_state *w, uint64_t n)
{
	for (uint64_t k = 0; k * 64 < n; k++)
		if (w->tfree[k]) {
			unsigned id = (unsigned)(k * 64) + (unsigned)__builtin_ctzll(w->tfree[k]);
			return id < n ? id : SHM_ABI_MAX_TYPES;
		}
	return SHM_ABI_MAX_TYPES;
}

int shm_writer_register_type(struct shm_arena *a, const struct shm_type_desc *d)
{
	int r = check_writer(a);
	if (r < 0)
		return r;
	if (!d || !d->version || !d->resource || !d->kind || !*d->version || !*d->resource ||
	    !*d->kind || (unsigned)d->record_kind > 255)
		return -EINVAL;
	const char *g = d->group ? d->group : "";
	if (strlen(g) > SHM_ABI_NAME_MAX || strlen(d->version) > SHM_ABI_NAME_MAX ||
	    strlen(d->resource) > SHM_ABI_NAME_MAX || strlen(d->kind) > SHM_ABI_NAME_MAX)
		return -ENAMETOOLONG;
	struct shm_abi_header *hd = a->hdr;
	uint64_t n = atomic_load_explicit(&hd->n_types, memory_order_relaxed);
	if (!a->w->tix_valid && (r = tix_build(a)) < 0)
		return r;
	int found = tix_find(a, g, d->version, d->resource, NULL);
	if (found >= 0) {
		struct shm_abi_type *t = shm_type_entry(a, (unsigned)found);
		if (strcmp(t->kind, d->kind) || t->record_kind != (uint32_t)d->record_kind)
			return -EEXIST;
		return found;
	}
	unsigned reuse = tfree_lowest(a->w, n); /* T2: the lowest retired slot */
	unsigned id = reuse < SHM_ABI_MAX_TYPES ? reuse : (unsigned)n;
	if (id >= SHM_ABI_MAX_TYPES)
		return -ENOSPC; /* T3: every 16-bit id registered at once */
	if ((r = type_chunk_ensure(a, id)) < 0)
		return r; /* -ENOMEM: the arena is at max_size */
	struct shm_abi_type *t = shm_type_entry(a, id);
	if (!t)
		return -EUCLEAN;
	uint32_t gen = type_gen(a, id) + 1;
	if (gen == 0)
		gen = 1; /* 2^32 reuses of one slot: gen 0 never names a registration */
	/* T2: WRITING under the new generation while the strings change; the release fence
	 * orders it before the string stores (pairs with the reader's acquire fence before its
	 * re-check of state in type_snapshot) */
	bool early = shm__test_flags & SHM_TEST_TYPE_EARLY; /* test seam: the broken order */
	atomic_store_explicit(
	        &t->state,
	        SHM_ABI_TYPE_STATE(gen, early ? SHM_ABI_TYPE_REGISTERED : SHM_ABI_TYPE_WRITING),
	        memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	copy_name(t->group, g);
	copy_name(t->version, d->version);
	copy_name(t->resource, d->resource);
	if (early)
		shm__test_pause();
	copy_name(t->kind, d->kind);
	t->record_kind = (uint32_t)d->record_kind;
	if (id < n) {
		/* a reused slot starts with no objects and not synced (both latch copies) */
		atomic_store_explicit(&t->count, 0, memory_order_relaxed);
		for (unsigned c = 0; c < 2; c++)
			for (unsigned i = 0; i < SHM_ABI_SYNC_WORDS; i++)
				atomic_store_explicit(&t->sync[c][i], 0, memory_order_relaxed);
	}
	/* release: the strings before the entry is visible (pairs: reader acquire). */
	atomic_store_explicit(&t->state, SHM_ABI_TYPE_STATE(gen, SHM_ABI_TYPE_REGISTERED),
	                      memory_order_release);
	if (id == n)
		atomic_store_explicit(&hd->n_types, n + 1, memory_order_release);
	else
		a->w->tfree[id / 64] &= ~(UINT64_C(1) << (id % 64));
	tix_insert(a, id);
	bump_change(a);
	return (int)id;
}

int shm_writer_retire_type(struct shm_arena *a, uint16_t type)
{
	int r = check_writer(a);
	if (r < 0)
		return r;
	if (!registered(a, type))
		return -EINVAL;
	struct shm_abi_type *t = shm_type_entry(a, type); /* registered: never NULL */
	if (atomic_load_explicit(&t->count, memory_order_relaxed) != 0 ||
	    shm_tab_count(a, &t->name_index) != 0)
		return -EBUSY;
	/* release: T2, readers that load RETIRED (acquire) stop using the id; the empty indexes
	 * stay and serve the next registration of the slot */
	atomic_store_explicit(&t->state,
	                      SHM_ABI_TYPE_STATE(type_gen(a, type), SHM_ABI_TYPE_RETIRED),
	                      memory_order_release);
	if (a->w->tix_valid) {
		uint32_t slot;
		if (tix_find(a, t->group, t->version, t->resource, &slot) == (int)type)
			a->w->tix[slot] = UINT32_MAX;
		else
			a->w->tix_valid =
			        false; /* cannot happen; rebuilt at the next registration */
		a->w->tfree[type / 64] |= UINT64_C(1) << (type % 64);
	}
	bump_change(a);
	return 0;
}

int shm_writer_set_sync(struct shm_arena *a, uint16_t type, const char *rv, bool synced)
{
	int r = check_writer(a);
	if (r < 0)
		return r;
	if (!registered(a, type))
		return -EINVAL;
	struct shm_abi_type *t = shm_type_entry(a, type); /* registered: never NULL */
	/* relaxed: the single writer reads back its own last store (the selected copy) */
	uint64_t seq = atomic_load_explicit(&t->sync_seq, memory_order_relaxed);
	uint64_t flags = atomic_load_explicit(&t->sync[seq & 1][SHM_ABI_SYNC_WORDS - 1],
	                                      memory_order_relaxed);
	return shm_writer_set_sync_epoch(a, type, rv, synced,
	                                 (uint32_t)(flags >> SHM_ABI_SYNC_EPOCH_SHIFT));
}

int shm_writer_set_sync_epoch(struct shm_arena *a, uint16_t type, const char *rv, bool synced,
                              uint32_t epoch)
{
	int r = check_writer(a);
	if (r < 0)
		return r;
	if (!registered(a, type))
		return -EINVAL;
	size_t n = rv ? strlen(rv) : 0;
	if (n > SHM_ABI_RV_MAX)
		return -ENAMETOOLONG;
	struct shm_abi_type *t = shm_type_entry(a, type); /* registered: never NULL */
	uint64_t words[SHM_ABI_SYNC_WORDS] = {0};
	if (n)
		memcpy(words, rv, n);
	words[SHM_ABI_SYNC_WORDS - 1] =
	        (synced ? SHM_ABI_SYNC_SYNCED : 0) | ((uint64_t)epoch << SHM_ABI_SYNC_EPOCH_SHIFT);
	uint64_t seq = atomic_load_explicit(&t->sync_seq, memory_order_relaxed);
	unsigned idx = (unsigned)((seq + 1) & 1); /* the copy readers are not directed to */
	for (unsigned i = 0; i < SHM_ABI_SYNC_WORDS; i++)
		atomic_store_explicit(&t->sync[idx][i], words[i], memory_order_relaxed);
	/* release: the copy's words before the switch; pairs with the acquire load of sync_seq
	 * in shm_reader_type_info (latch: a writer dying above leaves the old copy selected). */
	atomic_store_explicit(&t->sync_seq, seq + 1, memory_order_release);
	bump_change(a);
	return 0;
}

/* ---- open / create / close ------------------------------------------------------------------ */
int shm_arena_create(const struct shm_create_opts *opts, int *ret_fd)
{
	if (!ret_fd)
		return -EINVAL;
	uint64_t max = opts && opts->max_size ? opts->max_size : UINT64_C(16) << 30;
	uint64_t init = opts && opts->initial_size ? opts->initial_size : UINT64_C(4) << 20;
	max = (max + SHM_ABI_REGION_SIZE - 1) & ~(SHM_ABI_REGION_SIZE - 1);
	if (max > SHM_ABI_MAX_SIZE || max < (UINT64_C(1) << 20) || init > max)
		return -EINVAL;
	uint64_t rt_off = (sizeof(struct shm_abi_header) + 63) & ~UINT64_C(63);
	uint64_t rt_bytes = (max >> SHM_ABI_REGION_SHIFT) * 4;
	uint64_t data_off =
	        (rt_off + rt_bytes + SHM_ABI_REGION_SIZE - 1) & ~(SHM_ABI_REGION_SIZE - 1);
	if (data_off + 4 * SHM_ABI_REGION_SIZE > max)
		return -EINVAL;
	if (init < data_off + 4 * SHM_ABI_REGION_SIZE)
		init = data_off + 4 * SHM_ABI_REGION_SIZE;
	init = (init + SHM_ABI_REGION_SIZE - 1) & ~(SHM_ABI_REGION_SIZE - 1);

	int fd = memfd_create("kcmd-arena", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	int r;
	if (ftruncate(fd, (off_t)init) < 0 || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) < 0) {
		r = -errno;
		goto fail;
	}
	struct shm_abi_header *h =
	        mmap(NULL, sizeof(*h), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED) {
		r = -errno;
		goto fail;
	}
	h->version = SHM_ABI_VERSION;
	h->header_size = sizeof(*h);
	h->max_size = max;
	h->region_table_off = rt_off;
	h->data_off = data_off;
	if (getrandom(&h->hash_seed, sizeof(h->hash_seed), 0) != sizeof(h->hash_seed))
		h->hash_seed = UINT64_C(0x6b636d64) ^ (uint64_t)getpid();
	atomic_store_explicit(&h->size, init, memory_order_relaxed);
	atomic_store_explicit(&h->carved, data_off, memory_order_relaxed);
	atomic_store_explicit(&h->handles_hw, 1, memory_order_relaxed);
	/* release: magic last; nobody maps the arena before this function returns anyway. */
	atomic_thread_fence(memory_order_release);
	h->magic = SHM_ABI_MAGIC;
	munmap(h, sizeof(*h));
	*ret_fd = fd;
	return 0;
fail:
	close(fd);
	return r;
}

int shm__reopen_ro(int fd, int *ret_fd)
{
	char path[64];
	if (fd < 0 || !ret_fd)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	int ro = open(path, O_RDONLY | O_CLOEXEC);
	if (ro < 0)
		return -errno;
	*ret_fd = ro;
	return 0;
}

int shm_arena_reader_fd(int fd, int *ret_fd)
{
	return shm__reopen_ro(fd, ret_fd);
}

int shm_arena_version(int fd, uint32_t *ret_version)
{
	struct {
		uint64_t magic;
		uint32_t version;
	} h0;
	if (fd < 0 || !ret_version)
		return -EINVAL;
	ssize_t n = pread(fd, &h0, sizeof(h0), 0);
	if (n < 0)
		return -errno;
	if (n != sizeof(h0) || h0.magic != SHM_ABI_MAGIC)
		return -EBADMSG;
	*ret_version = h0.version;
	return 0;
}

static int arena_map(int fd, bool writable, struct shm_arena **ret)
{
	struct stat st;
	if (fd < 0 || !ret)
		return -EINVAL;
	if (fstat(fd, &st) < 0)
		return -errno;
	struct {
		uint64_t magic;
		uint32_t version, header_size;
		uint64_t max_size, rt_off, data_off, seed;
	} h0;
	if ((uint64_t)st.st_size < sizeof(struct shm_abi_header) ||
	    pread(fd, &h0, sizeof(h0), 0) != sizeof(h0))
		return -EBADMSG;
	if (h0.magic != SHM_ABI_MAGIC)
		return -EBADMSG;
	if (h0.version != SHM_ABI_VERSION || h0.header_size != sizeof(struct shm_abi_header))
		return -EPROTONOSUPPORT;
	if (h0.max_size > SHM_ABI_MAX_SIZE || (uint64_t)st.st_size > h0.max_size ||
	    h0.data_off >= h0.max_size ||
	    h0.rt_off + (h0.max_size >> SHM_ABI_REGION_SHIFT) * 4 > h0.data_off)
		return -EBADMSG;
	struct shm_arena *a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->lock_fd = -1;
	void *p = mmap(NULL, h0.max_size, PROT_READ | (writable ? PROT_WRITE : 0),
	               MAP_SHARED | MAP_NORESERVE, fd, 0);
	if (p == MAP_FAILED) {
		int r = -errno;
		free(a);
		return r;
	}
	a->base = p;
	a->map_size = h0.max_size;
	a->hdr = p;
	a->rt = (_Atomic uint32_t *)(a->base + h0.rt_off);
	a->data_off = h0.data_off;
	a->seed = h0.seed;
	*ret = a;
	return 0;
}

static void w_state_free(struct w_state *w)
{
	if (!w)
		return;
	for (unsigned c = 0; c < SHM_ABI_NCLASSES; c++)
		free(w->cls[c].freed.v);
	free(w->free_handles.v);
	free(w->atoms);
	free(w->buf);
	free(w->tix);
	free(w->tfree);
	free(w);
}

void shm_arena_close(struct shm_arena *a)
{
	if (!a)
		return;
	munmap(a->base, a->map_size);
	if (a->lock_fd >= 0)
		close(a->lock_fd);
	w_state_free(a->w);
	for (int i = 0; i < 4; i++)
		free(a->scr[i]);
	free(a->hv);
	free(a->th);
	free(a);
}

int shm_reader_open(int fd, struct shm_arena **ret)
{
	return arena_map(fd, false, ret);
}

int shm_recover(struct shm_arena *a); /* below */

int shm_writer_open(int fd, struct shm_arena **ret)
{
	char path[64];
	if (fd < 0 || !ret)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	int lfd = open(path, O_RDWR | O_CLOEXEC);
	if (lfd < 0)
		return -errno;
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
	if (fcntl(lfd, F_OFD_SETLK, &fl) < 0) {
		int r = (errno == EAGAIN || errno == EACCES) ? -EBUSY : -errno;
		close(lfd);
		return r;
	}
	struct shm_arena *a;
	int r = arena_map(lfd, true, &a);
	if (r < 0) {
		close(lfd);
		return r;
	}
	a->lock_fd = lfd;
	a->w = calloc(1, sizeof(*a->w));
	if (!a->w) {
		shm_arena_close(a);
		return -ENOMEM;
	}
	r = shm_recover(a);
	if (r < 0) {
		shm_arena_close(a);
		return r;
	}
	*ret = a;
	return 0;
}

/* ---- recovery: mark, sweep, rebuild ---------------------------------------------------------- */
struct mark {
	uint64_t *bits;
	uint64_t base, n;
};

static void mark_set(struct mark *m, uint64_t off)
{
	uint64_t u = (off - m->base) >> SHM_ABI_UNIT_SHIFT;
	if (off >= m->base && u < m->n)
		m->bits[u / 64] |= UINT64_C(1) << (u % 64);
}
static bool mark_get(const struct mark *m, uint64_t off)
{
	uint64_t u = (off - m->base) >> SHM_ABI_UNIT_SHIFT;
	return (m->bits[u / 64] >> (u % 64)) & 1;
}

/* A ref is acceptable if it lands on a stable block of the given kind inside the carved area. */
static bool ref_ok(struct shm_arena *a, uint64_t ref, unsigned kind, uint64_t carved)
{
	return blk_ok(a, ref, kind, carved, NULL);
}

static void mark_index(struct shm_arena *a, struct mark *m, uint64_t root, bool multi,
                       uint64_t carved)
{
	if (!ref_ok(a, root, SHM_ABI_BLK_TABLE, carved))
		return;
	mark_set(m, shm_ref_off(root));
	if (!multi)
		return;
	const struct shm_abi_table *t = shm_body(a, shm_ref_off(root));
	_Atomic uint64_t *slots = (_Atomic uint64_t *)(t + 1);
	for (uint32_t i = 0; i < t->cap; i++) {
		uint64_t s = atomic_load_explicit(&slots[i], memory_order_relaxed);
		if (s && s != SHM_ABI_TOMB64 && ref_ok(a, s, SHM_ABI_BLK_SET, carved))
			mark_set(m, shm_ref_off(s));
	}
}

static int rebuild_indexes(struct shm_arena *a, uint64_t *violations);

int shm_recover(struct shm_arena *a)
{
	struct shm_abi_header *hd = a->hdr;
	struct w_state *w = a->w;
	/* acquire: pairs with carve's release store; region entries below carved are visible. */
	uint64_t carved = atomic_load_explicit(&hd->carved, memory_order_acquire);
	uint64_t size = atomic_load_explicit(&hd->size, memory_order_acquire);
	if (carved < hd->data_off || carved > size || carved > hd->max_size)
		return -EUCLEAN;
	uint64_t violations = 0;

	struct mark m = {.base = hd->data_off, .n = (carved - hd->data_off) >> SHM_ABI_UNIT_SHIFT};
	m.bits = calloc(m.n / 64 + 1, sizeof(uint64_t));
	if (!m.bits)
		return -ENOMEM;

	/* The resource table (T3): every published chunk is live; n_types covers every entry
	 * ever registered. A bad chunk ref is not repairable in place (-EUCLEAN: fresh arena). */
	uint64_t nt = 0;
	for (unsigned c = 0; c < SHM_ABI_TDIR_SLOTS; c++) {
		uint64_t ref = atomic_load_explicit(&hd->type_dir[c], memory_order_relaxed);
		if (!ref)
			continue;
		if (!ref_ok(a, ref, SHM_ABI_BLK_TCHUNK, carved) ||
		    shm_block_class_size(a, shm_ref_off(ref), size) <
		            SHM_ABI_BLK_HDR + sizeof(struct shm_abi_type) * SHM_ABI_TCHUNK_SLOTS) {
			free(m.bits);
			return -EUCLEAN;
		}
		mark_set(&m, shm_ref_off(ref));
		for (unsigned j = 0; j < SHM_ABI_TCHUNK_SLOTS; j++) {
			unsigned i = c * SHM_ABI_TCHUNK_SLOTS + j;
			struct shm_abi_type *t = shm_type_entry(a, i);
			uint64_t st = atomic_load_explicit(&t->state, memory_order_relaxed);
			if (SHM_ABI_TYPE_STATUS(st) == SHM_ABI_TYPE_WRITING) {
				/* a writer killed while re-registering the slot: retired again (T2)
				 */
				atomic_store_explicit(&t->state,
				                      SHM_ABI_TYPE_STATE(SHM_ABI_TYPE_GEN(st),
				                                         SHM_ABI_TYPE_RETIRED),
				                      memory_order_release);
			}
			if (st)
				nt = i + 1;
		}
	}
	/* ids are appended in order and a chunk is published before its first id: every id
	 * below nt has its chunk, or the table is not one this writer produced */
	for (uint64_t i = 0; i < nt; i += SHM_ABI_TCHUNK_SLOTS)
		if (!shm_type_entry(a, (unsigned)i)) {
			free(m.bits);
			return -EUCLEAN;
		}
	atomic_store_explicit(&hd->n_types, nt, memory_order_release);
	w->tix_valid = false; /* the writer's type lookup is rebuilt from what recovery kept */
	uint64_t *counts = calloc(nt ? nt : 1, sizeof(*counts));
	if (!counts) {
		free(m.bits);
		return -ENOMEM;
	}

	/* mark: handle chunks, records and their atoms (refcounted into the intern map) */
	uint64_t hw = atomic_load_explicit(&hd->handles_hw, memory_order_relaxed);
	if (hw == 0 || hw > SHM_ABI_MAX_HANDLES)
		hw = 1;
	for (unsigned c = 0; c < SHM_ABI_HDIR_SLOTS; c++) {
		uint64_t ref = atomic_load_explicit(&hd->handle_dir[c], memory_order_relaxed);
		if (!ref)
			continue;
		if (!ref_ok(a, ref, SHM_ABI_BLK_HCHUNK, carved)) {
			free(m.bits);
			free(counts);
			return -EUCLEAN;
		}
		mark_set(&m, shm_ref_off(ref));
	}
	uint64_t objects = 0;
	int r = 0;
	for (uint32_t h = 1; h < hw; h++) {
		_Atomic uint64_t *slot = shm_handle_slot(a, h);
		if (!slot) {
			hw = h; /* chunk never published: handles beyond it never existed */
			break;
		}
		uint64_t ref = atomic_load_explicit(slot, memory_order_relaxed);
		if (!ref) {
			if ((r = fifo_push(&w->free_handles, h)) < 0)
				goto out;
			continue;
		}
		struct w_view v;
		if (!ref_ok(a, ref, SHM_ABI_BLK_RECORD, carved) || view_record(a, ref, &v) < 0 ||
		    shm_ref_aux(ref) != v.r.type || !registered(a, v.r.type) || v.r.type >= nt ||
		    v.r.type_gen != type_gen(a, v.r.type)) {
			violations++;
			atomic_store_explicit(slot, 0, memory_order_release);
			if ((r = fifo_push(&w->free_handles, h)) < 0)
				goto out;
			continue;
		}
		mark_set(&m, shm_ref_off(ref));
		const uint64_t refs[3] = {shm_abi_rec_atom(&v.r, 0), shm_abi_rec_atom(&v.r, 1),
		                          shm_abi_rec_atom(&v.r, 2)};
		for (int i = 0; i < 3; i++) {
			if (!refs[i])
				continue;
			const struct shm_abi_atom *at = shm_body(a, shm_ref_off(refs[i]));
			struct w_atom *e = atoms_find_ref(w, at->hash, refs[i]);
			if (e) {
				e->refs++;
			} else {
				mark_set(&m, shm_ref_off(refs[i]));
				if ((r = atoms_insert_raw(w, at->hash, refs[i], 1)) < 0)
					goto out;
			}
		}
		objects++;
		counts[v.r.type]++;
	}
	atomic_store_explicit(&hd->handles_hw, hw, memory_order_release);
	/* mark: the published indexes (kept intact until their replacements are published) */
	for (unsigned t = 0; t < nt; t++) {
		struct shm_abi_type *ty = shm_type_entry(a, t);
		mark_index(a, &m, atomic_load_explicit(&ty->name_index, memory_order_relaxed),
		           false, carved);
		mark_index(a, &m, atomic_load_explicit(&ty->ns_index, memory_order_relaxed), true,
		           carved);
		mark_index(a, &m, atomic_load_explicit(&ty->orphan_index, memory_order_relaxed),
		           true, carved);
		mark_index(a, &m, atomic_load_explicit(&ty->node_index, memory_order_relaxed), true,
		           carved);
		atomic_store_explicit(&ty->count, counts[t], memory_order_relaxed);
	}
	mark_index(a, &m, atomic_load_explicit(&hd->uid_index, memory_order_relaxed), false,
	           carved);
	mark_index(a, &m, atomic_load_explicit(&hd->owner_index, memory_order_relaxed), true,
	           carved);
	atomic_store_explicit(&hd->stat_objects, objects, memory_order_relaxed);

	/* sweep: every block of every carved region not marked goes to its class's free FIFO, in
	 * address order. The lost quarantine order is harmless: readers validate. */
	for (uint64_t off = hd->data_off; off < carved;) {
		uint32_t e = atomic_load_explicit(&a->rt[off >> SHM_ABI_REGION_SHIFT],
		                                  memory_order_relaxed);
		if (e == 0 || SHM_ABI_RT_BACK(e) != 0 || SHM_ABI_RT_CLASS(e) >= SHM_ABI_NCLASSES) {
			r = -EUCLEAN;
			goto out;
		}
		unsigned c = SHM_ABI_RT_CLASS(e);
		uint64_t cs = shm_abi_class_size(c), rsz = region_size(c);
		for (uint64_t b = off; b + cs <= off + rsz; b += cs) {
			if (mark_get(&m, b)) {
				w->live_bytes += cs;
				continue;
			}
			if ((r = fifo_push(&w->cls[c].freed, (uint32_t)(b >> SHM_ABI_UNIT_SHIFT))) <
			    0)
				goto out;
			w->quarantine_bytes += cs;
		}
		off += rsz;
	}
	free(m.bits);
	m.bits = NULL;

	r = rebuild_indexes(a, &violations);
	if (r < 0)
		goto out;
	atomic_store_explicit(&hd->stat_violations, violations, memory_order_relaxed);
	atomic_fetch_add_explicit(&hd->incarnation, 1, memory_order_relaxed);
	if (hw > 1)
		atomic_fetch_add_explicit(&hd->stat_recoveries, 1, memory_order_relaxed);
	bump_change(a);
out:
	free(m.bits);
	free(counts);
	return r;
}

static void free_index(struct shm_arena *a, uint64_t root, bool multi)
{
	if (!root)
		return;
	uint64_t carved = atomic_load_explicit(&a->hdr->carved, memory_order_relaxed);
	if (!ref_ok(a, root, SHM_ABI_BLK_TABLE, carved))
		return;
	if (multi) {
		const struct shm_abi_table *t = shm_body(a, shm_ref_off(root));
		_Atomic uint64_t *slots = (_Atomic uint64_t *)(t + 1);
		for (uint32_t i = 0; i < t->cap; i++) {
			uint64_t s = atomic_load_explicit(&slots[i], memory_order_relaxed);
			if (s && s != SHM_ABI_TOMB64 && ref_ok(a, s, SHM_ABI_BLK_SET, carved))
				w_free(a, shm_ref_off(s));
		}
	}
	w_free(a, shm_ref_off(root));
}

/* Build every index afresh from the handle table into unpublished roots, publish each with one
 * store, then retire the old structures. */
static int rebuild_indexes(struct shm_arena *a, uint64_t *violations)
{
	struct shm_abi_header *hd = a->hdr;
	uint64_t nt = atomic_load_explicit(&hd->n_types, memory_order_relaxed);
	uint64_t hw = atomic_load_explicit(&hd->handles_hw, memory_order_relaxed);
	struct {
		_Atomic uint64_t name, ns, orphan, node;
	} *nr = calloc(nt ? nt : 1, sizeof(*nr));
	_Atomic uint64_t nuid = 0, nowner = 0;
	if (!nr)
		return -ENOMEM;
	int r = 0;
	for (unsigned t = 0; t < nt; t++) {
		uint64_t cnt =
		        atomic_load_explicit(&shm_type_entry(a, t)->count, memory_order_relaxed);
		if (cnt && (r = shm_tab_reserve(a, &nr[t].name, cnt)) < 0)
			goto fail;
	}
	if (hd->stat_objects && (r = shm_tab_reserve(a, &nuid, hd->stat_objects)) < 0)
		goto fail;
	for (uint32_t h = 1; h < hw; h++) {
		uint64_t ref = shm_handle_load(a, h);
		struct w_view v;
		if (!ref)
			continue;
		if (view_record(a, ref, &v) < 0) {
			(*violations)++;
			continue;
		}
		struct roots rt = {
		        &nr[v.r.type].name, &nr[v.r.type].ns, &nr[v.r.type].orphan, &nuid, &nowner,
		        &nr[v.r.type].node};
		if ((r = index_add(a, &rt, &v, h, true, true, true, true, true)) < 0)
			goto fail;
	}
	/* publish: one release store per root (pairs with readers' acquire loads of the roots) */
	for (unsigned t = 0; t < nt; t++) {
		struct shm_abi_type *ty = shm_type_entry(a, t);
		SHM_CRASH_POINT(
		        6); /* some roots published, others not: the next recovery redoes it */
		uint64_t o1 =
		        atomic_exchange_explicit(&ty->name_index, nr[t].name, memory_order_acq_rel);
		uint64_t o2 =
		        atomic_exchange_explicit(&ty->ns_index, nr[t].ns, memory_order_acq_rel);
		uint64_t o3 = atomic_exchange_explicit(&ty->orphan_index, nr[t].orphan,
		                                       memory_order_acq_rel);
		uint64_t o4 =
		        atomic_exchange_explicit(&ty->node_index, nr[t].node, memory_order_acq_rel);
		free_index(a, o1, false);
		free_index(a, o2, true);
		free_index(a, o3, true);
		free_index(a, o4, true);
	}
	free_index(a, atomic_exchange_explicit(&hd->uid_index, nuid, memory_order_acq_rel), false);
	free_index(a, atomic_exchange_explicit(&hd->owner_index, nowner, memory_order_acq_rel),
	           true);
	free(nr);
	return 0;
fail:
	for (unsigned t = 0; t < nt; t++) {
		free_index(a, nr[t].name, false);
		free_index(a, nr[t].ns, true);
		free_index(a, nr[t].orphan, true);
		free_index(a, nr[t].node, true);
	}
	free_index(a, nuid, false);
	free_index(a, nowner, true);
	free(nr);
	return r;
}

/* ---- consistency check ---------------------------------------------------------------------- */
static bool in_set(struct shm_arena *a, _Atomic uint64_t *root, uint64_t key, uint32_t h)
{
	return shm_mset_contains(a, root, key, h);
}

int shm_writer_check(struct shm_arena *a)
{
	int r = check_writer(a);
	if (r < 0)
		return r;
	struct shm_abi_header *hd = a->hdr;
	uint64_t hw = atomic_load_explicit(&hd->handles_hw, memory_order_relaxed);
	uint64_t carved = atomic_load_explicit(&hd->carved, memory_order_relaxed);
	int bad = 0;
	uint64_t live = 0, owner_edges = 0;
	uint64_t nt = atomic_load_explicit(&hd->n_types, memory_order_relaxed);
	if (nt > SHM_ABI_MAX_TYPES)
		return 1;
	uint64_t *per_type = calloc(3 * (nt ? nt : 1), sizeof(uint64_t));
	if (!per_type)
		return -ENOMEM;
	uint64_t *orphans = per_type + (nt ? nt : 1);
	uint64_t *bound = orphans + (nt ? nt : 1); /* records in the node index */
	for (uint32_t h = 1; h < hw; h++) {
		uint64_t ref = shm_handle_load(a, h);
		if (!ref)
			continue;
		struct w_view v;
		if (!ref_ok(a, ref, SHM_ABI_BLK_RECORD, carved) || view_record(a, ref, &v) < 0 ||
		    shm_ref_aux(ref) != v.r.type || !registered(a, v.r.type) || v.r.type >= nt) {
			bad++;
			continue;
		}
		live++;
		per_type[v.r.type]++;
		struct roots rt;
		roots_of(a, v.r.type, &rt);
		if (w_find(a, v.r.type, v.ns, v.ns_len, (const char *)v.name, v.r.name_len) != h)
			bad++;
		if (!shm_tab_contains(a, rt.uid, shm_key_uid(a->seed, v.uid_str, v.uid_len), h))
			bad++;
		if (!in_set(a, rt.ns, shm_key_ns(a->seed, v.ns, v.ns_len), h))
			bad++;
		if (in_set(a, rt.orphan, shm_key_ns(a->seed, v.ns, v.ns_len), h) ==
		    has_controller(&v))
			bad++;
		struct w_owner oi, oj;
		size_t pi = 0;
		while (owner_next(v.owners, v.owners_len, &pi, &oi) > 0) {
			if (!in_set(a, rt.owner, shm_key_owner(a->seed, oi.uid, oi.uid_len), h))
				bad++;
			bool dup = false;
			size_t pj = 0;
			/* the references before this one (quadratic, check only) */
			while (!dup && pj < pi &&
			       owner_next(v.owners, v.owners_len, &pj, &oj) > 0 && pj < pi)
				dup = oj.uid_len == oi.uid_len &&
				      memcmp(oj.uid, oi.uid, oi.uid_len) == 0;
			owner_edges += !dup;
		}
		orphans[v.r.type] += !has_controller(&v);
		const char *nd;
		size_t ndl;
		if (node_of(&v, &nd, &ndl)) {
			bound[v.r.type]++;
			if (!in_set(a, rt.node, shm_key_node(a->seed, nd, ndl), h))
				bad++;
		}
		/* atoms: each referenced atom is in the intern map with a positive count */
		const uint64_t refs[3] = {shm_abi_rec_atom(&v.r, 0), shm_abi_rec_atom(&v.r, 1),
		                          shm_abi_rec_atom(&v.r, 2)};
		for (int i = 0; i < 3; i++) {
			if (!refs[i])
				continue;
			const struct shm_abi_atom *at = shm_body(a, shm_ref_off(refs[i]));
			struct w_atom *e = atoms_find_ref(a->w, at->hash, refs[i]);
			if (!e || e->refs == 0)
				bad++;
		}
	}
	/* every index entry count matches the live objects (no stale entries left behind) */
	uint64_t sum = 0;
	for (unsigned t = 0; t < nt; t++) {
		struct shm_abi_type *ty = shm_type_entry(a, t);
		if (!ty) { /* T3: every id below n_types has its chunk */
			bad++;
			continue;
		}
		uint64_t n = shm_tab_count(a, &ty->name_index);
		if (n != per_type[t] ||
		    atomic_load_explicit(&ty->count, memory_order_relaxed) != per_type[t])
			bad++;
		sum += shm_mset_total(a, &ty->ns_index);
		if (shm_mset_total(a, &ty->orphan_index) != orphans[t])
			bad++;
		if (shm_mset_total(a, &ty->node_index) != bound[t])
			bad++;
	}
	free(per_type);
	if (shm_tab_count(a, &hd->uid_index) != live || sum != live ||
	    shm_mset_total(a, &hd->owner_index) != owner_edges)
		bad++;
	return bad;
}
