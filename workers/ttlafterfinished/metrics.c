/* SPDX-License-Identifier: Apache-2.0 */
/* workers/ttlafterfinished/metrics.c: see metrics.h (INVARIANTS there). */
#include "workers/ttlafterfinished/metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define TTL_METRICS_MAGIC 0x6b63746c6d310001ULL /* "kctlm1", layout 1 */

struct ttl_metrics_region {
	uint64_t magic;
	_Atomic uint64_t
	        bucket[TTL_METRIC_BUCKETS]; /* observations <= 0.1 s · 2^k, not cumulative */
	_Atomic uint64_t inf;               /* above the last bucket */
	_Atomic int64_t sum_ns;
	_Atomic uint64_t count;
	uint64_t reserved[8];
};

struct ttl_metrics {
	struct ttl_metrics_region *r;
};

int ttl_metrics_memfd_create(void)
{
	int fd = memfd_create("kcmd-ttl-metrics", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	struct ttl_metrics_region *r;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, sizeof(*r)) < 0)
		goto fail;
	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r == MAP_FAILED)
		goto fail;
	r->magic = TTL_METRICS_MAGIC; /* before any process is given the fd */
	munmap(r, sizeof(*r));
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		goto fail;
	return fd;
fail:;
	int e = -errno;
	close(fd);
	return e;
}

int ttl_metrics_attach(int fd, bool writer, struct ttl_metrics **ret)
{
	struct ttl_metrics *m;
	void *p;

	if (fd < 0 || !ret)
		return -EINVAL;
	p = mmap(NULL, sizeof(struct ttl_metrics_region),
	         writer ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	if (((struct ttl_metrics_region *)p)->magic != TTL_METRICS_MAGIC) {
		munmap(p, sizeof(struct ttl_metrics_region));
		return -EPROTO;
	}
	if (!(m = calloc(1, sizeof(*m)))) {
		munmap(p, sizeof(struct ttl_metrics_region));
		return -ENOMEM;
	}
	m->r = p;
	*ret = m;
	return 0;
}

void ttl_metrics_detach(struct ttl_metrics *m)
{
	if (!m)
		return;
	munmap(m->r, sizeof(*m->r));
	free(m);
}

void ttl_metrics_observe(struct ttl_metrics *m, double seconds)
{
	if (!m || seconds != seconds)
		return;
	double le = 0.1;
	int k;
	for (k = 0; k < TTL_METRIC_BUCKETS && seconds > le; k++)
		le *= 2;
	/* relaxed: independent monotonic counters (INVARIANTS) */
	if (k < TTL_METRIC_BUCKETS)
		atomic_fetch_add_explicit(&m->r->bucket[k], 1, memory_order_relaxed);
	else
		atomic_fetch_add_explicit(&m->r->inf, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&m->r->sum_ns, (int64_t)(seconds * 1e9), memory_order_relaxed);
	atomic_fetch_add_explicit(&m->r->count, 1, memory_order_relaxed);
}

int ttl_metrics_text(struct ttl_metrics *m, char **ret)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (!m || !ret)
		return -EINVAL;
	if (!(f = open_memstream(&buf, &len)))
		return -ENOMEM;
	fprintf(f, "# HELP ttl_after_finished_controller_job_deletion_duration_seconds [ALPHA] The "
	           "time it took to delete the job since it became eligible for deletion\n"
	           "# TYPE ttl_after_finished_controller_job_deletion_duration_seconds "
	           "histogram\n");
	uint64_t cum = 0;
	double le = 0.1;
	for (int k = 0; k < TTL_METRIC_BUCKETS; k++, le *= 2) {
		cum += atomic_load_explicit(&m->r->bucket[k], memory_order_relaxed);
		fprintf(f,
		        "ttl_after_finished_controller_job_deletion_duration_seconds_bucket{le=\"%"
		        "g\"} "
		        "%llu\n",
		        le, (unsigned long long)cum);
	}
	cum += atomic_load_explicit(&m->r->inf, memory_order_relaxed);
	uint64_t count = atomic_load_explicit(&m->r->count, memory_order_relaxed);
	if (count < cum)
		count = cum;
	fprintf(f,
	        "ttl_after_finished_controller_job_deletion_duration_seconds_bucket{le=\"+Inf\"} "
	        "%llu\n",
	        (unsigned long long)count);
	fprintf(f, "ttl_after_finished_controller_job_deletion_duration_seconds_sum %.9g\n",
	        (double)atomic_load_explicit(&m->r->sum_ns, memory_order_relaxed) / 1e9);
	fprintf(f, "ttl_after_finished_controller_job_deletion_duration_seconds_count %llu\n",
	        (unsigned long long)count);
	if (fclose(f) != 0 || !buf) {
		free(buf);
		return -ENOMEM;
	}
	*ret = buf;
	return 0;
}
