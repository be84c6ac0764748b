/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/selinuxwarning/plugin.c: kcm's selinux-warning-controller (no alias), off by default
 * as in kcm and gated by SELinuxChangePolicy (GA and locked on in v1.37), client
 * "selinux-warning-controller" (upstream pkg/controller/volume/selinuxwarning; sw.h has the
 * decisions, docs/selinux-warning.md the rest).
 *
 * Shape: one queue, "selinux_warning". Keys: "ns/name" for a pod (added, deleted, or its phase
 * turning Succeeded/Failed), "pvc:ns/name" for a claim bound (added with spec.volumeName, its
 * volumeName changed, or a PV whose claimRef uid appeared or changed), "csidriver:name" for a
 * CSIDriver added, deleted with seLinuxMount true, or whose seLinuxMount changed. Upstream's
 * handlers turn a claim or a driver into its pods at once (a pod index by claim, and the
 * volume cache by driver); here the dispatcher has neither (the typed pod record keeps no
 * volumes), so the worker does it: it syncs every pod it knows to use the claim or the driver.
 *
 * One worker process (upstream runs one goroutine), holding what upstream's controller holds in
 * memory: the volume cache (sw.h), and the pods' specs. The typed pod record in the shared cache
 * has no volumes and no securityContext, so the worker reads a pod's spec from the apiserver the
 * first time it syncs that pod uid (a LIST of every pod when the process starts, a GET after),
 * keeps only what it needs (volumes, securityContext, each container's volumeMounts and
 * securityContext) and drops it when the pod leaves the cache. The spec fields read are immutable
 * once the pod exists, except ephemeral containers (added through a subresource): see the doc.
 * When the worker process starts it rebuilds the volume cache from every pod in the shared cache
 * (a restarted kcm's informers would replay them too), before its first key
 * (KCMD_TEST_SW_NO_REBUILD skips that, for the crash test's negative control only).
 *
 * The metric: upstream's custom collector lists the cache's conflicts at each scrape. The cache
 * lives in the worker, so the worker writes the rendered series into a memfd the manager made
 * (KCMD_SW_CONFLICTS_FD) after each change, and the manager's mgr_metrics copies them out. The
 * memfd holds a header {seq, len} and the text; the worker makes seq odd, writes the text and
 * len, then makes seq even (pwrite each, in that order); the manager reads seq, the text, and
 * seq again and uses the text only when both reads are the same even value (retrying a few
 * times, else it leaves the family out of that scrape). pread/pwrite on one file are ordered by
 * the page cache: a pread issued after a pwrite returned sees its bytes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kcmd/kcmd.h"
#include "shm/record-model.h"
#include "shm/records.h"
#include "workers/selinuxwarning/sw.h"
#include "workers/worker.h"

#define SW_STORAGE    "storage.k8s.io"
#define SW_FD_ENV     "KCMD_SW_CONFLICTS_FD"
#define SW_KEY_PVC    "pvc:"
#define SW_KEY_DRIVER "csidriver:"
#define SW_METRIC     "selinux_warning_controller_selinux_volume_conflict"

/* ---- handlers (kcmd-dispatcher) ----------------------------------------------------------- */
static bool pod_final(enum kube_pod_phase p)
{
	return p == KUBE_POD_SUCCEEDED || p == KUBE_POD_FAILED;
}

static void add_pod(struct inf_handler_ctx *ctx, const char *ns, const char *name)
{
	char key[KCMD_KEY_MAX + 1];

	if (name && *name && kcmd_key_make(key, sizeof(key), ns, name) > 0)
		kcmd_queue_add(ctx, 0, key);
}

static void add_prefixed(struct inf_handler_ctx *ctx, const char *prefix, const char *ns,
                         const char *name)
{
	char key[KCMD_KEY_MAX + 1];
	int n;

	if (!name || !*name)
		return;
	n = ns ? snprintf(key, sizeof(key), "%s%s/%s", prefix, ns, name)
	       : snprintf(key, sizeof(key), "%s%s", prefix, name);
	if (n > 0 && (size_t)n < sizeof(key))
		kcmd_queue_add(ctx, 0, key);
}

/* enqueuePod: add and delete */
static void on_pod(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	if (ev->meta)
		add_pod(ctx, kcmd_meta_namespace(ev->meta), kcmd_meta_name(ev->meta));
	else if (ev->old)
		add_pod(ctx, kcmd_obj_namespace(ev->old), kcmd_obj_name(ev->old));
}

/* updatePod: only a phase change into Succeeded or Failed */
static void on_pod_update(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	const struct kube_pod *p = ev->obj;
	enum kube_pod_phase old = KUBE_POD_PHASE_UNSET;
	struct shm_obj copy;
	struct shm_pod_view v;

	if (!p || !ev->old || !pod_final(p->phase))
		return;
	if (shm_obj_dup(ev->old, &copy) == 0) {
		if (shm_pod_view_init(&copy, &v) == 0)
			old = v.pod.phase;
		shm_pod_view_free(&v);
	}
	if (old != p->phase)
		add_pod(ctx, kcmd_meta_namespace(ev->meta), kcmd_meta_name(ev->meta));
}

static cJSON *event_json(const struct inf_event *ev)
{
	size_t len = 0;
	const char *js = kcmd_event_json(ev, &len);
	return js ? cJSON_ParseWithLength(js, len) : NULL;
}

static cJSON *obj_json(const struct shm_obj *o)
{
	size_t len = 0;
	const char *js = o ? kcmd_obj_json(o, &len) : NULL;
	return js ? cJSON_ParseWithLength(js, len) : NULL;
}

static const char *jpath(const cJSON *o, const char *a, const char *b)
{
	return cJSON_GetStringValue(
	        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, a), b));
}

static const char *str0(const char *s)
{
	return s ? s : "";
}

/* addPVC: a bound claim; updatePVC: spec.volumeName changed */
static void on_pvc(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	cJSON *n = event_json(ev), *o = ev->kind == INF_EVENT_UPDATE ? obj_json(ev->old) : NULL;
	const char *vn = str0(jpath(n, "spec", "volumeName"));

	if (n &&
	    (ev->kind == INF_EVENT_ADD ? *vn != 0
	                               : strcmp(str0(jpath(o, "spec", "volumeName")), vn) != 0))
		add_prefixed(ctx, SW_KEY_PVC, kcmd_meta_namespace(ev->meta),
		             kcmd_meta_name(ev->meta));
	cJSON_Delete(n);
	cJSON_Delete(o);
}

static const cJSON *claim_ref(const cJSON *pv)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(pv, "spec"), "claimRef");
	return cJSON_IsObject(r) ? r : NULL;
}

/* addPV / updatePV: a claimRef with a uid, new or with another uid */
static void on_pv(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	cJSON *n = event_json(ev), *o = ev->kind == INF_EVENT_UPDATE ? obj_json(ev->old) : NULL;
	const cJSON *nr = claim_ref(n), * or = claim_ref(o);
	const char *uid = str0(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(nr, "uid")));

	if (nr && *uid &&
	    (ev->kind == INF_EVENT_ADD || ! or ||
	     strcmp(str0(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(or, "uid"))), uid)))
		add_prefixed(ctx, SW_KEY_PVC,
		             str0(cJSON_GetStringValue(
		                     cJSON_GetObjectItemCaseSensitive(nr, "namespace"))),
		             cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(nr, "name")));
	cJSON_Delete(n);
	cJSON_Delete(o);
}

static bool selinux_mount(const cJSON *driver)
{
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(driver, "spec"), "seLinuxMount"));
}

/* addCSIDriver; updateCSIDriver: seLinuxMount changed; deleteCSIDriver: it was true */
static void on_driver(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	cJSON *n = event_json(ev), *o = ev->kind != INF_EVENT_ADD ? obj_json(ev->old) : NULL;
	const char *name = ev->meta ? kcmd_meta_name(ev->meta) : kcmd_obj_name(ev->old);

	if (ev->kind == INF_EVENT_ADD ||
	    (ev->kind == INF_EVENT_UPDATE && selinux_mount(n) != selinux_mount(o)) ||
	    (ev->kind == INF_EVENT_DELETE && selinux_mount(o)))
		add_prefixed(ctx, SW_KEY_DRIVER, NULL, name);
	cJSON_Delete(n);
	cJSON_Delete(o);
}

static int add_pod_obj(const struct shm_obj *o, void *ud)
{
	add_pod(ud, kcmd_obj_namespace(o), kcmd_obj_name(o));
	return 0;
}

static void sw_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	kcmd_cache_list(ctx->arena, "", "pods", NULL, add_pod_obj, ctx);
}

static const char *const sw_queue_names[] = {SW_QUEUE, NULL};
static const struct inf_handler_entry sw_entries[] = {
        {"", "pods", on_pod, on_pod_update, on_pod},
        {"", "persistentvolumeclaims", on_pvc, on_pvc, NULL},
        {"", "persistentvolumes", on_pv, on_pv, NULL},
        {SW_STORAGE, "csidrivers", on_driver, on_driver, on_driver},
};
static const struct inf_handler_table sw_handlers = {
        .controller = SW_CONTROLLER,
        .queues = sw_queue_names,
        .entries = sw_entries,
        .n_entries = sizeof(sw_entries) / sizeof(sw_entries[0]),
        .resync = sw_resync,
};

/* ---- the sync (kcmd-worker) --------------------------------------------------------------- */
struct pod_spec {
	char *ns, *name, *uid;
	cJSON *pod; /* trimmed: metadata{namespace,name,uid}, the spec fields sw_pod_volumes reads
	             */
};

struct sw_state {
	struct wk_ctx *ctx;
	struct sw_cache *cache;
	struct pod_spec *specs;
	size_t n_specs, cap_specs;
	bool rebuilt;
	int fd; /* the conflicts memfd, -1 without one */
	uint64_t seq;
	/* pods whose sync failed during the start-up rebuild, retried with backoff */
	char **retry;
	size_t n_retry;
	uint64_t retry_at_us, retry_delay_us;
};

static uint64_t mono_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static struct pod_spec *spec_find(struct sw_state *s, const char *ns, const char *name)
{
	for (size_t i = 0; i < s->n_specs; i++)
		if (!strcmp(s->specs[i].ns, ns) && !strcmp(s->specs[i].name, name))
			return &s->specs[i];
	return NULL;
}

static void spec_drop(struct sw_state *s, const char *ns, const char *name)
{
	struct pod_spec *p = spec_find(s, ns, name);

	if (!p)
		return;
	free(p->ns);
	free(p->name);
	free(p->uid);
	cJSON_Delete(p->pod);
	*p = s->specs[--s->n_specs];
}

/* keeps of a pod what the decision reads; takes pod */
static cJSON *trim_pod(cJSON *pod)
{
	static const char *const kinds[] = {"initContainers", "containers", "ephemeralContainers"};
	static const char *const keep_spec[] = {"volumes", "securityContext", "initContainers",
	                                        "containers", "ephemeralContainers"};
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(pod, "metadata"),
	      *spec = cJSON_GetObjectItemCaseSensitive(pod, "spec"), *c, *x, *next;

	if (!cJSON_IsObject(pod) || !cJSON_IsObject(meta) || !cJSON_IsObject(spec))
		return pod; /* not a pod: sw_pod_volumes refuses or ignores what it cannot read */

	for (x = pod->child; x; x = next) {
		next = x->next;
		if (strcmp(x->string, "metadata") && strcmp(x->string, "spec"))
			cJSON_Delete(cJSON_DetachItemViaPointer(pod, x));
	}
	for (x = meta ? meta->child : NULL; x; x = next) {
		next = x->next;
		if (strcmp(x->string, "namespace") && strcmp(x->string, "name") &&
		    strcmp(x->string, "uid"))
			cJSON_Delete(cJSON_DetachItemViaPointer(meta, x));
	}
	for (x = spec ? spec->child : NULL; x; x = next) {
		bool keep = false;
		next = x->next;
		for (size_t i = 0; i < 5; i++)
			keep |= !strcmp(x->string, keep_spec[i]);
		if (!keep)
			cJSON_Delete(cJSON_DetachItemViaPointer(spec, x));
	}
	for (size_t k = 0; k < 3; k++)
		cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(spec, kinds[k]))
		{
			if (!cJSON_IsObject(c))
				continue;
			for (x = c->child; x; x = next) {
				next = x->next;
				if (strcmp(x->string, "securityContext") &&
				    strcmp(x->string, "volumeMounts"))
					cJSON_Delete(cJSON_DetachItemViaPointer(c, x));
			}
		}
	return pod;
}

/* stores a pod's trimmed spec (replacing one of another uid); takes pod. 0, -ENOMEM. */
static int spec_store(struct sw_state *s, cJSON *pod)
{
	const char *ns = str0(jpath(pod, "metadata", "namespace")),
	           *name = str0(jpath(pod, "metadata", "name")),
	           *uid = str0(jpath(pod, "metadata", "uid"));
	struct pod_spec *p;

	spec_drop(s, ns, name);
	if (s->n_specs == s->cap_specs) {
		size_t cap = s->cap_specs ? s->cap_specs * 2 : 64;
		struct pod_spec *n = realloc(s->specs, cap * sizeof(*n));
		if (!n) {
			cJSON_Delete(pod);
			return -ENOMEM;
		}
		s->specs = n;
		s->cap_specs = cap;
	}
	p = &s->specs[s->n_specs];
	*p = (struct pod_spec){.ns = strdup(ns), .name = strdup(name), .uid = strdup(uid)};
	if (!p->ns || !p->name || !p->uid) {
		free(p->ns);
		free(p->name);
		free(p->uid);
		cJSON_Delete(pod);
		return -ENOMEM;
	}
	p->pod = trim_pod(pod);
	s->n_specs++;
	return 0;
}

/* The spec of pod ns/name with this uid: cached, else read from the apiserver. 0 with *ret
 * (borrowed), -ENOENT (the apiserver has no such pod, or one of another uid: it is being
 * replaced, its events follow), -errno of the request. */
static int spec_get(struct sw_state *s, const char *ns, const char *name, const char *uid,
                    const cJSON **ret)
{
	struct pod_spec *p = spec_find(s, ns, name);
	char *body = NULL;
	cJSON *pod;
	int r;

	if (p && !strcmp(p->uid, uid)) {
		*ret = p->pod;
		return 0;
	}
	r = kcmd_kube_request(s->ctx->kc,
	                      &(struct kcmd_request){.method = "GET",
	                                             .version = "v1",
	                                             .resource = "pods",
	                                             .ns = ns,
	                                             .name = name},
	                      NULL, &body);
	if (r < 0) {
		free(body);
		return r;
	}
	pod = cJSON_Parse(body);
	free(body);
	if (!pod)
		return -EBADMSG;
	if (strcmp(str0(jpath(pod, "metadata", "uid")), uid)) {
		cJSON_Delete(pod);
		return -ENOENT;
	}
	if ((r = spec_store(s, pod)) < 0)
		return r;
	*ret = spec_find(s, ns, name)->pod;
	return 0;
}

/* the start-up LIST: every pod's spec at once instead of a GET each */
static int spec_load_all(struct sw_state *s)
{
	char *body = NULL;
	cJSON *list, *items, *pod;
	int r = kcmd_kube_request(
	        s->ctx->kc,
	        &(struct kcmd_request){.method = "GET", .version = "v1", .resource = "pods"}, NULL,
	        &body);

	if (r < 0) {
		free(body);
		return r;
	}
	list = cJSON_Parse(body);
	free(body);
	items = cJSON_DetachItemFromObjectCaseSensitive(list, "items");
	cJSON_Delete(list);
	if (!cJSON_IsArray(items)) {
		cJSON_Delete(items);
		return -EBADMSG;
	}
	while ((pod = cJSON_DetachItemFromArray(items, 0)))
		if ((r = spec_store(s, pod)) < 0)
			break;
	cJSON_Delete(items);
	return r < 0 ? r : 0;
}

/* ---- the conflicts memfd ------------------------------------------------------------------ */
struct sw_hdr {
	uint64_t seq; /* odd while the worker writes */
	uint64_t len; /* of the text after the header */
};

static void esc(FILE *f, const char *v) /* a Prometheus label value */
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f), fputc(*v, f);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

struct lines {
	char **v;
	size_t n;
	int err;
};

static int render_one(const struct sw_conflict *c, void *ud)
{
	struct lines *l = ud;
	char *text = NULL, **nv;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f || !(nv = realloc(l->v, (l->n + 1) * sizeof(*nv)))) {
		if (f)
			fclose(f);
		free(text);
		return l->err = -ENOMEM;
	}
	l->v = nv;
	/* client_golang writes the labels sorted by name */
	fputs(SW_METRIC "{pod1_name=\"", f);
	esc(f, c->name);
	fputs("\",pod1_namespace=\"", f);
	esc(f, c->ns);
	fputs("\",pod1_value=\"", f);
	esc(f, c->value);
	fputs("\",pod2_name=\"", f);
	esc(f, c->other_name);
	fputs("\",pod2_namespace=\"", f);
	esc(f, c->other_ns);
	fputs("\",pod2_value=\"", f);
	esc(f, c->other_value);
	fputs("\",property=\"", f);
	esc(f, c->property);
	fputs("\"} 1\n", f);
	if (fclose(f) != 0) {
		free(text);
		return l->err = -ENOMEM;
	}
	l->v[l->n++] = text;
	return 0;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* writes the current conflicts' series for the manager; best effort (logged) */
static void publish(struct sw_state *s)
{
	struct lines l = {0};
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	struct sw_hdr h;

	if (s->fd < 0)
		return;
	sw_cache_conflicts(s->cache, render_one, &l);
	qsort(l.v, l.n, sizeof(*l.v), str_cmp);
	if (!l.err && (f = open_memstream(&text, &len))) {
		for (size_t i = 0; i < l.n; i++)
			fputs(l.v[i], f);
		if (fclose(f) != 0)
			l.err = -ENOMEM;
	} else if (!l.err) {
		l.err = -ENOMEM;
	}
	for (size_t i = 0; i < l.n; i++)
		free(l.v[i]);
	free(l.v);
	if (l.err) {
		kcmd_log_warning("SELinux conflict metrics not updated: %s", strerror(-l.err));
		free(text);
		return;
	}
	h = (struct sw_hdr){.seq = ++s->seq * 2 - 1, .len = 0};
	if (pwrite(s->fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    (len && pwrite(s->fd, text, len, sizeof(h)) != (ssize_t)len)) {
		kcmd_log_warning("SELinux conflict metrics not updated: %s", strerror(errno));
		free(text);
		return; /* seq stays odd: the manager leaves the family out until the next write */
	}
	h.len = len;
	if (pwrite(s->fd, &h.len, sizeof(h.len), sizeof(h.seq)) != (ssize_t)sizeof(h.len))
		kcmd_log_warning("SELinux conflict metrics not updated: %s", strerror(errno));
	h.seq = s->seq * 2;
	if (pwrite(s->fd, &h.seq, sizeof(h.seq), 0) != (ssize_t)sizeof(h.seq))
		kcmd_log_warning("SELinux conflict metrics not updated: %s", strerror(errno));
	free(text);
}

/* ---- syncing a pod ------------------------------------------------------------------------- */
struct lookups {
	struct sw_state *s;
	cJSON **held; /* parsed objects, freed after the pod's decision */
	size_t n;
};

static const cJSON *hold(struct lookups *l, struct shm_obj *o)
{
	cJSON *j = obj_json(o), **n;

	kcmd_obj_free(o);
	if (!j)
		return NULL;
	if (!(n = realloc(l->held, (l->n + 1) * sizeof(*n)))) {
		cJSON_Delete(j);
		return NULL;
	}
	l->held = n;
	l->held[l->n++] = j;
	return j;
}

static const cJSON *lk_pvc(void *ud, const char *ns, const char *name)
{
	struct lookups *l = ud;
	struct shm_obj *o = NULL;

	if (kcmd_cache_get(l->s->ctx->arena, "", "persistentvolumeclaims", ns, name, &o) < 0)
		return NULL;
	return hold(l, o);
}

static const cJSON *lk_pv(void *ud, const char *name)
{
	struct lookups *l = ud;
	struct shm_obj *o = NULL;

	if (kcmd_cache_get(l->s->ctx->arena, "", "persistentvolumes", NULL, name, &o) < 0)
		return NULL;
	return hold(l, o);
}

static bool lk_driver(void *ud, const char *driver)
{
	struct lookups *l = ud;
	struct shm_obj *o = NULL;
	cJSON *j;
	bool r;

	if (kcmd_cache_get(l->s->ctx->arena, SW_STORAGE, "csidrivers", NULL, driver, &o) < 0)
		return false; /* no CSIDriver: SELinuxMount false */
	j = obj_json(o);
	kcmd_obj_free(o);
	r = selinux_mount(j);
	cJSON_Delete(j);
	return r;
}

/* the pod from the shared cache: 1 with uid and phase, 0 not there, -errno */
static int cached_pod(struct sw_state *s, const char *ns, const char *name, char *uid,
                      size_t uidlen, enum kube_pod_phase *phase)
{
	struct shm_obj *o = NULL, copy;
	struct shm_pod_view v;
	int r = kcmd_cache_get(s->ctx->arena, "", "pods", ns, name, &o);

	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	r = shm_obj_dup(o, &copy);
	kcmd_obj_free(o);
	if (r < 0)
		return r;
	r = shm_pod_view_init(&copy, &v);
	if (r == 0) {
		snprintf(uid, uidlen, "%s", str0(v.pod.meta.uid));
		*phase = v.pod.phase;
	}
	shm_pod_view_free(&v);
	return r < 0 ? r : 1;
}

/* reportConflictEvents: an Event on each conflict's first pod, as long as the pods exist */
static void report(struct sw_state *s, const struct sw_conflict *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char uid[128];
		enum kube_pod_phase ph;
		char *msg;

		if (cached_pod(s, c[i].ns, c[i].name, uid, sizeof(uid), &ph) != 1) {
			kcmd_log_v(2,
			           "failed to get first pod for event pod=\"%s/%s\" err=\"pod "
			           "\\\"%s\\\" "
			           "not found\"",
			           c[i].ns, c[i].name, c[i].name);
			return; /* a conflict resolved by deleting a pod is not reported */
		}
		if (!(msg = sw_conflict_message(&c[i])))
			return;
		kcmd_event_record(s->ctx->kc, SW_COMPONENT,
		                  &(struct kcmd_object_ref){.api_version = "v1",
		                                            .kind = "Pod",
		                                            .ns = c[i].ns,
		                                            .name = c[i].name,
		                                            .uid = uid},
		                  KCMD_EVENT_NORMAL, c[i].reason, "%s", msg);
		free(msg);
	}
}

static void delete_pod(struct sw_state *s, const char *ns, const char *name)
{
	kcmd_log_v(4, "Deleting pod key=\"%s/%s\"", ns, name);
	sw_cache_delete_pod(s->cache, ns, name);
}

/* sync: 0 done, -errno retry */
static int sync_pod(struct sw_state *s, const char *ns, const char *name)
{
	struct lookups l = {.s = s};
	struct sw_lookup lk = {
	        .pvc = lk_pvc, .pv = lk_pv, .driver_selinux_mount = lk_driver, .ud = &l};
	struct sw_volume *v = NULL;
	enum kube_pod_phase phase = KUBE_POD_PHASE_UNSET;
	const cJSON *pod;
	char uid[128];
	size_t n = 0;
	int r, err = 0;

	r = cached_pod(s, ns, name, uid, sizeof(uid), &phase);
	if (r < 0)
		return r;
	if (r == 0) { /* the pod was deleted */
		delete_pod(s, ns, name);
		spec_drop(s, ns, name);
		return 0;
	}
	if (pod_final(phase)) { /* kubelet unmounts its volumes */
		delete_pod(s, ns, name);
		return 0;
	}
	r = spec_get(s, ns, name, uid, &pod);
	if (r == -ENOENT) { /* gone at the apiserver: the cache's delete follows */
		delete_pod(s, ns, name);
		spec_drop(s, ns, name);
		return 0;
	}
	if (r < 0)
		return r;
	kcmd_log_v(4, "Syncing pod pod=\"%s/%s\"", ns, name);
	r = sw_pod_volumes(pod, &lk, &v, &n);
	for (size_t i = 0; r == 0 && i < n; i++) {
		struct sw_conflict *c = NULL;
		size_t nc = 0;

		switch (v[i].state) {
		case SW_VOL_MULTI:
			kcmd_event_record(
			        s->ctx->kc, SW_COMPONENT,
			        &(struct kcmd_object_ref){.api_version = "v1",
			                                  .kind = "Pod",
			                                  .ns = ns,
			                                  .name = name,
			                                  .uid = uid},
			        KCMD_EVENT_WARNING, "MultipleSELinuxLabels",
			        "Volume \"%s\" is mounted twice with different SELinux labels "
			        "inside this pod",
			        v[i].name);
			/* fallthrough */
		case SW_VOL_ERROR:
			kcmd_log_v(4,
			           "failed to get SELinux label pod=\"%s/%s\" volume=\"%s\" "
			           "err=\"%s\"",
			           ns, name, v[i].name, str0(v[i].err));
			err = -EAGAIN;
			break;
		case SW_VOL_SKIP:
			kcmd_log_v(4, "Skipping volume of unknown plugin volume=\"%s\"", v[i].name);
			break;
		case SW_VOL_OK:
			kcmd_log_v(4,
			           "Syncing pod volume pod=\"%s/%s\" volume=\"%s\" label=\"%s\" "
			           "uniqueVolumeName=\"%s\" changePolicy=\"%s\" csiDriver=\"%s\"",
			           ns, name, v[i].name, v[i].label, v[i].unique, v[i].policy,
			           v[i].csi_driver);
			r = sw_cache_add_volume(s->cache, v[i].unique, ns, name, v[i].label,
			                        v[i].policy, v[i].csi_driver, &c, &nc);
			if (r == 0)
				report(s, c, nc);
			sw_conflicts_free(c, nc);
			break;
		}
	}
	sw_volumes_free(v, n);
	for (size_t i = 0; i < l.n; i++)
		cJSON_Delete(l.held[i]);
	free(l.held);
	return r < 0 ? r : err;
}

struct key_list {
	char **v;
	size_t n;
};

static int key_push(struct key_list *k, const char *ns, const char *name)
{
	char **n = realloc(k->v, (k->n + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	k->v = n;
	if (asprintf(&k->v[k->n], "%s/%s", ns, name) < 0)
		return -ENOMEM;
	k->n++;
	return 0;
}

static void keys_free(struct key_list *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->v[i]);
	free(k->v);
	*k = (struct key_list){0};
}

static int sync_key(struct sw_state *s, const char *key)
{
	char ns[256], name[256];

	if (kcmd_key_split(key, ns, sizeof(ns), name, sizeof(name)) < 0)
		return 0; /* not a key kcmd makes: dropped */
	return sync_pod(s, ns, name);
}

static int sync_keys(struct sw_state *s, struct key_list *k, struct key_list *failed)
{
	int err = 0;

	for (size_t i = 0; i < k->n; i++) {
		int r = sync_key(s, k->v[i]);
		if (r < 0) {
			err = r;
			if (failed) {
				char **n = realloc(failed->v, (failed->n + 1) * sizeof(*n));
				if (n && (n[failed->n] = strdup(k->v[i]))) {
					failed->v = n;
					failed->n++;
				} else if (n) {
					failed->v = n;
				}
			}
		}
	}
	return err;
}

struct claim_match {
	const char *claim;
	bool hit;
};

static int claim_is(const char *claim, void *ud)
{
	struct claim_match *m = ud;
	m->hit |= !strcmp(claim, m->claim);
	return 0;
}

static int driver_pod(const char *ns, const char *name, void *ud)
{
	return key_push(ud, ns, name);
}

static int rebuild_pod(const struct shm_obj *o, void *ud)
{
	return key_push(ud, kcmd_obj_namespace(o), kcmd_obj_name(o));
}

static void retry_due(struct sw_state *s)
{
	struct key_list k = {.v = s->retry, .n = s->n_retry}, failed = {0};

	if (!s->n_retry || mono_us() < s->retry_at_us)
		return;
	s->retry = NULL;
	s->n_retry = 0;
	sync_keys(s, &k, &failed);
	keys_free(&k);
	s->retry = failed.v;
	s->n_retry = failed.n;
	if (s->n_retry) { /* the default controller rate limiter's exponential part */
		s->retry_delay_us = s->retry_delay_us * 2 > 1000000000ull ? 1000000000ull
		                                                          : s->retry_delay_us * 2;
		s->retry_at_us = mono_us() + s->retry_delay_us;
	}
}

/* the volume cache from every pod in the shared cache, when the process starts */
static int rebuild(struct sw_state *s)
{
	struct key_list k = {0}, failed = {0};
	int r = spec_load_all(s);

	if (r < 0) {
		kcmd_log_warning(
		        "SELinux warning controller: listing pods: %s; reading them one by "
		        "one",
		        kcmd_kube_reason(r) ? kcmd_kube_reason(r) : strerror(-r));
	}
	r = kcmd_cache_list(s->ctx->arena, "", "pods", NULL, rebuild_pod, &k);
	if (r < 0) {
		keys_free(&k);
		return r;
	}
	sync_keys(s, &k, &failed);
	keys_free(&k);
	s->retry = failed.v;
	s->n_retry = failed.n;
	s->retry_delay_us = 5000; /* 5 ms, then doubled */
	s->retry_at_us = mono_us() + s->retry_delay_us;
	s->rebuilt = true;
	return 0;
}

static int sw_init(struct wk_ctx *ctx, void **ret_state)
{
	struct sw_state *s = calloc(1, sizeof(*s));
	const char *fd = getenv(SW_FD_ENV);
	int r;

	if (!s)
		return -ENOMEM;
	if ((r = sw_cache_new(&s->cache)) < 0) {
		free(s);
		return r;
	}
	s->ctx = ctx;
	s->fd = -1;
	/* test seam for the crash test's negative control: start with an empty volume cache, as a
	 * worker that did not rebuild it would */
	if (getenv("KCMD_TEST_SW_NO_REBUILD"))
		s->rebuilt = true;
	if (fd && *fd) {
		char *end;
		long v = strtol(fd, &end, 10);
		if (!*end && v >= 0 && v < 1 << 20)
			s->fd = (int)v;
	}
	*ret_state = s;
	return 0;
}

static void sw_fini(void *state)
{
	struct sw_state *s = state;
	struct key_list k;

	if (!s)
		return;
	sw_cache_free(s->cache);
	for (size_t i = 0; i < s->n_specs; i++) {
		free(s->specs[i].ns);
		free(s->specs[i].name);
		free(s->specs[i].uid);
		cJSON_Delete(s->specs[i].pod);
	}
	free(s->specs);
	k = (struct key_list){.v = s->retry, .n = s->n_retry};
	keys_free(&k);
	free(s);
}

static void sw_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct sw_state *s = state;
	struct key_list k = {0};
	int r = 0;

	(void)q;
	*res = (struct wk_result){0};
	if (!s->rebuilt && (r = rebuild(s)) < 0) {
		res->err = r;
		return;
	}
	retry_due(s);
	if (!strncmp(key, SW_KEY_PVC, strlen(SW_KEY_PVC))) {
		/* enqueueAllPodsForPVC: the pods of the claim's namespace that use it */
		char ns[256], name[256];
		if (kcmd_key_split(key + strlen(SW_KEY_PVC), ns, sizeof(ns), name, sizeof(name)) ==
		    0) {
			struct claim_match m = {.claim = name};
			for (size_t i = 0; i < s->n_specs && r == 0; i++) {
				m.hit = false;
				if (!strcmp(s->specs[i].ns, ns))
					sw_pod_claims(s->specs[i].pod, claim_is, &m);
				if (m.hit)
					r = key_push(&k, ns, s->specs[i].name);
			}
		}
	} else if (!strncmp(key, SW_KEY_DRIVER, strlen(SW_KEY_DRIVER))) {
		r = sw_cache_pods_for_driver(s->cache, key + strlen(SW_KEY_DRIVER), driver_pod, &k);
	} else {
		r = sync_key(s, key);
	}
	if (r == 0 && k.n)
		r = sync_keys(s, &k, NULL);
	keys_free(&k);
	if (r < 0) {
		kcmd_log_v(2, "%s failed with: %s", key, strerror(-r));
		res->err = r;
	}
	if (s->n_retry && !r) {
		uint64_t now = mono_us();
		*res = (struct wk_result){.requeue_after = true,
		                          .after_usec = s->retry_at_us > now ? s->retry_at_us - now
		                                                             : 1000};
	}
	publish(s);
}

static const struct wk_controller sw_worker = {
        .name = SW_CONTROLLER,
        .queues = sw_queue_names,
        .init = sw_init,
        .sync = sw_sync,
        .fini = sw_fini,
};

/* ---- the manager's side: the memfd and the scrape ----------------------------------------- */
struct sw_mgr {
	int fd;
};

static int sw_mgr_setup(struct kcmd_mgr_env *env, const struct kcmd_flag_values *v,
                        void **ret_state)
{
	struct sw_mgr *m;
	int fd, r;

	(void)v;
	*ret_state = NULL;
	if (!(m = calloc(1, sizeof(*m))))
		return -ENOMEM;
	fd = memfd_create("kcmd-selinux-conflicts", MFD_CLOEXEC);
	if (fd < 0) {
		free(m);
		return -errno;
	}
	r = kcmd_mgr_export_fd(env, SW_FD_ENV, fd, KCMD_TO_WORKERS);
	if (r < 0) {
		close(fd);
		free(m);
		return r;
	}
	m->fd = fd;
	*ret_state = m;
	return 0;
}

static void sw_mgr_fini(void *state)
{
	struct sw_mgr *m = state;

	if (m) {
		close(m->fd);
		free(m);
	}
}

static void sw_mgr_metrics(void *state, struct kcmd_text *out)
{
	struct sw_mgr *m = state;
	struct sw_hdr h1, h2;
	struct stat st;
	char *text = NULL;

	if (!m)
		return;
	for (int tries = 0; tries < 8; tries++) {
		free(text);
		text = NULL;
		if (pread(m->fd, &h1, sizeof(h1), 0) != (ssize_t)sizeof(h1) || (h1.seq & 1))
			continue;
		if (fstat(m->fd, &st) < 0 || h1.len > (uint64_t)st.st_size - sizeof(h1) ||
		    !(text = malloc(h1.len + 1)))
			continue;
		if (pread(m->fd, text, h1.len, sizeof(h1)) != (ssize_t)h1.len ||
		    pread(m->fd, &h2, sizeof(h2), 0) != (ssize_t)sizeof(h2) || h2.seq != h1.seq)
			continue;
		text[h1.len] = 0;
		if (h1.len) /* a collector with no series shows no family (client_golang) */
			kcmd_text_printf(out,
			                 "# HELP " SW_METRIC
			                 " [ALPHA] Conflict between two Pods using "
			                 "the same volume\n# TYPE " SW_METRIC " gauge\n%s",
			                 text);
		free(text);
		return;
	}
	free(text);
}

static const struct kcmd_watch sw_watches[] = {
        {"", "v1", "pods", "Pod", KCMD_CACHE_POD, true},
        {"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", KCMD_CACHE_OBJECT, true},
        {"", "v1", "persistentvolumes", "PersistentVolume", KCMD_CACHE_OBJECT, false},
        {SW_STORAGE, "v1", "csidrivers", "CSIDriver", KCMD_CACHE_OBJECT, false},
};
static const struct kcmd_queue sw_queues[] = {{.name = SW_QUEUE}};
static const char *const sw_gates[] = {"SELinuxChangePolicy", NULL};

const struct kcmd_controller kcmd_selinuxwarning_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = SW_CONTROLLER,
        .enabled_by_default = false,
        .feature_gates = sw_gates,
        .service_account = "selinux-warning-controller",
        .watches = sw_watches,
        .n_watches = sizeof(sw_watches) / sizeof(sw_watches[0]),
        .queues = sw_queues,
        .n_queues = 1,
        .mgr_setup = sw_mgr_setup,
        .mgr_metrics = sw_mgr_metrics,
        .mgr_fini = sw_mgr_fini,
        .handlers = &sw_handlers,
        .worker = &sw_worker,
};
