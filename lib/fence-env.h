/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * lib/fence-env.h: KCMD_FENCE_FD (docs/architecture.md, the child contract) -> every kube client
 * of this process refuses writes past the leadership deadline the manager publishes
 * (kube/fence.h). Call it before making any client.
 */
#include <stdint.h>

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
