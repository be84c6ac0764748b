/* SPDX-License-Identifier: Apache-2.0 */
/* shm/feed.c - the change feed: creation, the writer (publish, recovery, wake) and the
 * consumers (copy-out, lap detection, decoding, waiting). Protocol and INVARIANTS: shm/feed.h;
 * layout: shm/feed-abi.h.
 *
 * The writer encodes an entry into private memory, then copies it into the ring as relaxed
 * 64-bit atomic stores; a consumer copies it out the same way and validates the copy against
 * tail before it decodes anything. Decoding reads only the private copy, with every length
 * checked (F4), so even a corrupt ring can cost a consumer an -EBADMSG, never a fault.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/falloc.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "shm/feed-abi.h"
#include "shm/feed-test.h"
#include "shm/feed.h"
#include "shm/shm-internal.h"

unsigned shm_feed__test_flags;
uint64_t shm_feed__test_trim_chunk;
uint64_t shm_feed__test_sweep;
int shm_feed__test_crash_step;
long shm_feed__test_crash_count;

#define CRASH_STEP(n)                                                                              \
	do {                                                                                       \
		if (__builtin_expect(shm_feed__test_crash_step == (n), 0) &&                       \
		    --shm_feed__test_crash_count <= 0)                                             \
			raise(SIGKILL);                                                            \
	} while (0)

static void test_pause(void)
{
	struct timespec ts = {0, 20000};
	nanosleep(&ts, NULL);
}

struct shm_feed {
	uint8_t *map;
	size_t map_size;
	struct shm_feed_abi_header *hdr;
	uint8_t *ring;
	/* immutable header values, copied and checked at open (F4 never trusts them again) */
	uint64_t ring_size, mask, max_entry, first_seq, first_pos;
	int lock_fd; /* writer: the private OFD holding the lock; -1 for readers */
	bool writer;
	/* reader: the next entry to deliver; writer: the next to publish */
	uint64_t seq, pos;
	bool lapped;        /* reader: sticky -ESTALE until seek_end */
	uint32_t wake_bits; /* writer: the wake classes published since the last wake (F9) */
	uint64_t sweep_pos; /* writer: its position at the last lag sweep (F9) */
	uint64_t sweeps;
	uint32_t interest;                     /* reader: the futex bitset it waits with (F9) */
	bool (*want)(uint16_t type, void *ud); /* reader: the type filter (F9); NULL = all */
	void *want_ud;
	uint64_t tail; /* writer: the value last stored */
	uint8_t *wbuf;
	size_t wcap;
	/* reader: its slot (F7), in a read-write mapping of the slot pages; NULL = unregistered
	 * (a read-only fd, or every slot taken) */
	struct shm_feed_abi_slot *slot;
	void *slot_map;
	uint64_t owner;
	bool named; /* a durable consumer's slot (F8): pos published by commits and seeks only */
	int resume; /* F8: 0 not asked, 1 resumed, 2 refused (the ring no longer held the pair) */
	/* writer: positions below trimmed were given back (punched) or are below tail */
	uint64_t trimmed;
	bool trim_off; /* the memfd refused a punch: no more trimming */
};

static inline uint64_t seq_next(uint64_t s)
{
	return s + 1 ? s + 1 : 1;
}

static inline uint64_t seq_prev(uint64_t s)
{
	return s - 1 ? s - 1 : UINT64_MAX;
}

static inline uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static inline uint64_t max_entry_for(uint64_t ring_size)
{
	uint64_t m = ring_size / 4;
	return m > (UINT64_C(1) << 30) ? UINT64_C(1) << 30 : m;
}

static inline _Atomic uint64_t *word_at(const struct shm_feed *f, uint64_t pos)
{
	return (_Atomic uint64_t *)(f->ring + (pos & f->mask));
}

static inline uint64_t entry_word1(uint32_t len, unsigned op, unsigned flags, unsigned type)
{
	return (uint64_t)len | (uint64_t)(op & 0xff) << 32 | (uint64_t)(flags & 0xff) << 40 |
	       (uint64_t)(type & 0xffff) << 48;
}

/* ---- create / open / close ------------------------------------------------------------------ */
int shm_feed_create(const struct shm_feed_create_opts *opts, int *ret_fd)
{
	if (!ret_fd)
		return -EINVAL;
	uint64_t ring = opts && opts->ring_size ? opts->ring_size : UINT64_C(64) << 20;
	if (ring < SHM_FEED_ABI_MIN_RING || ring > SHM_FEED_ABI_MAX_RING)
		return -EINVAL;
	uint64_t p2 = SHM_FEED_ABI_MIN_RING;
	while (p2 < ring)
		p2 <<= 1;
	ring = p2;
	uint64_t first_seq = opts && opts->first_seq ? opts->first_seq : 1;
	uint64_t first_pos = opts ? opts->first_pos & ~(uint64_t)(SHM_FEED_ABI_ALIGN - 1) : 0;

	int fd = memfd_create("kcmd-feed", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	int r;
	if (ftruncate(fd, (off_t)(SHM_FEED_ABI_RING_OFF + ring)) < 0) {
		r = -errno;
		goto fail;
	}
	/* the header page only; the slot pages start zeroed (every slot free) */
	struct shm_feed_abi_header *h =
	        mmap(NULL, SHM_FEED_ABI_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED) {
		r = -errno;
		goto fail;
	}
	h->version = SHM_FEED_ABI_VERSION;
	h->header_size = sizeof(*h);
	h->ring_off = SHM_FEED_ABI_RING_OFF;
	h->ring_size = ring;
	h->max_entry = max_entry_for(ring);
	h->first_seq = first_seq;
	h->first_pos = first_pos;
	/* Nothing written yet: every position from first_pos - ring on may be overwritten. */
	atomic_store_explicit(&h->tail, first_pos - ring, memory_order_relaxed);
	atomic_store_explicit(&h->last_pos, SHM_FEED_ABI_NO_POS, memory_order_relaxed);
	atomic_store_explicit(&h->last_seq, first_seq - 1, memory_order_relaxed);
	atomic_store_explicit(&h->futex, (uint32_t)(first_seq - 1), memory_order_relaxed);
	/* release: magic last (nobody maps the feed before this function returns anyway). */
	atomic_thread_fence(memory_order_release);
	h->magic = SHM_FEED_ABI_MAGIC;
	munmap(h, SHM_FEED_ABI_PAGE);
	/* The size never changes again: a reader's mapping can never fault (F4). */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) < 0) {
		r = -errno;
		goto fail;
	}
	*ret_fd = fd;
	return 0;
fail:
	close(fd);
	return r;
}

int shm_feed_reader_fd(int fd, int *ret_fd)
{
	return shm__reopen_ro(fd, ret_fd);
}

int shm_feed_consumer_fd(int fd, int *ret_fd)
{
	char path[64];
	if (fd < 0 || !ret_fd)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	int c = open(path, O_RDWR | O_CLOEXEC);
	if (c < 0)
		return -errno;
	*ret_fd = c;
	return 0;
}

int shm_feed_version(int fd, uint32_t *ret_version)
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
	if (n != sizeof(h0) || h0.magic != SHM_FEED_ABI_MAGIC)
		return -EBADMSG;
	*ret_version = h0.version;
	return 0;
}

static int feed_map(int fd, bool writable, struct shm_feed **ret)
{
	struct stat st;
	struct shm_feed_abi_header h0;
	if (fd < 0 || !ret)
		return -EINVAL;
	if (fstat(fd, &st) < 0)
		return -errno;
	if ((uint64_t)st.st_size < SHM_FEED_ABI_RING_OFF ||
	    pread(fd, &h0, sizeof(h0), 0) != (ssize_t)sizeof(h0))
		return -EBADMSG;
	if (h0.magic != SHM_FEED_ABI_MAGIC)
		return -EBADMSG;
	if (h0.version != SHM_FEED_ABI_VERSION || h0.header_size != sizeof(h0))
		return -EPROTONOSUPPORT;
	uint64_t ring = h0.ring_size;
	if (h0.ring_off != SHM_FEED_ABI_RING_OFF || ring < SHM_FEED_ABI_MIN_RING ||
	    ring > SHM_FEED_ABI_MAX_RING || (ring & (ring - 1)) ||
	    (uint64_t)st.st_size != SHM_FEED_ABI_RING_OFF + ring ||
	    h0.max_entry != max_entry_for(ring) || h0.first_seq == 0 ||
	    h0.first_pos % SHM_FEED_ABI_ALIGN)
		return -EBADMSG;
	struct shm_feed *f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->lock_fd = -1;
	f->map_size = SHM_FEED_ABI_RING_OFF + ring;
	void *p =
	        mmap(NULL, f->map_size, PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		int r = -errno;
		free(f);
		return r;
	}
	f->map = p;
	f->hdr = p;
	f->ring = f->map + SHM_FEED_ABI_RING_OFF;
	f->ring_size = ring;
	f->mask = ring - 1;
	f->max_entry = h0.max_entry;
	f->first_seq = h0.first_seq;
	f->first_pos = h0.first_pos;
	*ret = f;
	return 0;
}

void shm_feed_close(struct shm_feed *f)
{
	if (!f)
		return;
	if (f->slot) { /* free the slot, unless the writer already took it back */
		uint64_t me = f->owner;
		if (f->named && atomic_load_explicit(&f->slot->owner, memory_order_relaxed) == me)
			atomic_store_explicit(&f->slot->name, 0, memory_order_relaxed);
		atomic_compare_exchange_strong_explicit(&f->slot->owner, &me, 0,
		                                        memory_order_release, memory_order_relaxed);
		munmap(f->slot_map, SHM_FEED_ABI_SLOTS_SIZE);
	}
	munmap(f->map, f->map_size);
	if (f->lock_fd >= 0)
		close(f->lock_fd);
	free(f->wbuf);
	free(f);
}

/* Sanity of an entry's word 1 at position p (F4): length aligned, bounded, inside the ring. */
static bool len_ok(const struct shm_feed *f, uint64_t p, uint32_t len, unsigned op)
{
	uint64_t min =
	        op == SHM_FEED_ABI_OP_PAD ? SHM_FEED_ABI_ALIGN : sizeof(struct shm_feed_abi_entry);
	if (len % SHM_FEED_ABI_ALIGN || len < min || len > f->max_entry ||
	    (p & f->mask) + len > f->ring_size)
		return false;
	/* a pad always runs to the end of the ring */
	return op != SHM_FEED_ABI_OP_PAD || (p & f->mask) + len == f->ring_size;
}

/* ---- writer --------------------------------------------------------------------------------- */
static long sys_futex(const void *uaddr, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, 0);
}

static long sys_futex_bits(const void *uaddr, int op, uint32_t val, uint32_t bits)
{
	/* FUTEX_WAIT_BITSET's timeout is absolute (CLOCK_MONOTONIC): callers pass NULL here */
	return syscall(SYS_futex, uaddr, op, val, NULL, NULL, bits);
}

static uint64_t sweep_distance(const struct shm_feed *f)
{
	if (shm_feed__test_sweep)
		return shm_feed__test_sweep;
	uint64_t d = f->ring_size / 8;
	return d > SHM_FEED_SWEEP ? SHM_FEED_SWEEP : d;
}

/* F9: a lag sweep, counted, when the writer is at least the sweep distance past the last
 * one (or a quarter ring, which is more than the distance); moves the mark. */
static bool sweep_due(struct shm_feed *f)
{
	if (f->pos - f->sweep_pos < sweep_distance(f) ||
	    (shm_feed__test_flags & SHM_FEED_TEST_WRONG_MASK))
		return false;
	f->sweep_pos = f->pos;
	f->sweeps++;
	return true;
}

/* Recovery (see "Writer killed" in shm/feed.h): find the end of what was published. */
static int writer_recover(struct shm_feed *f)
{
	struct shm_feed_abi_header *h = f->hdr;
	uint64_t tail = atomic_load_explicit(&h->tail, memory_order_relaxed);
	uint64_t lp = atomic_load_explicit(&h->last_pos, memory_order_relaxed);
	uint64_t p, s, last = SHM_FEED_ABI_NO_POS;
	if (lp == SHM_FEED_ABI_NO_POS) {
		p = f->first_pos;
		s = f->first_seq;
	} else {
		if (lp % SHM_FEED_ABI_ALIGN || (int64_t)(tail - lp) > 0)
			return -EUCLEAN;
		uint64_t w0 = atomic_load_explicit(word_at(f, lp), memory_order_relaxed);
		uint64_t w1 = atomic_load_explicit(word_at(f, lp) + 1, memory_order_relaxed);
		unsigned op = (unsigned)(w1 >> 32) & 0xff;
		if (!w0 || op == SHM_FEED_ABI_OP_PAD || !len_ok(f, lp, (uint32_t)w1, op))
			return -EUCLEAN;
		last = lp;
		p = lp + (uint32_t)w1;
		s = seq_next(w0);
	}
	/* Entries published after the hint: at most a pad and an entry (the hints are stored
	 * right after each publication). F1 guarantees word 0 at the end of the last published
	 * entry reads 0 until the next publication. */
	int steps = 0;
	for (;; steps++) {
		uint64_t w0 = atomic_load_explicit(word_at(f, p), memory_order_relaxed);
		if (w0 == 0)
			break;
		uint64_t w1 = atomic_load_explicit(word_at(f, p) + 1, memory_order_relaxed);
		unsigned op = (unsigned)(w1 >> 32) & 0xff;
		if (steps >= 3 || w0 != s || !len_ok(f, p, (uint32_t)w1, op))
			return -EUCLEAN;
		if (op == SHM_FEED_ABI_OP_PAD) {
			p += (uint32_t)w1;
			continue;
		}
		last = p;
		p += (uint32_t)w1;
		s = seq_next(s);
	}
	if ((int64_t)(p - tail) < 0 || (int64_t)(p - tail) > (int64_t)f->ring_size)
		return -EUCLEAN;
	if (last != SHM_FEED_ABI_NO_POS) { /* all three: a kill may fall between any two */
		atomic_store_explicit(&h->last_seq, seq_prev(s), memory_order_relaxed);
		/* release: pairs with seek_end's acquire load (the entry at last is published). */
		atomic_store_explicit(&h->last_pos, last, memory_order_release);
		/* release: pairs with shm_feed_wait_token's acquire load. */
		atomic_store_explicit(&h->futex, (uint32_t)seq_prev(s), memory_order_release);
	}
	f->pos = p;
	f->seq = s;
	f->tail = tail;
	/* below tail: punched or stale; above it: not known, kept (before the first entry:
	 * nothing to give back below it) */
	f->trimmed = lp == SHM_FEED_ABI_NO_POS ? f->first_pos : tail;
	atomic_fetch_add_explicit(&h->incarnation, 1, memory_order_relaxed);
	return 0;
}

int shm_feed_writer_open(int fd, struct shm_feed **ret)
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
	struct shm_feed *f;
	int r = feed_map(lfd, true, &f);
	if (r < 0) {
		close(lfd);
		return r;
	}
	f->lock_fd = lfd;
	f->writer = true;
	if ((r = writer_recover(f)) < 0) {
		shm_feed_close(f);
		return r;
	}
	f->sweep_pos = f->pos;
	/* A killed predecessor may have published without waking: wake everyone once (every
	 * bit, F9). */
	sys_futex(&f->hdr->futex, FUTEX_WAKE, INT_MAX, NULL);
	*ret = f;
	return 0;
}

/* The writer's common view of a shm_record_in and a shm_obj. */
struct view {
	unsigned kind;
	const char *ns, *name, *uid, *rv;
	const struct shm_label *labels;
	size_t n_labels;
	const struct shm_owner_ref *owners;
	size_t n_owners;
	const void *payload;
	size_t payload_len;
};

static void view_of_in(const struct shm_record_in *r, struct view *v)
{
	*v = (struct view){(unsigned)r->kind, r->ns,       r->name,   r->uid,      r->rv,
	                   r->labels,         r->n_labels, r->owners, r->n_owners, r->payload,
	                   r->payload_len};
}

static void view_of_obj(const struct shm_obj *o, struct view *v)
{
	*v = (struct view){(unsigned)o->kind, o->ns,       o->name,   o->uid,      o->rv,
	                   o->labels,         o->n_labels, o->owners, o->n_owners, o->payload,
	                   o->payload_len};
}

static int str_len(const char *s, size_t *acc)
{
	if (!s)
		return -EINVAL;
	size_t n = strlen(s);
	if (n > UINT16_MAX)
		return -EINVAL;
	*acc += n + 1;
	return (int)n;
}

/* Bytes of v's encoding (multiple of 8), or -EINVAL / -EMSGSIZE. */
static int64_t enc_size(const struct view *v)
{
	size_t acc = sizeof(struct shm_feed_abi_obj);
	if (v->payload_len > UINT32_MAX || (v->payload_len && !v->payload) || v->kind > 0xff ||
	    v->n_labels > UINT16_MAX || v->n_owners > UINT16_MAX || (v->n_labels && !v->labels) ||
	    (v->n_owners && !v->owners))
		return -EINVAL;
	acc += align_up(v->payload_len, 8);
	if (str_len(v->ns ? v->ns : "", &acc) < 0 || str_len(v->name, &acc) < 0 ||
	    str_len(v->uid, &acc) < 0 || str_len(v->rv, &acc) < 0)
		return -EINVAL;
	for (size_t i = 0; i < v->n_labels; i++)
		if (str_len(v->labels[i].key, &acc) < 0 || str_len(v->labels[i].value, &acc) < 0)
			return -EINVAL;
	for (size_t i = 0; i < v->n_owners; i++) {
		const struct shm_owner_ref *o = &v->owners[i];
		if (o->controller < -1 || o->controller > 1 || o->block_owner_deletion < -1 ||
		    o->block_owner_deletion > 1)
			return -EINVAL;
		acc += 2;
		if (str_len(o->api_version, &acc) < 0 || str_len(o->kind, &acc) < 0 ||
		    str_len(o->name, &acc) < 0 || str_len(o->uid, &acc) < 0)
			return -EINVAL;
	}
	acc = align_up(acc, 8);
	if (acc > (size_t)1 << 31)
		return -EMSGSIZE;
	return (int64_t)acc;
}

static uint8_t *put(uint8_t *d, const char *s)
{
	size_t n = strlen(s) + 1;
	memcpy(d, s, n);
	return d + n;
}

/* Write v's encoding of len bytes (from enc_size) at out, which is zeroed. */
static void enc_write(const struct view *v, uint8_t *out, size_t len)
{
	struct shm_feed_abi_obj o = {
	        .len = (uint32_t)len,
	        .payload_len = (uint32_t)v->payload_len,
	        .ns_len = (uint16_t)strlen(v->ns ? v->ns : ""),
	        .name_len = (uint16_t)strlen(v->name),
	        .uid_len = (uint16_t)strlen(v->uid),
	        .rv_len = (uint16_t)strlen(v->rv),
	        .n_labels = (uint16_t)v->n_labels,
	        .n_owners = (uint16_t)v->n_owners,
	        .kind = (uint8_t)v->kind,
	};
	memcpy(out, &o, sizeof(o));
	uint8_t *d = out + sizeof(o);
	if (v->payload_len)
		memcpy(d, v->payload, v->payload_len);
	d += align_up(v->payload_len, 8);
	d = put(d, v->ns ? v->ns : "");
	d = put(d, v->name);
	d = put(d, v->uid);
	d = put(d, v->rv);
	for (size_t i = 0; i < v->n_labels; i++) {
		d = put(d, v->labels[i].key);
		d = put(d, v->labels[i].value);
	}
	for (size_t i = 0; i < v->n_owners; i++) {
		const struct shm_owner_ref *ow = &v->owners[i];
		*d++ = (uint8_t)(ow->controller + 1);
		*d++ = (uint8_t)(ow->block_owner_deletion + 1);
		d = put(d, ow->api_version);
		d = put(d, ow->kind);
		d = put(d, ow->name);
		d = put(d, ow->uid);
	}
}

/* F2: make [.., end) writable: tail >= end - ring_size, stored before any overwrite. */
static void reserve(struct shm_feed *f, uint64_t end)
{
	uint64_t t = end - f->ring_size;
	if ((int64_t)(t - f->tail) <= 0)
		return;
	f->tail = t;
	atomic_store_explicit(&f->hdr->tail, t, memory_order_relaxed);
	/* release fence: the tail store above before every ring store below; pairs with the
	 * acquire fence in lapped() through whichever overwritten word a reader loads (F2). */
	atomic_thread_fence(memory_order_release);
}

static void store_words(struct shm_feed *f, uint64_t pos, const uint8_t *src, size_t from,
                        size_t to, bool crash_half)
{
	size_t half = from + (to - from) / 2;
	for (size_t i = from; i < to; i++) {
		if (crash_half && i == half) {
			CRASH_STEP(SHM_FEED_STEP_BODY_HALF);
			if ((shm_feed__test_flags &
			     (SHM_FEED_TEST_EARLY_PUBLISH | SHM_FEED_TEST_SLOW_COPY)) ==
			    (SHM_FEED_TEST_EARLY_PUBLISH | SHM_FEED_TEST_SLOW_COPY))
				test_pause();
		}
		uint64_t w;
		memcpy(&w, src + 8 * i, 8);
		atomic_store_explicit(word_at(f, pos) + i, w, memory_order_relaxed);
	}
}

int shm_feed_publish(struct shm_feed *f, const struct shm_feed_pub *pub, uint64_t *ret_seq)
{
	if (!f || !f->writer || !pub)
		return -EINVAL;
	bool is_del = pub->op == SHM_FEED_DELETE;
	if (pub->op < SHM_FEED_ADD || pub->op > SHM_FEED_DELETE ||
	    (pub->flags & ~SHM_FEED_ABI_F_ALL) ||
	    ((pub->flags & SHM_FEED_TOMBSTONE) && (!is_del || !pub->old_obj)) ||
	    ((pub->flags & SHM_FEED_DROPPED) && !is_del) ||
	    (is_del ? pub->new_obj != NULL : pub->new_obj == NULL) ||
	    (pub->op == SHM_FEED_ADD && pub->old_obj))
		return -EINVAL;
	struct view nv, ov;
	int64_t nl = 0, ol = 0;
	if (pub->new_obj) {
		view_of_in(pub->new_obj, &nv);
		if ((nl = enc_size(&nv)) < 0)
			return (int)nl;
	}
	if (pub->old_obj) {
		view_of_obj(pub->old_obj, &ov);
		if ((ol = enc_size(&ov)) < 0)
			return (int)ol;
	}
	uint64_t len = align_up(sizeof(struct shm_feed_abi_entry) + (uint64_t)nl + (uint64_t)ol,
	                        SHM_FEED_ABI_ALIGN);
	if (len > f->max_entry)
		return -EMSGSIZE;
	if (f->wcap < len) {
		uint8_t *b = realloc(f->wbuf, len);
		if (!b)
			return -ENOMEM;
		f->wbuf = b;
		f->wcap = len;
	}
	memset(f->wbuf, 0, len);
	uint64_t s = f->seq, p = f->pos;
	struct shm_feed_abi_entry e = {
	        .len = (uint32_t)len,
	        .op = (uint8_t)pub->op,
	        .flags = pub->flags,
	        .type = pub->type,
	        .handle = pub->handle,
	        .new_len = (uint32_t)nl,
	        .old_len = (uint32_t)ol,
	        .arena_seq = pub->arena_seq,
	};
	memcpy(f->wbuf, &e, sizeof(e));
	if (nl)
		enc_write(&nv, f->wbuf + sizeof(e), (size_t)nl);
	if (ol)
		enc_write(&ov, f->wbuf + sizeof(e) + nl, (size_t)ol);

	/* An entry never straddles the end of the ring: pad to the end first. */
	uint64_t pad = (p & f->mask) + len > f->ring_size ? f->ring_size - (p & f->mask) : 0;
	/* F2: everything this call stores, up to and including the next entry's word 0. */
	reserve(f, p + pad + len + SHM_FEED_ABI_ALIGN);
	CRASH_STEP(SHM_FEED_STEP_TAIL);
	if (pad) {
		atomic_store_explicit(word_at(f, p) + 1,
		                      entry_word1((uint32_t)pad, SHM_FEED_ABI_OP_PAD, 0, 0),
		                      memory_order_relaxed);
		CRASH_STEP(SHM_FEED_STEP_PAD_HDR);
		atomic_store_explicit(word_at(f, p + pad), 0, memory_order_relaxed);
		/* release: the pad's word 1 and the cleared word 0 at ring offset 0 before the
		 * pad's seq (F1); pairs with the acquire load of word 0 in shm_feed_next. */
		atomic_store_explicit(word_at(f, p), s, memory_order_release);
		atomic_fetch_add_explicit(&f->hdr->pads, 1, memory_order_relaxed);
		CRASH_STEP(SHM_FEED_STEP_PAD_PUBLISHED);
		p += pad;
	}
	if (shm_feed__test_flags & SHM_FEED_TEST_EARLY_PUBLISH) /* negative control: F1 broken */
		atomic_store_explicit(word_at(f, p), s, memory_order_release);
	store_words(f, p, f->wbuf, 1, len / 8, true);
	atomic_store_explicit(word_at(f, p + len), 0, memory_order_relaxed);
	CRASH_STEP(SHM_FEED_STEP_BODY);
	/* release: words 1.. and the next entry's cleared word 0 before the seq (F1); pairs with
	 * the acquire load of word 0 in shm_feed_next and seek_end. The publication. */
	atomic_store_explicit(word_at(f, p), s, memory_order_release);
	CRASH_STEP(SHM_FEED_STEP_PUBLISHED);
	atomic_store_explicit(&f->hdr->last_seq, s, memory_order_relaxed);
	/* release: the entry's seq before the hint; pairs with seek_end's acquire load. */
	atomic_store_explicit(&f->hdr->last_pos, p, memory_order_release);
	atomic_fetch_add_explicit(&f->hdr->published, 1, memory_order_relaxed);
	CRASH_STEP(SHM_FEED_STEP_HINT_POS);
	/* release: the publication before the futex word moves; pairs with the acquire load in
	 * shm_feed_wait_token (a token that shows s implies word 0 == s is visible). */
	atomic_store_explicit(&f->hdr->futex, (uint32_t)s, memory_order_release);
	CRASH_STEP(SHM_FEED_STEP_HINTS);
	f->pos = p + len;
	f->seq = seq_next(s);
	f->wake_bits |= pub->wake ? pub->wake : SHM_FEED_WAKE_ALL;
	if (ret_seq)
		*ret_seq = s;
	/* F9 (c): a batch that takes the writer a quarter ring past the last sweep wakes every
	 * consumer now, not at its end: a consumer asleep through other classes is lapped by no
	 * batch that would not have lapped it before F9. */
	if (f->pos - f->sweep_pos >= f->ring_size / 4 && sweep_due(f))
		sys_futex_bits(&f->hdr->futex, FUTEX_WAKE_BITSET, INT_MAX, SHM_FEED_WAKE_ALL);
	return 0;
}

/* ---- giving ring pages back (F7) ------------------------------------------------------------ */
static bool pid_alive(uint32_t pid)
{
	return pid && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

static uint64_t trim_chunk(const struct shm_feed *f)
{
	if (shm_feed__test_trim_chunk)
		return shm_feed__test_trim_chunk;
	uint64_t c = f->ring_size / 16;
	return c > SHM_FEED_TRIM_CHUNK ? SHM_FEED_TRIM_CHUNK : c;
}

/* Punch the ring bytes of absolute positions [a, b) (page-aligned, b - a <= ring_size) out of
 * the memfd: they read as zeros afterwards, and their pages are free until written again. */
static int punch(struct shm_feed *f, uint64_t a, uint64_t b)
{
	while (a != b) {
		uint64_t off = a & f->mask, n = b - a;
		if (n > f->ring_size - off)
			n = f->ring_size - off;
		if (fallocate(f->lock_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		              (off_t)(SHM_FEED_ABI_RING_OFF + off), (off_t)n) < 0)
			return -errno;
		a += n;
	}
	return 0;
}

int64_t shm_feed_trim(struct shm_feed *f)
{
	const uint64_t page = SHM_FEED_ABI_PAGE;
	if (!f || !f->writer)
		return -EINVAL;
	uint64_t lp = atomic_load_explicit(&f->hdr->last_pos, memory_order_relaxed);
	if (f->trim_off || lp == SHM_FEED_ABI_NO_POS)
		return 0;
	/* [start, limit): below the newest entry (seek_end and recovery read it), at or above
	 * tail (below it the ring bytes already belong to later positions), whole pages. */
	uint64_t start = (int64_t)(f->trimmed - f->tail) > 0 ? f->trimmed : f->tail;
	/* and positions whose ring bytes still hold their own data, not a later lap's (tail may
	 * be lower, before the first lap) */
	uint64_t own = f->pos + SHM_FEED_ABI_ALIGN - f->ring_size;
	if ((int64_t)(own - start) > 0)
		start = own;
	start = (start + page - 1) & ~(page - 1);
	uint64_t limit = lp & ~(page - 1), chunk = trim_chunk(f);
	if ((int64_t)(limit - start) < (int64_t)chunk)
		return 0;
	const struct shm_feed_abi_slot *slots = (const void *)(f->map + SHM_FEED_ABI_SLOTS_OFF);
	for (unsigned i = 0;
	     i < SHM_FEED_ABI_SLOTS && !(shm_feed__test_flags & SHM_FEED_TEST_TRIM_ALL); i++) {
		struct shm_feed_abi_slot *sl = (struct shm_feed_abi_slot *)&slots[i];
		uint64_t owner = atomic_load_explicit(&sl->owner, memory_order_acquire);
		if (!owner)
			continue;
		uint64_t c = atomic_load_explicit(&sl->pos, memory_order_acquire);
		/* a lapped consumer reads nothing more here before its seek; a position past the
		 * newest entry protects nothing below it */
		if ((int64_t)(c - f->tail) < 0 || (int64_t)(c - limit) >= 0)
			continue;
		c &= ~(page - 1);
		if ((int64_t)(c - start) < (int64_t)chunk &&
		    !atomic_load_explicit(&sl->name, memory_order_relaxed) &&
		    !pid_alive((uint32_t)owner)) {
			/* a dead consumer's slot: free it (its position protects nobody); a named
			 * one waits for its next process (F8) */
			atomic_compare_exchange_strong_explicit(
			        &sl->owner, &owner, 0, memory_order_relaxed, memory_order_relaxed);
			continue;
		}
		if ((int64_t)(c - limit) < 0)
			limit = c;
	}
	if ((int64_t)(limit - start) < (int64_t)chunk)
		return 0;
	/* F7: tail first (readers of [start, limit) report a lap), then the punch. The fence
	 * orders the tail store before the system call; a reader that loaded a zero of the punch
	 * took the page fault after the kernel unmapped the page, which the punch did after this
	 * store, so its later acquire fence + tail load sees it (lapped()). */
	if (!(shm_feed__test_flags & SHM_FEED_TEST_TRIM_NO_TAIL)) {
		f->tail = limit;
		atomic_store_explicit(&f->hdr->tail, limit, memory_order_relaxed);
		atomic_thread_fence(memory_order_seq_cst);
	}
	int r = punch(f, start, limit);
	if (r < 0) {
		f->trim_off = true; /* the pages stay; tail moved: at most one early lap */
		return r;
	}
	f->trimmed = limit;
	atomic_fetch_add_explicit(&f->hdr->trimmed, limit - start, memory_order_relaxed);
	return (int64_t)(limit - start);
}

uint32_t shm_feed_take_wake(struct shm_feed *f)
{
	if (!f || !f->writer || !f->wake_bits)
		return 0;
	uint32_t m = f->wake_bits;
	f->wake_bits = 0;
	if (shm_feed__test_flags & SHM_FEED_TEST_WRONG_MASK) /* negative control: F9 broken */
		m = ~m & ~SHM_FEED_WAKE_CONTROL ? ~m & ~SHM_FEED_WAKE_CONTROL : 1;
	if (sweep_due(f)) /* F9 (b) */
		m = SHM_FEED_WAKE_ALL;
	(void)shm_feed_trim(f); /* once per batch, as the wake */
	return m;
}

int shm_feed_wake(struct shm_feed *f)
{
	uint32_t m = shm_feed_take_wake(f);
	if (!m)
		return 0;
	long r = sys_futex_bits(&f->hdr->futex, FUTEX_WAKE_BITSET, INT_MAX, m);
	return r < 0 ? -errno : (int)r;
}

uint32_t shm_feed_wake_bit(const char *resource)
{
	/* FNV-1a of the plural name, mod 31: the same class in every process and release (the
	 * classes are no ABI: both sides are one build). NULL or "*": every class. */
	if (!resource || !strcmp(resource, "*"))
		return SHM_FEED_WAKE_ALL;
	uint32_t h = UINT32_C(2166136261);
	for (const unsigned char *p = (const unsigned char *)resource; *p; p++)
		h = (h ^ *p) * UINT32_C(16777619);
	return UINT32_C(1) << (h % 31);
}

void shm_feed_set_interest(struct shm_feed *f, uint32_t mask)
{
	if (f && !f->writer)
		f->interest = mask ? mask | SHM_FEED_WAKE_CONTROL : SHM_FEED_WAKE_ALL;
}

void shm_feed_set_type_filter(struct shm_feed *f, bool (*want)(uint16_t type, void *ud), void *ud)
{
	if (f && !f->writer) {
		f->want = want;
		f->want_ud = ud;
	}
}

uint32_t shm_feed_interest(const struct shm_feed *f)
{
	return f && f->interest ? f->interest : SHM_FEED_WAKE_ALL;
}

/* ---- consumers ------------------------------------------------------------------------------ */
/* F7: take a free slot, else a dead process's; none (or a read-only fd): unregistered. */
static void slot_claim(struct shm_feed *f, int fd)
{
	static _Atomic uint32_t nonce;
	void *m = mmap(NULL, SHM_FEED_ABI_SLOTS_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
	               SHM_FEED_ABI_SLOTS_OFF);
	if (m == MAP_FAILED)
		return;
	struct shm_feed_abi_slot *slots = m;
	uint64_t me = (uint64_t)(uint32_t)getpid() |
	              (uint64_t)(atomic_fetch_add_explicit(&nonce, 1, memory_order_relaxed) + 1)
	                      << 32;
	for (int pass = 0; pass < 2; pass++)
		for (unsigned i = 0; i < SHM_FEED_ABI_SLOTS; i++) {
			uint64_t o = atomic_load_explicit(&slots[i].owner, memory_order_relaxed);
			if (pass == 0
			            ? o != 0
			            : (o == 0 || pid_alive((uint32_t)o) ||
			               atomic_load_explicit(&slots[i].name, memory_order_relaxed)))
				continue;
			if (!atomic_compare_exchange_strong_explicit(&slots[i].owner, &o, me,
			                                             memory_order_acq_rel,
			                                             memory_order_relaxed))
				continue;
			/* until seek_end stores the real one: the oldest position still valid */
			atomic_store_explicit(
			        &slots[i].pos,
			        atomic_load_explicit(&f->hdr->tail, memory_order_relaxed),
			        memory_order_relaxed);
			atomic_store_explicit(&slots[i].name, 0, memory_order_relaxed);
			f->slot = &slots[i];
			f->slot_map = m;
			f->owner = me;
			return;
		}
	munmap(m, SHM_FEED_ABI_SLOTS_SIZE);
}

/* F7: publish the position of the next read (advisory for the writer's trim). */
static inline void slot_publish(struct shm_feed *f)
{
	if (f->slot && !f->named)
		atomic_store_explicit(&f->slot->pos, f->pos, memory_order_release);
}

static bool lapped(const struct shm_feed *f, uint64_t p);

/* F8: {pos, seq} into the copy the next count selects, then the count (release), then pos. */
static void commit_now(struct shm_feed *f)
{
	struct shm_feed_abi_slot *sl = f->slot;
	uint64_t c = atomic_load_explicit(&sl->commits, memory_order_relaxed); /* ours alone */
	unsigned k = (unsigned)((c + 1) & 1);
	atomic_store_explicit(&sl->commit[k].pos, f->pos, memory_order_relaxed);
	atomic_store_explicit(&sl->commit[k].seq, f->seq, memory_order_relaxed);
	atomic_store_explicit(&sl->commits, c + 1, memory_order_release);
	atomic_store_explicit(&sl->pos, f->pos, memory_order_release);
}

void shm_feed_commit(struct shm_feed *f)
{
	if (f && !f->writer && f->slot && f->named && !f->lapped)
		commit_now(f);
}

static uint64_t name_hash(const char *name)
{
	uint64_t h = UINT64_C(1469598103934665603);
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * UINT64_C(1099511628211);
	return h ? h : 1;
}

/* F8: the slot named h (its previous process dead), else a free slot, else a dead anonymous
 * one, which is then named h. *have: the previous process committed {*rpos, *rseq}. False: no
 * slot (a live process holds the name, or every slot is taken). */
static bool named_claim(struct shm_feed *f, int fd, uint64_t h, bool *have, uint64_t *rpos,
                        uint64_t *rseq)
{
	static _Atomic uint32_t nonce;
	void *m = mmap(NULL, SHM_FEED_ABI_SLOTS_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
	               SHM_FEED_ABI_SLOTS_OFF);
	if (m == MAP_FAILED)
		return false;
	struct shm_feed_abi_slot *slots = m;
	uint64_t me = (uint64_t)(uint32_t)getpid() |
	              (uint64_t)(atomic_fetch_add_explicit(&nonce, 1, memory_order_relaxed) + 1)
	                      << 32;
	*have = false;
	for (unsigned i = 0; i < SHM_FEED_ABI_SLOTS; i++) {
		struct shm_feed_abi_slot *sl = &slots[i];
		if (atomic_load_explicit(&sl->name, memory_order_relaxed) != h)
			continue;
		uint64_t o = atomic_load_explicit(&sl->owner, memory_order_acquire);
		if (o && pid_alive((uint32_t)o))
			goto none; /* its process lives: one process per name */
		if (!atomic_compare_exchange_strong_explicit(
		            &sl->owner, &o, me, memory_order_acq_rel, memory_order_relaxed))
			continue;
		if (atomic_load_explicit(&sl->name, memory_order_relaxed) == h) {
			uint64_t c = atomic_load_explicit(&sl->commits, memory_order_acquire);
			if (c) {
				*rpos = atomic_load_explicit(&sl->commit[c & 1].pos,
				                             memory_order_relaxed);
				*rseq = atomic_load_explicit(&sl->commit[c & 1].seq,
				                             memory_order_relaxed);
				*have = true;
			}
		}
		goto claimed;
	}
	for (int pass = 0; pass < 2; pass++)
		for (unsigned i = 0; i < SHM_FEED_ABI_SLOTS; i++) {
			struct shm_feed_abi_slot *sl = &slots[i];
			uint64_t o = atomic_load_explicit(&sl->owner, memory_order_relaxed);
			if (pass == 0 ? o != 0
			              : (o == 0 || pid_alive((uint32_t)o) ||
			                 atomic_load_explicit(&sl->name, memory_order_relaxed)))
				continue;
			if (!atomic_compare_exchange_strong_explicit(
			            &sl->owner, &o, me, memory_order_acq_rel, memory_order_relaxed))
				continue;
			atomic_store_explicit(
			        &sl->pos, atomic_load_explicit(&f->hdr->tail, memory_order_relaxed),
			        memory_order_relaxed);
			atomic_store_explicit(&sl->commits, 0, memory_order_relaxed);
			atomic_store_explicit(&sl->name, h, memory_order_release);
			f->slot = sl;
			goto claimed_slot;
		}
none:
	munmap(m, SHM_FEED_ABI_SLOTS_SIZE);
	return false;
claimed:
	for (unsigned i = 0; i < SHM_FEED_ABI_SLOTS; i++)
		if (atomic_load_explicit(&slots[i].owner, memory_order_relaxed) == me)
			f->slot = &slots[i];
claimed_slot:
	atomic_store_explicit(&f->slot->name, h, memory_order_relaxed);
	f->slot_map = m;
	f->owner = me;
	f->named = true;
	return true;
}

/* F8: start at a committed {pos, seq} if the ring still holds it. 0, or -ESTALE (refused). */
static int try_resume(struct shm_feed *f, uint64_t pos, uint64_t seq)
{
	if (pos % SHM_FEED_ABI_ALIGN || seq == 0)
		return -ESTALE;
	/* F7: protect the pages first, then check that tail has not passed pos */
	atomic_store_explicit(&f->slot->pos, pos, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	for (int i = 0; i < SHM_FEED_SEEK_RETRIES; i++) {
		uint64_t w0 = atomic_load_explicit(word_at(f, pos), memory_order_acquire);
		if (lapped(f, pos))
			return -ESTALE;
		if (w0 == seq)
			goto ok; /* the entry (or pad) it had not handled */
		if (w0 != 0)
			return -ESTALE; /* another entry: a torn or foreign pair */
		/* nothing at pos yet: valid only as the end of the newest entry */
		uint64_t lp = atomic_load_explicit(&f->hdr->last_pos, memory_order_acquire);
		if (lp == SHM_FEED_ABI_NO_POS) {
			if (pos == f->first_pos && seq == f->first_seq)
				goto ok;
			return -ESTALE;
		}
		if (lp % SHM_FEED_ABI_ALIGN)
			return -ESTALE;
		uint64_t lw0 = atomic_load_explicit(word_at(f, lp), memory_order_acquire);
		uint64_t lw1 = atomic_load_explicit(word_at(f, lp) + 1, memory_order_relaxed);
		if (lapped(f, lp))
			return -ESTALE;
		if (lp + (uint32_t)lw1 == pos)
			return lw0 && seq_next(lw0) == seq
			               ? (f->pos = pos, f->seq = seq, f->lapped = false, 0)
			               : -ESTALE;
		if ((int64_t)(lp - pos) < 0)
			return -ESTALE; /* beyond the end: not a position of this ring */
		/* published at or after pos since the first load: look again */
	}
	return -ESTALE;
ok:
	f->pos = pos;
	f->seq = seq;
	f->lapped = false;
	return 0;
}

int shm_feed_consumer_open(int fd, const char *name, struct shm_feed **ret, bool *ret_resumed)
{
	size_t nl = name ? strnlen(name, 256) : 0;
	if (!ret || nl == 0 || nl > 255)
		return -EINVAL;
	struct shm_feed *f;
	int r = feed_map(fd, false, &f);
	if (r < 0)
		return r;
	bool have = false, resumed = false;
	uint64_t pos = 0, seq = 0;
	if (!named_claim(f, fd, name_hash(name), &have, &pos, &seq))
		slot_claim(f, fd); /* anonymous: never resumed */
	if (f->named && have && !(shm_feed__test_flags & SHM_FEED_TEST_NO_RESUME))
		resumed = try_resume(f, pos, seq) == 0;
	f->resume = !f->named ? 0 : resumed ? 1 : have ? 2 : 0;
	if (resumed)
		commit_now(f); /* the pair again, in this process's copy */
	else if ((r = shm_feed_seek_end(f, NULL)) < 0) {
		shm_feed_close(f);
		return r;
	}
	if (ret_resumed)
		*ret_resumed = resumed;
	*ret = f;
	return 0;
}

int shm_feed_reader_open(int fd, struct shm_feed **ret)
{
	struct shm_feed *f;
	int r = feed_map(fd, false, &f);
	if (r < 0)
		return r;
	slot_claim(f, fd);
	if ((r = shm_feed_seek_end(f, NULL)) < 0) {
		shm_feed_close(f);
		return r;
	}
	*ret = f;
	return 0;
}

/* F2: true if the writer may have overwritten anything at or after p. */
static bool lapped(const struct shm_feed *f, uint64_t p)
{
	/* acquire fence: every ring load above happens before the tail load; pairs with the
	 * release fence in reserve(). */
	atomic_thread_fence(memory_order_acquire);
	uint64_t t = atomic_load_explicit(&f->hdr->tail, memory_order_relaxed);
	return (int64_t)(t - p) > 0;
}

int shm_feed_seek_end(struct shm_feed *f, uint64_t *ret_next_seq)
{
	if (!f || f->writer)
		return -EINVAL;
	for (int i = 0; i < SHM_FEED_SEEK_RETRIES; i++) {
		/* acquire: pairs with the release store of last_pos in publish/recovery. */
		uint64_t lp = atomic_load_explicit(&f->hdr->last_pos, memory_order_acquire);
		if (lp == SHM_FEED_ABI_NO_POS) {
			f->pos = f->first_pos;
			f->seq = f->first_seq;
		} else {
			if (lp % SHM_FEED_ABI_ALIGN)
				return -EBADMSG;
			uint64_t w0 = atomic_load_explicit(word_at(f, lp), memory_order_acquire);
			uint64_t w1 =
			        atomic_load_explicit(word_at(f, lp) + 1, memory_order_relaxed);
			if (lapped(f, lp))
				continue;
			unsigned op = (unsigned)(w1 >> 32) & 0xff;
			if (!w0 || op == SHM_FEED_ABI_OP_PAD || !len_ok(f, lp, (uint32_t)w1, op))
				return -EBADMSG;
			f->pos = lp + (uint32_t)w1;
			f->seq = seq_next(w0);
		}
		/* F7: the new position before the next read; a trim that did not see it moved
		 * tail first, which this check (or the first read) then reports. A durable
		 * consumer's seek is a commit (F8): what it skipped, it handled otherwise. */
		if (f->named)
			commit_now(f);
		else
			slot_publish(f);
		atomic_thread_fence(memory_order_seq_cst);
		if (lapped(f, lp == SHM_FEED_ABI_NO_POS ? f->pos : lp))
			continue;
		f->lapped = false;
		if (ret_next_seq)
			*ret_next_seq = f->seq;
		return 0;
	}
	return -EAGAIN;
}

static int ev_reserve(struct shm_feed_event *ev, size_t n)
{
	if (ev->cap_ >= n)
		return 0;
	size_t c = ev->cap_ ? ev->cap_ : 1024;
	while (c < n)
		c *= 2;
	uint8_t *p = realloc(ev->buf_, c);
	if (!p)
		return -ENOMEM;
	ev->buf_ = p;
	ev->cap_ = c;
	return 0;
}

void shm_feed_event_release(struct shm_feed_event *ev)
{
	if (!ev)
		return;
	free(ev->buf_);
	*ev = (struct shm_feed_event){0};
}

/* A NUL-terminated string of exactly n bytes at b[*cur] within len: returns it, or NULL. */
static const char *get_n(const uint8_t *b, size_t len, size_t *cur, size_t n)
{
	if (*cur > len || n >= len - *cur || b[*cur + n] != 0)
		return NULL;
	const char *s = (const char *)b + *cur;
	*cur += n + 1;
	return s;
}

static const char *get_s(const uint8_t *b, size_t len, size_t *cur)
{
	if (*cur >= len)
		return NULL;
	const uint8_t *z = memchr(b + *cur, 0, len - *cur);
	if (!z)
		return NULL;
	const char *s = (const char *)b + *cur;
	*cur = (size_t)(z - b) + 1;
	return s;
}

/* Decode one object encoding at b (len bytes, from the private copy) into o, with its label
 * and owner arrays at the given memory. -EBADMSG if anything is out of bounds (F4). */
static int dec_obj(const uint8_t *b, size_t len, struct shm_obj *o, struct shm_label *labels,
                   struct shm_owner_ref *owners)
{
	struct shm_feed_abi_obj h;
	if (len < sizeof(h))
		return -EBADMSG;
	memcpy(&h, b, sizeof(h));
	if (h.len != len || h.payload_len > len - sizeof(h))
		return -EBADMSG;
	size_t cur = sizeof(h) + align_up(h.payload_len, 8);
	*o = (struct shm_obj){0};
	o->kind = (enum shm_record_kind)h.kind;
	o->payload = h.payload_len ? b + sizeof(h) : NULL;
	o->payload_len = h.payload_len;
	if (!(o->ns = get_n(b, len, &cur, h.ns_len)) ||
	    !(o->name = get_n(b, len, &cur, h.name_len)) ||
	    !(o->uid = get_n(b, len, &cur, h.uid_len)) || !(o->rv = get_n(b, len, &cur, h.rv_len)))
		return -EBADMSG;
	for (size_t i = 0; i < h.n_labels; i++)
		if (!(labels[i].key = get_s(b, len, &cur)) ||
		    !(labels[i].value = get_s(b, len, &cur)))
			return -EBADMSG;
	for (size_t i = 0; i < h.n_owners; i++) {
		struct shm_owner_ref *w = &owners[i];
		if (cur + 2 > len || b[cur] > 2 || b[cur + 1] > 2)
			return -EBADMSG;
		w->controller = (int8_t)(b[cur] - 1);
		w->block_owner_deletion = (int8_t)(b[cur + 1] - 1);
		cur += 2;
		if (!(w->api_version = get_s(b, len, &cur)) || !(w->kind = get_s(b, len, &cur)) ||
		    !(w->name = get_s(b, len, &cur)) || !(w->uid = get_s(b, len, &cur)))
			return -EBADMSG;
	}
	o->labels = h.n_labels ? labels : NULL;
	o->n_labels = h.n_labels;
	o->owners = h.n_owners ? owners : NULL;
	o->n_owners = h.n_owners;
	return 0;
}

static void obj_counts(const uint8_t *b, size_t len, size_t *nl, size_t *no)
{
	struct shm_feed_abi_obj h;
	*nl = *no = 0;
	if (len < sizeof(h))
		return;
	memcpy(&h, b, sizeof(h));
	*nl = h.n_labels;
	*no = h.n_owners;
}

/* Decode the private copy of an entry (len bytes at ev->buf_) into ev. */
static int dec_entry(struct shm_feed_event *ev, uint64_t seq, size_t len)
{
	struct shm_feed_abi_entry e;
	memcpy(&e, ev->buf_, sizeof(e));
	bool is_del = e.op == SHM_FEED_ABI_OP_DELETE;
	if (e.len != len || e.op < SHM_FEED_ABI_OP_ADD || e.op > SHM_FEED_ABI_OP_DELETE ||
	    (e.flags & ~SHM_FEED_ABI_F_ALL) || (uint64_t)e.new_len + e.old_len > len - sizeof(e) ||
	    (is_del ? e.new_len != 0 : e.new_len == 0) || e.new_len % 8 || e.old_len % 8)
		return -EBADMSG;
	size_t nl1, no1, nl2, no2;
	const size_t noff = sizeof(e), ooff = sizeof(e) + e.new_len;
	obj_counts(ev->buf_ + noff, e.new_len, &nl1, &no1);
	obj_counts(ev->buf_ + ooff, e.old_len, &nl2, &no2);
	size_t arr = align_up(len, 16);
	size_t need = arr + (nl1 + nl2) * sizeof(struct shm_label) +
	              (no1 + no2) * sizeof(struct shm_owner_ref);
	if (ev_reserve(ev, need) < 0)
		return -ENOMEM;
	struct shm_label *l1 = (struct shm_label *)(ev->buf_ + arr), *l2 = l1 + nl1;
	struct shm_owner_ref *o1 = (struct shm_owner_ref *)(l2 + nl2), *o2 = o1 + no1;
	ev->seq = seq;
	ev->op = (enum shm_feed_op)e.op;
	ev->flags = e.flags;
	ev->type = e.type;
	ev->handle = e.handle;
	ev->arena_seq = e.arena_seq;
	ev->new_obj = ev->old_obj = NULL;
	if (e.new_len) {
		if (dec_obj(ev->buf_ + noff, e.new_len, &ev->n_, l1, o1) < 0)
			return -EBADMSG;
		ev->n_.type = e.type;
		ev->n_.handle = e.handle;
		ev->new_obj = &ev->n_;
	}
	if (e.old_len) {
		if (dec_obj(ev->buf_ + ooff, e.old_len, &ev->o_, l2, o2) < 0)
			return -EBADMSG;
		ev->o_.type = e.type;
		ev->o_.handle = e.handle;
		ev->old_obj = &ev->o_;
	}
	if (e.op == SHM_FEED_ABI_OP_ADD && ev->old_obj)
		return -EBADMSG;
	return 0;
}

int shm_feed_next(struct shm_feed *f, struct shm_feed_event *ev)
{
	if (!f || f->writer || !ev)
		return -EINVAL;
	if (f->lapped)
		return -ESTALE;
	for (int pads = 0; pads < 2;) {
		uint64_t p = f->pos, s = f->seq;
		_Atomic uint64_t *w = word_at(f, p);
		/* acquire: pairs with the release store of word 0 in publish (F1): the entry's
		 * words 1.. and the next entry's cleared word 0 are visible. */
		uint64_t w0 = atomic_load_explicit(w, memory_order_acquire);
		if (w0 != s) {
			if (lapped(f, p)) {
				f->lapped = true;
				return -ESTALE;
			}
			/* F1: not lapped, so word 0 holds the 0 stored before entry s-1 was
			 * published; anything else is corruption. */
			return w0 == 0 ? 0 : -EBADMSG;
		}
		uint64_t w1 = atomic_load_explicit(w + 1, memory_order_relaxed);
		uint32_t len = (uint32_t)w1;
		unsigned op = (unsigned)(w1 >> 32) & 0xff;
		if (!len_ok(f, p, len, op)) {
			if (lapped(f, p)) {
				f->lapped = true;
				return -ESTALE;
			}
			return -EBADMSG;
		}
		if (op == SHM_FEED_ABI_OP_PAD) {
			if (lapped(f, p)) { /* the pad's word 1 may belong to a later lap */
				f->lapped = true;
				return -ESTALE;
			}
			f->pos = p + len;
			slot_publish(f);
			pads++;
			continue;
		}
		if (f->want && !f->want((uint16_t)(w1 >> 48), f->want_ud)) {
			/* F9: stepped over as a pad is: its word 1 (len, type) is exact only if
			 * the writer did not pass p meanwhile (F2) */
			if (lapped(f, p)) {
				f->lapped = true;
				return -ESTALE;
			}
			f->pos = p + len;
			f->seq = seq_next(s);
			slot_publish(f);
			pads = 0;
			continue;
		}
		if (ev_reserve(ev, len) < 0)
			return -ENOMEM;
		/* The copy: relaxed word loads (Boehm), validated below. */
		memcpy(ev->buf_, &w0, 8);
		size_t nw = len / 8, half = nw / 2;
		for (size_t i = 1; i < nw; i++) {
			if (i == half && (shm_feed__test_flags & SHM_FEED_TEST_SLOW_COPY))
				test_pause();
			uint64_t v = atomic_load_explicit(w + i, memory_order_relaxed);
			memcpy(ev->buf_ + 8 * i, &v, 8);
		}
		/* F2: the copy is exact unless the writer passed p meanwhile. */
		if (!(shm_feed__test_flags & SHM_FEED_TEST_NO_VALIDATE) && lapped(f, p)) {
			f->lapped = true;
			return -ESTALE;
		}
		int r = dec_entry(ev, s, len);
		if (r < 0)
			return r;
		f->pos = p + len;
		f->seq = seq_next(s);
		slot_publish(f);
		return 1;
	}
	return -EBADMSG; /* two pads in a row */
}

int shm_feed_drain(struct shm_feed *f, size_t max, shm_feed_fn fn, void *userdata)
{
	if (!f || !fn)
		return -EINVAL;
	struct shm_feed_event ev = SHM_FEED_EVENT_INIT;
	int n = 0, r = 0;
	bool fn_failed = false;
	while ((max == 0 || (size_t)n < max) && n < INT_MAX) {
		r = shm_feed_next(f, &ev);
		if (r <= 0)
			break;
		n++;
		if ((r = fn(&ev, userdata)) < 0) {
			fn_failed = true;
			break;
		}
		r = 0;
	}
	shm_feed_event_release(&ev);
	/* fn's error always; the feed's only if nothing was delivered (the next call repeats
	 * it: a lap is sticky, a corrupt or unreadable entry stays where it is). */
	if (r < 0 && (fn_failed || n == 0))
		return r;
	return n;
}

uint64_t shm_feed_position(const struct shm_feed *f)
{
	return f ? f->seq : 0;
}

uint64_t shm_feed_lag(const struct shm_feed *f)
{
	if (!f)
		return 0;
	uint64_t last = atomic_load_explicit(&f->hdr->last_seq, memory_order_relaxed);
	int64_t d = (int64_t)(last + 1 - f->seq);
	return d > 0 ? (uint64_t)d : 0;
}

int shm_feed_pending(const struct shm_feed *f)
{
	if (!f || f->writer)
		return -EINVAL;
	if (f->lapped)
		return 1;
	/* acquire: as in shm_feed_next. */
	uint64_t w0 = atomic_load_explicit(word_at(f, f->pos), memory_order_acquire);
	return w0 != 0 || lapped(f, f->pos);
}

uint32_t shm_feed_wait_token(const struct shm_feed *f)
{
	/* acquire: pairs with the release store of the futex word in publish. */
	return atomic_load_explicit(&f->hdr->futex, memory_order_acquire);
}

const uint32_t *shm_feed_futex_word(const struct shm_feed *f)
{
	return (const uint32_t *)&f->hdr->futex;
}

int shm_feed_wait(const struct shm_feed *f, uint32_t token, uint64_t timeout_usec)
{
	if (!f)
		return -EINVAL;
	struct timespec ts, *tsp = NULL;
	if (timeout_usec != UINT64_MAX) {
		ts.tv_sec = (time_t)(timeout_usec / 1000000);
		ts.tv_nsec = (long)(timeout_usec % 1000000) * 1000;
		tsp = &ts;
	}
	/* FUTEX_WAIT_BITSET's timeout is absolute */
	if (tsp) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		ts.tv_sec += now.tv_sec;
		ts.tv_nsec += now.tv_nsec;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
	}
	/* Shared futex (no FUTEX_PRIVATE_FLAG): keyed by the memfd's inode and offset. The
	 * interest as the bitset (F9): only wakes whose mask meets it end the wait. */
	if (syscall(SYS_futex, &f->hdr->futex, FUTEX_WAIT_BITSET, token, tsp, NULL,
	            shm_feed_interest(f)) < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	return 0;
}

int shm_feed_stats(const struct shm_feed *f, struct shm_feed_stats *ret)
{
	if (!f || !ret)
		return -EINVAL;
	const struct shm_feed_abi_header *h = f->hdr;
	*ret = (struct shm_feed_stats){
	        .ring_size = f->ring_size,
	        .max_entry = f->max_entry,
	        .incarnation = atomic_load_explicit(&h->incarnation, memory_order_relaxed),
	        .last_seq = atomic_load_explicit(&h->last_seq, memory_order_relaxed),
	        .published = atomic_load_explicit(&h->published, memory_order_relaxed),
	        .pads = atomic_load_explicit(&h->pads, memory_order_relaxed),
	        .tail = atomic_load_explicit(&h->tail, memory_order_relaxed),
	        .last_pos = atomic_load_explicit(&h->last_pos, memory_order_relaxed),
	        .position = f->seq,
	        .trimmed = atomic_load_explicit(&h->trimmed, memory_order_relaxed),
	        .sweeps = f->sweeps,
	        .registered = f->slot != NULL,
	        .durable = f->named,
	        .resume = f->resume,
	};
	return 0;
}
