/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/certificates/plugin-approving.c: kcm's certificatesigningrequest-approving-controller
 * (alias csrapproving), on by default, client "certificate-controller": kubelet client CSRs
 * approved after a SubjectAccessReview (signer.h, "the approver", has the rules).
 *
 * Shape: upstream's certificate controller "csrapproving": every CSR added or updated is
 * queued, five workers. Here the same queue and five worker processes; the sync reads the
 * CSR from the cache (cached whole), posts the SubjectAccessReviews and the approval.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "kcmd/kcmd.h"
#include "kube/config.h"
#include "workers/certificates/signer.h"
#include "workers/worker.h"

#define CSR_APPROVING_CONTROLLER "certificatesigningrequest-approving-controller"
#define CSR_GROUP                "certificates.k8s.io"
#define CSR_RESOURCE             "certificatesigningrequests"

/* ---- handlers (kcmd-dispatcher) ------------------------------------------------------------ */
static void on_csr(struct inf_handler_ctx *ctx, const struct inf_event *ev)
{
	if (ev->meta)
		kcmd_queue_add(ctx, 0, kcmd_meta_name(ev->meta));
}

static int add_csr(const struct shm_obj *o, void *ud)
{
	kcmd_queue_add(ud, 0, kcmd_obj_name(o));
	return 0;
}

static void approving_resync(struct inf_handler_ctx *ctx, size_t queue, bool restarted)
{
	(void)queue;
	(void)restarted;
	kcmd_cache_list(ctx->arena, CSR_GROUP, CSR_RESOURCE, NULL, add_csr, ctx);
}

static const char *const approving_queue_names[] = {"csrapproving", NULL};
static const struct inf_handler_entry approving_entries[] = {
        {.group = CSR_GROUP, .resource = CSR_RESOURCE, .on_add = on_csr, .on_update = on_csr},
};
static const struct inf_handler_table approving_handlers = {
        .controller = CSR_APPROVING_CONTROLLER,
        .queues = approving_queue_names,
        .entries = approving_entries,
        .n_entries = 1,
        .resync = approving_resync,
};

/* ---- the sync (kcmd-worker) ------------------------------------------------------------------ */
static const char *reason(int r)
{
	return kcmd_kube_reason(r) ? kcmd_kube_reason(r) : strerror(-r);
}

/* sarApprover.authorize: 1 allowed, 0 not, -errno */
static int authorize(struct wk_ctx *ctx, const cJSON *spec, const char *subresource)
{
	cJSON *sar = cJSON_CreateObject(), *s, *ra;
	const char *keys[] = {"username", "uid"};
	const char *to[] = {"user", "uid"};
	char *body = NULL, *resp = NULL;
	int r;

	cJSON_AddStringToObject(sar, "kind", "SubjectAccessReview");
	cJSON_AddStringToObject(sar, "apiVersion", "authorization.k8s.io/v1");
	s = cJSON_AddObjectToObject(sar, "spec");
	for (size_t i = 0; i < 2; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(spec, keys[i]);
		if (cJSON_IsString(v) && *v->valuestring)
			cJSON_AddStringToObject(s, to[i], v->valuestring);
	}
	const cJSON *groups = cJSON_GetObjectItemCaseSensitive(spec, "groups");
	if (cJSON_IsArray(groups) && cJSON_GetArraySize(groups) > 0)
		cJSON_AddItemToObject(s, "groups", cJSON_Duplicate(groups, 1));
	const cJSON *extra = cJSON_GetObjectItemCaseSensitive(spec, "extra");
	if (cJSON_IsObject(extra) && extra->child)
		cJSON_AddItemToObject(s, "extra", cJSON_Duplicate(extra, 1));
	ra = cJSON_AddObjectToObject(s, "resourceAttributes");
	cJSON_AddStringToObject(ra, "verb", "create");
	cJSON_AddStringToObject(ra, "group", CSR_GROUP);
	cJSON_AddStringToObject(ra, "version", "*");
	cJSON_AddStringToObject(ra, "resource", CSR_RESOURCE);
	cJSON_AddStringToObject(ra, "subresource", subresource);
	body = cJSON_PrintUnformatted(sar);
	cJSON_Delete(sar);
	if (!body)
		return -ENOMEM;
	r = kcmd_kube_request(ctx->kc,
	                      &(struct kcmd_request){.method = "POST",
	                                             .group = "authorization.k8s.io",
	                                             .version = "v1",
	                                             .resource = "subjectaccessreviews",
	                                             .body = body,
	                                             .body_kind = "SubjectAccessReview"},
	                      NULL, &resp);
	free(body);
	if (r < 0) {
		free(resp);
		return r;
	}
	cJSON *o = resp ? cJSON_Parse(resp) : NULL;
	free(resp);
	if (!o)
		return -EBADMSG;
	const cJSON *allowed = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(o, "status"), "allowed");
	r = cJSON_IsTrue(allowed) ? 1 : 0;
	cJSON_Delete(o);
	return r;
}

/* sarApprover.handle for one CSR (its JSON o, a private copy) */
static int handle(struct wk_ctx *ctx, const char *name, cJSON *o)
{
	cJSON *spec = cJSON_GetObjectItemCaseSensitive(o, "spec");
	cJSON *status = cJSON_GetObjectItemCaseSensitive(o, "status");
	const cJSON *conds = cJSON_GetObjectItemCaseSensitive(status, "conditions"), *c;
	const cJSON *req_b64 = cJSON_GetObjectItemCaseSensitive(spec, "request");
	const cJSON *sn = cJSON_GetObjectItemCaseSensitive(spec, "signerName");
	const cJSON *user = cJSON_GetObjectItemCaseSensitive(spec, "username");
	const cJSON *us = cJSON_GetObjectItemCaseSensitive(spec, "usages"), *u;
	const char *usages[64];
	size_t n = 0;
	unsigned char *pem = NULL;
	size_t pem_len = 0;
	struct csr_req req = {0};
	char msg[256], tried[64] = "";
	int r;

	/* GetCertApprovalCondition: any Approved or Denied condition */
	cJSON_ArrayForEach(c, conds)
	{
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "type");
		if (cJSON_IsString(t) &&
		    (!strcmp(t->valuestring, "Approved") || !strcmp(t->valuestring, "Denied")))
			return 0;
	}
	cJSON_ArrayForEach(u, us)
	{
		if (cJSON_IsString(u) && n < sizeof(usages) / sizeof(usages[0]))
			usages[n++] = u->valuestring;
	}
	if (!cJSON_IsString(req_b64) ||
	    kube_base64_decode(req_b64->valuestring, strlen(req_b64->valuestring), &pem, &pem_len) <
	            0 ||
	    csr_req_parse(pem, pem_len, &req, msg, sizeof(msg)) < 0) {
		if (!cJSON_IsString(req_b64) || !pem)
			snprintf(msg, sizeof(msg), "PEM block type must be CERTIFICATE REQUEST");
		kcmd_log_error("Sync %s failed with : unable to parse csr \"%s\": %s", name, name,
		               msg);
		free(pem);
		return -EINVAL;
	}
	free(pem);
	r = 0;
	for (int k = 0; k < CSR_RECOGNIZER_N; k++) {
		if (!csr_recognize((enum csr_recognizer)k,
		                   cJSON_IsString(sn) ? sn->valuestring : NULL,
		                   cJSON_IsString(user) ? user->valuestring : "", &req, usages, n))
			continue;
		snprintf(tried + strlen(tried), sizeof(tried) - strlen(tried), "%s%s",
		         *tried ? " " : "", csr_recognizers[k].subresource);
		if ((r = authorize(ctx, spec, csr_recognizers[k].subresource)) < 0) {
			kcmd_log_error("Sync %s failed with : %s", name, reason(r));
			break;
		}
		if (r == 0)
			continue;
		/* appendApprovalCondition; UpdateApproval */
		cJSON *cond = cJSON_CreateObject(), *arr;
		cJSON_AddStringToObject(cond, "type", "Approved");
		cJSON_AddStringToObject(cond, "status", "True");
		cJSON_AddStringToObject(cond, "reason", "AutoApproved");
		cJSON_AddStringToObject(cond, "message", csr_recognizers[k].message);
		if (!status)
			status = cJSON_AddObjectToObject(o, "status");
		if (!(arr = cJSON_GetObjectItemCaseSensitive(status, "conditions")))
			arr = cJSON_AddArrayToObject(status, "conditions");
		cJSON_AddItemToArray(arr, cond);
		char *body = cJSON_PrintUnformatted(o);
		r = body ? kcmd_kube_request(
		                   ctx->kc,
		                   &(struct kcmd_request){.method = "PUT",
		                                          .group = CSR_GROUP,
		                                          .version = "v1",
		                                          .resource = CSR_RESOURCE,
		                                          .name = name,
		                                          .subresource = "approval",
		                                          .body = body,
		                                          .body_kind = "CertificateSigningRequest"},
		                   NULL, NULL)
		         : -ENOMEM;
		free(body);
		if (r < 0)
			kcmd_log_error("Sync %s failed with : error updating approval for csr: %s",
			               name, reason(r));
		else
			kcmd_log_v(2, "CSR %s approved: %s", name, csr_recognizers[k].message);
		csr_req_clear(&req);
		return r;
	}
	csr_req_clear(&req);
	if (r < 0)
		return r;
	if (*tried) {
		/* certificates.IgnorableError: retried; logged as an error (klog.Errorf, not
		 * HandleError) */
		kcmd_log_error(
		        "Sync %s failed with : recognized csr \"%s\" as [%s] but subject access "
		        "review was not approved",
		        name, name, tried);
		return -EACCES;
	}
	return 0;
}

static void approving_sync(void *state, size_t q, const char *key, struct wk_result *res)
{
	struct wk_ctx *ctx = state;
	struct shm_obj *o = NULL;
	size_t len = 0;
	int r;

	(void)q;
	*res = (struct wk_result){0};
	if ((r = kcmd_cache_get(ctx->arena, CSR_GROUP, CSR_RESOURCE, NULL, key, &o)) < 0) {
		if (r != -ENOENT)
			res->err = r;
		else
			kcmd_log_v(2, "csr has been deleted: %s", key);
		return;
	}
	const char *json = kcmd_obj_json(o, &len);
	cJSON *j = json ? cJSON_ParseWithLength(json, len) : NULL;
	kcmd_obj_free(o);
	if (!j)
		return;
	const cJSON *cert = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(j, "status"), "certificate");
	if (!(cJSON_IsString(cert) && *cert->valuestring)) /* it already has a certificate */
		res->err = handle(ctx, key, j);
	cJSON_Delete(j);
}

static int approving_init(struct wk_ctx *ctx, void **ret_state)
{
	*ret_state = ctx;
	return 0;
}

static const struct wk_controller approving_worker = {
        .name = CSR_APPROVING_CONTROLLER,
        .queues = approving_queue_names,
        .init = approving_init,
        .sync = approving_sync,
};

static int approving_workers(const struct kcmd_flag_values *v)
{
	(void)v;
	return 5; /* approver.Run(ctx, 5) */
}

static const char *const approving_aliases[] = {"csrapproving", NULL};
static const struct kcmd_watch approving_watches[] = {
        {CSR_GROUP, "v1", CSR_RESOURCE, "CertificateSigningRequest", KCMD_CACHE_OBJECT, false},
};
static const struct kcmd_queue approving_queues[] = {{.name = "csrapproving"}};

const struct kcmd_controller kcmd_csr_approving_controller = {
        .abi = KCMD_CONTROLLER_ABI,
        .name = CSR_APPROVING_CONTROLLER,
        .aliases = approving_aliases,
        .enabled_by_default = true,
        .service_account = "certificate-controller",
        .cluster_scoped_keys = true,
        .watches = approving_watches,
        .n_watches = 1,
        .queues = approving_queues,
        .n_queues = 1,
        .worker_count = approving_workers,
        .handlers = &approving_handlers,
        .worker = &approving_worker,
};
