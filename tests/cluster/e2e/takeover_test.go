package e2e

// The acquisition barrier (docs/architecture.md "Leadership"): a new leader must not act on a
// cache older than the Lease it won. Two kcmds share a Lease; the standby keeps a warm cache
// (--standby-warm-cache, the default). The standby's cache is frozen in a state where a
// ReplicaSet looks short of pods: its informerd sees the scale-up from 2 to 5 (the leader's
// workers are SIGSTOPped meanwhile), then is itself SIGSTOPped before the leader, resumed,
// creates the 3 pods. The leader is then killed -9 and the standby takes over with that stale
// cache. Without the barrier (KCMD_TEST_NO_BARRIER=1, the negative control) its ReplicaSet
// worker creates 3 more pods at once (over-creation, removed again once the cache catches up);
// with it, the workers wait until informerd has relisted at the Lease's resourceVersion, which
// it can only do once resumed, and no pod is created after the takeover. Every pod ever
// created in the namespace is counted from a watch, so a transient over-creation is seen too.

import (
	"context"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// tkoCreated counts the distinct pods created in ns from a watch started now.
type tkoCreated struct {
	mu    sync.Mutex
	names map[string]bool
}

func tkoWatchPods(t *testing.T, ns string) *tkoCreated {
	t.Helper()
	c := &tkoCreated{names: map[string]bool{}}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	l, err := env.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range l.Items {
		c.names[l.Items[i].Name] = true
	}
	w, err := env.Client.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for ev := range w.ResultChan() {
			if ev.Type != watch.Added {
				continue
			}
			if o, ok := ev.Object.(metav1.Object); ok {
				c.mu.Lock()
				c.names[o.GetName()] = true
				c.mu.Unlock()
			}
		}
	}()
	return c
}

func (c *tkoCreated) n() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.names)
}

func tkoSignalChildren(t *testing.T, parent int, prefix string, sig syscall.Signal) int {
	t.Helper()
	n := 0
	for pid, comm := range childrenOf(parent) {
		if len(comm) >= len(prefix) && comm[:len(prefix)] == prefix {
			if err := syscall.Kill(pid, sig); err == nil {
				n++
			}
		}
	}
	if n == 0 {
		t.Fatalf("no %s child of %d to signal", prefix, parent)
	}
	return n
}

// tkoRun returns the number of pods created in the namespace in all (5 when nothing was
// over-created) and the number created after the takeover while the standby's cache was stale.
func tkoRun(t *testing.T, barrier bool) (total, afterTakeover int) {
	ns := rsNamespace(t)
	lease := leaseName(t)
	var extra []string
	if !barrier {
		extra = []string{"KCMD_TEST_NO_BARRIER=1"}
	}
	flags := append([]string{"--controllers=replicaset-controller", "--secure-port=0",
		"--leader-elect-resource-name=" + lease}, fastElection...)
	a := startKcmd(t, extra, flags...)
	Eventually(t, 20*time.Second, "the first kcmd to lead", func() (bool, string) { return a.Logged("became leader"), "" })
	b := startKcmd(t, extra, flags...)
	Eventually(t, 30*time.Second, "the standby's warm cache", func() (bool, string) {
		return b.Logged("informers synced"), ""
	})
	if b.Logged("became leader") {
		t.Fatal("the standby leads")
	}
	created := tkoWatchPods(t, ns)
	mustCreateRS(t, itRS(ns, "takeover", 2))
	Eventually(t, rsTimeout, "2 pods", func() (bool, string) { return created.n() == 2, "" })
	time.Sleep(time.Second) // the standby's informerd sees them

	// the leader's workers pause: the scale-up reaches the standby's cache, its pods do not
	tkoSignalChildren(t, a.cmd.Process.Pid, "kcmd-worker", syscall.SIGSTOP)
	updateRS(t, ns, "takeover", func(rs *appsv1.ReplicaSet) { five := int32(5); rs.Spec.Replicas = &five })
	time.Sleep(2 * time.Second)
	if created.n() != 2 {
		t.Fatalf("%d pods while the leader's workers are stopped, want 2", created.n())
	}
	infB := tkoSignalChildren(t, b.cmd.Process.Pid, "kcmd-informe", syscall.SIGSTOP)
	defer tkoSignalChildren(t, b.cmd.Process.Pid, "kcmd-informe", syscall.SIGCONT)
	tkoSignalChildren(t, a.cmd.Process.Pid, "kcmd-worker", syscall.SIGCONT)
	Eventually(t, rsTimeout, "the leader's 5 pods", func() (bool, string) { return created.n() == 5, "" })
	t.Logf("standby informerd stopped (%d process), the leader created 3 pods the standby did not see", infB)

	// kill -9 the leader (its children die with it: PR_SET_PDEATHSIG)
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 20*time.Second, "the standby to take over", func() (bool, string) { return b.Logged("became leader"), "" })
	// the new leader's workers start at once; give them time to act on the stale cache
	time.Sleep(6 * time.Second)
	afterTakeover = created.n() - 5

	tkoSignalChildren(t, b.cmd.Process.Pid, "kcmd-informe", syscall.SIGCONT)
	Eventually(t, rsTimeout, "5 active pods", func() (bool, string) {
		n := 0
		for _, p := range listPods(t, ns, fooBar()) {
			if isActive(&p) {
				n++
			}
		}
		return n == 5, ""
	})
	if barrier {
		Eventually(t, 20*time.Second, "the barrier to complete", func() (bool, string) {
			return b.Logged("caches caught up with the Lease"), ""
		})
	}
	time.Sleep(2 * time.Second)
	return created.n(), afterTakeover
}

func TestHandover_TakeoverBarrier(t *testing.T) {
	total, after := tkoRun(t, true)
	if after != 0 || total != 5 {
		t.Fatalf("the new leader acted on a cache older than its Lease: %d pods created after the takeover, %d in all (want 0 and 5)", after, total)
	}
	t.Logf("takeover with a stale standby cache: no pod created by the new leader (%d pods in all)", total)
}

func TestHandover_TakeoverBarrierNegativeControl(t *testing.T) {
	total, after := tkoRun(t, false)
	if after == 0 {
		t.Fatalf("negative control: without the barrier the new leader should have over-created, got %d pods after the takeover (%d in all)", after, total)
	}
	t.Logf("negative control: without the barrier the new leader created %d pods from its stale cache (%d in all)", after, total)
}
