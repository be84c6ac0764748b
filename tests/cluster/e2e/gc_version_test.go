// SPDX-License-Identifier: Apache-2.0

package e2e

// Issue 21, "informers follow a CRD's preferred version when it changes": the GC's monitors are
// keyed by group/version/resource and upstream's resync (GarbageCollector.resyncMonitors over
// GetDeletableResources, which names preferred versions) replaces the monitor of a resource
// whose preferred version changed, keeping the graph's nodes. kcmd's informerd must do the
// same: a metadata informer left at the old version stops working once that version is no
// longer served, and the objects created afterwards never reach the cache.

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// gciSetVersions replaces the CRD's versions: each entry is name -> {served, storage}.
func gciSetVersions(t *testing.T, crd *gciCRD, versions []any) {
	t.Helper()
	Eventually(t, 30*time.Second, "updating the versions of CRD "+crd.name, func() (bool, string) {
		u, err := crd.dyn.Resource(gciCRDGVR).Get(context.Background(), crd.name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if err := unstructured.SetNestedSlice(u.Object, versions, "spec", "versions"); err != nil {
			t.Fatal(err)
		}
		if _, err := crd.dyn.Resource(gciCRDGVR).Update(context.Background(), u, metav1.UpdateOptions{}); err != nil {
			return false, err.Error() // a conflict with the apiserver's status update: retry
		}
		return true, ""
	})
}

func gciVersion(name string, served, storage bool) map[string]any {
	return map[string]any{"name": name, "served": served, "storage": storage, "schema": gciAllowAll()}
}

// TestGC_CRDPreferredVersionFollowed: a CRD gains a preferred version, then stops serving the
// old one. kcmd re-watches the resource at the new version (one discovery period at most), the
// switch collects no dependent, objects created through the new version reach the GC's graph,
// and the GC collects a dependent of one of them.
func TestGC_CRDPreferredVersionFollowed(t *testing.T) {
	ns := gciNamespace(t, "prefver")
	crd := gciNewCRD(t, "Namespaced") // one version, v1beta1
	owner := crd.newObj(t, ns, "owner-old")
	dep := func(name string, ref metav1.OwnerReference) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			OwnerReferences: []metav1.OwnerReference{ref}}}
		if _, err := env.Client.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	present := func(name string) {
		t.Helper()
		if _, err := env.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{}); err != nil {
			t.Fatalf("dependent %s: %v", name, err)
		}
	}
	dep("dep-old", gciRefTo(crd.group+"/v1beta1", crd.kind, owner.GetName(), owner.GetUID()))

	p := gciStartGC(t)
	gciWaitSynced(t, p, "configmaps", crd.res())
	gciWaitInGraph(t, p, "the first owner", owner.GetUID())

	// v1 is added and becomes the storage version; discovery prefers it (kube-aware order)
	gciSetVersions(t, crd, []any{gciVersion("v1beta1", true, false), gciVersion("v1", true, true)})
	// one discovery period (30 s) at most; not an oracle by itself (the graph checks below are)
	rewatched := false
	for end := time.Now().Add(75 * time.Second); !rewatched && time.Now().Before(end); time.Sleep(time.Second) {
		for _, l := range p.Logs() {
			if strings.Contains(l, crd.res()) && strings.Contains(l, "preferred version is now v1") {
				rewatched = true
			}
		}
	}
	if !rewatched {
		t.Logf("no re-watch of %s at v1 logged within 75 s", crd.res())
	}
	gciWaitSynced(t, p, crd.res())

	// the old version is no longer served: an informer still on it could list nothing now
	gciSetVersions(t, crd, []any{gciVersion("v1beta1", false, false), gciVersion("v1", true, true)})
	v1 := *crd
	v1.version, v1.gvr.Version = "v1", "v1"
	owner2 := v1.newObj(t, ns, "owner-new")
	dep("dep-new", gciRefTo(crd.group+"/v1", crd.kind, owner2.GetName(), owner2.GetUID()))
	gciWaitInGraph(t, p, "an object created through the new preferred version", owner2.GetUID())
	gciWaitInGraph(t, p, "the first owner, re-listed at the new version", owner.GetUID())
	present("dep-old")
	present("dep-new")

	// the GC works on the new version: the new owner's dependent is collected, the old one's
	// (its owner still exists) is not
	if err := v1.client(ns).Delete(context.Background(), owner2.GetName(), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	gciGone(t, 60*time.Second, "dependent of the deleted owner", func() error {
		_, err := env.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), "dep-new", metav1.GetOptions{})
		return err
	})
	time.Sleep(2 * time.Second)
	present("dep-old")
}

// TestGC_MonitorsKeptOnDiscoveryFailure: the discovery of a CRD's group starts failing (its
// APIService is pointed at a Service that does not exist, so /apis/<group>/<version> answers
// 503). Upstream's GarbageCollector.Sync keeps the monitors of groups whose discovery failed
// (ErrGroupDiscoveryFailed) instead of dropping them: kcmd's informerd keeps the resource's
// informer and its objects in the arena across discovery rounds, and drops nothing.
func TestGC_MonitorsKeptOnDiscoveryFailure(t *testing.T) {
	ctx := context.Background()
	ns := gciNamespace(t, "discofail")
	crd := gciNewCRD(t, "Namespaced")
	owner := crd.newObj(t, ns, "owner")
	// a dependent, so that the owner is drawn in the GC's graph dump (which, as upstream's, shows
	// only objects with owners or dependents); were the owner's informer dropped, the owner would
	// be left there as a virtual node only, which gciInGraph does not count
	if _, err := env.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dep",
		OwnerReferences: []metav1.OwnerReference{gciRefTo(owner.GetAPIVersion(), owner.GetKind(), owner.GetName(), owner.GetUID())}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := gciStartGC(t)
	gciWaitSynced(t, p, "configmaps", crd.res())
	gciWaitInGraph(t, p, "the CRD's object", owner.GetUID())

	// the APIService the CRD registered, taken over (no automanaged label: the aggregator's
	// registration controller leaves it alone) and pointed at a missing Service
	apis := crd.dyn.Resource(schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"})
	name := crd.version + "." + crd.group
	Eventually(t, 30*time.Second, "taking over APIService "+name, func() (bool, string) {
		u, err := apis.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		labels := u.GetLabels()
		delete(labels, "kube-aggregator.kubernetes.io/automanaged")
		u.SetLabels(labels)
		svc := map[string]any{"namespace": "default", "name": "kcmd-no-such-service", "port": int64(443)}
		if err := unstructured.SetNestedMap(u.Object, svc, "spec", "service"); err != nil {
			t.Fatal(err)
		}
		_ = unstructured.SetNestedField(u.Object, true, "spec", "insecureSkipTLSVerify")
		if _, err := apis.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	// the CRD is deleted at the end; its APIService is ours now, so it goes too
	t.Cleanup(func() { _ = apis.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	Eventually(t, 30*time.Second, "the group's discovery failing", func() (bool, string) {
		_, err := env.Client.Discovery().ServerResourcesForGroupVersion(crd.group + "/" + crd.version)
		if err == nil {
			return false, "still served"
		}
		return true, ""
	})
	// one discovery round (30 s) at least sees the failure
	Eventually(t, 75*time.Second, "informerd's discovery round with the failed group", func() (bool, string) {
		for _, l := range p.Logs() {
			if strings.Contains(l, "failed to discover some groups") && strings.Contains(l, crd.group) {
				return true, ""
			}
		}
		return false, "no failed round logged"
	})
	time.Sleep(2 * time.Second)
	for _, l := range p.Logs() {
		if strings.Contains(l, crd.res()) && strings.Contains(l, "gone") {
			t.Fatalf("informerd dropped the resource of a group whose discovery failed: %s", l)
		}
	}
	if !gciInGraph(t, p, owner.GetUID()) {
		t.Fatal("the CRD's object left the GC's graph (or is only a virtual node) after a failed discovery of its group")
	}
	if _, ok := gciSyncedTypes(t, p)[crd.res()]; !ok {
		t.Fatal("the CRD's resource left the cache after a failed discovery of its group")
	}
}
