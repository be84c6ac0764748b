/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/podgc/metrics.h: the pod GC's two counter vectors, upstream's
 * pod_gc_collector_force_delete_pods_total and pod_gc_collector_force_delete_pod_errors_total
 * {namespace, reason}, kept in a memfd the manager creates (mgr_setup) and renders (mgr_metrics),
 * written by the controller's one worker process.
 *
 * INVARIANTS (the region, struct pgc_metrics_region in metrics.c)
 *   - Writer: the pod GC worker, one process at a time (the manager runs one, and starts the
 *     next only after the previous one is reaped). Readers: the manager's /metrics rendering.
 *   - A series is a slot of an open-addressed table keyed by (namespace, reason). The writer
 *     fills the slot's key, then publishes it with a release store of `used` = 1; a reader loads
 *     `used` with acquire and only then reads the key (pairs with that store). A key never
 *     changes once published; slots are never freed.
 *   - The two counters are 64-bit atomics, added relaxed by the writer and loaded relaxed by the
 *     reader (each value is monotonic on its own; the pair needs no consistency).
 *   - A writer that dies mid-fill leaves an unpublished slot (used == 0) that the next writer
 *     may claim and overwrite: a reader never sees it.
 *   - Full table (PGC_METRIC_SLOTS series, or no free slot within the probe limit): the
 *     increment is counted in `dropped` instead (rendered as
 * kcmd_pod_gc_metric_series_dropped_total) and logged once by the worker; the force deletion itself
 * goes on.
 *   - Version rule: the magic carries the layout version; a region with another magic is refused.
 */
#include <stdbool.h>
#include <stdint.h>

#include "workers/podgc/gc.h"

#define PGC_METRIC_SLOTS 4096u /* namespaces x reasons */

struct pgc_metrics;

/* Creates the region (manager): a sealed-size memfd. Returns the fd or -errno. */
int pgc_metrics_memfd_create(void);
/* Maps fd. writer: the worker; else read-only (the manager). Returns 0 or -errno (-EPROTO for a
 * region of another layout). */
int pgc_metrics_attach(int fd, bool writer, struct pgc_metrics **ret);
void pgc_metrics_detach(struct pgc_metrics *m);
/* Adds 1 to the total (and the errors counter when error) of (ns, reason). Returns 0, or -ENOSPC
 * when the table is full (counted in dropped). */
int pgc_metrics_inc(struct pgc_metrics *m, const char *ns, enum pgc_reason reason, bool total,
                    bool error);
/* Renders the families in the Prometheus text format (HELP/TYPE only when a series exists, as
 * client_golang's registry does). *ret is malloc'd. Returns 0 or -ENOMEM. */
int pgc_metrics_text(struct pgc_metrics *m, char **ret);
