/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/objects.c: arena records viewed as kube/model.h structs (see objects.h).
 */
#include "workers/objects.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shm/records.h"

static bool inside(const struct shm_obj *o, const void *p, size_t n)
{
	const char *b = o->mem_, *q = p;
	return q >= b && q + n <= b + o->cap_;
}

#define REBASE(T, p) ((T)((char *)dst->mem_ + ((const char *)(p) - (const char *)src->mem_)))

/* Bytes of a NUL-terminated string with its NUL, 0 for NULL. */
static size_t slen(const char *p)
{
	return p ? strlen(p) + 1 : 0;
}

static const char *put(char **at, const char *p)
{
	size_t n = slen(p);
	char *d = *at;

	if (!p)
		return NULL;
	memcpy(d, p, n);
	*at += n;
	return d;
}

int wk_obj_clone(const struct shm_obj *src, struct shm_obj *dst)
{
	size_t n = src->n_labels * sizeof(struct shm_label) +
	           src->n_owners * sizeof(struct shm_owner_ref) + src->payload_len + slen(src->ns) +
	           slen(src->name) + slen(src->uid) + slen(src->rv) + 16;
	char *mem, *at;

	*dst = SHM_OBJ_INIT;
	for (size_t i = 0; i < src->n_labels; i++)
		n += slen(src->labels[i].key) + slen(src->labels[i].value);
	for (size_t i = 0; i < src->n_owners; i++)
		n += slen(src->owners[i].api_version) + slen(src->owners[i].kind) +
		     slen(src->owners[i].name) + slen(src->owners[i].uid);
	if (!(mem = malloc(n)))
		return -ENOMEM;
	at = mem;
	/* arrays first (aligned: malloc's alignment, pointer-sized elements), then bytes */
	struct shm_label *l = (struct shm_label *)at;
	at += src->n_labels * sizeof(*l);
	struct shm_owner_ref *o = (struct shm_owner_ref *)at;
	at += src->n_owners * sizeof(*o);
	*dst = *src;
	dst->mem_ = mem;
	dst->cap_ = n;
	dst->labels = src->n_labels ? l : NULL;
	dst->owners = src->n_owners ? o : NULL;
	for (size_t i = 0; i < src->n_labels; i++) {
		l[i].key = put(&at, src->labels[i].key);
		l[i].value = put(&at, src->labels[i].value);
	}
	for (size_t i = 0; i < src->n_owners; i++) {
		o[i] = src->owners[i];
		o[i].api_version = put(&at, src->owners[i].api_version);
		o[i].kind = put(&at, src->owners[i].kind);
		o[i].name = put(&at, src->owners[i].name);
		o[i].uid = put(&at, src->owners[i].uid);
	}
	dst->ns = put(&at, src->ns);
	dst->name = put(&at, src->name);
	dst->uid = put(&at, src->uid);
	dst->rv = put(&at, src->rv);
	if (src->payload_len) {
		memcpy(at, src->payload, src->payload_len);
		dst->payload = at;
		at += src->payload_len;
	} else {
		dst->payload = NULL;
	}
	return 0;
}

int wk_obj_dup(const struct shm_obj *src, struct shm_obj *dst)
{
	const char *strs[4] = {src->ns, src->name, src->uid, src->rv};

	*dst = SHM_OBJ_INIT;
	if (!src->mem_)
		return -EINVAL;
	for (int i = 0; i < 4; i++)
		if (strs[i] && !inside(src, strs[i], 1))
			return -EINVAL;
	if ((src->n_labels && !inside(src, src->labels, src->n_labels * sizeof(*src->labels))) ||
	    (src->n_owners && !inside(src, src->owners, src->n_owners * sizeof(*src->owners))) ||
	    (src->payload_len && !inside(src, src->payload, src->payload_len)))
		return -EINVAL;
	for (size_t i = 0; i < src->n_labels; i++)
		if (!inside(src, src->labels[i].key, 1) || !inside(src, src->labels[i].value, 1))
			return -EINVAL;
	for (size_t i = 0; i < src->n_owners; i++) {
		const struct shm_owner_ref *o = &src->owners[i];
		if (!inside(src, o->api_version, 1) || !inside(src, o->kind, 1) ||
		    !inside(src, o->name, 1) || !inside(src, o->uid, 1))
			return -EINVAL;
	}
	dst->mem_ = malloc(src->cap_);
	if (!dst->mem_)
		return -ENOMEM;
	memcpy(dst->mem_, src->mem_, src->cap_);
	dst->cap_ = src->cap_;
	dst->type = src->type;
	dst->kind = src->kind;
	dst->handle = src->handle;
	dst->ns = src->ns ? REBASE(const char *, src->ns) : NULL;
	dst->name = src->name ? REBASE(const char *, src->name) : NULL;
	dst->uid = src->uid ? REBASE(const char *, src->uid) : NULL;
	dst->rv = src->rv ? REBASE(const char *, src->rv) : NULL;
	dst->n_labels = src->n_labels;
	dst->n_owners = src->n_owners;
	dst->payload_len = src->payload_len;
	dst->payload = src->payload_len ? REBASE(const void *, src->payload) : NULL;
	if (src->n_labels) {
		struct shm_label *l = REBASE(struct shm_label *, src->labels);
		for (size_t i = 0; i < src->n_labels; i++) {
			l[i].key = REBASE(const char *, src->labels[i].key);
			l[i].value = REBASE(const char *, src->labels[i].value);
		}
		dst->labels = l;
	}
	if (src->n_owners) {
		struct shm_owner_ref *o = REBASE(struct shm_owner_ref *, src->owners);
		for (size_t i = 0; i < src->n_owners; i++) {
			o[i].api_version = REBASE(const char *, src->owners[i].api_version);
			o[i].kind = REBASE(const char *, src->owners[i].kind);
			o[i].name = REBASE(const char *, src->owners[i].name);
			o[i].uid = REBASE(const char *, src->owners[i].uid);
		}
		dst->owners = o;
	}
	return 0;
}

static int meta_from_obj(const struct shm_obj *o, const struct inf_rec_view *v,
                         struct kube_object_meta *m, struct kube_kv **labels,
                         struct kube_owner_ref **owners, const char ***finalizers)
{
	unsigned first_fin = inf_rec_first_finalizer(v);

	memset(m, 0, sizeof(*m));
	m->name = o->name;
	m->namespace = o->ns;
	m->uid = o->uid;
	m->resource_version = o->rv;
	m->generation = v->hdr.generation;
	m->creation_timestamp = v->hdr.creation_ts;
	m->deletion_timestamp = v->hdr.deletion_ts;
	m->has_deletion_grace_period_seconds = v->hdr.flags & INF_REC_HAS_GRACE;
	m->deletion_grace_period_seconds = v->hdr.deletion_grace_s;
	*labels = calloc(o->n_labels + 1, sizeof(**labels));
	*owners = calloc(o->n_owners + 1, sizeof(**owners));
	*finalizers = calloc(v->hdr.n_finalizers + 1, sizeof(**finalizers));
	if (!*labels || !*owners || !*finalizers)
		return -ENOMEM;
	for (size_t i = 0; i < o->n_labels; i++)
		(*labels)[i] = (struct kube_kv){o->labels[i].key, o->labels[i].value};
	for (size_t i = 0; i < o->n_owners; i++)
		(*owners)[i] = (struct kube_owner_ref){.api_version = o->owners[i].api_version,
		                                       .kind = o->owners[i].kind,
		                                       .name = o->owners[i].name,
		                                       .uid = o->owners[i].uid,
		                                       .controller = o->owners[i].controller,
		                                       .block_owner_deletion =
		                                               o->owners[i].block_owner_deletion};
	for (uint32_t i = 0; i < v->hdr.n_finalizers; i++) {
		size_t len;
		int r = inf_rec_blob(v, first_fin + i, &(*finalizers)[i], &len);
		if (r < 0)
			return r;
	}
	m->labels = *labels;
	m->n_labels = (uint32_t)o->n_labels;
	m->owner_refs = *owners;
	m->n_owner_refs = (uint32_t)o->n_owners;
	m->finalizers = *finalizers;
	m->n_finalizers = v->hdr.n_finalizers;
	return 0;
}

int wk_pod_from_obj(struct shm_obj *obj, struct wk_pod *ret)
{
	struct inf_rec_view v;
	struct inf_rec_pod fp;
	const char *node;
	size_t len;
	int r;

	memset(ret, 0, sizeof(*ret));
	ret->obj = *obj;
	*obj = SHM_OBJ_INIT;
	if (ret->obj.kind != SHM_RECORD_POD)
		return -EINVAL;
	if ((r = inf_rec_parse(ret->obj.payload, ret->obj.payload_len, &v)) < 0 ||
	    (r = inf_rec_pod_get(&v, &fp)) < 0)
		return r;
	r = meta_from_obj(&ret->obj, &v, &ret->pod.meta, &ret->labels, &ret->owners,
	                  &ret->finalizers);
	if (r < 0)
		return r;
	if ((r = inf_rec_blob(&v, 0, &node, &len)) < 0)
		return r;
	ret->pod.node_name = len ? node : NULL;
	ret->pod.phase = (enum kube_pod_phase)fp.phase;
	ret->pod.ready = fp.ready;
	ret->pod.ready_transition_time = fp.ready_transition_time;
	ret->pod.max_restarts = fp.max_restarts;
	ret->pod.max_sidecar_restarts = fp.max_sidecar_restarts;
	ret->pod.deletion_cost = fp.deletion_cost;
	ret->pod.has_deletion_cost = fp.has_deletion_cost;
	return 0;
}

int wk_meta_from_obj(struct shm_obj *obj, struct wk_meta *ret)
{
	struct inf_rec_view v;
	int r;

	memset(ret, 0, sizeof(*ret));
	ret->obj = *obj;
	*obj = SHM_OBJ_INIT;
	if ((r = inf_rec_parse(ret->obj.payload, ret->obj.payload_len, &v)) < 0)
		return r;
	return meta_from_obj(&ret->obj, &v, &ret->p.meta, &ret->labels, &ret->owners,
	                     &ret->finalizers);
}

void wk_meta_free(struct wk_meta *m)
{
	shm_obj_release(&m->obj);
	free(m->labels);
	free(m->owners);
	free(m->finalizers);
	memset(m, 0, sizeof(*m));
}

void wk_pod_free(struct wk_pod *p)
{
	shm_obj_release(&p->obj);
	free(p->labels);
	free(p->owners);
	free(p->finalizers);
	memset(p, 0, sizeof(*p));
}

/* ---- selectors ---------------------------------------------------------------------------------
 */

static bool label_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.' || c == '/';
}

int wk_selector_from_string(char *text, struct kube_label_selector *ret,
                            struct kube_label_requirement **ret_reqs)
{
	size_t cap = 1, n = 0, nv_total = 1;
	char *p = text;
	struct kube_label_requirement *reqs;
	const char **values;
	size_t vi = 0;

	memset(ret, 0, sizeof(*ret));
	for (char *q = text; *q; q++) {
		if (*q == ',')
			nv_total++, cap++;
	}
	/* requirements, matchLabels and values share one allocation, in that order */
	reqs = calloc(1, cap * sizeof(*reqs) + cap * sizeof(struct kube_kv) +
	                         nv_total * sizeof(char *));
	if (!reqs)
		return -ENOMEM;
	struct kube_kv *kv = (struct kube_kv *)(reqs + cap);
	size_t nkv = 0;
	values = (const char **)(kv + cap);
	while (*p) {
		struct kube_label_requirement *rq = &reqs[n];
		bool neg = false;
		char *key;

		if (*p == '!') {
			neg = true;
			p++;
		}
		key = p;
		while (label_char(*p))
			p++;
		if (p == key)
			goto bad;
		rq->key = key;
		if (neg) {
			if (*p && *p != ',')
				goto bad;
			rq->op = KUBE_OP_DOES_NOT_EXIST;
			rq->op_text = "DoesNotExist";
		} else if (*p == 0 || *p == ',') {
			rq->op = KUBE_OP_EXISTS;
			rq->op_text = "Exists";
		} else if (*p == '=' || (p[0] == '!' && p[1] == '=')) {
			bool ne = *p == '!';
			*p = 0;
			p += ne ? 2 : (p[1] == '=' ? 2 : 1);
			char *val = p;
			while (label_char(*p))
				p++;
			if (!ne) { /* "a=b" is what matchLabels formats to: keep it one */
				kv[nkv++] = (struct kube_kv){key, val};
				goto next;
			}
			rq->op = KUBE_OP_NOT_IN;
			rq->op_text = "NotIn";
			rq->values = &values[vi];
			rq->n_values = 1;
			values[vi++] = val;
		} else if (*p == ' ') {
			bool notin;
			*p++ = 0;
			if (strncmp(p, "in (", 4) == 0) {
				notin = false;
				p += 4;
			} else if (strncmp(p, "notin (", 7) == 0) {
				notin = true;
				p += 7;
			} else {
				goto bad;
			}
			rq->op = notin ? KUBE_OP_NOT_IN : KUBE_OP_IN;
			rq->op_text = notin ? "NotIn" : "In";
			rq->values = &values[vi];
			for (;;) {
				char *val = p;
				while (label_char(*p))
					p++;
				if (vi >= nv_total)
					goto bad;
				values[vi++] = val;
				rq->n_values++;
				if (*p == ',') {
					*p++ = 0;
					continue;
				}
				if (*p != ')')
					goto bad;
				*p++ = 0;
				break;
			}
		} else {
			goto bad;
		}
		n++;
	next:
		if (*p == ',') {
			*p++ = 0;
			if (n + nkv >= cap)
				goto bad;
		} else if (*p) {
			goto bad;
		}
	}
	/* terminate keys/values written in place above (a bare key ends at ',' or NUL already) */
	ret->match_expressions = reqs;
	ret->n_match_expressions = (uint32_t)n;
	ret->match_labels = kv;
	ret->n_match_labels = (uint32_t)nkv;
	*ret_reqs = reqs;
	return 0;
bad:
	free(reqs);
	return -EINVAL;
}

/* ---- replicasets ------------------------------------------------------------------------------
 */

static int template_labels(struct wk_rs *w)
{
	cJSON *t = cJSON_ParseWithLength(w->rs.template_json, w->rs.template_json_len);
	cJSON *labels = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(t, "metadata"), "labels");
	size_t n = 0, bytes = 0, off = 0;
	cJSON *l;

	if (!t)
		return w->rs.template_json_len ? -EBADMSG : 0;
	cJSON_ArrayForEach(l, labels)
	{
		if (cJSON_IsString(l)) {
			n++;
			bytes += strlen(l->string) + strlen(l->valuestring) + 2;
		}
	}
	w->tmpl_labels = calloc(n + 1, sizeof(*w->tmpl_labels));
	w->tmpl_strings = malloc(bytes + 1);
	if (!w->tmpl_labels || !w->tmpl_strings) {
		cJSON_Delete(t);
		return -ENOMEM;
	}
	n = 0;
	cJSON_ArrayForEach(l, labels)
	{
		if (!cJSON_IsString(l))
			continue;
		size_t kl = strlen(l->string) + 1, vl = strlen(l->valuestring) + 1;
		memcpy(w->tmpl_strings + off, l->string, kl);
		w->tmpl_labels[n].key = w->tmpl_strings + off;
		off += kl;
		memcpy(w->tmpl_strings + off, l->valuestring, vl);
		w->tmpl_labels[n].value = w->tmpl_strings + off;
		off += vl;
		n++;
	}
	w->rs.template_labels = w->tmpl_labels;
	w->rs.n_template_labels = (uint32_t)n;
	cJSON_Delete(t);
	return 0;
}

int wk_rs_from_obj(struct shm_obj *obj, struct wk_rs *ret)
{
	struct inf_rec_view v;
	struct inf_rec_rs fr;
	const char *s;
	size_t len;
	int r;

	memset(ret, 0, sizeof(*ret));
	ret->obj = *obj;
	*obj = SHM_OBJ_INIT;
	if (ret->obj.kind != SHM_RECORD_REPLICASET)
		return -EINVAL;
	if ((r = inf_rec_parse(ret->obj.payload, ret->obj.payload_len, &v)) < 0 ||
	    (r = inf_rec_rs_get(&v, &fr)) < 0)
		return r;
	r = meta_from_obj(&ret->obj, &v, &ret->rs.meta, &ret->labels, &ret->owners,
	                  &ret->finalizers);
	if (r < 0)
		return r;
	struct kube_replicaset *rs = &ret->rs;
	rs->spec_replicas = fr.spec_replicas;
	rs->has_spec_replicas = fr.has_spec_replicas;
	rs->min_ready_seconds = fr.min_ready_seconds;
	rs->status.replicas = fr.replicas;
	rs->status.fully_labeled_replicas = fr.fully_labeled_replicas;
	rs->status.ready_replicas = fr.ready_replicas;
	rs->status.available_replicas = fr.available_replicas;
	rs->status.terminating_replicas = fr.terminating_replicas;
	rs->status.has_terminating_replicas = fr.has_terminating_replicas;
	rs->status.observed_generation = fr.observed_generation;

	/* blob 0: the selector */
	if ((r = inf_rec_blob(&v, 0, &s, &len)) < 0)
		return r;
	if (fr.sel_state == INF_REC_SEL_VALID) {
		ret->sel_text = strndup(s, len);
		if (!ret->sel_text)
			return -ENOMEM;
		r = wk_selector_from_string(ret->sel_text, &ret->sel, &ret->reqs);
		if (r < 0)
			return r;
		rs->selector = &ret->sel;
	} else if (fr.sel_state == INF_REC_SEL_INVALID) {
		/* one requirement the conversion refuses: the sync reports the invalid selector */
		ret->reqs = calloc(1, sizeof(*ret->reqs));
		if (!ret->reqs)
			return -ENOMEM;
		ret->reqs[0] = (struct kube_label_requirement){
		        .key = "", .op = KUBE_OP_INVALID, .op_text = s};
		ret->sel.match_expressions = ret->reqs;
		ret->sel.n_match_expressions = 1;
		rs->selector = &ret->sel;
	}
	/* blob 1: spec.template */
	if ((r = inf_rec_blob(&v, 1, &s, &len)) < 0)
		return r;
	rs->template_json = s;
	rs->template_json_len = len;
	if ((r = template_labels(ret)) < 0)
		return r;
	/* then five blobs per condition */
	if (fr.n_conditions) {
		ret->conds = calloc(fr.n_conditions, sizeof(*ret->conds));
		if (!ret->conds)
			return -ENOMEM;
		for (uint32_t i = 0; i < fr.n_conditions; i++) {
			const char *f[5];
			size_t fl[5];
			for (unsigned k = 0; k < 5; k++)
				if ((r = inf_rec_blob(&v, 2 + i * 5 + k, &f[k], &fl[k])) < 0)
					return r;
			ret->conds[i].type = f[0];
			ret->conds[i].status = f[1];
			ret->conds[i].reason = fl[2] ? f[2] : NULL;
			ret->conds[i].message = fl[3] ? f[3] : NULL;
			if (fl[4] == sizeof(kube_time_t))
				memcpy(&ret->conds[i].last_transition_time, f[4],
				       sizeof(kube_time_t));
		}
		rs->status.conditions = ret->conds;
		rs->status.n_conditions = fr.n_conditions;
	}
	return 0;
}

void wk_rs_free(struct wk_rs *w)
{
	shm_obj_release(&w->obj);
	free(w->labels);
	free(w->owners);
	free(w->finalizers);
	free(w->reqs);
	free(w->sel_text);
	free(w->conds);
	free(w->tmpl_labels);
	free(w->tmpl_strings);
	memset(w, 0, sizeof(*w));
}
