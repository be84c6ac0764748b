/* SPDX-License-Identifier: Apache-2.0 */
/* workers/endpointslice/reconcile.c: the EndpointSlice reconciler (reconcile.h). */
#include "workers/endpointslice/reconcile.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- JSON helpers ---------------------------------------------------------------------------- */
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

static long long parse_time(const char *s)
{
	struct tm tm = {0};
	if (!s || !strptime(s, "%Y-%m-%dT%H:%M:%S", &tm))
		return 0;
	return (long long)timegm(&tm);
}

void eps_format_time(long long t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

bool eps_pod_ready(const cJSON *pod)
{
	const cJSON *c;
	cJSON_ArrayForEach(c, get(get(pod, "status"),
	                          "conditions")) if (streq(str(c, "type"),
	                                                   "Ready")) return streq(str(c, "status"),
	                                                                          "True");
	return false;
}

long long eps_pod_trigger_time(const cJSON *pod)
{
	const cJSON *c;
	cJSON_ArrayForEach(
	        c,
	        get(get(pod, "status"),
	            "conditions")) if (streq(str(c, "type"),
	                                     "Ready")) return parse_time(str(c,
	                                                                     "lastTransitionTime"));
	return 0;
}

long long eps_service_trigger_time(const cJSON *svc)
{
	return parse_time(str(get(svc, "metadata"), "creationTimestamp"));
}

bool eps_selector_matches(const cJSON *svc, const char *(*getl)(const void *ud, const char *key),
                          const void *ud)
{
	const cJSON *sel = get(get(svc, "spec"), "selector"), *kv;
	if (!cJSON_IsObject(sel))
		return false;
	cJSON_ArrayForEach(kv, sel)
	{
		const char *v = getl(ud, kv->string);
		if (!cJSON_IsString(kv) || !v || strcmp(v, kv->valuestring))
			return false;
	}
	return true;
}

/* ---- a growable string ----------------------------------------------------------------------- */
struct sb {
	char *s;
	size_t n, cap;
	bool oom;
};

static void sb_add(struct sb *b, const char *s)
{
	size_t l = strlen(s);
	if (b->oom)
		return;
	if (b->n + l + 1 > b->cap) {
		size_t cap = (b->n + l + 1) * 2;
		char *p = realloc(b->s, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->s = p;
		b->cap = cap;
	}
	memcpy(b->s + b->n, s, l + 1);
	b->n += l;
}

static char *sb_take(struct sb *b)
{
	if (b->oom || !b->s) {
		free(b->s);
		return b->oom ? NULL : strdup("");
	}
	return b->s;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ---- keys ------------------------------------------------------------------------------------ */
/* One port's identity: name (nil distinct from ""), port, protocol, appProtocol. */
static char *port_key1(const cJSON *p)
{
	char buf[1024];
	const cJSON *num = get(p, "port");
	const char *name = str(p, "name"), *proto = str(p, "protocol"),
	           *app = str(p, "appProtocol");
	snprintf(buf, sizeof(buf), "%s%s\x1f%s%d\x1f%s%s\x1f%s%s", name ? "=" : "!",
	         name ? name : "", num ? "=" : "!", cJSON_IsNumber(num) ? num->valueint : 0,
	         proto ? "=" : "!", proto ? proto : "", app ? "=" : "!", app ? app : "");
	return strdup(buf);
}

/* upstream's PortMapKey: the ports as a set (order does not matter, nil equals empty) */
static char *port_map_key(const cJSON *ports)
{
	size_t n = (size_t)cJSON_GetArraySize(ports), i = 0;
	char **v = calloc(n + 1, sizeof(*v));
	struct sb b = {0};
	const cJSON *p;

	if (!v)
		return NULL;
	cJSON_ArrayForEach(p, ports) if (i < n && !(v[i++] = port_key1(p))) b.oom = true;
	qsort(v, i, sizeof(*v), cmp_str);
	sb_add(&b, "[");
	for (size_t k = 0; k < i; k++) {
		sb_add(&b, v[k] ? v[k] : "");
		sb_add(&b, "\x1e");
		free(v[k]);
	}
	free(v);
	return sb_take(&b);
}

/* upstream's endpoint hash input: sorted addresses, hostname, targetRef namespace and name */
static char *endpoint_key(const cJSON *ep)
{
	const cJSON *addrs = get(ep, "addresses"), *a, *ref = get(ep, "targetRef");
	size_t n = (size_t)cJSON_GetArraySize(addrs), i = 0;
	const char **v = calloc(n + 1, sizeof(*v));
	struct sb b = {0};

	if (!v)
		return NULL;
	cJSON_ArrayForEach(a, addrs) if (i < n && cJSON_IsString(a)) v[i++] = a->valuestring;
	qsort(v, i, sizeof(*v), cmp_str);
	for (size_t k = 0; k < i; k++) {
		sb_add(&b, v[k]);
		sb_add(&b, ",");
	}
	free(v);
	sb_add(&b, "\x1f");
	sb_add(&b, str0(ep, "hostname"));
	sb_add(&b, "\x1f");
	sb_add(&b, str0(ref, "namespace"));
	sb_add(&b, "\x1f");
	sb_add(&b, str0(ref, "name"));
	return sb_take(&b);
}

static bool json_bool_ptr_changed(const cJSON *a, const cJSON *b)
{
	if (!a != !b)
		return true;
	return a && b && (cJSON_IsTrue(a) != cJSON_IsTrue(b));
}

static bool str_ptr_changed(const cJSON *o1, const cJSON *o2, const char *k)
{
	return !streq(str(o1, k), str(o2, k));
}

/* upstream's EndpointsEqualBeyondHash (the targetRef compared without its resourceVersion) */
static bool endpoints_equal_beyond_hash(const cJSON *a, const cJSON *b)
{
	static const char *const conds[] = {"ready", "serving", "terminating"};
	static const char *const refs[] = {"kind", "namespace",  "name",
	                                   "uid",  "apiVersion", "fieldPath"};
	const cJSON *ca = get(a, "conditions"), *cb = get(b, "conditions");
	const cJSON *ra = get(a, "targetRef"), *rb = get(b, "targetRef");

	if (str_ptr_changed(a, b, "nodeName") || str_ptr_changed(a, b, "zone"))
		return false;
	for (size_t i = 0; i < 3; i++)
		if (json_bool_ptr_changed(get(ca, conds[i]), get(cb, conds[i])))
			return false;
	if (!ra != !rb)
		return false;
	for (size_t i = 0; ra && i < sizeof(refs) / sizeof(refs[0]); i++)
		if (strcmp(str0(ra, refs[i]), str0(rb, refs[i])))
			return false;
	return true;
}

/* ---- the desired endpoint set (upstream's EndpointSet) ----------------------------------------
 */
struct dep {
	char *key;
	cJSON *ep; /* owned */
	size_t seq;
	bool gone;
};

struct eset {
	struct dep *v;
	size_t n, cap, live, cursor;
	bool sorted;
};

static int eset_insert(struct eset *s, char *key, cJSON *ep)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct dep *v = realloc(s->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n] = (struct dep){.key = key, .ep = ep, .seq = s->n};
	s->n++;
	s->sorted = false;
	return 0;
}

static int cmp_dep(const void *a, const void *b)
{
	const struct dep *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : (x->seq < y->seq ? -1 : x->seq > y->seq);
}

/* sort by key and keep the last insert of each key (a map's Insert replaces) */
static void eset_seal(struct eset *s)
{
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), cmp_dep);
	s->live = 0;
	for (size_t i = 0; i < s->n; i++) {
		s->v[i].gone = i + 1 < s->n && !strcmp(s->v[i].key, s->v[i + 1].key);
		s->live += !s->v[i].gone;
	}
	s->sorted = true;
}

static struct dep *eset_get(struct eset *s, const char *key)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(s->v[mid].key, key);
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < s->n && !strcmp(s->v[i].key, key); i++)
		if (!s->v[i].gone)
			return &s->v[i];
	return NULL;
}

static void eset_delete(struct eset *s, struct dep *d)
{
	if (d && !d->gone) {
		d->gone = true;
		s->live--;
	}
}

/* PopAny: in key order here (Go's map order is random) */
static cJSON *eset_pop(struct eset *s)
{
	for (; s->cursor < s->n; s->cursor++)
		if (!s->v[s->cursor].gone) {
			struct dep *d = &s->v[s->cursor++];
			eset_delete(s, d);
			return cJSON_Duplicate(d->ep, true);
		}
	return NULL;
}

static void eset_free(struct eset *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].key);
		cJSON_Delete(s->v[i].ep);
	}
	free(s->v);
}

/* ---- the plan ---------------------------------------------------------------------------------
 */
static int plan_add(struct eps_plan *p, enum eps_op op, cJSON *obj)
{
	if (!obj)
		return -ENOMEM;
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 8;
		struct eps_action *v = realloc(p->v, cap * sizeof(*v));
		if (!v) {
			cJSON_Delete(obj);
			return -ENOMEM;
		}
		p->v = v;
		p->cap = cap;
	}
	p->v[p->n++] = (struct eps_action){.op = op, .obj = obj};
	return 0;
}

void eps_plan_free(struct eps_plan *p)
{
	for (size_t i = 0; i < p->n; i++)
		cJSON_Delete(p->v[i].obj);
	free(p->v);
	*p = (struct eps_plan){0};
}

/* ---- the Service ------------------------------------------------------------------------------
 */
static bool is_v6(const char *ip)
{
	return ip && strchr(ip, ':');
}

/* getAddressTypesForService: bit 1 IPv4, bit 2 IPv6 */
static unsigned address_types(const cJSON *svc)
{
	const cJSON *spec = get(svc, "spec"), *f;
	const char *cip = str(spec, "clusterIP");
	unsigned t = 0;

	cJSON_ArrayForEach(f, get(spec, "ipFamilies"))
	{
		if (cJSON_IsString(f) && !strcmp(f->valuestring, "IPv4"))
			t |= 1;
		if (cJSON_IsString(f) && !strcmp(f->valuestring, "IPv6"))
			t |= 2;
	}
	if (t)
		return t;
	if (cip && *cip && strcmp(cip, "None"))
		return is_v6(cip) ? 2 : 1;
	return 3;
}

static bool service_ip_set(const cJSON *svc)
{
	const char *cip = str(get(svc, "spec"), "clusterIP");
	return cip && *cip && strcmp(cip, "None");
}

static bool reserved_label(const char *k)
{
	return !strcmp(k, EPS_LABEL_SVC) || !strcmp(k, EPS_LABEL_MGD) || !strcmp(k, EPS_LABEL_HL);
}

/* the non-reserved labels of a and b are the same map */
static bool labels_equal_unreserved(const cJSON *a, const cJSON *b)
{
	const cJSON *kv;
	size_t na = 0, nb = 0;
	cJSON_ArrayForEach(kv, a) if (!reserved_label(kv->string))
	{
		na++;
		if (!streq(str(b, kv->string), cJSON_IsString(kv) ? kv->valuestring : ""))
			return false;
	}
	cJSON_ArrayForEach(kv, b) if (!reserved_label(kv->string)) nb++;
	return na == nb;
}

/* setEndpointSliceLabels: the slice's labels (a new object) and whether they changed */
static cJSON *slice_labels(const cJSON *slice_labels_now, const cJSON *svc, bool *changed)
{
	const cJSON *md = get(svc, "metadata"), *kv;
	cJSON *l = cJSON_CreateObject();

	if (!l)
		return NULL;
	if (changed)
		*changed = !labels_equal_unreserved(slice_labels_now, get(md, "labels"));
	cJSON_ArrayForEach(kv,
	                   get(md, "labels")) if (!reserved_label(kv->string) && cJSON_IsString(kv))
	        cJSON_AddStringToObject(l, kv->string, kv->valuestring);
	if (!service_ip_set(svc))
		cJSON_AddStringToObject(l, EPS_LABEL_HL, "");
	cJSON_AddStringToObject(l, EPS_LABEL_SVC, str0(md, "name"));
	cJSON_AddStringToObject(l, EPS_LABEL_MGD, EPS_MANAGED_BY);
	return l;
}

static bool owned_by(const cJSON *slice, const cJSON *svc)
{
	const cJSON *o;
	const char *uid = str(get(svc, "metadata"), "uid");
	cJSON_ArrayForEach(o, get(get(slice, "metadata"), "ownerReferences"))
	{
		if (streq(str(o, "uid"), uid) && streq(str(o, "kind"), "Service") &&
		    streq(str(o, "apiVersion"), "v1"))
			return true;
	}
	return false;
}

static cJSON *owner_ref(const cJSON *svc)
{
	const cJSON *md = get(svc, "metadata");
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "apiVersion", "v1");
	cJSON_AddStringToObject(o, "kind", "Service");
	cJSON_AddStringToObject(o, "name", str0(md, "name"));
	cJSON_AddStringToObject(o, "uid", str0(md, "uid"));
	cJSON_AddTrueToObject(o, "controller");
	cJSON_AddTrueToObject(o, "blockOwnerDeletion");
	return o;
}

static const char *at_name(unsigned at)
{
	return at == 2 ? "IPv6" : "IPv4";
}

/* newEndpointSlice */
static cJSON *new_slice(const cJSON *svc, const cJSON *ports, unsigned at)
{
	const cJSON *md = get(svc, "metadata");
	char prefix[300];
	cJSON *s = cJSON_CreateObject(), *m, *refs;

	if (!s)
		return NULL;
	snprintf(prefix, sizeof(prefix), "%s-", str0(md, "name"));
	if (strlen(prefix) > 253)
		snprintf(prefix, sizeof(prefix), "%s", str0(md, "name"));
	cJSON_AddStringToObject(s, "apiVersion", "discovery.k8s.io/v1");
	cJSON_AddStringToObject(s, "kind", "EndpointSlice");
	m = cJSON_AddObjectToObject(s, "metadata");
	cJSON_AddStringToObject(m, "generateName", prefix);
	cJSON_AddStringToObject(m, "namespace", str0(md, "namespace"));
	cJSON_AddItemToObject(m, "labels", slice_labels(NULL, svc, NULL));
	refs = cJSON_AddArrayToObject(m, "ownerReferences");
	cJSON_AddItemToArray(refs, owner_ref(svc));
	cJSON_AddStringToObject(s, "addressType", at_name(at));
	cJSON_AddItemToObject(s, "endpoints", cJSON_CreateArray());
	cJSON_AddItemToObject(s, "ports",
	                      ports ? cJSON_Duplicate(ports, true) : cJSON_CreateArray());
	return s;
}

static bool ownerrefs_equal(const cJSON *a, const cJSON *b)
{
	static const char *const ks[] = {"apiVersion", "kind", "name", "uid"};
	if (cJSON_GetArraySize(a) != cJSON_GetArraySize(b))
		return false;
	for (int i = 0; i < cJSON_GetArraySize(a); i++) {
		const cJSON *x = cJSON_GetArrayItem(a, i), *y = cJSON_GetArrayItem(b, i);
		for (size_t k = 0; k < 4; k++)
			if (!streq(str(x, ks[k]), str(y, ks[k])))
				return false;
		if (json_bool_ptr_changed(get(x, "controller"), get(y, "controller")) ||
		    json_bool_ptr_changed(get(x, "blockOwnerDeletion"),
		                          get(y, "blockOwnerDeletion")))
			return false;
	}
	return true;
}

static bool labels_equal(const cJSON *a, const cJSON *b)
{
	const cJSON *kv;
	if (cJSON_GetArraySize(a) != cJSON_GetArraySize(b))
		return false;
	cJSON_ArrayForEach(kv, a) if (!cJSON_IsString(kv) ||
	                              !streq(str(b, kv->string), kv->valuestring)) return false;
	return true;
}

/* placeholderSliceCompare.DeepEqual: namespace, labels, owner references, address type, no
 * endpoints and no ports (nil equals empty) */
static bool placeholder_equal(const cJSON *have, const cJSON *want)
{
	const cJSON *hm = get(have, "metadata"), *wm = get(want, "metadata");
	return streq(str(hm, "namespace"), str(wm, "namespace")) &&
	       labels_equal(get(hm, "labels"), get(wm, "labels")) &&
	       ownerrefs_equal(get(hm, "ownerReferences"), get(wm, "ownerReferences")) &&
	       streq(str(have, "addressType"), str(want, "addressType")) &&
	       cJSON_GetArraySize(get(have, "endpoints")) == 0 &&
	       cJSON_GetArraySize(get(have, "ports")) == 0;
}

/* ---- pods -------------------------------------------------------------------------------------
 */
static bool pod_should_be_in(const cJSON *pod)
{
	const cJSON *st = get(pod, "status");
	const char *phase = str(st, "phase"), *ip = str(st, "podIP");
	if (streq(phase, "Failed") || streq(phase, "Succeeded"))
		return false;
	return (ip && *ip) || cJSON_GetArraySize(get(st, "podIPs")) > 0;
}

int eps_find_port(const cJSON *pod, const cJSON *sp, int *ret)
{
	const cJSON *tp = get(sp, "targetPort"), *c, *p;
	const char *proto = str(sp, "protocol");

	if (cJSON_IsNumber(tp)) {
		*ret = tp->valueint;
		return 0;
	}
	if (!cJSON_IsString(tp)) /* not defaulted: upstream's IntValue of a zero IntOrString */
		return -ENOENT;
	cJSON_ArrayForEach(c, get(get(pod, "spec"), "containers"))
	        cJSON_ArrayForEach(p, get(c, "ports"))
	{
		const char *pp = str(p, "protocol");
		if (streq(str(p, "name"), tp->valuestring) &&
		    streq(pp ? pp : "TCP", proto ? proto : "TCP")) {
			*ret = (int)cJSON_GetNumberValue(get(p, "containerPort"));
			return 0;
		}
	}
	cJSON_ArrayForEach(c, get(get(pod, "spec"), "initContainers"))
	{
		if (!streq(str(c, "restartPolicy"), "Always"))
			continue;
		cJSON_ArrayForEach(p, get(c, "ports"))
		{
			const char *pp = str(p, "protocol");
			if (streq(str(p, "name"), tp->valuestring) &&
			    streq(pp ? pp : "TCP", proto ? proto : "TCP")) {
				*ret = (int)cJSON_GetNumberValue(get(p, "containerPort"));
				return 0;
			}
		}
	}
	return -ENOENT;
}

/* getEndpointPorts */
static cJSON *endpoint_ports(const cJSON *svc, const cJSON *pod)
{
	const cJSON *spec = get(svc, "spec"), *sp;
	cJSON *out = cJSON_CreateArray();

	if (!out)
		return NULL;
	if (cJSON_GetArraySize(get(spec, "ports")) == 0 && streq(str(spec, "clusterIP"), "None"))
		return out;
	cJSON_ArrayForEach(sp, get(spec, "ports"))
	{
		int num;
		if (eps_find_port(pod, sp, &num) < 0)
			continue;
		cJSON *p = cJSON_CreateObject();
		if (!p)
			break;
		cJSON_AddStringToObject(p, "name", str0(sp, "name"));
		cJSON_AddNumberToObject(p, "port", num);
		cJSON_AddStringToObject(p, "protocol",
		                        str(sp, "protocol") ? str(sp, "protocol") : "");
		if (str(sp, "appProtocol"))
			cJSON_AddStringToObject(p, "appProtocol", str(sp, "appProtocol"));
		cJSON_AddItemToArray(out, p);
	}
	return out;
}

/* the IP re-stringified as Go's net.IP.String() would (v4-in-v6 printed as v4) */
static void canon_ip(const char *ip, char *buf, size_t len, bool *v6)
{
	unsigned char a[16];
	*v6 = is_v6(ip);
	snprintf(buf, len, "%s", ip);
	if (*v6 && inet_pton(AF_INET6, ip, a) == 1) {
		static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
		if (!memcmp(a, mapped, 12)) {
			*v6 = false;
			inet_ntop(AF_INET, a + 12, buf, (socklen_t)len);
		} else {
			inet_ntop(AF_INET6, a, buf, (socklen_t)len);
		}
	} else if (!*v6 && inet_pton(AF_INET, ip, a) == 1) {
		inet_ntop(AF_INET, a, buf, (socklen_t)len);
	}
}

/* podToEndpoint */
static cJSON *pod_to_endpoint(const cJSON *pod, const char *zone, const cJSON *svc, unsigned at)
{
	const cJSON *md = get(pod, "metadata"), *spec = get(pod, "spec"), *ip;
	const cJSON *smd = get(svc, "metadata");
	bool serving = eps_pod_ready(pod),
	     terminating =
	             get(md, "deletionTimestamp") && !cJSON_IsNull(get(md, "deletionTimestamp"));
	bool pnra = cJSON_IsTrue(get(get(svc, "spec"), "publishNotReadyAddresses"));
	bool ready = pnra || (serving && !terminating);
	cJSON *ep = cJSON_CreateObject(), *addrs, *c, *ref;
	const char *host = str(spec, "hostname"), *node = str(spec, "nodeName");

	if (!ep)
		return NULL;
	addrs = cJSON_AddArrayToObject(ep, "addresses");
	cJSON_ArrayForEach(ip, get(get(pod, "status"), "podIPs"))
	{
		char buf[64];
		bool v6;
		if (!str(ip, "ip"))
			continue;
		canon_ip(str(ip, "ip"), buf, sizeof(buf), &v6);
		if ((v6 && at == 2) || (!v6 && at == 1))
			cJSON_AddItemToArray(addrs, cJSON_CreateString(buf));
	}
	c = cJSON_AddObjectToObject(ep, "conditions");
	cJSON_AddBoolToObject(c, "ready", ready);
	cJSON_AddBoolToObject(c, "serving", serving);
	cJSON_AddBoolToObject(c, "terminating", terminating);
	if (host && *host && streq(str(spec, "subdomain"), str(smd, "name")) &&
	    streq(str(smd, "namespace"), str(md, "namespace")))
		cJSON_AddStringToObject(ep, "hostname", host);
	ref = cJSON_AddObjectToObject(ep, "targetRef");
	cJSON_AddStringToObject(ref, "kind", "Pod");
	cJSON_AddStringToObject(ref, "namespace", str0(md, "namespace"));
	cJSON_AddStringToObject(ref, "name", str0(md, "name"));
	cJSON_AddStringToObject(ref, "uid", str0(md, "uid"));
	if (node && *node)
		cJSON_AddStringToObject(ep, "nodeName", node);
	if (zone && *zone)
		cJSON_AddStringToObject(ep, "zone", zone);
	return ep;
}

/* ---- reconcileByPortMapping -------------------------------------------------------------------
 */
struct group {
	char *key;
	cJSON *ports;       /* desired meta (first pod's ports) */
	struct eset want;   /* desired endpoints */
	const cJSON **have; /* existing owned slices with these ports */
	size_t n_have, cap_have;
	bool desired;
};

struct work {
	cJSON *s; /* the slice as it will be written (a copy), or NULL while unchanged */
	const cJSON *orig;
	int state; /* 0 unchanged, 1 update, 2 delete */
};

static int n_eps(const cJSON *s)
{
	return cJSON_GetArraySize(get(s, "endpoints"));
}

static int cmp_work_len(const void *a, const void *b)
{
	const struct work *x = *(struct work *const *)a, *y = *(struct work *const *)b;
	return n_eps(y->s) - n_eps(x->s);
}

struct lists {
	cJSON **create, **update;
	const cJSON **del; /* existing slices (borrowed) */
	size_t n_create, n_update, n_del, cap;
};

static int grow(void **v, size_t n, size_t *cap, size_t sz)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 8;
	void *p = realloc(*v, c * sz);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = c;
	return 0;
}

struct lists_caps {
	size_t c, u, d;
};

static int push_create(struct lists *l, struct lists_caps *k, cJSON *s)
{
	if (!s || grow((void **)&l->create, l->n_create, &k->c, sizeof(*l->create)) < 0) {
		cJSON_Delete(s);
		return -ENOMEM;
	}
	l->create[l->n_create++] = s;
	return 0;
}

static int push_update(struct lists *l, struct lists_caps *k, cJSON *s)
{
	if (!s || grow((void **)&l->update, l->n_update, &k->u, sizeof(*l->update)) < 0) {
		cJSON_Delete(s);
		return -ENOMEM;
	}
	l->update[l->n_update++] = s;
	return 0;
}

static int push_del(struct lists *l, struct lists_caps *k, const cJSON *s)
{
	if (grow((void **)&l->del, l->n_del, &k->d, sizeof(*l->del)) < 0)
		return -ENOMEM;
	l->del[l->n_del++] = s;
	return 0;
}

static void set_endpoints(cJSON *s, cJSON *eps)
{
	if (get(s, "endpoints"))
		cJSON_ReplaceItemInObjectCaseSensitive(s, "endpoints", eps);
	else
		cJSON_AddItemToObject(s, "endpoints", eps);
}

static void set_labels(cJSON *s, cJSON *labels)
{
	cJSON *md = get(s, "metadata");
	if (!md)
		md = cJSON_AddObjectToObject(s, "metadata");
	if (get(md, "labels"))
		cJSON_ReplaceItemInObjectCaseSensitive(md, "labels", labels);
	else
		cJSON_AddItemToObject(md, "labels", labels);
}

static int by_port_mapping(const cJSON *svc, struct group *g, unsigned at, int max,
                           struct lists *out, struct lists_caps *caps)
{
	struct work *w = calloc(g->n_have + 1, sizeof(*w));
	struct work **upd = calloc(g->n_have + 1, sizeof(*upd));
	int r = -ENOMEM;

	if (!w || !upd)
		goto out;
	/* 1. existing slices: keep the endpoints still desired (as desired now), drop the rest */
	for (size_t i = 0; i < g->n_have; i++) {
		const cJSON *s = g->have[i], *e;
		cJSON *keep = cJSON_CreateArray(), *labels;
		bool updated = false, lchanged = false;
		int n_old = n_eps(s);

		w[i].orig = s;
		if (!keep)
			goto out;
		cJSON_ArrayForEach(e, get(s, "endpoints"))
		{
			char *k = endpoint_key(e);
			struct dep *d = k ? eset_get(&g->want, k) : NULL;
			free(k);
			if (!d)
				continue;
			cJSON_AddItemToArray(keep, cJSON_Duplicate(d->ep, true));
			if (!endpoints_equal_beyond_hash(d->ep, e))
				updated = true;
			eset_delete(&g->want, d);
		}
		labels = slice_labels(get(get(s, "metadata"), "labels"), svc, &lchanged);
		if (!labels) {
			cJSON_Delete(keep);
			goto out;
		}
		if (updated || n_old != cJSON_GetArraySize(keep)) {
			if (cJSON_GetArraySize(keep) == 0) {
				w[i].state = 2;
				cJSON_Delete(keep);
				cJSON_Delete(labels);
			} else {
				w[i].s = cJSON_Duplicate(s, true);
				set_endpoints(w[i].s, keep);
				set_labels(w[i].s, labels);
				w[i].state = 1;
			}
		} else if (lchanged) {
			w[i].s = cJSON_Duplicate(s, true);
			set_labels(w[i].s, labels);
			cJSON_Delete(keep);
			w[i].state = 1;
		} else {
			cJSON_Delete(keep);
			cJSON_Delete(labels);
		}
	}
	/* 2. fill the changed slices, fullest first */
	size_t nu = 0;
	for (size_t i = 0; i < g->n_have; i++)
		if (w[i].state == 1)
			upd[nu++] = &w[i];
	if (g->want.live > 0 && nu > 0) {
		qsort(upd, nu, sizeof(*upd), cmp_work_len);
		for (size_t i = 0; i < nu; i++)
			while (g->want.live > 0 && n_eps(upd[i]->s) < max)
				cJSON_AddItemToArray(get(upd[i]->s, "endpoints"),
				                     eset_pop(&g->want));
	}
	/* 3. the rest: into the unchanged slice closest to full, else new slices */
	while (g->want.live > 0) {
		struct work *fill = NULL;
		cJSON *ns = NULL;
		if ((int)g->want.live < max) {
			int closest = max;
			for (size_t i = 0; i < g->n_have; i++) {
				int diff;
				if (w[i].state != 0)
					continue;
				diff = max - ((int)g->want.live + n_eps(w[i].orig));
				if (diff >= 0 && diff < closest) {
					closest = diff;
					fill = &w[i];
					if (!diff)
						break;
				}
			}
		}
		if (fill) {
			if (!(fill->s = cJSON_Duplicate(fill->orig, true)))
				goto out;
			fill->state = 1;
			if (!get(fill->s, "endpoints"))
				cJSON_AddItemToObject(fill->s, "endpoints", cJSON_CreateArray());
		} else if (!(ns = new_slice(svc, g->ports, at))) {
			goto out;
		}
		cJSON *target = fill ? fill->s : ns;
		while (g->want.live > 0 && n_eps(target) < max)
			cJSON_AddItemToArray(get(target, "endpoints"), eset_pop(&g->want));
		if (ns && push_create(out, caps, ns) < 0)
			goto out;
	}
	for (size_t i = 0; i < g->n_have; i++) {
		if (w[i].state == 1) {
			if (push_update(out, caps, w[i].s) < 0) {
				w[i].s = NULL;
				goto out;
			}
			w[i].s = NULL;
		} else if (w[i].state == 2 && push_del(out, caps, w[i].orig) < 0) {
			goto out;
		}
	}
	r = 0;
out:
	for (size_t i = 0; w && i < g->n_have; i++)
		cJSON_Delete(w[i].s);
	free(w);
	free(upd);
	return r;
}

/* ---- hints (upstream's trafficdist and RemoveHintsFromSlices) ---------------------------------
 */
#define EPS_ANN_TOPOLOGY_MODE  "service.kubernetes.io/topology-mode"
#define EPS_ANN_TOPOLOGY_HINTS "service.kubernetes.io/topology-aware-hints" /* deprecated */

/* hintsEnabled: the deprecated annotation, when present, decides; else topology-mode */
static bool topology_hints_enabled(const cJSON *svc)
{
	const cJSON *ann = get(get(svc, "metadata"), "annotations");
	const cJSON *v = get(ann, EPS_ANN_TOPOLOGY_HINTS);
	if (!v)
		v = get(ann, EPS_ANN_TOPOLOGY_MODE);
	return cJSON_IsString(v) &&
	       (!strcmp(v->valuestring, "Auto") || !strcmp(v->valuestring, "auto"));
}

enum eps_hints eps_hints_mode(const cJSON *svc)
{
	const char *td = str(get(svc, "spec"), "trafficDistribution");
	if (!td || topology_hints_enabled(svc))
		return EPS_HINTS_REMOVE;
	if (!strcmp(td, "PreferClose") || !strcmp(td, "PreferSameZone"))
		return EPS_HINTS_ZONE;
	if (!strcmp(td, "PreferSameNode"))
		return EPS_HINTS_ZONE_NODE;
	return EPS_HINTS_REMOVE;
}

static const cJSON *ep_hints(const cJSON *ep)
{
	const cJSON *h = get(ep, "hints");
	return h && !cJSON_IsNull(h) ? h : NULL;
}

/* the hint list k of h holds exactly one entry named want; want NULL: the list is empty */
static bool hint_is(const cJSON *h, const char *k, const char *want)
{
	const cJSON *l = get(h, k);
	if (!want)
		return cJSON_GetArraySize(l) == 0;
	return h && cJSON_GetArraySize(l) == 1 &&
	       streq(str(cJSON_GetArrayItem(l, 0), "name"), want);
}

bool eps_hints_stale(const cJSON *slice, enum eps_hints mode)
{
	const cJSON *ep;
	cJSON_ArrayForEach(ep, get(slice, "endpoints"))
	{
		const cJSON *h = ep_hints(ep);
		if (mode == EPS_HINTS_REMOVE) {
			if (h)
				return true;
			continue;
		}
		if (!cJSON_IsTrue(get(get(ep, "conditions"), "ready")))
			continue;
		if (!hint_is(h, "forZones", str(ep, "zone")))
			return true;
		if (!hint_is(h, "forNodes",
		             mode == EPS_HINTS_ZONE_NODE ? str(ep, "nodeName") : NULL))
			return true;
	}
	return false;
}

static cJSON *one_hint(const char *name)
{
	cJSON *l = cJSON_CreateArray(), *o = cJSON_CreateObject();
	if (!l || !o || !cJSON_AddStringToObject(o, "name", name)) {
		cJSON_Delete(l);
		cJSON_Delete(o);
		return NULL;
	}
	cJSON_AddItemToArray(l, o);
	return l;
}

int eps_hints_apply(cJSON *slice, enum eps_hints mode)
{
	cJSON *ep;
	cJSON_ArrayForEach(ep, get(slice, "endpoints"))
	{
		const char *zone = str(ep, "zone"), *node = str(ep, "nodeName");
		cJSON *h;
		if (mode != EPS_HINTS_REMOVE && !cJSON_IsTrue(get(get(ep, "conditions"), "ready")))
			continue; /* a not-ready endpoint keeps what it has */
		cJSON_DeleteItemFromObjectCaseSensitive(ep, "hints");
		if (mode == EPS_HINTS_REMOVE || (!zone && !(node && mode == EPS_HINTS_ZONE_NODE)))
			continue;
		if (!(h = cJSON_AddObjectToObject(ep, "hints")))
			return -ENOMEM;
		if (zone) {
			cJSON *l = one_hint(zone);
			if (!l)
				return -ENOMEM;
			cJSON_AddItemToObject(h, "forZones", l);
		}
		if (node && mode == EPS_HINTS_ZONE_NODE) {
			cJSON *l = one_hint(node);
			if (!l)
				return -ENOMEM;
			cJSON_AddItemToObject(h, "forNodes", l);
		}
	}
	return 0;
}

static bool named_in(const char *name, cJSON *const *a, size_t na, const cJSON *const *b, size_t nb)
{
	for (size_t i = 0; i < na; i++)
		if (streq(name, str(get(a[i], "metadata"), "name")))
			return true;
	for (size_t i = 0; i < nb; i++)
		if (streq(name, str(get(b[i], "metadata"), "name")))
			return true;
	return false;
}

/* ---- reconcileByAddressType -------------------------------------------------------------------
 */
static struct group *group_of(struct group **gs, size_t *n, size_t *cap, const char *key)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*gs)[i].key, key))
			return &(*gs)[i];
	if (grow((void **)gs, *n, cap, sizeof(**gs)) < 0)
		return NULL;
	struct group *g = &(*gs)[(*n)++];
	*g = (struct group){.key = strdup(key)};
	return g->key ? g : NULL;
}

static void add_trigger(cJSON *s, const char *trigger)
{
	cJSON *md = get(s, "metadata"), *ann;
	if (!md)
		md = cJSON_AddObjectToObject(s, "metadata");
	if (!(ann = get(md, "annotations")) || !cJSON_IsObject(ann)) {
		cJSON_DeleteItemFromObjectCaseSensitive(md, "annotations");
		ann = cJSON_AddObjectToObject(md, "annotations");
	}
	cJSON_DeleteItemFromObjectCaseSensitive(ann, EPS_ANN_TRIGGER);
	if (trigger)
		cJSON_AddStringToObject(ann, EPS_ANN_TRIGGER, trigger);
}

/* upstream's hints step: the creates and updates get the mode's hints; the slices neither
 * updated nor deleted (by name, as unchangedSlices) whose hints are stale become updates */
static int reconcile_hints(const cJSON *svc, const cJSON **slices, size_t n_slices,
                           struct lists *out, struct lists_caps *caps)
{
	enum eps_hints mode = eps_hints_mode(svc);
	size_t n_update = out->n_update;

	for (size_t i = 0; i < n_slices; i++) {
		const char *name = str(get(slices[i], "metadata"), "name");
		if (named_in(name, out->update, n_update, out->del, out->n_del) ||
		    !eps_hints_stale(slices[i], mode))
			continue;
		if (push_update(out, caps, cJSON_Duplicate(slices[i], true)) < 0)
			return -ENOMEM;
	}
	for (size_t i = 0; i < out->n_create; i++)
		if (eps_hints_apply(out->create[i], mode) < 0)
			return -ENOMEM;
	for (size_t i = 0; i < out->n_update; i++)
		if (eps_hints_apply(out->update[i], mode) < 0)
			return -ENOMEM;
	return 0;
}

static int by_address_type(const cJSON *svc, const cJSON *const *pods, size_t n_pods,
                           const cJSON **slices, size_t n_slices, const char *trigger, int max,
                           unsigned at, eps_node_fn node, void *node_ud, struct eps_plan *plan)
{
	struct group *gs = NULL;
	size_t ng = 0, capg = 0;
	struct lists out = {0};
	struct lists_caps caps = {0};
	bool pnra = cJSON_IsTrue(get(get(svc, "spec"), "publishNotReadyAddresses"));
	const cJSON *smd = get(svc, "metadata");
	int r = -ENOMEM;

	/* existing state */
	for (size_t i = 0; i < n_slices; i++) {
		if (!owned_by(slices[i], svc)) {
			if (push_del(&out, &caps, slices[i]) < 0)
				goto out;
			continue;
		}
		char *k = port_map_key(get(slices[i], "ports"));
		struct group *g = k ? group_of(&gs, &ng, &capg, k) : NULL;
		free(k);
		if (!g || grow((void **)&g->have, g->n_have, &g->cap_have, sizeof(*g->have)) < 0)
			goto out;
		g->have[g->n_have++] = slices[i];
	}
	/* desired state */
	for (size_t i = 0; i < n_pods; i++) {
		const cJSON *pod = pods[i];
		const char *zone = NULL, *nn = str(get(pod, "spec"), "nodeName");
		if (!pod_should_be_in(pod))
			continue;
		cJSON *ports = endpoint_ports(svc, pod);
		char *k = ports ? port_map_key(ports) : NULL;
		struct group *g = k ? group_of(&gs, &ng, &capg, k) : NULL;
		free(k);
		if (!g) {
			cJSON_Delete(ports);
			goto out;
		}
		g->desired = true;
		if (!g->ports)
			g->ports = ports;
		else
			cJSON_Delete(ports);
		if (node(node_ud, nn ? nn : "", &zone) < 0) {
			zone = NULL;
			if (!pnra) {
				if (!plan->skipped_pods++)
					snprintf(plan->err, sizeof(plan->err),
					         "skipping Pod %s for Service %s/%s: Node %s Not "
					         "Found",
					         str0(get(pod, "metadata"), "name"),
					         str0(smd, "namespace"), str0(smd, "name"),
					         nn ? nn : "");
				continue;
			}
		}
		cJSON *ep = pod_to_endpoint(pod, zone, svc, at);
		if (!ep)
			goto out;
		if (cJSON_GetArraySize(get(ep, "addresses")) == 0) {
			cJSON_Delete(ep);
			continue;
		}
		char *ek = endpoint_key(ep);
		if (!ek || eset_insert(&g->want, ek, ep) < 0) {
			free(ek);
			cJSON_Delete(ep);
			goto out;
		}
	}
	for (size_t i = 0; i < ng; i++)
		eset_seal(&gs[i].want);
	/* each desired port mapping */
	for (size_t i = 0; i < ng; i++)
		if (gs[i].desired && by_port_mapping(svc, &gs[i], at, max, &out, &caps) < 0)
			goto out;
	/* port mappings no longer desired */
	for (size_t i = 0; i < ng; i++)
		for (size_t j = 0; !gs[i].desired && j < gs[i].n_have; j++)
			if (push_del(&out, &caps, gs[i].have[j]) < 0)
				goto out;
	/* the placeholder */
	if (n_slices == out.n_del && out.n_create < 1) {
		cJSON *ph = new_slice(svc, NULL, at);
		if (!ph)
			goto out;
		if (out.n_del == 1 && placeholder_equal(out.del[0], ph)) {
			out.n_del = 0;
			cJSON_Delete(ph);
		} else if (push_create(&out, &caps, ph) < 0) {
			goto out;
		}
	}
	if (reconcile_hints(svc, slices, n_slices, &out, &caps) < 0)
		goto out;
	/* finalize: creates become updates of slices that would be deleted */
	for (size_t i = 0; i < out.n_del && out.n_create > 0;) {
		const cJSON *d = out.del[i];
		cJSON *c = out.create[out.n_create - 1];
		if (streq(str(d, "addressType"), str(c, "addressType")) && owned_by(d, svc)) {
			/* upstream sets the name and keeps generateName */
			cJSON_AddStringToObject((cJSON *)get(c, "metadata"), "name",
			                        str0(get(d, "metadata"), "name"));
			out.n_create--;
			if (push_update(&out, &caps, c) < 0)
				goto out;
			memmove(&out.del[i], &out.del[i + 1],
			        (out.n_del - i - 1) * sizeof(*out.del));
			out.n_del--;
		} else {
			i++;
		}
	}
	/* no creates while the Service is being deleted (the GC would race them) */
	const cJSON *dts = get(smd, "deletionTimestamp");
	bool deleting = dts && !cJSON_IsNull(dts);
	for (size_t i = 0; i < out.n_create; i++) {
		if (deleting) {
			cJSON_Delete(out.create[i]);
		} else {
			add_trigger(out.create[i], trigger);
			if (plan_add(plan, EPS_CREATE, out.create[i]) < 0)
				goto fail_from_create;
		}
		out.create[i] = NULL;
		continue;
	fail_from_create:
		out.create[i] = NULL;
		goto out;
	}
	out.n_create = 0;
	for (size_t i = 0; i < out.n_update; i++) {
		add_trigger(out.update[i], trigger);
		cJSON *u = out.update[i];
		out.update[i] = NULL;
		if (plan_add(plan, EPS_UPDATE, u) < 0)
			goto out;
	}
	out.n_update = 0;
	for (size_t i = 0; i < out.n_del; i++)
		if (plan_add(plan, EPS_DELETE, cJSON_Duplicate(out.del[i], true)) < 0)
			goto out;
	r = 0;
out:
	for (size_t i = 0; i < out.n_create; i++)
		cJSON_Delete(out.create[i]);
	for (size_t i = 0; i < out.n_update; i++)
		cJSON_Delete(out.update[i]);
	free(out.create);
	free(out.update);
	free(out.del);
	for (size_t i = 0; i < ng; i++) {
		free(gs[i].key);
		cJSON_Delete(gs[i].ports);
		eset_free(&gs[i].want);
		free(gs[i].have);
	}
	free(gs);
	return r;
}

int eps_reconcile(const cJSON *svc, const cJSON *const *pods, size_t n_pods,
                  const cJSON *const *slices, size_t n_slices, const char *trigger,
                  int max_per_slice, eps_node_fn node, void *node_ud, struct eps_plan *ret)
{
	unsigned types = address_types(svc);
	const cJSON **by = calloc(n_slices + 1, sizeof(*by));
	int r = 0;

	*ret = (struct eps_plan){0};
	if (!by)
		return -ENOMEM;
	if (max_per_slice < 1)
		max_per_slice = 1;
	for (unsigned at = 1; at <= 2 && r == 0; at++) {
		size_t n = 0;
		if (!(types & at))
			continue;
		for (size_t i = 0; i < n_slices; i++)
			if (streq(str(slices[i], "addressType"), at_name(at)))
				by[n++] = slices[i];
		r = by_address_type(svc, pods, n_pods, by, n, trigger, max_per_slice, at, node,
		                    node_ud, ret);
	}
	/* slices of an address type the Service does not have (also the legacy "FQDN"/"IP") */
	for (size_t i = 0; i < n_slices && r == 0; i++) {
		const char *t = str(slices[i], "addressType");
		bool keep = (streq(t, "IPv4") && (types & 1)) || (streq(t, "IPv6") && (types & 2));
		if (!keep)
			r = plan_add(ret, EPS_DELETE, cJSON_Duplicate(slices[i], true));
	}
	free(by);
	return r;
}
