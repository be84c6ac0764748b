/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/daemonset/sync.c: upstream's DaemonSetsController.syncDaemonSet (pkg/controller/daemon,
 * v1.37) in a kcmd-worker, over cJSON trees.
 *
 * Reads: the DaemonSet, its ControllerRevisions and the Nodes as JSON from the shared cache
 * (KCMD_CACHE_OBJECT; a Node parsed only when it changed since this worker's last sync, nodes.h),
 * the namespace's pods as typed records, grouped by target node once per read; a pod's target node
 * (GetTargetNodeName) is its spec.nodeName, else the node its required node affinity targets,
 * which the record keeps (kube_pod affinity_node); a pod with neither is skipped, as upstream
 * skips a pod whose target it cannot read. No pod is read from the apiserver. Writes: pod
 * POST/DELETE, strategic-merge PATCHes to adopt and release pods and revisions, ControllerRevision
 * POST/PUT/DELETE, a merge PATCH of a pod's hash label (dedup), the DaemonSet's status PUT. Events:
 * SuccessfulCreate, FailedCreate, SuccessfulDelete, FailedDelete, FailedDaemonPod,
 * SucceededDaemonPod, SelectingAll (upstream's reasons and messages).
 *
 * A slow-start batch's creations, and the deletions, go out concurrently (one HTTP/2
 * connection), as upstream's goroutines. Deviations (docs/daemonset.md): the failed-pods backoff (1
 * s doubling to 15 min per DaemonSet uid, observedGeneration and node) lives in each worker
 * process, so with N workers a failed pod may be deleted up to N times per backoff step; a node the
 * rolling update finds in the pods but not in the cache counts as one the DaemonSet should not run
 * on (upstream's nodeLister.Get fails the sync).
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
#include "kube/deephash.h"
#include "kube/model.h"
#include "kube/proto.h"
#include "lib/features.h"
#include "lib/log.h"
#include "shm/arena.h"
#include "shm/record-model.h"
#include "workers/daemonset/controller.h"
#include "workers/daemonset/ds.h"
#include "workers/daemonset/nodes.h"
#include "workers/replicaset/expectations.h"
#include "workers/statefulset/ident.h"

#define BURST_REPLICAS     250 /* BurstReplicas */
#define BACKOFF_INITIAL_NS INT64_C(1000000000)
#define BACKOFF_MAX_NS     (INT64_C(15) * 60 * 1000000000)
#define HISTORY_LIMIT_DEF  10

struct backoff {
	char *key;
	int64_t delay_ns, last_ns;
};

struct dsc {
	struct wk_ctx *ctx;
	struct rs_exp *exp;
	bool consistency; /* StaleControllerConsistencyDaemonSet (and AtomicFIFO) */
	struct backoff *bo;
	size_t n_bo;
	struct ds_nodes *nodes; /* the Nodes' views, refreshed by each sync */
};

struct pod {
	struct ds_pod v;
	char *name, *uid, *node, *hash, *gen;
	bool terminal;
};

struct rev {
	cJSON *cr; /* owned */
	const char *name, *hash;
	int64_t revision;
};

struct dss {
	struct dsc *c;
	const char *key;
	char ns[254], name[254];
	cJSON *ds, *spec, *status, *sel, *tmpl, *tspec;
	const char *uid, *gen; /* gen: the deprecated template-generation annotation */
	int64_t generation;
	int32_t min_ready;
	bool surge;
	kube_time_t now;
	const cJSON *const *nodes; /* c->nodes' views, sorted by name */
	size_t n_nodes;
	bool *run, *cont; /* NodeShouldRunDaemonPod per node, once per sync */
	struct pod *pods;
	size_t n_pods, cap_pods;
	size_t *by_node; /* the indexes of the pods with a target node, sorted by (node, index) */
	size_t n_by_node;
	bool pods_stale; /* this sync wrote pods since it last read them */
	struct rev *revs;
	size_t n_revs;
	char hash[KUBE_POD_TEMPLATE_HASH_MAX + 8];
	struct ds_pod_body_split body; /* the pod body around the node's name, once per sync */
	int body_split;                /* 0 not built yet, 1 built, < 0 one body per pod */
	bool can_adopt_checked;
	int can_adopt_err;
	uint64_t requeue_us;
};

/* ---- helpers --------------------------------------------------------------------------------- */
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

static char *dup0(const char *v)
{
	return v ? strdup(v) : NULL;
}

static void err_text(int r, const char *body, char *out, size_t n)
{
	cJSON *st = body ? cJSON_Parse(body) : NULL;
	const char *m = str(st, "message");
	snprintf(out, n, "%s", m ? m : strerror(-r));
	cJSON_Delete(st);
}

static int req(struct dss *s, const char *method, const char *group, const char *resource,
               const char *name, const char *sub, const char *body, char **ret_body)
{
	struct kcmd_request rq = {.method = method,
	                          .group = group,
	                          .version = "v1",
	                          .resource = resource,
	                          .ns = s->ns,
	                          .name = name,
	                          .subresource = sub,
	                          .body = body,
	                          /* protobuf on a protobuf client, as client-go sends them */
	                          .body_kind = !strcmp(resource, "daemonsets") ? "DaemonSet"
	                                       : !strcmp(resource, "controllerrevisions")
	                                               ? "ControllerRevision"
	                                               : NULL};
	if (ret_body)
		*ret_body = NULL;
	return kcmd_kube_request(s->c->ctx->kc, &rq, NULL, ret_body);
}

/* The consistency store's WroteAt (KEP-5647): the DaemonSet's own write of resource r (pods, or
 * the DaemonSet itself in the record's second slot) at rv must be in the cache before the next
 * sync of this key reads it. */
static void wrote(struct dss *s, enum rs_cons_resource r, const char *rv)
{
	if (s->c->consistency && rv && rv[0] && s->uid)
		(void)rs_exp_wrote_at(s->c->exp, s->key, s->uid, r, rv);
}

/* An answer's metadata (its name and resourceVersion) without a tree of the whole object: the
 * pull decoder skips spec and status (JSON or protobuf). NULL when the body is not an object.
 * kube_object_free. */
static struct kube_partial *answer_meta(const char *body, size_t len)
{
	void *m = NULL;
	if (!body || kube_decode_any(KUBE_KIND_PARTIAL, body, len, 0, &m) < 0)
		return NULL;
	return m;
}

/* wrote() with the resourceVersion of an answer's body */
static void wrote_body(struct dss *s, enum rs_cons_resource r, const char *body, size_t len)
{
	if (!s->c->consistency || !body)
		return;
	struct kube_partial *m = answer_meta(body, len);
	wrote(s, r, m ? m->meta.resource_version : NULL);
	kube_object_free(m);
}

static int patch_rv(struct dss *s, enum kube_patch_type type, const char *group,
                    const char *resource, const char *name, const char *body,
                    enum rs_cons_resource record)
{
	struct kube_request rq = {.verb = KUBE_PATCH,
	                          .group = group,
	                          .version = "v1",
	                          .resource = resource,
	                          .ns = s->ns,
	                          .name = name,
	                          .body = body,
	                          .body_len = strlen(body),
	                          .patch_type = type};
	struct kube_response resp = {0};
	int r = kube_client_request(s->c->ctx->kc, &rq, NULL, NULL, &resp);
	if (r == 0)
		r = resp.error.err;
	if (r == 0 && (int)record >= 0)
		wrote_body(s, record, resp.body, resp.body_len);
	kube_response_clear(&resp);
	return r;
}

static int patch(struct dss *s, enum kube_patch_type type, const char *group, const char *resource,
                 const char *name, const char *body)
{
	return patch_rv(s, type, group, resource, name, body, (enum rs_cons_resource) - 1);
}

static void event(struct dss *s, const char *type, const char *reason, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static void event(struct dss *s, const char *type, const char *reason, const char *fmt, ...)
{
	struct kcmd_object_ref ref = {.api_version = "apps/v1",
	                              .kind = "DaemonSet",
	                              .ns = s->ns,
	                              .name = s->name,
	                              .uid = s->uid};
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	int r = kcmd_event_record(s->c->ctx->kc, DS_CONTROLLER, &ref, type, reason, "%s", msg);
	if (r < 0)
		log_v(2, "%s: recording event %s: %s", s->key, reason, strerror(-r));
}

/* ---- selectors ------------------------------------------------------------------------------- */
typedef const char *(*label_fn)(const void *o, const char *k);

/* LabelSelectorAsSelector(...).Matches: an empty selector matches everything, nil nothing */
static bool sel_matches(const cJSON *sel, label_fn lf, const void *o)
{
	const cJSON *it, *x;

	if (!cJSON_IsObject(sel))
		return false;
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

static const char *meta_label(const void *o, const char *k)
{
	const struct kube_object_meta *m = o;
	return kube_labels_get(m->labels, m->n_labels, k);
}

static const char *json_label(const void *o, const char *k)
{
	return str(get(get(o, "metadata"), "labels"), k);
}

/* ---- adoption -------------------------------------------------------------------------------- */
static int can_adopt(struct dss *s)
{
	char *body = NULL;

	if (s->can_adopt_checked)
		return s->can_adopt_err;
	s->can_adopt_checked = true;
	int r = req(s, "GET", "apps", "daemonsets", s->name, NULL, NULL, &body);
	if (r == 0) {
		cJSON *fresh = body ? cJSON_Parse(body) : NULL;
		cJSON *m = get(fresh, "metadata");
		if (!fresh)
			r = -EBADMSG;
		else if (!eq(str(m, "uid"), s->uid) || str(m, "deletionTimestamp"))
			r = -ESTALE;
		cJSON_Delete(fresh);
	}
	free(body);
	return s->can_adopt_err = r;
}

static int adopt(struct dss *s, const char *group, const char *resource, const char *name,
                 const char *uid)
{
	char body[1400];
	int r = can_adopt(s);
	if (r < 0)
		return r;
	snprintf(body, sizeof(body),
	         "{\"metadata\":{\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":"
	         "\"DaemonSet\",\"name\":\"%s\",\"uid\":\"%s\",\"controller\":true,"
	         "\"blockOwnerDeletion\":true}],\"uid\":\"%s\"}}",
	         s->name, s->uid, uid);
	/* upstream's PatchPod reports the adopted pod (now controlled by this set) to WroteAt */
	return patch_rv(s, KUBE_PATCH_STRATEGIC, group, resource, name, body,
	                !strcmp(resource, "pods") ? RS_CONS_PODS : (enum rs_cons_resource) - 1);
}

static int release(struct dss *s, const char *group, const char *resource, const char *name,
                   const char *uid)
{
	char body[600];
	snprintf(body, sizeof(body),
	         "{\"metadata\":{\"ownerReferences\":[{\"$patch\":\"delete\",\"uid\":\"%s\"}],"
	         "\"uid\":\"%s\"}}",
	         s->uid, uid);
	int r = patch(s, KUBE_PATCH_STRATEGIC, group, resource, name, body);
	return r == -ENOENT || r == -EINVAL || r == -EUCLEAN ? 0 : r;
}

/* ---- nodes ----------------------------------------------------------------------------------- */
static int node_visit(const struct shm_obj *o, void *ud)
{
	struct dss *s = ud;
	size_t len;
	const char *js = kcmd_obj_json(o, &len);

	return ds_nodes_see(s->c->nodes, kcmd_obj_name(o), kcmd_obj_resource_version(o), js, len);
}

static const char *node_name(const cJSON *n)
{
	return str(get(n, "metadata"), "name");
}

/* the cached Nodes' views (parsed once per Node change) and, over the template, whether the
 * DaemonSet should run (and may continue running) on each */
static int load_nodes(struct dss *s)
{
	struct ds_nodes *dn = s->c->nodes;
	uint64_t parsed = ds_nodes_parses(dn);
	int r;

	ds_nodes_begin(dn);
	r = kcmd_cache_list(s->c->ctx->arena, "", "nodes", NULL, node_visit, s);
	if (r < 0 && r != -ENOENT) {
		(void)ds_nodes_end(dn);
		return r;
	}
	if ((r = ds_nodes_end(dn)) < 0)
		return r;
	s->nodes = ds_nodes_views(dn, &s->n_nodes);
	log_v(5, "%s: %zu nodes, %" PRIu64 " parsed", s->key, s->n_nodes,
	      ds_nodes_parses(dn) - parsed);
	s->run = calloc(s->n_nodes + 1, sizeof(bool));
	s->cont = calloc(s->n_nodes + 1, sizeof(bool));
	if (!s->run || !s->cont)
		return -ENOMEM;
	/* the answers depend on the template and the Node only: remembered per Node for this
	 * DaemonSet's generation (a template change raises metadata.generation) */
	uint64_t key = UINT64_C(1469598103934665603); /* FNV-1a over uid and generation */
	for (const char *p = s->uid; *p; p++)
		key = (key ^ (unsigned char)*p) * UINT64_C(1099511628211);
	for (int b = 0; b < 64; b += 8)
		key = (key ^ (((uint64_t)s->generation >> b) & 0xff)) * UINT64_C(1099511628211);
	for (size_t i = 0; i < s->n_nodes; i++) {
		if (ds_nodes_memo_get(dn, i, key, &s->run[i], &s->cont[i]))
			continue;
		ds_node_should_run(s->tspec, s->nodes[i], &s->run[i], &s->cont[i]);
		ds_nodes_memo_set(dn, i, key, s->run[i], s->cont[i]);
	}
	return 0;
}

/* ---- pods ------------------------------------------------------------------------------------ */
struct walk {
	struct dss *s;
	int err;
};

static struct pod *pod_new(struct dss *s)
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

/* getDaemonPods: the namespace's pods claimed with ClaimPods (selector match, adopt orphans,
 * release owned pods that no longer match) */
static int pod_visit(const struct shm_obj *o, void *ud)
{
	struct walk *w = ud;
	struct dss *s = w->s;
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
	bool match = sel_matches(s->sel, meta_label, m);
	if (ours && !match) {
		if ((r = release(s, "", "pods", m->name, m->uid)) < 0 && !w->err)
			w->err = r;
		goto skip;
	}
	if (!ours) {
		if (!match || m->deletion_timestamp)
			goto skip;
		r = adopt(s, "", "pods", m->name, m->uid);
		if (r == -ENOENT)
			goto skip;
		if (r < 0) {
			if (!w->err)
				w->err = r;
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
	p->v.scheduled = v.pod.node_name && *v.pod.node_name;
	/* GetTargetNodeName */
	const char *target = p->v.scheduled ? v.pod.node_name : v.pod.affinity_node;
	p->node = target ? strdup(target) : NULL;
	if (target && !p->node) {
		shm_pod_view_free(&v);
		return w->err = -ENOMEM;
	}
	p->hash = dup0(kube_labels_get(m->labels, m->n_labels, DS_HASH_LABEL));
	p->gen = dup0(kube_labels_get(m->labels, m->n_labels, DS_GEN_LABEL));
	p->v.phase = v.pod.phase;
	p->v.ready = v.pod.ready;
	p->v.ready_since = v.pod.ready_transition_time;
	p->v.created = m->creation_timestamp;
	p->v.deleting = m->deletion_timestamp != 0;
	p->terminal = v.pod.phase == KUBE_POD_SUCCEEDED || v.pod.phase == KUBE_POD_FAILED;
skip:
	shm_pod_view_free(&v);
	return 0;
}

static void pods_free(struct dss *s)
{
	for (size_t i = 0; i < s->n_pods; i++) {
		free(s->pods[i].name);
		free(s->pods[i].uid);
		free(s->pods[i].node);
		free(s->pods[i].hash);
		free(s->pods[i].gen);
	}
	free(s->pods);
	free(s->by_node);
	s->pods = NULL;
	s->by_node = NULL;
	s->n_pods = s->cap_pods = s->n_by_node = 0;
}

/* the pods of one node are then a run of by_node: a lookup costs a binary search, where a
 * walk of every pod per node made the sync quadratic in the nodes */
static int by_node_cmp(const void *a, const void *b, void *pods)
{
	const struct pod *p = pods;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = strcmp(p[x].node, p[y].node);
	return c ? c : (x > y) - (x < y);
}

static int load_pods(struct dss *s)
{
	struct walk w = {s, 0};
	int r;

	pods_free(s);
	s->pods_stale = false;
	r = kcmd_cache_list(s->c->ctx->arena, "", "pods", s->ns, pod_visit, &w);
	if (r < 0 && r != -ENOENT)
		return r;
	if (w.err)
		return w.err;
	for (size_t i = 0; i < s->n_pods; i++) {
		struct pod *p = &s->pods[i];
		p->v.name = p->name;
		p->v.node = p->node;
		p->v.hash = p->hash;
		p->v.gen = p->gen;
	}
	if (!(s->by_node = calloc(s->n_pods + 1, sizeof(*s->by_node))))
		return -ENOMEM;
	for (size_t i = 0; i < s->n_pods; i++)
		if (s->pods[i].node)
			s->by_node[s->n_by_node++] = i;
	qsort_r(s->by_node, s->n_by_node, sizeof(*s->by_node), by_node_cmp, s->pods);
	return 0;
}

/* The pods read again where upstream calls getNodesToDaemonPods again (rollingUpdate,
 * updateDaemonSetStatus), unless this sync wrote no pod since it read them: the read then is
 * the cache as it was a moment before (a sync that changes nothing costs one read, not three). */
static int reload_pods(struct dss *s)
{
	return s->pods_stale ? load_pods(s) : 0;
}

/* getNodesToDaemonPods: the pods of node (include_deleted_terminal: also terminal pods being
 * deleted). ret holds n_pods entries. */
static size_t pods_of(struct dss *s, const char *node, bool include_deleted_terminal,
                      struct ds_pod **ret)
{
	size_t lo = 0, hi = s->n_by_node, n = 0;

	while (lo < hi) { /* the first pod whose node is not below node */
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(s->pods[s->by_node[mid]].node, node) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < s->n_by_node; i++) {
		struct pod *p = &s->pods[s->by_node[i]];
		if (strcmp(p->node, node) != 0)
			break;
		if (!include_deleted_terminal && p->terminal && p->v.deleting)
			continue;
		ret[n++] = &p->v;
	}
	return n;
}

static bool node_exists(struct dss *s, const char *name)
{
	return ds_nodes_find(s->c->nodes, name) >= 0;
}

/* ---- failed pods backoff (flowcontrol.Backoff, per worker process) --------------------------- */
static struct backoff *bo_find(struct dsc *c, const char *key)
{
	for (size_t i = 0; i < c->n_bo; i++)
		if (!strcmp(c->bo[i].key, key))
			return &c->bo[i];
	return NULL;
}

static void bo_gc(struct dsc *c, int64_t now)
{
	for (size_t i = 0; i < c->n_bo;) {
		if (now - c->bo[i].last_ns > 2 * BACKOFF_MAX_NS) {
			free(c->bo[i].key);
			c->bo[i] = c->bo[--c->n_bo];
		} else {
			i++;
		}
	}
}

/* IsInBackOffSinceUpdate; *delay the current delay */
static bool bo_in(struct dsc *c, const char *key, int64_t now, int64_t *delay)
{
	struct backoff *b = bo_find(c, key);
	if (!b)
		return false;
	*delay = b->delay_ns;
	return now - b->last_ns < b->delay_ns;
}

static void bo_next(struct dsc *c, const char *key, int64_t now)
{
	struct backoff *b = bo_find(c, key);
	if (!b) {
		struct backoff *nb = realloc(c->bo, (c->n_bo + 1) * sizeof(*nb));
		char *k = strdup(key);
		if (!nb || !k) {
			free(k);
			if (nb)
				c->bo = nb;
			return;
		}
		c->bo = nb;
		b = &c->bo[c->n_bo++];
		*b = (struct backoff){.key = k, .delay_ns = BACKOFF_INITIAL_NS, .last_ns = now};
		return;
	}
	if (now - b->last_ns > 2 * BACKOFF_MAX_NS)
		b->delay_ns = BACKOFF_INITIAL_NS;
	else
		b->delay_ns = b->delay_ns * 2 > BACKOFF_MAX_NS ? BACKOFF_MAX_NS : b->delay_ns * 2;
	b->last_ns = now;
}

static void requeue_after(struct dss *s, uint64_t us)
{
	if (!s->requeue_us || us < s->requeue_us)
		s->requeue_us = us;
}

/* ---- revisions (constructHistory, cleanupHistory) ------------------------------------------- */
/* getPatch: {"spec":{"template":{...,"$patch":"replace"}}} in Go's encoding */
static int ds_patch(struct dss *s, char **ret, size_t *len)
{
	return sts_revision_patch(s->ds, ret, len);
}

/* Match: the revision's data is the DaemonSet's patch */
static bool rev_matches(const cJSON *cr, const char *patch_bytes, size_t plen)
{
	char *d = NULL;
	size_t dl = 0;
	const cJSON *data = get(cr, "data");
	if (!data || sts_go_json(data, &d, &dl) < 0)
		return false;
	bool same = dl == plen && memcmp(d, patch_bytes, plen) == 0;
	free(d);
	return same;
}

static void revs_free(struct dss *s)
{
	for (size_t i = 0; i < s->n_revs; i++)
		cJSON_Delete(s->revs[i].cr);
	free(s->revs);
	s->revs = NULL;
	s->n_revs = 0;
}

static int rev_visit(const struct shm_obj *o, void *ud)
{
	struct walk *w = ud;
	struct dss *s = w->s;
	size_t len;
	const char *js = kcmd_obj_json(o, &len);
	cJSON *cr = js ? cJSON_ParseWithLength(js, len) : NULL;
	const cJSON *ctl = NULL, *r;
	int e;

	cJSON_ArrayForEach(r, get(get(cr, "metadata"), "ownerReferences"))
	{
		if (cJSON_IsTrue(get(r, "controller")))
			ctl = r;
	}
	if (!cr || (ctl && !eq(str(ctl, "uid"), s->uid)))
		goto drop;
	bool match = sel_matches(s->sel, json_label, cr);
	if (ctl && !match) {
		if ((e = release(s, "apps", "controllerrevisions", kcmd_obj_name(o),
		                 kcmd_obj_uid(o))) < 0 &&
		    !w->err)
			w->err = e;
		goto drop;
	}
	if (!ctl) {
		if (!match || str(get(cr, "metadata"), "deletionTimestamp"))
			goto drop;
		e = adopt(s, "apps", "controllerrevisions", kcmd_obj_name(o), kcmd_obj_uid(o));
		if (e == -ENOENT)
			goto drop;
		if (e < 0) {
			if (!w->err)
				w->err = e;
			goto drop;
		}
	}
	struct rev *nr = realloc(s->revs, (s->n_revs + 1) * sizeof(*nr));
	if (!nr) {
		cJSON_Delete(cr);
		return w->err = -ENOMEM;
	}
	s->revs = nr;
	s->revs[s->n_revs++] = (struct rev){.cr = cr};
	return 0;
drop:
	cJSON_Delete(cr);
	return 0;
}

static void rev_fill(struct rev *v)
{
	v->name = str(get(v->cr, "metadata"), "name");
	v->hash = json_label(v->cr, DS_HASH_LABEL);
	v->revision = num(v->cr, "revision", 0);
}

static int put_rev(struct dss *s, struct rev *v)
{
	char *body = cJSON_PrintUnformatted(v->cr), *resp = NULL;
	if (!body)
		return -ENOMEM;
	int r = req(s, "PUT", "apps", "controllerrevisions", v->name, NULL, body, &resp);
	free(body);
	if (r == 0 && resp) {
		cJSON *fresh = cJSON_Parse(resp);
		if (fresh) {
			cJSON_Delete(v->cr);
			v->cr = fresh;
			rev_fill(v);
		}
	}
	free(resp);
	return r;
}

/* snapshot: a new ControllerRevision of the current template */
static int snapshot(struct dss *s, const char *patch_bytes, size_t plen, int64_t revision,
                    struct rev *ret)
{
	const cJSON *cc = get(s->status, "collisionCount");
	int32_t coll = cJSON_IsNumber(cc) ? (int32_t)cc->valuedouble : 0;
	char hash[KUBE_POD_TEMPLATE_HASH_MAX], name[600];
	char *tj = cJSON_PrintUnformatted(s->tmpl);
	int r;

	if (!tj)
		return -ENOMEM;
	r = kube_pod_template_hash(tj, strlen(tj), cJSON_IsNumber(cc) ? &coll : NULL, hash);
	free(tj);
	if (r < 0)
		return r;
	snprintf(name, sizeof(name), "%s-%s", s->name, hash);
	cJSON *cr = cJSON_CreateObject(), *m = cJSON_AddObjectToObject(cr, "metadata");
	cJSON_AddStringToObject(cr, "apiVersion", "apps/v1");
	cJSON_AddStringToObject(cr, "kind", "ControllerRevision");
	cJSON_AddStringToObject(m, "name", name);
	cJSON_AddStringToObject(m, "namespace", s->ns);
	const cJSON *tl = get(get(s->tmpl, "metadata"), "labels");
	cJSON *labels = cJSON_IsObject(tl) ? cJSON_Duplicate(tl, 1) : cJSON_CreateObject();
	cJSON_DeleteItemFromObjectCaseSensitive(labels, DS_HASH_LABEL);
	cJSON_AddStringToObject(labels, DS_HASH_LABEL, hash);
	cJSON_AddItemToObject(m, "labels", labels);
	const cJSON *ann = get(get(s->ds, "metadata"), "annotations");
	if (cJSON_IsObject(ann) && ann->child)
		cJSON_AddItemToObject(m, "annotations", cJSON_Duplicate(ann, 1));
	cJSON *refs = cJSON_AddArrayToObject(m, "ownerReferences"), *ref = cJSON_CreateObject();
	cJSON_AddStringToObject(ref, "apiVersion", "apps/v1");
	cJSON_AddStringToObject(ref, "kind", "DaemonSet");
	cJSON_AddStringToObject(ref, "name", s->name);
	cJSON_AddStringToObject(ref, "uid", s->uid);
	cJSON_AddBoolToObject(ref, "controller", 1);
	cJSON_AddBoolToObject(ref, "blockOwnerDeletion", 1);
	cJSON_AddItemToArray(refs, ref);
	cJSON_AddNumberToObject(cr, "revision", (double)revision);
	char *head = cJSON_PrintUnformatted(cr);
	cJSON_Delete(cr);
	if (!head)
		return -ENOMEM;
	/* the data goes out byte for byte */
	size_t hl = strlen(head);
	char *body = malloc(hl + plen + 16);
	if (!body) {
		free(head);
		return -ENOMEM;
	}
	memcpy(body, head, hl - 1);
	memcpy(body + hl - 1, ",\"data\":", 8);
	memcpy(body + hl + 7, patch_bytes, plen);
	memcpy(body + hl + 7 + plen, "}", 2);
	free(head);
	char *resp = NULL;
	r = req(s, "POST", "apps", "controllerrevisions", NULL, NULL, body, &resp);
	free(body);
	if (r == -EEXIST) {
		free(resp);
		resp = NULL;
		int g = req(s, "GET", "apps", "controllerrevisions", name, NULL, NULL, &resp);
		cJSON *got = g == 0 && resp ? cJSON_Parse(resp) : NULL;
		free(resp);
		if (g < 0)
			return g;
		if (got && rev_matches(got, patch_bytes, plen)) {
			*ret = (struct rev){.cr = got};
			rev_fill(ret);
			return 0;
		}
		cJSON_Delete(got);
		/* a hash collision: bump status.collisionCount unless ours was stale */
		resp = NULL;
		g = req(s, "GET", "apps", "daemonsets", s->name, NULL, NULL, &resp);
		cJSON *cur = g == 0 && resp ? cJSON_Parse(resp) : NULL;
		free(resp);
		if (g < 0)
			return g;
		if (!cur)
			return -EBADMSG;
		cJSON *st = get(cur, "status");
		const cJSON *ccc = get(st, "collisionCount");
		if ((ccc == NULL) != (cc == NULL) ||
		    (ccc && cc && ccc->valuedouble != cc->valuedouble)) {
			cJSON_Delete(cur);
			log_v(2, "%s: stale collision count; will retry", s->key);
			return -EAGAIN;
		}
		if (!cJSON_IsObject(st))
			st = cJSON_AddObjectToObject(cur, "status");
		double next = (ccc ? ccc->valuedouble : 0) + 1;
		cJSON_DeleteItemFromObjectCaseSensitive(st, "collisionCount");
		cJSON_AddNumberToObject(st, "collisionCount", next);
		char *b = cJSON_PrintUnformatted(cur);
		cJSON_Delete(cur);
		if (!b)
			return -ENOMEM;
		g = req(s, "PUT", "apps", "daemonsets", s->name, "status", b, NULL);
		free(b);
		if (g < 0)
			return g;
		log_v(2, "%s: hash collision; collisionCount now %.0f", s->key, next);
		return -EEXIST;
	}
	if (r < 0) {
		free(resp);
		return r;
	}
	cJSON *got = resp ? cJSON_Parse(resp) : NULL;
	free(resp);
	if (!got)
		return -EBADMSG;
	*ret = (struct rev){.cr = got};
	rev_fill(ret);
	return 0;
}

static int rev_by_number(const void *a, const void *b)
{
	const struct rev *x = a, *y = b;
	return x->revision < y->revision ? -1 : x->revision > y->revision;
}

/* constructHistory: fills s->hash; old revisions stay in s->revs (cur removed) */
static int construct_history(struct dss *s)
{
	struct walk w = {s, 0};
	char *pb = NULL;
	size_t plen;
	int r;

	revs_free(s);
	r = kcmd_cache_list(s->c->ctx->arena, "apps", "controllerrevisions", s->ns, rev_visit, &w);
	if (r < 0 && r != -ENOENT)
		return r;
	if (w.err)
		return w.err;
	if ((r = ds_patch(s, &pb, &plen)) < 0)
		return r;
	size_t n_cur = 0;
	int64_t max_old = 0;
	bool *is_cur = calloc(s->n_revs + 1, sizeof(bool));
	if (!is_cur) {
		free(pb);
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->n_revs; i++) {
		struct rev *v = &s->revs[i];
		rev_fill(v);
		if (!v->hash && v->name) {
			cJSON *labels = get(get(v->cr, "metadata"), "labels");
			if (!cJSON_IsObject(labels))
				labels = cJSON_AddObjectToObject(get(v->cr, "metadata"), "labels");
			cJSON_AddStringToObject(labels, DS_HASH_LABEL, v->name);
			if ((r = put_rev(s, v)) < 0)
				goto out;
			rev_fill(v);
		}
		if (rev_matches(v->cr, pb, plen)) {
			is_cur[i] = true;
			n_cur++;
		} else if (v->revision > max_old) {
			max_old = v->revision;
		}
	}
	int64_t curr_revision = max_old + 1;
	struct rev cur = {0};
	if (n_cur == 0) {
		if ((r = snapshot(s, pb, plen, curr_revision, &cur)) < 0)
			goto out;
	} else {
		/* dedupCurHistories: keep the highest revision (the last of equal ones) */
		ssize_t keep = -1;
		int64_t maxr = 0;
		for (size_t i = 0; i < s->n_revs; i++)
			if (is_cur[i] && s->revs[i].revision >= maxr) {
				keep = (ssize_t)i;
				maxr = s->revs[i].revision;
			}
		for (size_t i = 0; keep < 0 && i < s->n_revs; i++)
			if (is_cur[i])
				keep = (ssize_t)i; /* defensive: revisions are never negative */
		struct rev *k = &s->revs[keep];
		if (n_cur > 1) {
			char body[512];
			snprintf(body, sizeof(body), "{\"metadata\":{\"labels\":{\"%s\":\"%s\"}}}",
			         DS_HASH_LABEL, k->hash ? k->hash : "");
			if ((r = load_pods(s)) < 0)
				goto out;
			for (size_t i = 0; i < s->n_pods; i++)
				if (!eq(s->pods[i].hash, k->hash) &&
				    (r = patch(s, KUBE_PATCH_MERGE, "", "pods", s->pods[i].name,
				               body)) < 0)
					goto out;
			for (size_t i = 0; i < s->n_revs; i++)
				if (is_cur[i] && (ssize_t)i != keep &&
				    (r = req(s, "DELETE", "apps", "controllerrevisions",
				             s->revs[i].name, NULL, NULL, NULL)) < 0)
					goto out;
		}
		if (k->revision < curr_revision) {
			cJSON_DeleteItemFromObjectCaseSensitive(k->cr, "revision");
			cJSON_AddNumberToObject(k->cr, "revision", (double)curr_revision);
			if ((r = put_rev(s, k)) < 0)
				goto out;
		}
		cur = *k;
		k->cr = NULL;
	}
	snprintf(s->hash, sizeof(s->hash), "%s", cur.hash ? cur.hash : "");
	cJSON_Delete(cur.cr);
	/* keep only the old ones */
	size_t j = 0;
	for (size_t i = 0; i < s->n_revs; i++) {
		if (is_cur[i]) {
			cJSON_Delete(s->revs[i].cr);
			continue;
		}
		s->revs[j++] = s->revs[i];
	}
	s->n_revs = j;
	r = 0;
out:
	free(is_cur);
	free(pb);
	return r;
}

static int cleanup_history(struct dss *s)
{
	int64_t keep = num(s->spec, "revisionHistoryLimit", HISTORY_LIMIT_DEF);
	int64_t kill = (int64_t)s->n_revs - keep;
	int r;

	if (kill <= 0)
		return 0;
	qsort(s->revs, s->n_revs, sizeof(*s->revs), rev_by_number);
	for (size_t i = 0; i < s->n_revs && kill > 0; i++) {
		struct rev *v = &s->revs[i];
		rev_fill(v);
		bool live = false;
		/* the hashes of every claimed pod, deleted terminal ones included */
		for (size_t p = 0; p < s->n_pods && !live; p++)
			live = s->pods[p].node && s->pods[p].hash && *s->pods[p].hash &&
			       eq(s->pods[p].hash, v->hash);
		if (live)
			continue;
		r = req(s, "DELETE", "apps", "controllerrevisions", v->name, NULL, NULL, NULL);
		if (r < 0 && r != -ENOENT)
			return r;
		kill--;
	}
	return 0;
}

/* Runs n requests at once, as upstream's goroutines of one batch (kube_client_request_many: one
 * HTTP/2 connection, the controller's token bucket); order[] gets their completion order. When
 * nothing could be sent every response carries that error. */
static void run_many(struct dss *s, const struct kube_request *reqs, size_t n,
                     struct kube_response *resps, size_t *order)
{
	int r = n ? kube_client_request_many(s->c->ctx->kc, reqs, n, resps, order) : 0;
	if (r < 0)
		for (size_t i = 0; i < n; i++) {
			memset(&resps[i], 0, sizeof(resps[i]));
			resps[i].error.err = r;
			order[i] = i;
		}
}

/* One slow-start batch: a pod per node in nodes[0..n), all created concurrently; the results
 * (Events, expectations lowered for a failure) taken in the order they finished, as upstream's
 * errCh. *errs counts the failures, *first_err keeps the first. */
static void create_batch(struct dss *s, const char *const *nodes, size_t n, size_t *errs,
                         int *first_err)
{
	char **bodies = calloc(n + 1, sizeof(*bodies));
	int *body_err = calloc(n + 1, sizeof(*body_err));
	size_t *idx = calloc(n + 1, sizeof(*idx)), *order = calloc(n + 1, sizeof(*order));
	struct kube_request *reqs = calloc(n + 1, sizeof(*reqs));
	struct kube_response *resps = calloc(n + 1, sizeof(*resps));
	size_t m = 0;

	if (!bodies || !body_err || !idx || !order || !reqs || !resps) {
		rs_exp_lower_creations(s->c->exp, s->key, (int64_t)n);
		*errs += n;
		if (!*first_err)
			*first_err = -ENOMEM;
		goto out;
	}
	if (s->body_split == 0)
		s->body_split =
		        ds_pod_body_split(s->tmpl, s->name, s->uid, s->gen, s->hash, &s->body) == 0
		                ? 1
		                : -1;
	for (size_t i = 0; i < n; i++) {
		body_err[i] = s->body_split > 0 ? ds_pod_body_splice(&s->body, nodes[i], &bodies[i])
		                                : -EINVAL;
		if (body_err[i] == -EINVAL)
			body_err[i] = ds_pod_body(s->tmpl, s->name, s->uid, s->gen, s->hash,
			                          nodes[i], &bodies[i]);
		if (body_err[i] < 0)
			continue;
		idx[m] = i;
		reqs[m++] = (struct kube_request){.verb = KUBE_CREATE,
		                                  .version = "v1",
		                                  .resource = "pods",
		                                  .ns = s->ns,
		                                  .body = bodies[i],
		                                  .body_len = strlen(bodies[i]),
		                                  .body_kind = "Pod"};
	}
	run_many(s, reqs, m, resps, order);
	/* the ones refused before any request first, then the answers as they came */
	for (size_t k = 0; k < n + m; k++) {
		size_t i;
		int e;
		const char *body = NULL;
		if (k < n) {
			if (body_err[k] == 0)
				continue;
			i = k;
			e = body_err[k];
		} else {
			struct kube_response *rp = &resps[order[k - n]];
			i = idx[order[k - n]];
			e = rp->error.err;
			body = rp->body;
		}
		if (e == -ESHUTDOWN)
			continue; /* the namespace is terminating: ignored */
		if (e < 0) {
			char why[512];
			bool no_labels = e == -EINVAL && k < n; /* refused before any request */
			if (no_labels)
				snprintf(why, sizeof(why), "unable to create pods, no labels");
			else
				err_text(e, body, why, sizeof(why));
			log_v(2, "%s: failed creation on %s, decrementing expectations: %s", s->key,
			      nodes[i], why);
			if (!no_labels) /* upstream records no Event for that one */
				event(s, "Warning", "FailedCreate", "Error creating: %s", why);
			rs_exp_lower_creations(s->c->exp, s->key, 1);
			if (!*first_err)
				*first_err = e;
			(*errs)++;
		} else {
			struct kube_partial *got = answer_meta(body, resps[order[k - n]].body_len);
			wrote(s, RS_CONS_PODS, got ? got->meta.resource_version : NULL);
			event(s, "Normal", "SuccessfulCreate", "Created pod: %s",
			      got && got->meta.name ? got->meta.name : "");
			kube_object_free(got);
		}
	}
out:
	for (size_t i = 0; resps && i < m; i++)
		kube_response_clear(&resps[i]);
	for (size_t i = 0; bodies && i < n; i++)
		free(bodies[i]);
	free(bodies);
	free(body_err);
	free(idx);
	free(order);
	free(reqs);
	free(resps);
}

/* The deletions, all at once (upstream: one goroutine each); NotFound is not an error. */
static void delete_all(struct dss *s, const char *const *dels, const char *const *pkeys, size_t n,
                       int *first_err)
{
	struct kube_request *reqs = calloc(n + 1, sizeof(*reqs));
	struct kube_response *resps = calloc(n + 1, sizeof(*resps));
	size_t *order = calloc(n + 1, sizeof(*order));

	if (!reqs || !resps || !order) {
		for (size_t i = 0; i < n; i++)
			rs_exp_deletion_failed(s->c->exp, s->key, pkeys[i]);
		if (n && !*first_err)
			*first_err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		reqs[i] = (struct kube_request){.verb = KUBE_DELETE,
		                                .version = "v1",
		                                .resource = "pods",
		                                .ns = s->ns,
		                                .name = dels[i]};
	run_many(s, reqs, n, resps, order);
	for (size_t k = 0; k < n; k++) {
		size_t i = order[k];
		int e = resps[i].error.err;
		if (e < 0) {
			rs_exp_deletion_failed(s->c->exp, s->key, pkeys[i]);
			if (e != -ENOENT) {
				char why[512];
				err_text(e, resps[i].body, why, sizeof(why));
				event(s, "Warning", "FailedDelete", "Error deleting: %s", why);
				if (!*first_err)
					*first_err = e;
			}
		} else {
			event(s, "Normal", "SuccessfulDelete", "Deleted pod: %s", dels[i]);
		}
		kube_response_clear(&resps[i]);
	}
out:
	free(reqs);
	free(resps);
	free(order);
}

/* syncNodes: expectations for both, creations in slow-start batches, then deletions */
static int sync_nodes(struct dss *s, const char *const *create, size_t want_create,
                      const char *const *dels, size_t want_del)
{
	int r = 0, first_err = 0;
	size_t n_create = want_create > BURST_REPLICAS ? BURST_REPLICAS : want_create;
	size_t n_del = want_del > BURST_REPLICAS ? BURST_REPLICAS : want_del;
	char **pkeys = calloc(n_del + 1, sizeof(char *));
	if (!pkeys)
		return -ENOMEM;
	for (size_t i = 0; i < n_del && r == 0; i++) {
		size_t l = strlen(s->ns) + strlen(dels[i]) + 2;
		if (!(pkeys[i] = malloc(l)))
			r = -ENOMEM;
		else
			snprintf(pkeys[i], l, "%s/%s", s->ns, dels[i]);
	}
	if (r == 0)
		r = rs_exp_expect(s->c->exp, s->key, (int64_t)n_create, (const char *const *)pkeys,
		                  n_del, rs_exp_now());
	if (n_create || n_del)
		s->pods_stale = true;
	if (r < 0)
		goto out_keys;
	log_v(4, "%s: %zu nodes need daemon pods, creating %zu; deleting %zu of %zu", s->key,
	      want_create, n_create, n_del, want_del);

	size_t batch = n_create < 1 ? n_create : 1, pos = 0; /* SlowStartInitialBatchSize */
	while (pos < n_create) {
		size_t errs = 0;
		create_batch(s, create + pos, batch, &errs, &first_err);
		size_t next = pos + batch;
		size_t skipped = n_create - next;
		if (errs && skipped > 0) {
			log_v(2, "%s: slow-start failure, skipping %zu creations", s->key, skipped);
			rs_exp_lower_creations(s->c->exp, s->key, (int64_t)skipped);
			break;
		}
		pos = next;
		batch = 2 * batch < n_create - pos ? 2 * batch : n_create - pos;
	}
	delete_all(s, dels, (const char *const *)pkeys, n_del, &first_err);
	rs_exp_settle(s->c->exp, s->key);
	r = first_err;
out_keys:
	for (size_t i = 0; i < n_del; i++)
		free(pkeys[i]);
	free(pkeys);
	return r;
}

/* ---- manage ---------------------------------------------------------------------------------- */
struct plan {
	char **create; /* node names (borrowed) */
	size_t n_create;
	char **del; /* pod names (borrowed) */
	size_t n_del;
};

static int plan_add(char ***arr, size_t *n, char *v)
{
	char **na = realloc(*arr, (*n + 1) * sizeof(**arr));
	if (!na)
		return -ENOMEM;
	*arr = na;
	na[(*n)++] = v;
	return 0;
}

static int manage(struct dss *s)
{
	struct ds_pod **on = calloc(s->n_pods + 1, sizeof(*on));
	size_t *del = calloc(s->n_pods + 1, sizeof(size_t));
	size_t *failed = calloc(s->n_pods + 1, sizeof(size_t));
	size_t *succ = calloc(s->n_pods + 1, sizeof(size_t));
	struct plan pl = {0};
	int r = 0;
	int64_t nowb = rs_exp_now();

	if (!on || !del || !failed || !succ) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < s->n_nodes && r == 0; i++) {
		const char *nn = node_name(s->nodes[i]);
		struct ds_node_plan np;
		size_t n = pods_of(s, nn, false, on);
		ds_pods_on_node(s->run[i], s->cont[i], on, n, s->surge, s->hash, s->min_ready,
		                s->now, del, failed, succ, &np);
		if (np.create)
			r = plan_add(&pl.create, &pl.n_create, (char *)nn);
		for (size_t k = 0; k < np.n_failed && r == 0; k++) {
			const struct ds_pod *p = on[failed[k]];
			char bk[800];
			int64_t delay;
			snprintf(bk, sizeof(bk), "%s/%" PRId64 "/%s", s->uid,
			         num(s->status, "observedGeneration", 0), nn);
			if (bo_in(s->c, bk, nowb, &delay)) {
				log_v(4,
				      "%s: deleting failed pod %s on node %s limited by backoff "
				      "(%" PRId64 "ms)",
				      s->key, p->name, nn, delay / 1000000);
				requeue_after(s, (uint64_t)(delay / 1000));
				continue;
			}
			bo_next(s->c, bk, nowb);
			log_v(2, "%s: found failed daemon pod %s on node %s, will try to kill it",
			      s->key, p->name, nn);
			event(s, "Warning", "FailedDaemonPod",
			      "Found failed daemon pod %s/%s on node %s, will try to kill it",
			      s->ns, p->name, nn);
			r = plan_add(&pl.del, &pl.n_del, (char *)p->name);
		}
		for (size_t k = 0; k < np.n_succeeded; k++)
			event(s, "Normal", "SucceededDaemonPod",
			      "Found succeeded daemon pod %s/%s on node %s, will try to delete it",
			      s->ns, on[succ[k]]->name, nn);
		for (size_t k = 0; k < np.n_del && r == 0; k++)
			r = plan_add(&pl.del, &pl.n_del, (char *)on[del[k]]->name);
	}
	/* getUnscheduledPodsWithoutNode */
	for (size_t i = 0; i < s->n_pods && r == 0; i++) {
		struct pod *p = &s->pods[i];
		if (!p->node || p->v.scheduled || (p->terminal && p->v.deleting) ||
		    node_exists(s, p->node))
			continue;
		r = plan_add(&pl.del, &pl.n_del, p->name);
	}
	if (r < 0)
		goto out;

	r = sync_nodes(s, (const char *const *)pl.create, pl.n_create, (const char *const *)pl.del,
	               pl.n_del);
out:
	free(pl.create);
	free(pl.del);
	free(on);
	free(del);
	free(failed);
	free(succ);
	return r;
}

static int pod_ptr_cmp(const void *a, const void *b)
{
	return ds_pod_cmp(*(struct ds_pod *const *)a, *(struct ds_pod *const *)b);
}

/* ---- rolling update (update.go rollingUpdate) ----------------------------------------------- */
static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int rolling_update(struct dss *s)
{
	size_t cap = s->n_nodes + s->n_pods + 1;
	const char **names = calloc(cap, sizeof(*names));
	struct ds_ru_node *nodes = calloc(cap, sizeof(*nodes));
	struct ds_pod **slots = calloc(s->n_pods + 1, sizeof(*slots));
	const char **del = calloc(s->n_pods + 1, sizeof(*del));
	const char **create = calloc(cap, sizeof(*create));
	size_t n = 0, n_del = 0, n_create = 0, used = 0;
	int desired = 0, max_surge = 0, max_unavail = 0, r = 0;

	if (!names || !nodes || !slots || !del || !create) {
		r = -ENOMEM;
		goto out;
	}
	/* updatedDesiredNodeCounts: the nodes with pods, and every node that should run one */
	for (size_t i = 0; i < s->n_nodes; i++) {
		if (s->run[i]) {
			desired++;
			names[n++] = node_name(s->nodes[i]);
		}
	}
	for (size_t i = 0; i < s->n_pods; i++) {
		struct pod *p = &s->pods[i];
		if (p->node && !(p->terminal && p->v.deleting))
			names[n++] = p->node;
	}
	qsort(names, n, sizeof(*names), str_cmp);
	size_t u = 0;
	for (size_t i = 0; i < n; i++)
		if (u == 0 || strcmp(names[u - 1], names[i]) != 0)
			names[u++] = names[i];
	n = u;
	for (size_t i = 0; i < n; i++) {
		struct ds_ru_node *nd = &nodes[i];
		nd->name = names[i];
		nd->pods = &slots[used];
		nd->n = pods_of(s, names[i], false, &slots[used]);
		used += nd->n;
		ptrdiff_t k = ds_nodes_find(s->c->nodes, names[i]);
		nd->run = k >= 0 && s->run[k];
	}
	const cJSON *ru = get(get(s->spec, "updateStrategy"), "rollingUpdate");
	if (ds_scaled(get(ru, "maxUnavailable"), desired, &max_unavail) < 0 ||
	    ds_scaled(get(ru, "maxSurge"), desired, &max_surge) < 0) {
		log_v(2, "%s: couldn't get unavailable numbers: invalid maxUnavailable or maxSurge",
		      s->key);
		r = -EINVAL;
		goto out;
	}
	if (desired > 0 && max_unavail == 0 && max_surge == 0)
		max_unavail = 1; /* not configured for surge or unavailability */
	ds_rolling_update(nodes, n, max_surge, max_unavail, desired, s->hash, s->gen, s->min_ready,
	                  s->now, del, &n_del, create, &n_create);
	r = sync_nodes(s, create, n_create, del, n_del);
out:
	free(names);
	free(nodes);
	free(slots);
	free(del);
	free(create);
	return r;
}

/* ---- status ---------------------------------------------------------------------------------- */
static int update_status(struct dss *s, bool observed_gen)
{
	struct ds_pod **on = calloc(s->n_pods + 1, sizeof(*on));
	struct ds_status st = {0};
	int r;

	if (!on)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_nodes; i++) {
		size_t n = pods_of(s, node_name(s->nodes[i]), false, on);
		if (n > 1) /* the oldest scheduled pod first */
			qsort(on, n, sizeof(*on), pod_ptr_cmp);
		ds_status_add(&st, s->run[i], on, n, s->hash, s->gen, s->min_ready, s->now);
	}
	free(on);
	st.unavailable = st.desired - st.available;

	const cJSON *x = s->status;
	if (num(x, "desiredNumberScheduled", 0) == st.desired &&
	    num(x, "currentNumberScheduled", 0) == st.current &&
	    num(x, "numberMisscheduled", 0) == st.misscheduled &&
	    num(x, "numberReady", 0) == st.ready &&
	    num(x, "updatedNumberScheduled", 0) == st.updated &&
	    num(x, "numberAvailable", 0) == st.available &&
	    num(x, "numberUnavailable", 0) == st.unavailable &&
	    num(x, "observedGeneration", 0) >= s->generation)
		goto requeue;

	cJSON *to = cJSON_Duplicate(s->ds, 1);
	for (int attempt = 0;; attempt++) {
		if (!to)
			return -ENOMEM;
		cJSON *ts = get(to, "status");
		if (!cJSON_IsObject(ts)) {
			cJSON_DeleteItemFromObjectCaseSensitive(to, "status");
			ts = cJSON_AddObjectToObject(to, "status");
		}
		struct {
			const char *k;
			int64_t v;
		} f[] = {{"desiredNumberScheduled", st.desired},
		         {"currentNumberScheduled", st.current},
		         {"numberMisscheduled", st.misscheduled},
		         {"numberReady", st.ready},
		         {"updatedNumberScheduled", st.updated},
		         {"numberAvailable", st.available},
		         {"numberUnavailable", st.unavailable},
		         {"observedGeneration", s->generation}};
		for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
			if (!observed_gen && !strcmp(f[i].k, "observedGeneration"))
				continue;
			cJSON_DeleteItemFromObjectCaseSensitive(ts, f[i].k);
			cJSON_AddNumberToObject(ts, f[i].k, (double)f[i].v);
		}
		char *body = cJSON_PrintUnformatted(to);
		cJSON_Delete(to);
		if (!body)
			return -ENOMEM;
		char *answer = NULL;
		r = req(s, "PUT", "apps", "daemonsets", s->name, "status", body, &answer);
		free(body);
		if (r == 0 && answer)
			wrote_body(s, RS_CONS_REPLICASETS, answer, strlen(answer));
		free(answer);
		if (r == 0 || attempt >= 1) /* StatusUpdateRetries */
			break;
		char *fresh = NULL;
		int g = req(s, "GET", "apps", "daemonsets", s->name, NULL, NULL, &fresh);
		to = g == 0 && fresh ? cJSON_Parse(fresh) : NULL;
		free(fresh);
		if (g < 0)
			return g;
	}
	if (r < 0)
		return r;
requeue:
	if (s->min_ready > 0 && st.ready != st.available)
		requeue_after(s, (uint64_t)s->min_ready * 1000000);
	return 0;
}

/* ---- sync ------------------------------------------------------------------------------------ */
static void dss_free(struct dss *s)
{
	free(s->run);
	free(s->cont);
	ds_pod_body_split_free(&s->body);
	pods_free(s);
	revs_free(s);
	cJSON_Delete(s->ds);
}

/* EnsureReady (KEP-5647), before anything is read: 1 (and the ConsistencyError's text logged)
 * when a write of this set's last syncs is newer than what the pod or DaemonSet store has
 * synced; 0 when ready (the record is cleared), or the gate is off. */
static int ensure_ready(struct dss *s)
{
	/* the record's two version slots: the pods, and the DaemonSets in the owner's slot */
	static const struct {
		const char *group, *resource,
		        *name; /* name: the ConsistencyError's group resource */
	} store[RS_EXP_CONS_RESOURCES] = {
	        [RS_CONS_PODS] = {"", "pods", "pods"},
	        [RS_CONS_REPLICASETS] = {"apps", "daemonsets", "daemonsets.apps"}};
	struct shm_type_info ti;
	char rv[RS_EXP_CONS_RESOURCES][sizeof(ti.rv)];
	const char *read[RS_EXP_CONS_RESOURCES];
	struct rs_cons_stale st;

	if (!s->c->consistency)
		return 0;
	for (unsigned i = 0; i < RS_EXP_CONS_RESOURCES; i++) {
		int t = shm_reader_find_type(s->c->ctx->arena, store[i].group, "v1",
		                             store[i].resource);
		rv[i][0] = 0;
		if (t >= 0 && shm_reader_type_info(s->c->ctx->arena, (uint16_t)t, &ti) == 0) {
			memcpy(rv[i], ti.rv, sizeof(ti.rv));
			rv[i][sizeof(ti.rv) - 1] = 0;
		}
		read[i] = rv[i];
	}
	if (rs_exp_ensure_ready(s->c->exp, s->key, read, &st) != 1)
		return 0;
	log_v(4, "%s: read version: %s is not as new as written version: %s for group resource %s",
	      s->key, st.read_rv, st.wrote_rv, store[st.resource].name);
	return 1;
}

static int sync_ds(struct dss *s)
{
	struct dsc *c = s->c;
	struct shm_obj *o = NULL;
	int r;

	if (ensure_ready(s))
		return -EAGAIN;
	r = kcmd_cache_get(c->ctx->arena, "apps", "daemonsets", s->ns, s->name, &o);
	if (r == -ENOENT) {
		log_v(3, "%s: daemon set has been deleted", s->key);
		rs_exp_delete(c->exp, s->key);
		return 0;
	}
	if (r < 0)
		return r;
	size_t len;
	const char *js = kcmd_obj_json(o, &len);
	s->ds = js ? cJSON_ParseWithLength(js, len) : NULL;
	kcmd_obj_free(o);
	if (!s->ds)
		return -EBADMSG;
	cJSON *md = get(s->ds, "metadata");
	s->uid = str(md, "uid");
	s->generation = num(md, "generation", 0);
	s->gen = str(get(md, "annotations"), DS_GEN_ANNOT);
	s->spec = get(s->ds, "spec");
	s->status = get(s->ds, "status");
	s->sel = get(s->spec, "selector");
	s->tmpl = get(s->spec, "template");
	s->tspec = get(s->tmpl, "spec");
	s->min_ready = (int32_t)num(s->spec, "minReadySeconds", 0);
	s->now = kube_time_now();
	if (!s->uid)
		return -EBADMSG;
	/* util.AllowsSurge: RollingUpdate with maxSurge > 0 (DaemonSetUpdateSurge is GA) */
	const cJSON *us = get(s->spec, "updateStrategy");
	if (eq(str(us, "type"), "RollingUpdate")) {
		int surge = 0;
		s->surge = ds_scaled(get(get(us, "rollingUpdate"), "maxSurge"), 1, &surge) == 0 &&
		           surge > 0;
	}

	if ((r = load_nodes(s)) < 0)
		return r;

	if (cJSON_IsObject(s->sel) && !s->sel->child) {
		event(s, "Warning", "SelectingAll",
		      "This daemon set is selecting all pods. A non-empty selector is required.");
		return 0;
	}
	if (str(md, "deletionTimestamp"))
		return 0;

	if ((r = construct_history(s)) < 0) {
		log_v(2, "%s: failed to construct revisions of DaemonSet: %s", s->key,
		      strerror(-r));
		return r;
	}
	/* SatisfiedExpectations first, then the cache, as upstream orders them: the pods read
	 * before the check could miss creations whose observation satisfied it in between, and
	 * manage would create their nodes' pods again */
	struct rs_exp_state es;
	if (!rs_exp_satisfied(c->exp, s->key, rs_exp_now(), &es)) {
		if (es.recheck_after_ns > 0)
			requeue_after(s, (uint64_t)(es.recheck_after_ns / 1000) + 1000);
		if ((r = load_pods(s)) < 0)
			return r;
		return update_status(s, false);
	}
	if ((r = load_pods(s)) < 0)
		return r;

	int err = manage(s);
	if (err == 0 && eq(str(get(s->spec, "updateStrategy"), "type"), "RollingUpdate")) {
		/* the rolling update, once the manage loop's writes are all observed (checked
		 * before the pods are read, as above) */
		if (rs_exp_satisfied(c->exp, s->key, rs_exp_now(), NULL)) {
			if ((r = reload_pods(s)) < 0)
				err = r;
			else
				err = rolling_update(s);
		}
	}
	if (err == 0 && (r = cleanup_history(s)) < 0)
		err = r;
	if ((r = reload_pods(s)) < 0)
		return err ? err : r;
	int serr = update_status(s, true);
	if (err && serr)
		log_error("%s: failed to update status: %s", s->key, strerror(-serr));
	return err ? err : serr;
}

static void dsc_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct dsc *c = state;
	struct dss s = {.c = c, .key = key};

	(void)q;
	*res = (struct wk_result){0}; /* Forget unless told otherwise */
	if (kcmd_key_split(key, s.ns, sizeof(s.ns), s.name, sizeof(s.name)) < 0) {
		log_error("%s: malformed key", key);
		return;
	}
	bo_gc(c, rs_exp_now());
	int r = sync_ds(&s);
	if (r < 0) {
		log_v(2, "%s: sync failed: %s", key, strerror(-r));
		res->err = r;
	} else if (s.requeue_us) {
		res->requeue_after = true;
		res->after_usec = s.requeue_us;
	}
	dss_free(&s);
}

static int dsc_init(struct wk_ctx *ctx, void **ret)
{
	struct dsc *c = calloc(1, sizeof(*c));
	int r;

	if (!c)
		return -ENOMEM;
	c->ctx = ctx;
	if (ctx->expectations_fd < 0) {
		free(c);
		return -EBADF;
	}
	if ((r = ds_nodes_new(&c->nodes)) < 0) {
		free(c);
		return r;
	}
	r = rs_exp_attach(ctx->expectations_fd, RS_EXP_WORKER, rs_exp_now(), &c->exp);
	if (r < 0) {
		ds_nodes_free(c->nodes);
		free(c);
		return r;
	}
	c->consistency = kcmd_feature_enabled(KCMD_FEAT_STALE_CONSISTENCY_DS) &&
	                 kcmd_feature_enabled(KCMD_FEAT_ATOMIC_FIFO);
	*ret = c;
	return 0;
}

static void dsc_fini(void *state)
{
	struct dsc *c = state;

	if (c) {
		rs_exp_detach(c->exp);
		ds_nodes_free(c->nodes);
		for (size_t i = 0; i < c->n_bo; i++)
			free(c->bo[i].key);
		free(c->bo);
		free(c);
	}
}

static const char *const dsc_queues[] = {DS_QUEUE, NULL};

const struct wk_controller wk_ds_controller = {
        .name = DS_CONTROLLER,
        .queues = dsc_queues,
        .init = dsc_init,
        .sync = dsc_sync,
        .fini = dsc_fini,
};
