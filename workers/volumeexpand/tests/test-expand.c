/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/volumeexpand/tests/test-expand.c: the expander's decisions (expand.h), with upstream's
 * expand_controller_test.go TestSyncHandler cases (no PV binding, an in-tree aws-ebs PV under
 * migration, a pre-resize-capacity annotation, a CSI driver without migration path), the
 * update handler's rule and the SetClaimResizer patch body.
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

#include "workers/volumeexpand/expand.h"

/* getFakePersistentVolumeClaim(name, volumeName, statusSize, requestSize, uid), Bound */
static cJSON *pvc(const char *name, const char *vol, const char *status, const char *req,
                  const char *uid)
{
	char buf[1024];

	snprintf(buf, sizeof(buf),
	         "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"%s\","
	         "\"resourceVersion\":\"42\"},"
	         "\"spec\":{\"volumeName\":\"%s\",\"resources\":{\"requests\":{\"storage\":\"%s\"}}"
	         "},"
	         "\"status\":{\"phase\":\"Bound\",\"capacity\":{\"storage\":\"%s\"}}}",
	         name, uid, vol, req, status);
	cJSON *o = cJSON_Parse(buf);
	assert_non_null(o);
	return o;
}

/* getFakePersistentVolume(name, plugin, size, pvcUID): "csi" in the plugin name gives a CSI
 * source with that driver, anything else an awsElasticBlockStore source */
static cJSON *pv(const char *name, const char *plugin, const char *size, const char *uid,
                 const char *extra_ann)
{
	char buf[1024], src[256];

	if (strstr(plugin, "csi"))
		snprintf(src, sizeof(src), "\"csi\":{\"driver\":\"%s\",\"volumeHandle\":\"%s\"}",
		         plugin, name);
	else if (strcmp(plugin, "flex") == 0)
		snprintf(src, sizeof(src), "\"flexVolume\":{\"driver\":\"example/lvm\"}");
	else if (strcmp(plugin, "nfs") == 0)
		snprintf(src, sizeof(src), "\"nfs\":{\"server\":\"s\",\"path\":\"/x\"}");
	else
		snprintf(src, sizeof(src),
		         "\"awsElasticBlockStore\":{\"volumeID\":\"%s\",\"fsType\":\"ext4\"}",
		         name);
	snprintf(buf, sizeof(buf),
	         "{\"metadata\":{\"name\":\"%s\"%s},"
	         "\"spec\":{%s,\"claimRef\":{\"namespace\":\"default\",\"uid\":\"%s\"},"
	         "\"capacity\":{\"storage\":\"%s\"}}}",
	         name, extra_ann ? extra_ann : "", src, uid, size);
	cJSON *o = cJSON_Parse(buf);
	assert_non_null(o);
	return o;
}

static enum ve_verdict decide(cJSON *c, cJSON *v, struct ve_decision *d)
{
	ve_decide(c, v, d);
	cJSON_Delete(c);
	cJSON_Delete(v);
	return d->verdict;
}

/* "when pvc has no PV binding": hasError. Upstream's error there is the PV GET's (no volumeName,
 * the plug-in's get_pv); here the PV found is bound to another claim, or to none. */
static void test_no_binding(void **st)
{
	struct ve_decision d;
	(void)st;
	assert_int_equal(decide(pvc("no-pv-pvc", "vol-1", "1Gi", "1Gi", ""),
	                        pv("vol-1", "kubernetes.io/aws-ebs", "1Gi", "other", NULL), &d),
	                 VE_NOT_BOUND);
	/* claimRef of another claim (uid) or namespace */
	assert_int_equal(decide(pvc("p", "vol", "1Gi", "2Gi", "a"),
	                        pv("vol", "kubernetes.io/aws-ebs", "1Gi", "b", NULL), &d),
	                 VE_NOT_BOUND);
	cJSON *v = pv("vol", "kubernetes.io/aws-ebs", "1Gi", "a", NULL);
	cJSON_DeleteItemFromObject(cJSON_GetObjectItem(v, "spec"), "claimRef");
	assert_int_equal(decide(pvc("p", "vol", "1Gi", "2Gi", "a"), v, &d), VE_NOT_BOUND);
}

/* "when pvc and pv has everything for in-tree plugin": the resizer annotation ebs.csi.aws.com */
static void test_in_tree_migrated(void **st)
{
	struct ve_decision d;
	(void)st;
	assert_int_equal(decide(pvc("good-pvc", "vol-3", "1Gi", "2Gi", "good-pvc-vol-3"),
	                        pv("vol-3", "kubernetes.io/aws-ebs", "1Gi", "good-pvc-vol-3", NULL),
	                        &d),
	                 VE_MIGRATED);
	assert_string_equal(d.plugin, "kubernetes.io/aws-ebs");
	assert_string_equal(d.driver, "ebs.csi.aws.com");
}

/* "if pv has pre-resize capacity annotation, generate expand operation should not be called":
 * no growth, but the annotation: the migrated path still runs (no expansion call) */
static void test_pre_resize_annotation(void **st)
{
	struct ve_decision d;
	(void)st;
	assert_int_equal(decide(pvc("good-pvc", "vol-4", "2Gi", "2Gi", "good-pvc-vol-4"),
	                        pv("vol-4", "kubernetes.io/aws-ebs", "2Gi", "good-pvc-vol-4",
	                           ",\"annotations\":{\"" VE_ANN_PRE_RESIZE "\":\"1Gi\"}"),
	                        &d),
	                 VE_MIGRATED);
	/* without it: nothing to do */
	assert_int_equal(decide(pvc("good-pvc", "vol-4", "2Gi", "2Gi", "u"),
	                        pv("vol-4", "kubernetes.io/aws-ebs", "2Gi", "u", NULL), &d),
	                 VE_SKIP);
	/* a smaller request (shrinking): nothing */
	assert_int_equal(decide(pvc("p", "v", "2Gi", "1Gi", "u"),
	                        pv("v", "kubernetes.io/aws-ebs", "2Gi", "u", NULL), &d),
	                 VE_SKIP);
	/* equal sizes written differently compare equal */
	assert_int_equal(decide(pvc("p", "v", "1024Mi", "1Gi", "u"),
	                        pv("v", "kubernetes.io/aws-ebs", "1Gi", "u", NULL), &d),
	                 VE_SKIP);
}

/* "for csi plugin without migration path": no error, no expansion, no annotation */
static void test_csi_no_migration(void **st)
{
	struct ve_decision d;
	(void)st;
	assert_int_equal(decide(pvc("ceph-csi-pvc", "vol-5", "1Gi", "2Gi", "ceph-csi-pvc-vol-6"),
	                        pv("vol-5", "com.csi.ceph", "1Gi", "ceph-csi-pvc-vol-6", NULL), &d),
	                 VE_EXTERNAL);
	/* a CSI PV of a migration target driver is still native CSI */
	assert_int_equal(decide(pvc("p", "v", "1Gi", "2Gi", "u"),
	                        pv("v", "ebs.csi.aws.com", "1Gi", "u", NULL), &d),
	                 VE_EXTERNAL);
	assert_int_equal(
	        decide(pvc("p", "v", "1Gi", "2Gi", "u"), pv("v", "nfs", "1Gi", "u", NULL), &d),
	        VE_EXTERNAL);
	cJSON *c = pvc("p", "v", "1Gi", "2Gi", "u"), *v = pv("v", "flex", "1Gi", "u", NULL);
	ve_decide(c, v, &d);
	assert_int_equal(d.verdict, VE_FLEX);
	assert_string_equal(d.driver, "example/lvm");
	cJSON_Delete(c);
	cJSON_Delete(v);
}

static void test_migration_table(void **st)
{
	static const char *const cases[][3] = {
	        {"gcePersistentDisk", "kubernetes.io/gce-pd", "pd.csi.storage.gke.io"},
	        {"cinder", "kubernetes.io/cinder", "cinder.csi.openstack.org"},
	        {"azureDisk", "kubernetes.io/azure-disk", "disk.csi.azure.com"},
	        {"azureFile", "kubernetes.io/azure-file", "file.csi.azure.com"},
	        {"vsphereVolume", "kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com"},
	        {"portworxVolume", "kubernetes.io/portworx-volume", "pxd.portworx.com"},
	};
	(void)st;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[256];
		const char *p = NULL, *d = NULL;

		snprintf(buf, sizeof(buf), "{\"spec\":{\"%s\":{}}}", cases[i][0]);
		cJSON *v = cJSON_Parse(buf);
		assert_true(ve_migrated_plugin(v, &p, &d));
		assert_string_equal(p, cases[i][1]);
		assert_string_equal(d, cases[i][2]);
		cJSON_Delete(v);
	}
	cJSON *v = cJSON_Parse("{\"spec\":{\"hostPath\":{\"path\":\"/x\"}}}");
	const char *p, *d;
	assert_false(ve_migrated_plugin(v, &p, &d));
	cJSON_Delete(v);
}

static void test_handlers(void **st)
{
	cJSON *a = pvc("p", "v", "1Gi", "1Gi", "u"), *b = pvc("p", "v", "1Gi", "2Gi", "u");
	cJSON *c = pvc("p", "v", "2Gi", "2Gi", "u");
	(void)st;
	assert_true(ve_pvc_bound(a));
	assert_true(ve_update_wants(a, b));  /* request grew */
	assert_true(ve_update_wants(b, c));  /* capacity grew */
	assert_false(ve_update_wants(b, b)); /* nothing grew */
	assert_false(ve_update_wants(c, a)); /* shrank */
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(a, "status"), "phase",
	                          cJSON_CreateString("Pending"));
	assert_false(ve_pvc_bound(a));
	cJSON_Delete(a);
	cJSON_Delete(b);
	cJSON_Delete(c);
}

/* quantities: the grew-or-not rule on the requested size, across suffixes and forms */
static void test_quantities(void **st)
{
	static const struct {
		const char *from, *to;
		bool grew;
	} cases[] = {
	        {"1Gi", "1.5Gi", true},  {"1Gi", "1073741824", false}, {"1G", "1e9", false},
	        {"1500M", "2G", true},   {"2G", "1500M", false},       {"1Ki", "1025", true},
	        {"1", "1001m", true},    {"1E", "1Ei", true},          {"0.5Gi", "512Mi", false},
	        {"100Mi", "1E3", false},
	};
	(void)st;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *a = pvc("p", "v", "1Gi", cases[i].from, "u");
		cJSON *b = pvc("p", "v", "1Gi", cases[i].to, "u");

		if (ve_update_wants(a, b) != cases[i].grew)
			fail_msg("%s -> %s: grew %d", cases[i].from, cases[i].to, !cases[i].grew);
		cJSON_Delete(a);
		cJSON_Delete(b);
	}
}

static void test_resizer_patch(void **st)
{
	cJSON *c = pvc("p", "v", "1Gi", "2Gi", "u");
	char *body = NULL;
	(void)st;
	assert_int_equal(ve_resizer_patch(c, "ebs.csi.aws.com", &body), 0);
	assert_string_equal(body, "{\"metadata\":{\"annotations\":{\"" VE_ANN_RESIZER
	                          "\":\"ebs.csi.aws.com\"},\"resourceVersion\":\"42\"}}");
	free(body);
	/* setResizer: an equal annotation is left out, the resourceVersion check stays */
	cJSON *anns = cJSON_AddObjectToObject(cJSON_GetObjectItem(c, "metadata"), "annotations");
	cJSON_AddStringToObject(anns, VE_ANN_RESIZER, "ebs.csi.aws.com");
	assert_int_equal(ve_resizer_patch(c, "ebs.csi.aws.com", &body), 0);
	assert_string_equal(body, "{\"metadata\":{\"resourceVersion\":\"42\"}}");
	free(body);
	cJSON_Delete(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_no_binding),
	        cmocka_unit_test(test_in_tree_migrated),
	        cmocka_unit_test(test_pre_resize_annotation),
	        cmocka_unit_test(test_csi_no_migration),
	        cmocka_unit_test(test_migration_table),
	        cmocka_unit_test(test_handlers),
	        cmocka_unit_test(test_quantities),
	        cmocka_unit_test(test_resizer_patch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
