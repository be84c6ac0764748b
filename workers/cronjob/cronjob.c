/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workers/cronjob/cronjob.c: the CronJob controller's sync (see cronjob.h), upstream's
 * cronjob_controllerv2.go and utils.go (v1.37) step by step: the same checks in the same order,
 * the same Events with the same reasons and messages, the same status writes.
 */
#include "workers/cronjob/cronjob.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/model.h"

/* ---- JSON helpers ------------------------------------------------------------------------------
 */
const cJSON *cj_json_at(const cJSON *obj, const char *path)
{
	char key[128];

	while (obj && *path) {
		const char *dot = strchr(path, '.');
		size_t n = dot ? (size_t)(dot - path) : strlen(path);
		if (n >= sizeof(key) || !cJSON_IsObject(obj))
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		obj = cJSON_GetObjectItemCaseSensitive(obj, key);
		path += n + (dot ? 1 : 0);
	}
	return cJSON_IsNull(obj) ? NULL : obj;
}

const char *cj_json_str(const cJSON *obj, const char *path)
{
	const cJSON *v = cj_json_at(obj, path);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

int cj_json_time(const cJSON *obj, const char *path, int64_t *ret)
{
	const char *s = cj_json_str(obj, path);
	kube_time_t t;

	if (!s)
		return -ENOENT;
	if (kube_time_parse(s, strlen(s), &t) < 0)
		return -EINVAL;
	*ret = t / 1000000000;
	return 0;
}

static bool json_int(const cJSON *obj, const char *path, int64_t *ret)
{
	const cJSON *v = cj_json_at(obj, path);
	if (!cJSON_IsNumber(v))
		return false;
	*ret = (int64_t)v->valuedouble;
	return true;
}

static cJSON *obj_child(cJSON *obj, const char *key)
{
	cJSON *c = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (cJSON_IsObject(c))
		return c;
	cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
	return cJSON_AddObjectToObject(obj, key);
}

static void fmt_time(int64_t t, char buf[40])
{
	struct cj_zone utc = {.kind = CJ_ZONE_UTC};
	cj_format_rfc3339(&utc, t, buf);
}

/* ---- Jobs -------------------------------------------------------------------------------------
 */
const cJSON *cj_controller_ref(const cJSON *obj)
{
	const cJSON *refs = cj_json_at(obj, "metadata.ownerReferences"), *r;

	cJSON_ArrayForEach(r, refs)
	{
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "controller")))
			return r;
	}
	return NULL;
}

int cj_job_from_json(const cJSON *job, struct cj_job *ret)
{
	const char *name = cj_json_str(job, "metadata.name"),
	           *uid = cj_json_str(job, "metadata.uid");
	const char *ns = cj_json_str(job, "metadata.namespace");
	const cJSON *c;

	memset(ret, 0, sizeof(*ret));
	if (!name || !uid)
		return -EINVAL;
	snprintf(ret->name, sizeof(ret->name), "%s", name);
	snprintf(ret->ns, sizeof(ret->ns), "%s", ns ? ns : "");
	snprintf(ret->uid, sizeof(ret->uid), "%s", uid);
	cJSON_ArrayForEach(c, cj_json_at(job, "status.conditions"))
	{
		const char *type = cj_json_str(c, "type"), *status = cj_json_str(c, "status");
		if (!type || !status || strcmp(status, "True") != 0)
			continue;
		/* FinishedCondition: the first Complete or Failed condition that is True */
		if (!ret->finished && (!strcmp(type, "Complete") || !strcmp(type, "Failed"))) {
			ret->finished = true;
			snprintf(ret->finished_type, sizeof(ret->finished_type), "%s", type);
		}
		if (!strcmp(type, "Complete"))
			ret->succeeded = true;
	}
	ret->has_completion = cj_json_time(job, "status.completionTime", &ret->completion) == 0;
	ret->has_start = cj_json_time(job, "status.startTime", &ret->start) == 0;
	return 0;
}

/* byJobStartTime: started before unstarted, then by start time, then by name. */
static int by_start(const void *a, const void *b)
{
	const struct cj_job *x = *(const struct cj_job *const *)a;
	const struct cj_job *y = *(const struct cj_job *const *)b;

	if (!x->has_start && y->has_start)
		return 1;
	if (x->has_start && !y->has_start)
		return -1;
	if (!x->has_start || x->start == y->start)
		return strcmp(x->name, y->name);
	return x->start < y->start ? -1 : 1;
}

/* ---- schedule times -------------------------------------------------------------------------- */
void cj_times_from_json(const cJSON *cj, struct cj_times *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (cj_json_time(cj, "metadata.creationTimestamp", &ret->creation) < 0)
		ret->creation = CJ_TIME_ZERO;
	ret->has_last = cj_json_time(cj, "status.lastScheduleTime", &ret->last_schedule) == 0;
	ret->has_deadline = json_int(cj, "spec.startingDeadlineSeconds", &ret->deadline_s);
}

static int64_t floor_sec(int64_t us)
{
	int64_t q = us / 1000000;
	return (us % 1000000 != 0 && us < 0) ? q - 1 : q;
}

int cj_most_recent(const struct cj_sched *s, const struct cj_times *tm, int64_t now_us,
                   bool include_deadline, int64_t *ret_earliest_us, bool *ret_has,
                   int64_t *ret_recent, enum cj_missed *ret_missed)
{
	int64_t earliest = (tm->has_last ? tm->last_schedule : tm->creation) * 1000000;
	int64_t t1, t2, between, elapsed, missed_n, pe, t;

	*ret_has = false;
	*ret_missed = CJ_NONE_MISSED;
	if (include_deadline && tm->has_deadline) {
		int64_t deadline = now_us - tm->deadline_s * 1000000;
		if (deadline > earliest)
			earliest = deadline;
	}
	*ret_earliest_us = earliest;
	t1 = cj_sched_next(s, floor_sec(earliest));
	t2 = cj_sched_next(s, t1);
	if (now_us < t1 * 1000000)
		return 0;
	if (now_us < t2 * 1000000) {
		*ret_has = true;
		*ret_recent = t1;
		return 0;
	}
	between = t2 - t1;
	if (between < 1)
		return -EDOM;
	elapsed = (now_us - t1 * 1000000) / 1000000;
	missed_n = elapsed / between + 1;
	pe = t1 + (missed_n - 2) * between;
	for (t = cj_sched_next(s, pe); t != CJ_TIME_ZERO && t * 1000000 <= now_us;
	     t = cj_sched_next(s, t)) {
		*ret_recent = t;
		*ret_has = true;
	}
	if (missed_n > 100)
		*ret_missed = CJ_MANY_MISSED;
	else if (missed_n > 0)
		*ret_missed = CJ_FEW_MISSED;
	return 0;
}

int64_t cj_next_schedule_duration(const struct cj_sched *s, const struct cj_times *tm,
                                  int64_t now_us)
{
	int64_t earliest, recent = 0, from;
	enum cj_missed missed;
	bool has;

	if (cj_most_recent(s, tm, now_us, false, &earliest, &has, &recent, &missed) < 0)
		from = now_us;
	else if (has)
		from = recent * 1000000;
	else if (missed == CJ_NONE_MISSED)
		from = earliest;
	else
		from = now_us;
	return cj_sched_next(s, floor_sec(from)) * 1000000 + CJ_NEXT_DELTA_US - now_us;
}

int cj_format_schedule(const cJSON *cj, char **ret)
{
	const char *sched = cj_json_str(cj, "spec.schedule");
	const char *tz = cj_json_str(cj, "spec.timeZone");
	struct cj_zone z;
	char err[128];
	size_t n;

	if (!sched)
		sched = "";
	if (strstr(sched, "TZ") || !tz || cj_zone_load(tz, &z, err, sizeof(err)) < 0) {
		*ret = strdup(sched);
		return *ret ? 0 : -ENOMEM;
	}
	n = strlen(tz) + strlen(sched) + 5;
	if (!(*ret = malloc(n)))
		return -ENOMEM;
	snprintf(*ret, n, "TZ=%s %s", tz, sched);
	return 0;
}

int cj_job_name(const char *cronjob, int64_t scheduled, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s-%lld", cronjob, (long long)(scheduled / 60));
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int cj_job_from_template(const cJSON *cj, int64_t scheduled, cJSON **ret)
{
	const char *cj_name = cj_json_str(cj, "metadata.name"),
	           *uid = cj_json_str(cj, "metadata.uid");
	const char *tzname = cj_json_str(cj, "spec.timeZone");
	const cJSON *labels = cj_json_at(cj, "spec.jobTemplate.metadata.labels");
	const cJSON *annotations = cj_json_at(cj, "spec.jobTemplate.metadata.annotations");
	const cJSON *spec = cj_json_at(cj, "spec.jobTemplate.spec");
	char name[300], ts[40], err[128];
	struct cj_zone z;
	cJSON *job = NULL, *meta, *ann, *refs, *ref;
	int r;

	*ret = NULL;
	if (!cj_name || !uid)
		return -EINVAL;
	if ((r = cj_zone_load(tzname ? tzname : "", &z, err, sizeof(err))) < 0)
		return r;
	if ((r = cj_job_name(cj_name, scheduled, name, sizeof(name))) < 0)
		return r;
	cj_format_rfc3339(&z, scheduled, ts);
	if (!(job = cJSON_CreateObject()))
		return -ENOMEM;
	cJSON_AddStringToObject(job, "apiVersion", "batch/v1");
	cJSON_AddStringToObject(job, "kind", "Job");
	meta = cJSON_AddObjectToObject(job, "metadata");
	if (!meta)
		goto nomem;
	cJSON_AddStringToObject(meta, "name", name);
	if (cJSON_IsObject(labels) && labels->child)
		cJSON_AddItemToObject(meta, "labels", cJSON_Duplicate(labels, true));
	ann = cJSON_IsObject(annotations) ? cJSON_Duplicate(annotations, true)
	                                  : cJSON_CreateObject();
	if (!ann)
		goto nomem;
	cJSON_DeleteItemFromObjectCaseSensitive(ann, CJ_SCHEDULED_ANNOTATION);
	cJSON_AddStringToObject(ann, CJ_SCHEDULED_ANNOTATION, ts);
	cJSON_AddItemToObject(meta, "annotations", ann);
	fmt_time(scheduled, ts);
	cJSON_AddStringToObject(meta, "creationTimestamp", ts);
	refs = cJSON_AddArrayToObject(meta, "ownerReferences");
	ref = cJSON_CreateObject();
	if (!refs || !ref)
		goto nomem;
	cJSON_AddItemToArray(refs, ref);
	cJSON_AddStringToObject(ref, "apiVersion", "batch/v1");
	cJSON_AddStringToObject(ref, "kind", "CronJob");
	cJSON_AddStringToObject(ref, "name", cj_name);
	cJSON_AddStringToObject(ref, "uid", uid);
	cJSON_AddBoolToObject(ref, "controller", true);
	cJSON_AddBoolToObject(ref, "blockOwnerDeletion", true);
	cJSON_AddItemToObject(job, "spec",
	                      spec ? cJSON_Duplicate(spec, true) : cJSON_CreateObject());
	*ret = job;
	return 0;
nomem:
	cJSON_Delete(job);
	return -ENOMEM;
}

int cj_update_decision(const cJSON *old, const cJSON *cur, int64_t now_us, int64_t *ret_after_us,
                       char *err, size_t errlen)
{
	const char *os = cj_json_str(old, "spec.schedule"), *ns = cj_json_str(cur, "spec.schedule");
	const char *otz = cj_json_str(old, "spec.timeZone"),
	           *ntz = cj_json_str(cur, "spec.timeZone");
	struct cj_sched s;
	struct cj_times tm;
	char *spec = NULL;
	int r;

	bool same_sched = (!os && !ns) || (os && ns && !strcmp(os, ns));
	bool same_tz = (!otz && !ntz) || (otz && ntz && !strcmp(otz, ntz));
	if (same_sched && same_tz)
		return 2;
	if ((r = cj_format_schedule(cur, &spec)) < 0)
		return r;
	r = cj_sched_parse(spec, &s, err, errlen);
	free(spec);
	if (r < 0)
		return 0;
	cj_times_from_json(cur, &tm);
	*ret_after_us = cj_next_schedule_duration(&s, &tm, now_us);
	return 1;
}

/* ---- the sync -------------------------------------------------------------------------------- */
static void eventf(const struct cj_ops *ops, const cJSON *cj, const char *type, const char *reason,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void eventf(const struct cj_ops *ops, const cJSON *cj, const char *type, const char *reason,
                   const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ops->event(ops->ud, cj, type, reason, msg);
}

static cJSON *active_list(cJSON *cj)
{
	cJSON *st = obj_child(cj, "status"), *a;

	if (!st)
		return NULL;
	a = cJSON_GetObjectItemCaseSensitive(st, "active");
	if (cJSON_IsArray(a))
		return a;
	cJSON_DeleteItemFromObjectCaseSensitive(st, "active");
	return cJSON_AddArrayToObject(st, "active");
}

static size_t n_active(const cJSON *cj)
{
	const cJSON *a = cj_json_at(cj, "status.active");
	return cJSON_IsArray(a) ? (size_t)cJSON_GetArraySize(a) : 0;
}

static bool in_active_list(const cJSON *cj, const char *uid)
{
	const cJSON *r;

	cJSON_ArrayForEach(r, cj_json_at(cj, "status.active"))
	{
		const char *u = cj_json_str(r, "uid");
		if (u && !strcmp(u, uid))
			return true;
	}
	return false;
}

static bool in_active_list_by_name(const cJSON *cj, const char *ns, const char *name)
{
	const cJSON *r;

	cJSON_ArrayForEach(r, cj_json_at(cj, "status.active"))
	{
		const char *n = cj_json_str(r, "name"), *s = cj_json_str(r, "namespace");
		if (n && !strcmp(n, name) && !strcmp(s ? s : "", ns))
			return true;
	}
	return false;
}

static void delete_from_active_list(cJSON *cj, const char *uid)
{
	cJSON *a = (cJSON *)cj_json_at(cj, "status.active"), *r, *next;

	if (!cJSON_IsArray(a))
		return;
	for (r = a->child; r; r = next) {
		const char *u = cj_json_str(r, "uid");
		next = r->next;
		if (u && !strcmp(u, uid))
			cJSON_Delete(cJSON_DetachItemViaPointer(a, r));
	}
}

static void set_status_time(cJSON *cj, const char *key, int64_t t)
{
	cJSON *st = obj_child(cj, "status");
	char ts[40];

	if (!st)
		return;
	fmt_time(t, ts);
	cJSON_DeleteItemFromObjectCaseSensitive(st, key);
	cJSON_AddStringToObject(st, key, ts);
}

/* deleteJob: the Job (Background), then its reference in the active list. */
static bool delete_job(const struct cj_ops *ops, cJSON *cj, const char *ns, const char *name,
                       const char *uid)
{
	char msg[512] = "";
	int r = ops->delete_job(ops->ud, ns, name, msg, sizeof(msg));

	if (r < 0) {
		eventf(ops, cj, "Warning", "FailedDelete", "Deleted job: %s",
		       msg[0] ? msg : strerror(-r));
		return false;
	}
	delete_from_active_list(cj, uid);
	eventf(ops, cj, "Normal", "SuccessfulDelete", "Deleted job %s", name);
	return true;
}

/* removeOldestJobs over the finished Jobs of one kind. */
static bool remove_oldest(const struct cj_ops *ops, cJSON *cj, struct cj_job **js, size_t n,
                          int64_t max)
{
	bool update = false;

	if ((int64_t)n - max <= 0)
		return false;
	qsort(js, n, sizeof(*js), by_start);
	for (int64_t i = 0; i < (int64_t)n - max; i++)
		if (delete_job(ops, cj, js[i]->ns, js[i]->name, js[i]->uid))
			update = true;
	return update;
}

static bool cleanup_finished(const struct cj_ops *ops, cJSON *cj, struct cj_job *jobs, size_t n)
{
	int64_t succ_limit = 0, fail_limit = 0;
	bool has_succ = json_int(cj, "spec.successfulJobsHistoryLimit", &succ_limit);
	bool has_fail = json_int(cj, "spec.failedJobsHistoryLimit", &fail_limit);
	struct cj_job **succ, **fail;
	size_t ns = 0, nf = 0;
	bool update = false;

	if (!has_succ && !has_fail)
		return false;
	succ = calloc(n + 1, sizeof(*succ));
	fail = calloc(n + 1, sizeof(*fail));
	if (succ && fail) {
		for (size_t i = 0; i < n; i++) {
			if (jobs[i].finished && !strcmp(jobs[i].finished_type, "Complete"))
				succ[ns++] = &jobs[i];
			else if (jobs[i].finished && !strcmp(jobs[i].finished_type, "Failed"))
				fail[nf++] = &jobs[i];
		}
		if (has_succ && remove_oldest(ops, cj, succ, ns, succ_limit))
			update = true;
		if (has_fail && remove_oldest(ops, cj, fail, nf, fail_limit))
			update = true;
	}
	free(succ);
	free(fail);
	return update;
}

/* syncCronJob. *cur is the object it edits; it may swap it for a fresh GET (as upstream rebinds
 * its local pointer, so later edits go to that copy, not to the one sync() writes). */
static int sync_cronjob(const struct cj_ops *ops, cJSON *orig, cJSON **fresh, struct cj_job *jobs,
                        size_t n, int64_t now_us, bool *update, bool *requeue, int64_t *after_us)
{
	cJSON *cj = orig;
	const char *ns = cj_json_str(orig, "metadata.namespace");
	const char *name = cj_json_str(orig, "metadata.name");
	const char *tz, *policy;
	struct cj_sched sched;
	struct cj_times tm;
	char err[256], msg[512] = "", jname[300];
	char *spec = NULL;
	int64_t earliest, recent = 0, deadline;
	enum cj_missed missed;
	bool has;
	cJSON *jobreq = NULL, *jobresp = NULL;
	int r;

	if (!ns)
		ns = "";
	if (!name)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		struct cj_job *j = &jobs[i];
		bool found = in_active_list(cj, j->uid);
		if (!found && !j->finished) {
			cJSON *copy = NULL;
			if ((r = ops->get_cronjob(ops->ud, ns, name, &copy)) < 0)
				return r;
			if (in_active_list(copy, j->uid)) {
				cJSON_Delete(*fresh);
				*fresh = cj = copy;
				continue;
			}
			cJSON_Delete(copy);
			eventf(ops, cj, "Warning", "UnexpectedJob",
			       "Saw a job that the controller did not create or forgot: %s",
			       j->name);
		} else if (j->finished) {
			if (found) {
				delete_from_active_list(cj, j->uid);
				eventf(ops, cj, "Normal", "SawCompletedJob",
				       "Saw completed job: %s, condition: %s", j->name,
				       j->finished_type);
				*update = true;
			}
			if (j->succeeded) {
				int64_t last;
				bool has_last =
				        cj_json_time(cj, "status.lastSuccessfulTime", &last) == 0;
				if (!has_last) {
					/* set to the completion time, absent or not */
					if (j->has_completion)
						set_status_time(cj, "lastSuccessfulTime",
						                j->completion);
					*update = true;
				} else if (j->has_completion && j->completion > last) {
					set_status_time(cj, "lastSuccessfulTime", j->completion);
					*update = true;
				}
			}
		}
	}

	/* active references whose Job the cache does not have: ask the apiserver */
	{
		const cJSON *a = cj_json_at(cj, "status.active"), *ref;
		size_t na = cJSON_IsArray(a) ? (size_t)cJSON_GetArraySize(a) : 0, k = 0;
		char(*uids)[64] = calloc(na + 1, sizeof(*uids));
		char(*names)[254] = calloc(na + 1, sizeof(*names));
		char(*nss)[254] = calloc(na + 1, sizeof(*nss));
		if (!uids || !names || !nss) {
			free(uids);
			free(names);
			free(nss);
			return -ENOMEM;
		}
		cJSON_ArrayForEach(ref, a)
		{
			const char *u = cj_json_str(ref, "uid"), *nm = cj_json_str(ref, "name");
			const char *rns = cj_json_str(ref, "namespace");
			snprintf(uids[k], 64, "%s", u ? u : "");
			snprintf(names[k], 254, "%s", nm ? nm : "");
			snprintf(nss[k], 254, "%s", rns ? rns : "");
			k++;
		}
		r = 0;
		for (size_t i = 0; i < k && r == 0; i++) {
			bool child = false;
			cJSON *got = NULL;
			for (size_t j = 0; j < n && !child; j++)
				child = !strcmp(jobs[j].uid, uids[i]);
			if (child)
				continue;
			r = ops->get_job(ops->ud, nss[i], names[i], &got);
			cJSON_Delete(got);
			if (r == -ENOENT) {
				eventf(ops, cj, "Normal", "MissingJob",
				       "Active job went missing: %s", names[i]);
				delete_from_active_list(cj, uids[i]);
				*update = true;
				r = 0;
			}
		}
		free(uids);
		free(names);
		free(nss);
		if (r < 0)
			return r;
	}

	if (cj_json_str(cj, "metadata.deletionTimestamp"))
		return 0;

	if ((tz = cj_json_str(cj, "spec.timeZone"))) {
		struct cj_zone z;
		if (cj_zone_load(tz, &z, err, sizeof(err)) < 0) {
			eventf(ops, cj, "Warning", "UnknownTimeZone",
			       "invalid timeZone: \"%s\": %s", tz, err);
			return 0;
		}
	}
	if (cJSON_IsTrue(cj_json_at(cj, "spec.suspend")))
		return 0;

	{
		const char *s = cj_json_str(cj, "spec.schedule");
		if (s && strstr(s, "TZ"))
			eventf(ops, cj, "Warning", "UnsupportedSchedule",
			       "CRON_TZ or TZ used in schedule \"%s\" is not officially supported, "
			       "see "
			       "https://kubernetes.io/docs/concepts/workloads/controllers/"
			       "cron-jobs/ "
			       "for more details",
			       s);
	}
	if ((r = cj_format_schedule(cj, &spec)) < 0)
		return r;
	r = cj_sched_parse(spec, &sched, err, sizeof(err));
	free(spec);
	if (r < 0) {
		const char *s = cj_json_str(cj, "spec.schedule");
		eventf(ops, cj, "Warning", "UnparseableSchedule",
		       "unparseable schedule: \"%s\" : %s", s ? s : "", err);
		return 0;
	}

	/* nextScheduleTime */
	cj_times_from_json(cj, &tm);
	r = cj_most_recent(&sched, &tm, now_us, true, &earliest, &has, &recent, &missed);
	if (r == 0 && has && recent * 1000000 <= now_us && missed == CJ_MANY_MISSED)
		eventf(ops, cj, "Warning", "TooManyMissedTimes",
		       "too many missed start times. Set or decrease .spec.startingDeadlineSeconds "
		       "or check clock skew");
	if (r < 0) {
		const char *s = cj_json_str(cj, "spec.schedule");
		eventf(ops, cj, "Warning", "InvalidSchedule", "invalid schedule: %s : %s",
		       s ? s : "", "time difference between two schedules is less than 1 second");
		return 0;
	}
	if (!has || recent * 1000000 > now_us) {
		*requeue = true;
		*after_us = cj_next_schedule_duration(&sched, &tm, now_us);
		return 0;
	}

	if (tm.has_deadline && (recent + tm.deadline_s) * 1000000 < now_us) {
		char when[40];
		cj_format_rfc1123z(recent, when);
		eventf(ops, cj, "Warning", "MissSchedule",
		       "Missed scheduled time to start a job: %s", when);
		*requeue = true;
		*after_us = cj_next_schedule_duration(&sched, &tm, now_us);
		return 0;
	}
	(void)deadline;
	if ((r = cj_job_name(name, recent, jname, sizeof(jname))) < 0)
		return r;
	if (in_active_list_by_name(cj, ns, jname) || (tm.has_last && tm.last_schedule == recent)) {
		*requeue = true;
		*after_us = cj_next_schedule_duration(&sched, &tm, now_us);
		return 0;
	}
	policy = cj_json_str(cj, "spec.concurrencyPolicy");
	if (policy && !strcmp(policy, "Forbid") && n_active(cj) > 0) {
		eventf(ops, cj, "Normal", "JobAlreadyActive",
		       "Not starting job because prior execution is running and concurrency policy "
		       "is Forbid");
		*requeue = true;
		*after_us = cj_next_schedule_duration(&sched, &tm, now_us);
		return 0;
	}
	if (policy && !strcmp(policy, "Replace")) {
		const cJSON *a = cj_json_at(cj, "status.active"), *ref;
		size_t na = cJSON_IsArray(a) ? (size_t)cJSON_GetArraySize(a) : 0, k = 0;
		char(*names)[254] = calloc(na + 1, sizeof(*names));
		char(*nss)[254] = calloc(na + 1, sizeof(*nss));
		if (!names || !nss) {
			free(names);
			free(nss);
			return -ENOMEM;
		}
		cJSON_ArrayForEach(ref, a)
		{
			const char *nm = cj_json_str(ref, "name"),
			           *rns = cj_json_str(ref, "namespace");
			snprintf(names[k], 254, "%s", nm ? nm : "");
			snprintf(nss[k], 254, "%s", rns ? rns : "");
			k++;
		}
		r = 0;
		for (size_t i = 0; i < k && r == 0; i++) {
			cJSON *job = NULL;
			struct cj_job jj;
			if ((r = ops->get_job(ops->ud, nss[i], names[i], &job)) < 0) {
				if (r == -ENOENT) /* the apiserver's NotFound message */
					eventf(ops, cj, "Warning", "FailedGet",
					       "Get job: jobs.batch \"%s\" not found", names[i]);
				else
					eventf(ops, cj, "Warning", "FailedGet", "Get job: %s",
					       strerror(-r));
				break;
			}
			if (cj_job_from_json(job, &jj) < 0 ||
			    !delete_job(ops, cj, jj.ns[0] ? jj.ns : nss[i], jj.name, jj.uid)) {
				r = -EIO; /* could not replace job */
			} else {
				*update = true;
			}
			cJSON_Delete(job);
		}
		free(names);
		free(nss);
		if (r < 0)
			return r;
	}

	if ((r = cj_job_from_template(cj, recent, &jobreq)) < 0)
		return r;
	r = ops->create_job(ops->ud, ns, jobreq, &jobresp, msg, sizeof(msg));
	cJSON_Delete(jobreq);
	if (r == -ESHUTDOWN) {
		return r; /* the namespace is terminating: every create fails */
	} else if (r == -EEXIST) {
		const cJSON *ref;
		const char *uid = cj_json_str(cj, "metadata.uid");
		cJSON_Delete(jobresp);
		jobresp = NULL;
		if ((r = ops->get_job(ops->ud, ns, jname, &jobresp)) < 0)
			return r;
		ref = cj_controller_ref(jobresp);
		/* metav1.IsControlledBy: the controller reference's uid is ours */
		if (!ref || !uid || !cj_json_str(ref, "uid") ||
		    strcmp(cj_json_str(ref, "uid"), uid)) {
			cJSON_Delete(jobresp);
			return 0;
		}
		if (in_active_list(cj, cj_json_str(jobresp, "metadata.uid") ?: "")) {
			cJSON_Delete(jobresp);
			return 0;
		}
	} else if (r < 0) {
		eventf(ops, cj, "Warning", "FailedCreate", "Error creating job: %s",
		       msg[0] ? msg : strerror(-r));
		return r;
	} else {
		const char *jn = cj_json_str(jobresp, "metadata.name");
		eventf(ops, cj, "Normal", "SuccessfulCreate", "Created job %s", jn ? jn : jname);
	}

	/* the Job's reference into status.active, and the activation into lastScheduleTime */
	{
		cJSON *a = active_list(cj), *ref = cJSON_CreateObject();
		const char *v;
		if (!a || !ref) {
			cJSON_Delete(ref);
			cJSON_Delete(jobresp);
			return -ENOMEM;
		}
		cJSON_AddStringToObject(ref, "kind", "Job");
		if ((v = cj_json_str(jobresp, "metadata.namespace")))
			cJSON_AddStringToObject(ref, "namespace", v);
		if ((v = cj_json_str(jobresp, "metadata.name")))
			cJSON_AddStringToObject(ref, "name", v);
		if ((v = cj_json_str(jobresp, "metadata.uid")))
			cJSON_AddStringToObject(ref, "uid", v);
		cJSON_AddStringToObject(ref, "apiVersion", "batch/v1");
		if ((v = cj_json_str(jobresp, "metadata.resourceVersion")))
			cJSON_AddStringToObject(ref, "resourceVersion", v);
		cJSON_AddItemToArray(a, ref);
		set_status_time(cj, "lastScheduleTime", recent);
		*update = true;
	}
	cJSON_Delete(jobresp);
	cj_times_from_json(cj, &tm);
	*requeue = true;
	*after_us = cj_next_schedule_duration(&sched, &tm, now_us);
	return 0;
}

void cj_sync(const struct cj_ops *ops, cJSON *cj, struct cj_job *jobs, size_t n_jobs,
             int64_t now_us, struct cj_result *res)
{
	cJSON *fresh = NULL;
	bool update = false, requeue = false;
	int64_t after = 0;
	char msg[512];
	int sync_err, r;

	*res = (struct cj_result){0};
	update = cleanup_finished(ops, cj, jobs, n_jobs);
	sync_err = sync_cronjob(ops, cj, &fresh, jobs, n_jobs, now_us, &update, &requeue, &after);
	cJSON_Delete(fresh);
	if (update && (r = ops->update_status(ops->ud, cj, msg, sizeof(msg))) < 0) {
		res->err = r;
		return;
	}
	if (requeue) {
		res->requeue_after = true;
		res->after_us = after;
		return;
	}
	res->err = sync_err;
}

static const double cj_skew_buckets[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512};

const struct kcmd_metric cj_metric_decl[CJ_M_N] = {
        [CJ_M_SKEW] = {.name = "cronjob_controller_job_creation_skew_duration_seconds",
                       .help = "Time between when a cronjob is scheduled to be run, and when the "
                               "corresponding job is created",
                       .type = KCMD_METRIC_HISTOGRAM,
                       .stability = KCMD_METRIC_STABLE,
                       .buckets = cj_skew_buckets,
                       .n_buckets = sizeof(cj_skew_buckets) / sizeof(cj_skew_buckets[0])},
};
