package e2e

// kcmd's service-cidr-controller (docs/servicecidr.md) against the real cluster (its apiserver
// serves networking.k8s.io/v1 ServiceCIDRs and IPAddresses: MultiCIDRServiceAllocator is GA and
// locked on in v1.37), no upstream kube-controller-manager running. Ports of upstream's
// test/integration/servicecidr (TestServiceAllocNewServiceCIDR, TestServiceCIDRDeletion) and of
// the unit cases of servicecidrs_controller_test.go the API can show. One kcmd running only
// this controller with --use-service-account-credentials (the bootstrap role
// system:controller:service-cidrs-controller must allow every request) is shared by every
// TestServiceCIDR_*; they run in parallel on ranges of their own. ServiceCIDRs are cluster-wide
// and the apiserver allocates other tests' Service IPs from any Ready IPv4 ServiceCIDR, so the
// deletion cases use IPv6 ranges (this single-stack IPv4 apiserver allocates nothing from them)
// with IPAddress objects written as the apiserver's allocator writes them; the one IPv4 case
// tolerates another test's Service landing in its range.

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

const (
	sccFinalizer  = "networking.k8s.io/service-cidr-finalizer"
	sccMsgReady   = "Kubernetes Service CIDR is ready"
	sccMsgBlocked = "There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new ServiceCIDR"
)

var (
	sccOnce sync.Once
	sccProc *kcmdProc
)

func sccShared(t *testing.T) *kcmdProc {
	t.Helper()
	sccOnce.Do(func() {
		port := gcxFreePort(t)
		sccProc = startKcmdShared(t, "--controllers=service-cidr-controller",
			"--secure-port="+strconv.Itoa(port), "--bind-address=127.0.0.1",
			"--authorization-always-allow-paths=/healthz,/metrics",
			"--use-service-account-credentials", "--leader-elect=false", "--v=4")
	})
	return sccProc
}

func sccCreate(t *testing.T, name string, cidrs ...string) {
	t.Helper()
	_, err := env.Client.NetworkingV1().ServiceCIDRs().Create(context.Background(), &networkingv1.ServiceCIDR{
		ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: cidrs}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.Client.NetworkingV1().ServiceCIDRs().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

func sccReady(c *networkingv1.ServiceCIDR) *metav1.Condition {
	for i := range c.Status.Conditions {
		if c.Status.Conditions[i].Type == networkingv1.ServiceCIDRConditionReady {
			return &c.Status.Conditions[i]
		}
	}
	return nil
}

func hasFinalizer(fs []string, f string) bool {
	for _, x := range fs {
		if x == f {
			return true
		}
	}
	return false
}

// sccWaitReady waits for the finalizer and Ready=True with upstream's message and no reason.
func sccWaitReady(t *testing.T, name string) {
	t.Helper()
	Eventually(t, 20*time.Second, name+" ready with its finalizer", func() (bool, string) {
		c, err := env.Client.NetworkingV1().ServiceCIDRs().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		r := sccReady(c)
		if !hasFinalizer(c.Finalizers, sccFinalizer) || r == nil || r.Status != metav1.ConditionTrue {
			return false, fmt.Sprintf("finalizers %v, ready %+v", c.Finalizers, r)
		}
		if r.Message != sccMsgReady || r.Reason != "" {
			t.Fatalf("Ready condition %+v, want message %q and no reason", r, sccMsgReady)
		}
		return true, ""
	})
}

func sccWaitGone(t *testing.T, name string, within time.Duration) {
	t.Helper()
	Eventually(t, within, name+" deleted", func() (bool, string) {
		c, err := env.Client.NetworkingV1().ServiceCIDRs().Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return false, fmt.Sprintf("finalizers %v, conditions %+v", c.Finalizers, c.Status.Conditions)
	})
}

func sccWaitTerminating(t *testing.T, name string) {
	t.Helper()
	Eventually(t, 20*time.Second, name+" Ready=False Terminating", func() (bool, string) {
		c, err := env.Client.NetworkingV1().ServiceCIDRs().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		r := sccReady(c)
		if r == nil || r.Status != metav1.ConditionFalse {
			return false, fmt.Sprintf("ready %+v", r)
		}
		if r.Reason != networkingv1.ServiceCIDRReasonTerminating || r.Message != sccMsgBlocked {
			t.Fatalf("condition %+v", r)
		}
		return hasFinalizer(c.Finalizers, sccFinalizer), fmt.Sprintf("finalizers %v", c.Finalizers)
	})
}

// sccIPAddress writes an IPAddress as the apiserver's allocator does (labels, parentRef).
func sccIPAddress(t *testing.T, ip, family, ns string) {
	t.Helper()
	_, err := env.Client.NetworkingV1().IPAddresses().Create(context.Background(), &networkingv1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{Name: ip, Labels: map[string]string{
			networkingv1.LabelIPAddressFamily: family, networkingv1.LabelManagedBy: "ipallocator.k8s.io"}},
		Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Resource: "services", Namespace: ns, Name: "e2e"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.Client.NetworkingV1().IPAddresses().Delete(context.Background(), ip, metav1.DeleteOptions{})
	})
}

func sccDelete(t *testing.T, name string) time.Time {
	t.Helper()
	start := time.Now()
	if err := env.Client.NetworkingV1().ServiceCIDRs().Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	return start
}

// TestServiceCIDR_ReadyAndFinalizer: a new ServiceCIDR gets the finalizer and Ready=True (server
// side apply by field manager service-cidr-controller); a removed finalizer comes back; the
// apiserver's default ServiceCIDR "kubernetes" gets the finalizer too.
func TestServiceCIDR_ReadyAndFinalizer(t *testing.T) {
	t.Parallel()
	sccShared(t)
	ctx := context.Background()
	sccCreate(t, "e2e-scc-ready", "2001:db8:10::/64")
	sccWaitReady(t, "e2e-scc-ready")
	c, err := env.Client.NetworkingV1().ServiceCIDRs().Get(ctx, "e2e-scc-ready", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range c.ManagedFields {
		if m.Manager == "service-cidr-controller" && m.Subresource == "status" && m.Operation == metav1.ManagedFieldsOperationApply {
			found = true
		}
	}
	if !found {
		t.Errorf("no status Apply by service-cidr-controller in %+v", c.ManagedFields)
	}
	patch := `{"metadata":{"$deleteFromPrimitiveList/finalizers":["` + sccFinalizer + `"]}}`
	if _, err := env.Client.NetworkingV1().ServiceCIDRs().Patch(ctx, "e2e-scc-ready", types.StrategicMergePatchType,
		[]byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	sccWaitReady(t, "e2e-scc-ready")
	Eventually(t, 20*time.Second, "the default ServiceCIDR's finalizer", func() (bool, string) {
		d, err := env.Client.NetworkingV1().ServiceCIDRs().Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return hasFinalizer(d.Finalizers, sccFinalizer), fmt.Sprintf("%v", d.Finalizers)
	})
}

// TestServiceCIDR_DeletionBlockedByIPAddress: "service CIDR being deleted with IPv6 addresses
// should update the status", then the address goes and so does the ServiceCIDR; an IPAddress at
// the network address blocks nothing ("CIDR with IPv4 address referencing the subnet address").
func TestServiceCIDR_DeletionBlockedByIPAddress(t *testing.T) {
	t.Parallel()
	sccShared(t)
	ns := Namespace(t)
	sccCreate(t, "e2e-scc-blocked", "2001:db8:20::/64")
	sccCreate(t, "e2e-scc-netaddr", "2001:db8:21::/64")
	sccWaitReady(t, "e2e-scc-blocked")
	sccWaitReady(t, "e2e-scc-netaddr")
	sccIPAddress(t, "2001:db8:20::10", "IPv6", ns)
	sccIPAddress(t, "2001:db8:21::", "IPv6", ns)
	sccDelete(t, "e2e-scc-blocked")
	sccDelete(t, "e2e-scc-netaddr")
	sccWaitTerminating(t, "e2e-scc-blocked")
	sccWaitGone(t, "e2e-scc-netaddr", 25*time.Second)
	if c, err := env.Client.NetworkingV1().ServiceCIDRs().Get(context.Background(), "e2e-scc-blocked", metav1.GetOptions{}); err != nil {
		t.Fatalf("blocked ServiceCIDR: %v", err)
	} else if !hasFinalizer(c.Finalizers, sccFinalizer) {
		t.Fatalf("blocked ServiceCIDR lost its finalizer: %v", c.Finalizers)
	}
	if err := env.Client.NetworkingV1().IPAddresses().Delete(context.Background(), "2001:db8:20::10", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	sccWaitGone(t, "e2e-scc-blocked", 25*time.Second)
}

// TestServiceCIDR_DeletionWithParent: upstream's TestServiceCIDRDeletion on IPv6 ranges: a
// ServiceCIDR contained in another is deleted despite its addresses, only after the 10 s grace
// period; the parent is then held by the orphaned address until it goes.
func TestServiceCIDR_DeletionWithParent(t *testing.T) {
	t.Parallel()
	sccShared(t)
	ns := Namespace(t)
	sccCreate(t, "e2e-scc-parent", "2001:db8:30::/48")
	sccCreate(t, "e2e-scc-child", "2001:db8:30::/64")
	sccWaitReady(t, "e2e-scc-parent")
	sccWaitReady(t, "e2e-scc-child")
	sccIPAddress(t, "2001:db8:30::10", "IPv6", ns)
	start := sccDelete(t, "e2e-scc-child")
	sccWaitGone(t, "e2e-scc-child", 25*time.Second)
	// deletionTimestamp has second precision: the finalizer may go up to 1 s before 10 s
	if el := time.Since(start); el < 8*time.Second {
		t.Errorf("child deleted after %v, before the 10 s grace period", el)
	}
	sccDelete(t, "e2e-scc-parent")
	sccWaitTerminating(t, "e2e-scc-parent")
	if err := env.Client.NetworkingV1().IPAddresses().Delete(context.Background(), "2001:db8:30::10", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	sccWaitGone(t, "e2e-scc-parent", 25*time.Second)
}

// TestServiceCIDR_NewRangeServesServices: upstream's TestServiceAllocNewServiceCIDR: a Service
// asking for an IP of a new ServiceCIDR made Ready by this controller gets it; the ServiceCIDR's deletion is then held by the
// Service's IPAddress and completes after the Service goes.
func TestServiceCIDR_NewRangeServesServices(t *testing.T) {
	t.Parallel()
	sccShared(t)
	ns := Namespace(t)
	ctx := context.Background()
	sccCreate(t, "e2e-scc-v4", "10.97.0.0/28")
	sccWaitReady(t, "e2e-scc-v4")
	var svc *corev1.Service
	Eventually(t, 20*time.Second, "a Service with an IP of the new range", func() (bool, string) {
		s, err := env.Client.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "in-range"},
			Spec: corev1.ServiceSpec{ClusterIP: "10.97.0.5", Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
		if err != nil {
			return false, err.Error() // the apiserver's allocator may not have seen Ready yet
		}
		svc = s
		return true, ""
	})
	if svc.Spec.ClusterIP != "10.97.0.5" {
		t.Fatalf("clusterIP %s", svc.Spec.ClusterIP)
	}
	sccDelete(t, "e2e-scc-v4")
	sccWaitTerminating(t, "e2e-scc-v4")
	if err := env.Client.CoreV1().Services(ns).Delete(ctx, "in-range", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 30*time.Second, "the ServiceCIDR deleted once no address of this test is in it", func() (bool, string) {
		_, err := env.Client.NetworkingV1().ServiceCIDRs().Get(ctx, "e2e-scc-v4", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		// another test's Service may have been given an address of this range while it was Ready
		ips, err := env.Client.NetworkingV1().IPAddresses().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, ip := range ips.Items {
			if len(ip.Name) > 8 && ip.Name[:8] == "10.97.0." && ip.Spec.ParentRef != nil && ip.Spec.ParentRef.Namespace == ns {
				return false, "this test's address " + ip.Name + " is still there"
			}
		}
		for _, ip := range ips.Items {
			if len(ip.Name) > 8 && ip.Name[:8] == "10.97.0." {
				t.Logf("held by %s (%+v), another test's", ip.Name, ip.Spec.ParentRef)
				return true, ""
			}
		}
		return false, "no address left in the range, yet the ServiceCIDR exists"
	})
}
