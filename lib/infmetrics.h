/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * lib/infmetrics.h: writer and reader of informerd's shared counters (metrics-abi.h).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/infmetrics-abi.h"

struct inf_metrics;

/* Maps fd (a memfd or file, grown to the table's size) read-write and initialises it when
 * empty; fd < 0 creates a private memfd. -EPROTO another layout, -errno from mmap/ftruncate. */
int inf_metrics_open(int fd, struct inf_metrics **ret);
/* The manager's table for informerd: a new memfd, initialised, sealed against resizing
 * (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL). Returns the fd or -errno. */
int inf_metrics_memfd_create(void);
struct inf_metrics *inf_metrics_close(struct inf_metrics *m);
/* The fd behind the table (owned by m when m created it). */
int inf_metrics_fd(const struct inf_metrics *m);
/* The row of group/resource, found or published (M1). NULL when the table is full. */
struct inf_metrics_row *inf_metrics_row(struct inf_metrics *m, const char *group,
                                        const char *resource);

/* Single-writer updates (M2). row may be NULL (no-op). */
static inline void inf_metrics_add(struct inf_metrics_row *row, enum inf_metric k, uint64_t n)
{
	if (row)
		atomic_store_explicit(&row->v[k],
		                      atomic_load_explicit(&row->v[k], memory_order_relaxed) + n,
		                      memory_order_relaxed);
}
static inline void inf_metrics_set(struct inf_metrics_row *row, enum inf_metric k, uint64_t v)
{
	if (row)
		atomic_store_explicit(&row->v[k], v, memory_order_relaxed);
}

/* garbagecollector_controller_resources_sync_error_total += 1 (M2). m may be NULL. */
void inf_metrics_discovery_sync_error(struct inf_metrics *m);
/* One acquisition barrier completed, after usec µs. */
void inf_metrics_barrier_done(struct inf_metrics *m, uint64_t usec);

/* Reader: maps fd read-only. *ret stays valid until inf_metrics_unmap. -EPROTO bad magic. */
int inf_metrics_map_ro(int fd, const struct inf_metrics_hdr **ret);
void inf_metrics_unmap(const struct inf_metrics_hdr *h);
