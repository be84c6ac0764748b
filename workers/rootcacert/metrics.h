/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/rootcacert/metrics.h: upstream's root_ca_cert_publisher_sync_total (counter) and
 * root_ca_cert_publisher_sync_duration_seconds (histogram, buckets 0.001 s × 2^i, i = 0..14),
 * both by `code` ("200" for a sync without error, the apiserver's HTTP code of a failed
 * request, "500" for any other failure; upstream's recordMetrics), kept in a memfd the manager
 * creates (mgr_setup) and renders (mgr_metrics), written by the controller's worker.
 *
 * INVARIANTS (struct rc_metrics_region)
 *   - Writer: the publisher's worker, one process at a time (the manager starts the next only
 *     after reaping the previous). Reader: the manager's /metrics rendering.
 *   - A series is one of RC_METRIC_SLOTS slots keyed by its code. The writer claims a free slot
 *     (code 0) by a release store of the code; the reader loads the code with acquire (pairs
 *     with that store) and skips slots whose code is 0. A code never changes once stored.
 *   - Counts, bucket counts and the sum (ns) are 64-bit atomics, added relaxed by the writer and
 *     loaded relaxed by the reader; each is monotonic. A scrape loads the buckets before the
 *     count and renders the count as at least the buckets' total, so +Inf never falls below a
 *     bucket.
 *   - Nothing observed yet: neither family is rendered (as an empty vector in client_golang).
 *   - Full table (a 17th distinct code): the observation is counted in `dropped` (rendered as
 *     kcmd_root_ca_cert_publisher_metric_series_dropped_total); the sync itself goes on.
 *   - A writer that dies mid-update loses at most that observation's remaining additions.
 *   - Version rule: the magic carries the layout version; another magic is refused (-EPROTO).
 */
#include <stdbool.h>
#include <stdint.h>

#define RC_METRIC_SLOTS   16u
#define RC_METRIC_BUCKETS 15u

struct rc_metrics;

int rc_metrics_memfd_create(void);
int rc_metrics_attach(int fd, bool writer, struct rc_metrics **ret);
void rc_metrics_detach(struct rc_metrics *m);
/* upstream's code label for a sync's result: 0 -> 200, an apiserver error -> its HTTP code,
 * anything else -> 500 */
int rc_metrics_code(int err, int http_code);
void rc_metrics_observe(struct rc_metrics *m, int code, uint64_t duration_ns);
/* The exposition text of both families (malloc'd). 0 or -ENOMEM. */
int rc_metrics_text(struct rc_metrics *m, char **ret);
