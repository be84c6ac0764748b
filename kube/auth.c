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
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "kube/json.h"

extern char **environ;

/* One run of the exec plugin, advanced without blocking (kube_auth_exec_step). */
enum { EXEC_IDLE, EXEC_READING, EXEC_REAPING };
struct exec_run {
	int state;
	pid_t pid;
	int fd; /* its stdout (non-blocking), -1 once EOF was read */
	char *buf;
	size_t got, cap;
	int64_t deadline_ms; /* CLOCK_MONOTONIC: killed after KUBE_EXEC_TIMEOUT_MS */
};

struct kube_auth {
	const struct kube_config *cfg;
	struct exec_run run;
	char *file_token;
	kube_time_t file_read_at;
	struct kube_exec_credential exec;
	bool have_exec;
	char last_error[256];
};

static void run_reset(struct exec_run *x);

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
	a->run.fd = -1;
	*ret = a;
	return 0;
}

void kube_auth_free(struct kube_auth *a)
{
	if (!a)
		return;
	wipe_free(a->file_token);
	kube_exec_credential_clear(&a->exec);
	if (a->run.state != EXEC_IDLE) {
		int st;
		kill(a->run.pid, SIGKILL);
		while (waitpid(a->run.pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	run_reset(&a->run);
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

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* KUBERNETES_EXEC_INFO as client-go encodes it: an ExecCredential whose spec carries
 * interactive=false and, with provideClusterInfo, the cluster (server, tls-server-name,
 * insecure-skip-tls-verify, certificate-authority-data read from the CA file if need be,
 * proxy-url). Returns "KUBERNETES_EXEC_INFO=<json>" (malloc'd) or NULL. */
static char *exec_info(const struct kube_config *cfg)
{
	const struct kube_exec_config *x = cfg->exec;
	cJSON *o = cJSON_CreateObject(), *spec, *cl;
	char *json = NULL, *out = NULL, *ca = NULL;
	bool ok = o && cJSON_AddStringToObject(o, "kind", "ExecCredential") &&
	          cJSON_AddStringToObject(o, "apiVersion", x->api_version) &&
	          (spec = cJSON_AddObjectToObject(o, "spec"));
	if (ok && x->provide_cluster_info) {
		ok = (cl = cJSON_AddObjectToObject(spec, "cluster")) &&
		     cJSON_AddStringToObject(cl, "server", cfg->server ? cfg->server : "");
		if (ok && cfg->tls_server_name && *cfg->tls_server_name)
			ok = cJSON_AddStringToObject(cl, "tls-server-name", cfg->tls_server_name);
		if (ok && cfg->insecure_skip_tls_verify)
			ok = cJSON_AddTrueToObject(cl, "insecure-skip-tls-verify");
		if (ok && cfg->ca_data_len)
			ok = (ca = kube_base64_encode(cfg->ca_data, cfg->ca_data_len)) != NULL;
		else if (ok && cfg->ca_file && *cfg->ca_file) {
			FILE *f = fopen(cfg->ca_file, "re");
			unsigned char buf[65536];
			size_t n = f ? fread(buf, 1, sizeof(buf), f) : 0;
			if (f)
				fclose(f);
			if (n)
				ok = (ca = kube_base64_encode(buf, n)) != NULL;
		}
		if (ok && ca)
			ok = cJSON_AddStringToObject(cl, "certificate-authority-data", ca);
		if (ok && cfg->proxy_url && *cfg->proxy_url)
			ok = cJSON_AddStringToObject(cl, "proxy-url", cfg->proxy_url);
	}
	if (ok)
		ok = cJSON_AddFalseToObject(spec, "interactive") &&
		     (json = cJSON_PrintUnformatted(o)) != NULL;
	if (ok && asprintf(&out, "KUBERNETES_EXEC_INFO=%s", json) < 0)
		out = NULL;
	cJSON_Delete(o);
	free(json);
	free(ca);
	return out;
}

/* In the child between fork and execve (async-signal-safe calls only): the plugin starts as
 * Go's os/exec starts it for client-go: every signal unblocked and at its default disposition
 * (the manager blocks the ones it reads through signalfd and ignores SIGPIPE; both survive
 * execve), stdin /dev/null (not interactive), stdout our pipe, stderr ours, nothing else open. */
static void exec_child(int devnull, int out, const char *cmd, char **argv, char **envp)
{
	sigset_t none;
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigemptyset(&none);
	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, &dfl,
		          NULL); /* SIGKILL/SIGSTOP and the libc-reserved ones fail: fine */
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out, 1) < 0)
		_exit(127);
	/* fds 0-2 only: close_range (Linux 5.9), else one close per possible fd */
	if (syscall(SYS_close_range, 3u, ~0u, 0u) < 0) {
		struct rlimit rl;
		int max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536
		                  ? (int)rl.rlim_cur
		                  : 65536;
		for (int fd = 3; fd < max; fd++)
			close(fd);
	}
	if (strchr(cmd, '/'))
		execve(cmd, argv, envp);
	else
		execvpe(cmd, argv, envp);
	_exit(127);
}

static void run_reset(struct exec_run *x)
{
	if (x->fd >= 0)
		close(x->fd);
	if (x->buf) {
		explicit_bzero(x->buf, x->got);
		free(x->buf);
	}
	*x = (struct exec_run){.fd = -1};
}

/* Forks the plugin with its stdout on a non-blocking pipe; the run is then advanced by
 * kube_auth_exec_step. */
static int exec_start(struct kube_auth *a)
{
	const struct kube_exec_config *x = a->cfg->exec;
	struct exec_run *run = &a->run;
	int out[2] = {-1, -1}, devnull = -1;
	char *info = NULL, **envp = NULL, **owned = NULL, **argv = NULL;
	size_t nenv = 0, na = 0, e = 0;
	int r = 0;
	if (pipe2(out, O_CLOEXEC) < 0)
		return -errno;
	if (!(info = exec_info(a->cfg))) {
		r = -ENOMEM;
		goto out;
	}
	/* the process environment, then the kubeconfig's env (a name there replaces ours), then
	 * KUBERNETES_EXEC_INFO: client-go's append(os.Environ(), env...) with Go's last-wins */
	while (environ && environ[nenv])
		nenv++;
	envp = calloc(nenv + x->n_env + 2, sizeof(char *));
	owned = calloc(x->n_env + 1, sizeof(char *));
	while (x->args && x->args[na])
		na++;
	argv = calloc(na + 2, sizeof(char *));
	if (!envp || !owned || !argv) {
		r = -ENOMEM;
		goto out;
	}
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
			goto out;
		}
		envp[e++] = owned[k];
	}
	envp[e++] = info;
	argv[0] = x->command;
	for (size_t i = 0; i < na; i++)
		argv[i + 1] = x->args[i];
	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (!(run->buf = malloc(65536))) {
		r = -ENOMEM;
		goto out;
	}
	run->cap = 65536;
	pid_t pid = fork();
	if (pid < 0) {
		r = -errno;
		free(run->buf);
		run->buf = NULL;
		goto out;
	}
	if (pid == 0)
		exec_child(devnull, out[1], x->command, argv, envp);
	run->pid = pid;
	run->fd = out[0];
	out[0] = -1;
	fcntl(run->fd, F_SETFL, fcntl(run->fd, F_GETFL) | O_NONBLOCK);
	run->deadline_ms = mono_ms() + KUBE_EXEC_TIMEOUT_MS;
	run->state = EXEC_READING;
out:
	if (owned)
		for (size_t k = 0; k < x->n_env; k++)
			free(owned[k]);
	free(owned);
	free(envp);
	free(argv);
	free(info);
	if (devnull >= 0)
		close(devnull);
	if (out[0] >= 0)
		close(out[0]);
	close(out[1]);
	return r;
}

/* The run ended (status st, or err before that): parse, store, reset. */
static int exec_finish(struct kube_auth *a, int err, int st)
{
	const struct kube_exec_config *x = a->cfg->exec;
	struct exec_run *run = &a->run;
	struct kube_exec_credential c;
	int r = err;
	if (!r && (!WIFEXITED(st) || WEXITSTATUS(st) != 0)) {
		snprintf(a->last_error, sizeof(a->last_error),
		         "exec plugin %s exited with status %d", x->command,
		         WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		r = -ENOEXEC;
	} else if (!r) {
		r = kube_parse_exec_credential(run->buf, run->got, x->api_version, &c);
		if (r < 0) {
			snprintf(a->last_error, sizeof(a->last_error),
			         "exec plugin %s printed no valid %s ExecCredential", x->command,
			         x->api_version);
			r = -ENOEXEC;
		} else {
			kube_exec_credential_clear(&a->exec);
			a->exec = c;
			a->have_exec = true;
		}
	} else if (r == -ETIMEDOUT)
		snprintf(a->last_error, sizeof(a->last_error),
		         "exec plugin %s timed out after %d s", x->command,
		         KUBE_EXEC_TIMEOUT_MS / 1000);
	else if (r == -E2BIG)
		snprintf(a->last_error, sizeof(a->last_error), "exec plugin %s printed over 1 MiB",
		         x->command);
	run_reset(run);
	return r;
}

int kube_auth_exec_step(struct kube_auth *a)
{
	struct exec_run *run = &a->run;
	int err = 0, st = 0;
	if (run->state == EXEC_IDLE)
		return a->have_exec ? 0 : -EAGAIN;
	while (run->state == EXEC_READING) {
		if (run->got == run->cap) {
			char *nb = run->cap >= (1u << 20) ? NULL : realloc(run->buf, run->cap * 2);
			if (!nb) {
				err = run->cap >= (1u << 20) ? -E2BIG : -ENOMEM;
				break;
			}
			run->buf = nb;
			run->cap *= 2;
		}
		ssize_t n = read(run->fd, run->buf + run->got, run->cap - run->got);
		if (n > 0) {
			run->got += (size_t)n;
		} else if (n == 0) {
			close(run->fd); /* EOF: the caller stops watching it (kube_auth_exec_fd) */
			run->fd = -1;
			run->state = EXEC_REAPING;
		} else if (errno == EINTR) {
			continue;
		} else if (errno == EAGAIN) {
			break;
		} else {
			err = -errno;
			break;
		}
	}
	if (!err && mono_ms() >= run->deadline_ms)
		err = -ETIMEDOUT;
	if (err) {
		kill(run->pid, SIGKILL);
		while (waitpid(run->pid, &st, 0) < 0 && errno == EINTR)
			;
		return exec_finish(a, err, st);
	}
	if (run->state == EXEC_REAPING) {
		pid_t w;
		while ((w = waitpid(run->pid, &st, WNOHANG)) < 0 && errno == EINTR)
			;
		if (w == run->pid)
			return exec_finish(a, 0, st);
		if (w < 0)
			return exec_finish(a, -ECHILD, 0);
	}
	return -EINPROGRESS;
}

int kube_auth_exec_fd(const struct kube_auth *a)
{
	return a && a->run.state == EXEC_READING ? a->run.fd : -1;
}

bool kube_auth_exec_running(const struct kube_auth *a)
{
	return a && a->run.state != EXEC_IDLE;
}

int64_t kube_auth_exec_wake_ms(const struct kube_auth *a)
{
	if (!a || a->run.state == EXEC_IDLE)
		return -1;
	if (a->run.state == EXEC_REAPING) { /* stdout closed, exit pending: look again soon */
		int64_t soon = mono_ms() + 5;
		return soon < a->run.deadline_ms ? soon : a->run.deadline_ms;
	}
	return a->run.deadline_ms;
}

int kube_auth_get_nb(struct kube_auth *a, kube_time_t now, struct kube_credentials *ret)
{
	const struct kube_config *cfg;
	int r;
	if (!a || !ret)
		return -EINVAL;
	cfg = a->cfg;
	if (!cfg->exec)
		return kube_auth_get(a, now, ret);
	if (a->run.state == EXEC_IDLE)
		a->last_error[0] = 0;
	/* expired, or within 10 s of it: run the plugin again */
	if (a->have_exec && a->exec.expiry && now >= a->exec.expiry - (kube_time_t)10 * 1000000000)
		kube_auth_invalidate(a);
	if (!a->have_exec) {
		if (a->run.state == EXEC_IDLE && (r = exec_start(a)) < 0) {
			snprintf(a->last_error, sizeof(a->last_error), "exec plugin %s: %s",
			         cfg->exec->command, strerror(-r));
			return r;
		}
		if ((r = kube_auth_exec_step(a)) < 0)
			return r;
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

int kube_auth_get(struct kube_auth *a, kube_time_t now, struct kube_credentials *ret)
{
	const struct kube_config *cfg;
	int r;
	if (!a || !ret)
		return -EINVAL;
	cfg = a->cfg;
	if (!cfg->exec)
		a->last_error[0] = 0;
	if (cfg->exec) {
		/* the blocking form of kube_auth_get_nb: wait for the plugin right here */
		r = kube_auth_get_nb(a, now, ret);
		while (r == -EINPROGRESS) {
			int64_t wake = kube_auth_exec_wake_ms(a), left = wake - mono_ms();
			struct pollfd p = {.fd = kube_auth_exec_fd(a), .events = POLLIN};
			if (left > 0)
				poll(&p, p.fd >= 0 ? 1 : 0, (int)(left > 1000 ? 1000 : left));
			r = kube_auth_get_nb(a, now, ret);
		}
		return r;
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
