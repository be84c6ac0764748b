/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/podgc/snap.h: one pass's view of the pods, read from the arena's typed pod records
 * (shm/records.h): namespace, name, uid, spec.nodeName, phase, creation and deletion timestamps,
 * generation. The only place the pod GC reads the record layout.
 */
#include <stddef.h>
#include <stdint.h>

#include "shm/arena.h"
#include "workers/podgc/gc.h"

struct pgc_snap {
	struct pgc_pod *pods;
	char **mem; /* one block per pod holding its strings */
	size_t n, cap;
};

/* Appends every readable pod record of type to *s (a record of another layout is skipped: the
 * next pass sees its next version). Returns 0, or -ENOMEM / the lister's -errno. */
int pgc_snap_pods(struct shm_arena *a, uint16_t type, struct pgc_snap *s);
void pgc_snap_free(struct pgc_snap *s);
