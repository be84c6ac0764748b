/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * manager/lease-client.h: drives the elector (manager/leader.h) over a real Lease.
 *
 * It sends the GET / POST / PUT the elector asks for through a non-blocking kube_client in the
 * manager's loop, with client-go's per-request timeout of max(1 s, renewDeadline / 2), turns
 * answers into elector results, keeps the elector's wakeup timer armed, and reports leadership
 * changes. On a PUT it replaces only `spec` in the Lease object it last read (labels,
 * annotations and other fields survive, as with client-go's LeaseLock). It records the
 * LeaderElection events upstream records ("<identity> became leader", "<identity> stopped
 * leading") on the Lease.
 *
 * Fencing: leadership can end without any I/O (the elector's fence deadline); the timer fires at
 * that instant and on_change(false) runs, so the manager kills its workers before anyone else may
 * lead.
 */
#include <stdbool.h>

#include "ipc/loop.h"
#include "kube/client.h"
#include "manager/leader.h"

struct mgr_lease_client;

/* Called when leadership starts (true) or ends (false). */
typedef void (*mgr_lease_change_fn)(bool leading, void *userdata);

struct mgr_lease_client_opts {
	const char *ns, *name; /* kube-system / kcmd */
	const char *identity;  /* hostname_uuid */
	uint64_t lease_duration_us, renew_deadline_us, retry_period_us;
	mgr_lease_change_fn on_change;
	void *userdata;
	bool record_events; /* LeaderElection events on the Lease */
	/* mgr_le_config.attempt_at_expiry: a candidate retries when the holder's Lease expires by
	 * local observation (the range Leases) rather than only on its jittered retry tick */
	bool attempt_at_expiry;
	/* Optional: after every step of the elector, the fence deadline (ipc_now_usec() clock;
	 * 0 when not leading), for the workers' own check (kube/fence.h). */
	void (*on_deadline)(uint64_t deadline_us, void *userdata);
	/* Optional: the LeaderElection events ("became leader", "stopped leading") go here
	 * instead of being recorded at once; the callee records them with
	 * mgr_lease_client_record_event when it is time (the manager: once the ended term's
	 * workers are reaped, manager/termend.h). "stopped leading" is asked for after
	 * on_change(false) returned. */
	void (*on_event)(const char *what, void *userdata);
};

/* Validates the timing rules (see mgr_le_config_validate) and starts campaigning at once. */
int mgr_lease_client_new(struct ipc_loop *loop, struct kube_client *kc,
                         const struct mgr_lease_client_opts *o, struct mgr_lease_client **ret,
                         char *err, size_t errlen);
/* Cancels what is in flight and frees (does not release: see mgr_lease_client_release). */
struct mgr_lease_client *mgr_lease_client_free(struct mgr_lease_client *lc);

/* Records "<identity> <what>" as a LeaderElection Event on the Lease (when record_events). */
void mgr_lease_client_record_event(struct mgr_lease_client *lc, const char *what);
bool mgr_lease_client_leading(const struct mgr_lease_client *lc);
/* Begins releasing the Lease (empty holder) if we hold it; leadership ends at once. done() runs
 * once the release finished or was not needed. */
void mgr_lease_client_release(struct mgr_lease_client *lc, void (*done)(void *ud), void *ud);
const struct mgr_le *mgr_lease_client_elector(const struct mgr_lease_client *lc);
/* mgr_le_prime on the client's elector: call right after mgr_lease_client_new. */
bool mgr_lease_client_prime(struct mgr_lease_client *lc, const struct mgr_le_record *r,
                            uint64_t observed_mono);
/* metadata.resourceVersion of the Lease as last read or written (after an acquisition: the
 * write that won), as an integer; 0 when none or not a decimal number. */
uint64_t mgr_lease_client_rv(const struct mgr_lease_client *lc);
