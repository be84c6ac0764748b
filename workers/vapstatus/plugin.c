/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/vapstatus/plugin.c: kcm's validatingadmissionpolicy-status-controller (no alias), on by
 * default (no gate), client "validatingadmissionpolicy-status-controller" (upstream
 * pkg/controller/validatingadmissionpolicystatus and
 * cmd/kube-controller-manager/app/validatingadmissionpolicystatus.go). vapstatus.h has the
 * design; docs/vapstatus.md.
 *
 * Shape: ValidatingAdmissionPolicies cached whole; their add and update queue the name (queue
 * "validatingadmissionpolicy-status", upstream's name). One worker process. The sync reads the
 * policy from the cache; when its generation is above status.observedGeneration it hands the
 * policy to the type checker child (kcmd-vapcheck, started at the first policy that needs it and
 * kept; restarted after any failure) and applies the status it answers.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kcmd/kcmd.h"
#include "kube/client.h"
#include "kube/config.h"
#include "workers/vapstatus/vapstatus.h"
#include "workers/worker.h"

#define VAP_CONTROLLER "validatingadmissionpolicy-status-controller"
#define VAP_QUEUE      "validatingadmissionpolicy-status"
#define VAP_MANAGER    "validatingadmissionpolicy-status" /* upstream's ControllerName */
#define VAP_GROUP      "admissionregistration.k8s.io"
#define VAP_RESOURCE   "validatingadmissionpolicies"
#define VAP_CHECKER    "kcmd-vapcheck"
/* How long one type check may take before the child is taken for hung (a check resolves a
 * few schemas through the apiserver: seconds at most). */
#define VAP_CHECK_TIMEOUT_MS 60000

/* ---- handlers (kcmd-dispatcher) ----------------------------------------------------------- */
static void on_policy(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	const char *name = ev->meta ? kcmd_meta_name(ev->meta) : NULL;

	if (name && *name)
		kcmd_queue_add(ctx, 0, name);
}

static int resync_one(const struct shm_obj *o, void *userdata)
{
	const char *name = kcmd_obj_name(o);

	if (name && *name)
		kcmd_queue_add(userdata, 0, name);
	return 0;
}

static void vap_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	kcmd_cache_list(ctx->arena, VAP_GROUP, VAP_RESOURCE, NULL, resync_one, ctx);
}

static const char *const vap_queue_names[] = {VAP_QUEUE, NULL};

static const struct inf_handler_entry vap_entries[] = {
        {VAP_GROUP, VAP_RESOURCE, on_policy, on_policy, NULL},
};

static const struct inf_handler_table vap_handlers = {
        .controller = VAP_CONTROLLER,
        .queues = vap_queue_names,
        .entries = vap_entries,
        .n_entries = 1,
        .resync = vap_resync,
};

/* ---- the type checker child ------------------------------------------------------------------ */
struct vap_state {
	struct wk_ctx *ctx;
	pid_t pid; /* the checker, or 0 */
	int sock;  /* its stdin and stdout (a socket: a dead child gives EPIPE, not SIGPIPE) */
	int kc_fd; /* the memfd holding its kubeconfig */
	char *buf; /* bytes read past the last answer */
	size_t len, cap;
	char path[PATH_MAX];
};

static void checker_stop(struct vap_state *s, const char *why)
{
	if (s->pid > 0) {
		kill(s->pid, SIGKILL);
		while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR)
			;
		if (why)
			kcmd_log_warning("%s: the type checker (pid %d) was stopped: %s",
			                 VAP_CONTROLLER, (int)s->pid, why);
	}
	s->pid = 0;
	if (s->sock >= 0)
		close(s->sock);
	if (s->kc_fd >= 0)
		close(s->kc_fd);
	s->sock = s->kc_fd = -1;
	s->len = 0;
}

/* The checker's path: KCMD_VAPCHECK, or kcmd-vapcheck beside this program. */
static int checker_path(struct vap_state *s)
{
	const char *env = getenv("KCMD_VAPCHECK");
	char self[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && *env) {
		snprintf(s->path, sizeof(s->path), "%s", env);
		return 0;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -errno;
	self[n] = 0;
	if (!(slash = strrchr(self, '/')))
		return -EINVAL;
	*slash = 0;
	if ((size_t)snprintf(s->path, sizeof(s->path), "%s/%s", self, VAP_CHECKER) >=
	    sizeof(s->path))
		return -ENAMETOOLONG;
	return 0;
}

static int fd_of_proc_path(const char *p)
{
	const char *pre = "/proc/self/fd/";
	char *end;
	long v;

	if (!p || strncmp(p, pre, strlen(pre)))
		return -1;
	v = strtol(p + strlen(pre), &end, 10);
	return (*end || v < 0 || v > INT_MAX) ? -1 : (int)v;
}

static int checker_start(struct vap_state *s)
{
	char *kc = NULL, arg_kc[64], arg_ua[128];
	int sv[2], r, token_fd;
	size_t off, n;
	pid_t pid;

	if ((r = checker_path(s)) < 0)
		return r;
	if (access(s->path, X_OK) < 0) {
		r = -errno;
		kcmd_log_error(
		        "%s: the type checker %s cannot be run (%s): policies are not "
		        "type-checked (build it with the Go toolchain: make; docs/vapstatus.md)",
		        VAP_CONTROLLER, s->path, strerror(-r));
		return r;
	}
	if ((r = vap_kubeconfig(s->ctx->config, &kc)) < 0) {
		kcmd_log_error("%s: cannot hand the client's credentials to the type checker: %s",
		               VAP_CONTROLLER,
		               r == -ENOTSUP ? "exec plugins and basic auth are not passed on"
		                             : strerror(-r));
		return r;
	}
	s->kc_fd = memfd_create("kcmd-vapcheck-kubeconfig", MFD_CLOEXEC);
	if (s->kc_fd < 0) {
		r = -errno;
		free(kc);
		return r;
	}
	for (off = 0, n = strlen(kc); off < n;) {
		ssize_t w = write(s->kc_fd, kc + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			r = -errno;
			free(kc);
			checker_stop(s, NULL);
			return r;
		}
		off += (size_t)w;
	}
	free(kc);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		r = -errno;
		checker_stop(s, NULL);
		return r;
	}
	snprintf(arg_kc, sizeof(arg_kc), "--kubeconfig=/proc/self/fd/%d", s->kc_fd);
	snprintf(arg_ua, sizeof(arg_ua), "--user-agent=kcmd/%s (%s)", KCMD_VERSION, VAP_CONTROLLER);
	token_fd = fd_of_proc_path(s->ctx->config ? s->ctx->config->token_file : NULL);
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(sv[0]);
		close(sv[1]);
		checker_stop(s, NULL);
		return r;
	}
	if (pid == 0) {
		sigset_t all;
		char *argv[] = {s->path, arg_kc, arg_ua, NULL};

		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		signal(SIGPIPE, SIG_DFL);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (dup2(sv[1], 0) < 0 || dup2(sv[1], 1) < 0)
			_exit(127);
		/* the two fds the kubeconfig names survive the exec; every other stays closed */
		fcntl(s->kc_fd, F_SETFD, 0);
		if (token_fd >= 0)
			fcntl(token_fd, F_SETFD, 0);
		execv(s->path, argv);
		_exit(127);
	}
	close(sv[1]);
	s->sock = sv[0];
	s->pid = pid;
	kcmd_log_info("%s: type checker %s started (pid %d)", VAP_CONTROLLER, s->path, (int)pid);
	return 0;
}

static int send_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EPIPE;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One answer line (without its '\n'), malloc'd. */
static int read_line(struct vap_state *s, char **ret)
{
	int64_t deadline = now_ms() + VAP_CHECK_TIMEOUT_MS;

	*ret = NULL;
	for (;;) {
		char *nl = s->buf ? memchr(s->buf, '\n', s->len) : NULL;
		if (nl) {
			size_t k = (size_t)(nl - s->buf);
			if (!(*ret = strndup(s->buf, k)))
				return -ENOMEM;
			memmove(s->buf, nl + 1, s->len - k - 1);
			s->len -= k + 1;
			return 0;
		}
		if (s->cap - s->len < 65536) {
			size_t cap = s->cap ? s->cap * 2 : 131072;
			char *b;
			if (cap > (64u << 20))
				return -EMSGSIZE;
			if (!(b = realloc(s->buf, cap)))
				return -ENOMEM;
			s->buf = b;
			s->cap = cap;
		}
		int64_t left = deadline - now_ms();
		struct pollfd p = {.fd = s->sock, .events = POLLIN};
		if (left <= 0)
			return -ETIMEDOUT;
		int pr = poll(&p, 1, (int)left);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			return -errno;
		if (pr == 0)
			return -ETIMEDOUT;
		ssize_t got = read(s->sock, s->buf + s->len, s->cap - s->len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (got == 0)
			return -EPIPE;
		s->len += (size_t)got;
	}
}

/* TypeChecker.Check: the warnings (a JSON array, owned by *ret_answer) for policy. */
static int type_check(struct vap_state *s, const cJSON *policy, cJSON **ret_answer,
                      const cJSON **ret_warnings)
{
	char *line = NULL, *ans = NULL;
	cJSON *a;
	const char *err;
	int r;

	*ret_answer = NULL;
	*ret_warnings = NULL;
	if (s->pid <= 0 && (r = checker_start(s)) < 0)
		return r;
	if (!(line = cJSON_PrintUnformatted(policy)))
		return -ENOMEM;
	r = send_all(s->sock, line, strlen(line));
	if (r == 0)
		r = send_all(s->sock, "\n", 1);
	free(line);
	if (r == 0)
		r = read_line(s, &ans);
	if (r < 0) {
		checker_stop(s, strerror(-r));
		return r;
	}
	a = cJSON_Parse(ans);
	free(ans);
	if (!a) {
		checker_stop(s, "an answer that is not JSON");
		return -EBADMSG;
	}
	if ((err = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "error")))) {
		kcmd_log_error("%s: the type checker refused the policy: %s", VAP_CONTROLLER, err);
		cJSON_Delete(a);
		return -EINVAL;
	}
	*ret_answer = a;
	*ret_warnings = cJSON_GetObjectItemCaseSensitive(a, "warnings");
	return 0;
}

/* ---- sync (kcmd-worker) ------------------------------------------------------------------- */

/* Test seam (docs/vapstatus.md, docs/testing.md): KCMD_TEST_VAP_DROP_PREFIX=<prefix> makes this
 * worker drop the status write of every policy whose name starts with <prefix>, as a worker that
 * lost the policy's key would (the fault TestVAPStatus_WorkerKilled's oracle targets). Read once
 * at start; unset or empty: no effect. */
static const char *drop_prefix;

static int vap_init(struct wk_ctx *ctx, void **ret_state)
{
	struct vap_state *s = calloc(1, sizeof(*s));
	const char *v = getenv("KCMD_TEST_VAP_DROP_PREFIX");

	if (!s)
		return -ENOMEM;
	if (v && *v) {
		drop_prefix = v;
		kcmd_log_warning(
		        "KCMD_TEST_VAP_DROP_PREFIX=%s: the status of those policies is never "
		        "written (a test seam: their write is dropped)",
		        v);
	}
	s->ctx = ctx;
	s->sock = s->kc_fd = -1;
	*ret_state = s;
	return 0;
}

static void vap_fini(void *state)
{
	struct vap_state *s = state;

	checker_stop(s, NULL);
	free(s->buf);
	free(s);
}

static const char *reason(int r)
{
	return kcmd_kube_reason(r) ? kcmd_kube_reason(r) : strerror(-r);
}

static int reconcile(struct vap_state *s, const char *name)
{
	struct shm_obj *o = NULL;
	cJSON *policy = NULL, *answer = NULL;
	const cJSON *warnings = NULL;
	struct kube_response resp = {0};
	char *body = NULL;
	size_t len = 0;
	const char *js;
	int r;

	r = kcmd_cache_get(s->ctx->arena, VAP_GROUP, VAP_RESOURCE, NULL, name, &o);
	if (r == -ENOENT)
		return 0; /* being deleted: nothing to do */
	if (r < 0)
		return r;
	js = kcmd_obj_json(o, &len);
	policy = js ? cJSON_ParseWithLength(js, len) : NULL;
	kcmd_obj_free(o);
	if (!policy) {
		kcmd_log_warning("%s: policy %s: the cached object does not parse, skipped",
		                 VAP_CONTROLLER, name);
		return 0;
	}
	if (!vap_needs_check(policy))
		goto out;
	if (drop_prefix && strncmp(name, drop_prefix, strlen(drop_prefix)) == 0) {
		kcmd_log_warning("KCMD_TEST_VAP_DROP_PREFIX: status write of policy %s dropped",
		                 name);
		goto out;
	}
	if ((r = type_check(s, policy, &answer, &warnings)) < 0)
		goto out;
	if (!(body = vap_status_apply_body(policy, warnings))) {
		r = -ENOMEM;
		goto out;
	}
	r = kube_client_request(s->ctx->kc,
	                        &(struct kube_request){.verb = KUBE_PATCH,
	                                               .group = VAP_GROUP,
	                                               .version = "v1",
	                                               .resource = VAP_RESOURCE,
	                                               .name = name,
	                                               .subresource = "status",
	                                               .body = body,
	                                               .patch_type = KUBE_PATCH_APPLY,
	                                               .field_manager = VAP_MANAGER},
	                        NULL, NULL, &resp);
	if (r == 0)
		r = resp.error.err;
	kube_response_clear(&resp);
	if (r == 0)
		kcmd_log_v(4, "%s: policy %s: status written, %d expression warning(s)",
		           VAP_CONTROLLER, name,
		           cJSON_IsArray(warnings) ? cJSON_GetArraySize(warnings) : 0);
out:
	free(body);
	cJSON_Delete(answer);
	cJSON_Delete(policy);
	return r;
}

/* WaitForNamedCacheSync(policySynced) */
static bool caches_synced(struct shm_arena *a)
{
	static bool synced;

	if (synced)
		return true;
	if (kcmd_cache_synced(a, VAP_GROUP, VAP_RESOURCE) != 1)
		return false;
	synced = true;
	kcmd_log_info("Caches are synced for %s", VAP_MANAGER);
	return true;
}

static void vap_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct vap_state *s = state;
	int r;

	(void)q;
	*res = (struct wk_result){0};
	if (!caches_synced(s->ctx->arena)) {
		res->requeue_after = true;
		res->after_usec = 100000;
		return;
	}
	if ((r = reconcile(s, key)) < 0) {
		kcmd_log_error("%s: policy %s: %s", VAP_CONTROLLER, key, reason(r));
		res->err = r;
	}
}

static const struct wk_controller vap_worker = {
        .name = VAP_CONTROLLER,
        .queues = vap_queue_names,
        .init = vap_init,
        .sync = vap_sync,
        .fini = vap_fini,
};

/* ---- the descriptor ----------------------------------------------------------------------- */
static const struct kcmd_watch vap_watches[] = {
        {VAP_GROUP, "v1", VAP_RESOURCE, "ValidatingAdmissionPolicy", KCMD_CACHE_OBJECT, false},
};
static const struct kcmd_queue vap_queues[] = {{.name = VAP_QUEUE}};
/* kcm's flag; kcmd runs one worker process whatever its value (docs/vapstatus.md) */
static const struct kcmd_flag vap_flags[] = {
        {.name = "concurrent-validating-admission-policy-status-syncs",
         .type = KCMD_FLAG_INT,
         .def = "5",
         .min = 1,
         .max = INT32_MAX,
         .help = "The number of ValidatingAdmissionPolicyStatusController workers that are "
                 "allowed to sync concurrently. (kcmd: one worker process whatever the value, "
                 "its type checker answers one policy at a time.)"},
};

const struct kcmd_controller kcmd_vapstatus_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = VAP_CONTROLLER,
        .enabled_by_default = true,
        .service_account = VAP_CONTROLLER,
        .cluster_scoped_keys = true,
        .watches = vap_watches,
        .n_watches = 1,
        .queues = vap_queues,
        .n_queues = 1,
        .flags = vap_flags,
        .n_flags = 1,
        .handlers = &vap_handlers,
        .worker = &vap_worker,
};
