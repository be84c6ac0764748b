/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/bootstrap/bootstrap.c: the bootstrap-token controllers' decisions (bootstrap.h).
 */
#include "workers/bootstrap/bootstrap.h"

#include <errno.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "kube/config.h"
#include "kube/model.h"

int bt_jws_detached(const char *content, size_t content_len, const char *id, const char *secret,
                    size_t secret_len, char *out, size_t outlen)
{
	char header[128], *input = NULL;
	unsigned char key[64], *kp = key, mac[32];
	size_t pos = 0, hlen, klen = secret_len < 32 ? 32 : secret_len;
	int r, n;

	/* the protected header as go-jose writes it (keys sorted); an id is [a-z0-9]{6} */
	n = snprintf(header, sizeof(header), "{\"alg\":\"HS256\",\"kid\":\"%s\"}", id);
	if (n < 0 || (size_t)n >= sizeof(header))
		return -ENOSPC;
	if ((r = kube_base64url_append((const unsigned char *)header, (size_t)n, out, outlen,
	                               &pos)) < 0)
		return r;
	hlen = pos;
	/* signing input: header "." payload, both base64url */
	size_t cap = hlen + 2 + (content_len + 2) / 3 * 4 + 1;
	if (!(input = malloc(cap)))
		return -ENOMEM;
	memcpy(input, out, hlen);
	input[hlen] = '.';
	size_t ipos = hlen + 1;
	if ((r = kube_base64url_append((const unsigned char *)content, content_len, input, cap,
	                               &ipos)) < 0)
		goto out;
	if (klen > sizeof(key) && !(kp = malloc(klen))) {
		r = -ENOMEM;
		goto out;
	}
	memset(kp, 0, klen);
	memcpy(kp, secret, secret_len);
	if (gnutls_hmac_fast(GNUTLS_MAC_SHA256, kp, klen, input, ipos, mac) < 0) {
		r = -EIO;
		goto out;
	}
	if (pos + 2 >= outlen) {
		r = -ENOSPC;
		goto out;
	}
	out[pos++] = '.';
	out[pos++] = '.';
	r = kube_base64url_append(mac, sizeof(mac), out, outlen, &pos);
out:
	if (kp != key) {
		explicit_bzero(kp, klen);
		free(kp);
	} else {
		explicit_bzero(key, sizeof(key));
	}
	free(input);
	return r;
}

static const char *str_at(const cJSON *o, const char *a, const char *b)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);
	if (b)
		v = cJSON_GetObjectItemCaseSensitive(v, b);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool token_secret(const cJSON *s)
{
	const char *type = str_at(s, "type", NULL), *ns = str_at(s, "metadata", "namespace");
	return type && ns && !strcmp(type, BT_SECRET_TYPE) && !strcmp(ns, BT_NAMESPACE);
}

bool bt_is_token_secret(const char *json, size_t len)
{
	cJSON *s = cJSON_ParseWithLength(json, len);
	bool r = s && token_secret(s);
	cJSON_Delete(s);
	return r;
}

/* data[key] of a Secret, base64-decoded (GetData: "" when absent or undecodable). */
static char *secret_data(const cJSON *s, const char *key, size_t *len)
{
	const char *v = str_at(cJSON_GetObjectItemCaseSensitive(s, "data"), key, NULL);
	unsigned char *out = NULL;
	size_t n = 0;

	if (!v || kube_base64_decode(v, strlen(v), &out, &n) < 0) {
		free(out);
		out = (unsigned char *)strdup("");
		n = 0;
	}
	if (len)
		*len = n;
	return (char *)out;
}

static int expiration(const cJSON *s, int64_t now_ns, int64_t *ttl_ns)
{
	size_t n;
	char *exp = secret_data(s, "expiration", &n);
	kube_time_t t;
	int r;

	*ttl_ns = 0;
	if (!exp)
		return -ENOMEM;
	if (!n)
		r = 0; /* no expiration */
	else if (strlen(exp) != n || kube_time_parse(exp, n, &t) < 0)
		r = 1; /* unparseable: treated as expired */
	else if (t - now_ns <= 0)
		r = 1;
	else
		*ttl_ns = t - now_ns, r = 0;
	free(exp);
	return r;
}

int bt_expiration(const char *json, size_t len, int64_t now_ns, int64_t *ttl_ns)
{
	cJSON *s = cJSON_ParseWithLength(json, len);
	int r;

	*ttl_ns = 0;
	if (!cJSON_IsObject(s)) {
		cJSON_Delete(s);
		return -EBADMSG;
	}
	r = expiration(s, now_ns, ttl_ns);
	cJSON_Delete(s);
	return r;
}

/* bootstrap-token-<id>, id [a-z0-9]{6}: the id, or NULL */
static const char *name_id(const char *name)
{
	static const char prefix[] = "bootstrap-token-";
	if (!name || strncmp(name, prefix, sizeof(prefix) - 1) != 0)
		return NULL;
	const char *id = name + sizeof(prefix) - 1;
	if (strlen(id) != 6)
		return NULL;
	for (const char *p = id; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')))
			return NULL;
	return id;
}

int bt_signing_token(const char *json, size_t len, int64_t now_ns, char **id, char **secret,
                     size_t *secret_len)
{
	cJSON *s = cJSON_ParseWithLength(json, len);
	char *tid = NULL, *sec = NULL, *usage = NULL;
	size_t tid_len = 0, sec_len = 0;
	const char *nid;
	int64_t ttl;
	int r = 0;

	*id = *secret = NULL;
	if (!s || !token_secret(s) || !(nid = name_id(str_at(s, "metadata", "name"))))
		goto out;
	if (!(tid = secret_data(s, "token-id", &tid_len)) ||
	    !(sec = secret_data(s, "token-secret", &sec_len)) ||
	    !(usage = secret_data(s, "usage-bootstrap-signing", NULL))) {
		r = -ENOMEM;
		goto out;
	}
	if (!tid_len || strlen(tid) != tid_len || strcmp(tid, nid) != 0 || !sec_len)
		goto out;
	if ((r = expiration(s, now_ns, &ttl)) != 0) {
		r = r < 0 ? r : 0; /* expired: not for signing */
		goto out;
	}
	if (strcmp(usage, "true") != 0)
		goto out;
	*id = tid, *secret = sec, *secret_len = sec_len;
	tid = sec = NULL;
	r = 1;
out:
	free(tid);
	if (sec) {
		explicit_bzero(sec, sec_len);
		free(sec);
	}
	free(usage);
	cJSON_Delete(s);
	return r;
}

int bt_sign_plan(const char *cm_json, size_t len, const struct bt_token *tokens, size_t n,
                 char **body)
{
	cJSON *cm = cJSON_ParseWithLength(cm_json, len), *data, *e, *next;
	const char *content;
	size_t left = 0;
	bool change = false;
	int r = 0;

	*body = NULL;
	if (!cJSON_IsObject(cm)) {
		cJSON_Delete(cm);
		return -EBADMSG;
	}
	data = cJSON_GetObjectItemCaseSensitive(cm, "data");
	if (!(content = str_at(data, "kubeconfig", NULL)))
		goto out; /* no key in the ConfigMap */
	/* count the signatures there; each one recomputed identically is taken off the count */
	cJSON_ArrayForEach(e, data)
	{
		if (e->string && !strncmp(e->string, BT_SIG_PREFIX, strlen(BT_SIG_PREFIX)))
			left++;
	}
	for (size_t i = 0; i < n; i++) {
		char key[128], sig[512];
		bool dup = false;
		for (size_t j = 0; j < i && !dup; j++)
			dup = !strcmp(tokens[j].id, tokens[i].id);
		if (dup)
			continue; /* the first Secret of an id signs */
		snprintf(key, sizeof(key), "%s%s", BT_SIG_PREFIX, tokens[i].id);
		if ((r = bt_jws_detached(content, strlen(content), tokens[i].id, tokens[i].secret,
		                         tokens[i].secret_len, sig, sizeof(sig))) < 0)
			goto out;
		const char *old = str_at(data, key, NULL);
		if (old) {
			left--;
			if (!strcmp(old, sig))
				continue;
		}
		change = true;
		cJSON_DeleteItemFromObjectCaseSensitive(data, key);
		if (!cJSON_AddStringToObject(data, key, sig)) {
			r = -ENOMEM;
			goto out;
		}
	}
	if (left) { /* signatures of tokens that no longer sign */
		change = true;
		for (e = data->child; e; e = next) {
			next = e->next;
			if (!e->string || strncmp(e->string, BT_SIG_PREFIX, strlen(BT_SIG_PREFIX)))
				continue;
			bool keep = false;
			for (size_t i = 0; i < n && !keep; i++)
				keep = !strcmp(e->string + strlen(BT_SIG_PREFIX), tokens[i].id);
			if (!keep)
				cJSON_Delete(cJSON_DetachItemViaPointer(data, e));
		}
	}
	if (change && !(*body = cJSON_PrintUnformatted(cm)))
		r = -ENOMEM;
out:
	cJSON_Delete(cm);
	return r;
}
