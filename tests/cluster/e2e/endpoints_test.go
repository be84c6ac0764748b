package e2e

// kcmd's endpoints-controller (docs/endpoints.md) against the real cluster, upstream
// kube-controller-manager not running. Ports of upstream's test/integration/endpoints
// (TestEndpointUpdates, TestEndpointWithMultiplePodUpdates, TestExternalNameToClusterIPTransition,
// TestEndpointWithTerminatingPod) and the Endpoints half of test/integration/endpointslice's
// label tests; plus the Endpoints of a deleted Service going with it. They share the kcmd of
// TestEndpointSlice_* (endpointslice_test.go: epsShared), each in its own namespace, parallel.

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func epLabelMap() map[string]string { return map[string]string{"foo": "bar"} }

// upstream's newService
func epNewService(name string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: epLabelMap()},
		Spec: corev1.ServiceSpec{Selector: epLabelMap(), Ports: []corev1.ServicePort{{Port: 80}}}}
}

func epGet(ns, name string) (*corev1.Endpoints, error) {
	return env.Client.CoreV1().Endpoints(ns).Get(context.Background(), name, metav1.GetOptions{})
}

// TestEndpoints_Updates: upstream's TestEndpointUpdates: a Service change that changes nothing
// in its Endpoints does not rewrite them.
func TestEndpoints_Updates(t *testing.T) {
	t.Parallel()
	epsShared(t)
	ns := Namespace(t)
	ctx := context.Background()
	pod, err := env.Client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "test-pod", Labels: epLabelMap()},
		Spec: corev1.PodSpec{NodeName: "fakenode", Containers: []corev1.Container{{Name: "fake-name", Image: "fakeimage"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIPs: []corev1.PodIP{{IP: "1.1.1.1"}, {IP: "2001:db8::"}}}
	if _, err := env.Client.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc1 := epsService(t, ns, epNewService("foo1"))
	var rv string
	Eventually(t, 15*time.Second, "endpoints foo1", func() (bool, string) {
		e, err := epGet(ns, "foo1")
		if err != nil {
			return false, err.Error()
		}
		rv = e.ResourceVersion
		return true, ""
	})
	svc1.SetAnnotations(map[string]string{"foo": "bar"})
	if _, err := env.Client.CoreV1().Services(ns).Update(ctx, svc1, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// one worker, one queue: once foo2 has Endpoints, foo1's update was synced
	epsService(t, ns, epNewService("foo2"))
	Eventually(t, 15*time.Second, "endpoints foo2", func() (bool, string) {
		_, err := epGet(ns, "foo2")
		return err == nil, fmt.Sprint(err)
	})
	e, err := epGet(ns, "foo1")
	if err != nil {
		t.Fatal(err)
	}
	if e.ResourceVersion != rv {
		t.Fatalf("endpoints resource version does not match, expected %s received %s", rv, e.ResourceVersion)
	}
}

// TestEndpoints_MultiplePodUpdates: upstream's TestEndpointWithMultiplePodUpdates: a pod's
// readiness flipped and flipped back ends ready in the Endpoints of 10 Services.
func TestEndpoints_MultiplePodUpdates(t *testing.T) {
	t.Parallel()
	epsShared(t)
	ns := Namespace(t)
	ctx := context.Background()
	pod, err := env.Client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "test-pod", Labels: epLabelMap()},
		Spec: corev1.PodSpec{NodeName: "fakenode", Containers: []corev1.Container{{Name: "fake-name", Image: "fakeimage"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		PodIPs: []corev1.PodIP{{IP: "1.1.1.1"}}}
	if pod, err = env.Client.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := 0; i < 10; i++ {
		names = append(names, fmt.Sprintf("foo%d", i))
		epsService(t, ns, epNewService(names[i]))
	}
	for _, n := range names {
		Eventually(t, 10*time.Second, "endpoints "+n, func() (bool, string) {
			_, err := epGet(ns, n)
			return err == nil, fmt.Sprint(err)
		})
	}
	pod.Status.Conditions[0].Status = corev1.ConditionFalse
	if pod, err = env.Client.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod.Status.Conditions[0].Status = corev1.ConditionTrue
	if pod, err = env.Client.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	want := []corev1.EndpointAddress{{IP: pod.Status.PodIP, NodeName: &pod.Spec.NodeName,
		TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID}}}
	for _, n := range names {
		Eventually(t, 10*time.Second, "ready address in "+n, func() (bool, string) {
			e, err := epGet(ns, n)
			if err != nil || len(e.Subsets) == 0 {
				return false, fmt.Sprint(err)
			}
			return reflect.DeepEqual(want, e.Subsets[0].Addresses), fmt.Sprintf("%+v", e.Subsets)
		})
	}
}

// TestEndpoints_ExternalNameToClusterIP: upstream's TestExternalNameToClusterIPTransition:
// no Endpoints for an ExternalName Service; after the change to ClusterIP, Endpoints without
// the headless label. (Upstream waits 10 s for the absence; 3 s here, the queue has one worker
// and the Service is synced within milliseconds.)
func TestEndpoints_ExternalNameToClusterIP(t *testing.T) {
	t.Parallel()
	epsShared(t)
	ns := Namespace(t)
	ctx := context.Background()
	svc := epsService(t, ns, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "foo1", Labels: epLabelMap()},
		Spec: corev1.ServiceSpec{Selector: epLabelMap(), Ports: []corev1.ServicePort{{Port: 80}},
			Type: corev1.ServiceTypeExternalName, ExternalName: "google.com"}})
	time.Sleep(3 * time.Second)
	if e, err := epGet(ns, "foo1"); err == nil {
		t.Fatalf("expected no endpoints for externalName service, got: %v", e)
	}
	svc.Spec.Type = corev1.ServiceTypeClusterIP
	svc.Spec.ExternalName = ""
	if _, err := env.Client.CoreV1().Services(ns).Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 15*time.Second, "endpoints foo1", func() (bool, string) {
		e, err := epGet(ns, "foo1")
		if err != nil {
			return false, err.Error()
		}
		if _, ok := e.Labels[corev1.IsHeadlessService]; ok {
			t.Errorf("ClusterIP endpoint should not have headless label, got: %v", e)
		}
		return true, ""
	})
}

// TestEndpoints_TerminatingPod: upstream's TestEndpointWithTerminatingPod: a terminating pod
// leaves the Endpoints (unlike the EndpointSlices).
func TestEndpoints_TerminatingPod(t *testing.T) {
	t.Parallel()
	epsShared(t)
	ns := Namespace(t)
	ctx := context.Background()
	pod := epsPod(t, ns, "test-pod", "fake-node", epLabelMap(), "10.0.0.1", true, nil)
	svc := epsService(t, ns, epNewService("test-service"))
	Eventually(t, 10*time.Second, "an address", func() (bool, string) {
		e, err := epGet(ns, svc.Name)
		if err != nil {
			return false, err.Error()
		}
		n := 0
		for _, s := range e.Subsets {
			n += len(s.Addresses)
		}
		return n > 0, fmt.Sprintf("%+v", e.Subsets)
	})
	if err := env.Client.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 10*time.Second, "no address", func() (bool, string) {
		p, err := env.Client.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil || p.DeletionTimestamp == nil {
			return false, "pod not terminating"
		}
		e, err := epGet(ns, svc.Name)
		if err != nil {
			return false, err.Error()
		}
		n := 0
		for _, s := range e.Subsets {
			n += len(s.Addresses) + len(s.NotReadyAddresses)
		}
		return n == 0, fmt.Sprintf("%+v", e.Subsets)
	})
}

// TestEndpoints_HeadlessLabel: the Endpoints half of upstream's TestEndpointsHeadlessLabel and
// TestEndpointsControllersLabelSemantics: the label follows clusterIP None, the Service's
// labels are copied and follow its changes.
func TestEndpoints_HeadlessLabel(t *testing.T) {
	t.Parallel()
	epsShared(t)
	ns := Namespace(t)
	ctx := context.Background()
	epsService(t, ns, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "plain", Labels: map[string]string{corev1.IsHeadlessService: ""}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "test"}, Ports: []corev1.ServicePort{{Port: 80}}}})
	hl := epsService(t, ns, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "headless", Labels: map[string]string{"app": "test"}},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": "test"}, Ports: []corev1.ServicePort{{Port: 80}}}})
	wait := func(name string, want, notWant []string) {
		t.Helper()
		Eventually(t, 15*time.Second, "labels of endpoints "+name, func() (bool, string) {
			e, err := epGet(ns, name)
			if err != nil {
				return false, err.Error()
			}
			for _, l := range want {
				if _, ok := e.Labels[l]; !ok {
					return false, "missing " + l
				}
			}
			for _, l := range notWant {
				if _, ok := e.Labels[l]; ok {
					return false, "unexpected " + l
				}
			}
			return true, ""
		})
	}
	wait("plain", nil, []string{corev1.IsHeadlessService})
	wait("headless", []string{corev1.IsHeadlessService, "app"}, nil)
	hl.Labels["new-label"] = "new-label-value"
	delete(hl.Labels, "app")
	if _, err := env.Client.CoreV1().Services(ns).Update(ctx, hl, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	wait("headless", []string{corev1.IsHeadlessService, "new-label"}, []string{"app"})
}

// TestEndpoints_ServiceDeleted: the Endpoints of a deleted Service are deleted (syncService's
// NotFound branch); Endpoints deleted by someone else are written again.
func TestEndpoints_ServiceDeleted(t *testing.T) {
	t.Parallel()
	epsShared(t)
	ns := Namespace(t)
	ctx := context.Background()
	epsService(t, ns, epNewService("gone"))
	Eventually(t, 15*time.Second, "endpoints", func() (bool, string) {
		_, err := epGet(ns, "gone")
		return err == nil, fmt.Sprint(err)
	})
	if err := env.Client.CoreV1().Endpoints(ns).Delete(ctx, "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 15*time.Second, "endpoints written again", func() (bool, string) {
		_, err := epGet(ns, "gone")
		return err == nil, fmt.Sprint(err)
	})
	if err := env.Client.CoreV1().Services(ns).Delete(ctx, "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 15*time.Second, "endpoints deleted", func() (bool, string) {
		_, err := epGet(ns, "gone")
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}
