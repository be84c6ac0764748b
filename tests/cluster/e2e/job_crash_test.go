package e2e

// The Job controller's worker killed (kill -9) while it creates a wave of pods and while it
// counts their completions: no pod beyond completions is ever created (the expectations in
// shared memory outlive the worker; the manager reclaims what it held), and succeeded ends
// exactly at completions (the status is written with the resourceVersion the count was based
// on, so a replay after a crash cannot count a pod twice). TestJob_CrashDetector is the
// negative control: it shows the pod tracker does see a surplus pod.

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// hjTracker counts every pod uid ever added in ns (from a watch started before the Job).
type hjTracker struct {
	mu   sync.Mutex
	uids map[string]bool
}

func hjTrack(t *testing.T, ns string) *hjTracker {
	t.Helper()
	tr := &hjTracker{uids: map[string]bool{}}
	w, err := env.Client.CoreV1().Pods(ns).Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	go func() {
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok && ev.Type == watch.Added {
				tr.mu.Lock()
				tr.uids[string(p.UID)] = true
				tr.mu.Unlock()
			}
		}
	}()
	return tr
}

func (tr *hjTracker) count() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return len(tr.uids)
}

func hjWorkers(mgr int) []int {
	var out []int
	for pid, comm := range childrenOf(mgr) {
		if comm == "kcmd-worker" {
			out = append(out, pid)
		}
	}
	return out
}

const hjCrashN = 40

func hjCrashStart(t *testing.T, ns string) *kcmdProc {
	// one worker process, so the kill hits the one creating; a low QPS stretches the wave;
	// a short orphan grace keeps the Job from waiting 60 s on the dead worker's expectations
	return hjStart(t, ns, "--concurrent-job-syncs=1", "--kube-api-qps=20", "--kube-api-burst=10",
		"--job-orphaned-expectations-grace=5s")
}

func TestJob_CrashDuringCreationAndCounting(t *testing.T) {
	ns := Namespace(t)
	p := hjCrashStart(t, ns)
	mgr := p.cmd.Process.Pid
	tr := hjTrack(t, ns)
	Eventually(t, 30*time.Second, "the job worker", func() (bool, string) {
		return len(hjWorkers(mgr)) == 1, fmt.Sprint(hjWorkers(mgr))
	})
	jb := hjJob(ns, "crash")
	jb.Spec.Parallelism = ptr.To[int32](hjCrashN)
	jb.Spec.Completions = ptr.To[int32](hjCrashN)
	j := hjCreate(t, jb)

	// kill the worker three times while the wave is being created
	kills := 0
	deadline := time.Now().Add(60 * time.Second)
	for kills < 3 && time.Now().Before(deadline) {
		n := tr.count()
		if n >= hjCrashN {
			break
		}
		if n > kills*8 {
			for _, pid := range hjWorkers(mgr) {
				if syscall.Kill(pid, syscall.SIGKILL) == nil {
					kills++
					t.Logf("kill -9 worker %d with %d pods created", pid, n)
				}
			}
			time.Sleep(300 * time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if kills == 0 {
		t.Fatal("the wave ended before any kill: nothing was tested")
	}
	validateJobPodsStatus(t, j, podsByStatus{Active: hjCrashN, Terminating: ptr.To[int32](0)})
	time.Sleep(3 * time.Second) // a surplus creation would show by now
	if n := tr.count(); n != hjCrashN {
		t.Fatalf("%d pods were ever created for completions %d", n, hjCrashN)
	}

	// finish every pod while the worker is killed mid-count
	pods := hjPods(t, j)
	var wg sync.WaitGroup
	for i := range pods {
		wg.Add(1)
		go func(p *corev1.Pod) {
			defer wg.Done()
			p.Status.Phase = corev1.PodSucceeded
			_, _ = env.Client.CoreV1().Pods(ns).UpdateStatus(context.Background(), p, metav1.UpdateOptions{})
		}(&pods[i])
		if i == hjCrashN/2 {
			for _, pid := range hjWorkers(mgr) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	wg.Wait()
	time.Sleep(500 * time.Millisecond)
	for _, pid := range hjWorkers(mgr) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	cur := validateJobCondition(t, j, batchv1.JobComplete, "")
	if cur.Status.Succeeded != hjCrashN || cur.Status.Failed != 0 {
		t.Fatalf("succeeded %d failed %d, want %d and 0", cur.Status.Succeeded, cur.Status.Failed, hjCrashN)
	}
	if n := tr.count(); n != hjCrashN {
		t.Fatalf("%d pods were ever created for completions %d", n, hjCrashN)
	}
}

// Negative control: a pod of the Job created behind the controller's back is seen by the
// tracker (and removed by the controller as surplus), so the counts above can fail.
func TestJob_CrashDetector(t *testing.T) {
	ns := Namespace(t)
	hjStart(t, ns)
	tr := hjTrack(t, ns)
	jb := hjJob(ns, "control")
	jb.Spec.Parallelism = ptr.To[int32](2)
	jb.Spec.Completions = ptr.To[int32](2)
	j := hjCreate(t, jb)
	validateJobPodsStatus(t, j, podsByStatus{Active: 2, Terminating: ptr.To[int32](0)})
	extra := &corev1.Pod{
		// the Job's pod labels: a pod not matching its selector would be released, not deleted
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "surplus", Labels: j.Spec.Template.Labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(j, batchv1.SchemeGroupVersion.WithKind("Job"))}},
		Spec: j.Spec.Template.Spec,
	}
	if _, err := env.Client.CoreV1().Pods(ns).Create(context.Background(), extra, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, hjWait, "2 active pods again", func() (bool, string) {
		n := 0
		for _, p := range hjPods(t, j) {
			if hjActive(&p) {
				n++
			}
		}
		return n == 2, fmt.Sprintf("%d active", n)
	})
	Eventually(t, 10*time.Second, "the tracker sees 3 pods", func() (bool, string) {
		return tr.count() == 3, fmt.Sprint(tr.count())
	})
	hjEvent(t, j, corev1.EventTypeNormal, "SuccessfulDelete", "")
}
