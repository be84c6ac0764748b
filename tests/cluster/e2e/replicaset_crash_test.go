// SPDX-License-Identifier: Apache-2.0

package e2e

// Issue 8's crash acceptance: kill -9 of ReplicaSet worker processes (and once of informerd)
// while ReplicaSets scale up and down; afterwards every ReplicaSet has exactly spec.replicas
// active pods and a correct status, and no ReplicaSet ever had more pods created than its spec
// changes asked for.

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const hrtChurnRS = 20

// hrtChurnRound is one spec.replicas change of every ReplicaSet. A settled round waits until
// every ReplicaSet converged before the next round; the others follow each other 1.2 s apart,
// so the controller is mid-sync when spec changes again.
type hrtChurnRound struct {
	settle bool
	target func(i int) int32
}

func hrtChurnFinal(i int) int32 { return 3 + int32(i%5) }

// i%3 keeps the ReplicaSets out of lock step.
var hrtChurnRounds = []hrtChurnRound{
	{true, func(i int) int32 { return 30 + int32(i%3) }},
	{true, func(int) int32 { return 5 }},
	{true, func(i int) int32 { return 25 + int32(i%3) }},
	{false, func(int) int32 { return 0 }},
	{false, func(i int) int32 { return 20 + int32(i%3) }},
	{false, func(int) int32 { return 2 }},
	{false, func(i int) int32 { return 15 + int32(i%3) }},
	{true, hrtChurnFinal},
}

// TestReplicaSet_CrashChurn: 20 ReplicaSets go through hrtChurnRounds while a random
// ReplicaSet worker process is killed with SIGKILL every 200-500 ms (never the last one alive;
// the manager restarts each with a growing backoff), and informerd once, during the first
// scale-up after the initial one (round 2, a settled round: its over-creation bound is exact;
// upstream's one process cannot restart its informer alone, so kcmd's expectations must carry
// an informerd restart in the middle of pod creations). Oracles:
//   - after each settled round, every ReplicaSet has exactly its spec.replicas active pods and
//     a status that says so; after the last, hrtVerify (fresh LISTs: pods all controlled by
//     the ReplicaSet, none terminating; replicas, fullyLabeledReplicas, observedGeneration ==
//     generation, no ReplicaFailure), again 3 s later;
//   - over-creation: the pods ever seen controlled by a ReplicaSet (a client-go informer
//     watching from before its first pod, so pods created and deleted again count) must not
//     exceed the sum of the positive steps of its spec.replicas. Up to the settled rounds the
//     two are equal for a correct controller (each settled round creates exactly the step up
//     and deletes exactly the step down), so one pod too many is caught; after the overlapping
//     rounds the sum is only an upper bound (a controller that never reached a spec skipped
//     part of its step).
//
// Negative control: KCMD_E2E_CHURN_NEGATIVE=1 starts a second kcmd with the ReplicaSet
// controller (two controllers with separate expectations: the over-creation expectations
// prevent); the test then passes only if the over-creation oracle catches it.
func TestReplicaSet_CrashChurn(t *testing.T) {
	hrtCrashChurn(t, hrtChurnOpts{informerdKills: 1, workers: 4, grace: "5s",
		negative: os.Getenv("KCMD_E2E_CHURN_NEGATIVE") == "1"})
}

// hrtChurnOpts varies TestReplicaSet_CrashChurn (for exploratory runs with other settings).
type hrtChurnOpts struct {
	informerdKills int    // informerd is killed in the first informerdKills scale-up rounds after round 0
	workers        int    // --concurrent-replicaset-syncs
	grace          string // --replicaset-orphaned-expectations-grace
	negative       bool   // run a second ReplicaSet controller; pass only if over-creation is caught
	ready          bool   // run the test-side fake kubelet: pods become Running and Ready
}

func hrtCrashChurn(t *testing.T, o hrtChurnOpts) {
	negative := o.negative
	ns := rsNamespace(t)
	stopSharedRS(t)
	flags := []string{"--controllers=replicaset-controller", "--secure-port=0", "--leader-elect=false",
		fmt.Sprintf("--concurrent-replicaset-syncs=%d", o.workers), "--kube-api-qps=300", "--kube-api-burst=600",
		// a killed worker's expectations keep its ReplicaSet waiting this long
		"--replicaset-orphaned-expectations-grace=" + o.grace,
		// every worker runs from the start, so the killer has several to choose from (the
		// worker pools' on-demand starts are TestManager_WorkersStartOnDemand's)
		"--worker-idle-timeout=0"}
	p := startKcmd(t, nil, flags...)
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	if negative {
		q := startKcmd(t, nil, flags...)
		t.Cleanup(func() { dumpKcmdLogs(t, q) })
	}
	mgr := p.cmd.Process.Pid
	tr := hrtStartTracker(t, ns)
	if o.ready {
		fakeKubelet(t, ns)
	}
	start := time.Now()

	names := make([]string, hrtChurnRS)
	for i := range names {
		names[i] = fmt.Sprintf("churn-%02d", i)
	}
	err := hrtParallel(len(names), 8, func(i int) error {
		_, err := env.Client.AppsV1().ReplicaSets(ns).Create(t.Context(), demoReplicaSet(ns, names[i], 0), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	Eventually(t, 30*time.Second, "kcmd's ReplicaSet workers", func() (bool, string) {
		w, inf := hrtRSChildren(mgr)
		return len(w) >= 2 && inf > 0, fmt.Sprintf("%d workers, informerd %d", len(w), inf)
	})

	// The killer.
	stop := make(chan struct{})
	killInformerd := make(chan struct{}, len(hrtChurnRounds))
	var killed, informerdKilled atomic.Int32
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewSource(time.Now().UnixNano()))
		for {
			select {
			case <-stop:
				return
			case <-killInformerd:
				time.Sleep(300 * time.Millisecond) // mid-way through the creations
				if _, inf := hrtRSChildren(mgr); inf > 0 && hrtKill(inf) {
					informerdKilled.Add(1)
				}
			case <-time.After(time.Duration(200+rng.Intn(300)) * time.Millisecond):
				if w, _ := hrtRSChildren(mgr); len(w) >= 2 && hrtKill(w[rng.Intn(len(w))]) {
					killed.Add(1)
				}
			}
		}
	}()
	stopKiller := func() {
		select {
		case <-stop:
		default:
			close(stop)
			wg.Wait()
		}
	}
	defer stopKiller()

	// bound[i]: the sum of the positive steps of ReplicaSet i's spec.replicas so far.
	bound := make([]int, len(names))
	prev := make([]int32, len(names))
	overCreated := func() []string {
		var out []string
		rss := tr.ReplicaSets()
		for i, n := range names {
			if rs := rss[n]; rs != nil {
				if c := tr.Created(rs.UID); c > bound[i] {
					out = append(out, fmt.Sprintf("%s: %d pods created, its spec steps ask for %d", n, c, bound[i]))
				}
			}
		}
		return out
	}
	exact := true // bound[] is exact while every round so far settled
	informerdRounds := 0
	for r, round := range hrtChurnRounds {
		up := round.target(0) > prev[0]
		if _, err := hrtScaleAll(ns, names, round.target); err != nil {
			t.Fatal(err)
		}
		for i := range names {
			if d := int(round.target(i) - prev[i]); d > 0 {
				bound[i] += d
			}
			prev[i] = round.target(i)
		}
		if r >= 1 && up && informerdRounds < o.informerdKills {
			informerdRounds++
			killInformerd <- struct{}{}
		}
		if !round.settle {
			exact = false
			time.Sleep(1200 * time.Millisecond)
			continue
		}
		t0 := time.Now()
		what := fmt.Sprintf("round %d: every ReplicaSet at its spec", r)
		if negative {
			// two controllers may never settle: look at the over-creation oracle only
			time.Sleep(5 * time.Second)
			if oc := overCreated(); len(oc) > 0 {
				t.Logf("negative control: two controllers over-created, caught in round %d: %s", r, strings.Join(oc, "; "))
				return
			}
			continue
		}
		hrtWait(t, 60*time.Second, 250*time.Millisecond, what,
			func() (bool, string) { return hrtConverged(tr, names, round.target) })
		if oc := overCreated(); len(oc) > 0 {
			t.Errorf("round %d: over-creation: %s", r, strings.Join(oc, "; "))
		}
		if exact {
			rss := tr.ReplicaSets()
			for i, n := range names {
				if c := tr.Created(rss[n].UID); c < bound[i] {
					// possible only if the informer's watch broke and it relisted
					t.Logf("round %d: %s: the informer saw %d pods created of %d", r, n, c, bound[i])
				}
			}
		}
		t.Logf("round %d settled in %.1f s (%d workers killed so far)", r, hrtSince(t0), killed.Load())
	}
	if negative {
		t.Fatal("negative control: two ReplicaSet controllers ran and the over-creation oracle caught nothing")
	}
	stopKiller()
	t.Logf("churn: %d rounds in %.1f s, %d ReplicaSet workers and %d informerd killed with SIGKILL",
		len(hrtChurnRounds), hrtSince(start), killed.Load(), informerdKilled.Load())
	if killed.Load() < 5 || (o.informerdKills > 0 && informerdKilled.Load() == 0) {
		t.Fatalf("the churn killed %d workers and %d informerd: crashes were not exercised", killed.Load(), informerdKilled.Load())
	}

	want := map[string]int32{}
	for i, n := range names {
		want[n] = hrtChurnFinal(i)
	}
	hrtWait(t, 30*time.Second, 500*time.Millisecond, "the API to show every ReplicaSet at its final size",
		func() (bool, string) {
			probs, _ := hrtVerify(ns, want, o.ready)
			return len(probs) == 0, fmt.Sprintf("%d problems: %s", len(probs), strings.Join(probs[:min(len(probs), 5)], "; "))
		})
	time.Sleep(3 * time.Second)
	probs, notes := hrtVerify(ns, want, o.ready)
	if len(probs) > 0 {
		t.Errorf("3 s after convergence (%d problems): %s", len(probs), strings.Join(probs, "; "))
	}
	if len(notes) > 0 {
		// see hrtVerify: a worker killed mid-DELETE; counted in terminatingReplicas
		t.Logf("%d pods left terminating by a DELETE cut short: %s", len(notes), strings.Join(notes[:min(len(notes), 3)], "; "))
	}
	if oc := overCreated(); len(oc) > 0 {
		t.Errorf("over-creation: %s", strings.Join(oc, "; "))
	}
	total, sum := 0, 0
	rss := tr.ReplicaSets()
	for i, n := range names {
		total += tr.Created(rss[n].UID)
		sum += bound[i]
	}
	t.Logf("%d pods created in all (upper bound %d), test %.1f s", total, sum, hrtSince(start))
	if !p.Logged("killed by signal 9; restarting") {
		t.Errorf("the manager did not log a restart after kill -9")
	}
}

// TestReplicaSet_CrashChurnVariants: longer crash runs, by hand (~2.5 min):
//
//	KCMD_E2E_RS_CRASH_VARIANTS=1 make e2e RUN=TestReplicaSet_CrashChurnVariants
func TestReplicaSet_CrashChurnVariants(t *testing.T) {
	if os.Getenv("KCMD_E2E_RS_CRASH_VARIANTS") != "1" {
		t.Skip("long crash variants: set KCMD_E2E_RS_CRASH_VARIANTS=1 to run")
	}
	t.Run("InformerdEveryRound", func(t *testing.T) {
		hrtCrashChurn(t, hrtChurnOpts{informerdKills: len(hrtChurnRounds) - 1, workers: 4, grace: "5s"})
	})
	t.Run("TwoWorkersShortGrace", func(t *testing.T) {
		hrtCrashChurn(t, hrtChurnOpts{informerdKills: 1, workers: 2, grace: "2s"})
	})
	t.Run("ReadyPods", func(t *testing.T) {
		hrtCrashChurn(t, hrtChurnOpts{informerdKills: 1, workers: 4, grace: "5s", ready: true})
	})
	t.Run("RecreateUnderKill", hrtRecreateUnderKill)
}

// hrtRecreateUnderKill: ReplicaSets deleted (background, kcmd's GC collects the pods) and
// recreated under the same name, with fresh uids, while RS workers are killed: expectations are keyed by
// namespace/name, so a killed worker's record for the old uid must not block or mislead the new.
func hrtRecreateUnderKill(t *testing.T) {
	ns := rsNamespace(t)
	stopSharedRS(t)
	p := startKcmd(t, nil, "--controllers=replicaset-controller,garbage-collector-controller", "--secure-port=0",
		"--leader-elect=false", "--concurrent-replicaset-syncs=4", "--kube-api-qps=300", "--kube-api-burst=600",
		"--replicaset-orphaned-expectations-grace=5s", "--worker-idle-timeout=0")
	t.Cleanup(func() { dumpKcmdLogs(t, p) })
	mgr := p.cmd.Process.Pid
	tr := hrtStartTracker(t, ns)
	const n = 10
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("rec-%02d", i)
	}
	Eventually(t, 30*time.Second, "workers", func() (bool, string) {
		w, _ := hrtRSChildren(mgr)
		return len(w) >= 2, ""
	})
	stop := make(chan struct{})
	var killed atomic.Int32
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewSource(time.Now().UnixNano()))
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(200+rng.Intn(300)) * time.Millisecond):
				if w, _ := hrtRSChildren(mgr); len(w) >= 2 && hrtKill(w[rng.Intn(len(w))]) {
					killed.Add(1)
				}
			}
		}
	}()
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
			wg.Wait()
		}
	}()
	bg := metav1.DeletePropagationBackground
	for round := 0; round < 4; round++ {
		size := int32(20 + round)
		err := hrtParallel(n, 8, func(i int) error {
			if round > 0 {
				if err := env.Client.AppsV1().ReplicaSets(ns).Delete(context.Background(), names[i],
					metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil {
					return err
				}
			}
			for {
				_, err := env.Client.AppsV1().ReplicaSets(ns).Create(context.Background(), demoReplicaSet(ns, names[i], size), metav1.CreateOptions{})
				if err == nil || !apierrors.IsAlreadyExists(err) {
					return err
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		hrtWait(t, 90*time.Second, 250*time.Millisecond, fmt.Sprintf("round %d", round),
			func() (bool, string) { return hrtConverged(tr, names, func(int) int32 { return size }) })
		for _, rs := range tr.ReplicaSets() {
			if c := tr.Created(rs.UID); c > int(size) {
				t.Errorf("round %d: %s (uid %s): %d pods created for %d replicas", round, rs.Name, rs.UID, c, size)
			}
		}
		t.Logf("round %d converged in %.1f s, %d workers killed so far", round, hrtSince(t0), killed.Load())
	}
	want := map[string]int32{}
	for _, nm := range names {
		want[nm] = 23
	}
	if probs, notes := hrtVerify(ns, want, false); len(probs) > 0 {
		t.Errorf("final: %v (notes %v)", probs, notes)
	}
}
