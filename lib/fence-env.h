/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * lib/fence-env.h: KCMD_FENCE_FD (docs/architecture.md, the child contract) -> every kube client
 * of this process refuses writes past the leadership deadline the manager publishes
 * (kube/fence.h). Call it before making any client.
 */

/* 1 fenced, 0 no KCMD_FENCE_FD (the manager passed none: a tool or a test), -errno (logged): the
 * caller must exit, since writing unfenced is what the fence exists to prevent. */
int kcmd_fence_from_env(void);
/* The fence kcmd_fence_from_env mapped, or NULL (none passed, or not called yet). */
struct kube_fence;
const struct kube_fence *kcmd_fence(void);
