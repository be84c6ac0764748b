/* SPDX-License-Identifier: Apache-2.0 */
/* manager/status.c: the manager's state for kcmctl status (see status.h). */
#include "manager/status.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define STATUS_MAGIC   0x6b636d6473746174ull /* "kcmdstat" */
#define STATUS_VERSION 3                     /* 3: the shard fields */

/* struct mgr_status as 64-bit words: copied with atomic loads and stores (INVARIANTS S2). */
#define STATUS_WORDS (sizeof(struct mgr_status) / sizeof(uint64_t))
static_assert(sizeof(struct mgr_status) % sizeof(uint64_t) == 0, "mgr_status is whole words");

struct page {
	uint64_t magic;
	uint32_t version, size;
	_Atomic uint32_t seq; /* odd while the manager writes (S1) */
	uint32_t pad;
	_Atomic uint64_t st[STATUS_WORDS]; /* the bytes of a struct mgr_status */
};
/* the same bytes as when st was a plain struct mgr_status: no version bump for the change */
static_assert(offsetof(struct page, st) == 24, "status page layout");
static_assert(sizeof(struct page) == 24 + sizeof(struct mgr_status), "status page layout");

struct mgr_status_page {
	struct page *p;
};

int mgr_status_create(struct mgr_status_page **ret, int *ret_fd)
{
	struct mgr_status_page *sp;
	int fd = memfd_create("kcmd-status", MFD_CLOEXEC | MFD_ALLOW_SEALING), r;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, sizeof(struct page)) < 0)
		goto fail_errno;
	(void)fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW);
	sp = calloc(1, sizeof(*sp));
	if (!sp) {
		close(fd);
		return -ENOMEM;
	}
	sp->p = mmap(NULL, sizeof(struct page), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (sp->p == MAP_FAILED) {
		free(sp);
		goto fail_errno;
	}
	/* The manager's mapping stays the only writable one: kcmctl opens this memfd through
	 * /proc/<pid>/fd and can then map it read-only only (issue 21) */
	(void)fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE | F_SEAL_SEAL);
	sp->p->version = STATUS_VERSION;
	sp->p->size = sizeof(struct page);
	atomic_thread_fence(memory_order_release);
	sp->p->magic = STATUS_MAGIC;
	*ret = sp;
	*ret_fd = fd;
	return 0;
fail_errno:
	r = -errno;
	close(fd);
	return r;
}

void mgr_status_publish(struct mgr_status_page *sp, const struct mgr_status *st)
{
	if (!sp)
		return;
	/* the only writer: a relaxed load sees its own last store. A page left odd by a writer
	 * that died mid-publication is rounded up to even first (S1). */
	uint32_t s = atomic_load_explicit(&sp->p->seq, memory_order_relaxed);
	s += s & 1;
	atomic_store_explicit(&sp->p->seq, s + 1, memory_order_relaxed);
	/* release: orders the odd seq before the payload stores; pairs with the reader's acquire
	 * fence in mgr_status_read (S3) */
	atomic_thread_fence(memory_order_release);
	const unsigned char *src = (const unsigned char *)st;
	for (size_t i = 0; i < STATUS_WORDS; i++) {
		uint64_t w;
		memcpy(&w, src + i * sizeof(w), sizeof(w));
		atomic_store_explicit(&sp->p->st[i], w, memory_order_relaxed);
	}
	/* release: publishes the payload; pairs with the reader's acquire load of seq (S3) */
	atomic_store_explicit(&sp->p->seq, s + 2, memory_order_release);
}

struct mgr_status_page *mgr_status_free(struct mgr_status_page *sp)
{
	if (sp) {
		munmap(sp->p, sizeof(struct page));
		free(sp);
	}
	return NULL;
}

int mgr_status_read(int fd, struct mgr_status *ret)
{
	struct stat sb;
	const struct page *p;
	int r = -EAGAIN;

	if (fstat(fd, &sb) < 0)
		return -errno;
	if ((size_t)sb.st_size != sizeof(struct page))
		return -EINVAL;
	p = mmap(NULL, sizeof(struct page), PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	if (p->magic != STATUS_MAGIC || p->version != STATUS_VERSION ||
	    p->size != sizeof(struct page)) {
		munmap((void *)p, sizeof(struct page));
		return -EINVAL;
	}
	for (int tries = 0; tries < 1000; tries++) {
		/* acquire: pairs with the writer's final release store of seq (S3) */
		uint32_t s1 = atomic_load_explicit(&p->seq, memory_order_acquire);
		if (s1 & 1) {
			usleep(100);
			continue;
		}
		/* 64-bit atomic loads are plain loads, fine on a read-only mapping */
		unsigned char *dst = (unsigned char *)ret;
		for (size_t i = 0; i < STATUS_WORDS; i++) {
			uint64_t w = atomic_load_explicit(&p->st[i], memory_order_relaxed);
			memcpy(dst + i * sizeof(w), &w, sizeof(w));
		}
		/* acquire: pairs with the writer's release fence after its odd store (S3) */
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&p->seq, memory_order_relaxed) == s1) {
			r = 0;
			break;
		}
	}
	munmap((void *)p, sizeof(struct page));
	if (r == 0) {
		ret->identity[sizeof(ret->identity) - 1] = 0;
		ret->lease[sizeof(ret->lease) - 1] = 0;
		ret->holder[sizeof(ret->holder) - 1] = 0;
		if (ret->n_children > MGR_STATUS_MAX_CHILDREN)
			ret->n_children = MGR_STATUS_MAX_CHILDREN;
		for (uint32_t i = 0; i < ret->n_children; i++) {
			ret->children[i].name[sizeof(ret->children[i].name) - 1] = 0;
			ret->children[i].group[sizeof(ret->children[i].group) - 1] = 0;
		}
	}
	return r;
}
