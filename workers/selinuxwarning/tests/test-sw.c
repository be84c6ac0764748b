/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The selinux-warning-controller's decisions (workers/selinuxwarning/sw.h), with the cases of
 * upstream's tests (v1.37.2): internal/parse TestParseSELinuxLabel, translator
 * TestSELinuxOptionsToFileLabel and TestLabelsConflict, cache TestVolumeCache_DeleteAll,
 * _AddVolumeGetConflicts, _MultiVolumeConflicts, _DeletePodConflicts, _GetPodsForCSIDriver, and
 * the volume part of TestSELinuxWarningController_Sync (which volumes a pod adds to the cache,
 * with which label, policy and CSI driver). Upstream's sync test uses a fake volume plugin over
 * an AWS EBS source; here the PVs are CSI volumes of driver ebs.csi.aws.com (the plugin kcm
 * really has for them) and the inline volume is iSCSI (an inline CSI volume has no unique name:
 * upstream's own CSI plugin fails it, tested below). The Events of a sync and the pods that are
 * missing or finished are the worker's (plugin.c): TestSELinuxWarning_* e2e tests.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workers/selinuxwarning/sw.h"

/* ---- parse / translator ------------------------------------------------------------------- */
static void test_parse(void **state)
{
	static const char *const cases[][5] = {
	        {"", "", "", "", ""},
	        {"system_u:system_r:container_t:s0:c0,c1", "system_u", "system_r", "container_t",
	         "s0:c0,c1"},
	        {"system_u:system_r:container_t", "system_u", "system_r", "container_t", ""},
	        {"system_u:system_r", "system_u", "system_r", "", ""},
	        {"system_u", "system_u", "", "", ""},
	        {":system_r:container_t", "", "system_r", "container_t", ""},
	        {"::container_t", "", "", "container_t", ""},
	        {"::container_t:s0", "", "", "container_t", "s0"},
	        {":::s0:c0,c1", "", "", "", "s0:c0,c1"},
	        {"user_with_underscore:role-with-dash:type.with.dots:s0:c0.c1",
	         "user_with_underscore", "role-with-dash", "type.with.dots", "s0:c0.c1"},
	        {"user:role:type:s0:c0,c1:extra", "user", "role", "type", "s0:c0,c1:extra"},
	        {":::", "", "", "", ""},
	        {":::::", "", "", "", "::"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *p[4];
		size_t len[4];
		sw_label_split(cases[i][0], p, len);
		for (int k = 0; k < 4; k++) {
			char got[128];
			snprintf(got, sizeof(got), "%.*s", (int)len[k], p[k]);
			assert_string_equal(got, cases[i][k + 1]);
		}
	}
}

static char *label_of(const char *json)
{
	cJSON *o = json ? cJSON_Parse(json) : NULL;
	char *l = sw_options_label(o);
	cJSON_Delete(o);
	return l;
}

static void test_options_label(void **state)
{
	static const char *const cases[][2] = {
	        {NULL, ""},
	        {"{\"user\":\"system_u\",\"role\":\"system_r\",\"type\":\"container_t\","
	         "\"level\":\"s0:c0,c1\"}",
	         "system_u:system_r:container_t:s0:c0,c1"},
	        {"{\"user\":\"system_u\",\"type\":\"container_t\"}", "system_u::container_t:"},
	        {"{\"level\":\"s0:c0,c1\"}", ":::s0:c0,c1"},
	        {"{}", ""},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *l = label_of(cases[i][0]);
		assert_non_null(l);
		assert_string_equal(l, cases[i][1]);
		free(l);
	}
}

static void test_labels_conflict(void **state)
{
	static const struct {
		const char *a, *b;
		bool conflict;
	} cases[] = {
	        {"", "", false},
	        {"", "system_u:system_r:container_t", false},
	        {"", "system_u:system_r:container_t:s0:c1,c2", true},
	        {":::", "system_u:system_r:container_t", false},
	        {"system_u:system_r:container_t:", "system_u:system_r", false},
	        {"system_u:system_r:conflict_t:", "system_u:system_r:container_t", true},
	        {"::conflict_t", "::container_t", true},
	        {"system_u::container_t", ":system_r::", false},
	        {":::s0:c1,c2", "", true},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(sw_labels_conflict(cases[i].a, cases[i].b), cases[i].conflict);
		assert_int_equal(sw_labels_conflict(cases[i].b, cases[i].a), cases[i].conflict);
	}
}

/* ---- the cache ------------------------------------------------------------------------------ */
struct pwv {
	const char *ns, *name, *volume, *label, *policy;
};

#define MO "MountOption"
#define RE "Recursive"

static const struct pwv existing[] = {
        {"ns1", "pod1-mountOption", "vol1", "system_u:system_r:label1", MO},
        {"ns2", "pod2-recursive", "vol2", "", RE},
        {"ns3", "pod3-1", "vol3", "", RE},
        {"ns3", "pod3-2", "vol3", "", RE},
        {"ns4", "pod4-1", "vol4", "system_u:system_r:label4", MO},
        {"ns4", "pod4-2", "vol4", "system_u:system_r:label4", MO},
        {"ns5", "pod5", "vol5", "::label5", MO},
        {"ns6", "pod6", "vol6", ":system_r:label6", MO},
        {"ns7", "pod7", "vol7", "::label7:c0,c1", MO},
        {"ns8", "pod8", "vol8", "", MO},
};

static size_t add(struct sw_cache *c, const struct pwv *p, const char *driver,
                  struct sw_conflict **ret)
{
	struct sw_conflict *v = NULL;
	size_t n = 0;

	assert_int_equal(sw_cache_add_volume(c, p->volume, p->ns, p->name, p->label, p->policy,
	                                     driver, &v, &n),
	                 0);
	if (ret)
		*ret = v;
	else
		sw_conflicts_free(v, n);
	return n;
}

struct exp_conflict {
	const char *property, *ns, *name, *value, *ons, *oname, *ovalue;
};

/* whether v holds c in both directions, and nothing else (n == 2 * n_exp) */
static void assert_conflicts(const struct sw_conflict *v, size_t n, const struct exp_conflict *e,
                             size_t ne)
{
	assert_int_equal(n, 2 * ne);
	for (size_t i = 0; i < ne; i++)
		for (int dir = 0; dir < 2; dir++) {
			bool found = false;
			const char *ns = dir ? e[i].ons : e[i].ns,
			           *name = dir ? e[i].oname : e[i].name,
			           *val = dir ? e[i].ovalue : e[i].value,
			           *ons = dir ? e[i].ns : e[i].ons,
			           *oname = dir ? e[i].name : e[i].oname,
			           *oval = dir ? e[i].value : e[i].ovalue;
			for (size_t j = 0; j < n; j++)
				found |= !strcmp(v[j].property, e[i].property) &&
				         !strcmp(v[j].reason,
				                 !strcmp(e[i].property, "SELinuxLabel")
				                         ? "SELinuxLabelConflict"
				                         : "SELinuxChangePolicyConflict") &&
				         !strcmp(v[j].ns, ns) && !strcmp(v[j].name, name) &&
				         !strcmp(v[j].value, val) && !strcmp(v[j].other_ns, ons) &&
				         !strcmp(v[j].other_name, oname) &&
				         !strcmp(v[j].other_value, oval);
			assert_true(found);
		}
}

struct collected {
	struct sw_conflict v[64];
	size_t n;
};

static int collect(const struct sw_conflict *c, void *ud)
{
	struct collected *k = ud;
	assert_true(k->n < 64);
	k->v[k->n++] = *c;
	return 0;
}

static void test_delete_all(void **state)
{
	static const char *const nss[] = {"ns1", "ns2", "ns3", "ns4"};
	static const char *const pods[] = {"pod1", "pod2", "pod3", "pod4"};
	static const char *const vols[] = {"vol1", "vol2", "vol3", "vol4"};
	struct sw_cache *c;

	(void)state;
	assert_int_equal(sw_cache_new(&c), 0);
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			for (int k = 0; k < 4; k++)
				assert_int_equal(
				        add(c,
				            &(struct pwv){nss[i], pods[j], vols[k], "label1", MO},
				            "csiDriver1", NULL),
				        0);
	assert_true(sw_cache_consistent(c));
	assert_int_equal(sw_cache_n_volumes(c), 4);
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			for (int k = 0; k < 4;
			     k++) /* each pod deleted four times: no-ops after the first */
				sw_cache_delete_pod(c, nss[i], pods[j]);
	assert_int_equal(sw_cache_n_volumes(c), 0);
	assert_int_equal(sw_cache_n_pods(c), 0);
	assert_true(sw_cache_consistent(c));
	sw_cache_free(c);
}

static void add_get_conflicts(const struct pwv *initial, size_t ni, const struct pwv *p,
                              const struct exp_conflict *e, size_t ne)
{
	struct sw_conflict *v = NULL;
	struct collected all = {0};
	struct sw_cache *c;
	const char *label, *policy;
	size_t n;

	assert_int_equal(sw_cache_new(&c), 0);
	for (size_t i = 0; i < ni; i++)
		assert_int_equal(add(c, &initial[i], "csiDriver1", NULL), 0);
	n = add(c, p, "csiDriver1", &v);
	assert_conflicts(v, n, e, ne);
	sw_conflicts_free(v, n);
	assert_int_equal(sw_cache_pod_info(c, p->volume, p->ns, p->name, &label, &policy), 0);
	assert_string_equal(label, p->label);
	assert_string_equal(policy, p->policy);
	assert_true(sw_cache_consistent(c));
	assert_int_equal(sw_cache_conflicts(c, collect, &all), 0);
	assert_conflicts(all.v, all.n, e, ne);
	sw_cache_free(c);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define TP   "testns", "testpod"

static void test_add_volume_get_conflicts(void **state)
{
	(void)state;
	/* new volume in empty cache; new volume */
	add_get_conflicts(NULL, 0, &(struct pwv){TP, "vol-new", "system_u:system_r:label-new", MO},
	                  NULL, 0);
	add_get_conflicts(existing, N(existing),
	                  &(struct pwv){TP, "vol-new", "system_u:system_r:label-new", MO}, NULL, 0);
	/* existing volume in a new pod with existing policy and label */
	add_get_conflicts(existing, N(existing),
	                  &(struct pwv){TP, "vol1", "system_u:system_r:label1", MO}, NULL, 0);
	/* ... with existing policy and new conflicting label */
	add_get_conflicts(
	        existing, N(existing), &(struct pwv){TP, "vol1", "system_u:system_r:label-new", MO},
	        (struct exp_conflict[]){{"SELinuxLabel", TP, "system_u:system_r:label-new", "ns1",
	                                 "pod1-mountOption", "system_u:system_r:label1"}},
	        1);
	/* ... with new conflicting policy */
	add_get_conflicts(existing, N(existing), &(struct pwv){TP, "vol1", "", RE},
	                  (struct exp_conflict[]){
	                          {"SELinuxChangePolicy", TP, RE, "ns1", "pod1-mountOption", MO}},
	                  1);
	/* existing pod is replaced with different non-conflicting policy and label */
	add_get_conflicts(
	        existing, N(existing),
	        &(struct pwv){"ns2", "pod2-recursive", "vol2", "system_u:system_r:label-new", MO},
	        NULL, 0);
	/* existing pod is replaced with conflicting policy */
	add_get_conflicts(existing, N(existing),
	                  &(struct pwv){"ns3", "pod3-1", "vol3", "system_u:system_r:label-new", MO},
	                  (struct exp_conflict[]){{"SELinuxChangePolicy", "ns3", "pod3-1", MO,
	                                           "ns3", "pod3-2", RE}},
	                  1);
	/* new incomparable label (missing user and role) */
	add_get_conflicts(existing, N(existing),
	                  &(struct pwv){TP, "vol5", "system_u:system_r:label5", MO}, NULL, 0);
	/* conflicting label with incomparable parts */
	add_get_conflicts(existing, N(existing), &(struct pwv){TP, "vol5", "::label6", MO},
	                  (struct exp_conflict[]){
	                          {"SELinuxLabel", TP, "::label6", "ns5", "pod5", "::label5"}},
	                  1);
	/* new incomparable label (missing user) */
	add_get_conflicts(existing, N(existing), &(struct pwv){TP, "vol6", "system_u::label6", MO},
	                  NULL, 0);
	/* new comparable label (missing categories) */
	add_get_conflicts(existing, N(existing),
	                  &(struct pwv){TP, "vol7", "system_u:system_r:label7", MO},
	                  (struct exp_conflict[]){{"SELinuxLabel", TP, "system_u:system_r:label7",
	                                           "ns7", "pod7", "::label7:c0,c1"}},
	                  1);
	/* new incomparable label (missing everything) */
	add_get_conflicts(existing, N(existing),
	                  &(struct pwv){TP, "vol8", "system_u:system_r:label8", MO}, NULL, 0);
	/* new comparable label (missing everything but categories) */
	add_get_conflicts(
	        existing, N(existing),
	        &(struct pwv){TP, "vol8", "system_u:system_r:label8:c0,c1", MO},
	        (struct exp_conflict[]){
	                {"SELinuxLabel", TP, "system_u:system_r:label8:c0,c1", "ns8", "pod8", ""}},
	        1);
	/* both properties at once: one pair of each */
	add_get_conflicts(existing, N(existing), &(struct pwv){TP, "vol7", ":::s0", RE},
	                  (struct exp_conflict[]){
	                          {"SELinuxChangePolicy", TP, RE, "ns7", "pod7", MO},
	                          {"SELinuxLabel", TP, ":::s0", "ns7", "pod7", "::label7:c0,c1"}},
	                  2);
}

static size_t n_conflicts(struct sw_cache *c)
{
	struct collected k = {0};
	assert_int_equal(sw_cache_conflicts(c, collect, &k), 0);
	return k.n;
}

static void test_multi_volume_conflicts(void **state)
{
	struct sw_cache *c;
	size_t n1, n2, n3, n4;
	struct collected all = {0};
	size_t de = 0;

	(void)state;
	assert_int_equal(sw_cache_new(&c), 0);
	add(c, &(struct pwv){"ns", "podB", "vol1", "system_u:system_r:labelB", MO}, "driver1",
	    NULL);
	add(c, &(struct pwv){"ns", "podC", "vol2", "system_u:system_r:labelC", MO}, "driver1",
	    NULL);
	n1 = add(c, &(struct pwv){"ns", "podA", "vol1", "system_u:system_r:labelA", MO}, "driver1",
	         NULL);
	assert_true(n1 > 0);
	n2 = add(c, &(struct pwv){"ns", "podA", "vol2", "system_u:system_r:labelA", MO}, "driver1",
	         NULL);
	assert_true(n2 > 0);
	assert_int_equal(n_conflicts(c), n1 + n2);
	sw_cache_delete_pod(c, "ns", "podA");
	assert_int_equal(n_conflicts(c), 0);
	/* identical conflicts from two volumes are listed once */
	add(c, &(struct pwv){"ns", "podD", "vol3", "system_u:system_r:labelD", MO}, "driver1",
	    NULL);
	add(c, &(struct pwv){"ns", "podD", "vol4", "system_u:system_r:labelD", MO}, "driver1",
	    NULL);
	n3 = add(c, &(struct pwv){"ns", "podE", "vol3", "system_u:system_r:labelE", MO}, "driver1",
	         NULL);
	n4 = add(c, &(struct pwv){"ns", "podE", "vol4", "system_u:system_r:labelE", MO}, "driver1",
	         NULL);
	assert_int_equal(n3, n4);
	assert_true(n3 > 0);
	assert_int_equal(sw_cache_conflicts(c, collect, &all), 0);
	for (size_t i = 0; i < all.n; i++)
		de += !strcmp(all.v[i].name, "podD") || !strcmp(all.v[i].name, "podE");
	assert_int_equal(de, n3);
	/* re-adding a pod unchanged reports nothing and keeps its conflicts */
	assert_int_equal(add(c, &(struct pwv){"ns", "podE", "vol3", "system_u:system_r:labelE", MO},
	                     "driver1", NULL),
	                 0);
	assert_int_equal(n_conflicts(c), n3);
	sw_cache_free(c);
}

struct del_case {
	struct pwv initial[4];
	size_t ni;
	const char *del;
	bool twice;
	const char *pairs[2][2];
	size_t np;
};

static void test_delete_pod_conflicts(void **state)
{
#define A(v, l)                                                                                    \
	{                                                                                          \
		"ns", "podA", v, "system_u:system_r:" l, MO                                        \
	}
#define B(v, l)                                                                                    \
	{                                                                                          \
		"ns", "podB", v, "system_u:system_r:" l, MO                                        \
	}
#define C(v, l)                                                                                    \
	{                                                                                          \
		"ns", "podC", v, "system_u:system_r:" l, MO                                        \
	}
#define D(v, l)                                                                                    \
	{                                                                                          \
		"ns", "podD", v, "system_u:system_r:" l, MO                                        \
	}
	static const struct del_case cases[] = {
	        {{A("vol1", "labelA"), B("vol1", "labelB")}, 2, "podA", false, {{0}}, 0},
	        {{A("vol1", "labelA"), B("vol1", "labelB"), C("vol2", "labelC")},
	         3,
	         "podC",
	         false,
	         {{"podA", "podB"}},
	         1},
	        {{A("vol1", "labelA"), B("vol1", "labelB"), C("vol1", "labelC")},
	         3,
	         "podA",
	         false,
	         {{"podB", "podC"}},
	         1},
	        {{B("vol1", "labelB"), C("vol2", "labelC"), A("vol1", "labelA"),
	          A("vol2", "labelA")},
	         4,
	         "podA",
	         false,
	         {{0}},
	         0},
	        {{A("vol1", "labelA"), B("vol1", "labelB"), C("vol2", "labelC"),
	          D("vol2", "labelD")},
	         4,
	         "podA",
	         false,
	         {{"podC", "podD"}},
	         1},
	        {{A("vol1", "labelA"), B("vol1", "labelB")}, 2, "podA", true, {{0}}, 0},
	};
	(void)state;
	for (size_t t = 0; t < N(cases); t++) {
		const struct del_case *k = &cases[t];
		struct collected all = {0};
		struct sw_cache *c;

		assert_int_equal(sw_cache_new(&c), 0);
		for (size_t i = 0; i < k->ni; i++)
			add(c, &k->initial[i], "driver1", NULL);
		sw_cache_delete_pod(c, "ns", k->del);
		if (k->twice)
			sw_cache_delete_pod(c, "ns", k->del);
		assert_int_equal(sw_cache_conflicts(c, collect, &all), 0);
		for (size_t i = 0; i < all.n; i++) {
			assert_string_not_equal(all.v[i].name, k->del);
			assert_string_not_equal(all.v[i].other_name, k->del);
		}
		for (size_t p = 0; p < k->np; p++) {
			bool fwd = false, rev = false;
			for (size_t i = 0; i < all.n; i++) {
				fwd |= !strcmp(all.v[i].name, k->pairs[p][0]) &&
				       !strcmp(all.v[i].other_name, k->pairs[p][1]);
				rev |= !strcmp(all.v[i].name, k->pairs[p][1]) &&
				       !strcmp(all.v[i].other_name, k->pairs[p][0]);
			}
			assert_true(fwd && rev);
		}
		if (!k->np)
			assert_int_equal(all.n, 0);
		assert_true(sw_cache_consistent(c));
		sw_cache_free(c);
	}
}

struct names {
	char v[8][64];
	size_t n;
};

static int name_of(const char *ns, const char *name, void *ud)
{
	struct names *k = ud;
	assert_true(k->n < 8);
	snprintf(k->v[k->n++], 64, "%s/%s", ns, name);
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void test_pods_for_driver(void **state)
{
	static const struct {
		const char *driver;
		struct pwv p;
	} pods[] = {
	        {"csiDriver1", {"ns1", "pod1-mountOption", "vol1", "label1", MO}},
	        {"csiDriver2", {"ns2", "pod2-recursive", "vol2", "label2", RE}},
	        {"csiDriver2", {"ns3", "pod3-1", "vol3", "label3", RE}},
	        {"csiDriver2", {"ns3", "pod3-2", "vol3", "label3", RE}},
	        {"csiDriver3", {"ns4", "pod4-1", "vol4", "label4", MO}},
	        {"csiDriver3", {"ns4", "pod4-2", "vol4", "label4", MO}},
	};
	static const struct {
		const char *driver;
		const char *want[3];
		size_t n;
	} exp[] = {
	        {"csiDriver1", {"ns1/pod1-mountOption"}, 1},
	        {"csiDriver2", {"ns2/pod2-recursive", "ns3/pod3-1", "ns3/pod3-2"}, 3},
	        {"csiDriver3", {"ns4/pod4-1", "ns4/pod4-2"}, 2},
	        {"csiDriver4", {NULL}, 0},
	};
	struct sw_cache *c;

	(void)state;
	assert_int_equal(sw_cache_new(&c), 0);
	for (size_t i = 0; i < N(pods); i++)
		assert_int_equal(add(c, &pods[i].p, pods[i].driver, NULL), 0);
	for (size_t i = 0; i < N(exp); i++) {
		struct names k = {0};
		assert_int_equal(sw_cache_pods_for_driver(c, exp[i].driver, name_of, &k), 0);
		qsort(k.v, k.n, sizeof(k.v[0]), cmp_name);
		assert_int_equal(k.n, exp[i].n);
		for (size_t j = 0; j < k.n; j++)
			assert_string_equal(k.v[j], exp[i].want[j]);
	}
	sw_cache_free(c);
}

/* the table grows past its first 64 buckets without losing an entry */
static void test_cache_grows(void **state)
{
	struct sw_cache *c;
	char vol[32], pod[32];

	(void)state;
	assert_int_equal(sw_cache_new(&c), 0);
	for (int i = 0; i < 2000; i++) {
		snprintf(vol, sizeof(vol), "vol%d", i / 2);
		snprintf(pod, sizeof(pod), "pod%d", i);
		assert_int_equal(add(c, &(struct pwv){"ns", pod, vol, ":::s0", MO}, "d", NULL), 0);
	}
	assert_int_equal(sw_cache_n_volumes(c), 1000);
	assert_int_equal(sw_cache_n_pods(c), 2000);
	assert_true(sw_cache_consistent(c));
	/* a conflicting newcomer on vol999 meets both of its pods */
	assert_int_equal(add(c, &(struct pwv){"ns", "x", "vol999", ":::s1", MO}, "d", NULL), 4);
	for (int i = 0; i < 2000; i++) {
		snprintf(pod, sizeof(pod), "pod%d", i);
		sw_cache_delete_pod(c, "ns", pod);
	}
	sw_cache_delete_pod(c, "ns", "x");
	assert_int_equal(sw_cache_n_volumes(c), 0);
	assert_int_equal(n_conflicts(c), 0);
	sw_cache_free(c);
}

static void test_message(void **state)
{
	struct sw_conflict same = {.property = "SELinuxLabel",
	                           .reason = "SELinuxLabelConflict",
	                           .ns = "ns1",
	                           .name = "pod1",
	                           .value = ":::s0:c1,c2",
	                           .other_ns = "ns1",
	                           .other_name = "pod2",
	                           .other_value = ":::s0:c98,c99"},
	                   other = same;
	char *m;

	(void)state;
	m = sw_conflict_message(&same);
	assert_string_equal(m,
	                    "SELinuxLabel \":::s0:c1,c2\" conflicts with pod pod2 that uses the "
	                    "same volume as this pod with SELinuxLabel \":::s0:c98,c99\". If both "
	                    "pods land on the same node, only one of them may access the volume.");
	free(m);
	other.other_ns = "ns2";
	m = sw_conflict_message(&other);
	assert_string_equal(m,
	                    "SELinuxLabel\":::s0:c1,c2\" conflicts with another pod that uses the "
	                    "same volume as this pod with a different SELinuxLabel. If both pods "
	                    "land on the same node, only one of them may access the volume.");
	free(m);
}

/* ---- a pod's volumes (TestSELinuxWarningController_Sync's volume part) -------------------- */
struct world {
	cJSON *pvcs[4], *pvs[4], *drivers[4];
	size_t npvc, npv, ndriver;
};

static const cJSON *w_pvc(void *ud, const char *ns, const char *name)
{
	struct world *w = ud;
	for (size_t i = 0; i < w->npvc; i++) {
		const cJSON *m = cJSON_GetObjectItem(w->pvcs[i], "metadata");
		if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(m, "namespace")), ns) &&
		    !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(m, "name")), name))
			return w->pvcs[i];
	}
	return NULL;
}

static const cJSON *w_pv(void *ud, const char *name)
{
	struct world *w = ud;
	for (size_t i = 0; i < w->npv; i++)
		if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(
		                    cJSON_GetObjectItem(w->pvs[i], "metadata"), "name")),
		            name))
			return w->pvs[i];
	return NULL;
}

static bool w_driver(void *ud, const char *driver)
{
	struct world *w = ud;
	for (size_t i = 0; i < w->ndriver; i++)
		if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(
		                    cJSON_GetObjectItem(w->drivers[i], "metadata"), "name")),
		            driver))
			return cJSON_IsTrue(cJSON_GetObjectItem(
			        cJSON_GetObjectItem(w->drivers[i], "spec"), "seLinuxMount"));
	return false;
}

static void world_free(struct world *w)
{
	for (size_t i = 0; i < w->npvc; i++)
		cJSON_Delete(w->pvcs[i]);
	for (size_t i = 0; i < w->npv; i++)
		cJSON_Delete(w->pvs[i]);
	for (size_t i = 0; i < w->ndriver; i++)
		cJSON_Delete(w->drivers[i]);
}

/* pvcBoundToPV("pv1", "pvc1"), pvBoundToPVC("pv1", "pvc1") and a CSIDriver ebs.csi.aws.com */
static void bound_world(struct world *w, bool selinux_mount)
{
	char d[256];
	*w = (struct world){0};
	w->pvcs[w->npvc++] = cJSON_Parse(
	        "{\"metadata\":{\"namespace\":\"ns1\",\"name\":\"pvc1\",\"uid\":\"uid1\"},"
	        "\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],\"volumeName\":\"pv1\"},"
	        "\"status\":{\"phase\":\"Bound\"}}");
	w->pvs[w->npv++] = cJSON_Parse(
	        "{\"metadata\":{\"name\":\"pv1\"},\"spec\":{\"csi\":{\"driver\":\"ebs.csi.aws."
	        "com\","
	        "\"volumeHandle\":\"pv1\"},\"claimRef\":{\"kind\":\"PersistentVolumeClaim\","
	        "\"namespace\":\"ns1\",\"name\":\"pvc1\",\"uid\":\"uid1\",\"apiVersion\":\"v1\"}},"
	        "\"status\":{\"phase\":\"Bound\"}}");
	snprintf(d, sizeof(d),
	         "{\"metadata\":{\"name\":\"ebs.csi.aws.com\"},\"spec\":{\"seLinuxMount\":%s}}",
	         selinux_mount ? "true" : "false");
	w->drivers[w->ndriver++] = cJSON_Parse(d);
}

/* upstream's pod(name, level, policy) builder with optional extra volumes (JSON fragments) */
static cJSON *mkpod(const char *name, const char *level, const char *policy, const char *volumes,
                    const char *mounts)
{
	char js[4096];
	char opts[128] = "", pol[64] = "";

	if (level && *level)
		snprintf(opts, sizeof(opts), ",\"seLinuxOptions\":{\"level\":\"%s\"}", level);
	if (policy)
		snprintf(pol, sizeof(pol), "\"seLinuxChangePolicy\":\"%s\"", policy);
	snprintf(js, sizeof(js),
	         "{\"metadata\":{\"namespace\":\"ns1\",\"name\":\"%s\",\"uid\":\"poduid-%s\"},"
	         "\"spec\":{\"containers\":[{\"name\":\"container1\",\"image\":\"image1\","
	         "\"volumeMounts\":[{\"name\":\"vol1\",\"mountPath\":\"/mnt\"}%s]}],"
	         "\"securityContext\":{%s%s},"
	         "\"volumes\":[{\"name\":\"emptyDir1\",\"emptyDir\":{}}%s]},"
	         "\"status\":{\"phase\":\"Running\"}}",
	         name, name, mounts ? mounts : "", pol, *pol ? opts : (*opts ? opts + 1 : ""),
	         volumes ? volumes : "");
	return cJSON_Parse(js);
}

#define WITH_PVC ",{\"name\":\"vol1\",\"persistentVolumeClaim\":{\"claimName\":\"pvc1\"}}"
#define WITH_INLINE                                                                                \
	",{\"name\":\"inlineVolume\",\"iscsi\":{\"targetPortal\":\"10.0.0.1:3260\","               \
	"\"iqn\":\"iqn.2001-04.com.example:inlinevol1\",\"lun\":0}}"
#define MOUNT_INLINE ",{\"name\":\"inlineVolume\",\"mountPath\":\"/mnt\"}"
#define PV1          "kubernetes.io/csi/ebs.csi.aws.com^pv1"
#define INLINE1      "kubernetes.io/iscsi/10.0.0.1:3260:iqn.2001-04.com.example:inlinevol1:0"

struct exp_vol {
	enum sw_vol_state state;
	const char *name, *unique, *label, *policy, *driver;
};

static void check_pod(cJSON *pod, struct world *w, const struct exp_vol *e, size_t ne)
{
	struct sw_lookup lk = {.pvc = w_pvc, .pv = w_pv, .driver_selinux_mount = w_driver, .ud = w};
	struct sw_volume *v = NULL;
	size_t n = 0;

	assert_non_null(pod);
	assert_int_equal(sw_pod_volumes(pod, &lk, &v, &n), 0);
	assert_int_equal(n, ne);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(v[i].state, e[i].state);
		assert_string_equal(v[i].name, e[i].name);
		if (e[i].state != SW_VOL_OK) {
			if (e[i].state != SW_VOL_SKIP)
				assert_non_null(v[i].err);
			continue;
		}
		assert_string_equal(v[i].unique, e[i].unique);
		assert_string_equal(v[i].label, e[i].label);
		assert_string_equal(v[i].policy, e[i].policy);
		assert_string_equal(v[i].csi_driver, e[i].driver);
	}
	sw_volumes_free(v, n);
	cJSON_Delete(pod);
	world_free(w);
}

static void test_sync_volumes(void **state)
{
	struct world w;

	(void)state;
	/* existing pod with no volumes (vol1 is mounted but not a volume of the pod) */
	w = (struct world){0};
	check_pod(mkpod("pod1", "s0:c1,c2", NULL, NULL, NULL), &w, NULL, 0);
	/* existing pod with unbound PVC: an error, retried */
	w = (struct world){0};
	check_pod(mkpod("pod1", "s0:c1,c2", NULL,
	                ",{\"name\":\"vol1\",\"persistentVolumeClaim\":{\"claimName\":"
	                "\"non-existing-pvc\"}}",
	                NULL),
	          &w, (struct exp_vol[]){{.state = SW_VOL_ERROR, .name = "vol1"}}, 1);
	/* existing pod with fully bound PVC */
	bound_world(&w, true);
	check_pod(
	        mkpod("pod1", "s0:c1,c2", NULL, WITH_PVC, NULL), &w,
	        (struct exp_vol[]){{SW_VOL_OK, "vol1", PV1, ":::s0:c1,c2", MO, "ebs.csi.aws.com"}},
	        1);
	/* ... Recursive change policy: the label is cleared */
	bound_world(&w, true);
	check_pod(mkpod("pod1", "s0:c1,c2", RE, WITH_PVC, NULL), &w,
	          (struct exp_vol[]){{SW_VOL_OK, "vol1", PV1, "", RE, "ebs.csi.aws.com"}}, 1);
	/* existing pod with inline volume (iSCSI supports -o context) */
	bound_world(&w, true);
	check_pod(mkpod("pod1", "s0:c1,c2", NULL, WITH_INLINE, MOUNT_INLINE), &w,
	          (struct exp_vol[]){{SW_VOL_OK, "inlineVolume", INLINE1, ":::s0:c1,c2", MO, ""}},
	          1);
	/* existing pod with inline volume and PVC */
	bound_world(&w, true);
	check_pod(mkpod("pod1", "s0:c1,c2", NULL, WITH_PVC WITH_INLINE, MOUNT_INLINE), &w,
	          (struct exp_vol[]){{SW_VOL_OK, "vol1", PV1, ":::s0:c1,c2", MO, "ebs.csi.aws.com"},
	                             {SW_VOL_OK, "inlineVolume", INLINE1, ":::s0:c1,c2", MO, ""}},
	          2);
	/* Recursive policy */
	bound_world(&w, true);
	check_pod(mkpod("pod1", "s0:c1,c2", RE, WITH_PVC, NULL), &w,
	          (struct exp_vol[]){{SW_VOL_OK, "vol1", PV1, "", RE, "ebs.csi.aws.com"}}, 1);
	/* empty label implies Recursive policy */
	bound_world(&w, true);
	check_pod(mkpod("pod1", "", MO, WITH_PVC, NULL), &w,
	          (struct exp_vol[]){{SW_VOL_OK, "vol1", PV1, "", RE, "ebs.csi.aws.com"}}, 1);
	/* CSIDriver.SELinuxMount disabled: label cleared, Recursive */
	bound_world(&w, false);
	check_pod(mkpod("pod1", "s0:c1,c2", NULL, WITH_PVC, NULL), &w,
	          (struct exp_vol[]){{SW_VOL_OK, "vol1", PV1, "", RE, "ebs.csi.aws.com"}}, 1);
	/* no CSIDriver object at all: the same */
	bound_world(&w, true);
	cJSON_Delete(w.drivers[0]);
	w.ndriver = 0;
	check_pod(mkpod("pod1", "s0:c1,c2", NULL, WITH_PVC, NULL), &w,
	          (struct exp_vol[]){{SW_VOL_OK, "vol1", PV1, "", RE, "ebs.csi.aws.com"}}, 1);
}

static void test_sync_volume_errors(void **state)
{
	struct world w;
	cJSON *pod;

	(void)state;
	/* PVC bound to a PV whose claimRef names another uid */
	bound_world(&w, true);
	cJSON_SetValuestring(
	        cJSON_GetObjectItem(
	                cJSON_GetObjectItem(cJSON_GetObjectItem(w.pvs[0], "spec"), "claimRef"),
	                "uid"),
	        "other");
	check_pod(mkpod("pod1", "s0:c1,c2", NULL, WITH_PVC, NULL), &w,
	          (struct exp_vol[]){{.state = SW_VOL_ERROR, .name = "vol1"}}, 1);
	/* PVC Pending */
	bound_world(&w, true);
	cJSON_SetValuestring(cJSON_GetObjectItem(cJSON_GetObjectItem(w.pvcs[0], "status"), "phase"),
	                     "Pending");
	check_pod(mkpod("pod1", "s0:c1,c2", NULL, WITH_PVC, NULL), &w,
	          (struct exp_vol[]){{.state = SW_VOL_ERROR, .name = "vol1"}}, 1);
	/* PV missing */
	bound_world(&w, true);
	cJSON_Delete(w.pvs[0]);
	w.npv = 0;
	check_pod(mkpod("pod1", "s0:c1,c2", NULL, WITH_PVC, NULL), &w,
	          (struct exp_vol[]){{.state = SW_VOL_ERROR, .name = "vol1"}}, 1);
	/* an inline CSI volume: the CSI plugin has no volume name for it (upstream errors too) */
	bound_world(&w, true);
	check_pod(mkpod("pod1", "s0:c1,c2", NULL,
	                ",{\"name\":\"vol1\",\"csi\":{\"driver\":\"ebs.csi.aws.com\"}}", NULL),
	          &w, (struct exp_vol[]){{.state = SW_VOL_ERROR, .name = "vol1"}}, 1);
	/* an emptyDir that is mounted: no plugin of kcm's, skipped */
	w = (struct world){0};
	check_pod(mkpod("pod1", "s0:c1,c2", NULL, NULL,
	                ",{\"name\":\"emptyDir1\",\"mountPath\":\"/e\"}"),
	          &w, (struct exp_vol[]){{.state = SW_VOL_SKIP, .name = "emptyDir1"}}, 1);
	/* two containers mount one volume with different labels: MultipleSELinuxLabels */
	bound_world(&w, true);
	pod = mkpod("pod1", "s0:c1,c2", NULL, WITH_PVC, NULL);
	cJSON_AddItemToArray(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "spec"), "containers"),
	        cJSON_Parse("{\"name\":\"c2\",\"securityContext\":{\"seLinuxOptions\":{\"level\":"
	                    "\"s0:c3,c4\"}},\"volumeMounts\":[{\"name\":\"vol1\",\"mountPath\":"
	                    "\"/m\"}]}"));
	check_pod(pod, &w, (struct exp_vol[]){{.state = SW_VOL_MULTI, .name = "vol1"}}, 1);
	/* ... with the same label in an init container: one label, fine */
	bound_world(&w, true);
	pod = mkpod("pod1", "s0:c1,c2", NULL, WITH_PVC, NULL);
	cJSON_AddItemToObject(cJSON_GetObjectItem(pod, "spec"), "initContainers",
	                      cJSON_Parse("[{\"name\":\"i\",\"volumeMounts\":[{\"name\":\"vol1\","
	                                  "\"mountPath\":\"/m\"}]}]"));
	check_pod(
	        pod, &w,
	        (struct exp_vol[]){{SW_VOL_OK, "vol1", PV1, ":::s0:c1,c2", MO, "ebs.csi.aws.com"}},
	        1);
	/* a generic ephemeral volume: claim "<pod>-<volume>" must be controlled by the pod */
	bound_world(&w, true);
	cJSON_SetValuestring(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(w.pvcs[0], "metadata"), "name"),
	        "pod1-vol1");
	pod = mkpod("pod1", "s0:c1,c2", NULL, ",{\"name\":\"vol1\",\"ephemeral\":{}}", NULL);
	check_pod(pod, &w, (struct exp_vol[]){{.state = SW_VOL_ERROR, .name = "vol1"}}, 1);
	bound_world(&w, true);
	cJSON_SetValuestring(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(w.pvcs[0], "metadata"), "name"),
	        "pod1-vol1");
	cJSON_AddItemToObject(cJSON_GetObjectItem(w.pvcs[0], "metadata"), "ownerReferences",
	                      cJSON_Parse("[{\"kind\":\"Pod\",\"name\":\"pod1\",\"uid\":"
	                                  "\"poduid-pod1\",\"controller\":true}]"));
	pod = mkpod("pod1", "s0:c1,c2", NULL, ",{\"name\":\"vol1\",\"ephemeral\":{}}", NULL);
	check_pod(
	        pod, &w,
	        (struct exp_vol[]){{SW_VOL_OK, "vol1", PV1, ":::s0:c1,c2", MO, "ebs.csi.aws.com"}},
	        1);
}

/* the other plugins' unique names and context-mount support */
static void test_plugins(void **state)
{
	static const struct {
		const char *vol, *unique, *label, *policy;
	} cases[] = {
	        {"{\"name\":\"vol1\",\"hostPath\":{\"path\":\"/data\"}}",
	         "kubernetes.io/host-path//data", "", RE},
	        {"{\"name\":\"vol1\",\"nfs\":{\"server\":\"srv\",\"path\":\"/exp\"}}",
	         "kubernetes.io/nfs/srv//exp", "", RE},
	        {"{\"name\":\"vol1\",\"fc\":{\"targetWWNs\":[\"a\",\"b\"],\"lun\":2}}",
	         "kubernetes.io/fc/[a b]:2", ":::s0:c1,c2", MO},
	        {"{\"name\":\"vol1\",\"fc\":{\"wwids\":[\"w1\"]}}", "kubernetes.io/fc/[w1]",
	         ":::s0:c1,c2", MO},
	};
	(void)state;
	for (size_t i = 0; i < N(cases); i++) {
		struct world w = {0};
		char v[256];
		snprintf(v, sizeof(v), ",%s", cases[i].vol);
		check_pod(mkpod("pod1", "s0:c1,c2", NULL, v, NULL), &w,
		          (struct exp_vol[]){{SW_VOL_OK, "vol1", cases[i].unique, cases[i].label,
		                              cases[i].policy, ""}},
		          1);
	}
	/* an fc volume with neither: no name, an error */
	{
		struct world w = {0};
		check_pod(mkpod("pod1", "s0:c1,c2", NULL, ",{\"name\":\"vol1\",\"fc\":{}}", NULL),
		          &w, (struct exp_vol[]){{.state = SW_VOL_ERROR, .name = "vol1"}}, 1);
	}
}

static int claim_cb(const char *claim, void *ud)
{
	struct names *k = ud;
	snprintf(k->v[k->n++], 64, "%s", claim);
	return 0;
}

static void test_pod_claims(void **state)
{
	cJSON *pod = mkpod("pod1", "", NULL,
	                   WITH_PVC ",{\"name\":\"eph\",\"ephemeral\":{}}" WITH_INLINE, NULL);
	struct names k = {0};

	(void)state;
	assert_int_equal(sw_pod_claims(pod, claim_cb, &k), 0);
	assert_int_equal(k.n, 2);
	assert_string_equal(k.v[0], "pvc1");
	assert_string_equal(k.v[1], "pod1-eph");
	cJSON_Delete(pod);
}

/* bad input: no crash, -EINVAL without namespace/name, garbage fields ignored */
static void test_bad_input(void **state)
{
	struct world w = {0};
	struct sw_lookup lk = {
	        .pvc = w_pvc, .pv = w_pv, .driver_selinux_mount = w_driver, .ud = &w};
	struct sw_volume *v = NULL;
	size_t n = 0;
	cJSON *pod = cJSON_Parse("{\"metadata\":{\"name\":\"x\"}}");

	(void)state;
	assert_int_equal(sw_pod_volumes(pod, &lk, &v, &n), -EINVAL);
	cJSON_Delete(pod);
	pod = cJSON_Parse("{\"metadata\":{\"namespace\":\"n\",\"name\":\"x\"},\"spec\":{"
	                  "\"volumes\":[3,{\"name\":7},{\"persistentVolumeClaim\":1}],"
	                  "\"containers\":[1,{\"volumeMounts\":[5,{\"name\":\"a\"}],"
	                  "\"securityContext\":{\"seLinuxOptions\":\"x\"}}]}}");
	assert_int_equal(sw_pod_volumes(pod, &lk, &v, &n), 0);
	sw_volumes_free(v, n);
	cJSON_Delete(pod);
	assert_int_equal(sw_pod_volumes(NULL, &lk, &v, &n), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_parse),
	        cmocka_unit_test(test_options_label),
	        cmocka_unit_test(test_labels_conflict),
	        cmocka_unit_test(test_delete_all),
	        cmocka_unit_test(test_add_volume_get_conflicts),
	        cmocka_unit_test(test_multi_volume_conflicts),
	        cmocka_unit_test(test_delete_pod_conflicts),
	        cmocka_unit_test(test_pods_for_driver),
	        cmocka_unit_test(test_cache_grows),
	        cmocka_unit_test(test_message),
	        cmocka_unit_test(test_sync_volumes),
	        cmocka_unit_test(test_sync_volume_errors),
	        cmocka_unit_test(test_plugins),
	        cmocka_unit_test(test_pod_claims),
	        cmocka_unit_test(test_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
