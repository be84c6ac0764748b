/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/kubeletsim/table.c: informerd's pod events → keys "<ns>/<name>" on "kubelet-sim" for
 * the pods the simulator has something to do with (ks_decide() != KS_NONE), and the resync
 * that re-adds all of them from the arena after a queue owner (re)start.
 */
#include "workers/kubeletsim/table.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "shm/records.h"
#include "ipc/queue.h"
#include "lib/log.h"

static bool job_controller(const char *api_version, const char *kind, int controller)
{
	return controller == 1 && kind && api_version && !strcmp(kind, "Job") &&
	       !strcmp(api_version, "batch/v1");
}

static bool ds_controller(const char *api_version, const char *kind, int controller)
{
	return controller == 1 && kind && api_version && !strcmp(kind, "DaemonSet") &&
	       !strcmp(api_version, "apps/v1");
}

int ks_pod_from_obj(const struct shm_obj *obj, struct ks_pod *ret)
{
	struct shm_rec_view v;
	struct shm_rec_pod fp;
	const char *node;
	size_t len;
	int r;

	memset(ret, 0, sizeof(*ret));
	if (obj->kind != SHM_RECORD_POD)
		return -EINVAL;
	if ((r = shm_rec_parse(obj->payload, obj->payload_len, &v)) < 0 ||
	    (r = shm_rec_pod_get(&v, &fp)) < 0 || (r = shm_rec_blob(&v, 0, &node, &len)) < 0)
		return r;
	ret->ns = obj->ns;
	ret->name = obj->name;
	ret->uid = obj->uid;
	ret->rv = obj->rv;
	ret->node_name = len ? node : NULL;
	ret->phase = (enum kube_pod_phase)fp.phase;
	ret->ready = fp.ready;
	ret->deletion_ts = v.hdr.deletion_ts;
	ret->ready_since = fp.ready_transition_time;
	ret->restarts = fp.max_restarts;
	for (size_t i = 0; i < obj->n_owners; i++) {
		if (job_controller(obj->owners[i].api_version, obj->owners[i].kind,
		                   obj->owners[i].controller))
			ret->job_owned = true;
		if (ds_controller(obj->owners[i].api_version, obj->owners[i].kind,
		                  obj->owners[i].controller))
			ret->ds_owned = true;
	}
	return 0;
}

void ks_pod_from_model(const struct kube_pod *p, struct ks_pod *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->ns = p->meta.namespace;
	ret->name = p->meta.name;
	ret->uid = p->meta.uid;
	ret->rv = p->meta.resource_version;
	ret->node_name = p->node_name;
	ret->phase = p->phase;
	ret->ready = p->ready;
	ret->deletion_ts = p->meta.deletion_timestamp;
	ret->ready_since = p->ready_transition_time;
	ret->restarts = p->max_restarts;
	for (uint32_t i = 0; i < p->meta.n_owner_refs; i++) {
		if (job_controller(p->meta.owner_refs[i].api_version, p->meta.owner_refs[i].kind,
		                   p->meta.owner_refs[i].controller))
			ret->job_owned = true;
		if (ds_controller(p->meta.owner_refs[i].api_version, p->meta.owner_refs[i].kind,
		                  p->meta.owner_refs[i].controller))
			ret->ds_owned = true;
	}
}

static void add_key(struct inf_handler_ctx *ctx, const struct ks_pod *p)
{
	char key[IPC_QUEUE_KEY_MAX + 1];
	int n;

	if (!p->ns || !p->name)
		return;
	n = snprintf(key, sizeof(key), "%s/%s", p->ns, p->name);
	if (n < 0 || (size_t)n >= sizeof(key))
		return;
	/* Delay is the simulator's business: every action but NONE is worth a key. */
	if (ks_decide(p, 0, 0, 0, NULL) == KS_NONE)
		return;
	int r = ipc_queue_owner_add(ctx->queues[0], key);
	if (r < 0 && r != -ESHUTDOWN)
		log_v(2, "kubelet-sim: adding %s: %s", key, strerror(-r));
}

static void on_pod(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	struct ks_pod p;

	if (!ev->obj)
		return;
	ks_pod_from_model(ev->obj, &p);
	add_key(ctx, &p);
}

static int resync_visit(const struct shm_obj *o, void *ud)
{
	struct ks_pod p;

	if (ks_pod_from_obj(o, &p) == 0)
		add_key(ud, &p);
	return 0;
}

static void ks_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	int t;

	(void)queue;
	(void)restarted;
	t = shm_reader_find_type(ctx->arena, "", "v1", "pods");
	if (t >= 0)
		shm_reader_list(ctx->arena, (uint16_t)t, resync_visit, ctx);
}

static const char *const ks_queues[] = {KS_QUEUE, NULL};
static const struct inf_handler_entry ks_entries[] = {
        {.group = "", .resource = "pods", .on_add = on_pod, .on_update = on_pod},
};

const struct inf_handler_table ks_handler_table = {
        .controller = KS_CONTROLLER,
        .queues = ks_queues,
        .entries = ks_entries,
        .n_entries = 1,
        .resync = ks_resync,
};
