/* SPDX-License-Identifier: Apache-2.0 */
/* kube/tests/test-captured.c - decoders on responses captured from the real test cluster
 * (kube-apiserver v1.37.2, tests/cluster) by kube/tests/e2e-kube.c with KCMD_CAPTURE_DIR; names
 * and uids are those of that run. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kube/discovery.h"
#include "kube/errors.h"
#include "kube/model.h"
#include "kube/selector.h"
#include "kube/tests/helpers.h"

static void test_pod_rs_lease(void **state)
{
	(void)state;
	size_t len;
	char *b = fixture("captured/pod-created-from-template.json", &len);
	struct kube_pod *p;
	assert_int_equal(kube_decode_pod(b, len, 0, &p), 0);
	assert_string_equal(p->meta.generate_name, "web-");
	assert_int_equal(p->phase, KUBE_POD_PENDING);
	assert_null(p->node_name);
	assert_false(p->ready);
	assert_true(p->meta.creation_timestamp > 0);
	const struct kube_owner_ref *c = kube_controller_of(&p->meta);
	assert_non_null(c);
	assert_string_equal(c->kind, "ReplicaSet");
	assert_int_equal(c->block_owner_deletion, 1);
	free(b);

	b = fixture("captured/replicaset-created.json", &len);
	struct kube_replicaset *rs;
	assert_int_equal(kube_decode_replicaset(b, len, 0, &rs), 0);
	assert_string_equal(rs->meta.uid, c->uid); /* the pod's controller is this RS */
	assert_int_equal(rs->spec_replicas, 2);
	assert_int_equal(rs->min_ready_seconds, 5);
	assert_int_equal(rs->meta.generation, 1);
	struct kube_selector *sel;
	assert_int_equal(kube_selector_from_label_selector(rs->selector, &sel, NULL, 0), 0);
	assert_true(kube_selector_matches(sel, p->meta.labels, p->meta.n_labels));
	kube_selector_free(sel);
	kube_object_free(rs);
	kube_object_free(p);
	free(b);

	b = fixture("captured/lease.json", &len);
	struct kube_lease *l;
	assert_int_equal(kube_decode_lease(b, len, 0, &l), 0);
	assert_string_equal(l->holder_identity, "e2e_1");
	assert_int_equal(l->lease_duration_seconds, 15);
	char buf[KUBE_TIME_BUF];
	kube_microtime_format(l->renew_time, buf);
	assert_string_equal(buf, "2026-12-02T17:40:55.042476Z");
	kube_object_free(l);
	free(b);

	b = fixture("captured/watch-added-configmap.json", &len);
	enum kube_watch_type t;
	void *o;
	assert_int_equal(kube_decode_watch_event(KUBE_KIND_PARTIAL, b, len, 0, &t, &o), 0);
	assert_int_equal(t, KUBE_WATCH_ADDED);
	assert_string_equal(((struct kube_partial *)o)->kind, "ConfigMap");
	kube_object_free(o);
	free(b);

	b = fixture("captured/watch-error-expired.json", &len);
	assert_int_equal(kube_decode_watch_event(KUBE_KIND_POD, b, len, 0, &t, &o), 0);
	assert_int_equal(t, KUBE_WATCH_ERROR);
	assert_int_equal(((struct kube_status *)o)->code, 410);
	assert_string_equal(((struct kube_status *)o)->reason, "Expired");
	kube_object_free(o);
	free(b);
}

static void test_statuses(void **state)
{
	(void)state;
	size_t len;
	struct kube_error e;
	char *b = fixture("captured/status-conflict.json", &len);
	assert_int_equal(kube_error_from_response(409, b, len, NULL, &e), -ESTALE);
	assert_string_equal(e.reason, "Conflict");
	free(b);
	b = fixture("captured/status-notfound.json", &len);
	assert_int_equal(kube_error_from_response(404, b, len, NULL, &e), -ENOENT);
	free(b);
	b = fixture("captured/status-invalid.json", &len);
	assert_int_equal(kube_error_from_response(422, b, len, NULL, &e), -EINVAL);
	assert_int_equal(e.n_causes, 2);
	assert_string_equal(e.causes[0].field, "metadata.name");
	assert_string_equal(e.causes[0].type, "FieldValueInvalid");
	free(b);
}

static void test_discovery(void **state)
{
	(void)state;
	size_t len;
	struct kube_discovery *d;
	char *b = fixture("captured/discovery-v2-apis.json", &len);
	assert_int_equal(kube_decode_discovery_v2(b, len, &d), 0);
	assert_true(d->n > 40);
	const struct kube_api_resource *rs = kube_discovery_find(d, "apps", "replicasets", NULL);
	assert_non_null(rs);
	assert_int_equal(rs->verbs, 0xff);
	assert_non_null(kube_discovery_find(d, "coordination.k8s.io", "leases", NULL));
	assert_non_null(kube_discovery_find(d, "events.k8s.io", "events", NULL));
	kube_object_free(d);
	free(b);
	b = fixture("captured/discovery-v2-api.json", &len);
	assert_int_equal(kube_decode_discovery_v2(b, len, &d), 0);
	assert_true(kube_discovery_find(d, "", "pods", NULL)->namespaced);
	assert_false(kube_discovery_find(d, "", "nodes", NULL)->namespaced);
	kube_object_free(d);
	free(b);
	b = fixture("captured/apiresourcelist-apps.json", &len);
	assert_int_equal(kube_decode_api_resource_list(b, len, true, &d), 0);
	assert_non_null(kube_discovery_find(d, "apps", "deployments", "v1"));
	kube_object_free(d);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_pod_rs_lease),
	        cmocka_unit_test(test_statuses),
	        cmocka_unit_test(test_discovery),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
