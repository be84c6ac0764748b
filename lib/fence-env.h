/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * lib/fence-env.h: KCMD_FENCE_FD (docs/architecture.md, the child contract) -> every kube client
 * of this process refuses writes past the leadership deadline the manager publishes
 * (kube/fence.h). Call it before making any client.
 */
#include <stdbool.h>
#include <stdint.h>

#include "kube/shard.h"

/* 1 fenced, 0 no KCMD_FENCE_FD (the manager passed none: a tool or a test), -errno (logged): the
 * caller must exit, since writing unfenced is what the fence exists to prevent. */
int kcmd_fence_from_env(void);
/* The fence kcmd_fence_from_env mapped, or NULL (none passed, or not called yet). */
struct kube_fence;
const struct kube_fence *kcmd_fence(void);

/* KCMD_LEADERSHIP_FD (the same memfd, handed to every child, informerd included, and to the
 * workers even when unfenced): the leadership epoch of the acquisition barrier (kube/fence.h
 * F5). Maps it read-only once; kcmd_fence_from_env calls it first and makes the arena's
 * "synced" wait for the epoch (shm_reader_set_epoch_source). 1 mapped, 0 none passed, -errno
 * (logged). */
int kcmd_leadership_from_env(void);
/* The current epoch and its Lease resourceVersion (0 when none is mapped or published). */
uint32_t kcmd_leadership_epoch(uint64_t *ret_lease_rv);
/* The KCMD_LEADERSHIP_FD mapping (read-only), or NULL: informerd reads its cache set there
 * (kube/fence.h F9). */
const struct kube_fence *kcmd_leadership_fence(void);

/* ---- sharding (--shard-ranges, docs/sharding.md) ----
 * Read from the KCMD_LEADERSHIP_FD mapping (the fence memfd, kube/fence.h F6-F8), so they work
 * in every child that has it. Without ranges (sharding off, or no mapping) every key is owned.
 * keys: how the process's controller's keys name a namespace (kcmd_registry_shard_keys);
 * KUBE_SHARD_KEYS_NONE, a controller not sharded by namespace, runs whole on the owner of
 * range 0.
 */
/* How many ranges (0: sharding off). */
unsigned kcmd_shard_ranges(void);
/* The range of a queue key (kube_shard_key_range over the current number of ranges). */
unsigned kcmd_shard_key_range(enum kube_shard_keys keys, const char *key);
/* Whether this instance owns the range of key now (true without ranges). */
bool kcmd_shard_key_owned(enum kube_shard_keys keys, const char *key);
/* Whether this instance owns range r now (true without ranges). */
bool kcmd_shard_range_owned(unsigned r);
/* The fence's range generation (F8): it moves after each range acquisition. */
uint64_t kcmd_shard_gen(void);
/* With ranges, the kube clients of a process whose controller is not sharded by namespace check
 * range 0 for every write (kube_client_set_process_unsharded). Call before making clients. */
void kcmd_shard_setup_process(enum kube_shard_keys keys);
