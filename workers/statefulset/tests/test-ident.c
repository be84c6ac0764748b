/* SPDX-License-Identifier: Apache-2.0 */
/* workers/statefulset/tests/test-ident.c - ordinals, Go's JSON marshalling, the revision patch,
 * hash and name, maxUnavailable (workers/statefulset/ident.h). Expected values come from
 * upstream's tests (stateful_set_utils_test.go TestGetParentNameAndOrdinal) and from Go
 * (encoding/json, history.HashControllerRevision) run on the same inputs; the end-to-end
 * check against upstream's own functions on apiserver objects is TestStatefulSet_RevisionHash. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workers/statefulset/ident.h"

static int fails;

#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c);                    \
			fails++;                                                                   \
		}                                                                                  \
	} while (0)

static void ordinals(void)
{
	char parent[64];

	CHECK(sts_parse_ordinal("foo-1", parent, sizeof(parent)) == 1 && !strcmp(parent, "foo"));
	CHECK(sts_parse_ordinal("foo-bar-12", parent, sizeof(parent)) == 12 &&
	      !strcmp(parent, "foo-bar"));
	CHECK(sts_parse_ordinal("a-1-2", parent, sizeof(parent)) == 2 && !strcmp(parent, "a-1"));
	CHECK(sts_parse_ordinal("foo", parent, sizeof(parent)) == -1 && !strcmp(parent, ""));
	CHECK(sts_parse_ordinal("foo-", parent, sizeof(parent)) == -1 && !strcmp(parent, ""));
	CHECK(sts_parse_ordinal("foo-1x", parent, sizeof(parent)) == -1 && !strcmp(parent, ""));
	CHECK(sts_parse_ordinal("foo-007", parent, sizeof(parent)) == 7 && !strcmp(parent, "foo"));
	/* ParseInt(.., 32) overflows: ordinal -1, parent kept */
	CHECK(sts_parse_ordinal("foo-2147483648", parent, sizeof(parent)) == -1 &&
	      !strcmp(parent, "foo"));
	CHECK(sts_parse_ordinal("foo-2147483647", parent, sizeof(parent)) == 2147483647);
	CHECK(sts_parse_ordinal("-5", parent, sizeof(parent)) == 5 && !strcmp(parent, ""));
}

static void marshal(const char *in, const char *want)
{
	cJSON *v = cJSON_Parse(in);
	char *out = NULL;
	CHECK(v && sts_go_json(v, &out, NULL) == 0);
	if (out && strcmp(out, want) != 0) {
		fprintf(stderr, "go_json(%s) = %s, want %s\n", in, out, want);
		fails++;
	}
	free(out);
	cJSON_Delete(v);
}

static void go_json(void)
{
	/* expected: Go 1.26 json.Marshal of json.Unmarshal(in) into interface{} */
	marshal("{\"b\":1,\"a\":[true,false,null],\"B\":{}}",
	        "{\"B\":{},\"a\":[true,false,null],\"b\":1}");
	marshal("\"<a&b>\\u2028\\u0001\\b\\f\\n\\r\\t\\\"\\\\\"",
	        "\"\\u003ca\\u0026b\\u003e\\u2028\\u0001\\b\\f\\n\\r\\t\\\"\\\\\"");
	marshal("[0.5,100,1e21,1e20,1e-7,0.000001,-2.5,1152921504606846976,12345678.9]",
	        "[0.5,100,1e+21,100000000000000000000,1e-7,0.000001,-2.5,1152921504606847000,"
	        "12345678.9]");
	marshal("\"h\\u00e9\\u4e16\"", "\"h\xc3\xa9\xe4\xb8\x96\"");
}

static void revision(void)
{
	/* a StatefulSet as the apiserver returns it (trimmed to what matters) */
	const char *set = "{\"metadata\":{\"name\":\"web\"},\"spec\":{\"replicas\":3,\"template\":{"
	                  "\"metadata\":"
	                  "{\"labels\":{\"app\":\"web\"}},\"spec\":{\"containers\":[{\"name\":"
	                  "\"c\",\"image\":"
	                  "\"fake\"}]}}}}";
	cJSON *v = cJSON_Parse(set);
	char *patch = NULL;
	size_t len = 0;
	CHECK(sts_revision_patch(v, &patch, &len) == 0);
	CHECK(patch &&
	      !strcmp(patch, "{\"spec\":{\"template\":{\"$patch\":\"replace\",\"metadata\":"
	                     "{\"labels\":{\"app\":\"web\"}},\"spec\":{\"containers\":"
	                     "[{\"image\":\"fake\",\"name\":\"c\"}]}}}}"));
	free(patch);
	cJSON_Delete(v);

	/* history.HashControllerRevision of a revision whose Data.Raw is "abc", as Go printed it
	 * (k8s.io/kubernetes v1.37.2 linked in a throwaway program): nil probe, probe 0 */
	char h[STS_HASH_MAX], name[254];
	int32_t zero = 0;
	sts_revision_hash("abc", 3, NULL, h);
	CHECK(!strcmp(h, "557874f5f9"));
	sts_revision_hash("abc", 3, &zero, h);
	CHECK(!strcmp(h, "755d7b7869"));
	sts_revision_name("web", "abc", name);
	CHECK(!strcmp(name, "web-abc"));
	char longp[300];
	memset(longp, 'x', 250);
	longp[250] = 0;
	sts_revision_name(longp, "h", name);
	CHECK(strlen(name) == 225);

	int n;
	cJSON *mu = cJSON_Parse("\"50%\"");
	CHECK(sts_max_unavailable(mu, 5, &n) == 0 && n == 2);
	CHECK(sts_max_unavailable(mu, 1, &n) == 0 && n == 1);
	cJSON_Delete(mu);
	mu = cJSON_Parse("3");
	CHECK(sts_max_unavailable(mu, 5, &n) == 0 && n == 3);
	cJSON_Delete(mu);
	CHECK(sts_max_unavailable(NULL, 5, &n) == 0 && n == 1);
	mu = cJSON_Parse("\"abc\"");
	CHECK(sts_max_unavailable(mu, 5, &n) < 0);
	cJSON_Delete(mu);
}

int main(void)
{
	ordinals();
	go_json();
	revision();
	if (fails)
		fprintf(stderr, "%d failures\n", fails);
	return fails ? 1 : 0;
}
