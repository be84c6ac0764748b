package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func hmgKcmctlPid(t *testing.T, pid int, args ...string) string {
	t.Helper()
	all := append([]string{"--pid", strconv.Itoa(pid)}, args...)
	out, err := exec.Command(filepath.Join(env.KcmdBinDir, "kcmctl"), all...).CombinedOutput()
	if err != nil {
		t.Fatalf("kcmctl %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// hmgProcessRow returns the pid and restarts kcmctl status shows for one process.
func hmgProcessRow(out, name string) (pid int, restarts int, state string, ok bool) {
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `\s+(\S+)\s+(\S+)\s+(\S+)\s+(\d+)\s`)
	m := re.FindStringSubmatch(out)
	if m == nil {
		return 0, 0, "", false
	}
	pid, _ = strconv.Atoi(m[3])
	restarts, _ = strconv.Atoi(m[4])
	return pid, restarts, m[2], true
}

// TestKcmctl_Status: kcmctl status shows the leader (identity and Lease with leader election,
// "off" without), every child with its pid, restarts and uptime, the queues' depths and the
// cache's counts; a worker killed with -9 shows up again with a new pid and one restart.
func TestKcmctl_Status(t *testing.T) {
	// leader election on, no controller: the manager alone
	lease := leaseName(t)
	e := startKcmd(t, nil, electionOnly(lease)...)
	Eventually(t, 20*time.Second, "leadership", func() (bool, string) { return e.Logged("became leader"), "" })
	var out string
	Eventually(t, 10*time.Second, "kcmctl status to name this manager as the leader", func() (bool, string) {
		out = hmgKcmctlPid(t, e.cmd.Process.Pid, "status")
		h := holder(t, lease)
		return h != "" && strings.Contains(out, "leader:    "+h+" (Lease kube-system/"+lease+") — this manager") &&
			strings.Contains(out, "identity:  "+h), out
	})
	if !strings.Contains(out, "manager:   pid "+strconv.Itoa(e.cmd.Process.Pid)+",") || !strings.Contains(out, "leading") {
		t.Errorf("status lacks the manager's pid or state:\n%s", out)
	}

	// the shared ReplicaSet kcmd (leader election off): processes, queues, cache
	startKcmdReplicaSet(t)
	ns := Namespace(t)
	if _, err := env.Client.AppsV1().ReplicaSets(ns).Create(context.Background(), demoReplicaSet(ns, "st", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitReplicas(t, ns, "st", 2)
	pid := kcmdRS.cmd.Process.Pid
	Eventually(t, 20*time.Second, "kcmctl status to show the processes, queue and cache", func() (bool, string) {
		out = hmgKcmctlPid(t, pid, "status")
		_, _, st, ok := hmgProcessRow(out, "worker-replicaset-controller-0")
		_, _, ist, iok := hmgProcessRow(out, "informerd")
		return ok && st == "running" && iok && ist == "running" &&
			strings.Contains(out, "leader election off") && regexp.MustCompile(`(?m)^\s+replicaset\s+depth \d+`).MatchString(out) &&
			regexp.MustCompile(`(?m)^\s+pods\s+[1-9]\d*\s+synced$`).MatchString(out) &&
			regexp.MustCompile(`(?m)^\s+replicasets\.apps\s+[1-9]\d*\s+synced$`).MatchString(out), out
	})
	wpid, restarts, _, _ := hmgProcessRow(out, "worker-replicaset-controller-0")
	if wpid <= 0 {
		t.Fatalf("no pid for worker-replicaset-controller-0:\n%s", out)
	}
	if err := syscall.Kill(wpid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 30*time.Second, "the killed worker to be back with a new pid and one more restart", func() (bool, string) {
		out = hmgKcmctlPid(t, pid, "status")
		np, nr, st, ok := hmgProcessRow(out, "worker-replicaset-controller-0")
		return ok && st == "running" && np > 0 && np != wpid && nr == restarts+1 && strings.Contains(out, "signal 9"), out
	})
	t.Logf("kcmctl status:\n%s", out)
}
