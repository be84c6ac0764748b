/* SPDX-License-Identifier: Apache-2.0 */
/* shm/shm-abi.h - the shared-memory layout of the kcmd cache arena, see SHM_ABI_VERSION.
 *
 * Everything a process sees in the arena memfd is declared here, once. The file is the contract
 * between the one writer (informerd), the readers (workers, kcmctl) and the owner (the manager,
 * who creates the memfd). A process built against another SHM_ABI_VERSION refuses to map the
 * arena (shm_reader_open/shm_writer_open return -EPROTONOSUPPORT); a file that is not an arena
 * at all gives -EBADMSG.
 *
 * Rules of this layout (see shm/arena.h for the protocol and its INVARIANTS):
 *  - Shared data holds offsets, never pointers. A "ref" is one 64-bit word:
 *      bits  0..31  block offset >> SHM_ABI_UNIT_SHIFT (16-byte units: 64 GiB addressable)
 *      bits 32..47  generation tag: (block gen >> 1) & 0xffff at the time of publication
 *      bits 48..63  aux: the resource type id in a handle slot, a key tag in a multi-index slot
 *    The value 0 means "nothing" (offset 0 is the header, never a block).
 *  - Every word a reader can race with is accessed with C11 atomics (64-bit words, or 32-bit
 *    set slots); block bodies are copied in and out as relaxed 64-bit atomic words.
 *  - Fields documented "immutable" are written before the word that publishes them.
 *  - Little-endian, x86-64/aarch64 natural alignment; sizes and offsets are static_asserted.
 *
 * Version rule: any change to a struct, a constant or an encoding below bumps SHM_ABI_VERSION.
 * There is no in-place upgrade: a new version gets a new arena (the manager creates it, the
 * writer re-lists into it).
 */
#pragma once

#include <assert.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define SHM_ABI_MAGIC   UINT64_C(0x314d4853444d434b) /* "KCMDSHM1" little-endian */
#define SHM_ABI_VERSION 5u /* 4: the resource table became a chunk directory; 5: node_index */

#define SHM_ABI_UNIT_SHIFT   4u  /* blocks are 16-byte aligned; refs count 16-byte units */
#define SHM_ABI_REGION_SHIFT 16u /* regions are carved in 64 KiB units */
#define SHM_ABI_REGION_SIZE  (UINT64_C(1) << SHM_ABI_REGION_SHIFT)
/* The resource table: a directory of chunks of type entries, each chunk allocated from the
 * arena when the first id in it is needed (arena.h T2, T3). 256 x 256 = 65,536 ids: the whole
 * 16-bit id space of a ref's aux and a record's type field. */
#define SHM_ABI_TCHUNK_SHIFT 8u
#define SHM_ABI_TCHUNK_SLOTS (1u << SHM_ABI_TCHUNK_SHIFT) /* type entries per chunk */
#define SHM_ABI_TDIR_SLOTS   256u
#define SHM_ABI_MAX_TYPES    (SHM_ABI_TCHUNK_SLOTS * SHM_ABI_TDIR_SLOTS)
#define SHM_ABI_HCHUNK_SHIFT 12u /* 4096 handle slots per handle chunk */
#define SHM_ABI_HCHUNK_SLOTS (1u << SHM_ABI_HCHUNK_SHIFT)
#define SHM_ABI_HDIR_SLOTS   4096u /* chunks: 16 Mi handles at most */
#define SHM_ABI_MAX_HANDLES  (SHM_ABI_HCHUNK_SLOTS * SHM_ABI_HDIR_SLOTS)
#define SHM_ABI_NCLASSES     96u
#define SHM_ABI_MAX_SIZE     (UINT64_C(1) << (32 + SHM_ABI_UNIT_SHIFT)) /* 64 GiB */
#define SHM_ABI_RV_MAX       63u /* longest resourceVersion kept in the resource table */
#define SHM_ABI_NAME_MAX     63u /* longest group / version / resource / kind string */

/* Size classes: class c holds blocks of shm_abi_class_size(c) bytes, header included.
 * 0..15: 16..256 in steps of 16; from 16 on: four steps per doubling (320, 384, 448, 512, 640,
 * ...) up to 256 MiB. Part of the ABI: readers use it to bound every copy (INVARIANT A5). */
static inline uint64_t shm_abi_class_size(unsigned c)
{
	if (c < 16)
		return (uint64_t)(c + 1) * 16;
	unsigned k = c - 16;
	uint64_t base = UINT64_C(256) << (k / 4);
	return base + (uint64_t)(k % 4 + 1) * (base / 4);
}

/* ---- refs ------------------------------------------------------------------------------------ */
static inline uint64_t shm_ref_make(uint64_t off, uint64_t gen, uint64_t aux)
{
	return (off >> SHM_ABI_UNIT_SHIFT) | (((gen >> 1) & 0xffff) << 32) | (aux << 48);
}
static inline uint64_t shm_ref_off(uint64_t ref)
{
	return (ref & 0xffffffffu) << SHM_ABI_UNIT_SHIFT;
}
static inline unsigned shm_ref_gen16(uint64_t ref)
{
	return (unsigned)(ref >> 32) & 0xffff;
}
static inline unsigned shm_ref_aux(uint64_t ref)
{
	return (unsigned)(ref >> 48);
}
static inline unsigned shm_gen16(uint64_t gen)
{
	return (unsigned)(gen >> 1) & 0xffff;
}

/* ---- region table ---------------------------------------------------------------------------
 * One 32-bit entry per 64 KiB unit of the arena, at header.region_table_off. 0 = not carved.
 * Otherwise bits 0..7 = class + 1 and bits 8..31 = distance in units back to the region's first
 * unit. Written once, before header.carved is advanced over it (release), never changed: a
 * region keeps its class forever, so a block start stays a block start (type-stable memory). */
#define SHM_ABI_RT_CLASS(e) (((e)&0xffu) - 1u)
#define SHM_ABI_RT_BACK(e)  ((e) >> 8)

/* ---- blocks ---------------------------------------------------------------------------------- */
enum shm_abi_block_kind {
	SHM_ABI_BLK_RECORD = 1, /* an object record (struct shm_abi_record + bytes) */
	SHM_ABI_BLK_ATOM = 2,   /* an interned string / label set / owner-reference set */
	SHM_ABI_BLK_TABLE = 3,  /* an open-addressing index table (struct shm_abi_table + slots) */
	SHM_ABI_BLK_SET = 4,    /* a multi-index value set (struct shm_abi_set + u32 slots) */
	SHM_ABI_BLK_HCHUNK = 5, /* a chunk of the handle table (u64 slots) */
	SHM_ABI_BLK_TCHUNK = 6, /* a chunk of the resource table (struct shm_abi_type slots) */
};

/* Every block starts with one 64-bit word, so that its generation, kind and length change
 * together in one store: bits 0..31 gen (even when the block is stable, odd while the writer
 * fills it; +2 per reuse, wrapping), bits 32..35 kind, bits 36..63 slack = class size - 8 - body
 * length. The body (its length rounded up to 8) follows at +8. */
struct shm_abi_block {
	_Atomic uint64_t word;
};
static_assert(sizeof(struct shm_abi_block) == 8, "block header");
#define SHM_ABI_BLK_HDR 8u
#define SHM_ABI_WORD(gen, kind, slack)                                                             \
	((uint64_t)(uint32_t)(gen) | ((uint64_t)(kind) << 32) | ((uint64_t)(slack) << 36))
#define SHM_ABI_WORD_GEN(w)   ((uint32_t)(w))
#define SHM_ABI_WORD_KIND(w)  ((unsigned)((w) >> 32) & 0xfu)
#define SHM_ABI_WORD_SLACK(w) ((uint64_t)(w) >> 36)

/* Record body. Variable part follows in this order: uid bytes, name bytes, rv bytes, payload.
 * Strings are not NUL-terminated in the arena. A uid in canonical lowercase 8-4-4-4-12 UUID
 * form is stored as 16 raw bytes with SHM_ABI_REC_UID_BIN set. */
#define SHM_ABI_REC_UID_BIN 0x01u
enum { SHM_ABI_REC_NS = 0, SHM_ABI_REC_LABELS = 1, SHM_ABI_REC_OWNERS = 2 };
struct shm_abi_record {
	uint16_t type;        /* resource type id (entry of the resource table) */
	uint8_t payload_kind; /* enum shm_record_kind of shm/arena.h */
	uint8_t flags;
	uint32_t name_len;
	uint16_t uid_len; /* bytes stored: 16 if UID_BIN */
	uint16_t rv_len;
	uint32_t payload_len;
	/* atoms, as the two halves of a ref (unit, gen16; aux 0): [NS] a STRING, never absent
	 * ("" for cluster scope); [LABELS] a LABELS atom or unit 0; [OWNERS] an OWNERS atom or 0 */
	uint32_t atom_unit[3];
	uint16_t atom_gen[3];
	uint16_t reserved;
	uint32_t type_gen; /* the type slot's generation when written (struct shm_abi_type) */
};
static_assert(sizeof(struct shm_abi_record) == 40, "record");
static_assert(offsetof(struct shm_abi_record, atom_unit) == 16, "record");
static inline uint64_t shm_abi_rec_atom(const struct shm_abi_record *r, int i)
{
	return r->atom_unit[i] ? (uint64_t)r->atom_unit[i] | (uint64_t)r->atom_gen[i] << 32 : 0;
}

/* Atom body: immutable once published; freed when no record refers to it any more.
 * STRING: the bytes. LABELS: "key\0value\0" pairs sorted by key.
 * OWNERS: per reference a struct shm_abi_owner then uid, api_version, kind, name bytes. */
enum shm_abi_atom_kind {
	SHM_ABI_ATOM_STRING = 1,
	SHM_ABI_ATOM_LABELS = 2,
	SHM_ABI_ATOM_OWNERS = 3
};
struct shm_abi_atom {
	uint64_t hash; /* seeded hash of (kind, bytes) */
	uint32_t len;
	uint32_t kind;
};
static_assert(sizeof(struct shm_abi_atom) == 16, "atom");
#define SHM_ABI_OWNER_CONTROLLER     0x01u /* controller: true */
#define SHM_ABI_OWNER_BLOCK          0x02u /* blockOwnerDeletion: true */
#define SHM_ABI_OWNER_CONTROLLER_SET 0x04u /* controller present (else absent, a nil *bool) */
#define SHM_ABI_OWNER_BLOCK_SET      0x08u /* blockOwnerDeletion present */
/* Lengths are 32-bit: the apiserver bounds none of these strings (nor the number of
 * references) except through the object's size (etcd's 1.5 MiB request limit). */
struct shm_abi_owner {
	uint32_t flags;
	uint32_t uid_len;
	uint32_t api_version_len;
	uint32_t kind_len;
	uint32_t name_len;
	uint32_t pad;
};
static_assert(sizeof(struct shm_abi_owner) == 24, "owner");

/* Table body (open addressing, linear probing, power-of-two capacity), then cap u64 slots.
 * Handle tables (name index, uid index): slot = tag32 << 32 | handle32; 0 empty,
 * handle SHM_ABI_TOMB tombstone. Multi-index tables: slot = ref of a set block with aux = 16
 * bits of the key hash; SHM_ABI_TOMB64 tombstone. cap is immutable; count/tombs are the
 * writer's bookkeeping (relaxed, for statistics). */
#define SHM_ABI_TOMB   UINT32_C(0xffffffff)
#define SHM_ABI_TOMB64 UINT64_C(0xffffffffffffffff)
enum shm_abi_table_kind { SHM_ABI_TAB_HANDLES = 1, SHM_ABI_TAB_MULTI = 2 };
struct shm_abi_table {
	uint32_t cap;
	uint32_t kind;
	_Atomic uint64_t count;
	_Atomic uint64_t tombs;
	uint64_t reserved;
};
static_assert(sizeof(struct shm_abi_table) == 32, "table");

/* Set body: the handles that share one multi-index key (hash-placed, linear probing), then cap
 * u32 slots: 0 empty, SHM_ABI_TOMB tombstone. */
struct shm_abi_set {
	uint64_t key_hash;
	uint32_t cap;
	uint32_t reserved;
	_Atomic uint64_t count;
	_Atomic uint64_t tombs;
};
static_assert(sizeof(struct shm_abi_set) == 32, "set");

/* ---- the resource table ---------------------------------------------------------------------
 * One entry per registered resource type. Entry id lives in chunk id >> SHM_ABI_TCHUNK_SHIFT
 * (a TCHUNK block whose body is SHM_ABI_TCHUNK_SLOTS entries, zeroed = FREE before it is
 * published) at index id & (SHM_ABI_TCHUNK_SLOTS - 1); header.type_dir holds the chunk refs. state
 * REGISTERED publishes the entry; the strings and record_kind change only when a RETIRED slot is
 * registered again, under a new gen (arena.h T2). sync is a two-copy latch (seqcount_latch): the
 * writer fills copy (sync_seq + 1) & 1, then stores sync_seq + 1 with release; a writer killed
 * while filling leaves the selected copy intact. */
#define SHM_ABI_SYNC_WORDS 9 /* rv[64] + flags */
/* Type slot state word (arena.h T2): gen << 32 | status. */
#define SHM_ABI_TYPE_FREE           0u /* never used (gen 0) */
#define SHM_ABI_TYPE_REGISTERED     1u
#define SHM_ABI_TYPE_RETIRED        2u /* resource gone, no objects: reusable */
#define SHM_ABI_TYPE_WRITING        3u /* the writer is re-registering the slot */
#define SHM_ABI_TYPE_STATUS(s)      ((unsigned)((s)&0xffu))
#define SHM_ABI_TYPE_GEN(s)         ((uint32_t)((s) >> 32))
#define SHM_ABI_TYPE_STATE(gen, st) (((uint64_t)(gen) << 32) | (uint64_t)(st))
struct shm_abi_type {
	_Atomic uint64_t state; /* SHM_ABI_TYPE_STATE(gen, status); see arena.h T2 */
	char group[SHM_ABI_NAME_MAX + 1];
	char version[SHM_ABI_NAME_MAX + 1];
	char resource[SHM_ABI_NAME_MAX + 1];
	char kind[SHM_ABI_NAME_MAX + 1];
	uint32_t record_kind;
	uint32_t reserved0;
	_Atomic uint64_t name_index;   /* ref: handle table keyed by (namespace, name) */
	_Atomic uint64_t ns_index;     /* ref: multi-index keyed by namespace */
	_Atomic uint64_t orphan_index; /* ref: multi-index keyed by namespace, no controller ref */
	_Atomic uint64_t count;        /* live objects (relaxed, statistics) */
	_Atomic uint64_t sync_seq;
	_Atomic uint64_t sync[2][SHM_ABI_SYNC_WORDS]; /* rv bytes (NUL padded), then flags */
	/* ref: multi-index keyed by the node a record is bound to (pods: spec.nodeName, records.h
	 * shm_rec_pod_node; records of other kinds and unbound pods are not in it). Version 5. */
	_Atomic uint64_t node_index;
	uint64_t reserved[3];
};
#define SHM_ABI_SYNC_SYNCED 0x1u
/* The flags word's high 32 bits: the leadership epoch the type was last relisted for (the
 * acquisition barrier, kube/fence.h F5; 0 none). Was always 0 before, so no version change. */
#define SHM_ABI_SYNC_EPOCH_SHIFT 32
static_assert(sizeof(struct shm_abi_type) == 488, "type entry");

/* ---- the header, at offset 0 ---------------------------------------------------------------- */
struct shm_abi_header {
	uint64_t magic;       /* SHM_ABI_MAGIC, written last at creation */
	uint32_t version;     /* SHM_ABI_VERSION */
	uint32_t header_size; /* sizeof(struct shm_abi_header) */
	uint64_t max_size;    /* immutable: mapping reserved by every process */
	uint64_t region_table_off;
	uint64_t data_off;       /* first region (64 KiB aligned) */
	uint64_t hash_seed;      /* random per arena: key hashes are not predictable from outside */
	_Atomic uint64_t size;   /* bytes backed by the memfd; grows, never shrinks (sealed) */
	_Atomic uint64_t carved; /* end of the carved regions; <= size */
	_Atomic uint64_t incarnation;     /* bumped by every writer attach */
	_Atomic uint64_t change_seq;      /* bumped after every published change */
	_Atomic uint64_t uid_index;       /* ref: handle table keyed by uid (all types) */
	_Atomic uint64_t owner_index;     /* ref: multi-index keyed by owner uid (all types) */
	_Atomic uint64_t handles_hw;      /* handles in [1, handles_hw) may be in use */
	_Atomic uint64_t n_types;         /* entries [0, n_types) may be registered */
	_Atomic uint64_t stat_live_bytes; /* writer statistics (relaxed) */
	_Atomic uint64_t stat_quarantine_bytes;
	_Atomic uint64_t stat_free_bytes;
	_Atomic uint64_t stat_objects;
	_Atomic uint64_t stat_recoveries;
	_Atomic uint64_t stat_violations; /* found by the last recovery (should stay 0) */
	uint64_t reserved[12];
	_Atomic uint64_t handle_dir[SHM_ABI_HDIR_SLOTS]; /* refs of handle chunks; set once */
	_Atomic uint64_t type_dir[SHM_ABI_TDIR_SLOTS];   /* refs of type chunks; set once (T3) */
};
static_assert(offsetof(struct shm_abi_header, size) == 48, "header");
static_assert(offsetof(struct shm_abi_header, handle_dir) == 256, "header");
static_assert(sizeof(struct shm_abi_header) ==
                      256 + 8 * SHM_ABI_HDIR_SLOTS + 8 * SHM_ABI_TDIR_SLOTS,
              "header");
static_assert(SHM_ABI_MAX_TYPES <= UINT16_MAX + 1u, "type ids are 16-bit (ref aux, record)");
static_assert(sizeof(_Atomic uint64_t) == 8 && _Alignof(_Atomic uint64_t) == 8, "atomic word");
static_assert(ATOMIC_LLONG_LOCK_FREE == 2,
              "64-bit atomics must be lock-free (readers map read-only)");
