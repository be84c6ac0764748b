// SPDX-License-Identifier: Apache-2.0

// CRDs created and deleted in bulk (issue 21, "Fixed tables that fill"): informerd watches every
// served resource for the garbage collector, so each CRD takes a slot of the arena's resource
// table. The slots of deleted CRDs are retired and reused: a second batch of as many new CRDs
// leaves the table no larger than the first did, every resource of both batches is listed and
// synced, and the GC still collects across them.
//
// The default run uses 20 CRDs; KCMD_E2E_CRDS=2000 is the acceptance size:
//
//	KCMD_E2E_CRDS=2000 make e2e RUN=TestTables_CRDChurn
package e2e

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// crdChurnSet is one batch: n cluster-scoped CRDs of one random group, plural "w<batch>x<i>s".
type crdChurnSet struct {
	group, batch string
	n            int
}

func (s crdChurnSet) plural(i int) string { return fmt.Sprintf("w%sx%ds", s.batch, i) }
func (s crdChurnSet) kind(i int) string   { return fmt.Sprintf("W%sx%d", strings.ToUpper(s.batch), i) }
func (s crdChurnSet) res(i int) string    { return s.plural(i) + "." + s.group }
func (s crdChurnSet) gvr(i int) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: s.group, Version: "v1", Resource: s.plural(i)}
}

func (s crdChurnSet) create(t *testing.T) {
	t.Helper()
	dyn := gciDynamic(t)
	err := hrtParallel(s.n, 8, func(i int) error {
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": s.res(i)},
			"spec": map[string]any{
				"group": s.group, "scope": "Namespaced",
				"names": map[string]any{"plural": s.plural(i), "singular": strings.ToLower(s.kind(i)),
					"kind": s.kind(i), "listKind": s.kind(i) + "List"},
				"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
					"schema": gciAllowAll()}},
			},
		}}
		_, err := dyn.Resource(gciCRDGVR).Create(context.Background(), obj, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("creating %d CRDs of %s: %v", s.n, s.group, err)
	}
	t.Cleanup(func() { s.deleteAll(nil) })
}

// deleteAll deletes the batch's CRDs; with t it waits until the apiserver has none left.
func (s crdChurnSet) deleteAll(t *testing.T) {
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		if t != nil {
			t.Fatal(err)
		}
		return
	}
	_ = hrtParallel(s.n, 8, func(i int) error {
		err := dyn.Resource(gciCRDGVR).Delete(context.Background(), s.res(i), metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
	if t == nil {
		return
	}
	t.Helper()
	hrtWait(t, 20*time.Minute, 2*time.Second, "the CRDs of "+s.group+" gone", func() (bool, string) {
		left := s.countCRDs(t)
		return left == 0, fmt.Sprintf("%d left", left)
	})
}

func (s crdChurnSet) countCRDs(t *testing.T) int {
	l, err := gciDynamic(t).Resource(gciCRDGVR).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return -1
	}
	n := 0
	for i := range l.Items {
		if strings.HasSuffix(l.Items[i].GetName(), "."+s.group) {
			n++
		}
	}
	return n
}

// cacheTypes parses `kcmctl cache stats`: the table's size and resource -> synced.
func crdChurnCache(t *testing.T, p *kcmdProc) (int, map[string]bool) {
	t.Helper()
	out, ok := gciKcmctl(t, p, "cache", "stats")
	if !ok {
		return -1, nil
	}
	n := -1
	if m := regexp.MustCompile(`types (\d+)`).FindStringSubmatch(out); m != nil {
		n, _ = strconv.Atoi(m[1])
	}
	return n, gciSyncedTypes(t, p)
}

func (s crdChurnSet) waitCached(t *testing.T, p *kcmdProc, what string) int {
	t.Helper()
	size := -1
	hrtWait(t, 20*time.Minute, 2*time.Second, what, func() (bool, string) {
		var st map[string]bool
		size, st = crdChurnCache(t, p)
		synced, seen := 0, 0
		for i := 0; i < s.n; i++ {
			if v, ok := st[s.res(i)]; ok {
				seen++
				if v {
					synced++
				}
			}
		}
		return synced == s.n, fmt.Sprintf("%d of %d in the cache, %d synced", seen, s.n, synced)
	})
	return size
}

func (s crdChurnSet) waitUncached(t *testing.T, p *kcmdProc) {
	t.Helper()
	hrtWait(t, 10*time.Minute, 2*time.Second, "no resource of "+s.group+" left in the cache", func() (bool, string) {
		_, st := crdChurnCache(t, p)
		if st == nil {
			return false, "kcmctl failed"
		}
		left := 0
		for r := range st {
			if strings.HasSuffix(r, "."+s.group) {
				left++
			}
		}
		return left == 0, fmt.Sprintf("%d left", left)
	})
}

// gcAcross: for every step-th CRD of the batch, an object of it owns a ConfigMap; deleting the
// owners lets the garbage collector delete every ConfigMap.
func (s crdChurnSet) gcAcross(t *testing.T, ns string, step int) {
	t.Helper()
	ctx := context.Background()
	dyn := gciDynamic(t)
	var idx []int
	for i := 0; i < s.n; i += step {
		idx = append(idx, i)
	}
	err := hrtParallel(len(idx), 8, func(k int) error {
		i := idx[k]
		owner := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": s.group + "/v1", "kind": s.kind(i),
			"metadata": map[string]any{"name": "owner", "namespace": ns},
		}}
		o, err := dyn.Resource(s.gvr(i)).Namespace(ns).Create(ctx, owner, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("owner of %s: %w", s.res(i), err)
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dep-" + s.plural(i), Namespace: ns,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: s.group + "/v1", Kind: s.kind(i),
				Name: o.GetName(), UID: o.GetUID()}}}}
		if _, err := env.Client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return err
		}
		return dyn.Resource(s.gvr(i)).Namespace(ns).Delete(ctx, "owner", metav1.DeleteOptions{})
	})
	if err != nil {
		t.Fatal(err)
	}
	hrtWait(t, 5*time.Minute, time.Second, fmt.Sprintf("the GC deleting %d dependents of %s", len(idx), s.group),
		func() (bool, string) {
			l, err := env.Client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			left := 0
			for i := range l.Items {
				if strings.HasPrefix(l.Items[i].Name, "dep-w"+s.batch) {
					left++
				}
			}
			return left == 0, fmt.Sprintf("%d left", left)
		})
}

func TestTables_CRDChurn(t *testing.T) {
	n := 20
	if v, err := strconv.Atoi(os.Getenv("KCMD_E2E_CRDS")); err == nil && v > 0 {
		n = v
	}
	step := n / 10
	if step < 1 {
		step = 1
	}
	p := gciStartGC(t)
	gciWaitSynced(t, p, "pods", "configmaps")
	base, _ := crdChurnCache(t, p)
	ns := Namespace(t)
	tag := time.Now().UnixNano() % 1000000
	first := crdChurnSet{group: fmt.Sprintf("c%d.churn.kcmd.test", tag), batch: "a", n: n}
	second := crdChurnSet{group: fmt.Sprintf("d%d.churn.kcmd.test", tag), batch: "b", n: n}

	t0 := time.Now()
	first.create(t)
	high := first.waitCached(t, p, fmt.Sprintf("the %d CRDs of the first batch synced in kcmd's cache", n))
	t.Logf("first batch: %d CRDs created and synced in %.1f s; the resource table has %d slots (%d before)",
		n, hrtSince(t0), high, base)
	if high < base+n {
		t.Fatalf("the table has %d slots for %d resources before and %d CRDs", high, base, n)
	}
	first.gcAcross(t, ns, step)

	t1 := time.Now()
	first.deleteAll(t)
	first.waitUncached(t, p)
	t.Logf("first batch deleted and gone from the cache in %.1f s", hrtSince(t1))

	t2 := time.Now()
	second.create(t)
	after := second.waitCached(t, p, fmt.Sprintf("the %d CRDs of the second batch synced in kcmd's cache", n))
	t.Logf("second batch: %d CRDs created and synced in %.1f s; the resource table has %d slots", n, hrtSince(t2), after)
	if after > high {
		t.Fatalf("the resource table grew from %d to %d slots: the first batch's slots were not reused", high, after)
	}
	second.gcAcross(t, ns, step)
	second.deleteAll(t)
	second.waitUncached(t, p)
	for _, bad := range []string{"No space left", "table is full", "ENOSPC"} {
		if p.Logged(bad) {
			t.Fatalf("kcmd logged %q", bad)
		}
	}
	t.Logf("bench: tables_crd_churn crds=%d first_s=%.1f second_s=%.1f total_s=%.1f table_slots=%d",
		n, t1.Sub(t0).Seconds(), time.Since(t2).Seconds(), hrtSince(t0), high)
}
