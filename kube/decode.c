/* SPDX-License-Identifier: Apache-2.0 */
/* kube/decode.c - schema-directed decoders from apiserver JSON into kube/model.h structs.
 *
 * Each decoder is a small recursive-descent walk over the pull scanner in kube/json.c: it asks
 * for the fields it keeps and js_skip()s every other value (managedFields, most of the spec,
 * unknown fields). Strings that are kept are copied into the object's arena; the arena's first
 * chunk is sized so a typical object needs exactly one malloc. Arrays grow by doubling inside
 * the arena (the abandoned smaller copy stays until the object is freed; arrays here are short).
 *
 * Field choice follows the RS controller and the GC (docs/kube.md lists each field and its
 * reader). Unknown fields are ignored, as a Go client would; a known field of the wrong JSON type
 * is an error (-EPROTO), as Go's decoder would report it.
 */
#include "kube/model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"

struct dec {
	struct js j;
	struct js_arena arena;
	unsigned flags;
};

/* first chunk sizes: the struct plus room for the strings of a typical object */
#define POD_ARENA   1024
#define RS_ARENA    3072
#define SMALL_ARENA 768

/* Allocates the object struct as the first thing in a fresh arena attached to the scanner. */
static void *obj_new(struct js *j, struct js_arena *a, size_t size, size_t extra)
{
	if (js_arena_init(a, size + extra) < 0) {
		js_fail(j, -ENOMEM);
		return NULL;
	}
	j->arena = a;
	void *o = js_alloc(a, size);
	if (!o) {
		js_arena_free(a);
		js_fail(j, -ENOMEM);
	}
	return o;
}

/* Grows an arena array when full; returns the slot to fill or NULL (error recorded). */
static void *grow(struct js *j, void **arr, uint32_t *n, uint32_t *cap, size_t elsz, uint32_t first)
{
	if (*n == *cap) {
		if (*cap >= (1u << 24))
			return js_fail(j, -E2BIG), NULL;
		uint32_t nc = *cap ? *cap * 2 : first;
		void *na = js_alloc(j->arena, (size_t)nc * elsz);
		if (!na)
			return js_fail(j, -ENOMEM), NULL;
		if (*n)
			memcpy(na, *arr, (size_t)*n * elsz);
		*arr = na;
		*cap = nc;
	}
	return (char *)*arr + (size_t)(*n)++ * elsz;
}

static int dec_time(struct js *j, kube_time_t *t)
{
	const char *s;
	size_t n;
	bool esc;
	int r = js_str_span(j, &s, &n, &esc);
	if (r <= 0) {
		if (r == 0)
			*t = 0;
		return r;
	}
	if (esc || kube_time_parse(s, n, t) < 0)
		return js_fail(j, -EPROTO);
	return 1;
}

static bool keep_annotation(const char *k, size_t n)
{
	static const char *const prefixes[] = {
	        "controller.kubernetes.io/",
	        "deployment.kubernetes.io/",
	        "k8s.io/initial-events-end",
	        "control-plane.alpha.kubernetes.io/leader",
	};
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t pn = strlen(prefixes[i]);
		if (n >= pn && memcmp(k, prefixes[i], pn) == 0)
			return true;
	}
	return false;
}

/* map[string]string; filter==true keeps only keep_annotation() keys */
static int dec_kv(struct js *j, struct kube_kv **ret, uint32_t *ret_n, bool filter)
{
	const char *k;
	size_t kn;
	uint32_t n = 0, cap = 0;
	struct kube_kv *arr = NULL;
	int r = js_obj_begin(j);
	if (r <= 0)
		return r;
	while ((r = js_obj_next(j, &k, &kn)) > 0) {
		if (filter && !keep_annotation(k, kn)) {
			js_skip(j);
			continue;
		}
		char *key = js_strndup(j->arena, k, kn), *val;
		if (!key)
			return js_fail(j, -ENOMEM);
		if (js_str(j, &val) < 0)
			return j->err;
		struct kube_kv *kv = grow(j, (void **)&arr, &n, &cap, sizeof(*arr), 4);
		if (!kv)
			return j->err;
		kv->key = key;
		kv->value = val ? val : js_strndup(j->arena, "", 0);
		if (!kv->value)
			return js_fail(j, -ENOMEM);
	}
	if (r < 0)
		return r;
	*ret = arr;
	*ret_n = n;
	return 1;
}

static int dec_str_array(struct js *j, const char ***ret, uint32_t *ret_n)
{
	uint32_t n = 0, cap = 0;
	const char **arr = NULL;
	int r = js_arr_begin(j);
	if (r <= 0)
		return r;
	while ((r = js_arr_next(j)) > 0) {
		char *s;
		if (js_str(j, &s) < 0)
			return j->err;
		const char **slot = grow(j, (void **)&arr, &n, &cap, sizeof(*arr), 4);
		if (!slot)
			return j->err;
		*slot = s ? s : js_strndup(j->arena, "", 0);
	}
	if (r < 0)
		return r;
	*ret = arr;
	*ret_n = n;
	return 1;
}

static int dec_tribool(struct js *j, int8_t *t)
{
	bool b;
	int r = js_bool(j, &b);
	if (r > 0)
		*t = b;
	return r;
}

static int dec_owner_refs(struct js *j, struct kube_object_meta *m)
{
	uint32_t cap = 0;
	const char *k;
	size_t kn;
	int r = js_arr_begin(j);
	m->n_owner_refs = 0;
	m->owner_refs = NULL;
	if (r <= 0)
		return r;
	while ((r = js_arr_next(j)) > 0) {
		struct kube_owner_ref *o =
		        grow(j, (void **)&m->owner_refs, &m->n_owner_refs, &cap, sizeof(*o), 2);
		if (!o)
			return j->err;
		o->controller = o->block_owner_deletion = -1;
		if ((r = js_obj_begin(j)) < 0)
			return r;
		if (r == 0)
			continue;
		while ((r = js_obj_next(j, &k, &kn)) > 0) {
			if (JS_KEY(k, kn, "apiVersion"))
				js_str(j, (char **)&o->api_version);
			else if (JS_KEY(k, kn, "kind"))
				js_str(j, (char **)&o->kind);
			else if (JS_KEY(k, kn, "name"))
				js_str(j, (char **)&o->name);
			else if (JS_KEY(k, kn, "uid"))
				js_str(j, (char **)&o->uid);
			else if (JS_KEY(k, kn, "controller"))
				dec_tribool(j, &o->controller);
			else if (JS_KEY(k, kn, "blockOwnerDeletion"))
				dec_tribool(j, &o->block_owner_deletion);
			else
				js_skip(j);
		}
		if (r < 0)
			return r;
	}
	return r < 0 ? r : 1;
}

static int dec_meta(struct js *j, struct kube_object_meta *m, unsigned flags)
{
	const char *k;
	size_t kn;
	int r = js_obj_begin(j);
	if (r <= 0)
		return r;
	while ((r = js_obj_next(j, &k, &kn)) > 0) {
		switch (k[0]) {
		case 'n':
			if (JS_KEY(k, kn, "name"))
				js_str(j, (char **)&m->name);
			else if (JS_KEY(k, kn, "namespace"))
				js_str(j, (char **)&m->namespace);
			else
				js_skip(j);
			break;
		case 'u':
			if (JS_KEY(k, kn, "uid"))
				js_str(j, (char **)&m->uid);
			else
				js_skip(j);
			break;
		case 'r':
			if (JS_KEY(k, kn, "resourceVersion"))
				js_str(j, (char **)&m->resource_version);
			else
				js_skip(j);
			break;
		case 'g':
			if (JS_KEY(k, kn, "generation"))
				js_int64(j, &m->generation);
			else if (JS_KEY(k, kn, "generateName"))
				js_str(j, (char **)&m->generate_name);
			else
				js_skip(j);
			break;
		case 'c':
			if (JS_KEY(k, kn, "creationTimestamp"))
				dec_time(j, &m->creation_timestamp);
			else
				js_skip(j);
			break;
		case 'd':
			if (JS_KEY(k, kn, "deletionTimestamp"))
				dec_time(j, &m->deletion_timestamp);
			else if (JS_KEY(k, kn, "deletionGracePeriodSeconds"))
				m->has_deletion_grace_period_seconds =
				        js_int64(j, &m->deletion_grace_period_seconds) > 0;
			else
				js_skip(j);
			break;
		case 'l':
			if (JS_KEY(k, kn, "labels"))
				dec_kv(j, &m->labels, &m->n_labels, false);
			else
				js_skip(j);
			break;
		case 'a':
			if (JS_KEY(k, kn, "annotations"))
				dec_kv(j, &m->annotations, &m->n_annotations,
				       !(flags & KUBE_DECODE_ALL_ANNOTATIONS));
			else
				js_skip(j);
			break;
		case 'o':
			if (JS_KEY(k, kn, "ownerReferences"))
				dec_owner_refs(j, m);
			else
				js_skip(j);
			break;
		case 'f':
			if (JS_KEY(k, kn, "finalizers"))
				dec_str_array(j, &m->finalizers, &m->n_finalizers);
			else
				js_skip(j);
			break;
		default: /* managedFields, selfLink, ... */
			js_skip(j);
		}
	}
	return r < 0 ? r : 1;
}

/* ---- Pod ------------------------------------------------------------------------------------ */

struct name_span {
	const char *s;
	size_t n;
	int32_t restarts;
};

struct pod_tmp {
	struct name_span *sidecars; /* spec.initContainers with restartPolicy Always */
	uint32_t n_sidecars, cap_sidecars;
	struct name_span *init_st; /* status.initContainerStatuses */
	uint32_t n_init_st, cap_init_st;
	bool aff_found; /* the metadata.name In requirement affinity_node comes from was seen */
	uint32_t cap_ports, cap_ips; /* p->ep's arrays */
	uint32_t cap_tols;           /* p->tolerations */
};

/* One matchFields NodeSelectorRequirement: the first metadata.name In one decides
 * affinity_node (its single value, else none), as GetTargetNodeName returns at it. Key and
 * operator are unescaped copies: Go compares decoded strings. */
static int dec_match_field(struct js *j, struct kube_pod *p, struct pod_tmp *t)
{
	const char *k;
	size_t kn;
	char *key = NULL, *op = NULL, *v0 = NULL;
	uint32_t nv = 0;
	int r = js_obj_begin(j);
	if (r <= 0)
		return r;
	while ((r = js_obj_next(j, &k, &kn)) > 0) {
		if (JS_KEY(k, kn, "key"))
			js_str(j, &key);
		else if (JS_KEY(k, kn, "operator"))
			js_str(j, &op);
		else if (JS_KEY(k, kn, "values")) {
			if ((r = js_arr_begin(j)) <= 0)
				continue;
			while ((r = js_arr_next(j)) > 0) {
				if (nv++ == 0)
					js_str(j, &v0);
				else
					js_skip(j);
			}
		} else
			js_skip(j);
	}
	if (r < 0)
		return r;
	if (!t->aff_found && key && op && strcmp(key, "metadata.name") == 0 &&
	    strcmp(op, "In") == 0) {
		t->aff_found = true;
		p->affinity_node = nv == 1 ? v0 : NULL;
	}
	return 1;
}

/* spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[]
 * .matchFields[]; depth 0 is the affinity object. Everything else is skipped. */
static int dec_affinity(struct js *j, struct kube_pod *p, struct pod_tmp *t, int depth)
{
	static const char *const path[] = {"nodeAffinity",
	                                   "requiredDuringSchedulingIgnoredDuringExecution",
	                                   "nodeSelectorTerms", "matchFields"};
	const char *k;
	size_t kn;
	int r = js_obj_begin(j);
	if (r <= 0)
		return r;
	while ((r = js_obj_next(j, &k, &kn)) > 0) {
		if (kn != strlen(path[depth]) || memcmp(k, path[depth], kn) != 0) {
			js_skip(j);
		} else if (depth == 0 || depth == 1) {
			dec_affinity(j, p, t, depth + 1);
		} else { /* nodeSelectorTerms (objects), matchFields (requirements) */
			if ((r = js_arr_begin(j)) <= 0)
				continue;
			while ((r = js_arr_next(j)) > 0)
				if (depth == 2)
					dec_affinity(j, p, t, 3);
				else
					dec_match_field(j, p, t);
		}
	}
	return r < 0 ? r : 1;
}

/* A container's ports: the named ones appended to p->ep.ports (struct kube_pod_port). */
static int dec_container_ports(struct js *j, struct kube_pod *p, struct pod_tmp *t, bool sidecar)
{
	const char *k;
	size_t kn;
	int r = js_arr_begin(j);
	if (r <= 0)
		return r;
	while ((r = js_arr_next(j)) > 0) {
		char *name = NULL, *proto = NULL;
		int32_t port = 0;
		if (js_obj_begin(j) <= 0)
			continue;
		while ((r = js_obj_next(j, &k, &kn)) > 0) {
			if (JS_KEY(k, kn, "name"))
				js_str(j, &name);
			else if (JS_KEY(k, kn, "protocol"))
				js_str(j, &proto);
			else if (JS_KEY(k, kn, "containerPort"))
				js_int32(j, &port);
			else
				js_skip(j);
		}
		if (r < 0)
			return r;
		if (!name || !*name)
			continue;
		struct kube_pod_port *pp = grow(j, (void **)&p->ep.ports, &p->ep.n_ports,
		                                &t->cap_ports, sizeof(*pp), 2);
		if (!pp)
			return j->err;
		*pp = (struct kube_pod_port){name, proto && *proto ? proto : NULL, port, sidecar};
	}
	return r < 0 ? r : 1;
}

/* An empty string is kept as NULL (the API does not tell "" and absent apart here). */
static int dec_opt_str(struct js *j, const char **ret)
{
	char *v = NULL;
	int r = js_str(j, &v);
	*ret = v && *v ? v : NULL;
	return r;
}

/* spec.tolerations: every element, in order (null elements count as empty tolerations, as a
 * Go client decodes them). A field of the wrong JSON type fails the pod (-EPROTO), as every
 * other typed field does. */
static int dec_tolerations(struct js *j, struct kube_pod *p, struct pod_tmp *t)
{
	const char *k;
	size_t kn;
	int r = js_arr_begin(j);
	if (r <= 0)
		return r;
	while ((r = js_arr_next(j)) > 0) {
		struct kube_toleration *tl = grow(j, (void **)&p->tolerations, &p->n_tolerations,
		                                  &t->cap_tols, sizeof(*tl), 4);
		if (!tl)
			return j->err;
		*tl = (struct kube_toleration){0};
		if ((r = js_obj_begin(j)) <= 0) {
			if (r < 0)
				return r;
			continue;
		}
		while ((r = js_obj_next(j, &k, &kn)) > 0) {
			if (JS_KEY(k, kn, "key"))
				r = dec_opt_str(j, &tl->key);
			else if (JS_KEY(k, kn, "operator"))
				r = dec_opt_str(j, &tl->op);
			else if (JS_KEY(k, kn, "value"))
				r = dec_opt_str(j, &tl->value);
			else if (JS_KEY(k, kn, "effect"))
				r = dec_opt_str(j, &tl->effect);
			else if (JS_KEY(k, kn, "tolerationSeconds"))
				tl->has_seconds = (r = js_int64(j, &tl->seconds)) > 0;
			else
				r = js_skip(j);
			if (r < 0)
				return r;
		}
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	if (!p->n_tolerations)
		p->tolerations = NULL;
	return 1;
}

static int dec_pod_spec(struct js *j, struct kube_pod *p, struct pod_tmp *t)
{
	const char *k;
	size_t kn;
	int r = js_obj_begin(j);
	if (r <= 0)
		return r;
	while ((r = js_obj_next(j, &k, &kn)) > 0) {
		if (JS_KEY(k, kn, "nodeName")) {
			js_str(j, (char **)&p->node_name);
		} else if (JS_KEY(k, kn, "affinity")) {
			dec_affinity(j, p, t, 0);
		} else if (JS_KEY(k, kn, "tolerations")) {
			if ((r = dec_tolerations(j, p, t)) < 0)
				return r;
		} else if (JS_KEY(k, kn, "hostname")) {
			js_str(j, (char **)&p->ep.hostname);
		} else if (JS_KEY(k, kn, "subdomain")) {
			js_str(j, (char **)&p->ep.subdomain);
		} else if (JS_KEY(k, kn, "volumes")) {
			if ((r = js_arr_begin(j)) <= 0)
				continue;
			while ((r = js_arr_next(j)) > 0) {
				if (js_obj_begin(j) <= 0)
					continue;
				while ((r = js_obj_next(j, &k, &kn)) > 0) {
					if (!JS_KEY(k, kn, "ephemeral"))
						js_skip(j);
					else if (!js_null(j)) {
						p->has_ephemeral_volume = true;
						js_skip(j);
					}
				}
				if (r < 0)
					return r;
			}
		} else if (JS_KEY(k, kn, "resourceClaims")) {
			if ((r = js_arr_begin(j)) <= 0)
				continue;
			while ((r = js_arr_next(j)) > 0) {
				p->has_resource_claims = true;
				js_skip(j);
			}
		} else if (JS_KEY(k, kn, "containers")) {
			if ((r = js_arr_begin(j)) <= 0)
				continue;
			while ((r = js_arr_next(j)) > 0) {
				if (js_obj_begin(j) <= 0)
					continue;
				while ((r = js_obj_next(j, &k, &kn)) > 0) {
					if (JS_KEY(k, kn, "ports")) {
						if ((r = dec_container_ports(j, p, t, false)) < 0)
							return r;
					} else
						js_skip(j);
				}
				if (r < 0)
					return r;
			}
		} else if (JS_KEY(k, kn, "initContainers")) {
			if ((r = js_arr_begin(j)) <= 0)
				continue;
			while ((r = js_arr_next(j)) > 0) {
				const char *name = NULL, *pol = NULL;
				size_t nn = 0, pn = 0;
				bool e1 = false, e2 = false;
				uint32_t first_port = p->ep.n_ports;
				if (js_obj_begin(j) <= 0)
					continue;
				while ((r = js_obj_next(j, &k, &kn)) > 0) {
					if (JS_KEY(k, kn, "name"))
						js_str_span(j, &name, &nn, &e1);
					else if (JS_KEY(k, kn, "restartPolicy"))
						js_str_span(j, &pol, &pn, &e2);
					else if (JS_KEY(k, kn, "ports")) {
						if ((r = dec_container_ports(j, p, t, true)) < 0)
							return r;
					} else
						js_skip(j);
				}
				if (r < 0)
					return r;
				/* only a sidecar's ports count (FindPort) */
				if (!(pol && !e2 && JS_KEY(pol, pn, "Always")))
					p->ep.n_ports = first_port;
				if (name && !e1 && pol && JS_KEY(pol, pn, "Always")) {
					struct name_span *ns =
					        grow(j, (void **)&t->sidecars, &t->n_sidecars,
					             &t->cap_sidecars, sizeof(*ns), 2);
					if (!ns)
						return j->err;
					ns->s = name;
					ns->n = nn;
				}
			}
		} else
			js_skip(j);
	}
	return r < 0 ? r : 1;
}

static enum kube_pod_phase phase_of(const char *s, size_t n)
{
	if (JS_KEY(s, n, "Pending"))
		return KUBE_POD_PENDING;
	if (JS_KEY(s, n, "Running"))
		return KUBE_POD_RUNNING;
	if (JS_KEY(s, n, "Succeeded"))
		return KUBE_POD_SUCCEEDED;
	if (JS_KEY(s, n, "Failed"))
		return KUBE_POD_FAILED;
	if (JS_KEY(s, n, "Unknown"))
		return KUBE_POD_UNKNOWN;
	return KUBE_POD_PHASE_OTHER;
}

/* containerStatuses / initContainerStatuses: max restartCount, or collect (name, count). */
static int dec_container_statuses(struct js *j, int32_t *max, struct pod_tmp *t)
{
	const char *k;
	size_t kn;
	int r = js_arr_begin(j);
	if (r <= 0)
		return r;
	while ((r = js_arr_next(j)) > 0) {
		const char *name = NULL;
		size_t nn = 0;
		bool esc = false;
		int32_t rc = 0;
		if (js_obj_begin(j) <= 0)
			continue;
		while ((r = js_obj_next(j, &k, &kn)) > 0) {
			if (JS_KEY(k, kn, "restartCount"))
				js_int32(j, &rc);
			else if (t && JS_KEY(k, kn, "name"))
				js_str_span(j, &name, &nn, &esc);
			else
				js_skip(j);
		}
		if (r < 0)
			return r;
		if (!t) {
			if (rc > *max)
				*max = rc;
		} else if (name && !esc) {
			struct name_span *ns = grow(j, (void **)&t->init_st, &t->n_init_st,
			                            &t->cap_init_st, sizeof(*ns), 2);
			if (!ns)
				return j->err;
			ns->s = name;
			ns->n = nn;
			ns->restarts = rc;
		}
	}
	return r < 0 ? r : 1;
}

/* The first Ready condition's status (MarkPodsNotReady reads the first one). */
static uint8_t ready_status_of(const char *st, size_t n, bool escaped)
{
	if (st && !escaped && JS_KEY(st, n, "True"))
		return KUBE_COND_TRUE;
	if (st && !escaped && JS_KEY(st, n, "False"))
		return KUBE_COND_FALSE;
	return KUBE_COND_UNKNOWN;
}

static int dec_pod_status(struct js *j, struct kube_pod *p, struct pod_tmp *t)
{
	const char *k, *s;
	size_t kn, sn;
	bool esc;
	int r = js_obj_begin(j);
	if (r <= 0)
		return r;
	while ((r = js_obj_next(j, &k, &kn)) > 0) {
		if (JS_KEY(k, kn, "phase")) {
			if (js_str_span(j, &s, &sn, &esc) > 0)
				p->phase = esc ? KUBE_POD_PHASE_OTHER : phase_of(s, sn);
		} else if (JS_KEY(k, kn, "conditions")) {
			if (js_arr_begin(j) <= 0)
				continue;
			while ((r = js_arr_next(j)) > 0) {
				const char *type = NULL, *st = NULL, *rs = NULL;
				size_t tn = 0, stn = 0, rsn = 0;
				bool e1 = false, e2 = false, e3 = false;
				kube_time_t ltt = 0;
				if (js_obj_begin(j) <= 0)
					continue;
				while ((r = js_obj_next(j, &k, &kn)) > 0) {
					if (JS_KEY(k, kn, "type"))
						js_str_span(j, &type, &tn, &e1);
					else if (JS_KEY(k, kn, "status"))
						js_str_span(j, &st, &stn, &e2);
					else if (JS_KEY(k, kn, "reason"))
						js_str_span(j, &rs, &rsn, &e3);
					else if (JS_KEY(k, kn, "lastTransitionTime"))
						dec_time(j, &ltt);
					else
						js_skip(j);
				}
				if (r < 0)
					return r;
				if (type && !e1 && JS_KEY(type, tn, "Ready")) {
					p->ready = st && !e2 && JS_KEY(st, stn, "True");
					if (!p->ready_status)
						p->ready_status = ready_status_of(st, stn, e2);
					p->ready_transition_time = ltt;
				} else if (type && !e1 && JS_KEY(type, tn, "DisruptionTarget")) {
					bool on = st && !e2 && JS_KEY(st, stn, "True");
					bool kl = rs && !e3 &&
					          JS_KEY(rs, rsn, "TerminationByKubelet");
					p->disruption_target = !on  ? KUBE_DT_NOT_TRUE
					                       : kl ? KUBE_DT_TRUE_KUBELET
					                            : KUBE_DT_TRUE;
					p->disruption_target_time = ltt;
					p->dt_taint_manager =
					        on && rs && !e3 &&
					        JS_KEY(rs, rsn, "DeletionByTaintManager");
				}
			}
		} else if (JS_KEY(k, kn, "podIP")) {
			js_str(j, (char **)&p->ep.pod_ip);
		} else if (JS_KEY(k, kn, "podIPs")) {
			if (js_arr_begin(j) <= 0)
				continue;
			while ((r = js_arr_next(j)) > 0) {
				char *ip = NULL;
				if (js_obj_begin(j) <= 0)
					continue;
				while ((r = js_obj_next(j, &k, &kn)) > 0) {
					if (JS_KEY(k, kn, "ip"))
						js_str(j, &ip);
					else
						js_skip(j);
				}
				if (r < 0)
					return r;
				const char **slot =
				        grow(j, (void **)&p->ep.pod_ips, &p->ep.n_pod_ips,
				             &t->cap_ips, sizeof(*slot), 2);
				if (!slot)
					return j->err;
				*slot = ip ? ip : "";
			}
		} else if (JS_KEY(k, kn, "containerStatuses")) {
			dec_container_statuses(j, &p->max_restarts, NULL);
		} else if (JS_KEY(k, kn, "initContainerStatuses")) {
			dec_container_statuses(j, NULL, t);
		} else
			js_skip(j);
	}
	return r < 0 ? r : 1;
}

int kube_parse_deletion_cost(const char *s, int32_t *ret)
{
	/* upstream (GetDeletionCostFromPodAnnotations): the first character must be '-', a digit
	 * 1-9, or the whole string "0" (no '+', no leading zero); then strconv.ParseInt(s, 10, 32),
	 * which after a '-' does accept leading zeros ("-05" is -5, "-0" is 0). */
	if (!s || !*s)
		return -EINVAL;
	if (!(s[0] == '-' || (s[0] >= '1' && s[0] <= '9') || (s[0] == '0' && !s[1])))
		return -EINVAL;
	const char *p = s;
	bool neg = false;
	if (*p == '-') {
		neg = true;
		p++;
	}
	if (!*p)
		return -EINVAL;
	int64_t v = 0;
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		v = v * 10 + (*p - '0');
		if (v > (int64_t)INT32_MAX + 1)
			return -EINVAL;
	}
	if (neg)
		v = -v;
	if (v < INT32_MIN || v > INT32_MAX)
		return -EINVAL;
	*ret = (int32_t)v;
	return 0;
}

static int pod_body(struct js *j, struct kube_pod *p, unsigned flags)
{
	const char *k;
	size_t kn;
	struct pod_tmp t = {0};
	int r = js_obj_begin(j);
	if (r <= 0)
		return r == 0 ? js_fail(j, -EPROTO) : r;
	while ((r = js_obj_next(j, &k, &kn)) > 0) {
		if (JS_KEY(k, kn, "metadata"))
			dec_meta(j, &p->meta, flags);
		else if (JS_KEY(k, kn, "spec"))
			dec_pod_spec(j, p, &t);
		else if (JS_KEY(k, kn, "status"))
			dec_pod_status(j, p, &t);
		else
			js_skip(j);
	}
	if (r < 0)
		return r;
	for (uint32_t i = 0; i < t.n_init_st; i++)
		for (uint32_t s = 0; s < t.n_sidecars; s++)
			if (t.init_st[i].n == t.sidecars[s].n &&
			    memcmp(t.init_st[i].s, t.sidecars[s].s, t.sidecars[s].n) == 0 &&
			    t.init_st[i].restarts > p->max_sidecar_restarts)
				p->max_sidecar_restarts = t.init_st[i].restarts;
	const char *cost = kube_labels_get(p->meta.annotations, p->meta.n_annotations,
	                                   "controller.kubernetes.io/pod-deletion-cost");
	if (cost && kube_parse_deletion_cost(cost, &p->deletion_cost) == 0)
		p->has_deletion_cost = true;
	else
		p->deletion_cost = 0;
	return 1;
}

/* ---- LabelSelector -------------------------------------------------------------------------- */

static enum kube_selector_op op_of(const char *s)
{
	if (!s)
		return KUBE_OP_INVALID;
	if (!strcmp(s, "In"))
		return KUBE_OP_IN;
	if (!strcmp(s, "NotIn"))
		return KUBE_OP_NOT_IN;
	if (!strcmp(s, "Exists"))
		return KUBE_OP_EXISTS;
	if (!strcmp(s, "DoesNotExist"))
		return KUBE_OP_DOES_NOT_EXIST;
	return KUBE_OP_INVALID;
}

static int dec_label_selector(struct js *j, struct kube_label_selector **ret)
{
	const char *k;
	size_t kn;
	int r = js_obj_begin(j);
	if (r <= 0) {
		if (r == 0)
			*ret = NULL;
		return r;
	}
	struct kube_label_selector *ls = js_alloc(j->arena, sizeof(*ls));
	if (!ls)
		return js_fail(j, -ENOMEM);
	while ((r = js_obj_next(j, &k, &kn)) > 0) {
		if (JS_KEY(k, kn, "matchLabels")) {
			dec_kv(j, &ls->match_labels, &ls->n_match_labels, false);
		} else if (JS_KEY(k, kn, "matchExpressions")) {
			uint32_t cap = 0;
			ls->match_expressions = NULL;
			ls->n_match_expressions = 0;
			if (js_arr_begin(j) <= 0)
				continue;
			while ((r = js_arr_next(j)) > 0) {
				struct kube_label_requirement *q =
				        grow(j, (void **)&ls->match_expressions,
				             &ls->n_match_expressions, &cap, sizeof(*q), 2);
				if (!q)
					return j->err;
				if (js_obj_begin(j) <= 0)
					continue;
				while ((r = js_obj_next(j, &k, &kn)) > 0) {
					if (JS_KEY(k, kn, "key"))
						js_str(j, (char **)&q->key);
					else if (JS_KEY(k, kn, "operator"))
						js_str(j, (char **)&q->op_text);
					else if (JS_KEY(k, kn, "values"))
						dec_str_array(j, &q->values, &q->n_values);
					else
						js_skip(j);
				}
				if (r < 0)
					return r;
				q->op = op_of(q->op_text);
				if (!q->key)
					q->key = js_strndup(j->arena, "", 0);
			}
		} else
			js_skip(j);
	}
	if (r < 0)
		return r;
	*ret = ls;
	return 1;
}

/* ---- ReplicaSet ----------------------------------------------------------------------------- */

/* The span [s, s+n) of the template text raw as the same span of its copy rs->template_json. */
static void part_at(const struct kube_replicaset *rs, const char *raw, const char *s, size_t n,
                    const char **ret, size_t *ret_len)
{
	*ret = rs->template_json + (s - raw);
	*ret_len = n;
}

static int dec_template_labels(struct js *outer, struct kube_replicaset *rs, const char *raw,
                               size_t n)
{
	/* a second, cheap walk over the template text for metadata.labels, and the spans of the
	 * parts a pod is built from (struct kube_template_parts) */
	struct kube_template_parts *tp = &rs->template_parts;
	struct js j;
	const char *k, *s;
	size_t kn, sn;
	js_init(&j, raw, n, outer->arena);
	j.depth = outer->depth;
	int r = js_obj_begin(&j);
	if (r > 0) {
		tp->valid = true;
		while ((r = js_obj_next(&j, &k, &kn)) > 0) {
			if (JS_KEY(k, kn, "spec")) {
				if (js_raw(&j, &s, &sn) > 0)
					part_at(rs, raw, s, sn, &tp->spec, &tp->spec_len);
				continue;
			}
			if (!JS_KEY(k, kn, "metadata")) {
				js_skip(&j);
				continue;
			}
			if (js_obj_begin(&j) <= 0)
				continue;
			while ((r = js_obj_next(&j, &k, &kn)) > 0) {
				if (JS_KEY(k, kn, "labels")) {
					js_peek(&j);
					s = (const char *)j.p;
					dec_kv(&j, &rs->template_labels, &rs->n_template_labels,
					       false);
					part_at(rs, raw, s, (size_t)((const char *)j.p - s),
					        &tp->labels, &tp->labels_len);
				} else if (JS_KEY(k, kn, "annotations")) {
					if (js_raw(&j, &s, &sn) > 0)
						part_at(rs, raw, s, sn, &tp->annotations,
						        &tp->annotations_len);
				} else if (JS_KEY(k, kn, "finalizers")) {
					if (js_raw(&j, &s, &sn) > 0)
						part_at(rs, raw, s, sn, &tp->finalizers,
						        &tp->finalizers_len);
				} else
					js_skip(&j);
			}
		}
	}
	if (j.err) {
		tp->valid = false;
		return js_fail(outer, j.err);
	}
	return 1;
}

static int dec_conditions(struct js *j, struct kube_condition **ret, uint32_t *ret_n)
{
	const char *k;
	size_t kn;
	uint32_t cap = 0;
	*ret = NULL; /* a repeated key replaces the list, as in Go; cap starts again from 0 */
	*ret_n = 0;
	int r = js_arr_begin(j);
	if (r <= 0)
		return r;
	while ((r = js_arr_next(j)) > 0) {
		struct kube_condition *c = grow(j, (void **)ret, ret_n, &cap, sizeof(*c), 2);
		if (!c)
			return j->err;
		if (js_obj_begin(j) <= 0)
			continue;
		while ((r = js_obj_next(j, &k, &kn)) > 0) {
			if (JS_KEY(k, kn, "type"))
				js_str(j, (char **)&c->type);
			else if (JS_KEY(k, kn, "status"))
				js_str(j, (char **)&c->status);
			else if (JS_KEY(k, kn, "reason"))
				js_str(j, (char **)&c->reason);
			else if (JS_KEY(k, kn, "message"))
				js_str(j, (char **)&c->message);
			else if (JS_KEY(k, kn, "lastTransitionTime"))
				dec_time(j, &c->last_transition_time);
			else
				js_skip(j);
		}
		if (r < 0)
			return r;
	}
	return r < 0 ? r : 1;
}

/* A ReplicationController's spec.selector is a map: as upstream's conversion to a ReplicaSet
 * (Convert_Map_string_To_string_To_v1_LabelSelector) it becomes matchLabels; null or absent
 * stays a nil selector. */
static int dec_rc_selector(struct js *j, struct kube_label_selector **ret)
{
	struct kube_label_selector *ls = js_alloc(j->arena, sizeof(*ls));
	if (!ls)
		return js_fail(j, -ENOMEM);
	int r = dec_kv(j, &ls->match_labels, &ls->n_match_labels, false);
	*ret = r > 0 ? ls : NULL;
	return r;
}

/* A ReplicaSet, or (rc) a core/v1 ReplicationController read as the ReplicaSet upstream's
 * replication controller converts it to: the same fields but for the selector's shape (and an
 * RC status has no terminatingReplicas, so it stays absent). */
static int rs_or_rc_body(struct js *j, struct kube_replicaset *rs, unsigned flags, bool rc)
{
	const char *k;
	size_t kn;
	int r = js_obj_begin(j);
	if (r <= 0)
		return r == 0 ? js_fail(j, -EPROTO) : r;
	rs->spec_replicas = 1;
	while ((r = js_obj_next(j, &k, &kn)) > 0) {
		if (JS_KEY(k, kn, "metadata")) {
			dec_meta(j, &rs->meta, flags);
		} else if (JS_KEY(k, kn, "spec")) {
			if (js_obj_begin(j) <= 0)
				continue;
			while ((r = js_obj_next(j, &k, &kn)) > 0) {
				if (JS_KEY(k, kn, "replicas")) {
					rs->has_spec_replicas = js_int32(j, &rs->spec_replicas) > 0;
					if (!rs->has_spec_replicas)
						rs->spec_replicas = 1;
				} else if (JS_KEY(k, kn, "minReadySeconds"))
					js_int32(j, &rs->min_ready_seconds);
				else if (JS_KEY(k, kn, "selector"))
					rc ? dec_rc_selector(j, &rs->selector)
					   : dec_label_selector(j, &rs->selector);
				else if (JS_KEY(k, kn, "template")) {
					const char *raw;
					size_t rn;
					if (js_raw(j, &raw, &rn) > 0) {
						rs->template_json = js_strndup(j->arena, raw, rn);
						rs->template_json_len = rn;
						if (!rs->template_json)
							return js_fail(j, -ENOMEM);
						dec_template_labels(j, rs, raw, rn);
					}
				} else
					js_skip(j);
			}
		} else if (JS_KEY(k, kn, "status")) {
			if (js_obj_begin(j) <= 0)
				continue;
			while ((r = js_obj_next(j, &k, &kn)) > 0) {
				if (JS_KEY(k, kn, "replicas"))
					js_int32(j, &rs->status.replicas);
				else if (JS_KEY(k, kn, "fullyLabeledReplicas"))
					js_int32(j, &rs->status.fully_labeled_replicas);
				else if (JS_KEY(k, kn, "readyReplicas"))
					js_int32(j, &rs->status.ready_replicas);
				else if (JS_KEY(k, kn, "availableReplicas"))
					js_int32(j, &rs->status.available_replicas);
				else if (JS_KEY(k, kn, "terminatingReplicas"))
					rs->status.has_terminating_replicas =
					        js_int32(j, &rs->status.terminating_replicas) > 0;
				else if (JS_KEY(k, kn, "observedGeneration"))
					js_int64(j, &rs->status.observed_generation);
				else if (JS_KEY(k, kn, "conditions"))
					dec_conditions(j, &rs->status.conditions,
					               &rs->status.n_conditions);
				else
					js_skip(j);
			}
		} else
			js_skip(j);
	}
	return r < 0 ? r : 1;
}

static int rs_body(struct js *j, struct kube_replicaset *rs, unsigned flags)
{
	return rs_or_rc_body(j, rs, flags, false);
}

static int rc_body(struct js *j, struct kube_replicaset *rs, unsigned flags)
{
	return rs_or_rc_body(j, rs, flags, true);
}

/* ---- Lease, Partial, Scale, Status ---------------------------------------------------------- */

static int lease_body(struct js *j, struct kube_lease *l, unsigned flags)
{
	const char *k;
	size_t kn;
	int r = js_obj_begin(j);
	if (r <= 0)
		return r == 0 ? js_fail(j, -EPROTO) : r;
	while ((r = js_obj_next(j, &k, &kn)) > 0) {
		if (JS_KEY(k, kn, "metadata")) {
			dec_meta(j, &l->meta, flags);
		} else if (JS_KEY(k, kn, "spec")) {
			if (js_obj_begin(j) <= 0)
				continue;
			while ((r = js_obj_next(j, &k, &kn)) > 0) {
				if (JS_KEY(k, kn, "holderIdentity"))
					js_str(j, (char **)&l->holder_identity);
				else if (JS_KEY(k, kn, "leaseDurationSeconds"))
					l->has_lease_duration_seconds =
					        js_int32(j, &l->lease_duration_seconds) > 0;
				else if (JS_KEY(k, kn, "acquireTime"))
					dec_time(j, &l->acquire_time);
				else if (JS_KEY(k, kn, "renewTime"))
					dec_time(j, &l->renew_time);
				else if (JS_KEY(k, kn, "leaseTransitions"))
					l->has_lease_transitions =
					        js_int32(j, &l->lease_transitions) > 0;
				else if (JS_KEY(k, kn, "strategy"))
					js_str(j, (char **)&l->strategy);
				else if (JS_KEY(k, kn, "preferredHolder"))
					js_str(j, (char **)&l->preferred_holder);
				else
					js_skip(j);
			}
		} else
			js_skip(j);
	}
	return r < 0 ? r : 1;
}

static int partial_body(struct js *j, struct kube_partial *p, unsigned flags)
{
	const char *k;
	size_t kn;
	int r = js_obj_begin(j);
	if (r <= 0)
		return r == 0 ? js_fail(j, -EPROTO) : r;
	while ((r = js_obj_next(j, &k, &kn)) > 0) {
		if (JS_KEY(k, kn, "metadata"))
			dec_meta(j, &p->meta, flags);
		else if (JS_KEY(k, kn, "apiVersion"))
			js_str(j, (char **)&p->api_version);
		else if (JS_KEY(k, kn, "kind"))
			js_str(j, (char **)&p->kind);
		else
			js_skip(j);
	}
	return r < 0 ? r : 1;
}

static int object_body(struct js *j, struct kube_object *o, unsigned flags)
{
	/* kube_object starts with kube_partial's members, in the same order */
	_Static_assert(offsetof(struct kube_object, kind) == offsetof(struct kube_partial, kind),
	               "kube_object extends kube_partial");
	js_peek(j); /* the object's bytes start at its '{' */
	const unsigned char *start = j->p;
	int r = partial_body(j, (struct kube_partial *)o, flags | KUBE_DECODE_ALL_ANNOTATIONS);
	if (r <= 0 || j->err)
		return r;
	o->raw_len = (size_t)(j->p - start);
	if (!(o->raw = js_strndup(j->arena, (const char *)start, o->raw_len)))
		return js_fail(j, -ENOMEM);
	return 1;
}

static int scale_body(struct js *j, struct kube_scale *s, unsigned flags)
{
	const char *k;
	size_t kn;
	int r = js_obj_begin(j);
	if (r <= 0)
		return r == 0 ? js_fail(j, -EPROTO) : r;
	while ((r = js_obj_next(j, &k, &kn)) > 0) {
		bool spec = JS_KEY(k, kn, "spec");
		if (JS_KEY(k, kn, "metadata")) {
			dec_meta(j, &s->meta, flags);
		} else if (spec || JS_KEY(k, kn, "status")) {
			if (js_obj_begin(j) <= 0)
				continue;
			while ((r = js_obj_next(j, &k, &kn)) > 0) {
				if (JS_KEY(k, kn, "replicas"))
					js_int32(j, spec ? &s->spec_replicas : &s->status_replicas);
				else if (!spec && JS_KEY(k, kn, "selector"))
					js_str(j, (char **)&s->status_selector);
				else
					js_skip(j);
			}
		} else
			js_skip(j);
	}
	return r < 0 ? r : 1;
}

static int status_body(struct js *j, struct kube_status *st, unsigned flags)
{
	const char *k;
	size_t kn;
	(void)flags;
	int r = js_obj_begin(j);
	if (r <= 0)
		return r == 0 ? js_fail(j, -EPROTO) : r;
	while ((r = js_obj_next(j, &k, &kn)) > 0) {
		if (JS_KEY(k, kn, "status"))
			js_str(j, (char **)&st->status);
		else if (JS_KEY(k, kn, "message"))
			js_str(j, (char **)&st->message);
		else if (JS_KEY(k, kn, "reason"))
			js_str(j, (char **)&st->reason);
		else if (JS_KEY(k, kn, "code"))
			js_int32(j, &st->code);
		else if (JS_KEY(k, kn, "details")) {
			if (js_obj_begin(j) <= 0)
				continue;
			while ((r = js_obj_next(j, &k, &kn)) > 0) {
				if (JS_KEY(k, kn, "name"))
					js_str(j, (char **)&st->details_name);
				else if (JS_KEY(k, kn, "group"))
					js_str(j, (char **)&st->details_group);
				else if (JS_KEY(k, kn, "kind"))
					js_str(j, (char **)&st->details_kind);
				else if (JS_KEY(k, kn, "uid"))
					js_str(j, (char **)&st->details_uid);
				else if (JS_KEY(k, kn, "retryAfterSeconds"))
					js_int32(j, &st->retry_after_seconds);
				else if (JS_KEY(k, kn, "causes")) {
					uint32_t cap = 0;
					st->causes = NULL;
					st->n_causes = 0;
					if (js_arr_begin(j) <= 0)
						continue;
					while ((r = js_arr_next(j)) > 0) {
						struct kube_status_cause *c =
						        grow(j, (void **)&st->causes, &st->n_causes,
						             &cap, sizeof(*c), 2);
						if (!c)
							return j->err;
						if (js_obj_begin(j) <= 0)
							continue;
						while ((r = js_obj_next(j, &k, &kn)) > 0) {
							if (JS_KEY(k, kn, "reason"))
								js_str(j, (char **)&c->type);
							else if (JS_KEY(k, kn, "message"))
								js_str(j, (char **)&c->message);
							else if (JS_KEY(k, kn, "field"))
								js_str(j, (char **)&c->field);
							else
								js_skip(j);
						}
						if (r < 0)
							return r;
					}
				} else
					js_skip(j);
			}
		} else
			js_skip(j);
	}
	return r < 0 ? r : 1;
}

/* ---- dispatch ------------------------------------------------------------------------------- */

typedef int (*body_fn)(struct js *j, void *obj, unsigned flags);

/* type-correct entry points for the table (no calls through a cast function pointer) */
#define BODY(name, T)                                                                              \
	static int name##_v(struct js *j, void *o, unsigned flags)                                 \
	{                                                                                          \
		return name(j, (T *)o, flags);                                                     \
	}
BODY(pod_body, struct kube_pod)
BODY(rs_body, struct kube_replicaset)
BODY(rc_body, struct kube_replicaset)
BODY(lease_body, struct kube_lease)
BODY(partial_body, struct kube_partial)
BODY(object_body, struct kube_object)
BODY(scale_body, struct kube_scale)
BODY(status_body, struct kube_status)

static const struct {
	size_t size, extra;
	body_fn body;
} kinds[] = {
        [KUBE_KIND_POD] = {sizeof(struct kube_pod), POD_ARENA, pod_body_v},
        [KUBE_KIND_REPLICASET] = {sizeof(struct kube_replicaset), RS_ARENA, rs_body_v},
        [KUBE_KIND_LEASE] = {sizeof(struct kube_lease), SMALL_ARENA, lease_body_v},
        [KUBE_KIND_PARTIAL] = {sizeof(struct kube_partial), SMALL_ARENA, partial_body_v},
        [KUBE_KIND_SCALE] = {sizeof(struct kube_scale), SMALL_ARENA, scale_body_v},
        [KUBE_KIND_STATUS] = {sizeof(struct kube_status), SMALL_ARENA, status_body_v},
        [KUBE_KIND_OBJECT] = {sizeof(struct kube_object), SMALL_ARENA, object_body_v},
        [KUBE_KIND_REPLICATIONCONTROLLER] = {sizeof(struct kube_replicaset), RS_ARENA, rc_body_v},
};

/* Decodes one object of `kind` at the scanner position, into a fresh arena (scratch == NULL) or
 * into the emptied scratch arena. */
static int dec_object(struct js *j, enum kube_kind kind, unsigned flags, struct js_arena *scratch,
                      void **ret)
{
	struct js_arena own;
	struct js_arena *saved = j->arena;
	void *o;
	int r;
	if ((unsigned)kind >= sizeof(kinds) / sizeof(kinds[0]) || !kinds[kind].body)
		return js_fail(j, -EINVAL);
	if (scratch) {
		js_arena_reset(scratch);
		j->arena = scratch;
		if (!(o = js_alloc(scratch, kinds[kind].size)))
			return js_fail(j, -ENOMEM);
	} else if (!(o = obj_new(j, &own, kinds[kind].size, kinds[kind].extra)))
		return j->err;
	r = kinds[kind].body(j, o, flags);
	j->arena = saved;
	if (j->err || r < 0) {
		if (!scratch)
			js_arena_free(&own);
		return j->err ? j->err : r;
	}
	*ret = o;
	return 0;
}

static int check_input(const void *json, size_t len)
{
	if (!json && len)
		return -EINVAL;
	if (len > KUBE_DECODE_MAX_BYTES)
		return -E2BIG;
	return 0;
}

static int expect_end(struct js *j)
{
	if (js_peek(j) != 0 || j->p != j->end)
		return js_fail(j, -EBADMSG);
	return j->err;
}

int kube_decode(enum kube_kind kind, const void *json, size_t len, unsigned flags, void **ret_obj)
{
	struct js j;
	void *o;
	int r;
	if (!ret_obj)
		return -EINVAL;
	if ((r = check_input(json, len)) < 0)
		return r;
	js_init(&j, json, len, NULL);
	if ((r = dec_object(&j, kind, flags, NULL, &o)) < 0)
		return r;
	if ((r = expect_end(&j)) < 0) {
		kube_object_free(o);
		return r;
	}
	*ret_obj = o;
	return 0;
}

#define TYPED(fn, K, T)                                                                            \
	int fn(const void *json, size_t len, unsigned flags, T **ret)                              \
	{                                                                                          \
		return kube_decode(K, json, len, flags, (void **)ret);                             \
	}
TYPED(kube_decode_pod, KUBE_KIND_POD, struct kube_pod)
TYPED(kube_decode_replicaset, KUBE_KIND_REPLICASET, struct kube_replicaset)
TYPED(kube_decode_lease, KUBE_KIND_LEASE, struct kube_lease)
TYPED(kube_decode_partial, KUBE_KIND_PARTIAL, struct kube_partial)
TYPED(kube_decode_scale, KUBE_KIND_SCALE, struct kube_scale)
TYPED(kube_decode_status, KUBE_KIND_STATUS, struct kube_status)

void kube_object_free(void *obj)
{
	js_arena_free_obj(obj);
}

size_t kube_object_bytes(const void *obj)
{
	if (!obj)
		return 0;
	struct js_arena a = {
	        .head = (struct js_chunk *)((unsigned char *)obj - offsetof(struct js_chunk, data)),
	};
	return js_arena_bytes(&a);
}

static void copy_bounded(char *dst, size_t cap, const char *s, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, s, n);
	dst[n] = 0;
}

static int decode_list(struct js_arena *scratch, enum kube_kind kind, const void *json, size_t len,
                       unsigned flags, kube_item_fn fn, void *userdata,
                       struct kube_list_meta *ret_meta)
{
	struct js j;
	struct kube_list_meta lm = {.remaining_item_count = -1};
	const char *k, *s;
	size_t kn, sn;
	bool esc;
	int r, count = 0;
	if (!fn)
		return -EINVAL;
	if ((r = check_input(json, len)) < 0)
		return r;
	js_init(&j, json, len, NULL);
	r = js_obj_begin(&j);
	if (r <= 0)
		return r == 0 ? -EPROTO : r;
	while ((r = js_obj_next(&j, &k, &kn)) > 0) {
		if (JS_KEY(k, kn, "metadata")) {
			if (js_obj_begin(&j) <= 0)
				continue;
			while ((r = js_obj_next(&j, &k, &kn)) > 0) {
				bool rv = JS_KEY(k, kn, "resourceVersion");
				if (rv || JS_KEY(k, kn, "continue")) {
					if (js_str_span(&j, &s, &sn, &esc) <= 0)
						continue;
					if (esc || sn >= (rv ? sizeof(lm.resource_version)
					                     : sizeof(lm.cont))) {
						js_fail(&j, -EPROTO);
						break;
					}
					if (rv)
						copy_bounded(lm.resource_version,
						             sizeof(lm.resource_version), s, sn);
					else
						copy_bounded(lm.cont, sizeof(lm.cont), s, sn);
				} else if (JS_KEY(k, kn, "remainingItemCount"))
					js_int64(&j, &lm.remaining_item_count);
				else
					js_skip(&j);
			}
		} else if (JS_KEY(k, kn, "items")) {
			if (js_arr_begin(&j) <= 0)
				continue;
			while ((r = js_arr_next(&j)) > 0) {
				void *o;
				if (dec_object(&j, kind, flags, scratch, &o) < 0)
					return j.err;
				count++;
				r = fn(o, userdata);
				if (r < 0)
					return r;
			}
		} else
			js_skip(&j);
	}
	if (r < 0 || (r = expect_end(&j)) < 0)
		return j.err ? j.err : r;
	if (ret_meta)
		*ret_meta = lm;
	return count;
}

int kube_decode_list(enum kube_kind kind, const void *json, size_t len, unsigned flags,
                     kube_item_fn fn, void *userdata, struct kube_list_meta *ret_meta)
{
	return decode_list(NULL, kind, json, len, flags, fn, userdata, ret_meta);
}

int kube_scratch_new(struct kube_scratch **ret)
{
	struct kube_scratch *s;
	if (!ret)
		return -EINVAL;
	if (!(s = calloc(1, sizeof(*s))))
		return -ENOMEM;
	if (js_arena_init(&s->arena, 65536) < 0) {
		free(s);
		return -ENOMEM;
	}
	*ret = s;
	return 0;
}

void kube_scratch_free(struct kube_scratch *s)
{
	if (!s)
		return;
	js_arena_free(&s->arena);
	free(s);
}

int kube_decode_scratch(struct kube_scratch *s, enum kube_kind kind, const void *json, size_t len,
                        unsigned flags, void **ret_obj)
{
	struct js j;
	void *o;
	int r;
	if (!s || !ret_obj)
		return -EINVAL;
	if ((r = check_input(json, len)) < 0)
		return r;
	js_init(&j, json, len, NULL);
	if ((r = dec_object(&j, kind, flags, &s->arena, &o)) < 0)
		return r;
	if ((r = expect_end(&j)) < 0)
		return r;
	*ret_obj = o;
	return 0;
}

int kube_decode_list_scratch(struct kube_scratch *s, enum kube_kind kind, const void *json,
                             size_t len, unsigned flags, kube_item_fn fn, void *userdata,
                             struct kube_list_meta *ret_meta)
{
	if (!s)
		return -EINVAL;
	return decode_list(&s->arena, kind, json, len, flags, fn, userdata, ret_meta);
}

static enum kube_watch_type watch_type_of(const char *s, size_t n)
{
	if (JS_KEY(s, n, "ADDED"))
		return KUBE_WATCH_ADDED;
	if (JS_KEY(s, n, "MODIFIED"))
		return KUBE_WATCH_MODIFIED;
	if (JS_KEY(s, n, "DELETED"))
		return KUBE_WATCH_DELETED;
	if (JS_KEY(s, n, "BOOKMARK"))
		return KUBE_WATCH_BOOKMARK;
	if (JS_KEY(s, n, "ERROR"))
		return KUBE_WATCH_ERROR;
	return 0;
}

int kube_decode_watch_event(enum kube_kind kind, const void *json, size_t len, unsigned flags,
                            enum kube_watch_type *ret_type, void **ret_obj)
{
	struct js j;
	const char *k, *s, *raw = NULL;
	size_t kn, sn, rawn = 0;
	bool esc;
	enum kube_watch_type type = 0;
	void *o = NULL;
	int r;
	if (!ret_type || !ret_obj)
		return -EINVAL;
	if ((r = check_input(json, len)) < 0)
		return r;
	js_init(&j, json, len, NULL);
	r = js_obj_begin(&j);
	if (r <= 0)
		return r == 0 ? -EPROTO : r;
	while ((r = js_obj_next(&j, &k, &kn)) > 0) {
		if (JS_KEY(k, kn, "type")) {
			if (js_str_span(&j, &s, &sn, &esc) > 0 && !esc)
				type = watch_type_of(s, sn);
		} else if (JS_KEY(k, kn, "object")) {
			if (type) { /* the usual order: decode in place */
				kube_object_free(o);
				o = NULL;
				raw = NULL;
				if (dec_object(&j,
				               type == KUBE_WATCH_ERROR ? KUBE_KIND_STATUS : kind,
				               flags, NULL, &o) < 0)
					break;
			} else
				js_raw(&j, &raw, &rawn);
		} else
			js_skip(&j);
	}
	if (r >= 0)
		expect_end(&j);
	if (!j.err && !type)
		js_fail(&j, -EPROTO);
	if (!j.err && raw) {
		kube_object_free(o);
		o = NULL;
		r = kube_decode(type == KUBE_WATCH_ERROR ? KUBE_KIND_STATUS : kind, raw, rawn,
		                flags, &o);
		if (r < 0)
			js_fail(&j, r);
	}
	if (!j.err && !o)
		js_fail(&j, -EPROTO);
	if (j.err) {
		kube_object_free(o);
		return j.err;
	}
	*ret_type = type;
	*ret_obj = o;
	return 0;
}

/* ---- helpers -------------------------------------------------------------------------------- */

const char *kube_pod_phase_name(enum kube_pod_phase p)
{
	switch (p) {
	case KUBE_POD_PENDING:
		return "Pending";
	case KUBE_POD_RUNNING:
		return "Running";
	case KUBE_POD_SUCCEEDED:
		return "Succeeded";
	case KUBE_POD_FAILED:
		return "Failed";
	case KUBE_POD_UNKNOWN:
		return "Unknown";
	default:
		return NULL;
	}
}

const char *kube_labels_get(const struct kube_kv *kv, uint32_t n, const char *key)
{
	for (uint32_t i = n; i-- > 0;) /* a duplicate JSON key: the last one wins, as in Go */
		if (!strcmp(kv[i].key, key))
			return kv[i].value;
	return NULL;
}

const struct kube_owner_ref *kube_controller_of(const struct kube_object_meta *m)
{
	for (uint32_t i = 0; i < m->n_owner_refs; i++)
		if (m->owner_refs[i].controller == 1)
			return &m->owner_refs[i];
	return NULL;
}
