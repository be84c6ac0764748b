/* SPDX-License-Identifier: Apache-2.0 */
/* workers/satoken/satoken.c: the token controller's key, token, Secret facts and bodies
 * (satoken.h). */
#include "workers/satoken/satoken.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <gnutls/abstract.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

#include "kube/config.h"

struct st_key {
	gnutls_privkey_t priv;
	gnutls_sign_algorithm_t sign;
	size_t ec_len; /* bytes of r and of s in a JOSE ECDSA signature; 0 for RSA */
	char alg[8];
	char kid[48];
};

static int fail(char *err, size_t errlen, const char *why)
{
	snprintf(err, errlen, "%s", why);
	return -EINVAL;
}

int st_key_load(const char *pem, size_t len, struct st_key **ret, char *err, size_t errlen)
{
	gnutls_datum_t in = {(unsigned char *)pem, (unsigned)len}, der = {0};
	gnutls_pubkey_t pub = NULL;
	struct st_key *k;
	unsigned char sum[32];
	int r = 0;

	*ret = NULL;
	if (!(k = calloc(1, sizeof(*k))))
		return -ENOMEM;
	if (gnutls_privkey_init(&k->priv) < 0) {
		free(k);
		return -ENOMEM;
	}
	if (gnutls_privkey_import_x509_raw(k->priv, &in, GNUTLS_X509_FMT_PEM, NULL, 0) < 0) {
		r = fail(err, errlen, "data does not contain a valid RSA or ECDSA private key");
		goto out;
	}
	switch (gnutls_privkey_get_pk_algorithm(k->priv, NULL)) {
	case GNUTLS_PK_RSA:
		k->sign = GNUTLS_SIGN_RSA_SHA256;
		snprintf(k->alg, sizeof(k->alg), "RS256");
		break;
	case GNUTLS_PK_ECDSA: {
		gnutls_ecc_curve_t curve = GNUTLS_ECC_CURVE_INVALID;
		gnutls_datum_t x = {0}, y = {0}, kk = {0};
		if (gnutls_privkey_export_ecc_raw(k->priv, &curve, &x, &y, &kk) < 0)
			curve = GNUTLS_ECC_CURVE_INVALID;
		gnutls_free(x.data);
		gnutls_free(y.data);
		gnutls_free(kk.data);
		if (curve == GNUTLS_ECC_CURVE_SECP256R1) {
			k->sign = GNUTLS_SIGN_ECDSA_SHA256, k->ec_len = 32;
			snprintf(k->alg, sizeof(k->alg), "ES256");
		} else if (curve == GNUTLS_ECC_CURVE_SECP384R1) {
			k->sign = GNUTLS_SIGN_ECDSA_SHA384, k->ec_len = 48;
			snprintf(k->alg, sizeof(k->alg), "ES384");
		} else if (curve == GNUTLS_ECC_CURVE_SECP521R1) {
			k->sign = GNUTLS_SIGN_ECDSA_SHA512, k->ec_len = 66;
			snprintf(k->alg, sizeof(k->alg), "ES512");
		} else {
			r = fail(err, errlen,
			         "unknown private key curve, must be 256, 384, or 521");
			goto out;
		}
		break;
	}
	default:
		r = fail(err, errlen, "unknown private key type, must be RSA or ECDSA");
		goto out;
	}
	/* kid: base64url(SHA-256(DER SubjectPublicKeyInfo)) */
	if (gnutls_pubkey_init(&pub) < 0 || gnutls_pubkey_import_privkey(pub, k->priv, 0, 0) < 0 ||
	    gnutls_pubkey_export2(pub, GNUTLS_X509_FMT_DER, &der) < 0 ||
	    gnutls_hash_fast(GNUTLS_DIG_SHA256, der.data, der.size, sum) < 0) {
		r = fail(err, errlen, "cannot derive the public key");
		goto out;
	}
	size_t pos = 0;
	if (kube_base64url_append(sum, sizeof(sum), k->kid, sizeof(k->kid), &pos) < 0)
		r = fail(err, errlen, "key id too long");
out:
	gnutls_free(der.data);
	if (pub)
		gnutls_pubkey_deinit(pub);
	if (r < 0) {
		st_key_free(k);
		return r;
	}
	*ret = k;
	return 0;
}

void st_key_free(struct st_key *k)
{
	if (!k)
		return;
	gnutls_privkey_deinit(k->priv);
	free(k);
}

const char *st_key_alg(const struct st_key *k)
{
	return k->alg;
}

const char *st_key_id(const struct st_key *k)
{
	return k->kid;
}

/* A JSON string as Go's encoding/json writes it (HTML characters escaped as \u00XX). */
static int put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\r')
			fputs("\\r", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&')
			fprintf(f, "\\u%04x", *p);
		else if (p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9)) {
			fprintf(f, "\\u202%c", p[2] == 0xa8 ? '8' : '9');
			p += 2;
		} else
			fputc(*p, f);
	}
	return fputc('"', f) == EOF ? -EIO : 0;
}

int st_legacy_claims(const char *ns, const char *sa_name, const char *sa_uid,
                     const char *secret_name, char **ret)
{
	char *buf = NULL, sub[600];
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	*ret = NULL;
	if (!f)
		return -ENOMEM;
	snprintf(sub, sizeof(sub), "system:serviceaccount:%s:%s", ns, sa_name);
	/* keys in sorted order, as go-jose marshals its merged claim map */
	fputs("{\"iss\":", f);
	put_string(f, ST_LEGACY_ISSUER);
	fputs(",\"kubernetes.io/serviceaccount/namespace\":", f);
	put_string(f, ns);
	fputs(",\"kubernetes.io/serviceaccount/secret.name\":", f);
	put_string(f, secret_name);
	fputs(",\"kubernetes.io/serviceaccount/service-account.name\":", f);
	put_string(f, sa_name);
	fputs(",\"kubernetes.io/serviceaccount/service-account.uid\":", f);
	put_string(f, sa_uid);
	fputs(",\"sub\":", f);
	put_string(f, sub);
	fputc('}', f);
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	*ret = buf;
	return 0;
}

/* A DER integer's bytes (maybe with a leading zero) as exactly n big-endian bytes. */
static int fixed(const gnutls_datum_t *v, unsigned char *out, size_t n)
{
	const unsigned char *p = v->data;
	size_t l = v->size;

	while (l > n && *p == 0)
		p++, l--;
	if (l > n)
		return -EIO;
	memset(out, 0, n - l);
	memcpy(out + n - l, p, l);
	return 0;
}

int st_legacy_token(const struct st_key *k, const char *ns, const char *sa_name, const char *sa_uid,
                    const char *secret_name, char **ret)
{
	char *claims = NULL, header[128], *out = NULL;
	gnutls_datum_t data, sig = {0};
	size_t cap, pos = 0;
	int r, hn;

	*ret = NULL;
	hn = snprintf(header, sizeof(header), "{\"alg\":\"%s\",\"kid\":\"%s\"}", k->alg, k->kid);
	if (hn < 0 || (size_t)hn >= sizeof(header))
		return -EIO;
	if ((r = st_legacy_claims(ns, sa_name, sa_uid, secret_name, &claims)) < 0)
		return r;
	cap = (size_t)hn * 2 + strlen(claims) * 2 + 2048;
	if (!(out = malloc(cap))) {
		free(claims);
		return -ENOMEM;
	}
	if (kube_base64url_append((const unsigned char *)header, (size_t)hn, out, cap, &pos) < 0)
		goto nospace;
	out[pos++] = '.';
	if (kube_base64url_append((const unsigned char *)claims, strlen(claims), out, cap, &pos) <
	    0)
		goto nospace;
	data = (gnutls_datum_t){(unsigned char *)out, (unsigned)pos};
	if (gnutls_privkey_sign_data2(k->priv, k->sign, 0, &data, &sig) < 0) {
		r = -EIO;
		goto done;
	}
	out[pos++] = '.';
	if (k->ec_len) {
		gnutls_datum_t rr = {0}, ss = {0};
		unsigned char raw[132];
		r = gnutls_decode_rs_value(&sig, &rr, &ss) < 0 ? -EIO : 0;
		if (r == 0 && (r = fixed(&rr, raw, k->ec_len)) == 0)
			r = fixed(&ss, raw + k->ec_len, k->ec_len);
		gnutls_free(rr.data);
		gnutls_free(ss.data);
		if (r == 0 && kube_base64url_append(raw, 2 * k->ec_len, out, cap, &pos) < 0)
			r = -ENOSPC;
	} else if (kube_base64url_append(sig.data, sig.size, out, cap, &pos) < 0)
		r = -ENOSPC;
	else
		r = 0;
	goto done;
nospace:
	r = -ENOSPC;
done:
	gnutls_free(sig.data);
	free(claims);
	if (r < 0) {
		free(out);
		return r == -ENOSPC ? -EIO : r;
	}
	*ret = out;
	return 0;
}

/* ---- Secrets -------------------------------------------------------------------------------- */
static void copy(char *dst, size_t n, const cJSON *v)
{
	snprintf(dst, n, "%s", cJSON_IsString(v) ? v->valuestring : "");
}

/* data[key] of a Secret decoded; *ret NULL and *len 0 when absent or not base64 */
static void data_value(const cJSON *data, const char *key, unsigned char **ret, size_t *len)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(data, key);

	*ret = NULL, *len = 0;
	if (cJSON_IsString(v) &&
	    kube_base64_decode(v->valuestring, strlen(v->valuestring), ret, len) < 0)
		*ret = NULL, *len = 0;
}

static void facts(const cJSON *o, const char *ca, struct st_secret *s)
{
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(o, "metadata");
	const cJSON *an = cJSON_GetObjectItemCaseSensitive(md, "annotations");
	const cJSON *data = cJSON_GetObjectItemCaseSensitive(o, "data");
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(o, "type");
	unsigned char *v;
	size_t n;

	memset(s, 0, sizeof(*s));
	copy(s->ns, sizeof(s->ns), cJSON_GetObjectItemCaseSensitive(md, "namespace"));
	copy(s->name, sizeof(s->name), cJSON_GetObjectItemCaseSensitive(md, "name"));
	copy(s->uid, sizeof(s->uid), cJSON_GetObjectItemCaseSensitive(md, "uid"));
	copy(s->rv, sizeof(s->rv), cJSON_GetObjectItemCaseSensitive(md, "resourceVersion"));
	copy(s->sa_name, sizeof(s->sa_name), cJSON_GetObjectItemCaseSensitive(an, ST_ANN_NAME));
	copy(s->sa_uid, sizeof(s->sa_uid), cJSON_GetObjectItemCaseSensitive(an, ST_ANN_UID));
	s->is_token = cJSON_IsString(type) && !strcmp(type->valuestring, ST_TYPE);
	size_t cal = ca ? strlen(ca) : 0;
	data_value(data, "ca.crt", &v, &n);
	s->needs_ca = cal > 0 && (n != cal || memcmp(v, ca, n) != 0);
	free(v);
	data_value(data, "namespace", &v, &n);
	s->needs_namespace = n == 0;
	free(v);
	data_value(data, "token", &v, &n);
	s->needs_token = n == 0;
	free(v);
}

int st_secret_parse(const char *json, size_t len, const char *ca, struct st_secret *s)
{
	cJSON *o = cJSON_ParseWithLength(json, len);

	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		memset(s, 0, sizeof(*s));
		return -EBADMSG;
	}
	facts(o, ca, s);
	cJSON_Delete(o);
	return 0;
}

bool st_secret_for_sa(const struct st_secret *s, const char *sa_name, const char *sa_uid)
{
	if (!s->is_token || strcmp(s->sa_name, sa_name))
		return false;
	return !s->sa_uid[0] || !strcmp(s->sa_uid, sa_uid);
}

int st_sa_key(char *out, size_t n, const char *ns, const char *name, const char *uid)
{
	int w = snprintf(out, n, "%s/%s/%s", ns, name, uid);
	return w < 0 || (size_t)w >= n ? -ENOSPC : 0;
}

int st_secret_key(char *out, size_t n, const struct st_secret *s)
{
	int w = snprintf(out, n, "%s/%s/%s/%s/%s", s->ns, s->name, s->uid, s->sa_name, s->sa_uid);
	return w < 0 || (size_t)w >= n ? -ENOSPC : 0;
}

int st_key_split(char *key, char **parts, size_t n_parts)
{
	size_t i = 0;
	char *p = key;

	for (;;) {
		if (i == n_parts)
			return -EINVAL;
		parts[i++] = p;
		char *sl = strchr(p, '/');
		if (!sl)
			break;
		*sl = 0;
		p = sl + 1;
	}
	return i == n_parts ? 0 : -EINVAL;
}

static int set_b64(cJSON *data, const char *key, const void *v, size_t n)
{
	char *e = kube_base64_encode(v, n);
	cJSON *item = e ? cJSON_CreateString(e) : NULL;

	free(e);
	if (!item)
		return -ENOMEM;
	cJSON_DeleteItemFromObjectCaseSensitive(data, key);
	cJSON_AddItemToObject(data, key, item);
	return 0;
}

static cJSON *object_member(cJSON *o, const char *key)
{
	cJSON *m = cJSON_GetObjectItemCaseSensitive(o, key);

	if (cJSON_IsObject(m))
		return m;
	cJSON_DeleteItemFromObjectCaseSensitive(o, key);
	return cJSON_AddObjectToObject(o, key);
}

static int set_string(cJSON *o, const char *key, const char *v)
{
	cJSON_DeleteItemFromObjectCaseSensitive(o, key);
	return cJSON_AddStringToObject(o, key, v) ? 0 : -ENOMEM;
}

int st_update_body(const char *live_json, size_t len, const char *ca, const char *sa_name,
                   const char *sa_uid, int (*gen)(void *ud, char **token), void *ud, char **ret)
{
	cJSON *o = cJSON_ParseWithLength(live_json, len), *md, *an, *data;
	struct st_secret s;
	char *token = NULL;
	int r = 0;

	*ret = NULL;
	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		return -EBADMSG;
	}
	facts(o, ca, &s);
	if (!s.needs_ca && !s.needs_namespace && !s.needs_token) {
		cJSON_Delete(o);
		return 0;
	}
	if (!(md = object_member(o, "metadata")) || !(an = object_member(md, "annotations")) ||
	    !(data = object_member(o, "data"))) {
		cJSON_Delete(o);
		return -ENOMEM;
	}
	if (s.needs_ca)
		r = set_b64(data, "ca.crt", ca, strlen(ca));
	if (r == 0 && s.needs_namespace)
		r = set_b64(data, "namespace", s.ns, strlen(s.ns));
	if (r == 0 && s.needs_token && (r = gen(ud, &token)) == 0)
		r = set_b64(data, "token", token, strlen(token));
	if (r == 0)
		r = set_string(an, ST_ANN_NAME, sa_name);
	if (r == 0)
		r = set_string(an, ST_ANN_UID, sa_uid);
	free(token);
	if (r == 0 && !(*ret = cJSON_PrintUnformatted(o)))
		r = -ENOMEM;
	cJSON_Delete(o);
	return r;
}

int st_remove_reference_body(const char *sa_json, size_t len, const char *sa_uid,
                             const char *secret, char **ret)
{
	cJSON *o = cJSON_ParseWithLength(sa_json, len), *refs, *ref;
	bool found = false;

	*ret = NULL;
	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		return -EBADMSG;
	}
	const cJSON *uid = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(o, "metadata"), "uid");
	if (sa_uid && *sa_uid && (!cJSON_IsString(uid) || strcmp(uid->valuestring, sa_uid))) {
		cJSON_Delete(o);
		return 0; /* another ServiceAccount of that name */
	}
	refs = cJSON_GetObjectItemCaseSensitive(o, "secrets");
	for (ref = refs ? refs->child : NULL; ref;) {
		cJSON *next = ref->next;
		const cJSON *nm = cJSON_GetObjectItemCaseSensitive(ref, "name");
		if (cJSON_IsString(nm) && !strcmp(nm->valuestring, secret)) {
			cJSON_Delete(cJSON_DetachItemViaPointer(refs, ref));
			found = true;
		}
		ref = next;
	}
	if (found && refs && !refs->child)
		cJSON_DeleteItemFromObjectCaseSensitive(o, "secrets"); /* omitempty */
	if (found && !(*ret = cJSON_PrintUnformatted(o))) {
		cJSON_Delete(o);
		return -ENOMEM;
	}
	cJSON_Delete(o);
	return 0;
}
