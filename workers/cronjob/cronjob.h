/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/cronjob/cronjob.h: the CronJob controller's sync (kcm's cronjob-controller,
 * pkg/controller/cronjob: ControllerV2.sync, syncCronJob, cleanupFinishedJobs and utils.go),
 * over the objects as JSON (cJSON trees of the cached CronJob and its Jobs).
 *
 * Design note.
 *   The sync is a function of the CronJob, the Jobs that name it as their controller, the time,
 *   and six operations (struct cj_ops): the API calls upstream's jobControl/cronJobControl make
 *   and its Event recorder. controller.c gives it the real ones (kcmd_kube_request), the unit
 *   tests fakes that record what was asked, as upstream's fakeJobControl/fakeCJControl do.
 *   The CronJob is kept as the JSON the apiserver sent (a KCMD_CACHE_OBJECT record) and its
 *   status edited in place, so the status update is upstream's UpdateStatus: a PUT of the
 *   whole object at the resourceVersion that was read (a Conflict retries with backoff).
 *   Times: object times are Unix seconds (metav1.Time has whole seconds); "now" is in
 *   microseconds, which is all the precision upstream's comparisons with now can see.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "kcmd/controller.h"
#include "workers/cronjob/schedule.h"

#define CJ_CONTROLLER           "cronjob-controller"
#define CJ_QUEUE                "cronjob"
#define CJ_SCHEDULED_ANNOTATION "batch.kubernetes.io/cronjob-scheduled-timestamp"
/* nextScheduleDelta: the requeue lands this long after the activation */
#define CJ_NEXT_DELTA_US 100000

/* A Job as the sync reads it (the fields upstream's sync looks at). */
struct cj_job {
	char name[254], ns[254], uid[64];
	bool finished;          /* a Complete or Failed condition with status True */
	char finished_type[16]; /* that condition's type */
	bool succeeded;         /* a Complete condition with status True */
	bool has_completion, has_start;
	int64_t completion, start; /* status.completionTime, status.startTime */
};

/* Reads a Job's JSON. Returns 0, -EINVAL (no metadata.name/uid). */
int cj_job_from_json(const cJSON *job, struct cj_job *ret);

/* The Job's controller reference (metav1.GetControllerOf: the first owner with controller
 * true); NULL when none. */
const cJSON *cj_controller_ref(const cJSON *obj);

/* What the sync does to the world. Every call returns 0 or -errno (kcmd/client.h's table:
 * -ENOENT NotFound, -EEXIST AlreadyExists, -ESHUTDOWN the namespace is terminating, ...);
 * msg gets the apiserver's message for an error, for Events. */
struct cj_ops {
	void *ud;
	/* GET the CronJob from the apiserver (*ret: the caller frees) */
	int (*get_cronjob)(void *ud, const char *ns, const char *name, cJSON **ret);
	int (*get_job)(void *ud, const char *ns, const char *name, cJSON **ret);
	int (*create_job)(void *ud, const char *ns, const cJSON *job, cJSON **ret, char *msg,
	                  size_t msglen);
	/* DELETE with propagationPolicy Background */
	int (*delete_job)(void *ud, const char *ns, const char *name, char *msg, size_t msglen);
	/* PUT .../cronjobs/<name>/status of the whole object */
	int (*update_status)(void *ud, const cJSON *cj, char *msg, size_t msglen);
	void (*event)(void *ud, const cJSON *cj, const char *type, const char *reason,
	              const char *message);
};

struct cj_result {
	int err;            /* < 0: AddRateLimited */
	bool requeue_after; /* AddAfter(after_us) */
	int64_t after_us;   /* may be <= 0: now */
};

/* Upstream's sync() for one CronJob (cj: the cached object, edited in place) and the Jobs whose
 * controller reference names it (getJobsToBeReconciled). now_us: CLOCK_REALTIME. */
void cj_sync(const struct cj_ops *ops, cJSON *cj, struct cj_job *jobs, size_t n_jobs,
             int64_t now_us, struct cj_result *res);

/* ---- the pieces, exposed for the tests and the handlers ------------------------------------ */
enum cj_missed { CJ_NONE_MISSED, CJ_FEW_MISSED, CJ_MANY_MISSED };

/* The schedule times of a CronJob that mostRecentScheduleTime reads. */
struct cj_times {
	int64_t creation;
	bool has_last;
	int64_t last_schedule;
	bool has_deadline;
	int64_t deadline_s; /* spec.startingDeadlineSeconds */
};
void cj_times_from_json(const cJSON *cj, struct cj_times *ret);

/* mostRecentScheduleTime: *ret_earliest_us (the last schedule time or the creation time, or
 * now - startingDeadlineSeconds when later and include_deadline), *ret_has and *ret_recent
 * (the most recent activation not after now), *ret_missed; returns -EDOM when two consecutive
 * activations are less than a second apart (an impossible date: 31 February). */
int cj_most_recent(const struct cj_sched *s, const struct cj_times *t, int64_t now_us,
                   bool include_deadline, int64_t *ret_earliest_us, bool *ret_has,
                   int64_t *ret_recent, enum cj_missed *ret_missed);
/* nextScheduleTimeDuration: from now to the next activation + 100 ms, in microseconds. */
int64_t cj_next_schedule_duration(const struct cj_sched *s, const struct cj_times *t,
                                  int64_t now_us);

/* formatSchedule without the Event: the schedule, prefixed with "TZ=<spec.timeZone> " when a
 * valid timeZone is set and the schedule has no TZ of its own. *ret: malloc'd. */
int cj_format_schedule(const cJSON *cj, char **ret);

/* getJobName: "<cronjob>-<scheduled time in minutes since the epoch>". */
int cj_job_name(const char *cronjob, int64_t scheduled, char *buf, size_t len);

/* getJobFromTemplate2: the Job to create for activation `scheduled` (*ret: cJSON_Delete). */
int cj_job_from_template(const cJSON *cj, int64_t scheduled, cJSON **ret);

/* Upstream's updateCronJob handler: schedule or timeZone changed -> *ret_after_us = the next
 * activation's duration (1), unparseable -> 0 (nothing queued; *err the parse error); anything
 * else -> 2 (queue now). */
int cj_update_decision(const cJSON *old, const cJSON *cur, int64_t now_us, int64_t *ret_after_us,
                       char *err, size_t errlen);

/* The value at a dotted path of object keys ("status.lastScheduleTime"), or NULL. */
const cJSON *cj_json_at(const cJSON *obj, const char *path);
/* The RFC 3339 time at path, as Unix seconds: 0, -ENOENT (absent or null), -EINVAL. */
int cj_json_time(const cJSON *obj, const char *path, int64_t *ret);
/* The string at path, or NULL. */
const char *cj_json_str(const cJSON *obj, const char *path);

/* The controller's metric (kcmd/controller.h `metrics`, observed with kcmd/metrics.h by every
 * worker process): upstream's STABLE histogram
 * cronjob_controller_job_creation_skew_duration_seconds, the time from a Job's scheduled time to
 * its creationTimestamp, buckets prometheus.ExponentialBuckets(1, 2, 10) = 1, 2, 4, ... 512 s. */
enum {
	CJ_M_SKEW = 0,
	CJ_M_N,
};
extern const struct kcmd_metric cj_metric_decl[CJ_M_N];
