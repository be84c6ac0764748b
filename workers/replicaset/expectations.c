/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/replicaset/expectations.c: shared-memory expectations (see expectations-abi.h for
 * the layout, the single-writer split and the crash rules; expectations.h for the API).
 *
 * The table is an open-addressing hash table keyed by the RS key, with linear probing over a
 * compact index (16 bytes per entry: state word and key hash) beside the fixed-size slots
 * (entry i <-> slot i). Slots are never moved: a freed slot becomes a TOMBSTONE that lookups
 * probe past and inserts reuse (for any key), so a reader never sees a record change place
 * under it. Probes stop at an EMPTY entry or at the table's max_probe bound (E7), so the long
 * tombstone runs of a churning cluster cost a bounded scan of the index, never of the slots.
 * Capacity is fixed at creation, 2^18 by default, in a sparse memfd (a slot costs memory only
 * once used); an insert into a full table fails with -ENOSPC instead of waiting.
 *
 * Rejected: growing the table in place (every process would have to remap and rehash under
 * lock-free readers in other processes; a sparse region sized for the maximum costs the same
 * memory and needs no protocol); freeing TOMBSTONEs back to EMPTY (cuts a probe chain under a
 * concurrent reader, which would then miss a live key).
 *
 * Every shared word is a C11 atomic; plain loads/stores of the slot contents are relaxed and
 * ordered by the seq protocol (E2) or by the release/acquire pairs named at each site.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "workers/replicaset/expectations-fault.h"
#include "workers/replicaset/evq.h"
#include "workers/replicaset/expectations.h"

unsigned rs_exp_fault_mask;

struct rs_exp {
	int fd;
	enum rs_exp_role role;
	pid_t pid;
	void *map;
	size_t size;
	struct rs_exp_header *h;
	struct rs_exp_ix *ix;
	struct rs_exp_slot *slots;
	uint32_t mask;
	uint64_t seed;
	int64_t timeout_ns, grace_ns;
};

#define R   memory_order_relaxed
#define ACQ memory_order_acquire
#define REL memory_order_release

int64_t rs_exp_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* FNV-1a over the bytes, seeded, then a murmur3-style finaliser for the low bits we index with. */
static uint64_t hash_str(uint64_t seed, const char *s, size_t len)
{
	uint64_t x = UINT64_C(0xcbf29ce484222325) ^ seed;
	for (size_t i = 0; i < len; i++) {
		x ^= (unsigned char)s[i];
		x *= UINT64_C(0x100000001b3);
	}
	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	x *= UINT64_C(0xc4ceb9fe1a85ec53);
	x ^= x >> 33;
	return x ? x : 1; /* 0 never names a pod key */
}

static size_t map_size(uint32_t capacity)
{
	return (size_t)rs_exp_slots_offset(capacity) +
	       (size_t)capacity * sizeof(struct rs_exp_slot);
}

/* the event queue's region follows the slots, page-aligned (outside what rs_exp maps) */
static size_t evq_offset(uint32_t capacity)
{
	return (map_size(capacity) + 4095) / 4096 * 4096;
}

int rs_exp_evq_offset(int fd, uint64_t *ret_off)
{
	struct rs_exp_header hdr;
	struct stat stb;
	if (fd < 0 || !ret_off)
		return -EINVAL;
	if (pread(fd, &hdr, sizeof hdr, 0) != (ssize_t)sizeof hdr || hdr.magic != RS_EXP_MAGIC ||
	    hdr.version != RS_EXP_ABI_VERSION || hdr.capacity == 0 ||
	    (hdr.capacity & (hdr.capacity - 1)) != 0)
		return -EPROTO;
	if (fstat(fd, &stb) < 0)
		return -errno;
	size_t off = evq_offset(hdr.capacity);
	if ((uint64_t)stb.st_size < off + rs_evq_region_size())
		return -EPROTO;
	*ret_off = off;
	return 0;
}

int rs_exp_memfd_create(const struct rs_exp_create_opts *opts)
{
	uint32_t cap = opts && opts->capacity ? opts->capacity : RS_EXP_DEFAULT_CAPACITY;
	if (cap > RS_EXP_MAX_CAPACITY)
		return -EINVAL;
	uint32_t c = 1;
	while (c < cap)
		c <<= 1;
	int fd = memfd_create("kcmd-rs-expectations", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	size_t size = evq_offset(c) + rs_evq_region_size();
	if (ftruncate(fd, (off_t)size) < 0)
		goto fail;
	void *q = mmap(NULL, rs_evq_region_size(), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
	               (off_t)evq_offset(c));
	if (q == MAP_FAILED)
		goto fail;
	int qr = rs_evq_init(q, rs_evq_region_size());
	munmap(q, rs_evq_region_size());
	if (qr < 0) {
		close(fd);
		return qr;
	}
	struct rs_exp_header *h =
	        mmap(NULL, RS_EXP_HEADER_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED)
		goto fail;
	uint64_t seed = 0;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	seed = hash_str((uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32), (const char *)&ts,
	                sizeof ts);
	h->version = RS_EXP_ABI_VERSION;
	h->capacity = c;
	h->slot_size = sizeof(struct rs_exp_slot);
	h->seed = seed;
	h->timeout_ns = opts && opts->timeout_ns > 0 ? opts->timeout_ns : RS_EXP_TIMEOUT_NS;
	h->orphan_grace_ns =
	        opts && opts->orphan_grace_ns > 0 ? opts->orphan_grace_ns : RS_EXP_ORPHAN_GRACE_NS;
	atomic_store_explicit(&h->informer_epoch, 0, R);
	/* The magic goes last: the fd is not shared yet, but an attach that finds the magic sees
	 * a complete header (munmap/mmap of another process is ordered by the fd passing anyway).
	 */
	atomic_thread_fence(REL);
	h->magic = RS_EXP_MAGIC;
	munmap(h, RS_EXP_HEADER_SIZE);
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		goto fail;
	return fd;
fail:;
	int r = -errno;
	close(fd);
	return r;
}

int rs_exp_attach(int fd, enum rs_exp_role role, int64_t now, struct rs_exp **ret)
{
	if (fd < 0 || !ret || (role != RS_EXP_WORKER && role != RS_EXP_INFORMER))
		return -EINVAL;
	struct rs_exp_header hdr;
	if (pread(fd, &hdr, sizeof hdr, 0) != (ssize_t)sizeof hdr)
		return -EPROTO;
	if (hdr.magic != RS_EXP_MAGIC || hdr.version != RS_EXP_ABI_VERSION ||
	    hdr.slot_size != sizeof(struct rs_exp_slot) || hdr.capacity == 0 ||
	    (hdr.capacity & (hdr.capacity - 1)) != 0)
		return -EPROTO;
	struct stat stb;
	if (fstat(fd, &stb) < 0)
		return -errno;
	if (stb.st_size < (off_t)map_size(hdr.capacity))
		return -EPROTO;
	struct rs_exp *e = calloc(1, sizeof *e);
	if (!e)
		return -ENOMEM;
	e->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (e->fd < 0) {
		int r = -errno;
		free(e);
		return r;
	}
	e->size = map_size(hdr.capacity);
	e->map = mmap(NULL, e->size, PROT_READ | PROT_WRITE, MAP_SHARED, e->fd, 0);
	if (e->map == MAP_FAILED) {
		int r = -errno;
		close(e->fd);
		free(e);
		return r;
	}
	e->role = role;
	e->pid = getpid();
	e->h = e->map;
	e->ix = (struct rs_exp_ix *)((char *)e->map + RS_EXP_HEADER_SIZE);
	e->slots = (struct rs_exp_slot *)((char *)e->map + rs_exp_slots_offset(hdr.capacity));
	e->mask = hdr.capacity - 1;
	e->seed = hdr.seed;
	e->timeout_ns = hdr.timeout_ns;
	e->grace_ns = hdr.orphan_grace_ns;
	if (role == RS_EXP_INFORMER) {
		/* attached_at before the epoch: a worker that loads the new epoch (acquire, in
		 * rs_exp_satisfied) also sees the attach time that goes with it. */
		atomic_store_explicit(&e->h->informer_attached_at, now, R);
		atomic_store_explicit(&e->h->informer_pid, (uint32_t)e->pid, R);
		uint64_t ep = atomic_load_explicit(&e->h->informer_epoch, R);
		atomic_store_explicit(&e->h->informer_epoch, ep + 1, REL);
	}
	*ret = e;
	return 0;
}

struct rs_exp *rs_exp_detach(struct rs_exp *e)
{
	if (!e)
		return NULL;
	munmap(e->map, e->size);
	close(e->fd);
	free(e);
	return NULL;
}

/* ---- keys ---------------------------------------------------------------------------------- */
static int check_key(const char *key, size_t *len)
{
	if (!key)
		return -EINVAL;
	size_t n = strnlen(key, RS_EXP_KEY_MAX + 1);
	if (n == 0 || n > RS_EXP_KEY_MAX)
		return -EINVAL;
	*len = n;
	return 0;
}

static void key_pack(const char *key, size_t len, uint64_t w[RS_EXP_KEY_WORDS])
{
	memset(w, 0, RS_EXP_KEY_WORDS * sizeof *w);
	memcpy(w, key, len);
}

static size_t key_nwords(size_t len)
{
	return len / 8 + 1; /* includes the NUL padding word part */
}

static bool key_equal(struct rs_exp_slot *s, const uint64_t w[RS_EXP_KEY_WORDS], size_t len)
{
	for (size_t i = 0; i < key_nwords(len); i++)
		if (atomic_load_explicit(&s->key[i], R) != w[i])
			return false;
	return true;
}

/* Entries a lookup examines (E7): max_probe + 1, at most the capacity. The acquire pairs with
 * the claimer's seq_cst fetch-max, which precedes its release store of LIVE. */
static uint32_t probe_limit(struct rs_exp *e)
{
	uint32_t m = atomic_load_explicit(&e->h->max_probe, ACQ);
	return m > e->mask ? e->mask + 1 : m + 1;
}

/* E7: raise max_probe to at least d before the claimed slot is published. */
static void raise_max_probe(struct rs_exp *e, uint32_t d)
{
	uint32_t cur = atomic_load_explicit(&e->h->max_probe, R);
	while (cur < d && !atomic_compare_exchange_weak_explicit(&e->h->max_probe, &cur, d,
	                                                         memory_order_seq_cst, R))
		;
}

static struct rs_exp_ix *ix_of(struct rs_exp *e, struct rs_exp_slot *s)
{
	return &e->ix[s - e->slots];
}

/* Result of a lookup. */
struct found {
	struct rs_exp_slot *slot;
	uint32_t seq; /* the seq the key was validated against (may be odd: see callers) */
};

/* Finds the LIVE slot holding key. The key comparison is validated (E4): seq loaded with
 * acquire (pairs with the release store that ended the claim write), key words compared, an
 * acquire fence, seq re-loaded; a slot whose seq moved is re-examined a few times and then
 * reported busy (-EBUSY), which callers treat as "being replaced". Returns 1 found, 0 absent. */
static int lookup(struct rs_exp *e, const uint64_t w[RS_EXP_KEY_WORDS], size_t len, uint64_t kh,
                  struct found *f)
{
	uint32_t n = probe_limit(e);
	for (uint32_t i = 0, idx = (uint32_t)kh & e->mask; i < n; i++, idx = (idx + 1) & e->mask) {
		struct rs_exp_ix *x = &e->ix[idx];
		struct rs_exp_slot *s = &e->slots[idx];
		/* acquire: pairs with the release store of LIVE at the end of a claim */
		uint64_t st = atomic_load_explicit(&x->state, ACQ);
		unsigned kind = (unsigned)(st & 3);
		if (kind == RS_EXP_SLOT_EMPTY)
			return 0;
		if (kind != RS_EXP_SLOT_LIVE)
			continue;
		if (atomic_load_explicit(&x->key_hash, R) != kh ||
		    atomic_load_explicit(&s->key_len, R) != len)
			continue;
		for (int tries = 0; tries < 4; tries++) {
			/* acquire: pairs with the release store that ended the last write (E2) */
			uint32_t s1 = atomic_load_explicit(&s->seq, ACQ);
			bool eq = key_equal(s, w, len);
			/* acquire fence: the key loads above happen before the re-check below;
			 * pairs with the writer's release fence after it made seq odd */
			atomic_thread_fence(ACQ);
			uint32_t s2 = atomic_load_explicit(&s->seq, R);
			uint64_t st2 = atomic_load_explicit(&x->state, R);
			if (s1 == s2 && st2 == st) {
				if (!eq)
					break;
				f->slot = s;
				f->seq = s1;
				return 1;
			}
			if ((st2 & 3) != RS_EXP_SLOT_LIVE)
				break;
		}
		if (atomic_load_explicit(&x->state, R) == st && key_equal(s, w, len))
			return -EBUSY;
	}
	return 0;
}

static bool pid_dead(uint32_t pid)
{
	return pid != 0 && kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

/* E2 writer side: begin returns the odd seq written, end publishes the next even one. */
static uint32_t write_begin(struct rs_exp_slot *s)
{
	uint32_t cur = atomic_load_explicit(&s->seq, R); /* own word */
	uint32_t base = (cur & 1) ? cur + 1 : cur;       /* odd = torn by a dead writer */
	atomic_store_explicit(&s->seq, base + 1, R);
	/* release fence: orders the odd seq before the content stores below; pairs with the
	 * reader's acquire fence before its seq re-check */
	atomic_thread_fence(REL);
	if (rs_exp_fault_mask & RS_EXP_FAULT_SLOW_WRITE)
		usleep(300);
	return base + 1;
}

static void write_end(struct rs_exp_slot *s, uint32_t odd)
{
	/* release: publishes the content; pairs with the acquire load of seq in lookup() */
	atomic_store_explicit(&s->seq, odd + 1, REL);
}

/* Lease holder: finds or creates the slot of key. */
static int lookup_or_claim(struct rs_exp *e, const char *key, size_t len, struct rs_exp_slot **ret,
                           uint32_t *ret_odd)
{
	uint64_t w[RS_EXP_KEY_WORDS];
	key_pack(key, len, w);
	uint64_t kh = hash_str(e->seed, key, len);
	struct found f;
	int r = lookup(e, w, len, kh, &f);
	if (r == -EBUSY)
		return -EBUSY; /* cannot happen to a lease holder; defensive */
	if (r == 1) {
		*ret = f.slot;
		*ret_odd = write_begin(f.slot);
		return 0;
	}
	uint32_t cap = e->mask + 1;
	for (uint32_t i = 0, idx = (uint32_t)kh & e->mask; i < cap;
	     i++, idx = (idx + 1) & e->mask) {
		struct rs_exp_ix *x = &e->ix[idx];
		struct rs_exp_slot *s = &e->slots[idx];
		uint64_t st = atomic_load_explicit(&x->state, ACQ);
		for (;;) {
			unsigned kind = (unsigned)(st & 3);
			if (kind == RS_EXP_SLOT_CLAIMED && pid_dead((uint32_t)(st >> 32))) {
				/* a claimer killed before publishing: free the slot (E1 exception)
				 */
				if (atomic_compare_exchange_strong_explicit(
				            &x->state, &st, RS_EXP_SLOT_TOMBSTONE, ACQ, ACQ))
					st = RS_EXP_SLOT_TOMBSTONE;
				continue;
			}
			if (kind != RS_EXP_SLOT_EMPTY && kind != RS_EXP_SLOT_TOMBSTONE)
				break;
			uint64_t claimed = RS_EXP_SLOT_CLAIMED | ((uint64_t)(uint32_t)e->pid << 32);
			/* acquire on success: we read the slot's old seq next; failure reloads st
			 */
			if (atomic_compare_exchange_strong_explicit(&x->state, &st, claimed, ACQ,
			                                            ACQ)) {
				/* E7: the bound covers this key before anyone can find it LIVE */
				raise_max_probe(e, i);
				/* E7: seq continues from the previous occupant's (never reset) */
				uint32_t odd = (rs_exp_fault_mask & RS_EXP_FAULT_RESET_SEQ)
				                       ? (atomic_store_explicit(&s->seq, 0, R),
				                          write_begin(s))
				                       : write_begin(s);
				for (unsigned k = 0; k < RS_EXP_KEY_WORDS; k++)
					atomic_store_explicit(&s->key[k], w[k], R);
				atomic_store_explicit(&s->key_len, (uint32_t)len, R);
				atomic_store_explicit(&x->key_hash, kh, R);
				atomic_store_explicit(&s->n_del, 0, R);
				atomic_store_explicit(&s->expected_adds, 0, R);
				atomic_store_explicit(&s->cons_seq, 0, R);
				*ret = s;
				*ret_odd = odd;
				return 1;
			}
		}
	}
	atomic_fetch_add_explicit(&e->h->table_full_total, 1, R); /* E6 counter */
	return -ENOSPC;
}

/* Publishes a slot claimed by lookup_or_claim (r == 1) after its first write. */
static void publish(struct rs_exp *e, struct rs_exp_slot *s, uint32_t odd, int claimed)
{
	write_end(s, odd);
	if (claimed == 1)
		/* release: a reader that sees LIVE (acquire in lookup) sees the key and content */
		atomic_store_explicit(&ix_of(e, s)->state, RS_EXP_SLOT_LIVE, REL);
}

/* Whether the consistency record belongs to the published generation `seq`. */
static bool cons_live(struct rs_exp_slot *s, uint32_t seq)
{
	uint32_t cs = atomic_load_explicit(&s->cons_seq, R); /* own word */
	return cs != 0 && cs == seq && !(seq & 1) &&
	       atomic_load_explicit(&s->deleted_seq, ACQ) != seq;
}

/* Inside a replace (seq odd): the consistency record follows the record to the generation
 * about to be published, or is dropped if it was not live. `old` is the seq before the write. */
static void cons_carry(struct rs_exp_slot *s, uint32_t old, uint32_t odd, int claimed)
{
	bool live = claimed != 1 && cons_live(s, old);
	atomic_store_explicit(&s->cons_seq, live ? odd + 1 : 0, R);
}

static void stamp(struct rs_exp *e, struct rs_exp_slot *s, int64_t now)
{
	atomic_store_explicit(&s->timestamp, now, R);
	atomic_store_explicit(&s->phase, RS_EXP_PHASE_IN_FLIGHT, R);
	atomic_store_explicit(&s->writer_pid, (uint32_t)e->pid, R);
	/* acquire: pairs with informerd's release store of the epoch at attach */
	atomic_store_explicit(&s->informer_epoch, atomic_load_explicit(&e->h->informer_epoch, ACQ),
	                      R);
}

int rs_exp_expect_creations(struct rs_exp *e, const char *key, int64_t n, int64_t now)
{
	size_t len;
	if (!e || check_key(key, &len) < 0 || n < 0)
		return -EINVAL;
	if (e->role != RS_EXP_WORKER)
		return -EPERM;
	struct rs_exp_slot *s;
	uint32_t odd;
	int r = lookup_or_claim(e, key, len, &s, &odd);
	if (r < 0)
		return r;
	atomic_store_explicit(&s->expected_adds, n, R);
	atomic_store_explicit(&s->n_del, 0, R);
	stamp(e, s, now);
	cons_carry(s, odd - 1, odd, r);
	publish(e, s, odd, r);
	return 0;
}

static int expect(struct rs_exp *e, const char *key, int64_t adds, const char *const *pod_keys,
                  size_t n, int64_t now)
{
	size_t len;
	if (!e || check_key(key, &len) < 0 || n > RS_EXP_MAX_DELETES || (n && !pod_keys) ||
	    adds < 0)
		return -EINVAL;
	if (e->role != RS_EXP_WORKER)
		return -EPERM;
	uint64_t hs[RS_EXP_MAX_DELETES];
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		size_t pl;
		if (check_key(pod_keys[i], &pl) < 0)
			return -EINVAL;
		uint64_t ph = hash_str(e->seed, pod_keys[i], pl);
		bool dup = false;
		for (size_t j = 0; j < m && !dup; j++)
			dup = hs[j] == ph; /* a set, as upstream's sets.New */
		if (!dup)
			hs[m++] = ph;
	}
	struct rs_exp_slot *s;
	uint32_t odd;
	int r = lookup_or_claim(e, key, len, &s, &odd);
	if (r < 0)
		return r;
	for (size_t i = 0; i < m; i++) {
		/* the tags of older generations stay: they can never equal the new seq (E3) */
		atomic_store_explicit(&s->del[i].hash, hs[i], R);
	}
	atomic_store_explicit(&s->n_del, (uint32_t)m, R);
	atomic_store_explicit(&s->expected_adds, adds, R);
	stamp(e, s, now);
	cons_carry(s, odd - 1, odd, r);
	publish(e, s, odd, r);
	return 0;
}

int rs_exp_expect_deletions(struct rs_exp *e, const char *key, const char *const *pod_keys,
                            size_t n, int64_t now)
{
	return expect(e, key, 0, pod_keys, n, now);
}

int rs_exp_expect(struct rs_exp *e, const char *key, int64_t adds, const char *const *pod_keys,
                  size_t n, int64_t now)
{
	return expect(e, key, adds, pod_keys, n, now);
}

/* Lease holder's lookup (no claim). Returns the slot or NULL; *seq gets the current seq. */
static struct rs_exp_slot *own_lookup(struct rs_exp *e, const char *key, size_t len, uint32_t *seq)
{
	uint64_t w[RS_EXP_KEY_WORDS];
	key_pack(key, len, w);
	struct found f;
	if (lookup(e, w, len, hash_str(e->seed, key, len), &f) != 1)
		return NULL;
	*seq = f.seq;
	return f.slot;
}

int rs_exp_lower_creations(struct rs_exp *e, const char *key, int64_t n)
{
	size_t len;
	if (!e || check_key(key, &len) < 0 || n < 0)
		return -EINVAL;
	if (e->role != RS_EXP_WORKER)
		return -EPERM;
	uint32_t seq;
	struct rs_exp_slot *s = own_lookup(e, key, len, &seq);
	if (!s || (seq & 1) || atomic_load_explicit(&s->deleted_seq, ACQ) == seq)
		return 0;
	/* own word: only the lease holder writes expected_adds */
	int64_t a = atomic_load_explicit(&s->expected_adds, R);
	atomic_store_explicit(&s->expected_adds, a - n, R);
	return 0;
}

int rs_exp_deletion_failed(struct rs_exp *e, const char *key, const char *pod_key)
{
	size_t len, pl;
	if (!e || check_key(key, &len) < 0 || check_key(pod_key, &pl) < 0)
		return -EINVAL;
	if (e->role != RS_EXP_WORKER)
		return -EPERM;
	uint32_t seq;
	struct rs_exp_slot *s = own_lookup(e, key, len, &seq);
	if (!s || (seq & 1) || atomic_load_explicit(&s->deleted_seq, ACQ) == seq)
		return 0;
	uint64_t ph = hash_str(e->seed, pod_key, pl);
	uint32_t n = atomic_load_explicit(&s->n_del, R);
	for (uint32_t i = 0; i < n; i++) {
		if (atomic_load_explicit(&s->del[i].hash, R) != ph)
			continue;
		if (atomic_load_explicit(&s->del[i].inf_tag, ACQ) == seq ||
		    atomic_load_explicit(&s->del[i].fail_tag, R) == seq)
			return 0;
		/* release: orders nothing of ours but keeps kcmctl's snapshot coherent */
		atomic_store_explicit(&s->del[i].fail_tag, seq, REL);
		return 1;
	}
	return 0;
}

int rs_exp_settle(struct rs_exp *e, const char *key)
{
	size_t len;
	if (!e || check_key(key, &len) < 0)
		return -EINVAL;
	if (e->role != RS_EXP_WORKER)
		return -EPERM;
	uint32_t seq;
	struct rs_exp_slot *s = own_lookup(e, key, len, &seq);
	if (!s || (seq & 1))
		return 0;
	/* release: a later lease holder's acquire of seq/phase sees the lowered counts first */
	atomic_store_explicit(&s->phase, RS_EXP_PHASE_SETTLED, REL);
	return 0;
}

int rs_exp_delete(struct rs_exp *e, const char *key)
{
	size_t len;
	if (!e || check_key(key, &len) < 0)
		return -EINVAL;
	if (e->role != RS_EXP_WORKER)
		return -EPERM;
	uint32_t seq;
	struct rs_exp_slot *s = own_lookup(e, key, len, &seq);
	if (!s)
		return -ENOENT;
	uint32_t odd = write_begin(s);
	/* release: lookups that load TOMBSTONE skip the slot; the odd seq already voids readers
	 * validating against the old one */
	atomic_store_explicit(&ix_of(e, s)->state, RS_EXP_SLOT_TOMBSTONE, REL);
	write_end(s, odd);
	return 0;
}

/* ---- the satisfied check ------------------------------------------------------------------- */
bool rs_exp_satisfied(struct rs_exp *e, const char *key, int64_t now, struct rs_exp_state *st)
{
	struct rs_exp_state tmp = {0};
	if (!st)
		st = &tmp;
	memset(st, 0, sizeof *st);
	size_t len;
	if (!e || check_key(key, &len) < 0) {
		st->verdict = RS_EXP_ABSENT;
		return true;
	}
	uint32_t seq;
	struct rs_exp_slot *s = own_lookup(e, key, len, &seq);
	if (!s) {
		st->verdict = RS_EXP_ABSENT;
		return true;
	}
	st->seq = seq;
	if (seq & 1) {
		/* only the lease holder writes this record and it is asking: a dead writer tore it
		 * before any API call of that generation (E4) */
		st->verdict = RS_EXP_TORN;
		return true;
	}
	/* acquire: pairs with informerd's release store of deleted_seq */
	if (atomic_load_explicit(&s->deleted_seq, ACQ) == seq) {
		st->verdict = RS_EXP_ABSENT;
		return true;
	}
	/* acquire: pairs with informerd's release store of observed (E3) */
	uint64_t obs = atomic_load_explicit(&s->observed, ACQ);
	int64_t observed = 0;
	if ((uint32_t)(obs >> 32) == seq || (rs_exp_fault_mask & RS_EXP_FAULT_IGNORE_GEN))
		observed = (int64_t)(uint32_t)obs;
	st->adds_left = atomic_load_explicit(&s->expected_adds, R) - observed;
	uint32_t n = atomic_load_explicit(&s->n_del, R);
	for (uint32_t i = 0; i < n && i < RS_EXP_MAX_DELETES; i++) {
		/* acquire: pairs with informerd's release store of inf_tag */
		if (atomic_load_explicit(&s->del[i].inf_tag, ACQ) != seq &&
		    atomic_load_explicit(&s->del[i].fail_tag, R) != seq)
			st->dels_left++;
	}
	st->informer_epoch = atomic_load_explicit(&s->informer_epoch, R);
	if (st->adds_left <= 0 && st->dels_left <= 0) {
		st->verdict = RS_EXP_FULFILLED;
		return true;
	}
	int64_t ts = atomic_load_explicit(&s->timestamp, R);
	int64_t age = now - ts;
	if (age > e->timeout_ns) { /* upstream: strictly more than ExpectationsTimeout */
		st->verdict = RS_EXP_EXPIRED;
		return true;
	}
	int64_t recheck = e->timeout_ns - age + 1;
	if (!(rs_exp_fault_mask & RS_EXP_FAULT_NO_ORPHAN_RULE)) {
		int64_t base = -1;
		if (atomic_load_explicit(&s->phase, ACQ) == RS_EXP_PHASE_IN_FLIGHT &&
		    atomic_load_explicit(&s->writer_pid, R) != (uint32_t)e->pid)
			base = ts; /* its writer died mid-manageReplicas */
		/* acquire: pairs with the release store of the epoch at informerd's attach, so the
		 * attach time read next belongs to it */
		uint64_t ep = atomic_load_explicit(&e->h->informer_epoch, ACQ);
		if (ep != st->informer_epoch) {
			int64_t at = atomic_load_explicit(&e->h->informer_attached_at, R);
			base = at > ts ? at
			               : ts; /* informerd restarted: observations may be lost */
		}
		if (base >= 0) {
			st->orphaned = true;
			if (now - base > e->grace_ns) {
				st->verdict = RS_EXP_ORPHAN_EXPIRED;
				return true;
			}
			int64_t g = base + e->grace_ns - now + 1;
			if (g < recheck)
				recheck = g;
		}
	}
	st->verdict = RS_EXP_PENDING;
	st->recheck_after_ns = recheck;
	return false;
}

/* ---- consistency store ------------------------------------------------------------------------
 */
const char *rs_cons_resource_name(enum rs_cons_resource r)
{
	return r == RS_CONS_PODS ? "pods" : "replicasets.apps";
}

static bool rv_well_formed(const char *s)
{
	if (!s || !s[0] || s[0] == '0')
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

int rs_rv_compare(const char *a, const char *b, int *ret)
{
	if (!ret || !rv_well_formed(a) || !rv_well_formed(b))
		return -EINVAL;
	size_t la = strlen(a), lb = strlen(b);
	int c = la != lb ? (la < lb ? -1 : 1) : strcmp(a, b);
	*ret = c < 0 ? -1 : c > 0 ? 1 : 0;
	return 0;
}

static void words_store(_Atomic uint64_t *w, size_t nw, const char *str)
{
	uint64_t buf[RS_EXP_CONS_UID_WORDS] = {0};
	size_t n = strlen(str);
	memcpy(buf, str, n); /* callers checked n < nw * 8 */
	for (size_t i = 0; i < nw; i++) {
		if (i == 1 && (rs_exp_fault_mask & RS_EXP_FAULT_SLOW_WRITE))
			usleep(300); /* test seam: let kill -9 land between two words */
		atomic_store_explicit(&w[i], buf[i], R);
	}
}

static void words_load(_Atomic uint64_t *w, size_t nw, char *out)
{
	uint64_t buf[RS_EXP_CONS_UID_WORDS];
	for (size_t i = 0; i < nw; i++)
		buf[i] = atomic_load_explicit(&w[i], R);
	memcpy(out, buf, nw * 8);
	out[nw * 8 - 1] = 0;
}

int rs_exp_wrote_at(struct rs_exp *e, const char *key, const char *owner_uid,
                    enum rs_cons_resource r, const char *rv)
{
	size_t len;
	if (!e || check_key(key, &len) < 0 || !owner_uid || !rv ||
	    (unsigned)r >= RS_EXP_CONS_RESOURCES)
		return -EINVAL;
	if (e->role != RS_EXP_WORKER)
		return -EPERM;
	if (strlen(owner_uid) >= RS_EXP_CONS_UID_WORDS * 8 ||
	    strlen(rv) >= RS_EXP_CONS_RV_WORDS * 8)
		return -E2BIG;
	uint32_t seq;
	struct rs_exp_slot *s = own_lookup(e, key, len, &seq);
	if (!s || (seq & 1) || atomic_load_explicit(&s->deleted_seq, ACQ) == seq) {
		/* no record, or a torn or deleted one: start a fresh generation with no
		 * expectations (what the record means already) to hang the consistency record on */
		uint32_t odd;
		int c = lookup_or_claim(e, key, len, &s, &odd);
		if (c < 0)
			return c;
		atomic_store_explicit(&s->expected_adds, 0, R);
		atomic_store_explicit(&s->n_del, 0, R);
		atomic_store_explicit(&s->phase, RS_EXP_PHASE_SETTLED, R);
		atomic_store_explicit(&s->cons_seq, 0, R);
		publish(e, s, odd, c);
		seq = odd + 1;
	}
	char cur_uid[RS_EXP_CONS_UID_WORDS * 8], cur_rv[RS_EXP_CONS_RV_WORDS * 8];
	bool same_owner = false;
	if (cons_live(s, seq)) {
		words_load(s->cons_uid, RS_EXP_CONS_UID_WORDS, cur_uid);
		same_owner = strcmp(cur_uid, owner_uid) == 0;
	}
	if (same_owner) {
		words_load(s->cons_rv[r], RS_EXP_CONS_RV_WORDS, cur_rv);
		int c;
		if (cur_rv[0] && rs_rv_compare(cur_rv, rv, &c) == 0 && c >= 0)
			return 0; /* the stored one is at least as new */
	}
	/* cons_seq = 0 while the record is inconsistent: a writer killed here leaves none. The
	 * release fence orders that store before the words (pairs with nothing in another
	 * process: only the next lease holder reads these, after the queue handed it the key). */
	if (!(rs_exp_fault_mask & RS_EXP_FAULT_CONS_NO_GUARD))
		atomic_store_explicit(&s->cons_seq, 0, R);
	atomic_thread_fence(REL);
	if (!same_owner) {
		words_store(s->cons_uid, RS_EXP_CONS_UID_WORDS, owner_uid);
		for (unsigned i = 0; i < RS_EXP_CONS_RESOURCES; i++)
			words_store(s->cons_rv[i], RS_EXP_CONS_RV_WORDS, "");
	}
	words_store(s->cons_rv[r], RS_EXP_CONS_RV_WORDS, rv);
	/* release: the record is complete before it is live */
	atomic_store_explicit(&s->cons_seq, seq, REL);
	return 0;
}

int rs_exp_ensure_ready(struct rs_exp *e, const char *key,
                        const char *const read_rv[RS_EXP_CONS_RESOURCES], struct rs_cons_stale *ret)
{
	size_t len;
	if (!e || check_key(key, &len) < 0)
		return -EINVAL;
	if (e->role != RS_EXP_WORKER)
		return -EPERM;
	uint32_t seq;
	struct rs_exp_slot *s = own_lookup(e, key, len, &seq);
	if (!s || !cons_live(s, seq))
		return 0;
	for (unsigned i = 0; i < RS_EXP_CONS_RESOURCES; i++) {
		char wrote[RS_EXP_CONS_RV_WORDS * 8];
		words_load(s->cons_rv[i], RS_EXP_CONS_RV_WORDS, wrote);
		const char *read = read_rv ? read_rv[i] : NULL;
		if (!wrote[0] || !read || !read[0])
			continue; /* nothing written, or the store cannot tell its version */
		int c;
		if (rs_rv_compare(wrote, read, &c) < 0)
			continue; /* a data problem must not block syncing */
		if (c > 0) {
			if (ret) {
				ret->resource = (enum rs_cons_resource)i;
				snprintf(ret->wrote_rv, sizeof ret->wrote_rv, "%s", wrote);
				snprintf(ret->read_rv, sizeof ret->read_rv, "%s", read);
			}
			return 1;
		}
	}
	atomic_store_explicit(&s->cons_seq, 0, R); /* ready: Clear */
	return 0;
}

/* ---- informerd ------------------------------------------------------------------------------ */
static int inf_lookup(struct rs_exp *e, const char *key, struct found *f)
{
	size_t len;
	if (!e || check_key(key, &len) < 0)
		return -EINVAL;
	if (e->role != RS_EXP_INFORMER)
		return -EPERM;
	uint64_t w[RS_EXP_KEY_WORDS];
	key_pack(key, len, w);
	int r = lookup(e, w, len, hash_str(e->seed, key, len), f);
	return r == 1 ? 1 : 0; /* busy = being rewritten: ordered before the replace (E2) */
}

/* Re-validates after reading: true when seq still equals f->seq. */
static bool still(struct found *f)
{
	/* acquire fence: the loads made under this seq happen before the re-check; pairs with
	 * the writer's release fence in write_begin */
	atomic_thread_fence(ACQ);
	return atomic_load_explicit(&f->slot->seq, R) == f->seq;
}

int rs_exp_creation_observed(struct rs_exp *e, const char *key)
{
	struct found f;
	int r = inf_lookup(e, key, &f);
	if (r <= 0)
		return r;
	struct rs_exp_slot *s = f.slot;
	if ((f.seq & 1) || atomic_load_explicit(&s->deleted_seq, R) == f.seq)
		return 0;
	uint64_t obs = atomic_load_explicit(&s->observed, R); /* own word */
	uint32_t count = (uint32_t)(obs >> 32) == f.seq ? (uint32_t)obs : 0;
	if (rs_exp_fault_mask & RS_EXP_FAULT_IGNORE_GEN)
		count = (uint32_t)obs;
	if (!still(&f))
		return 0;
	/* release: pairs with the acquire load in rs_exp_satisfied; a stale tag is inert (E3) */
	atomic_store_explicit(&s->observed, ((uint64_t)f.seq << 32) | (uint32_t)(count + 1), REL);
	return 1;
}

int rs_exp_deletion_observed(struct rs_exp *e, const char *key, const char *pod_key)
{
	size_t pl;
	if (check_key(pod_key, &pl) < 0)
		return -EINVAL;
	struct found f;
	int r = inf_lookup(e, key, &f);
	if (r <= 0)
		return r;
	struct rs_exp_slot *s = f.slot;
	if ((f.seq & 1) || atomic_load_explicit(&s->deleted_seq, R) == f.seq)
		return 0;
	uint64_t ph = hash_str(e->seed, pod_key, pl);
	uint32_t n = atomic_load_explicit(&s->n_del, R);
	for (uint32_t i = 0; i < n && i < RS_EXP_MAX_DELETES; i++) {
		if (atomic_load_explicit(&s->del[i].hash, R) != ph)
			continue;
		if (atomic_load_explicit(&s->del[i].inf_tag, R) == f.seq ||
		    atomic_load_explicit(&s->del[i].fail_tag, R) == f.seq)
			return 0; /* counted once, as upstream removes the key from the set */
		if (!still(&f))
			return 0;
		/* release: pairs with the acquire load of inf_tag in rs_exp_satisfied */
		atomic_store_explicit(&s->del[i].inf_tag, f.seq, REL);
		return 1;
	}
	return 0;
}

int rs_exp_informer_delete(struct rs_exp *e, const char *key)
{
	struct found f;
	int r = inf_lookup(e, key, &f);
	if (r <= 0)
		return r;
	/* an odd seq is a replace in progress: the deletion applies to what it publishes
	 * (seq + 1), as if the delete handler ran right after the replace */
	uint32_t target = (f.seq & 1) ? f.seq + 1 : f.seq;
	/* release: pairs with the acquire loads of deleted_seq by the lease holder */
	atomic_store_explicit(&f.slot->deleted_seq, target, REL);
	return 1;
}

/* ---- manager / introspection ----------------------------------------------------------------- */
int rs_exp_reclaim_pid(struct rs_exp *e, pid_t pid)
{
	if (!e || pid <= 0)
		return -EINVAL;
	int n = 0;
	uint64_t want = RS_EXP_SLOT_CLAIMED | ((uint64_t)(uint32_t)pid << 32);
	for (uint32_t i = 0; i <= e->mask; i++) {
		uint64_t st = want;
		if (atomic_compare_exchange_strong_explicit(
		            &e->ix[i].state, &st, RS_EXP_SLOT_TOMBSTONE, memory_order_acq_rel, R))
			n++;
	}
	return n;
}

void rs_exp_count(struct rs_exp *e, uint32_t counts[4])
{
	memset(counts, 0, 4 * sizeof *counts);
	if (!e)
		return;
	for (uint32_t i = 0; i <= e->mask; i++)
		counts[atomic_load_explicit(&e->ix[i].state, R) & 3]++;
}

/* ---- controller metrics ---------------------------------------------------------------------- */

void rs_exp_metric_stale_skip(struct rs_exp *e, enum rs_cons_resource r)
{
	if (e && (unsigned)r < 2)
		atomic_fetch_add_explicit(&e->h->stale_skips[r], 1, R);
}

void rs_exp_metric_age_ratio(struct rs_exp *e, double ratio)
{
	if (!e || !(ratio >= 0))
		return;
	double le = 0.25;
	int k;
	for (k = 0; k < 6 && ratio > le; k++)
		le *= 2;
	if (k < 6)
		atomic_fetch_add_explicit(&e->h->age_ratio_bucket[k], 1, R);
	else
		atomic_fetch_add_explicit(&e->h->age_ratio_inf, 1, R);
	atomic_fetch_add_explicit(&e->h->age_ratio_sum, (uint64_t)ratio, R);
	atomic_fetch_add_explicit(&e->h->age_ratio_count, 1, R);
}

static uint64_t sum_of(struct rs_exp *const *v, size_t n, size_t off)
{
	uint64_t t = 0;
	for (size_t i = 0; i < n; i++)
		if (v[i])
			t += atomic_load_explicit((_Atomic uint64_t *)((char *)v[i]->h + off), R);
	return t;
}
#define SUM(field) sum_of(sum, n_sum, offsetof(struct rs_exp_header, field))

int rs_exp_metrics_text(struct rs_exp *e, char **ret)
{
	return rs_exp_metrics_text_ex(e, &e, 1, "replicaset", "ReplicaSet", ret);
}

int rs_exp_metrics_text_ex(struct rs_exp *e, struct rs_exp *const *sum, size_t n_sum,
                           const char *name, const char *what, char **ret)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (!e || !ret || (n_sum && !sum) || !name || !what)
		return -EINVAL;
	if (!(f = open_memstream(&buf, &len)))
		return -ENOMEM;
	if (n_sum) {
		fprintf(f,
		        "# HELP replicaset_controller_sorting_deletion_age_ratio [ALPHA] The "
		        "ratio of "
		        "chosen deleted pod's "
		        "ages to the current youngest pod's age (at the time). Should be <2. The "
		        "intent of "
		        "this metric is to "
		        "measure the rough efficacy of the LogarithmicScaleDown feature gate's "
		        "effect on "
		        "the sorting (and "
		        "deletion) of pods when a replicaset scales down. This only considers "
		        "Ready pods "
		        "when calculating and "
		        "reporting.\n# TYPE replicaset_controller_sorting_deletion_age_ratio "
		        "histogram\n");
		uint64_t cum = 0;
		double le = 0.25;
		for (int k = 0; k < 6; k++, le *= 2) {
			cum += SUM(age_ratio_bucket[k]);
			fprintf(f,
			        "replicaset_controller_sorting_deletion_age_ratio_bucket{le=\"%g\"}"
			        " "
			        "%llu\n",
			        le, (unsigned long long)cum);
		}
		uint64_t count = SUM(age_ratio_count);
		cum += SUM(age_ratio_inf);
		fprintf(f,
		        "replicaset_controller_sorting_deletion_age_ratio_bucket{le=\"+Inf\"} "
		        "%llu\n",
		        (unsigned long long)(cum > count ? cum : count));
		fprintf(f, "replicaset_controller_sorting_deletion_age_ratio_sum %llu\n",
		        (unsigned long long)SUM(age_ratio_sum));
		fprintf(f, "replicaset_controller_sorting_deletion_age_ratio_count %llu\n",
		        (unsigned long long)count);
		fprintf(f, "# HELP replicaset_controller_stale_sync_skips_total [ALPHA] Number of "
		           "times a "
		           "ReplicaSet sync "
		           "was skipped because the informer cache was older than the controller's "
		           "last "
		           "write.\n"
		           "# TYPE replicaset_controller_stale_sync_skips_total counter\n");
		fprintf(f,
		        "replicaset_controller_stale_sync_skips_total{group=\"\",resource=\"pods\"}"
		        " "
		        "%llu\n",
		        (unsigned long long)SUM(stale_skips[RS_CONS_PODS]));
		fprintf(f,
		        "replicaset_controller_stale_sync_skips_total{group=\"apps\",resource="
		        "\"replicasets\"} %llu\n",
		        (unsigned long long)SUM(stale_skips[RS_CONS_REPLICASETS]));
	}
	/* kcmd only: the table's fixed capacity (E7) and the claims it refused */
	fprintf(f,
	        "# HELP kcmd_%s_expectations_capacity Slots of the shared %s "
	        "expectations table "
	        "(one per %s with a record).\n# TYPE kcmd_%s_expectations_capacity "
	        "gauge\n"
	        "kcmd_%s_expectations_capacity %u\n",
	        name, what, what, name, name, e->mask + 1);
	fprintf(f,
	        "# HELP kcmd_%s_expectations_table_full_total Syncs refused because every "
	        "expectations "
	        "slot was in use.\n# TYPE kcmd_%s_expectations_table_full_total counter\n"
	        "kcmd_%s_expectations_table_full_total %llu\n",
	        name, name, name,
	        (unsigned long long)atomic_load_explicit(&e->h->table_full_total, R));
	if (fclose(f) != 0 || !buf) {
		free(buf);
		return -ENOMEM;
	}
	*ret = buf;
	return 0;
}
