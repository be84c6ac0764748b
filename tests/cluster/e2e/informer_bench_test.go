package e2e

// The cold initial sync of many pods, kcmd-informerd against upstream kube-controller-manager's
// informers (replicaset controller enabled), in the same run on the same cluster. Opt-in: it
// loads KCMD_BENCH_PODS pods (default 100000) and takes minutes. `make bench-informer` runs it
// through informerd/bench/bench-informer-e2e.c, which forwards the `bench:` lines.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"kcmd.local/tests/cluster/harness"
)

// pssMB reads Pss (proportional set size) of pid from /proc/<pid>/smaps_rollup, in MB.
func pssMB(pid int) (float64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) >= 2 && fs[0] == "Pss:" {
			kb, err := strconv.ParseFloat(fs[1], 64)
			return kb / 1024, err
		}
	}
	return 0, fmt.Errorf("no Pss in smaps_rollup of %d", pid)
}

// loadPods creates n pods in ns with `workers` goroutines (the fast loader).
func loadPods(t *testing.T, ns string, n, workers int) {
	cfg := *env.Config
	cfg.QPS, cfg.Burst = 100000, 100000
	cs, err := kubernetes.NewForConfig(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				pod := &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("b-%d", i), Namespace: ns,
						Labels: map[string]string{"app": "bench", "shard": strconv.FormatInt(i%100, 10)}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
				}
				for try := 0; try < 5; try++ {
					_, err := cs.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{})
					if err == nil || apierrors.IsAlreadyExists(err) {
						break
					}
					if try == 4 {
						failed.Add(1)
					}
					time.Sleep(100 * time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	if failed.Load() > 0 {
		t.Fatalf("%d pod creates failed", failed.Load())
	}
}

// waitLogLine waits for a klog line containing substr and returns the time it carries.
func waitLogLine(path, substr string, timeout time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(path)
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, substr) {
				if ts, ok := klogTime(l); ok {
					return ts, nil
				}
				return time.Now(), nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Time{}, fmt.Errorf("%q not in %s after %s", substr, path, timeout)
}

func TestBench_InformerSync(t *testing.T) {
	if os.Getenv("KCMD_BENCH_INFORMER") == "" {
		t.Skip("set KCMD_BENCH_INFORMER=1 (make bench-informer does)")
	}
	n := 100000
	if v, err := strconv.Atoi(os.Getenv("KCMD_BENCH_PODS")); err == nil && v > 0 {
		n = v
	}
	label := "100k"
	if n != 100000 {
		label = strconv.Itoa(n)
	}
	ns := Namespace(t)
	start := time.Now()
	loadPods(t, ns, n, 64)
	t.Logf("loaded %d pods in %.1fs", n, time.Since(start).Seconds())

	// kcmd-informerd, cold: a private arena, QPS/burst as the manager passes by default.
	h := holdArena(t)
	t0 := time.Now()
	p := startInformerd(t, h.path, filepath.Join(t.TempDir(), "metrics"), "--kube-api-qps=20", "--kube-api-burst=30")
	waitSynced(t, p)
	kcmdSync := time.Since(t0).Seconds()
	kcmdPss, err := pssMB(p.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}

	// Upstream kube-controller-manager with the replicaset controller, same QPS defaults.
	logPath := filepath.Join(env.Cluster.Dir, "logs", "kube-controller-manager.log")
	_ = os.Remove(logPath)
	t1 := time.Now()
	if err := env.Cluster.StartKCM(context.Background(), harness.KCMOptions{Controllers: "replicaset-controller"}); err != nil {
		t.Fatal(err)
	}
	defer env.Cluster.StopKCM()
	at, err := waitLogLine(logPath, "Caches are synced", 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	kcmSync := at.Sub(t1).Seconds()
	kcmPss, err := pssMB(env.Cluster.Procs["kube-controller-manager"].Pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("bench: informer.sync_%s_pods_s %.3f s", label, kcmdSync)
	t.Logf("bench: informer.pss_%s_pods_mb %.1f MB", label, kcmdPss)
	t.Logf("bench: informer.kcm_sync_%s_pods_s %.3f s", label, kcmSync)
	t.Logf("bench: informer.kcm_pss_%s_pods_mb %.1f MB", label, kcmPss)
}
