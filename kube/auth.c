/* SPDX-License-Identifier: Apache-2.0 */
/* kube/auth.c - token files and exec credential plugins (design note in kube/auth.h). */
#include "kube/auth.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kube/json.h"

extern char **environ;

struct kube_auth {
	const struct kube_config *cfg;
	char *file_token;
	kube_time_t file_read_at;
	struct kube_exec_credential exec;
	bool have_exec;
	char last_error[256];
};

static void wipe_free(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

void kube_exec_credential_clear(struct kube_exec_credential *c)
{
	wipe_free(c->token);
	wipe_free(c->cert_pem);
	wipe_free(c->key_pem);
	memset(c, 0, sizeof(*c));
}

int kube_auth_new(const struct kube_config *cfg, struct kube_auth **ret)
{
	if (!cfg || !ret)
		return -EINVAL;
	struct kube_auth *a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->cfg = cfg;
	*ret = a;
	return 0;
}

void kube_auth_free(struct kube_auth *a)
{
	if (!a)
		return;
	wipe_free(a->file_token);
	kube_exec_credential_clear(&a->exec);
	free(a);
}

const char *kube_auth_last_error(const struct kube_auth *a)
{
	return a->last_error;
}

void kube_auth_invalidate(struct kube_auth *a)
{
	if (!a)
		return;
	kube_exec_credential_clear(&a->exec);
	a->have_exec = false;
	a->file_read_at = 0;
}

static char *dup_span(const char *s, size_t n)
{
	char *d = malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = 0;
	}
	return d;
}

int kube_parse_exec_credential(const char *json, size_t len, const char *want,
                               struct kube_exec_credential *ret)
{
	struct js_arena arena;
	struct js j;
	const char *k;
	size_t kn;
	char *api = NULL, *kind = NULL, *tok = NULL, *cert = NULL, *key = NULL, *exp = NULL;
	int r;
	if (js_arena_init(&arena, 1024) < 0)
		return -ENOMEM;
	js_init(&j, json, len, &arena);
	r = js_obj_begin(&j);
	if (r == 0)
		js_fail(&j, -EPROTO);
	while (r > 0 && (r = js_obj_next(&j, &k, &kn)) > 0) {
		if (JS_KEY(k, kn, "apiVersion"))
			js_str(&j, &api);
		else if (JS_KEY(k, kn, "kind"))
			js_str(&j, &kind);
		else if (JS_KEY(k, kn, "status")) {
			if (js_obj_begin(&j) <= 0)
				continue;
			while ((r = js_obj_next(&j, &k, &kn)) > 0) {
				if (JS_KEY(k, kn, "token"))
					js_str(&j, &tok);
				else if (JS_KEY(k, kn, "clientCertificateData"))
					js_str(&j, &cert);
				else if (JS_KEY(k, kn, "clientKeyData"))
					js_str(&j, &key);
				else if (JS_KEY(k, kn, "expirationTimestamp"))
					js_str(&j, &exp);
				else
					js_skip(&j);
			}
			r = 1;
		} else
			js_skip(&j);
	}
	if (!j.err && (js_peek(&j) != 0 || j.p != j.end))
		js_fail(&j, -EBADMSG);
	struct kube_exec_credential c = {0};
	if (j.err)
		r = j.err;
	else if (!kind || strcmp(kind, "ExecCredential"))
		r = -EPROTO;
	else if (want && (!api || strcmp(api, want)))
		r = -EPROTO; /* the plugin must answer in the version we asked for */
	else if ((cert && *cert) != (key && *key))
		r = -EPROTO; /* certificate and key come together */
	else if (!(tok && *tok) && !(cert && *cert))
		r = -EPROTO; /* neither a token nor a certificate */
	else {
		r = 0;
		if (exp && kube_time_parse(exp, strlen(exp), &c.expiry) < 0)
			r = -EPROTO;
		if (!r && tok && *tok && !(c.token = dup_span(tok, strlen(tok))))
			r = -ENOMEM;
		if (!r && cert && *cert &&
		    (!(c.cert_pem = dup_span(cert, strlen(cert))) ||
		     !(c.key_pem = dup_span(key, strlen(key)))))
			r = -ENOMEM;
	}
	/* wipe secrets from the scratch arena before freeing it */
	if (tok)
		explicit_bzero(tok, strlen(tok));
	if (key)
		explicit_bzero(key, strlen(key));
	js_arena_free(&arena);
	if (r < 0) {
		kube_exec_credential_clear(&c);
		return r;
	}
	*ret = c;
	return 0;
}

static int read_token_file(const char *path, char **ret)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	char buf[16384];
	size_t got = 0;
	for (;;) {
		ssize_t n = read(fd, buf + got, sizeof(buf) - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		if (got == sizeof(buf) - 1)
			break;
	}
	close(fd);
	while (got && (buf[got - 1] == '\n' || buf[got - 1] == '\r' || buf[got - 1] == ' '))
		got--;
	size_t start = 0;
	while (start < got && (buf[start] == ' ' || buf[start] == '\n'))
		start++;
	char *t = dup_span(buf + start, got - start);
	explicit_bzero(buf, sizeof(buf));
	if (!t)
		return -ENOMEM;
	if (!*t) {
		free(t);
		return -ENODATA;
	}
	*ret = t;
	return 0;
}

static long ms_left(const struct timespec *deadline)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (deadline->tv_sec - now.tv_sec) * 1000 + (deadline->tv_nsec - now.tv_nsec) / 1000000;
}

static int run_exec(struct kube_auth *a, struct kube_exec_credential *ret)
{
	const struct kube_exec_config *x = a->cfg->exec;
	int out[2];
	char *info = NULL;
	if (pipe2(out, O_CLOEXEC) < 0)
		return -errno;
	/* KUBERNETES_EXEC_INFO: what the plugin may need to know about the request */
	if (asprintf(&info,
	             "KUBERNETES_EXEC_INFO={\"kind\":\"ExecCredential\",\"apiVersion\":\"%s\","
	             "\"spec\":{%s%s%s"
	             "\"interactive\":false}}",
	             x->api_version, x->provide_cluster_info ? "\"cluster\":{\"server\":\"" : "",
	             x->provide_cluster_info ? a->cfg->server : "",
	             x->provide_cluster_info ? "\"}," : "") < 0) {
		close(out[0]);
		close(out[1]);
		return -ENOMEM;
	}
	size_t nenv = 0;
	while (environ && environ[nenv])
		nenv++;
	char **envp = calloc(nenv + x->n_env + 2, sizeof(char *));
	char **owned = calloc(x->n_env + 1, sizeof(char *));
	int r = 0;
	if (!envp || !owned) {
		r = -ENOMEM;
		goto out_env;
	}
	size_t e = 0;
	for (size_t i = 0; i < nenv; i++) {
		bool overridden = !strncmp(environ[i], "KUBERNETES_EXEC_INFO=", 21);
		for (size_t k = 0; k < x->n_env && !overridden; k++) {
			size_t nl = strlen(x->env[k].name);
			overridden =
			        !strncmp(environ[i], x->env[k].name, nl) && environ[i][nl] == '=';
		}
		if (!overridden)
			envp[e++] = environ[i];
	}
	for (size_t k = 0; k < x->n_env; k++) {
		if (asprintf(&owned[k], "%s=%s", x->env[k].name, x->env[k].value) < 0) {
			owned[k] = NULL;
			r = -ENOMEM;
			goto out_env;
		}
		envp[e++] = owned[k];
	}
	envp[e++] = info;

	size_t na = 0;
	while (x->args && x->args[na])
		na++;
	char **argv = calloc(na + 2, sizeof(char *));
	if (!argv) {
		r = -ENOMEM;
		goto out_env;
	}
	argv[0] = x->command;
	for (size_t i = 0; i < na; i++)
		argv[i + 1] = x->args[i];

	pid_t pid = fork();
	if (pid < 0) {
		r = -errno;
		free(argv);
		goto out_env;
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);
		if (devnull >= 0)
			dup2(devnull, 0);
		dup2(out[1], 1);
		if (strchr(x->command, '/'))
			execve(x->command, argv, envp);
		else
			execvpe(x->command, argv, envp);
		_exit(127);
	}
	free(argv);
	close(out[1]);
	out[1] = -1;

	size_t cap = 65536, got = 0;
	char *buf = malloc(cap);
	struct timespec deadline;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += KUBE_EXEC_TIMEOUT_MS / 1000;
	if (!buf)
		r = -ENOMEM;
	while (!r) {
		long left = ms_left(&deadline);
		if (left <= 0) {
			r = -ETIMEDOUT;
			break;
		}
		struct pollfd pfd = {.fd = out[0], .events = POLLIN};
		int pr = poll(&pfd, 1, (int)(left > 1000 ? 1000 : left));
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			continue;
		if (got == cap) {
			if (cap >= (1u << 20)) {
				r = -E2BIG;
				break;
			}
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				r = -ENOMEM;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t n = read(out[0], buf + got, cap - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (r)
		kill(pid, SIGKILL);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!r && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
		snprintf(a->last_error, sizeof(a->last_error),
		         "exec plugin %s exited with status %d", x->command,
		         WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
		r = -ENOEXEC;
	}
	if (!r) {
		r = kube_parse_exec_credential(buf, got, x->api_version, ret);
		if (r < 0) {
			snprintf(a->last_error, sizeof(a->last_error),
			         "exec plugin %s printed no valid %s ExecCredential", x->command,
			         x->api_version);
			r = -ENOEXEC;
		}
	} else if (r == -ETIMEDOUT)
		snprintf(a->last_error, sizeof(a->last_error), "exec plugin %s timed out",
		         x->command);
	if (buf) {
		explicit_bzero(buf, got);
		free(buf);
	}
out_env:
	if (owned)
		for (size_t k = 0; k < x->n_env; k++)
			free(owned[k]);
	free(owned);
	free(envp);
	free(info);
	if (out[0] >= 0)
		close(out[0]);
	if (out[1] >= 0)
		close(out[1]);
	return r;
}

int kube_auth_get(struct kube_auth *a, kube_time_t now, struct kube_credentials *ret)
{
	const struct kube_config *cfg;
	int r;
	if (!a || !ret)
		return -EINVAL;
	cfg = a->cfg;
	a->last_error[0] = 0;
	if (cfg->exec) {
		/* expired, or within 10 s of it: run the plugin again */
		if (a->have_exec && a->exec.expiry &&
		    now >= a->exec.expiry - (kube_time_t)10 * 1000000000)
			kube_auth_invalidate(a);
		if (!a->have_exec) {
			struct kube_exec_credential c;
			if ((r = run_exec(a, &c)) < 0)
				return r;
			a->exec = c;
			a->have_exec = true;
		}
		*ret = (struct kube_credentials){
		        .token = a->exec.token,
		        .cert_pem = (const unsigned char *)a->exec.cert_pem,
		        .cert_len = a->exec.cert_pem ? strlen(a->exec.cert_pem) : 0,
		        .key_pem = (const unsigned char *)a->exec.key_pem,
		        .key_len = a->exec.key_pem ? strlen(a->exec.key_pem) : 0,
		        .expiry = a->exec.expiry,
		};
		return 0;
	}
	if (cfg->token_file) { /* as client-go: the file's last good value wins over a static token
		                */
		if (!a->file_token || !a->file_read_at ||
		    now - a->file_read_at >= KUBE_TOKEN_FILE_PERIOD) {
			char *t;
			r = read_token_file(cfg->token_file, &t);
			if (r < 0) {
				snprintf(a->last_error, sizeof(a->last_error),
				         "cannot read token file %s: %s", cfg->token_file,
				         strerror(-r));
				if (!a->file_token)
					return r;
				/* keep using the last good token; try again next time */
			} else {
				wipe_free(a->file_token);
				a->file_token = t;
				a->file_read_at = now;
			}
		}
		*ret = (struct kube_credentials){.token = a->file_token};
		return 0;
	}
	*ret = (struct kube_credentials){.token = cfg->token && *cfg->token ? cfg->token : NULL};
	return 0;
}
