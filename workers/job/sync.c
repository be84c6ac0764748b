/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/job/sync.c: the Job controller's sync (upstream pkg/controller/job syncJob), run by
 * `kcmd-worker --controller=job-controller` processes (--concurrent-job-syncs of them), one key
 * at a time. See docs/job.md.
 *
 * Design note.
 *   The Job is read from the arena as a full-object record (KCMD_CACHE_OBJECT) and parsed with
 *   cJSON; its status is edited in that tree and written back with PUT .../status carrying the
 *   cached resourceVersion, as upstream's UpdateStatus does, so a stale cache answers Conflict
 *   (retried with backoff) instead of double counting. The Job's pods are the arena's typed pod
 *   records whose controller reference is the Job's uid (shm_reader_list_controlled).
 *   Pod creations and deletions are covered by expectations in shared memory (the ReplicaSet
 *   controller's module, a region of the Job controller's own: observations come from its
 *   dispatcher's handlers, a crashed worker's claims are reclaimed by the manager). Finalizer
 *   removals have expectations too (a second region): a sync that counted pods waits, before
 *   the next one of the key proceeds, until the dispatcher saw each of them without the
 *   finalizer, so a stale pod record cannot be counted again after the Job's status moved it
 *   out of uncountedTerminatedPods (upstream skips those uids instead of waiting). The
 *   resourceVersion of the status write keeps a stale Job from counting anything twice.
 *   Requests of one step (a slow-start batch of creations, the deletions, the finalizer
 *   removals) go out together (kube_client_request_many), as upstream's goroutines do.
 *   The pods are claimed by the Job's selector (ClaimPods: adoption, release) over a walk of
 *   the namespace's pod records. backoffLimitPerIndex reads the index failure count annotations
 *   of failed pods with the finalizer with the same LIST by name as the podFailurePolicy.
 *   StaleControllerConsistencyJob: the resourceVersions of the controller's own writes (pods
 *   created or patched, status updates) are recorded per Job key in the expectations region
 *   (the ReplicaSet controller's consistency store), and a sync whose cache has not seen them
 *   yet is skipped and retried. Orphan finalizers (the Job missing from the cache, or another
 *   uid there) are removed only after a live GET confirms the pods' Job is gone: a stale cache
 *   must not strip the finalizer of a pod its existing Job has not counted yet.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcmd/cache.h"
#include "kcmd/client.h"
#include "kcmd/controller.h"
#include "kcmd/handlers.h"
#include "kube/client.h"
#include "lib/features.h"
#include "lib/log.h"
#include "shm/arena.h"
#include "shm/record-model.h"
#include "workers/job/job.h"
#include "lib/childenv.h"
#include "workers/replicaset/expectations.h"
#include "workers/worker.h"

#define JOB_MANAGER "kubernetes.io/job-controller"

struct jc {
	struct wk_ctx *ctx;
	struct rs_exp *exp, *fin; /* pod creations/deletions; finalizer removals */
	struct kcmd_metrics *met; /* NULL when the region was not passed */
	int pod_type, job_type;
	uint64_t backoff_us, backoff_max_us;
	/* StaleControllerConsistencyJob (and AtomicFIFO, its prerequisite upstream) */
	bool stale_consistency;
	/* test seams (e2e TestJob_StaleCacheKeepsFinalizers): in namespace cache_miss_ns the
	 * worker reads every Job as missing from the cache (a stale cache); in unconfirmed_ns too,
	 * and there it also skips the live GET before removing orphan finalizers (the behaviour
	 * before it, the test's negative control). NULL: off. */
	const char *cache_miss_ns, *unconfirmed_ns;
};

static bool seam_ns(const char *seam, const char *ns)
{
	return seam && !strcmp(seam, ns);
}

/* ---- cJSON helpers -------------------------------------------------------------------------- */
static cJSON *obj_at(cJSON *o, const char *a, const char *b)
{
	o = cJSON_GetObjectItemCaseSensitive(o, a);
	return b ? cJSON_GetObjectItemCaseSensitive(o, b) : o;
}

static const char *str_at(cJSON *o, const char *a, const char *b)
{
	cJSON *x = obj_at(o, a, b);
	return cJSON_IsString(x) ? x->valuestring : NULL;
}

static bool int_at(cJSON *o, const char *a, const char *b, int64_t *ret)
{
	cJSON *x = obj_at(o, a, b);
	if (!cJSON_IsNumber(x))
		return false;
	*ret = (int64_t)x->valuedouble;
	return true;
}

static cJSON *ensure_obj(cJSON *parent, const char *name)
{
	cJSON *x = cJSON_GetObjectItemCaseSensitive(parent, name);

	if (cJSON_IsObject(x))
		return x;
	cJSON_DeleteItemFromObjectCaseSensitive(parent, name);
	return cJSON_AddObjectToObject(parent, name);
}

static void set_num(cJSON *o, const char *name, double v)
{
	cJSON *x = cJSON_CreateNumber(v);

	if (x && !cJSON_ReplaceItemInObjectCaseSensitive(o, name, x))
		cJSON_AddItemToObject(o, name, x);
}

static void set_str(cJSON *o, const char *name, const char *v)
{
	cJSON *x = cJSON_CreateString(v);

	if (x && !cJSON_ReplaceItemInObjectCaseSensitive(o, name, x))
		cJSON_AddItemToObject(o, name, x);
}

static void time_str(kube_time_t t, char buf[static KUBE_TIME_BUF])
{
	kube_time_format(t, buf);
}

/* ---- the Job being synced ------------------------------------------------------------------- */
struct uidset {
	char **v;
	size_t n;
};

static bool uid_in(const struct uidset *s, const char *uid)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], uid))
			return true;
	return false;
}

static void uidset_free(struct uidset *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	*s = (struct uidset){0};
}

static int uidset_of(cJSON *arr, struct uidset *ret)
{
	int n = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : 0;

	*ret = (struct uidset){0};
	if (n <= 0)
		return 0;
	ret->v = calloc((size_t)n, sizeof(char *));
	if (!ret->v)
		return -ENOMEM;
	for (cJSON *x = arr->child; x; x = x->next)
		if (cJSON_IsString(x) && !(ret->v[ret->n++] = strdup(x->valuestring)))
			return -ENOMEM;
	return 0;
}

struct cond {
	const char *type, *status, *reason, *message;
};

struct sj {
	struct jc *c;
	const char *key;
	char ns[254], name[254], uid[64];
	cJSON *job; /* the whole object; status edited in place */
	cJSON *status;
	bool indexed, has_completions, suspend, deleting, only_replace_failed;
	int64_t completions, parallelism, backoff_limit, ads;
	bool has_ads;
	const char *restart_policy;
	cJSON *pfp; /* spec.podFailurePolicy, or NULL */
	cJSON *sel; /* spec.selector */
	bool can_adopt_checked;
	int can_adopt_err;
	bool per_index, has_mfi; /* spec.backoffLimitPerIndex, spec.maxFailedIndexes set */
	int64_t blpi, mfi;
	struct job_pod *pods;
	size_t n_pods, cap_pods;
	int64_t active, ready, terminating;
	int64_t succeeded, failed;
	struct uidset unc_s, unc_f;       /* the uncounted sets as read (jobCtx.uncounted) */
	struct job_intervals prev_si, si; /* Indexed: prevSucceededIndexes, succeededIndexes */
	struct job_intervals fi;          /* per_index: failedIndexes */
	struct cond fin;                  /* finishedCondition (type NULL: none) */
	char fin_reason[128], fin_message[512];
	bool satisfied;
	bool counted;             /* the sync got past the early returns (job_syncs_total) */
	enum job_m_action action; /* its action label */
	int64_t attempted;        /* pod creations sent */
	int64_t rec_s, rec_f;     /* status counters job_pods_finished_total has counted */
	int64_t rec_ci, rec_fi;   /* Indexed: completed / failed indexes job_finished_indexes_total
	                           * has counted */
	uint64_t requeue_us;      /* smallest AddAfter asked for (0: none) */
	int err;
};

static void requeue(struct sj *s, uint64_t us)
{
	if (us == 0)
		us = 1;
	if (!s->requeue_us || us < s->requeue_us)
		s->requeue_us = us;
}

static void set_fin(struct sj *s, const char *type, const char *reason, const char *message)
{
	s->fin.type = type;
	s->fin.status = "True";
	snprintf(s->fin_reason, sizeof(s->fin_reason), "%s", reason ? reason : "");
	snprintf(s->fin_message, sizeof(s->fin_message), "%s", message ? message : "");
	s->fin.reason = s->fin_reason;
	s->fin.message = s->fin_message;
}

static cJSON *find_cond(cJSON *status, const char *type)
{
	cJSON *conds = obj_at(status, "conditions", NULL);

	for (cJSON *x = cJSON_IsArray(conds) ? conds->child : NULL; x; x = x->next) {
		const char *t = str_at(x, "type", NULL);
		if (t && !strcmp(t, type))
			return x;
	}
	return NULL;
}

static bool cond_true(cJSON *status, const char *type)
{
	const char *st = str_at(find_cond(status, type), "status", NULL);
	return st && !strcmp(st, "True");
}

static void cond_fill(cJSON *x, const char *type, const char *status, const char *reason,
                      const char *message, kube_time_t now)
{
	char ts[KUBE_TIME_BUF];

	time_str(now, ts);
	while (x->child)
		cJSON_Delete(cJSON_DetachItemViaPointer(x, x->child));
	cJSON_AddStringToObject(x, "type", type);
	cJSON_AddStringToObject(x, "status", status);
	cJSON_AddStringToObject(x, "lastProbeTime", ts);
	cJSON_AddStringToObject(x, "lastTransitionTime", ts);
	if (reason && *reason)
		cJSON_AddStringToObject(x, "reason", reason);
	if (message && *message)
		cJSON_AddStringToObject(x, "message", message);
}

/* Appends a condition (newCondition) to status.conditions. */
static void cond_append(cJSON *status, const struct cond *c, kube_time_t now)
{
	cJSON *conds = cJSON_GetObjectItemCaseSensitive(status, "conditions");
	cJSON *x = cJSON_CreateObject();

	if (!x)
		return;
	if (!cJSON_IsArray(conds)) {
		cJSON_DeleteItemFromObjectCaseSensitive(status, "conditions");
		conds = cJSON_AddArrayToObject(status, "conditions");
	}
	cond_fill(x, c->type, c->status, c->reason, c->message, now);
	cJSON_AddItemToArray(conds, x);
}

/* ensureJobConditionStatus: true when the list changed. */
static bool cond_ensure(cJSON *status, const char *type, const char *st, const char *reason,
                        const char *message, kube_time_t now)
{
	cJSON *x = find_cond(status, type);

	if (x) {
		const char *os = str_at(x, "status", NULL), *orr = str_at(x, "reason", NULL),
		           *om = str_at(x, "message", NULL);
		if (strcmp(os ? os : "", st) || strcmp(orr ? orr : "", reason ? reason : "") ||
		    strcmp(om ? om : "", message ? message : "")) {
			cond_fill(x, type, st, reason, message, now);
			return true;
		}
		return false;
	}
	if (strcmp(st, "False") != 0) {
		struct cond c = {type, st, reason, message};
		cond_append(status, &c, now);
		return true;
	}
	return false;
}

/* ---- consistency store (StaleControllerConsistencyJob) ----------------------------------------
 * consistencyStore.WroteAt after each of the controller's own writes: pod creations and patches
 * (podControl's OnWrite: recorded under the patched pod's controller reference, so a release
 * records nothing), status updates. Deletions record nothing, as upstream's DeletePod. */
static void wrote(struct sj *s, enum rs_cons_resource r, const char *uid, const char *rv)
{
	if (s->c->stale_consistency && uid && uid[0] && rv && rv[0])
		(void)rs_exp_wrote_at(s->c->exp, s->key, uid, r, rv);
}

static void wrote_pod(struct sj *s, const char *body)
{
	cJSON *pod;
	cJSON *ref;

	if (!s->c->stale_consistency || !body || !(pod = cJSON_Parse(body)))
		return;
	cJSON_ArrayForEach(ref, obj_at(pod, "metadata", "ownerReferences"))
	{
		const char *name = str_at(ref, "name", NULL);
		/* the key is the controller's name: only this Job's (the key this worker holds) */
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ref, "controller")) && name &&
		    !strcmp(name, s->name))
			wrote(s, JOB_CONS_PODS, str_at(ref, "uid", NULL),
			      str_at(pod, "metadata", "resourceVersion"));
	}
	cJSON_Delete(pod);
}

/* ---- adoption and release (controller_ref_manager.go) -----------------------------------------
 */
static int patch_pod(struct sj *s, const char *name, const char *body)
{
	struct kube_request rq = {.verb = KUBE_PATCH,
	                          .version = "v1",
	                          .resource = "pods",
	                          .ns = s->ns,
	                          .name = name,
	                          .body = body,
	                          .body_len = strlen(body),
	                          .patch_type = KUBE_PATCH_STRATEGIC};
	struct kube_response resp = {0};
	int r = kube_client_request(s->c->ctx->kc, &rq, NULL, NULL, &resp);

	if (r == 0)
		r = resp.error.err;
	if (r == 0)
		wrote_pod(s, resp.body);
	kube_response_clear(&resp);
	return r;
}

/* canAdopt: RecheckDeletionTimestamp over an uncached GET of the Job (same uid, not being
 * deleted), once per sync. */
static int can_adopt(struct sj *s)
{
	struct kube_request rq = {.verb = KUBE_GET,
	                          .group = "batch",
	                          .version = "v1",
	                          .resource = "jobs",
	                          .ns = s->ns,
	                          .name = s->name};
	struct kube_response resp = {0};
	int r;

	if (s->can_adopt_checked)
		return s->can_adopt_err;
	s->can_adopt_checked = true;
	r = kube_client_request(s->c->ctx->kc, &rq, NULL, NULL, &resp);
	if (r == 0) {
		cJSON *fresh = resp.body ? cJSON_Parse(resp.body) : NULL;
		const char *uid = str_at(fresh, "metadata", "uid");
		if (!fresh)
			r = -EBADMSG;
		else if (!uid || strcmp(uid, s->uid) ||
		         str_at(fresh, "metadata", "deletionTimestamp"))
			r = -ESTALE;
		cJSON_Delete(fresh);
	}
	kube_response_clear(&resp);
	if (r < 0)
		log_v(2, "%s: can't adopt pods: %s", s->key, strerror(-r));
	return s->can_adopt_err = r;
}

/* AdoptPod: the controller reference and the tracking finalizer, with the pod's uid as a
 * precondition. */
static int adopt_pod(struct sj *s, const char *name, const char *uid)
{
	char *body = NULL;
	int r = can_adopt(s);

	if (r < 0)
		return r;
	if (asprintf(&body,
	             "{\"metadata\":{\"ownerReferences\":[{\"apiVersion\":\"batch/v1\",\"kind\":"
	             "\"Job\",\"name\":\"%s\",\"uid\":\"%s\",\"controller\":true,"
	             "\"blockOwnerDeletion\":true}],\"uid\":\"%s\",\"finalizers\":[\"%s\"]}}",
	             s->name, s->uid, uid, JOB_TRACKING_FINALIZER) < 0)
		return -ENOMEM;
	r = patch_pod(s, name, body);
	free(body);
	if (r < 0)
		log_v(2, "%s: adopting pod %s: %s", s->key, name, strerror(-r));
	else
		log_v(2, "%s: adopted pod %s", s->key, name);
	return r;
}

/* ReleasePod: the controller reference and the tracking finalizer go; a pod gone or changed
 * (NotFound, Invalid: uid precondition) is not an error. */
static int release_pod(struct sj *s, const char *name, const char *uid)
{
	char *body = NULL;
	int r;

	log_v(2, "%s: patching pod %s to remove its controllerRef", s->key, name);
	if (asprintf(&body,
	             "{\"metadata\":{\"ownerReferences\":[{\"$patch\":\"delete\",\"uid\":\"%s\"}],"
	             "\"uid\":\"%s\",\"$deleteFromPrimitiveList/finalizers\":[\"%s\"]}}",
	             s->uid, uid, JOB_TRACKING_FINALIZER) < 0)
		return -ENOMEM;
	r = patch_pod(s, name, body);
	free(body);
	if (r == -ENOENT || r == -EINVAL || r == -EUCLEAN)
		r = 0;
	if (r < 0)
		log_v(2, "%s: releasing pod %s: %s", s->key, name, strerror(-r));
	return r;
}

/* ---- pods ------------------------------------------------------------------------------------ */
struct list_ud {
	struct sj *s;
	int err;
	bool claim; /* ClaimPods over the namespace's pods (else: every pod visited is taken) */
};

static int pod_visit(const struct shm_obj *o, void *ud)
{
	struct list_ud *lu = ud;
	struct sj *s = lu->s;
	struct shm_obj copy;
	struct shm_pod_view v;
	struct job_pod *p;
	int r;

	if (s->n_pods == s->cap_pods) {
		size_t cap = s->cap_pods ? s->cap_pods * 2 : 16;
		struct job_pod *np = realloc(s->pods, cap * sizeof(*np));
		if (!np)
			return lu->err = -ENOMEM;
		s->pods = np;
		s->cap_pods = cap;
	}
	if ((r = shm_obj_dup(o, &copy)) < 0)
		return lu->err = r;
	if ((r = shm_pod_view_init(&copy, &v)) < 0) {
		shm_pod_view_free(&v);
		return 0; /* not a pod record we can read: skip, as a decode error */
	}
	bool adopt = false;
	if (lu->claim) {
		/* ClaimPods (controller_ref_manager.go): own matching pods, adopt matching orphans
		 * unless either side is being deleted, release owned pods that stopped matching */
		const struct kube_object_meta *m = &v.pod.meta;
		const struct kube_owner_ref *ctl = NULL;
		for (uint32_t i = 0; i < m->n_owner_refs; i++)
			if (m->owner_refs[i].controller == 1)
				ctl = &m->owner_refs[i];
		bool ours = ctl && ctl->uid && !strcmp(ctl->uid, s->uid);
		bool match = job_selector_matches(s->sel, m->labels, m->n_labels);
		if ((ctl && !ours) || (ours && !match && s->deleting) ||
		    (!ctl && (s->deleting || !match || m->deletion_timestamp))) {
			shm_pod_view_free(&v);
			return 0;
		}
		if (ours && !match) {
			r = release_pod(s, m->name, m->uid);
			if (r < 0 && !lu->err)
				lu->err = r;
			shm_pod_view_free(&v);
			return 0;
		}
		adopt = !ctl;
	}
	p = &s->pods[s->n_pods];
	memset(p, 0, sizeof(*p));
	p->adopt = adopt;
	p->name = strdup(v.pod.meta.name ? v.pod.meta.name : "");
	p->uid = strdup(v.pod.meta.uid ? v.pod.meta.uid : "");
	p->phase = v.pod.phase;
	p->ready = v.pod.ready;
	p->scheduled = v.pod.node_name && *v.pod.node_name;
	p->creation = v.pod.meta.creation_timestamp;
	p->deletion = v.pod.meta.deletion_timestamp;
	if (v.pod.meta.has_deletion_grace_period_seconds)
		p->deletion_grace_s = v.pod.meta.deletion_grace_period_seconds;
	p->ready_transition = v.pod.ready_transition_time;
	p->restarts = v.pod.max_restarts;
	for (uint32_t i = 0; i < v.pod.meta.n_finalizers; i++)
		p->tracking |= !strcmp(v.pod.meta.finalizers[i], JOB_TRACKING_FINALIZER);
	p->pfp_count = true;
	p->index = job_parse_index(
	        kube_labels_get(v.pod.meta.labels, v.pod.meta.n_labels, JOB_INDEX_KEY));
	shm_pod_view_free(&v);
	if (!p->name || !p->uid) {
		free(p->name);
		free(p->uid);
		return lu->err = -ENOMEM;
	}
	s->n_pods++;
	return 0;
}

static void pods_free(struct sj *s)
{
	for (size_t i = 0; i < s->n_pods; i++) {
		free(s->pods[i].name);
		free(s->pods[i].uid);
		free(s->pods[i].pfp_msg);
		free(s->pods[i].ctl_uid);
	}
	free(s->pods);
	s->pods = NULL;
	s->n_pods = s->cap_pods = 0;
}

static bool valid_index(const struct sj *s, const struct job_pod *p)
{
	return p->index >= 0 && p->index < s->completions;
}

static struct kcmd_object_ref job_ref(struct sj *s)
{
	return (struct kcmd_object_ref){"batch/v1", "Job", s->ns, s->name, s->uid};
}

static void event(struct sj *s, const char *type, const char *reason, const char *fmt,
                  const char *arg)
{
	struct kcmd_object_ref ref = job_ref(s);
	int r = kcmd_event_record(s->c->ctx->kc, JOB_CONTROLLER, &ref, type, reason, fmt, arg);

	if (r < 0)
		log_v(2, "%s: event %s: %s", s->key, reason, strerror(-r));
}

/* ---- writes ---------------------------------------------------------------------------------- */
static const char rm_finalizer_patch[] =
        "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":[\"" JOB_TRACKING_FINALIZER "\"]}}";

/* Removes the tracking finalizer from pods[idx[0..n)]; ok[i] = removed (or gone). Returns the
 * first error other than NotFound, or 0. */
static int remove_finalizers(struct sj *s, struct job_pod *const *pods, size_t n, bool *ok)
{
	struct kube_request *rq = calloc(n ? n : 1, sizeof(*rq));
	struct kube_response *rs = calloc(n ? n : 1, sizeof(*rs));
	int err = 0, r;

	if (!rq || !rs) {
		free(rq);
		free(rs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		rq[i] = (struct kube_request){.verb = KUBE_PATCH,
		                              .version = "v1",
		                              .resource = "pods",
		                              .ns = s->ns,
		                              .name = pods[i]->name,
		                              .body = rm_finalizer_patch,
		                              .body_len = sizeof(rm_finalizer_patch) - 1,
		                              .patch_type = KUBE_PATCH_STRATEGIC};
	r = n ? kube_client_request_many(s->c->ctx->kc, rq, n, rs, NULL) : 0;
	for (size_t i = 0; i < n; i++) {
		int e = r < 0 ? r : rs[i].error.err;
		ok[i] = e == 0 || e == -ENOENT;
		if (!ok[i] && !err)
			err = e;
		if (e == 0)
			wrote_pod(s, rs[i].body);
		if (!ok[i])
			log_v(2, "%s: removing the tracking finalizer of %s: %s", s->key,
			      pods[i]->name, strerror(-e));
		kube_response_clear(&rs[i]);
	}
	free(rq);
	free(rs);
	return err;
}

/* DELETE pods (upstream deleteJobPods when rm_finalizer, else deleteActivePods). With
 * expectations: a failed deletion is observed at once. Counts what was deleted. */
static int delete_pods(struct sj *s, struct job_pod **pods, size_t n, bool rm_finalizer,
                       bool expect, int64_t *ret_deleted, int64_t *ret_ready)
{
	struct kube_request *rq = calloc(n ? n : 1, sizeof(*rq));
	struct kube_response *rs = calloc(n ? n : 1, sizeof(*rs));
	bool *ok = calloc(n ? n : 1, sizeof(bool));
	int err = 0, r = 0;
	char pk[512];

	*ret_deleted = *ret_ready = 0;
	if (!rq || !rs || !ok) {
		err = -ENOMEM;
		goto out;
	}
	if (rm_finalizer) {
		struct job_pod **tp = calloc(n ? n : 1, sizeof(*tp));
		bool *tok = calloc(n ? n : 1, sizeof(bool));
		size_t nt = 0;
		if (!tp || !tok) {
			free(tp);
			free(tok);
			err = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < n; i++)
			if (pods[i]->tracking)
				tp[nt++] = pods[i];
		remove_finalizers(s, tp, nt, tok);
		for (size_t i = 0, j = 0; i < n; i++) {
			ok[i] = true;
			if (pods[i]->tracking)
				ok[i] = tok[j++];
		}
		free(tp);
		free(tok);
	} else {
		for (size_t i = 0; i < n; i++)
			ok[i] = true;
	}
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (ok[i])
			rq[m++] = (struct kube_request){.verb = KUBE_DELETE,
			                                .version = "v1",
			                                .resource = "pods",
			                                .ns = s->ns,
			                                .name = pods[i]->name};
	r = m ? kube_client_request_many(s->c->ctx->kc, rq, m, rs, NULL) : 0;
	for (size_t i = 0, j = 0; i < n; i++) {
		int e = !ok[i] ? -EIO : r < 0 ? r : rs[j].error.err;
		if (ok[i])
			kube_response_clear(&rs[j++]);
		snprintf(pk, sizeof(pk), "%s/%s", s->ns, pods[i]->name);
		if (e != 0) {
			if (expect)
				rs_exp_deletion_failed(s->c->exp, s->key, pk);
			if (e != -ENOENT) {
				if (!err)
					err = e;
				log_v(2, "%s: deleting %s: %s", s->key, pods[i]->name,
				      strerror(-e));
				if (e != -EIO) {
					char msg[300];
					snprintf(msg, sizeof(msg), "%s", strerror(-e));
					event(s, KCMD_EVENT_WARNING, "FailedDelete",
					      "Error deleting: %s", msg);
				}
				continue;
			}
		} else {
			event(s, KCMD_EVENT_NORMAL, "SuccessfulDelete", "Deleted pod: %s",
			      pods[i]->name);
		}
		(*ret_deleted)++;
		if (pods[i]->ready)
			(*ret_ready)++;
	}
out:
	free(rq);
	free(rs);
	free(ok);
	return err;
}

/* PUT status; on success the tree becomes the apiserver's answer. */
static int update_status(struct sj *s)
{
	char *body = cJSON_PrintUnformatted(s->job);
	struct kube_request rq = {.verb = KUBE_UPDATE,
	                          .group = "batch",
	                          .version = "v1",
	                          .resource = "jobs",
	                          .ns = s->ns,
	                          .name = s->name,
	                          .subresource = "status",
	                          .body_kind = "Job"};
	struct kube_response resp = {0};
	int r;

	if (!body)
		return -ENOMEM;
	rq.body = body;
	rq.body_len = strlen(body);
	r = kube_client_request(s->c->ctx->kc, &rq, NULL, NULL, &resp);
	free(body);
	if (r == 0 && resp.body) {
		cJSON *nj = cJSON_Parse(resp.body);
		if (nj) {
			cJSON_Delete(s->job);
			s->job = nj;
			s->status = ensure_obj(nj, "status");
			wrote(s, JOB_CONS_JOBS, str_at(nj, "metadata", "uid"),
			      str_at(nj, "metadata", "resourceVersion"));
		}
	}
	if (r < 0)
		log_v(2, "%s: updating the status: %s", s->key, strerror(-r));
	kube_response_clear(&resp);
	return r;
}

/* ---- pod creation ------------------------------------------------------------------------- */
static void add_index_env(cJSON *containers)
{
	for (cJSON *c = cJSON_IsArray(containers) ? containers->child : NULL; c; c = c->next) {
		cJSON *env = cJSON_GetObjectItemCaseSensitive(c, "env");
		bool have = false;
		if (!cJSON_IsArray(env)) {
			cJSON_DeleteItemFromObjectCaseSensitive(c, "env");
			env = cJSON_AddArrayToObject(c, "env");
		}
		for (cJSON *e = env ? env->child : NULL; e; e = e->next) {
			const char *n = str_at(e, "name", NULL);
			have |= n && !strcmp(n, JOB_INDEX_ENV);
		}
		if (have || !env)
			continue;
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "name", JOB_INDEX_ENV);
		cJSON *fr = cJSON_AddObjectToObject(cJSON_AddObjectToObject(e, "valueFrom"),
		                                    "fieldRef");
		cJSON_AddStringToObject(fr, "fieldPath", "metadata.labels['" JOB_INDEX_KEY "']");
		cJSON_AddItemToArray(env, e);
	}
}

static const struct job_pod *delayed_for(const struct sj *s, int64_t ix);

/* The pod body for index ix (-1: NonIndexed), malloc'd JSON. */
static char *pod_body(struct sj *s, int64_t ix)
{
	cJSON *tmpl = obj_at(s->job, "spec", "template");
	cJSON *pod = cJSON_CreateObject(), *md, *tm = obj_at(tmpl, "metadata", NULL), *x;
	char gen[300], ixs[24];
	bool fin = false;
	char *out;

	if (!pod)
		return NULL;
	cJSON_AddStringToObject(pod, "apiVersion", "v1");
	cJSON_AddStringToObject(pod, "kind", "Pod");
	md = cJSON_AddObjectToObject(pod, "metadata");
	job_pod_generate_name(s->name, ix, gen, sizeof(gen));
	cJSON_AddStringToObject(md, "generateName", gen);
	cJSON_AddStringToObject(md, "namespace", s->ns);
	x = obj_at(tm, "labels", NULL);
	cJSON_AddItemToObject(md, "labels",
	                      cJSON_IsObject(x) ? cJSON_Duplicate(x, 1) : cJSON_CreateObject());
	x = obj_at(tm, "annotations", NULL);
	cJSON_AddItemToObject(md, "annotations",
	                      cJSON_IsObject(x) ? cJSON_Duplicate(x, 1) : cJSON_CreateObject());
	x = obj_at(tm, "finalizers", NULL);
	cJSON *fins = cJSON_IsArray(x) ? cJSON_Duplicate(x, 1) : cJSON_CreateArray();
	for (cJSON *f = fins ? fins->child : NULL; f; f = f->next)
		fin |= cJSON_IsString(f) && !strcmp(f->valuestring, JOB_TRACKING_FINALIZER);
	if (!fin)
		cJSON_AddItemToArray(fins, cJSON_CreateString(JOB_TRACKING_FINALIZER));
	cJSON_AddItemToObject(md, "finalizers", fins);
	cJSON *owners = cJSON_AddArrayToObject(md, "ownerReferences");
	cJSON * or = cJSON_CreateObject();
	cJSON_AddStringToObject(or, "apiVersion", "batch/v1");
	cJSON_AddStringToObject(or, "kind", "Job");
	cJSON_AddStringToObject(or, "name", s->name);
	cJSON_AddStringToObject(or, "uid", s->uid);
	cJSON_AddBoolToObject(or, "controller", 1);
	cJSON_AddBoolToObject(or, "blockOwnerDeletion", 1);
	cJSON_AddItemToArray(owners, or);
	x = obj_at(tmpl, "spec", NULL);
	cJSON *spec = cJSON_IsObject(x) ? cJSON_Duplicate(x, 1) : cJSON_CreateObject();
	cJSON_AddItemToObject(pod, "spec", spec);
	if (ix >= 0) {
		snprintf(ixs, sizeof(ixs), "%" PRId64, ix);
		set_str(cJSON_GetObjectItemCaseSensitive(md, "annotations"), JOB_INDEX_KEY, ixs);
		set_str(cJSON_GetObjectItemCaseSensitive(md, "labels"), JOB_INDEX_KEY, ixs);
		if (s->per_index) {
			/* addIndexFailureCountAnnotation */
			int32_t fc, ic;
			char n[16];
			cJSON *ann = cJSON_GetObjectItemCaseSensitive(md, "annotations");
			job_new_index_failure_counts(delayed_for(s, ix), s->pfp != NULL, &fc, &ic);
			snprintf(n, sizeof(n), "%" PRId32, fc);
			set_str(ann, JOB_INDEX_FAILURE_KEY, n);
			if (ic > 0) {
				snprintf(n, sizeof(n), "%" PRId32, ic);
				set_str(ann, JOB_INDEX_IGNORED_KEY, n);
			}
		}
		char host[300];
		snprintf(host, sizeof(host), "%s-%" PRId64, s->name, ix);
		set_str(spec, "hostname", host);
		add_index_env(cJSON_GetObjectItemCaseSensitive(spec, "initContainers"));
		add_index_env(cJSON_GetObjectItemCaseSensitive(spec, "containers"));
	}
	out = cJSON_PrintUnformatted(pod);
	cJSON_Delete(pod);
	return out;
}

/* Creates n pods (indexes ix, or NULL for NonIndexed) in slow-start batches; returns how many
 * were created, *ret_err the first error. Expectations were raised for n. */
static int64_t create_pods(struct sj *s, const int64_t *ix, int64_t n, int *ret_err)
{
	int64_t created = 0, done = 0;

	s->attempted = 0;
	int64_t batch = n < 1 ? n : 1; /* SlowStartInitialBatchSize */

	*ret_err = 0;
	while (done < n) {
		struct kube_request *rq = calloc((size_t)batch, sizeof(*rq));
		struct kube_response *rs = calloc((size_t)batch, sizeof(*rs));
		char **bodies = calloc((size_t)batch, sizeof(char *));
		int64_t errs = 0;
		int r = 0;

		if (!rq || !rs || !bodies)
			r = -ENOMEM;
		for (int64_t i = 0; r == 0 && i < batch; i++) {
			bodies[i] = pod_body(s, ix ? ix[done + i] : -1);
			if (!bodies[i]) {
				r = -ENOMEM;
				break;
			}
			rq[i] = (struct kube_request){.verb = KUBE_CREATE,
			                              .version = "v1",
			                              .resource = "pods",
			                              .ns = s->ns,
			                              .body = bodies[i],
			                              .body_len = strlen(bodies[i]),
			                              .body_kind = "Pod"};
		}
		if (r == 0)
			r = kube_client_request_many(s->c->ctx->kc, rq, (size_t)batch, rs, NULL);
		s->attempted += batch;
		for (int64_t i = 0; i < batch; i++) {
			int e = r < 0 ? r : rs[i].error.err;
			if (e == 0) {
				cJSON *pj = rs[i].body ? cJSON_Parse(rs[i].body) : NULL;
				const char *pn = str_at(pj, "metadata", "name");
				created++;
				wrote_pod(s, rs[i].body);
				event(s, KCMD_EVENT_NORMAL, "SuccessfulCreate", "Created pod: %s",
				      pn ? pn : "");
				cJSON_Delete(pj);
			} else {
				errs++;
				rs_exp_lower_creations(s->c->exp, s->key, 1);
				if (e !=
				    -ESHUTDOWN) { /* namespace terminating: ignored as upstream */
					char msg[300];
					snprintf(msg, sizeof(msg), "%s", strerror(-e));
					if (!*ret_err)
						*ret_err = e;
					event(s, KCMD_EVENT_WARNING, "FailedCreate",
					      "Error creating: %s", msg);
				}
			}
			if (rs)
				kube_response_clear(&rs[i]);
			if (bodies)
				free(bodies[i]);
		}
		free(rq);
		free(rs);
		free(bodies);
		done += batch;
		if (errs && done < n) {
			/* slow-start failure: the rest is never attempted */
			rs_exp_lower_creations(s->c->exp, s->key, n - done);
			break;
		}
		batch = 2 * batch < n - done ? 2 * batch : n - done;
	}
	return created;
}

static int cmp_active(const void *a, const void *b)
{
	return job_pod_cmp_active(*(struct job_pod *const *)a, *(struct job_pod *const *)b);
}

static int cmp_index_active(const void *a, const void *b)
{
	const struct job_pod *x = *(struct job_pod *const *)a, *y = *(struct job_pod *const *)b;
	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	return job_pod_cmp_active(x, y);
}

/* activePodsForRemoval into rm (room for n_active); returns the count. */
static size_t pods_for_removal(struct sj *s, struct job_pod **act, size_t n, size_t at_least,
                               struct job_pod **rm)
{
	struct job_pod **left = calloc(n ? n : 1, sizeof(*left));
	size_t nrm = 0, nleft = 0;

	if (!left)
		return 0;
	if (s->indexed) {
		/* appendDuplicatedIndexPodsForRemoval: unknown and out-of-range indexes go, and of
		 * each repeated index all but the last in ActivePods order */
		qsort(act, n, sizeof(*act), cmp_index_active);
		for (size_t i = 0; i < n;) {
			size_t j = i;
			while (j < n && act[j]->index == act[i]->index)
				j++;
			if (act[i]->index < 0 || act[i]->index >= s->completions) {
				for (size_t k = i; k < j; k++)
					rm[nrm++] = act[k];
			} else {
				for (size_t k = i; k + 1 < j; k++)
					rm[nrm++] = act[k];
				left[nleft++] = act[j - 1];
			}
			i = j;
		}
	} else {
		memcpy(left, act, n * sizeof(*left));
		nleft = n;
	}
	if (nrm < at_least) {
		qsort(left, nleft, sizeof(*left), cmp_active);
		for (size_t i = 0; nrm < at_least && i < nleft; i++)
			rm[nrm++] = left[i];
	}
	free(left);
	return nrm;
}

static int expect_deletions(struct sj *s, struct job_pod **pods, size_t n)
{
	char **keys = calloc(n ? n : 1, sizeof(char *));
	int r = -ENOMEM;

	if (!keys)
		return r;
	for (size_t i = 0; i < n; i++)
		if (asprintf(&keys[i], "%s/%s", s->ns, pods[i]->name) < 0) {
			keys[i] = NULL;
			goto out;
		}
	r = rs_exp_expect_deletions(s->c->exp, s->key, (const char *const *)keys, n, rs_exp_now());
out:
	for (size_t i = 0; i < n; i++)
		free(keys[i]);
	free(keys);
	return r;
}

static struct job_backoff backoff_of(struct sj *s)
{
	struct job_finished *f = calloc(s->n_pods ? s->n_pods : 1, sizeof(*f));
	struct job_backoff b = {0};
	size_t n = 0;

	if (!f)
		return b;
	for (size_t i = 0; i < s->n_pods; i++) {
		struct job_pod *p = &s->pods[i];
		if (p->phase == KUBE_POD_SUCCEEDED)
			f[n++] = (struct job_finished){false, job_pod_finish_time(p)};
		else if (job_pod_failed(p, s->only_replace_failed))
			f[n++] = (struct job_finished){true, job_pod_finish_time(p)};
	}
	job_backoff_record(f, n, &b);
	free(f);
	return b;
}

/* podsWithDelayedDeletionPerIndex[ix] */
static const struct job_pod *delayed_for(const struct sj *s, int64_t ix)
{
	for (size_t i = 0; i < s->n_pods; i++)
		if (s->pods[i].delayed && s->pods[i].index == ix)
			return &s->pods[i];
	return NULL;
}

static int iv_merge_into(struct job_intervals *a, const struct job_intervals *b)
{
	struct job_intervals m = {0};
	int r = job_iv_merge(a, b, &m);

	if (r < 0) {
		job_iv_free(&m);
		return r;
	}
	job_iv_free(a);
	*a = m;
	return 0;
}

/* manageJob: returns the new active count; *err the first write error. */
static int64_t manage_job(struct sj *s, struct job_pod **act, size_t n_act, int *err)
{
	int64_t active = (int64_t)n_act, want, deleted = 0, deleted_ready = 0;
	struct job_pod **rm = calloc(n_act ? n_act : 1, sizeof(*rm));
	size_t nrm;

	*err = 0;
	s->action = JOB_M_TRACKING;
	if (!rm) {
		*err = -ENOMEM;
		return active;
	}
	if (s->suspend) {
		s->action = JOB_M_PODS_DELETED;
		nrm = pods_for_removal(s, act, n_act, n_act, rm);
		if ((*err = expect_deletions(s, rm, nrm)) == 0) {
			*err = delete_pods(s, rm, nrm, true, true, &deleted, &deleted_ready);
			rs_exp_settle(s->c->exp, s->key);
		}
		active -= deleted;
		s->terminating += deleted;
		s->ready -= deleted_ready;
		free(rm);
		return active;
	}
	if (!s->has_completions) {
		want = s->succeeded > 0 ? active : s->parallelism;
	} else {
		want = s->completions - s->succeeded;
		if (want > s->parallelism)
			want = s->parallelism;
		if (want < 0)
			want = 0;
	}
	int64_t rm_at_least = active - want > 0 ? active - want : 0;
	nrm = pods_for_removal(s, act, n_act, (size_t)rm_at_least, rm);
	if (nrm > JOB_MAX_CREATE_DELETE)
		nrm = JOB_MAX_CREATE_DELETE;
	if (nrm > 0) {
		s->action = JOB_M_PODS_DELETED;
		if ((*err = expect_deletions(s, rm, nrm)) == 0) {
			*err = delete_pods(s, rm, nrm, true, true, &deleted, &deleted_ready);
			rs_exp_settle(s->c->exp, s->key);
		}
		active -= deleted;
		s->terminating += deleted;
		s->ready -= deleted_ready;
		free(rm);
		return active;
	}
	free(rm);
	int64_t term = s->only_replace_failed ? s->terminating : 0;
	int64_t diff = want - term - active;
	if (diff <= 0)
		return active;
	s->action = JOB_M_PODS_CREATED;
	if (!s->per_index) {
		/* the global backoff (backoffLimitPerIndex has one per index, below) */
		struct job_backoff b = backoff_of(s);
		uint64_t wait = job_backoff_remaining_us(&b, kube_time_now(), s->c->backoff_us,
		                                         s->c->backoff_max_us);
		if (wait > 0) {
			requeue(s, wait);
			return active; /* v1.37.2: the active count stays while backing off */
		}
	}
	if (diff > JOB_MAX_CREATE_DELETE)
		diff = JOB_MAX_CREATE_DELETE;
	int64_t *ix = NULL;
	if (s->indexed) {
		struct job_intervals np = {0};
		int64_t *ai = calloc(n_act + s->n_pods + 1, sizeof(*ai));
		size_t na = 0;
		ix = calloc((size_t)diff, sizeof(*ix));
		if (!ai || !ix) {
			free(ai);
			free(ix);
			*err = -ENOMEM;
			return active;
		}
		for (size_t i = 0; i < n_act; i++)
			if (act[i]->index >= 0)
				ai[na++] = act[i]->index;
		if (s->only_replace_failed)
			for (size_t i = 0; i < s->n_pods; i++)
				if (job_pod_terminating(&s->pods[i]) && s->pods[i].index >= 0)
					ai[na++] = s->pods[i].index;
		/* sets.List: sorted, unique */
		for (size_t i = 1; i < na; i++)
			for (size_t j = i; j > 0 && ai[j - 1] > ai[j]; j--) {
				int64_t t = ai[j];
				ai[j] = ai[j - 1];
				ai[j - 1] = t;
			}
		if (job_iv_with(&s->si, ai, na, &np) < 0 ||
		    (s->per_index && iv_merge_into(&np, &s->fi) < 0)) {
			free(ai);
			free(ix);
			job_iv_free(&np);
			*err = -ENOMEM;
			return active;
		}
		diff = (int64_t)job_first_pending(&np, (size_t)diff, s->completions, ix);
		job_iv_free(&np);
		free(ai);
		if (s->per_index) {
			/* getPodCreationInfoForIndependentIndexes: the indexes past their backoff,
			 * else a requeue at the soonest one */
			uint64_t soonest = 0;
			int64_t k = 0;
			kube_time_t now = kube_time_now();
			for (int64_t i = 0; i < diff; i++) {
				uint64_t w = job_remaining_per_index(delayed_for(s, ix[i]), now,
				                                     s->c->backoff_us,
				                                     s->c->backoff_max_us);
				if (w == 0)
					ix[k++] = ix[i];
				else if (!soonest || w < soonest)
					soonest = w;
			}
			if (k == 0 && soonest) {
				requeue(s, soonest);
				free(ix);
				return active;
			}
			diff = k;
		}
		if (diff == 0) {
			free(ix);
			return active;
		}
	}
	if ((*err = rs_exp_expect_creations(s->c->exp, s->key, diff, rs_exp_now())) < 0) {
		free(ix);
		return active;
	}
	int64_t created = create_pods(s, ix, diff, err);
	/* recordJobPodsCreationTotal, with upstream's counting: every attempt counts as succeeded,
	 * a failed one also as failed */
	enum job_m_create why = s->only_replace_failed && s->failed > 0 ? JOB_M_RECREATE_FAILED
	                        : s->failed > 0 || s->terminating > 0
	                                ? JOB_M_RECREATE_TERMINATING_OR_FAILED
	                                : JOB_M_CREATE_NEW;
	job_metrics_creations(s->c->met, why, s->attempted, s->attempted - created);
	rs_exp_settle(s->c->exp, s->key);
	free(ix);
	return active + created;
}

/* Removes the tracking finalizer of every pod of the namespace controlled by a Job named name
 * whose uid is not keep_uid (NULL: any): upstream's orphan pods (the Job is gone or was
 * replaced, or is finished: known_uid, the finished Job's uid, whose pods need no check).
 * A pod whose controller is not the Job the cache holds is an orphan only if the Job is really
 * gone: a stale cache (a new leader, an informer relisting after an apiserver restart) may miss
 * a Job that exists, and a pod losing its finalizer before the Job counted it is lost from the
 * Job's status (the Job then creates a replacement). So the Job is read with a live GET first
 * (upstream's orphan worker trusts its lister): NotFound or another uid lets the finalizers go;
 * the live Job being the pods' controller returns -EAGAIN and removes nothing (the caller
 * requeues: the cache will catch up); a failed GET returns its error and removes nothing. */
struct orphan_ud {
	const char *name, *keep_uid;
	struct sj *s;
	int err;
};

static int orphan_visit(const struct shm_obj *o, void *ud)
{
	struct orphan_ud *ou = ud;
	const struct shm_owner_ref *c = shm_obj_controller(o);
	size_t before = ou->s->n_pods;
	int r;

	if (!c || !c->kind || strcmp(c->kind, "Job") || !c->api_version ||
	    strcmp(c->api_version, "batch/v1") || !c->name || strcmp(c->name, ou->name))
		return 0;
	if (ou->keep_uid && c->uid && !strcmp(c->uid, ou->keep_uid))
		return 0;
	struct list_ud lu = {ou->s, 0, false};
	r = pod_visit(o, &lu);
	if (lu.err < 0 && !ou->err)
		ou->err = lu.err;
	if (ou->s->n_pods > before &&
	    !(ou->s->pods[ou->s->n_pods - 1].ctl_uid = strdup(c->uid ? c->uid : "")) && !ou->err)
		ou->err = -ENOMEM;
	return r;
}

/* The uid of the Job as the apiserver has it now (an uncached GET) into uid: 0, -ENOENT (no
 * such Job), another -errno. */
static int live_job_uid(struct sj *s, char *uid, size_t n)
{
	struct kube_request rq = {.verb = KUBE_GET,
	                          .group = "batch",
	                          .version = "v1",
	                          .resource = "jobs",
	                          .ns = s->ns,
	                          .name = s->name};
	struct kube_response resp = {0};
	int r = kube_client_request(s->c->ctx->kc, &rq, NULL, NULL, &resp);

	if (r == 0)
		r = resp.error.err;
	uid[0] = 0;
	if (r == 0) {
		cJSON *fresh = resp.body ? cJSON_Parse(resp.body) : NULL;
		const char *u = str_at(fresh, "metadata", "uid");
		if (!u)
			r = -EBADMSG;
		else
			snprintf(uid, n, "%s", u);
		cJSON_Delete(fresh);
	}
	kube_response_clear(&resp);
	return r;
}

static int cleanup_orphans(struct sj *s, const char *keep_uid, const char *known_uid)
{
	struct orphan_ud ou = {s->name, keep_uid, s, 0};
	struct job_pod **tp;
	bool *ok;
	size_t n = 0;
	int r;

	pods_free(s);
	r = shm_reader_list_ns(s->c->ctx->arena, (uint16_t)s->c->pod_type, s->ns, orphan_visit,
	                       &ou);
	if (r >= 0 && ou.err < 0)
		r = ou.err;
	if (r < 0) {
		pods_free(s);
		return r;
	}
	r = 0; /* the walk returns how many records it visited */
	tp = calloc(s->n_pods ? s->n_pods : 1, sizeof(*tp));
	ok = calloc(s->n_pods ? s->n_pods : 1, sizeof(bool));
	if (!tp || !ok) {
		free(tp);
		free(ok);
		pods_free(s);
		return -ENOMEM;
	}
	bool check = false;
	for (size_t i = 0; i < s->n_pods; i++) {
		struct job_pod *p = &s->pods[i];
		if (!p->tracking)
			continue;
		tp[n++] = p;
		check |= !known_uid || strcmp(p->ctl_uid, known_uid) != 0;
	}
	if (check && seam_ns(s->c->unconfirmed_ns, s->ns))
		check = false; /* test seam: no confirmation (the negative control) */
	if (check) {
		char live[64];
		int g = live_job_uid(s, live, sizeof(live));
		for (size_t i = 0; i < n && r == 0; i++) {
			if (known_uid && !strcmp(tp[i]->ctl_uid, known_uid))
				continue;
			if (job_orphan_confirmed(g, live, tp[i]->ctl_uid))
				continue;
			r = g < 0 && g != -ENOENT ? g : -EAGAIN;
			if (r == -EAGAIN)
				log_v(2,
				      "%s: the Job exists with uid %s, not in the cache: "
				      "keeping the tracking finalizer of %s, requeued",
				      s->key, live, tp[i]->name);
			else
				log_v(2, "%s: reading the Job before releasing %s: %s", s->key,
				      tp[i]->name, strerror(-r));
		}
	}
	if (r == 0)
		r = remove_finalizers(s, tp, n, ok);
	free(tp);
	free(ok);
	pods_free(s);
	return r;
}

/* cleanUncountedPodsWithoutFinalizers over the status tree. */
static bool clean_uncounted(struct sj *s, const struct uidset *with_fin)
{
	cJSON *u = obj_at(s->status, "uncountedTerminatedPods", NULL);
	static const char *const which[2] = {"succeeded", "failed"};
	bool changed = false;

	if (!cJSON_IsObject(u))
		return false;
	for (int k = 0; k < 2; k++) {
		cJSON *arr = cJSON_GetObjectItemCaseSensitive(u, which[k]);
		int64_t moved = 0, cur = 0;
		if (!cJSON_IsArray(arr))
			continue;
		for (cJSON *x = arr->child, *nx; x; x = nx) {
			nx = x->next;
			if (!cJSON_IsString(x) || !uid_in(with_fin, x->valuestring)) {
				cJSON_Delete(cJSON_DetachItemViaPointer(arr, x));
				moved++;
			}
		}
		if (!moved)
			continue;
		changed = true;
		int_at(s->status, which[k], NULL, &cur);
		set_num(s->status, which[k], (double)(cur + moved));
		if (!arr->child)
			cJSON_DeleteItemFromObjectCaseSensitive(u, which[k]);
	}
	return changed;
}

static void uncounted_add(struct sj *s, const char *which, const char *uid)
{
	cJSON *u = ensure_obj(s->status, "uncountedTerminatedPods");
	cJSON *arr = cJSON_GetObjectItemCaseSensitive(u, which);

	if (!cJSON_IsArray(arr)) {
		cJSON_DeleteItemFromObjectCaseSensitive(u, which);
		arr = cJSON_AddArrayToObject(u, which);
	}
	cJSON_AddItemToArray(arr, cJSON_CreateString(uid));
}

static size_t uncounted_len(struct sj *s, const char *which)
{
	cJSON *arr = obj_at(s->status, "uncountedTerminatedPods", which);
	return cJSON_IsArray(arr) ? (size_t)cJSON_GetArraySize(arr) : 0;
}

static int cmp_index(const void *a, const void *b)
{
	const struct job_pod *x = a, *y = b;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* The finalizer removals about to be sent, as expectations in shared memory: until the
 * dispatcher has seen each pod without its finalizer (or gone), the next sync of the key waits,
 * so a pod counted in this sync is never seen again with the finalizer by a later one. */
static int expect_fin_removals(struct sj *s, struct job_pod *const *pods, size_t n)
{
	char **keys = calloc(n ? n : 1, sizeof(char *));
	int r = -ENOMEM;

	if (!keys)
		return r;
	for (size_t i = 0; i < n; i++)
		if (asprintf(&keys[i], "%s/%s", s->ns, pods[i]->name) < 0) {
			keys[i] = NULL;
			goto out;
		}
	r = rs_exp_expect_deletions(s->c->fin, s->key, (const char *const *)keys, n, rs_exp_now());
out:
	for (size_t i = 0; i < n; i++)
		free(keys[i]);
	free(keys);
	return r;
}

/* indexesCount over a status field */
static int64_t status_indexes(struct sj *s, const char *field)
{
	struct job_intervals iv = {0};
	int64_t n = 0;

	if (job_iv_parse(str_at(s->status, field, NULL), s->completions, &iv) == 0)
		n = job_iv_total(&iv);
	job_iv_free(&iv);
	return n;
}

/* recordJobPodFinished after a status write: what succeeded and failed grew by (and, for an
 * Indexed Job, job_finished_indexes_total). */
static void record_finished(struct sj *s)
{
	int64_t sc = 0, fc = 0;

	int_at(s->status, "succeeded", NULL, &sc);
	int_at(s->status, "failed", NULL, &fc);
	job_metrics_pods_finished(s->c->met, s->indexed, sc - s->rec_s, fc - s->rec_f);
	if (s->indexed) {
		int64_t ci = status_indexes(s, "completedIndexes"),
		        fi = status_indexes(s, "failedIndexes");
		job_metrics_finished_indexes(s->c->met, false, s->per_index, ci - s->rec_ci);
		if (s->per_index)
			job_metrics_finished_indexes(s->c->met, true, true, fi - s->rec_fi);
		if (ci > s->rec_ci)
			s->rec_ci = ci;
		if (fi > s->rec_fi)
			s->rec_fi = fi;
	}
	if (sc > s->rec_s)
		s->rec_s = sc;
	if (fc > s->rec_f)
		s->rec_f = fc;
}

/* trackJobStatusAndRemoveFinalizers */
static int track_status(struct sj *s, bool flush)
{
	struct uidset with_fin = {0};
	struct job_pod **rmp = calloc(s->n_pods ? s->n_pods : 1, sizeof(*rmp));
	bool *ok = calloc(s->n_pods ? s->n_pods : 1, sizeof(bool));
	int64_t *new_si = calloc(s->n_pods ? s->n_pods : 1, sizeof(*new_si));
	size_t nrm = 0, nsi = 0;
	bool reached_max = false, finished = false;
	int r = 0, rm_err = 0;
	kube_time_t now = kube_time_now();
	int64_t old_s = 0, old_f = 0;

	int_at(s->status, "succeeded", NULL, &old_s);
	int_at(s->status, "failed", NULL, &old_f);
	s->rec_s = old_s;
	s->rec_f = old_f;
	if (s->indexed) {
		s->rec_ci = status_indexes(s, "completedIndexes");
		s->rec_fi = status_indexes(s, "failedIndexes");
	}
	with_fin.v = calloc(s->n_pods ? s->n_pods : 1, sizeof(char *));
	if (!rmp || !ok || !new_si || !with_fin.v) {
		r = -ENOMEM;
		goto out;
	}
	if (s->indexed)
		qsort(s->pods, s->n_pods, sizeof(*s->pods), cmp_index);
	for (size_t i = 0; i < s->n_pods; i++)
		if (s->pods[i].tracking)
			with_fin.v[with_fin.n++] = s->pods[i].uid; /* borrowed: not freed */
	if (clean_uncounted(s, &with_fin))
		flush = true;
	bool scm = s->fin.type && !strcmp(s->fin.type, "SuccessCriteriaMet");
	for (size_t i = 0; i < s->n_pods; i++) {
		struct job_pod *p = &s->pods[i];
		if (!p->tracking)
			continue;
		bool failed = job_pod_failed(p, s->only_replace_failed);
		if (!(s->deleting || s->fin.type || p->phase == KUBE_POD_SUCCEEDED || failed))
			continue;
		/* canRemoveFinalizer: the failed pod of an index awaiting its replacement keeps
		 * the finalizer (the replacement's failure count annotations come from it) */
		if (!(s->deleting || s->fin.type || p->phase == KUBE_POD_SUCCEEDED) &&
		    s->per_index && p->delayed)
			continue;
		rmp[nrm++] = p;
		if (p->phase == KUBE_POD_SUCCEEDED && !uid_in(&s->unc_f, p->uid)) {
			if (s->indexed) {
				if (valid_index(s, p) && !job_iv_has(&s->prev_si, p->index)) {
					new_si[nsi++] = p->index;
					flush = true;
				}
			} else if (!uid_in(&s->unc_s, p->uid)) {
				flush = true;
				uncounted_add(s, "succeeded", p->uid);
			}
		} else if (failed || (s->fin.type && !scm)) {
			if (!uid_in(&s->unc_f, p->uid) && s->pfp && p->pfp_action != JOB_PFP_NONE)
				job_metrics_pfp(s->c->met, p->pfp_action - JOB_PFP_FAIL_JOB);
			if (!uid_in(&s->unc_f, p->uid) && (!s->indexed || valid_index(s, p)) &&
			    p->pfp_count) {
				flush = true;
				uncounted_add(s, "failed", p->uid);
			}
		}
		if (nsi + uncounted_len(s, "succeeded") + uncounted_len(s, "failed") >=
		    JOB_MAX_UNCOUNTED) {
			reached_max = true;
			break;
		}
	}
	if (s->indexed) {
		struct job_intervals merged = {0};
		char *str = NULL;
		qsort(new_si, nsi, sizeof(*new_si), cmp_i64);
		if ((r = job_iv_with(&s->si, new_si, nsi, &merged)) < 0 ||
		    (r = job_iv_string(&merged, &str)) < 0) {
			job_iv_free(&merged);
			goto out;
		}
		job_iv_free(&s->si);
		s->si = merged;
		const char *cur = str_at(s->status, "completedIndexes", NULL);
		if (strcmp(cur ? cur : "", str))
			flush = true;
		set_num(s->status, "succeeded", (double)job_iv_total(&s->si));
		if (*str)
			set_str(s->status, "completedIndexes", str);
		else
			cJSON_DeleteItemFromObjectCaseSensitive(s->status, "completedIndexes");
		free(str);
		/* failedIndexes: set (possibly "") for a Job with backoffLimitPerIndex, else unset
		 */
		const char *cur_fi = str_at(s->status, "failedIndexes", NULL);
		if (s->per_index) {
			char *fstr = NULL;
			if ((r = job_iv_string(&s->fi, &fstr)) < 0)
				goto out;
			if (!cur_fi || strcmp(cur_fi, fstr)) {
				set_str(s->status, "failedIndexes", fstr);
				flush = true;
			}
			free(fstr);
		} else if (obj_at(s->status, "failedIndexes", NULL)) {
			cJSON_DeleteItemFromObjectCaseSensitive(s->status, "failedIndexes");
			flush = true;
		}
	}
	if (s->fin.type && !strcmp(s->fin.type, "FailureTarget")) {
		cond_append(s->status, &s->fin, now);
		flush = true;
		s->fin.type = "Failed";
	}
	if (scm) {
		if (!find_cond(s->status, "SuccessCriteriaMet")) {
			cond_append(s->status, &s->fin, now);
			flush = true;
		}
		s->fin.type = "Complete";
	}
	/* flushUncountedAndRemoveFinalizers */
	if (flush) {
		if ((r = update_status(s)) < 0)
			goto out;
		record_finished(s);
		flush = false;
	}
	if (nrm > 0) {
		/* expectFinalizersRemoved before the patches go out (finalizer expectations) */
		if ((r = expect_fin_removals(s, rmp, nrm)) < 0)
			goto out;
		rm_err = remove_finalizers(s, rmp, nrm, ok);
		for (size_t i = 0; i < nrm; i++) {
			char pk[512];
			snprintf(pk, sizeof(pk), "%s/%s", s->ns, rmp[i]->name);
			if (!ok[i])
				rs_exp_deletion_failed(s->c->fin, s->key, pk);
		}
		rs_exp_settle(s->c->fin, s->key);
		for (size_t i = 0; i < nrm; i++)
			if (ok[i])
				for (size_t k = 0; k < with_fin.n; k++)
					if (with_fin.v[k] == rmp[i]->uid)
						with_fin.v[k] = "";
	}
	if (clean_uncounted(s, &with_fin))
		flush = true;
	if (rm_err && flush) {
		if ((r = update_status(s)) == 0)
			record_finished(s);
		goto out;
	}
	if (rm_err) {
		r = rm_err;
		goto out;
	}
	/* enactJobFinished */
	if (!reached_max && s->fin.type && uncounted_len(s, "succeeded") == 0 &&
	    uncounted_len(s, "failed") == 0 && s->terminating == 0) {
		cond_ensure(s->status, s->fin.type, s->fin.status, s->fin.reason, s->fin.message,
		            now);
		if (!strcmp(s->fin.type, "Complete")) {
			const char *lt = str_at(find_cond(s->status, "Complete"),
			                        "lastTransitionTime", NULL);
			if (lt)
				set_str(s->status, "completionTime", lt);
		}
		finished = flush = true;
	}
	if (flush) {
		if ((r = update_status(s)) < 0)
			goto out;
		record_finished(s);
		if (finished) {
			job_metrics_finished(s->c->met, s->indexed,
			                     job_metrics_reason(s->fin.reason));
			if (!strcmp(s->fin.type, "Complete")) {
				int64_t sc = 0;
				int_at(s->status, "succeeded", NULL, &sc);
				if (s->has_completions && sc > s->completions)
					event(s, KCMD_EVENT_WARNING, "TooManySucceededPods", "%s",
					      "Too many succeeded pods running after completion "
					      "count "
					      "reached");
				event(s, KCMD_EVENT_NORMAL, "Completed", "%s", "Job completed");
			} else {
				event(s, KCMD_EVENT_WARNING, s->fin.reason, "%s", s->fin.message);
			}
		}
	}
out:
	free(with_fin.v);
	free(rmp);
	free(ok);
	free(new_si);
	(void)old_s;
	(void)old_f;
	return r;
}

/* Reads the failed pods that still carry the finalizer (the ones not counted yet) whole, for
 * what the typed record lacks: their container statuses and conditions (the podFailurePolicy)
 * and, for a Job with backoffLimitPerIndex, the index failure count annotations. Each is read
 * with a LIST by name (the job-controller role lists pods; it may not get them). */
static int eval_failed(struct sj *s)
{
	for (size_t i = 0; (s->pfp || s->per_index) && i < s->n_pods; i++) {
		struct job_pod *p = &s->pods[i];
		struct kube_response resp = {0};
		char fs[300];
		int r;

		if (!p->tracking || p->pfp_done || !job_pod_failed(p, s->only_replace_failed))
			continue;
		if (s->pfp ? p->phase != KUBE_POD_FAILED : !valid_index(s, p))
			continue;
		snprintf(fs, sizeof(fs), "metadata.name=%s", p->name);
		struct kube_request rq = {.verb = KUBE_LIST,
		                          .version = "v1",
		                          .resource = "pods",
		                          .ns = s->ns,
		                          .field_selector = fs};
		r = kube_client_request(s->c->ctx->kc, &rq, NULL, NULL, &resp);
		if (r < 0) {
			kube_response_clear(&resp);
			return r;
		}
		cJSON *list = resp.body ? cJSON_Parse(resp.body) : NULL;
		kube_response_clear(&resp);
		cJSON *items = obj_at(list, "items", NULL);
		cJSON *pod = cJSON_IsArray(items) ? items->child : NULL;
		const char *uid = str_at(pod, "metadata", "uid");
		if (pod && uid && !strcmp(uid, p->uid) && s->pfp) {
			r = job_pfp_match(s->pfp, pod, &p->pfp_count, &p->pfp_msg);
			if (r < 0) {
				cJSON_Delete(list);
				return r;
			}
			p->pfp_action = r;
		}
		if (pod && uid && !strcmp(uid, p->uid) && s->per_index) {
			cJSON *ann = obj_at(pod, "metadata", "annotations");
			p->fail_count = job_parse_int32(str_at(ann, JOB_INDEX_FAILURE_KEY, NULL));
			p->ign_count = job_parse_int32(str_at(ann, JOB_INDEX_IGNORED_KEY, NULL));
		}
		p->pfp_done = true; /* a pod gone since is not matched, as a pod without statuses */
		cJSON_Delete(list);
	}
	return 0;
}

/* ---- syncJob --------------------------------------------------------------------------------- */
static bool job_finished(cJSON *status)
{
	return cond_true(status, "Complete") || cond_true(status, "Failed");
}

static int read_spec(struct sj *s)
{
	cJSON *spec = obj_at(s->job, "spec", NULL);
	const char *mode = str_at(spec, "completionMode", NULL);
	const char *prp = str_at(spec, "podReplacementPolicy", NULL);
	cJSON *susp = obj_at(spec, "suspend", NULL);

	s->indexed = mode && !strcmp(mode, "Indexed");
	s->parallelism = 1;
	int_at(spec, "parallelism", NULL, &s->parallelism);
	s->has_completions = int_at(spec, "completions", NULL, &s->completions);
	s->backoff_limit = 6;
	int_at(spec, "backoffLimit", NULL, &s->backoff_limit);
	s->has_ads = int_at(spec, "activeDeadlineSeconds", NULL, &s->ads);
	s->suspend = cJSON_IsTrue(susp);
	s->deleting = str_at(s->job, "metadata", "deletionTimestamp") != NULL;
	s->restart_policy = str_at(obj_at(spec, "template", "spec"), "restartPolicy", NULL);
	s->per_index = int_at(spec, "backoffLimitPerIndex", NULL, &s->blpi);
	s->has_mfi = int_at(spec, "maxFailedIndexes", NULL, &s->mfi);
	s->pfp = obj_at(spec, "podFailurePolicy", NULL);
	s->sel = obj_at(spec, "selector", NULL);
	if (!cJSON_IsObject(s->pfp))
		s->pfp = NULL;
	s->only_replace_failed = (prp && !strcmp(prp, "Failed")) || s->pfp;
	s->status = ensure_obj(s->job, "status");
	if (!s->status)
		return -ENOMEM;
	if (s->indexed && !s->has_completions)
		return -EINVAL; /* validation requires completions for Indexed Jobs */
	s->per_index = s->per_index && s->indexed; /* validation: only Indexed Jobs have it */
	return 0;
}

static kube_time_t status_time(struct sj *s, const char *field)
{
	const char *v = str_at(s->status, field, NULL);
	kube_time_t t = 0;

	if (v)
		kube_time_parse(v, strlen(v), &t);
	return t;
}

/* The orphans the claim chose are adopted; the adopted ones count with the finalizer (as
 * upstream's getPodsForJob sets it in memory), the others are dropped. The first error fails
 * the sync, as ClaimPods' aggregated error does. */
static int adopt_orphans(struct sj *s)
{
	size_t k = 0;
	int err = 0;

	for (size_t i = 0; i < s->n_pods; i++) {
		struct job_pod *p = &s->pods[i];
		if (p->adopt) {
			int r = adopt_pod(s, p->name, p->uid);
			p->adopt = false;
			if (r < 0) {
				if (r != -ENOENT && !err)
					err = r;
				free(p->name);
				free(p->uid);
				free(p->pfp_msg);
				free(p->ctl_uid);
				continue;
			}
			p->tracking = true;
		}
		s->pods[k++] = *p;
	}
	s->n_pods = k;
	return err;
}

static void sync_job(struct sj *s)
{
	struct jc *c = s->c;
	struct shm_obj obj = SHM_OBJ_INIT;
	struct shm_object_view view;
	struct rs_exp_state st;
	int r;

	/* the stores' last synced versions, read before the objects (LastStoreSyncResourceVersion)
	 */
	struct shm_type_info ti[RS_EXP_CONS_RESOURCES];
	const char *read_rv[RS_EXP_CONS_RESOURCES] = {NULL, NULL};
	if (shm_reader_type_info(c->ctx->arena, (uint16_t)c->pod_type, &ti[JOB_CONS_PODS]) == 0)
		read_rv[JOB_CONS_PODS] = ti[JOB_CONS_PODS].rv;
	if (shm_reader_type_info(c->ctx->arena, (uint16_t)c->job_type, &ti[JOB_CONS_JOBS]) == 0)
		read_rv[JOB_CONS_JOBS] = ti[JOB_CONS_JOBS].rv;
	if (c->stale_consistency) {
		/* consistencyStore.EnsureReady: the cache must have seen our own last writes */
		char msg[256];
		if (job_consistency_ready(c->exp, s->key, read_rv, c->met, msg, sizeof(msg)) == 1) {
			log_v(2, "%s: skipping sync, the cache is older than our last write: %s",
			      s->key, msg);
			/* as upstream returns the ConsistencyError: requeued rate limited */
			s->err = -EAGAIN;
			return;
		}
	}
	if (seam_ns(c->cache_miss_ns, s->ns) || seam_ns(c->unconfirmed_ns, s->ns))
		r = -ENOENT; /* test seam: a cache that lacks the Job */
	else
		r = shm_reader_get(c->ctx->arena, (uint16_t)c->job_type, s->ns, s->name, &obj);
	if (r == -ENOENT) {
		/* "Job has been deleted" by the cache: its tracked pods are orphans once a live GET
		 * confirms it (cleanup_orphans); while the Job exists, nothing is forgotten */
		s->err = cleanup_orphans(s, NULL, NULL);
		if (s->err < 0)
			return; /* retried: the expectations go once the Job is known to be gone */
		rs_exp_delete(c->exp, s->key); /* DeleteExpectations and consistencyStore.Clear */
		rs_exp_delete(c->fin, s->key);
		return;
	}
	if (r < 0) {
		s->err = r;
		return;
	}
	r = shm_object_view_init(&obj, &view);
	if (r == 0 && !(s->job = cJSON_ParseWithLength(view.o.raw, view.o.raw_len)))
		r = -EBADMSG;
	shm_object_view_free(&view);
	if (r < 0) {
		log_error("%s: unreadable Job record: %s", s->key, strerror(-r));
		return;
	}
	const char *uid = str_at(s->job, "metadata", "uid");
	snprintf(s->uid, sizeof(s->uid), "%s", uid ? uid : "");
	const char *mb = str_at(obj_at(s->job, "spec", NULL), "managedBy", NULL);
	if (mb && strcmp(mb, JOB_MANAGER) != 0) {
		log_v(2, "%s: skip syncing the job as it is managed by an external controller %s",
		      s->key, mb);
		return;
	}
	if ((r = read_spec(s)) < 0) {
		log_v(2, "%s: not synced: %s", s->key, strerror(-r));
		return;
	}
	if (job_finished(s->status)) {
		/* consistencyStore.Clear: a finished Job is not synced again (a NULL read_rv reads
		 * every written version as ready, which clears the record) */
		if (c->stale_consistency)
			(void)rs_exp_ensure_ready(c->exp, s->key, NULL, NULL);
		/* the finished Job's pods are orphans now (upstream's isPodOrphaned) */
		s->err = cleanup_orphans(s, NULL, s->uid);
		return;
	}
	/* pods of an older Job of the same name (or adopted by nobody) lose their finalizer; the
	 * live Job being their controller means this cached Job is stale: nothing is done */
	if ((r = cleanup_orphans(s, s->uid, NULL)) == -EAGAIN) {
		s->err = r;
		return;
	} else if (r < 0) {
		log_v(2, "%s: orphan pods: %s", s->key, strerror(-r));
	}
	const char *mode = str_at(obj_at(s->job, "spec", NULL), "completionMode", NULL);
	if (mode && strcmp(mode, "NonIndexed") && strcmp(mode, "Indexed")) {
		event(s, KCMD_EVENT_WARNING, "UnknownCompletionMode", "%s",
		      "Skipped Job sync because completion mode is unknown");
		return;
	}
	struct rs_exp_state fst;
	if (!rs_exp_satisfied(c->fin, s->key, rs_exp_now(), &fst)) {
		/* finalizer removals of the last sync not seen yet: wait for the cache (the pod
		 * updates queue the key again; the recheck covers a dead worker's record) */
		requeue(s,
		        fst.recheck_after_ns > 0 ? (uint64_t)fst.recheck_after_ns / 1000 : 1000000);
		return;
	}
	s->counted = true;
	s->action = JOB_M_RECONCILING;
	s->satisfied = rs_exp_satisfied(c->exp, s->key, rs_exp_now(), &st);
	if (!s->satisfied && st.recheck_after_ns > 0)
		requeue(s, (uint64_t)st.recheck_after_ns / 1000);

	/* getPodsForJob: every pod of the namespace, claimed */
	struct list_ud lu = {s, 0, true};
	r = shm_reader_list_ns(c->ctx->arena, (uint16_t)c->pod_type, s->ns, pod_visit, &lu);
	if (r >= 0 && lu.err == 0)
		r = adopt_orphans(s);
	if (r < 0 || lu.err < 0) {
		s->err = r < 0 ? r : lu.err;
		return;
	}
	struct job_pod **act = calloc(s->n_pods ? s->n_pods : 1, sizeof(*act));
	size_t n_act = 0;
	if (!act) {
		s->err = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < s->n_pods; i++) {
		if (job_pod_active(&s->pods[i])) {
			act[n_act++] = &s->pods[i];
			s->ready += s->pods[i].ready;
		}
		s->terminating += job_pod_terminating(&s->pods[i]);
	}
	int64_t active = (int64_t)n_act;
	if ((r = eval_failed(s)) < 0) {
		s->err = r;
		free(act);
		return;
	}
	cJSON *unc = obj_at(s->status, "uncountedTerminatedPods", NULL);
	if (uidset_of(obj_at(unc, "succeeded", NULL), &s->unc_s) < 0 ||
	    uidset_of(obj_at(unc, "failed", NULL), &s->unc_f) < 0) {
		s->err = -ENOMEM;
		free(act);
		return;
	}
	/* getNewFinishedPods */
	int64_t new_s = 0, new_f = 0, st_s = 0, st_f = 0;
	for (size_t i = 0; i < s->n_pods; i++) {
		struct job_pod *p = &s->pods[i];
		if (!p->tracking || (s->indexed && !valid_index(s, p)))
			continue;
		if (p->phase == KUBE_POD_SUCCEEDED && !uid_in(&s->unc_s, p->uid))
			new_s++;
		if (job_pod_failed(p, s->only_replace_failed) && !uid_in(&s->unc_f, p->uid) &&
		    p->pfp_count)
			new_f++;
	}
	int_at(s->status, "succeeded", NULL, &st_s);
	int_at(s->status, "failed", NULL, &st_f);
	s->succeeded = st_s + new_s + (int64_t)s->unc_s.n;
	s->failed = st_f + new_f + (int64_t)s->unc_f.n;

	kube_time_t now = kube_time_now();
	char ts[KUBE_TIME_BUF];
	if (!str_at(s->status, "startTime", NULL) && !s->suspend) {
		time_str(now, ts);
		set_str(s->status, "startTime", ts);
	}
	kube_time_t start = status_time(s, "startTime");

	bool exceeds = s->failed > s->backoff_limit;
	cJSON *scm = find_cond(s->status, "SuccessCriteriaMet");
	if (scm && cond_true(s->status, "SuccessCriteriaMet")) {
		set_fin(s, "SuccessCriteriaMet", str_at(scm, "reason", NULL),
		        str_at(scm, "message", NULL));
	} else {
		cJSON *ft = find_cond(s->status, "FailureTarget");
		if (ft && cond_true(s->status, "FailureTarget"))
			set_fin(s, "Failed", str_at(ft, "reason", NULL),
			        str_at(ft, "message", NULL));
		for (size_t i = 0; !s->fin.type && s->pfp && i < s->n_pods; i++)
			if (s->pods[i].pfp_action == JOB_PFP_FAIL_JOB && s->pods[i].pfp_msg &&
			    job_pod_failed(&s->pods[i], s->only_replace_failed))
				set_fin(s, "FailureTarget", "PodFailurePolicy", s->pods[i].pfp_msg);
	}
	if (!s->fin.type) {
		bool past_on_failure = false;
		if (s->restart_policy && !strcmp(s->restart_policy, "OnFailure")) {
			int64_t restarts = 0;
			for (size_t i = 0; i < s->n_pods; i++)
				if (s->pods[i].phase == KUBE_POD_RUNNING ||
				    s->pods[i].phase == KUBE_POD_PENDING)
					restarts += s->pods[i].restarts;
			past_on_failure =
			        s->backoff_limit == 0 ? restarts > 0 : restarts >= s->backoff_limit;
		}
		if (exceeds || past_on_failure) {
			set_fin(s, "FailureTarget", "BackoffLimitExceeded",
			        "Job has reached the specified backoff limit");
		} else if (s->has_ads && start && !s->suspend) {
			int64_t left_ns = s->ads * 1000000000 - (now - start);
			if (left_ns <= 0)
				set_fin(s, "FailureTarget", "DeadlineExceeded",
				        "Job was active longer than specified deadline");
			else
				requeue(s, (uint64_t)left_ns / 1000);
		}
	}
	if (s->indexed) {
		const char *ci = str_at(s->status, "completedIndexes", NULL);
		int64_t *ns_ix = calloc(s->n_pods + 1, sizeof(*ns_ix));
		size_t nn = 0;
		if (!ns_ix || job_iv_parse(ci, s->completions, &s->prev_si) < 0) {
			free(ns_ix);
			free(act);
			s->err = -ENOMEM;
			return;
		}
		for (size_t i = 0; i < s->n_pods; i++) {
			struct job_pod *p = &s->pods[i];
			if (p->phase == KUBE_POD_SUCCEEDED && valid_index(s, p) && p->tracking)
				ns_ix[nn++] = p->index;
		}
		qsort(ns_ix, nn, sizeof(*ns_ix), cmp_i64);
		r = job_iv_with(&s->prev_si, ns_ix, nn, &s->si);
		free(ns_ix);
		if (r < 0) {
			free(act);
			s->err = r;
			return;
		}
		s->succeeded = job_iv_total(&s->si);
		if (s->per_index) {
			/* calculateFailedIndexes, then the failure scenarios of
			 * backoffLimitPerIndex */
			struct job_intervals prev_fi = {0};
			const char *fis = str_at(s->status, "failedIndexes", NULL);
			r = job_iv_parse(fis, s->completions, &prev_fi);
			if (r == 0)
				r = job_failed_indexes(&prev_fi, s->pods, s->n_pods, s->completions,
				                       s->only_replace_failed, s->pfp != NULL,
				                       s->blpi, &s->fi);
			job_iv_free(&prev_fi);
			if (r < 0) {
				free(act);
				s->err = r;
				return;
			}
			int64_t nfi = job_iv_total(&s->fi);
			if (!s->fin.type) {
				if (s->has_mfi && nfi > s->mfi)
					set_fin(s, "FailureTarget", "MaxFailedIndexesExceeded",
					        "Job has exceeded the specified maximal number of "
					        "failed indexes");
				else if (nfi > 0 && nfi + s->succeeded >= s->completions)
					set_fin(s, "FailureTarget", "FailedIndexes",
					        "Job has failed indexes");
			}
			job_delayed_deletion(s->pods, s->n_pods, s->completions,
			                     s->only_replace_failed, &s->si, &s->fi);
		}
		char spm[64];
		cJSON *sp = obj_at(s->job, "spec", "successPolicy");
		if (!s->fin.type && cJSON_IsObject(sp) &&
		    job_success_policy_match(sp, s->completions, &s->si, spm, sizeof(spm)))
			set_fin(s, "SuccessCriteriaMet", "SuccessPolicy", spm);
	}
	bool suspend_changed = false;
	int manage_err = 0;
	if (s->fin.type) {
		int64_t deleted = 0, deleted_ready = 0;
		manage_err = delete_pods(s, act, n_act, false, false, &deleted, &deleted_ready);
		if (deleted != active || !s->satisfied)
			s->fin.type = NULL;
		active -= deleted;
		s->terminating += deleted;
		s->ready -= deleted_ready;
	} else {
		bool called = false;
		if (s->satisfied && !s->deleting) {
			active = manage_job(s, act, n_act, &manage_err);
			called = true;
		}
		bool complete = !s->has_completions ? s->succeeded > 0 && active == 0
		                                    : s->succeeded >= s->completions && active == 0;
		if (complete) {
			set_fin(s, "SuccessCriteriaMet", "CompletionsReached",
			        "Reached expected number of succeeded pods");
		} else if (called) {
			if (s->suspend) {
				if (cond_ensure(s->status, "Suspended", "True", "JobSuspended",
				                "Job suspended", now)) {
					suspend_changed = true;
					event(s, KCMD_EVENT_NORMAL, "Suspended", "%s",
					      "Job suspended");
				}
			} else if (cond_ensure(s->status, "Suspended", "False", "JobResumed",
			                       "Job resumed", now)) {
				suspend_changed = true;
				event(s, KCMD_EVENT_NORMAL, "Resumed", "%s", "Job resumed");
				time_str(now, ts);
				set_str(s->status, "startTime", ts);
			}
		}
	}
	free(act);
	int64_t cur_active = 0, cur_ready = -1, cur_term = -1;
	int_at(s->status, "active", NULL, &cur_active);
	int_at(s->status, "ready", NULL, &cur_ready);
	int_at(s->status, "terminating", NULL, &cur_term);
	bool needs = suspend_changed || active != cur_active || s->ready != cur_ready ||
	             s->terminating != cur_term;
	set_num(s->status, "active", (double)active);
	set_num(s->status, "ready", (double)s->ready);
	set_num(s->status, "terminating", (double)s->terminating);
	if ((r = track_status(s, needs)) < 0) {
		s->err = r;
		return;
	}
	s->err = manage_err;
}

static void jc_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct jc *c = state;
	struct sj s = {.c = c, .key = key};

	(void)q;
	*res = (struct wk_result){0}; /* Forget unless told otherwise */
	if (c->pod_type < 0)
		c->pod_type = shm_reader_find_type(c->ctx->arena, "", "v1", "pods");
	if (c->job_type < 0)
		c->job_type = shm_reader_find_type(c->ctx->arena, "batch", "v1", "jobs");
	if (c->pod_type < 0 || c->job_type < 0) {
		res->err = -EAGAIN;
		return;
	}
	/* upstream's workers start once the Job and pod informers have synced
	 * (WaitForNamedCacheSync): before that, a Job not listed yet would read as deleted and its
	 * running pods as orphans, losing their tracking finalizer (found by
	 * TestHandover_KcmToKcmdAndBack) */
	if (kcmd_cache_synced(c->ctx->arena, "batch", "jobs") != 1 ||
	    kcmd_cache_synced(c->ctx->arena, "", "pods") != 1) {
		res->err = -EAGAIN;
		return;
	}
	if (kcmd_key_split(key, s.ns, sizeof(s.ns), s.name, sizeof(s.name)) < 0 || !*s.ns) {
		log_error("invalid job key %s: either namespace or name is missing", key);
		return;
	}
	kube_time_t t0 = kube_time_now();
	sync_job(&s);
	if (s.counted) {
		job_metrics_sync(c->met, s.indexed, s.err < 0, s.action);
		job_metrics_duration(c->met, s.indexed, s.err < 0, s.action,
		                     (double)(kube_time_now() - t0) / 1e9);
	}
	if (s.err < 0)
		log_v(2, "syncing job %s: %s", key, strerror(-s.err));
	res->err = s.err;
	if (s.err == 0 && s.requeue_us) {
		res->requeue_after = true;
		res->after_usec = s.requeue_us;
	}
	cJSON_Delete(s.job);
	pods_free(&s);
	uidset_free(&s.unc_s);
	uidset_free(&s.unc_f);
	job_iv_free(&s.prev_si);
	job_iv_free(&s.si);
	job_iv_free(&s.fi);
}

static int jc_init(struct wk_ctx *ctx, void **ret)
{
	struct jc *c = calloc(1, sizeof(*c));
	int r;

	if (!c)
		return -ENOMEM;
	c->ctx = ctx;
	c->pod_type = c->job_type = -1;
	c->backoff_us = kcmd_flag_duration_us(ctx->flags, "job-pod-failure-backoff");
	c->backoff_max_us = kcmd_flag_duration_us(ctx->flags, "job-pod-failure-max-backoff");
	if (!c->backoff_us)
		c->backoff_us = JOB_BACKOFF_DEFAULT_US;
	if (!c->backoff_max_us)
		c->backoff_max_us = JOB_BACKOFF_MAX_US;
	if (ctx->expectations_fd < 0) {
		free(c);
		return -EBADF;
	}
	r = rs_exp_attach(ctx->expectations_fd, RS_EXP_WORKER, rs_exp_now(), &c->exp);
	if (r < 0) {
		free(c);
		return r;
	}
	int ffd = kcmd_env_fd("KCMD_JOB_FINALIZER_EXPECTATIONS_FD");
	if (ffd < 0 || (r = rs_exp_attach(ffd, RS_EXP_WORKER, rs_exp_now(), &c->fin)) < 0) {
		rs_exp_detach(c->exp);
		free(c);
		return ffd < 0 ? -EBADF : r;
	}
	c->met = kcmd_metrics_get(); /* NULL without KCMD_METRICS_FD: nothing counted */
	/* upstream's gate depends on AtomicFIFO (the informer behaviour the check relies on) */
	c->stale_consistency = kcmd_feature_enabled(KCMD_FEAT_STALE_CONSISTENCY_JOB) &&
	                       kcmd_feature_enabled(KCMD_FEAT_ATOMIC_FIFO);
	const char *v = getenv("KCMD_TEST_JOB_CACHE_MISS_NS");
	if (v && *v) {
		c->cache_miss_ns = v;
		log_warning("KCMD_TEST_JOB_CACHE_MISS_NS=%s: Jobs there read as missing from the "
		            "cache (a test seam)",
		            v);
	}
	v = getenv("KCMD_TEST_JOB_UNCONFIRMED_NS");
	if (v && *v) {
		c->unconfirmed_ns = v;
		log_warning("KCMD_TEST_JOB_UNCONFIRMED_NS=%s: Jobs there read as missing from the "
		            "cache and their pods' finalizers go without a live GET (a test seam)",
		            v);
	}
	*ret = c;
	return 0;
}

static void jc_fini(void *state)
{
	struct jc *c = state;

	if (c) {
		rs_exp_detach(c->exp);
		rs_exp_detach(c->fin);
		free(c);
	}
}

static const char *const jc_queues[] = {"job", NULL};

const struct wk_controller wk_job_controller = {
        .name = JOB_CONTROLLER,
        .queues = jc_queues,
        .init = jc_init,
        .sync = jc_sync,
        .fini = jc_fini,
};
