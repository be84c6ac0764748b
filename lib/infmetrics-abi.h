/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * lib/infmetrics-abi.h: informerd's counters in shared memory, for the manager's /metrics
 * and kcmctl.
 *
 * Design note.
 *   One small memfd (or file) holding a header and a fixed table of per-resource counter rows.
 *   informerd is the only writer; any process that has the fd maps it read-only and reads.
 *   Counters are monotonic except the gauges named so. The last synced resourceVersion and the
 *   synced flag are not repeated here: they live in the arena's resource table
 *   (shm_reader_type_info), which is the source of truth for warm restarts.
 *
 * INVARIANTS
 *   Who writes: informerd (one thread). Who reads: anyone with the fd.
 *   M1 A row is published by writing its names, then n_rows = i + 1 with a release store;
 *      readers load n_rows with acquire (pairs with that store) and read rows below it only.
 *      A row's names never change after it is published (a dropped resource keeps its row).
 *   M2 Each counter is a single-writer _Atomic uint64_t updated with relaxed load+store (no
 *      locked RMW: one writer); readers load relaxed. There is no consistency between two
 *      counters: a reader may see events of a list whose `lists` increment it does not see yet.
 *   M3 Writer death: counters stop; a restarted informerd adds to the same rows (it finds them
 *      by name), so counters stay monotonic across restarts; `restarts` counts the attaches.
 *   Version rule: magic carries the version; any layout change bumps it.
 */
#include <stdatomic.h>
#include <stdint.h>

#define INF_METRICS_MAGIC    0x314d4b49u /* "IKM1" little-endian: version 1 */
#define INF_METRICS_MAX_ROWS 512
#define INF_METRICS_NAME_MAX 64

enum inf_metric {
	INF_M_WATCH_EVENTS = 0, /* ADDED/MODIFIED/DELETED/BOOKMARK received */
	INF_M_LISTS,            /* LIST requests (pages) */
	INF_M_RELISTS,          /* replaces after the first */
	INF_M_WATCHES,          /* WATCH requests */
	INF_M_WATCH_RESTARTS,   /* watches re-opened after a normal end */
	INF_M_EXPIRED,          /* 410 Gone/Expired seen */
	INF_M_BACKOFFS,
	INF_M_LIST_COUNT,     /* completed replaces (the list-duration histogram count) */
	INF_M_LIST_USEC_SUM,  /* sum of their durations, microseconds */
	INF_M_LIST_USEC_LAST, /* gauge: the last one */
	INF_M_SYNCED,         /* gauge: 1 once synced */
	INF_M_WATCH_LIST_FALLBACKS,
	INF_M_ERRORS, /* objects that could not be decoded or stored */
	/* objects not stored by the sharded cache's filter (docs/sharding.md "Caches"): listed
	 * items and watch events of namespaces in ranges this instance does not cache; a former
	 * reserved word of the row, so no version bump */
	INF_M_FILTERED,
	INF_M_COUNT
};

struct inf_metrics_row {
	char group[INF_METRICS_NAME_MAX];
	char resource[INF_METRICS_NAME_MAX];
	_Atomic uint64_t v[INF_M_COUNT];
	uint64_t reserved[2];
};

struct inf_metrics_hdr {
	uint32_t magic;
	uint32_t row_size;
	_Atomic uint64_t n_rows;
	_Atomic uint64_t restarts; /* informerd attaches after the first */
	_Atomic uint64_t pid;
	/* garbagecollector_controller_resources_sync_error_total (informerd runs the GC's monitor
	 * resync, see informerd/main.c on_discovery); a former reserved word, so no version bump */
	_Atomic uint64_t discovery_sync_errors;
	/* the acquisition barrier (informerd/main.c check_epoch): barriers completed and their
	 * summed and last durations (µs); former reserved words, so no version bump */
	_Atomic uint64_t barriers;
	_Atomic uint64_t barrier_usec_sum;
	_Atomic uint64_t barrier_usec_last;
	struct inf_metrics_row rows[INF_METRICS_MAX_ROWS];
};

_Static_assert(sizeof(struct inf_metrics_row) == 2 * INF_METRICS_NAME_MAX + 8 * (INF_M_COUNT + 2),
               "metrics row layout");
_Static_assert(sizeof(struct inf_metrics_row) == 256, "rows keep their size (no version bump)");
