/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench/driver.c: `kcmd bench`, the benchmark driver (docs/bench.md).
 *
 * Design:
 * - Threads, each with its own blocking kube client (kube/client.h: a client belongs to one
 *   thread): two watches (bench pods, bench ReplicaSets) that keep the driver's own view of the
 *   workload; a sampler (/proc CPU and memory of the controller manager under test, kcmd's
 *   workqueue depth, the time series for the plots); a small pool that paces the driver's
 *   ReplicaSet writes at --create-rate. The main thread runs the phases and prints progress.
 * - Everything is measured from outside the controller, the same way for kcmd and upstream:
 *   convergence and pods/s from the driver's pod watch, reaction latency = ReplicaSet scale-up
 *   event seen by the driver -> first pod ADDED event for it, API requests from the apiserver's
 *   apiserver_request_total deltas (every client of the cluster: the driver's writes and the
 *   simulator's are the same in both runs), CPU-seconds and memory from /proc.
 * - The kubelet simulator is a separate `kcmd --simulate-kubelet` with its controllers off,
 *   running through every pass, so it is the same for kcmd and upstream and its CPU is in neither.
 * - cluster (issue 19): every controller, kubeadm's flags on both (kubeadm_flags); Deployments
 *   with a Service each and Jobs in namespaces each pass makes and deletes, Nodes added and
 *   deleted. Four more watches (Jobs, the Services' EndpointSlices, namespaces, churn Nodes)
 *   feed the same convergence check; upstream kcm is started by the driver, not by the cluster
 *   harness, whose kcm flags are fixed.
 * - --shards=1,2,4 (issue 23): the load workload once per entry with that many kcmd instances
 *   (--shard-ranges, a Lease name of their own per pass, slots 0..N-1), each measured alone
 *   (the sampler keeps CPU and peak PSS per slot; keys from each one's /metrics; ranges from
 *   the range Leases); the phases start once the range Leases' holders are the rendezvous
 *   owners of the N identities. After the phases of an N >= 2 pass the holder of range 0 is
 *   killed -9 (every process of it) and the driver times until its ranges are held again.
 */
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kube/client.h"
#include "kube/config.h"
#include "kube/shard.h"
#include "bench/driver.h"
#include "bench/opts.h"
#include "bench/podmap.h"
#include "bench/procs.h"
#include "bench/prom.h"
#include "bench/report.h"
#include "bench/shards.h"
#include "bench/stats.h"

#define NS_PREFIX      "kcmd-bench-"
#define RAW_NS         "kcmd-bench-raw"
#define LABEL          "kcmd-bench"
#define LABEL_RS       "kcmd-bench-rs"
#define MAX_RUNS       BENCH_MAX_RUNS
#define MAX_KCMD       BENCH_MAX_INST /* failover: 2; --shards: up to 8 instances */
#define RESUME_GUARD_S 1.0 /* a pod created this soon after the kill may be the dead leader's */

static volatile sig_atomic_t interrupted;

/* snprintf without -Wformat-truncation (paths are bounded by PATH_MAX; a cut one fails later) */
__attribute__((format(printf, 3, 4))) static int fmt(char *buf, size_t n, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	int r = vsnprintf(buf, n, f, ap);
	va_end(ap);
	return r;
}

struct rsstate {
	int ns;
	int size;                /* planned size */
	int want;                /* spec.replicas the driver last wrote */
	int seen;                /* spec.replicas the RS watch last showed */
	int active, ready, term; /* pods of this RS: not terminating, of those Ready, terminating */
	double t_up;             /* RS scale-up event seen, no pod yet (0: none pending) */
	/* deployments, jobs, daemonsets: the object's watch (metadata.generation,
	 * status.observedGeneration, the generation the driver's last write produced) */
	long gen, obs_gen, want_gen;
	/* Deployment: status replicas, updatedReplicas, readyReplicas, availableReplicas;
	 * DaemonSet: currentNumberScheduled, updatedNumberScheduled, numberReady, numberAvailable,
	 * and desiredNumberScheduled */
	int s_replicas, s_updated, s_ready, s_available, s_desired;
	bool complete; /* Job: condition Complete True */
	bool exists;   /* namespaces: the namespace (this object) is in the driver's watch */
	int eps_ready; /* cluster: Ready endpoints in the EndpointSlices of its Service */
};

/* cluster: one EndpointSlice of a bench Service (its Ready endpoints counted to the object) */
struct eps_entry {
	char key[200]; /* namespace/name */
	int run, idx, ready;
};

#define CHURN_NODE "kcmd-bench-churn-"

/* A pod binding the driver sends for a DaemonSet pod (the scheduler's job; see on_pod). */
struct bind_req {
	char ns[64], name[128], uid[64], node[64];
};

struct bench {
	struct bench_opts o;
	struct bench_report rep;
	char kcmd[PATH_MAX];
	char outdir[PATH_MAX], logdir[PATH_MAX + 16];
	char cluster_dir[PATH_MAX], cluster_cmd[PATH_MAX];
	bool cluster_up;
	char kubeconfig[PATH_MAX];
	struct kube_config *kcfg;
	struct kube_client *kc; /* main thread only */
	pid_t sim_pid;

	/* the driver's view (mu) */
	pthread_mutex_t mu;
	struct bench_podmap pods;
	int cur_run; /* -1: none */
	struct rsstate *rs;
	int n_rs;
	long run_pods[MAX_RUNS], run_ready[MAX_RUNS], run_term[MAX_RUNS], run_adds[MAX_RUNS],
	        run_dels[MAX_RUNS];
	struct bench_samples lat;
	double kill_t, resume_t;
	bool watch_failed;

	/* the process(es) under test and the sampler (smu) */
	pthread_mutex_t smu;
	pid_t kcmd_pid[MAX_KCMD];
	int kcmd_port[MAX_KCMD];
	pid_t kcm_pid;              /* upstream kcm started by the harness (not our child) */
	pid_t kcm_direct[MAX_KCMD]; /* upstream kcm started by us (failover, restart) */
	char kcm_bin[PATH_MAX];     /* the harness's binaries (tests/cluster/build.sh) */
	double kcm_qps;
	int kcm_burst;
	bool kcm_le;
	bool is_kcmd;
	double root_cpu[MAX_KCMD + 1]; /* last cumulative CPU per root */
	double cpu_acc;                /* monotonic CPU-seconds of the run */
	pid_t apiserver_pid, etcd_pid; /* the test cluster's control plane (cluster status) */
	double mem_now, mem_peak, phase_mem_peak, run_mem_peak;
	double queue_now, phase_queue_max;
	FILE *series;
	double run_t0;
	bool sampling;
	pthread_t sampler, wpods, wrs;

	/* daemonsets: bindings to send (mu, bind_cv), the binder threads */
	struct bind_req *binds;
	size_t n_binds, cap_binds;
	pthread_cond_t bind_cv;
	atomic_long binds_done, bind_errors;
	int objs_done; /* objects done at the last convergence check (mu) */

	/* endpointslices: the driver's view of the slices (mu), keyed "<ns>/<name>"; per Service
	 * the sums are in rsstate s_replicas (endpoints), s_ready (ready ones), s_desired (those
	 * naming a pod the churn replaces) */
	struct bench_podmap slices;
	int churn_n; /* pods replaced per Service: pods r<run>-<svc>-<k>, k < churn_n */
	bool no_old; /* churn: a slice naming a replaced pod is not converged */
	/* cluster (mu): the pass's EndpointSlices, namespaces and churn Nodes as the driver's
	 * watches see them */
	struct eps_entry *eps;
	size_t n_eps, cap_eps;
	bool *ns_alive;   /* o.namespaces entries: namespace of the current pass exists */
	bool *node_alive; /* o.node_churn entries: churn Node exists */
	bool *node_ok;    /* ... and has spec.podCIDR and the TTL annotation */
	int churn_want;   /* churn Nodes that must be ok for W_OBJS (0: none) */

	/* --shards (issue 23): the pass's instance count (0: one kcmd as before), its Lease name,
	 * per slot the instance's identity, CPU-seconds and peak PSS (smu; the sampler's), and its
	 * workqueue adds when the phases began */
	int shard_n;
	char shard_lease[96];
	char ident[MAX_KCMD][128];
	double slot_cpu[MAX_KCMD], slot_mem_peak[MAX_KCMD], keys0[MAX_KCMD];
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
	if (s <= 0)
		return;
	struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
	nanosleep(&ts, NULL);
}

static void say(const char *fmt, ...)
{
	va_list ap;
	char ts[16];
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(ts, sizeof(ts), "%H:%M:%S", &tm);
	fprintf(stderr, "[bench %s] ", ts);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int new_client(struct bench *b, struct kube_client **kc, double qps, int burst)
{
	struct kube_client_opts ko = {.config = b->kcfg,
	                              .process = "kcmd-bench",
	                              .controller = "driver",
	                              .qps = qps,
	                              .burst = burst,
	                              .insecure_ok = true,
	                              .timeout_ms = 60000};
	return kube_client_new(&ko, kc);
}

/* ---- child processes ---------------------------------------------------------------------------
 */

/* Starts argv with stdout+stderr appended to logpath, in its own process group, killed if we die.
 */
static pid_t spawn(char *const argv[], const char *logpath, const char *cluster_dir)
{
	pid_t parent = getpid();
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		/* a fresh log: the driver greps it (leadership), old runs must not answer */
		int fd = open(logpath ? logpath : "/dev/null",
		              O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0)
			dup2(nul, 0);
		if (cluster_dir)
			setenv("KCMD_CLUSTER_DIR", cluster_dir, 1);
		signal(SIGPIPE, SIG_DFL);
		execv(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	return pid;
}

/* Waits for pid up to timeout_s; returns its wait status or -ETIMEDOUT. */
static int wait_pid(pid_t pid, double timeout_s)
{
	double end = now_s() + timeout_s;
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return st;
		if (r < 0)
			return -errno;
		if (now_s() > end)
			return -ETIMEDOUT;
		sleep_s(0.05);
	}
}

/* SIGTERM, grace, then SIGKILL of the whole process group. */
static void stop_proc(pid_t pid, double grace_s)
{
	if (pid <= 0)
		return;
	kill(pid, SIGTERM);
	if (wait_pid(pid, grace_s) == -ETIMEDOUT) {
		kill(-pid, SIGKILL);
		wait_pid(pid, 5);
	}
	kill(-pid, SIGKILL); /* anything of its group left behind */
}

/* Runs prog with args; its stdout into out (may be NULL), stderr to the cluster log. */
static int run_tool(struct bench *b, const char *prog, char *out, size_t outlen, va_list ap)
{
	char *argv[16];
	int argc = 0, pfd[2];
	char log[PATH_MAX + 32];

	argv[argc++] = (char *)prog;
	for (char *a; argc < 15 && (a = va_arg(ap, char *));)
		argv[argc++] = a;
	argv[argc] = NULL;
	fmt(log, sizeof(log), "%s/cluster.log", b->logdir);
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(pfd[1], 1);
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (fd >= 0)
			dup2(fd, 2);
		setenv("KCMD_CLUSTER_DIR", b->cluster_dir, 1);
		execv(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	size_t n = 0;
	char sink[512];
	for (;;) {
		ssize_t k = out && n + 1 < outlen ? read(pfd[0], out + n, outlen - n - 1)
		                                  : read(pfd[0], sink, sizeof(sink));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		if (out && n + 1 < outlen)
			n += (size_t)k;
	}
	if (out)
		out[n] = 0;
	close(pfd[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}

/* run_tool with its arguments inline, NULL-terminated. */
static int run_tool_l(struct bench *b, const char *prog, char *out, size_t outlen, ...)
{
	va_list ap;
	va_start(ap, outlen);
	int r = run_tool(b, prog, out, outlen, ap);
	va_end(ap);
	return r;
}

#define cluster(b, out, outlen, ...) run_tool_l(b, (b)->cluster_cmd, out, outlen, __VA_ARGS__)

/* tests/cluster/build.sh prints the directory of etcd, kube-apiserver, kube-controller-manager. */
static int find_kcm_bin(struct bench *b)
{
	char prog[PATH_MAX + 16], out[PATH_MAX];

	fmt(prog, sizeof(prog), "%s", b->cluster_cmd);
	char *sl = strrchr(prog, '/');
	if (!sl)
		return -ENOENT;
	fmt(sl + 1, sizeof(prog) - (size_t)(sl + 1 - prog), "build.sh");
	int r = run_tool_l(b, prog, out, sizeof(out), (char *)NULL);
	if (r < 0)
		return r;
	out[strcspn(out, "\n")] = 0;
	fmt(b->kcm_bin, sizeof(b->kcm_bin), "%s/kube-controller-manager", out);
	return access(b->kcm_bin, X_OK) == 0 ? 0 : -ENOENT;
}

static int free_port(void)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t l = sizeof(a);

	if (s < 0)
		return -1;
	if (bind(s, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(s, (struct sockaddr *)&a, &l) == 0)
		port = ntohs(a.sin_port);
	close(s);
	return port;
}

/* ---- HTTP to kcmd's own endpoint (self-signed, loopback) ------------------------------------- */

static size_t curl_sink(char *p, size_t sz, size_t n, void *ud)
{
	struct {
		char *buf;
		size_t len, cap;
	} *s = ud;
	size_t k = sz * n;
	if (s->len + k + 1 > s->cap) {
		size_t cap = (s->len + k + 1) * 2;
		char *nb = realloc(s->buf, cap);
		if (!nb)
			return 0;
		s->buf = nb;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, p, k);
	s->len += k;
	s->buf[s->len] = 0;
	return k;
}

/* GET https://127.0.0.1:port/path; returns the HTTP code (0: no answer); *body malloc'd. */
static long local_get(int port, const char *path, char **body)
{
	struct {
		char *buf;
		size_t len, cap;
	} s = {0};
	char url[128];
	long code = 0;
	CURL *c = curl_easy_init();

	if (!c)
		return 0;
	fmt(url, sizeof(url), "https://127.0.0.1:%d%s", port, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER,
	                 0L); /* kcmd's self-signed serving cert, loopback */
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 3000L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, curl_sink);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(c);
	if (body)
		*body = s.buf;
	else
		free(s.buf);
	return code;
}

/* ---- JSON helpers -------------------------------------------------------------------------------
 */

static const char *jstr(const cJSON *o, const char *a, const char *b2, const char *c)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
	if (b2)
		x = cJSON_GetObjectItemCaseSensitive(x, b2);
	if (c)
		x = cJSON_GetObjectItemCaseSensitive(x, c);
	return cJSON_IsString(x) ? x->valuestring : NULL;
}

/* "r<run>-<idx>" */
static bool parse_rs_name(const char *s, int *run, int *idx)
{
	char *end;
	if (!s || s[0] != 'r')
		return false;
	long r = strtol(s + 1, &end, 10);
	if (*end != '-' || r < 0 || r >= MAX_RUNS)
		return false;
	long i = strtol(end + 1, &end, 10);
	if (*end || i < 0 || i > INT_MAX)
		return false;
	*run = (int)r;
	*idx = (int)i;
	return true;
}

/* ---- the driver's view: pod and ReplicaSet events ----------------------------------------------
 */

static struct rsstate *rs_of(struct bench *b, int run, int idx)
{
	return run == b->cur_run && idx >= 0 && idx < b->n_rs ? &b->rs[idx] : NULL;
}

static void pod_account(struct bench *b, const struct bench_pod *p, int sign)
{
	b->run_pods[p->run] += sign;
	if (p->term)
		b->run_term[p->run] += sign;
	else if (p->ready)
		b->run_ready[p->run] += sign;
	struct rsstate *r = rs_of(b, p->run, p->rs);
	if (r) {
		if (p->term)
			r->term += sign;
		else {
			r->active += sign;
			if (p->ready)
				r->ready += sign;
		}
	}
}

static const char *ds_target_node(const cJSON *pod);
static void queue_bind(struct bench *b, const char *ns, const char *name, const char *uid,
                       const char *node);

static void on_pod(struct bench *b, const char *type, const cJSON *obj)
{
	const char *ns = jstr(obj, "metadata", "namespace", NULL),
	           *name = jstr(obj, "metadata", "name", NULL);
	const char *rsname = jstr(obj, "metadata", "labels", LABEL_RS);
	int run, idx;
	char key[512];

	if (!ns || !name || !parse_rs_name(rsname, &run, &idx))
		return;
	fmt(key, sizeof(key), "%s/%s", ns, name);
	bool term =
	        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"),
	                                         "deletionTimestamp") != NULL;
	bool ready = false;
	const cJSON *c, *conds = cJSON_GetObjectItemCaseSensitive(
	                        cJSON_GetObjectItemCaseSensitive(obj, "status"), "conditions");
	cJSON_ArrayForEach(c, conds)
	{
		const char *t = jstr(c, "type", NULL, NULL), *s = jstr(c, "status", NULL, NULL);
		if (t && s && !strcmp(t, "Ready"))
			ready = !strcmp(s, "True");
	}
	double t = now_s();
	/* daemonsets: an unbound pod's target node (the single matchFields metadata.name value
	 * of its required node affinity, as the DaemonSet controllers write it) */
	const char *target = NULL, *uid = NULL;
	if (b->o.workload == BENCH_DAEMONSETS && !term) {
		const char *nn = jstr(obj, "spec", "nodeName", NULL);
		if (!nn || !*nn)
			target = ds_target_node(obj);
		uid = jstr(obj, "metadata", "uid", NULL);
	}

	pthread_mutex_lock(&b->mu);
	struct bench_pod *p = bench_podmap_get(&b->pods, key);
	if (!strcmp(type, "DELETED")) {
		if (p) {
			pod_account(b, p, -1);
			b->run_dels[p->run]++;
			bench_podmap_del(&b->pods, p);
		}
	} else {
		bool added = false;
		if (p)
			pod_account(b, p, -1);
		else if (!(p = bench_podmap_put(&b->pods, key, &added))) {
			pthread_mutex_unlock(&b->mu);
			return;
		}
		p->run = (int16_t)run;
		p->rs = idx;
		p->ready = ready;
		p->term = term;
		pod_account(b, p, +1);
		if (target && uid && !p->bind_sent) {
			p->bind_sent = true;
			queue_bind(b, ns, name, uid, target);
		}
		if (added) {
			b->run_adds[run]++;
			struct rsstate *r = rs_of(b, run, idx);
			if (r && r->t_up > 0) {
				bench_samples_add(&b->lat, (t - r->t_up) * 1000.0);
				r->t_up = 0;
			}
			if (run == b->cur_run && b->kill_t > 0 && !b->resume_t &&
			    t > b->kill_t + RESUME_GUARD_S)
				b->resume_t = t;
		}
	}
	pthread_mutex_unlock(&b->mu);
}

static const cJSON *jpath(const cJSON *o, const char *const *path)
{
	for (; o && *path; path++)
		o = cJSON_GetObjectItemCaseSensitive(o, *path);
	return o;
}

static int jint(const cJSON *o, const char *a, const char *c)
{
	const cJSON *x =
	        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, a), c);
	return cJSON_IsNumber(x) ? x->valueint : 0;
}

static const char *ds_target_node(const cJSON *pod)
{
	static const char *const path[] = {"spec",
	                                   "affinity",
	                                   "nodeAffinity",
	                                   "requiredDuringSchedulingIgnoredDuringExecution",
	                                   "nodeSelectorTerms",
	                                   NULL};
	const cJSON *term;
	cJSON_ArrayForEach(term, jpath(pod, path))
	{
		const cJSON *f;
		cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(term, "matchFields"))
		{
			const char *k = jstr(f, "key", NULL, NULL),
			           *op = jstr(f, "operator", NULL, NULL);
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(f, "values");
			if (k && op && !strcmp(k, "metadata.name") && !strcmp(op, "In") &&
			    cJSON_GetArraySize(v) == 1 && cJSON_IsString(cJSON_GetArrayItem(v, 0)))
				return cJSON_GetArrayItem(v, 0)->valuestring;
		}
	}
	return NULL;
}

/* Under mu. */
static void queue_bind(struct bench *b, const char *ns, const char *name, const char *uid,
                       const char *node)
{
	if (b->n_binds == b->cap_binds) {
		size_t cap = b->cap_binds ? b->cap_binds * 2 : 256;
		struct bind_req *nb = realloc(b->binds, cap * sizeof(*nb));
		if (!nb)
			return;
		b->binds = nb;
		b->cap_binds = cap;
	}
	struct bind_req *q = &b->binds[b->n_binds++];
	fmt(q->ns, sizeof(q->ns), "%s", ns);
	fmt(q->name, sizeof(q->name), "%s", name);
	fmt(q->uid, sizeof(q->uid), "%s", uid);
	fmt(q->node, sizeof(q->node), "%s", node);
	pthread_cond_signal(&b->bind_cv);
}

/* daemonsets: the driver plays kube-scheduler for the DaemonSet pods (POST pods/binding to the
 * node of the pod's affinity); the simulator leaves them unbound (workers/kubeletsim). The
 * same for both passes, and in neither controller manager's figures. */
static void *binder_thread(void *arg)
{
	struct bench *b = arg;
	struct kube_client *kc = NULL;
	char body[512], path[256];

	if (new_client(b, &kc, 0, 1) < 0)
		return NULL;
	for (;;) {
		struct bind_req q;
		pthread_mutex_lock(&b->mu);
		while (!b->n_binds)
			pthread_cond_wait(&b->bind_cv, &b->mu);
		q = b->binds[--b->n_binds];
		pthread_mutex_unlock(&b->mu);
		fmt(body, sizeof(body),
		    "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"%s\","
		    "\"uid\":\"%s\"},\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\","
		    "\"name\":\"%s\"}}",
		    q.name, q.uid, q.node);
		fmt(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/binding", q.ns, q.name);
		struct kube_request rq = {
		        .verb = KUBE_CREATE, .path = path, .body = body, .body_len = strlen(body)};
		struct kube_response resp = {0};
		int r = kube_client_request(kc, &rq, NULL, NULL, &resp);
		/* 409: bound already; 404: gone (an old pod of the rolling update) */
		if (r < 0 && resp.http_code != 409 && resp.http_code != 404)
			atomic_fetch_add(&b->bind_errors, 1);
		else
			atomic_fetch_add(&b->binds_done, 1);
		kube_response_clear(&resp);
	}
	return NULL;
}

/* deployments, jobs, daemonsets: the status of one object of the workload. */
static void on_wobj(struct bench *b, const char *type, const cJSON *obj)
{
	int run, idx;

	if (!strcmp(type, "DELETED") ||
	    !parse_rs_name(jstr(obj, "metadata", "name", NULL), &run, &idx))
		return;
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(obj, "status");
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "generation");
	bool complete = false;
	const cJSON *c;
	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(st, "conditions"))
	{
		const char *t = jstr(c, "type", NULL, NULL), *s = jstr(c, "status", NULL, NULL);
		if (t && s && !strcmp(t, "Complete") && !strcmp(s, "True"))
			complete = true;
	}
	pthread_mutex_lock(&b->mu);
	struct rsstate *r = rs_of(b, run, idx);
	if (r) {
		r->gen = cJSON_IsNumber(g) ? (long)g->valuedouble : 0;
		r->obs_gen = (long)jint(obj, "status", "observedGeneration");
		r->complete = complete;
		if (b->o.workload == BENCH_DAEMONSETS) {
			r->s_replicas = jint(obj, "status", "currentNumberScheduled");
			r->s_updated = jint(obj, "status", "updatedNumberScheduled");
			r->s_ready = jint(obj, "status", "numberReady");
			r->s_available = jint(obj, "status", "numberAvailable");
			r->s_desired = jint(obj, "status", "desiredNumberScheduled");
		} else {
			r->s_replicas = jint(obj, "status", "replicas");
			r->s_updated = jint(obj, "status", "updatedReplicas");
			r->s_ready = jint(obj, "status", "readyReplicas");
			r->s_available = jint(obj, "status", "availableReplicas");
		}
	}
	pthread_mutex_unlock(&b->mu);
}

static void on_rs(struct bench *b, const char *type, const cJSON *obj)
{
	int run, idx;
	double t = now_s();

	if (!strcmp(type, "DELETED") ||
	    !parse_rs_name(jstr(obj, "metadata", "name", NULL), &run, &idx))
		return;
	const cJSON *rep = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(obj, "spec"), "replicas");
	int replicas = cJSON_IsNumber(rep) ? rep->valueint : 1;
	pthread_mutex_lock(&b->mu);
	struct rsstate *r = rs_of(b, run, idx);
	if (r) {
		if (replicas > r->seen) {
			/* A pod beyond the old size already seen (the pod watch ran ahead of this
			 * one): no latency to take for this change. */
			if (r->active <= r->seen && !r->t_up)
				r->t_up = t;
		} else if (replicas < r->seen) {
			r->t_up = 0;
		}
		r->seen = replicas;
	}
	pthread_mutex_unlock(&b->mu);
}

/* namespaces: the namespaces of the workload (named r<run>-<i>, labelled LABEL). */
static void on_ns(struct bench *b, const char *type, const cJSON *obj)
{
	int run, idx;

	if (!parse_rs_name(jstr(obj, "metadata", "name", NULL), &run, &idx))
		return;
	pthread_mutex_lock(&b->mu);
	struct rsstate *r = rs_of(b, run, idx);
	if (r)
		r->exists = strcmp(type, "DELETED") != 0;
	pthread_mutex_unlock(&b->mu);
}

static void reset_ns(struct bench *b)
{
	pthread_mutex_lock(&b->mu);
	for (int i = 0; i < b->n_rs; i++)
		b->rs[i].exists = false;
	pthread_mutex_unlock(&b->mu);
}

/* endpointslices: a pod name r<run>-<svc>-<k> with k < churn_n (one the churn replaces; the
 * replacements are r<run>-<svc>-c<k>) */
static bool old_pod_name(const struct bench *b, const char *name)
{
	const char *dash = name ? strrchr(name, '-') : NULL;
	if (!dash || dash[1] < '0' || dash[1] > '9')
		return false;
	char *end;
	long k = strtol(dash + 1, &end, 10);
	return !*end && k < b->churn_n;
}

static void slice_account(struct bench *b, const struct bench_pod *e, int sign)
{
	struct rsstate *r = rs_of(b, e->run, e->rs);
	if (!r)
		return;
	r->s_replicas += sign * e->ep_total;
	r->s_ready += sign * e->ep_ready;
	r->s_desired += sign * e->ep_old;
}

/* endpointslices: one EndpointSlice of a bench Service (the controller copies the Service's
 * labels, LABEL among them, and adds kubernetes.io/service-name). */
static void on_slice(struct bench *b, const char *type, const cJSON *obj)
{
	const char *ns = jstr(obj, "metadata", "namespace", NULL),
	           *name = jstr(obj, "metadata", "name", NULL);
	int run, idx;
	char key[512];

	if (!ns || !name ||
	    !parse_rs_name(jstr(obj, "metadata", "labels", "kubernetes.io/service-name"), &run,
	                   &idx))
		return;
	fmt(key, sizeof(key), "%s/%s", ns, name);
	int total = 0, ready = 0, old = 0;
	const cJSON *ep;
	cJSON_ArrayForEach(ep, cJSON_GetObjectItemCaseSensitive(obj, "endpoints"))
	{
		const cJSON *rd = cJSON_GetObjectItemCaseSensitive(
		        cJSON_GetObjectItemCaseSensitive(ep, "conditions"), "ready");
		total++;
		if (cJSON_IsTrue(rd))
			ready++;
		if (old_pod_name(b, jstr(ep, "targetRef", "name", NULL)))
			old++;
	}
	pthread_mutex_lock(&b->mu);
	struct bench_pod *e = bench_podmap_get(&b->slices, key);
	if (e)
		slice_account(b, e, -1);
	if (!strcmp(type, "DELETED")) {
		if (e)
			bench_podmap_del(&b->slices, e);
	} else {
		bool added;
		if (!e)
			e = bench_podmap_put(&b->slices, key, &added);
		if (e) {
			e->run = (int16_t)run;
			e->rs = idx;
			e->ep_total = total;
			e->ep_ready = ready;
			e->ep_old = old;
			slice_account(b, e, +1);
		}
	}
	pthread_mutex_unlock(&b->mu);
}

static void reset_slices(struct bench *b)
{
	pthread_mutex_lock(&b->mu);
	bench_podmap_clear(&b->slices);
	for (int i = 0; i < b->n_rs; i++)
		b->rs[i].s_replicas = b->rs[i].s_ready = b->rs[i].s_desired = 0;
	pthread_mutex_unlock(&b->mu);
}

static void reset_view(struct bench *b)
{
	/* a relist: forget and rebuild (counters of adds/deletes stay) */
	pthread_mutex_lock(&b->mu);
	bench_podmap_clear(&b->pods);
	for (int r = 0; r < MAX_RUNS; r++)
		b->run_pods[r] = b->run_ready[r] = b->run_term[r] = 0;
	for (int i = 0; i < b->n_rs; i++)
		b->rs[i].active = b->rs[i].ready = b->rs[i].term = 0;
	pthread_mutex_unlock(&b->mu);
}

/* ---- cluster: EndpointSlices, namespaces, churn Nodes -------------------------------------------
 */

/* "kcmd-bench-c<run>-<i>" */
static bool parse_cluster_ns(const char *s, int *run, int *idx)
{
	char *end;
	size_t n = strlen(NS_PREFIX "c");
	if (!s || strncmp(s, NS_PREFIX "c", n))
		return false;
	long r = strtol(s + n, &end, 10);
	if (end == s + n || *end != '-' || r < 0 || r >= MAX_RUNS)
		return false;
	const char *p = end + 1;
	long i = strtol(p, &end, 10);
	if (end == p || *end || i < 0 || i > INT_MAX)
		return false;
	*run = (int)r;
	*idx = (int)i;
	return true;
}

/* An EndpointSlice of a bench Service (label kubernetes.io/service-name = the object's name):
 * its Ready endpoints are counted to the object. Under mu: the entry by key, or a new one. */
static struct eps_entry *eps_get(struct bench *b, const char *key, bool create)
{
	for (size_t i = 0; i < b->n_eps; i++)
		if (!strcmp(b->eps[i].key, key))
			return &b->eps[i];
	if (!create)
		return NULL;
	if (b->n_eps == b->cap_eps) {
		size_t cap = b->cap_eps ? b->cap_eps * 2 : 64;
		struct eps_entry *ne = realloc(b->eps, cap * sizeof(*ne));
		if (!ne)
			return NULL;
		b->eps = ne;
		b->cap_eps = cap;
	}
	struct eps_entry *e = &b->eps[b->n_eps++];
	*e = (struct eps_entry){.run = -1};
	fmt(e->key, sizeof(e->key), "%s", key);
	return e;
}

static void on_eps(struct bench *b, const char *type, const cJSON *obj)
{
	const char *ns = jstr(obj, "metadata", "namespace", NULL),
	           *name = jstr(obj, "metadata", "name", NULL),
	           *svc = jstr(obj, "metadata", "labels", "kubernetes.io/service-name");
	int run, idx, nrun, nidx;
	char key[200];

	if (!ns || !name || !parse_rs_name(svc, &run, &idx) ||
	    !parse_cluster_ns(ns, &nrun, &nidx) || nrun != run)
		return;
	fmt(key, sizeof(key), "%s/%s", ns, name);
	int ready = 0;
	const cJSON *ep;
	cJSON_ArrayForEach(ep, cJSON_GetObjectItemCaseSensitive(obj, "endpoints"))
	{
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(
		        cJSON_GetObjectItemCaseSensitive(ep, "conditions"), "ready");
		ready += cJSON_IsTrue(r);
	}
	bool del = !strcmp(type, "DELETED");
	pthread_mutex_lock(&b->mu);
	struct eps_entry *e = eps_get(b, key, !del);
	if (e) {
		struct rsstate *old = e->run >= 0 ? rs_of(b, e->run, e->idx) : NULL;
		if (old)
			old->eps_ready -= e->ready;
		if (del) {
			*e = b->eps[--b->n_eps];
		} else {
			e->run = run;
			e->idx = idx;
			e->ready = ready;
			struct rsstate *r = rs_of(b, run, idx);
			if (r)
				r->eps_ready += ready;
		}
	}
	pthread_mutex_unlock(&b->mu);
}

static void reset_eps(struct bench *b)
{
	pthread_mutex_lock(&b->mu);
	b->n_eps = 0;
	for (int i = 0; i < b->n_rs; i++)
		b->rs[i].eps_ready = 0;
	pthread_mutex_unlock(&b->mu);
}

static void on_cluster_ns(struct bench *b, const char *type, const cJSON *obj)
{
	int run, idx;
	if (!parse_cluster_ns(jstr(obj, "metadata", "name", NULL), &run, &idx))
		return;
	pthread_mutex_lock(&b->mu);
	if (b->ns_alive && run == b->cur_run && idx < b->o.namespaces)
		b->ns_alive[idx] = strcmp(type, "DELETED") != 0;
	pthread_mutex_unlock(&b->mu);
}

static void reset_cluster_ns(struct bench *b)
{
	pthread_mutex_lock(&b->mu);
	for (int i = 0; b->ns_alive && i < b->o.namespaces; i++)
		b->ns_alive[i] = false;
	pthread_mutex_unlock(&b->mu);
}

/* A churn Node "kcmd-bench-churn-<run>-<k>": ok once the node IPAM controller gave it a pod
 * CIDR and the TTL controller its node.alpha.kubernetes.io/ttl annotation. */
static void on_node(struct bench *b, const char *type, const cJSON *obj)
{
	const char *name = jstr(obj, "metadata", "name", NULL);
	char *end;
	size_t n = strlen(CHURN_NODE);
	if (!name || strncmp(name, CHURN_NODE, n))
		return;
	long run = strtol(name + n, &end, 10);
	if (end == name + n || *end != '-')
		return;
	const char *p = end + 1;
	long k = strtol(p, &end, 10);
	if (end == p || *end || k < 0)
		return;
	const char *cidr = jstr(obj, "spec", "podCIDR", NULL),
	           *ttl = jstr(obj, "metadata", "annotations", "node.alpha.kubernetes.io/ttl");
	pthread_mutex_lock(&b->mu);
	if (b->node_alive && run == b->cur_run && k < b->o.node_churn) {
		bool del = !strcmp(type, "DELETED");
		b->node_alive[k] = !del;
		b->node_ok[k] = !del && cidr && *cidr && ttl;
	}
	pthread_mutex_unlock(&b->mu);
}

static void reset_nodes(struct bench *b)
{
	pthread_mutex_lock(&b->mu);
	for (int i = 0; b->node_alive && i < b->o.node_churn; i++)
		b->node_alive[i] = b->node_ok[i] = false;
	pthread_mutex_unlock(&b->mu);
}

/* ---- watches ------------------------------------------------------------------------------------
 */

struct watcher {
	struct bench *b;
	const char *group, *resource;
	void (*on_obj)(struct bench *, const char *, const cJSON *);
	void (*reset)(struct bench *); /* before a relist (NULL: nothing to forget) */
	const char *selector;          /* NULL: LABEL */
	bool pods;
	char rv[64];
	bool relist;
};

static int watch_event(const char *json, size_t len, void *ud)
{
	struct watcher *w = ud;
	cJSON *ev = cJSON_ParseWithLength(json, len);
	if (!ev)
		return 0;
	const char *type = jstr(ev, "type", NULL, NULL);
	const cJSON *obj = cJSON_GetObjectItemCaseSensitive(ev, "object");
	int ret = 0;
	if (type && !strcmp(type, "ERROR")) {
		const cJSON *code = cJSON_GetObjectItemCaseSensitive(obj, "code");
		if (cJSON_IsNumber(code) && code->valueint == 410)
			w->relist = true;
		ret = -1;
	} else if (type && obj) {
		const char *rv = jstr(obj, "metadata", "resourceVersion", NULL);
		if (rv)
			fmt(w->rv, sizeof(w->rv), "%s", rv);
		if (strcmp(type, "BOOKMARK") != 0)
			w->on_obj(w->b, type, obj);
	}
	cJSON_Delete(ev);
	return ret;
}

static int list_all(struct watcher *w, struct kube_client *kc)
{
	char cont[4096] = "";
	do {
		struct kube_request rq = {.verb = KUBE_LIST,
		                          .group = w->group,
		                          .version = "v1",
		                          .resource = w->resource,
		                          .label_selector = w->selector ? w->selector : LABEL,
		                          .limit = 500,
		                          .cont = cont};
		struct kube_response resp = {0};
		int r = kube_client_request(kc, &rq, NULL, NULL, &resp);
		if (r < 0) {
			kube_response_clear(&resp);
			return r;
		}
		cJSON *l = cJSON_ParseWithLength(resp.body, resp.body_len);
		kube_response_clear(&resp);
		if (!l)
			return -EBADMSG;
		const cJSON *it;
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(l, "items"))
		        w->on_obj(w->b, "ADDED", it);
		const char *rv = jstr(l, "metadata", "resourceVersion", NULL),
		           *c = jstr(l, "metadata", "continue", NULL);
		if (rv)
			fmt(w->rv, sizeof(w->rv), "%s", rv);
		fmt(cont, sizeof(cont), "%s", c ? c : "");
		cJSON_Delete(l);
	} while (cont[0]);
	return 0;
}

static void *watch_thread(void *arg)
{
	struct watcher *w = arg;
	struct kube_client *kc = NULL;
	int fails = 0;

	if (new_client(w->b, &kc, 0, 1) < 0) {
		w->b->watch_failed = true;
		return NULL;
	}
	w->relist = true;
	for (;;) {
		if (w->relist) {
			if (w->pods)
				reset_view(w->b);
			if (w->reset)
				w->reset(w->b);
			if (list_all(w, kc) < 0) {
				if (++fails > 30)
					w->b->watch_failed = true;
				sleep_s(1);
				continue;
			}
			w->relist = false;
		}
		struct kube_request rq = {.verb = KUBE_WATCH,
		                          .group = w->group,
		                          .version = "v1",
		                          .resource = w->resource,
		                          .label_selector = w->selector ? w->selector : LABEL,
		                          .resource_version = w->rv,
		                          .allow_watch_bookmarks = true,
		                          .timeout_seconds = 240};
		struct kube_response resp = {0};
		int r = kube_client_request(kc, &rq, watch_event, w, &resp);
		if (resp.http_code == 410)
			w->relist = true;
		kube_response_clear(&resp);
		if (r < 0 && !w->relist)
			sleep_s(0.5);
		fails = 0;
	}
	return NULL;
}

/* ---- sampler
 * ------------------------------------------------------------------------------------- */

static double queue_depth(struct bench *b)
{
	double sum = NAN;
	for (int i = 0; i < MAX_KCMD; i++) {
		char *body = NULL;
		if (b->kcmd_pid[i] <= 0 || !b->kcmd_port[i])
			continue;
		if (local_get(b->kcmd_port[i], "/metrics", &body) == 200 && body) {
			struct prom_counts c = {0};
			static const char *const g[] = {"name"};
			if (prom_collect(body, strlen(body), "workqueue_depth", NULL, 0, g, 0,
			                 &c) >= 0)
				sum = (isnan(sum) ? 0 : sum) + prom_counts_total(&c);
			prom_counts_free(&c);
		}
		free(body);
	}
	return sum;
}

/* One sample; smu held. */
static void sample_locked(struct bench *b)
{
	double mem = 0;
	bool any = false;

	/* roots: kcmd managers, or upstream kcm (ours, or the harness's in the last slot) */
	for (int i = 0; i <= MAX_KCMD; i++) {
		pid_t root = i == MAX_KCMD ? (b->is_kcmd ? 0 : b->kcm_pid)
		             : b->is_kcmd  ? b->kcmd_pid[i]
		                           : b->kcm_direct[i];
		struct bench_tree t;
		if (root <= 0 || bench_tree_sample(root, &t) < 0)
			continue;
		any = true;
		/* a smaller count than last time: a new process in this slot (upstream restarted)
		 */
		double d = t.cpu_s >= b->root_cpu[i] ? t.cpu_s - b->root_cpu[i] : t.cpu_s;
		b->cpu_acc += d;
		b->root_cpu[i] = t.cpu_s;
		if (b->is_kcmd && i < MAX_KCMD) {
			b->slot_cpu[i] += d;
			if (t.pss_mb > b->slot_mem_peak[i])
				b->slot_mem_peak[i] = t.pss_mb;
		}
		mem += b->is_kcmd ? t.pss_mb : t.rss_mb;
	}
	if (!any)
		return;
	b->mem_now = mem;
	if (mem > b->phase_mem_peak)
		b->phase_mem_peak = mem;
	if (mem > b->run_mem_peak)
		b->run_mem_peak = mem;
}

static void *sampler_thread(void *arg)
{
	struct bench *b = arg;
	unsigned tick = 0;

	for (;; tick++) {
		sleep_s(0.5);
		pthread_mutex_lock(&b->smu);
		if (b->sampling) {
			sample_locked(b);
			if (b->is_kcmd && tick % 2 == 0) {
				double q = queue_depth(b);
				b->queue_now = q;
				if (!isnan(q) &&
				    (isnan(b->phase_queue_max) || q > b->phase_queue_max))
					b->phase_queue_max = q;
			}
			if (b->series) {
				long pods = 0, ready = 0;
				pthread_mutex_lock(&b->mu);
				if (b->cur_run >= 0) {
					pods = b->run_pods[b->cur_run];
					ready = b->run_ready[b->cur_run];
				}
				pthread_mutex_unlock(&b->mu);
				fprintf(b->series, "%.2f %ld %ld %.2f %.3f\n", now_s() - b->run_t0,
				        pods, ready, b->mem_now, b->cpu_acc);
				fflush(b->series);
			}
		}
		pthread_mutex_unlock(&b->smu);
	}
	return NULL;
}

/* ---- apiserver metrics --------------------------------------------------------------------------
 */

static int api_counts(struct bench *b, struct prom_counts *out)
{
	struct kube_request rq = {.verb = KUBE_GET, .path = "/metrics", .accept = "text/plain"};
	struct kube_response resp = {0};
	/* KCMD_BENCH_API_BY_RESOURCE=1: keys "verb code resource subresource" (per-resource counts)
	 */
	static const char *const g[] = {"verb", "code", "resource", "subresource"};
	unsigned ng = getenv("KCMD_BENCH_API_BY_RESOURCE") ? 4 : 2;
	int r = kube_client_request(b->kc, &rq, NULL, NULL, &resp);

	if (r == 0)
		r = prom_collect(resp.body, resp.body_len, "apiserver_request_total", NULL, 0, g,
		                 ng, out);
	kube_response_clear(&resp);
	return r < 0 ? r : 0;
}

static double lists_of(const struct prom_counts *c)
{
	double n = 0;
	for (size_t i = 0; i < c->n; i++)
		if (!strncmp(c->items[i].key, "LIST ", 5))
			n += c->items[i].v;
	return n;
}

/* ---- the control plane's cost ------------------------------------------------------------------
 * CPU-seconds of kube-apiserver and etcd and the bytes the apiserver wrote (wchar of
 * /proc/<pid>/io: its answers and watch events to every client, and its writes to etcd), read at
 * phase start and end. The pids come from `cluster status` (asked again when a process is gone,
 * e.g. after `cluster restart`); with a cluster the bench did not start and no status, NAN. */

struct cp_cost {
	double api_cpu, etcd_cpu, api_mb;
};

static int status_pid(const char *st, const char *name)
{
	for (const char *l = st; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		size_t n = strlen(name);
		int pid;
		if (!strncmp(l, name, n) && (l[n] == ' ' || l[n] == '\t') &&
		    sscanf(strstr(l, "pid ") ? strstr(l, "pid ") : "", "pid %d", &pid) == 1)
			return pid;
	}
	return 0;
}

static void cp_sample(struct bench *b, struct cp_cost *c)
{
	double w = NAN;
	*c = (struct cp_cost){NAN, NAN, NAN};
	for (int attempt = 0; attempt < 2; attempt++) {
		bool ok = bench_proc_cost(b->apiserver_pid, &c->api_cpu, &c->api_mb) == 0 &&
		          bench_proc_cost(b->etcd_pid, &c->etcd_cpu, &w) == 0;
		if (ok || attempt || !b->cluster_cmd[0])
			break;
		char st[4096] = "";
		if (cluster(b, st, sizeof(st), "status", (char *)NULL) < 0)
			break;
		b->apiserver_pid = status_pid(st, "kube-apiserver");
		b->etcd_pid = status_pid(st, "etcd");
	}
	if (isnan(c->etcd_cpu) || isnan(c->api_cpu))
		*c = (struct cp_cost){NAN, NAN, NAN};
}

/* ---- phases
 * ---------------------------------------------------------------------------------------- */

struct phase_ctx {
	struct bench_phase *ph;
	struct cp_cost cp0;
	double t0, cpu0;
	long adds0, dels0;
	struct prom_counts api0;
};

/* A pass begins: the sampler's figures start again for this controller, into a series file of
 * its own (<outdir>/<workload>-<tag>.dat). */
static void sampler_start(struct bench *b, struct bench_run *run, const char *tag, bool upstream)
{
	pthread_mutex_lock(&b->smu);
	b->is_kcmd = !upstream;
	b->cpu_acc = 0;
	b->mem_now = b->run_mem_peak = 0;
	b->queue_now = NAN;
	memset(b->root_cpu, 0, sizeof(b->root_cpu));
	memset(b->slot_cpu, 0, sizeof(b->slot_cpu));
	memset(b->slot_mem_peak, 0, sizeof(b->slot_mem_peak));
	fmt(run->series, sizeof(run->series), "%s/%s-%s.dat", b->outdir,
	    bench_workload_name(b->o.workload), tag);
	b->series = fopen(run->series, "we");
	if (b->series)
		fprintf(b->series, "# t_s pods ready mem_mb(%s) cpu_s\n", run->mem_kind);
	pthread_mutex_unlock(&b->smu);
}

/* A pass ends: the sampler stops, its figures go into the run, its series file is closed. */
static void sampler_stop(struct bench *b, struct bench_run *run)
{
	pthread_mutex_lock(&b->smu);
	b->sampling = false;
	run->cpu_s = b->cpu_acc;
	run->peak_mem_mb = b->run_mem_peak;
	if (b->series)
		fclose(b->series);
	b->series = NULL;
	pthread_mutex_unlock(&b->smu);
}

static void phase_begin(struct bench *b, struct bench_run *run, const char *name,
                        struct phase_ctx *pc)
{
	struct bench_phase *ph = &run->phases[run->n_phases++];

	*ph = (struct bench_phase){.resume_s = NAN,
	                           .react_p50_ms = NAN,
	                           .react_p99_ms = NAN,
	                           .lists = NAN,
	                           .apiserver_cpu_s = NAN,
	                           .etcd_cpu_s = NAN,
	                           .apiserver_sent_mb = NAN};
	fmt(ph->name, sizeof(ph->name), "%s", name);
	*pc = (struct phase_ctx){.ph = ph};
	if (api_counts(b, &pc->api0) < 0)
		say("warning: cannot read the apiserver's /metrics; API request counts will be "
		    "missing");
	cp_sample(b, &pc->cp0);
	pthread_mutex_lock(&b->smu);
	sample_locked(b);
	pc->cpu0 = b->cpu_acc;
	b->phase_mem_peak = b->mem_now;
	b->phase_queue_max = NAN;
	pthread_mutex_unlock(&b->smu);
	pthread_mutex_lock(&b->mu);
	pc->adds0 = b->run_adds[b->cur_run];
	pc->dels0 = b->run_dels[b->cur_run];
	bench_samples_free(&b->lat);
	pthread_mutex_unlock(&b->mu);
	pc->t0 = now_s();
	ph->start_s = pc->t0 - b->run_t0;
	say("%s: phase %s", run->controller, name);
}

static void phase_end(struct bench *b, struct phase_ctx *pc, bool converged)
{
	struct bench_phase *ph = pc->ph;
	struct prom_counts after = {0};

	ph->converged = converged;
	ph->converge_s = now_s() - pc->t0;
	pthread_mutex_lock(&b->smu);
	sample_locked(b);
	ph->cpu_s = b->cpu_acc - pc->cpu0;
	ph->peak_mem_mb = b->phase_mem_peak;
	ph->queue_depth_max = b->phase_queue_max;
	pthread_mutex_unlock(&b->smu);
	pthread_mutex_lock(&b->mu);
	ph->pods_created = b->run_adds[b->cur_run] - pc->adds0;
	ph->pods_deleted = b->run_dels[b->cur_run] - pc->dels0;
	ph->react_n = (long)b->lat.n;
	ph->react_p50_ms = bench_percentile(&b->lat, 50);
	ph->react_p99_ms = bench_percentile(&b->lat, 99);
	pthread_mutex_unlock(&b->mu);
	if (pc->api0.n && api_counts(b, &after) == 0) {
		prom_counts_delta(&after, &pc->api0, &ph->api);
		prom_counts_sort(&ph->api);
		ph->lists = lists_of(&ph->api);
	}
	prom_counts_free(&after);
	prom_counts_free(&pc->api0);
	struct cp_cost cp1;
	cp_sample(b, &cp1);
	/* a restarted apiserver or etcd (a new pid) starts from 0: its cost is then unknown */
	if (cp1.api_cpu >= pc->cp0.api_cpu && cp1.etcd_cpu >= pc->cp0.etcd_cpu) {
		ph->apiserver_cpu_s = cp1.api_cpu - pc->cp0.api_cpu;
		ph->etcd_cpu_s = cp1.etcd_cpu - pc->cp0.etcd_cpu;
		ph->apiserver_sent_mb = cp1.api_mb - pc->cp0.api_mb;
	}
	say("  %s %s in %.1f s: %ld pods created, %ld deleted, CPU %.2f s, peak memory %.1f MB, "
	    "reaction p50 %.0f ms p99 %.0f ms; apiserver CPU %.2f s, etcd CPU %.2f s, apiserver "
	    "wrote %.1f MB",
	    ph->name, converged ? "converged" : "did NOT converge", ph->converge_s,
	    ph->pods_created, ph->pods_deleted, ph->cpu_s, ph->peak_mem_mb, ph->react_p50_ms,
	    ph->react_p99_ms, ph->apiserver_cpu_s, ph->etcd_cpu_s, ph->apiserver_sent_mb);
}

/* ---- paced writes
 * ------------------------------------------------------------------------------------ */

struct pacer;
typedef int (*pace_fn)(struct pacer *p, struct kube_client *kc, int i);
struct pacer {
	struct bench *b;
	int n;
	double rate; /* <= 0: as fast as possible */
	pace_fn fn;
	void *ud;
	atomic_int next, done, errors;
	atomic_bool stop;
	double t0;
	int nth;
	pthread_t th[1024];
};

static void *pacer_thread(void *arg)
{
	struct pacer *p = arg;
	struct kube_client *kc = NULL;

	if (new_client(p->b, &kc, 0, 1) < 0) {
		for (int i; (i = atomic_fetch_add(&p->next, 1)) < p->n;) {
			atomic_fetch_add(&p->errors, 1);
			atomic_fetch_add(&p->done, 1);
		}
		return NULL;
	}
	for (int i; !interrupted && !atomic_load(&p->stop) &&
	            (i = atomic_fetch_add(&p->next, 1)) < p->n;) {
		if (p->rate > 0)
			sleep_s(p->t0 + i / p->rate - now_s());
		int r = -1;
		for (int attempt = 0; attempt < 5 && r < 0 && !interrupted; attempt++) {
			if (attempt)
				sleep_s(0.5 * attempt);
			r = p->fn(p, kc, i);
		}
		if (r < 0)
			atomic_fetch_add(&p->errors, 1);
		atomic_fetch_add(&p->done, 1);
	}
	kube_client_free(kc);
	return NULL;
}

static void pacer_start(struct pacer *p, struct bench *b, int n, double rate, int threads,
                        pace_fn fn, void *ud)
{
	p->b = b;
	p->n = n;
	p->rate = rate;
	p->fn = fn;
	p->ud = ud;
	atomic_store(&p->next, 0);
	atomic_store(&p->done, 0);
	atomic_store(&p->errors, 0);
	atomic_store(&p->stop, false);
	p->t0 = now_s();
	p->nth = threads < n ? threads : n;
	if (p->nth > 1024)
		p->nth = 1024;
	for (int i = 0; i < p->nth; i++)
		if (pthread_create(&p->th[i], NULL, pacer_thread, p) != 0)
			p->nth = i;
}

static void pacer_join(struct pacer *p)
{
	for (int i = 0; i < p->nth; i++)
		pthread_join(p->th[i], NULL);
	p->nth = 0;
}

static void rs_name(int run, int idx, char *buf, size_t n)
{
	fmt(buf, n, "r%d-%d", run, idx);
}

static void ns_name(int i, char *buf, size_t n)
{
	fmt(buf, n, NS_PREFIX "%d", i);
}

/* The namespace of object i's namespace index: cluster makes (and deletes) namespaces of its own
 * in each pass, "kcmd-bench-c<run>-<i>"; the others share kcmd-bench-<i>. */
static void obj_ns(const struct bench *b, int run, int i, char *buf, size_t n)
{
	if (b->o.workload == BENCH_CLUSTER)
		fmt(buf, n, NS_PREFIX "c%d-%d", run, i);
	else
		ns_name(i, buf, n);
}

/* cluster: objects [0, deployments) are Deployments (a Service each), the rest Jobs */
static enum bench_workload kind_of(const struct bench *b, int i)
{
	if (b->o.workload != BENCH_CLUSTER)
		return b->o.workload;
	return i < b->o.deployments ? BENCH_DEPLOYMENTS : BENCH_JOBS;
}

static int write_rs(struct pacer *p, struct kube_client *kc, int i, const char *verb_kind)
{
	struct bench *b = p->b;
	char name[32], ns[32], body[1024];
	struct kube_response resp = {0};
	int replicas;

	pthread_mutex_lock(&b->mu);
	replicas = b->rs[i].want;
	int nsi = b->rs[i].ns;
	pthread_mutex_unlock(&b->mu);
	rs_name(b->cur_run, i, name, sizeof(name));
	ns_name(nsi, ns, sizeof(ns));
	struct kube_request rq = {
	        .group = "apps", .version = "v1", .resource = "replicasets", .ns = ns};
	if (!strcmp(verb_kind, "create")) {
		fmt(body, sizeof(body),
		    "{\"apiVersion\":\"apps/"
		    "v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"%s\",\"labels\":"
		    "{\"" LABEL "\":\"1\"}},\"spec\":{\"replicas\":%d,\"selector\":{"
		    "\"matchLabels\":{\"" LABEL_RS
		    "\":\"%s\"}},\"template\":{\"metadata\":{\"labels\":{\"" LABEL
		    "\":\"1\",\"" LABEL_RS "\":\"%s\"}},\"spec\":{\"containers\":[{\"name\":\"c\","
		    "\"image\":\"registry.invalid/bench:1\"}]}}}}",
		    name, replicas, name, name);
		rq.verb = KUBE_CREATE;
		rq.body = body;
		rq.body_len = strlen(body);
	} else if (!strcmp(verb_kind, "scale")) {
		fmt(body, sizeof(body), "{\"spec\":{\"replicas\":%d}}", replicas);
		rq.verb = KUBE_PATCH;
		rq.patch_type = KUBE_PATCH_MERGE;
		rq.name = name;
		rq.body = body;
		rq.body_len = strlen(body);
	} else {
		rq.verb = KUBE_DELETE;
		rq.name = name;
		rq.propagation_policy = "Background";
	}
	int r = kube_client_request(kc, &rq, NULL, NULL, &resp);
	/* a retried create that had landed, a retried delete that had landed */
	if (r < 0 && ((rq.verb == KUBE_CREATE && resp.http_code == 409) ||
	              (rq.verb == KUBE_DELETE && resp.http_code == 404)))
		r = 0;
	if (r < 0)
		say("warning: %s %s/%s: HTTP %d (%s)", verb_kind, ns, name, resp.http_code,
		    strerror(-r));
	kube_response_clear(&resp);
	return r;
}

static int do_create(struct pacer *p, struct kube_client *kc, int i)
{
	return write_rs(p, kc, i, "create");
}
static int do_scale(struct pacer *p, struct kube_client *kc, int i)
{
	return write_rs(p, kc, i, "scale");
}
static int do_delete(struct pacer *p, struct kube_client *kc, int i)
{
	return write_rs(p, kc, i, "delete");
}

/* deployments, jobs, daemonsets: create, roll out (a template change), delete object i. */
static const char *const obj_verbs[] = {"create", "rollout", "delete"};

static int write_obj(struct pacer *p, struct kube_client *kc, int i, int verb)
{
	struct bench *b = p->b;
	const struct bench_opts *o = &b->o;
	char name[32], ns[32], body[2048], tmpl[512];
	struct kube_response resp = {0};

	pthread_mutex_lock(&b->mu);
	int want = b->rs[i].want, nsi = b->rs[i].ns;
	pthread_mutex_unlock(&b->mu);
	enum bench_workload wl = kind_of(b, i);
	rs_name(b->cur_run, i, name, sizeof(name));
	obj_ns(b, b->cur_run, nsi, ns, sizeof(ns));
	struct kube_request rq = {.group = wl == BENCH_JOBS ? "batch" : "apps",
	                          .version = "v1",
	                          .resource = wl == BENCH_DEPLOYMENTS ? "deployments"
	                                      : wl == BENCH_JOBS      ? "jobs"
	                                                              : "daemonsets",
	                          .ns = ns};
	/* the pod template: the pods carry the object's name in LABEL_RS (the driver's pod
	 * watch counts them per object) */
	fmt(tmpl, sizeof(tmpl),
	    "\"template\":{\"metadata\":{\"labels\":{\"" LABEL "\":\"1\",\"" LABEL_RS
	    "\":\"%s\"}},\"spec\":{%s\"containers\":[{\"name\":\"c\",\"image\":"
	    "\"registry.invalid/bench:1\"}]}}",
	    name,
	    wl == BENCH_JOBS ? "\"restartPolicy\":\"Never\","
	    : wl == BENCH_DAEMONSETS
	            /* the simulated nodes' taints (kcmd.io/simulated, and not-ready: no node
	             * lifecycle controller runs) */
	            ? "\"tolerations\":[{\"operator\":\"Exists\"}],\"nodeSelector\":{\"type\":"
	              "\"kcmd-sim\"},"
	            : "");
	if (verb == 0 && o->workload == BENCH_CLUSTER && wl == BENCH_DEPLOYMENTS) {
		/* the Deployment's Service first: the endpointslice controllers fill it as its
		 * pods become Ready */
		char svc[512];
		fmt(svc, sizeof(svc),
		    "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"%s\","
		    "\"labels\":{\"" LABEL "\":\"1\"}},\"spec\":{\"selector\":{\"" LABEL_RS
		    "\":\"%s\"},\"ports\":[{\"port\":80,\"targetPort\":8080}]}}",
		    name, name);
		struct kube_request sq = {.verb = KUBE_CREATE,
		                          .version = "v1",
		                          .resource = "services",
		                          .ns = ns,
		                          .body = svc,
		                          .body_len = strlen(svc)};
		int sr = kube_client_request(kc, &sq, NULL, NULL, &resp);
		if (sr < 0 && resp.http_code != 409) {
			say("warning: create service %s/%s: HTTP %d (%s)", ns, name, resp.http_code,
			    strerror(-sr));
			kube_response_clear(&resp);
			return sr;
		}
		kube_response_clear(&resp);
	}
	if (verb == 1 && o->workload == BENCH_CLUSTER) {
		/* cluster's churn: the Deployment rescaled (Jobs are not written again) */
		if (wl != BENCH_DEPLOYMENTS)
			return 0;
		fmt(body, sizeof(body), "{\"spec\":{\"replicas\":%d}}", want);
		rq.verb = KUBE_PATCH;
		rq.patch_type = KUBE_PATCH_MERGE;
		rq.name = name;
	} else if (verb == 0) {
		const char *kind = wl == BENCH_DEPLOYMENTS ? "Deployment"
		                   : wl == BENCH_JOBS      ? "Job"
		                                           : "DaemonSet";
		char spec[256];
		if (wl == BENCH_DEPLOYMENTS)
			fmt(spec, sizeof(spec),
			    "\"replicas\":%d,\"selector\":{\"matchLabels\":{\"" LABEL_RS
			    "\":\"%s\"}},",
			    want, name);
		else if (wl == BENCH_JOBS)
			fmt(spec, sizeof(spec), "\"completions\":%d,\"parallelism\":%d,", want,
			    o->parallelism < want ? o->parallelism : want);
		else
			/* maxUnavailable 10 %: the default 1 would roll 1,000 nodes one at a time
			 */
			fmt(spec, sizeof(spec),
			    "\"selector\":{\"matchLabels\":{\"" LABEL_RS
			    "\":\"%s\"}},\"updateStrategy\":{\"type\":\"RollingUpdate\","
			    "\"rollingUpdate\":{\"maxUnavailable\":\"10%%\"}},",
			    name);
		fmt(body, sizeof(body),
		    "{\"apiVersion\":\"%s/v1\",\"kind\":\"%s\",\"metadata\":{\"name\":\"%s\","
		    "\"labels\":{\"" LABEL "\":\"1\"}},\"spec\":{%s%s}}",
		    rq.group, kind, name, spec, tmpl);
		rq.verb = KUBE_CREATE;
	} else if (verb == 1) {
		fmt(body, sizeof(body),
		    "{\"spec\":{\"template\":{\"metadata\":{\"annotations\":{"
		    "\"kcmd-bench/rollout\":\"%d\"}}}}}",
		    b->cur_run);
		rq.verb = KUBE_PATCH;
		rq.patch_type = KUBE_PATCH_MERGE;
		rq.name = name;
	} else {
		rq.verb = KUBE_DELETE;
		rq.name = name;
		rq.propagation_policy = "Background";
	}
	if (verb < 2) {
		rq.body = body;
		rq.body_len = strlen(body);
	}
	int r = kube_client_request(kc, &rq, NULL, NULL, &resp);
	if (r == 0 && verb < 2) {
		/* the generation this write made: the phase waits until it is observed */
		cJSON *j = cJSON_ParseWithLength(resp.body, resp.body_len);
		const cJSON *g = cJSON_GetObjectItemCaseSensitive(
		        cJSON_GetObjectItemCaseSensitive(j, "metadata"), "generation");
		pthread_mutex_lock(&b->mu);
		b->rs[i].want_gen = cJSON_IsNumber(g) ? (long)g->valuedouble : 1;
		pthread_mutex_unlock(&b->mu);
		cJSON_Delete(j);
	}
	if (r < 0 && ((rq.verb == KUBE_CREATE && resp.http_code == 409) ||
	              (rq.verb == KUBE_DELETE && resp.http_code == 404)))
		r = 0;
	if (r < 0)
		say("warning: %s %s/%s: HTTP %d (%s)", obj_verbs[verb], ns, name, resp.http_code,
		    strerror(-r));
	kube_response_clear(&resp);
	return r;
}

static int do_obj_create(struct pacer *p, struct kube_client *kc, int i)
{
	return write_obj(p, kc, i, 0);
}
static int do_obj_rollout(struct pacer *p, struct kube_client *kc, int i)
{
	return write_obj(p, kc, i, 1);
}
static int do_obj_delete(struct pacer *p, struct kube_client *kc, int i)
{
	return write_obj(p, kc, i, 2);
}

/* ---- namespaces, endpointslices: the driver's writes -------------------------------------------
 */

/* One request; a create that finds the object (a retry that had landed) and a delete that does
 * not (gone already) count as done. */
static int simple_write(struct bench *b, struct kube_client *kc, enum kube_verb verb,
                        const char *group, const char *resource, const char *ns, const char *name,
                        const char *body, bool grace0)
{
	struct kube_request rq = {.verb = verb,
	                          .group = group,
	                          .version = "v1",
	                          .resource = resource,
	                          .ns = ns,
	                          .name = verb == KUBE_CREATE ? NULL : name,
	                          .body = body,
	                          .body_len = body ? strlen(body) : 0,
	                          .propagation_policy = verb == KUBE_DELETE ? "Background" : NULL,
	                          .grace_period_seconds = 0,
	                          .has_grace_period = grace0};
	struct kube_response resp = {0};
	(void)b;
	int r = kube_client_request(kc, &rq, NULL, NULL, &resp);
	if (r < 0 && ((verb == KUBE_CREATE && resp.http_code == 409) ||
	              (verb == KUBE_DELETE && resp.http_code == 404)))
		r = 0;
	if (r < 0)
		say("warning: %s %s %s/%s: HTTP %d (%s)", verb == KUBE_CREATE ? "create" : "delete",
		    resource, ns ? ns : "", name, resp.http_code, strerror(-r));
	kube_response_clear(&resp);
	return r;
}

/* A bench pod: labels LABEL and LABEL_RS=owner (the driver's pod watch counts it under owner) */
static void pod_body(char *body, size_t n, const char *name, const char *owner)
{
	fmt(body, n,
	    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
	    "\"labels\":{\"" LABEL "\":\"1\",\"" LABEL_RS "\":\"%s\"}},\"spec\":{"
	    "\"containers\":[{\"name\":\"c\",\"image\":\"registry.invalid/bench:1\","
	    "\"ports\":[{\"containerPort\":8080}]}]}}",
	    name, owner);
}

/* namespaces: namespace i is r<run>-<i>, labelled LABEL */
static int do_ns_create(struct pacer *p, struct kube_client *kc, int i)
{
	char name[32], body[256];
	rs_name(p->b->cur_run, i, name, sizeof(name));
	fmt(body, sizeof(body),
	    "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\","
	    "\"labels\":{\"" LABEL "\":\"1\"}}}",
	    name);
	return simple_write(p->b, kc, KUBE_CREATE, NULL, "namespaces", NULL, name, body, false);
}

static int do_ns_delete(struct pacer *p, struct kube_client *kc, int i)
{
	char name[32];
	rs_name(p->b->cur_run, i, name, sizeof(name));
	return simple_write(p->b, kc, KUBE_DELETE, NULL, "namespaces", NULL, name, NULL, false);
}

/* namespaces: object k of namespace i / ns_objects (bench_ns_kind says which kind) */
static int do_ns_object(struct pacer *p, struct kube_client *kc, int i)
{
	struct bench *b = p->b;
	int per = b->o.ns_objects, nsi = i / per, k = i % per;
	const char *kind = bench_ns_kind(&b->o, k);
	char ns[32], name[32], body[1024];

	rs_name(b->cur_run, nsi, ns, sizeof(ns));
	fmt(name, sizeof(name), "o%d", k);
	if (!strcmp(kind, "pods"))
		pod_body(body, sizeof(body), name, ns);
	else if (!strcmp(kind, "configmaps"))
		fmt(body, sizeof(body),
		    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
		    "\"%s\",\"labels\":{\"" LABEL "\":\"1\"}},\"data\":{\"k\":\"%0128d\"}}",
		    name, k);
	else if (!strcmp(kind, "secrets"))
		fmt(body, sizeof(body),
		    "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":"
		    "\"%s\",\"labels\":{\"" LABEL "\":\"1\"}},\"stringData\":{\"k\":"
		    "\"%0128d\"}}",
		    name, k);
	else
		/* headless: the test cluster's Service range is a /24 */
		fmt(body, sizeof(body),
		    "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":"
		    "\"%s\",\"labels\":{\"" LABEL "\":\"1\"}},\"spec\":{\"clusterIP\":"
		    "\"None\",\"selector\":{\"" LABEL_RS "\":\"%s\"},\"ports\":[{\"port\":"
		    "80,\"targetPort\":8080}]}}",
		    name, ns);
	return simple_write(b, kc, KUBE_CREATE, NULL, kind, ns, name, body, false);
}

/* endpointslices: Service i is r<run>-<i> in namespace kcmd-bench-<i % namespaces>, headless
 * (the test cluster's Service range is a /24), selecting LABEL_RS=r<run>-<i> */
static int do_svc(struct pacer *p, struct kube_client *kc, int i, bool create)
{
	struct bench *b = p->b;
	char ns[32], name[32], body[1024];

	rs_name(b->cur_run, i, name, sizeof(name));
	ns_name(i % b->o.namespaces, ns, sizeof(ns));
	fmt(body, sizeof(body),
	    "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"%s\","
	    "\"labels\":{\"" LABEL "\":\"1\"}},\"spec\":{\"clusterIP\":\"None\","
	    "\"selector\":{\"" LABEL_RS "\":\"%s\"},\"ports\":[{\"name\":\"http\","
	    "\"port\":80,\"targetPort\":8080}]}}",
	    name, name);
	return simple_write(b, kc, create ? KUBE_CREATE : KUBE_DELETE, NULL, "services", ns, name,
	                    create ? body : NULL, false);
}

static int do_svc_create(struct pacer *p, struct kube_client *kc, int i)
{
	return do_svc(p, kc, i, true);
}

static int do_svc_delete(struct pacer *p, struct kube_client *kc, int i)
{
	return do_svc(p, kc, i, false);
}

/* endpointslices: pod i = Service i / pods_per_service, its pod k = i % pods_per_service */
static int do_es_pod(struct pacer *p, struct kube_client *kc, int i)
{
	struct bench *b = p->b;
	int per = b->o.pods_per_service, svc = i / per, k = i % per;
	char ns[32], owner[32], name[64], body[1024];

	rs_name(b->cur_run, svc, owner, sizeof(owner));
	ns_name(svc % b->o.namespaces, ns, sizeof(ns));
	fmt(name, sizeof(name), "%s-%d", owner, k);
	pod_body(body, sizeof(body), name, owner);
	return simple_write(b, kc, KUBE_CREATE, NULL, "pods", ns, name, body, false);
}

/* endpointslices churn: item i = Service i / churn_n, its pod k = i % churn_n: deleted (grace
 * 0) and replaced by r<run>-<svc>-c<k> */
static int do_es_churn(struct pacer *p, struct kube_client *kc, int i)
{
	struct bench *b = p->b;
	int svc = i / b->churn_n, k = i % b->churn_n;
	char ns[32], owner[32], name[64], body[1024];

	rs_name(b->cur_run, svc, owner, sizeof(owner));
	ns_name(svc % b->o.namespaces, ns, sizeof(ns));
	fmt(name, sizeof(name), "%s-%d", owner, k);
	int r = simple_write(b, kc, KUBE_DELETE, NULL, "pods", ns, name, NULL, true);
	if (r < 0)
		return r;
	fmt(name, sizeof(name), "%s-c%d", owner, k);
	pod_body(body, sizeof(body), name, owner);
	return simple_write(b, kc, KUBE_CREATE, NULL, "pods", ns, name, body, false);
}

/* endpointslices delete: namespace i's bench pods in one DeleteCollection (grace 0) */
static int do_es_pods_delete(struct pacer *p, struct kube_client *kc, int i)
{
	char ns[32], path[256];
	ns_name(i, ns, sizeof(ns));
	fmt(path, sizeof(path), "/api/v1/namespaces/%s/pods?labelSelector=" LABEL, ns);
	struct kube_request rq = {.verb = KUBE_DELETE,
	                          .version = "v1",
	                          .resource = "pods",
	                          .ns = ns,
	                          .path = path,
	                          .grace_period_seconds = 0,
	                          .has_grace_period = true};
	struct kube_response resp = {0};
	int r = kube_client_request(kc, &rq, NULL, NULL, &resp);
	if (r < 0)
		say("warning: delete the pods of %s: HTTP %d (%s)", ns, resp.http_code,
		    strerror(-r));
	kube_response_clear(&resp);
	(void)p;
	return r;
}

/* ---- convergence
 * ------------------------------------------------------------------------------------- */

/* W_NSGONE: namespaces gone (and their pods); W_SLICES: every Service's pods Ready and its
 * slices listing exactly them, all ready (b->no_old: none naming a replaced pod); W_SLICESGONE:
 * no pod and no slice left */
enum want { W_PODS, W_NONE, W_OBJS, W_NSGONE, W_SLICES, W_SLICESGONE };

/* deployments, jobs, daemonsets: one object done (under mu). Deployment: the generation the
 * driver wrote observed, every replica updated, Ready and available, no old ReplicaSet's pod
 * left (status.replicas counts them all), and the driver's own pod watch agrees (no pod
 * terminating). DaemonSet: the same with its numbers, desiredNumberScheduled = --nodes. Job:
 * the Complete condition. */
static bool obj_done_locked(const struct bench *b, const struct rsstate *r, int i)
{
	int w = r->want;
	enum bench_workload wl = kind_of(b, i);
	/* cluster: a Deployment is done when its Service's EndpointSlices list exactly its Ready
	 * pods too */
	if (b->o.workload == BENCH_CLUSTER && wl == BENCH_DEPLOYMENTS && r->eps_ready != w)
		return false;
	switch (wl) {
	case BENCH_JOBS:
		return r->complete;
	case BENCH_DAEMONSETS:
		if (r->s_desired != w)
			return false;
		/* fall through */
	default:
		return r->gen >= r->want_gen && r->obs_gen >= r->gen && r->s_replicas == w &&
		       r->s_updated == w && r->s_ready == w && r->s_available == w &&
		       r->active == w && r->ready == w && !r->term;
	}
}

/* Under mu. */
static bool converged_locked(struct bench *b, enum want w, long *pods, long *ready, long *term,
                             long *want_pods)
{
	int run = b->cur_run;
	long sum = 0;
	bool ok = true;

	b->objs_done = 0;
	for (int i = 0; i < b->n_rs; i++) {
		const struct rsstate *r = &b->rs[i];
		sum += r->want;
		if (w == W_PODS && (r->active != r->want || r->ready != r->want || r->term))
			ok = false;
		if (w == W_NSGONE && r->exists)
			ok = false;
		if (w == W_SLICES) {
			if (r->active == r->want && r->ready == r->want && !r->term &&
			    r->s_replicas == r->want && r->s_ready == r->want &&
			    (!b->no_old || !r->s_desired))
				b->objs_done++;
			else
				ok = false;
		}
		if (w == W_OBJS) {
			if (obj_done_locked(b, r, i))
				b->objs_done++;
			else
				ok = false;
		}
	}
	*pods = b->run_pods[run];
	*ready = b->run_ready[run];
	*term = b->run_term[run];
	*want_pods = w == W_NONE || w == W_NSGONE || w == W_SLICESGONE ? 0 : sum;
	if (w == W_NONE)
		ok = b->run_pods[run] == 0;
	if (w == W_NSGONE && b->run_pods[run])
		ok = false;
	if (w == W_SLICESGONE)
		ok = b->run_pods[run] == 0 && b->slices.live == 0;
	if (b->o.workload == BENCH_CLUSTER) {
		/* delete: the pass's namespaces and churn Nodes gone too; churn: the added Nodes
		 * have their pod CIDR and TTL annotation */
		int alive = 0, nodes = 0, nodes_ok = 0;
		for (int i = 0; b->ns_alive && i < b->o.namespaces; i++)
			alive += b->ns_alive[i];
		for (int i = 0; b->node_alive && i < b->o.node_churn; i++) {
			nodes += b->node_alive[i];
			nodes_ok += b->node_alive[i] && b->node_ok[i];
		}
		if (w == W_NONE && (alive || nodes))
			ok = false;
		if (w == W_OBJS && nodes_ok < b->churn_want)
			ok = false;
	}
	return ok;
}

struct killer {
	int at; /* kill once this many writes are done */
	bool done;
	bool failover; /* kill the leader manager; else informerd */
};

static void do_kill(struct bench *b, struct bench_run *run, struct killer *k,
                    struct prom_counts *api_at_kill);

/* Waits until the condition holds (and the pacer, if any, finished); prints progress. */
static bool wait_converged(struct bench *b, struct bench_run *run, struct pacer *p, enum want w,
                           struct killer *k, struct prom_counts *api_at_kill)
{
	double t0 = now_s(), last = 0;

	for (;;) {
		long pods, ready, term, want;
		pthread_mutex_lock(&b->mu);
		bool ok = converged_locked(b, w, &pods, &ready, &term, &want);
		int objs = b->objs_done;
		pthread_mutex_unlock(&b->mu);
		int done = p ? atomic_load(&p->done) : 0;
		bool writes_done = !p || done >= p->n;
		if (k && !k->done && done >= k->at)
			do_kill(b, run, k, api_at_kill);
		double t = now_s();
		if (t - last >= 2 || (ok && writes_done)) {
			last = t;
			pthread_mutex_lock(&b->smu);
			double cpu = b->cpu_acc, mem = b->mem_now, q = b->queue_now;
			pthread_mutex_unlock(&b->smu);
			char qs[96] = "";
			if (b->is_kcmd && !isnan(q))
				fmt(qs, sizeof(qs), " queue %.0f", q);
			if (w == W_OBJS || w == W_SLICES)
				fmt(qs + strlen(qs), sizeof(qs) - strlen(qs), " done %d/%d", objs,
				    b->n_rs);
			if (w == W_NSGONE || w == W_SLICESGONE) {
				int left = 0;
				pthread_mutex_lock(&b->mu);
				for (int i = 0; i < b->n_rs; i++)
					left += b->rs[i].exists;
				if (w == W_SLICESGONE)
					left = (int)b->slices.live;
				pthread_mutex_unlock(&b->mu);
				fmt(qs + strlen(qs), sizeof(qs) - strlen(qs), " %s left %d",
				    w == W_NSGONE ? "namespaces" : "slices", left);
			}
			if (b->o.workload == BENCH_DAEMONSETS)
				fmt(qs + strlen(qs), sizeof(qs) - strlen(qs),
				    " binds %ld (%ld errors)", (long)atomic_load(&b->binds_done),
				    (long)atomic_load(&b->bind_errors));
			fprintf(stderr,
			        "  %-8s %-9s %6.1fs  writes %d/%d  pods %ld/%ld ready %ld "
			        "terminating %ld  cpu %.1fs mem %.0fMB%s\n",
			        run->controller, run->phases[run->n_phases - 1].name, t - t0, done,
			        p ? p->n : 0, pods, want, ready, term, cpu, mem, qs);
		}
		if (ok && writes_done) {
			if (p)
				pacer_join(p);
			return true;
		}
		if (interrupted || b->watch_failed || t - t0 > b->o.phase_timeout_s) {
			if (p) {
				atomic_store(&p->stop, true);
				pacer_join(p);
			}
			if (b->watch_failed)
				fmt(run->error, sizeof(run->error), "the driver's watch failed");
			return false;
		}
		sleep_s(0.2);
	}
}

/* ---- controllers under test
 * ------------------------------------------------------------------------- */

/* The controllers of the workload, the same for kcmd and upstream kcm. */
static const char *controllers_of(const struct bench_opts *o)
{
	switch (o->workload) {
	case BENCH_DEPLOYMENTS:
		return "deployment-controller,replicaset-controller,garbage-collector-controller";
	case BENCH_JOBS:
		return "job-controller,garbage-collector-controller";
	case BENCH_DAEMONSETS:
		return "daemonset-controller,garbage-collector-controller";
	case BENCH_NAMESPACES:
		return "namespace-controller";
	case BENCH_ENDPOINTSLICES:
		/* kcm runs both by default; the garbage collector removes a deleted Service's
		 * slices (their owner) */
		return "endpointslice-controller,endpoints-controller,garbage-collector-controller";
	case BENCH_CLUSTER:
		return "*,bootstrapsigner,tokencleaner"; /* kubeadm's */
	case BENCH_NODEFAILURE:
		return "node-lifecycle-controller,taint-eviction-controller";
	default:
		return "replicaset-controller,garbage-collector-controller";
	}
}

/* cluster: the flags kubeadm v1.37 gives kube-controller-manager, where they apply to a bench
 * (the same for kcmd and upstream; leader election stays off, the serving port is the bench's):
 * the test cluster's CA as signing and root CA, its service-account key, node CIDR allocation,
 * per-controller service-account credentials. Appends to argv; returns the new argc. bufs holds
 * the strings (5 x PATH_MAX + 32). */
#define KUBEADM_FLAGS_MAX 10
static int kubeadm_flags(const struct bench *b, char **argv, int argc, char (*bufs)[PATH_MAX + 48])
{
	if (b->o.workload != BENCH_CLUSTER)
		return argc;
	argv[argc++] = "--allocate-node-cidrs=true";
	argv[argc++] = "--cluster-cidr=10.244.0.0/16";
	argv[argc++] = "--service-cluster-ip-range=10.0.0.0/24";
	argv[argc++] = "--cluster-name=kubernetes";
	argv[argc++] = "--use-service-account-credentials=true";
	if (!b->cluster_dir[0])
		return argc; /* --kubeconfig: no CA or key files of ours */
	fmt(bufs[0], sizeof(bufs[0]), "--cluster-signing-cert-file=%s/pki/ca.crt", b->cluster_dir);
	fmt(bufs[1], sizeof(bufs[1]), "--cluster-signing-key-file=%s/pki/ca.key", b->cluster_dir);
	fmt(bufs[2], sizeof(bufs[2]), "--root-ca-file=%s/pki/ca.crt", b->cluster_dir);
	fmt(bufs[3], sizeof(bufs[3]), "--service-account-private-key-file=%s/pki/sa.key",
	    b->cluster_dir);
	for (int i = 0; i < 4; i++)
		argv[argc++] = bufs[i];
	return argc;
}

/* nodefailure: kcm's node lifecycle flags of the run, the same for kcmd and upstream. Appends to
 * argv (at most 3); bufs holds the strings. */
static int nodefail_flags(const struct bench *b, char **argv, int argc, char (*bufs)[64])
{
	if (b->o.workload != BENCH_NODEFAILURE)
		return argc;
	fmt(bufs[0], sizeof(bufs[0]), "--node-eviction-rate=%g", b->o.node_eviction_rate);
	fmt(bufs[1], sizeof(bufs[1]), "--secondary-node-eviction-rate=%g", b->o.secondary_rate);
	fmt(bufs[2], sizeof(bufs[2]), "--node-monitor-grace-period=%gs", b->o.monitor_grace_s);
	for (int i = 0; i < 3; i++)
		argv[argc++] = bufs[i];
	return argc;
}

static int start_kcmd(struct bench *b, int slot, double qps, int burst, bool leader_elect,
                      const char *tag)
{
	char kubeadm[4][PATH_MAX + 48];
	char a_kc[PATH_MAX + 16], a_qps[64], a_burst[64], a_port[32], a_le[64], a_lease[96],
	        log[PATH_MAX + 64], a_ctl[160];
	int port = free_port();
	/* /metrics is read without a token: allowed as kcm allows it with the same flag */
	char *argv[40 + KUBEADM_FLAGS_MAX] = {
	        b->kcmd, a_kc, a_qps, a_burst, a_port, "--bind-address=127.0.0.1", a_le, a_lease,
	        "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
	        /* the controllers upstream runs in the same bench (start_upstream) */
	        a_ctl, NULL};
	char extra[1024], nfb[3][64];
	int argc = kubeadm_flags(b, argv, 10, kubeadm);
	argc = nodefail_flags(b, argv, argc, nfb);

	if (b->o.kcmd_args) {
		fmt(extra, sizeof(extra), "%s", b->o.kcmd_args);
		for (char *save, *t = strtok_r(extra, " ", &save);
		     t && argc < 34 + KUBEADM_FLAGS_MAX; t = strtok_r(NULL, " ", &save))
			argv[argc++] = t;
	}
	/* --shards: the pass's ranges and election timings (kcm's ratios 15 : 10 : 2) */
	char a_sr[48], a_ld[64], a_rd[64], a_rp[64];
	if (b->shard_n > 0) {
		double ld = b->o.lease_duration_s;
		fmt(a_sr, sizeof(a_sr), "--shard-ranges=%d", b->o.shard_ranges);
		fmt(a_ld, sizeof(a_ld), "--leader-elect-lease-duration=%gs", ld);
		fmt(a_rd, sizeof(a_rd), "--leader-elect-renew-deadline=%gs", ld * 10 / 15);
		fmt(a_rp, sizeof(a_rp), "--leader-elect-retry-period=%gs", ld * 2 / 15);
		argv[argc++] = a_sr;
		argv[argc++] = a_ld;
		argv[argc++] = a_rd;
		argv[argc++] = a_rp;
	}
	argv[argc] = NULL;

	fmt(a_ctl, sizeof(a_ctl), "--controllers=%s", controllers_of(&b->o));
	fmt(a_kc, sizeof(a_kc), "--kubeconfig=%s", b->kubeconfig);
	fmt(a_qps, sizeof(a_qps), "--kube-api-qps=%g", qps);
	fmt(a_burst, sizeof(a_burst), "--kube-api-burst=%d", burst);
	fmt(a_port, sizeof(a_port), "--secure-port=%d", port);
	fmt(a_le, sizeof(a_le), "--leader-elect=%s", leader_elect ? "true" : "false");
	if (b->shard_n > 0)
		fmt(a_lease, sizeof(a_lease), "--leader-elect-resource-name=%s", b->shard_lease);
	else
		fmt(a_lease, sizeof(a_lease), "--leader-elect-resource-name=kcmd-bench-%d",
		    (int)getpid());
	fmt(log, sizeof(log), "%s/kcmd-%s-%d.log", b->logdir, tag, slot);
	pid_t pid = spawn(argv, log, NULL);
	if (pid < 0)
		return (int)pid;
	pthread_mutex_lock(&b->smu);
	b->kcmd_pid[slot] = pid;
	b->kcmd_port[slot] = port;
	b->root_cpu[slot] = 0;
	pthread_mutex_unlock(&b->smu);
	say("started kcmd (pid %d, /metrics on 127.0.0.1:%d, log %s)", (int)pid, port, log);
	return 0;
}

static bool file_has(const char *path, const char *needle)
{
	FILE *f = fopen(path, "re");
	char line[4096];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, needle) != NULL;
	fclose(f);
	return found;
}

static int file_count(const char *path, const char *needle)
{
	FILE *f = fopen(path, "re");
	char line[4096];
	int n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	fclose(f);
	return n;
}

static int wait_kcmd_ready(struct bench *b, int slot, double timeout_s)
{
	double end = now_s() + timeout_s;
	while (now_s() < end && !interrupted) {
		if (waitpid(b->kcmd_pid[slot], NULL, WNOHANG) == b->kcmd_pid[slot]) {
			b->kcmd_pid[slot] = 0;
			return -ECHILD;
		}
		if (local_get(b->kcmd_port[slot], "/readyz", NULL) == 200)
			return 0;
		sleep_s(0.25);
	}
	return -ETIMEDOUT;
}

/* Every instance is sent SIGTERM at once (a sharded one releases its Leases on the way out),
 * then each is waited for as stop_proc does. */
static void stop_kcmds(struct bench *b)
{
	pid_t pids[MAX_KCMD];

	pthread_mutex_lock(&b->smu);
	for (int i = 0; i < MAX_KCMD; i++) {
		pids[i] = b->kcmd_pid[i];
		b->kcmd_pid[i] = 0;
	}
	pthread_mutex_unlock(&b->smu);
	for (int i = 0; i < MAX_KCMD; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGTERM);
	for (int i = 0; i < MAX_KCMD; i++) {
		if (pids[i] <= 0)
			continue;
		if (wait_pid(pids[i], 20) == -ETIMEDOUT) {
			kill(-pids[i], SIGKILL);
			wait_pid(pids[i], 5);
		}
		kill(-pids[i], SIGKILL); /* anything of its group left behind */
	}
}

/* ---- --shards (issue 23) -----------------------------------------------------------------------
 */

/* The identity a kcmd instance logged at start ("starting: identity <id>, controllers: ..."). */
static bool shard_identity(struct bench *b, int slot, const char *tag, char *out, size_t n)
{
	char path[PATH_MAX + 64], line[4096];
	FILE *f;
	bool found = false;

	fmt(path, sizeof(path), "%s/kcmd-%s-%d.log", b->logdir, tag, slot);
	if (!(f = fopen(path, "re")))
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, "starting: identity ");
		if (!p)
			continue;
		p += strlen("starting: identity ");
		size_t l = strcspn(p, ",\n");
		if (l > 0 && l < n) {
			memcpy(out, p, l);
			out[l] = 0;
			found = true;
		}
	}
	fclose(f);
	return found;
}

/* workqueue_adds_total summed over every queue of the instance in a slot (NAN: no answer). */
static double shard_keys(struct bench *b, int slot)
{
	char *body = NULL;
	double v = NAN;

	if (b->kcmd_pid[slot] > 0 && local_get(b->kcmd_port[slot], "/metrics", &body) == 200 &&
	    body) {
		struct prom_counts c = {0};
		static const char *const g[] = {"name"};
		if (prom_collect(body, strlen(body), "workqueue_adds_total", NULL, 0, g, 1, &c) >=
		    0)
			v = prom_counts_total(&c);
		prom_counts_free(&c);
	}
	free(body);
	return v;
}

/* The holderIdentity of each range Lease <shard_lease>-range-<i> in kube-system ("" for none or
 * released), into holders[0..nranges). Main thread (b->kc). 0 or a negative errno. */
static int shard_holders(struct bench *b, char (*holders)[128], int nranges)
{
	struct kube_request rq = {.verb = KUBE_LIST,
	                          .group = "coordination.k8s.io",
	                          .version = "v1",
	                          .resource = "leases",
	                          .ns = "kube-system"};
	struct kube_response resp = {0};
	char prefix[128];
	cJSON *j = NULL;
	int r = kube_client_request(b->kc, &rq, NULL, NULL, &resp);

	for (int i = 0; i < nranges; i++)
		holders[i][0] = 0;
	if (r == 0 && !(j = cJSON_ParseWithLength(resp.body, resp.body_len)))
		r = -EBADMSG;
	fmt(prefix, sizeof(prefix), "%s-range-", b->shard_lease);
	const cJSON *it, *items = j ? cJSON_GetObjectItemCaseSensitive(j, "items") : NULL;
	cJSON_ArrayForEach(it, items)
	{
		const char *name = jstr(it, "metadata", "name", NULL),
		           *h = jstr(it, "spec", "holderIdentity", NULL);
		char *end;
		if (!name || strncmp(name, prefix, strlen(prefix)))
			continue;
		long i = strtol(name + strlen(prefix), &end, 10);
		if (*end || i < 0 || i >= nranges)
			continue;
		fmt(holders[i], sizeof(holders[i]), "%s", h ? h : "");
	}
	cJSON_Delete(j);
	kube_response_clear(&resp);
	return r;
}

/* Ranges whose holder is not the rendezvous owner among the identities of slots in members
 * (a bit mask), or a negative errno. */
static int shard_misplaced(struct bench *b, unsigned members, char (*holders)[128])
{
	const char *ids[MAX_KCMD];
	size_t n = 0;
	int bad = 0, nr = b->o.shard_ranges;

	for (int s = 0; s < MAX_KCMD; s++)
		if (members & (1u << s))
			ids[n++] = b->ident[s];
	int r = shard_holders(b, holders, nr);
	if (r < 0)
		return r;
	for (int i = 0; i < nr; i++) {
		int o = kube_shard_owner(ids, n, (unsigned)i);
		if (o < 0 || strcmp(holders[i], ids[o]))
			bad++;
	}
	return bad;
}

/* Starts the pass's N instances, waits for each one's /readyz and identity, then for the range
 * Leases to be held exactly as the rendezvous assigns them (so every pass starts from its
 * steady split), and notes each one's workqueue adds. */
static int shard_start(struct bench *b, double qps, int burst, const char *tag)
{
	int n = b->shard_n, r = 0, nr = b->o.shard_ranges;
	char(*holders)[128] = calloc((size_t)nr, sizeof(*holders));

	if (!holders)
		return -ENOMEM;
	fmt(b->shard_lease, sizeof(b->shard_lease), "kcmd-bench-%d-n%d", (int)getpid(), n);
	for (int s = 0; s < n && r == 0; s++)
		r = start_kcmd(b, s, qps, burst, true, tag);
	for (int s = 0; s < n && r == 0; s++)
		r = wait_kcmd_ready(b, s, 120);
	for (int s = 0; s < n && r == 0; s++) {
		double end = now_s() + 10;
		while (!shard_identity(b, s, tag, b->ident[s], sizeof(b->ident[s])) &&
		       now_s() < end && !interrupted)
			sleep_s(0.25);
		if (!b->ident[s][0])
			r = -EBADMSG;
	}
	double t0 = now_s(), end = t0 + 3 * b->o.lease_duration_s + 60;
	int bad = nr;
	while (r == 0 && !interrupted) {
		bad = shard_misplaced(b, (1u << n) - 1, holders);
		if (bad == 0 || now_s() > end)
			break;
		sleep_s(0.5);
	}
	if (r == 0 && bad)
		r = -ETIMEDOUT;
	if (r == 0)
		say("%d instance(s) hold the %d ranges as the rendezvous assigns them (%.1f s "
		    "after "
		    "all were ready)",
		    n, nr, now_s() - t0);
	else
		say("the %d instance(s) did not settle on the assignment (%d ranges misplaced%s)",
		    n, bad, r == -ETIMEDOUT ? " when the wait ended" : "");
	for (int s = 0; s < n && r == 0; s++)
		b->keys0[s] = shard_keys(b, s);
	free(holders);
	return r;
}

/* After the phases: each instance's figures into run->inst (ranges from the Leases). */
static void shard_collect(struct bench *b, struct bench_run *run)
{
	int nr = b->o.shard_ranges;
	char(*holders)[128] = calloc((size_t)nr, sizeof(*holders));

	if (holders && shard_holders(b, holders, nr) < 0)
		say("warning: cannot list the range Leases; ranges owned will read 0");
	run->n_inst = (unsigned)b->shard_n;
	for (int s = 0; s < b->shard_n; s++) {
		struct bench_inst *in = &run->inst[s];
		*in = (struct bench_inst){0};
		fmt(in->identity, sizeof(in->identity), "%s", b->ident[s]);
		pthread_mutex_lock(&b->smu);
		in->cpu_s = b->slot_cpu[s];
		in->peak_mem_mb = b->slot_mem_peak[s];
		pthread_mutex_unlock(&b->smu);
		double k = shard_keys(b, s);
		in->keys = k - b->keys0[s];
		for (int i = 0; holders && i < nr; i++)
			if (!strcmp(holders[i], b->ident[s])) {
				in->ranges++;
				in->range0 |= i == 0;
			}
		say("  instance %d (%s): %d ranges%s, %.0f keys, CPU %.2f s, peak PSS %.1f MB", s,
		    in->identity, in->ranges, in->range0 ? " (range 0)" : "", in->keys, in->cpu_s,
		    in->peak_mem_mb);
	}
	free(holders);
}

/* N >= 2: the holder of range 0 (the unsharded controllers and the GC run there) killed with
 * SIGKILL, its children first, then its manager; the time until every range it held is held by
 * a survivor. Polls the Leases every 100 ms (a LIST: ~10 requests/s of its own). */
static void shard_failover(struct bench *b, struct bench_run *run)
{
	int nr = b->o.shard_ranges, victim = -1;
	char(*holders)[128] = calloc((size_t)nr, sizeof(*holders));
	bool *was = calloc((size_t)nr, sizeof(bool));
	pid_t pids[256];

	run->failover_s = NAN;
	if (!holders || !was || shard_holders(b, holders, nr) < 0)
		goto out;
	for (int s = 0; s < b->shard_n && victim < 0; s++)
		if (!strcmp(holders[0], b->ident[s]))
			victim = s;
	if (victim < 0) {
		say("warning: no instance holds range 0; no failover");
		goto out;
	}
	for (int i = 0; i < nr; i++)
		if ((was[i] = !strcmp(holders[i], b->ident[victim])))
			run->failover_ranges++;
	int np = bench_tree_pids(b->kcmd_pid[victim], pids, (int)(sizeof(pids) / sizeof(pids[0])));
	if (np <= 0) {
		say("warning: instance %d is not running; no failover", victim);
		goto out;
	}
	pthread_mutex_lock(&b->smu);
	pid_t mgr = b->kcmd_pid[victim];
	b->kcmd_pid[victim] = 0;
	pthread_mutex_unlock(&b->smu);
	double t0 = now_s();
	for (int i = 0; i < np; i++) /* children first, the manager (last) at the end */
		kill(pids[i], SIGKILL);
	kill(-mgr, SIGKILL); /* its process group: anything the scan missed */
	wait_pid(mgr, 5);
	say("failover: killed instance %d (%s, %d processes, %d ranges) with SIGKILL", victim,
	    b->ident[victim], np, run->failover_ranges);
	double end = t0 + 3 * b->o.lease_duration_s + 30;
	while (!interrupted && now_s() < end) {
		bool all = shard_holders(b, holders, nr) == 0;
		for (int i = 0; all && i < nr; i++) {
			if (!was[i])
				continue;
			bool live = false;
			for (int s = 0; s < b->shard_n && !live; s++)
				live = s != victim && !strcmp(holders[i], b->ident[s]);
			all = live;
		}
		if (all) {
			run->failover_s = now_s() - t0;
			break;
		}
		sleep_s(0.1);
	}
	if (isnan(run->failover_s))
		say("failover: the ranges were NOT all held again within %.0f s", end - t0);
	else
		say("failover: its %d ranges held by the survivors %.2f s after the kill (lease "
		    "duration %g s)",
		    run->failover_ranges, run->failover_s, b->o.lease_duration_s);
out:
	free(holders);
	free(was);
}

static double load_avg(void)
{
	FILE *f = fopen("/proc/loadavg", "re");
	double v = NAN;
	if (f) {
		if (fscanf(f, "%lf", &v) != 1)
			v = NAN;
		fclose(f);
	}
	return v;
}

static int start_upstream(struct bench *b, double qps, int burst)
{
	char q[32], bu[32], st[4096];

	fmt(q, sizeof(q), "%g", qps);
	fmt(bu, sizeof(bu), "%d", burst);
	int r = cluster(b, NULL, 0, "kcm", "start", controllers_of(&b->o), "--kcm-qps", q,
	                "--kcm-burst", bu, (char *)NULL);
	if (r < 0)
		return r;
	if (cluster(b, st, sizeof(st), "status", (char *)NULL) < 0)
		return -EIO;
	char *l = strstr(st, "kube-controller-manager");
	int pid = 0;
	if (!l || sscanf(l, "kube-controller-manager pid %d", &pid) != 1 || pid <= 0) {
		/* the status line pads the name */
		char *p = l ? strstr(l, "pid ") : NULL;
		if (!p || sscanf(p, "pid %d", &pid) != 1)
			return -ESRCH;
	}
	pthread_mutex_lock(&b->smu);
	b->kcm_pid = pid;
	b->root_cpu[MAX_KCMD] = 0;
	pthread_mutex_unlock(&b->smu);
	say("started upstream kube-controller-manager (pid %d, --controllers=%s "
	    "--kube-api-qps=%g --kube-api-burst=%d)",
	    pid, controllers_of(&b->o), qps, burst);
	return 0;
}

static void stop_upstream(struct bench *b)
{
	pthread_mutex_lock(&b->smu);
	b->kcm_pid = 0;
	pthread_mutex_unlock(&b->smu);
	cluster(b, NULL, 0, "kcm", "stop", (char *)NULL);
}

/* Upstream kcm started by the driver (the harness runs one, without leader election): for
 * failover (two, leader election on a Lease of their own) and restart (one, restarted at once by
 * the driver as its supervisor would). */
static int start_kcm_direct(struct bench *b, int slot, const char *tag, bool restarted)
{
	char a_kc[PATH_MAX + 16], a_qps[64], a_burst[64], a_le[64], a_lease[96], log[PATH_MAX + 64],
	        a_ctl[160], kubeadm[4][PATH_MAX + 48];
	char *argv[16 + KUBEADM_FLAGS_MAX] = {b->kcm_bin, a_kc,  a_le,    a_lease,
	                                      a_ctl,      a_qps, a_burst, "--secure-port=0",
	                                      "--v=2",    NULL};
	int argc = 9;
	if (b->o.workload == BENCH_CLUSTER)
		argc = kubeadm_flags(b, argv, argc, kubeadm);
	else
		argv[argc++] = "--use-service-account-credentials=false";
	char nfb[3][64];
	argc = nodefail_flags(b, argv, argc, nfb);
	argv[argc] = NULL;
	fmt(a_ctl, sizeof(a_ctl), "--controllers=%s", controllers_of(&b->o));

	fmt(a_kc, sizeof(a_kc), "--kubeconfig=%s", b->kubeconfig);
	fmt(a_le, sizeof(a_le), "--leader-elect=%s", b->kcm_le ? "true" : "false");
	fmt(a_lease, sizeof(a_lease), "--leader-elect-resource-name=kcm-bench-%d", (int)getpid());
	fmt(a_qps, sizeof(a_qps), "--kube-api-qps=%g", b->kcm_qps);
	fmt(a_burst, sizeof(a_burst), "--kube-api-burst=%d", b->kcm_burst);
	fmt(log, sizeof(log), "%s/kcm-%s-%d%s.log", b->logdir, tag, slot,
	    restarted ? "-restarted" : "");
	pid_t pid = spawn(argv, log, NULL);
	if (pid < 0)
		return (int)pid;
	pthread_mutex_lock(&b->smu);
	b->kcm_direct[slot] = pid;
	pthread_mutex_unlock(&b->smu);
	say("started upstream kube-controller-manager (pid %d, leader election %s, log %s)",
	    (int)pid, b->kcm_le ? "on" : "off", log);
	return 0;
}

static void stop_kcm_direct(struct bench *b)
{
	for (int i = 0; i < MAX_KCMD; i++) {
		pid_t pid;
		pthread_mutex_lock(&b->smu);
		pid = b->kcm_direct[i];
		b->kcm_direct[i] = 0;
		pthread_mutex_unlock(&b->smu);
		stop_proc(pid, 20);
	}
}

static void do_kill(struct bench *b, struct bench_run *run, struct killer *k,
                    struct prom_counts *api_at_kill)
{
	char tag[32], log[PATH_MAX + 64];
	pid_t victim = 0;

	k->done = true;
	api_counts(b, api_at_kill);
	if (!b->is_kcmd) {
		snprintf(tag, sizeof(tag), "%s-%s", run->controller, run->limits);
		int slot = -1;
		for (int i = 0; i < MAX_KCMD && slot < 0; i++) {
			fmt(log, sizeof(log), "%s/kcm-%s-%d.log", b->logdir, tag, i);
			if (b->kcm_direct[i] > 0 &&
			    (!k->failover || file_has(log, "acquired lease")))
				slot = i;
		}
		if (slot < 0) {
			say("warning: no upstream kcm %s; nothing killed",
			    k->failover ? "logged a lease" : "runs");
			return;
		}
		victim = b->kcm_direct[slot];
		pthread_mutex_lock(&b->mu);
		b->kill_t = now_s();
		b->resume_t = 0;
		pthread_mutex_unlock(&b->mu);
		kill(victim, SIGKILL);
		wait_pid(victim, 5);
		say("killed %s upstream kube-controller-manager (pid %d) with SIGKILL",
		    k->failover ? "the leading" : "the", (int)victim);
		pthread_mutex_lock(&b->smu);
		b->kcm_direct[slot] = 0;
		pthread_mutex_unlock(&b->smu);
		if (!k->failover && start_kcm_direct(b, slot, tag, true) < 0)
			say("warning: could not restart upstream kcm");
		return;
	}
	if (k->failover) {
		fmt(tag, sizeof(tag), "%s-%s", run->controller, run->limits);
		for (int i = 0; i < MAX_KCMD && !victim; i++) {
			fmt(log, sizeof(log), "%s/kcmd-%s-%d.log", b->logdir, tag, i);
			if (b->kcmd_pid[i] > 0 && file_has(log, "became leader"))
				victim = b->kcmd_pid[i];
		}
		if (!victim) {
			say("warning: no kcmd logged \"became leader\"; nothing killed");
			return;
		}
	} else {
		victim = bench_find_child(b->kcmd_pid[0], "kcmd-informerd");
		if (!victim) {
			say("warning: no kcmd-informerd child of pid %d; nothing killed",
			    (int)b->kcmd_pid[0]);
			return;
		}
	}
	pthread_mutex_lock(&b->mu);
	b->kill_t = now_s();
	b->resume_t = 0;
	pthread_mutex_unlock(&b->mu);
	kill(victim, SIGKILL);
	say("killed %s (pid %d) with SIGKILL", k->failover ? "the leading kcmd" : "kcmd-informerd",
	    (int)victim);
}

/* ---- one pass: one controller manager, one limit setting
 * -------------------------------------------- */

static int make_namespaces(struct bench *b, const char *extra)
{
	for (int i = -1; i < b->o.namespaces; i++) {
		char ns[48], body[256];
		if (i < 0) {
			if (!extra)
				continue;
			fmt(ns, sizeof(ns), "%s", extra);
		} else {
			ns_name(i, ns, sizeof(ns));
		}
		fmt(body, sizeof(body),
		    "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}",
		    ns);
		struct kube_request rq = {.verb = KUBE_CREATE,
		                          .version = "v1",
		                          .resource = "namespaces",
		                          .body = body,
		                          .body_len = strlen(body)};
		struct kube_response resp = {0};
		int r = kube_client_request(b->kc, &rq, NULL, NULL, &resp);
		int code = resp.http_code;
		kube_response_clear(&resp);
		if (r < 0 && code != 409) {
			say("cannot create namespace %s: HTTP %d (%s)", ns, code, strerror(-r));
			return r;
		}
	}
	return 0;
}

static bool all_pods_gone(struct bench *b, double timeout_s)
{
	double end = now_s() + timeout_s;
	for (;;) {
		long n = 0;
		pthread_mutex_lock(&b->mu);
		for (int r = 0; r < MAX_RUNS; r++)
			n += b->run_pods[r];
		pthread_mutex_unlock(&b->mu);
		if (n == 0)
			return true;
		if (now_s() > end || interrupted)
			return false;
		sleep_s(0.5);
	}
}

/* Leftovers of a pass that did not finish: delete its RSs and pods outright (grace 0). */
static void force_cleanup(struct bench *b)
{
	for (int i = 0; i < b->o.namespaces; i++) {
		char ns[48];
		ns_name(i, ns, sizeof(ns));
		/* the workload objects first (no controller recreates pods after), pods last */
		const char *res[] = {"deployments", "daemonsets", "jobs",
		                     "replicasets", "services",   "pods"};
		const char *api[] = {"apis/apps/v1", "apis/apps/v1", "apis/batch/v1",
		                     "apis/apps/v1", "api/v1",       "api/v1"};
		for (int k = 0; k < 6; k++) {
			struct kube_request rq = {.verb = KUBE_DELETE,
			                          .version = "v1",
			                          .resource = res[k],
			                          .ns = ns,
			                          .path = NULL,
			                          .propagation_policy = "Background",
			                          .grace_period_seconds = 0,
			                          .has_grace_period = k == 5};
			char path[256];
			/* deletecollection with a label selector: the raw path carries the query */
			fmt(path, sizeof(path), "/%s/namespaces/%s/%s?labelSelector=" LABEL, api[k],
			    ns, res[k]);
			rq.path = path;
			struct kube_response resp = {0};
			kube_client_request(b->kc, &rq, NULL, NULL, &resp);
			kube_response_clear(&resp);
		}
	}
}

/* cluster: create (body) or delete (name) one core/v1 cluster-scoped object; *ret_code is the
 * HTTP code of the answer. */
static int create_or_delete(struct bench *b, const char *resource, const char *name,
                            const char *body, bool create, int *ret_code)
{
	struct kube_request rq = {.verb = create ? KUBE_CREATE : KUBE_DELETE,
	                          .version = "v1",
	                          .resource = resource,
	                          .name = create ? NULL : name,
	                          .body = create ? body : NULL,
	                          .body_len = create ? strlen(body) : 0};
	struct kube_response resp = {0};
	int r = kube_client_request(b->kc, &rq, NULL, NULL, &resp);
	*ret_code = resp.http_code;
	kube_response_clear(&resp);
	return r;
}

/* cluster: create (or delete) the pass's namespaces, labelled LABEL for the driver's watch.
 * Creating fails on the first error other than 409; deleting ignores 404. */
static int cluster_namespaces(struct bench *b, int run, bool create)
{
	for (int i = 0; i < b->o.namespaces; i++) {
		char ns[64], body[256];
		obj_ns(b, run, i, ns, sizeof(ns));
		fmt(body, sizeof(body),
		    "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\","
		    "\"labels\":{\"" LABEL "\":\"1\"}}}",
		    ns);
		int code, r = create_or_delete(b, "namespaces", ns, body, create, &code);
		/* deleting: 404 gone, 409 already terminating (its content still being removed) */
		if (r < 0 && code != 409 && (create || code != 404)) {
			say("cannot %s namespace %s: HTTP %d (%s)", create ? "create" : "delete",
			    ns, code, strerror(-r));
			if (create)
				return r;
		}
	}
	return 0;
}

/* cluster: add (or delete) the --node-churn Nodes "kcmd-bench-churn-<run>-<k>". They carry the
 * simulator's label (so a restarted simulator does not take them for real nodes; it only runs
 * its own node names) and no status: no kubelet renews them, and they are deleted within the
 * pass. */
static void churn_nodes(struct bench *b, int run, bool create)
{
	for (int k = 0; k < b->o.node_churn; k++) {
		char name[64], body[512];
		fmt(name, sizeof(name), CHURN_NODE "%d-%d", run, k);
		fmt(body, sizeof(body),
		    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\","
		    "\"labels\":{\"" LABEL "\":\"1\",\"kcmd.io/simulated\":\"true\"}}}",
		    name);
		int code, r = create_or_delete(b, "nodes", name, body, create, &code);
		if (r < 0 && code != (create ? 409 : 404))
			say("warning: %s node %s: HTTP %d (%s)", create ? "create" : "delete", name,
			    code, strerror(-r));
	}
}

/* Every object of the pass wants its full size (full) or nothing (mu taken here). */
static void want_all(struct bench *b, struct rsstate *rs, int n, bool full)
{
	pthread_mutex_lock(&b->mu);
	for (int i = 0; i < n; i++)
		rs[i].want = full ? rs[i].size : 0;
	pthread_mutex_unlock(&b->mu);
}

/* ---- nodefailure (issue 18): one zone of nodes stops heartbeating ------------------------------
 * The driver plays every kubelet: it creates --nodes Nodes "kcmd-nf-<i>" in --zones zones (zone
 * i % zones, labels topology.kubernetes.io/zone and region; status Ready, written by the create,
 * which keeps a Node's status), their Leases in kube-node-lease, renewed in rounds every
 * --lease-renew-interval by NF_RENEWERS threads, and --pods-per-node bare pods per node
 * "nf-<i>-<k>" (nodeName set, then status Running and Ready; tolerations of the unreachable and
 * not-ready NoExecute taints with --toleration-seconds). All of it exists before the controller
 * manager starts, so kcmd and upstream start from the same cluster. `steady`: the controller
 * manager starts and holds for NF_STEADY_S (nothing may be tainted or evicted); `failure`: right
 * after a renewal round the Leases of the first --failed-zones zones are no longer renewed (T0 =
 * the end of that round, after every last renewal) until every node of those zones has the
 * node.kubernetes.io/unreachable:NoExecute taint and every pod on them a deletionTimestamp (the
 * taint eviction controller's delete; no kubelet finishes it). Times are the driver's watch
 * events minus T0. Rejected: the kubelet simulator (it renews every node's Lease, would turn
 * the pods marked not ready back to Ready and would finish the evicted pods' deletion). */

#define NF_NODE      "kcmd-nf-"
#define NF_RENEWERS  8
#define NF_STEADY_S  15.0
#define NF_LEASE_NS  "kube-node-lease"
#define NF_ZONE_KEY  "topology.kubernetes.io/zone"
#define NF_TAINT_KEY "node.kubernetes.io/unreachable"

struct nf_node {
	double taint_t; /* first seen with the unreachable NoExecute taint (0: not yet) */
	double renew_t; /* the driver's last successful renewal of its Lease (0: none) */
	bool exists, tainted, other_taint; /* other_taint: not-ready:NoExecute */
};
struct nf_pod {
	double evict_t; /* first seen with a deletionTimestamp (or gone) after T0 */
	bool exists, ready, term;
};
struct nf_state {
	struct nf_node *nodes;
	struct nf_pod *pods;
	double t0;           /* the failure's T0 (0: no failure in progress) */
	double last_round_s; /* how long the round that ended at T0 took */
	/* the renewers (rmu, rcv) */
	pthread_mutex_t rmu;
	pthread_cond_t rcv;
	long round, done_round[NF_RENEWERS];
	bool renew_on, failing;
	atomic_long renewals, renew_errors;
};
static struct nf_state nf;

static bool nf_failed_node(const struct bench_opts *o, int i)
{
	return i % o->zones < o->failed_zones;
}

static int nf_parse(const char *s, const char *prefix, long *a, long *k)
{
	size_t n = strlen(prefix);
	char *end;
	if (!s || strncmp(s, prefix, n))
		return -1;
	*a = strtol(s + n, &end, 10);
	if (end == s + n || *a < 0)
		return -1;
	if (!k)
		return *end ? -1 : 0;
	if (*end != '-')
		return -1;
	const char *p = end + 1;
	*k = strtol(p, &end, 10);
	return end == p || *end || *k < 0 ? -1 : 0;
}

static void on_nf_node(struct bench *b, const char *type, const cJSON *obj)
{
	long i;
	if (nf_parse(jstr(obj, "metadata", "name", NULL), NF_NODE, &i, NULL) < 0 || i >= b->o.nodes)
		return;
	bool unreach = false, notready = false;
	const cJSON *t;
	cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(
	                              cJSON_GetObjectItemCaseSensitive(obj, "spec"), "taints"))
	{
		const char *k = jstr(t, "key", NULL, NULL), *e = jstr(t, "effect", NULL, NULL);
		if (!k || !e || strcmp(e, "NoExecute"))
			continue;
		unreach |= !strcmp(k, NF_TAINT_KEY);
		notready |= !strcmp(k, "node.kubernetes.io/not-ready");
	}
	double now = now_s();
	pthread_mutex_lock(&b->mu);
	struct nf_node *n = &nf.nodes[i];
	n->exists = strcmp(type, "DELETED") != 0;
	n->tainted = n->exists && unreach;
	n->other_taint |= n->exists && notready && nf.t0 > 0;
	if (n->tainted && !n->taint_t && nf.t0 > 0)
		n->taint_t = now;
	pthread_mutex_unlock(&b->mu);
}

static void reset_nf_nodes(struct bench *b)
{
	pthread_mutex_lock(&b->mu);
	for (int i = 0; i < b->o.nodes; i++)
		nf.nodes[i].exists = nf.nodes[i].tainted = false;
	pthread_mutex_unlock(&b->mu);
}

static void on_nf_pod(struct bench *b, const char *type, const cJSON *obj)
{
	long i, k;
	if (nf_parse(jstr(obj, "metadata", "name", NULL), "nf-", &i, &k) < 0 || i >= b->o.nodes ||
	    k >= b->o.pods_per_node)
		return;
	bool term =
	        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"),
	                                         "deletionTimestamp") != NULL;
	bool ready = false;
	const cJSON *c;
	cJSON_ArrayForEach(
	        c, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "status"),
	                                            "conditions"))
	{
		const char *t = jstr(c, "type", NULL, NULL), *s = jstr(c, "status", NULL, NULL);
		if (t && s && !strcmp(t, "Ready"))
			ready = !strcmp(s, "True");
	}
	double now = now_s();
	bool del = !strcmp(type, "DELETED");
	pthread_mutex_lock(&b->mu);
	struct nf_pod *p = &nf.pods[i * b->o.pods_per_node + k];
	p->exists = !del;
	p->ready = !del && ready;
	p->term = !del && term;
	if ((del || term) && !p->evict_t && nf.t0 > 0)
		p->evict_t = now;
	pthread_mutex_unlock(&b->mu);
}

static void reset_nf_pods(struct bench *b)
{
	pthread_mutex_lock(&b->mu);
	for (long i = 0; i < b->o.target_pods; i++)
		nf.pods[i].exists = nf.pods[i].ready = nf.pods[i].term = false;
	pthread_mutex_unlock(&b->mu);
}

/* RFC 3339 with microseconds (a Lease's MicroTime), UTC. */
static void nf_microtime(char *buf, size_t n)
{
	struct timespec ts;
	struct tm tm;
	char s[32];
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
	fmt(buf, n, "%s.%06ldZ", s, ts.tv_nsec / 1000);
}

static int nf_renew(struct kube_client *kc, int i)
{
	char name[48], body[128], ts[40];
	fmt(name, sizeof(name), NF_NODE "%d", i);
	nf_microtime(ts, sizeof(ts));
	fmt(body, sizeof(body), "{\"spec\":{\"renewTime\":\"%s\"}}", ts);
	struct kube_request rq = {.verb = KUBE_PATCH,
	                          .group = "coordination.k8s.io",
	                          .version = "v1",
	                          .resource = "leases",
	                          .ns = NF_LEASE_NS,
	                          .name = name,
	                          .body = body,
	                          .body_len = strlen(body),
	                          .patch_type = KUBE_PATCH_MERGE};
	struct kube_response resp = {0};
	int r = kube_client_request(kc, &rq, NULL, NULL, &resp);
	kube_response_clear(&resp);
	return r;
}

struct nf_renewer {
	struct bench *b;
	int idx;
};

/* Renews the Leases i % NF_RENEWERS == idx once per round (nf.round), skipping the failed
 * zones' nodes while nf.failing. */
static void *nf_renew_thread(void *arg)
{
	struct nf_renewer *w = arg;
	struct bench *b = w->b;
	struct kube_client *kc = NULL;
	long seen = 0;

	if (new_client(b, &kc, 0, 1) < 0)
		return NULL;
	for (;;) {
		pthread_mutex_lock(&nf.rmu);
		while (nf.round == seen)
			pthread_cond_wait(&nf.rcv, &nf.rmu);
		seen = nf.round;
		bool failing = nf.failing;
		pthread_mutex_unlock(&nf.rmu);
		for (int i = w->idx; i < b->o.nodes && !interrupted; i += NF_RENEWERS) {
			if (failing && nf_failed_node(&b->o, i))
				continue;
			if (nf_renew(kc, i) < 0 && nf_renew(kc, i) < 0) {
				atomic_fetch_add(&nf.renew_errors, 1);
				continue;
			}
			atomic_fetch_add(&nf.renewals, 1);
			double t = now_s();
			pthread_mutex_lock(&b->mu);
			nf.nodes[i].renew_t = t;
			pthread_mutex_unlock(&b->mu);
		}
		pthread_mutex_lock(&nf.rmu);
		nf.done_round[w->idx] = seen;
		pthread_cond_broadcast(&nf.rcv);
		pthread_mutex_unlock(&nf.rmu);
	}
	return NULL;
}

/* The round coordinator: one round every --lease-renew-interval while renew_on. A failure asked
 * for (nf.failing set by the main thread, t0 0) starts at the end of the round that follows:
 * that round still renews every node, so every failed node's last renewal precedes T0. */
static bool nf_fail_req;
static void *nf_round_thread(void *arg)
{
	struct bench *b = arg;
	for (;;) {
		double start = now_s();
		pthread_mutex_lock(&nf.rmu);
		if (nf.renew_on) {
			long r = ++nf.round;
			pthread_cond_broadcast(&nf.rcv);
			for (;;) {
				bool all = true;
				for (int t = 0; t < NF_RENEWERS; t++)
					all &= nf.done_round[t] >= r;
				if (all)
					break;
				pthread_cond_wait(&nf.rcv, &nf.rmu);
			}
			if (nf_fail_req && !nf.failing) {
				nf.failing = true;
				pthread_mutex_lock(&b->mu);
				nf.t0 = now_s();
				nf.last_round_s = nf.t0 - start;
				pthread_mutex_unlock(&b->mu);
			}
		}
		pthread_mutex_unlock(&nf.rmu);
		double el = now_s() - start;
		if (el > b->o.lease_renew_s)
			say("warning: a Lease renewal round took %.1f s (> %g s)", el,
			    b->o.lease_renew_s);
		sleep_s(b->o.lease_renew_s - el);
	}
	return NULL;
}

static void nf_start_renewers(struct bench *b)
{
	static struct nf_renewer w[NF_RENEWERS];
	pthread_mutex_init(&nf.rmu, NULL);
	pthread_cond_init(&nf.rcv, NULL);
	for (int t = 0; t < NF_RENEWERS; t++) {
		pthread_t th;
		w[t] = (struct nf_renewer){.b = b, .idx = t};
		if (pthread_create(&th, NULL, nf_renew_thread, &w[t]) == 0)
			pthread_detach(th);
	}
	pthread_t th;
	if (pthread_create(&th, NULL, nf_round_thread, b) == 0)
		pthread_detach(th);
}

static void nf_renew_set(bool on, bool fail)
{
	pthread_mutex_lock(&nf.rmu);
	nf.renew_on = on;
	nf_fail_req = fail;
	if (!fail)
		nf.failing = false;
	pthread_mutex_unlock(&nf.rmu);
}

/* setup: node i (with its status), its Lease */
static int nf_create_node(struct pacer *p, struct kube_client *kc, int i)
{
	struct bench *b = p->b;
	char body[2048], ts[40], name[48];
	nf_microtime(ts, sizeof(ts));
	fmt(name, sizeof(name), NF_NODE "%d", i);
	char sec[24];
	fmt(sec, sizeof(sec), "%.19s", ts);
	fmt(body, sizeof(body),
	    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"labels\":{"
	    "\"" LABEL "\":\"1\",\"" NF_ZONE_KEY "\":\"zone-%d\","
	    "\"topology.kubernetes.io/region\":\"bench\",\"kubernetes.io/hostname\":\"%s\","
	    "\"kubernetes.io/os\":\"linux\",\"kubernetes.io/arch\":\"amd64\","
	    "\"beta.kubernetes.io/os\":\"linux\",\"beta.kubernetes.io/arch\":\"amd64\"}},"
	    "\"spec\":{},\"status\":{\"capacity\":{\"pods\":\"110\",\"cpu\":\"32\",\"memory\":"
	    "\"256Gi\"},\"allocatable\":{\"pods\":\"110\",\"cpu\":\"32\",\"memory\":\"256Gi\"},"
	    "\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"10.201.%d.%d\"}],"
	    "\"conditions\":["
	    "{\"type\":\"MemoryPressure\",\"status\":\"False\",\"reason\":"
	    "\"KubeletHasSufficientMemory\",\"lastHeartbeatTime\":\"%sZ\",\"lastTransitionTime\":"
	    "\"%sZ\"},"
	    "{\"type\":\"DiskPressure\",\"status\":\"False\",\"reason\":"
	    "\"KubeletHasNoDiskPressure\",\"lastHeartbeatTime\":\"%sZ\",\"lastTransitionTime\":"
	    "\"%sZ\"},"
	    "{\"type\":\"PIDPressure\",\"status\":\"False\",\"reason\":"
	    "\"KubeletHasSufficientPID\",\"lastHeartbeatTime\":\"%sZ\",\"lastTransitionTime\":"
	    "\"%sZ\"},"
	    "{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"KubeletReady\",\"message\":"
	    "\"kubelet is posting ready status\",\"lastHeartbeatTime\":\"%sZ\","
	    "\"lastTransitionTime\":\"%sZ\"}]}}",
	    name, i % b->o.zones, name, i / 256 % 256, i % 256, sec, sec, sec, sec, sec, sec, sec,
	    sec);
	int r = simple_write(b, kc, KUBE_CREATE, NULL, "nodes", NULL, name, body, false);
	if (r < 0)
		return r;
	fmt(body, sizeof(body),
	    "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{"
	    "\"name\":\"%s\",\"namespace\":\"" NF_LEASE_NS "\",\"labels\":{\"" LABEL "\":\"1\"}},"
	    "\"spec\":{\"holderIdentity\":\"%s\",\"leaseDurationSeconds\":40,\"renewTime\":"
	    "\"%s\"}}",
	    name, name, ts);
	return simple_write(b, kc, KUBE_CREATE, "coordination.k8s.io", "leases", NF_LEASE_NS, name,
	                    body, false);
}

/* setup: pod i = node i / P, k = i % P, bound, then Running and Ready (its status) */
static int nf_create_pod(struct pacer *p, struct kube_client *kc, int i)
{
	struct bench *b = p->b;
	int node = i / b->o.pods_per_node, k = i % b->o.pods_per_node;
	char body[2048], name[64], ns[48], ts[40];
	fmt(name, sizeof(name), "nf-%d-%d", node, k);
	ns_name(node % b->o.namespaces, ns, sizeof(ns));
	fmt(body, sizeof(body),
	    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"labels\":{"
	    "\"" LABEL "\":\"1\"}},\"spec\":{\"nodeName\":\"" NF_NODE "%d\","
	    "\"containers\":[{\"name\":\"c\",\"image\":\"registry.invalid/bench:1\"}],"
	    "\"tolerations\":[{\"key\":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\","
	    "\"effect\":\"NoExecute\",\"tolerationSeconds\":%ld},{\"key\":\"" NF_TAINT_KEY "\","
	    "\"operator\":\"Exists\",\"effect\":\"NoExecute\",\"tolerationSeconds\":%ld}]}}",
	    name, node, b->o.toleration_s, b->o.toleration_s);
	int r = simple_write(b, kc, KUBE_CREATE, NULL, "pods", ns, name, body, false);
	if (r < 0)
		return r;
	nf_microtime(ts, sizeof(ts));
	fmt(body, sizeof(body),
	    "{\"status\":{\"phase\":\"Running\",\"hostIP\":\"10.201.%d.%d\",\"podIP\":"
	    "\"10.129.%d.%d\",\"startTime\":\"%.19sZ\",\"conditions\":["
	    "{\"type\":\"PodScheduled\",\"status\":\"True\"},{\"type\":\"Initialized\",\"status\":"
	    "\"True\"},{\"type\":\"ContainersReady\",\"status\":\"True\"},{\"type\":\"Ready\","
	    "\"status\":\"True\"}]}}",
	    node / 256 % 256, node % 256, i / 256 % 256, i % 256, ts);
	struct kube_request rq = {.verb = KUBE_PATCH,
	                          .version = "v1",
	                          .resource = "pods",
	                          .ns = ns,
	                          .name = name,
	                          .subresource = "status",
	                          .body = body,
	                          .body_len = strlen(body),
	                          .patch_type = KUBE_PATCH_MERGE};
	struct kube_response resp = {0};
	r = kube_client_request(kc, &rq, NULL, NULL, &resp);
	if (r < 0)
		say("warning: pod status %s/%s: HTTP %d", ns, name, resp.http_code);
	kube_response_clear(&resp);
	return r;
}

/* The driver's view: nodes existing, failed nodes tainted, healthy nodes tainted; pods existing,
 * Ready, terminating; failed pods evicted (mu held). */
struct nf_view {
	int nodes, tainted, healthy_tainted;
	long pods, ready, term, evicted, healthy_evicted;
};
static struct nf_view nf_view_locked(const struct bench *b)
{
	struct nf_view v = {0};
	const struct bench_opts *o = &b->o;
	for (int i = 0; i < o->nodes; i++) {
		const struct nf_node *n = &nf.nodes[i];
		bool failed = nf_failed_node(o, i);
		v.nodes += n->exists;
		v.tainted += failed && n->tainted;
		v.healthy_tainted += !failed && (n->tainted || n->other_taint);
		for (int k = 0; k < o->pods_per_node; k++) {
			const struct nf_pod *p = &nf.pods[(long)i * o->pods_per_node + k];
			v.pods += p->exists;
			v.ready += p->exists && p->ready;
			v.term += p->term;
			v.evicted += failed && p->evict_t > 0;
			v.healthy_evicted += !failed && p->evict_t > 0;
		}
	}
	return v;
}

static struct nf_view nf_view(struct bench *b)
{
	pthread_mutex_lock(&b->mu);
	struct nf_view v = nf_view_locked(b);
	pthread_mutex_unlock(&b->mu);
	return v;
}

/* The apiserver's pod DELETEs and pod status writes so far (apiserver_request_total). */
static void nf_pod_writes(struct bench *b, double *deletes, double *status)
{
	struct kube_request rq = {.verb = KUBE_GET, .path = "/metrics", .accept = "text/plain"};
	struct kube_response resp = {0};
	static const char *const g[] = {"verb", "resource", "subresource"};
	struct prom_counts c = {0};
	*deletes = *status = NAN;
	if (kube_client_request(b->kc, &rq, NULL, NULL, &resp) == 0 &&
	    prom_collect(resp.body, resp.body_len, "apiserver_request_total", NULL, 0, g, 3, &c) >=
	            0) {
		*deletes = prom_counts_get(&c, "DELETE pods ");
		*status = prom_counts_get(&c, "PUT pods status") +
		          prom_counts_get(&c, "PATCH pods status") +
		          prom_counts_get(&c, "APPLY pods status");
	}
	prom_counts_free(&c);
	kube_response_clear(&resp);
}

/* Deletes every pod (grace 0), Node and Lease of the workload and waits until the driver's
 * watches show none. */
static bool nf_cleanup(struct bench *b)
{
	nf_renew_set(false, false);
	pthread_mutex_lock(&b->mu);
	nf.t0 = 0;
	pthread_mutex_unlock(&b->mu);
	for (int i = 0; i < b->o.namespaces; i++) {
		char ns[48], path[256];
		ns_name(i, ns, sizeof(ns));
		fmt(path, sizeof(path), "/api/v1/namespaces/%s/pods?labelSelector=" LABEL, ns);
		struct kube_request rq = {.verb = KUBE_DELETE,
		                          .path = path,
		                          .grace_period_seconds = 0,
		                          .has_grace_period = true,
		                          .timeout_ms = 600000};
		struct kube_response resp = {0};
		kube_client_request(b->kc, &rq, NULL, NULL, &resp);
		kube_response_clear(&resp);
	}
	const char *paths[] = {"/api/v1/nodes?labelSelector=" LABEL,
	                       "/apis/coordination.k8s.io/v1/namespaces/" NF_LEASE_NS
	                       "/leases?labelSelector=" LABEL};
	for (int k = 0; k < 2; k++) {
		struct kube_request rq = {
		        .verb = KUBE_DELETE, .path = paths[k], .timeout_ms = 600000};
		struct kube_response resp = {0};
		kube_client_request(b->kc, &rq, NULL, NULL, &resp);
		kube_response_clear(&resp);
	}
	double end = now_s() + 600;
	for (;;) {
		struct nf_view v = nf_view(b);
		if (!v.pods && !v.nodes)
			break;
		if (now_s() > end || interrupted) {
			say("warning: %ld pods and %d nodes of the workload remain", v.pods,
			    v.nodes);
			return false;
		}
		sleep_s(0.5);
	}
	pthread_mutex_lock(&b->mu);
	for (int i = 0; i < b->o.nodes; i++)
		nf.nodes[i] = (struct nf_node){0};
	for (long i = 0; i < b->o.target_pods; i++)
		nf.pods[i] = (struct nf_pod){0};
	pthread_mutex_unlock(&b->mu);
	return true;
}

/* Creates the nodes, Leases and pods (no controller manager runs yet) and waits until the
 * driver's watches show every node and every pod Ready. */
static int nf_setup(struct bench *b, struct pacer *p)
{
	const struct bench_opts *o = &b->o;
	double t = now_s();
	say("nodefailure: creating %d nodes in %d zones with their Leases", o->nodes, o->zones);
	nf_renew_set(false, false);
	pacer_start(p, b, o->nodes, 0, 16, nf_create_node, NULL);
	pacer_join(p);
	if (atomic_load(&p->errors))
		return -EIO;
	nf_renew_set(true, false);
	say("nodefailure: creating %ld pods (%d per node), bound, Running and Ready",
	    o->target_pods, o->pods_per_node);
	if (o->target_pods > 0) {
		pacer_start(p, b, (int)o->target_pods, 0, 32, nf_create_pod, NULL);
		double last = 0;
		while (atomic_load(&p->done) < p->n && !interrupted) {
			if (now_s() - last >= 10) {
				struct nf_view v = nf_view(b);
				say("  setup: %d of %ld pod writes done, %ld pods, %ld Ready",
				    atomic_load(&p->done), o->target_pods, v.pods, v.ready);
				last = now_s();
			}
			sleep_s(0.5);
		}
		pacer_join(p);
		if (atomic_load(&p->errors))
			return -EIO;
	}
	double end = now_s() + 300;
	for (;;) {
		struct nf_view v = nf_view(b);
		if (v.nodes == o->nodes && v.ready == o->target_pods && !v.term)
			break;
		if (now_s() > end || interrupted)
			return -ETIMEDOUT;
		sleep_s(0.25);
	}
	say("nodefailure: setup done in %.1f s", now_s() - t);
	return 0;
}

static int nf_cmp(const void *a, const void *b2)
{
	double x = *(const double *)a, y = *(const double *)b2;
	return x < y ? -1 : x > y;
}

static int run_nodefail_pass(struct bench *b, int runidx, bool upstream, bool last_pass)
{
	struct bench_run *run = &b->rep.runs[b->rep.n_runs++];
	const struct bench_opts *o = &b->o;
	char tag[40];
	int r = 0;

	*run = (struct bench_run){.qps = o->qps, .burst = o->burst};
	fmt(run->controller, sizeof(run->controller), "%s", upstream ? "upstream" : "kcmd");
	fmt(run->limits, sizeof(run->limits), "limited");
	fmt(run->mem_kind, sizeof(run->mem_kind), "%s", upstream ? "RSS" : "PSS");
	fmt(tag, sizeof(tag), "%s-%s", run->controller, run->limits);
	say("=== pass %s: %s, --kube-api-qps=%g --kube-api-burst=%d, %d nodes x %d pods, %d "
	    "zones, %d failing ===",
	    tag, run->controller, o->qps, o->burst, o->nodes, o->pods_per_node, o->zones,
	    o->failed_zones);
	pthread_mutex_lock(&b->mu);
	b->cur_run = runidx;
	pthread_mutex_unlock(&b->mu);
	struct pacer *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	r = nf_setup(b, p);
	if (r < 0) {
		fmt(run->error, sizeof(run->error), "setup failed (%s)", strerror(-r));
		say("%s", run->error);
		goto out;
	}
	sampler_start(b, run, tag, upstream);

	if (upstream) {
		b->kcm_qps = o->qps;
		b->kcm_burst = o->burst;
		b->kcm_le = false;
		r = start_kcm_direct(b, 0, tag, false);
	} else {
		r = start_kcmd(b, 0, o->qps, o->burst, false, tag);
	}
	if (r < 0) {
		fmt(run->error, sizeof(run->error),
		    "the controller manager did not start (%s); see %s", strerror(-r), b->logdir);
		say("%s", run->error);
		goto out;
	}
	pthread_mutex_lock(&b->smu);
	b->run_t0 = now_s();
	b->sampling = true;
	pthread_mutex_unlock(&b->smu);

	/* steady: start-up (kcmd until /readyz; upstream 5 s, it serves nothing here), then
	 * NF_STEADY_S in which nothing may be tainted, evicted or made not ready */
	struct phase_ctx pc;
	phase_begin(b, run, "steady", &pc);
	if (upstream)
		sleep_s(5);
	else if ((r = wait_kcmd_ready(b, 0, 120)) < 0)
		say("warning: kcmd not ready (%s)", strerror(-r));
	sleep_s(NF_STEADY_S);
	struct nf_view v = nf_view(b);
	bool ok =
	        r == 0 && v.ready == o->target_pods && !v.term && !v.healthy_tainted && !v.tainted;
	phase_end(b, &pc, ok);
	if (!ok) {
		fmt(run->error, sizeof(run->error),
		    "not steady: %ld of %ld pods Ready, %ld terminating, %d nodes tainted", v.ready,
		    o->target_pods, v.term, v.tainted + v.healthy_tainted);
		say("%s", run->error);
		goto out;
	}

	/* failure */
	int n_failed = 0;
	for (int i = 0; i < o->nodes; i++)
		n_failed += nf_failed_node(o, i);
	long pods_failed = (long)n_failed * o->pods_per_node;
	double del0, st0;
	nf_pod_writes(b, &del0, &st0);
	/* T0 comes at the end of the next renewal round (at most --lease-renew-interval and a
	 * round away); the phase starts there */
	nf_renew_set(true, true);
	double t0 = 0, end = now_s() + o->lease_renew_s * 3 + 60;
	while (!interrupted && now_s() < end) {
		pthread_mutex_lock(&b->mu);
		t0 = nf.t0;
		pthread_mutex_unlock(&b->mu);
		if (t0 > 0)
			break;
		sleep_s(0.02);
	}
	phase_begin(b, run, "failure", &pc);
	say("  T0: the Leases of %d nodes are no longer renewed", n_failed);
	end = now_s() + o->phase_timeout_s;
	double last = now_s();
	while (!interrupted) {
		pthread_mutex_lock(&b->mu);
		t0 = nf.t0;
		v = nf_view_locked(b);
		pthread_mutex_unlock(&b->mu);
		if (t0 > 0 && v.tainted == n_failed && v.evicted == pods_failed)
			break;
		if (now_s() > end)
			break;
		if (now_s() - last >= 5) {
			say("  failure: %.0f s after T0, %d of %d nodes tainted, %ld of %ld pods "
			    "evicted; healthy: %d tainted, %ld evicted",
			    t0 > 0 ? now_s() - t0 : 0.0, v.tainted, n_failed, v.evicted,
			    pods_failed, v.healthy_tainted, v.healthy_evicted);
			last = now_s();
		}
		sleep_s(0.1);
	}
	ok = t0 > 0 && v.tainted == n_failed && v.evicted == pods_failed;
	phase_end(b, &pc, ok);
	/* a few seconds more: a second eviction, or one in a healthy zone, would show */
	sleep_s(5);
	double del1, st1;
	nf_pod_writes(b, &del1, &st1);

	/* the figures (times from T0) */
	double *th = calloc((size_t)n_failed + 1, sizeof(double)),
	       *tt = calloc((size_t)n_failed + 1, sizeof(double)),
	       *te = calloc((size_t)pods_failed + 1, sizeof(double)),
	       *ta = calloc((size_t)pods_failed + 1, sizeof(double));
	size_t nt = 0, ne = 0, na = 0, nh = 0;
	pthread_mutex_lock(&b->mu);
	v = nf_view_locked(b);
	double last_round = nf.last_round_s;
	for (int i = 0; tt && te && ta && t0 > 0 && i < o->nodes; i++) {
		if (!nf_failed_node(o, i))
			continue;
		const struct nf_node *n = &nf.nodes[i];
		if (n->taint_t > 0 && th && n->renew_t > 0)
			th[nh++] = n->taint_t - n->renew_t;
		if (n->taint_t > 0)
			tt[nt++] = n->taint_t - t0;
		for (int k = 0; k < o->pods_per_node; k++) {
			const struct nf_pod *pp = &nf.pods[(long)i * o->pods_per_node + k];
			if (pp->evict_t <= 0)
				continue;
			te[ne++] = pp->evict_t - t0;
			if (n->taint_t > 0)
				ta[na++] = pp->evict_t - n->taint_t;
		}
	}
	pthread_mutex_unlock(&b->mu);
	if (th)
		qsort(th, nh, sizeof(double), nf_cmp);
	if (tt && te && ta) {
		qsort(tt, nt, sizeof(double), nf_cmp);
		qsort(te, ne, sizeof(double), nf_cmp);
		qsort(ta, na, sizeof(double), nf_cmp);
	}
#define Q(a, n, q) ((n) ? (a)[(size_t)((double)((n)-1) * (q) + 0.5)] : NAN)
	bench_run_extra(run, "nodes_failed", "nodes failed", "nodes", n_failed);
	bench_run_extra(run, "nodes_tainted", "tainted", "nodes", (double)nt);
	bench_run_extra(run, "taint_first_s", "taint first, T0+", "s", Q(tt, nt, 0));
	bench_run_extra(run, "taint_p50_s", "taint median, T0+", "s", Q(tt, nt, 0.5));
	bench_run_extra(run, "taint_last_s", "taint last, T0+", "s", Q(tt, nt, 1));
	/* T0 is the end of the last round; a node's own last renewal is up to that round's
	 * length earlier (seconds at 1,000 nodes under load) */
	bench_run_extra(run, "last_round_s", "last renewal round", "s", last_round);
	bench_run_extra(run, "silent_taint_first_s", "taint first, silent+", "s", Q(th, nh, 0));
	bench_run_extra(run, "silent_taint_p50_s", "taint median, silent+", "s", Q(th, nh, 0.5));
	bench_run_extra(run, "silent_taint_last_s", "taint last, silent+", "s", Q(th, nh, 1));
	bench_run_extra(run, "taint_rate_per_s", "taint rate", "nodes/s",
	                nt > 1 && tt[nt - 1] > tt[0] ? (double)(nt - 1) / (tt[nt - 1] - tt[0])
	                                             : NAN);
	bench_run_extra(run, "pods_evicted", "evicted", "pods", (double)ne);
	bench_run_extra(run, "evict_first_s", "evict first, T0+", "s", Q(te, ne, 0));
	bench_run_extra(run, "evict_p50_s", "evict median, T0+", "s", Q(te, ne, 0.5));
	bench_run_extra(run, "evict_last_s", "evict last, T0+", "s", Q(te, ne, 1));
	bench_run_extra(run, "evict_after_taint_p50_s", "evict-taint median", "s", Q(ta, na, 0.5));
	bench_run_extra(run, "evict_after_taint_max_s", "evict-taint max", "s", Q(ta, na, 1));
	bench_run_extra(run, "healthy_nodes_tainted", "healthy tainted", "nodes",
	                v.healthy_tainted);
	bench_run_extra(run, "healthy_pods_evicted", "healthy evicted", "pods",
	                (double)v.healthy_evicted);
	bench_run_extra(run, "pod_deletes", "pod DELETEs", "requests", del1 - del0);
	bench_run_extra(run, "pod_status_writes", "pod status writes", "requests", st1 - st0);
#undef Q
	say("  T0 -> taints %.1f / %.1f / %.1f s (first/median/last, %zu of %d nodes), evictions "
	    "%.1f / %.1f / %.1f s (%zu of %ld pods); healthy: %d nodes tainted, %ld pods evicted; "
	    "%.0f pod DELETEs, %.0f pod status writes; %ld Lease renewals (%ld failed)",
	    nt ? tt[0] : NAN, nt ? tt[nt / 2] : NAN, nt ? tt[nt - 1] : NAN, nt, n_failed,
	    ne ? te[0] : NAN, ne ? te[ne / 2] : NAN, ne ? te[ne - 1] : NAN, ne, pods_failed,
	    v.healthy_tainted, v.healthy_evicted, del1 - del0, st1 - st0, atomic_load(&nf.renewals),
	    atomic_load(&nf.renew_errors));
	free(th);
	free(tt);
	free(te);
	free(ta);

out:
	sampler_stop(b, run);
	if (upstream)
		stop_kcm_direct(b);
	else
		stop_kcmds(b);
	/* the last pass on the bench's own cluster leaves them: the cluster is torn down (50,000
	 * pods take minutes to delete) */
	if (!last_pass || !b->cluster_up) {
		say("nodefailure: deleting the pods, nodes and Leases");
		nf_cleanup(b);
	}
	pthread_mutex_lock(&b->mu);
	b->cur_run = -1;
	pthread_mutex_unlock(&b->mu);
	free(p);
	return r;
}

static int run_pass(struct bench *b, int runidx, bool upstream, bool unlimited)
{
	struct bench_run *run = &b->rep.runs[b->rep.n_runs++];
	const struct bench_opts *o = &b->o;
	double qps = unlimited ? o->unlimited_qps : o->qps;
	int burst = unlimited ? o->unlimited_burst : o->burst;
	char tag[40], path[PATH_MAX + 64];
	int *sizes = NULL, n = 0, r = 0;

	*run = (struct bench_run){.qps = qps,
	                          .burst = burst,
	                          .shards = upstream ? 0 : b->shard_n,
	                          .failover_s = NAN,
	                          .load_avg = NAN};
	fmt(run->controller, sizeof(run->controller), "%s", upstream ? "upstream" : "kcmd");
	fmt(run->limits, sizeof(run->limits), "%s", unlimited ? "unlimited" : "limited");
	fmt(run->mem_kind, sizeof(run->mem_kind), "%s", upstream ? "RSS" : "PSS");
	if (run->shards)
		fmt(tag, sizeof(tag), "n%d", run->shards); /* logs and series of each pass */
	else
		fmt(tag, sizeof(tag), "%s-%s", run->controller, run->limits);

	bool objs = bench_workload_objects(o->workload) || bench_workload_issue17(o->workload);
	long maxrs = objs ? bench_object_count(o) : o->rs_count ? o->rs_count : o->target_pods + 64;
	sizes = calloc((size_t)maxrs, sizeof(int));
	if (sizes && bench_workload_issue17(o->workload)) {
		/* per namespace: its pods; per Service: its pods */
		n = (int)maxrs;
		for (int i = 0; i < n; i++)
			sizes[i] = o->workload == BENCH_NAMESPACES ? o->ns_objects / 5
			                                           : o->pods_per_service;
	} else if (sizes && bench_workload_objects(o->workload)) {
		/* per object: replicas, completions (the last Job takes the rest), nodes */
		n = (int)maxrs;
		for (int i = 0; i < n; i++) {
			/* cluster: Deployments, then Jobs (j counts the Jobs) */
			long j = o->workload == BENCH_CLUSTER ? i - o->deployments : i;
			if (kind_of(b, i) == BENCH_DEPLOYMENTS) {
				sizes[i] = o->replicas;
				continue;
			}
			sizes[i] = o->workload == BENCH_DEPLOYMENTS ? o->replicas
			           : o->workload == BENCH_DAEMONSETS
			                   ? o->nodes
			                   : (int)(o->completions - j * o->job_completions <
			                                           o->job_completions
			                                   ? o->completions - j * o->job_completions
			                                   : o->job_completions);
		}
	}
	if (!sizes || (!objs && (n = bench_load_plan(o, sizes, (int)maxrs)) <= 0)) {
		free(sizes);
		fmt(run->error, sizeof(run->error), "cannot plan the workload");
		return -EINVAL;
	}
	b->rep.rs_count = n;
	struct rsstate *rs = calloc((size_t)n, sizeof(*rs));
	if (!rs) {
		free(sizes);
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++)
		rs[i] = (struct rsstate){.ns = i % o->namespaces, .size = sizes[i]};
	free(sizes);
	bool *ns_alive = NULL, *node_alive = NULL, *node_ok = NULL;
	if (o->workload == BENCH_CLUSTER) {
		ns_alive = calloc((size_t)o->namespaces, sizeof(bool));
		node_alive = calloc((size_t)o->node_churn + 1, sizeof(bool));
		node_ok = calloc((size_t)o->node_churn + 1, sizeof(bool));
		if (!ns_alive || !node_alive || !node_ok) {
			free(ns_alive);
			free(node_alive);
			free(node_ok);
			free(rs);
			return -ENOMEM;
		}
	}
	pthread_mutex_lock(&b->mu);
	b->cur_run = runidx;
	b->rs = rs;
	b->n_rs = n;
	b->kill_t = b->resume_t = 0;
	b->ns_alive = ns_alive;
	b->node_alive = node_alive;
	b->node_ok = node_ok;
	b->churn_want = 0;
	pthread_mutex_unlock(&b->mu);

	/* the controller manager */
	say("=== pass %s: %s, --kube-api-qps=%g --kube-api-burst=%d, %d %s ===", tag,
	    run->controller, qps, burst, n,
	    o->workload == BENCH_DEPLOYMENTS      ? "Deployments"
	    : o->workload == BENCH_JOBS           ? "Jobs"
	    : o->workload == BENCH_DAEMONSETS     ? "DaemonSets"
	    : o->workload == BENCH_NAMESPACES     ? "namespaces"
	    : o->workload == BENCH_ENDPOINTSLICES ? "Services"
	    : o->workload == BENCH_CLUSTER        ? "Deployments with a Service, and Jobs"
	                                          : "ReplicaSets");
	sampler_start(b, run, tag, upstream);

	bool failover = o->workload == BENCH_FAILOVER;
	bool killing = failover || o->workload == BENCH_RESTART;
	/* started by the driver: failover and restart (to kill it), cluster (kubeadm's flags) */
	bool direct = killing || o->workload == BENCH_CLUSTER;
	if (upstream && direct) {
		b->kcm_qps = qps;
		b->kcm_burst = burst;
		b->kcm_le = failover;
		r = start_kcm_direct(b, 0, tag, false);
		if (r == 0 && failover) {
			double end = now_s() + 60;
			fmt(path, sizeof(path), "%s/kcm-%s-0.log", b->logdir, tag);
			while (!file_has(path, "acquired lease") && now_s() < end && !interrupted)
				sleep_s(0.25);
			r = start_kcm_direct(b, 1, tag, false);
		}
		if (r == 0)
			sleep_s(5); /* no endpoint to poll (secure-port 0): let its informers sync
			             */
	} else if (upstream) {
		r = start_upstream(b, qps, burst);
		if (r == 0)
			sleep_s(5); /* no endpoint to poll (secure-port 0): let its informers sync
			             */
	} else if (run->shards) {
		r = shard_start(b, qps, burst, tag);
	} else {
		r = start_kcmd(b, 0, qps, burst, failover, tag);
		if (r == 0 && failover) {
			/* the first one leads; the second waits as the standby */
			double end = now_s() + 60;
			fmt(path, sizeof(path), "%s/kcmd-%s-0.log", b->logdir, tag);
			while (!file_has(path, "became leader") && now_s() < end && !interrupted)
				sleep_s(0.25);
			r = start_kcmd(b, 1, qps, burst, true, tag);
			if (r == 0 && o->kcmd_args && strstr(o->kcmd_args, "standby-warm-cache")) {
				/* a warm standby: its caches synced before the leader is killed */
				end = now_s() + 120;
				fmt(path, sizeof(path), "%s/kcmd-%s-1.log", b->logdir, tag);
				/* informerd logs "informers synced" for the typed informers, then
				 * again for the garbage collector's discovered resources: wait for
				 * the second (60 s at most, e.g. with the GC off) */
				end = now_s() + 60;
				while (file_count(path, "informers synced") < 2 && now_s() < end &&
				       !interrupted)
					sleep_s(0.25);
			}
			if (r == 0)
				sleep_s(5);
		} else if (r == 0) {
			r = wait_kcmd_ready(b, 0, 90);
		}
	}
	if (r < 0) {
		fmt(run->error, sizeof(run->error),
		    "the controller manager did not start (%s); see %s", strerror(-r), b->logdir);
		say("%s", run->error);
		goto out;
	}
	pthread_mutex_lock(&b->smu);
	b->run_t0 = now_s();
	b->sampling = true;
	pthread_mutex_unlock(&b->smu);

	struct pacer *p = calloc(1, sizeof(*p));
	struct phase_ctx pc;
	struct prom_counts at_kill = {0};
	if (!p) {
		r = -ENOMEM;
		goto out;
	}
	if (bench_workload_objects(o->workload))
		goto objects;
	if (o->workload == BENCH_NAMESPACES)
		goto namespaces;
	if (o->workload == BENCH_ENDPOINTSLICES)
		goto endpointslices;
	/* phase 1: create */
	struct killer k = {.at = n / 2, .failover = failover};
	phase_begin(b, run, o->workload == BENCH_RAMP ? "ramp" : "create", &pc);
	want_all(b, rs, n, true);
	pacer_start(p, b, n, o->create_rate, 8, do_create, NULL);
	bool ok = wait_converged(
	        b, run, p, W_PODS,
	        o->workload == BENCH_FAILOVER || o->workload == BENCH_RESTART ? &k : NULL,
	        &at_kill);
	phase_end(b, &pc, ok);
	if (k.done && b->kill_t > 0) {
		struct bench_phase *ph = pc.ph;
		struct prom_counts now = {0}, d = {0};
		pthread_mutex_lock(&b->mu);
		ph->resume_s = b->resume_t > 0 ? b->resume_t - b->kill_t : NAN;
		pthread_mutex_unlock(&b->mu);
		if (api_counts(b, &now) == 0 && at_kill.n) {
			prom_counts_delta(&now, &at_kill, &d);
			ph->lists = lists_of(&d);
		}
		prom_counts_free(&now);
		prom_counts_free(&d);
		prom_counts_free(&at_kill);
		say("  resumed %.2f s after the kill; %.0f LIST requests from the kill to the end "
		    "of the phase",
		    ph->resume_s, ph->lists);
	}

	if (ok && o->workload == BENCH_RAMP) {
		/* reaction latency at the peak pod count: +1 replica on up to 20 RSs, one at a time
		 */
		int m = n < 20 ? n : 20;
		phase_begin(b, run, "latency", &pc);
		bool lok = true;
		for (int j = 0; j < m && lok && !interrupted; j++) {
			int i = (int)((long)j * n / m);
			pthread_mutex_lock(&b->mu);
			rs[i].want++;
			pthread_mutex_unlock(&b->mu);
			struct pacer one = {.b = b, .n = 1};
			lok = do_scale(&one, b->kc, i) == 0;
			double end = now_s() + 60;
			for (;;) {
				pthread_mutex_lock(&b->mu);
				bool there = rs[i].active >= rs[i].want;
				pthread_mutex_unlock(&b->mu);
				if (there || now_s() > end || interrupted)
					break;
				sleep_s(0.01);
			}
			sleep_s(0.5);
		}
		lok = lok && wait_converged(b, run, NULL, W_PODS, NULL, NULL);
		phase_end(b, &pc, lok);
	}
	if (ok && o->workload != BENCH_RAMP) {
		/* phase 2: rescale each RS to a random size between 1/2 and 3/2 of its size */
		phase_begin(b, run, "rescale", &pc);
		unsigned seed = o->seed;
		pthread_mutex_lock(&b->mu);
		for (int i = 0; i < n; i++) {
			int lo = rs[i].size / 2 > 0 ? rs[i].size / 2 : 1, hi = rs[i].size * 3 / 2;
			if (hi < lo)
				hi = lo;
			rs[i].want = lo + (int)(rand_r(&seed) % (unsigned)(hi - lo + 1));
		}
		pthread_mutex_unlock(&b->mu);
		pacer_start(p, b, n, o->create_rate, 8, do_scale, NULL);
		ok = wait_converged(b, run, p, W_PODS, NULL, NULL);
		phase_end(b, &pc, ok);
	}
	/* last phase: delete every RS (background propagation: the garbage collector removes the
	 * pods) */
	phase_begin(b, run, "delete", &pc);
	want_all(b, rs, n, false);
	pacer_start(p, b, n, o->create_rate, 8, do_delete, NULL);
	ok = wait_converged(b, run, p, W_NONE, NULL, NULL) && ok;
	phase_end(b, &pc, ok);
	free(p);
	goto out;

objects:
	/* deployments, jobs, daemonsets: create (jobs: run) until every object is done; a
	 * template change on every object until every one is done again (not for Jobs); delete
	 * with background propagation until every pod is gone (the garbage collector) */
	bool cl = o->workload == BENCH_CLUSTER;
	phase_begin(b, run, o->workload == BENCH_JOBS ? "run" : "create", &pc);
	pthread_mutex_lock(&b->mu);
	for (int i = 0; i < n; i++) {
		rs[i].want = rs[i].size;
		rs[i].want_gen = 1;
	}
	pthread_mutex_unlock(&b->mu);
	/* cluster: the pass's namespaces first (their ServiceAccount "default", which pod
	 * admission needs, comes from the serviceaccount controller under test) */
	ok = !cl || cluster_namespaces(b, runidx, true) == 0;
	if (ok) {
		pacer_start(p, b, n, o->create_rate, 8, do_obj_create, NULL);
		ok = wait_converged(b, run, p, W_OBJS, NULL, NULL);
	}
	phase_end(b, &pc, ok);
	if (ok && o->workload != BENCH_JOBS) {
		phase_begin(b, run,
		            o->workload == BENCH_DEPLOYMENTS ? "rollout"
		            : cl                             ? "churn"
		                                             : "update",
		            &pc);
		if (cl) {
			/* every Deployment rescaled to a random size in [1/2, 3/2] of its own
			 * (--seed), and --node-churn Nodes added: done when the rescaled
			 * Deployments and their EndpointSlices agree and every new Node has its pod
			 * CIDR and TTL annotation */
			unsigned seed = o->seed;
			pthread_mutex_lock(&b->mu);
			for (int i = 0; i < o->deployments && i < n; i++) {
				int lo = rs[i].size / 2 > 0 ? rs[i].size / 2 : 1,
				    hi = rs[i].size * 3 / 2;
				if (hi < lo)
					hi = lo;
				rs[i].want = lo + (int)(rand_r(&seed) % (unsigned)(hi - lo + 1));
			}
			b->churn_want = o->node_churn;
			pthread_mutex_unlock(&b->mu);
			churn_nodes(b, runidx, true);
		}
		pacer_start(p, b, n, o->create_rate, 8, do_obj_rollout, NULL);
		ok = wait_converged(b, run, p, W_OBJS, NULL, NULL);
		phase_end(b, &pc, ok);
	}
	phase_begin(b, run, "delete", &pc);
	want_all(b, rs, n, false);
	if (cl) {
		/* the churn Nodes and the pass's namespaces deleted: the namespace controller
		 * empties them (Deployments, ReplicaSets, pods, Services, EndpointSlices, Jobs,
		 * ServiceAccounts, ConfigMaps), the garbage collector follows owner references */
		churn_nodes(b, runidx, false);
		cluster_namespaces(b, runidx, false);
		ok = wait_converged(b, run, NULL, W_NONE, NULL, NULL) && ok;
	} else {
		pacer_start(p, b, n, o->create_rate, 8, do_obj_delete, NULL);
		ok = wait_converged(b, run, p, W_NONE, NULL, NULL) && ok;
	}
	phase_end(b, &pc, ok);
	free(p);
	goto out;

namespaces:
	/* create: the namespaces, then their objects as fast as 16 writers go, until every
	 * write is done and every pod is Ready; delete: every namespace at once, until every
	 * namespace is gone (the namespace controller empties each, its pods through their
	 * graceful deletion, which the simulator finishes) */
	phase_begin(b, run, "create", &pc);
	want_all(b, rs, n, true);
	pacer_start(p, b, n, 0, 16, do_ns_create, NULL);
	pacer_join(p);
	ok = atomic_load(&p->errors) == 0;
	if (ok) {
		pacer_start(p, b, n * o->ns_objects, 0, 16, do_ns_object, NULL);
		ok = wait_converged(b, run, p, W_PODS, NULL, NULL) && atomic_load(&p->errors) == 0;
	}
	phase_end(b, &pc, ok);
	phase_begin(b, run, "delete", &pc);
	want_all(b, rs, n, false);
	pacer_start(p, b, n, 0, 16, do_ns_delete, NULL);
	ok = wait_converged(b, run, p, W_NSGONE, NULL, NULL) && ok;
	phase_end(b, &pc, ok);
	free(p);
	goto out;

endpointslices:
	/* create: the Services, then their pods (16 writers, as fast as they go), until every
	 * Service's slices list exactly its pods, all ready; churn: churn_n pods of every
	 * Service deleted (grace 0) and replaced under new names, until the slices name only the
	 * new set again, all ready; delete: the Services and the pods, until no pod and no slice
	 * is left (the garbage collector deletes a Service's slices) */
	phase_begin(b, run, "create", &pc);
	pthread_mutex_lock(&b->mu);
	for (int i = 0; i < n; i++)
		rs[i].want = rs[i].size;
	b->churn_n = bench_churn_per_service(o);
	b->no_old = false;
	pthread_mutex_unlock(&b->mu);
	pacer_start(p, b, n, 0, 16, do_svc_create, NULL);
	pacer_join(p);
	ok = atomic_load(&p->errors) == 0;
	if (ok) {
		pacer_start(p, b, n * o->pods_per_service, 0, 16, do_es_pod, NULL);
		ok = wait_converged(b, run, p, W_SLICES, NULL, NULL) &&
		     atomic_load(&p->errors) == 0;
	}
	phase_end(b, &pc, ok);
	if (ok) {
		phase_begin(b, run, "churn", &pc);
		pthread_mutex_lock(&b->mu);
		b->no_old = true;
		pthread_mutex_unlock(&b->mu);
		pacer_start(p, b, n * b->churn_n, 0, 16, do_es_churn, NULL);
		ok = wait_converged(b, run, p, W_SLICES, NULL, NULL) &&
		     atomic_load(&p->errors) == 0;
		phase_end(b, &pc, ok);
	}
	phase_begin(b, run, "delete", &pc);
	want_all(b, rs, n, false);
	pacer_start(p, b, n, 0, 16, do_svc_delete, NULL);
	pacer_join(p);
	pacer_start(p, b, o->namespaces, 0, 8, do_es_pods_delete, NULL);
	ok = wait_converged(b, run, p, W_SLICESGONE, NULL, NULL) && ok;
	phase_end(b, &pc, ok);
	free(p);

out:
	sampler_stop(b, run);
	run->load_avg = load_avg();
	if (run->shards && r == 0) {
		shard_collect(b, run);
		if (run->shards >= 2)
			shard_failover(b, run);
	}
	if (upstream && direct)
		stop_kcm_direct(b);
	else if (upstream)
		stop_upstream(b);
	else
		stop_kcmds(b);
	if (!all_pods_gone(b, 5)) {
		say("pods of this pass remain: deleting them outright");
		force_cleanup(b);
		if (!all_pods_gone(b, 120))
			say("warning: bench pods still exist after the cleanup");
	}
	if (o->workload == BENCH_CLUSTER) {
		/* whatever is left of the pass (a phase that did not converge): its Nodes and
		 * namespaces, waited for so the next pass starts from an empty cluster */
		churn_nodes(b, runidx, false);
		cluster_namespaces(b, runidx, false);
		double end = now_s() + 300;
		for (;;) {
			long pods, ready, term, want;
			pthread_mutex_lock(&b->mu);
			bool gone = converged_locked(b, W_NONE, &pods, &ready, &term, &want);
			pthread_mutex_unlock(&b->mu);
			if (gone || now_s() > end || interrupted)
				break;
			sleep_s(0.5);
		}
	}
	pthread_mutex_lock(&b->mu);
	b->cur_run = -1;
	b->rs = NULL;
	b->n_rs = 0;
	b->ns_alive = b->node_alive = b->node_ok = NULL;
	b->churn_want = 0;
	pthread_mutex_unlock(&b->mu);
	free(rs);
	free(ns_alive);
	free(node_alive);
	free(node_ok);
	return r;
}

/* ---- raw apiserver write limit
 * ------------------------------------------------------------------------ */

static int raw_create(struct pacer *p, struct kube_client *kc, int i)
{
	char body[512];
	struct kube_response resp = {0};

	fmt(body, sizeof(body),
	    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"raw-%d\",\"labels\":{"
	    "\"kcmd-bench-raw\":\"1\"}},"
	    "\"spec\":{\"nodeName\":\"kcmd-bench-raw-node\",\"containers\":[{\"name\":\"c\","
	    "\"image\":\"registry.invalid/bench:1\"}]}}",
	    i);
	struct kube_request rq = {.verb = KUBE_CREATE,
	                          .version = "v1",
	                          .resource = "pods",
	                          .ns = RAW_NS,
	                          .body = body,
	                          .body_len = strlen(body)};
	int r = kube_client_request(kc, &rq, NULL, NULL, &resp);
	if (r < 0 && resp.http_code == 409)
		r = 0;
	(void)p;
	kube_response_clear(&resp);
	return r;
}

static int raw_delete(struct pacer *p, struct kube_client *kc, int i)
{
	char name[32];
	struct kube_response resp = {0};

	fmt(name, sizeof(name), "raw-%d", i);
	struct kube_request rq = {.verb = KUBE_DELETE,
	                          .version = "v1",
	                          .resource = "pods",
	                          .ns = RAW_NS,
	                          .name = name,
	                          .grace_period_seconds = 0,
	                          .has_grace_period = true};
	int r = kube_client_request(kc, &rq, NULL, NULL, &resp);
	if (r < 0 && resp.http_code == 404)
		r = 0;
	(void)p;
	kube_response_clear(&resp);
	return r;
}

static void raw_probe(struct bench *b)
{
	struct pacer *p = calloc(1, sizeof(*p));
	long n = b->o.raw_pods;

	b->rep.raw_pods = n;
	b->rep.raw_concurrency = b->o.raw_concurrency;
	if (!p || n <= 0 || n > INT_MAX || make_namespaces(b, RAW_NS) < 0) {
		free(p);
		return;
	}
	say("raw apiserver write limit: creating %ld pods, %d concurrent requests, no controller",
	    n, b->o.raw_concurrency);
	double t0 = now_s();
	pacer_start(p, b, (int)n, 0, b->o.raw_concurrency, raw_create, NULL);
	pacer_join(p);
	double t1 = now_s();
	int errs = atomic_load(&p->errors);
	b->rep.raw_create_per_s = (double)(n - errs) / (t1 - t0);
	pacer_start(p, b, (int)n, 0, b->o.raw_concurrency, raw_delete, NULL);
	pacer_join(p);
	double t2 = now_s();
	b->rep.raw_delete_per_s = (double)(n - atomic_load(&p->errors)) / (t2 - t1);
	say("  %.0f pods/s created (%d errors), %.0f pods/s deleted", b->rep.raw_create_per_s, errs,
	    b->rep.raw_delete_per_s);
	free(p);
}

/* ---- setup, teardown, report
 * ------------------------------------------------------------------------- */

static struct bench *the_bench;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void teardown(struct bench *b)
{
	stop_kcmds(b);
	stop_kcm_direct(b);
	if (b->kcm_pid)
		stop_upstream(b);
	if (b->sim_pid > 0) {
		stop_proc(b->sim_pid, 15);
		b->sim_pid = 0;
	}
	if (b->cluster_up) {
		say("tearing the test cluster down (%s)", b->cluster_dir);
		cluster(b, NULL, 0, "down", (char *)NULL);
		b->cluster_up = false;
	}
}

static int mkdirs(const char *path)
{
	char tmp[PATH_MAX];
	fmt(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(tmp, 0755);
			*p = '/';
		}
	return mkdir(tmp, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

static void describe_machine(struct bench *b)
{
	struct utsname u;
	char os[128] = "Linux", line[256];
	long mem_kb = 0;
	double load = 0;
	FILE *f;

	if ((f = fopen("/etc/os-release", "re"))) {
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "PRETTY_NAME=", 12)) {
				char *s = line + 12;
				s += *s == '"';
				s[strcspn(s, "\"\n")] = 0;
				fmt(os, sizeof(os), "%s", s);
			}
		fclose(f);
	}
	if ((f = fopen("/proc/meminfo", "re"))) {
		if (fscanf(f, "MemTotal: %ld kB", &mem_kb) != 1)
			mem_kb = 0;
		fclose(f);
	}
	if ((f = fopen("/proc/loadavg", "re"))) {
		if (fscanf(f, "%lf", &load) != 1)
			load = 0;
		fclose(f);
	}
	uname(&u);
	fmt(b->rep.machine, sizeof(b->rep.machine),
	    "%ld vCPU, %.0f GiB, %s, kernel %s, load average %.1f at the start",
	    sysconf(_SC_NPROCESSORS_ONLN), (double)mem_kb / 1048576.0, os, u.release, load);
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(b->rep.date, sizeof(b->rep.date), "%Y-%m-%d %H:%M UTC", &tm);
}

static void describe_versions(struct bench *b)
{
	struct kube_request rq = {.verb = KUBE_GET, .path = "/version"};
	struct kube_response resp = {0};
	const char *gv = NULL;
	cJSON *v = NULL;

	if (kube_client_request(b->kc, &rq, NULL, NULL, &resp) == 0 &&
	    (v = cJSON_ParseWithLength(resp.body, resp.body_len)))
		gv = jstr(v, "gitVersion", NULL, NULL);
	fmt(b->rep.versions, sizeof(b->rep.versions), "kcmd %s; kube-apiserver %s%s", KCMD_VERSION,
	    gv ? gv : "?",
	    b->o.compare_upstream ? "; kube-controller-manager of the same build (tests/cluster)"
	                          : "");
	cJSON_Delete(v);
	kube_response_clear(&resp);
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");
	if (!f)
		return -errno;
	fputs(text, f);
	return fclose(f) == 0 ? 0 : -EIO;
}

static void outputs(struct bench *b, const char *json_path)
{
	bool shards = b->o.n_shards > 0;
	char *json = shards ? bench_shards_json(&b->rep) : bench_report_json(&b->rep);
	if (json) {
		if (write_file(json_path, json) < 0)
			say("cannot write %s", json_path);
		else
			say("JSON: %s", json_path);
		free(json);
	}
	const char *wl = bench_workload_name(b->o.workload);
	fmt(b->rep.plot_script, sizeof(b->rep.plot_script), "%s/%s.gp", b->outdir, wl);
	fmt(b->rep.plot_pods, sizeof(b->rep.plot_pods), "%s/%s-pods", b->outdir, wl);
	fmt(b->rep.plot_memory, sizeof(b->rep.plot_memory), "%s/%s-memory", b->outdir, wl);
	FILE *f = fopen(b->rep.plot_script, "we");
	if (f) {
		bench_report_gnuplot(f, &b->rep);
		fclose(f);
	}
	if (b->o.plot && shards) {
		say("--plot: no plots for --shards (the tables say it)");
	} else if (b->o.plot) {
		char *argv[] = {"/usr/bin/gnuplot", b->rep.plot_script, NULL};
		if (access(argv[0], X_OK) < 0) {
			say("--plot: gnuplot is not installed (apt-get install gnuplot-nox); "
			    "script left at %s",
			    b->rep.plot_script);
		} else {
			char log[PATH_MAX + 32];
			fmt(log, sizeof(log), "%s/gnuplot.log", b->logdir);
			pid_t pid = spawn(argv, log, NULL);
			int st = pid > 0 ? wait_pid(pid, 120) : -1;
			if (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0)
				say("plots: %s.{png,svg}, %s.{png,svg}", b->rep.plot_pods,
				    b->rep.plot_memory);
			else
				say("gnuplot failed; see %s", log);
		}
	}
	if (shards) {
		bench_shards_table(stdout, &b->rep);
		fputc('\n', stdout);
		bench_shards_lines(stdout, &b->rep);
	} else {
		bench_report_table(stdout, &b->rep);
		fputc('\n', stdout);
		bench_report_lines(stdout, &b->rep);
	}
	fflush(stdout);
	if (b->o.update_doc) {
		char *md = NULL, *doc = NULL, *out = NULL;
		size_t mdlen = 0;
		FILE *m = open_memstream(&md, &mdlen);
		if (m) {
			if (shards)
				bench_shards_markdown(m, &b->rep);
			else
				bench_report_markdown(m, &b->rep);
			fclose(m);
		}
		FILE *d = fopen(b->o.update_doc, "re");
		if (d) {
			struct stat st;
			if (fstat(fileno(d), &st) == 0 &&
			    (doc = calloc(1, (size_t)st.st_size + 1)) &&
			    fread(doc, 1, (size_t)st.st_size, d) != (size_t)st.st_size) {
				free(doc);
				doc = NULL;
			}
			fclose(d);
		}
		const char *tag = shards ? "shards"
		                  : bench_workload_objects(b->o.workload) ||
		                                  bench_workload_issue17(b->o.workload) ||
		                                  b->o.workload == BENCH_NODEFAILURE
		                          ? bench_workload_name(b->o.workload)
		                          : NULL;
		if (md && doc && bench_doc_splice_tag(doc, md, tag, &out) == 0 &&
		    write_file(b->o.update_doc, out) == 0)
			say("updated %s", b->o.update_doc);
		else
			say("could not update %s", b->o.update_doc);
		free(md);
		free(doc);
		free(out);
	}
}

/* The markdown's workload sentence for deployments, jobs, daemonsets. */
static void describe_workload(struct bench *b)
{
	const struct bench_opts *o = &b->o;
	char what[1536];
	switch (o->workload) {
	case BENCH_DEPLOYMENTS:
		fmt(what, sizeof(what),
		    "%d Deployments × %d replicas (%ld pods) over %d namespaces, created at %g/s; "
		    "`create` until every Deployment is complete (observedGeneration current, "
		    "updated = ready = available = replicas, the driver's pod watch agrees); "
		    "`rollout`: a pod-template annotation changed on every Deployment, until every "
		    "one is complete again with its old ReplicaSet at 0; `delete` (background "
		    "propagation) until every pod is gone. Controllers: deployment, replicaset, "
		    "garbage collector.",
		    o->deployments, o->replicas, o->target_pods, o->namespaces, o->create_rate);
		break;
	case BENCH_JOBS:
		fmt(what, sizeof(what),
		    "%d Jobs (completions %d, parallelism %d; %ld completions in all) over %d "
		    "namespaces, created at %g/s; `run` until every Job has the Complete "
		    "condition (pods finished Succeeded by the simulator); `delete` (background "
		    "propagation) until every pod is gone. Controllers: job, garbage collector.",
		    bench_object_count(o), o->job_completions, o->parallelism, o->completions,
		    o->namespaces, o->create_rate);
		break;
	case BENCH_DAEMONSETS:
		fmt(what, sizeof(what),
		    "%d DaemonSet(s) over %d simulated nodes (the simulator's Nodes and Leases; "
		    "the driver binds each DaemonSet pod to the node of its affinity, as "
		    "kube-scheduler would); `create` until numberReady = numberAvailable = "
		    "updatedNumberScheduled = desiredNumberScheduled = nodes; `update`: a "
		    "pod-template annotation changed (RollingUpdate, maxUnavailable 10%%) until "
		    "the same holds again; `delete` until every pod is gone. Controllers: "
		    "daemonset, garbage collector.",
		    o->daemonsets, o->nodes);
		break;
	case BENCH_NAMESPACES:
		fmt(what, sizeof(what),
		    "%d namespaces × %d objects (%d ConfigMaps, %d Secrets, %d headless Services "
		    "and %d pods each; %ld pods in all), written by 16 driver threads as fast as "
		    "the apiserver takes them; `create` until every write is done and every pod "
		    "is Ready (the driver's load, the same for both); `delete`: every namespace "
		    "deleted at once, until every namespace is gone (its pods deleted gracefully "
		    "and finished by the simulator). Controller: namespace.",
		    o->namespaces, o->ns_objects, o->ns_objects * 3 / 10,
		    o->ns_objects * 6 / 10 - o->ns_objects * 3 / 10,
		    o->ns_objects - o->ns_objects / 5 - o->ns_objects * 6 / 10, o->ns_objects / 5,
		    o->target_pods);
		break;
	case BENCH_ENDPOINTSLICES:
		fmt(what, sizeof(what),
		    "%d headless Services × %d pods (%ld pods) over %d namespaces, written by 16 "
		    "driver threads as fast as the apiserver takes them; `create` until every "
		    "Service's EndpointSlices list exactly its pods, all ready; `churn`: %d pods "
		    "of every Service deleted (grace 0) and replaced by new ones, until the slices "
		    "list only the new set, all ready; `delete`: the Services and the pods, until "
		    "no pod and no slice is left. Controllers: endpointslice, endpoints (kcm runs "
		    "both by default), garbage collector (a deleted Service's slices).",
		    o->services, o->pods_per_service, o->target_pods, o->namespaces,
		    bench_churn_per_service(o));
		break;
	case BENCH_CLUSTER:
		fmt(what, sizeof(what),
		    "every controller (`--controllers=*,bootstrapsigner,tokencleaner` and "
		    "kubeadm's flags on both), a clusterloader2-\"load\"-shaped mix: per pass %d "
		    "new namespaces holding %d Deployments × %d replicas, each with a Service, and "
		    "%d Jobs (%ld completions in Jobs of %d), over %d simulated nodes; `create` "
		    "until every Deployment is complete with its EndpointSlices listing exactly "
		    "its Ready pods and every Job Complete; `churn`: every Deployment rescaled to "
		    "a random size in [½, 1½] of its own and %d Nodes added, until the "
		    "Deployments and EndpointSlices agree again and every new Node has a pod CIDR "
		    "and its TTL annotation; `delete`: the Nodes and the namespaces deleted, until "
		    "every namespace, Node and pod is gone.",
		    o->namespaces, o->deployments, o->replicas, bench_job_count(o), o->completions,
		    o->job_completions, o->nodes, o->node_churn);
		break;
	case BENCH_NODEFAILURE:
		fmt(b->rep.desc, sizeof(b->rep.desc),
		    "Workload: %d Nodes in %d zones (`topology.kubernetes.io/zone`), Leases in "
		    "`kube-node-lease` renewed by the driver in rounds every %g s, %d bare pods "
		    "per "
		    "node (%ld in all; bound, Running and Ready, tolerating the unreachable and "
		    "not-ready NoExecute taints for %ld s), all created before the controller "
		    "manager starts. `steady`: start-up and %g s in which nothing may be tainted "
		    "or evicted; `failure`: the Leases of %d zone(s) (%d nodes) no longer renewed "
		    "from T0, the end of the last round that renewed them, until every one of "
		    "their "
		    "nodes has the `node.kubernetes.io/unreachable:NoExecute` taint and every pod "
		    "on them a deletionTimestamp. Times are the driver's watch events minus T0. "
		    "kcm's flags on both: `--node-eviction-rate=%g "
		    "--secondary-node-eviction-rate=%g --node-monitor-grace-period=%gs` (kcm's "
		    "defaults 0.1, 0.01, 50s; at 0.1 a zone of 100 nodes takes 1,000 s), "
		    "`--controllers=node-lifecycle-controller,taint-eviction-controller`, "
		    "`--kube-api-qps=%g --kube-api-burst=%d`. No kubelet simulator. Memory: kcmd = "
		    "PSS summed over the manager and all its processes; upstream = RSS.",
		    o->nodes, o->zones, o->lease_renew_s, o->pods_per_node, o->target_pods,
		    o->toleration_s, NF_STEADY_S, o->failed_zones,
		    o->nodes / o->zones * o->failed_zones + (o->nodes % o->zones < o->failed_zones
		                                                     ? o->nodes % o->zones
		                                                     : o->failed_zones),
		    o->node_eviction_rate, o->secondary_rate, o->monitor_grace_s, o->qps, o->burst);
		return;
	default:
		return;
	}
	fmt(b->rep.desc, sizeof(b->rep.desc),
	    "Workload: %s Both controller managers at `--kube-api-qps=%g --kube-api-burst=%d`; "
	    "pods made Ready by `kcmd --simulate-kubelet` in both runs. Memory: kcmd = PSS "
	    "summed over the manager and all its processes; upstream = RSS.",
	    what, o->qps, o->burst);
}

static int find_cluster_cmd(struct bench *b)
{
	if (b->o.cluster_cmd) {
		fmt(b->cluster_cmd, sizeof(b->cluster_cmd), "%s", b->o.cluster_cmd);
	} else {
		/* build tree: <top>/<build dir>/bin/kcmd -> <top>/tests/cluster/cluster */
		char dir[PATH_MAX];
		fmt(dir, sizeof(dir), "%s", b->kcmd);
		for (int up = 0; up < 3; up++) {
			char *s = strrchr(dir, '/');
			if (s)
				*s = 0;
		}
		fmt(b->cluster_cmd, sizeof(b->cluster_cmd), "%s/tests/cluster/cluster", dir);
	}
	if (access(b->cluster_cmd, X_OK) < 0) {
		say("the test cluster command %s is not there (run from a source tree, or give "
		    "--cluster-cmd or --kubeconfig)",
		    b->cluster_cmd);
		return -ENOENT;
	}
	return 0;
}

static int start_simulator(struct bench *b)
{
	char a_kc[PATH_MAX + 16], log[PATH_MAX + 32], extra[1024] = "", a_nodes[64];
	char *argv[40] = {b->kcmd,
	                  a_kc,
	                  "--leader-elect=false",
	                  "--controllers=-replicaset-controller,-garbage-collector-controller,"
	                  "-pod-garbage-collector-controller,-job-controller",
	                  "--simulate-kubelet",
	                  "--simulate-kubelet-qps=5000",
	                  "--simulate-kubelet-burst=10000",
	                  "--secure-port=0",
	                  NULL};
	int argc = 8;

	fmt(a_kc, sizeof(a_kc), "--kubeconfig=%s", b->kubeconfig);
	if (b->o.nodes > 0) {
		fmt(a_nodes, sizeof(a_nodes), "--simulate-kubelet-nodes=%d", b->o.nodes);
		argv[argc++] = a_nodes;
	}
	if (b->o.sim_args) {
		fmt(extra, sizeof(extra), "%s", b->o.sim_args);
		for (char *save, *t = strtok_r(extra, " ", &save); t && argc < 38;
		     t = strtok_r(NULL, " ", &save))
			argv[argc++] = t;
	}
	argv[argc] = NULL;
	fmt(log, sizeof(log), "%s/simulator.log", b->logdir);
	b->sim_pid = spawn(argv, log, NULL);
	if (b->sim_pid < 0)
		return (int)b->sim_pid;
	double end = now_s() + 90;
	while (now_s() < end && !interrupted) {
		if (file_has(log, "nodes ready")) {
			say("kubelet simulator ready (pid %d, log %s)", (int)b->sim_pid, log);
			return 0;
		}
		if (waitpid(b->sim_pid, NULL, WNOHANG) == b->sim_pid) {
			b->sim_pid = 0;
			say("the kubelet simulator exited; see %s", log);
			return -ECHILD;
		}
		sleep_s(0.25);
	}
	say("the kubelet simulator did not report its nodes ready in 90 s; see %s", log);
	return -ETIMEDOUT;
}

int kcmd_bench_main(int argc, char **argv)
{
	struct bench *b = calloc(1, sizeof(*b));
	char err[512];
	int rc = 1;

	if (!b)
		return 1;
	the_bench = b;
	bench_opts_defaults(&b->o);
	if (bench_opts_parse(&b->o, argc, argv, err, sizeof(err)) < 0) {
		fprintf(stderr, "kcmd bench: %s\n", err);
		return 2;
	}
	if (b->o.help) {
		bench_opts_usage(stdout);
		return 0;
	}
	pthread_mutex_init(&b->mu, NULL);
	pthread_mutex_init(&b->smu, NULL);
	pthread_cond_init(&b->bind_cv, NULL);
	b->cur_run = -1;
	b->queue_now = NAN;
	b->rep.raw_create_per_s = b->rep.raw_delete_per_s = NAN;
	fmt(b->rep.workload, sizeof(b->rep.workload), "%s", bench_workload_name(b->o.workload));
	b->rep.target_pods = b->o.target_pods;
	b->rep.namespaces = b->o.namespaces;
	b->rep.create_rate = b->o.create_rate;
	b->rep.shard_ranges = b->o.shard_ranges;
	b->rep.lease_duration_s = b->o.lease_duration_s;
	describe_workload(b);
	size_t cl = 0;
	cl += (size_t)fmt(b->rep.command, sizeof(b->rep.command), "kcmd bench");
	for (int i = 1; i < argc && cl < sizeof(b->rep.command); i++)
		cl += (size_t)fmt(b->rep.command + cl, sizeof(b->rep.command) - cl, " %s", argv[i]);

	const char *self = getenv("KCMD_BENCH_KCMD");
	if (self && *self) {
		fmt(b->kcmd, sizeof(b->kcmd), "%s", self);
	} else {
		ssize_t n = readlink("/proc/self/exe", b->kcmd, sizeof(b->kcmd) - 16);
		if (n <= 0)
			return 1;
		b->kcmd[n] = 0;
		char *s = strrchr(b->kcmd, '/');
		fmt(s + 1, sizeof(b->kcmd) - (size_t)(s + 1 - b->kcmd), "kcmd");
	}
	/* output paths */
	char json_path[PATH_MAX];
	if (b->o.output)
		fmt(json_path, sizeof(json_path), "%s", b->o.output);
	else
		fmt(json_path, sizeof(json_path), "build/bench/%s.json",
		    bench_workload_name(b->o.workload));
	fmt(b->outdir, sizeof(b->outdir), "%s", json_path);
	char *sl = strrchr(b->outdir, '/');
	if (sl)
		*sl = 0;
	else
		fmt(b->outdir, sizeof(b->outdir), ".");
	fmt(b->logdir, sizeof(b->logdir), "%s/%s-logs", b->outdir,
	    bench_workload_name(b->o.workload));
	if (mkdirs(b->logdir) < 0) {
		fprintf(stderr, "kcmd bench: cannot create %s: %s\n", b->logdir, strerror(errno));
		return 1;
	}
	describe_machine(b);

	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	curl_global_init(CURL_GLOBAL_DEFAULT);

	if (!b->o.kubeconfig) {
		if (find_cluster_cmd(b) < 0)
			return 1;
		fmt(b->cluster_dir, sizeof(b->cluster_dir), "/tmp/kcmd-bench-cluster-%d",
		    (int)getpid());
		say("bringing up the test cluster in %s (log %s/cluster.log)", b->cluster_dir,
		    b->logdir);
		if (cluster(b, NULL, 0, "up", (char *)NULL) < 0) {
			say("cluster up failed; see %s/cluster.log", b->logdir);
			cluster(b, NULL, 0, "down", (char *)NULL);
			return 1;
		}
		b->cluster_up = true;
		fmt(b->kubeconfig, sizeof(b->kubeconfig), "%s/kubeconfig", b->cluster_dir);
	} else {
		fmt(b->kubeconfig, sizeof(b->kubeconfig), "%s", b->o.kubeconfig);
	}

	struct kube_config_opts co = {.kubeconfig = b->kubeconfig};
	if (kube_config_load(&co, &b->kcfg, err, sizeof(err)) < 0 ||
	    new_client(b, &b->kc, 0, 1) < 0) {
		say("kubeconfig %s: %s", b->kubeconfig, err);
		goto out;
	}
	describe_versions(b);
	/* namespaces: each pass makes (and deletes) its own */
	if (b->o.workload != BENCH_NAMESPACES && make_namespaces(b, NULL) < 0)
		goto out;

	/* the raw write limit first, on the idle cluster, before the simulator caches anything */
	if (b->o.raw_pods > 0)
		raw_probe(b);
	if (interrupted)
		goto out;

	struct watcher wp = {
	        .b = b, .group = NULL, .resource = "pods", .on_obj = on_pod, .pods = true};
	struct watcher wr = {.b = b, .group = "apps", .resource = "replicasets", .on_obj = on_rs};
	if (bench_workload_objects(b->o.workload)) {
		wr.on_obj = on_wobj;
		wr.group = b->o.workload == BENCH_JOBS ? "batch" : "apps";
		wr.resource = b->o.workload == BENCH_DEPLOYMENTS ? "deployments"
		              : b->o.workload == BENCH_JOBS      ? "jobs"
		              : b->o.workload == BENCH_CLUSTER   ? "deployments"
		                                                 : "daemonsets";
	}
	if (b->o.workload == BENCH_NAMESPACES) {
		wr.on_obj = on_ns;
		wr.reset = reset_ns;
		wr.group = NULL;
		wr.resource = "namespaces";
	} else if (b->o.workload == BENCH_ENDPOINTSLICES) {
		wr.on_obj = on_slice;
		wr.reset = reset_slices;
		wr.group = "discovery.k8s.io";
		wr.resource = "endpointslices";
	}
	if (b->o.workload == BENCH_NODEFAILURE) {
		nf.nodes = calloc((size_t)b->o.nodes, sizeof(*nf.nodes));
		nf.pods = calloc((size_t)b->o.target_pods + 1, sizeof(*nf.pods));
		if (!nf.nodes || !nf.pods)
			goto out;
		wp.on_obj = on_nf_pod;
		wp.pods = false;
		wp.reset = reset_nf_pods;
		wr = (struct watcher){
		        .b = b, .resource = "nodes", .on_obj = on_nf_node, .reset = reset_nf_nodes};
		nf_start_renewers(b);
	}
	/* cluster: its Jobs, its Services' EndpointSlices, its namespaces and churn Nodes */
	static struct watcher wcl[4];
	wcl[0] = (struct watcher){.b = b, .group = "batch", .resource = "jobs", .on_obj = on_wobj};
	wcl[1] = (struct watcher){.b = b,
	                          .group = "discovery.k8s.io",
	                          .resource = "endpointslices",
	                          .on_obj = on_eps,
	                          .reset = reset_eps,
	                          .selector = "kubernetes.io/service-name"};
	wcl[2] = (struct watcher){.b = b,
	                          .resource = "namespaces",
	                          .on_obj = on_cluster_ns,
	                          .reset = reset_cluster_ns};
	wcl[3] = (struct watcher){
	        .b = b, .resource = "nodes", .on_obj = on_node, .reset = reset_nodes};
	for (int i = 0; b->o.workload == BENCH_CLUSTER && i < 4; i++) {
		pthread_t th;
		if (pthread_create(&th, NULL, watch_thread, &wcl[i]) == 0)
			pthread_detach(th);
	}
	for (int i = 0; b->o.workload == BENCH_DAEMONSETS && i < 8; i++) {
		pthread_t th;
		if (pthread_create(&th, NULL, binder_thread, b) == 0)
			pthread_detach(th);
	}
	if (pthread_create(&b->wpods, NULL, watch_thread, &wp) ||
	    pthread_create(&b->wrs, NULL, watch_thread, &wr) ||
	    pthread_create(&b->sampler, NULL, sampler_thread, b)) {
		say("cannot start threads");
		goto out;
	}
	if (b->o.simulate_kubelet && start_simulator(b) < 0)
		goto out;
	if (!b->o.simulate_kubelet)
		say("no kubelet simulator: pods become Ready only if real nodes run them");

	bool compare = b->o.compare_upstream;
	if (compare &&
	    (b->o.workload == BENCH_FAILOVER || b->o.workload == BENCH_RESTART ||
	     b->o.workload == BENCH_CLUSTER || b->o.workload == BENCH_NODEFAILURE) &&
	    find_kcm_bin(b) < 0) {
		say("note: kube-controller-manager not found through tests/cluster/build.sh: %s "
		    "runs kcmd only",
		    bench_workload_name(b->o.workload));
		compare = false;
	}
	int runidx = 0;
	if (b->o.n_shards) {
		/* one pass per --shards entry, then upstream kcm alone as the reference row */
		for (int i = 0; i < b->o.n_shards && !interrupted; i++) {
			b->shard_n = b->o.shards[i];
			run_pass(b, runidx++, false, false);
		}
		b->shard_n = 0;
		if (compare && !interrupted)
			run_pass(b, runidx++, true, false);
		goto report;
	}
	if (b->o.workload == BENCH_NODEFAILURE) {
		/* leftovers of an interrupted run first (the pass waits for an empty view) */
		nf_cleanup(b);
		run_nodefail_pass(b, runidx++, false, !compare);
		if (compare && !interrupted)
			run_nodefail_pass(b, runidx++, true, true);
		goto report;
	}
	for (int lim = 0; lim < (b->o.unlimited ? 2 : 1) && !interrupted; lim++) {
		run_pass(b, runidx++, false, lim == 1);
		if (compare && !interrupted)
			run_pass(b, runidx++, true, lim == 1);
	}
report:
	outputs(b, json_path);
	rc = 0;
	for (unsigned i = 0; i < b->rep.n_runs; i++)
		if (b->rep.runs[i].error[0])
			rc = 1;
	if (interrupted)
		rc = 130;
out:
	teardown(b);
	say("logs: %s", b->logdir);
	/* the watch and sampler threads are blocked in requests; exit without joining them */
	fflush(NULL);
	_exit(rc);
}
