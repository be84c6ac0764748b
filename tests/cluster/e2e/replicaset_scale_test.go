// SPDX-License-Identifier: Apache-2.0

package e2e

// Issue 8's scale acceptance: 200 ReplicaSets x 50 replicas converge, are scaled to 10 and
// converge again, and are deleted with background propagation; kcmd's own garbage collector
// (upstream kube-controller-manager does not run) removes every pod. No kubelet runs: the pods
// stay Pending, which changes nothing for the ReplicaSet controller's counting.

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	hrtScaleRS       = 200
	hrtScaleReplicas = 50
	hrtScaleDown     = 10
)

// TestReplicaSet_Scale200x50: 10,000 pods through kcmd's ReplicaSet controller and garbage
// collector. Slow on a small machine, so it runs only with KCMD_E2E_SCALE=1:
//
//	KCMD_E2E_SCALE=1 make e2e RUN=TestReplicaSet_Scale200x50
func TestReplicaSet_Scale200x50(t *testing.T) {
	if os.Getenv("KCMD_E2E_SCALE") != "1" {
		t.Skip("10,000 pods take minutes on a small machine: set KCMD_E2E_SCALE=1 to run " +
			"(KCMD_E2E_SCALE=1 make e2e RUN=TestReplicaSet_Scale200x50)")
	}
	ctx := context.Background()
	ns := rsNamespace(t)
	stopSharedRS(t) // exactly one ReplicaSet controller: this test's kcmd
	p := startKcmd(t, nil, "--controllers=replicaset-controller,garbage-collector-controller", "--secure-port=0",
		"--leader-elect=false", "--kube-api-qps=500", "--kube-api-burst=1000", "--concurrent-replicaset-syncs=5",
		"--concurrent-gc-syncs=20")
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	tr := hrtStartTracker(t, ns)

	names := make([]string, hrtScaleRS)
	for i := range names {
		names[i] = fmt.Sprintf("scale-%03d", i)
	}

	// Phase 1: create 200 ReplicaSets of 50 replicas.
	t0 := time.Now()
	err := hrtParallel(len(names), 16, func(i int) error {
		_, err := env.Client.AppsV1().ReplicaSets(ns).Create(ctx, demoReplicaSet(ns, names[i], hrtScaleReplicas), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("creating the ReplicaSets: %v", err)
	}
	t.Logf("%d ReplicaSets created in %.2f s", len(names), hrtSince(t0))
	hrtWait(t, 15*time.Minute, 500*time.Millisecond, fmt.Sprintf("%d x %d pods", hrtScaleRS, hrtScaleReplicas),
		func() (bool, string) { return hrtConverged(tr, names, func(int) int32 { return hrtScaleReplicas }) })
	createS := hrtSince(t0)
	want := map[string]int32{}
	for _, n := range names {
		want[n] = hrtScaleReplicas
	}
	if probs, _ := hrtVerify(ns, want, false); len(probs) > 0 {
		t.Fatalf("after scale-up (%d problems): %s", len(probs), strings.Join(probs[:min(len(probs), 20)], "; "))
	}
	for _, rs := range tr.ReplicaSets() {
		// fewer can only mean that the test's informer missed a pod created and deleted while
		// its watch was down (the LIST above saw 50); more is over-creation
		if c := tr.Created(rs.UID); c > hrtScaleReplicas {
			t.Errorf("%s: %d pods ever created, want %d (over-creation)", rs.Name, c, hrtScaleReplicas)
		} else if c < hrtScaleReplicas {
			t.Logf("%s: the test's informer saw only %d pods created", rs.Name, c)
		}
	}
	hrtBench(t, "rs.e2e.scale_up_200x50", createS, "s")

	// Phase 2: scale every ReplicaSet to 10.
	t1 := time.Now()
	if _, err := hrtScaleAll(ns, names, func(int) int32 { return hrtScaleDown }); err != nil {
		t.Fatal(err)
	}
	hrtWait(t, 10*time.Minute, 500*time.Millisecond, fmt.Sprintf("%d x %d pods", hrtScaleRS, hrtScaleDown),
		func() (bool, string) { return hrtConverged(tr, names, func(int) int32 { return hrtScaleDown }) })
	downS := hrtSince(t1)
	for _, n := range names {
		want[n] = hrtScaleDown
	}
	if probs, _ := hrtVerify(ns, want, false); len(probs) > 0 {
		t.Fatalf("after scale-down (%d problems): %s", len(probs), strings.Join(probs[:min(len(probs), 20)], "; "))
	}
	hrtBench(t, "rs.e2e.scale_down_200x50_to_10", downS, "s")

	// Phase 3: delete every ReplicaSet in the background; kcmd's GC deletes the 2,000 pods.
	t2 := time.Now()
	bg := metav1.DeletePropagationBackground
	err = hrtParallel(len(names), 16, func(i int) error {
		return env.Client.AppsV1().ReplicaSets(ns).Delete(ctx, names[i], metav1.DeleteOptions{PropagationPolicy: &bg})
	})
	if err != nil {
		t.Fatalf("deleting the ReplicaSets: %v", err)
	}
	hrtWait(t, 10*time.Minute, 500*time.Millisecond, "every pod collected", func() (bool, string) {
		c := tr.Counts()
		rss := len(tr.ReplicaSets())
		return c.all == 0 && rss == 0, fmt.Sprintf("%d pods, %d ReplicaSets left", c.all, rss)
	})
	gcS := hrtSince(t2)
	pods, err := env.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rss, err := env.Client.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 0 || len(rss.Items) != 0 {
		var left []string
		for _, p := range pods.Items {
			left = append(left, p.Name)
		}
		sort.Strings(left)
		t.Fatalf("after the GC: %d pods (%s), %d ReplicaSets left", len(pods.Items),
			strings.Join(left[:min(len(left), 10)], ","), len(rss.Items))
	}
	hrtBench(t, "rs.e2e.gc_background_200x10", gcS, "s")
	t.Logf("scale 200x50: up %.1f s, down to 10 %.1f s, background delete + GC %.1f s, total %.1f s",
		createS, downS, gcS, hrtSince(t0))
}
