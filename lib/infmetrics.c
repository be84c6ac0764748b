/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/infmetrics.c: the shared counter table (see metrics-abi.h for the invariants).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/infmetrics.h"

struct inf_metrics {
	int fd;
	bool own_fd;
	struct inf_metrics_hdr *h;
};

int inf_metrics_open(int fd, struct inf_metrics **ret)
{
	struct inf_metrics *m;
	struct stat st;
	bool own = false;

	if (fd < 0) {
		fd = memfd_create("kcmd-informerd-metrics", MFD_CLOEXEC);
		if (fd < 0)
			return -errno;
		own = true;
	}
	if (fstat(fd, &st) < 0 || ((size_t)st.st_size < sizeof(struct inf_metrics_hdr) &&
	                           ftruncate(fd, sizeof(struct inf_metrics_hdr)) < 0)) {
		int e = -errno;

		if (own)
			close(fd);
		return e;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		if (own)
			close(fd);
		return -ENOMEM;
	}
	m->h = mmap(NULL, sizeof(*m->h), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m->h == MAP_FAILED) {
		int e = -errno;

		if (own)
			close(fd);
		free(m);
		return e;
	}
	m->fd = fd;
	m->own_fd = own;
	if (m->h->magic == 0) {
		m->h->row_size = sizeof(struct inf_metrics_row);
		/* release: row_size before the magic that makes the table valid (pairs with the
		 * reader's acquire load of magic in inf_metrics_map_ro). */
		atomic_store_explicit((_Atomic uint32_t *)&m->h->magic, INF_METRICS_MAGIC,
		                      memory_order_release);
	} else if (m->h->magic != INF_METRICS_MAGIC ||
	           m->h->row_size != sizeof(struct inf_metrics_row)) {
		inf_metrics_close(m);
		return -EPROTO;
	} else {
		atomic_store_explicit(&m->h->restarts,
		                      atomic_load_explicit(&m->h->restarts, memory_order_relaxed) +
		                              1,
		                      memory_order_relaxed);
	}
	atomic_store_explicit(&m->h->pid, (uint64_t)getpid(), memory_order_relaxed);
	*ret = m;
	return 0;
}

int inf_metrics_memfd_create(void)
{
	struct inf_metrics *m;
	int fd = memfd_create("kcmd-informer-metrics", MFD_CLOEXEC | MFD_ALLOW_SEALING), r;

	if (fd < 0)
		return -errno;
	r = inf_metrics_open(fd, &m);
	if (r < 0) {
		close(fd);
		return r;
	}
	inf_metrics_close(m);
	/* sized and initialised: informerd (the writer) can no longer shrink it under the
	 * manager's read-only mapping */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

struct inf_metrics *inf_metrics_close(struct inf_metrics *m)
{
	if (!m)
		return NULL;
	munmap(m->h, sizeof(*m->h));
	if (m->own_fd)
		close(m->fd);
	free(m);
	return NULL;
}

void inf_metrics_discovery_sync_error(struct inf_metrics *m)
{
	if (m)
		atomic_store_explicit(
		        &m->h->discovery_sync_errors,
		        atomic_load_explicit(&m->h->discovery_sync_errors, memory_order_relaxed) +
		                1,
		        memory_order_relaxed);
}

void inf_metrics_barrier_done(struct inf_metrics *m, uint64_t usec)
{
	if (!m)
		return;
	/* relaxed: single writer (M2); the manager reads each word on its own */
	atomic_store_explicit(&m->h->barriers,
	                      atomic_load_explicit(&m->h->barriers, memory_order_relaxed) + 1,
	                      memory_order_relaxed);
	atomic_store_explicit(&m->h->barrier_usec_sum,
	                      atomic_load_explicit(&m->h->barrier_usec_sum, memory_order_relaxed) +
	                              usec,
	                      memory_order_relaxed);
	atomic_store_explicit(&m->h->barrier_usec_last, usec, memory_order_relaxed);
}

int inf_metrics_fd(const struct inf_metrics *m)
{
	return m->fd;
}

static void copy_name(char *dst, const char *src)
{
	size_t l = strnlen(src ? src : "", INF_METRICS_NAME_MAX - 1);

	memcpy(dst, src ? src : "", l);
	memset(dst + l, 0, INF_METRICS_NAME_MAX - l);
}

struct inf_metrics_row *inf_metrics_row(struct inf_metrics *m, const char *group,
                                        const char *resource)
{
	uint64_t n;
	struct inf_metrics_row *row;
	char g[INF_METRICS_NAME_MAX], r[INF_METRICS_NAME_MAX];

	if (!m)
		return NULL;
	copy_name(g, group);
	copy_name(r, resource);
	n = atomic_load_explicit(&m->h->n_rows, memory_order_relaxed);
	for (uint64_t i = 0; i < n && i < INF_METRICS_MAX_ROWS; i++)
		if (!memcmp(m->h->rows[i].group, g, sizeof(g)) &&
		    !memcmp(m->h->rows[i].resource, r, sizeof(r)))
			return &m->h->rows[i];
	if (n >= INF_METRICS_MAX_ROWS)
		return NULL;
	row = &m->h->rows[n];
	memcpy(row->group, g, sizeof(g));
	memcpy(row->resource, r, sizeof(r));
	for (int k = 0; k < INF_M_COUNT; k++)
		atomic_store_explicit(&row->v[k], 0, memory_order_relaxed);
	/* release: the row's names and zeroed counters before it is counted (M1; pairs with the
	 * reader's acquire load of n_rows). */
	atomic_store_explicit(&m->h->n_rows, n + 1, memory_order_release);
	return row;
}

int inf_metrics_map_ro(int fd, const struct inf_metrics_hdr **ret)
{
	struct stat st;
	const struct inf_metrics_hdr *h;

	if (fstat(fd, &st) < 0)
		return -errno;
	if ((size_t)st.st_size < sizeof(*h))
		return -EPROTO;
	h = mmap(NULL, sizeof(*h), PROT_READ, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED)
		return -errno;
	/* acquire: pairs with the release store of magic in inf_metrics_open. */
	if (atomic_load_explicit((_Atomic uint32_t *)&h->magic, memory_order_acquire) !=
	    INF_METRICS_MAGIC) {
		munmap((void *)h, sizeof(*h));
		return -EPROTO;
	}
	*ret = h;
	return 0;
}

void inf_metrics_unmap(const struct inf_metrics_hdr *h)
{
	if (h)
		munmap((void *)h, sizeof(*h));
}
