package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func kcmctl(t *testing.T, args ...string) string {
	t.Helper()
	all := append([]string{"--pid", strconv.Itoa(kcmdRS.cmd.Process.Pid)}, args...)
	out, err := exec.Command(filepath.Join(env.KcmdBinDir, "kcmctl"), all...).CombinedOutput()
	if err != nil {
		t.Fatalf("kcmctl %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestManager_KcmctlReadsTheLiveCache: kcmctl shows the running kcmd's arena (types, synced
// flags, objects by namespace and by owner, one object's owner references) and its queues.
func TestManager_KcmctlReadsTheLiveCache(t *testing.T) {
	startKcmdReplicaSet(t)
	ns := Namespace(t)
	rs, err := env.Client.AppsV1().ReplicaSets(ns).Create(context.Background(), demoReplicaSet(ns, "ctl", 2), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitReplicas(t, ns, "ctl", 2)
	Eventually(t, 10*time.Second, "kcmctl to list the two pods by owner", func() (bool, string) {
		out := kcmctl(t, "cache", "list", "pods", "--owner", string(rs.UID))
		return strings.Count(out, " ctl\n") == 2, out
	})
	stats := kcmctl(t, "cache", "stats")
	for _, want := range []string{"pods ", "replicasets.apps ", " yes "} {
		if !strings.Contains(stats, want) {
			t.Errorf("cache stats lacks %q:\n%s", want, stats)
		}
	}
	if out := kcmctl(t, "cache", "list", "replicasets.apps", "-n", ns); !strings.Contains(out, string(rs.UID)) {
		t.Errorf("cache list replicasets.apps -n %s lacks the RS uid:\n%s", ns, out)
	}
	pods, _ := env.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=ctl"})
	got := kcmctl(t, "cache", "get", "pods", ns+"/"+pods.Items[0].Name)
	if !strings.Contains(got, "ReplicaSet ctl uid="+string(rs.UID)+" controller=true blockOwnerDeletion=true") {
		t.Errorf("cache get shows no controller reference to the RS:\n%s", got)
	}
	if q := kcmctl(t, "queues"); !strings.Contains(q, "replicaset ") {
		t.Errorf("queues lacks the replicaset queue:\n%s", q)
	}
}

// TestManager_KcmctlSanitizesUntrustedStrings (issue 21): the apiserver accepts owner
// references whose kind and name hold control characters; `kcmctl cache get` prints them from
// the cache. The output carries them escaped (kclog_sanitize): no ESC byte, no extra line.
func TestManager_KcmctlSanitizesUntrustedStrings(t *testing.T) {
	startKcmdReplicaSet(t)
	ns := Namespace(t)
	p := itPod(ns, "evil-owner")
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: "Evil\x1b[2J",
		Name: "x\nE0101 00:00:00.000000 1 forged.c:1] forged line\x1b]0;title\x07", UID: "0b0e5a39-0000-4000-8000-000000000001"}}
	if _, err := env.Client.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatalf("the apiserver refused the owner reference: %v", err)
	}
	var out string
	Eventually(t, 10*time.Second, "kcmctl to show the pod", func() (bool, string) {
		cmd := exec.Command(filepath.Join(env.KcmdBinDir, "kcmctl"), "--pid", strconv.Itoa(kcmdRS.cmd.Process.Pid),
			"cache", "get", "pods", ns+"/evil-owner")
		b, err := cmd.CombinedOutput()
		out = string(b)
		return err == nil, out
	})
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("kcmctl printed a raw escape sequence:\n%q", out)
	}
	if strings.Contains(out, "\nE0101") {
		t.Errorf("kcmctl printed an injected line:\n%q", out)
	}
	if !strings.Contains(out, `Evil\x1b[2J x\nE0101 00:00:00.000000 1 forged.c:1] forged line\x1b]0;title\x07 uid=`) {
		t.Errorf("kcmctl output lacks the escaped owner reference:\n%s", out)
	}
}
