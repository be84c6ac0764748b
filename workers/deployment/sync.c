/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/deployment/sync.c: syncDeployment (upstream pkg/controller/deployment, v1.37.2) in a
 * kcmd-worker, over cJSON trees.
 *
 * The Deployment is read from the cache (its JSON, KCMD_CACHE_OBJECT), the pods from the cache's
 * pod records, and its ReplicaSets from the cache's typed ReplicaSet records through the
 * namespace index, as upstream's rsLister: no LIST per sync. The record keeps every annotation
 * and spec.template verbatim (record version 5, shm/records.h); each is rebuilt as the JSON
 * subset the sync reads (rsjson.c; docs/deployment.md). The arithmetic is plan.c's; template
 * identity is kube_pod_template_equal_ignore_hash and the hash kube_pod_template_hash. Writes: POST
 * of a new ReplicaSet, merge PATCH of a ReplicaSet's spec.replicas with its desired/max-replicas
 * annotations and of the new one's annotations (SetNewReplicaSetAnnotations), strategic-merge
 * PATCH of ownerReferences to adopt and release, DELETE of old ReplicaSets beyond
 * revisionHistoryLimit, PATCH of the Deployment's revision annotation, PUT of the Deployment to
 * roll back, PUT of its status; Events ScalingReplicaSet, SelectingAll, RollbackDone,
 * RollbackRevisionNotFound, RollbackTemplateUnchanged, ReplicaSetCreateError.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcmd/cache.h"
#include "kcmd/client.h"
#include "kcmd/handlers.h"
#include "kube/client.h"
#include "kube/deephash.h"
#include "kube/model.h"
#include "lib/features.h"
#include "lib/log.h"
#include "shm/record-model.h"
#include "workers/deployment/controller.h"
#include "workers/deployment/match.h"
#include "workers/deployment/plan.h"
#include "workers/deployment/rsjson.h"

#define A_REV         "deployment.kubernetes.io/revision"
#define A_DESIRED     "deployment.kubernetes.io/desired-replicas"
#define A_MAX         "deployment.kubernetes.io/max-replicas"
#define A_REV_HISTORY "deployment.kubernetes.io/revision-history"
#define A_ROLLBACK    "deprecated.deployment.rollback.to"
#define HASH_KEY      "pod-template-hash"
#define MAX_RS        512 /* ReplicaSets per Deployment the sync handles; more: the sync fails */

struct dpc {
	struct wk_ctx *ctx;
	bool synced;
};

struct sd {
	struct dpc *c;
	const char *key;
	char ns[254], name[254];
	cJSON *d;       /* the Deployment (its status edited in place) */
	cJSON *orig_st; /* its status as read */
	cJSON *rslist;  /* the namespace's ReplicaSets */
	cJSON *rs[MAX_RS];
	struct dp_rs info[MAX_RS];
	size_t n;
	int new_ix; /* index into rs[], -1: none */
	struct dp_deployment dd;
	const char *uid;
	char *tmpl; /* spec.template printed */
	bool can_adopt_checked;
	int can_adopt_err;
	cJSON *created; /* the ReplicaSet this sync created */
};

/* ---- cJSON helpers -------------------------------------------------------------------------- */
static cJSON *get(cJSON *o, const char *k)
{
	return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

static cJSON *path2(cJSON *o, const char *a, const char *b)
{
	return get(get(o, a), b);
}

static const char *str(cJSON *o, const char *k)
{
	cJSON *v = get(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int64_t num(cJSON *o, const char *k, int64_t def)
{
	cJSON *v = get(o, k);
	return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : def;
}

static cJSON *ensure(cJSON *o, const char *k)
{
	cJSON *v = get(o, k);
	if (!cJSON_IsObject(v)) {
		cJSON_DeleteItemFromObjectCaseSensitive(o, k);
		v = cJSON_AddObjectToObject(o, k);
	}
	return v;
}

static void set_num(cJSON *o, const char *k, double v)
{
	cJSON *it = get(o, k);
	if (cJSON_IsNumber(it))
		cJSON_SetNumberValue(it, v);
	else {
		cJSON_DeleteItemFromObjectCaseSensitive(o, k);
		cJSON_AddNumberToObject(o, k, v);
	}
}

static void set_str(cJSON *o, const char *k, const char *v)
{
	cJSON_DeleteItemFromObjectCaseSensitive(o, k);
	cJSON_AddStringToObject(o, k, v);
}

static void intstr(cJSON *v, struct dp_intstr *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (cJSON_IsNumber(v)) {
		ret->set = true;
		ret->ival = (int32_t)v->valuedouble;
	} else if (cJSON_IsString(v) && strlen(v->valuestring) < sizeof(ret->str)) {
		ret->set = ret->is_str = true;
		strcpy(ret->str, v->valuestring);
	}
}

static int64_t parse_time(const char *s)
{
	kube_time_t t = 0;
	if (s && kube_time_parse(s, strlen(s), &t) == 0)
		return (int64_t)(t / 1000000000);
	return 0;
}

static bool controlled_by(cJSON *o, const char *uid, bool *has_controller)
{
	cJSON *refs = path2(o, "metadata", "ownerReferences");
	cJSON *r;
	*has_controller = false;
	cJSON_ArrayForEach(r, refs)
	{
		if (!cJSON_IsTrue(get(r, "controller")))
			continue;
		*has_controller = true;
		const char *u = str(r, "uid");
		return u && strcmp(u, uid) == 0;
	}
	return false;
}

static int request(struct sd *s, const char *method, const char *resource, const char *name,
                   const char *sub, cJSON *body, char **ret_body)
{
	char *b = body ? cJSON_PrintUnformatted(body) : NULL;
	struct kcmd_request rq = {.method = method,
	                          .group = strcmp(resource, "pods") ? "apps" : "",
	                          .version = "v1",
	                          .resource = resource,
	                          .ns = s->ns,
	                          .name = name,
	                          .subresource = sub,
	                          .body = b,
	                          /* creates and updates (the status too: the whole object) as
	                           * protobuf on a protobuf client, as client-go sends them */
	                          .body_kind = !strcmp(resource, "replicasets")   ? "ReplicaSet"
	                                       : !strcmp(resource, "deployments") ? "Deployment"
	                                                                          : NULL};
	int r;

	if (body && !b)
		return -ENOMEM;
	r = kcmd_kube_request(s->c->ctx->kc, &rq, NULL, ret_body);
	free(b);
	return r;
}

/* ---- the namespace's ReplicaSets from the shared cache (upstream's rsLister) ----------------
 * Each typed record rebuilt as the JSON the code below reads (rsjson.h). */
struct rs_walk {
	cJSON *items;
	const char *uid; /* the Deployment's */
	int err;
};

/* A ReplicaSet whose controller is another object is neither claimed nor released by this
 * Deployment (load_rs skips it, as upstream's ClaimReplicaSets): it is not rebuilt at all. */
static bool rs_others(const struct shm_obj *o, const char *uid)
{
	struct kcmd_owner_ref ref;
	for (size_t i = 0; kcmd_obj_owner(o, i, &ref) == 0; i++)
		if (ref.controller == 1)
			return !ref.uid || strcmp(ref.uid, uid) != 0;
	return false;
}

static int rs_visit(const struct shm_obj *o, void *ud)
{
	struct rs_walk *w = ud;
	struct shm_obj copy;
	struct shm_rs_view v;
	cJSON *j = NULL;
	int r;

	if (rs_others(o, w->uid))
		return 0;
	if ((r = shm_obj_dup(o, &copy)) < 0)
		return w->err = r;
	if ((r = shm_rs_view_init(&copy, &v)) == 0)
		r = dp_rs_to_json(&v.rs, &j);
	shm_rs_view_free(&v);
	if (r < 0)
		return w->err = r; /* an unreadable record: the sync fails and is retried */
	cJSON_AddItemToArray(w->items, j);
	return 0;
}

/* the namespace's ReplicaSets, from the arena's namespace index: {"items": [...]} */
static int list_rs(struct sd *s, cJSON **ret)
{
	struct rs_walk w = {.uid = s->uid};
	cJSON *l = cJSON_CreateObject();
	int r;

	*ret = NULL;
	if (!l || !(w.items = cJSON_AddArrayToObject(l, "items"))) {
		cJSON_Delete(l);
		return -ENOMEM;
	}
	r = kcmd_cache_list(s->c->ctx->arena, "apps", "replicasets", s->ns, rs_visit, &w);
	if (r >= 0 && w.err < 0)
		r = w.err;
	if (r < 0) {
		cJSON_Delete(l);
		return r;
	}
	*ret = l;
	return 0;
}

static void event(struct sd *s, const char *type, const char *reason, const char *msg)
{
	struct kcmd_object_ref ref = {.api_version = "apps/v1",
	                              .kind = "Deployment",
	                              .ns = s->ns,
	                              .name = s->name,
	                              .uid = s->uid};
	int r = kcmd_event_record(s->c->ctx->kc, DP_CONTROLLER, &ref, type, reason, "%s", msg);
	if (r < 0)
		log_v(2, "%s: recording event %s: %s", s->key, reason, strerror(-r));
}

/* a strategic-merge PATCH of a ReplicaSet (kcmd_kube_request's PATCH is a merge patch) */
static int patch_strategic(struct sd *s, const char *name, const char *body)
{
	struct kube_request rq = {.verb = KUBE_PATCH,
	                          .group = "apps",
	                          .version = "v1",
	                          .resource = "replicasets",
	                          .ns = s->ns,
	                          .name = name,
	                          .body = body,
	                          .body_len = strlen(body),
	                          .patch_type = KUBE_PATCH_STRATEGIC};
	struct kube_response resp = {0};
	int r = kube_client_request(s->c->ctx->kc, &rq, NULL, NULL, &resp);
	if (r == 0)
		r = resp.error.err;
	kube_response_clear(&resp);
	return r;
}

/* ---- reading -------------------------------------------------------------------------------- */
static void fill_info(struct sd *s, size_t i)
{
	cJSON *o = s->rs[i], *md = get(o, "metadata"), *ann = get(md, "annotations");
	struct dp_rs *x = &s->info[i];
	const char *v;
	char *end;

	memset(x, 0, sizeof(*x));
	x->name = str(md, "name");
	x->created = parse_time(str(md, "creationTimestamp"));
	x->replicas = (int32_t)num(get(o, "spec"), "replicas", 1);
	x->available = (int32_t)num(get(o, "status"), "availableReplicas", 0);
	x->max_replicas = x->desired = -1;
	if ((v = str(ann, A_MAX)))
		x->max_replicas = (int32_t)strtol(v, NULL, 10);
	if ((v = str(ann, A_DESIRED)))
		x->desired = (int32_t)strtol(v, NULL, 10);
	if ((v = str(ann, A_REV))) {
		x->revision = strtoll(v, &end, 10);
		x->revision_bad = !*v || *end;
	}
	x->deleting = str(md, "deletionTimestamp") != NULL;
	x->generation = num(md, "generation", 0);
	x->observed_generation = num(get(o, "status"), "observedGeneration", 0);
	x->status_replicas = (int32_t)num(get(o, "status"), "replicas", 0);
	x->ready = (int32_t)num(get(o, "status"), "readyReplicas", 0);
	x->has_terminating = get(get(o, "status"), "terminatingReplicas") != NULL;
	x->terminating = (int32_t)num(get(o, "status"), "terminatingReplicas", 0);
	x->is_new = (int)i == s->new_ix;
}

/* CanAdopt (RecheckDeletionTimestamp): once per sync, an uncached GET of the Deployment; adoption
 * is refused when it is gone, another object by now, or being deleted */
static int can_adopt(struct sd *s)
{
	char *body = NULL;

	if (s->can_adopt_checked)
		return s->can_adopt_err;
	s->can_adopt_checked = true;
	int r = request(s, "GET", "deployments", s->name, NULL, NULL, &body);
	if (r == 0) {
		cJSON *fresh = body ? cJSON_Parse(body) : NULL;
		cJSON *m = get(fresh, "metadata");
		if (!fresh)
			r = -EBADMSG;
		else if (!str(m, "uid") || strcmp(str(m, "uid"), s->uid) != 0 ||
		         str(m, "deletionTimestamp"))
			r = -ESTALE;
		cJSON_Delete(fresh);
	}
	free(body);
	/* not -ENOENT: that would read as "the ReplicaSet is gone" (upstream wraps the error) */
	return s->can_adopt_err = r == -ENOENT ? -ESTALE : r;
}

/* AdoptReplicaSet: a strategic-merge PATCH adding the controller reference (the ReplicaSet's
 * other owners kept), its uid as a precondition */
static int adopt(struct sd *s, cJSON *rs)
{
	char body[1400];
	int r = can_adopt(s);

	if (r < 0)
		return r;
	snprintf(body, sizeof(body),
	         "{\"metadata\":{\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":"
	         "\"Deployment\",\"name\":\"%s\",\"uid\":\"%s\",\"controller\":true,"
	         "\"blockOwnerDeletion\":true}],\"uid\":\"%s\"}}",
	         s->name, s->uid, str(get(rs, "metadata"), "uid"));
	return patch_strategic(s, str(get(rs, "metadata"), "name"), body);
}

/* ReleaseReplicaSet: a strategic-merge PATCH deleting this Deployment's ownerReference, the
 * ReplicaSet's uid as a precondition; NotFound and Invalid (no such reference, or another
 * object by that name) are ignored */
static int release(struct sd *s, cJSON *rs)
{
	char body[600];

	log_v(2, "%s: patching ReplicaSet %s to remove its controllerRef", s->key,
	      str(get(rs, "metadata"), "name"));
	snprintf(body, sizeof(body),
	         "{\"metadata\":{\"ownerReferences\":[{\"$patch\":\"delete\",\"uid\":\"%s\"}],"
	         "\"uid\":\"%s\"}}",
	         s->uid, str(get(rs, "metadata"), "uid"));
	int r = patch_strategic(s, str(get(rs, "metadata"), "name"), body);
	return r == -ENOENT || r == -EINVAL ? 0 : r;
}

/* getReplicaSetsForDeployment (ClaimReplicaSets): owned ReplicaSets that match, owned ones that
 * stopped matching released, orphans that match adopted; errors collected, the first returned
 * after every ReplicaSet was tried, as upstream's aggregate */
static int load_rs(struct sd *s)
{
	cJSON *sel = path2(s->d, "spec", "selector"), *it;
	bool deleting = str(get(s->d, "metadata"), "deletionTimestamp") != NULL;
	int r = list_rs(s, &s->rslist), err = 0;

	if (r < 0)
		return r;
	cJSON_ArrayForEach(it, get(s->rslist, "items"))
	{
		bool has_ctl, mine = controlled_by(it, s->uid, &has_ctl);
		bool match = dp_selector_matches(sel, path2(it, "metadata", "labels"));
		if (!str(get(it, "metadata"), "name") || !str(get(it, "metadata"), "uid"))
			continue;
		if (mine && !match) {
			if (!deleting && (r = release(s, it)) < 0 && !err)
				err = r;
			continue;
		}
		if (!mine) {
			if (has_ctl || !match || deleting ||
			    str(get(it, "metadata"), "deletionTimestamp"))
				continue;
			if ((r = adopt(s, it)) < 0) {
				if (r != -ENOENT && !err)
					err = r;
				continue;
			}
		}
		if (s->n == MAX_RS)
			return -E2BIG;
		s->rs[s->n++] = it;
	}
	return err;
}

/* FindNewReplicaSet: the oldest ReplicaSet whose template equals the Deployment's */
static void find_new(struct sd *s)
{
	int best = -1;

	s->new_ix = -1;
	for (size_t i = 0; i < s->n; i++) {
		char *t = cJSON_PrintUnformatted(path2(s->rs[i], "spec", "template"));
		bool eq = t && kube_pod_template_equal_ignore_hash(t, strlen(t), s->tmpl,
		                                                   strlen(s->tmpl)) == 1;
		free(t);
		if (!eq)
			continue;
		if (best < 0)
			best = (int)i;
		else {
			int64_t a = parse_time(str(get(s->rs[i], "metadata"), "creationTimestamp"));
			int64_t b =
			        parse_time(str(get(s->rs[best], "metadata"), "creationTimestamp"));
			const char *na = str(get(s->rs[i], "metadata"), "name");
			const char *nb = str(get(s->rs[best], "metadata"), "name");
			if (a < b || (a == b && strcmp(na, nb) < 0))
				best = (int)i;
		}
	}
	s->new_ix = best;
	for (size_t i = 0; i < s->n; i++)
		fill_info(s, i);
}

/* ---- writing -------------------------------------------------------------------------------- */
/* scaleReplicaSet: spec.replicas and the desired/max-replicas annotations */
static int scale_rs(struct sd *s, size_t i, int32_t size, bool *scaled)
{
	struct dp_rs *x = &s->info[i];
	int32_t max = s->dd.replicas + dp_max_surge(&s->dd);
	bool size_change = x->replicas != size;
	bool ann_change = x->desired != s->dd.replicas || x->max_replicas != max;
	char patch[256], msg[512];
	int r;

	if (scaled)
		*scaled = false;
	if (!size_change && !ann_change)
		return 0;
	snprintf(patch, sizeof(patch),
	         "{\"metadata\":{\"annotations\":{\"" A_DESIRED "\":\"%d\",\"" A_MAX
	         "\":\"%d\"}},\"spec\":{\"replicas\":%d}}",
	         (int)s->dd.replicas, (int)max, (int)size);
	cJSON *p = cJSON_Parse(patch);
	r = request(s, "PATCH", "replicasets", x->name, NULL, p, NULL);
	cJSON_Delete(p);
	if (r < 0)
		return r;
	if (size_change) {
		dp_scaling_message(msg, sizeof(msg), x->name, x->replicas, size);
		event(s, "Normal", "ScalingReplicaSet", msg);
	}
	x->replicas = size;
	x->desired = s->dd.replicas;
	x->max_replicas = max;
	if (scaled)
		*scaled = size_change;
	return 0;
}

/* SetDeploymentCondition */
static void set_cond(struct sd *s, const char *type, bool status, const char *reason,
                     const char *msg, bool keep_transition)
{
	cJSON *st = ensure(s->d, "status"), *conds = get(st, "conditions"), *c, *old = NULL;
	char now[KUBE_TIME_BUF];

	kube_time_format(kube_time_now(), now);
	if (!cJSON_IsArray(conds)) {
		cJSON_DeleteItemFromObjectCaseSensitive(st, "conditions");
		conds = cJSON_AddArrayToObject(st, "conditions");
	}
	cJSON_ArrayForEach(c, conds) if (str(c, "type") && strcmp(str(c, "type"), type) == 0) old =
	        c;
	const char *ss = status ? "True" : "False";
	if (old && str(old, "status") && strcmp(str(old, "status"), ss) == 0 &&
	    str(old, "reason") && strcmp(str(old, "reason"), reason) == 0 && !keep_transition)
		return;
	char *lt = NULL;
	if (old && str(old, "status") && strcmp(str(old, "status"), ss) == 0 &&
	    str(old, "lastTransitionTime"))
		lt = strdup(str(old, "lastTransitionTime"));
	c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "type", type);
	cJSON_AddStringToObject(c, "status", ss);
	cJSON_AddStringToObject(c, "lastUpdateTime", now);
	cJSON_AddStringToObject(c, "lastTransitionTime", lt ? lt : now);
	cJSON_AddStringToObject(c, "reason", reason);
	cJSON_AddStringToObject(c, "message", msg);
	free(lt);
	if (old) {
		int ix = 0;
		cJSON *x;
		cJSON_ArrayForEach(x, conds)
		{
			if (x == old)
				break;
			ix++;
		}
		cJSON_ReplaceItemInArray(conds, ix, c);
	} else {
		cJSON_AddItemToArray(conds, c);
	}
}

static void remove_cond(struct sd *s, const char *type)
{
	cJSON *conds = path2(s->d, "status", "conditions"), *c;
	int ix = 0;
	cJSON_ArrayForEach(c, conds)
	{
		if (str(c, "type") && strcmp(str(c, "type"), type) == 0) {
			cJSON_DeleteItemFromArray(conds, ix);
			return;
		}
		ix++;
	}
}

static struct dp_cond cur_cond(struct sd *s, const char *type)
{
	struct dp_cond c = {.reason = ""};
	cJSON *it;
	cJSON_ArrayForEach(it, path2(s->d, "status", "conditions"))
	{
		if (!str(it, "type") || strcmp(str(it, "type"), type) != 0)
			continue;
		c.present = true;
		c.status_true = str(it, "status") && strcmp(str(it, "status"), "True") == 0;
		c.reason = str(it, "reason") ? str(it, "reason") : "";
		c.last_update = parse_time(str(it, "lastUpdateTime"));
	}
	return c;
}

static bool has_deadline(struct sd *s, int32_t *secs)
{
	cJSON *v = path2(s->d, "spec", "progressDeadlineSeconds");
	if (!cJSON_IsNumber(v) || v->valuedouble >= 2147483647.0)
		return false;
	*secs = (int32_t)v->valuedouble;
	return true;
}

/* getNewReplicaSet: the existing one with its annotations brought up to date, or a new one */
/* The Deployment (its revision annotation and status) by a status PUT, as upstream's
 * UpdateStatus; the status written is then the one later writes compare with (upstream's
 * d.Status). */
static int put_status(struct sd *s)
{
	int r = request(s, "PUT", "deployments", s->name, "status", s->d, NULL);
	if (r < 0) {
		log_v(2, "%s: updating the status: %s", s->key, strerror(-r));
		return r;
	}
	cJSON_Delete(s->orig_st);
	s->orig_st = cJSON_Duplicate(ensure(s->d, "status"), true);
	return s->orig_st ? 0 : -ENOMEM;
}

static int get_new_rs(struct sd *s, bool create)
{
	char rev[24], hist[DP_REV_HISTORY_BUF], hash[KUBE_POD_TEMPLATE_HASH_MAX], buf[600];
	bool changed = false;
	int32_t secs;
	int64_t max_old = 0;
	int r;

	for (size_t i = 0; i < s->n; i++)
		if ((int)i != s->new_ix && !s->info[i].revision_bad &&
		    s->info[i].revision > max_old)
			max_old = s->info[i].revision;
	snprintf(buf, sizeof(buf), "%" PRId64, max_old + 1);
	if (s->new_ix >= 0) {
		struct dp_rs *x = &s->info[s->new_ix];
		cJSON *ann = path2(s->rs[s->new_ix], "metadata", "annotations"), *it;
		cJSON *p = cJSON_CreateObject(), *pa = NULL;
		bool ann_changed = false;
		int64_t mrs = num(get(s->d, "spec"), "minReadySeconds", 0);
		if (!p)
			return -ENOMEM;
		pa = cJSON_AddObjectToObject(cJSON_AddObjectToObject(p, "metadata"), "annotations");
		/* SetNewReplicaSetAnnotations(exists): the Deployment's annotations but the
		 * skipped ones, then the revision and, when it replaces one, revision-history */
		cJSON_ArrayForEach(it, path2(s->d, "metadata", "annotations"))
		{
			const char *cur = str(ann, it->string);
			if (!cJSON_IsString(it) || dp_annotation_skipped(it->string) ||
			    (cur && strcmp(cur, it->valuestring) == 0))
				continue;
			set_str(pa, it->string, it->valuestring);
			ann_changed = true;
		}
		const char *old_rev = str(ann, A_REV), *old_hist = str(ann, A_REV_HISTORY);
		r = dp_revision_update(old_rev, old_hist, buf, DP_REV_HISTORY_MAX_CHARS, rev, hist,
		                       &changed);
		if (r < 0) {
			/* upstream: no update of the annotations (the minReadySeconds one still
			 * carries the copies) */
			ann_changed = false;
		} else if (changed) {
			set_str(pa, A_REV, rev);
			if (old_rev && (!old_hist || strcmp(old_hist, hist) != 0))
				set_str(pa, A_REV_HISTORY, hist);
			ann_changed = true;
		}
		/* not the desired/max-replicas annotations (SetNewReplicaSetAnnotations with
		 * exists): scale() weighs each ReplicaSet by the max-replicas it had before */
		bool mrs_changed = num(get(s->rs[s->new_ix], "spec"), "minReadySeconds", 0) != mrs;
		if (mrs_changed)
			cJSON_AddNumberToObject(cJSON_AddObjectToObject(p, "spec"),
			                        "minReadySeconds", (double)mrs);
		r = 0;
		if (ann_changed || mrs_changed)
			r = request(s, "PATCH", "replicasets", x->name, NULL, p, NULL);
		cJSON_Delete(p);
		if (r < 0)
			return r;
		if (ann_changed || mrs_changed) {
			/* upstream returns the updated ReplicaSet here: the Deployment's revision
			 * follows on the sync that ReplicaSet's update event brings */
			if (changed)
				x->revision = strtoll(rev, NULL, 10);
			return 0;
		}
		/* SetDeploymentRevision and, with a progress deadline and no Progressing
		 * condition yet, FoundNewReplicaSet: written at once through the status endpoint
		 * (it keeps annotations; the deployment-controller's role may update
		 * deployments/status but not patch deployments), from the resourceVersion read,
		 * as in the create path below */
		const char *drev = str(path2(s->d, "metadata", "annotations"), A_REV);
		snprintf(rev, sizeof(rev), "%" PRId64, x->revision);
		bool needs = false;
		if (x->revision > 0 && (!drev || strcmp(drev, rev) != 0)) {
			set_str(ensure(ensure(s->d, "metadata"), "annotations"), A_REV, rev);
			needs = true;
		}
		if (has_deadline(s, &secs) && !cur_cond(s, "Progressing").present) {
			snprintf(buf, sizeof(buf), "Found new replica set \"%s\"", x->name);
			set_cond(s, "Progressing", true, "FoundNewReplicaSet", buf, false);
			needs = true;
		}
		return needs ? put_status(s) : 0;
	}
	if (!create)
		return 0;

	/* a new ReplicaSet */
	cJSON *cc = path2(s->d, "status", "collisionCount");
	int32_t coll = cJSON_IsNumber(cc) ? (int32_t)cc->valuedouble : 0;
	if ((r = kube_pod_template_hash(s->tmpl, strlen(s->tmpl), cJSON_IsNumber(cc) ? &coll : NULL,
	                                hash)) < 0)
		return r;
	cJSON *rs = cJSON_CreateObject(), *md = cJSON_AddObjectToObject(rs, "metadata");
	char rsname[300];
	snprintf(rsname, sizeof(rsname), "%s-%s", s->name, hash);
	cJSON_AddStringToObject(md, "name", rsname);
	cJSON_AddStringToObject(md, "namespace", s->ns);
	cJSON *tmpl = cJSON_Parse(s->tmpl);
	cJSON *tl = ensure(ensure(tmpl, "metadata"), "labels");
	set_str(tl, HASH_KEY, hash);
	cJSON_AddItemToObject(md, "labels", cJSON_Duplicate(tl, true));
	cJSON *ann = cJSON_AddObjectToObject(md, "annotations"), *it;
	cJSON_ArrayForEach(it, path2(s->d, "metadata", "annotations"))
	{
		if (cJSON_IsString(it) && !dp_annotation_skipped(it->string))
			cJSON_AddStringToObject(ann, it->string, it->valuestring);
	}
	int32_t max = s->dd.replicas + dp_max_surge(&s->dd);
	snprintf(buf, sizeof(buf), "%d", (int)s->dd.replicas);
	cJSON_AddStringToObject(ann, A_DESIRED, buf);
	snprintf(buf, sizeof(buf), "%d", (int)max);
	cJSON_AddStringToObject(ann, A_MAX, buf);
	snprintf(buf, sizeof(buf), "%" PRId64, max_old + 1);
	cJSON_AddStringToObject(ann, A_REV, buf);
	cJSON *refs = cJSON_AddArrayToObject(md, "ownerReferences"), *ref = cJSON_CreateObject();
	cJSON_AddStringToObject(ref, "apiVersion", "apps/v1");
	cJSON_AddStringToObject(ref, "kind", "Deployment");
	cJSON_AddStringToObject(ref, "name", s->name);
	cJSON_AddStringToObject(ref, "uid", s->uid);
	cJSON_AddBoolToObject(ref, "controller", true);
	cJSON_AddBoolToObject(ref, "blockOwnerDeletion", true);
	cJSON_AddItemToArray(refs, ref);
	/* NewRSNewReplicas with the new ReplicaSet at 0 */
	struct dp_rs nr = {.name = rsname, .is_new = true, .max_replicas = -1, .desired = -1};
	int32_t count = 0;
	if ((r = dp_new_rs_new_replicas(&s->dd, s->info, s->n, &nr, &count)) < 0) {
		cJSON_Delete(rs);
		cJSON_Delete(tmpl);
		return r;
	}
	cJSON *spec = cJSON_AddObjectToObject(rs, "spec");
	cJSON_AddNumberToObject(spec, "replicas", count);
	cJSON_AddNumberToObject(spec, "minReadySeconds",
	                        (double)num(get(s->d, "spec"), "minReadySeconds", 0));
	cJSON *sel = cJSON_Duplicate(path2(s->d, "spec", "selector"), true);
	set_str(ensure(sel, "matchLabels"), HASH_KEY, hash);
	cJSON_AddItemToObject(spec, "selector", sel);
	cJSON_AddItemToObject(spec, "template", tmpl);

	char *created = NULL;
	r = request(s, "POST", "replicasets", NULL, NULL, rs, &created);
	cJSON_Delete(rs);
	bool already = false;
	if (r == -EEXIST) {
		/* the name is taken: read it from the cache (upstream's lister; not there yet: the
		 * error, and the sync is retried); ours with the same template is the new one,
		 * anything else a hash collision */
		struct shm_obj *o = NULL;
		struct shm_rs_view v;
		cJSON *ex = NULL;
		free(created);
		created = NULL;
		r = kcmd_cache_get(s->c->ctx->arena, "apps", "replicasets", s->ns, rsname, &o);
		if (r < 0)
			return r == -ENOENT ? -EAGAIN : r;
		r = shm_rs_view_init(o, &v);
		kcmd_obj_free(o); /* its record moved into the view */
		if (r == 0)
			r = dp_rs_to_json(&v.rs, &ex);
		shm_rs_view_free(&v);
		if (r < 0)
			return r;
		bool has_ctl, mine = controlled_by(ex, s->uid, &has_ctl);
		char *t = cJSON_PrintUnformatted(path2(ex, "spec", "template"));
		bool eq = t && kube_pod_template_equal_ignore_hash(t, strlen(t), s->tmpl,
		                                                   strlen(s->tmpl)) == 1;
		free(t);
		if (!(mine && eq)) {
			cJSON_Delete(ex);
			set_num(ensure(s->d, "status"), "collisionCount", (double)coll + 1);
			log_v(2, "%s: hash collision on %s: collisionCount %d", s->key, rsname,
			      coll + 1);
			return -EEXIST; /* the caller writes the status and requeues */
		}
		created = cJSON_PrintUnformatted(ex);
		cJSON_Delete(ex);
		if (!created)
			return -ENOMEM;
		already = true;
		r = 0;
	}
	if (r < 0) {
		/* upstream: the message carries the error as Go prints it, for an API error its
		 * Status message; the condition is written at once (its error ignored) and a
		 * Warning recorded */
		cJSON *st = created ? cJSON_Parse(created) : NULL;
		const char *why = str(st, "message");
		char *msg = NULL;
		if (asprintf(&msg, "Failed to create new replica set \"%s\": %s", rsname,
		             why ? why : strerror(-r)) < 0)
			msg = NULL;
		cJSON_Delete(st);
		free(created);
		if (!msg)
			return -ENOMEM;
		if (has_deadline(s, &secs)) {
			set_cond(s, "Progressing", false, "ReplicaSetCreateError", msg, false);
			(void)request(s, "PUT", "deployments", s->name, "status", s->d, NULL);
		}
		event(s, "Warning", "ReplicaSetCreateError", msg);
		free(msg);
		return r;
	}
	cJSON *nrs = cJSON_Parse(created);
	free(created);
	if (!nrs || s->n == MAX_RS) {
		cJSON_Delete(nrs);
		return -ENOMEM;
	}
	s->created = nrs;
	s->rs[s->n] = nrs;
	s->new_ix = (int)s->n++;
	fill_info(s, (size_t)s->new_ix);
	if (!already && count > 0) {
		char msg[512];
		dp_scaling_message(msg, sizeof(msg), rsname, 0, count);
		event(s, "Normal", "ScalingReplicaSet", msg);
	}
	/* upstream then writes the status at once when the Deployment's revision annotation
	 * changes (SetDeploymentRevision: the status endpoint keeps annotations, it resets only
	 * spec and labels) or it has a progress deadline (NewReplicaSetCreated): a PUT of the
	 * status as it stands, its resourceVersion the one read, so that the status write at the
	 * end of this sync, from the same resourceVersion, meets a Conflict and the next sync
	 * writes it, as upstream's does */
	const char *drev = str(path2(s->d, "metadata", "annotations"), A_REV);
	snprintf(rev, sizeof(rev), "%" PRId64, max_old + 1);
	bool needs = !drev || strcmp(drev, rev) != 0;
	if (needs)
		set_str(ensure(ensure(s->d, "metadata"), "annotations"), A_REV, rev);
	if (!already && has_deadline(s, &secs)) {
		snprintf(buf, sizeof(buf), "Created new replica set \"%s\"", rsname);
		set_cond(s, "Progressing", true, "NewReplicaSetCreated", buf, false);
		needs = true;
	}
	return needs ? put_status(s) : 0;
}

/* PUT status when it changed */
static int write_status(struct sd *s)
{
	cJSON *st = ensure(s->d, "status");
	int r;

	if (s->orig_st && cJSON_Compare(s->orig_st, st, true))
		return 0;
	r = request(s, "PUT", "deployments", s->name, "status", s->d, NULL);
	if (r < 0)
		log_v(2, "%s: updating the status: %s", s->key, strerror(-r));
	return r;
}

/* calculateStatus into s->d's status (conditions: Available) */
static void calc_status(struct sd *s, struct dp_status *ret)
{
	cJSON *st = ensure(s->d, "status");
	char msg[64];

	dp_calc_status(&s->dd, s->info, s->n,
	               kcmd_feature_enabled(KCMD_FEAT_DEPLOYMENT_RS_TERMINATING_REPLICAS), ret);
	set_num(st, "observedGeneration", (double)num(get(s->d, "metadata"), "generation", 0));
	set_num(st, "replicas", ret->replicas);
	set_num(st, "updatedReplicas", ret->updated);
	set_num(st, "readyReplicas", ret->ready);
	set_num(st, "availableReplicas", ret->available);
	set_num(st, "unavailableReplicas", ret->unavailable);
	if (ret->has_terminating)
		set_num(st, "terminatingReplicas", ret->terminating);
	else
		cJSON_DeleteItemFromObjectCaseSensitive(st, "terminatingReplicas");
	/* zero counts are omitted by the apiserver (omitempty): drop them so comparing works */
	const char *const zs[] = {"replicas",          "updatedReplicas",     "readyReplicas",
	                          "availableReplicas", "unavailableReplicas", "observedGeneration"};
	for (size_t i = 0; i < sizeof(zs) / sizeof(zs[0]); i++)
		if (num(st, zs[i], 0) == 0)
			cJSON_DeleteItemFromObjectCaseSensitive(st, zs[i]);
	snprintf(msg, sizeof(msg), "Deployment %s minimum availability.",
	         ret->min_available ? "has" : "does not have");
	set_cond(s, "Available", ret->min_available,
	         ret->min_available ? "MinimumReplicasAvailable" : "MinimumReplicasUnavailable",
	         msg, false);
}

/* syncRolloutStatus (and requeueStuckDeployment) */
static int rollout_status(struct sd *s, struct wk_result *out)
{
	struct dp_status st;
	struct dp_progress_in in = {0};
	cJSON *ost = s->orig_st;
	char msg[600];

	in.spec_replicas = s->dd.replicas;
	in.has_deadline = has_deadline(s, &in.deadline_seconds);
	in.generation = num(get(s->d, "metadata"), "generation", 0);
	in.cur = cur_cond(s, "Progressing");
	in.old_replicas = (int32_t)num(ost, "replicas", 0);
	in.old_updated = (int32_t)num(ost, "updatedReplicas", 0);
	in.old_ready = (int32_t)num(ost, "readyReplicas", 0);
	in.old_available = (int32_t)num(ost, "availableReplicas", 0);
	in.now = (int64_t)(kube_time_now() / 1000000000);
	calc_status(s, &st);
	enum dp_progress p = dp_progress_decide(&in, &st);
	const char *nrs = s->new_ix >= 0 ? s->info[s->new_ix].name : NULL;
	dp_progress_message(msg, sizeof(msg), p, s->name, nrs);
	switch (p) {
	case DP_PROGRESS_COMPLETE:
		set_cond(s, "Progressing", true, "NewReplicaSetAvailable", msg, false);
		break;
	case DP_PROGRESS_UPDATED:
		set_cond(s, "Progressing", true, "ReplicaSetUpdated", msg, true);
		break;
	case DP_PROGRESS_TIMED_OUT:
		set_cond(s, "Progressing", false, "ProgressDeadlineExceeded", msg, false);
		break;
	case DP_PROGRESS_REMOVE:
		remove_cond(s, "Progressing");
		break;
	case DP_PROGRESS_KEEP:
		break;
	}
	int64_t after = dp_requeue_stuck_after(&in, &st);
	if (after > 0) {
		out->requeue_after = true;
		out->after_usec = (uint64_t)(after + 1) * 1000000u;
	}
	return write_status(s);
}

/* syncDeploymentStatus: status without the progress decision */
static int status_only(struct sd *s)
{
	struct dp_status st;
	calc_status(s, &st);
	return write_status(s);
}

static int cleanup(struct sd *s)
{
	cJSON *h = path2(s->d, "spec", "revisionHistoryLimit");
	struct dp_rs old[MAX_RS];
	bool del[MAX_RS] = {0};
	size_t n = 0;

	if (!cJSON_IsNumber(h))
		return 0;
	for (size_t i = 0; i < s->n; i++)
		if ((int)i != s->new_ix)
			old[n++] = s->info[i];
	dp_plan_cleanup(old, n, (int32_t)h->valuedouble, del);
	for (size_t i = 0; i < n; i++) {
		if (!del[i])
			continue;
		log_v(4, "%s: deleting old replica set %s", s->key, old[i].name);
		int r = request(s, "DELETE", "replicasets", old[i].name, NULL, NULL, NULL);
		if (r < 0 && r != -ENOENT)
			return r;
	}
	return 0;
}

/* sync(): scaling and, when paused, history cleanup */
static int do_scale(struct sd *s, bool paused, struct wk_result *out)
{
	struct dp_rs tmp[MAX_RS];
	int r = get_new_rs(s, false);

	(void)out;
	if (r < 0)
		return r;
	memcpy(tmp, s->info, s->n * sizeof(tmp[0]));
	bool all = dp_plan_scale(&s->dd, tmp, s->n);
	for (size_t k = 0; k < s->n; k++)
		for (size_t i = 0; i < s->n; i++) {
			if (strcmp(s->info[i].name, tmp[k].name) != 0)
				continue;
			struct dp_rs *x = &s->info[i];
			bool active = x->replicas > 0 || (int)i == s->new_ix;
			if (x->replicas != tmp[k].target || (all && active) ||
			    (tmp[k].target > 0 && x->desired != s->dd.replicas))
				if ((r = scale_rs(s, i, tmp[k].target, NULL)) < 0)
					return r;
		}
	if (paused && (r = cleanup(s)) < 0)
		return r;
	return status_only(s);
}

static bool is_scaling_event(struct sd *s)
{
	for (size_t i = 0; i < s->n; i++) {
		struct dp_rs *x = &s->info[i];
		/* FilterActiveReplicaSets: spec.replicas > 0 */
		if (x->replicas > 0 && x->desired >= 0 && x->desired != s->dd.replicas)
			return true;
	}
	return false;
}

/* DeploymentComplete on calculateStatus' counts (observedGeneration is the generation) */
static bool complete(struct sd *s)
{
	struct dp_status st;

	dp_calc_status(&s->dd, s->info, s->n,
	               kcmd_feature_enabled(KCMD_FEAT_DEPLOYMENT_RS_TERMINATING_REPLICAS), &st);
	return st.updated == s->dd.replicas && st.replicas == s->dd.replicas &&
	       st.available == s->dd.replicas;
}

static int rolling(struct sd *s, struct wk_result *out)
{
	bool scaled = false;
	int32_t want;
	int r = get_new_rs(s, true);

	if (r < 0)
		return r;
	struct dp_rs *nr = &s->info[s->new_ix];
	if ((r = dp_new_rs_new_replicas(&s->dd, s->info, s->n, nr, &want)) < 0)
		return r;
	if (want != nr->replicas && (r = scale_rs(s, (size_t)s->new_ix, want, &scaled)) < 0)
		return r;
	if (scaled)
		return rollout_status(s, out);
	/* reconcileOldReplicaSets */
	struct dp_rs old[MAX_RS];
	size_t n = 0;
	for (size_t i = 0; i < s->n; i++)
		if ((int)i != s->new_ix)
			old[n++] = s->info[i];
	if (dp_plan_scale_down_old(&s->dd, old, n, nr) > 0) {
		for (size_t k = 0; k < n; k++)
			for (size_t i = 0; i < s->n; i++)
				if (strcmp(s->info[i].name, old[k].name) == 0 &&
				    s->info[i].replicas != old[k].target) {
					if ((r = scale_rs(s, i, old[k].target, NULL)) < 0)
						return r;
				}
		return rollout_status(s, out);
	}
	if (complete(s) && (r = cleanup(s)) < 0)
		return r;
	return rollout_status(s, out);
}

/* oldPodsRunning: a pod of an old ReplicaSet not Failed or Succeeded, the pods read from the
 * shared cache (upstream: the pod informer's index) */
struct pod_walk {
	struct sd *s;
	bool running;
	int err;
};

static int pod_visit(const struct shm_obj *o, void *ud)
{
	struct pod_walk *w = ud;
	struct shm_obj copy;
	struct shm_pod_view v;
	int r;

	if ((r = shm_obj_dup(o, &copy)) < 0)
		return w->err = r;
	if (shm_pod_view_init(&copy, &v) < 0) {
		shm_pod_view_free(&v);
		return 0;
	}
	const struct kube_object_meta *m = &v.pod.meta;
	if (v.pod.phase != KUBE_POD_FAILED && v.pod.phase != KUBE_POD_SUCCEEDED)
		for (uint32_t k = 0; k < m->n_owner_refs; k++) {
			if (m->owner_refs[k].controller != 1 || !m->owner_refs[k].uid)
				continue;
			for (size_t i = 0; i < w->s->n; i++)
				if ((int)i != w->s->new_ix &&
				    strcmp(str(get(w->s->rs[i], "metadata"), "uid"),
				           m->owner_refs[k].uid) == 0)
					w->running = true;
		}
	shm_pod_view_free(&v);
	return 0;
}

static int old_pods_running(struct sd *s, bool *ret)
{
	struct pod_walk w = {.s = s};

	*ret = false;
	/* GetActualReplicaCountForReplicaSets(old) > 0 */
	for (size_t i = 0; i < s->n; i++)
		if ((int)i != s->new_ix && s->info[i].status_replicas > 0)
			*ret = true;
	if (*ret)
		return 0;
	int r = kcmd_cache_list(s->c->ctx->arena, "", "pods", s->ns, pod_visit, &w);
	if (r < 0)
		return r;
	if (w.err < 0)
		return w.err;
	*ret = w.running;
	return 0;
}

static int recreate(struct sd *s, struct wk_result *out)
{
	bool any = false, running;
	int r = get_new_rs(s, false);

	if (r < 0)
		return r;
	for (size_t i = 0; i < s->n; i++)
		if ((int)i != s->new_ix && s->info[i].replicas != 0) {
			bool sc;
			if ((r = scale_rs(s, i, 0, &sc)) < 0)
				return r;
			any |= sc;
		}
	if (any)
		return rollout_status(s, out);
	if ((r = old_pods_running(s, &running)) < 0)
		return r;
	if (running)
		return rollout_status(s, out);
	if (s->new_ix < 0 && (r = get_new_rs(s, true)) < 0)
		return r;
	if (s->info[s->new_ix].replicas != s->dd.replicas ||
	    s->info[s->new_ix].desired != s->dd.replicas)
		if ((r = scale_rs(s, (size_t)s->new_ix, s->dd.replicas, NULL)) < 0)
			return r;
	if (complete(s) && (r = cleanup(s)) < 0)
		return r;
	return rollout_status(s, out);
}

/* getRollbackTo: the deprecated rollback annotation as an int64 (Go's ParseInt), absent, empty
 * or invalid: false */
static bool rollback_to(struct sd *s, int64_t *ret)
{
	const char *v = str(path2(s->d, "metadata", "annotations"), A_ROLLBACK);
	char *end;

	if (!v)
		return false;
	const char *d = *v == '-' || *v == '+' ? v + 1 : v;
	if (*d < '0' || *d > '9')
		return false; /* empty, no digit, or leading space strtoll would accept */
	errno = 0;
	*ret = strtoll(v, &end, 10);
	return errno == 0 && !*end;
}

/* updateDeploymentAndClearRollbackTo: PUT of the Deployment without the rollback annotation */
static int clear_rollback(struct sd *s)
{
	cJSON *ann = path2(s->d, "metadata", "annotations");
	cJSON *st = cJSON_DetachItemFromObjectCaseSensitive(s->d, "status");
	int r;

	cJSON_DeleteItemFromObjectCaseSensitive(ann, A_ROLLBACK);
	log_v(4, "%s: cleans up rollbackTo of deployment", s->key);
	r = request(s, "PUT", "deployments", s->name, NULL, s->d, NULL);
	if (st)
		cJSON_AddItemToObject(s->d, "status", st);
	return r;
}

/* rollback (rollback.go): to the ReplicaSet of the requested revision (0: the last one) */
static int rollback(struct sd *s, int64_t to)
{
	char msg[600];
	int r = get_new_rs(s, true);

	if (r < 0)
		return r;
	if (to == 0 && (to = dp_last_revision(s->info, s->n)) == 0) {
		event(s, "Warning", "RollbackRevisionNotFound", "Unable to find last revision.");
		return clear_rollback(s);
	}
	/* upstream walks the old ReplicaSets, then the new one */
	for (size_t k = 0; k <= s->n; k++) {
		size_t i = k;
		if (k == s->n) {
			if (s->new_ix < 0)
				break;
			i = (size_t)s->new_ix;
		} else if ((int)k == s->new_ix) {
			continue;
		}
		if (s->info[i].revision_bad || s->info[i].revision != to)
			continue;
		log_v(4, "%s: found replica set %s with desired revision %" PRId64, s->key,
		      s->info[i].name, to);
		cJSON *rt = path2(s->rs[i], "spec", "template");
		char *t = cJSON_PrintUnformatted(rt);
		if (!t)
			return -ENOMEM;
		int eq =
		        kube_pod_template_equal_ignore_hash(t, strlen(t), s->tmpl, strlen(s->tmpl));
		free(t);
		if (eq < 0)
			return eq;
		if (eq == 1) {
			snprintf(msg, sizeof(msg),
			         "The rollback revision contains the same template as current "
			         "deployment \"%s\"",
			         s->name);
			event(s, "Warning", "RollbackTemplateUnchanged", msg);
			return clear_rollback(s);
		}
		/* SetFromReplicaSetTemplate: metadata and spec, without the hash label */
		cJSON *nt = cJSON_Duplicate(rt, true);
		if (!nt)
			return -ENOMEM;
		cJSON_DeleteItemFromObjectCaseSensitive(path2(nt, "metadata", "labels"), HASH_KEY);
		cJSON_ReplaceItemInObjectCaseSensitive(get(s->d, "spec"), "template", nt);
		/* SetDeploymentAnnotationsTo: the skipped annotations kept, the rest the
		 * ReplicaSet's */
		cJSON *md = ensure(s->d, "metadata"), *ann = ensure(md, "annotations"), *it;
		cJSON *na = cJSON_CreateObject();
		cJSON_ArrayForEach(it,
		                   ann) if (cJSON_IsString(it) && dp_annotation_skipped(it->string))
		        cJSON_AddStringToObject(na, it->string, it->valuestring);
		cJSON_ArrayForEach(it, path2(s->rs[i], "metadata",
		                             "annotations")) if (cJSON_IsString(it) &&
		                                                 !dp_annotation_skipped(it->string))
		        set_str(na, it->string, it->valuestring);
		cJSON_ReplaceItemInObjectCaseSensitive(md, "annotations", na);
		if ((r = clear_rollback(s)) < 0)
			return r;
		snprintf(msg, sizeof(msg), "Rolled back deployment \"%s\" to revision %" PRId64,
		         s->name, to);
		event(s, "Normal", "RollbackDone", msg);
		return 0;
	}
	event(s, "Warning", "RollbackRevisionNotFound",
	      "Unable to find the revision to rollback to.");
	return clear_rollback(s);
}

static int sync_deployment(struct sd *s, struct wk_result *out)
{
	struct shm_obj *o = NULL;
	int r = kcmd_cache_get(s->c->ctx->arena, "apps", "deployments", s->ns, s->name, &o);

	if (r == -ENOENT) {
		log_v(4, "Deployment %s has been deleted", s->key);
		return 0;
	}
	if (r < 0)
		return r;
	const char *js = kcmd_obj_json(o, NULL);
	s->d = js ? cJSON_Parse(js) : NULL;
	kcmd_obj_free(o);
	if (!s->d)
		return -EBADMSG;
	s->uid = str(get(s->d, "metadata"), "uid");
	if (!s->uid)
		return -EBADMSG;
	cJSON *spec = get(s->d, "spec"), *sel = get(spec, "selector");
	if (cJSON_IsObject(sel) && !cJSON_GetArraySize(get(sel, "matchLabels")) &&
	    !cJSON_GetArraySize(get(sel, "matchExpressions"))) {
		/* the empty selector (metav1.LabelSelector{}) */
		event(s, "Warning", "SelectingAll",
		      "This deployment is selecting all pods. A non-empty selector is required.");
		if (num(get(s->d, "status"), "observedGeneration", 0) <
		    num(get(s->d, "metadata"), "generation", 0)) {
			set_num(ensure(s->d, "status"), "observedGeneration",
			        (double)num(get(s->d, "metadata"), "generation", 0));
			request(s, "PUT", "deployments", s->name, "status", s->d, NULL);
		}
		return 0;
	}
	s->orig_st = cJSON_Duplicate(ensure(s->d, "status"), true);
	s->tmpl = cJSON_PrintUnformatted(get(spec, "template"));
	if (!s->tmpl)
		return -ENOMEM;
	s->dd.replicas = (int32_t)num(spec, "replicas", 1);
	cJSON *strat = get(spec, "strategy");
	s->dd.rolling = !str(strat, "type") || strcmp(str(strat, "type"), "Recreate") != 0;
	intstr(path2(strat, "rollingUpdate", "maxSurge"), &s->dd.max_surge);
	intstr(path2(strat, "rollingUpdate", "maxUnavailable"), &s->dd.max_unavailable);
	s->dd.status_replicas = (int32_t)num(get(s->d, "status"), "replicas", 0);

	if ((r = load_rs(s)) < 0)
		return r;
	find_new(s);
	if (str(get(s->d, "metadata"), "deletionTimestamp"))
		return status_only(s);
	bool paused = cJSON_IsTrue(get(spec, "paused"));
	/* pause conditions: upstream checkPausedConditions */
	int32_t secs;
	if (has_deadline(s, &secs)) {
		struct dp_cond c = cur_cond(s, "Progressing");
		if (paused && !(c.present && strcmp(c.reason, "DeploymentPaused") == 0))
			set_cond(s, "Progressing", false, "DeploymentPaused",
			         "Deployment is paused", false);
		else if (!paused && c.present && strcmp(c.reason, "DeploymentPaused") == 0)
			set_cond(s, "Progressing", false, "DeploymentResumed",
			         "Deployment is resumed", false);
	}
	int64_t to;
	if (paused)
		r = do_scale(s, paused, out);
	else if (rollback_to(s, &to))
		/* not re-entrant: nothing else until the annotation is gone (upstream) */
		r = rollback(s, to);
	else if (is_scaling_event(s))
		r = do_scale(s, paused, out);
	else if (s->dd.rolling)
		r = rolling(s, out);
	else
		r = recreate(s, out);
	if (r == -EEXIST) {
		/* collision: the status carries the new collisionCount */
		r = write_status(s);
		return r < 0 ? r : -EEXIST;
	}
	return r;
}

/* ---- worker ------------------------------------------------------------------------------- */
static int dpc_init(struct wk_ctx *ctx, void **ret)
{
	struct dpc *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->ctx = ctx;
	*ret = c;
	return 0;
}

static void dpc_fini(void *state)
{
	free(state);
}

static void dpc_sync(void *state, size_t q, const char *key, struct wk_result *out)
{
	struct dpc *c = state;
	struct sd *s;
	int r;

	(void)q;
	memset(out, 0, sizeof(*out));
	if (!c->synced) {
		if (kcmd_cache_synced(c->ctx->arena, "apps", "deployments") != 1 ||
		    kcmd_cache_synced(c->ctx->arena, "apps", "replicasets") != 1 ||
		    kcmd_cache_synced(c->ctx->arena, "", "pods") != 1) {
			out->requeue_after = true;
			out->after_usec = 100000;
			return;
		}
		c->synced = true;
	}
	if (!(s = calloc(1, sizeof(*s)))) {
		out->err = -ENOMEM;
		return;
	}
	s->c = c;
	s->key = key;
	if (kcmd_key_split(key, s->ns, sizeof(s->ns), s->name, sizeof(s->name)) < 0 || !*s->ns) {
		log_error("invalid key %s: dropped", key);
		free(s);
		return;
	}
	log_v(4, "Started syncing deployment %s", key);
	r = sync_deployment(s, out);
	if (r < 0) {
		if (r != -EEXIST && r != -EAGAIN && r != -ESTALE)
			log_warning("Error syncing deployment %s: %s", key, strerror(-r));
		out->err = r;
		out->requeue_after = false;
	}
	cJSON_Delete(s->d);
	cJSON_Delete(s->orig_st);
	cJSON_Delete(s->rslist);
	cJSON_Delete(s->created);
	free(s->tmpl);
	free(s);
}

static const char *const dpc_queues[] = {DP_QUEUE, NULL};

const struct wk_controller wk_dp_controller = {
        .name = DP_CONTROLLER,
        .queues = dpc_queues,
        .init = dpc_init,
        .sync = dpc_sync,
        .fini = dpc_fini,
};
