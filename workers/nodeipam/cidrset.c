/* SPDX-License-Identifier: Apache-2.0 */
/* workers/nodeipam/cidrset.c: CIDRs, the range allocator's CIDR set and kcm's start-up checks
 * of the node IPAM flags (cidrset.h). */
#include "workers/nodeipam/cidrset.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- CIDRs ---------------------------------------------------------------------------------- */
static int bits_of(const struct ipam_cidr *c)
{
	return c->v4 ? 32 : 128;
}

static int bit_at(const uint8_t *ip, int pos)
{
	return (ip[pos / 8] >> (7 - pos % 8)) & 1;
}

static void set_bit_at(uint8_t *ip, int pos, int v)
{
	if (v)
		ip[pos / 8] |= (uint8_t)(1u << (7 - pos % 8));
	else
		ip[pos / 8] &= (uint8_t) ~(1u << (7 - pos % 8));
}

/* the address with every bit from prefix on cleared */
static void mask_to(uint8_t *ip, int bits, int prefix)
{
	for (int p = prefix; p < bits; p++)
		set_bit_at(ip, p, 0);
}

/* Go's dtoi: decimal digits (leading zeros allowed), at least one; *end after them */
static int dtoi(const char *s, long *n, const char **end)
{
	long v = 0;
	const char *p = s;

	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (*p - '0');
		if (v >= 0xFFFFFF)
			return -EINVAL;
		p++;
	}
	if (p == s)
		return -EINVAL;
	*n = v, *end = p;
	return 0;
}

static int parse_v4(const char *s, size_t len, uint8_t out[4])
{
	const char *p = s, *e = s + len;

	for (int i = 0; i < 4; i++) {
		long n;
		const char *q;
		if (i > 0) {
			if (p >= e || *p != '.')
				return -EINVAL;
			p++;
		}
		if (p >= e || dtoi(p, &n, &q) < 0 || q > e || n > 0xFF)
			return -EINVAL;
		out[i] = (uint8_t)n;
		p = q;
	}
	return p == e ? 0 : -EINVAL;
}

int ipam_cidr_parse(const char *s, struct ipam_cidr *out)
{
	const char *slash = s ? strchr(s, '/') : NULL, *end;
	char addr[64];
	long prefix;

	memset(out, 0, sizeof(*out));
	if (!slash || (size_t)(slash - s) >= sizeof(addr))
		return -EINVAL;
	memcpy(addr, s, (size_t)(slash - s));
	addr[slash - s] = 0;
	if (parse_v4(addr, strlen(addr), out->ip) == 0)
		out->v4 = true;
	else if (!strchr(addr, ':') || inet_pton(AF_INET6, addr, out->ip) != 1)
		return -EINVAL;
	if (dtoi(slash + 1, &prefix, &end) < 0 || *end || prefix > bits_of(out))
		return -EINVAL;
	out->prefix = (int)prefix;
	mask_to(out->ip, bits_of(out), out->prefix);
	return 0;
}

int ipam_cidr_format(const struct ipam_cidr *c, char *buf, size_t n)
{
	char a[INET6_ADDRSTRLEN];
	int w;

	if (!inet_ntop(c->v4 ? AF_INET : AF_INET6, c->ip, a, sizeof(a)))
		return -ENOSPC;
	w = snprintf(buf, n, "%s/%d", a, c->prefix);
	return w < 0 || (size_t)w >= n ? -ENOSPC : 0;
}

/* IPNet.Contains(ip): same family and ip masked to the network is its address */
static bool contains(const struct ipam_cidr *net, const uint8_t *ip, bool v4)
{
	uint8_t m[16];

	if (net->v4 != v4)
		return false;
	memcpy(m, ip, 16);
	mask_to(m, bits_of(net), net->prefix);
	return memcmp(m, net->ip, (size_t)bits_of(net) / 8) == 0;
}

/* ---- the set ----------------------------------------------------------------------------- */
int ipam_cidrset_init(struct ipam_cidrset *s, const struct ipam_cidr *cluster, int node_mask)
{
	int diff = node_mask - cluster->prefix;

	memset(s, 0, sizeof(*s));
	if (!cluster->v4 && diff > 16)
		return -E2BIG;
	if (diff < 0 || node_mask > bits_of(cluster) || diff > 32)
		return -EINVAL;
	s->cluster = *cluster;
	s->node_mask = node_mask;
	s->max = 1ull << diff;
	return 0;
}

void ipam_cidrset_free(struct ipam_cidrset *s)
{
	free(s->used);
	s->used = NULL;
	s->used_len = 0;
}

bool ipam_cidrset_used(const struct ipam_cidrset *s, uint64_t i)
{
	return i / 8 < s->used_len && (s->used[i / 8] >> (i % 8)) & 1;
}

static int mark(struct ipam_cidrset *s, uint64_t i, bool v)
{
	if (i / 8 >= s->used_len) {
		if (!v)
			return 0;
		size_t want = s->used_len ? s->used_len : 64;
		while (want <= i / 8)
			want *= 2;
		uint8_t *u = realloc(s->used, want);
		if (!u)
			return -ENOMEM;
		memset(u + s->used_len, 0, want - s->used_len);
		s->used = u, s->used_len = want;
	}
	if (v)
		s->used[i / 8] |= (uint8_t)(1u << (i % 8));
	else
		s->used[i / 8] &= (uint8_t) ~(1u << (i % 8));
	return 0;
}

/* indexToCIDRBlock */
void ipam_cidrset_cidr(const struct ipam_cidrset *s, uint64_t index, struct ipam_cidr *out)
{
	int diff = s->node_mask - s->cluster.prefix;

	*out = s->cluster;
	out->prefix = s->node_mask;
	for (int j = 0; j < diff; j++)
		if ((index >> j) & 1)
			set_bit_at(out->ip, s->node_mask - 1 - j, 1);
}

/* getIndexForIP: the bits of (cluster XOR ip) above the node prefix's end, as Go computes them
 * (for IPv6, the low 64 bits of the shifted value) */
int ipam_cidrset_index(const struct ipam_cidrset *s, const uint8_t *ip, uint64_t *ret)
{
	uint8_t x[16];
	uint64_t v = 0;
	int start = 0;

	for (int i = 0; i < 16; i++)
		x[i] = s->cluster.ip[i] ^ ip[i];
	if (!s->cluster.v4 && s->node_mask > 64)
		start = s->node_mask - 64;
	for (int p = start; p < s->node_mask; p++)
		v = v << 1 | (uint64_t)bit_at(x, p);
	if (v >= s->max)
		return -ERANGE;
	*ret = v;
	return 0;
}

/* getBeginningAndEndIndices */
int ipam_cidrset_range(const struct ipam_cidrset *s, const struct ipam_cidr *c, uint64_t *begin,
                       uint64_t *end)
{
	uint8_t a[16], b[16];
	int bits = bits_of(&s->cluster);
	int r;

	memcpy(a, c->ip, 16);
	mask_to(a, bits, s->cluster.prefix);
	memcpy(b, s->cluster.ip, 16);
	if (c->v4 == s->cluster.v4)
		mask_to(b, bits, c->prefix);
	if (!contains(&s->cluster, a, c->v4) && !contains(c, b, s->cluster.v4))
		return -ERANGE;
	*begin = 0, *end = s->max - 1;
	if (s->cluster.prefix < c->prefix) {
		memcpy(a, c->ip, 16);
		mask_to(a, bits, s->node_mask);
		if ((r = ipam_cidrset_index(s, a, begin)) < 0)
			return r;
		memcpy(b, c->ip, 16);
		for (int p = c->prefix; p < bits; p++)
			set_bit_at(b, p, 1);
		mask_to(b, bits, s->node_mask);
		if ((r = ipam_cidrset_index(s, b, end)) < 0)
			return r;
	}
	return 0;
}

int ipam_cidrset_allocate(struct ipam_cidrset *s, struct ipam_cidr *out, uint64_t *tries)
{
	uint64_t candidate = s->next, i;
	int r;

	if (s->allocated == s->max)
		return -ENOSPC;
	for (i = 0; i < s->max; i++) {
		if (!ipam_cidrset_used(s, candidate))
			break;
		candidate = (candidate + 1) % s->max;
	}
	if ((r = mark(s, candidate, true)) < 0)
		return r;
	s->next = (candidate + 1) % s->max;
	s->allocated++;
	if (tries)
		*tries = i;
	ipam_cidrset_cidr(s, candidate, out);
	return 0;
}

static int set_range(struct ipam_cidrset *s, const struct ipam_cidr *c, bool v, uint64_t *changed)
{
	uint64_t begin, end, n = 0;
	int r = ipam_cidrset_range(s, c, &begin, &end);

	if (changed)
		*changed = 0;
	if (r < 0)
		return r;
	for (uint64_t i = begin; i <= end; i++) {
		if (ipam_cidrset_used(s, i) == v)
			continue;
		if ((r = mark(s, i, v)) < 0)
			return r;
		n++;
		if (v)
			s->allocated++;
		else
			s->allocated--;
	}
	if (changed)
		*changed = n;
	return 0;
}

int ipam_cidrset_occupy(struct ipam_cidrset *s, const struct ipam_cidr *c, uint64_t *changed)
{
	return set_range(s, c, true, changed);
}

int ipam_cidrset_release(struct ipam_cidrset *s, const struct ipam_cidr *c, uint64_t *changed)
{
	return set_range(s, c, false, changed);
}

/* ---- kcm's start-up checks ------------------------------------------------------------------ */
static int fail(char *err, size_t errlen, const char *fmt, const char *a, long n)
{
	snprintf(err, errlen, fmt, a ? a : "", n);
	return -EINVAL;
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
		s[--n] = 0;
	return s;
}

/* setNodeCIDRMaskSizes */
static int mask_sizes(const struct ipam_flags *f, struct ipam_config *c, char *err, size_t errlen)
{
	int v4 = 24, v6 = 64;
	bool dual = c->n_cluster > 1, single6 = !c->cluster[0].v4;

	if (dual) {
		if (f->node_cidr_mask_size != 0)
			return fail(err, errlen,
			            "usage of --node-cidr-mask-size is not allowed with dual-stack "
			            "clusters%s",
			            NULL, 0);
		if (f->node_cidr_mask_size_ipv4 != 0)
			v4 = (int)f->node_cidr_mask_size_ipv4;
		if (f->node_cidr_mask_size_ipv6 != 0)
			v6 = (int)f->node_cidr_mask_size_ipv6;
	} else if (f->node_cidr_mask_size != 0) {
		if (f->node_cidr_mask_size_ipv4 != 0 || f->node_cidr_mask_size_ipv6 != 0)
			return fail(
			        err, errlen,
			        "usage of --node-cidr-mask-size-ipv4 and "
			        "--node-cidr-mask-size-ipv6 "
			        "is not allowed if --node-cidr-mask-size is set. For dual-stack "
			        "clusters please unset it and use IPFamily specific flags%s",
			        NULL, 0);
		v4 = v6 = (int)f->node_cidr_mask_size;
	} else {
		if (f->node_cidr_mask_size_ipv4 != 0) {
			if (single6)
				return fail(
				        err, errlen,
				        "usage of --node-cidr-mask-size-ipv4 is not allowed for a "
				        "single-stack IPv6 cluster%s",
				        NULL, 0);
			v4 = (int)f->node_cidr_mask_size_ipv4;
		}
		if (f->node_cidr_mask_size_ipv6 != 0) {
			if (!single6)
				return fail(
				        err, errlen,
				        "usage of --node-cidr-mask-size-ipv6 is not allowed for a "
				        "single-stack IPv4 cluster%s",
				        NULL, 0);
			v6 = (int)f->node_cidr_mask_size_ipv6;
		}
	}
	for (int i = 0; i < c->n_cluster; i++)
		c->mask[i] = c->cluster[i].v4 ? v4 : v6;
	return 0;
}

int ipam_config(const struct ipam_flags *f, struct ipam_config *c, char *err, size_t errlen,
                char *warn, size_t warnlen)
{
	char buf[1024];
	int n = 0, r;

	memset(c, 0, sizeof(*c));
	if (warnlen)
		warn[0] = 0;
	/* kcm's option validation, before any controller: at most two service ranges */
	int commas = 0;
	for (const char *q = f->service_cluster_ip_range; q && *q; q++)
		commas += *q == ',';
	if (commas > 1)
		return fail(err, errlen,
		            "--service-cluster-ip-range can not contain more than two entries%s",
		            NULL, 0);
	if (!f->allocate_node_cidrs) {
		snprintf(err, errlen, "%s is not started: --allocate-node-cidrs is false",
		         IPAM_CONTROLLER);
		return -ECANCELED;
	}
	const char *type = f->cidr_allocator_type ? f->cidr_allocator_type : "RangeAllocator";
	if (!strcmp(type, "CloudAllocator"))
		return fail(
		        err, errlen,
		        "--cidr-allocator-type is set to 'CloudAllocator' but cloud provider is "
		        "not configured%s",
		        NULL, 0);
	/* validateCIDRs: every comma-separated entry parses; more than one must be dual-stack */
	snprintf(buf, sizeof(buf), "%s", f->cluster_cidr ? f->cluster_cidr : "");
	bool seen4 = false, seen6 = false;
	for (char *item = trim(buf); item;) {
		char *e = strchr(item, ',');
		if (e)
			*e = 0;
		struct ipam_cidr one;
		if (ipam_cidr_parse(item, &one) < 0) {
			snprintf(err, errlen, "invalid CIDR[%d]: <nil> (invalid CIDR address: %s)",
			         n, item);
			return -EINVAL;
		}
		seen4 |= one.v4, seen6 |= !one.v4;
		if (n < 2)
			c->cluster[n] = one;
		n++;
		item = e ? e + 1 : NULL;
	}
	/* IsDualStackCIDRs: at least one of each family */
	if (n > 1 && !(seen4 && seen6))
		return fail(
		        err, errlen,
		        "len of ClusterCIDRs==%s%ld and they are not configured as dual stack (at "
		        "least one from each IPFamily",
		        NULL, n);
	if (n > 2)
		return fail(err, errlen,
		            "length of clusterCIDRs is:%s%ld more than max allowed of 2", NULL, n);
	c->n_cluster = n;
	/* --service-cluster-ip-range: up to two ranges; a bad one is only a warning */
	snprintf(buf, sizeof(buf), "%s",
	         f->service_cluster_ip_range ? f->service_cluster_ip_range : "");
	int ns = 0;
	char *list[3] = {NULL};
	for (char *q = buf; q && ns < 3; ns++) {
		list[ns] = q;
		char *e = strchr(q, ',');
		if (e)
			*e = 0;
		q = e ? e + 1 : NULL;
	}
	for (int i = 0; i < ns && i < 2; i++) {
		char *v = trim(list[i]);
		if (!*v)
			continue;
		if (ipam_cidr_parse(v, &c->svc[i]) == 0)
			c->has_svc[i] = true;
		else if (warnlen)
			snprintf(warn, warnlen,
			         "Warning: unsuccessful parsing of service CIDR CIDR=\"%s\" "
			         "err=\"invalid CIDR address: %s\"",
			         v, v);
	}
	if (c->has_svc[0] && c->has_svc[1] && c->svc[0].v4 == c->svc[1].v4)
		return fail(
		        err, errlen,
		        "serviceCIDR and secondaryServiceCIDR are not dualstack (from different "
		        "IPfamiles)%s",
		        NULL, 0);
	if ((r = mask_sizes(f, c, err, errlen)) < 0)
		return r;
	for (int i = 0; i < c->n_cluster; i++)
		if (c->cluster[i].prefix > c->mask[i])
			return fail(err, errlen,
			            "Controller: Invalid --cluster-cidr, mask size of cluster CIDR "
			            "must "
			            "be less than or equal to --node-cidr-mask-size configured for "
			            "CIDR "
			            "family%s",
			            NULL, 0);
	if (!strcmp(type, "IPAMFromCluster") || !strcmp(type, "IPAMFromCloud"))
		return fail(
		        err, errlen,
		        "Error trying to Init(): legacy cloud provider support disabled at build "
		        "time%s",
		        NULL, 0);
	if (strcmp(type, "RangeAllocator"))
		return fail(err, errlen, "invalid CIDR allocator type: %s%.0ld", type, 0);
	for (int i = 0; i < c->n_cluster; i++) {
		struct ipam_cidrset s;
		r = ipam_cidrset_init(&s, &c->cluster[i], c->mask[i]);
		if (r == -E2BIG)
			return fail(err, errlen,
			            "New CIDR set failed; the node CIDR size is too big%s", NULL,
			            0);
		if (r < 0)
			return fail(err, errlen,
			            "invalid node CIDR mask size %s%ld for the cluster CIDR", NULL,
			            c->mask[i]);
	}
	return 0;
}
