package e2e

// TestBench_KubeletSim (make bench-kubeletsim): how fast the kubelet simulator turns Pending pods
// into Running+Ready ones and finishes their graceful deletions on this machine's apiserver,
// next to the raw rate at which a client-go client creates pods (the apiserver's write limit
// here) and the rate client-go gets for the simulator's two writes (bind, status patch), and what
// it costs in CPU. KCMD_BENCH_SIM_PODS sets the pod count (default 3000).

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// hksParallel runs fn(0..n-1) on 32 goroutines; returns the seconds it took.
func hksParallel(t *testing.T, n int, fn func(i int) error) float64 {
	t.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				if err := fn(int(i)); err != nil {
					t.Errorf("item %d: %v", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start).Seconds()
}

// hksCPUSeconds is utime+stime of pid.
func hksCPUSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (u + st) / 100 // USER_HZ
}

// hksWatchCount counts the pods of ns for which pred turns true (each pod once) until want is
// reached or timeout passes; returns the time of the last one.
func hksWatchCount(t *testing.T, cs kubernetes.Interface, ns string, rv string, want int, timeout time.Duration,
	pred func(ev watch.Event, p *corev1.Pod) bool) time.Time {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	seen := map[string]bool{}
	last := time.Now()
	for len(seen) < want {
		w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
		if err != nil {
			t.Fatalf("watch: %v (%d of %d seen)", err, len(seen), want)
		}
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			rv = p.ResourceVersion
			if !seen[p.Name] && pred(ev, p) {
				seen[p.Name] = true
				last = time.Now()
				if len(seen) == want {
					break
				}
			}
		}
		w.Stop()
		if ctx.Err() != nil && len(seen) < want {
			t.Fatalf("timed out: %d of %d pods", len(seen), want)
		}
	}
	return last
}

func TestBench_KubeletSim(t *testing.T) {
	if os.Getenv("KCMD_BENCH") != "1" {
		t.Skip("benchmark: run with make bench-kubeletsim")
	}
	n := 3000
	if v, err := strconv.Atoi(os.Getenv("KCMD_BENCH_SIM_PODS")); err == nil && v > 0 {
		n = v
	}
	stopSharedRS(t)
	hksCleanupSimNodes(t)
	ns := Namespace(t)
	cfg := *env.Config
	cfg.QPS, cfg.Burst = 100000, 100000
	cs, err := kubernetes.NewForConfig(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	// The reference: a client creating pods as fast as the apiserver takes them (32 at once).
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%d", i), Labels: hksLabels()},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}
				if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
					t.Errorf("create: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	createS := time.Since(start).Seconds()
	fmt.Printf("bench: kubeletsim.client_creates_per_s %.0f pods/s\n", float64(n)/createS)

	// The same two writes the simulator makes per pod, by client-go (32 at once), on pods bound
	// to a node that is not the simulator's: what the apiserver gives a client for them here.
	refNs := Namespace(t)
	refN := n / 3
	hksParallel(t, refN, func(i int) error {
		_, err := cs.CoreV1().Pods(refNs).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("r-%d", i)},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}},
			metav1.CreateOptions{})
		return err
	})
	bindS := hksParallel(t, refN, func(i int) error {
		return cs.CoreV1().Pods(refNs).Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("r-%d", i)},
			Target: corev1.ObjectReference{Kind: "Node", Name: "hks-reference-node"}}, metav1.CreateOptions{})
	})
	patchS := hksParallel(t, refN, func(i int) error {
		now := time.Now().UTC().Format(time.RFC3339)
		body := fmt.Sprintf(`{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","lastTransitionTime":%q},`+
			`{"type":"ContainersReady","status":"True","lastTransitionTime":%q},{"type":"Initialized","status":"True","lastTransitionTime":%q}],`+
			`"hostIP":"10.1.0.1","podIP":"10.2.0.1","startTime":%q}}`, now, now, now, now)
		_, err := cs.CoreV1().Pods(refNs).Patch(ctx, fmt.Sprintf("r-%d", i), types.StrategicMergePatchType, []byte(body),
			metav1.PatchOptions{}, "status")
		return err
	})
	if t.Failed() {
		return
	}
	fmt.Printf("bench: kubeletsim.client_binds_per_s %.0f writes/s\n", float64(refN)/bindS)
	fmt.Printf("bench: kubeletsim.client_status_patches_per_s %.0f writes/s\n", float64(refN)/patchS)
	clientPodS := bindS/float64(refN) + patchS/float64(refN) // seconds per pod for bind + patch

	list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	rv := list.ResourceVersion

	// The simulator alone (as `kcmd bench` runs it): from its "nodes ready" to the last pod
	// Ready. The pods are already there, so this is its own pace, not the creator's.
	p := hksStartSim(t, "--controllers=-replicaset-controller,-garbage-collector-controller,-pod-garbage-collector-controller,-job-controller",
		"--simulate-kubelet-qps=100000", "--simulate-kubelet-burst=100000", "--v=1")
	ready := time.Now()
	var simPid, infPid int
	for pid, name := range childrenOf(p.cmd.Process.Pid) {
		switch name {
		case "kcmd-worker":
			simPid = pid
		case "kcmd-informerd":
			infPid = pid
		}
	}
	cpu0, icpu0 := hksCPUSeconds(simPid), hksCPUSeconds(infPid)
	last := hksWatchCount(t, cs, ns, rv, n, 10*time.Minute, func(_ watch.Event, p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodRunning && hksCond(p, corev1.PodReady)
	})
	runS := last.Sub(ready).Seconds()
	cpu1, icpu1 := hksCPUSeconds(simPid), hksCPUSeconds(infPid)
	fmt.Printf("bench: kubeletsim.pods_ready_per_s %.0f pods/s\n", float64(n)/runS)
	fmt.Printf("bench: kubeletsim.writes_per_s %.0f writes/s\n", float64(2*n)/runS)
	fmt.Printf("bench: kubeletsim.ready_vs_client_bind_and_patch %.2f ratio\n", (float64(n)/runS)*clientPodS)
	fmt.Printf("bench: kubeletsim.sim_cpu_us_per_pod %.0f us\n", (cpu1-cpu0)*1e6/float64(n))
	fmt.Printf("bench: kubeletsim.informerd_cpu_us_per_pod %.0f us\n", (icpu1-icpu0)*1e6/float64(n))

	// Graceful deletions (30 s grace) finished by the simulator: a pod is gone only once the
	// simulator's grace-0 DELETE went through.
	list, err = cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	// One DELETE per pod, 32 at once (a DeleteCollection of 10,000 pods outlives the
	// apiserver's 60 s request timeout here); the watch below runs meanwhile.
	deleted := make(chan struct{})
	go func() {
		defer close(deleted)
		hksParallel(t, n, func(i int) error {
			err := cs.CoreV1().Pods(ns).Delete(ctx, fmt.Sprintf("p-%d", i), metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(30))})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		})
	}()
	defer func() { <-deleted }()
	last = hksWatchCount(t, cs, ns, list.ResourceVersion, n, 10*time.Minute, func(ev watch.Event, _ *corev1.Pod) bool {
		return ev.Type == watch.Deleted
	})
	fmt.Printf("bench: kubeletsim.graceful_deletes_per_s %.0f pods/s\n", float64(n)/last.Sub(start).Seconds())
	t.Logf("%d pods: created in %.1f s; Ready in %.1f s after the simulator's nodes; deleted in %.1f s; "+
		"simulator CPU %.2f s, informerd CPU %.2f s", n, createS, runS, last.Sub(start).Seconds(), cpu1-cpu0, icpu1-icpu0)
}
