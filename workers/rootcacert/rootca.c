/* SPDX-License-Identifier: Apache-2.0 */
/* workers/rootcacert/rootca.c: the root CA publisher's pure decisions and bodies (rootca.h). */
#include "workers/rootcacert/rootca.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <gnutls/x509.h>

#include "kube/config.h"

static int print(cJSON *o, char **ret)
{
	char *s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!s)
		return -ENOMEM;
	*ret = s;
	return 0;
}

int rc_create_body(const char *ca, char **ret)
{
	cJSON *o = cJSON_CreateObject(), *md, *an, *data;

	*ret = NULL;
	if (!o || !cJSON_AddStringToObject(o, "apiVersion", "v1") ||
	    !cJSON_AddStringToObject(o, "kind", "ConfigMap") ||
	    !(md = cJSON_AddObjectToObject(o, "metadata")) ||
	    !cJSON_AddStringToObject(md, "name", RC_CONFIGMAP) ||
	    !(an = cJSON_AddObjectToObject(md, "annotations")) ||
	    !cJSON_AddStringToObject(an, RC_ANNOTATION, RC_DESCRIPTION) ||
	    !(data = cJSON_AddObjectToObject(o, "data")) ||
	    !cJSON_AddStringToObject(data, RC_KEY, ca)) {
		cJSON_Delete(o);
		return -ENOMEM;
	}
	return print(o, ret);
}

/* reflect.DeepEqual(cm.Data, {"ca.crt": ca}): exactly one key, that one, that value */
static bool data_equal(const cJSON *data, const char *ca)
{
	const cJSON *v;

	if (!cJSON_IsObject(data) || cJSON_GetArraySize(data) != 1)
		return false;
	v = cJSON_GetObjectItemCaseSensitive(data, RC_KEY);
	return cJSON_IsString(v) && strcmp(v->valuestring, ca) == 0;
}

int rc_update_body(const char *json, size_t len, const char *ca, char **ret)
{
	cJSON *o = cJSON_ParseWithLength(json, len), *md, *an, *data;
	const cJSON *desc;

	*ret = NULL;
	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		return -EBADMSG;
	}
	md = cJSON_GetObjectItemCaseSensitive(o, "metadata");
	an = cJSON_GetObjectItemCaseSensitive(md, "annotations");
	desc = cJSON_GetObjectItemCaseSensitive(an, RC_ANNOTATION);
	if (data_equal(cJSON_GetObjectItemCaseSensitive(o, "data"), ca) && cJSON_IsString(desc) &&
	    desc->valuestring[0]) {
		cJSON_Delete(o);
		return 0;
	}
	if (!cJSON_IsObject(md)) {
		cJSON_DeleteItemFromObjectCaseSensitive(o, "metadata");
		if (!(md = cJSON_AddObjectToObject(o, "metadata")))
			goto nomem;
	}
	if (!cJSON_IsObject(an)) {
		cJSON_DeleteItemFromObjectCaseSensitive(md, "annotations");
		if (!(an = cJSON_AddObjectToObject(md, "annotations")))
			goto nomem;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(an, RC_ANNOTATION);
	if (!cJSON_AddStringToObject(an, RC_ANNOTATION, RC_DESCRIPTION))
		goto nomem;
	cJSON_DeleteItemFromObjectCaseSensitive(o, "data");
	if (!(data = cJSON_AddObjectToObject(o, "data")) ||
	    !cJSON_AddStringToObject(data, RC_KEY, ca))
		goto nomem;
	return print(o, ret);
nomem:
	cJSON_Delete(o);
	return -ENOMEM;
}

int rc_create_result(int err)
{
	if (err == 0 || err == -ENOENT || err == -ESHUTDOWN)
		return 0;
	return err;
}

bool rc_namespace_update_wanted(const char *phase)
{
	return phase && strcmp(phase, "Active") == 0;
}

int rc_check_pem(const char *data, size_t len, char *err, size_t errlen)
{
	gnutls_x509_crt_t *crts = NULL;
	unsigned n = 0;
	gnutls_datum_t d = {.data = (unsigned char *)data, .size = (unsigned)len};
	int r;

	if (!data || !len || !memmem(data, len, "-----BEGIN CERTIFICATE-----", 27)) {
		snprintf(err, errlen, "data does not contain any valid RSA or ECDSA certificates");
		return -EINVAL;
	}
	r = gnutls_x509_crt_list_import2(&crts, &n, &d, GNUTLS_X509_FMT_PEM, 0);
	if (r < 0 || n == 0) {
		snprintf(err, errlen, "%s", r < 0 ? gnutls_strerror(r) : "no certificate");
		return -EINVAL;
	}
	for (unsigned i = 0; i < n; i++)
		gnutls_x509_crt_deinit(crts[i]);
	gnutls_free(crts);
	return 0;
}

static const double rc_buckets[] = {0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128,
                                    0.256, 0.512, 1.024, 2.048, 4.096, 8.192, 16.384};
static const struct kcmd_metric_label rc_code[] = {{"code", NULL}};
#define RC_HELP "Number of namespace syncs happened in root ca cert publisher."

const struct kcmd_metric rc_metric_decl[RC_M_N] = {
        [RC_M_DURATION] = {.name = "root_ca_cert_publisher_sync_duration_seconds",
                           .help = RC_HELP,
                           .type = KCMD_METRIC_HISTOGRAM,
                           .stability = KCMD_METRIC_ALPHA,
                           .labels = rc_code,
                           .n_labels = 1,
                           .buckets = rc_buckets,
                           .n_buckets = sizeof(rc_buckets) / sizeof(rc_buckets[0]),
                           .max_series = RC_METRIC_SERIES},
        [RC_M_SYNCS] = {.name = "root_ca_cert_publisher_sync_total",
                        .help = RC_HELP,
                        .type = KCMD_METRIC_COUNTER,
                        .stability = KCMD_METRIC_ALPHA,
                        .labels = rc_code,
                        .n_labels = 1,
                        .max_series = RC_METRIC_SERIES},
};

int rc_metrics_code(int err, int http_code)
{
	if (err == 0)
		return 200;
	return http_code > 0 ? http_code : 500;
}

void rc_metrics_observe(struct kcmd_metrics *m, int code, uint64_t duration_ns)
{
	char c[16];

	if (!m || code <= 0)
		return;
	snprintf(c, sizeof(c), "%d", code);
	kcmd_metric_inc(m, RC_M_SYNCS, (const char *[]){c});
	kcmd_metric_observe(m, RC_M_DURATION, (const char *[]){c}, (double)duration_ns / 1e9);
}

int rc_load_root_ca(const char *file, const struct kube_config *kcfg, char **ret, char *err,
                    size_t errlen)
{
	*ret = NULL;
	if (file && *file) {
		FILE *f = fopen(file, "re");
		char *buf = NULL;
		size_t len = 0;
		int r;

		if (!f) {
			r = -errno;
			snprintf(err, errlen, "error parsing root-ca-file at %s: open %s: %s", file,
			         file, strerror(errno));
			return r;
		}
		FILE *m = open_memstream(&buf, &len);
		char chunk[4096];
		size_t n;
		while (m && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
			fwrite(chunk, 1, n, m);
		fclose(f);
		if (!m || fclose(m) != 0) {
			free(buf);
			snprintf(err, errlen, "error parsing root-ca-file at %s: out of memory",
			         file);
			return -ENOMEM;
		}
		char why[200];
		if ((r = rc_check_pem(buf, len, why, sizeof(why))) < 0) {
			snprintf(err, errlen, "error parsing root-ca-file at %s: %s", file, why);
			free(buf);
			return r;
		}
		*ret = buf;
		return 0;
	}
	size_t n = kcfg && kcfg->ca_data ? kcfg->ca_data_len : 0;
	if (!(*ret = malloc(n + 1)))
		return -ENOMEM;
	if (n)
		memcpy(*ret, kcfg->ca_data, n);
	(*ret)[n] = 0;
	return 0;
}
