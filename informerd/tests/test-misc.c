/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of the small pieces: the discovery filter, the shared metrics table (publish, reopen
 * after a restart, reader), and handler-table matching and registration errors.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "informerd/discovery.h"
#include "lib/handlers.h"
#include "lib/infmetrics.h"
#include "kube/discovery.h"

static void test_discovery_filter(void **state)
{
	(void)state;
	uint32_t all =
	        KUBE_VERB_BIT_DELETE | KUBE_VERB_BIT_LIST | KUBE_VERB_BIT_WATCH | KUBE_VERB_BIT_GET;

	assert_true(inf_discovery_wanted("", "pods", all));
	assert_true(inf_discovery_wanted("apps", "deployments", all));
	assert_false(inf_discovery_wanted("", "pods", all & ~KUBE_VERB_BIT_DELETE));
	assert_false(inf_discovery_wanted("", "pods", all & ~KUBE_VERB_BIT_WATCH));
	assert_false(inf_discovery_wanted("", "pods", all & ~KUBE_VERB_BIT_LIST));
	assert_false(inf_discovery_wanted("", "events", all));
	assert_false(inf_discovery_wanted("events.k8s.io", "events", all));
	assert_true(inf_discovery_wanted("example.com", "events",
	                                 all)); /* only the two built-in ones */
	assert_false(inf_discovery_wanted("", "pods/status", all));
	assert_false(inf_discovery_wanted("", NULL, all));
}

/* Issue 21: the discovered-resource set has no bound (2,500 CRDs), copies its strings, and
 * swap-removes without disturbing the other entries. */
static void test_res_set(void **state)
{
	(void)state;
	struct inf_res_set s = {0};
	char name[32];
	struct inf_resource *r = NULL;

	for (int i = 0; i < 2500; i++) {
		snprintf(name, sizeof(name), "crd%d", i);
		struct inf_resource in = {"x.io", "v1", name, "Crd", SHM_RECORD_META, true};
		assert_int_equal(inf_res_set_add(&s, &in, &r), 0);
		assert_ptr_not_equal(r->resource, name); /* a copy */
		assert_string_equal(r->resource, name);
	}
	assert_int_equal(s.n, 2500);
	struct inf_resource *last = s.v[2499];
	inf_res_set_remove(&s, 0);
	assert_int_equal(s.n, 2499);
	assert_ptr_equal(s.v[0], last);
	assert_string_equal(s.v[1]->resource, "crd1");
	inf_res_set_remove(&s, 5000); /* out of range: nothing */
	assert_int_equal(s.n, 2499);
	assert_int_equal(inf_res_set_add(&s, NULL, NULL), -EINVAL);
	inf_res_set_clear(&s);
	assert_int_equal(s.n, 0);
	assert_null(s.v);
}

static void test_metrics_table(void **state)
{
	(void)state;
	int fd = memfd_create("m", MFD_CLOEXEC);
	struct inf_metrics *m = NULL;
	struct inf_metrics_row *a, *b;
	const struct inf_metrics_hdr *h = NULL;

	assert_true(fd >= 0);
	assert_int_equal(inf_metrics_map_ro(fd, &h), -EPROTO); /* empty */
	assert_int_equal(inf_metrics_open(fd, &m), 0);
	a = inf_metrics_row(m, "", "pods");
	b = inf_metrics_row(m, "apps", "replicasets");
	assert_non_null(a);
	assert_ptr_not_equal(a, b);
	assert_ptr_equal(inf_metrics_row(m, "", "pods"), a);
	inf_metrics_add(a, INF_M_WATCH_EVENTS, 5);
	inf_metrics_add(a, INF_M_WATCH_EVENTS, 2);
	inf_metrics_set(b, INF_M_SYNCED, 1);
	inf_metrics_add(NULL, INF_M_LISTS, 1); /* no-op */
	assert_int_equal(inf_metrics_map_ro(fd, &h), 0);
	assert_int_equal(atomic_load(&h->n_rows), 2);
	assert_string_equal(h->rows[0].resource, "pods");
	assert_int_equal(atomic_load(&h->rows[0].v[INF_M_WATCH_EVENTS]), 7);
	assert_int_equal(atomic_load(&h->rows[1].v[INF_M_SYNCED]), 1);
	assert_int_equal(atomic_load(&h->restarts), 0);
	inf_metrics_close(m);
	/* A restarted informerd finds its rows and keeps counting. */
	assert_int_equal(inf_metrics_open(fd, &m), 0);
	inf_metrics_add(inf_metrics_row(m, "", "pods"), INF_M_WATCH_EVENTS, 1);
	assert_int_equal(atomic_load(&h->rows[0].v[INF_M_WATCH_EVENTS]), 8);
	assert_int_equal(atomic_load(&h->n_rows), 2);
	assert_int_equal(atomic_load(&h->restarts), 1);
	inf_metrics_close(m);
	inf_metrics_unmap(h);
	/* Another layout is refused. */
	uint32_t bad = 0x12345678;
	assert_int_equal(pwrite(fd, &bad, sizeof(bad), 0), (ssize_t)sizeof(bad));
	assert_int_equal(inf_metrics_open(fd, &m), -EPROTO);
	close(fd);
	/* A private table works too. */
	assert_int_equal(inf_metrics_open(-1, &m), 0);
	assert_true(inf_metrics_fd(m) >= 0);
	inf_metrics_close(m);
}

static int calls_a, calls_b, calls_c;
static void on_a(struct inf_handler_ctx *c, const struct inf_event *e)
{
	(void)c;
	(void)e;
	calls_a++;
}
static void on_b(struct inf_handler_ctx *c, const struct inf_event *e)
{
	(void)c;
	(void)e;
	calls_b++;
}
static void on_c(struct inf_handler_ctx *c, const struct inf_event *e)
{
	(void)c;
	(void)e;
	calls_c++;
}
static int refuse(struct inf_handler_ctx *c)
{
	(void)c;
	return -EPERM;
}

static void test_dispatch_matching(void **state)
{
	(void)state;
	static const struct inf_resource pods = {"", "v1", "pods", "Pod", SHM_RECORD_POD, true};
	static const struct inf_resource deps = {"apps",          "v1", "deployments", "Deployment",
	                                         SHM_RECORD_META, true};
	static const struct inf_handler_entry ea[] = {
	        {.group = "", .resource = "pods", .on_add = on_a}};
	static const struct inf_handler_entry eb[] = {
	        {.group = NULL, .resource = "*", .on_add = on_b, .on_delete = on_b}};
	static const struct inf_handler_entry ec[] = {
	        {.group = "apps", .resource = "pods", .on_add = on_c}};
	static const struct inf_handler_table ta = {
	        .controller = "a", .entries = ea, .n_entries = 1};
	static const struct inf_handler_table tb = {
	        .controller = "b", .entries = eb, .n_entries = 1};
	static const struct inf_handler_table tc = {
	        .controller = "c", .entries = ec, .n_entries = 1};
	static const struct inf_handler_table tr = {.controller = "r", .init = refuse};
	static const char *const q1[] = {"q1", NULL};
	static const struct inf_handler_table tq = {.controller = "q", .queues = q1};
	struct inf_dispatch *d = NULL;
	struct inf_event ev = {.kind = INF_EVENT_ADD};

	assert_int_equal(inf_dispatch_new(&d), 0);
	assert_int_equal(inf_dispatch_register(d, &ta, NULL, 0, NULL), 0);
	assert_int_equal(inf_dispatch_add_type(d, 0, &pods), 0);
	assert_int_equal(inf_dispatch_add_type(d, 1, &deps), 0);
	/* Registered after the types exist: bound too. */
	assert_int_equal(inf_dispatch_register(d, &tb, NULL, 0, NULL), 1);
	assert_int_equal(inf_dispatch_register(d, &tc, NULL, 0, NULL), 2);
	assert_int_equal(inf_dispatch_register(d, &tr, NULL, 0, NULL), -EPERM);
	assert_int_equal(inf_dispatch_register(d, &tq, NULL, 0, NULL),
	                 -EINVAL); /* its queue missing */
	ev.type = 0;
	ev.res = &pods;
	inf_dispatch_event(d, &ev);
	assert_int_equal(calls_a, 1);
	assert_int_equal(calls_b, 1);
	assert_int_equal(calls_c, 0); /* wrong group */
	ev.type = 1;
	ev.res = &deps;
	ev.kind = INF_EVENT_DELETE;
	inf_dispatch_event(d, &ev);
	assert_int_equal(calls_a, 1);
	assert_int_equal(calls_b, 2);
	ev.kind = INF_EVENT_UPDATE; /* no on_update anywhere */
	inf_dispatch_event(d, &ev);
	assert_int_equal(inf_dispatch_calls(d), 3);
	inf_dispatch_resync(d, 7, 0, true); /* out of range: ignored */
	inf_dispatch_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_discovery_filter),
	        cmocka_unit_test(test_res_set),
	        cmocka_unit_test(test_metrics_table),
	        cmocka_unit_test(test_dispatch_matching),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
