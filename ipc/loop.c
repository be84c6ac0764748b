/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ipc/loop.c: the event loop (see loop.h for the design note).
 *
 * user_data encoding (the ONE place it is defined; io_uring CQEs and epoll events use the same):
 *
 *     63      56 55                32 31                        0
 *    +----------+--------------------+---------------------------+
 *    |   tag    | source gen (24 b)  |  source slot index (32 b) |
 *    +----------+--------------------+---------------------------+
 *
 *   tag UD_SRC    : completion of the source's one in-flight operation (POLL_ADD or FUTEX_WAIT)
 *   tag UD_IGNORE : completions nobody waits for (cancels, poll removes, failed op-52 wakes);
 *                   the whole user_data is 0 for those
 *   tag UD_HELPER : epoll only: the futex helper thread's eventfd
 *   A completion whose slot is empty or whose gen differs from the slot's source is stale and
 *   dropped. A source freed while the kernel still holds its operation stays allocated
 *   (s->dead) until that operation's CQE arrives, so a slot is never reused under a live SQE.
 *
 * Every cqe->res is checked: POLL_ADD res<0 other than -ECANCELED is reported to the io callback
 * as POLLERR; FUTEX_WAIT res is passed through (0 / -EAGAIN; -ECANCELED only after a free).
 */
#include "ipc/loop.h"

#include <errno.h>
#include <limits.h>
#include <liburing.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef IORING_OP_FUTEX_WAIT
#define IORING_OP_FUTEX_WAIT 51
#define IORING_OP_FUTEX_WAKE 52
#endif
#ifndef FUTEX2_SIZE_U32
#define FUTEX2_SIZE_U32 0x02
#endif
#ifndef FUTEX_BITSET_MATCH_ANY
#define FUTEX_BITSET_MATCH_ANY 0xffffffff
#endif
#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif

enum { UD_IGNORE = 0, UD_SRC = 1, UD_HELPER = 2 };
#define UD(tag, gen, idx) (((uint64_t)(tag) << 56) | ((uint64_t)((gen)&0xffffff) << 32) | (idx))
#define UD_TAG(ud)        ((unsigned)((ud) >> 56))
#define UD_GEN(ud)        ((uint32_t)(((ud) >> 32) & 0xffffff))
#define UD_IDX(ud)        ((uint32_t)(ud))

enum kind { K_IO, K_TIMER, K_PIDFD, K_SIGNAL, K_FUTEX, K_POST };

struct ipc_source {
	struct ipc_loop *loop;
	enum kind kind;
	uint32_t idx, gen;
	void *userdata;
	union {
		ipc_io_fn io;
		ipc_timer_fn timer;
		ipc_signal_fn sig;
		ipc_futex_fn futex;
	} cb;
	int fd;                /* io/pidfd/signal: the polled fd */
	uint32_t events;       /* wanted poll mask (io) */
	uint32_t armed_events; /* mask the kernel holds (io_uring in-flight / epoll registered) */
	bool inflight;         /* io_uring: an SQE of ours is in the kernel */
	bool cancelling;       /* io_uring: a cancel/remove for it was queued */
	bool dead;             /* freed by the user, memory kept until inflight ends */
	bool dispatching;
	bool fired; /* pidfd: already reported */
	/* timer */
	uint64_t when;
	size_t heap_idx; /* SIZE_MAX: not in the heap */
	/* futex */
	const uint32_t *word;
	uint32_t expected;
	uint32_t mask; /* the wait's bitset (io_uring); 0 = every bit */
	bool futex_armed;
	bool futex_ready; /* epoll: helper saw it fire; res pending */
	bool post_pending;
};

struct ipc_loop {
	bool uring;
	bool restricted; /* the ring accepts only the loop's own opcodes (uring_init) */
	int fallback_reason;
	struct io_uring ring;
	int epfd;
	struct ipc_source **slots;
	uint32_t nslots, cap_slots;
	uint32_t *free_idx;
	uint32_t nfree;
	uint32_t next_gen;
	struct ipc_source **heap;
	size_t nheap, cap_heap;
	uint32_t npost_pending;
	bool exit_requested;
	int exit_code;
	unsigned pending_sqes;
	/* epoll futex helper */
	pthread_t helper;
	bool helper_running;
	pthread_mutex_t hlock;
	uint32_t hctl; /* control futex word: bumped by the loop thread (futex_wake pairs) */
	uint32_t hstop;
	int hefd;
	struct ipc_source **fw; /* armed futex sources */
	size_t nfw, cap_fw;
};

uint64_t ipc_now_usec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

int ipc_futex_wake(const uint32_t *word, int n)
{
	long r = syscall(SYS_futex, word, FUTEX_WAKE, n, NULL, NULL, 0);
	return r < 0 ? -errno : (int)r;
}

int ipc_futex_wake_bits(const uint32_t *word, int n, uint32_t bits)
{
	long r = syscall(SYS_futex, word, FUTEX_WAKE_BITSET, n, NULL, NULL,
	                 bits ? bits : FUTEX_BITSET_MATCH_ANY);
	return r < 0 ? -errno : (int)r;
}

int ipc_futex_wait(const uint32_t *word, uint32_t expected, uint64_t timeout_usec)
{
	struct timespec ts, *tsp = NULL;
	if (timeout_usec != UINT64_MAX) {
		ts.tv_sec = (time_t)(timeout_usec / 1000000u);
		ts.tv_nsec = (long)(timeout_usec % 1000000u) * 1000;
		tsp = &ts;
	}
	long r = syscall(SYS_futex, word, FUTEX_WAIT, expected, tsp, NULL, 0);
	if (r < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	return 0;
}

/* ---- slot table ------------------------------------------------------------------------- */
static int slot_alloc(struct ipc_loop *l, struct ipc_source *s)
{
	uint32_t idx;
	if (l->nfree > 0)
		idx = l->free_idx[--l->nfree];
	else {
		if (l->nslots == l->cap_slots) {
			uint32_t nc = l->cap_slots ? l->cap_slots * 2 : 16;
			struct ipc_source **n = realloc(l->slots, nc * sizeof(*n));
			if (!n)
				return -ENOMEM;
			l->slots = n;
			uint32_t *f = realloc(l->free_idx, nc * sizeof(*f));
			if (!f)
				return -ENOMEM;
			l->free_idx = f;
			l->cap_slots = nc;
		}
		idx = l->nslots++;
	}
	l->slots[idx] = s;
	s->idx = idx;
	s->gen = (++l->next_gen) & 0xffffff;
	return 0;
}

static void slot_release(struct ipc_loop *l, struct ipc_source *s)
{
	l->slots[s->idx] = NULL;
	l->free_idx[l->nfree++] = s->idx;
}

/* ---- timer heap (min by when) --------------------------------------------------------- */
static void heap_swap(struct ipc_loop *l, size_t a, size_t b)
{
	struct ipc_source *t = l->heap[a];
	l->heap[a] = l->heap[b];
	l->heap[b] = t;
	l->heap[a]->heap_idx = a;
	l->heap[b]->heap_idx = b;
}
static void heap_up(struct ipc_loop *l, size_t i)
{
	while (i > 0 && l->heap[(i - 1) / 2]->when > l->heap[i]->when) {
		heap_swap(l, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}
static void heap_down(struct ipc_loop *l, size_t i)
{
	for (;;) {
		size_t m = i, a = 2 * i + 1, b = a + 1;
		if (a < l->nheap && l->heap[a]->when < l->heap[m]->when)
			m = a;
		if (b < l->nheap && l->heap[b]->when < l->heap[m]->when)
			m = b;
		if (m == i)
			return;
		heap_swap(l, i, m);
		i = m;
	}
}
static void heap_remove(struct ipc_loop *l, struct ipc_source *s)
{
	size_t i = s->heap_idx;
	if (i == SIZE_MAX)
		return;
	s->heap_idx = SIZE_MAX;
	if (i != --l->nheap) {
		l->heap[i] = l->heap[l->nheap];
		l->heap[i]->heap_idx = i;
		heap_down(l, i);
		heap_up(l, i);
	}
}
static int heap_insert(struct ipc_loop *l, struct ipc_source *s)
{
	if (l->nheap == l->cap_heap) {
		size_t nc = l->cap_heap ? l->cap_heap * 2 : 16;
		struct ipc_source **n = realloc(l->heap, nc * sizeof(*n));
		if (!n)
			return -ENOMEM;
		l->heap = n;
		l->cap_heap = nc;
	}
	s->heap_idx = l->nheap;
	l->heap[l->nheap++] = s;
	heap_up(l, s->heap_idx);
	return 0;
}

/* ---- io_uring plumbing ------------------------------------------------------------------ */
static struct io_uring_sqe *get_sqe(struct ipc_loop *l)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&l->ring);
	if (!sqe) {
		io_uring_submit(&l->ring); /* SQ full: flush, then there is room */
		l->pending_sqes = 0;
		sqe = io_uring_get_sqe(&l->ring);
	}
	if (sqe)
		l->pending_sqes++;
	return sqe;
}

static void prep_futex_wait(struct io_uring_sqe *sqe, const uint32_t *word, uint32_t expected,
                            uint32_t mask)
{
	/* Hand-built op 51: fd = futex2 flags (SIZE_U32, shared), addr = word, addr2 (off) = the
	 * expected value, addr3 = bitset mask; len, op flags, buf/file index must be zero. */
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_FUTEX_WAIT;
	sqe->fd = FUTEX2_SIZE_U32;
	sqe->addr = (uint64_t)(uintptr_t)word;
	sqe->off = expected;
	sqe->addr3 = mask ? mask : FUTEX_BITSET_MATCH_ANY;
}

static void prep_futex_wake(struct io_uring_sqe *sqe, const uint32_t *word, int n, uint32_t bits)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_FUTEX_WAKE;
	sqe->fd = FUTEX2_SIZE_U32;
	sqe->addr = (uint64_t)(uintptr_t)word;
	sqe->off = (uint64_t)n;
	sqe->addr3 = bits ? bits : FUTEX_BITSET_MATCH_ANY;
	sqe->flags = IOSQE_CQE_SKIP_SUCCESS;
}

static void uring_cancel(struct ipc_loop *l, struct ipc_source *s)
{
	if (!s->inflight || s->cancelling)
		return;
	struct io_uring_sqe *sqe = get_sqe(l);
	if (!sqe)
		return; /* cannot happen after a flush; the op then completes by itself */
	if (s->kind == K_FUTEX)
		io_uring_prep_cancel64(sqe, UD(UD_SRC, s->gen, s->idx), 0);
	else
		io_uring_prep_poll_remove(sqe, UD(UD_SRC, s->gen, s->idx));
	io_uring_sqe_set_data64(sqe, 0);
	s->cancelling = true;
}

/* Brings the kernel's view of an fd source in line with s->events (both backends). */
static int io_sync(struct ipc_source *s)
{
	struct ipc_loop *l = s->loop;
	uint32_t want = s->dead ? 0 : s->events;
	if (s->kind == K_PIDFD && s->fired)
		want = 0;
	if (l->uring) {
		if (s->inflight) {
			if (s->armed_events != want)
				uring_cancel(l, s); /* re-armed from its -ECANCELED completion */
			return 0;
		}
		if (!want || s->dispatching)
			return 0; /* dispatch re-arms after the callback */
		struct io_uring_sqe *sqe = get_sqe(l);
		if (!sqe)
			return -EBUSY;
		io_uring_prep_poll_add(sqe, s->fd, want);
		io_uring_sqe_set_data64(sqe, UD(UD_SRC, s->gen, s->idx));
		s->inflight = true;
		s->cancelling = false;
		s->armed_events = want;
		return 0;
	}
	if (s->armed_events == want)
		return 0;
	struct epoll_event ev = {.events = want, .data.u64 = UD(UD_SRC, s->gen, s->idx)};
	int r;
	if (!want)
		r = epoll_ctl(l->epfd, EPOLL_CTL_DEL, s->fd, NULL);
	else if (!s->armed_events)
		r = epoll_ctl(l->epfd, EPOLL_CTL_ADD, s->fd, &ev);
	else
		r = epoll_ctl(l->epfd, EPOLL_CTL_MOD, s->fd, &ev);
	if (r < 0)
		return -errno;
	s->armed_events = want;
	return 0;
}

/* ---- epoll futex helper thread ------------------------------------------------------------
 * The loop thread owns l->fw (armed futex sources) under hlock. The helper snapshots it, then
 * futex_waitv()s on every word plus hctl. When the loop changes the set it bumps hctl and wakes
 * it (release via the mutex; the futex word itself is read by the kernel). When a word fires
 * the helper marks it ready, writes the eventfd and parks on hctl until the loop re-publishes. */
struct waitv {
	uint64_t val;
	uint64_t uaddr;
	uint32_t flags;
	uint32_t rsvd;
};

static void *helper_main(void *arg)
{
	struct ipc_loop *l = arg;
	struct waitv *wv = NULL;
	struct ipc_source **who = NULL;
	size_t cap = 0;
	for (;;) {
		pthread_mutex_lock(&l->hlock);
		if (l->hstop) {
			pthread_mutex_unlock(&l->hlock);
			break;
		}
		size_t n = l->nfw;
		if (n + 1 > cap) {
			size_t nc = (n + 1) * 2;
			struct waitv *nw = realloc(wv, nc * sizeof(*nw));
			struct ipc_source **nwho = nw ? realloc(who, nc * sizeof(*nwho)) : NULL;
			if (nw)
				wv = nw;
			if (nwho)
				who = nwho;
			if (!nw || !nwho) {
				pthread_mutex_unlock(&l->hlock);
				usleep(1000);
				continue;
			}
			cap = nc;
		}
		/* hctl is only written under hlock, so a plain read here is the value the loop
		 * published; a later bump makes futex_waitv return -EAGAIN or wakes it. */
		uint32_t ctl = __atomic_load_n(
		        &l->hctl, __ATOMIC_ACQUIRE); /* pairs with bump in helper_kick */
		wv[0] = (struct waitv){
		        .val = ctl, .uaddr = (uintptr_t)&l->hctl, .flags = FUTEX2_SIZE_U32};
		size_t k = 1;
		for (size_t i = 0; i < n; i++) {
			if (l->fw[i]->futex_ready)
				continue;
			who[k] = l->fw[i];
			wv[k++] = (struct waitv){.val = l->fw[i]->expected,
			                         .uaddr = (uintptr_t)l->fw[i]->word,
			                         .flags = FUTEX2_SIZE_U32};
		}
		pthread_mutex_unlock(&l->hlock);
		long r = syscall(SYS_futex_waitv, wv, (unsigned)k, 0, NULL, CLOCK_MONOTONIC);
		int err = r < 0 ? errno : 0;
		if (r == 0 || (r < 0 && err != EAGAIN && err != EINTR))
			continue; /* control word moved or odd error: re-snapshot */
		pthread_mutex_lock(&l->hlock);
		if (ctl != l->hctl) { /* the set changed under us: entries may be stale */
			pthread_mutex_unlock(&l->hlock);
			continue;
		}
		/* Mark every word that is now ready: woken (index r) or already differing. */
		bool any = false;
		for (size_t i = 1; i < k; i++) {
			uint32_t cur = __atomic_load_n(
			        who[i]->word,
			        __ATOMIC_ACQUIRE); /* pairs with the waker's publish */
			if ((r > 0 && (size_t)r == i) || cur != who[i]->expected) {
				who[i]->futex_ready = true;
				any = true;
			}
		}
		pthread_mutex_unlock(&l->hlock);
		if (any) {
			uint64_t one = 1;
			ssize_t w = write(l->hefd, &one, sizeof(one));
			(void)w;
			/* park until the loop thread has consumed the readiness and bumped hctl */
			ipc_futex_wait(&l->hctl, ctl, UINT64_MAX);
		}
	}
	free(wv);
	free(who);
	return NULL;
}

static void helper_kick(struct ipc_loop *l)
{
	/* caller holds hlock; the bump is seen by helper_main's snapshot/waitv */
	__atomic_store_n(&l->hctl, l->hctl + 1, __ATOMIC_RELEASE);
	ipc_futex_wake(&l->hctl, 1); /* shared key, like the helper's waits on it */
}

static int helper_start(struct ipc_loop *l)
{
	if (l->helper_running)
		return 0;
	l->hefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (l->hefd < 0)
		return -errno;
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = UD(UD_HELPER, 0, 0)};
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->hefd, &ev) < 0)
		return -errno;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old); /* the helper never takes signals */
	int r = pthread_create(&l->helper, NULL, helper_main, l);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r)
		return -r;
	l->helper_running = true;
	return 0;
}

static int fw_add(struct ipc_loop *l, struct ipc_source *s)
{
	int r = helper_start(l);
	if (r < 0)
		return r;
	pthread_mutex_lock(&l->hlock);
	if (l->nfw == l->cap_fw) {
		size_t nc = l->cap_fw ? l->cap_fw * 2 : 8;
		struct ipc_source **n = realloc(l->fw, nc * sizeof(*n));
		if (!n) {
			pthread_mutex_unlock(&l->hlock);
			return -ENOMEM;
		}
		l->fw = n;
		l->cap_fw = nc;
	}
	s->futex_ready = false;
	l->fw[l->nfw++] = s;
	helper_kick(l);
	pthread_mutex_unlock(&l->hlock);
	return 0;
}

static void fw_del(struct ipc_loop *l, struct ipc_source *s)
{
	pthread_mutex_lock(&l->hlock);
	for (size_t i = 0; i < l->nfw; i++)
		if (l->fw[i] == s) {
			l->fw[i] = l->fw[--l->nfw];
			break;
		}
	helper_kick(l);
	pthread_mutex_unlock(&l->hlock);
}

/* ---- loop lifecycle --------------------------------------------------------------------- */
/* The ring's restrictions (IORING_REGISTER_RESTRICTIONS, Linux 5.10): the ring is created
 * disabled, told the only SQE opcodes and flags this loop submits, then enabled. Any other
 * operation (an open, a read, a connect, a send...) is refused by the kernel with -EACCES, so a
 * bug or an exploited parser in the process cannot turn the ring into a second syscall surface
 * that the unit's SystemCallFilter does not see. The one register opcode allowed after enabling
 * is IORING_REGISTER_PROBE (uring_init's opcode probe; read-only). */
static const uint8_t ring_ops[] = {IORING_OP_POLL_ADD, IORING_OP_POLL_REMOVE,
                                   IORING_OP_ASYNC_CANCEL, IORING_OP_FUTEX_WAIT,
                                   IORING_OP_FUTEX_WAKE};

static int uring_restrict(struct io_uring *ring)
{
	struct io_uring_restriction res[sizeof(ring_ops) + 2];
	unsigned n = 0;

	memset(res, 0, sizeof(res));
	for (size_t i = 0; i < sizeof(ring_ops); i++) {
		res[n].opcode = IORING_RESTRICTION_SQE_OP;
		res[n++].sqe_op = ring_ops[i];
	}
	res[n].opcode = IORING_RESTRICTION_SQE_FLAGS_ALLOWED;
	res[n++].sqe_flags = IOSQE_CQE_SKIP_SUCCESS;
	res[n].opcode = IORING_RESTRICTION_REGISTER_OP;
	res[n++].register_op = IORING_REGISTER_PROBE;
	/* raw io_uring_register(2): Debian's liburing 2.3 declares io_uring_register_restrictions
	 * and io_uring_enable_rings but does not export them */
	if (syscall(__NR_io_uring_register, ring->ring_fd, IORING_REGISTER_RESTRICTIONS, res, n) <
	            0 ||
	    syscall(__NR_io_uring_register, ring->ring_fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0) <
	            0)
		return -errno;
	return 0;
}

static int uring_init(struct ipc_loop *l)
{
	/* first choice: restricted; then without the newer setup flags; then unrestricted (a
	 * kernel before 5.10: the ring works, without the allow-list) */
	static const unsigned flags[] = {IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN |
	                                         IORING_SETUP_R_DISABLED,
	                                 IORING_SETUP_R_DISABLED, 0};
	struct io_uring_params p;
	int r = -EINVAL;
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		memset(&p, 0, sizeof(p));
		p.flags = flags[i];
		r = io_uring_queue_init_params(256, &l->ring, &p);
		if (r < 0)
			continue;
		if (!(p.flags & IORING_SETUP_R_DISABLED))
			break;
		if (uring_restrict(&l->ring) == 0) {
			l->restricted = true;
			break;
		}
		io_uring_queue_exit(&l->ring);
		r = -EINVAL;
	}
	if (r < 0)
		return r;
	if (!(p.features & IORING_FEAT_EXT_ARG)) {
		io_uring_queue_exit(&l->ring);
		return -EOPNOTSUPP;
	}
	struct io_uring_probe *probe = io_uring_get_probe_ring(&l->ring);
	bool ok = probe && io_uring_opcode_supported(probe, IORING_OP_FUTEX_WAIT) &&
	          io_uring_opcode_supported(probe, IORING_OP_FUTEX_WAKE) &&
	          io_uring_opcode_supported(probe, IORING_OP_POLL_ADD) &&
	          io_uring_opcode_supported(probe, IORING_OP_ASYNC_CANCEL);
	if (probe)
		io_uring_free_probe(probe);
	if (!ok) {
		io_uring_queue_exit(&l->ring);
		return -EOPNOTSUPP;
	}
	return 0;
}

int ipc_loop_new(struct ipc_loop **ret, enum ipc_loop_backend_kind kind)
{
	struct ipc_loop *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->epfd = -1;
	l->hefd = -1;
	pthread_mutex_init(&l->hlock, NULL);
	if (kind == IPC_LOOP_BACKEND_AUTO) {
		const char *e = getenv("KCMD_IPC_BACKEND");
		if (e && strcmp(e, "epoll") == 0)
			kind = IPC_LOOP_BACKEND_EPOLL;
		else if (e && strcmp(e, "uring") == 0)
			kind = IPC_LOOP_BACKEND_URING;
	}
	int r = 0;
	if (kind != IPC_LOOP_BACKEND_EPOLL) {
		r = uring_init(l);
		if (r == 0)
			l->uring = true;
		else if (kind == IPC_LOOP_BACKEND_URING) {
			free(l);
			return r;
		} else
			l->fallback_reason = -r;
	}
	if (!l->uring) {
		l->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (l->epfd < 0) {
			r = -errno;
			free(l);
			return r;
		}
	}
	*ret = l;
	return 0;
}

const char *ipc_loop_backend(const struct ipc_loop *l)
{
	return l->uring ? "io_uring" : "epoll";
}

bool ipc_loop_uring_restricted(const struct ipc_loop *l)
{
	return l && l->uring && l->restricted;
}

int ipc_loop__test_uring_op(struct ipc_loop *l, uint8_t opcode)
{
	if (!l || !l->uring)
		return -EOPNOTSUPP;
	struct io_uring_sqe *sqe = io_uring_get_sqe(&l->ring);
	if (!sqe)
		return -EBUSY;
	io_uring_prep_nop(sqe);
	sqe->opcode = opcode;
	io_uring_sqe_set_data64(sqe, 0);
	int r = io_uring_submit_and_wait(&l->ring, 1);
	if (r < 0)
		return r;
	struct io_uring_cqe *cqe;
	r = io_uring_peek_cqe(&l->ring, &cqe);
	if (r < 0)
		return r;
	r = cqe->res;
	io_uring_cqe_seen(&l->ring, cqe);
	return r;
}
int ipc_loop_fallback_reason(const struct ipc_loop *l)
{
	return l->fallback_reason;
}

static void source_destroy(struct ipc_source *s)
{
	struct ipc_loop *l = s->loop;
	slot_release(l, s);
	if (s->kind == K_SIGNAL && s->fd >= 0)
		close(s->fd);
	free(s);
}

struct ipc_loop *ipc_loop_free(struct ipc_loop *l)
{
	if (!l)
		return NULL;
	if (l->helper_running) {
		pthread_mutex_lock(&l->hlock);
		l->hstop = 1;
		helper_kick(l);
		pthread_mutex_unlock(&l->hlock);
		pthread_join(l->helper, NULL);
	}
	for (uint32_t i = 0; i < l->nslots; i++)
		if (l->slots[i]) {
			struct ipc_source *s = l->slots[i];
			if (s->kind == K_SIGNAL && s->fd >= 0)
				close(s->fd);
			free(s);
		}
	if (l->uring)
		io_uring_queue_exit(&l->ring);
	if (l->epfd >= 0)
		close(l->epfd);
	if (l->hefd >= 0)
		close(l->hefd);
	free(l->slots);
	free(l->free_idx);
	free(l->heap);
	free(l->fw);
	pthread_mutex_destroy(&l->hlock);
	free(l);
	return NULL;
}

void ipc_loop_exit(struct ipc_loop *l, int code)
{
	l->exit_requested = true;
	l->exit_code = code;
}

/* ---- sources ------------------------------------------------------------------------------ */
static int source_new(struct ipc_loop *l, struct ipc_source **ret, enum kind kind, void *ud)
{
	struct ipc_source *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->loop = l;
	s->kind = kind;
	s->userdata = ud;
	s->fd = -1;
	s->heap_idx = SIZE_MAX;
	int r = slot_alloc(l, s);
	if (r < 0) {
		free(s);
		return r;
	}
	*ret = s;
	return 0;
}

void *ipc_source_userdata(const struct ipc_source *s)
{
	return s->userdata;
}

int ipc_loop_add_post(struct ipc_loop *l, struct ipc_source **ret, ipc_timer_fn cb, void *userdata)
{
	if (!cb)
		return -EINVAL;
	struct ipc_source *s;
	int r = source_new(l, &s, K_POST, userdata);
	if (r < 0)
		return r;
	s->cb.timer = cb;
	*ret = s;
	return 0;
}

void ipc_source_post_enable(struct ipc_source *s)
{
	if (s->kind != K_POST || s->dead || s->post_pending)
		return;
	s->post_pending = true;
	s->loop->npost_pending++;
}

static int run_posts(struct ipc_loop *l, int *count)
{
	if (!l->npost_pending)
		return 0;
	for (uint32_t i = 0; i < l->nslots && l->npost_pending; i++) {
		struct ipc_source *s = l->slots[i];
		if (!s || s->kind != K_POST || !s->post_pending || s->dead)
			continue;
		s->post_pending = false;
		l->npost_pending--;
		s->dispatching = true;
		int r = s->cb.timer(s, 0, s->userdata);
		s->dispatching = false;
		(*count)++;
		if (s->dead)
			source_destroy(s);
		if (r < 0)
			return r;
	}
	return 0;
}

int ipc_loop_add_io(struct ipc_loop *l, struct ipc_source **ret, int fd, uint32_t events,
                    ipc_io_fn cb, void *userdata)
{
	if (fd < 0 || !cb)
		return -EINVAL;
	struct ipc_source *s;
	int r = source_new(l, &s, K_IO, userdata);
	if (r < 0)
		return r;
	s->fd = fd;
	s->events = events;
	s->cb.io = cb;
	r = io_sync(s);
	if (r < 0) {
		source_destroy(s);
		return r;
	}
	*ret = s;
	return 0;
}

int ipc_source_set_io_events(struct ipc_source *s, uint32_t events)
{
	if (s->kind != K_IO || s->dead)
		return -EINVAL;
	s->events = events;
	return io_sync(s);
}

int ipc_loop_add_pidfd(struct ipc_loop *l, struct ipc_source **ret, int pidfd, ipc_io_fn cb,
                       void *userdata)
{
	if (pidfd < 0 || !cb)
		return -EINVAL;
	struct ipc_source *s;
	int r = source_new(l, &s, K_PIDFD, userdata);
	if (r < 0)
		return r;
	s->fd = pidfd;
	s->events = POLLIN;
	s->cb.io = cb;
	r = io_sync(s);
	if (r < 0) {
		source_destroy(s);
		return r;
	}
	*ret = s;
	return 0;
}

int ipc_loop_add_signal(struct ipc_loop *l, struct ipc_source **ret, int signo, ipc_signal_fn cb,
                        void *userdata)
{
	if (!cb)
		return -EINVAL;
	sigset_t set;
	sigemptyset(&set);
	if (sigaddset(&set, signo) < 0)
		return -EINVAL;
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	int fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct ipc_source *s;
	int r = source_new(l, &s, K_SIGNAL, userdata);
	if (r < 0) {
		close(fd);
		return r;
	}
	s->fd = fd;
	s->events = POLLIN;
	s->cb.sig = cb;
	r = io_sync(s);
	if (r < 0) {
		source_destroy(s);
		return r;
	}
	*ret = s;
	return 0;
}

int ipc_loop_add_timer(struct ipc_loop *l, struct ipc_source **ret, uint64_t when, ipc_timer_fn cb,
                       void *userdata)
{
	if (!cb)
		return -EINVAL;
	struct ipc_source *s;
	int r = source_new(l, &s, K_TIMER, userdata);
	if (r < 0)
		return r;
	s->cb.timer = cb;
	r = ipc_source_set_time(s, when);
	if (r < 0) {
		source_destroy(s);
		return r;
	}
	*ret = s;
	return 0;
}

int ipc_source_set_time(struct ipc_source *s, uint64_t when)
{
	if (s->kind != K_TIMER || s->dead)
		return -EINVAL;
	struct ipc_loop *l = s->loop;
	if (s->heap_idx != SIZE_MAX) {
		if (!when) {
			heap_remove(l, s);
			s->when = 0;
			return 0;
		}
		uint64_t old = s->when;
		s->when = when;
		if (when < old)
			heap_up(l, s->heap_idx);
		else
			heap_down(l, s->heap_idx);
		return 0;
	}
	s->when = when;
	return when ? heap_insert(l, s) : 0;
}

static int futex_submit(struct ipc_source *s)
{
	struct ipc_loop *l = s->loop;
	if (l->uring) {
		struct io_uring_sqe *sqe = get_sqe(l);
		if (!sqe)
			return -EBUSY;
		prep_futex_wait(sqe, s->word, s->expected, s->mask);
		io_uring_sqe_set_data64(sqe, UD(UD_SRC, s->gen, s->idx));
		s->inflight = true;
		s->cancelling = false;
		return 0;
	}
	return fw_add(l, s);
}

int ipc_loop_add_futex(struct ipc_loop *l, struct ipc_source **ret, const uint32_t *word,
                       uint32_t expected, ipc_futex_fn cb, void *userdata)
{
	if (!word || !cb || ((uintptr_t)word & 3))
		return -EINVAL;
	struct ipc_source *s;
	int r = source_new(l, &s, K_FUTEX, userdata);
	if (r < 0)
		return r;
	s->word = word;
	s->cb.futex = cb;
	r = ipc_source_futex_arm(s, expected);
	if (r < 0) {
		source_destroy(s);
		return r;
	}
	*ret = s;
	return 0;
}

int ipc_source_futex_arm(struct ipc_source *s, uint32_t expected)
{
	if (s->kind != K_FUTEX || s->dead)
		return -EINVAL;
	if (s->futex_armed)
		return -EBUSY;
	if (s->loop->uring && s->inflight)
		return -EBUSY; /* a cancelled wait has not completed yet */
	s->expected = expected;
	s->futex_armed = true;
	int r = futex_submit(s);
	if (r < 0)
		s->futex_armed = false;
	return r;
}

bool ipc_source_futex_armed(const struct ipc_source *s)
{
	return s->futex_armed;
}

void ipc_source_futex_set_mask(struct ipc_source *s, uint32_t mask)
{
	if (s && s->kind == K_FUTEX)
		s->mask = mask;
}

struct ipc_source *ipc_source_free(struct ipc_source *s)
{
	if (!s || s->dead)
		return NULL;
	struct ipc_loop *l = s->loop;
	s->dead = true;
	switch (s->kind) {
	case K_TIMER:
		heap_remove(l, s);
		break;
	case K_POST:
		if (s->post_pending) {
			s->post_pending = false;
			l->npost_pending--;
		}
		break;
	case K_FUTEX:
		if (l->uring)
			uring_cancel(l, s);
		else if (s->futex_armed)
			fw_del(l, s);
		s->futex_armed = false;
		break;
	default:
		if (l->uring)
			uring_cancel(l, s);
		else
			io_sync(s);
		break;
	}
	if (!s->inflight && !s->dispatching)
		source_destroy(s);
	return NULL;
}

int ipc_loop_futex_wake(struct ipc_loop *l, const uint32_t *word, int n)
{
	return ipc_loop_futex_wake_bits(l, word, n, 0);
}

int ipc_loop_futex_wake_bits(struct ipc_loop *l, const uint32_t *word, int n, uint32_t bits)
{
	if (!l->uring) {
		int r = ipc_futex_wake_bits(word, n, bits);
		return r < 0 ? r : 0;
	}
	struct io_uring_sqe *sqe = get_sqe(l);
	if (!sqe) {
		int r = ipc_futex_wake_bits(word, n, bits);
		return r < 0 ? r : 0;
	}
	prep_futex_wake(sqe, word, n, bits);
	io_uring_sqe_set_data64(sqe, 0); /* only failures post a CQE; nobody waits for them */
	return 0;
}

/* ---- dispatch ----------------------------------------------------------------------------- */
static int dispatch_io(struct ipc_source *s, uint32_t revents)
{
	int r = 0;
	s->dispatching = true;
	if (s->kind == K_SIGNAL) {
		struct signalfd_siginfo si;
		while (read(s->fd, &si, sizeof(si)) == (ssize_t)sizeof(si) && !s->dead) {
			r = s->cb.sig(s, &si, s->userdata);
			if (r < 0)
				break;
		}
	} else if (s->kind == K_PIDFD) {
		s->fired = true;
		r = s->cb.io(s, s->fd, revents, s->userdata);
	} else
		r = s->cb.io(s, s->fd, revents, s->userdata);
	s->dispatching = false;
	if (s->dead && !s->inflight) {
		source_destroy(s);
		return r;
	}
	int r2 = io_sync(s);
	return r < 0 ? r : r2 < 0 ? r2 : 0;
}

static int dispatch_futex(struct ipc_source *s, int res)
{
	s->futex_armed = false;
	s->dispatching = true;
	int r = s->cb.futex(s, res, s->userdata);
	s->dispatching = false;
	if (s->dead && !s->inflight)
		source_destroy(s);
	return r;
}

static int handle_cqe(struct ipc_loop *l, uint64_t ud, int res)
{
	if (UD_TAG(ud) != UD_SRC)
		return 0; /* cancels, removes, failed op-52 wakes: nothing waits for them */
	uint32_t idx = UD_IDX(ud);
	if (idx >= l->nslots || !l->slots[idx] || l->slots[idx]->gen != UD_GEN(ud))
		return 0; /* stale */
	struct ipc_source *s = l->slots[idx];
	s->inflight = false;
	s->cancelling = false;
	if (s->dead) {
		if (!s->dispatching)
			source_destroy(s);
		return 0;
	}
	if (s->kind == K_FUTEX) {
		if (res == -ECANCELED)
			return 0;
		return dispatch_futex(s, res) < 0 ? -1 : 1;
	}
	s->armed_events = 0;
	if (res == -ECANCELED)
		return io_sync(s) < 0 ? -1 : 0; /* events changed: re-arm with the new mask */
	uint32_t rev = res < 0 ? POLLERR : (uint32_t)res;
	/* completed with a mask the user has since withdrawn (the remove raced the completion) */
	if (!(rev & (s->events | POLLERR | POLLHUP | POLLNVAL)) || !s->events)
		return io_sync(s) < 0 ? -1 : 0;
	int r = dispatch_io(s, rev);
	return r < 0 ? r : 1;
}

static int run_timers(struct ipc_loop *l, int *count)
{
	uint64_t now = ipc_now_usec();
	size_t budget = l->nheap; /* a timer re-armed into the past runs next iteration */
	while (budget-- > 0 && l->nheap > 0 && l->heap[0]->when <= now) {
		struct ipc_source *s = l->heap[0];
		heap_remove(l, s);
		s->when = 0;
		s->dispatching = true;
		int r = s->cb.timer(s, now, s->userdata);
		s->dispatching = false;
		if (s->dead)
			source_destroy(s);
		(*count)++;
		if (r < 0)
			return r;
	}
	return 0;
}

static int epoll_helper_ready(struct ipc_loop *l, int *count)
{
	uint64_t v;
	ssize_t rr = read(l->hefd, &v, sizeof(v));
	(void)rr;
	/* Collect ready sources under the lock, dispatch without it. */
	struct ipc_source **ready = NULL;
	size_t nready = 0;
	pthread_mutex_lock(&l->hlock);
	if (l->nfw) {
		ready = malloc(l->nfw * sizeof(*ready));
		if (!ready) {
			pthread_mutex_unlock(&l->hlock);
			return -ENOMEM;
		}
	}
	for (size_t i = 0; i < l->nfw;) {
		if (l->fw[i]->futex_ready) {
			ready[nready++] = l->fw[i];
			l->fw[i] = l->fw[--l->nfw];
		} else
			i++;
	}
	helper_kick(l);
	pthread_mutex_unlock(&l->hlock);
	int r = 0;
	/* a callback may free a later ready source: keep them all alive until their turn */
	for (size_t i = 0; i < nready; i++)
		ready[i]->dispatching = true;
	for (size_t i = 0; i < nready; i++) {
		struct ipc_source *s = ready[i];
		if (s->dead || r < 0) {
			s->dispatching = false;
			if (s->dead)
				source_destroy(s);
			else
				s->futex_armed = false;
			continue;
		}
		uint32_t cur = __atomic_load_n(
		        s->word, __ATOMIC_ACQUIRE); /* pairs with the waker's publish */
		r = dispatch_futex(s, cur != s->expected ? -EAGAIN : 0);
		(*count)++;
	}
	free(ready);
	return r;
}

int ipc_loop_run_once(struct ipc_loop *l, uint64_t timeout_usec)
{
	int count = 0, r;
	uint64_t now = ipc_now_usec();
	if (l->npost_pending)
		timeout_usec = 0; /* a post enabled outside the loop runs before any sleep */
	if (l->nheap > 0) {
		uint64_t due = l->heap[0]->when;
		uint64_t t = due > now ? due - now : 0;
		if (t < timeout_usec)
			timeout_usec = t;
	}
	struct timespec ts = {.tv_sec = (time_t)(timeout_usec / 1000000u),
	                      .tv_nsec = (long)(timeout_usec % 1000000u) * 1000};
	bool forever = timeout_usec == UINT64_MAX;
	if (l->uring) {
		struct io_uring_cqe *cqe;
		struct __kernel_timespec kts = {.tv_sec = ts.tv_sec, .tv_nsec = ts.tv_nsec};
		l->pending_sqes = 0;
		r = io_uring_submit_and_wait_timeout(&l->ring, &cqe, 1, forever ? NULL : &kts,
		                                     NULL);
		if (r < 0 && r != -ETIME && r != -EINTR && r != -EAGAIN && r != -EBUSY)
			return r;
		for (;;) {
			struct io_uring_cqe *cqes[64];
			unsigned n = io_uring_peek_batch_cqe(&l->ring, cqes, 64);
			if (!n)
				break;
			uint64_t ud[64];
			int res[64];
			for (unsigned i = 0; i < n; i++) {
				ud[i] = cqes[i]->user_data;
				res[i] = cqes[i]->res;
			}
			io_uring_cq_advance(&l->ring, n);
			for (unsigned i = 0; i < n; i++) {
				r = handle_cqe(l, ud[i], res[i]);
				if (r < 0)
					return r;
				count += r;
			}
			if (n < 64)
				break;
		}
	} else {
		struct epoll_event evs[64];
		int n = epoll_pwait2(l->epfd, evs, 64, forever ? NULL : &ts, NULL);
		if (n < 0 && errno != EINTR)
			return -errno;
		for (int i = 0; i < n; i++) {
			uint64_t ud = evs[i].data.u64;
			if (UD_TAG(ud) == UD_HELPER) {
				r = epoll_helper_ready(l, &count);
				if (r < 0)
					return r;
				continue;
			}
			uint32_t idx = UD_IDX(ud);
			if (idx >= l->nslots || !l->slots[idx] || l->slots[idx]->gen != UD_GEN(ud))
				continue;
			struct ipc_source *s = l->slots[idx];
			if (s->dead)
				continue;
			r = dispatch_io(s, evs[i].events);
			if (r < 0)
				return r;
			count++;
		}
	}
	r = run_timers(l, &count);
	if (r < 0)
		return r;
	r = run_posts(l, &count);
	if (r < 0)
		return r;
	if (l->uring && l->pending_sqes) {
		/* callbacks queued SQEs (re-arms, wakes): hand them to the kernel now so a wake is
		 * not delayed until the next wait */
		io_uring_submit(&l->ring);
		l->pending_sqes = 0;
	}
	return count;
}

int ipc_loop_run(struct ipc_loop *l)
{
	l->exit_requested = false;
	while (!l->exit_requested) {
		int r = ipc_loop_run_once(l, UINT64_MAX);
		if (r < 0)
			return r;
	}
	return l->exit_code;
}
