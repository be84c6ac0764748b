/* SPDX-License-Identifier: Apache-2.0 */
/* kube/fence.c: the leadership fence in shared memory (see fence.h). */
#include "kube/fence.h"

#include "kube/shard.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct kube_fence_abi {
	uint32_t magic;
	uint32_t nranges;             /* F6: fixed before the memfd is sealed */
	_Atomic uint64_t deadline_us; /* F1, F2 */
	_Atomic uint64_t epoch;       /* F5 */
	_Atomic uint64_t lease_rv;    /* F5 */
	_Atomic uint64_t range_gen;   /* F8 */
	uint64_t cache_filter;        /* F9: 1 = cache_ranges is kept (a former reserved word) */
	uint64_t reserved[2];
	_Atomic uint64_t range_deadline_us[KUBE_FENCE_MAX_RANGES]; /* F6, F7 */
	_Atomic uint64_t cache_ranges[KUBE_FENCE_MAX_RANGES / 64]; /* F9: informerd's cache set */
};
_Static_assert(sizeof(struct kube_fence_abi) == 64 + 8 * KUBE_FENCE_MAX_RANGES + 32,
               "fence layout");
_Static_assert(sizeof(struct kube_fence_abi) <= 4096, "the fence fits one page (F6)");

struct kube_fence {
	struct kube_fence_abi *h;
	bool writable;
};

int kube_fence_memfd_create(void)
{
	return kube_fence_memfd_create_ranges(0);
}

int kube_fence_memfd_create_ranges(unsigned nranges)
{
	return kube_fence_memfd_create_ranges_filter(nranges, true);
}

int kube_fence_memfd_create_ranges_filter(unsigned nranges, bool cache_filter)
{
	struct kube_fence_abi *h;
	int fd;

	if (nranges > KUBE_FENCE_MAX_RANGES)
		return -ERANGE;
	fd = memfd_create("kcmd-fence", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)sysconf(_SC_PAGESIZE)) < 0)
		goto fail;
	h = mmap(NULL, sizeof(*h), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED)
		goto fail;
	atomic_store_explicit(&h->deadline_us, 0, memory_order_relaxed);
	for (unsigned i = 0; i < KUBE_FENCE_MAX_RANGES; i++) /* F6: no range owned yet */
		atomic_store_explicit(&h->range_deadline_us[i], 0, memory_order_relaxed);
	for (unsigned i = 0; i < KUBE_FENCE_MAX_RANGES / 64; i++) /* F9: nothing cached yet */
		atomic_store_explicit(&h->cache_ranges[i], 0, memory_order_relaxed);
	h->cache_filter = nranges > 0 && cache_filter; /* F9: this layout keeps the cache set */
	h->nranges = nranges;
	h->magic = KUBE_FENCE_MAGIC;
	munmap(h, sizeof(*h));
	/* not F_SEAL_SEAL yet: the first writable kube_fence_open adds F_SEAL_FUTURE_WRITE */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0)
		goto fail;
	return fd;
fail:;
	int e = -errno;
	close(fd);
	return e;
}

int kube_fence_open(int fd, bool writable, struct kube_fence **ret)
{
	struct stat st;
	struct kube_fence *f;
	void *m;

	if (fd < 0 || !ret)
		return -EINVAL;
	if (fstat(fd, &st) < 0)
		return -errno;
	if ((size_t)st.st_size < sizeof(struct kube_fence_abi)) /* clamp to the mapping */
		return -EBADMSG;
	m = mmap(NULL, sizeof(struct kube_fence_abi), PROT_READ | (writable ? PROT_WRITE : 0),
	         MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	/* The first writable open makes its mapping the only one that can ever write: the
	 * children get this same memfd (KCMD_FENCE_FD) and, after F_SEAL_FUTURE_WRITE, can
	 * neither map it writable nor write(2) it, so no worker can move its own deadline. A
	 * second writable open fails above (mmap: EPERM). */
	if (writable && fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE | F_SEAL_SEAL) < 0) {
		int e = -errno;
		munmap(m, sizeof(struct kube_fence_abi));
		return e;
	}
	if (((struct kube_fence_abi *)m)->magic != KUBE_FENCE_MAGIC) {
		bool other = (((struct kube_fence_abi *)m)->magic & 0x00ffffffu) ==
		             (KUBE_FENCE_MAGIC & 0x00ffffffu);
		munmap(m, sizeof(struct kube_fence_abi));
		return other ? -EPROTONOSUPPORT : -EBADMSG;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		munmap(m, sizeof(struct kube_fence_abi));
		return -ENOMEM;
	}
	f->h = m;
	f->writable = writable;
	*ret = f;
	return 0;
}

void kube_fence_close(struct kube_fence *f)
{
	if (!f)
		return;
	munmap(f->h, sizeof(*f->h));
	free(f);
}

void kube_fence_set(struct kube_fence *f, uint64_t deadline_us)
{
	if (f && f->writable) /* release: pairs with kube_fence_deadline's acquire (F2) */
		atomic_store_explicit(&f->h->deadline_us, deadline_us, memory_order_release);
}

uint64_t kube_fence_deadline(const struct kube_fence *f)
{
	/* acquire: pairs with kube_fence_set's release (F2) */
	return f ? atomic_load_explicit(&f->h->deadline_us, memory_order_acquire) : KUBE_FENCE_NONE;
}

void kube_fence_set_epoch(struct kube_fence *f, uint32_t epoch, uint64_t lease_rv)
{
	if (!f || !f->writable)
		return;
	atomic_store_explicit(&f->h->lease_rv, lease_rv, memory_order_relaxed);
	/* release: lease_rv before epoch; pairs with kube_fence_epoch's acquire (F5) */
	atomic_store_explicit(&f->h->epoch, epoch, memory_order_release);
}

uint32_t kube_fence_epoch(const struct kube_fence *f, uint64_t *ret_lease_rv)
{
	uint64_t e, rv;

	if (!f) {
		if (ret_lease_rv)
			*ret_lease_rv = 0;
		return 0;
	}
	/* acquire: pairs with kube_fence_set_epoch's release; lease_rv is then at least the
	 * epoch's own (F5) */
	e = atomic_load_explicit(&f->h->epoch, memory_order_acquire);
	rv = atomic_load_explicit(&f->h->lease_rv, memory_order_relaxed);
	if (ret_lease_rv)
		*ret_lease_rv = rv;
	return (uint32_t)e;
}

bool kube_fence_allows(const struct kube_fence *f, uint64_t now_us)
{
	uint64_t d = kube_fence_deadline(f);
	return d == KUBE_FENCE_NONE || now_us < d;
}

unsigned kube_fence_ranges(const struct kube_fence *f)
{
	/* F6: written before the seal, never again; a reader needs no ordering for it */
	return f && f->h->nranges <= KUBE_FENCE_MAX_RANGES ? f->h->nranges : 0;
}

void kube_fence_set_range(struct kube_fence *f, unsigned range, uint64_t deadline_us)
{
	if (!f || !f->writable || range >= kube_fence_ranges(f))
		return;
	/* release: pairs with kube_fence_range_deadline's acquire (F7) */
	atomic_store_explicit(&f->h->range_deadline_us[range], deadline_us, memory_order_release);
}

uint64_t kube_fence_range_deadline(const struct kube_fence *f, unsigned range)
{
	if (!f || kube_fence_ranges(f) == 0)
		return KUBE_FENCE_NONE;
	if (range >= kube_fence_ranges(f))
		return 0; /* no such range: nothing of it is ours */
	return atomic_load_explicit(&f->h->range_deadline_us[range], memory_order_acquire);
}

bool kube_fence_range_allows(const struct kube_fence *f, unsigned range, uint64_t now_us)
{
	uint64_t d = kube_fence_range_deadline(f, range);
	return d == KUBE_FENCE_NONE || now_us < d;
}

bool kube_fence_allows_ns(const struct kube_fence *f, const char *ns, uint64_t now_us)
{
	unsigned n = kube_fence_ranges(f);

	if (!kube_fence_allows(f, now_us))
		return false;
	return n == 0 || kube_fence_range_allows(f, kube_shard_range_of_ns(ns, n), now_us);
}

void kube_fence_bump_range_gen(struct kube_fence *f)
{
	if (f && f->writable) /* release: the range deadline stored before it (F8) */
		atomic_fetch_add_explicit(&f->h->range_gen, 1, memory_order_release);
}

uint64_t kube_fence_range_gen(const struct kube_fence *f)
{
	return f ? atomic_load_explicit(&f->h->range_gen, memory_order_acquire) : 0;
}

/* ---- the cache set (F9) ---- */

void kube_fence_set_cache_range(struct kube_fence *f, unsigned range, bool cached)
{
	uint64_t bit;

	if (!f || !f->writable || range >= kube_fence_ranges(f))
		return;
	bit = 1ull << (range % 64);
	/* release: a set bit is stored before the epoch of its acquisition (F9), whose own
	 * release store orders it for kube_fence_epoch's acquire; this one documents the pairing
	 * with kube_fence_cache_set's acquire */
	if (cached)
		atomic_fetch_or_explicit(&f->h->cache_ranges[range / 64], bit,
		                         memory_order_release);
	else
		atomic_fetch_and_explicit(&f->h->cache_ranges[range / 64], ~bit,
		                          memory_order_release);
}

bool kube_fence_cache_filtering(const struct kube_fence *f)
{
	/* F9: no ranges, or a manager that does not keep the set (cache_filter 0, written before
	 * the seal like nranges): nothing is filtered. The owner of range 0 caches everything. */
	if (kube_fence_ranges(f) == 0 || f->h->cache_filter != 1)
		return false;
	/* acquire: pairs with kube_fence_set_cache_range's release */
	return !(atomic_load_explicit(&f->h->cache_ranges[0], memory_order_acquire) & 1u);
}

bool kube_fence_caches_range(const struct kube_fence *f, unsigned range)
{
	if (!kube_fence_cache_filtering(f))
		return true;
	if (range >= kube_fence_ranges(f))
		return false;
	/* acquire: pairs with kube_fence_set_cache_range's release */
	return atomic_load_explicit(&f->h->cache_ranges[range / 64], memory_order_acquire) >>
	               (range % 64) &
	       1u;
}

bool kube_fence_caches_ns(const struct kube_fence *f, const char *ns)
{
	/* cluster-scoped objects (range 0) are always cached: the hash is skipped for them */
	if (!ns || !*ns || !kube_fence_cache_filtering(f))
		return true;
	return kube_fence_caches_range(f, kube_shard_range_of_ns(ns, kube_fence_ranges(f)));
}

bool kube_fence_cache_set(const struct kube_fence *f, uint64_t ret[KUBE_FENCE_MAX_RANGES / 64])
{
	bool on = kube_fence_cache_filtering(f);

	for (unsigned i = 0; i < KUBE_FENCE_MAX_RANGES / 64; i++)
		ret[i] = on ? atomic_load_explicit(&f->h->cache_ranges[i], memory_order_acquire)
		            : ~0ull;
	return on;
}
