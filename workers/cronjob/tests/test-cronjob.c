/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CronJob controller's sync (workers/cronjob/cronjob.h) against upstream v1.37's
 * pkg/controller/cronjob tests, read for their facts: utils_test.go (TestMostRecentScheduleTime,
 * TestNextScheduleTimeDuration, TestGetJobFromTemplate2, TestByJobStartTime through the history
 * cleanup) and a selection of cronjob_controllerv2_test.go's TestControllerV2SyncCronJob table
 * (the same times, schedules and expectations: creates, deletes, active count, warnings,
 * status updates, requeue durations), TestControllerV2CleanupFinishedJobs and
 * TestControllerV2JobAlreadyExistsButDifferentOwner, with fakes of upstream's jobControl,
 * cronJobControl and recorder (struct cj_ops). Local time is UTC here, as in upstream's tests
 * (their times carry the UTC location).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workers/cronjob/cronjob.h"

#define SEC  INT64_C(1000000)
#define MIN  (60 * SEC)
#define HOUR (60 * MIN)

/* upstream's fixed times (2016-05-19, UTC) as Unix seconds */
#define TOP_OF_THE_HOUR   INT64_C(1463652000) /* 10:00 */
#define JUST_BEFORE_HOUR  (TOP_OF_THE_HOUR - 60)
#define JUST_AFTER_HOUR   (TOP_OF_THE_HOUR + 60)
#define JUST_AFTER_PRIOR  (TOP_OF_THE_HOUR - 3600 + 60)
#define JUST_BEFORE_PRIOR (TOP_OF_THE_HOUR - 3600 - 60)
#define WEEK_AFTER_HOUR   (TOP_OF_THE_HOUR + 7 * 86400)
#define NO_DEAD           (-12345)
#define SHORT_DEAD        10
#define MEDIUM_DEAD       (2 * 60 * 60)
#define LONG_DEAD         1000000

static void ts(int64_t t, char buf[40])
{
	struct cj_zone utc = {.kind = CJ_ZONE_UTC};
	cj_format_rfc3339(&utc, t, buf);
}

static cJSON *cronjob(const char *schedule, const char *policy, int64_t deadline, int64_t created)
{
	char c[40];
	cJSON *cj = cJSON_Parse(
	        "{\"apiVersion\":\"batch/"
	        "v1\",\"kind\":\"CronJob\",\"metadata\":{\"name\":\"mycronjob\","
	        "\"namespace\":\"snazzycats\",\"uid\":\"1a2b3c\",\"resourceVersion\":\"7\"},"
	        "\"spec\":{\"jobTemplate\":{\"metadata\":{\"labels\":{\"a\":\"b\"},"
	        "\"annotations\":{\"x\":\"y\"}},\"spec\":{\"activeDeadlineSeconds\":1,"
	        "\"manualSelector\":false,\"template\":{\"metadata\":{\"labels\":{\"foo\":\"bar\"}}"
	        ","
	        "\"spec\":{\"containers\":[{\"image\":\"foo/bar\"}]}}}}},\"status\":{}}");
	cJSON *spec = cJSON_GetObjectItem(cj, "spec"), *meta = cJSON_GetObjectItem(cj, "metadata");

	cJSON_AddStringToObject(spec, "schedule", schedule);
	cJSON_AddStringToObject(spec, "concurrencyPolicy", policy);
	if (deadline != NO_DEAD)
		cJSON_AddNumberToObject(spec, "startingDeadlineSeconds", (double)deadline);
	ts(created, c);
	cJSON_AddStringToObject(meta, "creationTimestamp", c);
	return cj;
}

static void set_status_time(cJSON *cj, const char *key, int64_t t)
{
	char c[40];
	ts(t, c);
	cJSON_AddStringToObject(cJSON_GetObjectItem(cj, "status"), key, c);
}

static cJSON *active_ref(const char *name, const char *uid)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "kind", "Job");
	cJSON_AddStringToObject(r, "namespace", "snazzycats");
	cJSON_AddStringToObject(r, "name", name);
	cJSON_AddStringToObject(r, "uid", uid);
	cJSON_AddStringToObject(r, "apiVersion", "batch/v1");
	return r;
}

static void add_active(cJSON *cj, const char *name, const char *uid)
{
	cJSON *st = cJSON_GetObjectItem(cj, "status"), *a = cJSON_GetObjectItem(st, "active");
	if (!a)
		a = cJSON_AddArrayToObject(st, "active");
	cJSON_AddItemToArray(a, active_ref(name, uid));
}

/* ---- fakes ------------------------------------------------------------------------------------
 */
struct fake {
	cJSON *real_cj; /* what GET cronjob answers */
	cJSON *job;     /* what GET job answers (NULL: NotFound) */
	int create_err; /* what POST job answers */
	int get_err;    /* GET job error other than NotFound */
	int creates, deletes, updates, gets, warnings, normals;
	char reasons[512];
	char created[8][300], deleted[8][300];
	cJSON *last_update;
};

static int f_get_cj(void *ud, const char *ns, const char *name, cJSON **ret)
{
	struct fake *f = ud;
	(void)ns;
	(void)name;
	*ret = f->real_cj ? cJSON_Duplicate(f->real_cj, true) : NULL;
	return f->real_cj ? 0 : -ENOENT;
}

static int f_get_job(void *ud, const char *ns, const char *name, cJSON **ret)
{
	struct fake *f = ud;
	(void)ns;
	(void)name;
	f->gets++;
	*ret = NULL;
	if (f->get_err)
		return f->get_err;
	if (!f->job)
		return -ENOENT;
	*ret = cJSON_Duplicate(f->job, true);
	return 0;
}

static int f_create(void *ud, const char *ns, const cJSON *job, cJSON **ret, char *msg, size_t n)
{
	struct fake *f = ud;
	cJSON *out;

	*ret = NULL;
	if (f->create_err) {
		snprintf(msg, n, "create failed");
		return f->create_err;
	}
	out = cJSON_Duplicate(job, true);
	cJSON *meta = cJSON_GetObjectItem(out, "metadata");
	cJSON_AddStringToObject(meta, "namespace", ns);
	cJSON_AddStringToObject(meta, "uid", "new-uid");
	cJSON_AddStringToObject(meta, "resourceVersion", "9");
	snprintf(f->created[f->creates++ % 8], 300, "%s", cj_json_str(job, "metadata.name"));
	*ret = out;
	return 0;
}

static int f_delete(void *ud, const char *ns, const char *name, char *msg, size_t n)
{
	struct fake *f = ud;
	(void)ns;
	(void)msg;
	(void)n;
	snprintf(f->deleted[f->deletes++ % 8], 300, "%s", name);
	return 0;
}

static int f_update(void *ud, const cJSON *cj, char *msg, size_t n)
{
	struct fake *f = ud;
	(void)msg;
	(void)n;
	f->updates++;
	cJSON_Delete(f->last_update);
	f->last_update = cJSON_Duplicate(cj, true);
	return 0;
}

static void f_event(void *ud, const cJSON *cj, const char *type, const char *reason,
                    const char *message)
{
	struct fake *f = ud;
	size_t l = strlen(f->reasons);
	(void)cj;
	(void)message;
	if (!strcmp(type, "Warning"))
		f->warnings++;
	else
		f->normals++;
	snprintf(f->reasons + l, sizeof(f->reasons) - l, "%s,", reason);
}

static struct cj_ops ops_of(struct fake *f)
{
	return (struct cj_ops){.ud = f,
	                       .get_cronjob = f_get_cj,
	                       .get_job = f_get_job,
	                       .create_job = f_create,
	                       .delete_job = f_delete,
	                       .update_status = f_update,
	                       .event = f_event};
}

static void fake_free(struct fake *f)
{
	cJSON_Delete(f->real_cj);
	cJSON_Delete(f->job);
	cJSON_Delete(f->last_update);
}

static size_t n_active(const cJSON *cj)
{
	const cJSON *a = cj_json_at(cj, "status.active");
	return a ? (size_t)cJSON_GetArraySize(a) : 0;
}

/* ---- TestControllerV2SyncCronJob (a selection) -------------------------------------------- */
struct sync_case {
	const char *name, *policy, *schedule, *tz;
	bool suspend;
	int64_t deadline;
	bool ran_previously, still_active, job_in_active;
	int64_t now;
	int create_err;
	bool expect_create, expect_delete, expect_completed, expect_update;
	int expect_active, expect_warnings;
	bool expect_requeue;
	int64_t expect_after;
};

static void run_sync_case(const struct sync_case *tc)
{
	cJSON *cj = cronjob(tc->schedule, tc->policy, tc->deadline,
	                    tc->ran_previously ? JUST_BEFORE_PRIOR : JUST_BEFORE_HOUR);
	struct fake f = {0};
	struct cj_job job;
	cJSON *jobj = NULL;
	struct cj_result res;
	size_t n_jobs = 0;

	if (tc->suspend)
		cJSON_AddBoolToObject(cJSON_GetObjectItem(cj, "spec"), "suspend", true);
	if (tc->tz)
		cJSON_AddStringToObject(cJSON_GetObjectItem(cj, "spec"), "timeZone", tc->tz);
	f.real_cj = cJSON_Duplicate(cj, true);
	if (tc->ran_previously) {
		char name[300], c[40];
		set_status_time(cj, "lastScheduleTime", JUST_AFTER_PRIOR);
		assert_int_equal(cj_job_from_template(cj, JUST_AFTER_PRIOR, &jobj), 0);
		cJSON *meta = cJSON_GetObjectItem(jobj, "metadata");
		cJSON_AddStringToObject(meta, "uid", "1234");
		cJSON_AddStringToObject(meta, "namespace", "snazzycats");
		snprintf(name, sizeof(name), "%s", cj_json_str(jobj, "metadata.name"));
		if (tc->job_in_active)
			add_active(cj, name, "1234");
		if (tc->still_active) {
			add_active(f.real_cj, name, "1234");
		} else {
			cJSON *st = cJSON_AddObjectToObject(jobj, "status"), *conds, *cond;
			ts(JUST_AFTER_PRIOR + 10, c);
			cJSON_AddStringToObject(st, "completionTime", c);
			conds = cJSON_AddArrayToObject(st, "conditions");
			cond = cJSON_CreateObject();
			cJSON_AddStringToObject(cond, "type", "Complete");
			cJSON_AddStringToObject(cond, "status", "True");
			cJSON_AddItemToArray(conds, cond);
		}
		assert_int_equal(cj_job_from_json(jobj, &job), 0);
		n_jobs = 1;
		f.job = jobj;
	}
	f.create_err = tc->create_err;
	struct cj_ops ops = ops_of(&f);
	cj_sync(&ops, cj, &job, n_jobs, tc->now * SEC, &res);

	if (f.creates != (tc->expect_create ? 1 : 0))
		fail_msg("%s: %d creates", tc->name, f.creates);
	if (f.deletes != (tc->expect_delete ? 1 : 0))
		fail_msg("%s: %d deletes", tc->name, f.deletes);
	if (f.warnings != tc->expect_warnings)
		fail_msg("%s: %d warnings (%s)", tc->name, f.warnings, f.reasons);
	if ((f.updates > 0) != tc->expect_update)
		fail_msg("%s: %d status updates", tc->name, f.updates);
	if (tc->expect_completed && !strstr(f.reasons, "SawCompletedJob"))
		fail_msg("%s: no SawCompletedJob (%s)", tc->name, f.reasons);
	if (tc->expect_create && !strstr(f.reasons, "SuccessfulCreate"))
		fail_msg("%s: no SuccessfulCreate (%s)", tc->name, f.reasons);
	if (tc->expect_delete && !strstr(f.reasons, "SuccessfulDelete"))
		fail_msg("%s: no SuccessfulDelete (%s)", tc->name, f.reasons);
	if (tc->expect_update && (int)n_active(f.last_update) != tc->expect_active)
		fail_msg("%s: %zu active, want %d", tc->name, n_active(f.last_update),
		         tc->expect_active);
	if (tc->expect_requeue && (!res.requeue_after || res.after_us != tc->expect_after))
		fail_msg("%s: requeue %d after %lld us, want %lld", tc->name, res.requeue_after,
		         (long long)res.after_us, (long long)tc->expect_after);
	if (!tc->expect_requeue && res.requeue_after)
		fail_msg("%s: unexpected requeue after %lld", tc->name, (long long)res.after_us);
	if (tc->ran_previously && !tc->still_active) {
		int64_t t;
		const cJSON *st = f.last_update ? f.last_update : cj;
		if (cj_json_time(st, "status.lastSuccessfulTime", &t) != 0 ||
		    t != JUST_AFTER_PRIOR + 10)
			fail_msg("%s: lastSuccessfulTime not the job's completion", tc->name);
	}
	cJSON_Delete(cj);
	fake_free(&f);
}

static void test_sync_cases(void **state)
{
	static const int64_t D = CJ_NEXT_DELTA_US;
	const struct sync_case cases[] = {
	        {.name = "never ran, not valid schedule, A",
	         .policy = "Allow",
	         .schedule = "obvious error schedule",
	         .deadline = NO_DEAD,
	         .now = JUST_BEFORE_HOUR,
	         .expect_warnings = 1},
	        {.name = "never ran, not valid time zone",
	         .policy = "Allow",
	         .schedule = "0 * * * ?",
	         .tz = "bad timezone",
	         .deadline = NO_DEAD,
	         .now = JUST_BEFORE_HOUR,
	         .expect_warnings = 1},
	        {.name = "never ran, not time, A",
	         .policy = "Allow",
	         .schedule = "0 * * * ?",
	         .deadline = NO_DEAD,
	         .now = JUST_BEFORE_HOUR,
	         .expect_requeue = true,
	         .expect_after = MIN + D},
	        {.name = "never ran, is time, A",
	         .policy = "Allow",
	         .schedule = "0 * * * ?",
	         .deadline = NO_DEAD,
	         .now = JUST_AFTER_HOUR,
	         .expect_create = true,
	         .expect_active = 1,
	         .expect_update = true,
	         .expect_requeue = true,
	         .expect_after = HOUR - MIN + D},
	        {.name = "never ran, is time, F",
	         .policy = "Forbid",
	         .schedule = "0 * * * ?",
	         .deadline = NO_DEAD,
	         .now = JUST_AFTER_HOUR,
	         .expect_create = true,
	         .expect_active = 1,
	         .expect_update = true,
	         .expect_requeue = true,
	         .expect_after = HOUR - MIN + D},
	        {.name = "never ran, is time, suspended",
	         .policy = "Allow",
	         .schedule = "0 * * * ?",
	         .suspend = true,
	         .deadline = NO_DEAD,
	         .now = JUST_AFTER_HOUR},
	        {.name = "never ran, is time, past deadline",
	         .policy = "Allow",
	         .schedule = "0 * * * ?",
	         .deadline = SHORT_DEAD,
	         .now = JUST_AFTER_HOUR + 60 * (SHORT_DEAD + 1),
	         .expect_requeue = true,
	         .expect_after = HOUR - MIN - MIN * (SHORT_DEAD + 1) + D},
	        {.name = "prev ran but done, is time, A",
	         .policy = "Allow",
	         .schedule = "0 * * * ?",
	         .deadline = NO_DEAD,
	         .ran_previously = true,
	         .job_in_active = true,
	         .now = JUST_AFTER_HOUR,
	         .expect_create = true,
	         .expect_active = 1,
	         .expect_update = true,
	         .expect_completed = true,
	         .expect_requeue = true,
	         .expect_after = HOUR - MIN + D},
	        {.name = "prev ran but done, is time, create job failed, A",
	         .policy = "Allow",
	         .schedule = "0 * * * ?",
	         .deadline = NO_DEAD,
	         .ran_previously = true,
	         .job_in_active = true,
	         .now = JUST_AFTER_HOUR,
	         .create_err = -EEXIST,
	         .expect_update = true,
	         .expect_active = 1,
	         .expect_completed = true,
	         .expect_requeue = true,
	         .expect_after = HOUR - MIN + D},
	        {.name = "prev ran but done, is time, job not present in CJ active status, create "
	                 "job "
	                 "failed, A",
	         .policy = "Allow",
	         .schedule = "0 * * * ?",
	         .deadline = NO_DEAD,
	         .ran_previously = true,
	         .now = JUST_AFTER_HOUR,
	         .create_err = -EEXIST,
	         .expect_update = true,
	         .expect_active = 1,
	         .expect_requeue = true,
	         .expect_after = HOUR - MIN + D},
	        {.name = "still active, is time, A",
	         .policy = "Allow",
	         .schedule = "0 * * * ?",
	         .deadline = NO_DEAD,
	         .ran_previously = true,
	         .still_active = true,
	         .job_in_active = true,
	         .now = JUST_AFTER_HOUR,
	         .expect_create = true,
	         .expect_active = 2,
	         .expect_update = true,
	         .expect_requeue = true,
	         .expect_after = HOUR - MIN + D},
	        {.name = "still active, is time, F",
	         .policy = "Forbid",
	         .schedule = "0 * * * ?",
	         .deadline = NO_DEAD,
	         .ran_previously = true,
	         .still_active = true,
	         .job_in_active = true,
	         .now = JUST_AFTER_HOUR,
	         .expect_active = 1,
	         .expect_requeue = true,
	         .expect_after = HOUR - MIN + D},
	        {.name = "still active, is time, R",
	         .policy = "Replace",
	         .schedule = "0 * * * ?",
	         .deadline = NO_DEAD,
	         .ran_previously = true,
	         .still_active = true,
	         .job_in_active = true,
	         .now = JUST_AFTER_HOUR,
	         .expect_create = true,
	         .expect_delete = true,
	         .expect_active = 1,
	         .expect_update = true,
	         .expect_requeue = true,
	         .expect_after = HOUR - MIN + D},
	        {.name = "prev ran but done, long overdue, not past deadline, A",
	         .policy = "Allow",
	         .schedule = "0 * * * ?",
	         .deadline = LONG_DEAD,
	         .ran_previously = true,
	         .job_in_active = true,
	         .now = WEEK_AFTER_HOUR,
	         .expect_create = true,
	         .expect_active = 1,
	         .expect_warnings = 1,
	         .expect_update = true,
	         .expect_completed = true,
	         .expect_requeue = true,
	         .expect_after = HOUR + D},
	        {.name = "prev ran but done, long overdue, no deadline, A",
	         .policy = "Allow",
	         .schedule = "0 * * * ?",
	         .deadline = NO_DEAD,
	         .ran_previously = true,
	         .job_in_active = true,
	         .now = WEEK_AFTER_HOUR,
	         .expect_create = true,
	         .expect_active = 1,
	         .expect_warnings = 1,
	         .expect_update = true,
	         .expect_completed = true,
	         .expect_requeue = true,
	         .expect_after = HOUR + D},
	        {.name = "prev ran but done, long overdue, past medium deadline, A",
	         .policy = "Allow",
	         .schedule = "0 * * * ?",
	         .deadline = MEDIUM_DEAD,
	         .ran_previously = true,
	         .job_in_active = true,
	         .now = WEEK_AFTER_HOUR,
	         .expect_create = true,
	         .expect_active = 1,
	         .expect_update = true,
	         .expect_completed = true,
	         .expect_requeue = true,
	         .expect_after = HOUR + D},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_sync_case(&cases[i]);
}

/* ---- utils_test.go -------------------------------------------------------------------------- */
static void test_most_recent(void **state)
{
	static const struct {
		const char *name, *schedule;
		int64_t creation, last, deadline; /* last 0: none; deadline NO_DEAD: none */
		bool include;
		int64_t now, want_earliest, want_recent; /* want_recent 0: nil */
		enum cj_missed missed;
		bool err;
	} c[] = {
	        {"now before next schedule", "0 * * * *", TOP_OF_THE_HOUR, 0, NO_DEAD, false,
	         TOP_OF_THE_HOUR + 30, TOP_OF_THE_HOUR, 0, CJ_NONE_MISSED, false},
	        {"now just after next schedule", "0 * * * *", TOP_OF_THE_HOUR, 0, NO_DEAD, false,
	         TOP_OF_THE_HOUR + 61 * 60, TOP_OF_THE_HOUR, TOP_OF_THE_HOUR + 3600, CJ_NONE_MISSED,
	         false},
	        {"missed 5 schedules", "0 * * * *", TOP_OF_THE_HOUR + 10, 0, NO_DEAD, false,
	         TOP_OF_THE_HOUR + 301 * 60, TOP_OF_THE_HOUR + 10, TOP_OF_THE_HOUR + 300 * 60,
	         CJ_FEW_MISSED, false},
	        {"complex schedule", "30 6-16/4 * * 1-5", TOP_OF_THE_HOUR, TOP_OF_THE_HOUR + 1800,
	         NO_DEAD, false, TOP_OF_THE_HOUR + 86400 + 31 * 60, TOP_OF_THE_HOUR + 1800,
	         TOP_OF_THE_HOUR + 86400 + 30 * 60, CJ_FEW_MISSED, false},
	        {"another complex schedule", "30 10,11,12 * * 1-5", TOP_OF_THE_HOUR,
	         TOP_OF_THE_HOUR + 1800, NO_DEAD, false, TOP_OF_THE_HOUR + 30 * 3600 + 1800,
	         TOP_OF_THE_HOUR + 1800, 0, CJ_FEW_MISSED, false},
	        {"complex schedule with longer diff between executions", "30 6-16/4 * * 1-5",
	         TOP_OF_THE_HOUR, TOP_OF_THE_HOUR + 1800, NO_DEAD, false,
	         TOP_OF_THE_HOUR + 96 * 3600 + 31 * 60, TOP_OF_THE_HOUR + 1800,
	         TOP_OF_THE_HOUR + 96 * 3600 + 30 * 60, CJ_FEW_MISSED, false},
	        {"complex schedule with shorter diff between executions", "30 6-16/4 * * 1-5",
	         TOP_OF_THE_HOUR, 0, NO_DEAD, false, TOP_OF_THE_HOUR + 86400 + 31 * 60,
	         TOP_OF_THE_HOUR, TOP_OF_THE_HOUR + 86400 + 30 * 60, CJ_FEW_MISSED, false},
	        {"@every schedule", "@every 1h", TOP_OF_THE_HOUR - 59 * 60, TOP_OF_THE_HOUR + 60,
	         10, false, TOP_OF_THE_HOUR + 7 * 86400, TOP_OF_THE_HOUR + 60,
	         TOP_OF_THE_HOUR + 6 * 86400 + 23 * 3600 + 60, CJ_MANY_MISSED, false},
	        {"rogue cronjob", "59 23 31 2 *", TOP_OF_THE_HOUR + 10, 0, NO_DEAD, false,
	         TOP_OF_THE_HOUR + 3600, 0, 0, CJ_NONE_MISSED, true},
	        {"earliestTime being CreationTimestamp and LastScheduleTime", "0 * * * *",
	         TOP_OF_THE_HOUR, TOP_OF_THE_HOUR, NO_DEAD, false, TOP_OF_THE_HOUR + 30,
	         TOP_OF_THE_HOUR, 0, CJ_NONE_MISSED, false},
	        {"earliestTime being LastScheduleTime", "*/5 * * * *", TOP_OF_THE_HOUR,
	         TOP_OF_THE_HOUR + 1800, NO_DEAD, false, TOP_OF_THE_HOUR + 31 * 60,
	         TOP_OF_THE_HOUR + 1800, 0, CJ_NONE_MISSED, false},
	        {"earliestTime being LastScheduleTime (within StartingDeadlineSeconds)",
	         "*/5 * * * *", TOP_OF_THE_HOUR, TOP_OF_THE_HOUR + 1800, 60, false,
	         TOP_OF_THE_HOUR + 31 * 60, TOP_OF_THE_HOUR + 1800, 0, CJ_NONE_MISSED, false},
	        {"earliestTime being LastScheduleTime (outside StartingDeadlineSeconds)",
	         "*/5 * * * *", TOP_OF_THE_HOUR, TOP_OF_THE_HOUR + 1800, 60, true,
	         TOP_OF_THE_HOUR + 32 * 60, TOP_OF_THE_HOUR + 31 * 60, 0, CJ_NONE_MISSED, false},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct cj_sched s;
		struct cj_times tm = {.creation = c[i].creation,
		                      .has_last = c[i].last != 0,
		                      .last_schedule = c[i].last,
		                      .has_deadline = c[i].deadline != NO_DEAD,
		                      .deadline_s = c[i].deadline};
		int64_t earliest = 0, recent = 0;
		enum cj_missed missed;
		bool has;
		char err[128];
		int r;

		assert_int_equal(cj_sched_parse(c[i].schedule, &s, err, sizeof(err)), 0);
		r = cj_most_recent(&s, &tm, c[i].now * SEC, c[i].include, &earliest, &has, &recent,
		                   &missed);
		if (c[i].err) {
			if (r == 0)
				fail_msg("%s: no error", c[i].name);
			continue;
		}
		if (r != 0 || earliest != c[i].want_earliest * SEC ||
		    has != (c[i].want_recent != 0) || (has && recent != c[i].want_recent) ||
		    missed != c[i].missed)
			fail_msg("%s: r %d earliest %lld has %d recent %lld missed %d", c[i].name,
			         r, (long long)earliest, has, (long long)recent, missed);
	}
}

static void test_next_duration(void **state)
{
	static const struct {
		const char *schedule;
		int64_t last, now, want;
	} c[] = {
	        {"30 6-16/4 * * 1-5", TOP_OF_THE_HOUR + 1800, TOP_OF_THE_HOUR + 86400 + 31 * 60,
	         3 * HOUR + 59 * MIN},
	        {"30 10,11,12 * * 1-5", TOP_OF_THE_HOUR + 1800, TOP_OF_THE_HOUR + 30 * 3600 + 1800,
	         66 * HOUR},
	        {"0 12 * * 4", TOP_OF_THE_HOUR + 7200, TOP_OF_THE_HOUR + 19 * 86400 + 3600 + 1800,
	         48 * HOUR + 30 * MIN},
	        {"0 12 * * 5", 0, TOP_OF_THE_HOUR + 6 * 3600, 20 * HOUR},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct cj_sched s;
		struct cj_times tm = {.creation = TOP_OF_THE_HOUR,
		                      .has_last = c[i].last != 0,
		                      .last_schedule = c[i].last};
		char err[128];
		assert_int_equal(cj_sched_parse(c[i].schedule, &s, err, sizeof(err)), 0);
		assert_int_equal(cj_next_schedule_duration(&s, &tm, c[i].now * SEC),
		                 c[i].want + CJ_NEXT_DELTA_US);
	}
}

static void test_job_from_template(void **state)
{
	static const struct {
		const char *tz, *want;
	} c[] = {
	        {"UTC", "2016-05-19T10:00:00Z"},
	        {NULL, "2016-05-19T10:00:00Z"},
	        {"Europe/Rome", "2016-05-19T12:00:00+02:00"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		cJSON *cj = cronjob("* * * * ?", "Allow", NO_DEAD, TOP_OF_THE_HOUR), *job = NULL;
		if (c[i].tz)
			cJSON_AddStringToObject(cJSON_GetObjectItem(cj, "spec"), "timeZone",
			                        c[i].tz);
		assert_int_equal(cj_job_from_template(cj, TOP_OF_THE_HOUR, &job), 0);
		assert_string_equal(cj_json_str(job, "metadata.name"), "mycronjob-24394200");
		const cJSON *ann = cJSON_GetObjectItem(cj_json_at(job, "metadata.annotations"),
		                                       CJ_SCHEDULED_ANNOTATION);
		assert_true(cJSON_IsString(ann));
		assert_string_equal(ann->valuestring, c[i].want);
		assert_string_equal(cj_json_str(job, "metadata.annotations.x"), "y");
		assert_int_equal(cJSON_GetArraySize(cj_json_at(job, "metadata.annotations")), 2);
		assert_string_equal(cj_json_str(job, "metadata.labels.a"), "b");
		const cJSON *ref = cj_controller_ref(job);
		assert_non_null(ref);
		assert_string_equal(cj_json_str(ref, "apiVersion"), "batch/v1");
		assert_string_equal(cj_json_str(ref, "kind"), "CronJob");
		assert_string_equal(cj_json_str(ref, "name"), "mycronjob");
		assert_string_equal(cj_json_str(ref, "uid"), "1a2b3c");
		assert_true(cJSON_IsTrue(cJSON_GetObjectItem(ref, "blockOwnerDeletion")));
		assert_int_equal(
		        cJSON_GetObjectItem(cj_json_at(job, "spec"), "activeDeadlineSeconds")
		                ->valueint,
		        1);
		assert_string_equal(cj_json_str(job, "spec.template.metadata.labels.foo"), "bar");
		cJSON_Delete(job);
		cJSON_Delete(cj);
	}
}

/* TestControllerV2CleanupFinishedJobs / TestByJobStartTime: the oldest by start time go first,
 * unstarted ones last, equal starts by name. */
static void test_cleanup(void **state)
{
	cJSON *cj = cronjob("0 0 1 1 *", "Allow", NO_DEAD, TOP_OF_THE_HOUR);
	struct cj_job jobs[5] = {0};
	struct fake f = {0};
	struct cj_result res;
	static const struct {
		const char *name;
		bool finished, ok, started;
		int64_t start;
	} js[] = {
	        {"c", true, true, true, 100}, {"a", true, true, true, 100},
	        {"d", true, true, false, 0},  {"b", true, true, true, 50},
	        {"f", true, false, true, 10},
	};
	(void)state;
	cJSON_AddNumberToObject(cJSON_GetObjectItem(cj, "spec"), "successfulJobsHistoryLimit", 1);
	cJSON_AddNumberToObject(cJSON_GetObjectItem(cj, "spec"), "failedJobsHistoryLimit", 1);
	for (size_t i = 0; i < 5; i++) {
		snprintf(jobs[i].name, sizeof(jobs[i].name), "%s", js[i].name);
		snprintf(jobs[i].uid, sizeof(jobs[i].uid), "uid-%s", js[i].name);
		snprintf(jobs[i].ns, sizeof(jobs[i].ns), "snazzycats");
		jobs[i].finished = js[i].finished;
		snprintf(jobs[i].finished_type, sizeof(jobs[i].finished_type), "%s",
		         js[i].ok ? "Complete" : "Failed");
		jobs[i].succeeded = js[i].ok;
		jobs[i].has_start = js[i].started;
		jobs[i].start = TOP_OF_THE_HOUR + js[i].start;
	}
	struct cj_ops ops = ops_of(&f);
	cj_sync(&ops, cj, jobs, 5, (TOP_OF_THE_HOUR + 3600) * SEC, &res);
	/* 4 successful, limit 1: b (50), then a and c (100, by name); d (unstarted) stays */
	assert_int_equal(f.deletes, 3);
	assert_string_equal(f.deleted[0], "b");
	assert_string_equal(f.deleted[1], "a");
	assert_string_equal(f.deleted[2], "c");
	assert_int_equal(f.updates, 1);
	cJSON_Delete(cj);
	fake_free(&f);
}

/* TestControllerV2JobAlreadyExistsButDifferentOwner: AlreadyExists for a Job another controller
 * owns: nothing added, no requeue, no error. */
static void test_already_exists_other_owner(void **state)
{
	cJSON *cj = cronjob("0 * * * ?", "Allow", NO_DEAD, JUST_BEFORE_HOUR), *job = NULL;
	struct fake f = {0};
	struct cj_result res;
	(void)state;
	assert_int_equal(cj_job_from_template(cj, TOP_OF_THE_HOUR, &job), 0);
	cJSON *ref = cJSON_GetArrayItem(cj_json_at(job, "metadata.ownerReferences"), 0);
	cJSON_ReplaceItemInObject(ref, "uid", cJSON_CreateString("someone-else"));
	cJSON_AddStringToObject(cJSON_GetObjectItem(job, "metadata"), "uid", "1234");
	f.job = job;
	f.create_err = -EEXIST;
	struct cj_ops ops = ops_of(&f);
	cj_sync(&ops, cj, NULL, 0, JUST_AFTER_HOUR * SEC, &res);
	assert_int_equal(res.err, 0);
	assert_false(res.requeue_after);
	assert_int_equal(f.updates, 0);
	assert_int_equal(f.creates, 0);
	cJSON_Delete(cj);
	fake_free(&f);
}

/* An active Job the cache does not have and the apiserver does not know: MissingJob. */
static void test_missing_job(void **state)
{
	cJSON *cj = cronjob("0 * * * ?", "Forbid", NO_DEAD, JUST_BEFORE_HOUR);
	struct fake f = {0};
	struct cj_result res;
	(void)state;
	add_active(cj, "gone", "uid-gone");
	set_status_time(cj, "lastScheduleTime", TOP_OF_THE_HOUR);
	struct cj_ops ops = ops_of(&f);
	cj_sync(&ops, cj, NULL, 0, (TOP_OF_THE_HOUR + 120) * SEC, &res);
	assert_non_null(strstr(f.reasons, "MissingJob"));
	assert_int_equal(f.updates, 1);
	assert_int_equal(n_active(f.last_update), 0);
	assert_true(res.requeue_after);
	/* the same with the GET failing otherwise: an error, the status still written */
	struct fake g = {0};
	g.get_err = -ETIMEDOUT;
	cJSON_Delete(cj);
	cj = cronjob("0 * * * ?", "Forbid", NO_DEAD, JUST_BEFORE_HOUR);
	add_active(cj, "gone", "uid-gone");
	ops = ops_of(&g);
	cj_sync(&ops, cj, NULL, 0, (TOP_OF_THE_HOUR + 120) * SEC, &res);
	assert_int_equal(res.err, -ETIMEDOUT);
	assert_int_equal(g.updates, 0);
	cJSON_Delete(cj);
	fake_free(&f);
	fake_free(&g);
}

/* Replace with the active Job's GET failing: FailedGet, the error, nothing created. */
static void test_replace_get_fails(void **state)
{
	cJSON *cj = cronjob("0 * * * ?", "Replace", NO_DEAD, JUST_BEFORE_PRIOR);
	struct fake f = {0};
	struct cj_job job = {.name = "mycronjob-24394141", .ns = "snazzycats", .uid = "1234"};
	struct cj_result res;
	(void)state;
	set_status_time(cj, "lastScheduleTime", JUST_AFTER_PRIOR);
	add_active(cj, job.name, job.uid);
	f.get_err = -ETIMEDOUT;
	struct cj_ops ops = ops_of(&f);
	cj_sync(&ops, cj, &job, 1, JUST_AFTER_HOUR * SEC, &res);
	assert_int_equal(res.err, -ETIMEDOUT);
	assert_non_null(strstr(f.reasons, "FailedGet"));
	assert_int_equal(f.creates, 0);
	assert_int_equal(f.deletes, 0);
	cJSON_Delete(cj);
	fake_free(&f);
}

/* updateCronJob: a changed schedule queues for its next activation; an unchanged one now. */
static void test_update_decision(void **state)
{
	cJSON *old = cronjob("0 0 1 1 *", "Allow", NO_DEAD, TOP_OF_THE_HOUR);
	cJSON *cur = cronjob("*/5 * * * *", "Allow", NO_DEAD, TOP_OF_THE_HOUR);
	int64_t after = 0;
	char err[128];
	(void)state;
	assert_int_equal(cj_update_decision(old, cur, (TOP_OF_THE_HOUR + 90) * SEC, &after, err,
	                                    sizeof(err)),
	                 1);
	assert_int_equal(after, 210 * SEC + CJ_NEXT_DELTA_US);
	assert_int_equal(
	        cj_update_decision(old, old, TOP_OF_THE_HOUR * SEC, &after, err, sizeof(err)), 2);
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(cur, "spec"), "schedule",
	                          cJSON_CreateString("bad"));
	assert_int_equal(
	        cj_update_decision(old, cur, TOP_OF_THE_HOUR * SEC, &after, err, sizeof(err)), 0);
	cJSON_Delete(old);
	cJSON_Delete(cur);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_sync_cases),
	        cmocka_unit_test(test_most_recent),
	        cmocka_unit_test(test_next_duration),
	        cmocka_unit_test(test_job_from_template),
	        cmocka_unit_test(test_cleanup),
	        cmocka_unit_test(test_already_exists_other_owner),
	        cmocka_unit_test(test_missing_job),
	        cmocka_unit_test(test_update_decision),
	        cmocka_unit_test(test_replace_get_fails),
	};
	setenv("TZ", "UTC", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
