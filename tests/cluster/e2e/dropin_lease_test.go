// SPDX-License-Identifier: Apache-2.0

package e2e

// Issue 19, rolling migration on one Lease: upstream kube-controller-manager and kcmd contend on
// the same Lease (--leader-elect-resource-name), as the masters of a control plane do while they
// are moved from kcm to kcmd one at a time. Whoever holds the Lease runs the ReplicaSet
// controller; the holder is killed -9 twice under churn (kcm -> kcmd -> kcm). Oracles: the
// leadership intervals of the three processes never overlap, the pods created (counted from a
// watch, by UID) never exceed what the scale-ups allowed (two leaders in one term would create
// twice), and the end state is exact.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// dropinKCM runs upstream kube-controller-manager's ReplicaSet controller electing on lease.
func dropinKCM(t *testing.T, lease string) *kcmdProc {
	t.Helper()
	p, err := launchUpstreamKCM(append([]string{"--kubeconfig=" + env.Cluster.Kubeconfig, "--leader-elect=true",
		"--leader-elect-resource-namespace=kube-system", "--leader-elect-resource-name=" + lease,
		"--controllers=replicaset-controller", "--use-service-account-credentials=false",
		"--secure-port=0", "--v=2"}, fastElection...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			for _, l := range p.Logs() {
				if strings.Contains(l, "lease") || strings.Contains(l, "leader") || strings.Contains(l, "replica") {
					t.Logf("kcm[%d]: %s", p.cmd.Process.Pid, l)
				}
			}
		}
	})
	return p
}

// kcmIntervals: kcm's "Successfully acquired lease" to its kill (it is only ever killed -9 here).
func kcmIntervals(p *kcmdProc, who string, killed time.Time) []interval {
	for _, l := range p.Logs() {
		if kcmAcquired(l) {
			if ts, ok := klogTime(l); ok {
				return []interval{{who, ts, killed}}
			}
		}
	}
	return nil
}

// kcmAcquired: client-go's elector's line (structured logging capitalises it).
func kcmAcquired(l string) bool {
	return strings.Contains(strings.ToLower(l), "successfully acquired lease")
}

func kcmLeads(p *kcmdProc) bool {
	for _, l := range p.Logs() {
		if kcmAcquired(l) {
			return true
		}
	}
	return false
}

func killProc(p *kcmdProc) time.Time {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	return time.Now()
}

func TestDropIn_LeaseMigrationWithKCM(t *testing.T) {
	stopSharedRS(t)
	ctx := context.Background()
	ns := Namespace(t)
	lease := leaseName(t)

	// every pod created in ns, by UID, from a watch that resumes where it stopped
	var mu sync.Mutex
	created := map[types.UID]bool{}
	wctx, stopWatch := context.WithCancel(ctx)
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		rv := "0"
		for wctx.Err() == nil {
			w, err := env.Client.CoreV1().Pods(ns).Watch(wctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
			if err != nil {
				time.Sleep(200 * time.Millisecond)
				continue
			}
			for ev := range w.ResultChan() {
				if p, ok := ev.Object.(*corev1.Pod); ok {
					rv = p.ResourceVersion
					if ev.Type == watch.Added {
						mu.Lock()
						created[p.UID] = true
						mu.Unlock()
					}
				}
			}
		}
	}()
	t.Cleanup(func() { stopWatch(); <-watchDone })

	kcm1 := dropinKCM(t, lease)
	Eventually(t, 30*time.Second, "kube-controller-manager to lead", func() (bool, string) {
		return kcmLeads(kcm1), "holder " + holder(t, lease)
	})
	k := startKcmd(t, nil, append([]string{"--controllers=replicaset-controller", "--secure-port=0",
		"--leader-elect-resource-name=" + lease, "--v=2"}, fastElection...)...)
	t.Cleanup(func() { dumpKcmdLogs(t, k) })

	rs := mustCreateRS(t, itRS(ns, "migrate", 0))
	steps := []int32{5, 2, 8, 3, 9, 1, 6, 4}
	allowed, prev := int32(0), int32(0)
	step := 0
	scale := func(n int) {
		for i := 0; i < n && step < len(steps); i++ {
			r := steps[step]
			step++
			scaleRS(t, ns, rs.Name, r)
			if r > prev {
				allowed += r - prev
			}
			prev = r
			time.Sleep(700 * time.Millisecond)
		}
	}
	scale(2) // under kcm
	if k.Logged("became leader") {
		t.Fatal("kcmd led while kube-controller-manager held the Lease")
	}
	kcm1Killed := killProc(kcm1)
	scale(2) // no leader for up to the lease duration; then kcmd
	Eventually(t, 20*time.Second, "kcmd to take the Lease after kube-controller-manager was killed", func() (bool, string) {
		return k.Logged("became leader"), "holder " + holder(t, lease)
	})
	kcm2 := dropinKCM(t, lease)
	scale(2) // under kcmd, kcm standing by
	if kcmLeads(kcm2) {
		t.Fatal("kube-controller-manager led while kcmd held the Lease")
	}
	kcmdKilled := killProc(k)
	scale(2)
	Eventually(t, 20*time.Second, "kube-controller-manager to take the Lease after kcmd was killed", func() (bool, string) {
		return kcmLeads(kcm2), "holder " + holder(t, lease)
	})
	final := steps[len(steps)-1]
	Eventually(t, 60*time.Second, fmt.Sprintf("%d pods and status.replicas %d", final, final), func() (bool, string) {
		pods := listPods(t, ns, fooBar())
		active := 0
		for i := range pods {
			if isActive(&pods[i]) {
				active++
			}
		}
		cur := getRS(t, ns, rs.Name)
		return active == int(final) && cur.Status.Replicas == final, fmt.Sprintf("%d active pods, status.replicas %d", active, cur.Status.Replicas)
	})
	kcm2Killed := killProc(kcm2)

	mu.Lock()
	n := int32(len(created))
	mu.Unlock()
	t.Logf("pods created %d, allowed by the scale-ups %d", n, allowed)
	if n > allowed {
		t.Errorf("%d pods created, the scale-ups allowed %d: two controllers created pods", n, allowed)
	}
	all := append(append(kcmIntervals(kcm1, "kcm-1", kcm1Killed), kcmdIntervals(k, kcmdKilled)...),
		kcmIntervals(kcm2, "kcm-2", kcm2Killed)...)
	if len(all) != 3 {
		t.Fatalf("expected three leadership intervals (kcm, kcmd, kcm), got %+v", all)
	}
	for i := range all {
		t.Logf("%s led %s - %s", all[i].who, all[i].start.Format("15:04:05.000"), all[i].end.Format("15:04:05.000"))
		for j := i + 1; j < len(all); j++ {
			a, b := all[i], all[j]
			if a.start.Before(b.end) && b.start.Before(a.end) {
				t.Errorf("leadership overlap: %s [%s, %s] and %s [%s, %s]", a.who, a.start.Format("15:04:05.000"),
					a.end.Format("15:04:05.000"), b.who, b.start.Format("15:04:05.000"), b.end.Format("15:04:05.000"))
			}
		}
	}
}
