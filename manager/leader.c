/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manager/leader.c: the Lease elector state machine (see leader.h for the rules and why).
 *
 * State: at most one request in flight. Between requests the elector waits until
 * next_attempt. While leading, leadership ends at fence = last_renew_sent + renewDeadline,
 * checked on every step and by mgr_le_is_leader() even when no step runs.
 */
#include "manager/leader.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mgr_le {
	struct mgr_le_config cfg;
	char identity[MGR_LE_IDENTITY_MAX];

	struct mgr_le_record observed;
	bool have_observed;
	uint64_t observed_mono; /* local time the observed record last changed */

	bool leading;
	uint64_t last_renew_sent; /* send time of the last successful CREATE/UPDATE by us */

	bool inflight;
	enum mgr_le_op inflight_op;
	bool inflight_fast; /* a leader's renewal sent without a GET first */
	bool inflight_release;
	uint64_t inflight_sent;

	uint64_t next_attempt;
	bool releasing, released;

	struct mgr_le_stats stats;
};

int mgr_le_config_validate(const struct mgr_le_config *cfg, char *err, size_t errlen)
{
	const char *why = NULL;

	if (!cfg->identity || !cfg->identity[0])
		why = "identity is empty";
	else if (strlen(cfg->identity) >= MGR_LE_IDENTITY_MAX)
		why = "identity is too long";
	else if (cfg->lease_duration_us == 0 || cfg->renew_deadline_us == 0 ||
	         cfg->retry_period_us == 0)
		why = "lease duration, renew deadline and retry period must all be greater than "
		      "zero";
	else if (cfg->lease_duration_us <= cfg->renew_deadline_us)
		why = "leader-elect-lease-duration must be greater than "
		      "leader-elect-renew-deadline";
	else if ((double)cfg->renew_deadline_us <= 1.2 * (double)cfg->retry_period_us)
		why = "leader-elect-renew-deadline must be greater than 1.2 x "
		      "leader-elect-retry-period";
	else if (cfg->lease_duration_us / 1000000 < 1)
		why = "leader-elect-lease-duration must be at least 1s (the Lease holds whole "
		      "seconds)";
	if (!why)
		return 0;
	if (err && errlen)
		snprintf(err, errlen, "%s", why);
	return -EINVAL;
}

int mgr_le_new(const struct mgr_le_config *cfg, struct mgr_le **ret)
{
	struct mgr_le *le;
	int r = mgr_le_config_validate(cfg, NULL, 0);

	if (r < 0)
		return r;
	le = calloc(1, sizeof(*le));
	if (!le)
		return -ENOMEM;
	le->cfg = *cfg;
	snprintf(le->identity, sizeof(le->identity), "%s", cfg->identity);
	le->cfg.identity = le->identity;
	le->next_attempt = 0; /* try at once */
	*ret = le;
	return 0;
}

struct mgr_le *mgr_le_free(struct mgr_le *le)
{
	free(le);
	return NULL;
}

static bool record_equal(const struct mgr_le_record *a, const struct mgr_le_record *b)
{
	return strcmp(a->holder, b->holder) == 0 && a->lease_duration_s == b->lease_duration_s &&
	       a->acquire_time == b->acquire_time && a->renew_time == b->renew_time &&
	       a->transitions == b->transitions;
}

static void observe(struct mgr_le *le, const struct mgr_le_record *r, uint64_t now)
{
	if (!le->have_observed || !record_equal(&le->observed, r)) {
		le->observed = *r;
		le->observed_mono = now;
		le->have_observed = true;
	}
}

static bool observed_valid(const struct mgr_le *le, uint64_t now)
{
	uint64_t dur;

	if (!le->have_observed || le->observed.lease_duration_s <= 0)
		return false;
	dur = (uint64_t)le->observed.lease_duration_s * 1000000u;
	return le->observed_mono + dur > now;
}

static double rand01(const struct mgr_le *le)
{
	if (le->cfg.rand01)
		return le->cfg.rand01(le->cfg.rand_userdata);
	return (double)random() / ((double)RAND_MAX + 1.0);
}

static void check_fence(struct mgr_le *le, uint64_t now)
{
	if (le->leading && now >= le->last_renew_sent + le->cfg.renew_deadline_us) {
		le->leading = false;
		le->stats.losses++;
	}
}

static void attempt_failed(struct mgr_le *le, uint64_t now)
{
	uint64_t wait = le->cfg.retry_period_us;

	if (!le->leading) /* a candidate's retry is jittered (client-go JitterFactor 1.2) */
		wait += (uint64_t)((double)le->cfg.retry_period_us * 1.2 * rand01(le));
	le->next_attempt = now + wait;
}

static int send(struct mgr_le *le, uint64_t now, enum mgr_le_op op, struct mgr_le_request *req)
{
	req->op = op;
	req->release = le->inflight_release;
	le->inflight = true;
	le->inflight_op = op;
	le->inflight_sent = now;
	return 1;
}

static void our_record(const struct mgr_le *le, kube_time_t now_wall, struct mgr_le_record *r)
{
	bool ours = le->have_observed && strcmp(le->observed.holder, le->identity) == 0;

	memset(r, 0, sizeof(*r));
	snprintf(r->holder, sizeof(r->holder), "%s", le->identity);
	r->lease_duration_s = (int32_t)(le->cfg.lease_duration_us / 1000000u);
	r->renew_time = now_wall;
	if (ours) {
		r->acquire_time = le->observed.acquire_time;
		r->transitions = le->observed.transitions;
	} else {
		r->acquire_time = now_wall;
		r->transitions = le->have_observed ? le->observed.transitions + 1 : 0;
	}
}

static int release_step(struct mgr_le *le, uint64_t now, kube_time_t now_wall,
                        const struct mgr_le_result *res, struct mgr_le_request *req)
{
	if (!res || !le->inflight_release) {
		/* First step of the release, or the answer to a request sent before it began. */
		if (res && res->err == 0 && res->op == MGR_LE_OP_GET)
			observe(le, &res->record, now);
		le->inflight_release = true;
		le->inflight_fast = false;
		return send(le, now, MGR_LE_OP_GET, req);
	}
	if (res->op == MGR_LE_OP_GET) {
		if (res->err != 0 || strcmp(res->record.holder, le->identity) != 0) {
			le->released =
			        true; /* absent, unreadable or not ours: nothing to give up */
			le->inflight_release = false;
			return 0;
		}
		observe(le, &res->record, now);
		memset(&req->record, 0, sizeof(req->record));
		req->record.lease_duration_s = 1;
		req->record.acquire_time = now_wall;
		req->record.renew_time = now_wall;
		req->record.transitions = res->record.transitions;
		return send(le, now, MGR_LE_OP_UPDATE, req);
	}
	if (res->err == -ESTALE) /* someone wrote in between: read again and retry */
		return send(le, now, MGR_LE_OP_GET, req);
	if (res->err == 0)
		observe(le, &res->record, now);
	le->released = true;
	le->inflight_release = false;
	return 0;
}

int mgr_le_step(struct mgr_le *le, uint64_t now, kube_time_t now_wall,
                const struct mgr_le_result *res, struct mgr_le_request *req)
{
	memset(req, 0, sizeof(*req));
	check_fence(le, now);

	if (res) {
		if (!le->inflight || res->op != le->inflight_op)
			return -EINVAL;
		le->inflight = false;
		if (res->err != 0)
			le->stats.failures++;
	} else if (le->inflight) {
		return 0;
	}

	if (le->releasing) {
		if (le->released)
			return 0;
		return release_step(le, now, now_wall, res, req);
	}

	if (!res) {
		if (now < le->next_attempt)
			return 0;
		if (le->leading && observed_valid(le, now) &&
		    strcmp(le->observed.holder, le->identity) == 0) {
			/* Fast path: renew the cached record without reading it first. */
			our_record(le, now_wall, &req->record);
			le->inflight_fast = true;
			return send(le, now, MGR_LE_OP_UPDATE, req);
		}
		le->inflight_fast = false;
		return send(le, now, MGR_LE_OP_GET, req);
	}

	switch (res->op) {
	case MGR_LE_OP_GET:
		if (res->err == -ENOENT) {
			le->have_observed = false;
			our_record(le, now_wall, &req->record);
			req->record.transitions = 0;
			return send(le, now, MGR_LE_OP_CREATE, req);
		}
		if (res->err != 0) {
			attempt_failed(le, now);
			return 0;
		}
		observe(le, &res->record, now);
		if (le->observed.holder[0] && strcmp(le->observed.holder, le->identity) != 0 &&
		    observed_valid(le, now)) {
			if (le->leading) { /* someone else holds it: we are not the leader */
				le->leading = false;
				le->stats.losses++;
			}
			attempt_failed(le, now);
			if (le->cfg.attempt_at_expiry) {
				/* observed_valid: the expiry is still ahead of now */
				uint64_t exp = le->observed_mono +
				               (uint64_t)le->observed.lease_duration_s * 1000000u;
				if (exp < le->next_attempt)
					le->next_attempt = exp;
			}
			return 0;
		}
		our_record(le, now_wall, &req->record);
		return send(le, now, MGR_LE_OP_UPDATE, req);
	case MGR_LE_OP_CREATE:
	case MGR_LE_OP_UPDATE:
		if (res->err == 0) {
			le->observed = res->record;
			le->observed_mono = now;
			le->have_observed = true;
			if (!le->leading)
				le->stats.acquisitions++;
			le->leading = true;
			le->last_renew_sent = le->inflight_sent;
			le->stats.renewals++;
			le->next_attempt = now + le->cfg.retry_period_us;
			check_fence(le,
			            now); /* an answer slower than the deadline does not count */
			return 0;
		}
		if (res->op == MGR_LE_OP_UPDATE && le->inflight_fast) {
			le->inflight_fast = false;
			return send(le, now, MGR_LE_OP_GET, req);
		}
		attempt_failed(le, now);
		return 0;
	default:
		return -EINVAL;
	}
}

void mgr_le_begin_release(struct mgr_le *le)
{
	if (le->releasing)
		return;
	le->releasing = true;
	le->released = false;
	le->leading = false;
	le->inflight_release = false;
	le->next_attempt = 0;
}

bool mgr_le_released(const struct mgr_le *le)
{
	return le->releasing && le->released;
}

uint64_t mgr_le_fence_deadline(const struct mgr_le *le)
{
	return le->leading ? le->last_renew_sent + le->cfg.renew_deadline_us : UINT64_MAX;
}

uint64_t mgr_le_next_wakeup(const struct mgr_le *le)
{
	uint64_t t =
	        le->inflight || (le->releasing && le->released) ? UINT64_MAX : le->next_attempt;
	uint64_t f = mgr_le_fence_deadline(le);

	return f < t ? f : t;
}

bool mgr_le_is_leader(const struct mgr_le *le, uint64_t now)
{
	return le->leading && now < le->last_renew_sent + le->cfg.renew_deadline_us;
}

const char *mgr_le_observed_holder(const struct mgr_le *le)
{
	return le->have_observed ? le->observed.holder : "";
}

bool mgr_le_prime(struct mgr_le *le, const struct mgr_le_record *r, uint64_t observed_mono)
{
	if (le->have_observed || le->inflight || le->leading)
		return false;
	le->observed = *r;
	le->observed_mono = observed_mono;
	le->have_observed = true;
	return true;
}

int32_t mgr_le_observed_transitions(const struct mgr_le *le)
{
	return le->have_observed ? le->observed.transitions : -1;
}

bool mgr_le_healthy(const struct mgr_le *le, uint64_t now, uint64_t tolerance_us)
{
	if (!le->leading)
		return true;
	return now <= le->observed_mono + le->cfg.lease_duration_us + tolerance_us;
}

void mgr_le_get_stats(const struct mgr_le *le, struct mgr_le_stats *ret)
{
	*ret = le->stats;
}
