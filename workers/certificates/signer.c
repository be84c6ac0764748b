/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/certificates/signer.c: the built-in signers' rules and signing (signer.h).
 */
#include "workers/certificates/signer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509-ext.h>

const struct csr_signer_desc csr_signers[CSR_SIGNER_N] = {
        [CSR_SIGNER_KUBELET_SERVING] = {"kubernetes.io/kubelet-serving",
                                        "csrsigning-kubelet-serving",
                                        "cluster-signing-kubelet-serving-cert-file",
                                        "cluster-signing-kubelet-serving-key-file"},
        [CSR_SIGNER_KUBELET_CLIENT] = {"kubernetes.io/kube-apiserver-client-kubelet",
                                       "csrsigning-kubelet-client",
                                       "cluster-signing-kubelet-client-cert-file",
                                       "cluster-signing-kubelet-client-key-file"},
        [CSR_SIGNER_APISERVER_CLIENT] = {"kubernetes.io/kube-apiserver-client",
                                         "csrsigning-kube-apiserver-client",
                                         "cluster-signing-kube-apiserver-client-cert-file",
                                         "cluster-signing-kube-apiserver-client-key-file"},
        [CSR_SIGNER_LEGACY_UNKNOWN] = {"kubernetes.io/legacy-unknown", "csrsigning-legacy-unknown",
                                       "cluster-signing-legacy-unknown-cert-file",
                                       "cluster-signing-legacy-unknown-key-file"},
};

int csr_signer_lookup(const char *signer_name)
{
	for (int i = 0; i < CSR_SIGNER_N; i++)
		if (signer_name && !strcmp(signer_name, csr_signers[i].signer_name))
			return i;
	return -1;
}

int csr_signer_files(const char *(*get)(void *ud, const char *flag), void *ud,
                     const char *cert[CSR_SIGNER_N], const char *key[CSR_SIGNER_N], char *msg,
                     size_t msglen)
{
	const char *c = get(ud, "cluster-signing-cert-file"),
	           *k = get(ud, "cluster-signing-key-file");
	bool missing_single = !*c || !*k, any_specific = false, any = false;

	for (int i = 0; i < CSR_SIGNER_N; i++)
		if (*get(ud, csr_signers[i].cert_flag) || *get(ud, csr_signers[i].key_flag))
			any_specific = true;
	if (missing_single && !any_specific) {
		snprintf(msg, msglen,
		         "Skipping CSR signer controller because no csr cert/key was "
		         "specified");
		for (int i = 0; i < CSR_SIGNER_N; i++)
			cert[i] = key[i] = "";
		return 0;
	}
	if (!missing_single && any_specific) {
		snprintf(msg, msglen,
		         "cannot specify default and per controller certs at the same "
		         "time");
		return -EINVAL;
	}
	for (int i = 0; i < CSR_SIGNER_N; i++) {
		cert[i] = any_specific ? get(ud, csr_signers[i].cert_flag) : c;
		key[i] = any_specific ? get(ud, csr_signers[i].key_flag) : k;
		any |= *cert[i] || *key[i];
	}
	return any;
}

/* ---- requests ------------------------------------------------------------------------------ */
void csr_req_clear(struct csr_req *r)
{
	if (r->crq)
		gnutls_x509_crq_deinit(r->crq);
	free(r->cn);
	for (size_t i = 0; i < r->n_orgs; i++)
		free(r->orgs[i]);
	free(r->orgs);
	*r = (struct csr_req){0};
}

/* One attribute value of the request's subject as Go's pkix.Name gets it: the DER value
 * (raw, so no RFC 4514 escaping) decoded when it is a string type encoding/asn1 reads into a
 * string (PrintableString, UTF8String, IA5String, T61String, NumericString, BMPString); any other
 * value is skipped, as FillFromRDNSequence skips it. Returns 1 with *ret (malloc'd), 2 for a
 * value to skip, 0 when there is no value idx, -errno. */
static int dn_value(gnutls_x509_crq_t crq, const char *oid, unsigned idx, char **ret)
{
	size_t size = 0, off, len;
	unsigned char *der;
	char *out;
	int r = gnutls_x509_crq_get_dn_by_oid(crq, oid, idx, 1, NULL, &size);
	if (r == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE)
		return 0;
	if (r != GNUTLS_E_SHORT_MEMORY_BUFFER && r < 0)
		return -EINVAL;
	if (!(der = malloc(size + 1)))
		return -ENOMEM;
	if (gnutls_x509_crq_get_dn_by_oid(crq, oid, idx, 1, der, &size) < 0 || size < 2) {
		free(der);
		return -EINVAL;
	}
	/* tag, definite length */
	unsigned char tag = der[0];
	if (der[1] < 0x80) {
		len = der[1], off = 2;
	} else {
		size_t nl = der[1] & 0x7f;
		if (nl == 0 || nl > 3 || 2 + nl > size) {
			free(der);
			return -EINVAL;
		}
		len = 0;
		for (size_t i = 0; i < nl; i++)
			len = len << 8 | der[2 + i];
		off = 2 + nl;
	}
	if (off + len > size) {
		free(der);
		return -EINVAL;
	}
	switch (tag) {
	case 0x13: /* PrintableString */
	case 0x0c: /* UTF8String */
	case 0x16: /* IA5String */
	case 0x14: /* T61String */
	case 0x12: /* NumericString */
		if (!(out = malloc(len + 1))) {
			free(der);
			return -ENOMEM;
		}
		memcpy(out, der + off, len);
		out[len] = 0;
		if (strlen(out) != len) { /* an embedded NUL: not a string Go would keep */
			free(out);
			free(der);
			return 2;
		}
		break;
	case 0x1e: { /* BMPString: UCS-2 big-endian to UTF-8 */
		if (len % 2 || !(out = malloc(len / 2 * 3 + 1))) {
			free(der);
			return len % 2 ? 2 : -ENOMEM;
		}
		size_t o = 0;
		for (size_t i = 0; i < len; i += 2) {
			unsigned c = (unsigned)der[off + i] << 8 | der[off + i + 1];
			if (c == 0 || (c >= 0xd800 && c <= 0xdfff)) {
				free(out);
				free(der);
				return 2;
			}
			if (c < 0x80) {
				out[o++] = (char)c;
			} else if (c < 0x800) {
				out[o++] = (char)(0xc0 | c >> 6);
				out[o++] = (char)(0x80 | (c & 0x3f));
			} else {
				out[o++] = (char)(0xe0 | c >> 12);
				out[o++] = (char)(0x80 | ((c >> 6) & 0x3f));
				out[o++] = (char)(0x80 | (c & 0x3f));
			}
		}
		out[o] = 0;
		break;
	}
	default:
		free(der);
		return 2;
	}
	free(der);
	*ret = out;
	return 1;
}

int csr_req_parse(const unsigned char *pem, size_t len, struct csr_req *ret, char *msg,
                  size_t msglen)
{
	static const char begin[] = "-----BEGIN ", want[] = "CERTIFICATE REQUEST-----";
	const char *s = (const char *)pem, *lim = s + len, *b = NULL;
	struct csr_req r = {0};
	int err = 0;

	/* pem.Decode's first block, whose type must be CERTIFICATE REQUEST */
	for (const char *p = s; p + sizeof(begin) - 1 <= lim; p++)
		if (!memcmp(p, begin, sizeof(begin) - 1) && (p == s || p[-1] == '\n')) {
			b = p + sizeof(begin) - 1;
			break;
		}
	if (!b || (size_t)(lim - b) < sizeof(want) - 1 || memcmp(b, want, sizeof(want) - 1)) {
		snprintf(msg, msglen, "PEM block type must be CERTIFICATE REQUEST");
		return -EINVAL;
	}
	b -= sizeof(begin) - 1;
	gnutls_datum_t d = {.data = (unsigned char *)b, .size = (unsigned)(lim - b)};
	if (gnutls_x509_crq_init(&r.crq) < 0)
		return -ENOMEM;
	int g = gnutls_x509_crq_import(r.crq, &d, GNUTLS_X509_FMT_PEM);
	if (g < 0) {
		snprintf(msg, msglen, "%s", gnutls_strerror(g));
		csr_req_clear(&r);
		return -EINVAL;
	}
	/* pkix.Name: CommonName is the last CN; Organization every O, in order */
	for (unsigned i = 0;; i++) {
		char *v = NULL;
		int got = dn_value(r.crq, GNUTLS_OID_X520_COMMON_NAME, i, &v);
		if (got <= 0) {
			err = got;
			break;
		}
		if (got == 2)
			continue;
		free(r.cn);
		r.cn = v;
	}
	for (unsigned i = 0; !err; i++) {
		char *v = NULL, **g2;
		int got = dn_value(r.crq, GNUTLS_OID_X520_ORGANIZATION_NAME, i, &v);
		if (got <= 0) {
			err = got;
			break;
		}
		if (got == 2)
			continue;
		if (!(g2 = realloc(r.orgs, (r.n_orgs + 1) * sizeof(*g2)))) {
			free(v);
			err = -ENOMEM;
			break;
		}
		r.orgs = g2;
		r.orgs[r.n_orgs++] = v;
	}
	if (!err && !r.cn && !(r.cn = strdup("")))
		err = -ENOMEM;
	for (unsigned i = 0; !err; i++) {
		unsigned type = 0;
		unsigned char buf[4096];
		size_t size = sizeof(buf);
		int t = gnutls_x509_crq_get_subject_alt_name(r.crq, i, buf, &size, &type, NULL);
		if (t == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE)
			break;
		if (t < 0) {
			err = -EINVAL;
			break;
		}
		switch (t) {
		case GNUTLS_SAN_DNSNAME:
			r.n_dns++;
			break;
		case GNUTLS_SAN_IPADDRESS:
			r.n_ip++;
			break;
		case GNUTLS_SAN_RFC822NAME:
			r.n_email++;
			break;
		case GNUTLS_SAN_URI:
			r.n_uri++;
			break;
		default:
			break;
		}
	}
	if (err) {
		snprintf(msg, msglen, "%s", err == -ENOMEM ? "out of memory" : "malformed request");
		csr_req_clear(&r);
		return err;
	}
	*ret = r;
	return 0;
}

/* ---- the signers' rules -----------------------------------------------------------------------
 */
static bool has(const char *const *u, size_t n, const char *v)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(u[i], v))
			return true;
	return false;
}

/* sets.NewString(usages...).Equal(want): the same set, duplicates ignored */
static bool same_set(const char *const *u, size_t n, const char *const *want, size_t nw)
{
	for (size_t i = 0; i < n; i++)
		if (!has(want, nw, u[i]))
			return false;
	for (size_t i = 0; i < nw; i++)
		if (!has(u, n, want[i]))
			return false;
	return true;
}

static bool only_system_nodes(const struct csr_req *r)
{
	return r->n_orgs == 1 && !strcmp(r->orgs[0], "system:nodes");
}

static bool node_cn(const struct csr_req *r)
{
	return !strncmp(r->cn, "system:node:", 12);
}

int csr_signer_validate(enum csr_signer s, const struct csr_req *r, const char *const *usages,
                        size_t n, char *msg, size_t msglen)
{
	static const char *const serving[] = {"digital signature", "key encipherment",
	                                      "server auth"};
	static const char *const serving_no_rsa[] = {"digital signature", "server auth"};
	static const char *const client[] = {"client auth", "digital signature",
	                                     "key encipherment"};
	static const char *const client_no_rsa[] = {"digital signature", "client auth"};
	const char *e = NULL;

	switch (s) {
	case CSR_SIGNER_KUBELET_SERVING: /* ValidateKubeletServingCSR */
		if (!only_system_nodes(r))
			e = "subject organization is not system:nodes";
		else if (!r->n_dns && !r->n_ip)
			e = "DNS or IP subjectAltName is required";
		else if (r->n_email)
			e = "Email subjectAltNames are not allowed";
		else if (r->n_uri)
			e = "URI subjectAltNames are not allowed";
		else if (!same_set(usages, n, serving, 3) &&
		         !same_set(usages, n, serving_no_rsa, 2))
			e = "usages did not match [digital signature key encipherment server auth]";
		else if (!node_cn(r))
			e = "subject common name does not begin with system:node:";
		break;
	case CSR_SIGNER_KUBELET_CLIENT: /* ValidateKubeletClientCSR */
		if (!only_system_nodes(r))
			e = "subject organization is not system:nodes";
		else if (r->n_dns)
			e = "DNS subjectAltNames are not allowed";
		else if (r->n_email)
			e = "Email subjectAltNames are not allowed";
		else if (r->n_ip)
			e = "IP subjectAltNames are not allowed";
		else if (r->n_uri)
			e = "URI subjectAltNames are not allowed";
		else if (!node_cn(r))
			e = "subject common name does not begin with system:node:";
		else if (!same_set(usages, n, client, 3) && !same_set(usages, n, client_no_rsa, 2))
			e = "usages did not match [client auth digital signature key encipherment]";
		break;
	case CSR_SIGNER_APISERVER_CLIENT: { /* validAPIServerClientUsages */
		bool client_auth = false;
		for (size_t i = 0; i < n; i++) {
			if (!strcmp(usages[i], "client auth"))
				client_auth = true;
			else if (strcmp(usages[i], "digital signature") &&
			         strcmp(usages[i], "key encipherment")) {
				snprintf(msg, msglen, "invalid usage for client certificate: %s",
				         usages[i]);
				return 1;
			}
		}
		if (!client_auth)
			e = "missing required usage for client certificate: client auth";
		break;
	}
	case CSR_SIGNER_LEGACY_UNKNOWN: /* no restrictions */
	case CSR_SIGNER_N:
		break;
	}
	if (!e)
		return 0;
	snprintf(msg, msglen, "%s", e);
	return 1;
}

int64_t csr_duration(int64_t ttl_ns, bool has_exp, int64_t exp_seconds)
{
	const int64_t min = 10ll * 60 * 1000000000;
	if (!has_exp)
		return ttl_ns;
	int64_t req = exp_seconds * 1000000000; /* ExpirationSecondsToDuration */
	if (req > ttl_ns)
		return ttl_ns;
	if (req < min)
		return min;
	return req;
}

/* ---- usages ------------------------------------------------------------------------------------
 */
static const struct {
	const char *usage;
	unsigned bit;
} key_usages[] = {
        {"signing", GNUTLS_KEY_DIGITAL_SIGNATURE},
        {"digital signature", GNUTLS_KEY_DIGITAL_SIGNATURE},
        {"content commitment", GNUTLS_KEY_NON_REPUDIATION},
        {"key encipherment", GNUTLS_KEY_KEY_ENCIPHERMENT},
        {"key agreement", GNUTLS_KEY_KEY_AGREEMENT},
        {"data encipherment", GNUTLS_KEY_DATA_ENCIPHERMENT},
        {"cert sign", GNUTLS_KEY_KEY_CERT_SIGN},
        {"crl sign", GNUTLS_KEY_CRL_SIGN},
        {"encipher only", GNUTLS_KEY_ENCIPHER_ONLY},
        {"decipher only", GNUTLS_KEY_DECIPHER_ONLY},
};
/* in Go's x509.ExtKeyUsage order (the certificate lists them sorted by it) */
static const struct {
	const char *usage;
	int rank;
	const char *oid;
} ext_usages[] = {
        {"any", 0, "2.5.29.37.0"},
        {"server auth", 1, GNUTLS_KP_TLS_WWW_SERVER},
        {"client auth", 2, GNUTLS_KP_TLS_WWW_CLIENT},
        {"code signing", 3, GNUTLS_KP_CODE_SIGNING},
        {"email protection", 4, GNUTLS_KP_EMAIL_PROTECTION},
        {"s/mime", 4, GNUTLS_KP_EMAIL_PROTECTION},
        {"ipsec end system", 5, "1.3.6.1.5.5.7.3.5"},
        {"ipsec tunnel", 6, "1.3.6.1.5.5.7.3.6"},
        {"ipsec user", 7, "1.3.6.1.5.5.7.3.7"},
        {"timestamping", 8, GNUTLS_KP_TIME_STAMPING},
        {"ocsp signing", 9, GNUTLS_KP_OCSP_SIGNING},
        {"microsoft sgc", 10, "1.3.6.1.4.1.311.10.3.3"},
        {"netscape sgc", 11, "2.16.840.1.113730.4.1"},
};

int csr_usage_bits(const char *const *usages, size_t n, unsigned *ret_bits,
                   const char *ret_oids[12], size_t *ret_n_oids, char *msg, size_t msglen)
{
	unsigned bits = 0;
	bool rank[12] = {0};
	size_t off = 0, n_oids = 0, bad = 0;

	for (size_t i = 0; i < n; i++) {
		bool found = false;
		for (size_t k = 0; k < sizeof(key_usages) / sizeof(key_usages[0]); k++)
			if (!strcmp(usages[i], key_usages[k].usage)) {
				bits |= key_usages[k].bit;
				found = true;
			}
		for (size_t k = 0; !found && k < sizeof(ext_usages) / sizeof(ext_usages[0]); k++)
			if (!strcmp(usages[i], ext_usages[k].usage)) {
				rank[ext_usages[k].rank] = true;
				found = true;
			}
		if (!found) {
			/* %q of the unrecognized values */
			if (!bad++)
				off += (size_t)snprintf(msg + off, off < msglen ? msglen - off : 0,
				                        "unrecognized usage values: [");
			off += (size_t)snprintf(msg + off, off < msglen ? msglen - off : 0,
			                        "%s\"%s\"", bad > 1 ? " " : "", usages[i]);
		}
	}
	if (bad) {
		if (off < msglen)
			snprintf(msg + off, msglen - off, "]");
		return -EINVAL;
	}
	for (int r = 0; r < 12; r++)
		if (rank[r])
			for (size_t k = 0; k < sizeof(ext_usages) / sizeof(ext_usages[0]); k++)
				if (ext_usages[k].rank == r) {
					ret_oids[n_oids++] = ext_usages[k].oid;
					break;
				}
	*ret_bits = bits;
	*ret_n_oids = n_oids;
	return 0;
}

/* ---- the CA and signing ---------------------------------------------------------------------- */
void csr_ca_clear(struct csr_ca *ca)
{
	if (ca->crt)
		gnutls_x509_crt_deinit(ca->crt);
	if (ca->key)
		gnutls_privkey_deinit(ca->key);
	*ca = (struct csr_ca){0};
}

static size_t count_certs(const unsigned char *pem, size_t len)
{
	static const char b[] = "-----BEGIN CERTIFICATE-----";
	size_t n = 0;
	for (size_t i = 0; i + sizeof(b) - 1 <= len; i++)
		if (!memcmp(pem + i, b, sizeof(b) - 1))
			n++;
	return n;
}

int csr_ca_load(const unsigned char *cert, size_t cert_len, const unsigned char *key,
                size_t key_len, struct csr_ca *ret, char *msg, size_t msglen)
{
	struct csr_ca ca = {0};
	gnutls_pubkey_t a = NULL, b = NULL;
	gnutls_datum_t cd = {.data = (unsigned char *)cert, .size = (unsigned)cert_len},
	               kd = {.data = (unsigned char *)key, .size = (unsigned)key_len}, ea = {0},
	               eb = {0};
	int g;

	/* dynamic serving content's loadCertKeyPair (empty content, then tls.X509KeyPair: PEM
	 * data, the key, the match), then signingAuthority (exactly one certificate) */
	if (cert_len == 0 || key_len == 0) {
		snprintf(msg, msglen, "missing content for serving cert");
		return -EINVAL;
	}
	size_t n_certs = count_certs(cert, cert_len);
	if (n_certs == 0) {
		snprintf(msg, msglen, "tls: failed to find any PEM data in certificate input");
		return -EINVAL;
	}
	if (!memmem(key, key_len, "-----BEGIN ", 11) ||
	    !memmem(key, key_len, "PRIVATE KEY-----", 16)) {
		snprintf(msg, msglen, "tls: failed to find any PEM data in key input");
		return -EINVAL;
	}
	if ((g = gnutls_x509_crt_init(&ca.crt)) < 0 ||
	    (g = gnutls_x509_crt_import(ca.crt, &cd, GNUTLS_X509_FMT_PEM)) < 0) {
		snprintf(msg, msglen, "x509: malformed certificate (%s)", gnutls_strerror(g));
		goto fail;
	}
	if ((g = gnutls_privkey_init(&ca.key)) < 0 ||
	    (g = gnutls_privkey_import_x509_raw(ca.key, &kd, GNUTLS_X509_FMT_PEM, NULL, 0)) < 0) {
		snprintf(msg, msglen, "tls: failed to parse private key");
		goto fail;
	}
	/* tls.X509KeyPair: the key is the certificate's */
	if (gnutls_pubkey_init(&a) < 0 || gnutls_pubkey_init(&b) < 0 ||
	    gnutls_pubkey_import_x509(a, ca.crt, 0) < 0 ||
	    gnutls_pubkey_import_privkey(b, ca.key, 0, 0) < 0 ||
	    gnutls_pubkey_export2(a, GNUTLS_X509_FMT_DER, &ea) < 0 ||
	    gnutls_pubkey_export2(b, GNUTLS_X509_FMT_DER, &eb) < 0 || ea.size != eb.size ||
	    memcmp(ea.data, eb.data, ea.size)) {
		snprintf(msg, msglen, "tls: private key does not match public key");
		goto fail;
	}
	if (n_certs != 1) {
		snprintf(msg, msglen, "expected 1 certificate, found %zu", n_certs);
		goto fail;
	}
	ca.not_after_ns = (int64_t)gnutls_x509_crt_get_expiration_time(ca.crt) * 1000000000;
	gnutls_free(ea.data);
	gnutls_free(eb.data);
	gnutls_pubkey_deinit(a);
	gnutls_pubkey_deinit(b);
	*ret = ca;
	return 0;
fail:
	gnutls_free(ea.data);
	gnutls_free(eb.data);
	if (a)
		gnutls_pubkey_deinit(a);
	if (b)
		gnutls_pubkey_deinit(b);
	csr_ca_clear(&ca);
	return -EINVAL;
}

static void go_time(int64_t ns, char buf[64])
{
	time_t s = (time_t)(ns / 1000000000);
	struct tm tm;
	gmtime_r(&s, &tm);
	strftime(buf, 64, "%Y-%m-%d %H:%M:%S +0000 UTC", &tm);
}

/* ---- the subject ------------------------------------------------------------------------- */
/* a growing DER buffer */
struct der {
	unsigned char *b;
	size_t n, cap;
	int err;
};

static void der_put(struct der *d, const void *p, size_t n)
{
	if (d->err)
		return;
	if (d->n + n > d->cap) {
		size_t cap = (d->n + n) * 2 + 64;
		unsigned char *g = realloc(d->b, cap);
		if (!g) {
			d->err = -ENOMEM;
			return;
		}
		d->b = g, d->cap = cap;
	}
	memcpy(d->b + d->n, p, n);
	d->n += n;
}

static void der_tlv(struct der *d, unsigned char tag, const void *p, size_t n)
{
	unsigned char h[6];
	size_t hn = 0;
	h[hn++] = tag;
	if (n < 0x80) {
		h[hn++] = (unsigned char)n;
	} else {
		unsigned char l[4];
		size_t ln = 0;
		for (size_t v = n; v; v >>= 8)
			l[ln++] = (unsigned char)v;
		h[hn++] = (unsigned char)(0x80 | ln);
		while (ln)
			h[hn++] = l[--ln];
	}
	der_put(d, h, hn);
	der_put(d, p, n);
}

/* encoding/asn1's default string type: PrintableString when every byte is in its set, else
 * UTF8String */
static unsigned char go_string_tag(const char *v)
{
	for (const unsigned char *p = (const unsigned char *)v; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr(" '()+,-./:=?", *p)))
			return 0x0c;
	return 0x13;
}

static int oid_der(const char *oid, struct der *d)
{
	unsigned long arcs[16];
	size_t n = 0;
	char *end;
	for (const char *p = oid; *p && n < 16; p = *end ? end + 1 : end) {
		arcs[n++] = strtoul(p, &end, 10);
		if (end == p)
			return -EINVAL;
	}
	if (n < 2)
		return -EINVAL;
	unsigned char body[64];
	size_t bn = 0;
	body[bn++] = (unsigned char)(arcs[0] * 40 + arcs[1]);
	for (size_t i = 2; i < n; i++) {
		unsigned char t[8];
		size_t tn = 0;
		unsigned long v = arcs[i];
		do
			t[tn++] = (unsigned char)(v & 0x7f);
		while (v >>= 7);
		while (tn) {
			tn--;
			body[bn++] = (unsigned char)(t[tn] | (tn ? 0x80 : 0));
		}
	}
	der_tlv(d, 0x06, body, bn);
	return 0;
}

static int cmp_enc(const void *a, const void *b)
{
	const struct der *x = a, *y = b;
	size_t n = x->n < y->n ? x->n : y->n;
	int c = memcmp(x->b, y->b, n);
	return c ? c : (x->n > y->n) - (x->n < y->n);
}

static const struct {
	const char *oid;
	bool single;
} name_attrs[] = {
        {GNUTLS_OID_X520_COUNTRY_NAME, false},
        {GNUTLS_OID_X520_STATE_OR_PROVINCE_NAME, false},
        {GNUTLS_OID_X520_LOCALITY_NAME, false},
        {"2.5.4.9", false},
        {"2.5.4.17", false},
        {GNUTLS_OID_X520_ORGANIZATION_NAME, false},
        {GNUTLS_OID_X520_ORGANIZATIONAL_UNIT_NAME, false},
        {GNUTLS_OID_X520_COMMON_NAME, true},
        {"2.5.4.5", true},
};
#define N_NAME_ATTRS (sizeof(name_attrs) / sizeof(name_attrs[0]))
#define MAX_VALUES   256

/* The request's subject as x509.CreateCertificate writes it from the parsed pkix.Name
 * (ToRDNSequence): one RDN per attribute type holding all its values (a SET, in DER order),
 * in the order C, ST, L, street, postalCode, O, OU, CN, serialNumber (CN and serialNumber:
 * the request's last one); other attributes are dropped. Into *ret (DER); 0 or -errno. The
 * values, per attribute, go to vals/which for the fallback. */
static int go_name(gnutls_x509_crq_t crq, struct der *ret, char **vals, size_t *which,
                   size_t *ret_n)
{
	struct der name = {0};
	size_t n = 0;
	int err = 0;

	for (size_t k = 0; k < N_NAME_ATTRS && !err; k++) {
		char *last = NULL;
		size_t first = n;
		for (unsigned i = 0;; i++) {
			char *v = NULL;
			int d = dn_value(crq, name_attrs[k].oid, i, &v);
			if (d <= 0) {
				err = d;
				break;
			}
			if (d == 2)
				continue;
			if (name_attrs[k].single) {
				free(last);
				last = v;
				continue;
			}
			if (n == MAX_VALUES) {
				free(v);
				err = -E2BIG;
				break;
			}
			which[n] = k, vals[n++] = v;
		}
		if (last && *last && n < MAX_VALUES)
			which[n] = k, vals[n++] = last;
		else
			free(last);
		if (err || n == first)
			continue;
		/* SET OF AttributeTypeAndValue, sorted by encoding */
		struct der atv[MAX_VALUES] = {{0}}, set = {0};
		size_t m = n - first;
		for (size_t i = 0; i < m; i++) {
			struct der body = {0};
			if (oid_der(name_attrs[k].oid, &body) < 0)
				err = -EINVAL;
			der_tlv(&body, go_string_tag(vals[first + i]), vals[first + i],
			        strlen(vals[first + i]));
			der_tlv(&atv[i], 0x30, body.b, body.n);
			err = err ? err : body.err ? body.err : atv[i].err;
			free(body.b);
		}
		qsort(atv, m, sizeof(atv[0]), cmp_enc);
		for (size_t i = 0; i < m; i++) {
			der_put(&set, atv[i].b, atv[i].n);
			free(atv[i].b);
		}
		der_tlv(&name, 0x31, set.b, set.n);
		err = err ? err : set.err;
		free(set.b);
	}
	*ret_n = n;
	if (!err) {
		der_tlv(ret, 0x30, name.b, name.n);
		err = ret->err;
	}
	free(name.b);
	return err;
}

/* Sets crt's subject (and public key) from the request. gnutls cannot write a multi-valued
 * RDN, so the request's own subject is copied when it already is Go's encoding (always, for a
 * request made by Go: kubelet, kubeadm, client-go), else the attributes are set one RDN each
 * (the same text; differs from upstream's bytes only for a type with several values). */
static int copy_subject(gnutls_x509_crt_t *crtp, gnutls_x509_crq_t crq, bool *ret_empty)
{
	char *vals[MAX_VALUES];
	size_t which[MAX_VALUES], n = 0;
	struct der want = {0};
	gnutls_datum_t raw = {0};
	gnutls_pubkey_t pub = NULL;
	gnutls_x509_crt_t fresh = NULL;
	int r;

	if ((r = go_name(crq, &want, vals, which, &n)) < 0)
		goto out;
	*ret_empty = n == 0;
	r = -EINVAL;
	if (gnutls_x509_crt_set_crq(*crtp, crq) < 0) /* subject and key, as the request has them */
		goto out;
	if (gnutls_x509_crt_get_raw_dn(*crtp, &raw) >= 0 && raw.size == want.n &&
	    !memcmp(raw.data, want.b, want.n)) {
		r = 0;
		goto out;
	}
	/* no API clears a subject: a new certificate with the key and the attributes one by one
	 * replaces *crtp (nothing else was set on it yet) */
	if (gnutls_pubkey_init(&pub) < 0 || gnutls_pubkey_import_x509_crq(pub, crq, 0) < 0 ||
	    gnutls_x509_crt_init(&fresh) < 0 || gnutls_x509_crt_set_pubkey(fresh, pub) < 0)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (gnutls_x509_crt_set_dn_by_oid(fresh, name_attrs[which[i]].oid, 0, vals[i],
		                                  (unsigned)strlen(vals[i])) < 0)
			goto out;
	gnutls_x509_crt_deinit(*crtp);
	*crtp = fresh;
	fresh = NULL;
	r = 0;
out:
	if (fresh)
		gnutls_x509_crt_deinit(fresh);
	if (pub)
		gnutls_pubkey_deinit(pub);
	gnutls_free(raw.data);
	free(want.b);
	for (size_t i = 0; i < n; i++)
		free(vals[i]);
	return r;
}

/* marshalSANs: DNS names, emails, IPs, URIs (in that order); critical when the subject is
 * empty */
static int copy_sans(gnutls_x509_crt_t crt, gnutls_x509_crq_t crq, bool empty_subject)
{
	static const unsigned order[] = {GNUTLS_SAN_DNSNAME, GNUTLS_SAN_RFC822NAME,
	                                 GNUTLS_SAN_IPADDRESS, GNUTLS_SAN_URI};
	gnutls_subject_alt_names_t sans = NULL;
	gnutls_datum_t der = {0};
	unsigned count = 0;
	int r = -EINVAL;

	if (gnutls_subject_alt_names_init(&sans) < 0)
		return -ENOMEM;
	for (size_t o = 0; o < 4; o++)
		for (unsigned i = 0;; i++) {
			unsigned char buf[4096];
			size_t size = sizeof(buf);
			unsigned type = 0;
			int t = gnutls_x509_crq_get_subject_alt_name(crq, i, buf, &size, &type,
			                                             NULL);
			if (t == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE)
				break;
			if (t < 0)
				goto out;
			if ((unsigned)t != order[o])
				continue;
			gnutls_datum_t d = {.data = buf, .size = (unsigned)size};
			if (gnutls_subject_alt_names_set(sans, (unsigned)t, &d, NULL) < 0)
				goto out;
			count++;
		}
	if (count == 0) {
		r = 0;
		goto out;
	}
	if (gnutls_x509_ext_export_subject_alt_names(sans, &der) < 0 ||
	    gnutls_x509_crt_set_extension_by_oid(crt, "2.5.29.17", der.data, der.size,
	                                         empty_subject) < 0)
		goto out;
	r = 0;
out:
	gnutls_free(der.data);
	gnutls_subject_alt_names_deinit(sans);
	return r;
}

static gnutls_digest_algorithm_t ca_digest(const struct csr_ca *ca)
{
	unsigned bits = 0;
	int pk = gnutls_privkey_get_pk_algorithm(ca->key, &bits);
	if (pk == GNUTLS_PK_ECDSA) {
		gnutls_ecc_curve_t curve;
		if (gnutls_privkey_export_ecc_raw(ca->key, &curve, NULL, NULL, NULL) >= 0) {
			if (curve == GNUTLS_ECC_CURVE_SECP384R1)
				return GNUTLS_DIG_SHA384;
			if (curve == GNUTLS_ECC_CURVE_SECP521R1)
				return GNUTLS_DIG_SHA512;
		}
		return GNUTLS_DIG_SHA256;
	}
	if (pk == GNUTLS_PK_EDDSA_ED25519 || pk == GNUTLS_PK_EDDSA_ED448)
		return GNUTLS_DIG_UNKNOWN;
	return GNUTLS_DIG_SHA256;
}

int csr_sign(const struct csr_ca *ca, const struct csr_req *r, const char *const *usages, size_t n,
             int64_t ttl_ns, int64_t now_ns, char **ret_pem, size_t *ret_len, char *msg,
             size_t msglen)
{
	const int64_t backdate = 5ll * 60 * 1000000000, short_ttl = 8ll * 3600 * 1000000000;
	gnutls_x509_crt_t crt = NULL;
	gnutls_datum_t out = {0};
	unsigned char serial[16], ski[64];
	size_t ski_len = sizeof(ski);
	const char *oids[12];
	size_t n_oids = 0;
	unsigned bits = 0;
	char when[64];
	int g, ret = -EINVAL;

	int64_t nbf = now_ns - backdate;
	if (nbf >= ca->not_after_ns) {
		go_time(ca->not_after_ns, when);
		snprintf(msg, msglen, "the signer has expired: NotAfter=%s", when);
		return -EINVAL;
	}
	if ((g = gnutls_x509_crq_verify(r->crq, 0)) < 0) {
		snprintf(msg, msglen, "unable to verify certificate request signature: %s",
		         gnutls_strerror(g));
		return -EINVAL;
	}
	if (csr_usage_bits(usages, n, &bits, oids, &n_oids, msg, msglen) < 0)
		return -EINVAL;
	int64_t na = ttl_ns < short_ttl ? now_ns + ttl_ns : now_ns + ttl_ns - backdate;
	if (na >= ca->not_after_ns)
		na = ca->not_after_ns;
	if (now_ns >= ca->not_after_ns) {
		go_time(ca->not_after_ns, when);
		snprintf(msg, msglen,
		         "refusing to sign a certificate that expired in the past: "
		         "NotAfter=%s",
		         when);
		return -EINVAL;
	}
	/* rand.Int(rand.Reader, 2^128): 16 random bytes; DER wants a positive INTEGER without
	 * leading zero bytes, which gnutls_x509_crt_set_serial handles by its own encoding */
	if (gnutls_rnd(GNUTLS_RND_KEY, serial, sizeof(serial)) < 0) {
		snprintf(msg, msglen, "unable to generate a serial number for %s", r->cn);
		return -EIO;
	}
	if (gnutls_x509_crt_init(&crt) < 0) {
		ret = -ENOMEM;
		goto out;
	}
	size_t skip = 0;
	while (skip < sizeof(serial) - 1 && serial[skip] == 0)
		skip++;
	bool subj_empty = false;
	/* a DER INTEGER is signed and minimal: a 0x00 before a first byte >= 0x80 (Go's
	 * parser refuses negative and non-minimal serials) */
	unsigned char ser[sizeof(serial) + 1];
	size_t ser_len = 0;
	if (serial[skip] & 0x80)
		ser[ser_len++] = 0;
	memcpy(ser + ser_len, serial + skip, sizeof(serial) - skip);
	ser_len += sizeof(serial) - skip;
	if ((g = copy_subject(&crt, r->crq, &subj_empty)) < 0)
		goto gerr;
	if ((g = gnutls_x509_crt_set_version(crt, 3)) < 0 ||
	    (g = gnutls_x509_crt_set_serial(crt, ser, ser_len)) < 0)
		goto gerr;
	if ((g = gnutls_x509_crt_set_activation_time(crt, (time_t)(nbf / 1000000000))) < 0 ||
	    (g = gnutls_x509_crt_set_expiration_time(crt, (time_t)(na / 1000000000))) < 0)
		goto gerr;
	if (bits && (g = gnutls_x509_crt_set_key_usage(crt, bits)) < 0)
		goto gerr;
	for (size_t i = 0; i < n_oids; i++)
		if ((g = gnutls_x509_crt_set_key_purpose_oid(crt, oids[i], 0)) < 0)
			goto gerr;
	if ((g = gnutls_x509_crt_set_basic_constraints(crt, 0, -1)) < 0)
		goto gerr;
	if ((g = copy_sans(crt, r->crq, subj_empty)) < 0)
		goto gerr;
	/* x509.CreateCertificate: the authority key id is the parent's subject key id */
	if (gnutls_x509_crt_get_subject_key_id(ca->crt, ski, &ski_len, NULL) >= 0 &&
	    (g = gnutls_x509_crt_set_authority_key_id(crt, ski, ski_len)) < 0)
		goto gerr;
	if ((g = gnutls_x509_crt_privkey_sign(crt, ca->crt, ca->key, ca_digest(ca), 0)) < 0)
		goto gerr;
	if ((g = gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &out)) < 0)
		goto gerr;
	if (!(*ret_pem = malloc(out.size + 1))) {
		ret = -ENOMEM;
		goto out;
	}
	memcpy(*ret_pem, out.data, out.size);
	(*ret_pem)[out.size] = 0;
	*ret_len = out.size;
	ret = 0;
	goto out;
gerr:
	snprintf(msg, msglen, "failed to sign certificate: %s",
	         g < 0 && g > -1000 ? gnutls_strerror(g) : "error");
	ret = -EINVAL;
out:
	gnutls_free(out.data);
	if (crt)
		gnutls_x509_crt_deinit(crt);
	return ret;
}

/* ---- the approver's recognizers ------------------------------------------------------------- */
const struct csr_recognizer_desc csr_recognizers[CSR_RECOGNIZER_N] = {
        [CSR_SELF_NODE_CLIENT] = {"selfnodeclient", "Auto approving self kubelet client "
                                                    "certificate after SubjectAccessReview."},
        [CSR_NODE_CLIENT] =
                {"nodeclient",
                 "Auto approving kubelet client certificate after SubjectAccessReview."},
};

bool csr_recognize(enum csr_recognizer k, const char *signer_name, const char *username,
                   const struct csr_req *r, const char *const *usages, size_t n)
{
	char msg[128];
	if (k == CSR_SELF_NODE_CLIENT && strcmp(username ? username : "", r->cn))
		return false;
	/* isNodeClientCert */
	return signer_name &&
	       !strcmp(signer_name, csr_signers[CSR_SIGNER_KUBELET_CLIENT].signer_name) &&
	       csr_signer_validate(CSR_SIGNER_KUBELET_CLIENT, r, usages, n, msg, sizeof(msg)) == 0;
}
