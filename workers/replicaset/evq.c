/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/replicaset/evq.c: the shared event queue and sink lock (see evq.h for the design and
 * the INVARIANTS Q1-Q4).
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "workers/replicaset/evq.h"

#define HDR_SIZE 4096u

struct evq_hdr {
	uint64_t magic;
	uint32_t cap, rec_size;
	pthread_mutex_t mu;    /* Q1 */
	pthread_mutex_t sink;  /* Q4 */
	uint64_t head, tail;   /* under mu */
	uint64_t dropped;      /* under mu */
	_Atomic uint32_t wake; /* Q3 */
};
_Static_assert(sizeof(struct evq_hdr) <= HDR_SIZE, "evq header fits its page");

struct rs_evq {
	void *map;
	size_t len;
	struct evq_hdr *h;
	struct rs_evq_rec *slots;
};

size_t rs_evq_region_size(void)
{
	size_t pg = 4096, n = HDR_SIZE + (size_t)RS_EVQ_CAP * sizeof(struct rs_evq_rec);
	return (n + pg - 1) / pg * pg;
}

static int robust_init(pthread_mutex_t *m)
{
	pthread_mutexattr_t a;
	int r = pthread_mutexattr_init(&a);
	if (r)
		return -r;
	if ((r = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED)) == 0 &&
	    (r = pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST)) == 0)
		r = pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
	return -r;
}

int rs_evq_init(void *region, size_t len)
{
	if (!region || len < rs_evq_region_size())
		return -EINVAL;
	struct evq_hdr *h = region;
	int r;
	if ((r = robust_init(&h->mu)) < 0 || (r = robust_init(&h->sink)) < 0)
		return r;
	h->cap = RS_EVQ_CAP;
	h->rec_size = sizeof(struct rs_evq_rec);
	h->head = h->tail = h->dropped = 0;
	atomic_store(&h->wake, 0);
	atomic_thread_fence(memory_order_release);
	h->magic = RS_EVQ_MAGIC;
	return 0;
}

static int wrap(void *map, size_t len, struct rs_evq **ret)
{
	struct rs_evq *q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->map = map;
	q->len = len;
	q->h = map;
	q->slots = (struct rs_evq_rec *)((char *)map + HDR_SIZE);
	*ret = q;
	return 0;
}

int rs_evq_attach(int fd, uint64_t off, struct rs_evq **ret)
{
	size_t len = rs_evq_region_size();
	if (fd < 0 || off % 4096 || !ret)
		return -EINVAL;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if ((uint64_t)st.st_size < off + len)
		return -EPROTO; /* mapping past the end would fault */
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
	if (m == MAP_FAILED)
		return -errno;
	const struct evq_hdr *h = m;
	if (h->magic != RS_EVQ_MAGIC || h->cap != RS_EVQ_CAP ||
	    h->rec_size != sizeof(struct rs_evq_rec)) {
		munmap(m, len);
		return -EPROTO;
	}
	int r = wrap(m, len, ret);
	if (r < 0)
		munmap(m, len);
	return r;
}

int rs_evq_new_private(struct rs_evq **ret)
{
	size_t len = rs_evq_region_size();
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -errno;
	int r = rs_evq_init(m, len);
	if (r == 0)
		r = wrap(m, len, ret);
	if (r < 0)
		munmap(m, len);
	return r;
}

void rs_evq_free(struct rs_evq *q)
{
	if (!q)
		return;
	munmap(q->map, q->len);
	free(q);
}

static int lock(pthread_mutex_t *m, const struct timespec *abs)
{
	int r = abs ? pthread_mutex_timedlock(m, abs) : pthread_mutex_lock(m);
	if (r == EOWNERDEAD) {
		/* Q1: the dead owner left nothing half-published */
		pthread_mutex_consistent(m);
		r = 0;
	}
	return r;
}

static void copy_str(char *dst, size_t cap, const char *src)
{
	size_t n = strnlen(src, cap - 1);
	memcpy(dst, src, n);
	dst[n] = 0;
}

int rs_evq_push(struct rs_evq *q, const struct rs_evq_rec *rec)
{
	struct evq_hdr *h = q->h;
	if (lock(&h->mu, NULL))
		return -EIO;
	if (h->tail - h->head >= h->cap) {
		h->dropped++;
		pthread_mutex_unlock(&h->mu);
		return -ENOBUFS;
	}
	struct rs_evq_rec *s = &q->slots[h->tail % h->cap];
	s->t = rec->t;
	copy_str(s->ns, sizeof s->ns, rec->ns);
	copy_str(s->name, sizeof s->name, rec->name);
	copy_str(s->uid, sizeof s->uid, rec->uid);
	copy_str(s->rv, sizeof s->rv, rec->rv);
	copy_str(s->type, sizeof s->type, rec->type);
	copy_str(s->reason, sizeof s->reason, rec->reason);
	copy_str(s->message, sizeof s->message, rec->message);
	h->tail++;
	pthread_mutex_unlock(&h->mu);
	atomic_fetch_add(&h->wake, 1);
	syscall(SYS_futex, &h->wake, FUTEX_WAKE, 1, NULL, NULL, 0);
	return 0;
}

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int rs_evq_pop(struct rs_evq *q, struct rs_evq_rec *ret, int timeout_ms)
{
	struct evq_hdr *h = q->h;
	int64_t deadline = mono_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	for (;;) {
		if (lock(&h->mu, NULL))
			return 0;
		if (h->head != h->tail) {
			*ret = q->slots[h->head % h->cap];
			h->head++;
			pthread_mutex_unlock(&h->mu);
			return 1;
		}
		uint32_t seen = atomic_load(&h->wake);
		pthread_mutex_unlock(&h->mu);
		int64_t left = deadline - mono_ms();
		if (left <= 0)
			return 0;
		struct timespec ts = {.tv_sec = left / 1000, .tv_nsec = (left % 1000) * 1000000};
		syscall(SYS_futex, &h->wake, FUTEX_WAIT, seen, &ts, NULL, 0);
	}
}

uint32_t rs_evq_len(struct rs_evq *q)
{
	uint32_t n = 0;
	if (lock(&q->h->mu, NULL) == 0) {
		n = (uint32_t)(q->h->tail - q->h->head);
		pthread_mutex_unlock(&q->h->mu);
	}
	return n;
}

uint64_t rs_evq_dropped(struct rs_evq *q)
{
	uint64_t n = 0;
	if (lock(&q->h->mu, NULL) == 0) {
		n = q->h->dropped;
		pthread_mutex_unlock(&q->h->mu);
	}
	return n;
}

void rs_evq_wake(struct rs_evq *q)
{
	atomic_fetch_add(&q->h->wake, 1);
	syscall(SYS_futex, &q->h->wake, FUTEX_WAKE, 64, NULL, NULL, 0);
}

int rs_evq_sink_lock(struct rs_evq *q, int timeout_ms)
{
	struct timespec abs;
	clock_gettime(CLOCK_REALTIME, &abs);
	abs.tv_sec += timeout_ms / 1000;
	abs.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (abs.tv_nsec >= 1000000000) {
		abs.tv_sec++;
		abs.tv_nsec -= 1000000000;
	}
	return lock(&q->h->sink, &abs) == 0 ? 1 : 0;
}

void rs_evq_sink_unlock(struct rs_evq *q)
{
	pthread_mutex_unlock(&q->h->sink);
}
