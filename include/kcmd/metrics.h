/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * kcmd/metrics.h: updating the metric families a controller declares in its descriptor
 * (kcmd/controller.h, `metrics`). Part of the public controller API (kcmd/kcmd.h), versioned by
 * KCMD_CONTROLLER_ABI.
 *
 * The manager creates the controller's region before it starts the controller's processes and
 * passes it to its dispatcher and every worker process (KCMD_METRICS_FD), which map it at
 * start-up, before any controller code runs; kcmd_metrics_get() returns that mapping. Any number of
 * the controller's processes update it at once: every update is a lock-free atomic operation on
 * shared memory, so no update is lost, and a process killed mid-update loses at most that update
 * (docs/writing-a-controller.md).
 *
 * `id` is the metric's index in the descriptor's `metrics` array; `labels` holds one value per
 * declared label, in declaration order (NULL for a metric without labels). Every function is a
 * no-op returning -EBADF on a NULL region (no region passed: a unit test, a standalone run), so
 * a controller may call them unconditionally. Returns 0, or:
 *   -EINVAL  id out of range, the wrong function for the metric's type, a label value not in
 *            the label's fixed set, a NULL value, NaN observed;
 *   -ENOSPC  the metric's series table is full (the update is counted in
 *            kcmd_metric_series_dropped_total{metric="<name>"});
 *   -ENAMETOOLONG  the label values of a series do not fit 256 bytes (counted as dropped too).
 * Safe from any thread, and async-signal-safe.
 */
#include <stdint.h>

struct kcmd_metrics; /* one controller's region, mapped in this process */

/* The region of this process's controller (a kcmd process runs one controller), mapped
 * writable for the life of the process. NULL when the manager passed none (the controller
 * declares no metrics, a unit test) or it did not match the declaration. */
struct kcmd_metrics *kcmd_metrics_get(void);

/* COUNTER: adds n (n = 0 still creates the series, as client_golang's Add(0)). */
int kcmd_metric_add(struct kcmd_metrics *m, unsigned id, const char *const *labels, uint64_t n);
static inline int kcmd_metric_inc(struct kcmd_metrics *m, unsigned id, const char *const *labels)
{
	return kcmd_metric_add(m, id, labels, 1);
}
/* HISTOGRAM: one observation (the first bucket whose upper bound is >= v, else +Inf). */
int kcmd_metric_observe(struct kcmd_metrics *m, unsigned id, const char *const *labels, double v);
/* GAUGE: sets the value (the last writer wins) / adds to it (atomically). */
int kcmd_metric_set(struct kcmd_metrics *m, unsigned id, const char *const *labels, double v);
int kcmd_metric_gauge_add(struct kcmd_metrics *m, unsigned id, const char *const *labels, double d);
