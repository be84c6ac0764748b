package e2e

// kcmd's device-taint-eviction-controller (docs/devicetainteviction.md) against the real
// apiserver (resource.k8s.io/v1; DRADeviceTaints and DRADeviceTaintRules are on by default in
// v1.37), upstream kube-controller-manager not running it. After upstream's
// test/integration/dra (the device taint cases) and pkg/controller/devicetainteviction's
// TestController cases that need a cluster. No scheduler, DRA driver or kubelet run: the test
// publishes the ResourceSlices, writes the claims' allocation and reservedFor as the scheduler
// would, and binds pods by spec.nodeName. Without a kubelet a deleted pod stays Terminating,
// so "evicted" is: the DisruptionTarget condition (True, DeletionByDeviceTaintManager,
// upstream's message), metadata.deletionTimestamp set and the DeviceTaintManagerEviction Event
// "Marking for deletion". The time of the DELETE is deletionTimestamp -
// deletionGracePeriodSeconds.
//
// One kcmd runs only device-taint-eviction-controller as its service account; the scenarios
// run at once, each with its own namespace and driver name (so slices and rules of one do not
// touch another's claims).

import (
	"context"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

const dteTaintKey = "kcmd.test/device-broken"

func dteStart(t *testing.T) (*kcmdProc, int) {
	t.Helper()
	port := gcxFreePort(t)
	p := startKcmd(t, nil, "--controllers=device-taint-eviction-controller", "--secure-port="+strconv.Itoa(port),
		"--bind-address=127.0.0.1", "--authorization-always-allow-paths=/healthz,/metrics",
		"--use-service-account-credentials", "--leader-elect=false", "--v=4")
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	Eventually(t, 60*time.Second, "the controller's worker ready", func() (bool, string) {
		return p.Logged("device-taint-eviction-controller worker ready") && p.Logged("informers synced"), "not yet"
	})
	if !p.Logged("kube-system/device-taint-eviction-controller") {
		t.Fatal("the controller does not act as kube-system/device-taint-eviction-controller")
	}
	return p, port
}

// dteDriver: a driver name of the namespace's own (at most 63 bytes)
func dteDriver(ns string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(ns))
	return fmt.Sprintf("dte-%08x.example.com", h.Sum32())
}

// dteSlice publishes one ResourceSlice of pool "pool" with devices dev-0..dev-(n-1); tainted
// devices get a NoExecute taint (the apiserver sets timeAdded).
func dteSlice(t *testing.T, ns string, n int, tainted ...string) *resourcev1.ResourceSlice {
	t.Helper()
	s := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "slice-" + ns},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   dteDriver(ns),
			Pool:     resourcev1.ResourcePool{Name: "pool", Generation: 1, ResourceSliceCount: 1},
			NodeName: ptr.To("node-" + ns),
		},
	}
	for i := 0; i < n; i++ {
		d := resourcev1.Device{Name: fmt.Sprintf("dev-%d", i)}
		for _, x := range tainted {
			if x == d.Name {
				d.Taints = []resourcev1.DeviceTaint{{Key: dteTaintKey, Value: "yes", Effect: resourcev1.DeviceTaintEffectNoExecute}}
			}
		}
		s.Spec.Devices = append(s.Spec.Devices, d)
	}
	out, err := env.Client.ResourceV1().ResourceSlices().Create(context.Background(), s, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating ResourceSlice: %v", err)
	}
	t.Cleanup(func() {
		_ = env.Client.ResourceV1().ResourceSlices().Delete(context.Background(), s.Name, metav1.DeleteOptions{})
	})
	return out
}

// dtePodWithClaim creates claim <name> and pod <name> using it on node-<ns>, then allocates
// device dev to the claim (with tols) and reserves it for the pod, as the scheduler does.
func dtePodWithClaim(t *testing.T, ns, name, dev string, tols ...resourcev1.DeviceToleration) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	class := "class-" + ns
	if _, err := env.Client.ResourceV1().DeviceClasses().Get(ctx, class, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		rcClass(t, ns)
	}
	claim, err := env.Client.ResourceV1().ResourceClaims(ns).Create(ctx, &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{
			{Name: "req-0", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: class}},
		}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating claim: %v", err)
	}
	pod, err := env.Client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			NodeName:       "node-" + ns,
			ResourceClaims: []corev1.PodResourceClaim{{Name: "dev", ResourceClaimName: ptr.To(name)}},
			Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "dev"}}}}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod: %v", err)
	}
	claim.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{
		Results: []resourcev1.DeviceRequestAllocationResult{{
			Request: "req-0", Driver: dteDriver(ns), Pool: "pool", Device: dev, Tolerations: tols,
		}},
	}}
	claim.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: pod.Name, UID: pod.UID}}
	if _, err := env.Client.ResourceV1().ResourceClaims(ns).UpdateStatus(ctx, claim, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("allocating claim: %v", err)
	}
	return pod
}

// dteEvictedAt waits for the eviction and checks what upstream writes; returns the DELETE's time.
func dteEvictedAt(t *testing.T, ns, name string, timeout time.Duration) time.Time {
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
		if cond == nil || cond.Status != corev1.ConditionTrue || cond.Reason != "DeletionByDeviceTaintManager" ||
			cond.Message != "Device Taint manager: deleting due to NoExecute taint" {
			return false, fmt.Sprintf("deleted, but condition %+v", cond)
		}
		at = p.DeletionTimestamp.Add(-time.Duration(ptr.Deref(p.DeletionGracePeriodSeconds, 0)) * time.Second)
		return true, ""
	})
	dteEvent(t, ns, name, "Marking for deletion")
	return at
}

func dteStays(t *testing.T, ns, name string, d time.Duration) {
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

func dteEvent(t *testing.T, ns, pod, msg string) {
	t.Helper()
	Eventually(t, 20*time.Second, "Event "+msg, func() (bool, string) {
		l, err := env.Client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod})
		if err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, e := range l.Items {
			if e.Reason == "DeviceTaintManagerEviction" && e.Message == msg && e.Type == corev1.EventTypeNormal &&
				e.Source.Component == "device-taint-eviction-controller" && e.InvolvedObject.Kind == "Pod" {
				return true, ""
			}
			seen = append(seen, e.Reason+": "+e.Message)
		}
		return false, strings.Join(seen, "; ")
	})
}

func dteTimeAdded(t *testing.T, s *resourcev1.ResourceSlice, dev string) time.Time {
	t.Helper()
	for _, d := range s.Spec.Devices {
		if d.Name == dev && len(d.Taints) > 0 && d.Taints[0].TimeAdded != nil {
			return d.Taints[0].TimeAdded.Time
		}
	}
	t.Fatalf("device %s has no taint with timeAdded", dev)
	return time.Time{}
}

func TestDeviceTaintEviction_Scenarios(t *testing.T) {
	_, port := dteStart(t)

	// evict-pod-resourceclaim (tainted-claim-through-resourceslice): immediate eviction
	t.Run("SliceTaintEvicts", func(t *testing.T) {
		t.Parallel()
		ns := Namespace(t)
		dteSlice(t, ns, 2, "dev-0")
		dtePodWithClaim(t, ns, "victim", "dev-0")
		dtePodWithClaim(t, ns, "bystander", "dev-1") // no-evict-other-device
		t.Logf("victim evicted at %v", dteEvictedAt(t, ns, "victim", 30*time.Second))
		dteStays(t, ns, "bystander", 2*time.Second)
	})

	// no-evict-pod-toleration-forever
	t.Run("TolerationForever", func(t *testing.T) {
		t.Parallel()
		ns := Namespace(t)
		dteSlice(t, ns, 1, "dev-0")
		dtePodWithClaim(t, ns, "tolerant", "dev-0", resourcev1.DeviceToleration{
			Key: dteTaintKey, Operator: resourcev1.DeviceTolerationOpExists, Effect: resourcev1.DeviceTaintEffectNoExecute})
		dteStays(t, ns, "tolerant", 6*time.Second)
	})

	// evict-pod-later: not before timeAdded + tolerationSeconds
	t.Run("TolerationSecondsDelays", func(t *testing.T) {
		t.Parallel()
		ns := Namespace(t)
		s := dteSlice(t, ns, 1, "dev-0")
		dtePodWithClaim(t, ns, "later", "dev-0", resourcev1.DeviceToleration{
			Key: dteTaintKey, Operator: resourcev1.DeviceTolerationOpEqual, Value: "yes",
			Effect: resourcev1.DeviceTaintEffectNoExecute, TolerationSeconds: ptr.To[int64](6)})
		due := dteTimeAdded(t, s, "dev-0").Add(6 * time.Second)
		at := dteEvictedAt(t, ns, "later", 30*time.Second)
		// deletionTimestamp has second precision
		t.Logf("evicted at %v, due %v", at, due)
		if at.Before(due.Add(-time.Second)) {
			t.Fatalf("evicted at %v, before timeAdded + tolerationSeconds = %v", at, due)
		}
	})

	// cancel-eviction-remove-taint: an untaint before the deadline cancels, with its Event
	t.Run("UntaintCancels", func(t *testing.T) {
		t.Parallel()
		ns := Namespace(t)
		s := dteSlice(t, ns, 1, "dev-0")
		dtePodWithClaim(t, ns, "saved", "dev-0", resourcev1.DeviceToleration{
			Key: dteTaintKey, Operator: resourcev1.DeviceTolerationOpExists,
			Effect: resourcev1.DeviceTaintEffectNoExecute, TolerationSeconds: ptr.To[int64](8)})
		due := dteTimeAdded(t, s, "dev-0").Add(8 * time.Second)
		time.Sleep(2 * time.Second)
		s.Spec.Devices[0].Taints = nil
		if _, err := env.Client.ResourceV1().ResourceSlices().Update(context.Background(), s, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		dteEvent(t, ns, "saved", "Cancelling deletion")
		dteStays(t, ns, "saved", time.Until(due.Add(2*time.Second)))
		t.Logf("not evicted by %v (due %v before the untaint)", time.Now(), due)
	})

	// evict-pod-rule (tainted-claim-through-rule) and the rule's status
	t.Run("DeviceTaintRuleEvicts", func(t *testing.T) {
		t.Parallel()
		ns := Namespace(t)
		dteSlice(t, ns, 2)
		rule, err := env.Client.ResourceV1().DeviceTaintRules().Create(context.Background(), &resourcev1.DeviceTaintRule{
			ObjectMeta: metav1.ObjectMeta{Name: "rule-" + ns},
			Spec: resourcev1.DeviceTaintRuleSpec{
				DeviceSelector: &resourcev1.DeviceTaintSelector{Driver: ptr.To(dteDriver(ns)), Pool: ptr.To("pool"), Device: ptr.To("dev-1")},
				Taint:          resourcev1.DeviceTaint{Key: dteTaintKey, Value: "rule", Effect: resourcev1.DeviceTaintEffectNoExecute},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = env.Client.ResourceV1().DeviceTaintRules().Delete(context.Background(), rule.Name, metav1.DeleteOptions{})
		})
		dtePodWithClaim(t, ns, "ruled", "dev-1")
		dtePodWithClaim(t, ns, "spared", "dev-0")
		dteEvictedAt(t, ns, "ruled", 30*time.Second)
		dteStays(t, ns, "spared", time.Second)
		Eventually(t, 40*time.Second, "the rule's EvictionInProgress condition Completed", func() (bool, string) {
			r, err := env.Client.ResourceV1().DeviceTaintRules().Get(context.Background(), rule.Name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			for _, c := range r.Status.Conditions {
				if c.Type == "EvictionInProgress" {
					ok := c.Status == metav1.ConditionFalse && c.Reason == "Completed" &&
						c.Message == "1 pod evicted since starting the controller." && c.ObservedGeneration == r.Generation
					if ok {
						t.Logf("rule condition %+v", c)
					}
					return ok, fmt.Sprintf("%+v", c)
				}
			}
			return false, "no condition"
		})
	})

	t.Cleanup(func() {
		if v := teMetric(t, port, "device_taint_eviction_controller_pod_deletions_total"); v < 3 {
			t.Errorf("device_taint_eviction_controller_pod_deletions_total = %v, want >= 3", v)
		}
	})
}

// TestDeviceTaintEviction_WorkerCrash: kill -9 of the worker while eight evictions are pending
// (tolerationSeconds 5): the next worker evicts every pod at its time (the requeued keys
// outlive the worker), each once (one "Marking for deletion" Event, one counted deletion).
func TestDeviceTaintEviction_WorkerCrash(t *testing.T) {
	p, port := dteStart(t)
	ns := Namespace(t)
	s := dteSlice(t, ns, 2, "dev-0", "dev-1")
	const n = 8
	dtePodWithClaim(t, ns, "now", "dev-1")
	for i := 0; i < n; i++ {
		dtePodWithClaim(t, ns, fmt.Sprintf("later-%d", i), "dev-0", resourcev1.DeviceToleration{
			Operator: resourcev1.DeviceTolerationOpExists, Effect: resourcev1.DeviceTaintEffectNoExecute,
			TolerationSeconds: ptr.To[int64](5)})
	}
	dteEvictedAt(t, ns, "now", 30*time.Second) // the worker is at work
	due := dteTimeAdded(t, s, "dev-0").Add(5 * time.Second)
	time.Sleep(time.Until(due.Add(-2 * time.Second)))
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
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("later-%d", i)
		at := dteEvictedAt(t, ns, name, 40*time.Second)
		if at.Before(due.Add(-time.Second)) || at.After(due.Add(10*time.Second)) {
			t.Errorf("%s evicted at %v, due %v", name, at, due)
		}
	}
	// each pod once: one Event (count 1) and n+1 deletions counted
	l, err := env.Client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	marks := map[string]int32{}
	for _, e := range l.Items {
		if e.Reason == "DeviceTaintManagerEviction" && e.Message == "Marking for deletion" {
			marks[e.InvolvedObject.Name] += e.Count
		}
	}
	for name, c := range marks {
		if c != 1 {
			t.Errorf("pod %s: %d Marking for deletion Events, want 1", name, c)
		}
	}
	if len(marks) != n+1 {
		t.Errorf("Marking for deletion Events for %d pods, want %d", len(marks), n+1)
	}
	if v := teMetric(t, port, "device_taint_eviction_controller_pod_deletions_total"); v != n+1 {
		t.Errorf("device_taint_eviction_controller_pod_deletions_total = %v, want %d", v, n+1)
	}
}
