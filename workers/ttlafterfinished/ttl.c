/* SPDX-License-Identifier: Apache-2.0 */
/* workers/ttlafterfinished/ttl.c: see ttl.h. */
#include "workers/ttlafterfinished/ttl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

static void copy_str(char *dst, size_t n, const cJSON *v)
{
	snprintf(dst, n, "%s", cJSON_IsString(v) ? v->valuestring : "");
}

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

int ttl_job_parse(const char *json, size_t len, struct ttl_job *ret)
{
	cJSON *root = cJSON_ParseWithLength(json ? json : "", len);

	memset(ret, 0, sizeof(*ret));
	if (!root) {
		/* cJSON reports no reason: a failed allocation reads as malformed input */
		return -EBADMSG;
	}
	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		return -EBADMSG;
	}
	const cJSON *m = get(root, "metadata"), *spec = get(root, "spec"),
	            *st = get(root, "status");
	copy_str(ret->ns, sizeof(ret->ns), get(m, "namespace"));
	copy_str(ret->name, sizeof(ret->name), get(m, "name"));
	copy_str(ret->uid, sizeof(ret->uid), get(m, "uid"));
	const cJSON *dt = get(m, "deletionTimestamp");
	ret->deleting = cJSON_IsString(dt) && dt->valuestring[0];
	const cJSON *ttl = get(spec, "ttlSecondsAfterFinished");
	if (cJSON_IsNumber(ttl)) {
		ret->has_ttl = true;
		ret->ttl_seconds = (int64_t)ttl->valuedouble;
	}
	/* jobFinishTime / FinishedCondition: the first Complete or Failed condition that is True */
	const cJSON *c;
	cJSON_ArrayForEach(c, get(st, "conditions"))
	{
		const cJSON *type = get(c, "type"), *status = get(c, "status");
		if (!cJSON_IsString(type) || !cJSON_IsString(status) ||
		    strcmp(status->valuestring, "True") != 0 ||
		    (strcmp(type->valuestring, "Complete") != 0 &&
		     strcmp(type->valuestring, "Failed") != 0))
			continue;
		ret->finished = true;
		const cJSON *ltt = get(c, "lastTransitionTime");
		kube_time_t t = 0;
		if (cJSON_IsString(ltt) &&
		    kube_time_parse(ltt->valuestring, strlen(ltt->valuestring), &t) == 0)
			ret->finish_at = t;
		break;
	}
	cJSON_Delete(root);
	return 0;
}

bool ttl_needs_cleanup(const struct ttl_job *j)
{
	return j->has_ttl && j->finished;
}

enum ttl_err ttl_time_left(const struct ttl_job *j, kube_time_t since, int64_t *ret_left_ns,
                           kube_time_t *ret_expire_at, bool *ret_future)
{
	if (!ttl_needs_cleanup(j))
		return TTL_ERR_NOT_FOR_CLEANUP;
	if (j->finish_at == 0)
		return TTL_ERR_NO_FINISH_TIME;
	kube_time_t expire = j->finish_at + j->ttl_seconds * 1000000000LL;
	*ret_future = j->finish_at > since;
	*ret_left_ns = expire - since;
	*ret_expire_at = expire;
	return TTL_OK;
}

char *ttl_err_text(enum ttl_err e, const struct ttl_job *j)
{
	char *s = NULL;
	int r = -1;

	switch (e) {
	case TTL_ERR_NOT_FOR_CLEANUP:
		r = asprintf(&s, "job %s/%s should not be cleaned up", j->ns, j->name);
		break;
	case TTL_ERR_NO_FINISH_TIME:
		r = asprintf(&s, "unable to find the time when the Job %s/%s finished", j->ns,
		             j->name);
		break;
	case TTL_OK:
		r = asprintf(&s, "%s", "");
		break;
	}
	return r < 0 ? NULL : s;
}

enum ttl_verdict ttl_process(const struct ttl_job *j, kube_time_t now, int64_t *ret_after_ns,
                             kube_time_t *ret_expired_at, enum ttl_err *ret_err)
{
	int64_t left = 0;
	kube_time_t expire = 0;
	bool future = false;

	*ret_err = TTL_OK;
	if (j->deleting || !ttl_needs_cleanup(j))
		return TTL_SKIP;
	enum ttl_err e = ttl_time_left(j, now, &left, &expire, &future);
	if (e != TTL_OK) {
		*ret_err = e;
		return TTL_ERROR;
	}
	if (left <= 0) {
		*ret_expired_at = expire;
		return TTL_EXPIRED;
	}
	*ret_after_ns = left;
	return TTL_REQUEUE;
}

static const double ttl_buckets[] = {0.1,  0.2,  0.4,  0.8,   1.6,   3.2,   6.4,
                                     12.8, 25.6, 51.2, 102.4, 204.8, 409.6, 819.2};

const struct kcmd_metric ttl_metric_decl[TTL_M_N] = {
        [TTL_M_DELETION] = {.name = "ttl_after_finished_controller_job_deletion_duration_seconds",
                            .help = "The time it took to delete the job since it became "
                                    "eligible for deletion",
                            .type = KCMD_METRIC_HISTOGRAM,
                            .stability = KCMD_METRIC_ALPHA,
                            .buckets = ttl_buckets,
                            .n_buckets = sizeof(ttl_buckets) / sizeof(ttl_buckets[0])},
};
