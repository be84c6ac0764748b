/* SPDX-License-Identifier: Apache-2.0 */
/* Tests of sharding's arithmetic (kube/shard.h) and of the per-range fence (kube/fence.h F6-F8)
 * with the client's check before every write. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kube/client.h"
#include "kube/config.h"
#include "kube/fence.h"
#include "kube/shard.h"

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* The published FNV test vectors (Fowler/Noll/Vo reference code). */
static void test_fnv_vectors(void **state)
{
	(void)state;
	assert_true(kube_fnv1a64("", 0) == 0xcbf29ce484222325ull);
	assert_true(kube_fnv1a64("a", 1) == 0xaf63dc4c8601ec8cull);
	assert_true(kube_fnv1a64("foobar", 6) == 0x85944171f73967e8ull);
	assert_true(kube_fnv1a32("", 0) == 0x811c9dc5u);
	assert_true(kube_fnv1a32("a", 1) == 0xe40c292cu);
	assert_true(kube_fnv1a32("foobar", 6) == 0xbf9cf968u);
}

static void test_range_of_ns(void **state)
{
	(void)state;
	assert_int_equal(kube_shard_range_of_ns("", 16), 0); /* cluster-scoped */
	assert_int_equal(kube_shard_range_of_ns(NULL, 16), 0);
	assert_int_equal(kube_shard_range_of_ns("default", 0), 0); /* off */
	assert_int_equal(kube_shard_range_of_ns("foobar", 16), 0xbf9cf968u % 16);
	assert_int_equal(kube_shard_range_of_ns("a", 7), 0xe40c292cu % 7);
	/* every range is reachable from ordinary names */
	unsigned seen[8] = {0};
	char ns[32];
	for (int i = 0; i < 200; i++) {
		snprintf(ns, sizeof(ns), "ns-%d", i);
		unsigned r = kube_shard_range_of_ns(ns, 8);
		assert_true(r < 8);
		seen[r]++;
	}
	for (int i = 0; i < 8; i++)
		assert_true(seen[i] > 0);
}

/* Rendezvous: the owner is the member of highest weight; the order of the list does not
 * matter; removing a member moves only its ranges; adding one moves only the ones it wins. */
static void test_rendezvous(void **state)
{
	(void)state;
	const char *m3[] = {"kcmd-a", "kcmd-b", "kcmd-c"};
	const char *m3r[] = {"kcmd-c", "kcmd-a", "kcmd-b"};
	const char *m2[] = {"kcmd-a", "kcmd-c"};
	unsigned per[3] = {0};

	assert_int_equal(kube_shard_owner(m3, 0, 0), -1);
	/* the weight: FNV-1a 64 of "<member>\n<range>", then fmix64 (fixed vectors) */
	assert_true(kube_fnv1a64("kcmd-a\n5", 8) == 0x721f8c3ac30832bdull);
	assert_true(kube_shard_weight("kcmd-a", 5) == 0x3fb8d16fb14888acull);
	for (unsigned i = 0; i < 64; i++) {
		int o = kube_shard_owner(m3, 3, i);
		assert_true(o >= 0 && o < 3);
		for (int k = 0; k < 3; k++)
			if (k != o)
				assert_true(kube_shard_weight(m3[k], i) <=
				            kube_shard_weight(m3[o], i));
		assert_string_equal(m3[o], m3r[kube_shard_owner(m3r, 3, i)]);
		per[o]++;
		int o2 = kube_shard_owner(m2, 2, i);
		if (o != 1) /* not kcmd-b's: it stays where it was */
			assert_string_equal(m3[o], m2[o2]);
	}
	for (int k = 0; k < 3; k++) /* each member gets a share (64 ranges, 3 members) */
		assert_true(per[k] >= 8);
	/* a tie goes to the smaller name, in any order */
	const char *same[] = {"x", "x"};
	assert_int_equal(kube_shard_owner(same, 2, 3), 0);
}

static void ns_of(const char *url, const char *want)
{
	char buf[64];
	assert_int_equal(kube_shard_ns_of_url(url, buf, sizeof(buf)), 0);
	assert_string_equal(buf, want);
}

static void test_ns_of_url(void **state)
{
	(void)state;
	char small[4];

	ns_of("https://10.0.0.1:6443/api/v1/namespaces/team-a/pods", "team-a");
	ns_of("https://h/api/v1/namespaces/team-a/pods/p1/status?fieldManager=x", "team-a");
	ns_of("https://h/apis/apps/v1/namespaces/ns2/replicasets/rs", "ns2");
	ns_of("/apis/apps/v1/namespaces/ns2/replicasets", "ns2");
	ns_of("https://h/api/v1/namespaces/gone", "gone");          /* a Namespace itself */
	ns_of("https://h/api/v1/namespaces/gone/finalize", "gone"); /* its finalize */
	ns_of("https://h/api/v1/namespaces", "");                   /* creating a Namespace */
	ns_of("https://h/api/v1/nodes/n1/status", "");
	ns_of("https://h/apis/storage.k8s.io/v1/volumeattachments/va", "");
	ns_of("https://h/prefix/apis/batch/v1/namespaces/jobs/jobs/j", "jobs"); /* path prefix */
	ns_of("https://h/apis/batch/v1?x=/namespaces/n", "");
	ns_of("https://h/healthz", "");
	ns_of(NULL, "");
	assert_int_equal(kube_shard_ns_of_url("https://h/api/v1/namespaces/longer/pods", small,
	                                      sizeof(small)),
	                 -ENAMETOOLONG);
	assert_string_equal(small, "");
	assert_int_equal(kube_shard_ns_of_key("ns1/rs-1", small, sizeof(small)), 0);
	assert_string_equal(small, "ns1");
	assert_int_equal(kube_shard_ns_of_key("node-1", small, sizeof(small)), 0);
	assert_string_equal(small, "");
}

/* Queue keys: "ns/name", "<tag>:ns/name", "ns/name/uid", a bare namespace name. */
static void test_key_range(void **state)
{
	(void)state;
	char buf[64], small[4];
	const unsigned n = 32;
	const unsigned ra = kube_shard_range_of_ns("team-a", n);

	assert_int_equal(kube_shard_ns_of_key("pod:team-a/p1", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "team-a");
	assert_int_equal(kube_shard_ns_of_key("claim:team-a/c:1", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "team-a"); /* a ':' after the first '/' is the name's */
	assert_int_equal(kube_shard_ns_of_key("a:b:team-a/x", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "team-a");
	assert_int_equal(kube_shard_ns_of_key("team-a/sa/0a1b-uid", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "team-a");
	assert_int_equal(kube_shard_ns_of_key("pvc:x", buf, sizeof(buf)), 0); /* no '/' */
	assert_string_equal(buf, "");
	assert_int_equal(kube_shard_ns_of_key("pod:longer/p", small, sizeof(small)), -ENAMETOOLONG);
	assert_int_equal(kube_shard_ns_of_key("pod:ns1/p", small, sizeof(small)), 0);
	assert_string_equal(small, "ns1");

	/* a namespace whose range is not 0, so a wrong answer cannot pass by being 0 */
	assert_int_not_equal(ra, 0);
	assert_int_equal(kube_shard_key_range(KUBE_SHARD_KEYS_NS_NAME, "team-a/rs", n), ra);
	assert_int_equal(kube_shard_key_range(KUBE_SHARD_KEYS_NS_NAME, "pod:team-a/p", n), ra);
	assert_int_equal(kube_shard_key_range(KUBE_SHARD_KEYS_NS_NAME, "team-a", n), 0);
	assert_int_equal(kube_shard_key_range(KUBE_SHARD_KEYS_NAMESPACE, "team-a", n), ra);
	assert_int_equal(kube_shard_key_range(KUBE_SHARD_KEYS_NONE, "team-a/rs", n), 0);
	assert_int_equal(kube_shard_key_range(KUBE_SHARD_KEYS_NONE, "team-a", n), 0);
	assert_int_equal(kube_shard_key_range(KUBE_SHARD_KEYS_NAMESPACE, "team-a", 0), 0);
	assert_int_equal(kube_shard_key_range(KUBE_SHARD_KEYS_NS_NAME, NULL, n), 0);
	/* a namespace name is at most 63 characters; anything longer is no namespace: range 0 */
	char longkey[300];
	memset(longkey, 'a', sizeof(longkey) - 1);
	longkey[sizeof(longkey) - 1] = 0;
	assert_int_equal(kube_shard_key_range(KUBE_SHARD_KEYS_NAMESPACE, longkey, n), 0);
}

/* F6/F7: per-range words, 0 until owned, only the writable mapping moves them; a write needs
 * the instance word and its namespace's range. */
static void test_range_fence(void **state)
{
	(void)state;
	struct kube_fence *w, *r;
	int fd = kube_fence_memfd_create_ranges(8);
	uint64_t now = now_us();

	assert_int_equal(kube_fence_memfd_create_ranges(KUBE_FENCE_MAX_RANGES + 1), -ERANGE);
	assert_true(fd >= 0);
	assert_int_equal(kube_fence_open(fd, true, &w), 0);
	assert_int_equal(kube_fence_open(fd, false, &r), 0);
	assert_int_equal(kube_fence_ranges(r), 8);
	kube_fence_set(w, now + 60000000);
	assert_true(kube_fence_allows(r, now));
	for (unsigned i = 0; i < 8; i++)
		assert_false(kube_fence_range_allows(r, i, now));
	assert_false(kube_fence_range_allows(r, 8, now)); /* past the ranges: never ours */
	unsigned ra = kube_shard_range_of_ns("team-a", 8);
	kube_fence_set_range(w, ra, now + 60000000);
	assert_true(kube_fence_allows_ns(r, "team-a", now));
	assert_false(kube_fence_allows_ns(r, "team-a", now + 60000000)); /* at its deadline */
	kube_fence_set_range(r, ra, 0); /* a reader cannot move it */
	assert_true(kube_fence_allows_ns(r, "team-a", now));
	kube_fence_set(w, 0); /* the instance word closes every range */
	assert_false(kube_fence_allows_ns(r, "team-a", now));
	kube_fence_set(w, now + 60000000);
	kube_fence_set_range(w, ra, 0); /* released */
	assert_false(kube_fence_allows_ns(r, "team-a", now));
	/* cluster-scoped: range 0 */
	assert_false(kube_fence_allows_ns(r, "", now));
	kube_fence_set_range(w, 0, now + 60000000);
	assert_true(kube_fence_allows_ns(r, "", now));
	/* F8 */
	uint64_t g = kube_fence_range_gen(r);
	kube_fence_bump_range_gen(r);
	assert_true(kube_fence_range_gen(r) == g);
	kube_fence_bump_range_gen(w);
	assert_true(kube_fence_range_gen(r) == g + 1);
	kube_fence_close(w);
	kube_fence_close(r);
	close(fd);

	/* without ranges: the range checks allow what the instance word allows */
	fd = kube_fence_memfd_create();
	assert_int_equal(kube_fence_open(fd, true, &w), 0);
	assert_int_equal(kube_fence_ranges(w), 0);
	kube_fence_set(w, now + 60000000);
	assert_true(kube_fence_allows_ns(w, "team-a", now));
	assert_true(kube_fence_range_allows(w, 3, now));
	kube_fence_close(w);
	close(fd);
}

/* The client checks the range of the namespace in the request's path (the address points at
 * a closed port: a write that was sent fails with -ECONNREFUSED, a fenced one with -ENOLCK). */
/* F9: a fence with `cache_filter` 0 (as a manager of the earlier layout leaves it) caches every
 * namespace whatever the set says; with it 1, only the set's ranges. */
static void test_cache_filter_choice(void **state)
{
	(void)state;
	struct kube_fence *w, *r;
	for (int filter = 0; filter <= 1; filter++) {
		int fd = kube_fence_memfd_create_ranges_filter(8, filter);
		assert_true(fd >= 0);
		assert_int_equal(kube_fence_open(fd, true, &w), 0);
		assert_int_equal(kube_fence_open(fd, false, &r), 0);
		assert_int_equal(kube_fence_cache_filtering(r), filter);
		kube_fence_set_cache_range(w, kube_shard_range_of_ns("ns-a", 8) == 1 ? 2 : 1, true);
		/* ns-a's range is not in the set (unless it is range 0, never with this name) */
		if (kube_shard_range_of_ns("ns-a", 8) != 0)
			assert_int_equal(kube_fence_caches_ns(r, "ns-a"), !filter);
		assert_true(kube_fence_caches_ns(r, "")); /* cluster-scoped: always */
		kube_fence_close(w);
		kube_fence_close(r);
		close(fd);
	}
}

static void test_client_range_check(void **state)
{
	(void)state;
	struct kube_config rc = {.server = "http://127.0.0.1:1"};
	struct kube_fence *w;
	struct kube_client *c;
	struct kube_response resp;
	int fd = kube_fence_memfd_create_ranges(16);
	const char *own = "team-a", *other = NULL;
	char buf[32];
	uint64_t now = now_us();
	unsigned ra = kube_shard_range_of_ns(own, 16);

	for (int i = 0; !other && i < 100; i++) { /* a namespace of another range, not 0 */
		snprintf(buf, sizeof(buf), "ns-%d", i);
		unsigned x = kube_shard_range_of_ns(buf, 16);
		if (x != ra && x != 0)
			other = buf;
	}
	assert_non_null(other);
	assert_int_equal(kube_fence_open(fd, true, &w), 0);
	kube_fence_set(w, now + 60000000);
	kube_fence_set_range(w, ra, now + 60000000);
	struct kube_client_opts o = {
	        .config = &rc, .max_retries = 1, .retry_base_ms = 5, .fence = w};
	assert_int_equal(kube_client_new(&o, &c), 0);
	struct kube_request post = {.verb = KUBE_CREATE,
	                            .version = "v1",
	                            .resource = "pods",
	                            .ns = own,
	                            .body = "{}",
	                            .body_len = 2};
	assert_int_equal(kube_client_request(c, &post, NULL, NULL, &resp), -ECONNREFUSED);
	kube_response_clear(&resp);
	post.ns = other;
	assert_int_equal(kube_client_request(c, &post, NULL, NULL, &resp), -ENOLCK);
	kube_response_clear(&resp);
	struct kube_request node = {
	        .verb = KUBE_DELETE, .version = "v1", .resource = "nodes", .name = "n1"};
	assert_int_equal(kube_client_request(c, &node, NULL, NULL, &resp), -ENOLCK); /* range 0 */
	kube_response_clear(&resp);
	struct kube_request nsdel = {
	        .verb = KUBE_DELETE, .version = "v1", .resource = "namespaces", .name = own};
	assert_int_equal(kube_client_request(c, &nsdel, NULL, NULL, &resp), -ECONNREFUSED);
	kube_response_clear(&resp);
	struct kube_request get = {
	        .verb = KUBE_GET, .version = "v1", .resource = "pods", .ns = other, .name = "p"};
	assert_int_equal(kube_client_request(c, &get, NULL, NULL, &resp), -ECONNREFUSED);
	kube_response_clear(&resp);
	assert_int_equal(kube_client_fenced(c), 2);
	/* an unsharded process checks range 0 for every write */
	kube_client_set_process_unsharded(true);
	post.ns = own;
	assert_int_equal(kube_client_request(c, &post, NULL, NULL, &resp), -ENOLCK);
	kube_response_clear(&resp);
	kube_fence_set_range(w, 0, now + 60000000);
	post.ns = other;
	assert_int_equal(kube_client_request(c, &post, NULL, NULL, &resp), -ECONNREFUSED);
	kube_response_clear(&resp);
	kube_client_set_process_unsharded(false);
	kube_client_free(c);
	kube_fence_close(w);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_fnv_vectors),
	        cmocka_unit_test(test_range_of_ns),
	        cmocka_unit_test(test_rendezvous),
	        cmocka_unit_test(test_ns_of_url),
	        cmocka_unit_test(test_key_range),
	        cmocka_unit_test(test_range_fence),
	        cmocka_unit_test(test_client_range_check),
	        cmocka_unit_test(test_cache_filter_choice),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
