/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/ttlafterfinished/ttl.h: the TTL-after-finished controller's decisions (upstream
 * pkg/controller/ttlafterfinished: needsCleanup, jobFinishTime, getFinishAndExpireTime, timeLeft,
 * processTTL), pure: no I/O, the clock passed in. The unit tests pin them to upstream's cases.
 *
 * A Job is cached whole (KCMD_CACHE_OBJECT: its JSON as the apiserver sent it); ttl_job_parse
 * reads the few fields these decisions need from that JSON, or from an uncached GET's body.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kcmd/controller.h"
#include "kube/model.h"

#define TTL_CONTROLLER "ttl-after-finished-controller"
#define TTL_QUEUE      "ttl_jobs_to_delete" /* upstream's workqueue name */

struct ttl_job {
	char ns[254], name[254], uid[128];
	bool deleting;         /* metadata.deletionTimestamp set */
	bool has_ttl;          /* spec.ttlSecondsAfterFinished set */
	int64_t ttl_seconds;   /* int32 on the wire */
	bool finished;         /* a Complete or Failed condition with status True */
	kube_time_t finish_at; /* that condition's lastTransitionTime, 0 when zero or absent */
};

/* Reads a Job's JSON. 0, -EBADMSG (not a JSON object), -ENOMEM. Fields that are absent or of
 * another type read as unset (the apiserver sends well-formed Jobs). */
int ttl_job_parse(const char *json, size_t len, struct ttl_job *ret);

/* needsCleanup: a TTL is set and the Job finished (IsJobFinished). */
bool ttl_needs_cleanup(const struct ttl_job *j);

enum ttl_err {
	TTL_OK = 0,
	TTL_ERR_NOT_FOR_CLEANUP, /* "job %s/%s should not be cleaned up" */
	TTL_ERR_NO_FINISH_TIME,  /* "unable to find the time when the Job %s/%s finished" */
};

/* timeLeft(j, since): the TTL's remaining time (*ret_left_ns, may be <= 0) and when it expires
 * (*ret_expire_at = finish time + TTL). *ret_future is set when the Job finished after `since`
 * (clock skew: upstream logs a warning). Returns TTL_OK or the error. */
enum ttl_err ttl_time_left(const struct ttl_job *j, kube_time_t since, int64_t *ret_left_ns,
                           kube_time_t *ret_expire_at, bool *ret_future);

/* The error's text as upstream's fmt.Errorf, malloc'd (NULL on allocation failure). */
char *ttl_err_text(enum ttl_err e, const struct ttl_job *j);

/* processTTL(j, now): what to do with the Job. */
enum ttl_verdict {
	TTL_SKIP = 0, /* being deleted or not to be cleaned up: nothing */
	TTL_REQUEUE,  /* not expired: AddAfter(*ret_after_ns) */
	TTL_EXPIRED,  /* expired at *ret_expired_at: delete it (after the fresh GET) */
	TTL_ERROR,    /* *ret_err: AddRateLimited */
};
enum ttl_verdict ttl_process(const struct ttl_job *j, kube_time_t now, int64_t *ret_after_ns,
                             kube_time_t *ret_expired_at, enum ttl_err *ret_err);

/* The controller's metric (kcmd/controller.h `metrics`, observed with kcmd/metrics.h by every
 * worker process): upstream's ALPHA histogram
 * ttl_after_finished_controller_job_deletion_duration_seconds, buckets
 * prometheus.ExponentialBuckets(0.1, 2, 14) = 0.1 s · 2^k, k < 14. */
enum {
	TTL_M_DELETION = 0,
	TTL_M_N,
};
extern const struct kcmd_metric ttl_metric_decl[TTL_M_N];
