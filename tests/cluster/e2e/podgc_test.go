package e2e

// kcmd's pod garbage collector (pod-garbage-collector-controller, docs/podgc.md) against the real
// cluster, upstream kube-controller-manager not running. The cases are upstream's
// test/integration/podgc/podgc_test.go (v1.37) plus the collectors it has no integration test
// for (unscheduled terminating pods, terminated pods over --terminated-pod-gc-threshold).
//
// Upstream's integration test shortens the 20 s period and the 40 s quarantine through
// NewPodGCInternal; kube-controller-manager has no flag for either, and kcmd keeps them fixed as
// kcm does. So the cases that wait for passes run as parallel subtests of one test sharing one
// kcmd: the slowest (an orphaned pod: the node missing at a pass, 40 s quarantine, the next pass)
// takes 40-80 s, and the whole group about that long.

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

const pgcFinalizer = "test.k8s.io/finalizer"

// pgcStart runs kcmd with only the pod garbage collector and /metrics served without a token.
// The pod GC acts as kube-system/pod-garbage-collector (--use-service-account-credentials), so
// every request it makes must be allowed by upstream's bootstrap role
// system:controller:pod-garbage-collector (pods list/watch/delete, pods/status patch, nodes
// get/list/watch).
func pgcStart(t *testing.T, extra ...string) (*kcmdProc, int) {
	t.Helper()
	port := gcxFreePort(t)
	flags := append([]string{"--controllers=pod-garbage-collector-controller", "--secure-port=" + strconv.Itoa(port),
		"--bind-address=127.0.0.1", "--authorization-always-allow-paths=/healthz,/metrics",
		"--use-service-account-credentials", "--leader-elect=false", "--v=4"}, extra...)
	p := startKcmd(t, nil, flags...)
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	Eventually(t, 60*time.Second, "the pod GC's caches synced", func() (bool, string) {
		return p.Logged("Caches are synced for pod-garbage-collector-controller"), "not yet"
	})
	if !p.Logged("using service account kube-system/pod-garbage-collector") {
		t.Fatal("the pod GC does not act as its service account")
	}
	return p, port
}

// pgcNode creates a Node (Ready as given) and deletes it when t ends.
func pgcNode(t *testing.T, name string, ready corev1.ConditionStatus) *corev1.Node {
	t.Helper()
	ctx := context.Background()
	n, err := env.Client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating node %s: %v", name, err)
	}
	t.Cleanup(func() { _ = env.Client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready,
		LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	if n, err = env.Client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("node %s status: %v", name, err)
	}
	return n
}

// pgcRemoveFinalizers lets a pod kept by pgcFinalizer go when t ends.
func pgcRemoveFinalizers(t *testing.T, ns, name string) {
	t.Cleanup(func() {
		ctx := context.Background()
		patch := []byte(`{"metadata":{"finalizers":null}}`)
		_, _ = env.Client.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
		_ = env.Client.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	})
}

func pgcSetPhase(t *testing.T, p *corev1.Pod, phase corev1.PodPhase, reason string) *corev1.Pod {
	t.Helper()
	p.Status.Phase = phase
	p.Status.Reason = reason
	out, err := env.Client.CoreV1().Pods(p.Namespace).UpdateStatus(context.Background(), p, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("setting phase %s of %s: %v", phase, p.Name, err)
	}
	return out
}

func pgcGet(t *testing.T, ns, name string) (*corev1.Pod, bool) {
	t.Helper()
	p, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return p, true
}

// pgcWaitEvicted waits for testutils.PodIsGettingEvicted: the pod has a deletionTimestamp (kept by
// its finalizer) or is gone.
func pgcWaitEvicted(t *testing.T, ns, name string, timeout time.Duration) *corev1.Pod {
	t.Helper()
	var p *corev1.Pod
	Eventually(t, timeout, "pod "+name+" getting evicted", func() (bool, string) {
		var ok bool
		if p, ok = pgcGet(t, ns, name); !ok {
			return true, ""
		}
		return p.DeletionTimestamp != nil, fmt.Sprintf("phase %s, no deletionTimestamp", p.Status.Phase)
	})
	return p
}

func pgcCondition(p *corev1.Pod, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// pgcCheckOrphanCondition checks the DisruptionTarget condition upstream's cases want (all fields
// but lastTransitionTime), or its absence.
func pgcCheckOrphanCondition(t *testing.T, p *corev1.Pod, want bool) {
	t.Helper()
	c := pgcCondition(p, corev1.DisruptionTarget)
	if !want {
		if c != nil {
			t.Errorf("pod %s has an unexpected DisruptionTarget condition: %+v", p.Name, *c)
		}
		return
	}
	pgcCheckOrphanConditionGen(t, p, 1)
}

// pgcCheckOrphanConditionGen: the pod GC's DisruptionTarget, patched when the pod's generation
// was gen (1 for a pod the pod GC deletes itself; a pod deleted before has a higher one).
func pgcCheckOrphanConditionGen(t *testing.T, p *corev1.Pod, gen int64) {
	t.Helper()
	c := pgcCondition(p, corev1.DisruptionTarget)
	if c == nil {
		t.Fatalf("pod %s has no DisruptionTarget condition: %+v", p.Name, p.Status.Conditions)
	}
	if c.Status != corev1.ConditionTrue || c.Reason != "DeletionByPodGC" || c.Message != "PodGC: node no longer exists" ||
		c.ObservedGeneration != gen || c.LastTransitionTime.IsZero() {
		// observedGeneration: the pod's generation when it was patched, 1 (the deletion
		// that follows bumps metadata.generation to 2), as upstream's cases want
		t.Errorf("pod %s: DisruptionTarget %+v, want True/DeletionByPodGC/\"PodGC: node no longer exists\", observedGeneration %d", p.Name, *c, gen)
	}
}

// pgcMetric reads one series of kcmd's /metrics (0 when absent).
func pgcMetric(t *testing.T, port int, name, ns, reason string) float64 {
	t.Helper()
	code, _, body := gcxGet(t, port, "/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	prefix := fmt.Sprintf("%s{namespace=%q,reason=%q} ", name, ns, reason)
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, prefix) {
			v, err := strconv.ParseFloat(strings.TrimPrefix(l, prefix), 64)
			if err != nil {
				t.Fatalf("%s: %v", l, err)
			}
			return v
		}
	}
	return 0
}

func pgcWaitMetric(t *testing.T, port int, name, ns, reason string, want float64) {
	t.Helper()
	Eventually(t, 45*time.Second, fmt.Sprintf("%s{%s,%s} = %v", name, ns, reason, want), func() (bool, string) {
		v := pgcMetric(t, port, name, ns, reason)
		return v == want, fmt.Sprintf("%v", v)
	})
}

func pgcPod(ns, name, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "foo", Image: "bar"}}},
	}
}

// TestPodGC_Scenarios: upstream's TestPodGcOrphanedPodsWithFinalizer,
// TestTerminatingOnOutOfServiceNode and TestPodGcForPodsWithDuplicatedFieldKeys, and an
// unscheduled terminating pod, on one kcmd; then the counters those deletions leave on /metrics.
func TestPodGC_Scenarios(t *testing.T) {
	_, port := pgcStart(t)
	const orphanWait = 150 * time.Second      // a pass (20 s) + the quarantine (40 s) + a pass, with margin
	counts := map[string]map[string]float64{} // namespace -> reason -> pods force-deleted
	record := func(ns, reason string, n float64) {
		if counts[ns] == nil {
			counts[ns] = map[string]float64{}
		}
		counts[ns][reason] += n
	}
	newNS := func(t *testing.T) string { return rsNamespace(t) }

	t.Run("group", func(t *testing.T) {
		// t.Run from goroutines rather than t.Parallel: `go test -parallel` defaults to
		// GOMAXPROCS (2 here), which would run these minute-long waits two at a time
		var wg sync.WaitGroup
		run := func(name string, f func(t *testing.T)) {
			wg.Add(1)
			go func() { defer wg.Done(); t.Run(name, f) }()
		}
		defer wg.Wait()
		// TestPodGcOrphanedPodsWithFinalizer: a pod on a node that is then deleted is marked
		// Failed (with DisruptionTarget) unless it is Succeeded or Failed already, and deleted.
		for _, tc := range []struct {
			name      string
			phase     corev1.PodPhase
			wantPhase corev1.PodPhase
			wantCond  bool
		}{
			{"OrphanedPending", corev1.PodPending, corev1.PodFailed, true},
			{"OrphanedSucceeded", corev1.PodSucceeded, corev1.PodSucceeded, false},
			{"OrphanedFailed", corev1.PodFailed, corev1.PodFailed, false},
		} {
			ns := newNS(t)
			record(ns, "orphaned", 1)
			run(tc.name, func(t *testing.T) {
				node := pgcNode(t, ns+"-node", corev1.ConditionTrue)
				p := pgcPod(ns, "testpod", node.Name)
				p.Finalizers = []string{pgcFinalizer}
				p = mustCreatePod(t, p)
				pgcRemoveFinalizers(t, ns, p.Name)
				p = pgcSetPhase(t, p, tc.phase, "")
				if err := env.Client.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{}); err != nil {
					t.Fatalf("deleting node: %v", err)
				}
				p = pgcWaitEvicted(t, ns, p.Name, orphanWait)
				if p == nil {
					t.Fatal("the pod is gone: its finalizer should have kept it")
				}
				pgcCheckOrphanCondition(t, p, tc.wantCond)
				if p.Status.Phase != tc.wantPhase {
					t.Errorf("phase %s, want %s", p.Status.Phase, tc.wantPhase)
				}
				if g := p.DeletionGracePeriodSeconds; g == nil || *g != 0 {
					t.Errorf("deletionGracePeriodSeconds %v, want 0 (a force deletion)", g)
				}
			})
		}

		// TestPodGcForPodsWithDuplicatedFieldKeys (issues 118261, 113482): the status patch
		// works for pods whose spec has duplicated keys.
		for _, tc := range []struct {
			name string
			edit func(*corev1.Pod)
		}{
			{"DuplicatedEnv", func(p *corev1.Pod) {
				p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "XYZ", Value: "1"}, {Name: "XYZ", Value: "2"}}
			}},
			{"DuplicatedPorts", func(p *corev1.Pod) {
				p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 93, HostPort: 9376}, {ContainerPort: 93, HostPort: 9377}}
			}},
		} {
			ns := newNS(t)
			record(ns, "orphaned", 1)
			run(tc.name, func(t *testing.T) {
				p := pgcPod(ns, "testpod", "non-existing-node-"+ns)
				p.Finalizers = []string{pgcFinalizer}
				tc.edit(p)
				p = mustCreatePod(t, p)
				pgcRemoveFinalizers(t, ns, p.Name)
				p = pgcWaitEvicted(t, ns, p.Name, orphanWait)
				if p == nil {
					t.Fatal("the pod is gone: its finalizer should have kept it")
				}
				pgcCheckOrphanCondition(t, p, true)
				if p.Status.Phase != corev1.PodFailed {
					t.Errorf("phase %s, want Failed", p.Status.Phase)
				}
			})
		}

		// UpdatePodCondition (TestGCInspectingPatchedPodBeforeDeletion's rule): an orphaned pod
		// that already has DisruptionTarget=True keeps that condition's lastTransitionTime;
		// reason and message become the pod GC's. kcmd reads the current condition before the
		// patch with a request its service account is allowed to make.
		{
			ns := newNS(t)
			record(ns, "orphaned", 1)
			run("OrphanedKeepsDisruptionTime", func(t *testing.T) {
				p := pgcPod(ns, "testpod", "non-existing-node-"+ns)
				p.Finalizers = []string{pgcFinalizer}
				p = mustCreatePod(t, p)
				pgcRemoveFinalizers(t, ns, p.Name)
				// The pod is deleted gracefully before it gets its old DisruptionTarget: a live
				// pod with a DisruptionTarget an hour old is what the disruption controller
				// resets to False (syncStalePodDisruption acts on non-terminating pods only),
				// and the suite's shared disruption-controller kcmd (disruption_test.go) may be
				// running. The pod GC collects orphaned pods whether terminating or not.
				if err := env.Client.CoreV1().Pods(ns).Delete(context.Background(), p.Name,
					metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](300)}); err != nil {
					t.Fatal(err)
				}
				p, _ = pgcGet(t, ns, p.Name)
				deletedGen := p.Generation
				old := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
				p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget,
					Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI", Message: "earlier", LastTransitionTime: old})
				p = pgcSetPhase(t, p, corev1.PodRunning, "")
				Eventually(t, orphanWait, "the pod marked Failed and force-deleted", func() (bool, string) {
					var ok bool
					if p, ok = pgcGet(t, ns, p.Name); !ok {
						t.Fatal("the pod is gone: its finalizer should have kept it")
					}
					g := p.DeletionGracePeriodSeconds
					return p.Status.Phase == corev1.PodFailed && g != nil && *g == 0,
						fmt.Sprintf("phase %s, deletionGracePeriodSeconds %s", p.Status.Phase, pgcGrace(g))
				})
				pgcCheckOrphanConditionGen(t, p, deletedGen)
				if c := pgcCondition(p, corev1.DisruptionTarget); c != nil && !c.LastTransitionTime.Equal(&old) {
					t.Errorf("lastTransitionTime %v, want the earlier %v kept", c.LastTransitionTime, old)
				}
				if p.Status.Phase != corev1.PodFailed {
					t.Errorf("phase %s, want Failed", p.Status.Phase)
				}
			})
		}

		// TestTerminatingOnOutOfServiceNode: a terminating pod on a not-ready node that gets the
		// out-of-service taint is marked Failed (no DisruptionTarget) and force-deleted.
		for _, tc := range []struct {
			name          string
			withFinalizer bool
		}{
			{"OutOfServiceWithFinalizer", true},
			{"OutOfServiceNoFinalizer", false},
		} {
			ns := newNS(t)
			record(ns, "out-of-service", 1)
			run(tc.name, func(t *testing.T) {
				ctx := context.Background()
				node := pgcNode(t, ns+"-node", corev1.ConditionFalse)
				p := pgcPod(ns, "testpod", node.Name)
				if tc.withFinalizer {
					p.Finalizers = []string{pgcFinalizer}
				}
				p = mustCreatePod(t, p)
				if tc.withFinalizer {
					pgcRemoveFinalizers(t, ns, p.Name)
				}
				p = pgcSetPhase(t, p, corev1.PodRunning, "")
				if err := env.Client.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](300)}); err != nil {
					t.Fatal(err)
				}
				pgcWaitEvicted(t, ns, p.Name, 15*time.Second)
				// no taint yet: two passes go by and the pod stays as it is
				time.Sleep(45 * time.Second)
				if q, ok := pgcGet(t, ns, p.Name); !ok || q.Status.Phase != corev1.PodRunning || *q.DeletionGracePeriodSeconds != 300 {
					t.Fatalf("the pod was collected before its node got the out-of-service taint: %v", q)
				}
				node, err := env.Client.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: "node.kubernetes.io/out-of-service", Effect: corev1.TaintEffectNoExecute})
				if _, err := env.Client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
				// PodGC patches the phase first and force-deletes (grace 0) after it: a poll
				// between the two sees Failed with the old grace period, so both are awaited.
				Eventually(t, 60*time.Second, "the pod marked Failed and force-deleted / deleted", func() (bool, string) {
					q, ok := pgcGet(t, ns, p.Name)
					if !ok {
						return !tc.withFinalizer, "gone"
					}
					g := q.DeletionGracePeriodSeconds
					return tc.withFinalizer && q.Status.Phase == corev1.PodFailed && g != nil && *g == 0,
						fmt.Sprintf("phase %s, deletionGracePeriodSeconds %s", q.Status.Phase, pgcGrace(g))
				})
				if q, ok := pgcGet(t, ns, p.Name); ok {
					pgcCheckOrphanCondition(t, q, false)
				}
			})
		}

		// gcUnscheduledTerminating: a terminating pod never bound to a node is marked Failed and
		// force-deleted (grace period 0); one already Succeeded is deleted without a patch.
		for _, tc := range []struct {
			name      string
			phase     corev1.PodPhase
			wantPhase corev1.PodPhase
		}{
			{"UnscheduledPending", corev1.PodPending, corev1.PodFailed},
			{"UnscheduledSucceeded", corev1.PodSucceeded, corev1.PodSucceeded},
		} {
			ns := newNS(t)
			record(ns, "unscheduled", 1)
			run(tc.name, func(t *testing.T) {
				p := pgcPod(ns, "testpod", "")
				p.Finalizers = []string{pgcFinalizer}
				p = mustCreatePod(t, p)
				pgcRemoveFinalizers(t, ns, p.Name)
				p = pgcSetPhase(t, p, tc.phase, "")
				if err := env.Client.CoreV1().Pods(ns).Delete(context.Background(), p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](300)}); err != nil {
					t.Fatal(err)
				}
				// an unscheduled pod's deletion gets grace 0 from the apiserver itself: what
				// shows the pod GC's pass is its counter, then the phase it set
				pgcWaitMetric(t, port, "pod_gc_collector_force_delete_pods_total", ns, "unscheduled", 1)
				q, _ := pgcGet(t, ns, p.Name)
				if q.Status.Phase != tc.wantPhase {
					t.Errorf("phase %s, want %s", q.Status.Phase, tc.wantPhase)
				}
				pgcCheckOrphanCondition(t, q, false)
			})
		}
	})
	if t.Failed() {
		return
	}
	// every force deletion above was counted once under its namespace and reason, no error
	for ns, m := range counts {
		for reason, n := range m {
			pgcWaitMetric(t, port, "pod_gc_collector_force_delete_pods_total", ns, reason, n)
			if v := pgcMetric(t, port, "pod_gc_collector_force_delete_pod_errors_total", ns, reason); v != 0 {
				t.Errorf("errors{%s,%s} = %v, want 0", ns, reason, v)
			}
		}
	}
}

// TestPodGC_TerminatedOverThreshold: with --terminated-pod-gc-threshold, the terminated pods over
// the threshold are deleted, evicted ones first, then the oldest (upstream's
// byEvictionAndCreationTimestamp); running pods do not count. The pods exist before kcmd starts,
// so its first pass (right after its caches sync) sees them all.
func TestPodGC_TerminatedOverThreshold(t *testing.T) {
	ctx := context.Background()
	ns := rsNamespace(t)
	// the cluster's terminated pods (other tests' leftovers) count too: sort them all as
	// upstream does to know which of ours must go
	type tp struct {
		ns, name string
		created  time.Time
		evicted  bool
	}
	var all []tp
	list, err := env.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range list.Items {
		if p.Status.Phase != corev1.PodPending && p.Status.Phase != corev1.PodRunning && p.Status.Phase != corev1.PodUnknown {
			all = append(all, tp{p.Namespace, p.Name, p.CreationTimestamp.Time, p.Status.Phase == corev1.PodFailed && p.Status.Reason == "Evicted"})
		}
	}
	foreign := len(all)
	// p0..p4 terminated (p3 Failed+Evicted, created after p0..p2), r0 Running
	phases := []struct {
		name   string
		phase  corev1.PodPhase
		reason string
	}{
		{"p0", corev1.PodSucceeded, ""}, {"p1", corev1.PodFailed, ""}, {"p2", corev1.PodSucceeded, ""},
		{"p3", corev1.PodFailed, "Evicted"}, {"p4", corev1.PodFailed, ""}, {"r0", corev1.PodRunning, ""},
	}
	for _, ph := range phases {
		p := mustCreatePod(t, pgcPod(ns, ph.name, "node-"+ns))
		p = pgcSetPhase(t, p, ph.phase, ph.reason)
		if ph.phase != corev1.PodRunning {
			all = append(all, tp{ns, p.Name, p.CreationTimestamp.Time, ph.reason == "Evicted"})
		}
		// distinct creation seconds would not be needed (the name breaks ties), but the
		// order below relies on the timestamps being non-decreasing, which they are
	}
	// the node exists, so the orphan collector leaves these pods alone
	pgcNode(t, "node-"+ns, corev1.ConditionTrue)
	threshold := foreign + 2
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.evicted != b.evicted {
			return a.evicted
		}
		if !a.created.Equal(b.created) {
			return a.created.Before(b.created)
		}
		return a.name < b.name
	})
	del := map[string]bool{}
	ours := 0
	for i := 0; i < len(all)-threshold; i++ {
		if all[i].ns == ns {
			del[all[i].name] = true
			ours++
		}
	}
	if foreign == 0 && (!del["p3"] || !del["p0"] || !del["p1"] || len(del) != 3) {
		t.Fatalf("test setup: expected p3 (evicted), p0, p1 to go, got %v", del)
	}
	_, port := pgcStart(t, "--terminated-pod-gc-threshold="+strconv.Itoa(threshold))
	Eventually(t, 60*time.Second, "the pods over the threshold deleted", func() (bool, string) {
		for name := range del {
			if _, ok := pgcGet(t, ns, name); ok {
				return false, name + " still exists"
			}
		}
		return true, ""
	})
	pgcWaitMetric(t, port, "pod_gc_collector_force_delete_pods_total", ns, "terminated", float64(ours))
	// a second pass (20 s later) finds the count at the threshold: nothing more goes
	time.Sleep(25 * time.Second)
	for _, ph := range phases {
		_, ok := pgcGet(t, ns, ph.name)
		if ok == del[ph.name] {
			t.Errorf("pod %s: exists %v, want %v", ph.name, ok, !del[ph.name])
		}
	}
	if v := pgcMetric(t, port, "pod_gc_collector_force_delete_pods_total", ns, "terminated"); v != float64(ours) {
		t.Errorf("force_delete_pods_total{terminated} = %v, want %d", v, ours)
	}
}

// TestPodGC_ThresholdZeroDisables: a --terminated-pod-gc-threshold <= 0 (here -1, which kcm's int32
// flag takes) turns the terminated-pod collector off, where a count-minus-threshold rule would
// delete every terminated pod; the other collectors still run (an unscheduled terminating pod
// goes, which also shows a pass ran).
func TestPodGC_ThresholdZeroDisables(t *testing.T) {
	ns := rsNamespace(t)
	for _, name := range []string{"done-a", "done-b"} {
		p := mustCreatePod(t, pgcPod(ns, name, ""))
		pgcSetPhase(t, p, corev1.PodSucceeded, "")
	}
	u := mustCreatePod(t, pgcPod(ns, "unscheduled", ""))
	if err := env.Client.CoreV1().Pods(ns).Delete(context.Background(), u.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](300)}); err != nil {
		t.Fatal(err)
	}
	pgcStart(t, "--terminated-pod-gc-threshold=-1")
	Eventually(t, 40*time.Second, "the unscheduled terminating pod deleted", func() (bool, string) {
		_, ok := pgcGet(t, ns, u.Name)
		return !ok, "still there"
	})
	for _, name := range []string{"done-a", "done-b"} {
		if _, ok := pgcGet(t, ns, name); !ok {
			t.Errorf("terminated pod %s deleted with the collector disabled", name)
		}
	}
}

// pgcGrace prints a deletionGracePeriodSeconds for a failure message.
func pgcGrace(g *int64) string {
	if g == nil {
		return "unset"
	}
	return fmt.Sprint(*g)
}
