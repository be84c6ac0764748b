/* SPDX-License-Identifier: Apache-2.0 */
/* workers/vapstatus/vapstatus.c: see vapstatus.h. */
#include "workers/vapstatus/vapstatus.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kube/config.h"

static const cJSON *get(const cJSON *o, const char *k)
{
	return o ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

static double num(const cJSON *o, const char *k)
{
	const cJSON *v = get(o, k);
	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

bool vap_needs_check(const cJSON *policy)
{
	return num(get(policy, "metadata"), "generation") >
	       num(get(policy, "status"), "observedGeneration");
}

char *vap_status_apply_body(const cJSON *policy, const cJSON *warnings)
{
	const char *name = cJSON_GetStringValue(get(get(policy, "metadata"), "name"));
	cJSON *o, *md, *st, *tc, *w;
	char *s = NULL;

	if (!name || !*name)
		return NULL;
	if (!(o = cJSON_CreateObject()))
		return NULL;
	if (!cJSON_AddStringToObject(o, "apiVersion", "admissionregistration.k8s.io/v1") ||
	    !cJSON_AddStringToObject(o, "kind", "ValidatingAdmissionPolicy") ||
	    !(md = cJSON_AddObjectToObject(o, "metadata")) ||
	    !cJSON_AddStringToObject(md, "name", name) ||
	    !(st = cJSON_AddObjectToObject(o, "status")) ||
	    !cJSON_AddNumberToObject(st, "observedGeneration",
	                             num(get(policy, "metadata"), "generation")) ||
	    !(tc = cJSON_AddObjectToObject(st, "typeChecking")))
		goto out;
	if (cJSON_IsArray(warnings) && cJSON_GetArraySize(warnings) > 0) {
		const cJSON *it;
		cJSON *arr = cJSON_AddArrayToObject(tc, "expressionWarnings");
		if (!arr)
			goto out;
		cJSON_ArrayForEach(it, warnings)
		{
			const char *f = cJSON_GetStringValue(get(it, "fieldRef"));
			const char *m = cJSON_GetStringValue(get(it, "warning"));
			if (!(w = cJSON_CreateObject()))
				goto out;
			cJSON_AddItemToArray(arr, w);
			if (!cJSON_AddStringToObject(w, "fieldRef", f ? f : "") ||
			    !cJSON_AddStringToObject(w, "warning", m ? m : ""))
				goto out;
		}
	}
	s = cJSON_PrintUnformatted(o);
out:
	cJSON_Delete(o);
	return s;
}

static int add_data(cJSON *o, const char *k, const unsigned char *p, size_t n)
{
	char *b = kube_base64_encode(p, n);
	int r = 0;

	if (!b)
		return -ENOMEM;
	if (!cJSON_AddStringToObject(o, k, b))
		r = -ENOMEM;
	free(b);
	return r;
}

#define ADD_STR(o, k, v)                                                                           \
	do {                                                                                       \
		if ((v) && !cJSON_AddStringToObject((o), (k), (v)))                                \
			goto nomem;                                                                \
	} while (0)

int vap_kubeconfig(const struct kube_config *c, char **ret)
{
	cJSON *o = NULL, *arr, *item, *cl, *us, *ctx;

	*ret = NULL;
	if (!c || !c->server)
		return -EINVAL;
	if (c->exec || c->username || c->password)
		return -ENOTSUP;
	if (!(o = cJSON_CreateObject()))
		return -ENOMEM;
	ADD_STR(o, "apiVersion", "v1");
	ADD_STR(o, "kind", "Config");
	ADD_STR(o, "current-context", "kcmd");
	if (!(arr = cJSON_AddArrayToObject(o, "clusters")) || !(item = cJSON_CreateObject()))
		goto nomem;
	cJSON_AddItemToArray(arr, item);
	ADD_STR(item, "name", "kcmd");
	if (!(cl = cJSON_AddObjectToObject(item, "cluster")))
		goto nomem;
	ADD_STR(cl, "server", c->server);
	ADD_STR(cl, "tls-server-name", c->tls_server_name);
	ADD_STR(cl, "proxy-url", c->proxy_url);
	if (c->insecure_skip_tls_verify &&
	    !cJSON_AddBoolToObject(cl, "insecure-skip-tls-verify", 1))
		goto nomem;
	ADD_STR(cl, "certificate-authority", c->ca_file);
	if (c->ca_data &&
	    add_data(cl, "certificate-authority-data", c->ca_data, c->ca_data_len) < 0)
		goto nomem;
	if (!(arr = cJSON_AddArrayToObject(o, "users")) || !(item = cJSON_CreateObject()))
		goto nomem;
	cJSON_AddItemToArray(arr, item);
	ADD_STR(item, "name", "kcmd");
	if (!(us = cJSON_AddObjectToObject(item, "user")))
		goto nomem;
	ADD_STR(us, "client-certificate", c->client_cert_file);
	ADD_STR(us, "client-key", c->client_key_file);
	if (c->client_cert_data && add_data(us, "client-certificate-data", c->client_cert_data,
	                                    c->client_cert_data_len) < 0)
		goto nomem;
	if (c->client_key_data &&
	    add_data(us, "client-key-data", c->client_key_data, c->client_key_data_len) < 0)
		goto nomem;
	ADD_STR(us, "token", c->token);
	ADD_STR(us, "tokenFile", c->token_file);
	if (!(arr = cJSON_AddArrayToObject(o, "contexts")) || !(item = cJSON_CreateObject()))
		goto nomem;
	cJSON_AddItemToArray(arr, item);
	ADD_STR(item, "name", "kcmd");
	if (!(ctx = cJSON_AddObjectToObject(item, "context")))
		goto nomem;
	ADD_STR(ctx, "cluster", "kcmd");
	ADD_STR(ctx, "user", "kcmd");
	*ret = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return *ret ? 0 : -ENOMEM;
nomem:
	cJSON_Delete(o);
	return -ENOMEM;
}
