/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/replicaset/tests/test-sync.c: syncReplicaSet against a recording executor double.
 * The cases port the behaviours of upstream's replica_set_test.go (TestSyncReplicaSetCreate-
 * Failures, TestSyncReplicaSetDormancy, TestSyncReplicaSetDeletes, TestDeleteControllerAnd-
 * ExpectationsOnDeletion, TestPodControllerLookup, TestReplicaSetController_SlowStart,
 * TestControllerUpdateStatusWithFailure, TestUpdatePods / claim cases, TestGetPodsToDelete,
 * calculateStatus's tests in replica_set_utils_test.go incl. terminatingReplicas and the
 * ReplicaFailure condition) and of the integration tests that are pure decisions
 * (TestPodDeletionCost, TestReadyAndAvailableReplicas, TestFullyLabeledReplicas,
 * TestDeletingAndFailedPods, TestOverlappingRSs).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <cjson/cJSON.h>

#include "kube/encode.h"
#include "kube/proto.h"
#include "workers/replicaset/events.h"
#include "workers/replicaset/sync.h"

#define SEC INT64_C(1000000000)
#define NOW (INT64_C(1700000000) * SEC)

/* ---- fixtures ------------------------------------------------------------------------------ */
struct rs_opts {
	int replicas;
	int min_ready;
	int64_t generation, observed;
	const char *status_extra;    /* extra JSON in status, e.g. conditions */
	const char *meta_extra;      /* extra JSON in metadata */
	const char *template_labels; /* JSON object */
	const char *selector;        /* JSON LabelSelector */
	const char *uid;
	int status_replicas, status_ready, status_available, status_fully;
};

static struct kube_replicaset *mkrs(struct rs_opts o)
{
	char *json;
	int n = asprintf(
	        &json,
	        "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"rs\","
	        "\"namespace\":\"ns\",\"uid\":\"%s\",\"resourceVersion\":\"10\",\"generation\":%"
	        "lld%s%s},"
	        "\"spec\":{\"replicas\":%d,\"minReadySeconds\":%d,\"selector\":%s,\"template\":{"
	        "\"metadata\":"
	        "{\"labels\":%s},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"pause\"}]}}}"
	        ","
	        "\"status\":{\"replicas\":%d,\"fullyLabeledReplicas\":%d,\"readyReplicas\":%d,"
	        "\"availableReplicas\":%d,\"observedGeneration\":%lld%s%s}}",
	        o.uid ? o.uid : "rs-uid", (long long)(o.generation ? o.generation : 1),
	        o.meta_extra ? "," : "", o.meta_extra ? o.meta_extra : "", o.replicas, o.min_ready,
	        o.selector ? o.selector : "{\"matchLabels\":{\"app\":\"web\"}}",
	        o.template_labels ? o.template_labels : "{\"app\":\"web\"}", o.status_replicas,
	        o.status_fully, o.status_ready, o.status_available, (long long)o.observed,
	        o.status_extra ? "," : "", o.status_extra ? o.status_extra : "");
	assert_true(n > 0);
	struct kube_replicaset *rs;
	assert_int_equal(kube_decode_replicaset(json, strlen(json), 0, &rs), 0);
	free(json);
	return rs;
}

static struct kube_kv APP_WEB[] = {{"app", "web"}};
static struct kube_kv APP_OTHER[] = {{"app", "other"}};
static struct kube_kv APP_WEB_TIER[] = {{"app", "web"}, {"tier", "fe"}};
static struct kube_owner_ref REF_US = {"apps/v1", "ReplicaSet", "rs", "rs-uid", 1, 1};
static struct kube_owner_ref REF_OTHER = {"apps/v1", "ReplicaSet", "other", "other-uid", 1, 1};

static struct kube_pod pod(const char *name, const struct kube_owner_ref *ref,
                           enum kube_pod_phase ph, bool ready)
{
	struct kube_pod p;
	memset(&p, 0, sizeof p);
	p.meta.name = name;
	p.meta.namespace = "ns";
	p.meta.uid = name; /* unique enough */
	p.meta.labels = APP_WEB;
	p.meta.n_labels = 1;
	p.meta.creation_timestamp = NOW - 3600 * SEC;
	if (ref) {
		p.meta.owner_refs = (struct kube_owner_ref *)ref;
		p.meta.n_owner_refs = 1;
	}
	p.phase = ph;
	p.node_name = "node";
	p.ready = ready;
	if (ready)
		p.ready_transition_time = NOW - 600 * SEC;
	return p;
}

/* ---- the executor double ------------------------------------------------------------------- */
#define MAXREC 1024
struct fake {
	/* scripted behaviour */
	int create_fail_from; /* overall create call index from which creates fail (-1: never) */
	int create_err;
	bool ns_terminating;
	int delete_err[16]; /* by the delete call index */
	int patch_err;
	int get_err;
	const char *get_uid;
	bool get_deleting;
	int update_err[4];
	bool delete_reverse_rank; /* report the deletions as finishing last-to-first */
	/* records */
	int create_calls, batches[64], n_batches;
	int delete_calls;
	char *deleted[MAXREC];
	int patch_calls;
	char *patches[16];
	int get_calls, update_calls;
	struct kube_rs_status last;
	char *last_conds[8][4];
	kube_time_t last_ltt[8];
	const struct kube_replicaset *updated_with[4];
	int n_events;
	char *ev[MAXREC][3];
};

static struct fake F;

static void fake_reset(void)
{
	for (int i = 0; i < F.delete_calls && i < MAXREC; i++)
		free(F.deleted[i]);
	for (int i = 0; i < F.patch_calls && i < 16; i++)
		free(F.patches[i]);
	for (int i = 0; i < F.n_events && i < MAXREC; i++)
		for (int j = 0; j < 3; j++)
			free(F.ev[i][j]);
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 4; j++)
			free(F.last_conds[i][j]);
	memset(&F, 0, sizeof F);
	F.create_fail_from = -1;
}

static int f_get_rs(void *ud, const struct kube_replicaset *rs, struct kube_replicaset **ret,
                    char **msg)
{
	(void)ud;
	F.get_calls++;
	if (F.get_err) {
		*msg = strdup("get failed");
		return F.get_err;
	}
	char extra[128] = "";
	if (F.get_deleting)
		snprintf(extra, sizeof extra, "\"deletionTimestamp\":\"2023-11-14T22:13:20Z\"");
	*ret = mkrs((struct rs_opts){.replicas = rs->spec_replicas,
	                             .generation = rs->meta.generation + 1,
	                             .uid = F.get_uid ? F.get_uid : rs->meta.uid,
	                             .meta_extra = F.get_deleting ? extra : NULL,
	                             .min_ready = rs->min_ready_seconds});
	return 0;
}

static int f_patch(void *ud, const struct kube_pod *p, const char *body, char **msg)
{
	(void)ud;
	(void)p;
	if (F.patch_calls < 16)
		F.patches[F.patch_calls] = strdup(body);
	F.patch_calls++;
	if (F.patch_err) {
		*msg = strdup("patch failed");
		return F.patch_err;
	}
	return 0;
}

static void f_create(void *ud, const struct kube_replicaset *rs, const char *body, size_t n,
                     struct rs_call_result *r)
{
	(void)ud;
	(void)rs;
	assert_non_null(strstr(body, "\"generateName\":\"rs-\""));
	F.batches[F.n_batches++] = (int)n;
	for (size_t i = 0; i < n; i++) {
		int idx = F.create_calls++;
		if (F.create_fail_from >= 0 && idx >= F.create_fail_from) {
			r[i].err = F.create_err ? F.create_err : -EACCES;
			r[i].namespace_terminating = F.ns_terminating;
			r[i].msg = strdup("pods \"rs-x\" is forbidden: exceeded quota: q");
		} else {
			r[i].err = 0;
			assert_true(asprintf(&r[i].name, "rs-%05d", idx) > 0);
		}
	}
}

static void f_delete(void *ud, const struct kube_replicaset *rs, const struct kube_pod *const *pods,
                     size_t n, struct rs_call_result *r)
{
	(void)ud;
	(void)rs;
	for (size_t i = 0; i < n; i++) {
		int idx = F.delete_calls++;
		if (idx < MAXREC)
			F.deleted[idx] = strdup(pods[i]->meta.name);
		r[i].err = idx < 16 ? F.delete_err[idx] : 0;
		if (r[i].err) {
			char m[32];
			snprintf(m, sizeof m, F.delete_reverse_rank && idx ? "boom %d" : "boom",
			         idx);
			r[i].msg = strdup(m);
		}
		if (F.delete_reverse_rank)
			r[i].done_rank = (uint32_t)(n - 1 - i);
	}
}

static char *sdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int f_update(void *ud, const struct kube_replicaset *rs, const struct kube_rs_status *st,
                    char **msg)
{
	(void)ud;
	int i = F.update_calls++;
	if (i < 4)
		F.updated_with[i] = rs;
	F.last = *st;
	for (size_t c = 0; c < st->n_conditions && c < 8; c++) {
		for (int j = 0; j < 4; j++)
			free(F.last_conds[c][j]);
		F.last_conds[c][0] = sdup(st->conditions[c].type);
		F.last_conds[c][1] = sdup(st->conditions[c].status);
		F.last_conds[c][2] = sdup(st->conditions[c].reason);
		F.last_conds[c][3] = sdup(st->conditions[c].message);
		F.last_ltt[c] = st->conditions[c].last_transition_time;
	}
	if (i < 4 && F.update_err[i]) {
		*msg = strdup("conflict");
		return F.update_err[i];
	}
	return 0;
}

static void f_event(void *ud, const struct kube_replicaset *rs, const char *type,
                    const char *reason, const char *msg)
{
	(void)ud;
	(void)rs;
	if (F.n_events < MAXREC) {
		F.ev[F.n_events][0] = strdup(type);
		F.ev[F.n_events][1] = strdup(reason);
		F.ev[F.n_events][2] = strdup(msg);
	}
	F.n_events++;
}

static const struct rs_executor EX = {.get_rs = f_get_rs,
                                      .patch_pod = f_patch,
                                      .create_pods = f_create,
                                      .delete_pods = f_delete,
                                      .update_status = f_update,
                                      .record_event = f_event};

/* The same double reporting resourceVersions (the consistency store's inputs). */
static int RV_NEXT = 100;
static void f_create_rv(void *ud, const struct kube_replicaset *rs, const char *body, size_t n,
                        struct rs_call_result *r)
{
	f_create(ud, rs, body, n, r);
	for (size_t i = 0; i < n; i++)
		if (r[i].err == 0)
			assert_true(asprintf(&r[i].rv, "%d", RV_NEXT++) > 0);
}
static int f_patch_rv(void *ud, const struct kube_pod *p, const char *body, char **rv, char **msg)
{
	int r = f_patch(ud, p, body, msg);
	if (r == 0)
		assert_true(asprintf(rv, "%d", RV_NEXT++) > 0);
	return r;
}
static int f_update_rv(void *ud, const struct kube_replicaset *rs, const struct kube_rs_status *st,
                       char **rv, char **msg)
{
	int r = f_update(ud, rs, st, msg);
	if (r == 0)
		assert_true(asprintf(rv, "%d", RV_NEXT++) > 0);
	return r;
}
static const struct rs_executor EX_RV = {.get_rs = f_get_rs,
                                         .patch_pod = f_patch,
                                         .create_pods = f_create_rv,
                                         .delete_pods = f_delete,
                                         .update_status = f_update,
                                         .record_event = f_event,
                                         .patch_pod_rv = f_patch_rv,
                                         .update_status_rv = f_update_rv};

static kube_time_t fixed_clock(void *ud)
{
	(void)ud;
	return NOW;
}
static int64_t fixed_mono(void *ud)
{
	(void)ud;
	return 1000 * SEC;
}

struct env {
	int fd;
	struct rs_exp *w, *inf;
};
static struct env E;

static int setup(void **state)
{
	(void)state;
	fake_reset();
	E.fd = rs_exp_memfd_create(NULL);
	assert_true(E.fd >= 0);
	assert_int_equal(rs_exp_attach(E.fd, RS_EXP_WORKER, 0, &E.w), 0);
	assert_int_equal(rs_exp_attach(E.fd, RS_EXP_INFORMER, 0, &E.inf), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fake_reset();
	rs_exp_detach(E.w);
	rs_exp_detach(E.inf);
	close(E.fd);
	return 0;
}

static struct rs_sync_input input(const struct kube_replicaset *rs, const struct kube_pod **pods,
                                  size_t n)
{
	return (struct rs_sync_input){
	        .key = "ns/rs",
	        .rs = rs,
	        .pods = (const struct kube_pod *const *)pods,
	        .n_pods = n,
	        .exp = E.w,
	        .features = RS_FEATURES_DEFAULT,
	        .clock = fixed_clock,
	        .mono = fixed_mono,
	};
}

/* ---- pure pieces --------------------------------------------------------------------------- */
static void test_slow_start_sizes(void **state)
{
	(void)state;
	int want[] = {1, 2, 4, 8, 16, 32, 64, 128, 245};
	int32_t b = 0, rem = 500, i = 0;
	while ((b = rs_slow_start_next(b, rem)) > 0) {
		assert_int_equal(b, want[i++]);
		rem -= b;
	}
	assert_int_equal(i, 9);
	assert_int_equal(rs_slow_start_next(0, 0), 0);
	assert_int_equal(rs_manage_diff(0, 600, RS_BURST_REPLICAS), -500);
	assert_int_equal(rs_manage_diff(700, 1, RS_BURST_REPLICAS), 500);
	assert_int_equal(rs_manage_diff(3, 1, RS_BURST_REPLICAS), 2);
	assert_int_equal(rs_manage_diff(3, 3, RS_BURST_REPLICAS), 0);
}

static void test_claim_decisions(void **state)
{
	(void)state;
	struct kube_replicaset *rs = mkrs((struct rs_opts){.replicas = 1});
	struct kube_selector *sel;
	assert_int_equal(kube_selector_from_label_selector(rs->selector, &sel, NULL, 0), 0);
	struct kube_pod owned = pod("a", &REF_US, KUBE_POD_RUNNING, true);
	struct kube_pod orphan = pod("b", NULL, KUBE_POD_RUNNING, true);
	struct kube_pod foreign = pod("c", &REF_OTHER, KUBE_POD_RUNNING, true);
	struct kube_pod owned_nomatch = pod("d", &REF_US, KUBE_POD_RUNNING, true);
	owned_nomatch.meta.labels = APP_OTHER;
	struct kube_pod orphan_nomatch = owned_nomatch;
	orphan_nomatch.meta.n_owner_refs = 0;
	struct kube_pod orphan_deleting = orphan;
	orphan_deleting.meta.deletion_timestamp = NOW;
	struct kube_pod orphan_other_ns = orphan;
	orphan_other_ns.meta.namespace = "elsewhere";
	/* a non-controller ref to us is an orphan (adopted: integration TestAdoption case a) */
	struct kube_owner_ref plain = REF_US;
	plain.controller = -1;
	struct kube_pod plain_ref = pod("e", &plain, KUBE_POD_RUNNING, true);
	assert_int_equal(rs_claim_decide(rs, sel, &owned), RS_CLAIM_OWNED);
	assert_int_equal(rs_claim_decide(rs, sel, &orphan), RS_CLAIM_ADOPT);
	assert_int_equal(rs_claim_decide(rs, sel, &plain_ref), RS_CLAIM_ADOPT);
	assert_int_equal(rs_claim_decide(rs, sel, &foreign), RS_CLAIM_IGNORE);
	assert_int_equal(rs_claim_decide(rs, sel, &owned_nomatch), RS_CLAIM_RELEASE);
	assert_int_equal(rs_claim_decide(rs, sel, &orphan_nomatch), RS_CLAIM_IGNORE);
	assert_int_equal(rs_claim_decide(rs, sel, &orphan_deleting), RS_CLAIM_IGNORE);
	assert_int_equal(rs_claim_decide(rs, sel, &orphan_other_ns), RS_CLAIM_IGNORE);
	/* RS being deleted: keeps what matches, neither adopts nor releases */
	struct kube_replicaset *del = mkrs((struct rs_opts){
	        .replicas = 1, .meta_extra = "\"deletionTimestamp\":\"2023-11-14T22:13:20Z\""});
	assert_int_equal(rs_claim_decide(del, sel, &owned), RS_CLAIM_OWNED);
	assert_int_equal(rs_claim_decide(del, sel, &orphan), RS_CLAIM_IGNORE);
	assert_int_equal(rs_claim_decide(del, sel, &owned_nomatch), RS_CLAIM_IGNORE);
	kube_selector_free(sel);
	kube_object_free(rs);
	kube_object_free(del);
}

static void test_availability(void **state)
{
	(void)state;
	struct kube_pod p = pod("a", &REF_US, KUBE_POD_RUNNING, true);
	p.ready_transition_time = NOW - 10 * SEC;
	assert_true(rs_pod_is_available(&p, 0, NOW));
	assert_true(rs_pod_is_available(&p, 9, NOW));
	assert_false(rs_pod_is_available(&p, 10, NOW)); /* strictly before */
	assert_false(rs_pod_is_available(&p, 11, NOW));
	p.ready_transition_time = 0;
	assert_true(rs_pod_is_available(&p, 0, NOW));
	assert_false(rs_pod_is_available(&p, 1, NOW));
	p.ready = false;
	assert_false(rs_pod_is_available(&p, 0, NOW));
	/* next check */
	struct kube_pod a = pod("a", &REF_US, KUBE_POD_RUNNING, true);
	struct kube_pod b = pod("b", &REF_US, KUBE_POD_RUNNING, true);
	struct kube_pod c = pod("c", &REF_US, KUBE_POD_RUNNING, false);
	a.ready_transition_time = NOW - 4 * SEC; /* available in 6 s */
	b.ready_transition_time = NOW - 8 * SEC; /* available in 2 s */
	const struct kube_pod *pods[] = {&a, &b, &c};
	int64_t d;
	assert_true(rs_next_availability_check(pods, 3, 10, NOW, NOW, &d));
	assert_int_equal(d, 2 * SEC);
	assert_true(rs_next_availability_check(pods, 3, 10, NOW, NOW + SEC, &d));
	assert_int_equal(d, SEC); /* measured against the clock's current time */
	assert_true(rs_next_availability_check(pods, 3, 10, NOW, NOW + 5 * SEC, &d));
	assert_int_equal(d, 0);
	assert_false(rs_next_availability_check(pods, 3, 1, NOW, NOW, &d)); /* all available */
	assert_false(rs_next_availability_check(pods, 3, 0, NOW, NOW, &d));
}

static void test_events_and_errors(void **state)
{
	(void)state;
	char *s;
	assert_string_equal((s = rs_msg_created("rs-abcde")), "Created pod: rs-abcde");
	free(s);
	assert_string_equal((s = rs_msg_create_failed("x")), "Error creating: x");
	free(s);
	assert_string_equal((s = rs_msg_deleted("p")), "Deleted pod: p");
	free(s);
	assert_string_equal((s = rs_msg_delete_failed("y")), "Error deleting: y");
	free(s);
	assert_string_equal((s = rs_err_unable_to_delete("y")), "unable to delete pods: y");
	free(s);
	assert_string_equal((s = rs_err_just_deleted("ns", "rs", NOW)),
	                    "ns/rs has just been deleted at 2023-11-14 22:13:20 +0000 UTC");
	free(s);
	assert_string_equal((s = rs_err_just_deleted("ns", "rs", NOW + 500000000)),
	                    "ns/rs has just been deleted at 2023-11-14 22:13:20.5 +0000 UTC");
	free(s);
	const char *one[] = {"a"};
	const char *many[] = {"a", "b", "a"};
	assert_string_equal((s = rs_aggregate_errors(one, 1)), "a");
	free(s);
	assert_string_equal((s = rs_aggregate_errors(many, 3)), "[a, b]");
	free(s);
	const char *same[] = {"a", "a"};
	assert_string_equal((s = rs_aggregate_errors(same, 2)), "a");
	free(s);
}

/* ---- syncs --------------------------------------------------------------------------------- */
static void test_create_from_scratch(void **state)
{
	(void)state;
	struct kube_replicaset *rs =
	        mkrs((struct rs_opts){.replicas = 2, .generation = 3, .observed = 2});
	struct rs_sync_input in = input(rs, NULL, 0);
	struct rs_sync_result res;
	assert_int_equal(rs_sync(&in, &EX, &res), 0);
	assert_true(res.needs_sync);
	assert_int_equal(res.created, 2);
	assert_int_equal(F.n_batches, 2);
	assert_int_equal(F.batches[0], 1);
	assert_int_equal(F.batches[1], 1);
	assert_int_equal(F.n_events, 2);
	assert_string_equal(F.ev[0][0], "Normal");
	assert_string_equal(F.ev[0][1], "SuccessfulCreate");
	assert_string_equal(F.ev[0][2], "Created pod: rs-00000");
	/* status written: replicas 0 (pods not observed yet), observedGeneration = generation */
	assert_int_equal(F.update_calls, 1);
	assert_int_equal(F.last.replicas, 0);
	assert_int_equal(F.last.observed_generation, 3);
	assert_true(F.last.has_terminating_replicas);
	assert_int_equal(F.last.terminating_replicas, 0);
	assert_false(res.requeue);
	rs_sync_result_free(&res);
	/* expectations now wait for the two creations: the next sync does not create */
	fake_reset();
	assert_int_equal(rs_sync(&in, &EX, &res), 0);
	assert_false(res.needs_sync);
	assert_int_equal(F.create_calls, 0);
	rs_sync_result_free(&res);
	assert_int_equal(rs_exp_creation_observed(E.inf, "ns/rs"), 1);
	assert_int_equal(rs_exp_creation_observed(E.inf, "ns/rs"), 1);
	struct kube_pod a = pod("rs-00000", &REF_US, KUBE_POD_PENDING, false);
	struct kube_pod b = pod("rs-00001", &REF_US, KUBE_POD_PENDING, false);
	const struct kube_pod *pods[] = {&a, &b};
	in = input(rs, pods, 2);
	fake_reset();
	assert_int_equal(rs_sync(&in, &EX, &res), 0);
	assert_true(res.needs_sync);
	assert_false(res.managed);
	assert_int_equal(F.create_calls + F.delete_calls, 0);
	assert_int_equal(F.last.replicas, 2);
	rs_sync_result_free(&res);
	kube_object_free(rs);
}

static void test_slow_start_failure(void **state)
{
	(void)state;
	struct kube_replicaset *rs = mkrs((struct rs_opts){
	        .replicas = 600,
	        .status_extra = "\"conditions\":[{\"type\":\"StatusUpdate\",\"status\":\"True\","
	                        "\"reason\":\"E2E\",\"message\":\"Set from e2e test\"}]"});
	F.create_fail_from = 4; /* batches 1, 2, 4: the 5th call (in batch 3) fails */
	struct rs_sync_input in = input(rs, NULL, 0);
	struct rs_sync_result res;
	assert_int_equal(rs_sync(&in, &EX, &res), -EACCES);
	assert_string_equal(res.err_msg, "pods \"rs-x\" is forbidden: exceeded quota: q");
	assert_int_equal(F.n_batches, 3);
	assert_int_equal(F.batches[2], 4);
	assert_int_equal(res.created, 4);       /* 1 + 2 + 1 */
	assert_int_equal(res.create_failed, 3); /* the rest of batch 3 */
	assert_int_equal(res.skipped, 500 - 4); /* burst 500 */
	/* 4 SuccessfulCreate + 3 FailedCreate */
	assert_int_equal(F.n_events, 7);
	assert_string_equal(F.ev[3][1], "SuccessfulCreate");
	assert_string_equal(F.ev[4][0], "Warning");
	assert_string_equal(F.ev[4][1], "FailedCreate");
	assert_string_equal(F.ev[4][2],
	                    "Error creating: pods \"rs-x\" is forbidden: exceeded quota: q");
	/* status: foreign condition kept, ReplicaFailure appended */
	assert_int_equal(F.last.n_conditions, 2);
	assert_string_equal(F.last_conds[0][0], "StatusUpdate");
	assert_string_equal(F.last_conds[1][0], "ReplicaFailure");
	assert_string_equal(F.last_conds[1][1], "True");
	assert_string_equal(F.last_conds[1][2], "FailedCreate");
	assert_string_equal(F.last_conds[1][3], "pods \"rs-x\" is forbidden: exceeded quota: q");
	assert_false(res.requeue); /* errors requeue with the rate limiter instead */
	rs_sync_result_free(&res);
	/* expectations: 500 expected, 496 lowered: 4 observations satisfy them */
	struct rs_exp_state st;
	assert_false(rs_exp_satisfied(E.w, "ns/rs", 1000 * SEC, &st));
	assert_int_equal(st.adds_left, 4);
	for (int i = 0; i < 4; i++)
		rs_exp_creation_observed(E.inf, "ns/rs");
	assert_true(rs_exp_satisfied(E.w, "ns/rs", 1000 * SEC, &st));
	kube_object_free(rs);
}

static void test_failure_condition_sticky_and_cleared(void **state)
{
	(void)state;
	/* an existing ReplicaFailure is not refreshed by a new error */
	struct kube_replicaset *rs = mkrs((struct rs_opts){
	        .replicas = 3,
	        .status_extra =
	                "\"conditions\":[{\"type\":\"ReplicaFailure\",\"status\":\"True\","
	                "\"reason\":\"FailedCreate\","
	                "\"message\":\"first\",\"lastTransitionTime\":\"2023-01-01T00:00:00Z\"}]"});
	F.create_fail_from = 0;
	struct rs_sync_input in = input(rs, NULL, 0);
	struct rs_sync_result res;
	assert_true(rs_sync(&in, &EX, &res) < 0);
	assert_int_equal(F.last.n_conditions, 1);
	assert_string_equal(F.last_conds[0][3], "first");
	assert_int_equal(F.last_ltt[0], rs->status.conditions[0].last_transition_time);
	rs_sync_result_free(&res);
	/* all three creations were skipped and lowered: the next sync manages again, fails again,
	 * and the condition still carries the first message */
	fake_reset();
	F.create_fail_from = 0;
	assert_true(rs_sync(&in, &EX, &res) < 0);
	assert_true(res.needs_sync);
	assert_string_equal(F.last_conds[0][3], "first");
	rs_sync_result_free(&res);
	/* a sync that skips manageReplicas (expectations pending) clears it */
	fake_reset();
	assert_int_equal(rs_exp_expect_creations(E.w, "ns/rs", 1, 1000 * SEC), 0);
	assert_int_equal(rs_sync(&in, &EX, &res), 0);
	assert_false(res.needs_sync);
	assert_int_equal(F.update_calls, 1);
	assert_int_equal(F.last.n_conditions, 0);
	rs_sync_result_free(&res);
	kube_object_free(rs);
}

static void test_namespace_terminating(void **state)
{
	(void)state;
	struct kube_replicaset *rs = mkrs((struct rs_opts){.replicas = 3});
	F.create_fail_from = 0;
	F.ns_terminating = true;
	F.create_err = -ESHUTDOWN;
	struct rs_sync_input in = input(rs, NULL, 0);
	struct rs_sync_result res;
	assert_int_equal(rs_sync(&in, &EX, &res), 0);
	assert_int_equal(F.create_calls, 3); /* counted as successes: slow start goes on */
	assert_int_equal(F.n_events, 0);
	assert_int_equal(res.skipped, 0);
	struct rs_exp_state st;
	assert_false(rs_exp_satisfied(E.w, "ns/rs", 1000 * SEC, &st));
	assert_int_equal(st.adds_left, 3); /* only the timeout clears it, as upstream */
	rs_sync_result_free(&res);
	kube_object_free(rs);
}

static void test_no_labels(void **state)
{
	(void)state;
	struct kube_replicaset *rs =
	        mkrs((struct rs_opts){.replicas = 2,
	                              .template_labels = "{}",
	                              .selector = "{\"matchLabels\":{\"app\":\"web\"}}"});
	struct rs_sync_input in = input(rs, NULL, 0);
	struct rs_sync_result res;
	assert_int_equal(rs_sync(&in, &EX, &res), -EINVAL);
	assert_string_equal(res.err_msg, "unable to create pods, no labels");
	assert_int_equal(F.create_calls, 0);
	assert_int_equal(F.n_events, 0);
	assert_int_equal(res.skipped, 2);
	assert_true(rs_exp_satisfied(E.w, "ns/rs", 1000 * SEC, NULL));
	rs_sync_result_free(&res);
	kube_object_free(rs);
}

static void test_scale_down(void **state)
{
	(void)state;
	struct kube_replicaset *rs = mkrs((struct rs_opts){.replicas = 1});
	struct kube_pod run = pod("run", &REF_US, KUBE_POD_RUNNING, true);
	struct kube_pod pend = pod("pend", &REF_US, KUBE_POD_PENDING, false);
	struct kube_pod unsch = pod("unsch", &REF_US, KUBE_POD_PENDING, false);
	unsch.node_name = NULL;
	struct kube_pod failed = pod("failed", &REF_US, KUBE_POD_FAILED, false); /* not active */
	const struct kube_pod *pods[] = {&run, &pend, &unsch, &failed};
	struct rs_sync_input in = input(rs, pods, 4);
	struct rs_sync_result res;
	assert_int_equal(rs_sync(&in, &EX, &res), 0);
	assert_int_equal(F.delete_calls, 2);
	assert_string_equal(F.deleted[0], "unsch");
	assert_string_equal(F.deleted[1], "pend");
	assert_int_equal(F.n_events, 2);
	assert_string_equal(F.ev[0][1], "SuccessfulDelete");
	assert_string_equal(F.ev[0][2], "Deleted pod: unsch");
	assert_int_equal(F.last.replicas, 3); /* status counts the pods before the deletes land */
	rs_sync_result_free(&res);
	/* pending until both deletions are observed; a deletion of another pod does not count */
	struct rs_exp_state st;
	assert_false(rs_exp_satisfied(E.w, "ns/rs", 1000 * SEC, &st));
	assert_int_equal(st.dels_left, 2);
	assert_int_equal(rs_exp_deletion_observed(E.inf, "ns/rs", "ns/run"), 0);
	assert_int_equal(rs_exp_deletion_observed(E.inf, "ns/rs", "ns/unsch"), 1);
	assert_int_equal(rs_exp_deletion_observed(E.inf, "ns/rs", "ns/pend"), 1);
	assert_true(rs_exp_satisfied(E.w, "ns/rs", 1000 * SEC, &st));
	kube_object_free(rs);
}

static void test_delete_failures(void **state)
{
	(void)state;
	struct kube_replicaset *rs = mkrs((struct rs_opts){.replicas = 0});
	struct kube_pod a = pod("a", &REF_US, KUBE_POD_RUNNING, true);
	struct kube_pod b = pod("b", &REF_US, KUBE_POD_RUNNING, true);
	struct kube_pod c = pod("c", &REF_US, KUBE_POD_RUNNING, true);
	const struct kube_pod *pods[] = {&a, &b, &c};
	F.delete_err[0] = -ENOENT; /* already gone: no event, no error */
	F.delete_err[1] = -EREMOTEIO;
	struct rs_sync_input in = input(rs, pods, 3);
	struct rs_sync_result res;
	assert_int_equal(rs_sync(&in, &EX, &res), -EREMOTEIO);
	assert_string_equal(res.err_msg, "unable to delete pods: boom");
	assert_int_equal(res.deleted, 1);
	assert_int_equal(res.delete_failed, 1);
	assert_int_equal(F.n_events, 2);
	assert_string_equal(F.ev[0][0], "Warning");
	assert_string_equal(F.ev[0][1], "FailedDelete");
	assert_string_equal(F.ev[0][2], "Error deleting: boom");
	assert_string_equal(F.last_conds[0][2], "FailedDelete");
	assert_string_equal(F.last_conds[0][3], "unable to delete pods: boom");
	/* the two failures lowered the expectations: one deletion left to observe */
	struct rs_exp_state st;
	assert_false(rs_exp_satisfied(E.w, "ns/rs", 1000 * SEC, &st));
	assert_int_equal(st.dels_left, 1);
	rs_sync_result_free(&res);
	kube_object_free(rs);
}

static void test_deletion_cost_and_related(void **state)
{
	(void)state;
	/* integration TestPodDeletionCost: restarts 5 and 0; costs decide when the gate is on */
	struct kube_replicaset *rs = mkrs((struct rs_opts){.replicas = 1});
	struct kube_pod p1 = pod("p1", &REF_US, KUBE_POD_RUNNING, true);
	struct kube_pod p2 = pod("p2", &REF_US, KUBE_POD_RUNNING, true);
	p1.max_restarts = 5;
	p1.deletion_cost = 1000;
	p2.deletion_cost = 100;
	const struct kube_pod *pods[] = {&p1, &p2};
	struct rs_sync_input in = input(rs, pods, 2);
	struct rs_sync_result res;
	assert_int_equal(rs_sync(&in, &EX, &res), 0);
	assert_string_equal(F.deleted[0], "p2");
	rs_sync_result_free(&res);
	rs_exp_delete(E.w, "ns/rs");
	fake_reset();
	in.features.pod_deletion_cost = false;
	assert_int_equal(rs_sync(&in, &EX, &res), 0);
	assert_string_equal(F.deleted[0], "p1");
	rs_sync_result_free(&res);
	kube_object_free(rs);
	/* related pods count only when the RS has a controller (a Deployment) */
	rs_exp_delete(E.w, "ns/rs");
	struct kube_pod q1 = pod("q1", &REF_US, KUBE_POD_RUNNING, true);
	struct kube_pod q2 = pod("q2", &REF_US, KUBE_POD_RUNNING, true);
	q1.node_name = "n1";
	q2.node_name = "n2";
	q2.meta.creation_timestamp += SEC; /* q1 has the smaller uid in the same bucket */
	struct kube_pod sib = pod("sib", NULL, KUBE_POD_RUNNING, true);
	sib.node_name = "n2";
	const struct kube_pod *qp[] = {&q1, &q2};
	const struct kube_pod *rel[] = {&q1, &q2, &sib};
	struct kube_replicaset *standalone = mkrs((struct rs_opts){.replicas = 1});
	struct kube_replicaset *owned =
	        mkrs((struct rs_opts){.replicas = 1,
	                              .meta_extra = "\"ownerReferences\":[{\"apiVersion\":\"apps/"
	                                            "v1\",\"kind\":\"Deployment\",\"name\":\"d\","
	                                            "\"uid\":\"d-uid\",\"controller\":true}]"});
	fake_reset();
	in = input(standalone, qp, 2);
	in.related = rel;
	in.n_related = 3;
	assert_int_equal(rs_sync(&in, &EX, &res), 0);
	assert_string_equal(F.deleted[0], "q1");
	rs_sync_result_free(&res);
	rs_exp_delete(E.w, "ns/rs");
	fake_reset();
	in.rs = owned;
	assert_int_equal(rs_sync(&in, &EX, &res), 0);
	assert_string_equal(F.deleted[0], "q2"); /* doubled up on n2 */
	rs_sync_result_free(&res);
	kube_object_free(standalone);
	kube_object_free(owned);
}

static void test_claims_in_sync(void **state)
{
	(void)state;
	struct kube_replicaset *rs = mkrs((struct rs_opts){.replicas = 2});
	struct kube_pod o1 = pod("o1", NULL, KUBE_POD_RUNNING, true);
	struct kube_pod o2 = pod("o2", NULL, KUBE_POD_RUNNING, true);
	struct kube_pod mine = pod("mine", &REF_US, KUBE_POD_RUNNING, true);
	mine.meta.labels = APP_OTHER; /* relabelled: released */
	struct kube_pod theirs = pod("theirs", &REF_OTHER, KUBE_POD_RUNNING, true);
	const struct kube_pod *pods[] = {&o1, &mine, &o2, &theirs};
	struct rs_sync_input in = input(rs, pods, 4);
	struct rs_sync_result res;
	assert_int_equal(rs_sync(&in, &EX, &res), 0);
	assert_int_equal(F.get_calls, 1); /* one uncached GET for both adoptions */
	assert_int_equal(res.adopted, 2);
	assert_int_equal(res.released, 1);
	assert_int_equal(F.patch_calls, 3);
	assert_string_equal(F.patches[0], "{\"metadata\":{\"ownerReferences\":[{\"apiVersion\":"
	                                  "\"apps/v1\",\"kind\":\"ReplicaSet\","
	                                  "\"name\":\"rs\",\"uid\":\"rs-uid\",\"controller\":true,"
	                                  "\"blockOwnerDeletion\":true}],"
	                                  "\"uid\":\"o1\"}}");
	assert_string_equal(
	        F.patches[1],
	        "{\"metadata\":{\"uid\":\"mine\",\"ownerReferences\":[{\"$patch\":\"delete\","
	        "\"uid\":\"rs-uid\"}]}}");
	assert_int_equal(F.last.replicas,
	                 2); /* the adopted pods; theirs and the released one not */
	assert_false(res.managed);
	rs_sync_result_free(&res);
	/* the fresh GET shows another uid: adoption fails, the sync errors before status */
	fake_reset();
	F.get_uid = "new-uid";
	const struct kube_pod *orph[] = {&o1, &o2};
	in = input(rs, orph, 2);
	assert_int_equal(rs_sync(&in, &EX, &res), -EIO);
	assert_string_equal(
	        res.err_msg,
	        "[can't adopt Pod ns/o1 (o1): can't recheck DeletionTimestamp: original ReplicaSet "
	        "ns/rs is "
	        "gone: got uid new-uid, wanted rs-uid, can't adopt Pod ns/o2 (o2): can't recheck "
	        "DeletionTimestamp: original ReplicaSet ns/rs is gone: got uid new-uid, wanted "
	        "rs-uid]");
	assert_int_equal(F.get_calls, 1);
	assert_int_equal(F.patch_calls, 0);
	assert_int_equal(F.update_calls, 0);
	assert_int_equal(F.create_calls, 0);
	rs_sync_result_free(&res);
	/* just deleted */
	fake_reset();
	F.get_deleting = true;
	in = input(rs, orph, 1);
	assert_true(rs_sync(&in, &EX, &res) < 0);
	assert_string_equal(res.err_msg, "can't adopt Pod ns/o1 (o1): ns/rs has just been deleted "
	                                 "at 2023-11-14 22:13:20 +0000 UTC");
	rs_sync_result_free(&res);
	/* a 404 on the adopt patch: not claimed, no error; 422 on release: ignored */
	fake_reset();
	F.patch_err = -ENOENT;
	in = input(rs, orph, 1);
	assert_int_equal(rs_sync(&in, &EX, &res), 0);
	assert_int_equal(res.adopted, 0);
	rs_sync_result_free(&res);
	fake_reset();
	F.patch_err = -EINVAL;
	const struct kube_pod *rel[] = {&mine};
	in = input(rs, rel, 1);
	rs_exp_delete(E.w, "ns/rs");
	assert_int_equal(rs_sync(&in, &EX, &res), 0);
	rs_sync_result_free(&res);
	/* other patch errors are returned */
	fake_reset();
	F.patch_err = -EREMOTEIO;
	assert_int_equal(rs_sync(&in, &EX, &res), -EIO);
	assert_string_equal(res.err_msg, "patch failed");
	rs_sync_result_free(&res);
	kube_object_free(rs);
}

/* The replication controller's flavour (flavour.h): the adoption writes a v1
 * ReplicationController controllerRef and the recheck error names the kind; without the kind the
 * same sync writes the ReplicaSet's (the engine's default). */
static void test_rc_kind(void **state)
{
	(void)state;
	struct kube_replicaset *rs = mkrs((struct rs_opts){.replicas = 1});
	struct kube_pod o1 = pod("o1", NULL, KUBE_POD_RUNNING, true);
	const struct kube_pod *pods[] = {&o1};
	struct rs_sync_input in = input(rs, pods, 1);
	struct rs_sync_result res;

	in.kind = "ReplicationController";
	in.api_version = "v1";
	assert_int_equal(rs_sync(&in, &EX, &res), 0);
	assert_int_equal(res.adopted, 1);
	assert_string_equal(F.patches[0], "{\"metadata\":{\"ownerReferences\":[{\"apiVersion\":"
	                                  "\"v1\",\"kind\":\"ReplicationController\","
	                                  "\"name\":\"rs\",\"uid\":\"rs-uid\",\"controller\":true,"
	                                  "\"blockOwnerDeletion\":true}],"
	                                  "\"uid\":\"o1\"}}");
	rs_sync_result_free(&res);
	fake_reset();
	F.get_uid = "new-uid";
	assert_int_equal(rs_sync(&in, &EX, &res), -EIO);
	assert_non_null(res.err_msg);
	assert_non_null(strstr(res.err_msg, "original ReplicationController ns/rs is gone: got uid "
	                                    "new-uid, wanted rs-uid"));
	rs_sync_result_free(&res);
	kube_object_free(rs);
}

static void test_rs_being_deleted(void **state)
{
	(void)state;
	struct kube_replicaset *rs = mkrs((struct rs_opts){
	        .replicas = 3, .meta_extra = "\"deletionTimestamp\":\"2023-11-14T22:13:20Z\""});
	struct kube_pod a = pod("a", &REF_US, KUBE_POD_RUNNING, true);
	struct kube_pod o = pod("o", NULL, KUBE_POD_RUNNING, true);
	const struct kube_pod *pods[] = {&a, &o};
	struct rs_sync_input in = input(rs, pods, 2);
	struct rs_sync_result res;
	assert_int_equal(rs_sync(&in, &EX, &res), 0);
	assert_int_equal(F.create_calls + F.delete_calls + F.patch_calls + F.get_calls, 0);
	assert_int_equal(F.update_calls, 1); /* status still updated */
	assert_int_equal(F.last.replicas, 1);
	rs_sync_result_free(&res);
	kube_object_free(rs);
}

static void test_status_counts(void **state)
{
	(void)state;
	/* TestReadyAndAvailableReplicas + TestFullyLabeledReplicas + terminating pods */
	struct kube_replicaset *rs =
	        mkrs((struct rs_opts){.replicas = 3,
	                              .min_ready = 3600,
	                              .template_labels = "{\"app\":\"web\",\"tier\":\"fe\"}"});
	struct kube_pod not_ready = pod("a", &REF_US, KUBE_POD_RUNNING, false);
	struct kube_pod ready_now = pod("b", &REF_US, KUBE_POD_RUNNING, true);
	ready_now.ready_transition_time = NOW;
	struct kube_pod ready_then = pod("c", &REF_US, KUBE_POD_RUNNING, true);
	ready_then.ready_transition_time = NOW - 7200 * SEC;
	ready_then.meta.labels = APP_WEB_TIER;
	ready_then.meta.n_labels = 2;
	struct kube_pod term = pod("t", &REF_US, KUBE_POD_RUNNING, true);
	term.meta.deletion_timestamp = NOW;
	struct kube_pod term_other = pod("t2", &REF_OTHER, KUBE_POD_RUNNING, true);
	term_other.meta.deletion_timestamp = NOW;
	struct kube_pod term_failed = pod("t3", &REF_US, KUBE_POD_FAILED, false);
	term_failed.meta.deletion_timestamp = NOW;
	const struct kube_pod *pods[] = {&not_ready, &ready_now,  &ready_then,
	                                 &term,      &term_other, &term_failed};
	struct rs_sync_input in = input(rs, pods, 6);
	struct rs_sync_result res;
	assert_int_equal(rs_sync(&in, &EX, &res), 0);
	assert_int_equal(F.last.replicas, 3);
	assert_int_equal(F.last.ready_replicas, 2);
	assert_int_equal(F.last.available_replicas, 1);
	assert_int_equal(F.last.fully_labeled_replicas, 1);
	assert_true(F.last.has_terminating_replicas);
	assert_int_equal(F.last.terminating_replicas, 1);
	/* ready != available with minReadySeconds: requeue when ready_now becomes available */
	assert_true(res.requeue);
	assert_int_equal(res.requeue_after_ns, 3600 * SEC);
	rs_sync_result_free(&res);
	/* gate off, or the RC flavour: terminatingReplicas absent */
	fake_reset();
	in.features.terminating_replicas = false;
	assert_int_equal(rs_sync(&in, &EX, &res), 0);
	assert_false(F.last.has_terminating_replicas);
	rs_sync_result_free(&res);
	fake_reset();
	in.features = RS_FEATURES_DEFAULT;
	in.features.status_terminating = false;
	assert_int_equal(rs_sync(&in, &EX, &res), 0);
	assert_false(F.last.has_terminating_replicas);
	rs_sync_result_free(&res);
	kube_object_free(rs);
}

static void test_status_noop_rules(void **state)
{
	(void)state;
	struct kube_pod a = pod("a", &REF_US, KUBE_POD_RUNNING, true);
	const struct kube_pod *pods[] = {&a};
	struct rs_sync_result res;
	/* everything equal, terminatingReplicas 0 == 0, generation observed: no write */
	struct kube_replicaset *rs =
	        mkrs((struct rs_opts){.replicas = 1,
	                              .generation = 2,
	                              .observed = 2,
	                              .status_replicas = 1,
	                              .status_ready = 1,
	                              .status_available = 1,
	                              .status_fully = 1,
	                              .status_extra = "\"terminatingReplicas\":0"});
	struct rs_sync_input in = input(rs, pods, 1);
	assert_int_equal(rs_sync(&in, &EX, &res), 0);
	assert_int_equal(F.update_calls, 0);
	assert_false(res.status_written);
	rs_sync_result_free(&res);
	kube_object_free(rs);
	/* absent terminatingReplicas vs 0: a write (the RC hot-loop fix depends on this rule) */
	fake_reset();
	rs = mkrs((struct rs_opts){.replicas = 1,
	                           .generation = 2,
	                           .observed = 2,
	                           .status_replicas = 1,
	                           .status_ready = 1,
	                           .status_available = 1,
	                           .status_fully = 1});
	in = input(rs, pods, 1);
	assert_int_equal(rs_sync(&in, &EX, &res), 0);
	assert_int_equal(F.update_calls, 1);
	rs_sync_result_free(&res);
	/* ... and with the gate off, absent == absent: no write */
	fake_reset();
	in.features.terminating_replicas = false;
	assert_int_equal(rs_sync(&in, &EX, &res), 0);
	assert_int_equal(F.update_calls, 0);
	rs_sync_result_free(&res);
	kube_object_free(rs);
	/* both present but different (a terminating pod went away): a write */
	fake_reset();
	rs = mkrs((struct rs_opts){.replicas = 1,
	                           .generation = 2,
	                           .observed = 2,
	                           .status_replicas = 1,
	                           .status_ready = 1,
	                           .status_available = 1,
	                           .status_fully = 1,
	                           .status_extra = "\"terminatingReplicas\":1"});
	in = input(rs, pods, 1);
	assert_int_equal(rs_sync(&in, &EX, &res), 0);
	assert_int_equal(F.update_calls, 1);
	assert_true(F.last.has_terminating_replicas);
	assert_int_equal(F.last.terminating_replicas, 0);
	rs_sync_result_free(&res);
	kube_object_free(rs);
	/* a new generation is written even with equal counts */
	fake_reset();
	rs = mkrs((struct rs_opts){.replicas = 1,
	                           .generation = 3,
	                           .observed = 2,
	                           .status_replicas = 1,
	                           .status_ready = 1,
	                           .status_available = 1,
	                           .status_fully = 1,
	                           .status_extra = "\"terminatingReplicas\":0"});
	in = input(rs, pods, 1);
	assert_int_equal(rs_sync(&in, &EX, &res), 0);
	assert_int_equal(F.update_calls, 1);
	assert_int_equal(F.last.observed_generation, 3);
	rs_sync_result_free(&res);
	kube_object_free(rs);
}

static void test_status_retry(void **state)
{
	(void)state;
	struct kube_replicaset *rs =
	        mkrs((struct rs_opts){.replicas = 0, .generation = 7, .observed = 6});
	struct rs_sync_input in = input(rs, NULL, 0);
	struct rs_sync_result res;
	F.update_err[0] = -ESTALE;
	assert_int_equal(rs_sync(&in, &EX, &res), 0);
	assert_int_equal(F.update_calls, 2);
	assert_int_equal(F.get_calls, 1);
	assert_ptr_equal(F.updated_with[0], rs);
	assert_ptr_not_equal(F.updated_with[1], rs);
	assert_int_equal(F.last.observed_generation,
	                 7); /* the cached generation, not the fresh 8 */
	rs_sync_result_free(&res);
	fake_reset();
	F.update_err[0] = -ESTALE;
	F.update_err[1] = -ESTALE;
	assert_int_equal(rs_sync(&in, &EX, &res), -ESTALE);
	assert_int_equal(F.update_calls, 2);
	assert_int_equal(F.get_calls, 1);
	rs_sync_result_free(&res);
	fake_reset();
	F.update_err[0] = -ESTALE;
	F.get_err = -EHOSTDOWN;
	assert_int_equal(rs_sync(&in, &EX, &res), -EHOSTDOWN);
	assert_string_equal(res.err_msg, "get failed");
	assert_int_equal(F.update_calls, 1);
	rs_sync_result_free(&res);
	kube_object_free(rs);
}

static void test_gone_and_invalid_selector(void **state)
{
	(void)state;
	assert_int_equal(rs_exp_expect_creations(E.w, "ns/rs", 3, 1000 * SEC), 0);
	struct rs_sync_input in = input(NULL, NULL, 0);
	struct rs_sync_result res;
	assert_int_equal(rs_sync(&in, &EX, &res), 0);
	assert_true(res.rs_gone);
	struct rs_exp_state st;
	assert_true(rs_exp_satisfied(E.w, "ns/rs", 1000 * SEC, &st));
	assert_int_equal(st.verdict, RS_EXP_ABSENT);
	rs_sync_result_free(&res);
	struct kube_replicaset *rs =
	        mkrs((struct rs_opts){.replicas = 3,
	                              .selector = "{\"matchExpressions\":[{\"key\":\"app\","
	                                          "\"operator\":\"Bogus\",\"values\":[\"x\"]}]}"});
	in = input(rs, NULL, 0);
	assert_int_equal(rs_sync(&in, &EX, &res), 0);
	assert_true(res.invalid_selector);
	assert_int_equal(F.update_calls + F.create_calls, 0);
	rs_sync_result_free(&res);
	kube_object_free(rs);
}

/* TestDeletingAndFailedPods: a Failed pod and a terminating pod are replaced, not deleted */
static void test_failed_and_deleting_replaced(void **state)
{
	(void)state;
	struct kube_replicaset *rs = mkrs((struct rs_opts){.replicas = 2});
	struct kube_pod a = pod("a", &REF_US, KUBE_POD_RUNNING, true);
	a.meta.deletion_timestamp = NOW;
	struct kube_pod b = pod("b", &REF_US, KUBE_POD_FAILED, false);
	const struct kube_pod *pods[] = {&a, &b};
	struct rs_sync_input in = input(rs, pods, 2);
	struct rs_sync_result res;
	assert_int_equal(rs_sync(&in, &EX, &res), 0);
	assert_int_equal(F.create_calls, 2);
	assert_int_equal(F.delete_calls, 0);
	assert_int_equal(F.last.terminating_replicas, 1);
	rs_sync_result_free(&res);
	kube_object_free(rs);
}

/* kcmd: expectations orphaned by a dead worker make the sync ask for a recheck */
static void test_orphan_recheck(void **state)
{
	(void)state;
	pid_t pid = fork();
	if (pid == 0) {
		struct rs_exp *w2;
		if (rs_exp_attach(E.fd, RS_EXP_WORKER, 0, &w2) < 0)
			_exit(2);
		_exit(rs_exp_expect_creations(w2, "ns/rs", 2, 1000 * SEC - 10 * SEC) < 0 ? 3 : 0);
	}
	int status;
	waitpid(pid, &status, 0);
	assert_int_equal(WEXITSTATUS(status), 0);
	struct kube_replicaset *rs = mkrs((struct rs_opts){.replicas = 2});
	struct rs_sync_input in = input(rs, NULL, 0);
	struct rs_sync_result res;
	assert_int_equal(rs_sync(&in, &EX, &res), 0);
	assert_false(res.needs_sync);
	assert_int_equal(res.exp_verdict, RS_EXP_PENDING);
	assert_true(res.requeue);
	assert_int_equal(res.requeue_after_ns, RS_EXP_ORPHAN_GRACE_NS - 10 * SEC + 1);
	assert_int_equal(F.create_calls, 0);
	rs_sync_result_free(&res);
	kube_object_free(rs);
}

/* v1.36 staleness gate: the controller's own writes must be in the cache before it syncs */
static void test_consistency_gate(void **state)
{
	(void)state;
	RV_NEXT = 100;
	struct kube_replicaset *rs = mkrs((struct rs_opts){.replicas = 2});
	struct kube_pod o = pod("o", NULL, KUBE_POD_RUNNING, true);
	const struct kube_pod *pods[] = {&o};
	struct rs_sync_input in = input(rs, pods, 1);
	in.read_rv[RS_CONS_PODS] = "50";
	in.read_rv[RS_CONS_REPLICASETS] = "50";
	struct rs_sync_result res;
	/* adopt (patch rv 100), create one (rv 101), status (rv 102) */
	assert_int_equal(rs_sync(&in, &EX_RV, &res), 0);
	assert_int_equal(res.adopted, 1);
	assert_int_equal(res.created, 1);
	assert_true(res.status_written);
	rs_sync_result_free(&res);
	/* expectations satisfied, but the cache has not seen our pod writes: skipped */
	assert_int_equal(rs_exp_creation_observed(E.inf, "ns/rs"), 1);
	fake_reset();
	assert_int_equal(rs_sync(&in, &EX_RV, &res), -EAGAIN);
	assert_true(res.stale_skip);
	assert_int_equal(res.stale_resource, RS_CONS_PODS);
	assert_string_equal(
	        res.err_msg,
	        "read version: 50 is not as new as written version: 101 for group resource pods");
	assert_int_equal(F.update_calls + F.create_calls + F.patch_calls + F.get_calls, 0);
	rs_sync_result_free(&res);
	/* pods caught up, replicasets not */
	in.read_rv[RS_CONS_PODS] = "101";
	assert_int_equal(rs_sync(&in, &EX_RV, &res), -EAGAIN);
	assert_int_equal(res.stale_resource, RS_CONS_REPLICASETS);
	assert_string_equal(res.err_msg, "read version: 50 is not as new as written version: 102 "
	                                 "for group resource replicasets.apps");
	rs_sync_result_free(&res);
	/* both caught up: the sync runs (and the record is cleared, then rewritten by it) */
	in.read_rv[RS_CONS_REPLICASETS] = "200";
	assert_int_equal(rs_sync(&in, &EX_RV, &res), 0);
	assert_false(res.stale_skip);
	rs_sync_result_free(&res);
	/* an unknown store version never blocks; neither does a malformed written one */
	in.read_rv[RS_CONS_PODS] = NULL;
	in.read_rv[RS_CONS_REPLICASETS] = "";
	assert_int_equal(rs_exp_wrote_at(E.w, "ns/rs", "rs-uid", RS_CONS_PODS, "999999"), 0);
	assert_int_equal(rs_sync(&in, &EX_RV, &res), 0);
	rs_sync_result_free(&res);
	/* gate off: no check, no records */
	in.read_rv[RS_CONS_PODS] = "1";
	in.read_rv[RS_CONS_REPLICASETS] = "1";
	assert_int_equal(rs_exp_wrote_at(E.w, "ns/rs", "rs-uid", RS_CONS_PODS, "999999"), 0);
	in.features.stale_consistency = false;
	assert_int_equal(rs_sync(&in, &EX_RV, &res), 0);
	rs_sync_result_free(&res);
	/* the RS delete handler's DeleteExpectations clears the record too */
	in.features.stale_consistency = true;
	assert_int_equal(rs_exp_informer_delete(E.inf, "ns/rs"), 1);
	assert_int_equal(rs_sync(&in, &EX_RV, &res), 0);
	rs_sync_result_free(&res);
	/* RS gone with a stale record: the error comes first, as upstream's order */
	assert_int_equal(rs_exp_wrote_at(E.w, "ns/rs", "rs-uid", RS_CONS_PODS, "999999"), 0);
	in.rs = NULL;
	assert_int_equal(rs_sync(&in, &EX_RV, &res), -EAGAIN);
	rs_sync_result_free(&res);
	in.read_rv[RS_CONS_PODS] = "999999";
	assert_int_equal(rs_sync(&in, &EX_RV, &res), -EAGAIN); /* our status write is newer too */
	assert_int_equal(res.stale_resource, RS_CONS_REPLICASETS);
	rs_sync_result_free(&res);
	in.read_rv[RS_CONS_REPLICASETS] = "999999";
	assert_int_equal(rs_sync(&in, &EX_RV, &res), 0);
	assert_true(res.rs_gone);
	rs_sync_result_free(&res);
	kube_object_free(rs);
}

/* A create whose outcome is unknown (the connection died after it went out, a 504): its
 * expectation is lowered as upstream's, and the newest pod the ReplicaSet controls at the
 * apiserver (an uncached LIST) becomes the consistency record, so the next sync waits for the
 * informer to have it rather than creating the pod again. A plain refusal lists nothing. */
static int LIST_CALLS;
static const char *LIST_RV;
static int f_controlled_rv(void *ud, const struct kube_replicaset *rs, char **rv, char **msg)
{
	(void)ud;
	(void)msg;
	assert_string_equal(rs->meta.uid, "rs-uid");
	LIST_CALLS++;
	*rv = LIST_RV ? strdup(LIST_RV) : NULL;
	return 0;
}

/* One sync whose single create fails with err, the LIST answering list_rv; then the fake's
 * records are reset for the next sync. */
static void fail_one_create(struct rs_sync_input *in, const struct rs_executor *ex, int err,
                            const char *list_rv)
{
	struct rs_sync_result res;
	fake_reset();
	rs_exp_delete(E.w, "ns/rs");
	LIST_CALLS = 0;
	LIST_RV = list_rv;
	F.create_fail_from = 0;
	F.create_err = err;
	assert_int_equal(rs_sync(in, ex, &res), err);
	assert_int_equal(res.create_failed, 1); /* the slow-start batch of 1 failed */
	rs_sync_result_free(&res);
	fake_reset();
}

/* The sync after it creates the two missing pods. */
static void sync_creates_two(struct rs_sync_input *in, const struct rs_executor *ex)
{
	struct rs_sync_result res;
	assert_int_equal(rs_sync(in, ex, &res), 0);
	assert_int_equal(F.create_calls, 2);
	rs_sync_result_free(&res);
}

static void test_unknown_create_outcome(void **state)
{
	(void)state;
	struct rs_executor ex = EX;
	ex.controlled_pods_rv = f_controlled_rv;
	struct kube_replicaset *rs = mkrs((struct rs_opts){.replicas = 3});
	struct kube_pod a = pod("a", &REF_US, KUBE_POD_RUNNING, true);
	const struct kube_pod *pods[] = {&a};
	struct rs_sync_input in = input(rs, pods, 1);
	in.features.stale_consistency = true;
	in.read_rv[RS_CONS_PODS] = "120";
	in.read_rv[RS_CONS_REPLICASETS] = "120";
	struct rs_sync_result res;
	int unknown[] = {-ECONNRESET, -ETIMEDOUT};
	for (int k = 0; k < 2; k++) {
		fail_one_create(&in, &ex, unknown[k], "150");
		assert_int_equal(LIST_CALLS, 1);
		/* the informer at 120 has not seen the pod at 150: nothing is created */
		assert_int_equal(rs_sync(&in, &ex, &res), -EAGAIN);
		assert_true(res.stale_skip);
		assert_int_equal(res.stale_resource, RS_CONS_PODS);
		assert_int_equal(F.create_calls, 0);
		rs_sync_result_free(&res);
		in.read_rv[RS_CONS_PODS] = "150";
		sync_creates_two(&in, &ex);
		in.read_rv[RS_CONS_PODS] = "120";
	}
	/* a refusal: nothing is listed */
	fail_one_create(&in, &ex, -EACCES, "150");
	assert_int_equal(LIST_CALLS, 0);
	sync_creates_two(&in, &ex);
	/* no pod of ours at the apiserver: no record, the next sync creates at once */
	fail_one_create(&in, &ex, -ECONNRESET, NULL);
	assert_int_equal(LIST_CALLS, 1);
	sync_creates_two(&in, &ex);
	/* the gate off: upstream's behaviour, no LIST */
	in.features.stale_consistency = false;
	fail_one_create(&in, &ex, -ECONNRESET, "150");
	assert_int_equal(LIST_CALLS, 0);
	kube_object_free(rs);
}

/* replicaset_controller_sorting_deletion_age_ratio (reportSortingDeletionAgeRatioMetric) and
 * stale_sync_skips_total, counted in the shared header and printed for /metrics */
static void test_metrics(void **state)
{
	(void)state;
	struct kube_replicaset *rs = mkrs((struct rs_opts){.replicas = 1});
	/* ready pods 4 h, 2 h and 1 h old (the youngest ready: 1 h); a not-ready one is never
	 * counted */
	struct kube_pod a = pod("a", &REF_US, KUBE_POD_RUNNING, true);
	struct kube_pod b = pod("b", &REF_US, KUBE_POD_RUNNING, true);
	struct kube_pod c = pod("c", &REF_US, KUBE_POD_RUNNING, true);
	struct kube_pod d = pod("d", &REF_US, KUBE_POD_PENDING, false);
	a.meta.creation_timestamp = NOW - 4 * 3600 * SEC;
	b.meta.creation_timestamp = NOW - 2 * 3600 * SEC;
	c.meta.creation_timestamp = NOW - 3600 * SEC;
	/* equal ready times: the ranking falls to creation time, the younger first */
	const struct kube_pod *pods[] = {&a, &b, &c, &d};
	struct rs_sync_input in = input(rs, pods, 4);
	struct rs_sync_result res;
	assert_int_equal(rs_sync(&in, &EX, &res), 0);
	assert_int_equal(F.delete_calls, 3);
	rs_sync_result_free(&res);
	char *text = NULL;
	assert_int_equal(rs_exp_metrics_text(E.w, &text), 0);
	/* victims d (not ready: skipped), c (ratio 1), b (ratio 2) */
	assert_non_null(strstr(
	        text, "replicaset_controller_sorting_deletion_age_ratio_bucket{le=\"0.5\"} 0\n"));
	assert_non_null(strstr(
	        text, "replicaset_controller_sorting_deletion_age_ratio_bucket{le=\"1\"} 1\n"));
	assert_non_null(strstr(
	        text, "replicaset_controller_sorting_deletion_age_ratio_bucket{le=\"2\"} 2\n"));
	assert_non_null(strstr(
	        text, "replicaset_controller_sorting_deletion_age_ratio_bucket{le=\"+Inf\"} 2\n"));
	assert_non_null(strstr(text, "replicaset_controller_sorting_deletion_age_ratio_sum 3\n"));
	assert_non_null(strstr(text, "replicaset_controller_sorting_deletion_age_ratio_count 2\n"));
	assert_non_null(strstr(
	        text, "# TYPE replicaset_controller_sorting_deletion_age_ratio histogram\n"));
	assert_non_null(strstr(
	        text,
	        "replicaset_controller_stale_sync_skips_total{group=\"\",resource=\"pods\"} 0\n"));
	free(text);
	/* deleting every active pod sorts nothing and reports nothing */
	kube_object_free(rs);
	rs = mkrs((struct rs_opts){.replicas = 0});
	in = input(rs, pods, 4);
	fake_reset();
	rs_exp_delete(E.w, "ns/rs");
	assert_int_equal(rs_sync(&in, &EX, &res), 0);
	rs_sync_result_free(&res);
	/* a stale skip is counted per resource */
	in.features.stale_consistency = true;
	assert_int_equal(rs_exp_wrote_at(E.w, "ns/rs", rs->meta.uid, RS_CONS_REPLICASETS, "90"), 0);
	in.read_rv[RS_CONS_PODS] = "10";
	in.read_rv[RS_CONS_REPLICASETS] = "10";
	assert_int_equal(rs_sync(&in, &EX, &res), -EAGAIN);
	rs_sync_result_free(&res);
	assert_int_equal(rs_exp_metrics_text(E.w, &text), 0);
	assert_non_null(strstr(text, "replicaset_controller_sorting_deletion_age_ratio_count 2\n"));
	assert_non_null(strstr(text, "replicaset_controller_stale_sync_skips_total{group=\"apps\","
	                             "resource=\"replicasets\"} 1\n"));
	free(text);
	kube_object_free(rs);
}

/* deletions finish in any order: events and "the first error" follow the completion order */
static void test_delete_completion_order(void **state)
{
	(void)state;
	struct kube_replicaset *rs = mkrs((struct rs_opts){.replicas = 0});
	struct kube_pod a = pod("a", &REF_US, KUBE_POD_RUNNING, true);
	struct kube_pod b = pod("b", &REF_US, KUBE_POD_RUNNING, true);
	struct kube_pod c = pod("c", &REF_US, KUBE_POD_RUNNING, true);
	const struct kube_pod *pods[] = {&a, &b, &c};
	F.delete_err[0] = -EREMOTEIO;
	F.delete_err[1] = -EREMOTEIO;
	F.delete_reverse_rank = true; /* pod 2 finished first, pod 0 last */
	struct rs_sync_input in = input(rs, pods, 3);
	struct rs_sync_result res;
	assert_int_equal(rs_sync(&in, &EX, &res), -EREMOTEIO);
	assert_int_equal(F.n_events, 3);
	assert_string_equal(F.ev[0][1], "SuccessfulDelete");
	assert_string_equal(F.ev[1][2], "Error deleting: boom 1");
	assert_string_equal(F.ev[2][2], "Error deleting: boom");
	assert_string_equal(res.err_msg, "unable to delete pods: boom 1");
	rs_sync_result_free(&res);
	kube_object_free(rs);
}

/* The status PUT's body is the ReplicaSet as read with the new status: every metadata field
 * comes back equal through the decoders (JSON, and protobuf after kube_proto_encode_json, the
 * body a protobuf client sends), owner references keep absent apart from false, no spec is
 * sent, and a ReplicationController's status carries no terminatingReplicas. */
static void same_put_meta(const struct kube_object_meta *a, const struct kube_object_meta *b)
{
	assert_string_equal(a->name, b->name);
	assert_string_equal(a->generate_name, b->generate_name);
	assert_string_equal(a->namespace, b->namespace);
	assert_string_equal(a->uid, b->uid);
	assert_string_equal(a->resource_version, b->resource_version);
	assert_int_equal(a->generation, b->generation);
	assert_int_equal(a->creation_timestamp, b->creation_timestamp);
	assert_int_equal(a->deletion_timestamp, b->deletion_timestamp);
	assert_int_equal(a->has_deletion_grace_period_seconds,
	                 b->has_deletion_grace_period_seconds);
	assert_int_equal(a->deletion_grace_period_seconds, b->deletion_grace_period_seconds);
	assert_int_equal(a->n_labels, b->n_labels);
	for (uint32_t i = 0; i < a->n_labels; i++) {
		assert_string_equal(a->labels[i].key, b->labels[i].key);
		assert_string_equal(a->labels[i].value, b->labels[i].value);
	}
	assert_int_equal(a->n_annotations, b->n_annotations);
	for (uint32_t i = 0; i < a->n_annotations; i++) {
		assert_string_equal(a->annotations[i].key, b->annotations[i].key);
		assert_string_equal(a->annotations[i].value, b->annotations[i].value);
	}
	assert_int_equal(a->n_owner_refs, b->n_owner_refs);
	for (uint32_t i = 0; i < a->n_owner_refs; i++) {
		assert_string_equal(a->owner_refs[i].uid, b->owner_refs[i].uid);
		assert_string_equal(a->owner_refs[i].kind, b->owner_refs[i].kind);
		assert_int_equal(a->owner_refs[i].controller, b->owner_refs[i].controller);
		assert_int_equal(a->owner_refs[i].block_owner_deletion,
		                 b->owner_refs[i].block_owner_deletion);
	}
	assert_int_equal(a->n_finalizers, b->n_finalizers);
	for (uint32_t i = 0; i < a->n_finalizers; i++)
		assert_string_equal(a->finalizers[i], b->finalizers[i]);
}

static void test_status_put_body(void **state)
{
	(void)state;
	static const char rs_json[] =
	        "{\"apiVersion\":\"apps/"
	        "v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"web-1\","
	        "\"generateName\":\"web-\",\"namespace\":\"ns\",\"uid\":\"u-rs\","
	        "\"resourceVersion\":\"77\",\"generation\":4,"
	        "\"creationTimestamp\":\"2026-01-02T03:04:05Z\","
	        "\"deletionTimestamp\":\"2026-01-02T04:00:00Z\",\"deletionGracePeriodSeconds\":0,"
	        "\"labels\":{\"app\":\"web\",\"tier\":\"\"},"
	        "\"annotations\":{\"deployment.kubernetes.io/revision\":\"3\",\"x\":\"y\"},"
	        "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\","
	        "\"name\":\"web\",\"uid\":\"u-d\",\"controller\":true,\"blockOwnerDeletion\":true},"
	        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"c\",\"uid\":\"u-c\","
	        "\"controller\":false}],"
	        "\"finalizers\":[\"foregroundDeletion\",\"a/b\"]},"
	        "\"spec\":{\"replicas\":3,\"selector\":{\"matchLabels\":{\"app\":\"web\"}},"
	        "\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\"}},\"spec\":{}}}}";
	struct kube_replicaset *rs = NULL, *back = NULL, *back_pb = NULL;
	assert_int_equal(kube_decode(KUBE_KIND_REPLICASET, rs_json, sizeof(rs_json) - 1,
	                             KUBE_DECODE_ALL_ANNOTATIONS, (void **)&rs),
	                 0);
	struct kube_rs_status st = {.replicas = 3,
	                            .fully_labeled_replicas = 3,
	                            .ready_replicas = 2,
	                            .available_replicas = 1,
	                            .terminating_replicas = 1,
	                            .has_terminating_replicas = true,
	                            .observed_generation = 4};
	char *body = rs_status_put_json("apps/v1", "ReplicaSet", rs, &st);
	assert_non_null(body);
	cJSON *o = cJSON_Parse(body);
	assert_non_null(o);
	assert_null(cJSON_GetObjectItemCaseSensitive(o, "spec"));
	cJSON *jst = cJSON_GetObjectItemCaseSensitive(o, "status");
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(jst, "readyReplicas")->valueint, 2);
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(jst, "terminatingReplicas")->valueint, 1);
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(jst, "observedGeneration")->valueint, 4);
	cJSON_Delete(o);
	assert_int_equal(kube_decode(KUBE_KIND_REPLICASET, body, strlen(body),
	                             KUBE_DECODE_ALL_ANNOTATIONS, (void **)&back),
	                 0);
	same_put_meta(&rs->meta, &back->meta);
	assert_int_equal(back->status.ready_replicas, 2);
	void *pb = NULL;
	size_t pb_len = 0;
	assert_int_equal(
	        kube_proto_encode_json("apps/v1", "ReplicaSet", body, strlen(body), &pb, &pb_len),
	        0);
	assert_int_equal(kube_decode_any(KUBE_KIND_REPLICASET, pb, pb_len,
	                                 KUBE_DECODE_ALL_ANNOTATIONS, (void **)&back_pb),
	                 0);
	same_put_meta(&rs->meta, &back_pb->meta);
	assert_int_equal(back_pb->status.available_replicas, 1);
	free(pb);
	free(body);
	/* a ReplicationController: no terminatingReplicas, its own apiVersion and kind */
	body = rs_status_put_json("v1", "ReplicationController", rs, &st);
	o = cJSON_Parse(body);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(o, "kind")->valuestring,
	                    "ReplicationController");
	assert_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "status"),
	                                             "terminatingReplicas"));
	cJSON_Delete(o);
	free(body);
	assert_null(rs_status_put_json("v1", "ReplicationController", NULL, &st));
	kube_object_free(rs);
	kube_object_free(back);
	kube_object_free(back_pb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_slow_start_sizes),
	        cmocka_unit_test(test_claim_decisions),
	        cmocka_unit_test(test_availability),
	        cmocka_unit_test(test_events_and_errors),
	        cmocka_unit_test_setup_teardown(test_create_from_scratch, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_slow_start_failure, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_failure_condition_sticky_and_cleared, setup,
	                                        teardown),
	        cmocka_unit_test_setup_teardown(test_namespace_terminating, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_no_labels, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_scale_down, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_delete_failures, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_deletion_cost_and_related, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_claims_in_sync, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_rc_kind, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_rs_being_deleted, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_status_counts, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_status_noop_rules, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_status_retry, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_gone_and_invalid_selector, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_failed_and_deleting_replaced, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_orphan_recheck, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_consistency_gate, setup, teardown),

	        cmocka_unit_test_setup_teardown(test_unknown_create_outcome, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_metrics, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_delete_completion_order, setup, teardown),
	        cmocka_unit_test(test_status_put_body),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
