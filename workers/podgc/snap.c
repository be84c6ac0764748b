/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/podgc/snap.c: the pods of a pass, from the arena (see snap.h).
 */
#include "workers/podgc/snap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shm/records.h"

void pgc_snap_free(struct pgc_snap *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->mem[i]);
	free(s->mem);
	free(s->pods);
	*s = (struct pgc_snap){0};
}

static int visit(const struct shm_obj *o, void *ud)
{
	struct pgc_snap *s = ud;
	struct shm_rec_view v;
	struct shm_rec_pod rp;
	const char *node = "";
	size_t nl = 0;

	if (shm_rec_parse(o->payload, o->payload_len, &v) < 0 || shm_rec_pod_get(&v, &rp) < 0)
		return 0;
	/* blob 0 is spec.nodeName (then the finalizers) */
	if (v.hdr.n_blobs > v.hdr.n_finalizers && shm_rec_blob(&v, 0, &node, &nl) < 0)
		node = "";
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		struct pgc_pod *p = realloc(s->pods, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		s->pods = p;
		char **m = realloc(s->mem, cap * sizeof(*m));
		if (!m)
			return -ENOMEM;
		s->mem = m;
		s->cap = cap;
	}
	size_t ln = strlen(o->ns ? o->ns : ""), lm = strlen(o->name ? o->name : ""),
	       lu = strlen(o->uid ? o->uid : ""), lk = strlen(node);
	char *b = malloc(ln + lm + lu + lk + 4), *w = b;
	if (!b)
		return -ENOMEM;
	struct pgc_pod *p = &s->pods[s->n];
	p->ns = memcpy(w, o->ns ? o->ns : "", ln + 1);
	w += ln + 1;
	p->name = memcpy(w, o->name ? o->name : "", lm + 1);
	w += lm + 1;
	p->uid = memcpy(w, o->uid ? o->uid : "", lu + 1);
	w += lu + 1;
	p->node_name = memcpy(w, node, lk + 1);
	p->phase = (enum kube_pod_phase)rp.phase;
	p->evicted = false;
	p->creation_ts = v.hdr.creation_ts;
	p->deletion_ts = v.hdr.deletion_ts;
	p->generation = v.hdr.generation;
	s->mem[s->n++] = b;
	return 0;
}

int pgc_snap_pods(struct shm_arena *a, uint16_t type, struct pgc_snap *s)
{
	int r = shm_reader_list(a, type, visit, s); /* the count visited, or -errno */
	return r < 0 ? r : 0;
}
