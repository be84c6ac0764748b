package e2e

// kcmd's disruption-controller (docs/disruption.md) on the real kube-apiserver, upstream
// kube-controller-manager not running it. Ported from upstream's test/integration/disruption
// (v1.37): TestPDBWithScaleSubresource, TestEmptySelector (the policy/v1 case; v1.37 serves no
// policy/v1beta1), TestSelectorsForPodsWithoutLabels (the v1 cases), TestStalePodDisruption.
// Not ported: TestPatchCompatibility (the apiserver's patch strategies, no controller involved)
// and TestPDBInPreemption (the scheduler's preemption). kcmd's additions: the finder through a
// ReplicaSet, the SyncFailed fail-safe (no scale subresource, an unknown kind, an aggregated API
// that is down), the disruptedPods expiry and recheck, and the Events.
//
// No kubelet runs: pods are made Ready (or Failed) by writing their status through the status
// subresource, as upstream's integration tests do. One kcmd runs the controller for every test
// here (each in its own namespace), as the controller's service account
// (--use-service-account-credentials), so its requests must pass upstream's bootstrap role
// system:controller:disruption-controller.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

var (
	kcmdPDB     *kcmdProc
	kcmdPDBOnce sync.Once
	pdbProcMu   sync.Mutex
)

func usePDBController(t *testing.T) *kcmdProc {
	t.Helper()
	pdbProcMu.Lock()
	kcmdPDBOnce.Do(func() {
		kcmdPDB = startKcmdShared(t, "--controllers=disruption-controller", "--secure-port=0",
			"--leader-elect=false", "--use-service-account-credentials", "--v=4")
	})
	p := kcmdPDB
	pdbProcMu.Unlock()
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	return p
}

// pdbPod creates a pod (phase Running and Ready unless ready is false) with the labels and
// owner references given; nodeName "" leaves it unscheduled.
func pdbPod(t *testing.T, ns, name string, labels map[string]string, owners []metav1.OwnerReference, ready bool, nodeName string) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	p, err := env.Client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, OwnerReferences: owners},
		Spec: corev1.PodSpec{NodeName: nodeName,
			Containers: []corev1.Container{{Name: "fake-name", Image: "fakeimage"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s: %v", name, err)
	}
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}}
	if p, err = env.Client.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("pod %s status: %v", name, err)
	}
	return p
}

func pdbCreate(t *testing.T, ns string, pdb *policyv1.PodDisruptionBudget) {
	t.Helper()
	if _, err := env.Client.PolicyV1().PodDisruptionBudgets(ns).Create(context.Background(), pdb, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating PDB %s: %v", pdb.Name, err)
	}
	t.Cleanup(func() {
		_ = env.Client.PolicyV1().PodDisruptionBudgets(ns).Delete(context.Background(), pdb.Name, metav1.DeleteOptions{})
	})
}

func pdbCond(p *policyv1.PodDisruptionBudget) *metav1.Condition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == policyv1.DisruptionAllowedCondition {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// pdbWait polls the PDB until ok accepts it; returns it.
func pdbWait(t *testing.T, ns, name string, what string, ok func(*policyv1.PodDisruptionBudget) bool) *policyv1.PodDisruptionBudget {
	t.Helper()
	var p *policyv1.PodDisruptionBudget
	Eventually(t, 60*time.Second, what, func() (bool, string) {
		var err error
		p, err = env.Client.PolicyV1().PodDisruptionBudgets(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return ok(p), fmt.Sprintf("status %+v", p.Status)
	})
	return p
}

// pdbStable is upstream's waitPDBStable: observed, and currentHealthy as given.
func pdbStable(t *testing.T, ns, name string, healthy int32) *policyv1.PodDisruptionBudget {
	t.Helper()
	return pdbWait(t, ns, name, fmt.Sprintf("PDB %s/%s stable at %d healthy", ns, name, healthy),
		func(p *policyv1.PodDisruptionBudget) bool {
			return p.Status.ObservedGeneration != 0 && p.Status.CurrentHealthy == healthy
		})
}

// pdbCheck fails unless the status is exactly these numbers with the DisruptionAllowed
// condition upstream's helper sets for them.
func pdbCheck(t *testing.T, p *policyv1.PodDisruptionBudget, allowed, cur, desired, expected int32) {
	t.Helper()
	s := p.Status
	if s.DisruptionsAllowed != allowed || s.CurrentHealthy != cur || s.DesiredHealthy != desired || s.ExpectedPods != expected {
		t.Fatalf("status: allowed %d healthy %d desired %d expected %d; want %d %d %d %d", s.DisruptionsAllowed,
			s.CurrentHealthy, s.DesiredHealthy, s.ExpectedPods, allowed, cur, desired, expected)
	}
	if s.ObservedGeneration != p.Generation {
		t.Fatalf("observedGeneration %d, generation %d", s.ObservedGeneration, p.Generation)
	}
	c := pdbCond(p)
	wantStatus, wantReason := metav1.ConditionFalse, policyv1.InsufficientPodsReason
	if allowed > 0 {
		wantStatus, wantReason = metav1.ConditionTrue, policyv1.SufficientPodsReason
	}
	if c == nil || c.Status != wantStatus || c.Reason != wantReason || c.Message != "" || c.ObservedGeneration != p.Generation {
		t.Fatalf("condition %+v; want %s %s", c, wantStatus, wantReason)
	}
}

// pdbEvent waits for an Event with this reason about the object named name in ns; returns it.
func pdbEvent(t *testing.T, ns, name, reason string) *corev1.Event {
	t.Helper()
	var ev *corev1.Event
	Eventually(t, 30*time.Second, "event "+reason+" on "+name, func() (bool, string) {
		l, err := env.Client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var seen []string
		for i := range l.Items {
			e := &l.Items[i]
			seen = append(seen, e.InvolvedObject.Name+":"+e.Reason)
			if e.InvolvedObject.Name == name && e.Reason == reason {
				ev = e
				return true, ""
			}
		}
		return false, strings.Join(seen, ",")
	})
	return ev
}

// pdbCRD is a namespaced CustomResourceDefinition of a random group, with a scale subresource
// (spec.replicas) when scale is true; deleted when t ends.
func pdbCRD(t *testing.T, scale bool) (gvr schema.GroupVersionResource, kind string, cl dynamic.NamespaceableResourceInterface) {
	t.Helper()
	ctx := context.Background()
	n := time.Now().UnixNano() % 1000000
	group, plural := fmt.Sprintf("pdb%d.kcmd.test", n), fmt.Sprintf("crds%d", n)
	kind = fmt.Sprintf("Crd%d", n)
	sub := ""
	if scale {
		sub = `,"subresources":{"scale":{"specReplicasPath":".spec.replicas","statusReplicasPath":".status.replicas"}}`
	}
	body := fmt.Sprintf(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"%s.%s"},"spec":{"group":"%s","scope":"Namespaced",
"names":{"plural":"%s","singular":"crd%d","kind":"%s","listKind":"%sList"},
"versions":[{"name":"v1beta1","served":true,"storage":true%s,
"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`,
		plural, group, group, plural, n, kind, kind, sub)
	rest := env.Client.CoreV1().RESTClient()
	path := "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	if err := rest.Post().AbsPath(path).Body([]byte(body)).Do(ctx).Error(); err != nil {
		t.Fatalf("creating the CRD: %v", err)
	}
	t.Cleanup(func() { _ = rest.Delete().AbsPath(path + "/" + plural + "." + group).Do(context.Background()).Error() })
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	gvr = schema.GroupVersionResource{Group: group, Version: "v1beta1", Resource: plural}
	cl = dyn.Resource(gvr)
	Eventually(t, 60*time.Second, "the CRD served", func() (bool, string) {
		if _, err := cl.List(ctx, metav1.ListOptions{}); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	return gvr, kind, cl
}

func pdbCR(t *testing.T, cl dynamic.NamespaceableResourceInterface, gvr schema.GroupVersionResource, kind, ns, name string, replicas int64) []metav1.OwnerReference {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": gvr.Group + "/" + gvr.Version, "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": ns}, "spec": map[string]any{"replicas": replicas}}}
	out, err := cl.Namespace(ns).Create(context.Background(), u, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating %s: %v", kind, err)
	}
	return []metav1.OwnerReference{{APIVersion: gvr.Group + "/" + gvr.Version, Kind: kind, Name: name, UID: out.GetUID(), Controller: ptr.To(true)}}
}

// upstream TestPDBWithScaleSubresource: pods owned by a custom resource with a scale
// subresource; maxUnavailable 2 of its 4 replicas.
func TestDisruption_PDBWithScaleSubresource(t *testing.T) {
	t.Parallel()
	usePDBController(t)
	ns := Namespace(t)
	gvr, kind, cl := pdbCRD(t, true)
	owners := pdbCR(t, cl, gvr, kind, ns, "resource", 4)
	for i := 0; i < 4; i++ {
		pdbPod(t, ns, fmt.Sprintf("pod-%d", i), map[string]string{"app": "test-crd"}, owners, true, "")
	}
	pdbCreate(t, ns, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "test-pdb"},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(2)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "test-crd"}}}})
	p := pdbStable(t, ns, "test-pdb", 4)
	pdbCheck(t, p, 2, 4, 2, 4)
}

// upstream TestEmptySelector, "v1 should target all pods".
func TestDisruption_EmptySelector(t *testing.T) {
	t.Parallel()
	usePDBController(t)
	ns := Namespace(t)
	for i := 0; i < 4; i++ {
		pdbPod(t, ns, fmt.Sprintf("pod-%d", i), map[string]string{"app": "test-crd"}, nil, true, "")
	}
	pdbCreate(t, ns, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "test-pdb"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(2)), Selector: &metav1.LabelSelector{}}})
	p := pdbStable(t, ns, "test-pdb", 4)
	pdbCheck(t, p, 2, 4, 2, 4)
}

// upstream TestSelectorsForPodsWithoutLabels, its policy/v1 cases.
func TestDisruption_SelectorsForPodsWithoutLabels(t *testing.T) {
	t.Parallel()
	usePDBController(t)
	for name, sel := range map[string]*metav1.LabelSelector{
		"empty-selector": {},
		"does-not-exist": {MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "DoesNotExist", Operator: metav1.LabelSelectorOpDoesNotExist}}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ns := Namespace(t)
			pdbCreate(t, ns, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "test-pdb"},
				Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)), Selector: sel}})
			pdbStable(t, ns, "test-pdb", 0)
			pdbPod(t, ns, "pod", map[string]string{}, nil, true, "")
			p := pdbStable(t, ns, "test-pdb", 1)
			pdbCheck(t, p, 0, 1, 1, 1)
		})
	}
}

// upstream TestStalePodDisruption. Upstream sleeps the 2 minutes of stalePodDisruptionTimeout
// after writing the condition now; here the condition is written with a lastTransitionTime 3
// minutes old (the apiserver keeps what the client sets), so the stale one is reset at once and
// the others are checked after it was.
func TestDisruption_StalePodDisruption(t *testing.T) {
	t.Parallel()
	usePDBController(t)
	ns := Namespace(t)
	ctx := context.Background()
	old := metav1.NewTime(time.Now().Add(-3 * time.Minute).Truncate(time.Second))
	cases := []struct {
		name      string
		deletePod bool
		phase     corev1.PodPhase
		reason    string
		want      corev1.PodCondition
	}{
		{name: "stale-condition", phase: corev1.PodRunning,
			want: corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionFalse, ObservedGeneration: 1}},
		{name: "deleted-pod", phase: corev1.PodRunning, deletePod: true,
			want: corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI"}},
		{name: "disruption-condition-by-kubelet", phase: corev1.PodFailed, reason: corev1.PodReasonTerminationByKubelet,
			want: corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: corev1.PodReasonTerminationByKubelet}},
		{name: "disruption-condition-on-failed-pod", phase: corev1.PodFailed,
			want: corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI"}},
	}
	for _, tc := range cases {
		// NodeName: scheduled, so a delete is graceful and the pod stays (no kubelet)
		p := pdbPod(t, ns, tc.name, nil, nil, true, "foo")
		if tc.deletePod {
			// deleted before the condition is written: with the condition already 3 minutes
			// old, a delete after it would race the controller's reset (upstream's 2-minute
			// sleep orders them)
			if err := env.Client.CoreV1().Pods(ns).Delete(ctx, tc.name, metav1.DeleteOptions{}); err != nil {
				t.Fatalf("%s: delete: %v", tc.name, err)
			}
			var err error
			if p, err = env.Client.CoreV1().Pods(ns).Get(ctx, tc.name, metav1.GetOptions{}); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
		}
		reason := tc.reason
		if reason == "" {
			reason = "EvictionByEvictionAPI"
		}
		p.Status.Phase = tc.phase
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget,
			Status: corev1.ConditionTrue, Reason: reason, Message: "set by the test", LastTransitionTime: old})
		if _, err := env.Client.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("%s: status: %v", tc.name, err)
		}
	}
	cond := func(name string) (*corev1.Pod, *corev1.PodCondition) {
		p, err := env.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i := range p.Status.Conditions {
			if p.Status.Conditions[i].Type == corev1.DisruptionTarget {
				return p, &p.Status.Conditions[i]
			}
		}
		return p, nil
	}
	Eventually(t, 30*time.Second, "the stale condition reset", func() (bool, string) {
		_, c := cond("stale-condition")
		return c != nil && c.Status == corev1.ConditionFalse, fmt.Sprintf("%+v", c)
	})
	time.Sleep(2 * time.Second) // the others had their chance too
	for _, tc := range cases {
		p, c := cond(tc.name)
		if tc.deletePod && p.DeletionTimestamp == nil {
			t.Errorf("%s: not being deleted", tc.name)
		}
		if c == nil || c.Status != tc.want.Status || c.Reason != tc.want.Reason || c.ObservedGeneration != tc.want.ObservedGeneration {
			t.Errorf("%s: condition %+v, want %+v", tc.name, c, tc.want)
		}
		if tc.want.Status == corev1.ConditionFalse && (c.Message != "" || !c.LastTransitionTime.After(old.Time)) {
			t.Errorf("%s: the reset condition keeps its message or transition time: %+v", tc.name, c)
		}
	}
}

// kcmd's: the ReplicaSet finder (maxUnavailable as a percentage of the ReplicaSet's replicas).
// The pods match the ReplicaSet's selector and number its replicas, so a ReplicaSet controller
// running beside these tests has nothing to do.
func TestDisruption_ReplicaSetScale(t *testing.T) {
	t.Parallel()
	usePDBController(t)
	ns := Namespace(t)
	ctx := context.Background()
	lbl := map[string]string{"app": "pdb-rs"}
	rs, err := env.Client.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "rs"},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](4), Selector: &metav1.LabelSelector{MatchLabels: lbl},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: lbl},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "fake-name", Image: "fakeimage"}}}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owners := []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptr.To(true)}}
	for i := 0; i < 4; i++ {
		pdbPod(t, ns, fmt.Sprintf("pod-%d", i), lbl, owners, i != 3, "")
	}
	pdbCreate(t, ns, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "pdb"},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromString("50%")),
			Selector: &metav1.LabelSelector{MatchLabels: lbl}}})
	p := pdbStable(t, ns, "pdb", 3)
	pdbCheck(t, p, 1, 3, 2, 4)
}

// kcmd's: a controller the finders cannot size gives the fail-safe status (disruptionsAllowed
// 0, DisruptionAllowed=False SyncFailed with upstream's error text) and the Warning
// CalculateExpectedPodCountFailed, not a crash.
func TestDisruption_SyncFailed(t *testing.T) {
	t.Parallel()
	usePDBController(t)
	gvr, kind, cl := pdbCRD(t, false)
	for name, tc := range map[string]struct {
		owner func(ns string) []metav1.OwnerReference
		msg   func() string
	}{
		"no-scale-subresource": {
			owner: func(ns string) []metav1.OwnerReference { return pdbCR(t, cl, gvr, kind, ns, "res", 2) },
			msg:   func() string { return gvr.Resource + "." + gvr.Group + " does not implement the scale subresource" },
		},
		"unknown-kind": {
			owner: func(string) []metav1.OwnerReference {
				return []metav1.OwnerReference{{APIVersion: "nothere.kcmd.test/v1", Kind: "Missing", Name: "m",
					UID: "0b9b1c9e-0000-4000-8000-000000000001", Controller: ptr.To(true)}}
			},
			msg: func() string { return `no matches for kind "Missing" in version "nothere.kcmd.test/v1"` },
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ns := Namespace(t)
			pdbPod(t, ns, "pod", map[string]string{"app": "x"}, tc.owner(ns), true, "")
			pdbCreate(t, ns, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "pdb"},
				Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(1)),
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}}})
			p := pdbWait(t, ns, "pdb", "SyncFailed", func(p *policyv1.PodDisruptionBudget) bool {
				c := pdbCond(p)
				return c != nil && c.Reason == policyv1.SyncFailedReason
			})
			c := pdbCond(p)
			if c.Status != metav1.ConditionFalse || c.Message != tc.msg() || p.Status.DisruptionsAllowed != 0 {
				t.Fatalf("condition %+v allowed %d; want message %q", c, p.Status.DisruptionsAllowed, tc.msg())
			}
			e := pdbEvent(t, ns, "pdb", "CalculateExpectedPodCountFailed")
			if want := "Failed to calculate the number of expected pods: " + tc.msg(); e.Message != want || e.Type != corev1.EventTypeWarning {
				t.Fatalf("event %s %q, want %q", e.Type, e.Message, want)
			}
		})
	}
}

// kcmd's: pods owned by a kind of an aggregated API that is down: SyncFailed, the controller
// keeps serving other PDBs. Not parallel: an unavailable APIService is seen cluster-wide.
func TestDisruption_AggregatedAPIDown(t *testing.T) {
	usePDBController(t)
	ctx := context.Background()
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	name := "v1alpha1.kcmd-pdb-down.example.com"
	svc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{"group": "kcmd-pdb-down.example.com", "version": "v1alpha1",
			"groupPriorityMinimum": int64(100), "versionPriority": int64(10), "insecureSkipTLSVerify": true,
			"service": map[string]any{"namespace": "kube-system", "name": "kcmd-no-such-service", "port": int64(443)}}}}
	if _, err := dyn.Resource(gvr).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dyn.Resource(gvr).Delete(context.Background(), name, metav1.DeleteOptions{}) })
	ns := Namespace(t)
	pdbPod(t, ns, "pod", map[string]string{"app": "x"}, []metav1.OwnerReference{{APIVersion: "kcmd-pdb-down.example.com/v1alpha1",
		Kind: "Thing", Name: "t", UID: "0b9b1c9e-0000-4000-8000-000000000002", Controller: ptr.To(true)}}, true, "")
	pdbCreate(t, ns, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "pdb"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromString("50%")),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}}})
	p := pdbWait(t, ns, "pdb", "SyncFailed", func(p *policyv1.PodDisruptionBudget) bool {
		c := pdbCond(p)
		return c != nil && c.Reason == policyv1.SyncFailedReason
	})
	if p.Status.DisruptionsAllowed != 0 {
		t.Fatalf("disruptionsAllowed %d", p.Status.DisruptionsAllowed)
	}
	// the controller goes on: a PDB beside it gets its status
	pdbPod(t, ns, "other", map[string]string{"app": "y"}, nil, true, "")
	pdbCreate(t, ns, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "ok"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(0)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "y"}}}})
	pdbCheck(t, pdbStable(t, ns, "ok", 1), 1, 1, 0, 1)
}

// kcmd's: status.disruptedPods as the eviction API writes it. An entry older than 2 minutes
// (DeletionTimeout) of a pod not being deleted is dropped with a NotDeleted Event on the pod;
// a younger one stays, its pod not counted healthy, until the recheck at its expiry drops it.
func TestDisruption_DisruptedPodsExpiry(t *testing.T) {
	t.Parallel()
	usePDBController(t)
	ns := Namespace(t)
	ctx := context.Background()
	lbl := map[string]string{"app": "dp"}
	for i := 0; i < 3; i++ {
		pdbPod(t, ns, fmt.Sprintf("p%d", i), lbl, nil, true, "")
	}
	pdbCreate(t, ns, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "pdb"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: lbl}}})
	pdbCheck(t, pdbStable(t, ns, "pdb", 3), 2, 3, 1, 3)
	now := time.Now()
	young := metav1.NewTime(now.Add(-DeletionTimeoutForTest + 8*time.Second).Truncate(time.Second))
	if err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		p, err := env.Client.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "pdb", metav1.GetOptions{})
		if err != nil {
			return err
		}
		p.Status.DisruptedPods = map[string]metav1.Time{"p0": metav1.NewTime(now.Add(-3 * time.Minute)), "p1": young}
		p.Status.DisruptionsAllowed = 0
		_, err = env.Client.PolicyV1().PodDisruptionBudgets(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	p := pdbWait(t, ns, "pdb", "p0 dropped, p1 kept", func(p *policyv1.PodDisruptionBudget) bool {
		_, has0 := p.Status.DisruptedPods["p0"]
		_, has1 := p.Status.DisruptedPods["p1"]
		return !has0 && has1 && p.Status.CurrentHealthy == 2
	})
	pdbCheck(t, p, 1, 2, 1, 3)
	e := pdbEvent(t, ns, "p0", "NotDeleted")
	if want := fmt.Sprintf("Pod was expected by PDB %s/%s to be deleted but it wasn't", ns, ns); e.Message != want || e.Source.Component != "controllermanager" {
		t.Fatalf("event %q from %q, want %q from controllermanager", e.Message, e.Source.Component, want)
	}
	// nothing else changes: the recheck at p1's expiry (about 8 s) drops it
	p = pdbWait(t, ns, "pdb", "p1 expired", func(p *policyv1.PodDisruptionBudget) bool {
		return len(p.Status.DisruptedPods) == 0 && p.Status.CurrentHealthy == 3
	})
	pdbCheck(t, p, 2, 3, 1, 3)
}

// DeletionTimeout of upstream's controller.
const DeletionTimeoutForTest = 2 * time.Minute

// kcmd's: the Events of upstream's sync: NoPods (Normal) for a PDB that matches nothing,
// UnmanagedPods (Warning) for a percentage over a pod without controller, and
// MultiplePodDisruptionBudgets (Warning) on a pod two PDBs select.
func TestDisruption_Events(t *testing.T) {
	t.Parallel()
	usePDBController(t)
	ns := Namespace(t)
	pdbCreate(t, ns, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "nopods"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "none"}}}})
	e := pdbEvent(t, ns, "nopods", "NoPods")
	if e.Type != corev1.EventTypeNormal || e.Message != "No matching pods found" {
		t.Fatalf("NoPods: %s %q", e.Type, e.Message)
	}
	// the pod first: a pod event enqueues only one of the PDBs selecting it (upstream's
	// getPdbForPod), each PDB's own add syncs it
	pdbPod(t, ns, "naked", map[string]string{"app": "naked"}, nil, true, "")
	pdbCreate(t, ns, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "a"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromString("50%")),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "naked"}}}})
	pdbCreate(t, ns, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "b"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(0)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "naked"}}}})
	e = pdbEvent(t, ns, "a", "UnmanagedPods")
	want := "Pods selected by this PodDisruptionBudget (selector: &LabelSelector{MatchLabels:map[string]string{app: naked,},MatchExpressions:[]LabelSelectorRequirement{},}) were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set \".spec.minAvailable\" field of the PDB to an integer value."
	if e.Type != corev1.EventTypeWarning || e.Message != want {
		t.Fatalf("UnmanagedPods: %s %q", e.Type, e.Message)
	}
	pdbCheck(t, pdbStable(t, ns, "b", 1), 1, 1, 0, 1)
	// a pod event with both PDBs there
	if _, err := env.Client.CoreV1().Pods(ns).Patch(context.Background(), "naked", types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"touched":"yes"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e = pdbEvent(t, ns, "naked", "MultiplePodDisruptionBudgets")
	if e.Type != corev1.EventTypeWarning || !strings.HasPrefix(e.Message, fmt.Sprintf("Pod %q/%q matches multiple PodDisruptionBudgets.  Chose ", ns, "naked")) {
		t.Fatalf("MultiplePodDisruptionBudgets: %s %q", e.Type, e.Message)
	}
	// the unmanaged pod is counted healthy; the percentage of no scale is 0
	pdbCheck(t, pdbStable(t, ns, "a", 1), 0, 1, 0, 0)
}

// pdbProcs returns the shared kcmd's worker and dispatcher pids (it runs this controller only).
func pdbProcs(p *kcmdProc) (workers, dispatchers []int) {
	for pid, comm := range childrenOf(p.cmd.Process.Pid) {
		switch {
		case comm == "kcmd-worker":
			workers = append(workers, pid)
		case strings.HasPrefix(comm, "kcmd-dispatch"):
			dispatchers = append(dispatchers, pid)
		}
	}
	return workers, dispatchers
}

const pdbStormPods = 30

// pdbStormSetup makes pdbStormPods unowned Ready pods and a PDB minAvailable 5 over them, stable.
func pdbStormSetup(t *testing.T, ns string) []*corev1.Pod {
	t.Helper()
	lbl := map[string]string{"app": "storm"}
	pods := make([]*corev1.Pod, pdbStormPods)
	for i := range pods {
		pods[i] = pdbPod(t, ns, fmt.Sprintf("p%02d", i), lbl, nil, true, "")
	}
	pdbCreate(t, ns, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "pdb"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(5)),
			Selector: &metav1.LabelSelector{MatchLabels: lbl}}})
	pdbCheck(t, pdbStable(t, ns, "pdb", pdbStormPods), pdbStormPods-5, pdbStormPods, 5, pdbStormPods)
	return pods
}

func pdbSetReady(ns string, p *corev1.Pod, ready bool) error {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	patch := fmt.Sprintf(`{"status":{"conditions":[{"type":"Ready","status":%q}]}}`, st)
	_, err := env.Client.CoreV1().Pods(ns).Patch(context.Background(), p.Name, types.StrategicMergePatchType,
		[]byte(patch), metav1.PatchOptions{}, "status")
	return err
}

// kill -9 of the controller's worker, several times, during a storm of pod readiness changes:
// the status ends exact for the final readiness (every change after a kill is seen: the
// dispatcher keeps the queue, the manager restarts the worker, its key is queued again).
// Not parallel: it kills the shared kcmd's worker.
func TestDisruption_CrashReadinessStorm(t *testing.T) {
	p := usePDBController(t)
	ns := Namespace(t)
	pods := pdbStormSetup(t, ns)
	var kills atomic.Int32
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() { // the killer
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(400 * time.Millisecond):
			}
			w, _ := pdbProcs(p)
			for _, pid := range w {
				if syscall.Kill(pid, syscall.SIGKILL) == nil {
					kills.Add(1)
				}
			}
		}
	}()
	// the storm: rounds over every pod, alternating readiness, 4 writers, until the worker was
	// killed at least 4 times (and at least 8 rounds)
	for round := 0; (round < 8 || kills.Load() < 4) && round < 400; round++ {
		var ww sync.WaitGroup
		for k := 0; k < 4; k++ {
			ww.Add(1)
			go func(k int) {
				defer ww.Done()
				for i := k; i < len(pods); i += 4 {
					_ = pdbSetReady(ns, pods[i], (i+round)%2 == 0)
				}
			}(k)
		}
		ww.Wait()
	}
	// the final readiness: p00..p11 Ready, the rest not
	for i := range pods {
		if err := pdbSetReady(ns, pods[i], i < 12); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if n := kills.Load(); n < 4 {
		t.Fatalf("only %d kills: nothing was tested", n)
	}
	t.Logf("%d kills of the worker during the storm", kills.Load())
	pdbCheck(t, pdbStable(t, ns, "pdb", 12), 7, 12, 5, pdbStormPods)
	time.Sleep(2 * time.Second) // and it stays so
	cur, err := env.Client.PolicyV1().PodDisruptionBudgets(ns).Get(context.Background(), "pdb", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pdbCheck(t, cur, 7, 12, 5, pdbStormPods)
}

// Negative control of TestDisruption_CrashReadinessStorm: with the worker stopped (SIGSTOP)
// the same final-status check sees the stale status (so a lost change would fail it); once
// the worker runs again the status converges.
func TestDisruption_CrashDetector(t *testing.T) {
	p := usePDBController(t)
	ns := Namespace(t)
	pods := pdbStormSetup(t, ns)
	w, _ := pdbProcs(p)
	if len(w) != 1 {
		t.Fatalf("workers %v", w)
	}
	if err := syscall.Kill(w[0], syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := true
	defer func() {
		if stopped {
			_ = syscall.Kill(w[0], syscall.SIGCONT)
		}
	}()
	for i := 0; i < 3; i++ {
		if err := pdbSetReady(ns, pods[i], false); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(3 * time.Second)
	cur, err := env.Client.PolicyV1().PodDisruptionBudgets(ns).Get(context.Background(), "pdb", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cur.Status.CurrentHealthy != pdbStormPods {
		t.Fatalf("the status changed with the worker stopped: %+v", cur.Status)
	}
	_ = syscall.Kill(w[0], syscall.SIGCONT)
	stopped = false
	pdbCheck(t, pdbStable(t, ns, "pdb", pdbStormPods-3), pdbStormPods-3-5, pdbStormPods-3, 5, pdbStormPods)
}
