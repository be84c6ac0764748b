package e2e

// kcmd's taint-eviction-controller (docs/taint-eviction.md) against the real cluster, upstream
// kube-controller-manager not running it. Ported from upstream's test/e2e/node/taints.go (v1.37,
// [sig-node] NoExecuteTaintManager Single Pod and Multiple Pods) and the taint cases of
// pkg/controller/tainteviction's unit tests that need a cluster (a pod bound onto a node that
// is already tainted). There is no kubelet: a pod deleted with its grace period stays
// Terminating, so "evicted" is: the DisruptionTarget condition (True, DeletionByTaintManager,
// upstream's message) and metadata.deletionTimestamp set, plus the TaintManagerEviction Event.
// The time of the DELETE is deletionTimestamp - deletionGracePeriodSeconds (the apiserver sets
// the timestamp to now + grace), which lets the tests check an eviction never comes before its
// tolerationSeconds.
//
// One kcmd runs only taint-eviction-controller as kube-system/node-controller (upstream's client
// for it); the scenarios run at once, each on its own Node and namespace.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

const teTaintKey = "kcmd.test/evict"

func teStart(t *testing.T) (*kcmdProc, int) {
	t.Helper()
	port := gcxFreePort(t)
	p := startKcmd(t, nil, "--controllers=taint-eviction-controller", "--secure-port="+strconv.Itoa(port),
		"--bind-address=127.0.0.1", "--authorization-always-allow-paths=/healthz,/metrics",
		"--use-service-account-credentials", "--leader-elect=false", "--v=4")
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	Eventually(t, 60*time.Second, "the controller's worker and informers ready", func() (bool, string) {
		return p.Logged("taint-eviction-controller worker ready") && p.Logged("informers synced"), "not yet"
	})
	if !p.Logged("using service account kube-system/node-controller") {
		t.Fatal("the controller does not act as kube-system/node-controller")
	}
	return p, port
}

// teMetric: the value of an unlabelled sample (name exactly) on kcmd's /metrics.
func teMetric(t *testing.T, port int, name string) float64 {
	t.Helper()
	text, err := hmgGetMetrics(port)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", l, err)
			}
			return f
		}
	}
	t.Fatalf("no sample %s on /metrics", name)
	return 0
}

func teNode(t *testing.T, name string) {
	t.Helper()
	if _, err := env.Client.CoreV1().Nodes().Create(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating node %s: %v", name, err)
	}
	t.Cleanup(func() { _ = env.Client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

// teTaint sets the node's taints (NoExecute teTaintKey=value when on) and returns the time.
func teTaint(t *testing.T, node string, on bool) time.Time {
	t.Helper()
	patch := `{"spec":{"taints":null}}`
	if on {
		patch = `{"spec":{"taints":[{"key":"` + teTaintKey + `","value":"evictTaintVal","effect":"NoExecute"}]}}`
	}
	now := time.Now()
	if _, err := env.Client.CoreV1().Nodes().Patch(context.Background(), node, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("tainting node %s: %v", node, err)
	}
	return now
}

// tePod creates a pod bound to node; seconds < 0: no toleration, 0: tolerates forever, > 0:
// tolerates for that many seconds.
func tePod(t *testing.T, ns, name, node string, seconds int64) {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}}},
	}
	if seconds >= 0 {
		tol := corev1.Toleration{Key: teTaintKey, Operator: corev1.TolerationOpEqual, Value: "evictTaintVal", Effect: corev1.TaintEffectNoExecute}
		if seconds > 0 {
			tol.TolerationSeconds = ptr.To(seconds)
		}
		p.Spec.Tolerations = []corev1.Toleration{tol}
	}
	if _, err := env.Client.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating pod %s/%s: %v", ns, name, err)
	}
}

// teEvictedAt waits for the pod's eviction and checks what upstream writes; returns the time of
// the DELETE.
func teEvictedAt(t *testing.T, ns, name string, timeout time.Duration) time.Time {
	t.Helper()
	var at time.Time
	Eventually(t, timeout, "pod "+ns+"/"+name+" evicted", func() (bool, string) {
		p, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, "the pod is gone (not evicted with a grace period?)"
		}
		if err != nil {
			return false, err.Error()
		}
		if p.DeletionTimestamp == nil {
			return false, "not deleted"
		}
		var cond *corev1.PodCondition
		for i := range p.Status.Conditions {
			if p.Status.Conditions[i].Type == corev1.DisruptionTarget {
				cond = &p.Status.Conditions[i]
			}
		}
		if cond == nil || cond.Status != corev1.ConditionTrue || cond.Reason != "DeletionByTaintManager" ||
			cond.Message != "Taint manager: deleting due to NoExecute taint" || cond.ObservedGeneration != p.Generation-1 {
			return false, fmt.Sprintf("deleted, but condition %+v (generation %d)", cond, p.Generation)
		}
		at = p.DeletionTimestamp.Add(-time.Duration(ptr.Deref(p.DeletionGracePeriodSeconds, 0)) * time.Second)
		return true, ""
	})
	teEvent(t, ns, name, "Marking for deletion Pod "+ns+"/"+name)
	return at
}

// teStays checks for d that the pod is not deleted.
func teStays(t *testing.T, ns, name string, d time.Duration) {
	t.Helper()
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		p, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("pod %s/%s: %v", ns, name, err)
		}
		if p.DeletionTimestamp != nil {
			t.Fatalf("pod %s/%s was evicted", ns, name)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// tePatchTolerationSeconds sets the first toleration's tolerationSeconds (JSON: a number or null).
func tePatchTolerationSeconds(t *testing.T, ns, name, v string) {
	t.Helper()
	patch := `[{"op":"replace","path":"/spec/tolerations/0/tolerationSeconds","value":` + v + `}]`
	if _, err := env.Client.CoreV1().Pods(ns).Patch(context.Background(), name, types.JSONPatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patching pod %s/%s: %v", ns, name, err)
	}
}

func teEvent(t *testing.T, ns, pod, msg string) {
	t.Helper()
	Eventually(t, 20*time.Second, "Event "+msg, func() (bool, string) {
		l, err := env.Client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod})
		if err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, e := range l.Items {
			if e.Reason == "TaintManagerEviction" && e.Message == msg && e.Type == corev1.EventTypeNormal &&
				e.Source.Component == "taint-eviction-controller" && e.InvolvedObject.Kind == "Pod" {
				return true, ""
			}
			seen = append(seen, e.Reason+": "+e.Message)
		}
		return false, strings.Join(seen, "; ")
	})
}

func TestTaintEviction_Scenarios(t *testing.T) {
	_, port := teStart(t)
	suffix := strconv.FormatInt(time.Now().UnixNano()%100000, 10)

	t.Run("group", func(t *testing.T) {
		var wg sync.WaitGroup
		run := func(name string, f func(t *testing.T, ns, node string)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t.Run(name, func(t *testing.T) {
					ns := Namespace(t)
					node := "te-" + strings.ToLower(name) + "-" + suffix
					if len(node) > 63 {
						node = node[:63]
					}
					teNode(t, node)
					f(t, ns, node)
				})
			}()
		}
		defer wg.Wait()

		// taints.go: "evicts pods from tainted nodes"
		run("EvictsPodWithoutToleration", func(t *testing.T, ns, node string) {
			tePod(t, ns, "taint-eviction-1", node, -1)
			start := teTaint(t, node, true)
			at := teEvictedAt(t, ns, "taint-eviction-1", 30*time.Second)
			if at.Before(start.Add(-time.Second)) {
				t.Errorf("deleted at %v, before the taint (%v)", at, start)
			}
		})

		// taints.go: "doesn't evict pod with tolerations from tainted nodes"
		run("KeepsPodToleratingForever", func(t *testing.T, ns, node string) {
			tePod(t, ns, "taint-eviction-2", node, 0)
			teTaint(t, node, true)
			teStays(t, ns, "taint-eviction-2", 15*time.Second)
		})

		// taints.go: "eventually evict pod with finite tolerations from tainted nodes"
		run("EvictsPodAfterTolerationSeconds", func(t *testing.T, ns, node string) {
			tePod(t, ns, "taint-eviction-3", node, 8)
			start := teTaint(t, node, true)
			teStays(t, ns, "taint-eviction-3", 5*time.Second)
			at := teEvictedAt(t, ns, "taint-eviction-3", 40*time.Second)
			// deletionTimestamp has whole seconds: allow the truncation, never more
			if at.Before(start.Add(8*time.Second - time.Second)) {
				t.Errorf("evicted %v after the taint, before its 8 s", at.Sub(start))
			}
		})

		// taints.go: "removing taint cancels eviction"
		run("RemovingTaintCancelsEviction", func(t *testing.T, ns, node string) {
			tePod(t, ns, "taint-eviction-4", node, 8)
			teTaint(t, node, true)
			teStays(t, ns, "taint-eviction-4", 3*time.Second)
			teTaint(t, node, false)
			teEvent(t, ns, "taint-eviction-4", "Cancelling deletion of Pod "+ns+"/taint-eviction-4")
			teStays(t, ns, "taint-eviction-4", 12*time.Second)
		})

		// taints.go [Multiple Pods]: "only evicts pods without tolerations from tainted nodes"
		run("OnlyEvictsPodsWithoutTolerations", func(t *testing.T, ns, node string) {
			tePod(t, ns, "taint-eviction-a", node, -1)
			tePod(t, ns, "taint-eviction-b", node, 0)
			teTaint(t, node, true)
			teEvictedAt(t, ns, "taint-eviction-a", 30*time.Second)
			teStays(t, ns, "taint-eviction-b", 10*time.Second)
		})

		// taints.go [Multiple Pods]: "evicts pods with minTolerationSeconds"
		run("EvictsPodsInTolerationOrder", func(t *testing.T, ns, node string) {
			tePod(t, ns, "taint-eviction-b1", node, 5)
			tePod(t, ns, "taint-eviction-b2", node, 10)
			start := teTaint(t, node, true)
			a1 := teEvictedAt(t, ns, "taint-eviction-b1", 40*time.Second)
			a2 := teEvictedAt(t, ns, "taint-eviction-b2", 40*time.Second)
			if a1.Before(start.Add(4*time.Second)) || a2.Before(start.Add(9*time.Second)) || !a1.Before(a2) {
				t.Errorf("evictions at +%v and +%v, want >= 5 s and >= 10 s, in that order", a1.Sub(start), a2.Sub(start))
			}
		})

		// TestCreatePod / TestEventualConsistency: a pod bound onto a node already tainted
		run("PodBoundToTaintedNode", func(t *testing.T, ns, node string) {
			teTaint(t, node, true)
			time.Sleep(2 * time.Second)
			tePod(t, ns, "taint-eviction-late", node, -1)
			tePod(t, ns, "taint-eviction-late-ok", node, 0)
			teEvictedAt(t, ns, "taint-eviction-late", 30*time.Second)
			teStays(t, ns, "taint-eviction-late-ok", 5*time.Second)
		})

		// TestUpdateNode "Only one added taint tolerated": a second NoExecute taint the pod
		// does not tolerate evicts it at once, though the first is tolerated forever
		run("SecondTaintNotTolerated", func(t *testing.T, ns, node string) {
			tePod(t, ns, "taint-eviction-two", node, 0)
			teTaint(t, node, true)
			teStays(t, ns, "taint-eviction-two", 3*time.Second)
			patch := `{"spec":{"taints":[{"key":"` + teTaintKey + `","value":"evictTaintVal","effect":"NoExecute"},` +
				`{"key":"kcmd.test/other","value":"x","effect":"NoExecute"}]}}`
			if _, err := env.Client.CoreV1().Nodes().Patch(context.Background(), node, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			teEvictedAt(t, ns, "taint-eviction-two", 30*time.Second)
		})

		// TestDeletePod: a pod deleted while its eviction is pending: the eviction is cancelled
		// with its Event (upstream's handlePodUpdate on NotFound)
		run("DeletedPodCancelsEviction", func(t *testing.T, ns, node string) {
			tePod(t, ns, "taint-eviction-del", node, 8)
			teTaint(t, node, true)
			time.Sleep(2 * time.Second)
			if err := env.Client.CoreV1().Pods(ns).Delete(context.Background(), "taint-eviction-del", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
				t.Fatal(err)
			}
			teEvent(t, ns, "taint-eviction-del", "Cancelling deletion of Pod "+ns+"/taint-eviction-del")
		})

		// TestUpdatePod "scheduling onto tainted Node": a pending pod bound (binding
		// subresource) to a tainted node is evicted through the pod-update path
		run("PodScheduledOntoTaintedNode", func(t *testing.T, ns, node string) {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "taint-eviction-bind"},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}}}}
			if _, err := env.Client.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			teTaint(t, node, true)
			teStays(t, ns, "taint-eviction-bind", 3*time.Second) // not bound: not the controller's
			b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "taint-eviction-bind"},
				Target: corev1.ObjectReference{Kind: "Node", Name: node}}
			if err := env.Client.CoreV1().Pods(ns).Bind(context.Background(), b, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			teEvictedAt(t, ns, "taint-eviction-bind", 30*time.Second)
		})

		// TestUpdatePod "lengthening toleration shouldn't work": the pending eviction keeps the
		// time it was given (a pod may change an existing toleration's tolerationSeconds only)
		run("LengtheningTolerationKeepsTime", func(t *testing.T, ns, node string) {
			tePod(t, ns, "taint-eviction-longer", node, 5)
			start := teTaint(t, node, true)
			time.Sleep(2 * time.Second)
			tePatchTolerationSeconds(t, ns, "taint-eviction-longer", "100")
			at := teEvictedAt(t, ns, "taint-eviction-longer", 30*time.Second)
			if at.After(start.Add(5*time.Second + 3*time.Second)) {
				t.Errorf("evicted %v after the taint: the lengthened toleration moved it", at.Sub(start))
			}
		})

		// a toleration made unlimited while an eviction is pending cancels it (the pod-update
		// path: "tolerate forever, cancelling any scheduled deletion")
		run("ForeverTolerationCancels", func(t *testing.T, ns, node string) {
			tePod(t, ns, "taint-eviction-forever", node, 6)
			teTaint(t, node, true)
			time.Sleep(2 * time.Second)
			tePatchTolerationSeconds(t, ns, "taint-eviction-forever", "null")
			teEvent(t, ns, "taint-eviction-forever", "Cancelling deletion of Pod "+ns+"/taint-eviction-forever")
			teStays(t, ns, "taint-eviction-forever", 8*time.Second)
		})

		// NoSchedule taints are not the controller's: nothing happens
		run("IgnoresNoScheduleTaint", func(t *testing.T, ns, node string) {
			tePod(t, ns, "taint-eviction-ns", node, -1)
			patch := `{"spec":{"taints":[{"key":"` + teTaintKey + `","value":"v","effect":"NoSchedule"}]}}`
			if _, err := env.Client.CoreV1().Nodes().Patch(context.Background(), node, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			teStays(t, ns, "taint-eviction-ns", 8*time.Second)
		})
	})
	// nine pods were evicted above, each once (a pod already evicted is not evicted again
	// when its requeued keys come back); upstream's two families count them
	if t.Failed() {
		return
	}
	time.Sleep(3 * time.Second)
	if n := teMetric(t, port, "taint_eviction_controller_pod_deletions_total"); n != 9 {
		t.Errorf("taint_eviction_controller_pod_deletions_total = %v, want 9", n)
	}
	if n := teMetric(t, port, "taint_eviction_controller_pod_deletion_duration_seconds_count"); n != 9 {
		t.Errorf("taint_eviction_controller_pod_deletion_duration_seconds_count = %v, want 9", n)
	}
	text, err := hmgGetMetrics(port)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"noexec_taint_node", "noexec_taint_pod"} {
		if v, ok := hmgMetric(text, "workqueue_adds_total", `name="`+q+`"`); !ok || v == 0 {
			t.Errorf("workqueue_adds_total{name=%q} = %v (%v)", q, v, ok)
		}
	}
}

// TestTaintEviction_WorkerCrash: the worker holding a pending eviction is killed (kill -9). The
// eviction is not lost and keeps its time: the requeued key outlives the worker in the queue,
// and the pending eviction outlives it in the store the manager holds (KCMD_TE_FD), which the
// next worker reads back ("restored 1 pending evictions"). Not before its tolerationSeconds
// after the taint, not later than a few seconds after that.
func TestTaintEviction_WorkerCrash(t *testing.T) {
	p, _ := teStart(t)
	ns := Namespace(t)
	node := "te-crash-" + strconv.FormatInt(time.Now().UnixNano()%100000, 10)
	teNode(t, node)
	tePod(t, ns, "taint-eviction-crash", node, 6)
	tePod(t, ns, "taint-eviction-crash-now", node, -1)
	start := teTaint(t, node, true)
	teEvictedAt(t, ns, "taint-eviction-crash-now", 30*time.Second) // the worker took the node
	time.Sleep(2 * time.Second)
	var killed []int
	for pid, comm := range childrenOf(p.cmd.Process.Pid) {
		if comm == "kcmd-worker" {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = append(killed, pid)
		}
	}
	if len(killed) != 1 {
		t.Fatalf("killed %v, want the one worker", killed)
	}
	crash := time.Now()
	at := teEvictedAt(t, ns, "taint-eviction-crash", 60*time.Second)
	if at.Before(start.Add(6*time.Second - time.Second)) {
		t.Errorf("evicted %v after the taint, before its 6 s", at.Sub(start))
	}
	if at.After(start.Add(6*time.Second + 3*time.Second)) {
		t.Errorf("evicted %v after the taint: the pending eviction lost its time", at.Sub(start))
	}
	if !p.Logged("restored 1 pending evictions from the previous worker") {
		t.Error("the next worker did not read the pending eviction back")
	}
	t.Logf("taint +%v, crash +%v, eviction +%v", time.Duration(0), crash.Sub(start), at.Sub(start))
}
