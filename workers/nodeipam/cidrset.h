/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/nodeipam/cidrset.h: the node-ipam-controller's pure parts: CIDRs as kcm parses and
 * prints them, the range allocator's CIDR set, and kcm's start-up validation of the flags.
 *
 * Design note.
 *   Upstream's CidrSet (pkg/controller/nodeipam/ipam/cidrset/cidr_set.go, v1.37.2) hands out the
 *   node-sized subnets of one cluster CIDR: index i is the cluster address with i written into
 *   the bits between the cluster prefix and the node prefix. A bit set marks the used ones;
 *   AllocateNext takes the first free index at or after the one after the last allocation
 *   (wrapping), Occupy and Release mark every index a CIDR covers (a CIDR smaller than a node
 *   subnet covers the one holding it; one larger than the cluster covers all). IPv6 sets hold at
 *   most 2^16 subnets (the node prefix at most 16 bits longer than the cluster's); IPv4 sets up
 *   to 2^32. The bit set grows to the highest index marked, as Go's big.Int does, so a large
 *   range costs memory only as it fills.
 *   kcm's start-up (newNodeIpamController, validateCIDRs, setNodeCIDRMaskSizes and the
 *   allocator's constructor) checks the flags in a fixed order and refuses to start on the
 *   first error; ipam_config does the same checks in the same order with the same messages.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IPAM_CONTROLLER "node-ipam-controller"
#define IPAM_QUEUE      "cidrallocator_node"
#define IPAM_RELEASE    "release:" /* key prefix: release:<node>:<cidr>[,<cidr>] */

/* An IP network: ip holds the network address (4 bytes used for IPv4), prefix its length. */
struct ipam_cidr {
	uint8_t ip[16];
	int prefix;
	bool v4;
};

/* netutils.ParseCIDRSloppy: "a.b.c.d/n" (leading zeros allowed in the octets) or an IPv6
 * address "/n"; the result is the network (address masked). 0 or -EINVAL. */
int ipam_cidr_parse(const char *s, struct ipam_cidr *out);
/* Go's IPNet.String(): "10.0.1.0/24", "fd00:1::/64". 0 or -ENOSPC. */
int ipam_cidr_format(const struct ipam_cidr *c, char *buf, size_t n);

struct ipam_cidrset {
	struct ipam_cidr cluster;
	int node_mask;
	uint64_t max, allocated, next;
	uint8_t *used; /* bit i of index i; grows */
	size_t used_len;
};

/* NewCIDRSet: -E2BIG ("the node CIDR size is too big": IPv6 and more than 16 bits between the
 * prefixes), -EINVAL (node prefix shorter than the cluster's or longer than the family),
 * -ENOMEM. */
int ipam_cidrset_init(struct ipam_cidrset *s, const struct ipam_cidr *cluster, int node_mask);
void ipam_cidrset_free(struct ipam_cidrset *s);
/* AllocateNext: 0 with *out, -ENOSPC (no CIDRs left), -ENOMEM. *tries gets upstream's count. */
int ipam_cidrset_allocate(struct ipam_cidrset *s, struct ipam_cidr *out, uint64_t *tries);
/* Occupy / Release: 0, -ERANGE (outside the cluster CIDR, or past the allocator's range),
 * -ENOMEM. *changed (may be NULL) gets how many indexes changed state. */
int ipam_cidrset_occupy(struct ipam_cidrset *s, const struct ipam_cidr *c, uint64_t *changed);
int ipam_cidrset_release(struct ipam_cidrset *s, const struct ipam_cidr *c, uint64_t *changed);
bool ipam_cidrset_used(const struct ipam_cidrset *s, uint64_t index);
/* indexToCIDRBlock, getIndexForIP (ip: 16 bytes, 4 used for IPv4; -ERANGE past the range) and
 * getBeginningAndEndIndices (-ERANGE outside the cluster CIDR), for the tests and the sync. */
void ipam_cidrset_cidr(const struct ipam_cidrset *s, uint64_t index, struct ipam_cidr *out);
int ipam_cidrset_index(const struct ipam_cidrset *s, const uint8_t *ip, uint64_t *ret);
int ipam_cidrset_range(const struct ipam_cidrset *s, const struct ipam_cidr *c, uint64_t *begin,
                       uint64_t *end);

/* kcm's node IPAM configuration, validated. */
struct ipam_config {
	int n_cluster;
	struct ipam_cidr cluster[2];
	int mask[2]; /* node prefix per cluster CIDR */
	bool has_svc[2];
	struct ipam_cidr svc[2]; /* --service-cluster-ip-range's (up to) two ranges */
};

struct ipam_flags {
	bool allocate_node_cidrs;
	const char *cidr_allocator_type, *cluster_cidr, *service_cluster_ip_range;
	int64_t node_cidr_mask_size, node_cidr_mask_size_ipv4, node_cidr_mask_size_ipv6;
};

/* 0 with *c filled; -ECANCELED when --allocate-node-cidrs is false (kcm does not run the
 * controller); -EINVAL with kcm's message in err for a configuration kcm refuses to start with.
 * Warnings kcm only logs (an unparsable service range) go to warn (may be empty). */
int ipam_config(const struct ipam_flags *f, struct ipam_config *c, char *err, size_t errlen,
                char *warn, size_t warnlen);
