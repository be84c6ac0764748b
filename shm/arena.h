/* SPDX-License-Identifier: Apache-2.0 */
/* shm/arena.h - the shared informer cache: one writer, many reader processes, one memfd.
 *
 * What: client-go's indexer, in shared memory. informerd writes every watched object into the
 * arena; workers and kcmctl read it directly (listers) with no lock and no message.
 *
 * Design (after ../shared/reference/shm-ipc-design-study.md part (a), adopted with changes):
 *  - Copy-on-write blocks. An object record is never modified in place once published: an
 *    update writes a new block and publishes it with one aligned 64-bit store into the object's
 *    handle slot. Readers copy a block out, then check that its generation did not move
 *    (seqlock-style validation, Boehm's relaxed-atomic form). A reader never returns a torn
 *    object and never blocks the writer; the writer never waits for a reader.
 *  - Handles (change from the study): every object has a stable 32-bit handle; the handle slot
 *    holds the ref of the current record. Indexes map keys to handles, not to blocks, so an
 *    update of an object whose keys did not change touches one word, and multi-valued indexes
 *    (namespace, owner uid, orphans, a pod's node) are stable sets of handles with O(1)
 *    add/remove.
 *  - The handle table is the truth; every index is derived. A writer killed between two
 *    index updates leaves a state a reader could already have seen between two of its lookups;
 *    a restarted writer rebuilds all indexes from the handle table and publishes each new table
 *    with one store.
 *  - Type-stable segregated blocks: 96 size classes carved in 64 KiB regions that keep their
 *    class forever, so a stale ref always lands on a block header and a read of any block is
 *    memory-safe (bounds: the class size and the published arena size).
 *  - Reclamation by FIFO quarantine per class (no reader tracking): a freed block is reused only
 *    after at least max(4, 64 KiB / class size) later frees in its class. Safety never depends on
 *    the quarantine, only the retry rate does. Memory is bounded by live data + quarantine.
 *  - Strings and label/owner sets that repeat are interned atoms, refcounted by the writer in
 *    private memory. All allocator state (free lists, refcounts, intern map) is writer-private
 *    and rebuilt on writer attach by mark/sweep over what is reachable from the header.
 *  - Growth: every process maps header.max_size once (MAP_NORESERVE); the writer grows the memfd
 *    with ftruncate and then publishes header.size. Readers bound every access by the size they
 *    loaded, so growth never stops or remaps a reader. The memfd is sealed against shrinking.
 *  - One writer: shm_writer_open takes an OFD write lock on a private open file description of
 *    the memfd; the kernel releases it when the writer dies (kill -9 included).
 *
 * Rejected: a seqlock around shared structures (a writer killed while odd wedges readers);
 * epoch pins (a dead or stopped reader pins memory, and needs repair); robust mutexes (readers
 * would block; EOWNERDEAD gives no data repair); allocator metadata in shared memory (can be
 * torn by kill -9); LMDB (paths and lock files, not a memfd; B-tree CoW per update); in-place
 * hash-table moves such as Robin Hood or backward-shift delete (multi-slot updates).
 *
 * INVARIANTS (numbering follows the study; checked by shm_writer_check and the torture test)
 *  Who writes: only the process holding the writer lock (shm_writer_*). Who reads: anyone with
 *  the fd, through a read-only mapping (shm_reader_*), the writer included.
 *  A1  Every handle slot and every live index slot refers to a block whose gen is even and whose
 *      gen16 matches the ref, at every instant, also right after the writer was killed.
 *  A2  A block is written only while its gen is odd; an odd block is referenced by nothing
 *      published. Order: store the header word with gen odd and the new kind/length (relaxed);
 *      release fence; body (relaxed words); store gen even (release); publish the ref (release
 *      store). Pairs with the reader's acquire loads and acquire fence.
 *  A3  A reader returns data only if the block's gen was the same even value, matching the ref,
 *      before and after the copy (acquire fence before the re-check), for the record and every
 *      atom it includes. Thus no torn object. Retry rule: on a mismatch re-read from the handle
 *      slot; after SHM_READ_RETRIES consecutive failures return -EAGAIN.
 *  A4  For one key, successive reads in one arena never see resourceVersion go backwards: the
 *      writer publishes versions in order and every read starts at the current handle slot.
 *  A5  Every reader access is bounds-checked against the class size (region table) and the
 *      size loaded from the header, so a reader cannot fault, whatever it races with.
 *  A6  The writer never waits on a reader.
 *  A7  Arena bytes <= live blocks + quarantine (per class max(4 blocks, 64 KiB)) + one partly
 *      carved region per class + index slack (a rebuilt table or set is at most 4x its live
 *      entries; tables do not shrink on delete, only at their next rebuild).
 *  A8  (membership) An object is in an index only while its handle slot is set, except in the
 *      window of one writer operation; readers filter every index hit by the record's content,
 *      so a stale or colliding index entry can cost time, never a wrong answer.
 *  T1  (capacity) Nothing the apiserver accepts is refused for its shape: no bound on the
 *      number of labels or owner references, 32-bit lengths for names and owner-reference
 *      strings, 16-bit for uid and resourceVersion (both written by the apiserver: a UUID and
 *      a decimal uint64). The one bound is SHM_RECORD_MAX_BYTES per part (labels, owners,
 *      payload), 16x the apiserver's own 3 MiB request limit. What still cannot be stored
 *      (-ENOMEM at max_size, -ENOSPC out of handles, -E2BIG) is the caller's to report: the
 *      informer stops (relists after its backoff) and never advances past the object.
 *  T2  (type slots) A type slot's state word is gen << 32 | status (SHM_ABI_TYPE_*). The
 *      writer registers a new resource in the lowest RETIRED slot before it appends one, under
 *      a new gen: status WRITING (relaxed), release fence, strings, then REGISTERED (release).
 *      shm_writer_retire_type turns REGISTERED into RETIRED only when the type has no object
 *      (count 0 and an empty name index). Every record carries the gen of its type slot
 *      (type_gen), and shm_type_info/shm_obj carry it to readers. A reader that resolved a
 *      type id must compare gens before treating a record or the slot's strings as that
 *      resource's: a record of another gen is another resource's, however the id compares.
 *      Readers of the strings validate them like a seqlock (state loaded before and after the
 *      copy, acquire fence between); a writer killed while WRITING leaves the slot RETIRED
 *      after recovery. The writer finds a resource's id through a private hash of the
 *      registered entries (rebuilt from the arena after recovery), not by a scan.
 *  T3  (type table storage) The table is a directory of chunks, header.type_dir[256], each a
 *      TCHUNK block of 256 entries allocated from the arena when the first id in it is
 *      registered. Only the writer writes the directory, once per entry, never clearing it: it
 *      allocates the block (odd gen), zeroes it (every entry FREE, gen 0), makes it stable,
 *      and then stores its ref into the directory with release; readers load the entry with
 *      acquire (shm_type_entry) and bound the chunk by the region table and the size they
 *      loaded (A5). An entry of 0 means "no such id" (readers: -EINVAL / not registered).
 *      Ids are appended in order, and a chunk is published before its first id is
 *      registered, so every id below n_types has its chunk. A writer killed mid-grow leaves
 *      either an unpublished block (unreachable: recovery sweeps it) or a published chunk of
 *      FREE entries (recovery marks every published chunk live; a ref that is not a stable
 *      TCHUNK block of the right size makes the arena -EUCLEAN, and a new one is made). A
 *      reader killed leaves nothing. Chunks are never freed: 128 KiB each, at most 32 MiB.
 *      Capacity: SHM_ABI_MAX_TYPES = 65,536 resources present at once, the whole 16-bit id
 *      space of records and refs; created-and-deleted ones do not count (T2). No practical
 *      limit: upstream has none, and the largest clusters (Crossplane providers) serve a few
 *      thousand resources. A registration beyond it fails with -ENOSPC, or -ENOMEM when the
 *      arena cannot hold the next chunk; informerd logs the resource as not watched, with
 *      the reason, and runs the others.
 *  Writer killed mid-operation: published state is consistent (A1); leftovers are unreachable
 *  blocks and at most one object indexed incompletely; the next shm_writer_open recovers.
 *  Reader killed: nothing to repair; readers write nothing shared.
 *  Version rule: see shm/shm-abi.h.
 *
 * Errors: functions return >= 0 on success or a negative errno; ret_ parameters are written
 * only on success. The library never logs. Not thread-safe per struct shm_arena: give each
 * thread its own reader mapping (processes are the unit of parallelism in kcmd).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct shm_arena;

/* How to read the opaque payload of a record. */
enum shm_record_kind {
	SHM_RECORD_META = 0, /* metadata only (every other resource, for the GC) */
	SHM_RECORD_POD = 1,
	SHM_RECORD_REPLICASET = 2,
	SHM_RECORD_OBJECT =
	        3, /* metadata with every annotation + the object's JSON (any resource) */
};

/* T1: the largest labels, owner-reference or payload part of one record (the apiserver takes
 * requests up to 3 MiB, etcd values up to 1.5 MiB). */
#define SHM_RECORD_MAX_BYTES (UINT32_C(48) << 20)

struct shm_label {
	const char *key;
	const char *value;
};

struct shm_owner_ref {
	const char *api_version;
	const char *kind;
	const char *name;
	const char *uid;
	int8_t controller;           /* -1 absent, 0 false, 1 true (a *bool in Go: the GC tells */
	int8_t block_owner_deletion; /* unset from false, as kube/model.h does) */
};

/* What the writer stores. Strings are NUL-terminated; labels in any order (keys unique). */
struct shm_record_in {
	uint16_t type;             /* from shm_writer_register_type */
	enum shm_record_kind kind; /* must be the type's record_kind (how the payload reads) */
	const char *ns;            /* "" or NULL for cluster-scoped objects */
	const char *name;
	const char *uid;
	const char *rv; /* resourceVersion */
	const struct shm_label *labels;
	size_t n_labels;
	const struct shm_owner_ref *owners;
	size_t n_owners;
	const void *payload; /* opaque typed payload, e.g. pod status fields, RS template */
	size_t payload_len;
};

/* A copied-out object. All pointers point into memory owned by the struct, valid until the
 * next read into the same struct or shm_obj_release. Strings are NUL-terminated. */
struct shm_obj {
	uint16_t type;
	uint32_t type_gen; /* T2: the type slot's gen when the record was written */
	enum shm_record_kind kind;
	uint32_t handle;
	const char *ns, *name, *uid, *rv;
	const struct shm_label *labels;
	size_t n_labels;
	const struct shm_owner_ref *owners;
	size_t n_owners;
	const void *payload;
	size_t payload_len;
	/* private */
	void *mem_;
	size_t cap_;
};
#define SHM_OBJ_INIT ((struct shm_obj){0})
void shm_obj_release(struct shm_obj *obj);
/* The controller reference (controller == 1) of obj, or NULL. */
const struct shm_owner_ref *shm_obj_controller(const struct shm_obj *obj);
/* The value of label key, or NULL. */
const char *shm_obj_label(const struct shm_obj *obj, const char *key);

struct shm_type_desc {
	const char *group; /* "" for the core group */
	const char *version;
	const char *resource; /* plural, e.g. "pods" */
	const char *kind;
	enum shm_record_kind record_kind;
};

struct shm_type_info {
	uint16_t id;
	uint32_t gen; /* T2: the slot's generation; records of this resource carry it */
	char group[64], version[64], resource[64], kind[64];
	enum shm_record_kind record_kind;
	char rv[64]; /* last synced resourceVersion ("" if none) */
	/* The initial list is done; and, in a process that set an epoch source
	 * (shm_reader_set_epoch_source), the type was relisted for the current leadership
	 * epoch too (sync_epoch == the source's epoch). */
	bool synced;
	uint32_t sync_epoch; /* the leadership epoch of the last barrier relist (0 none) */
	uint64_t count;
};

struct shm_stats {
	uint64_t size, max_size, carved;
	uint64_t incarnation, change_seq, recoveries;
	uint64_t objects, handles_hw, n_types;
	uint64_t live_bytes, quarantine_bytes, free_bytes;
	uint64_t violations; /* found and dropped by the last writer recovery (0 when healthy) */
};

struct shm_create_opts {
	uint64_t max_size;     /* address space reserved per process; 0 = 16 GiB */
	uint64_t initial_size; /* bytes backed at creation; 0 = 4 MiB */
};

/* ---- owner (the manager) ---------------------------------------------------------------------
 * Create a new arena memfd (close-on-exec, sealed against shrinking), initialised and empty.
 * The fd is the only way in: pass it to children (clear FD_CLOEXEC in the child) and hand
 * readers shm_arena_reader_fd's read-only descriptor. -EINVAL bad opts, -errno from memfd/mmap. */
int shm_arena_create(const struct shm_create_opts *opts, int *ret_fd);
/* A new O_RDONLY descriptor of the same arena (a PROT_WRITE mapping of it fails with EACCES). */
int shm_arena_reader_fd(int fd, int *ret_fd);

/* ---- writer (informerd) ----------------------------------------------------------------------
 * Map fd read-write and become the single writer: -EBUSY if another live writer holds the
 * lock, -EBADMSG not an arena, -EPROTONOSUPPORT another layout version, -EUCLEAN the arena is
 * inconsistent beyond repair (the caller makes a new one). Recovers (mark/sweep, index rebuild)
 * whatever a killed writer left. */
int shm_writer_open(int fd, struct shm_arena **ret);
/* Find the type with this group/version/resource or register it (in the lowest retired slot,
 * else a new one; T2). Returns the type id (>= 0). -EEXIST same GVR registered with another
 * kind or record kind, -ENOSPC SHM_ABI_MAX_TYPES registered at once, -ENOMEM no room in the
 * arena for the table's next chunk (T3), -ENAMETOOLONG a string longer than 63 bytes. */
int shm_writer_register_type(struct shm_arena *a, const struct shm_type_desc *desc);
/* Retire a type with no objects left (its resource is gone): the slot's id may be reused for
 * another resource under a new gen (T2). 0, -EINVAL not registered, -EBUSY objects remain. */
int shm_writer_retire_type(struct shm_arena *a, uint16_t type);
/* Create or replace the object (type, ns, name). A different uid means the object was
 * recreated: the uid index follows. Returns 1 created, 0 updated. -EINVAL bad input (missing
 * name/uid/rv, unknown type, kind not the type's record kind, duplicate label keys, a
 * tri-state outside -1..1), -E2BIG a part over SHM_RECORD_MAX_BYTES or a uid/rv over 65535
 * bytes (T1), -ENOMEM arena full (max_size reached) or malloc failed,
 * -ENOSPC no handle left. After an error the arena is consistent; if the failure came after the
 * new version was published (an index could not grow), the object is removed entirely, as if
 * deleted: the caller re-lists it later. */
int shm_writer_upsert(struct shm_arena *a, const struct shm_record_in *rec);
/* Delete (type, ns, name): 0 deleted, -ENOENT not present. */
int shm_writer_delete(struct shm_arena *a, uint16_t type, const char *ns, const char *name);
/* Record the last resourceVersion applied for type and whether the initial list is done; the
 * type's sync epoch is kept as it was. */
int shm_writer_set_sync(struct shm_arena *a, uint16_t type, const char *rv, bool synced);
/* The same, also recording that the type was relisted for leadership epoch `epoch` (the
 * acquisition barrier, docs/architecture.md "Leadership"). */
int shm_writer_set_sync_epoch(struct shm_arena *a, uint16_t type, const char *rv, bool synced,
                              uint32_t epoch);
/* Full consistency check (A1, A8, refcounts) of the published state: returns the number of
 * violations found (0 is healthy). For tests and `kcmctl cache`-style debugging. */
int shm_writer_check(struct shm_arena *a);

/* ---- readers (workers, kcmctl) --------------------------------------------------------------
 * Map fd read-only: -EBADMSG not an arena, -EPROTONOSUPPORT another layout version. */
int shm_reader_open(int fd, struct shm_arena **ret);
/* For a clear message on -EPROTONOSUPPORT: the layout version the arena behind fd was created
 * with (compare SHM_ABI_VERSION of shm/shm-abi.h). 0, or -EBADMSG not an arena, -errno. */
int shm_arena_version(int fd, uint32_t *ret_version);
/* Unmap and free (writer or reader); closes nothing the caller passed in. NULL is a no-op. */
void shm_arena_close(struct shm_arena *a);

#define SHM_READ_RETRIES 100000
/* Lookup by namespace/name within a type: 0 found, -ENOENT, -EINVAL, -EAGAIN (A3 retries
 * exhausted), -ENOMEM, -EIO the arena is corrupt. */
int shm_reader_get(struct shm_arena *a, uint16_t type, const char *ns, const char *name,
                   struct shm_obj *obj);
/* Lookup by uid across all types: same returns. */
int shm_reader_get_uid(struct shm_arena *a, const char *uid, struct shm_obj *obj);

/* Iteration: fn is called once per object with a private copy; a negative return stops the
 * walk and is returned. Membership is a snapshot of the index taken at the start; each object
 * is the version current when it is copied. Returns the number of objects visited. */
typedef int (*shm_visit_fn)(const struct shm_obj *obj, void *userdata);
/* All objects of a type. */
int shm_reader_list(struct shm_arena *a, uint16_t type, shm_visit_fn fn, void *userdata);
/* The objects of a type in one namespace. */
int shm_reader_list_ns(struct shm_arena *a, uint16_t type, const char *ns, shm_visit_fn fn,
                       void *userdata);
/* The objects of a type bound to a node: pod records (SHM_RECORD_POD) whose spec.nodeName is
 * node (the node index, records.h shm_rec_pod_node; client-go's "spec.nodeName" indexer).
 * -EINVAL for an empty node. */
int shm_reader_list_node(struct shm_arena *a, uint16_t type, const char *node, shm_visit_fn fn,
                         void *userdata);
/* Objects of type whose controller reference has owner_uid, then (if ns != NULL) the objects of
 * type in ns without a controller reference (orphans): what a ReplicaSet sync needs. */
int shm_reader_list_controlled(struct shm_arena *a, uint16_t type, const char *owner_uid,
                               const char *ns, shm_visit_fn fn, void *userdata);
/* Objects of every type with any owner reference to owner_uid (the GC's graph edges). */
int shm_reader_list_dependents(struct shm_arena *a, const char *owner_uid, shm_visit_fn fn,
                               void *userdata);

/* The resource table. */
int shm_reader_find_type(struct shm_arena *a, const char *group, const char *version,
                         const char *resource);
int shm_reader_type_info(struct shm_arena *a, uint16_t type, struct shm_type_info *ret);
/* The acquisition barrier in this process: once set, shm_type_info.synced also requires
 * sync_epoch == fn() whenever fn() is not 0 (0: no leadership epoch known, the plain
 * meaning). Set once at start-up, before any thread reads; NULL unsets. Workers and
 * dispatchers set it (lib/fence-env.c); informerd and the manager do not (they want the
 * arena's plain state). */
void shm_reader_set_epoch_source(uint32_t (*fn)(void));
int shm_reader_stats(struct shm_arena *a, struct shm_stats *ret);
/* The change counter (bumped after each published change), e.g. to wait on or to poll. */
uint64_t shm_reader_change_seq(struct shm_arena *a);
