/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/main.c: `kcmd-worker --controller=<name>`, one worker process of one controller.
 *
 * Started by the manager with the environment contract of docs/architecture.md
 * (KCMD_ARENA_FD read-only, KCMD_QUEUE_FDS, KCMD_EXPECTATIONS_FD, KCMD_PROCESS). It attaches to
 * its controller's queues as a worker (one key at a time), waits in its event loop until the
 * cache has listed every resource the controller watches (workers/cachewait.h, upstream's
 * WaitForNamedCacheSync), then waits for keys, runs the controller's sync for each, and reports
 * the outcome with Done (Forget, AddRateLimited or AddAfter folded in). SIGTERM: finish the key in
 * hand (syncs are synchronous, so there is none when the signal is read) and exit 0. A crash loses
 * nothing: the queue's owner re-queues the key.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/childenv.h"
#include "ipc/loop.h"
#include "ipc/queue.h"
#include "kube/client.h"
#include "kube/proto.h"
#include "kube/config.h"
#include "kube/limiter.h"
#include "controllers/registry.h"
#include "lib/ctlmetrics.h"
#include "lib/evrec.h"
#include "lib/fence-env.h"
#include "lib/goflag.h"
#include "lib/log.h"
#include "workers/cachewait.h"
#include "workers/worker.h"
#include "workers/zygote.h"

struct wq {
	const char *name;
	size_t index;
	struct ipc_queue *q;
};

struct worker {
	struct wk_ctx ctx;
	const struct wk_controller *ctrl;
	void *state;
	struct wq *queues;
	size_t n_queues;
	uint64_t synced, failed;
	struct wk_cachewait *cw; /* the start barrier while it waits */
	const struct kcmd_controller *desc;
	enum kube_shard_keys shard_keys; /* how its keys name a namespace (--shard-ranges) */
	bool shard_self; /* the controller drops the keys of other ranges itself (the GC) */
	uint64_t shard_gen_synced; /* --shard-ranges: the range generation the cache was seen
	                              synced for (the barrier of a range acquisition) */
	uint64_t shard_skipped;
};

#define SHARD_WAIT_USEC 100000ull /* a key of a range just acquired, before the relist */

/* --shard-ranges (docs/sharding.md): 1 take the key; 0 skip it (done: its range is not ours,
 * its owner's dispatcher queues it); -1 not yet (a range was acquired since the cache was last
 * seen synced: the relist at least as new as its Lease has not finished). */
static int shard_gate(struct worker *w, const char *key)
{
	if (!kcmd_shard_ranges())
		return 1;
	if (!w->shard_self && !kcmd_shard_key_owned(w->shard_keys, key))
		return 0;
	uint64_t gen = kcmd_shard_gen();
	if (gen != w->shard_gen_synced) {
		char why[256];
		if (wk_cachewait_pending(w->ctx.arena, w->desc->watches, w->desc->n_watches, why,
		                         sizeof(why)) > 0)
			return -1;
		w->shard_gen_synced = gen;
	}
	return 1;
}

/* ---- range 0 for a controller with a main of its own (--shard-ranges) -----------------------
 * A worker_main controller that is not sharded by namespace (the pod GC, the kubelet simulator)
 * takes no keys through shard_gate: it would run on every instance and have its writes refused
 * by range 0's fence wherever it does not own range 0. Instead its process idles here, before
 * worker_main, until this instance owns range 0 (no request at all: it reads the fence page
 * every RANGE0_POLL_USEC), and once it runs, a watchdog thread sends it SIGTERM when range 0 is
 * no longer owned; it exits as on any SIGTERM and the manager restarts it (backoff), to idle
 * here again. The state is the fence page alone, so a crash or a restart at any point starts
 * over from it. Rejected: starting and stopping these processes from the manager on range 0's
 * acquisition and loss (a third process group beside "informerd" and "workers", with its own
 * start, kill and shutdown paths in the manager), more code in the process that must not fail
 * for the same effect. */
#define RANGE0_POLL_USEC 100000ull

/* 1 range 0 is owned (or sharding is off), 0 SIGTERM/SIGINT came first. */
static int range0_wait(const char *controller)
{
	sigset_t set, old;
	struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)RANGE0_POLL_USEC * 1000};
	bool said = false;
	int r = 1;

	if (kcmd_shard_range_owned(0))
		return 1;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, &old);
	while (!kcmd_shard_range_owned(0)) {
		if (!said) {
			fprintf(stderr,
			        "kcmd-worker: %s: shard: idle until this instance owns range 0\n",
			        controller);
			said = true;
		}
		int sig = sigtimedwait(&set, NULL, &ts);
		if (sig == SIGTERM || sig == SIGINT) {
			r = 0;
			break;
		}
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (r)
		fprintf(stderr, "kcmd-worker: %s: shard: range 0 owned: starting\n", controller);
	return r;
}

static void *range0_watch(void *arg)
{
	const char *controller = arg;
	struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)RANGE0_POLL_USEC * 1000};

	for (;;) {
		nanosleep(&ts, NULL);
		if (!kcmd_shard_range_owned(0))
			break;
	}
	fprintf(stderr, "kcmd-worker: %s: shard: range 0 is no longer owned here: stopping\n",
	        controller);
	/* worker_main ends as on any SIGTERM; the manager restarts it. Sent before worker_main has
	 * blocked SIGTERM (range 0 lost within its first moments), it kills the process instead:
	 * the manager restarts it all the same, as after a crash. */
	kill(getpid(), SIGTERM);
	return NULL;
}

/* The watchdog thread, started with every signal blocked so that SIGTERM reaches the main
 * thread's own handling (a signalfd) and not this thread's default action. */
static int range0_watch_start(const char *controller)
{
	sigset_t all, old;
	pthread_attr_t at;
	pthread_t t;
	int r;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	r = pthread_create(&t, &at, range0_watch, (void *)controller);
	pthread_attr_destroy(&at);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -r;
}

static void on_key(struct ipc_queue *q, void *ud);

static void process(struct worker *w, struct wq *wq)
{
	char key[IPC_QUEUE_KEY_MAX + 1];

	for (;;) {
		int n = ipc_queue_get(wq->q, key, sizeof(key), 0);
		if (n == -EAGAIN)
			break;
		if (n == -ESHUTDOWN) {
			log_info("queue %s shut down", wq->name);
			ipc_loop_exit(w->ctx.loop, 0);
			return;
		}
		if (n < 0) {
			log_error("queue %s: %s", wq->name, strerror(-n));
			break;
		}
		int g = shard_gate(w, key);
		if (g == 0) { /* not ours: done, not requeued */
			w->shard_skipped++;
			log_v(4, "shard: %s is not in a range this instance owns: skipped", key);
			ipc_queue_done(wq->q, IPC_QUEUE_DONE_FORGET, 0);
			continue;
		}
		if (g < 0) {
			ipc_queue_done(wq->q, IPC_QUEUE_DONE_FORGET | IPC_QUEUE_DONE_AFTER,
			               SHARD_WAIT_USEC);
			continue;
		}
		struct wk_result res = {0}; /* a sync that sets nothing is a success (Forget) */
		kclog_set_object(key);
		w->ctrl->sync(w->state, wq->index, key, &res);
		kclog_set_object(NULL);
		if (res.err < 0 && shard_gate(w, key) == 0) {
			/* its range was handed over while it synced (the write was refused by the
			 * range's fence): its new owner has it; nothing to retry here */
			w->shard_skipped++;
			ipc_queue_done(wq->q, IPC_QUEUE_DONE_FORGET, 0);
		} else if (res.err < 0) {
			w->failed++;
			ipc_queue_done(wq->q, IPC_QUEUE_DONE_RATE_LIMITED, 0);
		} else if (res.requeue_after) {
			ipc_queue_done(wq->q, IPC_QUEUE_DONE_FORGET | IPC_QUEUE_DONE_AFTER,
			               res.after_usec);
		} else {
			ipc_queue_done(wq->q, IPC_QUEUE_DONE_FORGET, 0);
		}
		w->synced++;
	}
	if (ipc_queue_watch(wq->q, w->ctx.loop, on_key, w) < 0)
		log_error("queue %s: cannot wait for keys", wq->name);
}

static void on_key(struct ipc_queue *q, void *ud)
{
	struct worker *w = ud;

	for (size_t i = 0; i < w->n_queues; i++)
		if (w->queues[i].q == q)
			process(w, &w->queues[i]);
}

/* The caches are synced: the keys that waited meanwhile first, then as they come. */
static void take_keys(void *ud)
{
	struct worker *w = ud;

	for (size_t i = 0; i < w->n_queues; i++)
		process(w, &w->queues[i]);
	log_v(1, "%s worker ready", w->ctrl->name);
}

static int on_signal(struct ipc_source *s, const struct signalfd_siginfo *si, void *ud)
{
	struct worker *w = ud;

	(void)s;
	log_info("signal %u: exiting after %llu syncs (%llu failed)", si->ssi_signo,
	         (unsigned long long)w->synced, (unsigned long long)w->failed);
	ipc_loop_exit(w->ctx.loop, 0);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
	        "usage: kcmd-worker --controller=NAME [--kubeconfig=F] [--master=URL] "
	        "[--kube-api-qps=Q]\n"
	        "                   [--kube-api-burst=B] [--v=N] [--controller-plugins=SO,...]\n"
	        "                   [--<controller flag>=VALUE ...]\n"
	        "Started by kcmd with KCMD_ARENA_FD, KCMD_QUEUE_FDS and the controller's own fds "
	        "set.\n");
}

int kcmd_worker_main(int argc, char **argv)
{
	struct worker w = {.ctx.expectations_fd = -1};
	struct kcmd_child_args ca = {.qps = 20, .burst = 30};
	int r;
	const char *content_type = NULL; /* JSON unless the manager says protobuf */
	char err[512];

	const struct kcmd_controller *desc = NULL;
	struct kcmd_flag_values *fv = NULL;

	/* the manager's plug-ins (one registry in every process), before any lookup */
	if (kcmd_registry_load_args(argc, argv, err, sizeof(err)) < 0) {
		fprintf(stderr, "kcmd-worker: --controller-plugins: %s\n", err);
		return 2;
	}
	argc = kcmd_registry_drop_args(argc, argv);
	for (int i = 1; i < argc; i++)
		if (strncmp(argv[i], "--controller=", 13) == 0)
			desc = kcmd_registry_find(argv[i] + 13);
	/* Only the leader writes: every client of this process checks the manager's fence. */
	if (kcmd_fence_from_env() < 0)
		return 1;
	w.desc = desc;
	w.shard_keys = kcmd_registry_shard_keys(desc);
	w.shard_self = kcmd_registry_shard_self(desc);
	/* --shard-ranges: which range its writes need; a controller that shards itself has each
	 * write fenced by its request's namespace, as a namespace-sharded one */
	kcmd_shard_setup_process(w.shard_self ? KUBE_SHARD_KEYS_NS_NAME : w.shard_keys);
	w.shard_gen_synced = kcmd_shard_gen(); /* the start-up wait covers what came before */
	/* its declared metrics (KCMD_METRICS_FD), before any controller code runs */
	if (desc && (r = ctlm_open_self(desc)) < 0 && r != -ENOENT)
		fprintf(stderr, "kcmd-worker: %s: %s; its metrics are not recorded\n", CTLM_ENV,
		        strerror(-r));
	/* A controller with a main of its own (one that keeps many writes in flight instead of
	 * syncing one key at a time) takes over here. */
	if (desc && desc->worker_main) {
		/* --shard-ranges: one not sharded by namespace runs only while range 0 is ours */
		if (kcmd_shard_ranges() && w.shard_keys == KUBE_SHARD_KEYS_NONE && !w.shard_self) {
			if (!range0_wait(desc->name))
				return 0;
			if ((r = range0_watch_start(desc->name)) < 0) {
				fprintf(stderr,
				        "kcmd-worker: %s: shard: cannot watch range 0: %s\n",
				        desc->name, strerror(-r));
				return 1;
			}
		}
		return desc->worker_main(argc, argv);
	}
	if (desc && kcmd_flag_values_new(desc->flags, desc->n_flags, &fv) < 0) {
		fprintf(stderr, "kcmd-worker: out of memory\n");
		return 1;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (kcmd_child_arg(&ca, a))
			continue;
		if (strncmp(a, "--kube-api-content-type=", 24) == 0) {
			if (kube_content_type_parse(a + 24, &content_type) < 0) {
				fprintf(stderr, "kcmd-worker: bad %s\n", a);
				return 2;
			}
		} else {
			/* the controller's own flags, as the manager passes them */
			const char *eq = strchr(a, '=');
			char nm[128];
			if (fv && a[0] == '-' && a[1] == '-' && eq &&
			    (size_t)(eq - a - 2) < sizeof(nm)) {
				memcpy(nm, a + 2, (size_t)(eq - a - 2));
				nm[eq - a - 2] = 0;
				int fr = kcmd_flag_values_set(fv, nm, eq + 1, err, sizeof(err));
				if (fr == 0)
					continue;
				if (fr != -ENOENT) {
					fprintf(stderr, "kcmd-worker: %s\n",
					        fr == -ENOMEM ? "out of memory" : err);
					return 2;
				}
			}
			usage();
			return 2;
		}
	}
	if (desc && !desc->hidden && desc->worker &&
	    (!ca.controller || strcmp(ca.controller, desc->name) == 0 ||
	     kcmd_registry_find(ca.controller) == desc))
		w.ctrl = desc->worker;
	if (!w.ctrl) {
		fprintf(stderr, "kcmd-worker: unknown or missing --controller (%s)\n",
		        ca.controller ? ca.controller : "none");
		usage();
		return 2;
	}
	w.ctx.process = getenv("KCMD_PROCESS") ? getenv("KCMD_PROCESS") : "worker";
	w.ctx.controller = w.ctrl->name;
	kclog_init(w.ctx.process, w.ctrl->name, ca.v);
	signal(SIGPIPE, SIG_IGN);

	int afd = kcmd_env_fd("KCMD_ARENA_FD");
	if (afd < 0 || (r = shm_reader_open(afd, &w.ctx.arena)) < 0) {
		log_error("KCMD_ARENA_FD: no usable arena (%s)",
		          afd < 0 ? "not set" : strerror(-r));
		return 1;
	}
	w.ctx.expectations_fd = kcmd_env_fd("KCMD_EXPECTATIONS_FD");
	if ((r = ipc_loop_new(&w.ctx.loop, IPC_LOOP_BACKEND_AUTO)) < 0) {
		log_error("event loop: %s", strerror(-r));
		return 1;
	}
	struct kube_config *kcfg;
	struct kube_config_opts co = {.kubeconfig = ca.kubeconfig, .master = ca.master};
	if (kube_config_load(&co, &kcfg, err, sizeof(err)) < 0) {
		log_error("kubeconfig: %s", err);
		return 1;
	}
	/* --use-service-account-credentials: the manager keeps this controller's service-account
	 * token in a memfd (refreshed in place); it replaces the kubeconfig's credentials. */
	int tfd = kcmd_env_fd("KCMD_TOKEN_FD");
	if (tfd >= 0) {
		char tpath[48];
		snprintf(tpath, sizeof(tpath), "/proc/self/fd/%d", tfd);
		if ((r = kube_config_use_token_file(kcfg, tpath)) < 0) {
			log_error("KCMD_TOKEN_FD: %s", strerror(-r));
			return 1;
		}
		log_v(1, "using the service-account token the manager provides (%s)", tpath);
	}
	/* upstream gives each controller one client and so one token bucket for all its
	 * goroutines; here the manager passes the controller's bucket to each of its processes */
	struct kube_limiter *lim = NULL;
	int lfd = kcmd_env_fd("KCMD_CLIENT_LIMITER_FD");
	if (lfd >= 0 && ca.qps > 0 && (r = kube_limiter_open(lfd, ca.qps, ca.burst, &lim)) < 0) {
		log_warning("KCMD_CLIENT_LIMITER_FD: %s; this process limits itself alone",
		            strerror(-r));
		lim = NULL;
	}
	struct kube_client_opts ko = {.config = kcfg,
	                              .process = "worker",
	                              .controller = w.ctrl->name,
	                              .qps = ca.qps,
	                              .burst = ca.burst,
	                              .insecure_ok = true,
	                              .limiter = lim,
	                              .content_type = content_type};
	w.ctx.config = kcfg;
	w.ctx.content_type = content_type;
	w.ctx.flags = fv;
	w.ctx.qps = ca.qps;
	w.ctx.burst = ca.burst;
	if ((r = kube_client_new(&ko, &w.ctx.kc)) < 0) {
		log_error("API client: %s", strerror(-r));
		return 1;
	}
	/* kcmd_event_record queues from now on; the sink thread (its own client on the same token
	 * bucket) starts with the first Event */
	if ((r = evrec_start(&(struct evrec_opts){.config = kcfg,
	                                          .controller = w.ctrl->name,
	                                          .qps = ca.qps,
	                                          .burst = ca.burst,
	                                          .limiter_fd = lfd,
	                                          .content_type = content_type})) < 0)
		log_warning("event recorder: %s; Events are written from the sync", strerror(-r));
	if ((r = w.ctrl->init(&w.ctx, &w.state)) < 0) {
		log_error("%s: init failed: %s", w.ctrl->name, strerror(-r));
		return 1;
	}
	size_t nq = 0;
	while (w.ctrl->queues[nq])
		nq++;
	if (!(w.queues = calloc(nq ? nq : 1, sizeof(*w.queues)))) {
		log_error("out of memory");
		return 1;
	}
	for (size_t i = 0; w.ctrl->queues[i]; i++) {
		struct wq *wq = &w.queues[w.n_queues];
		int fd = kcmd_env_queue_fd(w.ctrl->queues[i]);
		wq->name = w.ctrl->queues[i];
		wq->index = i;
		if (fd < 0 || (r = ipc_queue_attach(&wq->q, fd, IPC_QUEUE_WORKER, 1)) < 0) {
			log_error("queue %s: %s", wq->name,
			          fd < 0 ? "not in KCMD_QUEUE_FDS" : strerror(-r));
			return 1;
		}
		w.n_queues++;
	}
	struct ipc_source *st, *si;
	if (ipc_loop_add_signal(w.ctx.loop, &st, SIGTERM, on_signal, &w) < 0 ||
	    ipc_loop_add_signal(w.ctx.loop, &si, SIGINT, on_signal, &w) < 0)
		return 1;
	/* no key before the controller's caches have listed (SIGTERM still ends the wait) */
	struct wk_cachewait_opts cwo = {
	        .controller = desc->name,
	        .announce = wk_cachewait_first_worker(w.ctx.process, desc->name)};
	r = wk_cachewait_start(w.ctx.loop, w.ctx.arena, desc->watches, desc->n_watches, &cwo,
	                       take_keys, &w, &w.cw);
	if (r < 0) {
		log_error("waiting for caches to sync: %s", strerror(-r));
		return 1;
	}
	if (r == 1)
		take_keys(&w);
	r = ipc_loop_run(w.ctx.loop);

	wk_cachewait_free(w.cw);

	for (size_t i = 0; i < w.n_queues; i++)
		ipc_queue_free(w.queues[i].q);
	free(w.queues);
	kcmd_flag_values_free(fv);
	if (w.ctrl->fini) /* optional (include/kcmd/worker.h) */
		w.ctrl->fini(w.state);
	/* what is queued gets 2 s to be written; an Event still in a request is left (exiting) */
	bool ev_stopped = evrec_stop(2000);
	kube_client_free(w.ctx.kc);
	kube_limiter_free(lim);
	if (ev_stopped)
		kube_config_free(kcfg); /* else the stuck sink's client may still read it */
	shm_arena_close(w.ctx.arena);
	ipc_loop_free(w.ctx.loop);
	return r < 0 ? 1 : 0;
}
