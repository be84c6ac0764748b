/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/garbagecollector/tests/fake-api.h: an in-memory API server behind struct gc_api, and
 * a recording sink for the graph builder, for the GC unit tests (header-only: each test is its
 * own program).
 *
 * The fake holds objects as JSON (decoded with kube_decode_partial on every GET, like the real
 * metadata client), applies DELETE with uid/resourceVersion preconditions, applies the GC's
 * JSON merge patches of finalizers and ownerReferences, and records every call as a line:
 *   "GET v1/ReplicationController ns1/rc1", "DELETE v1/Pod ns1/p uid=1 rv=5 Background",
 *   "PATCH smp v1/Pod ns1/p <body>", "PATCH merge ..."
 * Scripted failures: fail_next[verb] = errno for the next call of that verb; smp_unsupported
 * kinds answer 415 to strategic merge patches.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/model.h"
#include "workers/garbagecollector/graph.h"
#include "workers/garbagecollector/worker.h"

#define FAKE_MAX_OBJS  64
#define FAKE_MAX_CALLS 128

struct fake_obj {
	char api_version[64], kind[64], ns[64], name[64], uid[64];
	int rv;
	char *owners_json; /* JSON array or NULL */
	char *finalizers_json;
	bool deleting;
	bool live;
};

enum { F_GET, F_PATCH, F_DELETE, F_NVERBS };

struct fake_api {
	struct fake_obj objs[FAKE_MAX_OBJS];
	size_t n_objs;
	char calls[FAKE_MAX_CALLS][1024];
	size_t n_calls;
	int fail_next[F_NVERBS];
	int fail_count[F_NVERBS]; /* how many calls fail_next applies to (0 = 1) */
	const char *smp_unsupported_kind;
	const char *not_served_kind; /* GETs of this kind: GC_ERR_NOT_SERVED (no route) */
	/* queue effects */
	char virtual_deletes[16][256];
	size_t n_virtual_deletes;
	struct gc_ref vd_ids[16];
	char adds[64][64];
	size_t n_adds;
	double slept_ms;
};

struct fake_mapping {
	const char *api_version, *kind;
	bool namespaced;
};
static const struct fake_mapping fake_mappings[] = {
        {"v1", "Pod", true},
        {"v1", "ReplicationController", true},
        {"v1", "ConfigMap", true},
        {"v1", "Secret", true},
        {"v1", "Node", false},
        {"v1", "PersistentVolume", false},
        {"apps/v1", "Deployment", true},
        {"apps/v1", "ReplicaSet", true},
        {"rbac.authorization.k8s.io/v1", "Role", true},
        {"rbac.authorization.k8s.io/v1beta1", "Role", true},
        {"example.com/v1", "Widget", true},
};

static inline int fake_rest_map(void *ud, const char *api_version, const char *kind, bool *ret)
{
	(void)ud;
	for (size_t i = 0; i < sizeof fake_mappings / sizeof fake_mappings[0]; i++)
		if (gc_str_eq(fake_mappings[i].api_version, api_version) &&
		    gc_str_eq(fake_mappings[i].kind, kind)) {
			*ret = fake_mappings[i].namespaced;
			return 0;
		}
	return -ENOENT;
}

static inline void fake_call(struct fake_api *f, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
static inline void fake_call(struct fake_api *f, const char *fmt, ...)
{
	if (f->n_calls >= FAKE_MAX_CALLS)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->calls[f->n_calls++], sizeof f->calls[0], fmt, ap);
	va_end(ap);
}

static inline struct fake_obj *fake_find(struct fake_api *f, const struct gc_target *t)
{
	/* the kind decides the resource; the apiVersion may be any served version */
	for (size_t i = 0; i < f->n_objs; i++) {
		struct fake_obj *o = &f->objs[i];
		if (o->live && gc_str_eq(o->kind, t->kind) && gc_str_eq(o->ns, t->ns) &&
		    gc_str_eq(o->name, t->name))
			return o;
	}
	return NULL;
}

static inline struct fake_obj *fake_add(struct fake_api *f, const char *api_version,
                                        const char *kind, const char *ns, const char *name,
                                        const char *uid, const char *owners_json)
{
	struct fake_obj *o = &f->objs[f->n_objs++];
	*o = (struct fake_obj){.rv = 1, .live = true};
	snprintf(o->api_version, sizeof o->api_version, "%s", api_version);
	snprintf(o->kind, sizeof o->kind, "%s", kind);
	snprintf(o->ns, sizeof o->ns, "%s", ns ? ns : "");
	snprintf(o->name, sizeof o->name, "%s", name);
	snprintf(o->uid, sizeof o->uid, "%s", uid);
	o->owners_json = owners_json ? strdup(owners_json) : NULL;
	return o;
}

static inline void fake_set_finalizers(struct fake_obj *o, const char *json, bool deleting)
{
	free(o->finalizers_json);
	o->finalizers_json = json ? strdup(json) : NULL;
	o->deleting = deleting;
}

static inline void fake_free(struct fake_api *f)
{
	for (size_t i = 0; i < f->n_objs; i++) {
		free(f->objs[i].owners_json);
		free(f->objs[i].finalizers_json);
	}
	for (size_t i = 0; i < f->n_virtual_deletes; i++)
		gc_ref_clear(&f->vd_ids[i]);
}

static inline int fake_fail(struct fake_api *f, int verb)
{
	int e = f->fail_next[verb];
	if (!e)
		return 0;
	if (f->fail_count[verb] > 1)
		f->fail_count[verb]--;
	else {
		f->fail_next[verb] = 0;
		f->fail_count[verb] = 0;
	}
	return e;
}

static inline int fake_get(void *ud, const struct gc_target *t, struct kube_partial **ret)
{
	struct fake_api *f = ud;
	fake_call(f, "GET %s/%s %s/%s", t->api_version, t->kind, t->ns, t->name);
	int e = fake_fail(f, F_GET);
	if (e)
		return e;
	if (f->not_served_kind && strcmp(f->not_served_kind, t->kind) == 0)
		return GC_ERR_NOT_SERVED;
	struct fake_obj *o = fake_find(f, t);
	if (!o)
		return -ENOENT;
	char json[4096];
	snprintf(json, sizeof json,
	         "{\"apiVersion\":\"%s\",\"kind\":\"%s\",\"metadata\":{\"name\":\"%s\","
	         "\"namespace\":\"%s\",\"uid\":\"%s\","
	         "\"resourceVersion\":\"%d\"%s%s%s%s%s}}",
	         o->api_version, o->kind, o->name, o->ns, o->uid, o->rv,
	         o->deleting ? ",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"" : "",
	         o->owners_json ? ",\"ownerReferences\":" : "",
	         o->owners_json ? o->owners_json : "", o->finalizers_json ? ",\"finalizers\":" : "",
	         o->finalizers_json ? o->finalizers_json : "");
	return kube_decode_partial(json, strlen(json), 0, ret);
}

/* Applies {"metadata":{"resourceVersion":"rv","finalizers"|"ownerReferences":...}} */
static inline int fake_apply_merge(struct fake_obj *o, const char *body)
{
	char want[32];
	snprintf(want, sizeof want, "\"resourceVersion\":\"%d\"", o->rv);
	if (!strstr(body, want))
		return -ESTALE;
	const char *keys[2] = {"\"finalizers\":", "\"ownerReferences\":"};
	for (int k = 0; k < 2; k++) {
		const char *p = strstr(body, keys[k]);
		if (!p)
			continue;
		p += strlen(keys[k]);
		const char *end = body + strlen(body) - 2; /* strip the closing "}}" */
		char *v = strndup(p, (size_t)(end - p));
		if (strcmp(v, "null") == 0) {
			free(v);
			v = NULL;
		}
		if (k == 0) {
			free(o->finalizers_json);
			o->finalizers_json = v;
			if (!v && o->deleting)
				o->live = false; /* no finalizers left: the apiserver removes it */
		} else {
			free(o->owners_json);
			o->owners_json = v;
		}
	}
	o->rv++;
	return 0;
}

static inline int fake_patch(void *ud, const struct gc_target *t, enum kube_patch_type type,
                             const char *body)
{
	struct fake_api *f = ud;
	fake_call(f, "PATCH %s %s/%s %s/%s %s", type == KUBE_PATCH_STRATEGIC ? "smp" : "merge",
	          t->api_version, t->kind, t->ns, t->name, body);
	int e = fake_fail(f, F_PATCH);
	if (e)
		return e;
	if (type == KUBE_PATCH_STRATEGIC && f->smp_unsupported_kind &&
	    gc_str_eq(f->smp_unsupported_kind, t->kind))
		return -EMEDIUMTYPE;
	struct fake_obj *o = fake_find(f, t);
	if (!o)
		return -ENOENT;
	if (type == KUBE_PATCH_MERGE)
		return fake_apply_merge(o, body);
	o->rv++; /* SMP content is checked through the recorded body */
	return 0;
}

static inline int fake_delete(void *ud, const struct gc_target *t, const char *uid, const char *rv,
                              const char *policy)
{
	struct fake_api *f = ud;
	fake_call(f, "DELETE %s/%s %s/%s uid=%s rv=%s %s", t->api_version, t->kind, t->ns, t->name,
	          uid, rv ? rv : "-", policy);
	int e = fake_fail(f, F_DELETE);
	if (e)
		return e;
	struct fake_obj *o = fake_find(f, t);
	if (!o)
		return -ENOENT;
	char cur[16];
	snprintf(cur, sizeof cur, "%d", o->rv);
	if (!gc_str_eq(o->uid, uid) || (rv && strcmp(rv, cur) != 0))
		return -ESTALE;
	if (strcmp(policy, "Background") == 0 && !o->finalizers_json)
		o->live = false;
	else
		o->deleting = true;
	return 0;
}

static inline void fake_virtual_delete(void *ud, const struct gc_ref *id)
{
	struct fake_api *f = ud;
	if (f->n_virtual_deletes < 16) {
		gc_ref_format(id, f->virtual_deletes[f->n_virtual_deletes],
		              sizeof f->virtual_deletes[0]);
		gc_ref_copy(&f->vd_ids[f->n_virtual_deletes], id);
		f->n_virtual_deletes++;
	}
}

static inline void fake_attempt_to_delete(void *ud, const char *uid)
{
	struct fake_api *f = ud;
	if (f->n_adds < 64)
		snprintf(f->adds[f->n_adds++], sizeof f->adds[0], "%s", uid);
}

static inline void fake_sleep(void *ud, double ms)
{
	((struct fake_api *)ud)->slept_ms += ms;
}

static inline struct gc_api fake_api_ops(struct fake_api *f)
{
	return (struct gc_api){
	        .ud = f,
	        .rest_map = fake_rest_map,
	        .get = fake_get,
	        .patch = fake_patch,
	        .delete_ = fake_delete,
	        .virtual_delete = fake_virtual_delete,
	        .attempt_to_delete = fake_attempt_to_delete,
	        .sleep_ms = fake_sleep,
	};
}

static inline size_t fake_count(const struct fake_api *f, const char *prefix)
{
	size_t n = 0;
	for (size_t i = 0; i < f->n_calls; i++)
		n += strncmp(f->calls[i], prefix, strlen(prefix)) == 0;
	return n;
}

/* ---- a recording sink for the builder -------------------------------------------------------- */
struct rec_sink {
	char del[128][64];
	bool del_rl[128];
	size_t n_del;
	char orphan[32][64];
	size_t n_orphan;
	char events[16][1024];
	size_t n_events;
};

static inline void rec_delete(void *ud, const char *uid, bool rl)
{
	struct rec_sink *s = ud;
	if (s->n_del < 128) {
		s->del_rl[s->n_del] = rl;
		snprintf(s->del[s->n_del++], sizeof s->del[0], "%s", uid);
	}
}

static inline void rec_orphan(void *ud, const char *uid)
{
	struct rec_sink *s = ud;
	if (s->n_orphan < 32)
		snprintf(s->orphan[s->n_orphan++], sizeof s->orphan[0], "%s", uid);
}

static inline void rec_warning(void *ud, const struct gc_ref *inv, const char *reason,
                               const char *msg)
{
	struct rec_sink *s = ud;
	if (s->n_events < 16)
		snprintf(s->events[s->n_events++], sizeof s->events[0],
		         "Warning %s %s involvedObject{kind=%s,apiVersion=%s}", reason, msg,
		         inv->kind, inv->api_version);
}

static inline struct gc_sink rec_sink_ops(struct rec_sink *s)
{
	return (struct gc_sink){.ud = s,
	                        .attempt_to_delete = rec_delete,
	                        .attempt_to_orphan = rec_orphan,
	                        .warning = rec_warning};
}

static inline bool rec_has(const struct rec_sink *s, const char *uid)
{
	for (size_t i = 0; i < s->n_del; i++)
		if (strcmp(s->del[i], uid) == 0)
			return true;
	return false;
}

static inline void rec_reset(struct rec_sink *s)
{
	memset(s, 0, sizeof *s);
}
