/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/statefulset/sync.c: upstream's StatefulSetController.sync and
 * defaultStatefulSetControl.UpdateStatefulSet (pkg/controller/statefulset, v1.37.2) in a
 * kcmd-worker, over cJSON trees.
 *
 * Reads come from the shared cache only: the set, its ControllerRevisions and its claims as
 * JSON (KCMD_CACHE_OBJECT), the namespace's pods as typed records. Writes: pod POST/DELETE and
 * a merge PATCH of a pod's identity labels, claim POST and a merge PATCH of its
 * ownerReferences (with resourceVersion, as upstream's Update), strategic-merge PATCHes to adopt
 * and release pods and ControllerRevisions, ControllerRevision POST/PATCH(revision)/DELETE, a
 * PUT of the set's status. Events: upstream's reasons and messages (SuccessfulCreate,
 * SuccessfulDelete, SuccessfulUpdate, FailedCreate, FailedDelete, FailedUpdate,
 * ConflictingController).
 *
 * Deviations (docs/statefulset.md): Parallel's slowStartBatch runs each batch's calls one after
 * the other (same order of batches and the same stop at a failed batch); storageMatches is not
 * checked for existing pods (the typed pod record keeps no volumes); a claim POST answered
 * AlreadyExists counts as created (the cache had not seen it yet); the
 * StatefulSetSemanticRevisionComparison check (re-defaulting an old revision) is not done.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcmd/cache.h"
#include "kcmd/client.h"
#include "kcmd/handlers.h"
#include "kube/client.h"
#include "kube/model.h"
#include "lib/features.h"
#include "lib/log.h"
#include "shm/arena.h"
#include "shm/record-model.h"
#include "workers/statefulset/controller.h"
#include "workers/statefulset/ident.h"

#define L_POD_NAME "statefulset.kubernetes.io/pod-name"
#define L_POD_IDX  "apps.kubernetes.io/pod-index"
#define L_REV      "controller-revision-hash"
#define L_CR_HASH  "controller.kubernetes.io/hash"
#define MAX_BATCH  500 /* upstream MaxBatchSize */

struct stc {
	struct wk_ctx *ctx;
	bool synced;
	bool max_unavailable_gate;
};

struct pod {
	char *name, *uid, *rev, *podname_label, *podidx_label;
	int ord;
	enum kube_pod_phase phase;
	bool ready, terminating, fresh;
	kube_time_t ready_tt;
};

struct rev {
	char *name;
	char *hash; /* controller.kubernetes.io/hash label, NULL if none */
	int64_t revision;
	kube_time_t created;
	char *raw; /* data as sent (the patch) */
	size_t raw_len;
};

struct ss {
	struct stc *c;
	const char *key;
	char ns[254], name[254];
	cJSON *set, *spec, *status, *sel;
	const char *uid, *service;
	int64_t generation;
	int replicas, start, min_ready;
	bool deleting, parallel, ondelete;
	const char *when_deleted, *when_scaled;
	kube_time_t now;
	struct pod *pods;
	size_t n_pods, cap_pods;
	struct rev *revs;
	size_t n_revs, cap_revs;
	int32_t collision;
	struct rev *cur, *upd;
	cJSON *cur_tmpl, *upd_tmpl;
	int st_replicas, st_ready, st_avail, st_current, st_updated;
	bool can_adopt_checked;
	int can_adopt_err;
};

/* ---- small helpers --------------------------------------------------------------------------- */
static cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

static const char *str(const cJSON *o, const char *k)
{
	cJSON *v = get(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int64_t num(const cJSON *o, const char *k, int64_t def)
{
	cJSON *v = get(o, k);
	return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : def;
}

static bool eq(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

static void set_num(cJSON *o, const char *k, double v)
{
	cJSON_DeleteItemFromObjectCaseSensitive(o, k);
	cJSON_AddNumberToObject(o, k, v);
}

static void set_str(cJSON *o, const char *k, const char *v)
{
	cJSON_DeleteItemFromObjectCaseSensitive(o, k);
	if (v && *v)
		cJSON_AddStringToObject(o, k, v);
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

static kube_time_t parse_time(const char *s)
{
	kube_time_t t = 0;
	if (s)
		kube_time_parse(s, strlen(s), &t);
	return t;
}

/* the API's message for a failed write (the Status), or the errno's text */
static void err_text(int r, const char *body, char *out, size_t n)
{
	cJSON *st = body ? cJSON_Parse(body) : NULL;
	const char *m = str(st, "message");
	snprintf(out, n, "%s", m ? m : strerror(-r));
	cJSON_Delete(st);
}

static int req(struct ss *s, const char *method, const char *group, const char *resource,
               const char *name, const char *sub, const char *body, char **ret_body)
{
	struct kcmd_request rq = {
	        .method = method,
	        .group = group,
	        .version = "v1",
	        .resource = resource,
	        .ns = s->ns,
	        .name = name,
	        .subresource = sub,
	        .body = body,
	        /* protobuf on a protobuf client, as client-go sends them */
	        .body_kind = !strcmp(resource, "pods")                     ? "Pod"
	                     : !strcmp(resource, "statefulsets")           ? "StatefulSet"
	                     : !strcmp(resource, "controllerrevisions")    ? "ControllerRevision"
	                     : !strcmp(resource, "persistentvolumeclaims") ? "PersistentVolumeClaim"
	                                                                   : NULL};
	if (ret_body)
		*ret_body = NULL;
	return kcmd_kube_request(s->c->ctx->kc, &rq, NULL, ret_body);
}

static int req_json(struct ss *s, const char *method, const char *group, const char *resource,
                    const char *name, const char *sub, const cJSON *body, char **ret_body)
{
	char *b = cJSON_PrintUnformatted(body);
	if (!b)
		return -ENOMEM;
	int r = req(s, method, group, resource, name, sub, b, ret_body);
	free(b);
	return r;
}

static int smpatch(struct ss *s, const char *group, const char *resource, const char *name,
                   const char *body)
{
	struct kube_request rq = {.verb = KUBE_PATCH,
	                          .group = group,
	                          .version = "v1",
	                          .resource = resource,
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

static void event(struct ss *s, const char *type, const char *reason, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static void event(struct ss *s, const char *type, const char *reason, const char *fmt, ...)
{
	struct kcmd_object_ref ref = {.api_version = "apps/v1",
	                              .kind = "StatefulSet",
	                              .ns = s->ns,
	                              .name = s->name,
	                              .uid = s->uid};
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	int r = kcmd_event_record(s->c->ctx->kc, STS_CONTROLLER, &ref, type, reason, "%s", msg);
	if (r < 0)
		log_v(2, "%s: recording event %s: %s", s->key, reason, strerror(-r));
}

/* recordPodEvent: verb "Create", "Update", "Delete" */
static void pod_event(struct ss *s, const char *verb, const char *pod, int err, const char *why)
{
	if (!err)
		event(s, "Normal",
		      verb[0] == 'C'   ? "SuccessfulCreate"
		      : verb[0] == 'U' ? "SuccessfulUpdate"
		                       : "SuccessfulDelete",
		      "%s Pod %s in StatefulSet %s successful", verb, pod, s->name);
	else
		event(s, "Warning",
		      verb[0] == 'C'   ? "FailedCreate"
		      : verb[0] == 'U' ? "FailedUpdate"
		                       : "FailedDelete",
		      "%s Pod %s in StatefulSet %s failed error: %s", verb, pod, s->name,
		      why ? why : strerror(-err));
}

/* ---- selector over a pod's or an object's labels ------------------------------------------- */
typedef const char *(*label_fn)(const void *o, const char *k);

static bool sel_matches(const cJSON *sel, label_fn lf, const void *o)
{
	const cJSON *it, *x;

	if (!cJSON_IsObject(sel))
		return false; /* nil selector: nothing */
	cJSON_ArrayForEach(it, get(sel, "matchLabels"))
	{
		const char *v = lf(o, it->string);
		if (!cJSON_IsString(it) || !v || strcmp(v, it->valuestring) != 0)
			return false;
	}
	cJSON_ArrayForEach(it, get(sel, "matchExpressions"))
	{
		const char *k = str(it, "key"), *op = str(it, "operator");
		bool in = false;
		if (!k || !op)
			return false;
		const char *v = lf(o, k);
		cJSON_ArrayForEach(x, get(it, "values"))
		{
			if (v && cJSON_IsString(x) && strcmp(x->valuestring, v) == 0)
				in = true;
		}
		if (!strcmp(op, "In")) {
			if (!in)
				return false;
		} else if (!strcmp(op, "NotIn")) {
			if (in)
				return false;
		} else if (!strcmp(op, "Exists")) {
			if (!v)
				return false;
		} else if (!strcmp(op, "DoesNotExist")) {
			if (v)
				return false;
		} else {
			return false;
		}
	}
	return true; /* empty selector: everything (LabelSelectorAsSelector) */
}

static const char *meta_label(const void *o, const char *k)
{
	const struct kube_object_meta *m = o;
	return kube_labels_get(m->labels, m->n_labels, k);
}

static const char *json_label(const void *o, const char *k)
{
	return str(get(get(o, "metadata"), "labels"), k);
}

static const cJSON *json_controller(const cJSON *o)
{
	const cJSON *r;
	cJSON_ArrayForEach(r, get(get(o, "metadata"), "ownerReferences"))
	{
		if (cJSON_IsTrue(get(r, "controller")))
			return r;
	}
	return NULL;
}

/* ---- adoption -------------------------------------------------------------------------------- */
/* canAdoptFunc: an uncached GET of the set, once per sync: same uid, not being deleted */
static int can_adopt(struct ss *s)
{
	char *body = NULL;

	if (s->can_adopt_checked)
		return s->can_adopt_err;
	s->can_adopt_checked = true;
	int r = req(s, "GET", "apps", "statefulsets", s->name, NULL, NULL, &body);
	if (r == 0) {
		cJSON *fresh = body ? cJSON_Parse(body) : NULL;
		cJSON *m = get(fresh, "metadata");
		if (!fresh)
			r = -EBADMSG;
		else if (!eq(str(m, "uid"), s->uid))
			r = -ESTALE;
		else if (str(m, "deletionTimestamp"))
			r = -ESTALE;
		cJSON_Delete(fresh);
	}
	free(body);
	if (r < 0)
		log_v(2, "%s: can't adopt: %s", s->key, strerror(-r));
	return s->can_adopt_err = r;
}

static int adopt(struct ss *s, const char *group, const char *resource, const char *name,
                 const char *uid)
{
	char body[1400];
	int r = can_adopt(s);
	if (r < 0)
		return r;
	snprintf(body, sizeof(body),
	         "{\"metadata\":{\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":"
	         "\"StatefulSet\",\"name\":\"%s\",\"uid\":\"%s\",\"controller\":true,"
	         "\"blockOwnerDeletion\":true}],\"uid\":\"%s\"}}",
	         s->name, s->uid, uid);
	return smpatch(s, group, resource, name, body);
}

static int release(struct ss *s, const char *group, const char *resource, const char *name,
                   const char *uid)
{
	char body[600];
	snprintf(body, sizeof(body),
	         "{\"metadata\":{\"ownerReferences\":[{\"$patch\":\"delete\",\"uid\":\"%s\"}],"
	         "\"uid\":\"%s\"}}",
	         s->uid, uid);
	int r = smpatch(s, group, resource, name, body);
	/* gone, or no longer ours / no owner (Invalid): nothing to release */
	return r == -ENOENT || r == -EINVAL || r == -EUCLEAN ? 0 : r;
}

/* ---- pods ------------------------------------------------------------------------------------ */
static struct pod *pod_new(struct ss *s)
{
	if (s->n_pods == s->cap_pods) {
		size_t cap = s->cap_pods ? s->cap_pods * 2 : 16;
		struct pod *np = realloc(s->pods, cap * sizeof(*np));
		if (!np)
			return NULL;
		s->pods = np;
		s->cap_pods = cap;
	}
	struct pod *p = &s->pods[s->n_pods++];
	memset(p, 0, sizeof(*p));
	return p;
}

static char *dup0(const char *v)
{
	return v ? strdup(v) : NULL;
}

struct walk {
	struct ss *s;
	int err;
};

static bool member_of(struct ss *s, const char *name)
{
	char parent[254];
	sts_parse_ordinal(name, parent, sizeof(parent));
	return strcmp(parent, s->name) == 0;
}

/* getPodsForStatefulSet: the pods controlled by the set or orphaned, claimed with ClaimPods
 * (match: selector and isMemberOf) */
static int pod_visit(const struct shm_obj *o, void *ud)
{
	struct walk *w = ud;
	struct ss *s = w->s;
	struct shm_obj copy;
	struct shm_pod_view v;
	const struct kube_owner_ref *ctl = NULL;
	int r;

	if ((r = shm_obj_dup(o, &copy)) < 0)
		return w->err = r;
	if (shm_pod_view_init(&copy, &v) < 0) {
		shm_pod_view_free(&v);
		return 0;
	}
	const struct kube_object_meta *m = &v.pod.meta;
	for (uint32_t i = 0; i < m->n_owner_refs; i++)
		if (m->owner_refs[i].controller == 1)
			ctl = &m->owner_refs[i];
	bool ours = ctl && eq(ctl->uid, s->uid);
	if (ctl && !ours)
		goto skip;
	bool match = sel_matches(s->sel, meta_label, m) && member_of(s, m->name);
	if (ours && !match) {
		if (!s->deleting && (r = release(s, "", "pods", m->name, m->uid)) < 0)
			w->err = w->err ? w->err : r;
		goto skip;
	}
	if (!ours) {
		if (s->deleting || !match || m->deletion_timestamp)
			goto skip;
		r = adopt(s, "", "pods", m->name, m->uid);
		if (r == -ENOENT)
			goto skip;
		if (r < 0) {
			w->err = w->err ? w->err : r;
			goto skip;
		}
	}
	struct pod *p = pod_new(s);
	if (!p) {
		shm_pod_view_free(&v);
		return w->err = -ENOMEM;
	}
	p->name = dup0(m->name);
	p->uid = dup0(m->uid);
	p->rev = dup0(kube_labels_get(m->labels, m->n_labels, L_REV));
	p->podname_label = dup0(kube_labels_get(m->labels, m->n_labels, L_POD_NAME));
	p->podidx_label = dup0(kube_labels_get(m->labels, m->n_labels, L_POD_IDX));
	p->ord = sts_parse_ordinal(m->name, NULL, 0);
	p->phase = v.pod.phase;
	p->ready = v.pod.ready;
	p->ready_tt = v.pod.ready_transition_time;
	p->terminating = m->deletion_timestamp != 0;
skip:
	shm_pod_view_free(&v);
	return 0;
}

static bool created(const struct pod *p)
{
	return p->phase != KUBE_POD_PHASE_UNSET;
}

static bool running_ready(const struct pod *p)
{
	return p->phase == KUBE_POD_RUNNING && p->ready;
}

/* podutil.IsPodAvailable */
static bool available(const struct ss *s, const struct pod *p)
{
	if (!p->ready)
		return false;
	if (s->min_ready == 0)
		return true;
	return p->ready_tt && p->ready_tt + (kube_time_t)s->min_ready * 1000000000 < s->now;
}

static bool unavailable(const struct ss *s, const struct pod *p)
{
	return !available(s, p) || p->terminating;
}

static bool in_range(const struct ss *s, int ord)
{
	return ord >= s->start && ord <= s->start + s->replicas - 1;
}

/* ---- claims ---------------------------------------------------------------------------------- */
static void claim_name(struct ss *s, const cJSON *tmpl, int ord, char *out, size_t n)
{
	snprintf(out, n, "%s-%s-%d", str(get(tmpl, "metadata"), "name"), s->name, ord);
}

/* the cached claim's JSON, NULL if none */
static cJSON *get_claim(struct ss *s, const char *name)
{
	struct shm_obj *o = NULL;
	size_t len;
	if (kcmd_cache_get(s->c->ctx->arena, "", "persistentvolumeclaims", s->ns, name, &o) < 0)
		return NULL;
	const char *js = kcmd_obj_json(o, &len);
	cJSON *c = js ? cJSON_ParseWithLength(js, len) : NULL;
	kcmd_obj_free(o);
	return c;
}

static bool ref_matches(const cJSON *ref, const char *gv, const char *kind, const char *name)
{
	return eq(str(ref, "apiVersion"), gv) && eq(str(ref, "kind"), kind) &&
	       eq(str(ref, "name"), name);
}

struct owner {
	const char *gv, *kind, *name, *uid;
};

static bool has_owner_ref(const cJSON *claim, const char *uid)
{
	const cJSON *r;
	cJSON_ArrayForEach(r, get(get(claim, "metadata"), "ownerReferences"))
	{
		if (eq(str(r, "uid"), uid))
			return true;
	}
	return false;
}

static bool has_stale_ref(const cJSON *claim, const struct owner *o)
{
	const cJSON *r;
	cJSON_ArrayForEach(r, get(get(claim, "metadata"), "ownerReferences"))
	{
		if (ref_matches(r, o->gv, o->kind, o->name))
			return !eq(str(r, "uid"), o->uid);
	}
	return false;
}

static bool retain_both(const struct ss *s)
{
	return eq(s->when_scaled, "Retain") && eq(s->when_deleted, "Retain");
}

static bool unexpected_controller(const struct ss *s, const cJSON *claim, const struct owner *set,
                                  const struct owner *pod)
{
	const cJSON *r;
	if (retain_both(s))
		return false;
	cJSON_ArrayForEach(r, get(get(claim, "metadata"), "ownerReferences"))
	{
		if (ref_matches(r, set->gv, set->kind, set->name)) {
			if (!eq(str(r, "uid"), set->uid))
				return true;
			continue;
		}
		if (ref_matches(r, pod->gv, pod->kind, pod->name)) {
			if (!eq(str(r, "uid"), pod->uid))
				return true;
			continue;
		}
		if (cJSON_IsTrue(get(r, "controller")))
			return true;
	}
	return false;
}

static bool non_controller_owner(const cJSON *claim, const struct owner *set,
                                 const struct owner *pod)
{
	const cJSON *r;
	cJSON_ArrayForEach(r, get(get(claim, "metadata"), "ownerReferences"))
	{
		if ((eq(str(r, "uid"), set->uid) || eq(str(r, "uid"), pod->uid)) &&
		    !cJSON_IsTrue(get(r, "controller")))
			return true;
	}
	return false;
}

/* isClaimOwnerUpToDate */
static bool claim_up_to_date(const struct ss *s, const cJSON *claim, const struct owner *set,
                             const struct owner *pod, int ord)
{
	if (has_stale_ref(claim, set) || has_stale_ref(claim, pod))
		return true;
	if (unexpected_controller(s, claim, set, pod))
		return !(has_owner_ref(claim, set->uid) || has_owner_ref(claim, pod->uid));
	if (non_controller_owner(claim, set, pod))
		return false;
	bool scaled_del = eq(s->when_scaled, "Delete"), deleted_del = eq(s->when_deleted, "Delete");
	bool down = !in_range(s, ord);
	if (!scaled_del && !deleted_del)
		return !(has_owner_ref(claim, set->uid) || has_owner_ref(claim, pod->uid));
	if (!scaled_del && deleted_del)
		return has_owner_ref(claim, set->uid) && !has_owner_ref(claim, pod->uid);
	if (scaled_del && !deleted_del)
		return !has_owner_ref(claim, set->uid) && down == has_owner_ref(claim, pod->uid);
	return down != has_owner_ref(claim, set->uid) && down == has_owner_ref(claim, pod->uid);
}

static void add_ctl_ref(cJSON *refs, const struct owner *o)
{
	const cJSON *r;
	cJSON_ArrayForEach(r, refs)
	{
		if (eq(str(r, "uid"), o->uid))
			return;
	}
	cJSON *n = cJSON_CreateObject();
	cJSON_AddStringToObject(n, "apiVersion", o->gv);
	cJSON_AddStringToObject(n, "kind", o->kind);
	cJSON_AddStringToObject(n, "name", o->name);
	cJSON_AddStringToObject(n, "uid", o->uid ? o->uid : "");
	cJSON_AddTrueToObject(n, "controller");
	cJSON_AddTrueToObject(n, "blockOwnerDeletion");
	cJSON_AddItemToArray(refs, n);
}

/* updateClaimOwnerRefForSetAndPod: the new ownerReferences (a new array) */
static cJSON *claim_new_refs(const struct ss *s, const cJSON *claim, const struct owner *set,
                             const struct owner *pod, int ord)
{
	cJSON *refs = cJSON_CreateArray();
	const cJSON *r;
	bool unexpected = unexpected_controller(s, claim, set, pod);

	cJSON_ArrayForEach(r, get(get(claim, "metadata"), "ownerReferences"))
	{
		if (ref_matches(r, set->gv, set->kind, set->name) ||
		    ref_matches(r, pod->gv, pod->kind, pod->name))
			continue;
		cJSON_AddItemToArray(refs, cJSON_Duplicate(r, 1));
	}
	if (unexpected)
		return refs;
	bool scaled_del = eq(s->when_scaled, "Delete"), deleted_del = eq(s->when_deleted, "Delete");
	bool down = !in_range(s, ord);
	if (!scaled_del && deleted_del)
		add_ctl_ref(refs, set);
	else if (scaled_del && !deleted_del && down)
		add_ctl_ref(refs, pod);
	else if (scaled_del && deleted_del)
		add_ctl_ref(refs, down ? pod : set);
	return refs;
}

static struct owner set_owner(const struct ss *s)
{
	return (struct owner){"apps/v1", "StatefulSet", s->name, s->uid};
}

static struct owner pod_owner(const struct pod *p)
{
	return (struct owner){"v1", "Pod", p->name, p->uid ? p->uid : ""};
}

/* ClaimsMatchRetentionPolicy */
static bool claims_match(struct ss *s, const struct pod *p)
{
	const cJSON *t;
	struct owner so = set_owner(s), po = pod_owner(p);
	char cn[512];

	cJSON_ArrayForEach(t, get(s->spec, "volumeClaimTemplates"))
	{
		claim_name(s, t, p->ord, cn, sizeof(cn));
		cJSON *claim = get_claim(s, cn);
		if (!claim)
			continue;
		bool ok = claim_up_to_date(s, claim, &so, &po, p->ord);
		cJSON_Delete(claim);
		if (!ok)
			return false;
	}
	return true;
}

/* UpdatePodClaimForRetentionPolicy */
static int update_claims(struct ss *s, const struct pod *p)
{
	const cJSON *t;
	struct owner so = set_owner(s), po = pod_owner(p);
	char cn[512], why[512];

	cJSON_ArrayForEach(t, get(s->spec, "volumeClaimTemplates"))
	{
		claim_name(s, t, p->ord, cn, sizeof(cn));
		cJSON *claim = get_claim(s, cn);
		if (!claim)
			continue;
		if (unexpected_controller(s, claim, &so, &po))
			event(s, "Warning", "ConflictingController",
			      "PersistentVolumeClaim %s has a conflicting OwnerReference that acts "
			      "as "
			      "a manging controller, the retention policy is ignored for this "
			      "claim",
			      cn);
		if (!claim_up_to_date(s, claim, &so, &po, p->ord)) {
			cJSON *patch = cJSON_CreateObject(),
			      *m = cJSON_AddObjectToObject(patch, "metadata");
			cJSON_AddItemToObject(m, "ownerReferences",
			                      claim_new_refs(s, claim, &so, &po, p->ord));
			const char *rv = str(get(claim, "metadata"), "resourceVersion");
			if (rv)
				cJSON_AddStringToObject(m, "resourceVersion", rv);
			char *body = NULL;
			int r = req_json(s, "PATCH", "", "persistentvolumeclaims", cn, NULL, patch,
			                 &body);
			cJSON_Delete(patch);
			if (r < 0) {
				err_text(r, body, why, sizeof(why));
				log_v(2,
				      "%s: could not update claim %s for delete policy ownerRefs: "
				      "%s",
				      s->key, cn, why);
				free(body);
				cJSON_Delete(claim);
				return r;
			}
			free(body);
		}
		cJSON_Delete(claim);
	}
	return 0;
}

/* PodClaimIsStale */
static bool claim_is_stale(struct ss *s, const struct pod *p)
{
	const cJSON *t;
	struct owner po = pod_owner(p);
	char cn[512];

	if (eq(s->when_scaled, "Retain"))
		return false;
	cJSON_ArrayForEach(t, get(s->spec, "volumeClaimTemplates"))
	{
		claim_name(s, t, p->ord, cn, sizeof(cn));
		cJSON *claim = get_claim(s, cn);
		bool stale = claim && has_stale_ref(claim, &po);
		cJSON_Delete(claim);
		if (stale)
			return true;
	}
	return false;
}

/* createPersistentVolumeClaims (a POST answered AlreadyExists: created, the cache is behind) */
static int create_claims(struct ss *s, const struct pod *p)
{
	const cJSON *t;
	char cn[512], why[512];
	int err = 0;

	cJSON_ArrayForEach(t, get(s->spec, "volumeClaimTemplates"))
	{
		claim_name(s, t, p->ord, cn, sizeof(cn));
		cJSON *have = get_claim(s, cn);
		if (have) {
			if (str(get(have, "metadata"), "deletionTimestamp")) {
				log_v(2, "%s: pvc %s is being deleted", s->key, cn);
				err = err ? err : -EBUSY;
			}
			cJSON_Delete(have);
			continue;
		}
		cJSON *c = cJSON_Duplicate(t, 1);
		cJSON *m = ensure(c, "metadata");
		set_str(m, "name", cn);
		set_str(m, "namespace", s->ns);
		cJSON *labels = get(m, "labels");
		const cJSON *ml = get(s->sel, "matchLabels"), *it;
		if (!cJSON_IsObject(labels) && ml) {
			cJSON_DeleteItemFromObjectCaseSensitive(m, "labels");
			labels = cJSON_AddObjectToObject(m, "labels");
		}
		cJSON_ArrayForEach(it, ml)
		{
			if (cJSON_IsString(it))
				set_str(labels, it->string, it->valuestring);
		}
		char *body = NULL;
		int r = req_json(s, "POST", "", "persistentvolumeclaims", NULL, NULL, c, &body);
		cJSON_Delete(c);
		if (r == -EEXIST)
			r = 0;
		if (r < 0) {
			err_text(r, body, why, sizeof(why));
			event(s, "Warning", "FailedCreate",
			      "Create Claim %s for Pod %s in StatefulSet %s failed error: failed "
			      "to "
			      "create PVC %s: %s",
			      cn, p->name, s->name, cn, why);
			err = err ? err : r;
		} else if (!body || !strstr(body, "\"AlreadyExists\"")) {
			event(s, "Normal", "SuccessfulCreate",
			      "Create Claim %s Pod %s in StatefulSet %s success", cn, p->name,
			      s->name);
		}
		free(body);
	}
	return err;
}

/* ---- revisions ------------------------------------------------------------------------------- */
/* the span of the value of the top-level key k in the JSON object text js */
static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
		p++;
	return p;
}

static const char *skip_value(const char *p, const char *end)
{
	int depth = 0;
	p = skip_ws(p, end);
	do {
		if (p >= end)
			return NULL;
		char c = *p;
		if (c == '"') {
			for (p++; p < end && *p != '"'; p++)
				if (*p == '\\')
					p++;
			if (p >= end)
				return NULL;
			p++;
		} else if (c == '{' || c == '[') {
			depth++;
			p++;
		} else if (c == '}' || c == ']') {
			depth--;
			p++;
		} else {
			p++;
			if (depth == 0) {
				while (p < end && !strchr(",}] \n\r\t", *p))
					p++;
			}
		}
	} while (depth > 0);
	return p;
}

static int top_value(const char *js, size_t len, const char *k, const char **ret, size_t *ret_len)
{
	const char *end = js + len, *p = skip_ws(js, end);
	size_t kl = strlen(k);

	if (p >= end || *p != '{')
		return -EBADMSG;
	p++;
	for (;;) {
		p = skip_ws(p, end);
		if (p >= end || *p == '}')
			return -ENOENT;
		if (*p != '"')
			return -EBADMSG;
		const char *ks = p + 1, *ke = skip_value(p, end);
		if (!ke)
			return -EBADMSG;
		bool hit = (size_t)(ke - 1 - ks) == kl && memcmp(ks, k, kl) == 0;
		p = skip_ws(ke, end);
		if (p >= end || *p != ':')
			return -EBADMSG;
		const char *vs = skip_ws(p + 1, end), *ve = skip_value(vs, end);
		if (!ve)
			return -EBADMSG;
		if (hit) {
			*ret = vs;
			*ret_len = (size_t)(ve - vs);
			return 0;
		}
		p = skip_ws(ve, end);
		if (p < end && *p == ',')
			p++;
	}
}

static int rev_visit(const struct shm_obj *o, void *ud)
{
	struct walk *w = ud;
	struct ss *s = w->s;
	size_t len;
	const char *js = kcmd_obj_json(o, &len), *raw;
	size_t raw_len;
	cJSON *cr = js ? cJSON_ParseWithLength(js, len) : NULL;
	const cJSON *ctl = json_controller(cr);

	if (!cr || (ctl && !eq(str(ctl, "uid"), s->uid)) || !sel_matches(s->sel, json_label, cr))
		goto out;
	if (!ctl && !s->deleting) {
		/* adoptOrphanRevisions */
		int r = adopt(s, "apps", "controllerrevisions", kcmd_obj_name(o), kcmd_obj_uid(o));
		if (r < 0 && r != -ENOENT) {
			w->err = w->err ? w->err : r;
			goto out;
		}
	}
	if (s->n_revs == s->cap_revs) {
		size_t cap = s->cap_revs ? s->cap_revs * 2 : 8;
		struct rev *nr = realloc(s->revs, cap * sizeof(*nr));
		if (!nr) {
			w->err = -ENOMEM;
			goto out;
		}
		s->revs = nr;
		s->cap_revs = cap;
	}
	struct rev *v = &s->revs[s->n_revs];
	memset(v, 0, sizeof(*v));
	if (top_value(js, len, "data", &raw, &raw_len) == 0 && (v->raw = malloc(raw_len + 1))) {
		memcpy(v->raw, raw, raw_len);
		v->raw[raw_len] = 0;
		v->raw_len = raw_len;
	}
	v->name = dup0(kcmd_obj_name(o));
	v->hash = dup0(json_label(cr, L_CR_HASH));
	v->revision = num(cr, "revision", 0);
	v->created = parse_time(str(get(cr, "metadata"), "creationTimestamp"));
	s->n_revs++;
out:
	cJSON_Delete(cr);
	return 0;
}

static int rev_cmp(const void *a, const void *b)
{
	const struct rev *x = a, *y = b;
	if (x->revision != y->revision)
		return x->revision < y->revision ? -1 : 1;
	if (x->created != y->created)
		return x->created < y->created ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* strconv.ParseInt(s, 10, 32) succeeds */
static bool int32_label(const char *s, long long *ret)
{
	char *end;
	if (!s || !*s || *s == ' ')
		return false;
	errno = 0;
	*ret = strtoll(s, &end, 10);
	return !*end && !errno && *ret >= INT32_MIN && *ret <= INT32_MAX;
}

/* history.EqualRevision over the raw data (hash labels compared only when both are integers) */
static bool rev_equal(const struct rev *a, const char *hash, const char *raw, size_t len)
{
	long long x, y;
	if (int32_label(a->hash, &x) && int32_label(hash, &y) && x != y)
		return false;
	return a->raw && a->raw_len == len && memcmp(a->raw, raw, len) == 0;
}

static cJSON *rev_template(const struct rev *v)
{
	cJSON *d = v && v->raw ? cJSON_ParseWithLength(v->raw, v->raw_len) : NULL;
	cJSON *t = cJSON_DetachItemFromObjectCaseSensitive(get(d, "spec"), "template");
	cJSON_Delete(d);
	if (t)
		cJSON_DeleteItemFromObjectCaseSensitive(t, "$patch");
	return t;
}

static struct rev *rev_add(struct ss *s)
{
	if (s->n_revs == s->cap_revs) {
		size_t cap = s->cap_revs ? s->cap_revs * 2 : 8;
		struct rev *nr = realloc(s->revs, cap * sizeof(*nr));
		if (!nr)
			return NULL;
		s->revs = nr;
		s->cap_revs = cap;
	}
	struct rev *v = &s->revs[s->n_revs++];
	memset(v, 0, sizeof(*v));
	return v;
}

/* CreateControllerRevision with its collision loop; *ret_ix: the revision in s->revs */
static int create_revision(struct ss *s, const char *raw, size_t raw_len, int64_t number,
                           size_t *ret_ix)
{
	const cJSON *tl = get(get(get(s->spec, "template"), "metadata"), "labels");
	const cJSON *ann = get(get(s->set, "metadata"), "annotations");

	for (int attempt = 0; attempt < 1000; attempt++) {
		char hash[STS_HASH_MAX], name[254];
		sts_revision_hash(raw, raw_len, &s->collision, hash);
		sts_revision_name(s->name, hash, name);
		cJSON *cr = cJSON_CreateObject(), *m = cJSON_AddObjectToObject(cr, "metadata");
		cJSON_AddStringToObject(cr, "apiVersion", "apps/v1");
		cJSON_AddStringToObject(cr, "kind", "ControllerRevision");
		cJSON_AddStringToObject(m, "name", name);
		cJSON_AddStringToObject(m, "namespace", s->ns);
		cJSON *labels = cJSON_IsObject(tl) ? cJSON_Duplicate(tl, 1) : cJSON_CreateObject();
		set_str(labels, L_CR_HASH, hash);
		cJSON_AddItemToObject(m, "labels", labels);
		if (cJSON_IsObject(ann) && ann->child)
			cJSON_AddItemToObject(m, "annotations", cJSON_Duplicate(ann, 1));
		cJSON *refs = cJSON_AddArrayToObject(m, "ownerReferences");
		struct owner so = set_owner(s);
		add_ctl_ref(refs, &so);
		cJSON_AddItemToObject(cr, "data", cJSON_ParseWithLength(raw, raw_len));
		cJSON_AddNumberToObject(cr, "revision", (double)number);
		/* the data must go out byte for byte: print it separately */
		cJSON_DeleteItemFromObjectCaseSensitive(cr, "data");
		char *head = cJSON_PrintUnformatted(cr);
		cJSON_Delete(cr);
		if (!head)
			return -ENOMEM;
		size_t hl = strlen(head);
		char *body = malloc(hl + raw_len + 16);
		if (!body) {
			free(head);
			return -ENOMEM;
		}
		memcpy(body, head, hl - 1);
		memcpy(body + hl - 1, ",\"data\":", 8);
		memcpy(body + hl + 7, raw, raw_len);
		memcpy(body + hl + 7 + raw_len, "}", 2);
		free(head);
		char *resp = NULL;
		int r = req(s, "POST", "apps", "controllerrevisions", NULL, NULL, body, &resp);
		free(body);
		free(resp);
		if (r == -EEXIST) {
			/* the existing one: the same data is ours, other data is a collision */
			char *got = NULL;
			r = req(s, "GET", "apps", "controllerrevisions", name, NULL, NULL, &got);
			if (r < 0) {
				free(got);
				return r;
			}
			const char *d;
			size_t dl;
			bool same = got && top_value(got, strlen(got), "data", &d, &dl) == 0 &&
			            dl == raw_len && memcmp(d, raw, dl) == 0;
			free(got);
			if (!same) {
				s->collision++;
				continue;
			}
			r = 0;
		}
		if (r < 0)
			return r;
		struct rev *v = rev_add(s);
		if (!v)
			return -ENOMEM;
		v->name = strdup(name);
		v->hash = strdup(hash);
		v->revision = number;
		v->created = s->now;
		v->raw = malloc(raw_len + 1);
		if (!v->name || !v->hash || !v->raw)
			return -ENOMEM;
		memcpy(v->raw, raw, raw_len);
		v->raw[raw_len] = 0;
		v->raw_len = raw_len;
		*ret_ix = s->n_revs - 1;
		return 0;
	}
	return -EAGAIN;
}

/* getStatefulSetRevisions */
static int get_revisions(struct ss *s)
{
	char *raw = NULL;
	size_t raw_len, n = s->n_revs, cur = (size_t)-1, upd = (size_t)-1;
	int r;

	qsort(s->revs, s->n_revs, sizeof(*s->revs), rev_cmp);
	if ((r = sts_revision_patch(s->set, &raw, &raw_len)) < 0)
		return r;
	int64_t next = n ? s->revs[n - 1].revision + 1 : 1;
	char hash[STS_HASH_MAX];
	sts_revision_hash(raw, raw_len, &s->collision, hash);
	ssize_t last_equal = -1;
	for (size_t i = 0; i < n; i++)
		if (rev_equal(&s->revs[i], hash, raw, raw_len))
			last_equal = (ssize_t)i;
	if (last_equal >= 0 && (size_t)last_equal == n - 1) {
		upd = n - 1;
	} else if (last_equal >= 0) {
		/* roll back: the equal revision becomes the newest */
		struct rev *v = &s->revs[last_equal];
		char body[64];
		snprintf(body, sizeof(body), "{\"revision\":%" PRId64 "}", next);
		char *resp = NULL;
		r = req(s, "PATCH", "apps", "controllerrevisions", v->name, NULL, body, &resp);
		free(resp);
		if (r < 0)
			goto out;
		v->revision = next;
		upd = (size_t)last_equal;
	} else {
		if ((r = create_revision(s, raw, raw_len, next, &upd)) < 0)
			goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (eq(s->revs[i].name, str(s->status, "currentRevision"))) {
			cur = i;
			break;
		}
	if (cur == (size_t)-1)
		cur = upd;
	s->cur = &s->revs[cur];
	s->upd = &s->revs[upd];
	r = 0;
out:
	free(raw);
	return r;
}

/* truncateHistory: non-live revisions beyond revisionHistoryLimit, oldest first */
static int truncate_history(struct ss *s)
{
	int64_t limit = num(s->spec, "revisionHistoryLimit", 10);
	size_t n_hist = 0;
	bool *hist = calloc(s->n_revs ? s->n_revs : 1, sizeof(bool));
	int r = 0;

	if (!hist)
		return -ENOMEM;
	/* s->revs may hold a created revision at the end: sort again (by revision) */
	const char *cur = s->cur ? s->cur->name : NULL, *upd = s->upd ? s->upd->name : NULL;
	for (size_t i = 0; i < s->n_revs; i++) {
		const char *nm = s->revs[i].name;
		bool live = eq(nm, cur) || eq(nm, upd);
		for (size_t j = 0; !live && j < s->n_pods; j++)
			live = !s->pods[j].fresh && eq(s->pods[j].rev, nm);
		if (!live) {
			hist[i] = true;
			n_hist++;
		}
	}
	if (limit < 0 || (int64_t)n_hist <= limit)
		goto out;
	size_t drop = n_hist - (size_t)limit;
	for (size_t i = 0; i < s->n_revs && drop > 0; i++) {
		if (!hist[i])
			continue;
		drop--;
		r = req(s, "DELETE", "apps", "controllerrevisions", s->revs[i].name, NULL, NULL,
		        NULL);
		if (r == -ENOENT)
			r = 0;
		if (r < 0)
			break;
	}
out:
	free(hist);
	return r;
}

/* ---- pod writes ------------------------------------------------------------------------------ */
/* newStatefulSetPod + setPodRevision: the pod's JSON from the template of a revision */
static cJSON *build_pod(struct ss *s, const cJSON *tmpl, int ord, const char *rev)
{
	char name[300], prefix[300], idx[16];
	const cJSON *tm = get(tmpl, "metadata"), *t, *it;

	snprintf(name, sizeof(name), "%s-%d", s->name, ord);
	snprintf(prefix, sizeof(prefix), "%s-", s->name);
	snprintf(idx, sizeof(idx), "%d", ord);
	cJSON *pod = cJSON_CreateObject(), *m = cJSON_AddObjectToObject(pod, "metadata");
	cJSON_AddStringToObject(pod, "apiVersion", "v1");
	cJSON_AddStringToObject(pod, "kind", "Pod");
	cJSON_AddStringToObject(m, "name", name);
	cJSON_AddStringToObject(m, "generateName", prefix);
	cJSON_AddStringToObject(m, "namespace", s->ns);
	cJSON *labels = cJSON_IsObject(get(tm, "labels")) ? cJSON_Duplicate(get(tm, "labels"), 1)
	                                                  : cJSON_CreateObject();
	set_str(labels, L_POD_NAME, name);
	set_str(labels, L_POD_IDX, idx);
	set_str(labels, L_REV, rev);
	cJSON_AddItemToObject(m, "labels", labels);
	if (cJSON_IsObject(get(tm, "annotations")))
		cJSON_AddItemToObject(m, "annotations", cJSON_Duplicate(get(tm, "annotations"), 1));
	if (cJSON_IsArray(get(tm, "finalizers")))
		cJSON_AddItemToObject(m, "finalizers", cJSON_Duplicate(get(tm, "finalizers"), 1));
	cJSON *refs = cJSON_AddArrayToObject(m, "ownerReferences");
	struct owner so = set_owner(s);
	add_ctl_ref(refs, &so);
	cJSON *spec = cJSON_IsObject(get(tmpl, "spec")) ? cJSON_Duplicate(get(tmpl, "spec"), 1)
	                                                : cJSON_CreateObject();
	cJSON_AddItemToObject(pod, "spec", spec);
	set_str(spec, "hostname", name);
	set_str(spec, "subdomain", s->service);
	/* updateStorage: a claim volume per template, then the template's other volumes */
	const cJSON *vcts = get(s->spec, "volumeClaimTemplates");
	if (cJSON_GetArraySize(vcts) > 0) {
		cJSON *vols = cJSON_CreateArray();
		cJSON_ArrayForEach(t, vcts)
		{
			char cn[512];
			claim_name(s, t, ord, cn, sizeof(cn));
			cJSON *v = cJSON_CreateObject();
			cJSON_AddStringToObject(v, "name", str(get(t, "metadata"), "name"));
			cJSON *pvc = cJSON_AddObjectToObject(v, "persistentVolumeClaim");
			cJSON_AddStringToObject(pvc, "claimName", cn);
			cJSON_AddItemToArray(vols, v);
		}
		cJSON_ArrayForEach(it, get(spec, "volumes"))
		{
			bool claimed = false;
			cJSON_ArrayForEach(t, vcts)
			{
				claimed |= eq(str(it, "name"), str(get(t, "metadata"), "name"));
			}
			if (!claimed)
				cJSON_AddItemToArray(vols, cJSON_Duplicate(it, 1));
		}
		cJSON_DeleteItemFromObjectCaseSensitive(spec, "volumes");
		cJSON_AddItemToObject(spec, "volumes", vols);
	}
	return pod;
}

/* newVersionedStatefulSetPod's choice: the current revision below the partition */
static bool at_current(struct ss *s, int ord)
{
	const cJSON *us = get(s->spec, "updateStrategy");
	const cJSON *ru = get(us, "rollingUpdate");
	bool rolling = !str(us, "type") || eq(str(us, "type"), "RollingUpdate");
	if (rolling && !cJSON_IsObject(ru) &&
	    ord < s->start + (int)num(s->status, "currentReplicas", 0))
		return true;
	return cJSON_IsObject(ru) && ord < s->start + (int)num(ru, "partition", 0);
}

/* CreateStatefulPod */
static int create_pod(struct ss *s, struct pod *p)
{
	char why[512];
	bool cur = at_current(s, p->ord);
	const cJSON *tmpl = cur ? s->cur_tmpl : s->upd_tmpl;
	const char *rev = cur ? s->cur->name : s->upd->name;
	int r;

	if ((r = create_claims(s, p)) < 0) {
		pod_event(s, "Create", p->name, r, "failed to create PVCs");
		return r;
	}
	cJSON *pod = build_pod(s, tmpl, p->ord, rev);
	char *body = NULL;
	r = req_json(s, "POST", "", "pods", NULL, NULL, pod, &body);
	cJSON_Delete(pod);
	if (r == -EEXIST) {
		free(body);
		return r;
	}
	err_text(r, body, why, sizeof(why));
	free(body);
	int u = update_claims(s, p);
	if (u < 0) {
		pod_event(s, "Update", p->name, u, NULL);
		return u;
	}
	pod_event(s, "Create", p->name, r, why);
	if (r == 0) {
		p->fresh = true;
		free(p->rev);
		p->rev = strdup(rev);
	}
	return r;
}

static int delete_pod(struct ss *s, struct pod *p)
{
	char *body = NULL, why[512];
	int r = req(s, "DELETE", "", "pods", p->name, NULL, NULL, &body);
	if (r < 0 && r != -ENOENT) {
		err_text(r, body, why, sizeof(why));
		pod_event(s, "Delete", p->name, r, why);
		free(body);
		return r;
	}
	free(body);
	pod_event(s, "Delete", p->name, 0, NULL);
	return r == -ENOENT ? -ENOENT : 0;
}

static bool identity_matches(struct ss *s, const struct pod *p)
{
	char parent[254], want[300];
	int ord = sts_parse_ordinal(p->name, parent, sizeof(parent));
	snprintf(want, sizeof(want), "%s-%d", s->name, ord);
	return ord >= 0 && strcmp(parent, s->name) == 0 && strcmp(p->name, want) == 0 &&
	       eq(p->podname_label, p->name);
}

/* UpdateStatefulPod (identity labels, retention policy) */
static int update_pod(struct ss *s, struct pod *p)
{
	int r = 0;
	bool attempted = false;
	char why[512] = "";

	if (!claims_match(s, p)) {
		if ((r = update_claims(s, p)) < 0) {
			pod_event(s, "Update", p->name, r, NULL);
			return r;
		}
		/* upstream then PUTs the pod as it is */
		attempted = true;
	}
	if (!identity_matches(s, p)) {
		char body[700], *resp = NULL;
		snprintf(body, sizeof(body),
		         "{\"metadata\":{\"labels\":{\"" L_POD_NAME "\":\"%s\",\"" L_POD_IDX
		         "\":\"%d\"}}}",
		         p->name, p->ord);
		r = req(s, "PATCH", "", "pods", p->name, NULL, body, &resp);
		if (r < 0)
			err_text(r, resp, why, sizeof(why));
		free(resp);
		attempted = true;
	}
	if (attempted)
		pod_event(s, "Update", p->name, r, why);
	return r;
}

/* ---- updateStatefulSet ----------------------------------------------------------------------- */
static void count_status(struct ss *s, struct pod **list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct pod *p = list[i];
		if (!p || !created(p))
			continue;
		s->st_replicas++;
		if (running_ready(p)) {
			s->st_ready++;
			if (available(s, p))
				s->st_avail++;
		}
		if (!p->terminating) {
			if (eq(p->rev, s->cur->name))
				s->st_current++;
			if (eq(p->rev, s->upd->name))
				s->st_updated++;
		}
	}
}

static void recount(struct ss *s, struct pod **replicas, struct pod **condemned, size_t n_cond)
{
	s->st_replicas = s->st_ready = s->st_avail = s->st_current = s->st_updated = 0;
	count_status(s, replicas, (size_t)s->replicas);
	count_status(s, condemned, n_cond);
}

/* processReplica: 1 = stop (monotonic), 0 = go on, < 0 error */
static int process_replica(struct ss *s, struct pod *p, bool mono)
{
	int r;

	if (p->phase == KUBE_POD_FAILED || p->phase == KUBE_POD_SUCCEEDED) {
		if (!p->terminating && (r = delete_pod(s, p)) < 0 && r != -ENOENT)
			return r;
		return 1;
	}
	if (!created(p)) {
		if (claim_is_stale(s, p))
			return 1;
		if ((r = create_pod(s, p)) < 0)
			return r;
		return mono ? 1 : 0;
	}
	if (p->phase == KUBE_POD_PENDING) {
		if ((r = create_claims(s, p)) < 0)
			return r;
		if ((r = update_claims(s, p)) < 0) {
			pod_event(s, "Update", p->name, r, NULL);
			return r;
		}
	}
	if (p->terminating && mono)
		return 1;
	if (!running_ready(p) && mono)
		return 1;
	if (!available(s, p) && mono)
		return 1;
	if (identity_matches(s, p) && claims_match(s, p))
		return 0;
	return update_pod(s, p) < 0 ? -EIO : 0;
}

static int process_condemned(struct ss *s, struct pod *p, struct pod *first_unhealthy, bool mono)
{
	if (p->terminating)
		return mono ? 1 : 0;
	if (!running_ready(p) && mono && p != first_unhealthy)
		return 1;
	if (!available(s, p) && mono && p != first_unhealthy)
		return 1;
	int r = delete_pod(s, p);
	return r < 0 && r != -ENOENT ? r : 1;
}

/* runForAll: monotonic stops at the first stop or error; burst runs slowStartBatch's batches
 * (1, 2, 4, ... up to 500) and stops after a batch with an error. Returns 1 stop, 0, < 0. */
typedef int (*each_fn)(struct ss *s, struct pod **list, size_t i, void *ud);

static int run_for_all(struct ss *s, struct pod **list, size_t n, bool mono, each_fn fn, void *ud)
{
	if (mono) {
		for (size_t i = 0; i < n; i++) {
			int r = fn(s, list, i, ud);
			if (r != 0)
				return r;
		}
		return 0;
	}
	size_t done = 0, batch = n < 1 ? n : 1;
	while (batch > 0) {
		int err = 0;
		for (size_t i = done; i < done + batch; i++) {
			int r = fn(s, list, i, ud);
			if (r < 0 && !err)
				err = r;
		}
		if (err)
			return err;
		done += batch;
		size_t rem = n - done;
		batch = 2 * batch < rem ? 2 * batch : rem;
		if (batch > MAX_BATCH)
			batch = MAX_BATCH;
	}
	return 0;
}

static int each_replica(struct ss *s, struct pod **list, size_t i, void *ud)
{
	return process_replica(s, list[i], !*(bool *)ud);
}

static int each_fix_claim(struct ss *s, struct pod **list, size_t i, void *ud)
{
	(void)ud;
	if (claims_match(s, list[i]))
		return 0;
	return update_claims(s, list[i]);
}

struct cond_ud {
	bool burst;
	struct pod *first;
};

static int each_condemned(struct ss *s, struct pod **list, size_t i, void *ud)
{
	struct cond_ud *c = ud;
	int r = process_condemned(s, list[i], c->first, !c->burst);
	/* burst: a deletion does not stop the batch */
	return c->burst && r == 1 ? 0 : r;
}

static int ord_desc(const void *a, const void *b)
{
	const struct pod *x = *(struct pod *const *)a, *y = *(struct pod *const *)b;
	return y->ord - x->ord;
}

static int update_set(struct ss *s, struct pod **replicas, struct pod **condemned, size_t *n_cond,
                      struct pod *fresh)
{
	bool burst = s->parallel;
	struct pod *first = NULL;
	int r;

	for (size_t i = 0; i < s->n_pods; i++) {
		struct pod *p = &s->pods[i];
		if (in_range(s, p->ord))
			replicas[p->ord - s->start] = p;
		else if (p->ord >= 0)
			condemned[(*n_cond)++] = p;
	}
	for (int i = 0; i < s->replicas; i++)
		if (!replicas[i]) {
			struct pod *p = &fresh[i];
			char nm[300];
			snprintf(nm, sizeof(nm), "%s-%d", s->name, s->start + i);
			p->name = strdup(nm);
			p->ord = s->start + i;
			p->fresh = false;
			p->phase = KUBE_POD_PHASE_UNSET;
			if (!p->name)
				return -ENOMEM;
			replicas[i] = p;
		}
	qsort(condemned, *n_cond, sizeof(*condemned), ord_desc);
	for (int i = 0; i < s->replicas && !first; i++)
		if (unavailable(s, replicas[i]))
			first = replicas[i];
	for (size_t i = *n_cond; i-- > 0 && !first;)
		if (unavailable(s, condemned[i]))
			first = condemned[i];
	if (s->deleting)
		return 0;
	/* every exit from here on counts the status over replicas and condemned */
	struct cond_ud cu = {burst, first};
	if ((r = run_for_all(s, replicas, (size_t)s->replicas, !burst, each_replica, &burst)) !=
	            0 ||
	    (r = run_for_all(s, condemned, *n_cond, !burst, each_fix_claim, NULL)) != 0 ||
	    (r = run_for_all(s, condemned, *n_cond, !burst, each_condemned, &cu)) != 0) {
		recount(s, replicas, condemned, *n_cond);
		return r < 0 ? r : 0;
	}
	recount(s, replicas, condemned, *n_cond);
	if (s->ondelete)
		return 0;
	/* RollingUpdate */
	const cJSON *ru = get(get(s->spec, "updateStrategy"), "rollingUpdate");
	int update_min = cJSON_IsObject(ru) ? (int)num(ru, "partition", 0) : 0;
	const char *upd = s->upd->name;
	if (!s->c->max_unavailable_gate) {
		for (int t = s->replicas - 1; t >= update_min; t--) {
			struct pod *p = replicas[t];
			if (!eq(p->rev, upd) && !p->terminating) {
				r = delete_pod(s, p);
				if (r < 0 && r != -ENOENT)
					return r;
				s->st_current--;
				return 0;
			}
			if (unavailable(s, p))
				return 0;
		}
		return 0;
	}
	int max_unavail = 1;
	if (cJSON_IsObject(ru) &&
	    (r = sts_max_unavailable(get(ru, "maxUnavailable"), s->replicas, &max_unavail)) < 0)
		return r;
	int n_unavail = 0, need_update = 0;
	for (int t = s->replicas - 1; t >= 0; t--) {
		struct pod *p = replicas[t];
		if (unavailable(s, p)) {
			n_unavail++;
			if (burst && !eq(p->rev, upd) && !p->terminating)
				need_update++;
		}
	}
	if (n_unavail >= max_unavail && need_update == 0)
		return 0;
	if (burst) {
		for (int t = s->replicas - 1; t >= update_min; t--) {
			struct pod *p = replicas[t];
			if (!eq(p->rev, upd) && !available(s, p) && !p->terminating) {
				r = delete_pod(s, p);
				if (r < 0 && r != -ENOENT)
					return r;
				s->st_current--;
			}
		}
		int budget = max_unavail - n_unavail;
		for (int t = s->replicas - 1; t >= update_min && budget > 0; t--) {
			struct pod *p = replicas[t];
			if (!eq(p->rev, upd) && !unavailable(s, p)) {
				r = delete_pod(s, p);
				if (r < 0 && r != -ENOENT)
					return r;
				budget--;
				s->st_current--;
			}
		}
		return 0;
	}
	int to_delete = max_unavail - n_unavail, deleted = 0;
	for (int t = s->replicas - 1; t >= update_min && deleted < to_delete; t--) {
		struct pod *p = replicas[t];
		if (!eq(p->rev, upd) && !p->terminating) {
			r = delete_pod(s, p);
			if (r < 0 && r != -ENOENT)
				return r;
			deleted++;
			s->st_current--;
		}
	}
	return 0;
}

/* updateStatefulSetStatus: completeUpdate, inconsistentStatus, PUT */
static int write_status(struct ss *s)
{
	const char *cur = s->cur->name, *upd = s->upd->name;
	int cur_n = s->st_current;

	if (s->st_updated == s->replicas && s->st_ready == s->replicas &&
	    s->st_replicas == s->replicas) {
		cur_n = s->st_updated;
		cur = upd;
	}
	const cJSON *st = s->status;
	bool same = num(st, "observedGeneration", 0) >= s->generation &&
	            num(st, "replicas", 0) == s->st_replicas &&
	            num(st, "currentReplicas", 0) == cur_n &&
	            num(st, "readyReplicas", 0) == s->st_ready &&
	            num(st, "updatedReplicas", 0) == s->st_updated &&
	            eq(str(st, "currentRevision"), cur) && eq(str(st, "updateRevision"), upd) &&
	            num(st, "availableReplicas", 0) == s->st_avail;
	if (same)
		return 0;
	cJSON *ns = ensure(s->set, "status");
	set_num(ns, "observedGeneration", (double)s->generation);
	set_num(ns, "replicas", s->st_replicas);
	set_num(ns, "readyReplicas", s->st_ready);
	set_num(ns, "currentReplicas", cur_n);
	set_num(ns, "updatedReplicas", s->st_updated);
	set_num(ns, "availableReplicas", s->st_avail);
	set_num(ns, "collisionCount", s->collision);
	set_str(ns, "currentRevision", cur);
	set_str(ns, "updateRevision", upd);
	char *body = NULL;
	int r = req_json(s, "PUT", "apps", "statefulsets", s->name, "status", s->set, &body);
	free(body);
	if (r < 0)
		log_v(2, "%s: status update: %s", s->key, strerror(-r));
	return r;
}

static void ss_free(struct ss *s)
{
	for (size_t i = 0; i < s->n_pods; i++) {
		free(s->pods[i].name);
		free(s->pods[i].uid);
		free(s->pods[i].rev);
		free(s->pods[i].podname_label);
		free(s->pods[i].podidx_label);
	}
	free(s->pods);
	for (size_t i = 0; i < s->n_revs; i++) {
		free(s->revs[i].name);
		free(s->revs[i].hash);
		free(s->revs[i].raw);
	}
	free(s->revs);
	cJSON_Delete(s->cur_tmpl);
	cJSON_Delete(s->upd_tmpl);
	cJSON_Delete(s->set);
}

static int sync_set(struct ss *s, struct wk_result *out)
{
	struct shm_obj *o = NULL;
	struct walk w = {s, 0};
	size_t len;
	int r;

	r = kcmd_cache_get(s->c->ctx->arena, "apps", "statefulsets", s->ns, s->name, &o);
	if (r == -ENOENT) {
		log_info("StatefulSet has been deleted key=%s", s->key);
		return 0;
	}
	if (r < 0)
		return r;
	const char *js = kcmd_obj_json(o, &len);
	s->set = js ? cJSON_ParseWithLength(js, len) : NULL;
	kcmd_obj_free(o);
	if (!s->set)
		return -EBADMSG;
	cJSON *meta = get(s->set, "metadata");
	s->spec = get(s->set, "spec");
	s->status = get(s->set, "status");
	s->sel = get(s->spec, "selector");
	s->uid = str(meta, "uid");
	s->generation = num(meta, "generation", 0);
	s->deleting = str(meta, "deletionTimestamp") != NULL;
	s->replicas = (int)num(s->spec, "replicas", 1);
	s->start = (int)num(get(s->spec, "ordinals"), "start", 0);
	s->min_ready = (int)num(s->spec, "minReadySeconds", 0);
	s->service = str(s->spec, "serviceName");
	s->parallel = eq(str(s->spec, "podManagementPolicy"), "Parallel");
	const char *ut = str(get(s->spec, "updateStrategy"), "type");
	s->ondelete = eq(ut, "OnDelete");
	const cJSON *pol = get(s->spec, "persistentVolumeClaimRetentionPolicy");
	s->when_deleted = str(pol, "whenDeleted") ? str(pol, "whenDeleted") : "Retain";
	s->when_scaled = str(pol, "whenScaled") ? str(pol, "whenScaled") : "Retain";
	s->collision = (int32_t)num(s->status, "collisionCount", 0);
	s->now = kube_time_now();
	if (!cJSON_IsObject(s->sel) || !s->uid) {
		log_error("%s: StatefulSet without a selector: not synced", s->key);
		return 0;
	}
	if (ut && !eq(ut, "RollingUpdate") && !eq(ut, "OnDelete")) {
		/* Recreate (gate StatefulSetRecreateStrategy, alpha, off) */
		event(s, "Warning", "UnknownStrategy",
		      "statefulset %s/%s uses Recreate strategy but feature gate "
		      "StatefulSetRecreateStrategy is disabled",
		      s->ns, s->name);
		return -EINVAL;
	}
	/* adoptOrphanRevisions + ListRevisions (one walk; adopted ones are listed as ours) */
	kcmd_cache_list(s->c->ctx->arena, "apps", "controllerrevisions", s->ns, rev_visit, &w);
	if (w.err)
		return w.err;
	kcmd_cache_list(s->c->ctx->arena, "", "pods", s->ns, pod_visit, &w);
	if (w.err)
		return w.err;
	/* UpdateStatefulSet */
	if ((r = get_revisions(s)) < 0)
		return r;
	s->cur_tmpl = rev_template(s->cur);
	s->upd_tmpl = rev_template(s->upd);
	if (!s->cur_tmpl || !s->upd_tmpl)
		return -EBADMSG;
	struct pod **replicas = calloc((size_t)s->replicas + 1, sizeof(*replicas));
	struct pod **condemned = calloc(s->n_pods + 1, sizeof(*condemned));
	struct pod *fresh = calloc((size_t)s->replicas + 1, sizeof(*fresh));
	size_t n_cond = 0;
	if (!replicas || !condemned || !fresh) {
		r = -ENOMEM;
		goto out;
	}
	/* the status of the pods as listed (upstream updateStatus before processing) */
	for (size_t i = 0; i < s->n_pods; i++) {
		struct pod *p = &s->pods[i];
		condemned[i] = p;
	}
	s->st_replicas = s->st_ready = s->st_avail = s->st_current = s->st_updated = 0;
	count_status(s, condemned, s->n_pods);
	memset(condemned, 0, (s->n_pods + 1) * sizeof(*condemned));
	int ur = update_set(s, replicas, condemned, &n_cond, fresh);
	int sr = write_status(s);
	int tr = truncate_history(s);
	r = ur < 0 ? ur : sr < 0 ? sr : tr;
	if (r == 0 && s->min_ready > 0 && s->st_ready != s->st_avail) {
		/* FindMinNextPodAvailabilityCheck */
		int64_t best = (int64_t)s->min_ready * 1000000;
		for (size_t i = 0; i < s->n_pods; i++) {
			struct pod *p = &s->pods[i];
			if (!p->ready || !p->ready_tt || available(s, p))
				continue;
			int64_t left =
			        (p->ready_tt + (kube_time_t)s->min_ready * 1000000000 - s->now) /
			        1000;
			if (left >= 0 && left < best)
				best = left;
		}
		out->requeue_after = true;
		out->after_usec = (uint64_t)best + 1000;
	}
out:
	for (int i = 0; fresh && i < s->replicas; i++)
		free(fresh[i].name), free(fresh[i].rev);
	free(fresh);
	free(replicas);
	free(condemned);
	return r;
}

/* ---- worker ---------------------------------------------------------------------------------- */
static int stc_init(struct wk_ctx *ctx, void **ret)
{
	struct stc *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->ctx = ctx;
	c->max_unavailable_gate = kcmd_feature_enabled(KCMD_FEAT_MAX_UNAVAILABLE_STS);
	*ret = c;
	return 0;
}

static void stc_fini(void *state)
{
	free(state);
}

static void stc_sync(void *state, size_t q, const char *key, struct wk_result *out)
{
	struct stc *c = state;
	struct ss s;
	int r;

	(void)q;
	memset(out, 0, sizeof(*out));
	if (!c->synced) {
		if (kcmd_cache_synced(c->ctx->arena, "apps", "statefulsets") != 1 ||
		    kcmd_cache_synced(c->ctx->arena, "apps", "controllerrevisions") != 1 ||
		    kcmd_cache_synced(c->ctx->arena, "", "persistentvolumeclaims") != 1 ||
		    kcmd_cache_synced(c->ctx->arena, "", "pods") != 1) {
			out->requeue_after = true;
			out->after_usec = 100000;
			return;
		}
		c->synced = true;
	}
	memset(&s, 0, sizeof(s));
	s.c = c;
	s.key = key;
	if (kcmd_key_split(key, s.ns, sizeof(s.ns), s.name, sizeof(s.name)) < 0 || !*s.ns) {
		log_error("invalid key %s: dropped", key);
		return;
	}
	log_v(4, "Syncing StatefulSet %s", key);
	r = sync_set(&s, out);
	if (r < 0) {
		if (r != -EEXIST)
			log_warning("Error syncing StatefulSet %s, requeuing: %s", key,
			            strerror(-r));
		out->err = r;
		out->requeue_after = false;
	}
	ss_free(&s);
}

static const char *const stc_queues[] = {STS_QUEUE, NULL};

const struct wk_controller wk_sts_controller = {
        .name = STS_CONTROLLER,
        .queues = stc_queues,
        .init = stc_init,
        .sync = stc_sync,
        .fini = stc_fini,
};
