/* SPDX-License-Identifier: Apache-2.0 */
/* shm/shm-internal.h - private to the shm/ sources and tests: the arena handle, the writer's
 * private state, block access helpers and the test seams. Nothing here is shared memory layout
 * (that is shm/shm-abi.h) or public API (shm/arena.h). */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shm/arena.h"
#include "shm/shm-abi.h"

/* ---- test seams ---------------------------------------------------------------------------- *
 * Set only by tests (the torture test's negative control, the crash-point enumeration).
 * SHM_TEST_NO_VALIDATE: readers skip the final generation check (the broken variant the torture
 * oracle must catch). SHM_TEST_NO_QUARANTINE: the writer reuses the most recently freed block at
 * once (stress). shm__test_crash_point/_count: the writer raises SIGKILL at the count-th visit of
 * that point. */
#define SHM_TEST_NO_VALIDATE   0x1u
#define SHM_TEST_NO_QUARANTINE 0x2u
#define SHM_TEST_SLOW_COPY     0x4u /* readers pause (20 us) half-way through copies >= 4 KiB */
/* The writer publishes a type registration (REGISTERED, new gen) before its strings, pausing
 * between them: the broken T2 order the torture's type oracle must catch. */
#define SHM_TEST_TYPE_EARLY 0x8u
void shm__test_pause(void);
extern unsigned shm__test_flags;
extern int shm__test_crash_point;
extern long shm__test_crash_count;
void shm__crash_point(int n);
#define SHM_CRASH_POINT(n)                                                                         \
	do {                                                                                       \
		if (__builtin_expect(shm__test_crash_point == (n), 0))                             \
			shm__crash_point(n);                                                       \
	} while (0)
/* Fault injection: the n-th allocation of a block fails with -ENOMEM (0 = off). */
extern long shm__test_fail_alloc_at;

/* ---- writer-private state ------------------------------------------------------------------- */
struct w_fifo { /* ring of u32 (block units or handles) */
	uint32_t *v;
	size_t cap, head, len;
};

struct w_class {
	struct w_fifo freed;     /* quarantine, oldest first */
	uint64_t bump, bump_end; /* carving cursor in the current region */
	uint64_t free_bytes;
};

struct w_atom { /* intern map entry (open addressing, backward-shift delete: private) */
	uint64_t hash;
	uint64_t ref; /* 0 = empty */
	uint32_t refs;
};

struct w_state {
	struct w_class cls[SHM_ABI_NCLASSES];
	struct w_fifo free_handles;
	struct w_atom *atoms;
	size_t atoms_cap, atoms_len;
	uint8_t *buf; /* record/body building */
	size_t buf_cap;
	uint64_t live_bytes, quarantine_bytes, bump_free;
	long n_allocs;
	/* T3: the writer's private lookup of the resource table, rebuilt from the arena when
	 * !tix_valid (after recovery, or when too full): open addressing over
	 * hash(group, version, resource), slot = id + 1, 0 empty, UINT32_MAX tombstone; and a
	 * bitmap of the ids below n_types that are not registered (reusable). */
	uint32_t *tix;
	uint32_t tix_cap, tix_used;
	bool tix_valid;
	uint64_t *tfree;
};

struct shm_arena {
	uint8_t *base;
	uint64_t map_size;
	struct shm_abi_header *hdr;
	_Atomic uint32_t *rt; /* region table */
	uint64_t data_off;    /* the header's, validated at map time; never re-read from shm */
	uint64_t seed;
	int lock_fd;       /* writer: private OFD holding the writer lock; -1 for readers */
	struct w_state *w; /* NULL for readers */
	/* reader scratch */
	uint8_t *scr[4];
	size_t scr_cap[4];
	uint32_t *hv;
	size_t hv_cap, hv_len;
	/* reader: process-local hints GVR hash -> type id for shm_reader_find_type (reader.c);
	 * every hit is re-validated against the slot, so a stale hint costs one scan, never a
	 * wrong answer. Open addressing, grown at half full; one entry per GVR ever found. */
	struct shm_type_hint *th;
	size_t th_cap, th_len;
};

struct shm_type_hint {
	uint64_t h; /* 0: empty */
	uint32_t id;
};

/* ---- hashing (seeded, stable across processes of one arena) ---------------------------------- */
uint64_t shm_hash(uint64_t seed, const void *p, size_t n);
static inline uint64_t shm_hash_str(uint64_t seed, const char *s, size_t n)
{
	return shm_hash(seed, s, n);
}
uint64_t shm_key_name(uint64_t seed, const char *ns, size_t nsl, const char *name, size_t nl);
/* Index keys: namespace (ns and orphan multi-indexes), owner uid (owner multi-index), uid. */
static inline uint64_t shm_key_ns(uint64_t seed, const char *ns, size_t n)
{
	return shm_hash(seed ^ 1, ns, n);
}
static inline uint64_t shm_key_owner(uint64_t seed, const char *uid, size_t n)
{
	return shm_hash(seed ^ 2, uid, n);
}
static inline uint64_t shm_key_uid(uint64_t seed, const char *uid, size_t n)
{
	return shm_hash(seed ^ 3, uid, n);
}
static inline uint64_t shm_key_node(uint64_t seed, const char *node, size_t n)
{
	return shm_hash(seed ^ 4, node, n);
}
static inline uint32_t shm_mix32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

/* ---- block access ---------------------------------------------------------------------------- */
static inline struct shm_abi_block *shm_blk(struct shm_arena *a, uint64_t off)
{
	return (struct shm_abi_block *)(a->base + off);
}
static inline void *shm_body(struct shm_arena *a, uint64_t off)
{
	return a->base + off + SHM_ABI_BLK_HDR;
}

/* Relaxed word-wise copies (Boehm's seqlock rule: racing accesses are atomics). len % 8 == 0. */
void shm_copy_in(void *dst, const void *src, size_t len);
void shm_copy_out(void *dst, const void *src, size_t len);

/* Reader: copy the body of the block ref points to into scratch slot `slot`, validated (A3).
 * 0 ok (*ret_body, *ret_len set), -EAGAIN stale or racing (retry from the referrer). */
int shm_read_block(struct shm_arena *a, uint64_t ref, unsigned kind, unsigned slot,
                   const uint8_t **ret_body, uint32_t *ret_len);
/* Class size of the block at off, or 0 if off is not inside a carved region (A5). */
uint64_t shm_block_class_size(struct shm_arena *a, uint64_t off, uint64_t size);
/* Load a handle slot (acquire): 0 if the handle is free or out of range. */
uint64_t shm_handle_load(struct shm_arena *a, uint32_t h);
_Atomic uint64_t *shm_handle_slot(struct shm_arena *a, uint32_t h);
/* The resource-table entry of a type id (T3), or NULL: id out of range or its chunk not
 * published (the id is unknown). Acquire load of the directory entry. */
struct shm_abi_type *shm_type_entry(struct shm_arena *a, unsigned type);

/* uid <-> 16 raw bytes for canonical lowercase UUIDs. */
bool shm_uid_pack(const char *uid, size_t len, uint8_t out[16]);
void shm_uid_unpack(const uint8_t in[16], char out[37]);

/* Copy an object out of handle h (validated): 0, -ENOENT free handle, -EAGAIN retries
 * exhausted, -ENOMEM. */
int shm_read_obj(struct shm_arena *a, uint32_t h, struct shm_obj *obj);

/* ---- writer allocator (arena.c) -------------------------------------------------------------- */
int w_alloc(struct shm_arena *a, size_t body_len, unsigned kind, uint64_t *ret_off);
uint64_t w_close(struct shm_arena *a, uint64_t off);
void w_free(struct shm_arena *a, uint64_t off);
void w_zero(struct shm_arena *a, uint64_t off, size_t from, size_t len);

/* A new O_RDONLY, close-on-exec descriptor of the same memfd (through /proc/self/fd), for
 * readers whose PROT_WRITE mapping must fail. 0 and *ret_fd, or -EINVAL / -errno. Shared by the
 * arena's and the change feed's reader_fd. */
int shm__reopen_ro(int fd, int *ret_fd);
