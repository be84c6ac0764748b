/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CSR cleaner's decision (workers/certificates/cleaner.h) with the cases of upstream's
 * TestCleanerWithApprovedExpiredCSR (cleaner_test.go, certificates/v1): approved not past the
 * deadline, approved past it but not issued, approved and issued past it, denied before and
 * after the deadline, failed before and after, pending before and after 24 h, approved with an
 * unexpired certificate, approved with an expired one, approved past the deadline with a
 * certificate that does not parse. Added: approved and never issued for more than 24 h
 * (kubernetes#133116), an expired certificate without an Approved condition (kept), a zero
 * lastUpdateTime (never "older"), malformed JSON, and csr_cert_not_after's errors.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gnutls/gnutls.h>

#include "kube/model.h"
#include "workers/certificates/cleaner.h"

/* upstream's expiredCert (notAfter 2017-10-03) and unexpiredCert (notAfter 2117-09-10) */
static const char expired_cert[] =
        "-----BEGIN CERTIFICATE-----\n"
        "MIICIzCCAc2gAwIBAgIJAOApTlMFDOUnMA0GCSqGSIb3DQEBCwUAMG0xCzAJBgNV\n"
        "BAYTAkdCMQ8wDQYDVQQIDAZMb25kb24xDzANBgNVBAcMBkxvbmRvbjEYMBYGA1UE\n"
        "CgwPR2xvYmFsIFNlY3VyaXR5MRYwFAYDVQQLDA1JVCBEZXBhcnRtZW50MQowCAYD\n"
        "VQQDDAEqMB4XDTE3MTAwNDIwNDgzOFoXDTE3MTAwMzIwNDgzOFowbTELMAkGA1UE\n"
        "BhMCR0IxDzANBgNVBAgMBkxvbmRvbjEPMA0GA1UEBwwGTG9uZG9uMRgwFgYDVQQK\n"
        "DA9HbG9iYWwgU2VjdXJpdHkxFjAUBgNVBAsMDUlUIERlcGFydG1lbnQxCjAIBgNV\n"
        "BAMMASowXDANBgkqhkiG9w0BAQEFAANLADBIAkEA3Gt0KmuRXDxvqZUiX/xqAn1t\n"
        "nZZX98guZvPPyxnQtV3YpA274W0sX3jL+U71Ya+3kaUstXQa4YrWBUHiXoqJnwID\n"
        "AQABo1AwTjAdBgNVHQ4EFgQUtDsIpzHoUiLsO88f9fm+G0tYSPowHwYDVR0jBBgw\n"
        "FoAUtDsIpzHoUiLsO88f9fm+G0tYSPowDAYDVR0TBAUwAwEB/zANBgkqhkiG9w0B\n"
        "AQsFAANBADfrlKof5CUkxGlX9Rifxv/mWOk8ZuTLWfMYQH2nycBHnmOxy6sR+87W\n"
        "/Mb/uRz0TXVnGVcbu5E8Bz7e/Far1ZI=\n"
        "-----END CERTIFICATE-----";
static const char unexpired_cert[] =
        "-----BEGIN CERTIFICATE-----\n"
        "MIICJTCCAc+gAwIBAgIJAIRjMToP+pPEMA0GCSqGSIb3DQEBCwUAMG0xCzAJBgNV\n"
        "BAYTAkdCMQ8wDQYDVQQIDAZMb25kb24xDzANBgNVBAcMBkxvbmRvbjEYMBYGA1UE\n"
        "CgwPR2xvYmFsIFNlY3VyaXR5MRYwFAYDVQQLDA1JVCBEZXBhcnRtZW50MQowCAYD\n"
        "VQQDDAEqMCAXDTE3MTAwNDIwNDUyNFoYDzIxMTcwOTEwMjA0NTI0WjBtMQswCQYD\n"
        "VQQGEwJHQjEPMA0GA1UECAwGTG9uZG9uMQ8wDQYDVQQHDAZMb25kb24xGDAWBgNV\n"
        "BAoMD0dsb2JhbCBTZWN1cml0eTEWMBQGA1UECwwNSVQgRGVwYXJ0bWVudDEKMAgG\n"
        "A1UEAwwBKjBcMA0GCSqGSIb3DQEBAQUAA0sAMEgCQQC7j9BAV5HqIJGi6r4G4YeI\n"
        "ioHxH2loVu8IOKSK7xVs3v/EjR/eXbQzM+jZU7duyZqn6YjySZNLl0K0MfHCHBgX\n"
        "AgMBAAGjUDBOMB0GA1UdDgQWBBTwxV40NFSNW7lpQ3eUWX7Mxs03yzAfBgNVHSME\n"
        "GDAWgBTwxV40NFSNW7lpQ3eUWX7Mxs03yzAMBgNVHRMEBTADAQH/MA0GCSqGSIb3\n"
        "DQEBCwUAA0EALDi9OidANHflx8q+w3p0rJo9gpA6cJcFpEtP2Lv4kvOtB1f6L0jY\n"
        "MLd7MVm4cS/MNcx4L7l23UC3Hx4+nAxvIg==\n"
        "-----END CERTIFICATE-----";

#define MIN  (60ll * 1000000000)
#define HOUR (60 * MIN)

static int64_t now_ns;

static void fmt_time(int64_t t, char buf[KUBE_TIME_BUF])
{
	kube_time_format(t, buf);
}

/* a CSR created `created` ago, status.certificate = cert (NULL: none), conditions given as
 * "Type:age_ns" pairs (age < 0: no lastUpdateTime) */
static char *csr(int64_t created, const char *cert, int n, ...)
{
	char c[KUBE_TIME_BUF], conds[1024] = "", certfield[4096] = "", *out;
	size_t off = 0;
	va_list ap;

	fmt_time(now_ns - created, c);
	va_start(ap, n);
	for (int i = 0; i < n; i++) {
		const char *type = va_arg(ap, const char *);
		int64_t age = va_arg(ap, int64_t);
		char at[KUBE_TIME_BUF];
		fmt_time(now_ns - age, at);
		off += (size_t)snprintf(conds + off, sizeof(conds) - off,
		                        "%s{\"type\":\"%s\",\"status\":\"True\"%s%s%s}",
		                        i ? "," : "", type,
		                        age >= 0 ? ",\"lastUpdateTime\":\"" : "",
		                        age >= 0 ? at : "", age >= 0 ? "\"" : "");
	}
	va_end(ap);
	if (cert) {
		gnutls_datum_t in = {.data = (unsigned char *)cert, .size = (unsigned)strlen(cert)},
		               b64 = {0};
		assert_int_equal(gnutls_base64_encode2(&in, &b64), 0);
		snprintf(certfield, sizeof(certfield), ",\"certificate\":\"%.*s\"", (int)b64.size,
		         b64.data);
		gnutls_free(b64.data);
	}
	assert_true(asprintf(&out,
	                     "{\"metadata\":{\"name\":\"fake-csr\",\"creationTimestamp\":\"%s\"},"
	                     "\"spec\":{},\"status\":{\"conditions\":[%s]%s}}",
	                     c, conds, certfield) > 0);
	return out;
}

static enum csr_clean decide(char *j)
{
	enum csr_clean r = csr_cleaner_decide(j, strlen(j), now_ns);
	free(j);
	return r;
}

static void test_upstream_cases(void **state)
{
	(void)state;
	/* no delete approved not passed deadline */
	assert_int_equal(decide(csr(MIN, unexpired_cert, 1, "Approved", 50 * MIN)), CSR_KEEP);
	/* no delete approved passed deadline not issued */
	assert_int_equal(decide(csr(MIN, NULL, 1, "Approved", 50 * MIN)), CSR_KEEP);
	/* delete approved passed deadline */
	assert_int_equal(decide(csr(MIN, unexpired_cert, 1, "Approved", 2 * HOUR)),
	                 CSR_CLEAN_ISSUED);
	/* no delete denied not passed deadline */
	assert_int_equal(decide(csr(MIN, NULL, 1, "Denied", 50 * MIN)), CSR_KEEP);
	/* delete denied passed deadline */
	assert_int_equal(decide(csr(MIN, NULL, 1, "Denied", 2 * HOUR)), CSR_CLEAN_DENIED);
	/* no delete failed not passed deadline */
	assert_int_equal(decide(csr(MIN, NULL, 2, "Approved", 2 * HOUR, "Failed", 50 * MIN)),
	                 CSR_KEEP);
	/* delete failed passed deadline */
	assert_int_equal(decide(csr(MIN, NULL, 2, "Approved", 2 * HOUR, "Failed", 2 * HOUR)),
	                 CSR_CLEAN_FAILED);
	/* no delete pending not passed deadline */
	assert_int_equal(decide(csr(5 * HOUR, NULL, 0)), CSR_KEEP);
	/* delete pending passed deadline */
	assert_int_equal(decide(csr(25 * HOUR, NULL, 0)), CSR_CLEAN_PENDING);
	/* no delete approved not passed deadline unexpired */
	assert_int_equal(decide(csr(MIN, unexpired_cert, 1, "Approved", 50 * MIN)), CSR_KEEP);
	/* delete approved not passed deadline expired */
	assert_int_equal(decide(csr(MIN, expired_cert, 1, "Approved", 50 * MIN)),
	                 CSR_CLEAN_EXPIRED);
	/* delete approved passed deadline unparseable */
	assert_int_equal(decide(csr(MIN, "garbage", 1, "Approved", 2 * HOUR)), CSR_CLEAN_ISSUED);
}

static void test_more_cases(void **state)
{
	(void)state;
	/* approved, never issued: kept for 24 h after approval, then deleted */
	assert_int_equal(decide(csr(30 * HOUR, NULL, 1, "Approved", 23 * HOUR)), CSR_KEEP);
	assert_int_equal(decide(csr(30 * HOUR, NULL, 1, "Approved", 25 * HOUR)),
	                 CSR_CLEAN_APPROVED_UNISSUED);
	/* an expired certificate without Approved is not the expired rule */
	assert_int_equal(decide(csr(MIN, expired_cert, 0)), CSR_KEEP);
	/* unparseable, approved recently: no rule holds, no error */
	assert_int_equal(decide(csr(MIN, "garbage", 1, "Approved", MIN)), CSR_KEEP);
	/* a condition without lastUpdateTime is never older than anything */
	assert_int_equal(decide(csr(MIN, NULL, 1, "Denied", (int64_t)-1)), CSR_KEEP);
	/* a condition at all (even one of another type) means not pending */
	assert_int_equal(decide(csr(25 * HOUR, NULL, 1, "Custom", 25 * HOUR)), CSR_KEEP);
	/* issued beats denied for the log line (upstream's order) */
	assert_int_equal(
	        decide(csr(MIN, unexpired_cert, 2, "Denied", 2 * HOUR, "Approved", 2 * HOUR)),
	        CSR_CLEAN_ISSUED);
	/* malformed */
	assert_int_equal(csr_cleaner_decide("{", 1, now_ns), CSR_KEEP);
	assert_int_equal(csr_cleaner_decide("[]", 2, now_ns), CSR_KEEP);
	assert_null(csr_cleaner_message(CSR_KEEP));
	assert_non_null(csr_cleaner_message(CSR_CLEAN_EXPIRED));
}

static void test_not_after(void **state)
{
	int64_t na = 0;
	(void)state;
	assert_int_equal(csr_cert_not_after((const unsigned char *)unexpired_cert,
	                                    strlen(unexpired_cert), &na),
	                 0);
	char buf[KUBE_TIME_BUF];
	kube_time_format(na, buf);
	assert_string_equal(buf, "2117-09-10T20:45:24Z");
	assert_int_equal(csr_cert_not_after((const unsigned char *)"garbage", 7, &na), -EINVAL);
	static const char trunc[] = "-----BEGIN CERTIFICATE-----\nMIIC\n";
	assert_int_equal(csr_cert_not_after((const unsigned char *)trunc, strlen(trunc), &na),
	                 -EINVAL);
	static const char notder[] =
	        "-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n";
	assert_int_equal(csr_cert_not_after((const unsigned char *)notder, strlen(notder), &na),
	                 -EINVAL);
}

int main(void)
{
	now_ns = kube_time_now();
	now_ns -= now_ns % 1000000000; /* metav1.Time has seconds */
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_upstream_cases),
	        cmocka_unit_test(test_more_cases),
	        cmocka_unit_test(test_not_after),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
