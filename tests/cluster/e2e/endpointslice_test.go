package e2e

// kcmd's endpointslice-controller (docs/endpointslice.md) against the real cluster, upstream
// kube-controller-manager not running (the test cluster runs none). Ports of upstream's
// test/integration/endpointslice (endpointsliceterminating_test.go, endpointslice_test.go's
// slice half) and checks of the slice contents upstream's reconciler unit tests cover
// (workers/endpointslice/tests/test-reconcile.c ports those). Pods get their IPs and Ready
// condition through the status subresource, as upstream's integration tests do (no kubelet).
// One kcmd running only these two controllers, with --use-service-account-credentials (the
// bootstrap roles must allow every request), is shared by every TestEndpointSlice_* (the
// controller acts cluster-wide: two instances would fight over each other's Services); each
// test has its own namespace and Node and runs in parallel.

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

var (
	epsOnce sync.Once
	epsProc *kcmdProc
)

// epsShared starts (once) the kcmd all TestEndpointSlice_* and TestEndpoints_* tests share.
func epsShared(t *testing.T) *kcmdProc {
	t.Helper()
	epsOnce.Do(func() {
		port := gcxFreePort(t)
		epsProc = startKcmdShared(t, "--controllers="+epsControllers, "--secure-port="+strconv.Itoa(port),
			"--bind-address=127.0.0.1", "--authorization-always-allow-paths=/healthz,/metrics",
			"--use-service-account-credentials", "--leader-elect=false", "--v=4")
	})
	return epsProc
}

// the controllers of the shared kcmd (TestEndpoints_* use the same one)
var epsControllers = "endpointslice-controller,endpoints-controller"

// epsNode makes a Node of t's own (cluster-scoped), deleted when t ends.
func epsNode(t *testing.T, labels map[string]string) string {
	t.Helper()
	name := fmt.Sprintf("eps-node-%d", time.Now().UnixNano()%10000000)
	_, err := env.Client.CoreV1().Nodes().Create(context.Background(),
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	return name
}

// epsPod creates a pod on node and sets its status (IP, Ready) as a kubelet would.
func epsPod(t *testing.T, ns, name, node string, labels map[string]string, ip string, ready bool, mutate func(*corev1.Pod)) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "fakeimage",
			Ports: []corev1.ContainerPort{{Name: "port-443", ContainerPort: 443}}}}},
	}
	if mutate != nil {
		mutate(p)
	}
	p, err := env.Client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: st, LastTransitionTime: metav1.Now()}}}
	if p, err = env.Client.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return p
}

func epsService(t *testing.T, ns string, svc *corev1.Service) *corev1.Service {
	t.Helper()
	s, err := env.Client.CoreV1().Services(ns).Create(context.Background(), svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func epsSlices(ns, svc string) ([]discovery.EndpointSlice, error) {
	l, err := env.Client.DiscoveryV1().EndpointSlices(ns).List(context.Background(),
		metav1.ListOptions{LabelSelector: discovery.LabelServiceName + "=" + svc})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

func epsTotal(sl []discovery.EndpointSlice) int {
	n := 0
	for _, s := range sl {
		n += len(s.Endpoints)
	}
	return n
}

// TestEndpointSlice_Terminating: upstream's TestEndpointSliceTerminating: a deleted pod (kept
// Terminating: no kubelet) stays in its slice, not ready, serving as its readiness says,
// terminating.
func TestEndpointSlice_Terminating(t *testing.T) {
	t.Parallel()
	epsShared(t)
	bt, bf := true, false
	cases := []struct {
		name  string
		ready bool
		want  discovery.EndpointConditions
	}{
		{"ready terminating pods", true, discovery.EndpointConditions{Ready: &bf, Serving: &bt, Terminating: &bt}},
		{"not ready terminating pods", false, discovery.EndpointConditions{Ready: &bf, Serving: &bf, Terminating: &bt}},
	}
	for _, tc := range cases {
		tc := tc
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := Namespace(t)
			node := epsNode(t, nil)
			svc := epsService(t, ns, &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "test-service", Labels: map[string]string{"foo": "bar"}},
				Spec: corev1.ServiceSpec{Selector: map[string]string{"foo": "bar"},
					Ports: []corev1.ServicePort{{Name: "port-443", Port: 443, Protocol: "TCP", TargetPort: intstr.FromInt32(443)}}},
			})
			pod := epsPod(t, ns, "test-pod", node, map[string]string{"foo": "bar"}, "10.0.0.1", tc.ready, nil)
			Eventually(t, 10*time.Second, "an endpoint", func() (bool, string) {
				sl, err := epsSlices(ns, svc.Name)
				if err != nil {
					return false, err.Error()
				}
				return epsTotal(sl) > 0, fmt.Sprintf("%d slices", len(sl))
			})
			if err := env.Client.CoreV1().Pods(ns).Delete(context.Background(), pod.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			Eventually(t, 10*time.Second, "terminating endpoint", func() (bool, string) {
				sl, err := epsSlices(ns, svc.Name)
				if err != nil || len(sl) == 0 {
					return false, fmt.Sprintf("%v", err)
				}
				eps := sl[0].Endpoints
				if len(eps) != 1 {
					return false, fmt.Sprintf("%d endpoints", len(eps))
				}
				ok := reflect.DeepEqual(eps[0].Addresses, []string{"10.0.0.1"}) && reflect.DeepEqual(eps[0].Conditions, tc.want)
				return ok, fmt.Sprintf("%+v", eps[0])
			})
		})
	}
}

// epsWaitLabels: the Service's one slice has every label of want and none of notWant
// (upstream's validateLabelsOnEndpointAndEndpointSlice, slice half).
func epsWaitLabels(t *testing.T, ns, svc string, want, notWant []string) {
	t.Helper()
	Eventually(t, 30*time.Second, "labels of the slice of "+svc, func() (bool, string) {
		sl, err := epsSlices(ns, svc)
		if err != nil {
			return false, err.Error()
		}
		if len(sl) != 1 {
			return false, fmt.Sprintf("%d slices", len(sl))
		}
		for _, l := range want {
			if _, ok := sl[0].Labels[l]; !ok {
				return false, "missing " + l
			}
		}
		for _, l := range notWant {
			if _, ok := sl[0].Labels[l]; ok {
				return false, "unexpected " + l
			}
		}
		return true, ""
	})
}

// TestEndpointSlice_LabelSemantics: upstream's TestEndpointsControllersLabelSemantics (slices):
// a headless Service's slice carries service.kubernetes.io/headless and the Service's labels;
// changed Service labels follow.
func TestEndpointSlice_LabelSemantics(t *testing.T) {
	t.Parallel()
	epsShared(t)
	ns := Namespace(t)
	svc := epsService(t, ns, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "test-123", Labels: map[string]string{"app": "test"}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: corev1.ClusterIPNone,
			Selector: map[string]string{"app": "test"},
			Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt(8080)}}},
	})
	epsWaitLabels(t, ns, svc.Name, []string{corev1.IsHeadlessService, "app"}, nil)
	svc.Labels["new-label"] = "new-label-value"
	delete(svc.Labels, "app")
	if _, err := env.Client.CoreV1().Services(ns).Update(context.Background(), svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	epsWaitLabels(t, ns, svc.Name, []string{corev1.IsHeadlessService, "new-label"}, []string{"app"})
}

// TestEndpointSlice_HeadlessLabel: upstream's TestEndpointsHeadlessLabel (slices): the label
// follows clusterIP None only, never the Service's own reserved label.
func TestEndpointSlice_HeadlessLabel(t *testing.T) {
	t.Parallel()
	epsShared(t)
	cases := []struct {
		name     string
		labels   map[string]string
		headless bool
	}{
		{"non-headless service with no labels", nil, false},
		{"headless service with no labels", nil, true},
		{"non-headless service with headless label", map[string]string{corev1.IsHeadlessService: ""}, false},
		{"headless service with headless label", map[string]string{corev1.IsHeadlessService: ""}, true},
	}
	for i, tc := range cases {
		i, tc := i, tc
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := Namespace(t)
			svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("test-svc-%d", i), Labels: tc.labels},
				Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "test"},
					Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt(8080)}}}}
			if tc.headless {
				svc.Spec.ClusterIP = corev1.ClusterIPNone
			}
			epsService(t, ns, svc)
			if tc.headless {
				epsWaitLabels(t, ns, svc.Name, []string{corev1.IsHeadlessService}, nil)
			} else {
				epsWaitLabels(t, ns, svc.Name, nil, []string{corev1.IsHeadlessService})
			}
		})
	}
}

// TestEndpointSlice_Contents: one slice as upstream's reconciler writes it: generateName
// <svc>-, owner reference to the Service, the managed-by label, named target ports resolved
// against the pod's container ports, nodeName, the zone of the pod's Node, targetRef, the
// hostname when hostname and subdomain match, the last-change-trigger-time annotation; a pod
// that loses readiness becomes not ready; a pod that goes away leaves the slice.
func TestEndpointSlice_Contents(t *testing.T) {
	t.Parallel()
	p := epsShared(t)
	// the manager logs the accounts once their tokens are there (this test may be the one
	// that started the shared kcmd a moment ago)
	for _, sa := range []string{"endpointslice-controller", "endpoint-controller"} {
		Eventually(t, 20*time.Second, "the controllers acting as their service account "+sa, func() (bool, string) {
			return p.Logged("using service account kube-system/" + sa), "not logged"
		})
	}
	ns := Namespace(t)
	node := epsNode(t, map[string]string{corev1.LabelTopologyZone: "zone-x"})
	svc := epsService(t, ns, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Name: "https", Port: 443, Protocol: "TCP", TargetPort: intstr.FromString("port-443")}}},
	})
	p1 := epsPod(t, ns, "p1", node, map[string]string{"app": "web"}, "10.1.0.1", true, func(p *corev1.Pod) {
		p.Spec.Hostname, p.Spec.Subdomain = "h1", "web"
	})
	p2 := epsPod(t, ns, "p2", node, map[string]string{"app": "web"}, "10.1.0.2", true, func(p *corev1.Pod) {
		p.Spec.Containers[0].Ports[0].ContainerPort = 8443
	})
	epsPod(t, ns, "other", node, map[string]string{"app": "other"}, "10.1.0.3", true, nil)
	var sl []discovery.EndpointSlice
	Eventually(t, 15*time.Second, "two port groups", func() (bool, string) {
		var err error
		sl, err = epsSlices(ns, svc.Name)
		if err != nil {
			return false, err.Error()
		}
		return len(sl) == 2 && epsTotal(sl) == 2, fmt.Sprintf("%d slices, %d endpoints", len(sl), epsTotal(sl))
	})
	sort.Slice(sl, func(i, j int) bool { return *sl[i].Ports[0].Port < *sl[j].Ports[0].Port })
	for i, s := range sl {
		wantPort := []int32{443, 8443}[i]
		if len(s.Ports) != 1 || *s.Ports[0].Port != wantPort || *s.Ports[0].Name != "https" || *s.Ports[0].Protocol != corev1.ProtocolTCP {
			t.Errorf("slice %s ports %+v, want https/%d/TCP", s.Name, s.Ports, wantPort)
		}
		if s.GenerateName != "web-" || s.AddressType != discovery.AddressTypeIPv4 {
			t.Errorf("slice %s: generateName %q addressType %s", s.Name, s.GenerateName, s.AddressType)
		}
		if s.Labels[discovery.LabelManagedBy] != "endpointslice-controller.k8s.io" || s.Labels[discovery.LabelServiceName] != "web" {
			t.Errorf("slice %s labels %v", s.Name, s.Labels)
		}
		if len(s.OwnerReferences) != 1 || s.OwnerReferences[0].UID != svc.UID || s.OwnerReferences[0].Controller == nil || !*s.OwnerReferences[0].Controller {
			t.Errorf("slice %s owners %+v", s.Name, s.OwnerReferences)
		}
		if _, ok := s.Annotations[corev1.EndpointsLastChangeTriggerTime]; !ok {
			t.Errorf("slice %s has no %s", s.Name, corev1.EndpointsLastChangeTriggerTime)
		}
		ep := s.Endpoints[0]
		pod := []*corev1.Pod{p1, p2}[i]
		if ep.TargetRef == nil || ep.TargetRef.Name != pod.Name || ep.TargetRef.UID != pod.UID || ep.TargetRef.Kind != "Pod" {
			t.Errorf("endpoint %+v: targetRef, want pod %s", ep, pod.Name)
		}
		if ep.NodeName == nil || *ep.NodeName != node || ep.Zone == nil || *ep.Zone != "zone-x" {
			t.Errorf("endpoint %+v: nodeName/zone", ep)
		}
		if (i == 0) != (ep.Hostname != nil && *ep.Hostname == "h1") {
			t.Errorf("endpoint %+v: hostname", ep)
		}
		if ep.Conditions.Ready == nil || !*ep.Conditions.Ready {
			t.Errorf("endpoint %+v: not ready", ep)
		}
	}
	// p2 not ready any more
	p2.Status.Conditions[0].Status = corev1.ConditionFalse
	if _, err := env.Client.CoreV1().Pods(ns).UpdateStatus(context.Background(), p2, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 15*time.Second, "p2 not ready", func() (bool, string) {
		sl, err := epsSlices(ns, svc.Name)
		if err != nil {
			return false, err.Error()
		}
		for _, s := range sl {
			for _, ep := range s.Endpoints {
				if ep.TargetRef.Name == "p2" {
					return !*ep.Conditions.Ready && !*ep.Conditions.Serving, fmt.Sprintf("%+v", ep.Conditions)
				}
			}
		}
		return false, "p2 not found"
	})
	// p1 gone: its port group goes; the other slice stays
	zero := int64(0)
	if err := env.Client.CoreV1().Pods(ns).Delete(context.Background(), "p1", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 15*time.Second, "one slice left", func() (bool, string) {
		sl, err := epsSlices(ns, svc.Name)
		if err != nil {
			return false, err.Error()
		}
		return len(sl) == 1 && epsTotal(sl) == 1 && sl[0].Endpoints[0].TargetRef.Name == "p2", fmt.Sprintf("%d slices", len(sl))
	})
}

// TestEndpointSlice_NoSelector: a Service without a selector and an ExternalName Service get no
// slice from the controller (upstream's syncService returns early); a Service with a selector
// and no pods gets the placeholder (no ports, no endpoints).
func TestEndpointSlice_NoSelector(t *testing.T) {
	t.Parallel()
	epsShared(t)
	ns := Namespace(t)
	epsService(t, ns, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "manual"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}})
	epsService(t, ns, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "ext"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com",
			Selector: map[string]string{"app": "x"}}})
	epsService(t, ns, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "empty"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "none"}, Ports: []corev1.ServicePort{{Port: 80}}}})
	Eventually(t, 15*time.Second, "placeholder", func() (bool, string) {
		sl, err := epsSlices(ns, "empty")
		if err != nil {
			return false, err.Error()
		}
		return len(sl) == 1 && len(sl[0].Endpoints) == 0 && len(sl[0].Ports) == 0, fmt.Sprintf("%+v", sl)
	})
	// the placeholder exists, so the controller has synced the others long since (one queue)
	time.Sleep(2 * time.Second)
	for _, n := range []string{"manual", "ext"} {
		if sl, err := epsSlices(ns, n); err != nil || len(sl) != 0 {
			t.Errorf("service %s: %d slices (%v), want none", n, len(sl), err)
		}
	}
}

// TestEndpointSlice_Recreated: a managed slice deleted by someone else is written again; a slice
// of another manager is left alone.
func TestEndpointSlice_Recreated(t *testing.T) {
	t.Parallel()
	epsShared(t)
	ns := Namespace(t)
	node := epsNode(t, nil)
	svc := epsService(t, ns, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "s"}, Ports: []corev1.ServicePort{{Port: 80}}}})
	epsPod(t, ns, "p", node, map[string]string{"app": "s"}, "10.2.0.1", true, nil)
	var first string
	Eventually(t, 15*time.Second, "a slice", func() (bool, string) {
		sl, err := epsSlices(ns, svc.Name)
		if err != nil || len(sl) != 1 || epsTotal(sl) != 1 {
			return false, fmt.Sprintf("%v %d", err, len(sl))
		}
		first = sl[0].Name
		return true, ""
	})
	port := int32(80)
	mine := &discovery.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "custom",
		Labels: map[string]string{discovery.LabelServiceName: "s", discovery.LabelManagedBy: "someone-else"}},
		AddressType: discovery.AddressTypeIPv4, Ports: []discovery.EndpointPort{{Port: &port}},
		Endpoints: []discovery.Endpoint{{Addresses: []string{"192.0.2.1"}}}}
	if _, err := env.Client.DiscoveryV1().EndpointSlices(ns).Create(context.Background(), mine, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.DiscoveryV1().EndpointSlices(ns).Delete(context.Background(), first, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 15*time.Second, "the slice written again", func() (bool, string) {
		sl, err := epsSlices(ns, svc.Name)
		if err != nil {
			return false, err.Error()
		}
		managed, custom := 0, 0
		for _, s := range sl {
			if s.Labels[discovery.LabelManagedBy] == "endpointslice-controller.k8s.io" && s.Name != first && len(s.Endpoints) == 1 {
				managed++
			}
			if s.Name == "custom" {
				custom++
			}
		}
		return managed == 1 && custom == 1, fmt.Sprintf("%d slices", len(sl))
	})
}

// epsHintsByAddr: per endpoint address, "zone/forZones/forNodes" ("-" where a part is unset).
func epsHintsByAddr(sl []discovery.EndpointSlice) map[string]string {
	m := map[string]string{}
	for _, s := range sl {
		for _, ep := range s.Endpoints {
			zone, fz, fn := "-", "-", "-"
			if ep.Zone != nil {
				zone = *ep.Zone
			}
			if ep.Hints != nil {
				for i, z := range ep.Hints.ForZones {
					if i == 0 {
						fz = ""
					}
					fz += z.Name + ";"
				}
				for i, n := range ep.Hints.ForNodes {
					if i == 0 {
						fn = ""
					}
					fn += n.Name + ";"
				}
			}
			for _, a := range ep.Addresses {
				m[a] = zone + "/" + fz + "/" + fn
			}
		}
	}
	return m
}

// TestEndpointSlice_TrafficDistribution: a Service with trafficDistribution PreferClose over
// ready pods on Nodes of two zones gets hints.forZones = each endpoint's own zone (a not-ready
// pod gets none); PreferSameNode adds hints.forNodes; removing trafficDistribution removes
// every hint. Starts without trafficDistribution and checks there are no hints first (the
// negative control: the hints come from the field, not from the slices' creation).
func TestEndpointSlice_TrafficDistribution(t *testing.T) {
	t.Parallel()
	epsShared(t)
	ctx := context.Background()
	ns := Namespace(t)
	na := epsNode(t, map[string]string{corev1.LabelTopologyZone: "zone-a"})
	time.Sleep(2 * time.Millisecond) // epsNode names by the clock
	nb := epsNode(t, map[string]string{corev1.LabelTopologyZone: "zone-b"})
	lbl := map[string]string{"app": "td"}
	svc := epsService(t, ns, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "td"},
		Spec: corev1.ServiceSpec{Selector: lbl,
			Ports: []corev1.ServicePort{{Name: "port-443", Port: 443, Protocol: "TCP", TargetPort: intstr.FromInt32(443)}}},
	})
	epsPod(t, ns, "pa", na, lbl, "10.0.1.1", true, nil)
	epsPod(t, ns, "pb", nb, lbl, "10.0.1.2", true, nil)
	epsPod(t, ns, "pc", nb, lbl, "10.0.1.3", false, nil)
	want := func(what string, m map[string]string) {
		t.Helper()
		Eventually(t, 30*time.Second, what, func() (bool, string) {
			sl, err := epsSlices(ns, svc.Name)
			if err != nil {
				return false, err.Error()
			}
			got := epsHintsByAddr(sl)
			return reflect.DeepEqual(got, m), fmt.Sprintf("%v", got)
		})
	}
	none := map[string]string{"10.0.1.1": "zone-a/-/-", "10.0.1.2": "zone-b/-/-", "10.0.1.3": "zone-b/-/-"}
	want("endpoints without hints", none)

	setTD := func(td *string) {
		t.Helper()
		s, err := env.Client.CoreV1().Services(ns).Get(ctx, svc.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.Spec.TrafficDistribution = td
		if _, err := env.Client.CoreV1().Services(ns).Update(ctx, s, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pc, sn := corev1.ServiceTrafficDistributionPreferClose, corev1.ServiceTrafficDistributionPreferSameNode
	setTD(&pc)
	want("zone hints (PreferClose)", map[string]string{
		"10.0.1.1": "zone-a/zone-a;/-", "10.0.1.2": "zone-b/zone-b;/-", "10.0.1.3": "zone-b/-/-"})
	setTD(&sn)
	want("zone and node hints (PreferSameNode)", map[string]string{
		"10.0.1.1": "zone-a/zone-a;/" + na + ";", "10.0.1.2": "zone-b/zone-b;/" + nb + ";", "10.0.1.3": "zone-b/-/-"})
	setTD(nil)
	want("hints removed", none)
}
