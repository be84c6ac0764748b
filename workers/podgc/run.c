/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/podgc/run.c: the pod garbage collector's process, a periodic loop (upstream's
 * wait.UntilWithContext(gc, 20s)), not a queue consumer.
 *
 * Started by the manager in its "workers" group (so it runs, and writes, only while kcmd leads),
 * one process, with KCMD_ARENA_FD (read-only), KCMD_METRICS_FD (its counters) and the
 * flag --terminated-pod-gc-threshold.
 *
 * Flow: wait until informerd has synced pods and nodes (WaitForNamedCacheSync), then one pass
 * at once and one 20 s after each pass ends. A pass snapshots the pods (typed records) and the
 * node names (metadata records) from the arena and runs upstream's four collectors in its order:
 * terminated over the threshold, terminating on out-of-service nodes, orphaned, unscheduled
 * terminating (gc.h). Writes go through one blocking client, up to PGC_BATCH at a time
 * (kube_client_request_many; upstream runs one goroutine per pod for the first two collectors),
 * under the controller's shared token bucket.
 *
 * Two facts the arena does not hold are read from the apiserver, only when a pass needs them:
 *   - a node's Ready condition and taints (gcTerminating): one GET per distinct node that has a
 *     terminating pod, per pass. kcmd caches nodes metadata-only today; a typed node record
 *     (the "records" work) would replace the GET.
 *   - status.reason of Failed pods (eviction.PodIsEvicted orders evicted pods first): one
 *     paginated LIST with fieldSelector status.phase=Failed, only in a pass that deletes
 *     terminated pods over the threshold while some of them are Failed.
 * And, as upstream's UpdatePodCondition keeps an existing DisruptionTarget's lastTransitionTime,
 * an orphaned pod is read before its status patch (the record has no conditions), with a LIST by
 * metadata.name: the pod-garbage-collector role may list pods but not get them.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "kcmd/metrics.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/limiter.h"
#include "lib/childenv.h"
#include "lib/log.h"
#include "shm/arena.h"
#include "workers/podgc/gc.h"
#include "workers/podgc/run.h"
#include "workers/podgc/snap.h"

#define PGC_BATCH      64u
#define PGC_SYNC_POLL  100 /* ms between looks at the informers' synced flags */
#define PGC_LIST_LIMIT 500

struct pgc {
	struct shm_arena *arena;
	struct kube_client *kc;
	struct kcmd_metrics *met; /* NULL: no region passed */
	struct pgc_quarantine *quar;
	int64_t threshold;
	int sfd;
	bool stop, fenced, dropped_logged;
	int pod_type, node_type;
};

static int node_visit(const struct shm_obj *o, void *ud)
{
	return o->name && pgc_set_add(ud, o->name) < 0 ? -ENOMEM : 0;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static bool stopping(struct pgc *s)
{
	struct signalfd_siginfo si;

	if (!s->stop && read(s->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		log_info("signal %u: stopping", si.ssi_signo);
		s->stop = true;
	}
	return s->stop || s->fenced;
}

/* Sleeps until the deadline or a signal. */
static void sleep_us(struct pgc *s, uint64_t us)
{
	struct pollfd pfd = {.fd = s->sfd, .events = POLLIN};
	int ms = (int)(us / 1000);

	stopping(s);
	if (!s->stop && poll(&pfd, 1, ms) > 0)
		stopping(s);
}

static const char *errtext(const struct kube_response *r)
{
	return r->error.message[0] ? r->error.message : strerror(-r->error.err);
}

/* ---- markFailedAndDeletePod over a batch --------------------------------------------------- */

/* Marks the pods Failed where upstream does, then deletes them with a grace period of 0. Counts
 * each in the metrics as upstream (total always, errors when the patch or the delete failed). */
static void force_delete(struct pgc *s, struct pgc_pod *const *pods, size_t n,
                         enum pgc_reason reason, bool with_condition)
{
	for (size_t off = 0; off < n && !stopping(s); off += PGC_BATCH) {
		size_t m = n - off < PGC_BATCH ? n - off : PGC_BATCH, np = 0, nd = 0;
		struct kube_request rq[PGC_BATCH];
		struct kube_response rs[PGC_BATCH];
		struct pgc_cond_state cur[PGC_BATCH];
		size_t map[PGC_BATCH];
		char *body[PGC_BATCH] = {0};
		int err[PGC_BATCH] = {0};

		memset(cur, 0, sizeof(cur));
		for (size_t i = 0; i < m; i++)
			log_info("PodGC is force deleting Pod pod=\"%s/%s\"", pods[off + i]->ns,
			         pods[off + i]->name);
		/* the DisruptionTarget condition as it is now (UpdatePodCondition keeps its time),
		 * read with a LIST by name: upstream's pod-garbage-collector role may list pods,
		 * not get them */
		char sel[PGC_BATCH][300];
		if (with_condition) {
			for (size_t i = 0; i < m; i++) {
				if (!pgc_needs_failed_patch(pods[off + i]))
					continue;
				snprintf(sel[i], sizeof(sel[i]), "metadata.name=%s",
				         pods[off + i]->name);
				map[np] = i;
				rq[np++] = (struct kube_request){.verb = KUBE_LIST,
				                                 .version = "v1",
				                                 .resource = "pods",
				                                 .ns = pods[off + i]->ns,
				                                 .field_selector = sel[i]};
			}
			/* A read that failed leaves the pod for the next pass: patching without
			 * it would stamp a new lastTransitionTime over an existing condition's.
			 * Counted as a failed attempt, as a failed patch is. A pod missing from the
			 * list (gone, or another one of that name) goes on: the patch's uid
			 * precondition settles it. */
			int r = np ? kube_client_request_many(s->kc, rq, np, rs, NULL) : 0;
			for (size_t k = 0; k < np; k++) {
				size_t i = map[k];
				int e = r < 0 ? r : rs[k].error.err;
				if (e == 0 && rs[k].body) {
					e = pgc_cond_state_from_json(rs[k].body, rs[k].body_len,
					                             pods[off + i]->uid, &cur[i]);
					if (e == -ENOENT)
						e = 0;
				} else if (e == 0)
					e = -EBADMSG;
				if (e < 0) {
					err[i] = e;
					if (e != -ENOLCK)
						log_error("Failed to read pod pod=\"%s/%s\" before "
						          "its "
						          "status patch (retried next pass): %s",
						          pods[off + i]->ns, pods[off + i]->name,
						          r < 0 ? strerror(-r) : errtext(&rs[k]));
				}
				if (r == 0)
					kube_response_clear(&rs[k]);
			}
			np = 0;
		}
		for (size_t i = 0; i < m; i++) {
			struct pgc_pod *p = pods[off + i];
			if (err[i] < 0 || !pgc_needs_failed_patch(p))
				continue;
			if ((err[i] = pgc_failed_patch_body(p->uid, p->generation, with_condition,
			                                    &cur[i], kube_time_now(), &body[i])) <
			    0)
				continue;
			map[np] = i;
			rq[np++] = (struct kube_request){.verb = KUBE_PATCH,
			                                 .version = "v1",
			                                 .resource = "pods",
			                                 .ns = p->ns,
			                                 .name = p->name,
			                                 .subresource = "status",
			                                 .patch_type = KUBE_PATCH_STRATEGIC,
			                                 .body = body[i],
			                                 .body_len = strlen(body[i])};
		}
		if (np) {
			int r = kube_client_request_many(s->kc, rq, np, rs, NULL);
			for (size_t k = 0; k < np; k++) {
				size_t i = map[k];
				err[i] = r < 0 ? r : rs[k].error.err;
				if (r == 0 && err[i] < 0 && err[i] != -ENOLCK)
					log_error("Failed to patch status of pod pod=\"%s/%s\": %s",
					          pods[off + i]->ns, pods[off + i]->name,
					          errtext(&rs[k]));
				if (r == 0)
					kube_response_clear(&rs[k]);
			}
		}
		for (size_t i = 0; i < m; i++) {
			free(body[i]);
			if (err[i] < 0)
				continue;
			map[nd] = i;
			rq[nd++] = (struct kube_request){.verb = KUBE_DELETE,
			                                 .version = "v1",
			                                 .resource = "pods",
			                                 .ns = pods[off + i]->ns,
			                                 .name = pods[off + i]->name,
			                                 .has_grace_period = true,
			                                 .grace_period_seconds = 0};
		}
		if (nd) {
			int r = kube_client_request_many(s->kc, rq, nd, rs, NULL);
			for (size_t k = 0; k < nd; k++) {
				size_t i = map[k];
				err[i] = r < 0 ? r : rs[k].error.err;
				if (r == 0 && err[i] < 0 && err[i] != -ENOLCK)
					log_error("Failed to delete pod pod=\"%s/%s\": %s",
					          pods[off + i]->ns, pods[off + i]->name,
					          errtext(&rs[k]));
				if (r == 0)
					kube_response_clear(&rs[k]);
			}
		}
		for (size_t i = 0; i < m; i++) {
			struct pgc_pod *p = pods[off + i];
			if (err[i] == -ENOLCK) {
				/* not the leader any more: the manager stops this process */
				s->fenced = true;
				continue;
			}
			if (err[i] == 0 && reason == PGC_REASON_ORPHANED)
				log_info("Forced deletion of orphaned Pod succeeded pod=\"%s/%s\"",
				         p->ns, p->name);
			else if (err[i] == 0 && reason == PGC_REASON_UNSCHEDULED)
				log_info("Forced deletion of unscheduled terminating Pod succeeded "
				         "pod=\"%s/%s\"",
				         p->ns, p->name);
			/* upstream counts every attempt, and the failed ones again */
			const char *lv[2] = {p->ns, pgc_reason_label(reason)};
			int mr = kcmd_metric_inc(s->met, PGC_M_FORCE_DELETE, lv);
			if (err[i] < 0 && mr != -ENOSPC)
				mr = kcmd_metric_inc(s->met, PGC_M_FORCE_DELETE_ERRORS, lv);
			if (mr == -ENOSPC && !s->dropped_logged) {
				s->dropped_logged = true;
				log_warning(
				        "pod GC metrics: the series table is full (%u); further "
				        "series are counted in kcmd_metric_series_dropped_total",
				        PGC_METRIC_SERIES);
			}
		}
	}
}

/* ---- the four collectors -------------------------------------------------------------------- */

/* status.reason of the Failed pods: which are evicted (eviction.PodIsEvicted). */
static int mark_evicted(struct pgc *s, struct pgc_snap *sn)
{
	char *cont = NULL;
	struct pgc_set *ev = NULL;
	int r = pgc_set_new(&ev);

	if (r < 0)
		return r;
	do {
		struct kube_request rq = {.verb = KUBE_LIST,
		                          .version = "v1",
		                          .resource = "pods",
		                          .field_selector = "status.phase=Failed",
		                          .limit = PGC_LIST_LIMIT,
		                          .cont = cont};
		struct kube_response rs = {0};
		cJSON *root, *it;

		r = kube_client_request(s->kc, &rq, NULL, NULL, &rs);
		if (r < 0) {
			log_error("listing the Failed pods: %s", errtext(&rs));
			kube_response_clear(&rs);
			break;
		}
		root = cJSON_ParseWithLength(rs.body, rs.body_len);
		kube_response_clear(&rs);
		free(cont);
		cont = NULL;
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(root, "items"))
		{
			const cJSON *st = cJSON_GetObjectItemCaseSensitive(it, "status");
			const cJSON *re = cJSON_GetObjectItemCaseSensitive(st, "reason");
			const cJSON *uid = cJSON_GetObjectItemCaseSensitive(
			        cJSON_GetObjectItemCaseSensitive(it, "metadata"), "uid");
			if (cJSON_IsString(re) && !strcmp(re->valuestring, "Evicted") &&
			    cJSON_IsString(uid) && pgc_set_add(ev, uid->valuestring) < 0)
				r = -ENOMEM;
		}
		const cJSON *c = cJSON_GetObjectItemCaseSensitive(
		        cJSON_GetObjectItemCaseSensitive(root, "metadata"), "continue");
		if (cJSON_IsString(c) && c->valuestring[0] && !(cont = strdup(c->valuestring)))
			r = -ENOMEM;
		cJSON_Delete(root);
	} while (r >= 0 && cont && !stopping(s));
	for (size_t i = 0; i < sn->n; i++)
		sn->pods[i].evicted =
		        sn->pods[i].phase == KUBE_POD_FAILED && pgc_set_has(ev, sn->pods[i].uid);
	pgc_set_free(ev);
	free(cont);
	return r < 0 ? r : 0;
}

static void delete_selected(struct pgc *s, struct pgc_snap *sn, const size_t *idx, size_t n,
                            enum pgc_reason reason, bool with_condition);

static void gc_terminated(struct pgc *s, struct pgc_snap *sn)
{
	size_t *idx = NULL, n = 0, failed = 0;

	if (pgc_select_terminated(sn->pods, sn->n, s->threshold, &idx, &n) < 0 || !n) {
		free(idx);
		return;
	}
	/* evicted pods go first: learn which are, when it can matter */
	for (size_t i = 0; i < sn->n; i++)
		failed += pgc_pod_terminated(&sn->pods[i]) && sn->pods[i].phase == KUBE_POD_FAILED;
	if (failed && mark_evicted(s, sn) == 0) {
		free(idx);
		if (pgc_select_terminated(sn->pods, sn->n, s->threshold, &idx, &n) < 0 || !n) {
			free(idx);
			return;
		}
	}
	log_info("Garbage collecting pods numPods=%zu", n);
	delete_selected(s, sn, idx, n, PGC_REASON_TERMINATED, false);
	free(idx);
}

/* struct pgc_nodes_api over the client: GET /api/v1/nodes/<name>. */
static int api_get_node(void *ud, const char *node, struct pgc_node_facts *ret)
{
	struct pgc *s = ud;
	struct kube_request rq = {
	        .verb = KUBE_GET, .version = "v1", .resource = "nodes", .name = node};
	struct kube_response rs = {0};
	int r;

	if (stopping(s))
		return -ECANCELED;
	r = kube_client_request(s->kc, &rq, NULL, NULL, &rs);
	if (r == 0 && (r = pgc_node_facts_from_json(rs.body, rs.body_len, ret)) < 0)
		log_error("node \"%s\": unreadable answer", node);
	else if (r < 0 && r != -ENOENT)
		log_error("Error while getting node node=\"%s\": %s", node, errtext(&rs));
	kube_response_clear(&rs);
	return r;
}

/* Force-deletes pods[idx[0..n)] for reason. */
static void delete_selected(struct pgc *s, struct pgc_snap *sn, const size_t *idx, size_t n,
                            enum pgc_reason reason, bool with_condition)
{
	struct pgc_pod **sel;

	if (!n)
		return;
	if (!(sel = malloc(n * sizeof(*sel)))) {
		log_error("out of memory");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		sel[i] = &sn->pods[idx[i]];
		if (reason == PGC_REASON_ORPHANED)
			log_v(2,
			      "Found orphaned Pod assigned to the Node, deleting pod=\"%s/%s\" "
			      "node=\"%s\"",
			      sel[i]->ns, sel[i]->name, sel[i]->node_name);
		else if (reason == PGC_REASON_UNSCHEDULED)
			log_v(2,
			      "Found unscheduled terminating Pod not assigned to any Node, "
			      "deleting "
			      "pod=\"%s/%s\"",
			      sel[i]->ns, sel[i]->name);
		else if (reason == PGC_REASON_OUT_OF_SERVICE)
			log_v(4, "Garbage collecting pod that is terminating pod=\"%s/%s\"",
			      sel[i]->ns, sel[i]->name);
	}
	force_delete(s, sel, n, reason, with_condition);
	free(sel);
}

static void gc_terminating(struct pgc *s, struct pgc_snap *sn, const struct pgc_set *nodes)
{
	struct pgc_nodes_api api = {.get = api_get_node, .ud = s};
	size_t *idx = NULL, n = 0;

	if (pgc_select_terminating(sn->pods, sn->n, nodes, &api, &idx, &n) < 0) {
		log_error("out of memory");
		return;
	}
	if (n)
		log_v(4,
		      "Garbage collecting pods that are terminating on node tainted with "
		      "node.kubernetes.io/out-of-service numPods=%zu",
		      n);
	delete_selected(s, sn, idx, n, PGC_REASON_OUT_OF_SERVICE, false);
	free(idx);
}

static void gc_orphaned(struct pgc *s, struct pgc_snap *sn, const struct pgc_set *nodes)
{
	struct pgc_nodes_api api = {.get = api_get_node, .ud = s};
	size_t *idx = NULL, n = 0;

	if (pgc_select_orphaned(s->quar, sn->pods, sn->n, nodes, now_us(), &api, &idx, &n) < 0) {
		log_error("out of memory");
		return;
	}
	if (!stopping(s))
		delete_selected(s, sn, idx, n, PGC_REASON_ORPHANED, true);
	free(idx);
}

static void gc_unscheduled_terminating(struct pgc *s, struct pgc_snap *sn)
{
	size_t *idx = NULL, n = 0;

	if (pgc_select_unscheduled(sn->pods, sn->n, &idx, &n) < 0) {
		log_error("out of memory");
		return;
	}
	delete_selected(s, sn, idx, n, PGC_REASON_UNSCHEDULED, false);
	free(idx);
}

static void gc_pass(struct pgc *s)
{
	struct pgc_snap sn = {0};
	struct pgc_set *nodes = NULL;
	int r;

	if ((r = pgc_snap_pods(s->arena, (uint16_t)s->pod_type, &sn)) < 0) {
		log_error("Error while listing all pods: %s", strerror(-r));
		goto out;
	}
	if ((r = pgc_set_new(&nodes)) < 0 ||
	    (r = shm_reader_list(s->arena, (uint16_t)s->node_type, node_visit, nodes)) < 0) {
		log_error("Error while listing all nodes: %s", strerror(-r));
		goto out;
	}
	if (s->threshold > 0 && !stopping(s))
		gc_terminated(s, &sn);
	if (!stopping(s))
		gc_terminating(s, &sn, nodes);
	if (!stopping(s))
		gc_orphaned(s, &sn, nodes);
	if (!stopping(s))
		gc_unscheduled_terminating(s, &sn);
out:
	pgc_set_free(nodes);
	pgc_snap_free(&sn);
}

/* ---- main -------------------------------------------------------------------------------------
 */

/* WaitForNamedCacheSync: both informers have listed once. */
static bool caches_synced(struct pgc *s)
{
	struct shm_type_info ti;

	if (s->pod_type < 0)
		s->pod_type = shm_reader_find_type(s->arena, "", "v1", "pods");
	if (s->node_type < 0)
		s->node_type = shm_reader_find_type(s->arena, "", "v1", "nodes");
	return s->pod_type >= 0 && s->node_type >= 0 &&
	       shm_reader_type_info(s->arena, (uint16_t)s->pod_type, &ti) == 0 && ti.synced &&
	       shm_reader_type_info(s->arena, (uint16_t)s->node_type, &ti) == 0 && ti.synced;
}

static void usage(void)
{
	fprintf(stderr, "usage: kcmd-worker --controller=" PGC_CONTROLLER
	                " [--kubeconfig=F] [--master=URL] [--kube-api-qps=Q]\n"
	                "       [--kube-api-burst=B] [--v=N] [--terminated-pod-gc-threshold=N]\n"
	                "Started by kcmd with KCMD_ARENA_FD and KCMD_METRICS_FD set.\n");
}

int pgc_main(int argc, char **argv)
{
	struct pgc *s = &(struct pgc){
	        .threshold = PGC_DEFAULT_THRESH, .pod_type = -1, .node_type = -1, .sfd = -1};
	struct kcmd_child_args ca = {.qps = 20, .burst = 30};
	struct kube_config *kcfg = NULL;
	struct kube_limiter *lim = NULL;
	int r, rc = 1;
	char err[512], *end;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool bad = false;
		if (kcmd_child_arg(&ca, a))
			bad = ca.controller && strcmp(ca.controller, PGC_CONTROLLER) != 0 &&
			      strcmp(ca.controller, "podgc") != 0;
		else if (strncmp(a, "--terminated-pod-gc-threshold=", 30) == 0) {
			errno = 0;
			s->threshold = strtoll(a + 30, &end, 10);
			bad = errno || end == a + 30 || *end;
		} else
			bad = true;
		if (bad) {
			fprintf(stderr, "kcmd-worker: bad argument %s\n", a);
			usage();
			return 2;
		}
	}
	kclog_init(getenv("KCMD_PROCESS") ? getenv("KCMD_PROCESS") : PGC_CONTROLLER, PGC_CONTROLLER,
	           ca.v);
	signal(SIGPIPE, SIG_IGN);

	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0 ||
	    (s->sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC)) < 0) {
		log_error("signalfd: %s", strerror(errno));
		return 1;
	}
	int afd = kcmd_env_fd("KCMD_ARENA_FD");
	if (afd < 0 || (r = shm_reader_open(afd, &s->arena)) < 0) {
		log_error("KCMD_ARENA_FD: no usable arena (%s)",
		          afd < 0 ? "not set" : strerror(-r));
		goto out;
	}
	if (!(s->met = kcmd_metrics_get()))
		log_warning(
		        "KCMD_METRICS_FD: no metrics region; the force-delete counters stay at 0");
	struct kube_config_opts co = {.kubeconfig = ca.kubeconfig, .master = ca.master};
	if (kube_config_load(&co, &kcfg, err, sizeof(err)) < 0) {
		log_error("kubeconfig: %s", err);
		goto out;
	}
	/* --use-service-account-credentials: the manager's token for pod-garbage-collector */
	int tfd = kcmd_env_fd("KCMD_TOKEN_FD");
	if (tfd >= 0) {
		char tpath[48];
		snprintf(tpath, sizeof(tpath), "/proc/self/fd/%d", tfd);
		if ((r = kube_config_use_token_file(kcfg, tpath)) < 0) {
			log_error("KCMD_TOKEN_FD: %s", strerror(-r));
			goto out;
		}
	}
	int lfd = kcmd_env_fd("KCMD_CLIENT_LIMITER_FD");
	if (lfd >= 0 && ca.qps > 0 && (r = kube_limiter_open(lfd, ca.qps, ca.burst, &lim)) < 0) {
		log_warning("KCMD_CLIENT_LIMITER_FD: %s; this process limits itself alone",
		            strerror(-r));
		lim = NULL;
	}
	struct kube_client_opts ko = {.config = kcfg,
	                              .process = "worker",
	                              .controller = PGC_CONTROLLER,
	                              .qps = ca.qps,
	                              .burst = ca.burst,
	                              .insecure_ok = true,
	                              .limiter = lim};
	if ((r = kube_client_new(&ko, &s->kc)) < 0) {
		log_error("API client: %s", strerror(-r));
		goto out;
	}
	if ((r = pgc_quarantine_new(&s->quar)) < 0)
		goto out;
	log_info("Starting controller controller=\"%s\" terminatedPodThreshold=%lld",
	         PGC_CONTROLLER, (long long)s->threshold);
	while (!caches_synced(s) && (stopping(s), !s->stop))
		sleep_us(s, PGC_SYNC_POLL * 1000u);
	if (!s->stop)
		log_info("Caches are synced for %s", PGC_CONTROLLER);
	/* wait.UntilWithContext: a pass, then the period from its end. A pass cut short by the
	 * fence (-ENOLCK: not leading) ends; the manager stops this process if leadership is lost.
	 */
	while ((stopping(s), !s->stop)) {
		s->fenced = false;
		gc_pass(s);
		sleep_us(s, PGC_PERIOD_US);
	}
	log_info("Shutting down controller %s", PGC_CONTROLLER);
	rc = 0;
out:
	pgc_quarantine_free(s->quar);
	kube_client_free(s->kc);
	kube_limiter_free(lim);
	kube_config_free(kcfg);
	if (s->arena)
		shm_arena_close(s->arena);
	if (s->sfd >= 0)
		close(s->sfd);
	return rc;
}
