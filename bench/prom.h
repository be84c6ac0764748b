/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench/prom.h: the Prometheus text format, as far as `kcmd bench` reads it (the
 * apiserver's apiserver_request_total, kcmd's workqueue_depth).
 *
 * Samples are `name{label="value",...} value [timestamp]`; label values may carry \" \\ \n escapes;
 * comments (#) and blank lines are skipped; a malformed line is skipped and counted, never fatal.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define PROM_MAX_LABELS 24

struct prom_sample {
	char name[200];
	unsigned n_labels;
	struct {
		char name[64];
		char value[200];
	} labels[PROM_MAX_LABELS];
	double value;
};

/* Calls fn for each sample (a non-zero return stops and is returned). Returns the number of
 * samples, or fn's return value; *bad (may be NULL) receives the number of malformed lines. */
int prom_parse(const char *text, size_t len, int (*fn)(const struct prom_sample *s, void *ud),
               void *ud, unsigned *bad);
/* Parses one line; 0, 1 when the line holds no sample (comment, blank), -EBADMSG. */
int prom_parse_line(const char *line, size_t len, struct prom_sample *s);
const char *prom_label(const struct prom_sample *s, const char *name); /* NULL when absent */

/* Sums keyed by a short string (e.g. "LIST 200"). */
struct prom_counts {
	struct prom_count {
		char key[96];
		double v;
	} * items;
	size_t n, cap;
};
int prom_counts_add(struct prom_counts *c, const char *key, double v);
double prom_counts_get(const struct prom_counts *c, const char *key); /* 0 when absent */
double prom_counts_total(const struct prom_counts *c);
void prom_counts_free(struct prom_counts *c);
void prom_counts_sort(struct prom_counts *c); /* by key */
/* out = after - before, key by key (a key absent from before counts 0; zero deltas dropped). */
int prom_counts_delta(const struct prom_counts *after, const struct prom_counts *before,
                      struct prom_counts *out);

/* Sums the samples of `metric` whose labels match every filter (pairs name, value; n_filters
 * pairs), grouped by the values of group_labels joined with a space (a missing label is "").
 * Returns the number of samples summed or a negative errno. */
int prom_collect(const char *text, size_t len, const char *metric, const char *const *filters,
                 unsigned n_filters, const char *const *group_labels, unsigned n_group,
                 struct prom_counts *out);
