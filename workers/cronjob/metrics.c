/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/cronjob/metrics.c: the CronJob controller's creation-skew histogram in shared memory
 * (see metrics.h for the invariants).
 */
#include "workers/cronjob/metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CJ_METRICS_MAGIC 0x314d4a43u /* "CJM1" */
#define NAME             "cronjob_controller_job_creation_skew_duration_seconds"

struct cj_metrics_region {
	uint32_t magic;
	uint32_t n_buckets;
	_Atomic uint64_t bucket[CJ_SKEW_BUCKETS]; /* observations <= 2^i s, not cumulative */
	_Atomic uint64_t count;
	_Atomic uint64_t sum_bits; /* a double */
};

struct cj_metrics {
	struct cj_metrics_region *r;
};

int cj_metrics_memfd_create(void)
{
	int fd = memfd_create("kcmd-cronjob-metrics", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	struct cj_metrics_region *r;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, sizeof(*r)) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0)
		goto fail;
	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r == MAP_FAILED)
		goto fail;
	r->n_buckets = CJ_SKEW_BUCKETS;
	r->magic = CJ_METRICS_MAGIC;
	munmap(r, sizeof(*r));
	return fd;
fail:;
	int e = -errno;
	close(fd);
	return e;
}

int cj_metrics_attach(int fd, bool writer, struct cj_metrics **ret)
{
	struct cj_metrics_region *r;
	struct cj_metrics *m;
	off_t size = lseek(fd, 0, SEEK_END);

	if (size < 0)
		return -errno;
	if ((size_t)size < sizeof(*r))
		return -EPROTO;
	r = mmap(NULL, sizeof(*r), writer ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
	if (r == MAP_FAILED)
		return -errno;
	if (r->magic != CJ_METRICS_MAGIC || r->n_buckets != CJ_SKEW_BUCKETS) {
		munmap(r, sizeof(*r));
		return -EPROTO;
	}
	if (!(m = calloc(1, sizeof(*m)))) {
		munmap(r, sizeof(*r));
		return -ENOMEM;
	}
	m->r = r;
	*ret = m;
	return 0;
}

void cj_metrics_detach(struct cj_metrics *m)
{
	if (!m)
		return;
	munmap(m->r, sizeof(*m->r));
	free(m);
}

void cj_metrics_observe(struct cj_metrics *m, double seconds)
{
	uint64_t old, next;
	double sum;

	if (!m)
		return;
	for (int i = 0; i < CJ_SKEW_BUCKETS; i++)
		if (seconds <= (double)(1u << i)) {
			atomic_fetch_add_explicit(&m->r->bucket[i], 1, memory_order_relaxed);
			break;
		}
	atomic_fetch_add_explicit(&m->r->count, 1, memory_order_relaxed);
	old = atomic_load_explicit(&m->r->sum_bits, memory_order_relaxed);
	do {
		memcpy(&sum, &old, sizeof(sum));
		sum += seconds;
		memcpy(&next, &sum, sizeof(next));
	} while (!atomic_compare_exchange_weak_explicit(
	        &m->r->sum_bits, &old, next, memory_order_relaxed, memory_order_relaxed));
}

int cj_metrics_text(struct cj_metrics *m, char **ret)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	uint64_t cum = 0, bits, count;
	double sum;

	if (!f)
		return -ENOMEM;
	fprintf(f,
	        "# HELP " NAME " [STABLE] Time between when a cronjob is scheduled to be run, and "
	        "when the corresponding job is created\n# TYPE " NAME " histogram\n");
	for (int i = 0; i < CJ_SKEW_BUCKETS; i++) {
		cum += atomic_load_explicit(&m->r->bucket[i], memory_order_relaxed);
		fprintf(f, NAME "_bucket{le=\"%u\"} %llu\n", 1u << i, (unsigned long long)cum);
	}
	/* +Inf and _count are the same number (the count, read once, never below the buckets) */
	count = atomic_load_explicit(&m->r->count, memory_order_relaxed);
	if (count < cum)
		count = cum;
	bits = atomic_load_explicit(&m->r->sum_bits, memory_order_relaxed);
	memcpy(&sum, &bits, sizeof(sum));
	fprintf(f, NAME "_bucket{le=\"+Inf\"} %llu\n" NAME "_sum %.17g\n" NAME "_count %llu\n",
	        (unsigned long long)count, sum, (unsigned long long)count);
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	*ret = buf;
	return 0;
}
