/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * manager/leader.h: leader election over a coordination.k8s.io/v1 Lease, as a pure state
 * machine.
 *
 * Design note.
 *   The elector decides; it never does I/O. Its driver (manager/lease-client.c) performs the
 *   GET / POST / PUT it asks for, asynchronously on the event loop, and feeds the answer back.
 *   That keeps the timing rules testable with a simulated clock and a simulated Lease store,
 *   and keeps a slow apiserver from ever blocking the manager's loop.
 *
 *   Semantics follow client-go's tools/leaderelection with a LeaseLock:
 *   - Validity is judged by *local* observation: the lease held by someone else is valid while
 *     observed_mono + leaseDurationSeconds > now, where observed_mono is our monotonic clock when
 *     the record last changed. The other holder's renewTime is never trusted.
 *   - A leader renews by PUT of its cached record (fast path, no GET); if that fails it GETs.
 *     On 404 the Lease is created. An empty holderIdentity may be taken at once.
 *   - Taking over from someone else: acquireTime = now, leaseTransitions + 1. Renewing our own:
 *     acquireTime and leaseTransitions unchanged.
 *   - Candidates retry every retryPeriod × (1 + jitter·1.2), jitter in [0,1); leaders every
 *     retryPeriod.
 *   - Release on clean shutdown: GET; if we hold it, PUT holder "", leaseDurationSeconds 1,
 *     acquireTime = renewTime = now, transitions unchanged.
 *
 *   Fencing (stricter than client-go): leadership ends at (send time of the last successful
 *   renewal) + renewDeadline. Another candidate can take over no earlier than leaseDuration
 *   after it observed that renewal, which happened after we sent it; with the defaults (15 s
 *   vs 10 s) that leaves 5 s for the manager to SIGKILL every worker before anyone else may
 *   lead. client-go instead counts the renew deadline from the start of a renew round (up to
 *   retryPeriod later), which is why kcm exits; kcmd goes back to being a candidate.
 *
 *   Rejected: a blocking elector on its own thread (the manager is single-threaded by design;
 *   a thread would need locks around the leader flag that workers' fencing depends on).
 */
#include <stdbool.h>
#include <stdint.h>

#include "kube/model.h"

#define MGR_LE_IDENTITY_MAX 256

/* The spec fields of a Lease that leader election reads and writes. */
struct mgr_le_record {
	char holder[MGR_LE_IDENTITY_MAX]; /* "" = nobody */
	int32_t lease_duration_s;
	kube_time_t acquire_time; /* wall clock, ns since epoch; 0 = null */
	kube_time_t renew_time;
	int32_t transitions;
};

struct mgr_le_config {
	const char *identity;       /* hostname_uuid */
	uint64_t lease_duration_us; /* --leader-elect-lease-duration, default 15 s */
	uint64_t renew_deadline_us; /* --leader-elect-renew-deadline, default 10 s */
	uint64_t retry_period_us;   /* --leader-elect-retry-period, default 2 s */
	/* Optional: a random number in [0,1) for the candidate jitter; NULL uses random(). */
	double (*rand01)(void *userdata);
	void *rand_userdata;
	/* A candidate that finds the Lease held by someone else tries again at the earlier of its
	 * jittered retry and the instant the record it observed expires by local observation
	 * (observed_mono + leaseDurationSeconds), instead of up to 2.2 retry periods after it.
	 * Safety is unchanged: it still takes only a Lease expired by local observation. Off for
	 * the leader / member Lease (client-go's pacing); on for the range Leases (shard.c). */
	bool attempt_at_expiry;
};

/* Checks client-go's constructor rules: all > 0, lease > renew, renew > 1.2 × retry, identity
 * non-empty and shorter than MGR_LE_IDENTITY_MAX. On failure returns -EINVAL and writes a reason
 * into err (if errlen > 0). */
int mgr_le_config_validate(const struct mgr_le_config *cfg, char *err, size_t errlen);

enum mgr_le_op {
	MGR_LE_OP_NONE = 0,
	MGR_LE_OP_GET,    /* GET the Lease */
	MGR_LE_OP_CREATE, /* POST a new Lease with req->record */
	MGR_LE_OP_UPDATE, /* PUT the last read Lease (same resourceVersion) with spec = req->record
	                   */
};

struct mgr_le_request {
	enum mgr_le_op op;
	struct mgr_le_record record; /* for CREATE and UPDATE */
	bool release;                /* this UPDATE gives the Lease up */
};

/* The outcome of a request, reported back by the driver. */
struct mgr_le_result {
	enum mgr_le_op op;
	int err; /* 0, -ENOENT (GET 404), -ESTALE (409 conflict), other -errno */
	struct mgr_le_record record; /* the Lease as read (GET) or as written (CREATE/UPDATE) */
};

struct mgr_le;

int mgr_le_new(const struct mgr_le_config *cfg, struct mgr_le **ret);
struct mgr_le *mgr_le_free(struct mgr_le *le);

/*
 * Advances the elector. Call it when the wakeup time passed (res == NULL) and whenever a
 * request completes (res != NULL, for the request last returned). now_mono is CLOCK_MONOTONIC
 * in µs, now_wall the wall clock written into the record.
 * Returns 1 with *ret_req filled when a request must be sent now (at most one is ever in
 * flight), 0 when there is nothing to send, -EINVAL for a result that matches no request.
 */
int mgr_le_step(struct mgr_le *le, uint64_t now_mono, kube_time_t now_wall,
                const struct mgr_le_result *res, struct mgr_le_request *ret_req);

/* Starts a release: the next step sends GET then, if we hold the Lease, the releasing PUT.
 * Leadership ends at once (the caller stops its workers first). */
void mgr_le_begin_release(struct mgr_le *le);
/* True once a release finished (or there was nothing to release). */
bool mgr_le_released(const struct mgr_le *le);

/* The monotonic time at which mgr_le_step() must be called next (UINT64_MAX: only on a result). */
uint64_t mgr_le_next_wakeup(const struct mgr_le *le);

/* Whether we lead at now_mono. Leadership ends by itself at the fencing deadline even when no
 * step ran; callers check this before letting workers write. */
bool mgr_le_is_leader(const struct mgr_le *le, uint64_t now_mono);
/* The fencing deadline while leading (UINT64_MAX when not leading). */
uint64_t mgr_le_fence_deadline(const struct mgr_le *le);

/* The holder we last observed ("" when none or unknown). */
const char *mgr_le_observed_holder(const struct mgr_le *le);
/* The Lease's leaseTransitions we last observed: the leadership term (-1 when none observed). */
int32_t mgr_le_observed_transitions(const struct mgr_le *le);
/* Seeds a new elector (one that has observed nothing yet) with record r as seen at local time
 * observed_mono by another reader of the same Lease in this process (the shard's LIST of the
 * range Leases): validity is still judged from the local time the record was last seen to
 * change, only that time may be earlier than this elector's first GET. Returns false (and does
 * nothing) once the elector has observed a record of its own. */
bool mgr_le_prime(struct mgr_le *le, const struct mgr_le_record *r, uint64_t observed_mono);

/* The leaderElection health check (kcm's 20 s tolerance): false when we believe we lead but
 * our last observation is older than leaseDuration + tolerance. */
bool mgr_le_healthy(const struct mgr_le *le, uint64_t now_mono, uint64_t tolerance_us);

/* Counters for /metrics and logs. */
struct mgr_le_stats {
	uint64_t acquisitions; /* times we became leader */
	uint64_t losses;       /* times leadership ended without a release */
	uint64_t renewals;     /* successful renewals (including acquisitions) */
	uint64_t failures;     /* failed requests */
};
void mgr_le_get_stats(const struct mgr_le *le, struct mgr_le_stats *ret);
