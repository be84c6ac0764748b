/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/api.c: the functions of the public controller API (include/kcmd/: cache.h, client.h,
 * handlers.h, log.h; library `kcapi`), thin wrappers over kcmd's internal modules so that an
 * out-of-tree controller never sees a record layout, a queue ABI or the client's request
 * struct.
 *
 * Design note.
 *   The same object is linked twice: into every kcmd program that may run a plug-in (kcmd,
 *   kcmd-dispatcher, kcmd-worker export its kcmd_* symbols, --dynamic-list), and into
 *   libkcmd.so, which an out-of-tree controller links against. At run time inside kcmd the
 *   plug-in's calls bind to the program's copy (the program comes first in the global symbol
 *   scope), so there is one logger, one fence and one client state per process; libkcmd.so's
 *   own copy serves programs that are not kcmd (a controller's unit tests).
 *   Rejected: linking kcmd's programs against libkcmd.so (every module rebuilt position-
 *   independent and a shared library on the hot path for a feature most installs do not use).
 */
#include <assert.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ipc/queue.h"
#include "kcmd/kcmd.h"
#include "lib/evrec.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/encode.h"
#include "kube/errors.h"
#include "kube/evcorr.h"
#include "kube/model.h"
#include "lib/log.h"
#include "shm/arena.h"
#include "shm/records.h"

static_assert(KCMD_KEY_MAX == IPC_QUEUE_KEY_MAX, "kcmd/handlers.h KCMD_KEY_MAX");
static_assert(KCMD_CACHE_METADATA == (int)SHM_RECORD_META, "kcmd_cache_kind values");
static_assert(KCMD_CACHE_POD == (int)SHM_RECORD_POD, "kcmd_cache_kind values");
static_assert(KCMD_CACHE_REPLICASET == (int)SHM_RECORD_REPLICASET, "kcmd_cache_kind values");
static_assert(KCMD_CACHE_OBJECT == (int)SHM_RECORD_OBJECT, "kcmd_cache_kind values");
static_assert(KCMD_LOG_ERROR == (int)KCLOG_ERROR && KCMD_LOG_INFO == (int)KCLOG_INFO &&
                      KCMD_LOG_WARNING == (int)KCLOG_WARNING && KCMD_LOG_DEBUG == (int)KCLOG_DEBUG,
              "kcmd_log_level values");

unsigned kcmd_api_abi(void)
{
	return KCMD_CONTROLLER_ABI;
}

/* ---- queues ---------------------------------------------------------------------------------- */
static struct ipc_queue_owner *queue_of(struct inf_handler_ctx *ctx, size_t q)
{
	return ctx && q < ctx->n_queues ? ctx->queues[q] : NULL;
}

int kcmd_queue_add(struct inf_handler_ctx *ctx, size_t q, const char *key)
{
	struct ipc_queue_owner *o = queue_of(ctx, q);
	return o && key ? ipc_queue_owner_add(o, key) : -EINVAL;
}

int kcmd_queue_add_after(struct inf_handler_ctx *ctx, size_t q, const char *key,
                         uint64_t delay_usec)
{
	struct ipc_queue_owner *o = queue_of(ctx, q);
	return o && key ? ipc_queue_owner_add_after(o, key, delay_usec) : -EINVAL;
}

int kcmd_queue_add_rate_limited(struct inf_handler_ctx *ctx, size_t q, const char *key)
{
	struct ipc_queue_owner *o = queue_of(ctx, q);
	return o && key ? ipc_queue_owner_add_rate_limited(o, key) : -EINVAL;
}

int kcmd_key_make(char *buf, size_t len, const char *ns, const char *name)
{
	int n;

	if (!buf || !len || !name)
		return -EINVAL;
	n = ns && *ns ? snprintf(buf, len, "%s/%s", ns, name) : snprintf(buf, len, "%s", name);
	if (n < 0 || (size_t)n >= len) {
		buf[0] = 0;
		return -ENAMETOOLONG;
	}
	return n;
}

static int copy_part(char *dst, size_t dlen, const char *src, size_t n)
{
	if (!dst || n >= dlen)
		return -ENAMETOOLONG;
	memcpy(dst, src, n);
	dst[n] = 0;
	return 0;
}

int kcmd_key_split(const char *key, char *ns, size_t nslen, char *name, size_t namelen)
{
	const char *slash;

	if (!key)
		return -EINVAL;
	slash = strchr(key, '/');
	if (!slash)
		return copy_part(ns, nslen, "", 0) ?: copy_part(name, namelen, key, strlen(key));
	if (strchr(slash + 1, '/'))
		return -EINVAL;
	return copy_part(ns, nslen, key, (size_t)(slash - key))
	               ?: copy_part(name, namelen, slash + 1, strlen(slash + 1));
}

/* ---- cached objects -------------------------------------------------------------------------- */
static const char *str(const char *s)
{
	return s ? s : "";
}

const char *kcmd_obj_namespace(const struct shm_obj *o)
{
	return o ? str(o->ns) : "";
}

const char *kcmd_obj_name(const struct shm_obj *o)
{
	return o ? str(o->name) : "";
}

const char *kcmd_obj_uid(const struct shm_obj *o)
{
	return o ? str(o->uid) : "";
}

const char *kcmd_obj_resource_version(const struct shm_obj *o)
{
	return o ? str(o->rv) : "";
}

const char *kcmd_obj_label(const struct shm_obj *o, const char *key)
{
	return o && key ? shm_obj_label(o, key) : NULL;
}

size_t kcmd_obj_n_owners(const struct shm_obj *o)
{
	return o ? o->n_owners : 0;
}

int kcmd_obj_owner(const struct shm_obj *o, size_t i, struct kcmd_owner_ref *ret)
{
	if (!o || !ret || i >= o->n_owners)
		return -ENOENT;
	const struct shm_owner_ref *r = &o->owners[i];
	*ret = (struct kcmd_owner_ref){.api_version = str(r->api_version),
	                               .kind = str(r->kind),
	                               .name = str(r->name),
	                               .uid = str(r->uid),
	                               .controller = r->controller,
	                               .block_owner_deletion = r->block_owner_deletion};
	return 0;
}

/* The full-object record's fixed part and view (shm/records.h: apiVersion, kind, the annotation
 * pairs, the body, then the finalizers). */
static bool object_record(const struct shm_obj *o, struct shm_rec_view *v,
                          struct shm_rec_object *fo)
{
	return o && o->kind == SHM_RECORD_OBJECT &&
	       shm_rec_parse(o->payload, o->payload_len, v) == 0 &&
	       shm_rec_object_get(v, fo) == 0 && fo->body_format == SHM_REC_BODY_JSON;
}

const char *kcmd_obj_json(const struct shm_obj *o, size_t *ret_len)
{
	struct shm_rec_view v;
	struct shm_rec_object fo;
	const char *s;
	size_t l;

	if (!object_record(o, &v, &fo) || shm_rec_blob(&v, 2 + 2 * fo.n_annotations, &s, &l) < 0)
		return NULL;
	if (ret_len)
		*ret_len = l;
	return s;
}

const char *kcmd_obj_annotation(const struct shm_obj *o, const char *key)
{
	struct shm_rec_view v;
	struct shm_rec_object fo;
	const char *blobs[2];
	size_t n[2];

	struct shm_rec_rs fr;
	uint64_t first = 2;
	uint32_t count;

	if (!key || !o)
		return NULL;
	if (object_record(o, &v, &fo)) {
		count = fo.n_annotations;
	} else if (o->kind == SHM_RECORD_REPLICASET &&
	           shm_rec_parse(o->payload, o->payload_len, &v) == 0 &&
	           shm_rec_rs_get(&v, &fr) == 0) {
		/* ReplicaSet records keep every annotation too (after their conditions) */
		first = shm_rec_rs_first_annotation(&fr);
		count = fr.n_annotations;
		if (first > UINT32_MAX - 2 * (uint64_t)count)
			return NULL;
	} else {
		return NULL;
	}
	for (uint32_t i = 0; i < count; i++) {
		if (shm_rec_blob(&v, (unsigned)(first + 2 * i), &blobs[0], &n[0]) < 0 ||
		    shm_rec_blob(&v, (unsigned)(first + 1 + 2 * i), &blobs[1], &n[1]) < 0)
			return NULL;
		if (strcmp(blobs[0], key) == 0)
			return blobs[1];
	}
	return NULL;
}

void kcmd_obj_free(struct shm_obj *o)
{
	if (!o)
		return;
	shm_obj_release(o);
	free(o);
}

/* ---- an event's object ----------------------------------------------------------------------- */
const char *kcmd_meta_namespace(const struct kube_object_meta *m)
{
	return m ? str(m->namespace) : "";
}

const char *kcmd_meta_name(const struct kube_object_meta *m)
{
	return m ? str(m->name) : "";
}

const char *kcmd_meta_uid(const struct kube_object_meta *m)
{
	return m ? str(m->uid) : "";
}

const char *kcmd_meta_resource_version(const struct kube_object_meta *m)
{
	return m ? str(m->resource_version) : "";
}

const char *kcmd_meta_label(const struct kube_object_meta *m, const char *key)
{
	for (uint32_t i = 0; m && key && i < m->n_labels; i++)
		if (m->labels[i].key && strcmp(m->labels[i].key, key) == 0)
			return str(m->labels[i].value);
	return NULL;
}

const char *kcmd_meta_annotation(const struct kube_object_meta *m, const char *key)
{
	for (uint32_t i = 0; m && key && i < m->n_annotations; i++)
		if (m->annotations[i].key && strcmp(m->annotations[i].key, key) == 0)
			return str(m->annotations[i].value);
	return NULL;
}

const char *kcmd_event_json(const struct inf_event *ev, size_t *ret_len)
{
	/* a KCMD_CACHE_OBJECT event's obj is a struct kube_object (its meta first), in informerd's
	 * own handlers and in a dispatcher's alike */
	if (!ev || !ev->obj || !ev->res || ev->res->record_kind != KCMD_CACHE_OBJECT)
		return NULL;
	const struct kube_object *o = ev->obj;
	if (!o->raw)
		return NULL;
	if (ret_len)
		*ret_len = o->raw_len;
	return o->raw;
}

bool kcmd_meta_deleting(const struct kube_object_meta *m)
{
	return m && m->deletion_timestamp != 0;
}

size_t kcmd_meta_n_owners(const struct kube_object_meta *m)
{
	return m ? m->n_owner_refs : 0;
}

int kcmd_meta_owner(const struct kube_object_meta *m, size_t i, struct kcmd_owner_ref *ret)
{
	if (!m || !ret || i >= m->n_owner_refs)
		return -ENOENT;
	const struct kube_owner_ref *r = &m->owner_refs[i];
	*ret = (struct kcmd_owner_ref){.api_version = str(r->api_version),
	                               .kind = str(r->kind),
	                               .name = str(r->name),
	                               .uid = str(r->uid),
	                               .controller = r->controller,
	                               .block_owner_deletion = r->block_owner_deletion};
	return 0;
}

/* ---- listers --------------------------------------------------------------------------------- */
/* The arena type of group/resource (any version: a resource is cached in one version), or
 * -ENOENT. */
static int find_type(struct shm_arena *a, const char *group, const char *resource)
{
	struct shm_stats st;
	int r;

	if (!a || !resource)
		return -EINVAL;
	if ((r = shm_reader_stats(a, &st)) < 0)
		return r;
	for (uint64_t i = 0; i < st.n_types && i <= UINT16_MAX; i++) {
		struct shm_type_info ti;
		if (shm_reader_type_info(a, (uint16_t)i, &ti) < 0)
			continue;
		if (strcmp(ti.group, str(group)) == 0 && strcmp(ti.resource, resource) == 0)
			return (int)i;
	}
	return -ENOENT;
}

int kcmd_cache_get(struct shm_arena *a, const char *group, const char *resource, const char *ns,
                   const char *name, struct shm_obj **ret)
{
	struct shm_obj *o;
	int t, r;

	if (!ret || !name)
		return -EINVAL;
	if ((t = find_type(a, group, resource)) < 0)
		return t;
	if (!(o = calloc(1, sizeof(*o))))
		return -ENOMEM;
	if ((r = shm_reader_get(a, (uint16_t)t, ns && *ns ? ns : NULL, name, o)) < 0) {
		kcmd_obj_free(o);
		return r;
	}
	*ret = o;
	return 0;
}

int kcmd_cache_list(struct shm_arena *a, const char *group, const char *resource, const char *ns,
                    kcmd_cache_visit_fn fn, void *userdata)
{
	int t;

	if (!fn)
		return -EINVAL;
	if ((t = find_type(a, group, resource)) < 0)
		return t;
	if (ns && *ns)
		return shm_reader_list_ns(a, (uint16_t)t, ns, fn, userdata);
	return shm_reader_list(a, (uint16_t)t, fn, userdata);
}

int kcmd_cache_list_pods_on_node(struct shm_arena *a, const char *node, kcmd_cache_visit_fn fn,
                                 void *userdata)
{
	int t;

	if (!fn || !node || !*node)
		return -EINVAL;
	if ((t = find_type(a, "", "pods")) < 0)
		return t;
	return shm_reader_list_node(a, (uint16_t)t, node, fn, userdata);
}

int kcmd_cache_synced(struct shm_arena *a, const char *group, const char *resource)
{
	struct shm_type_info ti;
	int t, r;

	if ((t = find_type(a, group, resource)) < 0)
		return t;
	if ((r = shm_reader_type_info(a, (uint16_t)t, &ti)) < 0)
		return r;
	return ti.synced ? 1 : 0;
}

/* ---- the API client -------------------------------------------------------------------------- */
static int verb_of(const char *m, enum kube_verb *ret)
{
	static const struct {
		const char *m;
		enum kube_verb v;
	} verbs[] = {{"GET", KUBE_GET},
	             {"POST", KUBE_CREATE},
	             {"PUT", KUBE_UPDATE},
	             {"PATCH", KUBE_PATCH},
	             {"DELETE", KUBE_DELETE}};

	for (size_t i = 0; m && i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (strcmp(m, verbs[i].m) == 0) {
			*ret = verbs[i].v;
			return 0;
		}
	return -EINVAL;
}

int kcmd_kube_request(struct kube_client *kc, const struct kcmd_request *req, int *ret_http_code,
                      char **ret_body)
{
	struct kube_response resp = {0};
	struct kube_request kr = {0};
	int r;

	if (ret_http_code)
		*ret_http_code = 0;
	if (ret_body)
		*ret_body = NULL;
	if (!kc || !req || !req->version || !req->resource || verb_of(req->method, &kr.verb) < 0)
		return -EINVAL;
	kr.group = req->group;
	kr.version = req->version;
	kr.resource = req->resource;
	kr.ns = req->ns && *req->ns ? req->ns : NULL;
	kr.name = req->name;
	kr.subresource = req->subresource;
	kr.body = req->body;
	kr.body_len = req->body && !req->body_len ? strlen(req->body) : req->body_len;
	kr.patch_type = KUBE_PATCH_MERGE;
	kr.precondition_uid = req->precondition_uid;
	kr.propagation_policy = req->propagation_policy;
	kr.body_kind = req->body_kind;
	r = kube_client_request(kc, &kr, NULL, NULL, &resp);
	if (ret_http_code)
		*ret_http_code = resp.http_code;
	if (ret_body) {
		*ret_body = resp.body;
		resp.body = NULL;
	}
	kube_response_clear(&resp);
	return r;
}

const char *kcmd_kube_reason(int err)
{
	return kube_errno_reason(err);
}

struct kcmd_client {
	struct kube_config *cfg;
	struct kube_client *kc;
};

int kcmd_client_new(const char *kubeconfig, struct kcmd_client **ret, char *err, size_t errlen)
{
	struct kcmd_client *c;
	int r;

	if (!ret || !err || !errlen)
		return -EINVAL;
	if (!kubeconfig)
		kubeconfig = getenv("KUBECONFIG");
	if (!kubeconfig || !*kubeconfig) {
		snprintf(err, errlen, "no kubeconfig (set KUBECONFIG)");
		return -ENOENT;
	}
	if (!(c = calloc(1, sizeof(*c)))) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	struct kube_config_opts co = {.kubeconfig = kubeconfig};
	if ((r = kube_config_load(&co, &c->cfg, err, errlen)) < 0) {
		free(c);
		return r;
	}
	struct kube_client_opts ko = {
	        .config = c->cfg, .process = "test", .qps = 50, .burst = 100, .insecure_ok = true};
	if ((r = kube_client_new(&ko, &c->kc)) < 0) {
		snprintf(err, errlen, "API client: %s", strerror(-r));
		kcmd_client_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

struct kube_client *kcmd_client_kube(struct kcmd_client *c)
{
	return c ? c->kc : NULL;
}

void kcmd_client_free(struct kcmd_client *c)
{
	if (!c)
		return;
	kube_client_free(c->kc);
	kube_config_free(c->cfg);
	free(c);
}

/* The process's Events (lib/evrec.h). In a worker (evrec_start ran) an Event is queued and
 * written by the recorder's sink thread, so a sync never waits for one, as upstream's
 * recorder; elsewhere (tools, tests, a dispatcher) it is written here through the caller's
 * client by the same sink, tried once. Either way one correlator per process counts repeats,
 * combines similar Events and throttles a flood per object (upstream has one per controller;
 * with several worker processes a repeat written by another process than the first starts a
 * count of its own; the ReplicaSet controller shares one queue between its processes,
 * workers/replicaset/evq.h). */
static pthread_mutex_t event_lock = PTHREAD_MUTEX_INITIALIZER;
static struct evrec_sink *event_sink;
static _Atomic bool event_one_try = true;

int kcmd_event_record(struct kube_client *kc, const char *component,
                      const struct kcmd_object_ref *obj, const char *type, const char *reason,
                      const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;
	int r;

	if (!kc || !component || !obj || !obj->name || !obj->kind || !type || !reason || !fmt)
		return -EINVAL;
	va_start(ap, fmt);
	r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	/* kcm's controllers name only a component in their EventSource: no source.host, and
	 * reportingInstance "" */
	struct evrec_event ev = {.t = kube_time_now(),
	                         .component = component,
	                         .host = "",
	                         .kind = obj->kind,
	                         .api_version = obj->api_version ? obj->api_version : "v1",
	                         .ns = obj->ns ? obj->ns : "",
	                         .name = obj->name,
	                         .uid = obj->uid ? obj->uid : "",
	                         .rv = "",
	                         .type = type,
	                         .reason = reason,
	                         .message = msg};
	/* the broadcaster's StartStructuredLogging(3): every event, before correlation */
	log_v(3,
	      "Event occurred: object=\"%s%s%s\" fieldPath=\"\" kind=\"%s\" "
	      "apiVersion=\"%s\" type=\"%s\" reason=\"%s\" message=\"%s\"",
	      ev.ns, *ev.ns ? "/" : "", ev.name, ev.kind, ev.api_version, type, reason, msg);
	r = evrec_push(&ev);
	if (r != -ENODEV) {
		free(msg);
		return r;
	}
	pthread_mutex_lock(&event_lock);
	if (!event_sink && (r = evrec_sink_new(&event_sink)) < 0)
		goto out;
	r = evrec_sink_record(event_sink, kc, &ev, &event_one_try);
	r = r == -EREMOTEIO || r == -ECANCELED ? -EIO : r < 0 ? r : 0;
out:
	pthread_mutex_unlock(&event_lock);
	free(msg);
	return r;
}

/* ---- logging --------------------------------------------------------------------------------- */
void kcmd_log(enum kcmd_log_level level, const char *file, int line, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	kclog_log((enum kclog_level)level, file ? file : "?", line, NULL, "%s", msg);
}

int kcmd_log_verbosity(void)
{
	return kclog_verbosity();
}
