/* SPDX-License-Identifier: Apache-2.0 */
/* kube/tests/test-deephash.c - the pod-template hash (kube/deephash.c).
 *
 * Without arguments: cmocka tests. The golden hashes and printed texts below were computed by
 * upstream's own code (k8s.io/kubernetes v1.37.2 controller.ComputeHash and dump.ForHash) in
 * tests/cluster/e2e/deephash_test.go, which also runs the whole corpus through this program in
 * its filter mode against the real apiserver's JSON:
 *   test-deephash --hash [N]   one JSON PodTemplateSpec per stdin line; prints, per line, the
 *                              hash with collision count N (none without N) or "error <errno>"
 *   test-deephash --dump       the same lines; prints the printed text (or "error <errno>"),
 *                              each ended by a NUL byte (the texts may hold newlines)
 *   test-deephash --equal      two templates per line, tab-separated; prints 1 (equal ignoring
 *                              the hash label), 0, or "error <errno>"
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kube/deephash.h"

static int filter(int argc, char **argv)
{
	bool dump = strcmp(argv[1], "--dump") == 0;
	bool equal = strcmp(argv[1], "--equal") == 0;
	int32_t cc = 0;
	const int32_t *ccp = NULL;
	if (!dump && argc > 2) {
		cc = (int32_t)strtol(argv[2], NULL, 10);
		ccp = &cc;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	while ((n = getline(&line, &cap, stdin)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = 0;
		int r;
		if (equal) {
			char *tab = strchr(line, '\t');
			r = tab ? kube_pod_template_equal_ignore_hash(line, (size_t)(tab - line),
			                                              tab + 1, strlen(tab + 1))
			        : -EINVAL;
			if (r >= 0)
				printf("%d\n", r);
		} else if (dump) {
			char *text;
			r = kube_deephash_dump(line, (size_t)n, &text, NULL);
			if (r == 0) {
				fwrite(text, 1, strlen(text) + 1, stdout); /* NUL-ended */
				free(text);
			}
		} else {
			char h[KUBE_POD_TEMPLATE_HASH_MAX];
			r = kube_pod_template_hash(line, (size_t)n, ccp, h);
			if (r == 0)
				printf("%s\n", h);
		}
		if (r < 0)
			printf("error %d%c", -r, dump ? 0 : '\n');
	}
	free(line);
	fflush(stdout);
	return 0;
}

/* Every line of the golden fixture: the upstream hashes without and with collision count 3. */
static void test_golden(void **state)
{
	(void)state;
	FILE *f = fopen("kube/tests/fixtures/deephash-golden.txt", "r");
	assert_non_null(f);
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int lines = 0;
	while ((n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = 0;
		char *sp1 = strchr(line, ' ');
		assert_non_null(sp1);
		char *sp2 = strchr(sp1 + 1, ' ');
		assert_non_null(sp2);
		*sp1 = *sp2 = 0;
		const char *json = sp2 + 1;
		char h[KUBE_POD_TEMPLATE_HASH_MAX];
		int32_t cc = 3;
		assert_int_equal(kube_pod_template_hash(json, strlen(json), NULL, h), 0);
		if (strcmp(h, line) != 0)
			fail_msg("line %d: %s, upstream %s", lines + 1, h, line);
		assert_int_equal(kube_pod_template_hash(json, strlen(json), &cc, h), 0);
		if (strcmp(h, sp1 + 1) != 0)
			fail_msg("line %d (collisionCount 3): %s, upstream %s", lines + 1, h,
			         sp1 + 1);
		lines++;
	}
	free(line);
	fclose(f);
	assert_true(lines >= 10);
}

static char *dump(const char *json)
{
	char *text = NULL;
	assert_int_equal(kube_deephash_dump(json, strlen(json), &text, NULL), 0);
	return text;
}

static void assert_contains(const char *text, const char *part)
{
	if (!strstr(text, part))
		fail_msg("\"%s\" not in the printed text:\n%s", part, text);
}

/* The forms the printer must get right, spelled out (the golden hashes prove them as a whole). */
static void test_printed_forms(void **state)
{
	(void)state;
	char *t = dump("{\"metadata\":{\"labels\":{\"b\":\"2\",\"a\":\"1\",\"B\":\"0\"}},"
	               "\"spec\":{\"containers\":[{\"name\":\"c\",\"args\":[],"
	               "\"resources\":{\"limits\":{\"cpu\":\"500m\",\"memory\":\"1Pi\"}},"
	               "\"livenessProbe\":{\"httpGet\":{\"port\":\"http\"},\"periodSeconds\":3},"
	               "\"readinessProbe\":{\"tcpSocket\":{\"port\":80}}}],"
	               "\"terminationGracePeriodSeconds\":30}}");
	/* the top type, struct fields with their types, strings raw */
	assert_true(strncmp(t, "(v1.PodTemplateSpec){ObjectMeta:(v1.ObjectMeta){Name:(string) ",
	                    62) == 0);
	/* map keys sorted bytewise, no types inside the map */
	assert_contains(t, "Labels:(map[string]string)map[B:0 a:1 b:2]");
	/* nil map, nil slice, empty slice, nil pointer, set pointer */
	assert_contains(t, "Annotations:(map[string]string)<nil>");
	assert_contains(t, "Command:([]string)<nil> Args:([]string)[]");
	assert_contains(t, "ActiveDeadlineSeconds:(*int64)<nil>");
	assert_contains(t, "TerminationGracePeriodSeconds:(*int64)30");
	/* the zero metav1.Time */
	assert_contains(t,
	                "CreationTimestamp:(v1.Time){Time:(time.Time){wall:(uint64)0 ext:(int64)0 "
	                "loc:(*time.Location)<nil>}}");
	/* quantities: the int64 path with the cached string, and the inf.Dec path (1Pi at nano
	 * scale: 2^50 * 10^9 in two 64-bit words, little end first) */
	assert_contains(t,
	                "cpu:{i:(resource.int64Amount){value:(int64)500 scale:(resource.Scale)-3} "
	                "d:(resource.infDecAmount){Dec:(*inf.Dec)<nil>} s:(string)500m "
	                "Format:(resource.Format)DecimalSI}");
	assert_contains(
	        t, "memory:{i:(resource.int64Amount){value:(int64)0 scale:(resource.Scale)0} "
	           "d:(resource.infDecAmount){Dec:(*inf.Dec){unscaled:(big.Int){neg:(bool)false "
	           "abs:(big.nat)[2882303761517117440 61035]} scale:(inf.Scale)9}} s:(string) "
	           "Format:(resource.Format)BinarySI}");
	/* an inlined struct under its type name; IntOrString as string and as number */
	assert_contains(t,
	                "ProbeHandler:(v1.ProbeHandler){Exec:(*v1.ExecAction)<nil> "
	                "HTTPGet:(*v1.HTTPGetAction){Path:(string) Port:(intstr.IntOrString){Type:"
	                "(intstr.Type)1 IntVal:(int32)0 StrVal:(string)http}");
	assert_contains(
	        t, "TCPSocket:(*v1.TCPSocketAction){Port:(intstr.IntOrString){Type:(intstr.Type)0 "
	           "IntVal:(int32)80 StrVal:(string)}");
	free(t);
}

static void test_refused(void **state)
{
	(void)state;
	static const struct {
		const char *json;
		int err;
	} cases[] = {
	        {"", -EBADMSG},
	        {"{", -EBADMSG},
	        {"{} x", -EBADMSG},
	        {"[]", -EPROTO},
	        {"{\"spec\":{\"containers\":{}}}", -EPROTO},
	        {"{\"spec\":{\"terminationGracePeriodSeconds\":1.5}}", -EPROTO},
	        {"{\"spec\":{\"hostNetwork\":1}}", -EPROTO},
	        {"{\"spec\":{\"overhead\":{\"cpu\":\"1x\"}}}", -EPROTO},
	        {"{\"spec\":{\"overhead\":{\"cpu\":\"\"}}}", -EPROTO},
	        {"{\"metadata\":{\"creationTimestamp\":\"2024-01-01T00:00:00Z\"}}", -EOPNOTSUPP},
	        {"{\"metadata\":{\"managedFields\":[{\"fieldsV1\":{}}]}}", -EOPNOTSUPP},
	        /* a zero on the inf.Dec path: its big.Int words are nil or empty depending on
	           history */
	        {"{\"spec\":{\"overhead\":{\"memory\":\"0.0Ki\"}}}", -EOPNOTSUPP},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char h[KUBE_POD_TEMPLATE_HASH_MAX];
		int r = kube_pod_template_hash(cases[i].json, strlen(cases[i].json), NULL, h);
		if (r != cases[i].err)
			fail_msg("case %zu (%s): %d, want %d", i, cases[i].json, r, cases[i].err);
	}
}

/* Exponents at the ends of int32 (upstream would not finish on them; kcmd must not overflow:
 * the ASan+UBSan build of this test failed on the nano rounding's int32 scale before it was
 * made 64-bit) and far below nano (rounded up to 1n without a billion divisions). */
static int eq(const char *a, const char *b);

static void test_extreme_exponents(void **state)
{
	(void)state;
	static const char *const qs[] = {"1e-2147483648", "1e2147483647", "1e-999999999",
	                                 "1.5e-2147483648", "-7e-2147483647"};
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		char json[128], h[KUBE_POD_TEMPLATE_HASH_MAX];
		snprintf(json, sizeof(json), "{\"spec\":{\"overhead\":{\"cpu\":\"%s\"}}}", qs[i]);
		int r = kube_pod_template_hash(json, strlen(json), NULL, h);
		assert_true(r == 0 || r == -EOPNOTSUPP);
	}
	/* far below nano rounds up to one nano: the same value as "1n" */
	assert_int_equal(eq("{\"spec\":{\"overhead\":{\"cpu\":\"1e-999999999\"}}}",
	                    "{\"spec\":{\"overhead\":{\"cpu\":\"1n\"}}}"),
	                 1);
}

static int eq(const char *a, const char *b)
{
	return kube_pod_template_equal_ignore_hash(a, strlen(a), b, strlen(b));
}

/* EqualIgnoreHash: Semantic.DeepEqual without the hash label (upstream's pairs are checked in
 * tests/cluster/e2e/deephash_test.go). */
static void test_equal_ignore_hash(void **state)
{
	(void)state;
	const char *base = "{\"metadata\":{\"labels\":{\"app\":\"a\"}},\"spec\":{\"containers\":"
	                   "[{\"name\":\"c\",\"image\":\"i\",\"resources\":{\"limits\":"
	                   "{\"cpu\":\"500m\"}}}]}}";
	/* the hash label is ignored, only at the template's own labels */
	assert_int_equal(eq(base, "{\"metadata\":{\"labels\":{\"app\":\"a\",\"pod-template-hash\":"
	                          "\"abc\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":"
	                          "\"i\",\"resources\":{\"limits\":{\"cpu\":\"0.5\"}}}]}}"),
	                 1);
	assert_int_equal(eq("{\"metadata\":{\"labels\":{\"pod-template-hash\":\"x\"}}}",
	                    "{\"metadata\":{\"annotations\":{}}}"),
	                 1);
	assert_int_equal(eq("{\"metadata\":{\"annotations\":{\"pod-template-hash\":\"x\"}}}", "{}"),
	                 0);
	/* nil and empty lists and maps are equal; a nil and a zero pointer are not */
	assert_int_equal(eq("{\"spec\":{\"containers\":[]}}", "{\"spec\":{}}"), 1);
	assert_int_equal(
	        eq("{\"spec\":{\"nodeSelector\":{}}}", "{\"spec\":{\"nodeSelector\":null}}"), 1);
	assert_int_equal(eq("{\"spec\":{\"terminationGracePeriodSeconds\":0}}", "{\"spec\":{}}"),
	                 0);
	/* quantities by value: 1Gi == 1073741824, 1k == 1000 == 1e3; 1Gi != 1G */
	assert_int_equal(eq("{\"spec\":{\"overhead\":{\"memory\":\"1Gi\"}}}",
	                    "{\"spec\":{\"overhead\":{\"memory\":\"1073741824\"}}}"),
	                 1);
	assert_int_equal(eq("{\"spec\":{\"overhead\":{\"a\":\"1k\",\"b\":\"1e3\"}}}",
	                    "{\"spec\":{\"overhead\":{\"a\":\"1000\",\"b\":\"1000\"}}}"),
	                 1);
	assert_int_equal(eq("{\"spec\":{\"overhead\":{\"memory\":\"1Gi\"}}}",
	                    "{\"spec\":{\"overhead\":{\"memory\":\"1G\"}}}"),
	                 0);
	assert_int_equal(eq("{\"spec\":{\"overhead\":{\"memory\":\"1Pi\"}}}",
	                    "{\"spec\":{\"overhead\":{\"memory\":\"1125899906842624\"}}}"),
	                 1);
	/* any other difference counts; strings cannot run into each other */
	assert_int_equal(eq(base,
	                    "{\"metadata\":{\"labels\":{\"app\":\"b\"}},\"spec\":{\"containers\":"
	                    "[{\"name\":\"c\",\"image\":\"i\",\"resources\":{\"limits\":"
	                    "{\"cpu\":\"500m\"}}}]}}"),
	                 0);
	assert_int_equal(eq("{\"spec\":{\"containers\":[{\"name\":\"a b\"}]}}",
	                    "{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"b\"}]}}"),
	                 0);
	assert_int_equal(eq("{", "{}"), -EBADMSG);
}

/* SafeEncodeString of the decimal, and the collision count's 8 little-endian bytes. */
static void test_finish(void **state)
{
	(void)state;
	char h[KUBE_POD_TEMPLATE_HASH_MAX];
	kube_pod_template_hash_finish(0, NULL, h);
	assert_string_equal(h, "4"); /* '0' = 48, 48 % 27 = 21: alphanums[21] */
	kube_pod_template_hash_finish(4294967295u, NULL, h);
	assert_int_equal(strlen(h), 10);
	/* FNV-1a of the empty text is the offset basis; eight more zero bytes when the count is 0
	 */
	uint32_t x = 2166136261u;
	for (int i = 0; i < 8; i++)
		x *= 16777619u;
	char a[KUBE_POD_TEMPLATE_HASH_MAX], b[KUBE_POD_TEMPLATE_HASH_MAX];
	int32_t zero = 0;
	kube_pod_template_hash_finish(2166136261u, &zero, a);
	kube_pod_template_hash_finish(x, NULL, b);
	assert_string_equal(a, b);
}

int main(int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "--hash") == 0 || strcmp(argv[1], "--dump") == 0 ||
	                 strcmp(argv[1], "--equal") == 0))
		return filter(argc, argv);
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_golden),
	        cmocka_unit_test(test_printed_forms),
	        cmocka_unit_test(test_refused),
	        cmocka_unit_test(test_finish),
	        cmocka_unit_test(test_equal_ignore_hash),
	        cmocka_unit_test(test_extreme_exponents),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
