/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * lib/ctlmetrics.h: the shared region behind every controller's declared metrics
 * (kcmd/controller.h `metrics`, updated through kcmd/metrics.h). The manager creates one region
 * per enabled controller that declares metrics, before it starts the controller's processes,
 * passes its fd to the controller's dispatcher and workers as KCMD_METRICS_FD, keeps a
 * read-only mapping, and renders every controller's families on /metrics (none named).
 *
 * Design note.
 *   One memfd per controller, sized and sealed (F_SEAL_SHRINK|GROW|SEAL) at creation, so no
 *   process can pull pages from under another's mapping. Its layout is derived from the
 *   declaration alone (both sides compute the same offsets); the header carries a hash of the
 *   declaration, and a region made from another declaration is refused (-EPROTO).
 *   Rejected: one region for all controllers (a controller's processes could then write the
 *   others' counters); growing tables (a sealed memfd cannot grow under live mappings without a
 *   remap protocol, and the declared fixed label sets already bound every upstream family kcmd
 *   ports except the pod GC's namespace label); a lock (a writer killed while holding it would
 *   stop every other writer).
 *
 * Layout: header | dropped[n_metrics] | per metric, a table of slots. A slot is a state word,
 * (hash tables only) the key, and the metric's cells: COUNTER one u64; GAUGE one u64 holding a
 * double's bits; HISTOGRAM n_buckets + 1 non-cumulative bucket counts (the last: above every
 * bound), the count, and the sum (a double's bits).
 *
 * INVARIANTS
 *   - Writers: any number of the controller's processes at once (atomic multi-writer); the
 *     manager only reads (its mapping is read-only). Nothing is ever freed or reset while the
 *     manager runs: every value is monotonic except gauges.
 *   - Fixed tables (every label has a fixed value set, or there is no label): one slot per
 *     combination, its index the mixed-radix number of the values' indexes, so the table never
 *     fills. The first update of a series stores state = PUBLISHED (release; pairs with the
 *     reader's acquire load) before adding; a metric without labels is always rendered.
 *   - Hash tables (a label without fixed values): `max_series` slots, linear probing from the
 *     key's FNV-1a hash over the whole table. A writer claims a FREE slot with a CAS to
 *     CLAIMED(pid) (acq_rel), writes the key, then stores PUBLISHED (release; pairs with the
 *     acquire loads of readers and other writers, which read the key only after seeing
 *     PUBLISHED). A key never changes once published; slots are never freed.
 *   - A writer that finds a slot CLAIMED by another process waits a bounded spin; if the
 *     claimer no longer exists (kill(pid, 0) == ESRCH: it died mid-claim) it takes the slot over
 *     with a CAS and writes its own key; if the claimer lives but is slow it probes on. The
 *     latter may publish the same key in two slots: the reader merges equal keys by summing,
 *     so no update is lost or shown twice. A dead claimer whose pid was reused by a live
 *     process looks slow forever: that one slot is lost capacity, nothing else.
 *   - Full hash table (every slot published with other keys, or claimed by live processes):
 *     the update is not recorded; it is counted in dropped[id] and returns -ENOSPC. The manager
 *     renders the drops as kcmd_metric_series_dropped_total{metric="<name>"}.
 *   - Values: counters and bucket counts are added relaxed, gauges stored relaxed, double sums
 *     and gauge additions are relaxed CAS loops (no addition is lost under contention). Relaxed
 *     is enough: each cell is monotonic or last-writer-wins on its own; no two cells are read
 *     as a consistent pair. A histogram observation adds its bucket, then the sum, then the
 *     count; the reader renders the count (and +Inf) as max(count, total of the buckets), so
 *     +Inf is never below a bucket; a scrape may show an observation in its bucket and not yet
 *     in _sum.
 *   - A writer killed mid-update: an add is one atomic instruction (done or not); a histogram
 *     observation may be left without its sum or count (the count still renders at least the
 *     buckets' total); a claim is taken over by the next writer that probes it (above). A
 *     reader that dies holds nothing.
 *   - Version rule: the header's magic carries the layout version and `layout` the declaration
 *     hash; attach refuses either mismatch, and a size smaller than the layout, with -EPROTO.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kcmd/controller.h"
#include "kcmd/metrics.h"

#define CTLM_ENV         "KCMD_METRICS_FD"
#define CTLM_KEY_MAX     256u /* the label values of one series, each NUL-terminated */
#define CTLM_MAX_LABELS  8u
#define CTLM_MAX_BUCKETS 64u
#define CTLM_DEF_SERIES  1024u
#define CTLM_MAX_SERIES  65536u /* per metric (a fixed table's combinations included) */

/* Checks c's declaration (names, labels, buckets ascending, sizes): 0 or -EINVAL. */
int ctlm_check(const struct kcmd_controller *c);
/* Creates c's region, zeroed, sized and sealed: the fd (O_CLOEXEC), or -errno (-EINVAL for a
 * bad declaration, -ENOENT when c declares none). */
int ctlm_create(const struct kcmd_controller *c);
/* Maps fd: writable for a writer (a controller's process), read-only otherwise (the manager).
 * 0, -EPROTO (another layout or declaration), -ENOMEM, -errno of mmap. */
int ctlm_attach(const struct kcmd_controller *c, int fd, bool writer, struct kcmd_metrics **ret);
void ctlm_detach(struct kcmd_metrics *m);
/* kcmd-worker and kcmd-dispatcher, once they know their controller: maps the region in
 * CTLM_ENV for kcmd_metrics_get(). 0, -ENOENT (none passed, or c declares no metrics),
 * -EALREADY, or attach's errors. */
int ctlm_open_self(const struct kcmd_controller *c);
/* Writes the families in the Prometheus text format (0.0.4) to f, as client_golang would:
 * series sorted by their label values, labels by name, `le` last. The manager's context (one
 * thread); a family whose series cannot be allocated is left out of that scrape. */
void ctlm_render(struct kcmd_metrics *m, FILE *f);
/* The kcmd_metric_series_dropped_total family over several regions (nothing when none dropped
 * anything): once, so that two controllers' drops do not repeat the family's header. */
void ctlm_render_dropped(struct kcmd_metrics *const *ms, size_t n, FILE *f);
uint64_t ctlm_dropped(struct kcmd_metrics *m, unsigned id);
/* Tests: where metric id's table is (byte offset in the region), its slot size and count. */
void ctlm_table(struct kcmd_metrics *m, unsigned id, size_t *ret_off, size_t *ret_slot_size,
                size_t *ret_n_slots);
/* Go's strconv.FormatFloat(v, 'g', -1, 64), as client_golang writes floats (le, gauges, sums).
 * out holds at least 32 bytes. */
void ctlm_format_float(char *out, size_t len, double v);
