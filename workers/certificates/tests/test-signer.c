/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The built-in signers' pieces (workers/certificates/signer.h) with the cases of upstream's
 * signer_test.go (TestSigner's certificate fields, TestSignerExpired, TestHandle's validation
 * cases per signer, TestDurations), authority_test.go (TestCertificateAuthority: "ca info",
 * "key usage", "ext key usage", "backdate", "truncate expiration", "uri sans") and the kubelet
 * rules of pkg/apis/certificates (ValidateKubeletServingCSR / ValidateKubeletClientCSR), plus
 * kcm's file selection (startCSRSigningController) and the CA pair's checks. Keys and
 * requests are made here with GnuTLS.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "workers/certificates/signer.h"

#define SEC  1000000000ll
#define MIN  (60 * SEC)
#define HOUR (60 * MIN)

static int64_t now_ns;

/* ---- fixtures ---------------------------------------------------------------------------- */
struct pem {
	unsigned char *p;
	size_t n;
};

static gnutls_x509_privkey_t new_key(void)
{
	gnutls_x509_privkey_t k;
	assert_int_equal(gnutls_x509_privkey_init(&k), 0);
	assert_int_equal(
	        gnutls_x509_privkey_generate(k, GNUTLS_PK_ECDSA,
	                                     GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0),
	        0);
	return k;
}

static struct pem export_key(gnutls_x509_privkey_t k)
{
	gnutls_datum_t d;
	assert_int_equal(gnutls_x509_privkey_export2(k, GNUTLS_X509_FMT_PEM, &d), 0);
	struct pem p = {malloc(d.size), d.size};
	memcpy(p.p, d.data, d.size);
	gnutls_free(d.data);
	return p;
}

/* a self-signed CA valid for [now - 24 h, now + valid] */
static struct pem make_ca(gnutls_x509_privkey_t k, int64_t valid)
{
	gnutls_x509_crt_t c;
	gnutls_datum_t d;
	unsigned char serial[] = {42}, ski[] = {9, 8, 7, 6, 5, 4, 3, 2};
	assert_int_equal(gnutls_x509_crt_init(&c), 0);
	gnutls_x509_crt_set_version(c, 3);
	gnutls_x509_crt_set_serial(c, serial, 1);
	gnutls_x509_crt_set_dn(c, "CN=test-ca", NULL);
	gnutls_x509_crt_set_key(c, k);
	gnutls_x509_crt_set_activation_time(c, (time_t)((now_ns - 24 * HOUR) / SEC));
	gnutls_x509_crt_set_expiration_time(c, (time_t)((now_ns + valid) / SEC));
	gnutls_x509_crt_set_basic_constraints(c, 1, -1);
	gnutls_x509_crt_set_key_usage(c, GNUTLS_KEY_KEY_CERT_SIGN | GNUTLS_KEY_DIGITAL_SIGNATURE);
	gnutls_x509_crt_set_subject_key_id(c, ski, sizeof(ski));
	assert_int_equal(gnutls_x509_crt_sign2(c, c, k, GNUTLS_DIG_SHA256, 0), 0);
	assert_int_equal(gnutls_x509_crt_export2(c, GNUTLS_X509_FMT_PEM, &d), 0);
	struct pem p = {malloc(d.size), d.size};
	memcpy(p.p, d.data, d.size);
	gnutls_free(d.data);
	gnutls_x509_crt_deinit(c);
	return p;
}

static struct csr_ca load_ca(int64_t valid)
{
	gnutls_x509_privkey_t k = new_key();
	struct pem c = make_ca(k, valid), kp = export_key(k);
	struct csr_ca ca;
	char msg[256];
	assert_int_equal(csr_ca_load(c.p, c.n, kp.p, kp.n, &ca, msg, sizeof(msg)), 0);
	free(c.p);
	free(kp.p);
	gnutls_x509_privkey_deinit(k);
	return ca;
}

/* a request: dn (gnutls string, e.g. "CN=x,O=y"), SANs "dns:..", "ip:1.2.3.4", "email:..",
 * "uri:.." (NULL-terminated); ca_ext: ask for basicConstraints CA:TRUE (must be dropped) */
static struct csr_req make_req(const char *dn, const char *const *sans, bool ca_ext)
{
	gnutls_x509_privkey_t k = new_key();
	gnutls_x509_crq_t q;
	gnutls_datum_t d;
	struct csr_req r;
	char msg[256];

	assert_int_equal(gnutls_x509_crq_init(&q), 0);
	gnutls_x509_crq_set_version(q, 1);
	if (*dn)
		assert_int_equal(gnutls_x509_crq_set_dn(q, dn, NULL), 0);
	assert_int_equal(gnutls_x509_crq_set_key(q, k), 0);
	for (size_t i = 0; sans && sans[i]; i++) {
		const char *s = sans[i];
		if (!strncmp(s, "dns:", 4))
			gnutls_x509_crq_set_subject_alt_name(q, GNUTLS_SAN_DNSNAME, s + 4,
			                                     (unsigned)strlen(s + 4),
			                                     GNUTLS_FSAN_APPEND);
		else if (!strncmp(s, "email:", 6))
			gnutls_x509_crq_set_subject_alt_name(q, GNUTLS_SAN_RFC822NAME, s + 6,
			                                     (unsigned)strlen(s + 6),
			                                     GNUTLS_FSAN_APPEND);
		else if (!strncmp(s, "uri:", 4))
			gnutls_x509_crq_set_subject_alt_name(q, GNUTLS_SAN_URI, s + 4,
			                                     (unsigned)strlen(s + 4),
			                                     GNUTLS_FSAN_APPEND);
		else if (!strncmp(s, "ip:", 3)) {
			unsigned char ip[4] = {10, 0, 0, 1};
			gnutls_x509_crq_set_subject_alt_name(q, GNUTLS_SAN_IPADDRESS, ip, 4,
			                                     GNUTLS_FSAN_APPEND);
		}
	}
	if (ca_ext)
		gnutls_x509_crq_set_basic_constraints(q, 1, -1);
	assert_int_equal(gnutls_x509_crq_sign2(q, k, GNUTLS_DIG_SHA256, 0), 0);
	assert_int_equal(gnutls_x509_crq_export2(q, GNUTLS_X509_FMT_PEM, &d), 0);
	/* GnuTLS writes "NEW CERTIFICATE REQUEST"; Go (and the apiserver) want the type
	 * "CERTIFICATE REQUEST" */
	char *pem = calloc(1, d.size + 1), *w = pem;
	for (const char *p = (const char *)d.data, *e = p + d.size; p < e;)
		if (e - p >= 4 && !memcmp(p, "NEW ", 4) && p > (const char *)d.data && p[-1] == ' ')
			p += 4;
		else
			*w++ = *p++;
	assert_int_equal(
	        csr_req_parse((unsigned char *)pem, (size_t)(w - pem), &r, msg, sizeof(msg)), 0);
	free(pem);
	gnutls_free(d.data);
	gnutls_x509_crq_deinit(q);
	gnutls_x509_privkey_deinit(k);
	return r;
}

static gnutls_x509_crt_t sign_ok(const struct csr_ca *ca, const struct csr_req *r,
                                 const char *const *usages, size_t n, int64_t ttl)
{
	char *pem = NULL, msg[256] = "";
	size_t len = 0;
	gnutls_x509_crt_t c;
	int rc = csr_sign(ca, r, usages, n, ttl, now_ns, &pem, &len, msg, sizeof(msg));
	if (rc)
		fprintf(stderr, "csr_sign: %s\n", msg);
	assert_int_equal(rc, 0);
	gnutls_datum_t d = {.data = (unsigned char *)pem, .size = (unsigned)len};
	assert_int_equal(gnutls_x509_crt_init(&c), 0);
	assert_int_equal(gnutls_x509_crt_import(c, &d, GNUTLS_X509_FMT_PEM), 0);
	free(pem);
	/* it verifies against the CA */
	unsigned status = 99;
	assert_int_equal(gnutls_x509_crt_verify(c, &ca->crt, 1, 0, &status), 0);
	assert_int_equal(status, 0);
	return c;
}

/* ---- kcm's file selection ---------------------------------------------------------------- */
struct flags {
	const char *kv[32];
};
static const char *get(void *ud, const char *name)
{
	struct flags *f = ud;
	for (size_t i = 0; f->kv[i]; i += 2)
		if (!strcmp(f->kv[i], name))
			return f->kv[i + 1];
	return "";
}

static void test_files(void **state)
{
	const char *c[CSR_SIGNER_N], *k[CSR_SIGNER_N];
	char msg[256];
	(void)state;

	struct flags none = {{NULL}};
	assert_int_equal(csr_signer_files(get, &none, c, k, msg, sizeof(msg)), 0);
	assert_string_equal(msg,
	                    "Skipping CSR signer controller because no csr cert/key was specified");
	struct flags half = {{"cluster-signing-cert-file", "/ca.crt", NULL}};
	assert_int_equal(csr_signer_files(get, &half, c, k, msg, sizeof(msg)), 0);
	struct flags single = {{"cluster-signing-cert-file", "/ca.crt", "cluster-signing-key-file",
	                        "/ca.key", NULL}};
	assert_int_equal(csr_signer_files(get, &single, c, k, msg, sizeof(msg)), 1);
	for (int i = 0; i < CSR_SIGNER_N; i++) {
		assert_string_equal(c[i], "/ca.crt");
		assert_string_equal(k[i], "/ca.key");
	}
	struct flags both = {{"cluster-signing-cert-file", "/ca.crt", "cluster-signing-key-file",
	                      "/ca.key", "cluster-signing-legacy-unknown-cert-file", "/l.crt",
	                      NULL}};
	assert_int_equal(csr_signer_files(get, &both, c, k, msg, sizeof(msg)), -EINVAL);
	assert_string_equal(msg,
	                    "cannot specify default and per controller certs at the same time");
	/* one specific pair: only that signer runs, the others are skipped */
	struct flags one = {{"cluster-signing-kubelet-serving-cert-file", "/s.crt",
	                     "cluster-signing-kubelet-serving-key-file", "/s.key", NULL}};
	assert_int_equal(csr_signer_files(get, &one, c, k, msg, sizeof(msg)), 1);
	assert_string_equal(c[CSR_SIGNER_KUBELET_SERVING], "/s.crt");
	assert_string_equal(k[CSR_SIGNER_KUBELET_SERVING], "/s.key");
	assert_string_equal(c[CSR_SIGNER_KUBELET_CLIENT], "");
	assert_string_equal(c[CSR_SIGNER_LEGACY_UNKNOWN], "");
	/* a single specific file on its own still selects per-signer files */
	struct flags lone = {{"cluster-signing-cert-file", "/ca.crt",
	                      "cluster-signing-kube-apiserver-client-key-file", "/a.key", NULL}};
	assert_int_equal(csr_signer_files(get, &lone, c, k, msg, sizeof(msg)), 1);
	assert_string_equal(c[CSR_SIGNER_APISERVER_CLIENT], "");
	assert_string_equal(k[CSR_SIGNER_APISERVER_CLIENT], "/a.key");

	assert_int_equal(csr_signer_lookup("kubernetes.io/kubelet-serving"),
	                 CSR_SIGNER_KUBELET_SERVING);
	assert_int_equal(csr_signer_lookup("kubernetes.io/legacy-unknown"),
	                 CSR_SIGNER_LEGACY_UNKNOWN);
	assert_int_equal(csr_signer_lookup("example.com/x"), -1);
	assert_int_equal(csr_signer_lookup(NULL), -1);
}

/* ---- the rules --------------------------------------------------------------------------- */
static const char *validate(enum csr_signer s, const char *dn, const char *const *sans,
                            const char *const *usages, size_t n)
{
	static char msg[256];
	struct csr_req r = make_req(dn, sans, false);
	int rc = csr_signer_validate(s, &r, usages, n, msg, sizeof(msg));
	csr_req_clear(&r);
	return rc ? msg : NULL;
}

#define U(...) (const char *[]){__VA_ARGS__}, sizeof((const char *[]){__VA_ARGS__}) / sizeof(char *)

static void test_kubelet_serving(void **state)
{
	const enum csr_signer s = CSR_SIGNER_KUBELET_SERVING;
	const char *const dns[] = {"dns:n1.example.com", NULL}, *const ip[] = {"ip:", NULL},
	                  *const email[] = {"dns:n1", "email:a@b.c", NULL},
	                  *const uri[] = {"dns:n1", "uri:spiffe://x/y", NULL};
	(void)state;
	assert_null(validate(s, "CN=system:node:n1,O=system:nodes", dns,
	                     U("digital signature", "key encipherment", "server auth")));
	assert_null(validate(s, "CN=system:node:n1,O=system:nodes", ip,
	                     U("digital signature", "server auth"))); /* no RSA */
	assert_null(validate(s, "CN=system:node:n1,O=system:nodes", dns,
	                     U("server auth", "digital signature", "server auth"))); /* a set */
	assert_string_equal(validate(s, "CN=system:node:n1,O=nodes", dns,
	                             U("digital signature", "server auth")),
	                    "subject organization is not system:nodes");
	assert_string_equal(validate(s, "CN=system:node:n1,O=system:nodes,O=other", dns,
	                             U("digital signature", "server auth")),
	                    "subject organization is not system:nodes");
	assert_string_equal(validate(s, "CN=system:node:n1,O=system:nodes", NULL,
	                             U("digital signature", "server auth")),
	                    "DNS or IP subjectAltName is required");
	assert_string_equal(validate(s, "CN=system:node:n1,O=system:nodes", email,
	                             U("digital signature", "server auth")),
	                    "Email subjectAltNames are not allowed");
	assert_string_equal(validate(s, "CN=system:node:n1,O=system:nodes", uri,
	                             U("digital signature", "server auth")),
	                    "URI subjectAltNames are not allowed");
	assert_string_equal(
	        validate(s, "CN=system:node:n1,O=system:nodes", dns,
	                 U("digital signature", "server auth", "client auth")),
	        "usages did not match [digital signature key encipherment server auth]");
	assert_string_equal(
	        validate(s, "CN=n1,O=system:nodes", dns, U("digital signature", "server auth")),
	        "subject common name does not begin with system:node:");
}

static void test_kubelet_client(void **state)
{
	const enum csr_signer s = CSR_SIGNER_KUBELET_CLIENT;
	const char *const dns[] = {"dns:n1", NULL}, *const ip[] = {"ip:", NULL},
	                  *const email[] = {"email:a@b.c", NULL},
	                  *const uri[] = {"uri:spiffe://x", NULL};
	(void)state;
	assert_null(validate(s, "CN=system:node:n1,O=system:nodes", NULL,
	                     U("digital signature", "key encipherment", "client auth")));
	assert_null(validate(s, "CN=system:node:n1,O=system:nodes", NULL,
	                     U("client auth", "digital signature")));
	assert_string_equal(
	        validate(s, "CN=system:node:n1", NULL, U("digital signature", "client auth")),
	        "subject organization is not system:nodes");
	assert_string_equal(validate(s, "CN=system:node:n1,O=system:nodes", dns,
	                             U("digital signature", "client auth")),
	                    "DNS subjectAltNames are not allowed");
	assert_string_equal(validate(s, "CN=system:node:n1,O=system:nodes", email,
	                             U("digital signature", "client auth")),
	                    "Email subjectAltNames are not allowed");
	assert_string_equal(validate(s, "CN=system:node:n1,O=system:nodes", ip,
	                             U("digital signature", "client auth")),
	                    "IP subjectAltNames are not allowed");
	assert_string_equal(validate(s, "CN=system:node:n1,O=system:nodes", uri,
	                             U("digital signature", "client auth")),
	                    "URI subjectAltNames are not allowed");
	assert_string_equal(validate(s, "CN=node:n1,O=system:nodes", NULL,
	                             U("digital signature", "client auth")),
	                    "subject common name does not begin with system:node:");
	assert_string_equal(
	        validate(s, "CN=system:node:n1,O=system:nodes", NULL, U("client auth")),
	        "usages did not match [client auth digital signature key encipherment]");
}

static void test_apiserver_client_and_legacy(void **state)
{
	(void)state;
	const enum csr_signer s = CSR_SIGNER_APISERVER_CLIENT;
	assert_null(validate(s, "CN=alice,O=devs", NULL, U("client auth")));
	assert_null(validate(s, "CN=alice", NULL,
	                     U("digital signature", "key encipherment", "client auth")));
	assert_string_equal(validate(s, "CN=alice", NULL, U("client auth", "server auth")),
	                    "invalid usage for client certificate: server auth");
	assert_string_equal(validate(s, "CN=alice", NULL, U("digital signature")),
	                    "missing required usage for client certificate: client auth");
	assert_string_equal(validate(s, "CN=alice", NULL, NULL, 0),
	                    "missing required usage for client certificate: client auth");
	/* no restrictions */
	const char *const any[] = {"dns:x", "email:a@b", "uri:u:v", NULL};
	assert_null(validate(CSR_SIGNER_LEGACY_UNKNOWN, "", any, U("server auth", "cert sign")));
}

/* ---- TestDurations ----------------------------------------------------------------------- */
static void test_durations(void **state)
{
	(void)state;
	const int64_t ttl = 8760 * HOUR;
	assert_int_equal(csr_duration(ttl, false, 0), ttl);       /* not requested */
	assert_int_equal(csr_duration(ttl, true, 3600), HOUR);    /* honoured */
	assert_int_equal(csr_duration(ttl, true, 600), 10 * MIN); /* the minimum */
	assert_int_equal(csr_duration(ttl, true, 599), 10 * MIN); /* raised to it */
	assert_int_equal(csr_duration(ttl, true, 1), 10 * MIN);
	assert_int_equal(csr_duration(ttl, true, 2 * 8760 * 3600), ttl);    /* capped */
	assert_int_equal(csr_duration(2 * HOUR, true, 3 * 3600), 2 * HOUR); /* by a short ttl */
	assert_int_equal(csr_duration(5 * MIN, true, 3600), 5 * MIN);       /* ttl below min */
}

static void test_usage_bits(void **state)
{
	unsigned bits;
	const char *oids[12];
	size_t n;
	char msg[256];
	(void)state;
	assert_int_equal(
	        csr_usage_bits(U("signing", "key encipherment", "server auth", "client auth"),
	                       &bits, oids, &n, msg, sizeof(msg)),
	        0);
	assert_int_equal(bits, GNUTLS_KEY_DIGITAL_SIGNATURE | GNUTLS_KEY_KEY_ENCIPHERMENT);
	assert_int_equal(n, 2);
	assert_string_equal(oids[0], GNUTLS_KP_TLS_WWW_SERVER);
	assert_string_equal(oids[1], GNUTLS_KP_TLS_WWW_CLIENT);
	/* Go's ExtKeyUsage order whatever the request's, s/mime = email protection once */
	assert_int_equal(csr_usage_bits(U("ocsp signing", "s/mime", "email protection", "any"),
	                                &bits, oids, &n, msg, sizeof(msg)),
	                 0);
	assert_int_equal(bits, 0);
	assert_int_equal(n, 3);
	assert_string_equal(oids[0], "2.5.29.37.0");
	assert_string_equal(oids[1], GNUTLS_KP_EMAIL_PROTECTION);
	assert_string_equal(oids[2], GNUTLS_KP_OCSP_SIGNING);
	assert_int_equal(csr_usage_bits(U("client auth", "bogus", "worse"), &bits, oids, &n, msg,
	                                sizeof(msg)),
	                 -EINVAL);
	assert_string_equal(msg, "unrecognized usage values: [\"bogus\" \"worse\"]");
}

/* ---- signing ----------------------------------------------------------------------------- */
static void test_sign_fields(void **state)
{
	(void)state;
	struct csr_ca ca = load_ca(24 * HOUR);
	const char *const sans[] = {"dns:n1.example.com", "ip:", "uri:help://me@what:8080/where",
	                            NULL};
	struct csr_req r = make_req("CN=system:node:k-a-node-s36b,O=system:nodes", sans, true);
	gnutls_x509_crt_t c = sign_ok(
	        &ca, &r, U("signing", "key encipherment", "server auth", "client auth"), HOUR);
	unsigned char buf[256];
	size_t size = sizeof(buf);
	unsigned crit = 0, usage = 0;
	int ca_flag;

	assert_int_equal(gnutls_x509_crt_get_version(c), 3);
	/* "ca info": issuer and authority key id are the CA's */
	size = sizeof(buf);
	assert_int_equal(gnutls_x509_crt_get_issuer_dn(c, (char *)buf, &size), 0);
	assert_string_equal((char *)buf, "CN=test-ca");
	size = sizeof(buf);
	assert_int_equal(gnutls_x509_crt_get_authority_key_id(c, buf, &size, &crit), 0);
	assert_int_equal(size, 8);
	assert_memory_equal(buf, ((unsigned char[]){9, 8, 7, 6, 5, 4, 3, 2}), 8);
	/* the subject as asked */
	size = sizeof(buf);
	assert_int_equal(gnutls_x509_crt_get_dn(c, (char *)buf, &size), 0);
	/* Go's order (O before CN); gnutls_x509_crt_get_dn lists the RDNs first to last */
	assert_string_equal((char *)buf, "O=system:nodes,CN=system:node:k-a-node-s36b");
	/* "key usage" / "ext key usage" */
	assert_int_equal(gnutls_x509_crt_get_key_usage(c, &usage, &crit), 0);
	assert_int_equal(usage, GNUTLS_KEY_DIGITAL_SIGNATURE | GNUTLS_KEY_KEY_ENCIPHERMENT);
	assert_int_equal(crit, 1);
	size = sizeof(buf);
	assert_int_equal(gnutls_x509_crt_get_key_purpose_oid(c, 0, buf, &size, &crit), 0);
	assert_string_equal((char *)buf, GNUTLS_KP_TLS_WWW_SERVER);
	size = sizeof(buf);
	assert_int_equal(gnutls_x509_crt_get_key_purpose_oid(c, 1, buf, &size, &crit), 0);
	assert_string_equal((char *)buf, GNUTLS_KP_TLS_WWW_CLIENT);
	/* CA:FALSE although the request asked for CA:TRUE (the request's extensions dropped) */
	ca_flag = gnutls_x509_crt_get_basic_constraints(c, &crit, NULL, NULL);
	assert_int_equal(ca_flag, 0);
	assert_int_equal(crit, 1);
	/* "uri sans" and the others copied, DNS first */
	unsigned type;
	size = sizeof(buf);
	assert_int_equal(gnutls_x509_crt_get_subject_alt_name2(c, 0, buf, &size, &type, &crit),
	                 GNUTLS_SAN_DNSNAME);
	assert_string_equal((char *)buf, "n1.example.com");
	size = sizeof(buf);
	assert_int_equal(gnutls_x509_crt_get_subject_alt_name2(c, 1, buf, &size, &type, &crit),
	                 GNUTLS_SAN_IPADDRESS);
	size = sizeof(buf);
	assert_int_equal(gnutls_x509_crt_get_subject_alt_name2(c, 2, buf, &size, &type, &crit),
	                 GNUTLS_SAN_URI);
	assert_string_equal((char *)buf, "help://me@what:8080/where");
	/* a serial: positive, at most 128 bits (+ a 0x00 when the top bit is set) */
	size = sizeof(buf);
	assert_int_equal(gnutls_x509_crt_get_serial(c, buf, &size), 0);
	assert_true(size >= 1 && size <= 17);
	assert_true((buf[0] & 0x80) == 0);
	if (size == 17)
		assert_int_equal(buf[0], 0);
	/* "backdate" (short: notAfter not backdated) */
	assert_int_equal((int64_t)gnutls_x509_crt_get_activation_time(c), (now_ns - 5 * MIN) / SEC);
	assert_int_equal((int64_t)gnutls_x509_crt_get_expiration_time(c), (now_ns + HOUR) / SEC);
	gnutls_x509_crt_deinit(c);

	/* long lived: notAfter backdated too */
	c = sign_ok(&ca, &r, U("client auth"), 9 * HOUR);
	assert_int_equal((int64_t)gnutls_x509_crt_get_expiration_time(c),
	                 (now_ns + 9 * HOUR - 5 * MIN) / SEC);
	assert_int_equal(gnutls_x509_crt_get_key_usage(c, &usage, &crit),
	                 GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE); /* no key usage asked: none */
	gnutls_x509_crt_deinit(c);

	/* "truncate expiration": never past the CA */
	c = sign_ok(&ca, &r, U("client auth"), 48 * HOUR);
	assert_int_equal((int64_t)gnutls_x509_crt_get_expiration_time(c), ca.not_after_ns / SEC);
	gnutls_x509_crt_deinit(c);

	/* two signatures, two serials */
	gnutls_x509_crt_t a = sign_ok(&ca, &r, U("client auth"), HOUR),
	                  b = sign_ok(&ca, &r, U("client auth"), HOUR);
	unsigned char sa[32], sb[32];
	size_t la = sizeof(sa), lb = sizeof(sb);
	gnutls_x509_crt_get_serial(a, sa, &la);
	gnutls_x509_crt_get_serial(b, sb, &lb);
	assert_false(la == lb && !memcmp(sa, sb, la));
	gnutls_x509_crt_deinit(a);
	gnutls_x509_crt_deinit(b);
	csr_req_clear(&r);
	csr_ca_clear(&ca);
}

/* a request made by Go's x509.CreateCertificateRequest: CN alice, O [devs ops] (one RDN
 * holding both O values, as ToRDNSequence writes it) */
static const char go_request[] =
        "-----BEGIN CERTIFICATE REQUEST-----\n"
        "MIHmMIGNAgEAMCsxGTAKBgNVBAoTA29wczALBgNVBAoTBGRldnMxDjAMBgNVBAMT\n"
        "BWFsaWNlMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE0gVPf8onGQyOzZ1gZ06q\n"
        "6QmSZg39gAlK6ti25LxHG8ouiYJyE6SLRzgQnAjufuYly2T2JLO1Bempq0H7anXp\n"
        "BKAAMAoGCCqGSM49BAMCA0gAMEUCIQDLaTSRgU1s9Uv1DRFpBrt+j+o+wb3jTJ0n\n"
        "rx2IvpGm6AIgKUNMxGDkhLH/HCiaQ52rfdH69NS+GcFEVdBa8o9SCdk=\n"
        "-----END CERTIFICATE REQUEST-----\n";

static int rdn_avas(gnutls_x509_dn_t dn, int irdn)
{
	gnutls_x509_ava_st ava;
	int n = 0;
	while (gnutls_x509_dn_get_rdn_ava(dn, irdn, n, &ava) == 0)
		n++;
	return n;
}

static void test_sign_multi_valued_subject(void **state)
{
	(void)state;
	struct csr_ca ca = load_ca(24 * HOUR);
	struct csr_req r;
	char msg[256];
	gnutls_x509_dn_t dn;
	gnutls_x509_ava_st ava;

	/* Go's encoding (one RDN per type): the certificate keeps it */
	assert_int_equal(csr_req_parse((const unsigned char *)go_request, strlen(go_request), &r,
	                               msg, sizeof(msg)),
	                 0);
	assert_int_equal(r.n_orgs, 2);
	gnutls_x509_crt_t c = sign_ok(&ca, &r, U("client auth"), HOUR);
	assert_int_equal(gnutls_x509_crt_get_subject(c, &dn), 0);
	assert_int_equal(rdn_avas(dn, 0), 2); /* O=ops + O=devs */
	assert_int_equal(rdn_avas(dn, 1), 1); /* CN */
	assert_int_equal(rdn_avas(dn, 2), 0);
	assert_int_equal(gnutls_x509_dn_get_rdn_ava(dn, 1, 0, &ava), 0);
	assert_int_equal(ava.value.size, 5);
	assert_memory_equal(ava.value.data, "alice", 5);
	gnutls_x509_crt_deinit(c);
	csr_req_clear(&r);

	/* another encoding (CN first, one RDN per value): rewritten in Go's order, one RDN per
	 * value (the documented difference: gnutls cannot write a multi-valued RDN) */
	r = make_req("CN=alice,O=devs,O=ops", NULL, false);
	c = sign_ok(&ca, &r, U("client auth"), HOUR);
	assert_int_equal(gnutls_x509_crt_get_subject(c, &dn), 0);
	assert_int_equal(rdn_avas(dn, 0), 1);
	assert_int_equal(gnutls_x509_dn_get_rdn_ava(dn, 2, 0, &ava), 0);
	assert_int_equal(ava.value.size, 5);
	assert_memory_equal(ava.value.data, "alice", 5);
	gnutls_x509_crt_deinit(c);
	csr_req_clear(&r);
	csr_ca_clear(&ca);
}

static void test_sign_errors(void **state)
{
	(void)state;
	char *pem = NULL, msg[256];
	size_t len;
	struct csr_req r = make_req("CN=alice", NULL, false);

	/* TestSignerExpired: the CA expired (notBefore - backdate past its notAfter) */
	struct csr_ca ca = load_ca(-HOUR);
	assert_int_equal(
	        csr_sign(&ca, &r, U("client auth"), HOUR, now_ns, &pem, &len, msg, sizeof(msg)),
	        -EINVAL);
	assert_non_null(strstr(msg, "the signer has expired: NotAfter="));
	csr_ca_clear(&ca);
	/* expiring within the backdate: notBefore is fine, now is past it */
	ca = load_ca(-2 * MIN);
	assert_int_equal(
	        csr_sign(&ca, &r, U("client auth"), HOUR, now_ns, &pem, &len, msg, sizeof(msg)),
	        -EINVAL);
	assert_non_null(strstr(msg, "refusing to sign a certificate that expired in the past"));
	csr_ca_clear(&ca);
	/* unknown usage */
	ca = load_ca(HOUR);
	assert_int_equal(csr_sign(&ca, &r, U("bogus"), HOUR, now_ns, &pem, &len, msg, sizeof(msg)),
	                 -EINVAL);
	assert_string_equal(msg, "unrecognized usage values: [\"bogus\"]");
	csr_ca_clear(&ca);
	csr_req_clear(&r);
	assert_null(pem);

	/* requests that do not parse */
	struct csr_req bad;
	static const char notreq[] =
	        "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
	assert_int_equal(csr_req_parse((const unsigned char *)notreq, strlen(notreq), &bad, msg,
	                               sizeof(msg)),
	                 -EINVAL);
	assert_string_equal(msg, "PEM block type must be CERTIFICATE REQUEST");
	assert_int_equal(csr_req_parse((const unsigned char *)"garbage", 7, &bad, msg, sizeof(msg)),
	                 -EINVAL);
	static const char trunc[] =
	        "-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n";
	assert_int_equal(
	        csr_req_parse((const unsigned char *)trunc, strlen(trunc), &bad, msg, sizeof(msg)),
	        -EINVAL);
}

static void test_ca_load(void **state)
{
	(void)state;
	gnutls_x509_privkey_t k = new_key(), other = new_key();
	struct pem c = make_ca(k, HOUR), kp = export_key(k), op = export_key(other);
	struct csr_ca ca;
	char msg[256];

	assert_int_equal(csr_ca_load(c.p, c.n, op.p, op.n, &ca, msg, sizeof(msg)), -EINVAL);
	assert_string_equal(msg, "tls: private key does not match public key");
	assert_int_equal(csr_ca_load(c.p, 0, kp.p, kp.n, &ca, msg, sizeof(msg)), -EINVAL);
	assert_string_equal(msg, "missing content for serving cert");
	assert_int_equal(csr_ca_load(c.p, c.n, kp.p, 0, &ca, msg, sizeof(msg)), -EINVAL);
	assert_string_equal(msg, "missing content for serving cert");
	unsigned char *two = malloc(2 * c.n);
	memcpy(two, c.p, c.n);
	memcpy(two + c.n, c.p, c.n);
	assert_int_equal(csr_ca_load(two, 2 * c.n, kp.p, kp.n, &ca, msg, sizeof(msg)), -EINVAL);
	assert_string_equal(msg, "expected 1 certificate, found 2");
	assert_int_equal(
	        csr_ca_load((const unsigned char *)"x", 1, kp.p, kp.n, &ca, msg, sizeof(msg)),
	        -EINVAL);
	assert_int_equal(csr_ca_load(c.p, c.n, kp.p, kp.n, &ca, msg, sizeof(msg)), 0);
	csr_ca_clear(&ca);
	free(two);
	free(c.p);
	free(kp.p);
	free(op.p);
	gnutls_x509_privkey_deinit(k);
	gnutls_x509_privkey_deinit(other);
}

/* ---- sarapprove_test.go: TestRecognizers (isNodeClientCert, isSelfNodeClientCert) -------- */
static bool recog(enum csr_recognizer k, const char *signer, const char *user, const char *dn,
                  const char *const *sans, const char *const *usages, size_t n)
{
	struct csr_req r = make_req(dn, sans, false);
	bool ok = csr_recognize(k, signer, user, &r, usages, n);
	csr_req_clear(&r);
	return ok;
}

static void test_recognizers(void **state)
{
	(void)state;
	const char *kc = "kubernetes.io/kube-apiserver-client-kubelet", *node = "system:node:n1",
	           *dn = "CN=system:node:n1,O=system:nodes";
	const char *const dns[] = {"dns:n1", NULL}, *const email[] = {"email:a@b.c", NULL},
	                  *const ip[] = {"ip:", NULL}, *const uri[] = {"uri:x:y", NULL};
	/* good: both recognizers (self: the requester is the node) */
	assert_true(recog(CSR_SELF_NODE_CLIENT, kc, node, dn, NULL,
	                  U("key encipherment", "digital signature", "client auth")));
	assert_true(recog(CSR_NODE_CLIENT, kc, node, dn, NULL,
	                  U("key encipherment", "digital signature", "client auth")));
	assert_true(
	        recog(CSR_NODE_CLIENT, kc, node, dn, NULL, U("digital signature", "client auth")));
	/* another requester: nodeclient only */
	assert_false(recog(CSR_SELF_NODE_CLIENT, kc, "system:bootstrap:abc", dn, NULL,
	                   U("digital signature", "client auth")));
	assert_true(recog(CSR_NODE_CLIENT, kc, "system:bootstrap:abc", dn, NULL,
	                  U("digital signature", "client auth")));
	/* another signer */
	assert_false(recog(CSR_NODE_CLIENT, "kubernetes.io/kube-apiserver-client", node, dn, NULL,
	                   U("digital signature", "client auth")));
	assert_false(recog(CSR_SELF_NODE_CLIENT, "kubernetes.io/kube-apiserver-client", node, dn,
	                   NULL, U("digital signature", "client auth")));
	/* the kubelet client rules */
	assert_false(recog(CSR_NODE_CLIENT, kc, node, "CN=system:node:n1,O=other", NULL,
	                   U("digital signature", "client auth")));
	assert_false(
	        recog(CSR_NODE_CLIENT, kc, node, dn, dns, U("digital signature", "client auth")));
	assert_false(
	        recog(CSR_NODE_CLIENT, kc, node, dn, email, U("digital signature", "client auth")));
	assert_false(
	        recog(CSR_NODE_CLIENT, kc, node, dn, ip, U("digital signature", "client auth")));
	assert_false(
	        recog(CSR_NODE_CLIENT, kc, node, dn, uri, U("digital signature", "client auth")));
	assert_false(recog(CSR_NODE_CLIENT, kc, "n1", "CN=n1,O=system:nodes", NULL,
	                   U("digital signature", "client auth")));
	assert_false(recog(CSR_NODE_CLIENT, kc, node, dn, NULL,
	                   U("digital signature", "client auth", "server auth")));
	assert_false(recog(CSR_NODE_CLIENT, kc, node, dn, NULL, U("client auth")));
	assert_false(recog(CSR_NODE_CLIENT, NULL, node, dn, NULL,
	                   U("digital signature", "client auth")));
	assert_string_equal(csr_recognizers[CSR_SELF_NODE_CLIENT].subresource, "selfnodeclient");
	assert_string_equal(csr_recognizers[CSR_NODE_CLIENT].subresource, "nodeclient");
}

/* values with characters RFC 4514 escapes: read and written as the bytes they are */
static void test_special_characters(void **state)
{
	(void)state;
	struct csr_ca ca = load_ca(24 * HOUR);
	struct csr_req r = make_req("CN=Doe\\, John\\+x\\\\y,O=a\\=b", NULL, false);
	assert_string_equal(r.cn, "Doe, John+x\\y");
	assert_int_equal(r.n_orgs, 1);
	assert_string_equal(r.orgs[0], "a=b");
	gnutls_x509_crt_t c = sign_ok(&ca, &r, U("client auth"), HOUR);
	char buf[256];
	size_t size = sizeof(buf);
	assert_int_equal(
	        gnutls_x509_crt_get_dn_by_oid(c, GNUTLS_OID_X520_COMMON_NAME, 0, 1, buf, &size), 0);
	/* the raw value: a UTF8String or PrintableString holding the bytes, no backslash */
	assert_int_equal((unsigned char)buf[1], strlen("Doe, John+x\\y"));
	assert_memory_equal(buf + 2, "Doe, John+x\\y", strlen("Doe, John+x\\y"));
	gnutls_x509_crt_deinit(c);
	csr_req_clear(&r);
	csr_ca_clear(&ca);
}

/* an RSA CA signs with SHA-256 (x509.CreateCertificate's choice for RSA keys) */
static void test_sign_rsa_ca(void **state)
{
	(void)state;
	gnutls_x509_privkey_t k;
	assert_int_equal(gnutls_x509_privkey_init(&k), 0);
	assert_int_equal(gnutls_x509_privkey_generate(k, GNUTLS_PK_RSA, 2048, 0), 0);
	struct pem c = make_ca(k, 24 * HOUR), kp = export_key(k);
	struct csr_ca ca;
	char msg[256];
	assert_int_equal(csr_ca_load(c.p, c.n, kp.p, kp.n, &ca, msg, sizeof(msg)), 0);
	struct csr_req r = make_req("CN=alice", NULL, false);
	gnutls_x509_crt_t crt = sign_ok(&ca, &r, U("client auth"), HOUR);
	assert_int_equal(gnutls_x509_crt_get_signature_algorithm(crt), GNUTLS_SIGN_RSA_SHA256);
	gnutls_x509_crt_deinit(crt);
	csr_req_clear(&r);
	csr_ca_clear(&ca);
	free(c.p);
	free(kp.p);
	gnutls_x509_privkey_deinit(k);
}

int main(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	now_ns = (int64_t)ts.tv_sec * SEC; /* whole seconds, as the certificate keeps them */
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_files),
	        cmocka_unit_test(test_kubelet_serving),
	        cmocka_unit_test(test_kubelet_client),
	        cmocka_unit_test(test_apiserver_client_and_legacy),
	        cmocka_unit_test(test_durations),
	        cmocka_unit_test(test_usage_bits),
	        cmocka_unit_test(test_sign_fields),
	        cmocka_unit_test(test_sign_multi_valued_subject),
	        cmocka_unit_test(test_sign_errors),
	        cmocka_unit_test(test_ca_load),
	        cmocka_unit_test(test_recognizers),
	        cmocka_unit_test(test_special_characters),
	        cmocka_unit_test(test_sign_rsa_ca),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
