/* SPDX-License-Identifier: Apache-2.0 */
/* workers/endpointslice/podlist.c: the pods a Service selects (podlist.h). */
#include "workers/endpointslice/podlist.h"

#include <errno.h>
#include <stdio.h>

#include "kube/client.h"

int eps_list_selected_pods(struct kube_client *kc, const char *ns, const cJSON *sel, cJSON **ret)
{
	char buf[4096];
	size_t len = 0;
	const cJSON *kv;
	struct kube_response resp = {0};
	int r;

	*ret = NULL;
	buf[0] = '\0';
	cJSON_ArrayForEach(kv, sel)
	{
		if (!cJSON_IsString(kv))
			continue;
		int n = snprintf(buf + len, sizeof(buf) - len, "%s%s=%s", len ? "," : "",
		                 kv->string, kv->valuestring);
		if (n < 0 || (size_t)n >= sizeof(buf) - len)
			return -E2BIG;
		len += (size_t)n;
	}
	r = kube_client_request(kc,
	                        &(struct kube_request){.verb = KUBE_LIST,
	                                               .group = "",
	                                               .version = "v1",
	                                               .resource = "pods",
	                                               .ns = ns,
	                                               .label_selector = len ? buf : NULL},
	                        NULL, NULL, &resp);
	if (r == 0 && !(*ret = resp.body ? cJSON_Parse(resp.body) : NULL))
		r = -EBADMSG;
	kube_response_clear(&resp);
	return r;
}
