package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// clusterLists sums apiserver_request_total for cluster-scoped LISTs of pods and replicasets:
// what informers send (the tests' own reads are namespaced).
func clusterLists(t *testing.T) float64 {
	t.Helper()
	body, err := env.Client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if !strings.HasPrefix(l, "apiserver_request_total{") || !strings.Contains(l, `verb="LIST"`) ||
			!strings.Contains(l, `scope="cluster"`) ||
			!(strings.Contains(l, `resource="pods"`) || strings.Contains(l, `resource="replicasets"`)) {
			continue
		}
		f := strings.Fields(l)
		v, _ := strconv.ParseFloat(f[len(f)-1], 64)
		sum += v
	}
	return sum
}

// TestBench_ManagerFailover measures `bench: manager.failover_s` (leader killed with SIGKILL →
// first pod created by the standby for a ReplicaSet scaled at the moment of the kill) with the
// default leader-election timings, and `bench: manager.failover_lists` (cluster-wide LIST
// requests between the kill and that first reconcile: 0 means the standby's cache was warm).
// Runs only with KCMD_BENCH=1 (make bench-manager).
func TestBench_ManagerFailover(t *testing.T) {
	if os.Getenv("KCMD_BENCH") != "1" {
		t.Skip("benchmark: run with make bench-manager")
	}
	ctx := context.Background()
	lease := leaseName(t)
	flags := []string{"--controllers=replicaset-controller", "--secure-port=0", "--leader-elect-resource-name=" + lease,
		"--kube-api-qps=100", "--kube-api-burst=200"}
	a := startKcmd(t, nil, flags...)
	Eventually(t, 30*time.Second, "a leader", func() (bool, string) { return a.Logged("became leader"), "" })
	b := startKcmd(t, nil, flags...)
	Eventually(t, 30*time.Second, "the standby's informers synced", func() (bool, string) {
		return b.Logged("informers synced"), ""
	})
	ns := Namespace(t)
	if _, err := env.Client.AppsV1().ReplicaSets(ns).Create(ctx, demoReplicaSet(ns, "fo", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rs := waitReplicas(t, ns, "fo", 1)
	time.Sleep(3 * time.Second) // let a few renewals pass, as in steady state

	lists := clusterLists(t)
	_ = a.cmd.Process.Signal(syscall.SIGKILL)
	killed := time.Now()
	two := int32(2)
	rs.Spec.Replicas = &two
	if _, err := env.Client.AppsV1().ReplicaSets(ns).Update(ctx, rs, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var took time.Duration
	Eventually(t, 60*time.Second, "the standby's first reconcile", func() (bool, string) {
		owned, _ := activePods(t, ns, "app=fo", rs.UID)
		if owned == 2 {
			took = time.Since(killed)
			return true, ""
		}
		return false, fmt.Sprintf("owned=%d", owned)
	})
	extra := clusterLists(t) - lists
	fmt.Printf("bench: manager.failover_s %.2f s\n", took.Seconds())
	fmt.Printf("bench: manager.failover_lists %.0f requests\n", extra)
	if !b.Logged("became leader") {
		t.Errorf("the standby never logged leadership")
	}
}
