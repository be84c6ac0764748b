/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/ttl/ttl.h: the ttl-controller's rules, pure, and the one-page region its dispatcher
 * shares with its worker.
 *
 * Design note.
 *   Upstream's TTL controller (pkg/controller/ttl/ttl_controller.go, v1.37) sets the annotation
 *   node.alpha.kubernetes.io/ttl on every Node to a TTL (seconds) that grows with the cluster's
 *   size (kubelets may cache Secrets and ConfigMaps that long): a step table with overlapping
 *   bounds, so the step moves up when the node count passes the step's sizeMax and down when it
 *   falls below its sizeMin (hysteresis). The count changes in the informer's add and delete
 *   handlers; the sync of a node patches the annotation when it is absent, not an integer, or
 *   another number. A change of the desired TTL queues no node: each node gets it at its next
 *   update (kubelet heartbeats), as upstream.
 *   In kcmd the handlers run in the dispatcher and the sync in a worker process, so the count,
 *   the step and the desired TTL live in a page both map (struct ttl_region): the dispatcher
 *   writes, the worker reads the desired TTL.
 *
 * INVARIANTS (struct ttl_region).
 *   Writer: the controller's dispatcher only (its handlers run on one thread). Readers: its
 *   worker processes, which load `desired` only. Ordering: each field is one naturally aligned
 *   32-bit atomic; the writer stores `desired` with release after `count` and `step`, a reader
 *   loads it with acquire; nothing else is read across processes, so no reader retry is needed.
 *   A writer that dies mid-update leaves a count the next dispatcher recomputes from the arena
 *   (ttl_region_reset at its resync, as a restarted kcm counts its informer's initial adds);
 *   a reader that dies holds nothing. Version: `magic` names the layout; a mismatch refuses the
 *   attach (-EPROTO).
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TTL_CONTROLLER   "ttl-controller"
#define TTL_QUEUE        "ttlcontroller" /* upstream's workqueue name */
#define TTL_ANNOTATION   "node.alpha.kubernetes.io/ttl"
#define TTL_REGION_MAGIC 0x6b74746c01u /* "kttl" v1 */

struct ttl_state {
	int count, step, desired;
};

/* addNode / deleteNode on the step table; the desired TTL follows the step. */
void ttl_node_added(struct ttl_state *s);
void ttl_node_deleted(struct ttl_state *s);
/* The nodes the count is made of, by name: the dispatcher may deliver a node's add twice (its
 * start-up and its resync from the arena overlap the change feed by a few entries; its contract
 * says handlers tolerate a change seen twice), and an informer's store never counts a node twice.
 * An open-addressing table that doubles past 1/2 load: no limit but memory (-ENOMEM leaves the
 * set and the state unchanged, and the caller logs it). */
struct ttl_names {
	char **slot;
	size_t cap, n;
};
/* The add handler: counts name once (ttl_node_added) unless the set has it. 1 counted, 0 seen
 * before, -ENOMEM. */
int ttl_names_add(struct ttl_names *t, struct ttl_state *s, const char *name);
/* The delete handler: uncounts name (ttl_node_deleted) when the set has it. 1, 0 (unknown). */
int ttl_names_del(struct ttl_names *t, struct ttl_state *s, const char *name);
void ttl_names_free(struct ttl_names *t);

/* The state after n adds from an empty one (the informer's initial list). */
struct ttl_state ttl_state_for(int n);

/* getIntFromAnnotation: the annotation's value as strconv.Atoi reads it; false when absent or
 * not an integer. */
bool ttl_parse(const char *value, int64_t *ret);
/* The strategic merge patch upstream's CreateTwoWayMergePatch yields for the annotation. */
int ttl_patch_body(char *buf, size_t len, int ttl);

struct ttl_region {
	uint64_t magic;
	_Atomic int32_t count, step, desired;
	uint32_t reserved[11];
};
_Static_assert(sizeof(struct ttl_region) == 64, "ttl_region layout");

int ttl_region_memfd_create(void);
/* Maps the region (writer: the dispatcher). 0, -EPROTO (not a ttl region), -errno. */
int ttl_region_attach(int fd, bool writer, struct ttl_region **ret);
void ttl_region_detach(struct ttl_region *r);
void ttl_region_store(struct ttl_region *r, const struct ttl_state *s);
struct ttl_state ttl_region_load(const struct ttl_region *r);
