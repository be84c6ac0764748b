/* SPDX-License-Identifier: Apache-2.0 */
/* kube/config.h - where the apiserver is and who we are: kubeconfig files and in-cluster config.
 *
 * Loading follows kubectl/client-go (clientcmd) so that a kubeconfig that works with kubectl
 * works here:
 *   - --kubeconfig given: only that file (it must exist). Otherwise KUBECONFIG (a ':'-separated
 *     list; missing files are skipped; the first definition of a cluster/user/context name and
 *     the first non-empty current-context win), otherwise ~/.kube/config.
 *   - With neither --kubeconfig nor --master nor KUBECONFIG, in-cluster config is tried first
 *     (as kube-controller-manager's BuildConfigFromFlags does), then ~/.kube/config.
 *   - --context overrides current-context; --master overrides the selected cluster's server (and
 *     alone, with no kubeconfig at all, is a complete config).
 *   - Relative file paths in a kubeconfig (certificate-authority, client-certificate, client-key,
 *     tokenFile, an exec command containing '/') are relative to that file's directory.
 * Errors name the file and line ("~/.kube/config:12:5: users[0].user.token: expected a string").
 * Secret values (tokens, keys, *-data) never appear in error messages.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct kube_exec_env {
	char *name, *value;
};

struct kube_exec_config {
	char *command;
	char **args; /* NULL-terminated */
	struct kube_exec_env *env;
	size_t n_env;
	char *api_version; /* client.authentication.k8s.io/v1 or /v1beta1 */
	bool provide_cluster_info;
	char *interactive_mode; /* Never / IfAvailable / Always; we never have a terminal */
};

struct kube_config {
	char *server; /* "https://host:port" (no trailing slash) */
	char *tls_server_name;
	bool insecure_skip_tls_verify; /* caller must warn loudly; never together with a CA */
	char *proxy_url;               /* http://, https:// or socks5:// (checked); NULL: the
	                                * environment's HTTPS_PROXY/NO_PROXY, as client-go */
	char *ca_file;
	unsigned char *ca_data; /* PEM, decoded from certificate-authority-data */
	size_t ca_data_len;
	char *client_cert_file, *client_key_file;
	unsigned char *client_cert_data, *client_key_data;
	size_t client_cert_data_len, client_key_data_len;
	char *token;               /* static bearer token */
	char *token_file;          /* re-read periodically (rotation) */
	char *username, *password; /* basic auth, legacy */
	struct kube_exec_config *exec;
	char *context, *cluster, *user; /* names that were selected */
	char *namespace;                /* context namespace or in-cluster namespace file */
	bool in_cluster;
};

struct kube_config_opts {
	const char *kubeconfig; /* --kubeconfig */
	const char *master;     /* --master */
	const char *context;    /* --context */
	/* For tests: used instead of the environment when non-NULL. */
	const char *kubeconfig_env;              /* KUBECONFIG ("" = unset) */
	const char *home;                        /* $HOME */
	const char *in_cluster_root;             /* "/" normally; prefix for /var/run/secrets/... */
	const char *service_host, *service_port; /* KUBERNETES_SERVICE_HOST/PORT */
	bool no_in_cluster;                      /* never try in-cluster config */
};

/* Returns 0, or: -ENOENT (no configuration found / named file or context missing), -EINVAL
 * (malformed file; message in err), -ENOMEM, -EIO. err may be NULL. */
int kube_config_load(const struct kube_config_opts *o, struct kube_config **ret, char *err,
                     size_t errlen);

/* In-cluster only: KUBERNETES_SERVICE_HOST/PORT and the service-account files. -ENOENT when not
 * in a pod. */
int kube_config_in_cluster(const struct kube_config_opts *o, struct kube_config **ret, char *err,
                           size_t errlen);

/* Replaces every credential of c (client certificate, token, basic auth, exec plugin) with a
 * bearer token read from path, re-read as a kubeconfig tokenFile is (kube/auth.h); the server and
 * its CA stay. kcmd's workers use it for --use-service-account-credentials: the manager keeps the
 * service account's token in a memfd and the worker reads /proc/self/fd/N.
 * Returns 0, -EINVAL, -ENOMEM. */
int kube_config_use_token_file(struct kube_config *c, const char *path);

void kube_config_free(struct kube_config *c);
static inline void kube_config_freep(struct kube_config **c)
{
	kube_config_free(*c);
}
#define _cleanup_kube_config_ __attribute__((cleanup(kube_config_freep)))

/* Appends base64url without padding (RFC 7515 section 2) of in[0..n) at out[*pos] and
 * NUL-terminates; *pos moves on. 0, or -ENOSPC when out (outlen bytes) is too small. */
int kube_base64url_append(const unsigned char *in, size_t n, char *out, size_t outlen, size_t *pos);

/* Standard base64 with padding of p[0..n), malloc'd and NUL-terminated; NULL: no memory. */
char *kube_base64_encode(const unsigned char *p, size_t n);

/* Decodes standard base64 (whitespace ignored). *ret is malloc'd. */
int kube_base64_decode(const char *in, size_t n, unsigned char **ret, size_t *ret_len);
