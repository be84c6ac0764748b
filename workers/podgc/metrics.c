/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/podgc/metrics.c: the pod GC's counters in shared memory (see metrics.h).
 */
#include "workers/podgc/metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PGC_METRICS_MAGIC 0x31434750u /* "PGC1" */
#define PGC_PROBES        64u

struct pgc_slot {
	_Atomic uint32_t used;
	uint8_t reason;
	uint8_t pad[3];
	char ns[64]; /* a namespace name is a DNS label: at most 63 bytes */
	_Atomic uint64_t total, errors;
};
_Static_assert(sizeof(struct pgc_slot) == 88, "pgc_slot layout");

struct pgc_metrics_region {
	uint32_t magic;
	uint32_t n_slots;
	_Atomic uint64_t dropped;
	struct pgc_slot slot[PGC_METRIC_SLOTS];
};

struct pgc_metrics {
	struct pgc_metrics_region *r;
	bool writer;
};

int pgc_metrics_memfd_create(void)
{
	int fd = memfd_create("kcmd-podgc-metrics", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	struct pgc_metrics_region *r;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, sizeof(*r)) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0)
		goto fail;
	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r == MAP_FAILED)
		goto fail;
	r->n_slots = PGC_METRIC_SLOTS;
	r->magic = PGC_METRICS_MAGIC;
	munmap(r, sizeof(*r));
	return fd;
fail:;
	int e = -errno;
	close(fd);
	return e;
}

int pgc_metrics_attach(int fd, bool writer, struct pgc_metrics **ret)
{
	struct pgc_metrics *m;
	struct pgc_metrics_region *r;
	off_t size = lseek(fd, 0, SEEK_END);

	if (size < 0)
		return -errno;
	if ((size_t)size < sizeof(*r))
		return -EPROTO;
	r = mmap(NULL, sizeof(*r), writer ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
	if (r == MAP_FAILED)
		return -errno;
	if (r->magic != PGC_METRICS_MAGIC || r->n_slots != PGC_METRIC_SLOTS) {
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

void pgc_metrics_detach(struct pgc_metrics *m)
{
	if (!m)
		return;
	munmap(m->r, sizeof(*m->r));
	free(m);
}

static uint64_t hash_key(const char *ns, unsigned reason)
{
	uint64_t h = 1469598103934665603ull ^ reason;
	for (; *ns; ns++)
		h = (h ^ (unsigned char)*ns) * 1099511628211ull;
	return h;
}

int pgc_metrics_inc(struct pgc_metrics *m, const char *ns, enum pgc_reason reason, bool total,
                    bool error)
{
	struct pgc_slot *s = NULL;
	size_t len;

	if (!m || !m->writer)
		return -EBADF;
	if (!ns)
		ns = "";
	len = strlen(ns);
	if (len >= sizeof(s->ns))
		len = sizeof(s->ns) - 1; /* not a valid namespace: keep a prefix */
	uint64_t h = hash_key(ns, (unsigned)reason);
	for (unsigned p = 0; p < PGC_PROBES; p++) {
		struct pgc_slot *c = &m->r->slot[(h + p) % PGC_METRIC_SLOTS];
		/* acquire: pairs with the release below (a slot published by a previous writer) */
		if (!atomic_load_explicit(&c->used, memory_order_acquire)) {
			memset(c->ns, 0, sizeof(c->ns));
			memcpy(c->ns, ns, len);
			c->reason = (uint8_t)reason;
			/* release: the key is visible before the slot counts as used */
			atomic_store_explicit(&c->used, 1, memory_order_release);
			s = c;
			break;
		}
		if (c->reason == (uint8_t)reason && strncmp(c->ns, ns, len) == 0 && !c->ns[len]) {
			s = c;
			break;
		}
	}
	if (!s) {
		atomic_fetch_add_explicit(&m->r->dropped, 1, memory_order_relaxed);
		return -ENOSPC;
	}
	if (total)
		atomic_fetch_add_explicit(&s->total, 1, memory_order_relaxed);
	if (error)
		atomic_fetch_add_explicit(&s->errors, 1, memory_order_relaxed);
	return 0;
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
	int n;

	if (b->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if (b->p && (size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = (b->cap + (size_t)n + 1) * 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
}

/* Namespace names are DNS labels; a prefix kept from something else is escaped anyway. */
static void label_value(struct buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			bprintf(b, "\\%c", *s);
		else if (*s == '\n')
			bprintf(b, "\\n");
		else
			bprintf(b, "%c", *s);
	}
}

static void family(struct buf *b, struct pgc_metrics_region *r, const char *name, const char *help,
                   bool errors)
{
	bool any = false;

	for (unsigned i = 0; i < PGC_METRIC_SLOTS; i++) {
		struct pgc_slot *s = &r->slot[i];
		/* acquire: pairs with the writer's release of `used` (the key is complete) */
		if (!atomic_load_explicit(&s->used, memory_order_acquire))
			continue;
		uint64_t v =
		        atomic_load_explicit(errors ? &s->errors : &s->total, memory_order_relaxed);
		if (errors && !v)
			continue; /* WithLabelValues was never called for it upstream */
		if (!any) {
			bprintf(b, "# HELP %s [ALPHA] %s\n# TYPE %s counter\n", name, help, name);
			any = true;
		}
		char ns[sizeof(s->ns) + 1];
		memcpy(ns, s->ns, sizeof(s->ns));
		ns[sizeof(s->ns)] = 0;
		bprintf(b, "%s{namespace=\"", name);
		label_value(b, ns);
		bprintf(b, "\",reason=\"%s\"} %llu\n", pgc_reason_label(s->reason),
		        (unsigned long long)v);
	}
}

int pgc_metrics_text(struct pgc_metrics *m, char **ret)
{
	struct buf b = {0};

	bprintf(&b, "%s", "");
	if (m) {
		family(&b, m->r, "pod_gc_collector_force_delete_pods_total",
		       "Number of pods that are being forcefully deleted since the Pod GC "
		       "Controller "
		       "started.",
		       false);
		family(&b, m->r, "pod_gc_collector_force_delete_pod_errors_total",
		       "Number of errors encountered when forcefully deleting the pods since the "
		       "Pod "
		       "GC Controller started.",
		       true);
		uint64_t d = atomic_load_explicit(&m->r->dropped, memory_order_relaxed);
		if (d)
			bprintf(&b,
			        "# HELP kcmd_pod_gc_metric_series_dropped_total kcmd: pod GC "
			        "counter "
			        "increments not recorded (series table full)\n"
			        "# TYPE kcmd_pod_gc_metric_series_dropped_total counter\n"
			        "kcmd_pod_gc_metric_series_dropped_total %llu\n",
			        (unsigned long long)d);
	}
	if (b.oom) {
		free(b.p);
		return -ENOMEM;
	}
	*ret = b.p;
	return 0;
}
