/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node IPAM controller's pure parts (workers/nodeipam/cidrset.h) with upstream's cases
 * (v1.37.2): cidr_set_test.go TestCIDRSetFullyAllocated, TestIndexToCIDRBlock (every case),
 * TestCIDRSet_AllocationOccupied, TestDoubleOccupyRelease, TestGetBitforCIDR (every case),
 * TestOccupy (every case), TestCIDRSetv6, Test_getMaxCIDRs; core_test.go's setNodeCIDRMaskSizes
 * cases and kcm's start-up errors (validateCIDRs, dual stack, allocator types).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workers/nodeipam/cidrset.h"

static struct ipam_cidr P(const char *s) {
	struct ipam_cidr c;
	assert_int_equal(ipam_cidr_parse(s, &c), 0);
	return c;
}

static const char *
F(const struct ipam_cidr *c)
{
	static char buf[4][64];
	static int k;
	char *b = buf[k++ % 4];
	assert_int_equal(ipam_cidr_format(c, b, 64), 0);
	return b;
}

static void test_parse(void **state)
{
	struct ipam_cidr c;
	(void)state;
	c = P("010.001.0.0/16"); /* sloppy: leading zeros */
	assert_string_equal(F(&c), "10.1.0.0/16");
	c = P("192.168.5.219/28");
	assert_string_equal(F(&c), "192.168.5.208/28");
	c = P("2001:0db8:85a3::8a2e:0370:7334/50");
	assert_string_equal(F(&c), "2001:db8:85a3::/50");
	assert_int_equal(ipam_cidr_parse("10.0.0.0/33", &c), -EINVAL);
	assert_int_equal(ipam_cidr_parse("10.0.0.0", &c), -EINVAL);
	assert_int_equal(ipam_cidr_parse("10.0.0.256/8", &c), -EINVAL);
	assert_int_equal(ipam_cidr_parse("10.0.0/8", &c), -EINVAL);
	assert_int_equal(ipam_cidr_parse("fd00::/129", &c), -EINVAL);
	assert_int_equal(ipam_cidr_parse("/8", &c), -EINVAL);
	assert_int_equal(ipam_cidr_parse("10.0.0.0/+8", &c), -EINVAL);
	assert_int_equal(ipam_cidr_parse("", &c), -EINVAL);
}

static void test_index_to_cidr(void **state)
{
	static const struct {
		const char *cluster;
		int mask;
		uint64_t index;
		const char *want;
	} tc[] = {
	        {"127.123.3.0/16", 24, 0, "127.123.0.0/24"},
	        {"127.123.0.0/16", 24, 15, "127.123.15.0/24"},
	        {"192.168.5.219/28", 32, 5, "192.168.5.213/32"},
	        {"2001:0db8:1234:3::/48", 64, 0, "2001:db8:1234::/64"},
	        {"2001:0db8:1234::/48", 64, 15, "2001:db8:1234:f::/64"},
	        {"2001:0db8:85a3::8a2e:0370:7334/50", 63, 6425, "2001:db8:85a3:3232::/63"},
	        {"2001:0db8::/32", 48, 0, "2001:db8::/48"},
	        {"2001:0db8::/32", 48, 15, "2001:db8:f::/48"},
	        {"2001:0db8:85a3::8a2e:0370:7334/32", 48, 6425, "2001:db8:1919::/48"},
	        {"2001:0db8:1234:ff00::/56", 72, 0, "2001:db8:1234:ff00::/72"},
	        {"2001:0db8:1234:ff00::/56", 72, 15, "2001:db8:1234:ff00:f00::/72"},
	        {"2001:0db8:1234:ff00::0370:7334/56", 72, 6425, "2001:db8:1234:ff19:1900::/72"},
	        {"2001:0db8:1234:0:1234::/80", 96, 0, "2001:db8:1234:0:1234::/96"},
	        {"2001:0db8:1234:0:1234::/80", 96, 15, "2001:db8:1234:0:1234:f::/96"},
	        {"2001:0db8:1234:ff00::0370:7334/80", 96, 6425, "2001:db8:1234:ff00:0:1919::/96"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
		struct ipam_cidrset s;
		struct ipam_cidr cl = P(tc[i].cluster), out;
		assert_int_equal(ipam_cidrset_init(&s, &cl, tc[i].mask), 0);
		ipam_cidrset_cidr(&s, tc[i].index, &out);
		assert_string_equal(F(&out), tc[i].want);
		ipam_cidrset_free(&s);
	}
}

static void test_fully_allocated(void **state)
{
	static const struct {
		const char *cluster;
		int mask;
		const char *want;
	} tc[] = {
	        {"127.123.234.0/30", 30, "127.123.234.0/30"},
	        {"beef:1234::/30", 30, "beef:1234::/30"},
	};
	(void)state;
	for (size_t i = 0; i < 2; i++) {
		struct ipam_cidrset s;
		struct ipam_cidr cl = P(tc[i].cluster), out;
		assert_int_equal(ipam_cidrset_init(&s, &cl, tc[i].mask), 0);
		assert_int_equal(ipam_cidrset_allocate(&s, &out, NULL), 0);
		assert_string_equal(F(&out), tc[i].want);
		assert_int_equal(ipam_cidrset_allocate(&s, &out, NULL), -ENOSPC);
		assert_int_equal(ipam_cidrset_release(&s, &out, NULL), 0);
		assert_int_equal(ipam_cidrset_allocate(&s, &out, NULL), 0);
		assert_string_equal(F(&out), tc[i].want);
		assert_int_equal(ipam_cidrset_allocate(&s, &out, NULL), -ENOSPC);
		ipam_cidrset_free(&s);
	}
}

/* TestCIDRSet_AllocationOccupied: the range /16 (256 /24s) with the middle 128 occupied by a
 * /17 whose end is 127.123.255.0: the first 128 allocations come from the free half, then none
 */
static void test_allocation_occupied(void **state)
{
	struct ipam_cidrset s;
	struct ipam_cidr cl = P("127.123.234.0/16"), out, occ = P("127.123.128.0/17");
	uint64_t changed;
	(void)state;
	assert_int_equal(ipam_cidrset_init(&s, &cl, 24), 0);
	assert_int_equal(ipam_cidrset_occupy(&s, &occ, &changed), 0);
	assert_int_equal(changed, 128);
	for (int i = 0; i < 128; i++) {
		assert_int_equal(ipam_cidrset_allocate(&s, &out, NULL), 0);
		char want[32];
		snprintf(want, sizeof(want), "127.123.%d.0/24", i);
		assert_string_equal(F(&out), want);
	}
	assert_int_equal(ipam_cidrset_allocate(&s, &out, NULL), -ENOSPC);
	/* release the occupied half: 128 more, from where the scan continues */
	assert_int_equal(ipam_cidrset_release(&s, &occ, &changed), 0);
	assert_int_equal(changed, 128);
	for (int i = 0; i < 128; i++)
		assert_int_equal(ipam_cidrset_allocate(&s, &out, NULL), 0);
	assert_int_equal(ipam_cidrset_allocate(&s, &out, NULL), -ENOSPC);
	ipam_cidrset_free(&s);
}

/* TestDoubleOccupyRelease: occupying twice and releasing twice keep the count right */
static void test_double_occupy_release(void **state)
{
	struct ipam_cidrset s;
	struct ipam_cidr cl = P("10.10.0.0/16"), a = P("10.10.1.0/24"), b = P("10.10.0.0/23");
	(void)state;
	assert_int_equal(ipam_cidrset_init(&s, &cl, 24), 0);
	assert_int_equal(ipam_cidrset_occupy(&s, &a, NULL), 0);
	assert_int_equal(ipam_cidrset_occupy(&s, &a, NULL), 0);
	assert_int_equal(s.allocated, 1);
	assert_int_equal(ipam_cidrset_occupy(&s, &b, NULL), 0);
	assert_int_equal(s.allocated, 2);
	assert_int_equal(ipam_cidrset_release(&s, &a, NULL), 0);
	assert_int_equal(ipam_cidrset_release(&s, &a, NULL), 0);
	assert_int_equal(s.allocated, 1);
	assert_int_equal(ipam_cidrset_release(&s, &b, NULL), 0);
	assert_int_equal(s.allocated, 0);
	ipam_cidrset_free(&s);
}

static void test_bit_for_cidr(void **state)
{
	static const struct {
		const char *cluster;
		int mask;
		const char *sub;
		long want; /* -1: error */
	} tc[] = {
	        {"127.0.0.0/8", 16, "127.0.0.0/16", 0},
	        {"be00::/8", 16, "be00::/16", 0},
	        {"127.0.0.0/8", 16, "127.123.0.0/16", 123},
	        {"be00::/8", 16, "beef::/16", 0xef},
	        {"127.0.0.0/8", 16, "127.168.0.0/16", 168},
	        {"be00::/8", 16, "be68::/16", 0x68},
	        {"127.0.0.0/8", 16, "127.224.0.0/16", 224},
	        {"be00::/8", 16, "be24::/16", 0x24},
	        {"192.168.0.0/16", 24, "192.168.12.0/24", 12},
	        {"beef::/16", 24, "beef:1200::/24", 0x12},
	        {"192.168.0.0/16", 24, "192.168.151.0/24", 151},
	        {"beef::/16", 24, "beef:9700::/24", 0x97},
	        {"192.168.0.0/16", 24, "127.168.224.0/24", -1},
	        {"beef::/16", 24, "2001:db00::/24", -1},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
		struct ipam_cidrset s;
		struct ipam_cidr cl = P(tc[i].cluster), sub = P(tc[i].sub);
		uint64_t got = 0;
		assert_int_equal(ipam_cidrset_init(&s, &cl, tc[i].mask), 0);
		int r = ipam_cidrset_index(&s, sub.ip, &got);
		if (tc[i].want < 0)
			assert_int_equal(r, -ERANGE);
		else {
			assert_int_equal(r, 0);
			assert_int_equal(got, tc[i].want);
		}
		ipam_cidrset_free(&s);
	}
}

static void test_occupy(void **state)
{
	static const struct {
		const char *cluster;
		int mask;
		const char *sub;
		uint64_t begin, end;
	} tc[] = {
	        {"127.0.0.0/8", 16, "127.0.0.0/8", 0, 255},
	        {"2001:beef:1200::/40", 48, "2001:beef:1200::/40", 0, 255},
	        {"127.0.0.0/8", 16, "127.0.0.0/2", 0, 255},
	        {"2001:beef:1200::/40", 48, "2001:beef:1234::/34", 0, 255},
	        {"127.0.0.0/8", 16, "127.0.0.0/16", 0, 0},
	        {"2001:beef:1200::/40", 48, "2001:beef:1200::/48", 0, 0},
	        {"127.0.0.0/8", 32, "127.0.0.0/16", 0, 65535},
	        {"2001:beef:1200::/48", 64, "2001:beef:1200::/48", 0, 65535},
	        {"127.0.0.0/7", 16, "127.0.0.0/15", 256, 257},
	        {"2001:beef:7f00::/39", 48, "2001:beef:7f00::/47", 256, 257},
	        {"127.0.0.0/7", 15, "127.0.0.0/15", 128, 128},
	        {"2001:beef:7f00::/39", 47, "2001:beef:7f00::/47", 128, 128},
	        {"127.0.0.0/7", 18, "127.0.0.0/15", 1024, 1031},
	        {"2001:beef:7f00::/39", 50, "2001:beef:7f00::/47", 1024, 1031},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
		struct ipam_cidrset s;
		struct ipam_cidr cl = P(tc[i].cluster), sub = P(tc[i].sub);
		assert_int_equal(ipam_cidrset_init(&s, &cl, tc[i].mask), 0);
		assert_int_equal(ipam_cidrset_occupy(&s, &sub, NULL), 0);
		for (uint64_t b = tc[i].begin; b <= tc[i].end; b++)
			assert_true(ipam_cidrset_used(&s, b));
		assert_int_equal(s.allocated, tc[i].end - tc[i].begin + 1);
		if (tc[i].begin > 0)
			assert_false(ipam_cidrset_used(&s, tc[i].begin - 1));
		assert_false(ipam_cidrset_used(&s, tc[i].end + 1));
		ipam_cidrset_free(&s);
	}
	/* another family, or outside the cluster: refused */
	struct ipam_cidrset s;
	struct ipam_cidr cl = P("10.0.0.0/16"), v6 = P("fd00::/64"), out = P("10.1.0.0/24");
	assert_int_equal(ipam_cidrset_init(&s, &cl, 24), 0);
	assert_int_equal(ipam_cidrset_occupy(&s, &v6, NULL), -ERANGE);
	assert_int_equal(ipam_cidrset_occupy(&s, &out, NULL), -ERANGE);
	ipam_cidrset_free(&s);
}

static void test_v6_and_max(void **state)
{
	struct ipam_cidrset s;
	struct ipam_cidr cl = P("127.0.0.0/8"), out;
	(void)state;
	assert_int_equal(ipam_cidrset_init(&s, &cl, 32), 0);
	assert_int_equal(s.max, 1ull << 24);
	assert_int_equal(ipam_cidrset_allocate(&s, &out, NULL), 0);
	assert_string_equal(F(&out), "127.0.0.0/32");
	assert_int_equal(ipam_cidrset_allocate(&s, &out, NULL), 0);
	assert_string_equal(F(&out), "127.0.0.1/32");
	ipam_cidrset_free(&s);
	cl = P("beef:1234::/32");
	assert_int_equal(ipam_cidrset_init(&s, &cl, 49), -E2BIG);
	cl = P("2001:beef:1234:369b::/60");
	assert_int_equal(ipam_cidrset_init(&s, &cl, 64), 0);
	assert_int_equal(ipam_cidrset_allocate(&s, &out, NULL), 0);
	assert_string_equal(F(&out), "2001:beef:1234:3690::/64");
	assert_int_equal(ipam_cidrset_allocate(&s, &out, NULL), 0);
	assert_string_equal(F(&out), "2001:beef:1234:3691::/64");
	ipam_cidrset_free(&s);
	/* Test_getMaxCIDRs */
	cl = P("10.0.0.0/8");
	assert_int_equal(ipam_cidrset_init(&s, &cl, 24), 0);
	assert_int_equal(s.max, 65536);
	ipam_cidrset_free(&s);
	cl = P("fd00::/48");
	assert_int_equal(ipam_cidrset_init(&s, &cl, 64), 0);
	assert_int_equal(s.max, 65536);
	ipam_cidrset_free(&s);
}

static int cfg(const char *cluster, const char *svc, int m, int m4, int m6, struct ipam_config *c,
               char *err)
{
	struct ipam_flags f = {.allocate_node_cidrs = true,
	                       .cidr_allocator_type = "RangeAllocator",
	                       .cluster_cidr = cluster,
	                       .service_cluster_ip_range = svc,
	                       .node_cidr_mask_size = m,
	                       .node_cidr_mask_size_ipv4 = m4,
	                       .node_cidr_mask_size_ipv6 = m6};
	char warn[256];
	return ipam_config(&f, c, err, 512, warn, sizeof(warn));
}

static void test_config(void **state)
{
	struct ipam_config c;
	char err[512];
	(void)state;

	/* setNodeCIDRMaskSizes (core_test.go) */
	assert_int_equal(cfg("10.0.0.0/16", "", 0, 0, 0, &c, err), 0);
	assert_int_equal(c.mask[0], 24);
	assert_int_equal(cfg("10.0.0.0/16", "", 28, 0, 0, &c, err), 0);
	assert_int_equal(c.mask[0], 28);
	assert_int_equal(cfg("10.0.0.0/16", "", 0, 26, 0, &c, err), 0);
	assert_int_equal(c.mask[0], 26);
	assert_int_equal(cfg("fd00::/48", "", 0, 0, 0, &c, err), 0);
	assert_int_equal(c.mask[0], 64);
	assert_int_equal(cfg("10.0.0.0/16,fd00::/48", "", 0, 0, 0, &c, err), 0);
	assert_int_equal(c.n_cluster, 2);
	assert_int_equal(c.mask[0], 24);
	assert_int_equal(c.mask[1], 64);
	assert_int_equal(cfg("10.0.0.0/16,fd00::/48", "", 0, 26, 60, &c, err), 0);
	assert_int_equal(c.mask[0], 26);
	assert_int_equal(c.mask[1], 60);
	assert_int_equal(cfg("10.0.0.0/16,fd00::/48", "", 24, 0, 0, &c, err), -EINVAL);
	assert_string_equal(err, "usage of --node-cidr-mask-size is not allowed with dual-stack "
	                         "clusters");
	assert_int_equal(cfg("10.0.0.0/16", "", 24, 24, 0, &c, err), -EINVAL);
	assert_int_equal(cfg("fd00::/48", "", 0, 24, 0, &c, err), -EINVAL);
	assert_string_equal(err, "usage of --node-cidr-mask-size-ipv4 is not allowed for a "
	                         "single-stack IPv6 cluster");
	assert_int_equal(cfg("10.0.0.0/16", "", 0, 0, 64, &c, err), -EINVAL);
	/* validateCIDRs */
	assert_int_equal(cfg("", "", 0, 0, 0, &c, err), -EINVAL);
	assert_string_equal(err, "invalid CIDR[0]: <nil> (invalid CIDR address: )");
	assert_int_equal(cfg("10.0.0.0/16,10.1.0.0/16", "", 0, 0, 0, &c, err), -EINVAL);
	assert_string_equal(err, "len of ClusterCIDRs==2 and they are not configured as dual "
	                         "stack (at least one from each IPFamily");
	assert_int_equal(cfg("10.0.0.0/16,fd00::/48,10.1.0.0/16", "", 0, 0, 0, &c, err), -EINVAL);
	assert_string_equal(err, "length of clusterCIDRs is:3 more than max allowed of 2");
	/* the cluster CIDR wider than the node mask */
	assert_int_equal(cfg("10.0.0.0/26", "", 0, 0, 0, &c, err), -EINVAL);
	assert_non_null(strstr(err, "Invalid --cluster-cidr"));
	/* service ranges */
	assert_int_equal(cfg("10.0.0.0/16", "10.96.0.0/12,fd01::/108", 0, 0, 0, &c, err), 0);
	assert_true(c.has_svc[0] && c.has_svc[1]);
	assert_int_equal(cfg("10.0.0.0/16", "10.96.0.0/12,10.97.0.0/16", 0, 0, 0, &c, err),
	                 -EINVAL);
	assert_int_equal(cfg("10.0.0.0/16", "a,b,c", 0, 0, 0, &c, err), -EINVAL);
	assert_string_equal(err,
	                    "--service-cluster-ip-range can not contain more than two entries");
	/* IPv6 with more than 16 bits */
	assert_int_equal(cfg("fd00::/32", "", 0, 0, 0, &c, err), -EINVAL);
	assert_string_equal(err, "New CIDR set failed; the node CIDR size is too big");
	/* off, and the allocator types */
	struct ipam_flags f = {.allocate_node_cidrs = false};
	char warn[64];
	assert_int_equal(ipam_config(&f, &c, err, sizeof(err), warn, sizeof(warn)), -ECANCELED);
	f = (struct ipam_flags){.allocate_node_cidrs = true,
	                        .cidr_allocator_type = "CloudAllocator",
	                        .cluster_cidr = "10.0.0.0/16"};
	assert_int_equal(ipam_config(&f, &c, err, sizeof(err), warn, sizeof(warn)), -EINVAL);
	assert_string_equal(err, "--cidr-allocator-type is set to 'CloudAllocator' but cloud "
	                         "provider is not configured");
	f.cidr_allocator_type = "IPAMFromCluster";
	assert_int_equal(ipam_config(&f, &c, err, sizeof(err), warn, sizeof(warn)), -EINVAL);
	f.cidr_allocator_type = "Nope";
	assert_int_equal(ipam_config(&f, &c, err, sizeof(err), warn, sizeof(warn)), -EINVAL);
	assert_string_equal(err, "invalid CIDR allocator type: Nope");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_parse),
	        cmocka_unit_test(test_index_to_cidr),
	        cmocka_unit_test(test_fully_allocated),
	        cmocka_unit_test(test_allocation_occupied),
	        cmocka_unit_test(test_double_occupy_release),
	        cmocka_unit_test(test_bit_for_cidr),
	        cmocka_unit_test(test_occupy),
	        cmocka_unit_test(test_v6_and_max),
	        cmocka_unit_test(test_config),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
