/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The token controller's pure parts (workers/satoken/satoken.h), with the Secret cases of
 * upstream's tokens_controller_test.go TestTokenCreation (v1.36/37: a token Secret without
 * token data, without or with a mismatched ca.crt, without namespace data, with custom
 * namespace data kept; a Secret of another ServiceAccount uid; a deleted Secret's reference
 * removed from its ServiceAccount) and the token generator's key handling (jwt.go: RS256 for
 * RSA, ES256/384/512 by curve, other key types refused, kid from the public key), each token's
 * signature verified with the public key.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <gnutls/abstract.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "kube/config.h"
#include "workers/satoken/satoken.h"

/* a fresh private key of the algorithm as PEM (PKCS#8) */
static char *gen_pem(gnutls_pk_algorithm_t pk, unsigned bits, size_t *len)
{
	gnutls_x509_privkey_t k;
	gnutls_datum_t out = {0};

	assert_int_equal(gnutls_x509_privkey_init(&k), 0);
	assert_int_equal(gnutls_x509_privkey_generate(k, pk, bits, 0), 0);
	assert_int_equal(gnutls_x509_privkey_export2_pkcs8(k, GNUTLS_X509_FMT_PEM, NULL,
	                                                   GNUTLS_PKCS_PLAIN, &out),
	                 0);
	gnutls_x509_privkey_deinit(k);
	char *s = malloc(out.size + 1);
	memcpy(s, out.data, out.size);
	s[out.size] = 0;
	*len = out.size;
	gnutls_free(out.data);
	return s;
}

static unsigned char *b64url_decode(const char *s, size_t n, size_t *out_len)
{
	char *t = malloc(n + 4);
	size_t i;
	for (i = 0; i < n; i++)
		t[i] = s[i] == '-' ? '+' : s[i] == '_' ? '/' : s[i];
	while (i % 4)
		t[i++] = '=';
	unsigned char *out = NULL;
	assert_int_equal(kube_base64_decode(t, i, &out, out_len), 0);
	free(t);
	return out;
}

/* checks token's header, claims and signature against the key in pem */
static void verify(const char *pem, size_t len, const char *token, const char *alg,
                   gnutls_sign_algorithm_t sign, size_t ec_len)
{
	const char *d1 = strchr(token, '.'), *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
	assert_non_null(d2);
	size_t hl, sl;
	unsigned char *h = b64url_decode(token, (size_t)(d1 - token), &hl);
	char want[160];
	struct st_key *k;
	char err[200];
	assert_int_equal(st_key_load(pem, len, &k, err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "{\"alg\":\"%s\",\"kid\":\"%s\"}", alg, st_key_id(k));
	assert_int_equal(hl, strlen(want));
	assert_memory_equal(h, want, hl);
	free(h);
	st_key_free(k);

	unsigned char *sig = b64url_decode(d2 + 1, strlen(d2 + 1), &sl);
	gnutls_privkey_t priv;
	gnutls_pubkey_t pub;
	gnutls_datum_t in = {(unsigned char *)pem, (unsigned)len};
	assert_int_equal(gnutls_privkey_init(&priv), 0);
	assert_int_equal(gnutls_privkey_import_x509_raw(priv, &in, GNUTLS_X509_FMT_PEM, NULL, 0),
	                 0);
	assert_int_equal(gnutls_pubkey_init(&pub), 0);
	assert_int_equal(gnutls_pubkey_import_privkey(pub, priv, 0, 0), 0);
	gnutls_datum_t data = {(unsigned char *)token, (unsigned)(d2 - token)}, s = {sig, sl},
	               der = {0};
	if (ec_len) {
		assert_int_equal(sl, 2 * ec_len);
		gnutls_datum_t r = {sig, ec_len}, ss = {sig + ec_len, ec_len};
		assert_int_equal(gnutls_encode_rs_value(&der, &r, &ss), 0);
		s = der;
	}
	assert_true(gnutls_pubkey_verify_data2(pub, sign, 0, &data, &s) >= 0);
	/* a changed byte fails (the oracle can fire) */
	((unsigned char *)data.data)[3] ^= 1;
	assert_true(gnutls_pubkey_verify_data2(pub, sign, 0, &data, &s) < 0);
	((unsigned char *)data.data)[3] ^= 1;
	gnutls_free(der.data);
	gnutls_pubkey_deinit(pub);
	gnutls_privkey_deinit(priv);
	free(sig);
}

static void one_key(gnutls_pk_algorithm_t pk, unsigned bits, const char *alg,
                    gnutls_sign_algorithm_t sign, size_t ec_len)
{
	size_t len;
	char *pem = gen_pem(pk, bits, &len), err[200], *tok = NULL;
	struct st_key *k = NULL;

	assert_int_equal(st_key_load(pem, len, &k, err, sizeof(err)), 0);
	assert_string_equal(st_key_alg(k), alg);
	assert_int_equal(strlen(st_key_id(k)), 43); /* 32 bytes, base64url without padding */
	assert_int_equal(st_legacy_token(k, "ns", "default", "uid-1", "default-token-x", &tok), 0);
	verify(pem, len, tok, alg, sign, ec_len);
	free(tok);
	st_key_free(k);
	free(pem);
}

static void test_keys(void **state)
{
	(void)state;
	one_key(GNUTLS_PK_RSA, 2048, "RS256", GNUTLS_SIGN_RSA_SHA256, 0);
	one_key(GNUTLS_PK_ECDSA, GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), "ES256",
	        GNUTLS_SIGN_ECDSA_SHA256, 32);
	one_key(GNUTLS_PK_ECDSA, GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP384R1), "ES384",
	        GNUTLS_SIGN_ECDSA_SHA384, 48);
	one_key(GNUTLS_PK_ECDSA, GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP521R1), "ES512",
	        GNUTLS_SIGN_ECDSA_SHA512, 66);
}

static void test_bad_keys(void **state)
{
	struct st_key *k = (void *)1;
	char err[200];
	size_t len;
	(void)state;

	assert_int_equal(st_key_load("nothing", 7, &k, err, sizeof(err)), -EINVAL);
	assert_null(k);
	assert_non_null(strstr(err, "private key"));
	char *pem = gen_pem(GNUTLS_PK_EDDSA_ED25519, 256, &len);
	assert_int_equal(st_key_load(pem, len, &k, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "unknown private key type, must be RSA or ECDSA");
	free(pem);
}

static void test_claims(void **state)
{
	char *c = NULL;
	(void)state;

	assert_int_equal(st_legacy_claims("kube-system", "sa", "8f0c", "sa-token-abcde", &c), 0);
	assert_string_equal(c, "{\"iss\":\"kubernetes/serviceaccount\","
	                       "\"kubernetes.io/serviceaccount/namespace\":\"kube-system\","
	                       "\"kubernetes.io/serviceaccount/secret.name\":\"sa-token-abcde\","
	                       "\"kubernetes.io/serviceaccount/service-account.name\":\"sa\","
	                       "\"kubernetes.io/serviceaccount/service-account.uid\":\"8f0c\","
	                       "\"sub\":\"system:serviceaccount:kube-system:sa\"}");
	free(c);
	/* Go's encoder escapes HTML characters */
	assert_int_equal(st_legacy_claims("a<b", "x&y", "\"", "s>", &c), 0);
	assert_non_null(strstr(c, "\"a\\u003cb\""));
	assert_non_null(strstr(c, "\"x\\u0026y\""));
	assert_non_null(strstr(c, "\"\\\"\""));
	assert_non_null(strstr(c, "\"s\\u003e\""));
	free(c);
}

#define CA "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

static char *secret_json(const char *data)
{
	char *s = NULL;
	assert_true(asprintf(&s,
	                     "{\"kind\":\"Secret\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":"
	                     "\"token-secret-1\",\"namespace\":\"default\",\"uid\":\"23456\","
	                     "\"resourceVersion\":\"1\",\"annotations\":{\"kubernetes.io/"
	                     "service-account.name\":\"default\",\"kubernetes.io/"
	                     "service-account.uid\":\"12345\"}},\"type\":\"kubernetes.io/"
	                     "service-account-token\",\"data\":{%s}}",
	                     data) > 0);
	return s;
}

static char *b64(const char *s)
{
	return kube_base64_encode((const unsigned char *)s, strlen(s));
}

static void test_secret_needs(void **state)
{
	struct st_secret s;
	char *e_ca = b64(CA), *e_other = b64("other"), *e_ns = b64("default"), *e_tok = b64("ABC"),
	     *data, *j;
	(void)state;

	/* added token secret without token data */
	assert_true(asprintf(&data, "\"ca.crt\":\"%s\",\"namespace\":\"%s\"", e_ca, e_ns) > 0);
	j = secret_json(data);
	assert_int_equal(st_secret_parse(j, strlen(j), CA, &s), 0);
	assert_true(s.is_token);
	assert_string_equal(s.sa_name, "default");
	assert_string_equal(s.sa_uid, "12345");
	assert_string_equal(s.rv, "1");
	assert_true(s.needs_token);
	assert_false(s.needs_ca || s.needs_namespace);
	free(j), free(data);
	/* without ca data; with mismatched ca data; an empty root CA never needs one */
	assert_true(asprintf(&data, "\"token\":\"%s\",\"namespace\":\"%s\"", e_tok, e_ns) > 0);
	j = secret_json(data);
	assert_int_equal(st_secret_parse(j, strlen(j), CA, &s), 0);
	assert_true(s.needs_ca);
	assert_false(s.needs_token || s.needs_namespace);
	assert_int_equal(st_secret_parse(j, strlen(j), "", &s), 0);
	assert_false(s.needs_ca);
	free(j), free(data);
	assert_true(asprintf(&data, "\"token\":\"%s\",\"namespace\":\"%s\",\"ca.crt\":\"%s\"",
	                     e_tok, e_ns, e_other) > 0);
	j = secret_json(data);
	assert_int_equal(st_secret_parse(j, strlen(j), CA, &s), 0);
	assert_true(s.needs_ca);
	free(j), free(data);
	/* without namespace data */
	assert_true(asprintf(&data, "\"token\":\"%s\",\"ca.crt\":\"%s\"", e_tok, e_ca) > 0);
	j = secret_json(data);
	assert_int_equal(st_secret_parse(j, strlen(j), CA, &s), 0);
	assert_true(s.needs_namespace);
	assert_false(s.needs_token || s.needs_ca);
	free(j), free(data);
	/* which ServiceAccount: name must match; uid when the annotation has one */
	j = secret_json("");
	assert_int_equal(st_secret_parse(j, strlen(j), CA, &s), 0);
	assert_true(st_secret_for_sa(&s, "default", "12345"));
	assert_false(st_secret_for_sa(&s, "default", "54321"));
	assert_false(st_secret_for_sa(&s, "other", "12345"));
	s.sa_uid[0] = 0;
	assert_true(st_secret_for_sa(&s, "default", "54321"));
	s.is_token = false;
	assert_false(st_secret_for_sa(&s, "default", "12345"));
	free(j);
	assert_int_equal(st_secret_parse("[1]", 3, CA, &s), -EBADMSG);
	free(e_ca), free(e_other), free(e_ns), free(e_tok);
}

static int gens;
static int fake_gen(void *ud, char **token)
{
	(void)ud;
	gens++;
	*token = strdup("JWT");
	return *token ? 0 : -ENOMEM;
}

static const char *data_of(cJSON *o, const char *key)
{
	const cJSON *v =
	        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "data"), key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void test_update_body(void **state)
{
	char *body = NULL, *e_custom = b64("custom"), *data, *j;
	(void)state;

	/* everything missing: token, namespace, ca.crt and both annotations set */
	j = secret_json("");
	gens = 0;
	assert_int_equal(
	        st_update_body(j, strlen(j), CA, "default", "12345", fake_gen, NULL, &body), 0);
	assert_int_equal(gens, 1);
	cJSON *o = cJSON_Parse(body);
	char *e_jwt = b64("JWT"), *e_ns = b64("default"), *e_ca = b64(CA);
	assert_string_equal(data_of(o, "token"), e_jwt);
	assert_string_equal(data_of(o, "namespace"), e_ns);
	assert_string_equal(data_of(o, "ca.crt"), e_ca);
	assert_string_equal(
	        cJSON_GetObjectItemCaseSensitive(
	                cJSON_GetObjectItemCaseSensitive(
	                        cJSON_GetObjectItemCaseSensitive(o, "metadata"), "annotations"),
	                "kubernetes.io/service-account.uid")
	                ->valuestring,
	        "12345");
	cJSON_Delete(o);
	free(body), free(j);
	/* custom namespace data is kept; no token generated when one exists */
	assert_true(asprintf(&data, "\"token\":\"%s\",\"namespace\":\"%s\"", e_jwt, e_custom) > 0);
	j = secret_json(data);
	gens = 0;
	assert_int_equal(
	        st_update_body(j, strlen(j), CA, "default", "12345", fake_gen, NULL, &body), 0);
	assert_int_equal(gens, 0);
	o = cJSON_Parse(body);
	assert_string_equal(data_of(o, "namespace"), e_custom);
	assert_string_equal(data_of(o, "ca.crt"), e_ca);
	cJSON_Delete(o);
	free(body), free(j), free(data);
	/* nothing missing: no update */
	assert_true(asprintf(&data, "\"token\":\"%s\",\"namespace\":\"%s\",\"ca.crt\":\"%s\"",
	                     e_jwt, e_ns, e_ca) > 0);
	j = secret_json(data);
	assert_int_equal(
	        st_update_body(j, strlen(j), CA, "default", "12345", fake_gen, NULL, &body), 0);
	assert_null(body);
	free(j), free(data);
	free(e_custom), free(e_jwt), free(e_ns), free(e_ca);
}

static void test_remove_reference(void **state)
{
	static const char sa[] = "{\"metadata\":{\"name\":\"default\",\"uid\":\"12345\"},"
	                         "\"secrets\":[{\"name\":\"a\"},{\"name\":\"token-secret-1\"}]}";
	static const char last[] = "{\"metadata\":{\"name\":\"default\",\"uid\":\"12345\"},"
	                           "\"secrets\":[{\"name\":\"token-secret-1\"}]}";
	char *body = NULL;
	(void)state;

	assert_int_equal(st_remove_reference_body(sa, strlen(sa), "12345", "token-secret-1", &body),
	                 0);
	assert_non_null(strstr(body, "\"secrets\":[{\"name\":\"a\"}]"));
	free(body);
	/* another uid, or no such reference: no update */
	assert_int_equal(st_remove_reference_body(sa, strlen(sa), "999", "token-secret-1", &body),
	                 0);
	assert_null(body);
	assert_int_equal(st_remove_reference_body(sa, strlen(sa), "", "nope", &body), 0);
	assert_null(body);
	/* the last one: the list goes (omitempty) */
	assert_int_equal(st_remove_reference_body(last, strlen(last), "", "token-secret-1", &body),
	                 0);
	assert_null(strstr(body, "secrets"));
	free(body);
}

static void test_keys_split(void **state)
{
	char k[] = "ns/name/uid/sa/", k2[] = "ns/name/uid", *p[5];
	struct st_secret s = {.ns = "ns", .name = "n", .uid = "u", .sa_name = "sa"};
	char out[64];
	(void)state;

	assert_int_equal(st_key_split(k, p, 5), 0);
	assert_string_equal(p[3], "sa");
	assert_string_equal(p[4], "");
	assert_int_equal(st_key_split(k2, p, 5), -EINVAL);
	assert_int_equal(st_secret_key(out, sizeof(out), &s), 0);
	assert_string_equal(out, "ns/n/u/sa/");
	assert_int_equal(st_sa_key(out, 4, "ns", "name", "uid"), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_keys),        cmocka_unit_test(test_bad_keys),
	        cmocka_unit_test(test_claims),      cmocka_unit_test(test_secret_needs),
	        cmocka_unit_test(test_update_body), cmocka_unit_test(test_remove_reference),
	        cmocka_unit_test(test_keys_split),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
