/* SPDX-License-Identifier: Apache-2.0 */
/*
 * shm/record-model.c: kube/model.h objects <-> arena records (see record-model.h, records.h).
 */
#include "shm/record-model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kube/selector.h"
#include "shm/records.h"

/* ---- payload encoding ------------------------------------------------------------------- */
struct enc {
	uint8_t **buf;
	size_t *cap;
	size_t len;
	uint32_t n_blobs;
	int err;
};

static void enc_put(struct enc *e, const void *p, size_t n)
{
	if (e->err)
		return;
	if (e->len + n > *e->cap) {
		size_t nc = *e->cap ? *e->cap : 256;
		uint8_t *nb;

		while (nc < e->len + n)
			nc *= 2;
		nb = realloc(*e->buf, nc);
		if (!nb) {
			e->err = -ENOMEM;
			return;
		}
		*e->buf = nb;
		*e->cap = nc;
	}
	memcpy(*e->buf + e->len, p, n);
	e->len += n;
}

static void enc_blob(struct enc *e, const void *p, size_t n)
{
	uint32_t l = (uint32_t)n;
	char nul = '\0';

	if (n > UINT32_MAX - 1) {
		e->err = -E2BIG;
		return;
	}
	enc_put(e, &l, 4);
	if (n)
		enc_put(e, p, n);
	enc_put(e, &nul, 1);
	e->n_blobs++;
}

static void enc_str(struct enc *e, const char *s)
{
	enc_blob(e, s ? s : "", s ? strlen(s) : 0);
}

/* One toleration as one blob (records.h, version 9). */
static void enc_toleration(struct enc *e, const struct kube_toleration *t)
{
	const char *str[4] = {t->key, t->op, t->value, t->effect};
	size_t n = SHM_REC_POD_TOL_RAW, at;
	uint8_t small[256], *b = small;

	for (int i = 0; i < 4; i++)
		n += (str[i] ? strlen(str[i]) : 0) + 1;
	if (n > sizeof(small) && !(b = malloc(n))) {
		e->err = -ENOMEM;
		return;
	}
	b[0] = t->has_seconds;
	memcpy(b + 1, &t->seconds, 8);
	at = SHM_REC_POD_TOL_RAW;
	for (int i = 0; i < 4; i++) {
		size_t l = str[i] ? strlen(str[i]) : 0;
		if (l)
			memcpy(b + at, str[i], l);
		b[at + l] = 0;
		at += l + 1;
	}
	enc_blob(e, b, n);
	if (b != small)
		free(b);
}

/* Blob 0 and the compiled selector (records.h); the counts go into *rs. */
static void enc_selector(struct enc *e, const struct kube_label_selector *ls, struct shm_rec_rs *rs)
{
	struct kube_selector *sel = NULL;
	char err[256] = "";
	uint32_t first = e->n_blobs;

	if (!ls) {
		rs->sel_state = SHM_REC_SEL_NIL;
		enc_str(e, "");
		return;
	}
	/* validated here, once: readers trust a VALID record (shm_rec_selector_match) */
	if (kube_selector_from_label_selector(ls, &sel, err, sizeof(err)) < 0) {
		rs->sel_state = SHM_REC_SEL_INVALID;
		enc_str(e, err);
		return;
	}
	kube_selector_free(sel);
	rs->sel_state = SHM_REC_SEL_VALID;
	enc_str(e, "");
	first = e->n_blobs;
	for (uint32_t i = 0; i < ls->n_match_labels; i++) {
		enc_str(e, ls->match_labels[i].key);
		enc_str(e, ls->match_labels[i].value);
	}
	for (uint32_t i = 0; i < ls->n_match_expressions; i++) {
		const struct kube_label_requirement *q = &ls->match_expressions[i];
		uint8_t opn[5] = {(uint8_t)q->op};

		memcpy(opn + 1, &q->n_values, 4);
		enc_str(e, q->key);
		enc_blob(e, opn, sizeof(opn));
		for (uint32_t k = 0; k < q->n_values; k++)
			enc_str(e, q->values[k]);
	}
	rs->n_sel_labels = ls->n_match_labels;
	rs->n_sel_exprs = ls->n_match_expressions;
	rs->n_sel_blobs = e->n_blobs - first;
}

int shm_rec_encode(enum shm_record_kind kind, const void *obj, uint8_t **buf, size_t *cap,
                   size_t *ret_len)
{
	const struct kube_object_meta *m = obj;
	struct shm_rec_hdr h = {.magic = SHM_REC_MAGIC, .kind = (uint8_t)kind};
	struct enc e = {.buf = buf, .cap = cap};
	struct shm_rec_pod pod = {0};
	struct shm_rec_rs rs = {0};

	if (!obj || !buf || !cap || !ret_len)
		return -EINVAL;
	h.generation = m->generation;
	h.creation_ts = m->creation_timestamp;
	h.deletion_ts = m->deletion_timestamp;
	h.deletion_grace_s = m->deletion_grace_period_seconds;
	if (m->has_deletion_grace_period_seconds)
		h.flags |= SHM_REC_HAS_GRACE;
	for (uint32_t i = 0; i < m->n_finalizers; i++) {
		if (m->finalizers[i] && strcmp(m->finalizers[i], "orphan") == 0)
			h.flags |= SHM_REC_FIN_ORPHAN;
		if (m->finalizers[i] && strcmp(m->finalizers[i], "foregroundDeletion") == 0)
			h.flags |= SHM_REC_FIN_FOREGROUND;
	}
	h.n_finalizers = m->n_finalizers;
	/* Header first (patched at the end with the blob count), then fixed part and blobs. */
	enc_put(&e, &h, sizeof(h));
	if (kind == SHM_RECORD_POD) {
		const struct kube_pod *p = obj;

		pod.phase = (uint8_t)p->phase;
		pod.ready = p->ready;
		pod.has_deletion_cost = p->has_deletion_cost;
		pod.max_restarts = p->max_restarts;
		pod.max_sidecar_restarts = p->max_sidecar_restarts;
		pod.deletion_cost = p->deletion_cost;
		pod.ready_transition_time = p->ready_transition_time;
		pod.disruption_target = p->disruption_target;
		pod.disruption_target_time = p->disruption_target_time;
		pod.ep_n_pod_ips = p->ep.n_pod_ips;
		pod.ep_n_ports = p->ep.n_ports;
		if (p->has_ephemeral_volume)
			h.flags |= SHM_REC_POD_EPHEMERAL;
		if (p->has_resource_claims)
			h.flags |= SHM_REC_POD_CLAIMS;
		pod.n_tolerations = p->n_tolerations;
		pod.ready_status = p->ready_status;
		pod.dt_taint_manager = p->dt_taint_manager;
		h.fixed_len = sizeof(pod);
		enc_put(&e, &pod, sizeof(pod));
		enc_str(&e, p->node_name);
		enc_str(&e, p->affinity_node);
		for (uint32_t i = 0; i < p->n_tolerations; i++)
			enc_toleration(&e, &p->tolerations[i]);
		/* the endpoint part, last before the finalizers */
		enc_str(&e, p->ep.hostname);
		enc_str(&e, p->ep.subdomain);
		enc_str(&e, p->ep.pod_ip);
		for (uint32_t i = 0; i < p->ep.n_pod_ips; i++)
			enc_str(&e, p->ep.pod_ips[i]);
		for (uint32_t i = 0; i < p->ep.n_ports; i++) {
			const struct kube_pod_port *pp = &p->ep.ports[i];
			uint8_t raw[SHM_REC_POD_PORT_RAW];
			memcpy(raw, &pp->container_port, 4);
			raw[4] = pp->sidecar;
			enc_str(&e, pp->name);
			enc_str(&e, pp->protocol);
			enc_blob(&e, raw, sizeof(raw));
		}
	} else if (kind == SHM_RECORD_REPLICASET) {
		const struct kube_replicaset *r = obj;
		size_t fixed_at = e.len;

		rs.spec_replicas = r->spec_replicas;
		rs.has_spec_replicas = r->has_spec_replicas;
		rs.has_terminating_replicas = r->status.has_terminating_replicas;
		rs.min_ready_seconds = r->min_ready_seconds;
		rs.replicas = r->status.replicas;
		rs.fully_labeled_replicas = r->status.fully_labeled_replicas;
		rs.ready_replicas = r->status.ready_replicas;
		rs.available_replicas = r->status.available_replicas;
		rs.terminating_replicas = r->status.terminating_replicas;
		rs.n_conditions = r->status.n_conditions;
		rs.observed_generation = r->status.observed_generation;
		h.fixed_len = sizeof(rs);
		enc_put(&e, &rs, sizeof(rs));
		enc_selector(&e, r->selector, &rs);
		enc_blob(&e, r->template_json ? r->template_json : "",
		         r->template_json ? r->template_json_len : 0);
		/* the template's labels as the decoder parsed them: no reader parses the JSON */
		for (uint32_t i = 0; i < r->n_template_labels; i++) {
			enc_str(&e, r->template_labels[i].key);
			enc_str(&e, r->template_labels[i].value);
		}
		rs.n_template_labels = r->n_template_labels;
		/* the parts a pod is built from, so that no sync parses the template */
		const struct kube_template_parts *tp = &r->template_parts;
		const char *part[SHM_REC_TMPL_N_PARTS] = {tp->labels, tp->annotations,
		                                          tp->finalizers, tp->spec};
		size_t plen[SHM_REC_TMPL_N_PARTS] = {tp->labels_len, tp->annotations_len,
		                                     tp->finalizers_len, tp->spec_len};
		rs.tmpl_parts = tp->valid ? SHM_REC_TMPL_VALID : 0;
		for (unsigned i = 0; i < SHM_REC_TMPL_N_PARTS; i++) {
			bool have = tp->valid && part[i];
			enc_blob(&e, have ? part[i] : "", have ? plen[i] : 0);
			if (have)
				rs.tmpl_parts |= (uint8_t)(SHM_REC_TMPL_LABELS << i);
		}
		if (!e.err) /* the selector's and the template's counts are known only now */
			memcpy(*e.buf + fixed_at, &rs, sizeof(rs));
		for (uint32_t i = 0; i < r->status.n_conditions; i++) {
			const struct kube_condition *c = &r->status.conditions[i];

			enc_str(&e, c->type);
			enc_str(&e, c->status);
			enc_str(&e, c->reason);
			enc_str(&e, c->message);
			enc_blob(&e, &c->last_transition_time, sizeof(c->last_transition_time));
		}
		/* every annotation the decoder kept (informerd keeps them all for ReplicaSets:
		 * the Deployment controller compares and copies them) */
		for (uint32_t i = 0; i < m->n_annotations; i++) {
			enc_str(&e, m->annotations[i].key);
			enc_str(&e, m->annotations[i].value);
		}
		rs.n_annotations = m->n_annotations;
		enc_str(&e, m->generate_name);
		if (!e.err)
			memcpy(*e.buf + fixed_at, &rs, sizeof(rs));
	} else if (kind == SHM_RECORD_OBJECT) {
		const struct kube_object *o = obj;
		struct shm_rec_object fo = {.body_format = SHM_REC_BODY_JSON,
		                            .n_annotations = m->n_annotations};

		if (!o->raw)
			return -EINVAL;
		h.fixed_len = sizeof(fo);
		enc_put(&e, &fo, sizeof(fo));
		enc_str(&e, o->api_version);
		enc_str(&e, o->kind);
		for (uint32_t i = 0; i < m->n_annotations; i++) {
			enc_str(&e, m->annotations[i].key);
			enc_str(&e, m->annotations[i].value);
		}
		enc_blob(&e, o->raw, o->raw_len);
	}
	for (uint32_t i = 0; i < m->n_finalizers; i++)
		enc_str(&e, m->finalizers[i]);
	if (e.err)
		return e.err;
	h.n_blobs = e.n_blobs;
	memcpy(*e.buf, &h, sizeof(h));
	*ret_len = e.len;
	return 0;
}

void shm_rec_enc_release(struct shm_rec_enc *e)
{
	free(e->labels);
	free(e->owners);
	free(e->payload);
	*e = (struct shm_rec_enc){0};
}

int shm_rec_build(struct shm_rec_enc *e, uint16_t type, enum shm_record_kind kind, const void *obj,
                  struct shm_record_in *ret)
{
	/* Every decoded kind starts with its struct kube_object_meta (kube/model.h). */
	const struct kube_object_meta *m = obj;
	size_t len;
	int r;

	if (!e || !obj || !ret || !m->name || !m->uid || !m->resource_version)
		return -EINVAL;
	if (kind != SHM_RECORD_META && kind != SHM_RECORD_POD && kind != SHM_RECORD_REPLICASET &&
	    kind != SHM_RECORD_OBJECT)
		return -EINVAL;
	if (m->n_labels > e->labels_cap) {
		struct shm_label *nl = realloc(e->labels, m->n_labels * sizeof(*nl));

		if (!nl)
			return -ENOMEM;
		e->labels = nl;
		e->labels_cap = m->n_labels;
	}
	if (m->n_owner_refs > e->owners_cap) {
		struct shm_owner_ref *no = realloc(e->owners, m->n_owner_refs * sizeof(*no));

		if (!no)
			return -ENOMEM;
		e->owners = no;
		e->owners_cap = m->n_owner_refs;
	}
	for (uint32_t i = 0; i < m->n_labels; i++)
		e->labels[i] = (struct shm_label){m->labels[i].key,
		                                  m->labels[i].value ? m->labels[i].value : ""};
	for (uint32_t i = 0; i < m->n_owner_refs; i++) {
		const struct kube_owner_ref *o = &m->owner_refs[i];

		e->owners[i] = (struct shm_owner_ref){
		        .api_version = o->api_version ? o->api_version : "",
		        .kind = o->kind ? o->kind : "",
		        .name = o->name ? o->name : "",
		        .uid = o->uid ? o->uid : "",
		        /* tri-states as they are: absent (-1) is not false (0) (kube/model.h) */
		        .controller = o->controller < 0 ? -1 : o->controller > 0,
		        .block_owner_deletion =
		                o->block_owner_deletion < 0 ? -1 : o->block_owner_deletion > 0,
		};
	}
	r = shm_rec_encode(kind, obj, &e->payload, &e->payload_cap, &len);
	if (r < 0)
		return r;
	*ret = (struct shm_record_in){
	        .type = type,
	        .kind = kind,
	        .ns = m->namespace ? m->namespace : "",
	        .name = m->name,
	        .uid = m->uid,
	        .rv = m->resource_version,
	        .labels = e->labels,
	        .n_labels = m->n_labels,
	        .owners = e->owners,
	        .n_owners = m->n_owner_refs,
	        .payload = e->payload,
	        .payload_len = len,
	};
	return 0;
}

/* ---- views ---------------------------------------------------------------------------------- */
/* Every blob of a record, found in one pass (the views index them, never walk them again). */
struct blobs {
	const char **p;
	size_t *len;
	uint32_t n;
	uint32_t first_fin; /* the finalizers are the last hdr.n_finalizers blobs */
};

static int blobs_load(const struct shm_rec_view *v, struct blobs *b)
{
	*b = (struct blobs){0};
	/* shm_rec_parse bounded n_blobs by the payload's size, so this allocation is too */
	b->p = calloc((size_t)v->hdr.n_blobs + 1, sizeof(*b->p));
	b->len = calloc((size_t)v->hdr.n_blobs + 1, sizeof(*b->len));
	if (!b->p || !b->len)
		return -ENOMEM;
	b->n = v->hdr.n_blobs;
	b->first_fin = shm_rec_first_finalizer(v);
	return shm_rec_blobs(v, b->p, b->len);
}

static void blobs_free(struct blobs *b)
{
	free(b->p);
	free(b->len);
}

static int meta_from_obj(const struct shm_obj *o, const struct shm_rec_view *v,
                         const struct blobs *b, struct kube_object_meta *m, struct kube_kv **labels,
                         struct kube_owner_ref **owners, const char ***finalizers)
{
	memset(m, 0, sizeof(*m));
	m->name = o->name;
	m->namespace = o->ns;
	m->uid = o->uid;
	m->resource_version = o->rv;
	m->generation = v->hdr.generation;
	m->creation_timestamp = v->hdr.creation_ts;
	m->deletion_timestamp = v->hdr.deletion_ts;
	m->has_deletion_grace_period_seconds = v->hdr.flags & SHM_REC_HAS_GRACE;
	m->deletion_grace_period_seconds = v->hdr.deletion_grace_s;
	*labels = calloc(o->n_labels + 1, sizeof(**labels));
	*owners = calloc(o->n_owners + 1, sizeof(**owners));
	*finalizers = calloc((size_t)v->hdr.n_finalizers + 1, sizeof(**finalizers));
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
	for (uint32_t i = 0; i < v->hdr.n_finalizers; i++)
		(*finalizers)[i] = b->p[b->first_fin + i];
	m->labels = *labels;
	m->n_labels = (uint32_t)o->n_labels;
	m->owner_refs = *owners;
	m->n_owner_refs = (uint32_t)o->n_owners;
	m->finalizers = *finalizers;
	m->n_finalizers = v->hdr.n_finalizers;
	return 0;
}

/* The endpoint part: the blobs right before the finalizers, after node_name (records.h). */
static int pod_endpoint_view(const struct shm_rec_pod *fp, const struct blobs *b,
                             struct shm_pod_view *ret)
{
	struct kube_pod_endpoint *ep = &ret->pod.ep;
	uint64_t need = shm_rec_pod_endpoint_blobs(fp);
	uint32_t at;

	uint64_t head = shm_rec_pod_head_blobs(fp);

	if (b->first_fin < head || need > (uint64_t)b->first_fin - head)
		return -EBADMSG;
	at = b->first_fin - (uint32_t)need;
	ret->pod_ips = calloc((size_t)fp->ep_n_pod_ips + 1, sizeof(*ret->pod_ips));
	ret->ports = calloc((size_t)fp->ep_n_ports + 1, sizeof(*ret->ports));
	if (!ret->pod_ips || !ret->ports)
		return -ENOMEM;
	ep->hostname = b->len[at] ? b->p[at] : NULL;
	ep->subdomain = b->len[at + 1] ? b->p[at + 1] : NULL;
	ep->pod_ip = b->len[at + 2] ? b->p[at + 2] : NULL;
	at += 3;
	for (uint32_t i = 0; i < fp->ep_n_pod_ips; i++)
		ret->pod_ips[i] = b->p[at++];
	for (uint32_t i = 0; i < fp->ep_n_ports; i++, at += 3) {
		struct kube_pod_port *pp = &ret->ports[i];
		if (b->len[at + 2] != SHM_REC_POD_PORT_RAW)
			return -EBADMSG;
		pp->name = b->p[at];
		pp->protocol = b->len[at + 1] ? b->p[at + 1] : NULL;
		memcpy(&pp->container_port, b->p[at + 2], 4);
		pp->sidecar = b->p[at + 2][4] != 0;
	}
	ep->n_pod_ips = fp->ep_n_pod_ips;
	ep->pod_ips = ret->pod_ips;
	ep->n_ports = fp->ep_n_ports;
	ep->ports = ret->ports;
	return 0;
}

int shm_pod_flag(const struct shm_obj *o, unsigned flag)
{
	struct shm_rec_view v;
	int r;

	if (!o || o->kind != SHM_RECORD_POD)
		return -EINVAL;
	if ((r = shm_rec_parse(o->payload, o->payload_len, &v)) < 0)
		return r;
	return (v.hdr.flags & flag) ? 1 : 0;
}

/* The tolerations: the blobs after affinity_node (pod_endpoint_view checked that they and
 * the endpoint part do not overlap). A blob must hold its raw head and four NUL-terminated
 * strings, all inside it. */
static int pod_tolerations_view(const struct shm_rec_pod *fp, const struct blobs *b,
                                struct shm_pod_view *ret)
{
	if (!fp->n_tolerations)
		return 0;
	ret->tolerations = calloc(fp->n_tolerations, sizeof(*ret->tolerations));
	if (!ret->tolerations)
		return -ENOMEM;
	for (uint32_t i = 0; i < fp->n_tolerations; i++) {
		const char *p = b->p[SHM_REC_POD_HEAD_BLOBS + i];
		size_t n = b->len[SHM_REC_POD_HEAD_BLOBS + i], at = SHM_REC_POD_TOL_RAW;
		struct kube_toleration *t = &ret->tolerations[i];
		const char **str[4] = {&t->key, &t->op, &t->value, &t->effect};

		if (n < SHM_REC_POD_TOL_RAW + 4)
			return -EBADMSG;
		t->has_seconds = p[0] != 0;
		memcpy(&t->seconds, p + 1, 8);
		for (int k = 0; k < 4; k++) {
			const char *z = at < n ? memchr(p + at, 0, n - at) : NULL;
			if (!z)
				return -EBADMSG;
			*str[k] = z > p + at ? p + at : NULL;
			at = (size_t)(z - p) + 1;
		}
		if (at != n)
			return -EBADMSG;
	}
	ret->pod.n_tolerations = fp->n_tolerations;
	ret->pod.tolerations = ret->tolerations;
	return 0;
}

int shm_pod_view_init(struct shm_obj *obj, struct shm_pod_view *ret)
{
	struct shm_rec_view v;
	struct shm_rec_pod fp;
	struct blobs b = {0};
	int r;

	memset(ret, 0, sizeof(*ret));
	ret->obj = *obj;
	*obj = SHM_OBJ_INIT;
	if (ret->obj.kind != SHM_RECORD_POD)
		return -EINVAL;
	if ((r = shm_rec_parse(ret->obj.payload, ret->obj.payload_len, &v)) < 0 ||
	    (r = shm_rec_pod_get(&v, &fp)) < 0)
		return r;
	if (v.hdr.n_blobs - v.hdr.n_finalizers < 2) /* node_name, affinity_node */
		return -EBADMSG;
	if ((r = blobs_load(&v, &b)) == 0)
		r = meta_from_obj(&ret->obj, &v, &b, &ret->pod.meta, &ret->labels, &ret->owners,
		                  &ret->finalizers);
	if (r == 0) {
		ret->pod.node_name = b.len[0] ? b.p[0] : NULL;
		ret->pod.affinity_node = b.len[1] ? b.p[1] : NULL;
		ret->pod.phase = (enum kube_pod_phase)fp.phase;
		ret->pod.ready = fp.ready;
		ret->pod.ready_transition_time = fp.ready_transition_time;
		ret->pod.max_restarts = fp.max_restarts;
		ret->pod.max_sidecar_restarts = fp.max_sidecar_restarts;
		ret->pod.deletion_cost = fp.deletion_cost;
		ret->pod.has_deletion_cost = fp.has_deletion_cost;
		ret->pod.disruption_target = fp.disruption_target;
		ret->pod.disruption_target_time = fp.disruption_target_time;
		ret->pod.has_ephemeral_volume = v.hdr.flags & SHM_REC_POD_EPHEMERAL;
		ret->pod.has_resource_claims = v.hdr.flags & SHM_REC_POD_CLAIMS;
		ret->pod.ready_status = fp.ready_status;
		ret->pod.dt_taint_manager = fp.dt_taint_manager != 0;
		r = pod_endpoint_view(&fp, &b, ret);
		if (r == 0)
			r = pod_tolerations_view(&fp, &b, ret);
	}
	blobs_free(&b);
	return r;
}

int shm_meta_view_init(struct shm_obj *obj, struct shm_meta_view *ret)
{
	struct shm_rec_view v;
	struct blobs b = {0};
	int r;

	memset(ret, 0, sizeof(*ret));
	ret->obj = *obj;
	*obj = SHM_OBJ_INIT;
	if ((r = shm_rec_parse(ret->obj.payload, ret->obj.payload_len, &v)) < 0)
		return r;
	if ((r = blobs_load(&v, &b)) == 0)
		r = meta_from_obj(&ret->obj, &v, &b, &ret->p.meta, &ret->labels, &ret->owners,
		                  &ret->finalizers);
	blobs_free(&b);
	return r;
}

void shm_meta_view_free(struct shm_meta_view *m)
{
	shm_obj_release(&m->obj);
	free(m->labels);
	free(m->owners);
	free(m->finalizers);
	memset(m, 0, sizeof(*m));
}

void shm_pod_view_free(struct shm_pod_view *p)
{
	shm_obj_release(&p->obj);
	free(p->pod_ips);
	free(p->ports);
	free(p->tolerations);
	free(p->labels);
	free(p->owners);
	free(p->finalizers);
	memset(p, 0, sizeof(*p));
}

/* ---- selectors ---------------------------------------------------------------------------- */

static const char *op_text(enum kube_selector_op op)
{
	switch (op) {
	case KUBE_OP_IN:
		return "In";
	case KUBE_OP_NOT_IN:
		return "NotIn";
	case KUBE_OP_EXISTS:
		return "Exists";
	case KUBE_OP_DOES_NOT_EXIST:
		return "DoesNotExist";
	default:
		return "";
	}
}

/* The compiled selector of a ReplicaSet record (records.h), every count checked against the
 * blobs the fixed part says it spans. Strings point into the record. */
static int sel_decode(const struct shm_rec_rs *fr, const struct blobs *b,
                      struct shm_rec_selector *out)
{
	uint64_t k = 1, end = 1 + (uint64_t)fr->n_sel_blobs;

	memset(out, 0, sizeof(*out));
	out->state = fr->sel_state;
	if (end > b->n)
		return -EBADMSG;
	if (fr->sel_state == SHM_REC_SEL_NIL)
		return fr->n_sel_blobs ? -EBADMSG : 0;
	if (fr->sel_state == SHM_REC_SEL_INVALID) {
		/* one requirement the conversion refuses: the sync reports the invalid selector */
		if (fr->n_sel_blobs || !(out->reqs = calloc(1, sizeof(*out->reqs))))
			return fr->n_sel_blobs ? -EBADMSG : -ENOMEM;
		out->reqs[0] = (struct kube_label_requirement){
		        .key = "", .op = KUBE_OP_INVALID, .op_text = b->p[0]};
		out->ls.match_expressions = out->reqs;
		out->ls.n_match_expressions = 1;
		return 0;
	}
	if (fr->sel_state != SHM_REC_SEL_VALID ||
	    2 * (uint64_t)fr->n_sel_labels + 2 * (uint64_t)fr->n_sel_exprs > fr->n_sel_blobs)
		return -EBADMSG;
	out->kv = calloc((size_t)fr->n_sel_labels + 1, sizeof(*out->kv));
	out->reqs = calloc((size_t)fr->n_sel_exprs + 1, sizeof(*out->reqs));
	out->vals = calloc((size_t)fr->n_sel_blobs + 1, sizeof(*out->vals));
	if (!out->kv || !out->reqs || !out->vals)
		return -ENOMEM;
	for (uint32_t i = 0; i < fr->n_sel_labels; i++, k += 2)
		out->kv[i] = (struct kube_kv){b->p[k], b->p[k + 1]};
	size_t vi = 0;
	for (uint32_t i = 0; i < fr->n_sel_exprs; i++) {
		struct kube_label_requirement *q = &out->reqs[i];
		uint32_t nv;

		if (k + 2 > end || b->len[k + 1] != 5)
			return -EBADMSG;
		q->key = b->p[k];
		q->op = (enum kube_selector_op)(uint8_t)b->p[k + 1][0];
		memcpy(&nv, b->p[k + 1] + 1, 4);
		k += 2;
		if (nv > end - k)
			return -EBADMSG;
		switch (q->op) { /* what the encoder's validation lets through */
		case KUBE_OP_IN:
		case KUBE_OP_NOT_IN:
			if (!nv)
				return -EBADMSG;
			break;
		case KUBE_OP_EXISTS:
		case KUBE_OP_DOES_NOT_EXIST:
			if (nv)
				return -EBADMSG;
			break;
		default:
			return -EBADMSG;
		}
		q->op_text = op_text(q->op);
		q->values = &out->vals[vi];
		q->n_values = nv;
		for (uint32_t v = 0; v < nv; v++)
			out->vals[vi++] = b->p[k++];
	}
	if (k != end)
		return -EBADMSG;
	out->ls.match_labels = out->kv;
	out->ls.n_match_labels = fr->n_sel_labels;
	out->ls.match_expressions = out->reqs;
	out->ls.n_match_expressions = fr->n_sel_exprs;
	return 0;
}

void shm_rec_selector_free(struct shm_rec_selector *s)
{
	free(s->kv);
	free(s->reqs);
	free(s->vals);
	memset(s, 0, sizeof(*s));
}

const struct kube_label_selector *shm_rec_selector_ls(const struct shm_rec_selector *s)
{
	return s->state == SHM_REC_SEL_NIL ? NULL : &s->ls;
}

int shm_rec_selector_get(const struct shm_obj *o, struct shm_rec_selector *ret)
{
	struct shm_rec_view v;
	struct shm_rec_rs fr;
	struct blobs b = {0};
	int r;

	memset(ret, 0, sizeof(*ret));
	if (o->kind != SHM_RECORD_REPLICASET)
		return -EINVAL;
	if ((r = shm_rec_parse(o->payload, o->payload_len, &v)) < 0 ||
	    (r = shm_rec_rs_get(&v, &fr)) < 0)
		return r;
	if ((r = blobs_load(&v, &b)) == 0)
		r = sel_decode(&fr, &b, ret);
	blobs_free(&b);
	return r;
}

static const char *label_of(const struct kube_kv *kv, uint32_t n, const char *key)
{
	for (uint32_t i = 0; i < n; i++)
		if (kv[i].key && !strcmp(kv[i].key, key))
			return kv[i].value ? kv[i].value : "";
	return NULL;
}

bool shm_rec_selector_match(const struct kube_label_selector *ls, const struct kube_kv *labels,
                            uint32_t n)
{
	if (!ls)
		return false;
	for (uint32_t i = 0; i < ls->n_match_labels; i++) {
		const char *v = label_of(labels, n, ls->match_labels[i].key);
		if (!v || strcmp(v, ls->match_labels[i].value ? ls->match_labels[i].value : ""))
			return false;
	}
	for (uint32_t i = 0; i < ls->n_match_expressions; i++) {
		const struct kube_label_requirement *q = &ls->match_expressions[i];
		const char *v = label_of(labels, n, q->key);
		bool in = false;

		for (uint32_t k = 0; v && k < q->n_values; k++)
			in |= !strcmp(q->values[k], v);
		switch (q->op) {
		case KUBE_OP_IN:
			if (!in)
				return false;
			break;
		case KUBE_OP_NOT_IN:
			if (in)
				return false;
			break;
		case KUBE_OP_EXISTS:
			if (!v)
				return false;
			break;
		case KUBE_OP_DOES_NOT_EXIST:
			if (v)
				return false;
			break;
		default:
			return false; /* not a selector a record holds as VALID */
		}
	}
	return true;
}

/* ---- replicasets ------------------------------------------------------------------------------
 */

static int rs_body(struct shm_rs_view *ret, const struct shm_rec_rs *fr, const struct blobs *b)
{
	int r;

	struct kube_replicaset *rs = &ret->rs;
	rs->spec_replicas = fr->spec_replicas;
	rs->has_spec_replicas = fr->has_spec_replicas;
	rs->min_ready_seconds = fr->min_ready_seconds;
	rs->status.replicas = fr->replicas;
	rs->status.fully_labeled_replicas = fr->fully_labeled_replicas;
	rs->status.ready_replicas = fr->ready_replicas;
	rs->status.available_replicas = fr->available_replicas;
	rs->status.terminating_replicas = fr->terminating_replicas;
	rs->status.has_terminating_replicas = fr->has_terminating_replicas;
	rs->status.observed_generation = fr->observed_generation;

	/* blob 0 and the compiled selector */
	if ((r = sel_decode(fr, b, &ret->sel)) < 0)
		return r;
	rs->selector = ret->sel.state == SHM_REC_SEL_NIL ? NULL : &ret->sel.ls;
	/* spec.template, then its labels (parsed when stored: no JSON parse here) */
	uint64_t t = shm_rec_rs_template(fr), c0 = shm_rec_rs_first_condition(fr);
	rs->template_json = b->p[t];
	rs->template_json_len = b->len[t];
	if (!(ret->tmpl_labels =
	              calloc((size_t)fr->n_template_labels + 1, sizeof(*ret->tmpl_labels))))
		return -ENOMEM;
	for (uint32_t i = 0; i < fr->n_template_labels; i++)
		ret->tmpl_labels[i] = (struct kube_kv){b->p[t + 1 + 2 * (uint64_t)i],
		                                       b->p[t + 2 + 2 * (uint64_t)i]};
	rs->template_labels = ret->tmpl_labels;
	rs->n_template_labels = fr->n_template_labels;
	/* the pod-building parts (no JSON parse: spans copied in as they are) */
	uint64_t p0 = t + 1 + 2 * (uint64_t)fr->n_template_labels;
	struct kube_template_parts *tp = &rs->template_parts;
	const char **part[SHM_REC_TMPL_N_PARTS] = {&tp->labels, &tp->annotations, &tp->finalizers,
	                                           &tp->spec};
	size_t *plen[SHM_REC_TMPL_N_PARTS] = {&tp->labels_len, &tp->annotations_len,
	                                      &tp->finalizers_len, &tp->spec_len};
	tp->valid = fr->tmpl_parts & SHM_REC_TMPL_VALID;
	for (unsigned i = 0; i < SHM_REC_TMPL_N_PARTS; i++)
		if (tp->valid && (fr->tmpl_parts & (SHM_REC_TMPL_LABELS << i))) {
			*part[i] = b->p[p0 + i];
			*plen[i] = b->len[p0 + i];
		}
	/* then five blobs per condition */
	if (fr->n_conditions) {
		ret->conds = calloc(fr->n_conditions, sizeof(*ret->conds));
		if (!ret->conds)
			return -ENOMEM;
		for (uint32_t i = 0; i < fr->n_conditions; i++) {
			const char *f[5];
			size_t fl[5];
			for (unsigned k = 0; k < 5; k++) {
				f[k] = b->p[c0 + i * 5 + k];
				fl[k] = b->len[c0 + i * 5 + k];
			}
			ret->conds[i].type = f[0];
			ret->conds[i].status = f[1];
			ret->conds[i].reason = fl[2] ? f[2] : NULL;
			ret->conds[i].message = fl[3] ? f[3] : NULL;
			if (fl[4] == sizeof(kube_time_t))
				memcpy(&ret->conds[i].last_transition_time, f[4],
				       sizeof(kube_time_t));
		}
		rs->status.conditions = ret->conds;
		rs->status.n_conditions = fr->n_conditions;
	}
	/* then the annotations' (key, value) pairs */
	uint64_t a0 = shm_rec_rs_first_annotation(fr);
	if (fr->n_annotations) {
		if (!(ret->annotations =
		              calloc((size_t)fr->n_annotations + 1, sizeof(*ret->annotations))))
			return -ENOMEM;
		for (uint32_t i = 0; i < fr->n_annotations; i++)
			ret->annotations[i] = (struct kube_kv){b->p[a0 + 2 * (uint64_t)i],
			                                       b->p[a0 + 1 + 2 * (uint64_t)i]};
		rs->meta.annotations = ret->annotations;
		rs->meta.n_annotations = fr->n_annotations;
	}
	uint64_t g = a0 + 2 * (uint64_t)fr->n_annotations; /* generateName */
	rs->meta.generate_name = b->len[g] ? b->p[g] : NULL;
	return 0;
}

int shm_rs_view_init(struct shm_obj *obj, struct shm_rs_view *ret)
{
	struct shm_rec_view v;
	struct shm_rec_rs fr;
	struct blobs b = {0};
	int r;

	memset(ret, 0, sizeof(*ret));
	ret->obj = *obj;
	*obj = SHM_OBJ_INIT;
	if (ret->obj.kind != SHM_RECORD_REPLICASET)
		return -EINVAL;
	if ((r = shm_rec_parse(ret->obj.payload, ret->obj.payload_len, &v)) < 0 ||
	    (r = shm_rec_rs_get(&v, &fr)) < 0)
		return r;
	/* blob 0, the selector, the template and its labels, five blobs per condition, two per
	 * annotation, generateName, then the finalizers */
	if (shm_rec_rs_first_annotation(&fr) + 2 * (uint64_t)fr.n_annotations + 1 >
	    v.hdr.n_blobs - v.hdr.n_finalizers)
		return -EBADMSG;
	if ((r = blobs_load(&v, &b)) == 0)
		r = meta_from_obj(&ret->obj, &v, &b, &ret->rs.meta, &ret->labels, &ret->owners,
		                  &ret->finalizers);
	if (r == 0)
		r = rs_body(ret, &fr, &b);
	blobs_free(&b);
	return r;
}

void shm_rs_view_free(struct shm_rs_view *w)
{
	shm_obj_release(&w->obj);
	free(w->labels);
	free(w->owners);
	free(w->finalizers);
	shm_rec_selector_free(&w->sel);
	free(w->conds);
	free(w->tmpl_labels);
	free(w->annotations);
	memset(w, 0, sizeof(*w));
}

/* ---- full objects ------------------------------------------------------------------------ */

int shm_object_view_init(struct shm_obj *obj, struct shm_object_view *ret)
{
	struct shm_rec_view v;
	struct shm_rec_object fo;
	struct blobs b = {0};
	int r;

	memset(ret, 0, sizeof(*ret));
	ret->obj = *obj;
	*obj = SHM_OBJ_INIT;
	if (ret->obj.kind != SHM_RECORD_OBJECT)
		return -EINVAL;
	if ((r = shm_rec_parse(ret->obj.payload, ret->obj.payload_len, &v)) < 0 ||
	    (r = shm_rec_object_get(&v, &fo)) < 0)
		return r;
	if (fo.body_format != SHM_REC_BODY_JSON)
		return -EPROTONOSUPPORT;
	/* apiVersion, kind, the annotation pairs, the body; then the finalizers */
	if (3 + 2 * (uint64_t)fo.n_annotations > v.hdr.n_blobs - v.hdr.n_finalizers)
		return -EBADMSG;
	if ((r = blobs_load(&v, &b)) == 0)
		r = meta_from_obj(&ret->obj, &v, &b, &ret->o.meta, &ret->labels, &ret->owners,
		                  &ret->finalizers);
	if (r == 0 &&
	    !(ret->annotations = calloc((size_t)fo.n_annotations + 1, sizeof(*ret->annotations))))
		r = -ENOMEM;
	if (r == 0) {
		struct kube_object *o = &ret->o;
		uint32_t k = 2;

		o->api_version = b.len[0] ? b.p[0] : NULL;
		o->kind = b.len[1] ? b.p[1] : NULL;
		for (uint32_t i = 0; i < fo.n_annotations; i++, k += 2)
			ret->annotations[i] = (struct kube_kv){b.p[k], b.p[k + 1]};
		o->meta.annotations = ret->annotations;
		o->meta.n_annotations = fo.n_annotations;
		o->raw = b.p[k];
		o->raw_len = b.len[k];
	}
	blobs_free(&b);
	return r;
}

void shm_object_view_free(struct shm_object_view *v)
{
	shm_obj_release(&v->obj);
	free(v->labels);
	free(v->owners);
	free(v->finalizers);
	free(v->annotations);
	memset(v, 0, sizeof(*v));
}
