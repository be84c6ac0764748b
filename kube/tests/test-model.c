/* SPDX-License-Identifier: Apache-2.0 */
/* kube/tests/test-model.c - ReplicaSet, Lease, Status, lists and watch events (hand-written
 * fixtures, not yet captured from the real cluster). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kube/errors.h"
#include "kube/model.h"
#include "kube/selector.h"
#include "kube/tests/helpers.h"

static kube_time_t T(const char *s)
{
	kube_time_t t;
	assert_int_equal(kube_time_parse(s, strlen(s), &t), 0);
	return t;
}

static void test_replicaset(void **state)
{
	(void)state;
	size_t len;
	char *b = fixture("replicaset.json", &len);
	struct kube_replicaset *rs;
	assert_int_equal(kube_decode_replicaset(b, len, 0, &rs), 0);
	assert_string_equal(rs->meta.name, "web-7d4b9c8f6d");
	assert_int_equal(rs->meta.generation, 3);
	assert_int_equal(rs->meta.n_annotations, 3); /* deployment.kubernetes.io/ only */
	assert_int_equal(rs->spec_replicas, 3);
	assert_true(rs->has_spec_replicas);
	assert_int_equal(rs->min_ready_seconds, 10);
	assert_non_null(rs->selector);
	assert_int_equal(rs->selector->n_match_labels, 2);
	assert_int_equal(rs->selector->n_match_expressions, 1);
	assert_int_equal(rs->selector->match_expressions[0].op, KUBE_OP_NOT_IN);
	assert_int_equal(rs->selector->match_expressions[0].n_values, 2);
	assert_int_equal(rs->n_template_labels, 3);
	assert_string_equal(kube_labels_get(rs->template_labels, rs->n_template_labels, "tier"),
	                    "frontend");
	assert_non_null(rs->template_json);
	assert_int_equal(strlen(rs->template_json), rs->template_json_len);
	assert_true(rs->template_json[0] == '{' &&
	            rs->template_json[rs->template_json_len - 1] == '}');
	assert_int_equal(rs->status.replicas, 3);
	assert_int_equal(rs->status.fully_labeled_replicas, 3);
	assert_int_equal(rs->status.ready_replicas, 2);
	assert_int_equal(rs->status.available_replicas, 2);
	assert_true(rs->status.has_terminating_replicas);
	assert_int_equal(rs->status.terminating_replicas, 1);
	assert_int_equal(rs->status.observed_generation, 3);
	assert_int_equal(rs->status.n_conditions, 1);
	assert_string_equal(rs->status.conditions[0].reason, "FailedCreate");
	assert_int_equal(rs->status.conditions[0].last_transition_time, T("2026-11-30T10:20:00Z"));

	struct kube_selector *sel;
	assert_int_equal(kube_selector_from_label_selector(rs->selector, &sel, NULL, 0), 0);
	assert_true(kube_selector_matches(sel, rs->template_labels, rs->n_template_labels));
	kube_selector_free(sel);
	kube_object_free(rs);
	free(b);

	/* no selector, no replicas: nil selector, replicas default 1 */
	const char *j = "{\"spec\":{\"template\":{}}}";
	assert_int_equal(kube_decode_replicaset(j, strlen(j), 0, &rs), 0);
	assert_null(rs->selector);
	assert_int_equal(rs->spec_replicas, 1);
	assert_false(rs->has_spec_replicas);
	assert_false(rs->status.has_terminating_replicas);
	kube_object_free(rs);
	/* empty selector object is not nil */
	j = "{\"spec\":{\"selector\":{}}}";
	assert_int_equal(kube_decode_replicaset(j, strlen(j), 0, &rs), 0);
	assert_non_null(rs->selector);
	assert_int_equal(kube_selector_from_label_selector(rs->selector, &sel, NULL, 0), 0);
	assert_true(kube_selector_is_everything(sel));
	kube_selector_free(sel);
	kube_object_free(rs);
	/* unknown matchExpressions operator survives decoding, fails conversion */
	j = "{\"spec\":{\"selector\":{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Foo\"}]}}"
	    "}";
	assert_int_equal(kube_decode_replicaset(j, strlen(j), 0, &rs), 0);
	assert_int_equal(rs->selector->match_expressions[0].op, KUBE_OP_INVALID);
	assert_int_equal(kube_selector_from_label_selector(rs->selector, &sel, NULL, 0), -EINVAL);
	kube_object_free(rs);
}

static void test_duplicate_keys(void **state)
{
	(void)state;
	/* a repeated key replaces the earlier value, lists included (found by fuzz-decode) */
	const char *j =
	        "{\"status\":{\"conditions\":[{\"type\":\"A\"},{\"type\":\"B\"},{\"type\":\"C\"}],"
	        "\"conditions\":[{\"type\":\"D\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"},"
	        "{\"type\":\"E\"},{\"type\":\"F\"},{\"type\":\"G\"},{\"type\":\"H\"}]},"
	        "\"spec\":{\"selector\":{\"matchExpressions\":[{\"key\":\"a\",\"operator\":"
	        "\"Exists\"}],"
	        "\"matchExpressions\":[{\"key\":\"b\",\"operator\":\"Exists\"},{\"key\":\"c\","
	        "\"operator\":\"Exists\"},{\"key\":\"d\",\"operator\":\"Exists\"}]}},"
	        "\"metadata\":{\"labels\":{\"x\":\"1\"},\"labels\":{\"y\":\"2\",\"y\":\"3\"}}}";
	struct kube_replicaset *rs;
	assert_int_equal(kube_decode_replicaset(j, strlen(j), 0, &rs), 0);
	assert_int_equal(rs->status.n_conditions, 5);
	assert_string_equal(rs->status.conditions[0].type, "D");
	assert_string_equal(rs->status.conditions[4].type, "H");
	assert_int_equal(rs->selector->n_match_expressions, 3);
	assert_string_equal(rs->selector->match_expressions[2].key, "d");
	assert_null(kube_labels_get(rs->meta.labels, rs->meta.n_labels, "x"));
	assert_string_equal(kube_labels_get(rs->meta.labels, rs->meta.n_labels, "y"), "3");
	kube_object_free(rs);
	const char *st =
	        "{\"details\":{\"causes\":[{\"reason\":\"a\"}],\"causes\":[{\"reason\":\"b\"},"
	        "{\"reason\":\"c\"},{\"reason\":\"d\"}]}}";
	struct kube_status *s;
	assert_int_equal(kube_decode_status(st, strlen(st), 0, &s), 0);
	assert_int_equal(s->n_causes, 3);
	kube_object_free(s);
}

static int scratch_item(void *obj, void *ud)
{
	char(*names)[16] = ud;
	struct kube_partial *p = obj;
	int i = 0;
	while (names[i][0])
		i++;
	snprintf(names[i], sizeof(names[i]), "%s", p->meta.name);
	return 0; /* not freed: it lives in the scratch */
}

static void test_scratch(void **state)
{
	(void)state;
	size_t len;
	char *b = fixture("replicaset.json", &len);
	struct kube_scratch *s;
	struct kube_replicaset *rs;
	struct kube_pod *p;
	assert_int_equal(kube_scratch_new(&s), 0);
	for (int i = 0; i < 100; i++) {
		assert_int_equal(
		        kube_decode_scratch(s, KUBE_KIND_REPLICASET, b, len, 0, (void **)&rs), 0);
		assert_string_equal(rs->meta.name, "web-7d4b9c8f6d");
		assert_int_equal(rs->status.n_conditions, 1);
	}
	free(b);
	b = fixture("pod-running.json", &len);
	assert_int_equal(kube_decode_scratch(s, KUBE_KIND_POD, b, len, 0, (void **)&p), 0);
	assert_int_equal(p->max_restarts, 5);
	assert_int_equal(kube_decode_scratch(s, KUBE_KIND_POD, b, len - 3, 0, (void **)&p),
	                 -EBADMSG);
	assert_int_equal(kube_decode_scratch(s, KUBE_KIND_POD, b, len, 0, (void **)&p),
	                 0); /* usable after an error */
	free(b);
	b = fixture("podlist-partial.json", &len);
	char names[4][16] = {{0}};
	assert_int_equal(kube_decode_list_scratch(s, KUBE_KIND_PARTIAL, b, len, 0, scratch_item,
	                                          names, NULL),
	                 2);
	assert_string_equal(names[0], "a");
	assert_string_equal(names[1], "b");
	free(b);
	kube_scratch_free(s);
}

static void test_lease(void **state)
{
	(void)state;
	size_t len;
	char *b = fixture("lease.json", &len);
	struct kube_lease *l;
	char buf[KUBE_TIME_BUF];
	assert_int_equal(kube_decode_lease(b, len, 0, &l), 0);
	assert_string_equal(l->holder_identity, "cp-1_5f0c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d");
	assert_int_equal(l->lease_duration_seconds, 15);
	assert_int_equal(l->lease_transitions, 4);
	kube_microtime_format(l->renew_time, buf);
	assert_string_equal(buf, "2026-12-01T12:00:00.654321Z");
	assert_null(l->strategy);
	assert_string_equal(l->meta.resource_version, "98765");
	kube_object_free(l);
	free(b);
}

static int collect(void *obj, void *ud)
{
	struct kube_partial **out = ud;
	for (int i = 0; i < 8; i++)
		if (!out[i]) {
			out[i] = obj;
			return 0;
		}
	kube_object_free(obj);
	return -ENOSPC;
}

static void test_partial_list(void **state)
{
	(void)state;
	size_t len;
	char *b = fixture("podlist-partial.json", &len);
	struct kube_partial *items[8] = {0};
	struct kube_list_meta lm;
	assert_int_equal(kube_decode_list(KUBE_KIND_PARTIAL, b, len, 0, collect, items, &lm), 2);
	assert_string_equal(lm.resource_version, "555");
	assert_true(strlen(lm.cont) > 10);
	assert_int_equal(lm.remaining_item_count, 1198);
	assert_string_equal(items[0]->meta.name, "a");
	assert_string_equal(items[0]->meta.finalizers[0], "foregroundDeletion");
	assert_string_equal(kube_controller_of(&items[0]->meta)->uid, "u-rs");
	assert_string_equal(items[1]->kind, "PartialObjectMetadata");
	assert_true(items[1]->meta.deletion_timestamp != 0);
	assert_true(items[1]->meta.has_deletion_grace_period_seconds);
	for (int i = 0; i < 8; i++)
		kube_object_free(items[i]);
	/* the callback's error stops decoding */
	struct kube_partial *one[8] = {(void *)1, (void *)1, (void *)1, (void *)1,
	                               (void *)1, (void *)1, (void *)1, (void *)1};
	assert_int_equal(kube_decode_list(KUBE_KIND_PARTIAL, b, len, 0, collect, one, NULL),
	                 -ENOSPC);
	/* a truncated list fails */
	memset(items, 0, sizeof(items));
	assert_int_equal(kube_decode_list(KUBE_KIND_PARTIAL, b, len - 5, 0, collect, items, NULL),
	                 -EBADMSG);
	for (int i = 0; i < 8; i++)
		kube_object_free(items[i]);
	free(b);
}

static void test_watch_events(void **state)
{
	(void)state;
	size_t len;
	char *b = fixture("watch-events.jsonl", &len);
	static const enum kube_watch_type want[] = {KUBE_WATCH_ADDED, KUBE_WATCH_MODIFIED,
	                                            KUBE_WATCH_BOOKMARK, KUBE_WATCH_DELETED,
	                                            KUBE_WATCH_ERROR};
	char *line = b;
	for (int i = 0; i < 5; i++) {
		char *nl = strchr(line, '\n');
		assert_non_null(nl);
		enum kube_watch_type t;
		void *o;
		assert_int_equal(kube_decode_watch_event(KUBE_KIND_POD, line, (size_t)(nl - line),
		                                         0, &t, &o),
		                 0);
		assert_int_equal(t, want[i]);
		if (t == KUBE_WATCH_ERROR) {
			struct kube_status *st = o;
			assert_int_equal(st->code, 410);
			assert_string_equal(st->reason, "Expired");
		} else if (t == KUBE_WATCH_BOOKMARK) {
			struct kube_pod *p = o;
			assert_string_equal(p->meta.resource_version, "250");
			assert_string_equal(kube_labels_get(p->meta.annotations,
			                                    p->meta.n_annotations,
			                                    "k8s.io/initial-events-end"),
			                    "true");
		} else if (t == KUBE_WATCH_MODIFIED) {
			assert_string_equal(((struct kube_pod *)o)->node_name, "n1");
		}
		kube_object_free(o);
		line = nl + 1;
	}
	free(b);
	/* object before type */
	const char *j = "{\"object\":{\"metadata\":{\"name\":\"x\"}},\"type\":\"ADDED\"}";
	enum kube_watch_type t;
	void *o;
	assert_int_equal(kube_decode_watch_event(KUBE_KIND_POD, j, strlen(j), 0, &t, &o), 0);
	assert_string_equal(((struct kube_pod *)o)->meta.name, "x");
	kube_object_free(o);
	j = "{\"object\":{\"code\":410},\"type\":\"ERROR\"}";
	assert_int_equal(kube_decode_watch_event(KUBE_KIND_POD, j, strlen(j), 0, &t, &o), 0);
	assert_int_equal(((struct kube_status *)o)->code, 410);
	kube_object_free(o);
	j = "{\"type\":\"WHAT\",\"object\":{}}";
	assert_int_equal(kube_decode_watch_event(KUBE_KIND_POD, j, strlen(j), 0, &t, &o), -EPROTO);
	j = "{\"type\":\"ADDED\"}";
	assert_int_equal(kube_decode_watch_event(KUBE_KIND_POD, j, strlen(j), 0, &t, &o), -EPROTO);
}

static void test_scale_status(void **state)
{
	(void)state;
	const char *j =
	        "{\"kind\":\"Scale\",\"apiVersion\":\"autoscaling/"
	        "v1\",\"metadata\":{\"name\":\"rs\","
	        "\"resourceVersion\":\"7\"},\"spec\":{\"replicas\":4},\"status\":{\"replicas\":2,"
	        "\"selector\":\"app=web\"}}";
	struct kube_scale *s;
	assert_int_equal(kube_decode_scale(j, strlen(j), 0, &s), 0);
	assert_int_equal(s->spec_replicas, 4);
	assert_int_equal(s->status_replicas, 2);
	assert_string_equal(s->status_selector, "app=web");
	kube_object_free(s);
}

static void test_errors(void **state)
{
	(void)state;
	size_t len;
	struct kube_error e;
	char *b = fixture("status-ns-terminating.json", &len);
	assert_int_equal(kube_error_from_response(403, b, len, NULL, &e), -ESHUTDOWN);
	assert_true(e.namespace_terminating);
	assert_string_equal(e.reason, "Forbidden");
	free(b);
	b = fixture("status-invalid.json", &len);
	assert_int_equal(kube_error_from_response(422, b, len, NULL, &e), -EINVAL);
	assert_int_equal(e.n_causes, 2);
	assert_string_equal(e.causes[1].field, "spec.containers");
	assert_string_equal(e.causes[1].type, "FieldValueRequired");
	free(b);
	const char *nf =
	        "{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"NotFound\",\"code\":404,"
	        "\"message\":\"pods \\\"x\\\" not found\"}";
	assert_int_equal(kube_error_from_response(404, nf, strlen(nf), NULL, &e), -ENOENT);
	assert_string_equal(e.message, "pods \"x\" not found");
	const char *tm = "{\"status\":\"Failure\",\"reason\":\"TooManyRequests\",\"code\":429,"
	                 "\"details\":{\"retryAfterSeconds\":3}}";
	assert_int_equal(kube_error_from_response(429, tm, strlen(tm), NULL, &e), -EAGAIN);
	assert_int_equal(e.retry_after_s, 3);
	assert_int_equal(kube_error_from_response(429, tm, strlen(tm), "7", &e), -EAGAIN);
	assert_int_equal(e.retry_after_s, 7);
	const char *tl = "{\"status\":\"Failure\",\"reason\":\"Timeout\",\"code\":504,\"details\":{"
	                 "\"causes\":"
	                 "[{\"reason\":\"ResourceVersionTooLarge\",\"message\":\"Too large "
	                 "resource version\"}]}}";
	assert_int_equal(kube_error_from_response(504, tl, strlen(tl), NULL, &e), -ETIMEDOUT);
	assert_true(e.rv_too_large);
	/* a proxy's HTML page */
	const char *html = "<html><body>502 Bad Gateway</body></html>\n";
	assert_int_equal(kube_error_from_response(502, html, strlen(html), NULL, &e), -EREMOTEIO);
	assert_non_null(strstr(e.message, "502 Bad Gateway"));
	assert_int_equal(kube_error_from_response(200, "{}", 2, NULL, &e), 0);
	assert_int_equal(kube_error_from_response(409, NULL, 0, NULL, &e), -ESTALE);
	assert_int_equal(kube_errno_for("AlreadyExists", 409, false), -EEXIST);
	assert_int_equal(kube_errno_for("Conflict", 409, false), -ESTALE);
	assert_int_equal(kube_errno_for("Gone", 410, false), -EKEYEXPIRED);
	assert_int_equal(kube_errno_for("Expired", 410, false), -EKEYEXPIRED);
	assert_int_equal(kube_errno_for("", 410, false), -EKEYEXPIRED);
	assert_int_equal(kube_errno_for("Unauthorized", 401, false), -EKEYREJECTED);
	assert_int_equal(kube_errno_for("ServiceUnavailable", 503, false), -EHOSTDOWN);
	assert_int_equal(kube_errno_for("UnsupportedMediaType", 415, false), -EMEDIUMTYPE);
	assert_int_equal(kube_errno_for("SomethingNew", 404, false), -ENOENT);
	assert_int_equal(kube_errno_for(NULL, 418, false), -EPROTO);
	assert_int_equal(kube_errno_for(NULL, 599, false), -EREMOTEIO);
	assert_string_equal(kube_errno_reason(-ENOENT), "NotFound");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_replicaset),     cmocka_unit_test(test_lease),
	        cmocka_unit_test(test_duplicate_keys), cmocka_unit_test(test_scratch),
	        cmocka_unit_test(test_partial_list),   cmocka_unit_test(test_watch_events),
	        cmocka_unit_test(test_scale_status),   cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
