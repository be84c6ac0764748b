/* SPDX-License-Identifier: Apache-2.0 */
/* bench/podmap.h: the driver's own view of the bench pods, keyed by "<ns>/<name>". */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bench_pod {
	char *key; /* NULL: empty slot; TOMB: deleted */
	int16_t run;
	int32_t rs;
	bool ready, term;
	bool bind_sent; /* daemonsets: the driver asked for this pod's binding */
	/* endpointslices (the slice map): endpoints listed, of those ready, and of those naming a
	 * pod the churn replaces */
	int32_t ep_total, ep_ready, ep_old;
};

struct bench_podmap {
	struct bench_pod *slots;
	size_t cap, used, live; /* used counts tombstones too */
};

/* The entry for key, or NULL. */
struct bench_pod *bench_podmap_get(struct bench_podmap *m, const char *key);
/* Inserts key (copied) and returns its entry (fields zeroed), or NULL on allocation failure. An
 * existing key's entry is returned as is. *added tells which. */
struct bench_pod *bench_podmap_put(struct bench_podmap *m, const char *key, bool *added);
void bench_podmap_del(struct bench_podmap *m, struct bench_pod *p);
void bench_podmap_clear(struct bench_podmap *m);
