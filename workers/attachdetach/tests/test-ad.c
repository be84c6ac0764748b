/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/attachdetach/tests/test-ad.c: the attach/detach controller's decisions (ad.h):
 * VolumeAttachment names (checked against SHA-256 computed independently, as upstream's
 * getAttachmentName hashes handle+driver+node), the unique volume name, attachability (CSI
 * source, CSIDriver attachRequired, access modes), pod termination, the claim-to-volume checks
 * of getPVSpecFromCache, and the plan of one node: attach, report, multi-attach, wait for
 * unmount, detach, force detach after the timeout on an unhealthy node (and not with
 * --disable-force-detach-on-timeout), the out-of-service taint, a deleted node.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "workers/attachdetach/ad.h"

static cJSON *js(const char *s)
{
	cJSON *o = cJSON_Parse(s);

	assert_non_null(o);
	return o;
}

static void test_va_name(void **state)
{
	char buf[AD_VA_NAME_LEN];

	(void)state;
	/* expected values: sha256 of the concatenation, computed outside this code */
	assert_int_equal(ad_va_name("test-vol", "test-driver", "test-node", buf), 0);
	assert_string_equal(buf,
	                    "csi-9b6f67330b7785ca42789ece3ed80d1edd7f35bc1d40caa6fa09f0fcb672883d");
	assert_int_equal(ad_va_name("vol-1", "kcmd.test.csi", "node-a", buf), 0);
	assert_string_equal(buf,
	                    "csi-26d0e843b545e42313a5beb4bffb5458c6de30e29e95a1214e0c81cb4f4f5582");
	assert_int_equal(ad_va_name("", "", "", buf), 0);
	assert_string_equal(buf,
	                    "csi-e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	assert_int_equal(ad_va_name(NULL, "d", "n", buf), -EINVAL);
}

static void test_unique_name(void **state)
{
	char buf[64], tiny[8];

	(void)state;
	assert_int_equal(ad_unique_name("drv", "h1", buf, sizeof(buf)),
	                 (int)strlen("kubernetes.io/csi/drv^h1"));
	assert_string_equal(buf, "kubernetes.io/csi/drv^h1");
	assert_int_equal(ad_unique_name("drv", "h1", tiny, sizeof(tiny)), -ENAMETOOLONG);
	assert_string_equal(tiny, "");
}

static void test_pv_csi(void **state)
{
	cJSON *pv = js("{\"spec\":{\"csi\":{\"driver\":\"d\",\"volumeHandle\":\"h\"}}}");
	cJSON *nfs = js("{\"spec\":{\"nfs\":{\"server\":\"s\",\"path\":\"/\"}}}");
	cJSON *bad = js("{\"spec\":{\"csi\":{\"driver\":\"d\"}}}");
	const char *d = NULL, *h = NULL;

	(void)state;
	assert_int_equal(ad_pv_csi(pv, &d, &h), 0);
	assert_string_equal(d, "d");
	assert_string_equal(h, "h");
	assert_int_equal(ad_pv_csi(nfs, &d, &h), -ENOENT);
	assert_int_equal(ad_pv_csi(bad, &d, &h), -EINVAL);
	cJSON_Delete(pv);
	cJSON_Delete(nfs);
	cJSON_Delete(bad);
}

static void test_attach_required(void **state)
{
	cJSON *t = js("{\"spec\":{\"attachRequired\":true}}");
	cJSON *f = js("{\"spec\":{\"attachRequired\":false}}");
	cJSON *u = js("{\"spec\":{}}");

	(void)state;
	assert_true(ad_attach_required(NULL)); /* no CSIDriver object */
	assert_true(ad_attach_required(t));
	assert_false(ad_attach_required(f));
	assert_true(ad_attach_required(u));
	cJSON_Delete(t);
	cJSON_Delete(f);
	cJSON_Delete(u);
}

static void test_multi_attach(void **state)
{
	cJSON *rwo = js("{\"spec\":{\"accessModes\":[\"ReadWriteOnce\"]}}");
	cJSON *rwop = js("{\"spec\":{\"accessModes\":[\"ReadWriteOncePod\"]}}");
	cJSON *rox = js("{\"spec\":{\"accessModes\":[\"ReadWriteOnce\",\"ReadOnlyMany\"]}}");
	cJSON *rwx = js("{\"spec\":{\"accessModes\":[\"ReadWriteMany\"]}}");
	cJSON *none = js("{\"spec\":{}}");

	(void)state;
	assert_false(ad_multi_attach_allowed(rwo));
	assert_false(ad_multi_attach_allowed(rwop));
	assert_true(ad_multi_attach_allowed(rox));
	assert_true(ad_multi_attach_allowed(rwx));
	assert_true(ad_multi_attach_allowed(none));
	cJSON_Delete(rwo);
	cJSON_Delete(rwop);
	cJSON_Delete(rox);
	cJSON_Delete(rwx);
	cJSON_Delete(none);
}

static void test_pod_terminated(void **state)
{
	cJSON *running = js("{\"status\":{\"phase\":\"Running\"}}");
	cJSON *ok = js("{\"status\":{\"phase\":\"Succeeded\"}}");
	cJSON *failed = js("{\"status\":{\"phase\":\"Failed\"}}");
	cJSON *del_none = js("{\"metadata\":{\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"},"
	                     "\"status\":{\"phase\":\"Running\"}}");
	cJSON *del_run = js("{\"metadata\":{\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"},"
	                    "\"status\":{\"phase\":\"Running\",\"containerStatuses\":[{\"state\":"
	                    "{\"running\":{}}}]}}");
	cJSON *del_init = js("{\"metadata\":{\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"},"
	                     "\"status\":{\"containerStatuses\":[{\"state\":{\"waiting\":{}}}],"
	                     "\"initContainerStatuses\":[{\"state\":{\"running\":{}}}]}}");
	cJSON *del_term = js("{\"metadata\":{\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"},"
	                     "\"status\":{\"phase\":\"Running\",\"containerStatuses\":[{\"state\":"
	                     "{\"terminated\":{}}}]}}");

	(void)state;
	assert_false(ad_pod_terminated(running));
	assert_true(ad_pod_terminated(ok));
	assert_true(ad_pod_terminated(failed));
	assert_true(ad_pod_terminated(del_none));
	assert_false(ad_pod_terminated(del_run));
	assert_true(ad_pod_terminated(del_term));
	assert_false(ad_pod_terminated(del_init)); /* a running init container */
	cJSON_Delete(del_init);
	cJSON_Delete(running);
	cJSON_Delete(ok);
	cJSON_Delete(failed);
	cJSON_Delete(del_none);
	cJSON_Delete(del_run);
	cJSON_Delete(del_term);
}

static void test_claim_volume(void **state)
{
	cJSON *bound = js("{\"metadata\":{\"namespace\":\"ns\",\"name\":\"c\",\"uid\":\"u1\"},"
	                  "\"spec\":{\"volumeName\":\"pv1\"},\"status\":{\"phase\":\"Bound\"}}");
	cJSON *pending = js("{\"metadata\":{\"namespace\":\"ns\",\"name\":\"c\",\"uid\":\"u1\"},"
	                    "\"spec\":{},\"status\":{\"phase\":\"Pending\"}}");
	cJSON *pv_ok = js("{\"spec\":{\"claimRef\":{\"uid\":\"u1\"}}}");
	cJSON *pv_other = js("{\"spec\":{\"claimRef\":{\"uid\":\"u2\"}}}");
	cJSON *pv_none = js("{\"spec\":{}}");
	const char *pv = NULL;
	char err[300];

	(void)state;
	assert_int_equal(ad_claim_volume(bound, NULL, &pv, err, sizeof(err)), 0);
	assert_string_equal(pv, "pv1");
	assert_int_equal(ad_claim_volume(bound, pv_ok, &pv, err, sizeof(err)), 0);
	assert_int_equal(ad_claim_volume(pending, NULL, &pv, err, sizeof(err)), -EAGAIN);
	assert_string_equal(err, "PVC ns/c has non-bound phase (\"Pending\") or empty "
	                         "pvc.Spec.VolumeName (\"\")");
	assert_int_equal(ad_claim_volume(bound, pv_other, &pv, err, sizeof(err)), -EINVAL);
	assert_int_equal(ad_claim_volume(bound, pv_none, &pv, err, sizeof(err)), -EINVAL);
	cJSON_Delete(bound);
	cJSON_Delete(pending);
	cJSON_Delete(pv_ok);
	cJSON_Delete(pv_other);
	cJSON_Delete(pv_none);
}

static void test_pod_volume_claim(void **state)
{
	cJSON *pod = js("{\"metadata\":{\"name\":\"web\",\"uid\":\"pu\"}}");
	cJSON *pvcv = js("{\"name\":\"v\",\"persistentVolumeClaim\":{\"claimName\":\"c1\"}}");
	cJSON *ephv = js("{\"name\":\"scratch\",\"ephemeral\":{\"volumeClaimTemplate\":{}}}");
	cJSON *csiv = js("{\"name\":\"i\",\"csi\":{\"driver\":\"d\"}}");
	cJSON *owned = js("{\"metadata\":{\"ownerReferences\":[{\"uid\":\"x\"},{\"uid\":\"pu\","
	                  "\"controller\":true}]}}");
	cJSON *other =
	        js("{\"metadata\":{\"ownerReferences\":[{\"uid\":\"zz\",\"controller\":true}]}}");
	cJSON *none = js("{\"metadata\":{\"ownerReferences\":[{\"uid\":\"pu\"}]}}");
	char buf[64], tiny[4];
	bool eph = true;

	(void)state;
	assert_int_equal(ad_pod_volume_claim(pod, pvcv, buf, sizeof(buf), &eph), 0);
	assert_string_equal(buf, "c1");
	assert_false(eph);
	assert_int_equal(ad_pod_volume_claim(pod, ephv, buf, sizeof(buf), &eph), 0);
	assert_string_equal(buf, "web-scratch");
	assert_true(eph);
	assert_int_equal(ad_pod_volume_claim(pod, csiv, buf, sizeof(buf), &eph), -ENOENT);
	assert_int_equal(ad_pod_volume_claim(pod, ephv, tiny, sizeof(tiny), &eph), -ENAMETOOLONG);
	assert_true(ad_claim_owned_by_pod(owned, pod));
	assert_false(ad_claim_owned_by_pod(other, pod));
	assert_false(ad_claim_owned_by_pod(none, pod)); /* an owner, but not the controller */
	cJSON_Delete(pod);
	cJSON_Delete(pvcv);
	cJSON_Delete(ephv);
	cJSON_Delete(csiv);
	cJSON_Delete(owned);
	cJSON_Delete(other);
	cJSON_Delete(none);
}

static void test_node_facts(void **state)
{
	cJSON *n = js(
	        "{\"metadata\":{\"annotations\":{\"volumes.kubernetes.io/"
	        "controller-managed-attach-detach\":\"true\"}},"
	        "\"spec\":{\"taints\":[{\"key\":\"node.kubernetes.io/out-of-service\","
	        "\"effect\":\"NoExecute\"}]},"
	        "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}],"
	        "\"volumesInUse\":[\"kubernetes.io/csi/d^h\"],"
	        "\"volumesAttached\":[{\"name\":\"kubernetes.io/csi/d^a\",\"devicePath\":\"\"}]}}");
	cJSON *u = js("{\"metadata\":{\"annotations\":{\"volumes.kubernetes.io/"
	              "controller-managed-attach-detach\":\"false\"}},\"status\":{\"conditions\":"
	              "[{\"type\":\"Ready\",\"status\":\"Unknown\"}]}}");

	(void)state;
	assert_true(ad_node_managed(n));
	assert_true(ad_node_ready(n));
	assert_true(ad_node_out_of_service(n));
	assert_true(ad_node_lists(n, "volumesInUse", "kubernetes.io/csi/d^h"));
	assert_false(ad_node_lists(n, "volumesInUse", "kubernetes.io/csi/d^a"));
	assert_true(ad_node_lists(n, "volumesAttached", "kubernetes.io/csi/d^a"));
	assert_false(ad_node_managed(u));
	assert_false(ad_node_ready(u));
	assert_false(ad_node_out_of_service(u));
	assert_false(ad_node_managed(NULL));
	cJSON_Delete(n);
	cJSON_Delete(u);
}

static void test_bodies(void **state)
{
	char *b = NULL;
	const char *two[] = {"kubernetes.io/csi/d^b", "kubernetes.io/csi/d^a"};

	(void)state;
	assert_int_equal(ad_va_body("csi-x", "drv", "n1", "pv1", &b), 0);
	assert_string_equal(b,
	                    "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"VolumeAttachment\","
	                    "\"metadata\":{\"name\":\"csi-x\"},\"spec\":{\"attacher\":\"drv\","
	                    "\"source\":{\"persistentVolumeName\":\"pv1\"},\"nodeName\":\"n1\"}}");
	free(b);
	assert_int_equal(ad_status_patch(two, 2, &b), 0);
	assert_string_equal(b, "{\"status\":{\"volumesAttached\":[{\"name\":\"kubernetes.io/csi/"
	                       "d^a\",\"devicePath\":\"\"},{\"name\":\"kubernetes.io/csi/d^b\","
	                       "\"devicePath\":\"\"}]}}");
	free(b);
	assert_int_equal(ad_status_patch(NULL, 0, &b), 0);
	assert_string_equal(b, "{\"status\":{\"volumesAttached\":null}}");
	free(b);
}

/* ---- the plan ----------------------------------------------------------------------------- */
#define U1 "kubernetes.io/csi/d^h1"
#define U2 "kubernetes.io/csi/d^h2"

static size_t count(const struct ad_plan *p, enum ad_action_kind k)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n_actions; i++)
		n += p->actions[i].kind == k;
	return n;
}

static const struct ad_desired D1 = {.unique = U1, .pv = "pv1", .driver = "d", .handle = "h1"};

static void test_plan_attach(void **state)
{
	cJSON *node = js("{\"status\":{}}");
	struct ad_node_state ns = {.exists = true, .ready = true, .node = node};
	struct ad_timer *t = NULL;
	size_t nt = 0;
	struct ad_plan p;

	(void)state;
	/* desired, no VolumeAttachment: create */
	assert_int_equal(ad_plan(&ns, &D1, 1, NULL, 0, &t, &nt, 0, &p), 0);
	assert_int_equal(p.n_actions, 1);
	assert_int_equal(p.actions[0].kind, AD_CREATE);
	assert_int_equal(p.n_report, 0);
	assert_false(p.status_changed);
	ad_plan_free(&p);

	/* created, not attached yet: wait, nothing reported */
	struct ad_actual a = {.va = "csi-1", .unique = U1, .pv = "pv1"};
	assert_int_equal(ad_plan(&ns, &D1, 1, &a, 1, &t, &nt, 0, &p), 0);
	assert_int_equal(count(&p, AD_WAIT_ATTACH), 1);
	assert_int_equal(count(&p, AD_CREATE), 0);
	assert_int_equal(p.n_report, 0);
	ad_plan_free(&p);

	/* attached: reported (new), the status changes */
	a.attached = true;
	assert_int_equal(ad_plan(&ns, &D1, 1, &a, 1, &t, &nt, 0, &p), 0);
	assert_int_equal(count(&p, AD_REPORT_NEW), 1);
	assert_int_equal(p.n_report, 1);
	assert_string_equal(p.report[0], U1);
	assert_true(p.status_changed);
	ad_plan_free(&p);
	cJSON_Delete(node);

	/* already in volumesAttached: no change, no new report */
	node = js("{\"status\":{\"volumesAttached\":[{\"name\":\"" U1 "\",\"devicePath\":\"\"}]}}");
	ns.node = node;
	assert_int_equal(ad_plan(&ns, &D1, 1, &a, 1, &t, &nt, 0, &p), 0);
	assert_int_equal(count(&p, AD_REPORT_NEW), 0);
	assert_int_equal(p.n_report, 1);
	assert_false(p.status_changed);
	ad_plan_free(&p);
	assert_int_equal(nt, 0);
	cJSON_Delete(node);
	free(t);
}

static void test_plan_multi_attach(void **state)
{
	cJSON *node = js("{\"status\":{}}");
	struct ad_node_state ns = {.exists = true, .ready = true, .node = node};
	struct ad_desired d = D1;
	struct ad_timer *t = NULL;
	size_t nt = 0;
	struct ad_plan p;

	(void)state;
	d.attached_elsewhere = true;
	assert_int_equal(ad_plan(&ns, &d, 1, NULL, 0, &t, &nt, 0, &p), 0);
	assert_int_equal(count(&p, AD_MULTI_ATTACH), 1);
	assert_int_equal(count(&p, AD_CREATE), 0);
	ad_plan_free(&p);
	/* a ReadWriteMany volume attaches anyway */
	d.multi_attach_allowed = true;
	assert_int_equal(ad_plan(&ns, &d, 1, NULL, 0, &t, &nt, 0, &p), 0);
	assert_int_equal(count(&p, AD_MULTI_ATTACH), 0);
	assert_int_equal(count(&p, AD_CREATE), 1);
	ad_plan_free(&p);
	cJSON_Delete(node);
	free(t);
}

static void test_plan_detach(void **state)
{
	cJSON *mounted = js("{\"status\":{\"volumesInUse\":[\"" U1 "\"],\"volumesAttached\":"
	                    "[{\"name\":\"" U1 "\",\"devicePath\":\"\"}]}}");
	cJSON *unmounted = js("{\"status\":{\"volumesAttached\":[{\"name\":\"" U1
	                      "\",\"devicePath\":\"\"}]}}");
	struct ad_node_state ns = {.exists = true, .ready = true, .node = mounted};
	struct ad_actual a = {.va = "csi-1", .unique = U1, .pv = "pv1", .attached = true};
	struct ad_timer *t = NULL;
	size_t nt = 0;
	struct ad_plan p;
	const uint64_t s = 1000000;

	(void)state;
	/* not desired, still mounted: wait, stays reported, a timer starts */
	assert_int_equal(ad_plan(&ns, NULL, 0, &a, 1, &t, &nt, 10 * s, &p), 0);
	assert_int_equal(count(&p, AD_WAIT_UNMOUNT), 1);
	assert_int_equal(count(&p, AD_DETACH), 0);
	assert_int_equal(p.n_report, 1);
	assert_false(p.status_changed);
	assert_int_equal(nt, 1);
	assert_true(p.recheck_us > 0);
	ad_plan_free(&p);
	/* a healthy node is never force-detached, even after the timeout */
	assert_int_equal(ad_plan(&ns, NULL, 0, &a, 1, &t, &nt, 10 * s + AD_MAX_UNMOUNT_US + s, &p),
	                 0);
	assert_int_equal(count(&p, AD_DETACH), 0);
	ad_plan_free(&p);
	/* unhealthy and timed out: force detach */
	ns.ready = false;
	assert_int_equal(ad_plan(&ns, NULL, 0, &a, 1, &t, &nt, 10 * s + AD_MAX_UNMOUNT_US + s, &p),
	                 0);
	assert_int_equal(count(&p, AD_DETACH), 1);
	assert_int_equal(p.n_report, 0);
	assert_true(p.status_changed);
	ad_plan_free(&p);
	/* ... unless --disable-force-detach-on-timeout */
	ns.disable_force_detach = true;
	assert_int_equal(ad_plan(&ns, NULL, 0, &a, 1, &t, &nt, 10 * s + AD_MAX_UNMOUNT_US + s, &p),
	                 0);
	assert_int_equal(count(&p, AD_DETACH), 0);
	assert_int_equal(p.recheck_us, 0);
	ad_plan_free(&p);
	/* the out-of-service taint detaches at once */
	ns.out_of_service = true;
	assert_int_equal(ad_plan(&ns, NULL, 0, &a, 1, &t, &nt, 11 * s, &p), 0);
	assert_int_equal(count(&p, AD_DETACH), 1);
	ad_plan_free(&p);
	/* unmounted: detach, removed from the status first */
	ns = (struct ad_node_state){.exists = true, .ready = true, .node = unmounted};
	assert_int_equal(ad_plan(&ns, NULL, 0, &a, 1, &t, &nt, 12 * s, &p), 0);
	assert_int_equal(count(&p, AD_DETACH), 1);
	assert_int_equal(p.n_report, 0);
	assert_true(p.status_changed);
	ad_plan_free(&p);
	/* being deleted: nothing more, the timer dropped */
	a.deleting = true;
	assert_int_equal(ad_plan(&ns, NULL, 0, &a, 1, &t, &nt, 13 * s, &p), 0);
	assert_int_equal(p.n_actions, 0);
	assert_int_equal(nt, 0);
	ad_plan_free(&p);
	/* a deleted node: its volumes detach */
	a.deleting = false;
	ns = (struct ad_node_state){.exists = false};
	assert_int_equal(ad_plan(&ns, NULL, 0, &a, 1, &t, &nt, 14 * s, &p), 0);
	assert_int_equal(count(&p, AD_DETACH), 1);
	assert_false(p.status_changed);
	ad_plan_free(&p);
	cJSON_Delete(mounted);
	cJSON_Delete(unmounted);
	free(t);
}

static void test_plan_desired_again(void **state)
{
	cJSON *mounted = js("{\"status\":{\"volumesInUse\":[\"" U1 "\"],\"volumesAttached\":"
	                    "[{\"name\":\"" U1 "\",\"devicePath\":\"\"},{\"name\":\"" U2
	                    "\",\"devicePath\":\"\"}]}}");
	struct ad_node_state ns = {.exists = true, .ready = true, .node = mounted};
	struct ad_actual a = {.va = "csi-1", .unique = U1, .pv = "pv1", .attached = true};
	struct ad_timer *t = NULL;
	size_t nt = 0;
	struct ad_plan p;

	(void)state;
	assert_int_equal(ad_plan(&ns, NULL, 0, &a, 1, &t, &nt, 1, &p), 0);
	assert_int_equal(nt, 1);
	/* U2 is listed without a VolumeAttachment: it leaves the status */
	assert_true(p.status_changed);
	ad_plan_free(&p);
	/* desired again: the timer goes (upstream's ResetDetachRequestTime) */
	assert_int_equal(ad_plan(&ns, &D1, 1, &a, 1, &t, &nt, 2, &p), 0);
	assert_int_equal(nt, 0);
	assert_int_equal(count(&p, AD_CREATE), 0);
	ad_plan_free(&p);
	cJSON_Delete(mounted);
	free(t);
}

/* one timer list serves every node: a sync of another node keeps (and does not restart) the
 * timers of this one, so the force detach still comes 6 minutes after the first wish */
static void test_plan_timers_per_node(void **state)
{
	cJSON *mounted = js("{\"status\":{\"volumesInUse\":[\"" U1 "\"]}}");
	struct ad_node_state a_ns = {.name = "a", .exists = true, .node = mounted};
	struct ad_node_state b_ns = {.name = "b", .exists = true, .ready = true, .node = mounted};
	struct ad_actual a = {.va = "csi-1", .unique = U1, .pv = "pv1", .attached = true};
	struct ad_timer *t = NULL;
	size_t nt = 0;
	struct ad_plan p;

	(void)state;
	assert_int_equal(ad_plan(&a_ns, NULL, 0, &a, 1, &t, &nt, 1000, &p), 0);
	assert_int_equal(count(&p, AD_WAIT_UNMOUNT), 1);
	assert_int_equal(nt, 1);
	assert_string_equal(t[0].node, "a");
	ad_plan_free(&p);
	assert_int_equal(ad_plan(&b_ns, NULL, 0, NULL, 0, &t, &nt, 2000, &p), 0);
	assert_int_equal(nt, 1);
	ad_plan_free(&p);
	assert_int_equal(ad_plan(&a_ns, NULL, 0, &a, 1, &t, &nt, 1000 + AD_MAX_UNMOUNT_US + 1, &p),
	                 0);
	assert_int_equal(count(&p, AD_DETACH), 1);
	ad_plan_free(&p);
	cJSON_Delete(mounted);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_va_name),
	        cmocka_unit_test(test_unique_name),
	        cmocka_unit_test(test_pv_csi),
	        cmocka_unit_test(test_attach_required),
	        cmocka_unit_test(test_multi_attach),
	        cmocka_unit_test(test_pod_terminated),
	        cmocka_unit_test(test_claim_volume),
	        cmocka_unit_test(test_pod_volume_claim),
	        cmocka_unit_test(test_node_facts),
	        cmocka_unit_test(test_bodies),
	        cmocka_unit_test(test_plan_attach),
	        cmocka_unit_test(test_plan_multi_attach),
	        cmocka_unit_test(test_plan_detach),
	        cmocka_unit_test(test_plan_desired_again),
	        cmocka_unit_test(test_plan_timers_per_node),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
