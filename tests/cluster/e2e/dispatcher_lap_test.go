package e2e

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDispatcher_LappedFeedResyncs: a dispatcher that falls behind the change feed by more than
// its ring (shm/feed.h: -ESTALE) starts its handlers again from the arena, in place. The feed's
// ring is shrunk to 64 KiB (KCMD_TEST_FEED_RING), the ReplicaSet dispatcher is stopped
// (SIGSTOP), a ReplicaSet is created and then 400 bare pods (about 150 KiB of feed entries), so
// the ReplicaSet's ADD is overwritten before the dispatcher reads it. After SIGCONT the
// dispatcher must log the lap, stay the same process (no crash and restart, which would also
// resync), and the ReplicaSet must get its pods: only the resync from the arena can have
// queued it.
func TestDispatcher_LappedFeedResyncs(t *testing.T) {
	lease := leaseName(t)
	p := startKcmd(t, []string{"KCMD_TEST_FEED_RING=65536"}, "--controllers=replicaset-controller",
		"--secure-port=0", "--leader-elect-resource-name="+lease, "--kube-api-qps=200", "--kube-api-burst=400")
	ctx := context.Background()
	ns := Namespace(t)
	// warm: the controller works through the feed
	if _, err := env.Client.AppsV1().ReplicaSets(ns).Create(ctx, demoReplicaSet(ns, "lap-warm", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitReplicas(t, ns, "lap-warm", 2)
	dsp := 0
	for pid, comm := range childrenOf(p.cmd.Process.Pid) {
		if strings.HasPrefix(comm, "kcmd-dispatch") {
			dsp = pid
		}
	}
	if dsp == 0 {
		t.Fatal("no kcmd-dispatcher child found")
	}
	if err := syscall.Kill(dsp, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := true
	defer func() {
		if stopped {
			syscall.Kill(dsp, syscall.SIGCONT)
		}
	}()
	if _, err := env.Client.AppsV1().ReplicaSets(ns).Create(ctx, demoReplicaSet(ns, "lap-missed", 3), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 400; i++ {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("filler-%03d", i), Labels: map[string]string{"filler": "yes"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/pause:1"}}},
		}
		if _, err := env.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(2 * time.Second) // informerd has published them all
	if err := syscall.Kill(dsp, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	stopped = false
	Eventually(t, 30*time.Second, "the dispatcher to report the lap", func() (bool, string) {
		return p.Logged("fell behind the change feed"), "no lap logged"
	})
	waitReplicas(t, ns, "lap-missed", 3)
	if _, ok := childrenOf(p.cmd.Process.Pid)[dsp]; !ok {
		t.Fatalf("dispatcher %d is gone: it was restarted instead of resyncing in place", dsp)
	}
	if p.Logged("killed by signal") || p.Logged("exited with status") {
		t.Fatal("a child of kcmd died during the lap")
	}
	// and it keeps following the feed afterwards
	if _, err := env.Client.AppsV1().ReplicaSets(ns).Create(ctx, demoReplicaSet(ns, "lap-after", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitReplicas(t, ns, "lap-after", 2)
}
