/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/kubeletsim/nodes.c: foreign-Node check and fake Node setup (see nodes.h).
 */
#include "workers/kubeletsim/nodes.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "workers/kubeletsim/sim.h"

static const char *why(int r, const struct kube_response *resp)
{
	if (resp->error.message[0])
		return resp->error.message;
	return strerror(-r);
}

int ks_check_nodes(struct kube_client *kc, bool force, char *err, size_t errlen)
{
	struct kube_request req = {.verb = KUBE_LIST, .version = "v1", .resource = "nodes"};
	struct kube_response resp = {0};
	char first[256];
	int r, n;

	err[0] = 0;
	r = kube_client_request(kc, &req, NULL, NULL, &resp);
	if (r < 0) {
		snprintf(err, errlen, "--simulate-kubelet: listing Nodes failed: %s",
		         why(r, &resp));
		kube_response_clear(&resp);
		return r;
	}
	n = ks_scan_node_list(resp.body, resp.body_len, first, sizeof(first), NULL, 0);
	kube_response_clear(&resp);
	if (n < 0) {
		snprintf(err, errlen, "--simulate-kubelet: the Node list could not be read");
		return n;
	}
	if (n == 0)
		return 0;
	snprintf(err, errlen,
	         "--simulate-kubelet: the cluster has %d Node(s) the simulator did not create "
	         "(e.g. %s); "
	         "%s",
	         n, first,
	         force ? "running anyway because of --simulate-kubelet-force (pods may be bound to "
	                 "fake "
	                 "nodes while real ones exist)"
	               : "refusing to run against real nodes without --simulate-kubelet-force");
	return force ? 0 : -EEXIST;
}

int ks_precheck(const struct kube_config *cfg, bool force, char *err, size_t errlen)
{
	struct kube_client_opts ko = {.config = cfg,
	                              .process = "kcmd",
	                              .controller = KS_CONTROLLER,
	                              .qps = 0,
	                              .burst = 1,
	                              .insecure_ok = true,
	                              .max_retries = 2,
	                              .timeout_ms = 15000};
	struct kube_client *kc = NULL;
	int r = kube_client_new(&ko, &kc);

	if (r < 0) {
		snprintf(err, errlen, "--simulate-kubelet: API client: %s", strerror(-r));
		return r;
	}
	r = ks_check_nodes(kc, force, err, errlen);
	kube_client_free(kc);
	return r;
}

/* The uid in a created object's JSON, copied into buf ("" if absent). */
static void uid_of(const char *json, size_t len, char *buf, size_t n)
{
	cJSON *root = cJSON_ParseWithLength(json, len), *meta, *uid;

	buf[0] = 0;
	meta = root ? cJSON_GetObjectItemCaseSensitive(root, "metadata") : NULL;
	uid = meta ? cJSON_GetObjectItemCaseSensitive(meta, "uid") : NULL;
	if (cJSON_IsString(uid))
		snprintf(buf, n, "%s", uid->valuestring);
	cJSON_Delete(root);
}

static int call(struct kube_client *kc, struct kube_request *req, char *body,
                struct kube_response *resp)
{
	int r;

	if (!body)
		return -ENOMEM;
	req->body = body;
	req->body_len = strlen(body);
	r = kube_client_request(kc, req, NULL, NULL, resp);
	free(body);
	return r;
}

int ks_setup_nodes(struct kube_client *kc, unsigned n, char *err, size_t errlen)
{
	struct kube_request list = {.verb = KUBE_LIST,
	                            .version = "v1",
	                            .resource = "nodes",
	                            .label_selector = KS_LABEL "=true"};
	struct kube_response resp = {0};
	bool *have = calloc(n ? n : 1, sizeof(bool));
	int r;

	if (!have)
		return -ENOMEM;
	r = kube_client_request(kc, &list, NULL, NULL, &resp);
	if (r < 0) {
		snprintf(err, errlen, "listing simulated Nodes: %s", why(r, &resp));
		goto out;
	}
	if (ks_scan_node_list(resp.body, resp.body_len, NULL, 0, have, n) < 0) {
		snprintf(err, errlen, "listing simulated Nodes: unreadable answer");
		r = -EBADMSG;
		goto out;
	}
	kube_response_clear(&resp);
	for (unsigned i = 0; i < n; i++) {
		char name[64], uid[128] = "", *body = NULL;
		ks_node_name(i, name, sizeof(name));
		if (!have[i]) {
			struct kube_request req = {
			        .verb = KUBE_CREATE, .version = "v1", .resource = "nodes"};
			if ((r = ks_node_body(i, &body)) < 0)
				goto out;
			r = call(kc, &req, body, &resp);
			if (r == 0)
				uid_of(resp.body, resp.body_len, uid, sizeof(uid));
			if (r < 0 && r != -EEXIST) {
				snprintf(err, errlen, "creating Node %s: %s", name, why(r, &resp));
				goto out;
			}
			kube_response_clear(&resp);
		}
		struct kube_request st = {.verb = KUBE_PATCH,
		                          .version = "v1",
		                          .resource = "nodes",
		                          .name = name,
		                          .subresource = "status",
		                          .patch_type = KUBE_PATCH_STRATEGIC};
		if ((r = ks_node_status_body(i, kube_time_now(), &body)) < 0)
			goto out;
		r = call(kc, &st, body, &resp);
		if (r < 0) {
			snprintf(err, errlen, "setting the status of Node %s: %s", name,
			         why(r, &resp));
			goto out;
		}
		if (!uid[0])
			uid_of(resp.body, resp.body_len, uid, sizeof(uid));
		kube_response_clear(&resp);
		struct kube_request lr = {.verb = KUBE_CREATE,
		                          .group = "coordination.k8s.io",
		                          .version = "v1",
		                          .resource = "leases",
		                          .ns = KS_LEASE_NS};
		if ((r = ks_lease_body(name, uid, kube_time_now(), &body)) < 0)
			goto out;
		r = call(kc, &lr, body, &resp);
		if (r < 0 && r != -EEXIST) {
			snprintf(err, errlen, "creating the Lease of Node %s: %s", name,
			         why(r, &resp));
			goto out;
		}
		kube_response_clear(&resp);
	}
	r = 0;
out:
	kube_response_clear(&resp);
	free(have);
	return r;
}
