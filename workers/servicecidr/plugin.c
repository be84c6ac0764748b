/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/servicecidr/plugin.c: kcm's service-cidr-controller, on by default (its gate,
 * MultiCIDRServiceAllocator, is GA and locked on in v1.37), client "service-cidrs-controller":
 * the finalizer and Ready condition of every networking.k8s.io/v1 ServiceCIDR, and the
 * deletion of a ServiceCIDR held while IPAddresses would be left without one (cidr.h;
 * docs/servicecidr.md).
 *
 * Shape: ServiceCIDRs cached whole, IPAddresses metadata-only (name and labels are all the
 * controller reads). The handlers queue a ServiceCIDR's name when it changes (an added one also
 * queues every ServiceCIDR it overlaps) and, when an apiserver-allocated IPAddress is added or
 * deleted, every ServiceCIDR containing it; at start every ServiceCIDR. The sync reads both from
 * the arena and writes with a strategic merge patch (finalizer) or a server-side apply of the
 * status (field manager service-cidr-controller, forced), as upstream.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kcmd/kcmd.h"
#include "kube/client.h"
#include "workers/servicecidr/cidr.h"
#include "workers/worker.h"

static cJSON *parse_obj(const struct shm_obj *o)
{
	size_t len = 0;
	const char *s = o ? kcmd_obj_json(o, &len) : NULL;
	return s ? cJSON_ParseWithLength(s, len) : NULL;
}

struct cidrs {
	cJSON **v;
	size_t n, cap;
};

static int collect_cidr(const struct shm_obj *o, void *ud)
{
	struct cidrs *c = ud;
	cJSON *j = parse_obj(o);
	if (!j)
		return 0;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 8;
		cJSON **v = realloc(c->v, cap * sizeof(*v));
		if (!v) {
			cJSON_Delete(j);
			return -ENOMEM;
		}
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n++] = j;
	return 0;
}

static void cidrs_free(struct cidrs *c)
{
	for (size_t i = 0; i < c->n; i++)
		cJSON_Delete(c->v[i]);
	free(c->v);
	*c = (struct cidrs){0};
}

/* ---- handlers (kcmd-dispatcher) ----------------------------------------------------------- */
/* addServiceCIDR: itself and every ServiceCIDR overlapping it; update, delete: itself */
static void on_cidr(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	const char *name = ev->meta ? kcmd_meta_name(ev->meta) : kcmd_obj_name(ev->old);
	if (!name || !*name)
		return;
	kcmd_queue_add(ctx, 0, name);
	if (ev->kind != INF_EVENT_ADD)
		return;
	size_t len = 0;
	const char *js = kcmd_event_json(ev, &len);
	cJSON *me = js ? cJSON_ParseWithLength(js, len) : NULL;
	struct cidrs all = {0};
	if (me &&
	    kcmd_cache_list(ctx->arena, SCC_GROUP, "servicecidrs", NULL, collect_cidr, &all) >= 0) {
		const char **names = calloc(all.n + 1, sizeof(*names));
		size_t k =
		        names ? scc_overlapping(me, (const cJSON *const *)all.v, all.n, names) : 0;
		for (size_t i = 0; i < k; i++)
			kcmd_queue_add(ctx, 0, names[i]);
		free(names);
	}
	cidrs_free(&all);
	cJSON_Delete(me);
}

/* addIPAddress / deleteIPAddress: the ServiceCIDRs containing an apiserver-allocated address */
static void on_ip(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	const char *name, *mgd;
	if (ev->kind == INF_EVENT_UPDATE)
		return; /* upstream has no update handler */
	if (ev->old) {
		name = kcmd_obj_name(ev->old);
		mgd = kcmd_obj_label(ev->old, SCC_LABEL_MGD);
	} else if (ev->meta) {
		name = kcmd_meta_name(ev->meta);
		mgd = kcmd_meta_label(ev->meta, SCC_LABEL_MGD);
	} else {
		return;
	}
	if (!name || !mgd || strcmp(mgd, SCC_IPALLOCATOR))
		return;
	struct cidrs all = {0};
	if (kcmd_cache_list(ctx->arena, SCC_GROUP, "servicecidrs", NULL, collect_cidr, &all) >= 0) {
		const char **names = calloc(all.n + 1, sizeof(*names));
		size_t k =
		        names ? scc_containing(name, (const cJSON *const *)all.v, all.n, names) : 0;
		for (size_t i = 0; i < k; i++)
			kcmd_queue_add(ctx, 0, names[i]);
		free(names);
	}
	cidrs_free(&all);
}

static int add_cidr(const struct shm_obj *o, void *ud)
{
	kcmd_queue_add(ud, 0, kcmd_obj_name(o));
	return 0;
}

static void scc_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	kcmd_cache_list(ctx->arena, SCC_GROUP, "servicecidrs", NULL, add_cidr, ctx);
}

static const char *const scc_queue_names[] = {SCC_QUEUE, NULL};
static const struct inf_handler_entry scc_entries[] = {
        {.group = SCC_GROUP,
         .resource = "servicecidrs",
         .on_add = on_cidr,
         .on_update = on_cidr,
         .on_delete = on_cidr},
        {.group = SCC_GROUP, .resource = "ipaddresses", .on_add = on_ip, .on_delete = on_ip},
};
static const struct inf_handler_table scc_handlers = {
        .controller = SCC_CONTROLLER,
        .queues = scc_queue_names,
        .entries = scc_entries,
        .n_entries = sizeof(scc_entries) / sizeof(scc_entries[0]),
        .resync = scc_resync,
};

/* ---- sync (kcmd-worker) ------------------------------------------------------------------- */
struct wk {
	struct wk_ctx *ctx;
};

static int scc_init(struct wk_ctx *ctx, void **ret_state)
{
	struct wk *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->ctx = ctx;
	*ret_state = w;
	return 0;
}

static void scc_fini(void *state)
{
	free(state);
}

struct ips {
	char **names;
	char ***labels; /* per IP: family, managed-by (copies) */
	size_t n, cap;
};

static int collect_ip(const struct shm_obj *o, void *ud)
{
	struct ips *s = ud;
	const char *f = kcmd_obj_label(o, SCC_LABEL_FAMILY), *m = kcmd_obj_label(o, SCC_LABEL_MGD);
	if (!m || strcmp(m, SCC_IPALLOCATOR) || !f)
		return 0; /* the lister's selector: managed-by ipallocator.k8s.io, a family */
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		char **nv = realloc(s->names, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		s->names = nv;
		char ***lv = realloc(s->labels, cap * sizeof(*lv));
		if (!lv)
			return -ENOMEM;
		s->labels = lv;
		s->cap = cap;
	}
	char **l = calloc(2, sizeof(*l));
	char *n = strdup(kcmd_obj_name(o));
	if (!l || !n || !(l[0] = strdup(f)) || !(l[1] = strdup(m))) {
		if (l) {
			free(l[0]);
			free(l[1]);
		}
		free(l);
		free(n);
		return -ENOMEM;
	}
	s->names[s->n] = n;
	s->labels[s->n] = l;
	s->n++;
	return 0;
}

static void ips_free(struct ips *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->names[i]);
		free(s->labels[i][0]);
		free(s->labels[i][1]);
		free(s->labels[i]);
	}
	free(s->names);
	free(s->labels);
}

static const char *ip_label(void *ud, size_t i, const char *label)
{
	struct ips *s = ud;
	return !strcmp(label, SCC_LABEL_FAMILY) ? s->labels[i][0] : s->labels[i][1];
}

static int patch(struct wk *w, const char *name, const char *sub, enum kube_patch_type type,
                 const char *body, char *err, size_t errlen)
{
	struct kube_response resp = {0};
	int r = kube_client_request(w->ctx->kc,
	                            &(struct kube_request){.verb = KUBE_PATCH,
	                                                   .group = SCC_GROUP,
	                                                   .version = "v1",
	                                                   .resource = "servicecidrs",
	                                                   .name = name,
	                                                   .subresource = sub,
	                                                   .patch_type = type,
	                                                   .field_manager = SCC_CONTROLLER,
	                                                   .body = body,
	                                                   .body_len = strlen(body)},
	                            NULL, NULL, &resp);
	if (r < 0)
		snprintf(err, errlen, "%s",
		         resp.error.message[0] ? resp.error.message : strerror(-r));
	kube_response_clear(&resp);
	return r;
}

static void now_rfc3339(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* updateConditionIfNeeded's write (the decision said it differs) */
static int set_condition(struct wk *w, const char *name, const char *status, const char *reason,
                         const char *message, char *err, size_t errlen)
{
	char now[32];
	now_rfc3339(now, sizeof(now));
	char *body = scc_status_apply(name, status, reason, message, now);
	if (!body)
		return -ENOMEM;
	kcmd_log_v(2,
	           "Updating ServiceCIDR condition ServiceCIDR=%s conditionType=Ready newStatus=%s "
	           "newReason=%s",
	           name, status, reason);
	int r = patch(w, name, "status", KUBE_PATCH_APPLY, body, err, errlen);
	free(body);
	return r;
}

static void scc_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct wk *w = state;
	struct shm_obj *o = NULL;
	cJSON *cidr = NULL;
	struct cidrs all = {0};
	struct ips ips = {0};
	char err[512] = "";
	unsigned long long after = 0;
	unsigned todo;
	int r;

	(void)q;
	*res = (struct wk_result){0};
	r = kcmd_cache_get(w->ctx->arena, SCC_GROUP, "servicecidrs", NULL, key, &o);
	if (r == -ENOENT) {
		kcmd_log_v(4, "ServiceCIDR no longer exist ServiceCIDR=%s", key);
		return;
	}
	if (r < 0 || !(cidr = parse_obj(o))) {
		r = r < 0 ? r : -EBADMSG;
		goto fail;
	}
	/* the other ServiceCIDRs and the IPAddresses matter only to a ServiceCIDR being deleted */
	if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(
	            cJSON_GetObjectItemCaseSensitive(cidr, "metadata"), "deletionTimestamp")) &&
	    ((r = kcmd_cache_list(w->ctx->arena, SCC_GROUP, "servicecidrs", NULL, collect_cidr,
	                          &all)) < 0 ||
	     (r = kcmd_cache_list(w->ctx->arena, SCC_GROUP, "ipaddresses", NULL, collect_ip,
	                          &ips)) < 0))
		goto fail;
	todo = scc_decide(cidr, (const cJSON *const *)all.v, all.n, (const char *const *)ips.names,
	                  ips.n, ip_label, &ips, (long long)time(NULL), &after);
	r = 0;
	if (todo & SCC_TERMINATING)
		r = set_condition(w, key, "False", "Terminating", SCC_MSG_BLOCKED, err,
		                  sizeof(err));
	if (todo & SCC_REQUEUE) {
		res->requeue_after = true;
		res->after_usec = after;
	}
	if (todo & SCC_REMOVE_FINALIZER) {
		r = patch(w, key, NULL, KUBE_PATCH_STRATEGIC,
		          "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":"
		          "[\"" SCC_FINALIZER "\"]}}",
		          err, sizeof(err));
		if (r == -ENOENT)
			r = 0;
		else if (r == 0)
			kcmd_log_v(4,
			           "Removed protection finalizer from ServiceCIDRs ServiceCIDR=%s",
			           key);
	}
	if (r == 0 && (todo & SCC_ADD_FINALIZER)) {
		r = patch(w, key, NULL, KUBE_PATCH_STRATEGIC,
		          "{\"metadata\":{\"finalizers\":[\"" SCC_FINALIZER "\"]}}", err,
		          sizeof(err));
		if (r == -ENOENT)
			r = 0;
		else if (r == 0)
			kcmd_log_v(4, "Added protection finalizer to ServiceCIDR ServiceCIDR=%s",
			           key);
	}
	if (r == 0 && (todo & SCC_READY)) {
		r = set_condition(w, key, "True", "", SCC_MSG_READY, err, sizeof(err));
		if (r < 0) {
			const cJSON *md = cJSON_GetObjectItemCaseSensitive(cidr, "metadata");
			const cJSON *uid = cJSON_GetObjectItemCaseSensitive(md, "uid");
			struct kcmd_object_ref ref = {.api_version = "networking.k8s.io/v1",
			                              .kind = "ServiceCIDR",
			                              .name = key,
			                              .uid = cJSON_IsString(uid) ? uid->valuestring
			                                                         : ""};
			kcmd_log_info("error updating default ServiceCIDR status error=%s", err);
			kcmd_event_record(w->ctx->kc, SCC_CONTROLLER, &ref, KCMD_EVENT_WARNING,
			                  "KubernetesServiceCIDRError",
			                  "The ServiceCIDR Status can not be set to Ready=True");
		}
	}
	if (r >= 0)
		goto out;
fail:
	kcmd_log_v(2, "Error syncing ServiceCIDR, retrying ServiceCIDR=%s err=%s", key,
	           err[0] ? err : strerror(-r));
	res->err = r;
out:
	ips_free(&ips);
	cidrs_free(&all);
	cJSON_Delete(cidr);
	if (o)
		kcmd_obj_free(o);
}

static const struct wk_controller scc_worker = {
        .name = SCC_CONTROLLER,
        .queues = scc_queue_names,
        .init = scc_init,
        .sync = scc_sync,
        .fini = scc_fini,
};

/* ---- the descriptor ----------------------------------------------------------------------- */
static const struct kcmd_watch scc_watches[] = {
        {SCC_GROUP, "v1", "servicecidrs", "ServiceCIDR", KCMD_CACHE_OBJECT, false},
        {SCC_GROUP, "v1", "ipaddresses", "IPAddress", KCMD_CACHE_METADATA, false},
};
static const struct kcmd_queue scc_queues[] = {{.name = SCC_QUEUE}};

const struct kcmd_controller kcmd_servicecidr_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = SCC_CONTROLLER,
        .enabled_by_default = true,
        .service_account = "service-cidrs-controller",
        .cluster_scoped_keys = true,
        .watches = scc_watches,
        .n_watches = sizeof(scc_watches) / sizeof(scc_watches[0]),
        .queues = scc_queues,
        .n_queues = 1,
        .handlers = &scc_handlers,
        .worker = &scc_worker,
};
