// SPDX-License-Identifier: Apache-2.0

package e2e

// Helpers of the ReplicaSet scale and crash acceptance tests (replicaset_scale_test.go,
// replicaset_crash_test.go): a client-go informer that watches one namespace's pods and
// ReplicaSets and remembers every pod it ever saw (the over-creation oracle), a bounded
// parallel loop for bulk API calls, and the kcmd child processes of one manager by role.

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// hrtTracker watches the pods and ReplicaSets of one namespace through client-go informers.
// Besides the informers' stores (the current state) it counts, per controller uid, the pods it
// has ever seen carrying that controller reference: a pod that was created and deleted again
// between two looks of the test still counts, so that over-creation shows even when the
// controller repairs it afterwards. (A pod created and deleted while the informer's watch was
// broken may be missed: the count can only be too low, never too high.)
type hrtTracker struct {
	pods, rss cache.SharedIndexInformer
	cancel    context.CancelFunc

	mu      sync.Mutex
	seen    map[types.UID]struct{}
	created map[types.UID]int // controller uid -> distinct pods ever seen controlled by it
}

func hrtStartTracker(t *testing.T, ns string) *hrtTracker {
	t.Helper()
	cfg := *env.Config
	cfg.QPS, cfg.Burst = 1000, 2000
	cs, err := kubernetes.NewForConfig(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	tr := &hrtTracker{
		pods:    f.Core().V1().Pods().Informer(),
		rss:     f.Apps().V1().ReplicaSets().Informer(),
		seen:    map[types.UID]struct{}{},
		created: map[types.UID]int{},
	}
	note := func(obj interface{}) {
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		tr.mu.Lock()
		defer tr.mu.Unlock()
		if _, dup := tr.seen[p.UID]; dup {
			return
		}
		tr.seen[p.UID] = struct{}{}
		if ref := metav1.GetControllerOf(p); ref != nil {
			tr.created[ref.UID]++
		}
	}
	if _, err := tr.pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    note,
		UpdateFunc: func(_, n interface{}) { note(n) },
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tr.cancel = cancel
	f.Start(ctx.Done())
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			cancel()
			t.Fatalf("informer for %v did not sync", typ)
		}
	}
	t.Cleanup(func() { cancel(); f.Shutdown() })
	return tr
}

// Created is the number of distinct pods ever seen controlled by uid.
func (tr *hrtTracker) Created(uid types.UID) int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.created[uid]
}

// hrtPodCounts is the current state of a namespace's pods as the tracker sees it.
type hrtPodCounts struct {
	all         int               // pods of the namespace, terminating ones included
	activeOwned map[types.UID]int // controller uid -> active pods it controls
	activeLabel map[string]int    // value of label "app" -> active pods carrying it
	terminating int               // pods with a deletionTimestamp
}

func (tr *hrtTracker) Counts() hrtPodCounts {
	c := hrtPodCounts{activeOwned: map[types.UID]int{}, activeLabel: map[string]int{}}
	for _, o := range tr.pods.GetStore().List() {
		p := o.(*corev1.Pod)
		c.all++
		if p.DeletionTimestamp != nil {
			c.terminating++
		}
		if !isActive(p) {
			continue
		}
		c.activeLabel[p.Labels["app"]]++
		if ref := metav1.GetControllerOf(p); ref != nil {
			c.activeOwned[ref.UID]++
		}
	}
	return c
}

// ReplicaSets returns the tracker's current ReplicaSets by name.
func (tr *hrtTracker) ReplicaSets() map[string]*appsv1.ReplicaSet {
	out := map[string]*appsv1.ReplicaSet{}
	for _, o := range tr.rss.GetStore().List() {
		rs := o.(*appsv1.ReplicaSet)
		out[rs.Name] = rs
	}
	return out
}

// hrtParallel runs fn(0..n-1) on `workers` goroutines and returns the first error.
func hrtParallel(n, workers int, fn func(i int) error) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		ferr error
	)
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					mu.Lock()
					if ferr == nil {
						ferr = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	return ferr
}

// hrtScaleAll sets spec.replicas of the named ReplicaSets (a merge patch: no conflict with the
// controller's status writes) and returns the generations the patches produced.
func hrtScaleAll(ns string, names []string, replicas func(i int) int32) (map[string]int64, error) {
	var mu sync.Mutex
	gens := map[string]int64{}
	err := hrtParallel(len(names), 16, func(i int) error {
		body := fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas(i))
		rs, err := env.Client.AppsV1().ReplicaSets(ns).Patch(context.Background(), names[i], types.MergePatchType,
			[]byte(body), metav1.PatchOptions{})
		if err != nil {
			return fmt.Errorf("scaling %s/%s: %w", ns, names[i], err)
		}
		mu.Lock()
		gens[names[i]] = rs.Generation
		mu.Unlock()
		return nil
	})
	return gens, err
}

// hrtRSChildren lists the live kcmd-worker processes of manager pid that run the ReplicaSet
// controller (their command line names it), and the informerd child.
func hrtRSChildren(mgr int) (workers []int, informerd int) {
	for pid, comm := range childrenOf(mgr) {
		switch {
		case strings.HasPrefix(comm, "kcmd-informerd"):
			informerd = pid
		case strings.HasPrefix(comm, "kcmd-worker"):
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			if err != nil {
				continue
			}
			for _, a := range strings.Split(string(b), "\x00") {
				if a == "--controller=replicaset-controller" {
					workers = append(workers, pid)
				}
			}
		}
	}
	return workers, informerd
}

// hrtKill sends SIGKILL to pid, a child of this test's own kcmd manager.
func hrtKill(pid int) bool {
	return syscall.Kill(pid, syscall.SIGKILL) == nil
}

// hrtBench prints a `bench:` line (make e2e shows it) and logs it in the test.
func hrtBench(t *testing.T, name string, v float64, unit string) {
	t.Helper()
	fmt.Printf("bench: %s %.2f %s\n", name, v, unit)
	t.Logf("bench: %s %.2f %s", name, v, unit)
}

// hrtSince is the seconds since t0.
func hrtSince(t0 time.Time) float64 { return time.Since(t0).Seconds() }

// hrtWait polls cond every interval until it holds; it logs cond's message every 10 s (long
// phases stay visible) and fails the test with it after timeout.
func hrtWait(t *testing.T, timeout, interval time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	start := time.Now()
	lastLog := start
	for {
		ok, msg := cond()
		if ok {
			return
		}
		if time.Since(start) > timeout {
			t.Fatalf("timed out after %s waiting for %s: %s", timeout, what, msg)
		}
		if time.Since(lastLog) >= 10*time.Second {
			t.Logf("%.0fs waiting for %s: %s", hrtSince(start), what, msg)
			lastLog = time.Now()
		}
		time.Sleep(interval)
	}
}

// hrtVerify checks, through fresh LISTs (not the tracker), that every ReplicaSet named in want
// has exactly want[name] active pods carrying its label "app", all controlled by it, and a
// status that says so: replicas and fullyLabeledReplicas equal to want, readyReplicas and
// availableReplicas 0 (no kubelet runs), or want if ready (the test-side fake kubelet marks every
// pod Ready, minReadySeconds 0), terminatingReplicas equal to its pods that carry a
// deletionTimestamp (gate DeploymentReplicaSetTerminatingReplicas, on in 1.37), observedGeneration
// equal to generation, no ReplicaFailure condition. It returns one line per problem, and in
// notes one line per terminating pod.
//
// Terminating pods are allowed: the apiserver deletes an unscheduled pod in two etcd writes (set
// deletionTimestamp with grace 0, then remove); a client that dies between them (a worker killed
// by the crash test mid-DELETE cancels its request) leaves the pod terminating for good. In a
// real cluster kube-controller-manager's pod GC removes it (gcUnscheduledTerminating); here no
// pod GC runs. The ReplicaSet controller must not count it as a replica and must report it in
// terminatingReplicas.
func hrtVerify(ns string, want map[string]int32, ready bool) (probs, notes []string) {
	ctx := context.Background()
	rss, err := env.Client.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return []string{"listing ReplicaSets: " + err.Error()}, nil
	}
	pods, err := env.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return []string{"listing pods: " + err.Error()}, nil
	}
	byLabel := map[string][]*corev1.Pod{}
	for i := range pods.Items {
		p := &pods.Items[i]
		byLabel[p.Labels["app"]] = append(byLabel[p.Labels["app"]], p)
	}
	found := map[string]bool{}
	for i := range rss.Items {
		rs := &rss.Items[i]
		w, ok := want[rs.Name]
		if !ok {
			continue
		}
		found[rs.Name] = true
		active, foreign, terminating := 0, 0, 0
		for _, p := range byLabel[rs.Name] {
			switch {
			case !ownedBy(p, rs):
				if isActive(p) {
					foreign++
				}
			case p.DeletionTimestamp != nil:
				terminating++
				notes = append(notes, fmt.Sprintf("%s: pod %s terminating since %s (grace %v, finalizers %v, node %q, phase %s)",
					rs.Name, p.Name, p.DeletionTimestamp, ptr.Deref(p.DeletionGracePeriodSeconds, -1), p.Finalizers,
					p.Spec.NodeName, p.Status.Phase))
			case isActive(p):
				active++
			}
		}
		st := rs.Status
		if active != int(w) || foreign != 0 {
			probs = append(probs, fmt.Sprintf("%s: %d active pods of its own (want %d), %d active pods with its label not controlled by it",
				rs.Name, active, w, foreign))
		}
		wr := int32(0)
		if ready {
			wr = w
		}
		if st.Replicas != w || st.FullyLabeledReplicas != w || st.ReadyReplicas != wr || st.AvailableReplicas != wr ||
			ptr.Deref(st.TerminatingReplicas, -1) != int32(terminating) || st.ObservedGeneration != rs.Generation {
			probs = append(probs, fmt.Sprintf("%s: status replicas=%d fullyLabeled=%d ready=%d available=%d terminating=%v observedGeneration=%d, want %d/%d/%d/%d/%d/%d",
				rs.Name, st.Replicas, st.FullyLabeledReplicas, st.ReadyReplicas, st.AvailableReplicas,
				ptr.Deref(st.TerminatingReplicas, -1), st.ObservedGeneration, w, w, wr, wr, terminating, rs.Generation))
		}
		for _, c := range st.Conditions {
			if c.Type == appsv1.ReplicaSetReplicaFailure {
				probs = append(probs, fmt.Sprintf("%s: condition ReplicaFailure %s (%s: %s)", rs.Name, c.Status, c.Reason, c.Message))
			}
		}
	}
	for name := range want {
		if !found[name] {
			probs = append(probs, name+": ReplicaSet missing")
		}
	}
	return probs, notes
}

// hrtConverged reports whether every ReplicaSet names[i] has, in the tracker's view, spec and
// status.replicas (and fullyLabeledReplicas) == want(i) at its current generation and want(i)
// active pods of its own, and no other active pod carries its label.
func hrtConverged(tr *hrtTracker, names []string, want func(i int) int32) (bool, string) {
	rss := tr.ReplicaSets()
	c := tr.Counts()
	done := 0
	var first string
	for i, n := range names {
		rs, w := rss[n], want(i)
		if rs == nil {
			if first == "" {
				first = n + ": not in the informer yet"
			}
			continue
		}
		st := rs.Status
		if rs.Spec.Replicas != nil && *rs.Spec.Replicas == w && st.Replicas == w && st.FullyLabeledReplicas == w &&
			st.ObservedGeneration == rs.Generation && c.activeOwned[rs.UID] == int(w) && c.activeLabel[n] == int(w) {
			done++
		} else if first == "" {
			first = fmt.Sprintf("%s: want %d, status.replicas=%d observedGeneration=%d/%d owned active=%d labelled active=%d",
				n, w, st.Replicas, st.ObservedGeneration, rs.Generation, c.activeOwned[rs.UID], c.activeLabel[n])
		}
	}
	return done == len(names), fmt.Sprintf("%d/%d ReplicaSets converged, %d pods in the namespace; first pending: %s",
		done, len(names), c.all, first)
}
