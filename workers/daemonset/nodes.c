/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/daemonset/nodes.c: the worker's Node views (nodes.h).
 *
 * Why: the sync parsed every cached Node's whole JSON (status with its conditions, images,
 * addresses and capacity included) on every sync, the DaemonSet worker's largest cost in the
 * profile of the daemonsets workload (docs/benchmarks.md). Upstream's informer decodes a Node
 * once per change. Here a view is parsed when a Node's resourceVersion differs from the one of
 * the last refresh, and cut to metadata.name, metadata.labels and spec.
 *
 * Layout: ents[] sorted by name (bsearch per seen Node), views[] parallel to it (what
 * ds_nodes_views hands out); new Nodes of a refresh wait in adds[] until ds_nodes_end merges
 * and sorts. Rejected: a typed record in the shared cache (a record-format change in informerd
 * and shm for one controller; the views cost a parse per Node change in each DaemonSet worker
 * process, at most --concurrent-daemonset-syncs of them).
 */
#include "workers/daemonset/nodes.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct ent {
	char *name, *rv;
	cJSON *view;
	bool seen;
	bool memo_set, memo_a, memo_b; /* the caller's memo, cleared with each new view */
	uint64_t memo_key;
};

struct ds_nodes {
	struct ent *ents; /* sorted by name */
	size_t n, cap;
	const cJSON **views; /* views[i] = ents[i].view */
	struct ent *adds;
	size_t n_adds, cap_adds;
	uint64_t parses;
};

static void ent_clear(struct ent *e)
{
	free(e->name);
	free(e->rv);
	cJSON_Delete(e->view);
	memset(e, 0, sizeof(*e));
}

int ds_nodes_new(struct ds_nodes **ret)
{
	struct ds_nodes *n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	*ret = n;
	return 0;
}

void ds_nodes_free(struct ds_nodes *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++)
		ent_clear(&n->ents[i]);
	for (size_t i = 0; i < n->n_adds; i++)
		ent_clear(&n->adds[i]);
	free(n->ents);
	free(n->views);
	free(n->adds);
	free(n);
}

void ds_nodes_begin(struct ds_nodes *n)
{
	for (size_t i = 0; i < n->n; i++)
		n->ents[i].seen = false;
	for (size_t i = 0; i < n->n_adds; i++)
		ent_clear(&n->adds[i]);
	n->n_adds = 0;
}

/* The view of a Node's JSON: {"metadata":{"name":..,"labels":{..}},"spec":{..}}. NULL: the
 * JSON does not parse or has no name (*oom: for want of memory). */
static cJSON *view_of(const char *json, size_t len, bool *oom)
{
	cJSON *full = cJSON_ParseWithLength(json, len);
	cJSON *md = full ? cJSON_GetObjectItemCaseSensitive(full, "metadata") : NULL;
	cJSON *name = cJSON_IsObject(md) ? cJSON_GetObjectItemCaseSensitive(md, "name") : NULL;
	cJSON *v = NULL, *vm;

	*oom = false;
	if (!cJSON_IsString(name))
		goto out;
	*oom = true;
	if (!(v = cJSON_CreateObject()) || !(vm = cJSON_AddObjectToObject(v, "metadata")))
		goto fail;
	cJSON_AddItemToObject(vm, "name", cJSON_DetachItemViaPointer(md, name));
	cJSON *labels = cJSON_DetachItemFromObjectCaseSensitive(md, "labels");
	if (labels)
		cJSON_AddItemToObject(vm, "labels", labels);
	cJSON *spec = cJSON_DetachItemFromObjectCaseSensitive(full, "spec");
	if (spec)
		cJSON_AddItemToObject(v, "spec", spec);
	*oom = false;
	goto out;
fail:
	cJSON_Delete(v);
	v = NULL;
out:
	cJSON_Delete(full);
	return v;
}

static int ent_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ent *)a)->name, ((const struct ent *)b)->name);
}

static struct ent *lookup(const struct ds_nodes *n, const char *name)
{
	struct ent key = {.name = (char *)name};
	return n->n ? bsearch(&key, n->ents, n->n, sizeof(*n->ents), ent_cmp) : NULL;
}

int ds_nodes_see(struct ds_nodes *n, const char *name, const char *rv, const char *json,
                 size_t json_len)
{
	struct ent *e = name ? lookup(n, name) : NULL;
	bool oom;

	if (e && rv && e->rv && !strcmp(e->rv, rv)) {
		e->seen = true;
		return 0;
	}
	if (!json)
		return 0;
	n->parses++;
	cJSON *v = view_of(json, json_len, &oom);
	if (!v)
		return oom ? -ENOMEM : 0;
	const char *vn = cJSON_GetObjectItemCaseSensitive(
	                         cJSON_GetObjectItemCaseSensitive(v, "metadata"), "name")
	                         ->valuestring;
	if (!e || strcmp(vn, e->name) != 0)
		e = lookup(n, vn);
	char *nrv = rv ? strdup(rv) : NULL;
	if (rv && !nrv) {
		cJSON_Delete(v);
		return -ENOMEM;
	}
	if (e) { /* a changed Node: its view replaced in place (the order stays) */
		cJSON_Delete(e->view);
		free(e->rv);
		e->view = v;
		e->rv = nrv;
		e->seen = true;
		e->memo_set = false;
		n->views[e - n->ents] = v;
		return 0;
	}
	if (n->n_adds == n->cap_adds) {
		size_t cap = n->cap_adds ? n->cap_adds * 2 : 16;
		struct ent *na = realloc(n->adds, cap * sizeof(*na));
		if (!na) {
			cJSON_Delete(v);
			free(nrv);
			return -ENOMEM;
		}
		n->adds = na;
		n->cap_adds = cap;
	}
	char *nn = strdup(vn);
	if (!nn) {
		cJSON_Delete(v);
		free(nrv);
		return -ENOMEM;
	}
	n->adds[n->n_adds++] = (struct ent){.name = nn, .rv = nrv, .view = v, .seen = true};
	return 0;
}

int ds_nodes_end(struct ds_nodes *n)
{
	size_t j = 0;

	for (size_t i = 0; i < n->n; i++) {
		if (!n->ents[i].seen)
			ent_clear(&n->ents[i]);
		else
			n->ents[j++] = n->ents[i];
	}
	n->n = j;
	size_t want = n->n + n->n_adds;
	if (want > n->cap) {
		size_t cap = n->cap ? n->cap : 16;
		while (cap < want)
			cap *= 2;
		struct ent *ne = realloc(n->ents, cap * sizeof(*ne));
		if (ne)
			n->ents = ne;
		const cJSON **nv = ne ? realloc(n->views, cap * sizeof(*nv)) : NULL;
		if (nv)
			n->views = nv;
		if (!ne || !nv) {
			ds_nodes_begin(n); /* the adds dropped: the next refresh parses them */
			for (size_t i = 0; i < n->n; i++)
				n->views[i] = n->ents[i].view;
			return -ENOMEM;
		}
		n->cap = cap;
	}
	if (n->n_adds) {
		memcpy(&n->ents[n->n], n->adds, n->n_adds * sizeof(*n->adds));
		n->n += n->n_adds;
		n->n_adds = 0;
		qsort(n->ents, n->n, sizeof(*n->ents), ent_cmp);
		/* one Node listed twice (never from one cache walk): the later view goes */
		j = 0;
		for (size_t i = 0; i < n->n; i++) {
			if (j && !strcmp(n->ents[j - 1].name, n->ents[i].name))
				ent_clear(&n->ents[i]);
			else
				n->ents[j++] = n->ents[i];
		}
		n->n = j;
	}
	for (size_t i = 0; i < n->n; i++)
		n->views[i] = n->ents[i].view;
	return 0;
}

const cJSON *const *ds_nodes_views(const struct ds_nodes *n, size_t *ret_n)
{
	*ret_n = n->n;
	return n->views;
}

ptrdiff_t ds_nodes_find(const struct ds_nodes *n, const char *name)
{
	struct ent *e = lookup(n, name);
	return e ? e - n->ents : -1;
}

bool ds_nodes_memo_get(const struct ds_nodes *n, size_t i, uint64_t key, bool *a, bool *b)
{
	const struct ent *e = i < n->n ? &n->ents[i] : NULL;
	if (!e || !e->memo_set || e->memo_key != key)
		return false;
	*a = e->memo_a;
	*b = e->memo_b;
	return true;
}

void ds_nodes_memo_set(struct ds_nodes *n, size_t i, uint64_t key, bool a, bool b)
{
	if (i >= n->n)
		return;
	struct ent *e = &n->ents[i];
	e->memo_set = true;
	e->memo_key = key;
	e->memo_a = a;
	e->memo_b = b;
}

uint64_t ds_nodes_parses(const struct ds_nodes *n)
{
	return n->parses;
}
