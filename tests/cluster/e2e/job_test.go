package e2e

// kcmd's Job controller (workers/job/, docs/job.md) against the real apiserver, ported from
// upstream's test/integration/job/job_test.go (v1.37). Upstream kcm runs no Job controller in
// the test cluster; pods have no kubelet, so the tests move pods to Succeeded or Failed
// themselves, as upstream's integration tests do. docs/job.md lists what is ported and what not.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// TestNonParallelJob: a failed pod is replaced and counted; a succeeded pod completes the Job
// (SuccessCriteriaMet, then Complete), and no finished pod keeps the tracking finalizer.
func TestJob_NonParallelJob(t *testing.T) {
	ns := Namespace(t)
	hjStart(t, ns)
	j := hjCreate(t, hjJob(ns, "simple"))
	validateJobPodsStatus(t, j, podsByStatus{Active: 1, Terminating: ptr.To[int32](0)})

	setJobPodsPhase(t, j, corev1.PodFailed, 1)
	validateJobPodsStatus(t, j, podsByStatus{Active: 1, Failed: 1, Terminating: ptr.To[int32](0)})

	setJobPodsPhase(t, j, corev1.PodSucceeded, 1)
	cur := validateJobCondition(t, j, batchv1.JobComplete, "CompletionsReached")
	validateJobPodsStatus(t, j, podsByStatus{Failed: 1, Succeeded: 1, Terminating: ptr.To[int32](0)})
	scm := hjCond(cur, batchv1.JobSuccessCriteriaMet)
	if scm == nil || scm.Status != corev1.ConditionTrue || scm.Reason != "CompletionsReached" ||
		scm.Message != "Reached expected number of succeeded pods" {
		t.Fatalf("SuccessCriteriaMet condition: %+v", scm)
	}
	if c := hjCond(cur, batchv1.JobComplete); c.Message != "Reached expected number of succeeded pods" {
		t.Fatalf("Complete condition: %+v", c)
	}
	if cur.Status.CompletionTime == nil || cur.Status.StartTime == nil {
		t.Fatalf("startTime %v completionTime %v", cur.Status.StartTime, cur.Status.CompletionTime)
	}
	if cur.Status.UncountedTerminatedPods != nil &&
		len(cur.Status.UncountedTerminatedPods.Succeeded)+len(cur.Status.UncountedTerminatedPods.Failed) > 0 {
		t.Fatalf("uncounted pods left: %+v", cur.Status.UncountedTerminatedPods)
	}
	validateFinishedPodsNoFinalizer(t, j)
	hjEvent(t, j, corev1.EventTypeNormal, "Completed", "Job completed")
	hjEvent(t, j, corev1.EventTypeNormal, "SuccessfulCreate", "")
}

// TestParallelJobWithCompletions: parallelism 4, completions 6 (upstream's second case of
// TestParallelJobWithCompletions at a size the 2-core test box runs quickly).
func TestJob_ParallelJobWithCompletions(t *testing.T) {
	ns := Namespace(t)
	hjStart(t, ns)
	jb := hjJob(ns, "parallel")
	jb.Spec.Parallelism = ptr.To[int32](4)
	jb.Spec.Completions = ptr.To[int32](6)
	j := hjCreate(t, jb)
	validateJobPodsStatus(t, j, podsByStatus{Active: 4, Terminating: ptr.To[int32](0)})

	setJobPodsPhase(t, j, corev1.PodFailed, 2)
	validateJobPodsStatus(t, j, podsByStatus{Active: 4, Failed: 2, Terminating: ptr.To[int32](0)})

	setJobPodsPhase(t, j, corev1.PodSucceeded, 2)
	validateJobPodsStatus(t, j, podsByStatus{Active: 4, Failed: 2, Succeeded: 2, Terminating: ptr.To[int32](0)})

	setJobPodsPhase(t, j, corev1.PodSucceeded, 4)
	validateJobPodsStatus(t, j, podsByStatus{Failed: 2, Succeeded: 6, Terminating: ptr.To[int32](0)})
	validateJobCondition(t, j, batchv1.JobComplete, "CompletionsReached")
	validateFinishedPodsNoFinalizer(t, j)
}

// TestParallelJob: no completions; the Job completes once a pod succeeded and the others
// finished, and never creates more than parallelism pods after the first success.
func TestJob_ParallelJob(t *testing.T) {
	ns := Namespace(t)
	hjStart(t, ns)
	jb := hjJob(ns, "parallel")
	jb.Spec.Parallelism = ptr.To[int32](5)
	j := hjCreate(t, jb)
	validateJobPodsStatus(t, j, podsByStatus{Active: 5, Terminating: ptr.To[int32](0)})

	setJobPodsPhase(t, j, corev1.PodFailed, 2)
	validateJobPodsStatus(t, j, podsByStatus{Active: 5, Failed: 2, Terminating: ptr.To[int32](0)})

	setJobPodsPhase(t, j, corev1.PodSucceeded, 1)
	validateJobPodsStatus(t, j, podsByStatus{Active: 4, Failed: 2, Succeeded: 1, Terminating: ptr.To[int32](0)})

	setJobPodsPhase(t, j, corev1.PodFailed, 1)
	validateJobPodsStatus(t, j, podsByStatus{Active: 3, Failed: 3, Succeeded: 1, Terminating: ptr.To[int32](0)})

	setJobPodsPhase(t, j, corev1.PodSucceeded, 3)
	validateJobPodsStatus(t, j, podsByStatus{Failed: 3, Succeeded: 4, Terminating: ptr.To[int32](0)})
	validateJobCondition(t, j, batchv1.JobComplete, "")
	validateFinishedPodsNoFinalizer(t, j)
}

// TestIndexedJob: indexes, the completedIndexes text, replacement of a failed index, and the
// pods' index annotation, label, hostname and JOB_COMPLETION_INDEX.
func TestJob_IndexedJob(t *testing.T) {
	ns := Namespace(t)
	hjStart(t, ns)
	jb := hjJob(ns, "indexed")
	jb.Spec.Parallelism = ptr.To[int32](3)
	jb.Spec.Completions = ptr.To[int32](4)
	jb.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	j := hjCreate(t, jb)
	validateJobPodsStatus(t, j, podsByStatus{Active: 3, Terminating: ptr.To[int32](0)})
	validateIndexedJobPods(t, j, []int{0, 1, 2}, "")

	for _, p := range hjPods(t, j) {
		ix := p.Annotations[batchv1.JobCompletionIndexAnnotation]
		if p.Labels[batchv1.JobCompletionIndexAnnotation] != ix {
			t.Fatalf("pod %s: label %q annotation %q", p.Name, p.Labels[batchv1.JobCompletionIndexAnnotation], ix)
		}
		if p.Spec.Hostname != "indexed-"+ix || !strings.HasPrefix(p.Name, "indexed-"+ix+"-") {
			t.Fatalf("pod %s: hostname %q", p.Name, p.Spec.Hostname)
		}
		env := p.Spec.Containers[0].Env
		if len(env) != 1 || env[0].Name != "JOB_COMPLETION_INDEX" || env[0].ValueFrom == nil ||
			env[0].ValueFrom.FieldRef == nil ||
			env[0].ValueFrom.FieldRef.FieldPath != "metadata.labels['batch.kubernetes.io/job-completion-index']" {
			t.Fatalf("pod %s: env %+v", p.Name, env)
		}
	}

	setJobPhaseForIndex(t, j, corev1.PodSucceeded, 1)
	validateIndexedJobPods(t, j, []int{0, 2, 3}, "1")
	validateJobPodsStatus(t, j, podsByStatus{Active: 3, Succeeded: 1, Terminating: ptr.To[int32](0)})

	setJobPhaseForIndex(t, j, corev1.PodFailed, 2)
	validateIndexedJobPods(t, j, []int{0, 2, 3}, "1")
	validateJobPodsStatus(t, j, podsByStatus{Active: 3, Failed: 1, Succeeded: 1, Terminating: ptr.To[int32](0)})

	setJobPodsPhase(t, j, corev1.PodSucceeded, 3)
	validateIndexedJobPods(t, j, nil, "0-3")
	validateJobPodsStatus(t, j, podsByStatus{Failed: 1, Succeeded: 4, Terminating: ptr.To[int32](0)})
	validateJobCondition(t, j, batchv1.JobComplete, "")
	validateFinishedPodsNoFinalizer(t, j)
}

// TestFinalizersClearedWhenBackoffLimitExceeded (and the interim FailureTarget condition): a
// failure past backoffLimit fails the Job, deletes its other pods and releases every finalizer.
func TestJob_BackoffLimitExceeded(t *testing.T) {
	ns := Namespace(t)
	hjStart(t, ns)
	jb := hjJob(ns, "backoff")
	jb.Spec.Parallelism = ptr.To[int32](3)
	jb.Spec.Completions = ptr.To[int32](3)
	jb.Spec.BackoffLimit = ptr.To[int32](0)
	j := hjCreate(t, jb)
	validateJobPodsStatus(t, j, podsByStatus{Active: 3, Terminating: ptr.To[int32](0)})

	setJobPodsPhase(t, j, corev1.PodFailed, 1)
	cur := validateJobCondition(t, j, batchv1.JobFailed, "BackoffLimitExceeded")
	ft := hjCond(cur, batchv1.JobFailureTarget)
	if ft == nil || ft.Status != corev1.ConditionTrue || ft.Reason != "BackoffLimitExceeded" ||
		ft.Message != "Job has reached the specified backoff limit" {
		t.Fatalf("FailureTarget: %+v", ft)
	}
	if c := hjCond(cur, batchv1.JobFailed); c.Message != "Job has reached the specified backoff limit" {
		t.Fatalf("Failed: %+v", c)
	}
	// the two deleted pods count as failed (isPodFailed: terminating, not succeeded)
	validateJobPodsStatus(t, j, podsByStatus{Failed: 3, Terminating: ptr.To[int32](0)})
	Eventually(t, hjWait, "no pod keeps the finalizer", func() (bool, string) {
		for _, p := range hjPods(t, j) {
			if hjHasFinalizer(&p) {
				return false, p.Name
			}
		}
		return true, ""
	})
	hjEvent(t, j, corev1.EventTypeWarning, "BackoffLimitExceeded", "Job has reached the specified backoff limit")
}

// TestSuspendJob: created suspended, no pods and Suspended=True; resumed, pods and
// Suspended=False (JobResumed); suspended again, its pods are deleted.
func TestJob_SuspendJob(t *testing.T) {
	ns := Namespace(t)
	hjStart(t, ns)
	jb := hjJob(ns, "suspended")
	jb.Spec.Parallelism = ptr.To[int32](2)
	jb.Spec.Completions = ptr.To[int32](4)
	jb.Spec.Suspend = ptr.To(true)
	j := hjCreate(t, jb)
	cur := validateJobCondition(t, j, batchv1.JobSuspended, "JobSuspended")
	if cur.Status.StartTime != nil {
		t.Fatalf("a suspended Job got a startTime: %v", cur.Status.StartTime)
	}
	validateJobPodsStatus(t, j, podsByStatus{Terminating: ptr.To[int32](0)})
	hjEvent(t, j, corev1.EventTypeNormal, "Suspended", "Job suspended")

	hjUpdate(t, j, func(x *batchv1.Job) { x.Spec.Suspend = ptr.To(false) })
	validateJobPodsStatus(t, j, podsByStatus{Active: 2, Terminating: ptr.To[int32](0)})
	Eventually(t, hjWait, "Suspended=False JobResumed", func() (bool, string) {
		c := hjCond(hjGet(t, j), batchv1.JobSuspended)
		return c != nil && c.Status == corev1.ConditionFalse && c.Reason == "JobResumed" && c.Message == "Job resumed",
			fmt.Sprintf("%+v", c)
	})
	hjEvent(t, j, corev1.EventTypeNormal, "Resumed", "Job resumed")
	if hjGet(t, j).Status.StartTime == nil {
		t.Fatal("no startTime after resume")
	}

	hjUpdate(t, j, func(x *batchv1.Job) { x.Spec.Suspend = ptr.To(true) })
	validateJobCondition(t, j, batchv1.JobSuspended, "JobSuspended")
	validateJobPodsStatus(t, j, podsByStatus{Terminating: ptr.To[int32](0)})
	hjEvent(t, j, corev1.EventTypeNormal, "SuccessfulDelete", "")
}

// activeDeadlineSeconds: the Job fails with DeadlineExceeded and its pod is deleted.
func TestJob_ActiveDeadlineSeconds(t *testing.T) {
	ns := Namespace(t)
	hjStart(t, ns)
	jb := hjJob(ns, "deadline")
	jb.Spec.ActiveDeadlineSeconds = ptr.To[int64](3)
	j := hjCreate(t, jb)
	validateJobPodsStatus(t, j, podsByStatus{Active: 1, Terminating: ptr.To[int32](0)})
	start := time.Now()
	cur := validateJobCondition(t, j, batchv1.JobFailed, "DeadlineExceeded")
	if c := hjCond(cur, batchv1.JobFailed); c.Message != "Job was active longer than specified deadline" {
		t.Fatalf("Failed: %+v", c)
	}
	if el := time.Since(start); el > 20*time.Second {
		t.Fatalf("deadline noticed after %s", el)
	}
	validateJobPodsStatus(t, j, podsByStatus{Failed: 1, Terminating: ptr.To[int32](0)})
	hjEvent(t, j, corev1.EventTypeWarning, "DeadlineExceeded", "Job was active longer than specified deadline")
}

// TestJobPodsCreatedWithExponentialBackoff: after the n-th failure in a row the next pod comes
// no sooner than backoff * 2^(n-1) after it (here 3s, then 6s). The failed pods carry a Ready=False
// condition at the failure, as a kubelet writes (the finish time the backoff counts from).
func TestJob_PodsCreatedWithExponentialBackoff(t *testing.T) {
	ns := Namespace(t)
	hjStart(t, ns, "--job-pod-failure-backoff=3s", "--job-pod-failure-max-backoff=1m")
	jb := hjJob(ns, "backoff")
	jb.Spec.BackoffLimit = ptr.To[int32](5)
	j := hjCreate(t, jb)
	validateJobPodsStatus(t, j, podsByStatus{Active: 1, Terminating: ptr.To[int32](0)})
	wants := []time.Duration{3 * time.Second, 6 * time.Second}
	for i := 1; i <= 2; i++ {
		before := map[string]bool{}
		var failedAt time.Time
		for _, p := range hjPods(t, j) {
			before[p.Name] = true
		}
		for _, p := range hjPods(t, j) {
			if !hjActive(&p) {
				continue
			}
			failedAt = time.Now()
			p.Status.Phase = corev1.PodFailed
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse,
				LastTransitionTime: metav1.NewTime(failedAt), Reason: "PodFailed"}}
			if _, err := env.Client.CoreV1().Pods(ns).UpdateStatus(context.Background(), &p, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			break
		}
		validateJobPodsStatus(t, j, podsByStatus{Active: 1, Failed: i, Terminating: ptr.To[int32](0)})
		for _, p := range hjPods(t, j) {
			if before[p.Name] {
				continue
			}
			// times in the API have second precision: two seconds of slack below, five above
			gap := p.CreationTimestamp.Sub(failedAt)
			if gap < wants[i-1]-2*time.Second || gap > wants[i-1]+5*time.Second {
				t.Fatalf("pod after failure %d created %s after it, want about %s", i, gap, wants[i-1])
			}
			t.Logf("failure %d: replacement created %s after it (backoff %s)", i, gap, wants[i-1])
		}
	}
}

// TestOrphanPodsFinalizersCleared: a Job deleted with orphan propagation leaves its pods
// without the tracking finalizer (upstream's orphan-pod cleanup).
func TestJob_OrphanPodsFinalizersCleared(t *testing.T) {
	ns := Namespace(t)
	hjStart(t, ns)
	jb := hjJob(ns, "orphans")
	jb.Spec.Parallelism = ptr.To[int32](2)
	j := hjCreate(t, jb)
	validateJobPodsStatus(t, j, podsByStatus{Active: 2, Terminating: ptr.To[int32](0)})
	orphan := metav1.DeletePropagationOrphan
	if err := env.Client.BatchV1().Jobs(ns).Delete(context.Background(), j.Name,
		metav1.DeleteOptions{PropagationPolicy: &orphan}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, hjWait, "orphans without the finalizer", func() (bool, string) {
		pods, err := env.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		if len(pods.Items) != 2 {
			return false, fmt.Sprintf("%d pods", len(pods.Items))
		}
		for _, p := range pods.Items {
			if hjHasFinalizer(&p) {
				return false, p.Name + " keeps it"
			}
		}
		return true, ""
	})
}

// TestManagedBy: a Job managed by another controller is left alone.
func TestJob_ManagedByExternal(t *testing.T) {
	ns := Namespace(t)
	hjStart(t, ns)
	jb := hjJob(ns, "external")
	jb.Spec.ManagedBy = ptr.To("example.com/custom-job-controller")
	j := hjCreate(t, jb)
	ref := hjCreate(t, hjJob(ns, "reference"))
	validateJobPodsStatus(t, ref, podsByStatus{Active: 1, Terminating: ptr.To[int32](0)})
	time.Sleep(2 * time.Second)
	cur := hjGet(t, j)
	if n := len(hjPods(t, j)); n != 0 || cur.Status.StartTime != nil || cur.Status.Active != 0 {
		t.Fatalf("the controller acted on an external Job: %d pods, status %+v", n, cur.Status)
	}
}

// hjStartSim runs kcmd with the Job controller and the kubelet simulator, whose Job-pod
// contract (docs/bench.md, "Job pods") finishes the pods: no test writes a pod status here.
func hjStartSim(t *testing.T, ns string) *kcmdProc {
	t.Helper()
	hksCleanupSimNodes(t)
	hjStripFinalizers(t, ns)
	return hksStartSim(t, "--controllers=job-controller", "--concurrent-job-syncs=2",
		"--job-pod-failure-backoff=100ms", "--job-pod-failure-max-backoff=1s")
}

func hjSimJob(ns, name string, ann map[string]string) *batchv1.Job {
	j := hjJob(ns, name)
	j.Spec.Template.Annotations = ann
	return j
}

func hjExitCode(p *corev1.Pod) int32 {
	if len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].State.Terminated == nil {
		return -1
	}
	return p.Status.ContainerStatuses[0].State.Terminated.ExitCode
}

// Pods finished by the simulator: the first two runs exit 3 (Failed, reason Error), the rest 0;
// the Job completes with exactly 3 succeeded and 2 failed, and each run lasted its duration.
func TestJob_KubeletSimulatorFailThenSucceed(t *testing.T) {
	ns := Namespace(t)
	hjStartSim(t, ns)
	jb := hjSimJob(ns, "sim", map[string]string{"kubeletsim.kcmd.io/exit-code": "3",
		"kubeletsim.kcmd.io/fail-count": "2", "kubeletsim.kcmd.io/run-duration": "1s"})
	jb.Spec.Completions = ptr.To[int32](3)
	jb.Spec.Parallelism = ptr.To[int32](1)
	j := hjCreate(t, jb)
	cur := validateJobCondition(t, j, batchv1.JobComplete, "CompletionsReached")
	if cur.Status.Succeeded != 3 || cur.Status.Failed != 2 {
		t.Fatalf("succeeded %d failed %d, want 3 and 2", cur.Status.Succeeded, cur.Status.Failed)
	}
	var failed, succeeded int
	for _, p := range hjPods(t, j) {
		switch p.Status.Phase {
		case corev1.PodFailed:
			failed++
			if hjExitCode(&p) != 3 || p.Status.ContainerStatuses[0].State.Terminated.Reason != "Error" {
				t.Fatalf("failed pod %s: %+v", p.Name, p.Status.ContainerStatuses)
			}
		case corev1.PodSucceeded:
			succeeded++
			if hjExitCode(&p) != 0 {
				t.Fatalf("succeeded pod %s: %+v", p.Name, p.Status.ContainerStatuses)
			}
			term := p.Status.ContainerStatuses[0].State.Terminated
			if d := term.FinishedAt.Sub(term.StartedAt.Time); d < time.Second-time.Second/2 {
				t.Fatalf("pod %s ran %s, want about 1s", p.Name, d)
			}
		}
	}
	if failed != 2 || succeeded != 3 {
		t.Fatalf("%d failed and %d succeeded pods", failed, succeeded)
	}
	validateFinishedPodsNoFinalizer(t, j)
}

// restartPolicy OnFailure: the failing runs restart in place (restartCount 2), no pod fails,
// and the Job completes.
func TestJob_KubeletSimulatorOnFailureRestarts(t *testing.T) {
	ns := Namespace(t)
	hjStartSim(t, ns)
	jb := hjSimJob(ns, "restarts", map[string]string{"kubeletsim.kcmd.io/exit-code": "1",
		"kubeletsim.kcmd.io/fail-count": "2"})
	jb.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	j := hjCreate(t, jb)
	cur := validateJobCondition(t, j, batchv1.JobComplete, "")
	pods := hjPods(t, j)
	if cur.Status.Succeeded != 1 || cur.Status.Failed != 0 || len(pods) != 1 {
		t.Fatalf("succeeded %d failed %d pods %d", cur.Status.Succeeded, cur.Status.Failed, len(pods))
	}
	if rc := pods[0].Status.ContainerStatuses[0].RestartCount; rc != 2 {
		t.Fatalf("restartCount %d, want 2", rc)
	}
}

// restartPolicy OnFailure past backoffLimit: restarts count against it (pastBackoffLimitOnFailure)
// and the Job fails with BackoffLimitExceeded.
func TestJob_KubeletSimulatorOnFailureBackoffLimit(t *testing.T) {
	ns := Namespace(t)
	hjStartSim(t, ns)
	jb := hjSimJob(ns, "restarts", map[string]string{"kubeletsim.kcmd.io/exit-code": "1"})
	jb.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	jb.Spec.BackoffLimit = ptr.To[int32](2)
	j := hjCreate(t, jb)
	validateJobCondition(t, j, batchv1.JobFailed, "BackoffLimitExceeded")
	validateJobPodsStatus(t, j, podsByStatus{Failed: 1, Terminating: ptr.To[int32](0)})
}

// Indexed, only index 1 fails, once: completedIndexes "0-2", one failure.
func TestJob_KubeletSimulatorIndexedFailIndex(t *testing.T) {
	ns := Namespace(t)
	hjStartSim(t, ns)
	jb := hjSimJob(ns, "indexed", map[string]string{"kubeletsim.kcmd.io/exit-code": "2",
		"kubeletsim.kcmd.io/fail-indexes": "1", "kubeletsim.kcmd.io/fail-count": "1"})
	jb.Spec.Completions = ptr.To[int32](3)
	jb.Spec.Parallelism = ptr.To[int32](3)
	jb.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	j := hjCreate(t, jb)
	cur := validateJobCondition(t, j, batchv1.JobComplete, "")
	if cur.Status.CompletedIndexes != "0-2" || cur.Status.Failed != 1 || cur.Status.Succeeded != 3 {
		t.Fatalf("status %+v", cur.Status)
	}
	for _, p := range hjPods(t, j) {
		if p.Status.Phase == corev1.PodFailed && p.Labels[batchv1.JobCompletionIndexAnnotation] != "1" {
			t.Fatalf("pod %s of index %s failed", p.Name, p.Labels[batchv1.JobCompletionIndexAnnotation])
		}
	}
}

// TestJobPodFailurePolicy's cases: a failed pod's exit code or condition matched against the
// Job's podFailurePolicy: FailJob fails the Job (reason PodFailurePolicy, upstream's message),
// Ignore does not count the failure, Count and no match count it.
func TestJob_PodFailurePolicy(t *testing.T) {
	ns := Namespace(t)
	hjStart(t, ns)
	policy := &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
		{Action: batchv1.PodFailurePolicyActionIgnore, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{
			{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}},
		{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
			ContainerName: ptr.To("main-container"), Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{1, 2, 3}}},
		{Action: batchv1.PodFailurePolicyActionIgnore, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
			Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{4}}},
		{Action: batchv1.PodFailurePolicyActionCount, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
			Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{5}}},
	}}
	fail := func(t *testing.T, j *batchv1.Job, code int32, cond bool) string {
		t.Helper()
		for _, p := range hjPods(t, j) {
			if !hjActive(&p) {
				continue
			}
			p.Status.Phase = corev1.PodFailed
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main-container", Image: "bar",
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}}}
			if cond {
				p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget,
					Status: corev1.ConditionTrue, Reason: "DeletionByTaintManager"})
			}
			if _, err := env.Client.CoreV1().Pods(ns).UpdateStatus(context.Background(), &p, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			return p.Name
		}
		t.Fatal("no active pod")
		return ""
	}
	mk := func(name string) *batchv1.Job {
		jb := hjJob(ns, name)
		jb.Spec.Template.Spec.Containers[0].Name = "main-container"
		jb.Spec.PodFailurePolicy = policy
		return hjCreate(t, jb)
	}
	t.Run("FailJob", func(t *testing.T) {
		j := mk("failjob")
		validateJobPodsStatus(t, j, podsByStatus{Active: 1, Terminating: ptr.To[int32](0)})
		name := fail(t, j, 2, false)
		cur := validateJobCondition(t, j, batchv1.JobFailed, "PodFailurePolicy")
		want := fmt.Sprintf("Container main-container for pod %s/%s failed with exit code 2 matching FailJob rule at index 1", ns, name)
		if c := hjCond(cur, batchv1.JobFailed); c.Message != want {
			t.Fatalf("Failed message %q, want %q", c.Message, want)
		}
		if c := hjCond(cur, batchv1.JobFailureTarget); c == nil || c.Reason != "PodFailurePolicy" || c.Message != want {
			t.Fatalf("FailureTarget %+v", c)
		}
		validateJobPodsStatus(t, j, podsByStatus{Failed: 1, Terminating: ptr.To[int32](0)})
	})
	t.Run("IgnoreExitCode", func(t *testing.T) {
		j := mk("ignore")
		validateJobPodsStatus(t, j, podsByStatus{Active: 1, Terminating: ptr.To[int32](0)})
		fail(t, j, 4, false)
		validateJobPodsStatus(t, j, podsByStatus{Active: 1, Terminating: ptr.To[int32](0)})
		Eventually(t, hjWait, "a replacement pod", func() (bool, string) {
			return len(hjPods(t, j)) == 2, fmt.Sprint(len(hjPods(t, j)))
		})
	})
	t.Run("IgnoreDisruptionTarget", func(t *testing.T) {
		j := mk("disruption")
		validateJobPodsStatus(t, j, podsByStatus{Active: 1, Terminating: ptr.To[int32](0)})
		fail(t, j, 2, true) // the Ignore rule on the condition comes first
		validateJobPodsStatus(t, j, podsByStatus{Active: 1, Terminating: ptr.To[int32](0)})
	})
	t.Run("CountAndNoMatch", func(t *testing.T) {
		j := mk("count")
		validateJobPodsStatus(t, j, podsByStatus{Active: 1, Terminating: ptr.To[int32](0)})
		fail(t, j, 5, false)
		validateJobPodsStatus(t, j, podsByStatus{Active: 1, Failed: 1, Terminating: ptr.To[int32](0)})
		fail(t, j, 42, false)
		validateJobPodsStatus(t, j, podsByStatus{Active: 1, Failed: 2, Terminating: ptr.To[int32](0)})
	})
}

// TestSuccessPolicy: an Indexed Job whose successPolicy is met by index 0 succeeds at once:
// SuccessCriteriaMet (reason SuccessPolicy, "Matched rules at index 0"), its other pods
// removed without counting as failed, then Complete with the same reason.
func TestJob_SuccessPolicy(t *testing.T) {
	ns := Namespace(t)
	hjStart(t, ns)
	jb := hjJob(ns, "success")
	jb.Spec.Parallelism = ptr.To[int32](3)
	jb.Spec.Completions = ptr.To[int32](3)
	jb.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	jb.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{
		{SucceededIndexes: ptr.To("0"), SucceededCount: ptr.To[int32](1)}}}
	j := hjCreate(t, jb)
	validateIndexedJobPods(t, j, []int{0, 1, 2}, "")
	setJobPhaseForIndex(t, j, corev1.PodSucceeded, 0)
	cur := validateJobCondition(t, j, batchv1.JobComplete, "SuccessPolicy")
	if c := hjCond(cur, batchv1.JobComplete); c.Message != "Matched rules at index 0" {
		t.Fatalf("Complete %+v", c)
	}
	if c := hjCond(cur, batchv1.JobSuccessCriteriaMet); c == nil || c.Reason != "SuccessPolicy" ||
		c.Message != "Matched rules at index 0" {
		t.Fatalf("SuccessCriteriaMet %+v", c)
	}
	validateJobPodsStatus(t, j, podsByStatus{Succeeded: 1, Terminating: ptr.To[int32](0)})
	if cur := hjGet(t, j); cur.Status.CompletedIndexes != "0" || cur.Status.Failed != 0 {
		t.Fatalf("status %+v", cur.Status)
	}
}

// TestParallelJobChangingParallelism: lowering parallelism deletes pods (their finalizer
// released first, so they are not counted as failed), raising it creates pods.
func TestJob_ParallelJobChangingParallelism(t *testing.T) {
	ns := Namespace(t)
	hjStart(t, ns)
	jb := hjJob(ns, "scaling")
	jb.Spec.Parallelism = ptr.To[int32](2)
	jb.Spec.BackoffLimit = ptr.To[int32](2)
	j := hjCreate(t, jb)
	validateJobPodsStatus(t, j, podsByStatus{Active: 2, Terminating: ptr.To[int32](0)})

	hjUpdate(t, j, func(x *batchv1.Job) { x.Spec.Parallelism = ptr.To[int32](1) })
	validateJobPodsStatus(t, j, podsByStatus{Active: 1, Terminating: ptr.To[int32](0)})

	hjUpdate(t, j, func(x *batchv1.Job) { x.Spec.Parallelism = ptr.To[int32](3) })
	validateJobPodsStatus(t, j, podsByStatus{Active: 3, Terminating: ptr.To[int32](0)})

	setJobPodsPhase(t, j, corev1.PodSucceeded, 1)
	validateJobPodsStatus(t, j, podsByStatus{Active: 2, Succeeded: 1, Terminating: ptr.To[int32](0)})
	setJobPodsPhase(t, j, corev1.PodSucceeded, 2)
	validateJobPodsStatus(t, j, podsByStatus{Succeeded: 3, Terminating: ptr.To[int32](0)})
	validateJobCondition(t, j, batchv1.JobComplete, "")
}

// TestJobPodReplacementPolicy: with podReplacementPolicy Failed a deleted (terminating) pod is
// not replaced until it is Failed and counts in status.terminating; with TerminatingOrFailed it
// counts as failed and is replaced at once.
func TestJob_PodReplacementPolicy(t *testing.T) {
	ns := Namespace(t)
	hjStart(t, ns)
	del := func(t *testing.T, j *batchv1.Job) *corev1.Pod {
		t.Helper()
		for _, p := range hjPods(t, j) {
			if hjActive(&p) {
				if err := env.Client.CoreV1().Pods(ns).Delete(context.Background(), p.Name, metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				return &p
			}
		}
		t.Fatal("no active pod")
		return nil
	}
	t.Run("Failed", func(t *testing.T) {
		jb := hjJob(ns, "failed")
		jb.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
		j := hjCreate(t, jb)
		validateJobPodsStatus(t, j, podsByStatus{Active: 1, Terminating: ptr.To[int32](0)})
		p := del(t, j)
		validateJobPodsStatus(t, j, podsByStatus{Active: 0, Terminating: ptr.To[int32](1)})
		time.Sleep(time.Second)
		if n := len(hjPods(t, j)); n != 1 {
			t.Fatalf("%d pods while the deleted one is only terminating", n)
		}
		cur, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		hjSetPhase(t, cur, corev1.PodFailed)
		validateJobPodsStatus(t, j, podsByStatus{Active: 1, Failed: 1, Terminating: ptr.To[int32](0)})
	})
	t.Run("TerminatingOrFailed", func(t *testing.T) {
		j := hjCreate(t, hjJob(ns, "terminating"))
		validateJobPodsStatus(t, j, podsByStatus{Active: 1, Terminating: ptr.To[int32](0)})
		del(t, j)
		validateJobPodsStatus(t, j, podsByStatus{Active: 1, Failed: 1, Terminating: ptr.To[int32](0)})
	})
}

// TestBackoffLimitPerIndex (upstream's table, one kcmd for all cases): failures counted per
// index through the index failure count annotations, status.failedIndexes, the FailIndex
// podFailurePolicy action, and the FailedIndexes / MaxFailedIndexesExceeded failures (after the
// interim FailureTarget with the same reason), or the global backoffLimit reached first.
func TestJob_BackoffLimitPerIndex(t *testing.T) {
	type term struct {
		index                                      int
		status                                     corev1.PodStatus
		wantActive, wantFailed, wantSucceeded      int
		wantActiveIndexes                          []int
		wantCompletedIndexes                       string
		wantFailedIndexes                          *string
		wantReplacementFailureCount                *int
	}
	failed := corev1.PodStatus{Phase: corev1.PodFailed}
	cases := []struct {
		name       string
		parallel   int32
		blpi       int32
		bl, mfi    *int32
		pfp        *batchv1.PodFailurePolicy
		terms      []term
		wantCond   batchv1.JobConditionType
		wantReason string
	}{
		{name: "succeeded", parallel: 2, blpi: 1, terms: []term{
			{index: 0, status: failed, wantActive: 2, wantFailed: 1, wantActiveIndexes: []int{0, 1},
				wantFailedIndexes: ptr.To(""), wantReplacementFailureCount: ptr.To(1)},
		}, wantCond: batchv1.JobComplete, wantReason: "CompletionsReached"},
		{name: "exceeds-per-index", parallel: 2, blpi: 2, terms: []term{
			{index: 0, status: failed, wantActive: 2, wantFailed: 1, wantActiveIndexes: []int{0, 1},
				wantFailedIndexes: ptr.To(""), wantReplacementFailureCount: ptr.To(1)},
			{index: 0, status: failed, wantActive: 2, wantFailed: 2, wantActiveIndexes: []int{0, 1},
				wantFailedIndexes: ptr.To(""), wantReplacementFailureCount: ptr.To(2)},
			{index: 0, status: failed, wantActive: 1, wantFailed: 3, wantActiveIndexes: []int{1},
				wantFailedIndexes: ptr.To("0")},
		}, wantCond: batchv1.JobFailed, wantReason: "FailedIndexes"},
		{name: "global-first", parallel: 3, blpi: 1, bl: ptr.To[int32](2), terms: []term{
			{index: 0, status: failed, wantActive: 3, wantFailed: 1, wantActiveIndexes: []int{0, 1, 2},
				wantFailedIndexes: ptr.To("")},
			{index: 1, status: failed, wantActive: 3, wantFailed: 2, wantActiveIndexes: []int{0, 1, 2},
				wantFailedIndexes: ptr.To("")},
			{index: 2, status: failed, wantFailed: 5, wantFailedIndexes: ptr.To("")},
		}, wantCond: batchv1.JobFailed, wantReason: "BackoffLimitExceeded"},
		{name: "continues-after-failed-index", parallel: 2, blpi: 0, terms: []term{
			{index: 0, status: failed, wantActive: 1, wantFailed: 1, wantActiveIndexes: []int{1},
				wantFailedIndexes: ptr.To("0")},
			{index: 1, status: corev1.PodStatus{Phase: corev1.PodSucceeded}, wantFailed: 1, wantSucceeded: 1,
				wantFailedIndexes: ptr.To("0"), wantCompletedIndexes: "1"},
		}, wantCond: batchv1.JobFailed, wantReason: "FailedIndexes"},
		{name: "max-failed-indexes", parallel: 3, blpi: 0, mfi: ptr.To[int32](1), terms: []term{
			{index: 0, status: failed, wantActive: 2, wantFailed: 1, wantActiveIndexes: []int{1, 2},
				wantFailedIndexes: ptr.To("0")},
			{index: 1, status: failed, wantActive: 0, wantFailed: 3, wantFailedIndexes: ptr.To("0,1")},
		}, wantCond: batchv1.JobFailed, wantReason: "MaxFailedIndexesExceeded"},
		{name: "fail-index-rule", parallel: 2, blpi: 1, pfp: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
			{Action: batchv1.PodFailurePolicyActionFailIndex, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
				Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{13}}},
			{Action: batchv1.PodFailurePolicyActionFailIndex, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{
				{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}},
		}}, terms: []term{
			{index: 0, status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{
				Name: "foo", Image: "bar", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 13}}}}},
				wantActive: 1, wantFailed: 1, wantActiveIndexes: []int{1}, wantFailedIndexes: ptr.To("0")},
			{index: 1, status: corev1.PodStatus{Phase: corev1.PodFailed, Conditions: []corev1.PodCondition{{
				Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}},
				wantFailed: 2, wantFailedIndexes: ptr.To("0,1")},
		}, wantCond: batchv1.JobFailed, wantReason: "FailedIndexes"},
	}
	ns := Namespace(t)
	hjStart(t, ns)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			jb := hjJob(ns, tc.name)
			jb.Spec.Parallelism = ptr.To(tc.parallel)
			jb.Spec.Completions = ptr.To(tc.parallel)
			jb.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
			jb.Spec.BackoffLimitPerIndex = ptr.To(tc.blpi)
			jb.Spec.BackoffLimit = tc.bl
			jb.Spec.MaxFailedIndexes = tc.mfi
			jb.Spec.PodFailurePolicy = tc.pfp
			j := hjCreate(t, jb)
			validateJobPodsStatus(t, j, podsByStatus{Active: int(tc.parallel), Terminating: ptr.To[int32](0)})
			for _, p := range hjPods(t, j) {
				if got := hjIndexFailureCount(&p); got != 0 {
					t.Fatalf("first pod %s: index failure count %d, want 0", p.Name, got)
				}
			}
			for i, tm := range tc.terms {
				p := hjActivePodForIndex(t, j, tm.index)
				p.Status = tm.status
				if _, err := env.Client.CoreV1().Pods(ns).UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
					t.Fatalf("termination %d: %v", i, err)
				}
				validateJobPodsStatus(t, j, podsByStatus{Active: tm.wantActive, Failed: tm.wantFailed,
					Succeeded: tm.wantSucceeded, Terminating: ptr.To[int32](0)})
				validateIndexedJobPods(t, j, tm.wantActiveIndexes, tm.wantCompletedIndexes)
				validateFailedIndexes(t, j, tm.wantFailedIndexes)
				if tm.wantReplacementFailureCount != nil {
					r := hjActivePodForIndex(t, j, tm.index)
					if got := hjIndexFailureCount(r); got != *tm.wantReplacementFailureCount {
						t.Fatalf("termination %d: replacement %s index failure count %d, want %d", i, r.Name, got, *tm.wantReplacementFailureCount)
					}
				}
			}
			if rem := tc.terms[len(tc.terms)-1].wantActive; rem > 0 {
				setJobPodsPhase(t, j, corev1.PodSucceeded, rem)
			}
			cur := validateJobCondition(t, j, tc.wantCond, tc.wantReason)
			if tc.wantCond == batchv1.JobFailed {
				// the interim FailureTarget first, with the same reason
				ft := hjCond(cur, batchv1.JobFailureTarget)
				if ft == nil || ft.Reason != tc.wantReason || cur.Status.Conditions[0].Type != batchv1.JobFailureTarget {
					t.Fatalf("conditions %+v: want FailureTarget (%s) first", cur.Status.Conditions, tc.wantReason)
				}
				msgs := map[string]string{"FailedIndexes": "Job has failed indexes",
					"MaxFailedIndexesExceeded": "Job has exceeded the specified maximal number of failed indexes",
					"BackoffLimitExceeded":     "Job has reached the specified backoff limit"}
				if c := hjCond(cur, batchv1.JobFailed); c.Message != msgs[tc.wantReason] {
					t.Fatalf("Failed message %q, want %q", c.Message, msgs[tc.wantReason])
				}
				hjEvent(t, j, corev1.EventTypeWarning, tc.wantReason, msgs[tc.wantReason])
			}
			validateFinishedPodsNoFinalizer(t, j)
		})
	}
}

// TestBackoffLimitPerIndex_DelayedPodDeletion: the failed pod of an index keeps its finalizer
// until its replacement exists (the replacement's failure count comes from it); a failed pod
// deleted at once still gets a replacement with the count bumped.
func TestJob_BackoffLimitPerIndexDelayedPodDeletion(t *testing.T) {
	ns := Namespace(t)
	// a long backoff, so the failed pod is seen waiting for its replacement with its finalizer
	hjStart(t, ns, "--job-pod-failure-backoff=3s", "--job-pod-failure-max-backoff=1m")
	jb := hjJob(ns, "delayed")
	jb.Spec.Parallelism = ptr.To[int32](1)
	jb.Spec.Completions = ptr.To[int32](1)
	jb.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	jb.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
	j := hjCreate(t, jb)
	validateJobPodsStatus(t, j, podsByStatus{Active: 1, Terminating: ptr.To[int32](0)})
	validateIndexedJobPods(t, j, []int{0}, "")
	validateFailedIndexes(t, j, ptr.To(""))

	first := hjActivePodForIndex(t, j, 0)
	failedAt := time.Now()
	hjSetPhase(t, first, corev1.PodFailed)
	// during the backoff: counted in failed only once its finalizer goes, so the Job shows
	// no active pod and the failed pod keeps its finalizer
	time.Sleep(1500 * time.Millisecond)
	if cur, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), first.Name, metav1.GetOptions{}); err != nil || !hjHasFinalizer(cur) {
		t.Fatalf("failed pod during the backoff: err %v, finalizers %v (want the tracking finalizer kept)", err, cur.Finalizers)
	}
	if err := env.Client.CoreV1().Pods(ns).Delete(context.Background(), first.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	validateJobPodsStatus(t, j, podsByStatus{Active: 1, Failed: 1, Terminating: ptr.To[int32](0)})
	validateIndexedJobPods(t, j, []int{0}, "")
	validateFailedIndexes(t, j, ptr.To(""))
	r := hjActivePodForIndex(t, j, 0)
	if got := hjIndexFailureCount(r); got != 1 {
		t.Fatalf("replacement %s: index failure count %d, want 1", r.Name, got)
	}
	if gap := r.CreationTimestamp.Sub(failedAt); gap < time.Second || gap > 8*time.Second {
		t.Fatalf("replacement created %s after the failure, want about 3s (the per-index backoff)", gap)
	}
	setJobPhaseForIndex(t, j, corev1.PodSucceeded, 0)
	validateJobPodsStatus(t, j, podsByStatus{Succeeded: 1, Failed: 1, Terminating: ptr.To[int32](0)})
	validateJobCondition(t, j, batchv1.JobComplete, "")
	validateFinishedPodsNoFinalizer(t, j)
}

// TestJob_AdoptAndRelease (upstream's unit TestGetPodsForJob / ClaimPods, end to end): an orphan
// matching the Job's selector is adopted (controller reference and tracking finalizer) and
// counted, a pod of another controller matching the selector is left alone, and an owned pod
// whose labels stop matching is released (reference and finalizer removed) and replaced.
func TestJob_AdoptAndRelease(t *testing.T) {
	ns := Namespace(t)
	hjStart(t, ns)
	ctx := context.Background()
	sel := map[string]string{"app": "adopt-me"}
	mkPod := func(name string, owner *metav1.OwnerReference) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": "adopt-me"}},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "foo", Image: "bar"}}}}
		if owner != nil {
			p.OwnerReferences = []metav1.OwnerReference{*owner}
		}
		out, err := env.Client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	orphan := mkPod("orphan", nil)
	// a controller no kcm controller manages, and that exists (the garbage collector keeps the pod)
	cm, err := env.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	other := mkPod("other-owner", &metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "owner",
		UID: cm.UID, Controller: ptr.To(true)})

	jb := hjJob(ns, "adopter")
	jb.Spec.Parallelism = ptr.To[int32](2)
	jb.Spec.Completions = ptr.To[int32](2)
	jb.Spec.ManualSelector = ptr.To(true)
	jb.Spec.Selector = &metav1.LabelSelector{MatchLabels: sel}
	jb.Spec.Template.Labels = sel
	j := hjCreate(t, jb)
	// the orphan counts as one of the two active pods: one pod created
	validateJobPodsStatus(t, j, podsByStatus{Active: 2, Terminating: ptr.To[int32](0)})
	pods := hjPods(t, j)
	if len(pods) != 2 {
		t.Fatalf("%d pods owned, want 2 (the adopted orphan and one created)", len(pods))
	}
	var adopted *corev1.Pod
	for i := range pods {
		if pods[i].UID == orphan.UID {
			adopted = &pods[i]
		}
	}
	if adopted == nil || !hjHasFinalizer(adopted) {
		t.Fatalf("orphan not adopted with the tracking finalizer: %+v", pods)
	}
	c := metav1.GetControllerOf(adopted)
	if c.Kind != "Job" || c.Name != "adopter" || c.APIVersion != "batch/v1" || !ptr.Deref(c.BlockOwnerDeletion, false) {
		t.Fatalf("adopted pod's controller reference %+v", c)
	}
	cur, err := env.Client.CoreV1().Pods(ns).Get(ctx, other.Name, metav1.GetOptions{})
	if err != nil || metav1.GetControllerOf(cur) == nil || metav1.GetControllerOf(cur).UID != other.OwnerReferences[0].UID || hjHasFinalizer(cur) {
		t.Fatalf("the other controller's pod changed: %v %+v", err, cur.ObjectMeta)
	}

	// the adopted pod stops matching: released, replaced
	p, err := env.Client.CoreV1().Pods(ns).Patch(ctx, orphan.Name, types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"app":"gone"}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	Eventually(t, hjWait, "released", func() (bool, string) {
		p, err = env.Client.CoreV1().Pods(ns).Get(ctx, orphan.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return metav1.GetControllerOf(p) == nil && !hjHasFinalizer(p), fmt.Sprintf("owners %+v finalizers %v", p.OwnerReferences, p.Finalizers)
	})
	validateJobPodsStatus(t, j, podsByStatus{Active: 2, Terminating: ptr.To[int32](0)})
	setJobPodsPhase(t, j, corev1.PodSucceeded, 2)
	validateJobPodsStatus(t, j, podsByStatus{Succeeded: 2, Terminating: ptr.To[int32](0)})
	validateJobCondition(t, j, batchv1.JobComplete, "")
	validateFinishedPodsNoFinalizer(t, j)
	_ = env.Client.CoreV1().Pods(ns).Delete(ctx, other.Name, metav1.DeleteOptions{})
}
