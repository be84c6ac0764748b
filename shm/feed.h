/* SPDX-License-Identifier: Apache-2.0 */
/* shm/feed.h - the change feed: informerd tells every controller what changed in the arena.
 *
 * What: one single-writer, multi-reader ring of change entries in a memfd. informerd (the
 * arena's one writer) applies a watch event to the arena, then publishes one entry: seq, arena
 * type, op (add/update/delete), relist/tombstone/dropped flags, the object's arena handle, the
 * arena's change_seq, and a self-contained copy of the new version and of the previous version.
 * Each controller's dispatcher, in its own process, reads the feed at its own pace and runs that
 * controller's handlers (on_add / on_update(old, new) / on_delete), as client-go's
 * processorListener does for one ResourceEventHandler. A consumer that the writer laps detects
 * it exactly (-ESTALE) and resyncs from the arena, as a client-go relist would: nothing is lost.
 *
 * Design:
 *  - One feed for all types (not one per type): one sequence, one memfd, one futex word, one
 *    position per consumer; consumers filter by type. The events keep the order informerd
 *    applied them in, across types. Per-type rings would need up to 1,024 fds and futex words
 *    per consumer (FUTEX_WAITV takes at most 128) and would lose that order.
 *  - Entries carry copies of both versions (new and old), not refs into the arena. The arena
 *    reclaims a freed record after max(4, 64 KiB / class size) later frees in its class (409
 *    for a pod), so a consumer a few hundred pod updates behind could no longer read the exact
 *    versions of an entry; holding them longer would tie arena memory to the slowest consumer.
 *    With copies, every entry still in the ring is complete, and consumers depend on the arena
 *    only for listers and resyncs. Cost: one encode per event (a pod version is ~300-600 B).
 *  - Byte ring with variable-length entries, absolute 64-bit positions, and a `tail` the writer
 *    advances *before* it overwrites anything: a reader copies an entry out, then checks that
 *    tail did not pass the entry's start (seqlock-style validation over a ring, Boehm's
 *    relaxed-atomic form, as in the arena). A reader writes one thing shared, its position in
 *    its own slot (below); it cannot slow, block or corrupt the writer or another reader, and
 *    its death needs no repair.
 *  - Ring pages are given back (F7): a memfd page once written stays resident, so a 64 MiB
 *    ring would cost 64 MiB once churn had passed through it. Each consumer publishes the
 *    position of its next read in a slot (one cache line, claimed at open); once per batch the
 *    writer punches (FALLOC_FL_PUNCH_HOLE) the whole pages below the lowest live consumer's
 *    position, after moving tail past them, so resident ring memory follows the slowest
 *    consumer's lag, not the ring size. The slots are advisory: a punched page reads as zeros
 *    and a reader of it sees tail past its position, i.e. a lap; a wrong, stale or missing
 *    slot costs at most a resync, never a wrong entry. A dead consumer's slot is freed by the
 *    writer (its pid is gone) or taken by the next consumer.
 *  - The ring size is fixed at creation (a parameter; the memfd is sealed against resizing).
 *    What happens when it fills: the writer overwrites the oldest entries and never waits;
 *    a consumer whose next entry was overwritten gets -ESTALE, seeks to the end, then resyncs
 *    from the arena (the arena is always written before the entry, so arena + every entry after
 *    the seek covers everything). Size the ring for the burst a consumer must absorb.
 *  - Waiting: the writer stores the low 32 bits of the last seq in a futex word after each
 *    publication and wakes the word once per batch (shm_feed_wake, or ipc_loop_futex_wake_bits
 *    on shm_feed_futex_word from informerd's loop). Consumers wait with shm_feed_wait
 *    (blocking) or arm ipc_loop_add_futex(loop, .., shm_feed_futex_word(f), token, ..) (io_uring
 *    IORING_OP_FUTEX_WAIT, or the epoll backend's helper thread). Shared (not private) futex:
 *    the word is keyed by memfd inode and offset, in every process, read-only mappings too.
 *  - Wake classes (F9): a wake names the classes of what the batch held, and a consumer sleeps
 *    on the classes it handles (FUTEX_WAKE_BITSET / FUTEX_WAIT_BITSET, io_uring's futex mask),
 *    so ~40 dispatchers are not all woken for every batch of pods. A class is one bit of 31,
 *    from a hash of the resource's plural name (shm_feed_wake_bit), not from the arena type id:
 *    a handler table names resources, ids are given at registration (and reused, arena T2),
 *    and a consumer must know its classes before the type is registered. Bit 31
 *    (SHM_FEED_WAKE_CONTROL) is in every consumer's interest: writer attaches and the lag
 *    sweeps wake with every bit. A consumer asleep through other classes' entries does not
 *    move its slot (F7): the lag sweep wakes every consumer once the writer has published
 *    SHM_FEED_SWEEP bytes since the last sweep (at the batch's end; mid-batch after a quarter
 *    ring, directly), so a sleeper's unread span stays under the sweep distance at a batch's
 *    start and its pages go back. The epoll backend's futex_waitv has no mask: it wakes on
 *    every batch, as before F9.
 *
 * Rejected: refs to arena versions (above); per-type feeds (above); the writer *waiting* for the
 * slowest reader's position (a stopped consumer would stall informerd, and a dead one would need
 * repair: the client-go answer to a slow listener is an unbounded buffer, ours is a bounded one
 * plus a resync; the slots only decide which pages go back); a much smaller ring instead of
 * the punching (a dispatcher descheduled for 100 ms during a relist would be lapped, and a lap
 * costs a full resync of its controller; see docs/shm.md); a seqlock per entry (a writer killed
 * while odd would need repair; the tail gives the same validation with one word); fixed-size
 * slots (objects are 100 B to 1.5 MiB); a socket or pipe per consumer (the writer would block
 * or drop, and N copies per event).
 *
 * INVARIANTS (the names are used in feed.c's comments and in the tests)
 *  Who writes: only the process holding the writer lock (shm_feed_writer_*: an OFD lock on a
 *  private open file description of the memfd; the kernel drops it when the writer dies).
 *  Who reads: any process with the fd, through a read-only mapping of the header and the ring
 *  (shm_feed_reader_*). The only shared store a reader makes is to its own slot (F7), through a
 *  separate read-write mapping of the slot pages (none with a read-only fd).
 *  F1 (publication) An entry at position P is published by one release store of its seq into
 *     its word 0, after its words 1.. (relaxed atomic stores) and after word 0 at its end
 *     (P + len, the next entry's word 0) was stored 0. Pairs with the reader's acquire load of
 *     word 0. So a reader positioned after entry S-1 reads 0 (not yet) or S there, unless the
 *     writer lapped it, which F2 then reports.
 *  F2 (overwrite) Before the writer stores anything at absolute positions [a, b), tail >= b -
 *     ring_size; the tail store is followed by a release fence before those stores. A reader
 *     copies an entry at P (relaxed loads), issues an acquire fence and loads tail: if tail > P
 *     (as int64 difference) the copy may be torn and the reader reports -ESTALE (lapped);
 *     otherwise no byte of [P, P + len) was overwritten before the copy ended. The fences pair
 *     through any overwritten word the reader loaded (Boehm's seqlock rule). Exact: tail > P
 *     means the slot of P's word 0 was, or is about to be, overwritten.
 *  F3 (order) seq grows by one per entry (0 is skipped when it wraps); PAD entries carry the
 *     seq of the entry after them and consume none. Positions grow by each entry's len. A
 *     reader delivers entries strictly in seq order with no gap, or reports -ESTALE.
 *  F4 (bounds) Readers take every position modulo ring_size and check every length read from
 *     shared memory against SHM_FEED_ABI_ALIGN, max_entry and the end of the ring before they
 *     copy; decoding is bounds-checked against the private copy. No reader access can fault:
 *     the mapping covers the sealed memfd exactly.
 *  F5 (arena first) The writer publishes an entry only after the arena holds its change (the
 *     caller's duty: shm_writer_upsert/delete, then shm_feed_publish). A consumer that sees
 *     entry S and then reads the arena sees that change or a later one.
 *  F6 The writer never waits on a reader.
 *  F7 (giving pages back) The writer punches ring positions [a, b) (whole pages) only with
 *     b <= the newest entry's position (seek_end and recovery read that entry), a >= tail,
 *     and only after storing tail = b followed by a seq_cst fence: to a reader a punch is an
 *     overwrite with zeros, and F2's check reports it (word 0 of a punched entry reads 0,
 *     which with tail > P is a lap, not "nothing yet"; a copy that loaded a zero of the punch
 *     loaded it after the kernel unmapped the page, i.e. after the tail store). Zero is never
 *     valid anyway: seq 0 is skipped, len 0 fails F4. The writer chooses b below the lowest
 *     position published in a claimed slot (owner != 0) that is >= tail and < the newest
 *     entry; slots are advisory (a reader that publishes its position, fences seq_cst, then
 *     re-checks tail in seek_end loses at most one race to a trim, which is a lap). A slot
 *     whose owner pid is dead is freed by the writer (CAS owner -> 0) or re-claimed by a new
 *     reader (CAS old -> new). A reader's slot position only grows while it holds the slot.
 *  F8 (durable consumers) A consumer opened by name (shm_feed_consumer_open) claims the slot of
 *     that name, or a free one it names. Its slot outlives it: the writer never frees a named
 *     slot, so the pages after its committed position stay until its next process re-claims it
 *     or the writer laps it (at most the ring: the cost of a consumer that never comes back).
 *     The consumer commits after it handled an entry (shm_feed_commit): {pos, seq} of the next
 *     entry into the copy commits+1 selects, then a release store of commits+1, then pos.
 *     A consumer killed at any point leaves a consistent committed pair: the last bumped copy.
 *     The next process of that name resumes at the pair only if the ring still holds it: the
 *     word at pos is seq (an entry) or 0 with pos the end of the newest entry (nothing since),
 *     and tail has not passed pos after its own pos is published (F2, F7). Anything else
 *     (lapped, a torn or foreign pair) is a resume refused: it starts at the end, as an
 *     anonymous consumer does, and says so. Entries from the committed pair on were not
 *     handled, except the one whose commit the kill interrupted (handled once more).
 *  F9 (wake classes) Every wake carries a bitset; a consumer waits with its interest (the
 *     classes of every type its handlers take, | SHM_FEED_WAKE_CONTROL, or every bit). The
 *     writer ORs the wake bits of every entry it publishes (pub.wake, 0 = every bit) into the
 *     batch's mask and wakes with that mask, so a batch with an entry of class c wakes every
 *     consumer whose interest holds c: a consumer that takes its token, reads until 0 and
 *     waits misses no entry of its classes (F1 ordering as before: the token moves with every
 *     publication, whatever its class, and a moved word ends the wait at once). Entries of
 *     other classes wait, unread, until the consumer's next wake: wakes every consumer (every
 *     bit) by (a) a writer attach, (b) a batch's end once SHM_FEED_SWEEP bytes (ring/8 for small
 *     rings) were published since the last such sweep, (c) a publication that takes the writer
 *     a quarter ring past the last sweep (from inside shm_feed_publish). So a sleeping
 *     consumer is behind by under the sweep distance when a batch starts, and is woken before
 *     a batch takes it a quarter ring further: a wake class never makes a lap (-ESTALE) of a
 *     batch shorter than the ring minus the sweep distance, and a longer batch wakes it where
 *     before F9 it slept through the batch. A wrong mask can only delay a wake until the next
 *     sweep, never lose or reorder an entry (delivery is still F1-F3). A reader's type filter
 *     (shm_feed_set_type_filter) steps over an entry of another type as over a pad: word 0
 *     == seq (acquire), word 1 read, then the F2 tail check before it moves on; it delivers
 *     the next entry of its types or 0, never a partial step.
 *  Reader retry rule: there is no retry loop inside next(): a lapped read is final (-ESTALE,
 *  sticky until shm_feed_seek_end); "nothing yet" returns 0. Only shm_feed_seek_end retries
 *  (up to SHM_FEED_SEEK_RETRIES times, when it is lapped while reading the newest entry).
 *  Writer killed mid-operation (kill -9): every published entry stays intact (tail never passes
 *  the newest one: max_entry = ring/4); an unpublished entry has word 0 == 0 (F1), so no reader
 *  accepts it. The next shm_feed_writer_open starts at the last_pos hint and walks forward over
 *  entries published after it (at most a PAD and an entry), continues the sequence, stores the
 *  hints, bumps incarnation and wakes every waiter (a batch's wake may have been lost). A seq
 *  is never published twice with different content. Tail may have moved ahead of what was
 *  written: that only reports a lap a little early to a reader that was about to be lapped.
 *  Reader killed: nothing to repair; its slot holds pages back until the writer laps it or
 *  sees its pid gone (the next trim), and is then reused.
 *  Version rule: see shm/feed-abi.h.
 *
 * Errors: functions return >= 0 on success or a negative errno; ret_ parameters are written
 * only on success. The library never logs. One struct shm_feed per thread.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shm/arena.h"

struct shm_feed;

enum shm_feed_op {
	SHM_FEED_ADD = 1,
	SHM_FEED_UPDATE = 2,
	SHM_FEED_DELETE = 3,
};
#define SHM_FEED_RELIST 0x01u /* from a list/replace (inf_event.from_relist) */
#define SHM_FEED_TOMBSTONE                                                                         \
	0x02u /* DELETE noticed only by a relist: old is the last known state                      \
	       */
/* DELETE because informerd stopped watching the type (it left discovery): the object was not
 * deleted, it is only out of the cache (inf_event.dropped). DELETE only. */
#define SHM_FEED_DROPPED 0x04u

struct shm_feed_create_opts {
	uint64_t ring_size; /* bytes, rounded up to a power of two; 0 = 64 MiB; 64 KiB .. 1 TiB */
	/* Tests only (wraparound): where the sequence and the byte positions start; 0 = 1 and 0. */
	uint64_t first_seq;
	uint64_t first_pos; /* rounded down to a multiple of 16 */
};

/* ---- owner (the manager) ---------------------------------------------------------------------
 * Create a new feed memfd (close-on-exec, sealed: no grow, no shrink, no further seals),
 * initialised and empty. -EINVAL bad opts, -errno from memfd/ftruncate/mmap. Pass the fd to the
 * writer; give consumers shm_feed_reader_fd's read-only descriptor. */
int shm_feed_create(const struct shm_feed_create_opts *opts, int *ret_fd);
/* A new O_RDONLY descriptor of the same feed (a PROT_WRITE mapping of it fails). A reader on it
 * cannot claim a slot: the writer does not know its position and may give back pages it has
 * yet to read, which it then sees as a lap (-ESTALE). */
int shm_feed_reader_fd(int fd, int *ret_fd);
/* A new O_RDWR descriptor for a consumer that registers (F7): shm_feed_reader_open maps the
 * header and the ring read-only and only the slot pages read-write. Give this to dispatchers. */
int shm_feed_consumer_fd(int fd, int *ret_fd);

/* ---- writer (informerd) ----------------------------------------------------------------------
 * Map fd read-write and become the single writer: -EBUSY another live writer holds the lock,
 * -EBADMSG not a feed (or a bad header), -EPROTONOSUPPORT another layout version, -EUCLEAN the
 * ring is inconsistent (the manager makes a new feed; consumers resync). Recovers what a killed
 * writer left (see INVARIANTS) and wakes every waiter. */
int shm_feed_writer_open(int fd, struct shm_feed **ret);

/* One change, as informerd knows it after writing the arena. */
struct shm_feed_pub {
	enum shm_feed_op op;
	uint8_t flags;   /* SHM_FEED_RELIST, SHM_FEED_TOMBSTONE, SHM_FEED_DROPPED (DELETE only) */
	uint16_t type;   /* arena type id */
	uint32_t handle; /* the object's arena handle (shm_obj.handle), 0 if not known */
	uint64_t arena_seq; /* shm_reader_change_seq() after the arena write */
	/* F9: the consumers to wake for it: shm_feed_wake_bit(resource of type); 0 = every one */
	uint32_t wake;
	/* ADD, UPDATE: the version just written (what was passed to shm_writer_upsert); DELETE:
	 * NULL. */
	const struct shm_record_in *new_obj;
	/* UPDATE: the arena's version before the write; DELETE: the last known version (required
	 * for a tombstone); NULL = unknown (the consumer gets old_obj == NULL). ADD: NULL. */
	const struct shm_obj *old_obj;
};
/* Publish one entry (F1) and return its seq in *ret_seq (may be NULL). Does not wake anyone:
 * call shm_feed_wake once per batch. -EINVAL bad op/flags/objects (missing name/uid/rv, a string
 * over 65535 bytes, over 65535 labels or owners, a tri-state outside -1..1), -EMSGSIZE the entry
 * would exceed max_entry (ring_size / 4), -ENOMEM. Never blocks, never waits for a reader. */
int shm_feed_publish(struct shm_feed *f, const struct shm_feed_pub *pub, uint64_t *ret_seq);
/* F9 wake classes: bit 31 is for what every consumer must see (writer attach, lag sweep); a
 * resource's class is one of bits 0..30, from a hash of its plural name (the same in every
 * process). */
#define SHM_FEED_WAKE_CONTROL (UINT32_C(1) << 31)
#define SHM_FEED_WAKE_ALL     UINT32_MAX
uint32_t shm_feed_wake_bit(const char *resource);
/* F9: the writer wakes every consumer once this many bytes were published since the last
 * such sweep (ring_size / 8 for smaller rings); and mid-batch after a quarter ring. */
#define SHM_FEED_SWEEP (UINT64_C(1) << 20)

/* If anything was published since the last wake: FUTEX_WAKE_BITSET every waiter whose interest
 * meets the batch's mask (F9). Returns the number woken (0 if nothing to do) or -errno. */
int shm_feed_wake(struct shm_feed *f);
/* For a caller that wakes through its event loop (ipc_loop_futex_wake_bits(loop,
 * shm_feed_futex_word(f), INT_MAX, mask)): the batch's wake mask once after publications (0:
 * nothing to wake for), and clears it. Every bit when a lag sweep is due (F9). Also trims. */
uint32_t shm_feed_take_wake(struct shm_feed *f);
/* Give back ring pages every registered consumer has passed (F7): punches the whole pages
 * between the last trim and the lowest live consumer position (or the newest entry), once at
 * least SHM_FEED_TRIM_CHUNK bytes (ring_size / 16 for small rings) are ready. Called by
 * shm_feed_take_wake and shm_feed_wake; call it also when idle for a while (informerd: its
 * trim timer), so the pages of the last batch go back once the consumers read it. Returns the
 * bytes punched (0: nothing to do), or -errno from fallocate (trimming is then off for this
 * writer: the pages stay resident, as before F7). */
#define SHM_FEED_TRIM_CHUNK (UINT64_C(256) << 10)
int64_t shm_feed_trim(struct shm_feed *f);

/* ---- consumers (controller dispatchers) -----------------------------------------------------
 * Map fd read-only and position at the end (as shm_feed_seek_end): -EBADMSG not a feed or a
 * header out of bounds, -EPROTONOSUPPORT another layout version, -errno. With a writable fd
 * (shm_feed_consumer_fd) it also claims a slot (F7); when all SHM_FEED_ABI_SLOTS (128) are held
 * by live consumers it runs unregistered (shm_feed_stats.registered false): correct, but the
 * writer's trims may lap it. */
int shm_feed_reader_open(int fd, struct shm_feed **ret);
/* A durable consumer (F8): as shm_feed_reader_open (fd from shm_feed_consumer_fd), but it claims
 * the slot named `name` (1..255 bytes; one live process per name) and, when the previous process
 * of that name committed a position the ring still holds, starts there: *ret_resumed true, and
 * shm_feed_next delivers the entries that process had not handled. Otherwise it starts at the
 * end (*ret_resumed false). Its position is published only by shm_feed_commit and seeks. With
 * every slot taken, or a live process holding the name, it runs anonymous (never resumed).
 * Errors as shm_feed_reader_open, -EINVAL a bad name. */
int shm_feed_consumer_open(int fd, const char *name, struct shm_feed **ret, bool *ret_resumed);
/* Durable consumers: the entries delivered so far are handled (F8). Call after the handlers of
 * each entry ran. A no-op for other readers. */
void shm_feed_commit(struct shm_feed *f);
/* For a clear message on -EPROTONOSUPPORT: the version the feed behind fd was created with. */
int shm_feed_version(int fd, uint32_t *ret_version);

/* A delivered entry. new_obj/old_obj point into memory owned by the event, valid until the
 * next shm_feed_next into it or shm_feed_event_release (do not shm_obj_release them). The
 * objects' handle field is the entry's handle. */
struct shm_feed_event {
	uint64_t seq;
	enum shm_feed_op op;
	uint8_t flags;
	uint16_t type;
	uint32_t handle;
	uint64_t arena_seq;
	const struct shm_obj *new_obj; /* NULL for DELETE */
	const struct shm_obj *old_obj; /* NULL for ADD, or when the writer did not know it */
	/* private */
	struct shm_obj n_, o_;
	uint8_t *buf_;
	size_t cap_;
};
#define SHM_FEED_EVENT_INIT ((struct shm_feed_event){0})
void shm_feed_event_release(struct shm_feed_event *ev);

/* Read the entry at the consumer's position into ev and advance. Returns 1 delivered, 0 nothing
 * new yet, -ESTALE lapped (the entry was overwritten: sticky until shm_feed_seek_end; the
 * consumer then resyncs from the arena), -EBADMSG a published entry is malformed (the feed is
 * corrupt: treat as -ESTALE, or re-create the feed), -ENOMEM. */
int shm_feed_next(struct shm_feed *f, struct shm_feed_event *ev);
/* Batch: call fn for up to max entries (0 = until caught up). Returns the number delivered
 * (> 0 even if a lap came next; the following call reports it), 0 nothing new, or -ESTALE,
 * -EBADMSG, -ENOMEM, or fn's negative return (the entry fn failed on counts as consumed). */
typedef int (*shm_feed_fn)(const struct shm_feed_event *ev, void *userdata);
int shm_feed_drain(struct shm_feed *f, size_t max, shm_feed_fn fn, void *userdata);

#define SHM_FEED_SEEK_RETRIES 1000
/* Position after the newest published entry. The resync recipe: shm_feed_seek_end, THEN read
 * the arena: every change after the seek point is delivered by the feed, every change before
 * it is already in the arena (F5). Changes in between may be seen twice (in the arena listing
 * and as an entry): resync handlers must be idempotent, as client-go's are. Returns the seq of
 * the next entry to be delivered; -EAGAIN lapped SHM_FEED_SEEK_RETRIES times in a row;
 * -EBADMSG corrupt. */
int shm_feed_seek_end(struct shm_feed *f, uint64_t *ret_next_seq);
/* The seq of the next entry this consumer will deliver. */
uint64_t shm_feed_position(const struct shm_feed *f);
/* Entries published but not yet delivered (from the writer's hint; 0 when caught up). */
uint64_t shm_feed_lag(const struct shm_feed *f);
/* 1 if shm_feed_next would return something other than 0 (an entry, a lap, corruption). */
int shm_feed_pending(const struct shm_feed *f);

/* Waiting. Take a token BEFORE the shm_feed_next that returns 0, then wait with it:
 *     uint32_t tok = shm_feed_wait_token(f);
 *     while ((r = shm_feed_next(f, &ev)) > 0) handle(&ev);
 *     if (r == 0) shm_feed_wait(f, tok, timeout);   (or arm the loop's futex source with tok)
 * A publication after the token makes the wait return at once (-EAGAIN), so no wake-up is lost.
 */
uint32_t shm_feed_wait_token(const struct shm_feed *f);
/* The shared futex word (u32 in the read-only mapping), for ipc_loop_add_futex. */
const uint32_t *shm_feed_futex_word(const struct shm_feed *f);
/* F9: wake this consumer only for batches that hold an entry of one of these classes (an OR of
 * shm_feed_wake_bit); SHM_FEED_WAKE_CONTROL is always added; 0 or SHM_FEED_WAKE_ALL = every
 * batch (the default). It changes which wakes end a wait, never what shm_feed_next delivers:
 * entries of every type are still delivered, in order (filter them by type). */
void shm_feed_set_interest(struct shm_feed *f, uint32_t mask);
/* F9: step over the entries of the types want() refuses without copying or decoding them
 * (their header words are read and validated as a pad's): shm_feed_next and drain never
 * deliver them, the delivered keep their order (F3), and their seqs are skipped. want runs on
 * the reader's thread, once per entry, and may register the type first. A durable consumer's
 * next shm_feed_commit covers the entries stepped over (call it after drain, too). NULL: every
 * entry (the default). */
void shm_feed_set_type_filter(struct shm_feed *f, bool (*want)(uint16_t type, void *ud), void *ud);
/* The interest, as a futex bitset (never 0): for ipc_source_futex_set_mask. */
uint32_t shm_feed_interest(const struct shm_feed *f);
/* FUTEX_WAIT_BITSET (shared, the interest as the bitset) on the word while it equals token. 0
 * woken (or spurious), -EAGAIN the word moved, -ETIMEDOUT, -EINTR. timeout_usec UINT64_MAX = no
 * limit. */
int shm_feed_wait(const struct shm_feed *f, uint32_t token, uint64_t timeout_usec);

/* ---- both ------------------------------------------------------------------------------------ */
struct shm_feed_stats {
	uint64_t ring_size, max_entry;
	uint64_t incarnation;
	uint64_t last_seq;  /* newest published (hint); first_seq - 1 before the first */
	uint64_t published; /* entries, every incarnation */
	uint64_t pads;
	uint64_t tail, last_pos;
	uint64_t
	        position; /* this handle: the next seq it delivers (reader) or publishes (writer) */
	uint64_t trimmed; /* ring bytes given back by punching, every incarnation */
	uint64_t sweeps;  /* writer: wakes of every consumer by the lag rule (F9), this handle */
	bool registered;  /* reader: holds a slot (F7) */
	bool durable;     /* reader: holds a named slot (F8) */
	int resume;       /* shm_feed_consumer_open: 0 nothing to resume, 1 resumed, 2 refused */
};
int shm_feed_stats(const struct shm_feed *f, struct shm_feed_stats *ret);
/* Unmap and free; closes nothing the caller passed in. NULL is a no-op. */
void shm_feed_close(struct shm_feed *f);
