/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/ttlafterfinished/metrics.h: upstream's ttl_after_finished_controller_job_deletion_
 * duration_seconds histogram (buckets 0.1 s · 2^k, k < 14), kept in a memfd the manager creates
 * (mgr_setup) and renders (mgr_metrics), observed by every worker process of the controller.
 *
 * INVARIANTS (struct ttl_metrics_region in metrics.c)
 *   - Writers: the controller's worker processes, any number at once; each observation is a
 *     relaxed atomic add to one bucket, to the sum (signed nanoseconds) and to the count. Reader:
 *     the manager's /metrics rendering, relaxed loads. No ordering between the words is needed:
 *     a scrape may see a bucket incremented before the count (the rendering takes +Inf as at
 *     least the bucket total, so the series stays monotonic and consistent).
 *   - A writer that dies between its adds leaves an observation counted partly; nothing is
 *     corrupted, nothing needs repair (monotonic counters).
 *   - Fixed size, nothing to fill: no table, no bound to hit.
 *   - Version rule: the magic carries the layout version; a region with another magic is
 *     refused with -EPROTO.
 */
#include <stdbool.h>
#include <stdint.h>

#define TTL_METRIC_BUCKETS 14

struct ttl_metrics;

/* Creates the region (manager): a sealed-size memfd. Returns the fd or -errno. */
int ttl_metrics_memfd_create(void);
/* Maps fd (writable for the workers, read-only for the manager). 0 or -errno (-EPROTO). */
int ttl_metrics_attach(int fd, bool writer, struct ttl_metrics **ret);
void ttl_metrics_detach(struct ttl_metrics *m);
/* One observation of seconds (may be negative under clock skew, as upstream's). */
void ttl_metrics_observe(struct ttl_metrics *m, double seconds);
/* The histogram in the Prometheus text format (HELP/TYPE, [ALPHA]); *ret malloc'd. 0/-ENOMEM. */
int ttl_metrics_text(struct ttl_metrics *m, char **ret);
