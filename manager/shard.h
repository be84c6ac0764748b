/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * manager/shard.h: membership and range ownership with --shard-ranges=R (docs/sharding.md).
 *
 * The manager's elector holds this instance's member Lease (<lease-name>-member-<identity>, in
 * place of the one leader Lease); this module does the rest, in the manager's loop:
 *   - every retry period it LISTs the Leases of the lease namespace: the live members are the
 *     member Leases whose holder is set and whose renewTime + leaseDurationSeconds is not past
 *     (wall clock: the assignment only decides who tries, never who may write, so a skewed
 *     clock costs a slower hand-over, not a second writer); the same LIST gives each range
 *     Lease's holder, for kcmctl status.
 *   - range i is wanted when this instance is active (its member Lease held) and wins range i
 *     by rendezvous hashing over the live members (kube/shard.h).
 *   - a wanted range gets an elector of its own (manager/lease-client.h) on
 *     <lease-name>-range-<i>: it acquires only when the Lease is free, expired or released,
 *     exactly as leader election does, and publishes its deadline in the fence (kube/fence.h
 *     F6); an acquisition calls on_acquired (the manager's barrier: a new epoch at the Lease
 *     write's resourceVersion, then the fence's range_gen, F8).
 *   - a range no longer wanted is closed: its fence word goes to 0 at once (F7: no write of
 *     ours into it is sent from then on), then, after a grace of one retry period for writes
 *     already on the wire, its Lease is released (holder cleared, as kcm's ReleaseOnCancel), so
 *     its new owner takes it without waiting for the expiry.
 */
#include <stdbool.h>
#include <stdint.h>

#include "ipc/loop.h"
#include "kube/client.h"
#include "kube/fence.h"

struct mgr_shard;

struct mgr_shard_opts {
	const char *ns, *lease_name, *identity;
	unsigned nranges;
	uint64_t lease_duration_us, renew_deadline_us, retry_period_us;
	struct kube_fence *fence; /* writable: the per-range words */
	/* a range was acquired; lease_rv: the resourceVersion of the Lease write that won */
	void (*on_acquired)(unsigned range, uint64_t lease_rv, void *ud);
	void *userdata;
	/* Optional: the range Leases and the Lease LIST then go through a client of the shard's
	 * own, made from config (must outlive the shard) with the budget mgr_shard_lease_budget
	 * gives for qps / burst (--kube-api-qps / --kube-api-burst); NULL: through kc. */
	const struct kube_config *config;
	const char *content_type;
	double qps;
	int burst;
};

/* The request budget of the range Leases' client: 2 x (nranges + 2) requests per retry period
 * (each range's elector and the LIST, at twice their steady rate: an acquisition round of every
 * range at once, or a failed fast renewal, fits), at least base_qps; burst 2 x (nranges + 2), at
 * least base_burst. base_qps <= 0 (no limit) stays no limit. */
void mgr_shard_lease_budget(unsigned nranges, uint64_t retry_period_us, double base_qps,
                            int base_burst, double *qps, int *burst);

/* The member Lease's name for identity: <lease-name>-member-<identity made a DNS label-ish
 * name: lower case, every character but [a-z0-9.-] made '-'>. Returns 0 or -ENAMETOOLONG. */
int mgr_shard_member_lease_name(const char *lease_name, const char *identity, char *buf,
                                size_t len);

int mgr_shard_new(struct ipc_loop *loop, struct kube_client *kc, const struct mgr_shard_opts *o,
                  struct mgr_shard **ret);
struct mgr_shard *mgr_shard_free(struct mgr_shard *s);
/* Whether this instance's member Lease is held (the manager's elector says so); inactive, it
 * wants no range and closes every one it has. */
void mgr_shard_set_active(struct mgr_shard *s, bool active);
/* Closes every range (fence words 0) and releases their Leases; done() once all are released. */
void mgr_shard_release_all(struct mgr_shard *s, void (*done)(void *ud), void *ud);

/* For the status page and /metrics. */
struct mgr_shard_view {
	unsigned nranges;
	size_t n_members;
	const char *const *members; /* live members as last listed, sorted */
	bool listed;                /* a LIST succeeded at least once */
};
void mgr_shard_view(const struct mgr_shard *s, struct mgr_shard_view *v);
/* Range i: whether this instance owns it now (its elector leads), and its Lease's holder as
 * last listed ("" none or unknown). */
bool mgr_shard_owns(const struct mgr_shard *s, unsigned range);
const char *mgr_shard_holder(const struct mgr_shard *s, unsigned range);
unsigned mgr_shard_owned_count(const struct mgr_shard *s);
