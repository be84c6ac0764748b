/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/certificates/cleaner.c: the CSR cleaner's decision (cleaner.h).
 */
#include "workers/certificates/cleaner.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <gnutls/x509.h>

#include "kube/config.h"
#include "kube/model.h"

/* isOlderThan: t set and now - t > d */
static bool older_than(const cJSON *t, int64_t now_ns, int64_t d_ns)
{
	kube_time_t v;
	if (!cJSON_IsString(t) || !*t->valuestring ||
	    kube_time_parse(t->valuestring, strlen(t->valuestring), &v) < 0)
		return false;
	return now_ns - v > d_ns;
}

int csr_cert_not_after(const unsigned char *pem, size_t len, int64_t *ret_ns)
{
	static const char begin[] = "-----BEGIN ", end[] = "-----END ";
	const char *s = (const char *)pem, *lim = s + len, *b = NULL, *e;
	unsigned char *der = NULL;
	size_t der_len = 0;
	gnutls_x509_crt_t crt = NULL;
	int r = -EINVAL;

	/* pem.Decode: the first "-----BEGIN <type>-----" line, its body up to "-----END" */
	for (const char *p = s; p + sizeof(begin) - 1 <= lim; p++)
		if (!memcmp(p, begin, sizeof(begin) - 1) && (p == s || p[-1] == '\n')) {
			b = p;
			break;
		}
	if (!b)
		return -EINVAL;
	b = memchr(b, '\n', (size_t)(lim - b));
	if (!b)
		return -EINVAL;
	b++;
	for (e = b; e + sizeof(end) - 1 <= lim; e++)
		if (!memcmp(e, end, sizeof(end) - 1))
			break;
	if (e + sizeof(end) - 1 > lim)
		return -EINVAL;
	if (kube_base64_decode(b, (size_t)(e - b), &der, &der_len) < 0 || der_len == 0)
		goto out;
	if (gnutls_x509_crt_init(&crt) < 0)
		goto out;
	gnutls_datum_t d = {.data = der, .size = (unsigned)der_len};
	if (gnutls_x509_crt_import(crt, &d, GNUTLS_X509_FMT_DER) < 0)
		goto out;
	time_t na = gnutls_x509_crt_get_expiration_time(crt);
	if (na == (time_t)-1)
		goto out;
	*ret_ns = (int64_t)na * 1000000000;
	r = 0;
out:
	if (crt)
		gnutls_x509_crt_deinit(crt);
	free(der);
	return r;
}

/* isExpired: a certificate that parses, and now after its notAfter */
static bool cert_expired(const cJSON *cert_b64, int64_t now_ns)
{
	unsigned char *pem = NULL;
	size_t n = 0;
	int64_t na;
	bool expired = false;

	if (!cJSON_IsString(cert_b64) ||
	    kube_base64_decode(cert_b64->valuestring, strlen(cert_b64->valuestring), &pem, &n) < 0)
		return false;
	if (csr_cert_not_after(pem, n, &na) == 0)
		expired = now_ns > na;
	free(pem);
	return expired;
}

enum csr_clean csr_cleaner_decide(const char *json, size_t len, int64_t now_ns)
{
	cJSON *o = cJSON_ParseWithLength(json, len), *c;
	enum csr_clean r = CSR_KEEP;
	if (!o)
		return CSR_KEEP;
	const cJSON *status = cJSON_GetObjectItemCaseSensitive(o, "status");
	const cJSON *conds = cJSON_GetObjectItemCaseSensitive(status, "conditions");
	const cJSON *cert = cJSON_GetObjectItemCaseSensitive(status, "certificate");
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(o, "metadata");
	bool issued = cJSON_IsString(cert) && *cert->valuestring; /* len(certificate) > 0 */
	bool approved = false, any = false;

	/* isIssuedPastDeadline, isDeniedPastDeadline, isFailedPastDeadline: each walks every
	 * condition; the first rule (in that order) that holds decides */
	bool is_issued = false, is_denied = false, is_failed = false, is_unissued = false;
	cJSON_ArrayForEach(c, conds)
	{
		const cJSON *type = cJSON_GetObjectItemCaseSensitive(c, "type");
		const cJSON *at = cJSON_GetObjectItemCaseSensitive(c, "lastUpdateTime");
		any = true;
		if (!cJSON_IsString(type))
			continue;
		if (!strcmp(type->valuestring, "Approved")) {
			approved = true;
			if (issued && older_than(at, now_ns, CSR_APPROVED_EXPIRATION_NS))
				is_issued = true;
			if (!issued && older_than(at, now_ns, CSR_PENDING_EXPIRATION_NS))
				is_unissued = true;
		} else if (!strcmp(type->valuestring, "Denied")) {
			if (older_than(at, now_ns, CSR_DENIED_EXPIRATION_NS))
				is_denied = true;
		} else if (!strcmp(type->valuestring, "Failed")) {
			if (older_than(at, now_ns, CSR_DENIED_EXPIRATION_NS))
				is_failed = true;
		}
	}
	if (is_issued)
		r = CSR_CLEAN_ISSUED;
	else if (is_denied)
		r = CSR_CLEAN_DENIED;
	else if (is_failed)
		r = CSR_CLEAN_FAILED;
	else if (!any && older_than(cJSON_GetObjectItemCaseSensitive(meta, "creationTimestamp"),
	                            now_ns, CSR_PENDING_EXPIRATION_NS))
		r = CSR_CLEAN_PENDING; /* isPendingPastDeadline: len(conditions) == 0 */
	else if (is_unissued)
		r = CSR_CLEAN_APPROVED_UNISSUED;
	else if (approved && issued && cert_expired(cert, now_ns))
		r = CSR_CLEAN_EXPIRED; /* isIssuedExpired */
	cJSON_Delete(o);
	return r;
}

const char *csr_cleaner_message(enum csr_clean c)
{
	switch (c) {
	case CSR_CLEAN_ISSUED:
		return "Cleaning CSR as it is more than approvedExpiration duration old and "
		       "approved.";
	case CSR_CLEAN_DENIED:
		return "Cleaning CSR as it is more than deniedExpiration duration old and denied.";
	case CSR_CLEAN_FAILED:
		return "Cleaning CSR as it is more than deniedExpiration duration old and failed.";
	case CSR_CLEAN_PENDING:
		return "Cleaning CSR as it is more than pendingExpiration duration old and "
		       "unhandled.";
	case CSR_CLEAN_APPROVED_UNISSUED:
		return "Cleaning CSR as it is more than pendingExpiration duration old and "
		       "approved "
		       "but not issued.";
	case CSR_CLEAN_EXPIRED:
		return "Cleaning CSR as the associated certificate is expired.";
	case CSR_KEEP:
		break;
	}
	return NULL;
}
