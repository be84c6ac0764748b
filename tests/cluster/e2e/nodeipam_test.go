package e2e

// kcmd's node-ipam-controller (docs/nodeipam.md) against the real cluster, with no other copy
// of it running: podCIDRs from --cluster-cidr for new Nodes, the service range and a Node's
// existing podCIDR never handed out, the range running out (the CIDRNotAvailable Event) and a
// deleted Node's CIDR given to the Node that waited. Not parallel: the controller acts on every
// Node of the cluster.

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

func ipamNode(t *testing.T, name string, podCIDRs ...string) {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if len(podCIDRs) > 0 {
		n.Spec.PodCIDR, n.Spec.PodCIDRs = podCIDRs[0], podCIDRs
	}
	if _, err := env.Client.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating node %s: %v", name, err)
	}
	t.Cleanup(func() { _ = env.Client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

func ipamWaitCIDR(t *testing.T, name string) string {
	t.Helper()
	var got string
	Eventually(t, 30*time.Second, "a podCIDR for "+name, func() (bool, string) {
		n, err := env.Client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if len(n.Spec.PodCIDRs) == 0 {
			return false, "none yet"
		}
		if n.Spec.PodCIDR != n.Spec.PodCIDRs[0] {
			return false, fmt.Sprintf("podCIDR %q, podCIDRs %v", n.Spec.PodCIDR, n.Spec.PodCIDRs)
		}
		got = n.Spec.PodCIDR
		return true, ""
	})
	return got
}

func TestNodeIPAM_RangeAllocator(t *testing.T) {
	ctx := context.Background()
	suffix := fmt.Sprint(time.Now().UnixNano() % 100000)
	// Nodes of the cluster without a podCIDR (none, unless a test left one) would be served first
	all, err := env.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	others := 0
	for _, n := range all.Items {
		if len(n.Spec.PodCIDRs) == 0 {
			others++
		}
	}
	// a Node that already has a CIDR before kcmd starts: never handed out again
	pre := "ipam-pre-" + suffix
	ipamNode(t, pre, "10.200.17.0/24")
	p := startKcmd(t, nil, "--controllers=node-ipam-controller", "--secure-port=0", "--leader-elect=false",
		"--use-service-account-credentials", "--allocate-node-cidrs", "--cluster-cidr=10.200.0.0/16",
		"--node-cidr-mask-size=24", "--service-cluster-ip-range=10.200.0.0/20", "--v=4")
	t.Cleanup(func() { dumpKcmdLogs(t, p) })

	seen := map[string]string{}
	for i := 0; i < 4; i++ {
		name := fmt.Sprintf("ipam-%d-%s", i, suffix)
		ipamNode(t, name)
		c := ipamWaitCIDR(t, name)
		ip, ipnet, err := net.ParseCIDR(c)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		ones, _ := ipnet.Mask.Size()
		_, cluster, _ := net.ParseCIDR("10.200.0.0/16")
		_, svc, _ := net.ParseCIDR("10.200.0.0/20")
		switch {
		case ones != 24 || !cluster.Contains(ip):
			t.Errorf("%s got %s: not a /24 of the cluster CIDR", name, c)
		case svc.Contains(ip):
			t.Errorf("%s got %s: inside the service range", name, c)
		case c == "10.200.17.0/24":
			t.Errorf("%s got %s: the pre-existing Node's", name, c)
		}
		if other, dup := seen[c]; dup {
			t.Errorf("%s and %s both got %s", name, other, c)
		}
		seen[c] = name
	}
	// the first allocations after the 16 service subnets, skipping the pre-existing one (only
	// checkable when no other Node took some first)
	if others == 0 {
		for _, want := range []string{"10.200.16.0/24", "10.200.18.0/24", "10.200.19.0/24", "10.200.20.0/24"} {
			if _, ok := seen[want]; !ok {
				t.Errorf("%s was not handed out: %v", want, seen)
			}
		}
	} else {
		t.Logf("%d other Nodes without a podCIDR: the order of allocation is not checked", others)
	}
	for c, name := range seen {
		_ = env.Client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
		delete(seen, c)
	}
	_ = env.Client.CoreV1().Nodes().Delete(ctx, pre, metav1.DeleteOptions{})
	_ = p.cmd.Process.Kill()
	<-p.done

	// a range of two /24s: the third Node waits (CIDRNotAvailable) until one is released
	q := startKcmd(t, nil, "--controllers=node-ipam-controller", "--secure-port=0", "--leader-elect=false",
		"--use-service-account-credentials", "--allocate-node-cidrs", "--cluster-cidr=10.201.0.0/23",
		"--node-cidr-mask-size=24", "--v=4")
	t.Cleanup(func() { dumpKcmdLogs(t, q) })
	a, b, c := "ipam-a-"+suffix, "ipam-b-"+suffix, "ipam-c-"+suffix
	ipamNode(t, a)
	ca := ipamWaitCIDR(t, a)
	ipamNode(t, b)
	cb := ipamWaitCIDR(t, b)
	if ca == cb {
		t.Fatalf("%s and %s both got %s", a, b, ca)
	}
	ipamNode(t, c)
	Eventually(t, 30*time.Second, "the CIDRNotAvailable Event of "+c, func() (bool, string) {
		l, err := env.Client.CoreV1().Events("default").List(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("involvedObject.name", c).String()})
		if err != nil {
			return false, err.Error()
		}
		for _, e := range l.Items {
			if e.Reason == "CIDRNotAvailable" && e.Source.Component == "cidrAllocator" &&
				e.Message == "Node "+c+" status is now: CIDRNotAvailable" && e.Type == corev1.EventTypeNormal {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d events", len(l.Items))
	})
	if err := env.Client.CoreV1().Nodes().Delete(ctx, a, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if cc := ipamWaitCIDR(t, c); cc != ca {
		t.Errorf("%s got %s, want the released %s", c, cc, ca)
	}
}

// TestNodeIPAM_RefusedConfiguration: kcm's start-up errors stop kcmd before anything starts.
func TestNodeIPAM_RefusedConfiguration(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		msg   string
	}{
		{[]string{"--allocate-node-cidrs"}, "invalid CIDR[0]: <nil> (invalid CIDR address: )"},
		{[]string{"--allocate-node-cidrs", "--cluster-cidr=10.0.0.0/16,10.1.0.0/16"}, "not configured as dual stack"},
		{[]string{"--allocate-node-cidrs", "--cluster-cidr=10.0.0.0/16", "--cidr-allocator-type=CloudAllocator"},
			"--cidr-allocator-type is set to 'CloudAllocator' but cloud provider is not configured"},
	} {
		p := startKcmd(t, nil, append([]string{"--controllers=node-ipam-controller", "--secure-port=0",
			"--leader-elect=false"}, tc.flags...)...)
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
			t.Fatalf("%v: kcmd still runs", tc.flags)
		}
		if !p.Logged(tc.msg) {
			t.Errorf("%v: no %q in the log", tc.flags, tc.msg)
		}
	}
}
