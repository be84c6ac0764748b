/* SPDX-License-Identifier: Apache-2.0 */
/* shm/feed-abi.h - the shared-memory layout of the kcmd change feed, version 3.
 *
 * The contract between the feed's one writer (informerd), its consumers (each controller's
 * dispatcher) and its owner (the manager, who creates the memfd). The protocol and its
 * INVARIANTS are in shm/feed.h; this file only fixes the bytes.
 *
 * Memfd layout: the header at offset 0 (one 4 KiB page), the consumer slots at
 * SHM_FEED_ABI_SLOTS_OFF (two pages: each consumer publishes its position there, the only
 * shared memory a consumer writes), then the ring at SHM_FEED_ABI_RING_OFF, ring_size bytes (a
 * power of two, page-aligned in the file so the writer can punch holes in it). The memfd is
 * sealed (F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL): its size never changes, so a mapping of it
 * can never fault. Ring pages the writer punched out (FALLOC_FL_PUNCH_HOLE) read as zeros.
 *
 * Positions: byte positions in the ring are 64-bit counters that only grow (absolute
 * positions); the byte at absolute position p lives at ring offset p & (ring_size - 1). Every
 * entry starts at a multiple of SHM_FEED_ABI_ALIGN, and its length is one too, so an entry never
 * straddles the end of the ring (the writer pads to the end first) and the remainder at the end
 * is always 0 or >= SHM_FEED_ABI_ALIGN. Comparisons of positions and of sequence numbers are
 * done on their difference as int64_t, so both counters may wrap.
 *
 * Version rule: any change to a struct, a constant or an encoding below bumps
 * SHM_FEED_ABI_VERSION. No in-place upgrade: the manager creates a new feed, consumers re-attach
 * and resync from the arena (which is what a lapped consumer does anyway).
 */
#pragma once

#include <assert.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define SHM_FEED_ABI_MAGIC      UINT64_C(0x3144454546444d4b) /* "KMDFEED1" little-endian */
#define SHM_FEED_ABI_VERSION    3u
#define SHM_FEED_ABI_PAGE       4096u
#define SHM_FEED_ABI_SLOTS_OFF  4096u
#define SHM_FEED_ABI_SLOTS_SIZE 8192u
#define SHM_FEED_ABI_SLOTS      (SHM_FEED_ABI_SLOTS_SIZE / 64u) /* 128 consumer slots */
#define SHM_FEED_ABI_RING_OFF   (SHM_FEED_ABI_SLOTS_OFF + SHM_FEED_ABI_SLOTS_SIZE)
#define SHM_FEED_ABI_ALIGN      16u
#define SHM_FEED_ABI_MIN_RING   (UINT64_C(64) << 10) /* 64 KiB */
#define SHM_FEED_ABI_MAX_RING   (UINT64_C(1) << 40)  /* 1 TiB */
#define SHM_FEED_ABI_NO_POS     UINT64_MAX           /* last_pos before the first entry */

/* Entry ops. PAD fills the end of the ring when the next entry does not fit there; it carries
 * the sequence number of the entry that follows it at ring offset 0 and consumes none. */
enum shm_feed_abi_op {
	SHM_FEED_ABI_OP_ADD = 1,
	SHM_FEED_ABI_OP_UPDATE = 2,
	SHM_FEED_ABI_OP_DELETE = 3,
	SHM_FEED_ABI_OP_PAD = 15,
};
#define SHM_FEED_ABI_F_RELIST    0x01u /* delivered by a list/replace, not by a watch event */
#define SHM_FEED_ABI_F_TOMBSTONE 0x02u /* DELETE seen only through a relist (old = last known) */
#define SHM_FEED_ABI_F_DROPPED   0x04u /* DELETE of a type no longer watched: not a deletion */
#define SHM_FEED_ABI_F_ALL       0x07u

/* One entry: this header, then the new object's encoding (new_len bytes), then the old one's
 * (old_len bytes), then zero padding up to len. Word 0 (seq) is the publication word: the
 * writer stores it last, with release; 0 means "nothing published here yet". Words 1.. are
 * written with relaxed 64-bit atomic stores before it and copied out the same way. */
struct shm_feed_abi_entry {
	_Atomic uint64_t seq; /* never 0 */
	uint32_t len;         /* bytes, header included, multiple of SHM_FEED_ABI_ALIGN */
	uint8_t op;           /* enum shm_feed_abi_op */
	uint8_t flags;        /* SHM_FEED_ABI_F_* */
	uint16_t type;        /* arena resource type id */
	uint32_t handle;      /* arena handle of the object (0 = not given) */
	uint32_t new_len;     /* bytes of the new object's encoding; 0 = none (DELETE) */
	uint32_t old_len;     /* bytes of the old object's encoding; 0 = none (ADD, unknown) */
	uint32_t reserved0;
	uint64_t arena_seq; /* the arena's change_seq after the change (the writer's word) */
	uint64_t reserved1;
};
static_assert(sizeof(struct shm_feed_abi_entry) == 48, "feed entry");
static_assert(offsetof(struct shm_feed_abi_entry, len) == 8, "feed entry");
static_assert(offsetof(struct shm_feed_abi_entry, handle) == 16, "feed entry");
static_assert(offsetof(struct shm_feed_abi_entry, arena_seq) == 32, "feed entry");
static_assert(sizeof(struct shm_feed_abi_entry) % 8 == 0, "entries are copied as words");

/* One object (the arena's information about one version of an object), self-contained:
 * this header, then the payload (padded to 8), then the strings, each NUL-terminated:
 * ns, name, uid, rv; n_labels times key, value; n_owners times {u8 controller + 1,
 * u8 block_owner_deletion + 1 (0 absent, 1 false, 2 true)} api_version, kind, name, uid;
 * then zero padding to a multiple of 8 (len). */
struct shm_feed_abi_obj {
	uint32_t len; /* bytes of this encoding, header included, multiple of 8 */
	uint32_t payload_len;
	uint16_t ns_len, name_len, uid_len, rv_len; /* without the NUL */
	uint16_t n_labels, n_owners;
	uint8_t kind; /* enum shm_record_kind */
	uint8_t reserved[3];
};
static_assert(sizeof(struct shm_feed_abi_obj) == 24, "feed object");

/* The header, at offset 0. The first line is immutable after creation; the second is written
 * by the writer only (readers load it); the rest is reserved. */
struct shm_feed_abi_header {
	uint64_t magic;       /* SHM_FEED_ABI_MAGIC, written last at creation */
	uint32_t version;     /* SHM_FEED_ABI_VERSION */
	uint32_t header_size; /* sizeof(struct shm_feed_abi_header) */
	uint64_t ring_off;    /* SHM_FEED_ABI_RING_OFF */
	uint64_t ring_size;   /* power of two, SHM_FEED_ABI_MIN_RING..SHM_FEED_ABI_MAX_RING */
	uint64_t max_entry;   /* ring_size / 4: the largest entry */
	uint64_t first_seq;   /* seq of the first entry ever published (never 0) */
	uint64_t first_pos;   /* absolute position of that entry (multiple of 16) */
	uint64_t reserved0;
	/* ---- writer-published ---- */
	_Atomic uint64_t tail;        /* positions below tail may be overwritten at any time */
	_Atomic uint64_t last_pos;    /* position of the newest published entry (hint), or NO_POS */
	_Atomic uint64_t last_seq;    /* its seq (hint, for lag figures) */
	_Atomic uint64_t incarnation; /* bumped by every writer attach */
	_Atomic uint32_t futex;       /* (uint32_t)last_seq, stored after each publication */
	uint32_t reserved1;
	_Atomic uint64_t published; /* entries published, every incarnation (statistics) */
	_Atomic uint64_t pads;      /* pads written (statistics) */
	_Atomic uint64_t trimmed;   /* ring bytes given back by hole punching (statistics) */
	uint64_t reserved[48];
};

/* A consumer slot, one cache line (consumers do not share lines). owner: 0 free, else the
 * claiming process's pid (low 32 bits) and a per-claim nonce (high 32 bits); claimed and freed
 * by the consumer with compare-and-swap, freed by the writer when the pid is dead. pos: the
 * absolute ring position of the next entry the consumer will read (a durable consumer: of the
 * next entry it has not handled); it only grows while the slot is held (a seek moves it
 * forward). Advisory: the writer punches no page at or after the lowest live, unlapped pos; a
 * wrong value can only cost a consumer a lap (-ESTALE), never a wrong entry (INVARIANT F7 in
 * shm/feed.h).
 * Durable consumers (F8): name is a non-zero 64-bit hash of the consumer's name (0: an anonymous
 * slot); such a slot outlives its process (the writer does not free it when the pid is dead)
 * and the next process of the same name re-claims it. commits counts the consumer's commits;
 * the committed position is commit[commits & 1]: {pos, seq} of the next entry it has not
 * handled, written (relaxed) in the other copy before commits is bumped (release). */
struct shm_feed_abi_slot {
	_Atomic uint64_t owner;
	_Atomic uint64_t pos;
	_Atomic uint64_t name;
	_Atomic uint64_t commits;
	struct {
		_Atomic uint64_t pos, seq;
	} commit[2];
};
static_assert(sizeof(struct shm_feed_abi_slot) == 64, "feed slot");
static_assert(SHM_FEED_ABI_RING_OFF % SHM_FEED_ABI_PAGE == 0, "the ring is page-aligned");
static_assert(offsetof(struct shm_feed_abi_header, tail) == 64, "feed header");
static_assert(offsetof(struct shm_feed_abi_header, futex) == 96, "feed header");
static_assert(sizeof(struct shm_feed_abi_header) == 512, "feed header");
static_assert(sizeof(struct shm_feed_abi_header) <= SHM_FEED_ABI_SLOTS_OFF, "feed header");
static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "64-bit atomics must be lock-free (read-only maps)");
