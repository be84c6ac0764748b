/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/deployment/plan.c: the deployment controller's arithmetic (see plan.h).
 *
 * Design note. Each function is one upstream function's rule, rewritten over plain structs:
 * GetScaledValueFromIntOrPercent (percentages in float64 with ceil/floor, as Go computes them,
 * so 33% of 10 is 4 rounded up and 3 down exactly as upstream), ResolveFenceposts,
 * MaxSurge/MaxUnavailable, NewRSNewReplicas, reconcileOldReplicaSets with
 * cleanupUnhealthyReplicas and scaleDownOldReplicaSetsForRollingUpdate, scale()'s proportional
 * distribution with GetReplicaSetProportion (integer.RoundToInt32: round half away from zero).
 * Sorting uses the same total orders as upstream (size, then creation time, then name), so
 * the leftover of a proportional scale lands on the same ReplicaSet.
 * Rejected: doing the arithmetic inside the sync next to the API calls (untestable without an
 * apiserver, and the point of keeping it identical is to test it against upstream's tables).
 */
#include "workers/deployment/plan.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int dp_scaled_value(const struct dp_intstr *v, int32_t total, bool round_up, int32_t *ret)
{
	if (!v || !v->set)
		return -EINVAL;
	if (!v->is_str) {
		*ret = v->ival;
		return 0;
	}
	size_t n = strnlen(v->str, sizeof(v->str));
	if (n == 0 || n == sizeof(v->str) || v->str[n - 1] != '%')
		return -EINVAL;
	/* strconv.Atoi: optional sign, then decimal digits only */
	size_t i = 0;
	bool neg = false;
	if (v->str[0] == '+' || v->str[0] == '-') {
		neg = v->str[0] == '-';
		i = 1;
	}
	if (i == n - 1)
		return -EINVAL;
	int64_t p = 0;
	for (; i < n - 1; i++) {
		if (v->str[i] < '0' || v->str[i] > '9')
			return -EINVAL;
		p = p * 10 + (v->str[i] - '0');
		if (p > INT32_MAX)
			return -EINVAL;
	}
	if (neg)
		p = -p;
	double x = (double)p * (double)total / 100;
	*ret = (int32_t)(round_up ? ceil(x) : floor(x));
	return 0;
}

int dp_resolve_fenceposts(const struct dp_intstr *surge, const struct dp_intstr *unavail,
                          int32_t desired, int32_t *ret_surge, int32_t *ret_unavail)
{
	static const struct dp_intstr zero = {.set = true};
	int32_t s, u;
	int r = dp_scaled_value(surge && surge->set ? surge : &zero, desired, true, &s);
	if (r < 0)
		return r;
	r = dp_scaled_value(unavail && unavail->set ? unavail : &zero, desired, false, &u);
	if (r < 0)
		return r;
	if (s == 0 && u == 0)
		u = 1;
	*ret_surge = s;
	*ret_unavail = u;
	return 0;
}

int32_t dp_max_unavailable(const struct dp_deployment *d)
{
	int32_t s = 0, u = 0;
	if (!d->rolling || d->replicas == 0)
		return 0;
	(void)dp_resolve_fenceposts(&d->max_surge, &d->max_unavailable, d->replicas, &s, &u);
	return u > d->replicas ? d->replicas : u;
}

int32_t dp_max_surge(const struct dp_deployment *d)
{
	int32_t s = 0, u = 0;
	if (!d->rolling)
		return 0;
	(void)dp_resolve_fenceposts(&d->max_surge, &d->max_unavailable, d->replicas, &s, &u);
	return s;
}

static int32_t sum_replicas(const struct dp_rs *rs, size_t n)
{
	int32_t t = 0;
	for (size_t i = 0; i < n; i++)
		t += rs[i].replicas;
	return t;
}

int dp_new_rs_new_replicas(const struct dp_deployment *d, const struct dp_rs *all, size_t n,
                           const struct dp_rs *new_rs, int32_t *ret)
{
	if (!d->rolling) {
		*ret = d->replicas;
		return 0;
	}
	int32_t surge;
	int r = dp_scaled_value(&d->max_surge, d->replicas, true, &surge);
	if (r < 0)
		return r;
	int32_t current = sum_replicas(all, n);
	int32_t max_total = d->replicas + surge;
	if (current >= max_total) {
		*ret = new_rs->replicas;
		return 0;
	}
	int32_t up = max_total - current;
	if (d->replicas - new_rs->replicas < up)
		up = d->replicas - new_rs->replicas;
	*ret = new_rs->replicas + up;
	return 0;
}

static int by_creation(const void *a, const void *b)
{
	const struct dp_rs *x = a, *y = b;
	if (x->created != y->created)
		return x->created < y->created ? -1 : 1;
	return strcmp(x->name, y->name);
}

void dp_sort_by_creation(struct dp_rs *rs, size_t n)
{
	if (n > 1)
		qsort(rs, n, sizeof(*rs), by_creation);
}

/* ReplicaSetsBySizeOlder / ReplicaSetsBySizeNewer; sorted by target (the size the plan works
 * on), which is the replicas when the plan starts. */
static int by_size_older(const void *a, const void *b)
{
	const struct dp_rs *x = a, *y = b;
	if (x->replicas != y->replicas)
		return x->replicas > y->replicas ? -1 : 1;
	return by_creation(a, b);
}

static int by_size_newer(const void *a, const void *b)
{
	const struct dp_rs *x = a, *y = b;
	if (x->replicas != y->replicas)
		return x->replicas > y->replicas ? -1 : 1;
	return by_creation(b, a);
}

int32_t dp_plan_scale_down_old(const struct dp_deployment *d, struct dp_rs *old, size_t n,
                               const struct dp_rs *new_rs)
{
	for (size_t i = 0; i < n; i++)
		old[i].target = old[i].replicas;
	int32_t old_pods = sum_replicas(old, n);
	if (old_pods == 0)
		return 0;
	int32_t all_pods = old_pods + new_rs->replicas;
	int32_t min_available = d->replicas - dp_max_unavailable(d);
	int32_t new_unavailable = new_rs->replicas - new_rs->available;
	int32_t max_scaled_down = all_pods - min_available - new_unavailable;
	if (max_scaled_down <= 0)
		return 0;
	dp_sort_by_creation(old, n);
	/* cleanupUnhealthyReplicas: replicas that are not available go first */
	int32_t cleaned = 0;
	for (size_t i = 0; i < n && cleaned < max_scaled_down; i++) {
		if (old[i].target == 0 || old[i].target == old[i].available)
			continue;
		int32_t down = old[i].target - old[i].available;
		if (max_scaled_down - cleaned < down)
			down = max_scaled_down - cleaned;
		old[i].target -= down;
		cleaned += down;
	}
	/* scaleDownOldReplicaSetsForRollingUpdate: then available ones, down to minAvailable
	 * (counted over the old ReplicaSets as updated above and the new one) */
	int32_t available = new_rs->available;
	for (size_t i = 0; i < n; i++)
		available += old[i].available;
	int32_t scaled = 0;
	if (available > min_available) {
		int32_t want = available - min_available;
		for (size_t i = 0; i < n && scaled < want; i++) {
			if (old[i].target == 0)
				continue;
			int32_t down =
			        old[i].target < want - scaled ? old[i].target : want - scaled;
			old[i].target -= down;
			scaled += down;
		}
	}
	return cleaned + scaled;
}

static int32_t max_replicas_before(const struct dp_rs *rs, const struct dp_deployment *d)
{
	int32_t v = rs->max_replicas;
	if (v <= 0)
		v = d->status_replicas; /* missing, invalid or 0: the Deployment's current size */
	return v;
}

static int32_t round_to_int32(double x)
{
	return (int32_t)round(x); /* math.Round: half away from zero */
}

static int32_t rs_fraction(const struct dp_rs *rs, const struct dp_deployment *d)
{
	if (d->replicas == 0)
		return -rs->replicas;
	int32_t max_now = d->replicas + dp_max_surge(d);
	int32_t before = max_replicas_before(rs, d);
	if (before == 0)
		return 0;
	double size = (double)(rs->replicas * max_now) / (double)before;
	return round_to_int32(size) - rs->replicas;
}

int32_t dp_rs_proportion(const struct dp_rs *rs, const struct dp_deployment *d, int32_t to_add,
                         int32_t added)
{
	if (!rs || rs->replicas == 0 || to_add == 0 || to_add == added)
		return 0;
	int32_t f = rs_fraction(rs, d);
	int32_t allowed = to_add - added;
	if (to_add > 0)
		return f < allowed ? f : allowed;
	return f > allowed ? f : allowed;
}

static int by_creation_desc(const void *a, const void *b)
{
	return by_creation(b, a);
}

bool dp_plan_scale(const struct dp_deployment *d, struct dp_rs *rs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		rs[i].target = rs[i].replicas;
	/* FindActiveOrLatest: old ones newest first, then the new one */
	struct dp_rs *new_rs = NULL, *active_one = NULL, *newest_old = NULL;
	size_t n_active = 0;
	for (size_t i = 0; i < n; i++) {
		if (rs[i].is_new)
			new_rs = &rs[i];
		else if (!newest_old || by_creation_desc(&rs[i], newest_old) < 0)
			newest_old = &rs[i];
		if (rs[i].replicas > 0) {
			n_active++;
			active_one = &rs[i];
		}
	}
	if (n > 0 && n_active <= 1) {
		struct dp_rs *pick = n_active == 1 ? active_one : new_rs ? new_rs : newest_old;
		pick->target = d->replicas;
		return false;
	}
	/* IsSaturated: the new ReplicaSet has every replica, desired and available */
	if (new_rs && new_rs->replicas == d->replicas && new_rs->desired == d->replicas &&
	    new_rs->available == d->replicas) {
		for (size_t i = 0; i < n; i++)
			if (!rs[i].is_new && rs[i].replicas > 0)
				rs[i].target = 0;
		return false;
	}
	if (!d->rolling)
		return false;
	/* FilterActiveReplicaSets: only ReplicaSets with replicas take part; move them first */
	size_t active = 0;
	for (size_t i = 0; i < n; i++) {
		if (rs[i].replicas > 0) {
			struct dp_rs t = rs[active];
			rs[active++] = rs[i];
			rs[i] = t;
		}
	}
	int32_t allowed = d->replicas > 0 ? d->replicas + dp_max_surge(d) : 0;
	int32_t to_add = allowed - sum_replicas(rs, active);
	if (to_add > 0 && active > 1)
		qsort(rs, active, sizeof(*rs), by_size_newer);
	else if (to_add < 0 && active > 1)
		qsort(rs, active, sizeof(*rs), by_size_older);
	int32_t added = 0;
	for (size_t i = 0; i < active && to_add != 0; i++) {
		int32_t p = dp_rs_proportion(&rs[i], d, to_add, added);
		rs[i].target = rs[i].replicas + p;
		added += p;
	}
	if (active > 0 && to_add != 0) {
		rs[0].target += to_add - added;
		if (rs[0].target < 0)
			rs[0].target = 0;
	}
	return true;
}

int dp_scaling_message(char *buf, size_t size, const char *rs_name, int32_t from, int32_t to)
{
	int n = snprintf(buf, size, "Scaled %s replica set %s from %d to %d",
	                 from < to ? "up" : "down", rs_name, (int)from, (int)to);
	return n < 0 || (size_t)n >= size ? -ENOSPC : n;
}

int64_t dp_max_revision(const struct dp_rs *rs, size_t n)
{
	int64_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (!rs[i].revision_bad && rs[i].revision > m)
			m = rs[i].revision;
	return m;
}

int64_t dp_last_revision(const struct dp_rs *rs, size_t n)
{
	int64_t m = 0, second = 0;
	for (size_t i = 0; i < n; i++) {
		if (rs[i].revision_bad)
			continue;
		if (rs[i].revision >= m) {
			second = m;
			m = rs[i].revision;
		} else if (rs[i].revision > second) {
			second = rs[i].revision;
		}
	}
	return second;
}

/* ReplicaSetsByRevision: by revision, ties (or an unparsable one) by creation time and name. */
static int by_revision(const void *a, const void *b)
{
	const struct dp_rs *x = a, *y = b;
	if (x->revision_bad || y->revision_bad || x->revision == y->revision)
		return by_creation(a, b);
	return x->revision < y->revision ? -1 : 1;
}

size_t dp_plan_cleanup(struct dp_rs *old, size_t n, int32_t history_limit, bool *del)
{
	/* the alive ones first, sorted by revision; ReplicaSets being deleted do not count */
	size_t alive = 0;
	for (size_t i = 0; i < n; i++) {
		if (!old[i].deleting) {
			struct dp_rs t = old[alive];
			old[alive++] = old[i];
			old[i] = t;
		}
	}
	for (size_t i = 0; i < n; i++)
		del[i] = false;
	int64_t diff = (int64_t)alive - history_limit;
	if (diff <= 0)
		return 0;
	if (alive > 1)
		qsort(old, alive, sizeof(*old), by_revision);
	size_t k = 0;
	for (int64_t i = 0; i < diff; i++) {
		const struct dp_rs *r = &old[i];
		if (r->status_replicas != 0 || r->replicas != 0 ||
		    r->generation > r->observed_generation || r->deleting)
			continue;
		del[i] = true;
		k++;
	}
	return k;
}

void dp_calc_status(const struct dp_deployment *d, const struct dp_rs *rs, size_t n,
                    bool terminating_gate, struct dp_status *ret)
{
	struct dp_status st = {.has_terminating = terminating_gate};
	int32_t total = 0;
	for (size_t i = 0; i < n; i++) {
		total += rs[i].replicas;
		st.replicas += rs[i].status_replicas;
		st.ready += rs[i].ready;
		st.available += rs[i].available;
		if (rs[i].is_new)
			st.updated = rs[i].status_replicas;
		if (!rs[i].has_terminating)
			st.has_terminating = false;
		st.terminating += rs[i].terminating;
	}
	if (!st.has_terminating)
		st.terminating = 0;
	st.unavailable = total - st.available;
	if (st.unavailable < 0)
		st.unavailable = 0;
	st.min_available = st.available >= d->replicas - dp_max_unavailable(d);
	*ret = st;
}

static bool is_reason(const struct dp_cond *c, const char *r)
{
	return c->present && c->reason && strcmp(c->reason, r) == 0;
}

static bool complete(const struct dp_progress_in *in, const struct dp_status *st)
{
	/* observedGeneration >= generation holds: the new status observes this generation */
	return st->updated == in->spec_replicas && st->replicas == in->spec_replicas &&
	       st->available == in->spec_replicas;
}

enum dp_progress dp_progress_decide(const struct dp_progress_in *in, const struct dp_status *st)
{
	if (!in->has_deadline)
		return DP_PROGRESS_REMOVE;
	if (st->replicas == st->updated && is_reason(&in->cur, "NewReplicaSetAvailable"))
		return DP_PROGRESS_KEEP;
	if (complete(in, st))
		return DP_PROGRESS_COMPLETE;
	if (st->updated > in->old_updated ||
	    st->replicas - st->updated < in->old_replicas - in->old_updated ||
	    st->ready > in->old_ready || st->available > in->old_available)
		return DP_PROGRESS_UPDATED;
	/* DeploymentTimedOut, over the condition the new status carries (the current one) */
	if (!in->cur.present || is_reason(&in->cur, "NewReplicaSetAvailable"))
		return DP_PROGRESS_KEEP;
	if (is_reason(&in->cur, "ProgressDeadlineExceeded"))
		return DP_PROGRESS_TIMED_OUT;
	return in->cur.last_update + in->deadline_seconds < in->now ? DP_PROGRESS_TIMED_OUT
	                                                            : DP_PROGRESS_KEEP;
}

int64_t dp_requeue_stuck_after(const struct dp_progress_in *in, const struct dp_status *st)
{
	if (!in->has_deadline || !in->cur.present)
		return -1;
	if (complete(in, st) || is_reason(&in->cur, "ProgressDeadlineExceeded"))
		return -1;
	int64_t after = in->cur.last_update + in->deadline_seconds - in->now;
	return after < 1 ? 0 : after;
}

int dp_progress_message(char *buf, size_t size, enum dp_progress p, const char *deployment,
                        const char *new_rs)
{
	const char *what = new_rs ? "ReplicaSet" : "Deployment";
	const char *name = new_rs ? new_rs : deployment;
	const char *tail;
	switch (p) {
	case DP_PROGRESS_COMPLETE:
		tail = "has successfully progressed.";
		break;
	case DP_PROGRESS_UPDATED:
		tail = "is progressing.";
		break;
	case DP_PROGRESS_TIMED_OUT:
		tail = "has timed out progressing.";
		break;
	default:
		return -EINVAL;
	}
	int n = snprintf(buf, size, "%s \"%s\" %s", what, name, tail);
	return n < 0 || (size_t)n >= size ? -ENOSPC : n;
}

bool dp_annotation_skipped(const char *key)
{
	static const char *const skip[] = {
	        "kubectl.kubernetes.io/last-applied-configuration",
	        "deployment.kubernetes.io/revision",
	        "deployment.kubernetes.io/revision-history",
	        "deployment.kubernetes.io/desired-replicas",
	        "deployment.kubernetes.io/max-replicas",
	        "deprecated.deployment.rollback.to",
	};
	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (strcmp(key, skip[i]) == 0)
			return true;
	return false;
}

static int parse_rev(const char *s, int64_t *ret)
{
	char *end;
	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || *end || s[0] == ' ' || s[0] == '\t')
		return -EINVAL;
	*ret = v;
	return 0;
}

int dp_revision_update(const char *old_rev, const char *history, const char *new_rev,
                       int limit_chars, char rev_out[24], char hist_out[DP_REV_HISTORY_BUF],
                       bool *changed)
{
	int64_t o = 0, n;
	*changed = false;
	snprintf(rev_out, 24, "%s", old_rev ? old_rev : "");
	snprintf(hist_out, DP_REV_HISTORY_BUF, "%s", history ? history : "");
	if (old_rev && *old_rev && parse_rev(old_rev, &o) < 0)
		return -EINVAL;
	if (parse_rev(new_rev, &n) < 0)
		return -EINVAL;
	if (o >= n)
		return 0;
	snprintf(rev_out, 24, "%s", new_rev);
	*changed = true;
	if (!old_rev)
		return 0;
	const char *h = history ? history : "";
	if (h[0] == 0 || h[0] == ',') {
		/* the history's first entry is empty: it becomes the replaced revision alone */
		snprintf(hist_out, DP_REV_HISTORY_BUF, "%s", old_rev);
		return 0;
	}
	size_t total = strlen(h) + strlen(old_rev) + 1;
	const char *start = h;
	while (total > (size_t)limit_chars && start) {
		const char *comma = strchr(start, ',');
		size_t entry = comma ? (size_t)(comma - start) : strlen(start);
		total -= entry + 1;
		start = comma ? comma + 1 : NULL;
	}
	if (total > (size_t)limit_chars)
		return 0; /* not appended: the limit is reached */
	if (total >= DP_REV_HISTORY_BUF)
		return -EINVAL; /* a limit larger than the buffer */
	if (start && *start)
		snprintf(hist_out, DP_REV_HISTORY_BUF, "%s,%s", start, old_rev);
	else if (start)
		snprintf(hist_out, DP_REV_HISTORY_BUF, ",%s", old_rev);
	else
		snprintf(hist_out, DP_REV_HISTORY_BUF, "%s", old_rev);
	return 0;
}
