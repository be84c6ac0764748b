/* SPDX-License-Identifier: Apache-2.0 */
/* workers/daemonset/tests/test-nodes.c - the DaemonSet worker's Node views (nodes.h): a view
 * answers NodeShouldRunDaemonPod as the Node's full JSON does (labels, taints, nodeSelector,
 * required node affinity with a metadata.name field requirement); an unchanged
 * resourceVersion is not parsed again, a changed one is; a Node not seen by a refresh is dropped;
 * a Node without a name or with JSON that does not parse is left out; lookups by name; the
 * caller's memo per view (kept under its key while the view is unchanged); the
 * views come sorted by name whatever order the cache walk had. Exit 0 pass, 1 fail. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workers/daemonset/ds.h"
#include "workers/daemonset/nodes.h"

static int fails;

#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c);                    \
			fails++;                                                                   \
		}                                                                                  \
	} while (0)

/* a Node as the apiserver sends it: a large status beside what the predicates read */
static char *node_json(const char *name, const char *labels, const char *taints)
{
	char *buf = malloc(4096);
	snprintf(buf, 4096,
	         "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\","
	         "\"uid\":\"u-%s\",\"resourceVersion\":\"1\",\"labels\":%s,"
	         "\"annotations\":{\"a\":\"b\"}},\"spec\":{\"podCIDR\":\"10.0.0.0/24\","
	         "\"taints\":%s},\"status\":{\"capacity\":{\"cpu\":\"4\",\"pods\":\"110\"},"
	         "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}],"
	         "\"nodeInfo\":{\"kubeletVersion\":\"v1.37.2\"},\"images\":[{\"names\":[\"x\"]}]}}",
	         name, name, labels, taints);
	return buf;
}

static cJSON *J(const char *s)
{
	cJSON *j = cJSON_Parse(s);
	if (!j) {
		fprintf(stderr, "bad JSON in test: %s\n", s);
		exit(1);
	}
	return j;
}

static int see(struct ds_nodes *n, const char *name, const char *rv, const char *js)
{
	return ds_nodes_see(n, name, rv, js, js ? strlen(js) : 0);
}

static const cJSON *view(struct ds_nodes *n, const char *name)
{
	size_t cnt;
	const cJSON *const *v = ds_nodes_views(n, &cnt);
	ptrdiff_t i = ds_nodes_find(n, name);
	return i >= 0 && (size_t)i < cnt ? v[i] : NULL;
}

/* every template spec below gives the same answer over the view and over the full Node */
static void test_view_answers_as_full_node(void)
{
	static const char *const tspecs[] = {
	        "{}",
	        "{\"nodeSelector\":{\"zone\":\"a\"}}",
	        "{\"nodeSelector\":{\"zone\":\"b\"}}",
	        "{\"nodeName\":\"n1\"}",
	        "{\"nodeName\":\"n2\"}",
	        "{\"affinity\":{\"nodeAffinity\":{"
	        "\"requiredDuringSchedulingIgnoredDuringExecution\":"
	        "{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":"
	        "\"In\",\"values\":[\"n1\"]}]}]}}}}",
	        "{\"affinity\":{\"nodeAffinity\":{"
	        "\"requiredDuringSchedulingIgnoredDuringExecution\":"
	        "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":"
	        "\"NotIn\",\"values\":[\"a\"]}]}]}}}}",
	        "{\"tolerations\":[{\"key\":\"dedicated\",\"operator\":\"Exists\"}]}",
	};
	static const char *const taints[] = {
	        "[]",
	        "[{\"key\":\"dedicated\",\"value\":\"x\",\"effect\":\"NoSchedule\"}]",
	        "[{\"key\":\"dedicated\",\"value\":\"x\",\"effect\":\"NoExecute\"}]",
	        "[{\"key\":\"node.kubernetes.io/not-ready\",\"effect\":\"NoExecute\"}]",
	};
	struct ds_nodes *n;
	int checked = 0;

	CHECK(ds_nodes_new(&n) == 0);
	for (size_t t = 0; t < sizeof(taints) / sizeof(taints[0]); t++) {
		char *js = node_json("n1", "{\"zone\":\"a\"}", taints[t]);
		char rv[16];
		snprintf(rv, sizeof(rv), "%zu", t + 1);
		ds_nodes_begin(n);
		CHECK(see(n, "n1", rv, js) == 0);
		CHECK(ds_nodes_end(n) == 0);
		cJSON *full = J(js);
		const cJSON *v = view(n, "n1");
		CHECK(v != NULL);
		CHECK(cJSON_GetObjectItemCaseSensitive(v, "status") == NULL);
		for (size_t s = 0; v && s < sizeof(tspecs) / sizeof(tspecs[0]); s++) {
			cJSON *ts = J(tspecs[s]);
			bool r1, c1, r2, c2;
			ds_node_should_run(ts, full, &r1, &c1);
			ds_node_should_run(ts, v, &r2, &c2);
			CHECK(r1 == r2 && c1 == c2);
			checked += r1 + c1; /* some cases must say yes, some no */
			cJSON_Delete(ts);
		}
		cJSON_Delete(full);
		free(js);
	}
	CHECK(checked > 0 && checked < 2 * 8 * 4);
	ds_nodes_free(n);
}

static void test_parsed_once_per_change(void)
{
	struct ds_nodes *n;
	char *a = node_json("a", "{}", "[]"), *b = node_json("b", "{}", "[]");
	char *b2 = node_json("b", "{\"zone\":\"z\"}", "[]");
	size_t cnt;

	CHECK(ds_nodes_new(&n) == 0);
	ds_nodes_begin(n);
	CHECK(see(n, "b", "10", b) == 0);
	CHECK(see(n, "a", "11", a) == 0);
	CHECK(ds_nodes_end(n) == 0);
	CHECK(ds_nodes_parses(n) == 2);
	const cJSON *const *v = ds_nodes_views(n, &cnt);
	CHECK(cnt == 2);
	CHECK(!strcmp(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(v[0], "metadata"), "name")->valuestring,
	        "a"));
	CHECK(ds_nodes_find(n, "b") == 1 && ds_nodes_find(n, "c") == -1);

	/* the same versions again: no parse, the same views */
	const cJSON *va = view(n, "a");
	ds_nodes_begin(n);
	CHECK(see(n, "a", "11", a) == 0);
	CHECK(see(n, "b", "10", b) == 0);
	CHECK(ds_nodes_end(n) == 0);
	CHECK(ds_nodes_parses(n) == 2);
	CHECK(view(n, "a") == va);

	/* b changed: parsed again, its new labels in the view */
	ds_nodes_begin(n);
	CHECK(see(n, "a", "11", a) == 0);
	CHECK(see(n, "b", "12", b2) == 0);
	CHECK(ds_nodes_end(n) == 0);
	CHECK(ds_nodes_parses(n) == 3);
	const cJSON *l =
	        cJSON_GetObjectItem(cJSON_GetObjectItem(view(n, "b"), "metadata"), "labels");
	CHECK(cJSON_IsString(cJSON_GetObjectItem(l, "zone")));

	/* the caller's memo: kept while the view is, under its key only; a changed view clears it
	 */
	bool ma = false, mb = false;
	ptrdiff_t ib = ds_nodes_find(n, "b");
	CHECK(!ds_nodes_memo_get(n, (size_t)ib, 7, &ma, &mb));
	ds_nodes_memo_set(n, (size_t)ib, 7, true, false);
	ds_nodes_begin(n);
	CHECK(see(n, "a", "11", a) == 0);
	CHECK(see(n, "b", "12", b2) == 0);
	CHECK(ds_nodes_end(n) == 0);
	CHECK(ds_nodes_memo_get(n, (size_t)ds_nodes_find(n, "b"), 7, &ma, &mb) && ma && !mb);
	CHECK(!ds_nodes_memo_get(n, (size_t)ds_nodes_find(n, "b"), 8, &ma, &mb));
	CHECK(!ds_nodes_memo_get(n, (size_t)ds_nodes_find(n, "a"), 7, &ma, &mb));
	CHECK(!ds_nodes_memo_get(n, 99, 7, &ma, &mb));
	ds_nodes_begin(n);
	CHECK(see(n, "a", "11", a) == 0);
	CHECK(see(n, "b", "13", b2) == 0);
	CHECK(ds_nodes_end(n) == 0);
	CHECK(!ds_nodes_memo_get(n, (size_t)ds_nodes_find(n, "b"), 7, &ma, &mb));

	/* a gone from the cache: dropped */
	ds_nodes_begin(n);
	CHECK(see(n, "b", "12", b2) == 0);
	CHECK(ds_nodes_end(n) == 0);
	ds_nodes_views(n, &cnt);
	CHECK(cnt == 1 && ds_nodes_find(n, "a") == -1 && ds_nodes_find(n, "b") == 0);

	/* no name, JSON that does not parse: left out */
	ds_nodes_begin(n);
	CHECK(see(n, "b", "12", b2) == 0);
	CHECK(see(n, "x", "13", "{\"metadata\":{}}") == 0);
	CHECK(see(n, "y", "14", "{not json") == 0);
	CHECK(ds_nodes_end(n) == 0);
	ds_nodes_views(n, &cnt);
	CHECK(cnt == 1);

	/* many Nodes in reverse order come out sorted */
	ds_nodes_begin(n);
	for (int i = 99; i >= 0; i--) {
		char nm[16], *js;
		snprintf(nm, sizeof(nm), "n%03d", i);
		js = node_json(nm, "{}", "[]");
		CHECK(see(n, nm, "20", js) == 0);
		free(js);
	}
	CHECK(ds_nodes_end(n) == 0);
	v = ds_nodes_views(n, &cnt);
	CHECK(cnt == 100);
	for (size_t i = 1; i < cnt; i++)
		CHECK(strcmp(cJSON_GetObjectItem(cJSON_GetObjectItem(v[i - 1], "metadata"), "name")
		                     ->valuestring,
		             cJSON_GetObjectItem(cJSON_GetObjectItem(v[i], "metadata"), "name")
		                     ->valuestring) < 0);
	ds_nodes_free(n);
	free(a);
	free(b);
	free(b2);
}

int main(void)
{
	test_view_answers_as_full_node();
	test_parsed_once_per_change();
	ds_nodes_free(NULL);
	if (fails)
		fprintf(stderr, "test-nodes: %d failures\n", fails);
	return fails ? 1 : 0;
}
