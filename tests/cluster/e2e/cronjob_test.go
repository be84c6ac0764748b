package e2e

// kcmd's CronJob controller (cronjob-controller, docs/cronjob.md) against the real cluster, with
// upstream kube-controller-manager's cronjob controller not running. Ported from upstream v1.37:
// test/integration/cronjob/cronjob_test.go (TestCronJobLaunchesPodAndCleansUp, which needs kcm's
// job controller beside kcmd: it runs here with --controllers=job-controller) and the
// [sig-apps] CronJob e2e scenarios of test/e2e/apps/cronjob.go that need no container runtime.
//
// Without kubelets no pod ever runs, so a Job finishes only when a test says so: the Jobs of
// every scenario but the integration one carry spec.managedBy (no job controller touches them)
// and the test writes their terminal status itself, where upstream waits for a pod to exit.
// Upstream's history-limit scenarios wait for three scheduled runs to finish; here the test
// creates the finished Jobs the CronJob controls, which the controller cleans up the same way.
//
// Schedules are "*/1 * * * ?" as upstream's, so each scenario waits for minute boundaries; they
// run concurrently as subtests of TestCronJob_Scenarios on one shared kcmd (about two to three
// minutes together).

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

const cjManagedBy = "kcmd.test/nobody"

var (
	cjKcmdOnce sync.Once
	cjKcmd     *kcmdProc
	cjPort     int // the shared kcmd's /metrics
)

// cjStart runs one kcmd with only the CronJob controller for the rest of the test binary. It
// acts as kube-system/cronjob-controller (--use-service-account-credentials), so every request
// must be allowed by upstream's bootstrap role system:controller:cronjob-controller.
func cjStart(t *testing.T, ns string) {
	t.Helper()
	cjKcmdOnce.Do(func() {
		cjPort = gcxFreePort(t)
		cjKcmd = startKcmdShared(t, "--controllers=cronjob-controller", "--secure-port="+strconv.Itoa(cjPort),
			"--bind-address=127.0.0.1", "--authorization-always-allow-paths=/healthz,/metrics", "--leader-elect=false",
			"--use-service-account-credentials", "--concurrent-cron-job-syncs=2", "--v=4")
	})
	Eventually(t, 60*time.Second, "the CronJob controller's workers", func() (bool, string) {
		return cjKcmd.Logged("cronjob-controller worker ready"), "not yet"
	})
	if !cjKcmd.Logged("using service account kube-system/cronjob-controller") {
		t.Fatal("the CronJob controller does not act as its service account")
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, l := range cjKcmd.Logs() {
			if strings.Contains(l, ns) || strings.HasPrefix(l, "E") || strings.HasPrefix(l, "W") {
				t.Logf("kcmd: %s", l)
			}
		}
	})
}

// cjNew is upstream's newTestCronJob: a CronJob whose Jobs run one pod that never starts here.
func cjNew(name, schedule string, policy batchv1.ConcurrencyPolicy, succ, failed *int32, managed bool) *batchv1.CronJob {
	zero := int64(0)
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.CronJobSpec{
			Schedule:                   schedule,
			ConcurrencyPolicy:          policy,
			SuccessfulJobsHistoryLimit: succ,
			FailedJobsHistoryLimit:     failed,
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"cronjob": name}},
				Spec: batchv1.JobSpec{
					Parallelism:  ptr.To[int32](1),
					Completions:  ptr.To[int32](1),
					BackoffLimit: ptr.To[int32](0),
					Template: corev1.PodTemplateSpec{
						Spec: corev1.PodSpec{
							RestartPolicy:                 corev1.RestartPolicyOnFailure,
							TerminationGracePeriodSeconds: &zero,
							Containers:                    []corev1.Container{{Name: "c", Image: "busybox"}},
						},
					},
				},
			},
		},
	}
	if managed {
		cj.Spec.JobTemplate.Spec.ManagedBy = ptr.To(cjManagedBy)
	}
	return cj
}

func cjCreate(t *testing.T, ns string, cj *batchv1.CronJob) *batchv1.CronJob {
	t.Helper()
	out, err := env.Client.BatchV1().CronJobs(ns).Create(context.Background(), cj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating cronjob %s: %v", cj.Name, err)
	}
	return out
}

func cjGet(t *testing.T, ns, name string) *batchv1.CronJob {
	t.Helper()
	cj, err := env.Client.BatchV1().CronJobs(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting cronjob %s: %v", name, err)
	}
	return cj
}

func cjJobs(t *testing.T, ns string) []batchv1.Job {
	t.Helper()
	l, err := env.Client.BatchV1().Jobs(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing jobs: %v", err)
	}
	return l.Items
}

func cjFinished(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// cjWaitActive is upstream's waitForActiveJobs: at least n references in status.active.
func cjWaitActive(t *testing.T, ns, name string, n int, timeout time.Duration) *batchv1.CronJob {
	t.Helper()
	var cj *batchv1.CronJob
	Eventually(t, timeout, fmt.Sprintf("%d active jobs of %s", n, name), func() (bool, string) {
		cj = cjGet(t, ns, name)
		return len(cj.Status.Active) >= n, fmt.Sprintf("%d active", len(cj.Status.Active))
	})
	return cj
}

// cjEvents lists the Events about the CronJob by reason.
func cjEvents(t *testing.T, ns, name string) map[string][]corev1.Event {
	t.Helper()
	l, err := env.Client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{
		FieldSelector: "involvedObject.kind=CronJob,involvedObject.name=" + name})
	if err != nil {
		t.Fatalf("listing events: %v", err)
	}
	out := map[string][]corev1.Event{}
	for _, e := range l.Items {
		out[e.Reason] = append(out[e.Reason], e)
	}
	return out
}

func cjWaitEvent(t *testing.T, ns, name, reason, typ string, timeout time.Duration) corev1.Event {
	t.Helper()
	var ev corev1.Event
	Eventually(t, timeout, "event "+reason+" on "+name, func() (bool, string) {
		evs := cjEvents(t, ns, name)[reason]
		if len(evs) == 0 {
			return false, "none"
		}
		ev = evs[0]
		return true, ""
	})
	if ev.Type != typ || ev.Source.Component != "cronjob-controller" {
		t.Errorf("event %s: type %s from %q, want %s from cronjob-controller", reason, ev.Type, ev.Source.Component, typ)
	}
	return ev
}

// cjFinish writes a terminal status on a Job no controller manages (spec.managedBy), as the job
// controller would once its pod exited.
func cjFinish(t *testing.T, j *batchv1.Job, succeeded bool, start, end time.Time) {
	t.Helper()
	now := metav1.NewTime(end)
	j.Status.StartTime = ptr.To(metav1.NewTime(start))
	if succeeded {
		j.Status.Succeeded = 1
		j.Status.CompletionTime = &now
		j.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now}}
	} else {
		j.Status.Failed = 1
		j.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", LastTransitionTime: now, LastProbeTime: now},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", LastTransitionTime: now, LastProbeTime: now}}
	}
	if _, err := env.Client.BatchV1().Jobs(j.Namespace).UpdateStatus(context.Background(), j, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("finishing job %s: %v", j.Name, err)
	}
}

// cjLaunchesPodAndCleansUp is upstream's integration test: a CronJob runs a Job (kcmd) whose pod
// kcm's job controller creates; the Job has one owner, the CronJob, the pod one, the Job. It runs
// beside the other scenarios: their Jobs carry a managedBy that kcm's job controller leaves alone.
func cjLaunchesPodAndCleansUp(t *testing.T) {
	ns := Namespace(t)
	cjStart(t, ns)
	kcm, err := cjLaunchKCM("job-controller")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kcm.cmd.Process.Kill(); <-kcm.done })
	cj := cjNew("foo", "* * * * ?", "", ptr.To[int32](0), nil, false)
	cj.Spec.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
	cjCreate(t, ns, cj)
	Eventually(t, 130*time.Second, "a job owned by the cronjob and its pod owned by the job", func() (bool, string) {
		jobs := cjJobs(t, ns)
		if len(jobs) == 0 {
			return false, "no job"
		}
		for _, j := range jobs {
			if len(j.OwnerReferences) != 1 || j.OwnerReferences[0].Kind != "CronJob" {
				t.Fatalf("job %s owner references %v, want one CronJob", j.Name, j.OwnerReferences)
			}
		}
		pods, err := env.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		if len(pods.Items) != 1 {
			return false, fmt.Sprintf("%d pods", len(pods.Items))
		}
		if refs := pods.Items[0].OwnerReferences; len(refs) != 1 || refs[0].Kind != "Job" {
			t.Fatalf("pod owner references %v, want one Job", refs)
		}
		return true, ""
	})
	bg := metav1.DeletePropagationBackground
	if err := env.Client.BatchV1().CronJobs(ns).Delete(context.Background(), "foo", metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil {
		t.Errorf("deleting cronjob: %v", err)
	}
}

// cjScheduleMultipleJobsConcurrently: AllowConcurrent runs a new Job every minute while
// the previous ones still run.
func cjScheduleMultipleJobsConcurrently(t *testing.T) {
	ns := Namespace(t)
	cjStart(t, ns)
	cjCreate(t, ns, cjNew("concurrent", "*/1 * * * ?", batchv1.AllowConcurrent, nil, nil, true))
	cj := cjWaitActive(t, ns, "concurrent", 2, 190*time.Second)
	active := 0
	for _, j := range cjJobs(t, ns) {
		if !cjFinished(&j) {
			active++
		}
	}
	if active < 2 {
		t.Errorf("%d unfinished jobs, want at least 2", active)
	}
	if cj.Status.LastScheduleTime == nil {
		t.Error("status.lastScheduleTime not set")
	}
	if n := len(cjEvents(t, ns, "concurrent")["SuccessfulCreate"]); n < 1 {
		t.Errorf("%d SuccessfulCreate events", n)
	}
}

// cjNotScheduleWhenSuspended: a suspended CronJob creates nothing across a minute
// boundary (upstream waits for two active jobs and expects the wait to time out).
func cjNotScheduleWhenSuspended(t *testing.T) {
	ns := Namespace(t)
	cjStart(t, ns)
	cj := cjNew("suspended", "*/1 * * * ?", batchv1.AllowConcurrent, nil, nil, true)
	cj.Spec.Suspend = ptr.To(true)
	cjCreate(t, ns, cj)
	time.Sleep(75 * time.Second) // at least one activation passes
	if jobs := cjJobs(t, ns); len(jobs) != 0 {
		t.Errorf("%d jobs created while suspended", len(jobs))
	}
	if got := cjGet(t, ns, "suspended"); len(got.Status.Active) != 0 || got.Status.LastScheduleTime != nil {
		t.Errorf("suspended cronjob status %+v", got.Status)
	}
}

// cjNotScheduleNewJobsWhenForbid: with ForbidConcurrent the running Job blocks the next
// activation (JobAlreadyActive), exactly one Job exists.
func cjNotScheduleNewJobsWhenForbid(t *testing.T) {
	ns := Namespace(t)
	cjStart(t, ns)
	cjCreate(t, ns, cjNew("forbid", "*/1 * * * ?", batchv1.ForbidConcurrent, nil, nil, true))
	cj := cjWaitActive(t, ns, "forbid", 1, 130*time.Second)
	if len(cj.Status.Active) != 1 {
		t.Fatalf("%d active jobs, want 1", len(cj.Status.Active))
	}
	cjWaitEvent(t, ns, "forbid", "JobAlreadyActive", corev1.EventTypeNormal, 80*time.Second)
	if cj = cjGet(t, ns, "forbid"); len(cj.Status.Active) != 1 {
		t.Errorf("%d active jobs after the next activation, want 1", len(cj.Status.Active))
	}
	if jobs := cjJobs(t, ns); len(jobs) != 1 {
		t.Errorf("%d jobs, want 1", len(jobs))
	}
}

// cjReplaceJobsWhenReplace: with ReplaceConcurrent the next activation deletes the
// running Job and starts another.
func cjReplaceJobsWhenReplace(t *testing.T) {
	ns := Namespace(t)
	cjStart(t, ns)
	cjCreate(t, ns, cjNew("replace", "*/1 * * * ?", batchv1.ReplaceConcurrent, nil, nil, true))
	cj := cjWaitActive(t, ns, "replace", 1, 130*time.Second)
	first := cj.Status.Active[0].Name
	Eventually(t, 80*time.Second, "job "+first+" replaced", func() (bool, string) {
		var names []string
		for _, j := range cjJobs(t, ns) {
			if j.DeletionTimestamp == nil {
				names = append(names, j.Name)
			}
		}
		return len(names) == 1 && names[0] != first, fmt.Sprintf("jobs %v", names)
	})
	ev := cjWaitEvent(t, ns, "replace", "SuccessfulDelete", corev1.EventTypeNormal, 10*time.Second)
	if ev.Message != "Deleted job "+first {
		t.Errorf("SuccessfulDelete message %q", ev.Message)
	}
	// The new Job can be seen before the status that lists it is written (one sync creates the
	// Job, then updates the status), so wait for the status rather than read it once.
	Eventually(t, 10*time.Second, "status.active replaced", func() (bool, string) {
		cj = cjGet(t, ns, "replace")
		return len(cj.Status.Active) == 1 && cj.Status.Active[0].Name != first,
			fmt.Sprintf("active %v, want one job other than %s", cj.Status.Active, first)
	})
}

// cjScheduleAfterMoreThan100Missed: a last schedule time 98 days back is over 100
// missed activations: a TooManyMissedTimes warning, and the CronJob still starts a Job. (Upstream
// sets creationTimestamp and status on create, which the apiserver drops; the status is written
// here after the create.)
func cjScheduleAfterMoreThan100Missed(t *testing.T) {
	ns := Namespace(t)
	cjStart(t, ns)
	cjCreate(t, ns, cjNew("missed", "*/1 * * * ?", batchv1.ForbidConcurrent, nil, nil, true))
	Eventually(t, 20*time.Second, "status.lastScheduleTime 98 days back", func() (bool, string) {
		cj := cjGet(t, ns, "missed")
		cj.Status.LastScheduleTime = ptr.To(metav1.NewTime(time.Now().Add(-98 * 24 * time.Hour)))
		_, err := env.Client.BatchV1().CronJobs(ns).UpdateStatus(context.Background(), cj, metav1.UpdateOptions{})
		return err == nil, fmt.Sprint(err)
	})
	cjWaitActive(t, ns, "missed", 1, 130*time.Second)
	cjWaitEvent(t, ns, "missed", "TooManyMissedTimes", corev1.EventTypeWarning, 20*time.Second)
	active := 0
	for _, j := range cjJobs(t, ns) {
		if !cjFinished(&j) {
			active++
		}
	}
	if active == 0 {
		t.Error("no running job")
	}
}

// cjNoUnexpectedWarnings: two runs, one of them finished, and no MissingJob or
// UnexpectedJob events; the finished one is seen (SawCompletedJob, lastSuccessfulTime).
func cjNoUnexpectedWarnings(t *testing.T) {
	ns := Namespace(t)
	cjStart(t, ns)
	cjCreate(t, ns, cjNew("concurrent", "*/1 * * * ?", batchv1.AllowConcurrent, nil, nil, true))
	cjWaitActive(t, ns, "concurrent", 1, 130*time.Second)
	jobs := cjJobs(t, ns)
	done := time.Now().Truncate(time.Second)
	cjFinish(t, &jobs[0], true, done.Add(-time.Second), done)
	Eventually(t, 130*time.Second, "two jobs, one finished and off the active list", func() (bool, string) {
		cj := cjGet(t, ns, "concurrent")
		for _, a := range cj.Status.Active {
			if a.Name == jobs[0].Name {
				return false, "finished job still active"
			}
		}
		return len(cjJobs(t, ns)) >= 2 && cj.Status.LastSuccessfulTime != nil, fmt.Sprintf("%d jobs, status %+v", len(cjJobs(t, ns)), cj.Status)
	})
	if cj := cjGet(t, ns, "concurrent"); !cj.Status.LastSuccessfulTime.Time.Equal(done) {
		t.Errorf("lastSuccessfulTime %v, want %v", cj.Status.LastSuccessfulTime, done)
	}
	ev := cjWaitEvent(t, ns, "concurrent", "SawCompletedJob", corev1.EventTypeNormal, 10*time.Second)
	if want := "Saw completed job: " + jobs[0].Name + ", condition: Complete"; ev.Message != want {
		t.Errorf("SawCompletedJob message %q, want %q", ev.Message, want)
	}
	time.Sleep(3 * time.Second)
	for _, r := range []string{"MissingJob", "UnexpectedJob"} {
		if evs := cjEvents(t, ns, "concurrent")[r]; len(evs) > 0 {
			t.Errorf("unexpected event %s: %s", r, evs[0].Message)
		}
	}
}

// cjScheduledTimestampAnnotation: the Job carries the scheduled time as RFC 3339 (UTC
// without spec.timeZone) and is named after it in minutes since the epoch.
func cjScheduledTimestampAnnotation(t *testing.T) {
	ns := Namespace(t)
	cjStart(t, ns)
	cj := cjCreate(t, ns, cjNew("concurrent", "*/1 * * * ?", batchv1.AllowConcurrent, nil, nil, true))
	cjWaitActive(t, ns, "concurrent", 1, 130*time.Second)
	j := cjJobs(t, ns)[0]
	ts, ok := j.Annotations[batchv1.CronJobScheduledTimestampAnnotation]
	if !ok {
		t.Fatalf("job %s has no %s annotation", j.Name, batchv1.CronJobScheduledTimestampAnnotation)
	}
	at, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		t.Fatalf("annotation %q: %v", ts, err)
	}
	if !strings.HasSuffix(ts, "Z") || at.Second() != 0 {
		t.Errorf("annotation %q: want a whole minute in UTC", ts)
	}
	if want := "concurrent-" + strconv.FormatInt(at.Unix()/60, 10); j.Name != want {
		t.Errorf("job name %s, want %s", j.Name, want)
	}
	ref := metav1.GetControllerOf(&j)
	if ref == nil || ref.UID != cj.UID || ref.Kind != "CronJob" || ref.APIVersion != "batch/v1" || !ptr.Deref(ref.BlockOwnerDeletion, false) {
		t.Errorf("job controller reference %+v", ref)
	}
	if j.Labels["cronjob"] != "concurrent" || ptr.Deref(j.Spec.ManagedBy, "") != cjManagedBy {
		t.Errorf("job labels %v / managedBy %v: not the template's", j.Labels, j.Spec.ManagedBy)
	}
	// upstream's STABLE creation-skew histogram counted the create
	code, _, body := gcxGet(t, cjPort, "/metrics")
	if code != 200 || !strings.Contains(body, "# TYPE cronjob_controller_job_creation_skew_duration_seconds histogram") {
		t.Errorf("/metrics (%d) has no cronjob_controller_job_creation_skew_duration_seconds histogram", code)
	} else if strings.Contains(body, "cronjob_controller_job_creation_skew_duration_seconds_count 0\n") {
		t.Error("cronjob_controller_job_creation_skew_duration_seconds_count is 0 after a Job was created")
	}
	got := cjGet(t, ns, "concurrent")
	if got.Status.LastScheduleTime == nil || !got.Status.LastScheduleTime.Time.Equal(at) {
		t.Errorf("lastScheduleTime %v, want %v", got.Status.LastScheduleTime, at)
	}
	if a := got.Status.Active; len(a) == 0 || a[0].Kind != "Job" || a[0].APIVersion != "batch/v1" || a[0].UID == "" || a[0].Namespace != ns {
		t.Errorf("active reference %+v", a)
	}
}

// cjTimeZone: spec.timeZone moves the schedule into the zone (the wall-clock minute two
// minutes from now in Asia/Kolkata, +05:30: run in any other zone it would not fire today) and
// the annotation carries the zone's offset.
func cjTimeZone(t *testing.T) {
	ns := Namespace(t)
	cjStart(t, ns)
	loc, err := time.LoadLocation("Asia/Kolkata")
	if err != nil {
		t.Skipf("no tz database: %v", err) // exit with a reason; kcmd needs /usr/share/zoneinfo too
	}
	when := time.Now().In(loc).Truncate(time.Minute).Add(2 * time.Minute)
	cj := cjNew("tz", fmt.Sprintf("%d %d * * *", when.Minute(), when.Hour()), batchv1.AllowConcurrent, nil, nil, true)
	cj.Spec.TimeZone = ptr.To("Asia/Kolkata")
	cjCreate(t, ns, cj)
	cjWaitActive(t, ns, "tz", 1, 190*time.Second)
	j := cjJobs(t, ns)[0]
	ts := j.Annotations[batchv1.CronJobScheduledTimestampAnnotation]
	if want := when.Format(time.RFC3339); ts != want {
		t.Errorf("scheduled-timestamp %q, want %q", ts, want)
	}
	if want := "tz-" + strconv.FormatInt(when.Unix()/60, 10); j.Name != want {
		t.Errorf("job name %s, want %s", j.Name, want)
	}
}

// cjRemoveDeletedJobsFromActive: a Job deleted behind the controller's back leaves the
// active list (MissingJob).
func cjRemoveDeletedJobsFromActive(t *testing.T) {
	ns := Namespace(t)
	cjStart(t, ns)
	cjCreate(t, ns, cjNew("forbid", "*/1 * * * ?", batchv1.ForbidConcurrent, nil, nil, true))
	cj := cjWaitActive(t, ns, "forbid", 1, 130*time.Second)
	if len(cj.Status.Active) != 1 {
		t.Fatalf("%d active jobs, want 1", len(cj.Status.Active))
	}
	job := cj.Status.Active[0].Name
	bg := metav1.DeletePropagationBackground
	if err := env.Client.BatchV1().Jobs(ns).Delete(context.Background(), job, metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 30*time.Second, "job "+job+" gone", func() (bool, string) {
		_, err := env.Client.BatchV1().Jobs(ns).Get(context.Background(), job, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	Eventually(t, 30*time.Second, "job "+job+" off the active list", func() (bool, string) {
		for _, a := range cjGet(t, ns, "forbid").Status.Active {
			if a.Name == job {
				return false, "still active"
			}
		}
		return true, ""
	})
	ev := cjWaitEvent(t, ns, "forbid", "MissingJob", corev1.EventTypeNormal, 30*time.Second)
	if ev.Message != "Active job went missing: "+job {
		t.Errorf("MissingJob message %q", ev.Message)
	}
}

// cjHistory: upstream's ensureHistoryLimits over three finished Jobs of one kind the CronJob
// controls: the two that started first are deleted (SuccessfulDelete), the newest stays.
func cjHistory(t *testing.T, succeeded bool) {
	ns := Namespace(t)
	cjStart(t, ns)
	succ, failed := ptr.To[int32](1), ptr.To[int32](0)
	if !succeeded {
		succ, failed = ptr.To[int32](0), ptr.To[int32](1)
	}
	// a schedule that does not fire during the test: the sync is driven by the Jobs' events
	cj := cjCreate(t, ns, cjNew("history", "0 0 1 1 *", batchv1.AllowConcurrent, succ, failed, true))
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	var names []string
	for i := 0; i < 3; i++ {
		j := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("history-%d", i), Namespace: ns,
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cj, batchv1.SchemeGroupVersion.WithKind("CronJob"))}},
			Spec: *cj.Spec.JobTemplate.Spec.DeepCopy(),
		}
		j, err := env.Client.BatchV1().Jobs(ns).Create(context.Background(), j, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// creation order is not start order: history-1 started first, then history-0, history-2
		start := base.Add(time.Duration([]int{2, 1, 3}[i]) * time.Minute)
		cjFinish(t, j, succeeded, start, start.Add(30*time.Second))
		names = append(names, j.Name)
	}
	Eventually(t, 30*time.Second, "the two oldest finished jobs deleted", func() (bool, string) {
		var left []string
		for _, j := range cjJobs(t, ns) {
			if j.DeletionTimestamp == nil {
				left = append(left, j.Name)
			}
		}
		return len(left) == 1 && left[0] == "history-2", fmt.Sprintf("jobs %v", left)
	})
	Eventually(t, 10*time.Second, "two SuccessfulDelete events", func() (bool, string) {
		var msgs []string
		for _, e := range cjEvents(t, ns, "history")["SuccessfulDelete"] {
			msgs = append(msgs, e.Message)
		}
		return len(msgs) == 2, fmt.Sprintf("%v", msgs)
	})
	if succeeded {
		// the newest completion, written by the sync that saw it (after its deletes)
		want := base.Add(3*time.Minute + 30*time.Second)
		Eventually(t, 10*time.Second, "lastSuccessfulTime "+want.String(), func() (bool, string) {
			got := cjGet(t, ns, "history").Status.LastSuccessfulTime
			return got != nil && got.Time.Equal(want), fmt.Sprint(got)
		})
	} else if got := cjGet(t, ns, "history"); got.Status.LastSuccessfulTime != nil {
		t.Errorf("lastSuccessfulTime %v after failed jobs only", got.Status.LastSuccessfulTime)
	}
	// Jobs that were never on the active list: no SawCompletedJob, no MissingJob (each was
	// unfinished for a moment after its create, so an UnexpectedJob is upstream's answer too)
	for _, r := range []string{"SawCompletedJob", "MissingJob"} {
		if evs := cjEvents(t, ns, "history")[r]; len(evs) > 0 {
			t.Errorf("unexpected event %s: %s", r, evs[0].Message)
		}
	}
}

func cjSuccessfulJobsHistoryLimit(t *testing.T) {
	cjHistory(t, true)
}

func cjFailedJobsHistoryLimit(t *testing.T) {
	cjHistory(t, false)
}

// cjScheduleChange: a CronJob whose schedule changes is queued for the new schedule's
// next activation (upstream's updateCronJob), not only at the old one's.
func cjScheduleChange(t *testing.T) {
	ns := Namespace(t)
	cjStart(t, ns)
	cjCreate(t, ns, cjNew("change", "0 0 1 1 *", batchv1.AllowConcurrent, nil, nil, true))
	time.Sleep(2 * time.Second)
	cj := cjGet(t, ns, "change")
	cj.Spec.Schedule = "*/1 * * * *"
	if _, err := env.Client.BatchV1().CronJobs(ns).Update(context.Background(), cj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cjWaitActive(t, ns, "change", 1, 80*time.Second)
}

// cjLaunchKCM runs upstream kube-controller-manager with the given controllers only (the job
// controller for the integration test), as a process of its own.
func cjLaunchKCM(controllers string) (*kcmdProc, error) {
	dir := os.Getenv("KCMD_CLUSTER_BIN")
	if dir == "" {
		return nil, fmt.Errorf("KCMD_CLUSTER_BIN is not set (run through make e2e)")
	}
	cmd := exec.Command(filepath.Join(dir, "kube-controller-manager"),
		"--kubeconfig="+env.Cluster.Kubeconfig, "--leader-elect=false", "--use-service-account-credentials=false",
		"--controllers="+controllers, "--secure-port=0", "--v=2")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p := &kcmdProc{cmd: cmd, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	select {
	case <-p.done:
		return nil, fmt.Errorf("kube-controller-manager exited at start: %v", p.err)
	case <-time.After(500 * time.Millisecond):
	}
	return p, nil
}

// TestCronJob_Scenarios runs the scenarios at once on the shared kcmd (each in its own namespace):
// they spend their time waiting for minute boundaries, and `go test`'s -parallel (GOMAXPROCS)
// would run only two of them at a time as parallel tests.
func TestCronJob_Scenarios(t *testing.T) {
	scenarios := []struct {
		name string
		fn   func(*testing.T)
	}{
		{"LaunchesPodAndCleansUp", cjLaunchesPodAndCleansUp},
		{"ScheduleMultipleJobsConcurrently", cjScheduleMultipleJobsConcurrently},
		{"NotScheduleWhenSuspended", cjNotScheduleWhenSuspended},
		{"NotScheduleNewJobsWhenForbid", cjNotScheduleNewJobsWhenForbid},
		{"ReplaceJobsWhenReplace", cjReplaceJobsWhenReplace},
		{"ScheduleAfterMoreThan100Missed", cjScheduleAfterMoreThan100Missed},
		{"NoUnexpectedWarnings", cjNoUnexpectedWarnings},
		{"ScheduledTimestampAnnotation", cjScheduledTimestampAnnotation},
		{"TimeZone", cjTimeZone},
		{"RemoveDeletedJobsFromActive", cjRemoveDeletedJobsFromActive},
		{"SuccessfulJobsHistoryLimit", cjSuccessfulJobsHistoryLimit},
		{"FailedJobsHistoryLimit", cjFailedJobsHistoryLimit},
		{"ScheduleChange", cjScheduleChange},
	}
	var wg sync.WaitGroup
	for _, sc := range scenarios {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(sc.name, sc.fn)
		}()
	}
	wg.Wait()
}
