/* SPDX-License-Identifier: Apache-2.0 */
/* workers/endpoints/endpoints.c: the Endpoints of a Service (endpoints.h). */
#include "workers/endpoints/endpoints.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workers/endpointslice/reconcile.h" /* eps_pod_ready, eps_find_port */

static cJSON *get(const cJSON *o, const char *k)
{
	return o ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = get(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const char *str0(const cJSON *o, const char *k)
{
	const char *s = str(o, k);
	return s ? s : "";
}

static bool streq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static bool is_v6(const char *ip)
{
	return ip && strchr(ip, ':');
}

/* ShouldPodBeInEndpoints(pod, publishNotReadyAddresses) */
static bool pod_in(const cJSON *pod, bool include_terminating)
{
	const cJSON *st = get(pod, "status"), *dt = get(get(pod, "metadata"), "deletionTimestamp");
	const char *phase = str(st, "phase"), *ip = str(st, "podIP");
	if (streq(phase, "Failed") || streq(phase, "Succeeded"))
		return false;
	if (!(ip && *ip) && cJSON_GetArraySize(get(st, "podIPs")) == 0)
		return false;
	return include_terminating || !dt || cJSON_IsNull(dt);
}

/* podToEndpointAddressForService: the address (a new object), or NULL when the pod has no IP of
 * the Service's family */
static cJSON *pod_address(const cJSON *svc, const cJSON *pod)
{
	const cJSON *spec = get(svc, "spec"), *fam = cJSON_GetArrayItem(get(spec, "ipFamilies"), 0);
	const cJSON *md = get(pod, "metadata"), *ip;
	const char *cip = str(spec, "clusterIP"), *found = NULL;
	bool v6 = false;
	cJSON *a, *ref;

	if (cJSON_IsString(fam))
		v6 = !strcmp(fam->valuestring, "IPv6");
	else if (cip && *cip && strcmp(cip, "None"))
		v6 = is_v6(cip);
	else
		v6 = is_v6(str(get(pod, "status"), "podIP"));
	cJSON_ArrayForEach(ip, get(get(pod, "status"), "podIPs"))
	{
		const char *s = str(ip, "ip");
		if (s && v6 == is_v6(s)) {
			found = s;
			break;
		}
	}
	if (!found || !(a = cJSON_CreateObject()))
		return NULL;
	cJSON_AddStringToObject(a, "ip", found);
	cJSON_AddStringToObject(a, "nodeName", str0(get(pod, "spec"), "nodeName"));
	ref = cJSON_AddObjectToObject(a, "targetRef");
	cJSON_AddStringToObject(ref, "kind", "Pod");
	cJSON_AddStringToObject(ref, "namespace", str0(md, "namespace"));
	cJSON_AddStringToObject(ref, "name", str0(md, "name"));
	cJSON_AddStringToObject(ref, "uid", str0(md, "uid"));
	return a;
}

/* ---- RepackSubsets ----------------------------------------------------------------------------
 */
struct addr {
	char *key; /* ip \x1f uid */
	cJSON *a;  /* the first address seen with this key */
};

struct port {
	char *key;    /* identity; "" for the no-port sentinel */
	cJSON *p;     /* NULL for the sentinel */
	size_t *addr; /* indexes into addrs */
	bool *ready;
	size_t n, cap;
	char *set_key; /* its address set, sorted */
};

struct pack {
	struct addr *addrs;
	size_t n_addrs, cap_addrs;
	struct port *ports;
	size_t n_ports, cap_ports;
	bool oom;
};

static void *grow(void *v, size_t n, size_t *cap, size_t sz)
{
	if (n < *cap)
		return v;
	size_t c = *cap ? *cap * 2 : 8;
	void *p = realloc(v, c * sz);
	if (p)
		*cap = c;
	return p;
}

static char *port_key(const cJSON *p)
{
	char buf[1024];
	const cJSON *num = get(p, "port");
	snprintf(buf, sizeof(buf), "%s\x1f%011d\x1f%s\x1f%s%s", str0(p, "name"),
	         cJSON_IsNumber(num) ? num->valueint : 0, str0(p, "protocol"),
	         str(p, "appProtocol") ? "=" : "!", str0(p, "appProtocol"));
	return strdup(buf);
}

static size_t add_addr(struct pack *k, const cJSON *a)
{
	char key[512];
	snprintf(key, sizeof(key), "%s\x1f%s", str0(a, "ip"), str0(get(a, "targetRef"), "uid"));
	for (size_t i = 0; i < k->n_addrs; i++)
		if (!strcmp(k->addrs[i].key, key))
			return i;
	struct addr *v = grow(k->addrs, k->n_addrs, &k->cap_addrs, sizeof(*v));
	if (!v) {
		k->oom = true;
		return (size_t)-1;
	}
	k->addrs = v;
	v[k->n_addrs] = (struct addr){.key = strdup(key), .a = cJSON_Duplicate(a, true)};
	if (!v[k->n_addrs].key || !v[k->n_addrs].a)
		k->oom = true;
	return k->n_addrs++;
}

/* mapAddressByPort: not ready wins over ready */
static void map_addr(struct pack *k, const cJSON *a, const cJSON *port, bool ready)
{
	size_t ai = add_addr(k, a);
	char *pk = port ? port_key(port) : strdup("");
	struct port *p = NULL;

	if (ai == (size_t)-1 || !pk) {
		free(pk);
		k->oom = true;
		return;
	}
	for (size_t i = 0; i < k->n_ports && !p; i++)
		if (!strcmp(k->ports[i].key, pk))
			p = &k->ports[i];
	if (!p) {
		struct port *v = grow(k->ports, k->n_ports, &k->cap_ports, sizeof(*v));
		if (!v) {
			free(pk);
			k->oom = true;
			return;
		}
		k->ports = v;
		p = &v[k->n_ports++];
		*p = (struct port){.key = pk, .p = port ? cJSON_Duplicate(port, true) : NULL};
		pk = NULL;
	}
	free(pk);
	for (size_t i = 0; i < p->n; i++)
		if (p->addr[i] == ai) {
			if (p->ready[i])
				p->ready[i] = ready;
			return;
		}
	if (p->n == p->cap) {
		size_t c = p->cap ? p->cap * 2 : 8;
		size_t *na = realloc(p->addr, c * sizeof(*na));
		if (na)
			p->addr = na;
		bool *nr = na ? realloc(p->ready, c * sizeof(*nr)) : NULL;
		if (!na || !nr) {
			k->oom = true;
			return;
		}
		p->ready = nr;
		p->cap = c;
	}
	p->addr[p->n] = ai;
	p->ready[p->n++] = ready;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* addrsByIPAndUID */
static int cmp_addr_json(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
	int c = strcmp(str0(x, "ip"), str0(y, "ip"));
	return c ? c : strcmp(str0(get(x, "targetRef"), "uid"), str0(get(y, "targetRef"), "uid"));
}

static int cmp_port_json(const void *a, const void *b)
{
	char *x = port_key(*(const cJSON *const *)a), *y = port_key(*(const cJSON *const *)b);
	int c = x && y ? strcmp(x, y) : 0;
	free(x);
	free(y);
	return c;
}

/* sorts a JSON array in place with cmp */
static void sort_array(cJSON *arr, int (*cmp)(const void *, const void *))
{
	int n = cJSON_GetArraySize(arr);
	cJSON **v;
	if (n < 2 || !(v = calloc((size_t)n, sizeof(*v))))
		return;
	for (int i = 0; i < n; i++)
		v[i] = cJSON_DetachItemFromArray(arr, 0);
	qsort(v, (size_t)n, sizeof(*v), cmp);
	for (int i = 0; i < n; i++)
		cJSON_AddItemToArray(arr, v[i]);
	free(v);
}

/* a subset's canonical text (also the sort key of subsets): addresses, not-ready addresses,
 * ports, each sorted; targetRef without resourceVersion; absent and empty lists alike */
static void canon_addrs(const cJSON *arr, char **out, size_t *len, size_t *cap);

static void append(char **out, size_t *len, size_t *cap, const char *s)
{
	size_t l = strlen(s);
	if (!*out && *cap == (size_t)-1)
		return;
	if (*len + l + 1 > *cap) {
		size_t c = (*len + l + 1) * 2;
		char *p = realloc(*out, c);
		if (!p) {
			free(*out);
			*out = NULL;
			*cap = (size_t)-1;
			return;
		}
		*out = p;
		*cap = c;
	}
	memcpy(*out + *len, s, l + 1);
	*len += l;
}

static void canon_addrs(const cJSON *arr, char **out, size_t *len, size_t *cap)
{
	int n = cJSON_GetArraySize(arr);
	char **v = calloc((size_t)n + 1, sizeof(*v));
	const cJSON *a;
	int i = 0;

	if (!v) {
		append(out, len, cap, "\x01oom");
		return;
	}
	cJSON_ArrayForEach(a, arr)
	{
		const cJSON *r = get(a, "targetRef");
		char buf[1024];
		snprintf(buf, sizeof(buf), "%s|%s|%s%s|%s%s/%s/%s/%s/%s/%s", str0(a, "ip"),
		         str0(a, "hostname"), str(a, "nodeName") ? "=" : "!", str0(a, "nodeName"),
		         r ? "=" : "!", str0(r, "kind"), str0(r, "namespace"), str0(r, "name"),
		         str0(r, "uid"), str0(r, "apiVersion"), str0(r, "fieldPath"));
		if (i < n)
			v[i++] = strdup(buf);
	}
	qsort(v, (size_t)i, sizeof(*v), cmp_str);
	for (int k = 0; k < i; k++) {
		append(out, len, cap, v[k] ? v[k] : "\x01oom");
		append(out, len, cap, ";");
		free(v[k]);
	}
	free(v);
}

static char *canon_subset(const cJSON *s)
{
	char *out = NULL;
	size_t len = 0, cap = 0;
	const cJSON *p;
	int n = cJSON_GetArraySize(get(s, "ports")), i = 0;
	char **v = calloc((size_t)n + 1, sizeof(*v));

	append(&out, &len, &cap, "A:");
	canon_addrs(get(s, "addresses"), &out, &len, &cap);
	append(&out, &len, &cap, "N:");
	canon_addrs(get(s, "notReadyAddresses"), &out, &len, &cap);
	append(&out, &len, &cap, "P:");
	if (v) {
		cJSON_ArrayForEach(p, get(s, "ports")) if (i < n) v[i++] = port_key(p);
		qsort(v, (size_t)i, sizeof(*v), cmp_str);
		for (int k = 0; k < i; k++) {
			append(&out, &len, &cap, v[k] ? v[k] : "\x01oom");
			append(&out, &len, &cap, ";");
			free(v[k]);
		}
		free(v);
	}
	if (!out)
		return NULL;
	return out;
}

static int cmp_subset_json(const void *a, const void *b)
{
	char *x = canon_subset(*(const cJSON *const *)a),
	     *y = canon_subset(*(const cJSON *const *)b);
	int c = x && y ? strcmp(x, y) : 0;
	free(x);
	free(y);
	return c;
}

/* the subsets as one canonical text (order-free) */
static char *canon_subsets(const cJSON *arr)
{
	int n = cJSON_GetArraySize(arr), i = 0;
	char **v = calloc((size_t)n + 1, sizeof(*v)), *out = NULL;
	size_t len = 0, cap = 0;
	const cJSON *s;

	if (!v)
		return NULL;
	cJSON_ArrayForEach(s, arr) if (i < n) v[i++] = canon_subset(s);
	qsort(v, (size_t)i, sizeof(*v), cmp_str);
	append(&out, &len, &cap, "[");
	for (int k = 0; k < i; k++) {
		append(&out, &len, &cap, v[k] ? v[k] : "\x01oom");
		append(&out, &len, &cap, "]");
		free(v[k]);
	}
	free(v);
	return out;
}

static void pack_free(struct pack *k)
{
	for (size_t i = 0; i < k->n_addrs; i++) {
		free(k->addrs[i].key);
		cJSON_Delete(k->addrs[i].a);
	}
	free(k->addrs);
	for (size_t i = 0; i < k->n_ports; i++) {
		free(k->ports[i].key);
		cJSON_Delete(k->ports[i].p);
		free(k->ports[i].addr);
		free(k->ports[i].ready);
		free(k->ports[i].set_key);
	}
	free(k->ports);
}

static char *set_key(const struct pack *k, const struct port *p)
{
	char **v = calloc(p->n + 1, sizeof(*v)), *out = NULL;
	size_t len = 0, cap = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < p->n; i++) {
		size_t l = strlen(k->addrs[p->addr[i]].key) + 3;
		if ((v[i] = malloc(l)))
			snprintf(v[i], l, "%s|%c", k->addrs[p->addr[i]].key,
			         p->ready[i] ? 'r' : 'n');
	}
	qsort(v, p->n, sizeof(*v), cmp_str);
	append(&out, &len, &cap, "{");
	for (size_t i = 0; i < p->n; i++) {
		append(&out, &len, &cap, v[i] ? v[i] : "\x01oom");
		append(&out, &len, &cap, ",");
		free(v[i]);
	}
	free(v);
	return out;
}

cJSON *ep_subsets(const cJSON *svc, const cJSON *const *pods, size_t n_pods)
{
	const cJSON *spec = get(svc, "spec"), *smd = get(svc, "metadata");
	bool pnra = cJSON_IsTrue(get(spec, "publishNotReadyAddresses"));
	int n_sp = cJSON_GetArraySize(get(spec, "ports"));
	struct pack k = {0};
	cJSON *final = cJSON_CreateArray();

	if (!final)
		return NULL;
	for (size_t i = 0; i < n_pods && !k.oom; i++) {
		const cJSON *pod = pods[i], *pspec = get(pod, "spec"), *sp;
		cJSON *a;
		if (!pod_in(pod, pnra) || !(a = pod_address(svc, pod)))
			continue;
		const char *host = str(pspec, "hostname");
		if (host && *host && streq(str(pspec, "subdomain"), str(smd, "name")) &&
		    streq(str(smd, "namespace"), str(get(pod, "metadata"), "namespace")))
			cJSON_AddStringToObject(a, "hostname", host);
		bool ready = pnra || eps_pod_ready(pod);
		if (n_sp == 0) {
			if (streq(str(spec, "clusterIP"), "None"))
				map_addr(&k, a, NULL, ready);
		} else {
			cJSON_ArrayForEach(sp, get(spec, "ports"))
			{
				int num;
				if (eps_find_port(pod, sp, &num) < 0)
					continue;
				cJSON *p = cJSON_CreateObject();
				if (!p) {
					k.oom = true;
					break;
				}
				cJSON_AddStringToObject(p, "name", str0(sp, "name"));
				cJSON_AddNumberToObject(p, "port", num);
				cJSON_AddStringToObject(p, "protocol", str0(sp, "protocol"));
				if (str(sp, "appProtocol"))
					cJSON_AddStringToObject(p, "appProtocol",
					                        str(sp, "appProtocol"));
				map_addr(&k, a, p, ready);
				cJSON_Delete(p);
			}
		}
		cJSON_Delete(a);
	}
	/* ports with the same address set share a subset */
	for (size_t i = 0; i < k.n_ports && !k.oom; i++)
		if (!(k.ports[i].set_key = set_key(&k, &k.ports[i])))
			k.oom = true;
	bool *done = calloc(k.n_ports + 1, sizeof(*done));
	if (!done)
		k.oom = true;
	for (size_t i = 0; i < k.n_ports && !k.oom; i++) {
		if (done[i])
			continue;
		cJSON *s = cJSON_CreateObject(), *ra = cJSON_CreateArray(),
		      *na = cJSON_CreateArray(), *pa = cJSON_CreateArray();
		struct port *p = &k.ports[i];
		for (size_t j = 0; j < p->n; j++)
			cJSON_AddItemToArray(p->ready[j] ? ra : na,
			                     cJSON_Duplicate(k.addrs[p->addr[j]].a, true));
		for (size_t j = i; j < k.n_ports; j++)
			if (!done[j] && !strcmp(k.ports[j].set_key, p->set_key)) {
				done[j] = true;
				if (k.ports[j].p)
					cJSON_AddItemToArray(pa,
					                     cJSON_Duplicate(k.ports[j].p, true));
			}
		sort_array(ra, cmp_addr_json);
		sort_array(na, cmp_addr_json);
		sort_array(pa, cmp_port_json);
		if (cJSON_GetArraySize(ra))
			cJSON_AddItemToObject(s, "addresses", ra);
		else
			cJSON_Delete(ra);
		if (cJSON_GetArraySize(na))
			cJSON_AddItemToObject(s, "notReadyAddresses", na);
		else
			cJSON_Delete(na);
		if (cJSON_GetArraySize(pa))
			cJSON_AddItemToObject(s, "ports", pa);
		else
			cJSON_Delete(pa);
		cJSON_AddItemToArray(final, s);
	}
	free(done);
	sort_array(final, cmp_subset_json);
	if (k.oom) {
		cJSON_Delete(final);
		final = NULL;
	}
	pack_free(&k);
	return final;
}

/* ---- truncation --------------------------------------------------------------------------- */
bool ep_truncate(cJSON *endpoints)
{
	cJSON *subsets = get(endpoints, "subsets"), *s;
	int ready = 0, not_ready = 0;

	cJSON_ArrayForEach(s, subsets)
	{
		ready += cJSON_GetArraySize(get(s, "addresses"));
		not_ready += cJSON_GetArraySize(get(s, "notReadyAddresses"));
	}
	if (ready + not_ready <= EP_MAX_CAPACITY)
		return false;
	bool trunc_ready = ready > EP_MAX_CAPACITY;
	int max = trunc_ready ? EP_MAX_CAPACITY : EP_MAX_CAPACITY - ready;
	int total = trunc_ready ? ready : not_ready, can = max;
	cJSON_ArrayForEach(s, subsets)
	{
		const char *field = trunc_ready ? "addresses" : "notReadyAddresses";
		cJSON *arr = get(s, field);
		int in = cJSON_GetArraySize(arr);
		int add = (int)ceil((double)in / (double)total * (double)max);
		if (add > can)
			add = can;
		while (cJSON_GetArraySize(arr) > add)
			cJSON_DeleteItemFromArray(arr, cJSON_GetArraySize(arr) - 1);
		if (trunc_ready)
			cJSON_DeleteItemFromObjectCaseSensitive(s, "notReadyAddresses");
		can -= cJSON_GetArraySize(arr);
	}
	return true;
}

/* ---- the sync ------------------------------------------------------------------------------- */
static bool service_ip_set(const cJSON *svc)
{
	const char *cip = str(get(svc, "spec"), "clusterIP");
	return cip && *cip && strcmp(cip, "None");
}

/* labels a (without the headless label) equal b, nil equal to empty */
static bool labels_equal(const cJSON *a, const cJSON *b)
{
	const cJSON *kv;
	int na = 0;
	cJSON_ArrayForEach(kv, a)
	{
		if (!strcmp(kv->string, EP_LABEL_HL))
			continue;
		na++;
		if (!cJSON_IsString(kv) || !streq(str(b, kv->string), kv->valuestring))
			return false;
	}
	return na == cJSON_GetArraySize(b);
}

static bool capacity_annotation_ok(const cJSON *current)
{
	const cJSON *s;
	int n = 0;
	cJSON_ArrayForEach(s, get(current, "subsets")) n +=
	        cJSON_GetArraySize(get(s, "addresses")) +
	        cJSON_GetArraySize(get(s, "notReadyAddresses"));
	if (n > EP_MAX_CAPACITY)
		return false;
	return !get(get(get(current, "metadata"), "annotations"), EP_ANN_OVER);
}

static void set_item(cJSON *o, const char *k, cJSON *v)
{
	if (get(o, k))
		cJSON_ReplaceItemInObjectCaseSensitive(o, k, v);
	else
		cJSON_AddItemToObject(o, k, v);
}

int ep_sync(const cJSON *svc, const cJSON *const *pods, size_t n_pods, const cJSON *current,
            const char *trigger, cJSON **ret, bool *create)
{
	const cJSON *smd = get(svc, "metadata"), *kv;
	cJSON *subsets = ep_subsets(svc, pods, n_pods), *out, *md, *ann, *labels;
	char *have = NULL, *want = NULL;

	*ret = NULL;
	*create = !current || !str(get(current, "metadata"), "resourceVersion");
	if (!subsets)
		return -ENOMEM;
	if (!*create) {
		have = canon_subsets(get(current, "subsets"));
		want = canon_subsets(subsets);
		bool same =
		        have && want && !strcmp(have, want) &&
		        labels_equal(get(get(current, "metadata"), "labels"), get(smd, "labels")) &&
		        capacity_annotation_ok(current);
		free(have);
		free(want);
		if (same) {
			cJSON_Delete(subsets);
			return 0;
		}
	}
	if (*create) {
		out = cJSON_CreateObject();
		md = out ? cJSON_AddObjectToObject(out, "metadata") : NULL;
		if (md) {
			cJSON_AddStringToObject(md, "name", str0(smd, "name"));
			cJSON_AddStringToObject(md, "namespace", str0(smd, "namespace"));
		}
	} else {
		out = cJSON_Duplicate(current, true);
		md = (cJSON *)get(out, "metadata");
	}
	if (!out || !md) {
		cJSON_Delete(out);
		cJSON_Delete(subsets);
		return -ENOMEM;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(out, "apiVersion");
	cJSON_DeleteItemFromObjectCaseSensitive(out, "kind");
	cJSON_AddStringToObject(out, "apiVersion", "v1");
	cJSON_AddStringToObject(out, "kind", "Endpoints");
	set_item(out, "subsets", subsets);
	labels = cJSON_CreateObject();
	cJSON_ArrayForEach(kv, get(smd, "labels")) if (cJSON_IsString(kv))
	        cJSON_AddStringToObject(labels, kv->string, kv->valuestring);
	cJSON_DeleteItemFromObjectCaseSensitive(labels, EP_LABEL_HL);
	if (!service_ip_set(svc))
		cJSON_AddStringToObject(labels, EP_LABEL_HL, "");
	set_item(md, "labels", labels);
	ann = (cJSON *)get(md, "annotations");
	if (!cJSON_IsObject(ann)) {
		cJSON_DeleteItemFromObjectCaseSensitive(md, "annotations");
		ann = cJSON_AddObjectToObject(md, "annotations");
	}
	cJSON_DeleteItemFromObjectCaseSensitive(ann, EP_ANN_TRIGGER);
	if (trigger)
		cJSON_AddStringToObject(ann, EP_ANN_TRIGGER, trigger);
	cJSON_DeleteItemFromObjectCaseSensitive(ann, EP_ANN_OVER);
	if (ep_truncate(out))
		cJSON_AddStringToObject(ann, EP_ANN_OVER, "truncated");
	*ret = out;
	return 0;
}
