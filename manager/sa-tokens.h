/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * manager/sa-tokens.h: per-controller service-account tokens for
 * --use-service-account-credentials.
 *
 * Design note.
 *   As kube-controller-manager's dynamic client builder does, the manager (with its own, root,
 *   credentials) makes sure the ServiceAccount kube-system/<name> of each controller exists (GET,
 *   CREATE on 404), asks the TokenRequest API (POST serviceaccounts/<name>/token, 3600 s) for a
 *   token, and asks again when 20 % of the token's lifetime is left (or after a failure, with a
 *   backoff of 1 s doubling to 30 s). Upstream's bootstrap ClusterRoles
 *   (system:controller:<name>) are bound to those accounts by the apiserver itself.
 *
 *   Each account's token lives in a memfd the manager passes to that controller's workers
 *   (KCMD_TOKEN_FD); a worker reads it as a kubeconfig tokenFile through /proc/self/fd/N, i.e.
 *   again every minute and after a 401 (kube/auth.h). The memfd has a fixed size: the token
 *   padded with spaces, written by one pwrite; a reader racing that write can read a torn token,
 *   gets a 401, and re-reads. The token never touches a disk and never appears in argv or logs.
 *   informerd and the leader election keep the root identity, as upstream's shared informers
 *   and elector do.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ipc_loop;
struct kube_client;
struct mgr_sa_tokens;

/* Accounts one set holds: one per running controller that names one (47 of kcmd's controllers
 * do; `--controllers=*` with --use-service-account-credentials, kubeadm's setup, adds them all). */
#define MGR_SA_MAX_ACCOUNTS       128
#define MGR_SA_TOKEN_FILE_SIZE    8192 /* the memfd's size: longest token accepted + padding */
#define MGR_SA_TOKEN_EXPIRATION_S 3600

/* Called once, the first time every added account has a token. */
typedef void (*mgr_sa_ready_fn)(void *userdata);

/* kc: the manager's root client, attached to loop. ns: "kube-system". */
int mgr_sa_tokens_new(struct ipc_loop *loop, struct kube_client *kc, const char *ns,
                      mgr_sa_ready_fn on_ready, void *userdata, struct mgr_sa_tokens **ret);
/* Adds an account (before mgr_sa_tokens_start). Returns its memfd (owned by the set; CLOEXEC:
 * the supervisor passes it to the children that need it) or -errno. */
int mgr_sa_tokens_add(struct mgr_sa_tokens *t, const char *account);
/* Starts fetching every account's token. */
int mgr_sa_tokens_start(struct mgr_sa_tokens *t);
/* True once every account has had a token (it may have expired since if refreshes failed). */
bool mgr_sa_tokens_ready(const struct mgr_sa_tokens *t);
/* NULL-safe; cancels calls in flight, closes the memfds. */
struct mgr_sa_tokens *mgr_sa_tokens_free(struct mgr_sa_tokens *t);

/* ---- pieces exposed for tests ---- */
/* Parses a TokenRequest answer: status.token (malloc'ed into *token) and
 * status.expirationTimestamp (ns since the epoch). -EBADMSG when either is missing. */
int mgr_sa_parse_token_request(const char *json, size_t len, char **token, int64_t *expiry_ns);
/* Writes token into fd, padded with spaces to MGR_SA_TOKEN_FILE_SIZE, in one pwrite.
 * -E2BIG for a token that does not fit. */
int mgr_sa_write_token(int fd, const char *token);
/* Delay before the next TokenRequest for a token valid until expiry_ns, as seen at now_ns: 80 %
 * of the time left, at least 1 s. */
uint64_t mgr_sa_refresh_delay_usec(int64_t now_ns, int64_t expiry_ns);
