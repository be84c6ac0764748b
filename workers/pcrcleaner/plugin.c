/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/pcrcleaner/plugin.c: kcm's podcertificaterequest-cleaner-controller (no alias), on by
 * default with the PodCertificateRequest gate (GA in v1.37), client
 * "podcertificaterequestcleaner" (pcr.h has the behaviour; docs/pcrcleaner.md).
 *
 * Shape: one key queued by the dispatcher's resync (at start, and again after a dispatcher or
 * informerd restart, as a restarted kcm would) and requeued 5 minutes after each pass by its
 * sync; PodCertificateRequests (certificates.k8s.io/v1) are cached whole and read from the
 * arena. KCMD_TEST_PCR_THRESHOLD_MS and KCMD_TEST_PCR_INTERVAL_MS shorten kcm's fixed 15 and 5
 * minutes for the e2e test only (kcm has no flag for either).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kcmd/kcmd.h"
#include "workers/pcrcleaner/pcr.h"
#include "workers/worker.h"

/* ---- handlers (kcmd-dispatcher): the one key at start ------------------------------------ */
static void pcr_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	kcmd_queue_add(ctx, 0, PCR_KEY);
}

static const char *const pcr_queue_names[] = {PCR_QUEUE, NULL};
static const struct inf_handler_entry pcr_entries[] = {
        /* read by the sync; no event queues anything */
        {.group = "certificates.k8s.io", .resource = "podcertificaterequests"},
};
static const struct inf_handler_table pcr_handlers = {
        .controller = PCR_CONTROLLER,
        .queues = pcr_queue_names,
        .entries = pcr_entries,
        .n_entries = 1,
        .resync = pcr_resync,
};

/* ---- the sync (kcmd-worker) --------------------------------------------------------------- */
struct pcr_state {
	struct wk_ctx *ctx;
	int64_t threshold_ns;
	uint64_t interval_us;
};

static int64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* a test-only override in milliseconds, or def */
static int64_t test_ms(const char *name, int64_t def)
{
	const char *v = getenv(name);
	char *end;
	long long ms;

	if (!v || !*v)
		return def;
	errno = 0;
	ms = strtoll(v, &end, 10);
	return errno || *end || ms <= 0 ? def : ms;
}

static int pcr_init(struct wk_ctx *ctx, void **ret_state)
{
	struct pcr_state *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->ctx = ctx;
	s->threshold_ns =
	        test_ms("KCMD_TEST_PCR_THRESHOLD_MS", PCR_THRESHOLD_NS / 1000000) * 1000000;
	s->interval_us =
	        (uint64_t)test_ms("KCMD_TEST_PCR_INTERVAL_MS", PCR_INTERVAL_US / 1000) * 1000;
	*ret_state = s;
	return 0;
}

static void pcr_fini(void *state)
{
	free(state);
}

struct pass {
	struct pcr_state *s;
	int64_t now;
	unsigned deleted, failed;
};

static int handle(const struct shm_obj *o, void *ud)
{
	struct pass *p = ud;
	size_t len = 0;
	const char *json = kcmd_obj_json(o, &len), *ns = kcmd_obj_namespace(o),
	           *name = kcmd_obj_name(o);
	int r;

	if (!json || pcr_due(json, len, p->now, p->s->threshold_ns) != 1)
		return 0;
	r = kcmd_kube_request(p->s->ctx->kc,
	                      &(struct kcmd_request){.method = "DELETE",
	                                             .group = "certificates.k8s.io",
	                                             .version = "v1",
	                                             .resource = "podcertificaterequests",
	                                             .ns = ns,
	                                             .name = name,
	                                             .precondition_uid = kcmd_obj_uid(o)},
	                      NULL, NULL);
	if (r == 0 || r == -ENOENT) {
		p->deleted += r == 0;
		return 0;
	}
	p->failed++;
	kcmd_log_error("Error while attempting to clean PodCertificateRequest pcr=\"%s/%s\": "
	               "unable to delete PodCertificateRequest \"%s/%s\": %s",
	               ns, name, ns, name,
	               kcmd_kube_reason(r) ? kcmd_kube_reason(r) : strerror(-r));
	return 0;
}

static void pcr_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct pcr_state *s = state;
	struct pass p = {.s = s, .now = wall_ns()};

	(void)q;
	(void)key;
	*res = (struct wk_result){.requeue_after = true, .after_usec = s->interval_us};
	if (kcmd_cache_synced(s->ctx->arena, "certificates.k8s.io", "podcertificaterequests") !=
	    1) {
		res->after_usec = 1000000; /* WaitForCacheSync */
		return;
	}
	kcmd_cache_list(s->ctx->arena, "certificates.k8s.io", "podcertificaterequests", NULL,
	                handle, &p);
	if (p.deleted || p.failed)
		kcmd_log_v(2, "PodCertificateRequests cleaned: %u deleted, %u failed", p.deleted,
		           p.failed);
}

static const struct wk_controller pcr_worker = {
        .name = PCR_CONTROLLER,
        .queues = pcr_queue_names,
        .init = pcr_init,
        .sync = pcr_sync,
        .fini = pcr_fini,
};

/* ---- the descriptor ----------------------------------------------------------------------- */
/* kcm's requiredFeatureGates; GA in v1.37 and not among the gates kcm's --help offers, so
 * always on here as in a kcm of the same flags */
static const char *const pcr_gates[] = {"PodCertificateRequest", NULL};
static const struct kcmd_watch pcr_watches[] = {
        {"certificates.k8s.io", "v1", "podcertificaterequests", "PodCertificateRequest",
         KCMD_CACHE_OBJECT, true},
};
static const struct kcmd_queue pcr_queues[] = {{.name = PCR_QUEUE}};

const struct kcmd_controller kcmd_pcrcleaner_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = PCR_CONTROLLER,
        .enabled_by_default = true,
        .feature_gates = pcr_gates,
        .service_account = "podcertificaterequestcleaner",
        .cluster_scoped_keys = true, /* its one key is no namespace/name */
        .watches = pcr_watches,
        .n_watches = sizeof(pcr_watches) / sizeof(pcr_watches[0]),
        .queues = pcr_queues,
        .n_queues = 1,
        .handlers = &pcr_handlers,
        .worker = &pcr_worker,
};
