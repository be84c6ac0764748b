/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/cronjob/metrics.h: upstream's cronjob_controller_job_creation_skew_duration_seconds
 * (a STABLE histogram: the time from a Job's scheduled time to its creationTimestamp, buckets
 * 1, 2, 4, ... 512 s), kept in a memfd the manager creates (mgr_setup) and renders
 * (mgr_metrics), observed by every worker process of the controller.
 *
 * INVARIANTS (struct cj_metrics_region in metrics.c)
 *   - Writers: the controller's worker processes, any number at once; reader: the manager.
 *   - Each bucket count, the total count and the sum are 64-bit atomics. A bucket and the count
 *     are added relaxed; the sum (a double's bits) with a relaxed compare-exchange loop, so
 *     concurrent writers lose no observation. A reader loads each relaxed: a scrape may see an
 *     observation in the count but not yet in its bucket or the sum (as client_golang's own
 *     histogram may between its hot and cold counts); every value is monotonic on its own.
 *   - A writer that dies between the adds leaves the count ahead of the buckets by that
 *     observation; nothing else needs repair. Fixed size: the region never fills.
 *   - Version rule: the magic carries the layout version; a region with another magic is refused.
 */
#include <stdbool.h>

#define CJ_SKEW_BUCKETS 10 /* prometheus.ExponentialBuckets(1, 2, 10) */

struct cj_metrics;

/* Creates the region (manager): a sealed-size memfd. Returns the fd or -errno. */
int cj_metrics_memfd_create(void);
/* Maps fd, writable for a worker, read-only for the manager. 0 or -errno (-EPROTO: another
 * layout). */
int cj_metrics_attach(int fd, bool writer, struct cj_metrics **ret);
void cj_metrics_detach(struct cj_metrics *m);
/* Records one skew, in seconds. */
void cj_metrics_observe(struct cj_metrics *m, double seconds);
/* The histogram in the Prometheus text format (*ret malloc'd). 0 or -ENOMEM. */
int cj_metrics_text(struct cj_metrics *m, char **ret);
