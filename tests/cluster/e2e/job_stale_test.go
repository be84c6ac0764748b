package e2e

// A Job worker reading a cache that lacks an existing Job (a stale cache: a new leader, an
// informer relisting after an apiserver restart) must not take the Job's pods for orphans and
// remove their tracking finalizer: a pod losing it before the Job counted it is lost from the
// Job's status, and the Job creates a replacement (over-creation seen by TestChaos). The worker
// confirms with a live GET of the Job first. The stale cache is made by the test seam
// KCMD_TEST_JOB_CACHE_MISS_NS (the worker reads every Job of that namespace as missing);
// the negative control is a second namespace, named by KCMD_TEST_JOB_UNCONFIRMED_NS, where the
// worker also skips the GET (the behaviour before it): there the finalizer must go.

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// hjOwnPod creates a running pod that j controls, with the tracking finalizer, as the Job
// controller would have made it (the worker under test never sees the Job, so it makes none).
func hjOwnPod(t *testing.T, j *batchv1.Job, name string) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:  j.Namespace,
			Name:       name,
			Labels:     j.Spec.Selector.MatchLabels,
			Finalizers: []string{batchv1.JobTrackingFinalizer},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "batch/v1", Kind: "Job", Name: j.Name, UID: j.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: *j.Spec.Template.Spec.DeepCopy(),
	}
	out, err := env.Client.CoreV1().Pods(j.Namespace).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s/%s: %v", j.Namespace, name, err)
	}
	return out
}

func TestJob_StaleCacheKeepsFinalizers(t *testing.T) {
	guarded, control := Namespace(t), Namespace(t)
	hjStripFinalizers(t, guarded)
	hjStripFinalizers(t, control)
	p := startKcmd(t, []string{"KCMD_TEST_JOB_CACHE_MISS_NS=" + guarded, "KCMD_TEST_JOB_UNCONFIRMED_NS=" + control},
		"--controllers=job-controller", "--leader-elect=false", "--secure-port=0", "--concurrent-job-syncs=2", "--v=2")
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	Eventually(t, hjWait, "the seams announced", func() (bool, string) {
		return p.Logged("KCMD_TEST_JOB_CACHE_MISS_NS="+guarded) && p.Logged("KCMD_TEST_JOB_UNCONFIRMED_NS="+control), ""
	})
	jobs := map[string]*batchv1.Job{}
	for _, ns := range []string{guarded, control} {
		jb := hjJob(ns, "stale")
		jb.Spec.Parallelism = ptr.To[int32](1)
		jobs[ns] = hjCreate(t, jb)
		hjOwnPod(t, jobs[ns], "stale-running")
	}
	finalizer := func(ns string) (bool, string) {
		pod, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), "stale-running", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return hjHasFinalizer(pod), ""
	}
	// the negative control: without the GET the worker strips the finalizer of a pod whose Job
	// exists (this shows the pods' key is synced with the Job missing from the cache)
	Eventually(t, hjWait, "the control pod without the finalizer", func() (bool, string) {
		has, msg := finalizer(control)
		return !has && msg == "", msg
	})
	// the guarded namespace's key was synced the same way, by the same events; wake it once
	// more with a Job update and give the worker its retries
	hjUpdate(t, jobs[guarded], func(j *batchv1.Job) {
		if j.Annotations == nil {
			j.Annotations = map[string]string{}
		}
		j.Annotations["kcmd.test/poke"] = "1"
	})
	Eventually(t, hjWait, "the worker declining to release the guarded pod", func() (bool, string) {
		return p.Logged(guarded + "/stale: the Job exists with uid " + string(jobs[guarded].UID)), ""
	})
	time.Sleep(2 * time.Second)
	if has, msg := finalizer(guarded); !has {
		t.Fatalf("the pod of an existing Job lost its tracking finalizer while the cache lacked the Job %s", msg)
	}
}
