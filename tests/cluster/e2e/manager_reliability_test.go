package e2e

// Issue 21, the manager's side of two reliability items:
//
//   - "stopped leading" (the LeaderElection Event on the Lease and kcmd's log line) goes out only
//     after every worker process of the ended term was reaped, so an operator reading Events
//     never sees it while the old term's workers may still write
//     (TestManager_StoppedLeadingAfterWorkersExit);
//   - leadership gained but a child cannot be started: the manager retries with backoff (no busy
//     loop) and /healthz is red meanwhile, green again once the child runs
//     (TestManager_HealthRedWhileChildCannotStart).

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kcmdWorkerPids lists the kcmd-worker children of the manager pid.
func kcmdWorkerPids(pid int) []int {
	var out []int
	for c, comm := range childrenOf(pid) {
		if strings.HasPrefix(comm, "kcmd-worker") {
			out = append(out, c)
		}
	}
	return out
}

var workerKilledLine = regexp.MustCompile(`(worker-\S+) \(workers\) killed by signal 9`)

func TestManager_StoppedLeadingAfterWorkersExit(t *testing.T) {
	ctx := context.Background()
	lease := leaseName(t)
	// three controllers whose syncs are idempotent beside any other kcmd: one worker each
	flags := append([]string{"--controllers=ttl-controller,serviceaccount-controller,clusterrole-aggregation-controller",
		"--secure-port=0", "--leader-elect-resource-name=" + lease, "--v=2"}, fastElection...)
	a := startKcmd(t, nil, flags...)
	Eventually(t, 30*time.Second, "kcmd to lead", func() (bool, string) { return a.Logged("became leader"), "" })
	var pids []int
	Eventually(t, 30*time.Second, "worker processes to run", func() (bool, string) {
		pids = kcmdWorkerPids(a.cmd.Process.Pid)
		return len(pids) >= 3, fmt.Sprintf("%d running", len(pids))
	})
	id := ""
	for _, l := range a.Logs() {
		if i := strings.Index(l, "identity "); i >= 0 && strings.Contains(l, "starting") {
			id = strings.TrimSuffix(strings.Fields(l[i+len("identity "):])[0], ",")
		}
	}
	if id == "" {
		t.Fatal("kcmd's identity not found in its log")
	}

	// Another holder takes the Lease over (as a standby would): kcmd's renewals conflict, it
	// sees a valid foreign holder and its leadership ends at its renew deadline.
	intruder := "intruder-" + lease
	l, err := env.Client.CoordinationV1().Leases("kube-system").Get(ctx, lease, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.NowMicro()
	dur := int32(120)
	l.Spec = coordinationv1.LeaseSpec{HolderIdentity: &intruder, LeaseDurationSeconds: &dur,
		AcquireTime: &now, RenewTime: &now, LeaseTransitions: l.Spec.LeaseTransitions}
	if _, err := env.Client.CoordinationV1().Leases("kube-system").Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 20*time.Second, "kcmd to stop leading", func() (bool, string) {
		return a.Logged("stopped leading: every worker process"), ""
	})
	// give a late exit line (if the order were wrong) time to be logged
	time.Sleep(2 * time.Second)

	// The log, in kcmd's own order: the kill, each killed worker's reaping, then "stopped leading".
	logs := a.Logs()
	iKill, iStop := -1, -1
	killed := -1
	for i, line := range logs {
		if iKill < 0 && strings.Contains(line, "leadership ended: fence closed, SIGKILL sent to ") {
			iKill = i
			f := strings.Fields(line[strings.Index(line, "SIGKILL sent to ")+len("SIGKILL sent to "):])
			killed, _ = strconv.Atoi(f[0])
		}
		// the kill's line and the --v=2 line in between must not say "stopped leading"
		// (kcmdIntervals takes the first such line as the term's end)
		if strings.Contains(line, "stopped leading") && !strings.Contains(line, "stopped leading: every worker process") {
			t.Errorf("a line other than the term's end says \"stopped leading\": %s", line)
		}
		if iStop < 0 && strings.Contains(line, "stopped leading: every worker process") {
			iStop = i
		}
	}
	if iKill < 0 || iStop < 0 {
		t.Fatalf("log lines missing: kill at %d, stopped leading at %d", iKill, iStop)
	}
	if iStop < iKill {
		t.Fatalf("\"stopped leading\" logged (line %d) before the workers were killed (line %d)", iStop, iKill)
	}
	if killed < len(pids) {
		t.Fatalf("%d workers killed, %d were running", killed, len(pids))
	}
	var lastExit time.Time
	before := map[string]bool{}
	for i := iKill + 1; i < iStop; i++ {
		if m := workerKilledLine.FindStringSubmatch(logs[i]); m != nil {
			before[m[1]] = true
			if ts, ok := klogTime(logs[i]); ok {
				lastExit = ts
			}
		}
	}
	for i := iStop + 1; i < len(logs); i++ {
		if m := workerKilledLine.FindStringSubmatch(logs[i]); m != nil {
			t.Errorf("worker %s reaped after \"stopped leading\": %s", m[1], logs[i])
		}
	}
	if len(before) != killed {
		t.Fatalf("%d killed workers reaped before \"stopped leading\", %d were killed", len(before), killed)
	}
	stopTS, ok := klogTime(logs[iStop])
	if !ok || stopTS.Before(lastExit) {
		t.Fatalf("\"stopped leading\" at %v, the last worker reaped at %v", stopTS, lastExit)
	}
	for _, p := range pids {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", p)); err == nil {
			t.Errorf("worker pid %d of the ended term still exists", p)
		}
	}

	// The Event on the Lease, as the apiserver has it: recorded, and not stamped before the last
	// worker's exit (lastTimestamp has second precision: compare at that precision).
	var ev string
	Eventually(t, 15*time.Second, "the \"stopped leading\" Event", func() (bool, string) {
		evs, err := env.Client.CoreV1().Events("kube-system").List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.name=" + lease + ",reason=LeaderElection"})
		if err != nil {
			return false, err.Error()
		}
		for _, e := range evs.Items {
			if e.Message != id+" stopped leading" {
				continue
			}
			if e.LastTimestamp.Time.Before(lastExit.Truncate(time.Second)) ||
				e.CreationTimestamp.Time.Before(lastExit.Truncate(time.Second)) {
				t.Fatalf("Event %q stamped %v (created %v) before the last worker exit %v",
					e.Message, e.LastTimestamp.Time, e.CreationTimestamp.Time, lastExit)
			}
			ev = fmt.Sprintf("%s at %v", e.Message, e.LastTimestamp.Time)
			return true, ""
		}
		return false, fmt.Sprintf("%d LeaderElection events", len(evs.Items))
	})
	t.Logf("%d workers killed and reaped (last at %v) before \"stopped leading\" (%v); Event: %s",
		killed, lastExit.Format("15:04:05.000000"), stopTS.Format("15:04:05.000000"), ev)
}

var startFailures = regexp.MustCompile(`could not be started \(([^,]*), (\d+) times?\)`)

func TestManager_HealthRedWhileChildCannotStart(t *testing.T) {
	// A libexec directory whose kcmd-worker is not a program (execve: ENOEXEC); informerd and the
	// dispatcher are the real ones. --libexec-dir is kcmd's flag for where its programs are.
	dir := t.TempDir()
	for _, p := range []string{"kcmd-informerd", "kcmd-dispatcher"} {
		if err := os.Symlink(filepath.Join(env.KcmdBinDir, p), filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	worker := filepath.Join(dir, "kcmd-worker")
	if err := os.WriteFile(worker, []byte("this is not a program\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	port := hmgFreePort(t)
	a := startKcmd(t, nil, "--controllers=ttl-controller", "--leader-elect=false",
		"--libexec-dir="+dir, "--secure-port="+strconv.Itoa(port), "--bind-address=127.0.0.1")

	health := func() (int, string) {
		code, body, err := authGet(port, "/healthz?verbose", "")
		if err != nil {
			return 0, err.Error()
		}
		return code, body
	}
	var body string
	Eventually(t, 30*time.Second, "/healthz red while the worker cannot start", func() (bool, string) {
		var code int
		code, body = health()
		return code == 500 && strings.Contains(body, "[-]processes failed: worker-ttl-controller-0 could not be started"), body
	})
	t0 := time.Now()
	if !a.Logged("starting workers failed: Exec format error") {
		t.Error("kcmd did not log the failed start with its cause")
	}
	// Backoff, not a busy loop: retries at 0.5, 1, 2, 4 s... so in 6 s at most ~5 attempts.
	time.Sleep(6 * time.Second)
	code, body := health()
	m := startFailures.FindStringSubmatch(body)
	if code != 500 || m == nil {
		t.Fatalf("after 6 s: want 500 with the start failures, got %d %s", code, body)
	}
	n, _ := strconv.Atoi(m[2])
	if n < 2 || n > 6 {
		t.Fatalf("%d failed starts in %.1f s: want a retry with backoff (2..6)", n, time.Since(t0).Seconds())
	}
	if len(kcmdWorkerPids(a.cmd.Process.Pid)) != 0 {
		t.Fatal("a worker runs although its program cannot be executed")
	}
	if a.Logged("worker-ttl-controller-0 (workers) exited with status 127") {
		t.Error("the exec failure was seen as an exit, not as a failed start")
	}
	// Fixed (the real program put in place atomically): the next retry runs it, /healthz is green.
	tmp := worker + ".new"
	if err := os.Symlink(filepath.Join(env.KcmdBinDir, "kcmd-worker"), tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, worker); err != nil {
		t.Fatal(err)
	}
	fixed := time.Now()
	Eventually(t, 40*time.Second, "/healthz green once the worker runs", func() (bool, string) {
		code, body := health()
		return code == 200 && strings.Contains(body, "[+]processes ok"), fmt.Sprintf("%d %s", code, body)
	})
	if len(kcmdWorkerPids(a.cmd.Process.Pid)) == 0 {
		t.Fatal("/healthz green but no worker runs")
	}
	t.Logf("red with %d failed starts (%s) after 6 s; green %.1f s after the program was fixed",
		n, m[1], time.Since(fixed).Seconds())
}
