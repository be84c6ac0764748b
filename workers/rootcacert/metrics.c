/* SPDX-License-Identifier: Apache-2.0 */
/* workers/rootcacert/metrics.c: the root CA publisher's two metric families (metrics.h). */
#include "workers/rootcacert/metrics.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define RC_METRICS_MAGIC 0x6b7263610001ull /* "krca" v1 */

struct rc_slot {
	_Atomic uint32_t code; /* 0: free */
	uint32_t pad;
	_Atomic uint64_t count, sum_ns;
	_Atomic uint64_t bucket[RC_METRIC_BUCKETS]; /* le 0.001 s × 2^i, not cumulative */
};

struct rc_metrics_region {
	uint64_t magic;
	_Atomic uint64_t dropped;
	struct rc_slot slot[RC_METRIC_SLOTS];
};

struct rc_metrics {
	struct rc_metrics_region *r;
	bool writer;
};

int rc_metrics_memfd_create(void)
{
	struct rc_metrics_region *r;
	int fd = memfd_create("kcmd-rootca-metrics", MFD_CLOEXEC), e;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, sizeof(*r)) < 0 ||
	    (r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		e = -errno;
		close(fd);
		return e;
	}
	r->magic = RC_METRICS_MAGIC;
	munmap(r, sizeof(*r));
	return fd;
}

int rc_metrics_attach(int fd, bool writer, struct rc_metrics **ret)
{
	struct rc_metrics_region *r;
	struct rc_metrics *m;
	off_t size = lseek(fd, 0, SEEK_END);

	if (size < 0)
		return -errno;
	if ((size_t)size < sizeof(*r))
		return -EPROTO;
	r = mmap(NULL, sizeof(*r), writer ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
	if (r == MAP_FAILED)
		return -errno;
	if (r->magic != RC_METRICS_MAGIC) {
		munmap(r, sizeof(*r));
		return -EPROTO;
	}
	if (!(m = calloc(1, sizeof(*m)))) {
		munmap(r, sizeof(*r));
		return -ENOMEM;
	}
	m->r = r;
	m->writer = writer;
	*ret = m;
	return 0;
}

void rc_metrics_detach(struct rc_metrics *m)
{
	if (!m)
		return;
	munmap(m->r, sizeof(*m->r));
	free(m);
}

int rc_metrics_code(int err, int http_code)
{
	if (err == 0)
		return 200;
	return http_code > 0 ? http_code : 500;
}

void rc_metrics_observe(struct rc_metrics *m, int code, uint64_t ns)
{
	struct rc_slot *s = NULL;

	if (!m || !m->writer || code <= 0)
		return;
	for (size_t i = 0; i < RC_METRIC_SLOTS && !s; i++) {
		/* acquire: pairs with our own release store below (another writer's, after a
		 * restart) */
		uint32_t c = atomic_load_explicit(&m->r->slot[i].code, memory_order_acquire);
		if (c == (uint32_t)code)
			s = &m->r->slot[i];
		else if (c == 0) {
			s = &m->r->slot[i];
			/* release: publishes the slot; pairs with the reader's acquire load */
			atomic_store_explicit(&s->code, (uint32_t)code, memory_order_release);
		}
	}
	if (!s) {
		atomic_fetch_add_explicit(&m->r->dropped, 1, memory_order_relaxed);
		return;
	}
	uint64_t le_ns = 1000000; /* 0.001 s */
	for (size_t b = 0; b < RC_METRIC_BUCKETS; b++, le_ns *= 2)
		if (ns <= le_ns) {
			atomic_fetch_add_explicit(&s->bucket[b], 1, memory_order_relaxed);
			break;
		}
	atomic_fetch_add_explicit(&s->sum_ns, ns, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->count, 1, memory_order_relaxed);
}

struct buf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void bprintf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bprintf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		size_t room = b->cap - b->len;
		va_start(ap, fmt);
		int n = vsnprintf(b->p ? b->p + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = b->cap ? 2 * b->cap : 4096;
		while (cap - b->len <= (size_t)n)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
}

#define HELP "Number of namespace syncs happened in root ca cert publisher."

int rc_metrics_text(struct rc_metrics *m, char **ret)
{
	struct buf b = {0};

	*ret = NULL;
	bprintf(&b, "%s", "");
	bool any = false;
	for (size_t i = 0; m && i < RC_METRIC_SLOTS; i++)
		any |= atomic_load_explicit(&m->r->slot[i].code, memory_order_acquire) != 0;
	if (m && any) {
		bprintf(&b, "# HELP root_ca_cert_publisher_sync_duration_seconds [ALPHA] " HELP "\n"
		            "# TYPE root_ca_cert_publisher_sync_duration_seconds histogram\n");
		for (size_t i = 0; i < RC_METRIC_SLOTS; i++) {
			struct rc_slot *s = &m->r->slot[i];
			/* acquire: pairs with the writer's release store of the code */
			uint32_t c = atomic_load_explicit(&s->code, memory_order_acquire);
			uint64_t cum = 0, le_us = 1000;
			if (!c)
				continue;
			for (size_t k = 0; k < RC_METRIC_BUCKETS; k++, le_us *= 2) {
				cum += atomic_load_explicit(&s->bucket[k], memory_order_relaxed);
				bprintf(&b,
				        "root_ca_cert_publisher_sync_duration_seconds_bucket{code="
				        "\"%u\","
				        "le=\"%g\"} %llu\n",
				        c, (double)le_us / 1e6, (unsigned long long)cum);
			}
			uint64_t n = atomic_load_explicit(&s->count, memory_order_relaxed);
			if (n < cum)
				n = cum;
			bprintf(&b,
			        "root_ca_cert_publisher_sync_duration_seconds_bucket{code=\"%u\","
			        "le=\"+"
			        "Inf\"} %llu\n"
			        "root_ca_cert_publisher_sync_duration_seconds_sum{code=\"%u\"} "
			        "%.9g\n"
			        "root_ca_cert_publisher_sync_duration_seconds_count{code=\"%u\"} "
			        "%llu\n",
			        c, (unsigned long long)n, c,
			        (double)atomic_load_explicit(&s->sum_ns, memory_order_relaxed) /
			                1e9,
			        c, (unsigned long long)n);
		}
		bprintf(&b, "# HELP root_ca_cert_publisher_sync_total [ALPHA] " HELP "\n"
		            "# TYPE root_ca_cert_publisher_sync_total counter\n");
		for (size_t i = 0; i < RC_METRIC_SLOTS; i++) {
			struct rc_slot *s = &m->r->slot[i];
			uint32_t c = atomic_load_explicit(&s->code, memory_order_acquire);
			if (c)
				bprintf(&b, "root_ca_cert_publisher_sync_total{code=\"%u\"} %llu\n",
				        c,
				        (unsigned long long)atomic_load_explicit(
				                &s->count, memory_order_relaxed));
		}
	}
	if (m) {
		uint64_t d = atomic_load_explicit(&m->r->dropped, memory_order_relaxed);
		if (d)
			bprintf(&b,
			        "# HELP kcmd_root_ca_cert_publisher_metric_series_dropped_total "
			        "kcmd: "
			        "syncs not recorded (code table full)\n"
			        "# TYPE kcmd_root_ca_cert_publisher_metric_series_dropped_total "
			        "counter\n"
			        "kcmd_root_ca_cert_publisher_metric_series_dropped_total %llu\n",
			        (unsigned long long)d);
	}
	if (b.oom) {
		free(b.p);
		return -ENOMEM;
	}
	*ret = b.p;
	return 0;
}
