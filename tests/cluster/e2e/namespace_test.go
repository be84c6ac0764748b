package e2e

// kcmd's namespace-controller (docs/namespace.md) against the real cluster, upstream
// kube-controller-manager not running it. Ported from upstream's test/integration/namespace
// (v1.37, TestNamespaceCondition) and the [sig-api-machinery] Namespaces e2e scenarios that need
// no container runtime (test/e2e/apimachinery/namespace.go: all pods / all services are removed
// when a namespace is deleted, namespace deletion deletes pods first, many namespaces deleted
// fast), with unscheduled pods in place of running ones (no kubelet: the apiserver deletes an
// unscheduled pod at once, and a finalizer holds one as a running pod's grace period would).

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"

	"kcmd.local/tests/cluster/harness"
)

func nsStart(t *testing.T, extra ...string) *kcmdProc {
	t.Helper()
	return saStart(t, "namespace-controller", extra...)
}

// nsCreate makes a namespace named for the test (deleted by the cleanup if it survives).
func nsCreate(t *testing.T, base string) string {
	t.Helper()
	name := fmt.Sprintf("%s-%d", base, time.Now().UnixNano()%1000000)
	if _, err := env.Client.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteTestNamespace(name) })
	return name
}

func nsPod(name string, finalizers ...string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: finalizers},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}
}

func nsDelete(t *testing.T, ns string) {
	t.Helper()
	if err := env.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

func nsWaitGone(t *testing.T, ns string, timeout time.Duration) {
	t.Helper()
	Eventually(t, timeout, "namespace "+ns+" gone", func() (bool, string) {
		n, err := env.Client.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return false, fmt.Sprintf("phase %s, finalizers %v, conditions %+v", n.Status.Phase, n.Spec.Finalizers, n.Status.Conditions)
	})
}

func nsRemovePodFinalizers(t *testing.T, ns, name string) {
	t.Helper()
	_, err := env.Client.CoreV1().Pods(ns).Patch(context.Background(), name, types.MergePatchType,
		[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
}

// TestNamespace_ContentRemoved: "should ensure that all pods are removed when a namespace is
// deleted" and "... all services ..." [Conformance], plus a ConfigMap, a Secret and a
// Deployment: the namespace goes, and a namespace of the same name created again is empty.
func TestNamespace_ContentRemoved(t *testing.T) {
	ctx := context.Background()
	p := nsStart(t)
	ns := nsCreate(t, "nsdeletetest")
	c := env.Client
	if _, err := c.CoreV1().Pods(ns).Create(ctx, nsPod("test-pod"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "test-service"}, Spec: corev1.ServiceSpec{
		Selector: map[string]string{"foo": "bar", "baz": "blah"},
		Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(80)}}}}
	if _, err := c.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AppsV1().Deployments(ns).Create(ctx, nsDeployment("d"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	nsDelete(t, ns)
	nsWaitGone(t, ns, 60*time.Second)
	if !p.Logged("using service account kube-system/namespace-controller") {
		t.Error("the controller does not act as its service account")
	}
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Pods(ns).Get(ctx, "test-pod", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("pod after recreating the namespace: %v", err)
	}
	if _, err := c.CoreV1().Services(ns).Get(ctx, "test-service", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("service after recreating the namespace: %v", err)
	}
	for _, l := range []func() (int, error){
		func() (int, error) {
			l, err := c.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
			return len(l.Items), err
		},
		func() (int, error) {
			l, err := c.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
			return len(l.Items), err
		},
		func() (int, error) {
			l, err := c.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
			return len(l.Items), err
		},
	} {
		if n, err := l(); err != nil || n != 0 {
			t.Errorf("%d objects left in the recreated namespace (%v)", n, err)
		}
	}
}

func nsDeployment(name string) *appsv1.Deployment {
	one := int32(1)
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: appsv1.DeploymentSpec{
		Replicas: &one,
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}}}
}

// TestNamespace_Conditions: upstream's TestNamespaceCondition: a pod and a Deployment held by a
// finalizer; the namespace shows the five conditions with upstream's texts. Then the finalizer
// goes and so does the namespace.
func TestNamespace_Conditions(t *testing.T) {
	ctx := context.Background()
	nsStart(t)
	ns := nsCreate(t, "test-namespace-conditions")
	if _, err := env.Client.CoreV1().Pods(ns).Create(ctx, nsPod("pod1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	d := nsDeployment("deployment1")
	d.Finalizers = []string{"custom.io/finalizer"}
	if _, err := env.Client.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	nsDelete(t, ns)
	want := map[corev1.NamespaceConditionType]string{
		corev1.NamespaceDeletionGVParsingFailure: "All legacy kube types successfully parsed",
		corev1.NamespaceDeletionDiscoveryFailure: "All resources successfully discovered",
		corev1.NamespaceDeletionContentFailure:   "All content successfully deleted, may be waiting on finalization",
		corev1.NamespaceContentRemaining:         "Some resources are remaining: deployments.apps has 1 resource instances",
		corev1.NamespaceFinalizersRemaining:      "Some content in the namespace has finalizers remaining: custom.io/finalizer in 1 resource instances",
	}
	Eventually(t, 60*time.Second, "the five conditions", func() (bool, string) {
		n, err := env.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		found := 0
		for _, c := range n.Status.Conditions {
			if want[c.Type] == c.Message {
				found++
			}
		}
		return found == 5 && n.Status.Phase == corev1.NamespaceTerminating, fmt.Sprintf("%+v", n.Status)
	})
	_, err := env.Client.AppsV1().Deployments(ns).Patch(ctx, "deployment1", types.MergePatchType,
		[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// the finalizer estimate (15 s) brings the controller back: 15/2+1 = 8 s
	nsWaitGone(t, ns, 60*time.Second)
}

// TestNamespace_PodsFirst: "namespace deletion should delete pod first" [Conformance]: while a
// pod remains (here held by a finalizer), nothing else is deleted; once it goes, the rest does.
func TestNamespace_PodsFirst(t *testing.T) {
	ctx := context.Background()
	nsStart(t)
	ns := nsCreate(t, "nsdeletetest")
	if _, err := env.Client.CoreV1().Pods(ns).Create(ctx, nsPod("test-pod", "e2e.example.com/finalizer"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nsRemovePodFinalizers(t, ns, "test-pod") })
	if _, err := env.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "test-configmap"},
		Data: map[string]string{"key": "value"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	nsDelete(t, ns)
	Eventually(t, 60*time.Second, "the pod being deleted", func() (bool, string) {
		p, err := env.Client.CoreV1().Pods(ns).Get(ctx, "test-pod", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return p.DeletionTimestamp != nil, "no deletionTimestamp"
	})
	// give the controller several passes: the ConfigMap must stay while the pod does
	time.Sleep(3 * time.Second)
	if _, err := env.Client.CoreV1().ConfigMaps(ns).Get(ctx, "test-configmap", metav1.GetOptions{}); err != nil {
		t.Fatalf("the ConfigMap went before the pod: %v", err)
	}
	nsRemovePodFinalizers(t, ns, "test-pod")
	nsWaitGone(t, ns, 60*time.Second)
}

// TestNamespace_OtherFinalizerStays: only the finalizer `kubernetes` is the controller's: with
// another one on spec.finalizers, the content goes, `kubernetes` is removed, the namespace stays
// Terminating with the other one.
func TestNamespace_OtherFinalizerStays(t *testing.T) {
	ctx := context.Background()
	nsStart(t)
	ns := nsCreate(t, "nsfinalizer")
	n, err := env.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Spec.Finalizers = append(n.Spec.Finalizers, "e2e.example.com/fakeFinalizer")
	if _, err = env.Client.CoreV1().Namespaces().Finalize(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	nsDelete(t, ns)
	Eventually(t, 60*time.Second, "finalizer kubernetes removed", func() (bool, string) {
		n, err := env.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(n.Spec.Finalizers) == 1 && n.Spec.Finalizers[0] == "e2e.example.com/fakeFinalizer", fmt.Sprint(n.Spec.Finalizers)
	})
	if l, err := env.Client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Fatalf("content left: %v", err)
	}
	n, _ = env.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	n.Spec.Finalizers = nil
	if _, err = env.Client.CoreV1().Namespaces().Finalize(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	nsWaitGone(t, ns, 30*time.Second)
}

// TestNamespace_ManyDeletedFast: "should delete fast enough (90 percent of 100 namespaces in 150
// seconds)"; kcmd is held to all of them.
func TestNamespace_ManyDeletedFast(t *testing.T) {
	ctx := context.Background()
	nsStart(t)
	const n = 100
	prefix := fmt.Sprintf("nslifetest-%d", time.Now().UnixNano()%100000)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			name := fmt.Sprintf("%s-%d", prefix, i)
			if _, err := env.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
				t.Error(err)
			}
			t.Cleanup(func() { deleteTestNamespace(name) })
		}(i)
	}
	wg.Wait()
	start := time.Now()
	for i := 0; i < n; i++ {
		nsDelete(t, fmt.Sprintf("%s-%d", prefix, i))
	}
	Eventually(t, 150*time.Second, "100 namespaces gone", func() (bool, string) {
		l, err := env.Client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		cnt := 0
		for _, item := range l.Items {
			if strings.HasPrefix(item.Name, prefix) {
				cnt++
			}
		}
		return cnt == 0, fmt.Sprintf("%d remaining", cnt)
	})
	t.Logf("%d namespaces deleted in %.1fs", n, time.Since(start).Seconds())
}

// nsFill creates objects configmaps in ns, 16 at a time.
func nsFill(t *testing.T, ns string, objects int) {
	t.Helper()
	ctx := context.Background()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := 0; i < objects; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-" + strconv.Itoa(i)}, Data: map[string]string{"k": "v"}}
			if _, err := env.Client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
}

// nsTreeMem sums VmRSS and Pss (kB) of pid and its direct children: RSS counts the pages a
// process tree shares (kcmd's arena, mapped by every process) once per process, PSS divides
// them among the processes that map them.
func nsTreeMem(pid int) (rss, pss int64) {
	pids := []int{pid}
	for c := range childrenCPU(pid) {
		if c != pid {
			pids = append(pids, c)
		}
	}
	field := func(path, key string) int64 {
		b, err := os.ReadFile(path)
		if err != nil {
			return 0
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, key) {
				if f := strings.Fields(l); len(f) >= 2 {
					v, _ := strconv.ParseInt(f[1], 10, 64)
					return v
				}
			}
		}
		return 0
	}
	for _, p := range pids {
		rss += field(fmt.Sprintf("/proc/%d/status", p), "VmRSS:")
		pss += field(fmt.Sprintf("/proc/%d/smaps_rollup", p), "Pss:")
	}
	return rss, pss
}

func nsTreeCPU(pid int) int64 {
	var sum int64
	for _, t := range childrenCPU(pid) {
		sum += t
	}
	return sum
}

// TestNamespace_BenchVsUpstream: the time a namespace of N ConfigMaps and 20 namespaces of 20
// ConfigMaps take to go away, kcmd's namespace controller against upstream kcm's (each alone,
// default flags), one after the other on the same cluster, with the CPU time (ticks of 10 ms,
// process and direct children) used during the deletions and the RSS and PSS after them
// (KCMD_NS_BENCH=1; N = KCMD_NS_BENCH_OBJECTS, default 1000).
func TestNamespace_BenchVsUpstream(t *testing.T) {
	if os.Getenv("KCMD_NS_BENCH") == "" {
		t.Skip("set KCMD_NS_BENCH=1 (a figure, not a check)")
	}
	objects := 1000
	if v, err := strconv.Atoi(os.Getenv("KCMD_NS_BENCH_OBJECTS")); err == nil && v > 0 {
		objects = v
	}
	run := func(who string, start func() (int, func())) {
		ns := nsCreate(t, "nsbench-"+who)
		nsFill(t, ns, objects)
		many := make([]string, 20)
		for i := range many {
			many[i] = nsCreate(t, fmt.Sprintf("nsbench-%s-%d", who, i))
			nsFill(t, many[i], 20)
		}
		pid, stop := start()
		defer stop()
		time.Sleep(5 * time.Second) // both: caches synced before the clock starts
		cpu0 := nsTreeCPU(pid)
		t0 := time.Now()
		nsDelete(t, ns)
		nsWaitGone(t, ns, 10*time.Minute)
		one := time.Since(t0)
		t0 = time.Now()
		for _, m := range many {
			nsDelete(t, m)
		}
		for _, m := range many {
			nsWaitGone(t, m, 10*time.Minute)
		}
		rss, pss := nsTreeMem(pid)
		t.Logf("%s: 1 namespace x %d configmaps gone in %.2fs; 20 namespaces x 20 configmaps gone in %.2fs; CPU %d ticks; RSS %d kB, PSS %d kB",
			who, objects, one.Seconds(), time.Since(t0).Seconds(), nsTreeCPU(pid)-cpu0, rss, pss)
	}
	run("kcm", func() (int, func()) {
		if err := env.Cluster.StartKCM(context.Background(), harness.KCMOptions{Controllers: "namespace-controller"}); err != nil {
			t.Fatal(err)
		}
		return env.Cluster.Procs["kube-controller-manager"].Pid, env.Cluster.StopKCM
	})
	run("kcmd", func() (int, func()) {
		p := startKcmd(t, nil, "--controllers=namespace-controller", "--secure-port=0", "--leader-elect=false")
		return p.cmd.Process.Pid, func() { _ = p.cmd.Process.Kill(); <-p.done }
	})
}

// TestNamespace_CrashMidDeletion: kill -9 the namespace workers, its dispatcher and informerd
// while 20 namespaces of 50 ConfigMaps are being deleted and one is held by a pod's finalizer;
// the manager restarts them, the dispatcher's resync re-queues every terminating namespace, and
// every namespace goes (the sync starts from the apiserver's state, so a half-done one is
// simply done again).
func TestNamespace_CrashMidDeletion(t *testing.T) {
	ctx := context.Background()
	p := nsStart(t, "--kube-api-qps=5", "--kube-api-burst=5") // 100 qps, burst 500 for its client
	mgr := p.cmd.Process.Pid
	var names []string
	for i := 0; i < 20; i++ {
		ns := nsCreate(t, fmt.Sprintf("nscrash-%d", i))
		nsFill(t, ns, 50)
		names = append(names, ns)
	}
	pinned := nsCreate(t, "nscrash-pinned")
	if _, err := env.Client.CoreV1().Pods(pinned).Create(ctx, nsPod("held", "e2e.example.com/finalizer"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nsRemovePodFinalizers(t, pinned, "held") })
	for _, ns := range append(names, pinned) {
		nsDelete(t, ns)
	}
	for round := 0; round < 2; round++ {
		time.Sleep(time.Duration(5+round) * time.Second) // past the 5 s grace: syncs in flight
		w := gcxKillChildren(t, mgr, "kcmd-worker", "namespace-controller")
		d := gcxKillChildren(t, mgr, "kcmd-dispatch", "namespace-controller")
		i := killChildren(t, mgr, "kcmd-informerd", 1)
		t.Logf("round %d: killed %d workers, %d dispatchers, %d informerd", round, w, d, i)
		if w == 0 {
			t.Fatal("no namespace worker to kill")
		}
	}
	nsRemovePodFinalizers(t, pinned, "held")
	for _, ns := range append(names, pinned) {
		nsWaitGone(t, ns, 120*time.Second)
	}
}

// nsConds is a namespace's deletion conditions as "Type=Status/Reason: message" lines.
func nsConds(n *corev1.Namespace) map[corev1.NamespaceConditionType]string {
	out := map[corev1.NamespaceConditionType]string{}
	for _, c := range n.Status.Conditions {
		out[c.Type] = fmt.Sprintf("%s/%s: %s", c.Status, c.Reason, c.Message)
	}
	return out
}

// TestNamespace_AggregatedAPIDownSameAsUpstream: an APIService whose backend does not exist
// (an aggregated API that is down). Upstream kcm's namespace controller and kcmd's each delete
// a namespace holding a ConfigMap; both must end the same way: the ConfigMap deleted, and the
// namespace either gone in both or kept in both with the same conditions (kcm keeps it with
// NamespaceDeletionDiscoveryFailure when discovery reports the group-version as failed).
func TestNamespace_AggregatedAPIDownSameAsUpstream(t *testing.T) {
	ctx := context.Background()
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	name := "v1alpha1.kcmd-down.example.com"
	svc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{"group": "kcmd-down.example.com", "version": "v1alpha1",
			"groupPriorityMinimum": int64(100), "versionPriority": int64(10), "insecureSkipTLSVerify": true,
			"service": map[string]any{"namespace": "kube-system", "name": "kcmd-no-such-service", "port": int64(443)}}}}
	if _, err := dyn.Resource(gvr).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dyn.Resource(gvr).Delete(context.Background(), name, metav1.DeleteOptions{}) })
	time.Sleep(3 * time.Second) // the aggregator notices it

	type outcome struct {
		gone  bool
		conds map[corev1.NamespaceConditionType]string
	}
	run := func(who string) outcome {
		ns := nsCreate(t, "nsdown-"+who)
		if _, err := env.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		nsDelete(t, ns)
		var o outcome
		Eventually(t, 90*time.Second, who+": namespace gone, or kept with its conditions", func() (bool, string) {
			n, err := env.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				o.gone = true
				return true, ""
			}
			if err != nil {
				return false, err.Error()
			}
			o.conds = nsConds(n)
			_, cmErr := env.Client.CoreV1().ConfigMaps(ns).Get(ctx, "cm", metav1.GetOptions{})
			return len(o.conds) == 5 && apierrors.IsNotFound(cmErr), fmt.Sprint(o.conds)
		})
		// the conditions of a kept namespace settle over a few passes: give both the same time
		if !o.gone {
			time.Sleep(10 * time.Second)
			if n, err := env.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err == nil {
				o.conds = nsConds(n)
			} else {
				o.gone = apierrors.IsNotFound(err)
			}
		}
		t.Logf("%s: gone %v, conditions %v", who, o.gone, o.conds)
		return o
	}
	if err := env.Cluster.StartKCM(ctx, harness.KCMOptions{Controllers: "namespace-controller"}); err != nil {
		t.Fatal(err)
	}
	up := run("kcm")
	env.Cluster.StopKCM()
	nsStart(t)
	got := run("kcmd")
	if up.gone != got.gone {
		t.Fatalf("kcm: gone %v; kcmd: gone %v", up.gone, got.gone)
	}
	if !up.gone {
		for typ, want := range up.conds {
			if got.conds[typ] != want {
				t.Errorf("%s: kcm %q, kcmd %q", typ, want, got.conds[typ])
			}
		}
	}
}
