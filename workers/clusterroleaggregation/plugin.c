/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/clusterroleaggregation/plugin.c: kcm's clusterrole-aggregation-controller (alias
 * clusterrole-aggregation), on by default, client "clusterrole-aggregation-controller": the
 * rules of aggregated ClusterRoles (`admin`, `edit`, `view`, ...; cra.h).
 *
 * Shape: ClusterRoles cached whole (labels, rules and aggregationRule are read from their
 * JSON). Any add, update or delete of a ClusterRole queues every ClusterRole that has an
 * aggregationRule (upstream's enqueue). One worker process: kcm runs five goroutines; a sync
 * here is a walk over the arena's ClusterRoles and at most one request, so one process keeps up
 * (docs/clusterroleaggregation.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcmd/kcmd.h"
#include "shm/record-model.h"
#include "workers/clusterroleaggregation/cra.h"
#include "workers/worker.h"

#define CRA_GROUP "rbac.authorization.k8s.io"

/* A cached ClusterRole's JSON, parsed; NULL when it cannot be read. */
static cJSON *role_json(const struct shm_obj *o)
{
	struct shm_obj copy;
	struct shm_object_view v;
	cJSON *j = NULL;

	if (shm_obj_dup(o, &copy) < 0)
		return NULL;
	if (shm_object_view_init(&copy, &v) == 0)
		j = cJSON_ParseWithLength(v.o.raw, v.o.raw_len);
	shm_object_view_free(&v);
	return j;
}

/* ---- handlers (kcmd-dispatcher) ----------------------------------------------------------- */
static int add_aggregated(const struct shm_obj *o, void *ud)
{
	cJSON *j = role_json(o);
	if (j && cra_aggregated(j))
		kcmd_queue_add(ud, 0, kcmd_obj_name(o));
	cJSON_Delete(j);
	return 0;
}

static void enqueue_all(struct inf_handler_ctx *ctx)
{
	kcmd_cache_list(ctx->arena, CRA_GROUP, "clusterroles", NULL, add_aggregated, ctx);
}

static void on_role(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	(void)ev;
	enqueue_all(ctx);
}

static void cra_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	enqueue_all(ctx);
}

static const char *const cra_queue_names[] = {CRA_QUEUE, NULL};
static const struct inf_handler_entry cra_entries[] = {
        {.group = CRA_GROUP,
         .resource = "clusterroles",
         .on_add = on_role,
         .on_update = on_role,
         .on_delete = on_role},
};
static const struct inf_handler_table cra_handlers = {
        .controller = CRA_CONTROLLER,
        .queues = cra_queue_names,
        .entries = cra_entries,
        .n_entries = 1,
        .resync = cra_resync,
};

/* ---- sync (kcmd-worker) ------------------------------------------------------------------- */
struct roles {
	cJSON **v;
	size_t n, cap;
};

static int collect(const struct shm_obj *o, void *ud)
{
	struct roles *rs = ud;
	cJSON *j = role_json(o);

	if (!j)
		return 0;
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? 2 * rs->cap : 128;
		cJSON **v = realloc(rs->v, cap * sizeof(*v));
		if (!v) {
			cJSON_Delete(j);
			return -ENOMEM;
		}
		rs->v = v;
		rs->cap = cap;
	}
	rs->v[rs->n++] = j;
	return 0;
}

static int cra_init(struct wk_ctx *ctx, void **ret_state)
{
	*ret_state = ctx;
	return 0;
}

static void cra_fini(void *state)
{
	(void)state;
}

static void cra_sync_key(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct wk_ctx *ctx = state;
	struct roles rs = {0};
	const cJSON *target = NULL;
	char *body = NULL, err[600] = "";
	int r;

	(void)q;
	*res = (struct wk_result){0};
	r = kcmd_cache_list(ctx->arena, CRA_GROUP, "clusterroles", NULL, collect, &rs);
	if (r < 0 && r != -ENOENT)
		goto out;
	r = 0;
	for (size_t i = 0; i < rs.n && !target; i++) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(
		        cJSON_GetObjectItemCaseSensitive(rs.v[i], "metadata"), "name");
		if (cJSON_IsString(n) && !strcmp(n->valuestring, key))
			target = rs.v[i];
	}
	if (!target || !cra_aggregated(target))
		goto out; /* gone, or no longer aggregated */
	if ((r = cra_sync(target, (const cJSON *const *)rs.v, rs.n, &body, err, sizeof(err))) < 0 ||
	    !body)
		goto out;
	struct kube_response resp = {0};
	r = kube_client_request(ctx->kc,
	                        &(struct kube_request){.verb = KUBE_PATCH,
	                                               .group = CRA_GROUP,
	                                               .version = "v1",
	                                               .resource = "clusterroles",
	                                               .name = key,
	                                               .patch_type = KUBE_PATCH_APPLY,
	                                               .field_manager = CRA_FIELD_MANAGER,
	                                               .body = body,
	                                               .body_len = strlen(body)},
	                        NULL, NULL, &resp);
	if (r < 0)
		snprintf(err, sizeof(err), "%s",
		         resp.error.message[0] ? resp.error.message : strerror(-r));
	else
		kcmd_log_v(2, "clusterrole %s: rules aggregated", key);
	kube_response_clear(&resp);
out:
	if (r < 0) {
		kcmd_log_warning("%s failed with : %s", key, err[0] ? err : strerror(-r));
		res->err = r;
	}
	for (size_t i = 0; i < rs.n; i++)
		cJSON_Delete(rs.v[i]);
	free(rs.v);
	free(body);
}

static const struct wk_controller cra_worker = {
        .name = CRA_CONTROLLER,
        .queues = cra_queue_names,
        .init = cra_init,
        .sync = cra_sync_key,
        .fini = cra_fini,
};

/* ---- the descriptor ----------------------------------------------------------------------- */
static const char *const cra_aliases[] = {"clusterrole-aggregation", NULL};
static const struct kcmd_watch cra_watches[] = {
        {CRA_GROUP, "v1", "clusterroles", "ClusterRole", KCMD_CACHE_OBJECT, false},
};
static const struct kcmd_queue cra_queues[] = {{.name = CRA_QUEUE}};

const struct kcmd_controller kcmd_clusterroleaggregation_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = CRA_CONTROLLER,
        .aliases = cra_aliases,
        .enabled_by_default = true,
        .service_account = "clusterrole-aggregation-controller",
        .cluster_scoped_keys = true,
        .watches = cra_watches,
        .n_watches = 1,
        .queues = cra_queues,
        .n_queues = 1,
        .handlers = &cra_handlers,
        .worker = &cra_worker,
};
