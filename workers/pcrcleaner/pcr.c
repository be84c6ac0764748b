/* SPDX-License-Identifier: Apache-2.0 */
/* workers/pcrcleaner/pcr.c: the PodCertificateRequest cleaner's decision (pcr.h). */
#include "workers/pcrcleaner/pcr.h"

#include <errno.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "kube/model.h"

int pcr_due(const char *json, size_t len, int64_t now_ns, int64_t threshold_ns)
{
	cJSON *o = cJSON_ParseWithLength(json, len);
	const cJSON *ts = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(o, "metadata"), "creationTimestamp");
	kube_time_t t;
	int r = -EBADMSG;

	if (cJSON_IsString(ts) &&
	    kube_time_parse(ts->valuestring, strlen(ts->valuestring), &t) == 0)
		r = now_ns >= (int64_t)t + threshold_ns;
	cJSON_Delete(o);
	return r;
}
