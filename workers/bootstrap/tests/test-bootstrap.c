/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The bootstrap-token controllers' decisions (workers/bootstrap/bootstrap.h) with the facts of
 * upstream's tests (v1.37): jws_test.go's TestComputeDetachedSignature vectors (content, empty
 * content, empty secret); bootstrapsigner_test.go's TestNoConfigMap (nothing to sign: no
 * kubeconfig), TestSimpleSign, TestNoSignNeeded, TestUpdateSignature, TestRemoveSignature;
 * tokencleaner_test.go's TestCleanerNoExpiration, TestCleanerExpired, TestCleanerNotExpired and
 * TestCleanerExpiredAt (the time left); util_test.go's validateSecretForSigning cases.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workers/bootstrap/bootstrap.h"

#define NOW  1800000000000000000ll /* 2027-01-15T08:00:00Z, in ns */
#define HOUR 3600000000000ll

static void test_jws_vectors(void **state)
{
	(void)state;
	char sig[256];
	const char *content = "Hello from the other side. I must have called a thousand times.",
	           *secret = "my voice is my passcode";

	assert_int_equal(bt_jws_detached(content, strlen(content), "joshua", secret, strlen(secret),
	                                 sig, sizeof(sig)),
	                 0);
	assert_string_equal(sig, "eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..VShe2taLd-"
	                         "YTrmWuRkcL_8QTNDHYxQIEBsAYYiIj1_8");
	assert_int_equal(bt_jws_detached("", 0, "joshua", secret, strlen(secret), sig, sizeof(sig)),
	                 0);
	assert_string_equal(sig, "eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9.."
	                         "7Ui1ALizW4jXphVUB7xUqC9vLYLL9RZeOFfVLoB7Tgk");
	assert_int_equal(
	        bt_jws_detached(content, strlen(content), "joshua", "", 0, sig, sizeof(sig)), 0);
	assert_string_equal(sig, "eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9.."
	                         "UfkqvDGiIFxrMnFseDj9LYJOLNrvjW8aHhF71mvvAs8");
	/* a secret longer than 32 bytes is used as it is */
	char long_secret[80];
	memset(long_secret, 'k', sizeof(long_secret));
	assert_int_equal(bt_jws_detached(content, strlen(content), "joshua", long_secret,
	                                 sizeof(long_secret), sig, sizeof(sig)),
	                 0);
	assert_int_equal(bt_jws_detached(content, strlen(content), "joshua", secret, strlen(secret),
	                                 sig, 20),
	                 -ENOSPC);
}

static char *b64(const char *s)
{
	static const char tab[] =
	        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(s), o = 0;
	char *out = malloc(n / 3 * 4 + 8);
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned char)s[i] << 16;
		if (i + 1 < n)
			v |= (unsigned char)s[i + 1] << 8;
		if (i + 2 < n)
			v |= (unsigned char)s[i + 2];
		out[o++] = tab[(v >> 18) & 63];
		out[o++] = tab[(v >> 12) & 63];
		out[o++] = i + 1 < n ? tab[(v >> 6) & 63] : '=';
		out[o++] = i + 2 < n ? tab[v & 63] : '=';
	}
	out[o] = 0;
	return out;
}

/* newTokenSecret (+ addSecretExpiration, addSecretSigningUsage when not NULL) as JSON */
static char *token_secret(const char *name, const char *id, const char *secret,
                          const char *expiration, const char *usage)
{
	cJSON *s = cJSON_CreateObject(), *m = cJSON_AddObjectToObject(s, "metadata"),
	      *d = cJSON_AddObjectToObject(s, "data");
	char *v;
	cJSON_AddStringToObject(m, "namespace", "kube-system");
	cJSON_AddStringToObject(m, "name", name);
	cJSON_AddStringToObject(m, "uid", "7ae2d6e1-1111-2222-3333-444455556666");
	cJSON_AddStringToObject(s, "type", "bootstrap.kubernetes.io/token");
	const char *keys[] = {"token-id", "token-secret", "expiration", "usage-bootstrap-signing"};
	const char *vals[] = {id, secret, expiration, usage};
	for (int i = 0; i < 4; i++) {
		if (!vals[i])
			continue;
		v = b64(vals[i]);
		cJSON_AddStringToObject(d, keys[i], v);
		free(v);
	}
	char *out = cJSON_PrintUnformatted(s);
	cJSON_Delete(s);
	return out;
}

static void test_cleaner_expiration(void **state)
{
	(void)state;
	int64_t ttl = -1;
	/* TestCleanerNoExpiration */
	char *s = token_secret("bootstrap-token-tokenid", "tokenID", "tokenSecret", NULL, NULL);
	assert_true(bt_is_token_secret(s, strlen(s)));
	assert_int_equal(bt_expiration(s, strlen(s), NOW, &ttl), 0);
	assert_int_equal(ttl, 0);
	free(s);
	/* TestCleanerExpired: an hour ago */
	s = token_secret("bootstrap-token-tokenid", "tokenID", "tokenSecret",
	                 "2027-01-15T07:00:00Z", NULL);
	assert_int_equal(bt_expiration(s, strlen(s), NOW, &ttl), 1);
	free(s);
	/* TestCleanerNotExpired, TestCleanerExpiredAt: looked at again when it expires */
	s = token_secret("bootstrap-token-tokenid", "tokenID", "tokenSecret",
	                 "2027-01-15T09:00:00Z", NULL);
	assert_int_equal(bt_expiration(s, strlen(s), NOW, &ttl), 0);
	assert_int_equal(ttl, HOUR);
	free(s);
	/* exactly now: expired (timeRemaining <= 0); another zone; unparseable: expired */
	s = token_secret("bootstrap-token-tokenid", "tokenID", "x", "2027-01-15T08:00:00Z", NULL);
	assert_int_equal(bt_expiration(s, strlen(s), NOW, &ttl), 1);
	free(s);
	s = token_secret("bootstrap-token-tokenid", "tokenID", "x", "2027-01-15T09:00:02+01:00",
	                 NULL);
	assert_int_equal(bt_expiration(s, strlen(s), NOW, &ttl), 0);
	assert_int_equal(ttl, 2000000000ll);
	free(s);
	s = token_secret("bootstrap-token-tokenid", "tokenID", "x", "next tuesday", NULL);
	assert_int_equal(bt_expiration(s, strlen(s), NOW, &ttl), 1);
	free(s);
	/* not a token Secret: another type or namespace */
	const char *opaque = "{\"metadata\":{\"namespace\":\"kube-system\",\"name\":\"x\"},"
	                     "\"type\":\"Opaque\"}",
	           *elsewhere = "{\"metadata\":{\"namespace\":\"default\",\"name\":\"x\"},"
	                        "\"type\":\"bootstrap.kubernetes.io/token\"}";
	assert_false(bt_is_token_secret(opaque, strlen(opaque)));
	assert_false(bt_is_token_secret(elsewhere, strlen(elsewhere)));
	assert_int_equal(bt_expiration("[]", 2, NOW, &ttl), -EBADMSG);
}

static int signing(const char *json, char **id)
{
	char *secret = NULL;
	size_t n = 0;
	int r = bt_signing_token(json, strlen(json), NOW, id, &secret, &n);
	free(secret);
	return r;
}

static void test_validate_for_signing(void **state)
{
	(void)state;
	char *id = NULL, *s;
	s = token_secret("bootstrap-token-abc123", "abc123", "tokenSecret", NULL, "true");
	assert_int_equal(signing(s, &id), 1);
	assert_string_equal(id, "abc123");
	free(id), free(s);
	const struct {
		const char *name, *id, *secret, *exp, *usage;
	} bad[] = {
	        {"bootstrap-token-abc123", "abc123", "tokenSecret", NULL, NULL},    /* no usage */
	        {"bootstrap-token-abc123", "abc123", "tokenSecret", NULL, "false"}, /* not true */
	        {"bootstrap-token-abc123", "abc124", "tokenSecret", NULL, "true"},  /* id != name */
	        {"bootstrap-token-abc123", NULL, "tokenSecret", NULL, "true"},      /* no id */
	        {"bootstrap-token-abc123", "abc123", NULL, NULL, "true"},           /* no secret */
	        {"bootstrap-token-ABC123", "ABC123", "tokenSecret", NULL, "true"},  /* bad name */
	        {"bootstrap-token-abc12", "abc12", "tokenSecret", NULL, "true"},    /* short */
	        {"token-abc123", "abc123", "tokenSecret", NULL, "true"},            /* prefix */
	        {"bootstrap-token-abc123", "abc123", "tokenSecret", "2027-01-15T07:00:00Z",
	         "true"}, /* expired */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		s = token_secret(bad[i].name, bad[i].id, bad[i].secret, bad[i].exp, bad[i].usage);
		id = NULL;
		if (signing(s, &id) != 0)
			fail_msg("case %zu: valid for signing", i);
		assert_null(id);
		free(s);
	}
}

#define SIG_ABC123                                                                                 \
	"eyJhbGciOiJIUzI1NiIsImtpZCI6ImFiYzEyMyJ9..QSxpUG7Q542CirTI2ECPSZjvBOJURUW5a7XqFpNI958"

/* newConfigMap(tokenID, signature) */
static char *config_map(const char *id, const char *sig)
{
	char *out;
	if (id)
		assert_true(
		        asprintf(&out,
		                 "{\"metadata\":{\"namespace\":\"kube-public\",\"name\":\"cluster-"
		                 "info\","
		                 "\"resourceVersion\":\"1\"},\"data\":{\"kubeconfig\":\"payload\","
		                 "\"jws-kubeconfig-%s\":\"%s\"}}",
		                 id, sig) > 0);
	else
		assert_true(asprintf(&out, "{\"metadata\":{\"namespace\":\"kube-public\",\"name\":"
		                           "\"cluster-info\","
		                           "\"resourceVersion\":\"1\"},\"data\":{\"kubeconfig\":"
		                           "\"payload\"}}") > 0);
	return out;
}

static void assert_data(const char *body, const char *id, const char *sig)
{
	cJSON *cm = cJSON_Parse(body), *data = cJSON_GetObjectItem(cm, "data");
	char key[64];
	assert_non_null(data);
	assert_string_equal(cJSON_GetObjectItem(data, "kubeconfig")->valuestring, "payload");
	assert_string_equal(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(cm, "metadata"), "resourceVersion")
	                ->valuestring,
	        "1");
	assert_int_equal(cJSON_GetArraySize(data), id ? 2 : 1);
	if (id) {
		snprintf(key, sizeof(key), "jws-kubeconfig-%s", id);
		assert_string_equal(cJSON_GetObjectItem(data, key)->valuestring, sig);
	}
	cJSON_Delete(cm);
}

static void test_signer(void **state)
{
	(void)state;
	struct bt_token tok = {.id = "abc123", .secret = "tokenSecret", .secret_len = 11};
	char *cm, *body;

	/* TestNoConfigMap's sibling: a ConfigMap without kubeconfig is left alone */
	const char *nokey = "{\"metadata\":{\"name\":\"cluster-info\"},\"data\":{}}";
	assert_int_equal(bt_sign_plan(nokey, strlen(nokey), &tok, 1, &body), 0);
	assert_null(body);
	/* TestSimpleSign */
	cm = config_map(NULL, NULL);
	assert_int_equal(bt_sign_plan(cm, strlen(cm), &tok, 1, &body), 0);
	assert_non_null(body);
	assert_data(body, "abc123", SIG_ABC123);
	free(body), free(cm);
	/* TestNoSignNeeded */
	cm = config_map("abc123", SIG_ABC123);
	assert_int_equal(bt_sign_plan(cm, strlen(cm), &tok, 1, &body), 0);
	assert_null(body);
	free(cm);
	/* TestUpdateSignature */
	cm = config_map("abc123", "old signature");
	assert_int_equal(bt_sign_plan(cm, strlen(cm), &tok, 1, &body), 0);
	assert_non_null(body);
	assert_data(body, "abc123", SIG_ABC123);
	free(body);
	/* TestRemoveSignature: no token */
	assert_int_equal(bt_sign_plan(cm, strlen(cm), NULL, 0, &body), 0);
	assert_non_null(body);
	assert_data(body, NULL, NULL);
	free(body), free(cm);
	/* a signature of another id goes, ours is kept; a second Secret of an id is ignored */
	cm = config_map("zzz999", "stale");
	struct bt_token two[] = {tok, {.id = "abc123", .secret = "other", .secret_len = 5}};
	assert_int_equal(bt_sign_plan(cm, strlen(cm), two, 2, &body), 0);
	assert_data(body, "abc123", SIG_ABC123);
	free(body), free(cm);
	assert_int_equal(bt_sign_plan("x", 1, &tok, 1, &body), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_jws_vectors),
	        cmocka_unit_test(test_cleaner_expiration),
	        cmocka_unit_test(test_validate_for_signing),
	        cmocka_unit_test(test_signer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
