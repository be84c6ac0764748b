package e2e

import (
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

// childrenOf lists the direct children of pid with their command names.
func childrenOf(pid int) map[int]string {
	out := map[int]string{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		cpid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || i+2 >= len(s) {
			continue
		}
		f := strings.Fields(s[i+2:])
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == pid {
			out[cpid] = s[strings.IndexByte(s, '(')+1 : i]
		}
	}
	return out
}

func killChildren(t *testing.T, parent int, name string, max int) int {
	n := 0
	for pid, comm := range childrenOf(parent) {
		if strings.HasPrefix(comm, name) && n < max {
			if err := syscall.Kill(pid, syscall.SIGKILL); err == nil {
				n++
			}
		}
	}
	t.Logf("kill -9 %d %s process(es)", n, name)
	return n
}

// TestManager_ChildCrashRecovery: kill -9 informerd and worker processes while ReplicaSets scale
// up and down; the manager restarts them and every ReplicaSet ends with exactly spec.replicas
// active pods and a matching status (no key lost, no pod created twice).
func TestManager_ChildCrashRecovery(t *testing.T) {
	startKcmdReplicaSet(t)
	mgr := kcmdRS.cmd.Process.Pid
	ctx := context.Background()
	ns := Namespace(t)
	const n = 6
	for i := 0; i < n; i++ {
		if _, err := env.Client.AppsV1().ReplicaSets(ns).Create(ctx, demoReplicaSet(ns, fmt.Sprintf("crash-%d", i), 15), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(300 * time.Millisecond)
	killChildren(t, mgr, "kcmd-informerd", 1)
	killChildren(t, mgr, "kcmd-worker", 2)
	time.Sleep(700 * time.Millisecond)
	killChildren(t, mgr, "kcmd-worker", 1)
	for i := 0; i < n; i++ {
		waitReplicas(t, ns, fmt.Sprintf("crash-%d", i), 15)
	}
	// scale down under fire
	for i := 0; i < n; i++ {
		rs, err := env.Client.AppsV1().ReplicaSets(ns).Get(ctx, fmt.Sprintf("crash-%d", i), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r := int32(4)
		rs.Spec.Replicas = &r
		if _, err := env.Client.AppsV1().ReplicaSets(ns).Update(ctx, rs, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	killChildren(t, mgr, "kcmd-worker", 2)
	time.Sleep(200 * time.Millisecond)
	killChildren(t, mgr, "kcmd-informerd", 1)
	for i := 0; i < n; i++ {
		waitReplicas(t, ns, fmt.Sprintf("crash-%d", i), 4)
	}
	Eventually(t, 30*time.Second, "the manager to report the restarts", func() (bool, string) {
		return kcmdRS.Logged("killed by signal 9; restarting"), "no restart logged"
	})
}
