/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/volumeexpand/expand.c: the decisions of kcm's persistentvolume-expander-controller
 * (expand.h).
 */
#include "workers/volumeexpand/expand.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kube/quantity.h"

static const cJSON *path(const cJSON *o, const char *a, const char *b, const char *c)
{
	const char *keys[] = {a, b, c};

	for (size_t i = 0; i < 3 && keys[i] && o; i++)
		o = cJSON_GetObjectItemCaseSensitive(o, keys[i]);
	return o;
}

static const char *str(const cJSON *o)
{
	return cJSON_IsString(o) ? o->valuestring : NULL;
}

/* a quantity field; absent or not a quantity: zero (Go's zero Quantity) */
static __int128 qty(const cJSON *o)
{
	return kube_quantity_nano_or_zero(str(o));
}

static __int128 request(const cJSON *pvc)
{
	return qty(cJSON_GetObjectItemCaseSensitive(path(pvc, "spec", "resources", "requests"),
	                                            "storage"));
}

static __int128 capacity(const cJSON *pvc)
{
	return qty(path(pvc, "status", "capacity", "storage"));
}

bool ve_pvc_bound(const cJSON *pvc)
{
	const char *p = str(path(pvc, "status", "phase", NULL));

	return p && strcmp(p, "Bound") == 0;
}

bool ve_update_wants(const cJSON *old_pvc, const cJSON *new_pvc)
{
	return request(new_pvc) > request(old_pvc) || capacity(new_pvc) > capacity(old_pvc);
}

static const struct {
	const char *source, *plugin, *driver;
} migrated[] = {
        {"gcePersistentDisk", "kubernetes.io/gce-pd", "pd.csi.storage.gke.io"},
        {"awsElasticBlockStore", "kubernetes.io/aws-ebs", "ebs.csi.aws.com"},
        {"cinder", "kubernetes.io/cinder", "cinder.csi.openstack.org"},
        {"azureDisk", "kubernetes.io/azure-disk", "disk.csi.azure.com"},
        {"azureFile", "kubernetes.io/azure-file", "file.csi.azure.com"},
        {"vsphereVolume", "kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com"},
        {"portworxVolume", "kubernetes.io/portworx-volume", "pxd.portworx.com"},
};

bool ve_migrated_plugin(const cJSON *pv, const char **ret_plugin, const char **ret_driver)
{
	const cJSON *spec = path(pv, "spec", NULL, NULL);

	for (size_t i = 0; i < sizeof(migrated) / sizeof(migrated[0]); i++) {
		const cJSON *src = cJSON_GetObjectItemCaseSensitive(spec, migrated[i].source);

		if (cJSON_IsObject(src)) {
			*ret_plugin = migrated[i].plugin;
			*ret_driver = migrated[i].driver;
			return true;
		}
	}
	return false;
}

void ve_decide(const cJSON *pvc, const cJSON *pv, struct ve_decision *ret)
{
	const cJSON *ref = path(pv, "spec", "claimRef", NULL);
	const char *pvc_ns = str(path(pvc, "metadata", "namespace", NULL));
	const char *pvc_uid = str(path(pvc, "metadata", "uid", NULL));
	const char *ref_ns = str(cJSON_GetObjectItemCaseSensitive(ref, "namespace"));
	const char *ref_uid = str(cJSON_GetObjectItemCaseSensitive(ref, "uid"));
	const cJSON *anns = path(pv, "metadata", "annotations", NULL);
	const cJSON *flex;

	*ret = (struct ve_decision){.verdict = VE_SKIP};
	if (!cJSON_IsObject(ref) || strcmp(pvc_ns ? pvc_ns : "", ref_ns ? ref_ns : "") != 0 ||
	    strcmp(pvc_uid ? pvc_uid : "", ref_uid ? ref_uid : "") != 0) {
		ret->verdict = VE_NOT_BOUND;
		return;
	}
	if (request(pvc) <= capacity(pvc) &&
	    !cJSON_GetObjectItemCaseSensitive(anns, VE_ANN_PRE_RESIZE))
		return;
	if (ve_migrated_plugin(pv, &ret->plugin, &ret->driver)) {
		ret->verdict = VE_MIGRATED;
		return;
	}
	flex = path(pv, "spec", "flexVolume", NULL);
	if (cJSON_IsObject(flex)) {
		ret->verdict = VE_FLEX;
		ret->driver = str(cJSON_GetObjectItemCaseSensitive(flex, "driver"));
		return;
	}
	ret->verdict = VE_EXTERNAL;
}

int ve_resizer_patch(const cJSON *pvc, const char *resizer, char **ret_body)
{
	const char *cur = str(path(pvc, "metadata", "annotations", VE_ANN_RESIZER));
	const char *rv = str(path(pvc, "metadata", "resourceVersion", NULL));
	cJSON *root = cJSON_CreateObject(), *md = cJSON_AddObjectToObject(root, "metadata");
	char *body = NULL;

	if (md && (!cur || strcmp(cur, resizer) != 0)) {
		cJSON *a = cJSON_AddObjectToObject(md, "annotations");

		if (!a || !cJSON_AddStringToObject(a, VE_ANN_RESIZER, resizer))
			md = NULL;
	}
	if (md && cJSON_AddStringToObject(md, "resourceVersion", rv ? rv : ""))
		body = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (!body)
		return -ENOMEM;
	*ret_body = body;
	return 0;
}
