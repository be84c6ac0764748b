/* SPDX-License-Identifier: Apache-2.0 */
/* kube/auth.h - the credentials to present, kept fresh.
 *
 * Sources, in client-go's order of preference: an exec plugin (its token or client certificate,
 * cached until status.expirationTimestamp, re-run after a 401), a token file (re-read every
 * KUBE_TOKEN_FILE_PERIOD so rotated service-account tokens are picked up), a static token, and
 * the kubeconfig's client certificate (handled by the transport, not here).
 *
 * The exec plugin runs synchronously (fork+exec, stdout read with a deadline): it runs once per
 * credential lifetime, so blocking the caller's loop for it is accepted; the stderr of the plugin
 * goes to ours (plugins print prompts and errors there). Nothing here logs a secret.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "kube/config.h"
#include "kube/model.h"

#define KUBE_TOKEN_FILE_PERIOD ((kube_time_t)60 * 1000000000)
#define KUBE_EXEC_TIMEOUT_MS   60000

struct kube_auth;

struct kube_credentials {
	const char *token;             /* bearer token or NULL */
	const unsigned char *cert_pem; /* client certificate from an exec plugin, or NULL */
	size_t cert_len;
	const unsigned char *key_pem;
	size_t key_len;
	kube_time_t expiry; /* 0: no known expiry */
};

/* cfg must outlive the auth object. */
int kube_auth_new(const struct kube_config *cfg, struct kube_auth **ret);
void kube_auth_free(struct kube_auth *a);

/* Fills *ret with the current credentials (valid until the next kube_auth_* call). May run the
 * exec plugin or re-read the token file. Errors: -ENOENT/-EACCES (token file), -ENOEXEC (plugin
 * failed or printed an invalid ExecCredential; message via kube_auth_last_error), -ETIMEDOUT. */
int kube_auth_get(struct kube_auth *a, kube_time_t now, struct kube_credentials *ret);

/* After a 401: drop cached exec credentials / re-read the token file on next use. */
void kube_auth_invalidate(struct kube_auth *a);

const char *kube_auth_last_error(const struct kube_auth *a);

/* Parses an ExecCredential document (exposed for tests and the fuzzer). want_api_version may be
 * NULL. On success the strings are malloc'd into *ret (free with kube_exec_credential_clear). */
struct kube_exec_credential {
	char *token;
	char *cert_pem, *key_pem;
	kube_time_t expiry;
};
int kube_parse_exec_credential(const char *json, size_t len, const char *want_api_version,
                               struct kube_exec_credential *ret);
void kube_exec_credential_clear(struct kube_exec_credential *c);
