/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/selinuxwarning/sw.c: labels, the volume cache and a pod's volumes for the
 * selinux-warning-controller (sw.h has the design note).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workers/selinuxwarning/sw.h"

/* ---- labels -------------------------------------------------------------------------------- */
static const char *jstr(const cJSON *o, const char *k)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
	return s ? s : "";
}

static const cJSON *jobj(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsObject(v) ? v : NULL;
}

static const cJSON *jarr(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsArray(v) ? v : NULL;
}

char *sw_options_label(const cJSON *opts)
{
	const char *u = jstr(opts, "user"), *r = jstr(opts, "role"), *t = jstr(opts, "type"),
	           *l = jstr(opts, "level");
	size_t n = strlen(u) + strlen(r) + strlen(t) + strlen(l) + 4;
	char *s;

	if (!opts || (!*u && !*r && !*t && !*l))
		return strdup("");
	if (!(s = malloc(n)))
		return NULL;
	snprintf(s, n, "%s:%s:%s:%s", u, r, t, l);
	return s;
}

void sw_label_split(const char *s, const char *p[4], size_t len[4])
{
	for (int i = 0; i < 4; i++) {
		p[i] = "";
		len[i] = 0;
	}
	for (int i = 0; s && *s && i < 4; i++) {
		const char *c = i < 3 ? strchr(s, ':') : NULL;
		p[i] = s;
		len[i] = c ? (size_t)(c - s) : strlen(s);
		if (!c)
			break;
		s = c + 1;
		if (!*s && i < 3) { /* "a:" : the next part is present and empty */
			p[i + 1] = s;
			break;
		}
	}
}

bool sw_labels_conflict(const char *a, const char *b)
{
	const char *pa[4], *pb[4];
	size_t la[4], lb[4];

	sw_label_split(a, pa, la);
	sw_label_split(b, pb, lb);
	for (int i = 0; i < 4; i++) {
		if (la[i] == lb[i] && !memcmp(pa[i], pb[i], la[i]))
			continue;
		if (i == 3)
			return true; /* levels must match exactly, one empty or not */
		if (!la[i] || !lb[i])
			continue; /* an empty user/role/type matches anything (the default) */
		return true;
	}
	return false;
}

/* ---- conflicts ----------------------------------------------------------------------------- */
char *sw_conflict_message(const struct sw_conflict *c)
{
	char *m = NULL;
	int r;

	if (!strcmp(c->ns, c->other_ns))
		r = asprintf(
		        &m,
		        "%s \"%s\" conflicts with pod %s that uses the same volume as this pod "
		        "with %s \"%s\". If both pods land on the same node, only one of them "
		        "may access the volume.",
		        c->property, c->value, c->other_name, c->property, c->other_value);
	else /* upstream's fmt.Sprint puts no space between the property and its value here */
		r = asprintf(
		        &m,
		        "%s\"%s\" conflicts with another pod that uses the same volume as this "
		        "pod with a different %s. If both pods land on the same node, only one "
		        "of them may access the volume.",
		        c->property, c->value, c->property);
	return r < 0 ? NULL : m;
}

static void conflict_clear(struct sw_conflict *c)
{
	free(c->ns);
	free(c->name);
	free(c->value);
	free(c->other_ns);
	free(c->other_name);
	free(c->other_value);
	memset(c, 0, sizeof(*c));
}

void sw_conflicts_free(struct sw_conflict *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		conflict_clear(&v[i]);
	free(v);
}

static int conflict_set(struct sw_conflict *c, const char *property, const char *reason,
                        const char *ns, const char *name, const char *value, const char *ons,
                        const char *oname, const char *ovalue)
{
	*c = (struct sw_conflict){.property = property,
	                          .reason = reason,
	                          .ns = strdup(ns),
	                          .name = strdup(name),
	                          .value = strdup(value),
	                          .other_ns = strdup(ons),
	                          .other_name = strdup(oname),
	                          .other_value = strdup(ovalue)};
	if (!c->ns || !c->name || !c->value || !c->other_ns || !c->other_name || !c->other_value) {
		conflict_clear(c);
		return -ENOMEM;
	}
	return 0;
}

static int conflict_copy(struct sw_conflict *d, const struct sw_conflict *s)
{
	return conflict_set(d, s->property, s->reason, s->ns, s->name, s->value, s->other_ns,
	                    s->other_name, s->other_value);
}

static bool conflict_names(const struct sw_conflict *c, const char *ns, const char *name)
{
	return (!strcmp(c->ns, ns) && !strcmp(c->name, name)) ||
	       (!strcmp(c->other_ns, ns) && !strcmp(c->other_name, name));
}

/* ---- the cache ------------------------------------------------------------------------------ */
struct pod_use {
	char *ns, *name, *label, *policy;
};

struct vol {
	struct vol *next; /* hash chain */
	char *name, *csi_driver;
	struct pod_use *pods;
	size_t n_pods, cap_pods;
	struct sw_conflict *conf;
	size_t n_conf;
};

struct podref {
	struct podref *next;
	char *ns, *name;
	char **vols; /* unique volume names */
	size_t n, cap;
};

struct sw_cache {
	struct vol **vb;
	size_t nvb, nvol;
	struct podref **pb;
	size_t npb, npod;
};

static uint64_t hash2(const char *a, const char *b)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (const char *p = a; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	h = (h ^ 0xff) * 1099511628211ull; /* a byte no name has: "a/" "b" != "a" "/b" */
	for (const char *p = b; p && *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return h;
}

int sw_cache_new(struct sw_cache **ret)
{
	struct sw_cache *c = calloc(1, sizeof(*c));

	if (!c || !(c->vb = calloc(64, sizeof(*c->vb))) || !(c->pb = calloc(64, sizeof(*c->pb)))) {
		if (c)
			free(c->vb);
		free(c);
		return -ENOMEM;
	}
	c->nvb = c->npb = 64;
	*ret = c;
	return 0;
}

static void vol_free(struct vol *v)
{
	for (size_t i = 0; i < v->n_pods; i++) {
		free(v->pods[i].ns);
		free(v->pods[i].name);
		free(v->pods[i].label);
		free(v->pods[i].policy);
	}
	free(v->pods);
	sw_conflicts_free(v->conf, v->n_conf);
	free(v->name);
	free(v->csi_driver);
	free(v);
}

static void podref_free(struct podref *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->vols[i]);
	free(p->vols);
	free(p->ns);
	free(p->name);
	free(p);
}

void sw_cache_free(struct sw_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nvb; i++)
		for (struct vol *v = c->vb[i], *n; v; v = n) {
			n = v->next;
			vol_free(v);
		}
	for (size_t i = 0; i < c->npb; i++)
		for (struct podref *p = c->pb[i], *n; p; p = n) {
			n = p->next;
			podref_free(p);
		}
	free(c->vb);
	free(c->pb);
	free(c);
}

size_t sw_cache_n_volumes(const struct sw_cache *c)
{
	return c->nvol;
}

static struct vol **vol_slot(const struct sw_cache *c, const char *name)
{
	struct vol **s = &c->vb[hash2(name, NULL) % c->nvb];
	while (*s && strcmp((*s)->name, name))
		s = &(*s)->next;
	return s;
}

static struct podref **pod_slot(const struct sw_cache *c, const char *ns, const char *name)
{
	struct podref **s = &c->pb[hash2(ns, name) % c->npb];
	while (*s && (strcmp((*s)->ns, ns) || strcmp((*s)->name, name)))
		s = &(*s)->next;
	return s;
}

/* doubles a table when it holds twice as many entries as buckets; failure keeps the old one */
static void grow_vols(struct sw_cache *c)
{
	size_t n = c->nvb * 2;
	struct vol **b;

	if (c->nvol < c->nvb * 2 || !(b = calloc(n, sizeof(*b))))
		return;
	for (size_t i = 0; i < c->nvb; i++)
		for (struct vol *v = c->vb[i], *nx; v; v = nx) {
			size_t h = hash2(v->name, NULL) % n;
			nx = v->next;
			v->next = b[h];
			b[h] = v;
		}
	free(c->vb);
	c->vb = b;
	c->nvb = n;
}

static void grow_pods(struct sw_cache *c)
{
	size_t n = c->npb * 2;
	struct podref **b;

	if (c->npod < c->npb * 2 || !(b = calloc(n, sizeof(*b))))
		return;
	for (size_t i = 0; i < c->npb; i++)
		for (struct podref *p = c->pb[i], *nx; p; p = nx) {
			size_t h = hash2(p->ns, p->name) % n;
			nx = p->next;
			p->next = b[h];
			b[h] = p;
		}
	free(c->pb);
	c->pb = b;
	c->npb = n;
}

/* registerPodVolume; 0 or -ENOMEM */
static int register_pod_volume(struct sw_cache *c, const char *ns, const char *name,
                               const char *volume)
{
	struct podref **s = pod_slot(c, ns, name), *p = *s;

	if (!p) {
		if (!(p = calloc(1, sizeof(*p))) || !(p->ns = strdup(ns)) ||
		    !(p->name = strdup(name))) {
			if (p)
				podref_free(p);
			return -ENOMEM;
		}
		*s = p;
		c->npod++;
		grow_pods(c);
	}
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->vols[i], volume))
			return 0;
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 4;
		char **v = realloc(p->vols, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		p->vols = v;
		p->cap = cap;
	}
	if (!(p->vols[p->n] = strdup(volume)))
		return -ENOMEM;
	p->n++;
	return 0;
}

/* keeps the conflicts of v that do not name ns/name (frees the others) */
static void drop_conflicts_of(struct vol *v, const char *ns, const char *name)
{
	size_t k = 0;

	for (size_t i = 0; i < v->n_conf; i++) {
		if (conflict_names(&v->conf[i], ns, name))
			conflict_clear(&v->conf[i]);
		else
			v->conf[k++] = v->conf[i];
	}
	v->n_conf = k;
	if (!k) {
		free(v->conf);
		v->conf = NULL;
	}
}

static int push_conflict(struct sw_conflict **v, size_t *n, const char *property,
                         const char *reason, const char *ns, const char *name, const char *value,
                         const char *ons, const char *oname, const char *ovalue)
{
	struct sw_conflict *nv = realloc(*v, (*n + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	if (conflict_set(&nv[*n], property, reason, ns, name, value, ons, oname, ovalue) < 0)
		return -ENOMEM;
	(*n)++;
	return 0;
}

int sw_cache_add_volume(struct sw_cache *c, const char *volume, const char *ns, const char *name,
                        const char *label, const char *policy, const char *csi_driver,
                        struct sw_conflict **ret, size_t *ret_n)
{
	struct vol **s = vol_slot(c, volume), *v = *s;
	struct sw_conflict *found = NULL, *all;
	struct pod_use *u = NULL, nu = {0};
	size_t nf = 0;
	int r;

	*ret = NULL;
	*ret_n = 0;
	if (!v) {
		if (!(v = calloc(1, sizeof(*v))) || !(v->name = strdup(volume)) ||
		    !(v->csi_driver = strdup(csi_driver ? csi_driver : "")) ||
		    !(v->pods = calloc(1, sizeof(*v->pods))) || !(v->pods[0].ns = strdup(ns)) ||
		    !(v->pods[0].name = strdup(name)) || !(v->pods[0].label = strdup(label)) ||
		    !(v->pods[0].policy = strdup(policy))) {
			if (v) {
				v->n_pods = v->pods ? 1 : 0;
				vol_free(v);
			}
			return -ENOMEM;
		}
		v->n_pods = v->cap_pods = 1;
		if (register_pod_volume(c, ns, name, volume) < 0) {
			vol_free(v);
			return -ENOMEM;
		}
		*s = v;
		c->nvol++;
		grow_vols(c);
		return 0;
	}
	for (size_t i = 0; i < v->n_pods; i++)
		if (!strcmp(v->pods[i].ns, ns) && !strcmp(v->pods[i].name, name))
			u = &v->pods[i];
	if (u && !strcmp(u->label, label) && !strcmp(u->policy, policy))
		return 0; /* already known with the same label and policy */

	/* the conflicts against every pod of the volume (itself included: never one) */
	for (size_t i = 0; i < v->n_pods; i++) {
		const struct pod_use *o = &v->pods[i];
		bool self = o == u;
		const char *olabel = self ? label : o->label, *opolicy = self ? policy : o->policy;

		if (strcmp(opolicy, policy) &&
		    ((r = push_conflict(&found, &nf, "SELinuxChangePolicy",
		                        "SELinuxChangePolicyConflict", ns, name, policy, o->ns,
		                        o->name, opolicy)) < 0 ||
		     (r = push_conflict(&found, &nf, "SELinuxChangePolicy",
		                        "SELinuxChangePolicyConflict", o->ns, o->name, opolicy, ns,
		                        name, policy)) < 0))
			goto fail;
		if (sw_labels_conflict(olabel, label) &&
		    ((r = push_conflict(&found, &nf, "SELinuxLabel", "SELinuxLabelConflict", ns,
		                        name, label, o->ns, o->name, olabel)) < 0 ||
		     (r = push_conflict(&found, &nf, "SELinuxLabel", "SELinuxLabelConflict", o->ns,
		                        o->name, olabel, ns, name, label)) < 0))
			goto fail;
	}

	/* everything that can fail before the cache changes */
	r = -ENOMEM;
	if (!(nu.label = strdup(label)) || !(nu.policy = strdup(policy)))
		goto fail;
	if (!u) {
		if (v->n_pods == v->cap_pods) {
			struct pod_use *np = realloc(v->pods, v->cap_pods * 2 * sizeof(*np));
			if (!np)
				goto fail;
			v->pods = np;
			v->cap_pods *= 2;
		}
		if (!(nu.ns = strdup(ns)) || !(nu.name = strdup(name)))
			goto fail;
	}
	if (!(all = realloc(v->conf, (v->n_conf + nf + 1) * sizeof(*all))))
		goto fail;
	v->conf = all;
	if (register_pod_volume(c, ns, name, volume) < 0)
		goto fail;
	{
		/* copies for the volume's record; the originals go to the caller */
		size_t done = 0;
		for (; done < nf; done++)
			if (conflict_copy(&all[v->n_conf + done], &found[done]) < 0)
				break;
		if (done < nf) {
			for (size_t i = 0; i < done; i++)
				conflict_clear(&all[v->n_conf + i]);
			goto fail;
		}
	}
	if (u) {
		free(u->label);
		free(u->policy);
		u->label = nu.label;
		u->policy = nu.policy;
	} else {
		v->pods[v->n_pods++] = nu;
	}
	{
		/* the volume's earlier conflicts naming this pod go; the new ones are appended */
		size_t old = v->n_conf, k = 0;
		for (size_t i = 0; i < old; i++) {
			if (conflict_names(&v->conf[i], ns, name))
				conflict_clear(&v->conf[i]);
			else
				v->conf[k++] = v->conf[i];
		}
		memmove(&v->conf[k], &v->conf[old], nf * sizeof(*v->conf));
		v->n_conf = k + nf;
		if (!v->n_conf) {
			free(v->conf);
			v->conf = NULL;
		}
	}
	*ret = found;
	*ret_n = nf;
	return 0;
fail:
	free(nu.ns);
	free(nu.name);
	free(nu.label);
	free(nu.policy);
	sw_conflicts_free(found, nf);
	return r;
}

void sw_cache_delete_pod(struct sw_cache *c, const char *ns, const char *name)
{
	struct podref **s = pod_slot(c, ns, name), *p = *s;

	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		struct vol **vs = vol_slot(c, p->vols[i]), *v = *vs;
		size_t k = 0;

		if (!v)
			continue;
		drop_conflicts_of(v, ns, name);
		for (size_t j = 0; j < v->n_pods; j++) {
			struct pod_use *u = &v->pods[j];
			if (!strcmp(u->ns, ns) && !strcmp(u->name, name)) {
				free(u->ns);
				free(u->name);
				free(u->label);
				free(u->policy);
			} else {
				v->pods[k++] = *u;
			}
		}
		v->n_pods = k;
		if (!k) {
			*vs = v->next;
			vol_free(v);
			c->nvol--;
		}
	}
	*s = p->next;
	podref_free(p);
	c->npod--;
}

int sw_cache_pods_for_driver(const struct sw_cache *c, const char *driver,
                             int (*fn)(const char *ns, const char *name, void *ud), void *ud)
{
	for (size_t i = 0; i < c->nvb; i++)
		for (const struct vol *v = c->vb[i]; v; v = v->next) {
			if (strcmp(v->csi_driver, driver))
				continue;
			for (size_t j = 0; j < v->n_pods; j++) {
				int r = fn(v->pods[j].ns, v->pods[j].name, ud);
				if (r)
					return r;
			}
		}
	return 0;
}

int sw_cache_pod_info(const struct sw_cache *c, const char *volume, const char *ns,
                      const char *name, const char **ret_label, const char **ret_policy)
{
	const struct vol *v = *vol_slot(c, volume);

	for (size_t i = 0; v && i < v->n_pods; i++)
		if (!strcmp(v->pods[i].ns, ns) && !strcmp(v->pods[i].name, name)) {
			*ret_label = v->pods[i].label;
			*ret_policy = v->pods[i].policy;
			return 0;
		}
	return -ENOENT;
}

bool sw_cache_consistent(const struct sw_cache *c)
{
	size_t uses = 0, refs = 0;

	/* every (pod, volume) of the reverse index is a pod of that volume ... */
	for (size_t i = 0; i < c->npb; i++)
		for (const struct podref *p = c->pb[i]; p; p = p->next)
			for (size_t j = 0; j < p->n; j++) {
				const char *l, *pol;
				if (sw_cache_pod_info(c, p->vols[j], p->ns, p->name, &l, &pol) < 0)
					return false;
				refs++;
			}
	/* ... and there are as many pods of volumes as reverse entries (no duplicates) */
	for (size_t i = 0; i < c->nvb; i++)
		for (const struct vol *v = c->vb[i]; v; v = v->next)
			uses += v->n_pods;
	return uses == refs;
}

size_t sw_cache_n_pods(const struct sw_cache *c)
{
	return c->npod;
}

static int conflict_cmp(const void *a, const void *b)
{
	const struct sw_conflict *x = *(const struct sw_conflict *const *)a,
	                         *y = *(const struct sw_conflict *const *)b;
	int r;

	if ((r = strcmp(x->property, y->property)) || (r = strcmp(x->ns, y->ns)) ||
	    (r = strcmp(x->name, y->name)) || (r = strcmp(x->value, y->value)) ||
	    (r = strcmp(x->other_ns, y->other_ns)) || (r = strcmp(x->other_name, y->other_name)) ||
	    (r = strcmp(x->other_value, y->other_value)))
		return r;
	return strcmp(x->reason, y->reason);
}

int sw_cache_conflicts(const struct sw_cache *c, int (*fn)(const struct sw_conflict *, void *ud),
                       void *ud)
{
	const struct sw_conflict **v;
	size_t n = 0, k = 0;
	int r = 0;

	for (size_t i = 0; i < c->nvb; i++)
		for (const struct vol *vv = c->vb[i]; vv; vv = vv->next)
			n += vv->n_conf;
	if (!n)
		return 0;
	if (!(v = malloc(n * sizeof(*v))))
		return -ENOMEM;
	for (size_t i = 0; i < c->nvb; i++)
		for (const struct vol *vv = c->vb[i]; vv; vv = vv->next)
			for (size_t j = 0; j < vv->n_conf; j++)
				v[k++] = &vv->conf[j];
	qsort(v, n, sizeof(*v), conflict_cmp);
	for (size_t i = 0; i < n && !r; i++)
		if (!i || conflict_cmp(&v[i - 1], &v[i]))
			r = fn(v[i], ud);
	free(v);
	return r;
}

/* ---- a pod's volumes ----------------------------------------------------------------------- */
/* a volume.Spec: a PV (from a claim) or the pod's inline volume */
struct spec {
	const cJSON *pv, *vol;
	const char *name;  /* spec.Name(): the PV's or the pod volume's name */
	const char *vname; /* the pod volume's name */
	char *err;         /* CreateVolumeSpec failed (moved to the result) */
	bool failed;
};

static const cJSON *spec_src(const struct spec *s, const char *field)
{
	return s->pv ? jobj(jobj(s->pv, "spec"), field) : jobj(s->vol, field);
}

/* kcm's ProbePersistentVolumePlugins; the flex volume prober's directory is not read */
enum { PL_HOSTPATH, PL_NFS, PL_FC, PL_ISCSI, PL_CSI, PL_N };
static const struct {
	const char *name, *field;
} plugins[PL_N] = {
        [PL_HOSTPATH] = {"kubernetes.io/host-path", "hostPath"},
        [PL_NFS] = {"kubernetes.io/nfs", "nfs"},
        [PL_FC] = {"kubernetes.io/fc", "fc"},
        [PL_ISCSI] = {"kubernetes.io/iscsi", "iscsi"},
        [PL_CSI] = {"kubernetes.io/csi", "csi"},
};

/* FindPluginBySpec: the one plugin that can support it, -ENOENT none, -EEXIST several */
static int find_plugin(const struct spec *s)
{
	int found = -ENOENT;

	for (int i = 0; i < PL_N; i++)
		if (spec_src(s, plugins[i].field))
			found = found == -ENOENT ? i : -EEXIST;
	return found;
}

static char *str_list(const cJSON *a) /* Go's %v of a []string: "[a b]" */
{
	size_t n = 3;
	const cJSON *e;
	char *s;

	cJSON_ArrayForEach(e, a) n += strlen(cJSON_GetStringValue(e) ? e->valuestring : "") + 1;
	if (!(s = malloc(n)))
		return NULL;
	strcpy(s, "[");
	cJSON_ArrayForEach(e, a)
	{
		if (e != a->child)
			strcat(s, " ");
		strcat(s, cJSON_GetStringValue(e) ? e->valuestring : "");
	}
	strcat(s, "]");
	return s;
}

/* GetUniqueVolumeNameFromSpec: 0 with *ret malloc'd, -EINVAL with *ret_err, -ENOMEM */
static int unique_name(int pl, const struct spec *s, char **ret, char **ret_err)
{
	const cJSON *src = spec_src(s, plugins[pl].field);
	char *name = NULL, *list;
	int r = 0;

	*ret = NULL;
	switch (pl) {
	case PL_HOSTPATH:
		name = strdup(jstr(src, "path"));
		break;
	case PL_NFS:
		r = asprintf(&name, "%s/%s", jstr(src, "server"), jstr(src, "path"));
		break;
	case PL_FC: {
		const cJSON *wwns = jarr(src, "targetWWNs"), *wwids = jarr(src, "wwids"),
		            *lun = cJSON_GetObjectItemCaseSensitive(src, "lun");
		if (cJSON_GetArraySize(wwns) && cJSON_IsNumber(lun)) {
			if (!(list = str_list(wwns)))
				return -ENOMEM;
			r = asprintf(&name, "%s:%" PRId64, list, (int64_t)lun->valuedouble);
			free(list);
		} else if (cJSON_GetArraySize(wwids)) {
			name = str_list(wwids);
		} else {
			name = strdup("");
		}
		break;
	}
	case PL_ISCSI: {
		const cJSON *lun = cJSON_GetObjectItemCaseSensitive(src, "lun");
		r = asprintf(&name, "%s:%s:%" PRId64, jstr(src, "targetPortal"), jstr(src, "iqn"),
		             cJSON_IsNumber(lun) ? (int64_t)lun->valuedouble : 0);
		break;
	}
	case PL_CSI:
		if (!s->pv) {
			r = asprintf(
			        ret_err,
			        "failed to get unique volume name for volume \"%s\": failed to "
			        "GetVolumeName from volumePlugin for volumeSpec \"%s\" "
			        "err=kubernetes.io/csi: plugin.GetVolumeName failed to extract "
			        "volume "
			        "source from spec: unexpected api.CSIVolumeSource found in "
			        "volume.Spec",
			        s->name, s->name);
			return r < 0 ? -ENOMEM : -EINVAL;
		}
		r = asprintf(&name, "%s^%s", jstr(src, "driver"), jstr(src, "volumeHandle"));
		break;
	}
	if (r < 0 || !name)
		return -ENOMEM;
	if (!*name) {
		free(name);
		r = asprintf(ret_err,
		             "failed to get unique volume name for volume \"%s\": failed to "
		             "GetVolumeName from volumePlugin for volumeSpec \"%s\" err=<nil>",
		             s->name, s->name);
		return r < 0 ? -ENOMEM : -EINVAL;
	}
	r = asprintf(ret, "%s/%s", plugins[pl].name, name);
	free(name);
	return r < 0 ? -ENOMEM : 0;
}

/* createInTreeVolumeSpec: 0, or -EINVAL with s->err set (-ENOMEM) */
static int build_spec(const cJSON *pod, const cJSON *vol, const struct sw_lookup *lk,
                      struct spec *s)
{
	const cJSON *meta = jobj(pod, "metadata"), *pvcsrc = jobj(vol, "persistentVolumeClaim");
	const char *ns = jstr(meta, "namespace"), *claim = NULL;
	const cJSON *pvc, *pv, *ref;
	char *eph = NULL;
	int r;

	*s = (struct spec){.vol = vol, .name = jstr(vol, "name"), .vname = jstr(vol, "name")};
	if (pvcsrc)
		claim = jstr(pvcsrc, "claimName");
	if (jobj(vol, "ephemeral")) {
		if (asprintf(&eph, "%s-%s", jstr(meta, "name"), jstr(vol, "name")) < 0)
			return -ENOMEM;
		claim = eph;
	}
	if (!claim || !*claim) {
		free(eph);
		return 0; /* an inline volume */
	}
	pvc = lk->pvc(lk->ud, ns, claim);
	if (!pvc) {
		r = asprintf(&s->err,
		             "error processing PVC \"%s\"/\"%s\": failed to find PVC %s/%s in "
		             "PVCInformer cache: persistentvolumeclaim \"%s\" not found",
		             ns, claim, ns, claim, claim);
		goto out;
	}
	if (strcmp(jstr(jobj(pvc, "status"), "phase"), "Bound") ||
	    !*jstr(jobj(pvc, "spec"), "volumeName")) {
		r = asprintf(&s->err,
		             "error processing PVC \"%s\"/\"%s\": PVC %s/%s has non-bound phase "
		             "(\"%s\") or empty pvc.Spec.VolumeName (\"%s\")",
		             ns, claim, ns, claim, jstr(jobj(pvc, "status"), "phase"),
		             jstr(jobj(pvc, "spec"), "volumeName"));
		goto out;
	}
	if (eph) { /* ephemeral.VolumeIsForPod */
		const char *puid = jstr(meta, "uid");
		const cJSON *o;
		bool owned = false;
		cJSON_ArrayForEach(o, jarr(jobj(pvc, "metadata"), "ownerReferences"))
		{
			if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "controller")) &&
			    !strcmp(jstr(o, "uid"), puid))
				owned = true;
		}
		if (!owned) {
			r = asprintf(&s->err,
			             "PVC %s/%s was not created for pod %s/%s (pod is not owner)",
			             ns, claim, ns, jstr(meta, "name"));
			goto out;
		}
	}
	pv = lk->pv(lk->ud, jstr(jobj(pvc, "spec"), "volumeName"));
	ref = jobj(jobj(pv, "spec"), "claimRef");
	if (!pv)
		r = asprintf(&s->err,
		             "error processing PVC \"%s\"/\"%s\": failed to find PV \"%s\" in "
		             "PVInformer cache: persistentvolume \"%s\" not found",
		             ns, claim, jstr(jobj(pvc, "spec"), "volumeName"),
		             jstr(jobj(pvc, "spec"), "volumeName"));
	else if (!ref)
		r = asprintf(
		        &s->err,
		        "error processing PVC \"%s\"/\"%s\": found PV object \"%s\" but it has a "
		        "nil pv.Spec.ClaimRef indicating it is not yet bound to the claim",
		        ns, claim, jstr(jobj(pv, "metadata"), "name"));
	else if (strcmp(jstr(ref, "uid"), jstr(jobj(pvc, "metadata"), "uid")))
		r = asprintf(&s->err,
		             "error processing PVC \"%s\"/\"%s\": found PV object \"%s\" but its "
		             "pv.Spec.ClaimRef.UID (\"%s\") does not point to claim.UID (\"%s\")",
		             ns, claim, jstr(jobj(pv, "metadata"), "name"), jstr(ref, "uid"),
		             jstr(jobj(pvc, "metadata"), "uid"));
	else {
		s->pv = pv;
		s->vol = NULL;
		s->name = jstr(jobj(pv, "metadata"), "name");
		free(eph);
		return 0;
	}
out:
	free(eph);
	if (r < 0)
		return -ENOMEM;
	return -EINVAL;
}

struct mount {
	const char *name;
	char **labels; /* distinct labels of the containers that mount it with seLinuxOptions */
	size_t n;
};

static int mount_add(struct mount **m, size_t *n, const char *name, const char *label)
{
	struct mount *x = NULL;

	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*m)[i].name, name))
			x = &(*m)[i];
	if (!x) {
		struct mount *nm = realloc(*m, (*n + 1) * sizeof(*nm));
		if (!nm)
			return -ENOMEM;
		*m = nm;
		x = &nm[(*n)++];
		*x = (struct mount){.name = name};
	}
	if (!label)
		return 0;
	for (size_t i = 0; i < x->n; i++)
		if (!strcmp(x->labels[i], label))
			return 0;
	{
		char **nl = realloc(x->labels, (x->n + 1) * sizeof(*nl));
		if (!nl)
			return -ENOMEM;
		x->labels = nl;
		if (!(nl[x->n] = strdup(label)))
			return -ENOMEM;
		x->n++;
	}
	return 0;
}

static void mounts_free(struct mount *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < m[i].n; j++)
			free(m[i].labels[j]);
		free(m[i].labels);
	}
	free(m);
}

void sw_volumes_free(struct sw_volume *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		free(v[i].name);
		free(v[i].err);
		free(v[i].unique);
		free(v[i].label);
		free(v[i].policy);
		free(v[i].csi_driver);
	}
	free(v);
}

static struct sw_volume *vol_push(struct sw_volume **v, size_t *n, enum sw_vol_state st,
                                  const char *name)
{
	struct sw_volume *nv = realloc(*v, (*n + 1) * sizeof(*nv));

	if (!nv)
		return NULL;
	*v = nv;
	nv[*n] = (struct sw_volume){.state = st, .name = strdup(name)};
	if (!nv[*n].name)
		return NULL;
	return &nv[(*n)++];
}

int sw_pod_volumes(const cJSON *pod, const struct sw_lookup *lk, struct sw_volume **ret,
                   size_t *ret_n)
{
	static const char *const kinds[] = {"initContainers", "containers", "ephemeralContainers"};
	const cJSON *meta = jobj(pod, "metadata"), *spec = jobj(pod, "spec"),
	            *psc = jobj(spec, "securityContext"), *vol, *c;
	const char *pod_policy =
	        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(psc, "seLinuxChangePolicy"));
	struct spec *specs = NULL;
	struct mount *mounts = NULL;
	struct sw_volume *out = NULL, *o;
	size_t nspecs = 0, nmounts = 0, nout = 0;
	int r = -ENOMEM;

	*ret = NULL;
	*ret_n = 0;
	if (!*jstr(meta, "namespace") || !*jstr(meta, "name"))
		return -EINVAL;
	if (cJSON_GetArraySize(jarr(spec, "volumes")) &&
	    !(specs = calloc((size_t)cJSON_GetArraySize(jarr(spec, "volumes")), sizeof(*specs))))
		return -ENOMEM;
	/* the volume specs; each failure is an error of the pod, the others go on */
	cJSON_ArrayForEach(vol, jarr(spec, "volumes"))
	{
		struct spec *s = &specs[nspecs++];
		if (build_spec(pod, vol, lk, s) == -ENOMEM)
			goto out;
		if (s->err) {
			s->failed = true;
			if (!(o = vol_push(&out, &nout, SW_VOL_ERROR, jstr(vol, "name"))))
				goto out;
			o->err = s->err;
			s->err = NULL;
		}
	}
	/* GetPodVolumeNames with the effective seLinuxOptions of each container */
	for (size_t k = 0; k < 3; k++)
		cJSON_ArrayForEach(c, jarr(spec, kinds[k]))
		{
			const cJSON *opts = jobj(jobj(c, "securityContext"), "seLinuxOptions"), *m;
			char *label = NULL;
			if (!opts)
				opts = jobj(psc, "seLinuxOptions");
			if (opts && !(label = sw_options_label(opts)))
				goto out;
			cJSON_ArrayForEach(m, jarr(c, "volumeMounts"))
			{
				if (mount_add(&mounts, &nmounts, jstr(m, "name"), label) < 0) {
					free(label);
					goto out;
				}
			}
			free(label);
		}
	for (size_t i = 0; i < nmounts; i++) {
		const struct mount *m = &mounts[i];
		const struct spec *s = NULL;
		const char *label = "", *policy = pod_policy ? pod_policy : SW_POLICY_MOUNT_OPTION;
		const cJSON *csi;
		bool supports = false;
		int pl;

		for (size_t j = 0; j < nspecs; j++)
			if (!specs[j].failed && !strcmp(specs[j].vname, m->name))
				s = &specs[j];
		if (!s)
			continue; /* its spec failed (reported above) or no such volume */
		pl = find_plugin(s);
		csi = spec_src(s, "csi");
		if (pl == PL_FC || pl == PL_ISCSI)
			supports = true;
		else if (pl == PL_CSI)
			supports = lk->driver_selinux_mount(lk->ud, jstr(csi, "driver"));
		/* GetMountSELinuxLabel */
		if (m->n > 1) {
			size_t len = 1;
			if (!(o = vol_push(&out, &nout, SW_VOL_MULTI, m->name)))
				goto out;
			for (size_t j = 0; j < m->n; j++)
				len += strlen(m->labels[j]) + 1;
			if (!(o->err = malloc(len + 32)))
				goto out;
			strcpy(o->err, "multiple SELinux labels found: ");
			for (size_t j = 0; j < m->n; j++) {
				if (j)
					strcat(o->err, ",");
				strcat(o->err, m->labels[j]);
			}
			continue;
		}
		if (m->n == 1 && !(pod_policy && !strcmp(pod_policy, SW_POLICY_RECURSIVE)) &&
		    supports)
			label = m->labels[0];
		/* syncVolume */
		if (pl < 0) {
			if (!vol_push(&out, &nout, SW_VOL_SKIP, m->name))
				goto out;
			continue;
		}
		if (!supports || !*label)
			policy = SW_POLICY_RECURSIVE;
		if (!(o = vol_push(&out, &nout, SW_VOL_OK, m->name)))
			goto out;
		r = unique_name(pl, s, &o->unique, &o->err);
		if (r == -ENOMEM)
			goto out;
		if (r < 0) {
			o->state = SW_VOL_ERROR;
			r = -ENOMEM;
			continue;
		}
		r = -ENOMEM;
		if (!(o->label = strdup(label)) || !(o->policy = strdup(policy)) ||
		    !(o->csi_driver = strdup(csi ? jstr(csi, "driver") : "")))
			goto out;
	}
	r = 0;
out:
	for (size_t j = 0; j < nspecs; j++)
		free(specs[j].err);
	free(specs);
	mounts_free(mounts, nmounts);
	if (r < 0) {
		sw_volumes_free(out, nout);
		return r;
	}
	*ret = out;
	*ret_n = nout;
	return 0;
}

int sw_pod_claims(const cJSON *pod, int (*fn)(const char *claim, void *ud), void *ud)
{
	const cJSON *vol, *meta = jobj(pod, "metadata");
	int r = 0;

	cJSON_ArrayForEach(vol, jarr(jobj(pod, "spec"), "volumes"))
	{
		const cJSON *pvc = jobj(vol, "persistentVolumeClaim");
		if (pvc && *jstr(pvc, "claimName"))
			r = fn(jstr(pvc, "claimName"), ud);
		else if (jobj(vol, "ephemeral")) {
			char *n = NULL;
			if (asprintf(&n, "%s-%s", jstr(meta, "name"), jstr(vol, "name")) < 0)
				return -ENOMEM;
			r = fn(n, ud);
			free(n);
		}
		if (r)
			return r;
	}
	return 0;
}
