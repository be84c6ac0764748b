/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/garbagecollector/tests/test-worker.c: attemptToDelete / attemptToOrphan against a
 * fake API server, call by call, and the spec §7 scenarios that are decidable without an
 * apiserver, driven through the graph builder and the workers together.
 *
 * Ported behaviours (kubernetes v1.37.2 garbagecollector_test.go): TestAttemptToDeleteItem,
 * TestAttemptToDeleteItemDeleteObjectNotFound(+WaitingForDependents), TestAbsentOwnerCache,
 * TestDeleteOwnerRefPatch / TestUnblockOwnerReference (the exact patch bodies),
 * TestOrphanDependentsFailure. Scenarios (test/integration/garbagecollector): cascading
 * deletion, non-existent owner, solid owner does not block a waiting owner, non-blocking refs,
 * double deletion with a finalizer, blocking ref blocks, orphaning, cluster-scoped owners,
 * cross-namespace references; e2e: orphan RS keeps its pods, foreground cascade order.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kube/encode.h"
#include "workers/garbagecollector/tests/fake-api.h"

struct env {
	struct fake_api f;
	struct gc_api api;
	struct gc_graph *g;
	struct gc_graph_view view;
	struct gc_absent_cache *absent;
	struct rec_sink rec;
	struct gc_builder b;
	struct gc_worker w;
};

static struct env *env_new(size_t cache)
{
	struct env *e = calloc(1, sizeof *e);
	assert_non_null(e);
	e->api = fake_api_ops(&e->f);
	assert_int_equal(gc_graph_new(&e->g), 0);
	gc_graph_view_init(&e->view, e->g);
	assert_int_equal(gc_absent_cache_new(cache, &e->absent), 0);
	e->b = (struct gc_builder){
	        .graph = e->g, .absent = e->absent, .sink = rec_sink_ops(&e->rec)};
	e->w = (struct gc_worker){.graph = &e->view, .api = &e->api, .absent = e->absent};
	return e;
}

static void env_free(struct env *e)
{
	fake_free(&e->f);
	gc_graph_free(e->g);
	gc_absent_cache_free(e->absent);
	free(e);
}

static bool called(const struct env *e, const char *line)
{
	for (size_t i = 0; i < e->f.n_calls; i++)
		if (strcmp(e->f.calls[i], line) == 0)
			return true;
	return false;
}

static void dump(const struct env *e)
{
	for (size_t i = 0; i < e->f.n_calls; i++)
		fprintf(stderr, "  call %zu: %s\n", i, e->f.calls[i]);
}

/* An informer event for the fake object (ADD/UPDATE), decoded as the metadata informer would. */
static void observe(struct env *e, struct fake_obj *o, enum gc_event_type t)
{
	struct gc_target tg = {o->api_version, o->kind, o->ns, o->name};
	struct kube_partial *p = NULL;
	size_t saved = e->f.n_calls;
	assert_int_equal(fake_get(&e->f, &tg, &p), 0);
	e->f.n_calls = saved; /* not an API call of the GC */
	struct gc_event ev = {.type = t,
	                      .api_version = o->api_version,
	                      .kind = o->kind,
	                      .obj = gc_obj_from_meta(&p->meta)};
	assert_int_equal(gc_builder_process(&e->b, &ev), 0);
	assert_int_equal(gc_graph_check(e->g), 0);
	kube_object_free(p);
}

/* A transition event: old state given by flags, new state from the fake object. */
static void observe_update(struct env *e, struct fake_obj *o, bool old_deleting, bool old_fg,
                           bool old_orphan)
{
	struct gc_target tg = {o->api_version, o->kind, o->ns, o->name};
	struct kube_partial *p = NULL;
	size_t saved = e->f.n_calls;
	assert_int_equal(fake_get(&e->f, &tg, &p), 0);
	e->f.n_calls = saved;
	struct gc_obj old = gc_obj_from_meta(&p->meta);
	old.being_deleted = old_deleting;
	old.fin_foreground = old_fg;
	old.fin_orphan = old_orphan;
	struct gc_event ev = {.type = GC_EVENT_UPDATE,
	                      .api_version = o->api_version,
	                      .kind = o->kind,
	                      .obj = gc_obj_from_meta(&p->meta),
	                      .old = &old};
	assert_int_equal(gc_builder_process(&e->b, &ev), 0);
	kube_object_free(p);
}

static void observe_delete(struct env *e, struct fake_obj *o)
{
	struct gc_event ev = {.type = GC_EVENT_DELETE,
	                      .api_version = o->api_version,
	                      .kind = o->kind,
	                      .obj = {.uid = o->uid, .name = o->name, .ns = o->ns}};
	assert_int_equal(gc_builder_process(&e->b, &ev), 0);
	assert_int_equal(gc_graph_check(e->g), 0);
}

/* Feeds the virtual delete events the workers produced back to the builder. */
static void feed_virtual_deletes(struct env *e)
{
	for (size_t i = 0; i < e->f.n_virtual_deletes; i++) {
		struct gc_ref *id = &e->f.vd_ids[i];
		struct gc_event ev = {.type = GC_EVENT_DELETE,
		                      .virtual_ = true,
		                      .api_version = id->api_version,
		                      .kind = id->kind,
		                      .obj = {.uid = id->uid, .name = id->name, .ns = id->ns}};
		assert_int_equal(gc_builder_process(&e->b, &ev), 0);
		gc_ref_clear(id);
	}
	e->f.n_virtual_deletes = 0;
}

static enum gc_queue_action run(struct env *e, const char *uid, struct gc_result *res)
{
	return gc_attempt_to_delete_worker(&e->w, uid, res);
}

/* ---- ported unit tests ------------------------------------------------------------------- */
static void test_attempt_to_delete_item(void **state)
{
	(void)state;
	struct env *e = env_new(GC_ABSENT_CACHE_SIZE);
	fake_add(&e->f, "v1", "Pod", "ns1", "ToBeDeletedPod", "456",
	         "[{\"apiVersion\":\"v1\",\"kind\":\"ReplicationController\",\"name\":\"owner1\","
	         "\"uid\":\"123\"}]");
	/* the pod is known only as the owner of a configmap: a virtual node */
	struct fake_obj *cm = fake_add(&e->f, "v1", "ConfigMap", "ns1", "cm", "cmuid",
	                               "[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":"
	                               "\"ToBeDeletedPod\",\"uid\":\"456\"}]");
	observe(e, cm, GC_EVENT_ADD);
	assert_true(gc_graph_get(e->g, "456")->virtual_);
	struct gc_result res;
	assert_int_equal(run(e, "456", &res), GC_REQUEUE); /* still virtual: polled again */
	assert_int_equal(res.outcome, GC_OK);
	assert_int_equal(e->f.n_calls, 3);
	assert_true(called(e, "GET v1/Pod ns1/ToBeDeletedPod"));
	assert_true(called(e, "GET v1/ReplicationController ns1/owner1"));
	assert_true(called(e, "DELETE v1/Pod ns1/ToBeDeletedPod uid=456 rv=1 Background"));
	assert_true(gc_graph_get(e->g, "456")->virtual_);
	env_free(e);
}

static void test_delete_object_not_found(void **state)
{
	(void)state;
	struct env *e = env_new(GC_ABSENT_CACHE_SIZE);
	struct fake_obj *p = fake_add(&e->f, "v1", "Pod", "ns1", "ExternallyDeletedPod", "456",
	                              "[{\"apiVersion\":\"v1\",\"kind\":\"ReplicationController\","
	                              "\"name\":\"owner1\",\"uid\":\"123\"}]");
	observe(e, p, GC_EVENT_ADD);
	e->f.fail_next[F_DELETE] = -ENOENT;
	struct gc_result res;
	assert_int_equal(run(e, "456", &res), GC_FORGET);
	assert_int_equal(res.outcome, GC_VIRTUAL_DELETE_ENQUEUED);
	assert_int_equal(e->f.n_virtual_deletes, 1);
	assert_string_equal(e->f.virtual_deletes[0],
	                    "[v1/Pod, namespace: ns1, name: ExternallyDeletedPod, uid: 456]");
	env_free(e);
}

static void test_delete_object_not_found_waiting(void **state)
{
	(void)state;
	struct env *e = env_new(GC_ABSENT_CACHE_SIZE);
	struct fake_obj *rc =
	        fake_add(&e->f, "v1", "ReplicationController", "ns1", "owner1", "123", NULL);
	fake_set_finalizers(rc, "[\"foregroundDeletion\"]", true);
	struct fake_obj *p = fake_add(
	        &e->f, "v1", "Pod", "ns1", "ExternallyDeletedPodFG", "456",
	        "[{\"apiVersion\":\"v1\",\"kind\":\"ReplicationController\",\"name\":\"owner1\","
	        "\"uid\":\"123\",\"blockOwnerDeletion\":true}]");
	observe(e, p, GC_EVENT_ADD);
	e->f.fail_next[F_DELETE] = -ENOENT;
	struct gc_result res;
	assert_int_equal(run(e, "456", &res), GC_FORGET);
	/* waiting owner, no dependents of its own: the plain delete, Background */
	assert_string_equal(res.policy, GC_POLICY_BACKGROUND);
	assert_int_equal(res.n_waiting, 1);
	assert_int_equal(res.outcome, GC_VIRTUAL_DELETE_ENQUEUED);
	env_free(e);
}

static void test_absent_owner_cache(void **state)
{
	(void)state;
	struct env *e = env_new(2);
	const char *pods[][3] = {{"rc1Pod1", "rc1", "1"},
	                         {"rc2Pod1", "rc2", "2"},
	                         {"rc1Pod2", "rc1", "1"},
	                         {"rc3Pod1", "rc3", "3"}};
	char owners[256];
	for (int i = 0; i < 4; i++) {
		snprintf(owners, sizeof owners,
		         "[{\"apiVersion\":\"v1\",\"kind\":\"ReplicationController\",\"name\":\"%"
		         "s\",\"uid\":\"%s\","
		         "\"controller\":%s}]",
		         pods[i][1], pods[i][2], i == 2 ? "false" : "true");
		char uid[32];
		snprintf(uid, sizeof uid, "p%d", i);
		struct fake_obj *p = fake_add(&e->f, "v1", "Pod", "ns1", pods[i][0], uid, owners);
		observe(e, p, GC_EVENT_ADD);
	}
	/* the builder queued the virtual rcs; the test drives the pods as upstream's does */
	for (int i = 0; i < 4; i++) {
		char uid[32];
		snprintf(uid, sizeof uid, "p%d", i);
		struct gc_node_view v;
		assert_int_equal(e->view.node(e->view.ud, uid, &v), 0);
		struct gc_result res;
		gc_attempt_to_delete_item(&e->w, &v, &res);
	}
	struct gc_ref rc1 = {"v1", "ReplicationController", "rc1", "1", "ns1"};
	struct gc_ref rc2 = {"v1", "ReplicationController", "rc2", "2", "ns1"};
	struct gc_ref rc3 = {"v1", "ReplicationController", "rc3", "3", "ns1"};
	assert_true(gc_absent_cache_has(e->absent, &rc1));
	assert_false(gc_absent_cache_has(e->absent, &rc2));
	assert_true(gc_absent_cache_has(e->absent, &rc3));
	assert_int_equal(fake_count(&e->f, "GET v1/ReplicationController ns1/rc1"), 1);
	env_free(e);
}

static void test_patch_bodies(void **state)
{
	(void)state;
	/* TestDeleteOwnerRefPatch's SMP (GenerateDeleteOwnerRefStrategicMergeBytes) */
	char *b = NULL;
	const char *uids[] = {"2", "3"};
	assert_int_equal(kube_encode_release_patch("100", uids, 2, &b), 0);
	assert_string_equal(b, "{\"metadata\":{\"uid\":\"100\",\"ownerReferences\":[{\"$patch\":"
	                       "\"delete\",\"uid\":\"2\"},"
	                       "{\"$patch\":\"delete\",\"uid\":\"3\"}]}}");
	free(b);

	/* TestUnblockOwnerReference through the cycle breaker: only the blocking ref, in full,
	 * with blockOwnerDeletion false (metaonly object: creationTimestamp is omitzero in v1.37)
	 */
	struct env *e = env_new(GC_ABSENT_CACHE_SIZE);
	struct fake_obj *owner =
	        fake_add(&e->f, "v1", "ReplicationController", "ns1", "rc", "rcuid", NULL);
	fake_set_finalizers(owner, "[\"foregroundDeletion\"]", true);
	struct fake_obj *item =
	        fake_add(&e->f, "v1", "Pod", "ns1", "p", "100",
	                 "[{\"apiVersion\":\"v1\",\"kind\":\"ReplicationController\",\"name\":"
	                 "\"rc\",\"uid\":\"rcuid\","
	                 "\"controller\":true,\"blockOwnerDeletion\":true},"
	                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"q\",\"uid\":\"2\","
	                 "\"blockOwnerDeletion\":false},"
	                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"r\",\"uid\":\"3\"}]");
	fake_add(&e->f, "v1", "Pod", "ns1", "q", "2", NULL);
	fake_add(&e->f, "v1", "Pod", "ns1", "r", "3", NULL);
	struct fake_obj *child = fake_add(&e->f, "v1", "Pod", "ns1", "child", "childuid",
	                                  "[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"p\","
	                                  "\"uid\":\"100\",\"blockOwnerDeletion\":true}]");
	fake_set_finalizers(child, "[\"foregroundDeletion\"]", true);
	observe(e, owner, GC_EVENT_ADD);
	observe(e, item, GC_EVENT_ADD);
	observe(e, child, GC_EVENT_ADD); /* a dependent of p that waits for its own dependents */
	assert_true(gc_graph_get(e->g, "childuid")->deleting_dependents);
	/* q and r are solid owners here; make them absent so that only the waiting rc decides */
	e->f.objs[2].live = false;
	e->f.objs[3].live = false;
	e->f.n_calls = 0;
	struct gc_result res;
	assert_int_equal(run(e, "100", &res), GC_FORGET);
	assert_true(res.unblocked);
	assert_true(called(
	        e, "PATCH smp v1/Pod ns1/p "
	           "{\"metadata\":{\"uid\":\"100\",\"ownerReferences\":[{\"apiVersion\":\"v1\","
	           "\"kind\":\"ReplicationController\",\"name\":\"rc\",\"uid\":\"rcuid\","
	           "\"controller\":true,"
	           "\"blockOwnerDeletion\":false}]}}"));
	/* then the Foreground delete with the resourceVersion of the first GET; the unblock patch
	 * moved it, so the fake answers 409, the follow-up GET sees owners it considers equal (the
	 * fake does not apply SMP) and retries with the uid precondition only */
	assert_true(called(e, "DELETE v1/Pod ns1/p uid=100 rv=1 Foreground"));
	assert_true(called(e, "DELETE v1/Pod ns1/p uid=100 rv=- Foreground"));
	env_free(e);
}

static void test_orphan_dependents_failure(void **state)
{
	(void)state;
	struct env *e = env_new(GC_ABSENT_CACHE_SIZE);
	struct fake_obj *rc =
	        fake_add(&e->f, "v1", "ReplicationController", "ns1", "rc", "rcuid", NULL);
	fake_set_finalizers(rc, "[\"orphan\"]", true);
	struct fake_obj *p = fake_add(&e->f, "v1", "Pod", "ns1", "pod", "poduid",
	                              "[{\"apiVersion\":\"v1\",\"kind\":\"ReplicationController\","
	                              "\"name\":\"rc\",\"uid\":\"rcuid\"}]");
	observe(e, rc, GC_EVENT_ADD);
	observe(e, p, GC_EVENT_ADD);
	assert_int_equal(e->rec.n_orphan, 1);
	e->f.fail_next[F_PATCH] = -ESTALE;
	struct gc_result res;
	assert_int_equal(gc_attempt_to_orphan_worker(&e->w, "rcuid", &res), GC_REQUEUE);
	assert_non_null(strstr(res.msg, "the server reported a conflict"));
	assert_non_null(strstr(
	        res.msg,
	        "failed to orphan dependents of owner [v1/ReplicationController, namespace: ns1, "
	        "name: rc, uid: rcuid], got errors: orphaning [v1/Pod, namespace: ns1, name: pod, "
	        "uid: poduid] failed"));
	/* the finalizer stays until the dependents are released */
	assert_int_equal(fake_count(&e->f, "PATCH merge"), 0);
	env_free(e);
}

/* ---- decision details --------------------------------------------------------------------- */
static void test_decide_and_policy(void **state)
{
	(void)state;
	assert_int_equal(gc_decide(1, 0, 0, 0), GC_DECIDE_NOTHING);
	assert_int_equal(gc_decide(1, 1, 0, 0), GC_DECIDE_REMOVE_REFS);
	assert_int_equal(gc_decide(1, 0, 1, 5), GC_DECIDE_REMOVE_REFS);
	assert_int_equal(gc_decide(0, 1, 1, 1), GC_DECIDE_DELETE_FOREGROUND_CASCADE);
	assert_int_equal(gc_decide(0, 0, 1, 0), GC_DECIDE_DELETE);
	assert_int_equal(gc_decide(0, 2, 0, 3), GC_DECIDE_DELETE);
	const char *fo[] = {"orphan", "foregroundDeletion"}, *ff[] = {"foregroundDeletion"},
	           *fx[] = {"x/y"};
	struct kube_object_meta m = {.n_finalizers = 2, .finalizers = fo};
	assert_string_equal(gc_delete_policy(&m), GC_POLICY_ORPHAN);
	m = (struct kube_object_meta){.n_finalizers = 1, .finalizers = ff};
	assert_string_equal(gc_delete_policy(&m), GC_POLICY_FOREGROUND);
	m = (struct kube_object_meta){.n_finalizers = 1, .finalizers = fx};
	assert_string_equal(gc_delete_policy(&m), GC_POLICY_BACKGROUND);
	assert_true(gc_finalizer_backoff_ms(2, 0) == 10.0);
	assert_true(gc_finalizer_backoff_ms(3, 0) == 50.0);
	assert_true(gc_finalizer_backoff_ms(4, 0.5) == 250.0 * 1.05);
}

static void test_existing_finalizer_policies(void **state)
{
	(void)state;
	struct env *e = env_new(GC_ABSENT_CACHE_SIZE);
	const char *own = "[{\"apiVersion\":\"v1\",\"kind\":\"ReplicationController\",\"name\":"
	                  "\"gone\",\"uid\":\"g\"}]";
	struct fake_obj *a = fake_add(&e->f, "v1", "Pod", "ns1", "a", "a", own);
	fake_set_finalizers(a, "[\"orphan\"]", false);
	struct fake_obj *b = fake_add(&e->f, "v1", "Pod", "ns1", "b", "b", own);
	fake_set_finalizers(b, "[\"foregroundDeletion\"]", false);
	observe(e, a, GC_EVENT_ADD);
	observe(e, b, GC_EVENT_ADD);
	assert_int_equal(run(e, "a", NULL), GC_FORGET);
	assert_int_equal(run(e, "b", NULL), GC_FORGET);
	assert_true(called(e, "DELETE v1/Pod ns1/a uid=a rv=1 Orphan"));
	assert_true(called(e, "DELETE v1/Pod ns1/b uid=b rv=1 Foreground"));
	/* one GET of the owner for both: the second hit the cache */
	assert_int_equal(fake_count(&e->f, "GET v1/ReplicationController"), 1);
	env_free(e);
}

static void test_being_deleted_and_no_owners(void **state)
{
	(void)state;
	struct env *e = env_new(GC_ABSENT_CACHE_SIZE);
	struct fake_obj *p = fake_add(&e->f, "v1", "Pod", "ns1", "p", "p", NULL);
	observe(e, p, GC_EVENT_ADD);
	struct gc_result res;
	assert_int_equal(run(e, "p", &res), GC_FORGET);
	assert_int_equal(res.action, GC_ACT_NO_OWNERS);
	assert_int_equal(e->f.n_calls, 1); /* the live GET only */
	/* being deleted without foreground: nothing at all */
	fake_set_finalizers(p, "[\"x/y\"]", true);
	observe(e, p, GC_EVENT_UPDATE);
	e->f.n_calls = 0;
	assert_int_equal(run(e, "p", &res), GC_FORGET);
	assert_int_equal(res.action, GC_ACT_WAIT_DELETION);
	assert_int_equal(e->f.n_calls, 0);
	/* a uid not in the graph is forgotten without calls */
	assert_int_equal(run(e, "nope", &res), GC_FORGET);
	assert_int_equal(e->f.n_calls, 0);
	env_free(e);
}

static void test_uid_mismatch_is_absent(void **state)
{
	(void)state;
	struct env *e = env_new(GC_ABSENT_CACHE_SIZE);
	/* the owner was recreated under the same name: a different uid means absent */
	fake_add(&e->f, "v1", "ReplicationController", "ns1", "rc", "new-uid", NULL);
	struct fake_obj *p = fake_add(&e->f, "v1", "Pod", "ns1", "p", "p",
	                              "[{\"apiVersion\":\"v1\",\"kind\":\"ReplicationController\","
	                              "\"name\":\"rc\",\"uid\":\"old-uid\"}]");
	observe(e, p, GC_EVENT_ADD);
	struct gc_result res;
	assert_int_equal(run(e, "p", &res), GC_FORGET);
	assert_int_equal(res.n_dangling, 1);
	assert_true(called(e, "DELETE v1/Pod ns1/p uid=p rv=1 Background"));
	struct gc_ref key = {"v1", "ReplicationController", "rc", "old-uid", "ns1"};
	assert_true(gc_absent_cache_has(e->absent, &key));
	/* and the item itself recreated: its virtual delete */
	struct fake_obj *q = fake_add(&e->f, "v1", "Pod", "ns1", "q", "q-old", NULL);
	observe(e, q, GC_EVENT_ADD);
	snprintf(q->uid, sizeof q->uid, "q-new");
	assert_int_equal(run(e, "q-old", &res), GC_FORGET);
	assert_int_equal(res.outcome, GC_VIRTUAL_DELETE_ENQUEUED);
	env_free(e);
}

/* A DELETE that loses a race with the object's own deletion: 409, then the GET says 404. */
struct vanish {
	struct fake_api *f;
	int mode; /* 0: the object vanishes; 1: an unrelated update; 2: its owners change */
	int calls;
};
static int vanish_delete(void *ud, const struct gc_target *t, const char *uid, const char *rv,
                         const char *policy)
{
	struct vanish *v = ud;
	fake_call(v->f, "DELETE %s/%s %s/%s uid=%s rv=%s %s", t->api_version, t->kind, t->ns,
	          t->name, uid, rv ? rv : "-", policy);
	struct fake_obj *o = fake_find(v->f, t);
	if (v->calls++ > 0)
		return fake_delete(v->f, t, uid, rv, policy) == 0
		               ? 0
		               : -ESTALE; /* recorded twice: fine */
	if (!o)
		return -ENOENT;
	if (v->mode == 0) {
		o->live = false;
	} else {
		o->rv++;
		if (v->mode == 2) {
			free(o->owners_json);
			o->owners_json =
			        strdup("[{\"apiVersion\":\"v1\",\"kind\":\"ReplicationController\","
			               "\"name\":\"gone\",\"uid\":\"g\",\"controller\":true}]");
		}
	}
	return -ESTALE;
}
static int vanish_get(void *ud, const struct gc_target *t, struct kube_partial **ret)
{
	return fake_get(((struct vanish *)ud)->f, t, ret);
}
static int vanish_map(void *ud, const char *av, const char *k, bool *ret)
{
	return fake_rest_map(((struct vanish *)ud)->f, av, k, ret);
}
static void vanish_vd(void *ud, const struct gc_ref *id)
{
	fake_virtual_delete(((struct vanish *)ud)->f, id);
}

static struct gc_result race(int mode, size_t *n_deletes, size_t *n_gets, enum gc_queue_action *act)
{
	struct env *e = env_new(GC_ABSENT_CACHE_SIZE);
	struct fake_obj *p = fake_add(&e->f, "v1", "Pod", "ns1", "p", "p",
	                              "[{\"apiVersion\":\"v1\",\"kind\":\"ReplicationController\","
	                              "\"name\":\"gone\",\"uid\":\"g\"}]");
	observe(e, p, GC_EVENT_ADD);
	struct vanish v = {.f = &e->f, .mode = mode};
	struct gc_api api = {.ud = &v,
	                     .rest_map = vanish_map,
	                     .get = vanish_get,
	                     .delete_ = vanish_delete,
	                     .virtual_delete = vanish_vd};
	struct gc_worker w = e->w;
	w.api = &api;
	struct gc_result res;
	*act = gc_attempt_to_delete_worker(&w, "p", &res);
	*n_deletes = fake_count(&e->f, "DELETE");
	*n_gets = fake_count(&e->f, "GET v1/Pod ns1/p");
	if (mode == 1)
		assert_true(called(e, "DELETE v1/Pod ns1/p uid=p rv=- Background"));
	env_free(e);
	return res;
}

static void test_conflict_follow_up(void **state)
{
	(void)state;
	size_t nd, ng;
	enum gc_queue_action act;
	/* gone by the follow-up GET: a 404, turned into a virtual delete event (v1.36+) */
	struct gc_result res = race(0, &nd, &ng, &act);
	assert_int_equal(act, GC_FORGET);
	assert_int_equal(res.outcome, GC_VIRTUAL_DELETE_ENQUEUED);
	assert_int_equal(ng, 2);
	assert_int_equal(nd, 1);
	/* an unrelated update (rv moved, owners deep-equal): one retry with the uid only */
	res = race(1, &nd, &ng, &act);
	assert_int_equal(act, GC_FORGET);
	assert_int_equal(res.outcome, GC_OK);
	assert_int_equal(nd, 3); /* the racer's 409, then the retry (recorded by racer and fake) */
	/* the owners changed (controller now set): no retry, the conflict requeues the item */
	res = race(2, &nd, &ng, &act);
	assert_int_equal(act, GC_REQUEUE);
	assert_int_equal(res.err, -ESTALE);
	assert_int_equal(nd, 1);
}

/* The owner's resource is not served any more (a CRD version unserved; our discovery still maps
 * it, so the GET reaches a route the apiserver no longer has): the owner is not absent. Neither
 * the virtual owner is deleted from the graph nor the dependent from the cluster; both are
 * retried as upstream's restMappingError. */
static void test_owner_not_served(void **state)
{
	(void)state;
	struct env *e = env_new(GC_ABSENT_CACHE_SIZE);
	struct fake_obj *cm = fake_add(&e->f, "v1", "ConfigMap", "ns1", "dep", "depuid",
	                               "[{\"apiVersion\":\"v1\",\"kind\":\"ReplicationController\","
	                               "\"name\":\"rc\",\"uid\":\"rcuid\"}]");
	fake_add(&e->f, "v1", "ReplicationController", "ns1", "rc", "rcuid", NULL);
	e->f.not_served_kind = "ReplicationController";
	observe(e, cm, GC_EVENT_ADD); /* the rc is virtual: its informer is gone */
	struct gc_result res;
	assert_int_equal(run(e, "rcuid", &res), GC_REQUEUE);
	assert_int_equal(res.outcome, GC_REST_MAPPING);
	assert_int_equal(e->f.n_virtual_deletes, 0);
	assert_non_null(gc_graph_get(e->g, "rcuid"));
	assert_int_equal(run(e, "depuid", &res), GC_REQUEUE);
	assert_int_equal(res.outcome, GC_REST_MAPPING);
	assert_string_equal(res.msg, "unable to get REST mapping for v1/ReplicationController.");
	assert_int_equal(fake_count(&e->f, "DELETE"), 0);
	assert_int_equal(fake_count(&e->f, "PATCH"), 0);
	struct gc_ref key = {"v1", "ReplicationController", "rc", "rcuid", "ns1"};
	assert_false(gc_absent_cache_has(e->absent, &key));
	/* served again: the owner is solid */
	e->f.not_served_kind = NULL;
	assert_int_equal(run(e, "depuid", &res), GC_FORGET);
	assert_int_equal(res.action, GC_ACT_SOLID);
	env_free(e);
}

static void test_cluster_scoped_and_unmappable(void **state)
{
	(void)state;
	struct env *e = env_new(GC_ABSENT_CACHE_SIZE);
	/* a cluster-scoped child (PersistentVolume) naming a namespaced owner kind: given up */
	struct fake_obj *pv = fake_add(
	        &e->f, "v1", "PersistentVolume", "", "pv", "pvuid",
	        "[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"p\",\"uid\":\"puid\"}]");
	observe(e, pv, GC_EVENT_ADD);
	struct gc_result res;
	assert_int_equal(run(e, "pvuid", &res), GC_FORGET);
	assert_int_equal(res.outcome, GC_CLUSTER_CHILD_NS_OWNER);
	assert_int_equal(fake_count(&e->f, "GET v1/Pod"), 0);
	assert_int_equal(fake_count(&e->f, "DELETE"), 0);
	/* the virtual owner it created has namespace "" and a namespaced kind: its own GET refuses
	 */
	e->f.n_calls = 0;
	assert_int_equal(run(e, "puid", &res), GC_FORGET);
	assert_int_equal(res.outcome, GC_CLUSTER_CHILD_NS_OWNER);
	assert_int_equal(e->f.n_calls, 0);
	assert_non_null(gc_graph_get(e->g, "puid")); /* stays, with no retries */

	/* TestClusterScopedOwners cm-invalid: an unknown owner kind is retried forever */
	struct fake_obj *cm =
	        fake_add(&e->f, "v1", "ConfigMap", "ns1", "cm-invalid", "cminv",
	                 "[{\"apiVersion\":\"unknown.group/"
	                 "v1\",\"kind\":\"UnknownType\",\"name\":\"x\",\"uid\":\"xuid\"}]");
	observe(e, cm, GC_EVENT_ADD);
	assert_int_equal(run(e, "cminv", &res), GC_REQUEUE);
	assert_int_equal(res.outcome, GC_REST_MAPPING);
	assert_string_equal(res.msg,
	                    "unable to get REST mapping for unknown.group/v1/UnknownType.");
	/* the virtual owner of unknown kind: its own GET cannot be mapped either */
	assert_int_equal(run(e, "xuid", &res), GC_REQUEUE);
	assert_int_equal(fake_count(&e->f, "DELETE"), 0);

	/* cm-missing (PV missing-name/missing-uid) is deleted; cm-valid (existing PV) is kept */
	struct fake_obj *m = fake_add(&e->f, "v1", "ConfigMap", "ns1", "cm-missing", "cmmiss",
	                              "[{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\","
	                              "\"name\":\"missing-name\",\"uid\":\"missing-uid\"}]");
	struct fake_obj *okpv =
	        fake_add(&e->f, "v1", "PersistentVolume", "", "real", "realuid", NULL);
	struct fake_obj *valid = fake_add(&e->f, "v1", "ConfigMap", "ns1", "cm-valid", "cmvalid",
	                                  "[{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\","
	                                  "\"name\":\"real\",\"uid\":\"realuid\"}]");
	observe(e, m, GC_EVENT_ADD);
	observe(e, valid, GC_EVENT_ADD); /* the PV's watch is late: it is virtual (ns1) */
	assert_int_equal(run(e, "cmmiss", &res), GC_FORGET);
	assert_true(called(e, "GET v1/PersistentVolume /missing-name"));
	assert_true(called(e, "DELETE v1/ConfigMap ns1/cm-missing uid=cmmiss rv=1 Background"));
	/* the absent key of a cluster-scoped owner has namespace "" */
	struct gc_ref key = {"v1", "PersistentVolume", "missing-name", "missing-uid", ""};
	assert_true(gc_absent_cache_has(e->absent, &key));
	assert_int_equal(run(e, "cmvalid", &res), GC_FORGET);
	assert_int_equal(res.action, GC_ACT_SOLID);
	assert_int_equal(run(e, "realuid", &res), GC_REQUEUE); /* virtual until observed */
	observe(e, okpv, GC_EVENT_ADD);
	assert_false(gc_graph_get(e->g, "realuid")->virtual_);
	assert_int_equal(run(e, "realuid", &res), GC_FORGET);
	env_free(e);
}

static void test_remove_finalizer_conflicts(void **state)
{
	(void)state;
	/* TestDoubleDeletionWithFinalizer: no owners, finalizer x/y, Foreground: the GC removes
	 * only foregroundDeletion */
	struct env *e = env_new(GC_ABSENT_CACHE_SIZE);
	struct fake_obj *p = fake_add(&e->f, "v1", "Pod", "ns1", "p", "p", NULL);
	fake_set_finalizers(p, "[\"x/y\",\"foregroundDeletion\"]", true);
	observe(e, p, GC_EVENT_ADD);
	assert_true(gc_graph_get(e->g, "p")->deleting_dependents);
	assert_true(rec_has(&e->rec, "p"));
	struct gc_result res;
	assert_int_equal(run(e, "p", &res), GC_FORGET);
	assert_int_equal(res.action, GC_ACT_REMOVE_FINALIZER);
	assert_true(called(e,
	                   "PATCH merge v1/Pod ns1/p "
	                   "{\"metadata\":{\"resourceVersion\":\"1\",\"finalizers\":[\"x/y\"]}}"));
	assert_string_equal(p->finalizers_json, "[\"x/y\"]");
	/* processed again: nothing left to remove, no patch */
	e->f.n_calls = 0;
	assert_int_equal(run(e, "p", &res), GC_FORGET);
	assert_int_equal(fake_count(&e->f, "PATCH"), 0);
	env_free(e);

	/* conflicts: retried with DefaultBackoff, 4 attempts, then updateMaxRetries */
	e = env_new(GC_ABSENT_CACHE_SIZE);
	p = fake_add(&e->f, "v1", "Pod", "ns1", "p", "p", NULL);
	fake_set_finalizers(p, "[\"foregroundDeletion\"]", true);
	observe(e, p, GC_EVENT_ADD);
	e->f.fail_next[F_PATCH] = -ESTALE;
	e->f.fail_count[F_PATCH] = 4;
	assert_int_equal(run(e, "p", &res), GC_REQUEUE);
	assert_int_equal(fake_count(&e->f, "PATCH merge"), 4);
	assert_int_equal(fake_count(&e->f, "GET"), 5); /* the item, then one per attempt */
	assert_string_equal(
	        res.msg,
	        "updateMaxRetries(4) has reached. The garbage collector will retry later for owner "
	        "[v1/Pod, namespace: ns1, name: p, uid: p]");
	assert_true(e->f.slept_ms == 10.0 + 50.0 + 250.0);
	/* two conflicts, then success; the last patch carries null */
	e->f.n_calls = 0;
	e->f.slept_ms = 0;
	e->f.fail_next[F_PATCH] = -ESTALE;
	e->f.fail_count[F_PATCH] = 2;
	assert_int_equal(run(e, "p", &res), GC_FORGET);
	assert_int_equal(fake_count(&e->f, "PATCH merge"), 3);
	assert_true(called(e, "PATCH merge v1/Pod ns1/p "
	                      "{\"metadata\":{\"resourceVersion\":\"1\",\"finalizers\":null}}"));
	assert_false(p->live); /* no finalizer left: the fake apiserver removed it */
	env_free(e);
}

static void test_crd_merge_patch_fallback(void **state)
{
	(void)state;
	/* a CR without SMP support: 415, then a JSON merge patch with the resourceVersion and
	 * the remaining references */
	struct env *e = env_new(GC_ABSENT_CACHE_SIZE);
	e->f.smp_unsupported_kind = "Widget";
	fake_add(&e->f, "v1", "ConfigMap", "ns1", "alive", "aliveuid", NULL);
	struct fake_obj *w = fake_add(&e->f, "example.com/v1", "Widget", "ns1", "w", "wuid",
	                              "[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":"
	                              "\"alive\",\"uid\":\"aliveuid\"},"
	                              "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":"
	                              "\"gone\",\"uid\":\"goneuid\",\"controller\":true}]");
	observe(e, w, GC_EVENT_ADD);
	struct gc_result res;
	assert_int_equal(run(e, "wuid", &res), GC_FORGET);
	assert_int_equal(res.action, GC_ACT_REMOVE_REFS);
	assert_true(called(e, "PATCH smp example.com/v1/Widget ns1/w "
	                      "{\"metadata\":{\"uid\":\"wuid\",\"ownerReferences\":"
	                      "[{\"$patch\":\"delete\",\"uid\":\"goneuid\"}]}}"));
	assert_true(called(
	        e,
	        "PATCH merge example.com/v1/Widget ns1/w {\"metadata\":{\"resourceVersion\":\"1\","
	        "\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":"
	        "\"alive\",\"uid\":\"aliveuid\"}]}}"));
	env_free(e);

	/* orphaning a CR's only reference: the merge patch carries null */
	e = env_new(GC_ABSENT_CACHE_SIZE);
	e->f.smp_unsupported_kind = "Widget";
	struct fake_obj *owner =
	        fake_add(&e->f, "example.com/v1", "Widget", "ns1", "owner", "ouid", NULL);
	fake_set_finalizers(owner, "[\"orphan\"]", true);
	struct fake_obj *dep =
	        fake_add(&e->f, "example.com/v1", "Widget", "ns1", "dep", "duid",
	                 "[{\"apiVersion\":\"example.com/"
	                 "v1\",\"kind\":\"Widget\",\"name\":\"owner\",\"uid\":\"ouid\"}]");
	observe(e, dep, GC_EVENT_ADD);
	observe(e, owner, GC_EVENT_ADD);
	assert_int_equal(gc_attempt_to_orphan_worker(&e->w, "ouid", &res), GC_FORGET);
	assert_true(called(e, "PATCH merge example.com/v1/Widget ns1/dep "
	                      "{\"metadata\":{\"resourceVersion\":\"1\","
	                      "\"ownerReferences\":null}}"));
	assert_true(called(e, "PATCH merge example.com/v1/Widget ns1/owner "
	                      "{\"metadata\":{\"resourceVersion\":\"1\","
	                      "\"finalizers\":null}}"));
	assert_null(dep->owners_json);
	env_free(e);
}

/* A view like the arena's: virtual nodes are unknown to it. */
static int arena_like_node(void *ud, const char *uid, struct gc_node_view *ret)
{
	struct gc_node *n = gc_graph_get(ud, uid);
	if (!n || n->virtual_)
		return -ENOENT;
	struct gc_graph_view v;
	gc_graph_view_init(&v, ud);
	return v.node(ud, uid, ret);
}

static void test_queue_keys(void **state)
{
	(void)state;
	char buf[600], scratch[600];
	struct gc_ref id = {"v1", "Pod", "ToBeDeletedPod", "456", "ns1"}, got;
	bool virt;
	int n = gc_queue_key_encode(&id, true, 507, buf, sizeof buf);
	assert_int_equal(n, (int)strlen("v\x1f"
	                                "v1\x1f"
	                                "Pod\x1f"
	                                "ns1\x1f"
	                                "ToBeDeletedPod\x1f"
	                                "456"));
	assert_int_equal(gc_queue_key_decode(buf, &got, &virt, scratch, sizeof scratch), 0);
	assert_true(virt);
	assert_true(gc_ref_equal(&got, &id));
	assert_int_equal(gc_queue_key_encode(&id, false, 507, buf, sizeof buf), 3);
	assert_string_equal(buf, "456");
	assert_int_equal(gc_queue_key_decode(buf, &got, &virt, scratch, sizeof scratch), 0);
	assert_false(virt);
	assert_string_equal(got.uid, "456");
	/* too long for the queue: the uid alone */
	assert_int_equal(gc_queue_key_encode(&id, true, 20, buf, sizeof buf), 3);
	/* malformed virtual keys */
	assert_int_equal(gc_queue_key_decode("v\x1f"
	                                     "a\x1f"
	                                     "b",
	                                     &got, &virt, scratch, sizeof scratch),
	                 -EINVAL);
	assert_int_equal(gc_queue_key_decode("v\x1f"
	                                     "a\x1f"
	                                     "b\x1f"
	                                     "c\x1f"
	                                     "d\x1f",
	                                     &got, &virt, scratch, sizeof scratch),
	                 -EINVAL);
	assert_int_equal(gc_queue_key_decode("", &got, &virt, scratch, sizeof scratch), -EINVAL);

	/* a worker whose view does not know virtual nodes resolves them from the key */
	struct env *e = env_new(GC_ABSENT_CACHE_SIZE);
	fake_add(&e->f, "v1", "Pod", "ns1", "ToBeDeletedPod", "456",
	         "[{\"apiVersion\":\"v1\",\"kind\":\"ReplicationController\",\"name\":\"owner1\","
	         "\"uid\":\"123\"}]");
	struct fake_obj *cm = fake_add(&e->f, "v1", "ConfigMap", "ns1", "cm", "cmuid",
	                               "[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":"
	                               "\"ToBeDeletedPod\",\"uid\":\"456\"}]");
	observe(e, cm, GC_EVENT_ADD);
	struct gc_graph_view av = e->view;
	av.node = arena_like_node;
	struct gc_worker w = e->w;
	w.graph = &av;
	gc_queue_key_encode(&id, true, 507, buf, sizeof buf);
	struct gc_result res;
	assert_int_equal(gc_attempt_to_delete_worker(&w, buf, &res), GC_REQUEUE);
	assert_true(called(e, "DELETE v1/Pod ns1/ToBeDeletedPod uid=456 rv=1 Background"));
	/* the plain uid of a virtual node is unknown to such a view: forgotten */
	assert_int_equal(gc_attempt_to_delete_worker(&w, "456", &res), GC_FORGET);
	/* once observed, a queued virtual copy is skipped */
	struct fake_obj *pod = &e->f.objs[0];
	pod->live = true;
	observe(e, pod, GC_EVENT_ADD);
	e->f.n_calls = 0;
	assert_int_equal(gc_attempt_to_delete_worker(&w, buf, &res), GC_FORGET);
	assert_int_equal(e->f.n_calls, 0);
	env_free(e);
}

/* The builder removed an owner whose kind can no longer be mapped (its CRD was deleted): the
 * dependent's key carries the owner's identity, so a worker process with a cache of its own
 * treats it as absent before REST mapping and deletes the dependent (upstream: the shared
 * absentOwnerCache; TestCRDDeletionCascading). The plain uid key would be retried forever. */
static char absent_keys[4][600];
static size_t n_absent_keys;
static void rec_absent_owner(void *ud, const char *uid, const struct gc_ref *owner)
{
	(void)ud;
	assert_true(n_absent_keys < 4);
	assert_true(gc_queue_key_encode_absent(uid, owner, 507, absent_keys[n_absent_keys],
	                                       sizeof absent_keys[0]) > 0);
	n_absent_keys++;
}

static void test_removed_owner_key_carries_absence(void **state)
{
	(void)state;
	char buf[600], scratch[600];
	struct gc_ref owner = {"g.example/v1", "Gadget", "own", "ouid", "ns1"}, got;
	const char *dep;
	/* encode / decode */
	int n = gc_queue_key_encode_absent("cmuid", &owner, 507, buf, sizeof buf);
	assert_int_equal(n, (int)strlen("a\x1fg.example/v1\x1fGadget\x1fns1\x1fown\x1fouid\x1f"
	                                "cmuid"));
	assert_int_equal(gc_queue_key_decode_absent(buf, &got, &dep, scratch, sizeof scratch), 0);
	assert_true(gc_ref_equal(&got, &owner));
	assert_string_equal(dep, "cmuid");
	assert_int_equal(gc_queue_key_encode_absent("cmuid", &owner, 20, buf, sizeof buf), 5);
	assert_string_equal(buf, "cmuid");
	assert_int_equal(
	        gc_queue_key_decode_absent("a\x1fx\x1fy", &got, &dep, scratch, sizeof scratch),
	        -EINVAL);
	assert_int_equal(gc_queue_key_decode_absent("cmuid", &got, &dep, scratch, sizeof scratch),
	                 -EINVAL);

	struct env *e = env_new(GC_ABSENT_CACHE_SIZE);
	e->b.sink.attempt_to_delete_absent_owner = rec_absent_owner;
	n_absent_keys = 0;
	struct fake_obj *cr = fake_add(&e->f, "g.example/v1", "Gadget", "ns1", "own", "ouid", NULL);
	struct fake_obj *cm = fake_add(&e->f, "v1", "ConfigMap", "ns1", "cm", "cmuid",
	                               "[{\"apiVersion\":\"g.example/v1\",\"kind\":\"Gadget\","
	                               "\"name\":\"own\",\"uid\":\"ouid\"}]");
	observe(e, cr, GC_EVENT_ADD);
	observe(e, cm, GC_EVENT_ADD);
	cr->live = false;
	observe_delete(e, cr);
	assert_int_equal(n_absent_keys, 1);
	assert_int_equal(e->rec.n_del, 0); /* not also queued by the plain uid */

	/* a worker process with its own (empty) cache: the plain key cannot map the owner */
	struct gc_absent_cache *other;
	assert_int_equal(gc_absent_cache_new(GC_ABSENT_CACHE_SIZE, &other), 0);
	struct gc_worker w = e->w;
	w.absent = other;
	struct gc_result res;
	assert_int_equal(gc_attempt_to_delete_worker(&w, "cmuid", &res), GC_REQUEUE);
	assert_int_equal(res.outcome, GC_REST_MAPPING);
	assert_true(cm->live);
	/* the key from the builder: absent without a mapping or a GET, the dependent is deleted */
	e->f.n_calls = 0;
	assert_int_equal(gc_attempt_to_delete_worker(&w, absent_keys[0], &res), GC_FORGET);
	assert_false(cm->live);
	assert_true(called(e, "DELETE v1/ConfigMap ns1/cm uid=cmuid rv=1 Background"));
	assert_int_equal(fake_count(&e->f, "GET g.example/v1"), 0);
	assert_true(gc_absent_cache_has(other, &owner));
	gc_absent_cache_free(other);
	env_free(e);
}

/* ---- scenarios ----------------------------------------------------------------------------- */
#define RCREF(name, uid, block)                                                                    \
	"{\"apiVersion\":\"v1\",\"kind\":\"ReplicationController\",\"name\":\"" name               \
	"\",\"uid\":\"" uid "\"" block "}"

static void test_cascading_deletion(void **state)
{
	(void)state;
	struct env *e = env_new(GC_ABSENT_CACHE_SIZE);
	struct fake_obj *rc1 =
	        fake_add(&e->f, "v1", "ReplicationController", "ns1", "rc1", "rc1", NULL);
	struct fake_obj *rc2 =
	        fake_add(&e->f, "v1", "ReplicationController", "ns1", "rc2", "rc2", NULL);
	struct fake_obj *p1 = fake_add(&e->f, "v1", "Pod", "ns1", "test.pod.1", "p1",
	                               "[" RCREF("rc1", "rc1", "") "]");
	struct fake_obj *p2 = fake_add(&e->f, "v1", "Pod", "ns1", "test.pod.2", "p2", NULL);
	struct fake_obj *p3 = fake_add(&e->f, "v1", "Pod", "ns1", "test.pod.3", "p3",
	                               "[" RCREF("rc1", "rc1", "") "," RCREF("rc2", "rc2", "") "]");
	struct fake_obj *all[] = {rc1, rc2, p1, p2, p3};
	for (int i = 0; i < 5; i++)
		observe(e, all[i], GC_EVENT_ADD);
	assert_int_equal(e->rec.n_del, 0);
	/* RC1 deleted in the background: gone at once */
	rc1->live = false;
	observe_delete(e, rc1);
	assert_int_equal(e->rec.n_del, 2);
	for (size_t i = 0; i < e->rec.n_del; i++)
		run(e, e->rec.del[i], NULL);
	assert_false(p1->live);
	assert_true(p2->live);
	assert_true(p3->live);
	/* pod3 lost only its rc1 ref (the absent rc1 came from the builder's cache: no GET) */
	assert_true(called(
	        e,
	        "PATCH smp v1/Pod ns1/test.pod.3 {\"metadata\":{\"uid\":\"p3\",\"ownerReferences\":"
	        "[{\"$patch\":\"delete\",\"uid\":\"rc1\"}]}}"));
	assert_int_equal(fake_count(&e->f, "GET v1/ReplicationController ns1/rc1"), 0);
	env_free(e);
}

static void test_create_with_nonexistent_owner(void **state)
{
	(void)state;
	struct env *e = env_new(GC_ABSENT_CACHE_SIZE);
	struct fake_obj *p = fake_add(&e->f, "v1", "Pod", "ns1", "p", "puid",
	                              "[" RCREF("test.rc.1", "doesn't matter", "") "]");
	observe(e, p, GC_EVENT_ADD);
	assert_string_equal(e->rec.del[0], "doesn't matter");
	struct gc_result res;
	/* the virtual owner: 404, a virtual delete event */
	assert_int_equal(run(e, "doesn't matter", &res), GC_FORGET);
	assert_int_equal(res.outcome, GC_VIRTUAL_DELETE_ENQUEUED);
	rec_reset(&e->rec);
	feed_virtual_deletes(e);
	assert_null(gc_graph_get(e->g, "doesn't matter"));
	assert_true(rec_has(&e->rec, "puid"));
	assert_int_equal(run(e, "puid", &res), GC_FORGET);
	assert_false(p->live);
	assert_int_equal(fake_count(&e->f, "GET v1/ReplicationController"), 1);
	env_free(e);
}

static void test_solid_owner_does_not_block_waiting_owner(void **state)
{
	(void)state;
	struct env *e = env_new(GC_ABSENT_CACHE_SIZE);
	struct fake_obj *rc1 =
	        fake_add(&e->f, "v1", "ReplicationController", "ns1", "rc1", "rc1", NULL);
	struct fake_obj *rc2 =
	        fake_add(&e->f, "v1", "ReplicationController", "ns1", "rc2", "rc2", NULL);
	struct fake_obj *p =
	        fake_add(&e->f, "v1", "Pod", "ns1", "p", "p",
	                 "[" RCREF("rc1", "rc1",
	                           ",\"blockOwnerDeletion\":true") "," RCREF("rc2", "rc2", "") "]");
	observe(e, rc1, GC_EVENT_ADD);
	observe(e, rc2, GC_EVENT_ADD);
	observe(e, p, GC_EVENT_ADD);
	/* RC1 deleted with Foreground */
	fake_set_finalizers(rc1, "[\"foregroundDeletion\"]", true);
	observe_update(e, rc1, false, false, false);
	assert_true(rec_has(&e->rec, "p") && rec_has(&e->rec, "rc1"));
	struct gc_result res;
	/* the owner first: p blocks it, p is queued */
	assert_int_equal(run(e, "rc1", &res), GC_FORGET);
	assert_int_equal(res.action, GC_ACT_ENQUEUE_BLOCKING);
	assert_int_equal(e->f.n_adds, 1);
	/* p: rc2 solid, rc1 waiting -> the waiting ref is stripped */
	assert_int_equal(run(e, "p", &res), GC_FORGET);
	assert_int_equal(res.action, GC_ACT_REMOVE_REFS);
	assert_true(
	        called(e, "PATCH smp v1/Pod ns1/p {\"metadata\":{\"uid\":\"p\",\"ownerReferences\":"
	                  "[{\"$patch\":\"delete\",\"uid\":\"rc1\"}]}}"));
	/* the informer reports p's new refs: the removed blocking ref queues rc1 */
	free(p->owners_json);
	p->owners_json = strdup("[" RCREF("rc2", "rc2", "") "]");
	rec_reset(&e->rec);
	observe(e, p, GC_EVENT_UPDATE);
	assert_true(rec_has(&e->rec, "rc1"));
	assert_int_equal(run(e, "rc1", &res), GC_FORGET);
	assert_int_equal(res.action, GC_ACT_REMOVE_FINALIZER);
	assert_false(rc1->live);
	assert_true(p->live);
	env_free(e);
}

static void test_non_blocking_refs_do_not_block(void **state)
{
	(void)state;
	struct env *e = env_new(GC_ABSENT_CACHE_SIZE);
	struct fake_obj *rc =
	        fake_add(&e->f, "v1", "ReplicationController", "ns1", "rc", "rc", NULL);
	struct fake_obj *p1 =
	        fake_add(&e->f, "v1", "Pod", "ns1", "p1", "p1", "[" RCREF("rc", "rc", "") "]");
	struct fake_obj *p2 = fake_add(&e->f, "v1", "Pod", "ns1", "p2", "p2",
	                               "[" RCREF("rc", "rc", ",\"blockOwnerDeletion\":false") "]");
	fake_set_finalizers(p1, "[\"x/y\"]", false);
	fake_set_finalizers(p2, "[\"x/y\"]", false);
	observe(e, rc, GC_EVENT_ADD);
	observe(e, p1, GC_EVENT_ADD);
	observe(e, p2, GC_EVENT_ADD);
	fake_set_finalizers(rc, "[\"foregroundDeletion\"]", true);
	observe_update(e, rc, false, false, false);
	struct gc_result res;
	assert_int_equal(run(e, "rc", &res), GC_FORGET);
	assert_int_equal(res.action, GC_ACT_REMOVE_FINALIZER);
	assert_false(rc->live);
	/* the pods are still deleted (their owner waits and they have no dependents) */
	assert_int_equal(run(e, "p1", &res), GC_FORGET);
	assert_string_equal(res.policy, GC_POLICY_BACKGROUND);
	assert_true(p1->live && p1->deleting); /* held by x/y */
	env_free(e);
}

static void test_blocking_ref_blocks(void **state)
{
	(void)state;
	struct env *e = env_new(GC_ABSENT_CACHE_SIZE);
	struct fake_obj *rc =
	        fake_add(&e->f, "v1", "ReplicationController", "ns1", "rc", "rc", NULL);
	struct fake_obj *p = fake_add(&e->f, "v1", "Pod", "ns1", "p", "p",
	                              "[" RCREF("rc", "rc", ",\"blockOwnerDeletion\":true") "]");
	fake_set_finalizers(p, "[\"x/y\"]", false);
	observe(e, rc, GC_EVENT_ADD);
	observe(e, p, GC_EVENT_ADD);
	fake_set_finalizers(rc, "[\"foregroundDeletion\"]", true);
	observe_update(e, rc, false, false, false);
	struct gc_result res;
	for (int round = 0; round < 3; round++) {
		assert_int_equal(run(e, "rc", &res), GC_FORGET);
		assert_int_equal(res.action, GC_ACT_ENQUEUE_BLOCKING);
		run(e, "p", &res);
		observe(e, p, GC_EVENT_UPDATE); /* p is now terminating, held by x/y */
	}
	assert_true(rc->live);
	assert_true(p->live);
	assert_int_equal(fake_count(&e->f, "PATCH merge"), 0);
	/* p terminating: no more calls for it */
	e->f.n_calls = 0;
	assert_int_equal(run(e, "p", &res), GC_FORGET);
	assert_int_equal(e->f.n_calls, 0);
	env_free(e);
}

static void test_orphaning(void **state)
{
	(void)state;
	struct env *e = env_new(GC_ABSENT_CACHE_SIZE);
	struct fake_obj *rc =
	        fake_add(&e->f, "v1", "ReplicationController", "ns1", "rc", "rc", NULL);
	struct fake_obj *pods[3];
	char name[16];
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof name, "p%d", i);
		pods[i] = fake_add(&e->f, "v1", "Pod", "ns1", name, name,
		                   "[" RCREF("rc", "rc", ",\"controller\":true") "]");
	}
	observe(e, rc, GC_EVENT_ADD);
	for (int i = 0; i < 3; i++)
		observe(e, pods[i], GC_EVENT_ADD);
	fake_set_finalizers(rc, "[\"orphan\"]", true);
	observe_update(e, rc, false, false, false);
	assert_int_equal(e->rec.n_orphan, 1);
	assert_string_equal(e->rec.orphan[0], "rc");
	struct gc_result res;
	/* one dependent vanished meanwhile: its 404 is ignored */
	pods[1]->live = false;
	assert_int_equal(gc_attempt_to_orphan_worker(&e->w, "rc", &res), GC_FORGET);
	assert_int_equal(res.action, GC_ACT_ORPHANED);
	assert_int_equal(fake_count(&e->f, "PATCH smp v1/Pod"), 3);
	assert_true(called(
	        e, "PATCH smp v1/Pod ns1/p0 {\"metadata\":{\"uid\":\"p0\",\"ownerReferences\":"
	           "[{\"$patch\":\"delete\",\"uid\":\"rc\"}]}}"));
	assert_true(called(e, "PATCH merge v1/ReplicationController ns1/rc "
	                      "{\"metadata\":{\"resourceVersion\":\"1\","
	                      "\"finalizers\":null}}"));
	assert_false(rc->live);
	assert_true(pods[0]->live && pods[2]->live);
	env_free(e);
}

static void test_cross_namespace_reference(void **state)
{
	(void)state;
	/* TestCrossNamespaceReferences: a child in ns A with one ref that carries the uid of a
	 * ConfigMap in ns B (as a Pod named "invalid"): event, then deleted; B's valid children
	 * stay */
	struct env *e = env_new(GC_ABSENT_CACHE_SIZE);
	struct fake_obj *parent =
	        fake_add(&e->f, "v1", "ConfigMap", "b", "parent", "parentuid", NULL);
	struct fake_obj *valid = fake_add(&e->f, "v1", "Secret", "b", "valid", "validuid",
	                                  "[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":"
	                                  "\"parent\",\"uid\":\"parentuid\"}]");
	struct fake_obj *bad = fake_add(&e->f, "v1", "Secret", "a", "invalid-child", "baduid",
	                                "[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":"
	                                "\"invalid\",\"uid\":\"parentuid\"}]");
	observe(e, parent, GC_EVENT_ADD);
	observe(e, valid, GC_EVENT_ADD);
	observe(e, bad, GC_EVENT_ADD);
	assert_int_equal(e->rec.n_events, 1);
	assert_true(rec_has(&e->rec, "baduid"));
	struct gc_result res;
	assert_int_equal(run(e, "baduid", &res), GC_FORGET);
	assert_true(called(e, "GET v1/Pod a/invalid"));
	assert_false(bad->live);
	assert_int_equal(run(e, "validuid", &res), GC_FORGET);
	assert_true(valid->live);
	assert_non_null(gc_graph_get(e->g, "parentuid"));
	env_free(e);
}

static void test_foreground_cascade_order(void **state)
{
	(void)state;
	/* e2e "keep the rc around until all its pods are deleted": rc -> rs -> pod, rc Foreground.
	 * rs has a dependent, so it is deleted in Foreground too; the pod in Background. */
	struct env *e = env_new(GC_ABSENT_CACHE_SIZE);
	struct fake_obj *rc =
	        fake_add(&e->f, "v1", "ReplicationController", "ns1", "rc", "rc", NULL);
	struct fake_obj *rs = fake_add(&e->f, "apps/v1", "ReplicaSet", "ns1", "rs", "rs",
	                               "[" RCREF("rc", "rc", ",\"blockOwnerDeletion\":true") "]");
	struct fake_obj *pod = fake_add(&e->f, "v1", "Pod", "ns1", "pod", "pod",
	                                "[{\"apiVersion\":\"apps/"
	                                "v1\",\"kind\":\"ReplicaSet\",\"name\":\"rs\",\"uid\":"
	                                "\"rs\",\"blockOwnerDeletion\":true}]");
	observe(e, rc, GC_EVENT_ADD);
	observe(e, rs, GC_EVENT_ADD);
	observe(e, pod, GC_EVENT_ADD);
	fake_set_finalizers(rc, "[\"foregroundDeletion\"]", true);
	observe_update(e, rc, false, false, false);
	struct gc_result res;
	assert_int_equal(run(e, "rs", &res), GC_FORGET);
	assert_string_equal(res.policy, GC_POLICY_FOREGROUND);
	assert_false(res.unblocked);
	/* the apiserver put foregroundDeletion on rs */
	fake_set_finalizers(rs, "[\"foregroundDeletion\"]", true);
	observe_update(e, rs, false, false, false);
	assert_int_equal(run(e, "rc", &res), GC_FORGET);
	assert_int_equal(res.action, GC_ACT_ENQUEUE_BLOCKING); /* rs still there */
	assert_int_equal(e->f.n_adds, 0); /* rs is itself deleting its dependents: not re-added */
	assert_int_equal(run(e, "pod", &res), GC_FORGET);
	assert_string_equal(res.policy, GC_POLICY_BACKGROUND);
	assert_false(pod->live);
	observe_delete(e, pod);
	assert_true(rec_has(&e->rec, "rs")); /* the waiting owner is re-checked */
	assert_int_equal(run(e, "rs", &res), GC_FORGET);
	assert_int_equal(res.action, GC_ACT_REMOVE_FINALIZER);
	assert_false(rs->live);
	assert_true(rc->live); /* the top owner goes only after its dependents */
	observe_delete(e, rs);
	assert_int_equal(run(e, "rc", &res), GC_FORGET);
	assert_false(rc->live);
	env_free(e);
}

static void test_conflicting_versions(void **state)
{
	(void)state;
	/* TestConflictingData: children of a missing owner, one through apps/v1 (served) and one
	 * through extensions/v1beta1 (no longer served). The virtual owner is verified absent as
	 * apps/v1, switches to the alternate identity, and the legitimate child is collected; the
	 * child with the unserved version is never deleted and is retried forever. */
	struct env *e = env_new(GC_ABSENT_CACHE_SIZE);
	struct fake_obj *good =
	        fake_add(&e->f, "v1", "Pod", "ns1", "goodchild", "good",
	                 "[{\"apiVersion\":\"apps/"
	                 "v1\",\"kind\":\"Deployment\",\"name\":\"d\",\"uid\":\"duid\"}]");
	struct fake_obj *bad =
	        fake_add(&e->f, "v1", "Pod", "ns1", "badchild", "bad",
	                 "[{\"apiVersion\":\"extensions/"
	                 "v1beta1\",\"kind\":\"Deployment\",\"name\":\"d\",\"uid\":\"duid\"}]");
	observe(e, good, GC_EVENT_ADD);
	observe(e, bad, GC_EVENT_ADD); /* coordinates differ from the virtual node: queued */
	assert_true(rec_has(&e->rec, "bad"));
	struct gc_result res;
	assert_int_equal(run(e, "duid", &res), GC_FORGET);
	assert_int_equal(res.outcome, GC_VIRTUAL_DELETE_ENQUEUED);
	rec_reset(&e->rec);
	feed_virtual_deletes(e);
	struct gc_node *n = gc_graph_get(e->g, "duid");
	assert_non_null(n);
	assert_string_equal(n->id.api_version, "extensions/v1beta1");
	assert_true(rec_has(&e->rec, "good"));
	assert_true(
	        e->rec.del_rl[e->rec.n_del - 1]); /* the alternate is re-verified rate-limited */
	assert_int_equal(run(e, "good", &res), GC_FORGET);
	assert_false(good->live);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(run(e, "duid", &res), GC_REQUEUE);
		assert_int_equal(res.outcome, GC_REST_MAPPING);
		assert_int_equal(run(e, "bad", &res), GC_REQUEUE);
	}
	assert_true(bad->live);
	env_free(e);

	/* a child of an existing Role through a served, non-preferred version: kept */
	e = env_new(GC_ABSENT_CACHE_SIZE);
	struct fake_obj *role = fake_add(&e->f, "rbac.authorization.k8s.io/v1", "Role", "ns1",
	                                 "role", "roleuid", NULL);
	struct fake_obj *child =
	        fake_add(&e->f, "v1", "Pod", "ns1", "child", "child",
	                 "[{\"apiVersion\":\"rbac.authorization.k8s.io/"
	                 "v1beta1\",\"kind\":\"Role\",\"name\":\"role\",\"uid\":\"roleuid\"}]");
	observe(e, role, GC_EVENT_ADD);
	observe(e, child, GC_EVENT_ADD);
	assert_true(rec_has(&e->rec, "child")); /* coordinates differ from the observed Role */
	assert_int_equal(run(e, "child", &res), GC_FORGET);
	assert_int_equal(res.action, GC_ACT_SOLID);
	assert_true(called(e, "GET rbac.authorization.k8s.io/v1beta1/Role ns1/role"));
	/* the Role goes away: the child is collected */
	role->live = false;
	observe_delete(e, role);
	assert_int_equal(run(e, "child", &res), GC_FORGET);
	assert_false(child->live);
	env_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_attempt_to_delete_item),
	        cmocka_unit_test(test_delete_object_not_found),
	        cmocka_unit_test(test_delete_object_not_found_waiting),
	        cmocka_unit_test(test_absent_owner_cache),
	        cmocka_unit_test(test_patch_bodies),
	        cmocka_unit_test(test_orphan_dependents_failure),
	        cmocka_unit_test(test_decide_and_policy),
	        cmocka_unit_test(test_existing_finalizer_policies),
	        cmocka_unit_test(test_being_deleted_and_no_owners),
	        cmocka_unit_test(test_uid_mismatch_is_absent),
	        cmocka_unit_test(test_conflict_follow_up),
	        cmocka_unit_test(test_cluster_scoped_and_unmappable),
	        cmocka_unit_test(test_owner_not_served),
	        cmocka_unit_test(test_remove_finalizer_conflicts),
	        cmocka_unit_test(test_crd_merge_patch_fallback),
	        cmocka_unit_test(test_queue_keys),
	        cmocka_unit_test(test_removed_owner_key_carries_absence),
	        cmocka_unit_test(test_cascading_deletion),
	        cmocka_unit_test(test_create_with_nonexistent_owner),
	        cmocka_unit_test(test_solid_owner_does_not_block_waiting_owner),
	        cmocka_unit_test(test_non_blocking_refs_do_not_block),
	        cmocka_unit_test(test_blocking_ref_blocks),
	        cmocka_unit_test(test_orphaning),
	        cmocka_unit_test(test_cross_namespace_reference),
	        cmocka_unit_test(test_foreground_cascade_order),
	        cmocka_unit_test(test_conflicting_versions),
	};
	(void)dump;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
