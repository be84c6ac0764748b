/* SPDX-License-Identifier: Apache-2.0 */
/* workers/ctbpublisher/ctb.c: the ClusterTrustBundle publisher's decisions and bodies
 * (ctb.h). */
#include "workers/ctbpublisher/ctb.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

void ctb_bundle_name(const char *signer, const char *ca, size_t ca_len, char out[static 128])
{
	unsigned char sum[32] = {0};
	size_t n = 0;

	for (const char *p = signer; *p && n < 128 - 26; p++)
		out[n++] = *p == '/' ? ':' : *p;
	out[n++] = ':';
	gnutls_hash_fast(GNUTLS_DIG_SHA256, ca, ca_len, sum);
	for (int i = 0; i < 12; i++)
		n += (size_t)snprintf(out + n, 128 - n, "%02x", sum[i]);
	out[n] = 0;
}

static int print(cJSON *o, char **ret)
{
	*ret = o ? cJSON_PrintUnformatted(o) : NULL;
	cJSON_Delete(o);
	return *ret ? 0 : -ENOMEM;
}

int ctb_create_body(const char *name, const char *signer, const char *ca, char **ret)
{
	cJSON *o = cJSON_CreateObject(), *md, *spec;

	*ret = NULL;
	if (!o || !cJSON_AddStringToObject(o, "apiVersion", "certificates.k8s.io/v1") ||
	    !cJSON_AddStringToObject(o, "kind", "ClusterTrustBundle") ||
	    !(md = cJSON_AddObjectToObject(o, "metadata")) ||
	    !cJSON_AddStringToObject(md, "name", name) ||
	    !(spec = cJSON_AddObjectToObject(o, "spec")) ||
	    !cJSON_AddStringToObject(spec, "signerName", signer) ||
	    !cJSON_AddStringToObject(spec, "trustBundle", ca)) {
		cJSON_Delete(o);
		return -ENOMEM;
	}
	return print(o, ret);
}

int ctb_facts(const char *json, size_t len, const char *ca, struct ctb_facts *f)
{
	cJSON *o = cJSON_ParseWithLength(json, len);
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(o, "metadata"), "name");
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(o, "spec");
	const cJSON *signer = cJSON_GetObjectItemCaseSensitive(spec, "signerName");
	const cJSON *bundle = cJSON_GetObjectItemCaseSensitive(spec, "trustBundle");

	memset(f, 0, sizeof(*f));
	if (!cJSON_IsObject(o) || !cJSON_IsString(name)) {
		cJSON_Delete(o);
		return -EBADMSG;
	}
	snprintf(f->name, sizeof(f->name), "%s", name->valuestring);
	snprintf(f->signer, sizeof(f->signer), "%s",
	         cJSON_IsString(signer) ? signer->valuestring : "");
	f->same_bundle = cJSON_IsString(bundle) && !strcmp(bundle->valuestring, ca);
	cJSON_Delete(o);
	return 0;
}

int ctb_update_body(const char *json, size_t len, const char *ca, char **ret)
{
	cJSON *o = cJSON_ParseWithLength(json, len), *spec;

	*ret = NULL;
	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		return -EBADMSG;
	}
	spec = cJSON_GetObjectItemCaseSensitive(o, "spec");
	if (!cJSON_IsObject(spec)) {
		cJSON_DeleteItemFromObjectCaseSensitive(o, "spec");
		spec = cJSON_AddObjectToObject(o, "spec");
	}
	cJSON_DeleteItemFromObjectCaseSensitive(spec, "trustBundle");
	if (!spec || !cJSON_AddStringToObject(spec, "trustBundle", ca)) {
		cJSON_Delete(o);
		return -ENOMEM;
	}
	return print(o, ret);
}

/* ---- metrics -------------------------------------------------------------------------------- */
static const struct kcmd_metric_label ctb_code[] = {{"code", NULL}};
static const double ctb_buckets[] = {0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128,
                                     0.256, 0.512, 1.024, 2.048, 4.096, 8.192, 16.384};

const struct kcmd_metric ctb_metric_decl[CTB_M_N] = {
        [CTB_M_DURATION] = {.name = "clustertrustbundle_publisher_sync_duration_seconds",
                            .help = "The time it took to sync a cluster trust bundle.",
                            .type = KCMD_METRIC_HISTOGRAM,
                            .stability = KCMD_METRIC_ALPHA,
                            .labels = ctb_code,
                            .n_labels = 1,
                            .buckets = ctb_buckets,
                            .n_buckets = sizeof(ctb_buckets) / sizeof(ctb_buckets[0]),
                            .max_series = CTB_METRIC_SERIES},
        [CTB_M_SYNCS] = {.name = "clustertrustbundle_publisher_sync_total",
                         .help = "Number of syncs that occurred in cluster trust bundle "
                                 "publisher.",
                         .type = KCMD_METRIC_COUNTER,
                         .stability = KCMD_METRIC_ALPHA,
                         .labels = ctb_code,
                         .n_labels = 1,
                         .max_series = CTB_METRIC_SERIES},
};
