package e2e

// kcmd's daemonset-controller (docs/daemonset.md) on a real kube-apiserver, with no upstream
// kube-controller-manager running (kcmd runs only daemonset-controller, as its own service
// account). There is no scheduler and no kubelet: the Nodes are created through the API and the
// test plays both where a case needs it (binds a pod to the node its affinity names, sets its
// status Running/Ready or Failed), as upstream's integration tests drive pod status by hand.
// Ported from test/integration/daemonset (v1.37): TestOneNodeDaemonLaunchesPod /
// TestSimpleDaemonSetLaunchesPods (one pod per node, its node affinity, labels, owner),
// TestDaemonSetWithNodeSelectorLaunchesPods and test/e2e/apps/daemon_set.go "should run and stop
// complex daemon" (a new node gets a pod, a relabelled node loses it), TestTaintedNode and
// TestUnschedulableNodeDaemonDoesLaunchPod (taints, the daemon tolerations), TestLaunchWithHashCollision's
// revision checks (the ControllerRevision's name and data against upstream's own ComputeHash
// and getPatch), "should retry creating failed daemon pods", TestDealsWithExistingPods
// (adoption, surplus pods, the oldest kept) and the status counts of
// validateDaemonSetStatus (TestNumberReadyStatus, TestObservedGeneration). The Nodes carry a
// per-test label the DaemonSets select, so other Nodes of the cluster do not count.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/retry"
	"k8s.io/kubernetes/pkg/controller"
)

func dsStart(t *testing.T) *kcmdProc {
	t.Helper()
	p := startKcmd(t, nil, "--controllers=daemonset-controller", "--secure-port=0", "--leader-elect=false",
		"--use-service-account-credentials", "--kube-api-qps=200", "--kube-api-burst=400", "--v=4")
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	return p
}

// dsNode creates a Node labelled ds-test=<group> (plus labels) with taints; deleted when t ends.
func dsNode(t *testing.T, name, group string, labels map[string]string, taints ...corev1.Taint) {
	t.Helper()
	l := map[string]string{"ds-test": group}
	for k, v := range labels {
		l[k] = v
	}
	_, err := env.Client.CoreV1().Nodes().Create(context.Background(), &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating node %s: %v", name, err)
	}
	t.Cleanup(func() { _ = env.Client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	// the apiserver's NodeTaint admission gives a new Node node.kubernetes.io/not-ready:NoSchedule,
	// which a DaemonSet pod does not tolerate (its not-ready toleration is NoExecute); with no
	// node lifecycle controller here, the test sets the taints itself, as a Node turning Ready
	dsUpdateNode(t, name, func(n *corev1.Node) { n.Spec.Taints = taints })
}

func dsUpdateNode(t *testing.T, name string, f func(n *corev1.Node)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := env.Client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		f(n)
		_, err = env.Client.CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("updating node %s: %v", name, err)
	}
}

func dsNew(ns, name, group string) *appsv1.DaemonSet {
	labels := map[string]string{"app": name}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{"ds-test": group},
					Containers:   []corev1.Container{{Name: "c", Image: "fake/image:1"}},
				},
			},
		},
	}
}

func dsCreate(t *testing.T, ds *appsv1.DaemonSet) *appsv1.DaemonSet {
	t.Helper()
	out, err := env.Client.AppsV1().DaemonSets(ds.Namespace).Create(context.Background(), ds, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating daemonset %s: %v", ds.Name, err)
	}
	return out
}

func dsGet(t *testing.T, ns, name string) *appsv1.DaemonSet {
	t.Helper()
	ds, err := env.Client.AppsV1().DaemonSets(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func dsUpdate(t *testing.T, ns, name string, f func(ds *appsv1.DaemonSet)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		ds, err := env.Client.AppsV1().DaemonSets(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		f(ds)
		_, err = env.Client.AppsV1().DaemonSets(ns).Update(context.Background(), ds, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("updating daemonset %s: %v", name, err)
	}
}

// dsTarget is upstream's GetTargetNodeName.
func dsTarget(p *corev1.Pod) string {
	if p.Spec.NodeName != "" {
		return p.Spec.NodeName
	}
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range term.MatchFields {
			if f.Key == "metadata.name" && f.Operator == corev1.NodeSelectorOpIn && len(f.Values) == 1 {
				return f.Values[0]
			}
		}
	}
	return ""
}

// dsPods: the live (not terminating) pods of the namespace by target node.
func dsPods(t *testing.T, ns string) map[string][]corev1.Pod {
	t.Helper()
	l, err := env.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]corev1.Pod{}
	for _, p := range l.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		out[dsTarget(&p)] = append(out[dsTarget(&p)], p)
	}
	return out
}

func dsDescribe(m map[string][]corev1.Pod) string {
	var parts []string
	for n, ps := range m {
		parts = append(parts, fmt.Sprintf("%s:%d", n, len(ps)))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// dsWaitPods waits until exactly the named nodes have exactly one live pod each.
func dsWaitPods(t *testing.T, ns string, nodes ...string) map[string][]corev1.Pod {
	t.Helper()
	var m map[string][]corev1.Pod
	want := make([]string, 0, len(nodes))
	for _, n := range nodes {
		want = append(want, n+":1")
	}
	sort.Strings(want)
	Eventually(t, 60*time.Second, "one pod on each of "+strings.Join(nodes, ","), func() (bool, string) {
		m = dsPods(t, ns)
		got := dsDescribe(m)
		return got == strings.Join(want, ","), got
	})
	return m
}

func dsWaitStatus(t *testing.T, ns, name string, want appsv1.DaemonSetStatus) *appsv1.DaemonSet {
	t.Helper()
	var ds *appsv1.DaemonSet
	Eventually(t, 60*time.Second, ns+"/"+name+" status", func() (bool, string) {
		ds = dsGet(t, ns, name)
		st := ds.Status
		st.CollisionCount, st.Conditions = nil, nil
		w := want
		w.ObservedGeneration = ds.Generation
		return fmt.Sprintf("%+v", st) == fmt.Sprintf("%+v", w), fmt.Sprintf("got %+v want %+v", st, w)
	})
	return ds
}

// dsRun plays the scheduler and the kubelet: binds the pod to its target node, then sets its
// status (Running and Ready, or the given terminal phase).
func dsRun(t *testing.T, p *corev1.Pod, phase corev1.PodPhase) {
	t.Helper()
	ctx := context.Background()
	if p.Spec.NodeName == "" {
		err := env.Client.CoreV1().Pods(p.Namespace).Bind(ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
			Target:     corev1.ObjectReference{Kind: "Node", Name: dsTarget(p)},
		}, metav1.CreateOptions{})
		if apierrors.IsNotFound(err) {
			return // deleted meanwhile (the controller replaced it): nothing to run
		}
		if err != nil {
			t.Fatalf("binding %s: %v", p.Name, err)
		}
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := env.Client.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		cur.Status.Phase = phase
		ready := corev1.ConditionFalse
		if phase == corev1.PodRunning {
			ready = corev1.ConditionTrue
		}
		cur.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: ready, LastTransitionTime: now}}
		_, err = env.Client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return
	}
	if err != nil {
		t.Fatalf("pod %s status: %v", p.Name, err)
	}
}

// dsWaitEvents waits until at least want daemonset-controller Events of the reason exist (Events
// are written after the change they report, so a test that saw the change may be ahead of them),
// and returns how many there are then.
func dsWaitEvents(t *testing.T, ns, reason string, want int) int {
	t.Helper()
	n := 0
	deadline := time.Now().Add(20 * time.Second)
	for {
		n = len(dsEvents(t, ns, reason))
		if n >= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func dsEvents(t *testing.T, ns, reason string) []corev1.Event {
	t.Helper()
	l, err := env.Client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []corev1.Event
	for _, e := range l.Items {
		if e.Reason == reason && e.Source.Component == "daemonset-controller" {
			out = append(out, e)
		}
	}
	return out
}

// dsUpstreamPatch is upstream's getPatch over the DaemonSet as client-go reads it.
func dsUpstreamPatch(t *testing.T, ds *appsv1.DaemonSet) []byte {
	t.Helper()
	data, err := runtime.Encode(scheme.Codecs.LegacyCodec(appsv1.SchemeGroupVersion), ds)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]interface{}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	tmpl := raw["spec"].(map[string]interface{})["template"].(map[string]interface{})
	tmpl["$patch"] = "replace"
	patch, err := json.Marshal(map[string]interface{}{"spec": map[string]interface{}{"template": tmpl}})
	if err != nil {
		t.Fatal(err)
	}
	return patch
}

func TestDaemonSet_OnePodPerNodeRevisionAndStatus(t *testing.T) {
	dsStart(t)
	ns := Namespace(t)
	group := "one-" + ns
	nodes := []string{"ds-a-" + ns, "ds-b-" + ns, "ds-c-" + ns}
	for _, n := range nodes {
		dsNode(t, n, group, nil)
	}
	ds := dsCreate(t, dsNew(ns, "ds", group))
	m := dsWaitPods(t, ns, nodes...)
	ds = dsGet(t, ns, "ds")

	// the revision: upstream's name (ds-<ComputeHash>) and data (getPatch)
	hash := controller.ComputeHash(&ds.Spec.Template, ds.Status.CollisionCount)
	crs, err := env.Client.AppsV1().ControllerRevisions(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(crs.Items) != 1 {
		t.Fatalf("%d ControllerRevisions, want 1", len(crs.Items))
	}
	cr := crs.Items[0]
	if cr.Name != "ds-"+hash || cr.Labels["controller-revision-hash"] != hash || cr.Labels["app"] != "ds" || cr.Revision != 1 {
		t.Errorf("revision %s labels %v revision %d; want ds-%s", cr.Name, cr.Labels, cr.Revision, hash)
	}
	if want := dsUpstreamPatch(t, ds); string(cr.Data.Raw) != string(want) {
		t.Errorf("revision data\n got %s\nwant %s", cr.Data.Raw, want)
	}
	if ref := metav1.GetControllerOf(&cr); ref == nil || ref.UID != ds.UID || ref.Kind != "DaemonSet" {
		t.Errorf("revision controller %+v", ref)
	}

	// each pod: owned, labelled, tolerating, pinned to its node by affinity
	for _, n := range nodes {
		p := m[n][0]
		if ref := metav1.GetControllerOf(&p); ref == nil || ref.UID != ds.UID || !*ref.BlockOwnerDeletion {
			t.Errorf("pod %s controller %+v", p.Name, ref)
		}
		if p.Labels["controller-revision-hash"] != hash || p.Labels["pod-template-generation"] != "1" || p.Labels["app"] != "ds" {
			t.Errorf("pod %s labels %v", p.Name, p.Labels)
		}
		if !strings.HasPrefix(p.Name, "ds-") || p.Spec.NodeName != "" {
			t.Errorf("pod %s nodeName %q", p.Name, p.Spec.NodeName)
		}
		terms := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
		if len(terms) != 1 || len(terms[0].MatchFields) != 1 || terms[0].MatchFields[0].Values[0] != n {
			t.Errorf("pod %s affinity %+v", p.Name, terms)
		}
		var keys []string
		for _, tol := range p.Spec.Tolerations {
			keys = append(keys, tol.Key+":"+string(tol.Effect))
		}
		want := "node.kubernetes.io/not-ready:NoExecute,node.kubernetes.io/unreachable:NoExecute," +
			"node.kubernetes.io/disk-pressure:NoSchedule,node.kubernetes.io/memory-pressure:NoSchedule," +
			"node.kubernetes.io/pid-pressure:NoSchedule,node.kubernetes.io/unschedulable:NoSchedule"
		if strings.Join(keys, ",") != want {
			t.Errorf("pod %s tolerations %v", p.Name, keys)
		}
	}
	dsWaitStatus(t, ns, "ds", appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, CurrentNumberScheduled: 3,
		UpdatedNumberScheduled: 3, NumberUnavailable: 3})
	if n := dsWaitEvents(t, ns, "SuccessfulCreate", 3); n != 3 {
		t.Errorf("%d SuccessfulCreate events, want 3", n)
	}

	// TestNumberReadyStatus: two pods running and ready
	dsRun(t, &m[nodes[0]][0], corev1.PodRunning)
	dsRun(t, &m[nodes[1]][0], corev1.PodRunning)
	dsWaitStatus(t, ns, "ds", appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, CurrentNumberScheduled: 3,
		UpdatedNumberScheduled: 3, NumberReady: 2, NumberAvailable: 2, NumberUnavailable: 1})
	// a stable state: still exactly one pod per node, no more revisions
	time.Sleep(2 * time.Second)
	dsWaitPods(t, ns, nodes...)
	if crs, _ := env.Client.AppsV1().ControllerRevisions(ns).List(context.Background(), metav1.ListOptions{}); len(crs.Items) != 1 {
		t.Errorf("%d revisions after a stable period", len(crs.Items))
	}
}

func TestDaemonSet_NodeSelectorNewNodeAndRelabel(t *testing.T) {
	dsStart(t)
	ns := Namespace(t)
	group := "sel-" + ns
	a, b, c := "ds-a-"+ns, "ds-b-"+ns, "ds-c-"+ns
	dsNode(t, a, group, map[string]string{"color": "blue"})
	dsNode(t, b, group, map[string]string{"color": "blue"})
	dsNode(t, c, group, nil)
	d := dsNew(ns, "ds", group)
	d.Spec.Template.Spec.NodeSelector["color"] = "blue"
	dsCreate(t, d)
	dsWaitPods(t, ns, a, b)
	dsWaitStatus(t, ns, "ds", appsv1.DaemonSetStatus{DesiredNumberScheduled: 2, CurrentNumberScheduled: 2,
		UpdatedNumberScheduled: 2, NumberUnavailable: 2})

	// a node labelled to match gets a pod; a new matching node too
	dsUpdateNode(t, c, func(n *corev1.Node) { n.Labels["color"] = "blue" })
	e := "ds-e-" + ns
	dsNode(t, e, group, map[string]string{"color": "blue"})
	dsWaitPods(t, ns, a, b, c, e)
	dsWaitStatus(t, ns, "ds", appsv1.DaemonSetStatus{DesiredNumberScheduled: 4, CurrentNumberScheduled: 4,
		UpdatedNumberScheduled: 4, NumberUnavailable: 4})

	// a node relabelled away loses its pod
	dsUpdateNode(t, a, func(n *corev1.Node) { n.Labels["color"] = "red" })
	dsWaitPods(t, ns, b, c, e)
	dsWaitStatus(t, ns, "ds", appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, CurrentNumberScheduled: 3,
		UpdatedNumberScheduled: 3, NumberUnavailable: 3})
	if n := dsWaitEvents(t, ns, "SuccessfulDelete", 1); n != 1 {
		t.Errorf("%d SuccessfulDelete events, want 1", n)
	}
}

func TestDaemonSet_TaintsTolerationsAndNewRevision(t *testing.T) {
	dsStart(t)
	ns := Namespace(t)
	group := "taint-" + ns
	plain, tainted, notReady, unsched := "ds-p-"+ns, "ds-t-"+ns, "ds-n-"+ns, "ds-u-"+ns
	dsNode(t, plain, group, nil)
	dsNode(t, tainted, group, nil, corev1.Taint{Key: "dedicated", Value: "x", Effect: corev1.TaintEffectNoSchedule})
	// the daemon tolerations: not-ready NoExecute, unschedulable NoSchedule
	dsNode(t, notReady, group, nil, corev1.Taint{Key: "node.kubernetes.io/not-ready", Effect: corev1.TaintEffectNoExecute})
	dsNode(t, unsched, group, nil, corev1.Taint{Key: "node.kubernetes.io/unschedulable", Effect: corev1.TaintEffectNoSchedule})
	dsCreate(t, dsNew(ns, "ds", group))
	dsWaitPods(t, ns, plain, notReady, unsched)
	dsWaitStatus(t, ns, "ds", appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, CurrentNumberScheduled: 3,
		UpdatedNumberScheduled: 3, NumberUnavailable: 3})

	// a toleration in the template: the tainted node gets a pod, a second revision exists, the
	// new generation is observed, and the new pod carries the new hash and generation
	dsUpdate(t, ns, "ds", func(d *appsv1.DaemonSet) {
		d.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual,
			Value: "x", Effect: corev1.TaintEffectNoSchedule}}
	})
	m := dsWaitPods(t, ns, plain, tainted, notReady, unsched)
	ds := dsGet(t, ns, "ds")
	hash := controller.ComputeHash(&ds.Spec.Template, ds.Status.CollisionCount)
	if p := m[tainted][0]; p.Labels["controller-revision-hash"] != hash || p.Labels["pod-template-generation"] != "2" {
		t.Errorf("new pod labels %v, want hash %s generation 2", p.Labels, hash)
	}
	// RollingUpdate (maxUnavailable 1): the old pods are not available (no kubelet), so each
	// is replaced at once; unbound pods go immediately
	Eventually(t, 60*time.Second, "every pod on the new revision", func() (bool, string) {
		m := dsPods(t, ns)
		var old []string
		for n, ps := range m {
			for _, p := range ps {
				if p.Labels["controller-revision-hash"] != hash {
					old = append(old, n)
				}
			}
		}
		return len(old) == 0 && len(m) == 4, fmt.Sprintf("old pods on %v; %s", old, dsDescribe(m))
	})
	dsWaitStatus(t, ns, "ds", appsv1.DaemonSetStatus{DesiredNumberScheduled: 4, CurrentNumberScheduled: 4,
		UpdatedNumberScheduled: 4, NumberUnavailable: 4})
	crs, err := env.Client.AppsV1().ControllerRevisions(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	revs := map[string]int64{}
	for _, cr := range crs.Items {
		revs[cr.Name] = cr.Revision
	}
	if len(revs) != 2 || revs["ds-"+hash] != 2 {
		t.Errorf("revisions %v, want 2 with ds-%s at 2", revs, hash)
	}

	// a NoExecute taint the pod does not tolerate: its pod is deleted
	dsUpdateNode(t, plain, func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "evict", Effect: corev1.TaintEffectNoExecute})
	})
	dsWaitPods(t, ns, tainted, notReady, unsched)
}

func TestDaemonSet_AdoptsAndKeepsOldestDeletesSurplus(t *testing.T) {
	dsStart(t)
	ns := Namespace(t)
	group := "adopt-" + ns
	a, b := "ds-a-"+ns, "ds-b-"+ns
	dsNode(t, a, group, nil)
	dsNode(t, b, group, nil)
	// two orphans pinned to node a, the first older, before the DaemonSet exists
	var names []string
	for i := 0; i < 2; i++ {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("orphan-%d", i), Labels: map[string]string{"app": "ds"}},
			Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "c", Image: "fake/image:1"}},
				Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
						MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{a}}},
					}}},
				}},
			},
		}
		if _, err := env.Client.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		names = append(names, p.Name)
		time.Sleep(1100 * time.Millisecond) // creationTimestamp has second precision
	}
	// OnDelete: the adopted orphan has no revision label, so a rolling update would replace it
	// (it is not available); here it must stay
	d := dsNew(ns, "ds", group)
	d.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}
	ds := dsCreate(t, d)
	m := dsWaitPods(t, ns, a, b)
	if got := m[a][0]; got.Name != names[0] {
		t.Errorf("kept %s on %s, want the oldest %s", got.Name, a, names[0])
	} else if ref := metav1.GetControllerOf(&got); ref == nil || ref.UID != ds.UID {
		t.Errorf("the kept orphan was not adopted: %+v", got.OwnerReferences)
	}
	if _, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), names[1], metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the surplus pod %s: %v", names[1], err)
	}
	// the adopted pod has no hash label: counted scheduled, not updated
	dsWaitStatus(t, ns, "ds", appsv1.DaemonSetStatus{DesiredNumberScheduled: 2, CurrentNumberScheduled: 2,
		UpdatedNumberScheduled: 1, NumberUnavailable: 2})
}

func TestDaemonSet_FailedPodIsReplaced(t *testing.T) {
	dsStart(t)
	ns := Namespace(t)
	group := "fail-" + ns
	a := "ds-a-" + ns
	dsNode(t, a, group, nil)
	dsCreate(t, dsNew(ns, "ds", group))
	m := dsWaitPods(t, ns, a)
	first := m[a][0]
	dsRun(t, &first, corev1.PodFailed)
	// the failed pod is deleted (bound: it stays terminating, with no kubelet) and a new one made
	Eventually(t, 60*time.Second, "a new pod on "+a, func() (bool, string) {
		m = dsPods(t, ns)
		ps := m[a]
		return len(ps) == 1 && ps[0].Name != first.Name, dsDescribe(m)
	})
	if n := dsWaitEvents(t, ns, "FailedDaemonPod", 1); n < 1 {
		t.Errorf("no FailedDaemonPod event")
	}
	cur, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), first.Name, metav1.GetOptions{})
	if err == nil && cur.DeletionTimestamp == nil {
		t.Errorf("the failed pod %s is not being deleted", first.Name)
	}
	var zero int64
	_ = env.Client.CoreV1().Pods(ns).Delete(context.Background(), first.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
}

// dsKubelet plays the scheduler and the kubelet until done says stop: binds and readies new
// pods, finishes terminating ones. It returns the most old-revision pods seen terminating at once.
func dsKubelet(t *testing.T, ns, hash string, done func(m map[string][]corev1.Pod) bool, seen ...func(m map[string][]corev1.Pod)) int {
	t.Helper()
	most := 0
	var zero int64
	Eventually(t, 90*time.Second, "the rolling update", func() (bool, string) {
		l, err := env.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// what the listing shows before this kubelet acts on it: a surge pod is Pending here
		// beside the old pod it replaces (the old one goes only once the new one is ready)
		live := map[string][]corev1.Pod{}
		for _, p := range l.Items {
			if p.DeletionTimestamp == nil {
				live[dsTarget(&p)] = append(live[dsTarget(&p)], p)
			}
		}
		for _, f := range seen {
			f(live)
		}
		terminating := 0
		for i := range l.Items {
			p := &l.Items[i]
			switch {
			case p.DeletionTimestamp != nil:
				if p.Labels["controller-revision-hash"] != hash {
					terminating++
				}
				_ = env.Client.CoreV1().Pods(ns).Delete(context.Background(), p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
			case p.Status.Phase != corev1.PodRunning:
				dsRun(t, p, corev1.PodRunning)
			}
		}
		if terminating > most {
			most = terminating
		}
		m := dsPods(t, ns)
		if !done(m) {
			return false, dsDescribe(m)
		}
		// finished only when no pod is left terminating (the status counts those too)
		l, err = env.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range l.Items {
			if p.DeletionTimestamp != nil {
				return false, "terminating " + p.Name
			}
		}
		return true, ""
	})
	return most
}

func TestDaemonSet_RollingUpdateMaxUnavailable(t *testing.T) {
	dsStart(t)
	ns := Namespace(t)
	group := "ru-" + ns
	nodes := []string{"ds-a-" + ns, "ds-b-" + ns, "ds-c-" + ns}
	for _, n := range nodes {
		dsNode(t, n, group, nil)
	}
	dsCreate(t, dsNew(ns, "ds", group))
	dsWaitPods(t, ns, nodes...)
	first := controller.ComputeHash(&dsGet(t, ns, "ds").Spec.Template, nil)
	dsKubelet(t, ns, first, func(m map[string][]corev1.Pod) bool {
		for _, n := range nodes {
			if len(m[n]) != 1 || m[n][0].Status.Phase != corev1.PodRunning {
				return false
			}
		}
		return true
	})
	dsWaitStatus(t, ns, "ds", appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, CurrentNumberScheduled: 3,
		UpdatedNumberScheduled: 3, NumberReady: 3, NumberAvailable: 3})

	dsUpdate(t, ns, "ds", func(d *appsv1.DaemonSet) { d.Spec.Template.Spec.Containers[0].Image = "fake/image:2" })
	ds := dsGet(t, ns, "ds")
	hash := controller.ComputeHash(&ds.Spec.Template, ds.Status.CollisionCount)
	most := dsKubelet(t, ns, hash, func(m map[string][]corev1.Pod) bool {
		for _, n := range nodes {
			if len(m[n]) != 1 || m[n][0].Labels["controller-revision-hash"] != hash || m[n][0].Status.Phase != corev1.PodRunning {
				return false
			}
		}
		return true
	})
	if most > 1 {
		t.Errorf("%d old pods terminating at once with maxUnavailable 1", most)
	}
	dsWaitStatus(t, ns, "ds", appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, CurrentNumberScheduled: 3,
		UpdatedNumberScheduled: 3, NumberReady: 3, NumberAvailable: 3})
	if n := dsWaitEvents(t, ns, "SuccessfulDelete", 3); n != 3 {
		t.Errorf("%d SuccessfulDelete events, want 3", n)
	}
}

func TestDaemonSet_OnDeleteKeepsOldPods(t *testing.T) {
	dsStart(t)
	ns := Namespace(t)
	group := "ondel-" + ns
	a, b := "ds-a-"+ns, "ds-b-"+ns
	dsNode(t, a, group, nil)
	dsNode(t, b, group, nil)
	d := dsNew(ns, "ds", group)
	d.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}
	dsCreate(t, d)
	m := dsWaitPods(t, ns, a, b)
	dsUpdate(t, ns, "ds", func(d *appsv1.DaemonSet) { d.Spec.Template.Spec.Containers[0].Image = "fake/image:2" })
	dsWaitStatus(t, ns, "ds", appsv1.DaemonSetStatus{DesiredNumberScheduled: 2, CurrentNumberScheduled: 2,
		UpdatedNumberScheduled: 0, NumberUnavailable: 2})
	// the old pods stay; a deleted one comes back on the new revision
	time.Sleep(2 * time.Second)
	if got := dsWaitPods(t, ns, a, b); got[a][0].Name != m[a][0].Name || got[b][0].Name != m[b][0].Name {
		t.Fatalf("OnDelete replaced pods: %v", dsDescribe(got))
	}
	if err := env.Client.CoreV1().Pods(ns).Delete(context.Background(), m[a][0].Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ds := dsGet(t, ns, "ds")
	hash := controller.ComputeHash(&ds.Spec.Template, ds.Status.CollisionCount)
	Eventually(t, 60*time.Second, "a new-revision pod on "+a, func() (bool, string) {
		got := dsPods(t, ns)
		return len(got[a]) == 1 && got[a][0].Labels["controller-revision-hash"] == hash && len(got[b]) == 1 &&
			got[b][0].Name == m[b][0].Name, dsDescribe(got)
	})
	dsWaitStatus(t, ns, "ds", appsv1.DaemonSetStatus{DesiredNumberScheduled: 2, CurrentNumberScheduled: 2,
		UpdatedNumberScheduled: 1, NumberUnavailable: 2})
}

func TestDaemonSet_RollingUpdateMaxSurge(t *testing.T) {
	dsStart(t)
	ns := Namespace(t)
	group := "surge-" + ns
	nodes := []string{"ds-a-" + ns, "ds-b-" + ns}
	for _, n := range nodes {
		dsNode(t, n, group, nil)
	}
	d := dsNew(ns, "ds", group)
	zero, one := intstr.FromInt32(0), intstr.FromInt32(1)
	d.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: &zero, MaxSurge: &one}}
	dsCreate(t, d)
	dsWaitPods(t, ns, nodes...)
	first := controller.ComputeHash(&dsGet(t, ns, "ds").Spec.Template, nil)
	dsKubelet(t, ns, first, func(m map[string][]corev1.Pod) bool {
		for _, n := range nodes {
			if len(m[n]) != 1 || m[n][0].Status.Phase != corev1.PodRunning {
				return false
			}
		}
		return true
	})

	dsUpdate(t, ns, "ds", func(d *appsv1.DaemonSet) { d.Spec.Template.Spec.Containers[0].Image = "fake/image:2" })
	ds := dsGet(t, ns, "ds")
	hash := controller.ComputeHash(&ds.Spec.Template, ds.Status.CollisionCount)
	mostSurged, sawSurge := 0, false
	observe := func(m map[string][]corev1.Pod) {
		surged := 0
		for _, n := range nodes {
			if len(m[n]) > 1 {
				surged++
				sawSurge = true
			}
		}
		if surged > mostSurged {
			mostSurged = surged
		}
	}
	dsKubelet(t, ns, hash, func(m map[string][]corev1.Pod) bool {
		observe(m)
		for _, n := range nodes {
			if len(m[n]) != 1 || m[n][0].Labels["controller-revision-hash"] != hash || m[n][0].Status.Phase != corev1.PodRunning {
				return false
			}
		}
		return true
	}, observe)
	if !sawSurge || mostSurged > 1 {
		t.Errorf("nodes with a surge pod: at most %d (seen: %v), want exactly 1 at a time", mostSurged, sawSurge)
	}
	dsWaitStatus(t, ns, "ds", appsv1.DaemonSetStatus{DesiredNumberScheduled: 2, CurrentNumberScheduled: 2,
		UpdatedNumberScheduled: 2, NumberReady: 2, NumberAvailable: 2})
	if n := dsWaitEvents(t, ns, "SuccessfulDelete", 2); n != 2 {
		t.Errorf("%d SuccessfulDelete events, want 2", n)
	}
}

// TestDaemonSet_CrashDuringCreation: the daemonset worker is killed (SIGKILL) again and again
// while it creates the pods of 12 nodes through a slow client; the DaemonSet converges to exactly
// one pod per node and every pod was created once (a watch counts pod uids): the expectations
// in shared memory outlive the worker (a dead worker's record counts as satisfied only after
// the orphan grace, 60 s, so a new worker does not create again what the cache has not shown).
func TestDaemonSet_CrashDuringCreation(t *testing.T) {
	p := startKcmd(t, nil, "--controllers=daemonset-controller", "--secure-port=0", "--leader-elect=false",
		"--concurrent-daemonset-syncs=1", "--kube-api-qps=10", "--kube-api-burst=2", "--v=4")
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	mgr := p.cmd.Process.Pid
	ns := Namespace(t)
	group, nodes := dsCrashNodes(t, ns)
	tr := hjTrack(t, ns)
	dsCreate(t, dsNew(ns, "ds", group))
	kills := 0
	deadline := time.Now().Add(6 * time.Second)
	for time.Now().Before(deadline) && kills < 4 && len(dsPods(t, ns)) < 12 {
		time.Sleep(500 * time.Millisecond)
		for pid, comm := range childrenOf(mgr) {
			if comm != "kcmd-worker" {
				continue
			}
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			if strings.Contains(string(b), "daemonset-controller") && syscall.Kill(pid, syscall.SIGKILL) == nil {
				kills++
			}
		}
	}
	if kills == 0 {
		t.Fatal("no daemonset worker was killed")
	}
	if problem := dsCrashVerdict(t, ns, nodes, tr); problem != "" {
		t.Fatalf("%s (killed the worker %d times)", problem, kills)
	}
	t.Logf("killed the daemonset worker %d times; 12 pods, each created once", kills)
}

// dsCrashNodes makes the 12 nodes of the crash test and its negative control.
func dsCrashNodes(t *testing.T, ns string) (string, []string) {
	t.Helper()
	group := "crash-" + ns
	var nodes []string
	for i := 0; i < 12; i++ {
		n := fmt.Sprintf("ds-%02d-%s", i, ns)
		dsNode(t, n, group, nil)
		nodes = append(nodes, n)
	}
	return group, nodes
}

// dsCrashVerdict is TestDaemonSet_CrashDuringCreation's oracle: the DaemonSet converges to
// exactly one live pod on each node (within 150 s), and the watch tr saw exactly one pod created
// per node over the whole run (a surplus the controller later deleted still counts). It returns
// the problem, or "".
func dsCrashVerdict(t *testing.T, ns string, nodes []string, tr *hjTracker) string {
	t.Helper()
	want := make([]string, 0, len(nodes))
	for _, n := range nodes {
		want = append(want, n+":1")
	}
	sort.Strings(want)
	got := ""
	for end := time.Now().Add(150 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if got = dsDescribe(dsPods(t, ns)); got == strings.Join(want, ",") {
			break
		}
		if time.Now().After(end) {
			return fmt.Sprintf("not one pod on each of the %d nodes after 150 s: %s", len(nodes), got)
		}
	}
	if n := tr.count(); n != len(nodes) {
		return fmt.Sprintf("%d pods were created, want %d", n, len(nodes))
	}
	return ""
}

// TestDaemonSet_CrashDuringCreationNegativeControl: the fault a killed worker could cause is a
// daemon pod created twice for one node (a new worker not waiting for what the dead one
// created). The same DaemonSet and nodes as the crash test, no kill; once the 12 pods exist a
// second daemon pod for one node, owned by the DaemonSet as its own are, is created behind the
// controller's back. The controller deletes the surplus, so the end state is right again, and
// the crash test's oracle must still report the extra creation.
func TestDaemonSet_CrashDuringCreationNegativeControl(t *testing.T) {
	p := startKcmd(t, nil, "--controllers=daemonset-controller", "--secure-port=0", "--leader-elect=false",
		"--concurrent-daemonset-syncs=1", "--kube-api-qps=10", "--kube-api-burst=2", "--v=4")
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	ns := Namespace(t)
	group, nodes := dsCrashNodes(t, ns)
	tr := hjTrack(t, ns)
	dsCreate(t, dsNew(ns, "ds", group))
	m := dsWaitPods(t, ns, nodes...)
	orig := m[nodes[3]][0]
	dup := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "ds-", Labels: orig.Labels,
			OwnerReferences: orig.OwnerReferences},
		Spec: corev1.PodSpec{Affinity: orig.Spec.Affinity, Tolerations: orig.Spec.Tolerations,
			NodeSelector: orig.Spec.NodeSelector, Containers: []corev1.Container{{Name: "c", Image: "fake/image:1"}}},
	}
	if _, err := env.Client.CoreV1().Pods(ns).Create(context.Background(), dup, metav1.CreateOptions{}); err != nil {
		t.Fatalf("injecting a second daemon pod for %s: %v", nodes[3], err)
	}
	problem := dsCrashVerdict(t, ns, nodes, tr)
	if !strings.HasPrefix(problem, "13 pods were created, want 12") {
		t.Fatalf("negative control: a daemon pod created twice for %s, the oracle said %q", nodes[3], problem)
	}
	t.Logf("negative control: the oracle reports %q", problem)
}

// TestDaemonSet_RevisionHistoryLimit: with revisionHistoryLimit 1, after three template updates
// rolled out, the current revision and the newest old one remain (cleanupHistory), numbered 4
// and 3.
func TestDaemonSet_RevisionHistoryLimit(t *testing.T) {
	dsStart(t)
	ns := Namespace(t)
	group := "hist-" + ns
	a := "ds-a-" + ns
	dsNode(t, a, group, nil)
	d := dsNew(ns, "ds", group)
	d.Spec.RevisionHistoryLimit = dsPtr32(1)
	dsCreate(t, d)
	dsWaitPods(t, ns, a)
	var hash string
	for i := 2; i <= 4; i++ {
		dsUpdate(t, ns, "ds", func(d *appsv1.DaemonSet) {
			d.Spec.Template.Spec.Containers[0].Image = fmt.Sprintf("fake/image:%d", i)
		})
		ds := dsGet(t, ns, "ds")
		hash = controller.ComputeHash(&ds.Spec.Template, ds.Status.CollisionCount)
		Eventually(t, 60*time.Second, "the pod on revision "+hash, func() (bool, string) {
			m := dsPods(t, ns)
			return len(m[a]) == 1 && m[a][0].Labels["controller-revision-hash"] == hash, dsDescribe(m)
		})
	}
	Eventually(t, 60*time.Second, "two revisions left", func() (bool, string) {
		crs, err := env.Client.AppsV1().ControllerRevisions(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, cr := range crs.Items {
			got = append(got, fmt.Sprintf("%s@%d", cr.Name, cr.Revision))
		}
		sort.Strings(got)
		ok := len(crs.Items) == 2
		for _, cr := range crs.Items {
			ok = ok && (cr.Revision == 3 || (cr.Revision == 4 && cr.Name == "ds-"+hash))
		}
		return ok, strings.Join(got, ",")
	})
}

func dsPtr32(v int32) *int32 { return &v }
