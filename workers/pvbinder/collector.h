/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/pvbinder/collector.h: upstream's pvAndPVCCountCollector
 * (pkg/controller/volume/persistentvolume/metrics, v1.37): the pv_collector_* gauges, computed
 * from every PersistentVolume and PersistentVolumeClaim of the informer cache at each scrape.
 * docs/pvbinder.md, *Metrics*.
 *
 * Design note.
 *   Pure: objects in (parsed JSON, one call each), Prometheus text out. The manager's
 *   mgr_metrics hook (plugin.c) walks the shared cache and feeds it. Each object adds one row
 *   per family it counts in; rendering sorts the rows and counts equal ones, so a scrape is
 *   O(n log n) in the number of objects, with no table that outlives it (a namespace whose
 *   claims are all gone disappears from the next scrape, as upstream's const metrics do).
 *   Rejected: gauges in the controller's metrics region kept current by the binder (its
 *   series are never freed, so an emptied namespace or class would stay at 0 where upstream
 *   shows nothing, and objects the binder never syncs, or deletes it only sees after a crash,
 *   would drift the counts).
 */
#include <stdio.h>

#include <cjson/cJSON.h>

struct pvb_collector;

struct pvb_collector *pvb_collector_new(void);
void pvb_collector_free(struct pvb_collector *c);
/* Counts one PersistentVolume (pv_collector_total_pv_count by plugin and volume mode;
 * bound_pv_count or unbound_pv_count by spec.storageClassName). 0, -EINVAL (not an object),
 * -ENOMEM. */
int pvb_collector_add_volume(struct pvb_collector *c, const cJSON *pv);
/* Counts one PersistentVolumeClaim (bound_pvc_count or unbound_pvc_count by namespace, class,
 * volume attributes class). 0, -EINVAL, -ENOMEM. */
int pvb_collector_add_claim(struct pvb_collector *c, const cJSON *pvc);
/* Writes the families with at least one series, in name order, series sorted by their label
 * values (client_golang's output). 0 or -ENOMEM (nothing written). */
int pvb_collector_render(struct pvb_collector *c, FILE *f);
/* The plugin_name label of a volume: the one of kcm's binder volume plugins (hostPath,
 * nfs; the binder's plugin manager holds no other, CSI included) that supports it, else
 * "N/A". */
const char *pvb_collector_plugin_name(const cJSON *pv);
