/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/job/job.c: the Job controller's pure parts (job.h).
 */
#include "workers/job/job.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void job_iv_free(struct job_intervals *iv)
{
	free(iv->v);
	*iv = (struct job_intervals){0};
}

static int iv_push(struct job_intervals *iv, int64_t first, int64_t last)
{
	if (iv->n == iv->cap) {
		size_t cap = iv->cap ? iv->cap * 2 : 8;
		struct job_interval *v = realloc(iv->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		iv->v = v;
		iv->cap = cap;
	}
	iv->v[iv->n++] = (struct job_interval){first, last};
	return 0;
}

/* appendOrMergeWithLastInterval */
static int iv_append(struct job_intervals *iv, struct job_interval x)
{
	if (iv->n == 0 || x.first > iv->v[iv->n - 1].last + 1)
		return iv_push(iv, x.first, x.last);
	if (iv->v[iv->n - 1].last < x.last)
		iv->v[iv->n - 1].last = x.last;
	return 0;
}

/* Go's strconv.Atoi for what an index can be: optional sign, decimal digits, no overflow. */
static int parse_int(const char *s, size_t n, int64_t *ret)
{
	bool neg = false;
	int64_t v = 0;
	size_t i = 0;

	if (n && (s[0] == '+' || s[0] == '-')) {
		neg = s[0] == '-';
		i = 1;
	}
	if (i == n)
		return -EINVAL;
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' || v > (INT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (s[i] - '0');
	}
	*ret = neg ? -v : v;
	return 0;
}

int job_iv_parse(const char *s, int64_t completions, struct job_intervals *ret)
{
	ret->n = 0;
	if (!s || !*s)
		return 0;
	for (const char *p = s;;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *dash = memchr(p, '-', len);
		struct job_interval x;
		int r;

		/* strings.Split(interval, "-"): a leading '-' makes an empty first part */
		if (parse_int(p, dash ? (size_t)(dash - p) : len, &x.first) < 0)
			goto next;
		if (x.first >= completions)
			break;
		if (dash) {
			const char *d2 = memchr(dash + 1, '-', len - (size_t)(dash + 1 - p));
			size_t l2 = (d2 ? (size_t)(d2 - dash - 1) : len - (size_t)(dash + 1 - p));
			if (parse_int(dash + 1, l2, &x.last) < 0)
				goto next;
			if (x.last >= completions)
				x.last = completions - 1;
		} else {
			x.last = x.first;
		}
		if (ret->n && ret->v[ret->n - 1].last == x.first - 1)
			ret->v[ret->n - 1].last = x.last;
		else if ((r = iv_push(ret, x.first, x.last)) < 0)
			return r;
	next:
		if (!end)
			break;
		p = end + 1;
	}
	return 0;
}

int job_iv_merge(const struct job_intervals *a, const struct job_intervals *b,
                 struct job_intervals *ret)
{
	size_t i = 0, j = 0;
	int r = 0;

	ret->n = 0;
	while (r == 0 && i < a->n && j < b->n)
		r = a->v[i].first < b->v[j].first ? iv_append(ret, a->v[i++])
		                                  : iv_append(ret, b->v[j++]);
	while (r == 0 && i < a->n)
		r = iv_append(ret, a->v[i++]);
	while (r == 0 && j < b->n)
		r = iv_append(ret, b->v[j++]);
	return r;
}

int job_iv_with(const struct job_intervals *a, const int64_t *idx, size_t n,
                struct job_intervals *ret)
{
	struct job_intervals b = {0};
	int r = 0;

	for (size_t k = 0; r == 0 && k < n; k++)
		r = iv_push(&b, idx[k], idx[k]);
	if (r == 0)
		r = job_iv_merge(a, &b, ret);
	job_iv_free(&b);
	return r;
}

int64_t job_iv_total(const struct job_intervals *iv)
{
	int64_t t = 0;

	for (size_t i = 0; iv && i < iv->n; i++)
		t += iv->v[i].last - iv->v[i].first + 1;
	return t;
}

bool job_iv_has(const struct job_intervals *iv, int64_t ix)
{
	size_t lo = 0, hi = iv ? iv->n : 0;

	while (hi > lo) {
		size_t mid = lo + (hi - lo) / 2;
		if (iv->v[mid].last >= ix)
			hi = mid;
		else
			lo = mid + 1;
	}
	return iv && hi < iv->n && iv->v[hi].first <= ix;
}

int job_iv_string(const struct job_intervals *iv, char **ret)
{
	size_t cap = 1 + iv->n * 42, len = 0;
	char *s = malloc(cap);

	if (!s)
		return -ENOMEM;
	s[0] = 0;
	for (size_t i = 0; i < iv->n; i++) {
		const struct job_interval *x = &iv->v[i];
		len += (size_t)snprintf(s + len, cap - len, "%s%" PRId64, len ? "," : "", x->first);
		if (x->last > x->first)
			len += (size_t)snprintf(s + len, cap - len, "%c%" PRId64,
			                        x->last == x->first + 1 ? ',' : '-', x->last);
	}
	*ret = s;
	return 0;
}

size_t job_first_pending(const struct job_intervals *np, size_t count, int64_t completions,
                         int64_t *out)
{
	size_t n = 0;
	int64_t c = 0;

	for (size_t i = 0; np && i < np->n; i++) {
		for (; c < completions && n < count && c < np->v[i].first; c++)
			out[n++] = c;
		if (c < np->v[i].last + 1)
			c = np->v[i].last + 1;
	}
	for (; c < completions && n < count; c++)
		out[n++] = c;
	return n;
}

int64_t job_parse_index(const char *v)
{
	int64_t x;

	if (!v || parse_int(v, strlen(v), &x) < 0 || x < 0 || x > INT32_MAX)
		return -1;
	return x;
}

void job_backoff_record(const struct job_finished *p, size_t n, struct job_backoff *ret)
{
	kube_time_t last_success = 0;
	bool any_success = false;

	*ret = (struct job_backoff){0};
	for (size_t i = 0; i < n; i++)
		if (!p[i].failed && (!any_success || p[i].finish > last_success)) {
			last_success = p[i].finish;
			any_success = true;
		}
	for (size_t i = 0; i < n; i++) {
		if (!p[i].failed || (any_success && p[i].finish <= last_success))
			continue;
		ret->failures_after_last_success++;
		if (p[i].finish > ret->last_failure)
			ret->last_failure = p[i].finish;
	}
}

uint64_t job_backoff_remaining_us(const struct job_backoff *b, kube_time_t now, uint64_t base_us,
                                  uint64_t max_us)
{
	uint64_t d = base_us, elapsed;

	if (b->failures_after_last_success <= 0)
		return 0;
	for (int32_t i = 1; i < b->failures_after_last_success; i++) {
		d *= 2;
		if (d >= max_us) {
			d = max_us;
			break;
		}
	}
	elapsed = now > b->last_failure ? (uint64_t)(now - b->last_failure) / 1000 : 0;
	return d < elapsed ? 0 : d - elapsed;
}

int32_t job_parse_int32(const char *v)
{
	int64_t x;

	if (!v || parse_int(v, strlen(v), &x) < 0 || x < 0 || x > INT32_MAX)
		return 0;
	return (int32_t)x;
}

bool job_index_failed(const struct job_pod *p, bool only_replace_failed, bool has_pfp,
                      int64_t backoff_limit_per_index)
{
	bool counted = false;

	if (job_pod_failed(p, only_replace_failed)) {
		if (has_pfp) {
			if (p->pfp_action == JOB_PFP_FAIL_INDEX)
				return true;
			counted = p->pfp_count;
		} else {
			counted = true;
		}
	}
	return counted && p->fail_count >= backoff_limit_per_index;
}

static bool valid_ix(const struct job_pod *p, int64_t completions)
{
	return p->index >= 0 && p->index < completions;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

int job_failed_indexes(const struct job_intervals *prev, const struct job_pod *pods, size_t n,
                       int64_t completions, bool only_replace_failed, bool has_pfp,
                       int64_t backoff_limit_per_index, struct job_intervals *ret)
{
	int64_t *ix = calloc(n ? n : 1, sizeof(*ix));
	size_t k = 0;
	int r;

	if (!ix)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (pods[i].tracking && valid_ix(&pods[i], completions) &&
		    job_index_failed(&pods[i], only_replace_failed, has_pfp,
		                     backoff_limit_per_index))
			ix[k++] = pods[i].index;
	qsort(ix, k, sizeof(*ix), cmp_i64);
	r = job_iv_with(prev, ix, k, ret);
	free(ix);
	return r;
}

void job_delayed_deletion(struct job_pod *pods, size_t n, int64_t completions,
                          bool only_replace_failed, const struct job_intervals *succeeded,
                          const struct job_intervals *failed)
{
	for (size_t i = 0; i < n; i++)
		pods[i].delayed = false;
	for (size_t i = 0; i < n; i++) {
		struct job_pod *p = &pods[i];
		bool active = false;
		if (!p->tracking || !valid_ix(p, completions) ||
		    !job_pod_failed(p, only_replace_failed))
			continue;
		if (job_iv_has(succeeded, p->index) || job_iv_has(failed, p->index))
			continue;
		for (size_t j = 0; j < n && !active; j++)
			active = job_pod_active(&pods[j]) && pods[j].index == p->index;
		if (active)
			continue;
		struct job_pod *last = NULL;
		for (size_t j = 0; j < i && !last; j++)
			if (pods[j].delayed && pods[j].index == p->index)
				last = &pods[j];
		if (!last) {
			p->delayed = true;
		} else if ((int64_t)last->fail_count + last->ign_count <=
		                   (int64_t)p->fail_count + p->ign_count &&
		           !(job_pod_finish_time(p) < job_pod_finish_time(last))) {
			last->delayed = false;
			p->delayed = true;
		}
	}
}

void job_new_index_failure_counts(const struct job_pod *replaced, bool has_pfp,
                                  int32_t *ret_failures, int32_t *ret_ignored)
{
	*ret_failures = *ret_ignored = 0;
	if (!replaced)
		return;
	*ret_failures = replaced->fail_count;
	*ret_ignored = replaced->ign_count;
	if (!has_pfp || replaced->pfp_count)
		(*ret_failures)++;
	else
		(*ret_ignored)++;
}

uint64_t job_remaining_per_index(const struct job_pod *last_failed, kube_time_t now,
                                 uint64_t base_us, uint64_t max_us)
{
	struct job_backoff b;

	if (!last_failed)
		return 0;
	b.failures_after_last_success =
	        (int32_t)((int64_t)last_failed->fail_count + last_failed->ign_count + 1);
	b.last_failure = job_pod_finish_time(last_failed);
	return job_backoff_remaining_us(&b, now, base_us, max_us);
}

bool job_pod_active(const struct job_pod *p)
{
	return p->phase != KUBE_POD_SUCCEEDED && p->phase != KUBE_POD_FAILED && !p->deletion;
}

bool job_pod_terminating(const struct job_pod *p)
{
	return p->deletion && p->phase != KUBE_POD_SUCCEEDED && p->phase != KUBE_POD_FAILED;
}

bool job_pod_failed(const struct job_pod *p, bool only_replace_failed)
{
	if (p->phase == KUBE_POD_FAILED)
		return true;
	if (only_replace_failed)
		return false;
	return p->deletion && p->phase != KUBE_POD_SUCCEEDED;
}

kube_time_t job_pod_finish_time(const struct job_pod *p)
{
	if (!p->ready && p->ready_transition)
		return p->ready_transition;
	if (p->deletion)
		return p->deletion - p->deletion_grace_s * INT64_C(1000000000);
	return p->creation;
}

static int phase_rank(enum kube_pod_phase ph)
{
	switch (ph) {
	case KUBE_POD_PENDING:
	case KUBE_POD_PHASE_UNSET:
		return 0;
	case KUBE_POD_UNKNOWN:
		return 1;
	case KUBE_POD_RUNNING:
		return 2;
	default:
		return 3;
	}
}

int job_pod_cmp_active(const struct job_pod *a, const struct job_pod *b)
{
	if (a->scheduled != b->scheduled)
		return a->scheduled ? 1 : -1;
	if (phase_rank(a->phase) != phase_rank(b->phase))
		return phase_rank(a->phase) < phase_rank(b->phase) ? -1 : 1;
	if (a->ready != b->ready)
		return a->ready ? 1 : -1;
	/* both ready: the one ready for less time first */
	if (a->ready && a->ready_transition != b->ready_transition)
		return a->ready_transition > b->ready_transition ? -1 : 1;
	if (a->restarts != b->restarts)
		return a->restarts > b->restarts ? -1 : 1;
	if (a->creation != b->creation)
		return a->creation > b->creation ? -1 : 1;
	return 0;
}

void job_pod_generate_name(const char *job, int64_t index, char *buf, size_t n)
{
	char suffix[24];
	size_t jl = strlen(job), sl;

	if (index < 0) {
		snprintf(buf, n, "%s-", job);
		return;
	}
	snprintf(suffix, sizeof(suffix), "-%" PRId64 "-", index);
	sl = strlen(suffix);
	if (jl + sl > 58) /* names.MaxGeneratedNameLength */
		jl = 58 - sl;
	snprintf(buf, n, "%.*s%s", (int)jl, job, suffix);
}

/* ---- podFailurePolicy ---------------------------------------------------------------------- */
static const cJSON *jget(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static const cJSON *jarr(const cJSON *x)
{
	return cJSON_IsArray(x) ? x : NULL;
}

static const char *jstr(const cJSON *o, const char *k)
{
	const cJSON *x = jget(o, k);
	return cJSON_IsString(x) ? x->valuestring : NULL;
}

/* getMatchingContainerFromList: a terminated container with a non-zero exit code that the
 * requirement's containerName and operator match. */
static const cJSON *match_exit_codes(const cJSON *statuses, const cJSON *req, int64_t *ret_code)
{
	const char *cname = jstr(req, "containerName"), *op = jstr(req, "operator");
	const cJSON *values = jget(req, "values"), *cs;

	cJSON_ArrayForEach(cs, jarr(statuses))
	{
		const cJSON *term = jget(jget(cs, "state"), "terminated");
		const cJSON *ec = jget(term, "exitCode");
		const char *name = jstr(cs, "name");
		const cJSON *v;
		bool in = false;

		if (!cJSON_IsObject(term))
			continue;
		if (cname && (!name || strcmp(cname, name)))
			continue;
		int64_t code = cJSON_IsNumber(ec) ? (int64_t)ec->valuedouble : 0;
		if (code == 0)
			continue;
		cJSON_ArrayForEach(v, jarr(values)) in |=
		        cJSON_IsNumber(v) && (int64_t)v->valuedouble == code;
		if ((op && !strcmp(op, "In") && in) || (op && !strcmp(op, "NotIn") && !in)) {
			*ret_code = code;
			return cs;
		}
	}
	return NULL;
}

static const cJSON *match_conditions(const cJSON *conds, const cJSON *patterns)
{
	const cJSON *c, *p;

	cJSON_ArrayForEach(c, jarr(conds))
	{
		const char *ct = jstr(c, "type"), *cst = jstr(c, "status");
		cJSON_ArrayForEach(p, jarr(patterns))
		{
			const char *pt = jstr(p, "type"), *pst = jstr(p, "status");
			if (ct && pt && !strcmp(ct, pt) && cst && !strcmp(cst, pst ? pst : "True"))
				return c;
		}
	}
	return NULL;
}

int job_pfp_match(const cJSON *policy, const cJSON *pod, bool *count_failed, char **ret_msg)
{
	const cJSON *rules = jget(policy, "rules"), *rule, *st = jget(pod, "status");
	const cJSON *md = jget(pod, "metadata");
	int index = 0;

	*count_failed = true;
	*ret_msg = NULL;
	cJSON_ArrayForEach(rule, jarr(rules))
	{
		const char *action = jstr(rule, "action");
		const cJSON *oec = jget(rule, "onExitCodes"), *opc = jget(rule, "onPodConditions");
		const cJSON *hit = NULL;
		int64_t code = 0;
		char *msg = NULL;
		int r = 0;

		if (cJSON_IsObject(oec)) {
			hit = match_exit_codes(jget(st, "containerStatuses"), oec, &code);
			if (!hit)
				hit = match_exit_codes(jget(st, "initContainerStatuses"), oec,
				                       &code);
		} else if (cJSON_IsArray(opc)) {
			hit = match_conditions(jget(st, "conditions"), opc);
		}
		if (hit && action) {
			if (!strcmp(action, "Ignore")) {
				*count_failed = false;
				return JOB_PFP_IGNORE;
			}
			if (!strcmp(action, "FailIndex"))
				return JOB_PFP_FAIL_INDEX;
			if (!strcmp(action, "Count"))
				return JOB_PFP_COUNT;
			if (!strcmp(action, "FailJob")) {
				const char *ns = jstr(md, "namespace"), *pn = jstr(md, "name");
				if (cJSON_IsObject(oec))
					r = asprintf(&msg,
					             "Container %s for pod %s/%s failed with exit "
					             "code %" PRId64
					             " matching FailJob rule at index %d",
					             jstr(hit, "name") ? jstr(hit, "name") : "",
					             ns ? ns : "", pn ? pn : "", code, index);
				else
					r = asprintf(&msg,
					             "Pod %s/%s has condition %s matching FailJob "
					             "rule at "
					             "index %d",
					             ns ? ns : "", pn ? pn : "",
					             jstr(hit, "type") ? jstr(hit, "type") : "",
					             index);
				if (r < 0)
					return -ENOMEM;
				*ret_msg = msg;
				return JOB_PFP_FAIL_JOB;
			}
		}
		index++;
	}
	return JOB_PFP_NONE;
}

/* ---- successPolicy --------------------------------------------------------------------------- */
/* matchSucceededIndexesRule */
static bool match_indexes_rule(const struct job_intervals *rule, const struct job_intervals *si,
                               bool has_count, int64_t count)
{
	size_t rp = 0, sp = 0;
	int64_t contains = 0;

	while (rp < rule->n && sp < si->n) {
		int64_t lo =
		        rule->v[rp].first > si->v[sp].first ? rule->v[rp].first : si->v[sp].first;
		int64_t hi = rule->v[rp].last < si->v[sp].last ? rule->v[rp].last : si->v[sp].last;
		if (hi - lo + 1 > 0)
			contains += hi - lo + 1;
		if (si->v[sp].last < rule->v[rp].last) {
			sp++;
		} else if (si->v[sp].last > rule->v[rp].last) {
			rp++;
		} else {
			sp++;
			rp++;
		}
	}
	return contains == job_iv_total(rule) || (has_count && contains >= count);
}

bool job_success_policy_match(const cJSON *policy, int64_t completions,
                              const struct job_intervals *si, char *msg, size_t len)
{
	const cJSON *rule;
	int index = 0;

	if (!policy || !si || si->n == 0)
		return false;
	cJSON_ArrayForEach(rule, jarr(jget(policy, "rules")))
	{
		const cJSON *cnt = jget(rule, "succeededCount");
		const char *idx = jstr(rule, "succeededIndexes");
		bool has_count = cJSON_IsNumber(cnt), met = false;
		int64_t count = has_count ? (int64_t)cnt->valuedouble : 0;

		if (idx) {
			struct job_intervals req = {0};
			if (job_iv_parse(idx, completions, &req) == 0 && req.n > 0)
				met = match_indexes_rule(&req, si, has_count, count);
			job_iv_free(&req);
		} else if (has_count && job_iv_total(si) >= count) {
			met = true;
		}
		if (met) {
			snprintf(msg, len, "Matched rules at index %d", index);
			return true;
		}
		index++;
	}
	return false;
}

/* ---- selectors (job.h) ---------------------------------------------------------------------- */
bool job_selector_matches(const cJSON *sel, const struct kube_kv *labels, uint32_t n)
{
	const cJSON *it, *x;

	if (!cJSON_IsObject(sel))
		return false;
	cJSON_ArrayForEach(it, jget(sel, "matchLabels"))
	{
		const char *v = kube_labels_get(labels, n, it->string);
		if (!cJSON_IsString(it) || !v || strcmp(v, it->valuestring) != 0)
			return false;
	}
	cJSON_ArrayForEach(it, jget(sel, "matchExpressions"))
	{
		const char *k = jstr(it, "key"), *op = jstr(it, "operator");
		bool in = false;
		if (!k || !op)
			return false;
		const char *v = kube_labels_get(labels, n, k);
		cJSON_ArrayForEach(x, jget(it, "values"))
		{
			in |= v && cJSON_IsString(x) && strcmp(x->valuestring, v) == 0;
		}
		if (!strcmp(op, "In")             ? !in
		    : !strcmp(op, "NotIn")        ? in
		    : !strcmp(op, "Exists")       ? !v
		    : !strcmp(op, "DoesNotExist") ? v != NULL
		                                  : true)
			return false;
	}
	return true;
}

/* ---- metrics (job.h) ------------------------------------------------------------------------ */
static const char *const m_modes[] = {"NonIndexed", "Indexed", NULL};
static const char *const m_results[] = {"success", "error", NULL};
static const char *const m_actions[] = {"reconciling", "tracking", "pods_created", "pods_deleted",
                                        NULL};
static const char *const m_fin_results[] = {"succeeded", "failed", NULL};
static const char *const m_reasons[] = {
        "CompletionsReached", "BackoffLimitExceeded",     "DeadlineExceeded", "PodFailurePolicy",
        "FailedIndexes",      "MaxFailedIndexesExceeded", "SuccessPolicy",    NULL};
static const char *const m_pfp[] = {"FailJob", "Ignore", "Count", "FailIndex", NULL};
static const char *const m_creates[] = {"new", "recreate_terminating_or_failed", "recreate_failed",
                                        NULL};

static const struct kcmd_metric_label l_syncs[] = {
        {"completion_mode", m_modes}, {"result", m_results}, {"action", m_actions}};
static const struct kcmd_metric_label l_finished[] = {
        {"completion_mode", m_modes}, {"result", m_fin_results}, {"reason", m_reasons}};
static const struct kcmd_metric_label l_pods_finished[] = {{"completion_mode", m_modes},
                                                           {"result", m_fin_results}};
static const struct kcmd_metric_label l_pfp[] = {{"action", m_pfp}};
static const struct kcmd_metric_label l_creations[] = {{"reason", m_creates},
                                                       {"status", m_fin_results}};
static const char *const m_events[] = {"add", "delete", NULL};
static const char *const m_limits[] = {"perIndex", "global", NULL};
static const struct kcmd_metric_label l_external[] = {{"controller_name", NULL}};
static const struct kcmd_metric_label l_events[] = {{"event", m_events}};
static const struct kcmd_metric_label l_finished_ix[] = {{"status", m_fin_results},
                                                         {"backoffLimit", m_limits}};
/* group and resource of JOB_CONS_PODS / JOB_CONS_JOBS (only those two pairs are counted) */
static const char *const m_groups[] = {"", "batch", NULL};
static const char *const m_resources[] = {"pods", "jobs", NULL};
static const struct kcmd_metric_label l_stale[] = {{"group", m_groups}, {"resource", m_resources}};
/* ExponentialBuckets(0.004, 2, 15) */
static const double b_duration[] = {0.004, 0.008, 0.016, 0.032, 0.064,  0.128,  0.256, 0.512,
                                    1.024, 2.048, 4.096, 8.192, 16.384, 32.768, 65.536};

const struct kcmd_metric job_metric_decl[JOB_M_N] = {
        [JOB_M_SYNCS] = {.name = "job_controller_job_syncs_total",
                         .help = "The number of job syncs",
                         .type = KCMD_METRIC_COUNTER,
                         .stability = KCMD_METRIC_STABLE,
                         .labels = l_syncs,
                         .n_labels = 3},
        [JOB_M_FINISHED] = {.name = "job_controller_jobs_finished_total",
                            .help = "The number of finished jobs",
                            .type = KCMD_METRIC_COUNTER,
                            .stability = KCMD_METRIC_STABLE,
                            .labels = l_finished,
                            .n_labels = 3},
        [JOB_M_PODS_FINISHED] = {.name = "job_controller_job_pods_finished_total",
                                 .help = "The number of finished Pods that are fully tracked",
                                 .type = KCMD_METRIC_COUNTER,
                                 .stability = KCMD_METRIC_STABLE,
                                 .labels = l_pods_finished,
                                 .n_labels = 2},
        [JOB_M_PFP] = {.name = "job_controller_pod_failures_handled_by_failure_policy_total",
                       .help = "The number of failed Pods handled by failure policy with\n"
                               "\t\t\trespect to the failure policy action applied based on "
                               "the matched\n\t\t\trule. Possible values of the action label "
                               "correspond to the\n\t\t\tpossible values for the failure "
                               "policy rule action, which are:\n\t\t\t\"FailJob\", \"Ignore\" "
                               "and \"Count\".",
                       .type = KCMD_METRIC_COUNTER,
                       .stability = KCMD_METRIC_BETA,
                       .labels = l_pfp,
                       .n_labels = 1},
        [JOB_M_CREATIONS] = {.name = "job_controller_job_pods_creation_total",
                             .help = "The number of Pods created by the Job controller "
                                     "labelled with a reason for the Pod creation.\nThis metric "
                                     "also distinguishes between Pods created using different "
                                     "PodReplacementPolicy settings.\nPossible values of the "
                                     "\"reason\" label are:\n\"new\", "
                                     "\"recreate_terminating_or_failed\", \"recreate_failed\".\n"
                                     "Possible values of the \"status\" label "
                                     "are:\n\"succeeded\", \"failed\".",
                             .type = KCMD_METRIC_COUNTER,
                             .stability = KCMD_METRIC_ALPHA,
                             .labels = l_creations,
                             .n_labels = 2},
        [JOB_M_DURATION] = {.name = "job_controller_job_sync_duration_seconds",
                            .help = "The time it took to sync a job",
                            .type = KCMD_METRIC_HISTOGRAM,
                            .stability = KCMD_METRIC_STABLE,
                            .labels = l_syncs,
                            .n_labels = 3,
                            .buckets = b_duration,
                            .n_buckets = sizeof(b_duration) / sizeof(b_duration[0])},
        [JOB_M_EXTERNAL] = {.name = "job_controller_jobs_by_external_controller_total",
                            .help = "The number of Jobs managed by an external controller",
                            .type = KCMD_METRIC_COUNTER,
                            .stability = KCMD_METRIC_ALPHA,
                            .labels = l_external,
                            .n_labels = 1,
                            .max_series = 256},
        [JOB_M_TERMINATED_FIN] =
                {.name = "job_controller_terminated_pods_tracking_finalizer_total",
                 .help = "The number of terminated pods (phase=Failed|Succeeded)\n"
                         "that have the finalizer batch.kubernetes.io/job-tracking\n"
                         "The event label can be \"add\" or \"delete\".",
                 .type = KCMD_METRIC_COUNTER,
                 .stability = KCMD_METRIC_BETA,
                 .labels = l_events,
                 .n_labels = 1},
        [JOB_M_FINISHED_IX] = {.name = "job_controller_job_finished_indexes_total",
                               .help = "The number of finished indexes. Possible values for the\n"
                                       "\t\t\tstatus label are: \"succeeded\", \"failed\". "
                                       "Possible values for the\n\t\t\tbackoffLimit label "
                                       "are: \"perIndex\" and \"global\"",
                               .type = KCMD_METRIC_COUNTER,
                               .stability = KCMD_METRIC_ALPHA,
                               .labels = l_finished_ix,
                               .n_labels = 2},
        [JOB_M_STALE_SKIPS] = {.name = "job_controller_stale_sync_skips_total",
                               .help = "Total number of Job syncs skipped due to a stale watch "
                                       "cache.",
                               .type = KCMD_METRIC_COUNTER,
                               .stability = KCMD_METRIC_ALPHA,
                               .labels = l_stale,
                               .n_labels = 2},
};

void job_metrics_stale_skip(struct kcmd_metrics *m, unsigned r)
{
	unsigned k = r == JOB_CONS_JOBS;

	kcmd_metric_inc(m, JOB_M_STALE_SKIPS, (const char *[]){m_groups[k], m_resources[k]});
}

void job_metrics_sync(struct kcmd_metrics *m, bool indexed, bool error, enum job_m_action a)
{
	if (a < JOB_M_N_ACTIONS)
		kcmd_metric_inc(m, JOB_M_SYNCS,
		                (const char *[]){m_modes[indexed], m_results[error], m_actions[a]});
}

void job_metrics_finished(struct kcmd_metrics *m, bool indexed, enum job_m_reason r)
{
	bool ok = r == JOB_M_SUCCESS || r == JOB_M_SUCCESS_POLICY;

	if (r < JOB_M_N_REASONS)
		kcmd_metric_inc(
		        m, JOB_M_FINISHED,
		        (const char *[]){m_modes[indexed], m_fin_results[!ok], m_reasons[r]});
}

void job_metrics_duration(struct kcmd_metrics *m, bool indexed, bool error, enum job_m_action a,
                          double seconds)
{
	if (a < JOB_M_N_ACTIONS)
		kcmd_metric_observe(
		        m, JOB_M_DURATION,
		        (const char *[]){m_modes[indexed], m_results[error], m_actions[a]},
		        seconds);
}

void job_metrics_external(struct kcmd_metrics *m, const char *name)
{
	if (name)
		kcmd_metric_inc(m, JOB_M_EXTERNAL, (const char *[]){name});
}

void job_metrics_terminated_fin(struct kcmd_metrics *m, bool was, bool is)
{
	if (was != is)
		kcmd_metric_inc(m, JOB_M_TERMINATED_FIN, (const char *[]){m_events[!is]});
}

void job_metrics_finished_indexes(struct kcmd_metrics *m, bool failed, bool per_index, int64_t n)
{
	if (n > 0)
		kcmd_metric_add(m, JOB_M_FINISHED_IX,
		                (const char *[]){m_fin_results[failed], m_limits[!per_index]},
		                (uint64_t)n);
}

enum job_m_reason job_metrics_reason(const char *reason)
{
	for (int i = 0; reason && i < JOB_M_N_REASONS; i++)
		if (!strcmp(reason, m_reasons[i]))
			return (enum job_m_reason)i;
	return JOB_M_N_REASONS;
}

void job_metrics_pods_finished(struct kcmd_metrics *m, bool indexed, int64_t succeeded,
                               int64_t failed)
{
	if (succeeded > 0)
		kcmd_metric_add(m, JOB_M_PODS_FINISHED,
		                (const char *[]){m_modes[indexed], m_fin_results[0]},
		                (uint64_t)succeeded);
	if (failed > 0)
		kcmd_metric_add(m, JOB_M_PODS_FINISHED,
		                (const char *[]){m_modes[indexed], m_fin_results[1]},
		                (uint64_t)failed);
}

void job_metrics_pfp(struct kcmd_metrics *m, int action)
{
	if (action >= 0 && action < 4)
		kcmd_metric_inc(m, JOB_M_PFP, (const char *[]){m_pfp[action]});
}

void job_metrics_creations(struct kcmd_metrics *m, enum job_m_create reason, int64_t succeeded,
                           int64_t failed)
{
	if (reason >= JOB_M_N_CREATE)
		return;
	if (succeeded > 0)
		kcmd_metric_add(m, JOB_M_CREATIONS,
		                (const char *[]){m_creates[reason], "succeeded"},
		                (uint64_t)succeeded);
	if (failed > 0)
		kcmd_metric_add(m, JOB_M_CREATIONS, (const char *[]){m_creates[reason], "failed"},
		                (uint64_t)failed);
}

/* ---- consistency store (job.h) ---------------------------------------------------------------
 */
const char *job_cons_resource_name(unsigned r)
{
	return r == JOB_CONS_JOBS ? "jobs.batch" : "pods";
}

int job_consistency_ready(struct rs_exp *exp, const char *key,
                          const char *const read_rv[RS_EXP_CONS_RESOURCES], struct kcmd_metrics *m,
                          char *msg, size_t msglen)
{
	struct rs_cons_stale st;
	int r = rs_exp_ensure_ready(exp, key, read_rv, &st);

	if (r != 1)
		return r;
	job_metrics_stale_skip(m, st.resource);
	if (msg && msglen)
		snprintf(msg, msglen,
		         "read version: %s is not as new as written version: %s for group "
		         "resource %s",
		         st.read_rv, st.wrote_rv, job_cons_resource_name(st.resource));
	return 1;
}

/* ---- orphan pods (job.h) --------------------------------------------------------------------- */
bool job_orphan_confirmed(int get_err, const char *live_uid, const char *ctl_uid)
{
	if (get_err == -ENOENT)
		return true;
	if (get_err < 0)
		return false;
	if (!live_uid)
		return false; /* an answer without a uid confirms nothing */
	return !ctl_uid || strcmp(live_uid, ctl_uid) != 0;
}
