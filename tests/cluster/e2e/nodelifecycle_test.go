package e2e

// kcmd's node-lifecycle-controller (docs/nodelifecycle.md) against the real cluster. There is no
// kubelet: the test plays it, posting the Ready condition and renewing the node's Lease in
// kube-node-lease, then stops, as upstream's integration tests (test/integration/node) and the
// scenarios of node_lifecycle_controller_test.go do with a fake clock. Short periods by flag:
// --node-monitor-period=1s, --node-monitor-grace-period=4s, --node-startup-grace-period=4s; and
// --node-eviction-rate=10 (one NoExecute taint per 100 ms per zone instead of one per 10 s: the
// rate itself is unit-tested) and --unhealthy-zone-threshold=0.9 (3 of the 4 nodes of the
// scenario's zone go unhealthy; at the default 0.55 the zone would be partially disrupted, and a
// zone of 50 nodes or fewer then gets no NoExecute taint at all, as upstream).
//
// The test's nodes live in a zone of their own (topology.kubernetes.io/zone) with an "anchor"
// node that stays healthy, so the zone is never fully disrupted (then upstream stops tainting
// and takes the taints off: "master disruption mode"). The tests are not parallel with the rest
// of the suite: the controller acts on every Node of the cluster, and a test that creates Nodes
// without a kubelet (taint eviction, DaemonSet, TTL) must not see them go Unknown under it.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

const nlcZoneLabel = "topology.kubernetes.io/zone"

func nlcStart(t *testing.T, controllers string) (*kcmdProc, int) {
	t.Helper()
	port := gcxFreePort(t)
	p := startKcmd(t, nil, "--controllers="+controllers, "--secure-port="+strconv.Itoa(port),
		"--bind-address=127.0.0.1", "--authorization-always-allow-paths=/healthz,/metrics",
		"--use-service-account-credentials", "--leader-elect=false", "--v=4",
		"--node-monitor-period=1s", "--node-monitor-grace-period=4s", "--node-startup-grace-period=4s",
		"--node-eviction-rate=10", "--unhealthy-zone-threshold=0.9")
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	Eventually(t, 60*time.Second, "the controller's worker and informers ready", func() (bool, string) {
		return p.Logged("node-lifecycle-controller worker ready") && p.Logged("informers synced"), "not yet"
	})
	if !p.Logged("using service account kube-system/node-controller") {
		t.Fatal("the controller does not act as kube-system/node-controller")
	}
	return p, port
}

// nlcKubelet plays a node's kubelet: creates the Node (optionally with a Ready condition) and its
// Lease, and renews the Lease every 500 ms while alive.
type nlcKubelet struct {
	t     *testing.T
	name  string
	mu    sync.Mutex
	alive bool
	stop  chan struct{}
	done  chan struct{}
}

func nlcNode(t *testing.T, name, zone string, ready string, withLease bool, labels map[string]string, unschedulable bool) *nlcKubelet {
	t.Helper()
	ctx := context.Background()
	l := map[string]string{nlcZoneLabel: zone}
	for k, v := range labels {
		l[k] = v
	}
	n, err := env.Client.CoreV1().Nodes().Create(ctx, &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l},
		Spec:       corev1.NodeSpec{Unschedulable: unschedulable},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating node %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = env.Client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = env.Client.CoordinationV1().Leases("kube-node-lease").Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	k := &nlcKubelet{t: t, name: name, stop: make(chan struct{}), done: make(chan struct{})}
	if ready != "" {
		k.postReady(n, ready)
	}
	if withLease {
		now := metav1.NewMicroTime(time.Now())
		_, err := env.Client.CoordinationV1().Leases("kube-node-lease").Create(ctx, &coordv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: name, UID: n.UID}}},
			Spec:       coordv1.LeaseSpec{HolderIdentity: ptr.To(name), LeaseDurationSeconds: ptr.To[int32](40), RenewTime: &now},
		}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("creating the lease of %s: %v", name, err)
		}
		k.alive = true
		go k.renew()
	} else {
		close(k.done)
	}
	t.Cleanup(k.halt)
	return k
}

// postReady sets the node's Ready condition (status True/False) with a new heartbeat.
func (k *nlcKubelet) postReady(n *corev1.Node, status string) {
	k.t.Helper()
	ctx := context.Background()
	for i := 0; i < 10; i++ {
		if n == nil {
			var err error
			if n, err = env.Client.CoreV1().Nodes().Get(ctx, k.name, metav1.GetOptions{}); err != nil {
				k.t.Fatalf("get node %s: %v", k.name, err)
			}
		}
		now := metav1.Now()
		c := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionStatus(status), Reason: "KubeletReady",
			Message: "kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now}
		if status != "True" {
			c.Reason, c.Message = "KubeletNotReady", "container runtime is down"
		}
		mp := corev1.NodeCondition{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory",
			LastHeartbeatTime: now, LastTransitionTime: now}
		n.Status.Conditions = []corev1.NodeCondition{mp, c}
		if _, err := env.Client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err == nil {
			return
		} else if !apierrors.IsConflict(err) {
			k.t.Fatalf("posting the status of %s: %v", k.name, err)
		}
		n = nil
	}
	k.t.Fatalf("posting the status of %s: conflicts", k.name)
}

func (k *nlcKubelet) renew() {
	defer close(k.done)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-k.stop:
			return
		case <-tick.C:
		}
		k.mu.Lock()
		alive := k.alive
		k.mu.Unlock()
		if !alive {
			continue
		}
		ctx := context.Background()
		l, err := env.Client.CoordinationV1().Leases("kube-node-lease").Get(ctx, k.name, metav1.GetOptions{})
		if err != nil {
			continue
		}
		now := metav1.NewMicroTime(time.Now())
		l.Spec.RenewTime = &now
		_, _ = env.Client.CoordinationV1().Leases("kube-node-lease").Update(ctx, l, metav1.UpdateOptions{})
	}
}

func (k *nlcKubelet) setAlive(v bool) {
	k.mu.Lock()
	k.alive = v
	k.mu.Unlock()
}

func (k *nlcKubelet) halt() {
	select {
	case <-k.stop:
	default:
		close(k.stop)
	}
	<-k.done
}

func nlcGet(t *testing.T, name string) *corev1.Node {
	t.Helper()
	n, err := env.Client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get node %s: %v", name, err)
	}
	return n
}

func nlcCond(n *corev1.Node, ty corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == ty {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

func nlcTaint(n *corev1.Node, key string, effect corev1.TaintEffect) *corev1.Taint {
	for i := range n.Spec.Taints {
		if n.Spec.Taints[i].Key == key && n.Spec.Taints[i].Effect == effect {
			return &n.Spec.Taints[i]
		}
	}
	return nil
}

func nlcTaints(n *corev1.Node) string {
	var s []string
	for _, t := range n.Spec.Taints {
		s = append(s, t.Key+":"+string(t.Effect))
	}
	return strings.Join(s, ",")
}

// nlcWaitTaints waits until the node's taints (key:effect, any order) are exactly want.
func nlcWaitTaints(t *testing.T, name string, timeout time.Duration, want ...string) *corev1.Node {
	t.Helper()
	var n *corev1.Node
	Eventually(t, timeout, "node "+name+" tainted "+strings.Join(want, ","), func() (bool, string) {
		n = nlcGet(t, name)
		if len(n.Spec.Taints) != len(want) {
			return false, nlcTaints(n)
		}
		for _, w := range want {
			kv := strings.SplitN(w, ":", 2)
			if nlcTaint(n, kv[0], corev1.TaintEffect(kv[1])) == nil {
				return false, nlcTaints(n)
			}
		}
		return true, ""
	})
	return n
}

func nlcEvent(t *testing.T, ns, name, reason, msg string) {
	t.Helper()
	Eventually(t, 20*time.Second, fmt.Sprintf("event %s %q about %s/%s", reason, msg, ns, name), func() (bool, string) {
		l, err := env.Client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err != nil {
			return false, err.Error()
		}
		var got []string
		for _, e := range l.Items {
			if e.Reason == reason && e.Message == msg && e.Source.Component == "node-controller" {
				return true, ""
			}
			got = append(got, e.Reason+": "+e.Message)
		}
		return false, strings.Join(got, "; ")
	})
}

func nlcReadyPod(t *testing.T, ns, name, node string) {
	t.Helper()
	ctx := context.Background()
	p, err := env.Client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}},
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s/%s: %v", ns, name, err)
	}
	now := metav1.Now()
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}}
	if _, err := env.Client.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("pod %s/%s ready: %v", ns, name, err)
	}
}

func nlcPodReady(t *testing.T, ns, name string) corev1.ConditionStatus {
	t.Helper()
	p, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get pod %s/%s: %v", ns, name, err)
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status
		}
	}
	return ""
}

func nlcSuffix() string { return strconv.FormatInt(time.Now().UnixNano()%1000000, 10) }

// TestNodeLifecycle_Scenarios: one kcmd, one zone: the anchor stays healthy while the others
// stop renewing their Lease, report NotReady, never post, are unschedulable, carry only the
// stable OS label; then a node comes back. The taint-eviction-controller runs beside it (both as
// kube-system/node-controller, as in kcm): a pod tolerating the unreachable taint for 1 s is
// evicted once the node lifecycle controller has put it on the node.
func TestNodeLifecycle_Scenarios(t *testing.T) {
	p, port := nlcStart(t, "node-lifecycle-controller,taint-eviction-controller")
	sfx := nlcSuffix()
	zone := "kcmd-e2e-nlc-" + sfx
	ns := Namespace(t)

	anchor := nlcNode(t, "nlc-anchor-"+sfx, zone, "True", true, nil, false)
	_ = anchor
	dead := nlcNode(t, "nlc-dead-"+sfx, zone, "True", true, map[string]string{"kubernetes.io/os": "linux"}, false)
	notReady := nlcNode(t, "nlc-notready-"+sfx, zone, "False", true, nil, true)
	never := "nlc-never-" + sfx
	nlcNode(t, never, zone, "", false, nil, false)
	nlcReadyPod(t, ns, "on-dead", dead.name)
	nlcReadyPod(t, ns, "on-notready", notReady.name)
	if _, err := env.Client.CoreV1().Pods(ns).Create(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "evicted-from-dead"},
		Spec: corev1.PodSpec{NodeName: dead.name, Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}},
			Tolerations: []corev1.Toleration{{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists,
				Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](1)},
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// RegisteredNode for each; the beta OS label from the stable one (reconcileNodeLabels)
	nlcEvent(t, "default", dead.name, "RegisteredNode", "Node "+dead.name+" event: Registered Node "+dead.name+" in Controller")
	Eventually(t, 10*time.Second, "beta.kubernetes.io/os on "+dead.name, func() (bool, string) {
		n := nlcGet(t, dead.name)
		return n.Labels["beta.kubernetes.io/os"] == "linux", fmt.Sprint(n.Labels)
	})

	// the node that reports NotReady itself (and is unschedulable): the NoSchedule condition
	// taints at once, then the NoExecute not-ready taint; its pods are left to its kubelet
	n := nlcWaitTaints(t, notReady.name, 15*time.Second, "node.kubernetes.io/not-ready:NoSchedule",
		"node.kubernetes.io/unschedulable:NoSchedule", "node.kubernetes.io/not-ready:NoExecute")
	if ta := nlcTaint(n, "node.kubernetes.io/not-ready", corev1.TaintEffectNoExecute); ta.TimeAdded == nil {
		t.Errorf("the NoExecute taint has no timeAdded: %+v", ta)
	}
	if s := nlcPodReady(t, ns, "on-notready"); s != corev1.ConditionTrue {
		t.Errorf("a pod on a node the kubelet reports NotReady was marked %s (upstream leaves it)", s)
	}

	// the node that stops renewing its Lease: Unknown conditions, NodeNotReady, pods not ready,
	// the unreachable taints
	dead.setAlive(false)
	stopped := time.Now()
	Eventually(t, 15*time.Second, "Ready Unknown on "+dead.name, func() (bool, string) {
		c := nlcCond(nlcGet(t, dead.name), corev1.NodeReady)
		return c != nil && c.Status == corev1.ConditionUnknown, fmt.Sprintf("%+v", c)
	})
	if d := time.Since(stopped); d < 3*time.Second {
		t.Errorf("Unknown %v after the last renewal, before the 4 s grace period", d)
	}
	n = nlcGet(t, dead.name)
	for _, ty := range []corev1.NodeConditionType{corev1.NodeReady, corev1.NodeMemoryPressure} {
		c := nlcCond(n, ty)
		if c.Status != corev1.ConditionUnknown || c.Reason != "NodeStatusUnknown" || c.Message != "Kubelet stopped posting node status." {
			t.Errorf("%s: %+v", ty, c)
		}
	}
	for _, ty := range []corev1.NodeConditionType{corev1.NodeDiskPressure, corev1.NodePIDPressure} {
		c := nlcCond(n, ty)
		if c == nil || c.Status != corev1.ConditionUnknown || c.Reason != "NodeStatusNeverUpdated" || c.Message != "Kubelet never posted node status." {
			t.Errorf("%s: %+v", ty, c)
		}
	}
	nlcEvent(t, "default", dead.name, "NodeNotReady", "Node "+dead.name+" status is now: NodeNotReady")
	Eventually(t, 10*time.Second, "pod on-dead not ready", func() (bool, string) {
		s := nlcPodReady(t, ns, "on-dead")
		return s == corev1.ConditionFalse, string(s)
	})
	nlcEvent(t, ns, "on-dead", "NodeNotReady", "Node is not ready")
	nlcWaitTaints(t, dead.name, 15*time.Second, "node.kubernetes.io/unreachable:NoSchedule", "node.kubernetes.io/unreachable:NoExecute")

	// the taint-eviction-controller evicts the pod that tolerates the taint for 1 s only
	Eventually(t, 15*time.Second, "pod evicted-from-dead evicted", func() (bool, string) {
		p, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), "evicted-from-dead", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return p.DeletionTimestamp != nil, "not deleted"
	})

	// a pod bound to the node while it is Unknown is marked not ready too (processPod)
	ctx := context.Background()
	late, err := env.Client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "late-on-dead"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}},
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	late.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
	if _, err := env.Client.CoreV1().Pods(ns).UpdateStatus(ctx, late, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.CoreV1().Pods(ns).Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "late-on-dead"},
		Target: corev1.ObjectReference{Kind: "Node", Name: dead.name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 10*time.Second, "pod late-on-dead not ready", func() (bool, string) {
		s := nlcPodReady(t, ns, "late-on-dead")
		return s == corev1.ConditionFalse, string(s)
	})

	// a node that never posted: past the startup grace period, never-updated conditions
	Eventually(t, 15*time.Second, "Ready Unknown on "+never, func() (bool, string) {
		c := nlcCond(nlcGet(t, never), corev1.NodeReady)
		return c != nil && c.Status == corev1.ConditionUnknown && c.Reason == "NodeStatusNeverUpdated", fmt.Sprintf("%+v", c)
	})
	nlcWaitTaints(t, never, 15*time.Second, "node.kubernetes.io/unreachable:NoSchedule", "node.kubernetes.io/unreachable:NoExecute")

	// the NotReady node goes silent too: its not-ready taints swap to unreachable
	notReady.setAlive(false)
	nlcWaitTaints(t, notReady.name, 15*time.Second, "node.kubernetes.io/unreachable:NoSchedule",
		"node.kubernetes.io/unschedulable:NoSchedule", "node.kubernetes.io/unreachable:NoExecute")

	// recovery: the dead node posts Ready again and renews: every taint goes
	dead.postReady(nil, "True")
	dead.setAlive(true)
	nlcWaitTaints(t, dead.name, 15*time.Second)

	// the anchor never moved
	if a := nlcGet(t, anchor.name); len(a.Spec.Taints) != 0 || nlcCond(a, corev1.NodeReady).Status != corev1.ConditionTrue {
		t.Errorf("the healthy node was touched: taints %s, %+v", nlcTaints(a), nlcCond(a, corev1.NodeReady))
	}
	// RemovingNode when a node goes
	nn := nlcGet(t, never)
	if err := env.Client.CoreV1().Nodes().Delete(context.Background(), never, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	nlcEvent(t, "default", never, "RemovingNode", "Node "+never+" event: Removing Node "+never+" from Controller")
	_ = nn
	for _, bad := range []string{"unable to taint", "unable to remove", "Failed to remove"} {
		if p.Logged(bad) {
			t.Errorf("kcmd logged %q", bad)
		}
	}
	// the zone's metrics: 4 nodes seen in the last pass before the delete at least, evictions
	// (NoExecute taints) counted
	text, err := hmgGetMetrics(port)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`node_collector_zone_size{zone="::` + zone + `"} `, `node_collector_evictions_total{zone="::` + zone + `"} `,
		`node_collector_zone_health{zone="::` + zone + `"} `, `node_collector_update_all_nodes_health_duration_seconds_count `} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q on /metrics", want)
		}
	}
}

// TestNodeLifecycle_WorkerCrash: the worker is killed (kill -9) while a node waits for its
// taint; the next worker starts over from the cache as a restarted kcm does (registers the nodes
// again) and the node still ends up Unknown and tainted, and clean once it is back.
func TestNodeLifecycle_WorkerCrash(t *testing.T) {
	p, _ := nlcStart(t, "node-lifecycle-controller")
	sfx := nlcSuffix()
	zone := "kcmd-e2e-nlc-crash-" + sfx
	nlcNode(t, "nlc-crash-anchor-"+sfx, zone, "True", true, nil, false)
	k := nlcNode(t, "nlc-crash-"+sfx, zone, "True", true, nil, false)
	nlcEvent(t, "default", k.name, "RegisteredNode", "Node "+k.name+" event: Registered Node "+k.name+" in Controller")
	k.setAlive(false)
	time.Sleep(3 * time.Second)
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
	nlcWaitTaints(t, k.name, 30*time.Second, "node.kubernetes.io/unreachable:NoSchedule", "node.kubernetes.io/unreachable:NoExecute")
	if c := nlcCond(nlcGet(t, k.name), corev1.NodeReady); c.Status != corev1.ConditionUnknown {
		t.Errorf("Ready %+v", c)
	}
	k.postReady(nil, "True")
	k.setAlive(true)
	nlcWaitTaints(t, k.name, 15*time.Second)
}
