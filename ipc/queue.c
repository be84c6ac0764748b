/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ipc/queue.c: the work queue (owner = broker, clients = producers and workers).
 *
 * Design note. The owner runs client-go's queue, delaying queue and default controller rate
 * limiter as plain single-threaded code over private memory; the shared memfd carries only SPSC
 * channels whose every counter has one writer (queue-abi.h, W1-W4). So no shared structure can
 * be left half-updated by a kill -9, and the only repair work is the owner's, driven by pidfds:
 * re-queue what a dead worker held, drain what a dead producer published. Rejected: a
 * decentralised CAS state machine (every claim window needs a repairer that can tell dead from
 * slow) and a robust mutex (EOWNERDEAD leaves the data to repair and needs one PID namespace).
 *
 * Wakes: no syscall while the other side is awake (sleep flags, W3), plus a fixed 20 us spin
 * before sleeping that is skipped when the peer last ran on our CPU (spinning there only delays
 * the peer, ipc-calibration.md finding 2). Not halved on failure: a shorter spin than the
 * ~30 us cross-core wake is the bistable regime the calibration measured.
 *
 * Cost: the per-item work is the semantics (hash lookup, FIFO, lease, reply, Done), about
 * 190 ns of CPU per item in one process on this VM; hence: local Adds are dispatched once per
 * loop iteration (a post source), leases go out in per-worker batches with one publication,
 * metrics are plain single-writer stores, durations use the invariant TSC, items of short
 * keys are recycled. docs/ipc.md has the measurements.
 */
#include "ipc/queue.h"
#include "ipc/journal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

#include "ipc/queue-fault.h"
#include "ipc/ratelimit.h"

unsigned ipc_queue_fault_mask; /* test seams, see queue-fault.h; 0 in production */
unsigned ipc_queue_crash_point, ipc_queue_crash_count;
/* Dies with SIGKILL on the crash_count-th visit of point n (queue-fault.h). One load and a
 * compare when unused. */
#define CRASH_POINT(n)                                                                             \
	do {                                                                                       \
		if (ipc_queue_crash_point == (n) && ipc_queue_crash_count &&                       \
		    --ipc_queue_crash_count == 0)                                                  \
			raise(SIGKILL);                                                            \
	} while (0)

#define RELAXED memory_order_relaxed
#define ACQUIRE memory_order_acquire
#define RELEASE memory_order_release
#define SEQ_CST memory_order_seq_cst

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Durations measured here (queue/work time, spin budgets) never cross a process, so an
 * invariant TSC scaled once against CLOCK_MONOTONIC will do: clock_gettime was 43% of the
 * per-item cost in profiles on this VM (44 ns per call against 16 ns for rdtsc). Falls back to
 * clock_gettime where the CPU does not promise an invariant TSC. */
static double tsc_ns_per_tick;
static uint64_t tsc_base, tsc_ns_base;
static pthread_once_t tsc_once = PTHREAD_ONCE_INIT;

static void tsc_calibrate(void)
{
#if defined(__x86_64__)
	unsigned a, b, c, d;
	if (!__get_cpuid(0x80000007, &a, &b, &c, &d) || !(d & (1u << 8)))
		return; /* no invariant TSC */
	uint64_t n0 = mono_ns(), t0 = __rdtsc();
	struct timespec ts = {0, 2000000};
	nanosleep(&ts, NULL);
	uint64_t n1 = mono_ns(), t1 = __rdtsc();
	if (t1 <= t0 || n1 <= n0)
		return;
	tsc_base = t1;
	tsc_ns_base = n1;
	tsc_ns_per_tick = (double)(n1 - n0) / (double)(t1 - t0);
#endif
}

static inline uint64_t now_ns(void)
{
#if defined(__x86_64__)
	if (tsc_ns_per_tick > 0)
		return tsc_ns_base + (uint64_t)((double)(__rdtsc() - tsc_base) * tsc_ns_per_tick);
#endif
	return mono_ns();
}

static int key_check(const char *key, size_t *len)
{
	if (!key)
		return -EINVAL;
	size_t n = strnlen(key, IPC_QUEUE_KEY_MAX + 1);
	if (n == 0 || n > IPC_QUEUE_KEY_MAX)
		return -EINVAL;
	*len = n;
	return 0;
}

/* Maps the whole queue: the fixed header first, then all of it once its worker count is
 * validated against the memfd's size. The mapping's length is header.size (immutable). */
/* Maps a queue memfd after validating its header; *ret_nw is max_workers as validated (the
 * size of the mapping): callers keep this copy and never re-read the word from shared memory
 * to size a loop or an munmap. */
static int map_queue(int memfd, struct ipc_q_header **ret, uint32_t *ret_nw, bool writable)
{
	struct stat stb;
	if (fstat(memfd, &stb) < 0)
		return -errno;
	if ((uint64_t)stb.st_size < sizeof(struct ipc_q_header))
		return -EPROTO;
	struct ipc_q_header *h = mmap(NULL, sizeof(*h), PROT_READ, MAP_SHARED, memfd, 0);
	if (h == MAP_FAILED)
		return -errno;
	uint32_t nw = h->max_workers;
	bool ok = h->magic == IPC_QUEUE_MAGIC && h->version == IPC_QUEUE_ABI_VERSION &&
	          h->key_max == IPC_QUEUE_KEY_MAX && nw >= 1 && nw <= IPC_QUEUE_WORKERS_LIMIT &&
	          h->size == ipc_q_size(nw) && (uint64_t)stb.st_size >= ipc_q_size(nw);
	munmap(h, sizeof(*h));
	if (!ok)
		return -EPROTO;
	h = mmap(NULL, ipc_q_size(nw), PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED, memfd,
	         0);
	if (h == MAP_FAILED)
		return -errno;
	if (h->max_workers != nw) { /* a creator does not change it: a foreign file */
		munmap(h, ipc_q_size(nw));
		return -EPROTO;
	}
	*ret = h;
	*ret_nw = nw;
	return 0;
}

static void unmap_queue(struct ipc_q_header *h, uint32_t nw)
{
	munmap(h, ipc_q_size(nw));
}

int ipc_queue_memfd_create(const char *name)
{
	return ipc_queue_memfd_create_sized(name, IPC_QUEUE_MAX_WORKERS);
}

int ipc_queue_memfd_create_sized(const char *name, uint32_t max_workers)
{
	size_t n = name ? strnlen(name, IPC_QUEUE_NAME_MAX + 1) : 0;
	if (n == 0 || n > IPC_QUEUE_NAME_MAX || max_workers == 0 ||
	    max_workers > IPC_QUEUE_WORKERS_LIMIT)
		return -EINVAL;
	char mname[80] = "kcmd-queue-";
	strncat(mname, name, sizeof(mname) - strlen(mname) - 1);
	int fd = memfd_create(mname, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	int r = 0;
	if (ftruncate(fd, (off_t)ipc_q_size(max_workers)) < 0)
		goto fail_errno;
	struct ipc_q_header *h = mmap(NULL, sizeof(*h), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED)
		goto fail_errno;
	h->version = IPC_QUEUE_ABI_VERSION;
	h->size = (uint32_t)ipc_q_size(max_workers);
	memcpy(h->name, name, n);
	h->max_producers = IPC_QUEUE_MAX_PRODUCERS;
	h->max_workers = max_workers;
	h->add_ring = IPC_QUEUE_ADD_RING;
	h->lease_ring = IPC_QUEUE_LEASE_RING;
	h->key_max = IPC_QUEUE_KEY_MAX;
	/* magic last: a reader that sees it sees the rest (pairs with the mmap of a later attach,
	 * which happens after this process hands the fd over) */
	__atomic_store_n(&h->magic, IPC_QUEUE_MAGIC, __ATOMIC_RELEASE);
	munmap(h, sizeof(*h));
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		goto fail_errno;
	return fd;
fail_errno:
	r = -errno;
	close(fd);
	return r;
}

/* Wake protocol, publisher side (W3): publish happened before; claim the sleeper's flag. */
static inline bool wake_flag(_Atomic uint32_t *flag)
{
	atomic_thread_fence(
	        SEQ_CST); /* pairs with the sleeper's fence between flag=1 and re-check */
	if (atomic_load_explicit(flag, RELAXED) == 1 &&
	    atomic_exchange_explicit(flag, 0, SEQ_CST) == 1) {
		ipc_futex_wake((const uint32_t *)flag, 1);
		return true;
	}
	return false;
}

static inline uint32_t my_cpu(void)
{
	int c = sched_getcpu();
	return c < 0 ? 0 : (uint32_t)c;
}

/* ======================================================================================== */
/* Owner                                                                                      */
/* ======================================================================================== */

struct item {
	struct item *hnext; /* hash chain */
	struct item *fnext; /* FIFO link */
	uint64_t hash;
	uint64_t enqueued_ns;
	uint64_t ready_usec; /* delay heap */
	uint64_t started_ns;
	uint64_t gen;
	size_t heap_idx; /* SIZE_MAX: not waiting */
	uint32_t failures;
	uint32_t crashes;
	uint32_t parks; /* times parked in a row (reset by a reply) */
	int32_t worker; /* processing: worker slot; -1 none */
	bool dirty, in_fifo, processing, parked;
	uint8_t shown; /* parked: slot + 1 in the header's listing; 0 none */
	uint16_t keylen;
	uint32_t jslot; /* durable: its journal slot + 1 (ipc/journal.h); 0 none */
	char key[];
};

struct wstate {
	uint32_t pid; /* pid we track for this slot (0: none) */
	int pidfd;
	struct ipc_source *src;
	struct ipc_queue_owner *o;
	uint32_t idx;
	bool producer;
	uint32_t spin_hint;
};

struct ipc_queue_owner {
	struct ipc_loop *loop;
	int memfd;
	struct ipc_q_header *h;
	struct ipc_queue_owner_config cfg;
	uint32_t epoch;
	uint64_t next_gen;
	/* recycled items for short keys (no malloc/free per key on the hot path) */
	struct item *spare;
	size_t nspare;
	/* hash of items */
	struct item **buckets;
	size_t nbuckets, nitems;
	/* FIFO */
	struct item *fhead, *ftail;
	size_t flen;
	size_t nprocessing;
	/* delay heap */
	struct item **heap;
	size_t nheap, cap_heap;
	struct ipc_bucket bucket;
	struct ipc_source *doorbell, *timer, *post;
	uint32_t nw;            /* worker slots (header.max_workers) */
	struct wstate *workers; /* nw */
	/* private: item of each outstanding lease (saves a hash lookup per reply); NULL once the
	 * lease ended; checked against the lease generation before use */
	struct item *(*leased)[IPC_QUEUE_LEASE_RING]; /* nw rows */
	struct wstate producers[IPC_QUEUE_MAX_PRODUCERS];
	uint32_t pmask;  /* producer slots we track (pid != 0) */
	uint64_t *wmask; /* worker slots we track, (nw + 63) / 64 words */
	uint32_t n_wtracked;
	uint32_t seen_attach_seq;
	uint64_t last_full_scan_ns;
	uint32_t rr;      /* round-robin start for dispatch */
	uint32_t spin_ns; /* 0: never spin */
	bool shutting_down;
	uint64_t last_metrics_ns;
	bool unfinished_shown; /* the last published unfinished work was not 0 */
	bool in_pump;
	struct ipc_journal *journal; /* durable keys (ipc_queue_owner_attach_journal) */
	bool durable;                /* adds now are durable (ipc_queue_owner_set_durable) */
	uint64_t journal_errors;
};

#define SHORT_KEY 64 /* items whose key (with NUL) fits are recycled */

static uint64_t hash_key(const char *k, size_t n)
{
	uint64_t h = UINT64_C(1469598103934665603);
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)k[i]) * UINT64_C(1099511628211);
	return h;
}

static struct item *lookup(struct ipc_queue_owner *o, const char *key, size_t n, uint64_t h)
{
	for (struct item *it = o->buckets[h & (o->nbuckets - 1)]; it; it = it->hnext)
		if (it->hash == h && it->keylen == n && memcmp(it->key, key, n) == 0)
			return it;
	return NULL;
}

static int grow(struct ipc_queue_owner *o)
{
	size_t nb = o->nbuckets * 2;
	struct item **b = calloc(nb, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < o->nbuckets; i++)
		for (struct item *it = o->buckets[i], *next; it; it = next) {
			next = it->hnext;
			it->hnext = b[it->hash & (nb - 1)];
			b[it->hash & (nb - 1)] = it;
		}
	free(o->buckets);
	o->buckets = b;
	o->nbuckets = nb;
	return 0;
}

static struct item *get_item(struct ipc_queue_owner *o, const char *key, size_t n, bool create)
{
	uint64_t h = hash_key(key, n);
	struct item *it = lookup(o, key, n, h);
	if (it || !create)
		return it;
	if (o->nitems >= o->nbuckets && grow(o) < 0)
		return NULL;
	if (n < SHORT_KEY && o->spare) {
		it = o->spare;
		o->spare = it->hnext;
		o->nspare--;
		memset(it, 0, sizeof(*it));
	} else {
		it = calloc(1, sizeof(*it) + (n < SHORT_KEY ? SHORT_KEY : n + 1));
		if (!it)
			return NULL;
	}
	memcpy(it->key, key, n);
	it->keylen = (uint16_t)n;
	it->hash = h;
	it->heap_idx = SIZE_MAX;
	it->worker = -1;
	it->hnext = o->buckets[h & (o->nbuckets - 1)];
	o->buckets[h & (o->nbuckets - 1)] = it;
	o->nitems++;
	return it;
}

/* Frees an item that carries no state any more (client-go forgets such keys too). */
static void maybe_free(struct ipc_queue_owner *o, struct item *it)
{
	/* a durable key whose work is finished leaves the journal (a shutdown keeps it: the
	 * next owner queues it again) */
	if (it->jslot && !it->dirty && !it->in_fifo && !it->processing && !it->parked &&
	    it->heap_idx == SIZE_MAX && !o->shutting_down) {
		ipc_journal_drop(o->journal, it->jslot - 1);
		it->jslot = 0;
	}
	if (it->jslot || it->dirty || it->in_fifo || it->processing || it->parked ||
	    it->heap_idx != SIZE_MAX || it->failures || it->crashes || it->parks)
		return;
	struct item **pp = &o->buckets[it->hash & (o->nbuckets - 1)];
	while (*pp != it)
		pp = &(*pp)->hnext;
	*pp = it->hnext;
	o->nitems--;
	if (it->keylen < SHORT_KEY && o->nspare < 4096) {
		it->hnext = o->spare;
		o->spare = it;
		o->nspare++;
	} else
		free(it);
}

/* ---- metrics (owner-written, W1) ----
 * The owner is the only writer, so a relaxed load + store is enough (no locked RMW); readers
 * copy single words and may see a count that is one update behind. */
static inline void bump(_Atomic uint64_t *x, uint64_t n)
{
	atomic_store_explicit(x, atomic_load_explicit(x, RELAXED) + n, RELAXED);
}
static void hist_observe(struct ipc_q_hist *hs, uint64_t ns)
{
	uint64_t bound = 10; /* 1e-8 s in ns */
	for (unsigned i = 0; i < IPC_QUEUE_HIST_BUCKETS; i++, bound *= 10)
		if (ns <= bound) {
			bump(&hs->bucket[i], 1);
			break;
		}
	bump(&hs->count, 1);
	bump(&hs->sum_ns, ns);
}
static void set_depth(struct ipc_queue_owner *o)
{
	atomic_store_explicit(&o->h->metrics.depth, o->flen, RELAXED);
}

/* ---- delay heap (min by ready_usec) ---- */
static void hswap(struct ipc_queue_owner *o, size_t a, size_t b)
{
	struct item *t = o->heap[a];
	o->heap[a] = o->heap[b];
	o->heap[b] = t;
	o->heap[a]->heap_idx = a;
	o->heap[b]->heap_idx = b;
}
static void hup(struct ipc_queue_owner *o, size_t i)
{
	while (i > 0 && o->heap[(i - 1) / 2]->ready_usec > o->heap[i]->ready_usec) {
		hswap(o, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}
static void hdown(struct ipc_queue_owner *o, size_t i)
{
	for (;;) {
		size_t m = i, a = 2 * i + 1, b = a + 1;
		if (a < o->nheap && o->heap[a]->ready_usec < o->heap[m]->ready_usec)
			m = a;
		if (b < o->nheap && o->heap[b]->ready_usec < o->heap[m]->ready_usec)
			m = b;
		if (m == i)
			return;
		hswap(o, i, m);
		i = m;
	}
}
static void hremove(struct ipc_queue_owner *o, struct item *it)
{
	size_t i = it->heap_idx;
	it->heap_idx = SIZE_MAX;
	if (i != --o->nheap) {
		o->heap[i] = o->heap[o->nheap];
		o->heap[i]->heap_idx = i;
		hdown(o, i);
		hup(o, i);
	}
}
static void arm_timer(struct ipc_queue_owner *o)
{
	if (o->timer)
		ipc_source_set_time(o->timer, o->nheap ? o->heap[0]->ready_usec : 0);
}

/* ---- client-go state machine ---- */
static void fifo_push(struct ipc_queue_owner *o, struct item *it)
{
	it->fnext = NULL;
	it->in_fifo = true;
	it->enqueued_ns = now_ns();
	if (o->ftail)
		o->ftail->fnext = it;
	else
		o->fhead = it;
	o->ftail = it;
	o->flen++;
}

static void unpark_item(struct ipc_queue_owner *o, struct item *it);

static void do_add(struct ipc_queue_owner *o, struct item *it)
{
	if (o->shutting_down)
		return;
	if (it->parked) /* an object change (or its backoff ended): try it again */
		unpark_item(o, it);
	if (it->dirty)
		return; /* a key waits at most once */
	it->dirty = true;
	bump(&o->h->metrics.adds_total, 1);
	if (it->processing && !(ipc_queue_fault_mask & IPC_QUEUE_FAULT_DOUBLE_DISPATCH))
		return; /* queued again by Done */
	if (it->in_fifo)
		return;
	fifo_push(o, it);
	set_depth(o);
}

/* Into the delay heap at ready (an item already waiting keeps the earlier time). */
static int heap_insert(struct ipc_queue_owner *o, struct item *it, uint64_t ready)
{
	if (it->heap_idx != SIZE_MAX) {
		if (ready < it->ready_usec) { /* keep the earlier time */
			it->ready_usec = ready;
			hup(o, it->heap_idx);
		}
		return 0;
	}
	if (o->nheap == o->cap_heap) {
		size_t nc = o->cap_heap ? o->cap_heap * 2 : 64;
		struct item **n = realloc(o->heap, nc * sizeof(*n));
		if (!n)
			return -ENOMEM;
		o->heap = n;
		o->cap_heap = nc;
	}
	it->ready_usec = ready;
	it->heap_idx = o->nheap;
	o->heap[o->nheap++] = it;
	hup(o, it->heap_idx);
	return 0;
}

static int do_add_after(struct ipc_queue_owner *o, struct item *it, uint64_t delay_usec)
{
	if (o->shutting_down)
		return 0;
	bump(&o->h->metrics.retries_total, 1);
	if (delay_usec == 0) {
		do_add(o, it);
		return 0;
	}
	int r = heap_insert(o, it, ipc_now_usec() + delay_usec);
	arm_timer(o);
	return r;
}

static uint64_t when(struct ipc_queue_owner *o, struct item *it)
{
	uint64_t e = ipc_backoff_exp(it->failures, o->cfg.base_delay_usec, o->cfg.max_delay_usec);
	it->failures++;
	uint64_t b = ipc_bucket_reserve(&o->bucket, ipc_now_usec());
	return e > b ? e : b;
}

static int do_add_rate_limited(struct ipc_queue_owner *o, struct item *it)
{
	if (o->shutting_down)
		return 0;
	return do_add_after(o, it, when(o, it));
}

/* The header's listing of parked keys (seqlock per slot, this process the one writer). */
static void show_write(struct ipc_q_parked *p, const struct item *it, uint64_t unpark_at)
{
	uint32_t seq = atomic_load_explicit(&p->seq, RELAXED);
	atomic_store_explicit(&p->seq, seq + 1, RELAXED);
	atomic_thread_fence(memory_order_release); /* the odd seq is seen before the fields */
	if (it) {
		p->crashes = it->crashes;
		p->parks = it->parks;
		p->unpark_at = unpark_at;
		memcpy(p->key, it->key, it->keylen);
		p->key[it->keylen] = 0;
		p->keylen = it->keylen;
	} else
		p->keylen = 0;
	atomic_store_explicit(&p->seq, seq + 2, RELEASE);
}

static void show_parked(struct ipc_queue_owner *o, struct item *it, uint64_t unpark_at)
{
	for (unsigned i = 0; i < IPC_QUEUE_PARKED_SHOWN; i++)
		if (!o->h->parked[i].keylen) {
			show_write(&o->h->parked[i], it, unpark_at);
			it->shown = (uint8_t)(i + 1);
			return;
		}
	/* full: the key is counted and was logged, but not listed */
}

static uint64_t park_backoff(const struct ipc_queue_owner *o, uint32_t parks)
{
	uint64_t d = o->cfg.park_backoff_usec;
	for (uint32_t i = 1; i < parks && d < o->cfg.park_backoff_max_usec; i++)
		d *= 2;
	return d < o->cfg.park_backoff_max_usec ? d : o->cfg.park_backoff_max_usec;
}

/* Parks it: no worker gets it until an Add of it, its backoff ends (the delay heap holds
 * parked items at their un-park time), or an explicit un-park. */
static void park(struct ipc_queue_owner *o, struct item *it)
{
	it->parked = true;
	it->dirty = false;
	it->parks++;
	if (it->heap_idx != SIZE_MAX)
		hremove(o, it);
	uint64_t delay = park_backoff(o, it->parks);
	uint64_t at = ipc_now_usec() + delay;
	bump(&o->h->metrics.parked, 1);
	bump(&o->h->metrics.parked_total, 1);
	show_parked(o, it, at);
	/* no memory for the heap: only an Add or an un-park brings it back */
	(void)heap_insert(o, it, at);
	arm_timer(o);
	if (o->cfg.parked)
		o->cfg.parked(o, it->key, it->crashes, delay, o->cfg.userdata);
}

static void unpark_item(struct ipc_queue_owner *o, struct item *it)
{
	it->parked = false;
	it->crashes = 0;
	if (it->heap_idx != SIZE_MAX)
		hremove(o, it);
	if (it->shown) {
		show_write(&o->h->parked[it->shown - 1], NULL, 0);
		it->shown = 0;
	}
	bump(&o->h->metrics.parked, (uint64_t)-1);
	arm_timer(o);
}

/* Done(key) for a lease that ended (reply or death). */
static void end_processing(struct ipc_queue_owner *o, struct item *it)
{
	it->processing = false;
	it->worker = -1;
	o->nprocessing--;
	if (it->dirty && !it->in_fifo && !it->parked) {
		fifo_push(o, it);
		set_depth(o);
	}
}

static void apply_reply(struct ipc_queue_owner *o, struct item *it, const struct ipc_q_reply *rp)
{
	it->crashes = 0;
	it->parks = 0;
	hist_observe(&o->h->metrics.work_duration, rp->work_ns);
	end_processing(o, it);
	if (rp->flags & IPC_Q_REPLY_FORGET)
		it->failures = 0;
	if (rp->flags & IPC_Q_REPLY_RATE_LIMITED)
		do_add_rate_limited(o, it);
	if (rp->flags & IPC_Q_REPLY_AFTER)
		do_add_after(o, it, rp->after_usec);
	maybe_free(o, it);
}

/* The item of outstanding lease i of worker wi: from the owner's private map when it still
 * matches the lease generation, else by key (leases adopted from a previous owner). */
/* Whether the owner tracks worker slot wi. */
static inline bool wbit(const struct ipc_queue_owner *o, uint32_t wi)
{
	return (o->wmask[wi / 64] >> (wi % 64)) & 1;
}

static struct item *lease_item(struct ipc_queue_owner *o, uint32_t wi, uint32_t i)
{
	struct ipc_q_worker *w = &o->h->workers[wi];
	const struct ipc_q_rec *rec = &w->lease[i & (IPC_QUEUE_LEASE_RING - 1)];
	struct item *m = o->leased[wi][i & (IPC_QUEUE_LEASE_RING - 1)];
	if (m && m->gen == rec->u64)
		return m;
	size_t n = rec->keylen;
	if (n == 0 || n > IPC_QUEUE_KEY_MAX)
		return NULL;
	return get_item(o, rec->key, n, false);
}

/* Applies every published reply of worker w (W2, W4). */
static bool drain_replies(struct ipc_queue_owner *o, uint32_t wi)
{
	struct ipc_q_worker *w = &o->h->workers[wi];
	uint32_t head = atomic_load_explicit(&w->reply_head, RELAXED);
	uint32_t tail = atomic_load_explicit(
	        &w->reply_tail, ACQUIRE); /* pairs with the worker's release in ipc_queue_done */
	uint32_t ltail = atomic_load_explicit(&w->lease_tail, RELAXED);
	if (head == tail)
		return false;
	if (tail - head > ltail - head) /* more replies than leases: a corrupt worker */
		tail = ltail;
	for (; head != tail; head++) {
		const struct ipc_q_reply *rp = &w->reply[head & (IPC_QUEUE_LEASE_RING - 1)];
		const struct ipc_q_rec *ls = &w->lease[head & (IPC_QUEUE_LEASE_RING - 1)];
		struct item *it = lease_item(o, wi, head);
		o->leased[wi][head & (IPC_QUEUE_LEASE_RING - 1)] = NULL; /* this lease ends here */
		if (!it || rp->gen != ls->u64 || !it->processing || it->gen != ls->u64) {
			bump(&o->h->metrics.protocol_errors_total, 1);
			continue;
		}
		apply_reply(o, it, rp);
		CRASH_POINT(1); /* reply applied privately, reply_head not yet advanced */
	}
	atomic_store_explicit(&w->reply_head, head,
	                      RELEASE); /* lease slots below head may be reused */
	return true;
}

static void close_if_drained(struct ipc_queue_owner *o);

/* Hands FIFO keys to workers with room (W4): each worker in turn (round-robin) gets what fits
 * its prefetch window, published with one release store; sleepers are woken once. */
static void dispatch(struct ipc_queue_owner *o)
{
	if (!o->fhead || !o->n_wtracked)
		goto out;
	uint64_t t = now_ns();
	for (uint32_t k = 0; k < o->nw && o->fhead; k++) {
		uint32_t wi = (o->rr + k) % o->nw;
		if (!wbit(o, wi))
			continue;
		struct ipc_q_worker *w = &o->h->workers[wi];
		uint32_t pf = atomic_load_explicit(&w->prefetch, RELAXED);
		if (pf == 0)
			pf = 1;
		if (pf > IPC_QUEUE_LEASE_RING)
			pf = IPC_QUEUE_LEASE_RING;
		uint32_t lt0 = atomic_load_explicit(&w->lease_tail, RELAXED), lt = lt0;
		uint32_t rh = atomic_load_explicit(&w->reply_head, RELAXED);
		while (o->fhead && lt - rh < pf) {
			struct item *it = o->fhead;
			o->fhead = it->fnext;
			if (!o->fhead)
				o->ftail = NULL;
			o->flen--;
			it->in_fifo = false;
			it->dirty = false;
			it->processing = true;
			it->worker = (int32_t)wi;
			it->gen = ++o->next_gen;
			it->started_ns = t;
			o->nprocessing++;
			struct ipc_q_rec *rec = &w->lease[lt & (IPC_QUEUE_LEASE_RING - 1)];
			o->leased[wi][lt & (IPC_QUEUE_LEASE_RING - 1)] = it;
			rec->u64 = it->gen;
			rec->arg = it->failures;
			rec->keylen = it->keylen;
			memcpy(rec->key, it->key, it->keylen + 1u);
			/* W2': the record's seq, stored last, is what a spinning worker watches
			 * (one cache line crosses instead of two); pairs with the acquire in
			 * lease_ready() */
			__atomic_store_n(&rec->op, lt + 1, __ATOMIC_RELEASE);
			lt++;
			/* bookkeeping after the publication: off the hand-off's critical path */
			hist_observe(&o->h->metrics.queue_duration, t - it->enqueued_ns);
			CRASH_POINT(2); /* lease visible by its seq, lease_tail not yet stored */
		}
		if (lt == lt0)
			continue;
		atomic_store_explicit(&w->lease_tail, lt,
		                      RELEASE); /* owner bookkeeping (W4), adoption */
		CRASH_POINT(3);                 /* leases published, worker not woken */
		wake_flag(&w->waiting);
		o->rr = wi + 1;
	}
	set_depth(o);
out:
	if (o->shutting_down)
		close_if_drained(o);
}

static void close_if_drained(struct ipc_queue_owner *o)
{
	if (o->fhead || atomic_load_explicit(&o->h->closed, RELAXED))
		return;
	atomic_store_explicit(&o->h->closed, 1, RELEASE); /* pairs with acquire in ipc_queue_get */
	for (uint32_t wi = 0; wi < o->nw; wi++)
		wake_flag(&o->h->workers[wi].waiting);
}

static void apply_add_rec(struct ipc_queue_owner *o, const struct ipc_q_rec *rec)
{
	size_t n = rec->keylen;
	if (n == 0 || n > IPC_QUEUE_KEY_MAX) {
		bump(&o->h->metrics.protocol_errors_total, 1);
		return;
	}
	char key[IPC_QUEUE_KEY_MAX + 1];
	memcpy(key, rec->key, n); /* copy first: the producer may not change it, but be strict */
	key[n] = 0;
	struct item *it = get_item(o, key, n, rec->op != IPC_Q_OP_FORGET);
	if (!it)
		return;
	switch (rec->op) {
	case IPC_Q_OP_ADD:
		do_add(o, it);
		break;
	case IPC_Q_OP_ADD_AFTER:
		do_add_after(o, it, rec->u64);
		break;
	case IPC_Q_OP_ADD_RATE_LIMITED:
		do_add_rate_limited(o, it);
		break;
	case IPC_Q_OP_FORGET:
		it->failures = 0;
		break;
	default:
		bump(&o->h->metrics.protocol_errors_total, 1);
	}
	maybe_free(o, it);
}

static bool drain_adds(struct ipc_queue_owner *o, uint32_t pi)
{
	struct ipc_q_producer *p = &o->h->producers[pi];
	uint32_t head = atomic_load_explicit(&p->head, RELAXED);
	uint32_t tail = atomic_load_explicit(
	        &p->tail, ACQUIRE); /* pairs with the producer's release in push_add */
	if (head == tail)
		return false;
	if (tail - head > IPC_QUEUE_ADD_RING)
		tail = head + IPC_QUEUE_ADD_RING; /* corrupt producer: bound the work */
	for (; head != tail; head++) {
		apply_add_rec(o, &p->ring[head & (IPC_QUEUE_ADD_RING - 1)]);
		CRASH_POINT(4); /* Add applied privately, head not yet advanced */
	}
	atomic_store_explicit(&p->head, head,
	                      RELEASE); /* pairs with acquire in push_add: slots free */
	wake_flag(&p->space_waiting);
	return true;
}

/* ---- client slots: pidfd tracking, death ---- */
static void reset_worker_slot(struct ipc_queue_owner *o, uint32_t wi)
{
	struct ipc_q_worker *w = &o->h->workers[wi];
	/* Records first, counters next, identity last: an owner killed anywhere in here leaves
	 * a slot a restarted owner handles as a dead worker again (at worst re-Adding its keys). */
	for (uint32_t i = 0; i < IPC_QUEUE_LEASE_RING; i++)
		__atomic_store_n(&w->lease[i].op, 0, __ATOMIC_RELAXED);
	CRASH_POINT(6); /* record seqs cleared, counters and pid not yet */
	atomic_store_explicit(&w->lease_tail, 0, RELAXED);
	atomic_store_explicit(&w->lease_head, 0, RELAXED);
	atomic_store_explicit(&w->reply_tail, 0, RELAXED);
	atomic_store_explicit(&w->reply_head, 0, RELAXED);
	atomic_store_explicit(&w->waiting, 0, RELAXED);
	atomic_store_explicit(&w->prefetch, 0, RELAXED);
	atomic_store_explicit(&w->pid_ino, 0, RELAXED);
	atomic_store_explicit(&w->detached, 0, RELAXED);
	/* release: a new client that CASes pid from 0 sees the reset counters */
	atomic_store_explicit(&w->pid, 0, RELEASE);
}

static void worker_died(struct ipc_queue_owner *o, uint32_t wi, bool detached)
{
	struct ipc_q_worker *w = &o->h->workers[wi];
	/* killed by the manager (fence, stop): the keys it held are no crash */
	bool expected =
	        !detached && o->cfg.death_expected && o->cfg.death_expected(o, o->cfg.userdata);
	drain_replies(o, wi); /* it may have finished before dying */
	uint32_t head = atomic_load_explicit(&w->reply_head, RELAXED);
	uint32_t lhead = atomic_load_explicit(
	        &w->lease_head, ACQUIRE); /* pairs with the release in ipc_queue_get */
	uint32_t ltail = atomic_load_explicit(&w->lease_tail, RELAXED);
	if (lhead - head > ltail - head)
		lhead = ltail;
	for (uint32_t i = head; i != ltail; i++) {
		struct item *it = lease_item(o, wi, i);
		o->leased[wi][i & (IPC_QUEUE_LEASE_RING - 1)] = NULL; /* this lease ends here */
		if (!it || !it->processing || it->worker != (int32_t)wi ||
		    it->gen != w->lease[i & (IPC_QUEUE_LEASE_RING - 1)].u64)
			continue;
		end_processing(o, it);
		if (ipc_queue_fault_mask & IPC_QUEUE_FAULT_NO_DEATH_REQUEUE) {
			maybe_free(o, it);
			continue;
		}
		if (!detached && !expected &&
		    i - head < lhead - head) { /* it was being processed: a crash */
			it->crashes++;
			if (it->crashes >= o->cfg.park_after) {
				if (it->in_fifo) { /* dirty re-add was queued by end_processing */
					struct item **pp = &o->fhead, *prev = NULL;
					while (*pp != it) {
						prev = *pp;
						pp = &(*pp)->fnext;
					}
					*pp = it->fnext;
					if (o->ftail == it)
						o->ftail = prev;
					o->flen--;
					it->in_fifo = false;
					set_depth(o);
				}
				park(o, it);
			} else
				do_add_rate_limited(o, it);
		} else
			do_add(o, it); /* prefetched, never started */
		maybe_free(o, it);
	}
	if (!detached)
		bump(&o->h->metrics.worker_deaths_total, 1);
	CRASH_POINT(5); /* dead worker's keys re-queued privately, slot not reset */
	reset_worker_slot(o, wi);
}

static void producer_died(struct ipc_queue_owner *o, uint32_t pi)
{
	struct ipc_q_producer *p = &o->h->producers[pi];
	drain_adds(o, pi); /* everything it published counts */
	CRASH_POINT(8);    /* dead producer drained, slot not reset */
	atomic_store_explicit(&p->head, 0, RELAXED);
	atomic_store_explicit(&p->tail, 0, RELAXED);
	atomic_store_explicit(&p->space_waiting, 0, RELAXED);
	atomic_store_explicit(&p->pid_ino, 0, RELAXED);
	atomic_store_explicit(&p->detached, 0, RELAXED);
	atomic_store_explicit(&p->pid, 0, RELEASE); /* as in reset_worker_slot */
}

static void untrack(struct wstate *ws)
{
	if (ws->producer)
		ws->o->pmask &= ~(1u << ws->idx);
	else if (wbit(ws->o, ws->idx)) {
		ws->o->wmask[ws->idx / 64] &= ~(UINT64_C(1) << (ws->idx % 64));
		ws->o->n_wtracked--;
	}
	ws->src = ipc_source_free(ws->src);
	if (ws->pidfd >= 0)
		close(ws->pidfd);
	ws->pidfd = -1;
	ws->pid = 0;
}

static void slot_gone(struct ipc_queue_owner *o, struct wstate *ws, bool detached)
{
	untrack(ws);
	if (ws->producer)
		producer_died(o, ws->idx);
	else
		worker_died(o, ws->idx, detached);
}

static void slot_dead(struct ipc_queue_owner *o, struct wstate *ws)
{
	slot_gone(o, ws, false);
}

static int on_client_exit(struct ipc_source *s, int fd, uint32_t revents, void *ud)
{
	(void)s;
	(void)fd;
	(void)revents;
	struct wstate *ws = ud;
	struct ipc_queue_owner *o = ws->o;
	slot_dead(o, ws);
	return ipc_queue_owner_pump(o);
}

/* Notices newly claimed slots (and slots claimed by a pid we do not track): opens a pidfd. */
static uint64_t pidfd_ino(int pfd);

static void scan_slot(struct ipc_queue_owner *o, struct wstate *ws, _Atomic uint32_t *pidw,
                      _Atomic uint64_t *inow)
{
	uint32_t pid = atomic_load_explicit(pidw, ACQUIRE); /* pairs with the client's CAS */
	if (pid == ws->pid)
		return;
	if (ws->pid)
		untrack(ws); /* cannot happen: only we clear pid */
	if (!pid)
		return;
	int pfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
	if (pfd < 0 && errno != ESRCH) {
		/* EMFILE, ENOMEM...: no evidence of death; the next full scan (within 1 s) retries
		 */
		o->last_full_scan_ns = 0;
		return;
	}
	uint64_t ino = atomic_load_explicit(inow, RELAXED);
	uint64_t now_ino = pfd >= 0 && ino ? pidfd_ino(pfd) : 0;
	if (now_ino && now_ino != ino) { /* unknown (0) is not evidence of reuse */
		/* the pid now names another process: our client is gone (pid reuse) */
		close(pfd);
		pfd = -1;
	}
	if (pfd < 0) {
		/* gone already (ESRCH): treat exactly like a death we watched */
		ws->pid = pid;
		slot_dead(o, ws);
		return;
	}
	ws->pid = pid;
	ws->pidfd = pfd;
	if (ws->producer)
		o->pmask |= 1u << ws->idx;
	else if (!wbit(o, ws->idx)) {
		o->wmask[ws->idx / 64] |= UINT64_C(1) << (ws->idx % 64);
		o->n_wtracked++;
	}
	if (ipc_loop_add_pidfd(o->loop, &ws->src, pfd, on_client_exit, ws) < 0) {
		/* cannot watch it: keep the pidfd and poll it on every pump instead */
		ws->src = NULL;
	}
}

static bool poll_dead(struct wstate *ws)
{
	if (ws->src || ws->pidfd < 0)
		return false;
	struct pollfd p = {.fd = ws->pidfd, .events = POLLIN};
	return poll(&p, 1, 0) == 1;
}

static void publish_unfinished(struct ipc_queue_owner *o, uint64_t t)
{
	uint64_t sum = 0, longest = 0;
	for (uint32_t wi = 0; wi < o->nw; wi++) {
		if (!o->workers[wi].pid)
			continue;
		struct ipc_q_worker *w = &o->h->workers[wi];
		uint32_t head = atomic_load_explicit(&w->reply_head, RELAXED);
		uint32_t lhead = atomic_load_explicit(&w->lease_head, RELAXED);
		for (uint32_t i = head; i != lhead && i - head < IPC_QUEUE_LEASE_RING; i++) {
			struct item *it = lease_item(o, wi, i);
			if (!it || !it->processing)
				continue;
			uint64_t d = t - it->started_ns;
			sum += d;
			if (d > longest)
				longest = d;
		}
	}
	atomic_store_explicit(&o->h->metrics.unfinished_work_ns, sum, RELAXED);
	atomic_store_explicit(&o->h->metrics.longest_running_ns, longest, RELAXED);
	o->unfinished_shown = sum != 0;
}

/* One pass over every tracked channel (all slots when a client attached since the last full
 * scan, or once a second as insurance). Returns true if anything was consumed. */
static bool pass(struct ipc_queue_owner *o)
{
	bool any = false;
	uint32_t seq =
	        atomic_load_explicit(&o->h->attach_seq, ACQUIRE); /* pairs with claim()'s RMWs */
	if (seq != o->seen_attach_seq || o->last_full_scan_ns == 0) {
		o->seen_attach_seq = seq;
		o->last_full_scan_ns = now_ns();
		for (uint32_t i = 0; i < IPC_QUEUE_MAX_PRODUCERS; i++)
			scan_slot(o, &o->producers[i], &o->h->producers[i].pid,
			          &o->h->producers[i].pid_ino);
		for (uint32_t i = 0; i < o->nw; i++)
			scan_slot(o, &o->workers[i], &o->h->workers[i].pid,
			          &o->h->workers[i].pid_ino);
	}
	for (uint32_t m = o->pmask; m; m &= m - 1) {
		uint32_t i = (uint32_t)__builtin_ctz(m);
		any |= drain_adds(o, i);
		/* acquire pairs with the release in ipc_queue_free: its last Adds are visible */
		if (atomic_load_explicit(&o->h->producers[i].detached, ACQUIRE))
			slot_gone(o, &o->producers[i], true), any = true;
		else if (poll_dead(&o->producers[i]))
			slot_dead(o, &o->producers[i]), any = true;
	}
	for (uint32_t wd = 0; o->n_wtracked && wd < (o->nw + 63) / 64; wd++)
		for (uint64_t m = o->wmask[wd]; m; m &= m - 1) {
			uint32_t i = wd * 64 + (uint32_t)__builtin_ctzll(m);
			any |= drain_replies(o, i);
			if (atomic_load_explicit(&o->h->workers[i].detached,
			                         ACQUIRE)) /* as above */
				slot_gone(o, &o->workers[i], true), any = true;
			else if (poll_dead(&o->workers[i]))
				slot_dead(o, &o->workers[i]), any = true;
		}
	dispatch(o);
	return any;
}

static bool spin_worthwhile(struct ipc_queue_owner *o)
{
	uint32_t me = my_cpu();
	atomic_store_explicit(&o->h->owner_cpu, me, RELAXED); /* read by workers' spin choice */
	/* Spin only if some worker holding our leases ran on another CPU last. */
	for (uint32_t i = 0; i < o->nw; i++)
		if (o->workers[i].pid &&
		    atomic_load_explicit(&o->h->workers[i].cpu, RELAXED) != me &&
		    atomic_load_explicit(&o->h->workers[i].lease_tail, RELAXED) !=
		            atomic_load_explicit(&o->h->workers[i].reply_head, RELAXED))
			return true;
	return false;
}

/* Drains every channel and dispatches. With to_sleep (the doorbell callback, the loop is about
 * to block) it also runs the spin and the sleeper side of W3, ending with
 * owner_waiting == 1 and nothing pending. Without it the flag is left alone: if it is 1, a
 * client's publish claims it and wakes the doorbell, which then runs the full protocol. So
 * whenever the loop sleeps, either the flag is 1 with the doorbell wait armed, or a wake for
 * it is in flight. */
static int pump(struct ipc_queue_owner *o, bool to_sleep)
{
	if (o->in_pump)
		return 0;
	o->in_pump = true;
	while (to_sleep) {
		atomic_store_explicit(&o->h->owner_waiting, 0, RELAXED);
		while (pass(o))
			;
		/* spin before sleeping, only when a worker we serve last ran on another CPU: catch
		 * replies/adds that arrive within spin_ns without a sleep/wake pair */
		if (spin_worthwhile(o) && o->spin_ns) {
			uint64_t end = now_ns() + o->spin_ns;
			bool got = false;
			for (unsigned k = 0; !got; k++) {
				for (unsigned j = 0; j < 32; j++)
					cpu_relax();
				got = pass(o);
				if ((k & 7) == 7 && now_ns() > end)
					break;
			}
			if (got)
				continue;
		}
		/* W3 sleeper side: flag, fence, re-check. */
		atomic_store_explicit(&o->h->owner_waiting, 1, RELAXED);
		atomic_thread_fence(SEQ_CST); /* pairs with wake_flag()'s fence in clients */
		if (!pass(o))
			break;
	}
	if (!to_sleep) {
		pass(o); /* one pass: whatever arrives later is the doorbell's business */
		/* keep the CPU workers compare against for their spin choice current */
		uint32_t me = my_cpu();
		if (atomic_load_explicit(&o->h->owner_cpu, RELAXED) != me)
			atomic_store_explicit(&o->h->owner_cpu, me, RELAXED);
	}
	uint64_t t = now_ns();
	if (t - o->last_full_scan_ns > 1000000000u)
		o->last_full_scan_ns = 0; /* next pass rescans every slot */
	/* every 500 ms, and at once while a non-zero figure is shown: the pump that takes the
	 * last done reply publishes 0 (nothing pumps an idle queue, which would keep showing the
	 * last key's running time) */
	if (t - o->last_metrics_ns > 500000000u || o->unfinished_shown) {
		o->last_metrics_ns = t;
		publish_unfinished(o, t);
	}
	o->in_pump = false;
	return 0;
}

/* Callers with more work of their own (local Adds) must not spin: no spin here. */
int ipc_queue_owner_pump(struct ipc_queue_owner *o)
{
	return pump(o, false);
}

static int on_doorbell(struct ipc_source *s, int res, void *ud)
{
	(void)res; /* 0 (woken) or -EAGAIN (flag already cleared): both mean "look" */
	struct ipc_queue_owner *o = ud;
	int r = pump(o, true); /* about to sleep: a short spin pays here */
	if (r < 0)
		return r;
	/* pump left owner_waiting == 1 with nothing pending; sleep on the flag itself (W3) */
	return ipc_source_futex_arm(s, 1);
}

static int on_timer(struct ipc_source *s, uint64_t now, void *ud)
{
	(void)s;
	struct ipc_queue_owner *o = ud;
	while (o->nheap && o->heap[0]->ready_usec <= now) {
		struct item *it = o->heap[0];
		hremove(o, it);
		do_add(o, it);
		maybe_free(o, it);
	}
	arm_timer(o);
	return ipc_queue_owner_pump(o);
}

static int on_post(struct ipc_source *s, uint64_t now, void *ud)
{
	(void)s;
	(void)now;
	return ipc_queue_owner_pump(ud);
}

/* Adopts what a previous owner left: leases held by live workers (W4). */
static void adopt(struct ipc_queue_owner *o)
{
	for (uint32_t wi = 0; wi < o->nw; wi++) {
		struct ipc_q_worker *w = &o->h->workers[wi];
		if (!atomic_load_explicit(&w->pid, ACQUIRE))
			continue;
		uint32_t head = atomic_load_explicit(&w->reply_head, RELAXED);
		uint32_t ltail = atomic_load_explicit(&w->lease_tail, RELAXED);
		if (ltail - head > IPC_QUEUE_LEASE_RING)
			ltail = head; /* corrupt: adopt nothing */
		/* the previous owner may have died between a record's seq and lease_tail: those
		 * leases are visible to the worker, so they are leases (W2') */
		while (ltail - head < IPC_QUEUE_LEASE_RING &&
		       __atomic_load_n(&w->lease[ltail & (IPC_QUEUE_LEASE_RING - 1)].op,
		                       __ATOMIC_ACQUIRE) == ltail + 1)
			ltail++;
		atomic_store_explicit(&w->lease_tail, ltail, RELAXED);
		for (uint32_t i = head; i != ltail; i++) {
			const struct ipc_q_rec *rec = &w->lease[i & (IPC_QUEUE_LEASE_RING - 1)];
			if (rec->keylen == 0 || rec->keylen > IPC_QUEUE_KEY_MAX)
				continue;
			struct item *it = get_item(o, rec->key, rec->keylen, true);
			if (!it || it->processing)
				continue;
			it->processing = true;
			it->worker = (int32_t)wi;
			it->gen = rec->u64;
			it->failures = rec->arg;
			it->started_ns = now_ns();
			o->nprocessing++;
			CRASH_POINT(7); /* restarted owner dies mid-adoption */
		}
	}
}

int ipc_queue_owner_new(struct ipc_queue_owner **ret, struct ipc_loop *loop, int memfd,
                        const struct ipc_queue_owner_config *cfg)
{
	if (!ret || !loop || memfd < 0)
		return -EINVAL;
	pthread_once(&tsc_once, tsc_calibrate);
	struct ipc_queue_owner *o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->memfd = -1;
	int r = map_queue(memfd, &o->h, &o->nw, true);
	if (r < 0) {
		free(o);
		return r;
	}
	o->workers = calloc(o->nw, sizeof(*o->workers));
	o->leased = calloc(o->nw, sizeof(*o->leased));
	o->wmask = calloc((o->nw + 63) / 64, sizeof(*o->wmask));
	for (uint32_t i = 0; o->workers && i < o->nw; i++)
		o->workers[i] = (struct wstate){.pidfd = -1, .o = o, .idx = i};
	if (cfg)
		o->cfg = *cfg;
	if (!o->cfg.base_delay_usec)
		o->cfg.base_delay_usec = 5000;
	if (!o->cfg.max_delay_usec)
		o->cfg.max_delay_usec = 1000u * 1000000u;
	if (o->cfg.qps == 0)
		o->cfg.qps = 10;
	if (!o->cfg.burst)
		o->cfg.burst = 100;
	if (!o->cfg.park_after)
		o->cfg.park_after = 5;
	if (!o->cfg.park_backoff_usec)
		o->cfg.park_backoff_usec = 60u * 1000000u;
	if (!o->cfg.park_backoff_max_usec)
		o->cfg.park_backoff_max_usec = UINT64_C(1800) * 1000000u;
	if (o->cfg.park_backoff_max_usec < o->cfg.park_backoff_usec)
		o->cfg.park_backoff_max_usec = o->cfg.park_backoff_usec;
	if (!o->cfg.spin_usec)
		o->cfg.spin_usec = 20;
	o->spin_ns = o->cfg.spin_usec == UINT32_MAX ? 0 : o->cfg.spin_usec * 1000u;
	o->loop = loop;
	o->nbuckets = 1024;
	o->buckets = calloc(o->nbuckets, sizeof(*o->buckets));
	for (uint32_t i = 0; i < IPC_QUEUE_MAX_PRODUCERS; i++)
		o->producers[i] = (struct wstate){.pidfd = -1, .o = o, .idx = i, .producer = true};
	if (!o->buckets || !o->workers || !o->leased || !o->wmask) {
		r = -ENOMEM;
		goto fail;
	}
	o->memfd = fcntl(memfd, F_DUPFD_CLOEXEC, 3);
	if (o->memfd < 0) {
		r = -errno;
		goto fail;
	}
	/* One owner at a time: a recorded owner that is still alive keeps the queue. */
	uint32_t prev = atomic_load_explicit(&o->h->owner_pid, ACQUIRE);
	if (prev) {
		int pfd = (int)syscall(SYS_pidfd_open, (pid_t)prev, 0);
		if (pfd < 0 && errno != ESRCH) {
			r = -errno; /* cannot tell whether the recorded owner lives */
			goto fail;
		}
		if (pfd >= 0) {
			uint64_t rec_ino = atomic_load_explicit(&o->h->owner_pid_ino, RELAXED);
			uint64_t now_ino = rec_ino ? pidfd_ino(pfd) : 0;
			struct pollfd p = {.fd = pfd, .events = POLLIN};
			/* alive, and not a reused pid */
			bool alive = poll(&p, 1, 0) == 0 && !(now_ino && now_ino != rec_ino);
			close(pfd);
			if (alive) {
				r = -EBUSY;
				goto fail;
			}
		}
	}
	int selfpfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	atomic_store_explicit(&o->h->owner_pid_ino, pidfd_ino(selfpfd), RELAXED);
	if (selfpfd >= 0)
		close(selfpfd);
	uint32_t epoch = atomic_load_explicit(&o->h->owner_epoch, RELAXED);
	bool restarted = epoch > 0;
	o->epoch = epoch + 1;
	o->next_gen = (uint64_t)o->epoch << 40;
	atomic_store_explicit(&o->h->owner_pid, (uint32_t)getpid(), RELAXED);
	atomic_store_explicit(&o->h->owner_epoch, o->epoch, RELEASE);
	atomic_store_explicit(&o->h->shutting_down, 0, RELAXED);
	atomic_store_explicit(&o->h->closed, 0, RELAXED);
	if (restarted)
		bump(&o->h->metrics.owner_restarts_total, 1);
	/* parked keys were the previous owner's private state: none is parked now */
	atomic_store_explicit(&o->h->metrics.parked, 0, RELAXED);
	for (unsigned i = 0; i < IPC_QUEUE_PARKED_SHOWN; i++)
		if (o->h->parked[i].keylen)
			show_write(&o->h->parked[i], NULL, 0);
	ipc_bucket_init(&o->bucket, o->cfg.qps < 0 ? 0 : o->cfg.qps, o->cfg.burst, ipc_now_usec());
	adopt(o);
	atomic_store_explicit(&o->h->owner_waiting, 0, RELAXED);
	r = ipc_loop_add_futex(loop, &o->doorbell, (const uint32_t *)&o->h->owner_waiting, 1,
	                       on_doorbell, o);
	if (r < 0)
		goto fail;
	r = ipc_loop_add_timer(loop, &o->timer, 0, on_timer, o);
	if (r < 0)
		goto fail;
	r = ipc_loop_add_post(loop, &o->post, on_post, o);
	if (r < 0)
		goto fail;
	if (o->cfg.resync)
		o->cfg.resync(o, restarted, o->cfg.userdata);
	r = ipc_queue_owner_pump(o);
	if (r < 0)
		goto fail;
	*ret = o;
	return 0;
fail:
	ipc_queue_owner_free(o);
	return r;
}

struct ipc_queue_owner *ipc_queue_owner_free(struct ipc_queue_owner *o)
{
	if (!o)
		return NULL;
	ipc_source_free(o->doorbell);
	ipc_source_free(o->timer);
	ipc_source_free(o->post);
	for (uint32_t i = 0; o->workers && i < o->nw; i++)
		untrack(&o->workers[i]);
	for (uint32_t i = 0; i < IPC_QUEUE_MAX_PRODUCERS; i++)
		untrack(&o->producers[i]);
	if (o->buckets) {
		for (size_t i = 0; i < o->nbuckets; i++)
			for (struct item *it = o->buckets[i], *n; it; it = n) {
				n = it->hnext;
				free(it);
			}
		free(o->buckets);
	}
	while (o->spare) {
		struct item *n = o->spare->hnext;
		free(o->spare);
		o->spare = n;
	}
	free(o->heap);
	free(o->workers);
	free(o->leased);
	free(o->wmask);
	if (o->h) {
		uint32_t me = (uint32_t)getpid();
		atomic_compare_exchange_strong(&o->h->owner_pid, &me, 0);
		unmap_queue(o->h, o->nw);
	}
	if (o->memfd >= 0)
		close(o->memfd);
	ipc_journal_close(o->journal);
	free(o);
	return NULL;
}

struct rejournal {
	struct ipc_queue_owner *o;
	int n;
};

static int requeue_journaled(const char *key, uint32_t slot, void *ud)
{
	struct rejournal *rj = ud;
	struct item *it = get_item(rj->o, key, strlen(key), true);
	if (!it)
		return -ENOMEM;
	it->jslot = slot + 1;
	do_add(rj->o, it);
	rj->n++;
	return 0;
}

int ipc_queue_owner_attach_journal(struct ipc_queue_owner *o, int memfd)
{
	if (!o || memfd < 0 || o->journal)
		return -EINVAL;
	int r = ipc_journal_open(memfd, &o->journal);
	if (r < 0)
		return r;
	struct rejournal rj = {o, 0};
	if ((r = ipc_journal_foreach(o->journal, requeue_journaled, &rj)) < 0)
		return r;
	if (rj.n && !o->in_pump)
		ipc_source_post_enable(o->post);
	return rj.n;
}

void ipc_queue_owner_set_durable(struct ipc_queue_owner *o, bool on)
{
	if (o)
		o->durable = on && o->journal;
}

size_t ipc_queue_owner_durable_keys(const struct ipc_queue_owner *o)
{
	struct ipc_journal_stats st = {0};
	if (o && o->journal)
		ipc_journal_stats(o->journal, &st);
	return (size_t)st.live;
}

static int owner_key(struct ipc_queue_owner *o, const char *key, struct item **ret)
{
	size_t n;
	int r = key_check(key, &n);
	if (r < 0)
		return r;
	*ret = get_item(o, key, n, true);
	if (!*ret)
		return -ENOMEM;
	if (o->durable && o->journal && !(*ret)->jslot && !o->shutting_down) {
		int64_t sl = ipc_journal_put(o->journal, key);
		if (sl >= 0)
			(*ret)->jslot = (uint32_t)sl + 1;
		else
			o->journal_errors++; /* queued all the same, only not durable */
	}
	return 0;
}

int ipc_queue_owner_add(struct ipc_queue_owner *o, const char *key)
{
	struct item *it;
	if (o && key && o->cfg.accept && !o->cfg.accept(key, o->cfg.userdata))
		return 0;
	int r = owner_key(o, key, &it);
	if (r < 0)
		return r;
	if (o->shutting_down) {
		maybe_free(o, it);
		return -ESHUTDOWN;
	}
	do_add(o, it);
	if (!o->in_pump)
		ipc_source_post_enable(o->post); /* dispatch once per loop iteration */
	return 0;
}

int ipc_queue_owner_add_after(struct ipc_queue_owner *o, const char *key, uint64_t delay_usec)
{
	struct item *it;
	if (o && key && o->cfg.accept && !o->cfg.accept(key, o->cfg.userdata))
		return 0;
	int r = owner_key(o, key, &it);
	if (r < 0)
		return r;
	if (o->shutting_down) {
		maybe_free(o, it);
		return -ESHUTDOWN;
	}
	r = do_add_after(o, it, delay_usec);
	if (!o->in_pump)
		ipc_source_post_enable(o->post); /* dispatch once per loop iteration */
	return r;
}

int ipc_queue_owner_add_rate_limited(struct ipc_queue_owner *o, const char *key)
{
	struct item *it;
	if (o && key && o->cfg.accept && !o->cfg.accept(key, o->cfg.userdata))
		return 0;
	int r = owner_key(o, key, &it);
	if (r < 0)
		return r;
	if (o->shutting_down) {
		maybe_free(o, it);
		return -ESHUTDOWN;
	}
	r = do_add_rate_limited(o, it);
	if (!o->in_pump)
		ipc_source_post_enable(o->post); /* dispatch once per loop iteration */
	return r;
}

int ipc_queue_owner_forget(struct ipc_queue_owner *o, const char *key)
{
	size_t n;
	int r = key_check(key, &n);
	if (r < 0)
		return r;
	struct item *it = get_item(o, key, n, false);
	if (it) {
		it->failures = 0;
		maybe_free(o, it);
	}
	return 0;
}

int ipc_queue_owner_num_requeues(struct ipc_queue_owner *o, const char *key)
{
	size_t n;
	int r = key_check(key, &n);
	if (r < 0)
		return r;
	struct item *it = get_item(o, key, n, false);
	return it ? (int)it->failures : 0;
}

size_t ipc_queue_owner_len(const struct ipc_queue_owner *o)
{
	return o->flen;
}
size_t ipc_queue_owner_processing(const struct ipc_queue_owner *o)
{
	return o->nprocessing;
}

int ipc_queue_owner_shutdown(struct ipc_queue_owner *o)
{
	if (o->shutting_down)
		return 0;
	o->shutting_down = true;
	atomic_store_explicit(&o->h->shutting_down, 1, RELEASE);
	while (o->nheap) { /* client-go drops what waits in the delaying queue */
		struct item *it = o->heap[0];
		hremove(o, it);
		maybe_free(o, it);
	}
	arm_timer(o);
	dispatch(o);
	close_if_drained(o);
	return 0;
}

bool ipc_queue_owner_drained(const struct ipc_queue_owner *o)
{
	return o->flen == 0 && o->nprocessing == 0;
}

int ipc_queue_owner_unpark(struct ipc_queue_owner *o, const char *key)
{
	size_t n;
	int r = key_check(key, &n);
	if (r < 0)
		return r;
	struct item *it = get_item(o, key, n, false);
	if (!it || !it->parked)
		return -ENOENT;
	unpark_item(o, it);
	return ipc_queue_owner_add(o, key);
}

size_t ipc_queue_owner_unpark_all(struct ipc_queue_owner *o)
{
	size_t n = 0;

	for (size_t b = 0; b < o->nbuckets; b++)
		for (struct item *it = o->buckets[b], *next; it; it = next) {
			next = it->hnext;
			it->parks = 0;
			if (it->parked) {
				unpark_item(o, it);
				do_add(o, it);
				n++;
			} else
				it->crashes = 0;
			maybe_free(o, it);
		}
	if (n && !o->in_pump)
		ipc_source_post_enable(o->post);
	return n;
}

/* ======================================================================================== */
/* Client                                                                                     */
/* ======================================================================================== */

struct ipc_queue {
	int memfd;
	struct ipc_q_header *h;
	uint32_t nw; /* max_workers as validated by map_queue (the mapping's size) */
	struct ipc_q_producer *p;
	struct ipc_q_worker *w;
	uint64_t add_timeout_usec;
	bool holding;
	uint32_t held_requeues;
	uint64_t held_gen;
	uint64_t got_ns;
	uint32_t spin_ns; /* 0: never spin */
	struct ipc_source *watch;
	void (*watch_cb)(struct ipc_queue *, void *);
	void *watch_ud;
};

/* pidfs inode of a pidfd: unique per process on Linux >= 6.9 (0 if unknown). */
static uint64_t pidfd_ino(int pfd)
{
	struct stat st;
	return pfd >= 0 && fstat(pfd, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

static int claim(_Atomic uint32_t *pidw, _Atomic uint64_t *inow, _Atomic uint32_t *detw,
                 uint64_t my_ino)
{
	uint32_t zero = 0;
	/* acq_rel: acquire pairs with the owner's release in reset_*_slot (see the reset
	 * counters); release publishes our claim to the owner's scan_slot */
	if (!atomic_compare_exchange_strong_explicit(pidw, &zero, (uint32_t)getpid(),
	                                             memory_order_acq_rel, RELAXED))
		return -EBUSY;
	/* read by the owner after it sees attach_seq move (our fetch_add comes after this) */
	atomic_store_explicit(inow, my_ino, RELAXED);
	atomic_store_explicit(detw, 0, RELAXED); /* ours now: clear a stale detach */
	return 0;
}

int ipc_queue_attach(struct ipc_queue **ret, int memfd, unsigned roles, unsigned prefetch)
{
	if (!ret || memfd < 0 || !roles || (roles & ~3u))
		return -EINVAL;
	if (prefetch == 0)
		prefetch = 1;
	if (prefetch > IPC_QUEUE_LEASE_RING)
		return -EINVAL;
	pthread_once(&tsc_once, tsc_calibrate);
	struct ipc_queue *q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->memfd = -1;
	q->add_timeout_usec = 10000000;
	q->spin_ns = 20000;
	int r = map_queue(memfd, &q->h, &q->nw, true);
	if (r < 0)
		goto fail;
	q->memfd = fcntl(memfd, F_DUPFD_CLOEXEC, 3);
	if (q->memfd < 0) {
		r = -errno;
		goto fail;
	}
	int selfpfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	uint64_t my_ino = pidfd_ino(selfpfd);
	if (selfpfd >= 0)
		close(selfpfd);
	if (roles & IPC_QUEUE_PRODUCER) {
		for (uint32_t i = 0; i < IPC_QUEUE_MAX_PRODUCERS && !q->p; i++)
			if (claim(&q->h->producers[i].pid, &q->h->producers[i].pid_ino,
			          &q->h->producers[i].detached, my_ino) == 0)
				q->p = &q->h->producers[i];
		if (!q->p) {
			r = -ENOSPC;
			goto fail;
		}
	}
	if (roles & IPC_QUEUE_WORKER) {
		for (uint32_t i = 0; i < q->nw && !q->w; i++)
			if (claim(&q->h->workers[i].pid, &q->h->workers[i].pid_ino,
			          &q->h->workers[i].detached, my_ino) == 0)
				q->w = &q->h->workers[i];
		if (!q->w) {
			/* the producer slot we may hold is reclaimed by the owner at our exit */
			r = -ENOSPC;
			goto fail;
		}
		atomic_store_explicit(&q->w->cpu, my_cpu(), RELAXED);
		atomic_store_explicit(&q->w->prefetch, prefetch, RELAXED);
	}
	atomic_fetch_add_explicit(&q->h->attach_seq, 1,
	                          SEQ_CST); /* after the claim CAS: see pass() */
	wake_flag(&q->h->owner_waiting);    /* let the owner see the new slot now */
	*ret = q;
	return 0;
fail:
	ipc_queue_free(q);
	return r;
}

struct ipc_queue *ipc_queue_free(struct ipc_queue *q)
{
	if (!q)
		return NULL;
	ipc_source_free(q->watch);
	if (q->h) {
		/* Hand the slots back (the owner resets them; a key still held is re-queued). The
		 * release orders our last Adds / replies before the flag (see pass()). */
		uint32_t me = (uint32_t)getpid();
		if (q->p && atomic_load_explicit(&q->p->pid, RELAXED) == me)
			atomic_store_explicit(&q->p->detached, 1, RELEASE);
		if (q->w && atomic_load_explicit(&q->w->pid, RELAXED) == me)
			atomic_store_explicit(&q->w->detached, 1, RELEASE);
		if (q->p || q->w)
			wake_flag(&q->h->owner_waiting);
		unmap_queue(q->h, q->nw);
	}
	if (q->memfd >= 0)
		close(q->memfd);
	free(q);
	return NULL;
}

void ipc_queue_set_add_timeout(struct ipc_queue *q, uint64_t timeout_usec)
{
	q->add_timeout_usec = timeout_usec;
}

static int push_add(struct ipc_queue *q, uint32_t op, const char *key, uint64_t u64)
{
	if (!q->p)
		return -EPERM;
	size_t n;
	int r = key_check(key, &n);
	if (r < 0)
		return r;
	struct ipc_q_producer *p = q->p;
	uint32_t tail = atomic_load_explicit(&p->tail, RELAXED);
	uint64_t deadline = 0;
	/* acquire pairs with the owner's release of head in drain_adds: the slot is free */
	while (tail - atomic_load_explicit(&p->head, ACQUIRE) >= IPC_QUEUE_ADD_RING) {
		uint64_t now = ipc_now_usec();
		if (!deadline)
			deadline = now + q->add_timeout_usec;
		if (now >= deadline)
			return -ETIMEDOUT;
		wake_flag(&q->h->owner_waiting);
		atomic_store_explicit(&p->space_waiting, 1, RELAXED);
		atomic_thread_fence(SEQ_CST); /* pairs with wake_flag() in drain_adds */
		if (tail - atomic_load_explicit(&p->head, ACQUIRE) >= IPC_QUEUE_ADD_RING) {
			uint64_t left = deadline - now;
			ipc_futex_wait((const uint32_t *)&p->space_waiting, 1,
			               left < 100000 ? left : 100000);
		}
		atomic_store_explicit(&p->space_waiting, 0, RELAXED);
	}
	struct ipc_q_rec *rec = &p->ring[tail & (IPC_QUEUE_ADD_RING - 1)];
	rec->u64 = u64;
	rec->op = op;
	rec->arg = 0;
	rec->keylen = (uint16_t)n;
	memcpy(rec->key, key, n);
	rec->key[n] = 0;
	atomic_store_explicit(&p->tail, tail + 1, RELEASE); /* pairs with acquire in drain_adds */
	wake_flag(&q->h->owner_waiting);
	return 0;
}

int ipc_queue_add(struct ipc_queue *q, const char *key)
{
	return push_add(q, IPC_Q_OP_ADD, key, 0);
}
int ipc_queue_add_after(struct ipc_queue *q, const char *key, uint64_t delay_usec)
{
	return push_add(q, IPC_Q_OP_ADD_AFTER, key, delay_usec);
}
int ipc_queue_add_rate_limited(struct ipc_queue *q, const char *key)
{
	return push_add(q, IPC_Q_OP_ADD_RATE_LIMITED, key, 0);
}
int ipc_queue_forget(struct ipc_queue *q, const char *key)
{
	return push_add(q, IPC_Q_OP_FORGET, key, 0);
}

/* A lease is available (W2): head < tail. */
static inline bool lease_ready(struct ipc_q_worker *w, uint32_t head)
{
	/* pairs with the release store of the record's seq in dispatch() */
	return __atomic_load_n(&w->lease[head & (IPC_QUEUE_LEASE_RING - 1)].op, __ATOMIC_ACQUIRE) ==
	       head + 1;
}

int ipc_queue_get(struct ipc_queue *q, char *key, size_t keysz, uint64_t timeout_usec)
{
	if (!q->w)
		return -EPERM;
	if (q->holding)
		return -EBUSY;
	struct ipc_q_worker *w = q->w;
	uint32_t head = atomic_load_explicit(&w->lease_head, RELAXED);
	if (!lease_ready(w, head)) {
		if (timeout_usec == 0)
			return atomic_load_explicit(&q->h->closed, ACQUIRE) ? -ESHUTDOWN : -EAGAIN;
		uint32_t me = my_cpu();
		atomic_store_explicit(&w->cpu, me, RELAXED);
		bool spin = q->spin_ns && atomic_load_explicit(&q->h->owner_cpu, RELAXED) != me;
		bool got = false;
		if (spin) {
			uint64_t end = now_ns() + q->spin_ns;
			for (unsigned k = 0;; k++) {
				cpu_relax();
				if (lease_ready(w, head)) {
					got = true;
					break;
				}
				if ((k & 63) == 63 && now_ns() > end)
					break;
			}
		}
		uint64_t deadline =
		        timeout_usec == UINT64_MAX ? UINT64_MAX : ipc_now_usec() + timeout_usec;
		while (!got) {
			if (lease_ready(w, head))
				break;
			if (atomic_load_explicit(&q->h->closed,
			                         ACQUIRE)) /* pairs with close_if_drained */
				return lease_ready(w, head) ? ipc_queue_get(q, key, keysz, 0)
				                            : -ESHUTDOWN;
			uint64_t now = ipc_now_usec();
			if (now >= deadline)
				return -ETIMEDOUT;
			/* W3 sleeper side: flag, fence, re-check, sleep on the flag */
			atomic_store_explicit(&w->waiting, 1, RELAXED);
			atomic_thread_fence(SEQ_CST); /* pairs with wake_flag() in dispatch */
			if (!lease_ready(w, head) && !atomic_load_explicit(&q->h->closed, ACQUIRE))
				ipc_futex_wait((const uint32_t *)&w->waiting, 1,
				               deadline == UINT64_MAX ? UINT64_MAX
				                                      : deadline - now);
			atomic_store_explicit(&w->waiting, 0, RELAXED);
		}
	}
	const struct ipc_q_rec *rec = &w->lease[head & (IPC_QUEUE_LEASE_RING - 1)];
	size_t n = rec->keylen;
	if (n > IPC_QUEUE_KEY_MAX)
		return -EPROTO;
	if (keysz < n + 1)
		return -ENOBUFS;
	memcpy(key, rec->key, n);
	key[n] = 0;
	q->held_gen = rec->u64;
	q->held_requeues = rec->arg;
	q->holding = true;
	q->got_ns = now_ns();
	atomic_store_explicit(&w->lease_head, head + 1,
	                      RELEASE); /* pairs with acquire in worker_died */
	return (int)n;
}

int ipc_queue_num_requeues(const struct ipc_queue *q)
{
	return q->holding ? (int)q->held_requeues : -ENOENT;
}

int ipc_queue_done(struct ipc_queue *q, unsigned flags, uint64_t after_usec)
{
	if (!q->w)
		return -EPERM;
	if (!q->holding)
		return -ENOENT;
	struct ipc_q_worker *w = q->w;
	uint32_t tail = atomic_load_explicit(&w->reply_tail, RELAXED);
	struct ipc_q_reply *rp = &w->reply[tail & (IPC_QUEUE_LEASE_RING - 1)];
	rp->gen = q->held_gen;
	rp->flags = flags & (IPC_Q_REPLY_FORGET | IPC_Q_REPLY_RATE_LIMITED | IPC_Q_REPLY_AFTER);
	rp->pad = 0;
	rp->after_usec = after_usec;
	rp->work_ns = now_ns() - q->got_ns;
	atomic_store_explicit(&w->reply_tail, tail + 1,
	                      RELEASE); /* pairs with acquire in drain_replies */
	q->holding = false;
	wake_flag(&q->h->owner_waiting);
	return 0;
}

static int on_watch(struct ipc_source *s, int res, void *ud)
{
	(void)s;
	(void)res;
	struct ipc_queue *q = ud;
	atomic_store_explicit(&q->w->waiting, 0, RELAXED);
	q->watch_cb(q, q->watch_ud);
	return 0;
}

int ipc_queue_watch(struct ipc_queue *q, struct ipc_loop *loop,
                    void (*cb)(struct ipc_queue *, void *), void *userdata)
{
	if (!q->w || !cb)
		return -EPERM;
	q->watch_cb = cb;
	q->watch_ud = userdata;
	struct ipc_q_worker *w = q->w;
	atomic_store_explicit(&w->waiting, 1, RELAXED);
	atomic_thread_fence(SEQ_CST); /* pairs with wake_flag() in dispatch */
	/* Wait while the flag is 1. Ready already: put the flag back to 0 ourselves, so the wait
	 * sees 0 != 1 and fires at once. (Waiting for 0 instead raced with dispatch: the owner may
	 * turn the flag to 0 before the loop submits the wait, which then sleeps on a 0 nobody
	 * wakes; the owner only ever turns 1 into 0.) */
	const uint32_t expected = 1;
	if (lease_ready(w, atomic_load_explicit(&w->lease_head, RELAXED)) ||
	    atomic_load_explicit(&q->h->closed, ACQUIRE))
		atomic_store_explicit(&w->waiting, 0, RELAXED);
	if (q->watch)
		return ipc_source_futex_arm(q->watch, expected);
	return ipc_loop_add_futex(loop, &q->watch, (const uint32_t *)&w->waiting, expected,
	                          on_watch, q);
}

int ipc_queue_metrics_read(int memfd, struct ipc_queue_metrics *out)
{
	struct ipc_q_header *h;
	uint32_t nw;
	int r = map_queue(memfd, &h, &nw, false); /* kcmctl may hold an O_RDONLY fd */
	if (r < 0)
		return r;
	memset(out, 0, sizeof(*out));
	memcpy(out->name, h->name, IPC_QUEUE_NAME_MAX);
	const struct ipc_q_metrics *m = &h->metrics;
	out->depth = atomic_load_explicit(&m->depth, RELAXED);
	out->adds_total = atomic_load_explicit(&m->adds_total, RELAXED);
	out->retries_total = atomic_load_explicit(&m->retries_total, RELAXED);
	out->parked = atomic_load_explicit(&m->parked, RELAXED);
	out->parked_total = atomic_load_explicit(&m->parked_total, RELAXED);
	out->worker_deaths_total = atomic_load_explicit(&m->worker_deaths_total, RELAXED);
	out->owner_restarts_total = atomic_load_explicit(&m->owner_restarts_total, RELAXED);
	out->protocol_errors_total = atomic_load_explicit(&m->protocol_errors_total, RELAXED);
	out->unfinished_work_seconds =
	        (double)atomic_load_explicit(&m->unfinished_work_ns, RELAXED) / 1e9;
	out->longest_running_processor_seconds =
	        (double)atomic_load_explicit(&m->longest_running_ns, RELAXED) / 1e9;
	uint64_t cq = 0, cw = 0;
	for (unsigned i = 0; i < IPC_QUEUE_HIST_BUCKETS; i++) {
		cq += atomic_load_explicit(&m->queue_duration.bucket[i], RELAXED);
		cw += atomic_load_explicit(&m->work_duration.bucket[i], RELAXED);
		out->queue_duration_le[i] = cq;
		out->work_duration_le[i] = cw;
	}
	out->queue_duration_count = atomic_load_explicit(&m->queue_duration.count, RELAXED);
	out->queue_duration_sum =
	        (double)atomic_load_explicit(&m->queue_duration.sum_ns, RELAXED) / 1e9;
	out->work_duration_count = atomic_load_explicit(&m->work_duration.count, RELAXED);
	out->work_duration_sum =
	        (double)atomic_load_explicit(&m->work_duration.sum_ns, RELAXED) / 1e9;
	unmap_queue(h, nw);
	return 0;
}

int ipc_queue_parked_read(int memfd, struct ipc_queue_parked_key *out, size_t n)
{
	struct ipc_q_header *h;
	uint32_t nw;
	int r = map_queue(memfd, &h, &nw, false);
	if (r < 0)
		return r;
	size_t got = 0;
	for (unsigned i = 0; i < IPC_QUEUE_PARKED_SHOWN && got < n; i++) {
		const struct ipc_q_parked *p = &h->parked[i];
		for (int attempt = 0; attempt < 8; attempt++) {
			uint32_t s1 = atomic_load_explicit(&p->seq, ACQUIRE);
			if (s1 & 1)
				continue;
			uint16_t len = p->keylen;
			if (!len || len > IPC_QUEUE_KEY_MAX)
				break;
			struct ipc_queue_parked_key k = {.crashes = p->crashes,
			                                 .parks = p->parks,
			                                 .unpark_at_usec = p->unpark_at};
			memcpy(k.key, p->key, len);
			k.key[len] = 0;
			atomic_thread_fence(
			        memory_order_acquire); /* the copy before the re-check */
			if (atomic_load_explicit(&p->seq, RELAXED) != s1)
				continue; /* torn: the owner rewrote the slot meanwhile */
			out[got++] = k;
			break;
		}
	}
	unmap_queue(h, nw);
	return (int)got;
}
