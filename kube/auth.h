/* SPDX-License-Identifier: Apache-2.0 */
/* kube/auth.h - the credentials to present, kept fresh.
 *
 * Sources, in client-go's order of preference: an exec plugin (its token or client certificate,
 * cached until status.expirationTimestamp, re-run after a 401), a token file (re-read every
 * KUBE_TOKEN_FILE_PERIOD so rotated service-account tokens are picked up), a static token, and
 * the kubeconfig's client certificate (handled by the transport, not here).
 *
 * The exec plugin (fork+exec, stdout read with a KUBE_EXEC_TIMEOUT_MS deadline) runs either
 * blocking (kube_auth_get, for tools) or advanced by the caller's event loop (kube_auth_get_nb
 * + kube_auth_exec_step: the client in loop mode never blocks on it). It starts as client-go's
 * os/exec starts it: the process environment plus the kubeconfig's env plus
 * KUBERNETES_EXEC_INFO, stdin /dev/null, stdout a pipe, stderr ours (plugins print prompts and
 * errors there), no other fd, no blocked signal, every signal at its default disposition.
 * Nothing here logs a secret.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* Non-blocking form for a caller with an event loop: as kube_auth_get, or -EINPROGRESS while the
 * exec plugin runs (started by this call if needed). Then watch kube_auth_exec_fd() for input
 * (it changes: -1 once the plugin closed its stdout), wake at kube_auth_exec_wake_ms(), and call
 * kube_auth_exec_step() on either; once it returns 0, kube_auth_get_nb returns the credentials. */
int kube_auth_get_nb(struct kube_auth *a, kube_time_t now, struct kube_credentials *ret);
/* Reads what the plugin printed, reaps it, kills it at its deadline. -EINPROGRESS while it runs;
 * 0 when it ended with credentials; its error otherwise (-ENOEXEC bad exit or output,
 * -ETIMEDOUT, -E2BIG over 1 MiB; text in kube_auth_last_error). -EAGAIN when nothing runs and no
 * credentials are held. */
int kube_auth_exec_step(struct kube_auth *a);
int kube_auth_exec_fd(const struct kube_auth *a);          /* the plugin's stdout, or -1 */
int64_t kube_auth_exec_wake_ms(const struct kube_auth *a); /* CLOCK_MONOTONIC ms, -1: none */
bool kube_auth_exec_running(const struct kube_auth *a);

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
