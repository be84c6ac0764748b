/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manager/main.c: `kcmd`, the process systemd starts.
 *
 * It parses kube-controller-manager's flags, creates the shared memory (the arena and one work
 * queue per controller queue), starts informerd (at once with --standby-warm-cache, else when
 * leading) and, while it leads, the worker processes; runs leader election over a Lease; serves
 * /healthz /livez /readyz /metrics; talks to systemd (READY, STATUS, WATCHDOG, STOPPING); and on
 * SIGTERM stops the workers, releases the Lease, stops informerd and exits 0.
 *
 * Design choices:
 * - Fencing: workers are SIGKILLed the instant the elector's fence deadline passes (see
 *   manager/leader.h), before any other candidate may take over. The manager never exits on lost
 *   leadership (kcm does); it goes back to being a candidate.
 * - Worker processes: one process per parallel sync for the ReplicaSet controller
 *   (--concurrent-replicaset-syncs keeps upstream's meaning: that many keys in progress at once).
 * - With no controller enabled kcmd runs leader election and its endpoints only (used by tests
 *   and by operators checking a deployment before switching controllers over).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "lib/infmetrics.h"
#include "ipc/loop.h"
#include "ipc/queue.h"
#include "ipc/journal.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/restmetrics.h"
#include "controllers/kcm-compat.h"
#include "controllers/registry.h"
#include "manager/flags.h"
#include "manager/httpd.h"
#include "lib/kube-loop.h"
#include "manager/lease-client.h"
#include "manager/shard.h"
#include "lib/log.h"
#include "manager/metrics.h"
#include "manager/sa-tokens.h"
#include "manager/status.h"
#include "manager/supervisor.h"
#include "manager/termend.h"
#include "shm/arena.h"
#include "shm/feed.h"
#include "kube/fence.h"
#include "kube/limiter.h"
#include "lib/ctlhost.h"
#include "lib/ctlmetrics.h"
#include "lib/goflag.h"

#define STOP_GRACE_USEC 5000000ull

struct queue {
	const struct kcmd_queue *q;
	size_t ctl; /* index of its controller in cfg.ctl */
	int fd;
	int journal_fd; /* its durable keys (ipc/journal.h), for its owner, the dispatcher; -1 none
	                 */
};

struct mgr;

/* What the manager holds for one registered controller (enabled or not). */
struct ctl_rt {
	struct mgr *m;
	const struct kcmd_controller *c;
	bool on;
	void *state;             /* its mgr_setup's */
	struct kcmd_mgr_env env; /* fds it exports to its processes */
	int client_bucket_fd;    /* the token bucket its processes' API clients share */
	int sa_token_fd;         /* --use-service-account-credentials: its token memfd, or -1 */
	/* its worker processes; pool[1..] start on demand (--worker-idle-timeout, worker_pool) */
	struct mgr_child **pool;
	int n_pool;
	unsigned backlog_ticks; /* consecutive pool ticks with keys waiting */
	/* a pool start failed (fork, exec): no further one before grow_after, the wait doubling
	 * from 1 s to 30 s, back to none once a start works */
	uint64_t grow_after, grow_backoff;
	uint64_t idle_since; /* monotonic µs since its queues have been empty and idle, or 0 */
	/* its declared metrics (kcmd/controller.h `metrics`): the region it updates, passed as
	 * KCMD_METRICS_FD, or -1; mapped read-only here for /metrics */
	int metrics_fd;
	struct kcmd_metrics *metrics;
};

struct debug_route {
	struct mgr *m;
	const struct kcmd_debug_endpoint *ep;
};

/* A metadata-only informer (discovered for the garbage collector) that has not synced this long
 * stops holding readiness back: upstream's GC waits as long for its monitors, then proceeds, and
 * no other controller waits for them (a CRD whose conversion webhook is broken, a version no
 * longer served, must not keep kcmd from READY=1 forever). */
#define META_SYNC_GRACE_USEC 30000000ull

struct unsynced { /* per arena type id: since when it is seen not synced */
	uint32_t gen;
	uint64_t since;
	bool warned;
};

struct mgr {
	struct unsynced *unsynced; /* by arena type id (informer_synced) */
	size_t n_unsynced;
	struct mgr_config cfg;
	struct ipc_loop *loop;
	struct kube_config *kcfg;
	struct kube_client *kc;
	struct kube_loop *kl;
	struct mgr_supervisor *sup;
	struct mgr_lease_client *lc; /* the leader Lease, or with --shard-ranges the member Lease */
	struct mgr_shard *shard;     /* --shard-ranges: the range Leases (manager/shard.h) */
	char member_lease[256];      /* --shard-ranges: <lease-name>-member-<identity> */
	bool test_shard_all; /* KCMD_TEST_SHARD_IGNORE_FENCE=1: the shard e2e's negative control */
	struct mgr_term_end *term_end; /* LeaderElection events wait for the old term's workers */
	struct mgr_httpd *httpd;
	struct ipc_source *sig_term, *sig_int, *watchdog, *stop_timer;
	char identity[MGR_LE_IDENTITY_MAX];
	char libexec[PATH_MAX + 32];
	int arena_fd, arena_ro_fd, inf_metrics_fd;
	int feed_fd, feed_consumer_fd; /* the change feed: informerd writes, dispatchers read */
	int fence_fd; /* the leadership deadline every writing child checks (kube/fence.h) */
	struct kube_fence *fence;
	uint32_t epoch;     /* the last leadership epoch published in the fence (F5); random base */
	bool test_unfenced; /* KCMD_TEST_UNFENCED=1: the fence e2e test's negative control only */
	bool test_no_barrier; /* KCMD_TEST_NO_BARRIER=1: the barrier e2e test's negative control */
	struct ctl_rt *ctl;   /* cfg.n_ctl entries, in registry order */
	struct debug_route *routes;
	int rest_metrics_fd;             /* rest_client_* of every process (kube/restmetrics.h) */
	struct mgr_sa_tokens *sa_tokens; /* --use-service-account-credentials */
	struct mgr_status_page *status;  /* what kcmctl status reads (manager/status.h) */
	int status_fd;
	struct ipc_source *status_timer, *pool_timer;
	int64_t started_unix_usec;
	const struct inf_metrics_hdr *inf_metrics; /* informerd's counters, read-only */
	struct queue *queues;
	unsigned n_queues;
	bool leading, stopping, released, release_started, ready_sent, any_controller;
	uint64_t watchdog_usec;
};

static int64_t unix_usec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Copies the election state and the process table where kcmctl status reads them. */
static void publish_status(struct mgr *m)
{
	static struct mgr_status st;
	struct mgr_child *c;
	int64_t now = unix_usec();
	uint64_t mono = ipc_now_usec();

	if (!m->status)
		return;
	memset(&st, 0, sizeof(st));
	snprintf(st.identity, sizeof(st.identity), "%s", m->identity);
	snprintf(st.lease, sizeof(st.lease), "%.63s/%.253s", m->cfg.leader_elect_resource_namespace,
	         m->member_lease[0] ? m->member_lease : m->cfg.leader_elect_resource_name);
	st.lease_transitions = -1;
	if (m->lc) {
		snprintf(st.holder, sizeof(st.holder), "%s",
		         mgr_le_observed_holder(mgr_lease_client_elector(m->lc)));
		st.lease_transitions = mgr_le_observed_transitions(mgr_lease_client_elector(m->lc));
	} else if (m->leading)
		snprintf(st.holder, sizeof(st.holder), "%s", m->identity);
	st.leader_elect = m->cfg.leader_elect;
	st.leading = m->leading;
	st.stopping = m->stopping;
	st.ready = m->ready_sent;
	st.manager_pid = (int32_t)getpid();
	st.manager_started_unix_usec = m->started_unix_usec;
	st.updated_unix_usec = now;
	for (unsigned i = 0;
	     m->sup && (c = mgr_sup_child(m->sup, i)) && i < MGR_STATUS_MAX_CHILDREN; i++) {
		struct mgr_child_info info;
		struct mgr_status_child *sc = &st.children[st.n_children++];
		mgr_child_get_info(c, &info);
		snprintf(sc->name, sizeof(sc->name), "%s", info.name);
		snprintf(sc->group, sizeof(sc->group), "%s", info.group);
		sc->pid = info.pid;
		sc->state = (int32_t)info.state;
		sc->restarts = info.restarts;
		sc->started_unix_usec =
		        info.started_usec ? now - (int64_t)(mono - info.started_usec) : 0;
		sc->last_code = info.last_code;
		sc->last_status = info.last_status;
		sc->crash_looping = info.crash_looping;
	}
	if (m->shard) {
		struct mgr_shard_view v;
		mgr_shard_view(m->shard, &v);
		st.shard_ranges = v.nranges;
		for (size_t i = 0; i < v.n_members && i < MGR_STATUS_MAX_MEMBERS; i++)
			snprintf(st.members[st.n_members++], sizeof(st.members[0]), "%s",
			         v.members[i]);
		for (unsigned i = 0; i < v.nranges && i < MGR_STATUS_MAX_RANGES; i++) {
			const char *h = mgr_shard_holder(m->shard, i);
			st.range_holder[i] = h[0] ? -2 : -1;
			for (uint32_t k = 0; h[0] && k < st.n_members; k++)
				if (!strcmp(st.members[k], h))
					st.range_holder[i] = (int16_t)k;
			st.range_owned[i] = mgr_shard_owns(m->shard, i);
		}
	} else if (m->test_shard_all) {
		st.shard_ranges = (uint32_t)m->cfg.shard_ranges;
		for (unsigned i = 0; i < st.shard_ranges && i < MGR_STATUS_MAX_RANGES; i++) {
			st.range_holder[i] = -1;
			st.range_owned[i] = m->leading;
		}
	}
	mgr_status_publish(m->status, &st);
}

static int on_status_timer(struct ipc_source *s, uint64_t now, void *ud)
{
	publish_status(ud);
	return ipc_source_set_time(s, now + 1000000);
}

static void notify_status(struct mgr *m)
{
	char st[256];
	unsigned running = m->sup ? mgr_sup_running(m->sup, NULL) : 0;

	snprintf(st, sizeof(st), "STATUS=%s; %u child process%s running",
	         m->stopping  ? "stopping"
	         : m->leading ? "leading"
	                      : "standby",
	         running, running == 1 ? "" : "es");
	sd_notify(0, st);
	publish_status(m);
}

static void on_any_exit(struct mgr_child *c, const struct mgr_child_info *info, void *ud);

/* ---- identity and paths ------------------------------------------------------------------- */

static int make_identity(char *buf, size_t n)
{
	char host[256] = "localhost", uuid[64] = "";
	FILE *f = fopen("/proc/sys/kernel/random/uuid", "re");

	gethostname(host, sizeof(host) - 1);
	if (!f || !fgets(uuid, sizeof(uuid), f)) {
		if (f)
			fclose(f);
		return -EIO;
	}
	fclose(f);
	uuid[strcspn(uuid, "\n")] = 0;
	snprintf(buf, n, "%s_%s", host, uuid);
	return 0;
}

static void find_libexec(struct mgr *m)
{
	char self[PATH_MAX];
	ssize_t n;

	if (m->cfg.libexec_dir) {
		snprintf(m->libexec, sizeof(m->libexec), "%s", m->cfg.libexec_dir);
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		snprintf(m->libexec, sizeof(m->libexec), "/usr/libexec/kcmd");
		return;
	}
	self[n] = 0;
	*strrchr(self, '/') = 0;
	/* Installed layout: /usr/bin/kcmd + /usr/libexec/kcmd/; build tree: everything in
	 * build/bin. */
	char cand[PATH_MAX + 32];
	snprintf(cand, sizeof(cand), "%s/kcmd-informerd", self);
	if (access(cand, X_OK) == 0)
		snprintf(m->libexec, sizeof(m->libexec), "%s", self);
	else
		snprintf(m->libexec, sizeof(m->libexec), "%s/../libexec/kcmd", self);
}

/* ---- children ------------------------------------------------------------------------------- */

static void on_child_exit(struct mgr_child *c, const struct mgr_child_info *info, void *ud)
{
	struct mgr *m = ud;

	(void)c;
	if (info->last_code == CLD_EXITED && info->last_status == 0 &&
	    info->state == MGR_CHILD_STOPPED)
		log_info("%s (%s) stopped", info->name, info->group);
	else if (info->last_code == CLD_EXITED)
		log_warning("%s (%s) exited with status %d%s", info->name, info->group,
		            info->last_status,
		            info->state == MGR_CHILD_BACKOFF ? "; restarting" : "");
	else
		log_warning("%s (%s) killed by signal %d%s", info->name, info->group,
		            info->last_status,
		            info->state == MGR_CHILD_BACKOFF ? "; restarting" : "");
	if (info->crash_looping)
		log_error("%s is crash-looping (5 exits within 60 s)", info->name);
	notify_status(m);
}

/* Environment variables the manager sets for a child: never inherited from its own environment. */
/* var=name:fd[,name:fd...] for ctl's queues (journal: their journals; none for ctl NULL), each
 * fd appended to fds. 0, -ENOMEM, -E2BIG. */
static int queue_fds_env(const struct mgr *m, const struct ctl_rt *ctl, const char *var,
                         bool journal, char **ret, int *fds, int *nfds)
{
	size_t len, empty;
	if (!(*ret = calloc(1, 32 + (size_t)m->n_queues * 96)))
		return -ENOMEM;
	len = empty = (size_t)sprintf(*ret, "%s=", var);
	for (unsigned i = 0; ctl && i < m->n_queues; i++) {
		int fd = journal ? m->queues[i].journal_fd : m->queues[i].fd;
		if (&m->ctl[m->queues[i].ctl] != ctl || fd < 0)
			continue;
		if (*nfds >= MGR_CHILD_MAX_FDS - 8)
			return -E2BIG;
		len += (size_t)sprintf(*ret + len, "%s%s:%d", len > empty ? "," : "",
		                       m->queues[i].q->name, fd);
		fds[(*nfds)++] = fd;
	}
	return 0;
}

static bool manager_env(const char *e)
{
	const char *eq = strchr(e, '=');
	size_t n = eq ? (size_t)(eq - e) : strlen(e);

	if (!strncmp(e, "NOTIFY_SOCKET=", 14) || !strncmp(e, "KCMD_QUEUE_FDS=", 15) ||
	    !strncmp(e, "KCMD_JOURNAL_FDS=", 17) || !strncmp(e, "KCMD_PROCESS=", 13))
		return true;
	return !strncmp(e, "KCMD_", 5) && n > 3 && !strncmp(e + n - 3, "_FD", 3);
}

enum role {
	ROLE_INFORMERD,  /* the arena's and the change feed's writer */
	ROLE_DISPATCHER, /* one controller's handlers over the feed; owns its queues */
	ROLE_WORKER,     /* one controller's syncs */
};

/* ctl: the controller of a dispatcher or worker, NULL for informerd. */
static int add_child(struct mgr *m, const char *name, const char *group, const char *prog,
                     enum role role, const struct ctl_rt *ctl, bool on_demand,
                     struct mgr_child **ret)
{
	const bool writer = role == ROLE_INFORMERD;
	size_t nflags = ctl ? ctl->c->n_flags : 0, cap_env = 64;
	char path[PATH_MAX + 64],
	        kubeconfig[PATH_MAX + 16] = "", master[1024] = "", qps[64], burst[64], v[32],
	                              ctrl[160] = "", env_arena[48], env_proc[160],
	                              env_imet[64] = "", env_rm[48] = "", env_tok[48] = "",
	                              env_clim[48] = "", env_feed[48] = "", env_fence[48] = "";
	char env_met[48] = "", env_lead[48] = "";
	char *env_queues = NULL, *env_journals = NULL, *resources = NULL, **argv = NULL,
	     **envp = NULL, **owned = NULL;
	int argc = 0, envc = 0, nowned = 0, fds[MGR_CHILD_MAX_FDS], nfds = 0, r = -ENOMEM;
	extern char **environ;

	snprintf(path, sizeof(path), "%s/%s", m->libexec, prog);
	if (access(path, X_OK) < 0) {
		log_error("%s not found or not executable in %s (set --libexec-dir)", prog,
		          m->libexec);
		return -ENOENT;
	}
	for (char **e = environ; *e; e++)
		cap_env++;
	for (size_t i = 0; i < m->cfg.n_ctl; i++)
		cap_env += m->ctl[i].env.n;
	argv = calloc(16 + nflags, sizeof(char *));
	envp = calloc(cap_env, sizeof(char *));
	owned = calloc(nflags + m->cfg.n_ctl * KCMD_MGR_ENV_MAX + 5, sizeof(char *));
	if (!argv || !envp || !owned)
		goto out;
	argv[argc++] = path;
	if (m->cfg.kubeconfig) {
		snprintf(kubeconfig, sizeof(kubeconfig), "--kubeconfig=%s", m->cfg.kubeconfig);
		argv[argc++] = kubeconfig;
	}
	if (m->cfg.master) {
		snprintf(master, sizeof(master), "--master=%s", m->cfg.master);
		argv[argc++] = master;
	}
	snprintf(qps, sizeof(qps), "--kube-api-qps=%g", m->cfg.kube_api_qps);
	snprintf(burst, sizeof(burst), "--kube-api-burst=%d", m->cfg.kube_api_burst);
	snprintf(v, sizeof(v), "--v=%d", m->cfg.v);
	argv[argc++] = qps;
	argv[argc++] = burst;
	argv[argc++] = v;
	if (ctl) {
		snprintf(ctrl, sizeof(ctrl), "--controller=%s", ctl->c->name);
		argv[argc++] = ctrl;
		/* every process of a controller loads the manager's plug-ins (the same registry) */
		if (kcmd_registry_plugins_arg()) {
			if (asprintf(&owned[nowned], "--controller-plugins=%s",
			             kcmd_registry_plugins_arg()) < 0)
				goto out;
			argv[argc++] = owned[nowned++];
		}
		/* --kube-api-content-type: a worker's client sends create/update bodies and asks
		 * its GETs as protobuf when it is (kube/proto.h); a controller with a main of its
		 * own parses its own arguments and gets none */
		if (role == ROLE_WORKER && !ctl->c->worker_main)
			argv[argc++] = strcmp(m->cfg.kube_api_content_type, "application/json") == 0
			                       ? "--kube-api-content-type=application/json"
			                       : "--kube-api-content-type=application/"
			                         "vnd.kubernetes.protobuf";
		/* a worker gets the controller's own flags, as the manager parsed them */
		const struct kcmd_flag_values *fv = m->cfg.ctl[ctl - m->ctl].values;
		for (size_t f = 0; role == ROLE_WORKER && f < nflags; f++) {
			const struct kcmd_flag *fl = &ctl->c->flags[f];
			const char *val = kcmd_flag_values_text(fv, f);
			if (fl->manager_only)
				continue;
			if (fl->type == KCMD_FLAG_BOOL) /* canonical spelling */
				val = kcmd_flag_bool(fv, fl->name) ? "true" : "false";
			if (asprintf(&owned[nowned], "--%s=%s", fl->name, val) < 0)
				goto out;
			argv[argc++] = owned[nowned++];
		}
	} else {
		/* protobuf for informerd's Pod and metadata list/watch (kube/proto.h) */
		argv[argc++] =
		        strcmp(m->cfg.kube_api_content_type, "application/json") == 0
		                ? "--kube-api-content-type=application/json"
		                : "--kube-api-content-type=application/vnd.kubernetes.protobuf";
		/* --feature-gates=WatchListClient=false: informerd lists instead of streaming */
		if (!m->cfg.features.on[KCMD_FEAT_WATCH_LIST_CLIENT])
			argv[argc++] = "--watch-list=false";
		/* the union of the enabled controllers' typed and metadata watches */
		size_t len = 0, cap = 16;
		for (size_t i = 0; i < m->cfg.n_ctl; i++)
			for (size_t w = 0; m->ctl[i].on && w < m->ctl[i].c->n_watches; w++)
				cap += 256;
		if (!(resources = calloc(1, cap)))
			goto out;
		len = (size_t)snprintf(resources, cap, "--resources=");
		const size_t empty = len;
		for (size_t i = 0; i < m->cfg.n_ctl; i++)
			for (size_t w = 0; m->ctl[i].on && w < m->ctl[i].c->n_watches; w++) {
				const struct kcmd_watch *wt = &m->ctl[i].c->watches[w];
				bool seen = false; /* the same resource named by an earlier watch */
				bool whole =
				        false; /* some enabled watch of it wants the whole object */
				for (size_t j = 0; j <= i && !seen; j++)
					for (size_t u = 0;
					     m->ctl[j].on &&
					     u < (j == i ? w : m->ctl[j].c->n_watches);
					     u++) {
						const struct kcmd_watch *o =
						        &m->ctl[j].c->watches[u];
						seen |= !strcmp(o->group, wt->group) &&
						        !strcmp(o->resource, wt->resource);
					}
				/* a full-object record also serves metadata-only watches of the
				 * resource (every reader of metadata reads any record's) */
				for (size_t j = 0; j < m->cfg.n_ctl; j++)
					for (size_t u = 0;
					     m->ctl[j].on && u < m->ctl[j].c->n_watches; u++) {
						const struct kcmd_watch *o =
						        &m->ctl[j].c->watches[u];
						whole |= o->cache == KCMD_CACHE_OBJECT &&
						         !strcmp(o->group, wt->group) &&
						         !strcmp(o->resource, wt->resource);
					}
				if (!seen)
					len += (size_t)snprintf(
					        resources + len, cap - len, "%s%s%s%s/%s:%s%s",
					        len > empty ? "," : "", wt->resource,
					        wt->group[0] ? "." : "", wt->group, wt->version,
					        wt->kind, whole ? "@object" : "");
			}
		if (len == empty) { /* no watch: informerd's default */
			free(resources);
			resources = NULL;
		}
		if (resources)
			argv[argc++] = resources;
		bool deletable = false;
		for (size_t i = 0; i < m->cfg.n_ctl; i++)
			deletable |= m->ctl[i].on && m->ctl[i].c->watch_deletable;
		argv[argc++] =
		        deletable ? "--discover-deletable=true" : "--discover-deletable=false";
	}
	argv[argc] = NULL;

	int afd = writer ? m->arena_fd : m->arena_ro_fd;
	snprintf(env_arena, sizeof(env_arena), "KCMD_ARENA_FD=%d", afd);
	fds[nfds++] = afd;
	/* informerd owns no queue: each controller's dispatcher owns its own; the queues'
	 * durable keys go to their owner only (a dispatcher, ipc/journal.h) */
	if ((r = queue_fds_env(m, ctl, "KCMD_QUEUE_FDS", false, &env_queues, fds, &nfds)) < 0 ||
	    (r = queue_fds_env(m, role == ROLE_DISPATCHER ? ctl : NULL, "KCMD_JOURNAL_FDS", true,
	                       &env_journals, fds, &nfds)) < 0)
		goto out;
	snprintf(env_proc, sizeof(env_proc), "KCMD_PROCESS=%s", name);
	/* every process that may write checks the leadership deadline itself (kube/fence.h) */
	if (role != ROLE_INFORMERD && m->fence_fd >= 0 && !m->test_unfenced) {
		snprintf(env_fence, sizeof(env_fence), "KCMD_FENCE_FD=%d", m->fence_fd);
		fds[nfds++] = m->fence_fd;
	}
	/* every child reads the leadership epoch (the acquisition barrier, kube/fence.h F5):
	 * informerd to relist for it, workers and dispatchers to wait for that relist; even
	 * unfenced ones (KCMD_TEST_UNFENCED), since the barrier is not the fence */
	if (m->fence_fd >= 0) {
		snprintf(env_lead, sizeof(env_lead), "KCMD_LEADERSHIP_FD=%d", m->fence_fd);
		if (!env_fence[0])
			fds[nfds++] = m->fence_fd;
	}
	int ffd = writer ? m->feed_fd : m->feed_consumer_fd;
	if (role != ROLE_WORKER && ffd >= 0) {
		snprintf(env_feed, sizeof(env_feed), "KCMD_FEED_FD=%d", ffd);
		fds[nfds++] = ffd;
	}
	bool wants_imet = writer && m->inf_metrics_fd >= 0;
	if (wants_imet) {
		snprintf(env_imet, sizeof(env_imet), "KCMD_INFORMER_METRICS_FD=%d",
		         m->inf_metrics_fd);
		fds[nfds++] = m->inf_metrics_fd;
	}
	if (ctl && ctl->client_bucket_fd >= 0) {
		snprintf(env_clim, sizeof(env_clim), "KCMD_CLIENT_LIMITER_FD=%d",
		         ctl->client_bucket_fd);
		fds[nfds++] = ctl->client_bucket_fd;
	}
	if (m->rest_metrics_fd >= 0) {
		snprintf(env_rm, sizeof(env_rm), "KCMD_REST_METRICS_FD=%d", m->rest_metrics_fd);
		fds[nfds++] = m->rest_metrics_fd;
	}
	/* --use-service-account-credentials: a controller's workers get its account's token */
	if (ctl && ctl->sa_token_fd >= 0) {
		snprintf(env_tok, sizeof(env_tok), "KCMD_TOKEN_FD=%d", ctl->sa_token_fd);
		fds[nfds++] = ctl->sa_token_fd;
	}
	/* the controller's declared metrics, for its dispatcher and every worker */
	if (ctl && ctl->metrics_fd >= 0) {
		snprintf(env_met, sizeof(env_met), "%s=%d", CTLM_ENV, ctl->metrics_fd);
		fds[nfds++] = ctl->metrics_fd;
	}
	for (char **e = environ; *e; e++)
		if (!manager_env(*e))
			envp[envc++] = *e;
	/* what controllers exported: informerd gets those marked for it, workers their own */
	for (size_t i = 0; i < m->cfg.n_ctl; i++) {
		const struct ctl_rt *c = &m->ctl[i];
		for (size_t k = 0; c->on && k < c->env.n; k++) {
			const struct kcmd_mgr_export *x = &c->env.e[k];
			bool give = c == ctl &&
			            (x->users &
			             (role == ROLE_WORKER ? KCMD_TO_WORKERS : KCMD_TO_DISPATCHER));
			if (!give)
				continue;
			if (nfds >= MGR_CHILD_MAX_FDS ||
			    asprintf(&owned[nowned], "%s=%d", x->var, x->fd) < 0) {
				r = nfds >= MGR_CHILD_MAX_FDS ? -E2BIG : -ENOMEM;
				goto out;
			}
			envp[envc++] = owned[nowned++];
			fds[nfds++] = x->fd;
		}
	}
	if (env_met[0])
		envp[envc++] = env_met;
	if (env_clim[0])
		envp[envc++] = env_clim;
	if (env_rm[0])
		envp[envc++] = env_rm;
	if (env_tok[0])
		envp[envc++] = env_tok;
	if (wants_imet)
		envp[envc++] = env_imet;
	if (env_feed[0])
		envp[envc++] = env_feed;
	if (env_fence[0])
		envp[envc++] = env_fence;
	if (env_lead[0])
		envp[envc++] = env_lead;
	envp[envc++] = env_arena;
	envp[envc++] = env_queues;
	if (strchr(env_journals, ':'))
		envp[envc++] = env_journals;
	envp[envc++] = env_proc;
	envp[envc] = NULL;

	struct mgr_child_spec spec = {.name = name,
	                              .group = group,
	                              .argv = argv,
	                              .envp = envp,
	                              .n_keep_fds = (unsigned)nfds,
	                              .restart = true,
	                              .on_demand = on_demand};
	memcpy(spec.keep_fds, fds, sizeof(int) * (size_t)nfds);
	r = mgr_sup_add(m->sup, &spec, ret);
out:
	for (int i = 0; owned && i < nowned; i++)
		free(owned[i]);
	free(owned);
	free(argv);
	free(envp);
	free(env_queues);
	free(env_journals);
	free(resources);
	return r;
}

static int setup_children(struct mgr *m)
{
	struct shm_create_opts so = {0};
	bool any = false;
	int r;

	r = mgr_sup_new(m->loop, on_any_exit, m, &m->sup);
	if (r < 0)
		return r;
	for (size_t i = 0; i < m->cfg.n_ctl; i++)
		any |= m->ctl[i].on;
	if (!any)
		return 0;
	/* dispatchers and workers forked from the zygote (lib/zygote-abi.h) only with
	 * KCMD_ZYGOTE=1 (opt-in: with it, a leader at --kube-api-qps=1 lost its Lease 2 s after
	 * every acquisition in TestExample_NoKeyBeforeCachesSynced, cause not found yet; docs/
	 * manager.md); without it every child is exec'd, as it is anyway once the zygote is gone */
	const char *zy = getenv("KCMD_ZYGOTE");
	if (zy && !strcmp(zy, "1") && (r = mgr_sup_use_zygote(m->sup, m->libexec)) < 0)
		log_warning("starting the zygote (%s/kcmd-worker --zygote) failed: %s; every "
		            "process is exec'd",
		            m->libexec, strerror(-r));
	r = shm_arena_create(&so, &m->arena_fd);
	if (r < 0) {
		log_error("creating the shared-memory arena failed: %s", strerror(-r));
		return r;
	}
	r = shm_arena_reader_fd(m->arena_fd, &m->arena_ro_fd);
	if (r < 0)
		return r;
	/* informerd's counters: created here so they survive its restarts; read for /metrics. */
	m->inf_metrics_fd = inf_metrics_memfd_create();
	if (m->inf_metrics_fd >= 0 && inf_metrics_map_ro(m->inf_metrics_fd, &m->inf_metrics) < 0)
		m->inf_metrics = NULL;
	size_t nq = 0;
	for (size_t i = 0; i < m->cfg.n_ctl; i++)
		nq += m->ctl[i].on ? m->ctl[i].c->n_queues : 0;
	if (!(m->queues = calloc(nq ? nq : 1, sizeof(*m->queues))))
		return -ENOMEM;
	for (size_t i = 0; i < m->cfg.n_ctl; i++) {
		struct ctl_rt *c = &m->ctl[i];
		if (!c->on)
			continue;
		/* its declared metrics, created before its processes so they outlive them */
		if (c->c->n_metrics) {
			c->metrics_fd = r = ctlm_create(c->c);
			if (r >= 0)
				r = ctlm_attach(c->c, c->metrics_fd, false, &c->metrics);
			if (r < 0) {
				log_error("%s: creating its metrics region failed: %s", c->c->name,
				          strerror(-r));
				return r;
			}
		}
		/* the controller's own shared regions, created here so they outlive its processes
		 */
		c->env.arena_ro_fd = m->arena_ro_fd;
		if (c->c->mgr_setup &&
		    (r = c->c->mgr_setup(&c->env, m->cfg.ctl[i].values, &c->state)) < 0) {
			log_error("%s: setting up its shared state failed: %s", c->c->name,
			          strerror(-r));
			return r;
		}
		/* upstream gives each controller one client, so one token bucket for all its
		 * workers */
		c->client_bucket_fd = kube_limiter_memfd_create();
		if (c->client_bucket_fd < 0)
			log_warning(
			        "%s: client rate limiter: %s; each worker process limits itself",
			        c->c->name, strerror(-c->client_bucket_fd));
		/* room for every worker process (and the dispatcher) to attach to each queue */
		int nw = c->c->worker_count ? c->c->worker_count(m->cfg.ctl[i].values) : 1;
		uint32_t slots = nw + 1 > (int)IPC_QUEUE_MAX_WORKERS ? (uint32_t)nw + 1
		                                                     : IPC_QUEUE_MAX_WORKERS;
		for (size_t q = 0; q < c->c->n_queues; q++) {
			int fd = ipc_queue_memfd_create_sized(c->c->queues[q].name, slots);
			if (fd < 0) {
				log_error("creating work queue %s failed: %s", c->c->queues[q].name,
				          strerror(-fd));
				return fd;
			}
			/* its durable keys outlive its owner (a dispatcher's delete keys) */
			int jfd = c->c->handlers ? ipc_journal_memfd_create(c->c->queues[q].name)
			                         : -1;
			if (c->c->handlers && jfd < 0)
				log_warning(
				        "work queue %s: no journal (%s): keys from delete events "
				        "do not survive its dispatcher",
				        c->c->queues[q].name, strerror(-jfd));
			m->queues[m->n_queues++] = (struct queue){&c->c->queues[q], i, fd, jfd};
		}
	}
	/* the leadership fence: writes refused until this kcmd leads. KCMD_TEST_UNFENCED=1 hands
	 * the children none (a test seam: the negative control of
	 * TestManager_FenceWhenManagerStalls) */
	m->test_unfenced =
	        getenv("KCMD_TEST_UNFENCED") && !strcmp(getenv("KCMD_TEST_UNFENCED"), "1");
	if (m->test_unfenced)
		log_warning("KCMD_TEST_UNFENCED=1: worker processes are not fenced (a test seam; "
		            "never in production)");
	/* KCMD_TEST_NO_BARRIER=1: no leadership epoch is published, so workers act on whatever
	 * the cache holds at acquisition (a test seam: the negative control of
	 * TestHandover_TakeoverBarrier) */
	m->test_no_barrier =
	        getenv("KCMD_TEST_NO_BARRIER") && !strcmp(getenv("KCMD_TEST_NO_BARRIER"), "1");
	if (m->test_no_barrier)
		log_warning("KCMD_TEST_NO_BARRIER=1: no acquisition barrier (a test seam; never in "
		            "production)");
	/* KCMD_TEST_SHARD_IGNORE_FENCE=1 (with --shard-ranges): this instance holds no range Lease
	 * and opens every range's fence word while its member Lease is held, so it writes into
	 * ranges other instances own (a test seam: the negative control of
	 * TestShard_NegativeControl, docs/sharding.md) */
	m->test_shard_all = m->cfg.shard_ranges > 0 && getenv("KCMD_TEST_SHARD_IGNORE_FENCE") &&
	                    !strcmp(getenv("KCMD_TEST_SHARD_IGNORE_FENCE"), "1");
	if (m->test_shard_all)
		log_warning("KCMD_TEST_SHARD_IGNORE_FENCE=1: every range is written without its "
		            "Lease (a test seam; never in production)");
	/* a random base, so an arena persisted by another manager never looks synced at ours */
	if (getrandom(&m->epoch, sizeof(m->epoch), 0) != sizeof(m->epoch))
		m->epoch = (uint32_t)(ipc_now_usec() ^ (uint64_t)getpid() << 16);
	m->epoch &= 0x7fffffffu; /* room to count acquisitions before wrapping */
	m->fence_fd = kube_fence_memfd_create_ranges((unsigned)m->cfg.shard_ranges);
	if (m->fence_fd < 0 || (r = kube_fence_open(m->fence_fd, true, &m->fence)) < 0) {
		r = m->fence_fd < 0 ? m->fence_fd : r;
		log_error("creating the leadership fence failed: %s", strerror(-r));
		return r;
	}
	/* the change feed informerd publishes every change to, after the arena (shm/feed.h); tests
	 * shrink its ring (KCMD_TEST_FEED_RING, bytes) to lap a stopped dispatcher */
	const char *ring_env = getenv("KCMD_TEST_FEED_RING");
	r = shm_feed_create(
	        &(struct shm_feed_create_opts){.ring_size =
	                                               ring_env ? strtoull(ring_env, NULL, 10) : 0},
	        &m->feed_fd);
	/* dispatchers get a writable descriptor only to publish their position in their slot
	 * (the ring stays mapped read-only), so that informerd gives back the ring pages they all
	 * have read (shm/feed.h F7) */
	if (r < 0 || (r = shm_feed_consumer_fd(m->feed_fd, &m->feed_consumer_fd)) < 0) {
		log_error("creating the change feed failed: %s", strerror(-r));
		return r;
	}
	r = add_child(m, "informerd", "informerd", "kcmd-informerd", ROLE_INFORMERD, NULL, false,
	              NULL);
	if (r < 0)
		return r;
	/* Each controller's handlers run in its own dispatcher; like informerd they only read and
	 * queue keys, so they run while standing by too (the "informerd" group). */
	for (size_t i = 0; i < m->cfg.n_ctl; i++) {
		struct ctl_rt *c = &m->ctl[i];
		char name[160];
		if (!c->on || !c->c->handlers)
			continue;
		snprintf(name, sizeof(name), "dispatcher-%s", c->c->name);
		if ((r = add_child(m, name, "informerd", "kcmd-dispatcher", ROLE_DISPATCHER, c,
		                   false, NULL)) < 0)
			return r;
	}
	/* Worker processes write, so they run only while this kcmd leads. */
	for (size_t i = 0; i < m->cfg.n_ctl; i++) {
		struct ctl_rt *c = &m->ctl[i];
		if (!c->on)
			continue;
		int n = c->c->worker_count ? c->c->worker_count(m->cfg.ctl[i].values) : 1;
		n = n < 1 ? 1 : n;
		if (!(c->pool = calloc((size_t)n, sizeof(*c->pool))))
			return -ENOMEM;
		for (int k = 0; k < n; k++) {
			char name[160];
			if (c->c->hidden) /* a kcmd tool (one process), named as itself */
				snprintf(name, sizeof(name), "%s", c->c->name);
			else
				snprintf(name, sizeof(name), "worker-%s-%d", c->c->name, k);
			/* the first worker always runs; the others while keys wait (worker_pool) */
			bool on_demand =
			        k > 0 && m->cfg.worker_idle_timeout_us > 0 && !c->c->hidden;
			r = add_child(m, name, "workers", "kcmd-worker", ROLE_WORKER, c, on_demand,
			              &c->pool[k]);
			if (r < 0)
				return r;
			c->n_pool++;
		}
	}
	return 0;
}

static void start_group(struct mgr *m, const char *group)
{
	int r = mgr_sup_start_group(m->sup, group);

	if (r < 0)
		log_error(
		        "starting %s failed: %s; retrying with backoff (/healthz fails meanwhile)",
		        group, strerror(-r));
	else if (r > 0)
		log_info("started %d %s process%s", r, group, r == 1 ? "" : "es");
}

/* ---- worker pools ---------------------------------------------------------------------------
 * kcm runs --concurrent-*-syncs goroutines per controller, idle ones costing a few KB; kcmd's
 * workers are processes (~1 MB each), so only the first of each controller runs all the time
 * and the others start while keys wait in its queues (every worker busy) and stop once the
 * queues have been empty with nothing in flight for --worker-idle-timeout. Concurrency under
 * load is kcm's; an idle kcmd holds one worker a controller. Started workers are supervised as
 * any (a crash restarts them, the leadership fence kills them); a stop is SIGTERM, which a
 * worker takes between keys. */
#define POOL_TICK_USEC 250000ull

static int on_pool_timer(struct ipc_source *s, uint64_t now, void *ud)
{
	struct mgr *m = ud;
	bool workers_on =
	        m->leading && !m->stopping && (!m->sa_tokens || mgr_sa_tokens_ready(m->sa_tokens));

	for (size_t i = 0; workers_on && i < m->cfg.n_ctl; i++) {
		struct ctl_rt *c = &m->ctl[i];
		uint64_t depth = 0;
		bool in_flight = false;
		int running = 0, stopped = 0;

		if (!c->on || c->n_pool < 2)
			continue;
		for (size_t q = 0; q < m->n_queues; q++) {
			struct ipc_queue_metrics qm;
			if (m->queues[q].ctl != i ||
			    ipc_queue_metrics_read(m->queues[q].fd, &qm) < 0)
				continue;
			depth += qm.depth;
			in_flight |= qm.longest_running_processor_seconds > 0;
		}
		for (int k = 1; k < c->n_pool; k++) {
			enum mgr_child_state st = mgr_child_state(c->pool[k]);
			running += st != MGR_CHILD_STOPPED;
			stopped += st == MGR_CHILD_STOPPED;
		}
		if (depth > 0) {
			c->idle_since = 0;
			/* keys waited a whole tick: every running worker is busy. Not while the
			 * first worker is not running (it is in its restart backoff: the others,
			 * the same program, would fail alike, and retrying is the backoff's job),
			 * nor within the wait after a failed start. */
			if (mgr_child_state(c->pool[0]) != MGR_CHILD_RUNNING ||
			    now < c->grow_after) {
				c->backlog_ticks = 0;
				continue;
			}
			if (++c->backlog_ticks < 2 || stopped == 0)
				continue;
			int want = depth < (uint64_t)stopped ? (int)depth : stopped, started = 0;
			for (int k = 1; k < c->n_pool && started < want; k++) {
				if (mgr_child_state(c->pool[k]) != MGR_CHILD_STOPPED)
					continue;
				int r = mgr_child_start(c->pool[k]);
				if (r < 0) {
					c->grow_backoff =
					        c->grow_backoff ? c->grow_backoff * 2 : 1000000;
					if (c->grow_backoff > 30000000)
						c->grow_backoff = 30000000;
					c->grow_after = now + c->grow_backoff;
					log_warning("%s: starting another worker: %s; no other for "
					            "%.1f s",
					            c->c->name, strerror(-r),
					            c->grow_backoff / 1e6);
					break;
				}
				c->grow_backoff = 0;
				started++;
			}
			if (started)
				log_v(2,
				      "%s: %llu keys waiting: started %d more worker%s (%d "
				      "running)",
				      c->c->name, (unsigned long long)depth, started,
				      started == 1 ? "" : "s", 1 + running + started);
			continue;
		}
		c->backlog_ticks = 0;
		if (running == 0) {
			c->idle_since = 0;
			continue;
		}
		/* keys in flight keep the pool too (a worker stopped mid-key would finish it first:
		 * SIGTERM is taken between keys, so this only keeps a long sync's helpers around)
		 */
		if (in_flight) {
			c->idle_since = 0;
			continue;
		}
		if (!c->idle_since) {
			c->idle_since = now;
			continue;
		}
		if (now - c->idle_since < m->cfg.worker_idle_timeout_us)
			continue;
		for (int k = 1; k < c->n_pool; k++)
			if (mgr_child_state(c->pool[k]) != MGR_CHILD_STOPPED)
				(void)mgr_child_stop(c->pool[k], SIGTERM);
		log_v(2, "%s: idle for %llus: stopping %d of its workers", c->c->name,
		      (unsigned long long)(m->cfg.worker_idle_timeout_us / 1000000), running);
		c->idle_since = 0;
	}
	return ipc_source_set_time(s, now + POOL_TICK_USEC);
}

/* ---- leadership ----------------------------------------------------------------------------- */

/* A new leadership epoch at the resourceVersion of the Lease write that won (kube/fence.h F5):
 * on leading, and with --shard-ranges on each range acquired. */
static void publish_epoch(struct mgr *m, uint64_t lease_rv)
{
	if (++m->epoch == 0)
		m->epoch = 1;
	if (m->test_no_barrier) /* the test seam: workers trust the cache as it is */
		return;
	kube_fence_set_epoch(m->fence, m->epoch, lease_rv);
	if (lease_rv)
		log_info(
		        "leadership epoch %u at resourceVersion %llu: the caches relist before the "
		        "workers act",
		        m->epoch, (unsigned long long)lease_rv);
	else
		log_info("leadership epoch %u without a Lease resourceVersion: the caches relist "
		         "with a consistent LIST before the workers act",
		         m->epoch);
}

/* --shard-ranges: a range Lease was won; its keys are taken only after the relist at least as
 * new as that write (the same barrier as a leader's, docs/sharding.md). */
static void on_range_acquired(unsigned range, uint64_t lease_rv, void *ud)
{
	(void)range;
	publish_epoch(ud, lease_rv);
}

static void on_leadership(bool leading, void *ud)
{
	struct mgr *m = ud;

	m->leading = leading;
	if (leading) {
		if (m->shard || m->test_shard_all)
			log_info("became an active member (%s/%s as %s): ranges follow",
			         m->cfg.leader_elect_resource_namespace, m->member_lease,
			         m->identity);
		else if (m->cfg.leader_elect)
			log_info("became leader (%s/%s as %s)",
			         m->cfg.leader_elect_resource_namespace,
			         m->cfg.leader_elect_resource_name, m->identity);
		else
			log_info("leader election disabled: reconciling");
		/* The acquisition barrier, before any worker of this term starts: informerd
		 * relists every type at least as new as the Lease write that won, and until it
		 * has, kcmd_cache_synced() in the workers says 0 (docs/architecture.md). */
		if (m->test_shard_all) /* F9: the cache set before the epoch */
			for (unsigned i = 0; i < (unsigned)m->cfg.shard_ranges; i++)
				kube_fence_set_cache_range(m->fence, i, true);
		publish_epoch(m, m->lc ? mgr_lease_client_rv(m->lc) : 0);
		if (m->test_shard_all)
			for (unsigned i = 0; i < (unsigned)m->cfg.shard_ranges; i++)
				kube_fence_set_range(m->fence, i, KUBE_FENCE_NONE);
		mgr_shard_set_active(m->shard, true);
		if (!m->stopping) {
			start_group(m, "informerd");
			if (!m->sa_tokens || mgr_sa_tokens_ready(m->sa_tokens))
				start_group(m, "workers");
			else
				log_info("workers start once every controller's service-account "
				         "token is there");
		}
	} else {
		/* Fence: no worker may write once we might not lead. The fence word says so before
		 * the kill, which also tells the queue owners these deaths are no crash. */
		kube_fence_set(m->fence, 0);
		for (unsigned i = 0; m->test_shard_all && i < (unsigned)m->cfg.shard_ranges; i++) {
			kube_fence_set_range(m->fence, i, 0);
			kube_fence_set_cache_range(m->fence, i, false);
		}
		mgr_shard_set_active(m->shard, false);
		/* "stopped leading" (log and Event) waits until each of them is reaped
		 * (on_term_event, manager/termend.h): kill(2) returns before they die */
		struct mgr_child *c;
		int n = 0;
		for (unsigned i = 0; (c = mgr_sup_child(m->sup, i)); i++) {
			struct mgr_child_info info;
			mgr_child_get_info(c, &info);
			if (strcmp(info.group, "workers") != 0 || info.state != MGR_CHILD_RUNNING)
				continue;
			if (mgr_child_stop(c, SIGKILL) < 0)
				continue; /* not ours to wait for: kill(2) on our own child fails
				             only once it is gone */
			n++;
			if (m->term_end && mgr_term_end_add(m->term_end, info.pid) < 0)
				log_warning("cannot track worker %d: the LeaderElection event may "
				            "not wait for it",
				            (int)info.pid);
		}
		mgr_sup_signal_group(m->sup, "workers", SIGKILL, true); /* the ones in backoff */
		log_warning("leadership ended: fence closed, SIGKILL sent to %d worker process%s; "
		            "the LeaderElection event follows once %s reaped",
		            n, n == 1 ? "" : "es", n == 1 ? "it is" : "they are");
		if (!m->cfg.standby_warm_cache)
			mgr_sup_signal_group(m->sup, "informerd", SIGTERM, true);
	}
	notify_status(m);
}

/* A LeaderElection event, let through by the term-end gate: by now every worker of an ended
 * term was reaped. The log line comes with it, so the log's order is the Events' order. */
static void on_term_emit(const char *what, void *ud)
{
	struct mgr *m = ud;

	if (!strcmp(what, "stopped leading"))
		log_warning("stopped leading: every worker process of the term has exited");
	if (m->lc)
		mgr_lease_client_record_event(m->lc, what);
}

static void on_term_event(const char *what, void *ud)
{
	struct mgr *m = ud;

	if (mgr_term_end_event(m->term_end, what) == 0 && mgr_term_end_pending(m->term_end))
		/* not the event's words: log readers take "stopped leading" as the term's end */
		log_v(2, "LeaderElection event (%s) held until %zu worker process%s are reaped",
		      strcmp(what, "stopped leading") ? "acquired" : "lost",
		      mgr_term_end_pending(m->term_end),
		      mgr_term_end_pending(m->term_end) == 1 ? "" : "es");
}

/* The elector's fence deadline, published where every writing child checks it. */
static void on_fence_deadline(uint64_t deadline_us, void *ud)
{
	struct mgr *m = ud;

	kube_fence_set(m->fence, deadline_us);
}

/* --use-service-account-credentials: the first token of every account is there. */
static void on_tokens_ready(void *ud)
{
	struct mgr *m = ud;

	if (m->leading && !m->stopping)
		start_group(m, "workers");
	notify_status(m);
}

/* ---- health and metrics ---------------------------------------------------------------------- */

static bool check_leader(void *ud, char *why, size_t n)
{
	struct mgr *m = ud;

	if (!m->lc)
		return true;
	if (mgr_le_healthy(mgr_lease_client_elector(m->lc), ipc_now_usec(), 20000000))
		return true;
	snprintf(why, n,
	         "leader has not renewed the lease for longer than the lease duration + 20s");
	return false;
}

static bool informer_synced(struct mgr *m, char *why, size_t n)
{
	struct shm_arena *a = NULL;
	struct shm_stats st;
	bool ok = true;

	if (m->arena_ro_fd < 0)
		return true;
	if (shm_reader_open(m->arena_ro_fd, &a) < 0) {
		snprintf(why, n, "cannot read the arena");
		return false;
	}
	if (shm_reader_stats(a, &st) < 0 || st.n_types == 0) {
		snprintf(why, n, "no resource registered by informerd yet");
		ok = false;
	}
	if (ok && st.n_types > m->n_unsynced) {
		struct unsynced *u = realloc(m->unsynced, st.n_types * sizeof(*u));
		if (!u) {
			shm_arena_close(a);
			snprintf(why, n, "out of memory");
			return false;
		}
		memset(u + m->n_unsynced, 0, (st.n_types - m->n_unsynced) * sizeof(*u));
		m->unsynced = u;
		m->n_unsynced = st.n_types;
	}
	uint64_t now = ipc_now_usec();
	for (uint64_t t = 0; ok && t < st.n_types; t++) {
		struct shm_type_info ti;
		if (shm_reader_type_info(a, (uint16_t)t, &ti) < 0)
			continue;
		struct unsynced *u = &m->unsynced[t];
		if (ti.synced) { /* a later loss of sync gets a grace of its own */
			u->since = 0;
			u->warned = false;
			continue;
		}
		if (!u->since || u->gen != ti.gen) /* first seen unsynced (this slot's resource) */
			*u = (struct unsynced){.gen = ti.gen, .since = now};
		if (ti.record_kind == SHM_RECORD_META && now - u->since >= META_SYNC_GRACE_USEC) {
			if (!u->warned)
				log_warning("%s%s%s not synced after %llu s: no longer waited for "
				            "(metadata-only, the garbage collector's; it proceeds "
				            "without "
				            "it as upstream's does)",
				            ti.resource, ti.group[0] ? "." : "", ti.group,
				            META_SYNC_GRACE_USEC / 1000000);
			u->warned = true;
			continue;
		}
		snprintf(why, n, "%s%s%s not synced", ti.group, ti.group[0] ? "/" : "",
		         ti.resource);
		ok = false;
	}
	shm_arena_close(a);
	return ok;
}

static bool check_informer(void *ud, char *why, size_t n)
{
	return informer_synced(ud, why, n);
}

static bool check_children(void *ud, char *why, size_t n)
{
	struct mgr *m = ud;
	struct mgr_child *c;

	for (unsigned i = 0; (c = mgr_sup_child(m->sup, i)); i++) {
		struct mgr_child_info info;
		mgr_child_get_info(c, &info);
		if (info.crash_looping) {
			snprintf(why, n, "%s is crash-looping", info.name);
			return false;
		}
		if (info.start_failures) {
			snprintf(why, n, "%s could not be started (%s, %u time%s); retrying",
			         info.name, strerror(-info.start_error), info.start_failures,
			         info.start_failures == 1 ? "" : "s");
			return false;
		}
	}
	return true;
}

/* --use-service-account-credentials: not ready until every controller's account has a token
 * (the workers wait for them). */
static bool check_tokens(void *ud, char *why, size_t n)
{
	struct mgr *m = ud;

	if (!m->sa_tokens || mgr_sa_tokens_ready(m->sa_tokens))
		return true;
	snprintf(why, n, "waiting for the controllers' service-account tokens");
	return false;
}

/* /healthz/<controller>, as kube-controller-manager registers one check per started controller:
 * fails while one of the controller's worker processes is crash-looping. */
static bool check_controller(void *ud, char *why, size_t n)
{
	const struct ctl_rt *cc = ud;
	char prefix[160];
	struct mgr_child *c;

	snprintf(prefix, sizeof(prefix), "worker-%s-", cc->c->name);
	for (unsigned i = 0; (c = mgr_sup_child(cc->m->sup, i)); i++) {
		struct mgr_child_info info;
		mgr_child_get_info(c, &info);
		if (strncmp(info.name, prefix, strlen(prefix)) != 0)
			continue;
		if (info.crash_looping) {
			snprintf(why, n, "%s is crash-looping", info.name);
			return false;
		}
		if (info.start_failures) {
			snprintf(why, n, "%s could not be started; retrying", info.name);
			return false;
		}
	}
	return true;
}

/* RSS (bytes), CPU seconds and start time of one process, from /proc. */
static bool proc_stats(pid_t pid, double *cpu_s, double *rss, double *start_s)
{
	char path[64], buf[1024];
	FILE *f;
	size_t n;
	long tck = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	if (!p)
		return false;
	unsigned long utime = 0, stime = 0;
	unsigned long long starttime = 0;
	long rsspages = 0;
	/* fields after ")": state(3) ... utime(14) stime(15) ... starttime(22) vsize(23) rss(24) */
	if (sscanf(p + 2,
	           "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu %*d %*d %*d %*d %*d %*d "
	           "%llu %*u %ld",
	           &utime, &stime, &starttime, &rsspages) != 4)
		return false;
	*cpu_s = (double)(utime + stime) / (double)tck;
	*rss = (double)rsspages * (double)page;
	double uptime = 0;
	if ((f = fopen("/proc/uptime", "re"))) {
		if (fscanf(f, "%lf", &uptime) != 1)
			uptime = 0;
		fclose(f);
	}
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	*start_s = (double)now.tv_sec - uptime + (double)starttime / (double)tck;
	return true;
}

/* Every enabled controller's declared families (lib/ctlmetrics.h), then their drops. */
static void controller_metrics(struct mgr_metrics_buf *b, struct mgr *m)
{
	struct kcmd_metrics **all = calloc(m->cfg.n_ctl ? m->cfg.n_ctl : 1, sizeof(*all));
	char *text = NULL;
	size_t len = 0, n = 0;
	FILE *f = open_memstream(&text, &len);

	if (!all || !f) {
		if (f)
			fclose(f);
		free(all);
		free(text);
		return;
	}
	for (size_t i = 0; i < m->cfg.n_ctl; i++)
		if (m->ctl[i].on && m->ctl[i].metrics) {
			ctlm_render(m->ctl[i].metrics, f);
			all[n++] = m->ctl[i].metrics;
		}
	ctlm_render_dropped(all, n, f);
	if (fclose(f) == 0 && text)
		mgr_metrics_printf(b, "%s", text);
	free(text);
	free(all);
}

static void process_metrics(struct mgr_metrics_buf *b, struct mgr *m)
{
	double cpu, rss, start;
	struct mgr_child *c;

	/* The manager itself, under the names every Go component exports. */
	if (proc_stats(getpid(), &cpu, &rss, &start)) {
		mgr_metrics_printf(b,
		                   "# HELP process_cpu_seconds_total Total user and system CPU "
		                   "time spent in seconds.\n"
		                   "# TYPE process_cpu_seconds_total "
		                   "counter\nprocess_cpu_seconds_total %.2f\n",
		                   cpu);
		mgr_metrics_printf(
		        b,
		        "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
		        "# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes "
		        "%.0f\n",
		        rss);
		mgr_metrics_printf(b,
		                   "# HELP process_start_time_seconds Start time of the process "
		                   "since unix epoch in seconds.\n"
		                   "# TYPE process_start_time_seconds "
		                   "gauge\nprocess_start_time_seconds %.2f\n",
		                   start);
	}
	/* Every child, labelled: the whole of kcmd is the sum. */
	mgr_metrics_printf(
	        b, "# HELP kcmd_child_cpu_seconds_total CPU seconds of each kcmd child process.\n"
	           "# TYPE kcmd_child_cpu_seconds_total counter\n"
	           "# HELP kcmd_child_resident_memory_bytes Resident memory of each kcmd child "
	           "process "
	           "(shared memory counted in every process that touched it).\n"
	           "# TYPE kcmd_child_resident_memory_bytes gauge\n");
	for (unsigned i = 0; (c = mgr_sup_child(m->sup, i)); i++) {
		struct mgr_child_info info;
		mgr_child_get_info(c, &info);
		if (info.pid > 0 && proc_stats(info.pid, &cpu, &rss, &start)) {
			mgr_metrics_printf(b, "kcmd_child_cpu_seconds_total{process=\"%s\"} %.2f\n",
			                   info.name, cpu);
			mgr_metrics_printf(
			        b, "kcmd_child_resident_memory_bytes{process=\"%s\"} %.0f\n",
			        info.name, rss);
		}
	}
}

/* informerd's per-resource counters (the reflector side of client-go has no standard metric
 * names any more, so these are kcmd's own). */
static void informer_metrics(struct mgr_metrics_buf *b, struct mgr *m)
{
	static const struct {
		enum inf_metric k;
		const char *name, *type, *help;
		double scale;
	} fam[] = {
	        {INF_M_WATCH_EVENTS, "kcmd_informer_watch_events_total", "counter",
	         "Watch events received.", 1},
	        {INF_M_LISTS, "kcmd_informer_list_requests_total", "counter",
	         "LIST requests (pages) sent.", 1},
	        {INF_M_RELISTS, "kcmd_informer_relists_total", "counter",
	         "Relists after the first sync.", 1},
	        {INF_M_WATCHES, "kcmd_informer_watch_requests_total", "counter",
	         "WATCH requests sent.", 1},
	        {INF_M_WATCH_RESTARTS, "kcmd_informer_watch_restarts_total", "counter",
	         "Watches re-opened after a normal end.", 1},
	        {INF_M_EXPIRED, "kcmd_informer_expired_total", "counter",
	         "410 Gone/Expired answers.", 1},
	        {INF_M_BACKOFFS, "kcmd_informer_backoffs_total", "counter",
	         "Backoffs after errors.", 1},
	        {INF_M_LIST_COUNT, "kcmd_informer_list_duration_seconds_count", "counter",
	         "Completed lists.", 1},
	        {INF_M_LIST_USEC_SUM, "kcmd_informer_list_duration_seconds_sum", "counter",
	         "Time spent in completed lists.", 1e-6},
	        {INF_M_LIST_USEC_LAST, "kcmd_informer_last_list_duration_seconds", "gauge",
	         "Duration of the last list.", 1e-6},
	        {INF_M_SYNCED, "kcmd_informer_synced", "gauge",
	         "1 once the resource's cache is synced.", 1},
	        {INF_M_ERRORS, "kcmd_informer_errors_total", "counter",
	         "Objects that could not be decoded or stored.", 1},
	        {INF_M_FILTERED, "kcmd_informer_filtered_total", "counter",
	         "Objects not cached: their namespace's shard range is not this instance's.", 1},
	};
	const struct inf_metrics_hdr *h = m->inf_metrics;

	if (!h)
		return;
	uint64_t n = atomic_load_explicit(
	        &h->n_rows, memory_order_acquire); /* pairs with the row publish (M1) */
	if (n > INF_METRICS_MAX_ROWS)
		n = INF_METRICS_MAX_ROWS;
	for (size_t f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
		mgr_metrics_printf(b, "# HELP %s %s\n# TYPE %s %s\n", fam[f].name, fam[f].help,
		                   fam[f].name, fam[f].type);
		for (uint64_t i = 0; i < n; i++) {
			const struct inf_metrics_row *row = &h->rows[i];
			uint64_t v = atomic_load_explicit(&row->v[fam[f].k], memory_order_relaxed);
			mgr_metrics_printf(b, "%s{group=\"%.*s\",resource=\"%.*s\"} %.9g\n",
			                   fam[f].name, (int)INF_METRICS_NAME_MAX, row->group,
			                   (int)INF_METRICS_NAME_MAX, row->resource,
			                   (double)v * fam[f].scale);
		}
	}
	/* The resume point of each watch: the arena's last synced version (numeric on etcd). */
	struct shm_arena *a = NULL;
	struct shm_stats st;
	if (m->arena_ro_fd >= 0 && shm_reader_open(m->arena_ro_fd, &a) == 0) {
		mgr_metrics_printf(
		        b, "# HELP kcmd_informer_last_synced_resource_version The resourceVersion "
		           "each "
		           "resource's cache is synced at (where a restarted informerd resumes).\n"
		           "# TYPE kcmd_informer_last_synced_resource_version gauge\n");
		if (shm_reader_stats(a, &st) == 0)
			for (uint64_t t = 0; t < st.n_types; t++) {
				struct shm_type_info ti;
				char *end;
				if (shm_reader_type_info(a, (uint16_t)t, &ti) < 0 || !ti.rv[0])
					continue;
				double rv = strtod(ti.rv, &end);
				if (*end)
					continue; /* not a number: nothing sensible to plot */
				mgr_metrics_printf(b,
				                   "kcmd_informer_last_synced_resource_version{"
				                   "group=\"%s\",resource=\"%s\"} %.0f\n",
				                   ti.group, ti.resource, rv);
			}
		/* the cache's size, as kcmctl top shows it (the dashboard's cache panel) */
		if (shm_reader_stats(a, &st) == 0) {
			mgr_metrics_printf(
			        b, "# HELP kcmd_cache_objects Objects in the shared cache, per "
			           "resource.\n# TYPE kcmd_cache_objects gauge\n");
			for (uint64_t t = 0; t < st.n_types; t++) {
				struct shm_type_info ti;
				if (shm_reader_type_info(a, (uint16_t)t, &ti) == 0)
					mgr_metrics_printf(
					        b,
					        "kcmd_cache_objects{group=\"%s\",resource="
					        "\"%s\"} %llu\n",
					        ti.group, ti.resource,
					        (unsigned long long)ti.count);
			}
			mgr_metrics_printf(
			        b,
			        "# HELP kcmd_cache_live_bytes Bytes of live records in "
			        "the shared cache (the arena).\n# TYPE kcmd_cache_live_bytes "
			        "gauge\nkcmd_cache_live_bytes %llu\n",
			        (unsigned long long)st.live_bytes);
		}
		shm_arena_close(a);
	}
	mgr_metrics_printf(
	        b,
	        "# HELP kcmd_informer_restarts_total informerd attaches after the first.\n"
	        "# TYPE kcmd_informer_restarts_total counter\nkcmd_informer_restarts_total %llu\n",
	        (unsigned long long)atomic_load_explicit(&h->restarts, memory_order_relaxed));
	mgr_metrics_printf(
	        b,
	        "# HELP kcmd_leader_cache_barrier_total Acquisition barriers completed: every "
	        "cache "
	        "relisted at least as new as the Lease write that won.\n"
	        "# TYPE kcmd_leader_cache_barrier_total counter\n"
	        "kcmd_leader_cache_barrier_total %llu\n"
	        "# HELP kcmd_leader_cache_barrier_seconds_sum Time from an acquisition to its "
	        "caches "
	        "caught up, summed.\n"
	        "# TYPE kcmd_leader_cache_barrier_seconds_sum counter\n"
	        "kcmd_leader_cache_barrier_seconds_sum %.6f\n"
	        "# HELP kcmd_leader_cache_barrier_last_seconds The last acquisition's barrier.\n"
	        "# TYPE kcmd_leader_cache_barrier_last_seconds gauge\n"
	        "kcmd_leader_cache_barrier_last_seconds %.6f\n",
	        (unsigned long long)atomic_load_explicit(&h->barriers, memory_order_relaxed),
	        (double)atomic_load_explicit(&h->barrier_usec_sum, memory_order_relaxed) / 1e6,
	        (double)atomic_load_explicit(&h->barrier_usec_last, memory_order_relaxed) / 1e6);
}

/* rest_client_requests_total{code,method,host} and rest_client_request_duration_seconds{verb,host}
 * summed over every kcmd process (kube/restmetrics.h); rows with equal keys are merged. */
struct rm_agg {
	struct kube_rest_metrics_row rows[KUBE_RM_ROWS];
	char keys[KUBE_RM_ROWS][2][KUBE_RM_HOST_MAX + 8];
	unsigned n;
};

static void rm_collect(const struct kube_rest_metrics_row *row, void *ud)
{
	struct rm_agg *a = ud;
	unsigned i;

	for (i = 0; i < a->n; i++)
		if (a->rows[i].code == row->code && !strcmp(a->rows[i].method, row->method) &&
		    !strcmp(a->rows[i].host, row->host))
			break;
	if (i == a->n) {
		if (a->n >= KUBE_RM_ROWS)
			return;
		a->n++;
		a->rows[i] = (struct kube_rest_metrics_row){.code = row->code};
		snprintf(a->keys[i][0], sizeof(a->keys[i][0]), "%s", row->method);
		snprintf(a->keys[i][1], sizeof(a->keys[i][1]), "%s", row->host);
		a->rows[i].method = a->keys[i][0];
		a->rows[i].host = a->keys[i][1];
	}
	a->rows[i].count += row->count;
	a->rows[i].dur_count += row->dur_count;
	a->rows[i].dur_sum_usec += row->dur_sum_usec;
	for (int k = 0; k < KUBE_RM_NBUCKETS; k++)
		a->rows[i].buckets[k] += row->buckets[k];
}

static void rest_client_metrics(struct mgr_metrics_buf *b, struct mgr *m)
{
	static const double bounds[KUBE_RM_NBUCKETS] = KUBE_RM_BUCKETS_S;
	struct rm_agg *a;
	uint64_t dropped = 0;

	if (m->rest_metrics_fd < 0 || !(a = calloc(1, sizeof(*a))))
		return;
	if (kube_rest_metrics_read(m->rest_metrics_fd, rm_collect, a, &dropped) < 0) {
		free(a);
		return;
	}
	mgr_metrics_printf(
	        b,
	        "# HELP rest_client_requests_total [ALPHA] Number of HTTP requests, partitioned by "
	        "status code, method, and host.\n# TYPE rest_client_requests_total counter\n");
	for (unsigned i = 0; i < a->n; i++) {
		char code[16];
		if (a->rows[i].code)
			snprintf(code, sizeof(code), "%d", a->rows[i].code);
		else
			snprintf(code, sizeof(code), "<error>");
		mgr_metrics_printf(
		        b,
		        "rest_client_requests_total{code=\"%s\",host=\"%s\",method=\"%s\"} %llu\n",
		        code, a->rows[i].host, a->rows[i].method,
		        (unsigned long long)a->rows[i].count);
	}
	mgr_metrics_printf(
	        b,
	        "# HELP rest_client_request_duration_seconds [ALPHA] Request latency in seconds. "
	        "Broken "
	        "down by verb, and host.\n# TYPE rest_client_request_duration_seconds histogram\n");
	/* one series per (verb, host): merge the codes */
	bool done[KUBE_RM_ROWS] = {false};
	for (unsigned i = 0; i < a->n; i++) {
		uint64_t bk[KUBE_RM_NBUCKETS] = {0}, cnt = 0, sum = 0;
		if (done[i])
			continue;
		for (unsigned j = i; j < a->n; j++) {
			if (done[j] || strcmp(a->rows[j].method, a->rows[i].method) ||
			    strcmp(a->rows[j].host, a->rows[i].host))
				continue;
			done[j] = true;
			cnt += a->rows[j].dur_count;
			sum += a->rows[j].dur_sum_usec;
			for (int k = 0; k < KUBE_RM_NBUCKETS; k++)
				bk[k] += a->rows[j].buckets[k];
		}
		if (!cnt)
			continue; /* only watches: no latency observed */
		uint64_t cum = 0;
		for (int k = 0; k < KUBE_RM_NBUCKETS; k++) {
			cum += bk[k];
			mgr_metrics_printf(b,
			                   "rest_client_request_duration_seconds_bucket{host=\"%"
			                   "s\",verb=\"%s\",le=\"%g\"} %llu\n",
			                   a->rows[i].host, a->rows[i].method, bounds[k],
			                   (unsigned long long)cum);
		}
		mgr_metrics_printf(
		        b,
		        "rest_client_request_duration_seconds_bucket{host=\"%s\",verb=\"%s\",le=\"+"
		        "Inf\"} %llu\n"
		        "rest_client_request_duration_seconds_sum{host=\"%s\",verb=\"%s\"} %.6f\n"
		        "rest_client_request_duration_seconds_count{host=\"%s\",verb=\"%s\"} "
		        "%llu\n",
		        a->rows[i].host, a->rows[i].method, (unsigned long long)cnt,
		        a->rows[i].host, a->rows[i].method, (double)sum / 1e6, a->rows[i].host,
		        a->rows[i].method, (unsigned long long)cnt);
	}
	mgr_metrics_printf(b,
	                   "# HELP kcmd_rest_client_requests_dropped_total Requests not counted in "
	                   "rest_client_* "
	                   "because the shared table was full.\n# TYPE "
	                   "kcmd_rest_client_requests_dropped_total counter\n"
	                   "kcmd_rest_client_requests_dropped_total %llu\n",
	                   (unsigned long long)dropped);
	uint64_t ev_dropped = 0;
	if (kube_rest_metrics_events_dropped(m->rest_metrics_fd, &ev_dropped) == 0)
		mgr_metrics_printf(b,
		                   "# HELP kcmd_events_dropped_total Events not written because a "
		                   "recorder's queue was full (client-go drops them with an error "
		                   "line).\n# TYPE kcmd_events_dropped_total counter\n"
		                   "kcmd_events_dropped_total %llu\n",
		                   (unsigned long long)ev_dropped);
	free(a);
}

/* kcm v1.37's z-pages in their text form (component-base zpages: statusz, flagz; on by default
 * in v1.37, ComponentStatusz/ComponentFlagz beta): a header naming the component, the warning
 * that the text is not an API, then the fields. kcmd's component name is kcmd; "Emulation
 * version" is the kube-controller-manager release whose behaviour it follows. */
static int zpage(void *ud, const char *page, char **ret, size_t *ret_len)
{
	struct mgr *m = ud;
	char *out = NULL, started[64];
	size_t len = 0;
	FILE *f;
	time_t t0 = (time_t)(m->started_unix_usec / 1000000);
	struct tm tm;
	int64_t up = (unix_usec() - m->started_unix_usec) / 1000000;

	if (strcmp(page, "flagz") == 0)
		return mgr_flags_flagz(&m->cfg, ret, ret_len);
	if (!(f = open_memstream(&out, &len)))
		return -ENOMEM;
	localtime_r(&t0, &tm);
	strftime(started, sizeof(started), "%a %b %e %H:%M:%S %Z %Y", &tm);
	fprintf(f, "\nkcmd statusz\nWarning: This endpoint is not meant to be machine parseable, "
	           "has no "
	           "formatting compatibility guarantees and is for debugging purposes only.\n\n");
	fprintf(f, "Started:  %s\n", started);
	fprintf(f, "Up:  %lld hr %02lld min %02lld sec\n", (long long)(up / 3600),
	        (long long)(up % 3600 / 60), (long long)(up % 60));
	fprintf(f, "Binary version:  %s\n", KCMD_VERSION);
	fprintf(f, "Emulation version:  1.37\n");
	fprintf(f, "Paths:  /flagz /healthz /livez /metrics /readyz\n");
	if (fclose(f) != 0) {
		free(out);
		return -ENOMEM;
	}
	*ret = out;
	*ret_len = len;
	return 0;
}

static void metrics(struct mgr_metrics_buf *b, void *ud)
{
	struct mgr *m = ud;
	struct mgr_child *c;

	process_metrics(b, m);
	mgr_metrics_printf(
	        b,
	        "# HELP leader_election_master_status [ALPHA] Gauge of if the reporting system is "
	        "master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is "
	        "the "
	        "string used to identify the lease. Please make sure to group by name.\n"
	        "# TYPE leader_election_master_status gauge\n");
	mgr_metrics_printf(b, "leader_election_master_status{name=\"%s\"} %d\n",
	                   m->cfg.leader_elect_resource_name, m->leading ? 1 : 0);
	mgr_metrics_printf(b,
	                   "# HELP kcmd_child_restarts_total Restarts of each kcmd child process.\n"
	                   "# TYPE kcmd_child_restarts_total counter\n");
	for (unsigned i = 0; (c = mgr_sup_child(m->sup, i)); i++) {
		struct mgr_child_info info;
		mgr_child_get_info(c, &info);
		mgr_metrics_printf(b, "kcmd_child_restarts_total{process=\"%s\"} %llu\n", info.name,
		                   (unsigned long long)info.restarts);
	}
	informer_metrics(b, m);
	rest_client_metrics(b, m);
	for (size_t i = 0; i < m->cfg.n_ctl; i++) {
		struct ctl_rt *ct = &m->ctl[i];
		struct kcmd_text t = {0};
		if (!ct->on || !ct->c->mgr_metrics)
			continue;
		ct->c->mgr_metrics(ct->state, &t);
		if (t.buf && !t.err)
			mgr_metrics_printf(b, "%s", t.buf);
		kcmd_text_free(&t);
	}
	controller_metrics(b, m);
	if (m->n_queues) {
		mgr_metrics_workqueue_headers(b);
		for (unsigned i = 0; i < m->n_queues; i++) {
			struct ipc_queue_metrics qm;
			if (ipc_queue_metrics_read(m->queues[i].fd, &qm) == 0) {
				/* under upstream's workqueue name
				 * (garbage_collector_attempt_to_delete, ...) */
				if (m->queues[i].q->metric_name)
					snprintf(qm.name, sizeof(qm.name), "%s",
					         m->queues[i].q->metric_name);
				mgr_metrics_workqueue(b, &qm);
			}
		}
	}
	for (size_t i = 0; m->inf_metrics && i < m->cfg.n_ctl; i++) {
		const struct kcmd_controller *kc = m->ctl[i].c;
		if (m->ctl[i].on && kc->watch_deletable && kc->discovery_error_metric)
			mgr_metrics_printf(b, "# HELP %s %s\n# TYPE %s counter\n%s %llu\n",
			                   kc->discovery_error_metric,
			                   kc->discovery_error_help ? kc->discovery_error_help : "",
			                   kc->discovery_error_metric, kc->discovery_error_metric,
			                   (unsigned long long)atomic_load_explicit(
			                           &m->inf_metrics->discovery_sync_errors,
			                           memory_order_relaxed));
	}
}

/* A controller's debug endpoint (kcmd_debug_endpoint), over the read-only arena. */
static int debug_route(void *ud, const char *sub, const char *const *vals, size_t n_vals,
                       unsigned *status, const char **ctype, char **body, size_t *len)
{
	const struct debug_route *rt = ud;
	int r = rt->ep->handle(rt->m->arena_ro_fd, sub, vals, n_vals, status, ctype, body, len);

	if (r < 0)
		log_warning("%s%s: %s", rt->ep->path, sub, strerror(-r));
	return r;
}

/* ---- systemd ------------------------------------------------------------------------------- */

static int on_watchdog(struct ipc_source *s, uint64_t now, void *ud)
{
	struct mgr *m = ud;
	char why[128];

	/* The loop ran this timer, so the loop is alive; report READY once caches synced. */
	if (!m->ready_sent && informer_synced(m, why, sizeof(why))) {
		m->ready_sent = true;
		sd_notify(0, "READY=1");
		notify_status(m);
		log_info("ready");
	}
	if (m->watchdog_usec)
		sd_notify(0, "WATCHDOG=1");
	return ipc_source_set_time(s, now + (m->watchdog_usec ? m->watchdog_usec / 2 : 1000000));
}

/* ---- shutdown -------------------------------------------------------------------------------- */

static void finish(struct mgr *m)
{
	if (mgr_sup_running(m->sup, NULL) == 0 && (m->released || !m->lc)) {
		log_info("stopped");
		ipc_loop_exit(m->loop, 0);
	}
}

static void released(void *ud)
{
	struct mgr *m = ud;

	m->released = true;
	log_info("released the lease");
	mgr_sup_signal_group(m->sup, "informerd", SIGTERM, true);
	finish(m);
}

static int on_stop_timer(struct ipc_source *s, uint64_t now, void *ud)
{
	struct mgr *m = ud;

	(void)s;
	(void)now;
	/* Grace is over: whatever still runs is killed; a release still in flight is abandoned.
	 * Fence first: no write after this, and the queue owners count these deaths as no crash. */
	kube_fence_set(m->fence, 0);
	mgr_sup_signal_group(m->sup, "workers", SIGKILL, true);
	mgr_sup_signal_group(m->sup, "informerd", SIGKILL, true);
	m->released = true;
	m->release_started = true;
	finish(m);
	return 0;
}

/* --shard-ranges, stopping: every range Lease is given up; now the member Lease. */
static void shard_released(void *ud)
{
	struct mgr *m = ud;

	log_info("shard: every range Lease released");
	mgr_lease_client_release(m->lc, released, m);
}

/* Stopping, second step: once no worker runs (none can write any more), give the Lease up so a
 * standby takes over at once, and stop informerd. */
static void release_when_workers_gone(struct mgr *m)
{
	if (!m->stopping || m->release_started || mgr_sup_running(m->sup, "workers") > 0)
		return;
	m->release_started = true;
	kube_fence_set(m->fence, 0); /* nothing of ours writes once the Lease is given up */
	if (m->shard) { /* the range Leases first, then the member Lease (shard_released) */
		mgr_shard_release_all(m->shard, shard_released, m);
	} else if (m->lc) {
		mgr_lease_client_release(m->lc, released, m);
	} else {
		m->released = true;
		mgr_sup_signal_group(m->sup, "informerd", SIGTERM, true);
	}
}

static int on_signal(struct ipc_source *s, const struct signalfd_siginfo *si, void *ud)
{
	struct mgr *m = ud;

	(void)s;
	if (m->stopping) {
		log_warning("second signal %u: exiting now", si->ssi_signo);
		ipc_loop_exit(m->loop, 1);
		return 0;
	}
	m->stopping = true;
	sd_notify(0, "STOPPING=1");
	/* Workers finish the key in hand and exit; the Lease is released only after the last one
	 * is gone, so no write of ours can follow the release. */
	int n = mgr_sup_signal_group(m->sup, "workers", SIGTERM, true);
	log_info("signal %u: stopping %d worker process%s, then releasing the lease and stopping "
	         "informerd",
	         si->ssi_signo, n, n == 1 ? "" : "es");
	notify_status(m);
	ipc_loop_add_timer(m->loop, &m->stop_timer,
	                   ipc_now_usec() + STOP_GRACE_USEC + m->cfg.leader_elect_renew_deadline_us,
	                   on_stop_timer, m);
	release_when_workers_gone(m);
	finish(m);
	return 0;
}

static void on_any_exit(struct mgr_child *c, const struct mgr_child_info *info, void *ud)
{
	struct mgr *m = ud;

	/* Repair what the dead process held in each controller's shared state (e.g. claimed
	 * ReplicaSet expectation slots; queue items are re-queued by the queue owner through its
	 * own pidfd watch). */
	for (size_t i = 0; i < m->cfg.n_ctl; i++) {
		struct ctl_rt *ct = &m->ctl[i];
		if (!ct->on || !ct->c->mgr_child_died)
			continue;
		int n = ct->c->mgr_child_died(ct->state, info->last_pid, info->name,
		                              info->last_code != CLD_EXITED);
		if (n > 0)
			log_info("%s: repaired %d item%s held by %s", ct->c->name, n,
			         n == 1 ? "" : "s", info->name);
	}
	on_child_exit(c, info, ud);
	if (m->term_end && info->last_pid > 0)
		mgr_term_end_reaped(m->term_end, info->last_pid);
	if (m->stopping) {
		release_when_workers_gone(m);
		finish(m);
	}
}

/* ---- main ---------------------------------------------------------------------------------- */

/* `kcmd bench ...` runs the program kcmd-bench (bench/), found like the other helper
 * programs: next to this binary (build tree) or in ../libexec/kcmd. It is told this binary's
 * path (KCMD_BENCH_KCMD) because it starts kcmd itself. */
static int exec_bench(int argc, char **argv)
{
	char self[PATH_MAX], path[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	(void)argc;
	if (n <= 0) {
		fprintf(stderr, "kcmd bench: cannot find my own path\n");
		return 1;
	}
	self[n] = 0;
	setenv("KCMD_BENCH_KCMD", self, 1);
	*strrchr(self, '/') = 0;
	snprintf(path, sizeof(path), "%s/kcmd-bench", self);
	if (access(path, X_OK) < 0)
		snprintf(path, sizeof(path), "%s/../libexec/kcmd/kcmd-bench", self);
	argv[1] = path;
	execv(path, argv + 1);
	fprintf(stderr, "kcmd bench: cannot run %s: %s\n", path, strerror(errno));
	return 1;
}

/* kcm's words for a GA or deprecated gate set on the command line (an info line in kcm) */
static void gate_warning(const char *gate, bool value, bool deprecated, void *arg)
{
	char f1[160], f2[32];
	const char *fields[] = {f1, f2, NULL};
	(void)arg;
	snprintf(f1, sizeof(f1), "featureGate=%s", gate);
	snprintf(f2, sizeof(f2), "value=%s", value ? "true" : "false");
	kclog_log(KCLOG_INFO, __FILE__, __LINE__, fields,
	          "Warning: setting %s feature gate. It will be removed in a future release.",
	          deprecated ? "deprecated" : "GA");
}

int main(int argc, char **argv)
{
	struct mgr *m = &(struct mgr){.arena_fd = -1,
	                              .arena_ro_fd = -1,
	                              .inf_metrics_fd = -1,
	                              .feed_fd = -1,
	                              .feed_consumer_fd = -1,
	                              .fence_fd = -1,
	                              .rest_metrics_fd = -1,
	                              .status_fd = -1};
	char err[4096]; /* kcm's aggregated --feature-gates errors are long */
	int r;

	if (argc > 1 && !strcmp(argv[1], "bench"))
		return exec_bench(argc,
		                  argv); /* `kcmd bench`: the benchmark driver (docs/bench.md) */
	kclog_init("kcmd", NULL, 0);
	/* plug-ins first: they join the registry every flag below is derived from */
	if (kcmd_registry_load_args(argc, argv, err, sizeof(err)) < 0) {
		fprintf(stderr, "kcmd: --controller-plugins: %s\n", err);
		return 2;
	}
	if (kcmd_registry_validate(err, sizeof(err)) < 0) {
		fprintf(stderr, "kcmd: this build's controller registry is broken: %s\n", err);
		return 1;
	}
	if (mgr_config_defaults(&m->cfg) < 0) {
		fprintf(stderr, "kcmd: out of memory\n");
		return 1;
	}
	if (mgr_flags_parse(&m->cfg, argc, argv, err, sizeof(err)) < 0) {
		fprintf(stderr, "kcmd: %s\n", err);
		return 2;
	}
	if (m->cfg.help) {
		mgr_flags_usage(stdout);
		return 0;
	}
	if (m->cfg.version) {
		printf("kcmd %s\n", KCMD_VERSION);
		return 0;
	}
	kclog_set_verbosity(m->cfg.v);
	/* --logging-format and --vmodule: this process now, every child through its environment
	 * (kclog_init reads KCMD_LOGGING_FORMAT and KCMD_VMODULE) */
	if (kclog_set_format(m->cfg.logging_format) < 0) {
		fprintf(stderr,
		        "kcmd: --logging-format: Unsupported value: \"%s\": supported values: "
		        "\"json\", \"text\"\n",
		        m->cfg.logging_format);
		return 2;
	}
	if (kclog_set_vmodule(m->cfg.vmodule) < 0) {
		fprintf(stderr, "kcmd: --vmodule: expected pattern=N[,pattern=N...] (at most %d)\n",
		        KCLOG_VMODULE_MAX);
		return 2;
	}
	if (setenv("KCMD_LOGGING_FORMAT", m->cfg.logging_format ? m->cfg.logging_format : "text",
	           1) < 0 ||
	    setenv("KCMD_VMODULE", m->cfg.vmodule ? m->cfg.vmodule : "", 1) < 0) {
		fprintf(stderr, "kcmd: out of memory\n");
		return 1;
	}
	/* kube-controller-manager's flags and gates that kcmd accepts without effect: each said
	 * once, so nothing given is silently ignored */
	for (size_t i = 0; i < m->cfg.n_kcm_noop; i++)
		log_warning("%s (accepted for kube-controller-manager compatibility, no effect)",
		            m->cfg.kcm_noop[i]);
	/* kcm's warning for each GA or deprecated gate named */
	kcmd_features_each_warning(&m->cfg.features, gate_warning, NULL);
	{
		char ign[2048];
		/* the gates kcmd's controllers require are acted on (they start or not) */
		const char *acted[64];
		size_t na = 0;
		for (size_t i = 0; i < kcmd_registry_count(); i++) {
			const struct kcmd_controller *c = kcmd_registry_at(i);
			for (size_t g = 0; c->feature_gates && c->feature_gates[g] && na < 63; g++)
				acted[na++] = c->feature_gates[g];
		}
		acted[na] = NULL;
		int n = kcmd_features_ignored(&m->cfg.features, acted, ign, sizeof(ign));
		if (n != 0)
			log_warning(
			        "--feature-gates: %s: kube-controller-manager gates kcmd does not "
			        "act on (accepted, no effect)",
			        n > 0 ? ign : "(more than fit here)");
	}
	/* kcm's BuildController: a selected controller whose required gate is off is skipped
	 * (its gates as klog renders a []Feature: JSON) */
	for (size_t i = 0; i < m->cfg.n_ctl; i++) {
		const struct kcmd_controller *c = m->cfg.ctl[i].desc;
		char gates[256] = "";
		if (!m->cfg.ctl[i].gated_off)
			continue;
		for (size_t g = 0, len = 0;
		     c->feature_gates && c->feature_gates[g] && len < sizeof(gates); g++)
			len += (size_t)snprintf(gates + len, sizeof(gates) - len, "%s\"%s\"",
			                        g ? "," : "", c->feature_gates[g]);
		log_info("Controller is disabled by a feature gate controller=\"%s\" "
		         "requiredFeatureGates=[%s]",
		         c->name, gates);
		log_info("Warning: skipping controller controller=\"%s\"", c->name);
	}
	if (!m->cfg.controllers_arg || strchr(m->cfg.controllers_arg, '*')) {
		char missing[2048];
		size_t k = kcm_controllers_missing(missing, sizeof(missing));
		if (k)
			log_warning(
			        "--controllers: '*' in kube-controller-manager v1.37 also covers "
			        "%zu controllers (some only behind feature gates) that kcmd does "
			        "not "
			        "build, so nothing runs them here: %s (run them in "
			        "kube-controller-manager beside kcmd)",
			        k, missing);
	}
	if (!(m->ctl = calloc(m->cfg.n_ctl ? m->cfg.n_ctl : 1, sizeof(*m->ctl)))) {
		fprintf(stderr, "kcmd: out of memory\n");
		return 1;
	}
	for (size_t i = 0; i < m->cfg.n_ctl; i++) {
		m->ctl[i] = (struct ctl_rt){.m = m,
		                            .c = m->cfg.ctl[i].desc,
		                            .on = m->cfg.ctl[i].enabled,
		                            .client_bucket_fd = -1,
		                            .sa_token_fd = -1,
		                            .metrics_fd = -1};
		m->any_controller |= m->ctl[i].on && !m->ctl[i].c->hidden;
	}
	signal(SIGPIPE, SIG_IGN);

	r = ipc_loop_new(&m->loop, IPC_LOOP_BACKEND_AUTO);
	if (r < 0) {
		log_error("cannot create the event loop: %s", strerror(-r));
		return 1;
	}
	if (ipc_loop_fallback_reason(m->loop))
		log_warning("io_uring unavailable (%s); using the epoll backend",
		            strerror(ipc_loop_fallback_reason(m->loop)));

	struct kube_config_opts co = {.kubeconfig = m->cfg.kubeconfig, .master = m->cfg.master};
	r = kube_config_load(&co, &m->kcfg, err, sizeof(err));
	if (r < 0) {
		log_error("kubeconfig: %s", err);
		return 1;
	}
	if (m->kcfg->insecure_skip_tls_verify)
		log_warning("insecure-skip-tls-verify is set: the apiserver's certificate is NOT "
		            "verified");
	/* rest_client_* of every kcmd process: this one counts too */
	m->rest_metrics_fd = kube_rest_metrics_create();
	if (m->rest_metrics_fd < 0 || kube_rest_metrics_attach(m->rest_metrics_fd) < 0)
		log_warning("rest_client metrics unavailable: %s",
		            strerror(m->rest_metrics_fd < 0 ? -m->rest_metrics_fd : EINVAL));
	struct kube_client_opts ko = {.config = m->kcfg,
	                              .process = "kcmd",
	                              .controller = "leader-election",
	                              .qps = m->cfg.kube_api_qps,
	                              .burst = m->cfg.kube_api_burst,
	                              .insecure_ok = true,
	                              /* kcm's leader-election client is made from the same
	                               * rest config: Lease and Event bodies as protobuf */
	                              .content_type = m->cfg.kube_api_content_type};
	r = kube_client_new(&ko, &m->kc);
	if (r < 0) {
		log_error("cannot create the API client for %s: %s", m->kcfg->server, strerror(-r));
		return 1;
	}
	r = kube_loop_attach(m->loop, m->kc, &m->kl);
	if (r < 0)
		return 1;
	if (make_identity(m->identity, sizeof(m->identity)) < 0) {
		log_error("cannot make a leader-election identity");
		return 1;
	}
	find_libexec(m);
	m->started_unix_usec = unix_usec();
	if ((r = mgr_status_create(&m->status, &m->status_fd)) < 0)
		log_warning("kcmctl status unavailable: %s", strerror(-r));
	else
		ipc_loop_add_timer(m->loop, &m->status_timer, ipc_now_usec() + 1000000,
		                   on_status_timer, m);
	/* before setup_children: without the timer every worker starts with its controller */
	if (m->cfg.worker_idle_timeout_us &&
	    (r = ipc_loop_add_timer(m->loop, &m->pool_timer, ipc_now_usec() + POOL_TICK_USEC,
	                            on_pool_timer, m)) < 0) {
		log_warning("worker pools: no timer (%s): every worker process starts with its "
		            "controller",
		            strerror(-r));
		m->cfg.worker_idle_timeout_us = 0;
	}
	/* The children see the feature gates (canonical form: every gate kcmd knows). */
	char gates[512];
	if (kcmd_features_format(&m->cfg.features, gates, sizeof(gates)) > 0)
		setenv("KCMD_FEATURE_GATES", gates, 1);
	if (m->cfg.use_service_account_credentials && m->any_controller) {
		/* upstream's account names: kube-system/<name>, bound to system:controller:<name>
		 */
		r = mgr_sa_tokens_new(m->loop, m->kc, "kube-system", on_tokens_ready, m,
		                      &m->sa_tokens);
		for (size_t i = 0; r >= 0 && i < m->cfg.n_ctl; i++)
			if (m->ctl[i].on && m->ctl[i].c->service_account &&
			    (r = mgr_sa_tokens_add(m->sa_tokens, m->ctl[i].c->service_account)) >=
			            0)
				m->ctl[i].sa_token_fd = r;
		if (r < 0) {
			log_error("--use-service-account-credentials: %s", strerror(-r));
			return 1;
		}
		mgr_sa_tokens_start(m->sa_tokens);
	}
	for (size_t i = 0; i < m->cfg.n_ctl; i++) {
		const struct kcmd_controller *c = m->ctl[i].c;
		if (!m->ctl[i].on || !c->mgr_precheck)
			continue;
		err[0] = 0;
		r = c->mgr_precheck(m->cfg.ctl[i].values, m->kcfg, err, sizeof(err));
		if (r == -EEXIST) {
			log_error("%s", err);
			return 1;
		}
		if (r == -ECANCELED) { /* kcm's "disabled" start result: it does not run */
			log_warning("%s", err);
			m->ctl[i].on = false;
			continue;
		}
		if (r < 0)
			log_warning("%s; %s checks again when it starts", err, c->name);
		else if (err[0])
			log_warning("%s", err);
	}
	r = setup_children(m);
	if (r < 0)
		return 1;
	if ((r = ipc_loop_add_signal(m->loop, &m->sig_term, SIGTERM, on_signal, m)) < 0 ||
	    (r = ipc_loop_add_signal(m->loop, &m->sig_int, SIGINT, on_signal, m)) < 0) {
		log_error("cannot handle signals: %s", strerror(-r));
		return 1;
	}
	if (m->cfg.secure_port > 0) {
		struct mgr_httpd_config hc = {
		        .bind_address = m->cfg.bind_address,
		        .port = m->cfg.secure_port,
		        .tls_cert_file = m->cfg.tls_cert_file,
		        .tls_key_file = m->cfg.tls_private_key_file,
		        .cert_dir = m->cfg.cert_dir,
		        .auth = &m->cfg.auth,
		        .tls13_only = m->cfg.tls_min_version &&
		                      !strcmp(m->cfg.tls_min_version, "VersionTLS13")};
		r = mgr_httpd_new(m->loop, &hc, &m->httpd, err, sizeof(err));
		if (r < 0) {
			log_error("--secure-port %d: %s", m->cfg.secure_port, err);
			return 1;
		}
		mgr_httpd_add_check(m->httpd, "leaderElection", MGR_CHECK_LIVE | MGR_CHECK_READY,
		                    check_leader, m);
		mgr_httpd_add_check(m->httpd, "informer-sync", MGR_CHECK_READY, check_informer, m);
		mgr_httpd_add_check(m->httpd, "processes", MGR_CHECK_LIVE | MGR_CHECK_READY,
		                    check_children, m);
		if (m->sa_tokens)
			mgr_httpd_add_check(m->httpd, "serviceaccount-tokens", MGR_CHECK_READY,
			                    check_tokens, m);
		size_t n_routes = 0;
		for (size_t i = 0; i < m->cfg.n_ctl; i++) {
			if (!m->ctl[i].on || m->ctl[i].c->hidden)
				continue;
			mgr_httpd_add_check(m->httpd, m->ctl[i].c->name,
			                    MGR_CHECK_LIVE | MGR_CHECK_READY, check_controller,
			                    &m->ctl[i]);
			n_routes += m->ctl[i].c->n_debug;
		}
		mgr_httpd_set_metrics(m->httpd, metrics, m);
		mgr_httpd_set_zpages(m->httpd, zpage, m);
		if (n_routes && m->arena_ro_fd >= 0 &&
		    (m->routes = calloc(n_routes, sizeof(*m->routes)))) {
			size_t k = 0;
			for (size_t i = 0; i < m->cfg.n_ctl; i++)
				for (size_t d = 0; m->ctl[i].on && !m->ctl[i].c->hidden &&
				                   d < m->ctl[i].c->n_debug;
				     d++) {
					m->routes[k] =
					        (struct debug_route){m, &m->ctl[i].c->debug[d]};
					mgr_httpd_add_handler(m->httpd, m->routes[k].ep->path,
					                      m->routes[k].ep->query, debug_route,
					                      &m->routes[k]);
					k++;
				}
		}
		log_info("serving /healthz /livez /readyz /metrics on https://%s:%d",
		         m->cfg.bind_address, mgr_httpd_port(m->httpd));
		log_info("delegated %s", mgr_httpd_auth_summary(m->httpd));
	}
	if (sd_watchdog_enabled(0, &m->watchdog_usec) <= 0)
		m->watchdog_usec = 0;
	ipc_loop_add_timer(m->loop, &m->watchdog, ipc_now_usec(), on_watchdog, m);

	char enabled[1024] = "";
	for (size_t i = 0, len = 0; i < m->cfg.n_ctl && len < sizeof(enabled); i++)
		if (m->ctl[i].on && !m->ctl[i].c->hidden)
			len += (size_t)snprintf(enabled + len, sizeof(enabled) - len, " %s",
			                        m->ctl[i].c->name);
	log_info("kcmd %s starting: identity %s, controllers:%s, apiserver %s", KCMD_VERSION,
	         m->identity, m->any_controller ? enabled : " (none)", m->kcfg->server);
	if (m->cfg.standby_warm_cache)
		start_group(m, "informerd");
	if (m->cfg.leader_elect) {
		if (mgr_term_end_new(on_term_emit, m, &m->term_end) < 0) {
			log_error("out of memory");
			return 1;
		}
		const char *lease_name = m->cfg.leader_elect_resource_name;
		if (m->cfg.shard_ranges > 0) {
			if (mgr_shard_member_lease_name(m->cfg.leader_elect_resource_name,
			                                m->identity, m->member_lease,
			                                sizeof(m->member_lease)) < 0) {
				log_error(
				        "--shard-ranges: the member Lease name for %s is too long",
				        m->identity);
				return 1;
			}
			lease_name = m->member_lease;
			struct mgr_shard_opts so = {
			        .ns = m->cfg.leader_elect_resource_namespace,
			        .lease_name = m->cfg.leader_elect_resource_name,
			        .identity = m->identity,
			        .nranges = (unsigned)m->cfg.shard_ranges,
			        .lease_duration_us = m->cfg.leader_elect_lease_duration_us,
			        .renew_deadline_us = m->cfg.leader_elect_renew_deadline_us,
			        .retry_period_us = m->cfg.leader_elect_retry_period_us,
			        .fence = m->fence,
			        .on_acquired = on_range_acquired,
			        .userdata = m,
			        /* the range Leases' own client and budget (docs/sharding.md) */
			        .config = m->kcfg,
			        .content_type = m->cfg.kube_api_content_type,
			        .qps = m->cfg.kube_api_qps,
			        .burst = m->cfg.kube_api_burst,
			};
			if (!m->test_shard_all &&
			    (r = mgr_shard_new(m->loop, m->kc, &so, &m->shard)) < 0) {
				log_error("--shard-ranges: %s", strerror(-r));
				return 1;
			}
			log_info("sharding: %d namespace ranges, member Lease %s/%s",
			         m->cfg.shard_ranges, m->cfg.leader_elect_resource_namespace,
			         m->member_lease);
		}
		struct mgr_lease_client_opts lo = {
		        .ns = m->cfg.leader_elect_resource_namespace,
		        .name = lease_name,
		        .identity = m->identity,
		        .lease_duration_us = m->cfg.leader_elect_lease_duration_us,
		        .renew_deadline_us = m->cfg.leader_elect_renew_deadline_us,
		        .retry_period_us = m->cfg.leader_elect_retry_period_us,
		        .on_change = on_leadership,
		        .userdata = m,
		        .record_events = true,
		        .on_deadline = on_fence_deadline,
		        .on_event = on_term_event,
		};
		r = mgr_lease_client_new(m->loop, m->kc, &lo, &m->lc, err, sizeof(err));
		if (r < 0) {
			log_error("leader election: %s", err);
			return 1;
		}
	} else {
		kube_fence_set(m->fence, KUBE_FENCE_NONE); /* no election: always the leader */
		on_leadership(true, m);
	}
	notify_status(m);
	r = ipc_loop_run(m->loop);

	mgr_shard_free(m->shard);
	mgr_lease_client_free(m->lc);
	mgr_term_end_free(m->term_end);
	kube_fence_close(m->fence);
	mgr_sa_tokens_free(m->sa_tokens);
	mgr_status_free(m->status);
	free(m->unsynced);
	mgr_httpd_free(m->httpd);
	mgr_sup_free(m->sup);
	for (size_t i = 0; i < m->cfg.n_ctl; i++) {
		if (m->ctl[i].on && m->ctl[i].c->mgr_fini)
			m->ctl[i].c->mgr_fini(m->ctl[i].state);
		free(m->ctl[i].pool);
		ctlm_detach(m->ctl[i].metrics);
		if (m->ctl[i].metrics_fd >= 0)
			close(m->ctl[i].metrics_fd);
	}
	free(m->ctl);
	free(m->routes);
	free(m->queues);
	mgr_config_free(&m->cfg);
	kube_loop_detach(m->kl);
	kube_client_free(m->kc);
	kube_config_free(m->kcfg);
	ipc_loop_free(m->loop);
	return r < 0 ? 1 : r;
}
