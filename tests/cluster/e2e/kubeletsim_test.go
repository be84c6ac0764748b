package e2e

// The kubelet simulator (kcmd --simulate-kubelet, docs/bench.md) against the real cluster:
// fake Nodes, pods bound to them Running and Ready, graceful deletions finished, Job pods
// completed, the simulator alone without any controller, and the refusal to run beside Nodes it
// did not create. Every test removes the fake Nodes and their Leases when it ends, so no later
// test sees them.

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

const hksSimLabel = "kcmd.io/simulated"

func hksLabels() map[string]string { return map[string]string{"app": "hks-sim"} }

// hksCleanupSimNodes deletes the simulator's Nodes and Leases when t ends (after kcmd stopped:
// cleanups run last-registered first, so register this before starting kcmd).
func hksCleanupSimNodes(t *testing.T) {
	t.Cleanup(func() {
		ctx := context.Background()
		nodes, err := env.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: hksSimLabel + "=true"})
		if err != nil {
			t.Logf("listing simulated nodes: %v", err)
			return
		}
		for _, n := range nodes.Items {
			_ = env.Client.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{})
			_ = env.Client.CoordinationV1().Leases("kube-node-lease").Delete(ctx, n.Name, metav1.DeleteOptions{})
		}
	})
}

func hksStartSim(t *testing.T, flags ...string) *kcmdProc {
	t.Helper()
	p := startKcmd(t, nil, append([]string{"--leader-elect=false", "--secure-port=0", "--v=2", "--simulate-kubelet"}, flags...)...)
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	Eventually(t, 60*time.Second, "the simulator's nodes", func() (bool, string) {
		select {
		case <-p.done:
			return true, ""
		default:
		}
		return p.Logged("nodes ready"), "no 'nodes ready' line yet"
	})
	select {
	case <-p.done:
		t.Fatalf("kcmd exited early: %v", p.err)
	default:
	}
	return p
}

func hksRS(ns, name string, n int32) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(n),
			Selector: &metav1.LabelSelector{MatchLabels: hksLabels()},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: hksLabels()},
				Spec: corev1.PodSpec{Containers: []corev1.Container{
					{Name: "app", Image: "registry.k8s.io/pause:3.10"},
					{Name: "sidecar", Image: "busybox"},
				}},
			},
		},
	}
}

func hksPods(t *testing.T, ns string) []corev1.Pod {
	t.Helper()
	l, err := env.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing pods: %v", err)
	}
	return l.Items
}

func hksCond(p *corev1.Pod, typ corev1.PodConditionType) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == typ {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// hksSimulated says what is missing for p to be a pod the simulator finished (bound to a fake
// node, Running, every condition and container as a kubelet reports them), or "".
func hksSimulated(p *corev1.Pod, wantContainers int) string {
	switch {
	case !strings.HasPrefix(p.Spec.NodeName, "kcmd-sim-node-"):
		return fmt.Sprintf("%s: nodeName %q", p.Name, p.Spec.NodeName)
	case p.Status.Phase != corev1.PodRunning:
		return fmt.Sprintf("%s: phase %s", p.Name, p.Status.Phase)
	case !hksCond(p, corev1.PodScheduled) || !hksCond(p, corev1.PodInitialized) ||
		!hksCond(p, corev1.ContainersReady) || !hksCond(p, corev1.PodReady):
		return fmt.Sprintf("%s: conditions %v", p.Name, p.Status.Conditions)
	case p.Status.PodIP == "" || p.Status.HostIP == "" || p.Status.StartTime == nil:
		return fmt.Sprintf("%s: podIP %q hostIP %q startTime %v", p.Name, p.Status.PodIP, p.Status.HostIP, p.Status.StartTime)
	case len(p.Status.ContainerStatuses) != wantContainers:
		return fmt.Sprintf("%s: %d container statuses", p.Name, len(p.Status.ContainerStatuses))
	}
	for _, cs := range p.Status.ContainerStatuses {
		if !cs.Ready || cs.State.Running == nil {
			return fmt.Sprintf("%s: container %s not running+ready", p.Name, cs.Name)
		}
	}
	return ""
}

// kcmd's ReplicaSet controller with the simulator: an RS of 20 becomes 20 Running, Ready pods
// on the fake nodes and readyReplicas=20; scaled to 0, the graceful deletions finish.
func TestKubeletSim_PodsBecomeReady(t *testing.T) {
	stopSharedRS(t)
	hksCleanupSimNodes(t)
	ns := Namespace(t)
	hksStartSim(t, "--controllers=replicaset-controller", "--simulate-kubelet-nodes=3", "--kube-api-qps=200",
		"--kube-api-burst=400")
	ctx := context.Background()

	nodes, err := env.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: hksSimLabel + "=true"})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, n := range nodes.Items {
		seen[n.Name] = true
		ready := false
		for _, c := range n.Status.Conditions {
			ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
		}
		tainted := false
		for _, tn := range n.Spec.Taints {
			tainted = tainted || (tn.Key == hksSimLabel && tn.Effect == corev1.TaintEffectNoSchedule)
		}
		if !ready || !tainted || n.Annotations[hksSimLabel] != "true" {
			t.Errorf("node %s: ready %v, tainted %v, annotations %v", n.Name, ready, tainted, n.Annotations)
		}
		if _, err := env.Client.CoordinationV1().Leases("kube-node-lease").Get(ctx, n.Name, metav1.GetOptions{}); err != nil {
			t.Errorf("lease of %s: %v", n.Name, err)
		}
	}
	for i := 0; i < 3; i++ {
		if !seen[fmt.Sprintf("kcmd-sim-node-%d", i)] {
			t.Fatalf("kcmd-sim-node-%d missing (have %v)", i, seen)
		}
	}

	rs := mustCreateRS(t, hksRS(ns, "sim", 20))
	created := time.Now()
	Eventually(t, 120*time.Second, "20 pods Running and Ready, readyReplicas=20", func() (bool, string) {
		pods := hksPods(t, ns)
		if len(pods) != 20 {
			return false, fmt.Sprintf("%d pods", len(pods))
		}
		for i := range pods {
			if !ownedBy(&pods[i], rs) {
				return false, pods[i].Name + " not owned by the RS"
			}
			if why := hksSimulated(&pods[i], 2); why != "" {
				return false, why
			}
		}
		cur, err := env.Client.AppsV1().ReplicaSets(ns).Get(ctx, "sim", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return cur.Status.ReadyReplicas == 20 && cur.Status.AvailableReplicas == 20,
			fmt.Sprintf("RS status ready %d available %d", cur.Status.ReadyReplicas, cur.Status.AvailableReplicas)
	})
	t.Logf("20 pods Ready and readyReplicas=20 %s after the RS was created", time.Since(created).Round(time.Millisecond))
	// The pods are spread over the three nodes (round-robin).
	per := map[string]int{}
	for _, p := range hksPods(t, ns) {
		per[p.Spec.NodeName]++
	}
	if len(per) != 3 {
		t.Errorf("pods per node: %v", per)
	}

	// Scale to 0: the RS controller deletes with the default 30 s grace; only the simulator's
	// grace-0 delete makes them disappear well before that.
	start := time.Now()
	cur, err := env.Client.AppsV1().ReplicaSets(ns).Get(ctx, "sim", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec.Replicas = ptr.To(int32(0))
	if _, err := env.Client.AppsV1().ReplicaSets(ns).Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 60*time.Second, "every pod gone", func() (bool, string) {
		pods := hksPods(t, ns)
		return len(pods) == 0, fmt.Sprintf("%d pods left", len(pods))
	})
	t.Logf("scaled to 0: every pod gone after %s", time.Since(start).Round(time.Millisecond))
	if d := time.Since(start); d >= 30*time.Second {
		t.Errorf("pods took %s to go: the graceful deletion was not finished by the simulator", d)
	}
	Eventually(t, 60*time.Second, "RS status replicas=0", func() (bool, string) {
		cur, err := env.Client.AppsV1().ReplicaSets(ns).Get(ctx, "sim", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return cur.Status.Replicas == 0 && cur.Status.ReadyReplicas == 0, fmt.Sprintf("replicas %d", cur.Status.Replicas)
	})
}

// With every controller off kcmd runs only informerd and the simulator (how `kcmd bench` drives
// upstream kube-controller-manager): bare pods run, a Job's pod completes, a graceful delete
// finishes, a pod bound to a node that is not the simulator's is left alone, and the ready delay
// holds a bound pod Pending; killed, the simulator is restarted by the manager and carries on.
func TestKubeletSim_SimulatorOnlyWithoutControllers(t *testing.T) {
	hksCleanupSimNodes(t)
	ns := Namespace(t)
	p := hksStartSim(t, "--controllers=-replicaset-controller,-garbage-collector-controller,-pod-garbage-collector-controller,-job-controller", "--simulate-kubelet-nodes=2",
		"--simulate-kubelet-ready-delay=2s")
	if !p.Logged("started 1 workers process") {
		t.Errorf("want exactly one process in the workers group (the simulator): %q", p.Logs())
	}
	ctx := context.Background()
	mk := func(name string, owner []metav1.OwnerReference, node string) {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: hksLabels(), OwnerReferences: owner},
			Spec: corev1.PodSpec{NodeName: node, RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		}
		if _, err := env.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	mk("bare-0", nil, "")
	mk("bare-1", nil, "")
	mk("elsewhere", nil, "hks-not-a-sim-node")
	mk("job-pod", []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "j",
		UID: "00000000-0000-0000-0000-00000000beef", Controller: ptr.To(true)}}, "")

	Eventually(t, 60*time.Second, "bare pods Running and Ready, the Job's pod Succeeded", func() (bool, string) {
		for _, name := range []string{"bare-0", "bare-1"} {
			pod, err := env.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			// no ReplicaSet template to name the containers: conditions and phase only
			if why := hksSimulated(pod, 0); why != "" {
				return false, why
			}
		}
		jp, err := env.Client.CoreV1().Pods(ns).Get(ctx, "job-pod", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if jp.Status.Phase != corev1.PodSucceeded || hksCond(jp, corev1.PodReady) {
			return false, fmt.Sprintf("job pod phase %s", jp.Status.Phase)
		}
		return true, ""
	})
	// --simulate-kubelet-ready-delay=2s: Running no sooner than 2 s after the binding (times
	// in the API have whole seconds, so at least 1 s after creation).
	b1, err := env.Client.CoreV1().Pods(ns).Get(ctx, "bare-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := b1.Status.StartTime.Sub(b1.CreationTimestamp.Time); d < time.Second {
		t.Errorf("bare-1 ran %s after its creation; the ready delay is 2s", d)
	}
	other, err := env.Client.CoreV1().Pods(ns).Get(ctx, "elsewhere", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if other.Status.Phase != corev1.PodPending || other.Status.PodIP != "" {
		t.Errorf("a pod on a node that is not simulated was changed: %+v", other.Status)
	}

	start := time.Now()
	if err := env.Client.CoreV1().Pods(ns).Delete(ctx, "bare-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 25*time.Second, "bare-0 deleted (its 30 s grace cut short)", func() (bool, string) {
		_, err := env.Client.CoreV1().Pods(ns).Get(ctx, "bare-0", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprintf("%v", err)
	})
	t.Logf("graceful delete finished after %s", time.Since(start).Round(time.Millisecond))
	// The pod on the other node keeps its graceful deletion (nobody plays its kubelet).
	if err := env.Client.CoreV1().Pods(ns).Delete(ctx, "elsewhere", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	if pod, err := env.Client.CoreV1().Pods(ns).Get(ctx, "elsewhere", metav1.GetOptions{}); err != nil || pod.DeletionTimestamp == nil {
		t.Errorf("the other node's pod: %v (deletionTimestamp set expected, still present)", err)
	}
	_ = env.Client.CoreV1().Pods(ns).Delete(ctx, "elsewhere", metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))})

	// kill -9 the simulator: the manager restarts it and it carries on.
	killed := 0
	for pid, name := range childrenOf(p.cmd.Process.Pid) {
		if name == "kcmd-worker" {
			if err := syscall.Kill(pid, syscall.SIGKILL); err == nil {
				killed++
			}
		}
	}
	if killed != 1 {
		t.Fatalf("killed %d simulator processes, want 1", killed)
	}
	mk("after-restart", nil, "")
	Eventually(t, 60*time.Second, "a pod made after the restart Running and Ready", func() (bool, string) {
		pod, err := env.Client.CoreV1().Pods(ns).Get(ctx, "after-restart", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return hksSimulated(pod, 0) == "", hksSimulated(pod, 0)
	})
	if !p.Logged("kubelet-simulator (workers) killed by signal 9; restarting") {
		t.Errorf("the manager did not log the restart")
	}
}

// A Node the simulator did not create makes kcmd --simulate-kubelet refuse to start, naming
// --simulate-kubelet-force; with that flag it runs.
func TestKubeletSim_RefusesForeignNodes(t *testing.T) {
	hksCleanupSimNodes(t)
	ctx := context.Background()
	name := fmt.Sprintf("hks-foreign-%d", time.Now().UnixNano()%100000)
	if _, err := env.Client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })

	p := startKcmd(t, nil, "--leader-elect=false", "--secure-port=0", "--simulate-kubelet",
		"--controllers=-replicaset-controller,-garbage-collector-controller,-pod-garbage-collector-controller,-job-controller")
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("kcmd --simulate-kubelet kept running beside a foreign node")
	}
	if p.err == nil {
		t.Errorf("kcmd exited 0; want a failure")
	}
	if !p.Logged("--simulate-kubelet-force") || !p.Logged(name) {
		t.Errorf("the refusal does not name the flag and the node: %q", p.Logs())
	}
	if p.Logged("nodes ready") || p.Logged("started") {
		t.Errorf("something was started before the refusal: %q", p.Logs())
	}

	f := hksStartSim(t, "--controllers=-replicaset-controller,-garbage-collector-controller,-pod-garbage-collector-controller,-job-controller", "--simulate-kubelet-force",
		"--simulate-kubelet-nodes=1")
	if !f.Logged("running anyway because of --simulate-kubelet-force") {
		t.Errorf("no warning about the foreign node: %q", f.Logs())
	}
	// The foreign node is left alone.
	n, err := env.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(n.Status.Conditions) != 0 || n.Labels[hksSimLabel] != "" {
		t.Errorf("the foreign node was changed: %+v", n)
	}
}
