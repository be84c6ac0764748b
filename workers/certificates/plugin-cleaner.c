/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/certificates/plugin-cleaner.c: kcm's certificatesigningrequest-cleaner-controller
 * (alias csrcleaner), on by default, client "certificate-controller" (cleaner.h has the rules).
 *
 * Shape: upstream runs its pass at start and every hour (wait.Until, one worker, no queue);
 * here one key ("clean") queued by the dispatcher's resync (at start, and again after a
 * dispatcher or informerd restart, as a restarted kcm would) and requeued after an hour by its
 * sync. CSRs are read from the cache (cached whole); each one the rules select is deleted (no
 * precondition, as upstream); an error is logged and the next pass tries again.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "kcmd/kcmd.h"
#include "workers/certificates/cleaner.h"
#include "workers/worker.h"

static void cleaner_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	kcmd_queue_add(ctx, 0, CSR_CLEANER_KEY);
}

static const char *const cleaner_queue_names[] = {CSR_CLEANER_QUEUE, NULL};
static const struct inf_handler_entry cleaner_entries[] = {
        /* read by the sync; no event queues anything */
        {.group = "certificates.k8s.io", .resource = "certificatesigningrequests"},
};
static const struct inf_handler_table cleaner_handlers = {
        .controller = CSR_CLEANER_CONTROLLER,
        .queues = cleaner_queue_names,
        .entries = cleaner_entries,
        .n_entries = 1,
        .resync = cleaner_resync,
};

struct pass {
	struct wk_ctx *ctx;
	int64_t now;
	unsigned deleted, errors;
};

static int handle(const struct shm_obj *o, void *ud)
{
	struct pass *p = ud;
	size_t len = 0;
	const char *json = kcmd_obj_json(o, &len), *name = kcmd_obj_name(o);
	enum csr_clean c;
	int r;

	if (!json || (c = csr_cleaner_decide(json, len, p->now)) == CSR_KEEP)
		return 0;
	kcmd_log_info("%s csr=\"%s\"", csr_cleaner_message(c), name);
	r = kcmd_kube_request(p->ctx->kc,
	                      &(struct kcmd_request){.method = "DELETE",
	                                             .group = "certificates.k8s.io",
	                                             .version = "v1",
	                                             .resource = "certificatesigningrequests",
	                                             .name = name},
	                      NULL, NULL);
	if (r < 0) {
		kcmd_log_error("Error while attempting to clean CSR csr=\"%s\" err=\"unable to "
		               "delete CSR %s: %s\"",
		               name, name,
		               kcmd_kube_reason(r) ? kcmd_kube_reason(r) : strerror(-r));
		p->errors++;
	} else {
		p->deleted++;
	}
	return 0;
}

static void cleaner_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct wk_ctx *ctx = state;
	struct timespec ts;
	struct pass p = {.ctx = ctx};

	(void)q;
	(void)key;
	*res = (struct wk_result){.requeue_after = true, .after_usec = CSR_CLEANER_INTERVAL_US};
	if (kcmd_cache_synced(ctx->arena, "certificates.k8s.io", "certificatesigningrequests") !=
	    1) {
		res->after_usec = 1000000; /* WaitForCacheSync */
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	p.now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	kcmd_cache_list(ctx->arena, "certificates.k8s.io", "certificatesigningrequests", NULL,
	                handle, &p);
	kcmd_log_v(2, "CSR cleaner pass: %u deleted, %u errors", p.deleted, p.errors);
}

static int cleaner_init(struct wk_ctx *ctx, void **ret_state)
{
	*ret_state = ctx;
	return 0;
}

static const struct wk_controller cleaner_worker = {
        .name = CSR_CLEANER_CONTROLLER,
        .queues = cleaner_queue_names,
        .init = cleaner_init,
        .sync = cleaner_sync,
};

static const char *const cleaner_aliases[] = {"csrcleaner", NULL};
static const struct kcmd_watch cleaner_watches[] = {
        {"certificates.k8s.io", "v1", "certificatesigningrequests", "CertificateSigningRequest",
         KCMD_CACHE_OBJECT, false},
};
static const struct kcmd_queue cleaner_queues[] = {{.name = CSR_CLEANER_QUEUE}};

const struct kcmd_controller kcmd_csr_cleaner_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = CSR_CLEANER_CONTROLLER,
        .aliases = cleaner_aliases,
        .enabled_by_default = true,
        .service_account = "certificate-controller",
        .cluster_scoped_keys = true,
        .watches = cleaner_watches,
        .n_watches = 1,
        .queues = cleaner_queues,
        .n_queues = 1,
        .handlers = &cleaner_handlers,
        .worker = &cleaner_worker,
};
