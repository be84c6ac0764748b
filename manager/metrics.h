/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * manager/metrics.h: Prometheus text for the shared counters, under upstream's metric names so
 * existing kube-controller-manager dashboards work (workqueue_* as client-go registers them).
 */
#include "ipc/queue.h"
#include "manager/httpd.h"

/* Writes the HELP/TYPE headers of the workqueue family once, then one block per queue. */
void mgr_metrics_workqueue_headers(struct mgr_metrics_buf *b);
void mgr_metrics_workqueue(struct mgr_metrics_buf *b, const struct ipc_queue_metrics *m);
