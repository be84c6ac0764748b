package e2e

// kcmd's endpointslice-mirroring-controller (docs/endpointslicemirroring.md) against the real
// cluster, no upstream kube-controller-manager running. Ports of upstream's
// test/integration/endpointslice/endpointslicemirroring_test.go (TestEndpointSliceMirroring,
// TestEndpointSliceMirroringUpdates, TestEndpointSliceMirroringSelectorTransition) plus the
// behaviours upstream's unit tests cover that the API can show: address-type splitting, the
// skip-mirror label, the leader-election annotation, the trigger-time annotation left out, stale
// slice deletion, a deleted slice written again, the TooManyAddressesToMirror Event. One kcmd
// running only the mirroring controller, with --use-service-account-credentials (the bootstrap
// role system:controller:endpointslicemirroring-controller must allow every request) and
// --mirroring-max-endpoints-per-subset=3, is shared by every TestEndpointSliceMirroring_* (it
// acts cluster-wide); the cases with a selector also need the EndpointSlice controller, which
// the TestEndpointSlice_* kcmd runs (epsShared). Each case has its own namespace, in parallel.

import (
	"context"
	"fmt"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const esmManagedBy = "endpointslicemirroring-controller.k8s.io"

var (
	esmOnce sync.Once
	esmProc *kcmdProc
	esmPort int
)

func esmShared(t *testing.T) *kcmdProc {
	t.Helper()
	esmOnce.Do(func() {
		port := gcxFreePort(t)
		esmPort = port
		esmProc = startKcmdShared(t, "--controllers=endpointslice-mirroring-controller",
			"--secure-port="+strconv.Itoa(port), "--bind-address=127.0.0.1",
			"--authorization-always-allow-paths=/healthz,/metrics",
			"--use-service-account-credentials", "--leader-elect=false",
			"--mirroring-max-endpoints-per-subset=3", "--v=4")
	})
	return esmProc
}

func esmMirrored(ns, name string) ([]discovery.EndpointSlice, error) {
	l, err := env.Client.DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{
		LabelSelector: discovery.LabelServiceName + "=" + name + "," + discovery.LabelManagedBy + "=" + esmManagedBy})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

// esmWaitCount waits until exactly n mirrored slices exist (waitForMirroredSlices).
func esmWaitCount(t *testing.T, ns, name string, n int) []discovery.EndpointSlice {
	t.Helper()
	var out []discovery.EndpointSlice
	Eventually(t, 20*time.Second, fmt.Sprintf("%d mirrored slices of %s", n, name), func() (bool, string) {
		sl, err := esmMirrored(ns, name)
		if err != nil {
			return false, err.Error()
		}
		out = sl
		return len(sl) == n, fmt.Sprintf("%d slices", len(sl))
	})
	return out
}

func esmAddrs(sl []discovery.EndpointSlice) []string {
	var a []string
	for _, s := range sl {
		for _, e := range s.Endpoints {
			a = append(a, e.Addresses...)
		}
	}
	sort.Strings(a)
	return a
}

func svcNoSelector(name string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
}

func esmEndpoints(t *testing.T, ns string, ep *corev1.Endpoints) *corev1.Endpoints {
	t.Helper()
	out, err := env.Client.CoreV1().Endpoints(ns).Create(context.Background(), ep, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// esmEndpointsUpsert creates ep, or sets its subsets when the Endpoints already exists: a Service
// with a selector may already have Endpoints from the endpoints-controller of the TestEndpoints_*
// kcmd running beside these tests (upstream's test runs none).
func esmEndpointsUpsert(t *testing.T, ns string, ep *corev1.Endpoints) {
	t.Helper()
	ctx := context.Background()
	_, err := env.Client.CoreV1().Endpoints(ns).Create(ctx, ep, metav1.CreateOptions{})
	if err == nil || !apierrors.IsAlreadyExists(err) {
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	Eventually(t, 20*time.Second, "Endpoints "+ep.Name+" with the test's subsets", func() (bool, string) {
		cur, err := env.Client.CoreV1().Endpoints(ns).Get(ctx, ep.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		cur.Subsets = ep.Subsets
		if _, err := env.Client.CoreV1().Endpoints(ns).Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
}

func oneSubset(port int32, ips ...string) []corev1.EndpointSubset {
	s := corev1.EndpointSubset{Ports: []corev1.EndpointPort{{Port: port}}}
	for _, ip := range ips {
		s.Addresses = append(s.Addresses, corev1.EndpointAddress{IP: ip})
	}
	return []corev1.EndpointSubset{s}
}

// TestEndpointSliceMirroring_Basic: upstream's TestEndpointSliceMirroring cases.
func TestEndpointSliceMirroring_Basic(t *testing.T) {
	t.Parallel()
	esmShared(t)
	cases := []struct {
		name      string
		service   *corev1.Service
		endpoints *corev1.Endpoints
		want      int
		managedBy string
	}{
		{name: "Service with selector",
			service: &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "test-123"},
				Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}, Selector: map[string]string{"foo": "bar"}}},
			want: 1, managedBy: "endpointslice-controller.k8s.io"},
		{name: "Service without selector", service: svcNoSelector("test-123"),
			endpoints: &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "test-123"}, Subsets: oneSubset(80, "10.0.0.1")},
			want:      1, managedBy: esmManagedBy},
		{name: "Service without selector Endpoint multiple subsets and same address", service: svcNoSelector("test-123"),
			endpoints: &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "test-123"}, Subsets: []corev1.EndpointSubset{
				{Ports: []corev1.EndpointPort{{Name: "port1", Port: 80}}, Addresses: []corev1.EndpointAddress{{IP: "10.0.0.1"}}},
				{Ports: []corev1.EndpointPort{{Name: "port2", Port: 90}}, Addresses: []corev1.EndpointAddress{{IP: "10.0.0.1"}}}}},
			want: 1, managedBy: esmManagedBy},
		{name: "Service without selector Endpoint multiple subsets", service: svcNoSelector("test-123"),
			endpoints: &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "test-123"}, Subsets: []corev1.EndpointSubset{
				{Ports: []corev1.EndpointPort{{Name: "port1", Port: 80}}, Addresses: []corev1.EndpointAddress{{IP: "10.0.0.1"}}},
				{Ports: []corev1.EndpointPort{{Name: "port2", Port: 90}}, Addresses: []corev1.EndpointAddress{{IP: "10.0.0.2"}}}}},
			want: 2, managedBy: esmManagedBy},
		{name: "Service without Endpoints",
			service: &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "test-123"},
				Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}, Selector: map[string]string{"foo": "bar"}}},
			want: 1, managedBy: "endpointslice-controller.k8s.io"},
		{name: "Endpoints without Service",
			endpoints: &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "test-123"}, Subsets: oneSubset(80, "10.0.0.1")},
			want:      0},
	}
	for _, tc := range cases {
		tc := tc
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			t.Parallel()
			if tc.managedBy == "endpointslice-controller.k8s.io" {
				epsShared(t)
			}
			ns := Namespace(t)
			if tc.service != nil {
				epsService(t, ns, tc.service)
			}
			if tc.endpoints != nil {
				esmEndpoints(t, ns, tc.endpoints)
			}
			Eventually(t, 20*time.Second, "the slices", func() (bool, string) {
				sl, err := epsSlices(ns, "test-123")
				if err != nil {
					return false, err.Error()
				}
				if len(sl) != tc.want {
					return false, fmt.Sprintf("%d slices, want %d", len(sl), tc.want)
				}
				for _, s := range sl {
					if s.Labels[discovery.LabelManagedBy] != tc.managedBy {
						t.Fatalf("slice %s managed by %q, want %q", s.Name, s.Labels[discovery.LabelManagedBy], tc.managedBy)
					}
				}
				return true, ""
			})
			if tc.want == 0 {
				// nothing must appear later either: the controller has had the Endpoints queued
				time.Sleep(2 * time.Second)
				if sl, _ := epsSlices(ns, "test-123"); len(sl) != 0 {
					t.Fatalf("%d slices for Endpoints without a Service", len(sl))
				}
			}
		})
	}
}

// TestEndpointSliceMirroring_Updates: upstream's TestEndpointSliceMirroringUpdates: labels,
// annotations (the trigger time left out) and addresses changed on the Endpoints reach the slice.
func TestEndpointSliceMirroring_Updates(t *testing.T) {
	t.Parallel()
	esmShared(t)
	cases := []struct {
		name  string
		tweak func(ep *corev1.Endpoints)
	}{
		{"Update labels", func(ep *corev1.Endpoints) { ep.Labels["foo"] = "bar" }},
		{"Update annotations", func(ep *corev1.Endpoints) { ep.Annotations["foo2"] = "bar2" }},
		{"Update annotations but triggertime", func(ep *corev1.Endpoints) {
			ep.Annotations["foo2"] = "bar2"
			ep.Annotations[corev1.EndpointsLastChangeTriggerTime] = "date"
		}},
		{"Update addresses", func(ep *corev1.Endpoints) {
			ep.Subsets[0].Addresses = []corev1.EndpointAddress{{IP: "1.2.3.4"}, {IP: "1.2.3.6"}}
		}},
	}
	for _, tc := range cases {
		tc := tc
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			t.Parallel()
			ns := Namespace(t)
			ctx := context.Background()
			epsService(t, ns, svcNoSelector("test-123"))
			ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "test-123", Labels: map[string]string{},
				Annotations: map[string]string{}}, Subsets: oneSubset(80, "10.0.0.1")}
			esmEndpoints(t, ns, ep)
			tc.tweak(ep)
			if _, err := env.Client.CoreV1().Endpoints(ns).Update(ctx, ep, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			Eventually(t, 20*time.Second, "the update mirrored", func() (bool, string) {
				sl, err := epsSlices(ns, "test-123")
				if err != nil || len(sl) == 0 {
					return false, fmt.Sprintf("%v, %d slices", err, len(sl))
				}
				var want []string
				for _, a := range ep.Subsets[0].Addresses {
					want = append(want, a.IP)
				}
				sort.Strings(want)
				for _, s := range sl {
					if s.Labels[discovery.LabelManagedBy] != esmManagedBy {
						t.Fatalf("managed by %q", s.Labels[discovery.LabelManagedBy])
					}
					if got := esmAddrs([]discovery.EndpointSlice{s}); fmt.Sprint(got) != fmt.Sprint(want) {
						return false, fmt.Sprintf("addresses %v, want %v", got, want)
					}
					for k, v := range ep.Labels {
						if s.Labels[k] != v {
							return false, fmt.Sprintf("labels %v lack %s=%s", s.Labels, k, v)
						}
					}
					ann := map[string]string{}
					for k, v := range ep.Annotations {
						if k != corev1.EndpointsLastChangeTriggerTime {
							ann[k] = v
						}
					}
					if len(ann) != len(s.Annotations) {
						return false, fmt.Sprintf("annotations %v, want %v", s.Annotations, ann)
					}
					for k, v := range ann {
						if s.Annotations[k] != v {
							return false, fmt.Sprintf("annotations %v, want %v", s.Annotations, ann)
						}
					}
				}
				return true, ""
			})
		})
	}
}

// TestEndpointSliceMirroring_SelectorTransition: upstream's
// TestEndpointSliceMirroringSelectorTransition (an empty selector is none).
func TestEndpointSliceMirroring_SelectorTransition(t *testing.T) {
	t.Parallel()
	esmShared(t)
	cases := []struct {
		name         string
		start, end   map[string]string
		startN, endN int
	}{
		{"nil -> {foo: bar} selector", nil, map[string]string{"foo": "bar"}, 1, 0},
		{"{foo: bar} -> nil selector", map[string]string{"foo": "bar"}, nil, 0, 1},
		{"{} -> {foo: bar} selector", map[string]string{}, map[string]string{"foo": "bar"}, 1, 0},
		{"{foo: bar} -> {} selector", map[string]string{"foo": "bar"}, map[string]string{}, 0, 1},
	}
	for i, tc := range cases {
		tc := tc
		t.Run(fmt.Sprintf("case%d", i), func(t *testing.T) {
			t.Parallel()
			ns := Namespace(t)
			ctx := context.Background()
			svc := epsService(t, ns, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "test-123"},
				Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}, Selector: tc.start}})
			esmEndpointsUpsert(t, ns, &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "test-123"},
				Subsets: oneSubset(80, "10.0.0.1")})
			if tc.startN == 0 {
				time.Sleep(2 * time.Second) // the sync has run and must have mirrored nothing
			}
			esmWaitCount(t, ns, "test-123", tc.startN)
			svc.Spec.Selector = tc.end
			if _, err := env.Client.CoreV1().Services(ns).Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			if tc.endN == 0 {
				esmWaitCount(t, ns, "test-123", 0)
				return
			}
			// While the Service had a selector, the endpoints-controller (running in the
			// TestEndpoints_* kcmd, as in a real cluster) may have rewritten the Endpoints
			// with no addresses; once the selector is gone it leaves them alone, and the
			// custom addresses are put back here (upstream's test runs no endpoints-controller).
			Eventually(t, 20*time.Second, "1 mirrored slice", func() (bool, string) {
				ep, err := env.Client.CoreV1().Endpoints(ns).Get(ctx, "test-123", metav1.GetOptions{})
				if err == nil && (len(ep.Subsets) != 1 || len(ep.Subsets[0].Addresses) != 1) {
					ep.Subsets = oneSubset(80, "10.0.0.1")
					_, _ = env.Client.CoreV1().Endpoints(ns).Update(ctx, ep, metav1.UpdateOptions{})
				}
				sl, err := esmMirrored(ns, "test-123")
				if err != nil {
					return false, err.Error()
				}
				return len(sl) == 1, fmt.Sprintf("%d slices", len(sl))
			})
		})
	}
}

// TestEndpointSliceMirroring_AddressTypesAndOwner: one slice per address type, addresses in
// canonical form, the owner reference to the Endpoints, and a port set change recycles the slice
// (same name, new ports) instead of creating one and deleting another.
func TestEndpointSliceMirroring_AddressTypesAndOwner(t *testing.T) {
	t.Parallel()
	esmShared(t)
	ns := Namespace(t)
	ctx := context.Background()
	epsService(t, ns, svcNoSelector("dual"))
	ep := esmEndpoints(t, ns, &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "dual"},
		Subsets: []corev1.EndpointSubset{{Ports: []corev1.EndpointPort{{Name: "http", Port: 80}},
			Addresses:         []corev1.EndpointAddress{{IP: "10.1.0.1"}, {IP: "2001:db8::1"}},
			NotReadyAddresses: []corev1.EndpointAddress{{IP: "10.1.0.2", Hostname: "h2"}}}}})
	sl := esmWaitCount(t, ns, "dual", 2)
	byType := map[discovery.AddressType]discovery.EndpointSlice{}
	for _, s := range sl {
		byType[s.AddressType] = s
		if len(s.OwnerReferences) != 1 || s.OwnerReferences[0].Kind != "Endpoints" ||
			s.OwnerReferences[0].UID != ep.UID || s.OwnerReferences[0].Controller == nil || !*s.OwnerReferences[0].Controller {
			t.Errorf("slice %s owner %+v, want the Endpoints as controller", s.Name, s.OwnerReferences)
		}
		if !strings.HasPrefix(s.Name, "dual-") {
			t.Errorf("slice name %s, want generated from dual-", s.Name)
		}
	}
	v4, v6 := byType[discovery.AddressTypeIPv4], byType[discovery.AddressTypeIPv6]
	if got := esmAddrs([]discovery.EndpointSlice{v4}); fmt.Sprint(got) != "[10.1.0.1 10.1.0.2]" {
		t.Errorf("IPv4 slice addresses %v", got)
	}
	if got := esmAddrs([]discovery.EndpointSlice{v6}); fmt.Sprint(got) != "[2001:db8::1]" {
		t.Errorf("IPv6 slice addresses %v", got)
	}
	for _, e := range v4.Endpoints {
		ready := e.Conditions.Ready != nil && *e.Conditions.Ready
		if (e.Addresses[0] == "10.1.0.2") == ready {
			t.Errorf("endpoint %v ready=%v", e.Addresses, ready)
		}
		if e.Addresses[0] == "10.1.0.2" && (e.Hostname == nil || *e.Hostname != "h2") {
			t.Errorf("endpoint %v hostname %v", e.Addresses, e.Hostname)
		}
	}
	// new port set: the IPv4 slice is rewritten under its name; the IPv6 slice goes
	ep, err := env.Client.CoreV1().Endpoints(ns).Get(ctx, "dual", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ep.Subsets = []corev1.EndpointSubset{{Ports: []corev1.EndpointPort{{Name: "https", Port: 443}},
		Addresses: []corev1.EndpointAddress{{IP: "10.1.0.1"}}}}
	if _, err := env.Client.CoreV1().Endpoints(ns).Update(ctx, ep, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 20*time.Second, "one slice with the new port", func() (bool, string) {
		sl, err := esmMirrored(ns, "dual")
		if err != nil || len(sl) != 1 {
			return false, fmt.Sprintf("%v %d", err, len(sl))
		}
		s := sl[0]
		if len(s.Ports) != 1 || s.Ports[0].Port == nil || *s.Ports[0].Port != 443 {
			return false, fmt.Sprintf("ports %+v", s.Ports)
		}
		if s.Name != v4.Name {
			t.Fatalf("slice %s, want %s recycled", s.Name, v4.Name)
		}
		return true, ""
	})
}

// TestEndpointSliceMirroring_SkipAndLeader: the skip-mirror label and the leader-election
// annotation stop mirroring, and adding the label removes existing mirrored slices.
func TestEndpointSliceMirroring_SkipAndLeader(t *testing.T) {
	t.Parallel()
	esmShared(t)
	ns := Namespace(t)
	ctx := context.Background()
	for _, n := range []string{"skip", "leader", "later"} {
		epsService(t, ns, svcNoSelector(n))
	}
	esmEndpoints(t, ns, &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "skip",
		Labels: map[string]string{discovery.LabelSkipMirror: "true"}}, Subsets: oneSubset(80, "10.2.0.1")})
	esmEndpoints(t, ns, &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "leader",
		Annotations: map[string]string{"control-plane.alpha.kubernetes.io/leader": "{}"}}, Subsets: oneSubset(80, "10.2.0.2")})
	later := esmEndpoints(t, ns, &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "later"},
		Subsets: oneSubset(80, "10.2.0.3")})
	esmWaitCount(t, ns, "later", 1)
	// "later" has been mirrored, so the other two were handled long since (one queue)
	time.Sleep(1 * time.Second)
	for _, n := range []string{"skip", "leader"} {
		if sl, err := esmMirrored(ns, n); err != nil || len(sl) != 0 {
			t.Errorf("%s: %d mirrored slices (%v), want none", n, len(sl), err)
		}
	}
	later.Labels = map[string]string{discovery.LabelSkipMirror: "true"}
	if _, err := env.Client.CoreV1().Endpoints(ns).Update(ctx, later, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	esmWaitCount(t, ns, "later", 0)
}

// TestEndpointSliceMirroring_DeleteAndRecreate: a mirrored slice deleted by someone else is
// written again; deleting the Endpoints, then the Service, removes the slices.
func TestEndpointSliceMirroring_DeleteAndRecreate(t *testing.T) {
	t.Parallel()
	esmShared(t)
	ns := Namespace(t)
	ctx := context.Background()
	epsService(t, ns, svcNoSelector("a"))
	epsService(t, ns, svcNoSelector("b"))
	esmEndpoints(t, ns, &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Subsets: oneSubset(80, "10.3.0.1")})
	esmEndpoints(t, ns, &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Subsets: oneSubset(80, "10.3.0.2")})
	sa := esmWaitCount(t, ns, "a", 1)
	esmWaitCount(t, ns, "b", 1)
	if err := env.Client.DiscoveryV1().EndpointSlices(ns).Delete(ctx, sa[0].Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 20*time.Second, "the slice written again", func() (bool, string) {
		sl, err := esmMirrored(ns, "a")
		if err != nil || len(sl) != 1 {
			return false, fmt.Sprintf("%v %d", err, len(sl))
		}
		return sl[0].UID != sa[0].UID, "still the old slice"
	})
	if err := env.Client.CoreV1().Endpoints(ns).Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	esmWaitCount(t, ns, "a", 0)
	if err := env.Client.CoreV1().Services(ns).Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	esmWaitCount(t, ns, "b", 0)
}

// TestEndpointSliceMirroring_TooManyAddresses: beyond --mirroring-max-endpoints-per-subset (3
// here) addresses are skipped, ready ones kept first, with upstream's Warning Event on the
// Endpoints.
func TestEndpointSliceMirroring_TooManyAddresses(t *testing.T) {
	t.Parallel()
	esmShared(t)
	ns := Namespace(t)
	ctx := context.Background()
	epsService(t, ns, svcNoSelector("big"))
	subsets := oneSubset(80, "10.4.0.1", "10.4.0.2", "10.4.0.3", "10.4.0.4")
	subsets[0].NotReadyAddresses = []corev1.EndpointAddress{{IP: "10.4.0.9"}}
	esmEndpoints(t, ns, &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "big"}, Subsets: subsets})
	sl := esmWaitCount(t, ns, "big", 1)
	if got := esmAddrs(sl); fmt.Sprint(got) != "[10.4.0.1 10.4.0.2 10.4.0.3]" {
		t.Errorf("mirrored %v, want the first three ready addresses", got)
	}
	Eventually(t, 20*time.Second, "the TooManyAddressesToMirror Event", func() (bool, string) {
		evs, err := env.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, e := range evs.Items {
			if e.Reason == "TooManyAddressesToMirror" && e.InvolvedObject.Kind == "Endpoints" &&
				e.InvolvedObject.Name == "big" && e.Type == corev1.EventTypeWarning &&
				e.Message == "A max of 3 addresses can be mirrored to EndpointSlices per Endpoints subset. 2 addresses were skipped" &&
				e.Source.Component == "endpoint-slice-mirroring-controller" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d events", len(evs.Items))
	})
	// upstream's endpoint_slice_mirroring_controller_* families on /metrics: this sync skipped
	// 2 addresses and created a slice
	Eventually(t, 20*time.Second, "the mirroring metrics", func() (bool, string) {
		code, _, b := gcxGet(t, esmPort, "/metrics")
		if code != 200 {
			return false, fmt.Sprintf("HTTP %d", code)
		}
		body := string(b)
		for _, want := range []string{
			"# HELP endpoint_slice_mirroring_controller_changes [ALPHA] Number of EndpointSlice changes",
			`endpoint_slice_mirroring_controller_changes{operation="create"} `,
			"# TYPE endpoint_slice_mirroring_controller_addresses_skipped_per_sync histogram",
			"# TYPE endpoint_slice_mirroring_controller_endpoints_sync_duration histogram",
			"# TYPE endpoint_slice_mirroring_controller_endpoints_desired gauge",
			"# TYPE endpoint_slice_mirroring_controller_num_endpoint_slices gauge",
			"# TYPE endpoint_slice_mirroring_controller_desired_endpoint_slices gauge",
			"# TYPE endpoint_slice_mirroring_controller_endpoints_added_per_sync histogram",
		} {
			if !strings.Contains(body, want) {
				return false, "no " + want
			}
		}
		for _, line := range strings.Split(body, "\n") {
			if strings.HasPrefix(line, "endpoint_slice_mirroring_controller_addresses_skipped_per_sync_sum ") {
				v, err := strconv.ParseFloat(strings.Fields(line)[1], 64)
				return err == nil && v >= 2, line
			}
		}
		return false, "no addresses_skipped_per_sync_sum"
	})
}

// TestEndpointSliceMirroring_WorkerCrash: the mirroring worker is killed (kill -9) three times
// while 30 Endpoints are rewritten, and they are rewritten once more while the last one is dead.
// Its slice tracker dies with it, so a restarted worker may write from a cache that has not seen
// its predecessor's last writes; the end state must still be exact: one mirrored slice per
// Endpoints with exactly its final addresses (which only a restarted worker can have written), no
// other mirrored slice in the namespace, and a new worker process running. Not parallel: it
// kills the shared kcmd's worker.
func TestEndpointSliceMirroring_WorkerCrash(t *testing.T) {
	p := esmShared(t)
	ns := Namespace(t)
	ctx := context.Background()
	const n = 30
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("crash-%d", i)
		epsService(t, ns, svcNoSelector(name))
		esmEndpoints(t, ns, &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: name},
			Subsets: oneSubset(80, fmt.Sprintf("10.5.%d.1", i), fmt.Sprintf("10.5.%d.2", i))})
	}
	workers := func() []int {
		var w []int
		for pid, comm := range childrenOf(p.cmd.Process.Pid) {
			if comm == "kcmd-worker" {
				w = append(w, pid)
			}
		}
		return w
	}
	var killed []int
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < n; i++ {
			name := fmt.Sprintf("crash-%d", i)
			ep, err := env.Client.CoreV1().Endpoints(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Errorf("get %s: %v", name, err)
				return
			}
			ep.Subsets = oneSubset(80, fmt.Sprintf("10.5.%d.3", i))
			if _, err := env.Client.CoreV1().Endpoints(ns).Update(ctx, ep, metav1.UpdateOptions{}); err != nil {
				t.Errorf("update %s: %v", name, err)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	for k := 0; k < 3; k++ {
		var w []int
		Eventually(t, 20*time.Second, "a mirroring worker to kill", func() (bool, string) {
			w = workers()
			return len(w) == 1, fmt.Sprintf("workers %v", w)
		})
		if err := syscall.Kill(w[0], syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		killed = append(killed, w[0])
		time.Sleep(250 * time.Millisecond)
	}
	<-done
	// the last worker is dead: a last round of changes only its successor can mirror
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("crash-%d", i)
		ep, err := env.Client.CoreV1().Endpoints(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ep.Subsets = oneSubset(80, fmt.Sprintf("10.5.%d.4", i))
		if _, err := env.Client.CoreV1().Endpoints(ns).Update(ctx, ep, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	Eventually(t, 30*time.Second, "one exact mirrored slice per Endpoints", func() (bool, string) {
		l, err := env.Client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{
			LabelSelector: discovery.LabelManagedBy + "=" + esmManagedBy})
		if err != nil {
			return false, err.Error()
		}
		per := map[string][]discovery.EndpointSlice{}
		for _, s := range l.Items {
			per[s.Labels[discovery.LabelServiceName]] = append(per[s.Labels[discovery.LabelServiceName]], s)
		}
		if len(l.Items) != n || len(per) != n {
			return false, fmt.Sprintf("%d slices for %d Endpoints", len(l.Items), len(per))
		}
		for i := 0; i < n; i++ {
			name := fmt.Sprintf("crash-%d", i)
			if got := esmAddrs(per[name]); fmt.Sprint(got) != fmt.Sprintf("[10.5.%d.4]", i) {
				return false, fmt.Sprintf("%s: %v", name, got)
			}
		}
		return true, ""
	})
	now := workers()
	if len(now) != 1 {
		t.Fatalf("workers after the crashes: %v", now)
	}
	for _, k := range killed {
		if k == now[0] {
			t.Fatalf("worker %d still running after kill -9", k)
		}
	}
	t.Logf("killed workers %v; now %v", killed, now)
}
