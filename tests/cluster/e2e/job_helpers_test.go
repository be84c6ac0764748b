package e2e

// Helpers of the Job controller's tests (job_test.go), after upstream's test/integration/job:
// pods have no kubelet, so a test moves them to Succeeded or Failed itself (setJobPodsPhase),
// and it checks the Job's status counters (validateJobPodsStatus) as upstream's do.

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

const hjWait = 60 * time.Second

// hjStart runs kcmd with only the Job controller (upstream kcm runs no Job controller in the
// test cluster), the fast pod-failure backoff of upstream's integration tests (100ms, at most
// 1s), and hjStripFinalizers registered so the namespace can be emptied once kcmd is gone.
func hjStart(t *testing.T, ns string, extra ...string) *kcmdProc {
	t.Helper()
	hjStripFinalizers(t, ns)
	flags := append([]string{"--controllers=job-controller", "--leader-elect=false", "--secure-port=0",
		"--concurrent-job-syncs=2", "--job-pod-failure-backoff=100ms", "--job-pod-failure-max-backoff=1s", "--v=2"}, extra...)
	p := startKcmd(t, nil, flags...)
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	return p
}

// hjStripFinalizers removes the Job tracking finalizer from every pod of ns when the test ends
// (after kcmd stopped: cleanups run last-registered first), so the namespace's deletion does
// not leave Terminating pods behind.
func hjStripFinalizers(t *testing.T, ns string) {
	t.Cleanup(func() {
		ctx := context.Background()
		pods, err := env.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return
		}
		for _, p := range pods.Items {
			if len(p.Finalizers) == 0 {
				continue
			}
			_, _ = env.Client.CoreV1().Pods(ns).Patch(ctx, p.Name, types.MergePatchType,
				[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		}
	})
}

func hjJob(ns, name string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: batchv1.JobSpec{
			Template: corev1.PodTemplateSpec{
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "foo", Image: "bar"}},
				},
			},
		},
	}
}

func hjCreate(t *testing.T, j *batchv1.Job) *batchv1.Job {
	t.Helper()
	out, err := env.Client.BatchV1().Jobs(j.Namespace).Create(context.Background(), j, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating job %s/%s: %v", j.Namespace, j.Name, err)
	}
	return out
}

func hjGet(t *testing.T, j *batchv1.Job) *batchv1.Job {
	t.Helper()
	out, err := env.Client.BatchV1().Jobs(j.Namespace).Get(context.Background(), j.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting job %s/%s: %v", j.Namespace, j.Name, err)
	}
	return out
}

func hjUpdate(t *testing.T, j *batchv1.Job, fn func(*batchv1.Job)) *batchv1.Job {
	t.Helper()
	for i := 0; ; i++ {
		cur := hjGet(t, j)
		fn(cur)
		out, err := env.Client.BatchV1().Jobs(j.Namespace).Update(context.Background(), cur, metav1.UpdateOptions{})
		if err == nil {
			return out
		}
		if !apierrors.IsConflict(err) || i > 20 {
			t.Fatalf("updating job %s/%s: %v", j.Namespace, j.Name, err)
		}
	}
}

// hjPods lists the pods controlled by j.
func hjPods(t *testing.T, j *batchv1.Job) []corev1.Pod {
	t.Helper()
	pods, err := env.Client.CoreV1().Pods(j.Namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing pods: %v", err)
	}
	var out []corev1.Pod
	for _, p := range pods.Items {
		if c := metav1.GetControllerOf(&p); c != nil && c.UID == j.UID {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}

func hjActive(p *corev1.Pod) bool {
	return p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed && p.DeletionTimestamp == nil
}

func hjHasFinalizer(p *corev1.Pod) bool {
	for _, f := range p.Finalizers {
		if f == batchv1.JobTrackingFinalizer {
			return true
		}
	}
	return false
}

// podsByStatus as upstream's: the Job's status counters, and the number of active pods in the
// API matching Active.
type podsByStatus struct {
	Active, Ready, Failed, Succeeded int
	Terminating                      *int32
}

func validateJobPodsStatus(t *testing.T, j *batchv1.Job, want podsByStatus) {
	t.Helper()
	Eventually(t, hjWait, fmt.Sprintf("job %s status %+v", j.Name, want), func() (bool, string) {
		cur := hjGet(t, j)
		got := podsByStatus{Active: int(cur.Status.Active), Ready: int(ptr.Deref(cur.Status.Ready, -1)),
			Failed: int(cur.Status.Failed), Succeeded: int(cur.Status.Succeeded), Terminating: cur.Status.Terminating}
		if want.Terminating == nil {
			got.Terminating = nil
		}
		active := 0
		for _, p := range hjPods(t, j) {
			if hjActive(&p) {
				active++
			}
		}
		ok := got.Active == want.Active && got.Ready == want.Ready && got.Failed == want.Failed &&
			got.Succeeded == want.Succeeded && active == want.Active &&
			(want.Terminating == nil || (got.Terminating != nil && *got.Terminating == *want.Terminating))
		return ok, fmt.Sprintf("status %+v (terminating %v), %d active pods", got, ptr.Deref(cur.Status.Terminating, -1), active)
	})
}

// setJobPodsPhase moves cnt active pods of j (lowest names first) to phase, as upstream's
// helper does through the status subresource. Returns their names.
func setJobPodsPhase(t *testing.T, j *batchv1.Job, phase corev1.PodPhase, cnt int) []string {
	t.Helper()
	var done []string
	for _, p := range hjPods(t, j) {
		if len(done) == cnt {
			break
		}
		if !hjActive(&p) {
			continue
		}
		hjSetPhase(t, &p, phase)
		done = append(done, p.Name)
	}
	if len(done) != cnt {
		t.Fatalf("only %d of %d active pods moved to %s", len(done), cnt, phase)
	}
	return done
}

func hjSetPhase(t *testing.T, p *corev1.Pod, phase corev1.PodPhase) {
	t.Helper()
	p.Status.Phase = phase
	if _, err := env.Client.CoreV1().Pods(p.Namespace).UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("setting pod %s to %s: %v", p.Name, phase, err)
	}
}

// setJobPhaseForIndex moves the active pod of index ix to phase.
func setJobPhaseForIndex(t *testing.T, j *batchv1.Job, phase corev1.PodPhase, ix int) {
	t.Helper()
	for _, p := range hjPods(t, j) {
		if hjActive(&p) && p.Annotations[batchv1.JobCompletionIndexAnnotation] == strconv.Itoa(ix) {
			hjSetPhase(t, &p, phase)
			return
		}
	}
	t.Fatalf("no active pod of index %d", ix)
}

// validateIndexedJobPods: the active pods' indexes and status.completedIndexes.
func validateIndexedJobPods(t *testing.T, j *batchv1.Job, active []int, completed string) {
	t.Helper()
	Eventually(t, hjWait, fmt.Sprintf("active indexes %v, completed %q", active, completed), func() (bool, string) {
		var got []int
		for _, p := range hjPods(t, j) {
			if !hjActive(&p) {
				continue
			}
			ix, err := strconv.Atoi(p.Annotations[batchv1.JobCompletionIndexAnnotation])
			if err != nil {
				return false, fmt.Sprintf("pod %s without an index", p.Name)
			}
			got = append(got, ix)
		}
		sort.Ints(got)
		cur := hjGet(t, j)
		return fmt.Sprint(got) == fmt.Sprint(active) && cur.Status.CompletedIndexes == completed,
			fmt.Sprintf("active %v, completedIndexes %q", got, cur.Status.CompletedIndexes)
	})
}

func hjCond(j *batchv1.Job, typ batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range j.Status.Conditions {
		if j.Status.Conditions[i].Type == typ {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}

// validateJobCondition waits for condition typ True with reason (any when "").
func validateJobCondition(t *testing.T, j *batchv1.Job, typ batchv1.JobConditionType, reason string) *batchv1.Job {
	t.Helper()
	var cur *batchv1.Job
	Eventually(t, hjWait, fmt.Sprintf("job %s condition %s (%s)", j.Name, typ, reason), func() (bool, string) {
		cur = hjGet(t, j)
		c := hjCond(cur, typ)
		if c == nil || c.Status != corev1.ConditionTrue || (reason != "" && c.Reason != reason) {
			return false, fmt.Sprintf("conditions %+v", cur.Status.Conditions)
		}
		return true, ""
	})
	return cur
}

// validateFinishedPodsNoFinalizer: no pod of j keeps the tracking finalizer.
func validateFinishedPodsNoFinalizer(t *testing.T, j *batchv1.Job) {
	t.Helper()
	Eventually(t, hjWait, "no pod with the tracking finalizer", func() (bool, string) {
		for _, p := range hjPods(t, j) {
			if hjHasFinalizer(&p) && !hjActive(&p) {
				return false, "pod " + p.Name + " keeps it"
			}
		}
		return true, ""
	})
}

// hjEvent waits for an Event of j with reason (and message, when not "").
func hjEvent(t *testing.T, j *batchv1.Job, typ, reason, message string) {
	t.Helper()
	Eventually(t, hjWait, "event "+reason, func() (bool, string) {
		evs, err := env.Client.CoreV1().Events(j.Namespace).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, e := range evs.Items {
			if e.InvolvedObject.UID != j.UID {
				continue
			}
			seen = append(seen, e.Reason+": "+e.Message)
			if e.Reason == reason && e.Type == typ && (message == "" || e.Message == message) &&
				e.Source.Component == "job-controller" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("events %v", seen)
	})
}

// hjActivePodForIndex: the active pod of index ix (upstream's getActivePodForIndex).
func hjActivePodForIndex(t *testing.T, j *batchv1.Job, ix int) *corev1.Pod {
	t.Helper()
	for _, p := range hjPods(t, j) {
		if hjActive(&p) && p.Annotations[batchv1.JobCompletionIndexAnnotation] == strconv.Itoa(ix) {
			return &p
		}
	}
	t.Fatalf("no active pod of index %d", ix)
	return nil
}

// validateFailedIndexes waits for status.failedIndexes (nil: unset), the third check of
// upstream's validateIndexedJobPods.
func validateFailedIndexes(t *testing.T, j *batchv1.Job, want *string) {
	t.Helper()
	Eventually(t, hjWait, fmt.Sprintf("failedIndexes %v", ptr.Deref(want, "<nil>")), func() (bool, string) {
		cur := hjGet(t, j)
		return ptr.Equal(cur.Status.FailedIndexes, want), fmt.Sprintf("failedIndexes %v", ptr.Deref(cur.Status.FailedIndexes, "<nil>"))
	})
}

// hjIndexFailureCount: the pod's batch.kubernetes.io/job-index-failure-count (-1: absent).
func hjIndexFailureCount(p *corev1.Pod) int {
	v, ok := p.Annotations[batchv1.JobIndexFailureCountAnnotation]
	if !ok {
		return -1
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return -2
	}
	return n
}
