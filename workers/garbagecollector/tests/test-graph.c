/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/garbagecollector/tests/test-graph.c: the graph-change handler (processGraphChanges)
 * against upstream's behaviour: TestProcessEvent's sequences with the graph invariants after
 * every step, virtual nodes and their observation, the namespace/coordinate checks of
 * addDependentToOwners and the OwnerRefInvalidNamespace event (TestConflictingData cases),
 * blockOwnerDeletion unblocking, orphan/foreground transitions (incl. issue #77081), delete
 * events, virtual delete events with alternate identities (TestGetAlternateOwnerIdentity).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "workers/garbagecollector/tests/fake-api.h"

/* ---- builders --------------------------------------------------------------------------- */
#define REF(av, k, n, u)                                                                           \
	{                                                                                          \
		.api_version = (av), .kind = (k), .name = (n), .uid = (u), .controller = -1,       \
		.block_owner_deletion = -1                                                         \
	}
#define BREF(av, k, n, u, b)                                                                       \
	{                                                                                          \
		.api_version = (av), .kind = (k), .name = (n), .uid = (u), .controller = -1,       \
		.block_owner_deletion = (b)                                                        \
	}

struct env {
	struct gc_graph *g;
	struct gc_absent_cache *absent;
	struct rec_sink rec;
	struct gc_builder b;
};

static void env_init(struct env *e)
{
	memset(e, 0, sizeof *e);
	assert_int_equal(gc_graph_new(&e->g), 0);
	assert_int_equal(gc_absent_cache_new(GC_ABSENT_CACHE_SIZE, &e->absent), 0);
	e->b = (struct gc_builder){
	        .graph = e->g, .absent = e->absent, .sink = rec_sink_ops(&e->rec)};
}

static void env_fini(struct env *e)
{
	gc_graph_free(e->g);
	gc_absent_cache_free(e->absent);
}

static void ev(struct env *e, enum gc_event_type t, const char *av, const char *kind,
               const char *ns, const char *name, const char *uid,
               const struct kube_owner_ref *owners, size_t n)
{
	struct gc_event x = {
	        .type = t,
	        .api_version = av,
	        .kind = kind,
	        .obj = {.uid = uid, .name = name, .ns = ns, .owners = owners, .n_owners = n}};
	assert_int_equal(gc_builder_process(&e->b, &x), 0);
	assert_int_equal(gc_graph_check(e->g), 0);
}

static void vdelete(struct env *e, const struct gc_ref *id)
{
	struct gc_event x = {.type = GC_EVENT_DELETE,
	                     .virtual_ = true,
	                     .api_version = id->api_version,
	                     .kind = id->kind,
	                     .obj = {.uid = id->uid, .name = id->name, .ns = id->ns}};
	assert_int_equal(gc_builder_process(&e->b, &x), 0);
	assert_int_equal(gc_graph_check(e->g), 0);
}

/* TestProcessEvent: owners given by uid only */
static void pev(struct env *e, enum gc_event_type t, const char *uid, const char *const *owners,
                size_t n)
{
	struct kube_owner_ref refs[4];
	for (size_t i = 0; i < n; i++)
		refs[i] = (struct kube_owner_ref)REF(NULL, NULL, NULL, owners[i]);
	ev(e, t, "v1", "Pod", "", "", uid, refs, n);
}

static void test_process_event_sequences(void **state)
{
	(void)state;
	struct env e;
	const char *o1[] = {"1"}, *o12[] = {"1", "2"}, *o2[] = {"2"}, *o3[] = {"3"}, *o4[] = {"4"},
	           *dm[] = {"x"};
	/* test2 */
	env_init(&e);
	pev(&e, GC_EVENT_ADD, "1", NULL, 0);
	pev(&e, GC_EVENT_ADD, "2", o1, 1);
	pev(&e, GC_EVENT_ADD, "3", o12, 2);
	pev(&e, GC_EVENT_ADD, "4", o2, 1);
	pev(&e, GC_EVENT_DELETE, "2", dm, 1);
	assert_null(gc_graph_get(e.g, "2"));
	assert_int_equal(gc_graph_get(e.g, "1")->n_deps, 1); /* only 3 */
	env_fini(&e);
	/* test3: an update that makes 2 depend on 4 (a cycle 2 -> 4 -> 3 -> 2) */
	env_init(&e);
	pev(&e, GC_EVENT_ADD, "1", NULL, 0);
	pev(&e, GC_EVENT_ADD, "2", o1, 1);
	pev(&e, GC_EVENT_ADD, "3", o12, 2);
	pev(&e, GC_EVENT_ADD, "4", o3, 1);
	pev(&e, GC_EVENT_UPDATE, "2", o4, 1);
	assert_int_equal(gc_graph_get(e.g, "4")->n_deps, 1);
	assert_int_equal(gc_graph_get(e.g, "1")->n_deps, 1);
	env_fini(&e);
	/* reverse test2: owners seen after their dependents start virtual */
	env_init(&e);
	pev(&e, GC_EVENT_ADD, "4", o2, 1);
	assert_true(gc_graph_get(e.g, "2")->virtual_);
	assert_true(rec_has(&e.rec, "2")); /* the virtual owner is verified */
	pev(&e, GC_EVENT_ADD, "3", o12, 2);
	pev(&e, GC_EVENT_ADD, "2", o1, 1);
	assert_false(gc_graph_get(e.g, "2")->virtual_);
	pev(&e, GC_EVENT_ADD, "1", NULL, 0);
	pev(&e, GC_EVENT_DELETE, "2", dm, 1);
	assert_null(gc_graph_get(e.g, "2"));
	assert_int_equal(e.b.virtual_nodes_created, 2);
	/* a delete of an unknown uid is ignored */
	pev(&e, GC_EVENT_DELETE, "nope", NULL, 0);
	assert_int_equal(e.b.ignored_deletes, 1);
	env_fini(&e);
}

static void test_virtual_owner_then_observed(void **state)
{
	(void)state;
	struct env e;
	env_init(&e);
	/* a good child in ns1 of a cluster-scoped owner (Node): the virtual node takes ns1 */
	struct kube_owner_ref r[] = {REF("v1", "Node", "nodename", "nodeuid1")};
	ev(&e, GC_EVENT_ADD, "v1", "Pod", "ns1", "goodchild", "childuid1", r, 1);
	struct gc_node *v = gc_graph_get(e.g, "nodeuid1");
	assert_non_null(v);
	assert_true(v->virtual_);
	assert_string_equal(v->id.ns, "ns1");
	assert_int_equal(e.rec.n_del, 1);
	assert_string_equal(e.rec.del[0], "nodeuid1");
	rec_reset(&e.rec);
	/* the Node is observed: identity fixed, matching child not requeued, no event */
	ev(&e, GC_EVENT_ADD, "v1", "Node", "", "nodename", "nodeuid1", NULL, 0);
	v = gc_graph_get(e.g, "nodeuid1");
	assert_false(v->virtual_);
	assert_string_equal(v->id.ns, "");
	assert_int_equal(e.rec.n_del, 0);
	assert_int_equal(e.rec.n_events, 0);
	env_fini(&e);
}

static void test_bad_child_other_namespace(void **state)
{
	(void)state;
	const char *want = "Warning OwnerRefInvalidNamespace ownerRef [v1/Pod, namespace: ns1, "
	                   "name: podname2, uid: "
	                   "poduid2] does not exist in namespace \"ns1\" "
	                   "involvedObject{kind=Pod,apiVersion=v1}";
	struct kube_owner_ref r[] = {REF("v1", "Pod", "podname2", "poduid2")};
	struct env e;
	/* owner observed first, then the child that points at it from another namespace */
	env_init(&e);
	ev(&e, GC_EVENT_ADD, "v1", "Pod", "ns2", "podname2", "poduid2", NULL, 0);
	ev(&e, GC_EVENT_ADD, "v1", "Pod", "ns1", "badchild1", "badchilduid1", r, 1);
	assert_int_equal(e.rec.n_events, 1);
	assert_string_equal(e.rec.events[0], want);
	assert_true(rec_has(&e.rec, "badchilduid1"));
	env_fini(&e);
	/* child first (virtual owner in ns1), then the owner is observed in ns2 */
	env_init(&e);
	ev(&e, GC_EVENT_ADD, "v1", "Pod", "ns1", "badchild1", "badchilduid1", r, 1);
	assert_int_equal(e.rec.n_events, 0); /* nothing is known about the owner yet */
	rec_reset(&e.rec);
	ev(&e, GC_EVENT_ADD, "v1", "Pod", "ns2", "podname2", "poduid2", NULL, 0);
	assert_int_equal(e.rec.n_events, 1);
	assert_string_equal(e.rec.events[0], want);
	assert_true(rec_has(&e.rec, "badchilduid1"));
	assert_string_equal(gc_graph_get(e.g, "poduid2")->id.ns, "ns2");
	env_fini(&e);
}

static void test_cluster_child_namespaced_owner(void **state)
{
	(void)state;
	const char *want =
	        "Warning OwnerRefInvalidNamespace ownerRef [v1/Pod, namespace: , name: podname1, "
	        "uid: "
	        "poduid1] does not exist in namespace \"\" involvedObject{kind=Node,apiVersion=v1}";
	struct kube_owner_ref r[] = {REF("v1", "Pod", "podname1", "poduid1")};
	struct env e;
	/* parent first */
	env_init(&e);
	ev(&e, GC_EVENT_ADD, "v1", "Pod", "ns1", "podname1", "poduid1", NULL, 0);
	ev(&e, GC_EVENT_ADD, "v1", "Node", "", "nodename", "nodeuid1", r, 1);
	assert_int_equal(e.rec.n_events, 1);
	assert_string_equal(e.rec.events[0], want);
	assert_true(rec_has(&e.rec, "nodeuid1"));
	env_fini(&e);
	/* child first: the virtual parent is "cluster-scoped" until observed in ns1 */
	env_init(&e);
	ev(&e, GC_EVENT_ADD, "v1", "Node", "", "nodename", "nodeuid1", r, 1);
	assert_string_equal(gc_graph_get(e.g, "poduid1")->id.ns, "");
	rec_reset(&e.rec);
	ev(&e, GC_EVENT_ADD, "v1", "Pod", "ns1", "podname1", "poduid1", NULL, 0);
	assert_int_equal(e.rec.n_events, 1);
	assert_string_equal(e.rec.events[0], want);
	assert_true(rec_has(&e.rec, "nodeuid1"));
	env_fini(&e);
}

static void test_issue_98040_virtual_cluster_owner(void **state)
{
	(void)state;
	/* a cluster-scoped bad child creates the virtual parent with ns ""; a namespaced good child
	 * then refers to the same (actually namespaced) parent: it is queued for verification */
	struct kube_owner_ref r[] = {REF("v1", "Pod", "podname1", "poduid1")};
	struct env e;
	env_init(&e);
	ev(&e, GC_EVENT_ADD, "v1", "Node", "", "nodename", "nodeuid1", r, 1);
	rec_reset(&e.rec);
	ev(&e, GC_EVENT_ADD, "v1", "Pod", "ns1", "goodchild", "goodchilduid", r, 1);
	assert_true(rec_has(&e.rec, "goodchilduid"));
	assert_int_equal(e.rec.n_events, 0); /* owner not observed: no event */
	env_fini(&e);
}

static void test_event_only_for_observed_and_first(void **state)
{
	(void)state;
	struct env e;
	/* a virtual owner in ns1 referenced from ns2: suspicious (queued) but no event, because
	 * nothing was observed about the owner */
	env_init(&e);
	struct kube_owner_ref r[] = {REF("v1", "Pod", "p", "puid")};
	ev(&e, GC_EVENT_ADD, "v1", "Pod", "ns1", "a", "a", r, 1);
	rec_reset(&e.rec);
	ev(&e, GC_EVENT_ADD, "v1", "Pod", "ns2", "b", "b", r, 1);
	assert_true(rec_has(&e.rec, "b"));
	assert_int_equal(e.rec.n_events, 0);
	env_fini(&e);
	/* two observed owners in another namespace: only the first suspicious ref is examined,
	 * so one event */
	env_init(&e);
	ev(&e, GC_EVENT_ADD, "v1", "Pod", "ns2", "o1", "o1", NULL, 0);
	ev(&e, GC_EVENT_ADD, "v1", "Pod", "ns2", "o2", "o2", NULL, 0);
	struct kube_owner_ref two[] = {REF("v1", "Pod", "o1", "o1"), REF("v1", "Pod", "o2", "o2")};
	ev(&e, GC_EVENT_ADD, "v1", "Pod", "ns1", "c", "c", two, 2);
	assert_int_equal(e.rec.n_events, 1);
	assert_non_null(strstr(e.rec.events[0], "name: o1,"));
	assert_int_equal(e.rec.n_del, 1);
	env_fini(&e);
}

static void test_coordinate_mismatch(void **state)
{
	(void)state;
	/* a Secret ref carrying a Deployment's uid: the bad child is queued, only once even with
	 * two suspicious refs; the good child is not */
	struct kube_owner_ref good[] = {
	        REF("apps/v1", "Deployment", "deployment1", "deploymentuid1")};
	struct kube_owner_ref bad[] = {REF("v1", "Secret", "secretname", "deploymentuid1"),
	                               REF("v1", "Secret", "other", "deploymentuid1")};
	struct env e;
	env_init(&e);
	ev(&e, GC_EVENT_ADD, "apps/v1", "Deployment", "ns1", "deployment1", "deploymentuid1", NULL,
	   0);
	ev(&e, GC_EVENT_ADD, "v1", "Pod", "ns1", "goodchild", "goodchilduid", good, 1);
	assert_int_equal(e.rec.n_del, 0);
	ev(&e, GC_EVENT_ADD, "v1", "Pod", "ns1", "badchild", "badchilduid", bad, 2);
	assert_int_equal(e.rec.n_del, 1);
	assert_string_equal(e.rec.del[0], "badchilduid");
	assert_int_equal(e.rec.n_events, 0);
	env_fini(&e);
}

static void test_unblock_on_update(void **state)
{
	(void)state;
	struct env e;
	env_init(&e);
	ev(&e, GC_EVENT_ADD, "v1", "ReplicationController", "ns1", "rc1", "rc1", NULL, 0);
	ev(&e, GC_EVENT_ADD, "v1", "ReplicationController", "ns1", "rc2", "rc2", NULL, 0);
	struct kube_owner_ref v1[] = {BREF("v1", "ReplicationController", "rc1", "rc1", 1),
	                              BREF("v1", "ReplicationController", "rc2", "rc2", 1)};
	ev(&e, GC_EVENT_ADD, "v1", "Pod", "ns1", "p", "p", v1, 2);
	rec_reset(&e.rec);
	/* rc1 true -> false, rc2 unchanged: rc1 queued */
	struct kube_owner_ref v2[] = {BREF("v1", "ReplicationController", "rc1", "rc1", 0),
	                              BREF("v1", "ReplicationController", "rc2", "rc2", 1)};
	ev(&e, GC_EVENT_UPDATE, "v1", "Pod", "ns1", "p", "p", v2, 2);
	assert_int_equal(e.rec.n_del, 1);
	assert_string_equal(e.rec.del[0], "rc1");
	rec_reset(&e.rec);
	/* rc2 (blocking) removed: rc2 queued and no longer has p as a dependent */
	ev(&e, GC_EVENT_UPDATE, "v1", "Pod", "ns1", "p", "p", v2, 1);
	assert_int_equal(e.rec.n_del, 1);
	assert_string_equal(e.rec.del[0], "rc2");
	assert_int_equal(gc_graph_get(e.g, "rc2")->n_deps, 0);
	rec_reset(&e.rec);
	/* rc1 false -> unset: not a true -> false/unset transition, nothing queued */
	struct kube_owner_ref v3[] = {BREF("v1", "ReplicationController", "rc1", "rc1", -1)};
	ev(&e, GC_EVENT_UPDATE, "v1", "Pod", "ns1", "p", "p", v3, 1);
	assert_int_equal(e.rec.n_del, 0);
	/* true -> unset counts as unblocking */
	struct kube_owner_ref v4[] = {BREF("v1", "ReplicationController", "rc1", "rc1", 1)};
	ev(&e, GC_EVENT_UPDATE, "v1", "Pod", "ns1", "p", "p", v4, 1);
	rec_reset(&e.rec);
	ev(&e, GC_EVENT_UPDATE, "v1", "Pod", "ns1", "p", "p", v3, 1);
	assert_int_equal(e.rec.n_del, 1);
	assert_string_equal(e.rec.del[0], "rc1");
	/* an update with identical refs does nothing */
	rec_reset(&e.rec);
	ev(&e, GC_EVENT_UPDATE, "v1", "Pod", "ns1", "p", "p", v3, 1);
	assert_int_equal(e.rec.n_del, 0);
	env_fini(&e);
}

static void test_references_diff(void **state)
{
	(void)state;
	struct kube_owner_ref old[] = {REF(NULL, NULL, NULL, "1"), REF(NULL, NULL, NULL, "2")};
	struct kube_owner_ref new_[] = {REF(NULL, NULL, NULL, "2"), REF(NULL, NULL, NULL, "3")};
	struct gc_ref_diff d;
	assert_int_equal(gc_references_diff(old, 2, new_, 2, &d), 0);
	assert_int_equal(d.n_added, 1);
	assert_int_equal(d.added[0], 1);
	assert_int_equal(d.n_removed, 1);
	assert_int_equal(d.removed[0], 0);
	assert_int_equal(d.n_changed, 0);
	gc_ref_diff_free(&d);
	new_[0].controller = 1;
	assert_int_equal(gc_references_diff(old, 2, new_, 2, &d), 0);
	assert_int_equal(d.n_changed, 1);
	assert_int_equal(d.changed[0][0], 1);
	assert_int_equal(d.changed[0][1], 0);
	gc_ref_diff_free(&d);
}

static void transition(struct env *e, const char *uid, bool old_del, bool old_fg, bool old_or,
                       bool del, bool fg, bool orph, bool have_old)
{
	struct gc_obj old = {.uid = uid,
	                     .name = uid,
	                     .ns = "ns1",
	                     .being_deleted = old_del,
	                     .fin_foreground = old_fg,
	                     .fin_orphan = old_or};
	struct gc_event x = {.type = GC_EVENT_UPDATE,
	                     .api_version = "v1",
	                     .kind = "ReplicationController",
	                     .obj = {.uid = uid,
	                             .name = uid,
	                             .ns = "ns1",
	                             .being_deleted = del,
	                             .fin_foreground = fg,
	                             .fin_orphan = orph},
	                     .old = have_old ? &old : NULL};
	assert_int_equal(gc_builder_process(&e->b, &x), 0);
}

static void test_transitions(void **state)
{
	(void)state;
	struct env e;
	env_init(&e);
	struct kube_owner_ref r[] = {BREF("v1", "ReplicationController", "rc", "rc", 1)};
	ev(&e, GC_EVENT_ADD, "v1", "ReplicationController", "ns1", "rc", "rc", NULL, 0);
	ev(&e, GC_EVENT_ADD, "v1", "Pod", "ns1", "p1", "p1", r, 1);
	rec_reset(&e.rec);
	/* starts deleting with orphan: attemptToOrphan only */
	transition(&e, "rc", false, false, false, true, false, true, true);
	assert_int_equal(e.rec.n_orphan, 1);
	assert_int_equal(e.rec.n_del, 0);
	assert_true(gc_graph_get(e.g, "rc")->being_deleted);
	/* the same state again: no transition */
	rec_reset(&e.rec);
	transition(&e, "rc", true, false, true, true, false, true, true);
	assert_int_equal(e.rec.n_orphan, 0);
	env_fini(&e);

	env_init(&e);
	ev(&e, GC_EVENT_ADD, "v1", "ReplicationController", "ns1", "rc", "rc", NULL, 0);
	ev(&e, GC_EVENT_ADD, "v1", "Pod", "ns1", "p1", "p1", r, 1);
	rec_reset(&e.rec);
	/* foreground: flag, every dependent, then the owner */
	transition(&e, "rc", false, false, false, true, true, false, true);
	assert_true(gc_graph_get(e.g, "rc")->deleting_dependents);
	assert_int_equal(e.rec.n_del, 2);
	assert_string_equal(e.rec.del[0], "p1");
	assert_string_equal(e.rec.del[1], "rc");
	/* still deleting with the finalizer: nothing new */
	rec_reset(&e.rec);
	transition(&e, "rc", true, true, false, true, true, false, true);
	assert_int_equal(e.rec.n_del, 0);
	/* #77081: the finalizer was removed, then a second Foreground delete re-adds it */
	transition(&e, "rc", true, false, false, true, true, false, true);
	assert_int_equal(e.rec.n_del, 2);
	env_fini(&e);

	/* an add that is already deleting (create+delete merged) with foreground */
	env_init(&e);
	transition(&e, "rc", false, false, false, true, true, false, false);
	assert_true(gc_graph_get(e.g, "rc")->deleting_dependents);
	assert_true(rec_has(&e.rec, "rc"));
	env_fini(&e);

	/* pure predicate */
	struct gc_obj n = {.being_deleted = true, .fin_foreground = true},
	              o = {.being_deleted = true, .fin_foreground = true};
	assert_true(gc_deletion_starts_with(NULL, &n, GC_FINALIZER_FOREGROUND));
	assert_false(gc_deletion_starts_with(&o, &n, GC_FINALIZER_FOREGROUND));
	assert_false(gc_deletion_starts_with(NULL, &n, GC_FINALIZER_ORPHAN));
}

static void test_delete_event(void **state)
{
	(void)state;
	struct env e;
	env_init(&e);
	struct kube_owner_ref rr[] = {BREF("v1", "ReplicationController", "rc", "rc", 1)};
	struct kube_owner_ref pr[] = {REF("v1", "Pod", "p1", "p1")};
	ev(&e, GC_EVENT_ADD, "v1", "ReplicationController", "ns1", "rc", "rc", NULL, 0);
	ev(&e, GC_EVENT_ADD, "v1", "Pod", "ns1", "p1", "p1", rr, 1);
	ev(&e, GC_EVENT_ADD, "v1", "ConfigMap", "ns1", "cm", "cm", pr, 1);
	transition(&e, "rc", false, false, false, true, true, false, true);
	rec_reset(&e.rec);
	/* p1 goes: its dependent cm is queued, p1's identity is absent, the waiting rc is queued */
	ev(&e, GC_EVENT_DELETE, "v1", "Pod", "ns1", "p1", "p1", rr, 1);
	assert_null(gc_graph_get(e.g, "p1"));
	assert_int_equal(e.rec.n_del, 2);
	assert_string_equal(e.rec.del[0], "cm");
	assert_string_equal(e.rec.del[1], "rc");
	struct gc_ref absent = {"v1", "Pod", "p1", "p1", "ns1"};
	assert_true(gc_absent_cache_has(e.absent, &absent));
	assert_int_equal(gc_graph_get(e.g, "rc")->n_deps, 0);
	/* a node without dependents does not enter the cache */
	ev(&e, GC_EVENT_DELETE, "v1", "ConfigMap", "ns1", "cm", "cm", pr, 1);
	struct gc_ref cm = {"v1", "ConfigMap", "cm", "cm", "ns1"};
	assert_false(gc_absent_cache_has(e.absent, &cm));
	env_fini(&e);
}

static void test_virtual_delete(void **state)
{
	(void)state;
	struct env e;
	/* a virtual node verified absent: removed, its dependents queued, absent cached */
	env_init(&e);
	struct kube_owner_ref r[] = {REF("v1", "ReplicationController", "rc", "rcuid")};
	ev(&e, GC_EVENT_ADD, "v1", "Pod", "ns1", "p", "p", r, 1);
	rec_reset(&e.rec);
	struct gc_ref id = {"v1", "ReplicationController", "rc", "rcuid", "ns1"};
	vdelete(&e, &id);
	assert_null(gc_graph_get(e.g, "rcuid"));
	assert_true(rec_has(&e.rec, "p"));
	assert_true(gc_absent_cache_has(e.absent, &id));
	env_fini(&e);

	/* dependents disagree (apps/v1 vs extensions/v1beta1): the node stays, takes the alternate
	 * identity and is re-verified with rate limiting; the matching dependent is queued */
	env_init(&e);
	struct kube_owner_ref a[] = {REF("apps/v1", "Deployment", "d", "duid")};
	struct kube_owner_ref x[] = {REF("extensions/v1beta1", "Deployment", "d", "duid")};
	ev(&e, GC_EVENT_ADD, "v1", "Pod", "ns1", "good", "good", a, 1);
	ev(&e, GC_EVENT_ADD, "v1", "Pod", "ns1", "old", "old", x, 1);
	rec_reset(&e.rec);
	struct gc_ref dep = {"apps/v1", "Deployment", "d", "duid", "ns1"};
	vdelete(&e, &dep);
	struct gc_node *n = gc_graph_get(e.g, "duid");
	assert_non_null(n);
	assert_true(n->virtual_);
	assert_string_equal(n->id.api_version, "extensions/v1beta1");
	assert_true(rec_has(&e.rec, "good"));
	assert_true(gc_absent_cache_has(e.absent, &dep));
	assert_string_equal(e.rec.del[e.rec.n_del - 1], "duid");
	assert_true(e.rec.del_rl[e.rec.n_del - 1]);
	/* then the alternate is verified absent too: back to the first one */
	rec_reset(&e.rec);
	struct gc_ref alt = {"extensions/v1beta1", "Deployment", "d", "duid", "ns1"};
	vdelete(&e, &alt);
	n = gc_graph_get(e.g, "duid");
	assert_string_equal(n->id.api_version, "apps/v1");
	assert_true(rec_has(&e.rec, "old"));
	env_fini(&e);

	/* a real (observed) node is never removed by a virtual delete of other coordinates */
	env_init(&e);
	struct kube_owner_ref s[] = {REF("v1", "Secret", "s", "duid")};
	ev(&e, GC_EVENT_ADD, "apps/v1", "Deployment", "ns1", "d", "duid", NULL, 0);
	ev(&e, GC_EVENT_ADD, "v1", "Pod", "ns1", "bad", "bad", s, 1);
	rec_reset(&e.rec);
	struct gc_ref sec = {"v1", "Secret", "s", "duid", "ns1"};
	vdelete(&e, &sec);
	assert_non_null(gc_graph_get(e.g, "duid"));
	assert_true(rec_has(&e.rec, "bad"));
	assert_true(gc_absent_cache_has(e.absent, &sec));
	env_fini(&e);
}

/* TestGetAlternateOwnerIdentity */
static struct gc_node mk(const char *ns, struct kube_owner_ref *owners, size_t n)
{
	struct gc_node d = {.owners = owners, .n_owners = n};
	d.id = (struct gc_ref){"v1", "Child", "child", "childuid", ns};
	return d;
}

static void expect_alt(struct gc_node *deps, size_t n, const struct gc_ref *absent,
                       const struct gc_ref *want)
{
	struct gc_node *p[4];
	for (size_t i = 0; i < n; i++)
		p[i] = &deps[i];
	struct gc_ref got;
	bool ok = gc_alternate_owner_identity(p, n, absent, &got);
	if (!want) {
		assert_false(ok);
		return;
	}
	assert_true(ok);
	char a[256], b[256];
	assert_string_equal(gc_ref_format(&got, a, sizeof a), gc_ref_format(want, b, sizeof b));
}

static void test_alternate_identity(void **state)
{
	(void)state;
	struct kube_owner_ref nsp = REF("v1", "NSParent", "parentname", "parentuid");
	struct kube_owner_ref nsv = REF("xx", "NSParent", "parentname", "parentuid");
	struct kube_owner_ref nsn = REF("v1", "NSParent", "xxxxxxxxxx", "parentuid");
	struct gc_ref absent_ns1 = {"v1", "NSParent", "parentname", "parentuid", "ns1"};
	struct gc_node d1[] = {mk("ns1", &nsp, 1), mk("ns1", &nsv, 1)};
	struct gc_ref w1 = {"xx", "NSParent", "parentname", "parentuid", "ns1"};
	expect_alt(d1, 2, &absent_ns1, &w1); /* alternate version */
	struct gc_node d2[] = {mk("ns1", &nsp, 1), mk("ns2", &nsp, 1)};
	struct gc_ref w2 = {"v1", "NSParent", "parentname", "parentuid", "ns2"};
	expect_alt(d2, 2, &absent_ns1, &w2); /* alternate namespace */
	struct gc_node d3[] = {mk("ns1", &nsp, 1), mk("ns1", &nsn, 1)};
	struct gc_ref w3 = {"v1", "NSParent", "xxxxxxxxxx", "parentuid", "ns1"};
	expect_alt(d3, 2, &absent_ns1, &w3); /* alternate name */

	struct kube_owner_ref cp = REF("v1", "ClusterParent", "parentname", "parentuid");
	struct kube_owner_ref cv = REF("xx", "ClusterParent", "parentname", "parentuid");
	struct kube_owner_ref cn = REF("v1", "ClusterParent", "xxxxxxxxxx", "parentuid");
	struct gc_ref absent_c = {"v1", "ClusterParent", "parentname", "parentuid", ""};
	struct gc_node c1[] = {mk("ns1", &cp, 1), mk("ns1", &cv, 1)};
	struct gc_ref wc1 = {"xx", "ClusterParent", "parentname", "parentuid", "ns1"};
	expect_alt(c1, 2, &absent_c, &wc1); /* unknown scope of the new version: namespaced */
	struct gc_node c2[] = {mk("ns1", &cp, 1), mk("ns2", &cp, 1)};
	expect_alt(c2, 2, &absent_c, NULL); /* known cluster-scoped: namespaces do not differ */
	struct gc_node c3[] = {mk("ns1", &cp, 1), mk("ns1", &cn, 1)};
	struct gc_ref wc3 = {"v1", "ClusterParent", "xxxxxxxxxx", "parentuid", ""};
	expect_alt(c3, 2, &absent_c, &wc3); /* same apiVersion/kind: namespace dropped */

	/* ordering: the next after the absent one, else the first */
	struct kube_owner_ref ord[] = {
	        REF("v1", "kind", "name", "uid"), REF("v2", "kind", "name", "uid"),
	        REF("v3", "kind", "name", "uid"), REF("v4", "kind", "name", "uid"),
	        REF("v5", "kind", "name", "uid")};
	struct gc_node o1[] = {mk("ns1", ord, 5)};
	struct gc_ref last = {"v5", "kind", "name", "uid", "ns1"},
	              first = {"v1", "kind", "name", "uid", "ns1"};
	expect_alt(o1, 1, &last, &first);
	struct gc_ref v4 = {"v4", "kind", "name", "uid", "ns1"};
	expect_alt(o1, 1, &v4, &last);
	struct gc_node o2[] = {mk("", ord, 5)};
	struct gc_ref clast = {"v5", "kind", "name", "uid", ""},
	              cfirst = {"v1", "kind", "name", "uid", ""};
	expect_alt(o2, 1, &clast, &cfirst);
}

static void test_partition(void **state)
{
	(void)state;
	struct kube_owner_ref good = REF("v1", "Pod", "p", "u"),
	                      bad = REF("v1", "Secret", "p", "u");
	struct kube_owner_ref both[] = {REF("v1", "Pod", "p", "u"), REF("v1", "Secret", "p", "u")};
	struct gc_node d[] = {mk("ns1", &good, 1), mk("ns1", &bad, 1), mk("ns2", &good, 1),
	                      mk("ns1", both, 2)};
	struct gc_node *p[] = {&d[0], &d[1], &d[2], &d[3]};
	struct gc_ref owner = {"v1", "Pod", "p", "u", "ns1"};
	struct gc_node **m, **x;
	size_t nm, nx;
	assert_int_equal(gc_partition_dependents(p, 4, &owner, &m, &nm, &x, &nx), 0);
	assert_int_equal(nm, 2); /* d0, d3 */
	assert_int_equal(nx, 3); /* d1, d2 (namespace), d3 */
	assert_ptr_equal(m[0], &d[0]);
	assert_ptr_equal(x[1], &d[2]);
	free(m);
	free(x);
	/* a cluster-scoped owner matches dependents in any namespace */
	struct gc_ref cowner = {"v1", "Pod", "p", "u", ""};
	assert_int_equal(gc_partition_dependents(p, 4, &cowner, &m, &nm, &x, &nx), 0);
	assert_int_equal(nm, 3);
	assert_int_equal(nx, 2);
	free(m);
	free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_process_event_sequences),
	        cmocka_unit_test(test_virtual_owner_then_observed),
	        cmocka_unit_test(test_bad_child_other_namespace),
	        cmocka_unit_test(test_cluster_child_namespaced_owner),
	        cmocka_unit_test(test_issue_98040_virtual_cluster_owner),
	        cmocka_unit_test(test_coordinate_mismatch),
	        cmocka_unit_test(test_event_only_for_observed_and_first),
	        cmocka_unit_test(test_unblock_on_update),
	        cmocka_unit_test(test_references_diff),
	        cmocka_unit_test(test_transitions),
	        cmocka_unit_test(test_delete_event),
	        cmocka_unit_test(test_virtual_delete),
	        cmocka_unit_test(test_alternate_identity),
	        cmocka_unit_test(test_partition),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
