/* SPDX-License-Identifier: Apache-2.0 */
/*
 * informerd/cachedump.c: `kcmd-cachedump`, a small read-only window on the arena and on
 * informerd's counters, for tests (the Go e2e oracle compares its output with a client-go list)
 * and for debugging. It is also the "holder" that keeps an arena memfd alive across informerd
 * restarts when no manager runs (the warm-restart test).
 *
 *   kcmd-cachedump hold                 create an arena, print its /proc path, sleep until killed
 *   kcmd-cachedump types PATH           group resource synced rv count, one line per type
 *   kcmd-cachedump objects PATH [RES]   resource ns name uid rv (RES: plural[.group])
 *   kcmd-cachedump object PATH RES NS NAME  one full-object record (@object resources) through
 *                                       the record codec's view: "apiVersion V", "kind K",
 *                                       "annotation K=V" / "label K=V" lines, then "body JSON"
 *   kcmd-cachedump metrics PATH         informerd's counters (metrics-abi.h)
 *   kcmd-cachedump setrv PATH RES RV    (tests; informerd must be stopped) mark RES synced at RV,
 *                                       e.g. a compacted version to force the 410 path
 * PATH is any path that opens the memfd, e.g. /proc/<pid>/fd/<n>.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/infmetrics.h"
#include "shm/arena.h"
#include "shm/record-model.h"

static const char *metric_names[INF_M_COUNT] = {
        "watch_events",   "lists",          "relists",  "watches",
        "watch_restarts", "expired",        "backoffs", "list_count",
        "list_usec_sum",  "list_usec_last", "synced",   "watch_list_fallbacks",
        "errors",         "filtered",
};

struct want {
	const char *resource;
	const char *group;
	const char *tres;
};

static int print_obj(const struct shm_obj *o, void *ud)
{
	const struct want *w = ud;

	printf("%s %s %s %s %s\n", w->tres, o->ns && o->ns[0] ? o->ns : "-", o->name, o->uid,
	       o->rv);
	return 0;
}

static int open_ro(const char *path, struct shm_arena **a);

/* `object PATH RES NS NAME` (NS "-" for cluster-scoped). */
static int dump_object(char **argv)
{
	struct shm_arena *a = NULL;
	struct shm_stats st;
	struct shm_obj o = SHM_OBJ_INIT;
	struct shm_object_view v;
	int r = -ENOENT;

	if (open_ro(argv[2], &a) < 0 || shm_reader_stats(a, &st) < 0)
		return 1;
	for (uint64_t t = 0; t < st.n_types && r == -ENOENT; t++) {
		struct shm_type_info ti;
		char tres[160];

		if (shm_reader_type_info(a, (uint16_t)t, &ti) < 0)
			continue;
		snprintf(tres, sizeof(tres), "%s%s%s", ti.resource, ti.group[0] ? "." : "",
		         ti.group);
		if (!strcmp(tres, argv[3]))
			r = shm_reader_get(a, (uint16_t)t, strcmp(argv[4], "-") ? argv[4] : "",
			                   argv[5], &o);
	}
	if (r < 0) {
		fprintf(stderr, "kcmd-cachedump: %s %s/%s: %s\n", argv[3], argv[4], argv[5],
		        strerror(-r));
		shm_arena_close(a);
		return 1;
	}
	r = shm_object_view_init(&o, &v);
	if (r < 0) {
		fprintf(stderr, "kcmd-cachedump: %s %s/%s: not a full-object record: %s\n", argv[3],
		        argv[4], argv[5], strerror(-r));
	} else {
		printf("apiVersion %s\nkind %s\n", v.o.api_version ? v.o.api_version : "",
		       v.o.kind ? v.o.kind : "");
		for (uint32_t i = 0; i < v.o.meta.n_annotations; i++)
			printf("annotation %s=%s\n", v.o.meta.annotations[i].key,
			       v.o.meta.annotations[i].value);
		for (uint32_t i = 0; i < v.o.meta.n_labels; i++)
			printf("label %s=%s\n", v.o.meta.labels[i].key, v.o.meta.labels[i].value);
		printf("body %.*s\n", (int)v.o.raw_len, v.o.raw);
	}
	shm_object_view_free(&v);
	shm_arena_close(a);
	return r < 0 ? 1 : 0;
}

static int open_ro(const char *path, struct shm_arena **a)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;

	if (fd < 0) {
		fprintf(stderr, "kcmd-cachedump: %s: %s\n", path, strerror(errno));
		return -1;
	}
	r = shm_reader_open(fd, a);
	close(fd); /* the mapping stays */
	if (r < 0) {
		fprintf(stderr, "kcmd-cachedump: %s: not an arena: %s\n", path, strerror(-r));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct shm_arena *a = NULL;
	struct shm_stats st;
	int r, fd;

	if (argc >= 2 && !strcmp(argv[1], "hold")) {
		r = shm_arena_create(NULL, &fd);
		if (r < 0) {
			fprintf(stderr, "kcmd-cachedump: cannot create an arena: %s\n",
			        strerror(-r));
			return 1;
		}
		printf("/proc/%d/fd/%d\n", (int)getpid(), fd);
		fflush(stdout);
		for (;;)
			pause();
	}
	if (argc >= 3 && !strcmp(argv[1], "metrics")) {
		const struct inf_metrics_hdr *h;

		fd = open(argv[2], O_RDONLY | O_CLOEXEC);
		if (fd < 0 || inf_metrics_map_ro(fd, &h) < 0) {
			fprintf(stderr, "kcmd-cachedump: %s: not an informerd metrics table\n",
			        argv[2]);
			return 1;
		}
		printf("restarts %llu\n", (unsigned long long)atomic_load_explicit(
		                                  &h->restarts, memory_order_relaxed));
		/* acquire: pairs with the release store of n_rows when a row is published (M1). */
		uint64_t n = atomic_load_explicit(&h->n_rows, memory_order_acquire);
		for (uint64_t i = 0; i < n && i < INF_METRICS_MAX_ROWS; i++)
			for (int k = 0; k < INF_M_COUNT; k++)
				printf("%s%s%s %s %llu\n", h->rows[i].resource,
				       h->rows[i].group[0] ? "." : "", h->rows[i].group,
				       metric_names[k],
				       (unsigned long long)atomic_load_explicit(
				               &h->rows[i].v[k], memory_order_relaxed));
		inf_metrics_unmap(h);
		return 0;
	}
	if (argc == 6 && !strcmp(argv[1], "object"))
		return dump_object(argv);
	if (argc == 5 && !strcmp(argv[1], "setrv")) {
		fd = open(argv[2], O_RDWR | O_CLOEXEC);
		if (fd < 0 || shm_writer_open(fd, &a) < 0) {
			fprintf(stderr,
			        "kcmd-cachedump: %s: cannot open as the writer (informerd "
			        "alive?)\n",
			        argv[2]);
			return 1;
		}
		if (shm_reader_stats(a, &st) < 0)
			return 1;
		for (uint64_t t = 0; t < st.n_types; t++) {
			struct shm_type_info ti;
			char tres[160];

			if (shm_reader_type_info(a, (uint16_t)t, &ti) < 0)
				continue;
			snprintf(tres, sizeof(tres), "%s%s%s", ti.resource, ti.group[0] ? "." : "",
			         ti.group);
			if (!strcmp(tres, argv[3])) {
				r = shm_writer_set_sync(a, (uint16_t)t, argv[4], true);
				shm_arena_close(a);
				return r < 0 ? 1 : 0;
			}
		}
		fprintf(stderr, "kcmd-cachedump: no resource %s in the arena\n", argv[3]);
		return 1;
	}
	if (argc < 3 || (strcmp(argv[1], "types") && strcmp(argv[1], "objects"))) {
		fprintf(stderr, "usage: kcmd-cachedump hold | types PATH | objects PATH [RES] | "
		                "object PATH RES NS NAME | metrics PATH | setrv PATH RES RV\n");
		return 2;
	}
	if (open_ro(argv[2], &a) < 0)
		return 1;
	if (shm_reader_stats(a, &st) < 0)
		return 1;
	for (uint64_t t = 0; t < st.n_types; t++) {
		struct shm_type_info ti;
		char tres[160];

		if (shm_reader_type_info(a, (uint16_t)t, &ti) < 0)
			continue;
		snprintf(tres, sizeof(tres), "%s%s%s", ti.resource, ti.group[0] ? "." : "",
		         ti.group);
		if (!strcmp(argv[1], "types")) {
			printf("%s %s %s %llu\n", tres, ti.synced ? "synced" : "unsynced",
			       ti.rv[0] ? ti.rv : "-", (unsigned long long)ti.count);
			continue;
		}
		if (argc >= 4 && strcmp(argv[3], tres) != 0)
			continue;
		struct want w = {.tres = tres};
		r = shm_reader_list(a, (uint16_t)t, print_obj, &w);
		if (r < 0) {
			fprintf(stderr, "kcmd-cachedump: listing %s: %s\n", tres, strerror(-r));
			return 1;
		}
	}
	shm_arena_close(a);
	return 0;
}
