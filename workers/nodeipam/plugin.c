/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/nodeipam/plugin.c: kcm's node-ipam-controller (alias nodeipam) with the
 * RangeAllocator, on by default but started only with --allocate-node-cidrs (kcm returns no
 * controller otherwise), client "node-controller" (cidrset.h has the pure parts;
 * docs/nodeipam.md).
 *
 * Shape: Nodes cached whole. The handlers queue a node's name on its add and every update, and
 * on its delete a release key carrying the podCIDRs it had (upstream releases them in the
 * informer's delete handler; here the one worker process that holds the CIDR sets does). One
 * worker process: the sets are its memory, rebuilt at start from a live LIST of the Nodes (as
 * upstream's allocator is built from a live LIST, not from the informer), so a restarted
 * worker never hands out a CIDR a Node already has. Allocation, the Node patch (strategic
 * merge of spec.podCIDR and spec.podCIDRs, 3 tries) and the CIDRNotAvailable /
 * CIDRAssignmentFailed Events as upstream's updateCIDRsAllocation.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "kcmd/kcmd.h"
#include "kube/client.h"
#include "workers/nodeipam/cidrset.h"
#include "workers/worker.h"

/* ---- a Node's podCIDRs ---------------------------------------------------------------------- */
struct pod_cidrs {
	int n;
	char s[2][64];
	bool deleting;
	char uid[128];
};

/* spec.podCIDRs (at most 2 kept; n counts them all), deletionTimestamp, uid */
static int node_facts(const cJSON *node, struct pod_cidrs *p)
{
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(node, "metadata");
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(node, "spec");
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(spec, "podCIDRs"), *it;
	const cJSON *uid = cJSON_GetObjectItemCaseSensitive(md, "uid");

	memset(p, 0, sizeof(*p));
	if (!cJSON_IsObject(node))
		return -EBADMSG;
	p->deleting = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(md, "deletionTimestamp"));
	snprintf(p->uid, sizeof(p->uid), "%s", cJSON_IsString(uid) ? uid->valuestring : "");
	cJSON_ArrayForEach(it, list)
	{
		if (p->n < 2)
			snprintf(p->s[p->n], sizeof(p->s[0]), "%s",
			         cJSON_IsString(it) ? it->valuestring : "");
		p->n++;
	}
	return 0;
}

static int facts_of_json(const char *json, size_t len, struct pod_cidrs *p)
{
	cJSON *o = cJSON_ParseWithLength(json, len);
	int r = node_facts(o, p);

	cJSON_Delete(o);
	return r;
}

/* ---- handlers (kcmd-dispatcher) ----------------------------------------------------------- */
static void on_node(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	if (ev->meta)
		kcmd_queue_add(ctx, 0, kcmd_meta_name(ev->meta));
}

static void on_node_delete(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	size_t len = 0;
	const char *json = ev->old ? kcmd_obj_json(ev->old, &len) : NULL;
	struct pod_cidrs p;
	char key[512];

	if (!json || facts_of_json(json, len, &p) < 0 || p.n == 0)
		return;
	snprintf(key, sizeof(key), IPAM_RELEASE "%s:%s%s%s", kcmd_obj_name(ev->old), p.s[0],
	         p.n > 1 ? "," : "", p.n > 1 ? p.s[1] : "");
	kcmd_queue_add(ctx, 0, key);
}

static int add_node(const struct shm_obj *o, void *ud)
{
	kcmd_queue_add(ud, 0, kcmd_obj_name(o));
	return 0;
}

static void ipam_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	kcmd_cache_list(ctx->arena, "", "nodes", NULL, add_node, ctx);
}

static const char *const ipam_queue_names[] = {IPAM_QUEUE, NULL};
static const struct inf_handler_entry ipam_entries[] = {
        {.group = "",
         .resource = "nodes",
         .on_add = on_node,
         .on_update = on_node,
         .on_delete = on_node_delete},
};
static const struct inf_handler_table ipam_handlers = {
        .controller = IPAM_CONTROLLER,
        .queues = ipam_queue_names,
        .entries = ipam_entries,
        .n_entries = 1,
        .resync = ipam_resync,
};

/* ---- configuration ------------------------------------------------------------------------ */
static struct ipam_flags flags_of(const struct kcmd_flag_values *v)
{
	return (struct ipam_flags){
	        .allocate_node_cidrs = kcmd_flag_bool(v, "allocate-node-cidrs"),
	        .cidr_allocator_type = kcmd_flag_string(v, "cidr-allocator-type"),
	        .cluster_cidr = kcmd_flag_string(v, "cluster-cidr"),
	        .service_cluster_ip_range = kcmd_flag_string(v, "service-cluster-ip-range"),
	        .node_cidr_mask_size = kcmd_flag_int(v, "node-cidr-mask-size"),
	        .node_cidr_mask_size_ipv4 = kcmd_flag_int(v, "node-cidr-mask-size-ipv4"),
	        .node_cidr_mask_size_ipv6 = kcmd_flag_int(v, "node-cidr-mask-size-ipv6"),
	};
}

static int ipam_precheck(const struct kcmd_flag_values *v, const struct kube_config *kcfg,
                         char *err, size_t errlen)
{
	struct ipam_flags f = flags_of(v);
	struct ipam_config c;
	char warn[512];
	int r;

	(void)kcfg;
	r = ipam_config(&f, &c, err, errlen, warn, sizeof(warn));
	if (r == -ECANCELED)
		return r;
	if (r < 0)
		return -EEXIST; /* kcm does not start */
	if (warn[0])
		snprintf(err, errlen, "%s", warn);
	return 0;
}

/* ---- the worker ----------------------------------------------------------------------------- */
struct ipam_state {
	struct wk_ctx *ctx;
	struct ipam_config cfg;
	struct ipam_cidrset sets[2];
	bool listed; /* the Nodes' existing podCIDRs are marked (the live LIST succeeded) */
};

static const char *reason(int r)
{
	return kcmd_kube_reason(r) ? kcmd_kube_reason(r) : strerror(-r);
}

/* occupyCIDRs: 0, or -EINVAL with a message */
static int occupy_node(struct ipam_state *s, const char *name, const struct pod_cidrs *p, char *err,
                       size_t errlen)
{
	for (int i = 0; i < p->n; i++) {
		struct ipam_cidr c;
		if (i >= 2 || ipam_cidr_parse(p->s[i], &c) < 0) {
			snprintf(err, errlen, "failed to parse node %s, CIDR %s", name, p->s[0]);
			return -EINVAL;
		}
		if (i >= s->cfg.n_cluster) {
			snprintf(err, errlen,
			         "node:%s has an allocated cidr: %s at index:%d that does not "
			         "exist in "
			         "cluster cidrs configuration",
			         name, p->s[i], i);
			return -EINVAL;
		}
		int r = ipam_cidrset_occupy(&s->sets[i], &c, NULL);
		if (r < 0) {
			snprintf(err, errlen,
			         "failed to mark cidr[%s] at idx [%d] as occupied for node: %s: %s",
			         p->s[i], i, name,
			         r == -ERANGE ? "cidr is out the range of cluster cidr"
			                      : strerror(-r));
			return r == -ENOMEM ? r : -EINVAL;
		}
	}
	return 0;
}

/* upstream's allocator is built from a live LIST of every Node */
static int occupy_listed(struct ipam_state *s)
{
	char err[512];
	cJSON *list, *it;
	struct kube_response resp = {0};
	struct kube_request req = {.verb = KUBE_LIST, .version = "v1", .resource = "nodes"};
	int r = kube_client_request(s->ctx->kc, &req, NULL, NULL, &resp);

	if (r < 0) {
		kcmd_log_error("Failed to list all nodes: %s", reason(r));
		kube_response_clear(&resp);
		return r;
	}
	list = cJSON_ParseWithLength(resp.body, resp.body_len);
	kube_response_clear(&resp);
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(list, "items"))
	{
		struct pod_cidrs p;
		const cJSON *nm = cJSON_GetObjectItemCaseSensitive(
		        cJSON_GetObjectItemCaseSensitive(it, "metadata"), "name");
		const char *name = cJSON_IsString(nm) ? nm->valuestring : "";
		if (node_facts(it, &p) < 0 || p.n == 0)
			continue;
		kcmd_log_v(4, "Node has CIDR, occupying it in CIDR map node=\"%s\" podCIDR=\"%s\"",
		           name, p.s[0]);
		/* kcm refuses to start here; kcmd logs it and goes on (never a crash loop) */
		if ((r = occupy_node(s, name, &p, err, sizeof(err))) < 0) {
			kcmd_log_error("%s", err);
			if (r == -ENOMEM) {
				cJSON_Delete(list);
				return r;
			}
		}
	}
	if (!list) {
		kcmd_log_error("Failed to list all nodes: the answer is not JSON");
		return -EBADMSG;
	}
	cJSON_Delete(list);
	return 0;
}

/* filterOutServiceRange */
static void filter_service(struct ipam_state *s, const struct ipam_cidr *svc)
{
	char a[64], b[64];

	for (int i = 0; i < s->cfg.n_cluster; i++) {
		const struct ipam_cidr *cl = &s->cfg.cluster[i];
		if (cl->v4 != svc->v4)
			continue;
		uint64_t changed;
		int r = ipam_cidrset_occupy(&s->sets[i], svc, &changed);
		if (r == -ERANGE)
			continue; /* no overlap */
		if (r < 0) {
			ipam_cidr_format(cl, a, sizeof(a));
			ipam_cidr_format(svc, b, sizeof(b));
			kcmd_log_error(
			        "Error filtering out service cidr out cluster cidr CIDR=\"%s\" "
			        "index=%d serviceCIDR=\"%s\": %s",
			        a, i, b, strerror(-r));
		}
	}
}

static int ipam_init(struct wk_ctx *ctx, void **ret_state)
{
	struct ipam_state *s = calloc(1, sizeof(*s));
	struct ipam_flags f = flags_of(ctx->flags);
	char err[512], warn[512];
	int r;

	if (!s)
		return -ENOMEM;
	s->ctx = ctx;
	if ((r = ipam_config(&f, &s->cfg, err, sizeof(err), warn, sizeof(warn))) < 0) {
		kcmd_log_error("%s", err);
		free(s);
		return -EINVAL;
	}
	for (int i = 0; i < s->cfg.n_cluster; i++)
		if ((r = ipam_cidrset_init(&s->sets[i], &s->cfg.cluster[i], s->cfg.mask[i])) < 0) {
			free(s);
			return r;
		}
	for (int i = 0; i < 2; i++)
		if (s->cfg.has_svc[i])
			filter_service(s, &s->cfg.svc[i]);
		else
			kcmd_log_info(
			        i ? "No Secondary Service CIDR provided. Skipping filtering out "
			            "secondary service addresses"
			          : "No Service CIDR provided. Skipping filtering out service "
			            "addresses");
	/* upstream polls the LIST every 10 s (for up to 10 minutes) before it starts; here the
	 * sync retries it every 10 s and allocates nothing until it succeeded */
	s->listed = occupy_listed(s) == 0;
	*ret_state = s;
	return 0;
}

static void ipam_fini(void *state)
{
	struct ipam_state *s = state;

	if (s)
		for (int i = 0; i < 2; i++)
			ipam_cidrset_free(&s->sets[i]);
	free(s);
}

static void record(struct ipam_state *s, const char *name, const char *uid, const char *status)
{
	struct kcmd_object_ref ref = {
	        .api_version = "v1", .kind = "Node", .name = name, .uid = uid};

	kcmd_log_v(2, "Recording status change event message for node status=\"%s\" node=\"%s\"",
	           status, name);
	kcmd_event_record(s->ctx->kc, "cidrAllocator", &ref, KCMD_EVENT_NORMAL, status,
	                  "Node %s status is now: %s", name, status);
}

static void release_all(struct ipam_state *s, const struct ipam_cidr *c, int n)
{
	for (int i = 0; i < n; i++)
		ipam_cidrset_release(&s->sets[i], &c[i], NULL);
}

/* the cached Node: 0, -ENOENT, -EBADMSG */
static int cached_node(struct ipam_state *s, const char *name, struct pod_cidrs *p)
{
	struct shm_obj *o = NULL;
	int r = kcmd_cache_get(s->ctx->arena, "", "nodes", NULL, name, &o);
	size_t len = 0;

	if (r < 0)
		return r;
	const char *json = kcmd_obj_json(o, &len);
	r = json ? facts_of_json(json, len, p) : -EBADMSG;
	kcmd_obj_free(o);
	return r;
}

/* updateCIDRsAllocation */
static int update_node(struct ipam_state *s, const char *name, struct ipam_cidr *cidrs, int n)
{
	char str[2][64], body[256];
	struct pod_cidrs p;
	int r;

	for (int i = 0; i < n; i++)
		ipam_cidr_format(&cidrs[i], str[i], sizeof(str[i]));
	if ((r = cached_node(s, name, &p)) < 0) {
		kcmd_log_error(
		        "Failed while getting node for updating Node.Spec.PodCIDRs node=\"%s\": "
		        "%s",
		        name, strerror(-r));
		return r;
	}
	if (p.n == n) {
		bool match = true;
		for (int i = 0; i < n; i++)
			match &= !strcmp(p.s[i], str[i]);
		if (match) {
			kcmd_log_v(4,
			           "Node already has allocated CIDR. It matches the proposed one "
			           "node=\"%s\"",
			           name);
			return 0;
		}
	}
	if (p.n != 0) {
		kcmd_log_error(
		        "Node already has a CIDR allocated. Releasing the new one node=\"%s\" "
		        "podCIDRs=\"%s\"",
		        name, p.s[0]);
		release_all(s, cidrs, n);
		return 0;
	}
	snprintf(body, sizeof(body), "{\"spec\":{\"podCIDR\":\"%s\",\"podCIDRs\":[\"%s\"%s%s%s]}}",
	         str[0], str[0], n > 1 ? ",\"" : "", n > 1 ? str[1] : "", n > 1 ? "\"" : "");
	for (int i = 0; i < 3; i++) {
		struct kube_response resp = {0};
		struct kube_request req = {.verb = KUBE_PATCH,
		                           .version = "v1",
		                           .resource = "nodes",
		                           .name = name,
		                           .body = body,
		                           .body_len = strlen(body),
		                           .patch_type = KUBE_PATCH_STRATEGIC};
		r = kube_client_request(s->ctx->kc, &req, NULL, NULL, &resp);
		kube_response_clear(&resp);
		if (r == 0) {
			kcmd_log_info("Set node PodCIDR node=\"%s\" podCIDRs=[%s%s%s]", name,
			              str[0], n > 1 ? " " : "", n > 1 ? str[1] : "");
			return 0;
		}
	}
	kcmd_log_error("Failed to update node PodCIDR after multiple attempts node=\"%s\": failed "
	               "to patch node CIDR: %s",
	               name, reason(r));
	record(s, name, p.uid, "CIDRAssignmentFailed");
	if (r != -ETIMEDOUT) { /* IsServerTimeout: the write may have landed */
		kcmd_log_error("CIDR assignment for node failed. Releasing allocated CIDR "
		               "node=\"%s\"",
		               name);
		release_all(s, cidrs, n);
	}
	return r;
}

static int sync_node(struct ipam_state *s, const char *name)
{
	struct pod_cidrs p;
	struct ipam_cidr got[2];
	char err[512];
	int r = cached_node(s, name, &p);

	if (r == -ENOENT) {
		kcmd_log_v(3, "node has been deleted node=\"%s\"", name);
		return 0;
	}
	if (r < 0)
		return r;
	if (p.deleting) {
		kcmd_log_v(3, "node is being deleted node=\"%s\"", name);
		return 0;
	}
	if (p.n > 0) { /* AllocateOrOccupyCIDR: a Node with CIDRs has them marked */
		if ((r = occupy_node(s, name, &p, err, sizeof(err))) < 0)
			kcmd_log_error("error syncing '%s': %s, requeuing", name, err);
		return r;
	}
	for (int i = 0; i < s->cfg.n_cluster; i++) {
		uint64_t tries = 0;
		if ((r = ipam_cidrset_allocate(&s->sets[i], &got[i], &tries)) < 0) {
			release_all(s, got, i); /* (upstream keeps them; see docs/nodeipam.md) */
			record(s, name, p.uid, "CIDRNotAvailable");
			kcmd_log_error(
			        "error syncing '%s': failed to allocate cidr from cluster cidr "
			        "at idx:%d: %s, requeuing",
			        name, i,
			        r == -ENOSPC ? "CIDR allocation failed; there are no remaining "
			                       "CIDRs left to allocate in the accepted range"
			                     : strerror(-r));
			return r;
		}
	}
	return update_node(s, name, got, s->cfg.n_cluster);
}

/* release:<node>:<cidr>[,<cidr>] (a deleted Node's podCIDRs, ReleaseCIDR) */
static void release_key(struct ipam_state *s, const char *key)
{
	const char *node = key + strlen(IPAM_RELEASE), *colon = strchr(node, ':');
	char list[200];

	if (!colon)
		return;
	snprintf(list, sizeof(list), "%s", colon + 1);
	int idx = 0;
	for (char *c = list; c && idx < 2; idx++) {
		char *comma = strchr(c, ',');
		struct ipam_cidr cidr;
		if (comma)
			*comma = 0;
		if (ipam_cidr_parse(c, &cidr) < 0 || idx >= s->cfg.n_cluster)
			kcmd_log_error(
			        "Error while processing CIDR Release: failed to parse CIDR %s on "
			        "Node %.*s",
			        c, (int)(colon - node), node);
		else if (ipam_cidrset_release(&s->sets[idx], &cidr, NULL) < 0)
			kcmd_log_error(
			        "Error while processing CIDR Release: error when releasing CIDR "
			        "%s",
			        c);
		else
			kcmd_log_v(4, "Release CIDR for node CIDR=\"%s\" node=\"%.*s\"", c,
			           (int)(colon - node), node);
		c = comma ? comma + 1 : NULL;
	}
}

static void ipam_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct ipam_state *s = state;

	(void)q;
	*res = (struct wk_result){0};
	if (kcmd_cache_synced(s->ctx->arena, "", "nodes") != 1) {
		*res = (struct wk_result){.requeue_after = true, .after_usec = 1000000};
		return;
	}
	if (!s->listed && !(s->listed = occupy_listed(s) == 0)) {
		*res = (struct wk_result){.requeue_after = true, .after_usec = 10000000};
		return;
	}
	if (!strncmp(key, IPAM_RELEASE, strlen(IPAM_RELEASE))) {
		release_key(s, key);
		return;
	}
	res->err = sync_node(s, key);
}

static const struct wk_controller ipam_worker = {
        .name = IPAM_CONTROLLER,
        .queues = ipam_queue_names,
        .init = ipam_init,
        .sync = ipam_sync,
        .fini = ipam_fini,
};

/* ---- the descriptor ----------------------------------------------------------------------- */
static const char *const ipam_aliases[] = {"nodeipam", NULL};
static const struct kcmd_watch ipam_watches[] = {
        {"", "v1", "nodes", "Node", KCMD_CACHE_OBJECT, false},
};
static const struct kcmd_queue ipam_queues[] = {{.name = IPAM_QUEUE}};
static const struct kcmd_flag ipam_flags[] = {
        {.name = "allocate-node-cidrs",
         .type = KCMD_FLAG_BOOL,
         .def = "false",
         .help = "Should CIDRs for Pods be allocated and set on the cloud provider."},
        {.name = "cidr-allocator-type",
         .type = KCMD_FLAG_STRING,
         .def = "RangeAllocator",
         .help = "Type of CIDR allocator to use"},
        {.name = "cluster-cidr",
         .type = KCMD_FLAG_STRING,
         .def = "",
         .help = "CIDR Range for Pods in cluster. Only used when --allocate-node-cidrs=true; if "
                 "false, this option will be ignored."},
        {.name = "service-cluster-ip-range",
         .type = KCMD_FLAG_STRING,
         .def = "",
         .help = "CIDR Range for Services in cluster. Only used when "
                 "--allocate-node-cidrs=true; if false, this option will be ignored."},
        {.name = "node-cidr-mask-size",
         .type = KCMD_FLAG_INT,
         .def = "0",
         .help = "Mask size for node cidr in cluster. Default is 24 for IPv4 and 64 for IPv6."},
        {.name = "node-cidr-mask-size-ipv4",
         .type = KCMD_FLAG_INT,
         .def = "0",
         .help = "Mask size for IPv4 node cidr in dual-stack cluster. Default is 24."},
        {.name = "node-cidr-mask-size-ipv6",
         .type = KCMD_FLAG_INT,
         .def = "0",
         .help = "Mask size for IPv6 node cidr in dual-stack cluster. Default is 64."},
};

static int ipam_workers(const struct kcmd_flag_values *v)
{
	(void)v;
	return 1; /* the CIDR sets are the worker's memory */
}

const struct kcmd_controller kcmd_nodeipam_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = IPAM_CONTROLLER,
        .aliases = ipam_aliases,
        .enabled_by_default = true,
        .service_account = "node-controller",
        .cluster_scoped_keys = true,
        .watches = ipam_watches,
        .n_watches = sizeof(ipam_watches) / sizeof(ipam_watches[0]),
        .queues = ipam_queues,
        .n_queues = 1,
        .flags = ipam_flags,
        .n_flags = sizeof(ipam_flags) / sizeof(ipam_flags[0]),
        .worker_count = ipam_workers,
        .mgr_precheck = ipam_precheck,
        .handlers = &ipam_handlers,
        .worker = &ipam_worker,
};
