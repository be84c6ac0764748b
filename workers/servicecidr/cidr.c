/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/servicecidr/cidr.c: see cidr.h.
 */
#include "workers/servicecidr/cidr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const cJSON *get(const cJSON *o, const char *k)
{
	return o ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = get(o, k);
	return cJSON_IsString(v) ? v->valuestring : "";
}

int scc_parse_addr(const char *s, struct scc_prefix *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (!s || !*s || strchr(s, '%'))
		return -EINVAL;
	if (!strchr(s, ':')) {
		/* netip: four decimal fields, no leading zeros, each <= 255 */
		const char *p = s;
		for (int i = 0; i < 4; i++) {
			unsigned v = 0, digits = 0;
			if (i && *p++ != '.')
				return -EINVAL;
			if (p[0] == '0' && p[1] >= '0' && p[1] <= '9')
				return -EINVAL;
			while (*p >= '0' && *p <= '9') {
				v = v * 10 + (unsigned)(*p++ - '0');
				if (++digits > 3 || v > 255)
					return -EINVAL;
			}
			if (!digits)
				return -EINVAL;
			ret->a[i] = (unsigned char)v;
		}
		if (*p)
			return -EINVAL;
		ret->v4 = true;
		ret->bits = 32;
		return 0;
	}
	if (inet_pton(AF_INET6, s, ret->a) != 1)
		return -EINVAL;
	ret->bits = 128;
	return 0;
}

int scc_parse_prefix(const char *s, struct scc_prefix *ret)
{
	char buf[64];
	const char *slash = s ? strrchr(s, '/') : NULL;
	size_t l;
	int bits = 0, digits = 0;

	if (!slash || (l = (size_t)(slash - s)) >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, l);
	buf[l] = 0;
	if (scc_parse_addr(buf, ret) < 0)
		return -EINVAL;
	for (const char *p = slash + 1; *p; p++) {
		if (*p < '0' || *p > '9' || ++digits > 3)
			return -EINVAL;
		bits = bits * 10 + (*p - '0');
	}
	/* netip: no leading zero in the length ("/08" is refused) */
	if (!digits || (digits > 1 && slash[1] == '0') || bits > (ret->v4 ? 32 : 128))
		return -EINVAL;
	ret->bits = bits;
	return 0;
}

static int nbytes(const struct scc_prefix *p)
{
	return p->v4 ? 4 : 16;
}

/* the first `bits` bits of a and b are equal */
static bool same_bits(const unsigned char *a, const unsigned char *b, int bits)
{
	int full = bits / 8, rest = bits % 8;
	if (memcmp(a, b, (size_t)full))
		return false;
	if (!rest)
		return true;
	unsigned char m = (unsigned char)(0xff << (8 - rest));
	return (a[full] & m) == (b[full] & m);
}

bool scc_overlaps(const struct scc_prefix *a, const struct scc_prefix *b)
{
	if (a->v4 != b->v4)
		return false;
	return same_bits(a->a, b->a, a->bits < b->bits ? a->bits : b->bits);
}

bool scc_prefix_contains_ip(const struct scc_prefix *p, const struct scc_prefix *ip)
{
	unsigned char net[16] = {0}, bc[16];
	int n = nbytes(p);

	if (p->v4 != ip->v4 || !same_bits(p->a, ip->a, p->bits))
		return false;
	for (int i = 0; i < n; i++) {
		int b = p->bits - 8 * i;
		unsigned char m = b >= 8 ? 0xff : b <= 0 ? 0 : (unsigned char)(0xff << (8 - b));
		net[i] = p->a[i] & m;
		bc[i] = (unsigned char)(net[i] | (unsigned char)~m);
	}
	if (!memcmp(net, ip->a, (size_t)n))
		return false;
	if (p->v4 && !memcmp(bc, ip->a, 4))
		return false;
	return true;
}

const char *scc_cidr_family(const char *cidr)
{
	struct scc_prefix p;
	const char *slash = cidr ? strrchr(cidr, '/') : NULL;
	char buf[64];
	unsigned char a[16];
	size_t l;

	if (scc_parse_prefix(cidr, &p) == 0) {
		/* net.ParseCIDR: an IPv4-mapped IPv6 prefix of /96 or longer is IPv4 */
		if (!p.v4 && p.bits >= 96) {
			static const unsigned char mapped[12] = {0, 0, 0, 0, 0,    0,
			                                         0, 0, 0, 0, 0xff, 0xff};
			if (!memcmp(p.a, mapped, 12))
				return "IPv4";
		}
		return p.v4 ? "IPv4" : "IPv6";
	}
	/* ParseCIDRSloppy also takes IPv4 fields with leading zeros */
	if (slash && (l = (size_t)(slash - cidr)) < sizeof(buf)) {
		memcpy(buf, cidr, l);
		buf[l] = 0;
		if (!strchr(buf, ':') && strchr(buf, '.') && inet_aton(buf, (struct in_addr *)a))
			return "IPv4";
	}
	return "";
}

static bool name_in(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

size_t scc_overlapping(const cJSON *cidr, const cJSON *const *all, size_t n, const char **ret_names)
{
	const cJSON *c, *o;
	size_t k = 0;
	cJSON_ArrayForEach(c, get(get(cidr, "spec"), "cidrs"))
	{
		struct scc_prefix p, q;
		if (!cJSON_IsString(c) || scc_parse_prefix(c->valuestring, &p) < 0)
			continue;
		for (size_t i = 0; i < n; i++) {
			const char *name = str(get(all[i], "metadata"), "name");
			cJSON_ArrayForEach(o, get(get(all[i], "spec"), "cidrs"))
			{
				if (cJSON_IsString(o) &&
				    scc_parse_prefix(o->valuestring, &q) == 0 &&
				    scc_overlaps(&q, &p) && !name_in(ret_names, k, name) && k < n)
					ret_names[k++] = name;
			}
		}
	}
	return k;
}

size_t scc_containing(const char *ip, const cJSON *const *all, size_t n, const char **ret_names)
{
	struct scc_prefix a, q;
	const cJSON *o;
	size_t k = 0;
	if (scc_parse_addr(ip, &a) < 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		const char *name = str(get(all[i], "metadata"), "name");
		cJSON_ArrayForEach(o, get(get(all[i], "spec"), "cidrs"))
		{
			if (cJSON_IsString(o) && scc_parse_prefix(o->valuestring, &q) == 0 &&
			    scc_prefix_contains_ip(&q, &a) && !name_in(ret_names, k, name) && k < n)
				ret_names[k++] = name;
		}
	}
	return k;
}

/* ContainsPrefix: (ServiceCIDR, CIDR) pairs with a CIDR that contains p; counts them and
 * whether the only one is `self` */
static size_t containing_prefix(const struct scc_prefix *p, const cJSON *const *all, size_t n,
                                const char *self, bool *only_self)
{
	const cJSON *o;
	struct scc_prefix q;
	size_t k = 0;
	*only_self = false;
	for (size_t i = 0; i < n; i++) {
		cJSON_ArrayForEach(o, get(get(all[i], "spec"), "cidrs"))
		{
			if (cJSON_IsString(o) && scc_parse_prefix(o->valuestring, &q) == 0 &&
			    scc_overlaps(&q, p) && q.bits <= p->bits) {
				k++;
				*only_self = k == 1 &&
				             !strcmp(str(get(all[i], "metadata"), "name"), self);
			}
		}
	}
	return k;
}

bool scc_can_delete(const cJSON *cidr, const cJSON *const *all, size_t n,
                    const char *const *ip_names, size_t n_ips, scc_ip_label_fn label, void *ud)
{
	const char *self = str(get(cidr, "metadata"), "name");
	const cJSON *c;
	bool has_parent = true;

	cJSON_ArrayForEach(c, get(get(cidr, "spec"), "cidrs"))
	{
		struct scc_prefix p;
		bool only_self;
		if (!cJSON_IsString(c) || scc_parse_prefix(c->valuestring, &p) < 0)
			continue;
		size_t k = containing_prefix(&p, all, n, self, &only_self);
		if (k == 0 || (k == 1 && only_self))
			has_parent = false;
	}
	if (has_parent)
		return true;
	cJSON_ArrayForEach(c, get(get(cidr, "spec"), "cidrs"))
	{
		const char *fam = scc_cidr_family(cJSON_IsString(c) ? c->valuestring : "");
		for (size_t i = 0; i < n_ips; i++) {
			const char *f = label(ud, i, SCC_LABEL_FAMILY),
			           *m = label(ud, i, SCC_LABEL_MGD);
			struct scc_prefix a, q;
			const cJSON *o;
			size_t k = 0;
			bool mine = false;
			if (!f || strcmp(f, fam) || !m || strcmp(m, SCC_IPALLOCATOR))
				continue;
			if (scc_parse_addr(ip_names[i], &a) < 0)
				continue; /* [SHOULD NOT HAPPEN]: the name is validated */
			for (size_t j = 0; j < n; j++) {
				cJSON_ArrayForEach(o, get(get(all[j], "spec"), "cidrs"))
				{
					if (cJSON_IsString(o) &&
					    scc_parse_prefix(o->valuestring, &q) == 0 &&
					    scc_prefix_contains_ip(&q, &a)) {
						k++;
						mine = k == 1 &&
						       !strcmp(str(get(all[j], "metadata"), "name"),
						               self);
					}
				}
			}
			if (k == 1 && mine)
				return false;
		}
	}
	return true;
}

bool scc_condition_needed(const cJSON *cidr, const char *status, const char *reason,
                          const char *message)
{
	const cJSON *c;
	cJSON_ArrayForEach(c, get(get(cidr, "status"), "conditions"))
	{
		if (strcmp(str(c, "type"), "Ready"))
			continue;
		return strcmp(str(c, "status"), status) || strcmp(str(c, "reason"), reason) ||
		       strcmp(str(c, "message"), message);
	}
	return true;
}

char *scc_status_apply(const char *name, const char *status, const char *reason,
                       const char *message, const char *now)
{
	cJSON *o = cJSON_CreateObject(), *md, *st, *conds, *c;
	char *s = NULL;
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "kind", "ServiceCIDR");
	cJSON_AddStringToObject(o, "apiVersion", "networking.k8s.io/v1");
	if (!(md = cJSON_AddObjectToObject(o, "metadata")) ||
	    !(st = cJSON_AddObjectToObject(o, "status")) ||
	    !(conds = cJSON_AddArrayToObject(st, "conditions")) || !(c = cJSON_CreateObject()))
		goto out;
	cJSON_AddStringToObject(md, "name", name);
	cJSON_AddItemToArray(conds, c);
	cJSON_AddStringToObject(c, "type", "Ready");
	cJSON_AddStringToObject(c, "status", status);
	cJSON_AddStringToObject(c, "lastTransitionTime", now);
	cJSON_AddStringToObject(c, "reason", reason);
	cJSON_AddStringToObject(c, "message", message);
	s = cJSON_PrintUnformatted(o);
out:
	cJSON_Delete(o);
	return s;
}

bool scc_has_finalizer(const cJSON *cidr)
{
	const cJSON *f;
	cJSON_ArrayForEach(f, get(get(cidr, "metadata"), "finalizers"))
	{
		if (cJSON_IsString(f) && !strcmp(f->valuestring, SCC_FINALIZER))
			return true;
	}
	return false;
}

static long long parse_time(const char *s)
{
	struct tm tm = {0};
	const char *end;
	if (!s || !(end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)))
		return 0;
	return (long long)timegm(&tm);
}

unsigned scc_decide(const cJSON *cidr, const cJSON *const *all, size_t n,
                    const char *const *ip_names, size_t n_ips, scc_ip_label_fn label, void *ud,
                    long long now, unsigned long long *ret_after_us)
{
	const cJSON *dt = get(get(cidr, "metadata"), "deletionTimestamp");
	unsigned out = 0;

	*ret_after_us = 0;
	if (cJSON_IsString(dt)) {
		if (!scc_can_delete(cidr, all, n, ip_names, n_ips, label, ud))
			return scc_condition_needed(cidr, "False", "Terminating", SCC_MSG_BLOCKED)
			               ? SCC_TERMINATING
			               : 0;
		long long left =
		        (long long)SCC_GRACE_US - (now - parse_time(dt->valuestring)) * 1000000ll;
		if (left > 0) {
			*ret_after_us = (unsigned long long)left;
			return SCC_REQUEUE;
		}
		return scc_has_finalizer(cidr) ? SCC_REMOVE_FINALIZER : 0;
	}
	if (!scc_has_finalizer(cidr))
		out |= SCC_ADD_FINALIZER;
	if (scc_condition_needed(cidr, "True", "", SCC_MSG_READY))
		out |= SCC_READY;
	return out;
}
