/* SPDX-License-Identifier: Apache-2.0 */
/*
 * informerd/main.c: `kcmd-informerd`, the reflectors + arena writer + handlers process.
 *
 * Started by the manager (manager/main.c add_child) with this contract:
 *   argv   --kubeconfig=PATH --master=URL --kube-api-qps=F --kube-api-burst=N --v=N
 *   env    KCMD_ARENA_FD=N            the arena memfd, read-write (informerd is its writer)
 *          KCMD_QUEUE_FDS=name:fd,... every work queue memfd; informerd is each queue's owner
 *          KCMD_INFORMER_METRICS_FD=N optional: a memfd for informerd's counters
 *                                     (lib/infmetrics-abi.h); the manager reads it
 *          KCMD_PROCESS=informerd
 * The fds are inherited without FD_CLOEXEC. For tests and tools the same can be given as flags:
 * --arena-fd=N, --arena-path=PATH (e.g. /proc/<holder>/fd/<n> of a process that keeps an arena
 * memfd alive), --queue=name:fd, --metrics-file=PATH. Without any arena informerd creates a
 * private one (useful only to watch it sync).
 *
 * Which resources: --resources=pods,replicasets.apps,... (default pods,replicasets.apps); an
 * entry is plural[.group][/version][:Kind][@object], built-in names need no version or Kind. Pods
 * and ReplicaSets are typed records, everything else metadata-only, unless the entry ends in
 * "@object": then a full-object record (every annotation and the object's JSON, shm/records.h).
 * Handler tables (handlers.h) are registered when every queue they name was passed; --handlers=a,b
 * restricts them.
 *
 * Exit: 0 on SIGTERM/SIGINT; 1 on a setup failure (logged once); the manager restarts it.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "informerd/discovery.h"
#include "lib/handlers.h"
#include "informerd/informer.h"
#include "lib/infmetrics.h"
#include "informerd/store.h"
#include "ipc/loop.h"
#include "ipc/queue.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/proto.h"
#include "lib/kube-loop.h"
#include "lib/fence-env.h"
#include "lib/log.h"
#include "kube/encode.h"
#include "kube/fence.h"
#include "shm/arena.h"
#include "shm/feed.h"

#define MAX_QUEUES    16
#define MAX_RESOURCES 64

/* informerd links no controller: the controllers' handlers run in their own dispatchers over
 * the change feed (workers/dispatcher.c). In-process it runs only the test table (queue
 * informer-test), registered when that queue was passed. */
static const struct inf_handler_table *table_at(size_t i)
{
	return i == 0 ? &inf_test_handler_table : NULL;
}

static size_t n_tables(void)
{
	return 1;
}

struct known {
	const char *resource, *group, *version, *kind;
	enum shm_record_kind rk;
	bool namespaced;
};
static const struct known known[] = {
        {"pods", "", "v1", "Pod", SHM_RECORD_POD, true},
        {"replicasets", "apps", "v1", "ReplicaSet", SHM_RECORD_REPLICASET, true},
        /* the same typed record as a ReplicaSet (its map selector compiled as matchLabels) */
        {"replicationcontrollers", "", "v1", "ReplicationController", SHM_RECORD_REPLICASET, true},
        {"configmaps", "", "v1", "ConfigMap", SHM_RECORD_META, true},
        {"secrets", "", "v1", "Secret", SHM_RECORD_META, true},
        {"services", "", "v1", "Service", SHM_RECORD_META, true},
        {"serviceaccounts", "", "v1", "ServiceAccount", SHM_RECORD_META, true},
        {"namespaces", "", "v1", "Namespace", SHM_RECORD_META, false},
        {"deployments", "apps", "v1", "Deployment", SHM_RECORD_META, true},
        {"statefulsets", "apps", "v1", "StatefulSet", SHM_RECORD_META, true},
        {"daemonsets", "apps", "v1", "DaemonSet", SHM_RECORD_META, true},
        {"jobs", "batch", "v1", "Job", SHM_RECORD_META, true},
};

struct qent {
	char name[64];
	int fd;
	struct ipc_queue_owner *owner;
	bool restarted;
};

struct opts {
	const char *kubeconfig, *master, *context, *resources, *handlers, *arena_path,
	        *metrics_file;
	const char *content_type; /* --kube-api-content-type, kube/proto.h */
	double qps;
	int burst, v, arena_fd;
	bool watch_list, no_warm_start;
	int discover; /* -1 auto (on when the GC's queue is passed), 0 off, 1 on */
	int32_t min_watch_timeout_s;
	long discovery_period_s;
	struct qent queues[MAX_QUEUES];
	size_t n_queues;
};

struct informerd {
	struct opts o;
	struct ipc_loop *loop;
	struct kube_config *kcfg;
	struct kube_client *kc;
	struct kube_loop *kl;
	struct shm_arena *arena;
	struct inf_dispatch *d;
	struct inf_store *store;
	struct inf_metrics *metrics;
	struct inf_informers *ii;
	struct ipc_source *sig_term, *sig_int, *tick;
	struct inf_discovery *disc;
	struct inf_res_set dres; /* informers added by discovery (owned; no bound) */
	bool first_round_done;
	struct inf_resource res[MAX_RESOURCES];
	char res_names[MAX_RESOURCES][4][64];
	size_t n_res;
	bool logged_synced;
	uint64_t started_at;
	/* the acquisition barrier (kube/fence.h F5): the epoch relisted for, since when */
	uint32_t epoch;
	uint64_t barrier_since;
	char barrier_rv[24];
	bool leadership_fd; /* KCMD_LEADERSHIP_FD was passed */
	/* the sharded cache's filter (kube/fence.h F9): the set last seen, all ones when off */
	uint64_t cache_set[KUBE_FENCE_MAX_RANGES / 64];
	bool cache_filtering;
	struct shm_feed *feed; /* KCMD_FEED_FD: every change is published here after the arena */
	struct ipc_source *feed_post;
	/* GarbageCollector.Sync's wait for the monitors after a resync: 0, or until when */
	uint64_t monitors_sync_deadline;
	char host[256];
};

static int parse_int(const char *s, long min, long max, long *ret)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

static int parse_bool(const char *s, bool *ret)
{
	if (!s || !strcmp(s, "true") || !strcmp(s, "1") || !strcmp(s, "t") || !strcmp(s, "T"))
		*ret = true;
	else if (!strcmp(s, "false") || !strcmp(s, "0") || !strcmp(s, "f") || !strcmp(s, "F"))
		*ret = false;
	else
		return -EINVAL;
	return 0;
}

static int add_queue(struct opts *o, const char *spec)
{
	const char *colon = strrchr(spec, ':');
	long fd;
	size_t l;

	if (!colon || o->n_queues >= MAX_QUEUES)
		return -EINVAL;
	l = (size_t)(colon - spec);
	if (l == 0 || l >= sizeof(o->queues[0].name) || parse_int(colon + 1, 0, 1 << 20, &fd) < 0)
		return -EINVAL;
	for (size_t i = 0; i < o->n_queues; i++)
		if (strlen(o->queues[i].name) == l && !memcmp(o->queues[i].name, spec, l))
			return -EEXIST;
	memcpy(o->queues[o->n_queues].name, spec, l);
	o->queues[o->n_queues].name[l] = '\0';
	o->queues[o->n_queues].fd = (int)fd;
	o->n_queues++;
	return 0;
}

static int add_queue_list(struct opts *o, const char *list)
{
	char buf[1024], *save = NULL;

	if (strlen(list) >= sizeof(buf))
		return -E2BIG;
	memcpy(buf, list, strlen(list) + 1);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
		if (*t && add_queue(o, t) < 0)
			return -EINVAL;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: kcmd-informerd [--kubeconfig=PATH] [--master=URL] [--context=NAME]\n"
	        "  [--kube-api-qps=F] [--kube-api-burst=N] [--kube-api-content-type=T] [--v=N] "
	        "[--resources=LIST (plural[.group][/version][:Kind][@object],...)] "
	        "[--handlers=LIST]\n"
	        "  [--watch-list[=BOOL]] [--min-watch-timeout=SECONDS] [--no-warm-start]\n"
	        "  [--discover-deletable[=BOOL]] (default: off; kcmd turns it on when a controller "
	        "watches every deletable resource)\n"
	        "  [--discovery-period=SECONDS] (default 30)\n"
	        "  [--arena-fd=N | --arena-path=PATH] [--queue=NAME:FD]... [--metrics-file=PATH]\n"
	        "fds are also taken from KCMD_ARENA_FD, KCMD_QUEUE_FDS, "
	        "KCMD_INFORMER_METRICS_FD\n");
}

static int parse_flags(struct opts *o, int argc, char **argv)
{
	const char *env;
	long n;

	o->qps = 20;
	o->burst = 30;
	o->arena_fd = -1;
	o->discover = -1;
	/* client-go turned WatchListClient on by default in 1.35; the reflector falls back to
	 * LIST by itself on any error. */
	o->watch_list = true;
	o->resources = "pods,replicasets.apps";
	o->content_type = KUBE_CONTENT_PROTOBUF; /* kcm's default */
	for (int i = 1; i < argc; i++) {
		char *a = argv[i], *val = NULL, name[64];
		size_t nl;

		if (strncmp(a, "--", 2) != 0) {
			fprintf(stderr, "kcmd-informerd: unexpected argument %s\n", a);
			return -EINVAL;
		}
		a += 2;
		nl = strcspn(a, "=");
		if (nl >= sizeof(name))
			return -EINVAL;
		memcpy(name, a, nl);
		name[nl] = '\0';
		for (char *p = name; *p; p++)
			if (*p == '_')
				*p = '-';
		if (a[nl] == '=')
			val = a + nl + 1;
		/* Flags that take a value accept "--f v" too. */
		bool is_bool = !strcmp(name, "watch-list") || !strcmp(name, "no-warm-start") ||
		               !strcmp(name, "help") || !strcmp(name, "discover-deletable");
		if (!val && !is_bool) {
			if (i + 1 >= argc) {
				fprintf(stderr, "kcmd-informerd: --%s needs a value\n", name);
				return -EINVAL;
			}
			val = argv[++i];
		}
		int r = 0;
		if (!strcmp(name, "kubeconfig"))
			o->kubeconfig = val;
		else if (!strcmp(name, "master"))
			o->master = val;
		else if (!strcmp(name, "context"))
			o->context = val;
		else if (!strcmp(name, "kube-api-content-type"))
			r = kube_content_type_parse(val, &o->content_type);
		else if (!strcmp(name, "resources"))
			o->resources = val;
		else if (!strcmp(name, "handlers"))
			o->handlers = val;
		else if (!strcmp(name, "arena-path"))
			o->arena_path = val;
		else if (!strcmp(name, "metrics-file"))
			o->metrics_file = val;
		else if (!strcmp(name, "controller"))
			; /* the manager passes it to every child; informerd serves all controllers
			   */
		else if (!strcmp(name, "kube-api-qps")) {
			char *end;
			o->qps = strtod(val, &end);
			r = *end || end == val ? -EINVAL : 0;
		} else if (!strcmp(name, "kube-api-burst")) {
			r = parse_int(val, 1, 1000000, &n);
			o->burst = (int)n;
		} else if (!strcmp(name, "v")) {
			r = parse_int(val, 0, 10, &n);
			o->v = (int)n;
		} else if (!strcmp(name, "arena-fd")) {
			r = parse_int(val, 0, 1 << 20, &n);
			o->arena_fd = (int)n;
		} else if (!strcmp(name, "min-watch-timeout")) {
			r = parse_int(val, 1, 86400, &n);
			o->min_watch_timeout_s = (int32_t)n;
		} else if (!strcmp(name, "discovery-period")) {
			r = parse_int(val, 1, 86400, &o->discovery_period_s);
		} else if (!strcmp(name, "queue"))
			r = add_queue(o, val);
		else if (!strcmp(name, "watch-list"))
			r = parse_bool(val, &o->watch_list);
		else if (!strcmp(name, "discover-deletable")) {
			bool b;
			r = parse_bool(val, &b);
			o->discover = b;
		} else if (!strcmp(name, "no-warm-start"))
			r = parse_bool(val, &o->no_warm_start);
		else if (!strcmp(name, "help")) {
			usage(stdout);
			exit(0);
		} else {
			fprintf(stderr, "kcmd-informerd: unknown flag --%s\n", name);
			usage(stderr);
			return -EINVAL;
		}
		if (r < 0) {
			fprintf(stderr, "kcmd-informerd: invalid value for --%s: %s\n", name,
			        val ? val : "");
			return r;
		}
	}
	if (o->arena_fd < 0 && !o->arena_path && (env = getenv("KCMD_ARENA_FD"))) {
		if (parse_int(env, 0, 1 << 20, &n) < 0) {
			fprintf(stderr, "kcmd-informerd: bad KCMD_ARENA_FD=%s\n", env);
			return -EINVAL;
		}
		o->arena_fd = (int)n;
	}
	if ((env = getenv("KCMD_QUEUE_FDS")) && *env && add_queue_list(o, env) < 0) {
		fprintf(stderr, "kcmd-informerd: bad KCMD_QUEUE_FDS=%s\n", env);
		return -EINVAL;
	}
	return 0;
}

static int parse_resources(struct informerd *x)
{
	char buf[4096], *save = NULL;

	if (strlen(x->o.resources) >= sizeof(buf))
		return -E2BIG;
	memcpy(buf, x->o.resources, strlen(x->o.resources) + 1);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *kind, *ver, *dot, *rec = strchr(t, '@');
		const struct known *k = NULL;
		struct inf_resource *r;
		char(*nm)[64];

		if (!*t)
			continue;
		if (x->n_res >= MAX_RESOURCES)
			return -E2BIG;
		if (rec) {
			*rec++ = '\0';
			if (strcmp(rec, "object")) {
				log_error("--resources: %s@%s: the only record suffix is @object",
				          t, rec);
				return -EINVAL;
			}
		}
		kind = strchr(t, ':');
		if (kind)
			*kind++ = '\0';
		ver = strchr(t, '/');
		if (ver)
			*ver++ = '\0';
		dot = strchr(t, '.');
		if (dot)
			*dot++ = '\0';
		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (!strcmp(known[i].resource, t) &&
			    !strcmp(known[i].group, dot ? dot : ""))
				k = &known[i];
		if (!k && !kind) {
			log_error("--resources: %s%s%s is not built in; write it as "
			          "plural.group/version:Kind",
			          t, dot ? "." : "", dot ? dot : "");
			return -EINVAL;
		}
		nm = x->res_names[x->n_res];
		snprintf(nm[0], 64, "%s", dot ? dot : "");
		snprintf(nm[1], 64, "%s", ver ? ver : k ? k->version : "v1");
		snprintf(nm[2], 64, "%s", t);
		snprintf(nm[3], 64, "%s", kind ? kind : k->kind);
		r = &x->res[x->n_res++];
		*r = (struct inf_resource){.group = nm[0],
		                           .version = nm[1],
		                           .resource = nm[2],
		                           .kind = nm[3],
		                           .record_kind = rec ? SHM_RECORD_OBJECT
		                                          : k ? k->rk
		                                              : SHM_RECORD_META,
		                           .namespaced = k ? k->namespaced : true};
	}
	return 0;
}

static bool handler_selected(const struct opts *o, const char *name)
{
	char buf[1024], *save = NULL;

	if (!o->handlers)
		return true;
	snprintf(buf, sizeof(buf), "%s", o->handlers);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
		if (!strcmp(t, name))
			return true;
	return false;
}

static void on_owner_resync(struct ipc_queue_owner *o, bool restarted, void *ud)
{
	struct qent *q = ud;

	(void)o;
	q->restarted = restarted; /* the tables run their resync once registered */
}

static int setup_queues_and_handlers(struct informerd *x)
{
	int r;

	for (size_t i = 0; i < x->o.n_queues; i++) {
		struct qent *q = &x->o.queues[i];
		struct ipc_queue_owner_config qc = {.resync = on_owner_resync, .userdata = q};

		r = ipc_queue_owner_new(&q->owner, x->loop, q->fd, &qc);
		if (r < 0) {
			log_error("cannot own work queue %s (fd %d): %s", q->name, q->fd,
			          strerror(-r));
			return r;
		}
	}
	for (size_t t = 0; t < n_tables(); t++) {
		const struct inf_handler_table *tab = table_at(t);
		struct ipc_queue_owner *owners[MAX_QUEUES];
		size_t n = 0;
		bool ok = true;

		if (!tab || !handler_selected(&x->o, tab->controller))
			continue;
		for (; tab->queues && tab->queues[n] && n < MAX_QUEUES; n++) {
			owners[n] = NULL;
			for (size_t i = 0; i < x->o.n_queues; i++)
				if (!strcmp(x->o.queues[i].name, tab->queues[n]))
					owners[n] = x->o.queues[i].owner;
			if (!owners[n])
				ok = false;
		}
		if (!ok) {
			log_v(2,
			      "handler table %s not registered: not all of its queues were passed",
			      tab->controller);
			continue;
		}
		r = inf_dispatch_register(x->d, tab, owners, n, x->arena);
		if (r < 0) {
			log_error("handler table %s: %s", tab->controller, strerror(-r));
			return r;
		}
		/* Re-add every key the controller owns (queue rule: after an owner (re)start). */
		for (size_t k = 0; k < n; k++) {
			bool restarted = false;
			for (size_t i = 0; i < x->o.n_queues; i++)
				if (x->o.queues[i].owner == owners[k])
					restarted = x->o.queues[i].restarted;
			inf_dispatch_resync(x->d, (size_t)r, k, restarted);
		}
		log_info("handler table %s registered", tab->controller);
	}
	return 0;
}

/* ---- the change feed ------------------------------------------------------------------------ */

/* Once per loop iteration after something was published: one futex wake for the consumers
 * whose classes the batch held (shm/feed.h F9). */
static int on_feed_post(struct ipc_source *s, uint64_t now, void *ud)
{
	struct informerd *x = ud;
	uint32_t bits = shm_feed_take_wake(x->feed);

	(void)s;
	(void)now;
	if (bits)
		ipc_loop_futex_wake_bits(x->loop, shm_feed_futex_word(x->feed), INT_MAX, bits);
	return 0;
}

static void on_published(void *ud)
{
	struct informerd *x = ud;

	ipc_source_post_enable(x->feed_post);
}

/* KCMD_FEED_FD: the change feed the controllers' dispatchers consume (shm/feed.h). */
static int setup_feed(struct informerd *x)
{
	const char *env = getenv("KCMD_FEED_FD");
	long fd;
	int r;

	if (!env || !*env)
		return 0;
	if (parse_int(env, 0, 1 << 20, &fd) < 0) {
		log_error("bad KCMD_FEED_FD=%s", env);
		return -EINVAL;
	}
	if ((r = shm_feed_writer_open((int)fd, &x->feed)) < 0) {
		log_error("cannot open the change feed (fd %ld) as its writer: %s", fd,
		          strerror(-r));
		return r;
	}
	if ((r = ipc_loop_add_post(x->loop, &x->feed_post, on_feed_post, x)) < 0)
		return r;
	inf_store_set_feed(x->store, x->feed, on_published, x);
	/* a restarted writer may have published before it died without waking anyone */
	ipc_source_post_enable(x->feed_post);
	log_info("publishing changes to the change feed");
	return 0;
}

/* Whether res is one discovery added (not a controller's own watch). */
static bool discovered(const struct informerd *x, const struct inf_resource *res)
{
	for (size_t j = 0; j < x->dres.n; j++)
		if (x->dres.v[j] == res || (!strcmp(x->dres.v[j]->group, res->group) &&
		                            !strcmp(x->dres.v[j]->resource, res->resource)))
			return true;
	return false;
}

static void on_informer_error(void *ud, const struct inf_resource *res, const char *what, int err)
{
	struct informerd *x = ud;

	/* 404 on a discovered resource: its CRD or APIService is most likely gone; a discovery
	 * round now drops it rather than a period later (its informer holds every sync wait) */
	if (err == -ENOENT && x && x->disc && discovered(x, res))
		inf_discovery_soon(x->disc);
	if (err == -EKEYEXPIRED || err == -ECONNRESET)
		log_v(2, "%s%s%s: %s: %s", res->resource, res->group[0] ? "." : "", res->group,
		      what, strerror(-err));
	else
		log_warning("%s%s%s: %s: %s", res->resource, res->group[0] ? "." : "", res->group,
		            what, strerror(-err));
}

static void free_res(struct inf_resource *r)
{
	free((char *)r->group);
	free((char *)r->version);
	free((char *)r->resource);
	free((char *)r->kind);
	free(r);
}

static bool in_failed(const char *const *failed, const char *group)
{
	for (; *failed; failed++)
		if (!strcmp(*failed, group) || (!strcmp(*failed, "*") && group[0]))
			return true;
	return false;
}

/* Whether informerd watches group/resource at this version (a discovered resource watched at
 * another version is not: its type is left over from an earlier run's preferred version). */
static bool watched_at(struct informerd *x, const char *group, const char *version,
                       const char *resource)
{
	if (!inf_informers_watching(x->ii, group, resource))
		return false;
	for (size_t j = 0; j < x->dres.n; j++)
		if (!strcmp(x->dres.v[j]->group, group) &&
		    !strcmp(x->dres.v[j]->resource, resource))
			return !strcmp(x->dres.v[j]->version, version);
	return true; /* a controller's own watch: its version is its own */
}

/* A discovered resource informerd already watches, at another version than the one discovery
 * now prefers (a CRD gained a newer version, or the one watched stopped being served): the GC's
 * monitors are keyed by group/version/resource, so upstream's resync stops the old monitor and
 * starts one at the preferred version; the graph keeps its nodes, which the new monitor's list
 * re-adds. Here the old informer stops and its type leaves the arena with its deletions marked
 * SHM_FEED_DROPPED (not deletions: the GC's graph keeps the nodes), then the caller watches the
 * preferred version as a new resource (a new arena type, filled by its LIST). Only resources
 * that discovery added are followed; a controller's own watch names its version.
 * Returns 1 when the caller must add res, 0 when nothing changes. */
static int refollow_version(struct informerd *x, const struct inf_resource *res)
{
	for (size_t j = 0; j < x->dres.n; j++) {
		struct inf_resource *r = x->dres.v[j];

		if (strcmp(r->group, res->group) || strcmp(r->resource, res->resource))
			continue;
		if (!strcmp(r->version, res->version))
			return 0;
		log_info("discovery: %s%s%s: the preferred version is now %s (was %s): "
		         "re-watching it",
		         r->resource, r->group[0] ? "." : "", r->group, res->version, r->version);
		(void)inf_informers_remove(x->ii, r->group, r->resource, true);
		inf_res_set_remove(&x->dres, j);
		return 1;
	}
	return 0;
}

/* One discovery round (the GC's monitor resync): watch what appeared, drop what disappeared
 * unless its group's discovery failed this round. */
static void on_discovery(void *ud, const struct inf_resource *res, size_t n,
                         const char *const *failed)
{
	struct informerd *x = ud;
	bool changed = false, resync_failed = false;

	/* GarbageCollector.Sync: some groups failed (ErrGroupDiscoveryFailed); their resources
	 * keep their informers below */
	if (failed[0]) {
		char list[512] = "";
		size_t len = 0;
		for (const char *const *f = failed; *f && len < sizeof(list); f++)
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
			                        len ? "," : "", **f ? *f : "(core)");
		log_v(2, "discovery: failed to discover some groups: %s; their informers are kept",
		      list);
	}
	/* GarbageCollector.Sync: no deletable resources at all is an error, and nothing changes */
	if (n == 0) {
		log_error("discovery: no deletable resources; keeping the informers as they are");
		inf_metrics_discovery_sync_error(x->metrics);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct inf_resource *r;
		int rc;

		if (inf_informers_watching(x->ii, res[i].group, res[i].resource)) {
			if (refollow_version(x, &res[i]) <= 0)
				continue;
			changed = true;
		}
		if (inf_res_set_add(&x->dres, &res[i], &r) < 0)
			return;
		for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++)
			if (!strcmp(known[k].resource, r->resource) &&
			    !strcmp(known[k].group, r->group))
				r->record_kind = known[k].rk;
		rc = inf_informers_add(x->ii, r);
		if (rc < 0) {
			log_warning("discovery: cannot watch %s%s%s: %s%s", r->resource,
			            r->group[0] ? "." : "", r->group, strerror(-rc),
			            rc == -ENOSPC ? " (the arena's resource table holds 65,536 "
			                            "resources at once)"
			            : rc == -ENOMEM
			                    ? " (the arena, or the process, is out of memory)"
			                    : "");
			inf_res_set_remove(&x->dres, x->dres.n - 1);
			resync_failed = true;
			continue;
		}
		changed = true;
		x->logged_synced = false;
		log_info("discovery: watching %s%s%s/%s (metadata-only)", r->resource,
		         r->group[0] ? "." : "", r->group, r->version);
	}
	if (!x->first_round_done) {
		/* Metadata-only types left in the arena by an earlier run whose resource is gone
		 * now (e.g. a CRD deleted while informerd was down): their objects must not linger.
		 */
		struct shm_stats st;

		x->first_round_done = true;
		if (shm_reader_stats(x->arena, &st) == 0)
			for (uint64_t t = 0; t < st.n_types; t++) {
				struct shm_type_info ti;
				struct inf_resource *r;
				int type;

				if (shm_reader_type_info(x->arena, (uint16_t)t, &ti) < 0 ||
				    ti.record_kind != SHM_RECORD_META || !ti.count ||
				    watched_at(x, ti.group, ti.version, ti.resource) ||
				    in_failed(failed, ti.group))
					continue;
				r = calloc(1, sizeof(*r));
				if (!r)
					break;
				r->group = strdup(ti.group);
				r->version = strdup(ti.version);
				r->resource = strdup(ti.resource);
				r->kind = strdup(ti.kind);
				r->record_kind = SHM_RECORD_META;
				if (!r->group || !r->version || !r->resource || !r->kind ||
				    (type = inf_store_add_resource(x->store, r)) < 0) {
					free_res(r);
					continue;
				}
				log_info("discovery: %s%s%s is gone since the last run: dropping "
				         "%llu objects",
				         r->resource, r->group[0] ? "." : "", r->group,
				         (unsigned long long)ti.count);
				(void)inf_store_drop(x->store, (uint16_t)type);
				(void)inf_store_retire(x->store, (uint16_t)type);
				free_res(r);
			}
	}
	for (size_t j = 0; j < x->dres.n;) {
		struct inf_resource *r = x->dres.v[j];
		bool present = false;

		for (size_t i = 0; i < n && !present; i++)
			present = !strcmp(res[i].group, r->group) &&
			          !strcmp(res[i].resource, r->resource);
		if (present || in_failed(failed, r->group)) {
			j++;
			continue;
		}
		log_info("discovery: %s%s%s is gone: dropping its informer and objects",
		         r->resource, r->group[0] ? "." : "", r->group);
		(void)inf_informers_remove(x->ii, r->group, r->resource, true);
		inf_res_set_remove(&x->dres, j);
		changed = true;
	}
	/* the monitor resync failed for some resource: counted once per round, as upstream */
	if (resync_failed)
		inf_metrics_discovery_sync_error(x->metrics);
	/* after a change, the monitors get one period to sync (checked in on_tick) */
	else if (changed && !x->monitors_sync_deadline)
		x->monitors_sync_deadline =
		        ipc_now_usec() +
		        (uint64_t)(x->o.discovery_period_s > 0 ? x->o.discovery_period_s : 30) *
		                1000000;
}

static int on_signal(struct ipc_source *s, const struct signalfd_siginfo *si, void *ud)
{
	struct informerd *x = ud;

	(void)s;
	log_info("signal %u: exiting", si->ssi_signo);
	ipc_loop_exit(x->loop, 0);
	return 0;
}

static void log_barrier(const struct informerd *x)
{
	log_info("leadership epoch %u at resourceVersion %s: relisting %zu types", x->epoch,
	         x->barrier_rv[0] ? x->barrier_rv : "(none: consistent LIST)",
	         inf_informers_barrier_pending(x->ii));
}

/* A new leadership epoch: relist every type at least as new as the Lease write that won, so no
 * worker of the new term acts on a cache older than the acquisition (docs/architecture.md
 * "Leadership"). Polled from the tick; the manager publishes the epoch before it starts the
 * workers, and their kcmd_cache_synced() stays 0 until the relist is committed. */
static void check_epoch(struct informerd *x, uint64_t now, bool startup)
{
	uint64_t lease_rv = 0;
	uint32_t e = kcmd_leadership_epoch(&lease_rv);

	if (e && e != x->epoch) {
		x->epoch = e;
		x->barrier_since = now;
		x->barrier_rv[0] = '\0';
		if (lease_rv)
			snprintf(x->barrier_rv, sizeof(x->barrier_rv), "%llu",
			         (unsigned long long)lease_rv);
		(void)inf_informers_barrier(x->ii, e, x->barrier_rv);
		if (!startup) /* at start-up, logged once the informers are added */
			log_barrier(x);
	}
	if (startup)
		return;
	if (x->barrier_since && inf_informers_barrier_pending(x->ii) == 0) {
		double secs = (double)(now - x->barrier_since) / 1e6;
		log_info("caches caught up with the Lease after %.3f s (epoch %u)", secs, x->epoch);
		inf_metrics_barrier_done(x->metrics, now - x->barrier_since);
		x->barrier_since = 0;
	}
}

/* The store's filter (docs/sharding.md "Caches"): objects of a namespace whose range this
 * instance neither owns nor is acquiring are not stored (kube/fence.h F9). One FNV-1a hash of
 * the namespace and one load per object. */
static bool cache_keeps_ns(const char *ns, void *ud)
{
	(void)ud;
	return kube_fence_caches_ns(kcmd_leadership_fence(), ns);
}

/* The cache set narrowed (a range lost or handed over, or range 0 lost: the filter turns on):
 * its objects leave the arena now rather than at the next relist, which may be far off (a
 * relist comes with an acquisition or a 410). A set that grew needs nothing here: the range's
 * acquisition publishes an epoch after the bit (F9), and check_epoch's relist stores it. */
static void check_cache_set(struct informerd *x, bool startup)
{
	uint64_t now_set[KUBE_FENCE_MAX_RANGES / 64];
	bool lost = false, on = kube_fence_cache_set(kcmd_leadership_fence(), now_set);
	int n;

	for (unsigned i = 0; i < KUBE_FENCE_MAX_RANGES / 64; i++)
		lost |= (x->cache_set[i] & ~now_set[i]) != 0;
	if (on != x->cache_filtering)
		log_info("cache filter %s", on ? "on: only the objects of this instance's shard "
		                                 "ranges and cluster-scoped ones are stored"
		                               : "off: every object is stored (range 0 is ours)");
	x->cache_filtering = on;
	if (lost) {
		n = inf_informers_prune(x->ii);
		if (n < 0)
			return; /* reported by on_error; the set stays old: the next tick retries */
		if (n > 0 || !startup)
			log_info("cache filter: %d objects of ranges no longer ours left the cache",
			         n);
	}
	memcpy(x->cache_set, now_set, sizeof(now_set));
}

static int on_tick(struct ipc_source *s, uint64_t now, void *ud)
{
	struct informerd *x = ud;

	check_epoch(x, now, false);
	check_cache_set(x, false);
	if (!x->logged_synced && inf_informers_all_synced(x->ii)) {
		x->logged_synced = true;
		log_info("all %zu informers synced after %.3f s (%llu LIST requests)",
		         inf_informers_count(x->ii), (double)(now - x->started_at) / 1e6,
		         (unsigned long long)inf_informers_lists(x->ii));
	}
	if (x->monitors_sync_deadline && inf_informers_all_synced(x->ii)) {
		x->monitors_sync_deadline = 0;
	} else if (x->monitors_sync_deadline && now >= x->monitors_sync_deadline) {
		x->monitors_sync_deadline = 0;
		log_error("timed out waiting for dependency graph builder sync during GC sync");
		inf_metrics_discovery_sync_error(x->metrics);
	}
	/* the feed's ring pages the dispatchers have read since the last batch go back (F7) */
	if (x->feed)
		(void)shm_feed_trim(x->feed);
	if (kube_loop_error(x->kl)) {
		log_error("event loop error in the API client: %s",
		          strerror(-kube_loop_error(x->kl)));
		return kube_loop_error(x->kl);
	}
	/* 50 ms while listing or when an acquisition may come (the barrier's latency), else 1 s */
	return ipc_source_set_time(s,
	                           now + (x->logged_synced && !x->leadership_fd ? 1000000 : 50000));
}

static int open_arena(struct informerd *x)
{
	int fd = x->o.arena_fd, r;

	if (x->o.arena_path) {
		fd = open(x->o.arena_path, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			log_error("cannot open the arena %s: %s", x->o.arena_path, strerror(errno));
			return -errno;
		}
	} else if (fd < 0) {
		r = shm_arena_create(NULL, &fd);
		if (r < 0) {
			log_error("cannot create an arena: %s", strerror(-r));
			return r;
		}
		log_info("no arena passed: using a private one (fd %d of pid %d)", fd,
		         (int)getpid());
	}
	r = shm_writer_open(fd, &x->arena);
	if (r < 0) {
		log_error("cannot open the arena as its writer: %s%s", strerror(-r),
		          r == -EBUSY ? " (another informerd is alive)"
		          : r == -EPROTONOSUPPORT
		                  ? " (an arena of another kcmd version: restart kcmd, "
		                    "whose manager creates a fresh one)"
		                  : "");
		return r;
	}
	return 0;
}

static int open_metrics(struct informerd *x)
{
	const char *env = getenv("KCMD_INFORMER_METRICS_FD");
	long n;
	int fd = -1, r;

	if (x->o.metrics_file) {
		fd = open(x->o.metrics_file, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0) {
			log_error("cannot open %s: %s", x->o.metrics_file, strerror(errno));
			return -errno;
		}
	} else if (env && parse_int(env, 0, 1 << 20, &n) == 0) {
		fd = (int)n;
	}
	r = inf_metrics_open(fd, &x->metrics);
	if (r < 0)
		log_error("cannot open the metrics table: %s", strerror(-r));
	return r;
}

int main(int argc, char **argv)
{
	struct informerd *x = &(struct informerd){0};
	char err[512] = "";
	int r;

	signal(SIGPIPE, SIG_IGN);
	if (parse_flags(&x->o, argc, argv) < 0)
		return 2;
	kclog_init("informerd", NULL, x->o.v);
	x->started_at = ipc_now_usec();
	if (parse_resources(x) < 0 || x->n_res == 0) {
		log_error("no resource to watch");
		return 2;
	}
	r = ipc_loop_new(&x->loop, IPC_LOOP_BACKEND_AUTO);
	if (r < 0) {
		log_error("cannot create the event loop: %s", strerror(-r));
		return 1;
	}
	if (open_arena(x) < 0 || open_metrics(x) < 0)
		return 1;

	struct kube_config_opts co = {
	        .kubeconfig = x->o.kubeconfig, .master = x->o.master, .context = x->o.context};
	r = kube_config_load(&co, &x->kcfg, err, sizeof(err));
	if (r < 0) {
		log_error("kubeconfig: %s", err[0] ? err : strerror(-r));
		return 1;
	}
	struct kube_client_opts ko = {.config = x->kcfg,
	                              .process = "informerd",
	                              .controller = NULL,
	                              .qps = x->o.qps,
	                              .burst = x->o.burst,
	                              .insecure_ok = true,
	                              .content_type = x->o.content_type};
	r = kube_client_new(&ko, &x->kc);
	if (r < 0) {
		log_error("cannot create the API client for %s: %s", x->kcfg->server, strerror(-r));
		return 1;
	}
	r = kube_loop_attach(x->loop, x->kc, &x->kl);
	if (r < 0)
		return 1;
	if (inf_dispatch_new(&x->d) < 0 || inf_store_new(x->arena, x->d, &x->store) < 0)
		return 1;
	if (setup_feed(x) < 0)
		return 1;
	gethostname(x->host, sizeof(x->host) - 1);
	inf_dispatch_set_host(x->d, x->loop, x->kc, x->host);
	if (setup_queues_and_handlers(x) < 0)
		return 1;

	struct inf_informers_config ic = {.loop = x->loop,
	                                  .client = x->kc,
	                                  .store = x->store,
	                                  .metrics = x->metrics,
	                                  .watch_list = x->o.watch_list,
	                                  .min_watch_timeout_s = x->o.min_watch_timeout_s,
	                                  .no_warm_start = x->o.no_warm_start,
	                                  .on_error = on_informer_error,
	                                  .userdata = x};
	if (inf_informers_new(&ic, &x->ii) < 0)
		return 1;
	/* the epoch first: informers started after an acquisition (warm ones included) list for
	 * it instead of resuming an older watch */
	if ((r = kcmd_leadership_from_env()) < 0)
		return 1;
	x->leadership_fd = r > 0;
	check_epoch(x, ipc_now_usec(), true);
	/* every object is assumed stored until the first look at the cache set (F9) */
	memset(x->cache_set, 0xff, sizeof(x->cache_set));
	inf_store_set_filter(x->store, cache_keeps_ns, x);
	for (size_t i = 0; i < x->n_res; i++) {
		r = inf_informers_add(x->ii, &x->res[i]);
		if (r < 0) {
			log_error("cannot watch %s%s%s: %s", x->res[i].resource,
			          x->res[i].group[0] ? "." : "", x->res[i].group, strerror(-r));
			return 1;
		}
	}
	/* a warm arena may hold ranges lost while informerd was down: they go before the watch */
	check_cache_set(x, true);
	if (x->barrier_since && inf_informers_barrier_pending(x->ii) == 0) {
		/* restarted within the term over an arena already relisted for it: no barrier */
		log_info("leadership epoch %u: the cache was relisted for it already", x->epoch);
		x->barrier_since = 0;
	} else if (x->barrier_since) {
		log_barrier(x);
	}
	if (x->o.discover <
	    0) /* auto: off; the manager says --discover-deletable when a controller needs it */
		x->o.discover = 0;
	if (x->o.discover) {
		struct inf_discovery_config dc = {.loop = x->loop,
		                                  .client = x->kc,
		                                  .on_round = on_discovery,
		                                  .userdata = x,
		                                  .period_usec = (uint64_t)x->o.discovery_period_s *
		                                                 1000000ULL};
		if (inf_discovery_new(&dc, &x->disc) < 0)
			return 1;
	}
	if (ipc_loop_add_signal(x->loop, &x->sig_term, SIGTERM, on_signal, x) < 0 ||
	    ipc_loop_add_signal(x->loop, &x->sig_int, SIGINT, on_signal, x) < 0 ||
	    ipc_loop_add_timer(x->loop, &x->tick, ipc_now_usec() + 50000, on_tick, x) < 0)
		return 1;
	log_info("kcmd-informerd %s: %zu resources, %zu queues, apiserver %s, HTTP/2 %s, loop %s",
	         KCMD_VERSION, x->n_res, x->o.n_queues, x->kcfg->server,
	         kube_client_http2(x->kc) ? "yes" : "no", ipc_loop_backend(x->loop));
	r = ipc_loop_run(x->loop);

	ipc_source_free(x->feed_post);
	inf_discovery_free(x->disc);
	inf_informers_free(x->ii);
	inf_res_set_clear(&x->dres);
	for (size_t i = 0; i < x->o.n_queues; i++)
		ipc_queue_owner_free(x->o.queues[i].owner);
	inf_store_free(x->store);
	shm_feed_close(x->feed);
	inf_dispatch_free(x->d);
	ipc_source_free(x->tick);
	ipc_source_free(x->sig_term);
	ipc_source_free(x->sig_int);
	kube_loop_detach(x->kl);
	kube_client_free(x->kc);
	kube_config_free(x->kcfg);
	inf_metrics_close(x->metrics);
	shm_arena_close(x->arena);
	ipc_loop_free(x->loop);
	return r < 0 ? 1 : 0;
}
