package e2e

// kcmd's ttl-controller (docs/ttl.md) against the real cluster, upstream kcm not running it.
// Ported from upstream's test/integration/ttlcontroller (v1.37, TestTTLAnnotations): 100 nodes
// get ttl 0, a 101st moves every node to 15, 11 fewer keep 15 (hysteresis), one more fewer goes
// back to 0. Upstream's test runs its informer with a 1 s resync, which re-delivers every node;
// kcm's resync is 12-24 h and kubelet status updates do that in a cluster. Without kubelets the
// test touches each node (a label) after a count change, as a heartbeat would.

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func ttlNodes(t *testing.T, prefix string, from, to int, create bool) {
	t.Helper()
	ctx := context.Background()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := from; i < to; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			name := fmt.Sprintf("%s-%d", prefix, i)
			var err error
			if create {
				_, err = env.Client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
			} else {
				err = env.Client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
			}
			if err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
}

// ttlTouch updates every node of the test (a heartbeat's worth of change).
func ttlTouch(t *testing.T, prefix string, n int, round int) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < n; i++ {
		patch := fmt.Sprintf(`{"metadata":{"labels":{"kcmd-test/touch":"%d"}}}`, round)
		_, _ = env.Client.CoreV1().Nodes().Patch(ctx, fmt.Sprintf("%s-%d", prefix, i), types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	}
}

func ttlWait(t *testing.T, total, ttl int) {
	t.Helper()
	Eventually(t, 60*time.Second, fmt.Sprintf("%d nodes with ttl %d", total, ttl), func() (bool, string) {
		l, err := env.Client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		if len(l.Items) != total {
			return false, fmt.Sprintf("%d nodes", len(l.Items))
		}
		for _, n := range l.Items {
			v, err := strconv.Atoi(n.Annotations["node.alpha.kubernetes.io/ttl"])
			if err != nil || v != ttl {
				return false, fmt.Sprintf("node %s: %q", n.Name, n.Annotations["node.alpha.kubernetes.io/ttl"])
			}
		}
		return true, ""
	})
}

func TestTTL_Annotations(t *testing.T) {
	ctx := context.Background()
	l, err := env.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 0 {
		t.Skipf("%d nodes of other tests exist; the step table counts every node of the cluster", len(l.Items))
	}
	prefix := fmt.Sprintf("ttl-%d", time.Now().UnixNano()%100000)
	t.Cleanup(func() {
		for i := 0; i < 101; i++ {
			_ = env.Client.CoreV1().Nodes().Delete(context.Background(), fmt.Sprintf("%s-%d", prefix, i), metav1.DeleteOptions{})
		}
	})
	p := saStart(t, "ttl-controller")
	ttlNodes(t, prefix, 0, 100, true)
	ttlWait(t, 100, 0)
	if !p.Logged("using service account kube-system/ttl-controller") {
		t.Error("the controller does not act as its service account")
	}
	ttlNodes(t, prefix, 100, 101, true)
	ttlTouch(t, prefix, 101, 1)
	ttlWait(t, 101, 15)
	ttlNodes(t, prefix, 90, 101, false)
	ttlTouch(t, prefix, 90, 2)
	ttlWait(t, 90, 15)
	ttlNodes(t, prefix, 89, 90, false)
	ttlTouch(t, prefix, 89, 3)
	ttlWait(t, 89, 0)
}
