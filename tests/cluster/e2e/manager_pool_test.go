package e2e

// Worker pools (docs/manager.md "Worker pools"): a controller's first worker process always
// runs; the others (--concurrent-*-syncs in all) start while keys wait in its queue and stop
// after --worker-idle-timeout with none. kcm's concurrency under load, one process a controller
// when idle.

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func countWorkers(mgr int) int {
	n := 0
	for _, comm := range childrenOf(mgr) {
		if strings.HasPrefix(comm, "kcmd-worker") {
			n++
		}
	}
	return n
}

func TestManager_WorkersStartOnDemand(t *testing.T) {
	stopSharedRS(t)
	// a low client limit keeps keys waiting while 40 ReplicaSets fill
	p := startKcmd(t, nil, "--controllers=replicaset-controller", "--secure-port=0", "--leader-elect=false",
		"--concurrent-replicaset-syncs=5", "--kube-api-qps=40", "--kube-api-burst=40", "--v=2",
		"--worker-idle-timeout=3s")
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	mgr := p.cmd.Process.Pid
	Eventually(t, 30*time.Second, "the first worker", func() (bool, string) {
		n := countWorkers(mgr)
		return n == 1 && p.Logged("informers synced"), fmt.Sprintf("%d workers", n)
	})
	time.Sleep(time.Second)
	if n := countWorkers(mgr); n != 1 {
		t.Fatalf("%d worker processes while idle, want 1", n)
	}
	ns := rsNamespace(t)
	const nRS = 40
	for i := 0; i < nRS; i++ {
		mustCreateRS(t, demoReplicaSet(ns, fmt.Sprintf("od-%d", i), 5))
	}
	maxSeen := 1
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		if n := countWorkers(mgr); n > maxSeen {
			maxSeen = n
		}
		done := 0
		for i := 0; i < nRS; i++ {
			if rs := getRS(t, ns, fmt.Sprintf("od-%d", i)); rs.Status.Replicas == 5 {
				done++
			}
		}
		if done == nRS {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for i := 0; i < nRS; i++ {
		waitReplicas(t, ns, fmt.Sprintf("od-%d", i), 5)
	}
	if maxSeen < 2 || maxSeen > 5 {
		t.Errorf("at most %d worker processes during the fill, want 2..5 (--concurrent-replicaset-syncs=5)", maxSeen)
	}
	if !p.Logged("keys waiting: started") {
		t.Error("the manager did not log a pool start")
	}
	Eventually(t, 20*time.Second, "the pool back to one worker after 3 s idle", func() (bool, string) {
		n := countWorkers(mgr)
		return n == 1, fmt.Sprintf("%d workers", n)
	})
	t.Logf("at most %d worker processes during the fill", maxSeen)
	if p.Logged("killed by signal") {
		t.Error("a worker was killed rather than stopped")
	}
}

// With --worker-idle-timeout=0 every worker starts with the controller and stays (kcm's shape).
func TestManager_WorkerPoolOff(t *testing.T) {
	stopSharedRS(t)
	p := startKcmd(t, nil, "--controllers=replicaset-controller", "--secure-port=0", "--leader-elect=false",
		"--concurrent-replicaset-syncs=4", "--worker-idle-timeout=0")
	mgr := p.cmd.Process.Pid
	Eventually(t, 30*time.Second, "4 workers", func() (bool, string) {
		n := countWorkers(mgr)
		return n == 4, fmt.Sprintf("%d workers", n)
	})
}

// Issue 21, "--concurrent-replicaset-syncs above 32": the work queue used to have 32 worker
// slots whatever the flag said, so workers past the 32nd could not attach and crash-looped.
// The manager now sizes each queue for the controller's worker count. 40 workers, pool off:
// all 40 start, attach and stay (no worker exits), and 45 ReplicaSets created at once all sync.
func TestManager_ManyReplicaSetWorkers(t *testing.T) {
	stopSharedRS(t)
	const workers = 40
	p := startKcmd(t, nil, "--controllers=replicaset-controller", "--secure-port=0", "--leader-elect=false",
		fmt.Sprintf("--concurrent-replicaset-syncs=%d", workers), "--worker-idle-timeout=0",
		"--kube-api-qps=200", "--kube-api-burst=400")
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	mgr := p.cmd.Process.Pid
	Eventually(t, 60*time.Second, fmt.Sprintf("%d workers and synced informers", workers), func() (bool, string) {
		n := countWorkers(mgr)
		return n == workers && p.Logged("informers synced"), fmt.Sprintf("%d workers", n)
	})
	ns := rsNamespace(t)
	const nRS = 45
	for i := 0; i < nRS; i++ {
		mustCreateRS(t, demoReplicaSet(ns, fmt.Sprintf("many-%d", i), 1))
	}
	minSeen := workers
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		if n := countWorkers(mgr); n < minSeen {
			minSeen = n
		}
		done := 0
		for i := 0; i < nRS; i++ {
			if rs := getRS(t, ns, fmt.Sprintf("many-%d", i)); rs.Status.Replicas == 1 {
				done++
			}
		}
		if done == nRS {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	for i := 0; i < nRS; i++ {
		waitReplicas(t, ns, fmt.Sprintf("many-%d", i), 1)
	}
	// a worker that cannot attach exits at once and is restarted with a backoff: watch a while
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if n := countWorkers(mgr); n < minSeen {
			minSeen = n
		}
	}
	if minSeen != workers {
		t.Errorf("as few as %d worker processes after the start, want %d throughout", minSeen, workers)
	}
	for _, l := range p.Logs() {
		if strings.Contains(l, "exited with status") || strings.Contains(l, "killed by signal") {
			t.Errorf("a child exited: %s", l)
		}
	}
}
