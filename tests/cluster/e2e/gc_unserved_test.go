// SPDX-License-Identifier: Apache-2.0

package e2e

// Issue 21, "a resource missing from discovery": the owners of a ConfigMap are objects of a
// CRD whose only version stops being served. Their objects still exist (in etcd), but the
// resource leaves discovery: informerd drops its informer and its objects, so the graph loses
// the owner and the dependent is checked. Upstream (attemptToDeleteItem -> isDangling) looks the
// owner up live; an owner whose kind cannot be resolved keeps its dependents ("unable to get
// REST mapping", retried), and only an owner the apiserver says is absent makes a reference
// dangling. The GC's REST mapping must therefore be as fresh as the monitor set: a GET of the
// unserved version answers 404, which client-go's IsNotFound (and kcmd) take as absent.

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// TestGC_OwnerResourceUnserved: dependents of owners whose resource left discovery survive.
// The GC workers' discovery is at most 30 s old when they see the owners go (informerd is
// restarted right after the version is unserved, and drops the resource in its first round),
// so their mapping still names the unserved version: the live GET gets the route's 404.
func TestGC_OwnerResourceUnserved(t *testing.T) {
	ns := gciNamespace(t, "unserved")
	crd := gciNewCRD(t, "Namespaced")
	const n = 5
	var deps []string
	for i := 0; i < n; i++ {
		owner := crd.newObj(t, ns, fmt.Sprintf("owner-%d", i))
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("dep-%d", i),
			OwnerReferences: []metav1.OwnerReference{gciRefTo(crd.group+"/"+crd.version, crd.kind, owner.GetName(), owner.GetUID())}}}
		if _, err := env.Client.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		deps = append(deps, cm.Name)
	}
	p := gciStartGC(t)
	gciWaitSynced(t, p, "configmaps", crd.res())
	gciWaitWorkersStarted(t, p)
	workersAt := time.Now()
	// the owners hold their dependents: nothing is collected while the resource is served
	time.Sleep(2 * time.Second)
	for _, d := range deps {
		if _, err := env.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), d, metav1.GetOptions{}); err != nil {
			t.Fatalf("dependent %s before the version was unserved: %v", d, err)
		}
	}

	// unserve the only version: the objects stay in etcd, the resource leaves discovery
	u, err := crd.dyn.Resource(gciCRDGVR).Get(context.Background(), crd.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vs, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
	vs[0].(map[string]any)["served"] = false
	if err := unstructured.SetNestedSlice(u.Object, vs, "spec", "versions"); err != nil {
		t.Fatal(err)
	}
	if _, err := crd.dyn.Resource(gciCRDGVR).Update(context.Background(), u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 30*time.Second, "the resource gone from discovery", func() (bool, string) {
		rl, err := env.Client.Discovery().ServerResourcesForGroupVersion(crd.group + "/" + crd.version)
		if err != nil {
			return true, ""
		}
		for _, r := range rl.APIResources {
			if r.Name == crd.plural {
				return false, "still listed"
			}
		}
		return true, ""
	})
	// informerd's first discovery round after a restart drops what is gone (its next periodic
	// round could be up to 30 s away)
	pid := hgmInformerdPid(p.cmd.Process.Pid)
	if pid == 0 {
		t.Fatal("no informerd")
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	Eventually(t, 20*time.Second, "informerd dropping the unserved resource", func() (bool, string) {
		for _, l := range p.Logs() {
			if strings.Contains(l, crd.plural+"."+crd.group) && strings.Contains(l, "gone") {
				return true, ""
			}
		}
		return false, "not yet"
	})
	if since := time.Since(workersAt); since > 25*time.Second {
		t.Logf("warning: %s since the GC workers fetched discovery; their mapping may be fresh", since)
	}
	// Something queues a dependent while the GC workers' own periodic discovery (every 30 s)
	// may still map the unserved version: dep-0 gains a second owner that does not exist, so
	// it is checked now. Its check must not find the first owner absent (a GET of the
	// unserved version answers 404, which is NotFound): upstream resets its REST mapper in the
	// Sync that stops the monitor, so the owner's kind is unresolvable then (restMappingError,
	// retried) and dep-0 stays. kcmd's workers fetch discovery again when informerd's
	// resource set changed; before that they deleted dep-0 within a second here.
	cm0, err := env.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), deps[0], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm0.OwnerReferences = append(cm0.OwnerReferences, gciRefTo("v1", "ConfigMap", "ghost-owner", types.UID("ghost-"+ns)))
	if _, err := env.Client.CoreV1().ConfigMaps(ns).Update(context.Background(), cm0, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// the dependents are checked now; give the workers time to act (and past their own
	// discovery refresh, after which the owners' kind is unresolvable)
	deadline := time.Now().Add(40 * time.Second)
	for time.Now().Before(deadline) {
		for _, d := range deps {
			if _, err := env.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), d, metav1.GetOptions{}); err != nil {
				t.Fatalf("dependent %s of an owner whose resource is unserved was collected: %v", d, err)
			}
		}
		time.Sleep(time.Second)
	}
}
