package e2e

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kcmdProc is one kcmd manager started by a test, with its log lines collected.
type kcmdProc struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	logs []string
	done chan struct{}
	err  error
}

// shared processes live for the whole test binary; TestMain stops them before the cluster.
var (
	sharedMu    sync.Mutex
	sharedProcs []*kcmdProc
)

func stopShared() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	for _, p := range sharedProcs {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
	sharedProcs = nil
}

// startKcmdShared starts a kcmd that outlives the calling test (stopped by TestMain). Its log
// is written to the test's log on failure of the caller only.
func startKcmdShared(t *testing.T, flags ...string) *kcmdProc {
	t.Helper()
	p := launchKcmd(t, nil, flags...)
	sharedMu.Lock()
	sharedProcs = append(sharedProcs, p)
	sharedMu.Unlock()
	t.Cleanup(func() {
		if t.Failed() {
			for _, l := range p.Logs() {
				t.Logf("kcmd[%d]: %s", p.cmd.Process.Pid, l)
			}
		}
	})
	return p
}

// startKcmd runs build/bin/kcmd against the test cluster with the given extra flags; it is
// killed when the test ends.
func startKcmd(t *testing.T, extraEnv []string, flags ...string) *kcmdProc {
	t.Helper()
	p := launchKcmd(t, extraEnv, flags...)
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			for _, l := range p.Logs() {
				t.Logf("kcmd[%d]: %s", p.cmd.Process.Pid, l)
			}
		}
	})
	return p
}

func launchKcmd(t *testing.T, extraEnv []string, flags ...string) *kcmdProc {
	t.Helper()
	if env.KcmdBinDir == "" {
		t.Fatal("KCMD_BIN_DIR is not set (run through make e2e)")
	}
	bin := filepath.Join(env.KcmdBinDir, "kcmd")
	args := append([]string{"--kubeconfig=" + env.Cluster.Kubeconfig}, flags...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), extraEnv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &kcmdProc{cmd: cmd, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.logs = append(p.logs, sc.Text())
			p.mu.Unlock()
		}
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p
}

func (p *kcmdProc) Logs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.logs...)
}

func (p *kcmdProc) Logged(substr string) bool {
	for _, l := range p.Logs() {
		if strings.Contains(l, substr) {
			return true
		}
	}
	return false
}

// Fast timings keep the tests short; the rules (lease > renew > 1.2 x retry) still hold.
var fastElection = []string{"--leader-elect-lease-duration=4s", "--leader-elect-renew-deadline=3s", "--leader-elect-retry-period=1s"}

func leaseName(t *testing.T) string {
	return fmt.Sprintf("kcmd-%d", time.Now().UnixNano()%1000000)
}

func electionOnly(lease string) []string {
	return append([]string{"--controllers=-replicaset-controller,-garbage-collector-controller,-pod-garbage-collector-controller,-job-controller", "--secure-port=0",
		"--leader-elect-resource-name=" + lease}, fastElection...)
}

func holder(t *testing.T, lease string) string {
	l, err := env.Client.CoordinationV1().Leases("kube-system").Get(context.Background(), lease, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// TestManager_FailoverAfterKill: two managers on one Lease; one leads; kill -9 of the leader
// hands the Lease to the other within leaseDuration + retry jitter, with leaseTransitions + 1.
func TestManager_FailoverAfterKill(t *testing.T) {
	lease := leaseName(t)
	a := startKcmd(t, nil, electionOnly(lease)...)
	Eventually(t, 20*time.Second, "the first manager to lead", func() (bool, string) {
		return a.Logged("became leader"), "not yet"
	})
	b := startKcmd(t, nil, electionOnly(lease)...)
	time.Sleep(3 * time.Second)
	if b.Logged("became leader") {
		t.Fatal("second manager became leader while the first held the lease")
	}
	first := holder(t, lease)
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	Eventually(t, 15*time.Second, "the standby to take over", func() (bool, string) {
		return b.Logged("became leader"), "holder " + holder(t, lease)
	})
	took := time.Since(killed)
	t.Logf("failover after kill -9: %.2fs", took.Seconds())
	// lease 4 s after the standby's last observation, plus up to retry x 2.2 of jitter
	if took > 4*time.Second+2200*time.Millisecond+2*time.Second { // + request latency slack
		t.Errorf("failover took %s, more than lease duration + retry jitter", took)
	}
	l, err := env.Client.CoordinationV1().Leases("kube-system").Get(context.Background(), lease, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *l.Spec.HolderIdentity == first || *l.Spec.LeaseTransitions != 1 {
		t.Errorf("after failover: holder %q (was %q), transitions %d, want a new holder and 1", *l.Spec.HolderIdentity, first, *l.Spec.LeaseTransitions)
	}
}

// TestManager_SIGTERMReleasesLease: SIGTERM makes kcmd release the Lease (empty holder,
// leaseDurationSeconds 1) and exit 0 promptly.
func TestManager_SIGTERMReleasesLease(t *testing.T) {
	lease := leaseName(t)
	a := startKcmd(t, nil, electionOnly(lease)...)
	Eventually(t, 20*time.Second, "leadership", func() (bool, string) { return a.Logged("became leader"), "" })
	start := time.Now()
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-a.done:
	case <-time.After(10 * time.Second):
		t.Fatal("kcmd did not exit within 10s of SIGTERM")
	}
	if a.err != nil {
		t.Fatalf("kcmd exit: %v (want status 0)", a.err)
	}
	t.Logf("exit after SIGTERM: %.2fs", time.Since(start).Seconds())
	l, err := env.Client.CoordinationV1().Leases("kube-system").Get(context.Background(), lease, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h := l.Spec.HolderIdentity; h != nil && *h != "" {
		t.Errorf("holder after release = %q, want empty", *h)
	}
	if l.Spec.LeaseDurationSeconds == nil || *l.Spec.LeaseDurationSeconds != 1 {
		t.Errorf("leaseDurationSeconds after release = %v, want 1", l.Spec.LeaseDurationSeconds)
	}
}

// TestManager_SIGTERMUnderLoad: SIGTERM while the ReplicaSet workers have a deep queue (400
// one-replica ReplicaSets, one create per sync, at a low client QPS): every worker finishes the
// key in hand and takes no other (at most one pod per worker is created after the signal), the
// Lease is released and kcmd exits 0 inside its stop grace (5 s + renew deadline; past it the
// workers are SIGKILLed and the release abandoned).
func TestManager_SIGTERMUnderLoad(t *testing.T) {
	// the shared ReplicaSet kcmd (started by an earlier test of the binary, e.g.
	// TestManager_KcmctlReadsTheLiveCache) would reconcile these ReplicaSets too and keep
	// creating pods after this kcmd exits
	stopSharedRS(t)
	ns := Namespace(t)
	lease := leaseName(t)
	const workers, sets = 5, 400
	flags := append([]string{"--controllers=replicaset-controller", "--secure-port=0",
		"--leader-elect-resource-name=" + lease, fmt.Sprintf("--concurrent-replicaset-syncs=%d", workers),
		"--kube-api-qps=25", "--kube-api-burst=5"}, fastElection...)
	a := startKcmd(t, nil, flags...)
	Eventually(t, 20*time.Second, "leadership", func() (bool, string) { return a.Logged("became leader"), "" })
	for i := 0; i < sets; i++ {
		rs := itRS(ns, fmt.Sprintf("load-%d", i), 1)
		rs.Spec.Selector.MatchLabels = map[string]string{"rs": rs.Name}
		rs.Spec.Template.Labels = map[string]string{"rs": rs.Name}
		mustCreateRS(t, rs)
	}
	countPods := func() int {
		l, err := env.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return len(l.Items)
	}
	Eventually(t, 60*time.Second, "the scale-up under way", func() (bool, string) {
		n := countPods()
		return n >= 40, fmt.Sprintf("%d pods", n)
	})
	// `before` is a LIST: creates keep landing while it is served and until the signal is
	// sent, at most --kube-api-qps a second (the client's limiter), so the allowance below
	// counts that window too instead of assuming the LIST and the signal are one instant
	listStart := time.Now()
	before := countPods()
	start := time.Now()
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	window := time.Since(listStart)
	slack := int(math.Ceil(window.Seconds() * 25))
	select {
	case <-a.done:
	case <-time.After(20 * time.Second):
		t.Fatal("kcmd did not exit within 20s of SIGTERM")
	}
	took := time.Since(start)
	atExit := countPods()
	t.Logf("exit after SIGTERM under load: %.2fs; pods: %d before the signal (LIST-to-signal window %s, up to %d creates), %d at exit, of %d",
		took.Seconds(), before, window.Round(time.Millisecond), slack, atExit, sets)
	if a.err != nil {
		t.Errorf("kcmd exit: %v (want status 0)", a.err)
	}
	if atExit >= sets {
		t.Fatalf("the scale-up finished before the stop (%d pods): no load to stop under", atExit)
	}
	if atExit-before > workers+slack {
		t.Errorf("%d pods created after the LIST before SIGTERM, more than one key in hand per worker (%d) plus the %d the client's QPS allows in the %s before the signal: the workers kept taking keys",
			atExit-before, workers, slack, window.Round(time.Millisecond))
	}
	if took > 8*time.Second {
		t.Errorf("stop took %s under load: past the stop grace", took)
	}
	if !a.Logged("released the lease") {
		t.Errorf("the Lease was not released")
	}
	l, err := env.Client.CoordinationV1().Leases("kube-system").Get(context.Background(), lease, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h := l.Spec.HolderIdentity; h != nil && *h != "" {
		t.Errorf("holder after SIGTERM under load = %q, want empty", *h)
	}
	time.Sleep(2 * time.Second)
	if n := countPods(); n != atExit {
		t.Errorf("%d pods created after kcmd exited", n-atExit)
	}
}
