/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/hpa/hpa.c: the horizontal pod autoscaler's arithmetic (hpa.h): the replica
 * calculator, the stabilisation windows and the scaling policies, as upstream computes them
 * (float64 ratios, int32 truncations and ceilings in the same places).
 */
#include "workers/hpa/hpa.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NS_PER_S 1000000000LL

bool hpa_tol_within(struct hpa_tolerances t, double ratio)
{
	return (1.0 - t.down) <= ratio && ratio <= (1.0 + t.up);
}

/* ---- replica calculator ------------------------------------------------------------------- */
enum { S_READY = 0, S_UNREADY, S_MISSING, S_IGNORED };

struct work {
	struct hpa_sample *m; /* samples, then filled-in ones */
	bool *gone;           /* removed from the map */
	size_t n;
	int *cls; /* per pod */
	size_t ready, n_unready, n_missing;
};

static void work_free(struct work *w)
{
	free(w->m);
	free(w->gone);
	free(w->cls);
}

static ssize_t find_sample(const struct work *w, const char *name)
{
	for (size_t i = 0; i < w->n; i++)
		if (!w->gone[i] && !strcmp(w->m[i].name, name))
			return (ssize_t)i;
	return -1;
}

/* groupPods, then removeMetricsForPods(ignored), removeMetricsForPods(unready) */
static int group_pods(const struct hpa_calc_cfg *cfg, const struct hpa_pod *pods, size_t n_pods,
                      const struct hpa_sample *samples, size_t n_samples, bool cpu, struct work *w)
{
	memset(w, 0, sizeof(*w));
	w->m = calloc(n_samples + n_pods + 1, sizeof(*w->m));
	w->gone = calloc(n_samples + n_pods + 1, sizeof(*w->gone));
	w->cls = calloc(n_pods + 1, sizeof(*w->cls));
	if (!w->m || !w->gone || !w->cls) {
		work_free(w);
		return -ENOMEM;
	}
	/* a map keeps one sample per name: the last one wins */
	for (size_t i = 0; i < n_samples; i++) {
		ssize_t k = find_sample(w, samples[i].name);
		if (k >= 0)
			w->m[k] = samples[i];
		else
			w->m[w->n++] = samples[i];
	}
	for (size_t i = 0; i < n_pods; i++) {
		const struct hpa_pod *p = &pods[i];
		if (p->deleting || p->phase == HPA_POD_FAILED) {
			w->cls[i] = S_IGNORED;
			continue;
		}
		if (p->phase == HPA_POD_PENDING) {
			w->cls[i] = S_UNREADY;
			continue;
		}
		ssize_t k = find_sample(w, p->name);
		if (k < 0) {
			w->cls[i] = S_MISSING;
			continue;
		}
		if (cpu) {
			bool unready;
			const struct hpa_sample *s = &w->m[k];
			if (!p->has_ready || !p->start) {
				unready = true;
			} else if (p->start + cfg->cpu_init_ns > cfg->now) {
				unready = p->ready_false || s->ts < p->ready_ltt + s->window_ns;
			} else {
				unready = p->ready_false &&
				          p->start + cfg->readiness_delay_ns > p->ready_ltt;
			}
			if (unready) {
				w->cls[i] = S_UNREADY;
				continue;
			}
		}
		w->cls[i] = S_READY;
		w->ready++;
	}
	/* sets: a name listed twice counts once */
	for (size_t i = 0; i < n_pods; i++) {
		bool dup = false;
		for (size_t j = 0; j < i && !dup; j++)
			dup = w->cls[j] == w->cls[i] && !strcmp(pods[j].name, pods[i].name);
		if (dup)
			continue;
		if (w->cls[i] == S_UNREADY)
			w->n_unready++;
		else if (w->cls[i] == S_MISSING)
			w->n_missing++;
		if (w->cls[i] == S_IGNORED || w->cls[i] == S_UNREADY) {
			ssize_t k = find_sample(w, pods[i].name);
			if (k >= 0)
				w->gone[k] = true;
		}
	}
	return 0;
}

static size_t live(const struct work *w)
{
	size_t n = 0;
	for (size_t i = 0; i < w->n; i++)
		n += !w->gone[i];
	return n;
}

static void set_sample(struct work *w, const char *name, int64_t v)
{
	ssize_t k = find_sample(w, name);
	if (k < 0) {
		k = (ssize_t)w->n++;
		w->m[k] = (struct hpa_sample){.name = name};
	}
	w->m[k].value = v;
}

static const struct hpa_pod *pod_named(const struct hpa_pod *pods, size_t n, const char *name)
{
	const struct hpa_pod *r = NULL;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(pods[i].name, name))
			r = &pods[i]; /* the map of requests keeps the last */
	return r;
}

/* GetResourceUtilizationRatio */
static int utilization_ratio(const struct work *w, const struct hpa_pod *pods, size_t n_pods,
                             int32_t target, double *ratio, int32_t *util, int64_t *raw)
{
	int64_t mt = 0, rt = 0, entries = 0;
	for (size_t i = 0; i < w->n; i++) {
		if (w->gone[i])
			continue;
		const struct hpa_pod *p = pod_named(pods, n_pods, w->m[i].name);
		if (!p)
			continue;
		mt += w->m[i].value;
		rt += p->request;
		entries++;
	}
	if (rt == 0)
		return -EINVAL;
	*util = (int32_t)((mt * 100) / rt);
	*ratio = (double)*util / (double)target;
	*raw = mt / entries;
	return 0;
}

int hpa_resource_replicas(const struct hpa_calc_cfg *cfg, const struct hpa_pod *pods, size_t n_pods,
                          const struct hpa_sample *samples, size_t n_samples, int32_t current,
                          int32_t target_util, bool cpu, int32_t *ret_replicas, int32_t *ret_util,
                          int64_t *ret_raw, char *err, size_t errlen)
{
	struct work w;
	double ratio, nratio;
	int32_t util, u2;
	int64_t raw, r2;
	int r;

	if (n_pods == 0) {
		snprintf(err, errlen,
		         "no pods returned by selector while calculating replica count");
		return -EINVAL;
	}
	if ((r = group_pods(cfg, pods, n_pods, samples, n_samples, cpu, &w)) < 0)
		return r;
	if (live(&w) == 0) {
		snprintf(err, errlen,
		         "did not receive metrics for targeted pods (pods might be unready)");
		r = -EINVAL;
		goto out;
	}
	for (size_t i = 0; i < n_pods; i++)
		if (pods[i].request_err) {
			snprintf(err, errlen, "%s", pods[i].request_err);
			r = -EINVAL;
			goto out;
		}
	if (utilization_ratio(&w, pods, n_pods, target_util, &ratio, &util, &raw) < 0) {
		snprintf(err, errlen, "no metrics returned matched known pods");
		r = -EINVAL;
		goto out;
	}
	*ret_util = util;
	*ret_raw = raw;
	bool up_unready = w.n_unready > 0 && ratio > 1.0;
	if (!up_unready && w.n_missing == 0) {
		*ret_replicas = hpa_tol_within(cfg->tol, ratio)
		                        ? current
		                        : (int32_t)ceil(ratio * (double)w.ready);
		goto out;
	}
	for (size_t i = 0; i < n_pods; i++) {
		if (w.cls[i] == S_MISSING) {
			if (ratio < 1.0) {
				int64_t fb = target_util > 100 ? target_util : 100;
				const struct hpa_pod *p = pod_named(pods, n_pods, pods[i].name);
				set_sample(&w, pods[i].name, p->request * fb / 100);
			} else if (ratio > 1.0) {
				set_sample(&w, pods[i].name, 0);
			}
		}
	}
	if (up_unready)
		for (size_t i = 0; i < n_pods; i++)
			if (w.cls[i] == S_UNREADY)
				set_sample(&w, pods[i].name, 0);
	if (utilization_ratio(&w, pods, n_pods, target_util, &nratio, &u2, &r2) < 0) {
		snprintf(err, errlen, "no metrics returned matched known pods");
		r = -EINVAL;
		goto out;
	}
	if (hpa_tol_within(cfg->tol, nratio) || (ratio < 1.0 && nratio > 1.0) ||
	    (ratio > 1.0 && nratio < 1.0)) {
		*ret_replicas = current;
		goto out;
	}
	int32_t nr = (int32_t)ceil(nratio * (double)live(&w));
	if ((nratio < 1.0 && nr > current) || (nratio > 1.0 && nr < current))
		nr = current;
	*ret_replicas = nr;
out:
	work_free(&w);
	return r;
}

/* GetMetricUsageRatio */
static double usage_ratio(const struct work *w, int64_t target, int64_t *usage)
{
	int64_t total = 0, n = 0;
	for (size_t i = 0; i < w->n; i++)
		if (!w->gone[i]) {
			total += w->m[i].value;
			n++;
		}
	*usage = total / n;
	return (double)*usage / (double)target;
}

int hpa_plain_replicas(const struct hpa_calc_cfg *cfg, const struct hpa_pod *pods, size_t n_pods,
                       const struct hpa_sample *samples, size_t n_samples, int32_t current,
                       int64_t target, bool cpu, int32_t *ret_replicas, int64_t *ret_usage,
                       char *err, size_t errlen)
{
	struct work w;
	int64_t usage, u2;
	int r;

	if (n_pods == 0) {
		snprintf(err, errlen,
		         "no pods returned by selector while calculating replica count");
		return -EINVAL;
	}
	if ((r = group_pods(cfg, pods, n_pods, samples, n_samples, cpu, &w)) < 0)
		return r;
	if (live(&w) == 0) {
		snprintf(err, errlen,
		         "did not receive metrics for targeted pods (pods might be unready)");
		r = -EINVAL;
		goto out;
	}
	double ratio = usage_ratio(&w, target, &usage);
	*ret_usage = usage;
	bool up_unready = w.n_unready > 0 && ratio > 1.0;
	if (!up_unready && w.n_missing == 0) {
		*ret_replicas = hpa_tol_within(cfg->tol, ratio)
		                        ? current
		                        : (int32_t)ceil(ratio * (double)w.ready);
		goto out;
	}
	for (size_t i = 0; i < n_pods; i++)
		if (w.cls[i] == S_MISSING) {
			if (ratio < 1.0)
				set_sample(&w, pods[i].name, target);
			else if (ratio > 1.0)
				set_sample(&w, pods[i].name, 0);
		}
	if (up_unready)
		for (size_t i = 0; i < n_pods; i++)
			if (w.cls[i] == S_UNREADY)
				set_sample(&w, pods[i].name, 0);
	double nratio = usage_ratio(&w, target, &u2);
	if (hpa_tol_within(cfg->tol, nratio) || (ratio < 1.0 && nratio > 1.0) ||
	    (ratio > 1.0 && nratio < 1.0)) {
		*ret_replicas = current;
		goto out;
	}
	int32_t nr = (int32_t)ceil(nratio * (double)live(&w));
	if ((nratio < 1.0 && nr > current) || (nratio > 1.0 && nr < current))
		nr = current;
	*ret_replicas = nr;
out:
	work_free(&w);
	return r;
}

int32_t hpa_usage_ratio_replicas(int32_t current, double ratio, struct hpa_tolerances tol,
                                 int64_t ready)
{
	if (current == 0)
		return (int32_t)ceil(ratio);
	if (hpa_tol_within(tol, ratio))
		return current;
	double f = ratio * (double)ready;
	return f > INT32_MAX ? INT32_MAX : (int32_t)ceil(f);
}

int32_t hpa_per_pod_replicas(int32_t status_replicas, int64_t usage, int64_t target,
                             struct hpa_tolerances tol, int64_t *ret_avg)
{
	int32_t replicas = status_replicas;
	double ratio = (double)usage / ((double)target * (double)replicas);
	if (!hpa_tol_within(tol, ratio)) {
		double f = ceil((double)usage / (double)target);
		replicas = f > (double)INT32_MAX ? INT32_MAX : (int32_t)f;
	}
	if ((double)usage >= (double)INT64_MAX)
		*ret_avg = INT64_MAX;
	else
		*ret_avg = (int64_t)ceil((double)usage / (double)status_replicas);
	return replicas;
}

/* ---- history -------------------------------------------------------------------------------- */
void hpa_history_free(struct hpa_history *h)
{
	free(h->recs);
	free(h->up);
	free(h->down);
	memset(h, 0, sizeof(*h));
}

static int push_rec(struct hpa_history *h, int32_t v, kube_time_t now)
{
	struct hpa_rec *n = realloc(h->recs, (h->n_recs + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	h->recs = n;
	h->recs[h->n_recs++] = (struct hpa_rec){v, now};
	return 0;
}

int hpa_history_init(struct hpa_history *h, int32_t current, kube_time_t now)
{
	if (h->recs)
		return 0;
	return push_rec(h, current, now);
}

/* stabilizeRecommendation */
static int32_t stabilize(struct hpa_history *h, kube_time_t now, int64_t window_ns, int32_t desired)
{
	int32_t maxr = desired;
	bool old = false;
	size_t oi = 0;
	kube_time_t cutoff = now - window_ns;
	for (size_t i = 0; i < h->n_recs; i++) {
		if (h->recs[i].ts < cutoff) {
			old = true;
			oi = i;
		} else if (h->recs[i].replicas > maxr) {
			maxr = h->recs[i].replicas;
		}
	}
	if (old)
		h->recs[oi] = (struct hpa_rec){desired, now};
	else if (push_rec(h, desired, now) < 0)
		return -ENOMEM;
	return maxr;
}

int32_t hpa_convert_with_rules(int32_t current, int32_t desired, int32_t min, int32_t max,
                               const char **reason, const char **message)
{
	int32_t up = (int32_t)fmax(2.0 * (double)current, 4.0), maxa;
	if (max > up) {
		maxa = up;
		*reason = "ScaleUpLimit";
		*message = "the desired replica count is increasing faster than the maximum scale "
		           "rate";
	} else {
		maxa = max;
		*reason = "TooManyReplicas";
		*message = "the desired replica count is more than the maximum replica count";
	}
	if (desired < min) {
		*reason = "TooFewReplicas";
		*message = "the desired replica count is less than the minimum replica count";
		return min;
	}
	if (desired > maxa)
		return maxa;
	*reason = "DesiredWithinRange";
	*message = "the desired count is within the acceptable range";
	return desired;
}

int32_t hpa_normalize(struct hpa_history *h, kube_time_t now, int64_t window_ns, int32_t current,
                      int32_t desired, int32_t min, int32_t max, struct hpa_cond *able,
                      struct hpa_cond *limited)
{
	int32_t st = stabilize(h, now, window_ns, desired);
	if (st < 0)
		return st;
	if (st != desired)
		*able = (struct hpa_cond){"AbleToScale", "True", "ScaleDownStabilized",
		                          "recent recommendations were higher than current one, "
		                          "applying the highest recent recommendation"};
	else
		*able = (struct hpa_cond){"AbleToScale", "True", "ReadyForNewScale",
		                          "recommended size matches current size"};
	const char *reason, *msg;
	int32_t d = hpa_convert_with_rules(current, st, min, max, &reason, &msg);
	*limited = (struct hpa_cond){"ScalingLimited", d == st ? "False" : "True", reason, msg};
	return d;
}

static int32_t change_in_period(int32_t period_s, const struct hpa_scale_event *ev, size_t n,
                                kube_time_t now)
{
	kube_time_t cutoff = now - (kube_time_t)period_s * NS_PER_S;
	int32_t r = 0;
	for (size_t i = 0; i < n; i++)
		if (ev[i].ts > cutoff)
			r += ev[i].change;
	return r;
}

int32_t hpa_scale_up_limit(const struct hpa_history *h, kube_time_t now, int32_t current,
                           const struct hpa_rules *r)
{
	int32_t result, proposed = 0;
	if (r->select == HPA_SELECT_DISABLED)
		return current;
	result = r->select == HPA_SELECT_MIN ? INT32_MAX : INT32_MIN;
	for (size_t i = 0; i < r->n_policies; i++) {
		int32_t added = change_in_period(r->policies[i].period_s, h->up, h->n_up, now);
		int32_t deleted =
		        change_in_period(r->policies[i].period_s, h->down, h->n_down, now);
		int32_t start = current - added + deleted;
		if (r->policies[i].type == HPA_POLICY_PODS)
			proposed = start + r->policies[i].value;
		else
			proposed = (int32_t)ceil((double)start *
			                         (1 + (double)r->policies[i].value / 100));
		if (r->select == HPA_SELECT_MIN)
			result = proposed < result ? proposed : result;
		else
			result = proposed > result ? proposed : result;
	}
	return result;
}

int32_t hpa_scale_down_limit(const struct hpa_history *h, kube_time_t now, int32_t current,
                             const struct hpa_rules *r)
{
	int32_t result, proposed = 0;
	if (r->select == HPA_SELECT_DISABLED)
		return current;
	result = r->select == HPA_SELECT_MIN ? INT32_MIN : INT32_MAX;
	for (size_t i = 0; i < r->n_policies; i++) {
		int32_t added = change_in_period(r->policies[i].period_s, h->up, h->n_up, now);
		int32_t deleted =
		        change_in_period(r->policies[i].period_s, h->down, h->n_down, now);
		int32_t start = current - added + deleted;
		if (r->policies[i].type == HPA_POLICY_PODS)
			proposed = start - r->policies[i].value;
		else
			proposed =
			        (int32_t)((double)start * (1 - (double)r->policies[i].value / 100));
		if (r->select == HPA_SELECT_MIN)
			result = proposed > result ? proposed : result;
		else
			result = proposed < result ? proposed : result;
	}
	return result;
}

int32_t hpa_normalize_behavior(struct hpa_history *h, kube_time_t now, const struct hpa_rules *up,
                               const struct hpa_rules *down, int32_t current, int32_t desired,
                               int32_t min, int32_t max, struct hpa_cond *able,
                               struct hpa_cond *limited)
{
	/* stabilizeRecommendationWithBehaviors */
	int32_t upr = desired, downr = desired;
	kube_time_t upc = now - (kube_time_t)up->window_s * NS_PER_S;
	kube_time_t downc = now - (kube_time_t)down->window_s * NS_PER_S;
	bool old = false;
	size_t oi = 0;
	for (size_t i = 0; i < h->n_recs; i++) {
		const struct hpa_rec *rc = &h->recs[i];
		if (rc->ts > upc && rc->replicas < upr)
			upr = rc->replicas;
		if (rc->ts > downc && rc->replicas > downr)
			downr = rc->replicas;
		if (rc->ts < upc && rc->ts < downc) {
			old = true;
			oi = i;
		}
	}
	int32_t st = current;
	if (st < upr)
		st = upr;
	if (st > downr)
		st = downr;
	if (old)
		h->recs[oi] = (struct hpa_rec){desired, now};
	else if (push_rec(h, desired, now) < 0)
		return -ENOMEM;
	if (st != desired) {
		if (desired >= current)
			*able = (struct hpa_cond){
			        "AbleToScale", "True", "ScaleUpStabilized",
			        "recent recommendations were lower than current one, "
			        "applying the lowest recent recommendation"};
		else
			*able = (struct hpa_cond){
			        "AbleToScale", "True", "ScaleDownStabilized",
			        "recent recommendations were higher than current one, "
			        "applying the highest recent recommendation"};
	} else {
		*able = (struct hpa_cond){"AbleToScale", "True", "ReadyForNewScale",
		                          "recommended size matches current size"};
	}
	/* convertDesiredReplicasWithBehaviorRate */
	const char *reason = "DesiredWithinRange",
	           *msg = "the desired count is within the acceptable range";
	int32_t d = st;
	if (st > current) {
		int32_t lim = hpa_scale_up_limit(h, now, current, up);
		if (lim < current)
			lim = current;
		int32_t maxa = max;
		const char *pr, *pm;
		if (maxa > lim) {
			maxa = lim;
			pr = "ScaleUpLimit";
			pm = "the desired replica count is increasing faster than the maximum "
			     "scale rate";
		} else {
			pr = "TooManyReplicas";
			pm = "the desired replica count is more than the maximum replica count";
		}
		if (st > maxa) {
			d = maxa;
			reason = pr;
			msg = pm;
		}
	} else if (st < current) {
		int32_t lim = hpa_scale_down_limit(h, now, current, down);
		if (lim > current)
			lim = current;
		int32_t mina = min;
		const char *pr, *pm;
		if (mina < lim) {
			mina = lim;
			pr = "ScaleDownLimit";
			pm = "the desired replica count is decreasing faster than the maximum "
			     "scale rate";
		} else {
			pr = "TooFewReplicas";
			pm = "the desired replica count is less than the minimum replica count";
		}
		if (st < mina) {
			d = mina;
			reason = pr;
			msg = pm;
		}
	}
	*limited = (struct hpa_cond){"ScalingLimited", d == st ? "False" : "True", reason, msg};
	return d;
}

static int32_t longest_period(const struct hpa_rules *r)
{
	int32_t l = 0;
	for (size_t i = 0; i < r->n_policies; i++)
		if (r->policies[i].period_s > l)
			l = r->policies[i].period_s;
	return l;
}

static int store(struct hpa_scale_event **ev, size_t *n, int32_t period_s, int32_t change,
                 kube_time_t now)
{
	kube_time_t cutoff = now - (kube_time_t)period_s * NS_PER_S;
	bool found = false;
	size_t oi = 0;
	for (size_t i = 0; i < *n; i++)
		if ((*ev)[i].ts < cutoff)
			(*ev)[i].outdated = true;
	for (size_t i = 0; i < *n; i++)
		if ((*ev)[i].outdated) {
			found = true;
			oi = i;
		}
	struct hpa_scale_event e = {change, now, false};
	if (found) {
		(*ev)[oi] = e;
		return 0;
	}
	struct hpa_scale_event *ne = realloc(*ev, (*n + 1) * sizeof(*ne));
	if (!ne)
		return -ENOMEM;
	*ev = ne;
	(*ev)[(*n)++] = e;
	return 0;
}

int hpa_store_scale_event(struct hpa_history *h, kube_time_t now, bool has_behavior,
                          const struct hpa_rules *up, const struct hpa_rules *down, int32_t prev,
                          int32_t next)
{
	if (!has_behavior)
		return 0;
	if (next > prev)
		return store(&h->up, &h->n_up, longest_period(up), next - prev, now);
	return store(&h->down, &h->n_down, longest_period(down), prev - next, now);
}
