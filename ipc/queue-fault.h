/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * ipc/queue-fault.h: test-only fault seams of the queue owner. Production code never sets
 * them; the torture test's negative controls do, to prove its oracles catch the bug each one
 * re-introduces.
 */
enum ipc_queue_fault {
	/* a dead worker's leases are dropped instead of re-queued (the oracle must see lost keys)
	 */
	IPC_QUEUE_FAULT_NO_DEATH_REQUEUE = 1u << 0,
	/* Add queues a key even while it is processing (the oracle must see double processing) */
	IPC_QUEUE_FAULT_DOUBLE_DISPATCH = 1u << 1,
};
extern unsigned ipc_queue_fault_mask;

/* Deterministic crash points in the owner (queue.c CRASH_POINT(n), n = 1..IPC_QUEUE_CRASH_POINTS):
 * the owner SIGKILLs itself on the ipc_queue_crash_count-th visit of point ipc_queue_crash_point.
 * The torture test enumerates them, so windows random kills rarely hit are covered. */
#define IPC_QUEUE_CRASH_POINTS 8
extern unsigned ipc_queue_crash_point, ipc_queue_crash_count;
