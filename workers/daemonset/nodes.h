/* SPDX-License-Identifier: Apache-2.0 */
/* workers/daemonset/nodes.h - the DaemonSet worker's view of the cached Nodes, parsed once per
 * Node change (upstream reads typed Nodes from its informer; kcmd caches Nodes whole, as JSON).
 *
 * A worker process keeps one ds_nodes across its syncs. Each sync refreshes it from the shared
 * cache: ds_nodes_begin, ds_nodes_see for every cached Node, ds_nodes_end. A Node whose
 * resourceVersion is the one seen before keeps its view; a new or changed one is parsed and cut
 * down to what NodeShouldRunDaemonPod reads (metadata.name, metadata.labels, the whole spec: its
 * taints among it), so a predicate over a view answers as over the Node's full JSON. A Node not
 * seen by the refresh is dropped. No fixed-size table: the views grow with the Nodes (-ENOMEM
 * when they cannot). Single-threaded: one sync at a time per worker process. */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ds_nodes;

/* 0 / -ENOMEM. */
int ds_nodes_new(struct ds_nodes **ret);
/* NULL is a no-op. */
void ds_nodes_free(struct ds_nodes *n);

/* Starts a refresh. */
void ds_nodes_begin(struct ds_nodes *n);
/* One cached Node: its name, resourceVersion and JSON (json_len bytes). A view is kept when
 * name and rv are those of the last refresh; else json is parsed. 0 (a Node whose JSON does not
 * parse or has no name is left out, as the sync always skipped such a Node), -ENOMEM. */
int ds_nodes_see(struct ds_nodes *n, const char *name, const char *rv, const char *json,
                 size_t json_len);
/* Ends a refresh: the Nodes not seen are dropped; the views are sorted by name. 0 / -ENOMEM
 * (the refresh's new Nodes are then lost; the next refresh parses them again). */
int ds_nodes_end(struct ds_nodes *n);

/* The views, sorted by metadata.name, valid until the next ds_nodes_begin; *ret_n their
 * count. */
const cJSON *const *ds_nodes_views(const struct ds_nodes *n, size_t *ret_n);
/* The index of the Node named name in ds_nodes_views, or -1. */
ptrdiff_t ds_nodes_find(const struct ds_nodes *n, const char *name);
/* A memo per view for the caller (the sync's NodeShouldRunDaemonPod answer for one DaemonSet
 * generation): ds_nodes_memo_get is true, with the two flags set, when the view at index i has
 * not changed since ds_nodes_memo_set stored them under the same key. One memo per Node: the
 * last key set wins. */
bool ds_nodes_memo_get(const struct ds_nodes *n, size_t i, uint64_t key, bool *a, bool *b);
void ds_nodes_memo_set(struct ds_nodes *n, size_t i, uint64_t key, bool a, bool b);

/* Node JSONs parsed since ds_nodes_new (for tests and the debug log). */
uint64_t ds_nodes_parses(const struct ds_nodes *n);
