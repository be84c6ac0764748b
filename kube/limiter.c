/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kube/limiter.c: the shared token bucket (see limiter.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "kube/limiter.h"

#define KUBE_LIMITER_MAGIC 0x314d4c47u /* "GLM1" */
#define KUBE_LIMITER_SIZE  4096

struct kube_limiter_shm {
	uint32_t magic;
	uint32_t pad;
	_Atomic int64_t tat_ns;
};

struct kube_limiter {
	struct kube_limiter_shm *s;
	struct kube_limiter_shm priv;
	bool mapped;
	int64_t interval_ns, tau_ns;
};

int kube_limiter_memfd_create(void)
{
	int fd = memfd_create("kcmd-client-limiter", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	/* sized once and sealed: a process of the controller cannot shrink it under the others'
	 * mappings (they would die of SIGBUS on their next token) */
	if (ftruncate(fd, KUBE_LIMITER_SIZE) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	struct kube_limiter_shm *s =
	        mmap(NULL, KUBE_LIMITER_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (s == MAP_FAILED) {
		int r = -errno;
		close(fd);
		return r;
	}
	/* before any other process has the fd (fork/exec orders it): relaxed is enough */
	atomic_store_explicit(&s->tat_ns, 0, memory_order_relaxed);
	s->magic = KUBE_LIMITER_MAGIC;
	munmap(s, KUBE_LIMITER_SIZE);
	return fd;
}

int kube_limiter_open(int fd, double qps, int burst, struct kube_limiter **ret)
{
	struct kube_limiter *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->s = &l->priv;
	if (fd >= 0) {
		struct kube_limiter_shm *s =
		        mmap(NULL, KUBE_LIMITER_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (s == MAP_FAILED) {
			int r = -errno;
			free(l);
			return r;
		}
		if (s->magic != KUBE_LIMITER_MAGIC) {
			munmap(s, KUBE_LIMITER_SIZE);
			free(l);
			return -EBADMSG;
		}
		l->s = s;
		l->mapped = true;
	}
	if (qps > 0) {
		l->interval_ns = (int64_t)(1e9 / qps);
		if (l->interval_ns < 1)
			l->interval_ns = 1;
		l->tau_ns = (int64_t)(burst >= 1 ? burst : 1) * l->interval_ns;
	}
	*ret = l;
	return 0;
}

void kube_limiter_free(struct kube_limiter *l)
{
	if (!l)
		return;
	if (l->mapped)
		munmap(l->s, KUBE_LIMITER_SIZE);
	free(l);
}

int64_t kube_limiter_reserve(struct kube_limiter *l, int64_t now_ns)
{
	if (!l || !l->interval_ns)
		return 0;
	/* relaxed throughout (L2): tat guards no other data; the CAS makes the slot ours (L1) */
	int64_t tat = atomic_load_explicit(&l->s->tat_ns, memory_order_relaxed), next;
	do {
		next = (tat > now_ns ? tat : now_ns) + l->interval_ns;
	} while (!atomic_compare_exchange_weak_explicit(
	        &l->s->tat_ns, &tat, next, memory_order_relaxed, memory_order_relaxed));
	int64_t at = next - l->tau_ns;
	return at > now_ns ? at - now_ns : 0;
}

void kube_limiter_wait(struct kube_limiter *l)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	int64_t d = kube_limiter_reserve(l, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
	if (d <= 0)
		return;
	ts = (struct timespec){.tv_sec = d / 1000000000, .tv_nsec = d % 1000000000};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}
