/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manager/metrics.c: client-go's workqueue metric family from ipc_queue_metrics.
 *
 * Names, types and histogram buckets follow client-go's workqueue Prometheus provider:
 * depth, adds_total, retries_total (counters/gauges labelled name), queue_duration_seconds and
 * work_duration_seconds (histograms with buckets 1e-8 s × 10^i, i = 0..9),
 * unfinished_work_seconds and longest_running_processor_seconds (gauges). kcmd's own, in the
 * same shape under kcmd_: parked keys now and in total, worker deaths.
 */
#include "manager/metrics.h"

#include <math.h>

static const char *const families[][3] = {
        {"workqueue_depth", "gauge", "Current depth of workqueue"},
        {"workqueue_adds_total", "counter", "Total number of adds handled by workqueue"},
        {"workqueue_queue_duration_seconds", "histogram",
         "How long in seconds an item stays in workqueue before being requested."},
        {"workqueue_work_duration_seconds", "histogram",
         "How long in seconds processing an item from workqueue takes."},
        {"workqueue_unfinished_work_seconds", "gauge",
         "How many seconds of work has done that is in progress and hasn't been observed by "
         "work_duration. Large values indicate stuck threads. One can deduce the number of stuck "
         "threads by observing the rate at which this increases."},
        {"workqueue_longest_running_processor_seconds", "gauge",
         "How many seconds has the longest running processor for workqueue been running."},
        {"workqueue_retries_total", "counter", "Total number of retries handled by workqueue"},
        /* kcmd's own: a key parked after its worker crashed on it park_after times in a row */
        {"kcmd_workqueue_parked_keys", "gauge",
         "Keys of workqueue parked now (their worker process crashed on them repeatedly)"},
        {"kcmd_workqueue_parked_keys_total", "counter", "Total number of keys parked by workqueue"},
        {"kcmd_workqueue_worker_deaths_total", "counter",
         "Total number of worker processes of workqueue that died holding a lease or attached"},
};

void mgr_metrics_workqueue_headers(struct mgr_metrics_buf *b)
{
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		mgr_metrics_printf(b, "# HELP %s [ALPHA] %s\n# TYPE %s %s\n", families[i][0],
		                   families[i][2], families[i][0], families[i][1]);
}

static void histogram(struct mgr_metrics_buf *b, const char *fam, const char *name,
                      const uint64_t *le, uint64_t count, double sum)
{
	for (unsigned i = 0; i < IPC_QUEUE_HIST_BUCKETS; i++)
		mgr_metrics_printf(b, "%s_bucket{name=\"%s\",le=\"%g\"} %llu\n", fam, name,
		                   1e-8 * pow(10, i), (unsigned long long)le[i]);
	mgr_metrics_printf(b, "%s_bucket{name=\"%s\",le=\"+Inf\"} %llu\n", fam, name,
	                   (unsigned long long)count);
	mgr_metrics_printf(b, "%s_sum{name=\"%s\"} %.9g\n", fam, name, sum);
	mgr_metrics_printf(b, "%s_count{name=\"%s\"} %llu\n", fam, name, (unsigned long long)count);
}

void mgr_metrics_workqueue(struct mgr_metrics_buf *b, const struct ipc_queue_metrics *m)
{
	mgr_metrics_printf(b, "workqueue_depth{name=\"%s\"} %llu\n", m->name,
	                   (unsigned long long)m->depth);
	mgr_metrics_printf(b, "workqueue_adds_total{name=\"%s\"} %llu\n", m->name,
	                   (unsigned long long)m->adds_total);
	mgr_metrics_printf(b, "workqueue_retries_total{name=\"%s\"} %llu\n", m->name,
	                   (unsigned long long)m->retries_total);
	histogram(b, "workqueue_queue_duration_seconds", m->name, m->queue_duration_le,
	          m->queue_duration_count, m->queue_duration_sum);
	histogram(b, "workqueue_work_duration_seconds", m->name, m->work_duration_le,
	          m->work_duration_count, m->work_duration_sum);
	mgr_metrics_printf(b, "workqueue_unfinished_work_seconds{name=\"%s\"} %.9g\n", m->name,
	                   m->unfinished_work_seconds);
	mgr_metrics_printf(b, "workqueue_longest_running_processor_seconds{name=\"%s\"} %.9g\n",
	                   m->name, m->longest_running_processor_seconds);
	mgr_metrics_printf(b, "kcmd_workqueue_parked_keys{name=\"%s\"} %llu\n", m->name,
	                   (unsigned long long)m->parked);
	mgr_metrics_printf(b, "kcmd_workqueue_parked_keys_total{name=\"%s\"} %llu\n", m->name,
	                   (unsigned long long)m->parked_total);
	mgr_metrics_printf(b, "kcmd_workqueue_worker_deaths_total{name=\"%s\"} %llu\n", m->name,
	                   (unsigned long long)m->worker_deaths_total);
}
