package e2e

// Helpers shared by the ported upstream ReplicaSet scenarios (replicaset_integration_test.go,
// replicaset_conformance_test.go). No kubelet runs in the test cluster, so the tests play its
// part where a scenario needs pods to run: they write pod status through the pods/status
// subresource (client-go UpdateStatus), as upstream's integration tests do.

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// rsTimeout bounds each wait for the controller. Upstream polls for 60 s; kcmd converges in well
// under a second on these sizes, so 30 s keeps a failing run short and a slow machine green.
const rsTimeout = 30 * time.Second

// fooBar is the label set of the integration scenarios' ReplicaSets and pods.
func fooBar() map[string]string { return map[string]string{"foo": "bar"} }

// itRS is the integration tests' ReplicaSet: selector and template labels foo=bar, one container.
func itRS(ns, name string, replicas int32) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: fooBar()},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: fooBar()},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "fake-name", Image: "fakeimage"}}},
			},
		},
	}
}

// itPod is a bare pod carrying the integration tests' labels.
func itPod(ns, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: fooBar()},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "fake-name", Image: "fakeimage"}}},
	}
}

func mustCreateRS(t *testing.T, rs *appsv1.ReplicaSet) *appsv1.ReplicaSet {
	t.Helper()
	out, err := env.Client.AppsV1().ReplicaSets(rs.Namespace).Create(context.Background(), rs, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating ReplicaSet %s/%s: %v", rs.Namespace, rs.Name, err)
	}
	return out
}

func mustCreatePod(t *testing.T, p *corev1.Pod) *corev1.Pod {
	t.Helper()
	out, err := env.Client.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s/%s: %v", p.Namespace, p.Name, err)
	}
	return out
}

func getRS(t *testing.T, ns, name string) *appsv1.ReplicaSet {
	t.Helper()
	rs, err := env.Client.AppsV1().ReplicaSets(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting ReplicaSet %s/%s: %v", ns, name, err)
	}
	return rs
}

// updateRS applies fn to the current ReplicaSet and updates it, retrying on conflicts.
func updateRS(t *testing.T, ns, name string, fn func(*appsv1.ReplicaSet)) *appsv1.ReplicaSet {
	t.Helper()
	var out *appsv1.ReplicaSet
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		rs, err := env.Client.AppsV1().ReplicaSets(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		fn(rs)
		out, err = env.Client.AppsV1().ReplicaSets(ns).Update(context.Background(), rs, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("updating ReplicaSet %s/%s: %v", ns, name, err)
	}
	return out
}

// updatePod applies fn to the current pod and updates it, retrying on conflicts.
func updatePod(t *testing.T, ns, name string, fn func(*corev1.Pod)) *corev1.Pod {
	t.Helper()
	var out *corev1.Pod
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		p, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		fn(p)
		out, err = env.Client.CoreV1().Pods(ns).Update(context.Background(), p, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("updating pod %s/%s: %v", ns, name, err)
	}
	return out
}

// updatePodStatus applies fn to the current pod and writes its status subresource.
func updatePodStatus(t *testing.T, ns, name string, fn func(*corev1.Pod)) *corev1.Pod {
	t.Helper()
	var out *corev1.Pod
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		p, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		fn(p)
		out, err = env.Client.CoreV1().Pods(ns).UpdateStatus(context.Background(), p, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("updating status of pod %s/%s: %v", ns, name, err)
	}
	return out
}

// listPods lists the pods of ns matching selector (terminating ones included, as upstream's
// getPods), sorted by name so that indexes are stable between calls.
func listPods(t *testing.T, ns string, selector map[string]string) []corev1.Pod {
	t.Helper()
	pods, err := env.Client.CoreV1().Pods(ns).List(context.Background(),
		metav1.ListOptions{LabelSelector: labels.SelectorFromSet(selector).String()})
	if err != nil {
		t.Fatalf("listing pods in %s: %v", ns, err)
	}
	sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Name < pods.Items[j].Name })
	return pods.Items
}

func isActive(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

func isReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func ownedBy(p *corev1.Pod, rs *appsv1.ReplicaSet) bool {
	ref := metav1.GetControllerOf(p)
	return ref != nil && ref.UID == rs.UID
}

// waitRSStable waits, as upstream's testutil.WaitRSStable, for status.observedGeneration to
// reach rs.generation and status.replicas to equal rs.spec.replicas; it also requires that
// exactly spec.replicas active pods are controlled by the ReplicaSet. It returns the ReplicaSet
// as last read.
func waitRSStable(t *testing.T, rs *appsv1.ReplicaSet) *appsv1.ReplicaSet {
	t.Helper()
	want := *rs.Spec.Replicas
	var cur *appsv1.ReplicaSet
	Eventually(t, rsTimeout, fmt.Sprintf("ReplicaSet %s/%s stable at %d replicas (generation %d)", rs.Namespace, rs.Name, want, rs.Generation),
		func() (bool, string) {
			var err error
			cur, err = env.Client.AppsV1().ReplicaSets(rs.Namespace).Get(context.Background(), rs.Name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			pods, err := env.Client.CoreV1().Pods(rs.Namespace).List(context.Background(), metav1.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			owned := 0
			for i := range pods.Items {
				if isActive(&pods.Items[i]) && ownedBy(&pods.Items[i], cur) {
					owned++
				}
			}
			ok := cur.Status.ObservedGeneration >= rs.Generation && cur.Status.Replicas == want && owned == int(want)
			return ok, fmt.Sprintf("status.replicas=%d observedGeneration=%d owned active pods=%d", cur.Status.Replicas,
				cur.Status.ObservedGeneration, owned)
		})
	return cur
}

// scaleRS sets spec.replicas and waits for the ReplicaSet to be stable at the new size.
func scaleRS(t *testing.T, ns, name string, replicas int32) *appsv1.ReplicaSet {
	t.Helper()
	rs := updateRS(t, ns, name, func(rs *appsv1.ReplicaSet) { rs.Spec.Replicas = ptr.To(replicas) })
	return waitRSStable(t, rs)
}

// setReadyCondition plays the kubelet for one pod, as upstream's setPodsReadyCondition: phase
// Running and a Ready condition with the given status and lastTransitionTime.
func setReadyCondition(t *testing.T, ns, name string, status corev1.ConditionStatus, ltt time.Time) {
	t.Helper()
	updatePodStatus(t, ns, name, func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodRunning
		for i := range p.Status.Conditions {
			if p.Status.Conditions[i].Type == corev1.PodReady {
				p.Status.Conditions[i].Status = status
				p.Status.Conditions[i].LastTransitionTime = metav1.NewTime(ltt)
				return
			}
		}
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: status,
			LastTransitionTime: metav1.NewTime(ltt)})
	})
}

// runPod writes the status a kubelet would report for a pod whose containers started and
// passed their readiness checks: phase Running, Ready and ContainersReady true, one running
// container status per container.
func runPod(ctx context.Context, p *corev1.Pod) error {
	now := metav1.Now()
	p.Status.Phase = corev1.PodRunning
	p.Status.StartTime = &now
	setCond := func(typ corev1.PodConditionType) {
		for i := range p.Status.Conditions {
			if p.Status.Conditions[i].Type == typ {
				if p.Status.Conditions[i].Status != corev1.ConditionTrue {
					p.Status.Conditions[i].Status = corev1.ConditionTrue
					p.Status.Conditions[i].LastTransitionTime = now
				}
				return
			}
		}
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: typ, Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	setCond(corev1.PodInitialized)
	setCond(corev1.ContainersReady)
	setCond(corev1.PodReady)
	p.Status.ContainerStatuses = nil
	for _, c := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: c.Image, Ready: true, Started: ptr.To(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	_, err := env.Client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	return err
}

// fakeKubelet marks every active pod of ns Running and Ready shortly after it appears, until the
// test ends. It stands in for the kubelet where upstream's e2e tests wait for running pods.
func fakeKubelet(t *testing.T, ns string) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			pods, err := env.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err == nil {
				for i := range pods.Items {
					p := &pods.Items[i]
					if isActive(p) && !isReady(p) {
						_ = runPod(ctx, p) // a conflict is retried on the next round
					}
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(150 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// waitPodsRunning waits, as upstream's e2epod.VerifyPodsRunning, until want active pods matching
// selector exist and all of them run (the fake kubelet must be on for ns).
func waitPodsRunning(t *testing.T, ns string, selector map[string]string, want int) []corev1.Pod {
	t.Helper()
	var running []corev1.Pod
	Eventually(t, rsTimeout, fmt.Sprintf("%d running pods matching %v", want, selector), func() (bool, string) {
		running = running[:0]
		active := 0
		for _, p := range listPods(t, ns, selector) {
			if !isActive(&p) {
				continue
			}
			active++
			if p.Status.Phase == corev1.PodRunning && isReady(&p) {
				running = append(running, p)
			}
		}
		return active == want && len(running) == want, fmt.Sprintf("active=%d running=%d", active, len(running))
	})
	return running
}

// clearFinalizersOnCleanup removes the finalizers of the named pods when the test ends, so that
// a namespace does not keep pods stuck forever.
func clearFinalizersOnCleanup(t *testing.T, ns string, names ...string) {
	t.Cleanup(func() {
		for _, n := range names {
			_ = retry.RetryOnConflict(retry.DefaultBackoff, func() error {
				p, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), n, metav1.GetOptions{})
				if apierrors.IsNotFound(err) {
					return nil
				}
				if err != nil {
					return err
				}
				p.Finalizers = nil
				_, err = env.Client.CoreV1().Pods(ns).Update(context.Background(), p, metav1.UpdateOptions{})
				return err
			})
		}
	})
}

func podNames(pods []corev1.Pod) string {
	var s []string
	for _, p := range pods {
		s = append(s, p.Name)
	}
	return strings.Join(s, ",")
}

// useSharedRS makes sure the shared ReplicaSet kcmd (startKcmdReplicaSet) runs, and writes its
// log lines about t's namespaces to t's log if t fails.
func useSharedRS(t *testing.T) {
	t.Helper()
	rsProcMu.Lock()
	startKcmdReplicaSet(t)
	p := kcmdRS
	rsProcMu.Unlock()
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
}

// rsProcMu serialises starting and stopping the shared ReplicaSet kcmd.
var rsProcMu sync.Mutex

// stopSharedRS stops the shared ReplicaSet kcmd if it runs; the next startKcmdReplicaSet starts
// a new one. Only sequential tests call it (parallel tests rely on the shared controller).
func stopSharedRS(t *testing.T) {
	t.Helper()
	rsProcMu.Lock()
	defer rsProcMu.Unlock()
	p := kcmdRS
	if p == nil {
		return
	}
	sharedMu.Lock()
	for i, q := range sharedProcs {
		if q == p {
			sharedProcs = append(sharedProcs[:i], sharedProcs[i+1:]...)
			break
		}
	}
	sharedMu.Unlock()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	kcmdRS = nil
	kcmdRSOnce = sync.Once{}
}

// startPrivateRS stops the shared ReplicaSet kcmd and runs one for t alone (killed when t ends),
// so that the controller starts only after the objects t made exist, as upstream's integration
// tests start the controller after creating their pods. The test must have called stopSharedRS
// before making those objects.
func startPrivateRS(t *testing.T, extra ...string) *kcmdProc {
	t.Helper()
	stopSharedRS(t)
	flags := append([]string{"--controllers=replicaset-controller", "--secure-port=0", "--leader-elect=false",
		"--concurrent-replicaset-syncs=5", "--kube-api-qps=200", "--kube-api-burst=400", "--v=4"}, extra...)
	p := startKcmd(t, nil, flags...)
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	return p
}

// dumpKcmdLogs writes, if t failed, the log lines of p that name t's namespace (derived from
// the test name as Namespace does), else its last 100 lines.
func dumpKcmdLogs(t *testing.T, p *kcmdProc) {
	if !t.Failed() || p == nil {
		return
	}
	var b strings.Builder
	for _, r := range strings.ToLower(t.Name()) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	prefix := b.String()
	if len(prefix) > 40 {
		prefix = prefix[:40]
	}
	logs := p.Logs()
	var mine []string
	for _, l := range logs {
		if strings.Contains(l, prefix) {
			mine = append(mine, l)
		}
	}
	if len(mine) == 0 {
		if len(logs) > 100 {
			logs = logs[len(logs)-100:]
		}
		mine = logs
	}
	t.Logf("kcmd[%d] log (%d of %d lines):", p.cmd.Process.Pid, len(mine), len(logs))
	for _, l := range mine {
		t.Logf("kcmd: %s", l)
	}
}

// rsNamespace is Namespace for tests whose names (upstream sub-case names) hold characters a
// namespace name cannot: everything but [a-z0-9-] becomes '-'.
func rsNamespace(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, r := range strings.ToLower(t.Name()) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	name := b.String()
	if len(name) > 50 {
		name = name[:50]
	}
	name = fmt.Sprintf("%s-%d", strings.Trim(name, "-"), time.Now().UnixNano()%100000)
	if _, err := env.Client.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() { deleteTestNamespace(name) })
	return name
}

// waitListCacheHasPods waits until a LIST served from the apiserver's watch cache (resourceVersion
// "0", the kind of LIST an informer starts with, kcmd's too) returns want pods in ns. It stands in
// for upstream's waitToObservePods (polling the controller's pod informer before starting the
// controller): a pod created a moment ago may not be in the watch cache yet, and a controller
// whose initial list misses it creates a pod instead of adopting.
func waitListCacheHasPods(t *testing.T, ns string, want int) {
	t.Helper()
	Eventually(t, rsTimeout, fmt.Sprintf("%d pods in the apiserver's watch cache", want), func() (bool, string) {
		pods, err := env.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return false, err.Error()
		}
		return len(pods.Items) == want, fmt.Sprintf("%d pods", len(pods.Items))
	})
}
