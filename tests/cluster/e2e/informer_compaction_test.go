package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"kcmd.local/tests/cluster/harness"
)

// withPrivateCluster runs fn with env pointing at a cluster of its own, started with extra
// options; top-level tests run one at a time (parallel ones only after all serial ones), so
// swapping the shared env here is safe.
func withPrivateCluster(t *testing.T, opts harness.Options, fn func()) {
	t.Helper()
	opts.BinDir = os.Getenv("KCMD_CLUSTER_BIN")
	c, err := harness.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 500, 1000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	saved := env
	env = &Env{Cluster: c, Config: cfg, Client: cs, KcmdBinDir: saved.KcmdBinDir}
	defer func() { env = saved }()
	fn()
}

// TestInformer_RelistAfterCompaction: informerd is killed, the cluster moves on and etcd is
// compacted past informerd's last version (compaction every second, no watch cache, so the
// apiserver cannot answer from a cache window); the restarted informerd's warm WATCH gets a real
// 410 Expired, it relists, and the arena again equals a fresh client-go list — deletes made
// while it was down included.
func TestInformer_RelistAfterCompaction(t *testing.T) {
	withPrivateCluster(t, harness.Options{CompactionInterval: time.Second,
		ExtraAPIServerFlags: []string{"--watch-cache=false"}}, func() {
		ns := Namespace(t)
		h := holdArena(t)
		metrics := filepath.Join(t.TempDir(), "metrics")
		p := startInformerd(t, h.path, metrics)
		waitSynced(t, p)
		churn(t, ns, "a", 60, 1, 4, nil)
		oracle(t, h.path, ns, 60*time.Second)
		expired := metric(t, metrics, "pods", "expired")
		relists := metric(t, metrics, "pods", "relists")

		p.kill9()
		ctx := context.Background()
		pods, err := env.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		zero := int64(0)
		for i, pod := range pods.Items {
			if i%2 == 0 {
				_ = env.Client.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
			}
		}
		churn(t, ns, "b", 30, 1, 4, nil)
		time.Sleep(3 * time.Second) // at least two compactions past informerd's version

		p2 := startInformerd(t, h.path, metrics)
		waitSynced(t, p2)
		n := oracle(t, h.path, ns, 60*time.Second)
		if e := metric(t, metrics, "pods", "expired"); e <= expired {
			t.Fatalf("no 410 seen for pods after compaction (expired %d -> %d)", expired, e)
		}
		if r := metric(t, metrics, "pods", "relists"); r <= relists {
			t.Fatalf("pods were not relisted (relists %d -> %d)", relists, r)
		}
		t.Logf("compaction -> 410 -> relist; oracle holds for %d objects", n)
	})
}
