package e2e

// kcmd's ttl-after-finished-controller (docs/ttlafterfinished.md) on a real kube-apiserver, with
// no upstream kube-controller-manager running. Upstream v1.37 has no test/integration for this
// controller; its scenario is test/e2e/apps/ttl_after_finished.go ("job should be deleted once it
// finishes after TTL seconds"), ported as TestTTLAfterFinished_JobDeletedAfterTTL, and the
// controller's other paths (Failed Jobs, no TTL, a TTL changed after the Job finished, a Job
// being deleted) are kcmd's additions. No job controller runs: the tests finish a Job by writing
// its status through the status subresource, with the conditions the apiserver's Job status
// validation requires of a finished Job (SuccessCriteriaMet before Complete, FailureTarget
// before Failed).

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

const ttlDummyFinalizer = "k8s.io/dummy-finalizer"

var (
	kcmdTTL     *kcmdProc
	kcmdTTLOnce sync.Once
	ttlProcMu   sync.Mutex
)

func useSharedTTL(t *testing.T) {
	t.Helper()
	ttlProcMu.Lock()
	kcmdTTLOnce.Do(func() {
		kcmdTTL = startKcmdShared(t, "--controllers=ttl-after-finished-controller", "--secure-port=0",
			"--leader-elect=false", "--concurrent-ttl-after-finished-syncs=5", "--v=4")
	})
	p := kcmdTTL
	ttlProcMu.Unlock()
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
}

// ttlJob is a one-pod Job with the given TTL (nil: none). Nothing runs it: spec.managedBy names
// no real controller, so a Job controller running beside these parallel tests (the garbage
// collector scenarios run upstream kcm's) leaves its status to the test.
func ttlJob(ns, name string, ttl *int32) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: batchv1.JobSpec{
			ManagedBy:               ptr.To("kcmd.test/nobody"),
			TTLSecondsAfterFinished: ttl,
			Parallelism:             ptr.To[int32](1),
			Completions:             ptr.To[int32](1),
			BackoffLimit:            ptr.To[int32](2),
			Template: corev1.PodTemplateSpec{
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "c", Image: "fakeimage"}},
				},
			},
		},
	}
}

func mustCreateJob(t *testing.T, j *batchv1.Job) *batchv1.Job {
	t.Helper()
	out, err := env.Client.BatchV1().Jobs(j.Namespace).Create(context.Background(), j, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating job %s: %v", j.Name, err)
	}
	return out
}

// finishJob writes the status of a finished Job (Complete, or Failed) and returns the finish
// time it wrote (the Complete/Failed condition's lastTransitionTime, whole seconds).
func finishJob(t *testing.T, ns, name string, failed bool) time.Time {
	t.Helper()
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	start := metav1.NewTime(now.Add(-time.Second))
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		j, err := env.Client.BatchV1().Jobs(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		j.Status.StartTime = &start
		cond := func(typ batchv1.JobConditionType, reason string) batchv1.JobCondition {
			return batchv1.JobCondition{Type: typ, Status: corev1.ConditionTrue, Reason: reason, Message: "set by the test",
				LastProbeTime: now, LastTransitionTime: now}
		}
		if failed {
			j.Status.Failed = 1
			j.Status.Conditions = append(j.Status.Conditions, cond(batchv1.JobFailureTarget, "BackoffLimitExceeded"),
				cond(batchv1.JobFailed, "BackoffLimitExceeded"))
		} else {
			j.Status.Succeeded = 1
			j.Status.CompletionTime = &now
			j.Status.Conditions = append(j.Status.Conditions, cond(batchv1.JobSuccessCriteriaMet, "CompletionsReached"),
				cond(batchv1.JobComplete, "CompletionsReached"))
		}
		_, err = env.Client.BatchV1().Jobs(ns).UpdateStatus(context.Background(), j, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("finishing job %s: %v", name, err)
	}
	return now.Time
}

// waitJobDeleting waits until the Job has a deletionTimestamp (it keeps the dummy finalizer).
func waitJobDeleting(t *testing.T, ns, name string, timeout time.Duration) *batchv1.Job {
	t.Helper()
	var j *batchv1.Job
	Eventually(t, timeout, fmt.Sprintf("job %s/%s being deleted", ns, name), func() (bool, string) {
		var err error
		j, err = env.Client.BatchV1().Jobs(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return j.DeletionTimestamp != nil, "no deletionTimestamp"
	})
	return j
}

// removeDummyFinalizer lets a Job being deleted go (upstream's cleanupJob). A foreground
// deletion also leaves the foregroundDeletion finalizer, which the garbage collector removes once
// the Job has no dependents; no collector runs beside these tests (a second one would cover for
// a miss of the GC tests' shared collector), so it is removed here too: the Job has no pods.
func removeDummyFinalizer(t *testing.T, ns, name string) {
	t.Helper()
	if err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		j, err := env.Client.BatchV1().Jobs(ns).Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		j.Finalizers = slices.DeleteFunc(j.Finalizers, func(f string) bool {
			return f == ttlDummyFinalizer || (j.DeletionTimestamp != nil && f == metav1.FinalizerDeleteDependents)
		})
		_, err = env.Client.BatchV1().Jobs(ns).Update(context.Background(), j, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatalf("removing the dummy finalizer of %s: %v", name, err)
	}
}

func jobGone(t *testing.T, ns, name string) {
	t.Helper()
	Eventually(t, rsTimeout, fmt.Sprintf("job %s/%s gone", ns, name), func() (bool, string) {
		_, err := env.Client.BatchV1().Jobs(ns).Get(context.Background(), name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})
}

// assertKept checks for d that the Job is not being deleted.
func assertKept(t *testing.T, ns, name string, d time.Duration) {
	t.Helper()
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		j, err := env.Client.BatchV1().Jobs(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("job %s: %v", name, err)
		}
		if j.DeletionTimestamp != nil {
			t.Fatalf("job %s deleted at %v, want it kept", name, j.DeletionTimestamp)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestTTLAfterFinished_JobDeletedAfterTTL: upstream's "job should be deleted once it finishes
// after TTL seconds": a Job with a 10 s TTL (and a finalizer that keeps it visible) is deleted
// once it finishes, not before finish time + TTL; the deletion is a foreground one (the
// apiserver adds the foregroundDeletion finalizer); without the dummy finalizer it goes.
func TestTTLAfterFinished_JobDeletedAfterTTL(t *testing.T) {
	t.Parallel()
	useSharedTTL(t)
	ns := rsNamespace(t)
	j := ttlJob(ns, "rand-non-local", ptr.To[int32](10))
	j.Finalizers = []string{ttlDummyFinalizer}
	created := mustCreateJob(t, j)
	t.Cleanup(func() { removeDummyFinalizer(t, ns, j.Name) })
	// a dependent that blocks its owner's foreground deletion and stays (a finalizer of its
	// own): a garbage collector running beside this test (the GC scenarios run in parallel)
	// would otherwise remove foregroundDeletion before the check below could see it
	dep := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "blocking-dependent",
		Finalizers: []string{ttlDummyFinalizer},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: created.Name,
			UID: created.UID, BlockOwnerDeletion: ptr.To(true)}}}}
	if _, err := env.Client.CoreV1().ConfigMaps(ns).Create(context.Background(), dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dropDepFinalizer := func() {
		_ = retry.RetryOnConflict(retry.DefaultBackoff, func() error {
			cm, err := env.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), dep.Name, metav1.GetOptions{})
			if err != nil {
				return nil
			}
			cm.Finalizers = nil
			_, err = env.Client.CoreV1().ConfigMaps(ns).Update(context.Background(), cm, metav1.UpdateOptions{})
			return err
		})
	}
	t.Cleanup(dropDepFinalizer)
	finished := finishJob(t, ns, j.Name, false)
	got := waitJobDeleting(t, ns, j.Name, 40*time.Second)
	expire := finished.Add(10 * time.Second)
	if got.DeletionTimestamp.Time.Before(expire) {
		t.Fatalf("deleted at %v, before finish %v + TTL 10s", got.DeletionTimestamp.Time, finished)
	}
	if !slices.Contains(got.Finalizers, metav1.FinalizerDeleteDependents) {
		t.Errorf("finalizers %v: want %s (a foreground deletion)", got.Finalizers, metav1.FinalizerDeleteDependents)
	}
	t.Logf("finished %v, deleted %v (%.1f s after expiry)", finished, got.DeletionTimestamp.Time,
		got.DeletionTimestamp.Time.Sub(expire).Seconds())
	dropDepFinalizer()
	removeDummyFinalizer(t, ns, j.Name)
	jobGone(t, ns, j.Name)
}

// TestTTLAfterFinished_FailedJobZeroTTL: a Failed Job with TTL 0 is deleted right away.
func TestTTLAfterFinished_FailedJobZeroTTL(t *testing.T) {
	t.Parallel()
	useSharedTTL(t)
	ns := rsNamespace(t)
	j := ttlJob(ns, "failed", ptr.To[int32](0))
	j.Finalizers = []string{ttlDummyFinalizer}
	mustCreateJob(t, j)
	t.Cleanup(func() { removeDummyFinalizer(t, ns, j.Name) })
	assertKept(t, ns, j.Name, 2*time.Second) // unfinished: kept although its TTL is 0
	finished := finishJob(t, ns, j.Name, true)
	got := waitJobDeleting(t, ns, j.Name, 15*time.Second)
	t.Logf("failed at %v, deleted %v", finished, got.DeletionTimestamp.Time)
}

// TestTTLAfterFinished_NoTTL: a finished Job without a TTL is never deleted.
func TestTTLAfterFinished_NoTTL(t *testing.T) {
	t.Parallel()
	useSharedTTL(t)
	ns := rsNamespace(t)
	mustCreateJob(t, ttlJob(ns, "keep", nil))
	finishJob(t, ns, "keep", false)
	assertKept(t, ns, "keep", 5*time.Second)
}

// TestTTLAfterFinished_TTLChanged: a Job that finished with a TTL of an hour is kept; when its TTL
// is lowered to 2 s the update makes the controller look again (the requeue of an hour is not
// waited for) and it is deleted; lowering it is what an uncached read must see: the decision to
// delete is made on the fresh Job.
func TestTTLAfterFinished_TTLChanged(t *testing.T) {
	t.Parallel()
	useSharedTTL(t)
	ns := rsNamespace(t)
	j := ttlJob(ns, "changed", ptr.To[int32](3600))
	j.Finalizers = []string{ttlDummyFinalizer}
	mustCreateJob(t, j)
	t.Cleanup(func() { removeDummyFinalizer(t, ns, j.Name) })
	finished := finishJob(t, ns, j.Name, false)
	assertKept(t, ns, j.Name, 3*time.Second)
	if err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		cur, err := env.Client.BatchV1().Jobs(ns).Get(context.Background(), j.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Spec.TTLSecondsAfterFinished = ptr.To[int32](2)
		_, err = env.Client.BatchV1().Jobs(ns).Update(context.Background(), cur, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	got := waitJobDeleting(t, ns, j.Name, 15*time.Second)
	if got.DeletionTimestamp.Time.Before(finished.Add(2 * time.Second)) {
		t.Fatalf("deleted at %v, before finish %v + 2s", got.DeletionTimestamp.Time, finished)
	}
}

// TestTTLAfterFinished_TTLRaisedBeforeExpiry: a Job finished with a TTL of 4 s whose TTL is
// raised to an hour before it expires is kept (the requeued key finds the new TTL).
func TestTTLAfterFinished_TTLRaisedBeforeExpiry(t *testing.T) {
	t.Parallel()
	useSharedTTL(t)
	ns := rsNamespace(t)
	j := ttlJob(ns, "raised", ptr.To[int32](4))
	mustCreateJob(t, j)
	finishJob(t, ns, j.Name, false)
	if err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		cur, err := env.Client.BatchV1().Jobs(ns).Get(context.Background(), j.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Spec.TTLSecondsAfterFinished = ptr.To[int32](3600)
		_, err = env.Client.BatchV1().Jobs(ns).Update(context.Background(), cur, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	assertKept(t, ns, j.Name, 8*time.Second)
}
