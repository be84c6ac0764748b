package e2e

// Issue 9's scale acceptance: 100 ReplicaSets owning 10,000 pods, deleted in the background
// (every pod collected) and in the foreground (each ReplicaSet gone only after its pods; the
// order is read from watch events, whose resourceVersions are etcd revisions). kcmd runs only
// its garbage collector (lifted QPS); no ReplicaSet controller runs, the test creates the pods
// with the references a ReplicaSet controller sets (controller, blockOwnerDeletion).

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// gcxScaleShape: the full acceptance with KCMD_E2E_SCALE=1, else a tenth of it (same code).
func gcxScaleShape() (nRS, perRS int, full bool) {
	if os.Getenv("KCMD_E2E_SCALE") == "1" {
		return 100, 100, true
	}
	return 10, 100, false
}

// TestGC_Scale100RS10kPods: background and foreground cascades of 100 ReplicaSets x 100 pods.
// The full size takes minutes on a small machine, so by default it runs 10 x 100 (the same
// checks); the full size runs with
//
//	KCMD_E2E_SCALE=1 make e2e RUN=TestGC_Scale100RS10kPods
func TestGC_Scale100RS10kPods(t *testing.T) {
	nRS, perRS, full := gcxScaleShape()
	if !full {
		t.Logf("running %d x %d pods (KCMD_E2E_SCALE=1 for 100 x 100)", nRS, perRS)
	}
	gcxStartGC(t)
	ctx := context.Background()

	t.Run("Background", func(t *testing.T) {
		ns := rsNamespace(t)
		rss, _ := gcxOwnedPods(t, ns, "bg", nRS, perRS)
		start := time.Now()
		gcxDeleteAll(t, rss, metav1.DeletePropagationBackground)
		Eventually(t, 10*time.Minute, "every pod collected", func() (bool, string) {
			n := gcxPodCount(t, ns)
			return n == 0, fmt.Sprintf("%d pods left after %.0f s", n, time.Since(start).Seconds())
		})
		el := time.Since(start).Seconds()
		t.Logf("background: %d dependents collected in %.1f s (%.0f/s)", nRS*perRS, el, float64(nRS*perRS)/el)
	})

	t.Run("Foreground", func(t *testing.T) {
		ns := rsNamespace(t)
		rss, owner := gcxOwnedPods(t, ns, "fg", nRS, perRS)
		// watch both kinds from now on; DELETED events carry the deletion's etcd revision
		l, err := env.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		from := l.ResourceVersion
		wp, err := env.Client.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: from})
		if err != nil {
			t.Fatal(err)
		}
		defer wp.Stop()
		wr, err := env.Client.AppsV1().ReplicaSets(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: from})
		if err != nil {
			t.Fatal(err)
		}
		defer wr.Stop()
		start := time.Now()
		gcxDeleteAll(t, rss, metav1.DeletePropagationForeground)

		lastPod := map[types.UID]int64{} // owner uid -> highest revision of its pods' deletes
		podsGone := 0
		rsGoneAt := map[types.UID]int64{}
		sawFinalizer := 0
		deadline := time.After(10 * time.Minute)
		for podsGone < nRS*perRS || len(rsGoneAt) < nRS {
			select {
			case ev, ok := <-wp.ResultChan():
				if !ok {
					t.Fatal("pod watch closed")
				}
				if ev.Type == watch.Error {
					t.Fatalf("pod watch error: %v", ev.Object)
				}
				p := ev.Object.(*corev1.Pod)
				if ev.Type != watch.Deleted {
					continue
				}
				rv, _ := strconv.ParseInt(p.ResourceVersion, 10, 64)
				o := owner[p.Name]
				if at, gone := rsGoneAt[o]; gone {
					t.Fatalf("pod %s deleted at revision %d after its ReplicaSet (revision %d)", p.Name, rv, at)
				}
				if rv > lastPod[o] {
					lastPod[o] = rv
				}
				podsGone++
			case ev, ok := <-wr.ResultChan():
				if !ok {
					t.Fatal("ReplicaSet watch closed")
				}
				if ev.Type == watch.Error {
					t.Fatalf("ReplicaSet watch error: %v", ev.Object)
				}
				rs := ev.Object.(*appsv1.ReplicaSet)
				if ev.Type == watch.Modified {
					for _, f := range rs.Finalizers {
						if f == metav1.FinalizerDeleteDependents && rs.DeletionTimestamp != nil {
							sawFinalizer++
							break
						}
					}
					continue
				}
				if ev.Type != watch.Deleted {
					continue
				}
				rv, _ := strconv.ParseInt(rs.ResourceVersion, 10, 64)
				rsGoneAt[rs.UID] = rv
			case <-deadline:
				t.Fatalf("after %.0f s: %d of %d pods and %d of %d ReplicaSets deleted", time.Since(start).Seconds(),
					podsGone, nRS*perRS, len(rsGoneAt), nRS)
			}
		}
		el := time.Since(start).Seconds()
		// every ReplicaSet's delete came after the last of its pods' deletes
		for _, rs := range rss {
			at, ok := rsGoneAt[rs.UID]
			if !ok {
				t.Fatalf("ReplicaSet %s not deleted", rs.Name)
			}
			if lp := lastPod[rs.UID]; lp == 0 || at <= lp {
				t.Fatalf("ReplicaSet %s deleted at revision %d, its last pod at %d", rs.Name, at, lp)
			}
		}
		if sawFinalizer == 0 {
			t.Fatalf("no ReplicaSet was seen deleting with %s", metav1.FinalizerDeleteDependents)
		}
		t.Logf("foreground: %d dependents then %d owners deleted in %.1f s (%.0f/s); every owner after its pods",
			nRS*perRS, nRS, el, float64(nRS*perRS)/el)
	})
}
