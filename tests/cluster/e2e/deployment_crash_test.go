package e2e

// The deployment controller's worker (kill -9, several times) and informerd (once) killed in
// the middle of rollouts. Every sync re-derives the state from the apiserver (a quorum LIST of
// the ReplicaSets) and a new ReplicaSet's name is its template's hash, so a replayed sync finds
// or collides with what the killed one created: the end state is exact (one ReplicaSet per
// template, each created once, revisions 1, 2, 3 in order, none re-used, the last one at
// spec.replicas and the others at 0). TestDeployment_CrashDetector is the negative control:
// the same oracle on a Deployment given a ReplicaSet behind the controller's back reports it.

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/kubernetes/pkg/controller"
	"k8s.io/utils/ptr"
)

// dcTracker records every ReplicaSet ever added in ns (a watch started before the Deployment).
type dcTracker struct {
	mu   sync.Mutex
	uids map[string]string // uid -> name
}

func dcTrack(t *testing.T, ns string) *dcTracker {
	t.Helper()
	tr := &dcTracker{uids: map[string]string{}}
	w, err := env.Client.AppsV1().ReplicaSets(ns).Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	go func() {
		for ev := range w.ResultChan() {
			if rs, ok := ev.Object.(*appsv1.ReplicaSet); ok && ev.Type == watch.Added {
				tr.mu.Lock()
				tr.uids[string(rs.UID)] = rs.Name
				tr.mu.Unlock()
			}
		}
	}()
	return tr
}

func (tr *dcTracker) names() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var out []string
	for _, n := range tr.uids {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// dcKill kills the deployment controller's worker processes (or informerd) under mgr.
func dcKill(t *testing.T, mgr int, informerd bool) int {
	n := 0
	for pid, comm := range childrenOf(mgr) {
		ok := false
		if informerd {
			ok = strings.HasPrefix(comm, "kcmd-informe")
		} else if comm == "kcmd-worker" {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			ok = strings.Contains(string(b), "deployment-controller")
		}
		if ok && syscall.Kill(pid, syscall.SIGKILL) == nil {
			n++
		}
	}
	return n
}

const dcReplicas = 6

func dcDeployment(ns string) *appsv1.Deployment {
	d := dpNew(ns, "crash", dcReplicas)
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: ptr.To(intstr.FromInt32(1)),
			MaxUnavailable: ptr.To(intstr.FromInt32(0))}}
	return d
}

// dcOracle: what must hold once the Deployment has rolled out images 1..n in order.
func dcOracle(t *testing.T, tr *dcTracker, ns, name string, n int) []string {
	t.Helper()
	var probs []string
	ctx := context.Background()
	d, err := env.Client.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return []string{err.Error()}
	}
	var want []string
	byName := map[string]int{}
	for i := 1; i <= n; i++ {
		tmpl := d.Spec.Template.DeepCopy()
		tmpl.Spec.Containers[0].Image = fmt.Sprintf("fake/image:%d", i)
		rsName := name + "-" + controller.ComputeHash(tmpl, nil)
		want = append(want, rsName)
		byName[rsName] = i
	}
	sort.Strings(want)
	if got := tr.names(); strings.Join(got, ",") != strings.Join(want, ",") {
		probs = append(probs, fmt.Sprintf("ReplicaSets ever created %v, want each of %v once", got, want))
	}
	owned := dpOwnedRS(t, d)
	if len(owned) != n {
		probs = append(probs, fmt.Sprintf("%d owned ReplicaSets, want %d", len(owned), n))
	}
	for _, rs := range owned {
		i, ok := byName[rs.Name]
		if !ok {
			probs = append(probs, "unexpected ReplicaSet "+rs.Name)
			continue
		}
		wantRep := int32(0)
		if i == n {
			wantRep = dcReplicas
		}
		if rev := rs.Annotations["deployment.kubernetes.io/revision"]; rev != fmt.Sprint(i) {
			probs = append(probs, fmt.Sprintf("%s revision %q, want %d", rs.Name, rev, i))
		}
		if h, ok := rs.Annotations["deployment.kubernetes.io/revision-history"]; ok {
			probs = append(probs, fmt.Sprintf("%s has revision-history %q: re-used", rs.Name, h))
		}
		if *rs.Spec.Replicas != wantRep || rs.Status.Replicas != wantRep {
			probs = append(probs, fmt.Sprintf("%s replicas %d/%d, want %d", rs.Name, *rs.Spec.Replicas, rs.Status.Replicas, wantRep))
		}
	}
	s := d.Status
	if rev := d.Annotations["deployment.kubernetes.io/revision"]; rev != fmt.Sprint(n) {
		probs = append(probs, fmt.Sprintf("Deployment revision %q, want %d", rev, n))
	}
	if s.CollisionCount != nil || s.ObservedGeneration != d.Generation || s.Replicas != dcReplicas ||
		s.UpdatedReplicas != dcReplicas || s.AvailableReplicas != dcReplicas || s.UnavailableReplicas != 0 {
		probs = append(probs, fmt.Sprintf("Deployment status %+v (generation %d)", s, d.Generation))
	}
	return probs
}

func dcStart(t *testing.T) *kcmdProc {
	hksCleanupSimNodes(t)
	// one worker process, so a kill hits the one syncing; a low QPS stretches each sync, the
	// ready delay each step of the rollout (maxSurge 1, maxUnavailable 0: 6 steps)
	return hksStartSim(t, "--controllers=deployment-controller,replicaset-controller", "--simulate-kubelet-nodes=2",
		"--concurrent-deployment-syncs=1", "--kube-api-qps=20", "--kube-api-burst=10",
		"--simulate-kubelet-ready-delay=300ms")
}

func TestDeployment_CrashDuringRollout(t *testing.T) {
	p := dcStart(t)
	mgr := p.cmd.Process.Pid
	ns := Namespace(t)
	tr := dcTrack(t, ns)
	d := dcCreateAndKill(t, mgr, ns)
	dpWaitComplete(t, ns, d.Name)
	kills, ikills := 0, 0
	for img := 2; img <= 3; img++ {
		dpUpdate(t, ns, d.Name, func(x *appsv1.Deployment) {
			x.Spec.Template.Spec.Containers[0].Image = fmt.Sprintf("fake/image:%d", img)
		})
		// kill the worker (twice, then once: the manager's restart backoff doubles, 0.5 s,
		// 1 s, 2 s, 4 s) while the rollout runs, each time once it is back; informerd once
		rolled := func() bool {
			x, err := env.Client.AppsV1().Deployments(ns).Get(context.Background(), d.Name, metav1.GetOptions{})
			return err == nil && x.Annotations["deployment.kubernetes.io/revision"] == fmt.Sprint(img) &&
				x.Status.ObservedGeneration >= x.Generation && x.Status.UpdatedReplicas == dcReplicas &&
				x.Status.Replicas == dcReplicas && x.Status.AvailableReplicas == dcReplicas
		}
		before, want := kills, 4-img
		for i := 0; i < 200 && kills-before < want && !rolled(); i++ {
			time.Sleep(100 * time.Millisecond)
			if i > 2 && (i-3)%5 == 0 {
				kills += dcKill(t, mgr, false)
			}
			if img == 2 && i == 5 {
				ikills += dcKill(t, mgr, true)
			}
		}
		t.Logf("rollout to image %d: %d worker kills", img, kills-before)
		dpWaitRevision(t, ns, d.Name, fmt.Sprint(img), fmt.Sprintf("fake/image:%d", img))
		dpWaitComplete(t, ns, d.Name)
	}
	t.Logf("killed the deployment worker %d times, informerd %d times", kills, ikills)
	if kills < 3 || ikills == 0 {
		t.Fatal("nothing was killed: nothing was tested")
	}
	var probs []string
	Eventually(t, 60*time.Second, "the exact end state", func() (bool, string) {
		probs = dcOracle(t, tr, ns, d.Name, 3)
		return len(probs) == 0, strings.Join(probs, "; ")
	})
	time.Sleep(2 * time.Second) // a late surplus ReplicaSet would show by now
	if probs = dcOracle(t, tr, ns, d.Name, 3); len(probs) != 0 {
		t.Fatalf("after 2 s: %s", strings.Join(probs, "; "))
	}
	_, active := activePods(t, ns, "app="+d.Name, "")
	if active != dcReplicas {
		t.Errorf("%d active pods, want %d", active, dcReplicas)
	}
}

// dcCreateAndKill creates the Deployment and kills its worker while the first ReplicaSet is
// being created.
func dcCreateAndKill(t *testing.T, mgr int, ns string) *appsv1.Deployment {
	d := dpCreate(t, dcDeployment(ns))
	time.Sleep(50 * time.Millisecond)
	if dcKill(t, mgr, false) == 0 {
		t.Log("no worker to kill during the creation")
	}
	return d
}

// Negative control: a second ReplicaSet of the current template, owned by the Deployment but
// created behind the controller's back (what a replayed sync without the hash name would
// leave), is reported by the oracle.
func TestDeployment_CrashDetector(t *testing.T) {
	dcStart(t)
	ns := Namespace(t)
	tr := dcTrack(t, ns)
	d := dpCreate(t, dcDeployment(ns))
	d = dpWaitComplete(t, ns, d.Name)
	if probs := dcOracle(t, tr, ns, d.Name, 1); len(probs) != 0 {
		t.Fatalf("the oracle fails before the surplus ReplicaSet: %v", probs)
	}
	rs := dpNewRS(t, d)
	if rs == nil {
		t.Fatal("no new ReplicaSet")
	}
	extra := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: rs.Name + "-twice", Labels: rs.Labels,
			Annotations:     rs.Annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](0), Selector: rs.Spec.Selector, Template: rs.Spec.Template},
	}
	if _, err := env.Client.AppsV1().ReplicaSets(ns).Create(context.Background(), extra, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var probs []string
	Eventually(t, 10*time.Second, "the oracle reports the surplus ReplicaSet", func() (bool, string) {
		probs = dcOracle(t, tr, ns, d.Name, 1)
		return len(probs) > 0, "no problem reported"
	})
	t.Logf("the oracle reports: %s", strings.Join(probs, "; "))
}
