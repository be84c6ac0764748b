/* SPDX-License-Identifier: Apache-2.0 */
/* kube/restmetrics.c - the shared rest_client_* counters (design note in kube/restmetrics.h). */
#include "kube/restmetrics.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define RM_MAGIC   0x6b636d6472657374ull /* "kcmdrest" */
#define RM_VERSION 2                     /* 2: events_dropped */

enum { ROW_FREE = 0, ROW_CLAIMED = 1, ROW_READY = 2 };

struct rm_row {
	_Atomic uint32_t state;
	int32_t code;
	char method[8];
	char host[KUBE_RM_HOST_MAX];
	_Atomic uint64_t count;
	_Atomic uint64_t buckets[KUBE_RM_NBUCKETS];
	_Atomic uint64_t dur_count, dur_sum_usec;
};

struct rm_table {
	uint64_t magic;
	uint32_t version, n_rows;
	_Atomic uint64_t dropped;
	_Atomic uint64_t events_dropped; /* kube_rest_metrics_event_dropped (R2's rule) */
	struct rm_row rows[KUBE_RM_ROWS];
};

static struct rm_table *attached; /* this process's mapping, read-write */
static bool env_tried;

int kube_rest_metrics_create(void)
{
	int fd = memfd_create("kcmd-rest-metrics", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, sizeof(struct rm_table)) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	/* the size never changes: a child cannot shrink it under the others' mappings */
	(void)fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
	struct rm_table *t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (t == MAP_FAILED) {
		int e = -errno;
		close(fd);
		return e;
	}
	t->version = RM_VERSION;
	t->n_rows = KUBE_RM_ROWS;
	/* version rule: magic last. The fd reaches other processes only after this returns, by
	 * fork/exec, which orders these stores before any reader's loads; the fence pairs with
	 * no acquire and only keeps the compiler from sinking the header stores below magic. */
	atomic_thread_fence(memory_order_release);
	t->magic = RM_MAGIC;
	munmap(t, sizeof(*t));
	return fd;
}

static int map_table(int fd, int prot, struct rm_table **ret)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if ((size_t)st.st_size != sizeof(struct rm_table))
		return -EINVAL;
	struct rm_table *t = mmap(NULL, sizeof(*t), prot, MAP_SHARED, fd, 0);
	if (t == MAP_FAILED)
		return -errno;
	if (t->magic != RM_MAGIC || t->version != RM_VERSION || t->n_rows != KUBE_RM_ROWS) {
		munmap(t, sizeof(*t));
		return -EINVAL;
	}
	*ret = t;
	return 0;
}

int kube_rest_metrics_attach(int fd)
{
	if (attached)
		return 0;
	return map_table(fd, PROT_READ | PROT_WRITE, &attached);
}

void kube_rest_metrics_attach_env(void)
{
	const char *v;
	char *end;
	if (env_tried || attached)
		return;
	env_tried = true;
	v = getenv("KCMD_REST_METRICS_FD");
	if (!v || !*v)
		return;
	long fd = strtol(v, &end, 10);
	if (*end || fd < 0 || fd > 65535)
		return;
	(void)kube_rest_metrics_attach((int)fd);
}

static bool row_is(const struct rm_row *r, const char *method, int code, const char *host)
{
	return r->code == code && strncmp(r->method, method, sizeof(r->method)) == 0 &&
	       strncmp(r->host, host, sizeof(r->host)) == 0;
}

static struct rm_row *find_or_claim(struct rm_table *t, const char *method, int code,
                                    const char *host)
{
	for (unsigned i = 0; i < KUBE_RM_ROWS; i++) {
		struct rm_row *r = &t->rows[i];
		/* acquire: pairs with the READY release store below (R1), so the key reads see it
		 */
		uint32_t s = atomic_load_explicit(&r->state, memory_order_acquire);
		if (s == ROW_READY) {
			if (row_is(r, method, code, host))
				return r;
			continue;
		}
		if (s == ROW_CLAIMED)
			continue; /* someone is writing its key; it may be ours: a duplicate row is
			             fine */
		uint32_t want = ROW_FREE;
		/* on failure `want` is loaded with acquire: pairs with the READY release store of
		 * the winner (R1), so row_is may read its key */
		if (!atomic_compare_exchange_strong_explicit(&r->state, &want, ROW_CLAIMED,
		                                             memory_order_acq_rel,
		                                             memory_order_acquire)) {
			if (want == ROW_READY && row_is(r, method, code, host))
				return r;
			continue;
		}
		r->code = code;
		memcpy(r->method, method, strnlen(method, sizeof(r->method) - 1));
		memcpy(r->host, host, strnlen(host, sizeof(r->host) - 1));
		/* release: publishes the key; pairs with the acquire state loads here and in
		 * kube_rest_metrics_read (R1) */
		atomic_store_explicit(&r->state, ROW_READY, memory_order_release);
		return r;
	}
	return NULL;
}

void kube_rest_metrics_observe(const char *method, int code, const char *host, int64_t usec)
{
	static const double bounds[KUBE_RM_NBUCKETS] = KUBE_RM_BUCKETS_S;
	struct rm_table *t = attached;
	if (!t)
		return;
	struct rm_row *r = find_or_claim(t, method ? method : "", code, host ? host : "");
	if (!r) {
		atomic_fetch_add_explicit(&t->dropped, 1, memory_order_relaxed);
		return;
	}
	atomic_fetch_add_explicit(&r->count, 1, memory_order_relaxed);
	if (usec < 0)
		return;
	/* R3: sum and count first, the bucket last */
	atomic_fetch_add_explicit(&r->dur_sum_usec, (uint64_t)usec, memory_order_relaxed);
	atomic_fetch_add_explicit(&r->dur_count, 1, memory_order_relaxed);
	double s = (double)usec / 1e6;
	for (unsigned b = 0; b < KUBE_RM_NBUCKETS; b++)
		if (s <= bounds[b]) {
			/* release: pairs with the acquire bucket load in kube_rest_metrics_read,
			 * which then sees the dur_count increment above */
			atomic_fetch_add_explicit(&r->buckets[b], 1, memory_order_release);
			break;
		}
}

void kube_rest_metrics_event_dropped(void)
{
	struct rm_table *t = attached;
	if (t)
		atomic_fetch_add_explicit(&t->events_dropped, 1, memory_order_relaxed);
}

int kube_rest_metrics_read(int fd, void (*fn)(const struct kube_rest_metrics_row *row, void *ud),
                           void *ud, uint64_t *dropped)
{
	struct rm_table *t;
	int r = map_table(fd, PROT_READ, &t), n = 0;
	if (r < 0)
		return r;
	for (unsigned i = 0; i < KUBE_RM_ROWS; i++) {
		struct rm_row *row = &t->rows[i];
		/* acquire: pairs with the READY release store in find_or_claim (R1) */
		if (atomic_load_explicit(&row->state, memory_order_acquire) != ROW_READY)
			continue;
		char method[sizeof(row->method) + 1], host[sizeof(row->host) + 1];
		memcpy(method, row->method, sizeof(row->method));
		method[sizeof(row->method)] = 0;
		memcpy(host, row->host, sizeof(row->host));
		host[sizeof(row->host)] = 0;
		struct kube_rest_metrics_row out = {
		        .method = method,
		        .code = row->code,
		        .host = host,
		        .count = atomic_load_explicit(&row->count, memory_order_relaxed),
		};
		/* R3: the buckets first, each with acquire (pairs with the release bucket add in
		 * kube_rest_metrics_observe), then dur_count: every bucket increment seen here has
		 * its dur_count increment visible below */
		for (unsigned b = 0; b < KUBE_RM_NBUCKETS; b++)
			out.buckets[b] =
			        atomic_load_explicit(&row->buckets[b], memory_order_acquire);
		out.dur_count = atomic_load_explicit(&row->dur_count, memory_order_relaxed);
		out.dur_sum_usec = atomic_load_explicit(&row->dur_sum_usec, memory_order_relaxed);
		fn(&out, ud);
		n++;
	}
	if (dropped)
		*dropped = atomic_load_explicit(&t->dropped, memory_order_relaxed);
	munmap(t, sizeof(*t));
	return n;
}

int kube_rest_metrics_events_dropped(int fd, uint64_t *ret)
{
	struct rm_table *t;
	int r = map_table(fd, PROT_READ, &t);
	if (r < 0)
		return r;
	*ret = atomic_load_explicit(&t->events_dropped, memory_order_relaxed);
	munmap(t, sizeof(*t));
	return 0;
}
