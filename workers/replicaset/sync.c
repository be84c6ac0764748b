/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/replicaset/sync.c: syncReplicaSet's decisions and the driver over the executor
 * (see sync.h). Each step names the upstream function it mirrors; docs/replicaset.md lists
 * the rules and their sources.
 *
 * The driver is sequential: a "batch" of creations or deletions is handed to the executor in
 * one call and the executor runs it concurrently (upstream: one goroutine per call, then
 * wg.Wait). Results come back in completion order, so "the first error" is the first to
 * complete, as with upstream's error channel.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "kube/encode.h"
#include "workers/replicaset/events.h"
#include "workers/replicaset/ranking.h"
#include "workers/replicaset/sync.h"

/* E7 in expectations-abi.h: nothing recorded, no API call made; retried with backoff */
#define EXP_FULL_MSG                                                                               \
	"unable to record expectations: the expectations table is full (every slot holds a "       \
	"ReplicaSet); kcmd_replicaset_expectations_capacity in /metrics"

/* ---- pure decisions ------------------------------------------------------------------------ */
static bool str_eq(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

enum rs_claim rs_claim_decide(const struct kube_replicaset *rs, const struct kube_selector *sel,
                              const struct kube_pod *pod)
{
	bool rs_deleting = rs->meta.deletion_timestamp != 0;
	bool match = kube_selector_matches(sel, pod->meta.labels, pod->meta.n_labels);
	const struct kube_owner_ref *ref = kube_controller_of(&pod->meta);
	if (ref) {
		if (!str_eq(ref->uid, rs->meta.uid))
			return RS_CLAIM_IGNORE; /* someone else's */
		if (match)
			return RS_CLAIM_OWNED;
		if (rs_deleting)
			return RS_CLAIM_IGNORE; /* no release while the owner goes away */
		return RS_CLAIM_RELEASE;
	}
	if (rs_deleting || !match || pod->meta.deletion_timestamp != 0)
		return RS_CLAIM_IGNORE;
	if (rs->meta.namespace && rs->meta.namespace[0] &&
	    !str_eq(rs->meta.namespace, pod->meta.namespace))
		return RS_CLAIM_IGNORE;
	return RS_CLAIM_ADOPT;
}

int32_t rs_manage_diff(size_t n_active, int32_t spec_replicas, int32_t burst)
{
	int64_t diff = (int64_t)n_active - spec_replicas;
	if (diff < -(int64_t)burst)
		diff = -(int64_t)burst;
	if (diff > burst)
		diff = burst;
	return (int32_t)diff;
}

int32_t rs_slow_start_next(int32_t prev, int32_t remaining)
{
	int32_t want = prev == 0 ? RS_SLOW_START_INITIAL_BATCH : 2 * prev;
	return want < remaining ? want : remaining;
}

bool rs_pod_is_available(const struct kube_pod *p, int32_t min_ready_seconds, kube_time_t now)
{
	if (!p->ready)
		return false;
	if (min_ready_seconds == 0)
		return true;
	return p->ready_transition_time != 0 &&
	       p->ready_transition_time + (int64_t)min_ready_seconds * 1000000000 < now;
}

static bool has_labels(const struct kube_kv *want, uint32_t n_want,
                       const struct kube_object_meta *m)
{
	for (uint32_t i = 0; i < n_want; i++) {
		const char *v = kube_labels_get(m->labels, m->n_labels, want[i].key);
		if (!v || !str_eq(v, want[i].value))
			return false;
	}
	return true;
}

static void cond_free(struct kube_condition *c)
{
	free((char *)c->type);
	free((char *)c->status);
	free((char *)c->reason);
	free((char *)c->message);
}

void rs_status_free(struct rs_status *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->n_conds; i++)
		cond_free(&st->conds[i]);
	free(st->conds);
	memset(st, 0, sizeof *st);
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int cond_copy(struct kube_condition *dst, const struct kube_condition *src)
{
	*dst = (struct kube_condition){
	        .type = dup_or_null(src->type),
	        .status = dup_or_null(src->status),
	        .reason = dup_or_null(src->reason),
	        .message = dup_or_null(src->message),
	        .last_transition_time = src->last_transition_time,
	};
	if ((src->type && !dst->type) || (src->status && !dst->status) ||
	    (src->reason && !dst->reason) || (src->message && !dst->message)) {
		cond_free(dst);
		return -ENOMEM;
	}
	return 0;
}

int rs_calculate_status(const struct kube_replicaset *rs, const struct kube_pod *const *active,
                        size_t n_active, size_t n_terminating, const struct rs_features *f,
                        const char *manage_err, kube_time_t now, struct rs_status *ret)
{
	struct rs_status st;
	memset(&st, 0, sizeof st);
	/* newStatus := rs.Status */
	st.s.replicas = rs->status.replicas;
	st.s.observed_generation = rs->status.observed_generation;
	st.conds = calloc(rs->status.n_conditions + 1, sizeof *st.conds);
	if (!st.conds)
		return -ENOMEM;
	bool have_failure = false;
	for (uint32_t i = 0; i < rs->status.n_conditions; i++)
		if (str_eq(rs->status.conditions[i].type, RS_CONDITION_REPLICA_FAILURE))
			have_failure = true;
	for (uint32_t i = 0; i < rs->status.n_conditions; i++) {
		const struct kube_condition *c = &rs->status.conditions[i];
		/* RemoveCondition when the manage error is gone (and SetCondition's filter when a
		 * new one is added: only reached when none existed) */
		if (!manage_err && str_eq(c->type, RS_CONDITION_REPLICA_FAILURE))
			continue;
		if (cond_copy(&st.conds[st.n_conds], c) < 0)
			goto oom;
		st.n_conds++;
	}
	if (manage_err && !have_failure) {
		int64_t diff = (int64_t)n_active - rs->spec_replicas;
		struct kube_condition c = {
		        .type = RS_CONDITION_REPLICA_FAILURE,
		        .status = "True",
		        .reason = diff < 0   ? "FailedCreate"
		                  : diff > 0 ? "FailedDelete"
		                             : "",
		        .message = manage_err,
		        .last_transition_time = now,
		};
		if (cond_copy(&st.conds[st.n_conds], &c) < 0)
			goto oom;
		st.n_conds++;
	}
	int32_t fully = 0, ready = 0, available = 0;
	for (size_t i = 0; i < n_active; i++) {
		const struct kube_pod *p = active[i];
		if (has_labels(rs->template_labels, rs->n_template_labels, &p->meta))
			fully++;
		if (p->ready) {
			ready++;
			if (rs_pod_is_available(p, rs->min_ready_seconds, now))
				available++;
		}
	}
	st.s.replicas = (int32_t)n_active;
	st.s.fully_labeled_replicas = fully;
	st.s.ready_replicas = ready;
	st.s.available_replicas = available;
	if (f->terminating_replicas && f->status_terminating) {
		st.s.has_terminating_replicas = true;
		st.s.terminating_replicas = (int32_t)n_terminating;
	}
	st.s.conditions = st.conds;
	st.s.n_conditions = st.n_conds;
	*ret = st;
	return 0;
oom:
	rs_status_free(&st);
	return -ENOMEM;
}

static bool cond_equal(const struct kube_condition *a, const struct kube_condition *b)
{
	return str_eq(a->type, b->type) && str_eq(a->status, b->status) &&
	       str_eq(a->reason, b->reason) && str_eq(a->message, b->message) &&
	       a->last_transition_time == b->last_transition_time;
}

bool rs_status_unchanged(const struct kube_replicaset *rs, const struct rs_status *st)
{
	const struct kube_rs_status *n = &st->s;
	if (rs->status.replicas != n->replicas ||
	    rs->status.fully_labeled_replicas != n->fully_labeled_replicas ||
	    rs->status.ready_replicas != n->ready_replicas ||
	    rs->status.available_replicas != n->available_replicas)
		return false;
	/* ptr.Equal: both nil, or both set to the same value */
	if (rs->status.has_terminating_replicas != n->has_terminating_replicas ||
	    (n->has_terminating_replicas &&
	     rs->status.terminating_replicas != n->terminating_replicas))
		return false;
	if (rs->meta.generation != rs->status.observed_generation)
		return false;
	if (rs->status.n_conditions != n->n_conditions)
		return false;
	for (size_t i = 0; i < n->n_conditions; i++)
		if (!cond_equal(&rs->status.conditions[i], &n->conditions[i]))
			return false;
	return true;
}

bool rs_next_availability_check(const struct kube_pod *const *active, size_t n,
                                int32_t min_ready_seconds, kube_time_t now, kube_time_t clock_now,
                                int64_t *ret_ns)
{
	if (min_ready_seconds <= 0)
		return false;
	int64_t mrs = (int64_t)min_ready_seconds * 1000000000;
	bool found = false;
	kube_time_t best = 0;
	for (size_t i = 0; i < n; i++) {
		const struct kube_pod *p = active[i];
		if (!p->ready || p->ready_transition_time == 0)
			continue;
		kube_time_t at = p->ready_transition_time + mrs;
		if (at - now <= 0)
			continue;          /* available already */
		if (!found || at < best) { /* the first wins ties */
			best = at;
			found = true;
		}
	}
	if (!found)
		return false;
	int64_t d = best - clock_now;
	*ret_ns = d > 0 ? d : 0;
	return true;
}

/* ---- the driver ---------------------------------------------------------------------------- */
static kube_time_t wall(const struct rs_sync_input *in)
{
	return in->clock ? in->clock(in->clock_ud) : kube_time_now();
}

static int64_t mono(const struct rs_sync_input *in)
{
	return in->mono ? in->mono(in->clock_ud) : rs_exp_now();
}

void rs_sync_result_free(struct rs_sync_result *r)
{
	if (!r)
		return;
	free(r->err_msg);
	r->err_msg = NULL;
}

static void call_result_free(struct rs_call_result *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(r[i].msg);
		free(r[i].name);
		free(r[i].rv);
		r[i].msg = r[i].name = r[i].rv = NULL;
	}
}

static const char *errtext(int err, const char *msg)
{
	return msg && msg[0] ? msg : strerror(-err);
}

static int fail(struct rs_sync_result *res, int err, char *msg)
{
	res->err = err < 0 ? err : -EIO;
	free(res->err_msg);
	res->err_msg = msg ? msg : strdup(strerror(-res->err));
	return res->err;
}

static struct kube_owner_ref controller_ref(const struct rs_sync_input *in,
                                            const struct kube_replicaset *rs)
{
	return (struct kube_owner_ref){
	        .api_version = in->api_version ? in->api_version : RS_API_VERSION,
	        .kind = in->kind ? in->kind : RS_KIND,
	        .name = rs->meta.name,
	        .uid = rs->meta.uid,
	        .controller = 1,
	        .block_owner_deletion = 1,
	};
}

/* consistencyStore.WroteAt for this RS (gate on, an RV reported). */
static void wrote(const struct rs_sync_input *in, enum rs_cons_resource r, const char *rv)
{
	if (in->features.stale_consistency && rv && rv[0] && in->rs)
		(void)rs_exp_wrote_at(in->exp, in->key, in->rs->meta.uid ? in->rs->meta.uid : "", r,
		                      rv);
}

static int patch_pod(const struct rs_sync_input *in, const struct rs_executor *ex,
                     const struct kube_pod *p, const char *body, bool record, char **msg)
{
	if (!ex->patch_pod_rv)
		return ex->patch_pod(ex->ud, p, body, msg);
	char *rv = NULL;
	int r = ex->patch_pod_rv(ex->ud, p, body, &rv, msg);
	if (r >= 0 && record)
		wrote(in, RS_CONS_PODS, rv);
	free(rv);
	return r;
}

static void event(const struct rs_executor *ex, const struct kube_replicaset *rs, const char *type,
                  const char *reason, char *msg)
{
	if (msg && ex->record_event)
		ex->record_event(ex->ud, rs, type, reason, msg);
	free(msg);
}

struct claim_state {
	int adopt_checked; /* 0 not yet, 1 ok, -1 failed */
	char *adopt_err;   /* memoised CanAdopt error */
	char **errs;
	size_t n_errs;
};

static int add_err(struct claim_state *cs, char *msg)
{
	if (!msg)
		return -ENOMEM;
	char **n = realloc(cs->errs, (cs->n_errs + 1) * sizeof *n);
	if (!n) {
		free(msg);
		return -ENOMEM;
	}
	cs->errs = n;
	cs->errs[cs->n_errs++] = msg;
	return 0;
}

/* RecheckDeletionTimestamp wrapped in CanAdopt's sync.Once. */
static void can_adopt(const struct rs_sync_input *in, const struct rs_executor *ex,
                      const struct kube_replicaset *rs, struct claim_state *cs)
{
	if (cs->adopt_checked)
		return;
	struct kube_replicaset *fresh = NULL;
	char *msg = NULL;
	int r = ex->get_rs(ex->ud, rs, &fresh, &msg);
	char *inner = NULL;
	if (r >= 0 && !fresh)
		r = -EIO;
	if (r < 0) {
		inner = strdup(errtext(r, msg));
	} else if (!str_eq(fresh->meta.uid, rs->meta.uid)) {
		inner = rs_err_original_gone(in->kind ? in->kind : RS_KIND, rs->meta.namespace,
		                             rs->meta.name, fresh->meta.uid, rs->meta.uid);
	}
	free(msg);
	if (inner) {
		cs->adopt_err = rs_err_recheck(inner);
		free(inner);
	} else if (fresh->meta.deletion_timestamp) {
		cs->adopt_err = rs_err_just_deleted(fresh->meta.namespace, fresh->meta.name,
		                                    fresh->meta.deletion_timestamp);
	}
	kube_object_free(fresh);
	cs->adopt_checked = cs->adopt_err ? -1 : 1;
}

/* ClaimPods: fills claimed[] (pointers into in->pods) and returns its length, or -errno with
 * cs->errs holding the aggregated errors. */
static int claim_pods(const struct rs_sync_input *in, const struct rs_executor *ex,
                      const struct kube_selector *sel, const struct kube_pod **active,
                      size_t n_active, const struct kube_pod **claimed, struct rs_sync_result *res,
                      struct claim_state *cs)
{
	const struct kube_replicaset *rs = in->rs;
	struct kube_owner_ref owner = controller_ref(in, rs);
	size_t n = 0;
	for (size_t i = 0; i < n_active; i++) {
		const struct kube_pod *p = active[i];
		enum rs_claim d = rs_claim_decide(rs, sel, p);
		if (d == RS_CLAIM_OWNED) {
			claimed[n++] = p;
		} else if (d == RS_CLAIM_RELEASE) {
			char *body = NULL, *msg = NULL;
			const char *uid = rs->meta.uid;
			int r = kube_encode_release_patch(p->meta.uid, &uid, 1, &body);
			if (r >= 0) /* a released pod has no controller: nothing recorded */
				r = patch_pod(in, ex, p, body, false, &msg);
			free(body);
			/* 404 (pod gone) and 422 (recreated, or no refs left) are fine */
			if (r < 0 && r != -ENOENT && r != -EINVAL) {
				if (add_err(cs, strdup(errtext(r, msg))) < 0) {
					free(msg);
					return -ENOMEM;
				}
			} else if (r >= 0) {
				res->released++;
			}
			free(msg);
		} else if (d == RS_CLAIM_ADOPT) {
			can_adopt(in, ex, rs, cs);
			if (cs->adopt_checked < 0) {
				if (add_err(cs, rs_err_cant_adopt(p->meta.namespace, p->meta.name,
				                                  p->meta.uid, cs->adopt_err)) < 0)
					return -ENOMEM;
				continue;
			}
			char *body = NULL, *msg = NULL;
			int r = kube_encode_adopt_patch(&owner, p->meta.uid, &body);
			if (r >= 0)
				r = patch_pod(in, ex, p, body, true, &msg);
			free(body);
			if (r >= 0) {
				claimed[n++] = p;
				res->adopted++;
			} else if (r != -ENOENT) {
				if (add_err(cs, strdup(errtext(r, msg))) < 0) {
					free(msg);
					return -ENOMEM;
				}
			}
			free(msg);
		}
	}
	return cs->n_errs ? -EIO : (int)n;
}

static void claim_state_free(struct claim_state *cs)
{
	for (size_t i = 0; i < cs->n_errs; i++)
		free(cs->errs[i]);
	free(cs->errs);
	free(cs->adopt_err);
}

/* reportSortingDeletionAgeRatioMetric: for each Ready victim, its age over the age of the
 * youngest Ready pod, both in whole milliseconds divided as integers (upstream divides two
 * int64 millisecond counts before converting). A zero divisor (the youngest pod is less than
 * 1 ms old) is skipped: upstream's integer division would panic there. */
static void report_age_ratio(const struct rs_sync_input *in, const struct kube_pod *const *sorted,
                             size_t n_all, size_t n_victims, kube_time_t now)
{
	kube_time_t youngest = 0;
	bool any = false;
	for (size_t i = 0; i < n_all; i++)
		if (sorted[i]->ready && (!any || sorted[i]->meta.creation_timestamp > youngest)) {
			youngest = sorted[i]->meta.creation_timestamp;
			any = true;
		}
	if (!any)
		return;
	int64_t young_ms = (now - youngest) / 1000000;
	for (size_t i = 0; i < n_victims; i++) {
		if (!sorted[i]->ready)
			continue;
		int64_t age_ms = (now - sorted[i]->meta.creation_timestamp) / 1000000;
		if (young_ms == 0)
			continue;
		rs_exp_metric_age_ratio(in->exp, (double)(age_ms / young_ms));
	}
}

/* A create that failed this way may have been carried out: the connection died after the
 * request went out, or the apiserver timed out waiting for storage (504). */
static bool outcome_unknown(int err)
{
	return err == -ECONNRESET || err == -ETIMEDOUT;
}

/* After a create whose outcome is unknown, its expectation is lowered as upstream's, so the
 * next sync would create the pod again if the informer has not delivered it yet (upstream's
 * window; a reset connection takes the informer's watch down too). kcmd closes it with the
 * consistency record: an uncached LIST finds the newest pod this ReplicaSet controls, and the
 * next sync waits until the pod informer is at least that new (rs_exp_ensure_ready), so a pod
 * the failed request did create is counted before anything is created again. The LIST failing
 * leaves upstream's behaviour. */
static void pin_unknown_creates(const struct rs_sync_input *in, const struct rs_executor *ex)
{
	char *rv = NULL, *msg = NULL;
	if (!in->features.stale_consistency || !ex->controlled_pods_rv)
		return;
	if (ex->controlled_pods_rv(ex->ud, in->rs, &rv, &msg) == 0 && rv)
		wrote(in, RS_CONS_PODS, rv);
	free(rv);
	free(msg);
}

/* manageReplicas. Returns 0 or the error, with its text in *ret_msg. */
static int manage_replicas(const struct rs_sync_input *in, const struct rs_executor *ex,
                           const struct kube_pod **active, size_t n_active,
                           struct rs_sync_result *res, char **ret_msg)
{
	const struct kube_replicaset *rs = in->rs;
	int32_t diff = rs_manage_diff(n_active, rs->spec_replicas, RS_BURST_REPLICAS);
	*ret_msg = NULL;
	if (diff == 0)
		return 0;
	res->managed = true;
	if (diff < 0) {
		int32_t n = -diff;
		int r = rs_exp_expect_creations(in->exp, in->key, n, mono(in));
		if (r < 0) {
			*ret_msg = strdup(r == -ENOSPC ? EXP_FULL_MSG
			                               : "unable to record expectations");
			return r;
		}
		struct kube_owner_ref owner = controller_ref(in, rs);
		char *body = NULL;
		/* from the template's parts when the record has them (stored parsed: nothing is
		 * parsed here), else from the template's JSON */
		int enc = rs->template_parts.valid
		                  ? kube_encode_pod_from_template_parts(
		                            &rs->template_parts, rs->meta.name, &owner, &body)
		                  : kube_encode_pod_from_template(rs->template_json,
		                                                  rs->template_json_len,
		                                                  rs->meta.name, &owner, &body);
		int32_t successes = 0, batch = 0, remaining = n;
		bool unknown = false;
		int err = 0;
		char *err_msg = NULL;
		struct rs_call_result *results = calloc(n, sizeof *results);
		if (!results) {
			free(body);
			rs_exp_lower_creations(in->exp, in->key, n);
			rs_exp_settle(in->exp, in->key);
			*ret_msg = strdup(strerror(ENOMEM));
			return -ENOMEM;
		}
		while ((batch = rs_slow_start_next(batch, remaining)) > 0) {
			int32_t failed = 0;
			if (enc < 0) {
				/* GetPodFromTemplate / the labels check fail before any API call */
				err = enc;
				err_msg =
				        strdup(enc == -EINVAL ? RS_ERR_NO_LABELS : strerror(-enc));
				break;
			}
			ex->create_pods(ex->ud, rs, body, (size_t)batch, results);
			for (int32_t i = 0; i < batch; i++) {
				struct rs_call_result *cr = &results[i];
				if (cr->err == 0) {
					successes++;
					res->created++;
					wrote(in, RS_CONS_PODS, cr->rv);
					event(ex, rs, RS_EVENT_NORMAL, RS_REASON_SUCCESSFUL_CREATE,
					      rs_msg_created(cr->name));
				} else if (cr->namespace_terminating) {
					successes++; /* nothing to do: every create would fail */
				} else {
					failed++;
					res->create_failed++;
					unknown |= outcome_unknown(cr->err);
					event(ex, rs, RS_EVENT_WARNING, RS_REASON_FAILED_CREATE,
					      rs_msg_create_failed(errtext(cr->err, cr->msg)));
					if (!err) {
						err = cr->err;
						err_msg = strdup(errtext(cr->err, cr->msg));
					}
				}
			}
			call_result_free(results, (size_t)batch);
			if (failed)
				break;
			remaining -= batch;
		}
		free(results);
		free(body);
		int32_t skipped = n - successes;
		if (skipped > 0) {
			res->skipped = skipped;
			rs_exp_lower_creations(in->exp, in->key, skipped);
		}
		if (unknown)
			pin_unknown_creates(in, ex);
		rs_exp_settle(in->exp, in->key);
		*ret_msg = err_msg;
		return err;
	}
	/* scale down */
	int32_t n = diff;
	const struct kube_pod **victims = malloc(n_active * sizeof *victims);
	const char **keys = calloc((size_t)n, sizeof *keys);
	struct rs_call_result *results = calloc((size_t)n, sizeof *results);
	int32_t *done_order = NULL;
	int err = 0;
	char *err_msg = NULL;
	if (!victims || !keys || !results) {
		err = -ENOMEM;
		goto out;
	}
	memcpy(victims, active, n_active * sizeof *victims);
	/* getIndirectlyRelatedPods: only an RS with a controller has related pods */
	bool has_ctrl = kube_controller_of(&rs->meta) != NULL;
	struct rs_rank_opts ro = {.now = wall(in),
	                          .pod_deletion_cost = in->features.pod_deletion_cost};
	int r = rs_pods_to_delete(victims, n_active, has_ctrl ? in->related : NULL,
	                          has_ctrl ? in->n_related : 0, (size_t)n, &ro);
	if (r < 0) {
		err = r;
		goto out;
	}
	if ((size_t)n < n_active)
		report_age_ratio(in, victims, n_active, (size_t)n, ro.now);
	for (int32_t i = 0; i < n; i++) {
		char *k;
		if (asprintf(&k, "%s/%s",
		             victims[i]->meta.namespace ? victims[i]->meta.namespace : "",
		             victims[i]->meta.name ? victims[i]->meta.name : "") < 0) {
			err = -ENOMEM;
			goto out;
		}
		keys[i] = k;
	}
	r = rs_exp_expect_deletions(in->exp, in->key, keys, (size_t)n, mono(in));
	if (r < 0) {
		err = r;
		err_msg = strdup(r == -ENOSPC ? EXP_FULL_MSG : "unable to record expectations");
		goto out;
	}
	ex->delete_pods(ex->ud, rs, victims, (size_t)n, results);
	/* completion order (stable insertion sort by done_rank; n <= 500) */
	done_order = malloc((size_t)n * sizeof *done_order); /* NULL: pod order */
	for (int32_t k = 0; done_order && k < n; k++) {
		int32_t j = k;
		while (j > 0 && results[done_order[j - 1]].done_rank > results[k].done_rank) {
			done_order[j] = done_order[j - 1];
			j--;
		}
		done_order[j] = k;
	}
	for (int32_t k = 0; k < n; k++) {
		int32_t i = done_order ? done_order[k] : k;
		struct rs_call_result *cr = &results[i];
		if (cr->err == 0) {
			res->deleted++;
			event(ex, rs, RS_EVENT_NORMAL, RS_REASON_SUCCESSFUL_DELETE,
			      rs_msg_deleted(victims[i]->meta.name));
			continue;
		}
		/* the informer will not see this deletion */
		rs_exp_deletion_failed(in->exp, in->key, keys[i]);
		if (cr->err == -ENOENT)
			continue; /* already gone: no event, no error */
		res->delete_failed++;
		event(ex, rs, RS_EVENT_WARNING, RS_REASON_FAILED_DELETE,
		      rs_msg_delete_failed(errtext(cr->err, cr->msg)));
		if (!err) {
			err = cr->err;
			err_msg = rs_err_unable_to_delete(errtext(cr->err, cr->msg));
		}
	}
	call_result_free(results, (size_t)n);
	rs_exp_settle(in->exp, in->key);
out:
	if (keys)
		for (int32_t i = 0; i < n; i++)
			free((char *)keys[i]);
	free(keys);
	free(victims);
	free(results);
	free(done_order);
	if (err && !err_msg)
		err_msg = strdup(strerror(-err));
	*ret_msg = err_msg;
	return err;
}

/* updateReplicaSetStatus: no-op test, then PUT with one GET-and-retry. *ret_updated points at
 * the object whose spec the caller uses afterwards (rs or the refreshed copy in *fresh). */
static int update_status(const struct rs_sync_input *in, const struct rs_executor *ex,
                         struct rs_status *st, struct rs_sync_result *res,
                         const struct kube_replicaset **ret_updated, struct kube_replicaset **fresh,
                         char **ret_msg)
{
	const struct kube_replicaset *cur = in->rs;
	*ret_updated = cur;
	if (rs_status_unchanged(cur, st)) {
		/* upstream records the (cached) object's version after a no-op update too */
		wrote(in, RS_CONS_REPLICASETS, cur->meta.resource_version);
		return 0;
	}
	/* the generation of the copy the sync started with, also after a refresh */
	st->s.observed_generation = in->rs->meta.generation;
	for (int i = 0;; i++) {
		char *msg = NULL, *rv = NULL;
		res->status_puts++;
		int r = ex->update_status_rv ? ex->update_status_rv(ex->ud, cur, &st->s, &rv, &msg)
		                             : ex->update_status(ex->ud, cur, &st->s, &msg);
		if (r >= 0) {
			free(msg);
			res->status_written = true;
			*ret_updated = cur;
			wrote(in, RS_CONS_REPLICASETS, rv);
			free(rv);
			return 0;
		}
		free(rv);
		if (i >= RS_STATUS_UPDATE_RETRIES) {
			*ret_msg = strdup(errtext(r, msg));
			free(msg);
			return r;
		}
		free(msg);
		msg = NULL;
		struct kube_replicaset *f = NULL;
		r = ex->get_rs(ex->ud, cur, &f, &msg);
		if (r >= 0 && !f)
			r = -EIO;
		if (r < 0) {
			*ret_msg = strdup(errtext(r, msg));
			free(msg);
			return r;
		}
		free(msg);
		kube_object_free(*fresh);
		*fresh = f;
		cur = f;
	}
}

int rs_sync(const struct rs_sync_input *in, const struct rs_executor *ex,
            struct rs_sync_result *res)
{
	memset(res, 0, sizeof *res);
	if (!in || !in->key || !in->exp || !ex)
		return fail(res, -EINVAL, NULL);
	if (in->features.stale_consistency) {
		/* consistencyStore.EnsureReady: our own writes must be visible in the cache first
		 */
		struct rs_cons_stale stale;
		if (rs_exp_ensure_ready(in->exp, in->key, in->read_rv, &stale) == 1) {
			char *msg = NULL;
			res->stale_skip = true;
			res->stale_resource = stale.resource;
			rs_exp_metric_stale_skip(in->exp, stale.resource);
			if (asprintf(&msg,
			             "read version: %s is not as new as written version: %s for "
			             "group resource %s",
			             stale.read_rv, stale.wrote_rv,
			             rs_cons_resource_name(stale.resource)) < 0)
				msg = NULL;
			return fail(res, -EAGAIN, msg);
		}
	}
	const struct kube_replicaset *rs = in->rs;
	if (!rs) {
		/* deleted: Clear + DeleteExpectations (one slot holds both), success */
		res->rs_gone = true;
		rs_exp_delete(in->exp, in->key);
		return 0;
	}
	struct rs_exp_state es;
	res->needs_sync = rs_exp_satisfied(in->exp, in->key, mono(in), &es);
	res->exp_verdict = es.verdict;
	struct kube_selector *sel = NULL;
	if (kube_selector_from_label_selector(rs->selector, &sel, NULL, 0) < 0) {
		res->invalid_selector = true; /* logged by the caller; no status update */
		return 0;
	}
	const struct kube_pod **active = malloc((in->n_pods + 1) * sizeof *active);
	const struct kube_pod **claimed = malloc((in->n_pods + 1) * sizeof *claimed);
	struct claim_state cs = {0};
	struct rs_status st = {0};
	struct kube_replicaset *fresh = NULL;
	char *manage_msg = NULL;
	int manage_err = 0;
	if (!active || !claimed) {
		fail(res, -ENOMEM, NULL);
		goto out;
	}
	size_t n_active = 0, n_terminating = 0;
	for (size_t i = 0; i < in->n_pods; i++)
		if (rs_pod_is_active(in->pods[i]))
			active[n_active++] = in->pods[i];
	int n_claimed = claim_pods(in, ex, sel, active, n_active, claimed, res, &cs);
	if (n_claimed < 0) {
		fail(res, n_claimed,
		     n_claimed == -ENOMEM
		             ? NULL
		             : rs_aggregate_errors((const char *const *)cs.errs, cs.n_errs));
		goto out;
	}
	if (in->features.terminating_replicas && in->features.status_terminating) {
		/* FilterTerminatingPods + FilterClaimedPods: controlled by us and matching */
		for (size_t i = 0; i < in->n_pods; i++) {
			const struct kube_pod *p = in->pods[i];
			const struct kube_owner_ref *ref = kube_controller_of(&p->meta);
			if (rs_pod_is_terminating(p) && ref && str_eq(ref->uid, rs->meta.uid) &&
			    kube_selector_matches(sel, p->meta.labels, p->meta.n_labels))
				n_terminating++;
		}
	}
	if (res->needs_sync && rs->meta.deletion_timestamp == 0)
		manage_err = manage_replicas(in, ex, claimed, (size_t)n_claimed, res, &manage_msg);
	kube_time_t now = wall(in);
	if (rs_calculate_status(rs, claimed, (size_t)n_claimed, n_terminating, &in->features,
	                        manage_err ? (manage_msg ? manage_msg : strerror(-manage_err))
	                                   : NULL,
	                        now, &st) < 0) {
		fail(res, -ENOMEM, NULL);
		goto out;
	}
	const struct kube_replicaset *updated = rs;
	char *upd_msg = NULL;
	int r = update_status(in, ex, &st, res, &updated, &fresh, &upd_msg);
	if (r < 0) {
		fail(res, r, upd_msg);
		goto out;
	}
	if (manage_err) {
		fail(res, manage_err, manage_msg);
		manage_msg = NULL;
		goto out;
	}
	if (updated->min_ready_seconds > 0 && st.s.ready_replicas != st.s.available_replicas) {
		int64_t d = (int64_t)updated->min_ready_seconds * 1000000000;
		int64_t next;
		if (rs_next_availability_check(claimed, (size_t)n_claimed,
		                               updated->min_ready_seconds, now, wall(in), &next))
			d = next;
		res->requeue = true;
		res->requeue_after_ns = d;
	}
	if (!res->needs_sync && es.verdict == RS_EXP_PENDING && es.orphaned) {
		/* kcmd: wake up when the crash rule expires the record (no event will) */
		if (!res->requeue || es.recheck_after_ns < res->requeue_after_ns) {
			res->requeue = true;
			res->requeue_after_ns = es.recheck_after_ns;
		}
	}
out:
	free(manage_msg);
	claim_state_free(&cs);
	rs_status_free(&st);
	kube_object_free(fresh);
	kube_selector_free(sel);
	free(active);
	free(claimed);
	return res->err;
}

/* ---- the status PUT's body (rs_status_put_json) ------------------------------------------ */
static void add_time(cJSON *o, const char *key, kube_time_t t)
{
	char buf[KUBE_TIME_BUF];
	if (t && kube_time_format(t, buf) >= 0)
		cJSON_AddStringToObject(o, key, buf);
}

static void add_kv(cJSON *o, const char *key, const struct kube_kv *kv, uint32_t n)
{
	if (!n)
		return;
	cJSON *m = cJSON_AddObjectToObject(o, key);
	for (uint32_t i = 0; m && i < n; i++)
		cJSON_AddStringToObject(m, kv[i].key ? kv[i].key : "",
		                        kv[i].value ? kv[i].value : "");
}

static void add_str(cJSON *o, const char *key, const char *v)
{
	if (v && *v)
		cJSON_AddStringToObject(o, key, v);
}

char *rs_status_put_json(const char *api_version, const char *kind,
                         const struct kube_replicaset *rs, const struct kube_rs_status *st)
{
	char *status = NULL, *out = NULL;
	cJSON *o = NULL, *md, *s = NULL;

	if (!api_version || !kind || !rs || !st)
		return NULL;
	const struct kube_object_meta *m = &rs->meta;
	if (!(o = cJSON_CreateObject()) || !(md = cJSON_AddObjectToObject(o, "metadata")))
		goto out;
	cJSON_AddStringToObject(o, "apiVersion", api_version);
	cJSON_AddStringToObject(o, "kind", kind);
	add_str(md, "name", m->name);
	add_str(md, "generateName", m->generate_name);
	add_str(md, "namespace", m->namespace);
	add_str(md, "uid", m->uid);
	add_str(md, "resourceVersion", m->resource_version);
	if (m->generation)
		cJSON_AddNumberToObject(md, "generation", (double)m->generation);
	add_time(md, "creationTimestamp", m->creation_timestamp);
	add_time(md, "deletionTimestamp", m->deletion_timestamp);
	if (m->has_deletion_grace_period_seconds)
		cJSON_AddNumberToObject(md, "deletionGracePeriodSeconds",
		                        (double)m->deletion_grace_period_seconds);
	add_kv(md, "labels", m->labels, m->n_labels);
	add_kv(md, "annotations", m->annotations, m->n_annotations);
	if (m->n_owner_refs) {
		cJSON *refs = cJSON_AddArrayToObject(md, "ownerReferences");
		for (uint32_t i = 0; refs && i < m->n_owner_refs; i++) {
			const struct kube_owner_ref *r = &m->owner_refs[i];
			cJSON *x = cJSON_CreateObject();
			if (!x || !cJSON_AddItemToArray(refs, x))
				goto out;
			cJSON_AddStringToObject(x, "apiVersion",
			                        r->api_version ? r->api_version : "");
			cJSON_AddStringToObject(x, "kind", r->kind ? r->kind : "");
			cJSON_AddStringToObject(x, "name", r->name ? r->name : "");
			cJSON_AddStringToObject(x, "uid", r->uid ? r->uid : "");
			if (r->controller >= 0) /* -1: absent (nil), kept apart from false */
				cJSON_AddBoolToObject(x, "controller", r->controller);
			if (r->block_owner_deletion >= 0)
				cJSON_AddBoolToObject(x, "blockOwnerDeletion",
				                      r->block_owner_deletion);
		}
	}
	if (m->n_finalizers) {
		cJSON *f = cJSON_AddArrayToObject(md, "finalizers");
		for (uint32_t i = 0; f && i < m->n_finalizers; i++)
			cJSON_AddItemToArray(f, cJSON_CreateString(m->finalizers[i]));
	}
	if (kube_encode_rs_status_json(st, &status) < 0 || !(s = cJSON_Parse(status)))
		goto out;
	/* a ReplicationController's status has no terminatingReplicas */
	if (strcmp(kind, "ReplicaSet") != 0)
		cJSON_DeleteItemFromObjectCaseSensitive(s, "terminatingReplicas");
	cJSON_AddItemToObject(o, "status", s);
	out = cJSON_PrintUnformatted(o);
out:
	free(status);
	cJSON_Delete(o);
	return out;
}
